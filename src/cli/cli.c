/* cli.c: the main command's line, `gpuimg OP [OPTIONS] [then OP [OPTIONS]]... [INPUT [OUTPUT]]`,
 * parsed through the operations' option tables and the global ones below. */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef GPUIMG_VERSION
#define GPUIMG_VERSION "unknown"
#endif

static int usage_error(const char *what, const char *fmt, const char *arg)
{
  gpuimg_error_set(GPUIMG_EXIT_USAGE, what, fmt, arg);
  return -1;
}

static int parse_shard(const gpuimg_option_t *o, const char *spelled, const char *arg, void *target)
{
  gpuimg_cli_t *cli = target;
  char *end;
  (void)o;
  if (strcmp(arg, "slurm") == 0 || strcmp(arg, "auto") == 0) {
    cli->shard_mode = arg[0] == 's' ? GPUIMG_SHARD_SLURM : GPUIMG_SHARD_AUTO;
    cli->shard_k = cli->shard_n = 0; /* resolved when the batch starts */
    return 0;
  }
  errno = 0;
  long k = strtol(arg, &end, 10), n = 0;
  /* Digits only: strtol would also take leading blanks and signs. */
  int ok = !errno && isdigit((unsigned char)arg[0]) && *end == '/';
  if (ok) {
    const char *ns = end + 1;
    n = strtol(ns, &end, 10);
    ok = !errno && isdigit((unsigned char)ns[0]) && !*end && n >= 1 && n <= GPUIMG_MAX_SHARDS &&
         k >= 1 && k <= n;
  }
  if (!ok) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, spelled,
                     "invalid value '%s' (expected K/N with 1 <= K <= N <= %d, slurm or auto)", arg,
                     GPUIMG_MAX_SHARDS);
    return -1;
  }
  cli->shard_k = (int)k;
  cli->shard_n = (int)n;
  cli->shard_mode = GPUIMG_SHARD_GIVEN;
  return 0;
}

/* --format's values: the formats a codec built in writes, by name. */
static const char *output_formats(const char *sep, const char *last, char *buf, size_t cap)
{
  return gpuimg_format_list(GPUIMG_CODEC_ENCODES, GPUIMG_SPELL_NAME, sep, last, buf, cap);
}

static int parse_format(const gpuimg_option_t *o, const char *spelled, const char *arg,
                        void *target)
{
  gpuimg_cli_t *cli = target;
  char name[8], expected[256];
  (void)o;
  snprintf(name, sizeof name, "x.%s", arg);
  if (strlen(arg) > 4 ||
      (cli->batch_format = gpuimg_format_from_name(name)) == GPUIMG_FORMAT_NONE) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, spelled, "invalid value '%s' (expected %s)", arg,
                     output_formats(", ", " or ", expected, sizeof expected));
    return -1;
  }
  return gpuimg_format_check_writable(cli->batch_format, spelled);
}

static int parse_completion(const gpuimg_option_t *o, const char *spelled, const char *arg,
                            void *target)
{
  (void)o;
  if (strcmp(arg, "bash") != 0)
    return usage_error(spelled, "invalid value '%s' (expected bash)", arg);
  ((gpuimg_cli_t *)target)->completion = 1;
  return 0;
}

/* --device NAME: --explain's lines become the model's for that GPU. */
static int device_chosen(const gpuimg_option_t *o, const char *spelled, const char *arg,
                         void *target)
{
  gpuimg_cli_t *cli = target;
  (void)o, (void)spelled, (void)arg;
  cli->plan.model_gpu = &gpuimg_gpus[cli->device];
  return 0;
}

#define CLI(field) offsetof(gpuimg_cli_t, field)

/* The command's own global options; the run-wide settings are the plan's
 * (gpuimg_plan_options). */
const gpuimg_option_t gpuimg_cli_options[] = {
    {.long_name = "report",
     .kind = GPUIMG_OPTION_STRING,
     .offset = CLI(report),
     .metavar = "FILE",
     .help = "write a JSON timing report ('-' = stdout)",
     .empty_what = "file name"},
    {.long_name = "explain",
     .kind = GPUIMG_OPTION_FLAG,
     .offset = CLI(explain),
     .value = 1,
     .help = "one line per kernel on stderr: blocks, idle lanes, occupancy,\n"
             "waves and the last wave, bandwidth, sectors per request, bank\n"
             "conflicts, divergence (CUDA backend, or --device's model)"},
    {.long_name = "explain-image",
     .kind = GPUIMG_OPTION_STRING,
     .offset = CLI(explain_image),
     .metavar = "FILE",
     .help = "draw each step's launch on the output into FILE (PNG; FILE-K.png\n"
             "for step K of several): blocks tinted by wave, divergent warps\n"
             "outlined, idle lanes hatched, the --explain line as legend",
     .empty_what = "file name"},
    {.long_name = "device",
     .kind = GPUIMG_OPTION_CHOICE,
     .offset = CLI(device),
     .choices = gpuimg_gpu_choices,
     .parse = device_chosen,
     .metavar = "GPU",
     .help = "with --explain: the CUDA model's lines for GPU (a100, h100,\n"
             "l4, ...: every predicted number, no GPU needed; the image\n"
             "itself is made on the CPU backend unless --backend cuda)"},
    {.long_name = "help",
     .short_name = 'h',
     .kind = GPUIMG_OPTION_FLAG,
     .offset = CLI(help),
     .value = 1,
     .help = "this help"},
    {.long_name = "version",
     .short_name = 'V',
     .kind = GPUIMG_OPTION_FLAG,
     .offset = CLI(version),
     .value = 1,
     .help = "version and build features"},
    /* Hidden: the bash completion script (man/gpuimg.1, SHELL COMPLETION). */
    {.long_name = "completion",
     .kind = GPUIMG_OPTION_CUSTOM,
     .parse = parse_completion,
     .metavar = "SHELL"},
    {0},
};

const gpuimg_option_t gpuimg_cli_batch_options[] = {
    {.long_name = "output-dir",
     .short_name = 'o',
     .kind = GPUIMG_OPTION_STRING,
     .offset = CLI(outdir),
     .metavar = "DIR",
     .help = "write outputs here (created files only: see --force)",
     .empty_what = "directory name"},
    {.long_name = "from",
     .kind = GPUIMG_OPTION_STRING,
     .offset = CLI(from),
     .metavar = "LIST",
     .help = "read input paths from LIST, one per line ('-' = stdin)",
     .empty_what = "file name"},
    {.long_name = "format",
     .kind = GPUIMG_OPTION_CUSTOM,
     .parse = parse_format,
     .values = output_formats,
     .metavar = "F",
     .help = "output format %s\n"
             "(default: the input's)"},
    {.long_name = "force",
     .kind = GPUIMG_OPTION_FLAG,
     .offset = CLI(force),
     .value = 1,
     .help = "replace existing outputs (never an input)"},
    {.long_name = "jobs",
     .short_name = 'j',
     .kind = GPUIMG_OPTION_INT,
     .offset = CLI(jobs),
     .min = 1,
     .max = 1024,
     .metavar = "N",
     .help = "host threads (default: the usable CPU cores; twice that with\n"
             "--codec nvjpeg on CUDA)"},
    {.long_name = "devices",
     .kind = GPUIMG_OPTION_STRING,
     .offset = CLI(devices),
     .metavar = "D",
     .help = "all, or a list of CUDA device numbers like 0,1 (default 0)",
     .empty_what = "device list"},
    {.long_name = "shard",
     .kind = GPUIMG_OPTION_CUSTOM,
     .parse = parse_shard,
     .metavar = "K/N",
     .help = "only the inputs whose path hashes to shard K of N; slurm:\n"
             "K/N from the job array's variables; auto: those if set"},
    {.long_name = "skip-existing",
     .kind = GPUIMG_OPTION_FLAG,
     .offset = CLI(skip_existing),
     .value = 1,
     .help = "leave outputs that exist alone (finish a re-run)"},
    {.long_name = "recursive",
     .kind = GPUIMG_OPTION_FLAG,
     .offset = CLI(recursive),
     .value = 1,
     .help = "an INPUT directory's subdirectories too, mirrored under DIR"},
    {0},
};

const gpuimg_option_t *const gpuimg_cli_tables[] = {gpuimg_plan_options, gpuimg_cli_options,
                                                    gpuimg_cli_batch_options, NULL};

/* An option that neither the current step's operation nor the global tables have: another
 * operation's (a usage error against the step, or before any step), or none at all. */
static int refuse_option(const gpuimg_step_t *step, const gpuimg_args_t *args, const char *spelled)
{
  for (int k = 0; gpuimg_ops[k]; k++) {
    gpuimg_args_t again = *args;
    gpuimg_option_set_t set = {gpuimg_ops[k]->options, NULL};
    const gpuimg_option_t *o;
    const char *arg;
    char name[64];
    int which, rc = gpuimg_options_match(&again, &set, 1, &which, &o, &arg, name);
    if (rc < 0)
      return -1;
    if (rc == 1)
      continue;
    if (!step)
      return usage_error(name, "%sgiven before any operation", "");
    gpuimg_error_set(GPUIMG_EXIT_USAGE, step->op->name, "unknown option '%s'", name);
    return -1;
  }
  return usage_error("", "unknown option '%s'", spelled);
}

/* Handles args->argv[args->i], an option: the current step's operation's first, then the
 * global ones; advances args->i past a separate value. */
static int parse_option(gpuimg_cli_t *cli, gpuimg_args_t *args)
{
  gpuimg_step_t *step = cli->plan.nsteps ? &cli->plan.steps[cli->plan.nsteps - 1] : NULL;
  gpuimg_option_set_t sets[] = {{step ? step->op->options : NULL, step ? step->params : NULL},
                                {gpuimg_plan_options, &cli->plan},
                                {gpuimg_cli_options, cli},
                                {gpuimg_cli_batch_options, cli}};
  int n = sizeof sets / sizeof sets[0], first = step ? 0 : 1, which;
  const gpuimg_option_t *o;
  const char *arg;
  char spelled[64];
  gpuimg_args_t start = *args;
  int rc = gpuimg_options_match(args, sets + first, n - first, &which, &o, &arg, spelled);
  if (rc == 1)
    return refuse_option(step, &start, spelled);
  if (rc < 0)
    return -1;
  return gpuimg_options_apply(o, spelled, arg, sets[first + which].target);
}

/* Whether path names a directory: it ends in '/' or is one. */
static int is_directory(const char *path)
{
  struct stat st;
  size_t len = strlen(path);
  return (len > 0 && path[len - 1] == '/') || (stat(path, &st) == 0 && S_ISDIR(st.st_mode));
}

/* -o NAME with an image extension names a file when it is not a directory: one input, or none
 * (the built-in sample, as without -o), is then a one-image run writing NAME (1); several are a
 * usage error (-1). 0: NAME is a directory. */
static int output_file(gpuimg_cli_t *cli, const char **positional)
{
  if (gpuimg_format_from_name(cli->outdir) == GPUIMG_FORMAT_NONE || is_directory(cli->outdir))
    return 0;
  if (cli->ninputs > 1 || cli->from)
    return usage_error(cli->outdir,
                       "%sseveral inputs need -o DIR, a directory (end the name with '/' to make "
                       "it one)",
                       "");
  if (cli->ninputs == 0)
    positional[0] = GPUIMG_SAMPLE_INPUT;
  positional[1] = cli->outdir;
  cli->outdir = NULL;
  cli->ninputs = 2;
  return 1;
}

/* Batch mode (-o DIR): every positional argument is an input. */
static int check_batch(const gpuimg_cli_t *cli)
{
  if (cli->ninputs == 0 && !cli->from)
    return usage_error(cli->outdir, "%sno input files (give INPUT... or --from LIST)", "");
  if (cli->explain || cli->explain_image)
    return usage_error(cli->explain ? "--explain" : "--explain-image",
                       "%snot available with -o DIR", "");
  return 0;
}

/* One image: INPUT and OUTPUT, if given. */
static int check_single(gpuimg_cli_t *cli, const char **positional, int npositional)
{
  if (cli->from || cli->batch_format != GPUIMG_FORMAT_NONE || cli->force || cli->jobs ||
      cli->devices || cli->shard_n || cli->recursive)
    return usage_error("",
                       "%s--from, --format, --force, --jobs, --devices, --shard and --recursive "
                       "need -o DIR",
                       "");
  if (cli->shard_mode || cli->skip_existing)
    return usage_error("", "%s--shard and --skip-existing need -o DIR", "");
  if (npositional > 2)
    return usage_error("", "unexpected argument '%s' (INPUT and OUTPUT already given)",
                       positional[2]);
  /* "sample:" names the built-in sample explicitly, as ImageMagick's "rose:" does. */
  if (npositional > 0 && strcmp(positional[0], GPUIMG_SAMPLE_INPUT) != 0)
    cli->input = positional[0];
  if (npositional > 1)
    cli->output = positional[1];
  if (cli->input && !cli->input[0])
    return usage_error("", "%sempty input file name", "");
  if (cli->output) {
    if (strcmp(cli->output, "-") && is_directory(cli->output)) {
      gpuimg_error_set(GPUIMG_EXIT_OUTPUT, cli->output,
                       "is a directory (give a file name, or -o DIR for a batch)");
      return -1;
    }
    if (strcmp(cli->output, "-") == 0)
      cli->format = GPUIMG_FORMAT_PNG;
    else if (gpuimg_format_of_output(cli->output, &cli->format) < 0)
      return -1;
    if (cli->report && strcmp(cli->output, "-") == 0 && strcmp(cli->report, "-") == 0)
      return usage_error("", "%simage and report cannot both go to stdout", "");
  }
  return 0;
}

/* A step whose operation needs a mask has one unless the built-in sample is the input. */
static int check_masks(const gpuimg_cli_t *cli)
{
  if (!cli->outdir && !cli->input)
    return 0;
  for (int s = 0; s < cli->plan.nsteps; s++) {
    const gpuimg_step_t *st = &cli->plan.steps[s];
    if (st->op->needs_mask && !gpuimg_ops_common(st->params)->mask_path)
      return usage_error(st->op->name,
                         "%s" GPUIMG_MASK_OPTION " FILE is required with an input image", "");
  }
  return 0;
}

static void set_defaults(gpuimg_cli_t *cli)
{
  gpuimg_plan_init(&cli->plan);
  cli->batch_format = GPUIMG_FORMAT_NONE;
  cli->format = GPUIMG_FORMAT_NONE;
}

int gpuimg_cli_parse(int argc, char **argv, gpuimg_cli_t *cli)
{
  const char **positional;
  int npositional = 0, end_of_options = 0, want_op = 1;

  memset(cli, 0, sizeof *cli);
  /* Batch mode takes any number of inputs: room for every argument. Freed by
   * gpuimg_cli_free(); points into argv. */
  positional = calloc((size_t)argc + 1, sizeof *positional);
  if (!positional) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return -1;
  }
  cli->inputs = positional;
  set_defaults(cli);

  gpuimg_args_t args = {argc, argv, 1};
  for (; args.i < argc; args.i++) {
    const char *a = argv[args.i];
    if (!end_of_options && strcmp(a, "--") == 0) {
      end_of_options = 1;
      continue;
    }
    if (!end_of_options && a[0] == '-' && a[1] != '\0') {
      if (parse_option(cli, &args) < 0)
        return -1;
      continue;
    }
    if (want_op) {
      if (gpuimg_plan_add_step(&cli->plan, a) < 0)
        return -1;
      want_op = 0;
      continue;
    }
    if (!end_of_options && npositional == 0 && strcmp(a, "then") == 0) {
      want_op = 1;
      continue;
    }
    positional[npositional++] = a;
  }
  cli->ninputs = npositional;
  cli->plan.measure = cli->report || cli->explain || cli->explain_image;
  cli->plan.record_blocks = cli->explain_image != NULL;
  if (cli->help || cli->version || cli->completion)
    return 0;
  if (cli->plan.nsteps == 0)
    return usage_error("", "%sno operation given", "");
  if (cli->plan.model_gpu && !cli->explain && !cli->explain_image)
    return usage_error(
        "--device", "%sneeds --explain or --explain-image (it names the GPU they predict for)", "");
  if (cli->explain_image && (strcmp(cli->explain_image, "-") == 0 ||
                             gpuimg_format_from_name(cli->explain_image) != GPUIMG_FORMAT_PNG))
    return usage_error("--explain-image", "%sneeds a file name ending in .png", "");
  if (cli->plan.model_gpu && cli->plan.backend == GPUIMG_BACKEND_AUTO)
    cli->plan.backend = GPUIMG_BACKEND_CPU; /* the lines are the model's: no device needed */
  if (want_op)
    return usage_error("", "%s'then' must be followed by an operation", "");
  if (gpuimg_plan_check(&cli->plan) < 0)
    return -1;
  if (cli->outdir && output_file(cli, positional) < 0)
    return -1;
  npositional = cli->ninputs;
  if (cli->outdir ? check_batch(cli) < 0 : check_single(cli, positional, npositional) < 0)
    return -1;
  return check_masks(cli);
}

void gpuimg_cli_free(gpuimg_cli_t *cli)
{
  free(cli->inputs);
  cli->inputs = NULL;
}

void gpuimg_cli_usage(FILE *f)
{
  fprintf(f, "Try 'gpuimg --help' for more information.\n");
}

void gpuimg_cli_help(FILE *f)
{
  char reads[256], writes[256];
  fprintf(f,
          "Usage: gpuimg OP [OPTIONS] [then OP [OPTIONS]]... [INPUT [OUTPUT]]\n"
          "       gpuimg OP [OPTIONS] [then OP [OPTIONS]]... -o DIR INPUT...\n"
          "Process a %s image with CUDA kernels\n"
          "(or the CPU reference backend).\n"
          "\n"
          "Operations run in order on one image; 'then' separates them:\n"
          "  gpuimg %s then %s in.png out.png\n"
          "Without INPUT (or with INPUT 'sample:'), the built-in 1024x768 sample and its\n"
          "subject mask are used.\n"
          "Without OUTPUT, no image is written (a line says so, except with -q or a timing run).\n"
          "'-' is stdin/stdout. OUTPUT's extension picks the format:\n"
          "%s (stdout: PNG).\n",
          gpuimg_format_list(GPUIMG_CODEC_DECODES, GPUIMG_SPELL_UPPER, ", ", " or ", reads,
                             sizeof reads),
          gpuimg_ops[0]->name, gpuimg_ops[1] ? gpuimg_ops[1]->name : gpuimg_ops[0]->name,
          gpuimg_format_list(GPUIMG_CODEC_ENCODES, GPUIMG_SPELL_EXTENSIONS, ", ", " or ", writes,
                             sizeof writes));
  for (int i = 0; gpuimg_ops[i]; i++) {
    const gpuimg_op_t *op = gpuimg_ops[i];
    fprintf(f, "\n%s: %s\n", op->name, op->summary);
    gpuimg_options_help(f, op->options, 2, 16);
  }
  fprintf(f, "\nGlobal options:\n");
  gpuimg_options_help(f, gpuimg_plan_options, 2, 16);
  gpuimg_options_help(f, gpuimg_cli_options, 2, 16);
  fprintf(f, "  %-16s end of options\n", "--");
  fprintf(f, "\nBatch mode (-o DIR): every INPUT is converted into DIR under its own base name;\n"
             "an INPUT directory gives the images it holds. With one INPUT (or none: the\n"
             "sample), -o NAME.png (an image extension, no trailing '/', not a directory)\n"
             "writes the file NAME.png.\n");
  gpuimg_options_help(f, gpuimg_cli_batch_options, 2, 16);
  fprintf(f, "  With --report FILE the report is JSON Lines: one object per image and a summary.\n"
             "\nOther commands: gpuimg info [--report FILE] (the CUDA device),\n"
             "gpuimg compare [OPTIONS] BASELINE CURRENT (see gpuimg compare --help).\n"
             "\nExit status: 0 ok, 1 processing failure, 2 usage error, 3 bad input or mask,\n"
             "4 output or report not written, 5 CUDA unavailable or failed.\n"
             "With -o DIR: 0 when every image converted, else the largest failed image's code.\n");
}

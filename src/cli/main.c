/* main.c: gpuimg's entry point: the subcommands, and a one-image run through the engine's flow. */
#define _XOPEN_SOURCE 700
#include "cli.h"
#include "streams.h"

#include <stdlib.h>
#include <string.h>

#ifndef GPUIMG_VERSION
#define GPUIMG_VERSION "unknown"
#endif

#define SAMPLE_NAME "(built-in sample)"

/* A one-image run's files: the image and the report, created before any work. */
typedef struct {
  gpuimg_output_t out, rep;
  int have_out, have_rep;
} outputs_t;

/* The codecs compiled in, from the codec registry. */
static void print_version(void)
{
  char png[128], jpeg[128], webp[128];
  printf("gpuimg %s (backends: cpu%s; ", GPUIMG_VERSION,
         gpuimg_pipeline_have_cuda() ? ", cuda" : "");
  printf("png encoders: %s; jpeg codecs: %s; ",
         gpuimg_codec_list(GPUIMG_FORMAT_PNG, GPUIMG_CODEC_ENCODES, png, sizeof png),
         gpuimg_codec_list(GPUIMG_FORMAT_JPEG, GPUIMG_CODEC_DECODES | GPUIMG_CODEC_ENCODES, jpeg,
                           sizeof jpeg));
  gpuimg_codec_list(GPUIMG_FORMAT_WEBP, GPUIMG_CODEC_DECODES | GPUIMG_CODEC_ENCODES, webp,
                    sizeof webp);
  printf("webp codecs: %s)\n", webp[0] ? webp : "none");
}

/* Never replace an input (the image or a mask) with an output (the image or the report). */
static int check_same_files(const gpuimg_cli_t *cli)
{
  const char *inputs[GPUIMG_MAX_STEPS + 1];
  const char *outs[2] = {cli->output, cli->report};
  int ninputs = 0, takes;
  if (cli->input && strcmp(cli->input, "-"))
    inputs[ninputs++] = cli->input;
  int nimages = ninputs; /* the rest are masks */
  for (int i = 0; i < cli->plan.nsteps; i++) {
    const char *mask = gpuimg_flow_mask_path(&cli->plan, i, &takes);
    if (takes && mask && strcmp(mask, "-"))
      inputs[ninputs++] = mask;
  }
  for (int i = 0; i < ninputs; i++)
    for (int k = 0; k < 2; k++)
      if (outs[k] && strcmp(outs[k], "-") && gpuimg_same_file(inputs[i], outs[k])) {
        gpuimg_error_set(GPUIMG_EXIT_OUTPUT, outs[k], "output is the same file as the %s",
                         i < nimages ? "input" : "mask");
        return -1;
      }
  if (cli->output && cli->report && strcmp(cli->output, "-") && strcmp(cli->report, "-") &&
      gpuimg_same_file(cli->output, cli->report)) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, cli->report, "the report and the image are the same file");
    return -1;
  }
  return 0;
}

/* Creates the outputs' temporary files: a bad destination fails before any work. */
static int open_outputs(const gpuimg_cli_t *cli, outputs_t *o)
{
  int flags = gpuimg_flow_output_flags(&cli->plan); /* replacing an existing OUTPUT */
  if (cli->output && gpuimg_output_open(&o->out, cli->output, flags | GPUIMG_OUTPUT_BINARY) < 0)
    return -1;
  o->have_out = cli->output != NULL;
  if (cli->report && gpuimg_output_open(&o->rep, cli->report, flags) < 0)
    return -1;
  o->have_rep = cli->report != NULL;
  return 0;
}

static int write_report(const gpuimg_cli_t *cli, gpuimg_run_t *run, outputs_t *o, double t_start)
{
  run->total_ms = gpuimg_now_ms() - t_start;
  char *json = gpuimg_report_json(&cli->plan, run);
  if (!json)
    return -1;
  size_t len = strlen(json);
  json[len] = '\n'; /* cJSON's buffer ends in a NUL we can turn into a newline */
  int rc = gpuimg_output_commit(&o->rep, json, len + 1);
  free(json);
  return rc;
}

/* Whether the plan has an analysis step (stats): its figures are the run's result. */
static int analyses(const gpuimg_plan_t *plan)
{
  for (int i = 0; i < plan->nsteps; i++)
    if (plan->steps[i].op->result_size)
      return 1;
  return 0;
}

/* The analysis steps' figures on stdout, unless stdout carries the image or the report (the
 * report holds them too). */
static int print_results(const gpuimg_cli_t *cli, const gpuimg_run_t *run)
{
  if (!analyses(&cli->plan) || (cli->output && strcmp(cli->output, "-") == 0) ||
      (cli->report && strcmp(cli->report, "-") == 0))
    return 0;
  char *text = gpuimg_report_results(run, &cli->plan);
  if (!text)
    return -1;
  int rc = fputs(text, stdout) < 0 || fflush(stdout) != 0 ? -1 : 0;
  free(text);
  if (rc < 0)
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, "<stdout>", "cannot write the figures");
  return rc;
}

/* One image (or the built-in sample) through the flow, then --explain and the report. */
static int run_one(const gpuimg_cli_t *cli, outputs_t *o, gpuimg_run_t *run, double t_start)
{
  if (check_same_files(cli) < 0 || open_outputs(cli, o) < 0)
    return -1;
  gpuimg_flow_t flow = {.plan = &cli->plan,
                        .choose = 1,
                        .device_jpeg = cli->input && gpuimg_pipeline_device_jpeg(&cli->plan),
                        .builtin_mask = gpuimg_sample_mask_png,
                        .builtin_mask_size = gpuimg_sample_mask_png_size};
  const char *in = cli->input, *outp = cli->output;
  gpuimg_job_t job = {.input = in,
                      .bytes = gpuimg_sample_png,
                      .size = gpuimg_sample_png_size,
                      .what = in ? (strcmp(in, "-") ? in : "<stdin>") : SAMPLE_NAME,
                      .output = outp,
                      .output_what = outp && strcmp(outp, "-") ? outp : "<stdout>",
                      .format = cli->format,
                      .out = o->have_out ? &o->out : NULL};
  if (gpuimg_flow_run(&flow, &job, run) < 0 || print_results(cli, run) < 0)
    return -1;
  if (cli->explain)
    gpuimg_explain(stderr, &cli->plan, run);
  return o->have_rep ? write_report(cli, run, o, t_start) : 0;
}

/* Without OUTPUT the result is not written: say so, unless quiet, a timing run (a report,
 * --explain, --repeat or --warmup shows why there is no image) or an analysis (its figures are
 * the result). */
static void say_not_written(const gpuimg_cli_t *cli)
{
  if (!cli->output && !cli->plan.quiet && !cli->report && !cli->explain && cli->plan.repeat == 1 &&
      cli->plan.warmup == 0 && !analyses(&cli->plan))
    fprintf(stderr, "gpuimg: no OUTPUT given: the result was not written (name an OUTPUT file "
                    "to save it)\n");
}

/* The main command: a one-image run, a batch (-o DIR), --help or --version. */
static int image_main(int argc, char **argv)
{
  double t_start = gpuimg_now_ms();
  gpuimg_cli_t cli;
  if (gpuimg_cli_parse(argc, argv, &cli) < 0) {
    int code = gpuimg_error_code(); /* usage, or an OUTPUT that is a directory */
    fprintf(stderr, "gpuimg: %s\n", gpuimg_error_message());
    if (code == GPUIMG_EXIT_USAGE)
      gpuimg_cli_usage(stderr);
    gpuimg_cli_free(&cli);
    return code;
  }
  int status = GPUIMG_EXIT_OK;
  if (cli.help || cli.version || cli.completion) {
    if (cli.help)
      gpuimg_cli_help(stdout);
    else if (cli.completion)
      gpuimg_cli_completion(stdout);
    else
      print_version();
  } else if (gpuimg_output_install_signal_cleanup(), cli.outdir) {
    status = gpuimg_batch_main(&cli);
  } else {
    gpuimg_run_t run;
    outputs_t o = {.out.fd = -1, .rep.fd = -1};
    memset(&run, 0, sizeof run);
    if (run_one(&cli, &o, &run, t_start) < 0) {
      status = gpuimg_error_code();
      fprintf(stderr, "gpuimg: %s\n", gpuimg_error_message());
      if (status == GPUIMG_EXIT_USAGE)
        gpuimg_cli_usage(stderr);
      if (o.have_out)
        gpuimg_output_abort(&o.out);
      if (o.have_rep)
        gpuimg_output_abort(&o.rep);
    } else {
      say_not_written(&cli);
    }
    gpuimg_run_free(&run);
    gpuimg_codec_thread_end();
  }
  gpuimg_cli_free(&cli);
  return status;
}

/* Subcommands with command lines of their own; anything else is an operation. */
static const struct {
  const char *name;
  int (*main)(int argc, char **argv);
} commands[] = {
    {"compare", gpuimg_compare_main},
    {"info", gpuimg_info_main},
    {"summary", gpuimg_summary_main},
};

int main(int argc, char **argv)
{
  gpuimg_streams_guard();
  for (size_t i = 0; argc > 1 && i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(argv[1], commands[i].name) == 0)
      return commands[i].main(argc - 1, argv + 1);
  return image_main(argc, argv);
}

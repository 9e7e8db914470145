/* main.c: gpuimg's entry point: the subcommands, and a one-image run through the engine's flow. */
#define _XOPEN_SOURCE 700
#include "cli.h"
#include "colour.h"
#include "explain_image.h"
#include "streams.h"

#include <stdlib.h>
#include <string.h>

#ifndef GPUIMG_VERSION
#define GPUIMG_VERSION "unknown"
#endif

#define SAMPLE_NAME "(built-in sample)"

/* A one-image run's files: the image, the report and --explain-image's pictures (one a step),
 * created before any work. */
typedef struct {
  gpuimg_output_t out, rep;
  int have_out, have_rep;
  gpuimg_output_t pics[GPUIMG_MAX_STEPS];
  char *pic_names[GPUIMG_MAX_STEPS];
  int npics, pics_open;
} outputs_t;

/* The formats read and written and the codecs compiled in, from the codec registry. */
static void print_version(void)
{
  char list[256];
  printf("gpuimg %s (backends: cpu%s; ", GPUIMG_VERSION,
         gpuimg_pipeline_have_cuda() ? ", cuda" : "");
  printf("reads: %s; ", gpuimg_format_list(GPUIMG_CODEC_DECODES, GPUIMG_SPELL_UPPER, ", ", ", ",
                                           list, sizeof list));
  printf("writes: %s; ", gpuimg_format_list(GPUIMG_CODEC_ENCODES, GPUIMG_SPELL_UPPER, ", ", ", ",
                                            list, sizeof list));
  for (int f = GPUIMG_FORMAT_PNG; f <= GPUIMG_FORMAT_LAST; f++) {
    gpuimg_codec_list((gpuimg_format_t)f, GPUIMG_CODEC_DECODES | GPUIMG_CODEC_ENCODES, list,
                      sizeof list);
    printf("%s codecs: %s; ", gpuimg_format_name((gpuimg_format_t)f), list[0] ? list : "none");
  }
  printf("colour: %s)\n", gpuimg_colour_available() ? "lcms2" : "none");
}

/* Never replace an input (the image or a mask) with an output (the image, the report or a
 * picture). */
static int check_same_files(const gpuimg_cli_t *cli, const outputs_t *o)
{
  const char *inputs[GPUIMG_MAX_STEPS + 1];
  const char *outs[2 + GPUIMG_MAX_STEPS] = {cli->output, cli->report};
  int ninputs = 0, takes, nouts = 2;
  for (int i = 0; i < o->npics; i++)
    outs[nouts++] = o->pic_names[i];
  if (cli->input && strcmp(cli->input, "-"))
    inputs[ninputs++] = cli->input;
  int nimages = ninputs; /* the rest are masks */
  for (int i = 0; i < cli->plan.nsteps; i++) {
    const char *mask = gpuimg_flow_mask_path(&cli->plan, i, &takes);
    if (takes && mask && strcmp(mask, "-"))
      inputs[ninputs++] = mask;
  }
  for (int i = 0; i < ninputs; i++)
    for (int k = 0; k < nouts; k++)
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
  for (int i = 0; i < o->npics; i++)
    for (int k = 0; k < 2; k++)
      if (outs[k] && strcmp(outs[k], "-") && gpuimg_same_file(o->pic_names[i], outs[k])) {
        gpuimg_error_set(GPUIMG_EXIT_USAGE, o->pic_names[i],
                         "the picture and the %s are the same file", k ? "report" : "image");
        return -1;
      }
  return 0;
}

/* --explain-image's file names, one a step. */
static int name_pictures(const gpuimg_cli_t *cli, outputs_t *o)
{
  for (int i = 0; cli->explain_image && i < cli->plan.nsteps; i++, o->npics++)
    if (!(o->pic_names[i] = gpuimg_explain_image_name(cli->explain_image, i, cli->plan.nsteps, "")))
      return -1;
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
  for (; o->pics_open < o->npics; o->pics_open++)
    if (gpuimg_output_open(&o->pics[o->pics_open], o->pic_names[o->pics_open],
                           flags | GPUIMG_OUTPUT_BINARY) < 0)
      return -1;
  return 0;
}

/* Removes what open_outputs() created and frees the pictures' names. */
static void abort_outputs(outputs_t *o)
{
  if (o->have_out)
    gpuimg_output_abort(&o->out);
  if (o->have_rep)
    gpuimg_output_abort(&o->rep);
  for (int i = 0; i < o->pics_open; i++)
    gpuimg_output_abort(&o->pics[i]);
}

static void free_outputs(outputs_t *o)
{
  for (int i = 0; i < o->npics; i++)
    free(o->pic_names[i]);
  o->npics = 0;
}

/* Step i's timeline (--explain-image on a device whose launch recorded its blocks), named
 * FILE-timeline.png (FILE-K-timeline.png of several steps); nothing when it recorded none. */
static int write_timeline(const gpuimg_cli_t *cli, const gpuimg_run_t *run, int i)
{
  gpuimg_buf_t png = {0};
  gpuimg_output_t out = {.fd = -1};
  char *name = NULL;
  int rc = gpuimg_explain_timeline_png(&cli->plan, run, i, &png);
  int flags = gpuimg_flow_output_flags(&cli->plan) | GPUIMG_OUTPUT_BINARY;
  if (rc == 0 &&
      (!(name = gpuimg_explain_image_name(cli->explain_image, i, cli->plan.nsteps, "timeline")) ||
       gpuimg_output_open(&out, name, flags) < 0 ||
       gpuimg_output_commit(&out, png.data, png.size) < 0))
    rc = -1;
  gpuimg_output_abort(&out);
  gpuimg_buf_free(&png);
  free(name);
  return rc < 0 ? -1 : 0;
}

/* Each step's picture (--explain-image) of the run whose result is result, and its timeline
 * where the device recorded the launch's blocks: the steps' masks loaded again for the
 * divergence of the kernels that branch on them. */
static int write_pictures(const gpuimg_cli_t *cli, outputs_t *o, const gpuimg_run_t *run,
                          const gpuimg_image_t *result)
{
  int rc = 0;
  for (int i = 0; rc == 0 && i < o->npics; i++) {
    gpuimg_image_t mask = {0};
    gpuimg_buf_t png = {0};
    int takes;
    const char *path = gpuimg_flow_mask_path(&cli->plan, i, &takes);
    rc = (takes && gpuimg_flow_load_mask(&cli->plan, path, gpuimg_sample_mask_png,
                                         gpuimg_sample_mask_png_size, &mask, NULL) < 0) ||
                 gpuimg_explain_image_png(&cli->plan, run, i, result, &mask, &png) < 0 ||
                 gpuimg_output_commit(&o->pics[i], png.data, png.size) < 0 ||
                 write_timeline(cli, run, i) < 0
             ? -1
             : 0;
    gpuimg_image_free(&mask);
    gpuimg_buf_free(&png);
  }
  return rc;
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
  if (name_pictures(cli, o) < 0 || check_same_files(cli, o) < 0 || open_outputs(cli, o) < 0)
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
  gpuimg_image_t result = {0};
  job.result = o->npics ? &result : NULL;
  int rc = gpuimg_flow_run(&flow, &job, run);
  if (rc == 0)
    rc = print_results(cli, run);
  if (rc == 0 && cli->explain)
    gpuimg_explain(stderr, &cli->plan, run);
  if (rc == 0 && o->npics)
    rc = write_pictures(cli, o, run, &result);
  gpuimg_image_free(&result);
  if (rc < 0)
    return -1;
  return o->have_rep ? write_report(cli, run, o, t_start) : 0;
}

/* Without OUTPUT the result is not written: say so, unless quiet, a timing run (a report,
 * --explain, --repeat or --warmup shows why there is no image) or an analysis (its figures are
 * the result). */
static void say_not_written(const gpuimg_cli_t *cli)
{
  if (!cli->output && !cli->plan.quiet && !cli->report && !cli->explain && !cli->explain_image &&
      cli->plan.repeat == 1 && cli->plan.warmup == 0 && !analyses(&cli->plan))
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
      abort_outputs(&o);
    } else {
      say_not_written(&cli);
    }
    free_outputs(&o);
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

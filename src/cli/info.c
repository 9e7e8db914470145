/* info.c: `gpuimg info`: the CUDA device's limits and a measured copy bandwidth. */
#include "cli.h"

#include <cJSON.h>
#include <stddef.h>
#include <string.h>

#include "options.h"

/* The info command line; report points into argv. */
typedef struct {
  const char *report; /* NULL: none; "-": stdout */
  int quiet, help;
} info_options_t;

/* --report FILE: kept even when empty, so that an unknown argument after it is named first. */
static int keep_report(const gpuimg_option_t *opt, const char *spelled, const char *arg,
                       void *target)
{
  (void)opt;
  (void)spelled;
  ((info_options_t *)target)->report = arg;
  return 0;
}

static const gpuimg_option_t info_options[] = {
    {.long_name = "report",
     .kind = GPUIMG_OPTION_CUSTOM,
     .offset = offsetof(info_options_t, report),
     .metavar = "FILE",
     .parse = keep_report,
     .help = "write the description as JSON ('-' = stdout)"},
    {.long_name = "quiet",
     .short_name = 'q',
     .kind = GPUIMG_OPTION_FLAG,
     .offset = offsetof(info_options_t, quiet),
     .value = 1,
     .help = "print nothing else"},
    {.long_name = "help",
     .short_name = 'h',
     .kind = GPUIMG_OPTION_FLAG,
     .offset = offsetof(info_options_t, help),
     .value = 1,
     .help = "this help"},
    {.long_name = NULL},
};

/* Reads argv into o, stopping at --help: NULL, or the argument it cannot take (a value
 * missing or given to a flag counts as an unknown argument, as do non-options). */
static const char *parse_args(int argc, char **argv, info_options_t *o)
{
  const gpuimg_option_set_t set = {info_options, o};
  char spelled[64];
  memset(o, 0, sizeof *o);
  for (gpuimg_args_t args = {argc, argv, 1}; args.i < argc && !o->help; args.i++) {
    const char *a = argv[args.i];
    if (a[0] != '-' || a[1] == '\0' || gpuimg_options_parse(&args, &set, 1, NULL, spelled) != 0)
      return a;
  }
  return NULL;
}

static int info_usage(const char *fmt, const char *arg)
{
  fprintf(stderr, "gpuimg: info: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nTry 'gpuimg info --help' for more information.\n");
  return GPUIMG_EXIT_USAGE;
}

#ifdef GPUIMG_HAVE_CUDA
/* The description as text, one line per subject. */
static void print_device(FILE *f, const gpuimg_device_info_t *d, double gbps)
{
  const gpuimg_gpu_t *g = &d->gpu;
  fprintf(f, "device:            %s (compute capability %d.%d)\n", d->name, g->cc_major,
          g->cc_minor);
  fprintf(f, "SMs:               %d\n", g->sms);
  fprintf(f,
          "per SM:            %d threads (%d warps of %d), %d blocks, %d registers, "
          "%d KB shared memory\n",
          g->max_threads_per_sm, d->max_warps_per_sm, d->warp_size, g->max_blocks_per_sm,
          g->regs_per_sm, g->shared_per_sm / 1024);
  fprintf(f,
          "per block:         %d threads (%dx%dx%d), %d registers, %d KB shared "
          "(%d KB opt-in)\n",
          g->max_threads_per_block, d->max_block[0], d->max_block[1], d->max_block[2],
          g->regs_per_block, g->shared_per_block / 1024, g->shared_per_block_optin / 1024);
  fprintf(f, "grid:              %d x %d x %d blocks at most\n", d->max_grid[0], d->max_grid[1],
          d->max_grid[2]);
  fprintf(f, "L2 cache:          %.1f MB\n", (double)g->l2_bytes / 1e6);
  fprintf(f, "memory:            %.1f GB, %d-bit bus\n", (double)d->memory_bytes / 1e9,
          d->memory_bus_bits);
  fprintf(f, "copy bandwidth:    %.0f GB/s (device to device, read + write, measured)\n", gbps);
  fprintf(f, "CUDA:              driver %d.%d, runtime %d.%d\n", d->driver_version / 1000,
          d->driver_version % 1000 / 10, d->runtime_version / 1000, d->runtime_version % 1000 / 10);
}

/* The description as a JSON object (schema_version 1); NULL when out of memory. */
static cJSON *device_json(const gpuimg_device_info_t *d, double gbps)
{
  const gpuimg_gpu_t *g = &d->gpu;
  cJSON *o = cJSON_CreateObject();
  char v[32];
  cJSON_AddNumberToObject(o, "schema_version", 1);
  cJSON_AddStringToObject(o, "device", d->name);
  snprintf(v, sizeof v, "%d.%d", g->cc_major, g->cc_minor);
  cJSON_AddStringToObject(o, "compute_capability", v);
  cJSON_AddNumberToObject(o, "sms", g->sms);
  cJSON_AddNumberToObject(o, "max_threads_per_sm", g->max_threads_per_sm);
  cJSON_AddNumberToObject(o, "max_warps_per_sm", d->max_warps_per_sm);
  cJSON_AddNumberToObject(o, "max_blocks_per_sm", g->max_blocks_per_sm);
  cJSON_AddNumberToObject(o, "registers_per_sm", g->regs_per_sm);
  cJSON_AddNumberToObject(o, "shared_bytes_per_sm", (double)g->shared_per_sm);
  cJSON_AddNumberToObject(o, "max_threads_per_block", g->max_threads_per_block);
  cJSON_AddNumberToObject(o, "registers_per_block", g->regs_per_block);
  cJSON_AddNumberToObject(o, "shared_bytes_per_block", (double)g->shared_per_block);
  cJSON_AddNumberToObject(o, "shared_bytes_per_block_optin", (double)g->shared_per_block_optin);
  cJSON_AddItemToObject(o, "max_block", cJSON_CreateIntArray(d->max_block, 3));
  cJSON_AddItemToObject(o, "max_grid", cJSON_CreateIntArray(d->max_grid, 3));
  cJSON_AddNumberToObject(o, "warp_size", d->warp_size);
  cJSON_AddNumberToObject(o, "l2_bytes", (double)g->l2_bytes);
  cJSON_AddNumberToObject(o, "memory_bytes", (double)d->memory_bytes);
  cJSON_AddNumberToObject(o, "memory_bus_bits", d->memory_bus_bits);
  cJSON_AddNumberToObject(o, "copy_bandwidth_gbps", (double)(long long)(gbps * 10) / 10.0);
  snprintf(v, sizeof v, "%d.%d", d->driver_version / 1000, d->driver_version % 1000 / 10);
  cJSON_AddStringToObject(o, "cuda_driver", v);
  snprintf(v, sizeof v, "%d.%d", d->runtime_version / 1000, d->runtime_version % 1000 / 10);
  cJSON_AddStringToObject(o, "cuda_runtime", v);
  return o;
}

/* Commits the JSON description to out (opened), or aborts it; the exit status. */
static int write_report(gpuimg_output_t *out, const gpuimg_device_info_t *d, double gbps)
{
  cJSON *o = device_json(d, gbps);
  char *text = cJSON_Print(o);
  cJSON_Delete(o);
  size_t len = text ? strlen(text) : 0;
  if (text)
    text[len] = '\n'; /* the NUL becomes the final newline; len + 1 bytes are written */
  if (!text || gpuimg_output_commit(out, text, len + 1) < 0) {
    fprintf(stderr, "gpuimg: %s\n", text ? gpuimg_error_message() : "out of memory");
    cJSON_free(text);
    gpuimg_output_abort(out);
    return text ? gpuimg_error_code() : GPUIMG_EXIT_FAILURE;
  }
  cJSON_free(text);
  return GPUIMG_EXIT_OK;
}

/* Describes the device as o asks; the exit status. */
static int describe_device(const info_options_t *o)
{
  char reason[256];
  if (gpuimg_cuda_probe(reason, sizeof reason) <= 0) {
    fprintf(stderr, "gpuimg: info: no usable CUDA device: %s\n", reason);
    return GPUIMG_EXIT_DEVICE;
  }
  gpuimg_device_info_t d;
  gpuimg_cuda_t *ctx = NULL;
  double gbps = 0;
  gpuimg_output_t out;
  if (gpuimg_cuda_device_info(-1, &d) < 0 || !(ctx = gpuimg_cuda_create(-1)) ||
      gpuimg_cuda_copy_bandwidth(ctx, (size_t)1 << 30, &gbps) < 0 ||
      (o->report && gpuimg_output_open(&out, o->report, o->quiet ? GPUIMG_OUTPUT_QUIET : 0) < 0)) {
    fprintf(stderr, "gpuimg: %s\n", gpuimg_error_message());
    gpuimg_cuda_destroy(ctx);
    return gpuimg_error_code();
  }
  gpuimg_cuda_destroy(ctx);
  if (!o->quiet)
    print_device(o->report && strcmp(o->report, "-") == 0 ? stderr : stdout, &d, gbps);
  return o->report ? write_report(&out, &d, gbps) : GPUIMG_EXIT_OK;
}
#endif

int gpuimg_info_main(int argc, char **argv)
{
  info_options_t o;
  const char *bad = parse_args(argc, argv, &o);
  if (bad)
    return info_usage("unknown argument '%s'", bad);
  if (o.help) {
    printf("Usage: gpuimg info [--report FILE] [-q]\n"
           "Describe the CUDA device: limits per SM and per block, memory, versions, and a\n"
           "measured device-to-device copy bandwidth. --report writes it as JSON ('-' =\n"
           "stdout); -q prints nothing else. Exit status 5 when no device is usable.\n");
    return GPUIMG_EXIT_OK;
  }
  if (o.report && !o.report[0])
    return info_usage("%s--report: empty file name", "");
#ifndef GPUIMG_HAVE_CUDA
  fprintf(stderr, "gpuimg: info: this gpuimg was built without CUDA\n");
  return GPUIMG_EXIT_DEVICE;
#else
  return describe_device(&o);
#endif
}

/* stats.c: the stats operation (an analysis: its output is its input): per channel count, sum,
 * sum of squares, minimum, maximum, mean, standard deviation and a 256-bin histogram, exact
 * integers; its declaration, options and CPU reference. */
#include "stats_cpu.h"
#include "ops.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const gpuimg_reduce_names[] = {"1", "2", "3",       "4",   "5",
                                           "6", "7", "shuffle", "cub", NULL};
const char *const gpuimg_histogram_names[] = {"shared", "global", "cub", NULL};

/* Pixels counted into 32-bit bins before they are added to the 64-bit ones. */
#define STATS_CHUNK ((size_t)1 << 30)

/* n pixels of c channels into bins (c x 256, 32-bit: n < 2^32). */
GPUIMG_CPU_CLONES static void count_values(const uint8_t *p, size_t n, int c, uint32_t *bins)
{
  if (c == 1) {
    for (size_t i = 0; i < n; i++)
      bins[p[i]]++;
    return;
  }
  for (size_t i = 0; i < n; i++, p += c)
    for (int k = 0; k < c; k++)
      bins[k * GPUIMG_STATS_BINS + p[k]]++;
}

void gpuimg_stats_from_histogram(gpuimg_channel_stats_t *ch)
{
  ch->count = ch->sum = ch->sum_squares = 0;
  ch->min = ch->max = 0;
  int first = 1;
  for (uint32_t v = 0; v < GPUIMG_STATS_BINS; v++) {
    uint64_t n = ch->histogram[v];
    if (!n)
      continue;
    if (first)
      ch->min = v, first = 0;
    ch->max = v;
    ch->count += n;
    ch->sum += n * v;
    ch->sum_squares += n * v * v;
  }
}

int gpuimg_stats_cpu(const gpuimg_image_t *src, gpuimg_stats_t *out)
{
  static const size_t bins_size = 4 * GPUIMG_STATS_BINS * sizeof(uint32_t);
  uint32_t bins[4 * GPUIMG_STATS_BINS];
  int c = src->channels;
  size_t pixels = (size_t)src->width * (size_t)src->height;
  memset(out, 0, sizeof *out);
  out->channels = c;
  for (size_t done = 0; done < pixels; done += STATS_CHUNK) {
    size_t n = pixels - done < STATS_CHUNK ? pixels - done : STATS_CHUNK;
    memset(bins, 0, bins_size);
    count_values(src->data + done * (size_t)c, n, c, bins);
    for (int k = 0; k < c; k++)
      for (int v = 0; v < GPUIMG_STATS_BINS; v++)
        out->ch[k].histogram[v] += bins[k * GPUIMG_STATS_BINS + v];
  }
  for (int k = 0; k < c; k++)
    gpuimg_stats_from_histogram(&out->ch[k]);
  return 0;
}

double gpuimg_stats_mean(const gpuimg_channel_stats_t *ch)
{
  return ch->count ? (double)ch->sum / (double)ch->count : 0.0;
}

double gpuimg_stats_std(const gpuimg_channel_stats_t *ch)
{
  __extension__ typedef unsigned __int128 u128;
  if (!ch->count)
    return 0.0;
  u128 num = (u128)ch->count * ch->sum_squares - (u128)ch->sum * ch->sum; /* >= 0: Cauchy */
  double n = (double)ch->count;
  return sqrt((double)num / (n * n));
}

void gpuimg_stats_add(gpuimg_stats_t *total, const gpuimg_stats_t *one)
{
  for (int k = 0; k < one->channels; k++) {
    gpuimg_channel_stats_t *t = &total->ch[k];
    const gpuimg_channel_stats_t *o = &one->ch[k];
    if (!o->count)
      continue;
    t->min = !t->count || o->min < t->min ? o->min : t->min;
    t->max = !t->count || o->max > t->max ? o->max : t->max;
    t->count += o->count;
    t->sum += o->sum;
    t->sum_squares += o->sum_squares;
    for (int v = 0; v < GPUIMG_STATS_BINS; v++)
      t->histogram[v] += o->histogram[v];
  }
  if (one->channels > total->channels)
    total->channels = one->channels;
}

/* v with the fewest of 15 or 17 significant digits that read back as v. */
static void print_double(char *buf, size_t size, double v)
{
  snprintf(buf, size, "%.15g", v);
  if (strtod(buf, NULL) != v)
    snprintf(buf, size, "%.17g", v);
}

/* Appends to buf at *used (room for size bytes). */
#define APPEND(...) (*used += (size_t)snprintf(buf + *used, size - *used, __VA_ARGS__))

static void channel_json(char *buf, size_t size, size_t *used, const gpuimg_channel_stats_t *ch)
{
  char mean[32], std[32];
  print_double(mean, sizeof mean, gpuimg_stats_mean(ch));
  print_double(std, sizeof std, gpuimg_stats_std(ch));
  APPEND("{\"count\":%llu,\"sum\":%llu,\"sum_squares\":%llu,\"min\":%u,\"max\":%u,"
         "\"mean\":%s,\"std\":%s,\"histogram\":[",
         (unsigned long long)ch->count, (unsigned long long)ch->sum,
         (unsigned long long)ch->sum_squares, ch->min, ch->max, mean, std);
  for (int v = 0; v < GPUIMG_STATS_BINS; v++)
    APPEND("%s%llu", v ? "," : "", (unsigned long long)ch->histogram[v]);
  APPEND("]}");
}

char *gpuimg_stats_json(const gpuimg_stats_t *s)
{
  /* A channel: 256 bins of at most 20 digits and ", ", and the rest well under 512 bytes. */
  size_t size = 64 + 4 * (GPUIMG_STATS_BINS * 22 + 512), u = 0, *used = &u;
  char *buf = malloc(size);
  if (!buf)
    return NULL;
  APPEND("{\"channels\":[");
  for (int k = 0; k < s->channels; k++) {
    APPEND("%s", k ? "," : "");
    channel_json(buf, size, used, &s->ch[k]);
  }
  APPEND("]}");
  return buf;
}

/* The histogram of channel object ch into c; 0, or -1 when it has none of 256 integer counts
 * in 0 .. 2^53. */
static int parse_histogram(const cJSON *ch, gpuimg_channel_stats_t *c)
{
  const cJSON *h = cJSON_GetObjectItemCaseSensitive(ch, "histogram"), *v;
  int n = 0;
  if (!cJSON_IsArray(h) || cJSON_GetArraySize(h) != GPUIMG_STATS_BINS)
    return -1;
  cJSON_ArrayForEach(v, h)
  {
    double d = cJSON_IsNumber(v) ? v->valuedouble : -1;
    if (!(d >= 0 && d <= 9007199254740992.0 && d == floor(d)))
      return -1;
    c->histogram[n++] = (uint64_t)d;
  }
  gpuimg_stats_from_histogram(c);
  return 0;
}

int gpuimg_stats_parse(const char *json, gpuimg_stats_t *s)
{
  cJSON *o = cJSON_Parse(json), *ch;
  const cJSON *chs = cJSON_GetObjectItemCaseSensitive(o, "channels");
  int rc =
      cJSON_IsArray(chs) && cJSON_GetArraySize(chs) >= 1 && cJSON_GetArraySize(chs) <= 4 ? 0 : -1;
  memset(s, 0, sizeof *s);
  cJSON_ArrayForEach(ch, chs)
  {
    if (rc == 0 && s->channels < 4)
      rc = parse_histogram(ch, &s->ch[s->channels++]);
  }
  cJSON_Delete(o);
  return rc;
}

/* stats's parameters: the reduction's and the histogram's kernels on CUDA. */
typedef struct {
  gpuimg_params_common_t common;
  int reduce;    /* gpuimg_reduce_t */
  int histogram; /* gpuimg_histogram_t */
} stats_params_t;
GPUIMG_PARAMS_CHECK(stats_params_t);

static const stats_params_t stats_defaults = {.common = {.variant = GPUIMG_VARIANT_FAST},
                                              .reduce = GPUIMG_REDUCE_SHUFFLE,
                                              .histogram = GPUIMG_HISTOGRAM_SHARED};

/* A kernel chosen by name makes the run one about CUDA kernels (as --naive does). */
static int kernel_chosen(const gpuimg_option_t *o, const char *spelled, const char *arg,
                         void *target)
{
  (void)o, (void)spelled, (void)arg;
  ((stats_params_t *)target)->common.variant = GPUIMG_VARIANT_CHOSEN;
  return 0;
}

static const gpuimg_option_t stats_options[] = {
    {.long_name = "variant",
     .kind = GPUIMG_OPTION_CHOICE,
     .offset = offsetof(stats_params_t, reduce),
     .choices = gpuimg_reduce_names,
     .parse = kernel_chosen,
     .metavar = "K",
     .help = "CUDA reduction: 1..7 the steps of Harris's ladder, shuffle\n"
             "(default: warp shuffles, one atomic a block) or cub"},
    {.long_name = "histogram",
     .kind = GPUIMG_OPTION_CHOICE,
     .offset = offsetof(stats_params_t, histogram),
     .choices = gpuimg_histogram_names,
     .parse = kernel_chosen,
     .metavar = "H",
     .help = "CUDA histogram: shared (default: per-block bins), global\n"
             "(an atomic a value) or cub"},
    {0},
};

/* The output is the input. */
static int stats_copy_rows(const void *params, const gpuimg_image_t *src,
                           const gpuimg_image_t *mask, gpuimg_image_t *dst, int y0, int y1)
{
  (void)params, (void)mask;
  size_t row = (size_t)src->width * (size_t)src->channels;
  memcpy(dst->data + (size_t)y0 * row, src->data + (size_t)y0 * row, (size_t)(y1 - y0) * row);
  return 0;
}

static int stats_measure_cpu(const void *params, const gpuimg_image_t *src, void *result)
{
  (void)params;
  return gpuimg_stats_cpu(src, result);
}

#ifdef GPUIMG_HAVE_CUDA
static int stats_measure_gpu(gpuimg_cuda_t *ctx, const void *params, const uint8_t *d_src,
                             int width, int height, int channels, void *result,
                             gpuimg_launch_t *info)
{
  const stats_params_t *p = params;
  return gpuimg_stats_gpu(ctx, d_src, width, height, channels, (gpuimg_reduce_t)p->reduce,
                          (gpuimg_histogram_t)p->histogram, GPUIMG_STATS_ALL, result, info);
}
#endif

static char *stats_result_json(const void *result)
{
  return gpuimg_stats_json(result);
}

static void stats_result_add(void *total, const void *result)
{
  gpuimg_stats_add(total, result);
}

static int stats_result_parse(const char *json, void *result)
{
  return gpuimg_stats_parse(json, result);
}

static void stats_result_print(const void *result, FILE *f, const char *prefix)
{
  const gpuimg_stats_t *s = result;
  for (int k = 0; k < s->channels; k++)
    fprintf(f, "%schannel %d: %llu values, mean %.6f, std %.6f, min %u, max %u\n", prefix, k,
            (unsigned long long)s->ch[k].count, gpuimg_stats_mean(&s->ch[k]),
            gpuimg_stats_std(&s->ch[k]), s->ch[k].min, s->ch[k].max);
}

static const char *stats_variant_name(const void *params)
{
  return gpuimg_reduce_names[((const stats_params_t *)params)->reduce];
}

static void stats_report(const void *params, const gpuimg_report_sink_t *sink)
{
  sink->string(sink->ctx, "histogram",
               gpuimg_histogram_names[((const stats_params_t *)params)->histogram]);
}

static int stats_launch(const void *params, int w, int h, int c, const gpuimg_launch_env_t *env,
                        gpuimg_launch_t *l)
{
  const stats_params_t *p = params;
  return gpuimg_stats_launch((gpuimg_reduce_t)p->reduce, (gpuimg_histogram_t)p->histogram, w, h, c,
                             env, l);
}

const gpuimg_op_t gpuimg_op_stats = {
    .name = "stats",
    .summary = "per-channel count, sum, min, max, mean, std, histogram (JSON)",
    .options = stats_options,
    GPUIMG_PARAMS(stats_params_t, stats_defaults),
    .run_cpu_rows = stats_copy_rows,
    .result_size = sizeof(gpuimg_stats_t),
    .measure_cpu = stats_measure_cpu,
    GPUIMG_MEASURE_GPU(stats_measure_gpu),
    .result_json = stats_result_json,
    .result_add = stats_result_add,
    .result_parse = stats_result_parse,
    .result_print = stats_result_print,
    .variant_name = stats_variant_name,
    .report = stats_report,
    .launch = stats_launch,
    .work = 0.3,
};

/* test_cost.c: the backend cost model's choices (src/engine/cost.c, its stored constants) on
 * bench/bench-single's one-image cases, nvJPEG's (--codec nvjpeg) for one image, and the
 * sanity of its predictions. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "plan.h"

static int failures;

static void fail(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  printf("FAIL ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  failures++;
}

/* A plan from "op [option value]..." words, steps separated by "then". */
static void make_plan(gpuimg_plan_t *plan, const char *spec)
{
  char words[256], *save = NULL;
  snprintf(words, sizeof words, "%s", spec);
  gpuimg_plan_init(plan);
  int want_op = 1;
  for (char *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
    if (strcmp(w, "then") == 0) {
      want_op = 1;
    } else if (want_op) {
      if (gpuimg_plan_add_step(plan, w) < 0)
        fail("%s: %s", spec, gpuimg_error_message());
      want_op = 0;
    } else {
      char *value = strtok_r(NULL, " ", &save);
      if (gpuimg_step_set(&plan->steps[plan->nsteps - 1], w, w, value) != 0)
        fail("%s: option %s %s", spec, w, value ? value : "");
    }
  }
}

typedef struct {
  const char *steps;
  int w, h, c;
  size_t file_bytes;
  gpuimg_format_t in, out;
  int threads;
  const char *want; /* "cpu" or "cuda" */
} case_t;

static void check_case(const case_t *k)
{
  gpuimg_plan_t plan;
  make_plan(&plan, k->steps);
  gpuimg_cost_input_t in = {k->w, k->h, k->c, k->file_bytes, k->in, k->out};
  double cpu, cuda;
  gpuimg_cost_predict(&plan, k->threads, &in, &cpu, &cuda);
  const char *got = cpu <= cuda ? "cpu" : "cuda";
  printf("%-48s %5dx%-5d t%-2d cpu %8.1f ms  cuda %8.1f ms  -> %s\n", k->steps, k->w, k->h,
         k->threads, cpu, cuda, got);
  if (!(cpu > 0 && cuda > 0 && cpu < 1e6 && cuda < 1e6))
    fail("%s: predictions %g, %g", k->steps, cpu, cuda);
  if (strcmp(got, k->want) != 0)
    fail("%s %dx%d at %d threads: %s predicted faster, expected %s", k->steps, k->w, k->h,
         k->threads, got, k->want);
}

/* One JPEG (3 channels, 16 threads: the H200 machine) under --codec nvjpeg: nvJPEG decoding it on
 * the device (decode; not a JPEG to turn) and encoding a JPEG output there (encode). */
typedef struct {
  const char *steps;
  int w, h;
  size_t file_bytes;
  gpuimg_format_t out;
  int decode, encode;
  const char *want; /* "host": the host codecs on the faster backend; "nvjpeg" */
} nvjpeg_case_t;

/* The flow's rule (src/engine/flow.c cheapest()): nvJPEG only when predicted faster than the
 * host codecs on the faster of the two backends. */
static void check_nvjpeg(const nvjpeg_case_t *k)
{
  gpuimg_plan_t plan;
  make_plan(&plan, k->steps);
  gpuimg_cost_input_t in = {k->w, k->h, 3, k->file_bytes, GPUIMG_FORMAT_JPEG, k->out};
  double cpu, cuda;
  gpuimg_cost_predict(&plan, 16, &in, &cpu, &cuda);
  double host = cpu <= cuda ? cpu : cuda;
  double nv = gpuimg_cost_predict_nvjpeg(&plan, 16, &in, k->decode, k->encode);
  const char *got = nv < host ? "nvjpeg" : "host";
  printf("nvjpeg %-41s %5dx%-5d d%d e%d host %8.1f ms  nvjpeg %8.1f ms  -> %s\n", k->steps, k->w,
         k->h, k->decode, k->encode, host, nv, got);
  /* Its handle's creation (0.15-0.3 s) comes after the device's start (over 0.2 s). */
  if (!(nv > 400 && nv < 1e6))
    fail("%s %dx%d: nvJPEG predicted %g ms", k->steps, k->w, k->h, nv);
  if (strcmp(got, k->want) != 0)
    fail("nvjpeg %s %dx%d: %s predicted faster, expected %s", k->steps, k->w, k->h, got, k->want);
}

/* With nothing for nvJPEG to do (no handle), its path is CUDA's with the host codecs. */
static void check_nvjpeg_idle(void)
{
  gpuimg_plan_t plan;
  make_plan(&plan, "blur radius 16");
  gpuimg_cost_input_t in = {4000, 3000, 3, 2500000, GPUIMG_FORMAT_JPEG, GPUIMG_FORMAT_PNG};
  double cpu, cuda;
  gpuimg_cost_predict(&plan, 16, &in, &cpu, &cuda);
  double nv = gpuimg_cost_predict_nvjpeg(&plan, 16, &in, 0, 0);
  if (nv != cuda)
    fail("nvJPEG with nothing to do: %g ms, CUDA with the host codecs %g ms", nv, cuda);
}

/* A batch's device share: n 1024x768 JPEGs of 190 KB on 16 cores, a share of lo to
 * hi percent; never one for too few images, PNG inputs, a set-up the host outruns, or too
 * little gain. */
static void check_share(const char *steps, gpuimg_format_t in_fmt, gpuimg_format_t out, long n,
                        double lo, double hi)
{
  gpuimg_plan_t plan;
  make_plan(&plan, steps);
  gpuimg_cost_input_t in = {1024, 768, 3, 190000, in_fmt, out};
  gpuimg_plan_t host = plan; /* as the scheduler prices libjpeg's shrink-on-load decode */
  _Alignas(16) unsigned char fixed[GPUIMG_PARAMS_SIZE];
  int r = gpuimg_plan_load_reduction(&plan, &gpuimg_codec_libjpeg, in.width, in.height, fixed);
  if (r > 1)
    memcpy(host.steps[0].params, fixed, sizeof fixed);
  /* nvJPEG's path encodes JPEG (what the registry says in a build with nvJPEG) */
  double share = gpuimg_cost_device_share(&plan, &in, out == GPUIMG_FORMAT_JPEG, &host, r, 16, n);
  if (share < lo / 100 || share > hi / 100)
    fail("device share of %s, %ld images: %g, expected %g%% to %g%%", steps, n, share, lo, hi);
}

int main(void)
{
  /* The cases' expectations price JPEG on the host as libjpeg decodes it (shrink-on-load):
   * a build whose registry has no libjpeg decoder prices stb's instead. */
  const gpuimg_codec_t *libjpeg = gpuimg_codec_find("libjpeg");
  if (!libjpeg || !libjpeg->decode) {
    printf("SKIP: this build's codec registry has no libjpeg decoder\n");
    return 77;
  }
  gpuimg_plan_t plan0;
  double cpu0, cuda0;
  const gpuimg_format_t png = GPUIMG_FORMAT_PNG, jpg = GPUIMG_FORMAT_JPEG;
  static const char *pipeline = "gray then blur radius 4 then checkerboard";
  const case_t cases[] = {
      /* bench-single's cases on the H200 machine's 16 cores: the CPU backend wins each. */
      {"gray", 1024, 768, 3, 1200000, png, png, 16, "cpu"},
      {"blur radius 16", 4000, 3000, 3, 2500000, jpg, jpg, 16, "cpu"},
      {"blur radius 16", 7680, 4320, 3, 7000000, jpg, jpg, 16, "cpu"},
      {"blur radius 64", 7680, 4320, 3, 40000000, png, png, 16, "cpu"},
      {pipeline, 7680, 4320, 3, 7000000, jpg, jpg, 16, "cpu"},
      /* One thread: a long PNG decode hides CUDA's start, and the steps outweigh the rest. */
      {"blur radius 64 then checkerboard then portrait", 7680, 4320, 3, 40000000, png, png, 1,
       "cuda"},
      /* Small images never pay for the start, on any number of threads. */
      {"portrait then portrait then portrait", 640, 480, 4, 300000, png, png, 1, "cpu"},
      {"gray", 1, 1, 1, 80, png, GPUIMG_FORMAT_NONE, 1, "cpu"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    check_case(&cases[i]);
  /* --codec nvjpeg for one image: its handle costs more than it saves at every size up to
   * about 100 Mpx (the host encoding a large JPEG in bands on 16 threads); past about 150 Mpx
   * the host codecs cost more. */
  const nvjpeg_case_t nvjpeg_cases[] = {
      {"gray", 1024, 768, 300000, jpg, 1, 1, "host"},
      {"gray", 1024, 768, 300000, png, 1, 0, "host"},
      {"blur radius 16", 4000, 3000, 2500000, jpg, 1, 1, "host"},
      {"blur radius 16", 7680, 4320, 7000000, jpg, 1, 1, "host"},
      {pipeline, 7680, 4320, 7000000, jpg, 1, 1, "host"},
      {"blur radius 4", 8000, 6000, 10000000, jpg, 1, 1, "host"},
      /* A JPEG to turn is decoded on the host: nvJPEG would only encode. */
      {"blur radius 16", 7680, 4320, 7000000, jpg, 0, 1, "host"},
      {"blur radius 4", 12000, 9000, 20000000, jpg, 1, 1, "host"},
      {"blur radius 4", 16000, 12000, 30000000, jpg, 1, 1, "nvjpeg"},
      {"gray", 16384, 16384, 50000000, png, 1, 0, "nvjpeg"},
  };
  for (size_t i = 0; i < sizeof nvjpeg_cases / sizeof nvjpeg_cases[0]; i++)
    check_nvjpeg(&nvjpeg_cases[i]);
  check_nvjpeg_idle();
  const gpuimg_format_t none = GPUIMG_FORMAT_NONE;
  check_share("blur radius 8", jpg, jpg, 10000, 75, 90);       /* host during the set-up: 82% */
  check_share("gray", jpg, png, 10000, 70, 90);                /* 80% */
  check_share("resize width 256", jpg, jpg, 10000, 55, 70);    /* 62%, host at 512x384 */
  check_share("resize width 256", jpg, jpg, 1000000, 99, 100); /* set-up amortised */
  check_share("blur radius 8", jpg, jpg, 4000, 45, 65);        /* 55% */
  check_share("blur radius 8", jpg, jpg, 2000, 0, 0);          /* too little gain */
  check_share("blur radius 8", jpg, jpg, 100, 0, 0);           /* the set-up outruns */
  check_share("blur radius 8", png, jpg, 10000, 0, 0);
  check_share("blur radius 8", jpg, none, 10000, 65, 85); /* 76% */
  /* Tiny images: a device image costs the host more than a host one, at any count. */
  gpuimg_plan_t tiny;
  make_plan(&tiny, "gray");
  gpuimg_cost_input_t small = {31, 17, 3, 900, jpg, png};
  if (gpuimg_cost_device_share(&tiny, &small, 0, NULL, 1, 16, 100000000) != 0)
    fail("a device share for 31x17 JPEGs");
  /* An image of no size (a header the model could not read) predicts without failing. */
  gpuimg_cost_input_t none_in = {0, 0, 0, 0, png, png};
  make_plan(&plan0, "gray");
  gpuimg_cost_predict(&plan0, 16, &none_in, &cpu0, &cuda0);
  gpuimg_cost_predict(&plan0, 16, &(gpuimg_cost_input_t){0, 0, 0, 0, png, jpg}, &cpu0, &cuda0);
  /* More threads never predict a slower CPU run. */
  gpuimg_plan_t plan;
  make_plan(&plan, pipeline);
  gpuimg_cost_input_t in = {7680, 4320, 3, 7000000, jpg, jpg};
  double last = 1e9, cpu, cuda;
  for (int t = 1; t <= 64; t *= 2) {
    gpuimg_cost_predict(&plan, t, &in, &cpu, &cuda);
    if (cpu > last)
      fail("%d threads predicted slower than %d", t, t / 2);
    last = cpu;
  }
  printf("%s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}

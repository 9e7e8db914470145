/* test_route.c: where an image runs (src/engine/route.c): the decode, steps and encode of one
 * image by its route, shrink-on-load's reduction as the flow then decodes, and a batch item's
 * path from the hash of its name. No device is needed: the device's answers are those of a
 * build or machine without one. */
#define TEST_NAME "test_route"
#include "test_fail.h"

#include <string.h>

#include "flow.h"
#include "plan.h"
#include "route.h"

/* A plan of one step, op, with one option set (name NULL: none). */
static void make_plan(gpuimg_plan_t *plan, const char *op, const char *name, const char *value)
{
  gpuimg_plan_init(plan);
  if (gpuimg_plan_add_step(plan, op) < 0 ||
      (name && gpuimg_step_set(&plan->steps[0], name, name, value) != 0))
    fail("plan %s: %s", op, gpuimg_error_message());
}

/* A w x h RGB JPEG (auto's encoder) of a gradient, into buf. */
static void make_jpeg(int w, int h, gpuimg_buf_t *buf)
{
  gpuimg_image_t img = {0};
  gpuimg_encode_opts_t eo = {.quality = 90, .png_level = 6, .threads = 1};
  if (gpuimg_image_alloc(&img, w, h, 3) < 0)
    fail("alloc: %s", gpuimg_error_message());
  for (size_t i = 0; i < (size_t)w * (size_t)h * 3; i++)
    img.data[i] = (uint8_t)(i * 7);
  const gpuimg_codec_t *enc = gpuimg_codec_encoder(GPUIMG_CODEC_AUTO, GPUIMG_FORMAT_JPEG, 6);
  if (enc->encode(&img, GPUIMG_FORMAT_JPEG, &eo, "test.jpg", buf) < 0)
    fail("encode: %s", gpuimg_error_message());
  gpuimg_image_free(&img);
}

/* The route of bytes under plan on a runner (choose 0) that does JPEG on the host. */
static void route_of(const gpuimg_plan_t *plan, const gpuimg_buf_t *buf, int orientation,
                     gpuimg_format_t out, gpuimg_route_t *route)
{
  gpuimg_run_t run = {0};
  gpuimg_route_ask_t ask = {.plan = plan,
                            .bytes = buf->data,
                            .size = buf->size,
                            .from_file = 1,
                            .orientation = orientation,
                            .out = out};
  gpuimg_route_image(&ask, route, &run);
  gpuimg_run_free(&run);
}

/* A JPEG on a host runner: decoded on the host by auto's decoder, the steps on the runner,
 * encoded on the host; no device path whatever the output. */
static void check_host_route(const gpuimg_buf_t *jpeg)
{
  gpuimg_plan_t plan;
  gpuimg_route_t r;
  make_plan(&plan, "blur", "radius", "3");
  route_of(&plan, jpeg, 1, GPUIMG_FORMAT_JPEG, &r);
  const gpuimg_codec_t *want = gpuimg_codec_decoder(GPUIMG_CODEC_AUTO, jpeg->data, jpeg->size);
  if (r.decode != GPUIMG_ON_HOST || r.steps != GPUIMG_STEPS_RUNNER || r.encode != GPUIMG_ON_HOST ||
      r.jpeg != GPUIMG_ON_HOST || r.decoder != want || r.codec != GPUIMG_CODEC_AUTO ||
      r.reduction != 1)
    fail("blur on a host runner: decode %d steps %d encode %d jpeg %d decoder %s reduction %d",
         r.decode, r.steps, r.encode, r.jpeg, r.decoder ? r.decoder->name : "none", r.reduction);
}

/* Shrink-on-load: resize's first step to a 16th of a JPEG's width decodes at 1/8 where the
 * decoder can (libjpeg), by the upright size (EXIF orientation 6 turns 1024x256 into 256x1024:
 * a 4x shrink, decoded at 1/2), and the flow decodes at the route's reduction; --exact-decode
 * keeps the full size. */
static void check_reduction(const gpuimg_buf_t *jpeg)
{
  gpuimg_plan_t plan;
  gpuimg_route_t r, turned, exact;
  make_plan(&plan, "resize", "width", "64");
  route_of(&plan, jpeg, 1, GPUIMG_FORMAT_PNG, &r);
  route_of(&plan, jpeg, 6, GPUIMG_FORMAT_PNG, &turned);
  plan.exact_decode = 1;
  route_of(&plan, jpeg, 1, GPUIMG_FORMAT_PNG, &exact);
  plan.exact_decode = 0;
  int reduces = r.decoder && r.decoder->decode_reduced;
  printf("resize --width 64 of 1024x256: reduction %d (upright 256x1024: %d, exact: %d), by %s\n",
         r.reduction, turned.reduction, exact.reduction, r.decoder ? r.decoder->name : "none");
  if (r.reduction != (reduces ? 8 : 1) || turned.reduction != (reduces ? 2 : 1))
    fail("resize to a 16th: reduction %d, upright %d, by %s", r.reduction, turned.reduction,
         r.decoder->name);
  if (exact.reduction != 1)
    fail("reduction %d with --exact-decode", exact.reduction);

  /* The flow decodes at the route's reduction, once. */
  gpuimg_run_t run = {0};
  gpuimg_image_t result = {0};
  gpuimg_pipeline_t *cpu = gpuimg_pipeline_create(&plan, GPUIMG_DEVICE_CPU);
  gpuimg_flow_t flow = {.plan = &plan, .runner = cpu};
  gpuimg_job_t job = {
      .bytes = jpeg->data, .size = jpeg->size, .what = "test.jpg", .result = &result};
  if (!cpu || gpuimg_flow_run(&flow, &job, &run) < 0)
    fail("flow: %s", gpuimg_error_message());
  else if ((run.reduction > 1 ? run.reduction : 1) != r.reduction || result.width != 64 ||
           result.height != 16)
    fail("flow: decoded at 1/%d (route: 1/%d), result %dx%d", run.reduction, r.reduction,
         result.width, result.height);
  gpuimg_image_free(&result);
  gpuimg_run_free(&run);
  gpuimg_pipeline_destroy(cpu);
}

/* A one-image run's steps: as --backend cpu asks (never the cost model), else in a build
 * without CUDA as asked too; under auto with CUDA in the build, the cost model's choice with
 * its reason recorded. */
static void check_choice(const gpuimg_buf_t *jpeg)
{
  gpuimg_plan_t plan;
  gpuimg_route_t r;
  gpuimg_run_t run = {0};
  make_plan(&plan, "blur", "radius", "3");
  plan.backend = GPUIMG_BACKEND_CPU;
  gpuimg_route_ask_t ask = {.plan = &plan,
                            .bytes = jpeg->data,
                            .size = jpeg->size,
                            .from_file = 1,
                            .orientation = 1,
                            .out = GPUIMG_FORMAT_PNG,
                            .choose = 1};
  gpuimg_route_image(&ask, &r, &run);
  if (r.steps != GPUIMG_STEPS_ASKED || run.has_choice)
    fail("--backend cpu: steps %d, cost model asked %d", r.steps, run.has_choice);
  plan.backend = GPUIMG_BACKEND_AUTO;
  gpuimg_route_image(&ask, &r, &run);
  if (!gpuimg_pipeline_have_cuda()
          ? r.steps != GPUIMG_STEPS_ASKED || run.has_choice
          : !run.has_choice || !run.choice_reason ||
                (r.steps != GPUIMG_STEPS_CPU) != (run.predicted_cpu_ms > run.predicted_cuda_ms))
    fail("--backend auto: steps %d, cost model asked %d (cpu %g ms, cuda %g ms)", r.steps,
         run.has_choice, run.predicted_cpu_ms, run.predicted_cuda_ms);
  gpuimg_run_free(&run);
}

/* A batch item's path: the same for a name every time, under the shares. */
static void check_paths(void)
{
  const char *names[] = {"a.jpg", "b.jpg", "photos/0001.jpg", "x"};
  int device = 0;
  for (int i = 0; i < 4; i++) {
    const char *n = names[i];
    if (gpuimg_route_path(n, 0, 0) != GPUIMG_PATH_WORKER ||
        gpuimg_route_path(n, 1, 0) != GPUIMG_PATH_DEVICE ||
        gpuimg_route_path(n, 0, 1) != GPUIMG_PATH_HOST_DECODE ||
        gpuimg_route_path(n, 0.5, 0) != gpuimg_route_path(n, 0.5, 0))
      fail("path of %s", n);
    device += gpuimg_route_path(n, 0.5, 0) == GPUIMG_PATH_DEVICE;
  }
  printf("paths at a share of 0.5: %d of 4 to the device\n", device);
  gpuimg_plan_t plan;
  int model;
  make_plan(&plan, "blur", NULL, NULL);
  if (gpuimg_route_device_share(&plan, 0, 0, "none.jpg", GPUIMG_FORMAT_JPEG, 1000, &model) != 0)
    fail("a split without a usable device");
}

int main(void)
{
  gpuimg_buf_t jpeg = {0};
  make_jpeg(1024, 256, &jpeg);
  check_host_route(&jpeg);
  check_reduction(&jpeg);
  check_choice(&jpeg);
  check_paths();
  gpuimg_buf_free(&jpeg);
  printf("route: ok\n");
  return 0;
}

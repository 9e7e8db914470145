/* test_explain_image.c: --explain-image's measured mode without a GPU: a launch's block records
 * made up as a device would write them (3,072 blocks of gray --naive on 132 SMs holding 8 each),
 * then the measured waves and blocks per SM, the picture tinted by start, the timeline and the
 * report's blocks_measured; and records that are not usable, which fall back to the model. */
#define TEST_NAME "explain-image"
#include "test_fail.h"

#include <cJSON.h>
#include <string.h>

#include "backend.h"
#include "block_times.h"
#include "codec.h"
#include "explain_image.h"
#include "plan.h"

#define SMS 132
#define PER_SM 8
#define BLOCKS 3072

/* Block i on SM i % SMS, the (i / SMS)-th there: wave rank / PER_SM, slot rank % PER_SM;
 * waves 10 us apart, each block 9 us long. */
static gpuimg_block_time_t *made_up_blocks(void)
{
  gpuimg_block_time_t *b = calloc(BLOCKS, sizeof *b);
  if (!b)
    fail("out of memory");
  for (int i = 0; i < BLOCKS; i++) {
    unsigned rank = (unsigned)(i / SMS);
    b[i].sm = (unsigned)(i % SMS);
    b[i].start_ns = 5000000ULL + (rank / PER_SM) * 10000ULL + (rank % PER_SM) * 100ULL;
    b[i].end_ns = b[i].start_ns + 9000;
  }
  return b;
}

/* A run of gray --naive on a 1024x768 RGB image "on" a device: its stage's launch is the
 * model's for the H100, with blocks recorded. */
static void made_up_run(gpuimg_plan_t *plan, gpuimg_run_t *run)
{
  gpuimg_shape_t shapes[GPUIMG_MAX_STEPS + 1];
  gpuimg_plan_init(plan);
  if (gpuimg_plan_add_step(plan, "gray") < 0 ||
      gpuimg_ops_set(plan->steps[0].op, plan->steps[0].params, "naive", NULL) < 0 ||
      gpuimg_plan_shapes(plan, 1024, 768, 3, shapes) < 0)
    fail("gray --naive: %s", gpuimg_error_message());
  plan->record_blocks = plan->measure = 1;
  memset(run, 0, sizeof *run);
  run->backend = "cuda";
  snprintf(run->device, sizeof run->device, "Test GPU");
  run->input_name = "in.png";
  run->in_w = 1024, run->in_h = 768, run->in_c = 3;
  gpuimg_stage_t *s = gpuimg_run_step_stage(run, plan, 0, shapes, 1, 1);
  gpuimg_launch_env_t env = {.gpu = gpuimg_gpu_find("h100")};
  if (!s || gpuimg_op_predict(plan->steps[0].op, plan->steps[0].params, 1024, 768, 3, &env, NULL,
                              &s->launch) != GPUIMG_LAUNCH_KERNEL)
    fail("the launch");
  s->has_launch = 1;
  s->ms[0] = 0.05;
  s->blocks = made_up_blocks();
  s->nblocks = BLOCKS;
}

static void stats(const gpuimg_stage_t *s)
{
  gpuimg_block_stats_t st;
  if (gpuimg_block_stats(s->blocks, s->nblocks, PER_SM, &st) != 0)
    fail("stats of usable records");
  /* 3,072 = 132 x 23 + 36: 36 SMs ran 24 blocks (3 waves of 8), the others 23. */
  if (st.sms != SMS || st.per_sm_min != 23 || st.per_sm_max != 24 || st.waves != 3 ||
      st.per_sm[0] != 24 || st.per_sm[131] != 23 || st.t0 != 5000000ULL ||
      st.t1 != 5000000ULL + 20000 + 700 + 9000 || st.wave[0] != 0 || st.wave[SMS * 8] != 1 ||
      st.wave[SMS * 16] != 2 || st.slot[SMS * 9] != 1)
    fail("stats: %d SMs, %u..%u a SM, %u waves, span %llu ns", st.sms, st.per_sm_min, st.per_sm_max,
         st.waves, st.t1 - st.t0);
  gpuimg_block_stats_free(&st);
}

/* The tEXt comment of a PNG gpuimg wrote (after its header). */
static const char *comment_of(const gpuimg_buf_t *png)
{
  static char text[4096];
  const uint8_t *p = png->data + 33;
  size_t n = ((size_t)p[0] << 24) | ((size_t)p[1] << 16) | ((size_t)p[2] << 8) | p[3];
  if (memcmp(p + 4, "tEXtComment", 12) != 0 || n - 8 >= sizeof text)
    fail("no comment after the header");
  memcpy(text, p + 16, n - 8);
  text[n - 8] = '\0';
  return text;
}

static void decode(const gpuimg_buf_t *png, gpuimg_image_t *img)
{
  const gpuimg_codec_t *d = gpuimg_codec_decoder(GPUIMG_CODEC_AUTO, png->data, png->size);
  if (d->decode(png->data, png->size, "picture", (uint64_t)1 << 28, img) < 0 || img->channels != 3)
    fail("the picture does not decode: %s", gpuimg_error_message());
}

static void expect_pixel(const gpuimg_image_t *img, int x, int y, int r, int g, int b)
{
  const uint8_t *p = img->data + ((size_t)y * (size_t)img->width + (size_t)x) * 3;
  if (p[0] != r || p[1] != g || p[2] != b)
    fail("pixel (%d, %d) is %d %d %d, not %d %d %d", x, y, p[0], p[1], p[2], r, g, b);
}

static void picture(const gpuimg_plan_t *plan, const gpuimg_run_t *run)
{
  gpuimg_image_t result = {0}, mask = {0}, img = {0};
  gpuimg_buf_t png = {0};
  if (gpuimg_image_alloc(&result, 1024, 768, 1) < 0)
    fail("out of memory");
  memset(result.data, 0, 1024 * 768);
  if (gpuimg_explain_image_png(plan, run, 0, &result, &mask, &png) < 0)
    fail("the picture: %s", gpuimg_error_message());
  const char *text = comment_of(&png);
  if (!strstr(text, "gray naive (step 1 of 1): measured on Test GPU: blocks tinted by their "
                    "start (blue the first, red the last); 3,072 blocks on 132 SMs, 23 to 24 a "
                    "SM, in 3 measured waves; 29.7 us from the first start to the last end"))
    fail("the picture's title: %s", text);
  decode(&png, &img);
  /* Block 0 started first (the ramp's blue), the last block (SM 35's 24th) last (its red):
   * each block's top-left pixel is on its lines, in its tint. */
  expect_pixel(&img, 0, 0, 40, 90, 230);
  expect_pixel(&img, (3071 % 64) * 16, (3071 / 64) * 16, 230, 50, 40);
  gpuimg_image_free(&img);
  gpuimg_buf_free(&png);
  /* The timeline: a row per SM, its legend's numbers. */
  if (gpuimg_explain_timeline_png(plan, run, 0, &png) != 0)
    fail("the timeline: %s", gpuimg_error_message());
  text = comment_of(&png);
  if (!strstr(text, "3,072 blocks on 132 SMs, 23 to 24 a SM, 8 at once a SM: 3 measured waves"))
    fail("the timeline's words: %s", text);
  decode(&png, &img);
  if (img.width != 72 + 1120 + 24)
    fail("the timeline is %d wide", img.width);
  /* SM 0's first block, wave 1 (blue), from x = 72 in its first lane of rows 8..14. */
  expect_pixel(&img, 73, 9, 40, 90, 230);
  gpuimg_image_free(&img);
  gpuimg_buf_free(&png);
  gpuimg_image_free(&result);
}

static void report(const gpuimg_plan_t *plan, const gpuimg_run_t *run)
{
  char *json = gpuimg_report_json(plan, run);
  cJSON *r = json ? cJSON_Parse(json) : NULL;
  cJSON *st = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "stages"), 0);
  cJSON *m = cJSON_GetObjectItem(st, "blocks_measured");
  cJSON *per = cJSON_GetObjectItem(m, "blocks_per_sm");
  if (!m || cJSON_GetObjectItem(m, "waves")->valuedouble != 3 ||
      cJSON_GetObjectItem(m, "sms")->valuedouble != SMS || cJSON_GetArraySize(per) != SMS ||
      cJSON_GetArrayItem(per, 0)->valuedouble != 24 ||
      cJSON_GetArrayItem(per, 131)->valuedouble != 23 ||
      cJSON_GetObjectItem(m, "span_us")->valuedouble != 29.7)
    fail("the report's blocks_measured: %s", json ? json : "none");
  cJSON_Delete(r);
  free(json);
}

/* A block that never wrote its times: the picture is the model's, no timeline. */
static void unusable(const gpuimg_plan_t *plan, gpuimg_run_t *run)
{
  gpuimg_image_t result = {0}, mask = {0};
  gpuimg_buf_t png = {0};
  run->stages[0].blocks[7].start_ns = 0;
  if (gpuimg_image_alloc(&result, 1024, 768, 1) < 0)
    fail("out of memory");
  memset(result.data, 0, 1024 * 768);
  if (gpuimg_explain_image_png(plan, run, 0, &result, &mask, &png) < 0)
    fail("the picture: %s", gpuimg_error_message());
  if (!strstr(comment_of(&png), "waves predicted for Test GPU (this device)"))
    fail("unusable records: %s", comment_of(&png));
  gpuimg_buf_free(&png);
  if (gpuimg_explain_timeline_png(plan, run, 0, &png) != 1 || png.size)
    fail("a timeline of unusable records");
  gpuimg_image_free(&result);
}

int main(void)
{
  gpuimg_plan_t plan;
  gpuimg_run_t run;
  made_up_run(&plan, &run);
  stats(&run.stages[0]);
  picture(&plan, &run);
  report(&plan, &run);
  unusable(&plan, &run);
  gpuimg_run_free(&run);
  return 0;
}

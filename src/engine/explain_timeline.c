/* explain_timeline.c: --explain-image's second picture of a launch the device recorded: one row
 * per SM, one bar per block from its start to its end, coloured by its measured wave. */
#include "block_times.h"
#include "canvas.h"
#include "explain_image.h"

#include <stdlib.h>
#include <string.h>

static const gpuimg_rgb_t INK = {232, 232, 232}, PAPER = {22, 22, 28}, GRID = {60, 60, 68};

#define PLOT_W 1120 /* px of the time axis */
#define LEFT 72     /* room for the SMs' labels */
#define RIGHT 24
#define PLOT_H 960 /* px the SMs' rows share at most */
#define TICKS 5

/* The rows: an SM's height, its blocks' lanes (one per block it holds at once) and their
 * height. */
typedef struct {
  int row_h, lanes, lane_h;
  double x_per_ns;
  const gpuimg_block_stats_t *s;
} layout_t;

static void lay_out(layout_t *lo, const gpuimg_block_stats_t *s, int per_sm)
{
  lo->s = s;
  lo->row_h = PLOT_H / s->sms;
  lo->row_h = lo->row_h < 3 ? 3 : lo->row_h > 24 ? 24 : lo->row_h;
  lo->lanes = per_sm > 0 ? per_sm : 1;
  lo->lane_h = (lo->row_h - 1) / lo->lanes;
  if (lo->lane_h < 1) /* too many lanes for the row: the blocks overlap in one */
    lo->lanes = 1, lo->lane_h = lo->row_h - 1;
  unsigned long long span = s->t1 > s->t0 ? s->t1 - s->t0 : 1;
  lo->x_per_ns = (double)PLOT_W / (double)span;
}

/* Each block's bar in its SM's row, in the lane of its slot on the SM. */
static void draw_bars(gpuimg_image_t *c, const layout_t *lo, const gpuimg_block_time_t *b,
                      uint64_t n, int top)
{
  const gpuimg_block_stats_t *s = lo->s;
  for (int sm = 0; sm < s->sms; sm++)
    if (sm % 2 == 0)
      gpuimg_canvas_fill(c, LEFT, top + sm * lo->row_h, PLOT_W, lo->row_h, GRID);
  for (uint64_t i = 0; i < n; i++) {
    int x0 = LEFT + (int)((double)(b[i].start_ns - s->t0) * lo->x_per_ns);
    int x1 = LEFT + (int)((double)(b[i].end_ns - s->t0) * lo->x_per_ns);
    int lane = (int)(s->slot[i] % (unsigned)lo->lanes);
    gpuimg_rgb_t colour =
        gpuimg_canvas_ramp(s->waves > 1 ? (double)s->wave[i] / (double)(s->waves - 1) : 0.0);
    gpuimg_canvas_fill(c, x0, top + (int)b[i].sm * lo->row_h + lane * lo->lane_h,
                       x1 > x0 ? x1 - x0 : 1, lo->lane_h, colour);
  }
}

/* The SMs' labels (every so many rows) and the time axis' ticks under the rows. */
static void draw_axes(gpuimg_image_t *c, const layout_t *lo, int top, int ts)
{
  char label[32];
  int every = (GPUIMG_FONT_H * ts + lo->row_h - 1) / lo->row_h;
  for (int sm = 0; sm < lo->s->sms; sm += every) {
    int n = snprintf(label, sizeof label, "SM %d", sm);
    gpuimg_canvas_text(c, 4, top + sm * lo->row_h, label, n, ts, INK);
  }
  int bottom = top + lo->s->sms * lo->row_h;
  double span_us = (double)(lo->s->t1 - lo->s->t0) / 1000.0;
  for (int k = 0; k <= TICKS; k++) {
    int x = LEFT + PLOT_W * k / TICKS;
    gpuimg_canvas_fill(c, x, bottom, 1, 4 * ts, INK);
    int n = snprintf(label, sizeof label, "%.1f us", span_us * k / TICKS);
    int w = n * GPUIMG_FONT_W * ts;
    gpuimg_canvas_text(c,
                       k == TICKS ? x - w
                       : k        ? x - w / 2
                                  : x,
                       bottom + 5 * ts, label, n, ts, INK);
  }
}

/* The words under the chart: what it shows, the measured numbers, the waves' colours. */
static void words(char *text, size_t size, const gpuimg_plan_t *plan, const gpuimg_run_t *run,
                  const gpuimg_stage_t *st)
{
  const gpuimg_step_t *step = &plan->steps[st->step];
  const char *variant = gpuimg_op_variant_name(step->op, step->params);
  snprintf(text, size,
           "%s%s%s (step %d of %d), %s on %s: one row per SM (SM 0 at the top), one bar per block "
           "from its start to its end, in the lane of its place among the blocks its SM holds at "
           "once; colour by measured wave (blue the first, red the last)",
           st->name, variant[0] ? " " : "", variant, st->step + 1, plan->nsteps, st->launch.kernel,
           run->device);
}

static void numbers(char *text, size_t size, const gpuimg_stage_t *st,
                    const gpuimg_block_stats_t *s)
{
  char blocks[32];
  snprintf(text, size,
           "%s blocks on %d SMs, %u to %u a SM, %d at once a SM: %u measured waves; the last "
           "block started %.1f us and the launch ended %.1f us after the first block started",
           gpuimg_grouped(st->nblocks, blocks, sizeof blocks), s->sms, s->per_sm_min, s->per_sm_max,
           st->launch.active_blocks_per_sm, s->waves, (double)(s->last_start - s->t0) / 1000.0,
           (double)(s->t1 - s->t0) / 1000.0);
}

/* The picture of s's blocks with what and measured as legend, into png. */
static int draw(const gpuimg_stage_t *st, const gpuimg_block_stats_t *s, const char *what,
                const char *measured, gpuimg_buf_t *png)
{
  const int width = LEFT + PLOT_W + RIGHT, ts = 2, m = 8, cols = (width - 2 * m) / (6 * ts);
  layout_t lo;
  lay_out(&lo, s, st->launch.active_blocks_per_sm);
  int top = m, legend = top + s->sms * lo.row_h + 9 * ts + 2 * m;
  int height = gpuimg_canvas_text_wrapped(NULL, m, legend, cols, what, ts, INK);
  height = gpuimg_canvas_text_wrapped(NULL, m, height + 2 * ts, cols, measured, ts, INK) + m;
  gpuimg_image_t pic = {0};
  if (gpuimg_image_alloc(&pic, width, height, 3) < 0)
    return -1;
  gpuimg_canvas_fill(&pic, 0, 0, width, height, PAPER);
  draw_bars(&pic, &lo, st->blocks, st->nblocks, top);
  draw_axes(&pic, &lo, top, ts);
  int y = gpuimg_canvas_text_wrapped(&pic, m, legend, cols, what, ts, INK);
  gpuimg_canvas_text_wrapped(&pic, m, y + 2 * ts, cols, measured, ts, INK);
  size_t n = strlen(what) + strlen(measured) + 2;
  char *comment = malloc(n);
  int rc = -1;
  if (comment) {
    snprintf(comment, n, "%s\n%s", what, measured);
    rc = gpuimg_canvas_png(&pic, comment, png);
  } else {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
  }
  free(comment);
  gpuimg_image_free(&pic);
  return rc;
}

int gpuimg_explain_timeline_png(const gpuimg_plan_t *plan, const gpuimg_run_t *run, int step,
                                gpuimg_buf_t *png)
{
  const gpuimg_stage_t *st = NULL;
  for (int i = 0; i < run->nstages && !st; i++)
    if (run->stages[i].step == step && run->stages[i].blocks)
      st = &run->stages[i];
  if (!st)
    return 1;
  gpuimg_block_stats_t s;
  int rc = gpuimg_block_stats(st->blocks, st->nblocks, st->launch.active_blocks_per_sm, &s);
  if (rc != 0)
    return rc;
  char what[1024], measured[512];
  words(what, sizeof what, plan, run, st);
  numbers(measured, sizeof measured, st, &s);
  rc = draw(st, &s, what, measured, png);
  gpuimg_block_stats_free(&s);
  return rc;
}

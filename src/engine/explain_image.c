/* explain_image.c: --explain-image: a step's kernel launch drawn over the run's output, its
 * blocks tinted by wave, divergent warps outlined, idle lanes hatched, and a legend. */
#define _XOPEN_SOURCE 700
#include "explain_image.h"

#include "block_times.h"
#include "canvas.h"

#include <stdlib.h>
#include <string.h>

static const gpuimg_rgb_t INK = {232, 232, 232}, PAPER = {22, 22, 28}, OUTSIDE = {70, 70, 70},
                          HATCH = {250, 250, 250}, DIVERGENT = {255, 0, 255};
/* The part of a block's tint over its pixels, in 256ths. */
#define TINT_ALPHA 110
/* Block lines are drawn where blocks are at least this many picture pixels apart. */
#define MIN_LINE_GAP 4

/* How a launch covers the picture. */
typedef struct {
  const gpuimg_launch_t *l;
  int tiled;     /* the blocks are bw x bh tiles of the w x h image: drawn */
  int w, h;      /* the image the grid covers (the step's output) */
  int bw, bh;    /* block */
  int gx, gy;    /* grid */
  int f, u;      /* a picture pixel is f / u image pixels a side */
  int pw, ph;    /* the image part of the picture */
  int wpb, idle; /* warps a block, idle lanes in its last one */
  long long resident;
  long long waves;    /* tints: waves in launch order */
  uint8_t *divergent; /* one byte per warp (launch order), NULL: none counted */
  /* A launch the device recorded: its blocks and their stats (tints by measured start);
   * NULL: the model's waves. */
  const gpuimg_block_time_t *times;
  const gpuimg_block_stats_t *stats;
} geom_t;

char *gpuimg_explain_image_name(const char *path, int step, int nsteps, const char *kind)
{
  const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
  size_t stem = dot && dot > (slash ? slash : path) ? (size_t)(dot - path) : strlen(path);
  char number[16] = "";
  if (nsteps > 1)
    snprintf(number, sizeof number, "-%d", step + 1);
  size_t n = strlen(path) + sizeof number + strlen(kind) + 2;
  char *name = malloc(n);
  if (!name) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, path, "out of memory");
    return NULL;
  }
  snprintf(name, n, "%.*s%s%s%s%s", (int)stem, path, number, kind[0] ? "-" : "", kind, path + stem);
  return name;
}

static gpuimg_rgb_t wave_colour(const geom_t *g, long long wave)
{
  return gpuimg_canvas_ramp(g->waves > 1 ? (double)wave / (double)(g->waves - 1) : 0.0);
}

/* A block's tint: its measured start from the first (blue) to the last (red), or its wave. */
static gpuimg_rgb_t block_colour(const geom_t *g, long long block)
{
  if (!g->times)
    return wave_colour(g, g->resident > 0 ? block / g->resident : 0);
  unsigned long long span = g->stats->last_start - g->stats->t0;
  return gpuimg_canvas_ramp(span ? (double)(g->times[block].start_ns - g->stats->t0) / (double)span
                                 : 0.0);
}

/* The step's stage in run; NULL when the run has none (it failed before). */
static const gpuimg_stage_t *step_stage(const gpuimg_run_t *run, int step)
{
  for (int i = 0; i < run->nstages; i++)
    if (run->stages[i].step == step && strcmp(run->stages[i].name, "upload-mask") != 0)
      return &run->stages[i];
  return NULL;
}

/* The launch to draw into *st (a copy of the step's stage) and *plan: the model's for the
 * plan's --device, else the launch the device ran (its blocks recorded, or its waves the
 * model's), else the model's for GPUIMG_EXPLAIN_IMAGE_GPU (computed here). NULL when the step
 * has no kernel to draw. */
static const gpuimg_launch_t *launch_of(gpuimg_plan_t *plan, const gpuimg_run_t *run, int step,
                                        const gpuimg_image_t *mask, gpuimg_stage_t *st)
{
  if (!plan->model_gpu && !st->has_launch) {
    gpuimg_shape_t shapes[GPUIMG_MAX_STEPS + 1];
    plan->model_gpu = gpuimg_gpu_find(GPUIMG_EXPLAIN_IMAGE_GPU);
    if (gpuimg_plan_shapes(plan, run->in_w, run->in_h, run->in_c, shapes) < 0)
      return NULL;
    gpuimg_run_model(plan, plan->model_gpu, step, shapes, mask, st);
  }
  if (plan->model_gpu)
    return st->has_model && st->model_rc == GPUIMG_LAUNCH_KERNEL ? &st->model : NULL;
  return st->has_launch && st->launch.kernel ? &st->launch : NULL;
}

/* The launch's geometry on a w x h image: tiled when its grid is one block per bw x bh tile. */
static void geometry(geom_t *g, const gpuimg_launch_t *l, int w, int h)
{
  memset(g, 0, sizeof *g);
  g->l = l, g->w = w, g->h = h, g->f = g->u = 1;
  int ext_w = w, ext_h = h;
  if (l && !l->grid_is_resident && l->grid[2] == 1 && l->block[2] == 1) {
    g->bw = (int)l->block[0], g->bh = (int)l->block[1];
    g->gx = (int)l->grid[0], g->gy = (int)l->grid[1];
    g->tiled = g->gx == (w + g->bw - 1) / g->bw && g->gy == (h + g->bh - 1) / g->bh;
  }
  if (g->tiled) {
    int threads = g->bw * g->bh;
    ext_w = g->gx * g->bw, ext_h = g->gy * g->bh;
    g->wpb = gpuimg_model_warps(threads);
    g->idle = gpuimg_model_idle_lanes(threads);
    g->resident = l->has_occupancy ? l->resident_blocks : 0;
    long long blocks = (long long)g->gx * g->gy;
    g->waves = g->resident > 0 ? (blocks + g->resident - 1) / g->resident : 1;
  }
  int side = ext_w > ext_h ? ext_w : ext_h;
  if (side > GPUIMG_EXPLAIN_IMAGE_SIDE)
    g->f = (side + GPUIMG_EXPLAIN_IMAGE_SIDE - 1) / GPUIMG_EXPLAIN_IMAGE_SIDE;
  else if (side < 256)
    g->u = 256 / side; /* a small image drawn larger, each pixel a u x u square */
  g->pw = (int)(((long long)ext_w * g->u + g->f - 1) / g->f);
  g->ph = (int)(((long long)ext_h * g->u + g->f - 1) / g->f);
}

/* The image pixel under picture pixel p (one axis). */
static int src_of(const geom_t *g, int p)
{
  return (int)((long long)p * g->f / g->u);
}

/* The warp (its index in launch order) that image pixel (x, y) belongs to; -1 outside the
 * grid. */
static long long warp_at(const geom_t *g, int x, int y)
{
  if (x < 0 || y < 0 || x >= g->gx * g->bw || y >= g->gy * g->bh)
    return -1;
  long long block = (long long)(y / g->bh) * g->gx + x / g->bw;
  int t = x % g->bw + (y % g->bh) * g->bw;
  return block * g->wpb + t / 32;
}

/* The mean colour of result over the f x f image pixels from (x, y), the result scaled to the
 * w x h image the grid covers (nearest pixel) and made RGB. */
static gpuimg_rgb_t background(const geom_t *g, const gpuimg_image_t *r, int x, int y)
{
  unsigned sum[3] = {0, 0, 0}, n = 0;
  for (int j = y; j < y + g->f && j < g->h; j++)
    for (int i = x; i < x + g->f && i < g->w; i++) {
      size_t rx = (size_t)i * (size_t)r->width / (size_t)g->w;
      size_t ry = (size_t)j * (size_t)r->height / (size_t)g->h;
      const uint8_t *p = r->data + (ry * (size_t)r->width + rx) * (size_t)r->channels;
      int colour = r->channels >= 3;
      for (int k = 0; k < 3; k++)
        sum[k] += p[colour ? k : 0];
      n++;
    }
  if (!n)
    return OUTSIDE;
  return (gpuimg_rgb_t){(uint8_t)(sum[0] / n), (uint8_t)(sum[1] / n), (uint8_t)(sum[2] / n)};
}

/* Whether picture column (or row) p starts a block: its image pixels hold a multiple of the
 * block's side. */
static int starts_block(const geom_t *g, int p, int side)
{
  return p == 0 || src_of(g, p) / side != src_of(g, p - 1) / side;
}

/* Whether picture pixel (px, py)'s warp differs from a neighbour's (the warp's outline). */
static int warp_edge(const geom_t *g, int px, int py, long long warp)
{
  static const int d[4][2] = {{-1, 0}, {1, 0}, {0, -1}, {0, 1}};
  for (int k = 0; k < 4; k++) {
    int qx = px + d[k][0], qy = py + d[k][1];
    if (qx < 0 || qy < 0 || qx >= g->pw || qy >= g->ph ||
        warp_at(g, src_of(g, qx), src_of(g, qy)) != warp)
      return 1;
  }
  return 0;
}

/* One picture pixel of a tiled launch: the tint of its block's wave, hatching where lanes are
 * idle (outside the image, or the last warp of a block whose threads are not whole warps),
 * the block's lines, a divergent warp's outline. */
static void draw_tiled_pixel(gpuimg_image_t *c, const geom_t *g, int px, int py, int lines_x,
                             int lines_y)
{
  int x = src_of(g, px), y = src_of(g, py);
  long long block = (long long)(y / g->bh) * g->gx + x / g->bw;
  gpuimg_rgb_t wave = block_colour(g, block);
  long long warp = warp_at(g, x, y);
  int idle = x >= g->w || y >= g->h || (g->idle && warp % g->wpb == g->wpb - 1);
  gpuimg_canvas_blend(c, px, py, wave, TINT_ALPHA);
  if (idle && gpuimg_canvas_on_hatch(px, py))
    gpuimg_canvas_put(c, px, py, HATCH);
  if ((lines_x && starts_block(g, px, g->bw)) || (lines_y && starts_block(g, py, g->bh)))
    gpuimg_canvas_put(c, px, py, wave);
  if (g->divergent && g->divergent[warp] && warp_edge(g, px, py, warp))
    gpuimg_canvas_put(c, px, py, DIVERGENT);
}

/* The image part: the result under the launch. */
static void draw_image(gpuimg_image_t *c, const geom_t *g, const gpuimg_image_t *result)
{
  int lines_x = g->tiled && (long long)g->bw * g->u >= (long long)MIN_LINE_GAP * g->f;
  int lines_y = g->tiled && (long long)g->bh * g->u >= (long long)MIN_LINE_GAP * g->f;
  for (int py = 0; py < g->ph; py++)
    for (int px = 0; px < g->pw; px++) {
      int x = src_of(g, px), y = src_of(g, py);
      gpuimg_canvas_put(c, px, py, x < g->w && y < g->h ? background(g, result, x, y) : OUTSIDE);
      if (g->tiled)
        draw_tiled_pixel(c, g, px, py, lines_x, lines_y);
    }
}

/* The warps of the drawn launch its kernel's branch splits, when the launch counts them. */
static int divergence_map(geom_t *g, const gpuimg_step_t *step, const gpuimg_stage_t *st,
                          const gpuimg_image_t *mask)
{
  const gpuimg_launch_t *l = g->l;
  if (!g->tiled || !l->divergence_kernel || !step->op->divergence ||
      (step->op->needs_mask && !mask->data))
    return 0;
  g->divergent = calloc((size_t)g->gx * (size_t)g->gy * (size_t)g->wpb, 1);
  if (!g->divergent) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return -1;
  }
  uint64_t warps, divergent;
  step->op->divergence(step->params, mask, st->in_w, st->in_h, g->bw, g->bh, &warps, &divergent,
                       g->divergent);
  return 0;
}

/* The blocks the device recorded for a drawn launch, when there is one record a block and
 * they are usable: into g (times, stats); 0, or -1 with the error set. */
static int measured(geom_t *g, const gpuimg_stage_t *st, gpuimg_block_stats_t *stats)
{
  if (!st->blocks || st->nblocks != (uint64_t)g->gx * (uint64_t)g->gy)
    return 0;
  int rc = gpuimg_block_stats(st->blocks, st->nblocks, g->l->active_blocks_per_sm, stats);
  if (rc == 0)
    g->times = st->blocks, g->stats = stats;
  return rc < 0 ? -1 : 0;
}

/* The legend's words: a title, the step's --explain line, the scale. */
typedef struct {
  char title[1024];
  char *line; /* malloc'd */
  char scale[160];
} legend_t;

/* The step's --explain line (without its newline), malloc'd; NULL with the error set. */
static char *explain_line(const gpuimg_plan_t *plan, const gpuimg_run_t *run,
                          const gpuimg_stage_t *st)
{
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  if (!f) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return NULL;
  }
  gpuimg_explain_stage(f, plan, run, st);
  if (fclose(f) != 0 || !text) {
    free(text);
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return NULL;
  }
  if (size && text[size - 1] == '\n')
    text[size - 1] = '\0';
  return text;
}

/* The title of a launch the device recorded: its blocks per SM and measured waves. */
static void measured_title(legend_t *lg, const gpuimg_run_t *run, const geom_t *g, const char *head)
{
  const gpuimg_block_stats_t *s = g->stats;
  char blocks[32];
  snprintf(
      lg->title, sizeof lg->title,
      "%s: measured on %s: blocks tinted by their start (blue the first, red the last); %s "
      "blocks on %d SMs, %u to %u a SM, in %u measured waves; %.1f us from the first start "
      "to the last end",
      head, run->device,
      gpuimg_grouped((unsigned long long)g->gx * (unsigned long long)g->gy, blocks, sizeof blocks),
      s->sms, s->per_sm_min, s->per_sm_max, s->waves, (double)(s->t1 - s->t0) / 1000.0);
}

/* The title: the step, where its launch comes from and what the tints mean. */
static void title(legend_t *lg, const gpuimg_plan_t *plan, const gpuimg_run_t *run,
                  const gpuimg_stage_t *st, const geom_t *g)
{
  const gpuimg_step_t *step = &plan->steps[st->step];
  const char *variant = gpuimg_op_variant_name(step->op, step->params);
  char head[96], res[32];
  snprintf(head, sizeof head, "%s%s%s (step %d of %d)", st->name, variant[0] ? " " : "", variant,
           st->step + 1, plan->nsteps);
  if (!g->l)
    snprintf(lg->title, sizeof lg->title, "%s: no kernel launch to draw", head);
  else if (!g->tiled)
    snprintf(lg->title, sizeof lg->title,
             "%s: %s's blocks are not tiles of the image (a 1-D, grid-stride or strip launch): "
             "not drawn",
             head, g->l->kernel);
  else if (g->times)
    measured_title(lg, run, g, head);
  else
    snprintf(lg->title, sizeof lg->title,
             "%s: waves predicted for %s (%s): blocks in launch order, %s resident a wave", head,
             plan->model_gpu ? plan->model_gpu->name : run->device,
             plan->model_gpu ? plan->model_gpu->product : "this device",
             gpuimg_grouped((unsigned long long)g->resident, res, sizeof res));
  if (g->f > 1)
    snprintf(lg->scale, sizeof lg->scale,
             "downsampled: a picture pixel is the mean of %dx%d image pixels%s", g->f, g->f,
             g->tiled && ((long long)g->bw < (long long)MIN_LINE_GAP * g->f ||
                          (long long)g->bh < (long long)MIN_LINE_GAP * g->f)
                 ? "; block lines left out where blocks are under 4 picture pixels"
                 : "");
  else if (g->u > 1)
    snprintf(lg->scale, sizeof lg->scale, "enlarged: an image pixel is %dx%d picture pixels", g->u,
             g->u);
  else
    snprintf(lg->scale, sizeof lg->scale, "drawn 1:1");
}

/* One key item at *x, *y (the next row when it does not fit width): a swatch and its label. */
static void key_item(gpuimg_image_t *c, int *x, int *y, int width, int ts, const char *label,
                     gpuimg_rgb_t colour, int hatched)
{
  int sw = 7 * ts, w = sw + ts * GPUIMG_FONT_W * (int)(strlen(label) + 2);
  if (*x + w > width && *x > 4 * ts)
    *x = 4 * ts, *y += GPUIMG_FONT_H * ts;
  if (c) {
    gpuimg_canvas_fill(c, *x, *y, sw, sw, hatched ? OUTSIDE : colour);
    if (hatched)
      gpuimg_canvas_hatch(c, *x, *y, sw, sw, HATCH);
    gpuimg_canvas_text(c, *x + sw + ts * 3, *y, label, (int)strlen(label), ts, INK);
  }
  *x += w;
}

/* The key of a tiled launch: its waves' tints (the first, a middle and the last where there
 * are more than four), divergent warps, idle lanes; returns the y below it. */
static int key(gpuimg_image_t *c, const geom_t *g, int y, int width, int ts)
{
  int x = 4 * ts;
  char label[48];
  if (g->times) {
    key_item(c, &x, &y, width, ts, "first start ..", gpuimg_canvas_ramp(0), 0);
    key_item(c, &x, &y, width, ts, "last start", gpuimg_canvas_ramp(1), 0);
  }
  for (long long w = 0; !g->times && w < g->waves; w++) {
    if (g->waves > 4 && w != 0 && w != g->waves / 2 && w != g->waves - 1)
      continue;
    snprintf(label, sizeof label, "wave %lld%s", w + 1,
             g->waves > 4 && w != g->waves - 1 ? " .." : "");
    key_item(c, &x, &y, width, ts, label, wave_colour(g, w), 0);
  }
  if (g->divergent)
    key_item(c, &x, &y, width, ts, "divergent warp", DIVERGENT, 0);
  if (g->idle || g->w % g->bw || g->h % g->bh)
    key_item(c, &x, &y, width, ts, "idle lanes", HATCH, 1);
  return y + GPUIMG_FONT_H * ts;
}

/* The legend under the image from row y (c NULL: measures only); returns its bottom. */
static int legend(gpuimg_image_t *c, const geom_t *g, const legend_t *lg, int y, int width)
{
  int ts = width >= 1536 ? 3 : width >= 900 ? 2 : 1, m = 4 * ts;
  int cols = (width - 2 * m) / (GPUIMG_FONT_W * ts);
  if (c)
    gpuimg_canvas_fill(c, 0, y, c->width, c->height - y, PAPER);
  y = gpuimg_canvas_text_wrapped(c, m, y + m, cols, lg->title, ts, INK);
  y = gpuimg_canvas_text_wrapped(c, m, y + 2 * ts, cols, lg->line, ts, INK);
  if (g->tiled)
    y = key(c, g, y + 2 * ts, width, ts);
  y = gpuimg_canvas_text_wrapped(c, m, y + 2 * ts, cols, lg->scale, ts, INK);
  return y + m;
}

/* The picture as PNG into png, the legend's words in its comment. */
static int encode(const gpuimg_image_t *pic, const legend_t *lg, gpuimg_buf_t *png)
{
  size_t n = strlen(lg->title) + strlen(lg->line) + strlen(lg->scale) + 3;
  char *text = malloc(n);
  if (!text) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return -1;
  }
  snprintf(text, n, "%s\n%s\n%s", lg->title, lg->line, lg->scale);
  int rc = gpuimg_canvas_png(pic, text, png);
  free(text);
  return rc;
}

int gpuimg_explain_image_png(const gpuimg_plan_t *plan, const gpuimg_run_t *run, int step,
                             const gpuimg_image_t *result, const gpuimg_image_t *mask,
                             gpuimg_buf_t *png)
{
  const gpuimg_stage_t *found = step_stage(run, step);
  if (!found) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "--explain-image", "the run has no step %d", step + 1);
    return -1;
  }
  gpuimg_plan_t pl = *plan;
  gpuimg_stage_t st = *found;
  geom_t g;
  gpuimg_block_stats_t stats = {0};
  legend_t lg = {.line = NULL};
  gpuimg_image_t pic = {0};
  int rc = -1;
  geometry(&g, launch_of(&pl, run, step, mask, &st), st.out_w, st.out_h);
  if (g.tiled && !pl.model_gpu && measured(&g, &st, &stats) < 0)
    goto done;
  if ((g.tiled && st.in_w == g.w && st.in_h == g.h &&
       divergence_map(&g, &pl.steps[step], &st, mask) < 0) ||
      !(lg.line = explain_line(&pl, run, &st)))
    goto done;
  title(&lg, &pl, run, &st, &g);
  int width = g.pw > 480 ? g.pw : 480;
  if (gpuimg_image_alloc(&pic, width, legend(NULL, &g, &lg, g.ph, width), 3) < 0)
    goto done;
  gpuimg_canvas_fill(&pic, 0, 0, width, g.ph, PAPER);
  draw_image(&pic, &g, result);
  legend(&pic, &g, &lg, g.ph, width);
  rc = encode(&pic, &lg, png);
done:
  gpuimg_image_free(&pic);
  gpuimg_block_stats_free(&stats);
  free(g.divergent);
  free(lg.line);
  return rc;
}

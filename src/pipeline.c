/* pipeline.c: runs the steps of a pipeline on the CPU or CUDA backend and times every stage. */
#include "run.h"

#include <stdlib.h>
#include <string.h>

gpuimg_stage_t *gpuimg_run_stage(gpuimg_run_t *run, const char *name, int step, int device,
                                 int nms)
{
  if (run->nstages == GPUIMG_MAX_STAGES) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "too many stages");
    return NULL;
  }
  gpuimg_stage_t *s = &run->stages[run->nstages];
  memset(s, 0, sizeof *s);
  s->ms = calloc((size_t)nms, sizeof *s->ms);
  if (!s->ms) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return NULL;
  }
  run->nstages++;
  snprintf(s->name, sizeof s->name, "%s", name);
  s->step = step;
  s->device = device;
  s->nms = nms;
  s->pinned = -1;
  return s;
}

void gpuimg_run_free(gpuimg_run_t *run)
{
  for (int i = 0; i < run->nstages; i++)
    free(run->stages[i].ms);
  run->nstages = 0;
}

/* Bytes an operation must move at least: its input, its output and its mask. */
static uint64_t step_bytes(const gpuimg_step_t *s, int w, int h, int cin)
{
  uint64_t px = (uint64_t)w * (uint64_t)h;
  return px * (uint64_t)cin + px * (uint64_t)s->op->out_channels(cin) +
         (s->op == &gpuimg_op_portrait ? px : 0);
}

static int run_cpu(const gpuimg_cli_t *cli, const gpuimg_image_t *src,
                   const gpuimg_image_t *masks, gpuimg_image_t *dst, gpuimg_run_t *run)
{
  gpuimg_image_t tmp[GPUIMG_MAX_STEPS];
  gpuimg_stage_t *stage[GPUIMG_MAX_STEPS];
  int rc = -1, c = src->channels;

  memset(tmp, 0, sizeof tmp);
  run->backend = "cpu";
  snprintf(run->device, sizeof run->device, "none");
  for (int i = 0; i < cli->nsteps; i++) {
    const gpuimg_step_t *s = &cli->steps[i];
    int out_c = s->op->out_channels(c);
    stage[i] = gpuimg_run_stage(run, s->op->name, i, 0, cli->repeat);
    if (!stage[i] || gpuimg_image_alloc(&tmp[i], src->width, src->height, out_c) < 0)
      goto done;
    stage[i]->bytes = step_bytes(s, src->width, src->height, c);
    c = out_c;
  }
  for (int r = -cli->warmup; r < cli->repeat; r++) { /* r < 0: warm-up, not recorded */
    const gpuimg_image_t *in = src;
    for (int i = 0; i < cli->nsteps; i++) {
      const gpuimg_step_t *s = &cli->steps[i];
      double t0 = gpuimg_now_ms();
      if (s->op->run_cpu(&s->params, in, &masks[i], &tmp[i]) < 0)
        goto done;
      if (r >= 0)
        stage[i]->ms[r] = gpuimg_now_ms() - t0;
      in = &tmp[i];
    }
  }
  *dst = tmp[cli->nsteps - 1];
  memset(&tmp[cli->nsteps - 1], 0, sizeof tmp[0]);
  rc = 0;
done:
  for (int i = 0; i < cli->nsteps; i++)
    gpuimg_image_free(&tmp[i]);
  return rc;
}

#ifdef GPUIMG_HAVE_CUDA
static int run_cuda(gpuimg_cuda_t *ctx, const gpuimg_cli_t *cli, const gpuimg_image_t *src,
                    const gpuimg_image_t *masks, gpuimg_image_t *dst, gpuimg_run_t *run)
{
  int w = src->width, h = src->height, rc = -1;
  size_t in_bytes = gpuimg_image_bytes(w, h, src->channels);
  size_t px = gpuimg_image_bytes(w, h, 1);
  uint8_t *h_in = NULL, *h_out = NULL, *d_buf[2] = {NULL, NULL};
  uint8_t *d_mask[GPUIMG_MAX_STEPS] = {NULL};
  gpuimg_stage_t *stage[GPUIMG_MAX_STEPS], *up, *down;
  int out_c = src->channels;

  run->backend = "cuda";
  snprintf(run->device, sizeof run->device, "%s", gpuimg_cuda_device_name(ctx));
  gpuimg_cuda_device_cc(ctx, &run->cc_major, &run->cc_minor);
  gpuimg_cuda_versions(&run->driver_version, &run->runtime_version);
  if (gpuimg_cuda_set_block(ctx, cli->block_w, cli->block_h) < 0)
    return -1;
  /* What the report and --explain show: divergence counts and the copy bandwidth. */
  int measure = cli->report || cli->explain;
  gpuimg_cuda_set_count_divergence(ctx, measure);
  if (measure && gpuimg_cuda_copy_bandwidth(ctx, (size_t)256 << 20, &run->copy_gbps) < 0)
    return -1;

  /* Channels never grow along a pipeline, so two input-sized buffers serve every step. */
  if (!(h_in = gpuimg_cuda_host_alloc(in_bytes)) || !(d_buf[0] = gpuimg_cuda_dev_alloc(in_bytes)) ||
      !(d_buf[1] = gpuimg_cuda_dev_alloc(in_bytes)))
    goto done;
  memcpy(h_in, src->data, in_bytes);

  for (int i = 0; i < cli->nsteps; i++) {
    if (!masks[i].data)
      continue;
    gpuimg_stage_t *ms = gpuimg_run_stage(run, "upload-mask", i, 1, 1);
    if (!ms || !(d_mask[i] = gpuimg_cuda_dev_alloc(px)) ||
        gpuimg_cuda_upload(ctx, d_mask[i], masks[i].data, px, NULL) < 0)
      goto done;
    ms->bytes = px;
    ms->pinned = 0;
  }
  if (!(up = gpuimg_run_stage(run, "upload", -1, 1, cli->repeat)))
    goto done;
  up->bytes = in_bytes;
  up->pinned = 1;
  {
    int c = src->channels;
    for (int i = 0; i < cli->nsteps; i++) {
      if (!(stage[i] = gpuimg_run_stage(run, cli->steps[i].op->name, i, 1, cli->repeat)))
        goto done;
      stage[i]->bytes = step_bytes(&cli->steps[i], w, h, c);
      stage[i]->has_launch = 1;
      c = cli->steps[i].op->out_channels(c);
    }
    out_c = c;
  }
  size_t out_bytes = gpuimg_image_bytes(w, h, out_c);
  if (!(down = gpuimg_run_stage(run, "download", -1, 1, cli->repeat)) ||
      !(h_out = gpuimg_cuda_host_alloc(out_bytes)))
    goto done;
  down->bytes = out_bytes;
  down->pinned = 1;

  for (int r = -cli->warmup; r < cli->repeat; r++) { /* r < 0: warm-up, not recorded */
    float ms;
    int cur = 0, c = src->channels;
    if (gpuimg_cuda_upload(ctx, d_buf[0], h_in, in_bytes, &ms) < 0)
      goto done;
    if (r >= 0)
      up->ms[r] = ms;
    for (int i = 0; i < cli->nsteps; i++) {
      const gpuimg_step_t *s = &cli->steps[i];
      gpuimg_cuda_set_tile(ctx, s->params.tile);
      if (s->op->run_gpu(ctx, &s->params, d_buf[cur], d_mask[i], d_buf[!cur], w, h, c,
                         &stage[i]->launch) < 0)
        goto done;
      if (r >= 0)
        stage[i]->ms[r] = stage[i]->launch.ms;
      cur = !cur;
      c = s->op->out_channels(c);
    }
    if (gpuimg_cuda_download(ctx, h_out, d_buf[cur], out_bytes, &ms) < 0)
      goto done;
    if (r >= 0)
      down->ms[r] = ms;
  }
  for (int i = 0; i < cli->nsteps; i++) {
    gpuimg_stage_t *st = stage[i];
    const gpuimg_launch_t *l = &st->launch;
    if (!l->has_divergence)
      continue;
    st->has_prediction = 1;
    if (cli->steps[i].op == &gpuimg_op_checkerboard)
      gpuimg_divergence_checkerboard(w, h, cli->steps[i].params.cell, (int)l->block[0],
                                     (int)l->block[1], &st->predicted_warps,
                                     &st->predicted_divergent);
    else
      gpuimg_divergence_mask(&masks[i], (int)l->block[0], (int)l->block[1],
                             &st->predicted_warps, &st->predicted_divergent);
  }
  if (gpuimg_image_alloc(dst, w, h, out_c) < 0)
    goto done;
  memcpy(dst->data, h_out, out_bytes);
  rc = 0;
done:
  for (int i = 0; i < cli->nsteps; i++)
    gpuimg_cuda_dev_free(d_mask[i]);
  gpuimg_cuda_dev_free(d_buf[0]);
  gpuimg_cuda_dev_free(d_buf[1]);
  gpuimg_cuda_host_free(h_in);
  gpuimg_cuda_host_free(h_out);
  return rc;
}
#endif

int gpuimg_pipeline_run(const gpuimg_cli_t *cli, const gpuimg_image_t *src,
                        const gpuimg_image_t *masks, gpuimg_image_t *dst, gpuimg_run_t *run)
{
#ifdef GPUIMG_HAVE_CUDA
  if (cli->backend != GPUIMG_BACKEND_CPU) {
    char reason[256];
    if (gpuimg_cuda_probe(reason, sizeof reason) > 0) {
      gpuimg_cuda_t *ctx = gpuimg_cuda_create(-1);
      if (!ctx)
        return -1;
      int rc = run_cuda(ctx, cli, src, masks, dst, run);
      gpuimg_cuda_destroy(ctx);
      return rc;
    }
    if (cli->backend == GPUIMG_BACKEND_CUDA) {
      gpuimg_error_set(GPUIMG_EXIT_DEVICE, "", "no usable CUDA device: %s", reason);
      return -1;
    }
    if (!cli->quiet)
      fprintf(stderr, "gpuimg: no usable CUDA device (%s); using the CPU backend\n", reason);
  }
#else
  if (cli->backend == GPUIMG_BACKEND_CUDA) {
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, "", "this gpuimg was built without CUDA");
    return -1;
  }
#endif
  return run_cpu(cli, src, masks, dst, run);
}

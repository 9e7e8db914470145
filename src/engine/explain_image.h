/* explain_image.h: --explain-image: each step's kernel launch drawn on the run's output (PNG). */
#ifndef GPUIMG_EXPLAIN_IMAGE_H
#define GPUIMG_EXPLAIN_IMAGE_H

#include "buf.h"
#include "report.h"

/* The GPU a picture predicts for when the run names none (--device) and ran on no device. */
#define GPUIMG_EXPLAIN_IMAGE_GPU "h100"
/* The largest side of a picture's image part: a larger launch is drawn downsampled by a whole
 * factor (each picture pixel the mean of a factor x factor square). */
#define GPUIMG_EXPLAIN_IMAGE_SIDE 2048

/* The file of step's picture (kind "" ) or its timeline (kind "timeline"): path itself for
 * the picture of a one-step plan; else "-K" (K = step + 1, when nsteps > 1) and "-timeline"
 * (a timeline) inserted before path's extension ("x.png" -> "x-2.png", "x-2-timeline.png").
 * malloc'd (the caller frees it); NULL with the error set when out of memory. */
char *gpuimg_explain_image_name(const char *path, int step, int nsteps, const char *kind);

/* Step's picture, as PNG bytes appended to png: result (the run's output, any layout) with
 * the step's launch drawn on it (blocks tinted by their wave, or by their measured start where
 * the stage recorded its blocks, divergent warps outlined, idle lanes hatched) and a legend
 * below with the step's --explain line. mask: the step's mask (data NULL: none), for the
 * divergence of a kernel that branches on it. 0, or -1 with the error set. */
int gpuimg_explain_image_png(const gpuimg_plan_t *plan, const gpuimg_run_t *run, int step,
                             const gpuimg_image_t *result, const gpuimg_image_t *mask,
                             gpuimg_buf_t *png);

/* The timeline of step's launch where the device recorded its blocks (a run of a plan with
 * record_blocks): one row per SM, one bar per block from its start to its end, coloured by
 * its measured wave, and a legend with the blocks per SM and the measured waves, as PNG bytes
 * appended to png. 0; 1 when the step's launch recorded no (usable) blocks, nothing written;
 * -1 with the error set. */
int gpuimg_explain_timeline_png(const gpuimg_plan_t *plan, const gpuimg_run_t *run, int step,
                                gpuimg_buf_t *png);

#endif

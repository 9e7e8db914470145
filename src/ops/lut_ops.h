/* lut_ops.h: what the two-phase histogram operations share (equalize, normalize): their
 * parameters, the --histogram option, the CPU reference and the CUDA launcher around the
 * operation's own table function (kernels/lut.h), and which channels they change. */
#ifndef GPUIMG_LUT_OPS_H
#define GPUIMG_LUT_OPS_H

#include "lut.h"
#include "ops.h"

/* A histogram operation's parameters: the CUDA histogram kernel, normalize's --clip. */
typedef struct {
  gpuimg_params_common_t common;
  int histogram; /* gpuimg_histogram_t */
  int clip;      /* normalize: the percentage of values clipped at each end, 0..49 */
} gpuimg_lut_params_t;

/* The --histogram option, as an entry of an option table. */
#define GPUIMG_LUT_HISTOGRAM_OPTION                                                                \
  {                                                                                                \
    .long_name = "histogram", .kind = GPUIMG_OPTION_CHOICE,                                        \
    .offset = offsetof(gpuimg_lut_params_t, histogram), .choices = gpuimg_histogram_names,         \
    .parse = gpuimg_lut_kernel_chosen, .metavar = "H",                                             \
    .help = "CUDA histogram: shared (default), global or cub (see stats)"                          \
  }

/* A histogram kernel chosen by name makes the run one about CUDA kernels (as --naive does). */
int gpuimg_lut_kernel_chosen(const gpuimg_option_t *o, const char *spelled, const char *arg,
                             void *target);

/* The colour channels of an image of c channels: all but alpha (the last of 2 and 4). */
static inline int gpuimg_lut_colours(int c)
{
  return c == 2 || c == 4 ? c - 1 : c;
}

/* Sets lut (c x 256) to the identity: what alpha's table stays. */
void gpuimg_lut_identity(int c, uint8_t *lut);

/* The CPU reference: src's histograms (gpuimg_stats_cpu()), make's tables, dst mapped. */
int gpuimg_lut_cpu(const gpuimg_image_t *src, gpuimg_image_t *dst, gpuimg_lut_fn *make,
                   const void *params);

/* The fields of a histogram operation's declaration after its name, summary, options,
 * parameters and its run_cpu and run_gpu (which call the two functions above with its own
 * table function). */
#define GPUIMG_LUT_OP_FIELDS .launch = gpuimg_lut_op_launch, .variant_name = gpuimg_lut_variant_name

/* The map's launch (gpuimg_lut_launch()), and the histogram kernel's name as the variant. */
int gpuimg_lut_op_launch(const void *params, int w, int h, int c, const gpuimg_launch_env_t *env,
                         gpuimg_launch_t *l);
const char *gpuimg_lut_variant_name(const void *params);

#endif

/* rotate.c: the rotate operation (ImageMagick's -rotate by a right angle, clockwise): EXIF
 * orientations 6, 3 and 8, through what the orientation operations share (orient_ops.c). */
#include "orient_ops.h"

static const char *const rotate_angles[] = {"90", "180", "270", NULL};
/* The EXIF orientation and the degrees of each of rotate_angles. */
static const int rotate_orientation[] = {6, 3, 8}, rotate_degrees[] = {90, 180, 270};

/* --angle's value is stored as its index; the orientation follows from it. */
static int rotate_angle_set(const gpuimg_option_t *o, const char *spelled, const char *arg,
                            void *target)
{
  gpuimg_orient_params_t *p = target;
  (void)o, (void)spelled, (void)arg;
  p->orientation = rotate_orientation[p->angle];
  return 0;
}

static const gpuimg_orient_params_t rotate_defaults = {.common = {.variant = GPUIMG_VARIANT_FAST}};

static const gpuimg_option_t rotate_options[] = {
    {.long_name = "angle",
     .kind = GPUIMG_OPTION_CHOICE,
     .offset = offsetof(gpuimg_orient_params_t, angle),
     .choices = rotate_angles,
     .parse = rotate_angle_set,
     .metavar = "DEG",
     .help =
         "90, 180 or 270 degrees clockwise (required); 90 and\n270 swap the width and the height"},
    GPUIMG_ORIENT_VARIANT_OPTIONS,
    {0},
};

static int rotate_check(const void *params)
{
  const gpuimg_orient_params_t *p = params;
  if (p->orientation)
    return 0;
  gpuimg_error_set(GPUIMG_EXIT_USAGE, "rotate", "no angle given (--angle 90, 180 or 270)");
  return -1;
}

static void rotate_report(const void *params, const gpuimg_report_sink_t *sink)
{
  const gpuimg_orient_params_t *p = params;
  sink->number(sink->ctx, "angle", rotate_degrees[p->angle]);
}

const gpuimg_op_t gpuimg_op_rotate = {
    .name = "rotate",
    .summary = "turn by 90, 180 or 270 degrees clockwise",
    .options = rotate_options,
    GPUIMG_PARAMS(gpuimg_orient_params_t, rotate_defaults),
    .check = rotate_check,
    .report = rotate_report,
    .work = GPUIMG_ORIENT_WORK_SWAP, /* 90 and 270 swap the axes */
    GPUIMG_ORIENT_OP_FIELDS,
};

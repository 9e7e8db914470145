/* flip.c: the flip operation (ImageMagick's -flip): EXIF orientation 4, by what the orientation
 * operations share (orient_ops.c). */
#include "orient_ops.h"

static const gpuimg_orient_params_t flip_defaults = {.common = {.variant = GPUIMG_VARIANT_FAST},
                                                     .orientation = 4};

const gpuimg_op_t gpuimg_op_flip = {
    .name = "flip",
    .summary = "mirror top to bottom: the rows in reverse order",
    .options = gpuimg_orient_options,
    GPUIMG_PARAMS(gpuimg_orient_params_t, flip_defaults),
    .work = GPUIMG_ORIENT_WORK_MIRROR,
    GPUIMG_ORIENT_OP_FIELDS,
};

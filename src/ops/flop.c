/* flop.c: the flop operation (ImageMagick's -flop): EXIF orientation 2, by what the orientation
 * operations share (orient_ops.c). */
#include "orient_ops.h"

static const gpuimg_orient_params_t flop_defaults = {.common = {.variant = GPUIMG_VARIANT_FAST},
                                                     .orientation = 2};

const gpuimg_op_t gpuimg_op_flop = {
    .name = "flop",
    .summary = "mirror left to right: each row in reverse order",
    .options = gpuimg_orient_options,
    GPUIMG_PARAMS(gpuimg_orient_params_t, flop_defaults),
    .work = GPUIMG_ORIENT_WORK_MIRROR,
    GPUIMG_ORIENT_OP_FIELDS,
};

/* transpose.c: the transpose operation (ImageMagick's -transpose): EXIF orientation 5, by what the
 * orientation operations share (orient_ops.c). */
#include "orient_ops.h"

static const gpuimg_orient_params_t transpose_defaults = {
    .common = {.variant = GPUIMG_VARIANT_FAST}, .orientation = 5};

const gpuimg_op_t gpuimg_op_transpose = {
    .name = "transpose",
    .summary = "mirror about the top-left to bottom-right diagonal",
    .options = gpuimg_orient_options,
    GPUIMG_PARAMS(gpuimg_orient_params_t, transpose_defaults),
    .work = GPUIMG_ORIENT_WORK_SWAP,
    GPUIMG_ORIENT_OP_FIELDS,
};

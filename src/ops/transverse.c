/* transverse.c: the transverse operation (ImageMagick's -transverse): EXIF orientation 7, by what
 * the orientation operations share (orient_ops.c). */
#include "orient_ops.h"

static const gpuimg_orient_params_t transverse_defaults = {
    .common = {.variant = GPUIMG_VARIANT_FAST}, .orientation = 7};

const gpuimg_op_t gpuimg_op_transverse = {
    .name = "transverse",
    .summary = "mirror about the bottom-left to top-right diagonal",
    .options = gpuimg_orient_options,
    GPUIMG_PARAMS(gpuimg_orient_params_t, transverse_defaults),
    .work = GPUIMG_ORIENT_WORK_SWAP,
    GPUIMG_ORIENT_OP_FIELDS,
};

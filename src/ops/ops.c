/* ops.c: the table of operations; adding one means one op_<name>.c and one line here. */
#include "ops.h"

#include <string.h>

const gpuimg_op_t *const gpuimg_ops[] = {
    &gpuimg_op_gray, &gpuimg_op_blur, &gpuimg_op_checkerboard, &gpuimg_op_portrait, NULL,
};

const gpuimg_op_t *gpuimg_ops_find(const char *name)
{
  for (int i = 0; gpuimg_ops[i]; i++)
    if (strcmp(gpuimg_ops[i]->name, name) == 0)
      return gpuimg_ops[i];
  return NULL;
}

/* batch.c: `gpuimg OP ... -o DIR INPUT...`: many files, host threads, CUDA streams. */
#include "run.h"

int gpuimg_batch_main(const gpuimg_cli_t *cli)
{
  (void)cli;
  fprintf(stderr, "gpuimg: -o: batch mode is not implemented yet\n");
  return GPUIMG_EXIT_FAILURE;
}

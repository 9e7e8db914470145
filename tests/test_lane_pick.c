/* test_lane_pick.c: which nvJPEG thread a batch request goes to (gpuimg_jpeg_lane_pick(),
 * src/backends/jpeg_batch.c): a thread whose set-up failed gets none while another of its
 * kind serves or is still setting up. */
#include <stdio.h>

#include "jpeg_batch.h"

enum { UP = GPUIMG_LANE_SETTING_UP, ON = GPUIMG_LANE_SERVING, BAD = GPUIMG_LANE_FAILED };

static int failures;

static void expect(const char *name, int n, const int *state, const int *queued, int want)
{
  int got = gpuimg_jpeg_lane_pick(n, state, queued);
  if (got != want) {
    printf("FAIL %s: thread %d, want %d\n", name, got, want);
    failures++;
  }
}

int main(void)
{
  expect("one serving", 1, (int[]){ON}, (int[]){5}, 0);
  expect("fewest waiting", 4, (int[]){ON, ON, ON, ON}, (int[]){3, 1, 2, 1}, 1);
  expect("first of equals", 3, (int[]){ON, ON, ON}, (int[]){2, 2, 2}, 0);
  /* A failed thread's list stays empty: its 0 must not draw requests from one that serves. */
  expect("failed first, others serve", 4, (int[]){BAD, ON, ON, ON}, (int[]){0, 4, 6, 5}, 1);
  expect("failed among serving", 3, (int[]){ON, BAD, ON}, (int[]){9, 0, 7}, 2);
  expect("serving before setting up", 3, (int[]){UP, ON, UP}, (int[]){0, 8, 0}, 1);
  expect("none serves: first setting up", 4, (int[]){BAD, UP, BAD, UP}, (int[]){0, 0, 0, 0}, 1);
  expect("none serves, first failed", 2, (int[]){BAD, UP}, (int[]){0, 3}, 1);
  expect("all failed: the first's error", 3, (int[]){BAD, BAD, BAD}, (int[]){0, 0, 0}, 0);
  expect("all setting up", 2, (int[]){UP, UP}, (int[]){0, 0}, 0);
  if (failures)
    return 1;
  printf("lane pick: 10 cases ok\n");
  return 0;
}

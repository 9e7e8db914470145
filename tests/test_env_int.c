/* test_env_int.c: gpuimg_env_int, the measurement knobs' reader: defaults for unset, empty and
 * malformed values, clamping for values out of range, overflow included. */
#define _XOPEN_SOURCE 700
#include "options.h"

#include <stdio.h>
#include <stdlib.h>

static int failures;

static void check(const char *value, int want)
{
  if (value)
    setenv("GPUIMG_TEST_KNOB", value, 1);
  else
    unsetenv("GPUIMG_TEST_KNOB");
  int got = gpuimg_env_int("GPUIMG_TEST_KNOB", 24, 1, 256);
  if (got != want) {
    printf("FAIL %s: %d, expected %d\n", value ? value : "(unset)", got, want);
    failures++;
  }
}

int main(void)
{
  check(NULL, 24);
  check("", 24);
  check("abc", 24);
  check("5x", 24);
  check(" ", 24);
  check("7", 7);
  check(" 9", 9); /* strtoll skips leading spaces */
  check("0", 1);
  check("-3", 1);
  check("999", 256);
  check("99999999999999999999", 256);
  check("-99999999999999999999", 1);
  if (failures)
    return 1;
  printf("env_int: ok\n");
  return 0;
}

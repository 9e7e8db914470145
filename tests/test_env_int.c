/* test_env_int.c: gpuimg_env_int and gpuimg_env_fraction, the measurement knobs' readers:
 * defaults for unset, empty and malformed values, clamping for values out of range, overflow
 * included. */
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

static void check_fraction(const char *value, double want)
{
  setenv("GPUIMG_TEST_KNOB", value, 1);
  double got = gpuimg_env_fraction("GPUIMG_TEST_KNOB", -1);
  if (got != want) {
    printf("FAIL fraction %s: %g, expected %g\n", value, got, want);
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
  check_fraction("", -1);
  check_fraction("auto", -1);
  check_fraction("0.5x", -1);
  check_fraction("nan", -1);
  check_fraction("0", 0);
  check_fraction("0.25", 0.25);
  check_fraction("-0.5", 0);
  check_fraction("1.5", 1);
  check_fraction("1e999", 1);
  if (failures)
    return 1;
  printf("env_int: ok\n");
  return 0;
}

/* test_fail.h: how a C unit test stops at its first failure: fail() prints
 * "TEST_NAME: FAIL: <message>" on stderr and exits 1 (define TEST_NAME before including it). */
#ifndef GPUIMG_TEST_FAIL_H
#define GPUIMG_TEST_FAIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static void fail(const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;

static void fail(const char *fmt, ...)
{
  va_list ap;
  fprintf(stderr, "%s: FAIL: ", TEST_NAME);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(1);
}

#endif

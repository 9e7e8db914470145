/* library_memory.c: libgpuimg on images in memory, built against the installed library by
 * tests/test_library.py: gray on a 3x2 RGB image gives Rec. 601 luma byte for byte; errors
 * come back as codes and messages. */
#include <gpuimg.h>
#include <stdio.h>
#include <string.h>

static int failed;

static void check(int ok, const char *what)
{
  if (!ok) {
    printf("FAIL %s (%s)\n", what, gpuimg_error_message());
    failed = 1;
  }
}

/* gray of 6 pixels against (19595 R + 38470 G + 7471 B + 32768) >> 16. */
static void gray_in_memory(gpuimg_context_t *ctx)
{
  uint8_t px[18] = {0, 0, 0, 255, 255, 255, 255, 0, 0, 0, 255, 0, 0, 0, 255, 12, 200, 99};
  gpuimg_image_t src = {.width = 3, .height = 2, .channels = 3, .data = px}, dst;
  check(gpuimg_context_process(ctx, &src, &dst) == 0, "process");
  check(dst.width == 3 && dst.height == 2 && dst.channels == 1, "gray's shape");
  for (int i = 0; i < 6 && dst.data; i++) {
    const uint8_t *p = px + 3 * i;
    unsigned want = (19595u * p[0] + 38470u * p[1] + 7471u * p[2] + 32768u) >> 16;
    check(dst.data[i] == want, "gray's bytes");
  }
  gpuimg_image_free(&dst);
}

int main(void)
{
  gpuimg_context_t *ctx = gpuimg_context_create(GPUIMG_BACKEND_CPU);
  check(ctx != NULL, "create");
  check(gpuimg_context_set(ctx, "radius", "3") < 0 && gpuimg_error_code() == GPUIMG_EXIT_USAGE,
        "an option before any step is refused");
  check(strcmp(gpuimg_error_message(), "unknown option '--radius'") == 0, "its message");
  check(gpuimg_context_add(ctx, "sharpen") < 0 && strstr(gpuimg_error_message(), "'sharpen'"),
        "an unknown operation is refused");
  check(gpuimg_context_add(ctx, "gray") == 0, "add gray");
  check(gpuimg_context_set(ctx, "radius", "3") < 0, "gray has no radius");
  check(gpuimg_context_set(ctx, "quality", "101") < 0 &&
            strcmp(gpuimg_error_message(),
                   "--quality: invalid value '101' (expected an integer from 1 to 100)") == 0,
        "a run-wide setting is range-checked");
  check(gpuimg_context_set(ctx, "strip", NULL) == 0, "--strip is a run-wide setting");
  gray_in_memory(ctx);
  check(strcmp(gpuimg_context_backend(ctx), "cpu") == 0, "ran on the cpu");
  check(gpuimg_context_stage_count(ctx) == 1, "one stage: gray");
  gpuimg_context_destroy(ctx);
  printf("%s %s\n", failed ? "FAILED" : "ok", gpuimg_version());
  return failed;
}

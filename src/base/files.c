/* files.c: reading input files whole, and whether two paths name the same file (atomic output
 * files, signal cleanup and threads are output.c's). */
#define _XOPEN_SOURCE 700
#include "files.h"
#include "streams.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

int gpuimg_file_errno_code(int err, int code)
{
  return err == EMFILE || err == ENFILE || err == ENOMEM ? GPUIMG_EXIT_FAILURE : code;
}

/* Why a file of this type is not read: NULL for a regular file (and, unless
 * regular_only, for any other file but a directory). */
static const char *refused_type(mode_t mode, int regular_only)
{
  if (S_ISDIR(mode))
    return "is a directory";
  return regular_only && !S_ISREG(mode) ? GPUIMG_NOT_REGULAR_IN : NULL;
}

/* Opens path for reading. regular_only: anything but a regular file is refused from its
 * stat() before it is opened, and opened without blocking (O_NONBLOCK: a FIFO put there
 * meanwhile has no writer to wait for), so a batch never hangs on a FIFO. -1 with the error
 * set. */
static int open_input(const char *path, int regular_only)
{
  struct stat st;
  const char *why;
  if (regular_only && stat(path, &st) == 0 && (why = refused_type(st.st_mode, 1))) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, path, "%s", why);
    return -1;
  }
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | (regular_only ? O_NONBLOCK : 0));
  if (fd < 0)
    gpuimg_error_set(gpuimg_file_errno_code(errno, GPUIMG_EXIT_INPUT), path, "%s", strerror(errno));
  return fd;
}

/* With may_begin (an image), reading stops as soon as the first bytes cannot begin one: the
 * decoder refuses the file from them alone ("unsupported format"), and a stream such as
 * /dev/zero or /dev/urandom would otherwise be read to the size cap (1 GiB of memory) first. */
static int read_file(const char *path, gpuimg_may_begin_fn *may_begin, int regular_only,
                     gpuimg_buf_t *out)
{
  int is_stdin = strcmp(path, "-") == 0;
  const char *what = is_stdin ? "<stdin>" : path;
  struct stat st;

  memset(out, 0, sizeof *out);
  if (is_stdin && gpuimg_stream_closed(STDIN_FILENO)) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "standard input is closed");
    return -1;
  }
  int fd = is_stdin ? STDIN_FILENO : open_input(path, regular_only);
  if (fd < 0)
    return -1;
  if (fstat(fd, &st) == 0) {
    const char *why = refused_type(st.st_mode, regular_only && !is_stdin);
    if (why) {
      gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "%s", why);
      goto fail;
    }
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > GPUIMG_MAX_FILE_BYTES) {
      gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "file too large (over %zu bytes)",
                       GPUIMG_MAX_FILE_BYTES);
      goto fail;
    }
  }
  for (;;) {
    uint8_t chunk[65536];
    ssize_t got = read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "%s", strerror(errno));
      goto fail;
    }
    if (got == 0)
      break;
    if (out->size + (size_t)got > GPUIMG_MAX_FILE_BYTES) {
      gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "file too large (over %zu bytes)",
                       GPUIMG_MAX_FILE_BYTES);
      goto fail;
    }
    if (gpuimg_buf_append(out, chunk, (size_t)got) < 0) {
      gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
      goto fail;
    }
    if (may_begin && !may_begin(out->data, out->size))
      break;
  }
  if (!is_stdin)
    close(fd);
  return 0;
fail:
  if (!is_stdin)
    close(fd);
  gpuimg_buf_free(out);
  return -1;
}

int gpuimg_file_read(const char *path, gpuimg_may_begin_fn *may_begin, gpuimg_buf_t *out)
{
  return read_file(path, may_begin, 0, out);
}

int gpuimg_file_read_regular(const char *path, gpuimg_may_begin_fn *may_begin, gpuimg_buf_t *out)
{
  return read_file(path, may_begin, 1, out);
}

int gpuimg_text_read(const char *path, gpuimg_buf_t *out)
{
  return read_file(path, NULL, 0, out);
}

/* path's directory made absolute, plus its last component (the file may not exist yet).
 * Returns a malloc'd string or NULL. */
static char *canonical_path(const char *path)
{
  const char *slash = strrchr(path, '/');
  char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
  char *real = dir ? realpath(dir, NULL) : NULL;
  char *out = NULL;
  const char *base = slash ? slash + 1 : path;
  if (real && (out = malloc(strlen(real) + strlen(base) + 2)))
    sprintf(out, "%s/%s", real, base);
  free(dir);
  free(real);
  return out;
}

/* The same file: same inode when both exist, else the same canonical path. */
int gpuimg_same_file(const char *a, const char *b)
{
  struct stat sa, sb;
  if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  char *ca = canonical_path(a), *cb = canonical_path(b);
  int same = ca && cb && strcmp(ca, cb) == 0;
  free(ca);
  free(cb);
  return same;
}

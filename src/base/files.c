/* files.c: reading input files whole, atomic output files, signal cleanup and threads. */
#define _XOPEN_SOURCE 700
#include "files.h"
#include "streams.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static int may_be_image(const uint8_t *b, size_t n)
{
  static const uint8_t png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  static const uint8_t jpeg[3] = {0xff, 0xd8, 0xff};
  size_t k = 0;
  while (k < n && k < sizeof png && b[k] == png[k])
    k++;
  if (k == n || k == sizeof png)
    return 1;
  for (k = 0; k < n && k < sizeof jpeg && b[k] == jpeg[k]; k++)
    ;
  return k == n || k == sizeof jpeg;
}

/* For images, reading stops as soon as the first bytes cannot begin one: the decoder
 * refuses the file from them alone ("unsupported format"), and a stream such as /dev/zero
 * or /dev/urandom would otherwise be read to the size cap (1 GiB of memory) first. */
static int read_file(const char *path, int image, gpuimg_buf_t *out)
{
  int is_stdin = strcmp(path, "-") == 0;
  const char *what = is_stdin ? "<stdin>" : path;
  int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;

  memset(out, 0, sizeof *out);
  if (is_stdin && gpuimg_stream_closed(STDIN_FILENO)) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "standard input is closed");
    return -1;
  }
  if (fd < 0) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "%s", strerror(errno));
    return -1;
  }
  if (fstat(fd, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "is a directory");
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
    if (image && !may_be_image(out->data, out->size))
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

int gpuimg_file_read(const char *path, gpuimg_buf_t *out)
{
  return read_file(path, 1, out);
}

int gpuimg_text_read(const char *path, gpuimg_buf_t *out)
{
  return read_file(path, 0, out);
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

/* Temporary files still open, removed by the signal handler. Batch workers open and commit
 * outputs concurrently: a slot is claimed with a compare-and-swap and released by storing
 * NULL; the handler only loads slots (lock-free atomic loads are async-signal-safe) and
 * calls unlink(). A path leaves its slot before it is freed. More files open at once than
 * slots (batch mode holds at most one per worker, --jobs <= 1024, plus the report) would
 * only lose the cleanup of the extra ones. */
#define MAX_PENDING 4096
static _Atomic(char *) pending[MAX_PENDING];

static void pending_add(char *path)
{
  for (int i = 0; i < MAX_PENDING; i++) {
    char *expected = NULL;
    if (atomic_compare_exchange_strong(&pending[i], &expected, path))
      return;
  }
}

static void pending_remove(const char *path)
{
  for (int i = 0; i < MAX_PENDING; i++) {
    char *expected = (char *)path;
    if (atomic_compare_exchange_strong(&pending[i], &expected, NULL))
      return;
  }
}

/* dying: set by the handler, after which no temporary file is created. creating: threads
 * between their check of dying and the registration of the file they create. The handler
 * sets dying, waits (boundedly) for creating to reach 0, then removes every registered
 * file: a file is either registered before the scan or never created. Batch workers block
 * the signals, so the handler runs on the main thread and never waits for itself. */
static atomic_int dying, creating;

static void cleanup_on_signal(int sig)
{
  atomic_store(&dying, 1);
  for (long spin = 0; atomic_load(&creating) > 0 && spin < 100000000L; spin++)
    ;
  for (int i = 0; i < MAX_PENDING; i++) {
    char *path = atomic_load(&pending[i]);
    if (path)
      unlink(path);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

static mode_t process_umask;
static int have_umask;

void gpuimg_output_install_signal_cleanup(void)
{
  process_umask = umask(0);
  umask(process_umask);
  have_umask = 1;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = cleanup_on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
}

int gpuimg_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg)
{
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &block, &old); /* the new thread inherits the mask */
  int err = pthread_create(thread, NULL, fn, arg);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return err;
}

int gpuimg_output_open(gpuimg_output_t *out, const char *path, int binary)
{
  memset(out, 0, sizeof *out);
  out->path = path;
  out->fd = -1;
  if (strcmp(path, "-") == 0) {
    if (gpuimg_stream_closed(STDOUT_FILENO)) {
      gpuimg_error_set(GPUIMG_EXIT_OUTPUT, "<stdout>", "standard output is closed");
      return -1;
    }
    if (binary && isatty(STDOUT_FILENO)) {
      gpuimg_error_set(GPUIMG_EXIT_OUTPUT, "<stdout>",
                       "refusing to write image data to a terminal");
      return -1;
    }
    out->fd = STDOUT_FILENO;
    return 0;
  }

  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, path, "is a directory");
    return -1;
  }
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    /* A device or a FIFO (--report /dev/null, a named pipe) is written in place: renaming
     * a temporary file over it would replace the device node itself (as root, /dev/null). */
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      gpuimg_error_set(GPUIMG_EXIT_OUTPUT, path, "cannot open output file: %s", strerror(errno));
      return -1;
    }
    if (binary && isatty(fd)) {
      close(fd);
      gpuimg_error_set(GPUIMG_EXIT_OUTPUT, path, "refusing to write image data to a terminal");
      return -1;
    }
    out->fd = fd;
    return 0;
  }
  /* ".<name>.XXXXXX" beside the destination, so rename() stays on one file system. */
  const char *slash = strrchr(path, '/');
  size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
  const char *base = path + dir_len;
  size_t len = dir_len + 1 + strlen(base) + 8;
  char *tmp = malloc(len);
  if (!tmp) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, path, "out of memory");
    return -1;
  }
  snprintf(tmp, len, "%.*s.%s.XXXXXX", (int)dir_len, path, base);
  atomic_fetch_add(&creating, 1);
  if (atomic_load(&dying)) { /* a signal is ending the process: create nothing more */
    atomic_fetch_sub(&creating, 1);
    free(tmp);
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, path, "cannot create output file: interrupted");
    return -1;
  }
  int fd = mkstemp(tmp);
  if (fd < 0) {
    int err = errno;
    atomic_fetch_sub(&creating, 1);
    free(tmp);
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, path, "cannot create output file: %s", strerror(err));
    return -1;
  }
  pending_add(tmp);
  atomic_fetch_sub(&creating, 1);
  /* mkstemp makes 0600; a normal output file gets 0666 less the umask (read once, by
   * gpuimg_output_install_signal_cleanup() at start-up: umask() cannot be read without
   * setting it, which races with other threads). */
  mode_t mask = process_umask;
  if (!have_umask) {
    mask = umask(0);
    umask(mask);
  }
  fchmod(fd, 0666 & ~mask);
  out->tmp_path = tmp;
  out->fd = fd;
  return 0;
}

int gpuimg_write_all(int fd, const void *bytes, size_t n)
{
  const uint8_t *p = bytes;
  while (n > 0) {
    ssize_t put = write(fd, p, n);
    if (put < 0 && errno == EINTR)
      continue;
    if (put < 0)
      return -1;
    p += put;
    n -= (size_t)put;
  }
  return 0;
}

int gpuimg_output_commit(gpuimg_output_t *out, const void *bytes, size_t n)
{
  const char *what = strcmp(out->path, "-") ? out->path : "<stdout>";
  if (gpuimg_write_all(out->fd, bytes, n) < 0) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "write failed: %s", strerror(errno));
    gpuimg_output_abort(out);
    return -1;
  }
  if (!out->tmp_path) { /* stdout, or a device or FIFO written in place */
    int fd = out->fd;
    out->fd = -1;
    if (fd != STDOUT_FILENO && close(fd) < 0) {
      gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "write failed: %s", strerror(errno));
      return -1;
    }
    return 0;
  }
  int fd = out->fd;
  out->fd = -1;
  if (close(fd) < 0) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "write failed: %s", strerror(errno));
    gpuimg_output_abort(out);
    return -1;
  }
  if (rename(out->tmp_path, out->path) < 0) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "cannot rename into place: %s", strerror(errno));
    gpuimg_output_abort(out);
    return -1;
  }
  pending_remove(out->tmp_path);
  free(out->tmp_path);
  out->tmp_path = NULL;
  return 0;
}

void gpuimg_output_abort(gpuimg_output_t *out)
{
  if (out->fd >= 0 && out->fd != STDOUT_FILENO)
    close(out->fd);
  out->fd = -1;
  if (out->tmp_path) {
    unlink(out->tmp_path);
    pending_remove(out->tmp_path);
    free(out->tmp_path);
    out->tmp_path = NULL;
  }
}

/* files.h: reading input files whole, atomic output files, signal cleanup and threads. */
#ifndef GPUIMG_FILES_H
#define GPUIMG_FILES_H

#include <pthread.h>

#include "buf.h"

/* Largest input file read, in bytes. */
#define GPUIMG_MAX_FILE_BYTES ((size_t)1 << 30)

/* Reads a whole file ("-" = stdin) into out. 0, or -1 with the error set (exit 3). */
int gpuimg_file_read(const char *path, gpuimg_buf_t *out);
/* The same for a text file (a report, a list of paths): read whole, whatever it holds. */
int gpuimg_text_read(const char *path, gpuimg_buf_t *out);

/* Whether a and b name the same file: the same inode when both exist, else the same
 * canonical path (a file about to be created). */
int gpuimg_same_file(const char *a, const char *b);

/* Atomic output: a temporary file in the destination directory, renamed into place
 * on commit. "-" writes to stdout (refused when stdout is a terminal and binary is set).
 * Creating it early makes a missing or unwritable directory fail before any work. */
typedef struct {
  const char *path;
  char *tmp_path; /* NULL for stdout */
  int fd;
} gpuimg_output_t;

int gpuimg_output_open(gpuimg_output_t *out, const char *path, int binary);
/* Writes all n bytes to fd, retrying short writes and EINTR. 0, or -1 with errno set. */
int gpuimg_write_all(int fd, const void *bytes, size_t n);
/* Writes bytes, closes and renames into place. On failure nothing remains. */
int gpuimg_output_commit(gpuimg_output_t *out, const void *bytes, size_t n);
/* Removes the temporary file, if any (safe to call twice and after commit). */
void gpuimg_output_abort(gpuimg_output_t *out);
/* Installs SIGINT/SIGTERM/SIGHUP handlers that remove open temporary files. */
void gpuimg_output_install_signal_cleanup(void);
/* pthread_create() of a thread that starts with SIGINT, SIGTERM and SIGHUP blocked, so that
 * the handler runs on the main thread only and never interrupts one in the middle of
 * creating a temporary file. Returns pthread_create()'s result. */
int gpuimg_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg);

#endif

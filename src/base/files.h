/* files.h: reading input files whole (files.c); atomic output files, signal cleanup and threads
 * (output.c). */
#ifndef GPUIMG_FILES_H
#define GPUIMG_FILES_H

#include <pthread.h>

#include "buf.h"

/* Largest input file read, in bytes. */
#define GPUIMG_MAX_FILE_BYTES ((size_t)1 << 30)

/* Whether the first size bytes of a file may still begin an image (the codecs say which:
 * gpuimg_codec_may_begin()). */
typedef int gpuimg_may_begin_fn(const uint8_t *bytes, size_t size);

/* Reads an image file ("-" = stdin) into out: whole, or its first bytes only once may_begin
 * says they cannot begin an image (NULL: whole). 0, or -1 with the error set (exit 3). */
int gpuimg_file_read(const char *path, gpuimg_may_begin_fn *may_begin, gpuimg_buf_t *out);
/* The same for a batch's input: a regular file only. Anything else (a FIFO, a device, a
 * socket) is refused, exit 3, GPUIMG_NOT_REGULAR_IN, without being opened or waited for. */
int gpuimg_file_read_regular(const char *path, gpuimg_may_begin_fn *may_begin, gpuimg_buf_t *out);
/* The same for a text file (a report, a list of paths): read whole, whatever it holds. */
int gpuimg_text_read(const char *path, gpuimg_buf_t *out);

/* The reasons given for a batch's input or output that is not a regular file. */
#define GPUIMG_NOT_REGULAR_IN "not a regular file (a batch reads regular files only)"
#define GPUIMG_NOT_REGULAR_OUT "not a regular file (a batch writes regular files only)"

/* The exit code of a file operation that failed with errno err: GPUIMG_EXIT_FAILURE when the
 * process ran out of a resource (EMFILE, ENFILE: too many open files; ENOMEM), else code
 * (the file's own fault: GPUIMG_EXIT_INPUT or GPUIMG_EXIT_OUTPUT). */
int gpuimg_file_errno_code(int err, int code);

/* Whether a and b name the same file: the same inode when both exist, else the same
 * canonical path (a file about to be created). */
int gpuimg_same_file(const char *a, const char *b);

/* Atomic output (output.c): a temporary file in the destination directory, moved into place
 * on commit. "-" writes to stdout (refused when stdout is a terminal and binary is set); a
 * device or a FIFO is written in place. Creating it early makes a missing or unwritable
 * directory fail before any work.
 *
 * The temporary file is "<dir>/.<prefix>.gpuimg-<pid>.XXXXXX": prefix is NAME, shortened
 * where needed (at a UTF-8 character boundary) so that the whole name fits in the directory's
 * NAME_MAX whenever NAME does; pid is the process that owns it. */
typedef struct {
  const char *path;
  char *tmp_path; /* NULL for stdout, a device or a FIFO */
  int fd;
  int flags; /* GPUIMG_OUTPUT_* */
  int taken; /* set when commit failed because NAME existed by then (GPUIMG_OUTPUT_NO_REPLACE) */
} gpuimg_output_t;

enum {
  GPUIMG_OUTPUT_BINARY = 1,     /* image data: refused on a terminal */
  GPUIMG_OUTPUT_NO_REPLACE = 2, /* commit fails (exit 4, "exists (use --force to replace it)")
                                   when NAME exists by then, replacing nothing */
  GPUIMG_OUTPUT_FSYNC = 4,      /* commit flushes the file before it gets its name, and the
                                   directory after */
  GPUIMG_OUTPUT_QUIET = 8,      /* the sweep below removes leftovers without a notice */
  GPUIMG_OUTPUT_REGULAR = 16,   /* an existing NAME that is not, or does not link to, a
                                   regular file (a FIFO, a device) is refused, exit 4,
                                   GPUIMG_NOT_REGULAR_OUT, instead of being written in place */
};

/* Opens path's temporary file. Before the first temporary file in a directory, removes the
 * leftovers of gpuimg processes that no longer exist there (gpuimg_output_sweep()). 0, or -1
 * with the error set. */
int gpuimg_output_open(gpuimg_output_t *out, const char *path, int flags);
/* Writes all n bytes to fd, retrying short writes and EINTR. 0, or -1 with errno set. */
int gpuimg_write_all(int fd, const void *bytes, size_t n);
/* Writes bytes, closes and moves into place: rename() over an existing file, or without
 * replacing anything (GPUIMG_OUTPUT_NO_REPLACE). On failure no temporary file remains. */
int gpuimg_output_commit(gpuimg_output_t *out, const void *bytes, size_t n);
/* Removes the temporary file, if any (safe to call twice and after commit). */
void gpuimg_output_abort(gpuimg_output_t *out);
/* Removes from directory dir, once per process, the temporary files of gpuimg processes that
 * no longer exist (killed by SIGKILL, or by a crash the handler could not clean up): regular
 * files of this user whose name is exactly gpuimg's pattern and whose pid is gone
 * (kill(pid, 0) fails with ESRCH). Each is named on stderr ("gpuimg: removed FILE, left by
 * process PID") unless quiet. */
void gpuimg_output_sweep(const char *dir, int quiet);
/* Installs, for every signal whose default action ends the process (signal(7): SIGHUP, SIGINT,
 * SIGQUIT, SIGPIPE, SIGTERM, SIGUSR1/2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ, SIGPOLL,
 * SIGPWR, SIGSTKFLT, the real-time signals, and the faults SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGTRAP, SIGSYS, SIGABRT) and whose disposition is still the default (an inherited SIG_IGN,
 * as under nohup, is kept), a handler that removes the open temporary files and raises the
 * signal again with its default action. */
void gpuimg_output_install_signal_cleanup(void);
/* pthread_create() of a thread that starts with the asynchronous ones of those signals blocked
 * (all but the faults, SIGPIPE and SIGXFSZ, which a thread raises itself), so that they are
 * delivered to the main thread. Returns pthread_create()'s result. */
int gpuimg_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg);
/* Names the calling thread (its first 15 bytes; on Linux with glibc, else nothing), as top -H,
 * ps -L and debuggers show it: gpuimg's threads are named by role ("gpuimg-worker", ...). */
void gpuimg_thread_name(const char *name);

#endif

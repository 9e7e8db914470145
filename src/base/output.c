/* output.c: atomic output files (a temporary file beside NAME, moved into place whole), their
 * removal when a signal ends the process, and the sweep of temporaries left by killed runs. */
#define _GNU_SOURCE /* syscall() for renameat2, pthread_setname_np() */
#include "files.h"
#include "streams.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1
#endif

/* What marks a temporary file as gpuimg's: ".<prefix>" TAG "<pid>.XXXXXX". */
#define TAG ".gpuimg-"
#define TAG_LEN (sizeof TAG - 1)

/* ---- the temporary files still open, and the signal handler that removes them ---- */

/* Batch workers open and commit outputs concurrently: a slot is claimed with a
 * compare-and-swap and released by storing NULL; the handler only loads slots (lock-free
 * atomic loads are async-signal-safe) and calls unlink(). A path leaves its slot before it is
 * freed. More files open at once than slots (batch mode holds at most one per worker, --jobs
 * <= 1024, plus the report) would only lose the cleanup of the extra ones. */
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

/* The signals whose default action ends the process (signal(7)). */
static const int fatal_signals[] = {
    SIGHUP,    SIGINT,  SIGQUIT, SIGILL,  SIGTRAP, SIGABRT, SIGBUS,    SIGFPE,  SIGUSR1, SIGSEGV,
    SIGUSR2,   SIGPIPE, SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGSYS,
#ifdef SIGPOLL
    SIGPOLL,
#endif
#ifdef SIGPWR
    SIGPWR,
#endif
#ifdef SIGSTKFLT
    SIGSTKFLT,
#endif
};

/* Raised by the thread itself (a fault, a write to a closed pipe or past the file size limit):
 * blocking them would not stop them, only the cleanup. */
static int raised_by_thread(int sig)
{
  return sig == SIGILL || sig == SIGTRAP || sig == SIGABRT || sig == SIGBUS || sig == SIGFPE ||
         sig == SIGSEGV || sig == SIGSYS || sig == SIGPIPE || sig == SIGXFSZ;
}

/* The handled signals (async_only: less those a thread raises itself). */
static void fatal_set(sigset_t *set, int async_only)
{
  sigemptyset(set);
  for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++)
    if (!async_only || !raised_by_thread(fatal_signals[i]))
      sigaddset(set, fatal_signals[i]);
  for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
    sigaddset(set, sig);
}

/* dying: set by the handler, after which no temporary file is created. creating: threads
 * between their check of dying and the registration of the file they create (with the
 * handled signals blocked, so the handler never waits for its own thread). The handler sets
 * dying, waits (boundedly) for creating to reach 0, then removes every registered file: a
 * file is either registered before the scan or never created. */
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
  raise(sig); /* blocked until the handler returns, then the default action */
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
  fatal_set(&sa.sa_mask, 0); /* no second signal in the middle of the cleanup */
  for (int sig = 1; sig <= SIGRTMAX; sig++) {
    struct sigaction old;
    if (sigismember(&sa.sa_mask, sig) != 1 || sigaction(sig, NULL, &old) < 0)
      continue;
    /* Only a default disposition: an ignored signal (nohup, a shell's background job) stays
     * ignored, and a handler set by someone else (a sanitizer's) stays theirs. */
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
      sigaction(sig, &sa, NULL);
  }
}

int gpuimg_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg)
{
  sigset_t block, old;
  fatal_set(&block, 1);
  pthread_sigmask(SIG_BLOCK, &block, &old); /* the new thread inherits the mask */
  int err = pthread_create(thread, NULL, fn, arg);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return err;
}

void gpuimg_thread_name(const char *name)
{
#if defined(__linux__) && defined(__GLIBC__)
  char short_name[16];
  snprintf(short_name, sizeof short_name, "%s", name);
  (void)pthread_setname_np(pthread_self(), short_name);
#else
  (void)name;
#endif
}

/* ---- temporary names, and the sweep of those whose process is gone ---- */

/* The longest file name in the directory of path (its first dir_len bytes). */
static size_t name_max(const char *path, size_t dir_len)
{
  char *dir = dir_len ? strndup(path, dir_len) : strdup(".");
  long max = dir ? pathconf(dir, _PC_NAME_MAX) : -1;
  free(dir);
  return max > 0 && max < NAME_MAX ? (size_t)max : NAME_MAX;
}

/* mkstemp()'s template for path, "<dir>/.<prefix>.gpuimg-<pid>.XXXXXX" (dir: its first dir_len
 * bytes), malloc'd; NULL when out of memory. max: the directory's longest name. */
static char *tmp_template(const char *path, size_t dir_len, size_t max)
{
  const char *base = path + dir_len;
  char tail[64];
  size_t tail_len = (size_t)snprintf(tail, sizeof tail, "%s%ld.XXXXXX", TAG, (long)getpid());
  size_t keep = strlen(base);
  size_t room = max > tail_len + 2 ? max - tail_len - 1 : 1;
  if (keep > room) { /* never cut a UTF-8 character in two */
    keep = room;
    while (keep > 1 && ((unsigned char)base[keep] & 0xc0) == 0x80)
      keep--;
  }
  size_t len = dir_len + 1 + keep + tail_len + 1;
  char *tmp = malloc(len);
  if (tmp)
    snprintf(tmp, len, "%.*s.%.*s%s", (int)dir_len, path, (int)keep, base, tail);
  return tmp;
}

/* The owning process of a temporary file named name, or 0 when name is not exactly gpuimg's
 * pattern: '.', at least one byte, TAG, a pid in decimal, '.', six letters or digits. */
static long leftover_pid(const char *name)
{
  size_t n = strlen(name);
  if (n < 1 + 1 + TAG_LEN + 1 + 1 + 6 || name[0] != '.' || name[n - 7] != '.')
    return 0;
  for (size_t k = n - 6; k < n; k++) {
    char c = name[k];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
      return 0;
  }
  size_t end = n - 7, start = end;
  while (start > 0 && name[start - 1] >= '0' && name[start - 1] <= '9')
    start--;
  if (start == end || end - start > 9 || name[start] == '0' || start < 2 + TAG_LEN ||
      memcmp(name + start - TAG_LEN, TAG, TAG_LEN) != 0)
    return 0;
  return strtol(name + start, NULL, 10);
}

/* "gpuimg: removed FILE, left by process PID", control characters in FILE escaped as in
 * every message (gpuimg_escape()). */
static void say_removed(const char *dir, const char *name, long pid)
{
  char file[PATH_MAX + NAME_MAX + 2], shown[4 * sizeof file];
  snprintf(file, sizeof file, "%s%s", dir, name);
  gpuimg_escape(shown, sizeof shown, file);
  fprintf(stderr, "gpuimg: removed %s, left by process %ld\n", shown, pid);
}

/* Removes the leftovers in dir now; prefix is what names them in notices ("" or "dir/"). */
static void sweep_now(const char *dir, const char *prefix, int quiet)
{
  DIR *d = opendir(dir);
  if (!d)
    return;
  long self = (long)getpid();
  uid_t uid = geteuid();
  struct dirent *e;
  while ((e = readdir(d))) {
    long pid = leftover_pid(e->d_name);
    struct stat st;
    if (pid <= 0 || pid == self || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
      continue;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
        st.st_uid != uid)
      continue;
    if (unlinkat(dirfd(d), e->d_name, 0) == 0 && !quiet)
      say_removed(prefix, e->d_name, pid);
  }
  closedir(d);
}

/* The directories already swept by this process, by device and inode: an open-addressing
 * set that grows (a batch over a tree writes into as many directories as the tree has), so
 * that each directory is read once whatever their number. */
typedef struct {
  dev_t dev;
  ino_t ino;
  int used;
} swept_t;
static swept_t *swept;
static size_t swept_cap, nswept; /* cap: 0 or a power of two */
static pthread_mutex_t swept_mu = PTHREAD_MUTEX_INITIALIZER;

static size_t swept_slot(const swept_t *set, size_t cap, dev_t dev, ino_t ino)
{
  uint64_t h = ((uint64_t)dev * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)ino * 0xff51afd7ed558ccdull);
  size_t i = (size_t)(h ^ (h >> 29)) & (cap - 1);
  while (set[i].used && !(set[i].dev == dev && set[i].ino == ino))
    i = (i + 1) & (cap - 1);
  return i;
}

/* Whether the directory is in the set. */
static int swept_has(dev_t dev, ino_t ino)
{
  return swept_cap && swept[swept_slot(swept, swept_cap, dev, ino)].used;
}

/* Adds the directory, growing the set past half full; out of memory, it is left out (and
 * swept again next time, which is only slower). */
static void swept_add(dev_t dev, ino_t ino)
{
  if (2 * (nswept + 1) > swept_cap) {
    size_t cap = swept_cap ? 2 * swept_cap : 64;
    swept_t *set = calloc(cap, sizeof *set);
    if (!set)
      return;
    for (size_t i = 0; i < swept_cap; i++)
      if (swept[i].used)
        set[swept_slot(set, cap, swept[i].dev, swept[i].ino)] = swept[i];
    free(swept);
    swept = set;
    swept_cap = cap;
  }
  size_t i = swept_slot(swept, swept_cap, dev, ino);
  swept[i] = (swept_t){.dev = dev, .ino = ino, .used = 1};
  nswept++;
}

void gpuimg_output_sweep(const char *dir, int quiet)
{
  struct stat st;
  if (stat(dir, &st) < 0)
    return;
  pthread_mutex_lock(&swept_mu);
  if (!swept_has(st.st_dev, st.st_ino)) {
    size_t len = strlen(dir);
    char *prefix = malloc(len + 2);
    if (prefix) {
      snprintf(prefix, len + 2, "%s%s", dir, len && dir[len - 1] != '/' ? "/" : "");
      sweep_now(dir, strcmp(dir, ".") ? prefix : "", quiet);
      free(prefix);
    }
    swept_add(st.st_dev, st.st_ino);
  }
  pthread_mutex_unlock(&swept_mu);
}

/* Sweeps path's directory (its first dir_len bytes; "." when 0). */
static void sweep_dir_of(const char *path, size_t dir_len, int quiet)
{
  char *dir = dir_len ? strndup(path, dir_len) : strdup(".");
  if (dir && dir_len > 1 && dir[dir_len - 1] == '/')
    dir[dir_len - 1] = '\0'; /* "out/" names it "out/.x" */
  if (dir)
    gpuimg_output_sweep(dir, quiet);
  free(dir);
}

/* ---- opening, committing, aborting ---- */

/* For the tests of what happens when a file appears under NAME while gpuimg writes it: with
 * the environment variable var (GPUIMG_TEST_STOP_BEFORE_OPEN, GPUIMG_TEST_STOP_BEFORE_RENAME)
 * set to path as the command spells it, the process stops itself (SIGSTOP, every thread)
 * until a SIGCONT; the test creates the file meanwhile. */
static void stop_if_asked(const char *var, const char *path)
{
  const char *want = getenv(var);
  if (want && strcmp(want, path) == 0)
    raise(SIGSTOP); /* directed at this thread, which stops before it goes on */
}

/* stdout, or a device or FIFO (not a regular file: --report /dev/null, a named pipe), written
 * in place: renaming a temporary file over it would replace the device node itself (as root,
 * /dev/null). */
static int open_in_place(gpuimg_output_t *out, const char *path, int binary)
{
  int is_stdout = strcmp(path, "-") == 0;
  const char *what = is_stdout ? "<stdout>" : path;
  if (is_stdout && gpuimg_stream_closed(STDOUT_FILENO)) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "standard output is closed");
    return -1;
  }
  int fd = is_stdout ? STDOUT_FILENO : open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    gpuimg_error_set(gpuimg_file_errno_code(errno, GPUIMG_EXIT_OUTPUT), path,
                     "cannot open output file: %s", strerror(errno));
    return -1;
  }
  if (binary && isatty(fd)) {
    if (!is_stdout)
      close(fd);
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "refusing to write image data to a terminal");
    return -1;
  }
  out->fd = fd;
  return 0;
}

/* Creates and registers the temporary file from template tmp (which it takes). No handled
 * signal interrupts this thread between the check of dying and the registration. */
static int create_tmp(gpuimg_output_t *out, char *tmp)
{
  sigset_t block, old;
  fatal_set(&block, 1);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  atomic_fetch_add(&creating, 1);
  int fd = -1, err = EINTR;
  if (!atomic_load(&dying)) { /* else a signal is ending the process: create nothing more */
    fd = mkostemp(tmp, O_CLOEXEC);
    err = errno;
    if (fd >= 0)
      pending_add(tmp);
  }
  atomic_fetch_sub(&creating, 1);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (fd < 0) {
    free(tmp);
    gpuimg_error_set(gpuimg_file_errno_code(err, GPUIMG_EXIT_OUTPUT), out->path,
                     "cannot create output file: %s", err == EINTR ? "interrupted" : strerror(err));
    return -1;
  }
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

int gpuimg_output_open(gpuimg_output_t *out, const char *path, int flags)
{
  memset(out, 0, sizeof *out);
  out->path = path;
  out->fd = -1;
  out->flags = flags;
  int binary = flags & GPUIMG_OUTPUT_BINARY;
  struct stat st;
  if (strcmp(path, "-") == 0)
    return open_in_place(out, path, binary);
  stop_if_asked("GPUIMG_TEST_STOP_BEFORE_OPEN", path);
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, path, "is a directory");
    return -1;
  }
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    if (!(flags & GPUIMG_OUTPUT_REGULAR))
      return open_in_place(out, path, binary);
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, path, GPUIMG_NOT_REGULAR_OUT);
    return -1;
  }
  /* Beside the destination, so that the final rename or link stays on one file system. */
  const char *slash = strrchr(path, '/');
  size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0, max = name_max(path, dir_len);
  if (strlen(path + dir_len) > max) { /* refused now, not by the final rename */
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, path, "cannot create output file: %s",
                     strerror(ENAMETOOLONG));
    return -1;
  }
  sweep_dir_of(path, dir_len, flags & GPUIMG_OUTPUT_QUIET);
  char *tmp = tmp_template(path, dir_len, max);
  if (!tmp) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, path, "out of memory");
    return -1;
  }
  return create_tmp(out, tmp);
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

/* fsync() of path's directory, where the new name is recorded. A file system that cannot sync
 * a directory (EINVAL) has nothing more to flush. */
static int sync_dir(const char *path, const char *what)
{
  const char *slash = strrchr(path, '/');
  char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
  int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  int rc = fd >= 0 && (fsync(fd) == 0 || errno == EINVAL) ? 0 : -1;
  int err = errno;
  if (fd >= 0)
    close(fd);
  free(dir);
  if (rc < 0)
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "cannot sync the directory: %s",
                     dir ? strerror(err) : "out of memory");
  return rc;
}

/* rename() without replacing: 0, or -1 with errno (EEXIST: the name exists; EINVAL, ENOSYS,
 * ENOTSUP: not on this file system or kernel). */
static int rename_noreplace(const char *from, const char *to)
{
#ifdef SYS_renameat2
  return (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
#else
  errno = ENOSYS;
  return -1;
#endif
}

/* Gives the complete temporary file its name: rename() replaces what is there; without
 * replacing, renameat2(RENAME_NOREPLACE), or where the file system has no such rename, link()
 * to the name (which fails when it exists) and unlink() of the temporary name. */
static int place(gpuimg_output_t *out, const char *what)
{
  int rc;
  stop_if_asked("GPUIMG_TEST_STOP_BEFORE_RENAME", out->path);
  if (!(out->flags & GPUIMG_OUTPUT_NO_REPLACE)) {
    rc = rename(out->tmp_path, out->path);
  } else {
    rc = rename_noreplace(out->tmp_path, out->path);
    if (rc < 0 && (errno == EINVAL || errno == ENOSYS || errno == ENOTSUP || errno == EOPNOTSUPP)) {
      rc = link(out->tmp_path, out->path);
      if (rc == 0)
        unlink(out->tmp_path);
    }
  }
  if (rc == 0)
    return 0;
  out->taken = errno == EEXIST && (out->flags & GPUIMG_OUTPUT_NO_REPLACE);
  if (out->taken)
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "exists (use --force to replace it)");
  else
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "cannot rename into place: %s", strerror(errno));
  return -1;
}

/* Finishes an output written in place (stdout, a device, a FIFO): flushed when it is a
 * regular file (stdout redirected to one) and fsync was asked for. */
static int finish_in_place(gpuimg_output_t *out, const char *what)
{
  struct stat st;
  int fd = out->fd, rc = 0;
  out->fd = -1;
  if ((out->flags & GPUIMG_OUTPUT_FSYNC) && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      fsync(fd) < 0)
    rc = -1;
  if (fd != STDOUT_FILENO && close(fd) < 0)
    rc = -1;
  if (rc < 0)
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "write failed: %s", strerror(errno));
  return rc;
}

int gpuimg_output_commit(gpuimg_output_t *out, const void *bytes, size_t n)
{
  const char *what = strcmp(out->path, "-") ? out->path : "<stdout>";
  if (gpuimg_write_all(out->fd, bytes, n) < 0) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "write failed: %s", strerror(errno));
    gpuimg_output_abort(out);
    return -1;
  }
  if (!out->tmp_path)
    return finish_in_place(out, what);
  int fd = out->fd;
  out->fd = -1;
  if ((out->flags & GPUIMG_OUTPUT_FSYNC) && fsync(fd) < 0) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "write failed: fsync: %s", strerror(errno));
    close(fd);
    gpuimg_output_abort(out);
    return -1;
  }
  if (close(fd) < 0) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "write failed: %s", strerror(errno));
    gpuimg_output_abort(out);
    return -1;
  }
  if (place(out, what) < 0) {
    gpuimg_output_abort(out);
    return -1;
  }
  pending_remove(out->tmp_path);
  free(out->tmp_path);
  out->tmp_path = NULL;
  return (out->flags & GPUIMG_OUTPUT_FSYNC) ? sync_dir(out->path, what) : 0;
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

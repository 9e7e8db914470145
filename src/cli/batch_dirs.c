/* batch_dirs.c: batch inputs that are directories: the image files in them, by name, and
 * with --recursive those of their subdirectories, whose outputs mirror the tree under DIR. */
#define _XOPEN_SOURCE 700
#include "batch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Deeper directories than this are not descended into (a bound on path lengths). */
#define MAX_DEPTH 64

/* What a directory held besides images. */
typedef struct {
  int files;     /* of no format a codec built in reads (by content), or not regular files */
  int subdirs;   /* subdirectories not descended into (no --recursive) */
  int links;     /* symbolic links to directories (never followed) */
  dev_t out_dev; /* DIR, when it exists: never an input, also when inside the tree */
  ino_t out_ino;
  int have_out;
} skipped_t;

static int cmp_names(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **names, int n)
{
  for (int i = 0; i < n; i++)
    free(names[i]);
  free(names);
}

/* The entries of dir but . and .., sorted by strcmp: a malloc'd array of malloc'd names (free
 * with free_names), *n set; NULL with the error set. */
static char **list_dir(const char *dir, int *n)
{
  DIR *d = opendir(dir);
  char **names = calloc(64, sizeof *names);
  int cap = 64, oom = !names;
  struct dirent *e;
  *n = 0;
  if (!d) {
    gpuimg_error_set(gpuimg_file_errno_code(errno, GPUIMG_EXIT_INPUT), dir, "%s", strerror(errno));
    free(names);
    return NULL;
  }
  while (!oom && (e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
      continue;
    if (*n == cap) {
      char **more = realloc(names, (size_t)cap * 2 * sizeof *more);
      if (!(oom = !more)) {
        names = more;
        cap *= 2;
      }
    }
    if (!oom && !(oom = !(names[*n] = strdup(e->d_name))))
      ++*n;
  }
  closedir(d);
  if (oom) {
    free_names(names, *n);
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, dir, "out of memory");
    return NULL;
  }
  qsort(names, (size_t)*n, sizeof *names, cmp_names);
  return names;
}

/* Whether the file's first bytes begin a format a codec built in reads (the registry's
 * gpuimg_codec_recognised()). One that cannot be read counts as an image, so that its
 * conversion fails with the reason. Opened without blocking: a FIFO put
 * there since its stat() would wait for a writer (its conversion refuses it). */
static int is_image(const char *path)
{
  uint8_t head[12];
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return 1;
  ssize_t got = read(fd, head, sizeof head);
  close(fd);
  return got < 0 || gpuimg_codec_recognised(head, (size_t)got);
}

/* What an entry of an input directory is. */
typedef enum { ENTRY_DIR, ENTRY_IMAGE, ENTRY_LINKED_DIR, ENTRY_OTHER } entry_t;

/* Classifies path, *st set to its own lstat() for a directory. */
static entry_t classify(const char *path, struct stat *st)
{
  if (lstat(path, st) == 0 && S_ISDIR(st->st_mode))
    return ENTRY_DIR;
  struct stat target; /* what a link points to */
  if (stat(path, &target) < 0)
    return ENTRY_OTHER;
  if (S_ISDIR(target.st_mode))
    return ENTRY_LINKED_DIR;
  return S_ISREG(target.st_mode) && is_image(path) ? ENTRY_IMAGE : ENTRY_OTHER;
}

/* Adds the images of dir and, with --recursive, of its subdirectories (not links to them,
 * which are counted apart); rel as in batch_t. 0, or -1 with the error set. */
static int walk(batch_t *b, const char *dir, size_t rel, skipped_t *sk, int depth)
{
  int n, rc = 0;
  char **names = list_dir(dir, &n);
  size_t dlen = strlen(dir);
  int sep = dlen > 0 && dir[dlen - 1] != '/';
  if (!names)
    return -1;
  for (int i = 0; i < n && rc == 0; i++) {
    size_t len = dlen + (size_t)sep + strlen(names[i]) + 1;
    char *full = malloc(len);
    struct stat st;
    if (!full) {
      gpuimg_error_set(GPUIMG_EXIT_FAILURE, dir, "out of memory");
      rc = -1;
      break;
    }
    snprintf(full, len, "%s%s%s", dir, sep ? "/" : "", names[i]);
    entry_t kind = classify(full, &st);
    if (kind == ENTRY_IMAGE) {
      rc = batch_add_input(b, full, full, rel); /* which owns full */
      continue;
    }
    if (kind == ENTRY_DIR) {
      if (sk->have_out && st.st_dev == sk->out_dev && st.st_ino == sk->out_ino)
        ; /* DIR itself */
      else if (b->cli.recursive && depth < MAX_DEPTH)
        rc = walk(b, full, rel, sk, depth + 1);
      else
        sk->subdirs++;
    } else if (kind == ENTRY_LINKED_DIR) {
      sk->links++;
    } else {
      sk->files++;
    }
    free(full);
  }
  free_names(names, n);
  return rc;
}

/* Says on stderr what dir held besides images: "gpuimg: DIR: skipped A, B and C". */
static void say_skipped(const char *dir, const skipped_t *sk)
{
  char part[3][256], reads[192];
  int k = 0;
  if (sk->files)
    snprintf(part[k++], sizeof part[0], "%d %s (not %s)", sk->files,
             sk->files == 1 ? "file" : "files",
             gpuimg_format_list(GPUIMG_CODEC_DECODES, GPUIMG_SPELL_UPPER, ", ", " or ", reads,
                                sizeof reads));
  if (sk->subdirs)
    snprintf(part[k++], sizeof part[0], "%d %s (--recursive converts them too)", sk->subdirs,
             sk->subdirs == 1 ? "subdirectory" : "subdirectories");
  if (sk->links)
    snprintf(part[k++], sizeof part[0], "%d %s (not followed)", sk->links,
             sk->links == 1 ? "link to a directory" : "links to directories");
  if (!k)
    return;
  fprintf(stderr, "gpuimg: %s: skipped ", dir);
  for (int i = 0; i < k; i++)
    fprintf(stderr, "%s%s", i == 0 ? "" : i == k - 1 ? " and " : ", ", part[i]);
  fputc('\n', stderr);
}

int batch_add_dir(batch_t *b, const char *dir)
{
  skipped_t sk = {0};
  struct stat st;
  size_t dlen = strlen(dir);
  if (stat(b->outdir, &st) == 0) {
    sk.have_out = 1;
    sk.out_dev = st.st_dev;
    sk.out_ino = st.st_ino;
  }
  /* Without --recursive every output is named by its last component, as for a file given. */
  size_t rel = b->cli.recursive ? dlen + (dlen > 0 && dir[dlen - 1] != '/') : 0;
  if (walk(b, dir, rel, &sk, 0) < 0)
    return -1;
  if (!b->cli.plan.quiet)
    say_skipped(dir, &sk);
  return 0;
}

/* One directory of an output's name below DIR: made, or already a directory itself. A
 * symbolic link there is refused, whatever it points to, so that no output lands outside DIR
 * (as a link under the output's own name is replaced, never written through). */
static int make_dir(const char *path)
{
  struct stat st;
  if (mkdir(path, 0777) == 0)
    return 0;
  int err = errno;
  if (err == EEXIST && lstat(path, &st) == 0) { /* one made meanwhile is fine */
    if (S_ISDIR(st.st_mode))
      return 0;
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, path, "%s",
                     S_ISLNK(st.st_mode)
                         ? "is a symbolic link (outputs are written only inside DIR)"
                         : "is not a directory");
    return -1;
  }
  gpuimg_error_set(gpuimg_file_errno_code(err, GPUIMG_EXIT_OUTPUT), path,
                   "cannot create directory: %s", strerror(err));
  return -1;
}

int batch_make_parents(const item_t *it)
{
  char *path = strdup(it->output);
  int rc = 0;
  if (!path) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, it->output, "out of memory");
    return -1;
  }
  /* Each directory of the name below DIR, outermost first. */
  for (char *p = path + (it->name - it->output); (p = strchr(p, '/')); p++) {
    *p = '\0';
    if ((rc = make_dir(path)) < 0)
      break;
    *p = '/';
  }
  free(path);
  return rc;
}

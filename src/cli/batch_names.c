/* batch_names.c: batch mode's inputs and their output names: the input list, shard selection,
 * the output directory, names taken twice and outputs that would replace an input. */
#define _XOPEN_SOURCE 700
#include "batch.h"
#include "streams.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* FNV-1a, 64 bits, over the bytes of s: the shard hash (documented in the man page). */
static uint64_t fnv1a64(const char *s)
{
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; s++) {
    h ^= (unsigned char)*s;
    h *= 0x100000001b3ull;
  }
  return h;
}

int batch_add_input(batch_t *b, const char *input, char *owned, size_t rel)
{
  if (b->ninputs == b->cap || b->nowned == b->cap) {
    int ncap = b->cap * 2;
    const char **ni = realloc(b->inputs, (size_t)ncap * sizeof *ni);
    if (ni)
      b->inputs = ni;
    char **no = realloc(b->owned, (size_t)ncap * sizeof *no);
    if (no)
      b->owned = no;
    size_t *nr = realloc(b->rel, (size_t)ncap * sizeof *nr);
    if (nr)
      b->rel = nr;
    if (!ni || !no || !nr) {
      free(owned);
      gpuimg_error_set(GPUIMG_EXIT_FAILURE, input, "out of memory");
      return -1;
    }
    b->cap = ncap;
  }
  if (owned)
    b->owned[b->nowned++] = owned;
  b->rel[b->ninputs] = rel;
  b->inputs[b->ninputs++] = input;
  return 0;
}

/* Appends the non-empty lines of the list (path, "-" = stdin) to the inputs. A trailing CR is
 * dropped, so lists written on Windows work. 0, or -1 with the error set (exit 3). */
static int read_list(batch_t *b, const char *path)
{
  int is_stdin = strcmp(path, "-") == 0;
  const char *what = is_stdin ? "<stdin>" : path;
  if (is_stdin && gpuimg_stream_closed(STDIN_FILENO)) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "standard input is closed");
    return -1;
  }
  FILE *f = is_stdin ? stdin : fopen(path, "r");
  char *line = NULL;
  size_t size = 0;
  ssize_t len;
  int rc = 0, lineno = 0;

  if (!f) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "%s", strerror(errno));
    return -1;
  }
  while ((len = getline(&line, &size, f)) >= 0) {
    lineno++;
    if (len > 0 && line[len - 1] == '\n')
      line[--len] = '\0';
    if (len > 0 && line[len - 1] == '\r')
      line[--len] = '\0';
    if (len == 0)
      continue;
    if (strlen(line) != (size_t)len) {
      gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "line %d holds a NUL byte", lineno);
      rc = -1;
      break;
    }
    rc = batch_add_input(b, line, line, 0);
    line = NULL;
    size = 0;
    if (rc < 0)
      break;
  }
  if (rc == 0 && ferror(f)) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "%s", strerror(errno));
    rc = -1;
  }
  free(line);
  if (!is_stdin)
    fclose(f);
  return rc;
}

int batch_read_inputs(batch_t *b)
{
  const gpuimg_cli_t *cli = &b->cli;
  b->cap = cli->ninputs + 64;
  if (!(b->inputs = batch_calloc((size_t)b->cap, sizeof *b->inputs)) ||
      !(b->owned = batch_calloc((size_t)b->cap, sizeof *b->owned)) ||
      !(b->rel = batch_calloc((size_t)b->cap, sizeof *b->rel)))
    return -1;
  for (int i = 0; i < cli->ninputs; i++) {
    struct stat st;
    int rc = stat(cli->inputs[i], &st) == 0 && S_ISDIR(st.st_mode)
                 ? batch_add_dir(b, cli->inputs[i])
                 : batch_add_input(b, cli->inputs[i], NULL, 0);
    if (rc < 0)
      return -1;
  }
  if (cli->from && read_list(b, cli->from) < 0)
    return -1;
  return 0;
}

/* The output name of input: its last component (with rel, the path from there: a file found
 * under a directory given with --recursive) with the extension of --format, or its own
 * extension when that names a format gpuimg writes (kept as spelled: .jpeg, .PNG), else
 * with .png. A leading dot does not start an extension (".hidden" -> ".hidden.png"). */
static int name_output(batch_t *b, item_t *it, size_t rel)
{
  const char *slash = strrchr(it->input, '/');
  const char *last = slash ? slash + 1 : it->input;
  const char *base = rel ? it->input + rel : last;
  const char *dot = strrchr(last, '.');
  size_t stem = dot && dot != last ? (size_t)(dot - base) : strlen(base);
  const char *new_ext;

  if (b->cli.batch_format != GPUIMG_FORMAT_NONE) {
    it->format = b->cli.batch_format;
    new_ext = gpuimg_format_extension(it->format);
  } else if (dot && dot != last &&
             (it->format = gpuimg_format_from_name(last)) != GPUIMG_FORMAT_NONE) {
    new_ext = dot + 1;
  } else {
    it->format = GPUIMG_FORMAT_PNG;
    new_ext = "png";
  }
  size_t dlen = strlen(b->outdir);
  int sep = dlen > 0 && b->outdir[dlen - 1] != '/';
  size_t len = dlen + (size_t)sep + stem + 1 + strlen(new_ext) + 1;
  if (!(it->output = malloc(len))) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return -1;
  }
  snprintf(it->output, len, "%s%s%.*s.%s", b->outdir, sep ? "/" : "", (int)stem, base, new_ext);
  it->name = it->output + dlen + (size_t)sep;
  return 0;
}

/* An open-addressing table of output names (all in DIR), or of the directories in them: each
 * key is the first len bytes of an item's name, the item that took it first. */
typedef struct {
  int item; /* -1: empty */
  size_t len;
} name_slot_t;

typedef struct {
  name_slot_t *slot;
  size_t mask;
} name_table_t;

static int table_init(name_table_t *t, size_t n)
{
  size_t size = 16;
  while (size < n * 2)
    size *= 2;
  if (!(t->slot = malloc(size * sizeof *t->slot))) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return -1;
  }
  for (size_t i = 0; i < size; i++)
    t->slot[i].item = -1;
  t->mask = size - 1;
  return 0;
}

/* The item holding name (len bytes), or -1; with add >= 0, add takes the name when nobody
 * has it. */
static int table_find(name_table_t *t, const item_t *items, const char *name, size_t len, int add)
{
  size_t h = (size_t)2166136261u;
  for (size_t i = 0; i < len; i++)
    h = (h ^ (unsigned char)name[i]) * 16777619u;
  for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
    const name_slot_t *e = &t->slot[i];
    if (e->item < 0) {
      if (add >= 0)
        t->slot[i] = (name_slot_t){.item = add, .len = len};
      return -1;
    }
    if (e->len == len && memcmp(items[e->item].name, name, len) == 0)
      return e->item;
  }
}

/* The names (names) and their directories (dirs) the items before have taken. */
typedef struct {
  name_table_t names, dirs;
} taken_t;

static int taken_init(taken_t *tk, const batch_t *b)
{
  size_t ndirs = 0;
  for (int i = 0; i < b->nitems; i++)
    for (const char *p = b->items[i].name; (p = strchr(p, '/')); p++)
      ndirs++;
  return table_init(&tk->names, (size_t)b->nitems) < 0 || table_init(&tk->dirs, ndirs) < 0 ? -1 : 0;
}

/* An earlier item whose output cannot stand beside item i's: its output is i's name or
 * one of the directories of i's name, or has i's name as one of its own directories (a
 * name cannot be both a file and a directory). *same: it is the very name. -1: none. */
static int taken_by(taken_t *tk, const item_t *items, int i, int *same)
{
  const char *name = items[i].name;
  int k = table_find(&tk->names, items, name, strlen(name), -1);
  *same = k >= 0;
  if (k < 0)
    k = table_find(&tk->dirs, items, name, strlen(name), -1);
  for (const char *p = name; k < 0 && (p = strchr(p, '/')); p++)
    k = table_find(&tk->names, items, name, (size_t)(p - name), -1);
  return k;
}

/* Item i takes its name and its name's directories. */
static void take(taken_t *tk, const item_t *items, int i)
{
  const char *name = items[i].name;
  table_find(&tk->names, items, name, strlen(name), i);
  for (const char *p = name; (p = strchr(p, '/')); p++)
    table_find(&tk->dirs, items, name, (size_t)(p - name), i);
}

/* Fails, before any work and in input order, the items whose output name an earlier item
 * already has or cannot stand beside (the one a file where the other needs a directory), and
 * those whose output is one of the inputs (by path: the input's directory resolves to DIR).
 * Decided over the whole list, not just this shard, so that shards of one list never write
 * the same file and the outcome depends neither on scheduling nor on sharding. */
static int check_names(batch_t *b)
{
  taken_t tk = {{0}, {0}};
  char *canon_dir = realpath(b->outdir, NULL), *last_dir = NULL, *last_canon = NULL;
  int rc = -1;

  if (!canon_dir) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, b->outdir, "%s", strerror(errno));
    return -1;
  }
  if (taken_init(&tk, b) < 0)
    goto done;
  for (int i = 0; i < b->nitems; i++) {
    item_t *it = &b->items[i];
    if (it->bad_name)
      continue;
    int same, first = taken_by(&tk, b->items, i, &same);
    if (first < 0) {
      take(&tk, b->items, i);
    } else if (it->selected) {
      char msg[4096];
      if (same)
        snprintf(msg, sizeof msg, "%s: output %s is already the output of %s", it->input,
                 it->output, b->items[first].input);
      else
        snprintf(msg, sizeof msg,
                 "%s: output %s conflicts with %s, the output of %s (a name cannot be both a "
                 "file and a directory)",
                 it->input, it->output, b->items[first].output, b->items[first].input);
      batch_fail_item(b, it, GPUIMG_EXIT_OUTPUT, msg);
    }
  }
  for (int i = 0; i < b->nitems; i++) {
    const item_t *in = &b->items[i];
    if (in->bad_name)
      continue;
    const char *slash = strrchr(in->input, '/');
    const char *base = slash ? slash + 1 : in->input;
    int k = table_find(&tk.names, b->items, base, strlen(base), -1);
    if (k < 0 || !b->items[k].selected || b->items[k].status == ITEM_FAILED)
      continue;
    /* Same name: is the input's directory DIR? (cached: lists come grouped by directory) */
    size_t dlen = slash ? (size_t)(slash - in->input) + 1 : 0;
    if (!last_dir || strlen(last_dir) != dlen || memcmp(last_dir, in->input, dlen) != 0) {
      free(last_dir);
      free(last_canon);
      last_dir = slash ? strndup(in->input, dlen) : strdup("");
      last_canon = last_dir ? realpath(dlen ? last_dir : ".", NULL) : NULL;
      if (!last_dir)
        goto done;
    }
    if (last_canon && strcmp(last_canon, canon_dir) == 0) {
      char msg[4096];
      snprintf(msg, sizeof msg, "%s: is an input file (refusing to overwrite it)",
               b->items[k].output);
      batch_fail_item(b, &b->items[k], GPUIMG_EXIT_OUTPUT, msg);
    }
  }
  rc = 0;
done:
  if (rc < 0 && gpuimg_error_code() == GPUIMG_EXIT_OK)
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
  free(tk.names.slot);
  free(tk.dirs.slot);
  free(canon_dir);
  free(last_dir);
  free(last_canon);
  return rc;
}

static int cmp_id(const void *a, const void *b)
{
  const file_id_t *x = a, *y = b;
  if (x->dev != y->dev)
    return x->dev < y->dev ? -1 : 1;
  return (x->ino > y->ino) - (x->ino < y->ino);
}

/* Whether st is one of the inputs or masks (the same file, also through a link). The set is
 * built on the first call: most batches write into a fresh directory and never need it. */
int batch_is_input(batch_t *b, const struct stat *st)
{
  pthread_mutex_lock(&b->ids_mu);
  if (!b->ids_built) {
    b->ids_built = 1;
    b->ids = calloc((size_t)b->nitems + GPUIMG_MAX_STEPS + 1, sizeof *b->ids);
    for (int i = 0, takes; b->ids && i < b->nitems + b->cli.plan.nsteps; i++) {
      const char *path = i < b->nitems ? b->items[i].input
                                       : gpuimg_flow_mask_path(&b->cli.plan, i - b->nitems, &takes);
      struct stat s;
      if (path && strcmp(path, "-") && stat(path, &s) == 0) {
        b->ids[b->nids].dev = s.st_dev;
        b->ids[b->nids].ino = s.st_ino;
        b->nids++;
      }
    }
    if (b->ids)
      qsort(b->ids, b->nids, sizeof *b->ids, cmp_id);
  }
  pthread_mutex_unlock(&b->ids_mu);
  file_id_t key = {st->st_dev, st->st_ino};
  /* Without the set (out of memory) every existing output counts as an input: refuse. */
  return !b->ids || bsearch(&key, b->ids, b->nids, sizeof key, cmp_id) != NULL;
}

/* DIR exists as a directory we can write into, or is created (one level: its parent must
 * exist, as with mkdir without -p). */
int batch_prepare_outdir(const char *dir)
{
  struct stat st;
  if (stat(dir, &st) < 0) {
    if (errno != ENOENT || (mkdir(dir, 0777) < 0 && errno != EEXIST)) {
      gpuimg_error_set(GPUIMG_EXIT_OUTPUT, dir, "cannot create directory: %s", strerror(errno));
      return -1;
    }
  } else if (!S_ISDIR(st.st_mode)) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, dir, "not a directory");
    return -1;
  }
  if (access(dir, W_OK | X_OK) < 0) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, dir, "cannot write into the directory: %s",
                     strerror(errno));
    return -1;
  }
  return 0;
}

/* Item i of the input list: its shard and output name, failed at once when the input has no
 * file name. */
static int make_item(batch_t *b, int i)
{
  const gpuimg_cli_t *cli = &b->cli;
  item_t *it = &b->items[i];
  it->input = b->inputs[i];
  it->worker = -1;
  for (int k = 0; k < IV_COUNT; k++)
    it->iv[k][0] = it->iv[k][1] = -1;
  it->selected =
      !cli->shard_n || fnv1a64(it->input) % (uint64_t)cli->shard_n == (uint64_t)(cli->shard_k - 1);
  if (!it->selected)
    it->status = ITEM_SKIPPED;
  b->nselected += it->selected;
  if (name_output(b, it, b->rel[i]) < 0)
    return -1;
  const char *slash = strrchr(it->input, '/');
  const char *base = slash ? slash + 1 : it->input;
  if (!base[0] || !strcmp(base, ".") || !strcmp(base, "..")) {
    it->bad_name = 1;
    if (it->selected) {
      char msg[4096];
      snprintf(msg, sizeof msg, "%s: not a file name (no output name can be made from it)",
               it->input);
      batch_fail_item(b, it, GPUIMG_EXIT_INPUT, msg);
    }
  }
  return 0;
}

int batch_make_items(batch_t *b)
{
  if (!(b->items = batch_calloc((size_t)b->ninputs, sizeof *b->items)) ||
      !(b->todo = batch_calloc((size_t)b->ninputs, sizeof *b->todo)))
    return -1;
  b->nitems = b->ninputs;
  for (int i = 0; i < b->ninputs; i++)
    if (make_item(b, i) < 0)
      return -1;
  return check_names(b);
}

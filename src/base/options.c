/* options.c: the one command-line option parser and help printer, driven by option tables. */
#include "options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int gpuimg_options_decimal(const char *s, int sign, int fraction)
{
  int digits = 0, point = 0;
  if (sign && *s == '-')
    s++;
  for (; *s; s++) {
    if (*s >= '0' && *s <= '9')
      digits++;
    else if (*s == '.' && fraction && !point)
      point = 1;
    else
      return 0;
  }
  return digits > 0;
}

int gpuimg_options_size(const char *s, long long max, long long *w, long long *h)
{
  char side[24];
  const char *x = strpbrk(s, "xX");
  if (!x || (size_t)(x - s) >= sizeof side)
    return -1;
  memcpy(side, s, (size_t)(x - s));
  side[x - s] = '\0';
  if (!gpuimg_options_decimal(side, 0, 0) || !gpuimg_options_decimal(x + 1, 0, 0))
    return -1;
  errno = 0;
  *w = strtoll(side, NULL, 10);
  *h = strtoll(x + 1, NULL, 10);
  return errno || *w < 1 || *h < 1 || *w > max || *h > max ? -1 : 0;
}

int gpuimg_options_int(const char *what, const char *s, long long lo, long long hi, long long *out)
{
  long long v = 0;
  int ok = gpuimg_options_decimal(s, lo < 0, 0);
  if (ok) {
    errno = 0;
    v = strtoll(s, NULL, 10);
    ok = !errno && v >= lo && v <= hi;
  }
  if (!ok) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, what,
                     "invalid value '%s' (expected an integer from %lld to %lld)", s, lo, hi);
    return -1;
  }
  *out = v;
  return 0;
}

int gpuimg_env_int(const char *name, int def, int lo, int hi)
{
  const char *s = getenv(name);
  char *end;
  if (!s || !*s)
    return def;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (end == s || *end)
    return def;
  if (errno == ERANGE) /* clamped below like any other value out of range */
    v = v < 0 ? lo : hi;
  return v < lo ? lo : v > hi ? hi : (int)v;
}

double gpuimg_env_fraction(const char *name, double def)
{
  const char *s = getenv(name);
  char *end;
  if (!s || !*s)
    return def;
  double v = strtod(s, &end);
  if (end == s || *end || v != v) /* v != v: NaN */
    return def;
  return v < 0 ? 0 : v > 1 ? 1 : v;
}

const gpuimg_option_t *gpuimg_options_find(const gpuimg_option_t *table, const char *name,
                                           size_t len, char short_name)
{
  for (const gpuimg_option_t *o = table; o->long_name; o++) {
    if (name && strlen(o->long_name) == len && strncmp(o->long_name, name, len) == 0)
      return o;
    if (!name && short_name && o->short_name == short_name)
      return o;
  }
  return NULL;
}

/* "invalid value 'x' (expected a, b or c)" for a CHOICE. */
static int bad_choice(const gpuimg_option_t *o, const char *spelled, const char *arg)
{
  char list[256] = "";
  size_t n = 0;
  while (o->choices[n])
    n++;
  for (size_t k = 0; k < n; k++) {
    const char *sep = k == 0 ? "" : k + 1 == n ? " or " : ", ";
    size_t used = strlen(list);
    snprintf(list + used, sizeof list - used, "%s%s", sep, o->choices[k]);
  }
  gpuimg_error_set(GPUIMG_EXIT_USAGE, spelled, "invalid value '%s' (expected %s)", arg, list);
  return -1;
}

static int apply_choice(const gpuimg_option_t *o, const char *spelled, const char *arg,
                        void *target)
{
  for (int k = 0; o->choices[k]; k++)
    if (strcmp(o->choices[k], arg) == 0) {
      *(int *)((char *)target + o->offset) = k;
      return o->parse ? o->parse(o, spelled, arg, target) : 0;
    }
  return bad_choice(o, spelled, arg);
}

int gpuimg_options_apply(const gpuimg_option_t *o, const char *spelled, const char *arg,
                         void *target)
{
  char *field = (char *)target + o->offset;
  long long v;
  /* The command line's parser has matched values to options already; a library caller has
   * not: a flag takes no value, any other option one. */
  if ((o->kind == GPUIMG_OPTION_FLAG) != (arg == NULL)) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, spelled, arg ? "takes no value" : "missing value");
    return -1;
  }
  switch (o->kind) {
  case GPUIMG_OPTION_FLAG:
    *(int *)field = o->value;
    return 0;
  case GPUIMG_OPTION_INT:
  case GPUIMG_OPTION_U64:
    if (gpuimg_options_int(spelled, arg, o->min, o->max, &v) < 0)
      return -1;
    if (o->kind == GPUIMG_OPTION_INT)
      *(int *)field = (int)v;
    else
      *(uint64_t *)field = (uint64_t)v;
    return 0;
  case GPUIMG_OPTION_STRING:
    if (!arg[0]) {
      gpuimg_error_set(GPUIMG_EXIT_USAGE, spelled, "empty %s",
                       o->empty_what ? o->empty_what : "value");
      return -1;
    }
    *(const char **)field = arg;
    return 0;
  case GPUIMG_OPTION_CHOICE:
    return apply_choice(o, spelled, arg, target);
  case GPUIMG_OPTION_CUSTOM:
    return o->parse(o, spelled, arg, target);
  }
  gpuimg_error_set(GPUIMG_EXIT_USAGE, spelled, "unhandled option");
  return -1;
}

/* Finds argv[i]'s option in the sets: its set's index, or -1 (spelled says what was
 * looked for). *value is the value given inside the argument ("--x=v", "-xv") or NULL. */
static int lookup(const char *a, const gpuimg_option_set_t *sets, int nsets,
                  const gpuimg_option_t **found, const char **value, char *spelled)
{
  const char *name = a[1] == '-' ? a + 2 : NULL;
  const char *eq = name ? strchr(name, '=') : NULL;
  size_t len = name ? (eq ? (size_t)(eq - name) : strlen(name)) : 0;
  if (name)
    snprintf(spelled, 64, "--%.*s", (int)(len < 40 ? len : 40), name);
  else
    snprintf(spelled, 64, "-%c", a[1]);
  *value = eq ? eq + 1 : (!name && a[2] ? a + 2 : NULL);
  for (int s = 0; s < nsets; s++) {
    *found = gpuimg_options_find(sets[s].table, name, len, name ? 0 : a[1]);
    if (*found)
      return s;
  }
  return -1;
}

int gpuimg_options_match(gpuimg_args_t *args, const gpuimg_option_set_t *sets, int nsets,
                         int *which, const gpuimg_option_t **option, const char **value,
                         char *spelled)
{
  const char *a = args->argv[args->i];
  const gpuimg_option_t *o;
  const char *arg;
  int s = lookup(a, sets, nsets, &o, &arg, spelled);
  if (s < 0)
    return 1;
  int takes_value = o->kind != GPUIMG_OPTION_FLAG;
  if (arg && !takes_value) {
    if (a[1] != '-') { /* "-qx": not an option we know */
      snprintf(spelled, 64, "%.63s", a);
      return 1;
    }
    gpuimg_error_set(GPUIMG_EXIT_USAGE, spelled, "takes no value");
    return -1;
  }
  if (takes_value && !arg) {
    if (args->i + 1 >= args->argc) {
      gpuimg_error_set(GPUIMG_EXIT_USAGE, spelled, "missing value");
      return -1;
    }
    arg = args->argv[++args->i];
  }
  *which = s;
  *option = o;
  *value = arg;
  return 0;
}

int gpuimg_options_parse(gpuimg_args_t *args, const gpuimg_option_set_t *sets, int nsets,
                         int *which, char *spelled)
{
  const gpuimg_option_t *o;
  const char *arg;
  int s, rc = gpuimg_options_match(args, sets, nsets, &s, &o, &arg, spelled);
  if (rc != 0)
    return rc;
  if (which)
    *which = s;
  return gpuimg_options_apply(o, spelled, arg, sets[s].target);
}

/* o's help, with "%s" replaced by its values where it lists them, into buf (cap bytes). */
static const char *help_text(const gpuimg_option_t *o, char *buf, size_t cap)
{
  const char *at = o->values ? strstr(o->help, "%s") : NULL;
  char values[512];
  if (!at)
    return o->help;
  snprintf(buf, cap, "%.*s%s%s", (int)(at - o->help), o->help,
           o->values(", ", " or ", values, sizeof values), at + 2);
  return buf;
}

void gpuimg_options_help(FILE *f, const gpuimg_option_t *table, int indent, int width)
{
  for (const gpuimg_option_t *o = table; o->long_name; o++) {
    if (!o->help)
      continue;
    char left[96], text[1024];
    int n = o->short_name ? snprintf(left, sizeof left, "-%c, --%s", o->short_name, o->long_name)
                          : snprintf(left, sizeof left, "--%s", o->long_name);
    if (o->metavar && n > 0 && (size_t)n < sizeof left)
      snprintf(left + n, sizeof left - (size_t)n, " %s", o->metavar);
    const char *h = help_text(o, text, sizeof text);
    int first = 1;
    while (*h) {
      const char *nl = strchr(h, '\n');
      int len = nl ? (int)(nl - h) : (int)strlen(h);
      fprintf(f, "%*s%-*s %.*s\n", indent, "", width, first ? left : "", len, h);
      first = 0;
      h += len + (nl ? 1 : 0);
    }
  }
}

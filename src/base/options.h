/* options.h: table-driven command-line options: each entry names an option, its kind, range
 * and help, and where in a struct its value goes; one parser and one help printer read them. */
#ifndef GPUIMG_OPTIONS_H
#define GPUIMG_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  GPUIMG_OPTION_FLAG,   /* no value: the int field is set to `value` */
  GPUIMG_OPTION_INT,    /* an int field, min..max */
  GPUIMG_OPTION_U64,    /* a uint64_t field, min..max */
  GPUIMG_OPTION_STRING, /* a const char * field pointing into argv; never empty */
  GPUIMG_OPTION_CHOICE, /* an int field set to the index of the value in `choices` */
  GPUIMG_OPTION_CUSTOM, /* `parse` reads the value */
} gpuimg_option_kind_t;

typedef struct gpuimg_option gpuimg_option_t;

struct gpuimg_option {
  const char *long_name; /* without "--"; NULL ends a table */
  char short_name;       /* 0: none */
  gpuimg_option_kind_t kind;
  size_t offset;              /* offsetof() the field in the struct the table fills */
  long long min, max;         /* INT and U64 */
  int value;                  /* FLAG */
  const char *const *choices; /* CHOICE: NULL-terminated names */
  /* CUSTOM: writes the values it takes into buf (cap bytes), separated by sep, the last two
   * by last, and returns buf: what help's "%s" stands for (", " and " or ": "a, b or c") and
   * what the completion offers. NULL: its values are not a list (a file name, ...). */
  const char *(*values)(const char *sep, const char *last, char *buf, size_t cap);
  const char *metavar;    /* the value in --help ("N", "FILE"); NULL for a FLAG */
  const char *help;       /* --help text; '\n' starts a continuation line */
  const char *empty_what; /* STRING: "file name" for "empty file name" */
  /* CUSTOM: reads arg into target (the whole struct); -1 with a usage error set against
   * spelled ("--block"). Also run after a CHOICE is stored, to refuse a choice the build
   * lacks or to set what follows from it (NULL: none). */
  int (*parse)(const gpuimg_option_t *o, const char *spelled, const char *arg, void *target);
};

/* One table and the struct it fills. */
typedef struct {
  const gpuimg_option_t *table;
  void *target;
} gpuimg_option_set_t;

/* Where the next option's value is: the argument after an option that takes one. */
typedef struct {
  int argc;
  char **argv;
  int i; /* the option's index; advanced past a separate value */
} gpuimg_args_t;

/* The option argv[i] names ("--name", "--name=value", "-x", "-xVALUE"), looked up in the
 * tables of sets in order: the first that has it gets its value. 0 applied (*which says
 * which set, when which is not NULL); 1 no table has it (nothing set: the caller says which
 * error; spelled holds "--name" or "-x"); -1 a usage error (exit 2) is set: a bad value, a
 * value missing or given to a flag. spelled has room for 64 bytes. */
int gpuimg_options_parse(gpuimg_args_t *args, const gpuimg_option_set_t *sets, int nsets,
                         int *which, char *spelled);

/* gpuimg_options_parse() without applying the value: finds the option (*which its set,
 * *option the entry, *value its value or NULL for a flag, args->i advanced past a separate
 * value). 0 found, 1 no table has it, -1 a usage error (a value missing or given to a
 * flag), as gpuimg_options_parse() says. For callers that check more before applying. */
int gpuimg_options_match(gpuimg_args_t *args, const gpuimg_option_set_t *sets, int nsets,
                         int *which, const gpuimg_option_t **option, const char **value,
                         char *spelled);

/* Looks name up in table (NULL-terminated); NULL when it has none of that name. */
const gpuimg_option_t *gpuimg_options_find(const gpuimg_option_t *table, const char *name,
                                           size_t len, char short_name);

/* Applies one option with its value (NULL for a flag) to target: what the parser does once
 * it has found the option. 0, or -1 with a usage error set (also for a value given to a flag,
 * "takes no value", and none given to another option, "missing value"). */
int gpuimg_options_apply(const gpuimg_option_t *o, const char *spelled, const char *arg,
                         void *target);

/* Prints the table's --help lines, indented by indent, the option column width wide. */
void gpuimg_options_help(FILE *f, const gpuimg_option_t *table, int indent, int width);

/* Whether s is a number as the command line writes one: decimal digits, after a '-' where
 * sign allows one, with one '.' among them where fraction allows it; nothing else (no blank,
 * '+', exponent or hexadecimal, which strtoll() and strtod() would read). */
int gpuimg_options_decimal(const char *s, int sign, int fraction);

/* "WxH" (or "WXH"), each side decimal digits from 1 to max, into *w and *h: 0, or -1 (no
 * error set: the caller says what it expected). */
int gpuimg_options_size(const char *s, long long max, long long *w, long long *h);

/* Integer from lo to hi (decimal digits, '-' first where lo is negative), with range and
 * overflow checks; -1 with "invalid value ..." set against what (exit 2). */
int gpuimg_options_int(const char *what, const char *s, long long lo, long long hi, long long *out);

/* The environment variable name as an integer clamped to lo..hi (a measurement knob); def when
 * it is unset, empty or not a whole number. */
int gpuimg_env_int(const char *name, int def, int lo, int hi);

/* The environment variable name as a number from 0 to 1 (values beyond are clamped); def
 * when it is unset, empty, not a number or has anything after the number. */
double gpuimg_env_fraction(const char *name, double def);

#ifdef __cplusplus
}
#endif

#endif

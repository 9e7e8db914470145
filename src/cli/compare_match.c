/* compare_match.c: `gpuimg compare`'s two files side by side: comparable platforms, one row
 * per stage key, and each row's verdict against the threshold and the noise. */
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *compare_row_key(const row_t *r)
{
  return r->base ? r->base->key : r->cur->key;
}

/* "device 'A' in BASE, 'B' in CUR" for the first field where a and b differ. */
static void platform_diff(const platform_t *a, const char *a_name, const platform_t *b,
                          const char *b_name, char *out, size_t size)
{
  static const char *const field[] = {"backend", "device", "compute capability",
                                      "CUDA runtime major version"};
  const char *va[] = {a->backend, a->device, a->cc, a->runtime_major};
  const char *vb[] = {b->backend, b->device, b->cc, b->runtime_major};
  for (int i = 0; i < 4; i++)
    if (strcmp(va[i], vb[i])) {
      snprintf(out, size, "%s '%s' in %s, '%s' in %s", field[i], va[i][0] ? va[i] : "none", a_name,
               vb[i][0] ? vb[i] : "none", b_name);
      return;
    }
  snprintf(out, size, "same platform");
}

/* The two files are comparable when their runs come from the same set of platforms. */
int compare_check_platforms(const runs_t *base, const runs_t *cur, const compare_options_t *o)
{
  char diff[1024];
  diff[0] = '\0';
  for (int i = 0; i < base->nplatforms && !diff[0]; i++) {
    int found = 0;
    for (int k = 0; k < cur->nplatforms; k++)
      found |= compare_platform_eq(&base->platforms[i], &cur->platforms[k]);
    if (!found)
      platform_diff(&base->platforms[i], base->name, &cur->platforms[0], cur->name, diff,
                    sizeof diff);
  }
  for (int k = 0; k < cur->nplatforms && !diff[0]; k++) {
    int found = 0;
    for (int i = 0; i < base->nplatforms; i++)
      found |= compare_platform_eq(&base->platforms[i], &cur->platforms[k]);
    if (!found)
      platform_diff(&base->platforms[0], base->name, &cur->platforms[k], cur->name, diff,
                    sizeof diff);
  }
  if (!diff[0])
    return 0;
  if (o->force) {
    fprintf(stderr, "gpuimg: compare: warning: not comparable: %s (compared anyway: --force)\n",
            diff);
    return 0;
  }
  gpuimg_error_set(GPUIMG_EXIT_INPUT, "compare", "not comparable: %s (--force compares anyway)",
                   diff);
  return -1;
}

static int add_row(result_t *res, const entry_t *base, const entry_t *cur,
                   const compare_options_t *o)
{
  if (compare_grow(&res->rows, res->nrows, &res->cap, sizeof *res->rows) < 0)
    return compare_out_of_memory("compare");
  row_t *r = &res->rows[res->nrows++];
  memset(r, 0, sizeof *r);
  r->base = base;
  r->cur = cur;
  r->change_pct = NAN;
  r->noise_pct = base ? base->noise_pct : 0;
  if (cur && cur->noise_pct > r->noise_pct)
    r->noise_pct = cur->noise_pct;
  r->limit_pct = o->threshold + r->noise_pct;
  if (!cur) {
    r->verdict = V_MISSING;
    res->missing++;
    return 0;
  }
  if (!base) {
    r->verdict = V_NEW;
    res->added++;
    return 0;
  }
  double limit = 1.0 + r->limit_pct / 100.0;
  res->compared++;
  if (base->median > 0) /* rounded to 0.01, so equal medians never show as -0.0% */
    r->change_pct = round(1e4 * (cur->median - base->median) / base->median) / 100.0 + 0.0;
  if (cur->median > base->median * limit) {
    r->verdict = V_SLOWER;
    res->slower++;
  } else if (base->median > cur->median * limit) {
    r->verdict = V_FASTER;
    res->faster++;
  } else {
    r->verdict = V_OK;
  }
  return 0;
}

int compare_match(const runs_t *base, const runs_t *cur, const compare_options_t *o, result_t *res)
{
  char *matched = calloc((size_t)cur->nentries + 1, 1);
  if (!matched)
    return compare_out_of_memory("compare");
  int rc = 0;
  for (int i = 0; i < base->nentries && rc == 0; i++) {
    const entry_t *c = compare_find_entry(cur, base->entries[i].key);
    if (c)
      matched[c - cur->entries] = 1;
    rc = add_row(res, &base->entries[i], c, o);
  }
  for (int k = 0; k < cur->nentries && rc == 0; k++)
    if (!matched[k])
      rc = add_row(res, NULL, &cur->entries[k], o);
  free(matched);
  if (rc < 0 || res->compared > 0)
    return rc;

  /* Nothing in common: different commands, options, sizes or backends. */
  if (base->nentries == 0 && cur->nentries == 0)
    gpuimg_error_set(GPUIMG_EXIT_INPUT, "compare",
                     "no stage to compare in %s or %s (--all-stages adds the host I/O stages)",
                     base->name, cur->name);
  else
    gpuimg_error_set(GPUIMG_EXIT_INPUT, "compare",
                     "no stage of %s matches a stage of %s (operations, options, variant, "
                     "image size or backend differ; --force compares anyway)",
                     base->name, cur->name);
  if (!o->force)
    return -1;
  fprintf(stderr, "gpuimg: %s\n", gpuimg_error_message());
  gpuimg_error_clear();
  return 0;
}

int compare_failed(const result_t *res, const compare_options_t *o)
{
  return res->slower > 0 || (res->missing > 0 && !o->allow_missing);
}

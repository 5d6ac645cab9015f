/*
 * nearest.h — "did you mean ...?" for a name that matched nothing: the known
 * names nearest to it, for the one-line errors of an unknown preset, GPU type or
 * link (README "Bad input gets one line naming the field").
 *
 * Nearness is the Levenshtein distance with letter case ignored (presets and GPU
 * types are found case-insensitively, so "llama3-8b" is no typo), except that a
 * name of at least 3 characters that begins a known one counts 1 ("A100" for
 * A100-40G and A100-80G, "mixtral" for Mixtral-8x7B). A guess further than a
 * third of the name's length (plus one) would mislead and is not made. The best
 * distance wins; ties are all kept, up to TSL_NEAREST_MAX in the order offered.
 *
 * Usage: tsl_nearest_init(&n, typed); tsl_nearest_offer(&n, known) for every
 * known name; tsl_nearest_hint(&n, buf, cap) → " (did you mean X?)" or "".
 * Candidates are compared on their first 63 characters.
 *
 * Pure: no allocation, no I/O. The offered strings must outlive the hint.
 */
#ifndef TSL_NEAREST_H
#define TSL_NEAREST_H

#include <stdbool.h>
#include <stddef.h>

#define TSL_NEAREST_MAX 3

/* Levenshtein distance of a[0..an) and b[0..bn), each cut to its first 63
 * characters, letter case ignored when fold_case (names found case-insensitively)
 * and kept otherwise (TOML keys). */
unsigned tsl_edit_distance(const char *a, size_t an, const char *b, size_t bn, bool fold_case);

typedef struct tsl_nearest {
    const char *name;                  /* what was typed */
    unsigned best;                     /* distance of hits[], or the bar to beat */
    const char *hits[TSL_NEAREST_MAX]; /* the nearest candidates so far */
    size_t n_hits;
} tsl_nearest_t;

void tsl_nearest_init(tsl_nearest_t *n, const char *name);

/* Weighs one known name (NULL or "" ignored). */
void tsl_nearest_offer(tsl_nearest_t *n, const char *candidate);

/* " (did you mean A?)" / " (did you mean A or B?)" / " (did you mean A, B or C?)"
 * into buf, or "" when nothing was near; returns buf. */
const char *tsl_nearest_hint(const tsl_nearest_t *n, char *buf, size_t cap);

/* The word of a space-separated list nearest to name by tsl_edit_distance, case
 * kept (TOML keys, Megatron flags), into buf; "" when none is within a third of
 * name's length (plus one). The first of equally near words wins. Returns buf. */
const char *tsl_nearest_word(const char *name, const char *list, char *buf, size_t cap);

#endif

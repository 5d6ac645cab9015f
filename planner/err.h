/*
 * err.h — the error buffer every fallible Tessel function fills.
 *
 * Contract: a function that fails returns -1 (or a non-zero status) and, when
 * given a non-NULL tsl_err_t, writes one line a person can act on: it names the
 * field and says what was wrong ("memory: 0 is not a valid budget; give e.g. 16G").
 * The buffer is fixed-size so that reporting an error never allocates.
 */
#ifndef TSL_ERR_H
#define TSL_ERR_H

#include <stddef.h>

#define TSL_ERR_MAX 512

typedef struct tsl_err {
    char msg[TSL_ERR_MAX];
} tsl_err_t;

/* Formats into err (when non-NULL) and returns -1, so callers can write
 * `return tsl_err_set(err, "...")`. */
int tsl_err_set(tsl_err_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prefixes an existing message with "prefix: " (e.g. the file being read). */
int tsl_err_prefix(tsl_err_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif

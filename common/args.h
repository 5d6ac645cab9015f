/*
 * args.h — parsing the numbers people type on command lines and in configs.
 *
 * Sizes: "16G", "16GiB", "512M", "1.5G", "1T", "1048576" — decimal digits, an
 * optional fraction (digits on both sides of the point) and a unit: K/M/G/T and
 * KiB/MiB/GiB/TiB are binary (1024-based), as GPU memory is quoted; B or none is
 * bytes. The value must be a whole number of bytes ("1.5" and "0.1G" are refused,
 * not truncated); a sign, blanks, an exponent ("1e3") or hex ("0x10G") are not a
 * size. "16GB" (KB, MB, GB, TB) is refused as ambiguous, with the two spellings
 * that are not. Errors name the field: "memory: '16Q' is not a size; write decimal
 * digits, an optional fraction and a unit, e.g. 16G, ...".
 */
#ifndef TSL_ARGS_H
#define TSL_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* The one byte-size parser. flags 0: as above ("1.5G", "16GiB"; more than zero,
 * below 2^64).
 * TSL_SIZE_STRICT (configuration files): a whole number of digits with at most
 * a one-letter binary unit, K, M, G or T ("4194304", "4M"); zero allowed, the
 * caller checks the range. */
#define TSL_SIZE_STRICT 1u
int tsl_parse_size(const char *field, const char *text, unsigned flags, uint64_t *out,
                   tsl_err_t *err);
/* tsl_parse_size(field, text, 0, out, err): the command-line form. */
int tsl_parse_bytes(const char *field, const char *text, uint64_t *out, tsl_err_t *err);
/* A positive integer in [min, max]. */
int tsl_parse_u32(const char *field, const char *text, uint32_t min, uint32_t max, uint32_t *out,
                  tsl_err_t *err);
/* A decimal number in [min, max] (an exponent allowed; no hexadecimal, NaN or inf). */
int tsl_parse_double(const char *field, const char *text, double min, double max, double *out,
                     tsl_err_t *err);
/* One of n words (n >= 1), matched exactly: its index into *out. Else an error naming
 * the field and every word: "FIELD: 'TEXT' is not A, B or C" (text NULL reads as ""). */
int tsl_parse_choice(const char *field, const char *text, const char *const *words, size_t n,
                     size_t *out, tsl_err_t *err);
/* The refusal tsl_parse_choice writes, for a caller that matched the words itself:
 * "FIELD: 'TEXT' is not CHOICES", the text as a message may show it (err.h). -1. */
int tsl_choice_refused(const char *field, const char *text, const char *choices, tsl_err_t *err);
/* "16.0 GiB", "512.0 MiB" into buf. */
const char *tsl_format_bytes(uint64_t bytes, char *buf, unsigned cap);

#endif

/*
 * fingerprint.h — the one rule for what a plan fingerprint looks like outside
 * the planner: exactly 16 hexadecimal digits (tsl_request_fingerprint writes
 * them lowercase). The daemon's handlers, its store and the SQL schema
 * (schema/002_fingerprint_hex.sql) all hold this rule.
 */
#ifndef TSL_FINGERPRINT_H
#define TSL_FINGERPRINT_H

#include <stdbool.h>

#include "err.h"

#define TSL_FINGERPRINT_LEN 16

/* True when text is 16 hex digits (either case). */
bool tsl_fingerprint_valid(const char *text);

/* Lowercases a valid fingerprint into out[17]; -1 (TSL_E_INVALID, naming the
 * field "fingerprint") otherwise. */
int tsl_fingerprint_parse(const char *text, char out[TSL_FINGERPRINT_LEN + 1], tsl_err_t *err);

#endif

/*
 * handlers_check.h — request field checks the Trials and Assignments handlers
 * share. Each returns true when the field is acceptable; otherwise it answers the
 * call INVALID_ARGUMENT naming the field and what was wrong, and returns false.
 */
#ifndef TSL_HANDLERS_CHECK_H
#define TSL_HANDLERS_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server_call.h"

/* 1..max letters, digits, '-', '_' or '.' (ids, fingerprints, hostnames). */
bool tsl_check_token(tsl_call_t *call, const char *field, const char *v, size_t max);

/* 1..max printable characters without spaces, quotes or backslashes (ids a worker chose). */
bool tsl_check_id(tsl_call_t *call, const char *field, const char *v, size_t max);

/* A count within its limit. */
bool tsl_check_max(tsl_call_t *call, const char *field, uint32_t v, uint32_t max);

#endif

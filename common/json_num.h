/*
 * json_num.h — a JSON value as an integer of a C type (and its kind, named), for the readers of
 * documents Tessel writes but a person or another program may have edited:
 * integers exactly, reals truncated, anything else (absent, a string, null) 0,
 * and every value clamped to the type's range first (a cast of a double outside
 * it is undefined behaviour).
 */
#ifndef TSL_JSON_NUM_H
#define TSL_JSON_NUM_H

#include <jansson.h>
#include <stdint.h>

uint64_t tsl_json_u64(const json_t *v); /* negatives read 0 */
int64_t tsl_json_i64(const json_t *v);

/* "an object", "an array", "a string", "a boolean", "null" or "a number": what a
 * value is, for the messages that refuse it ("expected a whole number, got a string"). */
const char *tsl_json_type_name(const json_t *v);

#endif

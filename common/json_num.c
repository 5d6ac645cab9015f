/*
 * json_num.c — JSON numbers as C integers, clamped (json_num.h).
 */
#include "json_num.h"

uint64_t tsl_json_u64(const json_t *v)
{
    if (json_is_integer(v))
        return json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
    double d = json_number_value(v);
    return d >= 18446744073709551616.0 ? UINT64_MAX : d > 0 ? (uint64_t)d : 0;
}

int64_t tsl_json_i64(const json_t *v)
{
    if (json_is_integer(v))
        return (int64_t)json_integer_value(v);
    double d = json_number_value(v);
    return d >= 9.2e18 ? INT64_MAX : d <= -9.2e18 ? INT64_MIN : (int64_t)d;
}

const char *tsl_json_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    default: return "a number";
    }
}

/*
 * handlers_check.c — request field checks shared by handlers (handlers_check.h).
 */
#include "handlers_check.h"

#include <string.h>

static bool token_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
}

static bool id_char(char c)
{
    return (unsigned char)c > ' ' && c != 0x7f && c != '"' && c != '\\';
}

/* 1..max characters that ok accepts; else the failure says they must be `what`,
 * the value shown escaped (err.h tsl_err_shown): 't-\x1b[2J' sent an escape
 * sequence back to the caller's terminal in the message. */
static bool check_chars(tsl_call_t *call, const char *field, const char *v, size_t max,
                        bool (*ok_char)(char c), const char *what)
{
    size_t n = strlen(v);
    bool ok = n > 0 && n <= max;
    for (size_t i = 0; ok && i < n; i++)
        ok = ok_char(v[i]);
    char shown[TSL_ERR_SHOWN_MAX(60)];
    if (!ok)
        tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT, "%s: '%s' must be 1 to %zu %s", field,
                      tsl_err_shown(v, 60, shown, sizeof shown), max, what);
    return ok;
}

bool tsl_check_token(tsl_call_t *call, const char *field, const char *v, size_t max)
{
    return check_chars(call, field, v, max, token_char, "letters, digits, '-', '_' or '.'");
}

bool tsl_check_id(tsl_call_t *call, const char *field, const char *v, size_t max)
{
    return check_chars(call, field, v, max, id_char,
                       "printable characters without spaces or quotes");
}

bool tsl_check_max(tsl_call_t *call, const char *field, uint32_t v, uint32_t max)
{
    if (v <= max)
        return true;
    tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT, "%s: %u is above the limit %u", field, v,
                  max);
    return false;
}

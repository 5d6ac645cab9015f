#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The one body of tsl_err_set and tsl_err_setc. */
static int set_v(tsl_err_t *err, tsl_errcode_t code, const char *fmt, va_list ap)
{
    if (err == NULL)
        return -1;
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    err->code = code;
    return -1;
}

int tsl_err_set(tsl_err_t *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_v(err, TSL_E_INVALID, fmt, ap);
    va_end(ap);
    return -1;
}

int tsl_err_setc(tsl_err_t *err, tsl_errcode_t code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_v(err, code, fmt, ap);
    va_end(ap);
    return -1;
}

tsl_errcode_t tsl_err_code(const tsl_err_t *err)
{
    return err == NULL ? TSL_E_NONE : err->code;
}

const char *tsl_errcode_name(tsl_errcode_t code)
{
    static const char *const names[TSL_E_COUNT] = {
        [TSL_E_NONE] = "none",
        [TSL_E_INVALID] = "invalid",
        [TSL_E_NOFIT] = "nofit",
        [TSL_E_NOTFOUND] = "notfound",
        [TSL_E_CANCELLED] = "cancelled",
        [TSL_E_EXHAUSTED] = "exhausted",
        [TSL_E_NOMEM] = "nomem",
        [TSL_E_UNAVAILABLE] = "unavailable",
        [TSL_E_PRECONDITION] = "precondition",
        [TSL_E_UNSUPPORTED] = "unsupported",
        [TSL_E_DEVICE] = "device",
        [TSL_E_INTERNAL] = "internal",
    };
    return (unsigned)code < TSL_E_COUNT ? names[code] : "unknown";
}

int tsl_err_prefix(tsl_err_t *err, const char *fmt, ...)
{
    if (err == NULL)
        return -1;
    char prefix[TSL_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    char old[TSL_ERR_MAX];
    memcpy(old, err->msg, sizeof(old));
    old[sizeof(old) - 1] = '\0';
    /* assembled by hand: the result is cut at the buffer, on purpose */
    size_t n = strlen(prefix), cap = sizeof(err->msg) - 1;
    if (n > cap)
        n = cap;
    memcpy(err->msg, prefix, n);
    const char *parts[] = {": ", old};
    for (int i = 0; i < 2; i++) {
        size_t k = strlen(parts[i]);
        if (k > cap - n)
            k = cap - n;
        memcpy(err->msg + n, parts[i], k);
        n += k;
    }
    err->msg[n] = '\0';
    return -1;
}

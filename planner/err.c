#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int tsl_err_set(tsl_err_t *err, const char *fmt, ...)
{
    if (err == NULL)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return -1;
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

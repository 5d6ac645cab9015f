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
    snprintf(err->msg, sizeof(err->msg), "%s: %s", prefix, old);
    return -1;
}

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

/* One character as it is shown: itself when printable, else a C escape. */
static size_t shown_char(unsigned char c, char out[5])
{
    static const char esc[] = {
        ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't', ['"'] = '"', ['\\'] = '\\'};
    if (c < sizeof esc && esc[c]) {
        out[0] = '\\';
        out[1] = esc[c];
        return 2;
    }
    if (c < 0x20 || c == 0x7f)
        return (size_t)snprintf(out, 5, "\\x%02x", c);
    out[0] = (char)c;
    return 1;
}

const char *tsl_err_shown(const char *s, size_t max_in, char *buf, size_t cap)
{
    size_t n = 0, i = 0;
    if (cap == 0)
        return buf;
    for (; s && s[i] && i < max_in; i++) {
        char one[5];
        size_t k = shown_char((unsigned char)s[i], one);
        if (n + k >= cap)
            break;
        memcpy(buf + n, one, k);
        n += k;
    }
    buf[n] = '\0';
    return buf;
}

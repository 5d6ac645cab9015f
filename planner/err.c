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

size_t tsl_err_unicode_control(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    if (u[0] == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f)
        return 2; /* C1 controls U+0080..U+009F (U+009B: a terminal's CSI) */
    if (u[0] == 0xe2 && u[1] == 0x80 && u[2] >= 0xa8 && u[2] <= 0xae)
        return 3; /* U+2028/2029 line and paragraph separators, U+202A..U+202E bidi */
    if (u[0] == 0xe2 && u[1] == 0x81 && u[2] >= 0xa6 && u[2] <= 0xa9)
        return 3; /* U+2066..U+2069 bidi isolates */
    return 0;
}

const char *tsl_err_token_bad_byte(const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch < 0x21 || ch >= 0x7f || ch == '"' || ch == '\\')
            return s;
    }
    return NULL;
}

const char *tsl_err_shown(const char *s, size_t max_in, char *buf, size_t cap)
{
    size_t n = 0, i = 0, hidden = 0;
    if (cap == 0)
        return buf;
    for (; s && s[i] && i < max_in; i++) {
        char one[5];
        if (hidden == 0)
            hidden = tsl_err_unicode_control(s + i);
        /* each byte of such a character as \xNN: shown, it would act on the terminal
         * or reorder the line */
        size_t k = hidden ? (size_t)snprintf(one, sizeof one, "\\x%02x", (unsigned char)s[i])
                          : shown_char((unsigned char)s[i], one);
        if (hidden)
            hidden--;
        if (n + k >= cap)
            break;
        memcpy(buf + n, one, k);
        n += k;
    }
    buf[n] = '\0';
    return buf;
}

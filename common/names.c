/*
 * names.c — the characters a name may not hold (names.h).
 */
#include "names.h"

#include "err.h"

#include <stdbool.h>
#include <string.h>

/* Whether the character at s is a control character (names.h tsl_control_char). */
static bool is_control(const char *s)
{
    unsigned char c = (unsigned char)*s;
    return c < 0x20 || c == 0x7f || tsl_err_unicode_control(s) != 0;
}

const char *tsl_control_char(const char *s)
{
    for (; *s; s++)
        if (is_control(s))
            return s;
    return NULL;
}

const char *tsl_name_bad_char(const char *s, const char *extra)
{
    for (; *s; s++)
        if (is_control(s) || *s == '"' || (extra && strchr(extra, *s)))
            return s;
    return NULL;
}

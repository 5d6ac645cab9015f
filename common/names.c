/*
 * names.c — the characters a name may not hold (names.h).
 */
#include "names.h"

#include "err.h"

#include <string.h>

const char *tsl_name_bad_char(const char *s, const char *extra)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7f || c == '"' || (extra && strchr(extra, c)) ||
            tsl_err_unicode_control(s) != 0)
            return s;
    }
    return NULL;
}

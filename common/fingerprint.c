/*
 * fingerprint.c — 16 hex digits (fingerprint.h).
 */
#include "fingerprint.h"

#include <ctype.h>
#include <string.h>

bool tsl_fingerprint_valid(const char *text)
{
    if (!text || strlen(text) != TSL_FINGERPRINT_LEN)
        return false;
    for (size_t i = 0; i < TSL_FINGERPRINT_LEN; i++)
        if (!isxdigit((unsigned char)text[i]))
            return false;
    return true;
}

int tsl_fingerprint_parse(const char *text, char out[TSL_FINGERPRINT_LEN + 1], tsl_err_t *err)
{
    if (!tsl_fingerprint_valid(text)) {
        size_t n = text ? strlen(text) : 0;
        return tsl_err_setc(err, TSL_E_INVALID,
                            "fingerprint: '%.40s%s' is not 16 hex digits (as ListPlans shows them)",
                            text ? text : "", n > 40 ? "..." : "");
    }
    for (size_t i = 0; i < TSL_FINGERPRINT_LEN; i++)
        out[i] = (char)tolower((unsigned char)text[i]);
    out[TSL_FINGERPRINT_LEN] = '\0';
    return 0;
}

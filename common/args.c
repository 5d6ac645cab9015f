#include "args.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int unit_shift(const char *u, unsigned *shift)
{
    static const struct {
        const char *name;
        unsigned shift;
    } units[] = {{"", 0},     {"b", 0},  {"k", 10},   {"kib", 10}, {"m", 20},
                 {"mib", 20}, {"g", 30}, {"gib", 30}, {"t", 40},   {"tib", 40}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcasecmp(u, units[i].name) == 0) {
            *shift = units[i].shift;
            return 0;
        }
    }
    return -1;
}

/* KB, MB, GB, TB: a datasheet's "80GB" is 80 GiB of HBM, a disk's is 80·10^9
 * bytes. Neither reading is safe to assume (a budget 7% off either way), so the
 * parser refuses them and asks for K/M/G/T or KiB/MiB/GiB/TiB, which it reads
 * as powers of 1024. */
static bool decimal_unit(const char *u)
{
    return strlen(u) == 2 && strchr("kmgtKMGT", u[0]) && (u[1] == 'b' || u[1] == 'B');
}

/* TSL_SIZE_STRICT: a whole number, digits only, and at most a one-letter unit. */
static int parse_strict(const char *text, uint64_t *out)
{
    if (text[0] < '0' || text[0] > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    unsigned shift;
    if (errno != 0 || strlen(end) > 1 || unit_shift(end, &shift) != 0)
        return -1;
    if (shift && v > (~0ULL >> shift))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

/* The fraction digits frac[0..n) of a size in unit 2^shift as whole bytes: Horner's
 * rule from the last digit, t = (digit·2^shift + t) / 10, every step a whole number
 * exactly when the fraction's bytes are (t < 2^shift <= 2^40: no overflow). -1
 * when they are not whole ("1.5" bytes, "0.1G"): truncating would price a size
 * the person did not give. */
static int fraction_bytes(const char *frac, size_t n, unsigned shift, uint64_t *out)
{
    uint64_t t = 0;
    for (size_t i = n; i-- > 0;) {
        uint64_t num = (uint64_t)(frac[i] - '0') * (1ull << shift) + t;
        if (num % 10 != 0)
            return -1;
        t = num / 10;
    }
    *out = t;
    return 0;
}

static const char size_form[] =
    "decimal digits, an optional fraction and a unit, e.g. 16G, 1.5G, 512M or "
    "1048576 (bytes)";

int tsl_parse_size(const char *field, const char *text, unsigned flags, uint64_t *out,
                   tsl_err_t *err)
{
    if (text == NULL || *text == '\0')
        return tsl_err_set(err, "%s: missing size; use e.g. 16G or 512M", field);
    char shown[TSL_ERR_SHOWN_MAX(64)]; /* text as a message may show it (err.h) */
    const char *s = tsl_err_shown(text, 64, shown, sizeof shown);
    if (flags & TSL_SIZE_STRICT) {
        if (parse_strict(text, out) != 0)
            return tsl_err_set(err, "%s: '%s' is not a whole number (K, M, G, T suffixes allowed)",
                               field, s);
        return 0;
    }
    if (*text == '-')
        return tsl_err_set(err, "%s: '%s' is negative; sizes must be positive", field, s);
    /* DIGITS [. DIGITS] [UNIT]: no sign, blank, exponent or hex (strtod took "0x10G"
     * as 16 GiB and "1e3" as 1000) */
    const char *p = text, *frac = NULL;
    uint64_t whole = 0;
    bool big = false;
    for (; isdigit((unsigned char)*p); p++) {
        uint64_t d = (uint64_t)(*p - '0');
        big |= whole > (UINT64_MAX - d) / 10;
        whole = big ? 0 : whole * 10 + d;
    }
    size_t nfrac = 0;
    if (p > text && *p == '.' && isdigit((unsigned char)p[1])) {
        frac = ++p;
        while (isdigit((unsigned char)*p))
            p++;
        nfrac = (size_t)(p - frac);
    }
    unsigned shift;
    if (p > text && decimal_unit(p))
        return tsl_err_set(err,
                           "%s: '%s' is ambiguous: %s may mean powers of 1000 or of 1024; "
                           "write %.*s%c or %.*s%ciB (powers of 1024, as GPU memory is sized)",
                           field, s, p, (int)(p - text), text, toupper((unsigned char)*p),
                           (int)(p - text), text, toupper((unsigned char)*p));
    if (p == text || unit_shift(p, &shift) != 0)
        return tsl_err_set(err, "%s: '%s' is not a size; write %s", field, s, size_form);
    uint64_t part = 0;
    if (fraction_bytes(frac, nfrac, shift, &part) != 0)
        return tsl_err_set(err,
                           "%s: '%s' is not a whole number of bytes; a fraction needs a unit "
                           "that makes it whole (1.5G, 0.25M), or give the bytes",
                           field, s);
    if (big || (shift && whole > (UINT64_MAX >> shift)) || (whole << shift) > UINT64_MAX - part)
        return tsl_err_set(err, "%s: '%s' is too large", field, s);
    uint64_t bytes = (whole << shift) + part;
    if (bytes == 0)
        return tsl_err_set(err, "%s: '%s' must be greater than zero", field, s);
    *out = bytes;
    return 0;
}

int tsl_parse_bytes(const char *field, const char *text, uint64_t *out, tsl_err_t *err)
{
    return tsl_parse_size(field, text, 0, out, err);
}

int tsl_parse_u32(const char *field, const char *text, uint32_t min, uint32_t max, uint32_t *out,
                  tsl_err_t *err)
{
    if (text == NULL || *text == '\0')
        return tsl_err_set(err, "%s: missing number", field);
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    char shown[TSL_ERR_SHOWN_MAX(64)]; /* text as a message may show it (err.h) */
    const char *s = tsl_err_shown(text, 64, shown, sizeof shown);
    if (*p == '-')
        return tsl_err_set(err, "%s: '%s' is negative; must be %u..%u", field, s, min, max);
    errno = 0;
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    if (end == p || *end != '\0' || (errno != 0 && errno != ERANGE))
        return tsl_err_set(err, "%s: '%s' is not a whole number", field, s);
    if (errno == ERANGE) /* digits past 2^64: a whole number, too large */
        return tsl_err_set(err, "%s: %s is out of range; must be %u..%u", field, p, min, max);
    if (v < min || v > max)
        return tsl_err_set(err, "%s: %llu is out of range; must be %u..%u", field, v, min, max);
    *out = (uint32_t)v;
    return 0;
}

int tsl_parse_choice(const char *field, const char *text, const char *const *words, size_t n,
                     size_t *out, tsl_err_t *err)
{
    char list[256];
    size_t len = 0;
    for (size_t i = 0; text && i < n; i++)
        if (strcmp(text, words[i]) == 0) {
            *out = i;
            return 0;
        }
    list[0] = '\0';
    for (size_t i = 0; i < n && len < sizeof list; i++) /* "A, B or C" */
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
                                i == 0       ? ""
                                : i + 1 == n ? " or "
                                             : ", ",
                                words[i]);
    return tsl_choice_refused(field, text ? text : "", list, err);
}

int tsl_choice_refused(const char *field, const char *text, const char *choices, tsl_err_t *err)
{
    char shown[TSL_ERR_SHOWN_MAX(64)];
    return tsl_err_set(err, "%s: '%s' is not %s", field,
                       tsl_err_shown(text, 64, shown, sizeof shown), choices);
}

int tsl_parse_double(const char *field, const char *text, double min, double max, double *out,
                     tsl_err_t *err)
{
    if (text == NULL || *text == '\0')
        return tsl_err_set(err, "%s: missing number", field);
    errno = 0;
    char *end;
    double v = strtod(text, &end);
    /* strtod reads C's hexadecimal floats: 0x10 was taken as 16, where Python's
     * float() (argparse, Megatron-LM) and every other flag refuse it */
    if (end == text || *end != '\0' || isnan(v) || strpbrk(text, "xX") != NULL) {
        char shown[TSL_ERR_SHOWN_MAX(64)]; /* text as a message may show it (err.h) */
        return tsl_err_set(err, "%s: '%s' is not a number", field,
                           tsl_err_shown(text, 64, shown, sizeof shown));
    }
    /* 1e999, inf: a number past any bound (1e-999 underflows to 0, checked as 0) */
    if (!isfinite(v) || (errno == ERANGE && fabs(v) >= 1))
        return tsl_err_set(err, "%s: %s is out of range; must be %g..%g", field, text, min, max);
    if (v < min || v > max)
        return tsl_err_set(err, "%s: %g is out of range; must be %g..%g", field, v, min, max);
    *out = v;
    return 0;
}

const char *tsl_format_bytes(uint64_t bytes, char *buf, unsigned cap)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    unsigned u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", v, units[u]);
    return buf;
}

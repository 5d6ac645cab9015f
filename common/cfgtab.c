/*
 * cfgtab.c — the keys of a configuration table (cfgtab.h): one value parsed,
 * bounds checked and stored into the caller's struct; lookup by flag name or
 * section.key; defaults; the --help list and the --check-config dump. The file
 * and argv readers (cfgtab_load.c) set every value through here.
 */
#include "cfgtab.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "args.h"
#include "log.h"

static const char *const LEVEL_NAMES[] = {
    [TSL_LOG_ERROR] = "error",
    [TSL_LOG_WARN] = "warn",
    [TSL_LOG_INFO] = "info",
    [TSL_LOG_DEBUG] = "debug",
};

/* ---- one value -------------------------------------------------------------------------- */

/* Digits only: strtoull alone would take " 12", "-3" (wrapped) and "+4". */
static int parse_uint(const char *v, unsigned long long *out)
{
    char *end = NULL;
    if (v[0] < '0' || v[0] > '9')
        return -1;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = n;
    return 0;
}

/* Permission bits: octal digits with a leading 0 ("0660"), so a decimal slip
 * like "432" (0660 written in decimal) is refused rather than misread. */
static int parse_mode(const char *v, unsigned long *out)
{
    size_t n = strlen(v);
    if (n < 2 || n > 5 || v[0] != '0' || strspn(v, "01234567") != n)
        return -1;
    *out = strtoul(v, NULL, 8);
    return 0;
}

/* strtod alone would also take hex ("0x10" = 16), exponents, "inf" and "nan". */
static int parse_decimal(const char *v, double *out)
{
    char *end = NULL;
    if (v[0] == '\0' || strspn(v, "0123456789.") != strlen(v) || strchr(v, '.') != strrchr(v, '.'))
        return -1;
    double d = strtod(v, &end);
    if (end == v || *end != '\0' || !isfinite(d))
        return -1;
    *out = d;
    return 0;
}

static int parse_bool(const char *v, bool yesno, bool *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no",
                                                                                "off", "0"};
    for (size_t i = 0; i < (yesno ? 4u : 1u); i++) {
        if (strcmp(v, yes[i]) == 0 || (yesno && strcasecmp(v, yes[i]) == 0))
            return *out = true, 0;
        if (strcmp(v, no[i]) == 0 || (yesno && strcasecmp(v, no[i]) == 0))
            return *out = false, 0;
    }
    return -1;
}

static int check_addr(const tsl_cfg_key_t *k, const char *v, tsl_err_t *err)
{
    const char *colon = strrchr(v, ':');
    if (v[0] == '\0')
        return 0;
    size_t plen = colon ? strlen(colon + 1) : 0;
    bool digits = colon != NULL && plen >= 1 && strspn(colon + 1, "0123456789") == plen;
    /* a port that is a number, just too large, is said so: "not HOST:PORT" would
     * send one looking at the host */
    if (digits && colon != v && (plen > 5 || atol(colon + 1) > 65535))
        return tsl_err_set(err,
                           "%s.%s: port %s of '%s' is out of range 1..65535 (or 0: any free "
                           "port)",
                           k->section, k->key, colon + 1, v);
    bool ok = digits && colon != v && plen <= 5;
    if (ok && v[0] == '[')
        ok = colon[-1] == ']';
    if (!ok)
        return tsl_err_set(err, "%s.%s: '%s' is not HOST:PORT (e.g. 127.0.0.1:9464 or [::1]:9464)",
                           k->section, k->key, v);
    return 0;
}

/* "a|b|c" as "a, b, c" into buf. */
static const char *choice_list(const char *choices, char *buf, size_t cap)
{
    size_t n = 0;
    for (const char *c = choices; *c && n + 3 < cap; c++) {
        if (*c == '|') {
            buf[n++] = ',';
            buf[n++] = ' ';
        } else {
            buf[n++] = *c;
        }
    }
    buf[n] = '\0';
    return buf;
}

/* The choice v names (any case), as the table spells it, into out. */
static int match_choice(const char *choices, const char *v, char *out, size_t cap)
{
    for (const char *c = choices; *c;) {
        size_t n = strcspn(c, "|");
        if (n == strlen(v) && n < cap && strncasecmp(c, v, n) == 0) {
            memcpy(out, c, n);
            out[n] = '\0';
            return 0;
        }
        c += n + (c[n] == '|');
    }
    return -1;
}

static int out_of_range(const tsl_cfg_key_t *k, const char *v, tsl_err_t *err)
{
    if (k->type == TSL_CFG_MODE)
        return tsl_err_set(err, "%s.%s: %s is out of range [0, 0777]", k->section, k->key, v);
    return tsl_err_set(err, "%s.%s: %s is out of range [%.15g, %.15g]", k->section, k->key, v,
                       k->min, k->max);
}

static int set_string(const tsl_cfg_key_t *k, char *field, const char *v, tsl_err_t *err)
{
    size_t n = strlen(v);
    if ((double)n > k->max)
        return tsl_err_set(err, "%s.%s: value is %zu characters long; at most %.0f", k->section,
                           k->key, n, k->max);
    if (n == 0 && k->min > 0)
        return tsl_err_set(err, "%s.%s: must not be empty", k->section, k->key);
    if ((double)n < k->min)
        return tsl_err_set(err, "%s.%s: value is %zu characters long; at least %.0f", k->section,
                           k->key, n, k->min);
    memcpy(field, v, n + 1);
    return 0;
}

static int set_text(const tsl_cfg_key_t *k, char *field, const char *v, tsl_err_t *err)
{
    char canon[64], list[256];
    tsl_log_level_t lvl;
    switch (k->type) {
    case TSL_CFG_ADDR:
        if (check_addr(k, v, err) != 0)
            return -1;
        return set_string(k, field, v, err);
    case TSL_CFG_ENUM:
        if (match_choice(k->choices, v, canon, sizeof canon) != 0)
            return tsl_err_set(err, "%s.%s: '%s' is not one of %s", k->section, k->key, v,
                               choice_list(k->choices, list, sizeof list));
        return set_string(k, field, canon, err);
    case TSL_CFG_LEVEL:
        if (tsl_log_parse_level(v, &lvl) != 0)
            return tsl_err_set(err, "%s.%s: '%s' is not one of error, warn, info, debug",
                               k->section, k->key, v);
        /* Stored canonical, so --check-config shows what the logger will use. */
        return set_string(k, field, LEVEL_NAMES[lvl], err);
    default: return set_string(k, field, v, err);
    }
}

static int set_whole(const tsl_cfg_key_t *k, void *field, const char *v, tsl_err_t *err)
{
    unsigned long long u = 0;
    uint64_t b = 0;
    bool size = k->type == TSL_CFG_SIZE;
    /* digits after a minus (not all zeros), or past 2^64: a whole number, out of
     * the key's range (--pool-size -1), not "not a whole number" */
    bool neg = v[0] == '-';
    size_t digits = strspn(v + neg, "0123456789");
    if (digits && v[neg + digits] == '\0') {
        errno = 0;
        unsigned long long n = strtoull(v + neg, NULL, 10);
        if ((neg && n != 0) || errno == ERANGE)
            return out_of_range(k, v, err);
    }
    if (size && tsl_parse_size("size", v, TSL_SIZE_STRICT, &b, NULL) == 0)
        u = b;
    else if (size || parse_uint(v, &u) != 0)
        return tsl_err_set(err, "%s.%s: '%s' is not a whole number%s", k->section, k->key, v,
                           size ? " (K, M, G, T suffixes allowed)" : "");
    if ((double)u < k->min || (double)u > k->max)
        return out_of_range(k, v, err);
    if (size)
        *(uint64_t *)field = u;
    else
        *(uint32_t *)field = (uint32_t)u;
    return 0;
}

static int set_number(const tsl_cfg_key_t *k, void *field, const char *v, bool yesno,
                      tsl_err_t *err)
{
    unsigned long mode = 0;
    double d = 0;
    switch (k->type) {
    case TSL_CFG_MODE:
        if (parse_mode(v, &mode) != 0)
            return tsl_err_set(err, "%s.%s: '%s' is not an octal mode with a leading 0, like 0660",
                               k->section, k->key, v);
        if (mode > 0777)
            return out_of_range(k, v, err);
        *(uint32_t *)field = (uint32_t)mode;
        return 0;
    case TSL_CFG_BOOL:
        if (parse_bool(v, yesno, field) != 0)
            return tsl_err_set(err, "%s.%s: '%s' is not %s", k->section, k->key, v,
                               yesno ? "yes or no (or true/false, on/off, 1/0)" : "true or false");
        return 0;
    case TSL_CFG_DOUBLE:
        if (parse_decimal(v, &d) != 0)
            return tsl_err_set(err, "%s.%s: '%s' is not a decimal number like 2.5", k->section,
                               k->key, v);
        if (d < k->min || d > k->max)
            return out_of_range(k, v, err);
        *(double *)field = d;
        return 0;
    default: return set_whole(k, field, v, err);
    }
}

static bool is_text(tsl_cfg_type_t type)
{
    return type == TSL_CFG_STRING || type == TSL_CFG_ADDR || type == TSL_CFG_ENUM ||
           type == TSL_CFG_LEVEL;
}

int tsl_cfgtab_set_key(const tsl_cfgtab_t *t, void *obj, const tsl_cfg_key_t *k, const char *value,
                       tsl_err_t *err)
{
    char *field = (char *)obj + k->offset;
    if (is_text(k->type))
        return set_text(k, field, value, err);
    return set_number(k, field, value, (t->flags & TSL_CFGTAB_YESNO) != 0, err);
}

/* ---- lookup ------------------------------------------------------------------------------ */

const tsl_cfg_key_t *tsl_cfgtab_find(const tsl_cfgtab_t *t, const char *section, const char *key)
{
    for (size_t i = 0; i < t->n_keys; i++)
        if (strcmp(t->keys[i].section, section) == 0 && strcmp(t->keys[i].key, key) == 0)
            return &t->keys[i];
    return NULL;
}

/* The sections, in table order, then the free-form one: "a, b, c". */
static const char *section_list(const tsl_cfgtab_t *t, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < t->n_keys; i++) {
        const char *s = t->keys[i].section;
        if (i > 0 && strcmp(s, t->keys[i - 1].section) == 0)
            continue;
        n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "%s%s", n ? ", " : "", s);
    }
    if (t->extra_section != NULL && n < cap)
        snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", t->extra_section);
    return buf;
}

static const char *key_list(const tsl_cfgtab_t *t, const char *section, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < t->n_keys && n < cap; i++)
        if (strcmp(t->keys[i].section, section) == 0)
            n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", t->keys[i].key);
    return buf;
}

int tsl_cfgtab_set_in(const tsl_cfgtab_t *t, void *obj, const char *section, const char *key,
                      const char *value, tsl_err_t *err)
{
    char list[320];
    if (t->extra_section != NULL && strcmp(section, t->extra_section) == 0)
        return t->extra_set(obj, key, value, err);
    const tsl_cfg_key_t *k = tsl_cfgtab_find(t, section, key);
    if (k != NULL)
        return tsl_cfgtab_set_key(t, obj, k, value, err);
    if (section[0] == '\0')
        return tsl_err_set(err, "key '%s' is outside any [section]", key);
    key_list(t, section, list, sizeof list);
    if (list[0] == '\0')
        return tsl_err_set(err, "unknown section [%s] (known: %s)", section,
                           section_list(t, list, sizeof list));
    return tsl_err_set(err, "unknown key '%s' in section [%s] (known: %s)", key, section, list);
}

int tsl_cfgtab_set(const tsl_cfgtab_t *t, void *obj, const char *key, const char *value,
                   tsl_err_t *err)
{
    if (key == NULL || value == NULL)
        return tsl_err_set(err, "config: missing key or value");
    if (strncmp(key, "--", 2) == 0)
        key += 2;
    const char *dot = strchr(key, '.');
    if (dot != NULL) {
        char section[32];
        size_t n = (size_t)(dot - key);
        if (n >= sizeof section)
            return tsl_err_set(err, "unknown option '--%s'; see %s --help", key, t->program);
        memcpy(section, key, n);
        section[n] = '\0';
        return tsl_cfgtab_set_in(t, obj, section, dot + 1, value, err);
    }
    for (size_t i = 0; i < t->n_keys; i++)
        if (strcmp(t->keys[i].flag, key) == 0)
            return tsl_cfgtab_set_key(t, obj, &t->keys[i], value, err);
    /* named as an operator types it, as tesselctl names its options */
    return tsl_err_set(err, "unknown option '--%s'; see %s --help", key, t->program);
}

void tsl_cfgtab_defaults(const tsl_cfgtab_t *t, void *obj)
{
    tsl_err_t err = {0};
    for (size_t i = 0; i < t->n_keys; i++) {
        const tsl_cfg_key_t *k = &t->keys[i];
        if (is_text(k->type) && k->max >= (double)k->size)
            tsl_fatalx("%s: %s.%s: longest value %.0f does not fit its field of %zu bytes",
                       t->program, k->section, k->key, k->max, k->size);
    }
    /* Only after the checks: no default writes past its field. */
    memset(obj, 0, t->obj_size);
    for (size_t i = 0; i < t->n_keys; i++)
        if (tsl_cfgtab_set_key(t, obj, &t->keys[i], t->keys[i].def, &err) != 0)
            tsl_fatalx("%s: the default of %s", t->program, err.msg);
}

/* ---- --help and --check-config ---------------------------------------------------------- */

static void usage_bounds(const tsl_cfg_key_t *k, FILE *out)
{
    char list[256];
    if (k->type == TSL_CFG_UINT || k->type == TSL_CFG_SIZE || k->type == TSL_CFG_DOUBLE)
        fprintf(out, ", range %.15g..%.15g", k->min, k->max);
    else if (k->type == TSL_CFG_ENUM)
        fprintf(out, ", one of %s", choice_list(k->choices, list, sizeof list));
}

void tsl_cfgtab_usage(const tsl_cfgtab_t *t, FILE *out)
{
    for (size_t i = 0; i < t->n_keys; i++) {
        const tsl_cfg_key_t *k = &t->keys[i];
        char lhs[64];
        snprintf(lhs, sizeof lhs, "--%s %s", k->flag, k->metavar);
        fprintf(out, "  %-28s %s\n", lhs, k->help);
        fprintf(out, "  %-28s [%s] %s, default %s", "", k->section, k->key,
                k->def[0] ? k->def : "\"\"");
        usage_bounds(k, out);
        fputc('\n', out);
    }
}

static void dump_value(const tsl_cfgtab_t *t, const tsl_cfg_key_t *k, const void *field, FILE *out)
{
    bool yesno = (t->flags & TSL_CFGTAB_YESNO) != 0;
    if (k->flags & TSL_CFG_SECRET) {
        fputs(*(const char *)field ? "(set, masked)" : "", out);
        return;
    }
    switch (k->type) {
    case TSL_CFG_MODE: fprintf(out, "%04o", *(const uint32_t *)field); break;
    case TSL_CFG_UINT: fprintf(out, "%u", *(const uint32_t *)field); break;
    case TSL_CFG_SIZE: fprintf(out, "%llu", (unsigned long long)*(const uint64_t *)field); break;
    case TSL_CFG_DOUBLE: fprintf(out, "%g", *(const double *)field); break;
    case TSL_CFG_BOOL:
        fputs(*(const bool *)field ? (yesno ? "yes" : "true") : (yesno ? "no" : "false"), out);
        break;
    default: fputs((const char *)field, out); break;
    }
}

void tsl_cfgtab_dump(const tsl_cfgtab_t *t, const void *obj, FILE *out)
{
    const char *section = "";
    for (size_t i = 0; i < t->n_keys; i++) {
        const tsl_cfg_key_t *k = &t->keys[i];
        if (strcmp(section, k->section) != 0) {
            fprintf(out, "%s[%s]\n", section[0] ? "\n" : "", k->section);
            section = k->section;
        }
        fprintf(out, "%s = ", k->key);
        dump_value(t, k, (const char *)obj + k->offset, out);
        fputc('\n', out);
    }
}

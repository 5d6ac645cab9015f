/*
 * cfgtab.h — table-driven configuration, shared by tesseld and tessel-worker:
 * one table of keys serves the INI file, the command-line flags, --help and
 * --check-config, so that a key can never be known to one and unknown to
 * another (Redis config.c style).
 *
 * A program describes its configuration struct with a tsl_cfgtab_t: one
 * tsl_cfg_key_t per key (section, key, flag name, type, bounds, the field's
 * offset and size, default, help), plus optionally one free-form section whose
 * lines go to a callback (tesseld's [tokens]). This module then
 *   - fills the defaults (a default the table refuses is a programming error),
 *   - reads an INI file onto the struct: errors say "FILE:LINE: section.key: why";
 *     unknown sections and keys are refused with the list of the known ones; a
 *     key may appear once; lines over 198 characters, NUL bytes, files that are
 *     not regular or over 1 MiB are refused; a bad file leaves the struct as it was,
 *   - sets one key by flag name ("pool-size", "--pool-size") or "section.key",
 *   - applies argv (--KEY VALUE, --KEY=VALUE) after the --config file, skipping
 *     the options every program shares (--config, --check-config/-n, --help/-h,
 *     --version) and the program's own,
 *   - prints the flag list for --help and the effective values for --check-config.
 * Cross-field checks stay with each program.
 *
 * Values: numbers are decimal (no "0x10", "1e3", "inf"); bounds are checked and
 * named in errors ("search.queue_size: 999999 is out of range [0, 100000]").
 * Every fallible function returns 0 / -1 and fills a tsl_err_t.
 */
#ifndef TSL_CFGTAB_H
#define TSL_CFGTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "err.h"

typedef enum {
    TSL_CFG_STRING, /* char[]; min/max: shortest and longest length */
    TSL_CFG_ADDR,   /* char[] "host:port", "[v6]:port" or "" (off); max: longest */
    TSL_CFG_ENUM,   /* char[] one of choices ("cuda|sim"), any case, stored as listed */
    TSL_CFG_LEVEL,  /* char[] a log level (error, warn, info, debug), stored canonical */
    TSL_CFG_MODE,   /* uint32_t permission bits, octal with a leading 0; at most 0777 */
    TSL_CFG_UINT,   /* uint32_t in [min, max] */
    TSL_CFG_SIZE,   /* uint64_t bytes in [min, max], K/M/G/T (binary) suffixes allowed */
    TSL_CFG_DOUBLE, /* double in [min, max], decimal digits and one '.' only */
    TSL_CFG_BOOL,   /* bool: true | false (and yes/no/on/off/1/0 with TSL_CFGTAB_YESNO) */
} tsl_cfg_type_t;

/* tsl_cfg_key_t.flags */
#define TSL_CFG_SECRET 1u /* --check-config shows "(set, masked)", never the value */

typedef struct tsl_cfg_key {
    const char *section, *key; /* [section] key = ... */
    const char *flag;          /* --flag (without the dashes) */
    const char *metavar;       /* for --help: PATH, N, SECONDS, ... */
    tsl_cfg_type_t type;
    size_t offset, size; /* the field in the caller's struct: TSL_CFG_AT(struct, field) */
    const char *def;     /* the default, as it would be written in the file */
    double min, max;     /* numbers: bounds; strings: shortest and longest length */
    const char *choices; /* TSL_CFG_ENUM: "a|b|c" */
    unsigned flags;      /* TSL_CFG_SECRET */
    const char *help;    /* one line for --help */
} tsl_cfg_key_t;

#define TSL_CFG_AT(type, field) offsetof(type, field), sizeof(((type *)0)->field)

/* tsl_cfgtab_t.flags */
#define TSL_CFGTAB_YESNO 1u /* bools also take yes/no/on/off/1/0 and are shown yes/no */

typedef struct tsl_cfgtab {
    const char *program; /* "tesseld": names --help in "unknown option" errors */
    size_t obj_size;     /* sizeof the caller's struct (a file is applied to a copy) */
    const tsl_cfg_key_t *keys;
    size_t n_keys;
    unsigned flags; /* TSL_CFGTAB_YESNO */
    /* Optional free-form section: every "name = value" in it (or "--SECTION.name
     * value") goes to extra_set; NULL if none. */
    const char *extra_section;
    int (*extra_set)(void *obj, const char *name, const char *value, tsl_err_t *err);
} tsl_cfgtab_t;

/* The options every program shares, found in argv before anything is applied
 * (so that --config applies first wherever it stands). */
typedef struct tsl_cfg_opts {
    const char *config_file; /* --config FILE | --config=FILE; NULL = none */
    bool check, help, version;
} tsl_cfg_opts_t;

/* Zeroes obj and sets every key to its default. */
void tsl_cfgtab_defaults(const tsl_cfgtab_t *t, void *obj);
/* One key by flag name ("pool-size", "--pool-size") or "section.key"; bounds checked. */
int tsl_cfgtab_set(const tsl_cfgtab_t *t, void *obj, const char *key, const char *value,
                   tsl_err_t *err);
/* An INI file over the current values; on error obj is unchanged. */
int tsl_cfgtab_load(const tsl_cfgtab_t *t, void *obj, const char *path, tsl_err_t *err);
/* Finds --config, --check-config/-n, --help/-h, --version in argv[1..argc). */
int tsl_cfgtab_opts(int argc, char **argv, tsl_cfg_opts_t *o, tsl_err_t *err);
/* Every other argument of argv[1..argc) as --KEY VALUE or --KEY=VALUE; the
 * program's own valueless options (NULL-terminated `own`, may be NULL) are skipped. */
int tsl_cfgtab_apply_argv(const tsl_cfgtab_t *t, void *obj, int argc, char **argv,
                          const char *const *own, tsl_err_t *err);
/* defaults < o->config_file < argv: the three steps above in order. */
int tsl_cfgtab_from_argv(const tsl_cfgtab_t *t, void *obj, const tsl_cfg_opts_t *o, int argc,
                         char **argv, const char *const *own, tsl_err_t *err);
/* The pieces the readers use: a key by section and name (NULL if none); one
 * value for a known key; one value by section and name (the free-form section,
 * or errors listing the known sections or keys). */
const tsl_cfg_key_t *tsl_cfgtab_find(const tsl_cfgtab_t *t, const char *section, const char *key);
int tsl_cfgtab_set_key(const tsl_cfgtab_t *t, void *obj, const tsl_cfg_key_t *k, const char *value,
                       tsl_err_t *err);
int tsl_cfgtab_set_in(const tsl_cfgtab_t *t, void *obj, const char *section, const char *key,
                      const char *value, tsl_err_t *err);
/* The flag list for --help: per key "--flag METAVAR  help" and
 * "[section] key, default D[, range MIN..MAX | one of a, b]". */
void tsl_cfgtab_usage(const tsl_cfgtab_t *t, FILE *out);
/* The effective values as an INI file that reads back (secrets masked). */
void tsl_cfgtab_dump(const tsl_cfgtab_t *t, const void *obj, FILE *out);

#endif

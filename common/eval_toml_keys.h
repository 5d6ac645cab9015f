/*
 * eval_toml_keys.h — the sections and keys torchtitan's job TOML has had
 * (v0.1.0 .. v0.2.x, and the argparse-era flags before), for eval_toml.c to
 * refuse a misspelt one instead of pricing its default without a word.
 *
 * torchtitan v0.2 refuses an unknown field at every level of the file
 * (ConfigManager._dict_to_dataclass: "Invalid field names"); v0.1.0 dropped it
 * unread. Tessel refuses an unknown section, and an unknown key in the sections
 * it reads (docs/tesselctl.md "eval"); the keys of other sections stay unread.
 */
#ifndef TSL_EVAL_TOML_KEYS_H
#define TSL_EVAL_TOML_KEYS_H

#include <stdint.h>

#include "err.h"

/* [section] on line: 0 when torchtitan has had it, else -1 with err naming it
 * (and the nearest known section). */
int tsl_tt_check_section(const char *section, uint32_t line, tsl_err_t *err);

/* key under [section] on line: 0 when the section is not one Tessel reads or
 * torchtitan has had the key there, else -1 with err naming key, section and the
 * nearest known key (or the section's known keys). */
int tsl_tt_check_key(const char *section, const char *key, uint32_t line, tsl_err_t *err);

#endif

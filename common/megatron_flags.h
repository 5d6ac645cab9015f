/*
 * megatron_flags.h — the flags Megatron-LM d98e8a6's pretraining parser accepts,
 * for --megatron-args (eval_cfg.c) to tell a Megatron-LM flag Tessel does not read
 * from a misspelt one, and to name the flag a typo was nearest to.
 *
 * Megatron-LM's parser is built with allow_abbrev=False: a flag outside this list
 * ends a run at argparse ("unrecognized arguments"). Names are without the leading
 * "--".
 */
#ifndef TSL_MEGATRON_FLAGS_H
#define TSL_MEGATRON_FLAGS_H

#include <stdbool.h>
#include <stddef.h>

/* Whether Megatron-LM d98e8a6 defines --name. */
bool tsl_mg_flag_known(const char *name);

/* The flag nearest to name by edit distance into buf (at most cap bytes), or ""
 * where none is within a third of name's length. */
void tsl_mg_flag_nearest(const char *name, char *buf, size_t cap);

#endif

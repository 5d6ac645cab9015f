/*
 * tried.h — the partitions a re-balancing has costed, and what each is known not to
 * beat (search_partition.c try_partition).
 *
 * The local improvement (improve_cuts, improve_marked) tries the same partition more
 * than once: after a kept move the next move back is the old plan, and a move a
 * later pass or busiest_to_idlest tries again may have been tried already under a
 * lower incumbent. Each try is an engine costing (a layer DP per stage, a schedule
 * per interleave); one whose answer is known changes nothing and is skipped.
 *
 * A partition's entry holds `held`: the throughput its costing is known not to beat.
 * Kept, its own (the engine's answer); not kept, the incumbent it was held to (its
 * answer was at most that, or it was left unfinished below it). A try under an
 * incumbent at least `held` is then not kept either — as long as the engine's answer
 * to a partition does not rise with the incumbent it is held to (need_samples_per_s
 * prunes what cannot beat it; assumed, and checked on bench/search's plans, which
 * skipping the tries leaves identical).
 *
 * Keys are whole: the configuration (global batch, stages, micro-batches) and every
 * stage's first layer, compared in full (no fingerprint). Out of memory, nothing is
 * noted and nothing is skipped.
 */
#ifndef TSL_TRIED_H
#define TSL_TRIED_H

#include <stdint.h>

typedef struct tsl_tried tsl_tried_t;

/* An empty set; NULL out of memory (tsl_tried_* take NULL as an empty set). */
tsl_tried_t *tsl_tried_new(void);
void tsl_tried_free(tsl_tried_t *t);
/* Forgets every entry (another engine's knobs: its answers are another's). */
void tsl_tried_clear(tsl_tried_t *t);

/* The throughput partition first[0..P) of configuration (B, P, m) is known not to
 * beat, or 0 where it was not noted. */
double tsl_tried_held(const tsl_tried_t *t, uint32_t B, uint32_t P, uint32_t m,
                      const uint32_t *first);
/* Notes it (raising nothing: an entry noted again takes the larger held). */
void tsl_tried_note(tsl_tried_t *t, uint32_t B, uint32_t P, uint32_t m, const uint32_t *first,
                    double held);

#endif

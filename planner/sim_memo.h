/*
 * sim_memo.h — the event simulator's answers (pipesim.h tsl_pipesim_run: the flush
 * and the iteration's end) kept by a 128-bit fingerprint of its whole input, so that
 * a schedule the search prices again on the same stage figures (the re-balancing's
 * and the sub-layer step's configurations met again, the re-costing of kept plans)
 * is read back, not simulated again (search_eval.c zb_iter). The simulator is pure:
 * the same input gives the same figures, bit for bit, so a hit answers what a run
 * would. Fingerprints collide with probability about 2^-128 (lane_hash.h), as the
 * layer DP's memo's do.
 *
 * Every field of tsl_pipesim_in_t enters the fingerprint (tsl_sim_memo_key): a field
 * added there enters here too, else two inputs that differ in it would share an
 * answer (tests/test_sim_memo.c holds each field to a fingerprint of its own).
 *
 * Holds at most TSL_SIM_MEMO_SLOTS / 2 answers; past that it starts afresh. Owns
 * its memory: tsl_sim_memo_free. Pure otherwise: no I/O, no globals.
 */
#ifndef TSL_SIM_MEMO_H
#define TSL_SIM_MEMO_H

#include <stdbool.h>
#include <stdint.h>

#include "pipesim.h"

/* Open-addressing slots (a power of two, half of them used at most): 2^14 slots of
 * 40 bytes, 640 KiB, made on the first answer kept. The whole search of DeepSeek-V3
 * on 2048 H800 at batch 15,360 runs the simulator 4,298 times over its engines. */
#define TSL_SIM_MEMO_SLOTS (1u << 14)

typedef struct tsl_sim_memo tsl_sim_memo_t;

/* The fingerprint of everything tsl_pipesim_run reads of in: its counts, switches
 * and fractions, and each array (its P figures, P − 1 of p2p_s) or that it is NULL. */
void tsl_sim_memo_key(const tsl_pipesim_in_t *in, uint64_t h[2]);

/* The answer kept under h into *flush_s and *iter_s; false when none is (m NULL too). */
bool tsl_sim_memo_get(const tsl_sim_memo_t *m, const uint64_t h[2], double *flush_s,
                      double *iter_s);

/* Keeps an answer under h, making *m on first use; nothing when out of memory. */
void tsl_sim_memo_put(tsl_sim_memo_t **m, const uint64_t h[2], double flush_s, double iter_s);

void tsl_sim_memo_free(tsl_sim_memo_t *m);

#endif

/*
 * autopipe.h — AutoPipe's planner and slicer (autopipe.txt III-B-2, III-C):
 *
 *   tsl_autopipe_minmax     Algorithm 1: the exact min-max linear partition of
 *                           blocks into p consecutive non-empty stages by f + b;
 *   tsl_autopipe_partition  the heuristic partitioner: Algorithm 1, then the
 *                           master-stage moves judged by the 1F1B simulator
 *                           (pipesim.h), returning the partition with the lowest
 *                           simulated iteration time;
 *   tsl_autopipe_slice      the micro-batch slicer: how many of the first
 *                           micro-batches to run in halves (Algorithm 2's stopping
 *                           rule, evaluated by the simulator), or "not applied".
 *
 * Blocks are what the partitioner moves: sub-layers (sublayer.h) or whole layers.
 * The caller supplies each block's forward and backward time for one micro-batch
 * (e.g. from cost.h) and the p2p time of a stage boundary — per cut position or
 * one value for all (with sub-layers the boundary activation is 2·s·h whichever
 * block it follows, so one value is exact for Transformers).
 *
 * Partitions are given by stage starts: stage s holds blocks
 * [first[s], first[s + 1]), first[0] = 0, first[P] = n_blocks.
 *
 * Memory: each entry point allocates its workspace once on entry and frees it on
 * return (-1 with "out of memory" in err when it cannot); nothing is allocated
 * while searching. Pure, deterministic, thread-safe. Units: seconds.
 */
#ifndef TSL_AUTOPIPE_H
#define TSL_AUTOPIPE_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "pipesim.h"

#define TSL_AUTOPIPE_MAX_BLOCKS        4096u
#define TSL_AUTOPIPE_DEFAULT_MAX_EVALS 2048u

/*
 * Algorithm 1 over weights w[0..n) (w = f + b): partitions them into p consecutive
 * non-empty stages minimising the largest stage sum; writes first[0..p] and the
 * optimum to *max_out (stage sums added directly, in block order). Among optimal
 * partitions one fixed choice: each stage boundary, from the last back, is put at
 * the first block where the stages before it are at least as loaded as the stage
 * after it. O(n·p·log n). Requires 1 <= p <= n, weights >= 0.
 */
int tsl_autopipe_minmax(const double *w, uint32_t n, uint32_t p, uint32_t *first, double *max_out,
                        tsl_err_t *err);

typedef struct tsl_autopipe_in {
    uint32_t n_blocks;
    const double *fwd_s;     /* [n_blocks] forward time of one micro-batch */
    const double *bwd_s;     /* [n_blocks] backward time of one micro-batch */
    const double *cut_p2p_s; /* [n_blocks] or NULL: p2p time of a stage boundary
                                placed after block k (one direction) */
    double p2p_s;            /* the p2p time of every boundary when cut_p2p_s is NULL */
    uint32_t n_stages;       /* P, 1..TSL_PIPESIM_MAX_STAGES, <= n_blocks */
    uint32_t n_micro;        /* m, 1..TSL_PIPESIM_MAX_MICRO */
    uint32_t max_evals;      /* simulated partitions at most; 0 = default */
} tsl_autopipe_in_t;

typedef struct tsl_autopipe_result {
    uint32_t n_stages;
    uint32_t first[TSL_PIPESIM_MAX_STAGES + 1]; /* the chosen partition */
    double iter_s;                              /* its simulated iteration time */
    double startup_s;                           /* its simulated startup overhead */
    uint32_t master_stage;
    double stage_fwd_s[TSL_PIPESIM_MAX_STAGES];
    double stage_bwd_s[TSL_PIPESIM_MAX_STAGES];
    double stage_p2p_s[TSL_PIPESIM_MAX_STAGES]; /* boundary s → s + 1 */
    double max_stage_s;                         /* max over stages of fwd + bwd */
    /* the starting point, Algorithm 1 alone */
    uint32_t alg1_first[TSL_PIPESIM_MAX_STAGES + 1];
    double alg1_iter_s;
    double alg1_max_stage_s;
    uint32_t alg1_master_stage;
    uint32_t evals;    /* partitions simulated */
    bool eval_cap_hit; /* the search stopped at max_evals */
} tsl_autopipe_result_t;

/* The heuristic partitioner (Algorithm 1 + master-stage moves, III-B-2). */
int tsl_autopipe_partition(const tsl_autopipe_in_t *in, tsl_autopipe_result_t *out, tsl_err_t *err);

/* Stage times of a partition: fwd/bwd sums and boundary p2p, P entries each
 * (p2p[P − 1] = 0). Returns -1 when first[] is not a valid partition. */
int tsl_autopipe_stage_times(const tsl_autopipe_in_t *in, const uint32_t *first,
                             double *stage_fwd_s, double *stage_bwd_s, double *stage_p2p_s,
                             tsl_err_t *err);

typedef struct tsl_autopipe_slice_cfg {
    uint32_t min_stages;  /* do not slice shallower pipelines; 0 = 3 (AutoPipe
                             Fig. 10: slicing slows a 2-stage pipeline down) */
    double half_fwd_frac; /* a half micro-batch's forward / the whole's; 0 = 0.5 */
    double half_p2p_frac; /* its p2p time / the whole's; 0 = 0.5 */
    double min_gain;      /* required relative cut of the iteration time, >= 0 */
} tsl_autopipe_slice_cfg_t;

typedef struct tsl_autopipe_slice {
    bool applied;
    uint32_t n_sliced; /* micro-batches sliced; 0 when not applied */
    uint32_t best_k;   /* the count Algorithm 2's rule picked (also when not applied) */
    double iter_s;     /* without slicing */
    double startup_s;
    double sliced_iter_s; /* with best_k sliced */
    double sliced_startup_s;
    double startup_cut; /* 1 − sliced_startup_s / startup_s, 0 when startup_s is 0 */
    char why[128];      /* one line: why (not) applied */
} tsl_autopipe_slice_t;

/*
 * The slicer. `pipe` describes the partitioned pipeline (stage times, p2p, m);
 * its n_sliced and slice fractions are ignored (cfg gives the fractions). Tries
 * k = 1, 2, ... sliced micro-batches while one more slice still lowers the
 * simulated iteration time (Algorithm 2's loop, lines 16–37), up to the warmup
 * depth min(P − 1, m). Applied only when P >= min_stages and the iteration time
 * drops by more than min_gain; otherwise `applied` is false and `why` says why.
 * cfg may be NULL (defaults).
 */
int tsl_autopipe_slice(const tsl_pipesim_in_t *pipe, const tsl_autopipe_slice_cfg_t *cfg,
                       tsl_autopipe_slice_t *out, tsl_err_t *err);

#endif

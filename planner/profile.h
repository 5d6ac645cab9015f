/*
 * profile.h — measured figures of one GPU type (what `tessel-worker profile`
 * reports, docs/profile-format.md) as the cost model uses them: per-shape
 * forward and backward times of the attention and FFN blocks at several
 * micro-batch sizes and TP splits, bandwidths and the overlap slowdown.
 *
 * Pure: no I/O (common/profile_json.c loads the JSON), no allocation after
 * tsl_profile_finish; the lookups are safe in DP inner loops.
 *
 * Interpolation (tsl_profile_block_rate). A measured block gives an achieved
 * rate, its forward GEMM FLOPs over its time (backward: twice the FLOPs over
 * the backward time). For a block of kind K, hidden size h, T tokens per
 * device (micro-batch samples × sequence) and TP split t:
 *   1. the measured hidden size nearest to h (in ratio) is used;
 *   2. for each measured TP split, the rate is interpolated linearly in
 *      log(T) between the two nearest measured token counts; below the
 *      smallest the time stays that of the smallest (rate ∝ T: launch- and
 *      latency-bound), above the largest the rate stays the largest's;
 *   3. between the two measured TP splits around t, linearly in log(t);
 *      outside them, the nearest.
 * At a measured (h, T, t) this returns the measured rate exactly.
 *
 * A layer (tsl_profile_layer_s): its forward FLOPs split into the FFN part
 * 2·(g+1)·s·h·f (kinds encoder, decoder, ffn) and the rest, charged at the
 * attention rate (encoder, decoder, attention) or at the FFN rate (embedding,
 * head: plain GEMMs). Time = FLOPs per device / interpolated rate. A kind with
 * no measured block falls back to the caller's peak × efficiency.
 *
 * Units: seconds, FLOP/s, bytes/s (bus bandwidth as cluster.h), bytes.
 */
#ifndef TSL_PROFILE_H
#define TSL_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "calibrate.h"
#include "cluster.h"
#include "err.h"
#include "model.h"

#define TSL_PROFILE_MAX_BLOCKS 512u

typedef enum { TSL_PROFILE_ATTENTION = 0, TSL_PROFILE_FFN = 1 } tsl_profile_block_kind_t;

typedef struct tsl_profile_block {
    tsl_profile_block_kind_t kind;
    uint32_t hidden, seq_len, heads, head_dim, ffn_hidden;
    bool gated;
    uint32_t mb, tp;     /* micro-batch samples on the device, TP split */
    double fwd_s, bwd_s; /* measured (or simulated) times */
    double fwd_flops;    /* forward GEMM FLOPs on one device of the TP group */
    uint64_t mem_bytes;  /* device memory the block held */
} tsl_profile_block_t;

typedef struct tsl_profile {
    char gpu[32];          /* hardware key: GPU type ("H100-80G") ... */
    char link[32];         /* ... and link class ("single", "nvlink", "pcie") */
    char source[128];      /* where it came from (a path), for the plan's "figures" */
    bool simulated;        /* from the sim backend: nothing measured */
    bool tp_comm_in_times; /* block times at tp > 1 were measured on one GPU of a
                              running TP group, its collectives inside (AMP's
                              known_cost files): the cost model adds no TP
                              communication to them */
    uint32_t gpus;         /* GPUs on the profiled node */
    uint32_t n_blocks;
    tsl_profile_block_t blocks[TSL_PROFILE_MAX_BLOCKS];
    double gemm_flops;       /* best single-GEMM rate measured, FLOP/s; 0 unknown */
    double h2d_bw, d2h_bw;   /* pinned host<->device, bytes/s; 0 unknown */
    double dmem_bw;          /* device memory (read + write), bytes/s; 0 unknown */
    double intra_busbw;      /* all-reduce bus bandwidth, largest group >= 2 at its
                                    largest message, bytes/s; 0 not measured (one GPU) */
    uint32_t intra_group;    /* that group's size */
    double overlap_slowdown; /* from a GEMM + NCCL test: the larger side's slowdown;
                                    0 when only a copy stand-in was measured */
    double overlap_stand_in; /* the GEMM side's slowdown next to a copy stand-in
                                    (informational, never used as k) */
    bool calibrated;         /* the profile carries corrections fitted from
                                    trials on this hardware ("calibration") ... */
    tsl_calib_t calib;       /* ... which tsl_profile_attach attaches to the GPU type */
} tsl_profile_t;

/* Sorts the blocks (kind, hidden, tp, tokens) and checks them: positive times
 * and FLOPs, mb and tp ≥ 1. Call once after filling; lookups need it. */
int tsl_profile_finish(tsl_profile_t *p, tsl_err_t *err);

/* A whole layer's measured forward time (fwd_s, for mb samples on one device of a
 * TP split tp) as the attention and FFN blocks the profile keeps: the layer's
 * forward FLOPs split as the model splits them (FFN 2·(g+1)·s·h·f), the time
 * shared in that ratio, the backward twice the forward (what Galvatron's and
 * AMP's profilers assume). For importers of per-layer profiles; adds nothing past
 * TSL_PROFILE_MAX_BLOCKS. */
void tsl_profile_add_layer(tsl_profile_t *p, const tsl_layer_t *l, uint32_t mb, uint32_t tp,
                           double fwd_s);

/* Interpolated achieved rates (FLOP/s) of a block kind; -1 when the profile has
 * no block of that kind. tokens = samples per device × sequence length. */
int tsl_profile_block_rate(const tsl_profile_t *p, tsl_profile_block_kind_t kind, uint32_t hidden,
                           double tokens, uint32_t tp, double *fwd_flops_s, double *bwd_flops_s);

/* Compute time of layer l for n samples per device under TP split t (the
 * profile's counterpart of cost.h's compute_f and compute_b). fallback_flops
 * (peak × efficiency) prices what the profile has no block for. */
void tsl_profile_layer_s(const tsl_profile_t *p, const tsl_layer_t *l, double n, uint32_t t,
                         double fallback_flops, double *fwd_s, double *bwd_s);

/* Which figures a cluster's GPU type takes from its profile. */
typedef struct tsl_profile_use {
    bool compute; /* block times (always, once attached) */
    bool pcie;    /* host<->device from h2d/d2h */
    bool intra;   /* intra-node bus bandwidth from NCCL */
    bool overlap; /* overlap slowdown from a GEMM + NCCL test */
    double efficiency_before, efficiency_after;
    const tsl_calib_t *calib; /* the calibration applied (calibrate.h), or NULL */
} tsl_profile_use_t;

/*
 * Attaches p (borrowed: it must outlive c and its copies) to the cluster's GPU
 * type named by p->gpu (built-in aliases resolved), and replaces that type's
 * figures the profile measured: efficiency (the FFN block rate at the largest
 * measured work, TP 1, over peak — what the heuristics outside cost.c use),
 * pcie_bw (min of H2D, D2H), intra_bw (NCCL bus bandwidth, groups ≥ 2; also on
 * nodes that used the type's figure), and the cluster's overlap slowdown (only
 * from a GEMM + NCCL test). A profile that carries a calibration attaches it
 * to the type too (tsl_cluster_set_calib; use->calib says so); one without leaves
 * the type's calibration as it was. TSL_E_PRECONDITION when no GPU type matches.
 */
int tsl_profile_attach(tsl_cluster_t *c, const tsl_profile_t *p, tsl_profile_use_t *use,
                       tsl_err_t *err);

/* The profile of the GPU type all devices of [first, first + size) share, or
 * NULL (no profile, or a block of mixed types). */
const tsl_profile_t *tsl_profile_for_block(const tsl_cluster_t *c, uint32_t first, uint32_t size);

/* One line: "figures: compute measured (deploy/profiles/h100-80g.json), pcie
 * measured, intra-node built-in, overlap built-in" or "figures: built-in";
 * with use->calib set (by attach, or by a caller that attached a calibration to
 * built-in figures with tsl_cluster_set_calib), "; calibrated from N trials
 * (iteration error B% -> A% leave-one-out)" follows. Returns the length it
 * needed, as snprintf does. */
size_t tsl_profile_describe(const tsl_profile_t *p, const tsl_profile_use_t *use, char *buf,
                            size_t cap);

#endif

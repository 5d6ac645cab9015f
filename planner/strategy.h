/*
 * strategy.h — one layer's parallel strategy inside a pipeline stage, and the
 * decision-tree enumeration of all of them (Galvatron-BMW Sec. III-B).
 *
 * A stage runs on a block of G devices. Inside it a layer uses up to three
 * parallel dimensions out of {DP, SDP, TP}, each at most once, whose degrees
 * multiply to G (a decision tree whose non-leaf degrees are > 1). The ORDER of the
 * levels matters: level 0 is the innermost dimension and takes consecutive devices
 * (stride 1, so it stays inside a node when it can); level 1 has stride
 * degree[0]; level 2 has stride degree[0]·degree[1]. Each tree comes with and
 * without activation checkpointing (CKPT).
 *
 * Counts for 8 devices summed over PP degrees 8/4/2/1 (group sizes 1/2/4/8):
 *   68 with CKPT variants and DP+SDP mixes; 44 after Takeaway #3 (no DP mixed
 *   with SDP); 22 of those without CKPT. Per PP degree (group 1/2/4/8): before
 *   Takeaway #3 2/6/18/42, after it 2/6/14/22.
 *
 * Group sizes that are not powers of two use their divisors as degrees: the
 * levels are the ordered factorisations of G into factors > 1.
 */
#ifndef TSL_STRATEGY_H
#define TSL_STRATEGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define TSL_STRATEGY_MAX_LEVELS 3
#define TSL_STRATEGY_MAX        2048u /* enough for any group ≤ 16384 devices */

typedef enum tsl_dim {
    TSL_DIM_DP = 0, /* data parallel: replicated model states, gradient all-reduce */
    TSL_DIM_SDP,    /* sharded data parallel (ZeRO-3 / FSDP) */
    TSL_DIM_TP,     /* Megatron tensor parallel */
    TSL_DIM_COUNT
} tsl_dim_t;

typedef struct tsl_strategy {
    uint8_t n_levels;                         /* 0 for a group of one device */
    uint8_t dim[TSL_STRATEGY_MAX_LEVELS];     /* tsl_dim_t, innermost first */
    uint32_t degree[TSL_STRATEGY_MAX_LEVELS]; /* each > 1 */
    bool ckpt;                                /* activation checkpointing */
    /* choices beyond the papers (docs/search-space.md); all false/0 is the papers' strategy */
    bool sp;        /* sequence parallelism with the TP level (Megatron-LM); needs TP */
    bool selective; /* selective recomputation of the attention core; not with ckpt */
    uint8_t zero;   /* DP level: 0 all-reduce, 1 ZeRO-1 (distributed optimizer),
                         2 ZeRO-2 (gradients sharded too); needs DP */
} tsl_strategy_t;

typedef struct tsl_strategy_opts {
    bool allow_dp, allow_sdp, allow_tp;
    bool allow_ckpt;    /* add the CKPT twin of every tree */
    bool allow_no_ckpt; /* keep the tree without CKPT (false: CKPT-only) */
    bool takeaway3;     /* drop trees that mix DP and SDP */
    uint32_t max_tp;    /* 0 = no limit */
    bool tp_innermost;  /* TP only as the innermost level: its ranks consecutive GPUs */
    /* choices beyond the papers, all false in tsl_strategy_opts_default (the papers' space,
     * whose counts are above); each adds twins of the trees it applies to */
    bool allow_sp;        /* trees with TP come as "+sp" (their plain form dominated) */
    bool allow_zero;      /* + "+zero1" and "+zero2" twins of every tree with DP */
    bool allow_selective; /* + a "+selckpt" twin of every variant (after the CKPT ones) */
} tsl_strategy_opts_t;

/* All dimensions, CKPT on and off, Takeaway #3 applied: the papers' space (the
 * choices beyond it off; the search turns them on from the request). */
tsl_strategy_opts_t tsl_strategy_opts_default(void);

/* Degree of one dimension (1 when unused) and its stride inside the block. */
uint32_t tsl_strategy_degree(const tsl_strategy_t *s, tsl_dim_t d);
uint32_t tsl_strategy_stride(const tsl_strategy_t *s, tsl_dim_t d);
uint32_t tsl_strategy_group_size(const tsl_strategy_t *s); /* product of degrees */
/* Data-parallel width: how many ways the micro-batch is split (DP × SDP). */
uint32_t tsl_strategy_data_width(const tsl_strategy_t *s);

/* True when the two strategies lay a layer's activations out the same way
 * (same TP degree and stride, same data width and stride), i.e. no transformation
 * is needed between consecutive layers using them. CKPT and DP vs SDP do not matter. */
bool tsl_strategy_same_layout(const tsl_strategy_t *a, const tsl_strategy_t *b);

/* Whether a tied LM head under strategy head can share the word embedding of a
 * layer under strategy emb on stages of `devices` devices, as the stage executor
 * runs it (worker/exec/exec_rank.c, tie_layouts): in the embedding's stage it
 * computes with the table itself, so the layouts must be the same; in another
 * stage it sums its copy's gradient with the embedding's rank at the same
 * position, so both must hold the same vocabulary rows there: the same TP degree
 * and the same TP index at every position. */
bool tsl_strategy_tie_ok(const tsl_strategy_t *emb, const tsl_strategy_t *head, bool same_stage,
                         uint32_t devices);

/* Small integer identifying the layout class within one enumeration (see
 * tsl_strategy_same_layout); written into layout[i] by tsl_strategy_enumerate. */

/*
 * Enumerates every strategy for a group of `group_size` devices under opts into
 * out[0..cap), in a fixed deterministic order (trees without CKPT first, then
 * their CKPT twins). layout[i] (may be NULL) receives a layout class id: equal ids
 * ⇔ tsl_strategy_same_layout. Returns the count, or -1 with err if cap is too
 * small or group_size is 0.
 */
int tsl_strategy_enumerate(uint32_t group_size, const tsl_strategy_opts_t *opts,
                           tsl_strategy_t *out, uint32_t *layout, uint32_t cap, tsl_err_t *err);

/* "tp2-dp4", "sdp8+ckpt", "tp2-sdp2-dp2" (innermost first), "single" for one device;
 * then the suffixes in this order: "+sp", "+zero1" | "+zero2", "+ckpt" | "+selckpt"
 * ("tp4-dp2+sp+zero1+selckpt"). */
size_t tsl_strategy_format(const tsl_strategy_t *s, char *buf, size_t cap);

/* Inverse of tsl_strategy_format; used by tests and plan import. */
int tsl_strategy_parse(const char *text, tsl_strategy_t *out, tsl_err_t *err);

bool tsl_strategy_equal(const tsl_strategy_t *a, const tsl_strategy_t *b);

#endif

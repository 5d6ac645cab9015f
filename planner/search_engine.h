/*
 * search_engine.h — the engine every search space runs: Algorithm 1 (the batch
 * sweep over PP degrees and micro-batch counts, search_engine.c) over the
 * configurations that search_eval.c costs, and the top-k keeping.
 *
 * A search "space" is the set of plans one search may return: Tessel's full
 * space, or a baseline's restriction of it. The same engine runs over every
 * space; only the space differs.
 */
#ifndef TSL_SEARCH_ENGINE_H
#define TSL_SEARCH_ENGINE_H

#include "cost.h"
#include "ep_overlap.h"
#include "layerdp.h"
#include "search.h"

#define TSL_SEARCH_MAX_GROUPS 128u /* distinct stage sizes (divisors of N) */
/* A model with at most this many partitions into P stages has every one of them
 * searched: when the starting partition fits nothing, and when re-balancing. */
#define TSL_SEARCH_ALL_PARTITIONS 20u
/* The most memory an engine's layer-cost memo holds (tsl_engine_t.memo); past it
 * the memo starts afresh. A row is keyed by its micro-batch size, so the sweep's
 * refinement (3b/4, 7b/8: sizes the doubling never met) fills it with rows few
 * later batches read: at 256 MiB it reached 115 MiB on GPT3-175B at 100k GPUs, and
 * costing them again after a fresh start took no measurable time there
 * (bench/search: 9.94 s either way, peak RSS 191 -> 147 MiB). */
#define TSL_SEARCH_COST_MEMO_BYTES (64ull << 20)
/* Likewise for the layer DP's answers (tsl_engine_t.dp_memo). */
#define TSL_SEARCH_DP_MEMO_BYTES (64ull << 20)
/* Largest interleave (model chunks per stage) weighed (pipeline.h; search_eval.c
 * eval_group): Megatron-Bridge's Llama 3 70B workloads run 80 layers on PP 4 in 5
 * (scripts/performance/configs/llama/llama3_workload_base_configs.py). */
#define TSL_SEARCH_MAX_INTERLEAVE 8u
/* The doubling's reach: v = 2 and 4 on any stage of v layers, each while faster;
 * the other v only where every stage cuts into v equal chunks. */
#define TSL_SEARCH_DOUBLE_INTERLEAVE 4u
/* The search weighs the zero-bubble schedules and interleaving under a group size N
 * other than P (both priced by the event simulator), and runs AutoPipe's
 * partitioner (search_autopipe.c), up to m·v = 1024 micro-batch chunks (the
 * simulator's cap before it was raised for eval: the search's time stays as it
 * was). Interleaving under the default N = P, priced in closed form, it weighs up
 * to TSL_PIPESIM_MAX_MICRO, as eval does (search_eval.c interleave_reach; cost
 * model 99); the printed plans' simulated line (tsl_search_simulate, once per
 * plan) runs up to TSL_PIPESIM_MAX_MICRO too. */
#define TSL_SEARCH_SIM_MAX_MICRO 1024u

#define TSL_SPACE_ZBH1      (1u << TSL_PIPESIM_SCHED_ZBH1)
#define TSL_SPACE_ZBV       (1u << TSL_PIPESIM_SCHED_ZBV)
#define TSL_SPACE_DUALPIPEV (1u << TSL_PIPESIM_SCHED_DUALPIPEV)

typedef struct tsl_space {
    const char *label;
    tsl_strategy_opts_t opts;
    uint32_t fixed_pp;      /* 0: every divisor of N */
    bool only_one_strategy; /* keep only `only` (DeepSpeed 3D) */
    tsl_strategy_t only;
    bool accumulate;     /* allow m > 1 micro-batches when P == 1 */
    bool uniform_layers; /* partition by layer count (Megatron), not by FLOPs */
    bool interleave;     /* weigh interleaved 1F1B (v chunks per stage) per plan */
    uint8_t zero_bubble; /* the zero-bubble schedules weighed per plan (pipesim.h):
                            TSL_SPACE_ZBH1 | TSL_SPACE_ZBV | TSL_SPACE_DUALPIPEV,
                            0: none */
    /* a training stack's space (target.h): every plan the engine returns passes
     * tsl_target_check for it (0: Tessel's) */
    uint32_t target;
    bool uniform_strategy; /* one strategy for every layer, CKPT of all blocks or none */
    bool ckpt_blocks_only; /* the embedding and the head are never checkpointed */
} tsl_space_t;

/* Strategies of one stage size, enumerated once per search. */
typedef struct tsl_group_strategies {
    uint32_t group_size;
    uint32_t n;
    tsl_strategy_t *items; /* owned */
    uint32_t *layout;      /* owned */
} tsl_group_strategies_t;

/* The layouts of one group and the moves between them on each stage block, made
 * on the first stage costed there (they depend on the block only through its
 * links) and kept for the search. */
/* Envs made, densely: they grow by doubling (an engine copies an env out by value). */
typedef struct tsl_env_pool {
    tsl_cost_env_t *env; /* [n], room for cap */
    uint32_t n, cap;
} tsl_env_pool_t;

typedef struct tsl_group_layouts {
    uint32_t n;            /* Λ: distinct layouts of the group */
    bool numbered;         /* of, rep and n made (on the group's first costing) */
    uint32_t *of;          /* [group's n]: strategy → layout 0..Λ−1 */
    uint32_t *rep;         /* [group's n]: layout → its first strategy */
    tsl_relayout_t *moves; /* [stage × Λ² + a·Λ + b] */
    /* [stage × Λ²]: move made. Moves are made when first needed: between two
     * layouts some strategy of which is feasible on a layer of the stage (a
     * 100k-GPU block has 70 layouts, most with a TP degree no layer takes) */
    uint8_t *pair_done;
    /* each strategy's collective figures on each stage block (tsl_cost_strategy_bw:
     * they depend on the block and the cost mode only), made on the block's first
     * costing: a 16k-GPU block's topology walk is not repeated per batch size */
    tsl_strategy_bw_t *bw; /* [stage × group's n] */
    uint8_t *bw_done;      /* [stage] */
    /* each stage block's env under the engine's knobs (tied_copy set per use), made
     * on first use into a dense pool (env_at[stage]: 1 + its index there, 0 not
     * made; an array of an env per stage is touched a page per env made, ~30 MiB of
     * pages for a few MiB of envs on a 100k-GPU cluster), and the pairs' figure of
     * its boundary to the next block ([2·stage]) and back to the first
     * ([2·stage + 1]), made on first use: a 12,500-node cluster's walks */
    uint32_t *env_at;
    tsl_env_pool_t *envs; /* behind a pointer: a borrowing engine shares it */
    double *pairs_bw;
    uint8_t *pairs_done;
    bool borrowed; /* another engine's arrays (tsl_engine_borrow_figures): not freed here */
} tsl_group_layouts_t;

/* Everything one search needs, allocated once up front. */
typedef struct tsl_engine {
    const tsl_model_t *model;
    uint32_t max_cut; /* the latest start of the last stage: every partition the
                         engine costs keeps the MTP layers with the head
                         (partition.h tsl_partition_max_cut) */
    const tsl_cluster_t *cluster;
    const tsl_request_t *req;
    const tsl_search_hooks_t *hooks;
    const tsl_space_t *space;
    tsl_cost_knobs_t knobs; /* the request's (tsl_request_knobs); eval: with the given
                               plan's recorded ones where the request sets none */
    uint64_t budget_bytes;  /* on the largest device; tsl_engine_stage_budget per stage */
    uint64_t bucket_bytes;
    uint32_t vp_group; /* interleaved plans' micro-batches per group N (pipeline.h;
                          0: P): the request's, or eval's given plan's */

    uint32_t n_groups;
    tsl_group_strategies_t groups[TSL_SEARCH_MAX_GROUPS];
    uint32_t max_strategies;

    uint32_t *layer_class; /* [L]: equal ids ⇔ identical layer shapes */
    /* the configuration being costed under a V schedule (ZBV, DualPipeV; v_on): rank s
     * runs the model's parts s and 2P − 1 − s, v_part[q] .. v_part[q + 1] (pipeline.h
     * tsl_pipeline_v_parts, the layout the torchtitan export writes), its rows in that
     * order, the first v_chunk0 of the stage being costed its first chunk (search_eval.c
     * set_vparts, stage_rows), each chunk's stash at its own count (v_held). v_on
     * false: every stage its own layers in order. row_at: the rows of the stage being
     * costed (NULL: in order) */
    bool v_on;
    uint32_t v_part[2 * TSL_PLAN_MAX_STAGES + 1], v_chunk0;
    /* the plain configuration being costed is followed by a V (eval_zero_bubble), whose
     * ranks run other layers: below_bar also holds it to v_floor_s, the least time per
     * micro-batch of the V's busiest rank that the stages costed so far prove
     * (search_eval.c v_floor_stage): each block at the strategy its plain stage chose
     * (v_layer_s: forward + backward, comm_s; NaN: its stage not costed yet) on the
     * rank the V runs it (v_next_part: the V's parts of this cut), each block still to
     * cost at its class's least over the group's strategies (v_class_s: of forward +
     * backward, of comm_s, of their difference; NaN: no stage of this configuration
     * has costed the class yet); v_less_comm: a DualPipeV may hide its communication */
    bool v_next, v_less_comm;
    double v_floor_s;
    double *v_layer_s; /* [2L] */
    double *v_class_s; /* [3 × n_classes] */
    uint32_t v_next_part[2 * TSL_PLAN_MAX_STAGES + 1];
    const uint32_t *row_at;
    uint32_t n_classes;

    /* per-stage DP inputs, [L × S_max]: rows of figures, the stage's row i's at dp_row[i]
     * (layerdp.h row_at): a run of rows that price alike shares one (fill_stage_rows) */
    double *time_s;
    uint64_t *fwd_bytes, *bwd_bytes, *ms_bytes;
    uint32_t *dp_row;     /* [L]: the stage's row i's row of figures, < n_dp_rows */
    uint32_t n_dp_rows;   /* the rows of figures the stage's rows use */
    double *trans_s;      /* [L × Λ_max²]: R per pair of the stage's layouts (layerdp.h), one
                        matrix per class of the stage's rows (search_eval.c fill_stage_trans) */
    bool same_mem;        /* every device has the same memory (tsl_engine_stage_budget) */
    uint32_t *trans_at;   /* [L]: the stage's row i's matrix in trans_s */
    uint32_t n_trans;     /* the matrices in trans_s */
    uint32_t *class_slot; /* [classes] scratch: UINT32_MAX, or the class's matrix */
    /* per-layer-class costs, [classes × S_max]: a stage's own, where the memo
     * does not keep them (a group of the caller's) */
    tsl_layer_cost_t *class_cost;
    /* [classes]: the stage's row of S costs of each class, in class_cost or the memo */
    const tsl_layer_cost_t **class_row;
    /* the rows costed so far, by group, stage block (its twin's), micro-batch size,
     * tied copy, class and the env's knobs (a fingerprint: CP, EP, expert TP, the
     * precision, the routing, the recompute modules, ...): nothing else of a
     * configuration enters tsl_cost_layer, so
     * the sweep's batches, micro-batch counts, interleaves and re-partitions that
     * meet one again read it instead of costing it again (search_eval.c) */
    struct tsl_cost_memo *memo;
    /* the layer DP's answers by a 128-bit fingerprint of the whole problem: a
     * stage the re-partitioning, the interleaves or the sweep meet again with the
     * same rows is not solved again (search_eval.c dp_solve) */
    struct tsl_dp_memo *dp_memo;
    tsl_transition_cost_t *class_trans; /* [classes × Λ_max²]: R per pair of layouts */
    uint8_t *class_done;
    /* the stage's layouts (search_eval.c): distinct layouts of its group, numbered
     * 0..n_layouts−1, and the moves between each pair on the stage's block */
    uint32_t max_layouts;         /* Λ_max over the groups */
    uint32_t n_layouts;           /* of the stage being costed */
    const uint32_t *stage_layout; /* [S]: strategy → layout, of the stage being costed */
    tsl_relayout_t *moves;        /* [a·n_layouts + b], a the earlier layer's layout */
    /* the stage's lazily made moves (NULL pair_done: all made): its marks, its
     * twin block's (stage_twin; NULL when none) and the block's representatives */
    uint8_t *pair_done, *twin_done;
    tsl_relayout_t *twin_moves;
    const uint32_t *pair_rep;
    const tsl_group_strategies_t *pair_group;
    uint32_t pair_first;        /* the block's first device */
    uint8_t *layout_live;       /* [Λ_max] scratch: a layout some layer of the stage can take */
    uint32_t *live_at;          /* [Λ_max] scratch: the stage's R layouts (live_layouts) ... */
    uint32_t n_live;            /* ... and how many, ascending */
    tsl_group_layouts_t *glay;  /* [n_groups]: the same per group and stage, kept */
    uint32_t *layout_of;        /* [S_max] scratch for a group outside groups[] */
    uint32_t *layout_rep;       /* [Λ_max] scratch */
    tsl_relayout_t *moves_tmp;  /* [Λ_max²] scratch */
    uint32_t *relayout_scratch; /* [3 × devices] for tsl_relayout_plan */
    /* the links floor of the block last moved on (tsl_relayout_links_floor: a walk
     * over its nodes), kept for its other pairs of layouts; floor_G 0: none yet */
    uint32_t floor_first, floor_G;
    double floor_bw;
    tsl_strategy_bw_t *bw;             /* [S_max] scratch: a block's collective figures, made */
    const tsl_strategy_bw_t *stage_bw; /* [S]: the stage's (e->bw or a kept glay row) */
    uint32_t *choice;                  /* [L] */
    uint32_t *zb_choice;               /* [L]: a plan's strategies, for its zero-bubble costing */
    double *layer_time_s; /* [L]: each layer's priced forward + backward of one micro-batch
                             under the strategy the last costing of its stage chose (NaN: not
                             costed since reset; hybrid_priced_cut) */
    double *cut_w;        /* [L] scratch: the units' weights of hybrid_priced_cut */
    /* [L] scratch: a stage's nodes under the EP overlap (stage_times, ep_overlap.h) */
    tsl_ep_layer_t *ep_layers;
    tsl_plan_t *recut;    /* a configuration's plan on its priced cut (eval_uniform) */
    uint32_t *tie_choice; /* [L]: the tied pair's first layout's assignment (solve_stage) */
    double *tie_rows;     /* [2 × S_max]: the embedding's and the head's DP rows */
    tsl_layerdp_ws_t *ws; /* made by tsl_engine_ws (tsl_engine_run first) */
    /* NULL, or another engine's workspace, idle while this one runs: the layer DP
     * uses it where it holds the problem (the sub-layer engine: the main one's,
     * whose blocks are in memory already), e->ws only where it does not */
    tsl_layerdp_ws_t *ws_lent;

    /* stage partitions by PP degree: part[P-index][stage] = first layer */
    uint32_t *partition; /* [(max stages + 1) per P], see search_eval.c */

    const uint16_t *node_order; /* placement being costed (NULL: as given) */
    bool saw_divisible;         /* some (layer, strategy) split its micro-batch evenly */
    tsl_plan_t *alt;            /* scratch plan: another interleave of the same configuration */
    /* each stage of the plain configuration costed last (v 1, no schedule, not a
     * given plan, one that interleaving may follow): the least forward and backward
     * time per micro-batch, and the least layer-DP objective ((m − 1)(f + b) + f + b +
     * sync + step), that any interleave of it can have on that stage within its
     * budget (search_eval.c floor_stage, a Lagrangian bound) — what bounds every
     * interleave from below (eval_more_chunks) */
    double least_k_s[TSL_PLAN_MAX_STAGES];
    double least_obj_s[TSL_PLAN_MAX_STAGES];
    /* each stage (a V's rank) of the zero-bubble plan on given strategies costed last
     * (eval_zero_bubble: the 1F1B plan's): the least below_bar's K can be on that
     * stage's rows under any of the group's strategies (search_eval.c zb_floor_stage) —
     * what zb_own_choice holds its re-solve to before running any layer DP;
     * zb_floor_fb_s the least F + B alone */
    double zb_floor_s[TSL_PLAN_MAX_STAGES], zb_floor_fb_s[TSL_PLAN_MAX_STAGES];
    struct zb_term *zb_term; /* [L × S_max] scratch: the floors' terms (zb_floor_stage) */
    bool zb_floor_off;       /* tests only: every re-solve run, its floors unread */
    tsl_plan_t *cand;        /* scratch plan: one strategy of a uniform space */
    /* the event simulator's input and workspace for the schedules it prices (search_eval.c
     * zb_iter), kept across configurations and grown to the largest asked: made and
     * freed for each, their churn among the memos' chunks held the heap's pages */
    tsl_plan_sim_t *sim;
    void *sim_ws;
    size_t sim_ws_bytes;
    /* the simulator's answers by their input's fingerprint (sim_memo.h): a schedule
     * priced again on the same stage figures is read back (search_eval.c zb_iter) */
    struct tsl_sim_memo *sim_memo;
    tsl_target_view_t *tview;  /* scratch for the target check (space->target only) */
    int8_t uniform_ckpt;       /* during a uniform pass: blocks take item 1 (CKPT) when 1,
                                   item 0 when 0; -1: not in a uniform pass */
    uint32_t uniform_block_n;  /* with uniform_ckpt 1: only the first N Transformer layers
                                   of each stage take CKPT (Megatron-LM's --recompute-method
                                   block); 0: all of them */
    double bar_samples_per_s;  /* during the sweep: the best throughput so far; an interleave
                                   that cannot beat it is not costed (0: cost every one) */
    bool prune_below_bar;      /* only a plan above bar_samples_per_s is of use (the
                                   sub-layer step): a configuration that a stage proves
                                   cannot beat it is left unfinished (.valid false) */
    double need_samples_per_s; /* 0, or the throughput a configuration must beat to
                                   change anything (the sweep: what it keeps; the
                                   re-balancing: the plan it re-partitions): a plain
                                   (v = 1) configuration that a stage proves cannot is
                                   left unfinished (.valid false), as under
                                   prune_below_bar; Tessel's space only (no target) */
    double seen_samples_per_s; /* during the sweep's doublings: the doubling's best so
                                   far, which a batch's best must pass to count as a
                                   gain (search_engine.c sweep_doubling); INFINITY
                                   elsewhere in tsl_engine_run. A V below both it and
                                   the need changes nothing (eval_zero_bubble); 0: no
                                   V is skipped so */
    tsl_plan_t *per_pp;        /* NULL, or [n_groups] set by the caller: tsl_engine_run
                                   fills it with the best plan of each PP degree (group i,
                                   P = N / groups[i].group_size; .valid false where none
                                   fits), the candidates the refinement steps need
                                   whatever the top-k shown */
    /* every node alike (tsl_cluster_is_homogeneous, one GPU type): a stage block
     * whose node and NVLink-domain boundaries fall where stage 0's do has stage
     * 0's links, so its collective figures and moves are copied, not walked again
     * (search_eval.c stage_twin) — a 100k-GPU cluster's 50 blocks cost one walk */
    int8_t uniform_blocks; /* −1: not yet found (search_eval.c uniform_blocks) */
    /* the groups' topology walks of its envs (cost.h tsl_cost_walks_t; NULL out of
     * memory: walked every time), kept across reruns, whose knobs they do not read;
     * walks_borrowed: another engine's or the search's (tsl_engine_borrow_figures,
     * tsl_engine_share_walks), not freed here */
    tsl_cost_walks_t *walks;
    bool walks_borrowed;
    /* the search's table, whatever its cluster (tsl_engine_share_walks), where e leaves
     * its layer-cost memo for the search's next engine and takes the one the last left
     * (cost.h tsl_cost_walks_t.spare_memo); NULL: e's memo is its own, freed with it */
    tsl_cost_walks_t *spares;
    tsl_search_stats_t stats;
} tsl_engine_t;

/* Tessel's own space under the request's switches, kept to the request's
 * target stack when it names one. */
tsl_space_t tsl_space_tessel(const tsl_request_t *r);

int tsl_engine_init(tsl_engine_t *e, const tsl_model_t *m, const tsl_cluster_t *c,
                    const tsl_request_t *r, const tsl_search_hooks_t *hooks,
                    const tsl_space_t *space, tsl_err_t *err);
void tsl_engine_free(tsl_engine_t *e);

/* Readies e for another tsl_engine_run under knobs k on the same model, cluster,
 * request and space (search.c: the FP8 pass after the bf16 one): statistics and
 * what the last run saw cleared, the layer costs and the DP's answers made afresh
 * (tsl_engine_drop_memos); the layouts' moves,
 * and the collective figures unless k's CP, EP or expert-TP degree differs, are kept (they
 * depend on neither the precision nor the other knobs). */
void tsl_engine_rerun(tsl_engine_t *e, const tsl_cost_knobs_t *k);

/* Frees e's memos (tsl_engine_t.memo, dp_memo, sim_memo): it costs, solves and
 * simulates what it meets again afresh, to the same figures. */
void tsl_engine_drop_memos(tsl_engine_t *e);

/* e's layer-DP workspace (L × S × buckets), made when e has none; -1 when out
 * of memory. */
int tsl_engine_ws(tsl_engine_t *e);

/* Lends src's per-group figures to dst — the layouts and the moves between them,
 * the collective figures and envs of each stage block, the boundaries' pair
 * figures — for every group the two enumerate alike. None of them depends on the
 * model (only on the strategies, the cluster, the request's pricing and the
 * knobs), so an engine over another split of the same model (the sub-layer
 * step's) reads the walks src made instead of walking a 100k-GPU cluster again.
 * Both must have the same cluster, request and knobs (call after
 * tsl_engine_rerun, never rerun dst after); src must outlive dst, and the two
 * must not run at once. Figures dst makes go into the shared arrays. src's kept
 * topology walks (walks) are lent wherever the two have the same cluster. */
void tsl_engine_borrow_figures(tsl_engine_t *dst, tsl_engine_t *src);

/* Makes w (a table of e's cluster's walks, tsl_cost_walks_new) the one e's envs keep
 * their topology walks and e its layout moves in, in place of its own: the search
 * shares one among the engines of its CP, EP and expert-TP degrees and the baselines',
 * whose groups' walks and moves are the same (cost.h tsl_cost_walks_t). Nothing where w is NULL or another cluster's (a placement's
 * permuted copy keeps the engine's own). Either way (w not NULL) e leaves its
 * layer-cost memo and event-simulator workspace in w when done and takes the ones left
 * there (e->spares). w must
 * outlive e, and the engines that share it must not run at once. */
void tsl_engine_share_walks(tsl_engine_t *e, tsl_cost_walks_t *w);

/* Adds one run's counters to a result's. */
void tsl_search_add_stats(tsl_search_stats_t *into, const tsl_search_stats_t *s);

const tsl_group_strategies_t *tsl_engine_group(const tsl_engine_t *e, uint32_t group_size);

/* Memory budget of the stage on devices [first, first + n): the least of its
 * devices' tsl_request_device_budget (search.h: the request's budget, at most the
 * device's memory, else the device's memory less the reserve), for a search and a
 * given plan (eval) alike. */
uint64_t tsl_engine_stage_budget(const tsl_engine_t *e, uint32_t first, uint32_t n);

/* The formulas the engine's request asks for (cost.h): PAPER for paper_cost. */
tsl_cost_mode_t tsl_engine_cost_mode(const tsl_engine_t *e);
/* The request's pricing on a stage's env: its cost mode, no host dispatch floor
 * (host_op_s = 0) under PAPER or the request's no_host_floor, and under PAPER
 * no all-to-all dispatcher's pieces (knobs.moe_alltoall off). */
void tsl_engine_env_request(const tsl_engine_t *e, tsl_cost_env_t *env);

/*
 * Costs one configuration (global batch B, P stages, m micro-batches) over the
 * engine's space and fills plan (plan->valid false when nothing fits).
 */
void tsl_engine_eval(tsl_engine_t *e, uint32_t B, uint32_t P, uint32_t m,
                     const uint32_t *first_layer, tsl_plan_t *plan);

/*
 * A given plan instead of a search (eval.h): an engine with one group of
 * N / P devices whose strategies are the distinct ones of layer[0..L), each
 * layer's index among them into choice[0..L). Free it with tsl_engine_free.
 */
int tsl_engine_init_given(tsl_engine_t *e, const tsl_model_t *m, const tsl_cluster_t *c,
                          const tsl_request_t *r, const tsl_space_t *space, uint32_t P,
                          const tsl_strategy_t *layer, uint32_t *choice, tsl_err_t *err);

/* Costs the given plan's configuration exactly as tsl_engine_eval costs a
 * searched one, with choice in place of the layer DP (and interleave v as
 * given). Stage peaks are not held to the budget: the caller judges them. */
void tsl_engine_eval_given(tsl_engine_t *e, uint32_t B, uint32_t P, uint32_t m, uint32_t v,
                           uint32_t sched, const uint32_t *first_layer, const uint32_t *choice,
                           tsl_plan_t *plan);

/*
 * Algorithm 1 over the engine's space: the best plan into best, the top-k into
 * top (may be NULL). Returns TSL_SEARCH_OK, TSL_SEARCH_ERR (nothing fits; err
 * says why) or TSL_SEARCH_CANCELLED. progress_lo/hi map this run's progress into
 * the caller's overall fraction.
 */
int tsl_engine_run(tsl_engine_t *e, tsl_plan_t *best, tsl_plan_t *top, uint32_t top_cap,
                   uint32_t *n_top, double progress_lo, double progress_hi, tsl_err_t *err);

/* Whether the hooks carry a cancel flag that is set. Every loop of the search
 * polls it at least once per configuration costed (one layer-DP pass), so that a
 * cancelled search returns within about one configuration's time. */
bool tsl_search_cancelled(const tsl_search_hooks_t *hooks);

/* Offers p to the best-first list top[0..*n) of capacity cap (top may be NULL). */
void tsl_top_offer(tsl_plan_t *top, uint32_t cap, uint32_t *n, const tsl_plan_t *p);
/* Sorts top[0..n) best first (an insertion sort: the refinement's few tens of plans). */
void tsl_top_sort(tsl_plan_t *top, uint32_t n);

#endif

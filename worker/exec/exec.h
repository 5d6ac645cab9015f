/*
 * exec.h — the stage executor: runs one rank of a plan for real on synthetic data, so
 * that predicted figures can be held to measured ones (DESIGN.md "Trials").
 *
 * What a rank does. Its stage's layers, built from the plan's shapes (LN, QKV
 * projection, causal attention core, output projection, LN, FFN two GEMMs with GeLU,
 * residuals; no dropout; attention as the cost model assumes: fused by query chunks
 * with the masked keys skipped and nothing of size s² kept to backward, or, when the
 * model's layer says unfused_attn, with its s×s softmax output stashed), forward and
 * backward over the plan's micro-batches in the 1F1B order of Megatron-LM (warm-up
 * forwards, one-forward-one-backward, cool-down backwards), activations and gradients
 * sent to the neighbouring stages — or, for a plan with interleave v > 1, Megatron's
 * interleaved 1F1B over v model chunks per rank (chunk c of stage s: the layers of
 * virtual stage c·pp + s, the chunks cut from the stages' layers as the Megatron
 * export's --num-layers-per-virtual-pipeline-stage cuts them, exec_rank.c; the last
 * stage's chunk c feeding stage 0's chunk c + 1; the order, the pairing of sends and
 * receives and the stash in exec_sched.c; micro-batches a multiple of pp); Megatron TP (QKV and FFN-up split by columns, output
 * projection and FFN-down by rows, one all-reduce after each in forward, one on the
 * input gradient of each in backward); data parallelism over the micro-batch's samples:
 * DP all-reduces a layer's gradients on the communication stream as soon as its last
 * micro-batch's backward is done (overlapping the rest of backward), SDP (ZeRO-3)
 * all-gathers a layer's parameters before its forward and backward and reduce-scatters
 * its gradients after each backward; checkpointed layers keep only their input and
 * recompute forward before backward; then an Adam (or SGD) step on the rank's
 * parameters (or shards). Llama-family layers as the planner prices them (model.h):
 * RMSNorm (rms_norm), SwiGLU (gated_ffn: gate | up, both column-split under TP), no
 * biases (no_bias), grouped-query attention (kv_heads: K/V of kv_heads·hd each, TP
 * splitting the K/V heads too) and a causal sliding window (attn_window: query q sees
 * keys (q − w, q], masked key blocks skipped). No rotary position embedding (but in
 * latent attention): the planner prices none (elementwise, small), so Llama runs
 * without positions.
 * Parallel blocks (parallel_block: GPT-J, NeoX, Falcon, Phi): y = x + attn(LN(x)) +
 * ffn(LN'(x)), both row-parallel outputs summed before one TP all-reduce in forward and
 * both branches' norm-output gradients in one in backward; shared_norm: LN' = LN.
 * Mixture-of-experts FFN blocks (the model's experts > 0; exec_moe.c): a router, the
 * top-k routed experts of each token dispatched to and combined from the ranks of the
 * layer's EP group (the plan's ep innermost ranks of the stage) by all-to-alls, shared
 * experts as a dense FFN, the experts' gradients summed over the expert-DP group.
 *
 * Layer kinds: ENCODER, ATTENTION, FFN (sub-layer blocks), EMBEDDING (a token lookup,
 * plus a learned position table, replicated, when the model's layer has positions;
 * first in the model) and HEAD (projection to the vocabulary + cross-entropy; must
 * end the model). The loss is cross-entropy after a HEAD, else the mean squared error
 * of the last layer's output against synthetic targets. EMBEDDING and HEAD are
 * vocabulary-parallel under TP as in Megatron-LM (exec_vocab.c): the vocabulary padded
 * to a multiple of 128·t (tsl_exec_vocab_local), each TP rank holding its rows of the
 * table and of the head weight, the lookup all-reduced, the cross-entropy reduced
 * over the TP group (row maxima all-gathered, Σexp and target logits all-reduced);
 * the padding takes no part in the loss, so every TP degree computes the same
 * function. A tied head (the model's tied_head) uses the embedding's table when both
 * are in one stage; in another stage it keeps a copy whose gradient the first and
 * last stages sum before the optimizer step (Megatron's embedding group; tie_color).
 * Multi-head latent attention (DeepSeek-V2/V3's MLA, the model's kv_lora_rank;
 * exec_mla.c): latent Q and K/V projections with their RMSNorms, RoPE on the rotary
 * parts (a key shared by the heads), heads of qk_nope + qk_rope and v_head; the down
 * projections replicated under TP, the up projections split by heads. Routers as
 * the model says: sigmoid or softmax scores, a score-correction bias for the choice,
 * group-limited choice, normalised and scaled top-k weights, a sigmoid gate on the
 * shared experts (model.h "Routing").
 *
 * Refused with TSL_E_UNSUPPORTED: DECODER,
 * attn_dim ≠ hidden (latent attention aside), latent attention in a parallel block or
 * with an odd RoPE width, a router with a linear bias on its logits (gpt-oss), a MoE layer whose experts and stage
 * the plan's ep does not divide or whose tokens of a micro-batch share its TP degree
 * does not split, DP mixed with SDP in one layer, neighbouring stages of different
 * device counts, a micro-batch a layer's data width does not divide, heads, K/V heads
 * or FFN size a layer's TP degree does not divide (or K/V heads not dividing the
 * heads), fewer
 * positions than the sequence, a tied head without a token embedding of its
 * vocabulary and width as layer 0, a tied head in the embedding's stage with another
 * layout than the embedding's, a tied head in another stage with another TP degree or
 * index than the embedding's at the same position; interleaving with micro-batches
 * not a multiple of pp, fewer than 2 stages, more than TSL_EXEC_MAX_CHUNKS chunks, or a
 * chunk left without a layer.
 *
 * Layouts. Every layer runs with its own strategy (TP degree, data width and their
 * strides over the stage's devices), as Galvatron-BMW's layer-wise plans do. Where
 * consecutive layers' layouts differ, the activation moves between them
 * (exec_layout.c, exec_relayout.c): a local slice when the next layer's samples are
 * inside the rank's, else an all-gather over a group of ranks whose samples tile the
 * needed ones (or the whole micro-batch); backward the reverse (a gather where forward
 * sliced, a slice where it gathered). A stage whose first layer's layout differs from
 * the previous stage's last receives at the same position and moves the same way.
 *
 * Data. Seeded: the weights of model layer i depend on (seed, i) only (a tied head's
 * copy on layer 0's, the table it copies), sample k of micro-batch j on (seed,
 * iteration, j·micro_batch + k) only, so any split of the same plan computes the
 * same function. Loss scale 1/(global batch × outputs per sample):
 * gradients summed over micro-batches and data ranks are those of the mean loss.
 *
 * Units: seconds, bytes, samples. Errors: 0 / -1 with tsl_err_t. Running out of
 * device memory is not an error of tsl_exec_run: the report says oom = true.
 */
#ifndef TSL_EXEC_H
#define TSL_EXEC_H

#include <stdbool.h>
#include <stdint.h>

#include "commops.h"
#include "devops.h"
#include "model.h"
#include "plan.h"

/* A HEAD's tie to the model's token embedding (model layer 0). */
typedef enum tsl_exec_tie {
    TSL_EXEC_TIE_NONE = 0, /* its own weight */
    TSL_EXEC_TIE_SHARED,   /* the stage's embedding table: no parameters of its own */
    TSL_EXEC_TIE_COPY      /* a copy of the first stage's table, the gradients summed */
} tsl_exec_tie_t;

/* How a layer's input reaches its layout from the layout before it (the previous
 * layer's, or the sending stage's last layer's at the same position), or in backward
 * how its input gradient goes back (exec_layout.c, exec_relayout.c). Samples of a
 * micro-batch are contiguous rows, so a layout's share is one range of samples. */
typedef enum tsl_exec_move_kind {
    TSL_EXEC_MOVE_NONE = 0, /* the same samples on both sides */
    TSL_EXEC_MOVE_SLICE,    /* the wanted samples are inside those held: a local copy */
    TSL_EXEC_MOVE_GATHER    /* all-gather over a group, then (maybe) a local copy */
} tsl_exec_move_kind_t;

typedef struct tsl_exec_move {
    tsl_exec_move_kind_t kind;
    int32_t group;         /* GATHER: index in the rank's groups; else -1 */
    uint32_t from_b, to_b; /* samples held, samples wanted */
    uint32_t offset;       /* first wanted sample in what is held (SLICE) or gathered */
} tsl_exec_move_t;

typedef struct tsl_exec_layer {
    tsl_layer_kind_t kind;
    uint32_t index; /* in the model: seeds the weights */
    uint32_t seq, hidden, ffn, heads, vocab;
    bool bias;          /* linear layers have biases */
    bool ckpt;          /* recompute forward before backward */
    bool sdp;           /* parameters sharded over the data group (else replicated) */
    uint32_t positions; /* EMBEDDING: learned position table rows (≥ seq), 0 for none */
    tsl_exec_tie_t tie; /* HEAD */
    /* the model's unfused_attn: attention keeps its s×s softmax output until backward */
    bool unfused_attn;
    /* Llama-family shapes (the model's flags of the same names): RMSNorm (scale only),
     * gated FFN (SwiGLU: up projection of gate | up, 2·ffn columns), K/V heads for
     * grouped-query attention (0: = heads), sliding window of keys per query (0: all) */
    bool rms_norm, gated_ffn;
    uint32_t kv_heads, window;
    bool causal; /* the model's causal: query q attends to keys ≤ q (else to all) */
    /* ENCODER only, the model's parallel_block and shared_norm: y = x + attn(LN(x)) +
     * ffn(LN'(x)) (GPT-J, NeoX, Falcon, Phi), the two row-parallel outputs summed before
     * one TP all-reduce; shared_norm: LN' = LN, one norm (no ln2 parameters) feeding both
     * the QKV and the FFN's up projection */
    bool parallel, shared_norm;
    /* Mixture of experts (the model's experts > 0; ENCODER or FFN; docs/executor.md
     * "Mixture of experts"): a router (h × experts, no bias, replicated over TP) picks
     * top_k of `experts` routed experts for each token, each an FFN of expert_ffn
     * columns (gated as gated_ffn, biases as bias) at expert TP 1, weighted by their
     * softmax probabilities; ffn is then the shared experts' width S·f_s, one dense FFN
     * (0: none) split by TP as any FFN. Under TP each TP rank routes its 1/tp of the
     * tokens. The routed experts are split over the EP group (ep ranks of the stage,
     * consecutive: this one ep_index, holding experts [ep_index·E/ep, (ep_index + 1)·
     * E/ep)); their gradients are summed over the expert-DP group (edp = stage / ep
     * ranks at stride ep; this one edp_index), their states sharded over it when sdp.
     * experts 0: a dense layer (ep, edp 0, the groups -1). */
    uint32_t experts, top_k, expert_ffn;
    uint32_t ep, ep_index, edp, edp_index;
    int32_t ep_group, edp_group;
    /* How the router scores, chooses and weighs (the model's router_* fields, model.h
     * "Routing"): sigmoid scores (else the softmax), a per-expert score-correction
     * bias that chooses but does not weigh (E more parameters, never trained: no
     * gradient), group-limited choice (router_groups > 1: the best router_topk_groups
     * groups), the top-k weights normalised, times router_scale (0: 1); shared_gate:
     * the shared experts' output times sigmoid(y·w_g), w_g h × 1 (Qwen2-MoE). */
    bool router_sigmoid, router_choice_bias, router_norm, shared_gate;
    uint32_t router_groups, router_topk_groups;
    float router_scale;
    /* Multi-head latent attention (the model's kv_lora_rank > 0; ENCODER or ATTENTION;
     * DeepSeek-V2/V3; exec_mla.c): queries from a full projection (q_lora 0) or a down
     * projection to q_lora + RMSNorm + an up projection; the KV latent of kv_lora and
     * one rotary key of qk_rope shared by the heads from one down projection, the
     * latent's RMSNorm and its up projection to each head's no-rope key (qk_nope) and
     * value (v_head); RoPE (rope_base) on the queries' and the shared key's qk_rope
     * parts; the core over heads of qk_nope + qk_rope (Q, K) and v_head (V); an output
     * projection of heads × v_head. The down projections and latent norms replicated
     * over TP, the up projections and heads split. kv_lora 0: ordinary attention. */
    uint32_t q_lora, kv_lora, qk_nope, qk_rope, v_head;
    float rope_base;
    /* The layer's layout on this rank (its strategy at the rank's place in the stage):
     * TP degree and index, data width (DP or SDP degree) and index, local samples per
     * micro-batch b = micro_batch / dw (samples [dw_index·b, (dw_index + 1)·b)), its TP
     * and data groups (indices in the rank's groups), and the moves of its input. */
    uint32_t tp, tp_index, dw, dw_index, b;
    int32_t tp_group, dw_group;
    tsl_exec_move_t in_fwd, in_bwd;
} tsl_exec_layer_t;

/* One group of a rank: its colour (the world rank of its first member), this rank's
 * key (its order in the group), and its size. */
typedef struct tsl_exec_group {
    int32_t color, key;
    uint32_t size;
} tsl_exec_group_t;

/* Vocabulary rows (embedding) or logit columns (head) one TP rank of tp holds: V
 * padded to a multiple of 128·tp as Megatron pads it (and the planner prices it),
 * over tp. Rank j holds [j·vl, (j+1)·vl); rows at or past V are padding. */
#define TSL_EXEC_VOCAB_PAD 128u
uint32_t tsl_exec_vocab_local(uint32_t vocab, uint32_t tp);

/* The most model chunks per stage the executor runs (interleaved 1F1B). */
#define TSL_EXEC_MAX_CHUNKS 16u

/* One rank's work. Groups are named by colours (the world rank of their first
 * member) so that every rank can make them with commops group_split. */
typedef struct tsl_exec_rank {
    uint32_t rank, world; /* world ranks = the plan's device indices */
    uint32_t stage, pp;
    /* The first layer's layout (each layer has its own: tsl_exec_layer_t) */
    uint32_t tp, tp_index; /* TP degree, this rank's index in its TP group */
    int32_t tp_color;
    uint32_t dp, dp_index; /* data width (DP or SDP degree), index */
    int32_t dp_color;
    /* The groups the stage's layouts need, in the order every rank of the stage makes
     * them (round k: groups[k]); n_splits ≥ n_groups is the most any stage of the plan
     * makes, so that every world rank calls group_split as often (after its own, a
     * group of itself alone). */
    uint32_t n_groups, n_splits;
    tsl_exec_group_t *groups;     /* owned */
    int32_t prev_rank, next_rank; /* same position in the neighbouring stage; -1 */
    /* A tied head in another stage than the embedding: the first and last stages'
     * ranks at the same position form a group (colour: the first stage's rank) that
     * sums the table's gradient; other stages' ranks are alone (their own rank).
     * -1 on every rank when the plan has no such tie. */
    int32_t tie_color;
    uint32_t micro_batch; /* samples per micro-batch over the data group */
    uint32_t n_micro;
    uint32_t n_layers;
    tsl_exec_layer_t *layers; /* owned; the stage's layers in order */
    /* Interleaved 1F1B (the plan's interleave v > 1): the rank's layers are its v
     * model chunks one after another, chunk c = layers [chunk_first[c],
     * chunk_first[c + 1]), the layers of virtual stage c·pp + stage. n_chunks 1 (or 0,
     * read as 1): plain 1F1B over all the layers. */
    uint32_t n_chunks;
    uint32_t chunk_first[TSL_EXEC_MAX_CHUNKS + 1];
    /* interleaved: the rank at the same position across the wrap (stage 0 ↔ stage
     * pp − 1), where chunk c's output goes on to chunk c + 1; else -1 */
    int32_t wrap_rank;
} tsl_exec_rank_t;

/* Rank `rank`'s work in plan p of model m (m as given: a sub-layer plan is mapped
 * through tsl_sublayer_split). Refusals as listed above (plan.h tsl_plan_exec_scope's
 * first), naming the stage or layer. */
int tsl_exec_rank_from_plan(const tsl_plan_t *p, const tsl_model_t *m, uint32_t rank,
                            tsl_exec_rank_t *out, tsl_err_t *err);
void tsl_exec_rank_free(tsl_exec_rank_t *r);

/* A plan with pp equal stages of tp × (dp or sdp) devices, every layer the same
 * strategy (TP innermost), for trying the executor from flags and for tests. Layers
 * go to stages as evenly as possible, the earlier stages taking one more. */
typedef struct tsl_exec_plan_spec {
    uint32_t pp, tp, dp;
    bool sdp; /* the data dimension is SDP rather than DP */
    bool ckpt;
    uint32_t micro_batch, n_micro;
} tsl_exec_plan_spec_t;
int tsl_exec_uniform_plan(const tsl_model_t *m, const tsl_exec_plan_spec_t *s, tsl_plan_t *out,
                          tsl_err_t *err);

/* Parameters of one layer's TP part tp_index of tp, and that part cut out of the full
 * (tp = 1) flat parameter vector — the same cut the engine makes of its weights (the
 * vocabulary rows' padding, absent from the full vector's real rows, is left as it
 * was in part). */
size_t tsl_exec_layer_params(const tsl_exec_layer_t *l, uint32_t tp);
void tsl_exec_layer_slice(const tsl_exec_layer_t *l, uint32_t tp, uint32_t tp_index,
                          const float *full, float *part);
/* A MoE layer's routed experts stand apart from that vector: one expert's parameters
 * (w1 h × g·f, b1, w2 f × h, b2; 0 for a dense layer), the same at every TP and EP
 * degree. Expert x of the full set (all E, one after another) is elements
 * [x·n, (x + 1)·n) of it; a rank holds experts [ep_index·E/ep, (ep_index + 1)·E/ep). */
size_t tsl_exec_expert_params(const tsl_exec_layer_t *l);

typedef enum tsl_exec_optim { TSL_EXEC_ADAM = 0, TSL_EXEC_SGD } tsl_exec_optim_t;

typedef struct tsl_exec_opts {
    uint32_t warmup, iters; /* iterations not measured, measured (≥ 1) */
    uint64_t seed;
    tsl_exec_optim_t optim;
    float lr;
    bool no_overlap; /* DP all-reduces on the compute stream */
    bool same_batch; /* every iteration the same data (gradient checks) */
    /* query rows per chunk of fused attention; 0: the engine's rule (exec_attn.c) */
    uint32_t attn_chunk;
    /* MoE: the capacity factor c of each expert per rank (Megatron-LM's
     * --moe-expert-capacity-factor, dropping by position): a rank keeps at most
     * ⌈c·Tl·k/E⌉ of its tokens' copies for an expert, the later tokens' dropped (their
     * output 0), so the experts of a rank receive at most c·Tl·k rows, and the buffers
     * are sized for that. 0 (the default): dropless, sized for the worst case. */
    float moe_capacity;
} tsl_exec_opts_t;

void tsl_exec_opts_default(tsl_exec_opts_t *o); /* 2 + 5 iterations, Adam 1e-4, seed 1 */

typedef struct tsl_exec_report {
    uint32_t rank, stage;
    uint32_t iters; /* measured */
    double iter_median_s, iter_min_s, iter_max_s;
    /* per measured iteration, mean; fwd and bwd include TP compute, bwd includes
     * recomputation; comm: TP all-reduces, SDP gathers/scatters and the DP sync the
     * compute stream waited for; bubble: time in pipeline send/recv (waiting for the
     * neighbouring stage and the transfer); opt: the optimizer step. */
    double fwd_s, bwd_s, comm_s, bubble_s, opt_s;
    uint64_t peak_bytes;  /* device memory, the devops' count */
    uint64_t param_bytes; /* of that, model states */
    bool oom;
    double loss; /* last iteration, on the last stage; else NaN */
} tsl_exec_report_t;

/* The engine, for callers that look inside (tests); tsl_exec_run wraps it. */
typedef struct tsl_exec tsl_exec_t;

/* Allocates everything (an OOM fails with TSL_E_NOMEM) and makes the comm groups:
 * every world rank must call it. dev and comm stay the caller's. */
int tsl_exec_create(const tsl_exec_rank_t *r, const tsl_exec_opts_t *o, tsl_devops_t *dev,
                    tsl_commops_t *comm, tsl_exec_t **out, tsl_err_t *err);
/* One training iteration; when rep is non-NULL its timings are added to it. */
int tsl_exec_step(tsl_exec_t *e, tsl_exec_report_t *rep, tsl_err_t *err);
/* After a step: layer i's (of the stage) gradient as this rank holds it after the
 * data-parallel reduction — its TP part, or its SDP shard (padded) — as float32 into
 * host[cap]; *n gets the count. params: the same for the parameters. */
int tsl_exec_layer_grad(tsl_exec_t *e, uint32_t i, float *host, size_t cap, size_t *n,
                        tsl_err_t *err);
int tsl_exec_layer_param(tsl_exec_t *e, uint32_t i, float *host, size_t cap, size_t *n,
                         tsl_err_t *err);
/* Replaces layer i's parameters (as tsl_exec_layer_param gives them) from host[n]. */
int tsl_exec_layer_set_param(tsl_exec_t *e, uint32_t i, const float *host, size_t n,
                             tsl_err_t *err);
/* The same three for a MoE layer's routed experts as this rank holds them (its E/ep
 * experts, or under SDP its shard of them over the expert-DP group), the gradient
 * after the expert-DP reduction; a dense layer has none (*n = 0). */
int tsl_exec_expert_grad(tsl_exec_t *e, uint32_t i, float *host, size_t cap, size_t *n,
                         tsl_err_t *err);
int tsl_exec_expert_param(tsl_exec_t *e, uint32_t i, float *host, size_t cap, size_t *n,
                          tsl_err_t *err);
int tsl_exec_expert_set_param(tsl_exec_t *e, uint32_t i, const float *host, size_t n,
                              tsl_err_t *err);
double tsl_exec_loss(const tsl_exec_t *e); /* last step; NaN off the last stage */
void tsl_exec_destroy(tsl_exec_t *e);

/* Create, W + N steps, report, destroy. An OOM gives 0 with rep->oom set. */
int tsl_exec_run(const tsl_exec_rank_t *r, const tsl_exec_opts_t *o, tsl_devops_t *dev,
                 tsl_commops_t *comm, tsl_exec_report_t *rep, tsl_err_t *err);

/* What one rank runs with, owned together so that one call ends it: its work, its
 * device and comm ops, and the loopback world when the rank made its own (NULL when
 * the world is shared, as tessel-exec-run's threads share theirs). Start from {0}. */
typedef struct tsl_exec_env {
    tsl_exec_rank_t rank;
    tsl_devops_t *dev;
    tsl_commops_t *comm;
    tsl_loopback_world_t *world;
} tsl_exec_env_t;

/* Destroys what is set: comm, then the world, then dev; frees the rank. */
void tsl_exec_env_end(tsl_exec_env_t *e);

/* The report as one JSON object (no newline) into buf; returns the length. */
int tsl_exec_report_json(const tsl_exec_report_t *rep, char *buf, size_t cap);

#endif

/*
 * exec_internal.h — what the executor's files share: a layer's flat parameter layout,
 * the seeded synthetic values, the engine state, the attention core.
 */
#ifndef TSL_EXEC_INTERNAL_H
#define TSL_EXEC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exec.h"

#define TSL_NONE SIZE_MAX

/* A run of a parameter vector for its initial values (tsl_exec_spans below). */
typedef void (*tsl_exec_span_fn)(void *ud, size_t part, size_t full, size_t len, float center,
                                 float amp);

/* Offsets of each tensor in a layer's flat (TP-part) parameter vector; TSL_NONE when
 * the layer has no such tensor (biases under no bias, ln*b under RMSNorm, ln2* under
 * a shared norm). Sizes: ln*
 * h; wqkv h×(dl + 2el) (Q | K | V, el = tsl_exec_kv_width / tp); bqkv dl + 2el; wo
 * dl×h; bo h; w1 h×g·fl (g = 2 gated: gate | up); b1 g·fl; w2 fl×h; b2 h; wr h×E (a MoE
 * layer's router; w1 ... b2 are then its shared experts', absent without); table vl×h
 * and pos P×h (embedding); whead vl×h
 * (head, vocabulary rows like the table so that a tied head is the table itself);
 * vl = tsl_exec_vocab_local(V, tp). */
typedef struct tsl_exec_offs {
    size_t ln1g, ln1b, wqkv, bqkv, wo, bo;
    size_t ln2g, ln2b, w1, b1, w2, b2;
    size_t wr;
    size_t table, pos, whead;
    /* latent attention (wqkv, bqkv TSL_NONE; exec_mla.c): wdq h×q and lnq q (q_lora
     * only), wuq q×al·hk (or h×al·hk without q_lora), wdkv h×(c + r) (latent | rope
     * key), lnkv c, wukv c×al·(n + v) (per head k_nope | v); wo al·v×h */
    size_t wdq, lnq, wuq, wdkv, lnkv, wukv;
    /* a MoE router's: wg h, the shared experts' gate (right after wr, so that one TP
     * sum covers both gradients); br E, the score-correction bias (no gradient) */
    size_t wg, br;
    size_t n;
} tsl_exec_offs_t;

/* A layer's attention widths on a TP rank of tp: al local query heads, kl local K/V
 * heads, hk the Q/K head width, hv the V head width, qw the Q | K | V row (al·hk +
 * kl·hk + kl·hv), ow the context row (al·hv). Latent attention: hk = qk_nope +
 * qk_rope, hv = v_head, kl = al. No attention: all 0. */
typedef struct tsl_exec_aw {
    size_t al, kl, hk, hv, qw, ow;
} tsl_exec_aw_t;
void tsl_exec_attn_widths(const tsl_exec_layer_t *l, uint32_t tp, tsl_exec_aw_t *w);

/* One routed expert's tensors in its part of the experts' vector (exec.h
 * tsl_exec_expert_params): w1 h × g·f (gate | up when gated), b1 g·f, w2 f × h, b2 h;
 * biases TSL_NONE without. */
typedef struct tsl_exec_eoffs {
    size_t w1, b1, w2, b2;
    size_t n;
} tsl_exec_eoffs_t;

void tsl_exec_expert_offsets(const tsl_exec_layer_t *l, tsl_exec_eoffs_t *o);
/* Calls fn for experts [first, first + count) of layer l: their part offsets from 0,
 * their full ones after the layer's (tp = 1) dense vector, so that an expert's values
 * are the same whichever rank holds it. */
void tsl_exec_expert_spans(const tsl_exec_layer_t *l, uint32_t first, uint32_t count,
                           tsl_exec_span_fn fn, void *ud);

/* A MoE layer's routing sizes on a rank of TP degree tp with b local samples and
 * capacity factor c (tsl_exec_opts_t.moe_capacity; 0: none): Tl tokens routed here
 * (T/tp), n = Tl·k routed copies, cap the copies a rank keeps for one expert
 * (⌈c·Tl·k/E⌉, at most Tl; 0: no limit), R rows its experts can receive (dropless:
 * ep·Tl·min(k, E/ep), every copy of every EP member's tokens that can go to its E/ep
 * experts; with a capacity at most E·cap), E, El = E/ep, k, f, g (2 gated), ep. */
typedef struct tsl_exec_moe_dims {
    size_t Tl, n, cap, R, E, El, k, f, g, ep;
} tsl_exec_moe_dims_t;
void tsl_exec_moe_dims(const tsl_exec_layer_t *l, uint32_t tp, uint32_t b, float c,
                       tsl_exec_moe_dims_t *m);

void tsl_exec_offsets(const tsl_exec_layer_t *l, uint32_t tp, tsl_exec_offs_t *o);
/* e = kv_heads · head width: the K (and the V) projection's width over all TP ranks
 * (= hidden without grouped-query attention; 0 without heads). */
size_t tsl_exec_kv_width(const tsl_exec_layer_t *l);

/* Calls fn for each contiguous run of the TP part's flat vector: `len` elements at
 * local offset `part`, which are elements [full, full + len) of the tp = 1 vector;
 * init values there are center + amp · u, u uniform in [-1, 1). */
void tsl_exec_spans(const tsl_exec_layer_t *l, uint32_t tp, uint32_t tp_index, tsl_exec_span_fn fn,
                    void *ud);

/* ---- interleaved 1F1B (exec_sched.c: order, ticks and stash slots of one stage) ---- */

typedef struct tsl_exec_il {
    uint32_t pp, stage, v, m;
    uint32_t total;   /* m·v chunk forwards (and backwards) */
    uint32_t warm;    /* W = (pp − stage − 1)·2 + (v − 1)·pp, uncapped */
    uint32_t n_calls; /* W + total + 1 */
} tsl_exec_il_t;

/* What call i moves: F(k)'s output or input, B(k)'s input or output gradient (k, the
 * index in the stage's order of forwards or backwards), -1 for none. */
typedef struct tsl_exec_il_call {
    int64_t send_f, recv_f, send_b, recv_b;
} tsl_exec_il_call_t;

void tsl_exec_il_init(tsl_exec_il_t *il, uint32_t pp, uint32_t stage, uint32_t v, uint32_t m);
/* get_model_chunk_id: the chunk of the k-th forward (fwd) or backward. */
uint32_t tsl_exec_il_chunk(const tsl_exec_il_t *il, uint32_t k, bool fwd);
/* The micro-batch of the k-th forward, or of the k-th backward. */
uint32_t tsl_exec_il_micro(const tsl_exec_il_t *il, uint32_t k);
void tsl_exec_il_call(const tsl_exec_il_t *il, uint32_t i, tsl_exec_il_call_t *out);
/* Stash slots: each forward takes the lowest free one, its backward frees it;
 * slot_of[c·m + j] gets (chunk c, micro-batch j)'s. Returns the most in use at once
 * (0: out of host memory). */
uint32_t tsl_exec_il_slots(const tsl_exec_il_t *il, uint32_t *slot_of);

/* ---- the engine (exec_engine.c: setup and schedule; exec_layer.c: blocks) ---- */

enum { PH_IDLE, PH_FWD, PH_BWD, PH_COMM, PH_P2P, PH_OPT, PH_END, PH_COUNT };

/* Offsets in one layer's per-micro-batch stash (act dtype: y1 ... g) and its F32 part
 * (mean1 ... rstd2, and the head's logits). p, the b·al·s² softmax output, only for an
 * unfused_attn layer (else TSL_NONE): fused attention keeps QKV and ctx and recomputes
 * the rest (exec_attn.c). qkv is T × (dl + 2el); f1 the FFN's up projection T × g·fl
 * (gated: gate | up), g its activation T × fl; mean* absent under RMSNorm. A parallel
 * block keeps no x2 (its FFN norm reads the layer input); under a shared norm no y2,
 * mean2, rstd2 either (the FFN's GEMM reads y1). */
typedef struct tsl_exec_stash {
    size_t y1, qkv, p, ctx, x2, y2, f1, g, logits, n;
    size_t mean1, rstd1, mean2, rstd2, n32;
    /* MoE (exec_moe.c; sizes in tsl_exec_moe_dims_t): ys n × h the experts' outputs
     * back in dispatch order; xe R × h the rows the rank's experts got, expert-major,
     * ef1 R × g·f and eg R × f their up projection and activation; F32: probs Tl × E,
     * w n (the combine weights), cnt ep × E (every EP member's copies per expert), and
     * I32 in the F32 part: idx n (the chosen experts), order n and pos n (dispatch
     * order and its inverse). */
    size_t ys, xe, ef1, eg;
    size_t probs, w, cnt, idx, order, pos;
    /* latent attention (exec_mla.c): cq, cqn T × q (the query latent, its norm; q_lora
     * only), ckv, ckvn T × c (the KV latent, its norm), kr T × r (the shared rope key
     * before RoPE); F32 rstdq, rstdkv T. qkv is then T × qw (Q | K | V, RoPE applied,
     * the rope key copied to every head). A gated shared expert: sh T × h its output
     * before the gate (before the TP sum), F32 gate T. */
    size_t cq, cqn, ckv, ckvn, kr, rstdq, rstdkv;
    size_t sh, gate;
} tsl_exec_stash_t;

typedef struct tsl_exec_xl {
    const tsl_exec_layer_t *d;
    tsl_exec_offs_t o;
    tsl_exec_stash_t st;
    size_t n_local; /* TP part's parameters */
    size_t n_held;  /* what this rank stores: n_local, or an SDP shard */
    uint32_t chunk; /* fused attention's query rows per chunk; 0: unfused or none */
    tsl_buf_t param, grad, master, m, v;
    uint32_t bwd_done; /* micro-batches through backward this step */
    uint32_t pos;      /* in its model chunk: its input is a slot's act[pos] */
    size_t T;          /* rows of the layer's activations: d->b × seq */
    /* the layer's TP and data groups, and those of its input's moves (NULL: none) */
    tsl_group_t *tp_g, *dw_g, *fwd_g, *bwd_g;
    /* Whose parameters and gradients the layer computes with: itself, or for a head
     * tied in the stage (TSL_EXEC_TIE_SHARED) the embedding; vw: the offset of the
     * vl × h vocabulary weight (table or head) in own's vector. */
    struct tsl_exec_xl *own;
    size_t vw;
    /* A MoE layer's routed experts (tsl_exec_layer_t: E/ep of them, n_local elements,
     * held whole or as a shard of the expert-DP group under SDP), their EP and
     * expert-DP groups; n_local 0 for a dense layer. */
    struct {
        size_t n_local, n_held;
        tsl_buf_t param, grad, master, m, v;
        uint32_t bwd_done;
    } ex;
    tsl_group_t *ep_g, *edp_g;
} tsl_exec_xl_t;

/* One micro-batch's activations in flight through one model chunk (the stage's
 * layers under plain 1F1B); sized for the largest chunk at each position. */
typedef struct tsl_exec_slot {
    tsl_buf_t *act;             /* [slot_len + 1] of T×h: layer i's input is act[pos] */
    tsl_buf_t *stash, *stash32; /* [slot_len]; empty for checkpointed layers */
    tsl_buf_t ids;              /* I32 T: the embedding's input tokens */
} tsl_exec_slot_t;

/* The MoE layers' scratch (exec_moe.c), each buffer the most any MoE layer of the
 * stage needs: lg Tl × E (router logits, then their gradient), sa n × h (dispatched
 * copies, and their gradients), ra and rb R × h (received rows, expert-major rows,
 * the way back), dg R × f and df R × g·f (the experts' activation gradients), F32 dw
 * n (combine weights' gradient) and cnt E (this rank's copies per expert), I32 ridx
 * 2R (expert-major from source-major rows, and back), dwr h × E (the router's
 * gradient before its TP sum; h × E + h with a shared-expert gate, whose gradient it
 * sums too). On the host: the gathered counts, the index being
 * built, the all-to-all counts and each local expert's rows. */
typedef struct tsl_exec_moe_ws {
    tsl_buf_t lg, sa, ra, rb, dg, df, dw, cnt, ridx, dwr;
    /* a gated shared expert: gl T (its gate's logits, then their gradient), gs T × h
     * (the gated output's gradient, the shared experts' dout) */
    tsl_buf_t gl, gs;
    float *hcnt;
    int32_t *hidx;
    size_t *send, *recv, *rows;
} tsl_exec_moe_ws_t;

struct tsl_exec {
    tsl_exec_rank_t r; /* layers borrowed from the caller's rank */
    tsl_exec_opts_t o;
    tsl_devops_t *dev;
    tsl_commops_t *comm;
    tsl_group_t *world_g;
    tsl_group_t **groups; /* [r.n_groups]: the layouts' groups (exec_layout.c) */
    tsl_group_t *tie_g;   /* r.tie_color ≥ 0: first and last stage's tied-table group */
    size_t Tmax;          /* the most rows of any layer's (or the received) activation */
    uint32_t seq, hidden; /* of the stage's boundary activations */
    tsl_exec_xl_t *L;
    tsl_exec_slot_t *slots;
    uint32_t n_slots;
    uint32_t slot_len;  /* the most layers of a chunk */
    uint32_t *slot_of;  /* [n_chunks × n_micro]: the slot of (chunk, micro-batch) */
    tsl_exec_il_t il;   /* interleaved (r.n_chunks > 1): the stage's order */
    tsl_buf_t rc, rc32; /* stash for recomputation */
    tsl_buf_t ws_a, ws_b, ws_c, ws_d, g_a, g_b, g_mid, target;
    tsl_buf_t ws_l; /* latent attention's latent gradients, TP-summed at once (exec_mla.c) */
    /* layout changes: a layer's output before its move (xo), the received activation
     * before the first layer's move (xin), what a gather collects (mv) */
    tsl_buf_t xo, xin, mv;
    tsl_buf_t sdp_param, sdp_grad, sdp_shard;
    tsl_buf_t sdp_eparam, sdp_egrad, sdp_eshard; /* the same for routed experts */
    tsl_exec_moe_ws_t moe;
    tsl_buf_t loss, loss_dummy, flag;
    tsl_buf_t vloc, vmax, vsum; /* head, F32: row maxima (T, tp × T), sums (2T) */
    tsl_buf_t vlog;             /* head, act dtype ≠ F32: T × vl logits for the GEMMs */
    tsl_event_t **ev;
    uint8_t *ev_ph;
    uint32_t ev_n, ev_cap;
    int ph_cur;
    tsl_event_t *ev_sync;
    bool dp_pending;
    uint32_t step;
    double last_loss;
};

/* One layer's view of its parameters, gradients and stash for one micro-batch. */
typedef struct tsl_exec_lctx {
    tsl_exec_t *e;
    tsl_exec_xl_t *L;
    tsl_buf_t p, g; /* full TP-part parameters and gradients */
    tsl_buf_t st, st32;
    tsl_buf_t *loss;  /* HEAD: where the loss goes */
    tsl_buf_t ids;    /* EMBEDDING: tokens; HEAD: targets */
    tsl_buf_t xp, xg; /* MoE: the rank's routed experts' parameters and gradients */
} tsl_exec_lctx_t;

void tsl_exec_stash_layout(const tsl_exec_layer_t *l, uint32_t tp, uint32_t b, tsl_exec_stash_t *s);
/* The same with a MoE capacity factor (tsl_exec_moe_dims; stash_layout: 0). */
void tsl_exec_stash_layout_cap(const tsl_exec_layer_t *l, uint32_t tp, uint32_t b, float cap,
                               tsl_exec_stash_t *s);
int tsl_exec_ph(tsl_exec_t *e, int phase, tsl_err_t *err);
/* x summed over layer L's TP group in place on the compute stream, timed as comm
 * (Megatron's g in forward, f in backward); nothing at tp = 1, nor without comm ops
 * (a block timed alone, exec_block.h). */
int tsl_exec_tp_sum(tsl_exec_t *e, const tsl_exec_xl_t *L, tsl_buf_t *x, tsl_err_t *err);

/* ---- layouts (planner/relayout.h: the rule; exec_layout.c: plan → moves and groups;
 * exec_relayout.c: run them) ---- */

/* Stage s of plan p: checks every layer's layout (DP mixed with SDP, a strategy of
 * another size than the stage, a micro-batch the data width does not divide, a
 * neighbour of another device count), counts the group
 * splits the stage makes into *n_splits and, when layers is not NULL, fills the layout
 * fields of layers[0 .. stage's n_layers) for local position `me` and its groups into
 * *groups (malloc'd, *n_groups of them). Every rank calls it for every stage, so that
 * all count the same rounds and refuse the same plans. */
int tsl_exec_stage_layout(const tsl_plan_t *p, uint32_t s, uint32_t me, tsl_exec_layer_t *layers,
                          tsl_exec_group_t **groups, uint32_t *n_groups, uint32_t *n_splits,
                          tsl_err_t *err);
/* The same with the plan's model m (split into sub-layers for a sub-layer plan; NULL:
 * no MoE layer): a MoE layer also splits its EP and expert-DP groups (after its own
 * and its moves'), and is refused where p->ep does not divide its experts and the
 * stage, or its tokens of a micro-batch do not split over its TP degree. */
int tsl_exec_stage_layout_m(const tsl_plan_t *p, const tsl_model_t *m, uint32_t s, uint32_t me,
                            tsl_exec_layer_t *layers, tsl_exec_group_t **groups, uint32_t *n_groups,
                            uint32_t *n_splits, tsl_err_t *err);
/* x (m->from_b samples) → y (m->to_b samples) over group g, on the compute stream. */
int tsl_exec_relayout(tsl_exec_t *e, const tsl_exec_move_t *m, tsl_group_t *g, const tsl_buf_t *x,
                      tsl_buf_t *y, tsl_err_t *err);
/* exec_vocab.c: the vocabulary-parallel embedding and head (+ cross-entropy). */
int tsl_exec_embed_fwd(tsl_exec_lctx_t *c, tsl_buf_t *out, tsl_err_t *err);
int tsl_exec_embed_bwd(tsl_exec_lctx_t *c, const tsl_buf_t *dout, tsl_err_t *err);
int tsl_exec_head_fwd(tsl_exec_lctx_t *c, const tsl_buf_t *x, tsl_err_t *err);
int tsl_exec_head_bwd(tsl_exec_lctx_t *c, const tsl_buf_t *x, tsl_buf_t *dx, tsl_err_t *err);
int tsl_exec_layer_fwd(tsl_exec_lctx_t *c, const tsl_buf_t *x, tsl_buf_t *out, tsl_err_t *err);
/* dout → dx (dx unused for an embedding; dout unused for a head). */
int tsl_exec_layer_bwd(tsl_exec_lctx_t *c, const tsl_buf_t *x, const tsl_buf_t *dout, tsl_buf_t *dx,
                       tsl_err_t *err);

/* exec_moe.c: a MoE block's routed experts. fwd: y (T × h, the block's norm output)
 * routed, dispatched over the EP group, through the experts and combined back, added
 * (weighted) to out's rows of this TP rank's tokens. bwd: from dout (T × h), the
 * experts' and the router's gradients (accumulated), and dy's rows of this rank's
 * tokens += the gradient through the router and the experts. */
int tsl_exec_moe_fwd(tsl_exec_lctx_t *c, const tsl_buf_t *y, tsl_buf_t *out, tsl_err_t *err);
int tsl_exec_moe_bwd(tsl_exec_lctx_t *c, const tsl_buf_t *y, const tsl_buf_t *dout, tsl_buf_t *dy,
                     tsl_err_t *err);
/* exec_moe_setup.c: a MoE layer's routed experts' states (L->ex; nothing for a dense
 * layer), seeded from (seed, model index) as exec.h says, and their end; the stage's
 * MoE scratch and SDP workspaces for experts (after every layer's states) and its end. */
int tsl_exec_moe_alloc_layer(tsl_exec_t *e, tsl_exec_xl_t *L, tsl_err_t *err);
void tsl_exec_moe_free_layer(tsl_exec_t *e, tsl_exec_xl_t *L);
int tsl_exec_moe_alloc(tsl_exec_t *e, tsl_err_t *err);
void tsl_exec_moe_free(tsl_exec_t *e);
/* A tsl_exec_span_fn that seeds dst (exec_seed.c): fill_uniform of (o.seed, stream)
 * at each span's full offset; rc keeps the first failure. */
typedef struct tsl_exec_fill {
    tsl_exec_t *e;
    tsl_buf_t *dst;
    uint64_t stream;
    tsl_err_t *err;
    int rc;
} tsl_exec_fill_t;
void tsl_exec_fill_span(void *ud, size_t part, size_t full, size_t len, float center, float amp);

/* exec_mla.c: multi-head latent attention. fwd: from the stash's y1 (T × h, the
 * block's norm output) the latent projections, their norms, RoPE and the core into
 * the stash's ctx (T × al·v), before the output projection. bwd: from dctx (T × al·v, in ws_b) the core's and the projections'
 * gradients and dy (T × h, written) the gradient of the block's norm output — whole
 * on every TP rank: the latents' gradients are TP-summed inside (one all-reduce of
 * T × (q or h) + T × c + T × r), so the block adds no TP sum of its own. Uses ws_a,
 * ws_b, ws_c and ws_l. */
int tsl_exec_mla_fwd(tsl_exec_lctx_t *c, tsl_err_t *err);
int tsl_exec_mla_bwd(tsl_exec_lctx_t *c, const tsl_buf_t *dctx, tsl_buf_t *dy, tsl_err_t *err);

/* The backward workspaces one layer needs (exec_engine.c, exec_block.c size theirs by
 * it): a (dQKV, an FFN's up gradient, latent attention's norm inputs' gradients), b
 * (dctx, a gated FFN's dg, latent attention's d(k_nope | v)), c (the attention core's),
 * l (latent attention's latent gradients), elements for T rows. */
typedef struct tsl_exec_ws_need {
    size_t a, b, c, l;
} tsl_exec_ws_need_t;
void tsl_exec_ws_need(const tsl_exec_layer_t *d, size_t T, uint32_t chunk, tsl_exec_ws_need_t *w);

/* ---- the attention core (exec_attn.c) ---- */

/* One attention layer's core on this rank: b local samples of s tokens, al local
 * query heads of hd (Q, K; V and O of hv), dl = al·hd, kl local K/V heads (al / kl query heads each, kl = al
 * without grouped-query attention); chunk: query rows per chunk, 0 for unfused;
 * window: keys per query (0: all, causal); causal: query q sees keys ≤ q only (else
 * every key of the sample, as BERT or ViT: no mask, no key skipped). */
typedef struct tsl_exec_attn {
    tsl_devops_t *dev;
    int b, s, al, hd, dl, chunk;
    float scale; /* 1/√hd */
    int kl, window;
    bool causal;
    int hv; /* V (and O) head width; 0: hd. Q is al·hd wide, K kl·hd, V kl·hv, O al·hv */
} tsl_exec_attn_t;

/* The layer's chunk (0 when unfused or without attention): `forced` rows when not 0,
 * else the rule in exec_attn.c; capped at the sequence. */
uint32_t tsl_exec_attn_chunk(const tsl_exec_layer_t *l, uint32_t tp, uint32_t b, uint32_t forced);
/* Workspace elements the core needs: 2·al·chunk·s fused (P and dP of a chunk), al·s²
 * unfused (dP of a sample). */
size_t tsl_exec_attn_ws(const tsl_exec_layer_t *l, uint32_t tp, uint32_t chunk);
/* The core of layer c's attention (exec_layer.c): its local heads, widths, chunk,
 * window and scale 1/√hd. */
tsl_exec_attn_t tsl_exec_attn_of(const tsl_exec_lctx_t *c);
/* ctx ← attention(qkv). P: the stash's b·al·s² softmax output (unfused; else unused);
 * ws: tsl_exec_attn_ws elements. */
int tsl_exec_attn_fwd(const tsl_exec_attn_t *a, const tsl_buf_t *qkv, const tsl_buf_t *P,
                      const tsl_buf_t *ws, const tsl_buf_t *ctx, tsl_err_t *err);
/* dqkv (T × (dl + kl·hd + kl·hv), overwritten) from dctx, qkv and (unfused) P. */
int tsl_exec_attn_bwd(const tsl_exec_attn_t *a, const tsl_buf_t *qkv, const tsl_buf_t *P,
                      const tsl_buf_t *ws, const tsl_buf_t *dctx, tsl_buf_t *dqkv, tsl_err_t *err);

#endif

/*
 * target_rules.c — each stack's space (target.h): the rules its exporter and
 * `plan --target` share. Messages name the layer or stage and the stack's rule.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cuda_graph.h"
#include "module_prec.h"
#include "mtp.h"
#include "pipeline.h"
#include "recompute.h"
#include "target.h"

/* Features only some stacks express: interleaving, selective recompute, ZeRO-1/2
 * on replicas, sequence parallelism. */
static int check_features(const tsl_target_view_t *v, const tsl_target_uniform_t *u, bool vpp,
                          bool selective, uint8_t max_zero, bool sp, tsl_err_t *err)
{
    char b[64];
    const char *s = tsl_target_strategy_str(&u->s, b);
    if (!vpp && v->plan->interleave > 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: the plan interleaves %u model chunks per stage; Tessel exports "
                            "plain 1F1B to %s (plan again with --no-interleave)",
                            v->target, v->plan->interleave, v->target);
    if (!selective && u->s.selective)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: %s recomputes the attention core selectively; Tessel exports "
                            "full recompute or none to %s",
                            v->target, s, v->target);
    if (u->s.zero > max_zero)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: %s shards %s over the data-parallel replicas (ZeRO-%u); %s "
                            "takes at most ZeRO-%u there",
                            v->target, s,
                            u->s.zero > 1 ? "gradients and optimizer states" : "optimizer states",
                            u->s.zero, v->target, max_zero);
    if (!sp && u->s.sp)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: %s uses Megatron-style sequence parallelism, which %s does not "
                            "run",
                            v->target, s, v->target);
    return 0;
}

/* ---- megatron ---- */

/*
 * An SDP level under megatron is Megatron-FSDP as its export launches it (Megatron-LM
 * d98e8a6: --use-megatron-fsdp, --data-parallel-sharding-strategy optim_grads_params,
 * --ckpt-format fsdp_dtensor; megatron/training/arguments.py validate_args,
 * megatron/core/distributed/fsdp/mcore_fsdp_adapter.py _init_dist_index). It shards
 * over the dp_cp group, every data-parallel and context-parallel rank of a stage,
 * which Tessel's SDP level is when it holds all of them (its CP ranks are the
 * innermost of the innermost data level: cost.h). Refused:
 *  - replicas beside the sharded level (DP with SDP): Megatron-FSDP's hybrid mode
 *    (HSDP, an outer DP group through --num-distributed-optimizer-instances) is not
 *    what Tessel exports;
 *  - mixture-of-experts layers: Megatron-FSDP shards the experts over the expert
 *    data-parallel group (ep_dp), which Tessel's pricing of experts under SDP was not
 *    checked against.
 * Pipeline stages, interleaving, TP with SP and CP pass: validate_args asserts none
 * of them away beside --use-megatron-fsdp (only --use-torch-fsdp2 refuses PP and EP,
 * and --hybrid-context-parallel refuses Megatron-FSDP).
 */
static int megatron_fsdp_ok(const tsl_target_view_t *v, const tsl_target_uniform_t *u,
                            tsl_err_t *err)
{
    char b[64];
    if (u->sdp <= 1)
        return 0;
    if (u->dp > 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: %s replicates over %u data-parallel ranks beside its "
                            "sharded level; Tessel exports Megatron-FSDP over the whole "
                            "data-parallel group (--data-parallel-sharding-strategy "
                            "optim_grads_params), not its hybrid mode (HSDP)",
                            tsl_target_strategy_str(&u->s, b), u->dp);
    if (tsl_model_moe_layers(v->model))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: %s shards a mixture-of-experts model (Megatron-FSDP); "
                            "Tessel does not export Megatron-FSDP's experts, sharded over the "
                            "expert data-parallel group: plan it without SDP (--no-sdp)",
                            tsl_target_strategy_str(&u->s, b));
    /* the precision-aware optimizer's main gradients are --main-grads-dtype's, which
     * Megatron-FSDP replaces by its own --megatron-fsdp-main-grads-dtype */
    if (v->plan->bf16_moments)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: bf16_moments: Tessel exports Megatron-LM's "
                            "precision-aware optimizer with the distributed optimizer, not "
                            "with Megatron-FSDP (%s)",
                            tsl_target_strategy_str(&u->s, b));
    if (!v->plan->overlap_param_gather)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: %s was priced with each micro-batch's weight gathers "
                            "exposed; Megatron-FSDP (optim_grads_params) prefetches them under "
                            "compute: plan it with --target megatron or --overlap-param-gather",
                            tsl_target_strategy_str(&u->s, b));
    return 0;
}

static int megatron_layout(const tsl_target_view_t *v, const tsl_target_uniform_t *u,
                           tsl_err_t *err)
{
    char b[64];
    if (megatron_fsdp_ok(v, u, err) != 0)
        return -1;
    if (u->tp > 1 && tsl_strategy_stride(&u->s, TSL_DIM_TP) != 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: the plan's %s puts tensor-parallel ranks %u GPUs apart; "
                            "Megatron-LM puts them on consecutive GPUs",
                            tsl_target_strategy_str(&u->s, b),
                            tsl_strategy_stride(&u->s, TSL_DIM_TP));
    for (uint32_t s = 0; s < v->pp; s++)
        if (v->stage_blocks[s] == 0)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "megatron: stage %u holds no Transformer layer", s);
    /* Uneven stages: only the first and the last may differ from the rest, except in
     * a hybrid, whose stages the export writes as --hybrid-layer-pattern's '|'
     * segments, each one stage of any length (select_pipeline_segment at d98e8a6) */
    for (uint32_t s = 2; !v->model->hybrid && s + 1 < v->pp; s++)
        if (v->stage_blocks[s] != v->stage_blocks[1])
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "megatron: stage %u has %u Transformer layers but stage 1 has %u; "
                                "Megatron-LM splits the middle stages evenly",
                                s, v->stage_blocks[s], v->stage_blocks[1]);
    uint32_t vc = v->plan->interleave;
    if (v->plan->vp_group &&
        (vc <= 1 || tsl_pipeline_vp_check(v->pp, v->plan->n_micro, v->plan->vp_group) != 0))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: vp_group %u with interleave %u, pp %u and %u "
                            "micro-batches: Megatron-LM's "
                            "--microbatch-group-size-per-virtual-pipeline-stage takes pp <= N "
                            "<= micro-batches, their count mod N 0 or at least pp, and an "
                            "interleaved schedule",
                            v->plan->vp_group, vc, v->pp, v->plan->n_micro);
    tsl_target_megatron_vp_t vp;
    /* a hybrid's chunks are '|' segments of any length (megatron_hybrid_split) */
    if (vc > 1 && !v->model->hybrid && tsl_target_megatron_vp(v, &vp, err) != 0)
        return -1;
    return 0;
}

/* Whether the stages' layers split as the account rule of target.h says with the
 * embedding (e) and the loss (l) counted: R = b_0 + e, every other stage R. */
static bool vp_account(const tsl_target_view_t *v, uint32_t vc, uint32_t e, uint32_t l)
{
    const uint32_t *b = v->stage_blocks;
    uint32_t P = v->pp, R = b[0] + e;
    if (R % vc != 0 || b[P - 1] + l != R)
        return false;
    return P <= 2 || b[1] == R;
}

int tsl_target_megatron_vp(const tsl_target_view_t *v, tsl_target_megatron_vp_t *out,
                           tsl_err_t *err)
{
    static const uint32_t acct[3][2] = {{1, 1}, {1, 0}, {0, 1}};
    const uint32_t *b = v->stage_blocks;
    uint32_t P = v->pp, vc = v->plan->interleave, last = b[P - 1], mid = P > 2 ? b[1] : b[0];
    memset(out, 0, sizeof(*out));
    if (vc <= 1 || P < 2)
        return 0;
    if (b[0] == last && b[0] == mid && b[0] % vc == 0) {
        out->per_chunk = b[0] / vc;
        return 0;
    }
    for (uint32_t k = 0; k < 3; k++) {
        if (!vp_account(v, vc, acct[k][0], acct[k][1]))
            continue;
        out->kind = TSL_TARGET_VP_ACCOUNT;
        out->per_chunk = (b[0] + acct[k][0]) / vc;
        out->acct_embed = acct[k][0];
        out->acct_loss = acct[k][1];
        return 0;
    }
    if (b[0] % vc == 0 && last % vc == 0 && (P <= 2 || mid % vc == 0)) {
        out->kind = TSL_TARGET_VP_UNEVEN;
        return 0;
    }
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "megatron: %u model chunks per stage over stages of %u, %u (middle) and "
                        "%u Transformer layers: Megatron-LM splits a rank evenly into its chunks "
                        "(--num-layers-per-virtual-pipeline-stage), counting the embedding "
                        "and/or the loss as a layer (--account-for-embedding-in-pipeline-split, "
                        "--account-for-loss-in-pipeline-split: every rank R, the first R - 1, "
                        "the last R - 1, R a multiple of %u), or with first, middle and last "
                        "stages each a multiple of %u "
                        "(--num-virtual-stages-per-pipeline-rank with "
                        "--decoder-first/last-pipeline-num-layers)",
                        vc, b[0], mid, last, vc, vc);
}

/* Forward FLOPs of layers [a, b) (fwd_flops holds extra_fwd_flops: model.h). */
static double span_flops(const tsl_model_t *m, uint32_t a, uint32_t b)
{
    double f = 0;
    for (uint32_t i = a; i < b; i++)
        f += m->layers[i].fwd_flops;
    return f;
}

bool tsl_target_megatron_vp_cut(const tsl_model_t *m, uint32_t P, uint32_t v, uint32_t *first)
{
    static const uint32_t acct[4][2] = {{0, 0}, {1, 1}, {1, 0}, {0, 1}};
    uint32_t L = m->n_layers - 2 - tsl_mtp_layers(m), best_k = 4;
    double best = INFINITY;
    if (P < 2 || v < 2 || P > TSL_PLAN_MAX_STAGES)
        return false;
    for (uint32_t k = 0; k < 4; k++) {
        uint32_t n = L + acct[k][0] + acct[k][1];
        if (n % (P * v) != 0 || n / P <= 1)
            continue;
        uint32_t R = n / P, f = R - acct[k][0], l = R - acct[k][1];
        double worst = fmax(span_flops(m, 0, 1 + f), span_flops(m, 1 + L - l, m->n_layers));
        if (P > 2)
            worst = fmax(worst, span_flops(m, 1 + f, 1 + f + R));
        if (worst < best) {
            best = worst;
            best_k = k;
        }
    }
    if (best_k == 4)
        return false;
    uint32_t R = (L + acct[best_k][0] + acct[best_k][1]) / P, f = R - acct[best_k][0];
    first[0] = 0;
    for (uint32_t s = 1; s < P; s++)
        first[s] = 1 + f + (s - 1) * R;
    first[P] = m->n_layers;
    return true;
}

/* The checkpointed Transformer layers at the start of stage s; -1 (err) when
 * a later one is checkpointed after one that is not. */
static int stage_ckpt_prefix(const tsl_target_view_t *v, uint32_t s, uint32_t *c, tsl_err_t *err)
{
    uint32_t first = v->stage_first[s] ? v->stage_first[s] : 1, n = v->stage_blocks[s];
    *c = 0;
    while (*c < n && v->layer[first + *c].ckpt)
        (*c)++;
    for (uint32_t i = first + *c; i < first + n; i++)
        if (v->layer[i].ckpt)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "megatron: layer %u is checkpointed but layer %u before it "
                                "in stage %u is not; Megatron-LM recomputes the first N "
                                "layers of a stage",
                                i, first + *c, s);
    return 0;
}

uint32_t tsl_target_megatron_stage_ckpt(const tsl_model_t *m, uint32_t n_layers, uint32_t s,
                                        uint32_t P, uint32_t v, uint32_t N)
{
    bool last = s + 1 == P;
    return tsl_pipeline_chunk_ckpt(n_layers, s == 0, last, last ? tsl_mtp_layers(m) : 0, v, N);
}

/* Stage s's layers Megatron-LM's block recompute of N per chunk checkpoints, its
 * chunks as the interleaved split cuts them (target.h tsl_target_megatron_vp). */
static uint32_t stage_chunk_ckpt(const tsl_target_view_t *v, uint32_t s, uint32_t N)
{
    return tsl_target_megatron_stage_ckpt(v->model, v->stage_count[s], s, v->pp,
                                          v->plan->interleave, N);
}

/* --recompute-method block: Megatron-LM recomputes the first N layers of every
 * model chunk (min(N, its layers); pipeline.h tsl_pipeline_chunk_ckpt); a stage of
 * v chunks then has Σ_c min(N, chunk c's layers) checkpointed — Tessel's stage cost
 * is the same for any of its identical layers, so the rule asks for that count at
 * the stage's start. The stage that checkpoints most fixes N. *k = N. */
static int megatron_recompute(const tsl_target_view_t *v, uint32_t *k, tsl_err_t *err)
{
    uint32_t c[TSL_PLAN_MAX_STAGES], most = 0, at = 0, N = 0;
    uint32_t chunks = v->plan->interleave > 1 ? v->plan->interleave : 1;
    for (uint32_t s = 0; s < v->pp; s++) {
        if (stage_ckpt_prefix(v, s, &c[s], err) != 0)
            return -1;
        if (c[s] > most)
            most = c[s], at = s;
    }
    while (N <= most && stage_chunk_ckpt(v, at, N) != most)
        N++;
    if (N > most)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: stage %u checkpoints %u of its %u layers, which no "
                            "--recompute-num-layers gives: it counts the first layers of each "
                            "of the stage's %u model chunks",
                            at, most, v->stage_blocks[at], chunks);
    *k = N;
    for (uint32_t s = 0; s < v->pp; s++) {
        uint32_t want = stage_chunk_ckpt(v, s, N);
        if (c[s] != want)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "megatron: stage %u checkpoints %u of its %u layers but stage %u "
                                "%u (%u per model chunk); --recompute-num-layers is one number "
                                "for every stage",
                                s, c[s], v->stage_blocks[s], at, most, N);
    }
    return 0;
}

uint32_t tsl_target_megatron_recompute(const tsl_target_view_t *v)
{
    uint32_t k = 0;
    megatron_recompute(v, &k, NULL);
    return k;
}

/* RoPE as Megatron-LM d98e8a6 builds it: --rotary-base is an int
 * (arguments.py); --use-rope-scaling takes the factor alone and fixes
 * low_freq_factor 1, high_freq_factor 4 and original_max_position_embeddings
 * 8192 (rotary_pos_embedding.py _apply_scaling). YaRN under multi-latent attention
 * (its rope_type, yarn_rotary_pos_embedding.py) takes --rotary-scaling-factor,
 * --mscale and --mscale-all-dim and fixes original_max_position_embeddings 4096,
 * beta_fast 32 and beta_slow 1 (MLATransformerConfig). YaRN elsewhere (gpt-oss) is
 * GPTModel's --position-embedding-type yarn, every parameter a flag
 * (argument_utils.py _apply_yarn_config_from_args: --rotary-scaling-factor,
 * --yarn-original-max-position-embeddings, --yarn-beta-fast, --yarn-beta-slow,
 * --mscale, --mscale-all-dim, --[no-]yarn-correction-range-round-to-int), which the
 * export writes (export_megatron.c write_rope) given the original context; a
 * hybrid's blocks take no position embedding (write_hybrid). Zero: not given. */
static int megatron_rope(const tsl_model_t *m, tsl_err_t *err)
{
    const tsl_model_rope_t *r = &m->rope;
    if (r->base > 0.0 && (r->base != (double)(long long)r->base || r->base > 2e9))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: rope_theta %g of %s is not an integer; Megatron-LM's "
                            "--rotary-base takes an int",
                            r->base, m->name);
    if (r->scaling == TSL_ROPE_SCALING_YARN && tsl_model_mla_layers(m) &&
        ((r->original_max_positions && r->original_max_positions != 4096) || r->beta_fast != 32.0 ||
         r->beta_slow != 1.0 || !(r->scaling_factor > 0.0)))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: %s's YaRN (factor %g, original_max_position_embeddings %u, "
                            "beta_fast %g, beta_slow %g) is not what multi-latent attention "
                            "builds (factor given, 4096, 32, 1: MLATransformerConfig, no flags)",
                            m->name, r->scaling_factor, r->original_max_positions, r->beta_fast,
                            r->beta_slow);
    if (r->scaling == TSL_ROPE_SCALING_YARN && !tsl_model_mla_layers(m) &&
        (m->hybrid || !(r->scaling_factor > 0.0) || !r->original_max_positions))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: %s scales RoPE by rope_type 'yarn' %s; Megatron-LM's "
                            "--position-embedding-type yarn (GPTModel) takes the factor and the "
                            "original context as flags",
                            m->name,
                            m->hybrid ? "in a hybrid, whose blocks Tessel exports without a "
                                        "position embedding"
                                      : "without a factor or original_max_position_embeddings");
    if (r->scaling == TSL_ROPE_SCALING_OTHER)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: %s scales RoPE by rope_type '%s'; Megatron-LM's "
                            "--use-rope-scaling applies Llama 3's (rope_type llama3) only",
                            m->name, r->scaling_type);
    if (r->scaling == TSL_ROPE_SCALING_LLAMA3 &&
        ((r->low_freq_factor > 0.0 && r->low_freq_factor != 1.0) ||
         (r->high_freq_factor > 0.0 && r->high_freq_factor != 4.0) ||
         (r->original_max_positions && r->original_max_positions != 8192) ||
         !(r->scaling_factor > 0.0)))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: %s's rope_scaling (factor %g, low_freq_factor %g, "
                            "high_freq_factor %g, original_max_position_embeddings %u) is not "
                            "what --use-rope-scaling builds (factor given, 1, 4, 8192)",
                            m->name, r->scaling_factor, r->low_freq_factor, r->high_freq_factor,
                            r->original_max_positions);
    return 0;
}

/* A dense and a MoE layer that Megatron-LM builds from one set of attention
 * flags: everything but the FFN alike. */
static bool same_attention(const tsl_layer_t *a, const tsl_layer_t *b)
{
    return a->kind == b->kind && a->seq_len == b->seq_len && a->hidden == b->hidden &&
           a->heads == b->heads && a->attn_dim == b->attn_dim && a->kv_heads == b->kv_heads &&
           a->no_bias == b->no_bias && a->rms_norm == b->rms_norm && a->gated_ffn == b->gated_ffn &&
           a->causal == b->causal && a->q_lora_rank == b->q_lora_rank &&
           a->kv_lora_rank == b->kv_lora_rank && a->qk_nope_dim == b->qk_nope_dim &&
           a->qk_rope_dim == b->qk_rope_dim && a->v_head_dim == b->v_head_dim &&
           a->unfused_attn == b->unfused_attn && a->parallel_block == b->parallel_block;
}

/* A layer's key for Megatron-LM's identical layers: a block kept bf16
 * (--first-last-layers-bf16) is built as the others, its precision chosen at run
 * time (fp8_utils.py is_first_last_bf16_layer), so the mark is left out; so is a
 * sliding window, which --window-size and --window-attn-skip-freq give layer by
 * layer (megatron_windows checks them): a windowed layer is keyed as its
 * full-attention self. */
static uint32_t shape_key(const tsl_layer_t *l, uint64_t key[TSL_LAYER_KEY_LEN])
{
    tsl_layer_t c = *l;
    c.bf16 = false;
    if (c.attn_window && !c.attn_chunked) {
        c.attn_window = 0;
        tsl_layer_derive(&c, NULL); /* its counts as a full-attention layer */
    }
    return tsl_layer_key(&c, key);
}

/* Sliding windows as Megatron-LM d98e8a6's GPTModel builds them: one --window-size
 * (left, right) for every windowed layer, (w - 1, 0) for a causal window of w keys
 * (each query and the w - 1 before it: Megatron-Bridge's gpt_oss_bridge.py writes
 * HF's sliding_window w so), and --window-attn-skip-freq choosing the layers
 * (transformer/utils.py is_layer_window_attention, by 1-based layer number: an int N
 * windows the layers N does not divide, a list its 1s; none given: every layer).
 * Any set of windowed layers is a list, so what stays out is a chunked window
 * (Llama 4: Megatron-LM's --window-size slides), a bidirectional one, windows of
 * two sizes, and windows with MTP depths (the export writes none for them). */
static int megatron_windows(const tsl_model_t *m, tsl_err_t *err)
{
    uint32_t w = 0, at = 0;
    for (uint32_t i = 1; i + 1 < m->n_layers; i++) {
        const tsl_layer_t *l = &m->layers[i];
        if (!l->attn_window)
            continue;
        if (l->attn_chunked)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "megatron: attn_chunked: layer %u of %s attends within chunks "
                                "of %u tokens (Llama 4's chunked attention); Megatron-LM's "
                                "--window-size slides",
                                i, m->name, l->attn_window);
        if (!l->causal)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "megatron: layer %u of %s has a bidirectional window of %u keys; "
                                "Tessel writes Megatron-LM's --window-size for a causal window "
                                "(w - 1, 0) only",
                                i, m->name, l->attn_window);
        if (l->mtp_depth || tsl_mtp_depths(m))
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "megatron: %s has sliding windows and MTP depths; Tessel writes "
                                "no window pattern for the MTP depths' layers",
                                m->name);
        if (w && l->attn_window != w)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "megatron: layer %u of %s has a %u-key window, layer %u one of "
                                "%u; Megatron-LM's --window-size is one for every windowed layer",
                                i, m->name, l->attn_window, at, w);
        if (!w)
            w = l->attn_window, at = i;
    }
    return 0;
}

/* Gemma's form (model.h tsl_model_t sandwich_norm, softcap, embed_scale), which
 * Megatron-LM's GPTModel does not build from flags. */
static int megatron_gemma(const tsl_model_t *m, tsl_err_t *err)
{
    const char *key = m->sandwich_norm ? "sandwich_norm"
                      : m->softcap     ? "softcap"
                      : m->embed_scale ? "embed_scale"
                                       : NULL;
    const char *what = m->sandwich_norm ? "norms after attention and FFN as well as before"
                       : m->softcap     ? "soft-capped attention scores or logits"
                                        : "its embedding scaled by sqrt(hidden)";
    if (key == NULL)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "megatron: %s: %s has %s (Gemma), which Megatron-LM's GPTModel does not "
                        "build from flags",
                        key, m->name, what);
}

/* A hybrid block's family (0 Mamba, 1 attention, 2 dense FFN, 3 experts), -1 for
 * a kind --hybrid-layer-pattern has no character for. */
static int hybrid_family(const tsl_layer_t *l)
{
    static const char fam[] = "M*-E";
    const char *c = strchr(fam, tsl_layer_hybrid_char(l));
    return c && *c ? (int)(c - fam) : -1;
}

/* A hybrid (Megatron-LM's HybridModel at d98e8a6: hybrid_layer_specs.py builds every
 * block of a family from one spec and one TransformerConfig): every Mamba mixer alike
 * (--mamba-state-dim, --mamba-head-dim, --mamba-num-groups, --mamba-num-heads),
 * every attention block alike, every dense FFN alike, every expert FFN alike. The
 * MTP depths' blocks copy the main model's (mtp.h). No windowed attention: its
 * --window-size applies to every attention block of a GPT model, not a hybrid's
 * (Tessel checks it nowhere). */
static int megatron_hybrid_shapes(const tsl_model_t *m, tsl_err_t *err)
{
    const tsl_layer_t *first[4] = {0};
    uint64_t k1[TSL_LAYER_KEY_LEN], k[TSL_LAYER_KEY_LEN];
    if (m->layers[0].patch_embed)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: %s embeds patches; Megatron-LM's HybridModel embeds tokens",
                            m->name);
    for (uint32_t i = 1; i + 1 < m->n_layers; i++) {
        const tsl_layer_t *l = &m->layers[i];
        if (l->mtp_depth)
            continue;
        int f = hybrid_family(l);
        if (f < 0 || l->attn_window)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "megatron: layer %u of the hybrid %s is %s; Megatron-LM's "
                                "--hybrid-layer-pattern builds Mamba-2 mixers (M), full "
                                "self-attention (*), dense (-) and expert (E) FFNs",
                                i, m->name,
                                f < 0 ? tsl_layer_kind_name(l->kind) : "windowed attention");
        if (first[f] == NULL) {
            first[f] = l;
            continue;
        }
        uint32_t n1 = shape_key(first[f], k1);
        if (shape_key(l, k) != n1 || memcmp(k, k1, n1 * sizeof k[0]))
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "megatron: layer %u's shape differs from layer %u's ('%c' both); "
                                "Megatron-LM builds a hybrid's blocks of one character alike",
                                i, (uint32_t)(first[f] - m->layers), tsl_layer_hybrid_char(l));
    }
    return 0;
}

int tsl_target_megatron_shapes(const tsl_model_t *m, tsl_err_t *err)
{
    if (megatron_rope(m, err) != 0)
        return -1;
    if (m->hybrid)
        return megatron_hybrid_shapes(m, err);
    const tsl_layer_t *l1 = &m->layers[1];
    uint64_t k1[TSL_LAYER_KEY_LEN], k[TSL_LAYER_KEY_LEN];
    uint32_t n1 = shape_key(l1, k1);
    if (l1->kind != TSL_LAYER_ENCODER || m->layers[0].patch_embed)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: Tessel exports GPT-, BERT- and Llama-style stacks of "
                            "self-attention layers (no decoder cross-attention or patch "
                            "embedding)");
    if (megatron_gemma(m, err) != 0 || megatron_windows(m, err) != 0)
        return -1;
    /* Megatron-LM builds identical layers but for the FFN: dense ones of
     * --ffn-hidden-size and MoE ones where --moe-layer-freq says (DeepSeek's first
     * layers). Each kind is compared with its first layer, and the two kinds'
     * attention with each other. */
    const tsl_layer_t *ld = NULL, *le = NULL;
    for (uint32_t i = 1; i + 1 < m->n_layers; i++) {
        const tsl_layer_t *l = &m->layers[i], **first = l->experts ? &le : &ld;
        if (l->mtp_depth) /* the MTP depths copy a layer of the model's (mtp.h) */
            continue;
        if (*first == NULL) {
            *first = l;
            n1 = shape_key(l, k1);
            if (ld && le && !same_attention(ld, le))
                return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                    "megatron: layer %u's attention differs from layer "
                                    "%u's; Megatron-LM builds identical layers but for the "
                                    "FFN (--moe-layer-freq)",
                                    i, (uint32_t)((l == ld ? le : ld) - m->layers));
            continue;
        }
        n1 = shape_key(*first, k1);
        if (shape_key(l, k) != n1 || memcmp(k, k1, n1 * sizeof k[0]))
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "megatron: layer %u's shape differs from layer %u's; "
                                "Megatron-LM builds identical layers (dense and MoE ones "
                                "by --moe-layer-freq)",
                                i, (uint32_t)(*first - m->layers));
    }
    return 0;
}

/* Whether block a of m (0-based, m->layers[1 + a]) is built as block b is. */
static bool hybrid_blocks_alike(const tsl_model_t *m, uint32_t a, uint32_t b)
{
    uint64_t ka[TSL_LAYER_KEY_LEN], kb[TSL_LAYER_KEY_LEN];
    uint32_t n = tsl_layer_key(&m->layers[1 + a], ka);
    return n == tsl_layer_key(&m->layers[1 + b], kb) && memcmp(ka, kb, n * sizeof ka[0]) == 0;
}

/* The blocks of each of stage s's v chunks (of P; n its layers), as
 * tsl_pipeline_chunk_layers cuts the stage: the embedding, the head and the MTP
 * layers taken out of the chunks that hold them. */
static void stage_chunk_blocks(const tsl_model_t *m, uint32_t s, uint32_t P, uint32_t n, uint32_t v,
                               uint32_t *blocks)
{
    bool emb = s == 0, last = s + 1 == P;
    uint32_t mtp = last ? tsl_mtp_layers(m) : 0, count[TSL_PIPELINE_MAX_CHUNKS];
    tsl_pipeline_chunk_layers(n, emb, last, mtp, v, count);
    mtp = mtp < n ? mtp : 0;
    for (uint32_t c = 0; c < v; c++) {
        uint32_t other = (c == 0 && emb) + (c + 1 == v ? (uint32_t)last + mtp : 0);
        blocks[c] = count[c] > other ? count[c] - other : 0;
    }
}

int tsl_target_megatron_hybrid_segments(const tsl_model_t *m, uint32_t P, uint32_t v,
                                        const uint32_t *stage_count, uint32_t *seg, tsl_err_t *err)
{
    uint32_t chunks = v > 1 ? v : 1, blocks[TSL_PIPELINE_MAX_CHUNKS];
    uint32_t tessel[TSL_PLAN_MAX_STAGES * TSL_PIPELINE_MAX_CHUNKS]; /* priced first block */
    if (P == 0 || P > TSL_PLAN_MAX_STAGES || chunks > TSL_PIPELINE_MAX_CHUNKS)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: %u stages of %u model chunks are beyond Tessel's limits", P,
                            chunks);
    for (uint32_t r = 0, at = 0; r < P; r++) { /* Tessel's stages: contiguous blocks */
        stage_chunk_blocks(m, r, P, stage_count[r], chunks, blocks);
        for (uint32_t j = 0; j < chunks; j++) {
            seg[j * P + r] = blocks[j];
            tessel[j * P + r] = at;
            at += blocks[j];
        }
    }
    for (uint32_t k = 0, at = 0; k < P * chunks; at += seg[k], k++) {
        uint32_t r = k % P, j = k / P, i = 0;
        if (seg[k] == 0)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "megatron: --hybrid-layer-pattern: segment %u (stage %u's model "
                                "chunk %u) would hold no block; Tessel writes no empty '|' "
                                "segment",
                                k, r, j);
        while (i < seg[k] && hybrid_blocks_alike(m, at + i, tessel[k] + i))
            i++;
        if (i < seg[k])
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "megatron: --hybrid-layer-pattern: segment %u (stage %u's model "
                                "chunk %u) would build blocks %u..%u, block %u a '%c'; the plan "
                                "priced that chunk as blocks %u..%u of its stage, there a '%c' "
                                "(Megatron-LM lays a rank's chunks out in '|' order, Tessel "
                                "prices its stage's blocks contiguous)",
                                k, r, j, at, at + seg[k] - 1, at + i,
                                tsl_layer_hybrid_char(&m->layers[1 + at + i]), tessel[k],
                                tessel[k] + seg[k] - 1,
                                tsl_layer_hybrid_char(&m->layers[1 + tessel[k] + i]));
    }
    return 0;
}

/* A hybrid's interleaved stages (Megatron-LM d98e8a6): the '|' segments of
 * --hybrid-layer-pattern, one per stage and model chunk
 * (tsl_target_megatron_hybrid_segments), which must build what the plan priced; a
 * pattern without them takes no virtual stages (select_pipeline_segment raises
 * "Virtual pipeline parallelism ... is not supported when hybrid_layer_pattern has no
 * pipe ('|') separators"). Block recompute of some blocks checkpoints the first N of
 * every chunk (HybridStack's checkpointed_forward), other blocks than the stage's
 * first ones the plan priced where the chunks hold unlike blocks: refused; all blocks
 * (uniform) or none is what was priced. */
static int megatron_hybrid_split(const tsl_target_view_t *v, const tsl_target_uniform_t *u,
                                 tsl_err_t *err)
{
    uint32_t seg[TSL_PLAN_MAX_STAGES * TSL_PIPELINE_MAX_CHUNKS];
    if (!v->model->hybrid || v->plan->interleave <= 1)
        return 0;
    if (u->ckpt_blocks && u->ckpt_blocks < v->n_blocks)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: interleave: the hybrid %s in %u model chunks per stage "
                            "with %u of its %u blocks recomputed; Megatron-LM's block recompute "
                            "takes the first blocks of each chunk, not the stage's first that "
                            "the plan priced (recompute all blocks or none)",
                            v->model->name, v->plan->interleave, u->ckpt_blocks, v->n_blocks);
    return tsl_target_megatron_hybrid_segments(v->model, v->pp, v->plan->interleave, v->stage_count,
                                               seg, err);
}

/* FP8 weights gathered in FP8 (fp8_param_gather): Megatron-LM runs --fp8-param-gather
 * only with the distributed optimizer or Megatron-FSDP (validate_args at d98e8a6:
 * "--fp8-param-gather only supported with distributed optimizer, torch fsdp2, megatron
 * fsdp, or inference mode"). A plan with data-parallel ranks needs ZeRO-1 on them or an
 * SDP level; one without any is exported with --use-distributed-optimizer, which shards
 * nothing over one rank (the same states), except under MXFP8, where that optimizer
 * gathers the weights in bf16 through its gradient buffer
 * (--reuse-grad-buf-for-mxfp8-param-ag), which cost.c prices only with ZeRO-1 over
 * several ranks (mxfp8_bf16_param_ag). nvfp4's --fp4-param-gather has no such assert
 * in validate_args and passes. */
static int megatron_fp8_param_gather_ok(const tsl_target_view_t *v, const tsl_target_uniform_t *u,
                                        tsl_err_t *err)
{
    char b[64];
    const tsl_plan_t *p = v->plan;
    if (!p->fp8_param_gather || !p->fp8_recipe || p->fp8_recipe == TSL_FP8_NVFP4 || u->sdp > 1 ||
        u->s.zero >= 1)
        return 0;
    if (u->dp > 1 || u->cp > 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: fp8_param_gather needs the distributed optimizer or "
                            "Megatron-FSDP (Megatron-LM validate_args); %s replicates its "
                            "states over %u data-parallel ranks (DDP): plan it with ZeRO-1 or "
                            "SDP, or without --fp8-param-gather",
                            tsl_target_strategy_str(&u->s, b), u->dp * u->cp);
    if (p->fp8_recipe == TSL_FP8_MXFP8)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: fp8_param_gather with mxfp8 and one data-parallel rank: "
                            "Megatron-LM's distributed optimizer (which --fp8-param-gather "
                            "needs) gathers MXFP8 weights in bf16 through its gradient buffer, "
                            "which Tessel prices only with ZeRO-1 over several ranks");
    return 0;
}

/* What Megatron-LM asserts of the plan's per-layer CUDA graphs (cuda_graph.h), as the
 * export launches them: --cuda-graph-impl transformer_engine, full recompute where a
 * layer has CKPT, --delay-wgrad-compute with the EP overlap where it runs. */
static int megatron_cuda_graphs(const tsl_target_view_t *v, const tsl_target_uniform_t *u,
                                tsl_err_t *err)
{
    if (!v->plan->cuda_graph_modules) /* the search's plans: no graphs */
        return 0;
    tsl_cuda_graph_line_t line = {.full_recompute = u->ckpt_blocks > 0,
                                  .te_impl = true,
                                  .delay_wgrad = tsl_plan_ep_overlap_runs(v->plan) &&
                                                 !v->plan->moe_a2a_wgrad_inline};
    if (tsl_cuda_graph_megatron_check(v->plan, v->model, &line, err) != 0)
        return tsl_err_prefix(err, "megatron");
    return 0;
}

static int check_megatron(const tsl_target_view_t *v, tsl_err_t *err)
{
    tsl_target_uniform_t u;
    uint32_t k;
    if (tsl_target_uniform(v, &u, err) != 0 || megatron_hybrid_split(v, &u, err) != 0 ||
        megatron_layout(v, &u, err) != 0 || check_features(v, &u, true, true, 1, true, err) != 0 ||
        megatron_fp8_param_gather_ok(v, &u, err) != 0 ||
        tsl_target_megatron_shapes(v->model, err) != 0 || megatron_cuda_graphs(v, &u, err) != 0)
        return -1;
    if (tsl_model_moe_layers(v->model) && u.tp > 1 && !u.s.sp) /* arguments.py validate_args */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: mixture-of-experts layers under TP %u need sequence "
                            "parallelism (Megatron-LM validate_args)",
                            u.tp);
    if (u.ckpt_blocks && u.ckpt_blocks < v->n_blocks && megatron_recompute(v, &k, err) != 0)
        return -1;
    return 0;
}

/* ---- deepspeed ---- */

/*
 * What DeepSpeed's engine makes of the config the export writes (runtime/engine.py,
 * runtime/pipe/engine.py at edaa722, DeepSpeed 0.19.6; run through DeepSpeedConfig,
 * docs/exports.md "Checked against the stacks"):
 *  - bf16 at ZeRO stage 0 with a PipelineModule runs BF16_Optimizer
 *    (_do_optimizer_sanity_check: model and accumulation dtype bf16 under pipeline
 *    parallelism; _configure_bf16_optimizer), priced as ds_bf16_optimizer: the target's
 *    knobs price it so (ds_bf16_zero0) and the search records it in the plan; a plan
 *    priced without it is refused (it would run otherwise than priced). A single
 *    data-parallel rank is exported at ZeRO stage 1 instead, the same states at d = 1
 *    (export_deepspeed.c); fp16 there runs FP16_Optimizer (the same check's FP16
 *    branch), the fp16 step as priced;
 *  - ds_bf16_optimizer is exported as that config (stage 0, bf16), so a plan priced with
 *    it must be one BF16_Optimizer runs there (deepspeed_bf16_optimizer);
 *  - "overlap_comm" is a ZeRO optimizer setting: at stage 0 the engine all-reduces
 *    after the backward (allreduce_gradients → buffered_allreduce_fallback), and under
 *    a PipelineModule _configure_zero_optimizer turns it off ("Pipeline parallelism
 *    does not support overlapped communication") and the pipeline engine reduces after
 *    the flush (_exec_reduce_grads): a DP reduce priced under the backward
 *    (grad_reduce_exposed false) runs exposed there.
 */
/* A plan priced with BF16_Optimizer (ds_bf16_optimizer) exports as bf16 at ZeRO stage 0
 * under a PipelineModule (export_deepspeed.c), which runs it only so: pipeline stages, a
 * 16-bit gradient buffer (grad_accum_dtype is then the model's bf16: engine.py
 * get_data_types; an fp32 one at stage 0 raises "unsupported mix"), bf16 weights (fp16
 * runs FP16_Optimizer), replicated DP (no ZeRO-3 beside it; one DP rank the export writes
 * at stage 1, DeepSpeed's ZeRO optimizer). ZeRO-1 in the plan is its own partitioning
 * (cost.c bf16_optimizer_at_zero0), so 0 and 1 both export as stage 0. */
static int deepspeed_bf16_optimizer(const tsl_target_view_t *v, const tsl_target_uniform_t *u,
                                    const char *s, tsl_err_t *err)
{
    const tsl_plan_t *p = v->plan;
    tsl_cost_knobs_t k = {0};
    tsl_plan_get_knobs(p, &k);
    double gb = tsl_cost_grad_elem_bytes(&k); /* what the plan's buffer was priced at */
    const char *why = v->pp < 2       ? "without pipeline stages (no PipelineModule)"
                      : p->fp32       ? "in fp32 training"
                      : p->fp16       ? "under fp16 (FP16_Optimizer runs there)"
                      : u->sdp > 1    ? "under ZeRO-3 (sdp)"
                      : u->dp < 2     ? "with one data-parallel rank (exported at ZeRO-1)"
                      : u->s.zero > 1 ? "under ZeRO-2"
                      : gb > 2        ? "with a 4-byte gradient buffer (at ZeRO-0 it "
                                        "accumulates in the model's bf16)"
                                      : NULL;
    if (why == NULL)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "deepspeed: %s was priced with DeepSpeed's BF16_Optimizer "
                        "(ds_bf16_optimizer), which DeepSpeed does not run %s: it runs for bf16 "
                        "at ZeRO stage 0 under a PipelineModule with DP > 1 (runtime/engine.py "
                        "_do_optimizer_sanity_check)",
                        s, why);
}

static int deepspeed_engine(const tsl_target_view_t *v, const tsl_target_uniform_t *u,
                            const char *s, tsl_err_t *err)
{
    const tsl_plan_t *p = v->plan;
    if (!p->ds_bf16_optimizer && v->pp > 1 && u->dp > 1 && u->s.zero == 0 && !p->fp32 && !p->fp16)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "deepspeed: %s (ZeRO-0) in %u pipeline stages under bf16 runs "
                            "DeepSpeed's BF16_Optimizer (runtime/engine.py "
                            "_do_optimizer_sanity_check), which the plan was not priced with "
                            "(plan it with --target deepspeed, or price it with "
                            "--ds-bf16-optimizer); DeepSpeed's ZeRO-1 (+zero1) runs as priced",
                            s, v->pp);
    if (u->dp > 1 && u->sdp == 1 && !p->grad_reduce_exposed && (v->pp > 1 || u->s.zero == 0))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "deepspeed: %s: the plan overlaps the data-parallel gradient reduce "
                            "with the backward, which DeepSpeed does %s (plan it with "
                            "--no-overlap-grad-reduce)",
                            s,
                            v->pp > 1 ? "not under pipeline stages (overlap_comm is turned off)"
                                      : "only with ZeRO stage 1 or 2 (overlap_comm is a ZeRO "
                                        "optimizer setting)");
    return 0;
}

/*
 * TP beside pipeline stages is Megatron-DeepSpeed's (bigscience-workshop/Megatron-DeepSpeed
 * 8387ae17, the fork BLOOM trained with, whose --pp-partition-method cuts as the target's
 * 'uniform' stages do: export_deepspeed.c writes its launch arguments). Its GPTModelPipe is
 * a deepspeed.pipe.PipelineModule whose topology is PipeModelDataParallelTopology(num_pp,
 * num_mp, num_dp) built from Megatron's mpu (megatron/model/gpt_model.py): axes pipe, data,
 * model, so a stage's TP ranks are consecutive GPUs and its DP ranks TP apart, as
 * megatron/training.py asserts against the mpu's groups. What that stack runs:
 *  - the TP layers are Megatron's of early 2021 (megatron/mpu/layers.py): the backward's
 *    TP all-reduce after its GEMM (no async all-reduce: overlap_tp_dgrad false) and no
 *    sequence parallelism (the fork has no --sequence-parallel);
 *  - DeepSpeed's pipeline engine sends each boundary as a PartitionedTensor over the TP
 *    group both ways (is_pipe_partitioned = is_grad_partitioned = is_model_parallel):
 *    1/t from each rank, all-gathered on arrival — Megatron's legacy scatter/gather p2p,
 *    legacy_p2p, which the target's knobs price and the search records on such a plan;
 *  - the model is the fork's GPT (mds_model_ok).
 * ZeRO-2/3 beside stages are refused for every deepspeed plan (check_deepspeed).
 */
static int mds_model_ok(const tsl_model_t *m, tsl_err_t *err)
{
    const tsl_layer_t *e = &m->layers[0], *l = &m->layers[1];
    const tsl_layer_t *h = &m->layers[m->n_layers - 1];
    const char *why = !l->causal                                ? "is not a causal decoder"
                      : l->rms_norm                             ? "has RMSNorm (rms_norm)"
                      : l->no_bias || m->qkv_bias               ? "has linear layers without "
                                                                  "biases (no_bias)"
                      : l->kv_heads && l->kv_heads != l->heads  ? "has grouped-query attention "
                                                                  "(kv_heads)"
                      : l->kv_lora_rank                         ? "has latent attention (MLA)"
                      : l->parallel_block                       ? "runs attention and FFN on "
                                                                  "one input (parallel_block)"
                      : m->qk_norm                              ? "normalises Q and K (qk_norm)"
                      : l->attn_window                          ? "has windowed attention"
                      : m->attn_sinks || m->relu2               ? "has attention sinks or a "
                                                                  "squared-ReLU FFN"
                      : l->attn_dim && l->attn_dim != l->hidden ? "has a head width other "
                                                                  "than h / heads"
                      : !h->tied_head                           ? "has an untied head"
                      : !e->positions && !l->alibi &&
                              (m->rope.scaling || (m->rope.base > 0 && m->rope.base != 10000.0))
                          ? "has RoPE other than base 10000 unscaled"
                          : NULL;
    if (why == NULL)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "deepspeed: model %s %s; TP beside pipeline stages runs Megatron-"
                        "DeepSpeed's GPTModelPipe (bigscience-workshop/Megatron-DeepSpeed: "
                        "LayerNorm, biases, multi-head attention, learned, rotary or ALiBi "
                        "positions, a tied head), which does not build it: plan it without TP "
                        "beside stages (--no-tp or --no-pp), or export it to megatron",
                        m->name, why);
}

static int deepspeed_pipe_tp(const tsl_target_view_t *v, const tsl_target_uniform_t *u,
                             const char *s, tsl_err_t *err)
{
    const tsl_plan_t *p = v->plan;
    if (tsl_strategy_stride(&u->s, TSL_DIM_TP) != 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "deepspeed: %s puts tensor-parallel ranks %u GPUs apart; "
                            "Megatron-DeepSpeed's mpu (DeepSpeed's PipeModelDataParallelTopology: "
                            "axes pipe, data, model) puts them on consecutive GPUs",
                            s, tsl_strategy_stride(&u->s, TSL_DIM_TP));
    if (u->s.sp)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "deepspeed: %s in %u pipeline stages uses Megatron-style sequence "
                            "parallelism, which Megatron-DeepSpeed (bigscience-workshop) does "
                            "not run",
                            s, v->pp);
    if (p->overlap_tp_dgrad)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "deepspeed: %s in %u pipeline stages was priced with the backward's "
                            "TP all-reduce under its gradient GEMMs (overlap_tp_dgrad); "
                            "Megatron-DeepSpeed's ColumnParallelLinear (bigscience-workshop) "
                            "all-reduces after them (plan it with --target deepspeed, or "
                            "--no-overlap-tp-dgrad)",
                            s, v->pp);
    if (!p->legacy_p2p)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "deepspeed: %s in %u pipeline stages was priced with Megatron-core's "
                            "p2p (each TP rank's whole boundary); DeepSpeed's pipeline engine "
                            "sends 1/%u of it from each TP rank and all-gathers it on arrival "
                            "(PartitionedTensor): plan it with --target deepspeed, or price it "
                            "with --legacy-p2p",
                            s, v->pp, u->tp);
    return mds_model_ok(v->model, err);
}

/* Transformer layers among [a, b) of m's layers: all but the embedding and the head. */
static uint32_t ds_blocks_in(const tsl_model_t *m, uint32_t a, uint32_t b)
{
    uint32_t lo = a > 1 ? a : 1, hi = b < m->n_layers - 1 ? b : m->n_layers - 1;
    return hi > lo ? hi - lo : 0;
}

/* A plan whose stages none of DeepSpeed's cuts makes (tsl_target_ds_partition): the
 * error names the first stage off each. */
static int deepspeed_cut(const tsl_target_view_t *v, tsl_err_t *err)
{
    const tsl_model_t *m = v->model;
    uint32_t st = 0, blocks = m->n_layers - 2;
    while (st + 1 < v->pp && v->stage_count[st] * v->pp == m->n_layers)
        st++;
    char uniform[160];
    snprintf(uniform, sizeof uniform,
             "stage %u holds %u of %u layers; PipelineModule's 'uniform' partition gives each "
             "of %u stages %g",
             st, v->stage_count[st], m->n_layers, v->pp, (double)m->n_layers / v->pp);
    uint32_t first[TSL_PLAN_MAX_STAGES + 1];
    if (!tsl_target_ds_blocks_cut(m, v->pp, first))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "deepspeed: %s; and 'type:transformer' cuts no %u stages that "
                            "each hold one of the %u Transformer layers",
                            uniform, v->pp, blocks);
    uint32_t bt = 0;
    while (bt + 1 < v->pp && v->stage_blocks[bt] == ds_blocks_in(m, first[bt], first[bt + 1]))
        bt++;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "deepspeed: %s; and stage %u holds %u of %u Transformer layers, where "
                        "'type:transformer' gives it %u (%s; the embedding on the first "
                        "stage, the head on the last)",
                        uniform, bt, v->stage_blocks[bt], blocks,
                        ds_blocks_in(m, first[bt], first[bt + 1]),
                        blocks % v->pp == 0 ? "equal counts" : "DeepSpeed's balanced cut");
}

static int check_deepspeed(const tsl_target_view_t *v, tsl_err_t *err)
{
    tsl_target_uniform_t u;
    if (tsl_target_uniform(v, &u, err) != 0)
        return -1;
    char b[64];
    const char *s = tsl_target_strategy_str(&u.s, b);
    if (v->plan->ds_bf16_optimizer && deepspeed_bf16_optimizer(v, &u, s, err) != 0)
        return -1; /* first: what the plan was priced as, before how it is laid out */
    if (u.dp > 1 && u.sdp > 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "deepspeed: %s mixes replicated and sharded data parallelism; "
                            "DeepSpeed runs one ZeRO stage",
                            s);
    if (u.tp > 1 && v->pp > 1 && deepspeed_pipe_tp(v, &u, s, err) != 0)
        return -1;
    if (u.tp > 1 && tsl_strategy_stride(&u.s, TSL_DIM_TP) != 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "deepspeed: %s puts tensor-parallel ranks apart; AutoTP groups "
                            "consecutive ranks",
                            s);
    if ((u.sdp > 1 || u.s.zero > 1) && v->pp > 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "deepspeed: %s (ZeRO-%u) in %u pipeline stages; DeepSpeed's pipeline "
                            "engine takes ZeRO-1 at most",
                            s, u.sdp > 1 ? 3u : u.s.zero, v->pp);
    if (u.ckpt_blocks && u.ckpt_blocks != v->n_blocks)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "deepspeed: %u of %u Transformer layers are checkpointed; the "
                            "config checkpoints all of them or none",
                            u.ckpt_blocks, v->n_blocks);
    if (v->pp > 1 && tsl_target_ds_partition(v->model, v->pp, v->stage_count) == NULL)
        return deepspeed_cut(v, err);
    if (deepspeed_engine(v, &u, s, err) != 0)
        return -1;
    return check_features(v, &u, false, false, 2, false, err);
}

/* ---- torchtitan ---- */

int tsl_target_torchtitan_parts(const tsl_target_view_t *v, uint32_t vc, uint32_t *count,
                                tsl_err_t *err)
{
    uint32_t P = v->pp, chunks = vc > 1 ? vc : 1;
    if (chunks == 1) {
        memcpy(count, v->stage_count, P * sizeof(count[0]));
        return 0;
    }
    if (chunks > TSL_PIPELINE_MAX_CHUNKS || (uint64_t)P * chunks > TSL_PLAN_MAX_STAGES)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "torchtitan: %u stages of %u model chunks make %u model parts; "
                            "Tessel writes and reads back at most %u",
                            P, chunks, P * chunks, TSL_PLAN_MAX_STAGES);
    for (uint32_t r = 0; r < P; r++) {
        uint32_t layers[TSL_PIPELINE_MAX_CHUNKS], blocks[TSL_PIPELINE_MAX_CHUNKS];
        bool last = r + 1 == P;
        tsl_pipeline_chunk_layers(v->stage_count[r], r == 0, last,
                                  last ? tsl_mtp_layers(v->model) : 0, chunks, layers);
        stage_chunk_blocks(v->model, r, P, v->stage_count[r], chunks, blocks);
        for (uint32_t j = 0; j < chunks; j++) {
            if (blocks[j] == 0)
                return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                    "torchtitan: model chunk %u of stage %u (of %u, %u layers) "
                                    "holds no Transformer layer; every model part of "
                                    "Interleaved1F1B must (plan with fewer chunks)",
                                    j, r, chunks, v->stage_count[r]);
            count[j * P + r] = layers[j];
        }
    }
    return 0;
}

/* Interleaved 1F1B as torch.distributed.pipelining runs it (target.h): the plan's
 * group N is the one its ScheduleInterleaved1F1B takes from the micro-batches
 * (pipeline.h tsl_pipeline_torch_vp_group), torchtitan having no key for another,
 * and every model part holds a Transformer layer. */
static int torchtitan_interleave(const tsl_target_view_t *v, tsl_err_t *err)
{
    const tsl_plan_t *p = v->plan;
    uint32_t count[TSL_PLAN_MAX_STAGES];
    if (p->interleave <= 1)
        return 0;
    uint32_t N = tsl_pipeline_torch_vp_group(v->pp, p->n_micro);
    uint32_t priced = tsl_pipeline_vp_group(v->pp, p->vp_group);
    if (N == 0)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "torchtitan: %u micro-batches over %u stages: torch's "
                            "ScheduleInterleaved1F1B raises (the micro-batches must be a "
                            "multiple of its max(1, m / pp) rounds)",
                            p->n_micro, v->pp);
    if (N != priced)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "torchtitan: the plan interleaves in groups of %u micro-batches; "
                            "torch's ScheduleInterleaved1F1B runs groups of %u for %u "
                            "micro-batches over %u stages (m / max(1, m / pp)) and takes no "
                            "other",
                            priced, N, p->n_micro, v->pp);
    return tsl_target_torchtitan_parts(v, p->interleave, count, err);
}

/* Strides as torchtitan's mesh lays them out: tp 1, dp_shard tp, dp_replicate tp·sdp. */
static int check_torchtitan(const tsl_target_view_t *v, tsl_err_t *err)
{
    tsl_target_uniform_t u;
    char b[64];
    if (tsl_target_uniform(v, &u, err) != 0)
        return -1;
    if ((u.tp > 1 && tsl_strategy_stride(&u.s, TSL_DIM_TP) != 1) ||
        (u.sdp > 1 && tsl_strategy_stride(&u.s, TSL_DIM_SDP) != u.tp) ||
        (u.dp > 1 && tsl_strategy_stride(&u.s, TSL_DIM_DP) != u.tp * u.sdp))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "torchtitan: %s orders its dimensions otherwise than torchtitan's "
                            "mesh (tp innermost, then dp_shard, then dp_replicate)",
                            tsl_target_strategy_str(&u.s, b));
    /* parallelize_llama (v0.1.0 .. v0.2.2, models/llama3/infra/parallelize.py)
     * wraps replicas in DDP only when they are the whole mesh */
    if (u.dp > 1 && u.sdp == 1 && (u.tp > 1 || v->pp > 1))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "torchtitan: %s replicates the model (DDP) together with %s; "
                            "torchtitan refuses that (\"DDP has not supported > 1D "
                            "parallelism\", parallelize.py): shard instead (FSDP/HSDP)",
                            tsl_target_strategy_str(&u.s, b),
                            u.tp > 1 ? "tensor parallelism" : "pipeline stages");
    if (u.ckpt_blocks && u.ckpt_blocks != v->n_blocks)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "torchtitan: %u of %u Transformer layers are checkpointed; Tessel "
                            "exports [activation_checkpoint] mode full or none",
                            u.ckpt_blocks, v->n_blocks);
    /* its MTP (target.h): MTPDecoder.Config.update_from_config raises under PP and CP */
    if (tsl_mtp_layers(v->model) && (v->pp > 1 || u.cp > 1))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "torchtitan: the model's %u MTP depths run without pipeline and "
                            "context parallelism (models/deepseek_v3/mtp.py: \"MTP does not "
                            "support pipeline parallelism yet\"); the plan has pp %u, cp %u",
                            tsl_mtp_depths(v->model), v->pp, u.cp);
    /* ParallelDims (distributed/parallel_dims.py): fsdp_enabled = dp_shard_enabled
     * or cp_enabled, and the FSDP mesh is dp_shard x cp: torchtitan shards the model
     * over the CP ranks. Tessel's CP ranks sit in the innermost data level (cost.h),
     * so a plan whose CP ranks are replicas (DP) is not the plan torchtitan runs,
     * and eval --torchtitan would read its export back sharded. */
    if (u.cp > 1 && tsl_strategy_degree(&u.s, TSL_DIM_SDP) <= 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "torchtitan: %s replicates the model over its %u context-parallel "
                            "ranks (cp %u in DP); torchtitan FSDP-shards over dp_shard x cp "
                            "(ParallelDims: fsdp_enabled = dp_shard_enabled or cp_enabled): "
                            "shard the CP ranks (sdp) instead",
                            tsl_target_strategy_str(&u.s, b), u.cp, u.cp);
    if (tsl_target_tied_pp_refused(TSL_TARGET_TORCHTITAN, v->model, v->pp))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "torchtitan: model %s ties its output head to the embedding "
                            "(tied_head) and the plan has pp %u; torchtitan raises "
                            "NotImplementedError for weight tying with pipeline parallelism "
                            "(models/common/decoder.py): plan with pp 1, untie the head, or "
                            "another target",
                            v->model->name, v->pp);
    for (uint32_t s = 1; s < v->pp; s++)
        if (v->stage_first[s] > v->n_blocks)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "torchtitan: stage %u holds the output head alone; split points "
                                "are Transformer blocks",
                                s);
    /* torchtitan's TP plan always shards the norms over the sequence (its TP is
     * sequence-parallel; eval --torchtitan reads it so): a plan without +sp is
     * not the plan it runs, and export-then-eval would not give it back */
    if (u.tp > 1 && !u.s.sp)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "torchtitan: %s runs tensor parallelism without sequence "
                            "parallelism; torchtitan's TP is always sequence-parallel, so it "
                            "would run another plan than this one",
                            tsl_target_strategy_str(&u.s, b));
    if (tsl_target_torchtitan_experts(v->model, &u.s, u.cp, v->plan->ep, err) != 0 ||
        torchtitan_interleave(v, err) != 0)
        return -1;
    return check_features(v, &u, true, false, 0, true, err);
}

/*
 * torchtitan's routed experts (b5bcd76c6 distributed/parallel_dims.py, fsdp.py,
 * models/common/moe_sharding.py; v0.2.1 .. v0.2.2 alike with
 * expert_tensor_parallel_degree 1): the sparse mesh [dp_replicate, efsdp, ep]
 * puts the EP ranks innermost over the dense region dp_shard × cp × tp (stride
 * 1, Tessel's EP group), and fully_shard shards the experts over efsdp = that
 * region / ep and replicates them over dp_replicate. With EP off they sit on
 * the dense mesh: sharded over dp_shard × cp, and over TP. Tessel prices expert
 * TP 1 and the experts' states over all G/ep ranks at stride ep, sharded where
 * the strategy has SDP and replicated where not (cost.c moe_terms); the layouts
 * agree when the region divides by ep (ParallelDims._validate), TP ranks are
 * covered by EP, and efsdp is either all G/ep ranks (no replicas) or 1.
 */
int tsl_target_torchtitan_experts(const tsl_model_t *m, const tsl_strategy_t *s, uint32_t cp,
                                  uint32_t ep, tsl_err_t *err)
{
    char b[64];
    uint32_t moe = tsl_model_moe_layers(m);
    if (moe == 0)
        return 0;
    uint32_t t = tsl_strategy_degree(s, TSL_DIM_TP), d = tsl_strategy_degree(s, TSL_DIM_DP);
    uint32_t z = tsl_strategy_degree(s, TSL_DIM_SDP);
    cp = cp > 1 ? cp : 1;
    ep = ep > 1 ? ep : 1;
    /* the CP ranks sit in the innermost data level: SDP, else DP (cost.h) */
    uint32_t replicate = z > 1 ? d : d / cp, region = (z > 1 ? z : cp) * t;
    const char *str = tsl_target_strategy_str(s, b);
    for (uint32_t i = 0; i < m->n_layers; i++)
        if (m->layers[i].experts % ep != 0)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "torchtitan: expert_parallel_degree %u does not divide layer "
                                "%u's %u experts; torchtitan would split them unevenly "
                                "(Shard(0) over the EP ranks), Tessel prices E/ep on each",
                                ep, i, m->layers[i].experts);
    if (region % ep != 0)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "torchtitan: expert_parallel_degree %u does not divide "
                            "data_parallel_shard_degree x context_parallel_degree x "
                            "tensor_parallel_degree = %u of %s (ParallelDims: EP borrows its "
                            "ranks from FSDP, CP and TP)",
                            ep, region, str);
    if (t > 1 && ep == 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "torchtitan: %s with expert parallelism off on %s's %u MoE layers; "
                            "torchtitan then shards the routed experts over TP "
                            "(moe_sharding.py), Tessel prices them whole on every TP rank "
                            "(expert TP 1): give the plan an ep > 1",
                            str, m->name, moe);
    if (z > 1 && replicate > 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "torchtitan: %s keeps %u replicas (HSDP): torchtitan replicates "
                            "the routed experts over data_parallel_replicate_degree %u and "
                            "shards them over efsdp = %u rank(s) only, where Tessel prices them "
                            "sharded over all %u expert-data-parallel ranks",
                            str, replicate, replicate, region / ep, replicate * region / ep);
    if (z == 1 && region / ep > 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "torchtitan: %s shards no model states, but torchtitan FSDP-shards "
                            "the routed experts over efsdp = %u ranks (context_parallel_degree "
                            "x tensor_parallel_degree / expert_parallel_degree) where Tessel "
                            "prices them replicated: give the plan ep %u or sharded data "
                            "parallelism",
                            str, region / ep, region);
    return 0;
}

/* ---- galvatron ---- */

static int galvatron_layer(const tsl_target_view_t *v, uint32_t i, tsl_err_t *err)
{
    char b[64];
    const tsl_strategy_t *s = &v->layer[i];
    if (tsl_strategy_degree(s, TSL_DIM_SDP) > 1 && tsl_strategy_degree(s, TSL_DIM_DP) > 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "galvatron: layer %u (%s) runs %s, replicated and sharded data "
                            "parallelism at once; Galvatron takes one data-parallel type per "
                            "layer",
                            i, tsl_target_layer_kind(v, i), tsl_target_strategy_str(s, b));
    /* TP ranks apart (tp_consecutive_flags 0): Hetu-Galvatron main lays every layer's
     * ranks out pp-dp-cp-tp-sp, TP innermost, and no longer reads the flag (since
     * f055046, comm_groups.py build_rank_to_parallel_coords at cea12ff); v2.4.0 honours
     * it on the Transformer layers but gives the embedding and head consecutive TP
     * (hybrid_parallel_config.py hp_config_whole_model) */
    uint32_t tp = tsl_strategy_degree(s, TSL_DIM_TP);
    if (tp > 1 && tsl_strategy_stride(s, TSL_DIM_TP) != 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "galvatron: layer %u (%s) runs %s, its TP ranks apart; Galvatron "
                            "main runs every TP group on consecutive GPUs (tp_consecutive_flags "
                            "is no longer read)",
                            i, tsl_target_layer_kind(v, i), tsl_target_strategy_str(s, b));
    /* +sp is Megatron's sequence parallelism, which Galvatron runs on every TP
     * layer by default (runtime sequence_parallel: true) */
    if (s->zero || s->selective)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "galvatron: layer %u (%s) runs %s; Tessel exports Galvatron's "
                            "ddp/zero3 data parallelism, TP (+sp) and full CKPT only",
                            i, tsl_target_layer_kind(v, i), tsl_target_strategy_str(s, b));
    return 0;
}

/*
 * Galvatron's memory rules (Hetu-Galvatron main cea12ff and v2.4.0):
 *  - dynamic_programming.py: a budget of more than 20 GiB (max_mem // 1024 > 20,
 *    in MB) keeps int(0.2 · budget) back "for pytorch memory cache";
 *  - cost_model/components/layer_cost.py: with chunks > 1 and async_grad_reduce
 *    (the default) a ZeRO-3 layer's model states 4P (P its fp32 parameter bytes
 *    per TP rank) count 7/8 · (1/d + 0.003) + 1/8 of it in bf16: the
 *    accumulated bf16 gradients, 2 bytes a parameter, stay unsharded.
 * Tessel's stage peak plus those gradients must fit what Galvatron allows.
 */
static uint64_t galvatron_unsharded_grads(const tsl_target_view_t *v, uint32_t s)
{
    double bytes = 0.0;
    if (v->plan->n_micro <= 1)
        return 0;
    for (uint32_t i = v->stage_first[s]; i < v->stage_first[s] + v->stage_count[s]; i++) {
        const tsl_strategy_t *st = &v->layer[i];
        double d = tsl_strategy_degree(st, TSL_DIM_SDP);
        double tp = tsl_strategy_degree(st, TSL_DIM_TP);
        if (d > 1.0 && 1.0 - 1.0 / d - 0.003 > 0.0)
            bytes += 2.0 * (double)v->model->layers[i].params / tp * (1.0 - 1.0 / d - 0.003);
    }
    return (uint64_t)bytes;
}

static int galvatron_memory(const tsl_target_view_t *v, tsl_err_t *err)
{
    const tsl_plan_t *p = v->plan;
    uint64_t budget = p->budget_bytes;
    if (budget == 0)
        return 0; /* a plan document without its budget: nothing to hold it to */
    uint64_t mb = budget >> 20, allowed = budget;
    if (mb / 1024 > 20)
        allowed = (mb - (uint64_t)(mb * 0.2)) << 20;
    for (uint32_t s = 0; s < v->pp; s++) {
        uint64_t grads = galvatron_unsharded_grads(v, s);
        uint64_t need = p->stages[s].peak_bytes + grads;
        if (need > allowed)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "galvatron: stage %u needs %.1f GiB (peak %.1f + %.1f of "
                                "unsharded accumulated ZeRO-3 gradients over %u micro-batches) but "
                                "Galvatron allows %.1f of the %.1f GiB budget (it keeps 20%% back "
                                "above 20 GiB)",
                                s, need / 1073741824.0, p->stages[s].peak_bytes / 1073741824.0,
                                grads / 1073741824.0, p->n_micro, allowed / 1073741824.0,
                                budget / 1073741824.0);
    }
    return 0;
}

static int check_galvatron(const tsl_target_view_t *v, tsl_err_t *err)
{
    const tsl_plan_t *p = v->plan;
    for (uint32_t i = 0; i < v->model->n_layers; i++)
        if (galvatron_layer(v, i, err) != 0)
            return -1;
    for (uint32_t s = 0; s < v->pp; s++) {
        if (p->stages[s].n_devices != p->stages[0].n_devices)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "galvatron: stage %u has %u devices but stage 0 has %u; "
                                "Galvatron gives every stage the same number",
                                s, p->stages[s].n_devices, p->stages[0].n_devices);
        if (v->stage_blocks[s] == 0)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "galvatron: stage %u holds no Transformer layer (pp_division "
                                "counts Transformer layers)",
                                s);
    }
    uint32_t tp0 = tsl_strategy_degree(&v->layer[0], TSL_DIM_TP);
    uint32_t tph = tsl_strategy_degree(&v->layer[v->n_blocks + 1], TSL_DIM_TP);
    if (tp0 != tph)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "galvatron: the embedding runs tp%u but the head tp%u; Galvatron "
                            "gives both one vocabulary TP degree (vtp)",
                            tp0, tph);
    bool sdp0 = tsl_strategy_degree(&v->layer[0], TSL_DIM_SDP) > 1;
    bool sdph = tsl_strategy_degree(&v->layer[v->n_blocks + 1], TSL_DIM_SDP) > 1;
    if (sdp0 != sdph) /* hybrid_parallel_config.py hp_config_whole_model at cea12ff */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "galvatron: the embedding's data parallelism is %s but the head's "
                            "%s; Galvatron gives both one ZeRO-3 flag (vocab_sdp, v2.4.0's "
                            "embed_sdp)",
                            sdp0 ? "ZeRO-3" : "replicated", sdph ? "ZeRO-3" : "replicated");
    if (p->interleave > 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "galvatron: the plan interleaves %u model chunks per stage; Tessel "
                            "exports plain 1F1B to galvatron (plan again with --no-interleave)",
                            p->interleave);
    return galvatron_memory(v, err);
}

/* The zero-bubble schedules (pipesim.h) a stack runs: torchtitan ZBV and DualPipeV
 * (ZBVZeroBubble, DualPipeV: torch.distributed.pipelining); Megatron-LM, DeepSpeed
 * and Galvatron none. */
static int check_schedule(uint32_t t, const tsl_target_view_t *v, tsl_err_t *err)
{
    uint32_t sc = v->plan->schedule;
    if (t == TSL_TARGET_TORCHTITAN && sc == TSL_PIPESIM_SCHED_DUALPIPEV &&
        v->plan->n_micro < 2 * v->plan->pp)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: DualPipeV needs at least as many micro-batches as its %u "
                            "stages (torch ScheduleDualPipeV), the plan has %u",
                            v->target, 2 * v->plan->pp, v->plan->n_micro);
    if (sc == TSL_PIPESIM_SCHED_1F1B || (t == TSL_TARGET_TORCHTITAN && tsl_pipesim_sched_is_v(sc)))
        return 0;
    const char *name =
        sc <= TSL_PIPESIM_SCHED_DUALPIPEV ? tsl_pipesim_sched_name(sc, 1) : "(unknown)";
    return tsl_err_setc(
        err, TSL_E_UNSUPPORTED,
        "%s: the plan runs the %s pipeline schedule, which %s does not run%s; "
        "plan again with --target %s (or --no-zero-bubble)",
        v->target, name, v->target,
        t == TSL_TARGET_TORCHTITAN ? " (its zero-bubble schedules are ZBV and DualPipeV)" : "",
        v->target);
}

/* Context parallelism a stack runs (docs/exports.md): Megatron-LM every
 * --cp-comm-type Tessel prices (p2p, a2a, allgather; TransformerEngine's
 * context-parallel attention; not torch-allgather, torch's); torchtitan ring attention only
 * (context_parallel_degree, torch.distributed.tensor.experimental.context_parallel:
 * K/V rotated by all-gather or all-to-all, no head split) — v0.2.x's, its TOML export;
 * main's Python export refuses it and the search under the target weighs no CP
 * (search.c target_weighs_cp); DeepSpeed's Ulysses (sequence_parallel_size) is not
 * exported, Galvatron has none. */
static int check_cp(uint32_t t, const tsl_target_view_t *v, tsl_err_t *err)
{
    uint32_t cp = v->plan->cp, comm = v->plan->cp_comm;
    if (cp <= 1 || (t == TSL_TARGET_MEGATRON && comm != TSL_CP_TORCH_AG))
        return 0;
    if (t == TSL_TARGET_TORCHTITAN && comm != TSL_CP_A2A)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: the plan splits the sequence %u ways (context parallelism, %s), "
                        "which Tessel does not export to %s; plan again with --target %s "
                        "(it searches %s) or --no-cp",
                        v->target, cp, tsl_cp_comm_name(comm) ? tsl_cp_comm_name(comm) : "?",
                        v->target, v->target,
                        t == TSL_TARGET_TORCHTITAN ? "ring attention only"
                        : t == TSL_TARGET_MEGATRON ? "TransformerEngine's p2p and a2a"
                                                   : "without CP");
}

int tsl_target_check_view(uint32_t t, const tsl_target_view_t *v, tsl_err_t *err)
{
    if (t != TSL_TARGET_ANY && t < TSL_TARGET_COUNT && check_schedule(t, v, err) != 0)
        return -1;
    if (t != TSL_TARGET_ANY && t < TSL_TARGET_COUNT && check_cp(t, v, err) != 0)
        return -1;
    switch (t) {
    case TSL_TARGET_ANY: return 0;
    case TSL_TARGET_MEGATRON: return check_megatron(v, err);
    case TSL_TARGET_DEEPSPEED: return check_deepspeed(v, err);
    case TSL_TARGET_TORCHTITAN: return check_torchtitan(v, err);
    case TSL_TARGET_GALVATRON: return check_galvatron(v, err);
    default: return tsl_err_set(err, "target: %u is not a stack", t);
    }
}

/* ---- the entry points ---- */

/* Mixture-of-experts plans go to Megatron-LM and torchtitan (docs/exports.md
 * "Mixture of experts"; torchtitan's layout rules are tsl_target_torchtitan_experts).
 * DeepSpeed builds its experts in the model's code (deepspeed.moe.layer.MoE,
 * moe/sharded_moe.py, moe/experts.py): GShard's capacity-padded [E, C, M]
 * dispatch, token dropping at capacity_factor 1.0 by default, a Python loop of
 * one GEMM per local expert, no shared experts, and with AutoTP (no mpu) no
 * split of the tokens over the TP ranks: not the MoE Tessel prices, nor a key
 * of the config JSON. Galvatron v2.4.0 has no MoE model; main (cea12ff) adds
 * per-layer ep_sizes_enc / tp_of_ep_sizes_enc, not checked against Tessel's
 * pricing yet. */
static int moe_ok(uint32_t t, const tsl_model_t *m, tsl_err_t *err)
{
    uint32_t moe = tsl_model_moe_layers(m);
    if (moe == 0 || t == TSL_TARGET_MEGATRON || t == TSL_TARGET_TORCHTITAN)
        return 0;
    if (t == TSL_TARGET_DEEPSPEED)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "deepspeed: model %s has %u MoE layers; DeepSpeed takes experts from "
                            "the model's code (deepspeed.moe.layer.MoE(ep_size=...)), not its "
                            "config JSON, and runs them GShard-style (capacity-padded dispatch "
                            "that drops tokens by default, one GEMM per local expert, no shared "
                            "experts, no token split over AutoTP ranks), not the dropless "
                            "grouped-GEMM MoE Tessel prices; export it to megatron or torchtitan",
                            m->name, moe);
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: model %s has %u MoE layers; Galvatron v2.4.0 runs no "
                        "mixture-of-experts model and Tessel does not export main's per-layer "
                        "ep_sizes_enc yet; export it to megatron or torchtitan",
                        tsl_target_name(t), m->name, moe);
}

/* Expert TP and a capacity factor: the megatron export writes them, no other. */
static int moe_layout_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (t == TSL_TARGET_MEGATRON || (p->etp <= 1 && !(p->moe_capacity > 0)))
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: Tessel writes expert TP and capacity factors for megatron only "
                        "(the plan has etp %u, capacity factor %g)",
                        tsl_target_name(t), p->etp > 1 ? p->etp : 1, p->moe_capacity);
}

/* An FP8 dispatch: Megatron-LM's flex dispatcher sends MXFP8 (--moe-dispatch-fwd-dtype,
 * --moe-combine-bwd-dtype); torchtitan's all-to-all moves bf16. */
static int moe_fp8_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (!p->moe_fp8_dispatch || t == TSL_TARGET_MEGATRON)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: dispatches the routed tokens in bf16 (the plan priced an FP8 "
                        "dispatch); plan it without --moe-fp8-dispatch",
                        tsl_target_name(t));
}

/* A plan priced with Megatron-LM's all-to-all dispatcher's pieces (moe_alltoall) is
 * not what another stack's dispatch runs. */
static int moe_alltoall_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (!p->moe_alltoall || t == TSL_TARGET_MEGATRON)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: runs its own token dispatch (the plan priced Megatron-LM's all-to-all "
                        "dispatcher, moe_alltoall_dispatcher); plan it without "
                        "--moe-alltoall-dispatcher",
                        tsl_target_name(t));
}

/* A plan priced with a flex dispatcher's all-to-alls (moe_flex) or Megatron-LM's EP
 * all-to-all overlap (moe_a2a_overlap) is not what another stack's export runs:
 * torchtitan's export writes its standard all-to-all (its DeepEP / HybridEP
 * comm_backend, models/common/config_utils.py at b5bcd76c6, is not written) and no
 * stack but Megatron-LM merges one micro-batch's forward with another's backward. */
static int moe_flex_overlap_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (t == TSL_TARGET_MEGATRON)
        return 0;
    if (p->moe_flex)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: runs its standard all-to-all (the plan priced a flex "
                            "dispatcher, moe_flex_dispatcher); plan it without "
                            "--moe-flex-dispatcher",
                            tsl_target_name(t));
    if (p->moe_a2a_overlap)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: runs no EP all-to-all overlap (the plan priced Megatron-LM's "
                            "--overlap-moe-expert-parallel-comm, moe_a2a_overlap); plan it "
                            "without --moe-a2a-overlap",
                            tsl_target_name(t));
    return 0;
}

/* An FP8 plan priced with the other stack's implementation (fp8_impl.h) is not
 * what t's export runs. */
static int fp8_impl_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    static const char *const who[TSL_FP8_IMPL_COUNT] = {"Transformer Engine", "torchao"};
    uint32_t want = tsl_target_fp8_impl(t);
    if (!p->fp8_recipe || p->fp8_impl == want)
        return 0;
    const char *had = tsl_fp8_impl_name(p->fp8_impl);
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: runs FP8 through %s; the plan was priced as %s runs it (fp8_impl %s)",
                        tsl_target_name(t), who[want], had ? who[p->fp8_impl] : "an unknown stack",
                        had ? had : "?");
}

/* A plan priced with another stack's loss (loss_impl.h) is not what t's export runs:
 * its head's memory would be another's. The executor's (0) passes, as the rest of
 * a plan of Tessel's own space does (its gradients' and overlap's knobs are the
 * executor's too). */
static int loss_impl_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    uint32_t want = tsl_target_loss_impl(t);
    if (tsl_megatron_te_loss_ok(t, p->loss_impl, p->autocast, err) != 0)
        return -1;
    if (p->autocast || p->loss_impl == TSL_LOSS_EXEC || tsl_target_loss_runs(t, p->loss_impl))
        return 0;
    const char *had = tsl_loss_impl_name(p->loss_impl);
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: runs its LM loss as loss_impl %s; the plan was priced with loss_impl "
                        "%s",
                        tsl_target_name(t), tsl_loss_impl_name(want), had ? had : "?");
}

/* A plan priced with another stack's optimizer step (opt_step.h) is not what t's
 * export runs: megatron steps as Megatron-core (bf16) or its fp16 optimizer,
 * torchtitan with torch's foreach AdamW, deepspeed with its fp16 optimizer; the
 * executor's fused step (0) passes, as its loss does (loss_impl_ok). */
static int opt_step_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    uint32_t s = p->opt_step;
    if (tsl_target_opt_step_runs(t, s))
        return 0;
    const char *had = tsl_opt_step_name(s);
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: runs its own optimizer step; the plan was priced with opt_step %s",
                        tsl_target_name(t), had ? had : "?");
}

/* A plan priced with synchronised TP collectives (tp_sync: AMP's fork of
 * Megatron-LM v1.1.5, its timers around _reduce) is not what any target launches:
 * megatron, torchtitan and galvatron do not synchronise the device around their TP
 * collectives, and deepspeed's TP is AutoTP without stages and Megatron-DeepSpeed's
 * mpu layers beside them, neither synchronised (AMP's TP, its fork's own timers around
 * them, is refused there). */
static int tp_sync_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (!p->tp_sync)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: does not synchronise the device around its TP collectives; the plan "
                        "was priced with tp_sync (AMP's Megatron-LM v1.1.5 fork)",
                        tsl_target_name(t));
}

/* A plan priced with every attention head on each TP rank (tp_whole_heads: AMP's
 * fork's TransGAN attention, its scores not split by TP) is not what any target
 * launches: each splits the heads over the TP group (Megatron-LM's
 * num_attention_heads_per_partition, torchtitan's and Galvatron's likewise). */
static int tp_whole_heads_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (!p->tp_whole_heads)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: splits the attention heads over the TP group; the plan was priced "
                        "with tp_whole_heads (AMP's fork's TransGAN attention)",
                        tsl_target_name(t));
}

/* A plan priced with torch's micro-pipelined TP (async_tp) runs only where torchtitan
 * launches it (enable_async_tensor_parallel: torch.distributed._symmetric_memory and
 * inductor's micro_pipeline_tp); Megatron-LM, DeepSpeed and Galvatron have no such
 * switch (Megatron-LM's own is TransformerEngine's userbuffers, tp_comm_overlap). */
static int async_tp_target_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (!p->async_tp || t == TSL_TARGET_TORCHTITAN)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: has no micro-pipelined TP; the plan was priced with async_tp "
                        "(torchtitan's AsyncTP)",
                        tsl_target_name(t));
}

/* A plan priced with fairscale 0.4.5's FSDP with a root per layer (sdp_layer_roots:
 * Galvatron-BMW's 2022 runtime) is not what any target launches: megatron,
 * deepspeed and torchtitan run their own sharding, galvatron's export today's
 * Galvatron runtime (PyTorch FSDP). */
static int sdp_layer_roots_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (!p->sdp_layer_roots)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: runs its own FSDP; the plan was priced with sdp_layer_roots "
                        "(fairscale 0.4.5's FSDP with a root per layer, Galvatron-BMW)",
                        tsl_target_name(t));
}

/* A plan priced with torch FSDP1's SHARD_GRAD_OP (sdp_keep_weights) is what torchtitan
 * runs under fsdp_reshard_after_forward "never" (its export writes it: each block
 * gathered in the forward and kept to the backward, its gradients reduce-scattered every
 * micro-batch without PP; torchtitan/distributed/fsdp.py
 * get_fsdp_reshard_after_forward_policy at b5bcd76c6). No other target launches it:
 * megatron and deepspeed reshard ZeRO-3 every pass; galvatron's export writes
 * Galvatron's own dp types, priced as its ZeRO stages (its zero2 runtime on
 * SHARD_GRAD_OP not examined here). */
static int sdp_keep_weights_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (!p->sdp_keep_weights)
        return 0;
    /* with stages torchtitan's "never" holds the weights the whole iteration and syncs
     * the gradients once (sdp_nosync, which a torchtitan search records there instead) */
    if (t == TSL_TARGET_TORCHTITAN && p->pp > 1 && !p->sdp_nosync)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "torchtitan: the plan was priced with sdp_keep_weights under "
                            "pipeline stages (gradients reduce-scattered every micro-batch); "
                            "torchtitan's fsdp_reshard_after_forward \"never\" there holds the "
                            "weights the whole iteration and reduce-scatters once (sdp_nosync)");
    if (t == TSL_TARGET_TORCHTITAN)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: runs its own FSDP; the plan was priced with sdp_keep_weights "
                        "(torch FSDP's SHARD_GRAD_OP)",
                        tsl_target_name(t));
}

/* A plan priced with DeepSpeed's pipeline p2p as AMP's fork runs it (ds_pipe_p2p:
 * partitioned activations, the fp16 mask, blocking broadcasts) is not what any
 * target launches: megatron and torchtitan send each rank's whole share
 * asynchronously, galvatron likewise, and the deepspeed target's export runs today's
 * engine, which sends no mask (Megatron-DeepSpeed precomputes it: args.attn_mask) and
 * partitions the gradient as the activation (legacy_p2p under TP, deepspeed_pipe_tp). */
static int ds_pipe_p2p_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (!p->ds_pipe_p2p)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: does not run DeepSpeed's pipeline engine; the plan was priced with "
                        "ds_pipe_p2p (AMP's DeepSpeed fork)",
                        tsl_target_name(t));
}

/* A plan priced with DeepSpeed's PipelineEngine's blocking one-way p2p (ds_pipe_engine:
 * every transfer a rendezvous both stages sit in) is the deepspeed target's; megatron,
 * torchtitan and galvatron batch or overlap their stage exchanges. */
static int ds_pipe_engine_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (!p->ds_pipe_engine || t == TSL_TARGET_DEEPSPEED)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: does not run DeepSpeed's pipeline engine; the plan was priced with "
                        "ds_pipe_engine (its blocking one-way p2p)",
                        tsl_target_name(t));
}

/* A plan priced with torch.distributed.pipelining's stages (torch_pipelining: its
 * interleaved 1F1B waiting on every exchange) is the torchtitan target's; Megatron-core
 * overlaps the steady state's hops, DeepSpeed and Galvatron run their own engines. */
static int torch_pipelining_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (!p->torch_pipelining || t == TSL_TARGET_TORCHTITAN)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: does not run torch.distributed.pipelining; the plan was priced "
                        "with torch_pipelining (its exchanges waited on)",
                        tsl_target_name(t));
}

/* A plan priced with DeepSpeed's ZeRO-0 gradient bucket (ds_grad_bucket: flatten, 1/DP
 * scale, copy back into each .grad) is what deepspeed's engine runs, and no other
 * target's: Megatron-LM and torchtitan reduce their own buffers in place. */
static int ds_grad_bucket_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (!p->ds_grad_bucket || t == TSL_TARGET_DEEPSPEED)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: does not reduce its gradients through DeepSpeed's bucket; the plan "
                        "was priced with ds_grad_bucket",
                        tsl_target_name(t));
}

/* A plan priced with its SDP level kept unsharded between micro-batches (sdp_nosync:
 * FSDP2 with reshard_after_forward False and gradient sync on the last micro-batch) is
 * what torchtitan runs under PP, and no other target's: Megatron-LM's and DeepSpeed's
 * ZeRO-3 gather and reduce-scatter every micro-batch. (A plan records it only at
 * PP > 1, where it prices: search_eval.c eval_config.) */
static int sdp_nosync_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (!p->sdp_nosync || t == TSL_TARGET_TORCHTITAN)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: does not keep its sharded data-parallel level unsharded between "
                        "micro-batches; the plan was priced with sdp_nosync (torchtitan's FSDP2 "
                        "under PP)",
                        tsl_target_name(t));
}

/* A plan priced with DeepSpeed's BF16_Optimizer under pipeline stages (ds_bf16_optimizer)
 * is what BigScience's Megatron-DeepSpeed ran with a ZeRO-0 config; the deepspeed export
 * writes that config (check_deepspeed says where it runs), no other target's. */
static int ds_bf16_optimizer_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (!p->ds_bf16_optimizer || t == TSL_TARGET_DEEPSPEED)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: does not run DeepSpeed's BF16_Optimizer under pipeline stages; the "
                        "plan was priced with ds_bf16_optimizer",
                        tsl_target_name(t));
}

/* A plan priced with DeepSpeed's synchronising timers (ds_wall_clock: AMP's fork's
 * wall_clock_breakdown) describes that engine; no export turns them on. */
static int ds_wall_clock_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (!p->ds_wall_clock)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: its configuration does not time every pipeline instruction "
                        "between device synchronisations; the plan was priced with "
                        "ds_wall_clock (AMP's DeepSpeed fork)",
                        tsl_target_name(t));
}

/* A plan priced with DeepSpeed 0.3's ZeRO-3 (ds_zero3_v03) describes that code's
 * collectives; every export's stack gathers and reduces otherwise. */
static int ds_zero3_v03_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (!p->ds_zero3_v03)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: its configuration does not run DeepSpeed 0.3's ZeRO-3; the plan "
                        "was priced with ds_zero3_v03",
                        tsl_target_name(t));
}

/* A plan priced with TE's amax reduction over TP only (fp8_amax_tp_only) describes TE
 * before v1.6 launched with NVTE_DP_AMAX_REDUCE_INTERVAL=0 and NVTE_ASYNC_AMAX_REDUCTION=1
 * (NeMo-Framework-Launcher 24.03's env_vars). Neither Megatron-LM nor NeMo has a flag for
 * it, and the TE every export's stack runs (v1.6 on: 73f8d90fe removed the variable)
 * reduces over the whole amax group whatever the environment: refused, naming what the
 * launch would need. */
static int fp8_amax_tp_only_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (!p->fp8_amax_tp_only)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: the plan was priced with fp8_amax_tp_only, TE before v1.6 launched "
                        "with NVTE_DP_AMAX_REDUCE_INTERVAL=0 NVTE_ASYNC_AMAX_REDUCTION=1; the "
                        "stack this exports to has no flag for it and its TE (v1.6 on) reduces "
                        "the amax over the whole group",
                        tsl_target_name(t));
}

/* A plan priced with FP8 attention (fp8_dpa): Megatron-LM has no command-line flag for it
 * (TransformerConfig.fp8_dot_product_attention is among arguments.py's "no CLI argument
 * exists for these", d98e8a64 l.2333; Megatron-Bridge sets it in its mixed_precision
 * config), and the other stacks run no FP8 attention: no export can write it. Refused,
 * naming the field. */
static int fp8_dpa_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (!p->fp8_dpa)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: the plan was priced with fp8_dpa (FP8 attention); no launch "
                        "line sets it (Megatron-LM's fp8_dot_product_attention has no "
                        "command-line flag; Megatron-Bridge's config sets it)",
                        tsl_target_name(t));
}

/* A plan priced with Megatron-LM v1.1.5's unfused kernels (unfused_elementwise: AMP's
 * fork without the fusion flags, PyTorch 1.7) describes that code; every export's stack
 * fuses the biases and the mask or adds them in the GEMMs' epilogues. */
static int unfused_elementwise_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (!p->unfused_elementwise)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: its configuration does not run Megatron-LM v1.1.5's unfused "
                        "bias, mask and copy kernels; the plan was priced with "
                        "unfused_elementwise (AMP's fork)",
                        tsl_target_name(t));
}

/* A plan priced with synchronous kernel launches (launch_blocking) describes a launch
 * run under CUDA_LAUNCH_BLOCKING=1; no export sets that environment, and a run without
 * it would not take the priced time. */
static int launch_blocking_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (!p->launch_blocking)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: its launch does not make every kernel launch synchronous; the "
                        "plan was priced with launch_blocking (CUDA_LAUNCH_BLOCKING=1)",
                        tsl_target_name(t));
}

/* A plan priced as fp16 mixed precision (fp16: asked, or on a GPU without bf16): megatron
 * writes --fp16 (its dynamic loss scaler by default: --initial-loss-scale 2**32,
 * --min-loss-scale 1, --loss-scale-window 1000, --hysteresis 2, megatron/training/
 * arguments.py at d98e8a6) and deepspeed "fp16": {"enabled": true, "loss_scale": 0}
 * (dynamic; runtime/precision_config.py at edaa722). torchtitan has no fp16 path
 * (TrainingConfig.mixed_precision_param "bfloat16" or "float32", no grad scaler:
 * torchtitan/config/configs.py at b5bcd76c6); galvatron's strategy file carries no
 * precision (its runtime's mixed_precision fp32/fp16/bf16, default bf16, is a launch
 * argument: galvatron/core/runtime/args_schema.py at cea12ff). */
static int fp16_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (!p->fp16)
        return 0;
    if (t == TSL_TARGET_TORCHTITAN)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "torchtitan: trains in bf16 or fp32 (mixed_precision_param, no loss "
                            "scaler); the plan was priced with fp16 mixed precision: plan it "
                            "again with --fp32, or on GPUs with bf16");
    if (t == TSL_TARGET_GALVATRON)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "galvatron: its strategy file carries no precision and the runtime "
                            "trains in bf16 unless launched with mixed_precision fp16; the plan "
                            "was priced with fp16");
    return 0;
}

/* A plan priced with Megatron-core's per-layer CUDA graphs (cuda_graph_modules: their
 * ops off the host's dispatch) is the megatron target's; no other stack captures a
 * module: DeepSpeed's enable_cuda_graph is its inference engine's (DeepSpeedInferenceConfig,
 * one graph of the whole forward; the training engine's graph_harvesting graphs the
 * optimizer's norm and overflow checks: deepspeed/inference/engine.py,
 * runtime/config.py at edaa722); torchtitan's job config has no CUDA-graph option at the
 * rows' 9dec370, e7c0cae and 820504e, and from f84224af0 (b5bcd76c6 included) only
 * TrainingConfig.disable_cuda_graphs over the whole forward-backward step; Galvatron
 * (v2.4.0, cea12ff) captures none. */
static int cuda_graphs_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    static const char *const why[TSL_TARGET_COUNT] = {
        [TSL_TARGET_DEEPSPEED] =
            "DeepSpeed's training engine captures no module (enable_cuda_graph "
            "is its inference engine's whole forward)",
        [TSL_TARGET_TORCHTITAN] = "torchtitan's job config names no module to capture (its "
                                  "training.disable_cuda_graphs, from f84224af0 on, is the whole "
                                  "forward-backward step)",
        [TSL_TARGET_GALVATRON] = "Galvatron's runtime captures no CUDA graph",
    };
    char mods[96];
    if (!p->cuda_graph_modules || t == TSL_TARGET_MEGATRON || t >= TSL_TARGET_COUNT || !why[t])
        return 0;
    tsl_cuda_graph_modules_format(p->cuda_graph_modules, mods, sizeof mods);
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: the plan was priced with Megatron-core's CUDA graphs of %s "
                        "(cuda_graph_modules); %s",
                        tsl_target_name(t), mods, why[t]);
}

/* Why a stack other than Megatron-LM cannot run a plan's FP8 linears at more than one
 * precision: torchtitan's Float8LinearConverter and MXFP8LinearConverter convert every
 * linear they take at the one recipe of their Config (filter_fqns, or MXFP8's fqns, only
 * leave a module in bf16: components/quantization at b5bcd76c6; Tessel's export filters
 * the LM head and a router's gate alone, export_torchtitan.c); DeepSpeed's and
 * Galvatron's exports train no FP8 at all. */
static const char *const one_precision[TSL_TARGET_COUNT] = {
    [TSL_TARGET_DEEPSPEED] = "DeepSpeed's training engine sets no FP8 recipe per module or "
                             "layer (and Tessel's export trains no FP8)",
    [TSL_TARGET_TORCHTITAN] = "torchtitan's Float8 and MXFP8 converters take one recipe for "
                              "every linear they convert (filter_fqns only leaves one bf16), "
                              "and Tessel's export converts every block linear",
    [TSL_TARGET_GALVATRON] = "Galvatron sets no FP8 recipe per module or layer (and Tessel's "
                             "export trains no FP8)",
};

/* A plan's per-module precision (module_prec.h: Megatron-core's quant_recipe, as
 * Megatron-Bridge's te_quant.cfg sets it) is the megatron target's. */
static int module_prec_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    char mods[160];
    if (!p->module_prec || t == TSL_TARGET_MEGATRON || t >= TSL_TARGET_COUNT || !one_precision[t])
        return 0;
    tsl_module_prec_format(p->module_prec, mods, sizeof mods);
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: the plan runs linears at their own precision (module_precision "
                        "%s, Megatron-core's per-module quant_recipe); %s",
                        tsl_target_name(t), mods, one_precision[t]);
}

/* The first and last blocks kept bf16 under FP8 (Megatron-LM's --first-last-layers-bf16)
 * are the megatron target's, as per-module precision is. */
static int bf16_layers_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (!(p->bf16_layers_start || p->bf16_layers_end) || t == TSL_TARGET_MEGATRON ||
        t >= TSL_TARGET_COUNT || !one_precision[t])
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: the plan keeps its first %u and last %u blocks in bf16 "
                        "(bf16_layers_start / bf16_layers_end, Megatron-LM's "
                        "--first-last-layers-bf16); %s",
                        tsl_target_name(t), p->bf16_layers_start, p->bf16_layers_end,
                        one_precision[t]);
}

/* Megatron-LM's recompute of named modules (recompute_modules: tsl_target_recompute_runs,
 * torchtitan's op-level selective AC alone under torchtitan and not under megatron) and
 * its precision-aware optimizer's bf16 moments (bf16_moments) are the megatron target's,
 * as the other exports refuse them (common/export.c check_megatron_only): DeepSpeed and
 * Galvatron checkpoint whole layers, torchtitan whole layers or its own ops, and none
 * keeps Adam's moments in bf16 beside an fp32 master. A plan document carrying them
 * passed eval --target before. */
static int megatron_switches_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    char mods[96];
    if (t >= TSL_TARGET_COUNT)
        return 0;
    if (!tsl_target_recompute_runs(t, p->recompute_modules)) {
        tsl_recompute_modules_format(p->recompute_modules, mods, sizeof mods);
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: the plan recomputes modules (recompute_modules %s) as %s does; %s",
                            tsl_target_name(t), mods,
                            tsl_target_recompute_policy(p->recompute_modules),
                            tsl_target_recompute_instead(t));
    }
    if (t == TSL_TARGET_ANY || t == TSL_TARGET_MEGATRON)
        return 0;
    if (p->bf16_moments)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: the plan keeps Adam's moments in bf16 beside an fp32 master "
                            "(bf16_moments, Megatron-LM's precision-aware optimizer); its "
                            "optimizer keeps them at the master's precision",
                            tsl_target_name(t));
    return 0;
}

bool tsl_target_unfused_attn(uint32_t t, const tsl_cluster_t *c)
{
    return t == TSL_TARGET_MEGATRON && tsl_cluster_no_flash(c) != NULL;
}

/* A plan priced with Megatron-LM's local impl (stack_unfused_attn: a GPU without a fused
 * attention kernel, tsl_target_unfused_attn) runs none of Transformer Engine's modules:
 * not its userbuffers (--tp-comm-overlap), context parallelism (DotProductAttention:
 * "Context parallelism is only supported by TEDotProductAttention!"), the EP overlap's
 * --delay-wgrad-compute ("only supported with transformer_engine implementation",
 * validate_args), nor FP8 (megatron/core/dot_product_attention.py, arguments.py at
 * d98e8a6). The search never forms them there (they are request switches: the request
 * is refused the same way, tsl_target_unfused_attn_ok). */
static int local_impl_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (t != TSL_TARGET_MEGATRON || !p->stack_unfused_attn)
        return 0;
    tsl_cost_knobs_t k = {0};
    tsl_plan_get_knobs(p, &k);
    k.moe_a2a_overlap = tsl_plan_ep_overlap_runs(p); /* asked for but not run: no TE needed */
    const char *te = tsl_target_te_only_knob(&k);
    if (te == NULL)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "megatron: %s runs in Transformer Engine, which does not run on a GPU "
                        "older than Ampere (compute capability below 8.0); the plan was priced "
                        "with Megatron-LM's --transformer-impl local",
                        te);
}

const char *tsl_target_te_only_knob(const tsl_cost_knobs_t *k)
{
    return k->tp_comm_overlap   ? "tp_comm_overlap"
           : k->cp > 1          ? "cp"
           : k->moe_a2a_overlap ? "moe_a2a_overlap"
           : k->fp8             ? "fp8_recipe"
                                : NULL;
}

int tsl_target_unfused_attn_ok(uint32_t t, const tsl_cluster_t *c, const tsl_cost_knobs_t *k,
                               tsl_err_t *err)
{
    const tsl_gpu_spec_t *g = tsl_cluster_no_flash(c);
    if (!tsl_target_unfused_attn(t, c))
        return 0;
    const char *te = tsl_target_te_only_knob(k);
    if (te == NULL)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: runs in Transformer Engine, which does not run on the %s (compute "
                        "capability below 8.0: Transformer Engine supports Ampere and later); "
                        "Megatron-LM runs it with --transformer-impl local",
                        te, g->name);
}

/* A plan priced as fp32 training (fp32): megatron writes neither --bf16 nor --fp16
 * (Megatron-LM's params_dtype stays torch.float, arguments.py at d98e8a6), deepspeed no
 * bf16/fp16 section, torchtitan mixed_precision_param "float32" (TrainingConfig); each
 * runs the matmuls without TF32 (PyTorch's allow_tf32 False since 1.12, which none of
 * them sets: knobs.tf32_off), so a plan priced with TF32 (no tf32_off: planned without
 * the target on GPUs with TF32) is refused rather than exported with figures the stack
 * will not reach; one on GPUs without TF32 records tf32_off wherever it was planned
 * (tsl_cluster_tf32_moot: the same figures) and passes. The
 * galvatron export is its strategy file, which carries no precision (the runtime's
 * mixed_precision, galvatron/core/runtime/args_schema.py at cea12ff, is a launch
 * argument defaulting to bf16). */
static int fp32_ok(uint32_t t, const tsl_plan_t *p, tsl_err_t *err)
{
    if (!p->fp32 || t == TSL_TARGET_ANY)
        return 0;
    if (t == TSL_TARGET_GALVATRON)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "galvatron: its strategy file carries no precision and the runtime "
                            "trains in bf16 unless launched with mixed_precision fp32; the plan "
                            "was priced with fp32");
    if (!p->tf32_off && !p->tf32) /* tf32: the user's script turns it on (tsl_export_tf32) */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: runs fp32 matmuls without TF32 (PyTorch's allow_tf32 is off "
                            "since 1.12 and the stack turns it on nowhere); the plan was priced "
                            "with TF32 GEMMs: plan it again with --target %s, or with --tf32 "
                            "where the training script sets allow_tf32 True",
                            tsl_target_name(t), tsl_target_name(t));
    return 0;
}

int tsl_target_model_ok(uint32_t t, const tsl_model_t *m, tsl_err_t *err)
{
    if (t == TSL_TARGET_ANY)
        return 0;
    if (t >= TSL_TARGET_COUNT)
        return tsl_err_set(err, "target: %u is not a stack", t);
    if (moe_ok(t, m, err) != 0)
        return -1;
    if (tsl_target_check_model(tsl_target_name(t), m, err) != 0)
        return -1;
    return t == TSL_TARGET_MEGATRON ? tsl_target_megatron_shapes(m, err) : 0;
}

int tsl_target_check(uint32_t t, const tsl_plan_t *p, const tsl_model_t *m,
                     tsl_target_view_t *scratch, tsl_err_t *err)
{
    if (t == TSL_TARGET_ANY)
        return 0;
    if (t >= TSL_TARGET_COUNT)
        return tsl_err_set(err, "target: %u is not a stack", t);
    /* the precision fields before FP8 itself: a refusal that names them */
    if (moe_ok(t, m, err) != 0 || moe_layout_ok(t, p, err) != 0 || module_prec_ok(t, p, err) != 0 ||
        bf16_layers_ok(t, p, err) != 0 || megatron_switches_ok(t, p, err) != 0 ||
        tsl_target_fp8_ok(t, p->fp8_recipe, err) != 0 || fp8_impl_ok(t, p, err) != 0 ||
        moe_fp8_ok(t, p, err) != 0 || moe_alltoall_ok(t, p, err) != 0 ||
        moe_flex_overlap_ok(t, p, err) != 0 || loss_impl_ok(t, p, err) != 0 ||
        opt_step_ok(t, p, err) != 0 || tp_sync_ok(t, p, err) != 0 ||
        tp_whole_heads_ok(t, p, err) != 0 || async_tp_target_ok(t, p, err) != 0 ||
        sdp_layer_roots_ok(t, p, err) != 0 || sdp_keep_weights_ok(t, p, err) != 0 ||
        ds_pipe_p2p_ok(t, p, err) != 0 || ds_pipe_engine_ok(t, p, err) != 0 ||
        torch_pipelining_ok(t, p, err) != 0 || ds_grad_bucket_ok(t, p, err) != 0 ||
        sdp_nosync_ok(t, p, err) != 0 || ds_bf16_optimizer_ok(t, p, err) != 0 ||
        launch_blocking_ok(t, p, err) != 0 || ds_wall_clock_ok(t, p, err) != 0 ||
        ds_zero3_v03_ok(t, p, err) != 0 || unfused_elementwise_ok(t, p, err) != 0 ||
        fp8_amax_tp_only_ok(t, p, err) != 0 || fp8_dpa_ok(t, p, err) != 0 ||
        fp32_ok(t, p, err) != 0 || fp16_ok(t, p, err) != 0 || local_impl_ok(t, p, err) != 0 ||
        cuda_graphs_ok(t, p, err) != 0)
        return -1;
    if (tsl_target_view_init(scratch, tsl_target_name(t), p, m, err) != 0)
        return -1;
    return tsl_target_check_view(t, scratch, err);
}

/* Each stack as its export launches it (docs/cost-model.md "Precision and
 * overlap", docs/exports.md):
 *   megatron    an SDP level is Megatron-FSDP (megatron_fsdp: its gathers
 *               prefetched, as optim_grads_params runs them; megatron_fsdp_ok);
 *               --bf16 sets accumulate_allreduce_grads_in_fp32 (validate_args,
 *               megatron/training/arguments.py): fp32 main gradients, 4 bytes in
 *               the buffer and the DP reduce; --overlap-grad-reduce and
 *               --overlap-param-gather default off (the reduce after the
 *               backward, finalize_model_grads; the gather after the step);
 *               the TP collectives of the backward run under the column-parallel
 *               gradient GEMMs (tensor_parallel/layers.py, async dgrad all-reduce,
 *               on by default since 2021-09, no flag left to turn it off).
 *               Its optimizer step: MixedPrecisionOptimizer's passes (opt_step.h
 *               megatron).
 *   torchtitan  fully_shard's MixedPrecisionPolicy(param_dtype bfloat16,
 *               reduce_dtype float32) (TrainingConfig.mixed_precision_param /
 *               _reduce, torchtitan/config/configs.py); FSDP2 reduce-scatters
 *               under the backward; its gradients live from a backward to the
 *               step, no kept buffer for the weight-gradient GEMMs to accumulate
 *               into (lazy_grads). Under PP its FSDP2 keeps each block
 *               unsharded between micro-batches (sdp_nosync, which the cost
 *               model applies only at PP > 1): fsdp_reshard_after_forward
 *               "default" is `not pp_enabled` (torchtitan/distributed/fsdp.py
 *               get_fsdp_reshard_after_forward_policy at b5bcd76c6; 9dec370's
 *               parallelize_llama.py apply_fsdp), and torch.distributed.pipelining
 *               syncs the gradients on a step's last backward only.
 *               Its step: torch.optim.AdamW foreach after clip_grad_norm_
 *               (opt_step.h torch).
 *   deepspeed   "bf16" with no communication_data_type reduces in the
 *               gradients' 16 bits; zero_optimization.overlap_comm defaults to
 *               stage == 3 (runtime/zero/config.py), so ZeRO-0/1/2 reduce after
 *               the backward. Its engine keeps no main_grad for a weight-gradient
 *               GEMM to accumulate into: autograd's fresh gradient, added by
 *               AccumulateGrad or copied by the ZeRO hooks (unfused_grad_accum).
 *               bf16 at stage 0 under a PipelineModule runs BF16_Optimizer
 *               (engine.py _do_optimizer_sanity_check): ds_bf16_zero0. TP
 *               beside stages is Megatron-DeepSpeed's: its boundaries by
 *               DeepSpeed's PartitionedTensor p2p (legacy_p2p), its backward's
 *               TP all-reduce after the GEMMs (overlap_tp_dgrad false). Its
 *               PipelineEngine moves every boundary by blocking one-way
 *               transfers both stages sit in (ds_pipe_engine).
 *   galvatron, any: the executor's and Galvatron-BMW's (all zero). */
void tsl_target_knobs(uint32_t t, tsl_cost_knobs_t *k)
{
    memset(k, 0, sizeof(*k));
    k->loss_impl = tsl_target_loss_impl(t);
    switch (t) {
    case TSL_TARGET_MEGATRON:
        k->grad_reduce_bytes = 4;
        k->grad_reduce_exposed = true;
        k->overlap_tp_dgrad = true;
        k->opt_step = TSL_OPT_STEP_MEGATRON;
        k->moe_alltoall = true; /* what its export writes without an FP8 dispatch */
        k->tf32_off = true;     /* fp32 matmuls without TF32 (cost.h knobs.tf32_off) */
        /* an SDP level is Megatron-FSDP, as its export launches it */
        k->megatron_fsdp = true;
        break;
    case TSL_TARGET_TORCHTITAN:
        k->grad_reduce_bytes = 4;
        k->fb_serial = true;
        k->opt_step = TSL_OPT_STEP_TORCH;
        k->fp8_impl = TSL_FP8_IMPL_TORCHAO; /* Float8Linear, MX linear (fp8_impl.h) */
        k->lazy_grads = true;       /* FSDP2: no kept buffer, a fresh gradient per backward */
        k->sdp_nosync = true;       /* FSDP2 unsharded between micro-batches, where PP > 1 */
        k->torch_pipelining = true; /* its stages by torch.distributed.pipelining */
        k->tf32_off = true;         /* likewise */
        break;
    case TSL_TARGET_DEEPSPEED:
        /* TP beside stages: DeepSpeed's PartitionedTensor p2p under Megatron-DeepSpeed's
         * mpu (deepspeed_pipe_tp); it prices nothing elsewhere (no TP, or no stages: the
         * target runs plain 1F1B), where the search does not record it */
        k->legacy_p2p = true;
        k->grad_reduce_exposed = true;
        k->unfused_grad_accum = true; /* autograd's fresh gradient, added by its own kernel */
        k->tf32_off = true;           /* likewise */
        k->ds_bf16_zero0 = true;      /* BF16_Optimizer at ZeRO-0 under stages (cost.h) */
        k->ds_pipe_engine = true;     /* TrainSchedule's blocking one-way p2p (cost.h) */
        break;
    default: break;
    }
}

uint32_t tsl_target_fp8_recipe(uint32_t t)
{
    switch (t) {
    case TSL_TARGET_MEGATRON: return TSL_FP8_DELAYED;
    case TSL_TARGET_TORCHTITAN: return TSL_FP8_TENSORWISE;
    case TSL_TARGET_DEEPSPEED:
    case TSL_TARGET_GALVATRON: return TSL_FP8_NONE;
    default: return TSL_FP8_DELAYED;
    }
}

uint32_t tsl_target_fp8_impl(uint32_t t)
{
    return t == TSL_TARGET_TORCHTITAN ? TSL_FP8_IMPL_TORCHAO : TSL_FP8_IMPL_TE;
}

/* The LM loss each stack's export runs (loss_impl.h):
 *   megatron    vocab_parallel_cross_entropy: Megatron-LM's default
 *               (--cross-entropy-loss-fusion off, TransformerConfig at 4415119);
 *               its native fusion (megatron-fused) runs too, the export writing
 *               --cross-entropy-loss-fusion;
 *   torchtitan  cross_entropy(pred.flatten(0, 1).float(), ...) eager (train.py
 *               loss_fn at 9dec370; loss_parallel under TP, sharded the same way),
 *               or the same under torch.compile (torch-compile: since the loss is
 *               compiled with training.compile, components/loss.py at e7c0cae);
 *   deepspeed   Megatron-DeepSpeed's GPT runs Megatron's vocab-parallel loss;
 *   galvatron   its parallel_loss, Megatron's vocabulary-parallel cross-entropy
 *               (galvatron/core/runtime/models/modules.py at cea12ff);
 *   any         Tessel's executor. */
bool tsl_target_opt_step_runs(uint32_t t, uint32_t s)
{
    return s == TSL_OPT_STEP_FUSED ||
           (t == TSL_TARGET_MEGATRON &&
            (s == TSL_OPT_STEP_MEGATRON || s == TSL_OPT_STEP_MEGATRON_FP16 ||
             s == TSL_OPT_STEP_MEGATRON_CORE_FP16)) ||
           (t == TSL_TARGET_TORCHTITAN && s == TSL_OPT_STEP_TORCH) ||
           (t == TSL_TARGET_DEEPSPEED && s == TSL_OPT_STEP_DEEPSPEED_FP16);
}

bool tsl_target_mtp_default(uint32_t t)
{
    return t == TSL_TARGET_ANY || t == TSL_TARGET_MEGATRON;
}

uint32_t tsl_target_mtp_depths(uint32_t t, uint32_t have, uint32_t mtp_layers, bool no_mtp)
{
    if (no_mtp)
        return 0;
    if (mtp_layers)
        return mtp_layers;
    return tsl_target_mtp_default(t) ? have : 0;
}

int tsl_target_mtp_ok(uint32_t t, uint32_t mtp_layers, uint32_t pp, uint32_t cp, tsl_err_t *err)
{
    if (mtp_layers == 0 || tsl_target_mtp_default(t))
        return 0;
    if (t == TSL_TARGET_TORCHTITAN && pp <= 1 && cp <= 1)
        return 0;
    if (t == TSL_TARGET_TORCHTITAN)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "mtp_layers: %u with torchtitan at %s %u: its MTP (DeepSeek-V3, "
                            "models/deepseek_v3/mtp.py) runs without pipeline and context "
                            "parallelism; plan with pp 1 and cp 1, --target megatron, or "
                            "without --mtp-layers",
                            mtp_layers, pp > 1 ? "pp" : "cp", pp > 1 ? pp : cp);
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "mtp_layers: %u: %s trains no multi-token prediction; megatron does "
                        "(and torchtitan's DeepSeek-V3 without stages): plan without "
                        "--mtp-layers to price the model as %s trains it",
                        mtp_layers, tsl_target_name(t), tsl_target_name(t));
}

bool tsl_target_mtp_note(uint32_t t, const char *model, uint32_t have, uint32_t depths, char *buf,
                         size_t n)
{
    if (n)
        buf[0] = '\0';
    if (have == 0 || depths != 0 || tsl_target_mtp_default(t) || n == 0)
        return false;
    if (t == TSL_TARGET_TORCHTITAN)
        snprintf(buf, n,
                 "torchtitan: %s's %u MTP depth%s left out: torchtitan builds none unless "
                 "asked (deepseek_v3_671b has none; model_registry(num_mtp_layers=N) for "
                 "DeepSeek-V3, without stages), so the plan is priced without %s; give "
                 "--mtp-layers %u (pp 1, cp 1) to price %s",
                 model, have, have > 1 ? "s" : "", have > 1 ? "them" : "it", have,
                 have > 1 ? "them" : "it");
    else
        snprintf(buf, n,
                 "%s: %s's %u MTP depth%s left out: %s trains no multi-token prediction, so the "
                 "plan is priced without %s (--target megatron trains %s)",
                 tsl_target_name(t), model, have, have > 1 ? "s" : "", tsl_target_name(t),
                 have > 1 ? "them" : "it", have > 1 ? "them" : "it");
    return true;
}

/* Today's Megatron-LM no longer runs TE's fused loss: validate_args asserts
 * "Transformer Engine cross entropy loss fusion is disabled due to stability issues"
 * on --cross-entropy-loss-fusion with --cross-entropy-fusion-impl te (168cb15d70,
 * 2026-06-03; megatron/training/arguments.py:1697 at d98e8a6). A line of an older
 * Megatron-LM (Megatron-Bridge 21d102f5e sets it) still evaluates as loss_impl te;
 * a plan for today's is neither searched nor exported with it. */
int tsl_megatron_te_loss_ok(uint32_t t, uint32_t loss_impl, bool autocast, tsl_err_t *err)
{
    if (t != TSL_TARGET_MEGATRON || loss_impl != TSL_LOSS_TE || autocast)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "megatron: loss_impl te: Megatron-LM refuses TE's fused cross-entropy "
                        "(--cross-entropy-loss-fusion --cross-entropy-fusion-impl te) since "
                        "168cb15d70, 2026-06-03 (\"disabled due to stability issues\"); price "
                        "the plan with its own loss (loss_impl megatron)");
}

bool tsl_target_recompute_runs(uint32_t t, uint32_t mods)
{
    switch (t) {
    case TSL_TARGET_ANY: return true;
    case TSL_TARGET_MEGATRON: return !(mods & TSL_RECOMPUTE_TORCHTITAN_OP);
    case TSL_TARGET_TORCHTITAN: return mods == 0 || mods == TSL_RECOMPUTE_TORCHTITAN_OP;
    default: return mods == 0;
    }
}

const char *tsl_target_recompute_policy(uint32_t mods)
{
    return mods & TSL_RECOMPUTE_TORCHTITAN_OP ? "torchtitan's op-level selective checkpointing"
                                              : "Megatron-LM's --recompute-modules";
}

const char *tsl_target_recompute_instead(uint32_t t)
{
    switch (t) {
    case TSL_TARGET_MEGATRON:
        return "Megatron-LM has no such policy (it recomputes its named "
               "modules, or whole layers)";
    case TSL_TARGET_TORCHTITAN:
        return "torchtitan recomputes whole layers or, alone, its own ops "
               "(torchtitan_op)";
    default: return "it recomputes whole layers";
    }
}

bool tsl_target_loss_runs(uint32_t t, uint32_t impl)
{
    return impl == tsl_target_loss_impl(t) ||
           (t == TSL_TARGET_MEGATRON && (impl == TSL_LOSS_TE || impl == TSL_LOSS_MEGATRON_FUSED)) ||
           (t == TSL_TARGET_TORCHTITAN && impl == TSL_LOSS_TORCH_COMPILE);
}

uint32_t tsl_target_loss_impl(uint32_t t)
{
    switch (t) {
    case TSL_TARGET_MEGATRON:
    case TSL_TARGET_DEEPSPEED:
    case TSL_TARGET_GALVATRON: return TSL_LOSS_MEGATRON;
    case TSL_TARGET_TORCHTITAN: return TSL_LOSS_TORCH;
    default: return TSL_LOSS_EXEC;
    }
}

/* megatron: --fp8-recipe delayed|tensorwise|blockwise|mxfp8, and nvfp4 through
 * --fp4-format e2m1 (Megatron-LM arguments.py); torchtitan: torchao's tensorwise Float8Linear
 * (quantize.linear.float8) and MXFP8 (quantize.linear.mx); DeepSpeed's config
 * and Galvatron's have no FP8 training switch. */
int tsl_target_fp8_ok(uint32_t t, uint32_t r, tsl_err_t *err)
{
    if (r == TSL_FP8_NONE || t == TSL_TARGET_ANY || t == TSL_TARGET_MEGATRON)
        return 0;
    if (t == TSL_TARGET_TORCHTITAN && (r == TSL_FP8_TENSORWISE || r == TSL_FP8_MXFP8))
        return 0;
    if (t == TSL_TARGET_TORCHTITAN)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "torchtitan: FP8 recipe %s is not torchtitan's (tensorwise "
                            "quantize.linear.float8, or mxfp8 quantize.linear.mx)",
                            tsl_fp8_recipe_name(r));
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%s: no FP8 training in its export (the plan is priced in FP8 %s); "
                        "plan it with --no-fp8",
                        tsl_target_name(t), tsl_fp8_recipe_name(r));
}

int tsl_async_tp_ok(bool async_tp, bool no_sp, bool tp_comm_overlap, bool eager, tsl_err_t *err)
{
    if (!async_tp)
        return 0;
    if (no_sp)
        return tsl_err_set(err, "async_tp: torch's micro-pipelined TP overlaps the "
                                "sequence-parallel collectives, and the request has none "
                                "(--no-seq-par or --tp-sync); torchtitan runs TP with SP");
    if (tp_comm_overlap)
        return tsl_err_set(err, "async_tp: beside tp_comm_overlap: torch's micro-pipelined TP "
                                "and TransformerEngine's userbuffers would overlap the same "
                                "collectives; no stack runs both");
    if (eager)
        return tsl_err_set(err, "async_tp: with eager: the micro-pipelining is an inductor pass "
                                "(\"Async TP requires --training.compile\", torchtitan "
                                "parallelize_llama.py)");
    return 0;
}

int tsl_target_tp_comm_overlap_ok(uint32_t r, bool tp_comm_overlap, tsl_err_t *err)
{
    if (!tp_comm_overlap || r != TSL_FP8_NVFP4)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "tp_comm_overlap: with fp8_recipe nvfp4: TransformerEngine's "
                        "userbuffers take no NVFP4 tensors (\"Unsupported quantizer for "
                        "Userbuffers\", module/base.py at release_v2.16); Megatron-Bridge "
                        "runs nvfp4 with the overlap off");
}

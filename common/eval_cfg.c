/*
 * eval_cfg.c — a launch configuration's numbers as a plan (eval_cfg.h), and
 * Megatron-LM's argument line. torchtitan's TOML is in eval_toml.c.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "eval_cfg.h"
#include "eval_cgraph.h"
#include "megatron_flags.h"
#include "megatron_te_prec.h"
#include "mtp.h"
#include "partition.h"
#include "pipeline.h"
#include "target.h"

/* --hybrid-layer-pattern against the model's blocks: the same letters in order. */
/* The pattern's MTP part against the model's depth 1 (its blocks between the
 * entry and the head copy; mtp.h). */
static int hybrid_mtp_match(const tsl_eval_cfg_t *cfg, const tsl_model_t *m, tsl_err_t *err)
{
    char has[sizeof cfg->hybrid_mtp] = {0};
    size_t n = 0;
    for (uint32_t i = 0; i < m->n_layers && n + 1 < sizeof has; i++) {
        const tsl_layer_t *l = &m->layers[i];
        if (l->mtp_depth == 1 && l->kind != TSL_LAYER_MTP && l->kind != TSL_LAYER_HEAD)
            has[n++] = tsl_layer_hybrid_char(l);
    }
    if (cfg->hybrid_mtp_depths && strcmp(has, cfg->hybrid_mtp) != 0)
        return tsl_err_set(err,
                           "megatron: --hybrid-layer-pattern: the MTP depth is '%s' in the "
                           "configuration, '%s' in the model %s",
                           cfg->hybrid_mtp, has, m->name);
    return 0;
}

static int hybrid_match(const tsl_eval_cfg_t *cfg, const tsl_model_t *m, tsl_err_t *err)
{
    if (!cfg->hybrid[0])
        return 0;
    if (tsl_model_mamba_layers(m) == 0)
        return tsl_err_set(err,
                           "megatron: --hybrid-layer-pattern: model %s is not a hybrid (no "
                           "Mamba layers); give its config (a nemotron_h --hf-config)",
                           m->name);
    uint32_t n = 0, b = 0;
    for (uint32_t i = 0; i < m->n_layers; i++)
        n += tsl_model_is_block(m, i);
    if (strlen(cfg->hybrid) != n) /* a count first: a short pattern is not a wrong letter */
        return tsl_err_set(err,
                           "megatron: --hybrid-layer-pattern: %zu layers in the configuration, "
                           "%u in the model %s",
                           strlen(cfg->hybrid), n, m->name);
    for (uint32_t i = 0; i < m->n_layers; i++) {
        if (!tsl_model_is_block(m, i))
            continue;
        char want = cfg->hybrid[b], has = tsl_layer_hybrid_char(&m->layers[i]);
        if (want != has)
            return tsl_err_set(err,
                               "megatron: --hybrid-layer-pattern: layer %u is '%c' in the "
                               "configuration, '%c' in the model %s",
                               b, want, has, m->name);
        b++;
    }
    return hybrid_mtp_match(cfg, m, err);
}

/* deg[0..2] = TP, SDP, DP for a stage of G devices. */
static int degrees(const tsl_eval_cfg_t *cfg, uint32_t G, uint32_t deg[3], tsl_err_t *err)
{
    uint32_t tp = cfg->tp ? cfg->tp : 1, sdp = cfg->sdp ? cfg->sdp : 1, dp = cfg->dp ? cfg->dp : 1;
    if (cfg->sdp_rest && !cfg->sdp)
        sdp = G % (tp * dp) == 0 ? G / (tp * dp) : 0;
    else if (!cfg->dp)
        dp = G % (tp * sdp) == 0 ? G / (tp * sdp) : 0;
    if (dp == 0 || sdp == 0)
        return tsl_err_set(err,
                           "degrees: tp %u x %s %u does not divide a stage's %u devices "
                           "(devices / pp)",
                           tp, dp ? "dp" : "sdp", dp ? dp : sdp, G);
    if ((uint64_t)tp * dp * sdp != G)
        return tsl_err_set(err,
                           "degrees: tp %u x dp %u x sdp %u do not multiply to a stage's "
                           "%u devices (devices / pp)",
                           tp, dp, sdp, G);
    if (cfg->sp && tp < 2)
        return tsl_err_set(err, "sequence parallelism needs tp > 1");
    if (cfg->zero && dp < 2 && !cfg->zero_one_rank)
        return tsl_err_set(err, "zero %u needs dp > 1 (it shards over the data-parallel ranks)",
                           cfg->zero);
    deg[0] = tp;
    deg[1] = sdp;
    deg[2] = dp;
    return 0;
}

static tsl_strategy_t strategy_of(const tsl_eval_cfg_t *cfg, const uint32_t deg[3])
{
    static const tsl_dim_t dims[3] = {TSL_DIM_TP, TSL_DIM_SDP, TSL_DIM_DP};
    tsl_strategy_t s = {0};
    for (int k = 0; k < 3; k++) {
        if (deg[k] < 2)
            continue;
        s.dim[s.n_levels] = (uint8_t)dims[k];
        s.degree[s.n_levels++] = deg[k];
    }
    s.sp = cfg->sp;
    s.zero = deg[2] > 1 ? cfg->zero : 0; /* one data rank: nothing to shard */
    return s;
}

/* The most samples a global batch or micro-batch may hold: eval's --batch bound, which
 * the products below are held to as well. */
#define EVAL_MAX_BATCH (1u << 24)

/* The batch's products (samples per rank x data width x micro-batches), each in 64
 * bits and held to EVAL_MAX_BATCH: in 32 bits --mbs 9 x 8192 ranks x --micro 65536
 * wrapped to a global batch of 536870912 and was priced at one sample per rank, and
 * --mbs 8 there to 0 (exit 4, "no finite iteration time"). */
static int batch_bounds(const tsl_eval_cfg_t *cfg, uint32_t mbs, uint32_t width, tsl_err_t *err)
{
    uint64_t mb = (uint64_t)mbs * width, local = (uint64_t)cfg->local_batch * width;
    if (mb > EVAL_MAX_BATCH)
        return tsl_err_set(err,
                           "batch: micro-batches of %llu samples (%u per rank x data width %u) "
                           "are above %u",
                           (unsigned long long)mb, mbs, width, EVAL_MAX_BATCH);
    if (!cfg->global_batch && local > EVAL_MAX_BATCH)
        return tsl_err_set(err,
                           "batch: a local batch of %u x data width %u is a global batch of %llu, "
                           "above %u",
                           cfg->local_batch, width, (unsigned long long)local, EVAL_MAX_BATCH);
    if (cfg->n_micro && mb * cfg->n_micro > EVAL_MAX_BATCH)
        return tsl_err_set(err,
                           "batch: %u micro-batches of %llu samples (%u per rank x data width "
                           "%u) are a global batch of %llu, above %u",
                           cfg->n_micro, (unsigned long long)mb, mbs, width,
                           (unsigned long long)(mb * cfg->n_micro), EVAL_MAX_BATCH);
    return 0;
}

static int batch(const tsl_eval_cfg_t *cfg, uint32_t width, uint32_t P, tsl_plan_t *out,
                 tsl_err_t *err)
{
    uint32_t mbs = cfg->mbs ? cfg->mbs : 1, B = cfg->global_batch;
    if (batch_bounds(cfg, mbs, width, err) != 0)
        return -1;
    out->micro_batch = mbs * width;
    if (B == 0 && cfg->local_batch)
        B = cfg->local_batch * width;
    if (cfg->n_micro) {
        out->n_micro = cfg->n_micro;
        if (B && B != out->micro_batch * cfg->n_micro)
            return tsl_err_set(err,
                               "batch: %u micro-batches of %u samples are not a global "
                               "batch of %u",
                               cfg->n_micro, out->micro_batch, B);
    } else if (B) {
        if (B % out->micro_batch != 0)
            return tsl_err_set(err,
                               "batch: global batch %u does not divide into micro-batches "
                               "of %u samples (%u per rank x data width %u)",
                               B, out->micro_batch, mbs, width);
        out->n_micro = B / out->micro_batch;
    } else {
        out->n_micro = P;
    }
    out->global_batch = out->micro_batch * out->n_micro;
    return 0;
}

/* Stage s's first layer when stage s starts at Transformer block b (0-based). */
static uint32_t block_layer(const tsl_model_t *m, uint32_t b)
{
    for (uint32_t i = 0, n = 0; i < m->n_layers; i++)
        if (tsl_model_is_block(m, i) && n++ == b)
            return i;
    return m->n_layers;
}

/* Blocks per stage: even, or Megatron's uneven first and/or last stage with the
 * rest even over the others; with --account-for-embedding/loss-in-pipeline-split
 * the embedding / loss counts as a layer of the first / last stage. */
static int even_split(const tsl_eval_cfg_t *cfg, uint32_t nb, uint32_t P, uint32_t *first_block,
                      tsl_err_t *err)
{
    uint32_t f = cfg->first_blocks, l = cfg->last_blocks;
    if (cfg->acct_embed || cfg->acct_loss) {
        uint32_t n = nb + cfg->acct_embed + cfg->acct_loss;
        if (n % P != 0 || n / P < 2)
            return tsl_err_set(err,
                               "split: %u Transformer layers + %u (account-for-embedding/loss-"
                               "in-pipeline-split) do not split evenly over pp %u",
                               nb, n - nb, P);
        f = n / P - cfg->acct_embed;
        l = n / P - cfg->acct_loss;
    }
    uint32_t mid = P - (f ? 1 : 0) - (l ? 1 : 0), fixed = f + l;
    if (fixed > nb || (mid == 0 && fixed != nb) || (mid > 0 && (nb - fixed) % mid != 0) ||
        (mid > 0 && nb == fixed))
        return tsl_err_set(err,
                           "split: %u Transformer layers do not split over pp %u (first "
                           "stage %u, last stage %u, the rest evenly)",
                           nb, P, f, l);
    uint32_t each = mid ? (nb - fixed) / mid : 0;
    first_block[0] = 0;
    for (uint32_t s = 1; s < P; s++)
        first_block[s] = first_block[s - 1] + (s == 1 && f ? f : each);
    return 0;
}

/* torchtitan's split (eval_cfg.h tt_split) over P ranks of v virtual stages:
 * the blocks each rank holds, laid out contiguously (the embedding stays on
 * rank 0 and the head on the last, as in torchtitan's looped placement). */
static int tt_split(const tsl_eval_cfg_t *cfg, uint32_t nb, uint32_t P, uint32_t *first_block,
                    tsl_err_t *err)
{
    uint32_t v = cfg->interleave > 1 ? cfg->interleave : 1, S = P * v;
    uint32_t in = cfg->tt_in_w, out = cfg->tt_out_w, eff = nb + in + out;
    uint32_t each = eff / S, extra = eff % S, n_rank[TSL_PLAN_MAX_STAGES] = {0}, cur = 0;
    if (S > eff || each == 0 || in > each || out > each)
        return tsl_err_set(err,
                           "torchtitan: %u layers + %u (embedding) + %u (head) do not split "
                           "into %u stages",
                           nb, in, out, S);
    for (uint32_t s = 0; s < S; s++) {
        uint32_t n = each + (s < extra ? 1 : 0) - (s == 0 ? in : 0) - (s == S - 1 ? out : 0);
        n = n < nb - cur ? n : nb - cur;
        n_rank[cfg->tt_zbv ? (s < P ? s : S - 1 - s) : s % P] += n;
        cur += n;
    }
    first_block[0] = 0;
    for (uint32_t r = 1; r < P; r++)
        first_block[r] = first_block[r - 1] + n_rank[r - 1];
    return 0;
}

/* Layers per rank from the counts: one count a stage, or torchtitan's model parts
 * (module_fqns_per_model_part, one a virtual stage) placed as its
 * _get_pp_rank_to_stage_indices_mapping does — ZBVZeroBubble and DualPipeV
 * (style "v"): exactly 2 parts per rank, part q on rank q < P and part q >= P
 * on rank 2P − 1 − q; a looped schedule: part q on rank q mod P — laid out
 * contiguously, as tt_split does. */
static int counts_per_rank(const tsl_eval_cfg_t *cfg, uint32_t P, uint32_t *per_rank,
                           tsl_err_t *err)
{
    uint32_t n = cfg->n_counts, v = n / P;
    if (cfg->tt_zbv && n != 2 * P)
        return tsl_err_set(err,
                           "torchtitan: module_fqns_per_model_part: %u parts for pp %u; "
                           "%s places exactly 2 per rank in a V (%u parts)",
                           n, P, cfg->tt_dualpipev ? "DualPipeV" : "ZBVZeroBubble", 2 * P);
    if (n % P != 0 || (v != 1 && !cfg->tt_multi))
        return tsl_err_set(err, "layers-per-stage: %u counts for pp %u", n, P);
    for (uint32_t q = 0; q < n; q++)
        per_rank[cfg->tt_zbv ? (q < P ? q : n - 1 - q) : q % P] += cfg->counts[q];
    return 0;
}

/* Megatron's --moe-layer-freq against the model's layers with experts (layer b
 * of nb; Megatron-LM builds a MoE layer where the pattern says 1, a dense one
 * of --ffn-hidden-size elsewhere). */
static int moe_layers_match(const tsl_eval_cfg_t *cfg, const tsl_model_t *m, uint32_t nb,
                            tsl_err_t *err)
{
    /* left out of a line that states a MoE model: Megatron-LM's default 1, experts in
     * every Transformer layer (a hybrid's pattern says which instead) */
    bool dflt = !cfg->moe_every && !cfg->moe_len;
    if (dflt && (!tsl_eval_shape_states_model(&cfg->shape) ||
                 !cfg->shape.v[TSL_EVAL_SHAPE_EXPERTS] || cfg->hybrid[0]))
        return 0;
    if (cfg->moe_len && cfg->moe_len != nb)
        return tsl_err_set(err,
                           "moe-layer-freq: the pattern has %u layers, the model %u "
                           "Transformer layers (Megatron-LM: its length must match)",
                           cfg->moe_len, nb);
    for (uint32_t i = 0, b = 0; i < m->n_layers; i++) {
        if (!tsl_model_is_block(m, i))
            continue;
        bool want = cfg->moe_len ? cfg->moe_pattern[b] != 0 : dflt || b % cfg->moe_every == 0;
        bool has = m->layers[i].experts > 0;
        if (want != has)
            return tsl_err_set(err,
                               "moe-layer-freq%s: Transformer layer %u is %s in the "
                               "configuration, %s in the model %s",
                               dflt ? " 1 (Megatron's default, not in the line)" : "", b,
                               want ? "MoE" : "dense", has ? "MoE" : "dense", m->name);
        b++;
    }
    return 0;
}

/* A hybrid's stages from its '|' segments (mg_hybrid_split): rank r holds segments
 * r, P + r, 2P + r, ... (select_pipeline_segment's j·P + r), laid out contiguously
 * as Tessel prices a stage; fb[s] the first block of stage s. */
static void hybrid_stage_blocks(const tsl_eval_cfg_t *cfg, uint32_t P, uint32_t *fb)
{
    uint32_t per_rank[TSL_PLAN_MAX_STAGES] = {0};
    for (uint32_t k = 0; k < cfg->hybrid_segs; k++)
        per_rank[k % P] += cfg->hybrid_seg[k];
    fb[0] = 0;
    for (uint32_t s = 1; s < P; s++)
        fb[s] = fb[s - 1] + per_rank[s - 1];
}

/* The '|' segments against the stages Tessel prices (first[0 .. P], v chunks each):
 * each segment the blocks of its rank's chunk as Tessel cuts the stage
 * (tsl_target_megatron_hybrid_segments), and the blocks Megatron-LM builds there
 * those priced. */
static int hybrid_segments_match(const tsl_eval_cfg_t *cfg, const tsl_model_t *m, uint32_t P,
                                 const uint32_t *first, uint32_t v, tsl_err_t *err)
{
    uint32_t count[TSL_PLAN_MAX_STAGES], seg[TSL_PLAN_MAX_STAGES * TSL_PIPELINE_MAX_CHUNKS];
    if (!cfg->hybrid_segs || P < 2)
        return 0;
    for (uint32_t s = 0; s < P; s++)
        count[s] = first[s + 1] - first[s];
    tsl_err_t unlike = {0}; /* the lengths first: a segment read wrong is named as such */
    int rc = tsl_target_megatron_hybrid_segments(m, P, v, count, seg, &unlike);
    if (rc != 0 && (v > TSL_PIPELINE_MAX_CHUNKS || cfg->hybrid_segs > P * (v > 1 ? v : 1))) {
        if (err)
            *err = unlike;
        return -1;
    }
    for (uint32_t k = 0; k < cfg->hybrid_segs; k++)
        if (seg[k] != cfg->hybrid_seg[k])
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "megatron: --hybrid-layer-pattern: segment %u (stage %u's model "
                                "chunk %u) has %u layers; Tessel prices that chunk with %u "
                                "(its stage's layers cut into %u chunks as Tessel prices them; "
                                "docs/exports.md \"Hybrid models\")",
                                k, k % P, k / P, cfg->hybrid_seg[k], seg[k], v > 1 ? v : 1);
    if (rc != 0 && err)
        *err = unlike;
    return rc;
}

static int split(const tsl_eval_cfg_t *cfg, const tsl_model_t *m, uint32_t P, uint32_t *first,
                 tsl_err_t *err)
{
    uint32_t L = m->n_layers, nb = 0, fb[TSL_PLAN_MAX_STAGES], mtp = tsl_mtp_layers(m);
    for (uint32_t i = 0; i < L; i++)
        nb += tsl_model_is_block(m, i);
    if (cfg->n_blocks && cfg->n_blocks != nb)
        return tsl_err_set(err,
                           "num-layers: the configuration has %u Transformer layers, the "
                           "model %u",
                           cfg->n_blocks, nb);
    if (moe_layers_match(cfg, m, nb, err) != 0 || hybrid_match(cfg, m, err) != 0)
        return -1;
    first[P] = L;
    if (cfg->n_counts) {
        uint32_t per_rank[TSL_PLAN_MAX_STAGES] = {0};
        if (counts_per_rank(cfg, P, per_rank, err) != 0)
            return -1;
        first[0] = 0;
        for (uint32_t s = 0; s < P; s++)
            first[s + 1] = first[s] + per_rank[s];
        if (first[P] + mtp != L)
            return tsl_err_set(err,
                               "layers-per-stage: the counts add up to %u, the model has %u "
                               "layers (embedding and head included%s)",
                               first[P], L - mtp, mtp ? "; its MTP layers follow the head" : "");
        first[P] = L; /* the MTP depths on the head's stage, as Megatron-LM places them */
        return 0;
    }
    if (cfg->hybrid_segs && P > 1) {
        hybrid_stage_blocks(cfg, P, fb);
    } else if (cfg->n_split_points) {
        if (cfg->n_split_points != P - 1)
            return tsl_err_set(err, "pipeline_parallel_split_points: %u points for %u stages",
                               cfg->n_split_points, P);
        memcpy(fb + 1, cfg->split_points, (P - 1) * sizeof(fb[0]));
    } else if (cfg->tt_split && P > 1) {
        if (tt_split(cfg, nb, P, fb, err) != 0)
            return -1;
    } else if (cfg->even_blocks && P > 1) {
        if (even_split(cfg, nb, P, fb, err) != 0)
            return -1;
    } else {
        tsl_partition_by_flops(m, P, first);
        return 0;
    }
    first[0] = 0;
    for (uint32_t s = 1; s < P; s++) {
        first[s] = block_layer(m, fb[s]);
        if (fb[s] >= nb || first[s] <= first[s - 1])
            return tsl_err_set(err,
                               "split: stage %u would start at Transformer layer %u (the "
                               "model has %u)",
                               s, fb[s], nb);
    }
    return 0;
}

/* The model chunks per stage (cfg->interleave, or Megatron's
 * --num-layers-per-virtual-pipeline-stage over stage 0's layers, the embedding
 * counted as one with --account-for-embedding-in-pipeline-split) into *v; with
 * the embedding or the loss counted, every rank's R = (L + e + l)/P must split into
 * them (TransformerConfig.__post_init__ at d98e8a6 raises otherwise). */
static int megatron_chunks(const tsl_eval_cfg_t *cfg, const tsl_model_t *m, uint32_t P,
                           const uint32_t *first, uint32_t *v, tsl_err_t *err)
{
    uint32_t n0 = cfg->acct_embed; /* Megatron counts it in the stage's layers */
    for (uint32_t i = first[0]; i < first[1]; i++)
        n0 += tsl_model_is_block(m, i);
    *v = cfg->interleave;
    if (cfg->vpp_blocks) {
        if (n0 % cfg->vpp_blocks != 0)
            return tsl_err_set(err,
                               "num-layers-per-virtual-pipeline-stage: %u does not divide "
                               "stage 0's %u Transformer layers",
                               cfg->vpp_blocks, n0);
        *v = n0 / cfg->vpp_blocks;
    }
    if (*v > 1 && P > 1 && (cfg->acct_embed || cfg->acct_loss) && n0 % *v != 0)
        return tsl_err_set(err,
                           "num-virtual-stages-per-pipeline-rank: %u does not divide the %u "
                           "layers of a rank (with --account-for-%s-in-pipeline-split)",
                           *v, n0, cfg->acct_embed ? "embedding" : "loss");
    return 0;
}

/* Megatron's block recompute with v chunks per stage: --recompute-num-layers N of
 * every chunk (target.h tsl_target_megatron_stage_ckpt), the stage's first that many. */
static uint32_t stage_ckpt_n(const tsl_eval_cfg_t *cfg, const tsl_model_t *m, const uint32_t *first,
                             uint32_t P, uint32_t st, uint32_t v)
{
    if (!cfg->ckpt_per_stage || v <= 1)
        return cfg->ckpt_per_stage;
    return tsl_target_megatron_stage_ckpt(m, first[st + 1] - first[st], st, P, v,
                                          cfg->ckpt_per_stage);
}

/* Strategies per layer: ckpt on Transformer layers (all, a stage's first k — of
 * each of its v chunks under interleaving —, or every n-th of a stage). */
static void fill_layers(const tsl_eval_cfg_t *cfg, const tsl_model_t *m, const uint32_t *first,
                        const tsl_strategy_t *s, uint32_t v, tsl_plan_t *out)
{
    for (uint32_t st = 0; st < out->pp; st++) {
        uint32_t k = 0, ckpt_n = stage_ckpt_n(cfg, m, first, out->pp, st, v);
        for (uint32_t i = first[st]; i < first[st + 1]; i++) {
            tsl_strategy_t x = *s;
            const tsl_layer_t *l = &m->layers[i];
            if (tsl_model_is_block(m, i)) {
                k++;
                bool on = cfg->ckpt_per_stage ? k <= ckpt_n
                          : cfg->ckpt_every   ? k % cfg->ckpt_every == 0
                                              : true;
                x.ckpt = on && cfg->ckpt == TSL_EVAL_CKPT_FULL;
                x.selective = on && cfg->ckpt == TSL_EVAL_CKPT_SELECTIVE;
            } else if (l->mtp_depth && l->kind != TSL_LAYER_HEAD) {
                /* an MTP depth is recomputed whole under uniform full recompute, not
                 * under the block method (Megatron-LM multi_token_prediction.py
                 * _checkpointed_forward); its inner layer selectively as a block */
                x.ckpt = cfg->ckpt == TSL_EVAL_CKPT_FULL && !cfg->ckpt_per_stage;
                x.selective = cfg->ckpt == TSL_EVAL_CKPT_SELECTIVE;
            }
            out->layer[i] = x;
        }
        out->stages[st].first_layer = first[st];
        out->stages[st].n_layers = first[st + 1] - first[st];
    }
}

/* Megatron's --microbatch-group-size-per-virtual-pipeline-stage N on the plan: its
 * interleaved schedule's group size (schedules.py at d98e8a6 raises outside [PP, M]
 * and for a last group of fewer than PP micro-batches); without a virtual pipeline
 * Megatron does not read it. N = PP is the default, kept as 0. */
static int vp_group(const tsl_eval_cfg_t *cfg, tsl_plan_t *out, tsl_err_t *err)
{
    if (!cfg->vp_group || out->interleave <= 1)
        return 0;
    if (tsl_pipeline_vp_check(out->pp, out->n_micro, cfg->vp_group) != 0)
        return tsl_err_set(err,
                           "microbatch-group-size-per-virtual-pipeline-stage: %u with "
                           "pipeline-model-parallel-size %u and %u micro-batches: Megatron-LM "
                           "raises (schedules.py: N in [PP, M], M mod N 0 or at least PP)",
                           cfg->vp_group, out->pp, out->n_micro);
    out->vp_group = cfg->vp_group == out->pp ? 0 : cfg->vp_group;
    return 0;
}

/* torchtitan's virtual stages per rank (pipeline_parallel.py
 * _get_pipeline_metadata): 1 for 1F1B, 2 for a looped schedule, or from
 * pipeline_parallel_layers_per_stage; into c->interleave. */
static int tt_stages(tsl_eval_cfg_t *c, const tsl_model_t *m, uint32_t P, tsl_err_t *err)
{
    uint32_t nb = 0, v = c->tt_multi ? 2 : 1;
    for (uint32_t i = 0; i < m->n_layers; i++)
        nb += tsl_model_is_block(m, i);
    if (c->tt_layers_per_stage) {
        uint32_t lps = c->tt_layers_per_stage, eff = nb + c->tt_in_w + c->tt_out_w;
        uint32_t S = (eff + lps - 1) / lps;
        if (S % P != 0)
            return tsl_err_set(err,
                               "torchtitan: pipeline_parallel_layers_per_stage %u: %u virtual "
                               "stages do not divide over pipeline_parallel_degree %u",
                               lps, S, P);
        v = S / P;
        if (c->tt_zbv ? v != 2 : c->tt_multi ? v < 2 : v != 1)
            return tsl_err_set(err,
                               "torchtitan: pipeline_parallel_layers_per_stage %u gives %u "
                               "stages per rank; the schedule needs %s",
                               lps, v,
                               c->tt_zbv     ? "exactly 2"
                               : c->tt_multi ? "at least 2"
                                             : "exactly 1");
    }
    c->interleave = v > 1 ? v : 0;
    return 0;
}

int tsl_eval_cfg_plan(const tsl_eval_cfg_t *cfg_in, const tsl_model_t *m, uint32_t n_devices,
                      tsl_plan_t *out, tsl_err_t *err)
{
    tsl_eval_cfg_t c = *cfg_in, *cfg = &c;
    uint32_t P = cfg->pp ? cfg->pp : 1, deg[3], first[TSL_PLAN_MAX_STAGES + 1];
    /* a data degree given as the stacks count it leaves the CP ranks out
     * (Megatron's DP, torchtitan's dp_shard): the innermost data level (SDP,
     * else DP; strategy_of's order) holds them too. A degree left as the rest
     * of the stage's devices has them already. */
    if (cfg->cp_shard && cfg->knobs.cp > 1 && !cfg->sdp_rest && !cfg->cp_counted &&
        cfg->sdp <= 1) { /* the CP ranks alone are the shard group (torchtitan's dp_shard_cp) */
        cfg->sdp = cfg->knobs.cp;
        cfg->cp_counted = true;
    }
    if (cfg->knobs.cp > 1 && !cfg->sdp_rest && !cfg->cp_counted) {
        if (cfg->sdp > 1)
            cfg->sdp *= cfg->knobs.cp;
        else if (cfg->dp)
            cfg->dp *= cfg->knobs.cp;
    }
    tsl_plan_init(out);
    /* the bound it breaks named: --pp 64 on 64 devices read "64 does not divide the
     * 64 devices (or exceeds the 26 layers)" */
    if (P > m->n_layers)
        return tsl_err_set(err, "pp: %u stages are more than the model's %u layers", P,
                           m->n_layers);
    if (P > TSL_PLAN_MAX_STAGES)
        return tsl_err_set(err, "pp: %u stages are above %u", P, TSL_PLAN_MAX_STAGES);
    if (n_devices % P != 0)
        return tsl_err_set(err, "pp: %u does not divide the %u devices", P, n_devices);
    if (tsl_eval_shape_check(&cfg->shape, m, cfg->tp ? cfg->tp : 1, err) != 0 ||
        tsl_eval_cfg_tt_flavor_check(cfg, m, err) != 0 ||
        degrees(cfg, n_devices / P, deg, err) != 0)
        return -1;
    /* Megatron-LM MultiTokenPredictionLayer._checkpointed_forward (read at 00611e6e):
     * "recompute_num_layers must be 1 for MTP recompute" under uniform */
    if (cfg->ckpt_uniform_chunk > 1 && tsl_mtp_depths(m) > 0)
        return tsl_err_set(err,
                           "megatron: --recompute-num-layers %u with --recompute-method uniform "
                           "and %u MTP depths: Megatron-LM asserts 1 for MTP recompute",
                           cfg->ckpt_uniform_chunk, tsl_mtp_depths(m));
    if (cfg->tt_split && P > 1 && cfg->n_split_points == 0 && tt_stages(cfg, m, P, err) != 0)
        return -1;
    tsl_strategy_t s = strategy_of(cfg, deg);
    out->pp = P;
    out->n_layers = m->n_layers;
    out->n_devices = n_devices;
    /* the CP ranks are the innermost of the data ranks (cost.h): the stacks'
     * data-parallel size, which the micro-batch is per, leaves them out */
    uint32_t cp = cfg->knobs.cp > 1 ? cfg->knobs.cp : 1, stride;
    if (!tsl_cost_cp_group(&s, cp, &stride))
        return tsl_err_set(err,
                           "context parallelism %u does not divide the %u data-parallel ranks "
                           "of a stage (devices / (pp x tp))",
                           cp, deg[1] * deg[2]);
    if (batch(cfg, deg[1] * deg[2] / cp, P, out, err) != 0 || split(cfg, m, P, first, err) != 0)
        return -1;
    uint32_t v = 0;
    if (megatron_chunks(cfg, m, P, first, &v, err) != 0 ||
        hybrid_segments_match(cfg, m, P, first, v, err) != 0)
        return -1;
    fill_layers(cfg, m, first, &s, v, out);
    out->interleave = v;
    if (cfg->n_counts > P && cfg->tt_multi) /* a looped schedule's model parts */
        out->interleave = cfg->n_counts / P;
    if (cfg->tt_zbv) { /* a V's 2 parts per rank: its own schedule, not interleaving */
        out->interleave = 0;
        out->schedule = cfg->tt_dualpipev ? TSL_PIPESIM_SCHED_DUALPIPEV : TSL_PIPESIM_SCHED_ZBV;
    }
    if (cfg->etp_follows_tp && tsl_model_moe_layers(m)) /* Megatron's default expert TP */
        cfg->knobs.etp = deg[0] > 1 ? deg[0] : 0;
    if (!tsl_model_moe_layers(m)) /* no permutation to price (mg_knobs) */
        cfg->knobs.moe_unfused_permute = false;
    if (cfg->schedule) { /* eval --schedule: a zero-bubble schedule or DualPipeV */
        if (cfg->interleave > 1)
            return tsl_err_set(err,
                               "schedule %s: no --interleave (ZBV and DualPipeV run 2 chunks a "
                               "stage in a V, ZB-H1 one)",
                               tsl_pipesim_sched_name(cfg->schedule, 1));
        out->schedule = cfg->schedule;
        out->interleave = 0;
    }
    tsl_plan_set_knobs(out, &cfg->knobs);
    if (tsl_eval_cgraph_plan(cfg, m, out, err) != 0) /* a line's per-layer CUDA graphs */
        return -1;
    if (P <= 1) { /* FSDP2 reshards every micro-batch without PP (cost.h sdp_nosync) */
        out->sdp_nosync = false;
        out->torch_pipelining = false; /* and no stages run torch's pipelining */
    } else if (out->sdp_nosync)        /* "never" under PP is the "default" (tt_reshard) */
        out->sdp_keep_weights = false;
    if (!tsl_plan_has_sdp(out)) /* "never" without an FSDP level keeps nothing */
        out->sdp_keep_weights = false;
    /* torchtitan's sparse mesh must hold the experts where Tessel prices them: a
     * configuration that lays them out otherwise is one Tessel cannot price */
    if (cfg->torchtitan && tsl_target_torchtitan_experts(m, &s, cp, cfg->knobs.ep, err) != 0) {
        if (err)
            err->code = TSL_E_INVALID;
        return -1;
    }
    return vp_group(cfg, out, err);
}

/* ---- Megatron-LM arguments ------------------------------------------------------ */

/* Megatron-LM's flags as of NVIDIA/Megatron-LM d98e8a6 (megatron/training/arguments.py,
 * validate_args, and TransformerConfig.__post_init__). Every flag is read, refused
 * by name, accepted with a note, or in the list of flags that do not change the
 * plan; anything else is an error, so that a line never silently means another
 * plan. */

#define MG_WORD 512

/* The next shell word of *p into buf: whitespace separates words; '...' and
 * "..." quote (dropped; \" and \\ escape inside "..."); a backslash-newline is a
 * space (a launch script's continued line); '#' starting a word comments to the
 * end of the line. 1 a word, 0 the end, -1 an unterminated quote. */
static int next_word(const char **p, char *buf, size_t cap)
{
    const char *s = *p;
    size_t n = 0;
    for (;;) {
        while (isspace((unsigned char)*s) || (s[0] == '\\' && s[1] == '\n'))
            s += *s == '\\' ? 2 : 1;
        if (*s != '#')
            break;
        while (*s && *s != '\n')
            s++;
    }
    if (!*s)
        return 0;
    while (*s && !isspace((unsigned char)*s)) {
        char q = *s;
        if (q == '\'' || q == '"') {
            for (s++; *s && *s != q; s++) {
                if (q == '"' && s[0] == '\\' && (s[1] == '"' || s[1] == '\\'))
                    s++;
                if (n + 1 < cap)
                    buf[n++] = *s;
            }
            if (*s != q)
                return -1;
            s++;
            continue;
        }
        if (s[0] == '\\' && s[1] == '\n')
            break;
        if (n + 1 < cap)
            buf[n++] = *s;
        s++;
    }
    buf[n] = '\0';
    *p = s;
    return 1;
}

typedef struct mg_key {
    const char *name;
    size_t offset; /* a uint32_t of tsl_eval_cfg_t */
} mg_key_t;

static const mg_key_t mg_u32[] = {
    {"tensor-model-parallel-size", offsetof(tsl_eval_cfg_t, tp)},
    {"pipeline-model-parallel-size", offsetof(tsl_eval_cfg_t, pp)},
    {"micro-batch-size", offsetof(tsl_eval_cfg_t, mbs)},
    {"global-batch-size", offsetof(tsl_eval_cfg_t, global_batch)},
    {"recompute-num-layers", offsetof(tsl_eval_cfg_t, ckpt_per_stage)},
    {"decoder-first-pipeline-num-layers", offsetof(tsl_eval_cfg_t, first_blocks)},
    {"decoder-last-pipeline-num-layers", offsetof(tsl_eval_cfg_t, last_blocks)},
    {"num-layers-per-virtual-pipeline-stage", offsetof(tsl_eval_cfg_t, vpp_blocks)},
    {"num-virtual-stages-per-pipeline-rank", offsetof(tsl_eval_cfg_t, interleave)},
    {"microbatch-group-size-per-virtual-pipeline-stage", offsetof(tsl_eval_cfg_t, vp_group)},
    {"seq-length", offsetof(tsl_eval_cfg_t, seq_len)},
    {"num-layers", offsetof(tsl_eval_cfg_t, n_blocks)},
    {"mtp-num-layers", offsetof(tsl_eval_cfg_t, mtp_layers)},
};

typedef struct mg_why {
    const char *name, *why;
} mg_why_t;

#define MG_FG_OFFLOAD                                                                              \
    "belongs to --fine-grained-activation-offloading, which Tessel does not model "                \
    "(activations offloaded by whole layers only: --cpu-offloading-num-layers)"
#define MG_ATTN_VARIANT                                                                            \
    "(linear or sparse attention layers beside softmax attention: Gated DeltaNet, DSA) is "        \
    "not modelled by Tessel: the model's layers come from --model"

/* Refused: Megatron refuses them itself (its message), or they change the plan in
 * a way Tessel does not model. */
static const mg_why_t mg_refused[] = {
    {"checkpoint-activations", "is no longer valid, use --recompute-activations, or, for more "
                               "control, --recompute-granularity and --recompute-method "
                               "(Megatron-LM validate_args exits)"},
    {"virtual-pipeline-model-parallel-size",
     "is not a Megatron-LM argument any more (argparse: unrecognized arguments); use "
     "--num-virtual-stages-per-pipeline-rank"},
    {"batch-size", "is no longer valid, use --micro-batch-size instead (Megatron-LM)"},
    {"model-parallel-size", "is no longer valid, use --tensor-model-parallel-size instead "
                            "(Megatron-LM)"},
    {"warmup", "is no longer valid, use --lr-warmup-fraction instead (Megatron-LM)"},
    {"pipeline-model-parallel-layout", "is not read by Tessel; give the split with "
                                       "--decoder-first/last-pipeline-num-layers"},
    {"distribute-saved-activations", "is not modelled by Tessel"},
    {"cpu-offloading-weights", "(weights offloaded to the host) is not modelled by Tessel: "
                               "activations only (--cpu-offloading-num-layers)"},
    {"hybrid-context-parallel", "is not modelled by Tessel (one CP group size per model)"},
    {"hierarchical-context-parallel-sizes", "is not modelled by Tessel (a2a+p2p: one CP "
                                            "exchange per model)"},
    /* Megatron-LM 7418b1b8fb (fVPP) removed both; older trees drew the layers from
     * them unless a pattern was given, which then had to have their counts */
    {"hybrid-attention-ratio", "is not a Megatron-LM argument any more (removed with "
                               "fVPP, 7418b1b8fb); give the layers with --hybrid-layer-pattern"},
    {"hybrid-mlp-ratio", "is not a Megatron-LM argument any more (removed with fVPP, "
                         "7418b1b8fb); give the layers with --hybrid-layer-pattern"},
    /* FP8 weight gradients are TransformerConfig's default (fp8_wgrad True): the parser
     * has only the switch that turns them off */
    {"fp8-wgrad", "is not a Megatron-LM argument (FP8 weight gradients are its default; "
                  "--no-fp8-wgrad turns them off)"},
    {"optimizer-cpu-offload", "(optimizer states and step on the host) is not modelled by "
                              "Tessel"},
    {"fine-grained-activation-offloading", "is not modelled by Tessel: activations offloaded "
                                           "by whole layers only (--cpu-offloading-num-layers)"},
    /* fine-grained offloading's own settings (TransformerConfig), read with it alone */
    {"offload-modules", MG_FG_OFFLOAD},
    {"activation-offload-fraction", MG_FG_OFFLOAD},
    {"min-offloaded-tensor-size", MG_FG_OFFLOAD},
    {"fine-grained-offloading-max-inflight-offloads", MG_FG_OFFLOAD},
    {"delay-offload-until-cuda-graph", MG_FG_OFFLOAD},
    {"delta-offload-bytes-across-pp-ranks", MG_FG_OFFLOAD},
    /* lines that do not train every weight of a softmax-attention Transformer, or do
     * not train at all: no honest figure is priced as if they did */
    {"perform-rl-step", "(Megatron-RL's GRPO step: rollouts by an inference engine beside "
                        "training) is not modelled by Tessel, which prices pretraining"},
    {"skip-train", "runs no training iteration (evaluation only): nothing for Tessel to price"},
    {"fake-process-group", "skips every collective (a memory-profiling run): Tessel prices the "
                           "communication a real run does"},
    {"freeze-all-layers", "(no weight gradients, no optimizer step) is not modelled by Tessel, "
                          "which prices training every weight"},
    {"experimental-attention-variant", MG_ATTN_VARIANT},
    {"linear-attention-freq", MG_ATTN_VARIANT},
    {"attention-output-gate", "(a gate projection on the attention's output, Qwen3-Next's) is "
                              "not modelled by Tessel: the model's layers come from --model"},
    {"torch-fsdp2-no-reshard-after-forward", "(FSDP2 keeping the gathered weights to the "
                                             "backward) is not priced for a Megatron-LM line; "
                                             "plan --sdp-keep-weights prices it under torchtitan"},
    {"mtp-use-repeated-layer", "(one MTP layer's weights for every depth) is not modelled by "
                               "Tessel: each of --mtp-num-layers is priced with weights of its "
                               "own"},
    {"enable-mhc-connections", "(several residual streams per layer) is not modelled by "
                               "Tessel"},
    {"moe-paged-stash",
     "(the MoE layers' activations in a paged stash) is not modelled by "
     "Tessel"}, /* the settings of those layers (TransformerConfig), read with them alone */
    {"linear-conv-kernel-dim", MG_ATTN_VARIANT},
    {"linear-key-head-dim", MG_ATTN_VARIANT},
    {"linear-num-key-heads", MG_ATTN_VARIANT},
    {"linear-num-value-heads", MG_ATTN_VARIANT},
    {"linear-value-head-dim", MG_ATTN_VARIANT},
    {"dsa-indexer-head-dim", MG_ATTN_VARIANT},
    {"dsa-indexer-k-norm-epsilon", MG_ATTN_VARIANT},
    {"dsa-indexer-k-norm-fp32", MG_ATTN_VARIANT},
    {"dsa-indexer-loss-coeff", MG_ATTN_VARIANT},
    {"dsa-indexer-n-heads", MG_ATTN_VARIANT},
    {"dsa-indexer-rope-interleaved", MG_ATTN_VARIANT},
    {"dsa-indexer-skip-topk-offset", MG_ATTN_VARIANT},
    {"dsa-indexer-topk", MG_ATTN_VARIANT},
    {"dsa-indexer-topk-freq", MG_ATTN_VARIANT},
    {"dsa-indexer-use-sparse-loss", MG_ATTN_VARIANT},
    {"dsa-kernel-backend", MG_ATTN_VARIANT},
    {"disable-dsa-indexer-rotate-activation", MG_ATTN_VARIANT},
    {"disable-dsa-indexer-scoring-relu", MG_ATTN_VARIANT},
    {"no-dsa-indexer-rotate-activation", MG_ATTN_VARIANT},
    {"no-dsa-indexer-scoring-relu", MG_ATTN_VARIANT},
    {"mhc-init-gating-factor", "belongs to --enable-mhc-connections, which Tessel does not model"},
    {"mhc-num-residual-streams",
     "belongs to --enable-mhc-connections, which Tessel does not model"},
    {"mhc-recompute-layer-num", "belongs to --enable-mhc-connections, which Tessel does not model"},
    {"mhc-sinkhorn-iterations", "belongs to --enable-mhc-connections, which Tessel does not model"},
    {"moe-paged-stash-buffer-size-factor-cpu",
     "belongs to --moe-paged-stash, which Tessel does not model"},
    {"moe-paged-stash-buffer-size-factor-cuda",
     "belongs to --moe-paged-stash, which Tessel does not model"},
    {"moe-paged-stash-page-size", "belongs to --moe-paged-stash, which Tessel does not model"},
};

/* Accepted with a note that Tessel does not model them: they change what runs, but
 * no knob of Tessel's prices them, so the line is priced as if they were absent
 * (what the note says it is priced as). Their values are not read. */
static const mg_why_t mg_unmodelled[] = {
    /* the optimizer step's CUDA graph (the layers' and the iteration's: eval_cgraph.h) */
    {"optimizer-cuda-graph", "a CUDA graph of the optimizer step; priced launched from the host"},
    {"moe-router-dtype", "the router's softmax and routing weights in fp32/fp64; priced in "
                         "the model's dtype, fp32 only under a flex or FP8 dispatch"},
    {"moe-shared-expert-overlap", "the shared experts under the dispatcher's "
                                  "communication; priced one after the other"},
    {"no-fp8-wgrad", "weight-gradient GEMMs in bf16; priced in FP8"},
    {"disable-fp8-wgrad", "weight-gradient GEMMs in bf16; priced in FP8"},
    {"moe-router-fusion", "the router's fused top-k and score kernels; not priced apart"},
    {"moe-apply-probs-on-input", "the routing weights applied before the experts; priced "
                                 "after them"},
    {"moe-permute-fusion-into-hybridep", "the permutation inside HybridEP's kernels; priced "
                                         "as Transformer Engine's fused permutation"},
    {"deterministic-mode", "deterministic NCCL and attention algorithms; priced as the "
                           "default ones"},
    /* Megatron-LM's own fused elementwise kernels (TransformerConfig
     * bias_activation_fusion, bias_dropout_fusion, apply_rope_fusion), which the
     * layers are priced with; without them eager PyTorch's several kernels run */
    {"no-bias-gelu-fusion", "eager bias and GELU kernels; priced as Megatron-LM's fused one"},
    {"no-bias-swiglu-fusion", "eager bias and SwiGLU kernels; priced as Megatron-LM's fused "
                              "one"},
    {"no-bias-dropout-fusion", "eager bias, dropout and residual kernels; priced as "
                               "Megatron-LM's fused one"},
    {"no-rope-fusion", "eager RoPE kernels; priced as the fused one"},
    {"use-te-activation-func", "Transformer Engine's activation kernels; priced as "
                               "Megatron-LM's fused one"},
    {"fused-residual-rmsnorm", "the residual add fused into RMSNorm; priced apart"},
    {"disable-jit-fuser", "eager elementwise kernels; priced as Megatron-LM's fused ones"},
    {"fp32-residual-connection", "an fp32 residual stream; priced in the model's dtype"},
    /* the gradient reduce is priced as one whole-gradient transfer (cost.c
     * tsl_cost_strategy_bw_memo), not bucket by bucket */
    {"ddp-bucket-size", "the gradient buckets' size; the reduce priced whole"},
    {"ddp-num-buckets", "the gradient buckets' count; the reduce priced whole"},
    {"no-align-grad-reduce", "each stage's gradient reduce launched on its own; priced whole"},
    {"disable-align-grad-reduce", "each stage's gradient reduce launched on its own; priced "
                                  "whole"},
    {"ddp-reduce-scatter-with-fp32-accumulation", "an fp32-accumulating reduce-scatter; priced "
                                                  "as NCCL's"},
    {"overlap-param-gather-with-optimizer-step", "the first weight gather under the optimizer "
                                                 "step; priced after it"},
    {"defer-embedding-wgrad-compute", "the embedding's weight gradient deferred; priced in "
                                      "place"},
    {"keep-fp8-transpose-cache", "FP8 transposes kept between micro-batches (memory); "
                                 "priced without"},
    /* --tp-comm-overlap's own switches (TransformerEngine's userbuffers): the overlap
     * is priced as its default configuration (knobs.tp_comm_overlap) */
    {"tp-comm-overlap-cfg", "a userbuffers configuration; priced as --tp-comm-overlap's "
                            "defaults"},
    {"tp-comm-overlap-rs-dgrad", "priced as --tp-comm-overlap's defaults"},
    {"no-tp-comm-overlap-ag", "priced as --tp-comm-overlap's defaults"},
    {"no-tp-comm-overlap-rs", "priced as --tp-comm-overlap's defaults"},
    {"no-tp-comm-split-ag", "priced as --tp-comm-overlap's defaults"},
    {"no-tp-comm-split-rs", "priced as --tp-comm-overlap's defaults"},
    {"no-tp-comm-bulk-dgrad", "priced as --tp-comm-overlap's defaults"},
    {"no-tp-comm-bulk-wgrad", "priced as --tp-comm-overlap's defaults"},
    {"disable-tp-comm-overlap-ag", "priced as --tp-comm-overlap's defaults"},
    {"disable-tp-comm-overlap-rs", "priced as --tp-comm-overlap's defaults"},
    {"disable-tp-comm-split-ag", "priced as --tp-comm-overlap's defaults"},
    {"disable-tp-comm-split-rs", "priced as --tp-comm-overlap's defaults"},
    {"disable-tp-comm-bulk-dgrad", "priced as --tp-comm-overlap's defaults"},
    {"disable-tp-comm-bulk-wgrad", "priced as --tp-comm-overlap's defaults"},
    /* the data-parallel collectives' buffers, groups and registration
     * (DistributedDataParallelConfig, Megatron-FSDP): priced whole, as NCCL runs
     * them on the plan's SMs by default */
    {"ddp-pad-buckets-for-high-nccl-busbw", "the gradient buckets padded to 2^16 elements; "
                                            "the reduce priced whole"},
    {"ddp-param-name-patterns-for-fp32-local-accumulation", "local fp32 accumulation of the "
                                                            "matched gradients; priced in "
                                                            "the buffer's dtype"},
    {"create-all-gather-group", "a group of its own for the weight all-gathers; priced on "
                                "the data-parallel one"},
    {"no-align-param-gather", "each stage's weight gathers launched on their own; priced "
                              "whole"},
    {"no-gradient-reduce-div-fusion", "the gradients' division by the data-parallel size as "
                                      "a kernel of its own; priced inside the reduce"},
    {"use-nccl-ub", "NCCL user-buffer registration (fewer SMs for the collectives); priced "
                    "as unregistered NCCL"},
    {"disable-symmetric-registration", "NCCL user-buffer registration; priced as "
                                       "unregistered NCCL"},
    {"fsdp-manual-registration", "NCCL user-buffer registration; priced as unregistered NCCL"},
    {"fsdp-double-buffer", "Megatron-FSDP's double-buffered communication memory; priced "
                           "without"},
    {"fsdp-db-use-persist-buf-on-alloc-fail", "Megatron-FSDP's double-buffered communication "
                                              "memory; priced without"},
    {"megatron-fsdp-max-pool-double-buffer", "Megatron-FSDP's double-buffered communication "
                                             "memory; priced without"},
    {"megatron-fsdp-enable-fine-grained-param-gather", "Megatron-FSDP's weight gathers per "
                                                       "module; priced per layer"},
    {"megatron-fsdp-version", "Megatron-FSDP's implementation; priced as version 1"},
    {"suggested-communication-unit-size", "Megatron-FSDP's communication unit; priced per "
                                          "layer"},
    {"symmetric-ar-type", "the TP all-reduces over symmetric memory (Transformer Engine's "
                          "row-parallel linears); priced as NCCL's"},
    {"use-sharp", "SHARP in-network reductions for the data-parallel group; priced as NCCL's "
                  "ring"},
    {"sharp-enabled-group", "SHARP in-network reductions; priced as NCCL's ring"},
    {"nccl-communicator-config-path", "per-group NCCL settings; priced as NCCL's defaults"},
    {"high-priority-stream-groups", "high-priority communication streams; priced as default "
                                    "ones"},
    {"high-priority-a2a-comm-stream", "a high-priority stream for the EP all-to-alls; priced "
                                      "as a default one"},
    /* the pipeline's and the ranks' layout */
    {"use-tp-pp-dp-mapping", "ranks ordered tensor-pipeline-data; priced in Megatron-LM's "
                             "default order, tensor-data-pipeline"},
    {"use-ring-exchange-p2p", "the stage sends by ring exchange; priced as NCCL send/recv"},
    {"pipeline-model-parallel-comm-backend", "the stage sends' backend; priced as NCCL's"},
    {"overlap-p2p-communication-warmup-flush", "the stage sends of 1F1B's warm-up and flush "
                                               "under compute; priced as Megatron-LM's "
                                               "default"},
    {"wgrad-deferral-limit", "a bound on the deferred weight-gradient GEMMs; priced as "
                             "--delay-wgrad-compute's default"},
    {"ep-overlap-early-attn-memory-release", "the attention's activations released early "
                                             "under the EP overlap; priced without"},
    /* the MoE dispatch's kernels and the grouped GEMMs' weights */
    {"moe-deepep-num-sms", "the flex dispatcher's SM count; priced as its default"},
    {"moe-hybridep-num-sms", "the flex dispatcher's SM count; priced as its default"},
    {"moe-hybridep-num-sms-preprocessing", "the flex dispatcher's SM count; priced as its "
                                           "default"},
    {"moe-hybridep-num-blocks-permute", "HybridEP's blocks; priced as its default"},
    {"moe-hybridep-num-blocks-unpermute", "HybridEP's blocks; priced as its default"},
    {"moe-hybridep-pad-uneven-dispatch-inputs", "HybridEP's padding; priced without"},
    {"moe-flex-dispatcher-num-sms", "the flex dispatcher's SM count; priced as its default"},
    {"moe-ncclep-zero-copy", "ncclEP's zero-copy buffers; priced as its default"},
    {"moe-router-padding-for-fp8", "each expert's tokens padded to the FP8 GEMMs' multiple; "
                                   "priced unpadded"},
    {"moe-router-padding-for-quantization", "each expert's tokens padded to the quantized "
                                            "GEMMs' multiple; priced unpadded"},
    {"moe-router-force-load-balancing", "routing forced even (a benchmark setting); priced "
                                        "as the model's router"},
    {"moe-router-force-biased", "routing forced onto some experts; priced as the model's "
                                "router"},
    {"moe-enable-routing-replay", "routing recorded and replayed; priced as routed afresh"},
    {"moe-single-grouped-weight", "the experts' weights in one tensor; priced per expert"},
    {"moe-single-grouped-bias", "the experts' biases in one tensor; priced per expert"},
    {"moe-use-grouped-tensor", "the experts' weights as a grouped tensor; priced per expert"},
    {"use-grouped-gemm-for-dense-mlp", "a grouped GEMM for a dense MLP; priced as plain "
                                       "GEMMs"},
    {"use-grouped-gemm-for-shared-expert", "a grouped GEMM for the shared experts; priced as "
                                           "plain GEMMs"},
    {"moe-routing-trace-path", "the routing traced to files; priced without"},
    {"moe-routing-trace-capture-hidden-states", "the routing traced to files; priced without"},
    {"moe-routing-trace-capture-logits", "the routing traced to files; priced without"},
    {"moe-routing-trace-dump-weights", "the routing traced to files; priced without"},
    {"moe-routing-trace-max-training-iters", "the routing traced to files; priced without"},
    /* kernels and numerics Tessel prices as the default ones */
    {"batch-invariant-mode", "batch-invariant kernels; priced as the default ones"},
    {"batch-invariant-backend", "batch-invariant kernels; priced as the default ones"},
    {"disable-bf16-reduced-precision-matmul", "bf16 GEMMs without reduced-precision "
                                              "reductions; priced with them"},
    {"flash-attention-version", "a chosen flash-attention version; priced as the GPU's "
                                "attention kernel"},
    {"openai-gelu", "OpenAI's GeLU in eager kernels; priced as Megatron-LM's fused one"},
    {"fp16-lm-cross-entropy", "the loss's unreduced cross entropy in fp16; priced in fp32"},
    {"no-rope-freq", "RoPE skipped on some layers; priced on every layer"},
    {"log-max-attention-logit", "the attention's largest logit kept for the log; priced "
                                "without"},
    {"qk-clip", "QK-clip's rescale of the query and key weights; priced without"},
    {"qk-clip-alpha", "QK-clip's rescale of the query and key weights; priced without"},
    {"qk-clip-threshold", "QK-clip's rescale of the query and key weights; priced without"},
    {"use-mup", "muP's multipliers on the embedding, scores and logits; priced without"},
    {"mup-output-mult", "muP's multiplier on the logits; priced without"},
    {"mup-embedding-mult", "muP's multiplier on the embedding; priced without"},
    {"mup-attn-scale-power", "muP's attention scale (a constant); priced without"},
    {"no-clone-scatter-output-in-embedding", "the embedding's output kept without a copy; "
                                             "priced with it"},
    {"disable-clone-scatter-output-in-embedding", "the embedding's output kept without a "
                                                  "copy; priced with it"},
    {"spec", "a layer spec of the script's choosing; priced as the model's Transformer "
             "Engine layers"},
    {"sft", "SFT's dataset and loss mask; priced as pretraining on full sequences"},
    {"test-mode", "Megatron-LM's functional-test checks; priced without"},
    {"train-sync-interval", "a host-GPU synchronisation every N iterations; priced without"},
    {"dataloader-inter-document-masking", "attention within each document; priced over the "
                                          "whole sequence"},
    {"mla-down-proj-fusion", "MLA's query and key-value down-projections fused; priced apart"},
    {"overlap-dispatch-backward-with-experts-wgrad", "the dispatch's backward under the "
                                                     "experts' weight gradients; priced one "
                                                     "after the other"},
    {"output-logit-dtype", "the LM head's GEMM output in another dtype; priced in the "
                           "model's"},
    {"fp8-output-proj", "the LM head's GEMM in MXFP8; priced in bf16"},
    {"moe-mlp-glu-interleave-size", "the experts' GLU weights interleaved; priced as "
                                    "concatenated"},
    {"moe-shared-expert-glu-interleave-size", "the shared experts' GLU weights interleaved; "
                                              "priced as concatenated"},
    /* knowledge distillation from cached logits, and saving them for it */
    {"logits-load-dir", "a distillation loss from cached logits; priced as the LM loss alone"},
    {"logits-load-kd-loss-alpha", "a distillation loss from cached logits; priced as the LM "
                                  "loss alone"},
    {"logits-load-decode-threads", "cached logits read for distillation; priced without"},
    {"logits-load-ignore-errors", "cached logits read for distillation; priced without"},
    {"logits-load-msc-prefetch-depth", "cached logits read for distillation; priced without"},
    {"logits-load-prefetch-factor", "cached logits read for distillation; priced without"},
    {"logits-save-dir", "the top logits saved every iteration; priced without"},
    {"logits-save-dtype", "the top logits saved every iteration; priced without"},
    {"logits-save-top-k", "the top logits saved every iteration; priced without"},
    {"logits-save-top-p", "the top logits saved every iteration; priced without"},
    {"logits-save-top-p-min-k", "the top logits saved every iteration; priced without"},
};

/* Accepted with a note: they change the figures, not the plan. */
static const mg_why_t mg_noted[] = {
    {"moe-flex-dispatcher-backend", "ncclep priced as deepep: one network copy per token and "
                                    "destination NVLink domain, no routing map gathered"},
};

/* Accepted: they do not change the plan (the model comes from --model/--hf-config;
 * --num-layers, --seq-length and the shape flags of eval_shape.h are read and
 * checked against it). */
static const char *const mg_no_effect[] = {
    "use-mcore-models",
    "rotary-percent",
    "rotary-interleaved",
    "rotary-seq-len-interpolation-factor",
    "moe-token-drop-policy", /* which tokens a capacity drops, not how many */
    /* the router's load-balancing losses and bias updates: a few [tokens, experts]
     * kernels beside the layer, not priced apart */
    "moe-aux-loss-coeff",
    "moe-z-loss-coeff",
    "moe-router-load-balancing-type",
    "moe-router-bias-update-rate",
    "moe-input-jitter-eps",
    "mtp-loss-scaling-factor",
    "apply-layernorm-1p",
    "init-method-std",
    "attention-softmax-in-fp32",
    "apply-query-key-layer-scaling",
    "no-position-embedding",
    "fp8-amax-history-len",
    "fp8-amax-compute-algo",
    "fp8-margin",
    "calculate-per-token-loss",
    "manual-gc",
    "manual-gc-interval",
    "empty-unused-memory-level",
    "exit-duration-in-mins",
    "exit-interval",
    "exit-signal-handler",
    "train-iters",
    "train-samples",
    "lr",
    "min-lr",
    "lr-decay-style",
    "lr-decay-iters",
    "lr-decay-samples",
    "lr-warmup-iters",
    "lr-warmup-samples",
    "lr-warmup-fraction",
    "lr-warmup-init",
    "decoupled-lr",
    "decoupled-min-lr",
    "clip-grad",
    "weight-decay",
    "start-weight-decay",
    "end-weight-decay",
    "weight-decay-incr-style",
    "adam-beta1",
    "adam-beta2",
    "adam-eps",
    "sgd-momentum",
    "loss-scale",
    "initial-loss-scale",
    "min-loss-scale",
    "loss-scale-window",
    "hysteresis",
    "seed",
    "override-opt_param-scheduler", /* older trees' spellings */
    "use-checkpoint-opt_param-scheduler",
    "override-opt-param-scheduler",
    "use-checkpoint-opt-param-scheduler",
    "rampup-batch-size",
    "ddp-average-in-collective",
    "use-flash-attn", /* defined, read nowhere in megatron/ at d98e8a6 */
    "use-cpu-initialization",
    "data-path",
    "split",
    "train-data-path",
    "valid-data-path",
    "test-data-path",
    "mock-data",
    "tokenizer-type",
    "tokenizer-model",
    "vocab-file",
    "merge-file",
    "data-cache-path",
    "tiktoken-pattern",
    "no-create-attention-mask-in-dataloader",
    "no-mmap-bin-files",
    "num-workers",
    "dataloader-type",
    "eod-mask-loss",
    "reset-position-ids",
    "reset-attention-mask",
    "num-dataset-builder-threads",
    "log-interval",
    "eval-iters",
    "eval-interval",
    "save-interval",
    "save",
    "load",
    "tensorboard-dir",
    "log-throughput",
    "profile",
    "profile-step-start",
    "profile-step-end",
    "profile-ranks",
    "use-pytorch-profiler",
    "ckpt-format",
    "distributed-timeout-minutes",
    "distributed-backend",
    "wandb-project",
    "wandb-exp-name",
    "wandb-save-dir",
    "log-timers-to-tensorboard",
    "log-validation-ppl-to-tensorboard",
    "log-memory-to-tensorboard",
    "log-params-norm",
    "log-num-zeros-in-grad",
    "log-loss-scale-to-tensorboard",
    "tensorboard-log-interval",
    "tensorboard-queue-size",
    "timing-log-level",
    "timing-log-option",
    "no-load-optim",
    "no-load-rng",
    "no-save-optim",
    "no-save-rng",
    "finetune",
    "async-save",
    "auto-detect-ckpt-format",
    "dist-ckpt-strictness",
    "ckpt-fully-parallel-save",
    "ckpt-fully-parallel-load",
    "ckpt-assume-constant-structure",
    "pretrained-checkpoint",
    "local-rank",
    /* Megatron-LM d98e8a6's run-time, logging and checkpoint settings beside the above */
    "exit-on-missing-checkpoint",
    "use-checkpoint-args",
    "distributed-timeout-seconds-after-init",
    "logging-level",
    "log-progress",
    "log-world-size-to-tensorboard",
    "wandb-entity",
    "init-method-xavier-uniform",
    "embedding-init-method-std",
    "lr-wsd-decay-style",
    "lr-wsd-decay-iters",
    "lr-wsd-decay-samples",
    "eval-global-batch-size",
    "eval-micro-batch-size",
    "validation-set-names",
    "data-args-path",
    "tokenizer-metadata",
    "tokenizer-special-tokens",
    "no-save-tokenizer-assets",
    "async-strategy",
    "dist-ckpt-format",
    "dist-ckpt-workers", /* checkpoints: what is saved and loaded, how and when (checkpoint_config, the
     * non-persistent and local checkpoints); their writes fall outside the priced iteration */
    "async-ckpt-cpu-priority",
    "async-ckpt-io-priority",
    "async-ckpt-use-cpu-shm",
    "ckpt-convert-format",
    "ckpt-convert-save",
    "ckpt-convert-update-legacy-dist-opt-format",
    "ckpt-drop-redundant-extra-state",
    "ckpt-fully-parallel-load-exchange-algo",
    "ckpt-fully-parallel-load-per-rank-objects",
    "ckpt-fully-parallel-load-process-group",
    "ckpt-fully-parallel-save-process-group",
    "ckpt-pg-tensors-cache-create",
    "ckpt-pg-tensors-cache-path",
    "ckpt-step",
    "no-ckpt-fully-parallel-save",
    "no-ckpt-load-validate-sharding-integrity",
    "disable-ckpt-load-validate-sharding-integrity",
    "dist-ckpt-optim-fully-reshardable",
    "dist-ckpt-save-pre-mcore-014",
    "distrib-optim-fully-reshardable-mem-efficient",
    "disable-strict-fsdp-dtensor-load",
    "no-strict-fsdp-dtensor-load",
    "use-dist-ckpt",
    "use-persistent-ckpt-worker",
    "non-persistent-ckpt-type",
    "non-persistent-global-ckpt-dir",
    "non-persistent-local-ckpt-algo",
    "non-persistent-local-ckpt-dir",
    "non-persistent-save-interval",
    "persistent-save-interval",
    "save-retain-interval",
    "load-main-params-from-ckpt",
    "override-ckpt-iteration",
    "use-mp-args-from-checkpoint-args",
    "verify-integrity",
    "replication",
    "replication-factor",
    "replication-jump",
    "adlr-autoresume",
    "adlr-autoresume-interval",
    /* logging, tracing and profiling; periodic dumps at their interval, not every iteration */
    "config-logger-dir",
    "log-device-memory-used",
    "log-energy",
    "log-memory-interval",
    "log-straggler",
    "straggler-ctrlr-port",
    "straggler-minmax-count",
    "disable-straggler-on-startup",
    "memory-snapshot-path",
    "record-memory-history",
    "record-shapes",
    "pytorch-profiler-collect-callstack",
    "pytorch-profiler-collect-chakra",
    "pytorch-profiler-collect-shapes",
    "nvtx-ranges",
    "run-workload-inspector-server",
    "otel-enabled",
    "otel-service-name",
    "otel-span-groups",
    "one-logger-async",
    "one-logger-project",
    "one-logger-run-name",
    "no-one-logger",
    "app-tag-run-name",
    "app-tag-run-version",
    "moe-per-layer-logging",
    "no-barrier-with-level-1-timing",
    "disable-log-loss-scale-to-tensorboard",
    "no-log-loss-scale-to-tensorboard",
    "save-activations-interval",
    "save-dgrads-interval",
    "save-params-interval",
    "save-tokens-per-expert-interval",
    "save-wgrads-interval",
    "check-weight-hash-across-dp-replicas-interval",
    "gpu-sniff-test-interval",
    /* resilience: fault tolerance, in-process restart, fault and error injection, the
     * flight recorder, the exit signals; none runs in a healthy iteration */
    "calc-ft-timeouts",
    "enable-ft-package",
    "ft-num-warmup-iters",
    "inprocess-active-world-size",
    "inprocess-barrier-timeout",
    "inprocess-completion-timeout",
    "inprocess-empty-cuda-cache",
    "inprocess-granularity",
    "inprocess-hard-timeout",
    "inprocess-heartbeat-interval",
    "inprocess-heartbeat-timeout",
    "inprocess-last-call-wait",
    "inprocess-max-iterations",
    "inprocess-monitor-process-interval",
    "inprocess-monitor-thread-interval",
    "inprocess-progress-watchdog-interval",
    "inprocess-restart",
    "inprocess-soft-timeout",
    "inprocess-termination-grace-time",
    "fault-injector-delay-start-iteration",
    "fault-injector-fault-delay",
    "fault-injector-fault-probabilities",
    "fault-injector-fault-types",
    "fault-injector-mtti-seconds",
    "fault-injector-num-ranks",
    "fault-injector-offset-seconds",
    "fault-injector-ranks",
    "fault-injector-seed",
    "error-injection-rate",
    "error-injection-type",
    "flight-recorder-dump-path",
    "flight-recorder-include-stack-trace",
    "flight-recorder-trace-buffer-size",
    "disable-flight-recorder-dump-on-timeout",
    "disable-flight-recorder-extra-dump-on-exec",
    "disable-flight-recorder-include-only-active",
    "no-flight-recorder-dump-on-timeout",
    "no-flight-recorder-extra-dump-on-exec",
    "no-flight-recorder-include-only-active",
    "exit-signal",
    "exit-signal-handler-for-dataloader",
    "exit-signal-handler-for-training",
    "check-for-large-grads",
    "check-for-spiky-loss",
    /* data, tokenizer and evaluation: what the tokens are, not how many */
    "allow-ambiguous-pad-tokens",
    "chat-template",
    "dataloader-defer-npy-index-mmap",
    "dataloader-fast-cache-load",
    "mid-level-dataset-surplus",
    "multiple-validation-sets",
    "full-validation",
    "no-data-sharding",
    "object-storage-cache-path",
    "per-dataset-sequences-path",
    "per-split-data-args-path",
    "fim-data",
    "fim-eod-token",
    "fim-fragment-rate",
    "fim-middle-token",
    "fim-no-prefix",
    "fim-pad-token",
    "fim-prefix-token",
    "fim-rate",
    "fim-split-sample",
    "fim-spm-rate",
    "fim-suffix-token",
    "enable-msc",
    "disable-msc",
    "start-eval-at-iter",
    "iterations-to-skip",
    "sample-rate",
    "disable-tokenizer-sentencepiece-ignore-extra-whitespaces",
    "no-tokenizer-sentencepiece-ignore-extra-whitespaces",
    "disable-use-tokenizer-model-from-checkpoint-args",
    "no-use-tokenizer-model-from-checkpoint-args",
    "disable-save-tokenizer-assets",
    "null-tokenizer-eod-id",
    "null-tokenizer-pad-id",
    "tiktoken-num-special-tokens",
    "tokenizer-hf-no-include-special-tokens",
    "tokenizer-hf-no-use-fast",
    "tokenizer-sentencepiece-legacy",
    "trust-remote-code",
    "sft-tokenizer-prompt-format",
    /* the batch-size ramp (the iteration priced is the full batch's, as with
     * --rampup-batch-size), initialisation and the learning rates' groups */
    "step-batch-size-schedule",
    "phase-transition-iterations",
    "init-model-with-meta-device",
    "data-parallel-random-init",
    "no-initialization",
    "lazy-mpu-init",
    "head-lr-mult",
    "apply-wd-to-qk-layernorm",
    "no-weight-decay-cond-type",
    "dump-param-to-param-group-map",
    "mup-base-hidden-size",
    "mup-base-head-dim",
    "mup-width-mult",
    "te-rng-tracker",
    "disable-gloo-process-groups",
    "tp-comm-bootstrap-backend",
    "onnx-safe",
    "enable-experimental",
    "is-hybrid-model",
    "apply-residual-connection-post-layernorm",
    "mrope-section",
    "cpu-offloading-retain-pinned-cpu-buffers",
    "no-manual-gc-eval",
    "disable-manual-gc-eval",
    /* rounds a global batch that micro-batch x DP does not divide down to one it does
     * (num_microbatches_calculator.py); eval prices only a dividing batch, which it
     * leaves alone, and refuses another naming the batch */
    "decrease-batch-size-if-needed",
    "fp8-interval",  /* TransformerConfig: ignored since Transformer Engine 1.8 */
    "use-gigatoken", /* a faster tokenizer */
    "result-rejected-tracker-filename",
    /* Megatron-FSDP's hybrid sharding (HSDP), which needs more than one
     * distributed-optimizer instance (--num-distributed-optimizer-instances, refused) */
    "outer-dp-sharding-strategy",
    "enable-full-sharding-in-hsdp",
    /* the settings of an optimizer other than Adam (--optimizer refuses it) and of
     * --optimizer-cpu-offload (refused), read with them alone */
    "lion-beta1",
    "lion-beta2",
    "muon-coefficient-type",
    "muon-extra-scale-factor",
    "muon-fp32-matmul-prec",
    "muon-momentum",
    "muon-nesterov",
    "muon-no-split-qkv",
    "muon-num-ns-steps",
    "muon-scalar-optimizer",
    "muon-scale-mode",
    "muon-tp-mode",
    "muon-use-syrk",
    "no-use-layer-wise-param-layout",
    "optimizer-offload-fraction",
    "overlap-cpu-optimizer-d2h-h2d",
    "use-torch-optimizer-for-cpu-offload",
    "no-pin-cpu-grads",
    "no-pin-cpu-params",
    /* Megatron-LM's inference engine (text generation, RL rollouts, the inference
     * server): pretrain_gpt.py's training iterations never build it */
    "inference-batch-times-seqlen-threshold",
    "inference-coordinator-port",
    "inference-cuda-graph-all-prefills",
    "inference-cuda-graph-max-tokens",
    "inference-cuda-graph-scope",
    "inference-disable-ep-consensus",
    "inference-disable-triton-nvls-kernels",
    "inference-dynamic-batching",
    "inference-dynamic-batching-async-sched-mode",
    "inference-dynamic-batching-block-size",
    "inference-dynamic-batching-buffer-size-gb",
    "inference-dynamic-batching-cuda-graph-mixed-prefill-count",
    "inference-dynamic-batching-cuda-graph-sizing-distribution",
    "inference-dynamic-batching-logprobs-mode",
    "inference-dynamic-batching-mamba-memory-ratio",
    "inference-dynamic-batching-max-requests",
    "inference-dynamic-batching-max-tokens",
    "inference-dynamic-batching-num-cuda-graphs",
    "inference-dynamic-batching-paused-buffer-size-gb",
    "inference-dynamic-batching-prefix-caching",
    "inference-dynamic-batching-prefix-caching-coordinator-policy",
    "inference-dynamic-batching-prefix-caching-eviction-policy",
    "inference-dynamic-batching-prefix-caching-mamba-gb",
    "inference-dynamic-batching-prefix-caching-routing-alpha",
    "inference-dynamic-batching-sampling-backend",
    "inference-dynamic-batching-track-generated-token-events",
    "inference-dynamic-batching-track-paused-request-events",
    "inference-dynamic-batching-unified-memory-level",
    "inference-fuse-tp-communication",
    "inference-grouped-gemm-backend",
    "inference-logging-step-interval",
    "inference-max-requests",
    "inference-max-seq-length",
    "inference-moe-disable-fused-quant-kernels",
    "inference-moe-token-dispatcher-type",
    "inference-rng-tracker",
    "inference-shards",
    "inference-text-gen-server-logging",
    "inference-use-synchronous-zmq-collectives",
    "inference-wandb-logging",
    "enable-chunked-prefill",
    "flash-decode",
    "decode-only-cuda-graphs",
    "cache-mla-latents",
    "max-tokens-to-oom",
    "mlp-chunks-for-prefill",
    "nccl-all-reduce-for-prefill",
    "num-speculative-tokens",
    "use-legacy-static-engine",
    "use-same-sampling-seed-across-dp-ranks",
    "moe-pad-experts-for-cuda-graph-inference",
    "mamba-inference-conv-states-dtype",
    "mamba-inference-ssm-states-dtype",
    /* Megatron-RL's settings, read with --perform-rl-step alone (refused) */
    "grpo-clamp-eps-lower",
    "grpo-clamp-eps-upper",
    "grpo-entropy-term-weight",
    "grpo-filter-groups-with-same-reward",
    "grpo-group-size",
    "grpo-iterations",
    "grpo-kl-beta",
    "grpo-prompts-per-step",
    "langrl-env-config",
    "refit-method",
    "rl-consumption-granularity",
    "rl-default-temperature",
    "rl-default-top-k",
    "rl-default-top-p",
    "rl-durable-rollout-bank",
    "rl-generation-lag",
    "rl-importance-sampling-truncation-coef",
    "rl-inference-expert-model-parallel-size",
    "rl-inference-expert-tensor-model-parallel-size",
    "rl-inference-logprobs-is-correction",
    "rl-inference-model-unified-memory-level",
    "rl-inference-parsers",
    "rl-inference-pipeline-model-parallel-size",
    "rl-inference-tensor-model-parallel-size",
    "rl-kv-cache-management-mode",
    "rl-max-inflight-requests",
    "rl-offload-inference-model-weights-when-idle",
    "rl-offload-optimizer-during-inference",
    "rl-partial-rollouts",
    "rl-persist-cuda-graphs",
    "rl-profile",
    "rl-profile-dir",
    "rl-prompts-per-eval",
    "rl-rollout-bank-dir",
    "rl-rollout-bank-max-bytes",
    "rl-sequence-packing-algo",
    "rl-sequence-packing-max-sequences-per-bin",
    "rl-skip-bos-token",
    "rl-submission-granularity",
    "rl-training-cuda-graphs",
    "rl-use-sequence-packing",
    "rl-verify-model-weights-swap",
    /* other models' settings (BERT, ICT/REALM retrieval, vision, T5's relative
     * positions), which pretrain_gpt.py does not build */
    "bert-embedder-type",
    "bert-load",
    "bert-no-binary-head",
    "biencoder-projection-dim",
    "biencoder-shared-query-context-model",
    "block-data-path",
    "embedding-path",
    "evidence-data-path",
    "ict-head-size",
    "ict-load",
    "indexer-batch-size",
    "indexer-log-interval",
    "titles-data-path",
    "query-in-block-prob",
    "use-one-sent-docs",
    "retriever-report-topk-accuracies",
    "retriever-score-scaling",
    "output-bert-embeddings",
    "mask-factor",
    "mask-prob",
    "mask-type",
    "short-seq-prob",
    "classes-fraction",
    "data-per-class-fraction",
    "dino-bottleneck-size",
    "dino-freeze-last-layer",
    "dino-head-hidden-size",
    "dino-local-crops-number",
    "dino-local-img-size",
    "dino-norm-last-layer",
    "dino-teacher-temp",
    "dino-warmup-teacher-temp",
    "dino-warmup-teacher-temp-epochs",
    "img-h",
    "img-w",
    "num-channels",
    "num-classes",
    "patch-dim",
    "swin-backbone-type",
    "vision-backbone-type",
    "vision-pretraining",
    "vision-pretraining-type",
    "iter-per-epoch",
    "relative-attention-max-distance",
    "relative-attention-num-buckets",
};

#define MG_N(a) (sizeof(a) / sizeof((a)[0]))

/* What the line set besides cfg, checked once it is all read (validate_args). */
typedef struct mg_state {
    bool method_block, method_set, num_layers_set, granularity_set;
    bool recompute_activations, fsdp2, dist_opt;
    bool mfsdp;         /* --use-megatron-fsdp */
    bool fsdp_dtensor;  /* --ckpt-format fsdp_dtensor */
    uint8_t fsdp_grads; /* --megatron-fsdp-main-grads-dtype: 0 auto, 1 fp32, 2 bf16/fp16 */
    uint8_t fsdp_comm;  /* --megatron-fsdp-grad-comm-dtype, the same codes */
    uint8_t fsdp_mode;  /* --data-parallel-sharding-strategy: 0 optim_grads_params (the
                              default), 1 no_shard, 2 optim, 3 optim_grads (mg_fsdp_modes) */
    bool bf16, fp16, grad_bf16, grad_fp32, overlap_grad, overlap_param;
    bool fp8_e4m3;        /* --fp8-format e4m3 (priced as hybrid) */
    bool fp8_param;       /* --fp8-param-gather */
    bool no_accum_fusion; /* --no-gradient-accumulation-fusion */
    bool tp_overlap;      /* --tp-comm-overlap */
    bool ce_fusion;       /* --cross-entropy-loss-fusion */
    bool ce_te;           /* --cross-entropy-fusion-impl te (default native) */
    bool cpu_offloading;  /* --cpu-offloading (older trees; --cpu-offloading-num-layers > 0
                             sets it in Megatron-LM's validate_args) */
    uint32_t fp8_format;  /* 1: --fp8-format given */
    uint32_t fp8_recipe;  /* --fp8-recipe (tsl_fp8_recipe_t); 0: Megatron's default */
    bool fp4_format;      /* --fp4-format e2m1: NVFP4 (--fp4-recipe nvfp4, the default) */
    bool fp4_param;       /* --fp4-param-gather */
    bool fp4_recipe;      /* --fp4-recipe nvfp4 given (noted without --fp4-format) */
    bool fp8_dispatch;    /* --moe-dispatch-fwd-dtype mxfp8 */
    bool fp8_combine;     /* --moe-combine-bwd-dtype mxfp8 */
    bool a2a_dispatcher;  /* --moe-token-dispatcher-type alltoall (noted) */
    bool ag_dispatcher;   /* --moe-token-dispatcher-type allgather */
    bool flex_dispatcher; /* --moe-token-dispatcher-type flex */
    bool a2a_overlap;     /* --overlap-moe-expert-parallel-comm */
    bool grouped_gemm;    /* --moe-grouped-gemm: what the op fuser's expert MLP needs */
    bool permute_fusion;  /* --moe-permute-fusion (TransformerConfig default False) */
    bool enable_deepep;   /* --moe-enable-deepep: the flex backend deepep (deprecated) */
    /* --moe-flex-dispatcher-backend (tsl_flex_backend_t; 0: not given, or ncclep, noted) */
    uint32_t flex_backend;
    bool no_p2p_overlap; /* --no-overlap-p2p-communication (mg_p2p_overlap) */
    bool te_op_fuser;    /* --use-transformer-engine-op-fuser (knobs.moe_fused_mlp) */
    bool fused_srelu;    /* --use-fused-weighted-squared-relu (knobs.moe_fused_srelu) */
    bool delay_wgrad;    /* --delay-wgrad-compute (with it: priced as part of the overlap) */
    bool reuse_grad_buf; /* --reuse-grad-buf-for-mxfp8-param-ag: what an MXFP8 plan's
                             weight gather is priced as; needs --fp8-param-gather */
    uint32_t cp, ep, etp;
    char cp_comm[16];  /* --cp-comm-type; "" = p2p */
    double capacity;   /* --moe-expert-capacity-factor; 0: dropless */
    bool pad_capacity; /* --moe-pad-expert-input-to-capacity */
    /* --recompute-modules (modules_set; core: core_attn named), --moe-layer-recompute */
    bool modules_set, modules_core, moe_layer_recompute;
    uint32_t modules;
    /* the precision-aware optimizer and its dtypes (0 fp32, 2 a 16-bit type, 1 fp8) */
    bool precision_aware;
    uint8_t exp_avg, exp_avg_sq, main_grads, main_params;
    bool dtypes_set;
    /* --first-last-layers-bf16 and the blocks it keeps bf16 (TransformerConfig
     * num_layers_at_start/end_in_bf16, 1 each unless given: bf16_start/end_set) */
    bool first_last_bf16, bf16_start_set, bf16_end_set;
    uint32_t bf16_start, bf16_end;
    /* --no-masked-softmax-fusion or --no-persist-layer-norm, as given: read by the
     * local modules only (mg_finish notes it under --transformer-impl local) */
    const char *local_fusion_off;
    tsl_eval_cgraph_t cgraph; /* the CUDA-graph flags (eval_cgraph.h) */
    char te_prec[MG_WORD];    /* --te-precision-config-file; "" not given (mg_te_prec) */
} mg_state_t;

/* --first-last-layers-bf16: the first --num-layers-at-start-in-bf16 and the last
 * --num-layers-at-end-in-bf16 blocks (1 each by default: TransformerConfig) outside
 * the FP8/FP4 autocast (fp8_utils.py is_first_last_bf16_layer, fp4_utils.py
 * get_fp4_context); Megatron refuses it under delayed scaling, and without FP8 or
 * FP4 every block is bf16 anyway. */
static int mg_bf16_layers(tsl_eval_cfg_t *c, const mg_state_t *st, tsl_err_t *err)
{
    if (!st->first_last_bf16) {
        if (st->bf16_start_set || st->bf16_end_set)
            tsl_eval_cfg_note(c, "megatron: --num-layers-at-start/end-in-bf16 without "
                                 "--first-last-layers-bf16: no block kept bf16, as in "
                                 "Megatron-LM");
        return 0;
    }
    if (c->knobs.fp8 == TSL_FP8_DELAYED)
        return tsl_err_set(err, "megatron: --first-last-layers-bf16: delayed scaling does not "
                                "support first / last layer in BF16 (Megatron-LM "
                                "TransformerConfig)");
    if (!c->knobs.fp8)
        return 0;
    c->knobs.bf16_layers_start = st->bf16_start_set ? st->bf16_start : 1;
    c->knobs.bf16_layers_end = st->bf16_end_set ? st->bf16_end : 1;
    return 0;
}

static int mg_flag_only(const char *key, const char *val, tsl_err_t *err)
{
    if (val)
        return tsl_err_set(err, "megatron: --%s takes no value ('%s')", key, val);
    return 0;
}

/* --moe-layer-freq as Megatron-LM's moe_freq_type takes it: an int N, or a
 * Python list expression of 0/1 it evaluates ("([0]*3+[1]*58)", "[1,0]*2"):
 * lists in brackets, + concatenates, * repeats, parentheses group. */
typedef struct mg_pat {
    const char *key; /* the flag, for messages */
    const char *s;
    uint8_t *out;
    uint32_t n;
    tsl_err_t *err;
} mg_pat_t;

static int pat_expr(mg_pat_t *p);

static void pat_space(mg_pat_t *p)
{
    while (isspace((unsigned char)*p->s))
        p->s++;
}

static int pat_int(mg_pat_t *p, unsigned long *v)
{
    pat_space(p);
    if (!isdigit((unsigned char)*p->s))
        return tsl_err_set(p->err, "megatron: --%s: a number expected at '%s'", p->key, p->s);
    char *end;
    *v = strtoul(p->s, &end, 10);
    p->s = end;
    return *v > TSL_MODEL_MAX_LAYERS
               ? tsl_err_set(p->err, "megatron: --%s: %lu is too large", p->key, *v)
               : 0;
}

static int pat_factor(mg_pat_t *p)
{
    pat_space(p);
    if (*p->s == '(') {
        p->s++;
        if (pat_expr(p) != 0)
            return -1;
        pat_space(p);
        if (*p->s != ')')
            return tsl_err_set(p->err, "megatron: --%s: ')' expected at '%s'", p->key, p->s);
        p->s++;
        return 0;
    }
    if (*p->s != '[')
        return tsl_err_set(p->err, "megatron: --%s: '[' or '(' expected at '%s'", p->key, p->s);
    p->s++;
    for (;;) {
        unsigned long v;
        if (pat_int(p, &v) != 0)
            return -1;
        if (v > 1)
            return tsl_err_set(p->err, "megatron: --%s: %lu is not 0 or 1", p->key, v);
        if (p->n >= TSL_MODEL_MAX_LAYERS)
            return tsl_err_set(p->err, "megatron: --%s: more than %u layers", p->key,
                               TSL_MODEL_MAX_LAYERS);
        p->out[p->n++] = (uint8_t)v;
        pat_space(p);
        if (*p->s == ',') {
            p->s++;
            continue;
        }
        if (*p->s != ']')
            return tsl_err_set(p->err, "megatron: --%s: ']' expected at '%s'", p->key, p->s);
        p->s++;
        return 0;
    }
}

/* factor ('*' N)*: the factor's layers repeated */
static int pat_term(mg_pat_t *p)
{
    uint32_t start = p->n;
    if (pat_factor(p) != 0)
        return -1;
    for (pat_space(p); *p->s == '*'; pat_space(p)) {
        unsigned long k;
        p->s++;
        if (pat_int(p, &k) != 0)
            return -1;
        uint32_t len = p->n - start;
        if (k == 0) {
            p->n = start;
            continue;
        }
        if ((unsigned long)start + len * k > TSL_MODEL_MAX_LAYERS)
            return tsl_err_set(p->err, "megatron: --%s: more than %u layers", p->key,
                               TSL_MODEL_MAX_LAYERS);
        for (unsigned long r = 1; r < k; r++)
            memcpy(p->out + start + r * len, p->out + start, len);
        p->n = start + (uint32_t)(len * k);
    }
    return 0;
}

static int pat_expr(mg_pat_t *p)
{
    if (pat_term(p) != 0)
        return -1;
    for (pat_space(p); *p->s == '+'; pat_space(p)) {
        p->s++;
        if (pat_term(p) != 0)
            return -1;
    }
    return 0;
}

/* An int N or a 0/1 list expression (--moe-layer-freq, --window-attn-skip-freq):
 * *every = N, or the list into pat and *len its length. */
static int mg_freq(const char *key, const char *val, uint32_t *every, uint8_t *pat, uint32_t *len,
                   tsl_err_t *err)
{
    *every = *len = 0;
    if (val == NULL || !*val)
        return tsl_err_set(err, "megatron: --%s needs a value", key);
    if (strchr(val, '[') == NULL)
        return tsl_parse_u32(key, val, 1, TSL_MODEL_MAX_LAYERS, every, err);
    mg_pat_t p = {key, val, pat, 0, err};
    if (pat_expr(&p) != 0)
        return -1;
    pat_space(&p);
    if (*p.s)
        return tsl_err_set(err, "megatron: --%s: '%s' left over", key, p.s);
    if (p.n == 0)
        return tsl_err_set(err, "megatron: --%s: an empty pattern", key);
    *len = p.n;
    return 0;
}

static int mg_moe_freq(const char *val, tsl_eval_cfg_t *c, tsl_err_t *err)
{
    return mg_freq("moe-layer-freq", val, &c->moe_every, c->moe_pattern, &c->moe_len, err);
}

/* A precision-aware optimizer dtype (Megatron-LM arguments.py: fp32, fp16, bf16,
 * fp8 where the flag allows it): 0 fp32, 2 a 16-bit type, 1 fp8. */
static int mg_dtype(const char *key, const char *val, uint8_t *dt, mg_state_t *st, tsl_err_t *err)
{
    bool grads = strcmp(key, "main-grads-dtype") == 0,
         params = strcmp(key, "main-params-dtype") == 0;
    st->dtypes_set = true;
    if (val && strcmp(val, "fp32") == 0)
        *dt = 0;
    else if (val && (strcmp(val, "bf16") == 0 ? !params : strcmp(val, "fp16") == 0 && !grads))
        *dt = 2;
    else if (val && strcmp(val, "fp8") == 0 && !grads && !params)
        *dt = 1;
    else
        return tsl_err_set(err, "megatron: --%s: '%s' is not %s", key, val ? val : "",
                           grads    ? "fp32 or bf16"
                           : params ? "fp32 or fp16"
                                    : "fp32, fp16, bf16 or fp8");
    return 0;
}

/* FP4 (Megatron-LM TransformerConfig: fp4 'e2m1' as --fp4-format, fp4_recipe
 * 'nvfp4' (the default) or 'custom' as --fp4-recipe): TE's NVFP4BlockScaling,
 * priced as the nvfp4 recipe (docs/cost-model.md "NVFP4"). */
static int mg_fp4(const char *key, const char *val, mg_state_t *st, tsl_err_t *err)
{
    if (strcmp(key, "fp4-format") == 0) {
        if (val == NULL || strcmp(val, "e2m1") != 0)
            return tsl_err_set(err, "megatron: --fp4-format: '%s' is not e2m1", val ? val : "");
        st->fp4_format = true;
        return 0;
    }
    if (val != NULL && strcmp(val, "custom") == 0)
        return tsl_err_set(err, "megatron: --fp4-recipe custom: a custom quantizer factory is "
                                "not priced (nvfp4 is)");
    if (val == NULL || strcmp(val, "nvfp4") != 0)
        return tsl_err_set(err, "megatron: --fp4-recipe: '%s' is not nvfp4 or custom",
                           val ? val : "");
    st->fp4_recipe = true;
    return 0;
}

/* The MTP part of a unified pattern, after the main one's '/': one depth's blocks
 * per '/'-separated part, every part alike (Megatron-LM mamba_hybrid_layer_allocation
 * parse_hybrid_pattern at 44151194); the depths and the blocks into c. */
static int mg_hybrid_mtp(const char *key, const char *mtp, tsl_eval_cfg_t *c, tsl_err_t *err)
{
    size_t w = strcspn(mtp, "/");
    if (w == 0 || w >= sizeof c->hybrid_mtp || strspn(mtp, "M*-E") != w)
        return tsl_err_set(err,
                           "megatron: --%s: the MTP part '%.16s' must be 1..%zu blocks of M, *, "
                           "- or E per depth",
                           key, mtp, sizeof c->hybrid_mtp - 1);
    memcpy(c->hybrid_mtp, mtp, w);
    c->hybrid_mtp[w] = '\0';
    uint32_t d = 0;
    for (const char *q = mtp;; q += w + 1) {
        if (strncmp(q, mtp, w) != 0 || (q[w] != '/' && q[w] != '\0'))
            return tsl_err_set(err, "megatron: --%s: MTP depth %u is not '%s' as the first", key,
                               d + 1, c->hybrid_mtp);
        d++;
        if (q[w] == '\0')
            break;
    }
    c->hybrid_mtp_depths = d;
    return 0;
}

/* The main part's '|' segments (Megatron-LM's pipeline and virtual stages) into
 * c->hybrid_seg, the blocks alone into c->hybrid; n characters of val. An empty
 * segment is refused: Tessel writes none and prices no chunk without blocks as one. */
static int mg_hybrid_segments(const char *key, const char *val, size_t n, tsl_eval_cfg_t *c,
                              tsl_err_t *err)
{
    size_t b = 0, len = 0;
    uint32_t k = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && val[i] != '|') {
            c->hybrid[b++] = val[i];
            len++;
            continue;
        }
        if (len == 0)
            return tsl_err_set(err,
                               "megatron: --%s: '|' segment %u has no layers; Tessel reads no "
                               "empty pipeline segment",
                               key, k);
        c->hybrid_seg[k++] = (uint16_t)len;
        len = 0;
    }
    c->hybrid[b] = '\0';
    c->hybrid_segs = k > 1 ? k : 0;
    return 0;
}

/* --hybrid-layer-pattern P: M, *, - and E (hybrid_match checks it against the model),
 * '|' between pipeline segments (mg_hybrid_segments; mg_hybrid_split reads them as
 * stages), then Megatron's MTP part ('/' and one depth's blocks per depth:
 * mg_hybrid_mtp). */
static int mg_hybrid(const char *key, const char *val, tsl_eval_cfg_t *c, tsl_err_t *err)
{
    if (val == NULL || !*val)
        return tsl_err_set(err, "megatron: --%s needs a pattern, e.g. MEM*EME", key);
    size_t n = strlen(val), ok = strspn(val, "M*-E|");
    if (ok == 0 && val[0] == '/') /* else nothing would check the MTP part (hybrid_match) */
        return tsl_err_set(err,
                           "megatron: --%s: no layers before the MTP part '%.16s'; give the "
                           "main pattern first (M, *, - and E), then '/' and a depth's blocks",
                           key, val);
    if (ok < n && val[ok] == '/') {
        if (mg_hybrid_mtp(key, val + ok + 1, c, err) != 0)
            return -1;
        n = ok;
    }
    if (ok < n)
        return tsl_err_set(err, "megatron: --%s: '%c' at %zu is not M, *, -, E or |", key, val[ok],
                           ok);
    if (n >= sizeof c->hybrid)
        return tsl_err_set(err, "megatron: --%s: %zu layers exceed the limit of %zu", key, n,
                           sizeof c->hybrid - 1);
    if (c->hybrid[0]) /* the old and the new spelling of one flag: which would run? */
        return tsl_err_set(err,
                           "megatron: --%s: a hybrid pattern is given twice "
                           "(--hybrid-layer-pattern, --hybrid-override-pattern): give one",
                           key);
    if (mg_hybrid_segments(key, val, n, c, err) != 0)
        return -1;
    c->shape.hybrid = true; /* the Mamba flags and their defaults apply (eval_shape.h) */
    return 0;
}

/* What Megatron-LM d98e8a6 validate_args asserts beside --hybrid-layer-pattern: no
 * --num-layers-per-virtual-pipeline-stage, --num-virtual-stages-per-pipeline-rank or
 * --account-for-embedding/loss-in-pipeline-split (the virtual stages are the '|'
 * segments: their count over --pipeline-model-parallel-size, which must divide it),
 * and with '|' no --decoder-first/last-pipeline-num-layers. The virtual stages into
 * c->interleave; the stages' blocks are read from the segments (split). */
static int mg_hybrid_split(tsl_eval_cfg_t *c, tsl_err_t *err)
{
    const char *flag = c->vpp_blocks   ? "--num-layers-per-virtual-pipeline-stage"
                       : c->interleave ? "--num-virtual-stages-per-pipeline-rank"
                       : c->acct_embed ? "--account-for-embedding-in-pipeline-split"
                       : c->acct_loss  ? "--account-for-loss-in-pipeline-split"
                       : c->hybrid_segs && (c->first_blocks || c->last_blocks)
                           ? "--decoder-first/last-pipeline-num-layers"
                           : NULL;
    if (!c->hybrid[0])
        return 0;
    if (flag)
        return tsl_err_set(err,
                           "megatron: %s with --hybrid-layer-pattern: Megatron-LM refuses it "
                           "(a hybrid's stages and virtual stages are the pattern's '|' "
                           "segments)",
                           flag);
    uint32_t P = c->pp ? c->pp : 1;
    if (c->hybrid_segs == 0)
        return 0;
    if (c->hybrid_segs % P != 0)
        return tsl_err_set(err,
                           "megatron: --hybrid-layer-pattern: %u '|' segments do not divide "
                           "over --pipeline-model-parallel-size %u (Megatron-LM)",
                           c->hybrid_segs, P);
    if (P < 2)
        return tsl_err_set(err,
                           "megatron: --hybrid-layer-pattern: %u '|' segments at "
                           "--pipeline-model-parallel-size 1 would interleave one stage "
                           "(Megatron-LM asserts a pipeline for the interleaved schedule)",
                           c->hybrid_segs);
    c->interleave = c->hybrid_segs / P > 1 ? c->hybrid_segs / P : 0;
    return 0;
}

static const char *const mg_fsdp_modes[] = {"optim_grads_params", "no_shard", "optim",
                                            "optim_grads"};

/* A Megatron-FSDP dtype (Megatron-LM d98e8a6 --megatron-fsdp-*-dtype: fp32, bf16,
 * fp16, auto): 0 auto, 1 fp32, 2 a 16-bit type. */
static int mg_fsdp_dtype(const char *key, const char *val, uint8_t *dt, tsl_err_t *err)
{
    static const char *const names[] = {"auto", "fp32", "bf16", "fp16"};
    for (uint8_t i = 0; val && i < 4; i++)
        if (strcmp(val, names[i]) == 0) {
            *dt = i < 2 ? i : 2;
            return 0;
        }
    return tsl_err_set(err, "megatron: --%s: '%s' is not fp32, bf16, fp16 or auto", key,
                       val ? val : "");
}

/* Megatron-FSDP's flags beside --use-megatron-fsdp (read in mg_fsdp_finish); 1: not
 * one of them. */
static int mg_fsdp_read(const char *key, const char *val, mg_state_t *st, tsl_err_t *err)
{
    if (strcmp(key, "ckpt-format") == 0) { /* otherwise no effect on the plan */
        st->fsdp_dtensor = val && strcmp(val, "fsdp_dtensor") == 0;
        return 0;
    }
    if (strcmp(key, "data-parallel-sharding-strategy") == 0) {
        for (uint8_t i = 0; val && i < 4; i++)
            if (strcmp(val, mg_fsdp_modes[i]) == 0) {
                st->fsdp_mode = i;
                return 0;
            }
        return tsl_err_set(err,
                           "megatron: --data-parallel-sharding-strategy: '%s' is not no_shard, "
                           "optim, optim_grads or optim_grads_params",
                           val ? val : "");
    }
    if (strcmp(key, "megatron-fsdp-main-grads-dtype") == 0)
        return mg_fsdp_dtype(key, val, &st->fsdp_grads, err);
    if (strcmp(key, "megatron-fsdp-grad-comm-dtype") == 0)
        return mg_fsdp_dtype(key, val, &st->fsdp_comm, err);
    if (strcmp(key, "megatron-fsdp-main-params-dtype") == 0) {
        if (val && strcmp(val, "fp32") == 0)
            return 0;
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: --megatron-fsdp-main-params-dtype %s: Tessel prices an "
                            "fp32 master (the default)",
                            val ? val : "");
    }
    return 1;
}

/* --transformer-impl as Megatron-LM d98e8a6 takes it: transformer_engine (the
 * default) or local, Megatron-LM's own modules (the unfused DotProductAttention core:
 * c->local_impl, checked against the cluster and the switches in eval_local.c);
 * inference_optimized builds inference layers, not a training run. */
static int mg_transformer_impl(const char *val, tsl_eval_cfg_t *c, tsl_err_t *err)
{
    if (val != NULL && strcmp(val, "inference_optimized") == 0)
        return tsl_err_set(err, "megatron: --transformer-impl inference_optimized builds "
                                "inference layers; Tessel prices training");
    if (val == NULL || (strcmp(val, "transformer_engine") != 0 && strcmp(val, "local") != 0))
        return tsl_err_set(err,
                           "megatron: --transformer-impl: '%s' is not transformer_engine or local",
                           val ? val : "");
    c->local_impl = strcmp(val, "local") == 0;
    return 0;
}

/* --attention-backend as Megatron-LM d98e8a6 takes it (AttnBackend,
 * megatron/core/transformer/enums.py): flash, fused and auto (the default) leave
 * Transformer Engine's DotProductAttention to a fused kernel, what Tessel prices
 * by default; unfused is TE's UnfusedDotProductAttention (language_module.py
 * _set_attention_backend: NVTE_FLASH_ATTN=0, NVTE_FUSED_ATTN=0, NVTE_UNFUSED_ATTN=1),
 * its s x s scores kept: the request's unfused_attn, as --unfused-attn. local is
 * refused as Megatron-LM refuses it without --spec local (validate_args), a flag
 * Tessel does not read. */
static int mg_attention_backend(const char *val, tsl_eval_cfg_t *c, tsl_err_t *err)
{
    if (val && strcmp(val, "local") == 0)
        return tsl_err_set(err, "megatron: --attention-backend local is only supported with "
                                "--spec local (Megatron-LM validate_args), which Tessel does "
                                "not read");
    if (val == NULL || (strcmp(val, "flash") != 0 && strcmp(val, "fused") != 0 &&
                        strcmp(val, "auto") != 0 && strcmp(val, "unfused") != 0))
        return tsl_err_set(err,
                           "megatron: --attention-backend: '%s' is not flash, fused, unfused, "
                           "local or auto",
                           val ? val : "");
    c->unfused_attn = strcmp(val, "unfused") == 0;
    return 0;
}

/* The flags of mg_unmodelled whose value decides whether they change anything, or
 * that Megatron-LM checks: --num-distributed-optimizer-instances 1 the one instance Tessel prices (more keep
 * the optimizer states once per instance, memory Tessel does not count);
 * --moe-router-dtype fp32 or fp64 (TransformerConfig's Literal); --rerun-mode
 * disabled or validate_results (its default) no effect, report_stats refused.
 * 1: not one of them. */
static int mg_unmodelled_value(const char *key, const char *val, tsl_err_t *err)
{
    static const char *const router_dtypes[] = {"fp32", "fp64"};
    static const char *const rerun_modes[] = {"disabled", "validate_results", "report_stats"};
    size_t i;
    if (strcmp(key, "moe-router-dtype") == 0) {
        if (tsl_parse_choice("megatron: --moe-router-dtype", val, router_dtypes, 2, &i, err) != 0)
            return -1;
        return 1;
    }
    if (strcmp(key, "rerun-mode") == 0) { /* ResilienceConfig's Literal */
        if (tsl_parse_choice("megatron: --rerun-mode", val, rerun_modes, 3, &i, err) != 0)
            return -1;
        if (i < 2)
            return 0; /* a step runs again only after a fault it detects */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: --rerun-mode report_stats: Megatron-LM runs steps "
                            "again to report their variability; Tessel prices each step "
                            "once");
    }
    if (strcmp(key, "num-distributed-optimizer-instances") == 0) {
        uint32_t n;
        if (tsl_parse_u32(key, val ? val : "", 1, 1u << 24, &n, err) != 0)
            return -1;
        if (n > 1)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "megatron: --num-distributed-optimizer-instances %u: Tessel "
                                "prices one distributed-optimizer instance (its states sharded "
                                "over every data-parallel rank)",
                                n);
        return 0;
    }
    return 1;
}

/* The flags read beside the numbers of mg_u32; 1: not one of them. all: every
 * value word of the flag, space-separated (val is the first). */
static int mg_read(const char *key, const char *val, const char *all, tsl_eval_cfg_t *c,
                   mg_state_t *st, tsl_err_t *err)
{
    bool *flag = strcmp(key, "sequence-parallel") == 0           ? &c->sp
                 : strcmp(key, "use-distributed-optimizer") == 0 ? &st->dist_opt
                 : strcmp(key, "recompute-activations") == 0     ? &st->recompute_activations
                 : strcmp(key, "use-torch-fsdp2") == 0           ? &st->fsdp2
                 : strcmp(key, "use-megatron-fsdp") == 0         ? &st->mfsdp
                 : strcmp(key, "account-for-embedding-in-pipeline-split") == 0 ? &c->acct_embed
                 : strcmp(key, "account-for-loss-in-pipeline-split") == 0      ? &c->acct_loss
                 : strcmp(key, "bf16") == 0                                    ? &st->bf16
                 : strcmp(key, "fp16") == 0                                    ? &st->fp16
                 : strcmp(key, "grad-reduce-in-bf16") == 0                     ? &st->grad_bf16
                 : strcmp(key, "accumulate-allreduce-grads-in-fp32") == 0      ? &st->grad_fp32
                 : strcmp(key, "overlap-grad-reduce") == 0                     ? &st->overlap_grad
                 : strcmp(key, "overlap-param-gather") == 0                    ? &st->overlap_param
                 : strcmp(key, "fp8-param-gather") == 0                        ? &st->fp8_param
                 : strcmp(key, "fp4-param-gather") == 0                        ? &st->fp4_param
                 : strcmp(key, "no-gradient-accumulation-fusion") == 0   ? &st->no_accum_fusion
                 : strcmp(key, "tp-comm-overlap") == 0                   ? &st->tp_overlap
                 : strcmp(key, "cross-entropy-loss-fusion") == 0         ? &st->ce_fusion
                 : strcmp(key, "moe-pad-expert-input-to-capacity") == 0  ? &st->pad_capacity
                 : strcmp(key, "use-precision-aware-optimizer") == 0     ? &st->precision_aware
                 : strcmp(key, "moe-layer-recompute") == 0               ? &st->moe_layer_recompute
                 : strcmp(key, "cpu-offloading") == 0                    ? &st->cpu_offloading
                 : strcmp(key, "cpu-offloading-activations") == 0        ? &st->cpu_offloading
                 : strcmp(key, "first-last-layers-bf16") == 0            ? &st->first_last_bf16
                 : strcmp(key, "overlap-moe-expert-parallel-comm") == 0  ? &st->a2a_overlap
                 : strcmp(key, "moe-grouped-gemm") == 0                  ? &st->grouped_gemm
                 : strcmp(key, "moe-permute-fusion") == 0                ? &st->permute_fusion
                 : strcmp(key, "moe-enable-deepep") == 0                 ? &st->enable_deepep
                 : strcmp(key, "no-overlap-p2p-communication") == 0      ? &st->no_p2p_overlap
                 : strcmp(key, "use-transformer-engine-op-fuser") == 0   ? &st->te_op_fuser
                 : strcmp(key, "use-fused-weighted-squared-relu") == 0   ? &st->fused_srelu
                 : strcmp(key, "delay-wgrad-compute") == 0               ? &st->delay_wgrad
                 : strcmp(key, "reuse-grad-buf-for-mxfp8-param-ag") == 0 ? &st->reuse_grad_buf
                                                                         : NULL;
    if (flag) {
        *flag = true;
        return mg_flag_only(key, val, err);
    }
    if (strcmp(key, "recompute-granularity") == 0) {
        st->granularity_set = true;
        if (val && strcmp(val, "full") == 0)
            c->ckpt = TSL_EVAL_CKPT_FULL;
        else if (val && strcmp(val, "selective") == 0)
            c->ckpt = TSL_EVAL_CKPT_SELECTIVE;
        else
            return tsl_err_set(err,
                               "megatron: --recompute-granularity: '%s' is not full or "
                               "selective",
                               val ? val : "");
        return 0;
    }
    if (strcmp(key, "num-layers-at-start-in-bf16") == 0) { /* 0 is Megatron's too */
        st->bf16_start_set = true;
        return tsl_parse_u32(key, val, 0, 1u << 24, &st->bf16_start, err);
    }
    if (strcmp(key, "num-layers-at-end-in-bf16") == 0) {
        st->bf16_end_set = true;
        return tsl_parse_u32(key, val, 0, 1u << 24, &st->bf16_end, err);
    }
    if (strcmp(key, "moe-layer-freq") == 0)
        return mg_moe_freq(val, c, err);
    if (strcmp(key, "window-attn-skip-freq") == 0) /* checked in eval_shape.c */
        return mg_freq(key, val, &c->shape.window_every, c->shape.window_pattern,
                       &c->shape.window_len, err);
    if (strcmp(key, "hybrid-layer-pattern") == 0 || strcmp(key, "hybrid-override-pattern") == 0)
        return mg_hybrid(key, val, c, err);
    if (strcmp(key, "recompute-modules") == 0) { /* nargs '*': every word up to the next flag */
        st->modules_set = true;
        if (tsl_recompute_modules_parse(all, &st->modules, &st->modules_core, err) != 0)
            return tsl_err_prefix(err, "megatron");
        return 0;
    }
    uint8_t *dt = strcmp(key, "exp-avg-dtype") == 0       ? &st->exp_avg
                  : strcmp(key, "exp-avg-sq-dtype") == 0  ? &st->exp_avg_sq
                  : strcmp(key, "main-grads-dtype") == 0  ? &st->main_grads
                  : strcmp(key, "main-params-dtype") == 0 ? &st->main_params
                                                          : NULL;
    if (dt)
        return mg_dtype(key, val, dt, st, err);
    if (strcmp(key, "fp8-format") == 0) {
        if (val == NULL || (strcmp(val, "hybrid") != 0 && strcmp(val, "e4m3") != 0))
            return tsl_err_set(err, "megatron: --fp8-format: '%s' is not e4m3 or hybrid",
                               val ? val : "");
        st->fp8_format = 1;
        st->fp8_e4m3 = strcmp(val, "e4m3") == 0;
        return 0;
    }
    if (strcmp(key, "fp4-format") == 0 || strcmp(key, "fp4-recipe") == 0)
        return mg_fp4(key, val, st, err);
    if (strcmp(key, "cross-entropy-fusion-impl") == 0) {
        if (val == NULL || (strcmp(val, "native") != 0 && strcmp(val, "te") != 0))
            return tsl_err_set(err, "megatron: --%s: '%s' is not native or te", key,
                               val ? val : "");
        st->ce_te = strcmp(val, "te") == 0;
        return 0;
    }
    if (strcmp(key, "attention-backend") == 0)
        return mg_attention_backend(val, c, err);
    if (strcmp(key, "transformer-impl") == 0)
        return mg_transformer_impl(val, c, err);
    if (strcmp(key, "moe-dispatch-fwd-dtype") == 0 || strcmp(key, "moe-combine-bwd-dtype") == 0) {
        if (val == NULL || (strcmp(val, "bf16") != 0 && strcmp(val, "mxfp8") != 0))
            return tsl_err_set(err, "megatron: --%s: '%s' is not bf16 or mxfp8", key,
                               val ? val : "");
        *(key[4] == 'd' ? &st->fp8_dispatch : &st->fp8_combine) = strcmp(val, "mxfp8") == 0;
        return 0;
    }
    if (strcmp(key, "moe-flex-dispatcher-backend") == 0 && val && strcmp(val, "ncclep") != 0) {
        int b = tsl_flex_backend_parse(val); /* ncclep: noted (mg_noted) */
        if (b < 0)
            return tsl_err_set(err,
                               "megatron: --moe-flex-dispatcher-backend: '%s' is not deepep, "
                               "hybridep or ncclep",
                               val);
        st->flex_backend = (uint32_t)b;
        return 0;
    }
    if (strcmp(key, "moe-token-dispatcher-type") == 0) {
        if (val == NULL || (strcmp(val, "alltoall") != 0 && strcmp(val, "allgather") != 0 &&
                            strcmp(val, "flex") != 0))
            return tsl_err_set(err,
                               "megatron: --moe-token-dispatcher-type: '%s' is not allgather, "
                               "alltoall or flex",
                               val ? val : "");
        st->a2a_dispatcher = strcmp(val, "alltoall") == 0;
        st->ag_dispatcher = strcmp(val, "allgather") == 0;
        st->flex_dispatcher = strcmp(val, "flex") == 0;
        return 0;
    }
    if (strcmp(key, "fp8-recipe") == 0) {
        int r = tsl_fp8_recipe_parse(val);
        if (r <= 0 || r == TSL_FP8_NVFP4) /* Megatron-LM's Fp8Recipe; NVFP4 is --fp4-format */
            return tsl_err_set(err,
                               "megatron: --fp8-recipe: '%s' is not delayed, tensorwise, "
                               "blockwise or mxfp8 (NVFP4: --fp4-format e2m1)",
                               val ? val : "");
        st->fp8_recipe = (uint32_t)r;
        return 0;
    }
    if (strcmp(key, "recompute-method") == 0) {
        if (val == NULL || (strcmp(val, "uniform") != 0 && strcmp(val, "block") != 0))
            return tsl_err_set(err, "megatron: --recompute-method: '%s' is not uniform or block",
                               val ? val : "");
        st->method_set = true;
        st->method_block = strcmp(val, "block") == 0;
        return 0;
    }
    if (strcmp(key, "cp-comm-type") == 0) {
        if (val == NULL || strlen(val) >= sizeof st->cp_comm)
            return tsl_err_set(err, "megatron: --cp-comm-type: '%s' is not p2p, a2a or allgather",
                               val ? val : "");
        snprintf(st->cp_comm, sizeof st->cp_comm, "%s", val);
        return 0;
    }
    uint32_t *u = strcmp(key, "context-parallel-size") == 0         ? &st->cp
                  : strcmp(key, "expert-model-parallel-size") == 0  ? &st->ep
                  : strcmp(key, "expert-tensor-parallel-size") == 0 ? &st->etp
                                                                    : NULL;
    if (u)
        return tsl_parse_u32(key, val ? val : "", 1, 1u << 24, u, err);
    if (strcmp(key, "cpu-offloading-num-layers") == 0) /* TransformerConfig's; 0: none */
        return tsl_parse_u32(key, val ? val : "", 0, 1023, &c->knobs.cpu_offload_layers, err);
    if (strcmp(key, "moe-expert-capacity-factor") == 0) /* a float; None: dropless */
        return tsl_parse_double(key, val ? val : "", 1e-6, 1e6, &st->capacity, err);
    if (strcmp(key, "no-masked-softmax-fusion") == 0 || strcmp(key, "no-persist-layer-norm") == 0) {
        st->local_fusion_off = strcmp(key, "no-persist-layer-norm") == 0
                                   ? "no-persist-layer-norm"
                                   : "no-masked-softmax-fusion";
        return mg_flag_only(key, val, err);
    }
    int r = mg_fsdp_read(key, val, st, err);
    if (r <= 0)
        return r;
    if ((r = tsl_eval_cgraph_read(key, val, all, &st->cgraph, err)) <= 0)
        return r;
    if ((r = mg_unmodelled_value(key, val, err)) <= 0)
        return r;
    if (strcmp(key, "optimizer") == 0) {
        if (val == NULL || strcmp(val, "adam") != 0)
            return tsl_err_set(err,
                               "megatron: --optimizer %s: Tessel costs Adam's states "
                               "(--optimizer adam, the default)",
                               val ? val : "");
        return 0;
    }
    return 1;
}

static const char *mg_why(const mg_why_t *t, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(t[i].name, key) == 0)
            return t[i].why;
    return NULL;
}

/* A flag none of the tables above holds: Megatron-LM d98e8a6's own, which may change
 * what runs, is refused rather than priced as if it were absent; any other is not a
 * Megatron-LM argument (a typo: argparse stops the run), named with the flag nearest
 * to it. */
static int mg_unknown(const char *key, tsl_err_t *err)
{
    char near[MG_WORD];
    if (tsl_mg_flag_known(key))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: --%s: a Megatron-LM flag Tessel does not read; it may "
                            "change what runs, so the line is refused rather than priced "
                            "without it (docs/tesselctl.md \"--megatron-args\")",
                            key);
    tsl_mg_flag_nearest(key, near, sizeof near);
    if (near[0])
        return tsl_err_set(err, "megatron: --%s is not a Megatron-LM argument (did you mean --%s?)",
                           key, near);
    return tsl_err_set(err,
                       "megatron: --%s is not a Megatron-LM argument (Megatron-LM d98e8a6's "
                       "parser refuses it: unrecognized arguments)",
                       key);
}

/* One "--key [value]"; val is NULL for a flag, nval the words after the key, all
 * of them space-separated. */
static int mg_arg(const char *key, const char *val, const char *all, unsigned nval,
                  tsl_eval_cfg_t *c, mg_state_t *st, tsl_err_t *err)
{
    const char *why;
    for (size_t i = 0; i < MG_N(mg_u32); i++) {
        if (strcmp(key, mg_u32[i].name) != 0)
            continue;
        if (val == NULL || nval > 1)
            return tsl_err_set(err, "megatron: --%s needs one value", key);
        if (strcmp(key, "recompute-num-layers") == 0)
            st->num_layers_set = true;
        return tsl_parse_u32(key, val, 1, 1u << 24, (uint32_t *)((char *)c + mg_u32[i].offset),
                             err);
    }
    if (strcmp(key, "te-precision-config-file") == 0) {
        if (val == NULL || nval > 1 || !val[0])
            return tsl_err_set(err, "megatron: --%s needs one value (a path)", key);
        snprintf(st->te_prec, sizeof st->te_prec, "%s", val);
        return 0;
    }
    int r = tsl_eval_shape_read(key, val, &c->shape, err);
    if (r <= 0)
        return r;
    if ((r = mg_read(key, val, all, c, st, err)) <= 0)
        return r;
    if ((why = mg_why(mg_refused, MG_N(mg_refused), key)) != NULL)
        return tsl_err_set(err, "megatron: --%s %s", key, why);
    if ((why = mg_why(mg_noted, MG_N(mg_noted), key)) != NULL) {
        tsl_eval_cfg_note(c, "megatron: --%s: %s", key, why);
        return 0;
    }
    if ((why = mg_why(mg_unmodelled, MG_N(mg_unmodelled), key)) != NULL) {
        tsl_eval_cfg_note(c, "megatron: --%s: not modelled by Tessel (%s)", key, why);
        return 0;
    }
    for (size_t i = 0; i < MG_N(mg_no_effect); i++)
        if (strcmp(key, mg_no_effect[i]) == 0)
            return 0;
    return mg_unknown(key, err);
}

/* Recompute as Megatron-LM d98e8a6 takes it: --recompute-activations is
 * selective (validate_args); full needs a method and a layer count, selective
 * neither (TransformerConfig.__post_init__, validate_args). */
static int mg_recompute(tsl_eval_cfg_t *c, const mg_state_t *st, tsl_err_t *err)
{
    if (st->recompute_activations)
        c->ckpt = TSL_EVAL_CKPT_SELECTIVE;
    if (st->moe_layer_recompute && c->ckpt == TSL_EVAL_CKPT_FULL)
        return tsl_err_set(err, "megatron: --moe-layer-recompute with --recompute-granularity "
                                "full (Megatron-LM refuses it)");
    if (st->moe_layer_recompute && c->ckpt == TSL_EVAL_CKPT_NONE)
        c->ckpt = TSL_EVAL_CKPT_SELECTIVE;
    if (c->ckpt == TSL_EVAL_CKPT_FULL && !st->method_set)
        return tsl_err_set(err, "megatron: --recompute-granularity full needs --recompute-method "
                                "block or uniform (Megatron-LM refuses it without)");
    if (c->ckpt == TSL_EVAL_CKPT_FULL && !st->num_layers_set)
        return tsl_err_set(err, "megatron: --recompute-granularity full needs "
                                "--recompute-num-layers (Megatron-LM refuses it without)");
    if (c->ckpt == TSL_EVAL_CKPT_SELECTIVE && (st->method_set || st->num_layers_set))
        return tsl_err_set(err,
                           "megatron: selective recompute takes no --%s (Megatron-LM "
                           "refuses it)",
                           st->method_set ? "recompute-method" : "recompute-num-layers");
    if (c->ckpt == TSL_EVAL_CKPT_NONE && (st->method_set || st->num_layers_set))
        tsl_eval_cfg_note(c, "megatron: --recompute-method/--recompute-num-layers without "
                             "--recompute-granularity: no recompute, as in Megatron-LM");
    /* uniform (its num-layers is a chunk size there) recomputes every layer */
    if (c->ckpt == TSL_EVAL_CKPT_FULL && !st->method_block)
        c->ckpt_uniform_chunk = c->ckpt_per_stage;
    if (!st->method_block || c->ckpt != TSL_EVAL_CKPT_FULL)
        c->ckpt_per_stage = 0;
    /* TransformerConfig: modules default to [core_attn], used by selective only;
     * --moe-layer-recompute is selective with moe added */
    if (c->ckpt == TSL_EVAL_CKPT_SELECTIVE) {
        bool core = st->modules_set ? st->modules_core : true;
        c->knobs.recompute_modules =
            (st->modules_set ? st->modules : 0) | (st->moe_layer_recompute ? TSL_RECOMPUTE_MOE : 0);
        if (!core) /* the layers' +selckpt is core_attn */
            c->ckpt = TSL_EVAL_CKPT_NONE;
    } else if (st->modules_set) {
        tsl_eval_cfg_note(c, "megatron: --recompute-modules without --recompute-granularity "
                             "selective: not used, as in Megatron-LM");
    }
    return 0;
}

/* The precision-aware optimizer (Megatron-LM d98e8a6 OptimizerConfig and
 * validate_args): with --use-distributed-optimizer only; its moments in 16 bits
 * (--exp-avg-dtype and --exp-avg-sq-dtype bf16 or fp16: bf16_moments, both or
 * neither: Tessel prices the pair); main gradients fp32 or bf16 (the latter the
 * 2-byte reduce, mg_knobs); an fp32 master. The dtypes need the optimizer. */
static int mg_optimizer(tsl_eval_cfg_t *c, const mg_state_t *st, tsl_err_t *err)
{
    if (!st->precision_aware) {
        if (st->exp_avg || st->exp_avg_sq || st->main_grads || st->main_params)
            return tsl_err_set(err, "megatron: --exp-avg-dtype, --exp-avg-sq-dtype, "
                                    "--main-grads-dtype and --main-params-dtype other than fp32 "
                                    "need --use-precision-aware-optimizer (Megatron-LM)");
        return 0;
    }
    if (!st->dist_opt && !st->mfsdp) /* Megatron-FSDP v1 turns it on (validate_args) */
        return tsl_err_set(err, "megatron: --use-precision-aware-optimizer only supported with "
                                "distributed optimizer (Megatron-LM); add "
                                "--use-distributed-optimizer");
    if (st->grad_fp32 && st->main_grads)
        return tsl_err_set(err, "megatron: --main-grads-dtype can only be fp32 when "
                                "--accumulate-allreduce-grads-in-fp32 is set (Megatron-LM)");
    if (st->main_params)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: --main-params-dtype fp16: Tessel prices an fp32 master "
                            "only");
    if (st->exp_avg == 1 || st->exp_avg_sq == 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: --exp-avg%s-dtype fp8: Tessel prices Adam's moments in "
                            "fp32 or 16 bits",
                            st->exp_avg == 1 ? "" : "-sq");
    if (st->exp_avg != st->exp_avg_sq)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: --exp-avg-dtype %s with --exp-avg-sq-dtype %s: Tessel "
                            "prices both moments in fp32 or both in 16 bits",
                            st->exp_avg ? "16-bit" : "fp32", st->exp_avg_sq ? "16-bit" : "fp32");
    c->knobs.bf16_moments = st->exp_avg == 2;
    return 0;
}

/* Gradient precision and overlap as Megatron-LM d98e8a6 sets them
 * (validate_args, megatron/training/arguments.py): --bf16 accumulates and
 * reduces main gradients in fp32 unless --grad-reduce-in-bf16; --fp16 in fp16
 * unless --accumulate-allreduce-grads-in-fp32; --overlap-grad-reduce and
 * --overlap-param-gather default off, the latter needing the former and the
 * distributed optimizer; the backward's TP collectives under the column-parallel
 * gradient GEMMs always (tensor_parallel/layers.py: the async dgrad all-reduce,
 * or SP's reduce-scatter and input re-gather; no flag turns it off). */
static int mg_knobs(tsl_eval_cfg_t *c, const mg_state_t *st, tsl_err_t *err)
{
    if (st->bf16 && st->fp16)
        return tsl_err_set(err, "megatron: --bf16 and --fp16: no more than one (Megatron-LM)");
    /* neither: fp32 training (params_dtype stays torch.float, arguments.py at d98e8a6
     * validate_args), its fp32 matmuls without TF32 (Megatron-LM leaves PyTorch's
     * allow_tf32 at its False default: knobs.tf32_off) */
    c->knobs.fp32 = !st->bf16 && !st->fp16;
    c->knobs.tf32_off = c->knobs.fp32;
    c->knobs.fp16 = st->fp16; /* --fp16: fp16 mixed precision, its loss scaler (cost.h) */
    if (mg_optimizer(c, st, err) != 0)
        return -1;
    /* --main-grads-dtype bf16 leaves the accumulation in bf16 like --grad-reduce-in-bf16 */
    bool fp32 = st->fp16 ? st->grad_fp32 : !st->grad_bf16 && st->main_grads == 0;
    c->knobs.grad_reduce_bytes = fp32 ? 4 : 0;
    c->knobs.grad_reduce_exposed = !st->overlap_grad;
    if (st->overlap_param && !st->dist_opt && !st->mfsdp)
        return tsl_err_set(err, "megatron: --overlap-param-gather needs "
                                "--use-distributed-optimizer or --use-megatron-fsdp "
                                "(Megatron-LM)");
    if (st->overlap_param && !st->overlap_grad && !st->mfsdp) /* FSDP forces it on */
        return tsl_err_set(err, "megatron: --overlap-param-gather needs --overlap-grad-reduce "
                                "(Megatron-LM)");
    c->knobs.overlap_param_gather = st->overlap_param;
    c->knobs.overlap_tp_dgrad = true;
    /* without the fused wgrad accumulation the DDP hook adds each micro-batch's
     * gradient into main_grad (distributed/distributed_data_parallel.py) */
    c->knobs.unfused_grad_accum = st->no_accum_fusion;
    /* its optimizer step (opt_step.h): Megatron-core's MixedPrecisionOptimizer, to
     * which --fp16's loss scaler adds the unscale and inf check over the main
     * gradients (megatron-core-fp16, as --target megatron prices an fp16 plan:
     * tsl_knobs_fp16); Megatron-LM 2021-22's step is --opt-step megatron-fp16 */
    c->knobs.opt_step = st->fp16 ? TSL_OPT_STEP_MEGATRON_CORE_FP16 : TSL_OPT_STEP_MEGATRON;
    /* FP8 (Megatron-LM: --fp8-format turns it on, --fp8-recipe defaults to delayed),
     * every recipe through Transformer Engine (fp8_impl.h; tensorwise is TE's
     * Float8CurrentScaling, megatron/core/fp8_utils.py);
     * FP4 (--fp4-format: NVFP4, its weights in FP4 with --fp4-param-gather) */
    if (st->fp4_format && st->fp8_format)
        return tsl_err_set(err, "megatron: --fp4-format and --fp8-format cannot be used "
                                "together (Megatron-LM validate_args)");
    if (st->fp4_param && !st->fp4_format)
        return tsl_err_set(err, "megatron: --fp4-param-gather must be used together with "
                                "--fp4-format (Megatron-LM validate_args)");
    if (st->fp8_format)
        c->knobs.fp8 = st->fp8_recipe ? st->fp8_recipe : TSL_FP8_DELAYED;
    else if (st->fp8_recipe)
        tsl_eval_cfg_note(c, "megatron: --fp8-recipe without --fp8-format: bf16, as in "
                             "Megatron-LM");
    if (st->fp4_format)
        c->knobs.fp8 = TSL_FP8_NVFP4;
    else if (st->fp4_recipe)
        tsl_eval_cfg_note(c, "megatron: --fp4-recipe without --fp4-format: bf16, as in "
                             "Megatron-LM");
    c->knobs.fp8_param_gather = st->fp4_format ? st->fp4_param : st->fp8_param && c->knobs.fp8;
    /* DistributedDataParallelConfig asserts it: "Reuse grad buffer only when keeping
     * params in MXFP8." (Megatron-LM d98e8a6) */
    if (st->reuse_grad_buf && !st->fp8_param)
        return tsl_err_set(err, "megatron: --reuse-grad-buf-for-mxfp8-param-ag needs "
                                "--fp8-param-gather (Megatron-LM refuses it without)");
    /* MXFP8 weights under the distributed optimizer without the flag: Megatron-LM d98e8a6
     * maps every quantized weight into its param buffer (param_and_grad_buffer.py,
     * modify_underlying_storage -> TE's replace_raw_data), which TransformerEngine (since
     * 868138937, 2025-03; still at d0067d0) does not implement for MXFP8Tensor
     * (NotImplementedError): the run stops building its DDP buffers, so it has no time */
    if (c->knobs.fp8 == TSL_FP8_MXFP8 && c->knobs.fp8_param_gather && st->dist_opt && !st->mfsdp &&
        !st->reuse_grad_buf)
        return tsl_err_set(err, "megatron: --fp8-recipe mxfp8 --fp8-param-gather under "
                                "--use-distributed-optimizer needs "
                                "--reuse-grad-buf-for-mxfp8-param-ag: without it Megatron-LM "
                                "maps the MXFP8 weights into its param buffer, which "
                                "TransformerEngine refuses (replace_raw_data: MXFP8Tensor not "
                                "supported)");
    if (st->fp4_format && st->fp8_param)
        tsl_eval_cfg_note(c, "megatron: --fp8-param-gather with --fp4-format: the weights "
                             "are FP4 only with --fp4-param-gather");
    c->knobs.fp8_impl = TSL_FP8_IMPL_TE;
    if (mg_bf16_layers(c, st, err) != 0)
        return -1;
    /* the LM loss (loss_impl.h, LanguageModule.compute_language_model_loss): Megatron's
     * vocab_parallel_cross_entropy; its native fusion under torch.compile with
     * --cross-entropy-loss-fusion (megatron-fused); TE's parallel_cross_entropy with
     * --cross-entropy-fusion-impl te beside it */
    c->knobs.loss_impl = !st->ce_fusion ? TSL_LOSS_MEGATRON
                         : st->ce_te    ? TSL_LOSS_TE
                                        : TSL_LOSS_MEGATRON_FUSED;
    if (st->ce_te && !st->ce_fusion)
        tsl_eval_cfg_note(c, "megatron: --cross-entropy-fusion-impl te without "
                             "--cross-entropy-loss-fusion: the unfused loss (loss_impl megatron), "
                             "as in Megatron-LM");
    /* the flex dispatcher's MXFP8 wire (TransformerConfig moe_dispatch_fwd_dtype /
     * moe_combine_bwd_dtype): priced as one knob, the dispatch and the combine's gradient */
    c->knobs.moe_fp8_dispatch = (st->fp8_dispatch || st->fp8_combine) && c->knobs.fp8;
    if (st->fp8_dispatch != st->fp8_combine && c->knobs.fp8)
        tsl_eval_cfg_note(c, "megatron: --moe-dispatch-fwd-dtype and --moe-combine-bwd-dtype "
                             "differ: both priced in FP8");
    /* the all-to-all dispatcher's own pieces (knobs.moe_alltoall): what the line runs, as
     * target megatron prices what Tessel's megatron export writes (alltoall without an
     * FP8 dispatch) */
    c->knobs.moe_alltoall = st->a2a_dispatcher && !c->knobs.moe_fp8_dispatch;
    /* the flex dispatcher's all-to-alls (knobs.moe_flex): one network copy per token and
     * destination domain, whichever backend */
    c->knobs.moe_flex = st->flex_dispatcher;
    /* its back end (TransformerConfig moe_flex_dispatcher_backend; --moe-enable-deepep
     * names deepep): HybridEP's routing-map gather priced on hybridep's. Without the flex
     * dispatcher Megatron-LM reads none: noted */
    c->knobs.moe_flex_backend = st->flex_dispatcher ? st->flex_backend : 0;
    if (st->enable_deepep && st->flex_dispatcher) {
        if (st->flex_backend == TSL_FLEX_HYBRIDEP)
            return tsl_err_set(err, "megatron: --moe-enable-deepep with "
                                    "--moe-flex-dispatcher-backend hybridep: only one backend is "
                                    "supported for flex token dispatcher (Megatron-LM "
                                    "TransformerConfig)");
        c->knobs.moe_flex_backend = TSL_FLEX_DEEPEP;
    }
    if (st->flex_backend && !st->flex_dispatcher)
        tsl_eval_cfg_note(c, "megatron: --moe-flex-dispatcher-backend without "
                             "--moe-token-dispatcher-type flex: read by no dispatcher");
    /* the EP all-to-all overlap (knobs.moe_a2a_overlap); --delay-wgrad-compute is what
     * the overlap runs with (Megatron-Bridge's presets set both) */
    c->knobs.moe_a2a_overlap = st->a2a_overlap;
    c->knobs.moe_a2a_wgrad_inline = st->a2a_overlap && !st->delay_wgrad;
    c->delay_wgrad = st->delay_wgrad;
    /* TE's op fuser runs the experts' MLP fused only over grouped GEMMs (Megatron-LM
     * TransformerConfig: use_transformer_engine_op_fuser with moe_grouped_gemm); without
     * them its experts run the unfused path (docs/cost-model.md "Mixture of experts") */
    c->knobs.moe_fused_mlp = st->te_op_fuser && st->grouped_gemm;
    /* the weighted squared ReLU fused: TEGroupedMLP's bias_act_func reads it (experts.py
     * at 44151194), the grouped GEMMs' path (docs/cost-model.md "The fused weighted
     * squared ReLU") */
    c->knobs.moe_fused_srelu = st->fused_srelu && st->grouped_gemm;
    /* the token permutation: unfused unless --moe-permute-fusion (TransformerConfig
     * moe_permute_fusion False; moe_utils.py permute / unpermute then gather, scatter and
     * weigh the rows each with its own kernel, whichever dispatcher). Priced as
     * knobs.moe_unfused_permute, MCore v0.8's pieces: assumed alike, d98e8a6's unfused
     * path selects the rows by the routing mask where v0.8 sorted them (docs/cost-model.md
     * "Mixture of experts"); dropped for a model without experts (tsl_eval_cfg_plan) */
    c->knobs.moe_unfused_permute = !st->permute_fusion;
    if (st->te_op_fuser && !st->grouped_gemm)
        tsl_eval_cfg_note(c, "megatron: --use-transformer-engine-op-fuser without "
                             "--moe-grouped-gemm: the experts priced unfused");
    if (st->ag_dispatcher)
        tsl_eval_cfg_note(c, "megatron: --moe-token-dispatcher-type allgather is priced as "
                             "the permutation and two all-to-alls");
    if ((st->fp8_dispatch || st->fp8_combine) && !c->knobs.fp8)
        tsl_eval_cfg_note(c, "megatron: an MXFP8 dispatch without --fp8-format: priced bf16");
    if (st->fp8_e4m3)
        tsl_eval_cfg_note(c, "megatron: --fp8-format e4m3 is priced as hybrid (the same "
                             "GEMM rate and casts)");
    if (st->cpu_offloading && !c->knobs.cpu_offload_layers)
        tsl_eval_cfg_note(c, "megatron: --cpu-offloading without --cpu-offloading-num-layers: "
                             "no layer offloaded (TransformerConfig's default, 0)");
    return 0;
}

/* What TransformerConfig (Megatron-LM d98e8a6) asserts beside
 * --overlap-moe-expert-parallel-comm, and --delay-wgrad-compute without it: a line
 * Megatron-LM refuses is refused here, naming the flag and the reason. The dispatcher
 * defaults to allgather there. Called once the recompute is read (mg_recompute). */
static int mg_a2a_overlap(const tsl_eval_cfg_t *c, const mg_state_t *st, tsl_err_t *err)
{
    static const char pre[] = "megatron: --overlap-moe-expert-parallel-comm";
    const char *why = NULL;
    if (st->delay_wgrad && !st->a2a_overlap)
        return tsl_err_set(err, "megatron: --delay-wgrad-compute needs "
                                "--overlap-moe-expert-parallel-comm (Megatron-LM refuses it "
                                "without)");
    if (!st->a2a_overlap)
        return 0;
    if (st->ep <= 1)
        why = "needs --expert-model-parallel-size > 1";
    else if (!st->a2a_dispatcher && !st->flex_dispatcher)
        why = "needs --moe-token-dispatcher-type alltoall or flex (the default is allgather)";
    else if (c->pp > 1 && c->interleave <= 1 && !c->vpp_blocks)
        why = "at --pipeline-model-parallel-size > 1 needs a virtual pipeline "
              "(--num-layers-per-virtual-pipeline-stage or "
              "--num-virtual-stages-per-pipeline-rank)";
    else if (c->ckpt == TSL_EVAL_CKPT_FULL)
        why = "is refused beside --recompute-granularity full";
    else if (c->knobs.recompute_modules & TSL_RECOMPUTE_MOE)
        why = "is refused with moe recomputed (--recompute-modules moe, --moe-layer-recompute)";
    else if (c->mtp_layers > 1)
        why = "runs with at most one MTP depth (--mtp-num-layers)";
    return why ? tsl_err_set(err, "%s %s (Megatron-LM's TransformerConfig)", pre, why) : 0;
}

/*
 * Megatron-FSDP as Megatron-LM d98e8a6 runs it (validate_args; megatron_fsdp.py,
 * mcore_fsdp_adapter.py): --ckpt-format fsdp_dtensor asserted either way; v1 turns
 * the distributed optimizer on; optim_grads_params (the default) shards weights,
 * gradients and optimizer states over every data-parallel (and CP) rank — SDP the
 * rest of a stage — and turns --overlap-param-gather and --overlap-grad-reduce on
 * (knobs.overlap_param_gather on an SDP level: cost model 74). Its main gradients are
 * the parameters' dtype unless --megatron-fsdp-main-grads-dtype says (FP8 weights':
 * bf16), reduced in that dtype unless --megatron-fsdp-grad-comm-dtype says; the
 * grad_reduce_in_fp32 of --bf16 is not read. The other sharding strategies (ZeRO-1/2
 * through Megatron-FSDP's buffers) are not read.
 */
static int mg_fsdp_finish(tsl_eval_cfg_t *c, const mg_state_t *st, tsl_err_t *err)
{
    if (st->fsdp_dtensor && !st->mfsdp)
        return tsl_err_set(err, "megatron: --ckpt-format fsdp_dtensor is only tested with "
                                "Megatron FSDP (Megatron-LM); add --use-megatron-fsdp");
    if (!st->mfsdp) {
        if (st->fsdp_mode || st->fsdp_grads || st->fsdp_comm)
            tsl_eval_cfg_note(c, "megatron: --data-parallel-sharding-strategy and "
                                 "--megatron-fsdp-*-dtype without --use-megatron-fsdp: not "
                                 "used, as in Megatron-LM");
        return 0;
    }
    if (!st->fsdp_dtensor)
        return tsl_err_set(err, "megatron: --use-megatron-fsdp needs --ckpt-format "
                                "fsdp_dtensor (\"Megatron-FSDP requires the `fsdp_dtensor` "
                                "checkpointing format\", Megatron-LM)");
    if (st->fsdp_mode)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: --data-parallel-sharding-strategy %s: Tessel reads "
                            "Megatron-FSDP's optim_grads_params (the default) only",
                            mg_fsdp_modes[st->fsdp_mode]);
    uint8_t grads = st->fsdp_grads ? st->fsdp_grads : c->knobs.fp32 ? 1 : 2;
    uint8_t comm = st->fsdp_comm ? st->fsdp_comm : grads;
    if (comm != grads)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: --megatron-fsdp-grad-comm-dtype %s with %s main "
                            "gradients: Tessel prices the reduce in the main gradients' dtype",
                            comm == 1 ? "fp32" : "16-bit", grads == 1 ? "fp32" : "16-bit");
    c->knobs.grad_reduce_bytes = grads == 1 ? 4 : 0;
    c->knobs.grad_reduce_exposed = false;
    c->knobs.overlap_param_gather = true;
    c->sdp_rest = true;
    return 0;
}

/* --no-overlap-p2p-communication as Megatron-LM d98e8a6 takes it (validate_args): the
 * interleaved schedule's stage sends waited on in turn, at PP > 2 only; without
 * interleaving overlap_p2p_comm is off anyway. Tessel prices the interleaved hops
 * overlapped (Megatron-core's default, docs/cost-model.md "Between stages"): noted as
 * not modelled. Called once the interleave is known. */
static int mg_p2p_overlap(tsl_eval_cfg_t *c, const mg_state_t *st, tsl_err_t *err)
{
    if (!st->no_p2p_overlap || (c->interleave <= 1 && !c->vpp_blocks))
        return 0;
    if (c->pp <= 2)
        return tsl_err_set(err, "megatron: --no-overlap-p2p-communication: when interleaved "
                                "schedule is used and p2p communication overlap is disabled, "
                                "pipeline-model-parallel size should be greater than 2 "
                                "(Megatron-LM)");
    tsl_eval_cfg_note(c, "megatron: --no-overlap-p2p-communication: not modelled by Tessel (the "
                         "interleaved schedule's stage sends waited on; priced overlapped)");
    return 0;
}

/* The checks Megatron-LM's validate_args makes on what the line set together. */
static int mg_finish(tsl_eval_cfg_t *c, const mg_state_t *st, tsl_err_t *err)
{
    /* --no-masked-softmax-fusion and --no-persist-layer-norm reach Megatron-LM's local
     * modules only (FusedScaleMaskSoftmax, FusedLayerNorm); Transformer Engine's
     * attention and norms do not read them */
    if (st->local_fusion_off && c->local_impl)
        tsl_eval_cfg_note(c,
                          "megatron: --%s: not modelled by Tessel (the local modules' "
                          "eager softmax or norm; priced as their fused kernels)",
                          st->local_fusion_off);
    if (st->cp > 1) { /* TransformerEngine's CP attention, --cp-comm-type (default p2p) */
        /* TE's spelling all_gather, which runs; Megatron-LM's help text's allgather
         * reaches TE verbatim, which raises on it (docs/exports.md "megatron") */
        bool te_ag = strcmp(st->cp_comm, "all_gather") == 0;
        if (strcmp(st->cp_comm, "allgather") == 0)
            tsl_eval_cfg_note(c, "megatron: --cp-comm-type allgather: TransformerEngine runs "
                                 "all_gather and raises \"Unsupported communication type\" on "
                                 "allgather; priced as all_gather");
        int comm = tsl_cp_comm_parse(te_ag ? "allgather" : st->cp_comm[0] ? st->cp_comm : "p2p");
        if (comm < 0 || comm == TSL_CP_TORCH_AG) /* torch's, not a Megatron type */
            return tsl_err_set(err,
                               "megatron: --cp-comm-type %s: Tessel prices p2p, a2a and "
                               "all_gather (one type for every layer; not a2a+p2p)",
                               st->cp_comm);
        c->knobs.cp = st->cp;
        c->knobs.cp_comm = (uint32_t)comm;
    }
    if (st->ep > 1) /* the MoE layers' experts over EP ranks at stride etp */
        c->knobs.ep = st->ep;
    /* expert TP: as given, else the attention's (Megatron-LM validate_args), set
     * once the model says whether it has experts (tsl_eval_cfg_plan) */
    c->knobs.etp = st->etp > 1 ? st->etp : 0;
    c->etp_follows_tp = st->etp == 0;
    if (st->pad_capacity && !(st->capacity > 0))
        return tsl_err_set(err, "megatron: --moe-pad-expert-input-to-capacity needs "
                                "--moe-expert-capacity-factor (Megatron-LM)");
    c->knobs.moe_capacity = st->capacity;
    c->knobs.moe_pad = st->pad_capacity;
    /* --moe-enable-deepep: TransformerConfig's deprecated spelling of the flex backend
     * deepep (knobs.moe_flex_backend above) */
    if (st->enable_deepep && !st->flex_dispatcher)
        return tsl_err_set(err, "megatron: --moe-enable-deepep: DeepEP backend is only supported "
                                "with flex token dispatcher (Megatron-LM TransformerConfig); add "
                                "--moe-token-dispatcher-type flex");
    if (mg_hybrid_split(c, err) != 0)
        return -1;
    if (c->vpp_blocks && c->interleave)
        return tsl_err_set(err, "megatron: --num-layers-per-virtual-pipeline-stage and "
                                "--num-virtual-stages-per-pipeline-rank: no more than one "
                                "(Megatron-LM)");
    if (c->interleave == 1)
        c->interleave = 0; /* Megatron: a single virtual stage is no interleaving */
    if (mg_p2p_overlap(c, st, err) != 0)
        return -1;
    if ((c->acct_embed || c->acct_loss) && (c->first_blocks || c->last_blocks))
        return tsl_err_set(err, "megatron: --account-for-embedding/loss-in-pipeline-split with "
                                "--decoder-first/last-pipeline-num-layers is not read by Tessel");
    if (st->fsdp2 && st->mfsdp) /* DistributedInitConfig: "Cannot be used together" */
        return tsl_err_set(err, "megatron: --use-megatron-fsdp and --use-torch-fsdp2: no more "
                                "than one");
    if (st->fsdp2 && c->pp > 1)
        return tsl_err_set(err, "megatron: --use-torch-fsdp2 is not supported with pipeline "
                                "parallelism (Megatron-LM)");
    if (st->fsdp2 && st->dist_opt)
        return tsl_err_set(err, "megatron: --use-torch-fsdp2 is not supported with MCore's "
                                "distributed optimizer (Megatron-LM)");
    if (st->fsdp2) /* FSDP2 shards over the data-parallel ranks: SDP the rest */
        c->sdp_rest = true;
    c->zero = st->dist_opt && !st->mfsdp ? 1 : 0;
    if (mg_knobs(c, st, err) != 0 || mg_fsdp_finish(c, st, err) != 0)
        return -1;
    /* the distributed optimizer runs at DP 1 too (an FP8 line's --fp8-param-gather needs
     * it), the same states; not under MXFP8 with FP8 weights, whose bf16 gather through
     * the gradient buffer is priced with ZeRO-1 over several ranks only (cost.c
     * mxfp8_bf16_param_ag): refused there as before */
    c->zero_one_rank = !(c->knobs.fp8 == TSL_FP8_MXFP8 && c->knobs.fp8_param_gather);
    if (c->sp && c->tp <= 1) {
        c->sp = false;
        tsl_eval_cfg_note(c, "megatron: --sequence-parallel with tensor-model-parallel-size 1: "
                             "switched off, as Megatron-LM does (\"Disabling sequence "
                             "parallelism because tensor model parallelism is disabled\")");
    }
    /* TE's userbuffers under each SP collective (arguments.py asserts SP with it) */
    if (st->tp_overlap && !c->sp)
        return tsl_err_set(err, "megatron: --tp-comm-overlap needs --sequence-parallel (and "
                                "TP > 1): \"Tensor parallel communication/GEMM overlap can "
                                "happen only when sequence parallelism is enabled\" "
                                "(Megatron-LM)");
    c->knobs.tp_comm_overlap = st->tp_overlap;
    if (tsl_target_tp_comm_overlap_ok(c->knobs.fp8, c->knobs.tp_comm_overlap, err) != 0)
        return tsl_err_prefix(err, "megatron: --tp-comm-overlap with --fp4-format e2m1");
    if (mg_recompute(c, st, err) != 0 || tsl_eval_cgraph_finish(&st->cgraph, c, err) != 0)
        return -1;
    return mg_a2a_overlap(c, st, err);
}

/* --te-precision-config-file: the per-module precision (megatron_te_prec.h) of the
 * line's recipe and MTP depths, into knobs.module_prec. An `--export megatron` text
 * carries the file as its "#| " lines: where the line has them, they are the file, read
 * in its place; otherwise the path is read, relative to the current directory. "#| "
 * lines without the flag are noted (Megatron-LM reads no file). Called once the line
 * is finished. */
static int mg_te_prec(tsl_eval_cfg_t *c, const mg_state_t *st, const char *args, tsl_err_t *err)
{
    char *lines, what[MG_WORD + 48];
    if (tsl_megatron_te_prec_embedded(args, &lines) != 0)
        return tsl_err_setc(err, TSL_E_NOMEM, "megatron: --te-precision-config-file: no memory");
    if (!st->te_prec[0]) {
        if (lines)
            tsl_eval_cfg_note(c, "megatron: '#| ' lines without --te-precision-config-file: not "
                                 "read (Megatron-LM reads no per-module precision file)");
        free(lines);
        return 0;
    }
    uint32_t prec = 0;
    int rc;
    if (lines) {
        snprintf(what, sizeof what, "%s (the '#| ' lines)", st->te_prec);
        rc = tsl_megatron_te_prec_parse(lines, strlen(lines), what, c->knobs.fp8, c->mtp_layers,
                                        &prec, err);
    } else {
        rc = tsl_megatron_te_prec_read(st->te_prec, c->knobs.fp8, c->mtp_layers, &prec, err);
    }
    free(lines);
    if (rc != 0)
        return -1;
    /* no FP8/FP4 recipe: Megatron-LM overrides quantized modules only
     * (override_nonquantized_autocast false), so the file changes nothing */
    if (prec && c->knobs.fp8 == TSL_FP8_NONE) {
        tsl_eval_cfg_note(c, "megatron: --te-precision-config-file without --fp8-format or "
                             "--fp4-format: its overrides apply inside a quantized autocast "
                             "only, so nothing is overridden");
        return 0;
    }
    /* as the export refuses it (export_megatron.c): the overrides are matched after
     * initialization, so --fp8-param-gather builds FP8 weights for them too */
    if (prec && c->knobs.fp8_param_gather)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: --te-precision-config-file with --fp8-param-gather: "
                            "Megatron-LM matches the per-module overrides after initialization, "
                            "so FP8 weights would be built for the overridden modules as well, "
                            "which Tessel does not price");
    c->knobs.module_prec = prec;
    return 0;
}

int tsl_eval_cfg_megatron(const char *args, tsl_eval_cfg_t *out, tsl_err_t *err)
{
    static const char unterminated[] = "megatron: an unterminated quote";
    char key[MG_WORD], val[MG_WORD], next[MG_WORD], all[MG_WORD];
    const char *p = args;
    mg_state_t st = {0};
    int have = next_word(&p, key, sizeof key);
    memset(out, 0, sizeof(*out));
    out->even_blocks = true;
    out->mtp_read = true; /* Megatron-LM builds MTP depths only with --mtp-num-layers */
    /* no word at all (--megatron-args "", an unset shell variable, comments alone)
     * would price Megatron-LM's defaults as if a line had asked for them */
    if (have == 0)
        return tsl_err_set(err, "megatron: --megatron-args: no arguments (empty, blank or '#' "
                                "comments only); give the launch line's, e.g. "
                                "\"--tensor-model-parallel-size 8 --micro-batch-size 1\"");
    while (have > 0) {
        if (strncmp(key, "--", 2) != 0)
            return tsl_err_set(err, "megatron: '%s' is not an --argument", key);
        const char *v = NULL;
        unsigned nval = 0;
        char *eq = strchr(key, '=');
        all[0] = '\0';
        if (eq) {
            *eq = '\0';
            snprintf(val, sizeof val, "%s", eq + 1);
            snprintf(all, sizeof all, "%s", eq + 1);
            v = val;
            nval = 1;
        }
        /* every word up to the next --flag is a value (nargs='+': --data-path a b) */
        while ((have = next_word(&p, next, sizeof next)) > 0 && strncmp(next, "--", 2) != 0) {
            if (nval++ == 0)
                snprintf(val, sizeof val, "%s", next);
            size_t n = strlen(all), w = strlen(next);
            if (n + 1 + w < sizeof all) { /* a longer list is cut, as a word is */
                if (n)
                    all[n++] = ' ';
                memcpy(all + n, next, w + 1);
            }
            v = val;
        }
        if (have < 0)
            return tsl_err_set(err, unterminated);
        if (mg_arg(key + 2, v, all, nval, out, &st, err) != 0)
            return -1;
        memcpy(key, next, sizeof key);
    }
    if (have < 0)
        return tsl_err_set(err, unterminated);
    if (out->hybrid_mtp_depths) { /* Megatron infers --mtp-num-layers from the pattern */
        if (out->mtp_layers && out->mtp_layers != out->hybrid_mtp_depths)
            tsl_eval_cfg_note(out,
                              "--mtp-num-layers %u conflicts with the %u MTP depths of "
                              "--hybrid-layer-pattern: the pattern's, as Megatron-LM takes them",
                              out->mtp_layers, out->hybrid_mtp_depths);
        out->mtp_layers = out->hybrid_mtp_depths;
    }
    if (out->mtp_layers > TSL_MTP_MAX_DEPTHS)
        return tsl_err_set(err, "megatron: --mtp-num-layers: %u depths; Tessel models 1..%u",
                           out->mtp_layers, TSL_MTP_MAX_DEPTHS);
    if (mg_finish(out, &st, err) != 0)
        return -1;
    return mg_te_prec(out, &st, args, err);
}

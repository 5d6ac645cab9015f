/*
 * export_megatron.c — a plan as Megatron-LM launch arguments (pretrain_gpt.py,
 * megatron/training/arguments.py names), one argument per line after '#'
 * comment lines.
 *
 * Megatron-LM's space is planner/target_rules.c's (tsl_export checks it first):
 * one strategy on consecutive GPUs (rank order tp, dp, pp), with
 * --sequence-parallel and --use-distributed-optimizer (ZeRO-1) when the plan has
 * them, or Megatron-FSDP (--use-megatron-fsdp) for an SDP level; uneven first/last stages (--decoder-first/last-pipeline-num-layers);
 * full recompute of the first N layers of every model chunk (--recompute-method
 * block) or of all (uniform, 1), or selective recompute; interleaving through
 * --num-layers-per-virtual-pipeline-stage, with the embedding and/or the loss
 * counted as a layer (--account-for-embedding/loss-in-pipeline-split), or
 * --num-virtual-stages-per-pipeline-rank under uneven first/last stages. A hybrid
 * Mamba model (Nemotron-H, Nemotron 3) as pretrain_hybrid.py's --hybrid-layer-pattern
 * (write_hybrid). Megatron-core's per-layer CUDA graphs by name under Transformer Engine's
 * impl (write_cuda_graphs).
 */
#include <stdbool.h>
#include <string.h>

#include "cuda_graph.h"
#include "export.h"
#include "loss_impl.h"
#include "module_prec.h"
#include "mtp.h"
#include "pipeline.h"

/* What builds the same model but no cost reads (tsl_target_megatron_shapes
 * refuses what Megatron-LM cannot take): --rotary-base (an int in Megatron-LM,
 * default 10000), --norm-epsilon (default 1e-5), Llama 3's RoPE scaling. */
/* Whether the plan trains in fp16 under Megatron-LM (--fp16): an fp16 plan, or one
 * priced with the 2021-22 fp16 optimizer's step. */
static bool megatron_fp16(const tsl_plan_t *p)
{
    return p->fp16 || p->opt_step == TSL_OPT_STEP_MEGATRON_FP16;
}

/* A plan priced for a GPU where Transformer Engine does not run (plan.h
 * stack_unfused_attn: V100, T4, Turing): Megatron-LM's own modules, whose core attention is
 * the unfused DotProductAttention (baddbmm, FusedScaleMaskSoftmax, dropout, bmm: no s x s
 * saved, what the plan priced) and whose norms are apex's or torch's
 * (megatron/core/models/backends.py LocalSpecProvider at d98e8a6). RoPE's fused kernel
 * is Transformer Engine's (rope_utils.py imports fused_apply_rotary_pos_emb from
 * megatron.core.extensions.transformer_engine and asserts "apply_rope_fusion is not
 * available" without it), on by default (--no-rope-fusion's store_false): turned off. */
static void write_local_impl(const tsl_export_view_t *v, FILE *out)
{
    if (!v->plan->stack_unfused_attn)
        return;
    fputs("--transformer-impl local\n", out);
    if (!v->model->layers[0].positions)
        fputs("--no-rope-fusion\n", out);
}

/* A plan priced with the unfused core on a GPU Transformer Engine runs on (--unfused-attn:
 * the model's layers unfused_attn): TE's DotProductAttention would pick its fused or
 * flash kernel, so the line asks for its unfused one (Megatron-LM's AttnBackend.unfused:
 * language_module.py sets NVTE_FLASH_ATTN=0, NVTE_FUSED_ATTN=0, NVTE_UNFUSED_ATTN=1, at
 * d98e8a6). Under --transformer-impl local the core is unfused already. */
static void write_attention_backend(const tsl_export_view_t *v, FILE *out)
{
    if (v->plan->stack_unfused_attn)
        return;
    for (uint32_t i = 0; i < v->model->n_layers; i++)
        if (v->model->layers[i].unfused_attn) {
            fputs("--attention-backend unfused\n", out);
            return;
        }
}

/* YaRN: under MLA its rope_type (MLATransformerConfig fixes the rest); elsewhere
 * GPTModel's --position-embedding-type yarn (written by write_model in place of rope)
 * with every parameter (target_rules.c megatron_rope; argument_utils.py
 * _apply_yarn_config_from_args at d98e8a6, whose defaults — original context 4096,
 * betas 32 / 1, the range rounded — are written anyway, so the line says the model). */
static void write_yarn(const tsl_model_t *m, FILE *out)
{
    const tsl_model_rope_t *r = &m->rope;
    if (tsl_model_mla_layers(m)) {
        fprintf(out,
                "--rope-type yarn\n--rotary-scaling-factor %.15g\n--mscale %.15g\n"
                "--mscale-all-dim %.15g\n",
                r->scaling_factor, r->mscale, r->mscale_all_dim);
        return;
    }
    fprintf(out,
            "--rotary-scaling-factor %.15g\n--yarn-original-max-position-embeddings %u\n"
            "--yarn-beta-fast %.15g\n--yarn-beta-slow %.15g\n--mscale %.15g\n"
            "--mscale-all-dim %.15g\n%s",
            r->scaling_factor, r->original_max_positions, r->beta_fast, r->beta_slow, r->mscale,
            r->mscale_all_dim,
            r->yarn_no_truncate ? "--no-yarn-correction-range-round-to-int\n"
                                : "--yarn-correction-range-round-to-int\n");
}

static void write_rope(const tsl_model_t *m, FILE *out)
{
    if (m->layers[0].positions == 0 && m->rope.base > 0.0 && !m->hybrid)
        fprintf(out, "--rotary-base %.0f\n", m->rope.base);
    if (m->norm_eps > 0.0)
        fprintf(out, "--norm-epsilon %g\n", m->norm_eps);
    if (m->rope.scaling == TSL_ROPE_SCALING_LLAMA3)
        fprintf(out, "--use-rope-scaling\n--rope-scaling-factor %g\n", m->rope.scaling_factor);
    if (m->rope.scaling == TSL_ROPE_SCALING_YARN)
        write_yarn(m, out);
}

/* Whether GPTModel's blocks have YaRN RoPE of their own (not MLA's rope_type). */
static bool gpt_yarn(const tsl_model_t *m)
{
    return m->rope.scaling == TSL_ROPE_SCALING_YARN && !tsl_model_mla_layers(m) &&
           m->layers[0].positions == 0;
}

/* The sliding window (target_rules.c megatron_windows: one causal window of w keys):
 * --window-size w - 1,0 and, unless every block has it, --window-attn-skip-freq: N
 * where the full-attention blocks are exactly those whose 1-based number N divides
 * (gpt-oss: 2), else the 0/1 list (1: windowed) as runs, the way write_moe_freq
 * writes its pattern. */
static void write_windows(const tsl_export_view_t *v, FILE *out)
{
    const tsl_layer_t *b = &v->model->layers[1];
    uint32_t w = 0, windowed = 0, every = 0;
    for (uint32_t i = 0; i < v->n_blocks; i++)
        if (b[i].attn_window)
            w = b[i].attn_window, windowed++;
    if (!windowed || v->model->hybrid)
        return;
    fprintf(out, "--window-size %u,0\n", w - 1);
    if (windowed == v->n_blocks)
        return;
    for (uint32_t n = 2; n <= v->n_blocks && !every; n++) {
        bool fits = true;
        for (uint32_t i = 0; i < v->n_blocks && fits; i++)
            fits = (b[i].attn_window != 0) == ((i + 1) % n != 0);
        every = fits ? n : 0;
    }
    if (every) {
        fprintf(out, "--window-attn-skip-freq %u\n", every);
        return;
    }
    fputs("--window-attn-skip-freq '(", out);
    for (uint32_t i = 0, run; i < v->n_blocks; i += run) {
        bool on = b[i].attn_window != 0;
        for (run = 1; i + run < v->n_blocks && (b[i + run].attn_window != 0) == on;)
            run++;
        fprintf(out, "%s[%d]*%u", i ? "+" : "", on, run);
    }
    fputs(")'\n", out);
}

/* The gated FFN's activation: SwiGLU (--swiglu), or gpt-oss's clamped one (model.h
 * glu_limit): Megatron-LM's --quick-geglu (quick_gelu, x·σ(1.702·x), gated) with
 * --glu-linear-offset 1 (the linear half + 1) and --activation-func-clamp-value
 * (the gate clamped from above, the linear half both ways: experts.py glu, mlp.py,
 * at d98e8a6) — what Megatron-Bridge's gpt_oss_bridge.py sets. */
static void write_activation(const tsl_model_t *m, const tsl_layer_t *f, FILE *out)
{
    if (!f->gated_ffn)
        return;
    if (m->glu_limit > 0.0)
        fprintf(out, "--quick-geglu\n--glu-linear-offset 1\n--activation-func-clamp-value %.15g\n",
                m->glu_limit);
    else
        fputs("--swiglu\n", out);
}

/* The attention's and FFN's form beyond the shape (model.h tsl_model_t, the layers'
 * no_dropout; TransformerConfig at d98e8a6, whose fields ArgumentGroupFactory makes
 * flags): --qk-layernorm (a norm of head_dim on Q and K, of --normalization's type;
 * under MLA the latent norms before the Q and KV up-projections, which Tessel's MLA
 * always has: gpt_layer_specs.py fuses them into the up-projections only with it),
 * --qk-l2-norm (Llama 4's weightless one), --softmax-type learnable (gpt-oss's sink
 * logit per head), --squared-relu (of FFN f), and Megatron-LM's dropout of 0.1 turned off
 * where the model has none (the stash was priced without its masks). */
static void write_form(const tsl_model_t *m, const tsl_layer_t *l, const tsl_layer_t *f, FILE *out)
{
    if (m->qk_norm == TSL_QK_NORM_PER_HEAD || l->kv_lora_rank)
        fputs("--qk-layernorm\n", out);
    else if (m->qk_norm == TSL_QK_NORM_L2)
        fputs("--qk-l2-norm\n", out);
    if (m->attn_sinks)
        fputs("--softmax-type learnable\n", out);
    if (m->relu2 && !f->gated_ffn)
        fputs("--squared-relu\n", out);
    if (l->no_dropout)
        fputs("--attention-dropout 0\n--hidden-dropout 0\n", out);
}

/* The router (model.h "Routing"; moe_utils.py topk_routing_with_score_function):
 * softmax over the top-k logits (the top k renormalised) by default, over all E
 * first with --moe-router-pre-softmax (not renormalised); a sigmoid's top k
 * renormalised whenever k > 1; the score-correction bias, the scale, and the group
 * limit (a group scored by its best topk / group-topk scores summed). */
static void write_router(const tsl_layer_t *l, FILE *out)
{
    if (l->router_score == TSL_ROUTER_SIGMOID)
        fputs("--moe-router-score-function sigmoid\n", out);
    else if (!l->router_norm)
        fputs("--moe-router-pre-softmax\n", out);
    if (l->router_bias == TSL_ROUTER_BIAS_CHOICE)
        fputs("--moe-router-enable-expert-bias\n", out);
    if (l->router_scale > 0.0 && l->router_scale != 1.0)
        fprintf(out, "--moe-router-topk-scaling-factor %.17g\n", l->router_scale);
    if (l->router_groups > 1)
        fprintf(out, "--moe-router-num-groups %u\n--moe-router-group-topk %u\n", l->router_groups,
                l->router_topk_groups);
    if (l->shared_expert_gate)
        fputs("--moe-shared-expert-gate\n", out);
}

/* What of the model's form Megatron-LM cannot build (the exporter refuses rather
 * than write a line that builds another model; docs/exports.md "Model fidelity"). */
static int check_form(const tsl_model_t *m, const tsl_layer_t *l, const tsl_layer_t *moe,
                      tsl_err_t *err)
{
    if (m->qk_norm == TSL_QK_NORM_FULL)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: qk_norm: %s normalises Q and K over the whole projection "
                            "(OLMo 2); Megatron-LM's --qk-layernorm normalises each head",
                            m->name);
    if (l->parallel_block)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: parallel_block: %s runs attention and FFN in parallel on "
                            "one input (GPT-NeoX, Falcon, Phi); Megatron-LM's TransformerLayer "
                            "runs them one after the other",
                            m->name);
    if (l->alibi || m->layers[0].embed_norm)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: alibi: %s biases its scores with ALiBi and normalises "
                            "its embedding (BLOOM); Megatron-LM has neither (Megatron-DeepSpeed's "
                            "--position-embedding-type alibi --embed-layernorm)",
                            m->name);
    /* --quick-geglu and its clamp are TransformerConfig's, for every FFN (mlp.py and
     * experts.py alike): a dense FFN without the clamp beside clamped experts is not
     * one line's model */
    for (uint32_t i = 1; moe && moe->glu_clamp && i + 1 < m->n_layers; i++)
        if (m->layers[i].ffn_hidden && !m->layers[i].glu_clamp)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "megatron: glu_clamp: %s clamps its experts' gated activation "
                                "but not layer %u's FFN; Megatron-LM's "
                                "--activation-func-clamp-value clamps every FFN",
                                m->name, i);
    if (!moe || !moe->experts)
        return 0;
    uint32_t k = moe->experts_per_tok;
    bool sigmoid = moe->router_score == TSL_ROUTER_SIGMOID;
    if (sigmoid && moe->router_norm != (k > 1))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: router_norm: %s weighs its top-%u sigmoid scores %s; "
                            "Megatron-LM renormalises them exactly when top-k > 1",
                            m->name, k, moe->router_norm ? "renormalised" : "as they are");
    if (!sigmoid && k == 1 && moe->router_norm)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: router_norm: %s weighs its one softmax expert by 1; "
                            "Megatron-LM takes top-1 softmax routing only with "
                            "--moe-router-pre-softmax, which weighs it by its probability",
                            m->name);
    if (moe->router_bias == TSL_ROUTER_BIAS_CHOICE && !sigmoid)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: router_bias: %s corrects softmax scores with a bias; "
                            "Megatron-LM's --moe-router-enable-expert-bias takes sigmoid scores "
                            "only (TransformerConfig)",
                            m->name);
    uint32_t per_group = moe->router_bias == TSL_ROUTER_BIAS_CHOICE ? 2 : 1;
    if (moe->router_groups > 1 &&
        (!moe->router_topk_groups || k != per_group * moe->router_topk_groups))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: router_groups: %s scores each of its %u groups by its "
                            "best %u score%s; Megatron-LM sums the best top-k / group-topk = "
                            "%u / %u",
                            m->name, moe->router_groups, per_group, per_group > 1 ? "s" : "", k,
                            moe->router_topk_groups);
    return 0;
}

/* Multi-head latent attention and routed experts (docs/exports.md "Mixture of
 * experts"; Megatron-LM arguments.py _add_moe_args, _add_mla_args): the plan's EP
 * and expert TP (written also at 1: Megatron's default is the attention TP), its
 * capacity factor and padding; the grouped GEMM, as priced. An FP8 dispatch is the
 * flex dispatcher's ncclep backend with MXFP8 on the wire both ways Tessel prices
 * (TransformerConfig moe_dispatch_fwd_dtype / moe_combine_bwd_dtype, which need it,
 * the grouped GEMM and the TE op fuser). */

static void write_moe(const tsl_export_view_t *v, const tsl_layer_t *l, FILE *out)
{
    if (l->kv_lora_rank) {
        fputs("--multi-latent-attention\n", out);
        if (l->q_lora_rank)
            fprintf(out, "--q-lora-rank %u\n", l->q_lora_rank);
        fprintf(out,
                "--kv-lora-rank %u\n--qk-head-dim %u\n--qk-pos-emb-head-dim %u\n"
                "--v-head-dim %u\n",
                l->kv_lora_rank, l->qk_nope_dim, l->qk_rope_dim, l->v_head_dim);
    }
    if (!l->experts)
        return;
    const tsl_plan_t *p = v->plan;
    uint32_t ep = p->ep > 1 ? p->ep : 1, etp = p->etp > 1 ? p->etp : 1;
    fprintf(out,
            "--num-experts %u\n--moe-router-topk %u\n--moe-ffn-hidden-size %u\n"
            "--moe-grouped-gemm\n--moe-token-dispatcher-type %s\n"
            "--expert-model-parallel-size %u\n"
            "--expert-tensor-parallel-size %u\n",
            l->experts, l->experts_per_tok, l->ffn_hidden,
            p->moe_fp8_dispatch || p->moe_flex ? "flex" : "alltoall", ep, etp);
    /* the back end priced (moe_flex_backend); unset, Megatron-LM's default, deepep — but
     * DeepEP raises on padding to capacity (TransformerConfig: "Flex token dispatcher with
     * deepep backend does not support moe_pad_expert_input_to_capacity"), HybridEP pads
     * (_HybridEPManager drop_and_pad): cost.h tsl_flex_backend_of */
    if (p->moe_flex && !p->moe_fp8_dispatch)
        fprintf(out, "--moe-flex-dispatcher-backend %s\n",
                tsl_flex_backend_name(
                    tsl_flex_backend_of(p->moe_flex, p->moe_flex_backend, p->moe_pad)));
    /* the permutation as priced: Megatron-LM's default is the unfused one
     * (TransformerConfig moe_permute_fusion False), what moe_unfused_permute prices */
    if (!p->moe_unfused_permute)
        fputs("--moe-permute-fusion\n", out);
    /* the experts' MLP through TE's op fuser, as priced (an FP8 dispatch writes it below) */
    if (p->moe_fused_mlp && !p->moe_fp8_dispatch)
        fputs("--use-transformer-engine-op-fuser\n", out);
    if (p->moe_fused_srelu) /* the routing weights inside the fused squared ReLU, as priced */
        fputs("--use-fused-weighted-squared-relu\n", out);
    if (tsl_plan_ep_overlap_runs(v->plan)) { /* what the overlap runs with, as priced */
        fputs("--overlap-moe-expert-parallel-comm\n", out);
        if (!p->moe_a2a_wgrad_inline)
            fputs("--delay-wgrad-compute\n", out);
    } else if (p->moe_a2a_overlap) {
        fprintf(out,
                "# moe_a2a_overlap not written: Megatron-LM runs "
                "--overlap-moe-expert-parallel-comm only with EP > 1, at PP > 1 interleaved, "
                "and without full recompute (TransformerConfig); the plan (EP %u, PP %u%s) "
                "was priced with its all-to-alls exposed\n",
                ep, v->pp, p->interleave > 1 ? ", interleaved" : "");
    }
    if (p->moe_fp8_dispatch)
        fputs("--moe-flex-dispatcher-backend ncclep\n--use-transformer-engine-op-fuser\n"
              "--moe-dispatch-fwd-dtype mxfp8\n--moe-combine-bwd-dtype mxfp8\n",
              out);
    if (p->moe_bf16_experts) /* no flag keeps them out of TE's FP8 */
        fputs("# priced with the routed experts' GEMMs in bf16 (Megatron-LM runs them in FP8 "
              "with --fp8-format: faster than priced)\n",
              out);
    if (p->moe_capacity > 0)
        fprintf(out, "--moe-expert-capacity-factor %.17g\n%s", p->moe_capacity,
                p->moe_pad ? "--moe-pad-expert-input-to-capacity\n" : "");
    if (l->moe_latent) /* the routed experts' width in and out (model.h "Latent MoE") */
        fprintf(out, "--moe-latent-size %u\n", l->moe_latent);
    if (l->shared_experts)
        fprintf(out, "--moe-shared-expert-intermediate-size %u\n",
                l->shared_experts * (l->shared_ffn_hidden ? l->shared_ffn_hidden : l->ffn_hidden));
    write_router(l, out);
}

/* Which layers have experts when some are dense (DeepSeek's first layers), as
 * Megatron-LM's moe_freq_type evaluates it: runs of [0]*n / [1]*n joined by +,
 * single-quoted for the shell ("([0]*3+[1]*58)"). Nothing when every layer
 * has experts (Megatron's default 1). */
static void write_moe_freq(const tsl_export_view_t *v, FILE *out)
{
    const tsl_layer_t *b = &v->model->layers[1];
    uint32_t moe = 0;
    for (uint32_t i = 0; i < v->n_blocks; i++)
        moe += b[i].experts > 0;
    if (moe == 0 || moe == v->n_blocks || v->model->hybrid) /* a hybrid's pattern says */
        return;
    fputs("--moe-layer-freq '(", out);
    for (uint32_t i = 0, run; i < v->n_blocks; i += run) {
        for (run = 1; i + run < v->n_blocks && (b[i + run].experts > 0) == (b[i].experts > 0);)
            run++;
        fprintf(out, "%s[%d]*%u", i ? "+" : "", b[i].experts > 0, run);
    }
    fputs(")'\n", out);
}

/* The MTP depths (mtp.h): Megatron-LM's --mtp-num-layers; a repeated depth's
 * weights (mtp_use_repeated_layer) are a TransformerConfig field without a flag. */
static void write_mtp(const tsl_model_t *m, FILE *out)
{
    uint32_t d = tsl_mtp_depths(m);
    if (d == 0)
        return;
    fprintf(out, "--mtp-num-layers %u\n", d);
    if (tsl_mtp_repeated(m))
        fputs("# mtp_use_repeated_layer: depths 2.. reuse depth 1's weights (TransformerConfig "
              "field; no flag)\n",
              out);
}

/*
 * A hybrid (model.h tsl_model_t.hybrid) as Megatron-LM d98e8a6 builds it
 * (HybridModel, pretrain_hybrid.py; pretrain_mamba.py is its deprecated wrapper):
 * --hybrid-layer-pattern, one character a block (tsl_layer_hybrid_char; the pattern
 * fixes --num-layers, arguments.py validate_args), then per MTP depth '/' and the
 * depth's blocks (hybrid_layer_allocation.py parse_hybrid_pattern). An interleaved
 * pipeline plan's stages and model chunks are '|' segments, segment j·P + r rank r's
 * chunk j (tsl_target_megatron_hybrid_segments: the check passed, so each builds the
 * blocks priced), interleaved or not: each segment is one stage of any length, so
 * uneven middle stages are written as priced, and Megatron-LM's pipe-free split
 * (deprecated at d98e8a6: select_pipeline_segment warns) is not used. validate_args
 * derives the virtual stages from their count (P·v; v 1 without interleaving), and no
 * --num-layers-per-virtual-pipeline-stage or --decoder-first/last-pipeline-num-layers
 * goes beside them (it asserts so; write_split). The MTP depths follow the last
 * segment after '/' (parse_hybrid_pattern counts '|' in the main part only).
 * The Mamba mixers' widths as TransformerConfig fields (mamba_state_dim 128,
 * mamba_head_dim 64, mamba_num_groups 8, mamba_num_heads hidden x 2 / head_dim when
 * not given), written always; no position embedding (examples/mamba/train.sh,
 * Megatron-Bridge's nemotron_h_bridge.py: "Mamba doesn't use position embeddings").
 */
static void write_hybrid(const tsl_export_view_t *v, FILE *out)
{
    const tsl_model_t *m = v->model;
    const tsl_layer_t *s = NULL;
    uint32_t seg[TSL_PLAN_MAX_STAGES * TSL_PIPELINE_MAX_CHUNKS] = {0}, k = 0, end = v->n_blocks;
    bool pipes = v->pp > 1 && tsl_target_megatron_hybrid_segments(m, v->pp, v->plan->interleave,
                                                                  v->stage_count, seg, NULL) == 0;
    if (pipes)
        end = seg[0];
    fputs("--hybrid-layer-pattern ", out);
    for (uint32_t i = 1; i <= v->n_blocks; i++) {
        if (pipes && i > end) { /* segment k is done: the next starts */
            fputc('|', out);
            end += seg[++k];
        }
        fputc(tsl_layer_hybrid_char(&m->layers[i]), out);
        if (!s && m->layers[i].kind == TSL_LAYER_MAMBA)
            s = &m->layers[i];
    }
    for (uint32_t i = v->n_blocks + 1; i + 1 < m->n_layers; i++) {
        const tsl_layer_t *l = &m->layers[i];
        if (l->kind == TSL_LAYER_MTP)
            fputc('/', out);
        else if (tsl_model_is_block(m, i) || (l->mtp_depth && l->kind != TSL_LAYER_HEAD))
            fputc(tsl_layer_hybrid_char(l), out);
    }
    fputs("\n--position-embedding-type none\n", out);
    if (s)
        fprintf(out,
                "--mamba-state-dim %u\n--mamba-head-dim %u\n--mamba-num-groups %u\n"
                "--mamba-num-heads %u\n",
                s->ssm_state, s->ssm_head_dim, s->ssm_groups, s->ssm_heads);
}

/* The first block with attention heads and the first with an FFN: layer 1 of a
 * GPT-style model, a hybrid's first '*' and first '-' or 'E'. */
static const tsl_layer_t *first_block(const tsl_export_view_t *v, bool attn)
{
    const tsl_layer_t *b = &v->model->layers[1];
    for (uint32_t i = 0; i < v->n_blocks; i++)
        if (attn ? b[i].heads && b[i].kind != TSL_LAYER_MAMBA : b[i].ffn_hidden > 0)
            return &b[i];
    return b;
}

static void write_model(const tsl_export_view_t *v, FILE *out)
{
    const tsl_layer_t *e = &v->model->layers[0], *b = &v->model->layers[1];
    const tsl_layer_t *h = &v->model->layers[v->model->n_layers - 1];
    const tsl_layer_t *l = first_block(v, true), *f = first_block(v, false);
    /* --ffn-hidden-size: the dense layers' width (a model without one: the first
     * FFN's, as before); the MoE layers' goes to --moe-ffn-hidden-size */
    const tsl_layer_t *dense = f, *moe = f;
    for (uint32_t i = v->n_blocks; i-- > 0;)
        if (b[i].ffn_hidden)
            *(b[i].experts ? &moe : &dense) = &b[i];
    fprintf(out,
            "--num-layers %u\n--hidden-size %u\n--ffn-hidden-size %u\n"
            "--num-attention-heads %u\n--seq-length %u\n--max-position-embeddings %u\n",
            v->n_blocks, l->hidden, dense->ffn_hidden, l->heads, l->seq_len,
            e->positions ? e->positions : l->seq_len);
    if (l->attn_dim && l->attn_dim != l->hidden)
        fprintf(out, "--kv-channels %u\n", l->attn_dim / l->heads);
    if (l->kv_heads && l->kv_heads != l->heads)
        fprintf(out, "--group-query-attention\n--num-query-groups %u\n", l->kv_heads);
    if (v->model->hybrid)
        write_hybrid(v, out);
    else if (!e->positions)
        fprintf(out, "--position-embedding-type %s\n", gpt_yarn(v->model) ? "yarn" : "rope");
    write_windows(v, out);
    write_activation(v->model, f, out);
    if (l->rms_norm)
        fputs("--normalization RMSNorm\n", out);
    if (l->no_bias)
        fputs("--disable-bias-linear\n", out);
    if (v->model->qkv_bias)
        fputs("--add-qkv-bias\n", out);
    write_rope(v->model, out);
    write_form(v->model, l, f, out);
    write_moe(v, moe, out);
    write_moe_freq(v, out);
    if (!h->tied_head && h->params)
        fputs("--untie-embeddings-and-output-weights\n", out);
    write_mtp(v->model, out);
    /* an fp16 plan (plan.h fp16: asked, or on a GPU without bf16), or one priced with
     * the 2021-22 fp16 optimizer's step (opt_step megatron-fp16, read from a --fp16
     * line), trains in fp16 under Megatron's dynamic loss scaler (its defaults) */
    if (!v->plan->fp32) /* fp32 training: neither (params_dtype stays torch.float) */
        fputs(megatron_fp16(v->plan) ? "--fp16\n" : "--bf16\n", out);
    write_local_impl(v, out);
    write_attention_backend(v, out);
}

/* The stages' Transformer layers as Megatron-LM splits them (target.h
 * tsl_target_megatron_vp): even, uneven first/last stages, and interleaved with
 * the embedding and/or the loss counted as a layer. */
static void write_split(const tsl_export_view_t *v, FILE *out)
{
    const tsl_plan_t *p = v->plan;
    tsl_target_megatron_vp_t vp = {0};
    bool uneven = false;
    for (uint32_t s = 1; s < v->pp; s++)
        uneven |= v->stage_blocks[s] != v->stage_blocks[0];
    if (v->pp > 1 && v->model->hybrid) /* '|' segments say it (write_hybrid) */
        return;
    if (p->interleave > 1)
        tsl_target_megatron_vp(v, &vp, NULL); /* the check passed: it fills vp */
    if (vp.kind == TSL_TARGET_VP_ACCOUNT) {
        if (vp.acct_embed)
            fputs("--account-for-embedding-in-pipeline-split\n", out);
        if (vp.acct_loss)
            fputs("--account-for-loss-in-pipeline-split\n", out);
        fprintf(out, "--num-layers-per-virtual-pipeline-stage %u\n", vp.per_chunk);
        return;
    }
    if (uneven)
        fprintf(out,
                "--decoder-first-pipeline-num-layers %u\n"
                "--decoder-last-pipeline-num-layers %u\n",
                v->stage_blocks[0], v->stage_blocks[v->pp - 1]);
    /* arguments.py asserts --num-virtual-stages-per-pipeline-rank under uneven stages */
    if (p->interleave > 1 && uneven)
        fprintf(out, "--num-virtual-stages-per-pipeline-rank %u\n", p->interleave);
    else if (p->interleave > 1)
        fprintf(out, "--num-layers-per-virtual-pipeline-stage %u\n",
                v->stage_blocks[0] / p->interleave);
}

/* An SDP level as Megatron-FSDP (target_rules.c megatron_fsdp_ok; Megatron-LM d98e8a6):
 * every data-parallel rank shards weights, gradients and optimizer states
 * (optim_grads_params, the flag's default, written to say so); v1 runs the
 * distributed optimizer (validate_args sets it, with a warning when not given) and
 * asserts --ckpt-format fsdp_dtensor; optim_grads_params turns the two overlaps on
 * (megatron_fsdp.py), written as the plan was priced (check_knobs). Its main
 * gradients are the parameters' dtype unless told (MixedPrecisionPolicy
 * main_grads_dtype None; FP8 weights' bf16: param_and_grad_buffer.py
 * _resolve_group_grad_dtype), reduced in that dtype (grad_comm_dtype None):
 * --megatron-fsdp-main-grads-dtype fp32 where the plan reduces 4-byte gradients
 * (--accumulate-allreduce-grads-in-fp32 and --grad-reduce-in-bf16 set
 * DistributedDataParallelConfig.grad_reduce_in_fp32, which Megatron-FSDP does not
 * read). */
static void write_fsdp(const tsl_plan_t *p, const tsl_export_uniform_t *u, FILE *out)
{
    if (u->sdp <= 1)
        return;
    fputs("--use-megatron-fsdp\n--data-parallel-sharding-strategy optim_grads_params\n"
          "--use-distributed-optimizer\n--ckpt-format fsdp_dtensor\n",
          out);
    if (p->grad_reduce_bytes == 4 && !p->fp32)
        fputs("--megatron-fsdp-main-grads-dtype fp32\n", out);
}

/* A plan with FP8 weights (fp8_param_gather) and no data-parallel rank: Megatron-LM
 * takes --fp8-param-gather only beside the distributed optimizer or Megatron-FSDP
 * (validate_args; --fp4-param-gather has no such assert), and the distributed optimizer
 * over one rank shards nothing (the states as priced); target_rules.c refuses the plans
 * with replicas it would not run. */
static bool fp8_weights_dist_opt(const tsl_plan_t *p, const tsl_export_uniform_t *u)
{
    return p->fp8_recipe && p->fp8_recipe != TSL_FP8_NVFP4 && p->fp8_param_gather && !u->s.zero &&
           u->sdp <= 1 && u->dp <= 1 && u->cp <= 1;
}

static void write_parallel(const tsl_export_view_t *v, const tsl_export_uniform_t *u,
                           uint32_t ckpt_k, FILE *out)
{
    const tsl_plan_t *p = v->plan;
    fprintf(out,
            "--tensor-model-parallel-size %u\n--pipeline-model-parallel-size %u\n"
            "--micro-batch-size %u\n--global-batch-size %u\n",
            u->tp, v->pp, u->micro_per_rank, p->global_batch);
    write_split(v, out);
    if (p->interleave > 1 && p->vp_group) /* Megatron's default is pp: written when not */
        fprintf(out, "--microbatch-group-size-per-virtual-pipeline-stage %u\n", p->vp_group);
    if (u->s.sp)
        fputs("--sequence-parallel\n", out);
    /* TE's userbuffers: Megatron-LM takes them with SP only, and so were they priced */
    if (u->s.sp && p->tp_comm_overlap)
        fputs("--tp-comm-overlap\n", out);
    /* TransformerEngine's context-parallel attention (docs/exports.md), which takes the
     * type verbatim from Megatron-LM: TE spells the all-gather "all_gather" and raises
     * "Unsupported communication type" on Megatron's help text's "allgather"
     * (context_parallel.py:5110/5139 at TE d0067d0da) */
    if (u->cp > 1)
        fprintf(out, "--context-parallel-size %u\n--cp-comm-type %s\n", u->cp,
                p->cp_comm == TSL_CP_ALLGATHER ? "all_gather" : tsl_cp_comm_name(p->cp_comm));
    if (u->s.zero || fp8_weights_dist_opt(p, u))
        fputs("--use-distributed-optimizer\n", out);
    write_fsdp(p, u, out);
    /* MXFP8 weights under the distributed optimizer were priced gathered in bf16 through
     * the gradient buffer and cast after the gather (cost.c mxfp8_bf16_param_ag, what
     * Megatron-Bridge requires); Megatron-LM does that with this flag only, and without
     * it maps the MXFP8 weights into its param buffer (param_and_grad_buffer.py) through
     * TE's replace_raw_data, which refuses MXFP8Tensor: that line would not run */
    if (u->s.zero && p->fp8_recipe == TSL_FP8_MXFP8 && p->fp8_param_gather)
        fputs("--reuse-grad-buf-for-mxfp8-param-ag\n", out);
    if (u->s.selective || p->recompute_modules) {
        fputs("--recompute-granularity selective\n", out);
        if (p->recompute_modules) { /* beside Megatron's default, core_attn, where the plan has it */
            fputs(u->s.selective ? "--recompute-modules core_attn" : "--recompute-modules", out);
            for (uint32_t i = 0; i < TSL_RECOMPUTE_COUNT; i++)
                if (p->recompute_modules & (1u << i))
                    fprintf(out, " %s", tsl_recompute_module_name(i));
            fputc('\n', out);
        }
    } else if (u->ckpt_blocks == v->n_blocks)
        fputs("--recompute-granularity full\n--recompute-method uniform\n"
              "--recompute-num-layers 1\n",
              out);
    else if (u->ckpt_blocks)
        fprintf(out,
                "--recompute-granularity full\n--recompute-method block\n"
                "--recompute-num-layers %u\n",
                ckpt_k);
}

/* Gradient precision and overlap as the plan was priced (plan.h; Megatron-LM
 * d98e8a6 validate_args): --bf16 reduces fp32 main gradients unless
 * --grad-reduce-in-bf16; --overlap-grad-reduce and --overlap-param-gather
 * default off. Megatron-LM keeps an fp32 master in every bf16 run. */
static int check_knobs(const tsl_export_uniform_t *u, const tsl_plan_t *p, tsl_err_t *err)
{
    if (p->no_fp32_master)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: the plan has no fp32 master weights; Megatron-LM's "
                            "bf16 optimizer always keeps them (plan it with --target megatron)");
    /* Megatron's grad buffer is its reduce's dtype (param_and_grad_buffer.py grad_dtype:
     * fp32 under grad_reduce_in_fp32, else the parameters'): no narrower buffer cast for
     * the collective, which the plan was priced with */
    if (p->grad_buf_bytes && p->grad_buf_bytes != (p->grad_reduce_bytes == 4 ? 4u : 2u))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: the plan keeps %u-byte gradients reduced in %u bytes "
                            "(grad_buf_bytes); Megatron-LM's grad buffer is the reduce's dtype "
                            "(plan it without --grad-buf-bytes)",
                            p->grad_buf_bytes, p->grad_reduce_bytes == 4 ? 4u : 2u);
    if (p->legacy_p2p)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: the plan was priced with Megatron-LM's pipeline p2p "
                            "before Megatron-core (legacy_p2p: scatter/gather, blocking hops), "
                            "which today's Megatron-LM does not run (plan it without "
                            "--legacy-p2p)");
    if (p->recompute_modules & ~TSL_RECOMPUTE_ALL)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: the plan names a recompute module this build does not "
                            "know");
    if (p->recompute_modules && u->ckpt_blocks)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: the plan recomputes modules beside full recompute of "
                            "%u layers; Megatron-LM takes one --recompute-granularity",
                            u->ckpt_blocks);
    if (p->moe_fp8_dispatch && p->moe_capacity > 0) /* token_dispatcher.py _NCCLEPManager */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: moe_fp8_dispatch: the FP8 dispatch runs the flex "
                            "dispatcher's ncclep backend, which Megatron-LM runs without a "
                            "capacity factor (the plan has %g); plan it without "
                            "--moe-capacity-factor",
                            p->moe_capacity);
    if (tsl_module_prec_check(p->module_prec, err) != 0) /* a hand-made plan's nibbles */
        return -1;
    if (p->module_prec && p->fp8_recipe == TSL_FP8_NONE) /* as eval refuses it */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: module_precision: per-module precision on a plan without "
                            "FP8; Megatron-LM overrides only quantized modules "
                            "(override_nonquantized_autocast false)");
    /* TransformerEngineMixedPrecision.md "Limitations" at d98e8a64dd: the overrides are
       matched after initialization, so FP8 weights (fp8_model_init) would be built for
       the overridden modules too, where the plan prices their own precision's weights */
    if (p->module_prec && p->fp8_param_gather)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: module_precision with fp8_param_gather: Megatron-LM "
                            "matches the per-module overrides after initialization, so "
                            "--fp8-param-gather would build FP8 weights for the overridden "
                            "modules as well; plan it without one of the two");
    if (p->lazy_grads)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: the plan's memory counts its gradients from each "
                            "chunk's first backward (lazy_grads, PyTorch FSDP); Megatron-LM "
                            "keeps its gradient buffer all along and would need more");
    if (p->bf16_moments && !u->s.zero)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: bf16 Adam moments need Megatron-LM's precision-aware "
                            "optimizer, which runs with the distributed optimizer only; the "
                            "plan has no ZeRO-1");
    if (p->overlap_param_gather && u->sdp <= 1 && (!u->s.zero || p->grad_reduce_exposed))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: --overlap-param-gather needs the distributed optimizer "
                            "and --overlap-grad-reduce (Megatron-LM); the plan has %s",
                            u->s.zero ? "the gradient reduce exposed" : "no ZeRO-1");
    return 0;
}

/* What TransformerConfig asserts beside --overlap-moe-expert-parallel-comm
 * (d98e8a6) where the overlap runs (tsl_plan_ep_overlap_runs: full recompute leaves it out):
 * no "moe" among the recomputed modules, at most one MTP depth. The plan was priced
 * with the overlap's saving: refused, not dropped. */
static int check_a2a_overlap(const tsl_export_view_t *v, tsl_err_t *err)
{
    const tsl_plan_t *p = v->plan;
    if (!tsl_plan_ep_overlap_runs(v->plan))
        return 0;
    if (p->recompute_modules & TSL_RECOMPUTE_MOE)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: moe_a2a_overlap: the plan recomputes the moe module; "
                            "Megatron-LM refuses --overlap-moe-expert-parallel-comm with moe "
                            "in --recompute-modules");
    if (tsl_mtp_depths(v->model) > 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: moe_a2a_overlap: the model has %u MTP depths; "
                            "Megatron-LM runs --overlap-moe-expert-parallel-comm with at most "
                            "one",
                            tsl_mtp_depths(v->model));
    return 0;
}

/* The per-module precision file (export_megatron_prec.c), whose YAML the header's
 * comments carry; argument_utils.py loads it into TransformerConfig quant_recipe. */
static void write_te_prec_flag(const tsl_plan_t *p, FILE *out)
{
    if (p->module_prec)
        fputs("--te-precision-config-file " TSL_EXPORT_TE_PREC_FILE "\n", out);
}

/* FP8 as priced (docs/exports.md "FP8"; Megatron-LM arguments.py
 * _add_transformer_engine_args): the hybrid format (E4M3 forward, E5M2
 * gradients) and the plan's recipe; delayed scaling with the amax history of
 * Megatron-LM's FP8 examples. The LM head stays bf16 in Megatron-LM. nvfp4 is
 * Megatron-LM's FP4 (TransformerConfig fp4 'e2m1', fp4_recipe 'nvfp4'). */
static void write_fp8(const tsl_plan_t *p, FILE *out)
{
    if (p->fp8_recipe == TSL_FP8_NONE || tsl_fp8_recipe_name(p->fp8_recipe) == NULL)
        return;
    if (p->bf16_layers_start || p->bf16_layers_end) /* TransformerConfig's defaults are 1 */
        fprintf(out,
                "--first-last-layers-bf16\n--num-layers-at-start-in-bf16 %u\n"
                "--num-layers-at-end-in-bf16 %u\n",
                p->bf16_layers_start, p->bf16_layers_end);
    if (p->fp8_recipe == TSL_FP8_NVFP4) {
        fputs("--fp4-format e2m1\n--fp4-recipe nvfp4\n", out);
        write_te_prec_flag(p, out);
        if (p->fp8_param_gather)
            fputs("--fp4-param-gather\n", out);
        return;
    }
    fprintf(out, "--fp8-format hybrid\n--fp8-recipe %s\n", tsl_fp8_recipe_name(p->fp8_recipe));
    write_te_prec_flag(p, out);
    if (p->fp8_recipe == TSL_FP8_DELAYED)
        fputs("--fp8-amax-history-len 1024\n--fp8-amax-compute-algo max\n", out);
    if (p->fp8_param_gather)
        fputs("--fp8-param-gather\n", out);
}

/* Megatron-core's per-layer CUDA graphs as priced (cuda_graph.h): cuda_graph_impl
 * transformer_engine, TE's make_graphed_callables (a forward and a backward graph per
 * module, what the cost model prices), and the modules by name (--cuda-graph-modules,
 * nargs '+'; arguments.py at d98e8a64dd). Under that impl Megatron-LM graphs what is
 * named and nothing more (local would add moe_preprocess to moe_router). */
static void write_cuda_graphs(const tsl_plan_t *p, FILE *out)
{
    if (!p->cuda_graph_modules)
        return;
    fputs("--cuda-graph-impl transformer_engine\n--cuda-graph-modules", out);
    for (uint32_t i = 0; i < TSL_CUDA_GRAPH_COUNT; i++)
        if (p->cuda_graph_modules & (1u << i))
            fprintf(out, " %s", tsl_cuda_graph_module_name(i));
    fputc('\n', out);
}

/* TE's impl where the plan runs Megatron-LM's local modules (a GPU TE does not run on);
 * what Megatron-LM asserts of the graphs is the target's rule (target_rules.c
 * megatron_cuda_graphs). */
static int check_cuda_graphs(const tsl_export_view_t *v, tsl_err_t *err)
{
    const tsl_plan_t *p = v->plan;
    if (p->cuda_graph_modules && p->stack_unfused_attn)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: cuda_graph_modules: the graphs are Transformer Engine's "
                            "(--cuda-graph-impl transformer_engine), which the plan's GPUs do "
                            "not run (it runs --transformer-impl local)");
    return 0;
}

static void write_knobs(const tsl_plan_t *p, const tsl_export_uniform_t *u, FILE *out)
{
    /* --bf16 reduces in fp32 unless told; --fp16 in fp16 unless told (validate_args);
     * Megatron-FSDP's dtype is its own flag (write_fsdp) */
    if (u->sdp > 1) {
    } else if (megatron_fp16(p)) {
        if (p->grad_reduce_bytes == 4)
            fputs("--accumulate-allreduce-grads-in-fp32\n", out);
    } else if (p->grad_reduce_bytes != 4 && !p->fp32) { /* fp32: fp32 gradients throughout */
        fputs("--grad-reduce-in-bf16\n", out);
    }
    /* the precision-aware optimizer (OptimizerConfig): bf16 moments, an fp32 master,
     * bf16 main gradients where the plan reduces in 2 bytes (DeepSeek-V3's recipe) */
    if (p->bf16_moments)
        fprintf(out,
                "--use-precision-aware-optimizer\n--exp-avg-dtype bf16\n--exp-avg-sq-dtype "
                "bf16\n%s",
                p->grad_reduce_bytes != 4 ? "--main-grads-dtype bf16\n" : "");
    /* TransformerConfig's cpu_offloading_num_layers (validate_args turns cpu_offloading
     * on with it; activations only, weights not: the defaults) */
    if (p->cpu_offload_layers)
        fprintf(out, "--cpu-offloading-num-layers %u\n", p->cpu_offload_layers);
    if (!p->grad_reduce_exposed || u->sdp > 1) /* optim_grads_params forces it on */
        fputs("--overlap-grad-reduce\n", out);
    if (p->overlap_param_gather)
        fputs("--overlap-param-gather\n", out);
    if (p->unfused_grad_accum) /* the DDP hook's add instead of the fused wgrad GEMM */
        fputs("--no-gradient-accumulation-fusion\n", out);
    /* the native fused loss (loss_impl.h megatron-fused; --cross-entropy-fusion-impl
     * defaults to native) */
    if (p->loss_impl == TSL_LOSS_MEGATRON_FUSED && !p->autocast)
        fputs("--cross-entropy-loss-fusion\n", out);
    write_fp8(p, out);
    write_cuda_graphs(p, out);
}

int tsl_export_megatron(const tsl_export_view_t *v, FILE *out, tsl_err_t *err)
{
    tsl_export_uniform_t u;
    if (tsl_target_uniform(v, &u, err) != 0)
        return -1;
    uint32_t ckpt_k = tsl_target_megatron_recompute(v);
    const tsl_plan_t *p = v->plan;
    if (check_knobs(&u, p, err) != 0 || check_a2a_overlap(v, err) != 0 ||
        check_cuda_graphs(v, err) != 0 ||
        check_form(v->model, first_block(v, true), tsl_model_first_moe(v->model), err) != 0)
        return -1;
    char cp[24] = ""; /* Megatron-LM's DP is world / (TP x CP x PP) */
    if (u.cp > 1)
        snprintf(cp, sizeof cp, " x CP %u", u.cp);
    fprintf(out,
            "# Megatron-LM arguments for %s, plan \"%s\" from Tessel (docs/exports.md)\n"
            "# %u GPUs = TP %u%s x DP %u%s x PP %u; %u micro-batches of %u per data-parallel "
            "rank (%s)\n",
            v->model->name, p->label, u.stage_devices * v->pp, u.tp, cp, u.dp * u.sdp,
            u.sdp > 1 ? " (Megatron-FSDP)" : "", v->pp, p->n_micro, u.micro_per_rank,
            v->pp > 1 && p->interleave > 1 ? "interleaved 1F1B"
            : v->pp > 1                    ? "1F1B"
                                           : "gradient accumulation");
    fprintf(out, "# predicted %.4f s/iteration, %.2f samples/s, peak %.1f GiB per GPU\n",
            p->iter_time_s, p->samples_per_s, p->peak_bytes / 1073741824.0);
    if (!u.s.sp && !u.s.zero && u.sdp <= 1)
        fputs("# not set: --sequence-parallel and --use-distributed-optimizer (the plan "
              "keeps both off)\n",
              out);
    if (u.sdp > 1) /* validate_args asserts it for Megatron-FSDP */
        fputs("# Megatron-FSDP: leave CUDA_DEVICE_MAX_CONNECTIONS unset (Megatron-LM refuses "
              "1 with it)\n",
              out);
    fprintf(out, "# the vocabulary (%u) comes from your tokenizer arguments\n",
            v->model->layers[0].vocab);
    char placement[8192];
    if (tsl_export_placement(p, placement, sizeof placement))
        fprintf(out, "# %s\n", placement);
    if (tsl_export_tf32(p, placement, sizeof placement))
        fprintf(out, "# %s\n", placement);
    if (!first_block(v, true)->causal) /* BertModel: no mask over later tokens */
        fputs("# a bidirectional encoder: run these with examples/bert/pretrain_bert.py "
              "--bert-no-binary-head\n# (Tessel counts a token-type table, which it builds only "
              "with the binary head);\n# pretrain_gpt.py would build a causal GPT\n",
              out);
    if (v->model->hybrid) /* HybridModel: the entry script builds it (write_hybrid) */
        fputs("# a hybrid (Mamba) model: run these with pretrain_hybrid.py (Megatron-LM d98e8a6;\n"
              "# pretrain_mamba.py is its deprecated wrapper); pretrain_gpt.py builds no Mamba "
              "layer\n",
              out);
    if (p->moe_imbalance > 0) /* Megatron-LM has no flag: what the prediction assumed */
        fprintf(out,
                "# priced with the busiest expert at %g x the mean tokens "
                "(tesselctl --moe-imbalance %g)\n",
                p->moe_imbalance, p->moe_imbalance);
    tsl_export_megatron_prec(p, out);
    write_parallel(v, &u, ckpt_k, out);
    write_knobs(p, &u, out);
    write_model(v, out);
    return 0;
}

/*
 * test_mtp.c — multi-token prediction depths (mtp.h) and latent MoE (model.h
 * "Latent MoE"): parameters, FLOPs and stash of a depth by hand, the repeated
 * layer's weights once, the cost model keeping shared weights nowhere but their
 * owner and an embedding copy on a later stage, and refusals naming the field.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cost.h"
#include "mtp.h"
#include "search.h"
#include "target.h"

static uint32_t blocks(const tsl_model_t *m)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->n_layers; i++)
        n += tsl_model_is_block(m, i);
    return n;
}

/* DeepSeek-V3 (h 7168, V 129280, s 4096) with its MTP depth: the entry is
 * eh_proj 2·h² = 102,760,448 and three RMSNorms 3·h = 21,504 (102,781,952), the
 * inner layer a copy of the last MoE layer, the head copy's V·h shared. FLOPs of
 * the depth: 4·s·h² (eh_proj) + the layer's + 2·s·h·V (its logits GEMM). The
 * entry keeps 8·s·h bytes: the two norm inputs (2·s·h each) and eh_proj's 2h-wide
 * input (4·s·h). DeepSeek's 671B is the main model; the report's 14B MTP module
 * counts its own copies of the embedding and head as the checkpoint stores them
 * (2·V·h = 1.853B), which training shares: 102.8M + 11.6B here. */
static void test_depth_by_hand(void)
{
    tsl_model_t m;
    tsl_err_t err = {0};
    CHECK(tsl_model_preset("DeepSeek-V3", &m, &err) == 0, "%s", err.msg);
    uint64_t p0 = tsl_model_params(&m);
    double f0 = tsl_model_fwd_flops(&m);
    uint32_t L0 = m.n_layers, nb = blocks(&m);
    tsl_layer_t last = m.layers[L0 - 2];
    CHECK(tsl_mtp_depths(&m) == 0 && tsl_model_set_mtp(&m, 1, &err) == 0, "1 depth: %s", err.msg);
    double s = 4096, h = 7168, V = 129280;
    const tsl_layer_t *e = &m.layers[L0 - 1], *in = &m.layers[L0], *hd = &m.layers[L0 + 1];
    CHECK(m.n_layers == L0 + 3 && e->kind == TSL_LAYER_MTP && in->experts == 256 &&
              hd->kind == TSL_LAYER_HEAD && hd->shared_weights &&
              m.layers[m.n_layers - 1].kind == TSL_LAYER_HEAD &&
              !m.layers[m.n_layers - 1].shared_weights,
          "[... blocks, mtp, MoE layer, head copy, head]");
    CHECK(e->params == 102781952ull && e->params == (uint64_t)(2 * h * h + 3 * h),
          "entry params %llu", (unsigned long long)e->params);
    CHECK(tsl_model_params(&m) - p0 == e->params + last.params,
          "params +%llu, want entry + the last layer's %llu",
          (unsigned long long)(tsl_model_params(&m) - p0), (unsigned long long)last.params);
    printf("DeepSeek-V3 with MTP: %.3fB (main %.3fB + depth %.3fB)\n", tsl_model_params(&m) / 1e9,
           p0 / 1e9, (tsl_model_params(&m) - p0) / 1e9);
    double want = 4 * s * h * h + last.fwd_flops + 2 * s * h * V;
    CHECK(fabs(tsl_model_fwd_flops(&m) - f0 - want) <= 1e-9 * want, "FLOPs +%.6g, want %.6g",
          tsl_model_fwd_flops(&m) - f0, want);
    CHECK(e->act_repl_bytes == (uint64_t)(8 * s * h) && e->act_shard_bytes == 0 &&
              e->tp_allreduces == 1,
          "entry stash %llu", (unsigned long long)e->act_repl_bytes);
    CHECK(blocks(&m) == nb, "MTP layers are not Megatron's --num-layers: %u", blocks(&m));
    /* a second depth beyond those with weights repeats depth 1's: compute again,
     * weights once (mtp_use_repeated_layer) */
    uint64_t p1 = tsl_model_params(&m);
    double f1 = tsl_model_fwd_flops(&m);
    CHECK(tsl_model_set_mtp(&m, 2, &err) == 0 && tsl_mtp_depths(&m) == 2 && tsl_mtp_repeated(&m),
          "2 depths: %s", err.msg);
    CHECK(tsl_model_params(&m) == p1 && fabs(tsl_model_fwd_flops(&m) - f1 - want) <= 1e-9 * want,
          "repeated: params %llu (want %llu), FLOPs +%.6g",
          (unsigned long long)tsl_model_params(&m), (unsigned long long)p1,
          tsl_model_fwd_flops(&m) - f1);
    CHECK(tsl_model_set_mtp(&m, 0, &err) == 0 && tsl_model_params(&m) == p0 && m.n_layers == L0,
          "no MTP: the main model back");
    CHECK(tsl_model_set_mtp(&m, 17, &err) == -1 && strstr(err.msg, "mtp_layers: 17"),
          "17 depths refused: %s", err.msg);
    tsl_model_free(&m);
}

/* A hybrid without an MTP pattern has no depth to copy; the builder refuses a
 * spec whose hybrid names none, and a pattern with an unknown block. */
static void test_refusals(void)
{
    tsl_arch_spec_t sp;
    memset(&sp, 0, sizeof sp);
    sp.arch = TSL_ARCH_LLAMA;
    sp.layers = 2, sp.hidden = 256, sp.heads = 4, sp.kv_heads = 2, sp.seq_len = 64;
    sp.vocab = 1000, sp.ffn_hidden = 512, sp.gated_ffn = false;
    snprintf(sp.hybrid, sizeof sp.hybrid, "M*");
    sp.ssm_heads = 8, sp.ssm_head_dim = 32, sp.ssm_state = 16, sp.ssm_groups = 1;
    sp.ssm_conv = 4, sp.ssm_chunk = 32;
    tsl_model_t m;
    tsl_err_t err = {0};
    CHECK(tsl_model_build(&sp, "hy", &m, &err) == 0, "%s", err.msg);
    CHECK(tsl_model_set_mtp(&m, 1, &err) == -1 && strstr(err.msg, "mtp_layers") &&
              strstr(err.msg, "mtp_hybrid_override_pattern") && tsl_mtp_depths(&m) == 0,
          "hybrid without a pattern: %s", err.msg);
    tsl_model_free(&m);
    sp.mtp_layers = 1;
    CHECK(tsl_model_build(&sp, "hy", &m, &err) == -1 && strstr(err.msg, "mtp_hybrid"),
          "spec without its blocks: %s", err.msg);
    snprintf(sp.mtp_hybrid, sizeof sp.mtp_hybrid, "*Q");
    CHECK(tsl_model_build(&sp, "hy", &m, &err) == -1 && strstr(err.msg, "mtp_hybrid: 'Q'"),
          "bad block: %s", err.msg);
    snprintf(sp.mtp_hybrid, sizeof sp.mtp_hybrid, "*");
    CHECK(tsl_model_build(&sp, "hy", &m, &err) == 0 && tsl_mtp_depths(&m) == 1 &&
              m.layers[3].kind == TSL_LAYER_MTP && m.layers[4].kind == TSL_LAYER_ATTENTION,
          "[emb M * | mtp * head | head]: %s", err.msg);
    tsl_model_free(&m);
    /* latent MoE: only with experts, and narrower than h */
    tsl_layer_t l;
    memset(&l, 0, sizeof l);
    l.kind = TSL_LAYER_FFN, l.seq_len = 64, l.hidden = 256, l.ffn_hidden = 64;
    l.moe_latent = 128;
    CHECK(tsl_layer_derive(&l, &err) == -1 && strstr(err.msg, "moe_latent"),
          "latent without experts: %s", err.msg);
    l.experts = 8, l.experts_per_tok = 2, l.moe_latent = 256;
    CHECK(tsl_layer_derive(&l, &err) == -1 && strstr(err.msg, "moe_latent: 256 must be below"),
          "latent at h: %s", err.msg);
    tsl_layer_t e;
    memset(&e, 0, sizeof e);
    e.kind = TSL_LAYER_MTP, e.seq_len = 64, e.hidden = 256;
    CHECK(tsl_layer_derive(&e, &err) == -1 && strstr(err.msg, "mtp_depth"),
          "an MTP entry outside a depth: %s", err.msg);
}

/* Latent MoE by hand: h 256, ℓ 64, f 32, E 8, k 2, non-gated, no biases, RMSNorm,
 * s 16, no dropout. One expert (g+1)·ℓ·f = 2·64·32 = 4096 (8 of them 32768), the
 * router h·E = 2048, the norm 256, the projections 2·h·ℓ = 32768: 67840. FLOPs
 * k·2·2·s·ℓ·f + 2·s·h·E + 4·s·h·ℓ = 262144 + 65536 + 1048576 = 1376256. Stash
 * replicated 4·s·h + k·2·s·ℓ + 4·s·E + 2·s·ℓ = 16384 + 4096 + 512 + 2048 = 23040. */
static void test_latent_by_hand(void)
{
    tsl_layer_t l;
    memset(&l, 0, sizeof l);
    l.kind = TSL_LAYER_FFN, l.seq_len = 16, l.hidden = 256, l.ffn_hidden = 32;
    l.experts = 8, l.experts_per_tok = 2, l.moe_latent = 64;
    l.no_bias = l.rms_norm = l.no_dropout = true;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    CHECK(l.params == 67840 && tsl_layer_expert_params(&l) == 32768.0 &&
              l.active_params == 67840 - 6 * 4096,
          "params %llu experts %.0f active %llu", (unsigned long long)l.params,
          tsl_layer_expert_params(&l), (unsigned long long)l.active_params);
    CHECK(l.fwd_flops == 1376256.0 && l.act_repl_bytes == 23040 && tsl_layer_expert_width(&l) == 64,
          "flops %.0f stash %llu", l.fwd_flops, (unsigned long long)l.act_repl_bytes);
}

/* The cost of a layer whose weights another holds (an MTP head copy): no model
 * states, gradients, sync or step; its compute is the owner's. An MTP entry on a
 * later stage keeps a copy of the word embedding (padded V'·h of this TP rank). */
static void test_cost_shared(void)
{
    tsl_model_t m;
    tsl_err_t err = {0};
    CHECK(tsl_model_preset("Llama2-7B", &m, &err) == 0 && tsl_model_set_mtp(&m, 1, &err) == 0, "%s",
          err.msg);
    tsl_cluster_t c;
    tsl_cost_env_t env;
    CHECK(tsl_cluster_homogeneous(&c, 1, 8, tsl_gpu_find("H100-80G"), 0, &err) == 0, "%s", err.msg);
    CHECK(tsl_cost_env_init(&env, &c, 0, 8, &err) == 0, "%s", err.msg);
    tsl_strategy_t dp = {.n_levels = 1, .dim = {TSL_DIM_DP}, .degree = {8}};
    const tsl_layer_t *head = &m.layers[m.n_layers - 1], *copy = &m.layers[m.n_layers - 2];
    const tsl_layer_t *entry = &m.layers[m.n_layers - 4];
    tsl_layer_cost_t a, b, e0, e1;
    tsl_cost_layer(&env, head, &dp, NULL, 8, &a);
    tsl_cost_layer(&env, copy, &dp, NULL, 8, &b);
    CHECK(a.feasible && b.feasible && a.ms_bytes > 0 && b.ms_bytes == 0 && b.grad_bytes == 0 &&
              b.grad_comm_s == 0 && b.opt_s == 0,
          "head copy: states %llu grads %llu sync %g step %g", (unsigned long long)b.ms_bytes,
          (unsigned long long)b.grad_bytes, b.grad_comm_s, b.opt_s);
    CHECK(fabs(a.compute_s - b.compute_s) <= 1e-12 + 1e-9 * a.compute_s, "compute %g vs %g",
          a.compute_s, b.compute_s);
    tsl_cost_layer(&env, entry, &dp, NULL, 8, &e0);
    env.tied_copy = true; /* a stage after the embedding's */
    tsl_cost_layer(&env, entry, &dp, NULL, 8, &e1);
    /* Llama 2's 32000 rows pad to 32000 at t = 1 (a multiple of 128): 32000·4096
     * more parameters, their states at the entry's bytes per parameter */
    double per = (double)e0.ms_bytes / (double)entry->params, extra = 32000.0 * 4096.0;
    CHECK(fabs((double)(e1.ms_bytes - e0.ms_bytes) - per * extra) <= 1e-6 * per * extra,
          "embedding copy: +%llu bytes, want %.0f", (unsigned long long)(e1.ms_bytes - e0.ms_bytes),
          per * extra);
    /* one copy per stage (Megatron-LM LanguageModule.shared_embedding_or_output_weight:
     * the MTP stage's one embedding, every depth's lookup and a tied output layer
     * use it): a second depth with weights of its own (a preset's) keeps none */
    CHECK(tsl_model_set_mtp(&m, 0, &err) == 0 && tsl_model_set_mtp(&m, 2, &err) == 0 &&
              !tsl_mtp_repeated(&m),
          "2 depths of their own: %s", err.msg);
    const tsl_layer_t *entry2 = &m.layers[m.n_layers - 4];
    CHECK(entry2->kind == TSL_LAYER_MTP && entry2->mtp_depth == 2 && !entry2->shared_weights,
          "depth 2's entry, its own weights");
    env.tied_copy = false;
    tsl_cost_layer(&env, entry2, &dp, NULL, 8, &e0);
    env.tied_copy = true;
    tsl_cost_layer(&env, entry2, &dp, NULL, 8, &e1);
    CHECK(e1.ms_bytes == e0.ms_bytes, "depth 2 reads depth 1's copy: +%llu bytes",
          (unsigned long long)(e1.ms_bytes - e0.ms_bytes));
    tsl_model_free(&m);
    /* a tied head (GPT-2) keeps the stage's copy: the entry none */
    CHECK(tsl_model_preset("GPT2-345M", &m, &err) == 0 && tsl_model_set_mtp(&m, 1, &err) == 0, "%s",
          err.msg);
    entry = &m.layers[m.n_layers - 4];
    CHECK(entry->kind == TSL_LAYER_MTP && m.layers[m.n_layers - 1].tied_head, "GPT-2's entry");
    env.tied_copy = false;
    tsl_cost_layer(&env, entry, &dp, NULL, 8, &e0);
    env.tied_copy = true;
    tsl_cost_layer(&env, entry, &dp, NULL, 8, &e1);
    CHECK(e1.ms_bytes == e0.ms_bytes, "the tied head's copy: the entry +%llu bytes",
          (unsigned long long)(e1.ms_bytes - e0.ms_bytes));
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

/* Stacks and MTP (target.h): left open, a stack that trains none prices the model
 * without its depths (GPT2-345M with one depth: 29 layers, 26 without), Megatron
 * with them; asked for explicitly, DeepSpeed and Galvatron refuse naming
 * mtp_layers (TSL_E_UNSUPPORTED: exit 4), torchtitan only with stages. */
static void test_targets(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(tsl_model_preset("GPT2-345M", &m, &err) == 0 && tsl_model_set_mtp(&m, 1, &err) == 0 &&
              m.n_layers == 29 && tsl_cluster_parse_spec(&c, "8xA100-80G", &err) == 0,
          "%s", err.msg);
    static const struct {
        uint32_t target, layers;
    } want[] = {{TSL_TARGET_ANY, 29},
                {TSL_TARGET_MEGATRON, 29},
                {TSL_TARGET_DEEPSPEED, 26},
                {TSL_TARGET_GALVATRON, 26},
                {TSL_TARGET_TORCHTITAN, 26}};
    tsl_search_result_t *res = calloc(1, sizeof(*res));
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        tsl_request_t r;
        tsl_request_init(&r);
        r.global_batch = 32;
        r.no_baselines = true;
        r.target = want[i].target;
        CHECK(tsl_search(&m, &c, &r, NULL, res, &err) == TSL_SEARCH_OK &&
                  res->best.n_layers == want[i].layers,
              "%s: %u layers (want %u): %s", tsl_target_name(want[i].target), res->best.n_layers,
              want[i].layers, err.msg);
        r.mtp_layers = 1;
        int rc = tsl_search(&m, &c, &r, NULL, res, &err);
        if (want[i].layers == 29)
            CHECK(rc == TSL_SEARCH_OK, "%s --mtp-layers 1: %s", tsl_target_name(r.target), err.msg);
        else
            CHECK(rc != TSL_SEARCH_OK && err.code == TSL_E_UNSUPPORTED &&
                      (strstr(err.msg, "mtp_layers: 1") || strstr(err.msg, "MTP depths")),
                  "%s --mtp-layers 1 refused: %s", tsl_target_name(r.target), err.msg);
    }
    char note[400];
    CHECK(tsl_target_mtp_note(TSL_TARGET_DEEPSPEED, "m", 1, 0, note, sizeof note) &&
              strstr(note, "deepspeed: m's 1 MTP depth left out") &&
              !tsl_target_mtp_note(TSL_TARGET_MEGATRON, "m", 1, 0, note, sizeof note) &&
              !tsl_target_mtp_note(TSL_TARGET_TORCHTITAN, "m", 1, 1, note, sizeof note),
          "notes: %s", note);
    /* torchtitan's MTP: pp 1 and cp 1 only */
    CHECK(tsl_target_mtp_ok(TSL_TARGET_TORCHTITAN, 1, 1, 1, &err) == 0 &&
              tsl_target_mtp_ok(TSL_TARGET_TORCHTITAN, 1, 2, 0, &err) == -1 &&
              strstr(err.msg, "mtp_layers: 1 with torchtitan at pp 2"),
          "torchtitan pp 2: %s", err.msg);
    free(res);
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

/* An MTP entry's eh_proj (cost.c mtp_entry_tp): a column-parallel 2h -> h/t linear whose
 * output is all-gathered (and split again under SP), not one s·h all-reduce each way.
 * With tp_f one s·h all-reduce and U = tp_f / 2 its all-gather, against Llama 2 7B's
 * layer (two all-reduces each way: comm 4·tp_f, with SP or without; tp 8, the
 * executor's exposed backward):
 *   without SP  forward U (the output's gather), backward 2·tp_f (the 2h input
 *               gradient's all-reduce): 2.5·tp_f, 0.625 of the layer's
 *   SP          forward 2U (the 2h input's gather) + U, backward U (dY's gather for
 *               the scatter) + 2U (the 2h reduce-scatter): 3·tp_f, 0.75
 * (one all-reduce each way, before cost model 49: 0.5 both). */
static void test_entry_tp(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_err_t err = {0};
    CHECK(tsl_model_preset("Llama2-7B", &m, &err) == 0 && tsl_model_set_mtp(&m, 1, &err) == 0 &&
              tsl_cluster_homogeneous(&c, 1, 8, tsl_gpu_find("H100-80G"), 0, &err) == 0 &&
              tsl_cost_env_init(&env, &c, 0, 8, &err) == 0,
          "%s", err.msg);
    const tsl_layer_t *entry = &m.layers[m.n_layers - 4], *layer = &m.layers[1];
    CHECK(entry->kind == TSL_LAYER_MTP && layer->tp_allreduces == 2 &&
              entry->seq_len == layer->seq_len && entry->hidden == layer->hidden,
          "the entry and a layer of the same s·h");
    for (int sp = 0; sp < 2; sp++) {
        tsl_strategy_t tp = {.n_levels = 1, .dim = {TSL_DIM_TP}, .degree = {8}, .sp = sp};
        tsl_layer_cost_t e, l;
        tsl_cost_layer(&env, entry, &tp, NULL, 1, &e);
        tsl_cost_layer(&env, layer, &tp, NULL, 1, &l);
        double want = sp ? 0.75 : 0.625;
        CHECK(e.feasible && l.feasible && l.comm_s > 0 && fabs(e.comm_s / l.comm_s - want) < 1e-9,
              "sp %d: the entry's TP %g s, the layer's %g s: ratio %.6f, want %.3f", sp, e.comm_s,
              l.comm_s, e.comm_s / l.comm_s, want);
    }
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

int main(void)
{
    test_entry_tp();
    test_depth_by_hand();
    test_refusals();
    test_latent_by_hand();
    test_cost_shared();
    test_targets();
    return CHECK_DONE();
}

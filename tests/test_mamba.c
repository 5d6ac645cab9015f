/*
 * test_mamba.c — planner/mamba: a Mamba-2 mixer layer's parameters, FLOPs and
 * stash by hand (a toy shape and Nemotron 3 Nano's), its TP split, a hybrid
 * model built from a pattern against Nemotron 3 Nano's published size, and the
 * executor's refusal of a model with Mamba layers (plan.h tsl_model_exec_scope).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "mamba.h"
#include "model.h"
#include "plan.h"
#include "roofline.h"

static tsl_layer_t toy(void)
{
    tsl_layer_t l = {0};
    l.kind = TSL_LAYER_MAMBA;
    l.seq_len = 4;
    l.hidden = 8;
    l.ssm_heads = 4;
    l.ssm_head_dim = 2;
    l.ssm_state = 3;
    l.ssm_groups = 2;
    l.ssm_conv = 4;
    l.ssm_chunk = 2;
    l.no_bias = l.rms_norm = l.no_dropout = true;
    return l;
}

/* h 8, H 4, P 2 (d_i 8), N 3, G 2, K 4, Q 2, s 4: w_in = 2·8 + 2·2·3 + 4 = 32, the
 * conv over d_i + 2·G·N = 20 channels. */
static void test_toy(void)
{
    tsl_err_t err = {0};
    tsl_layer_t l = toy();
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    /* norm 8 + in_proj 8·32 = 256 + conv 20·(4 + 1) = 100 + dt_bias, A_log, D 3·4 = 12
     * + gated norm 8 + out_proj 8·8 = 64: 448 */
    CHECK(l.params == 448 && l.active_params == 448, "params %llu", (unsigned long long)l.params);
    /* in_proj 2·4·8·32 = 2048, conv 2·4·4·20 = 640, out_proj 2·4·8·8 = 512; SSD per
     * token: C·Bᵀ 2·Q·N·G = 24, (L∘CBᵀ)·X 2·Q·P·H = 32, states 2·N·P·H = 48, passing
     * 48/Q = 24, output 48: 176, × 4 tokens = 704. 3904 */
    CHECK(l.fwd_flops == 3904.0 && l.core_fwd_flops == 0.0, "FLOPs %g", l.fwd_flops);
    /* repl 4·s·h = 128; shard 2·s·w_in = 256 + 3 × 2·s·d_i = 192 + 4·s·G = 32: 480 */
    CHECK(l.act_repl_bytes == 128 && l.act_shard_bytes == 480 && l.bnd_act_bytes == 64 &&
              l.tp_allreduces == 1,
          "stash %llu + %llu", (unsigned long long)l.act_repl_bytes,
          (unsigned long long)l.act_shard_bytes);
    CHECK(tsl_mamba_inner(&l) == 8 && tsl_mamba_in_width(&l) == 32, "widths");
    /* the key holds the SSM shape (48 words: the MTP/latent tail only where set): a
     * wider state is another layer class */
    uint64_t ka[TSL_LAYER_KEY_LEN], kb[TSL_LAYER_KEY_LEN];
    tsl_layer_t w = toy();
    w.ssm_state = 4;
    CHECK(tsl_layer_derive(&w, &err) == 0, "%s", err.msg);
    CHECK(tsl_layer_key(&l, ka) == 48 && ka[44] == 3 && tsl_layer_key(&w, kb) == 48 &&
              memcmp(ka, kb, sizeof ka) != 0,
          "SSM shape keyed");
}

static void test_refusals(void)
{
    tsl_err_t err = {0};
    tsl_layer_t l = toy();
    l.ssm_state = 0;
    CHECK(tsl_layer_derive(&l, &err) == -1 && strstr(err.msg, "ssm_state"), "zero state: %s",
          err.msg);
    l = toy();
    l.ssm_groups = 3;
    CHECK(tsl_layer_derive(&l, &err) == -1 && strstr(err.msg, "ssm_groups: 3 does not divide"),
          "groups: %s", err.msg);
    l = toy();
    l.heads = 2;
    CHECK(tsl_layer_derive(&l, &err) == -1 && strstr(err.msg, "heads"), "heads: %s", err.msg);
    tsl_layer_t a = {.kind = TSL_LAYER_FFN, .seq_len = 4, .hidden = 8, .ffn_hidden = 32};
    a.ssm_heads = 4;
    CHECK(tsl_layer_derive(&a, &err) == -1 && strstr(err.msg, "belong to a Mamba layer"),
          "ssm on an FFN: %s", err.msg);
    /* TP: heads and groups must both split (Megatron asserts both) */
    l = toy(); /* H 4, G 2 */
    CHECK(tsl_mamba_tp_fits(&l, 1) && tsl_mamba_tp_fits(&l, 2) && !tsl_mamba_tp_fits(&l, 4) &&
              !tsl_mamba_tp_fits(&l, 3),
          "tp 2 splits H 4 and G 2; tp 4 leaves half a group");
}

/* Nemotron 3 Nano 30B-A3B (Megatron-Bridge nemotron_3_nano.py at 21d102f5e): h 2688,
 * 64 heads of 64, state 128, 8 groups, conv 4, chunk 128, s 8192. */
static tsl_arch_spec_t nano(void)
{
    tsl_arch_spec_t sp = {0};
    sp.arch = TSL_ARCH_LLAMA;
    snprintf(sp.hybrid, sizeof sp.hybrid, "%s",
             "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME");
    sp.layers = 52;
    sp.hidden = 2688;
    sp.ffn_hidden = 1856;
    sp.heads = 32;
    sp.kv_heads = 2;
    sp.head_dim = 128;
    sp.seq_len = 8192;
    sp.vocab = 131072;
    sp.experts = 128;
    sp.experts_per_tok = 6;
    sp.moe_ffn_hidden = 1856;
    sp.shared_experts = 1;
    sp.shared_ffn_hidden = 3712;
    sp.router_bias = true;
    sp.router_score = TSL_ROUTER_SIGMOID;
    sp.router_norm = true;
    sp.router_scale = 2.5;
    sp.ssm_heads = 64;
    sp.ssm_head_dim = 64;
    sp.ssm_state = 128;
    sp.ssm_groups = 8;
    sp.ssm_conv = 4;
    sp.ssm_chunk = 128;
    return sp;
}

static void test_nano(void)
{
    tsl_err_t err = {0};
    tsl_arch_spec_t sp = nano();
    tsl_model_t m;
    CHECK(tsl_model_build(&sp, "Nemotron-3-Nano", &m, &err) == 0, "%s", err.msg);
    /* embedding + 52 blocks + head; 23 M, 23 E, 6 * */
    CHECK(m.n_layers == 54 && tsl_model_mamba_layers(&m) == 23 && tsl_model_moe_layers(&m) == 23,
          "layers %u, mamba %u, moe %u", m.n_layers, tsl_model_mamba_layers(&m),
          tsl_model_moe_layers(&m));
    /* every block of the pattern is a layer as Megatron counts them, the ends not */
    uint32_t blocks = 0;
    for (uint32_t i = 0; i < m.n_layers; i++)
        blocks += tsl_model_is_block(&m, i);
    CHECK(m.hybrid && blocks == 52 && !tsl_model_is_block(&m, 0) && !tsl_model_is_block(&m, 53),
          "52 blocks (%u)", blocks);
    const tsl_layer_t *M = &m.layers[1], *E = &m.layers[2], *A = &m.layers[6];
    CHECK(M->kind == TSL_LAYER_MAMBA && E->kind == TSL_LAYER_FFN && E->experts == 128 &&
              A->kind == TSL_LAYER_ATTENTION && A->causal,
          "M E ... * in order");
    /* Mamba: 2688 + 2688·10304 + 6144·5 + 192 + 4096 + 4096·2688 = 38,744,896 */
    CHECK(M->params == 38744896ull, "mamba params %llu", (unsigned long long)M->params);
    /* FLOPs per sample: 8192 × (2·2688·10304 + 2·4·6144 + SSD 3,416,064 + 2·4096·2688)
     * = 662,565,814,272; the SSD 27,984,396,288 of it (4.2%) */
    CHECK(M->fwd_flops == 662565814272.0, "mamba FLOPs %.0f", M->fwd_flops);
    /* stash: 4·s·h = 88,080,384 replicated; 2·s·10304 + 6·s·4096 + 4·s·8 = 370,409,472 */
    CHECK(M->act_repl_bytes == 88080384ull && M->act_shard_bytes == 370409472ull, "mamba stash");
    /* attention: 2·h·a·hd + 2·h·kv·hd + norm = 23,399,040; MoE: 128 experts of 2·h·1856,
     * a shared 2·h·3712, router h·128, norm h, score-correction bias 128 = 1,297,468,160 */
    CHECK(A->params == 23399040ull && E->params == 1297468160ull, "attn %llu, moe %llu",
          (unsigned long long)A->params, (unsigned long long)E->params);
    /* 31,577,940,288 in all: the model card's 31.6B; active 3,580,076,352 with the input
     * embedding (the card's 3.6B "including embeddings"), 3,227,754,816 without (3.2B) */
    uint64_t total = tsl_model_params(&m), active = tsl_model_active_params(&m);
    CHECK(total == 31577940288ull && fabs((double)total / 31.6e9 - 1.0) < 0.001, "total %llu",
          (unsigned long long)total);
    CHECK(active == 3580076352ull && active - m.layers[0].params == 3227754816ull, "active %llu",
          (unsigned long long)active);
    tsl_model_free(&m);

    sp = nano();
    sp.hybrid[5] = 'X';
    CHECK(tsl_model_build(&sp, "bad", &m, &err) == -1 && strstr(err.msg, "'X' at layer 5"),
          "bad pattern: %s", err.msg);
    sp = nano();
    sp.layers = 51;
    CHECK(tsl_model_build(&sp, "bad", &m, &err) == -1 &&
              strstr(err.msg, "52 layers, layers says 51"),
          "length: %s", err.msg);
}

/* Time: with no bandwidth known a layer is its FLOPs over F (the pre-roofline
 * model); with one, Nano's mixer is at least its two projections' GEMM time, its
 * backward longer than its forward, and TP 2 shortens it. */
static void test_roofline(void)
{
    tsl_err_t err = {0};
    tsl_layer_t l = toy();
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, 1e12, 0.0);
    /* 3904 FLOPs per sample, 2 samples, 1e12 FLOP/s; backward twice */
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &l, 2, 1, false, 0), 7808e-12, 1e-12, "flat fwd");
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&d, &l, 2, 1, false, 0), 15616e-12, 1e-12, "flat bwd");

    tsl_arch_spec_t sp = {0};
    sp.arch = TSL_ARCH_LLAMA;
    snprintf(sp.hybrid, sizeof sp.hybrid, "M");
    sp.layers = 1;
    sp.hidden = 2688;
    sp.heads = 32;
    sp.seq_len = 8192;
    sp.vocab = 131072;
    sp.ssm_heads = 64;
    sp.ssm_head_dim = 64;
    sp.ssm_state = 128;
    sp.ssm_groups = 8;
    sp.ssm_conv = 4;
    sp.ssm_chunk = 128;
    tsl_model_t m;
    CHECK(tsl_model_build(&sp, "one-mixer", &m, &err) == 0, "%s", err.msg);
    const tsl_layer_t *M = &m.layers[1];
    tsl_roofline_dev_init(&d, 989e12, 3.35e12); /* H100 SXM bf16 dense, HBM3 */
    double f1 = tsl_roofline_layer_fwd_s(&d, M, 1, 1, false, 0);
    double b1 = tsl_roofline_layer_bwd_s(&d, M, 1, 1, false, 0);
    double f2 = tsl_roofline_layer_fwd_s(&d, M, 1, 2, false, 0);
    /* in_proj 2·8192·2688·10304 + out_proj 2·8192·4096·2688 FLOPs at F at best */
    double gemms = (2.0 * 8192 * 2688 * 10304 + 2.0 * 8192 * 4096 * 2688) / 989e12;
    CHECK(f1 > gemms && b1 > f1 && f2 < f1, "fwd %.3g ms (GEMMs alone %.3g), bwd %.3g, tp2 %.3g",
          f1 * 1e3, gemms * 1e3, b1 * 1e3, f2 * 1e3);
    tsl_model_free(&m);
}

/* The executor runs no Mamba layer: refused by name before any rank starts. */
static void test_exec_scope(void)
{
    tsl_err_t err = {0};
    tsl_arch_spec_t sp = nano();
    tsl_model_t m;
    CHECK(tsl_model_build(&sp, "Nemotron-3-Nano", &m, &err) == 0, "%s", err.msg);
    CHECK(tsl_model_exec_scope(&m, &err) == -1 && tsl_err_code(&err) == TSL_E_UNSUPPORTED &&
              strstr(err.msg, "(layer 1 the first): 23 Mamba-2 mixer layers"),
          "refused: %s", err.msg);
    tsl_model_free(&m);
    CHECK(tsl_model_preset("GPT2-345M", &m, &err) == 0 && tsl_model_exec_scope(&m, &err) == 0,
          "a Transformer runs: %s", err.msg);
    tsl_model_free(&m);
    /* tesseld's form, from a plan document's model.mamba_layers */
    CHECK(tsl_exec_scope_mamba(0, &err) == 0 && tsl_exec_scope_mamba(23, &err) == -1 &&
              tsl_err_code(&err) == TSL_E_UNSUPPORTED &&
              strstr(err.msg, "23 Mamba-2 mixer layers (a hybrid model)"),
          "from the count: %s", err.msg);
    /* a hybrid without MLP blocks needs no ffn_hidden; one with them does */
    sp = nano();
    sp.ffn_hidden = 0;
    CHECK(tsl_model_build(&sp, "no-mlp", &m, &err) == 0, "no '-' blocks: %s", err.msg);
    tsl_model_free(&m);
    sp.hybrid[0] = '-';
    CHECK(tsl_model_build(&sp, "mlp", &m, &err) == -1 &&
              strstr(err.msg, "- layers need ffn_hidden"),
          "a '-' block without a width: %s", err.msg);
}

int main(void)
{
    test_toy();
    test_refusals();
    test_nano();
    test_roofline();
    test_exec_scope();
    return CHECK_DONE();
}

/*
 * test_roofline.c — planner/roofline: one GEMM compute- and memory-bound by
 * hand, the FLOP-only fallback, and the two cases FLOPs alone get wrong: micro-batches
 * of 1 cost more per sample than one micro-batch of 16, and high-resolution
 * layers with a thin hidden size are memory-bound.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "roofline.h"

#define EPS 1e-15

static tsl_roofline_dev_t h100(void)
{
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, 989e12 * 0.5, 3350e9);
    return d;
}

static void test_gemm(void)
{
    tsl_roofline_dev_t d = h100();
    CHECK(d.mem_bw == 0.8 * 3350e9 && d.launch_s == TSL_ROOFLINE_LAUNCH_S, "init");
    /* 8192³: 1.1 TFLOP, compute-bound */
    double m = 8192, f = 2 * m * m * m;
    CHECK_NEAR(tsl_roofline_gemm_s(&d, m, m, m, 1), f / d.gemm_flops + d.launch_s, EPS,
               "compute-bound");
    /* one token against a 4096² weight: the weight read dominates */
    double bytes = 2.0 * (4096 + 4096.0 * 4096 + 4096);
    CHECK_NEAR(tsl_roofline_gemm_s(&d, 1, 4096, 4096, 1), bytes / d.mem_bw + d.launch_s, EPS,
               "memory-bound");
    CHECK_NEAR(tsl_roofline_mem_s(&d, 1e9, 3), 1e9 / d.mem_bw + 3 * d.launch_s, EPS, "mem");
    tsl_roofline_dev_t flat;
    tsl_roofline_dev_init(&flat, 1e14, 0);
    CHECK(tsl_roofline_gemm_s(&flat, 10, 20, 30, 2) == 2.0 * 10 * 20 * 30 * 2 / 1e14 &&
              tsl_roofline_mem_s(&flat, 1e9, 3) == 0,
          "unknown bandwidth: FLOPs only");
}

static tsl_layer_t layer(uint32_t s, uint32_t h, uint32_t a)
{
    tsl_layer_t l = {
        .kind = TSL_LAYER_ENCODER, .seq_len = s, .hidden = h, .ffn_hidden = 4 * h, .heads = a};
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    return l;
}

static void test_layers(void)
{
    tsl_roofline_dev_t d = h100(), flat;
    tsl_roofline_dev_init(&flat, d.gemm_flops, 0);
    tsl_layer_t gpt = layer(1024, 1024, 16); /* GPT-2 medium */
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&flat, &gpt, 4, 2, false, 0),
               gpt.fwd_flops * 4 / (2 * d.gemm_flops), 1e-18, "fallback = F·n/(t·X)");
    double one = tsl_roofline_layer_fwd_s(&d, &gpt, 1, 1, false, 0);
    double sixteen = tsl_roofline_layer_fwd_s(&d, &gpt, 16, 1, false, 0);
    printf("GPT-2 medium layer on H100: 16 x mb1 %.1f us, 1 x mb16 %.1f us, FLOPs alone %.1f us\n",
           16 * one * 1e6, sixteen * 1e6, 16 * gpt.fwd_flops / d.gemm_flops * 1e6);
    CHECK(16 * one > 1.05 * sixteen, "16 micro-batches of 1 cost more than one of 16");
    CHECK(sixteen > 16 * gpt.fwd_flops / d.gemm_flops, "never faster than the FLOP count");

    /* TransGAN-like high resolution: 4096 tokens of width 64 (AMP 4.3) */
    tsl_layer_t gan = layer(4096, 64, 4);
    double t = tsl_roofline_layer_fwd_s(&d, &gan, 1, 1, false, 0);
    double flops_only = gan.fwd_flops / d.gemm_flops;
    printf("TransGAN-like layer: roofline %.1f us vs FLOPs alone %.2f us (x%.0f)\n", t * 1e6,
           flops_only * 1e6, t / flops_only);
    CHECK(t > 5 * flops_only, "thin high-resolution layers are memory-bound");

    /* SP: the same layer sharded 4 ways is faster with SP (elementwise / t) */
    CHECK(tsl_roofline_layer_fwd_s(&d, &gpt, 8, 4, true, 0) <
              tsl_roofline_layer_fwd_s(&d, &gpt, 8, 4, false, 0),
          "SP divides the elementwise work");
    /* selective recompute repeats the core: 0 without attention */
    tsl_layer_t head = gpt;
    head.kind = TSL_LAYER_HEAD;
    head.vocab = 50304;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&head, &err) == 0, "%s", err.msg);
    CHECK(tsl_roofline_core_fwd_s(&d, &head, 4, 1) == 0, "no core in a head");
    CHECK(tsl_roofline_core_fwd_s(&d, &gpt, 4, 1) > 0, "a core in an encoder");
}

/* Causal self-attention by hand: GPT-2 medium's core (s = 1024, d = 1024, 16
 * heads) for 8 samples on the H100 (494.5 TFLOP/s, 2680 GB/s sustained). Full:
 * 4·s²·d·8 = 34.36 GFLOP, 69.49 µs, over its Q, K, V, O bytes 2·4·s·d·8 = 67.1 MB,
 * 25.04 µs: compute-bound. Causal: (s + 1)/2 = 512.5 keys per query, 17.20 GFLOP,
 * 34.78 µs, still above the bytes: the layer's forward drops by 4·s·(s − 512.5)·d·8
 * FLOPs / X = 34.71 µs. Unfused attention computes and masks all s² scores: no
 * change. The FLOP-count fallback drops the same FLOPs; the layer's fwd_flops and
 * core_fwd_flops (what MFU counts) do not change. */
static void test_causal(void)
{
    tsl_roofline_dev_t d = h100(), flat;
    tsl_roofline_dev_init(&flat, d.gemm_flops, 0);
    tsl_layer_t full = layer(1024, 1024, 16), causal = full;
    causal.causal = true;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&causal, &err) == 0 && causal.fwd_flops == full.fwd_flops &&
              causal.core_fwd_flops == full.core_fwd_flops,
          "causal keeps the counted FLOPs");
    double saved = 4.0 * 1024 * (1024 - 512.5) * 1024 * 8 / d.gemm_flops;
    CHECK(4.0 * 1024 * 512.5 * 1024 * 8 / d.gemm_flops > 2.0 * 4 * 1024 * 1024 * 8 / d.mem_bw,
          "the causal core is compute-bound");
    double a = tsl_roofline_layer_fwd_s(&d, &full, 8, 1, false, 0);
    double b = tsl_roofline_layer_fwd_s(&d, &causal, 8, 1, false, 0);
    CHECK_NEAR(a - b, saved, 1e-9, "causal saves %.3f us, by hand %.3f us", (a - b) * 1e6,
               saved * 1e6);
    CHECK_NEAR(tsl_roofline_core_fwd_s(&d, &full, 8, 1) -
                   tsl_roofline_core_fwd_s(&d, &causal, 8, 1),
               saved, 1e-9, "the recomputed core saves the same");
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&flat, &full, 8, 1, false, 0) -
                   tsl_roofline_layer_fwd_s(&flat, &causal, 8, 1, false, 0),
               saved, 1e-9, "the FLOP-count fallback saves the same");
    tsl_layer_t uf = full, ufc = causal;
    uf.unfused_attn = ufc.unfused_attn = true;
    CHECK(tsl_layer_derive(&uf, &err) == 0 && tsl_layer_derive(&ufc, &err) == 0, "%s", err.msg);
    CHECK(tsl_roofline_layer_fwd_s(&d, &uf, 8, 1, false, 0) ==
                  tsl_roofline_layer_fwd_s(&d, &ufc, 8, 1, false, 0) &&
              tsl_roofline_core_fwd_s(&d, &uf, 8, 1) == tsl_roofline_core_fwd_s(&d, &ufc, 8, 1) &&
              tsl_roofline_layer_fwd_s(&flat, &uf, 8, 1, false, 0) ==
                  tsl_roofline_layer_fwd_s(&flat, &ufc, 8, 1, false, 0),
          "unfused attention computes the masked scores");
    /* keys per query: (s + 1)/2 without a window; with w = 4 of s = 8, query i
     * sees min(i + 1, 4): 1 + 2 + 3 + 4·5 = 26 of 8 queries = 3.25 = 4 − 4·3/16 */
    CHECK(tsl_attn_keys(1024, 0, true) == 512.5 && tsl_attn_keys(1024, 0, false) == 1024,
          "(s + 1)/2");
    CHECK(tsl_attn_keys(8, 4, true) == 3.25 && tsl_attn_keys(8, 4, false) == 4, "window 4 of 8: %g",
          tsl_attn_keys(8, 4, true));
    CHECK(tsl_attn_keys(8, 8, true) == 4.5 && tsl_attn_keys(8, 16, true) == 4.5,
          "a window of s or more is none");
    CHECK(tsl_attn_keys(1, 0, true) == 1, "one token sees itself");
}

/* A sliding window w = 256 of s = 1024 (causal), 16 heads of 64, 8 samples. Unfused
 * (HF eager, the executor) computes all s × s scores and masks those outside the
 * window: QKᵀ (s, s, 64) and AV (s, 64, s) batched over 8·16, the softmax output and
 * dropout traffic 9 · a · s · s · 8 bytes in 2 kernels: the core of the unwindowed
 * layer. Its FLOP-only fallback runs 4·s·(s − w)·d·8 FLOPs more than the counted s·w.
 * Fused: tsl_attn_keys(1024, 256, causal) = 256 − 256·255/2048 = 224.125 keys visited,
 * K/V read over the w keys of the window — unchanged. */
static void test_window(void)
{
    tsl_roofline_dev_t d = h100(), flat;
    tsl_roofline_dev_init(&flat, d.gemm_flops, 0);
    tsl_layer_t l = {.kind = TSL_LAYER_ENCODER,
                     .seq_len = 1024,
                     .hidden = 1024,
                     .ffn_hidden = 4096,
                     .heads = 16,
                     .attn_window = 256,
                     .causal = true};
    tsl_layer_t uf = l, ufs = l;
    uf.unfused_attn = ufs.unfused_attn = true;
    ufs.attn_window = 0;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0 && tsl_layer_derive(&uf, &err) == 0 &&
              tsl_layer_derive(&ufs, &err) == 0,
          "%s", err.msg);
    double s = 1024, b = 8 * 16;
    double core = tsl_roofline_gemm_s(&d, s, s, 64, b) + tsl_roofline_gemm_s(&d, s, 64, s, b) +
                  tsl_roofline_mem_s(&d, 9.0 * 16 * s * s * 8, 2);
    CHECK_NEAR(tsl_roofline_core_fwd_s(&d, &uf, 8, 1), core, 1e-12, "unfused window core %g",
               tsl_roofline_core_fwd_s(&d, &uf, 8, 1));
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &uf, 8, 1, false, 0),
               tsl_roofline_layer_fwd_s(&d, &ufs, 8, 1, false, 0), 1e-12,
               "an unfused window runs the unwindowed layer");
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&flat, &uf, 8, 1, false, 0),
               (uf.fwd_flops + 4.0 * s * (s - 256) * 1024) * 8 / d.gemm_flops, 1e-12,
               "the FLOP-count fallback runs the masked scores");
    CHECK_NEAR(tsl_roofline_core_fwd_s(&flat, &uf, 8, 1), 4.0 * s * s * 1024 * 8 / d.gemm_flops,
               1e-12, "the recomputed core too");
    double k = tsl_attn_keys(1024, 256, true);
    CHECK(k == 224.125, "keys %g", k);
    double fused = fmax(4.0 * s * k * 1024 * 8 / d.gemm_flops,
                        2.0 * (2.0 * s * 1024 + 2.0 * 256 * 1024) * 8 / d.mem_bw) +
                   d.launch_s;
    CHECK_NEAR(tsl_roofline_core_fwd_s(&d, &l, 8, 1), fused, 1e-12, "fused window core %g",
               tsl_roofline_core_fwd_s(&d, &l, 8, 1));
}

int main(void)
{
    test_gemm();
    test_layers();
    test_causal();
    test_window();
    return CHECK_DONE();
}

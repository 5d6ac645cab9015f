/*
 * test_roofline.c — planner/roofline: one GEMM compute- and memory-bound by
 * hand, the FLOP-only fallback, and the two cases FLOPs alone get wrong: micro-batches
 * of 1 cost more per sample than one micro-batch of 16, and high-resolution
 * layers with a thin hidden size are memory-bound. The GEMM shape curve
 * (gemm_eff.h) by hand, its monotony, its fit to the measured H100 table, head
 * dimension 96 on the A100 (why tile quantization cannot move it), and the
 * backward's gradient GEMMs.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attn_kernel.h"
#include "check.h"
#include "cuda_graph.h"
#include "fp8_sp_gather_bytes.h"
#include "cluster.h"
#include "gemm_eff.h"
#include "layer_dense.h"
#include "layer_dsv3.h"
#include "loss_impl.h"
#include "mamba.h"
#include "norm_impl.h"
#include "recompute.h"
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

/* Transformer Engine's MXFP8 quantize moves its bytes at TSL_MXFP8_CAST_MEM_EFF of the
 * datasheet, the roofline's W at TSL_ROOFLINE_MEM_EFF (cost model 189): its bytes by
 * hand count MXR times over at W. */
#define MXR (TSL_ROOFLINE_MEM_EFF / TSL_MXFP8_CAST_MEM_EFF)

static tsl_layer_t layer(uint32_t s, uint32_t h, uint32_t a)
{
    tsl_layer_t l = {
        .kind = TSL_LAYER_ENCODER, .seq_len = s, .hidden = h, .ffn_hidden = 4 * h, .heads = a};
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    return l;
}

/* A routed-expert FFN layer (no biases, RMSNorm, no dropout, as every MoE row runs
 * it) of E experts, k per token, not derived: the callers set what else differs. */
static tsl_layer_t moe_ffn(uint32_t s, uint32_t h, uint32_t f, uint32_t heads, bool gated,
                           uint32_t experts, uint32_t k)
{
    return (tsl_layer_t){.kind = TSL_LAYER_FFN,
                         .seq_len = s,
                         .hidden = h,
                         .ffn_hidden = f,
                         .heads = heads,
                         .gated_ffn = gated,
                         .no_bias = true,
                         .rms_norm = true,
                         .no_dropout = true,
                         .experts = experts,
                         .experts_per_tok = k};
}

/* Llama 3 70B's block at 8K (causal: a GPT-style block; 64 query / 8 KV heads). */
static tsl_layer_t llama70b_layer(void)
{
    tsl_layer_t l = {.kind = TSL_LAYER_ENCODER,
                     .seq_len = 8192,
                     .hidden = 8192,
                     .ffn_hidden = 28672,
                     .heads = 64,
                     .kv_heads = 8,
                     .causal = true};
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
 * dropout traffic 9 · a · s · s · 8 bytes in 2 kernels (at the score kernels' rate,
 * TSL_ROOFLINE_SCORE_KERNEL_SLOWDOWN): the core of the unwindowed
 * layer. Its FLOP-only fallback runs 4·s·(s − w)·d·8 FLOPs more than the counted s·w.
 * Fused: tsl_attn_keys(1024, 256, causal) = 256 − 256·255/2048 = 224.125 keys visited,
 * K/V read over the w keys of the window — unchanged. */
static void test_window(void)
{
    tsl_roofline_dev_t d = h100(), flat;
    tsl_roofline_dev_init(&flat, d.gemm_flops, 0);
    tsl_layer_t l = gpt2_medium(1024);
    l.attn_window = 256;
    l.causal = true;
    tsl_layer_t uf = l, ufs = l;
    uf.unfused_attn = ufs.unfused_attn = true;
    ufs.attn_window = 0;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0 && tsl_layer_derive(&uf, &err) == 0 &&
              tsl_layer_derive(&ufs, &err) == 0,
          "%s", err.msg);
    double s = 1024, b = 8 * 16;
    double core =
        tsl_roofline_gemm_s(&d, s, s, 64, b) + tsl_roofline_gemm_s(&d, s, 64, s, b) +
        tsl_roofline_mem_s(&d, TSL_ROOFLINE_SCORE_KERNEL_SLOWDOWN * 9.0 * 16 * s * s * 8, 2);
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

/* The curve by hand. H100: 132 SMs, k_half = 0.705 · 989e12 / 3350e9 = 208.133.
 * 8192³: 64·64 = 4096 tiles fill the SMs; depth 8192/8400.133 = 0.975223.
 * 1024³: 8·8 = 64 tiles, k = 1024 is one split-K unit: occupancy 64/132 =
 * 0.484848, depth 1024/1232.133 = 0.831079: 0.402948. 1024·1024·4096: four
 * split-K units per tile, 256 ≥ 132: occupancy 1, depth 4096/4304.133 = 0.951643.
 * A100-80G: 108 SMs, k_half = 0.705 · 312e12 / 2039e9 = 107.876; 1024³:
 * 64/108 · 1024/1131.876 = 0.536114. */
static void test_curve(void)
{
    tsl_gemm_eff_t h, a, none;
    tsl_gemm_eff_for_gpu(&h, "H100-80G", 989e12, 3350e9);
    tsl_gemm_eff_for_gpu(&a, "A100-80G", 312e12, 2039e9);
    tsl_gemm_eff_for_gpu(&none, "MyGPU-7G", 100e12, 0);
    CHECK(h.sms == 132 && a.sms == 108, "SMs %g %g", h.sms, a.sms);
    CHECK_NEAR(h.k_half, 208.1328358, 1e-9, "H100 k_half %.9g", h.k_half);
    CHECK_NEAR(tsl_gemm_eff_shape(&h, 8192, 8192, 8192, 1), 0.975223, 1e-5, "8192^3");
    CHECK_NEAR(tsl_gemm_eff_shape(&h, 1024, 1024, 1024, 1), 0.402948, 1e-5, "1024^3");
    CHECK_NEAR(tsl_gemm_eff_shape(&h, 1024, 1024, 4096, 1), 0.951643, 1e-5, "split-K");
    CHECK_NEAR(tsl_gemm_eff_shape(&a, 1024, 1024, 1024, 1), 0.536114, 1e-5, "A100 1024^3");
    CHECK(none.sms == 0 && none.k_half == 0 && tsl_gemm_eff_shape(&none, 64, 64, 64, 1) == 1.0,
          "an unknown GPU without bandwidth: flat");
    /* monotone non-decreasing in every dimension and in the batch */
    double prev = 0;
    for (double x = 64; x <= 65536; x *= 2) {
        double u = tsl_gemm_eff_shape(&h, x, x, x, 1);
        CHECK(u >= prev && u > 0 && u <= 1, "square %g: %g after %g", x, u, prev);
        prev = u;
        CHECK(tsl_gemm_eff_shape(&h, 4096, 4096, x, 1) >=
                  tsl_gemm_eff_shape(&h, 4096, 4096, x / 2, 1),
              "deeper k %g", x);
        CHECK(tsl_gemm_eff_shape(&h, x, 1024, 1024, 1) >=
                  tsl_gemm_eff_shape(&h, x / 2, 1024, 1024, 1),
              "more rows %g", x);
        CHECK(tsl_gemm_eff_shape(&h, 1024, 1024, 64, x) >=
                  tsl_gemm_eff_shape(&h, 1024, 1024, 64, x / 2),
              "larger batch %g", x);
    }
}

/* A device at `rate` FLOP/s and bw bytes/s with the named GPU's GEMM shape curve
 * (its datasheet peak). */
static tsl_roofline_dev_t shaped_dev(const char *gpu, double rate, double peak, double bw)
{
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, rate, bw);
    tsl_gemm_eff_for_gpu(&d.shape, gpu, peak, bw);
    return d;
}

/* The measured cuBLAS table of deploy/profiles/h100-80g.json (tessel-worker,
 * bf16, median of 10) against the roofline with the H100 curve: median |error|
 * under 6 %, every point within 25 % but one — "pv h1024 mb1", a memory-bound
 * batched GEMM that ran 50 % faster than 80 % of the datasheet bandwidth allows
 * (its 38 MB sit in the 50 MB L2). Residual in the log, as fitted. */
static const struct {
    const char *what;
    double m, n, k, b, time_s;
} h100_table[] = {
    {"reference 8192^3", 8192, 8192, 8192, 1, 1537e-6},
    {"reference 4096^3", 4096, 4096, 4096, 1, 198.3e-6},
    {"qkv h1024 mb1 tp1", 1024, 3072, 1024, 1, 15.19e-6},
    {"qk^T h1024 mb1 tp1", 1024, 1024, 64, 16, 16.59e-6},
    {"pv h1024 mb1 tp1", 1024, 64, 1024, 16, 12.08e-6},
    {"attn-out h1024 mb1 tp1", 1024, 1024, 1024, 1, 12.4e-6},
    {"ffn-up h1024 mb1 tp1", 1024, 4096, 1024, 1, 17.91e-6},
    {"ffn-down h1024 mb1 tp1", 1024, 1024, 4096, 1, 17.61e-6},
    {"qkv h1024 mb16 tp1", 16384, 3072, 1024, 1, 156.3e-6},
    {"qk^T h1024 mb16 tp1", 1024, 1024, 64, 256, 231.1e-6},
    {"pv h1024 mb16 tp1", 1024, 64, 1024, 256, 217.4e-6},
    {"attn-out h1024 mb16 tp1", 16384, 1024, 1024, 1, 51.78e-6},
    {"ffn-up h1024 mb16 tp1", 16384, 4096, 1024, 1, 189.4e-6},
    {"ffn-down h1024 mb16 tp1", 16384, 1024, 4096, 1, 187.2e-6},
    {"qkv h1024 mb16 tp8", 16384, 384, 1024, 1, 26.37e-6},
    {"qk^T h1024 mb16 tp8", 1024, 1024, 64, 32, 32.55e-6},
    {"pv h1024 mb16 tp8", 1024, 64, 1024, 32, 32.29e-6},
    {"attn-out h1024 mb16 tp8", 16384, 1024, 128, 1, 19.57e-6},
    {"ffn-up h1024 mb16 tp8", 16384, 512, 1024, 1, 30.71e-6},
    {"ffn-down h1024 mb16 tp8", 16384, 1024, 512, 1, 35.17e-6},
    {"qkv h2048 mb1 tp1", 1024, 6144, 2048, 1, 40.74e-6},
    {"qk^T h2048 mb1 tp1", 1024, 1024, 64, 32, 32.17e-6},
    {"pv h2048 mb1 tp1", 1024, 64, 1024, 32, 32.07e-6},
    {"attn-out h2048 mb1 tp1", 1024, 2048, 2048, 1, 15.54e-6},
    {"ffn-up h2048 mb1 tp1", 1024, 8192, 2048, 1, 50.01e-6},
    {"ffn-down h2048 mb1 tp1", 1024, 2048, 8192, 1, 47.02e-6},
    {"qkv h2048 mb16 tp1", 16384, 6144, 2048, 1, 585.3e-6},
    {"qk^T h2048 mb16 tp1", 1024, 1024, 64, 512, 459.4e-6},
    {"pv h2048 mb16 tp1", 1024, 64, 1024, 512, 428.2e-6},
    {"attn-out h2048 mb16 tp1", 16384, 2048, 2048, 1, 178.6e-6},
    {"ffn-up h2048 mb16 tp1", 16384, 8192, 2048, 1, 876.3e-6},
    {"ffn-down h2048 mb16 tp1", 16384, 2048, 8192, 1, 803.4e-6},
    {"qkv h2048 mb16 tp8", 16384, 768, 2048, 1, 83.76e-6},
    {"qk^T h2048 mb16 tp8", 1024, 1024, 64, 64, 60.94e-6},
    {"pv h2048 mb16 tp8", 1024, 64, 1024, 64, 60.68e-6},
    {"attn-out h2048 mb16 tp8", 16384, 2048, 256, 1, 44.73e-6},
    {"ffn-up h2048 mb16 tp8", 16384, 1024, 2048, 1, 101.2e-6},
    {"ffn-down h2048 mb16 tp8", 16384, 2048, 1024, 1, 105.5e-6},
};

static void test_h100_fit(void)
{
    tsl_roofline_dev_t d = shaped_dev("H100-80G", 989e12 * 0.777, 989e12, 3350e9);
    size_t n = sizeof(h100_table) / sizeof(h100_table[0]), over = 0;
    double err[64];
    CHECK(n == 38 && n <= 64, "%zu rows", n);
    for (size_t i = 0; i < n; i++) {
        double t = tsl_roofline_gemm_s(&d, h100_table[i].m, h100_table[i].n, h100_table[i].k,
                                       h100_table[i].b);
        err[i] = fabs(log(t / h100_table[i].time_s));
        if (err[i] > log(1.25)) {
            over++;
            CHECK(strcmp(h100_table[i].what, "pv h1024 mb1 tp1") == 0, "%s: %.1f us, measured %.1f",
                  h100_table[i].what, t * 1e6, h100_table[i].time_s * 1e6);
        }
    }
    CHECK(over <= 1, "%zu points off by more than 25 %%", over);
    for (size_t i = 1; i < n; i++) /* insertion sort for the median */
        for (size_t j = i; j > 0 && err[j] < err[j - 1]; j--) {
            double x = err[j];
            err[j] = err[j - 1];
            err[j - 1] = x;
        }
    CHECK(err[n / 2] < log(1.06), "median |error| %.3f", exp(err[n / 2]) - 1);
    /* every output edge of the table is a multiple of 64, cuBLAS's smallest tile edge:
     * the table cannot see tile quantization (docs/cost-model.md, "Tile quantization") */
    for (size_t i = 0; i < n; i++)
        CHECK(fmod(h100_table[i].m, 64) == 0 && fmod(h100_table[i].n, 64) == 0,
              "%s: an edge not a multiple of 64", h100_table[i].what);
}

/* Head dimension 96 (Narayanan 2021 Table 1's 1.7B: s 2048, 24 heads, 16 samples, TP 1;
 * unfused core: 384 batched GEMMs per score GEMM) on the A100-80G, by hand. X =
 * 312e12 · 0.82, W = 0.8 · 2039e9 = 1631.2e9 B/s, k_half = 0.705 · 312e12 / 2039e9 =
 * 107.876. Both GEMMs run 2·2048²·96·384 = 309.24 GFLOP and move 2·(2·2048·96 +
 * 2048²)·384 = 3.5232 GB: 2.1599 ms at W.
 *   QKᵀ (2048, 2048, 96): output edges 2048, no padding; depth 96/203.876 = 0.470874:
 *   309.24e9 / (255.84e12 · 0.470874) = 2.5670 ms, compute-bound.
 *   PV (2048, 96, 2048): its 96-wide edge fills 3/4 of a 64- or 128-wide tile pair;
 *   depth 2048/2155.876 = 0.94996: 1.2724 ms of compute, 1.6965 ms with the quarter
 *   wasted — still under the 2.1599 ms of bytes: memory-bound either way, so a
 *   tile-quantization term cannot change its time. */
static void test_head_dim_96(void)
{
    tsl_roofline_dev_t d = shaped_dev("A100-80G", 312e12 * 0.82, 312e12, 2039e9);
    double s = 2048, hd = 96, b = 384, flops = 2 * s * s * hd * b;
    double bytes_s = 2 * (2 * s * hd + s * s) * b / (0.8 * 2039e9);
    CHECK_NEAR(bytes_s, 2.159892e-3, 1e-6, "score GEMM bytes %.6g s", bytes_s);
    double depth_qk = hd / (hd + 0.705 * 312e12 / 2039e9);
    CHECK_NEAR(depth_qk, 0.4708735, 1e-6, "QK^T depth %.6f", depth_qk);
    double qk = tsl_roofline_gemm_s(&d, s, s, hd, b);
    CHECK_NEAR(qk, flops / (312e12 * 0.82 * depth_qk) + d.launch_s, 1e-12, "QK^T %.6g s", qk);
    CHECK(qk > bytes_s + d.launch_s, "QK^T compute-bound at depth 96");
    double pv = tsl_roofline_gemm_s(&d, s, hd, s, b);
    CHECK_NEAR(pv, bytes_s + d.launch_s, 1e-12, "PV %.6g s: the byte term", pv);
    double depth_pv = s / (s + 0.705 * 312e12 / 2039e9);
    double pv_padded = flops / (312e12 * 0.82 * depth_pv * 0.75);
    CHECK_NEAR(pv_padded, 1.696511e-3, 1e-6, "PV with a quarter of its tiles wasted %.6g s",
               pv_padded);
    CHECK(pv_padded < bytes_s, "PV stays memory-bound with the tile waste");
}

/* Megatron's score kernels against Korthikanti et al. 2022, Table 4 (cost model 128):
 * one 22B layer (h 6144, 64 heads of 96, s 2048, causal, dropout 0.1), micro-batch 4,
 * TP 8, A100 80 GB. Selective recomputation repeats the core's forward alone and adds
 * 13.2 − 11.9 = 1.3 ms to the backward (13.1 − 11.8 with SP; each figure to 0.05 ms,
 * so 1.2–1.4). The core: QKᵀ (2048, 2048, 96) × 32, compute-bound at depth 96, PV
 * (2048, 96, 2048) × 32 on its bytes, the fused softmax and the dropout 9 B a score
 * over 32 · 2048² scores in 2 kernels, 1.2 × their bytes' time at W. At W (before
 * 124) the core was 1.150 ms, under the table's least. */
static void test_megatron_scores(void)
{
    tsl_roofline_dev_t d = shaped_dev("A100-80G", 312e12 * 0.82, 312e12, 2039e9);
    tsl_layer_t l = layer(2048, 6144, 64);
    l.causal = true;
    l.unfused_attn = true;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    double s = 2048, b = 4 * 64 / 8, scores = b * s * s, W = 0.8 * 2039e9;
    double gemms = tsl_roofline_gemm_s(&d, s, s, 96, b) + tsl_roofline_gemm_s(&d, s, 96, s, b);
    double kernels = 9.0 * scores / W;
    CHECK_NEAR(kernels, 0.7407e-3, 1e-3, "score kernels at W %.4f ms", kernels * 1e3);
    double core = tsl_roofline_core_fwd_s(&d, &l, 4, 8);
    CHECK_NEAR(core, gemms + TSL_ROOFLINE_SCORE_KERNEL_SLOWDOWN * kernels + 2 * d.launch_s, 1e-12,
               "core by hand %.4f ms", core * 1e3);
    CHECK(core > 1.2e-3 && core < 1.4e-3, "core %.4f ms within Table 4's 1.2-1.4", core * 1e3);
    CHECK_NEAR(core, 1.3e-3, 0.01, "core %.4f ms, Table 4's 1.3", core * 1e3);
    double at_w = gemms + kernels + 2 * d.launch_s;
    CHECK(at_w < 1.2e-3, "at W the core is %.4f ms, below Table 4's least", at_w * 1e3);
}

/* Megatron-LM v1.1.5 without its fusion flags under PyTorch 1.7 (dev.unfused_elementwise,
 * AMP's fork; cost model 140): per block the QKV bias added after the matmul, the
 * FFN-in bias before the GeLU, the two row-parallel biases before the dropout (4 B per
 * output element forward), masked_fill_ over the scores (4 B per score each pass, at
 * the score kernels' rate) and the context's permute copy (4 B per element each pass).
 * GPT-2 345M's block (s 1024, h 1024, 16 heads, causal) on a T4 at micro-batch 1, TP 1
 * and 2: each pass grows by exactly those bytes at W and a launch per kernel. At TP 1
 * the forward of the fork's two runs, 5.08 ms without them (12 % under), comes within
 * 6 % of AMP's own T4 profile of the same block (DachengLi1/AMP
 * src/known_cost/gpt2_G4_1.npy, units 12-25 at iteration 35: 5.69-5.83 ms, mean 5.75;
 * the first six blocks 4.90). */
static void test_unfused_elementwise(void)
{
    tsl_roofline_dev_t d = shaped_dev("T4-16G", 65e12 * 0.38, 65e12, 320e9);
    tsl_layer_t l = layer(1024, 1024, 16);
    l.causal = true;
    l.unfused_attn = true;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    double W = 0.8 * 320e9, T = 1024, h = 1024;
    for (uint32_t t = 1; t <= 2; t++) {
        tsl_roofline_dev_t u = d;
        u.unfused_elementwise = true;
        double f0 = tsl_roofline_layer_fwd_s(&d, &l, 1, t, false, 0);
        double b0 = tsl_roofline_layer_bwd_s(&d, &l, 1, t, false, 0);
        double f1 = tsl_roofline_layer_fwd_s(&u, &l, 1, t, false, 0);
        double b1 = tsl_roofline_layer_bwd_s(&u, &l, 1, t, false, 0);
        double scores = 16.0 * 1024 * 1024 / t;
        double mask = TSL_ROOFLINE_SCORE_KERNEL_SLOWDOWN * 4.0 * scores / W;
        double adds = 4.0 * T * (3 * h / t + h + 4 * h / t + h) / W; /* QKV, out, FC1, FC2 */
        double copy = 4.0 * T * h / t / W;
        CHECK_NEAR(f1 - f0, mask + adds + copy + 6 * d.launch_s, 1e-9, "tp %u: forward + %.4f ms",
                   t, (f1 - f0) * 1e3);
        CHECK_NEAR(b1 - b0, mask + copy + 2 * d.launch_s, 1e-9, "tp %u: backward + %.4f ms", t,
                   (b1 - b0) * 1e3);
        if (t == 1) {
            printf("T4 block, two forward runs: %.3f ms, %.3f without\n", 2 * f1 * 1e3,
                   2 * f0 * 1e3);
            CHECK(fabs(2 * f1 / 5.75e-3 - 1) < 0.07,
                  "two forward runs %.3f ms within 7 %% of AMP's T4 profile (5.75)", 2 * f1 * 1e3);
            CHECK(2 * f0 < 0.9 * 5.69e-3, "without: %.3f ms, over 10 %% short of it", 2 * f0 * 1e3);
        }
    }
    /* a fused core keeps its mask inside the kernel: the flag adds the adds and the copy */
    tsl_layer_t fl = l;
    fl.unfused_attn = false;
    tsl_roofline_dev_t u = d;
    u.unfused_elementwise = true;
    double df = tsl_roofline_layer_fwd_s(&u, &fl, 1, 1, false, 0) -
                tsl_roofline_layer_fwd_s(&d, &fl, 1, 1, false, 0);
    CHECK_NEAR(df, 4.0 * T * (3 * h + h + 4 * h + h) / W + 4.0 * T * h / W + 5 * d.launch_s, 1e-9,
               "fused core: forward + %.4f ms, no mask", df * 1e3);
    /* a layer without biases: the mask and the copy alone */
    tsl_layer_t nb = l;
    nb.no_bias = true;
    double dn = tsl_roofline_layer_fwd_s(&u, &nb, 1, 1, false, 0) -
                tsl_roofline_layer_fwd_s(&d, &nb, 1, 1, false, 0);
    CHECK_NEAR(dn,
               TSL_ROOFLINE_SCORE_KERNEL_SLOWDOWN * 4.0 * 16.0 * 1024 * 1024 / W + 4.0 * T * h / W +
                   2 * d.launch_s,
               1e-9, "no biases: forward + %.4f ms", dn * 1e3);
}

/* The backward of one GEMM is its two gradient GEMMs: dX (m, k, n), dW (k, n, m).
 * A thin TP shard, (16384 × 1024)·(1024 × 128) on the H100 (attn-out, TP 8): its
 * forward is 128 tiles deep by 128 only (depth 128/336 = 0.38); its dX is 1024
 * deep and its dW 16384 deep: its backward costs less than twice its forward.
 * The FFN block (4 elementwise kernels: norm, residual, dropout, GELU) moves 1.5×
 * its forward bytes in the backward, with as many kernels, plus its two bias
 * gradients (a read of each GEMM's output gradient). */
static void test_backward(void)
{
    tsl_roofline_dev_t d = shaped_dev("H100-80G", 989e12 * 0.777, 989e12, 3350e9);
    tsl_layer_t l;
    memset(&l, 0, sizeof(l));
    l.kind = TSL_LAYER_FFN;
    l.seq_len = 1024;
    l.hidden = 1024;
    l.ffn_hidden = 4096;
    l.heads = 16;
    double f = tsl_roofline_layer_fwd_s(&d, &l, 16, 1, false, 0);
    double b = tsl_roofline_layer_bwd_s(&d, &l, 16, 1, false, 0);
    double T = 16384, by_hand_f = tsl_roofline_gemm_s(&d, T, 4096, 1024, 1) +
                                  tsl_roofline_gemm_s(&d, T, 1024, 4096, 1);
    double by_hand_b =
        tsl_roofline_gemm_s(&d, T, 1024, 4096, 1) + tsl_roofline_gemm_s(&d, 1024, 4096, T, 1) +
        tsl_roofline_gemm_s(&d, T, 4096, 1024, 1) + tsl_roofline_gemm_s(&d, 4096, 1024, T, 1);
    /* the two bias gradients: dY.sum(0) over 16384 tokens of 4096 and 1024 outputs */
    double bias_b = 2.0 * T * (4096 + 1024) / d.mem_bw + 2 * d.launch_s;
    CHECK_NEAR(bias_b, 62.6e-6 + 8e-6, 1e-3, "bias gradients %.2f us", bias_b * 1e6);
    by_hand_b += bias_b;
    double elem_f = f - by_hand_f, elem_b = b - by_hand_b;
    CHECK(elem_f > 0, "the forward's elementwise part %g", elem_f);
    /* one kernel more backward: the norm's dγ/dβ finalize (cost model 178) */
    CHECK_NEAR(elem_b - 5 * d.launch_s, 1.5 * (elem_f - 4 * d.launch_s), 1e-12,
               "elementwise backward bytes 1.5 x: %g vs %g", elem_b, elem_f);
    /* measured (h100-80g.json, ffn h1024 mb16 tp1): bwd/fwd 0.942/0.584 = 1.61 */
    CHECK(b / f > 1.5 && b / f < 2.1, "FFN backward %.3f x forward", b / f);
    double thin_f = tsl_roofline_gemm_s(&d, T, 1024, 128, 1);
    double thin_b =
        tsl_roofline_gemm_s(&d, T, 128, 1024, 1) + tsl_roofline_gemm_s(&d, 128, 1024, T, 1);
    CHECK(thin_b < 2 * thin_f, "thin shard: backward %.3g x forward", thin_b / thin_f);
}

/* The fused attention core on the H100 runs at flash's measured share of peak
 * (gemm_eff.h) at a dense step's settled clock (× 708.5 / 841.9, the H200's MSMF /
 * MAMF, since cost model 142), not the GEMM curve's. GPT-2 medium, causal, 16 samples:
 * 256 blocks of 128 queries (16 samples × 16 heads), over one wave of 132 SMs;
 * 4·1024·512.5·1024·16 = 34.39 GFLOP forward at 0.35 · 0.8415 × 989 TFLOP/s (the
 * causal rule on top: 156.97 µs + L), its Q, K, V, O (134 MB, 50 µs) hidden. Backward
 * 2.5 × those FLOPs at 0.18 · 0.8415 × 989: 763.07 µs where the GEMM curve (u = 512.5 / (512.5 + 208.13))
 * gave 157.33 µs + L. The V100 has no flash figure: the GEMM curve as before (the
 * A100's since cost model 108: test_a100_flash). */
static void test_flash(void)
{
    tsl_roofline_dev_t d = shaped_dev("H100-80G", 989e12 * 0.777, 989e12, 3350e9);
    const double settled = 708.5 / 841.9; /* the H200's MSMF / MAMF (cost model 142) */
    CHECK_NEAR(d.shape.attn_fwd_flops, 0.35 * settled * 989e12, 1e-12, "H100 flash forward");
    CHECK_NEAR(d.shape.attn_bwd_flops, 0.18 * settled * 989e12, 1e-12, "H100 flash backward");
    tsl_gemm_eff_t v100;
    tsl_gemm_eff_for_gpu(&v100, "V100-32G", 125e12, 900e9);
    CHECK(v100.attn_fwd_flops == 0 && v100.attn_bwd_flops == 0, "V100: none");
    tsl_layer_t l = layer(1024, 1024, 16);
    l.causal = true;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    double flops = 4.0 * 1024 * 512.5 * 1024 * 16;
    CHECK(flops == 34393292800.0, "core FLOPs %.17g", flops);
    /* causal: 0.94 · 512.5 / (512.5 + 128) = 0.75215 of the unmasked rates */
    double r = TSL_ATTN_CAUSAL_EFF * 512.5 / (512.5 + TSL_ATTN_CAUSAL_KEYS);
    CHECK_NEAR(r, 0.75215, 1e-4, "causal efficiency %.5f", r);
    double fwd = flops / (0.35 * settled * 989e12 * r) + TSL_ROOFLINE_LAUNCH_S;
    CHECK_NEAR(fwd, 160.97e-6, 1e-4, "by hand %.2f us", fwd * 1e6);
    CHECK_NEAR(tsl_roofline_core_fwd_s(&d, &l, 16, 1), fwd, 1e-12, "forward core %.2f us",
               tsl_roofline_core_fwd_s(&d, &l, 16, 1) * 1e6);
    /* the backward: the layer's with flash against the same without its figures */
    tsl_roofline_dev_t gemm_priced = d;
    gemm_priced.shape.attn_fwd_flops = gemm_priced.shape.attn_bwd_flops = 0.0;
    double k_half = 0.705 * 989e12 / 3350e9, u = 512.5 / (512.5 + k_half);
    double flash_b = 2.5 * flops / (0.18 * settled * 989e12 * r),
           gemm_b = 2.5 * flops / (989e12 * 0.777 * u);
    CHECK_NEAR(flash_b, 763.07e-6, 1e-4, "by hand %.2f us", flash_b * 1e6);
    CHECK_NEAR(gemm_b, 157.33e-6, 1e-4, "by hand %.2f us", gemm_b * 1e6);
    CHECK(2.0 * 2 * (2.0 * 1024 * 1024 + 2.0 * 1024 * 1024) * 16 / d.mem_bw < gemm_b,
          "the backward core is compute-bound");
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&d, &l, 16, 1, false, 0) -
                   tsl_roofline_layer_bwd_s(&gemm_priced, &l, 16, 1, false, 0),
               flash_b - gemm_b, 1e-9, "backward core: flash %.2f us more, by hand %.2f",
               (tsl_roofline_layer_bwd_s(&d, &l, 16, 1, false, 0) -
                tsl_roofline_layer_bwd_s(&gemm_priced, &l, 16, 1, false, 0)) *
                   1e6,
               (flash_b - gemm_b) * 1e6);
    /* the unfused core is batched GEMMs: no flash figure applies */
    tsl_layer_t un = l;
    un.unfused_attn = true;
    CHECK(tsl_layer_derive(&un, &err) == 0, "%s", err.msg);
    CHECK(tsl_roofline_core_fwd_s(&d, &un, 16, 1) ==
              tsl_roofline_core_fwd_s(&gemm_priced, &un, 16, 1),
          "unfused: the GEMM curve");
}

/* The H100 family's default backward at its keys (cost model 172; attn_kernel.h
 * tsl_attn_hopper_default_bwd_keys): 0.18, measured at 1,024 keys, carried along the keys
 * by FlashAttention-2's published backward at the layer's head dimension (the FA3 paper's
 * Fig. 6: at 128, 260 TFLOP/s at 1k, 318 at 8k, 322 at 16k and flat past it; at 64, 238
 * and 291). One non-causal layer of 16,384 tokens, 16 heads of 128 on an H100 (2,048
 * query blocks: occupancy 1): 4 · 16384² · 2048 = 2.199 TFLOP forward, 2.5 × that
 * backward at 0.18 · 0.8415 · 989 TFLOP/s = 36.69 ms flat, ÷ 322/260 = 29.63 ms keyed.
 * flash1-triton keeps the family's figure flat (the MPT rows): the two layers' backwards
 * differ by the core alone. At 1,024 keys nothing moves (test_flash). */
static void test_default_bwd_keys(void)
{
    CHECK_NEAR(tsl_attn_hopper_default_bwd_keys(128, 1024), 1.0, 1e-12, "1 at 1k");
    CHECK_NEAR(tsl_attn_hopper_default_bwd_keys(128, 8192), 318.0 / 260.0, 1e-12, "8k: %g",
               tsl_attn_hopper_default_bwd_keys(128, 8192));
    CHECK_NEAR(tsl_attn_hopper_default_bwd_keys(128, 131072), 322.0 / 260.0, 1e-12, "128k: %g",
               tsl_attn_hopper_default_bwd_keys(128, 131072));
    CHECK_NEAR(tsl_attn_hopper_default_bwd_keys(64, 16384), 291.0 / 238.0, 1e-12, "64, 16k: %g",
               tsl_attn_hopper_default_bwd_keys(64, 16384));
    CHECK_NEAR(tsl_attn_hopper_default_bwd_keys(128, 512), 214.0 / 260.0, 1e-12, "512: %g",
               tsl_attn_hopper_default_bwd_keys(128, 512));
    CHECK(tsl_attn_hopper_default_bwd_keys(128, 0) == 1.0 &&
              tsl_attn_hopper_default_bwd_keys(0, 8192) == 1.0,
          "no keys or no head: 1");
    tsl_roofline_dev_t d = shaped_dev("H100-80G", 989e12 * 0.777, 989e12, 3350e9);
    const double settled = 708.5 / 841.9;
    tsl_layer_t l = layer(16384, 2048, 16);
    const double flops = 4.0 * 16384 * 16384 * 2048;
    const double flat = 2.5 * flops / (0.18 * settled * 989e12), keyed = flat / (322.0 / 260.0);
    CHECK_NEAR(flat, 36.69e-3, 1e-3, "flat by hand %.2f ms", flat * 1e3);
    CHECK_NEAR(keyed, 29.63e-3, 1e-3, "keyed by hand %.2f ms", keyed * 1e3);
    tsl_roofline_dev_t triton = d;
    triton.attn_kernel = TSL_ATTN_KERNEL_FLASH1_TRITON;
    double b = tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0),
           bt = tsl_roofline_layer_bwd_s(&triton, &l, 1, 1, false, 0);
    CHECK_NEAR(bt - b, flat - keyed, 1e-9, "the default's core %.3f ms faster, by hand %.3f",
               (bt - b) * 1e3, (flat - keyed) * 1e3);
    CHECK(tsl_roofline_core_fwd_s(&d, &l, 1, 1) == tsl_roofline_core_fwd_s(&triton, &l, 1, 1),
          "the forward keeps its figure");
    /* at 1,024 keys the default and the flat figure agree */
    tsl_layer_t s1k = layer(1024, 2048, 16);
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&d, &s1k, 16, 1, false, 0),
               tsl_roofline_layer_bwd_s(&triton, &s1k, 16, 1, false, 0), 1e-12, "1k: as before");
}

/* Blackwell's fused attention (gemm_eff.h TSL_ATTN_GB100_*, cuDNN's published GB200
 * sweeps): 0.67 forward, 0.54 backward of the bf16 peak on B200 and GB200, burst timings
 * taken since cost model 145 at a dense step's settled clock, × the B200's MSMF / MAMF
 * S = 1456.3 / 1770.9 = 0.82235 (TSL_ATTN_GB100_SETTLED): 0.5510 / 0.4441, each at most
 * the GEMM rate F. The Llama 3 70B layer of the mbridge GB200 row, one sample at TP 2:
 * s 8192, 64 heads of 128 (32 per rank), 8 KV heads, causal. Per rank
 * 4 · 8192 · 4096.5 · 8192 / 2 = 549.82 GFLOP forward; 64 query blocks × 32 heads =
 * 2048 > 148 SMs (one wave or more: occupancy 1); causal 0.94 · 4096.5 / 4224.5 =
 * 0.91152 of the unmasked rate. F is the sustained rate, 2500 · 0.581 = 1452.5 TFLOP/s
 * (cluster_hw.c); the settled forward share, 2500 · 0.67 · S = 1377.4, now lies below it
 * (cost models 56-144 capped the burst 1675 at F): 1255.6 TFLOP/s, 437.91 µs + L (the
 * GEMM curve gives 1452.5 · 4096.5 / (4096.5 + 220.31) = 1378.4 TFLOP/s, 398.89 µs); the
 * backward's 0.54 · S · 2500 = 1110.2: 2.5 × at 1011.9 TFLOP/s, 1358.33 µs (GEMM curve
 * 997.23). Its Q, K, V, O (151 MB per rank, 23.6 µs at 0.8 × 8 TB/s) stay hidden. The
 * published kernel at this shape (GB200, 8k causal, 64/8 heads, ten single-kernel calls)
 * ran 1574–1598 forward and 1311–1332 backward: × S, 1294–1314 and 1078–1095, which the
 * causal rule prices 3–4 % and 6–8 % below. */
static void test_blackwell_flash(void)
{
    const tsl_gpu_spec_t *gb = tsl_gpu_find("GB200"), *b = tsl_gpu_find("B200");
    CHECK(gb != NULL && b != NULL, "B200, GB200 built in");
    if (gb == NULL || b == NULL)
        return;
    tsl_gemm_eff_t be;
    tsl_gemm_eff_for_gpu(&be, b->name, b->peak_flops, b->mem_bw);
    double S = 1456.3 / 1770.9;
    CHECK_NEAR(S, 0.82235, 1e-5, "the B200's MSMF / MAMF %.5f", S);
    CHECK_NEAR(be.attn_fwd_flops, 0.67 * S * 2250e12, 1e-12, "B200 forward %g", be.attn_fwd_flops);
    CHECK_NEAR(be.attn_bwd_flops, 0.54 * S * 2250e12, 1e-12, "B200 backward %g", be.attn_bwd_flops);
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, gb->peak_flops * gb->efficiency, gb->mem_bw);
    tsl_gemm_eff_for_gpu(&d.shape, gb->name, gb->peak_flops, gb->mem_bw);
    CHECK_NEAR(d.shape.attn_fwd_flops, 0.67 * S * 2500e12, 1e-12, "GB200 forward %g",
               d.shape.attn_fwd_flops);
    CHECK_NEAR(d.shape.attn_bwd_flops, 0.54 * S * 2500e12, 1e-12, "GB200 backward %g",
               d.shape.attn_bwd_flops);
    CHECK(d.gemm_flops == 2500e12 * 0.581, "the sustained GEMM rate %g", d.gemm_flops);
    CHECK(d.shape.attn_fwd_flops < d.gemm_flops && d.shape.attn_bwd_flops < d.gemm_flops,
          "both settled shares below the GEMM rate: no cap binds");
    tsl_layer_t l = llama70b_layer();
    double flops = 4.0 * 8192 * 4096.5 * 8192 / 2;
    CHECK(flops == 549822922752.0, "core FLOPs per rank %.17g", flops);
    double r = TSL_ATTN_CAUSAL_EFF * 4096.5 / (4096.5 + TSL_ATTN_CAUSAL_KEYS);
    CHECK_NEAR(r, 0.91152, 1e-4, "causal %.5f", r);
    double fwd = flops / (0.67 * S * 2500e12 * r);
    CHECK_NEAR(fwd, 437.91e-6, 1e-4, "by hand %.2f us", fwd * 1e6);
    CHECK_NEAR(tsl_roofline_core_fwd_s(&d, &l, 1, 2), fwd + TSL_ROOFLINE_LAUNCH_S, 1e-12,
               "forward core %.2f us", tsl_roofline_core_fwd_s(&d, &l, 1, 2) * 1e6);
    tsl_roofline_dev_t gemm_priced = d;
    gemm_priced.shape.attn_fwd_flops = gemm_priced.shape.attn_bwd_flops = 0.0;
    gemm_priced.shape.attn_mla_bwd_flops = 0.0;
    double u = 4096.5 / (4096.5 + 0.705 * 2500e12 / 8000e9);
    double gemm_f = flops / (2500e12 * 0.581 * u);
    CHECK_NEAR(gemm_f, 398.89e-6, 1e-4, "GEMM curve by hand %.2f us", gemm_f * 1e6);
    CHECK_NEAR(tsl_roofline_core_fwd_s(&gemm_priced, &l, 1, 2), gemm_f + TSL_ROOFLINE_LAUNCH_S,
               1e-12, "GEMM-curve core %.2f us",
               tsl_roofline_core_fwd_s(&gemm_priced, &l, 1, 2) * 1e6);
    double flash_b = 2.5 * flops / (0.54 * S * 2500e12 * r), gemm_b = 2.5 * gemm_f;
    CHECK_NEAR(flash_b, 1358.33e-6, 1e-4, "by hand %.2f us", flash_b * 1e6);
    CHECK_NEAR(gemm_b, 997.23e-6, 1e-4, "by hand %.2f us", gemm_b * 1e6);
    double bytes = 2.0 * (2.0 * 8192 * 8192 + 2.0 * 8192 * 1024) / 2;
    CHECK(2.0 * bytes / d.mem_bw < gemm_b, "the backward core is compute-bound");
    double diff = tsl_roofline_layer_bwd_s(&d, &l, 1, 2, false, 0) -
                  tsl_roofline_layer_bwd_s(&gemm_priced, &l, 1, 2, false, 0);
    CHECK_NEAR(diff, flash_b - gemm_b, 1e-9, "backward core: %.2f us more, by hand %.2f",
               diff * 1e6, (flash_b - gemm_b) * 1e6);
}

/* The A100's fused core by kernel (cost model 114; attn_kernel.h). flash1-triton
 * (FlashAttention's Triton port: cost model 108's one A100 figure) at 0.40 of
 * peak forward and 0.30 backward (gemm_eff.h TSL_ATTN_A100_*), on both memories.
 * MPT-7B's block at 2K (causal, 32 heads of 128, one sample): 4·2048·1024.5·4096 =
 * 34.38 GFLOP forward, causal share 0.94·1024.5/(1024.5 + 128) = 0.83558, 16·32 = 512
 * tiles over 108 SMs (occupancy 1): 34.38e9 / (0.40·312e12·0.83558) = 329.65 µs
 * forward, 2.5 × that at 0.30: 1098.82 µs backward. The GEMM curve priced it faster
 * (A100 bf16 at 0.82 of peak). The default (and flash2, cudnn) at FlashAttention-2's
 * Fig. 4 share at head dimension 128 and 2K keys, 187 / 312 over forward and backward,
 * split at the paper's maxima 73 : 63 (forward 0.66731, backward 0.57590): 197.60 µs
 * forward, 572.40 µs backward (1098.82 − 572.40 = 526.42 µs less). flash1 (v1's CUDA
 * kernel, cost model 121) at its causal bar, 69 TFLOP/s at head dimension 128 and 2K,
 * split 40 : 30 (forward 0.27381, backward 0.20536) of the FLOPs the mask leaves, no
 * causal rule on top: 402.40 µs forward, 1341.34 µs backward (242.51 µs more than the
 * Triton port's). */
static void test_a100_flash(void)
{
    const tsl_gpu_spec_t *a80 = tsl_gpu_find("A100-80G"), *a40 = tsl_gpu_find("A100-40G");
    CHECK(a80 != NULL && a40 != NULL, "A100-80G, A100-40G built in");
    if (a80 == NULL || a40 == NULL)
        return;
    tsl_gemm_eff_t g40;
    tsl_gemm_eff_for_gpu(&g40, a40->name, a40->peak_flops, a40->mem_bw);
    CHECK(g40.attn_fwd_flops == 0.40 * 312e12 && g40.attn_bwd_flops == 0.30 * 312e12,
          "A100-40G: %g / %g", g40.attn_fwd_flops, g40.attn_bwd_flops);
    CHECK(g40.attn_kernel_peak == 312e12 && g40.attn_kernel_ampere,
          "the A100's per-kernel table, of its 312 peak");
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, a80->peak_flops * a80->efficiency, a80->mem_bw);
    tsl_gemm_eff_for_gpu(&d.shape, a80->name, a80->peak_flops, a80->mem_bw);
    d.attn_kernel = TSL_ATTN_KERNEL_FLASH1_TRITON;
    CHECK(d.shape.attn_fwd_flops == 0.40 * 312e12 && d.shape.attn_bwd_flops == 0.30 * 312e12,
          "A100-80G: %g / %g", d.shape.attn_fwd_flops, d.shape.attn_bwd_flops);
    tsl_layer_t l = dense_4k(TSL_LAYER_ENCODER);
    l.causal = true;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    double flops = 4.0 * 2048 * 1024.5 * 4096;
    double r = TSL_ATTN_CAUSAL_EFF * 1024.5 / (1024.5 + TSL_ATTN_CAUSAL_KEYS);
    CHECK_NEAR(r, 0.83558, 1e-4, "causal %.5f", r);
    double fwd = flops / (0.40 * 312e12 * r);
    CHECK_NEAR(fwd, 329.65e-6, 1e-4, "by hand %.2f us", fwd * 1e6);
    CHECK_NEAR(tsl_roofline_core_fwd_s(&d, &l, 1, 1), fwd + TSL_ROOFLINE_LAUNCH_S, 1e-12,
               "forward core %.2f us", tsl_roofline_core_fwd_s(&d, &l, 1, 1) * 1e6);
    double bwd = 2.5 * flops / (0.30 * 312e12 * r);
    CHECK_NEAR(bwd, 1098.82e-6, 1e-4, "by hand %.2f us", bwd * 1e6);
    tsl_roofline_dev_t gemm_priced = d;
    gemm_priced.shape.attn_fwd_flops = gemm_priced.shape.attn_bwd_flops = 0.0;
    gemm_priced.shape.attn_kernel_peak = 0.0; /* no per-kernel table either */
    CHECK(tsl_roofline_core_fwd_s(&gemm_priced, &l, 1, 1) < 0.6 * fwd,
          "the GEMM curve priced the core faster: %.2f us",
          tsl_roofline_core_fwd_s(&gemm_priced, &l, 1, 1) * 1e6);
    double diff = tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0) -
                  tsl_roofline_layer_bwd_s(&gemm_priced, &l, 1, 1, false, 0);
    CHECK(diff > 0.5 * bwd, "backward core: %.2f us more than the GEMM curve's", diff * 1e6);
    const uint32_t fa2[] = {TSL_ATTN_KERNEL_DEFAULT, TSL_ATTN_KERNEL_FLASH2, TSL_ATTN_KERNEL_CUDNN};
    for (size_t i = 0; i < sizeof(fa2) / sizeof(fa2[0]); i++) {
        d.attn_kernel = fa2[i];
        CHECK_NEAR(tsl_roofline_core_fwd_s(&d, &l, 1, 1), 197.596e-6 + TSL_ROOFLINE_LAUNCH_S, 1e-5,
                   "%s: FlashAttention-2's forward core %.3f us", tsl_attn_kernel_name(fa2[i]),
                   tsl_roofline_core_fwd_s(&d, &l, 1, 1) * 1e6);
        CHECK_NEAR(tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0) -
                       tsl_roofline_layer_bwd_s(&gemm_priced, &l, 1, 1, false, 0),
                   diff - 526.420e-6, 1e-4,
                   "%s: the backward core 526.42 us shorter than flash1-triton's",
                   tsl_attn_kernel_name(fa2[i]));
    }
    d.attn_kernel = TSL_ATTN_KERNEL_FLASH1;
    CHECK_NEAR(tsl_roofline_core_fwd_s(&d, &l, 1, 1), 402.401e-6 + TSL_ROOFLINE_LAUNCH_S, 1e-5,
               "flash1: v1's causal forward core %.3f us",
               tsl_roofline_core_fwd_s(&d, &l, 1, 1) * 1e6);
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0) -
                   tsl_roofline_layer_bwd_s(&gemm_priced, &l, 1, 1, false, 0),
               diff + 242.514e-6, 1e-4,
               "flash1: the backward core 242.51 us longer than the port's");
}

/* A named FlashAttention kernel runs a head at its compiled head dimension (cost
 * model 158; attn_kernel.h tsl_attn_kernel_run_hd): flash1 at 32, 64 or 128
 * (flash-attn 0.2's kernels), flash2 at the next multiple of 32 up to 256; the rest,
 * and heads past the largest, as they are. GPT3-760M's block at 2K (hidden 1536, 16
 * causal heads of 96) under flash1 runs v1's hdim-128 kernel: its core does 128/96 of
 * its FLOPs at the hdim-128 share, 4/3 of the time of the same hidden as 12 heads of
 * 128 (the same FLOPs, the same share; 16 × 16 and 16 × 12 tiles fill the 108 SMs
 * alike). Cost model 155 priced the 96 between the 64 and 128 bars, faster than either
 * layout padded. The Triton port (its share flat) prices both layouts alike. */
static void test_padded_head(void)
{
    const struct {
        uint32_t kernel;
        double hd, run;
    } pad[] = {{TSL_ATTN_KERNEL_FLASH1, 96, 128},  {TSL_ATTN_KERNEL_FLASH1, 80, 128},
               {TSL_ATTN_KERNEL_FLASH1, 64, 64},   {TSL_ATTN_KERNEL_FLASH1, 40, 64},
               {TSL_ATTN_KERNEL_FLASH1, 24, 32},   {TSL_ATTN_KERNEL_FLASH1, 160, 160},
               {TSL_ATTN_KERNEL_FLASH2, 80, 96},   {TSL_ATTN_KERNEL_FLASH2, 96, 96},
               {TSL_ATTN_KERNEL_FLASH2, 100, 128}, {TSL_ATTN_KERNEL_FLASH2, 250, 256},
               {TSL_ATTN_KERNEL_FLASH2, 300, 300}, {TSL_ATTN_KERNEL_CUDNN, 80, 80},
               {TSL_ATTN_KERNEL_DEFAULT, 80, 80},  {TSL_ATTN_KERNEL_FLASH1_TRITON, 80, 80},
               {TSL_ATTN_KERNEL_FLASH1, 0, 0}};
    for (size_t i = 0; i < sizeof(pad) / sizeof(pad[0]); i++)
        CHECK(tsl_attn_kernel_run_hd(pad[i].kernel, pad[i].hd) == pad[i].run,
              "%s runs head dimension %g at %g, want %g", tsl_attn_kernel_name(pad[i].kernel),
              pad[i].hd, tsl_attn_kernel_run_hd(pad[i].kernel, pad[i].hd), pad[i].run);
    const tsl_gpu_spec_t *a80 = tsl_gpu_find("A100-80G");
    CHECK(a80 != NULL, "A100-80G built in");
    if (a80 == NULL)
        return;
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, a80->peak_flops * a80->efficiency, a80->mem_bw);
    tsl_gemm_eff_for_gpu(&d.shape, a80->name, a80->peak_flops, a80->mem_bw);
    tsl_layer_t hd96 = {.kind = TSL_LAYER_ENCODER,
                        .seq_len = 2048,
                        .hidden = 1536,
                        .ffn_hidden = 6144,
                        .heads = 16,
                        .causal = true};
    tsl_layer_t hd128 = hd96;
    hd128.heads = 12;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&hd96, &err) == 0 && tsl_layer_derive(&hd128, &err) == 0, "%s", err.msg);
    const uint32_t kernels[] = {TSL_ATTN_KERNEL_FLASH1, TSL_ATTN_KERNEL_FLASH1_TRITON};
    const double want[] = {128.0 / 96.0, 1.0};
    for (size_t i = 0; i < 2; i++) {
        d.attn_kernel = kernels[i];
        double f96 = tsl_roofline_core_fwd_s(&d, &hd96, 1, 1) - TSL_ROOFLINE_LAUNCH_S,
               f128 = tsl_roofline_core_fwd_s(&d, &hd128, 1, 1) - TSL_ROOFLINE_LAUNCH_S;
        CHECK_NEAR(f96 / f128, want[i], 1e-9, "%s: 16 heads of 96 / 12 of 128 = %.6f, want %.6f",
                   tsl_attn_kernel_name(kernels[i]), f96 / f128, want[i]);
    }
}

/* Fig. 4's forward + backward TFLOP/s on the A100 from a forward share f and a
 * backward share b of its 312 (the backward 2.5 × the forward's FLOPs). */
static double fig4_tflops(double f, double b)
{
    return 3.5 / (1.0 / f + 2.5 / b) * 312;
}

/* FlashAttention-2's A100 shares (attn_kernel.h): forward and backward recombine to
 * Fig. 4's forward + backward TFLOP/s (3.5 / (1/f + 2.5/b) · 312), 203 at head
 * dimension 128 and 16K, where they are the paper's maxima (0.724 and 0.625 against
 * "up to 73%" and "up to 63%"); 153 at 64 and 1K (a label the legend hides, read from
 * the bar); flat beyond 16K, log-linear in the keys and linear in the head dimension
 * between (96 at 1.5K, halfway in log2: 157.5 at 64 and 180 at 128, (153 + 162 + 173 + 187) / 4).
 * flash1-triton is flat at 0.40 / 0.30; flash1 (v1's CUDA kernel, cost model 121) gives
 * back Fig. 4's "FlashAttention" bars the same way at forward : backward 40 : 30 — 110
 * at 64 and 16K, 83 at 128 and 16K (0.32937 / 0.24702: the 0.40 / 0.30 band ran
 * 101, 22 % fast), 86 at 96 and 1.5K ((92 + 104 + 72 + 76) / 4) non-causal; causal
 * 58 at 64 and 512, 83 at 128 and 16K; only flash1 has a causal share; nothing out of
 * range. */
static void test_a100_attn_kernel(void)
{
    const struct {
        double hd, keys, fwd_bwd;
    } at[] = {{128, 16384, 203}, {128, 65536, 203},
              {64, 1024, 153},   {128, 512, 151},
              {64, 256, 132},    {96, 1024 * sqrt(2.0), (153 + 162 + 173 + 187) / 4.0}};
    for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
        double f = tsl_attn_ampere_share(TSL_ATTN_KERNEL_DEFAULT, false, at[i].hd, at[i].keys),
               b = tsl_attn_ampere_share(TSL_ATTN_KERNEL_FLASH2, true, at[i].hd, at[i].keys);
        CHECK_NEAR(fig4_tflops(f, b), at[i].fwd_bwd, 1e-9,
                   "hd %g keys %g: %.3f TFLOP/s forward and backward", at[i].hd, at[i].keys,
                   fig4_tflops(f, b));
        CHECK_NEAR(f / b, 73.0 / 63.0, 1e-12, "the maxima's ratio");
    }
    CHECK_NEAR(tsl_attn_ampere_share(TSL_ATTN_KERNEL_CUDNN, false, 128, 16384), 0.72441, 1e-5,
               "forward at the maximum");
    CHECK_NEAR(tsl_attn_ampere_share(TSL_ATTN_KERNEL_CUDNN, true, 128, 16384), 0.62518, 1e-5,
               "backward at the maximum");
    CHECK(tsl_attn_ampere_share(TSL_ATTN_KERNEL_FLASH1_TRITON, false, 64, 512) == 0.40 &&
              tsl_attn_ampere_share(TSL_ATTN_KERNEL_FLASH1_TRITON, true, 128, 65536) == 0.30,
          "flash1-triton: 0.40 / 0.30 at every shape");
    const struct {
        bool causal;
        double hd, keys, fwd_bwd;
    } v1[] = {{false, 64, 16384, 110}, {false, 128, 16384, 83}, {false, 96, 1024 * sqrt(2.0), 86},
              {true, 64, 512, 58},     {true, 128, 16384, 83},  {true, 128, 2048, 69}};
    for (size_t i = 0; i < sizeof(v1) / sizeof(v1[0]); i++) {
        double (*share)(uint32_t, bool, double, double) =
            v1[i].causal ? tsl_attn_ampere_causal_share : tsl_attn_ampere_share;
        double f = share(TSL_ATTN_KERNEL_FLASH1, false, v1[i].hd, v1[i].keys),
               b = share(TSL_ATTN_KERNEL_FLASH1, true, v1[i].hd, v1[i].keys);
        CHECK_NEAR(fig4_tflops(f, b), v1[i].fwd_bwd, 1e-9,
                   "flash1 %s hd %g keys %g: %.3f TFLOP/s forward and backward",
                   v1[i].causal ? "causal" : "unmasked", v1[i].hd, v1[i].keys, fig4_tflops(f, b));
        CHECK_NEAR(f / b, 40.0 / 30.0, 1e-12, "v1's midpoints' ratio");
    }
    CHECK_NEAR(tsl_attn_ampere_share(TSL_ATTN_KERNEL_FLASH1, false, 128, 16384), 0.329365, 1e-5,
               "flash1 forward at 128, 16K");
    CHECK_NEAR(tsl_attn_ampere_share(TSL_ATTN_KERNEL_FLASH1, true, 128, 16384), 0.247024, 1e-5,
               "flash1 backward at 128, 16K");
    CHECK(tsl_attn_ampere_causal_share(TSL_ATTN_KERNEL_DEFAULT, false, 128, 2048) == 0.0 &&
              tsl_attn_ampere_causal_share(TSL_ATTN_KERNEL_FLASH2, true, 128, 2048) == 0.0 &&
              tsl_attn_ampere_causal_share(TSL_ATTN_KERNEL_FLASH1_TRITON, false, 128, 2048) ==
                  0.0 &&
              tsl_attn_ampere_causal_share(TSL_ATTN_KERNEL_FLASH1, false, 128, 0) == 0.0,
          "a causal share: flash1's only");
    CHECK(tsl_attn_ampere_share(TSL_ATTN_KERNEL_COUNT, false, 128, 2048) == 0.0 &&
              tsl_attn_ampere_share(TSL_ATTN_KERNEL_DEFAULT, false, 128, 0) == 0.0,
          "out of range: 0");
    CHECK(tsl_gemm_eff_kernel_shares("A100-40G", TSL_ATTN_KERNEL_FLASH1) &&
              tsl_gemm_eff_kernel_shares("H100-80G", TSL_ATTN_KERNEL_CUDNN) &&
              !tsl_gemm_eff_kernel_shares("H100-80G", TSL_ATTN_KERNEL_FLASH1) &&
              !tsl_gemm_eff_kernel_shares("B200", TSL_ATTN_KERNEL_FLASH2),
          "which GPU has which kernel's shares");
}

/* A named fused attention kernel on Hopper (attn_kernel.h): FlashAttention-3's Figs.
 * 5–6 over 989, log-linear in the keys, linear in the head dimension. cuDNN forward at
 * head dimension 128, 8K keys: 600 / 989; flat beyond 16K (595) and below 512 (497);
 * FlashAttention-2's backward at head dimension 96, 1K: (238 + 260) / 2 = 249; cuDNN's
 * backward at 128 halfway (in log2) between 4K and 8K: (499 + 518) / 2 = 508.5. No
 * kernel named: 0 (the family's one figure stays). On the Llama 3 70B layer of
 * test_blackwell_flash on one H100 (TP 2: 32 heads, causal, s 8192; 549.82 GFLOP
 * forward, causal share 0.91152) the forward core runs at 600 · 0.8415 · 0.91152 =
 * 460.3 TFLOP/s under cudnn (1194.61 µs), 0.35 · 989 · 0.8415 · 0.91152 = 265.5 by
 * default (2070.68 µs): every Hopper figure is a burst timing, taken at a dense step's
 * settled clock, × 708.5 / 841.9 (the H200's MSMF / MAMF; cost model 142) — but
 * FlashAttention-2, which stays below the 700 W limit at the burst clock, at its burst
 * share since cost model 188: 370 · 0.91152 = 337.3 (1630.26 µs; 1937.21 before), and
 * at the settled share again on the 500 W H100-96G (test_h100_96g_cap). The B200 has no
 * per-kernel table, so the name changes nothing there. */
static void test_hopper_attn_kernel(void)
{
    const double s = 708.5 / 841.9; /* burst to settled: the H200's MSMF / MAMF */
    CHECK_NEAR(tsl_attn_hopper_share(TSL_ATTN_KERNEL_CUDNN, false, 128, 8192, false),
               600.0 / 989 * s, 1e-12, "cudnn fwd 128 8K");
    CHECK_NEAR(tsl_attn_hopper_share(TSL_ATTN_KERNEL_CUDNN, false, 128, 65536, false),
               595.0 / 989 * s, 1e-12, "flat beyond 16K");
    CHECK_NEAR(tsl_attn_hopper_share(TSL_ATTN_KERNEL_CUDNN, false, 256, 256, false),
               497.0 / 989 * s, 1e-12, "flat below 512 and above head dimension 128");
    CHECK_NEAR(tsl_attn_hopper_share(TSL_ATTN_KERNEL_FLASH2, true, 96, 1024, false), 249.0 / 989,
               1e-12, "flash2 bwd 96 1K: its burst share at the 700 W limit (cost model 188)");
    CHECK_NEAR(tsl_attn_hopper_share(TSL_ATTN_KERNEL_FLASH2, true, 96, 1024, true), 249.0 / 989 * s,
               1e-12, "flash2 bwd 96 1K on a power-capped part: settled");
    CHECK_NEAR(tsl_attn_hopper_share(TSL_ATTN_KERNEL_CUDNN, true, 128, 4096 * sqrt(2.0), false),
               508.5 / 989 * s, 1e-12, "cudnn bwd between 4K and 8K");
    CHECK(tsl_attn_kernel_holds_clock(TSL_ATTN_KERNEL_FLASH2) &&
              !tsl_attn_kernel_holds_clock(TSL_ATTN_KERNEL_CUDNN) &&
              !tsl_attn_kernel_holds_clock(TSL_ATTN_KERNEL_DEFAULT),
          "only flash2 holds its clock");
    CHECK(tsl_attn_hopper_share(TSL_ATTN_KERNEL_DEFAULT, false, 128, 8192, false) == 0.0 &&
              tsl_attn_hopper_share(TSL_ATTN_KERNEL_FLASH1, false, 128, 8192, false) == 0.0 &&
              tsl_attn_hopper_share(TSL_ATTN_KERNEL_FLASH1_TRITON, true, 128, 8192, false) == 0.0 &&
              tsl_attn_hopper_share(TSL_ATTN_KERNEL_COUNT, false, 128, 8192, false) == 0.0,
          "no kernel named, flash1 or flash1-triton (no Hopper figure), or out of range: 0");
    CHECK(tsl_attn_kernel_parse("cuDNN") == TSL_ATTN_KERNEL_CUDNN &&
              tsl_attn_kernel_parse("flash2") == TSL_ATTN_KERNEL_FLASH2 &&
              tsl_attn_kernel_parse("flash3") == -1 && tsl_attn_kernel_parse("2") == 2 &&
              tsl_attn_kernel_parse("1") == 1 && tsl_attn_kernel_parse("0") == 0 &&
              tsl_attn_kernel_parse("FLASH1") == TSL_ATTN_KERNEL_FLASH1 &&
              tsl_attn_kernel_parse("3") == 3 &&
              tsl_attn_kernel_parse("Flash1-Triton") == TSL_ATTN_KERNEL_FLASH1_TRITON &&
              tsl_attn_kernel_parse("4") == 4 && tsl_attn_kernel_parse("5") == -1 &&
              tsl_attn_kernel_parse("flash1-") == -1 && tsl_attn_kernel_parse("12") == -1,
          "names and numbers");
    CHECK(strcmp(tsl_attn_kernel_name(TSL_ATTN_KERNEL_FLASH1_TRITON), "flash1-triton") == 0 &&
              strcmp(tsl_attn_kernel_name(TSL_ATTN_KERNEL_COUNT), "?") == 0,
          "the Triton port's name");
    tsl_err_t kerr = {0};
    CHECK(tsl_attn_kernel_ok(4, &kerr) == 0 && tsl_attn_kernel_ok(5, &kerr) == -1 &&
              strstr(kerr.msg, "attn_kernel: 5 is not") && strstr(kerr.msg, "4 (flash1-triton)"),
          "4 a kernel, 5 none: %s", kerr.msg);
    const tsl_gpu_spec_t *h = tsl_gpu_find("H100-80G"), *b = tsl_gpu_find("B200");
    CHECK(h != NULL && b != NULL, "H100, B200 built in");
    if (h == NULL || b == NULL)
        return;
    tsl_layer_t l = llama70b_layer();
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, h->peak_flops * h->efficiency, h->mem_bw);
    tsl_gemm_eff_for_gpu(&d.shape, h->name, h->peak_flops, h->mem_bw);
    CHECK(d.shape.attn_kernel_peak == 989e12, "H100: the table's peak %g",
          d.shape.attn_kernel_peak);
    double flops = 549822922752.0, r = TSL_ATTN_CAUSAL_EFF * 4096.5 / (4096.5 + 128.0);
    const struct {
        uint32_t kernel;
        double tflops, clock, us;
    } want[] = {{TSL_ATTN_KERNEL_DEFAULT, 0.35 * 989, s, 2070.68},
                {TSL_ATTN_KERNEL_FLASH2, 370, 1.0, 1630.26},
                {TSL_ATTN_KERNEL_CUDNN, 600, s, 1194.61},
                {TSL_ATTN_KERNEL_FLASH1, 0.35 * 989, s, 2070.68}};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        d.attn_kernel = want[i].kernel;
        double fwd = flops / (want[i].tflops * want[i].clock * 1e12 * r);
        CHECK_NEAR(fwd * 1e6, want[i].us, 1e-2, "%s by hand %.2f us",
                   tsl_attn_kernel_name(want[i].kernel), fwd * 1e6);
        CHECK_NEAR(tsl_roofline_core_fwd_s(&d, &l, 1, 2), fwd + TSL_ROOFLINE_LAUNCH_S, 1e-12,
                   "%s forward core %.2f us", tsl_attn_kernel_name(want[i].kernel),
                   tsl_roofline_core_fwd_s(&d, &l, 1, 2) * 1e6);
    }
    tsl_roofline_dev_t bd;
    tsl_roofline_dev_init(&bd, b->peak_flops * b->efficiency, b->mem_bw);
    tsl_gemm_eff_for_gpu(&bd.shape, b->name, b->peak_flops, b->mem_bw);
    double bdef = tsl_roofline_core_fwd_s(&bd, &l, 1, 2);
    bd.attn_kernel = TSL_ATTN_KERNEL_FLASH2;
    CHECK(bd.shape.attn_kernel_peak == 0.0 && tsl_roofline_core_fwd_s(&bd, &l, 1, 2) == bdef,
          "B200: no per-kernel table, the name changes nothing");
}

/* MLA's backward on Blackwell (gemm_eff.h TSL_ATTN_GB100_MLA_BWD_EFF, cuDNN's
 * published GB200 `dsv3` sweep, at the settled clock S = 1456.3 / 1770.9 since cost
 * model 145): DeepSeek-V3's attention layer on one GB200, one sample of s 4096, TP 1:
 * 128 heads, Q·K over 128 + 64, A·V over 128, so the core is a flash kernel of
 * d' = 128 · 320 / 2 = 20480 (hd 160: 32 × 2 × 128 = 8192 blocks, occupancy 1).
 * 4 · 4096 · 2048.5 · 20480 = 687.36 GFLOP forward, causal 0.94 · 2048.5 / 2176.5 =
 * 0.88472. Backward 2.5 × at 0.42 · S · 2500 · 0.88472 = 763.93 TFLOP/s: 2249.44 µs,
 * where the head-dimension-128 share 0.54 · S gives 1749.57 µs (499.88 µs less). The
 * forward keeps its share, 0.67 · S (below the sustained GEMM rate 0.581: no cap,
 * test_blackwell_flash): 564.04 µs; an ordinary attention layer keeps 0.54 · S
 * backward; a GPU without an MLA figure (H100) prices MLA's backward at its own
 * backward share. */
static void test_blackwell_mla(void)
{
    const tsl_gpu_spec_t *gb = tsl_gpu_find("GB200");
    CHECK(gb != NULL, "GB200 built in");
    if (gb == NULL)
        return;
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, gb->peak_flops * gb->efficiency, gb->mem_bw);
    tsl_gemm_eff_for_gpu(&d.shape, gb->name, gb->peak_flops, gb->mem_bw);
    double S = 1456.3 / 1770.9; /* the settled clock (test_blackwell_flash) */
    CHECK_NEAR(d.shape.attn_mla_bwd_flops, 0.42 * S * 2500e12, 1e-12, "GB200 MLA backward %g",
               d.shape.attn_mla_bwd_flops);
    tsl_gemm_eff_t h100;
    tsl_gemm_eff_for_gpu(&h100, "H100-80G", 989e12, 3350e9);
    CHECK(h100.attn_mla_bwd_flops == 0, "H100: no MLA figure");
    tsl_layer_t l = dsv3_mla_attention();
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    double flops = 4.0 * 4096 * 2048.5 * 20480;
    CHECK(flops == 687362539520.0, "core FLOPs %.17g", flops);
    double r = TSL_ATTN_CAUSAL_EFF * 2048.5 / (2048.5 + TSL_ATTN_CAUSAL_KEYS);
    CHECK_NEAR(r, 0.88472, 1e-4, "causal %.5f", r);
    double mla_b = 2.5 * flops / (0.42 * S * 2500e12 * r);
    double gen_b = 2.5 * flops / (0.54 * S * 2500e12 * r);
    CHECK_NEAR(mla_b, 2249.44e-6, 1e-4, "by hand %.2f us", mla_b * 1e6);
    CHECK_NEAR(gen_b, 1749.57e-6, 1e-4, "by hand %.2f us", gen_b * 1e6);
    CHECK(2.0 * 2.0 * (2.0 * 4096 * 20480 * 2) / d.mem_bw < gen_b,
          "the backward core is compute-bound");
    tsl_roofline_dev_t gen = d; /* the same GPU without its MLA figure */
    gen.shape.attn_mla_bwd_flops = 0.0;
    double diff = tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0) -
                  tsl_roofline_layer_bwd_s(&gen, &l, 1, 1, false, 0);
    CHECK_NEAR(diff, mla_b - gen_b, 1e-9, "MLA backward: %.2f us more, by hand %.2f", diff * 1e6,
               (mla_b - gen_b) * 1e6);
    CHECK(tsl_roofline_core_fwd_s(&d, &l, 1, 1) == tsl_roofline_core_fwd_s(&gen, &l, 1, 1),
          "the forward keeps its share");
    CHECK_NEAR(tsl_roofline_core_fwd_s(&d, &l, 1, 1),
               flops / (0.67 * S * 2500e12 * r) + TSL_ROOFLINE_LAUNCH_S, 1e-12,
               "forward core %.2f us", tsl_roofline_core_fwd_s(&d, &l, 1, 1) * 1e6);
    tsl_layer_t mha = layer(4096, 7168, 56); /* ordinary heads of 128: not MLA */
    mha.causal = true;
    CHECK(tsl_layer_derive(&mha, &err) == 0, "%s", err.msg);
    CHECK(tsl_roofline_layer_bwd_s(&d, &mha, 1, 1, false, 0) ==
              tsl_roofline_layer_bwd_s(&gen, &mha, 1, 1, false, 0),
          "ordinary attention: the MLA figure unused");
}

/* A causal sliding window at head dimension 64 on Blackwell (cost model 73, gpt-oss's
 * 128-key layers; gemm_eff.h TSL_ATTN_GB100_SWA64_*): the core runs at cuDNN's
 * sliding-window figures, eff · v / (v + keys) of peak (× the settled clock
 * S = 1456.3 / 1770.9 since cost model 145: the sweeps are burst timings, as the
 * family's shares), where the causal rule had priced it ≈ 4× fast. One GB200, one sample of s 4096, 64 heads of 64 (d 4096):
 * 32 query blocks × 64 heads = 2048 > 148 SMs, occupancy 1. */
static tsl_layer_t swa_layer(uint32_t window, uint32_t hidden)
{
    tsl_layer_t l = {.kind = TSL_LAYER_ENCODER,
                     .seq_len = 4096,
                     .hidden = hidden,
                     .ffn_hidden = 4 * hidden,
                     .heads = 64,
                     .causal = true,
                     .attn_window = window};
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    return l;
}

static void test_blackwell_swa(void)
{
    const tsl_gpu_spec_t *gb = tsl_gpu_find("GB200"), *b = tsl_gpu_find("B200");
    CHECK(gb != NULL && b != NULL, "B200, GB200 built in");
    if (gb == NULL || b == NULL)
        return;
    tsl_gemm_eff_t be, h100;
    tsl_gemm_eff_for_gpu(&be, b->name, b->peak_flops, b->mem_bw);
    double S = 1456.3 / 1770.9; /* the settled clock (test_blackwell_flash) */
    CHECK_NEAR(be.attn_swa64_fwd_flops, 0.405 * S * 2250e12, 1e-12, "B200 forward %g",
               be.attn_swa64_fwd_flops);
    CHECK_NEAR(be.attn_swa64_bwd_flops, 0.409 * S * 2250e12, 1e-12, "B200 backward %g",
               be.attn_swa64_bwd_flops);
    tsl_gemm_eff_for_gpu(&h100, "H100-80G", 989e12, 3350e9);
    CHECK(h100.attn_swa64_fwd_flops == 0 && h100.attn_swa64_bwd_flops == 0,
          "H100: no sliding-window figure (the causal rule)");
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, gb->peak_flops * gb->efficiency, gb->mem_bw);
    tsl_gemm_eff_for_gpu(&d.shape, gb->name, gb->peak_flops, gb->mem_bw);
    tsl_roofline_dev_t rule = d; /* the same GPU under the causal rule */
    rule.shape.attn_swa64_fwd_flops = rule.shape.attn_swa64_bwd_flops = 0.0;
    /* the published points the fit reproduces (s 4096): window 128 forward 161 TFLOP/s
       (cuDNN 9.22.0), window 1024 forward 574 (cuDNN 9.19.1) */
    const struct {
        uint32_t w;
        double published;
    } pts[] = {{128, 161e12}, {1024, 574e12}};
    for (int i = 0; i < 2; i++) {
        tsl_layer_t l = swa_layer(pts[i].w, 4096);
        double v = tsl_attn_keys(4096, pts[i].w, true);
        double flops = 4.0 * 4096 * v * 4096;
        double burst = 0.405 * 2500e12 * v / (v + 668.0), rate = burst * S;
        double t = tsl_roofline_core_fwd_s(&d, &l, 1, 1);
        CHECK_NEAR(t, flops / rate + TSL_ROOFLINE_LAUNCH_S, 1e-12, "w %u: %.2f us, by hand %.2f",
                   pts[i].w, t * 1e6, (flops / rate + TSL_ROOFLINE_LAUNCH_S) * 1e6);
        CHECK_NEAR(burst, pts[i].published, 0.02,
                   "w %u: fit %.0f TFLOP/s against the published %.0f", pts[i].w, burst / 1e12,
                   pts[i].published / 1e12);
        CHECK(t > 2.0 * tsl_roofline_core_fwd_s(&rule, &l, 1, 1) ||
                  pts[i].w == 1024, /* 128 keys: the rule's 0.31 of peak against 0.064 */
              "w %u: slower than the causal rule", pts[i].w);
        CHECK(tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0) >
                  tsl_roofline_layer_bwd_s(&rule, &l, 1, 1, false, 0),
              "w %u: the backward slower too", pts[i].w);
    }
    /* the backward's figure: window 128, 2.5 × the forward's FLOPs at 0.409 · v / (v + 578);
       the layer's other kernels are the rule's */
    tsl_layer_t l = swa_layer(128, 4096);
    double v = tsl_attn_keys(4096, 128, true), flops = 2.5 * 4.0 * 4096 * v * 4096;
    double burst = 0.409 * 2500e12 * v / (v + 578.0), rate = burst * S;
    CHECK_NEAR(burst, 182e12, 0.02, "backward fit %.0f TFLOP/s against the published 182",
               burst / 1e12);
    double r_rule = fmin(d.gemm_flops, 0.54 * S * 2500e12) * TSL_ATTN_CAUSAL_EFF * v /
                    (v + TSL_ATTN_CAUSAL_KEYS);
    double diff = tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0) -
                  tsl_roofline_layer_bwd_s(&rule, &l, 1, 1, false, 0);
    CHECK_NEAR(diff, flops / rate - flops / r_rule, 1e-9,
               "backward core %.2f us more, by hand %.2f", diff * 1e6,
               (flops / rate - flops / r_rule) * 1e6);
    /* what the figures do not cover keeps the rule: a window at head dimension 128, a
       layer without a window, a non-causal window (Swin's) */
    tsl_layer_t hd128 = swa_layer(128, 8192), full = swa_layer(0, 4096),
                swin = swa_layer(128, 4096);
    swin.causal = false;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&swin, &err) == 0, "%s", err.msg);
    CHECK(tsl_roofline_core_fwd_s(&d, &hd128, 1, 1) == tsl_roofline_core_fwd_s(&rule, &hd128, 1, 1),
          "head dimension 128: the rule");
    CHECK(tsl_roofline_core_fwd_s(&d, &full, 1, 1) == tsl_roofline_core_fwd_s(&rule, &full, 1, 1),
          "no window: the rule");
    CHECK(tsl_roofline_core_fwd_s(&d, &swin, 1, 1) == tsl_roofline_core_fwd_s(&rule, &swin, 1, 1),
          "non-causal window: unmasked, as before");
}

/* FP8 attention on a causal sliding window (dev.fp8_dpa, cost model 193): cuDNN 9.22's
 * GB200 sweep (cudnn-frontend gpt_oss_20260424_100011.csv, window 128, head dimension 64,
 * 2 x 128 heads) runs the FP8 and MXFP8 backward in 1.731 and 2.080 ms at s 4096 (bf16
 * 0.465): the whole causal square at the bf16 window backward's form a · v / (v + 578), a
 * 0.409 per-tensor and 0.337 MXFP8 (gemm_eff.h). The forward, full layers, other head
 * dimensions and GPUs without the window figures keep the bf16 core. */
static void test_fp8_window_square(void)
{
    const tsl_gpu_spec_t *gb = tsl_gpu_find("GB200");
    CHECK(gb != NULL, "GB200 built in");
    if (gb == NULL)
        return;
    double S = 1456.3 / 1770.9, peak = 2500e12; /* the settled clock (test_blackwell_flash) */
    tsl_roofline_dev_t bf;
    tsl_roofline_dev_init(&bf, gb->peak_flops * gb->efficiency, gb->mem_bw);
    tsl_gemm_eff_for_gpu(&bf.shape, gb->name, gb->peak_flops, gb->mem_bw);
    bf.fp8 = TSL_FP8_MXFP8;
    bf.fp8_flops = tsl_gpu_fp8_flops(gb);
    tsl_roofline_dev_t mx = bf, pt = bf; /* the same GPU and recipe with FP8 attention */
    mx.fp8_dpa = pt.fp8_dpa = true;
    pt.fp8 = TSL_FP8_TENSORWISE;
    tsl_roofline_dev_t pt_bf = pt;
    pt_bf.fp8_dpa = false;
    tsl_layer_t l = swa_layer(128, 4096);
    double v_sq = tsl_attn_keys(4096, 0, true), v_w = tsl_attn_keys(4096, 128, true);
    double f_sq = 2.5 * 4.0 * 4096 * v_sq * 4096, f_w = 2.5 * 4.0 * 4096 * v_w * 4096;
    double r_w = 0.409 * S * peak * v_w / (v_w + 578.0);
    const struct {
        const tsl_roofline_dev_t *on, *off;
        double a, published_ms;
        const char *name;
    } c[] = {{&mx, &bf, 0.337, 2.080, "MXFP8"}, {&pt, &pt_bf, 0.409, 1.731, "FP8"}};
    for (int i = 0; i < 2; i++) {
        double burst = c[i].a * peak * v_sq / (v_sq + 578.0);
        double ms = f_sq * 4.0 / burst * 1e3; /* the sweep's 256 heads, 4 x this layer's */
        CHECK_NEAR(ms, c[i].published_ms, 0.01, "%s: %.3f ms at 4k, published %.3f", c[i].name, ms,
                   c[i].published_ms);
        double diff = tsl_roofline_layer_bwd_s(c[i].on, &l, 1, 1, false, 0) -
                      tsl_roofline_layer_bwd_s(c[i].off, &l, 1, 1, false, 0);
        double hand = f_sq / (burst * S) - f_w / r_w;
        CHECK_NEAR(diff, hand, 1e-9, "%s backward: %.2f us more, by hand %.2f", c[i].name,
                   diff * 1e6, hand * 1e6);
        CHECK(diff > 2.0 * f_w / r_w, "%s: more than three times the bf16 window's core",
              c[i].name);
        CHECK(tsl_roofline_core_fwd_s(c[i].on, &l, 1, 1) ==
                  tsl_roofline_core_fwd_s(c[i].off, &l, 1, 1),
              "%s: the forward as in bf16", c[i].name);
    }
    /* what the sweep does not cover keeps the bf16 core: a layer without a window, a window
       at head dimension 128, the H100 (no window figures), FP8 attention without FP8 */
    tsl_layer_t full = swa_layer(0, 4096), hd128 = swa_layer(128, 8192);
    CHECK(tsl_roofline_layer_bwd_s(&mx, &full, 1, 1, false, 0) ==
              tsl_roofline_layer_bwd_s(&bf, &full, 1, 1, false, 0),
          "no window: as in bf16");
    CHECK(tsl_roofline_layer_bwd_s(&mx, &hd128, 1, 1, false, 0) ==
              tsl_roofline_layer_bwd_s(&bf, &hd128, 1, 1, false, 0),
          "head dimension 128: as in bf16");
    tsl_roofline_dev_t h = bf, h_on;
    tsl_gemm_eff_for_gpu(&h.shape, "H100-80G", 989e12, 3350e9);
    h_on = h;
    h_on.fp8_dpa = true;
    CHECK(tsl_roofline_layer_bwd_s(&h_on, &l, 1, 1, false, 0) ==
              tsl_roofline_layer_bwd_s(&h, &l, 1, 1, false, 0),
          "H100: as in bf16");
    tsl_roofline_dev_t none = bf, none_on;
    none.fp8 = TSL_FP8_NONE;
    none_on = none;
    none_on.fp8_dpa = true;
    CHECK(tsl_roofline_layer_bwd_s(&none_on, &l, 1, 1, false, 0) ==
              tsl_roofline_layer_bwd_s(&none, &l, 1, 1, false, 0),
          "without an FP8 recipe: as in bf16");
}

/* Context parallelism's core (roofline.h "Context parallelism as a ring"): one
 * causal layer of s = 8192 tokens, 16 heads of 64 (d = 1024), on the H100, CP 4,
 * n = 0.5 sample per rank: the rank holds n·c = 2 pieces of 2L = 2048 tokens
 * (chunks of L = 1024). Every kernel below is compute-bound and fills the GPU
 * (2048 queries: 16 blocks × 2 × 16 heads = 512 > 132 SMs). */
static void test_cp_ring(void)
{
    tsl_roofline_dev_t d = shaped_dev("H100-80G", 989e12 * 0.777, 989e12, 3350e9);
    tsl_layer_t l = layer(8192, 1024, 16);
    l.causal = true;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    /* the H100's one forward figure at the settled clock (cost model 142) */
    const double R = 0.35 * (708.5 / 841.9) * 989e12, L = 4e-6, n = 0.5;
    /* without the ring (TE's all-gather, Ulysses): one causal kernel over s at n,
     * v = 4096.5; it equals TE's two chunk kernels (1024 queries over the keys up
     * to the chunk's end, bottom-right causal, v_j = 1024·j + 512.5): for rank 0,
     * chunks 0 and 7, Σ_j 4·1024·v_j·d·2 / (R·0.94·v_j / (v_j + 128)) =
     * 4·1024·d·2·(512.5 + 7680.5 + 256) / (0.94·R) — the same 8449 key-units */
    double v = 4096.5, one = 4.0 * 8192 * v * 1024 * n /
                                 (R * TSL_ATTN_CAUSAL_EFF * v / (v + TSL_ATTN_CAUSAL_KEYS)) +
                             L;
    double te = 4.0 * 1024 * 1024 * 2 * (512.5 + 7680.5 + 2 * 128) / (TSL_ATTN_CAUSAL_EFF * R);
    CHECK_NEAR(one, te + L, 1e-12, "one causal kernel %.2f us, TE's chunks %.2f us", one * 1e6,
               (te + L) * 1e6);
    CHECK_NEAR(tsl_roofline_core_fwd_s(&d, &l, n, 1), one, 1e-12, "one kernel: %.2f us",
               tsl_roofline_core_fwd_s(&d, &l, n, 1) * 1e6);
    /* the ring (p2p): the diagonal 2048 × 2048 causal (v = 1024.5: 0.94 · 1024.5 /
     * 1152.5 = 0.8356 of R), three unmasked 2048 × 1024 blocks at R: the same FLOPs */
    double r0 = TSL_ATTN_CAUSAL_EFF * 1024.5 / (1024.5 + TSL_ATTN_CAUSAL_KEYS);
    CHECK_NEAR(r0, 0.83560, 1e-4, "diagonal's causal efficiency %.5f", r0);
    double diag = 4.0 * 2048 * 1024.5 * 1024 * 2, block = 4.0 * 2048 * 1024 * 1024 * 2;
    CHECK_NEAR(diag + 3 * block, 4.0 * 8192 * v * 1024 * n, 1e-3,
               "the ring's FLOPs are the core's");
    double ring = diag / (R * r0) + L + 3 * (block / R + L);
    d.cp_ring = 4;
    CHECK_NEAR(tsl_roofline_core_fwd_s(&d, &l, n, 1), ring, 1e-12, "ring: %.2f us, by hand %.2f",
               tsl_roofline_core_fwd_s(&d, &l, n, 1) * 1e6, ring * 1e6);
    /* 247.5 µs of kernels against one kernel's 258.8 (its 0.94 · 4096.5 / 4224.5 =
     * 0.9115 on every block), but three launches more: 263.5 against 262.8 µs */
    CHECK_NEAR(ring - 4 * L, 247.5e-6, 1e-3, "ring's kernels %.2f us", (ring - 4 * L) * 1e6);
    CHECK_NEAR(one - L, 258.8e-6, 1e-3, "one kernel %.2f us", (one - L) * 1e6);
    /* torch's merges: O and K/V of n·s·d = 4,194,304 elements each (no GQA); compiled,
     * the forward 10 per O element and later step (30) and 2·4 per K/V element, 4
     * kernels; eager 12 + 38·3 per O element and 2·4·4 per K/V element, 19 kernels */
    d.cp_merge = true;
    double o = n * 8192 * 1024, merge = (30.0 * o + 8.0 * o) / d.mem_bw + 4 * L;
    CHECK_NEAR(tsl_roofline_core_fwd_s(&d, &l, n, 1), ring + merge, 1e-12,
               "torch compiled: %.2f us, by hand %.2f", tsl_roofline_core_fwd_s(&d, &l, n, 1) * 1e6,
               (ring + merge) * 1e6);
    d.eager = true;
    merge = (126.0 * o + 32.0 * o) / d.mem_bw + 19 * L;
    CHECK_NEAR(tsl_roofline_core_fwd_s(&d, &l, n, 1), ring + merge, 1e-12,
               "torch eager: %.2f us, by hand %.2f", tsl_roofline_core_fwd_s(&d, &l, n, 1) * 1e6,
               (ring + merge) * 1e6);
    d.eager = false;
    /* TransformerEngine's ring (cp_te): K/V of 4,194,304 elements each (no GQA), the
     * LSE of n·s·16 = 65,536; forward 8 per K/V element, 4 + 6·3 per O element, 8 +
     * 12·3 per LSE element, 2·4 + 1 = 9 kernels; backward 8 per K/V element, (4 +
     * 6·3) per element of dQ, dK and dV, 4 per LSE element, 3·4 + 2 = 14 kernels */
    d.cp_merge = false;
    d.cp_te = true;
    double lse = n * 8192 * 16, tef = (8.0 * o + 22.0 * o + 44.0 * lse) / d.mem_bw + 9 * L;
    CHECK_NEAR(tsl_roofline_core_fwd_s(&d, &l, n, 1), ring + tef, 1e-12,
               "TE forward: %.2f us, by hand %.2f", tsl_roofline_core_fwd_s(&d, &l, n, 1) * 1e6,
               (ring + tef) * 1e6);
    /* 125.8 MB + 2.9 MB at 0.8 · 3.35 TB/s: 48.03 µs against the ring's 247.5 */
    CHECK_NEAR(tef - 9 * L, 48.03e-6, 1e-3, "TE's corrections: %.2f us of bytes",
               (tef - 9 * L) * 1e6);
    tsl_roofline_dev_t bare = d;
    bare.cp_te = false;
    double te_b = (8.0 * o + 3 * 22.0 * o + 4.0 * lse) / d.mem_bw + 14 * L;
    double gap = tsl_roofline_layer_bwd_s(&d, &l, n, 1, false, 0) -
                 tsl_roofline_layer_bwd_s(&bare, &l, n, 1, false, 0);
    CHECK_NEAR(gap, te_b, 1e-9, "TE backward: %.2f us, by hand %.2f", gap * 1e6, te_b * 1e6);
    /* GQA (4 K/V heads): the K/V terms shrink by 4, O's and the LSE's stay */
    tsl_layer_t g = l;
    g.kv_heads = 4;
    CHECK(tsl_layer_derive(&g, &err) == 0, "%s", err.msg);
    double te_g = (2.0 * o + 22.0 * o + 44.0 * lse) / d.mem_bw + 9 * L;
    gap = tsl_roofline_core_fwd_s(&d, &g, n, 1) - tsl_roofline_core_fwd_s(&bare, &g, n, 1);
    CHECK_NEAR(gap, te_g, 1e-9, "TE forward, GQA: %.2f us, by hand %.2f", gap * 1e6, te_g * 1e6);
    d.cp_te = false;
    /* a sliding window keeps one kernel (the ring's blocks are not its kernels here) */
    l.attn_window = 1024;
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    tsl_roofline_dev_t plain = d;
    plain.cp_ring = 1;
    plain.cp_merge = false;
    CHECK(tsl_roofline_core_fwd_s(&d, &l, n, 1) == tsl_roofline_core_fwd_s(&plain, &l, n, 1),
          "windowed: one kernel");
}

/* torchtitan's CP rows (bench/published torchtitan-cp: Llama 3 8B, s = 32,768·c over c
 * ranks, one sample): every rank holds 32,768 tokens at every c, so the ring's kernels
 * keep their shapes (L = 16,384) and only their count grows — the priced forward core is
 * a + b·c exactly, the premise of the rows' diagnosis (bench/published/README.md
 * "What changes between CP 2 and CP 4"). b by hand, forward, compiled merges: one
 * unmasked 2L × L block, 4·32768·16384·4096 = 8.796e12 FLOP at 0.35·989 × 708.5 /
 * 841.9 (the settled clock, cost model 142) = 291.30 TFLOP/s (the grid fills the 132
 * SMs) = 30.196 ms, + its merge, 10 B per O element of 32768·4096 = 1.342 GB at
 * 0.8·3.35 TB/s = 0.501 ms, + 2 launches of 4 µs: 30.705 ms. */
static void test_cp_ring_fixed_tokens(void)
{
    tsl_roofline_dev_t d = shaped_dev("H100-80G", 989e12 * 0.777, 989e12, 3350e9);
    d.cp_merge = true;
    double f[9] = {0};
    for (uint32_t c = 2; c <= 8; c *= 2) {
        tsl_layer_t l = layer(32768 * c, 4096, 32);
        l.kv_heads = 8;
        l.causal = true;
        tsl_err_t err = {0};
        CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
        d.cp_ring = c;
        f[c] = tsl_roofline_core_fwd_s(&d, &l, 1.0 / c, 1);
    }
    double step = 4.0 * 32768 * 16384 * 4096 / (0.35 * (708.5 / 841.9) * 989e12) +
                  10.0 * 32768 * 4096 / (TSL_ROOFLINE_MEM_EFF * 3350e9) + 2 * 4e-6;
    CHECK_NEAR(step, 30.705e-3, 1e-4, "a ring step by hand: %.3f ms", step * 1e3);
    CHECK_NEAR((f[4] - f[2]) / 2, step, 1e-9, "CP 2 -> 4: %.3f ms per step, by hand %.3f",
               (f[4] - f[2]) / 2 * 1e3, step * 1e3);
    CHECK_NEAR((f[8] - f[4]) / 4, step, 1e-9, "CP 4 -> 8: %.3f ms per step, by hand %.3f",
               (f[8] - f[4]) / 4 * 1e3, step * 1e3);
}

/* TransformerEngine's p2p ring on the host (cost model 197): the slowest rank's framework
 * calls, counted at release_v2.7 (roofline.h TSL_ROOFLINE_TE_RING_*: forward 5 + 15·c,
 * backward 15 + 25·c, the c attention calls among them), at 3 a host op, replace its
 * correction kernels' 2c + 1 / 3c + 2 ops. At one second an op the pass's time is its op
 * count: TE's ring over the bare one (its c attention kernels, one op each) is forward
 * (5 + 14c) / 3 = 11 at c = 2, 61 / 3 at c = 4 (5 and 9 kernels before), backward
 * (15 + 24c) / 3 = 21 and 37 (8 and 14 before). Host only: the GPU's time is unchanged. */
static void test_te_ring_host(void)
{
    tsl_roofline_dev_t d = shaped_dev("H100-80G", 989e12 * 0.777, 989e12, 3350e9);
    tsl_layer_t l = layer(8192, 1024, 16);
    l.causal = true;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    const double want_f[5] = {0, 0, 11.0, 0, 61.0 / 3.0}, want_b[5] = {0, 0, 21.0, 0, 37.0};
    for (uint32_t c = 2; c <= 4; c *= 2) {
        tsl_roofline_dev_t te = d, bare = d;
        te.cp_ring = bare.cp_ring = c;
        te.cp_te = true;
        double gpu_f = tsl_roofline_layer_fwd_s(&te, &l, 1, 1, false, 0);
        double gpu_b = tsl_roofline_layer_bwd_s(&te, &l, 1, 1, false, 0);
        te.host_op_s = bare.host_op_s = 1.0;
        double f = tsl_roofline_layer_fwd_s(&te, &l, 1, 1, false, 0) -
                   tsl_roofline_layer_fwd_s(&bare, &l, 1, 1, false, 0);
        double b = tsl_roofline_layer_bwd_s(&te, &l, 1, 1, false, 0) -
                   tsl_roofline_layer_bwd_s(&bare, &l, 1, 1, false, 0);
        CHECK_NEAR(f, want_f[c], 1e-9, "c = %u: TE's ring forward %.3f host ops, want %.3f", c, f,
                   want_f[c]);
        CHECK_NEAR(b, want_b[c], 1e-9, "c = %u: TE's ring backward %.3f host ops, want %.3f", c, b,
                   want_b[c]);
        te.host_op_s = 0.0;
        CHECK(tsl_roofline_layer_fwd_s(&te, &l, 1, 1, false, 0) == gpu_f &&
                  tsl_roofline_layer_bwd_s(&te, &l, 1, 1, false, 0) == gpu_b,
              "c = %u: the GPU's time is the kernels'", c);
    }
}

/* An LM head of s tokens a sample, width h and vocabulary V, derived. */
static tsl_layer_t head_layer(uint32_t s, uint32_t h, uint32_t V)
{
    tsl_layer_t l;
    memset(&l, 0, sizeof(l));
    l.kind = TSL_LAYER_HEAD;
    l.seq_len = s;
    l.hidden = h;
    l.vocab = V;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    return l;
}

/* The LM head's loss as the executor runs it (the default loss_impl): 10 bytes per
 * logit forward in 3 kernels, 6 backward in one (loss_impl.h). GPT-2's head, 16 × 1024
 * tokens, V' = 50304: by hand 10 · 50304 · 16384 = 8.24 GB, 3.08 ms at 0.8 × 3350
 * GB/s, on top of the logits GEMM; the backward 6 · 50304 · 16384 = 4.95 GB, 1.84 ms,
 * on top of its two gradient GEMMs. */
static void test_loss(void)
{
    tsl_roofline_dev_t d = shaped_dev("H100-80G", 989e12 * 0.777, 989e12, 3350e9);
    tsl_layer_t l = head_layer(1024, 1024, 50257);
    double T = 16384, V = 50304, W = 0.8 * 3350e9, L = TSL_ROOFLINE_LAUNCH_S;
    /* the executor's loss, the default (loss_impl.h): 10 B in 3 kernels forward, 6 B in
     * one backward (cost model 119; torch's 22 + 26 before, test_loss_time) */
    double ce_f = 10.0 * V * T / W, ce_b = 6.0 * V * T / W;
    CHECK_NEAR(ce_f, 3.075e-3, 1e-3, "forward loss %.3f ms", ce_f * 1e3);
    CHECK_NEAR(ce_b, 1.845e-3, 1e-3, "backward loss %.3f ms", ce_b * 1e3);
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &l, 16, 1, false, V),
               tsl_roofline_gemm_s(&d, T, V, 1024, 1) + ce_f + 3 * L, 1e-12, "head forward");
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&d, &l, 16, 1, false, V),
               tsl_roofline_gemm_s(&d, T, 1024, V, 1) + tsl_roofline_gemm_s(&d, 1024, V, T, 1) +
                   ce_b + L,
               1e-12, "head backward");
}

/* The eager host floor: a pass takes max(GPU, ops × host_op_s). A GPT-2 layer
 * with dropout and biases issues 12 ops forward (QKV, core, proj, 3 norm/residual/
 * dropout kernels; FC1, GELU, FC2, 3 more) and 20 backward (2 per GEMM, the core,
 * the same 7 elementwise, 4 bias gradients); the head 4 and 5; the embedding 2
 * and 2; unfused attention counts its core as one op too. At 57.2 µs an op, one
 * sample's layer (GPU ~0.1 ms) is host-bound: 686.4 µs forward, 1144 µs
 * backward; sixteen samples' (GPU > 1 ms) are not. */
static void test_host_floor(void)
{
    tsl_roofline_dev_t d = shaped_dev("H100-80G", 989e12 * 0.777, 989e12, 3350e9);
    CHECK(d.host_op_s == 0, "no floor unless the caller sets one");
    tsl_layer_t l = layer(1024, 1024, 16), un = l, head, emb;
    un.unfused_attn = true;
    memset(&head, 0, sizeof(head));
    head.kind = TSL_LAYER_HEAD;
    head.seq_len = head.hidden = 1024;
    head.vocab = 50257;
    emb = head;
    emb.kind = TSL_LAYER_EMBEDDING;
    emb.positions = 1024;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&un, &err) == 0 && tsl_layer_derive(&head, &err) == 0 &&
              tsl_layer_derive(&emb, &err) == 0,
          "%s", err.msg);
    double gpu_f1 = tsl_roofline_layer_fwd_s(&d, &l, 1, 1, false, 0);
    double gpu_f16 = tsl_roofline_layer_fwd_s(&d, &l, 16, 1, false, 0);
    tsl_roofline_dev_t ops = d; /* one second an op: the pass's op count */
    ops.host_op_s = 1.0;
    /* backward: each block's norm two kernels, its dγ/dβ finalize (cost model 178) */
    CHECK(tsl_roofline_layer_fwd_s(&ops, &l, 1, 1, false, 0) == 12 &&
              tsl_roofline_layer_bwd_s(&ops, &l, 1, 1, false, 0) == 22,
          "layer ops %g / %g", tsl_roofline_layer_fwd_s(&ops, &l, 1, 1, false, 0),
          tsl_roofline_layer_bwd_s(&ops, &l, 1, 1, false, 0));
    CHECK(tsl_roofline_layer_fwd_s(&ops, &un, 1, 1, false, 0) == 12 &&
              tsl_roofline_layer_bwd_s(&ops, &un, 1, 1, false, 0) == 22,
          "unfused: the same ops");
    CHECK(tsl_roofline_layer_fwd_s(&ops, &head, 1, 1, false, 50304) == 4 &&
              tsl_roofline_layer_bwd_s(&ops, &head, 1, 1, false, 50304) == 3,
          "head ops");
    CHECK(tsl_roofline_layer_fwd_s(&ops, &emb, 1, 1, false, 50304) == 2 &&
              tsl_roofline_layer_bwd_s(&ops, &emb, 1, 1, false, 50304) == 2,
          "embedding ops");
    d.host_op_s = TSL_ROOFLINE_HOST_OP_S;
    CHECK(gpu_f1 < 12 * TSL_ROOFLINE_HOST_OP_S && gpu_f16 > 12 * TSL_ROOFLINE_HOST_OP_S,
          "GPU %.1f us (1 sample), %.1f us (16)", gpu_f1 * 1e6, gpu_f16 * 1e6);
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &l, 1, 1, false, 0), 686.4e-6, 1e-12,
               "one sample: host-bound");
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0), 1258.4e-6, 1e-12,
               "one sample backward: host-bound");
    CHECK(tsl_roofline_layer_fwd_s(&d, &l, 16, 1, false, 0) == gpu_f16, "16 samples: the GPU's");
    tsl_roofline_dev_t flat;
    tsl_roofline_dev_init(&flat, 1e14, 0);
    flat.host_op_s = 1.0;
    CHECK(tsl_roofline_layer_fwd_s(&flat, &l, 1, 1, false, 0) < 1.0,
          "no bandwidth: the FLOP count alone, no floor");
}

/* Megatron-core's per-layer CUDA graphs (dev.cuda_graphs, cost model 171): a graphed
 * module's ops leave the pass's host floor, one graph launch in their place, its kernels
 * the same. The GPT-2 layer of test_host_floor, 12 ops forward and 20 backward, every
 * one in its attention or its MLP block: both graphed, 2 launches a pass; a GPU-bound
 * pass is unchanged. A MoE FFN's router graph takes the router GEMM and its two kernels
 * and the pre-MLP norm (one of the block's two elementwise kernels) for one launch; a
 * MoE block graphed whole (drop-and-pad) leaves no expert stretch after the sync. */
static void test_cuda_graphs(void)
{
    tsl_roofline_dev_t d = shaped_dev("H100-80G", 989e12 * 0.777, 989e12, 3350e9);
    tsl_layer_t l = layer(1024, 1024, 16);
    tsl_roofline_dev_t ops = d, g = d; /* one second an op: the pass's host ops */
    ops.host_op_s = 1.0;
    tsl_roofline_dev_t gops = ops;
    gops.cuda_graphs = TSL_CUDA_GRAPH_ATTN | TSL_CUDA_GRAPH_MLP;
    CHECK(tsl_roofline_layer_fwd_s(&gops, &l, 1, 1, false, 0) == 2 &&
              tsl_roofline_layer_bwd_s(&gops, &l, 1, 1, false, 0) == 2,
          "attn and mlp graphed: two launches a pass, %g / %g",
          tsl_roofline_layer_fwd_s(&gops, &l, 1, 1, false, 0),
          tsl_roofline_layer_bwd_s(&gops, &l, 1, 1, false, 0));
    gops.cuda_graphs = TSL_CUDA_GRAPH_ATTN;
    double attn_f = tsl_roofline_layer_fwd_s(&gops, &l, 1, 1, false, 0);
    CHECK(attn_f > 2 && attn_f < 12, "attn alone: the MLP's ops stay eager, %g", attn_f);
    gops.cuda_graphs = TSL_CUDA_GRAPH_MAMBA | TSL_CUDA_GRAPH_MOE_ROUTER;
    CHECK(tsl_roofline_layer_fwd_s(&gops, &l, 1, 1, false, 0) == 12,
          "scopes a dense encoder layer does not have: every op eager");
    d.host_op_s = g.host_op_s = TSL_ROOFLINE_HOST_OP_S;
    g.cuda_graphs = TSL_CUDA_GRAPH_ATTN | TSL_CUDA_GRAPH_MLP;
    CHECK(tsl_roofline_layer_fwd_s(&d, &l, 1, 1, false, 0) > 12 * TSL_ROOFLINE_HOST_OP_S * 0.99 &&
              tsl_roofline_layer_fwd_s(&g, &l, 1, 1, false, 0) <
                  tsl_roofline_layer_fwd_s(&d, &l, 1, 1, false, 0) / 2,
          "one sample: host-bound eager, much less graphed");
    CHECK(tsl_roofline_layer_fwd_s(&g, &l, 16, 1, false, 0) ==
                  tsl_roofline_layer_fwd_s(&d, &l, 16, 1, false, 0) &&
              tsl_roofline_layer_bwd_s(&g, &l, 16, 1, false, 0) ==
                  tsl_roofline_layer_bwd_s(&d, &l, 16, 1, false, 0),
          "16 samples: GPU-bound, the same kernels");

    tsl_roofline_dev_t m;
    tsl_roofline_dev_init(&m, 2250e12 * 0.7, 8000e9);
    m.ep = 8;
    m.moe_busy = 1.0;
    m.host_op_s = 1.0;
    tsl_layer_t e = moe_ffn(8192, 2688, 1856, 32, true, 128, 6);
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&e, &err) == 0, "%s", err.msg);
    tsl_roofline_dev_t router = m;
    router.cuda_graphs = TSL_CUDA_GRAPH_MOE_ROUTER | TSL_CUDA_GRAPH_MOE_PREPROCESS;
    double eager = tsl_roofline_layer_fwd_s(&m, &e, 1, 1, false, 0);
    CHECK(tsl_roofline_layer_fwd_s(&router, &e, 1, 1, false, 0) == eager - 3 &&
              tsl_roofline_layer_bwd_s(&router, &e, 1, 1, false, 0) ==
                  tsl_roofline_layer_bwd_s(&m, &e, 1, 1, false, 0) - 5,
          "the router's graph: 3 + 1 ops forward, 5 + 1 backward (the GEMM's dX and dW, the "
          "norm's two kernels) "
          "for one launch: %g against %g, %g against %g",
          tsl_roofline_layer_fwd_s(&router, &e, 1, 1, false, 0), eager,
          tsl_roofline_layer_bwd_s(&router, &e, 1, 1, false, 0),
          tsl_roofline_layer_bwd_s(&m, &e, 1, 1, false, 0));
    tsl_roofline_fwd_t fe, fr, fw;
    tsl_roofline_layer_fwd(&m, &e, 1, 1, false, 0, &fe);
    tsl_roofline_layer_fwd(&router, &e, 1, 1, false, 0, &fr);
    tsl_roofline_dev_t whole = m;
    whole.cuda_graphs = TSL_CUDA_GRAPH_MOE;
    tsl_roofline_layer_fwd(&whole, &e, 1, 1, false, 0, &fw);
    CHECK(fe.expert_ops > 0 && fr.expert_ops == fe.expert_ops && fw.expert_ops == 0 &&
              fw.expert_gpu_s == 0 && fw.s == 1 && fw.gpu_s == fe.gpu_s,
          "experts after the sync: eager under the router's graph (%g), none in the block's "
          "(%g; %g launch)",
          fr.expert_ops, fw.expert_ops, fw.s);
}

/* Synchronous launches (launch_blocking, CUDA_LAUNCH_BLOCKING=1): the host dispatches
 * each op once the kernel before it has ended, so a pass is its GPU time plus its ops'
 * dispatch, G + ops·H, in both regimes. The GPT-2 layer above, 12 ops forward and 20
 * backward: one sample (host-bound, 686.4 µs asynchronous) pays its GPU time on top;
 * sixteen (GPU-bound, the GPU's time asynchronous) pay 12·H = 686.4 µs on top. */
static void test_launch_blocking(void)
{
    tsl_roofline_dev_t d = shaped_dev("H100-80G", 989e12 * 0.777, 989e12, 3350e9);
    CHECK(!d.launch_blocking, "asynchronous launches unless the caller says otherwise");
    tsl_layer_t l = layer(1024, 1024, 16);
    double gf1 = tsl_roofline_layer_fwd_s(&d, &l, 1, 1, false, 0);
    double gf16 = tsl_roofline_layer_fwd_s(&d, &l, 16, 1, false, 0);
    double gb16 = tsl_roofline_layer_bwd_s(&d, &l, 16, 1, false, 0);
    d.host_op_s = TSL_ROOFLINE_HOST_OP_S;
    double af16 = tsl_roofline_layer_fwd_s(&d, &l, 16, 1, false, 0);
    CHECK(af16 == gf16, "asynchronous, GPU-bound: the GPU's time");
    tsl_roofline_dev_t b = d;
    b.launch_blocking = true;
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&b, &l, 1, 1, false, 0), gf1 + 12 * TSL_ROOFLINE_HOST_OP_S,
               1e-12, "one sample: GPU + host");
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&b, &l, 16, 1, false, 0),
               gf16 + 12 * TSL_ROOFLINE_HOST_OP_S, 1e-12, "sixteen samples forward: GPU + host");
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&b, &l, 16, 1, false, 0),
               gb16 + 22 * TSL_ROOFLINE_HOST_OP_S, 1e-12, "sixteen samples backward: GPU + host");
    b.host_op_s = 0.0; /* no host op priced (PAPER, --no-host-floor): nothing to add */
    CHECK(tsl_roofline_layer_fwd_s(&b, &l, 16, 1, false, 0) == gf16, "no host op: the GPU's");
    /* BLOOM's block as Megatron-DeepSpeed ran it (unfused core, ALiBi's baddbmm, causal):
     * the same 12 and 22 ops. The core is one op each way although it launches 5
     * kernels forward and 8 backward; counted in H's units the block is not above
     * the count (bench/published/README.md "What a block launches"). */
    tsl_layer_t bl = l;
    bl.unfused_attn = true;
    bl.alibi = true;
    bl.causal = true;
    tsl_roofline_dev_t g = b; /* host_op_s 0: the GPU's time */
    double gbf = tsl_roofline_layer_fwd_s(&g, &bl, 2, 1, false, 0);
    double gbb = tsl_roofline_layer_bwd_s(&g, &bl, 2, 1, false, 0);
    b.host_op_s = TSL_ROOFLINE_HOST_OP_S;
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&b, &bl, 2, 1, false, 0), gbf + 12 * TSL_ROOFLINE_HOST_OP_S,
               1e-12, "BLOOM's block forward: 12 ops");
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&b, &bl, 2, 1, false, 0), gbb + 22 * TSL_ROOFLINE_HOST_OP_S,
               1e-12, "BLOOM's block backward: 22 ops");
}

/* torch.autocast (roofline.h, docs/cost-model.md "Autocast"): a GPT-2 medium layer
 * (h 1024, a 16, s 1024, causal, biases, no dropout) for 16 samples, T = 16384
 * tokens, on the H100, by hand against the same layer priced bf16:
 *   norm + residual: 2 × 24 B against 2 × 10 B per token and h forward, 2 × 44 B
 *   against 1.5 × 2 × 10 B backward, 3 kernels per block against 2 forward, 5
 *   against 2 backward;
 *   weight casts: 6 B per parameter each way (12h² + 13h, norms in), 8 kernels;
 *   fused core: unchanged; unfused core, per score (a·s²·16 = 2^28): 24 + 8 (the
 *   mask's clone and fill) against 4 forward (at the fused softmax's own rate,
 *   TSL_ROOFLINE_SCORE_KERNEL_SLOWDOWN), 6 kernels against 1, and the mask
 *   itself once per micro-batch (ones and triu: 3 B per s² element, 2 kernels);
 *   backward 28 + 12 (softmax_backward_cuda_out's `grad * output` in fp32) + 8
 *   against 1.5 × 4, 7 kernels against 1;
 *   eager layout copies (TSL_ROOFLINE_EAGER_*), per token and h: backward the q, k,
 *   v gradients' stack and reshape, 8 B per QKV output element = 24, 2 kernels;
 *   unfused, forward matmul's copies of q, kᵀ, v (4 × 3) and the context's (4) =
 *   16, 4 kernels; backward the context gradient's, 4, 1 kernel;
 *   host ops: unchanged (the floor's figure lumps autocast's). */
static void test_autocast(void)
{
    tsl_roofline_dev_t d, ac;
    tsl_roofline_dev_init(&d, 989e12 * 0.777, 3350e9);
    tsl_gemm_eff_for_gpu(&d.shape, "H100-80G", 989e12, 3350e9);
    ac = d;
    ac.autocast = true;
    tsl_layer_t l = layer(1024, 1024, 16), un;
    l.causal = true;
    l.no_dropout = true;
    un = l;
    un.unfused_attn = true;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0 && tsl_layer_derive(&un, &err) == 0, "%s", err.msg);
    double W = 0.8 * 3350e9, L = TSL_ROOFLINE_LAUNCH_S, hT = 1024.0 * 16384;
    double P = 12.0 * 1024 * 1024 + 13.0 * 1024;
    CHECK(l.params == (uint64_t)P, "layer parameters %llu", (unsigned long long)l.params);
    double fwd = ((48.0 - 20.0) * hT + 6.0 * P) / W + (2 + 8) * L;
    double bwd = ((88.0 - 30.0 + 24.0) * hT + 6.0 * P) / W + (4 + 8 + 2) * L;
    CHECK_NEAR(fwd, 243.49e-6, 1e-4, "by hand: forward + %.2f us", fwd * 1e6);
    CHECK_NEAR(bwd, 597.55e-6, 1e-4, "by hand: backward + %.2f us", bwd * 1e6);
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&ac, &l, 16, 1, false, 0) -
                   tsl_roofline_layer_fwd_s(&d, &l, 16, 1, false, 0),
               fwd, 1e-9, "forward: autocast's bytes");
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&ac, &l, 16, 1, false, 0) -
                   tsl_roofline_layer_bwd_s(&d, &l, 16, 1, false, 0),
               bwd, 1e-9, "backward: autocast's bytes");
    double E = 16.0 * 1024 * 1024 * 16;
    double mask = 3.0 * 1024 * 1024 / W + 2 * L;
    /* against the fused softmax's 4 (6 backward) at its own rate */
    double fused_f = 4.0 * TSL_ROOFLINE_SCORE_KERNEL_SLOWDOWN,
           fused_b = 6.0 * TSL_ROOFLINE_SCORE_KERNEL_SLOWDOWN;
    double core_f = (32.0 - fused_f) * E / W + 5 * L + mask + 16.0 * hT / W + 4 * L,
           core_b = (48.0 - fused_b) * E / W + 6 * L + 4.0 * hT / W + L;
    CHECK_NEAR(core_b - 4.0 * hT / W - L, 4110.6e-6, 1e-5, "by hand: backward scores + %.1f us",
               (core_b - 4.0 * hT / W - L) * 1e6);
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&ac, &un, 16, 1, false, 0) -
                   tsl_roofline_layer_fwd_s(&d, &un, 16, 1, false, 0),
               fwd + core_f, 1e-9, "unfused forward: + %.1f us on the scores", core_f * 1e6);
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&ac, &un, 16, 1, false, 0) -
                   tsl_roofline_layer_bwd_s(&d, &un, 16, 1, false, 0),
               bwd + core_b, 1e-9, "unfused backward: + %.1f us on the scores", core_b * 1e6);
    CHECK_NEAR(tsl_roofline_core_fwd_s(&ac, &un, 16, 1) - tsl_roofline_core_fwd_s(&d, &un, 16, 1),
               (32.0 - fused_f) * E / W + 5 * L + mask, 1e-9,
               "the recomputed core: its scores and mask alone");
    /* .grad accumulation of a later micro-batch: 12 B per parameter (read the fp32
     * gradient and .grad, write .grad), a kernel per tensor: 4 weights, 4 biases, 2
     * norms' γ and β = 12 kernels; 12 × 12,596,224 B / 2.68 TB/s + 48 us = 104.4 us;
     * none where the device has no accumulation bytes (cost.c grad_accum_bytes sets
     * 12 under autocast) */
    ac.grad_acc_bytes = 12.0;
    double acc = 12.0 * P / W + 12 * L;
    CHECK_NEAR(acc, 104.40e-6, 1e-4, "by hand: accumulation %.2f us", acc * 1e6);
    CHECK_NEAR(tsl_roofline_layer_bwd_acc_s(&ac, &l, 16, 1, false, 0, P) -
                   tsl_roofline_layer_bwd_s(&ac, &l, 16, 1, false, 0),
               acc, 1e-9, "accumulation in the backward");
    CHECK(tsl_roofline_layer_bwd_acc_s(&d, &l, 16, 1, false, 0, P) ==
              tsl_roofline_layer_bwd_s(&d, &l, 16, 1, false, 0),
          "no accumulation priced without accumulation bytes");
    ac.host_op_s = d.host_op_s = 1.0;
    CHECK(tsl_roofline_layer_bwd_acc_s(&ac, &l, 1, 1, false, 0, P) == 18,
          "a host-bound backward hides the accumulation");
    CHECK(tsl_roofline_layer_fwd_s(&ac, &l, 1, 1, false, 0) == 10 &&
              tsl_roofline_layer_bwd_s(&ac, &l, 1, 1, false, 0) == 18,
          "host ops: 10 / 18 without dropout, autocast or not");
    /* activations kept beyond bf16's: each norm's fp32 input (+2 B per element,
     * two norms), the unfused core's fp32 softmax beside its bf16 copy (6 B per
     * score against 2) */
    double repl, score;
    tsl_roofline_autocast_act(&l, &repl, &score);
    CHECK(repl == 4.0 * 1024 * 1024 && score == 0, "fused: %g / %g", repl, score);
    tsl_roofline_autocast_act(&un, &repl, &score);
    CHECK(un.act_score_bytes == 2ull * 16 * 1024 * 1024 && score == 4.0 * 16 * 1024 * 1024,
          "unfused: %g B per sample more", score);
}

/* Eager modules (roofline.h "Eager modules", docs/cost-model.md): a Llama 3.1 8B
 * layer (h 4096, a 32, 8 K/V heads: d 4096, e 1024, SwiGLU f 14336, RMSNorm, no
 * biases or dropout, causal, s 8192) for 2 samples, T = 16384 tokens, on the H100
 * (W = 0.8 × 3350 GB/s), by hand against the same layer priced fused:
 *   forward   norms 2 × (36 + 6 − 10) B per token and h, RoPE 20·(d + e), repeat_kv
 *             2·2·(d + e), SwiGLU (10 − 6)·f: 442,368 B per token; kernels 2 × 7
 *             + 6 + 2 + 1 = 23 more
 *   backward  norms 2 × (92 + 1.5·6 − 1.5·10), RoPE and repeat_kv as forward,
 *             SwiGLU (18 − 1.5·6)·f: 956,416 B per token; kernels 2 × 13 + 6 + 2
 *             + 2 = 36 more
 * = 2.796 ms forward and 5.991 ms backward more; the host floor counts each
 * kernel (10 → 33 ops forward, 16 → 50 backward; the fused norm's dγ finalize
 * its second kernel backward, cost model 178). A GPT-2 layer (LayerNorm,
 * GELU, learned positions) is unchanged, and autocast keeps its own figures. */
static void test_eager(void)
{
    tsl_roofline_dev_t d, eg;
    tsl_roofline_dev_init(&d, 989e12 * 0.777, 3350e9);
    tsl_gemm_eff_for_gpu(&d.shape, "H100-80G", 989e12, 3350e9);
    eg = d;
    eg.eager = true;
    tsl_layer_t l = layer(8192, 4096, 32), gpt = layer(1024, 1024, 16);
    l.kv_heads = 8;
    l.ffn_hidden = 14336;
    l.gated_ffn = l.no_bias = l.rms_norm = l.causal = l.no_dropout = true;
    gpt.causal = gpt.no_dropout = true;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0 && tsl_layer_derive(&gpt, &err) == 0, "%s", err.msg);
    double W = 0.8 * 3350e9, L = TSL_ROOFLINE_LAUNCH_S, T = 16384.0;
    double h = 4096, de = 4096 + 1024, f = 14336;
    double fb = 2 * 32.0 * h + 20.0 * de + 4.0 * de + 4.0 * f;
    double bb = 2 * (92.0 + 9.0 - 15.0) * h + 20.0 * de + 4.0 * de + (18.0 - 9.0) * f;
    CHECK(fb == 442368 && bb == 956416, "bytes per token %g / %g", fb, bb);
    double fwd = fb * T / W + 23 * L, bwd = bb * T / W + 34 * L;
    CHECK_NEAR(fwd, 2.796e-3, 1e-3, "by hand: forward + %.3f ms", fwd * 1e3);
    CHECK_NEAR(bwd, 5.983e-3, 1e-3, "by hand: backward + %.3f ms", bwd * 1e3);
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&eg, &l, 2, 1, false, 0) -
                   tsl_roofline_layer_fwd_s(&d, &l, 2, 1, false, 0),
               fwd, 1e-9, "forward: the eager kernels' bytes");
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&eg, &l, 2, 1, false, 0) -
                   tsl_roofline_layer_bwd_s(&d, &l, 2, 1, false, 0),
               bwd, 1e-9, "backward: the eager kernels' bytes");
    CHECK(tsl_roofline_layer_fwd_s(&eg, &gpt, 16, 1, false, 0) ==
                  tsl_roofline_layer_fwd_s(&d, &gpt, 16, 1, false, 0) &&
              tsl_roofline_layer_bwd_s(&eg, &gpt, 16, 1, false, 0) ==
                  tsl_roofline_layer_bwd_s(&d, &gpt, 16, 1, false, 0),
          "GPT-2's LayerNorm and GELU: one ATen kernel each either way");
    tsl_roofline_dev_t ac = d, both = d;
    ac.autocast = both.autocast = true;
    both.eager = true;
    CHECK(tsl_roofline_layer_fwd_s(&both, &l, 2, 1, false, 0) ==
              tsl_roofline_layer_fwd_s(&ac, &l, 2, 1, false, 0),
          "under autocast its own figures");
    d.host_op_s = eg.host_op_s = 1.0;
    CHECK(tsl_roofline_layer_fwd_s(&d, &l, 1, 1, false, 0) == 10 &&
              tsl_roofline_layer_fwd_s(&eg, &l, 1, 1, false, 0) == 33,
          "host ops forward: 10 fused, 33 eager (%g)",
          tsl_roofline_layer_fwd_s(&eg, &l, 1, 1, false, 0));
    CHECK(tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0) == 16 &&
              tsl_roofline_layer_bwd_s(&eg, &l, 1, 1, false, 0) == 50,
          "host ops backward: 16 fused, 50 eager (%g)",
          tsl_roofline_layer_bwd_s(&eg, &l, 1, 1, false, 0));
}

/* TransGAN's block as AMP's fork writes it (transgan_eager, roofline.h
 * TSL_ROOFLINE_TRANSGAN_*), on the generator's stage-6 layer (82944 tokens of
 * h 16, f 64, 4 heads in windows of 324, unfused, no dropout) and one sample, on a
 * V100 (900 GB/s × 0.8). Bytes per token, forward: h-wide 24 · 16 = 384, the QKV
 * bias add 4 · 48 = 192, the GELU 18 · 64 = 1152, the scores' scale and bias
 * 8 · 4 · 324 = 10368: 12096; backward: 72 · 16 = 1152, 42 · 64 = 2688, the
 * scores' 6 and torch.softmax's fp16 `grad * output` 6 (TSL_ROOFLINE_SOFTMAX_BWD_
 * MUL_ELEMS × 2 B), 12 · 1296 = 15552: 19392. Kernels: 12 + 1 + 4 + 2 = 19
 * forward, 25 + 9 + 2 + 1 = 37 backward: 1.393 ms + 19 launches of 4 µs =
 * 1.4695 ms more forward; host ops 17 and 34 more (the scores' kernels ride in
 * the core's one op). */
static void test_transgan_eager(void)
{
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, 125e12 * 0.8, 900e9);
    tsl_layer_t l = layer(82944, 16, 4), tg;
    l.ffn_hidden = 64;
    l.attn_window = 324;
    l.unfused_attn = l.no_dropout = true;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    tg = l;
    tg.transgan_eager = true;
    double W = 0.8 * 900e9, L = TSL_ROOFLINE_LAUNCH_S, T = 82944.0;
    double fwd = 12096.0 * T / W + 19 * L, bwd = 19392.0 * T / W + 37 * L;
    CHECK_NEAR(fwd, 1.4695e-3, 1e-3, "by hand: forward + %.4f ms", fwd * 1e3);
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &tg, 1, 1, false, 0) -
                   tsl_roofline_layer_fwd_s(&d, &l, 1, 1, false, 0),
               fwd, 1e-9, "forward: the fork's eager kernels");
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&d, &tg, 1, 1, false, 0) -
                   tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0),
               bwd, 1e-9, "backward: the fork's eager kernels");
    tsl_layer_t e = l; /* a non-encoder layer and a fused core: no change */
    e.kind = TSL_LAYER_HEAD;
    e.vocab = 3;
    tsl_layer_t et = e;
    et.transgan_eager = true;
    CHECK(tsl_roofline_layer_fwd_s(&d, &et, 1, 1, false, 0) ==
              tsl_roofline_layer_fwd_s(&d, &e, 1, 1, false, 0),
          "the head: as before");
    tsl_layer_t s1 = layer(81, 1024, 4), s1t; /* stage 1: host-bound */
    s1t = s1;
    s1t.transgan_eager = true;
    d.host_op_s = 1.0;
    double f0 = tsl_roofline_layer_fwd_s(&d, &s1, 1, 1, false, 0);
    double b0 = tsl_roofline_layer_bwd_s(&d, &s1, 1, 1, false, 0);
    CHECK(tsl_roofline_layer_fwd_s(&d, &s1t, 1, 1, false, 0) - f0 == 17 &&
              tsl_roofline_layer_bwd_s(&d, &s1t, 1, 1, false, 0) - b0 == 34,
          "host ops: 17 more forward (%g of %g), 34 more backward", f0 + 17, f0);
}

/* GPT-2 small's block at s tokens with an unfused causal core, as the script writes it
 * (l) and as transformers' GPT2Block runs it (hf: gelu_new's chain, the layer-index
 * scale), on an A100 under bf16 autocast (d). */
static void hf_gpt2_blocks(uint32_t s, tsl_roofline_dev_t *d, tsl_layer_t *l, tsl_layer_t *hf)
{
    tsl_roofline_dev_init(d, 312e12 * 0.6, 2039e9);
    d->autocast = true;
    *l = layer(s, 768, 12);
    l->unfused_attn = l->causal = true;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(l, &err) == 0, "%s", err.msg);
    *hf = *l;
    hf->hf_gpt2_eager = hf->layer_scale = true;
}

/* transformers' GPT2Block as written (hf_gpt2_eager, roofline.h TSL_ROOFLINE_HF_GPT2_*)
 * under bf16 autocast, on GPT-2 small's block (1024 tokens, h 768, f 3072, 12 heads,
 * unfused, causal, dropout) and one sample, on an A100 (2039 GB/s × 0.8). Beyond the
 * autocast block: forward, gelu_new's 72 B per FFN element (3072 · 1024 of them) in 9
 * kernels more, the scores even (the layer's division and torch.where, 4 + 4 B, where
 * masked_fill's clone and fill moved 8), the bool cast of the causal buffer 2 B per
 * s × s element in 1 kernel where the script's ones + triu took 3 in 2: 72 · 3145728
 * − 1048576 bytes, 8 kernels; backward 112 · 3145728 bytes in 14 kernels and split's
 * cat after three reshapes, 2 more. Under fp16 autocast the half-to-float softmax
 * saves 8 B per score (12 · 1024² of them) and a kernel each way; without
 * scale_attn_by_inverse_layer_idx the second division's 4 B and kernel go. Host: the
 * chain's 9 and 14 kernels are ops, the scores' ride in the core's one. Without
 * autocast the flag changes nothing. */
static void test_hf_gpt2_eager(void)
{
    tsl_roofline_dev_t d;
    tsl_layer_t l, hf;
    hf_gpt2_blocks(1024, &d, &l, &hf);
    double W = 0.8 * 2039e9, L = TSL_ROOFLINE_LAUNCH_S, f = 3072.0 * 1024, sc = 12.0 * 1024 * 1024;
    double fwd = (72.0 * f - 1024.0 * 1024) / W + 8 * L, bwd = 112.0 * f / W + 16 * L;
    double f0 = tsl_roofline_layer_fwd_s(&d, &l, 1, 1, false, 0);
    double b0 = tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0);
    printf("GPT-2 small block, bf16 autocast: %.3f ms forward + %.3f, %.3f ms backward + %.3f "
           "as transformers writes it\n",
           f0 * 1e3, fwd * 1e3, b0 * 1e3, bwd * 1e3);
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &hf, 1, 1, false, 0) - f0, fwd, 1e-9,
               "forward: gelu_new's chain, the bool mask");
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&d, &hf, 1, 1, false, 0) - b0, bwd, 1e-9,
               "backward: gelu_new's chain, the QKV gradients' cat");
    tsl_roofline_dev_t h = d; /* fp16 autocast: the half-to-float softmax */
    h.fp16 = true;
    CHECK(tsl_roofline_layer_fwd_s(&h, &l, 1, 1, false, 0) == f0,
          "fp16 alone leaves the script's block as it was");
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&h, &hf, 1, 1, false, 0) - f0, fwd - 8.0 * sc / W - L, 1e-9,
               "fp16 forward: softmax reads 2, writes 4 in one kernel");
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&h, &hf, 1, 1, false, 0) - b0, bwd - 8.0 * sc / W - L, 1e-9,
               "fp16 backward: softmax writes the fp16 gradient itself");
    tsl_layer_t nl = hf; /* without scale_attn_by_inverse_layer_idx */
    nl.layer_scale = false;
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &nl, 1, 1, false, 0) - f0, fwd - 4.0 * sc / W - L, 1e-9,
               "no layer-wise scaling: one division fewer forward");
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&d, &nl, 1, 1, false, 0) - b0, bwd - 4.0 * sc / W - L, 1e-9,
               "no layer-wise scaling: one division fewer backward");
    tsl_roofline_dev_t plain; /* no autocast: no stack here runs transformers' modules */
    tsl_roofline_dev_init(&plain, 312e12 * 0.6, 2039e9);
    CHECK(tsl_roofline_layer_fwd_s(&plain, &hf, 1, 1, false, 0) ==
                  tsl_roofline_layer_fwd_s(&plain, &l, 1, 1, false, 0) &&
              tsl_roofline_layer_bwd_s(&plain, &hf, 1, 1, false, 0) ==
                  tsl_roofline_layer_bwd_s(&plain, &l, 1, 1, false, 0),
          "without autocast: as before");
    d.host_op_s = 1.0; /* host-bound: the chain's kernels are ops */
    CHECK(tsl_roofline_layer_fwd_s(&d, &hf, 1, 1, false, 0) -
                      tsl_roofline_layer_fwd_s(&d, &l, 1, 1, false, 0) ==
                  9 &&
              tsl_roofline_layer_bwd_s(&d, &hf, 1, 1, false, 0) -
                      tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0) ==
                  14,
          "host ops: 9 more forward, 14 more backward");
    CHECK(tsl_roofline_hf_gpt2_act(&hf) == 12.0 * f && tsl_roofline_hf_gpt2_act(&l) == 0.0,
          "kept: 12 B per FFN element more (%g)", tsl_roofline_hf_gpt2_act(&hf));
    tsl_layer_t head = {.kind = TSL_LAYER_HEAD, .seq_len = 1024, .hidden = 768, .vocab = 50257};
    head.hf_gpt2_eager = true;
    CHECK(tsl_roofline_hf_gpt2_act(&head) == 0.0, "the head keeps no FFN");
}

/* The same block at 2048 tokens (roofline.h TSL_ROOFLINE_BLOCK_SOFTMAX_*): rows of
 * 2048 keys are past ATen's persistent (warp) softmax's 1024, so PyTorch 1.13 runs its
 * block kernels, cunn_SoftMaxForward reading the fp32 input three times (+8 B a
 * score; fp16's half-to-float input twice more, +4 B) and cunn_SoftMaxBackward the
 * gradient twice (+4 B), each way on top of the 1024-token block's terms; the kernel
 * count unchanged. The script's block (no hf_gpt2_eager) keeps its figures. */
static void test_hf_gpt2_block_softmax(void)
{
    tsl_roofline_dev_t d;
    tsl_layer_t l, hf;
    hf_gpt2_blocks(2048, &d, &l, &hf);
    double W = 0.8 * 2039e9, L = TSL_ROOFLINE_LAUNCH_S, f = 3072.0 * 2048, sc = 12.0 * 2048 * 2048;
    double fwd = (72.0 * f - 2048.0 * 2048 + 8.0 * sc) / W + 8 * L;
    double bwd = (112.0 * f + 4.0 * sc) / W + 16 * L;
    double f0 = tsl_roofline_layer_fwd_s(&d, &l, 1, 1, false, 0);
    double b0 = tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0);
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &hf, 1, 1, false, 0) - f0, fwd, 1e-9,
               "2048 keys forward: the block softmax's two more fp32 reads");
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&d, &hf, 1, 1, false, 0) - b0, bwd, 1e-9,
               "2048 keys backward: the block softmax's second gradient read");
    tsl_roofline_dev_t h = d; /* fp16: the half-to-float input re-read in 16 bits */
    h.fp16 = true;
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&h, &hf, 1, 1, false, 0) -
                   tsl_roofline_layer_fwd_s(&h, &l, 1, 1, false, 0),
               fwd - 8.0 * sc / W - L - 4.0 * sc / W, 1e-9,
               "fp16 forward at 2048 keys: two more 2-byte reads");
}

/* AMP's fork's TransGAN attention keeps all its heads on every TP rank, each 1/t as
 * wide (dev.tp_whole_heads; trans_gan_gen.py ParallelTransGanAttention reshapes its
 * QKV to num_heads heads of C/t/num_heads): the score GEMMs write, and the scale, bias
 * and softmax kernels move, all a·s·keys scores at any t. Stage 6's block (82944
 * tokens of width 16 in windows of 324, 4 heads) is bound by those scores: at TP 2 its
 * core costs what TP 1's does, where Megatron-LM's split halves it. At TP 1 the switch
 * changes nothing; a fused core keeps its heads split (no scores to keep). */
static void test_tp_whole_heads(void)
{
    tsl_roofline_dev_t d, w;
    tsl_roofline_dev_init(&d, 125e12 * 0.8, 900e9);
    w = d;
    w.tp_whole_heads = true;
    tsl_layer_t l = layer(82944, 16, 4);
    l.ffn_hidden = 64;
    l.attn_window = 324;
    l.unfused_attn = l.no_dropout = l.transgan_eager = true;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    double c1 = tsl_roofline_core_fwd_s(&d, &l, 1, 1), c2 = tsl_roofline_core_fwd_s(&d, &l, 1, 2);
    double w1 = tsl_roofline_core_fwd_s(&w, &l, 1, 1), w2 = tsl_roofline_core_fwd_s(&w, &l, 1, 2);
    printf("TransGAN stage-6 core, forward: TP 1 %.1f us; TP 2 %.1f us split, %.1f us whole\n",
           c1 * 1e6, c2 * 1e6, w2 * 1e6);
    CHECK(w1 == c1 &&
              tsl_roofline_layer_fwd_s(&w, &l, 1, 1, false, 0) ==
                  tsl_roofline_layer_fwd_s(&d, &l, 1, 1, false, 0) &&
              tsl_roofline_layer_bwd_s(&w, &l, 1, 1, false, 0) ==
                  tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0),
          "TP 1: unchanged");
    CHECK(c2 < 0.6 * c1, "split heads: TP 2 about halves the score-bound core (%g of %g)", c2, c1);
    /* the scores' kernels alone: (4 + 8) B per score, 1 + 2 kernels, all 4·82944·324 */
    double W = 0.8 * 900e9, scores = 4.0 * 82944 * 324;
    double kern = (4.0 + TSL_ROOFLINE_TRANSGAN_SCORE_FWD_BYTES) * scores / W;
    CHECK(w2 > kern && w2 > 0.9 * c1,
          "whole heads: TP 2 moves every score (%g, kernels %g, TP 1 %g)", w2, kern, c1);
    CHECK(tsl_roofline_layer_bwd_s(&w, &l, 1, 2, false, 0) >
              1.5 * (tsl_roofline_layer_bwd_s(&d, &l, 1, 2, false, 0) -
                     tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0) / 2),
          "backward: the scores' gradients whole too");
    tsl_layer_t f = l; /* a fused core has no scores: unchanged */
    f.unfused_attn = f.transgan_eager = false;
    CHECK(tsl_roofline_layer_fwd_s(&w, &f, 1, 2, false, 0) ==
              tsl_roofline_layer_fwd_s(&d, &f, 1, 2, false, 0),
          "a fused core: unchanged");
}

/* ALiBi through baddbmm (BLOOM, Megatron-DeepSpeed): unfused, the forward copies
 * the broadcast bias into the scores (2 bytes each, one kernel) and the score GEMM
 * reads them as C (2 bytes more in its epilogue). Heads of 16 wide keep QKᵀ
 * memory-bound, so by hand the forward runs 4 bytes per score and a launch more;
 * the backward, a fused core and the FLOP-only fallback are unchanged. The
 * embedding LayerNorm: 4 bytes per element of s·h forward, a kernel. */
static void test_alibi(void)
{
    tsl_roofline_dev_t d = h100(), flat;
    tsl_roofline_dev_init(&flat, d.gemm_flops, 0);
    tsl_layer_t l = layer(2048, 256, 16), al;
    l.unfused_attn = l.causal = true;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    al = l;
    al.alibi = true;
    CHECK(tsl_layer_derive(&al, &err) == 0 && al.params == l.params &&
              al.act_shard_bytes == l.act_shard_bytes,
          "ALiBi counts nothing");
    double S = 2, t = 2, scores = 16.0 * 2048 * 2048 * S / t;
    CHECK(2.0 * 2048 * 2048 * 16 * (S * 16 / t) / d.gemm_flops <
              4.0 * 2048 * 2048 * (S * 16 / t) / d.mem_bw,
          "QKᵀ at head dim 16 is memory-bound");
    double by_hand = 4.0 * scores / d.mem_bw + TSL_ROOFLINE_LAUNCH_S;
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &al, S, 2, false, 0) -
                   tsl_roofline_layer_fwd_s(&d, &l, S, 2, false, 0),
               by_hand, 1e-9, "forward: the copy and C's read, %.3f us", by_hand * 1e6);
    CHECK_NEAR(tsl_roofline_core_fwd_s(&d, &al, S, 2) - tsl_roofline_core_fwd_s(&d, &l, S, 2),
               by_hand, 1e-9, "the recomputed core pays it again");
    CHECK(tsl_roofline_layer_bwd_s(&d, &al, S, 2, false, 0) ==
                  tsl_roofline_layer_bwd_s(&d, &l, S, 2, false, 0) &&
              tsl_roofline_layer_fwd_s(&flat, &al, S, 2, false, 0) ==
                  tsl_roofline_layer_fwd_s(&flat, &l, S, 2, false, 0),
          "the backward and the FLOP-only fallback: unchanged");
    tsl_layer_t f = l, fa;
    f.unfused_attn = false;
    CHECK(tsl_layer_derive(&f, &err) == 0, "%s", err.msg);
    fa = f;
    fa.alibi = true;
    CHECK(tsl_roofline_layer_fwd_s(&d, &fa, S, 2, false, 0) ==
              tsl_roofline_layer_fwd_s(&d, &f, S, 2, false, 0),
          "a fused kernel adds the bias in registers: free");
    tsl_layer_t e = {.kind = TSL_LAYER_EMBEDDING, .seq_len = 2048, .hidden = 256, .vocab = 1000},
                en;
    CHECK(tsl_layer_derive(&e, &err) == 0, "%s", err.msg);
    en = e;
    en.embed_norm = true;
    CHECK(tsl_layer_derive(&en, &err) == 0 && en.params == e.params + 512 &&
              en.act_repl_bytes == e.act_repl_bytes + 2ull * 2048 * 256,
          "the embedding norm: 2h parameters, its input kept");
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &en, S, 2, false, 0) -
                   tsl_roofline_layer_fwd_s(&d, &e, S, 2, false, 0),
               4.0 * 2048 * 256 * S / d.mem_bw + TSL_ROOFLINE_LAUNCH_S, 1e-9,
               "the embedding norm's forward: 4 bytes per element");
    tsl_layer_t bad = e;
    bad.alibi = true;
    CHECK(tsl_layer_derive(&bad, &err) == -1 && strstr(err.msg, "alibi") != NULL,
          "ALiBi without attention refused: %s", err.msg);
}

/* HF T5's block (cost model 82; tsl_layer_t eager_norm, ffn_dropout): T5-Large's
 * encoder layer (512 tokens, h 1024, f 4096) keeps both flags from its preset,
 * BERT-Huge's neither. In fp32 (elem_scale 2), one sample on an H100 (3350 GB/s ×
 * 0.8), the two flags together against the same layer without them, per token:
 * forward, each of the two blocks' norms as T5LayerNorm's 6 kernels, 28 B, plus
 * the residual and dropout's 11 × 2, where the fused norm, residual and dropout
 * moved 15 × 2 (+20 B per h element, +5 kernels a block); the FFN's dropout 5 × 2
 * per f element (+1 kernel): 2 · 20 · 1024 + 10 · 4096 = 81920 B. Backward: 92 +
 * 1.5 · 22 where 1.5 · 30 (+80 B, +11 kernels a block), the dropout 1.5 · 10:
 * 2 · 80 · 1024 + 15 · 4096 = 225280 B. The stash: the FFN's dropout mask and
 * dropped copy, 1 + 4 bytes per f element in fp32 (1 + 2 in 16 bits). */
static void test_t5_block(void)
{
    tsl_model_t t5, bert;
    tsl_err_t err = {0};
    CHECK(tsl_model_preset("T5-Large-32", &t5, &err) == 0 &&
              tsl_model_preset("BERT-Huge-32", &bert, &err) == 0,
          "%s", err.msg);
    const tsl_layer_t *enc = &t5.layers[1], *dec = &t5.layers[17], *bl = &bert.layers[1];
    CHECK(enc->kind == TSL_LAYER_ENCODER && dec->kind == TSL_LAYER_DECODER && enc->eager_norm &&
              enc->ffn_dropout && dec->eager_norm && dec->ffn_dropout,
          "T5's encoder and decoder layers: HF T5's eager norm and FFN dropout");
    CHECK(!bl->eager_norm && !bl->ffn_dropout, "BERT's layer: neither");
    tsl_layer_t on = *enc, off = *enc;
    on.fp32_acts = off.fp32_acts = true;
    off.eager_norm = off.ffn_dropout = false;
    tsl_layer_t half = *enc;
    half.ffn_dropout = false;
    CHECK(tsl_layer_derive(&on, &err) == 0 && tsl_layer_derive(&off, &err) == 0 &&
              tsl_layer_derive(&half, &err) == 0,
          "%s", err.msg);
    CHECK(on.act_shard_bytes - off.act_shard_bytes == 5ull * 512 * 4096 &&
              enc->act_shard_bytes - half.act_shard_bytes == 3ull * 512 * 4096,
          "the FFN dropout's mask and copy kept: 5 B (fp32), 3 B (16-bit) per f element");
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, 989e12 * 0.777, 3350e9);
    d.elem_scale = 2.0;
    double W = 0.8 * 3350e9, L = TSL_ROOFLINE_LAUNCH_S, T = 512.0;
    double fb = 2 * 20.0 * 1024 + 10.0 * 4096, bb = 2 * 80.0 * 1024 + 15.0 * 4096;
    CHECK(fb == 81920 && bb == 225280, "bytes per token %g / %g", fb, bb);
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &on, 1, 1, false, 0) -
                   tsl_roofline_layer_fwd_s(&d, &off, 1, 1, false, 0),
               fb * T / W + 11 * L, 1e-9, "forward: the eager norms and the FFN's dropout");
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&d, &on, 1, 1, false, 0) -
                   tsl_roofline_layer_bwd_s(&d, &off, 1, 1, false, 0),
               bb * T / W + 21 * L, 1e-9, "backward: the eager norms and the FFN's dropout");
    tsl_layer_t nd = on, ndo = off;
    nd.no_dropout = ndo.no_dropout = true;
    CHECK(tsl_layer_derive(&nd, &err) == 0 && tsl_layer_derive(&ndo, &err) == 0, "%s", err.msg);
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &nd, 1, 1, false, 0) -
                   tsl_roofline_layer_fwd_s(&d, &ndo, 1, 1, false, 0),
               2 * 20.0 * 1024 * T / W + 10 * L, 1e-9,
               "without dropout: the norms alone (+20 B per h element, +5 kernels a block)");
    tsl_layer_t bad = *bl;
    bad.eager_norm = true;
    CHECK(tsl_layer_derive(&bad, &err) == -1 && strstr(err.msg, "eager_norm") != NULL,
          "an eager RMSNorm on a LayerNorm layer refused: %s", err.msg);
    tsl_model_free(&t5);
    tsl_model_free(&bert);
}

/* An LM head whose V/t rows are not 16-byte aligned (an unpadded GPT-2
 * vocabulary, 50257) runs its three GEMMs at TSL_ROOFLINE_UNALIGNED_GEMM × their
 * aligned time; the padded 50304 does not (roofline.h). */
static void test_unaligned_head(void)
{
    tsl_roofline_dev_t d = shaped_dev("H100-80G", 989e12 * 0.777, 989e12, 3350e9);
    tsl_layer_t l = head_layer(1024, 1024, 50257);
    /* the loss the executor's (the default): 10 B per logit in 3 kernels */
    double T = 16384, ce_f = 10.0 * 50257 * T / (0.8 * 3350e9), L = TSL_ROOFLINE_LAUNCH_S;
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &l, 16, 1, false, 50257),
               3.0 * tsl_roofline_gemm_s(&d, T, 50257, 1024, 1) + ce_f + 3 * L, 1e-12,
               "unaligned: 3 x the logits GEMM");
    double ce_p = 10.0 * 50304 * T / (0.8 * 3350e9);
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &l, 16, 1, false, 50304),
               tsl_roofline_gemm_s(&d, T, 50304, 1024, 1) + ce_p + 3 * L, 1e-12, "padded: aligned");
    CHECK(tsl_roofline_layer_wgrad_frac(&d, &l, 16, 1, false, 50257) > 0.3,
          "the slower dW stays the W pass's");
}

/* The LM loss's time as each stack runs it (loss_impl.h "The loss's time"): GPT-2's
 * head, s 1024, h 1024, V 50304, 16 samples (T = 16384 tokens) on an H100 (W = 0.8 ·
 * 3350 GB/s, 4 µs a launch). The logits GEMMs are the same whatever the loss, so the
 * loss's part is the pass's time less exec's, by hand from the bytes per logit and
 * kernels: forward exec 10 B / 3, torch 22 / 2, megatron 38 / 6, te 6 / 2,
 * torch-compile 4 / 1, fused-xentropy 4 / 1, composer 4 / 1, megatron-fused 22 / 3;
 * backward exec 6 / 1, torch 26 / 3, megatron 14 / 2, te 4 / 1, torch-compile 4 / 1,
 * fused-xentropy 4 / 1, composer 48 / 7 (fused-xentropy's and Composer's two train
 * metrics, since cost model 120), megatron-fused 18 / 2 (Megatron-core's compiled
 * fusion, cost model 186: megatron's steps fused, the softmax cloned). Under TP 2
 * each rank's V/2 logits, torch's as loss_parallel's eager ops: 38 / 6 and 38 / 5;
 * loss_unsplit (a script's autocast loss, PAPER) keeps ATen's 22 / 2 and 26 / 3 there.
 * Before cost model 119 every stack's was torch's 22 + 26 in 3 + 3 kernels. */
static void test_loss_time(void)
{
    tsl_roofline_dev_t d = shaped_dev("H100-80G", 989e12 * 0.777, 989e12, 3350e9);
    CHECK(d.loss_impl == TSL_LOSS_EXEC && !d.loss_unsplit, "init: the executor's loss");
    tsl_layer_t l = head_layer(1024, 1024, 50304);
    const double W = 0.8 * 3350e9, L = TSL_ROOFLINE_LAUNCH_S, logits = 16384.0 * 50304;
    const double fwd_b[] = {10, 22, 38, 6, 4, 4, 4, 22}, bwd_b[] = {6, 26, 14, 4, 4, 4, 48, 18};
    const double fwd_k[] = {3, 2, 6, 2, 1, 1, 1, 3}, bwd_k[] = {1, 3, 2, 1, 1, 1, 7, 2};
    double f0 = tsl_roofline_layer_fwd_s(&d, &l, 16, 1, false, 50304);
    double b0 = tsl_roofline_layer_bwd_s(&d, &l, 16, 1, false, 50304);
    for (uint32_t i = 0; i < TSL_LOSS_IMPL_COUNT; i++) {
        d.loss_impl = i;
        double f = tsl_roofline_layer_fwd_s(&d, &l, 16, 1, false, 50304) - f0;
        double b = tsl_roofline_layer_bwd_s(&d, &l, 16, 1, false, 50304) - b0;
        double fe = (fwd_b[i] - 10) * logits / W + (fwd_k[i] - 3) * L;
        double be = (bwd_b[i] - 6) * logits / W + (bwd_k[i] - 1) * L;
        CHECK(fabs(f - fe) <= 1e-9 * f0 && fabs(b - be) <= 1e-9 * b0,
              "%s: forward %+.6g s over exec's (by hand %+.6g), backward %+.6g (%+.6g)",
              tsl_loss_impl_name(i), f, fe, b, be);
    }
    /* exec's own, absolute: the forward's 10 B over 824 M logits, 3.075 ms + 12 µs */
    CHECK(fabs(tsl_loss_traffic_bytes(TSL_LOSS_EXEC, 1, false) * logits / W + 3 * L - 3.0873e-3) <
              1e-6,
          "exec forward by hand");
    /* TP 2: each rank V/2 logits; torch's loss_parallel, and ATen's when unsplit */
    d.loss_impl = TSL_LOSS_EXEC;
    double f2 = tsl_roofline_layer_fwd_s(&d, &l, 16, 2, false, 50304);
    double b2 = tsl_roofline_layer_bwd_s(&d, &l, 16, 2, false, 50304);
    d.loss_impl = TSL_LOSS_TORCH;
    double ft = tsl_roofline_layer_fwd_s(&d, &l, 16, 2, false, 50304) - f2;
    double bt = tsl_roofline_layer_bwd_s(&d, &l, 16, 2, false, 50304) - b2;
    CHECK_NEAR(ft, (38.0 - 10) * logits / 2 / W + 3 * L, 1e-9, "loss_parallel forward %g", ft);
    CHECK_NEAR(bt, (38.0 - 6) * logits / 2 / W + 4 * L, 1e-9, "loss_parallel backward %g", bt);
    d.loss_unsplit = true;
    ft = tsl_roofline_layer_fwd_s(&d, &l, 16, 2, false, 50304) - f2;
    bt = tsl_roofline_layer_bwd_s(&d, &l, 16, 2, false, 50304) - b2;
    CHECK_NEAR(ft, (22.0 - 10) * logits / 2 / W - L, 1e-9, "unsplit forward %g", ft);
    CHECK_NEAR(bt, (26.0 - 6) * logits / 2 / W + 2 * L, 1e-9, "unsplit backward %g", bt);
    /* out of range: exec's */
    CHECK(tsl_loss_traffic_bytes(99, 1, true) == 6.0 && tsl_loss_kernels(99, 1, false) == 3,
          "out of range: exec's");
}

/* Cost model 120: Composer's train metrics (loss_impl composer; loss_impl.h). MPT-125M's
 * head as llm-foundry's A100 40GB table ran it at 2K on 8 GPUs: 26 samples of 2048
 * tokens (T = 53248), h 768, V 50368 (2.682e9 logits), A100-40G (W = 0.8 · 1555 GB/s,
 * 4 µs a launch). After each micro-batch's backward Composer runs LanguageCrossEntropy
 * and LanguagePerplexity, each torch's cross-entropy forward over the bf16 logits under
 * autocast (the cast and log_softmax, 22 B per logit, and nll_loss: 3 kernels): the
 * backward is 2 × 22 · 2.682e9 / 1.244e12 = 94.86 ms + 6 launches over fused-xentropy's,
 * the forward the same. By hand: 44 · 53248 · 50368 / 1244e9 = 0.0948617 s. */
static void test_composer_metrics(void)
{
    tsl_roofline_dev_t d = shaped_dev("A100-40G", 312e12 * 0.82, 312e12, 1555e9);
    tsl_layer_t l = head_layer(2048, 768, 50368);
    d.loss_impl = TSL_LOSS_FUSED_XENTROPY;
    double f0 = tsl_roofline_layer_fwd_s(&d, &l, 26, 1, false, 50368);
    double b0 = tsl_roofline_layer_bwd_s(&d, &l, 26, 1, false, 50368);
    d.loss_impl = TSL_LOSS_COMPOSER;
    double f = tsl_roofline_layer_fwd_s(&d, &l, 26, 1, false, 50368);
    double b = tsl_roofline_layer_bwd_s(&d, &l, 26, 1, false, 50368);
    CHECK(f == f0, "forward as fused-xentropy's: %.9g s against %.9g", f, f0);
    CHECK_NEAR(b - b0, 0.0948617 + 6 * TSL_ROOFLINE_LAUNCH_S, 1e-5,
               "the two metrics' cross-entropy: %.7g s", b - b0);
    /* a third of the head's backward: the logits' two GEMMs are ~0.1 s more */
    CHECK(b - b0 > 0.25 * b0, "metrics %.4g s of a %.4g s backward", b - b0, b);
}

/* Issue 22: a GEMM on the H200 priced at its built-in figures, by hand. H200:
 * 989e12 peak, e_max 0.695 (the sustained clock's, cost model 137), 132 SMs, 4800 GB/s:
 * k_half = 0.705 · 989e12 / 4800e9 = 145.259375. 4096³: 32·32 = 1024 tiles ≥ 132 SMs,
 * depth 4096/4241.259375 = 0.965751; 2·4096³ / (989e12 · 0.695 · 0.965751) = 207.044
 * µs, above the 26.2 µs its 96 MiB take at 0.8 · 4800 GB/s, + the 4 µs launch = 211.044
 * µs. 1024³: 64 tiles, occupancy 64/132, depth 1024/1169.259: u = 0.424615,
 * 2·1024³ / (687.355e12 · u) + 4 µs = 11.358 µs. */
/* Cost model 130: a GPU with a published sustained matmul rate (ml-engineering's MSMF,
 * branch fast-mamf 082816f: the best rate a GEMM holds over 2 s at the power limit) is
 * priced at it through the table's x 0.97 rule, so its curve prices the MSMF shape a few
 * per cent below the measurement, never above it: H200 bf16 708.5 at 8192 x 8448 x
 * 20480 and FP8 1288.7 at 8448 x 8192 x 16384, B200 1456.3 at 9472 x 8192 x 20480 and
 * 2795.7 at 9472 x 8192 x 16384 (the FP8 GEMM at its own tile cost, bf16 output). The
 * burst figures of 129 priced the H200's shapes 7.5 % and 7.6 % above (762, 1387). Every
 * GH100 part (H100 SXM, its 96 GB variant, H200, H800) takes the H200's figures: the same
 * die, SMs and 700 W limit. */
static void test_sustained_msmf(void)
{
    static const struct {
        const char *gpu;
        bool fp8;
        double m, n, k, msmf_tflops;
    } rows[] = {{"H200", false, 8192, 8448, 20480, 708.5},
                {"H200", true, 8448, 8192, 16384, 1288.7},
                {"B200", false, 9472, 8192, 20480, 1456.3},
                {"B200", true, 9472, 8192, 16384, 2795.7}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const tsl_gpu_spec_t *g = tsl_gpu_find(rows[i].gpu);
        CHECK(g != NULL, "%s built in", rows[i].gpu);
        if (g == NULL)
            continue;
        tsl_gemm_eff_t e;
        tsl_gemm_eff_for_gpu(&e, g->name, g->peak_flops, g->mem_bw);
        double bf16 = g->peak_flops * g->efficiency, f8 = tsl_gpu_fp8_flops(g);
        double rate = rows[i].fp8
                          ? f8 * tsl_gemm_eff_shape_tc(&e, rows[i].m, rows[i].n, rows[i].k, 1,
                                                       tsl_gemm_tile_cost(f8 / bf16, 2))
                          : bf16 * tsl_gemm_eff_shape(&e, rows[i].m, rows[i].n, rows[i].k, 1);
        double q = rate / (rows[i].msmf_tflops * 1e12);
        CHECK(q > 0.94 && q <= 1.0,
              "%s %s at its MSMF shape: %.1f TFLOP/s, %.3f of the published %g", g->name,
              rows[i].fp8 ? "FP8" : "bf16", rate / 1e12, q, rows[i].msmf_tflops);
    }
    const tsl_gpu_spec_t *h200 = tsl_gpu_find("H200");
    static const char *const gh100[] = {"H100-80G", "H800-80G"};
    for (size_t i = 0; h200 != NULL && i < sizeof gh100 / sizeof gh100[0]; i++) {
        const tsl_gpu_spec_t *g = tsl_gpu_find(gh100[i]);
        CHECK(g != NULL && g->efficiency == h200->efficiency &&
                  tsl_gpu_fp8_flops(g) == tsl_gpu_fp8_flops(h200),
              "%s: the H200's sustained e_max (one figure per GH100 part at 700 W)", gh100[i]);
    }
}

/* Cost model 143: the 500 W H100-96G (Grand Teton) at its cap — the 700 W GH100 figures
 * times what a training step on the HBM2e H100 keeps at 500 W (Mayr et al. 2026, Table 4:
 * 27705.3 / 30271.0 tokens/s), GEMMs bf16 and FP8 and the attention core alike; the
 * 700 W parts untouched. */
static void test_h100_96g_cap(void)
{
    const double r = TSL_GH100_500W_SETTLED;
    CHECK_NEAR(r, 0.9152, 1e-4, "the 500 W step ratio %.5f", r);
    const tsl_gpu_spec_t *h96 = tsl_gpu_find("H100-96G"), *h80 = tsl_gpu_find("H100-80G");
    CHECK(h96 != NULL && h80 != NULL, "both H100s built in");
    if (h96 == NULL || h80 == NULL)
        return;
    CHECK(h80->efficiency == 0.695, "the 700 W H100 keeps 0.695 (%.4f)", h80->efficiency);
    CHECK_NEAR(h96->efficiency, 0.695 * r, 1e-12, "H100-96G bf16 e_max %.4f", h96->efficiency);
    CHECK_NEAR(tsl_gpu_fp8_flops(h96), tsl_gpu_fp8_flops(h80) * r, 1e-12, "H100-96G FP8 %.4g",
               tsl_gpu_fp8_flops(h96));
    CHECK(strstr(h96->source, "arXiv:2603.16164") != NULL, "the cap's figure is cited");
    tsl_gemm_eff_t e96, e80;
    tsl_gemm_eff_for_gpu(&e96, h96->name, h96->peak_flops, h96->mem_bw);
    tsl_gemm_eff_for_gpu(&e80, h80->name, h80->peak_flops, h80->mem_bw);
    CHECK(e96.sms == 132 && e96.attn_kernel_ampere == false, "H100-96G: Hopper's SMs and tables");
    CHECK_NEAR(e96.attn_fwd_flops, e80.attn_fwd_flops * r, 1e-12, "attention forward %.4g",
               e96.attn_fwd_flops);
    CHECK_NEAR(e96.attn_bwd_flops, e80.attn_bwd_flops * r, 1e-12, "attention backward %.4g",
               e96.attn_bwd_flops);
    CHECK_NEAR(e96.attn_kernel_peak, 989e12 * r, 1e-12, "the named kernels' shares at the cap %.4g",
               e96.attn_kernel_peak);
    CHECK(e80.attn_kernel_peak == 989e12, "the 700 W H100's kernel tables unscaled");
    /* cost model 188: flash2 holds its burst clock at 700 W, not under the 500 W cap */
    CHECK(e96.attn_power_capped && !e80.attn_power_capped, "the 500 W part is capped");
    tsl_roofline_dev_t d96, d80;
    tsl_roofline_dev_init(&d96, h96->peak_flops * h96->efficiency, h96->mem_bw);
    tsl_roofline_dev_init(&d80, h80->peak_flops * h80->efficiency, h80->mem_bw);
    d96.shape = e96;
    d80.shape = e80;
    d96.attn_kernel = d80.attn_kernel = TSL_ATTN_KERNEL_FLASH2;
    tsl_layer_t l = llama70b_layer();
    double f96 = tsl_roofline_core_fwd_s(&d96, &l, 1, 2) - TSL_ROOFLINE_LAUNCH_S;
    double f80 = tsl_roofline_core_fwd_s(&d80, &l, 1, 2) - TSL_ROOFLINE_LAUNCH_S;
    CHECK_NEAR(f96 * r * TSL_ATTN_GH100_SETTLED, f80, 1e-12,
               "flash2 forward: 700 W %.2f us, 500 W %.2f us (cap x settled clock)", f80 * 1e6,
               f96 * 1e6);
    d96.attn_kernel = d80.attn_kernel = TSL_ATTN_KERNEL_CUDNN;
    f96 = tsl_roofline_core_fwd_s(&d96, &l, 1, 2) - TSL_ROOFLINE_LAUNCH_S;
    f80 = tsl_roofline_core_fwd_s(&d80, &l, 1, 2) - TSL_ROOFLINE_LAUNCH_S;
    CHECK_NEAR(f96 * r, f80, 1e-12, "cudnn forward: the cap alone (%.2f, %.2f us)", f80 * 1e6,
               f96 * 1e6);
}

/* Who runs the recipe (fp8_impl.h): names both ways; torchao runs tensorwise and
 * mxfp8, not TE's delayed or blockwise (the field named); TE's current scaling
 * has three kernels per cast, two where the norm took the amax (2 B less). */
static void test_fp8_impl(void)
{
    tsl_err_t err = {0};
    CHECK(tsl_fp8_impl_parse("te") == TSL_FP8_IMPL_TE &&
              tsl_fp8_impl_parse("torchao") == TSL_FP8_IMPL_TORCHAO &&
              tsl_fp8_impl_parse("TE") == -1 && tsl_fp8_impl_parse(NULL) == -1 &&
              strcmp(tsl_fp8_impl_name(TSL_FP8_IMPL_TORCHAO), "torchao") == 0 &&
              tsl_fp8_impl_name(2) == NULL,
          "fp8_impl names");
    CHECK(tsl_fp8_impl_ok(TSL_FP8_TENSORWISE, TSL_FP8_IMPL_TORCHAO, &err) == 0 &&
              tsl_fp8_impl_ok(TSL_FP8_MXFP8, TSL_FP8_IMPL_TORCHAO, &err) == 0 &&
              tsl_fp8_impl_ok(TSL_FP8_BLOCKWISE, TSL_FP8_IMPL_TE, &err) == 0,
          "%s", err.msg);
    CHECK(tsl_fp8_impl_ok(TSL_FP8_BLOCKWISE, TSL_FP8_IMPL_TORCHAO, &err) != 0 &&
              strstr(err.msg, "fp8_impl") && strstr(err.msg, "blockwise"),
          "torchao blockwise refused: %s", err.msg);
    CHECK(tsl_fp8_impl_ok(TSL_FP8_DELAYED, 7, &err) != 0 && strstr(err.msg, "fp8_impl: 7"),
          "impl out of range: %s", err.msg);
    CHECK(tsl_fp8_impl_zero_amax_kernels(TSL_FP8_TENSORWISE, TSL_FP8_IMPL_TE) == 1 &&
              tsl_fp8_impl_zero_amax_kernels(TSL_FP8_TENSORWISE, TSL_FP8_IMPL_TORCHAO) == 0 &&
              tsl_fp8_impl_zero_amax_kernels(TSL_FP8_MXFP8, TSL_FP8_IMPL_TE) == 0 &&
              tsl_fp8_impl_amax_reduced(TSL_FP8_TENSORWISE, TSL_FP8_IMPL_TE) &&
              !tsl_fp8_impl_amax_reduced(TSL_FP8_DELAYED, TSL_FP8_IMPL_TE) &&
              !tsl_fp8_impl_amax_reduced(TSL_FP8_TENSORWISE, TSL_FP8_IMPL_TORCHAO),
          "TE current scaling zeroes its amax, and reduces it under SP (cost model 163)");
    CHECK(tsl_fp8_impl_scale_kernels(TSL_FP8_TENSORWISE, TSL_FP8_IMPL_TE) == 1 &&
              tsl_fp8_impl_scale_kernels(TSL_FP8_TENSORWISE, TSL_FP8_IMPL_TORCHAO) == 0 &&
              tsl_fp8_impl_scale_kernels(TSL_FP8_DELAYED, TSL_FP8_IMPL_TE) == 0 &&
              tsl_fp8_impl_fused_amax_bytes(TSL_FP8_TENSORWISE, TSL_FP8_IMPL_TE) == 2.0 &&
              tsl_fp8_impl_fused_amax_bytes(TSL_FP8_TENSORWISE, TSL_FP8_IMPL_TORCHAO) == 0.0 &&
              tsl_fp8_impl_caches(TSL_FP8_IMPL_TE) && !tsl_fp8_impl_caches(TSL_FP8_IMPL_TORCHAO),
          "TE current scaling's kernels");
    /* Blackwell (any FP8 layout): TE's per-tensor casts write one copy. On a device of
     * W = 1e12 B/s and L = 4 us, 1e9 elements: tensorwise 5 B -> 5 ms + 4 L (zero-amax,
     * amax, scale, cast; after its norm 3 B, 3 kernels: cost model 163), delayed 3 B + L; mxfp8 4 + 2/32 B + L either way;
     * torchao's tensorwise 6 B + 2 L (it casts its own) */
    CHECK(tsl_fp8_one_copy(TSL_FP8_TENSORWISE, TSL_FP8_IMPL_TE, true) &&
              tsl_fp8_one_copy(TSL_FP8_DELAYED, TSL_FP8_IMPL_TE, true) &&
              !tsl_fp8_one_copy(TSL_FP8_TENSORWISE, TSL_FP8_IMPL_TE, false) &&
              !tsl_fp8_one_copy(TSL_FP8_MXFP8, TSL_FP8_IMPL_TE, true) &&
              !tsl_fp8_one_copy(TSL_FP8_BLOCKWISE, TSL_FP8_IMPL_TE, true) &&
              !tsl_fp8_one_copy(TSL_FP8_NVFP4, TSL_FP8_IMPL_TE, true) &&
              !tsl_fp8_one_copy(TSL_FP8_TENSORWISE, TSL_FP8_IMPL_TORCHAO, true),
          "one FP8 copy: TE's per-tensor recipes where the GEMMs take any layout");
    tsl_roofline_dev_t bw;
    tsl_roofline_dev_init(&bw, 1e15, 1e12 / TSL_ROOFLINE_MEM_EFF);
    bw.fp8_any_layout = true;
    const double L = bw.launch_s, E = 1e9;
    bw.fp8 = TSL_FP8_TENSORWISE;
    CHECK_NEAR(tsl_roofline_fp8_cast_s(&bw, E, false, NULL), 5e-3 + 4 * L, 1e-12, "CS 5 B");
    CHECK_NEAR(tsl_roofline_fp8_cast_s(&bw, E, true, NULL), 3e-3 + 3 * L, 1e-12, "normed 3 B");
    bw.fp8_any_layout = false;
    CHECK_NEAR(tsl_roofline_fp8_cast_s(&bw, E, false, NULL), 6e-3 + 4 * L, 1e-12, "TN: 6 B");
    bw.fp8_any_layout = true;
    bw.fp8 = TSL_FP8_DELAYED;
    CHECK_NEAR(tsl_roofline_fp8_cast_s(&bw, E, false, NULL), 3e-3 + L, 1e-12, "delayed 3 B");
    bw.fp8 = TSL_FP8_MXFP8;
    CHECK_NEAR(tsl_roofline_fp8_cast_s(&bw, E, false, NULL), (4 + 2.0 / 32) * MXR * 1e-3 + L, 1e-12,
               "mxfp8 both copies, at TE's quantize rate");
    bw.fp8 = TSL_FP8_TENSORWISE;
    bw.fp8_impl = TSL_FP8_IMPL_TORCHAO;
    CHECK_NEAR(tsl_roofline_fp8_cast_s(&bw, E, false, NULL), 6e-3 + 2 * L, 1e-12, "torchao 6 B");
    /* torchao's weight casts and input recasts (cost model 141): tensorwise 5 B in 2
     * kernels forward, 3 B in 1 backward, the input cast once; MX none here (the
     * recipe's whole cast each way, test_fp8_layer) and the input again; TE none
     * (its copies are the step's) */
    uint32_t kf = 0, kb = 0, kte = 9;
    CHECK(tsl_fp8_impl_weight_cast_bytes(TSL_FP8_TENSORWISE, TSL_FP8_IMPL_TORCHAO, false, &kf) ==
                  5.0 &&
              kf == 2 &&
              tsl_fp8_impl_weight_cast_bytes(TSL_FP8_TENSORWISE, TSL_FP8_IMPL_TORCHAO, true, &kb) ==
                  3.0 &&
              kb == 1 &&
              tsl_fp8_impl_weight_cast_bytes(TSL_FP8_MXFP8, TSL_FP8_IMPL_TORCHAO, true, NULL) ==
                  0.0 &&
              tsl_fp8_impl_weight_cast_bytes(TSL_FP8_TENSORWISE, TSL_FP8_IMPL_TE, false, &kte) ==
                  0.0 &&
              kte == 0,
          "weight casts per use: %u %u %u", kf, kb, kte);
    CHECK(!tsl_fp8_impl_recasts_input(TSL_FP8_TENSORWISE, TSL_FP8_IMPL_TORCHAO) &&
              tsl_fp8_impl_recasts_input(TSL_FP8_MXFP8, TSL_FP8_IMPL_TORCHAO) &&
              !tsl_fp8_impl_recasts_input(TSL_FP8_TENSORWISE, TSL_FP8_IMPL_TE),
          "the input cast again in the backward: torchao's MX linear alone");
    /* SP all-gathers of FP8 linears (fp8_impl.h), the table by hand */
    const struct fp8_sp_gather_bytes *g = fp8_sp_gather_bytes;
    for (size_t i = 0; i < sizeof(fp8_sp_gather_bytes) / sizeof(g[0]); i++)
        CHECK(tsl_fp8_impl_sp_gather_bytes(g[i].r, g[i].impl, false) == g[i].in &&
                  tsl_fp8_impl_sp_gather_bytes(g[i].r, g[i].impl, true) == g[i].dy,
              "SP gather bytes of %s under %s: %g, %g", tsl_fp8_recipe_name(g[i].r),
              tsl_fp8_impl_name(g[i].impl), tsl_fp8_impl_sp_gather_bytes(g[i].r, g[i].impl, false),
              tsl_fp8_impl_sp_gather_bytes(g[i].r, g[i].impl, true));
}

/* One FP8 FFN layer on the H100 by hand (docs/cost-model.md "FP8"): the two
 * linears at the FP8 rate on 1-byte operands, each input quantised by a cast
 * kernel of 4 bytes per element (delayed scaling: read bf16, write the rowwise
 * and columnwise FP8 copies; the weights' copies are cast once per iteration, in
 * the step), the activation in bf16; the backward casts dY and runs dgrad and
 * wgrad in FP8. Tensorwise under TE (current scaling, fp8_impl.h) adds an amax
 * kernel and a scale kernel to each cast (6 B, 3 kernels), but FFN-in's input has
 * its amax from the norm (4 B, 2 kernels). Tensorwise under torchao adds its amax
 * pass (6 B, 2 kernels), casts the weights per use (5 B forward, 3 B backward) and
 * X once; its MX linear casts X and W again in the backward. A width not a multiple of 16 stays bf16. No shape curve (u = 1), no
 * host floor. */
static void test_fp8_layer(void)
{
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, 989e12 * 0.777, 3350e9);
    tsl_roofline_dev_t b16 = d;
    d.fp8_flops = 1979e12 * 0.777;
    d.fp8 = TSL_FP8_DELAYED;
    tsl_layer_t l = ffn_4k();
    const double S = 2, T = S * 2048, h = 4096, f = 16384, W = d.mem_bw, L = d.launch_s;
    const double F8 = d.fp8_flops;
#define G8(m, n, k)                                                                                \
    (fmax(2.0 * (m) * (n) * (k) / F8, ((m) * (k) + (k) * (n) + 2.0 * (m) * (n)) / W) + L)
#define CAST(e, bytes, kern) ((bytes) * (e) / W + (kern)*L)
    double act = 2.0 * 2.0 * f * T / W + L;  /* GELU: read, write bf16 */
    double blk = 10.0 * h * T / W + 2.0 * L; /* norm + residual, no dropout */
    /* the weights' casts are TE's once per iteration (cost.c), not here */
    double fwd = CAST(T * h, 4, 1) + G8(T, f, h) + act + CAST(T * f, 4, 1) + G8(T, h, f) + blk;
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &l, S, 1, false, 0), fwd, 1e-12, "fp8 forward");
    /* the GEMMs are compute-bound: 2·T·f·h FLOPs at twice the bf16 rate */
    CHECK(G8(T, f, h) - L == 2.0 * T * f * h / F8, "compute-bound at F8");
    double bwd = CAST(T * f, 4, 1) + G8(T, h, f) + G8(h, f, T) + 1.5 * (act - L) + L +
                 CAST(T * h, 4, 1) + G8(T, f, h) + G8(f, h, T) + 1.5 * (blk - 2 * L) + 3 * L;
    /* 3 kernels backward: the norm's elementwise kernel and its dγ/dβ finalize (TE
     * rmsnorm_bwd / layernorm_bwd, cost model 178), the residual's */
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&d, &l, S, 1, false, 0), bwd, 1e-12, "fp8 backward");
    double f16 = tsl_roofline_layer_fwd_s(&b16, &l, S, 1, false, 0);
    CHECK(fwd < 0.8 * f16, "fp8 pays on a large layer: %.6g vs bf16 %.6g", fwd, f16);
    /* TE tensorwise: FFN-in's cast a zero-amax and a scale kernel more (its amax from
     * the norm), FFN-out's and both dY casts an amax read and three kernels more
     * (zero-amax, amax, scale: cost model 163, 1 and 2 before) */
    d.fp8 = TSL_FP8_TENSORWISE;
    double te = fwd + CAST(T * h, 0, 2) + CAST(T * f, 2, 3);
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &l, S, 1, false, 0), te, 1e-12,
               "TE tensorwise forward");
    double teb = bwd + CAST(T * f, 2, 3) + CAST(T * h, 2, 3);
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&d, &l, S, 1, false, 0), teb, 1e-12,
               "TE tensorwise backward");
    /* ... but no host op more for the zero-amax kernel (C++ launches it inside the
     * amax's call: cost model 163): at one second an op, against delayed scaling's
     * one kernel a cast, FFN-in's normed cast 1 op more (scale), FFN-out's 2 (amax,
     * scale), each dY's 2 */
    tsl_roofline_dev_t hcs = d, hdl = d;
    hcs.host_op_s = hdl.host_op_s = 1.0;
    hdl.fp8 = TSL_FP8_DELAYED;
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&hcs, &l, S, 1, false, 0) -
                   tsl_roofline_layer_fwd_s(&hdl, &l, S, 1, false, 0),
               3.0, 1e-9, "TE tensorwise: 3 host ops more forward, %g",
               tsl_roofline_layer_fwd_s(&hcs, &l, S, 1, false, 0) -
                   tsl_roofline_layer_fwd_s(&hdl, &l, S, 1, false, 0));
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&hcs, &l, S, 1, false, 0) -
                   tsl_roofline_layer_bwd_s(&hdl, &l, S, 1, false, 0),
               4.0, 1e-9, "TE tensorwise: 4 host ops more backward, %g",
               tsl_roofline_layer_bwd_s(&hcs, &l, S, 1, false, 0) -
                   tsl_roofline_layer_bwd_s(&hdl, &l, S, 1, false, 0));
    /* torchao tensorwise, compiled (cost model 141): each input cast once (amax, then
     * one kernel writing both copies: 6 B, 2 kernels), each weight's amax and rowwise
     * cast forward (5 B, 2 kernels) and its columnwise cast backward with the kept
     * scale (3 B, 1 kernel); X is not cast again (until 138: X and W 6 B each way) */
    d.fp8_impl = TSL_FP8_IMPL_TORCHAO;
    double tw = CAST(T * h, 6, 2) + CAST(h * f, 5, 2) + G8(T, f, h) + act + CAST(T * f, 6, 2) +
                CAST(f * h, 5, 2) + G8(T, h, f) + blk;
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &l, S, 1, false, 0), tw, 1e-12, "tensorwise forward");
    double twb = bwd + CAST(T * f, 2, 1) + CAST(T * h, 2, 1) + 2 * CAST(h * f, 3, 1);
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&d, &l, S, 1, false, 0), twb, 1e-12, "tensorwise backward");
    /* torchao's MX linear keeps the bf16 input and weight and casts both again in the
     * backward (mx_mm): the recipe's whole cast each way, 4 + 2/32 B and a kernel */
    d.fp8 = TSL_FP8_MXFP8;
    d.fp8_impl = TSL_FP8_IMPL_TE;
    const double mx = 4.0 + 2.0 / 32.0;
    double te_mx = tsl_roofline_layer_bwd_s(&d, &l, S, 1, false, 0);
    d.fp8_impl = TSL_FP8_IMPL_TORCHAO;
    /* ... and its dY casts (T·h + T·f) at the streaming rate, TE's at MXR (cost model 189) */
    double dy_te = mx * (MXR - 1.0) * (T * h + T * f) / W;
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&d, &l, S, 1, false, 0),
               te_mx - dy_te + CAST(T * h, mx, 1) + CAST(T * f, mx, 1) + 2 * CAST(h * f, mx, 1),
               1e-12, "torchao mxfp8 backward: X and W cast again");
    d.fp8 = TSL_FP8_TENSORWISE;
    /* what stays bf16: a width not a multiple of 16, the LM head */
    d.fp8 = TSL_FP8_DELAYED;
    d.fp8_impl = TSL_FP8_IMPL_TE;
    tsl_err_t err = {0};
    tsl_layer_t odd = l;
    odd.hidden = 4104;
    CHECK(tsl_layer_derive(&odd, &err) == 0, "%s", err.msg);
    CHECK(tsl_roofline_layer_fwd_s(&d, &odd, S, 1, false, 0) ==
              tsl_roofline_layer_fwd_s(&b16, &odd, S, 1, false, 0),
          "h 4104 (not a multiple of 16): bf16");
    tsl_layer_t head = {.kind = TSL_LAYER_HEAD, .seq_len = 2048, .hidden = 4096, .vocab = 32000};
    CHECK(tsl_layer_derive(&head, &err) == 0, "%s", err.msg);
    CHECK(tsl_roofline_layer_fwd_s(&d, &head, S, 1, false, 32000) ==
              tsl_roofline_layer_fwd_s(&b16, &head, S, 1, false, 32000),
          "the LM head stays bf16");
    /* the elements the memory terms use: weights, stashes (cost.c) */
    double w8, repl, shard;
    tsl_roofline_fp8_elems(&l, 2, 0, &w8, &repl, &shard);
    CHECK(w8 == 2.0 * f * h / 2 && repl == 2048 * h && shard == 2048 * f / 2, "fp8 elems: %g %g %g",
          w8, repl, shard);
    CHECK(strcmp(tsl_fp8_recipe_name(TSL_FP8_MXFP8), "mxfp8") == 0 &&
              tsl_fp8_recipe_parse("blockwise") == TSL_FP8_BLOCKWISE &&
              tsl_fp8_recipe_parse("bf16") == 0 && tsl_fp8_recipe_parse("fp4") == -1,
          "recipe names");
#undef G8
#undef CAST
}

/* NVFP4 (docs/cost-model.md "NVFP4"), one FFN layer on a GB200 at its built-in
 * figures, by hand. The rate: the FP4 peak 10000 TFLOPS (GB200 NVL72: 1440
 * PFLOPS sparse / 72 / 2) times the FP8 e_max 0.571 (no FP4 figure published),
 * 2x the FP8 rate. The quantise kernels of TE's NVFP4Quantizer: an amax pass
 * (read bf16: 2 B) and the cast (read 2 B, write a rowwise and a columnwise E2M1
 * copy of 0.5 B + one E4M3 scale per 16 = 0.5625 B each): 2 + 2 + 2 · 0.5625 =
 * 5.125 B per element, 2 kernels per tensor. The GEMMs at F4 on 0.5625-byte
 * operands, bf16 output; the weights' copies are cast once per iteration (the
 * step, cost.c). No shape curve (u = 1), no host floor. */
static void test_nvfp4_layer(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "1x4xGB200-186G", &err) == 0, "%s", err.msg);
    const tsl_gpu_spec_t *g = tsl_cluster_device_gpu(&c, 0);
    CHECK(g->fp4_peak_flops == 10000e12 && g->fp4_peak_flops == 2.0 * g->fp8_peak_flops,
          "GB200 FP4 dense peak 10 PFLOPS = 2 x its FP8: %g", g->fp4_peak_flops);
    CHECK_NEAR(tsl_gpu_fp4_flops(g), 10000e12 * 0.571, 1e-12, "FP4 rate: peak x the FP8 e_max");
    CHECK_NEAR(tsl_gpu_fp4_flops(g), 2.0 * tsl_gpu_fp8_flops(g), 1e-12, "twice the FP8 rate");
    tsl_cluster_free(&c);
    CHECK(tsl_cluster_parse_spec(&c, "1x8xB200-180G", &err) == 0, "%s", err.msg);
    g = tsl_cluster_device_gpu(&c, 0);
    CHECK(g->fp4_peak_flops == 9000e12, "B200 FP4 dense 9 PFLOPS (HGX B200 144 sparse / 8 / 2)");
    tsl_cluster_free(&c);
    CHECK(tsl_cluster_parse_spec(&c, "1x8xH100-80G", &err) == 0, "%s", err.msg);
    g = tsl_cluster_device_gpu(&c, 0);
    CHECK(g->fp4_peak_flops == 0 && tsl_gpu_fp4_flops(g) == 0, "H100: no FP4 tensor cores");
    tsl_cluster_free(&c);

    CHECK(tsl_fp8_cast_bytes(TSL_FP8_NVFP4) == 5.125 && tsl_fp8_cast_kernels(TSL_FP8_NVFP4) == 2 &&
              tsl_fp8_copy_bytes(TSL_FP8_NVFP4) == 0.5625 &&
              tsl_fp8_data_bytes(TSL_FP8_NVFP4) == 0.5,
          "nvfp4 bytes: cast 2 + 2 + 2 x (0.5 + 1/16), copy 0.5625, payload 0.5");
    CHECK(tsl_fp8_copy_bytes(TSL_FP8_MXFP8) == 1 && tsl_fp8_data_bytes(TSL_FP8_DELAYED) == 1,
          "FP8 copies: 1 byte");
    CHECK(strcmp(tsl_fp8_recipe_name(TSL_FP8_NVFP4), "nvfp4") == 0 &&
              tsl_fp8_recipe_parse("nvfp4") == TSL_FP8_NVFP4 && tsl_fp8_recipe_name(6) == NULL,
          "recipe name nvfp4 = 5");

    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, 2500e12 * 0.581, 8000e9);
    d.fp8_flops = 10000e12 * 0.571;
    d.fp8 = TSL_FP8_NVFP4;
    tsl_layer_t l = ffn_4k();
    const double S = 2, T = S * 2048, h = 4096, f = 16384, W = d.mem_bw, L = d.launch_s;
    const double F4 = d.fp8_flops, q = 0.5625;
#define G4(m, n, k)                                                                                \
    (fmax(2.0 * (m) * (n) * (k) / F4, (((m) * (k) + (k) * (n)) * q + 2.0 * (m) * (n)) / W) + L)
#define CAST(e) (5.125 * (e) / W + 2 * L)
    double act = 2.0 * 2.0 * f * T / W + L;  /* GELU: read, write bf16 */
    double blk = 10.0 * h * T / W + 2.0 * L; /* norm + residual, no dropout */
    double fwd = CAST(T * h) + G4(T, f, h) + act + CAST(T * f) + G4(T, h, f) + blk;
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &l, S, 1, false, 0), fwd, 1e-12, "nvfp4 forward");
    CHECK(G4(T, f, h) - L == 2.0 * T * f * h / F4, "compute-bound at F4");
    /* backward: cast dY (Hadamard amax pass + cast), dgrad and wgrad in FP4 */
    double bwd = CAST(T * f) + G4(T, h, f) + G4(h, f, T) + 1.5 * (act - L) + L + CAST(T * h) +
                 G4(T, f, h) + G4(f, h, T) + 1.5 * (blk - 2 * L) + 3 * L; /* the norm's 2 */
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&d, &l, S, 1, false, 0), bwd, 1e-12, "nvfp4 backward");
    /* the same layer in MXFP8 at the FP8 rate: NVFP4's GEMMs take half the time,
     * its casts a little more (5.125 B and 2 kernels against 4.0625 B and 1) */
    tsl_roofline_dev_t m8 = d;
    m8.fp8_flops = 5000e12 * 0.571;
    m8.fp8 = TSL_FP8_MXFP8;
    double fm = tsl_roofline_layer_fwd_s(&m8, &l, S, 1, false, 0);
    CHECK(fwd < 0.75 * fm && fwd > 0.5 * fm, "nvfp4 %g against mxfp8 %g", fwd, fm);
#undef G4
#undef CAST
}

/* cuBLASLt's MXFP8 GEMM at TSL_MXFP8_GEMM_RATE of the per-tensor FP8 rate (cost model
 * 160, TE's GEMM profiling guide on a B300: 6.812 / 7.161 ms a layer): one FFN layer on
 * a GB200 by hand, its four FP8 GEMMs compute-bound at F8 x 0.951 and its casts as
 * before (4 + 2/32 B, one kernel); the same layer under current scaling keeps F8.
 * Which GEMMs take it: MXFP8 linears under either implementation and TE's grouped
 * linears; not torchao's scaled grouped mm, TE's fused grouped MLP (CuTeDSL), any
 * other recipe. */
static void test_mxfp8_gemm_rate(void)
{
    CHECK_NEAR(TSL_MXFP8_GEMM_RATE, 0.95126, 1e-5, "6.812 / 7.161");
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, 2500e12 * 0.581, 8000e9);
    d.fp8_flops = 5000e12 * 0.571;
    d.fp8 = TSL_FP8_MXFP8;
    CHECK(tsl_roofline_fp8_gemm_rate(&d, false) == TSL_MXFP8_GEMM_RATE &&
              tsl_roofline_fp8_gemm_rate(&d, true) == TSL_MXFP8_GEMM_RATE,
          "TE's MXFP8 linears and grouped linears: cuBLASLt");
    d.moe_fused_mlp = true;
    CHECK(tsl_roofline_fp8_gemm_rate(&d, true) == 1.0 &&
              tsl_roofline_fp8_gemm_rate(&d, false) == TSL_MXFP8_GEMM_RATE,
          "the fused grouped MLP's experts at F8, the dense linears not");
    d.moe_fused_mlp = false;
    d.fp8_impl = TSL_FP8_IMPL_TORCHAO;
    CHECK(tsl_roofline_fp8_gemm_rate(&d, false) == TSL_MXFP8_GEMM_RATE &&
              tsl_roofline_fp8_gemm_rate(&d, true) == 1.0,
          "torchao: torch._scaled_mm is cuBLASLt's, its scaled grouped mm not");
    d.fp8_impl = TSL_FP8_IMPL_TE;
    const uint32_t others[] = {TSL_FP8_NONE, TSL_FP8_DELAYED, TSL_FP8_TENSORWISE, TSL_FP8_BLOCKWISE,
                               TSL_FP8_NVFP4};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        tsl_roofline_dev_t o = d;
        o.fp8 = others[i];
        CHECK(tsl_roofline_fp8_gemm_rate(&o, false) == 1.0 &&
                  tsl_roofline_fp8_gemm_rate(&o, true) == 1.0,
              "recipe %u at F8", others[i]);
    }

    tsl_layer_t l = ffn_4k();
    const double S = 2, T = S * 2048, h = 4096, f = 16384, W = d.mem_bw, L = d.launch_s;
    const double F = d.fp8_flops * TSL_MXFP8_GEMM_RATE;
#define G8(m, n, k)                                                                                \
    (fmax(2.0 * (m) * (n) * (k) / F, ((m) * (k) + (k) * (n) + 2.0 * (m) * (n)) / W) + L)
    const double WC = W * TSL_MXFP8_CAST_MEM_EFF / TSL_ROOFLINE_MEM_EFF; /* TE's MX quantize */
#define CAST(e) ((4.0 + 2.0 / 32.0) * (e) / WC + L)
    double act = 2.0 * 2.0 * f * T / W + L;  /* GELU: read, write bf16 */
    double blk = 10.0 * h * T / W + 2.0 * L; /* norm + residual, no dropout */
    double fwd = CAST(T * h) + G8(T, f, h) + act + CAST(T * f) + G8(T, h, f) + blk;
    CHECK(G8(T, f, h) - L == 2.0 * T * f * h / F, "compute-bound at F8 x the MXFP8 rate");
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &l, S, 1, false, 0), fwd, 1e-12, "mxfp8 forward");
    /* current scaling on the same device: the GEMMs at F8 itself */
    tsl_roofline_dev_t cs = d;
    cs.fp8 = TSL_FP8_TENSORWISE;
    double gm = G8(T, f, h) + G8(T, h, f) - 2 * L; /* the two GEMMs' compute at F */
    double fcs = tsl_roofline_fp8_cast_s(&cs, T * h, true, NULL) +
                 tsl_roofline_fp8_cast_s(&cs, T * f, false, NULL) + gm * TSL_MXFP8_GEMM_RATE +
                 2 * L + act + blk;
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&cs, &l, S, 1, false, 0), fcs, 1e-12,
               "current scaling's GEMMs at F8");
#undef G8
#undef CAST
}

/* Transformer Engine's MXFP8 quantize at TSL_MXFP8_CAST_MEM_EFF of the datasheet
 * bandwidth (cost model 189: 5.21 TB/s of a B200's 8 writing both copies of a bf16
 * 8192 x 8192 tensor, ROCm/TransformerEngine PR #598; 5.07 with a dbias, TE PR #3137),
 * not the streaming TSL_ROOFLINE_MEM_EFF: by hand on a B200, both copies and their
 * scales (4 + 2/32 B an element, one kernel), the step's weight cast alike; torchao's MX
 * casts and current scaling keep the streaming rate; the columnwise copy that
 * save_original_input's forward leaves out is taken off at the quantize's rate. */
static void test_mxfp8_cast_rate(void)
{
    CHECK_NEAR(TSL_MXFP8_CAST_MEM_EFF, 0.65, 1e-12, "5.21 TB/s of 8");
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, 2250e12 * 0.628, 8000e9);
    d.fp8_flops = 4500e12 * 0.603;
    d.fp8 = TSL_FP8_MXFP8;
    const double E = 8192.0 * 8192.0, L = d.launch_s;
    uint32_t k = 0;
    double te = tsl_roofline_fp8_cast_s(&d, E, false, &k);
    CHECK_NEAR(te, (4.0 + 2.0 / 32.0) * E / (0.65 * 8000e9) + L, 1e-15,
               "TE: 4 + 2/32 B at 5.2 TB/s");
    CHECK(k == 1, "one kernel");
    CHECK(te - L > 50e-6 && te - L < 55e-6, "PR #598's 52.34 us: %g", te - L);
    tsl_roofline_dev_t ao = d;
    ao.fp8_impl = TSL_FP8_IMPL_TORCHAO;
    CHECK_NEAR(tsl_roofline_fp8_cast_s(&ao, E, false, NULL), (4.0 + 2.0 / 32.0) * E / d.mem_bw + L,
               1e-15, "torchao's MX cast at the streaming rate");
    CHECK(tsl_roofline_fp8_cast_s(&ao, E, false, NULL) < te, "TE's quantize the slower");
    tsl_roofline_dev_t cs = d;
    cs.fp8 = TSL_FP8_TENSORWISE;
    CHECK_NEAR(tsl_roofline_fp8_cast_s(&cs, E, false, NULL), 6.0 * E / d.mem_bw + 4 * L, 1e-15,
               "current scaling keeps the streaming rate");

    /* save_original_input on an MXFP8 encoder layer's output projection: the forward
     * writes the rowwise copy alone, (3 + 1/32) B at the quantize's rate */
    tsl_layer_t l = layer(2048, 4096, 32);
    tsl_roofline_dev_t on = d;
    on.proj_orig_input = true;
    double saved = tsl_roofline_layer_fwd_s(&d, &l, 1, 1, false, 0) -
                   tsl_roofline_layer_fwd_s(&on, &l, 1, 1, false, 0);
    CHECK_NEAR(saved, (1.0 + 1.0 / 32.0) * 2048.0 * 4096.0 / (0.65 * 8000e9), 1e-9,
               "the left-out copy at 0.65: %g", saved);
}

/* Nemotron 3 Nano's Mamba-2 mixer (h 2688, 64 heads of 64, 8 groups, state 128, conv
 * 4, chunks of 128) at 2,048 tokens, before tsl_layer_derive. */
static tsl_layer_t nano_mixer(void)
{
    return (tsl_layer_t){.kind = TSL_LAYER_MAMBA,
                         .seq_len = 2048,
                         .hidden = 2688,
                         .ssm_heads = 64,
                         .ssm_head_dim = 64,
                         .ssm_state = 128,
                         .ssm_groups = 8,
                         .ssm_conv = 4,
                         .ssm_chunk = 128};
}

/* The userbuffers blocks (tsl_roofline_layer_tp_gemms; cost.c "TP communication
 * overlap") of one GPT layer (s 2048, h 4096, f 4h, 32 heads), two samples, TP 4 with
 * SP, bf16 H100, flat curve: the self-attention block (QKV → projection) and the MLP
 * (FFN-in → FFN-out), each GEMM's time by gemm() over its pass's GPU time — forward
 * Y = X·W of (m × k)·(k × n), backward dX (m × n)·(n × k) and dW (k × m)·(m × n). An
 * FFN-only half has one block; the embedding none. */
static void test_tp_gemms(void)
{
    tsl_roofline_dev_t d = h100();
    tsl_layer_t l = layer(2048, 4096, 32);
    const double S = 2, T = S * 2048, h = 4096, f = 4 * 4096, t = 4;
#define G(m, n, k) tsl_roofline_gemm_s(&d, (m), (n), (k), 1)
    tsl_roofline_tp_gemms_t g;
    tsl_roofline_layer_tp_gemms(&d, &l, S, 4, true, 0, &g);
    double fwd = tsl_roofline_layer_fwd_s(&d, &l, S, 4, true, 0);
    double bwd = tsl_roofline_layer_bwd_s(&d, &l, S, 4, true, 0);
    CHECK(g.n == 2, "two blocks: %u", g.n);
    CHECK_NEAR(g.col_f[0] * fwd, G(T, 3 * h / t, h), 1e-12, "QKV forward");
    CHECK_NEAR(g.row_f[0] * fwd, G(T, h, h / t), 1e-12, "projection forward");
    CHECK_NEAR(g.col_f[1] * fwd, G(T, f / t, h), 1e-12, "FFN-in forward");
    CHECK_NEAR(g.row_f[1] * fwd, G(T, h, f / t), 1e-12, "FFN-out forward");
    CHECK_NEAR(g.col_dx[0] * bwd, G(T, h, 3 * h / t), 1e-12, "QKV dX");
    CHECK_NEAR(g.col_dw[0] * bwd, G(h, 3 * h / t, T), 1e-12, "QKV dW");
    CHECK_NEAR(g.row_dx[0] * bwd, G(T, h / t, h), 1e-12, "projection dX");
    CHECK_NEAR(g.col_dx[1] * bwd, G(T, h, f / t), 1e-12, "FFN-in dX");
    CHECK_NEAR(g.col_dw[1] * bwd, G(h, f / t, T), 1e-12, "FFN-in dW");
    CHECK_NEAR(g.row_dx[1] * bwd, G(T, f / t, h), 1e-12, "FFN-out dX");
    double dx, dw; /* the column-parallel shares are the blocks' summed */
    tsl_roofline_layer_col_frac(&d, &l, S, 4, true, 0, &dx, &dw);
    CHECK_NEAR(dx, g.col_dx[0] + g.col_dx[1], 1e-12, "col dX = the blocks'");
    CHECK_NEAR(dw, g.col_dw[0] + g.col_dw[1], 1e-12, "col dW = the blocks'");
    tsl_layer_t ffn = l,
                emb = {
                    .kind = TSL_LAYER_EMBEDDING, .seq_len = 2048, .hidden = 4096, .vocab = 32000};
    ffn.kind = TSL_LAYER_FFN;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&ffn, &err) == 0 && tsl_layer_derive(&emb, &err) == 0, "%s", err.msg);
    tsl_roofline_layer_tp_gemms(&d, &ffn, S, 4, true, 0, &g);
    CHECK(g.n == 1, "an FFN half: one block (%u)", g.n);
    tsl_roofline_layer_tp_gemms(&d, &emb, S, 4, true, 32000, &g);
    CHECK(g.n == 0, "the embedding: none (%u)", g.n);
    /* a Mamba-2 mixer (Nemotron 3 Nano's: h 2688, 64 heads of 64, 8 groups, state
     * 128): in_proj → out_proj is one block (MambaMixer's fc1/fc2 buffers), in_proj
     * (T × w_in/t)·h wide, out_proj (T × h) over d_i/t = 1024 */
    tsl_layer_t mm = nano_mixer();
    CHECK(tsl_layer_derive(&mm, &err) == 0, "%s", err.msg);
    double win = tsl_mamba_in_width(&mm), di = tsl_mamba_inner(&mm), hm = 2688;
    tsl_roofline_layer_tp_gemms(&d, &mm, S, 4, true, 0, &g);
    fwd = tsl_roofline_layer_fwd_s(&d, &mm, S, 4, true, 0);
    bwd = tsl_roofline_layer_bwd_s(&d, &mm, S, 4, true, 0);
    CHECK(g.n == 1 && di == 4096, "a Mamba-2 mixer: one block (%u), d_i %.0f", g.n, di);
    CHECK_NEAR(g.col_f[0] * fwd, G(T, win / t, hm), 1e-12, "in_proj forward");
    CHECK_NEAR(g.row_f[0] * fwd, G(T, hm, di / t), 1e-12, "out_proj forward");
    CHECK_NEAR(g.row_dx[0] * bwd, G(T, di / t, hm), 1e-12, "out_proj dX");
#undef G
}

/* One FP8 MoE FFN on the H100 by hand (docs/cost-model.md "FP8" and "Mixture of
 * experts"): Mixtral's shape (h 4096, f 14336, E 8, top-2, SwiGLU, no bias) over
 * T = 4096 tokens at EP 2: 4 local experts of m = 2·R/8 = 2048 rows each (R = 2T
 * routed copies). The router GEMM and its softmax/top-k and the permutation stay
 * bf16; each grouped GEMM runs at F8 on 1-byte operands over the 4 experts (one
 * kernel), its X and W quantised first by one cast kernel each over every expert's
 * rows (delayed: 4 B per element; the weights' casts are once per iteration, in
 * the step); the backward casts dY and runs dgrad
 * and wgrad in FP8. With moe_fp8 off (torchtitan without its grouped-experts
 * converter) the layer is the bf16 one; the FP8 weight elements count only the
 * shared experts, and latent attention counts its five projections. Flat shape
 * curve, no host floor. */
static void test_fp8_moe_layer(void)
{
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, 989e12 * 0.777, 3350e9);
    tsl_roofline_dev_t b16 = d;
    d.fp8_flops = 1979e12 * 0.688;
    d.fp8 = TSL_FP8_DELAYED;
    d.moe_fp8 = true;
    d.ep = b16.ep = 2;
    tsl_layer_t l = moe_ffn(4096, 4096, 14336, 32, true, 8, 2);
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    const double h = 4096, f = 14336, E = 8, T = 4096, R = 2 * T, m = 2 * R / E, b = 4;
    const double W = d.mem_bw, L = d.launch_s, F8 = d.fp8_flops, F = d.gemm_flops;
#define G8(m, n, k)                                                                                \
    (fmax(2.0 * (m) * (n) * (k)*b / F8, ((m) * (k) + (k) * (n) + 2.0 * (m) * (n)) * b / W) + L)
#define CAST(e) (4.0 * (e)*b / W + L)
    double router = fmax(2.0 * T * E * h / F, 2.0 * (T * h + h * E + T * E) / W) + L +
                    8.0 * T * E / W + 2 * L + 8.0 * R * h / W + 2 * L;
    double act = 2.0 * 3.0 * f * m * b / W + L; /* SwiGLU: read 2f, write f, bf16 */
    double blk = 10.0 * h * T / W + 2.0 * L;
    double fwd = router + CAST(m * h) + G8(m, 2 * f, h) + act + CAST(m * f) + G8(m, h, f) + blk;
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &l, 1, 1, false, 0), fwd, 1e-12,
               "fp8 MoE forward %g, by hand %g", tsl_roofline_layer_fwd_s(&d, &l, 1, 1, false, 0),
               fwd);
    double rb = 2 * (fmax(2.0 * T * E * h / F, 2.0 * (T * h + h * E + T * E) / W) + L) - 2 * L;
    rb = tsl_roofline_gemm_s(&d, T, h, E, 1) + tsl_roofline_gemm_s(&d, h, E, T, 1);
    /* the router's two, the permutation's two, the residual add's and the pre-MLP
     * norm's two: TE's rmsnorm_bwd launches its dγ finalize after the elementwise
     * kernel (cost model 178; 6 kernels before) */
    double elem = 1.5 * (8.0 * T * E + 8.0 * R * h + 10.0 * h * T) / W + 7 * L;
    double bwd = rb + CAST(m * 2 * f) + G8(m, h, 2 * f) + G8(h, 2 * f, m) + 1.5 * (act - L) + L +
                 CAST(m * h) + G8(m, f, h) + G8(f, h, m) + elem;
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0), bwd, 1e-12,
               "fp8 MoE backward %g, by hand %g", tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0),
               bwd);
    double f16 = tsl_roofline_layer_fwd_s(&b16, &l, 1, 1, false, 0);
    CHECK(fwd < 0.75 * f16, "FP8 experts pay: %g against bf16 %g", fwd, f16);
    d.moe_fp8 = false;
    CHECK(tsl_roofline_layer_fwd_s(&d, &l, 1, 1, false, 0) == f16 &&
              tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0) ==
                  tsl_roofline_layer_bwd_s(&b16, &l, 1, 1, false, 0),
          "experts kept bf16: the bf16 layer (router and permutation are bf16 anyway)");
    CHECK(tsl_roofline_fp8_experts(&l, 1) && tsl_roofline_fp8_experts(&l, 7) &&
              !tsl_roofline_fp8_experts(&l, 3),
          "f/etp 14336 and 2048 take FP8, 14336/3 not a multiple of 16");
    /* FP8 weight elements of a MoE layer: the shared experts only (routed ones are
     * the expert layout's), their input stays bf16 for the router */
    double w8, repl, shard;
    tsl_roofline_fp8_elems(&l, 1, 0, &w8, &repl, &shard);
    CHECK(w8 == 0 && repl == 0 && shard == 0, "no shared experts: nothing dense in FP8");
    l.shared_experts = 1;
    l.shared_ffn_hidden = 2048;
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    tsl_roofline_fp8_elems(&l, 2, 0, &w8, &repl, &shard);
    CHECK(w8 == 3.0 * 2048 * h / 2 && repl == 0 && shard == 4096.0 * 2048 / 2,
          "shared expert: %g %g %g", w8, repl, shard);
    /* latent attention (DeepSeek-V3's shape, TP 1): q down h·q, q up q·a(n+r), kv down
     * h·(c+r), kv up c·a(n+v), out a·v·h; kept inputs: the latents (q, c) replicated,
     * the core's output (a·v) sharded. After the merge with main's recompute modules
     * the norm's output is not counted: the two down projections each keep their own
     * FP8 copy of it (2 × 1 byte = the bf16 copy, no saving), so repl = s·(q + c) =
     * 4096·(1536 + 512) by hand, not fp8dual's s·(h + q + c); mla_up_proj drops the
     * latents (recomputed, not kept): repl 0, weights and shard unchanged */
    tsl_layer_t a = dsv3_mla_attention();
    CHECK(tsl_layer_derive(&a, &err) == 0, "%s", err.msg);
    tsl_roofline_fp8_elems(&a, 1, 0, &w8, &repl, &shard);
    double wa =
        7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512.0 * 128 * 256 + 128.0 * 128 * 7168;
    CHECK(w8 == wa && repl == 4096.0 * (1536 + 512) && shard == 4096.0 * 128 * 128,
          "MLA elems: %g (by hand %g) %g %g", w8, wa, repl, shard);
    tsl_roofline_fp8_elems(&a, 1, TSL_RECOMPUTE_MLA_UP_PROJ, &w8, &repl, &shard);
    CHECK(w8 == wa && repl == 0 && shard == 4096.0 * 128 * 128, "MLA + mla_up_proj: %g %g %g", w8,
          repl, shard);
    CHECK(fabs(w8 + 1536 + 512 + 7168 - (double)a.params) < 1.0,
          "MLA: every weight but the norms is FP8 (%g of %llu)", w8, (unsigned long long)a.params);
#undef G8
#undef CAST
}

static void test_h200_gemm(void)
{
    const tsl_gpu_spec_t *g = tsl_gpu_find("H200");
    CHECK(g != NULL && strcmp(g->name, "H200-141G") == 0, "H200 alias");
    if (g == NULL)
        return;
    CHECK(g->peak_flops == 989e12 && g->efficiency == 0.695 && g->mem_bw == 4800e9 &&
              g->mem_bytes == 141ull << 30,
          "H200 figures");
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, g->peak_flops * g->efficiency, g->mem_bw);
    tsl_gemm_eff_for_gpu(&d.shape, g->name, g->peak_flops, g->mem_bw);
    CHECK(d.shape.sms == 132 &&
              d.shape.attn_fwd_flops == TSL_ATTN_H100_FWD_EFF * TSL_ATTN_GH100_SETTLED * 989e12,
          "H200: the H100's SMs and flash figures");
    CHECK_NEAR(d.shape.k_half, 145.259375, 1e-9, "H200 k_half %.9g", d.shape.k_half);
    CHECK_NEAR(tsl_roofline_gemm_s(&d, 4096, 4096, 4096, 1), 211.04447e-6, 1e-6, "4096^3 %g",
               tsl_roofline_gemm_s(&d, 4096, 4096, 4096, 1));
    CHECK_NEAR(tsl_roofline_gemm_s(&d, 1024, 1024, 1024, 1), 11.357896e-6, 1e-6, "1024^3 %g",
               tsl_roofline_gemm_s(&d, 1024, 1024, 1024, 1));
    /* the other new rows carry their SM / CU counts; "L4" is not read as L40S */
    static const struct {
        const char *alias;
        double sms;
    } sms[] = {{"B200", 148}, {"GB200", 148}, {"MI300X", 304}, {"MI325X", 304},
               {"L40S", 142}, {"L4", 58},     {"A10G", 80}};
    for (size_t i = 0; i < sizeof sms / sizeof sms[0]; i++) {
        const tsl_gpu_spec_t *t = tsl_gpu_find(sms[i].alias);
        tsl_gemm_eff_t e;
        CHECK(t != NULL, "%s built in", sms[i].alias);
        if (t == NULL)
            continue;
        tsl_gemm_eff_for_gpu(&e, t->name, t->peak_flops, t->mem_bw);
        CHECK(e.sms == sms[i].sms, "%s: %g SMs", t->name, e.sms);
    }
}

/* gpt-oss's experts under Megatron-LM (roofline.h, docs/cost-model.md "Mixture of
 * experts"): h = f = 2880, E 128, top-4, T = 4096 tokens at EP 8 on the H100 (bf16):
 * R = 4T = 16384 routed rows, 16 local experts of m = 1024. The clamp before the
 * gated activation moves 8 B forward and 10 B backward per element of FFN-in's
 * output (rows × 2f = 16384 × 5760), 3 kernels each way, one host op; the per-expert
 * FFN-out bias 12 B forward and 16 B backward per element of the h-wide output,
 * 2 × 16 + 1 kernels forward, 4 × 16 + 1 backward, 16 + 1 and 32 + 1 host ops.
 * moe_act's recompute repeats the clamp's forward. */
/* Megatron-LM's all-to-all dispatcher (dev.moe_a2a; roofline.h TSL_ROOFLINE_A2A_*) on
 * a Qwen3-235B-A22B MoE FFN on the H100 at EP 8: T = 4096 tokens, k 8 of E 128, 16
 * local experts, R = 32768 routed rows, all of them on this rank after the dispatch.
 * Forward: the two sorts 2 × 4·h per row (1.07 GB, 0.40 ms at 2.68 TB/s), the counts
 * 1 byte and the row-id map 29 bytes per T × E entry, 4 + 6 + 3 kernels; backward the
 * sorts' 8·h per row in 2 kernels. Host ops: 21 forward (6 counts, 4 copies, 3 map
 * passes, 4 sort kernels, 4 NCCL calls), 5 backward; at EP 1 the sorts alone. */
static void test_alltoall_dispatcher(void)
{
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, 989e12 * 0.777, 3350e9);
    d.ep = 8;
    tsl_layer_t l = moe_ffn(4096, 4096, 1536, 64, true, 128, 8);
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    tsl_roofline_dev_t a = d;
    a.moe_a2a = true;
    const double W = d.mem_bw, L = d.launch_s, h = 4096, rows = 32768, TE = 4096.0 * 128;
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&a, &l, 1, 1, false, 0) -
                   tsl_roofline_layer_fwd_s(&d, &l, 1, 1, false, 0),
               (8 * h * rows + 30 * TE) / W + 13 * L, 1e-12, "forward: 0.46 ms");
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&a, &l, 1, 1, false, 0) -
                   tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0),
               8 * h * rows / W + 2 * L, 1e-12, "backward: 0.41 ms");
    tsl_roofline_dev_t o = d, oa = a; /* one second an op: the passes' op counts */
    o.host_op_s = oa.host_op_s = 1.0;
    CHECK(tsl_roofline_layer_fwd_s(&oa, &l, 1, 1, false, 0) ==
                  tsl_roofline_layer_fwd_s(&o, &l, 1, 1, false, 0) + 21 &&
              tsl_roofline_layer_bwd_s(&oa, &l, 1, 1, false, 0) ==
                  tsl_roofline_layer_bwd_s(&o, &l, 1, 1, false, 0) + 5,
          "21 host ops forward, 5 backward");
    o.ep = oa.ep = 1; /* 128 local experts: the sorts alone */
    CHECK(tsl_roofline_layer_fwd_s(&oa, &l, 1, 1, false, 0) ==
                  tsl_roofline_layer_fwd_s(&o, &l, 1, 1, false, 0) + 4 &&
              tsl_roofline_layer_bwd_s(&oa, &l, 1, 1, false, 0) ==
                  tsl_roofline_layer_bwd_s(&o, &l, 1, 1, false, 0) + 2,
          "EP 1: the sorts' 4 and 2 ops");
    /* one local expert (E = ep = 8), a thin h and wide f: GPU-bound (8.6 ms of GEMMs
     * against 31 ops at H), the permutation 4 MB (1.6 µs) and its map shorter than H,
     * so the sync leaves the GPU idle for the rest of H; no sort */
    tsl_layer_t one = l;
    one.hidden = 256;
    one.ffn_hidden = 1u << 20;
    one.experts = 8;
    one.experts_per_tok = 1;
    CHECK(tsl_layer_derive(&one, &err) == 0, "%s", err.msg);
    tsl_roofline_dev_t s = d, sa = a;
    s.host_op_s = sa.host_op_s = TSL_ROOFLINE_HOST_OP_S;
    const double TE1 = 4096.0 * 8, map = 29 * TE1 / W + 3 * L, perm = 4 * 4096.0 * 256 / W + L;
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&sa, &one, 1, 1, false, 0) -
                   tsl_roofline_layer_fwd_s(&s, &one, 1, 1, false, 0),
               TE1 / W + 6 * L + map + (TSL_ROOFLINE_HOST_OP_S - map - perm), 1e-12,
               "the sync's idle: H less the permutation queued behind the copies");
    CHECK(tsl_roofline_layer_fwd_s(&s, &one, 1, 1, false, 0) > 31 * TSL_ROOFLINE_HOST_OP_S,
          "GPU-bound");
}

/* The TE expert-cast tests' setting: an H100 with FP8 experts at EP 2, and a
 * Mixtral-like FFN (hidden 4096, expert FFN 14336, 8 experts top-2, 4096 tokens). */
static void h100_fp8_experts(tsl_roofline_dev_t *d, tsl_layer_t *l)
{
    tsl_roofline_dev_init(d, 989e12 * 0.777, 3350e9);
    d->fp8_flops = 1979e12 * 0.688;
    d->moe_fp8 = true;
    d->ep = 2;
    *l = moe_ffn(4096, 4096, 14336, 32, true, 8, 2);
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(l, &err) == 0, "%s", err.msg);
}

/* FC2's input quantised again in the backward under moe_act with FP8 (cost model 163;
 * roofline.c fc2_recast_s): Megatron-LM's set_save_original_input on the experts'
 * linear_fc2, TE's GroupedLinear casting the recomputed bf16 input per local expert
 * for the wgrad. Mixtral-like FFN, 8 experts top-2, EP 2 (4 local), one sample:
 * E = k·s·f elements of FC2's input. Against delayed scaling (TE refuses
 * save_original_input there: no term), what moe_act's recompute adds on an H100:
 *   tensorwise  the whole cast (6 B) less the forward's columnwise copy (1 B) not
 *               written: 5 B·E, and zero-amax, amax, scale, cast per expert: 16 L
 *   mxfp8       the columnwise cast (4 + 2/32 less the rowwise copy's 1 + 1/32 B),
 *               less the forward's columnwise copy: 2 B·E, one kernel per expert
 * none under the op fuser's grouped MLP, with bf16 experts, or without moe_act. */
static void test_fc2_recast(void)
{
    tsl_roofline_dev_t d;
    tsl_layer_t l;
    h100_fp8_experts(&d, &l);
    const double E = 2.0 * 4096 * 14336, L = d.launch_s;
    const uint32_t act = TSL_RECOMPUTE_MOE_ACT;
    tsl_roofline_dev_t dl = d;
    dl.fp8 = TSL_FP8_DELAYED;
    double base = tsl_roofline_recompute_fwd_s(&dl, &l, 1, 1, false, act);
    CHECK(base > 0, "moe_act recomputes the activation: %g", base);
    tsl_roofline_dev_t cs = d;
    cs.fp8 = TSL_FP8_TENSORWISE;
    CHECK_NEAR(tsl_roofline_recompute_fwd_s(&cs, &l, 1, 1, false, act) - base,
               tsl_roofline_mem_s(&cs, 5.0 * E, 0) + 16.0 * L, 1e-9,
               "tensorwise: 5 B per element and 4 kernels an expert");
    tsl_roofline_dev_t mx = d;
    mx.fp8 = TSL_FP8_MXFP8;
    CHECK_NEAR(tsl_roofline_recompute_fwd_s(&mx, &l, 1, 1, false, act) - base,
               tsl_roofline_mem_s(&mx, 2.0 * MXR * E, 0) + 4.0 * L, 1e-9,
               "mxfp8: the columnwise copy, 2 B per element at TE's quantize rate, a kernel "
               "an expert");
    tsl_roofline_dev_t fused = cs, bf = cs;
    fused.moe_fused_mlp = true;
    bf.moe_fp8 = false;
    CHECK(tsl_roofline_recompute_fwd_s(&fused, &l, 1, 1, false, act) == base &&
              tsl_roofline_recompute_fwd_s(&bf, &l, 1, 1, false, act) == base,
          "no recast under the fused grouped MLP or with bf16 experts");
    CHECK(tsl_roofline_recompute_fwd_s(&cs, &l, 1, 1, false, TSL_RECOMPUTE_LAYERNORM) ==
              tsl_roofline_recompute_fwd_s(&dl, &l, 1, 1, false, TSL_RECOMPUTE_LAYERNORM),
          "no recast without moe_act");
}

/* Megatron-core's set_save_original_input(linear_proj) (cost model 166; roofline.c
 * proj_orig_s): the attention output projection keeps its bf16 input, so its forward
 * cast writes the rowwise copy alone and its backward quantises that input again for
 * the wgrad. Llama 3 70B's block at TP 8 + SP, one sample: E = s·d/t = 8192·1024
 * elements of the core's output (local: the projection's input is not gathered). On an
 * H100, against TE's default (dev.proj_orig_input off):
 *   tensorwise  forward −1 B·E (no columnwise copy); backward the whole current-
 *               scaling cast, 6 B·E and zero-amax, amax, scale, cast (4 L)
 *   mxfp8       forward −(1 + 1/32) B·E; backward the columnwise cast, 2 B read and
 *               (1 + 1/32) written, one kernel
 *   Blackwell's any layout, tensorwise: the forward wrote one copy already (0); the
 *               backward's cast writes one (5 B·E, 4 L)
 * DeepSeek-V3's latent attention (TP 1): its projection's input s·a·v = 4096·128·128,
 * likewise. Nothing in bf16, or where the projection is not FP8 (a width not a
 * multiple of 16). */
static void test_proj_orig_input(void)
{
    tsl_roofline_dev_t d = h100();
    d.fp8_flops = 1979e12 * 0.688;
    const double W = d.mem_bw, L = d.launch_s, E = 8192.0 * 8192 / 8;
    tsl_layer_t l = llama70b_layer();
    struct {
        uint32_t fp8;
        bool any;
        double fwd_b, bwd_b, bwd_k;
    } cases[] = {{TSL_FP8_TENSORWISE, false, -1.0, 6.0, 4.0},
                 {TSL_FP8_MXFP8, false, -(1.0 + 1.0 / 32) * MXR, (3.0 + 1.0 / 32) * MXR, 1.0},
                 {TSL_FP8_TENSORWISE, true, 0.0, 5.0, 4.0}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tsl_roofline_dev_t te = d, mc;
        te.fp8 = cases[i].fp8;
        te.fp8_any_layout = cases[i].any;
        mc = te;
        mc.proj_orig_input = true;
        double f = tsl_roofline_layer_fwd_s(&mc, &l, 1, 8, true, 0) -
                   tsl_roofline_layer_fwd_s(&te, &l, 1, 8, true, 0);
        double b = tsl_roofline_layer_bwd_s(&mc, &l, 1, 8, true, 0) -
                   tsl_roofline_layer_bwd_s(&te, &l, 1, 8, true, 0);
        CHECK_NEAR(f, cases[i].fwd_b * E / W, 1e-12, "%s%s forward: %g, by hand %g",
                   tsl_fp8_recipe_name(cases[i].fp8), cases[i].any ? " any layout" : "", f,
                   cases[i].fwd_b * E / W);
        CHECK_NEAR(b, cases[i].bwd_b * E / W + cases[i].bwd_k * L, 1e-12,
                   "%s%s backward: %g, by hand %g", tsl_fp8_recipe_name(cases[i].fp8),
                   cases[i].any ? " any layout" : "", b,
                   cases[i].bwd_b * E / W + cases[i].bwd_k * L);
    }
    /* latent attention's projection */
    tsl_err_t err = {0};
    tsl_layer_t a = dsv3_mla_attention();
    CHECK(tsl_layer_derive(&a, &err) == 0, "%s", err.msg);
    tsl_roofline_dev_t te = d, mc;
    te.fp8 = TSL_FP8_MXFP8;
    mc = te;
    mc.proj_orig_input = true;
    const double Ea = 4096.0 * 128 * 128;
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&mc, &a, 1, 1, false, 0) -
                   tsl_roofline_layer_bwd_s(&te, &a, 1, 1, false, 0),
               (3.0 + 1.0 / 32) * MXR * Ea / W + L, 1e-12, "MLA's linear_proj recast");
    CHECK(tsl_roofline_proj_fp8_elems(&a, 1) == Ea && tsl_roofline_proj_fp8_elems(&l, 8) == E,
          "the projection's kept input: %g, %g", tsl_roofline_proj_fp8_elems(&a, 1),
          tsl_roofline_proj_fp8_elems(&l, 8));
    /* bf16: nothing; nor where the projection is not FP8 (hidden 1000: not a multiple
     * of 16), its input bf16 anyway */
    tsl_roofline_dev_t bf = h100(), bfo = bf;
    bfo.proj_orig_input = true;
    CHECK(tsl_roofline_layer_bwd_s(&bfo, &l, 1, 8, true, 0) ==
              tsl_roofline_layer_bwd_s(&bf, &l, 1, 8, true, 0),
          "bf16: no recast");
    tsl_layer_t odd = layer(1024, 1000, 8);
    tsl_roofline_dev_t mct = d, tet = d;
    mct.fp8 = tet.fp8 = TSL_FP8_TENSORWISE;
    mct.proj_orig_input = true;
    CHECK(tsl_roofline_proj_fp8_elems(&odd, 1) == 0 &&
              tsl_roofline_layer_bwd_s(&mct, &odd, 1, 1, false, 0) ==
                  tsl_roofline_layer_bwd_s(&tet, &odd, 1, 1, false, 0),
          "a bf16 projection: no recast, no FP8 input");
}

/* Megatron-core's other set_save_original_input sites (cost model 170; roofline.c
 * orig_input_s), each against TE's default on an H100 (one sample):
 *   the shared experts' linear_fc1 (dev.shared_orig): a MoE FFN of 8
 *     experts, top 2, one shared expert 2048 wide, s 4096, h 4096. At TP 1 its input,
 *     E = s·h, is cast as linear_proj's: tensorwise forward −1 B·E, backward the
 *     whole cast 6 B·E + 4 L; MXFP8 −(1 + 1/32) B·E, (3 + 1/32) B·E + L. At TP 2 +
 *     SP TE gathers it: the local rows E/2, and under current scaling the default
 *     forward wrote the rowwise copy alone (nothing saved) and the backward recasts
 *     the rowwise copy alone (5 B·E/2 + 4 L); MXFP8 as at TP 1 over E/2.
 *   latent attention's two down projections under a layernorm recompute
 *     (dev.down_orig): DeepSeek-V3's block at TP 1, MXFP8, each reads the
 *     norm's output, s·h = 4096·7168: the backward 2 × ((3 + 1/32) B·s·h + L).
 * Nothing in bf16, nor on a layer without the site. */
static void test_orig_input_sites(void)
{
    tsl_roofline_dev_t d = h100();
    d.fp8_flops = 1979e12 * 0.688;
    d.moe_fp8 = true;
    const double W = d.mem_bw, L = d.launch_s;
    tsl_err_t err = {0};
    tsl_layer_t l = moe_ffn(4096, 4096, 14336, 32, true, 8, 2);
    l.shared_experts = 1;
    l.shared_ffn_hidden = 2048;
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    const double E = 4096.0 * 4096;
    struct {
        uint32_t fp8, t;
        double fwd_b, bwd_b, bwd_k;
    } cases[] = {{TSL_FP8_TENSORWISE, 1, -1.0, 6.0, 4.0},
                 {TSL_FP8_MXFP8, 1, -(1.0 + 1.0 / 32) * MXR, (3.0 + 1.0 / 32) * MXR, 1.0},
                 {TSL_FP8_TENSORWISE, 2, 0.0, 5.0 / 2, 4.0},
                 {TSL_FP8_MXFP8, 2, -(1.0 + 1.0 / 32) / 2 * MXR, (3.0 + 1.0 / 32) / 2 * MXR, 1.0}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tsl_roofline_dev_t te = d, mc;
        te.fp8 = cases[i].fp8;
        mc = te;
        mc.shared_orig = true;
        uint32_t t = cases[i].t;
        double f = tsl_roofline_layer_fwd_s(&mc, &l, 1, t, t > 1, 0) -
                   tsl_roofline_layer_fwd_s(&te, &l, 1, t, t > 1, 0);
        double b = tsl_roofline_layer_bwd_s(&mc, &l, 1, t, t > 1, 0) -
                   tsl_roofline_layer_bwd_s(&te, &l, 1, t, t > 1, 0);
        CHECK_NEAR(f, cases[i].fwd_b * E / W, 1e-12, "shared fc1 %s TP %u forward: %g, by hand %g",
                   tsl_fp8_recipe_name(cases[i].fp8), t, f, cases[i].fwd_b * E / W);
        CHECK_NEAR(b, cases[i].bwd_b * E / W + cases[i].bwd_k * L, 1e-12,
                   "shared fc1 %s TP %u backward: %g, by hand %g",
                   tsl_fp8_recipe_name(cases[i].fp8), t, b,
                   cases[i].bwd_b * E / W + cases[i].bwd_k * L);
    }
    /* latent attention's down projections */
    tsl_layer_t a = dsv3_mla_attention();
    CHECK(tsl_layer_derive(&a, &err) == 0, "%s", err.msg);
    tsl_roofline_dev_t te = d, mc;
    te.fp8 = TSL_FP8_MXFP8;
    mc = te;
    mc.down_orig = true;
    const double Ea = 4096.0 * 7168;
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&mc, &a, 1, 1, false, 0) -
                   tsl_roofline_layer_bwd_s(&te, &a, 1, 1, false, 0),
               2.0 * ((3.0 + 1.0 / 32) * MXR * Ea / W + L), 1e-12, "MLA's down projections recast");
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&mc, &a, 1, 1, false, 0) -
                   tsl_roofline_layer_fwd_s(&te, &a, 1, 1, false, 0),
               -2.0 * (1.0 + 1.0 / 32) * MXR * Ea / W, 1e-12,
               "MLA's down projections: no columnwise");
    /* the sites apart: the MoE flag leaves attention alone, and bf16 has no cast */
    tsl_roofline_dev_t sh = te;
    sh.shared_orig = true;
    CHECK(tsl_roofline_layer_bwd_s(&sh, &a, 1, 1, false, 0) ==
              tsl_roofline_layer_bwd_s(&te, &a, 1, 1, false, 0),
          "no shared experts in an attention block");
    tsl_roofline_dev_t bf = h100(), bfo = bf;
    bfo.shared_orig = bfo.down_orig = true;
    CHECK(tsl_roofline_layer_bwd_s(&bfo, &l, 1, 1, false, 0) ==
                  tsl_roofline_layer_bwd_s(&bf, &l, 1, 1, false, 0) &&
              tsl_roofline_layer_bwd_s(&bfo, &a, 1, 1, false, 0) ==
                  tsl_roofline_layer_bwd_s(&bf, &a, 1, 1, false, 0),
          "bf16: no recast");
}

/* Transformer Engine's split_quantize of a grouped GEMM (cost model 159): under current
 * scaling (tensorwise), blockwise and MXFP8 each local expert's tensor is quantised by
 * its own quantizer (amax, scale and cast: 3 kernels; MXFP8's cast: 1), where the group's
 * bytes were priced with one tensor's kernels. Mixtral's FFN over 4096 tokens at
 * EP 2: 4 local experts, two casts a pass (FC1's input and FC2's forward, their
 * output gradients backward): 2 · 3 · 3 launches more each pass under tensorwise,
 * 2 · 3 · 1 under MXFP8; no byte more, no host op more for the casts (a C++ loop in
 * one call; TE's per-expert calls are the forward floor's since cost model 198).
 * One local expert (EP 8), delayed scaling's fused multi-tensor kernel, torchao and
 * TE's op fuser (moe_fused_mlp) keep the group's count; a dense FFN is unchanged. */
static void test_grouped_split_quantize(void)
{
    tsl_roofline_dev_t d;
    tsl_layer_t l;
    h100_fp8_experts(&d, &l);
    const double L = d.launch_s;
    const uint32_t recipes[] = {TSL_FP8_TENSORWISE, TSL_FP8_MXFP8};
    const double extra[] = {2.0 * 3 * 4, 2.0 * 3 * 1}; /* zero-amax, amax, scale, cast (163) */
    for (int i = 0; i < 2; i++) {
        tsl_roofline_dev_t g = d, fused;
        g.fp8 = recipes[i];
        fused = g;
        fused.moe_fused_mlp = true; /* no clamp, no bias: only the casts differ */
        /* ... and, since cost model 160, MXFP8's GEMM rate (the grouped linear's, not the
         * fused MLP's): the launches are what moves with the launch floor */
        tsl_roofline_dev_t g2 = g, fused2 = fused;
        g2.launch_s = fused2.launch_s = 2 * L;
        CHECK_NEAR((tsl_roofline_layer_fwd_s(&g2, &l, 1, 1, false, 0) -
                    tsl_roofline_layer_fwd_s(&fused2, &l, 1, 1, false, 0)) -
                       (tsl_roofline_layer_fwd_s(&g, &l, 1, 1, false, 0) -
                        tsl_roofline_layer_fwd_s(&fused, &l, 1, 1, false, 0)),
                   extra[i] * L, 1e-9, "recipe %u: %g launches more forward", recipes[i], extra[i]);
        CHECK_NEAR((tsl_roofline_layer_bwd_s(&g2, &l, 1, 1, false, 0) -
                    tsl_roofline_layer_bwd_s(&fused2, &l, 1, 1, false, 0)) -
                       (tsl_roofline_layer_bwd_s(&g, &l, 1, 1, false, 0) -
                        tsl_roofline_layer_bwd_s(&fused, &l, 1, 1, false, 0)),
                   extra[i] * L, 1e-9, "recipe %u: %g launches more backward", recipes[i],
                   extra[i]);
        if (recipes[i] == TSL_FP8_TENSORWISE) /* the same GEMMs: the launches alone */
            CHECK_NEAR(tsl_roofline_layer_fwd_s(&g, &l, 1, 1, false, 0) -
                           tsl_roofline_layer_fwd_s(&fused, &l, 1, 1, false, 0),
                       extra[i] * L, 1e-12, "tensorwise: %g launches more forward", extra[i]);
        /* one second an op: the op counts. The casts' loop adds none; since cost model
         * 198 TE's per-expert calls join the forward's floor (docs/cost-model.md "The host
         * between two syncs"): 2 linears · 4 experts · 3 framework ops / 3, less the
         * group's counted GEMM and cast ops — tensorwise 2 · (1 + 3) = 8: none more;
         * MXFP8 2 · (1 + 1) = 4: 4 more. None backward. */
        const double te_ops[] = {0.0, 4.0};
        tsl_roofline_dev_t o = g, of = fused;
        o.host_op_s = of.host_op_s = 1.0;
        CHECK_NEAR(tsl_roofline_layer_fwd_s(&o, &l, 1, 1, false, 0) -
                       tsl_roofline_layer_fwd_s(&of, &l, 1, 1, false, 0),
                   te_ops[i], 1e-12, "recipe %u: %g host ops more forward", recipes[i], te_ops[i]);
        CHECK(tsl_roofline_layer_bwd_s(&o, &l, 1, 1, false, 0) ==
                  tsl_roofline_layer_bwd_s(&of, &l, 1, 1, false, 0),
              "recipe %u: no host op more backward", recipes[i]);
        tsl_roofline_dev_t one = g, one_f = fused; /* EP 8: one local expert */
        one.ep = one_f.ep = 8;
        tsl_roofline_dev_t one2 = one, one_f2 = one_f;
        one2.launch_s = one_f2.launch_s = 2 * L;
        CHECK(fabs((tsl_roofline_layer_fwd_s(&one2, &l, 1, 1, false, 0) -
                    tsl_roofline_layer_fwd_s(&one_f2, &l, 1, 1, false, 0)) -
                   (tsl_roofline_layer_fwd_s(&one, &l, 1, 1, false, 0) -
                    tsl_roofline_layer_fwd_s(&one_f, &l, 1, 1, false, 0))) < 1e-6 * L,
              "recipe %u: one local expert, one quantizer", recipes[i]);
    }
    tsl_roofline_dev_t dl = d, dl_f; /* delayed: nvte_multi_cast_transpose, one kernel */
    dl.fp8 = TSL_FP8_DELAYED;
    dl_f = dl;
    dl_f.moe_fused_mlp = true;
    CHECK(tsl_roofline_layer_fwd_s(&dl, &l, 1, 1, false, 0) ==
              tsl_roofline_layer_fwd_s(&dl_f, &l, 1, 1, false, 0),
          "delayed scaling: the group's count");
    tsl_roofline_dev_t ao = d, ao_f; /* torchao's grouped mm: not TE's split_quantize */
    ao.fp8 = TSL_FP8_TENSORWISE;
    ao.fp8_impl = TSL_FP8_IMPL_TORCHAO;
    ao_f = ao;
    ao_f.moe_fused_mlp = true;
    CHECK(tsl_roofline_layer_fwd_s(&ao, &l, 1, 1, false, 0) ==
              tsl_roofline_layer_fwd_s(&ao_f, &l, 1, 1, false, 0),
          "torchao: the group's count");
    tsl_layer_t dense = l;
    dense.experts = 0;
    dense.experts_per_tok = 0;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&dense, &err) == 0, "%s", err.msg);
    tsl_roofline_dev_t tw = d, tw_f;
    tw.fp8 = TSL_FP8_TENSORWISE;
    tw_f = tw;
    tw_f.moe_fused_mlp = true;
    CHECK(tsl_roofline_layer_fwd_s(&tw, &dense, 1, 1, false, 0) ==
              tsl_roofline_layer_fwd_s(&tw_f, &dense, 1, 1, false, 0),
          "dense FFN unchanged");
    CHECK(tsl_fp8_impl_split_per_tensor(TSL_FP8_TENSORWISE, TSL_FP8_IMPL_TE) &&
              tsl_fp8_impl_split_per_tensor(TSL_FP8_MXFP8, TSL_FP8_IMPL_TE) &&
              !tsl_fp8_impl_split_per_tensor(TSL_FP8_DELAYED, TSL_FP8_IMPL_TE) &&
              !tsl_fp8_impl_split_per_tensor(TSL_FP8_NVFP4, TSL_FP8_IMPL_TE) &&
              tsl_fp8_impl_split_per_tensor(TSL_FP8_BLOCKWISE, TSL_FP8_IMPL_TE) &&
              !tsl_fp8_impl_split_per_tensor(TSL_FP8_MXFP8, TSL_FP8_IMPL_TORCHAO),
          "per-tensor quantizers: TE tensorwise, blockwise and MXFP8");
}

/* MCore v0.8's unfused permutation on Mixtral 8x7B's MoE layer (EP 8 of 8 experts,
 * top-2, 4,096 tokens: R = 8,192 rows of 4,096): beyond the fused permute and
 * unpermute, forward 8 + 2/k bytes per routed element (the combine's zeros and
 * scatter, the routing weights' product, the top-k sum) and 5 kernels, backward
 * 4 + 6/k bytes and 4 kernels; one host op a kernel. */
static void test_unfused_permute(void)
{
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, 989e12 * 0.777, 3350e9);
    d.ep = 8;
    tsl_layer_t l = moe_ffn(4096, 4096, 14336, 32, true, 8, 2);
    l.kv_heads = 8;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    tsl_roofline_dev_t u = d;
    u.moe_unfused = true;
    const double W = d.mem_bw, L = d.launch_s, Rh = 8192.0 * 4096;
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&u, &l, 1, 1, false, 0) -
                   tsl_roofline_layer_fwd_s(&d, &l, 1, 1, false, 0),
               9 * Rh / W + 5 * L, 1e-12, "forward: 302 MB and 5 kernels more, 0.11 ms");
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&u, &l, 1, 1, false, 0) -
                   tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0),
               7 * Rh / W + 4 * L, 1e-12, "backward: 235 MB and 4 kernels more, 0.09 ms");
    tsl_roofline_dev_t o = d, ou = u; /* one second an op: the passes' op counts */
    o.host_op_s = ou.host_op_s = 1.0;
    CHECK(tsl_roofline_layer_fwd_s(&ou, &l, 1, 1, false, 0) ==
                  tsl_roofline_layer_fwd_s(&o, &l, 1, 1, false, 0) + 5 &&
              tsl_roofline_layer_bwd_s(&ou, &l, 1, 1, false, 0) ==
                  tsl_roofline_layer_bwd_s(&o, &l, 1, 1, false, 0) + 4,
          "5 host ops forward, 4 backward");
    tsl_layer_t dense = l; /* a dense FFN has no permutation */
    dense.experts = 0;
    dense.experts_per_tok = 0;
    CHECK(tsl_layer_derive(&dense, &err) == 0, "%s", err.msg);
    CHECK(tsl_roofline_layer_fwd_s(&u, &dense, 1, 1, false, 0) ==
              tsl_roofline_layer_fwd_s(&d, &dense, 1, 1, false, 0),
          "dense layers unchanged");
}

/* Megatron-LM's unfused YaRN RoPE (yarn_eager_rope, cost model 126) on gpt-oss's
 * attention (h 2880, 64 query heads and 8 K/V heads of 64, one sample of 4096
 * tokens, TP 1): 24 bytes per q and k element and 12 kernels per tensor forward,
 * 28 bytes and 7 kernels backward; one host op a kernel. Cross-attention-free,
 * the rest of the layer unchanged. */
static void test_yarn_eager_rope(void)
{
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, 989e12 * 0.777, 3350e9);
    tsl_layer_t l = layer(4096, 2880, 64), y;
    l.kv_heads = 8;
    l.attn_dim = 64 * 64;
    l.rms_norm = l.causal = l.no_dropout = true;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    y = l;
    y.yarn_eager_rope = true;
    const double W = d.mem_bw, L = d.launch_s, T = 4096, qk = 64 * 64 + 8 * 64;
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &y, 1, 1, false, 0) -
                   tsl_roofline_layer_fwd_s(&d, &l, 1, 1, false, 0),
               24 * qk * T / W + 24 * L, 1e-9, "forward: 24 B per q/k element, 24 kernels");
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&d, &y, 1, 1, false, 0) -
                   tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0),
               28 * qk * T / W + 14 * L, 1e-9, "backward: 28 B, 14 kernels");
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &y, 1, 2, false, 0) -
                   tsl_roofline_layer_fwd_s(&d, &l, 1, 2, false, 0),
               24 * qk * T / 2 / W + 24 * L, 1e-9, "TP 2: each rank its heads' half");
    tsl_roofline_dev_t ops = d;
    ops.host_op_s = 1.0;
    CHECK(tsl_roofline_layer_fwd_s(&ops, &y, 1, 1, false, 0) ==
                  tsl_roofline_layer_fwd_s(&ops, &l, 1, 1, false, 0) + 24 &&
              tsl_roofline_layer_bwd_s(&ops, &y, 1, 1, false, 0) ==
                  tsl_roofline_layer_bwd_s(&ops, &l, 1, 1, false, 0) + 14,
          "host ops: 24 forward, 14 backward");
}

/* The QK norms (tsl_layer_t.qk_norm, cost model 176) on Qwen3-30B-A3B's attention
 * (h 2048, 32 query heads and 4 K/V groups of 128, one sample of 4096 tokens, H100
 * figures), against the same layer without: TENorm forward reads and writes 2 B per
 * q and k element in a kernel a tensor, and copies the strided key (4 B, one
 * kernel); its backward moves 6 B in two kernels a tensor; the query is copied too
 * where its reshape was a view (multi-head attention). The L2 norm is one kernel a
 * tensor each way, no copy. The norm's input is kept (2 B an element, the rank's
 * heads), its 4 FLOPs per element counted once. */
static void test_qk_norm(void)
{
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, 989e12 * 0.777, 3350e9);
    tsl_layer_t l = layer(4096, 2048, 32), qk, mha, mha_qk, l2;
    l.kv_heads = 4;
    l.attn_dim = 32 * 128;
    l.rms_norm = l.causal = l.no_dropout = l.no_bias = true;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    qk = l2 = l;
    qk.qk_norm = TSL_QK_NORM_PER_HEAD;
    l2.qk_norm = TSL_QK_NORM_L2;
    mha = l;
    mha.kv_heads = 0;
    mha_qk = mha;
    mha_qk.qk_norm = TSL_QK_NORM_PER_HEAD;
    CHECK(tsl_layer_derive(&qk, &err) == 0 && tsl_layer_derive(&l2, &err) == 0 &&
              tsl_layer_derive(&mha, &err) == 0 && tsl_layer_derive(&mha_qk, &err) == 0,
          "%s", err.msg);
    const double W = d.mem_bw, L = d.launch_s, T = 4096, q = 4096, k = 512;
    double f0 = tsl_roofline_layer_fwd_s(&d, &l, 1, 1, false, 0);
    double b0 = tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0);
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &qk, 1, 1, false, 0) - f0,
               (4 * (q + k) + 4 * k) * T / W + 3 * L, 1e-9,
               "forward: two norms and the key's copy");
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&d, &qk, 1, 1, false, 0) - b0, 6 * (q + k) * T / W + 4 * L,
               1e-9, "backward: 6 B, four kernels");
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &qk, 1, 2, false, 0) -
                   tsl_roofline_layer_fwd_s(&d, &l, 1, 2, false, 0),
               (4 * (q + k) + 4 * k) * T / 2 / W + 3 * L, 1e-9, "TP 2: the rank's heads");
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &mha_qk, 1, 1, false, 0) -
                   tsl_roofline_layer_fwd_s(&d, &mha, 1, 1, false, 0),
               8 * 2 * q * T / W + 4 * L, 1e-9, "multi-head: the query copied as well");
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &l2, 1, 1, false, 0) - f0, 4 * (q + k) * T / W + 2 * L,
               1e-9, "L2: two kernels, no copy");
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&d, &l2, 1, 1, false, 0) - b0, 6 * (q + k) * T / W + 2 * L,
               1e-9, "L2 backward: two kernels");
    tsl_roofline_dev_t ops = d;
    ops.host_op_s = 1.0;
    CHECK(tsl_roofline_layer_fwd_s(&ops, &qk, 1, 1, false, 0) ==
                  tsl_roofline_layer_fwd_s(&ops, &l, 1, 1, false, 0) + 3 &&
              tsl_roofline_layer_bwd_s(&ops, &qk, 1, 1, false, 0) ==
                  tsl_roofline_layer_bwd_s(&ops, &l, 1, 1, false, 0) + 4,
          "host ops: 3 forward, 4 backward");
    CHECK(qk.act_shard_bytes == l.act_shard_bytes + 2ull * 4096 * (4096 + 512) &&
              qk.act_repl_bytes == l.act_repl_bytes,
          "the norms' inputs kept with the heads (%llu, %llu)",
          (unsigned long long)qk.act_shard_bytes, (unsigned long long)l.act_shard_bytes);
    CHECK(qk.fwd_flops == l.fwd_flops + 4.0 * 4096 * (4096 + 512) && qk.extra_fwd_flops == 0,
          "4 FLOPs an element, once");
    CHECK(tsl_roofline_param_tensors(&qk) == tsl_roofline_param_tensors(&l) + 2 &&
              tsl_roofline_param_tensors(&l2) == tsl_roofline_param_tensors(&l),
          "two weight tensors, none for L2");
    tsl_layer_t ffn = qk, ffn0 = l; /* a split layer's FFN block keeps the field, not the norms */
    ffn.kind = ffn0.kind = TSL_LAYER_FFN;
    CHECK(tsl_layer_derive(&ffn, &err) == 0 && tsl_layer_derive(&ffn0, &err) == 0 &&
              tsl_roofline_param_tensors(&ffn) == tsl_roofline_param_tensors(&ffn0) &&
              tsl_roofline_layer_bwd_s(&d, &ffn, 1, 1, false, 0) ==
                  tsl_roofline_layer_bwd_s(&d, &ffn0, 1, 1, false, 0) &&
              ffn.act_shard_bytes == ffn0.act_shard_bytes,
          "an FFN block: nothing of the QK norms");
    tsl_layer_t bad = qk;
    bad.qk_norm = TSL_QK_NORM_L2 + 1;
    CHECK(tsl_layer_derive(&bad, &err) == -1 && strstr(err.msg, "qk_norm") != NULL, "%s", err.msg);
}

/* gpt-oss's experts under Megatron-LM (one sample of 4096 tokens, EP 8, 16 local
 * experts of 1024 rows, H100 figures): the clamp before the clamped quick-GeGLU, 8 B
 * per element of FFN-in's output in 3 kernels forward and, as autograd runs
 * clamp_backward and the chunk's cat (cost model 148), 15 B in 9 kernels backward;
 * the linear offset's synchronising torch.tensor leaves the drained stream idle one
 * host op in the forward and in moe_act's recompute; the FFN-out bias per expert. */
static void test_gpt_oss_experts(void)
{
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, 989e12 * 0.777, 3350e9);
    d.ep = 8;
    d.moe_busy = 1.0;
    tsl_layer_t l = moe_ffn(4096, 2880, 2880, 64, true, 128, 4);
    tsl_layer_t clamp = l, bias = l;
    clamp.glu_clamp = true;
    bias.no_bias = false;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0 && tsl_layer_derive(&clamp, &err) == 0 &&
              tsl_layer_derive(&bias, &err) == 0,
          "%s", err.msg);
    const double W = d.mem_bw, L = d.launch_s, rows = 16384, h = 2880, out = rows * 2 * 2880;
    double f0 = tsl_roofline_layer_fwd_s(&d, &l, 1, 1, false, 0);
    double b0 = tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0);
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &clamp, 1, 1, false, 0) - f0, 8 * out / W + 3 * L,
               1e-12, "clamp forward: 0.29 ms");
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&d, &clamp, 1, 1, false, 0) - b0, 15 * out / W + 9 * L,
               1e-12, "clamp backward: the masks, wheres and the chunk's cat");
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &bias, 1, 1, false, 0) - f0, 12 * rows * h / W + 33 * L,
               1e-12, "bias forward: 0.34 ms");
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&d, &bias, 1, 1, false, 0) - b0, 16 * rows * h / W + 65 * L,
               1e-12, "bias backward");
    tsl_roofline_dev_t ops = d; /* one second an op: the pass's op count */
    ops.host_op_s = 1.0;
    double o0 = tsl_roofline_layer_fwd_s(&ops, &l, 1, 1, false, 0);
    double ob = tsl_roofline_layer_bwd_s(&ops, &l, 1, 1, false, 0);
    CHECK(tsl_roofline_layer_fwd_s(&ops, &clamp, 1, 1, false, 0) == o0 + 2 &&
              tsl_roofline_layer_bwd_s(&ops, &clamp, 1, 1, false, 0) == ob + 3,
          "clamp: two host ops forward (the offset's torch.tensor one), three backward");
    tsl_roofline_dev_t sync = d; /* a GPU-bound pass: the offset's sync idles one op */
    sync.host_op_s = 1e-6;
    double s0 = tsl_roofline_layer_fwd_s(&sync, &l, 1, 1, false, 0);
    CHECK(s0 > 100 * sync.host_op_s, "GPU-bound at 1 us an op");
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&sync, &clamp, 1, 1, false, 0) - s0,
               8 * out / W + 3 * L + sync.host_op_s, 1e-12, "the offset's sync: one op idle");
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&sync, &clamp, 1, 1, false, 0) -
                   tsl_roofline_layer_bwd_s(&sync, &l, 1, 1, false, 0),
               15 * out / W + 9 * L, 1e-12, "backward: the offset saved, no sync");
    CHECK_NEAR(tsl_roofline_recompute_fwd_s(&sync, &clamp, 1, 1, false, TSL_RECOMPUTE_MOE_ACT) -
                   tsl_roofline_recompute_fwd_s(&sync, &l, 1, 1, false, TSL_RECOMPUTE_MOE_ACT),
               8 * out / W + 3 * L + sync.host_op_s, 1e-12,
               "moe_act's recompute builds the offset again");
    /* Transformer Engine's op fuser (moe_fused_mlp) runs none of the eager pieces */
    tsl_roofline_dev_t fused = sync;
    fused.moe_fused_mlp = true;
    tsl_layer_t both = clamp;
    both.no_bias = false;
    CHECK(tsl_layer_derive(&both, &err) == 0, "%s", err.msg);
    CHECK(tsl_roofline_layer_fwd_s(&fused, &both, 1, 1, false, 0) ==
                  tsl_roofline_layer_fwd_s(&fused, &l, 1, 1, false, 0) &&
              tsl_roofline_layer_bwd_s(&fused, &both, 1, 1, false, 0) ==
                  tsl_roofline_layer_bwd_s(&fused, &l, 1, 1, false, 0) &&
              tsl_roofline_recompute_fwd_s(&fused, &both, 1, 1, false, TSL_RECOMPUTE_MOE_ACT) ==
                  tsl_roofline_recompute_fwd_s(&fused, &l, 1, 1, false, TSL_RECOMPUTE_MOE_ACT),
          "fused MLP: no clamp, offset copy or per-expert bias");
    CHECK(tsl_roofline_glu_offset_sync_s(&sync, 1.0, &clamp) == 1.0 &&
              tsl_roofline_glu_offset_sync_s(&fused, 1.0, &clamp) == 0.0 &&
              tsl_roofline_glu_offset_sync_s(&sync, 1.0, &l) == 0.0,
          "the offset's idle: unfused clamped experts only");
    CHECK(tsl_roofline_layer_fwd_s(&ops, &bias, 1, 1, false, 0) == o0 + 17 &&
              tsl_roofline_layer_bwd_s(&ops, &bias, 1, 1, false, 0) == ob + 33,
          "bias: %g / %g ops more", tsl_roofline_layer_fwd_s(&ops, &bias, 1, 1, false, 0) - o0,
          tsl_roofline_layer_bwd_s(&ops, &bias, 1, 1, false, 0) - ob);
    CHECK_NEAR(tsl_roofline_recompute_fwd_s(&d, &clamp, 1, 1, false, TSL_RECOMPUTE_MOE_ACT) -
                   tsl_roofline_recompute_fwd_s(&d, &l, 1, 1, false, TSL_RECOMPUTE_MOE_ACT),
               8 * out / W + 3 * L, 1e-12, "moe_act's recompute repeats the clamp");
}

/* Non-gated routed experts (Nemotron 3 Nano's squared ReLU: h 2688, f 1856, 128
 * experts, top 6, EP 8, one sample of 8192 tokens) take their routing weights in
 * eager PyTorch after the activation (Megatron-LM experts.py bias_act_func): with
 * the flex dispatcher's fp32 weights an fp32 product and the cast back, 12 bytes
 * and 2 kernels per element of FFN-out's input forward, 34 and 5 backward; with
 * bf16 weights 4 and 1, 12 and 3. moe_act's recompute repeats them; a gated
 * layer's fused activation takes the weights inside and does not change. */
static void test_expert_probs(void)
{
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, 2250e12 * 0.7, 8000e9);
    d.ep = 8;
    d.moe_busy = 1.0;
    tsl_layer_t l = moe_ffn(8192, 2688, 1856, 32, false, 128, 6);
    tsl_layer_t gated = l;
    gated.gated_ffn = true;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0 && tsl_layer_derive(&gated, &err) == 0, "%s", err.msg);
    const double W = d.mem_bw, L = d.launch_s, elems = 6.0 * 8192 * 1856;
    tsl_roofline_dev_t f32 = d;
    f32.moe_fp32_probs = true;
    CHECK_NEAR(tsl_roofline_recompute_fwd_s(&f32, &l, 1, 1, false, TSL_RECOMPUTE_MOE_ACT),
               (4 + 12) * elems / W + 3 * L, 1e-12,
               "moe_act: the activation, the fp32 product and the cast");
    CHECK_NEAR(tsl_roofline_recompute_fwd_s(&d, &l, 1, 1, false, TSL_RECOMPUTE_MOE_ACT),
               (4 + 4) * elems / W + 2 * L, 1e-12, "moe_act: the activation and a bf16 product");
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&f32, &l, 1, 1, false, 0) -
                   tsl_roofline_layer_fwd_s(&d, &l, 1, 1, false, 0),
               (12 - 4) * elems / W + L, 1e-12, "fp32 weights forward");
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&f32, &l, 1, 1, false, 0) -
                   tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0),
               (34 - 12) * elems / W + 2 * L, 1e-12, "fp32 weights backward");
    CHECK(tsl_roofline_layer_fwd_s(&f32, &gated, 1, 1, false, 0) ==
                  tsl_roofline_layer_fwd_s(&d, &gated, 1, 1, false, 0) &&
              tsl_roofline_layer_bwd_s(&f32, &gated, 1, 1, false, 0) ==
                  tsl_roofline_layer_bwd_s(&d, &gated, 1, 1, false, 0),
          "a gated layer's fused activation takes the weights inside");
    tsl_roofline_dev_t ops = d, ops32 = f32; /* one second an op: the pass's op count */
    ops.host_op_s = ops32.host_op_s = 1.0;
    CHECK(tsl_roofline_layer_fwd_s(&ops32, &l, 1, 1, false, 0) ==
                  tsl_roofline_layer_fwd_s(&ops, &l, 1, 1, false, 0) + 1 &&
              tsl_roofline_layer_bwd_s(&ops32, &l, 1, 1, false, 0) ==
                  tsl_roofline_layer_bwd_s(&ops, &l, 1, 1, false, 0) + 1,
          "the cast: one host op more each way");
}

/* The fused weighted squared ReLU (dev.moe_fused_srelu, cost model 196; Megatron-LM
 * use_fused_weighted_squared_relu, every Megatron-Bridge Nemotron-H recipe):
 * relu(x)²·w in one torch.compile'd kernel each way, the activation's own bytes — no
 * eager product or cast, whatever the weights' dtype. The Nano layer of
 * test_expert_probs: the forward 12 B and 2 kernels an element lighter, the backward 34
 * and 5, moe_act's recompute the activation alone, one host op fewer each way; a gated
 * layer unchanged. */
static void test_fused_srelu(void)
{
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, 989e12 * 0.7, 3350e9);
    d.ep = 8;
    d.moe_busy = 1.0;
    d.moe_fp32_probs = true; /* HybridEP's fp32 weights, as the rows run */
    tsl_layer_t l = moe_ffn(8192, 2688, 1856, 32, false, 128, 6);
    tsl_layer_t gated = l;
    gated.gated_ffn = true;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0 && tsl_layer_derive(&gated, &err) == 0, "%s", err.msg);
    tsl_roofline_dev_t f = d;
    f.moe_fused_srelu = true;
    const double W = d.mem_bw, L = d.launch_s, elems = 6.0 * 8192 * 1856;
    CHECK_NEAR(tsl_roofline_layer_fwd_s(&d, &l, 1, 1, false, 0) -
                   tsl_roofline_layer_fwd_s(&f, &l, 1, 1, false, 0),
               12 * elems / W + 2 * L, 1e-12, "fused: the forward's product and cast gone");
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&d, &l, 1, 1, false, 0) -
                   tsl_roofline_layer_bwd_s(&f, &l, 1, 1, false, 0),
               34 * elems / W + 5 * L, 1e-12, "fused: the backward's five kernels gone");
    CHECK_NEAR(tsl_roofline_recompute_fwd_s(&f, &l, 1, 1, false, TSL_RECOMPUTE_MOE_ACT),
               4 * elems / W + L, 1e-12, "moe_act under the fused kernel: the activation alone");
    CHECK_NEAR(tsl_roofline_recompute_fwd_s(&d, &l, 1, 1, false, TSL_RECOMPUTE_MOE) -
                   tsl_roofline_recompute_fwd_s(&f, &l, 1, 1, false, TSL_RECOMPUTE_MOE),
               12 * elems / W + 2 * L, 1e-12, "moe's recompute: the forward's product gone");
    tsl_roofline_dev_t bf = f; /* bf16 weights: nothing eager either */
    bf.moe_fp32_probs = false;
    CHECK(tsl_roofline_layer_fwd_s(&bf, &l, 1, 1, false, 0) ==
                  tsl_roofline_layer_fwd_s(&f, &l, 1, 1, false, 0) &&
              tsl_roofline_layer_bwd_s(&bf, &l, 1, 1, false, 0) ==
                  tsl_roofline_layer_bwd_s(&f, &l, 1, 1, false, 0),
          "fused: the weights' dtype moves nothing");
    CHECK(tsl_roofline_layer_fwd_s(&f, &gated, 1, 1, false, 0) ==
                  tsl_roofline_layer_fwd_s(&d, &gated, 1, 1, false, 0) &&
              tsl_roofline_layer_bwd_s(&f, &gated, 1, 1, false, 0) ==
                  tsl_roofline_layer_bwd_s(&d, &gated, 1, 1, false, 0),
          "a gated layer: its fused activation priced as before");
    tsl_roofline_dev_t ops = d, fops = f; /* one second an op: the pass's op count */
    ops.host_op_s = fops.host_op_s = 1.0;
    CHECK(tsl_roofline_layer_fwd_s(&ops, &l, 1, 1, false, 0) ==
                  tsl_roofline_layer_fwd_s(&fops, &l, 1, 1, false, 0) + 2 &&
              tsl_roofline_layer_bwd_s(&ops, &l, 1, 1, false, 0) ==
                  tsl_roofline_layer_bwd_s(&fops, &l, 1, 1, false, 0) + 2,
          "fused: the product's and the cast's host ops gone");
}

/* moe_act and shared_experts beside moe (Megatron-LM at 44151194): the checkpointed
 * MoE forward (moe_layer.py custom_forward under te_checkpoint) re-creates moe_act's
 * output-discarding checkpoint and the shared experts' checkpoint, which recompute
 * their module again in that forward's backward (experts.py CheckpointWithoutOutput
 * discard_output_and_register_recompute): the backward runs each a third time, its
 * own term on top of moe's. The Nemotron 3 Nano MoE layer of the H100 FP8 row. */
static void test_recompute_nested_moe(void)
{
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, 989e12 * 0.7, 3350e9);
    d.ep = 8;
    d.moe_busy = 1.0;
    d.moe_fp32_probs = true;
    tsl_layer_t l = moe_ffn(8192, 2688, 1856, 32, false, 128, 6);
    l.shared_experts = 1;
    l.shared_ffn_hidden = 3712;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    const uint32_t moe = TSL_RECOMPUTE_MOE, act = TSL_RECOMPUTE_MOE_ACT,
                   sh = TSL_RECOMPUTE_SHARED_EXPERTS;
    double r_moe = tsl_roofline_recompute_fwd_s(&d, &l, 1, 1, false, moe);
    double r_act = tsl_roofline_recompute_fwd_s(&d, &l, 1, 1, false, act);
    double r_sh = tsl_roofline_recompute_fwd_s(&d, &l, 1, 1, false, sh);
    const double W = d.mem_bw, L = d.launch_s, elems = 6.0 * 8192 * 1856;
    CHECK_NEAR(r_act, (4 + 12) * elems / W + 3 * L, 1e-12,
               "moe_act alone: the activation, the fp32 product and the cast");
    CHECK(r_moe > r_act + r_sh, "moe: the whole MoE forward, %g s", r_moe);
    CHECK_NEAR(tsl_roofline_recompute_fwd_s(&d, &l, 1, 1, false, moe | act), r_moe + r_act, 1e-12,
               "moe_act beside moe: the activation a third time");
    CHECK_NEAR(tsl_roofline_recompute_fwd_s(&d, &l, 1, 1, false, moe | sh), r_moe + r_sh, 1e-12,
               "shared_experts beside moe: the shared experts a third time");
    CHECK_NEAR(tsl_roofline_recompute_fwd_s(&d, &l, 1, 1, false, act | sh), r_act + r_sh, 1e-12,
               "without moe each module once");
    tsl_roofline_dev_t flops = d; /* no bandwidth: the FLOP count, shared experts added */
    flops.mem_bw = 0;
    CHECK(tsl_roofline_recompute_fwd_s(&flops, &l, 1, 1, false, moe | sh) >
              tsl_roofline_recompute_fwd_s(&flops, &l, 1, 1, false, moe),
          "FLOP count: shared experts beside moe run again");
}

/* One pass, the figures of several (tsl_roofline_layer_fwd / _bwd, which the cost
 * layer prices once per evaluation): each field is, bit for bit, what its own
 * function gives — a GPT layer (s 2048, h 4096, 32 heads), two samples, TP 4 with
 * SP, with and without the host floor, in bf16 and FP8 (delayed: every linear's
 * dims qualify, so both blocks' linears are FP8), with and without gradient
 * accumulation, and with no bandwidth (FLOP count: no floor, dW share 0.5, no
 * blocks). gpu_s is the pass at host_op_s 0. */
static void check_one_pass(const tsl_roofline_dev_t *d, const tsl_layer_t *l, double params,
                           const char *what)
{
    const double S = 2;
    tsl_roofline_fwd_t f;
    tsl_roofline_bwd_t b;
    tsl_roofline_tp_gemms_t g;
    tsl_roofline_dev_t kern = *d;
    kern.host_op_s = 0.0;
    tsl_roofline_layer_fwd(d, l, S, 4, true, 0, &f);
    tsl_roofline_layer_bwd(d, l, S, 4, true, 0, params, &b);
    tsl_roofline_layer_tp_gemms(d, l, S, 4, true, 0, &g);
    double dx, dw;
    tsl_roofline_layer_col_frac(d, l, S, 4, true, 0, &dx, &dw);
    CHECK(f.s == tsl_roofline_layer_fwd_s(d, l, S, 4, true, 0), "%s: forward", what);
    CHECK(f.gpu_s == tsl_roofline_layer_fwd_s(&kern, l, S, 4, true, 0), "%s: forward GPU", what);
    CHECK(b.s == tsl_roofline_layer_bwd_s(d, l, S, 4, true, 0), "%s: backward", what);
    CHECK(b.acc_s == tsl_roofline_layer_bwd_acc_s(d, l, S, 4, true, 0, params), "%s: acc", what);
    CHECK(b.acc_gpu_s == tsl_roofline_layer_bwd_acc_s(&kern, l, S, 4, true, 0, params),
          "%s: acc GPU", what);
    CHECK(b.wgrad_frac == tsl_roofline_layer_wgrad_frac(d, l, S, 4, true, 0), "%s: dW", what);
    CHECK(b.col_frac[0] == dx && b.col_frac[1] == dw, "%s: column-parallel shares", what);
    CHECK(f.n == (d->mem_bw > 0 ? g.n : 0), "%s: %u blocks (tp_gemms %u)", what, f.n, g.n);
    for (uint32_t i = 0; i < f.n; i++)
        CHECK(f.col_fp8[i] == g.col_fp8[i] && f.row_fp8[i] == g.row_fp8[i] &&
                  f.col_fp8[i] == (d->fp8 != TSL_FP8_NONE),
              "%s: block %u's FP8 linears", what, i);
}

static void test_one_pass(void)
{
    tsl_layer_t l = layer(2048, 4096, 32);
    tsl_roofline_dev_t d = shaped_dev("H100-80G", 989e12 * 0.777, 989e12, 3350e9);
    check_one_pass(&d, &l, 0, "bf16");
    d.grad_acc_bytes = 6.0;
    check_one_pass(&d, &l, 12.0 * 4096 * 4096 / 4, "bf16, accumulation");
    d.host_op_s = 1.0; /* host-bound: the floor differs from the GPU time */
    check_one_pass(&d, &l, 12.0 * 4096 * 4096 / 4, "host-bound");
    d.fp8_flops = 1979e12 * 0.777;
    d.fp8 = TSL_FP8_DELAYED;
    check_one_pass(&d, &l, 12.0 * 4096 * 4096 / 4, "FP8, host-bound");
    d.host_op_s = TSL_ROOFLINE_HOST_OP_S;
    check_one_pass(&d, &l, 12.0 * 4096 * 4096 / 4, "FP8");
    tsl_roofline_dev_t flat;
    tsl_roofline_dev_init(&flat, 1e14, 0);
    flat.host_op_s = 1.0;
    check_one_pass(&flat, &l, 12.0 * 4096 * 4096 / 4, "FLOP count");
}

/* apex's LayerNorm backward (norm_impl.h, cost model 184): under norm_impl apex every
 * fused norm's backward launches a third kernel that reads dY and X again — an
 * encoder block's two norms cost 2 × (4 B an element + one launch) and two host ops
 * more backward, the head's final norm one; the forward is unchanged; fp32 training
 * doubles the bytes; autocast's own fp32 norm is not apex's. Before cost model 184
 * the two priced the same. */
static void test_apex_norm(void)
{
    tsl_roofline_dev_t te;
    tsl_roofline_dev_init(&te, 312e12 * 0.777, 2039e9);
    tsl_roofline_dev_t apex = te;
    apex.norm_impl = TSL_NORM_IMPL_APEX;
    const double S = 2, s = 2048, h = 4096, e = S * s * h, W = te.mem_bw, L = te.launch_s;
    tsl_layer_t l = layer(2048, 4096, 32);
    const double V = 0;
    double df = tsl_roofline_layer_fwd_s(&apex, &l, S, 1, false, V) -
                tsl_roofline_layer_fwd_s(&te, &l, S, 1, false, V);
    double db = tsl_roofline_layer_bwd_s(&apex, &l, S, 1, false, V) -
                tsl_roofline_layer_bwd_s(&te, &l, S, 1, false, V);
    CHECK(df == 0.0, "forward unchanged: %g", df);
    CHECK_NEAR(db, 2.0 * (TSL_NORM_APEX_EXTRA_BWD_BYTES * e / W + L), 1e-12,
               "block: two norms' part-gradient kernel %g", db);
    CHECK(TSL_NORM_APEX_EXTRA_BWD_BYTES == 4.0 && TSL_NORM_APEX_EXTRA_BWD_KERNELS == 1,
          "apex: dY and X read in one more kernel");
    double sp = tsl_roofline_layer_bwd_s(&apex, &l, S, 4, true, V) -
                tsl_roofline_layer_bwd_s(&te, &l, S, 4, true, V);
    CHECK_NEAR(sp, 2.0 * (4.0 * e / 4 / W + L), 1e-12, "SP: the rank's rows %g", sp);
    tsl_roofline_dev_t te1 = te, apex1 = apex; /* one second an op: the op count */
    te1.host_op_s = apex1.host_op_s = 1.0;
    CHECK(tsl_roofline_layer_bwd_s(&apex1, &l, S, 1, false, V) -
                  tsl_roofline_layer_bwd_s(&te1, &l, S, 1, false, V) ==
              2.0,
          "two host ops more");
    tsl_roofline_dev_t te32 = te, apex32 = apex; /* fp32: every element 4 bytes */
    te32.elem_scale = apex32.elem_scale = 2.0;
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&apex32, &l, S, 1, false, V) -
                   tsl_roofline_layer_bwd_s(&te32, &l, S, 1, false, V),
               2.0 * (8.0 * e / W + L), 1e-12, "fp32: 8 B an element");
    tsl_roofline_dev_t tea = te, apexa = apex; /* autocast: the script's fp32 norm */
    tea.autocast = apexa.autocast = true;
    CHECK(tsl_roofline_layer_bwd_s(&apexa, &l, S, 1, false, V) ==
              tsl_roofline_layer_bwd_s(&tea, &l, S, 1, false, V),
          "autocast: its own norm");
    tsl_layer_t head = {.kind = TSL_LAYER_HEAD,
                        .seq_len = 2048,
                        .hidden = 4096,
                        .vocab = 32000,
                        .final_norm = true};
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&head, &err) == 0, "%s", err.msg);
    CHECK_NEAR(tsl_roofline_layer_bwd_s(&apex, &head, S, 1, false, 32000) -
                   tsl_roofline_layer_bwd_s(&te, &head, S, 1, false, 32000),
               4.0 * e / W + L, 1e-12, "the head's final norm");
    CHECK(tsl_norm_impl_parse("apex") == TSL_NORM_IMPL_APEX &&
              tsl_norm_impl_parse("te") == TSL_NORM_IMPL_TE && tsl_norm_impl_parse("Apex") == -1 &&
              tsl_norm_impl_parse(NULL) == -1 &&
              strcmp(tsl_norm_impl_name(TSL_NORM_IMPL_APEX), "apex") == 0 &&
              tsl_norm_impl_name(TSL_NORM_IMPL_COUNT) == NULL,
          "names");
    CHECK(tsl_norm_impl_ok(TSL_NORM_IMPL_APEX, &err) == 0 &&
              tsl_norm_impl_ok(TSL_NORM_IMPL_COUNT, &err) != 0 && strstr(err.msg, "norm_impl: 2"),
          "%s", err.msg);
}

/* The head's final norm (roofline.h "The head's final norm", cost model 183): a head
 * with final_norm adds, over its T·h input elements, a fused norm's 4 B forward in one
 * kernel and 6 B backward in two (TE's dγ finalize), over the rank's T/t rows under
 * sequence parallelism; an eager RMSNorm head (torchtitan eager) the chain's 36 / 92 B
 * in 8 / 14 kernels; under autocast 14 / 26 B in 2 / 3 kernels. One host op a kernel.
 * Before cost model 183 the head priced the same with and without it. */
static void test_final_norm(void)
{
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, 989e12 * 0.777, 3350e9);
    tsl_layer_t head = {.kind = TSL_LAYER_HEAD, .seq_len = 2048, .hidden = 4096, .vocab = 32000};
    tsl_layer_t fn = head;
    fn.final_norm = true;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&head, &err) == 0 && tsl_layer_derive(&fn, &err) == 0, "%s", err.msg);
    const double e = 2.0 * 2048 * 4096, W = d.mem_bw, L = d.launch_s, V = 32000;
#define DF(dev, a, b, t, sp)                                                                       \
    (tsl_roofline_layer_fwd_s(dev, a, 2, t, sp, V) - tsl_roofline_layer_fwd_s(dev, b, 2, t, sp, V))
#define DB(dev, a, b, t, sp)                                                                       \
    (tsl_roofline_layer_bwd_s(dev, a, 2, t, sp, V) - tsl_roofline_layer_bwd_s(dev, b, 2, t, sp, V))
    CHECK_NEAR(DF(&d, &fn, &head, 1, false), 4.0 * e / W + L, 1e-12, "fused forward %g",
               DF(&d, &fn, &head, 1, false));
    CHECK_NEAR(DB(&d, &fn, &head, 1, false), 6.0 * e / W + 2 * L, 1e-12, "fused backward %g",
               DB(&d, &fn, &head, 1, false));
    CHECK_NEAR(DF(&d, &fn, &head, 4, true), 4.0 * e / 4 / W + L, 1e-12, "SP: the rank's rows");
    CHECK_NEAR(DF(&d, &fn, &head, 4, false), 4.0 * e / W + L, 1e-12, "TP alone: every row");
    tsl_roofline_dev_t ops = d; /* one second an op: the pass's op count */
    ops.host_op_s = 1.0;
    CHECK(DF(&ops, &fn, &head, 1, false) == 1 && DB(&ops, &fn, &head, 1, false) == 2,
          "host ops +%g / +%g", DF(&ops, &fn, &head, 1, false), DB(&ops, &fn, &head, 1, false));
    tsl_roofline_dev_t eg = d; /* torchtitan eager: the RMSNorm chain */
    eg.eager = true;
    tsl_layer_t rh = head, rf = fn;
    rh.rms_norm = rf.rms_norm = true;
    CHECK(tsl_layer_derive(&rh, &err) == 0 && tsl_layer_derive(&rf, &err) == 0, "%s", err.msg);
    CHECK_NEAR(DF(&eg, &rf, &rh, 1, false), 36.0 * e / W + 8 * L, 1e-12, "eager forward");
    CHECK_NEAR(DB(&eg, &rf, &rh, 1, false), 92.0 * e / W + 14 * L, 1e-12, "eager backward");
    CHECK_NEAR(DF(&eg, &fn, &head, 1, false), 4.0 * e / W + L, 1e-12,
               "eager, a LayerNorm head: the fused kernel");
    tsl_roofline_dev_t ac = d; /* autocast: the fp32 norm and its casts */
    ac.autocast = true;
    CHECK_NEAR(DF(&ac, &fn, &head, 1, false), 14.0 * e / W + 2 * L, 1e-12, "autocast forward");
    CHECK_NEAR(DB(&ac, &fn, &head, 1, false), 26.0 * e / W + 3 * L, 1e-12, "autocast backward");
#undef DF
#undef DB
    tsl_layer_t bad = head;
    bad.kind = TSL_LAYER_ENCODER;
    bad.final_norm = true;
    bad.heads = 32;
    bad.ffn_hidden = 16384;
    CHECK(tsl_layer_derive(&bad, &err) == -1 && strstr(err.msg, "final_norm") != NULL, "%s",
          err.msg);
}

/* Mamba's gate and gated norm (roofline.h "Mamba's gate and gated norm", cost model
 * 183): Nemotron 3 Nano's mixer (h 2688, 64 heads of 64, 8 groups, state 128) over
 * T = 4096 tokens at TP 1. Forward the gate's bytes ride in the chunk-scan kernel (4 B
 * an element of d_i: no op of its own), backward _chunk_scan_bwd_dz is one kernel of
 * 12 B an element and the grouped norm three kernels (the Triton one, _dw.sum(0), the
 * cast): with one second an op the backward counts 3 ops more than cost model 180's,
 * the forward none. */
static void test_mamba_gate(void)
{
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, 989e12 * 0.777, 3350e9);
    tsl_layer_t mm = nano_mixer();
    mm.rms_norm = true;
    mm.no_dropout = true;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&mm, &err) == 0, "%s", err.msg);
    tsl_roofline_dev_t ops = d;
    ops.host_op_s = 1.0;
    ops.launch_s = 0.0;
    ops.mem_bw = 1e30; /* the host floor alone: the pass's op count */
    double of = tsl_roofline_layer_fwd_s(&ops, &mm, 2, 1, false, 0);
    double ob = tsl_roofline_layer_bwd_s(&ops, &mm, 2, 1, false, 0);
    /* cost model 180 counted 14 and 27: the dz kernel and two more norm kernels */
    CHECK(of == 14 && ob == 30, "Mamba ops %g / %g (cost model 180: 14 / 27)", of, ob);
}

int main(void)
{
    test_one_pass();
    test_tp_gemms();
    test_gpt_oss_experts();
    test_yarn_eager_rope();
    test_qk_norm();
    test_expert_probs();
    test_fused_srelu();
    test_recompute_nested_moe();
    test_alltoall_dispatcher();
    test_unfused_permute();
    test_grouped_split_quantize();
    test_fc2_recast();
    test_proj_orig_input();
    test_orig_input_sites();
    test_fp8_impl();
    test_fp8_layer();
    test_fp8_moe_layer();
    test_nvfp4_layer();
    test_mxfp8_gemm_rate();
    test_mxfp8_cast_rate();
    test_h200_gemm();
    test_sustained_msmf();
    test_h100_96g_cap();
    test_gemm();
    test_layers();
    test_causal();
    test_window();
    test_curve();
    test_h100_fit();
    test_head_dim_96();
    test_megatron_scores();
    test_unfused_elementwise();
    test_backward();
    test_flash();
    test_default_bwd_keys();
    test_blackwell_flash();
    test_a100_flash();
    test_padded_head();
    test_a100_attn_kernel();
    test_hopper_attn_kernel();
    test_blackwell_mla();
    test_blackwell_swa();
    test_fp8_window_square();
    test_cp_ring();
    test_cp_ring_fixed_tokens();
    test_te_ring_host();
    test_loss();
    test_host_floor();
    test_cuda_graphs();
    test_launch_blocking();
    test_autocast();
    test_eager();
    test_transgan_eager();
    test_hf_gpt2_eager();
    test_hf_gpt2_block_softmax();
    test_tp_whole_heads();
    test_unaligned_head();
    test_loss_time();
    test_composer_metrics();
    test_alibi();
    test_t5_block();
    test_final_norm();
    test_apex_norm();
    test_mamba_gate();
    return CHECK_DONE();
}

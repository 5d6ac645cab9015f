/*
 * test_gemm_tile.c — the per-tile fixed cost of FP8 GEMMs and of weight-gradient
 * GEMMs that accumulate into a kept gradient buffer (gemm_eff.h tsl_gemm_tile_cost,
 * docs/cost-model.md "The tile's fixed cost under FP8", "The wgrad epilogue under
 * gradient-accumulation fusion"): the factor by hand, an FP8 FFN layer's backward with
 * and without Transformer Engine's fused wgrad accumulation (fp32 and bf16 main_grad)
 * by hand, a bf16 FFN and attention layer's likewise (Megatron-LM's
 * gradient_accumulation_fusion), and the curve against DeepGEMM's published
 * H800 FP8 tables (deepseek-ai/DeepGEMM README at 989c9e3, 2025-04-09; PR #95, the
 * weight-gradient kernels, 2025-05-06), which it must reproduce without a fitted
 * figure: the forward shapes within the bf16 fit's spread, the fp32-accumulating
 * wgrad shapes, which the fit's bf16-output epilogue priced 21–42 % fast, near 1.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cluster.h"
#include "cost.h"
#include "gemm_eff.h"
#include "layer_dense.h"
#include "roofline.h"

/* the factor: the main loop's rate ratio times the epilogue's bytes over 2 */
static void test_factor(void)
{
    CHECK_NEAR(tsl_gemm_tile_cost(1.0, TSL_GEMM_FIT_EPILOGUE_BYTES), 1.0, 1e-15, "bf16: the fit");
    CHECK_NEAR(tsl_gemm_tile_cost(2.0, 2.0), 2.0, 1e-15, "twice the rate: twice the depth");
    CHECK_NEAR(tsl_gemm_tile_cost(1.0, TSL_GEMM_FP32_ACC_EPILOGUE_BYTES), 4.0, 1e-15,
               "fp32 read + written: 8 B of 2");
    CHECK_NEAR(tsl_gemm_tile_cost(0.0, 0.0), 1.0, 1e-15, "unknown: 1");
    CHECK_NEAR(tsl_gemm_tile_cost(NAN, 8.0), 4.0, 1e-15, "a NaN ratio: 1");
    tsl_gemm_eff_t g;
    tsl_gemm_eff_for_gpu(&g, "H100-80G", 989e12, 3350e9);
    /* k_half 208.13; at 4x: 832.5; k = 2048, 8192 x 8192 output (occupancy 1) */
    double k_half = 0.705 * 989e12 / 3350e9;
    CHECK_NEAR(tsl_gemm_eff_shape_tc(&g, 8192, 8192, 2048, 1, 4.0), 2048 / (2048 + 4 * k_half),
               1e-12, "depth at 4 k_half");
    CHECK(tsl_gemm_eff_shape_tc(&g, 8192, 8192, 2048, 1, 1.0) ==
              tsl_gemm_eff_shape(&g, 8192, 8192, 2048, 1),
          "factor 1 is the fitted curve");
    CHECK(tsl_gemm_eff_shape_tc(&g, 8192, 8192, 2048, 1, -1.0) ==
              tsl_gemm_eff_shape(&g, 8192, 8192, 2048, 1),
          "factor <= 0 is 1");
}

/* One FFN layer (h 4096, f 16384, T = 2 × 2048 tokens) in FP8 (delayed) on the H100
 * curve: F = 989 × 0.777, F8 = 1979 × 0.688, r = F8 / F = 1.7718. Every FP8 GEMM's
 * depth is k / (k + r · 208.13 = 368.8); the wgrad GEMMs (dW of (h, f) and (f, h), depth
 * T) accumulating into an fp32 main_grad (wgrad_acc_bytes 4: 2 · 4 = 8 B, C read and D
 * written) k / (k + 4 r · 208.13 = 1475.1), into a bf16 one (2: 4 B) k / (k + 2 r · 208.13
 * = 737.5), each moving its bytes per output element in place of 2. All compute-bound
 * (8192 × ... outputs: occupancy 1). */
static double g8(double m, double n, double k, double F8, double W, double L, double kh, double epi)
{
    double u = k / (k + kh);
    return fmax(2.0 * m * n * k / (F8 * u), (m * k + k * n + epi * m * n) / W) + L;
}

static void test_fp8_wgrad_layer(void)
{
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, 989e12 * 0.777, 3350e9);
    tsl_gemm_eff_for_gpu(&d.shape, "H100-80G", 989e12, 3350e9);
    d.fp8_flops = 1979e12 * 0.688;
    d.fp8 = TSL_FP8_DELAYED;
    tsl_layer_t l = ffn_4k();
    const double T = 4096, h = 4096, f = 16384, W = d.mem_bw, L = d.launch_s, F8 = d.fp8_flops;
    const double kh = 0.705 * 989e12 / 3350e9 * F8 / d.gemm_flops;
    CHECK_NEAR(kh, 368.77, 0.01, "FP8 k_half %g", kh);
    double plain = tsl_roofline_layer_bwd_s(&d, &l, 2, 1, false, 0);
    d.wgrad_acc_bytes = 4.0; /* an fp32 main_grad */
    double acc = tsl_roofline_layer_bwd_s(&d, &l, 2, 1, false, 0);
    double want = g8(h, f, T, F8, W, L, 4 * kh, 8) - g8(h, f, T, F8, W, L, kh, 2) +
                  g8(f, h, T, F8, W, L, 4 * kh, 8) - g8(f, h, T, F8, W, L, kh, 2);
    CHECK_NEAR(acc - plain, want, 1e-12, "fused wgrad accumulation: +%g s (want %g)", acc - plain,
               want);
    /* each wgrad GEMM 4096 / (4096 + 368.8) over 4096 / (4096 + 1475.1): 1.248x */
    CHECK_NEAR(g8(h, f, T, F8, W, 0, 4 * kh, 8) / g8(h, f, T, F8, W, 0, kh, 2), 1.2478, 1e-3,
               "wgrad 1.248x");
    /* a bf16 main_grad (Megatron's grad_reduce_in_fp32 off): 2 + 2 B, 2 k_half */
    d.wgrad_acc_bytes = 2.0;
    double acc16 = tsl_roofline_layer_bwd_s(&d, &l, 2, 1, false, 0);
    want = g8(h, f, T, F8, W, L, 2 * kh, 4) - g8(h, f, T, F8, W, L, kh, 2) +
           g8(f, h, T, F8, W, L, 2 * kh, 4) - g8(f, h, T, F8, W, L, kh, 2);
    CHECK_NEAR(acc16 - plain, want, 1e-12, "bf16 main_grad: +%g s (want %g)", acc16 - plain, want);
    /* 4096 / (4096 + 368.8) over 4096 / (4096 + 737.5): 1.0826x */
    CHECK_NEAR(g8(h, f, T, F8, W, 0, 2 * kh, 4) / g8(h, f, T, F8, W, 0, kh, 2), 1.0826, 1e-3,
               "wgrad 1.083x");
    /* the forward has no wgrad: unchanged */
    tsl_roofline_dev_t d0 = d;
    d0.wgrad_acc_bytes = 0.0;
    CHECK(tsl_roofline_layer_fwd_s(&d, &l, 2, 1, false, 0) ==
              tsl_roofline_layer_fwd_s(&d0, &l, 2, 1, false, 0),
          "the forward does not accumulate");
}

/* The same FFN layer in bf16 (F = 989 × 0.777, k_half 208.13, W = 0.8 × 3.35 TB/s): its
 * two wgrad GEMMs under Megatron-LM's gradient_accumulation_fusion (Apex's
 * wgrad_gemm_accum_fp32: cublasGemmEx, C = D fp32, beta 1) take depth T / (T + 4 · 208.13)
 * = 0.8311 against the fit's 0.9516 and move 2 (A) + 2 (B) + 8 (C read, D written) B per
 * element: 1.145x each; into a bf16 buffer (wgrad_accum_fp16, Tessel's executor) 2 ·
 * 208.13: 0.9077, 1.048x. The dX GEMMs and the forward stay the fit's. */
static double g16(double m, double n, double k, double F, double W, double L, double kh, double epi)
{
    double u = k / (k + kh);
    return fmax(2.0 * m * n * k / (F * u), (2.0 * (m * k + k * n) + epi * m * n) / W) + L;
}

static void test_bf16_wgrad_layer(void)
{
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, 989e12 * 0.777, 3350e9);
    tsl_gemm_eff_for_gpu(&d.shape, "H100-80G", 989e12, 3350e9);
    tsl_layer_t l = ffn_4k();
    const double T = 4096, h = 4096, f = 16384, W = d.mem_bw, L = d.launch_s, F = d.gemm_flops;
    const double kh = 0.705 * 989e12 / 3350e9;
    double plain = tsl_roofline_layer_bwd_s(&d, &l, 2, 1, false, 0);
    tsl_roofline_dev_t fwd0 = d;
    d.wgrad_acc_bytes = 4.0;
    double acc = tsl_roofline_layer_bwd_s(&d, &l, 2, 1, false, 0);
    double want = g16(h, f, T, F, W, L, 4 * kh, 8) - g16(h, f, T, F, W, L, kh, 2) +
                  g16(f, h, T, F, W, L, 4 * kh, 8) - g16(f, h, T, F, W, L, kh, 2);
    CHECK_NEAR(acc - plain, want, 1e-12, "bf16 fp32 accumulation: +%g s (want %g)", acc - plain,
               want);
    CHECK_NEAR(g16(h, f, T, F, W, 0, 4 * kh, 8) / g16(h, f, T, F, W, 0, kh, 2),
               (4096 + 4 * kh) / (4096 + kh), 1e-12, "compute-bound: 1.145x");
    CHECK_NEAR((4096 + 4 * kh) / (4096 + kh), 1.1451, 1e-4, "1.145x by hand");
    d.wgrad_acc_bytes = 2.0;
    double acc16 = tsl_roofline_layer_bwd_s(&d, &l, 2, 1, false, 0);
    want = g16(h, f, T, F, W, L, 2 * kh, 4) - g16(h, f, T, F, W, L, kh, 2) +
           g16(f, h, T, F, W, L, 2 * kh, 4) - g16(f, h, T, F, W, L, kh, 2);
    CHECK_NEAR(acc16 - plain, want, 1e-12, "bf16 buffer: +%g s (want %g)", acc16 - plain, want);
    CHECK_NEAR((4096 + 2 * kh) / (4096 + kh), 1.0484, 1e-4, "1.048x by hand");
    CHECK(tsl_roofline_layer_fwd_s(&d, &l, 2, 1, false, 0) ==
              tsl_roofline_layer_fwd_s(&fwd0, &l, 2, 1, false, 0),
          "bf16 forward unchanged");
    /* the wgrad share grows by the same GEMMs (zero-bubble's W) */
    CHECK(tsl_roofline_layer_wgrad_frac(&d, &l, 2, 1, false, 0) >
              tsl_roofline_layer_wgrad_frac(&fwd0, &l, 2, 1, false, 0),
          "dW's share grows");
}

/* A self-attention layer (h 4096, 32 heads, T = 4096): only its two linears' dW GEMMs
 * accumulate — QKV's (h, 3h) and the projection's (h, h), depth T — the core's batched
 * GEMMs (both operands activations) write fresh gradients as before. */
static void test_bf16_wgrad_attention(void)
{
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, 989e12 * 0.777, 3350e9);
    tsl_gemm_eff_for_gpu(&d.shape, "H100-80G", 989e12, 3350e9);
    d.shape.attn_fwd_flops = 0.0; /* the core as batched GEMMs: they must not move */
    d.shape.attn_bwd_flops = 0.0;
    d.shape.attn_mla_bwd_flops = 0.0;
    tsl_layer_t l = {.kind = TSL_LAYER_ATTENTION,
                     .seq_len = 2048,
                     .hidden = 4096,
                     .heads = 32,
                     .no_dropout = true,
                     .no_bias = true};
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    const double T = 4096, h = 4096, W = d.mem_bw, L = d.launch_s, F = d.gemm_flops;
    const double kh = 0.705 * 989e12 / 3350e9;
    double plain = tsl_roofline_layer_bwd_s(&d, &l, 2, 1, false, 0);
    d.wgrad_acc_bytes = 4.0;
    double acc = tsl_roofline_layer_bwd_s(&d, &l, 2, 1, false, 0);
    double want = g16(h, 3 * h, T, F, W, L, 4 * kh, 8) - g16(h, 3 * h, T, F, W, L, kh, 2) +
                  g16(h, h, T, F, W, L, 4 * kh, 8) - g16(h, h, T, F, W, L, kh, 2);
    CHECK_NEAR(acc - plain, want, 1e-12, "attention: QKV and projection dW alone, +%g s (want %g)",
               acc - plain, want);
}

/* Which stacks' weight-gradient GEMMs accumulate (cost.c wgrad_acc_bytes), through
 * tsl_cost_layer on one H100 (the synchronising micro-batch's backward, bwd_sync_s,
 * which carries no accumulation kernel of its own): by default the GEMM accumulates
 * into the g-byte buffer (the executor, Megatron-LM: g 2, grad_reduce_bytes 4: g 4),
 * by the roofline's difference for that FFN layer; a fresh 2-byte gradient under
 * lazy_grads (PyTorch FSDP), unfused_grad_accum (the stack's own add) and autocast, and
 * under torchao's FP8 (torchtitan). */
static double sync_bwd(const tsl_cost_env_t *env, const tsl_layer_t *l)
{
    tsl_strategy_t s = {0};
    tsl_layer_cost_t r;
    tsl_cost_layer(env, l, &s, NULL, 2, &r);
    return r.bwd_sync_s;
}

static void test_stack_switch(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "1xH100-80G", &err) == 0, "%s", err.msg);
    CHECK(tsl_cost_env_init(&env, &c, 0, 1, &err) == 0, "%s", err.msg);
    env.host_op_s = 0.0; /* the GPU's time alone */
    tsl_layer_t l = ffn_4k();
    double fused2 = sync_bwd(&env, &l);
    env.knobs.grad_reduce_bytes = 4;
    double fused4 = sync_bwd(&env, &l);
    env.knobs.lazy_grads = true;
    double fresh = sync_bwd(&env, &l);
    env.knobs.lazy_grads = false;
    env.knobs.unfused_grad_accum = true;
    CHECK(sync_bwd(&env, &l) == fresh, "unfused_grad_accum: a fresh gradient");
    env.knobs.unfused_grad_accum = false;
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, env.device_flops, env.device_mem_bw);
    d.shape = env.gemm_shape;
    double r0 = tsl_roofline_layer_bwd_s(&d, &l, 2, 1, false, 0);
    d.wgrad_acc_bytes = 2.0;
    double r2 = tsl_roofline_layer_bwd_s(&d, &l, 2, 1, false, 0);
    d.wgrad_acc_bytes = 4.0;
    double r4 = tsl_roofline_layer_bwd_s(&d, &l, 2, 1, false, 0);
    CHECK_NEAR(fused2 - fresh, r2 - r0, 1e-12, "default, bf16 buffer: +%g s", fused2 - fresh);
    CHECK_NEAR(fused4 - fresh, r4 - r0, 1e-12, "fp32 buffer: +%g s", fused4 - fresh);
    CHECK(fused4 > fused2 && fused2 > fresh, "8 B > 4 B > the fit's 2");
    /* torchao's FP8 writes a fresh gradient (torchtitan), lazy_grads or not */
    env.knobs.fp8 = TSL_FP8_TENSORWISE;
    env.knobs.fp8_impl = TSL_FP8_IMPL_TORCHAO;
    double ao = sync_bwd(&env, &l);
    env.knobs.lazy_grads = true;
    CHECK(sync_bwd(&env, &l) == ao, "torchao: fresh either way");
    /* Transformer Engine's does accumulate */
    env.knobs.lazy_grads = false;
    env.knobs.fp8_impl = TSL_FP8_IMPL_TE;
    double te = sync_bwd(&env, &l);
    env.knobs.lazy_grads = true;
    CHECK(sync_bwd(&env, &l) < te, "TE FP8: accumulates unless FSDP's fresh gradient");
    /* autocast's AccumulateGrad: a fresh gradient from the GEMM */
    env.knobs = (tsl_cost_knobs_t){.autocast = true};
    double ac = sync_bwd(&env, &l);
    env.knobs.lazy_grads = true;
    CHECK(sync_bwd(&env, &l) == ac, "autocast: fresh");
    tsl_cluster_free(&c);
}

/* DeepGEMM's H800 FP8 tables (H800 = the H100 part: 132 SMs, 3.35 TB/s, FP8 1979 ×
 * 0.632): TFLOPS as published against the curve's rate F8 · u (b groups of
 * m × n × k; every shape here compute-bound). DeepGEMM (1×128 / 128×128 block
 * scaling) is as fast as or faster than cuBLAS on these shapes (its README: 1.1–1.4x
 * its CUTLASS 3.6 baseline), so the curve may sit below it, not far above. Since cost
 * model 130 the curve is the sustained clock's (the H200's MSMF FP8, 1374 MHz) and
 * DeepGEMM's tables are kernel timings at the boost clock (its 1520 TFLOPS at 4096 ×
 * 7168 × 16384 is above the 1979 · 1374 / 1980 = 1373 a 1374 MHz clock allows), so the
 * curve sits lower against them than at 129's burst e_max 0.688. */
typedef struct {
    double b, m, n, k, tflops;
} dg_shape_t;

static double rate(const tsl_gemm_eff_t *g, double F8, double r, double epi, const dg_shape_t *s,
                   double W)
{
    /* as roofline.c prices an FP8 GEMM: max(compute, bytes) + L */
    double u = tsl_gemm_eff_shape_tc(g, s->m, s->n, s->k, s->b, tsl_gemm_tile_cost(r, epi));
    double flops = 2.0 * s->m * s->n * s->k * s->b;
    double bytes = (s->m * s->k + s->k * s->n + epi * s->m * s->n) * s->b;
    return flops / (fmax(flops / (F8 * u), bytes / W) + TSL_ROOFLINE_LAUNCH_S) / 1e12;
}

static void test_deepgemm_h800(void)
{
    const tsl_gpu_spec_t *gpu = tsl_gpu_find("H800");
    CHECK(gpu != NULL, "H800 built in");
    if (gpu == NULL)
        return;
    tsl_gemm_eff_t g;
    tsl_gemm_eff_for_gpu(&g, gpu->name, gpu->peak_flops, gpu->mem_bw);
    double F8 = tsl_gpu_fp8_flops(gpu), r = F8 / (gpu->peak_flops * gpu->efficiency);
    double W = TSL_ROOFLINE_MEM_EFF * gpu->mem_bw;
    CHECK_NEAR(F8, 1979e12 * 0.632, 1e6, "H800 FP8 rate");
    /* normal GEMMs at M 4096 and the contiguous grouped layout (the training
     * forward): bf16 output, written once */
    static const dg_shape_t fwd[] = {{1, 4096, 2112, 7168, 1127}, {1, 4096, 24576, 1536, 1212},
                                     {1, 4096, 32768, 512, 775},  {1, 4096, 7168, 16384, 1520},
                                     {1, 4096, 4096, 7168, 1410}, {1, 4096, 7168, 2048, 1168},
                                     {4, 8192, 4096, 7168, 1346}, {4, 8192, 7168, 2048, 1214},
                                     {8, 4096, 4096, 7168, 1346}, {8, 4096, 7168, 2048, 1214}};
    double lo = 9, hi = 0, lo1 = 9, hi1 = 0;
    for (size_t i = 0; i < sizeof fwd / sizeof fwd[0]; i++) {
        double q = rate(&g, F8, r, 2, &fwd[i], W) / fwd[i].tflops;
        double q1 = rate(&g, F8, 1, 2, &fwd[i], W) / fwd[i].tflops;
        lo = fmin(lo, q), hi = fmax(hi, q), lo1 = fmin(lo1, q1), hi1 = fmax(hi1, q1);
        printf("fwd   %g x %5g x %5g x %5g: DeepGEMM %4g, cost model 46 %6.1f (%.3f), 45 %6.1f\n",
               fwd[i].b, fwd[i].m, fwd[i].n, fwd[i].k, fwd[i].tflops, q * fwd[i].tflops, q,
               q1 * fwd[i].tflops);
    }
    /* cost model 137: 0.80–1.02 of DeepGEMM (46 at the burst e_max: 0.87–1.10); the bf16
     * k_half has 0.81–1.12, k = 512 at 867 TFLOPS against 775 (at the burst e_max
     * 0.88–1.21, 942), above every shape the FP8 tile cost prices */
    CHECK(lo > 0.78 && hi < 1.05, "forward: %.3f–%.3f of DeepGEMM", lo, hi);
    CHECK(hi1 > 1.1 && hi1 > hi + 0.08, "the bf16 tile cost prices k = 512 fast: %.3f", hi1);
    (void)lo1;
    /* the weight-gradient kernels (fp8 × fp8 → fp32, D = C + A·B: the fp32 gradient
     * read and written), dense and k-grouped: k is the tokens */
    static const dg_shape_t wgrad[] = {
        {1, 7168, 2112, 4096, 920},  {1, 1536, 24576, 4096, 986},  {1, 512, 32768, 4096, 878},
        {1, 16384, 7168, 4096, 994}, {1, 7168, 4096, 4096, 942},   {1, 2048, 7168, 4096, 920},
        {1, 7168, 2112, 8192, 1052}, {1, 1536, 24576, 8192, 1092}, {1, 512, 32768, 8192, 1014},
        {4, 7168, 4096, 4096, 939},  {4, 2048, 7168, 4096, 900},   {4, 7168, 4096, 8192, 1044},
        {4, 2048, 7168, 8192, 1033}, {8, 7168, 4096, 4096, 942}};
    lo = 9, hi = 0, lo1 = 9;
    for (size_t i = 0; i < sizeof wgrad / sizeof wgrad[0]; i++) {
        double q =
            rate(&g, F8, r, TSL_GEMM_FP32_ACC_EPILOGUE_BYTES, &wgrad[i], W) / wgrad[i].tflops;
        double q1 = rate(&g, F8, 1, 2, &wgrad[i], W) / wgrad[i].tflops;
        lo = fmin(lo, q), hi = fmax(hi, q), lo1 = fmin(lo1, q1);
        printf("wgrad %g x %5g x %5g x %5g: DeepGEMM %4g, cost model 46 %6.1f (%.3f), 45 %6.1f\n",
               wgrad[i].b, wgrad[i].m, wgrad[i].n, wgrad[i].k, wgrad[i].tflops, q * wgrad[i].tflops,
               q, q1 * wgrad[i].tflops);
    }
    /* cost model 137: 0.92–1.03 (at the burst e_max 0.97–1.13, the bf16 epilogue >= 1.2x) */
    CHECK(lo > 0.9 && hi < 1.05, "wgrad: %.3f–%.3f of DeepGEMM", lo, hi);
    CHECK(lo1 > 1.08 && lo1 > hi,
          "the bf16-output epilogue priced every wgrad shape >= 1.08x: %.3f", lo1);
}

int main(void)
{
    test_factor();
    test_fp8_wgrad_layer();
    test_bf16_wgrad_layer();
    test_bf16_wgrad_attention();
    test_stack_switch();
    test_deepgemm_h800();
    return CHECK_DONE();
}

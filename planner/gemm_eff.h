/*
 * gemm_eff.h — the fraction of a GPU's large-GEMM rate that one GEMM of a given
 * shape reaches (docs/cost-model.md, "Compute — a roofline per GEMM", "GEMM
 * efficiency by shape").
 *
 *   rate(m, n, k, b) = peak · e_max · occupancy · depth
 *   occupancy        = min(1, units / SMs),
 *                      units = ⌈m/T⌉ · ⌈n/T⌉ · b · max(1, ⌊k / K_split⌋)
 *   depth            = k / (k + k_half),   k_half = c · peak / mem_bw
 *
 * e_max is the GPU table's efficiency (cluster_hw.c): the rate a large, deep GEMM
 * sustains. occupancy: a GEMM is cut into T × T output tiles, one thread block
 * (one SM) each; a grid of fewer tiles than SMs leaves SMs idle. cuBLAS splits a
 * deep k across blocks when the grid is short (split-K / stream-K), so every
 * K_split of depth counts as one more unit. depth: each tile pays a fixed
 * prologue and epilogue (filling the pipeline, writing the fp32-accumulated tile)
 * that take as long as k_half of main loop; that fixed cost is memory traffic, so
 * k_half scales with the GPU's machine balance peak / mem_bw (FLOP per byte).
 *
 * T, K_split and c are fitted once, to the measured cuBLAS table of
 * deploy/profiles/h100-80g.json (38 shapes, tessel-worker, bf16); SMs come from
 * the datasheets. Above one wave the occupancy is 1: the partial last wave is
 * smoothed away by cuBLAS's choice among tile shapes (measured: a hard wave
 * quantisation fits the table worse). No padded-work (tile quantization) term:
 * every edge of the table is a multiple of 64, so it cannot fit one, and cuBLASLt
 * has 96- and 160-wide tiles besides (docs/cost-model.md, "Tile quantization").
 *
 * Pure: no allocation, no I/O.
 */
#ifndef TSL_GEMM_EFF_H
#define TSL_GEMM_EFF_H

#include <stdbool.h>
#include <stdint.h>

#define TSL_GEMM_TILE               128.0  /* T: output tile edge (cuBLAS bf16 Hopper/Ampere) */
#define TSL_GEMM_SPLIT_K            1024.0 /* K_split: depth per extra split-K unit (fitted) */
#define TSL_GEMM_K_HALF_PER_BALANCE 0.705  /* c: k_half per FLOP/byte (fitted, H100) */

/* The fused (flash) attention kernel's share of the datasheet peak on the H100,
 * forward and backward (the backward's FLOPs counted as 2.5 × the forward's).
 * Forward: FlashAttention-2 "achieves only 35% utilization" of the H100's peak
 * (Shah et al. 2024, FlashAttention-3, Sec. 1); this project measured 0.37–0.40
 * through PyTorch SDPA (bench/results/torch_blocks-h100.json, core-sdpa, h 1024
 * and 2048, mb 16, s 1024). Backward: measured, the SDPA attention block's
 * backward less its GEMMs and copies, 0.18 at both widths (docs/cost-model.md).
 * A kernel named by the request (attn_kernel: flash2, cudnn) takes its own published
 * share by shape instead (attn_kernel.h, the tsl_gemm_eff_t's attn_kernel_peak). */
#define TSL_ATTN_H100_FWD_EFF 0.35
#define TSL_ATTN_H100_BWD_EFF 0.18
/* The key length that backward figure was measured at (torch_blocks-h100.json: s 1024,
 * head dimension 64, non-causal). A flash backward's per-query work (the dO·O row sums
 * before the main loop, the fp32 dQ's conversion after it, the tile prologues) is paid
 * once per query block whatever the keys, so the share rises with the keys a query sees:
 * since cost model 172 the default backward is 0.18 × FlashAttention-2's published
 * backward at those keys over its own at these (attn_kernel.h
 * tsl_attn_hopper_default_bwd_keys). */
#define TSL_ATTN_H100_BWD_KEYS 1024.0
/* Every Hopper attention figure above and in attn_kernel.h is a burst timing: FA3's
 * Figs. 5-6 and Sec. 1 time kernels back to back for milliseconds, and
 * torch_blocks-h100.json takes 3 warm-up and 10 timed calls (its 8192^3 reference GEMM
 * ran 795 TFLOP/s there, above any sustained GH100 rate). A dense step holds the GPU at
 * its 700 W limit, where the clock settles lower (cost model 137, cluster_hw.c
 * EFF_GH100). Since cost model 142 every GH100 part (H100, H200, H800) takes each
 * attention share times the H200's published settled / burst bf16 ratio, MSMF 708.5 /
 * MAMF 841.9 TFLOPS (ml-engineering fast-mamf 082816f): 0.842. Assumed: the fused
 * core loses what the GEMM loses at that clock (on the B200 flashinfer PR #2899 saw
 * its FA4 kernel fall 1450 -> 1237 TFLOP/s, x 0.853, at ~1580 MHz under back-to-back
 * calls, where the B200's GEMM MSMF / MAMF is 0.822). Since cost model 188 the named
 * FlashAttention-2 shares on the 700 W parts are the exception: at ~37 % of peak the
 * kernel is assumed to stay below the limit at its boost clock (attn_kernel.h
 * tsl_attn_kernel_holds_clock). */
#define TSL_ATTN_GH100_SETTLED (708.5 / 841.9)
/* The 500 W H100-96G (Meta's Grand Teton H100 SXM, HBM2e, torchtitan's benchmark hosts) at
 * its cap, over the 700 W figures every GH100 part takes (EFF_GH100, FP8_EFF_GH100 and the
 * attention shares above): what a training step on the HBM2e H100 SXM (94 GiB, 2.41 TB/s;
 * assumed the same part as Grand Teton's 96 GB, 2.4 TB/s) keeps at a 500 W power limit of
 * its 700 W rate, Mayr et al. 2026 (arXiv:2603.16164) Table 4, row "Pre-training / H100":
 * LLaMA 3 8B continued pre-training under LitGPT, one node of four GPUs, 27,705.3 against
 * 30,271.0 tokens/s per GPU = 0.915 (cost model 143). One figure for the compute-bound
 * kernels — GEMMs and the fused attention core, bf16 and FP8 alike. Assumed: the kernels
 * lose at least what the whole step loses (the step's memory-bound kernels and its
 * all-gathers are held by HBM and links, not the SM clock, so they lose less: 0.915 is
 * the smallest loss the table allows them), and FP8 GEMMs as much as bf16 ones (they draw
 * more per clock: the H200's MSMF settles FP8 at 1374 MHz, bf16 at 1465, both ~693 W).
 * The memory-bound kernels keep their rate. */
#define TSL_GH100_500W_SETTLED (27705.3 / 30271.0)
/* The same shares on the A100 (40 and 80 GB) for FlashAttention (v1)'s Triton port —
 * the kernel `attn_kernel` flash1-triton (attn_kernel.h), since cost model 121 (flash1,
 * v1's CUDA kernel, from 114 to 121); the A100's default and flash2 take
 * FlashAttention-2's published shares by shape, flash1 Fig. 4's v1 bars (attn_kernel.h
 * tsl_attn_ampere_share). FlashAttention's forward
 * "only reaches 30-50% of the theoretical maximum FLOPs/s" of the A100 and its
 * backward "only 25-35%" (Dao 2023, FlashAttention-2, arXiv:2307.08691, Sec. 1, of its
 * Figs. 5-6: A100 80GB SXM4, head dimension 64 and 128, s 512-16k; FLOPs 4·s²·hd·heads
 * forward, 2.5 × that backward, Tessel's count): the bands' midpoints, 0.32 of peak
 * over forward and backward, where the paper's Fig. 4 prints 72–110 TFLOP/s (0.23–0.35)
 * for FlashAttention and 78–102 (0.25–0.33) for its Triton port. The Triton port
 * (flash_attn_triton.py at HazyResearch/flash-attention eff9fe6b, what llm-foundry's
 * attn_impl triton runs) is, by its own docstring, faster forward, slower backward and
 * "slightly slower" forward + backward than that CUDA kernel: priced as it. */
#define TSL_ATTN_A100_FWD_EFF 0.40
#define TSL_ATTN_A100_BWD_EFF 0.30
/* The same shares on Blackwell (GB100: B200 and GB200), cuDNN's fused SDPA as
 * TransformerEngine runs it: NVIDIA/cudnn-frontend's published training sweeps on
 * one GB200 (benchmark/sdpa_benchmark_training/results: cuDNN 9.19.1, 2026-02, and
 * 9.22.0, 2026-04; bf16, head dim 128, 64 query / 8 KV heads, non-causal, s 2k–32k,
 * kernel time; FLOPs 4·s²·h·hd forward and 2.5 × that backward, Tessel's count):
 * forward 1245–1781 TFLOP/s, median 1665 = 0.67 of the 2500 peak; backward
 * 1089–1501, median 1362 = 0.54. B200 takes them of its own peak (the same part;
 * its own published sweep is cuDNN 9.13.1's, causal only, 0.52 / 0.42 at 8k: an
 * older kernel). docs/cost-model.md "Flash attention's rate". */
#define TSL_ATTN_GB100_FWD_EFF 0.67
#define TSL_ATTN_GB100_BWD_EFF 0.54
/* Every Blackwell attention figure here (the shares above and below) is a burst timing:
 * cudnn-frontend's benchmark_single_sdpa.py times ten calls, each one kernel under the
 * torch profiler after fresh torch.randn inputs, an L2 flush and a synchronize, so the
 * GPU idles between kernels of 1-10 ms and never settles at its power limit. A dense step
 * does (cost model 56: B200 e_max from its MSMF). Since cost model 145 B200 and GB200
 * take each attention share times the B200's published settled / burst bf16 ratio, MSMF
 * 1456.3 / MAMF 1770.9 TFLOPS (ml-engineering fast-mamf 082816f, ~994 W at 1339 MHz
 * against ~295 W at 1965 MHz): 0.822 — Hopper's rule since cost model 142
 * (TSL_ATTN_GH100_SETTLED). Assumed: the fused core loses what the GEMM loses at that
 * clock (flashinfer PR #2899 measured FA4 on a B200 fall 1450 -> 1237 TFLOP/s, x 0.853,
 * at ~1580 MHz under back-to-back calls); the GB200 at the B200's ratio (no GB200 MSMF
 * is published; its e_max takes the same ratio, cluster_hw.c). */
#define TSL_ATTN_GB100_SETTLED (1456.3 / 1770.9)
/* MLA's core (DeepSeek-V3: Q·K over 192, A·V over 128 per head) backward on the
 * same GPUs: the 9.22.0 sweep's `dsv3` runs (GB200, 128 heads, non-causal, s 2k–32k)
 * 1048–1175 TFLOP/s by cuDNN's count 2·(3·192 + 2·128) per score, median 1088;
 * Tessel counts 2.5 × 2·(192 + 128) = 0.9615 of that: 0.42 of the 2500 peak. Its
 * forward (1492–1812, median 1666) is the head-dimension-128 share. */
#define TSL_ATTN_GB100_MLA_BWD_EFF 0.42
/* A causal sliding window at head dimension 64 on the same GPUs (gpt-oss: 128 keys)
 * runs far below the causal rule below: cuDNN's two published sliding-window sweeps on
 * one GB200 (cudnn-frontend benchmark/sdpa_benchmark_training/results, bf16, head dim
 * 64, non-deterministic, s 2k–32k, FLOPs over the keys in the window as Tessel counts
 * them: gb200_919_only_cudnn/gpt_oss_20260226_175022.csv, cuDNN 9.19.1, window 1024,
 * 64 / 8 heads, 497–632 forward, 559–660 backward, in the tree until 50c8aeb;
 * gpt_oss/gb200/gpt_oss_20260424_100011.csv, cuDNN 9.22.0, window 128, 128 / 128
 * heads, 153–167 forward, 176–188 backward) follow the causal rule's form
 *   eff · v / (v + keys)
 * over the v keys visited per query with their own share and keys: forward 0.405 and
 * 668 (rms 3.8 % over 9 points; the window-128 forward at 32k, 104, left out),
 * backward 0.409 and 578 (rms 2.0 % over 10) — each 128-query block pays several key
 * tiles' worth of fixed cost on a window one to eight tiles wide, and a 64-wide head
 * halves each tile's work. B200 takes the shares of its own peak, as above. */
#define TSL_ATTN_GB100_SWA64_FWD_EFF  0.405
#define TSL_ATTN_GB100_SWA64_FWD_KEYS 668.0
#define TSL_ATTN_GB100_SWA64_BWD_EFF  0.409
#define TSL_ATTN_GB100_SWA64_BWD_KEYS 578.0
/* The same window's backward in FP8 attention (TransformerEngine's fp8_dpa, cuDNN's FP8
 * kernel): the 9.22.0 sweep above, data types fp8 and mxfp8 (same file, same shapes, the
 * forward at the bf16 rate, 161-179 TFLOP/s), takes 1.731 / 2.080 ms at 4k and 90.3 / 108.4
 * at 32k against bf16's 0.465 / 3.69 — growing as s², not s: the kernel computes every tile
 * under the causal diagonal and applies the window as a mask. Over the causal square's keys,
 * v = (s + 1) / 2 per query, both follow the bf16 backward's form a · v / (v + 578) above:
 * per-tensor FP8 at a = 0.405 (rms 0.5 % over 5 points: the bf16 share 0.409 within 1 %, so
 * taken as it), MXFP8 at 0.337 (rms 0.4 %), its block scales' extra work. */
#define TSL_ATTN_GB100_SWA64_MXFP8_BWD_EFF 0.337
/* A causal (masked) fused kernel runs below those rates, which are the unmasked
 * kernel's: over v keys visited per query it reaches
 *   eff · v / (v + keys)
 * of them — each query block computes its diagonal tile in full and pays its
 * fixed cost over half the keys (about one 128-key tile more), and the mask
 * costs a few per cent on every tile. Fitted (rms 3.1 %) to the causal/unmasked
 * speed ratios of Shah et al. 2024 (FlashAttention-3), Fig. 5, H100 SXM5,
 * forward, head dim 64 and 128, sequence 512–16k, FlashAttention-2, cuDNN and
 * FlashAttention-3 alike (e.g. 1k: 229/306, 288/373, 265/392 at head dim 64);
 * taken for the backward too. s = 1024: 0.75; 8192: 0.91. */
#define TSL_ATTN_CAUSAL_EFF  0.94
#define TSL_ATTN_CAUSAL_KEYS 128.0

typedef struct tsl_gemm_eff {
    double sms;            /* streaming multiprocessors; 0 = unknown: no occupancy term */
    double k_half;         /* depth at which the per-tile fixed cost equals the main loop;
                      0 = unknown: no depth term */
    double attn_fwd_flops; /* the fused attention kernel's rate before occupancy,
                              forward and backward, FLOP/s; 0 = unknown: the GEMM
                              curve (e_max · depth) prices it as a GEMM */
    double attn_bwd_flops;
    double attn_mla_bwd_flops;   /* latent attention's (MLA's) backward; 0 = attn_bwd_flops */
    double attn_kernel_peak;     /* the datasheet peak (FLOP/s) a named kernel's published
                                  shares are of (attn_kernel.h: Hopper, the H100 part; the
                                  A100); 0 = no such table: every kernel takes attn_*_flops */
    bool attn_kernel_ampere;     /* that table is the A100's (tsl_attn_ampere_share), which
                                  prices the default kernel too; false: Hopper's */
    bool attn_power_capped;      /* the part runs below its family's 700 W limit (the
                                  500 W H100-96G): no kernel holds its burst clock there
                                  (attn_kernel.h tsl_attn_kernel_holds_clock) */
    double attn_swa64_fwd_flops; /* a causal sliding window's core at head dimension 64,
                                    unmasked-equivalent rate of TSL_ATTN_GB100_SWA64_*
                                    (forward, backward); 0 = the causal rule */
    double attn_swa64_bwd_flops;
} tsl_gemm_eff_t;

/* The shape parameters of a GPU: SMs by the family of its name ("A100-80G" →
 * A100: 108), k_half from its datasheet peak (FLOP/s) and memory bandwidth
 * (bytes/s), the fused attention kernel's rates from the family's measured or
 * published share of peak (H100, H200, H800, B200, GB200; others 0), and on the
 * H100 part (H100, H200, H800) the peak attn_kernel.h's per-kernel shares are of.
 * An unknown family or a bandwidth of 0 leaves that term out (the
 * rate is then e_max · the remaining terms, as a flat efficiency was). */
void tsl_gemm_eff_for_gpu(tsl_gemm_eff_t *g, const char *name, double peak_flops, double mem_bw);

/* Whether the GPU of that name has attn_kernel.h's published shares for `kernel`
 * (tsl_attn_kernel_t): the H100 part (H100, H200, H800) for flash2 and cudnn, the A100
 * for every kernel; elsewhere it is priced as the family's one figure (tesselctl's
 * text output says which). */
bool tsl_gemm_eff_kernel_shares(const char *name, uint32_t kernel);

/* occupancy alone (the fused attention kernel: one block per 128 queries per
 * head, its own rate in place of e_max · depth), in (0, 1]. */
double tsl_gemm_eff_occupancy(const tsl_gemm_eff_t *g, double m, double n, double k, double b);

/* occupancy · depth of b independent (m × k)·(k × n) GEMMs, in (0, 1]. */
double tsl_gemm_eff_shape(const tsl_gemm_eff_t *g, double m, double n, double k, double b);

/* tsl_gemm_eff_shape of a GEMM whose per-tile fixed cost is `tile_cost` times the
 * fitted one in depth (k_half · tile_cost; docs/cost-model.md "GEMM efficiency by
 * shape", "The tile's fixed cost under FP8"): the fixed cost is a time, so a main loop
 * running r times faster (FP8: the FP8 rate over the bf16 one) covers r times the
 * depth in it, and an epilogue moving e bytes per output element where the fit's
 * wrote 2 (bf16) takes e / 2 of its time (tsl_gemm_tile_cost). tile_cost <= 0 is 1. */
double tsl_gemm_eff_shape_tc(const tsl_gemm_eff_t *g, double m, double n, double k, double b,
                             double tile_cost);

/* The per-tile fixed cost of a GEMM over the fitted bf16 one: its main loop's rate
 * over the bf16 rate (rate_ratio), its epilogue's bytes per output element over the
 * 2 of a bf16 write (epilogue_bytes / TSL_GEMM_FIT_EPILOGUE_BYTES). */
#define TSL_GEMM_FIT_EPILOGUE_BYTES 2.0 /* the fitted table's bf16 output, written once */
#define TSL_GEMM_FP32_ACC_EPILOGUE_BYTES                                                           \
    8.0 /* fused wgrad accumulation: the fp32 main_grad read (C, beta 1) and written */
double tsl_gemm_tile_cost(double rate_ratio, double epilogue_bytes);

#endif

/*
 * attn_kernel.c — the published Hopper and A100 attention rates of attn_kernel.h.
 */
#include "attn_kernel.h"

#include "gemm_eff.h"

#include <math.h>
#include <stddef.h>
#include <strings.h>

#define H100_PEAK_TFLOPS 989.0 /* H100 SXM5 dense bf16, the figures' denominator */
#define SWEEP_POINTS     6     /* sequences 512, 1k, 2k, 4k, 8k, 16k */
#define SWEEP_FIRST      512.0

/* FlashAttention-3, Figs. 5 (forward) and 6 (backward), TFLOP/s, non-causal:
 * [kernel − 1][backward][head dimension 64, 128][sequence]. */
static const double fa3_figs[2][2][2][SWEEP_POINTS] = {
    /* FlashAttention-2 */
    {{{282, 306, 318, 321, 322, 324}, {309, 350, 362, 368, 370, 370}},
     {{198, 238, 264, 279, 287, 291}, {214, 260, 291, 310, 318, 322}}},
    /* cuDNN */
    {{{335, 373, 395, 408, 412, 413}, {497, 574, 617, 609, 600, 595}},
     {{266, 348, 395, 417, 432, 433}, {305, 408, 465, 499, 518, 516}}},
};

/* FlashAttention-2 on the A100 (Dao 2023, Fig. 4: forward + backward, non-causal),
 * TFLOP/s: [head dimension 64, 128][sequence]; 151 and 153 read from the bars the
 * legend covers (attn_kernel.h). */
static const double fa2_a100_fwd_bwd[2][SWEEP_POINTS] = {
    {132, 153, 162, 171, 175, 176},
    {151, 173, 187, 196, 201, 203},
};

/* FlashAttention v1's CUDA kernel on the A100, the same Fig. 4's "FlashAttention"
 * bars, forward + backward TFLOP/s: [causal (panels c, d) or not (a, b)][head
 * dimension 64, 128][sequence]. */
static const double fa1_a100_fwd_bwd[2][2][SWEEP_POINTS] = {
    {{91, 92, 104, 108, 110, 110}, {76, 72, 76, 80, 82, 83}},
    {{58, 70, 77, 87, 92, 97}, {55, 62, 69, 76, 80, 83}},
};

#define A100_PEAK_TFLOPS 312.0 /* A100 dense bf16, the figure's denominator */
#define FA2_A100_FWD_MAX 0.73  /* "up to 73%" forward (Sec. 1) */
#define FA2_A100_BWD_MAX 0.63  /* "up to 63%" backward */
#define FA1_A100_FWD_MID 0.40  /* v1: forward "30-50%" of peak (Sec. 1), the midpoint */
#define FA1_A100_BWD_MID 0.30  /* v1: backward "25-35%" */
#define FIG_BWD_FLOPS    2.5   /* the figures count the backward at 2.5 × the forward */

static const char *const names[TSL_ATTN_KERNEL_COUNT] = {"default", "flash2", "cudnn", "flash1",
                                                         "flash1-triton"};

int tsl_attn_kernel_parse(const char *name)
{
    for (int i = 0; name != NULL && i < TSL_ATTN_KERNEL_COUNT; i++)
        if (strcasecmp(name, names[i]) == 0 || (name[0] == '0' + i && name[1] == '\0'))
            return i;
    return -1;
}

int tsl_attn_kernel_ok(uint32_t kernel, tsl_err_t *err)
{
    if (kernel < TSL_ATTN_KERNEL_COUNT)
        return 0;
    return tsl_err_set(err,
                       "attn_kernel: %u is not 1 (flash2), 2 (cudnn), 3 (flash1) or 4 "
                       "(flash1-triton), or 0 for none",
                       kernel);
}

const char *tsl_attn_kernel_name(uint32_t kernel)
{
    return kernel < TSL_ATTN_KERNEL_COUNT ? names[kernel] : "?";
}

bool tsl_attn_kernel_is_v1(uint32_t kernel)
{
    return kernel == TSL_ATTN_KERNEL_FLASH1 || kernel == TSL_ATTN_KERNEL_FLASH1_TRITON;
}

double tsl_attn_kernel_run_hd(uint32_t kernel, double hd)
{
    if (!(hd > 0))
        return hd;
    if (kernel == TSL_ATTN_KERNEL_FLASH1) /* the hdim 32, 64 and 128 kernels */
        return hd <= 32.0 ? 32.0 : hd <= 64.0 ? 64.0 : hd <= 128.0 ? 128.0 : hd;
    if (kernel == TSL_ATTN_KERNEL_FLASH2 && hd <= 256.0) /* kHeadDim 32, 64, ... 256 */
        return ceil(hd / 32.0) * 32.0;
    return hd;
}

/* One row of a figure at `keys`: linear in log2(keys) between its points, its end
 * values outside them. */
static double along_keys(const double *row, double keys)
{
    double x = log2(fmax(keys, SWEEP_FIRST) / SWEEP_FIRST);
    if (!(x < SWEEP_POINTS - 1))
        return row[SWEEP_POINTS - 1];
    int i = (int)x;
    return row[i] + (x - i) * (row[i + 1] - row[i]);
}

/* A figure's two rows (head dimension 64, 128) at hd and keys: linear in the head
 * dimension between them, the nearer row outside. */
static double by_shape(const double (*fig)[SWEEP_POINTS], double hd, double keys)
{
    double w = fmin(fmax((hd - 64.0) / 64.0, 0.0), 1.0); /* head dimension 64 → 0, 128 → 1 */
    return (1.0 - w) * along_keys(fig[0], keys) + w * along_keys(fig[1], keys);
}

bool tsl_attn_kernel_holds_clock(uint32_t kernel)
{
    return kernel == TSL_ATTN_KERNEL_FLASH2;
}

double tsl_attn_hopper_share(uint32_t kernel, bool bwd, double hd, double keys, bool power_capped)
{
    /* v1 (CUDA or Triton) has no Hopper figure: the family's one (attn_kernel.h) */
    if (kernel == TSL_ATTN_KERNEL_DEFAULT || tsl_attn_kernel_is_v1(kernel) ||
        kernel >= TSL_ATTN_KERNEL_COUNT || !(keys > 0) || !(hd > 0))
        return 0.0;
    /* the figures are burst timings: at a dense step's settled clock (gemm_eff.h),
       unless the kernel stays below the 700 W limit at the burst clock */
    double clock =
        tsl_attn_kernel_holds_clock(kernel) && !power_capped ? 1.0 : TSL_ATTN_GH100_SETTLED;
    return by_shape(fa3_figs[kernel - 1][bwd ? 1 : 0], hd, keys) / H100_PEAK_TFLOPS * clock;
}

double tsl_attn_hopper_default_bwd_keys(double hd, double keys)
{
    if (!(keys > 0) || !(hd > 0))
        return 1.0;
    const double(*fa2_bwd)[SWEEP_POINTS] = fa3_figs[TSL_ATTN_KERNEL_FLASH2 - 1][1];
    return by_shape(fa2_bwd, hd, keys) / by_shape(fa2_bwd, hd, TSL_ATTN_H100_BWD_KEYS);
}

/* A forward + backward TFLOP/s of Fig. 4 split at forward : backward = r (forward r·c,
 * backward c, 3.5 / f = 1 / (r·c) + 2.5 / c), as a share of the A100's peak. */
static double split_fwd_bwd(double fwd_bwd_tflops, double r, bool bwd)
{
    double f = fwd_bwd_tflops / A100_PEAK_TFLOPS;
    double c = f * (1.0 / r + FIG_BWD_FLOPS) / (1.0 + FIG_BWD_FLOPS);
    return bwd ? c : r * c;
}

double tsl_attn_ampere_share(uint32_t kernel, bool bwd, double hd, double keys)
{
    if (kernel >= TSL_ATTN_KERNEL_COUNT || !(keys > 0) || !(hd > 0))
        return 0.0;
    if (kernel == TSL_ATTN_KERNEL_FLASH1_TRITON)
        return bwd ? TSL_ATTN_A100_BWD_EFF : TSL_ATTN_A100_FWD_EFF;
    if (kernel == TSL_ATTN_KERNEL_FLASH1)
        return split_fwd_bwd(by_shape(fa1_a100_fwd_bwd[0], hd, keys),
                             FA1_A100_FWD_MID / FA1_A100_BWD_MID, bwd);
    return split_fwd_bwd(by_shape(fa2_a100_fwd_bwd, hd, keys), FA2_A100_FWD_MAX / FA2_A100_BWD_MAX,
                         bwd);
}

double tsl_attn_ampere_causal_share(uint32_t kernel, bool bwd, double hd, double keys)
{
    if (kernel != TSL_ATTN_KERNEL_FLASH1 || !(keys > 0) || !(hd > 0))
        return 0.0;
    return split_fwd_bwd(by_shape(fa1_a100_fwd_bwd[1], hd, keys),
                         FA1_A100_FWD_MID / FA1_A100_BWD_MID, bwd);
}

/*
 * attn_kernel.c — the published Hopper attention rates of attn_kernel.h.
 */
#include "attn_kernel.h"

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

static const char *const names[TSL_ATTN_KERNEL_COUNT] = {"default", "flash2", "cudnn"};

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
    return tsl_err_set(err, "attn_kernel: %u is not 1 (flash2) or 2 (cudnn), or 0 for none",
                       kernel);
}

const char *tsl_attn_kernel_name(uint32_t kernel)
{
    return kernel < TSL_ATTN_KERNEL_COUNT ? names[kernel] : "?";
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

double tsl_attn_hopper_share(uint32_t kernel, bool bwd, double hd, double keys)
{
    if (kernel == TSL_ATTN_KERNEL_DEFAULT || kernel >= TSL_ATTN_KERNEL_COUNT || !(keys > 0) ||
        !(hd > 0))
        return 0.0;
    const double(*fig)[SWEEP_POINTS] = fa3_figs[kernel - 1][bwd ? 1 : 0];
    double w = fmin(fmax((hd - 64.0) / 64.0, 0.0), 1.0); /* head dimension 64 → 0, 128 → 1 */
    return ((1.0 - w) * along_keys(fig[0], keys) + w * along_keys(fig[1], keys)) / H100_PEAK_TFLOPS;
}

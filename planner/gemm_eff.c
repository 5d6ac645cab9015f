/*
 * gemm_eff.c — the shape curve of gemm_eff.h and the SM counts it needs.
 */
#include "gemm_eff.h"

#include "attn_kernel.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

/* SMs per GPU family, from the vendor datasheets / whitepapers (A100: 108 of
 * GA100's 128; H100 SXM5, H200 and H800: 132; V100: 80; T4: 40; TITAN RTX: 72; 2080 Ti:
 * 68; B200: 148 of GB100's 160, GB200's GPU taken as the same; L40S: 142; L4: 58;
 * A10G: 80, assumed) or compute units for AMD (MI300X, MI325X: 304 CUs, the
 * same tile-per-unit model). Matched by prefix, first hit: "L40S" must precede
 * "L4". */
/* the H100 family's one figure at a dense step's settled clock (gemm_eff.h) */
#define H100_ATTN_FWD (TSL_ATTN_H100_FWD_EFF * TSL_ATTN_GH100_SETTLED)
#define H100_ATTN_BWD (TSL_ATTN_H100_BWD_EFF * TSL_ATTN_GH100_SETTLED)
/* Blackwell's cuDNN figures likewise, at the B200's settled clock (gemm_eff.h) */
#define GB100_ATTN_FWD     (TSL_ATTN_GB100_FWD_EFF * TSL_ATTN_GB100_SETTLED)
#define GB100_ATTN_BWD     (TSL_ATTN_GB100_BWD_EFF * TSL_ATTN_GB100_SETTLED)
#define GB100_ATTN_MLA_BWD (TSL_ATTN_GB100_MLA_BWD_EFF * TSL_ATTN_GB100_SETTLED)

/* Flash attention's share of peak (forward, backward, MLA's backward): A100, H100 and
 * Blackwell in gemm_eff.h; no published or measured figure here for the others (0:
 * priced as a GEMM; an MLA backward of 0 takes the GPU's backward share). */
static const struct {
    const char *family;
    double sms, attn_fwd, attn_bwd, attn_mla_bwd;
    bool hopper; /* the H100 part: attn_kernel.h's published shares apply */
    bool ampere; /* the A100: attn_kernel.h's A100 shares apply (attn_fwd, attn_bwd: flash1's) */
    bool gb100;  /* B200 / GB200: cuDNN's sliding-window figures (TSL_ATTN_GB100_SWA64_*) */
    double cap;  /* the part's settled compute rate at its power limit over the family's
                    figures (1: the limit they were taken at); scales every attention share */
} sm_table[] = {
    {"A100", 108, TSL_ATTN_A100_FWD_EFF, TSL_ATTN_A100_BWD_EFF, 0, false, true, false, 1.0},
    /* Grand Teton's 500 W H100 SXM (gemm_eff.h); before "H100": first hit wins */
    {"H100-96G", 132, H100_ATTN_FWD, H100_ATTN_BWD, 0, true, false, false, TSL_GH100_500W_SETTLED},
    {"H100", 132, H100_ATTN_FWD, H100_ATTN_BWD, 0, true, false, false, 1.0},
    {"V100", 80, 0, 0, 0, false, false, false, 1.0},
    {"T4", 40, 0, 0, 0, false, false, false, 1.0},
    {"RTX-TITAN", 72, 0, 0, 0, false, false, false, 1.0},
    {"2080Ti", 68, 0, 0, 0, false, false, false, 1.0},
    {"H200", 132, H100_ATTN_FWD, H100_ATTN_BWD, 0, true, false, false, 1.0}, /* H100's part */
    {"H800", 132, H100_ATTN_FWD, H100_ATTN_BWD, 0, true, false, false, 1.0}, /* H100's part */
    {"B200", 148, GB100_ATTN_FWD, GB100_ATTN_BWD, GB100_ATTN_MLA_BWD, false, false, true, 1.0},
    {"GB200", 148, GB100_ATTN_FWD, GB100_ATTN_BWD, GB100_ATTN_MLA_BWD, false, false, true, 1.0},
    {"MI300X", 304, 0, 0, 0, false, false, false, 1.0},
    {"MI325X", 304, 0, 0, 0, false, false, false, 1.0},
    {"L40S", 142, 0, 0, 0, false, false, false, 1.0},
    {"L4", 58, 0, 0, 0, false, false, false, 1.0},
    {"A10G", 80, 0, 0, 0, false, false, false, 1.0},
};

static int family_of(const char *name)
{
    for (size_t i = 0; name != NULL && i < sizeof(sm_table) / sizeof(sm_table[0]); i++)
        if (strncasecmp(name, sm_table[i].family, strlen(sm_table[i].family)) == 0)
            return (int)i;
    return -1;
}

void tsl_gemm_eff_for_gpu(tsl_gemm_eff_t *g, const char *name, double peak_flops, double mem_bw)
{
    int f = family_of(name);
    g->sms = f >= 0 ? sm_table[f].sms : 0.0;
    /* the peak at the part's power limit: every attention share is of it */
    double settled = f >= 0 && peak_flops > 0 ? sm_table[f].cap * peak_flops : 0.0;
    g->attn_fwd_flops = f >= 0 ? sm_table[f].attn_fwd * settled : 0.0;
    g->attn_bwd_flops = f >= 0 ? sm_table[f].attn_bwd * settled : 0.0;
    g->attn_mla_bwd_flops = f >= 0 ? sm_table[f].attn_mla_bwd * settled : 0.0;
    bool table = f >= 0 && (sm_table[f].hopper || sm_table[f].ampere) && peak_flops > 0;
    g->attn_kernel_peak = table ? settled : 0.0;
    g->attn_kernel_ampere = table && sm_table[f].ampere;
    g->attn_power_capped = f >= 0 && sm_table[f].cap < 1.0;
    bool swa = f >= 0 && sm_table[f].gb100 && peak_flops > 0;
    /* the same burst sweeps as the family's shares: at the settled clock too */
    double swa_peak = swa ? TSL_ATTN_GB100_SETTLED * settled : 0.0;
    g->attn_swa64_fwd_flops = TSL_ATTN_GB100_SWA64_FWD_EFF * swa_peak;
    g->attn_swa64_bwd_flops = TSL_ATTN_GB100_SWA64_BWD_EFF * swa_peak;
    g->k_half = peak_flops > 0 && mem_bw > 0 && isfinite(mem_bw)
                    ? TSL_GEMM_K_HALF_PER_BALANCE * peak_flops / mem_bw
                    : 0.0;
}

bool tsl_gemm_eff_kernel_shares(const char *name, uint32_t kernel)
{
    int f = family_of(name);
    return f >= 0 && (sm_table[f].ampere || (sm_table[f].hopper && !tsl_attn_kernel_is_v1(kernel)));
}

/* Fraction of the SMs the GEMM's tiles (and split-K slices) keep busy. */
static double occupancy(const tsl_gemm_eff_t *g, double m, double n, double k, double b)
{
    if (!(g->sms > 0))
        return 1.0;
    double tiles = ceil(m / TSL_GEMM_TILE) * ceil(n / TSL_GEMM_TILE) * b;
    double units = tiles * fmax(1.0, floor(k / TSL_GEMM_SPLIT_K));
    return fmin(1.0, units / g->sms);
}

double tsl_gemm_eff_occupancy(const tsl_gemm_eff_t *g, double m, double n, double k, double b)
{
    if (!(m > 0 && n > 0 && k > 0 && b > 0))
        return 1.0;
    return occupancy(g, m, n, k, b);
}

double tsl_gemm_eff_shape_tc(const tsl_gemm_eff_t *g, double m, double n, double k, double b,
                             double tile_cost)
{
    if (!(m > 0 && n > 0 && k > 0 && b > 0))
        return 1.0;
    double k_half = g->k_half * (tile_cost > 0 ? tile_cost : 1.0);
    double depth = k_half > 0 ? k / (k + k_half) : 1.0;
    return occupancy(g, m, n, k, b) * depth;
}

double tsl_gemm_eff_shape(const tsl_gemm_eff_t *g, double m, double n, double k, double b)
{
    return tsl_gemm_eff_shape_tc(g, m, n, k, b, 1.0);
}

double tsl_gemm_tile_cost(double rate_ratio, double epilogue_bytes)
{
    double r = rate_ratio > 0 && isfinite(rate_ratio) ? rate_ratio : 1.0;
    double e = epilogue_bytes > 0 ? epilogue_bytes : TSL_GEMM_FIT_EPILOGUE_BYTES;
    return r * e / TSL_GEMM_FIT_EPILOGUE_BYTES;
}

/*
 * mamba.c — the Mamba-2 mixer's figures (mamba.h).
 */
#include "mamba.h"

double tsl_mamba_inner(const tsl_layer_t *l)
{
    return (double)l->ssm_heads * l->ssm_head_dim;
}

double tsl_mamba_in_width(const tsl_layer_t *l)
{
    return 2.0 * tsl_mamba_inner(l) + 2.0 * l->ssm_groups * (double)l->ssm_state + l->ssm_heads;
}

int tsl_mamba_check(const tsl_layer_t *l, const char *kn, tsl_err_t *err)
{
    if (l->ssm_heads == 0 || l->ssm_head_dim == 0 || l->ssm_state == 0 || l->ssm_groups == 0 ||
        l->ssm_conv == 0 || l->ssm_chunk == 0)
        return tsl_err_set(err,
                           "%s layer: ssm_heads, ssm_head_dim, ssm_state, ssm_groups, ssm_conv "
                           "and ssm_chunk must all be > 0 (got %u, %u, %u, %u, %u, %u; Nemotron 3 "
                           "Nano: 64, 64, 128, 8, 4, 128)",
                           kn, l->ssm_heads, l->ssm_head_dim, l->ssm_state, l->ssm_groups,
                           l->ssm_conv, l->ssm_chunk);
    if (l->ssm_heads % l->ssm_groups != 0)
        return tsl_err_set(err,
                           "%s layer: ssm_groups: %u does not divide ssm_heads (%u); B and C are "
                           "shared by whole groups of heads",
                           kn, l->ssm_groups, l->ssm_heads);
    if (l->experts || l->heads || l->ffn_hidden || l->kv_lora_rank)
        return tsl_err_set(err,
                           "%s layer: heads, ffn_hidden, experts and kv_lora_rank belong to "
                           "attention and FFN layers; a Mamba layer has only ssm_* widths",
                           kn);
    return 0;
}

/* The SSD scan's FLOPs per token (mamba.h; Dao & Gu 2024 Sec. 6). */
static double ssd_flops_per_token(const tsl_layer_t *l)
{
    double H = l->ssm_heads, P = l->ssm_head_dim, N = l->ssm_state, G = l->ssm_groups;
    double Q = l->ssm_chunk;
    double intra = 2.0 * Q * N * G + 2.0 * Q * P * H; /* C·Bᵀ per group, (L∘CBᵀ)·X per head */
    double states = 2.0 * N * P * H;                  /* Bᵀ·X: each chunk's final state */
    double passing = 2.0 * N * P * H / Q;             /* the recurrence over chunk states */
    double out = 2.0 * N * P * H;                     /* C·state: the inter-chunk output */
    return intra + states + passing + out;
}

void tsl_mamba_figures(const tsl_layer_t *l, tsl_mamba_figures_t *f)
{
    double s = l->seq_len, h = l->hidden, di = tsl_mamba_inner(l), win = tsl_mamba_in_width(l);
    double conv_dim = di + 2.0 * l->ssm_groups * (double)l->ssm_state, K = l->ssm_conv;
    f->params = h + h * win + conv_dim * (K + 1.0) + 3.0 * l->ssm_heads + di + di * h;
    f->ssd_flops = s * ssd_flops_per_token(l);
    f->fwd_flops = 2.0 * s * h * win + 2.0 * s * K * conv_dim + f->ssd_flops + 2.0 * s * di * h;
    f->repl_bytes = 4.0 * s * h;
    f->shard_bytes = 2.0 * s * win + 3.0 * 2.0 * s * di + 4.0 * s * l->ssm_groups;
}

bool tsl_mamba_tp_fits(const tsl_layer_t *l, uint32_t t)
{
    return t <= 1 || (l->ssm_heads % t == 0 && l->ssm_groups % t == 0);
}

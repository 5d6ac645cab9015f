/*
 * cost_host_sync.c — the chains of host ops a blocking read exposes (cost_host_sync.h).
 */
#include "cost_host_sync.h"

#include <math.h>

double tsl_host_chain_s(const double *g, uint32_t n, double h)
{
    if (n == 0 || !(h > 0))
        return 0.0;
    double end = 0.0, sum = 0.0;
    for (uint32_t i = 0; i < n; i++) {
        /* the kernel waits for its own dispatch and for the kernel before it */
        end = fmax((double)(i + 1) * h, end) + g[i];
        sum += g[i];
    }
    return end - sum;
}

/* Appends x elements as one tensor where it has any. */
static void put(double *e, uint32_t *n, double x)
{
    if (x > 0 && *n < TSL_DS_STEP_MAX_TENSORS)
        e[(*n)++] = x;
}

/* A norm's weight, and its bias unless RMSNorm. */
static void put_norm(const tsl_layer_t *l, double *e, uint32_t *n)
{
    put(e, n, l->hidden);
    if (!l->rms_norm)
        put(e, n, l->hidden);
}

/* A linear of in × out elements over t (out t-wise for a column-parallel one, in for a
 * row-parallel one: the same count), and its bias of bias_n elements. */
static void put_linear(const tsl_layer_t *l, double *e, uint32_t *n, double w, double bias_n)
{
    put(e, n, w);
    if (!l->no_bias)
        put(e, n, bias_n);
}

/* Megatron's dense block (the fork's ParallelTransformerLayer): norms, fused QKV,
 * projection (its bias replicated), the FFN (fc2's bias replicated); a decoder's
 * cross-attention the same way. */
static void block_tensors(const tsl_layer_t *l, uint32_t t, double *e, uint32_t *n)
{
    double h = l->hidden, d = l->attn_dim ? l->attn_dim : h;
    double kvd = l->kv_heads && l->heads ? d * l->kv_heads / l->heads : d;
    double f = (l->gated_ffn ? 2.0 : 1.0) * l->ffn_hidden;
    uint32_t norms =
        l->kind == TSL_LAYER_DECODER ? 3 : (l->parallel_block && l->shared_norm ? 1 : 2);
    for (uint32_t i = 0; i < norms; i++)
        put_norm(l, e, n);
    put_linear(l, e, n, h * (d + 2.0 * kvd) / t, (d + 2.0 * kvd) / t);
    put_linear(l, e, n, d / t * h, h);
    if (l->kind == TSL_LAYER_DECODER) {
        put_linear(l, e, n, h * d / t, d / t);
        put_linear(l, e, n, h * 2.0 * kvd / t, 2.0 * kvd / t);
        put_linear(l, e, n, d / t * h, h);
    }
    put_linear(l, e, n, h * f / t, f / t);
    put_linear(l, e, n, l->ffn_hidden / (double)t * h, h);
}

static bool laid_out(const tsl_layer_t *l)
{
    if (l->experts || l->kv_lora_rank || l->patch_embed)
        return false;
    return l->kind == TSL_LAYER_ENCODER || l->kind == TSL_LAYER_DECODER ||
           l->kind == TSL_LAYER_EMBEDDING || l->kind == TSL_LAYER_HEAD;
}

uint32_t tsl_ds_step_tensors(const tsl_layer_t *l, uint32_t t, double own, double *e)
{
    uint32_t n = 0;
    if (!(own > 0) || !laid_out(l))
        return 0;
    t = t ? t : 1;
    if (l->kind == TSL_LAYER_EMBEDDING) {
        put(e, &n, (double)l->positions * l->hidden);
        if (l->embed_norm)
            put_norm(l, e, &n);
    } else if (l->kind == TSL_LAYER_HEAD) {
        double norm = (double)l->extra_params;
        put(e, &n, l->rms_norm ? norm : norm / 2.0);
        put(e, &n, l->rms_norm ? 0.0 : norm / 2.0);
    } else {
        block_tensors(l, t, e, &n);
    }
    double laid = 0.0;
    for (uint32_t i = 0; i < n; i++)
        laid += e[i];
    /* cost.c counts a block's parameters over t whole; the norms and row-parallel
     * biases each rank holds whole are a fraction of a per cent more. Further off, the
     * layer is not the one laid out here: price nothing */
    if (laid > 1.01 * own)
        return 0;
    /* the word table (its padded rows, a tied head's copy) or the block's extra_params */
    if (own - laid >= 1.0)
        put(e, &n, own - laid);
    return n;
}

double tsl_ds_fp16_step_sync_s(const tsl_layer_t *l, uint32_t t, double own, double h, double W,
                               double L)
{
    double e[TSL_DS_STEP_MAX_TENSORS], sum = 0.0;
    if (!(h > 0) || !(W > 0))
        return 0.0;
    uint32_t n = tsl_ds_step_tensors(l, t, own, e);
    for (uint32_t i = 0; i < n; i++) {
        double cast = 6.0 * e[i] / W + L, reduce = 4.0 * e[i] / W + L;
        double overflow[3] = {cast, reduce, 0.0};   /* x.float().sum(), float() */
        double norm[4] = {cast, cast, reduce, 0.0}; /* .to(fp32), .float().norm(), .item() */
        sum += tsl_host_chain_s(overflow, 3, h) + tsl_host_chain_s(norm, 4, h);
    }
    return sum;
}

uint32_t tsl_shard_step_tensors(const double *e, uint32_t n, uint32_t z, double *out)
{
    double total = 0.0;
    for (uint32_t i = 0; i < n; i++)
        total += e[i];
    if (z <= 1 || !(total > 0)) {
        for (uint32_t i = 0; i < n; i++)
            out[i] = e[i];
        return n;
    }
    double chunk = ceil(total / z);
    uint32_t best = 0;
    /* a tensor's first chunk is where the count can rise: try each such chunk */
    double start = 0.0;
    for (uint32_t i = 0; i < n; start += e[i], i++) {
        double lo = floor(start / chunk) * chunk, hi = lo + chunk, at = 0.0,
               piece[TSL_DS_STEP_MAX_TENSORS];
        uint32_t k = 0;
        for (uint32_t j = 0; j < n; at += e[j], j++) {
            double a = fmax(at, lo), b = fmin(at + e[j], hi);
            if (b > a && k < TSL_DS_STEP_MAX_TENSORS)
                piece[k++] = b - a;
        }
        if (k > best) {
            best = k;
            for (uint32_t j = 0; j < k; j++)
                out[j] = piece[j];
        }
    }
    return best;
}

double tsl_composer_step_sync_s(const double *e, uint32_t n, double h, double W, double L)
{
    static const double bytes[8] = {8.0, 12.0, 8.0, 12.0, 8.0, 8.0, 8.0, 16.0};
    double sum = 0.0;
    if (!(h > 0) || !(W > 0))
        return 0.0;
    for (uint32_t i = 0; i < n; i++) {
        double chain[9];
        for (uint32_t k = 0; k < 8; k++)
            chain[k] = bytes[k] * e[i] / W + L;
        chain[8] = 0.0; /* the next tensor's .item() */
        sum += tsl_host_chain_s(chain, 9, h);
    }
    return sum;
}

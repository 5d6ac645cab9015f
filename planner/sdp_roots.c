/*
 * sdp_roots.c — FSDP units of a layer that is its own fairscale root, and the
 * forward that gathers them (sdp_roots.h).
 */
#include "sdp_roots.h"

#include <math.h>
#include <string.h>

static void one_unit(tsl_sdp_units_t *out)
{
    memset(out, 0, sizeof(*out));
    out->n = 1;
    out->w[0] = out->c[0] = 1.0;
}

/* A block whose parts tsl_layer_derive can give from its shape: a dense encoder or
 * decoder with an FFN; MoE, latent attention, Mamba and sub-layer blocks are not. */
static bool splittable(const tsl_layer_t *l)
{
    return (l->kind == TSL_LAYER_ENCODER || l->kind == TSL_LAYER_DECODER) && l->ffn_hidden > 0 &&
           l->experts == 0 && l->kv_lora_rank == 0 && l->params > 0;
}

/* l's shape as the layer kind k without cross-attention and the extras, derived:
 * the MLP unit (k FFN), or a decoder's self-attention and MLP (k ENCODER, its causal
 * mask kept). */
static bool part(const tsl_layer_t *l, tsl_layer_kind_t k, tsl_layer_t *p)
{
    *p = *l;
    p->kind = k;
    p->cross_seq_len = 0;
    p->extra_params = 0;
    p->extra_fwd_flops = 0;
    p->extra_act_bytes = 0;
    tsl_err_t err;
    return tsl_layer_derive(p, &err) == 0 && p->params <= l->params;
}

void tsl_sdp_root_units(const tsl_layer_t *l, tsl_sdp_fwd_fn fwd_s, void *ctx, tsl_sdp_units_t *out)
{
    one_unit(out);
    tsl_layer_t ffn, self;
    bool dec = l->kind == TSL_LAYER_DECODER;
    if (!splittable(l) || !part(l, TSL_LAYER_FFN, &ffn) ||
        (dec && !part(l, TSL_LAYER_ENCODER, &self)))
        return;
    double whole = fwd_s(l, ctx), P = (double)l->params;
    if (!(whole > 0))
        return;
    /* the MLP last; a decoder's cross-attention before it: what the layer has
     * beyond its self-attention and MLP */
    double w_mlp = (double)ffn.params / P, c_mlp = fmin(1.0, fwd_s(&ffn, ctx) / whole);
    double w_x = 0.0, c_x = 0.0;
    if (dec) {
        w_x = (double)(l->params - self.params) / P;
        c_x = fmax(0.0, 1.0 - fwd_s(&self, ctx) / whole);
    }
    out->n = dec ? 3u : 2u;
    out->w[0] = fmax(0.0, 1.0 - w_mlp - w_x);
    out->c[0] = fmax(0.0, 1.0 - c_mlp - c_x);
    out->w[out->n - 1] = w_mlp;
    out->c[out->n - 1] = c_mlp;
    if (dec) {
        out->w[1] = w_x;
        out->c[1] = c_x;
    }
}

double tsl_sdp_root_fwd_s(const double *g, const double *c, uint32_t n, double k)
{
    double gathered = 0.0, done = 0.0, all = 0.0;
    for (uint32_t i = 0; i < n; i++)
        all += g[i];
    double both = 0.0; /* compute run beside a gather: the gathers run back to back over [0, all) */
    for (uint32_t i = 0; i < n; i++) {
        gathered += g[i];
        double start = fmax(done, gathered);
        done = start + c[i];
        both += fmax(0.0, fmin(done, all) - start);
    }
    return done + (k - 1.0) * both;
}

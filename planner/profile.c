/*
 * profile.c — measured block times and bandwidths in the cost model (profile.h
 * gives the interpolation rules). Pure: no I/O, no allocation.
 */
#include "profile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static double tokens_of(const tsl_profile_block_t *b)
{
    return (double)b->mb * b->seq_len;
}

static int cmp_block(const void *pa, const void *pb)
{
    const tsl_profile_block_t *a = pa, *b = pb;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->hidden != b->hidden)
        return a->hidden < b->hidden ? -1 : 1;
    if (a->tp != b->tp)
        return a->tp < b->tp ? -1 : 1;
    double ta = tokens_of(a), tb = tokens_of(b);
    return (ta > tb) - (ta < tb);
}

int tsl_profile_finish(tsl_profile_t *p, tsl_err_t *err)
{
    if (p->n_blocks > TSL_PROFILE_MAX_BLOCKS)
        return tsl_err_set(err, "profile: %u blocks, at most %u", p->n_blocks,
                           TSL_PROFILE_MAX_BLOCKS);
    for (uint32_t i = 0; i < p->n_blocks; i++) {
        const tsl_profile_block_t *b = &p->blocks[i];
        if (b->kind != TSL_PROFILE_ATTENTION && b->kind != TSL_PROFILE_FFN)
            return tsl_err_set(err, "profile: blocks[%u]: unknown kind", i);
        if (b->hidden == 0 || b->seq_len == 0 || b->mb == 0 || b->tp == 0)
            return tsl_err_set(err,
                               "profile: blocks[%u]: hidden, seq_len, micro_batch and tp "
                               "must be positive",
                               i);
        if (!(b->fwd_s > 0 && isfinite(b->fwd_s) && b->bwd_s > 0 && isfinite(b->bwd_s)))
            return tsl_err_set(err, "profile: blocks[%u]: fwd_s and bwd_s must be positive", i);
        if (!(b->fwd_flops > 0 && isfinite(b->fwd_flops)))
            return tsl_err_set(err, "profile: blocks[%u]: fwd_flops must be positive", i);
    }
    qsort(p->blocks, p->n_blocks, sizeof(p->blocks[0]), cmp_block);
    return 0;
}

static double rate_f(const tsl_profile_block_t *b)
{
    return b->fwd_flops / b->fwd_s;
}

static double rate_b(const tsl_profile_block_t *b)
{
    return 2.0 * b->fwd_flops / b->bwd_s;
}

/* Rates at T tokens over the sorted run [lo, hi) of one (kind, hidden, tp). */
static void rate_at(const tsl_profile_block_t *r, uint32_t lo, uint32_t hi, double T, double *f,
                    double *b)
{
    const tsl_profile_block_t *first = &r[lo], *last = &r[hi - 1];
    if (T <= tokens_of(first)) {
        double k = T / tokens_of(first); /* time stays that of the smallest */
        *f = rate_f(first) * k;
        *b = rate_b(first) * k;
        return;
    }
    if (T >= tokens_of(last)) {
        *f = rate_f(last);
        *b = rate_b(last);
        return;
    }
    uint32_t i = lo;
    while (i + 1 < hi && tokens_of(&r[i + 1]) < T)
        i++;
    const tsl_profile_block_t *a = &r[i], *c = &r[i + 1];
    double ta = tokens_of(a), tc = tokens_of(c);
    double w = tc > ta ? log(T / ta) / log(tc / ta) : 0.0;
    *f = rate_f(a) + w * (rate_f(c) - rate_f(a));
    *b = rate_b(a) + w * (rate_b(c) - rate_b(a));
}

int tsl_profile_block_rate(const tsl_profile_t *p, tsl_profile_block_kind_t kind, uint32_t hidden,
                           double tokens, uint32_t tp, double *fwd_flops_s, double *bwd_flops_s)
{
    const tsl_profile_block_t *r = p->blocks;
    uint32_t n = p->n_blocks, best_h = 0;
    double best_d = INFINITY;
    if (hidden == 0 || tp == 0 || !(tokens > 0))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        if (r[i].kind != kind || r[i].hidden == best_h)
            continue;
        double d = fabs(log((double)r[i].hidden / hidden));
        if (d < best_d - 1e-12 || (d <= best_d + 1e-12 && r[i].hidden > best_h)) {
            best_d = d;
            best_h = r[i].hidden;
        }
    }
    if (best_h == 0)
        return -1;
    /* the run of (kind, best_h), then the TP splits around tp */
    uint32_t lo = 0;
    while (lo < n && !(r[lo].kind == kind && r[lo].hidden == best_h))
        lo++;
    uint32_t hi = lo;
    while (hi < n && r[hi].kind == kind && r[hi].hidden == best_h)
        hi++;
    uint32_t tp_lo = 0, tp_hi = 0;
    for (uint32_t i = lo; i < hi; i++) {
        if (r[i].tp <= tp && r[i].tp > tp_lo)
            tp_lo = r[i].tp;
        if (r[i].tp >= tp && (tp_hi == 0 || r[i].tp < tp_hi))
            tp_hi = r[i].tp;
    }
    if (tp_lo == 0)
        tp_lo = tp_hi;
    if (tp_hi == 0)
        tp_hi = tp_lo;
    double f[2], b[2];
    uint32_t tps[2] = {tp_lo, tp_hi};
    for (int k = 0; k < 2; k++) {
        uint32_t a = lo;
        while (r[a].tp != tps[k])
            a++;
        uint32_t z = a;
        while (z < hi && r[z].tp == tps[k])
            z++;
        rate_at(r, a, z, tokens, &f[k], &b[k]);
    }
    double w = tp_hi > tp_lo ? log((double)tp / tp_lo) / log((double)tp_hi / tp_lo) : 0.0;
    *fwd_flops_s = f[0] + w * (f[1] - f[0]);
    *bwd_flops_s = b[0] + w * (b[1] - b[0]);
    return 0;
}

static void charge(const tsl_profile_t *p, tsl_profile_block_kind_t kind, const tsl_layer_t *l,
                   double flops, double n, uint32_t t, double fallback, double *fwd, double *bwd)
{
    if (!(flops > 0))
        return;
    double per_dev = flops * n / t, rf, rb;
    if (tsl_profile_block_rate(p, kind, l->hidden, n * l->seq_len, t, &rf, &rb) == 0 && rf > 0 &&
        rb > 0) {
        *fwd += per_dev / rf;
        *bwd += 2.0 * per_dev / rb;
    } else {
        *fwd += per_dev / fallback;
        *bwd += 2.0 * per_dev / fallback;
    }
}

void tsl_profile_layer_s(const tsl_profile_t *p, const tsl_layer_t *l, double n, uint32_t t,
                         double fallback_flops, double *fwd_s, double *bwd_s)
{
    double ffn = 0, rest = l->fwd_flops;
    if (l->ffn_hidden > 0 && tsl_layer_has_ffn(l)) {
        double g = l->gated_ffn ? 2.0 : 1.0;
        ffn = fmin(2.0 * (g + 1.0) * l->seq_len * (double)l->hidden * l->ffn_hidden, rest);
        rest -= ffn;
    }
    bool attn = tsl_layer_has_attention(l);
    *fwd_s = *bwd_s = 0;
    charge(p, TSL_PROFILE_FFN, l, ffn, n, t, fallback_flops, fwd_s, bwd_s);
    charge(p, attn ? TSL_PROFILE_ATTENTION : TSL_PROFILE_FFN, l, rest, n, t, fallback_flops, fwd_s,
           bwd_s);
}

int tsl_profile_attach(tsl_cluster_t *c, const tsl_profile_t *p, tsl_profile_use_t *use,
                       tsl_err_t *err)
{
    memset(use, 0, sizeof(*use));
    if (p->n_blocks == 0)
        return tsl_err_set(err, "profile %s: no block measurements", p->source);
    int found = tsl_cluster_gpu_index(c, p->gpu);
    uint32_t idx = found < 0 ? c->n_gpu_types : (uint32_t)found;
    if (found < 0)
        return tsl_err_setc(err, TSL_E_PRECONDITION,
                            "profile %s: it is for %s, the cluster has no such GPU type (%s%s)",
                            p->source, p->gpu, c->n_gpu_types ? c->gpu_types[0].name : "none",
                            c->n_gpu_types > 1 ? ", ..." : "");
    tsl_gpu_spec_t *g = &c->gpu_types[idx];
    use->efficiency_before = g->efficiency;
    /* the FFN block with the most work at the smallest TP split measured */
    const tsl_profile_block_t *ref = NULL;
    for (uint32_t i = 0; i < p->n_blocks; i++) {
        const tsl_profile_block_t *b = &p->blocks[i];
        if (b->kind != TSL_PROFILE_FFN)
            continue;
        if (ref == NULL || b->tp < ref->tp || (b->tp == ref->tp && b->fwd_flops > ref->fwd_flops))
            ref = b;
    }
    if (ref != NULL && g->peak_flops > 0)
        g->efficiency = fmin(1.0, rate_f(ref) / g->peak_flops);
    use->efficiency_after = g->efficiency;
    if (p->h2d_bw > 0 && p->d2h_bw > 0) {
        g->pcie_bw = fmin(p->h2d_bw, p->d2h_bw);
        use->pcie = true;
    }
    if (p->intra_busbw > 0 && p->intra_group >= 2) {
        double old = g->intra_bw;
        g->intra_bw = p->intra_busbw;
        for (uint32_t i = 0; i < c->n_nodes; i++)
            if (c->nodes[i].gpu_type == idx && c->nodes[i].intra_bw == old)
                c->nodes[i].intra_bw = p->intra_busbw;
        use->intra = true;
    }
    if (p->overlap_slowdown >= 1.0) {
        c->overlap_slowdown = p->overlap_slowdown;
        use->overlap = true;
    }
    c->gpu_profile[idx] = p;
    if (p->calibrated) {
        c->gpu_calib[idx] = &p->calib;
        use->calib = &p->calib;
    }
    use->compute = true;
    return 0;
}

const tsl_profile_t *tsl_profile_for_block(const tsl_cluster_t *c, uint32_t first, uint32_t size)
{
    const tsl_profile_t *p = NULL;
    if (c->n_devices == 0 || size == 0 || (uint64_t)first + size > c->n_devices)
        return NULL;
    for (uint32_t dev = first; dev < first + size;) {
        uint32_t node = c->device_node[dev];
        const tsl_profile_t *q = c->gpu_profile[c->nodes[node].gpu_type];
        if (q == NULL || (p != NULL && q != p))
            return NULL;
        p = q;
        dev = c->node_first[node] + c->nodes[node].n_gpus;
    }
    return p;
}

static size_t describe_figures(const tsl_profile_t *p, const tsl_profile_use_t *use, char *buf,
                               size_t cap)
{
    if (p == NULL || use == NULL || !use->compute)
        return (size_t)snprintf(buf, cap,
                                "figures: built-in (datasheet peak x assumed efficiency, "
                                "built-in bandwidths and overlap)");
    return (size_t)snprintf(
        buf, cap, "figures: compute %s (%s, %s / %s), host<->device %s, intra-node %s, overlap %s",
        p->simulated ? "SIMULATED" : "measured", p->source, p->gpu, p->link,
        use->pcie ? (p->simulated ? "simulated" : "measured") : "built-in",
        use->intra ? (p->simulated ? "simulated" : "measured") : "built-in",
        use->overlap ? (p->simulated ? "simulated" : "measured") : "built-in");
}

size_t tsl_profile_describe(const tsl_profile_t *p, const tsl_profile_use_t *use, char *buf,
                            size_t cap)
{
    size_t len = describe_figures(p, use, buf, cap);
    if (use == NULL || use->calib == NULL)
        return len;
    const tsl_calib_t *k = use->calib;
    char *at = len < cap ? buf + len : NULL;
    return len + (size_t)snprintf(at, at ? cap - len : 0,
                                  "; calibrated from %u trials (iteration error %.1f%% -> "
                                  "%.1f%% leave-one-out)",
                                  k->n_samples, 100.0 * k->mae_before, 100.0 * k->mae_after);
}

void tsl_profile_add_layer(tsl_profile_t *p, const tsl_layer_t *l, uint32_t mb, uint32_t tp,
                           double fwd_s)
{
    double g = l->gated_ffn ? 2 : 1;
    double ffn = 2.0 * (g + 1) * l->seq_len * (double)l->hidden * l->ffn_hidden;
    double layer = l->fwd_flops; /* extra_fwd_flops inside (model.h), as layer_s splits it */
    if (ffn >= layer)
        ffn = layer / 2;
    double part[2] = {layer - ffn, ffn};
    for (int k = 0; k < 2 && p->n_blocks < TSL_PROFILE_MAX_BLOCKS; k++) {
        tsl_profile_block_t *bl = &p->blocks[p->n_blocks++];
        bl->kind = k == 0 ? TSL_PROFILE_ATTENTION : TSL_PROFILE_FFN;
        bl->hidden = l->hidden;
        bl->seq_len = l->seq_len;
        bl->heads = l->heads;
        bl->ffn_hidden = l->ffn_hidden;
        bl->gated = l->gated_ffn;
        bl->mb = mb;
        bl->tp = tp;
        bl->fwd_flops = part[k] * mb / tp;
        bl->fwd_s = fwd_s * part[k] / layer;
        bl->bwd_s = 2 * bl->fwd_s;
    }
}

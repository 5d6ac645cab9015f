/*
 * prof_dev.c — the one-device figures on the executor's device ops (prof_dev.h):
 * GEMMs, the executor's blocks, bandwidth; and the order of a whole profile.
 * Collectives and overlap, which need ranks, are prof_coll.c's.
 */
#include "prof_dev.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec_block.h"

#define MIB       (1024ull * 1024)
#define GIB       (1024ull * MIB)
#define MAX_ITERS 64u

void tsl_prof_sizes_default(tsl_prof_sizes_t *s, bool quick)
{
    *s = (tsl_prof_sizes_t){.warm_gemm = 8192,
                            .soak_window_s = 1.0,
                            .keep_warm_s = quick ? 0.02 : 0.05,
                            .ref_gemm = {8192, 4096},
                            .h2d_bytes = quick ? 64 * MIB : 256 * MIB,
                            .dmem_bytes = quick ? 256 * MIB : GIB,
                            .coll_max_bytes = quick ? 256 * MIB : GIB,
                            .overlap_gemm = 8192,
                            .overlap_bytes = {256 * MIB, 512 * MIB, 256 * MIB},
                            .overlap_loop_s = 0.2};
}

int tsl_prof_dev_open(tsl_prof_dev_t *c, const tsl_prof_opts_t *o, const tsl_prof_sizes_t *sz,
                      tsl_devops_t *dev, tsl_prof_t *p, tsl_err_t *err)
{
    memset(c, 0, sizeof(*c));
    if (o->iters == 0 || o->iters > MAX_ITERS)
        return tsl_err_set(err, "iterations: %u outside 1..%u", o->iters, MAX_ITERS);
    *c = (tsl_prof_dev_t){.o = o, .p = p, .sz = *sz, .dev = dev, .seed = 0x7e55e1};
    if (dev->event_create(dev, &c->e0, err) || dev->event_create(dev, &c->e1, err)) {
        tsl_prof_dev_close(c);
        return -1;
    }
    return 0;
}

void tsl_prof_dev_close(tsl_prof_dev_t *c)
{
    if (c->dev)
        tsl_prof_dev_soak_end(c);
    if (c->e0)
        c->dev->event_destroy(c->dev, c->e0);
    if (c->e1)
        c->dev->event_destroy(c->dev, c->e1);
    c->e0 = c->e1 = NULL;
}

/* The one timing loop: `warmup` untimed runs of fn, then o->iters times `inner` runs
 * between two events on the compute stream; the median, divided by inner. */
typedef int (*work_fn)(tsl_prof_dev_t *c, void *arg, tsl_err_t *err);

static int time_median(tsl_prof_dev_t *c, work_fn fn, void *arg, uint32_t warmup, uint32_t inner,
                       double *median_s, tsl_err_t *err)
{
    tsl_devops_t *d = c->dev;
    double t[MAX_ITERS];
    for (uint32_t i = 0; i < warmup; i++)
        if (fn(c, arg, err))
            return -1;
    for (uint32_t it = 0; it < c->o->iters; it++) {
        if (d->event_record(d, c->e0, TSL_STREAM_COMPUTE, err))
            return -1;
        for (uint32_t i = 0; i < inner; i++)
            if (fn(c, arg, err))
                return -1;
        if (d->event_record(d, c->e1, TSL_STREAM_COMPUTE, err) || d->sync(d, err) ||
            d->event_elapsed_s(d, c->e0, c->e1, &t[it], err))
            return -1;
        t[it] /= inner;
    }
    *median_s = tsl_prof_median(t, c->o->iters);
    return 0;
}

/* ---- GEMMs ---- */

static int gemm_work(tsl_prof_dev_t *c, void *g, tsl_err_t *err)
{
    return c->dev->gemm(c->dev, g, err);
}

static int seeded(tsl_prof_dev_t *c, tsl_buf_t *b, size_t n, tsl_err_t *err)
{
    return c->dev->alloc(c->dev, b, n, c->dev->act_dtype, err) ||
           c->dev->fill_uniform(c->dev, b, c->seed++, 0, 0, 0, 1, err);
}

/* The filler: fill_n soak GEMMs queued ahead of a figure's own work on the compute
 * stream, so that the GPU stays at its soaked clock across the host's set-up between
 * figures (allocations, seeding) instead of idling back up to boost. */
static int keep_warm(tsl_prof_dev_t *c, tsl_err_t *err)
{
    for (uint32_t i = 0; i < c->fill_n; i++)
        if (c->dev->gemm(c->dev, &c->fill, err))
            return -1;
    return 0;
}

/* batch row-major (m x k)·(k x n) products packed back to back, buffers unset: the
 * shape every timed GEMM and the soak's filler run. */
static tsl_gemm_t row_major(uint32_t m, uint32_t n, uint32_t k, uint32_t batch)
{
    return (tsl_gemm_t){.m = (int)m,
                        .n = (int)n,
                        .k = (int)k,
                        .alpha = 1,
                        .lda = (int)k,
                        .ldb = (int)n,
                        .ldc = (int)n,
                        .stride_a = (long long)m * k,
                        .stride_b = (long long)k * n,
                        .stride_c = (long long)m * n,
                        .batch = (int)batch};
}

int tsl_prof_dev_gemm(tsl_prof_dev_t *c, const char *what, uint32_t m, uint32_t n, uint32_t k,
                      uint32_t batch, tsl_err_t *err)
{
    int rc = -1;
    uint32_t nb = batch ? batch : 1;
    tsl_buf_t a = {0}, b = {0}, cc = {0};
    if (c->p->n_gemms >= TSL_PROF_MAX_GEMMS)
        return 0;
    if (seeded(c, &a, (size_t)m * k * nb, err) || seeded(c, &b, (size_t)k * n * nb, err) ||
        seeded(c, &cc, (size_t)m * n * nb, err))
        goto out;
    tsl_gemm_t g = row_major(m, n, k, nb);
    g.a = a, g.b = b, g.c = cc;
    double med;
    if (keep_warm(c, err) || time_median(c, gemm_work, &g, c->o->warmup + 1, 10, &med, err))
        goto out;
    tsl_prof_gemm_t *r = &c->p->gemms[c->p->n_gemms++];
    *r = (tsl_prof_gemm_t){
        .m = m, .n = n, .k = k, .batch = nb, .time_s = med, .flops = 2.0 * m * n * k * nb};
    snprintf(r->what, sizeof(r->what), "%s", what);
    rc = 0;
out:
    c->dev->free(c->dev, &a);
    c->dev->free(c->dev, &b);
    c->dev->free(c->dev, &cc);
    return rc;
}

/* The forward GEMMs of a block alone, at one (mb, tp). */
static int block_gemms(tsl_prof_dev_t *c, const tsl_prof_shape_t *s0, uint32_t mb, uint32_t tp,
                       tsl_err_t *err)
{
    tsl_prof_shape_t s = tsl_prof_shape_resolved(s0);
    if (s.heads % tp != 0 || s.ffn_hidden % tp != 0)
        return 0;
    uint32_t h = s.hidden, sl = s.seq_len, T = mb * sl, dl = s.heads / tp * s.head_dim;
    uint32_t B = mb * (s.heads / tp), fl = s.ffn_hidden / tp, g = s.gated ? 2 : 1;
    char w[40];
#define TG(name, m, n, k, bt)                                                                      \
    (snprintf(w, sizeof(w), "%s h%u mb%u tp%u", name, h, mb, tp),                                  \
     tsl_prof_dev_gemm(c, w, m, n, k, bt, err))
    if (TG("qkv", T, 3 * dl, h, 1) || TG("qk^T", sl, sl, s.head_dim, B) ||
        TG("pv", sl, s.head_dim, sl, B) || TG("attn-out", T, h, dl, 1) ||
        TG("ffn-up", T, g * fl, h, 1) || TG("ffn-down", T, h, fl, 1))
        return -1;
#undef TG
    return 0;
}

/* ---- blocks: the executor's layers (exec_block.h) ---- */

/* A shape as the executor's layer: a gated shape is the Llama block (RMSNorm, SwiGLU,
 * no biases), else the GPT block (LayerNorm, GeLU, biases); causal, as the decoder
 * models the planner prices; fused attention unless the options say unfused. */
static tsl_exec_layer_t block_layer(const tsl_prof_opts_t *o, tsl_prof_block_kind_t kind,
                                    const tsl_prof_shape_t *s, uint32_t mb, uint32_t tp)
{
    return (tsl_exec_layer_t){
        .kind = kind == TSL_PROF_ATTENTION ? TSL_LAYER_ATTENTION : TSL_LAYER_FFN,
        .seq = s->seq_len,
        .hidden = s->hidden,
        .ffn = s->ffn_hidden,
        .heads = s->heads,
        .bias = !s->gated,
        .unfused_attn = o->unfused_attn,
        .rms_norm = s->gated,
        .gated_ffn = s->gated,
        .causal = true,
        .tp = tp,
        .dw = 1,
        .b = mb,
        .tp_group = -1,
        .dw_group = -1,
        .in_fwd = {.group = -1},
        .in_bwd = {.group = -1},
    };
}

static int fwd_work(tsl_prof_dev_t *c, void *b, tsl_err_t *err)
{
    (void)c;
    return tsl_exec_block_fwd(b, err);
}

static int bwd_work(tsl_prof_dev_t *c, void *b, tsl_err_t *err)
{
    (void)c;
    return tsl_exec_block_bwd(b, err);
}

int tsl_prof_dev_block(tsl_prof_dev_t *c, tsl_prof_block_kind_t kind, const tsl_prof_shape_t *s0,
                       uint32_t mb, uint32_t tp, tsl_err_t *err)
{
    tsl_prof_shape_t s = tsl_prof_shape_resolved(s0);
    tsl_exec_block_t *b = NULL;
    /* the executor's attention is h wide (h = a·d): another head width is skipped */
    if (s.heads % tp != 0 || s.ffn_hidden % tp != 0 || s.heads * s.head_dim != s.hidden)
        return 0;
    if (c->p->n_blocks >= TSL_PROF_MAX_BLOCKS)
        return 0;
    tsl_exec_layer_t l = block_layer(c->o, kind, &s, mb, tp);
    if (tsl_exec_block_create(c->dev, &l, 0, c->seed++, &b, err))
        return -1;
    tsl_prof_block_t *r = &c->p->blocks[c->p->n_blocks];
    *r = (tsl_prof_block_t){.kind = kind,
                            .shape = *s0,
                            .mb = mb,
                            .tp = tp,
                            .fwd_flops = tsl_prof_block_flops(kind, &s, mb, tp),
                            .mem_bytes = tsl_exec_block_bytes(b)};
    int rc = keep_warm(c, err) ||
                     time_median(c, fwd_work, b, c->o->warmup + 1, 1, &r->fwd_s, err) ||
                     time_median(c, bwd_work, b, c->o->warmup, 1, &r->bwd_s, err)
                 ? -1
                 : 0;
    tsl_exec_block_destroy(b);
    if (rc == 0)
        c->p->n_blocks++;
    return rc;
}

/* ---- bandwidth: raw copies (devops copy_bytes) ---- */

typedef struct copy {
    tsl_copy_dir_t dir;
    void *dst;
    const void *src;
    size_t bytes;
} copy_t;

static int copy_work(tsl_prof_dev_t *c, void *arg, tsl_err_t *err)
{
    const copy_t *k = arg;
    return c->dev->copy_bytes(c->dev, k->dir, k->dst, k->src, k->bytes, TSL_STREAM_COMPUTE, err);
}

static int time_copy(tsl_prof_dev_t *c, copy_t k, double *gbps, double factor, tsl_err_t *err)
{
    double t;
    if (time_median(c, copy_work, &k, c->o->warmup + 1, 1, &t, err))
        return -1;
    *gbps = tsl_prof_gbps(factor * (double)k.bytes, t);
    return 0;
}

int tsl_prof_dev_bandwidth(tsl_prof_dev_t *c, tsl_err_t *err)
{
    tsl_devops_t *d = c->dev;
    size_t hb = c->sz.h2d_bytes, db = c->sz.dmem_bytes, el = tsl_dtype_bytes(d->act_dtype);
    unsigned char *host = NULL;
    tsl_buf_t d0 = {0}, d1 = {0};
    int rc = -1;
    if (d->host_alloc(d, hb, (void **)&host, err) || seeded(c, &d0, db / el, err) ||
        seeded(c, &d1, db / el, err))
        goto out;
    for (size_t i = 0; i < hb; i++)
        host[i] = (unsigned char)(i * 2654435761u >> 13);
    if (time_copy(c, (copy_t){TSL_COPY_H2D, d0.ptr, host, hb}, &c->p->h2d_gbps, 1, err) ||
        time_copy(c, (copy_t){TSL_COPY_D2H, host, d0.ptr, hb}, &c->p->d2h_gbps, 1, err) ||
        time_copy(c, (copy_t){TSL_COPY_D2D, d1.ptr, d0.ptr, db}, &c->p->dmem_gbps, 2, err))
        goto out; /* device to device: read + write */
    c->p->h2d_bytes = hb;
    c->p->dmem_bytes = db;
    rc = 0;
out:
    d->sync(d, &(tsl_err_t){0}); /* the copies are done before their memory goes */
    d->host_free(d, host);
    d->free(d, &d0);
    d->free(d, &d1);
    return rc;
}

/* ---- the soak ---- */

/* Times k fill GEMMs between the two events: seconds and FLOP/s. */
static int fill_timed(tsl_prof_dev_t *c, uint32_t k, double *took_s, double *rate, tsl_err_t *err)
{
    tsl_devops_t *d = c->dev;
    if (d->event_record(d, c->e0, TSL_STREAM_COMPUTE, err))
        return -1;
    for (uint32_t i = 0; i < k; i++)
        if (d->gemm(d, &c->fill, err))
            return -1;
    if (d->event_record(d, c->e1, TSL_STREAM_COMPUTE, err) || d->sync(d, err) ||
        d->event_elapsed_s(d, c->e0, c->e1, took_s, err))
        return -1;
    double flops = 2.0 * c->fill.m * c->fill.n * c->fill.k * k;
    *rate = *took_s > 0 ? flops / *took_s : 0;
    if (*took_s > 0)
        c->fill_gemm_s = *took_s / k;
    return 0;
}

/* GEMMs enough for want_s at the last measured time per GEMM. */
static uint32_t fill_count(const tsl_prof_dev_t *c, double want_s)
{
    double k = c->fill_gemm_s > 0 ? ceil(want_s / c->fill_gemm_s) : 1;
    return k < 1 ? 1 : k > 1e6 ? 1000000u : (uint32_t)k;
}

static int soak_window(void *ud, double want_s, double *took_s, double *rate, tsl_err_t *err)
{
    tsl_prof_dev_t *c = ud;
    return fill_timed(c, fill_count(c, want_s), took_s, rate, err);
}

void tsl_prof_dev_soak_end(tsl_prof_dev_t *c)
{
    if (c->fill.a.ptr || c->fill.b.ptr || c->fill.c.ptr)
        c->dev->sync(c->dev, &(tsl_err_t){0}); /* the filler is done before its memory goes */
    c->dev->free(c->dev, &c->fill.a);
    c->dev->free(c->dev, &c->fill.b);
    c->dev->free(c->dev, &c->fill.c);
    c->fill_n = 0;
}

int tsl_prof_dev_soak(tsl_prof_dev_t *c, tsl_err_t *err)
{
    uint32_t w = c->sz.warm_gemm;
    tsl_prof_soak_t *s = &c->p->soak;
    *s = (tsl_prof_soak_t){.max_s = c->o->soak_max_s,
                           .window_s = c->sz.soak_window_s,
                           .keep_warm_s = c->sz.keep_warm_s,
                           .gemm = w};
    if (w == 0) {
        s->max_s = 0;
        return 0;
    }
    if (!(s->max_s > 0)) {
        /* no soak: the old half second of large GEMMs so that clocks have ramped */
        char what[40];
        snprintf(what, sizeof(what), "clock warm-up %u^3", w);
        uint32_t n0 = c->p->n_gemms;
        int rc = tsl_prof_dev_gemm(c, what, w, w, w, 1, err) ||
                 tsl_prof_dev_gemm(c, what, w, w, w, 1, err);
        c->p->n_gemms = n0;
        s->max_s = 0;
        s->keep_warm_s = 0;
        return rc ? -1 : 0;
    }
    size_t n = (size_t)w * w;
    c->fill = row_major(w, w, w, 1);
    double took, rate;
    if (seeded(c, &c->fill.a, n, err) || seeded(c, &c->fill.b, n, err) ||
        seeded(c, &c->fill.c, n, err) || fill_timed(c, 1, &took, &rate, err) ||
        tsl_prof_soak(soak_window, c, s, stderr, err)) {
        tsl_prof_dev_soak_end(c);
        return -1;
    }
    c->fill_n = s->keep_warm_s > 0 ? fill_count(c, s->keep_warm_s) : 0;
    return 0;
}

/* ---- the whole profile ---- */

static int all_gemms(tsl_prof_dev_t *c, tsl_err_t *err)
{
    const tsl_prof_opts_t *o = c->o;
    uint32_t r0 = c->sz.ref_gemm[0], r1 = c->sz.ref_gemm[1];
    char what[40];
    snprintf(what, sizeof(what), "reference %u^3", r0);
    if (tsl_prof_dev_gemm(c, what, r0, r0, r0, 1, err))
        return -1;
    snprintf(what, sizeof(what), "reference %u^3", r1);
    if (tsl_prof_dev_gemm(c, what, r1, r1, r1, 1, err))
        return -1;
    for (uint32_t si = 0; si < o->n_shapes; si++) {
        uint32_t mb_lo = o->mb[0], mb_hi = o->mb[o->n_mb - 1];
        uint32_t tp_lo = o->tp[0], tp_hi = o->tp[o->n_tp - 1];
        if (block_gemms(c, &o->shapes[si], mb_lo, tp_lo, err) ||
            (mb_hi != mb_lo && block_gemms(c, &o->shapes[si], mb_hi, tp_lo, err)) ||
            (tp_hi != tp_lo && block_gemms(c, &o->shapes[si], mb_hi, tp_hi, err)))
            return -1;
    }
    return 0;
}

static int all_blocks(tsl_prof_dev_t *c, tsl_err_t *err)
{
    const tsl_prof_opts_t *o = c->o;
    for (uint32_t si = 0; si < o->n_shapes; si++)
        for (uint32_t ti = 0; ti < o->n_tp; ti++)
            for (uint32_t mi = 0; mi < o->n_mb; mi++)
                for (int k = 0; k < 2; k++)
                    if (tsl_prof_dev_block(c, (tsl_prof_block_kind_t)k, &o->shapes[si], o->mb[mi],
                                           o->tp[ti], err))
                        return -1;
    return 0;
}

static void notes(tsl_prof_dev_t *c, int n)
{
    snprintf(c->p->attention_core, sizeof(c->p->attention_core), "%s",
             c->o->unfused_attn ? "executor-unfused" : "executor-fused");
    snprintf(c->p->notes, sizeof(c->p->notes),
             "%sblocks: the executor's own layer forward and backward (worker/exec, as trials "
             "run them; docs/executor.md): %s; a gated shape is the Llama block (RMSNorm, "
             "SwiGLU, no biases), else the GPT block (LayerNorm, GeLU, biases), layer norm, "
             "biases and the residual add timed, no dropout, no TP all-reduce (one device's "
             "share); memory_bytes is what the block held on the device (weights, their "
             "gradients, one micro-batch's stash and activations, the backward workspaces). "
             "collectives: %u-byte elements, in place (all-reduce) or out of place.",
             n == 1 ? "one GPU: collectives ran on a group of 1 (a local copy, busbw 0 by "
                      "definition, no send/recv peer); the overlap comm side is a copy "
                      "stream standing in for NCCL. "
                    : "",
             c->o->unfused_attn
                 ? "unfused attention (--unfused-attn: the b x a x s x s softmax stashed until "
                   "backward, every score computed, masked ones zeroed)"
                 : "fused attention (query chunks, strided-batched GEMMs, masked causal key "
                   "blocks skipped, scores recomputed in backward)",
             (unsigned)tsl_dtype_bytes(c->dev->act_dtype));
}

int tsl_prof_dev_run(tsl_prof_dev_t *c, const tsl_prof_ranks_t *r, int n, tsl_err_t *err)
{
    fprintf(stderr, "profile: %s (%s), %d GPU(s); soak (at most %g s)...\n", c->p->model,
            c->p->uuid, n, c->o->soak_max_s);
    if (tsl_prof_dev_soak(c, err))
        return -1;
    fprintf(stderr, "profile: GEMMs...\n");
    int rc = all_gemms(c, err);
    if (rc == 0) {
        fprintf(stderr, "profile: blocks (%s attention)...\n",
                c->o->unfused_attn ? "unfused" : "fused");
        rc = all_blocks(c, err);
    }
    tsl_prof_dev_soak_end(c); /* the soak's buffers back before the big copies */
    if (rc)
        return -1;
    fprintf(stderr, "profile: bandwidth...\n");
    if (tsl_prof_dev_bandwidth(c, err))
        return -1;
    fprintf(stderr, "profile: collectives...\n");
    if (tsl_prof_dev_collectives(c, r, n, err))
        return -1;
    fprintf(stderr, "profile: overlap...\n");
    if (tsl_prof_dev_overlap(c, r, n, err))
        return -1;
    notes(c, n);
    return 0;
}

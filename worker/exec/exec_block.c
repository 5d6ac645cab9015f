/*
 * exec_block.c — one executor layer alone on a device (exec_block.h): the engine's
 * per-layer state (tsl_exec_xl_t) and the few engine fields its forward and backward
 * read (the device ops and the backward workspaces), built for this one layer, so that
 * tsl_exec_layer_fwd / _bwd run unchanged.
 */
#include <stdlib.h>
#include <string.h>

#include "exec_block.h"
#include "exec_internal.h"

struct tsl_exec_block {
    tsl_exec_t e; /* dev, ws_a..ws_d, g_mid; comm NULL: no TP sum */
    tsl_exec_layer_t d;
    tsl_exec_xl_t L;
    tsl_exec_lctx_t c;
    tsl_buf_t x, out, dout, dx;
    uint64_t bytes;
};

static size_t zmax(size_t a, size_t b)
{
    return a > b ? a : b;
}

static int check_layer(const tsl_exec_layer_t *l, tsl_err_t *err)
{
    uint32_t kv = l->kv_heads ? l->kv_heads : l->heads, tp = l->tp ? l->tp : 1;
    if (l->kind != TSL_LAYER_ATTENTION && l->kind != TSL_LAYER_FFN && l->kind != TSL_LAYER_ENCODER)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED, "exec block: layer kind %s",
                            tsl_layer_kind_name(l->kind));
    if (l->experts) /* the profile prices MoE layers on the roofline, not on blocks */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "exec block: a MoE layer (%u experts) is not measured as a block: "
                            "its all-to-alls need the EP group",
                            l->experts);
    if (!l->b || !l->seq || !l->hidden || l->heads % tp || kv % tp || l->ffn % tp ||
        (l->heads && ((!l->kv_lora && l->hidden % l->heads) || l->heads % kv)))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "exec block: h %u, s %u, b %u, heads %u, K/V heads %u, ffn %u do not "
                            "split over tp %u",
                            l->hidden, l->seq, l->b, l->heads, kv, l->ffn, tp);
    return 0;
}

/* The backward workspaces as alloc_scratch (exec_engine.c) sizes them, for one layer:
 * a: dQKV or the FFN's up gradient; b: dctx or a gated FFN's dg; c: the attention
 * core's; d: the norm output's gradient (2·T·h for a parallel block with two norms);
 * g_mid: an encoder's gradient between its two blocks. */
static int alloc_ws(tsl_exec_block_t *k, tsl_err_t *err)
{
    const tsl_exec_layer_t *d = &k->d;
    tsl_devops_t *dev = k->e.dev;
    tsl_dtype_t adt = dev->act_dtype;
    bool attn = d->kind != TSL_LAYER_FFN, ffn = d->kind != TSL_LAYER_ATTENTION;
    size_t T = k->L.T, th = T * d->hidden, dl = d->hidden / d->tp, fl = d->ffn / d->tp;
    size_t q = dl + 2 * tsl_exec_kv_width(d) / d->tp, g = d->gated_ffn ? 2 : 1;
    tsl_exec_aw_t aw;
    tsl_exec_attn_widths(d, d->tp, &aw);
    if (d->kv_lora)
        q = aw.qw, dl = aw.ow;
    size_t a = zmax(attn ? T * q : 0, ffn ? T * g * fl : 0);
    size_t b = zmax(attn ? T * dl : 0, ffn && d->gated_ffn ? T * fl : 0);
    size_t c = attn ? tsl_exec_attn_ws(d, d->tp, k->L.chunk) : 0;
    size_t dd = d->parallel && !d->shared_norm ? 2 * th : th;
    tsl_exec_ws_need_t w = {0};
    if (d->kv_lora) /* latent attention: its own needs (exec_mla.c) */
        tsl_exec_ws_need(d, T, k->L.chunk, &w);
    a = zmax(a, w.a), b = zmax(b, w.b);
    if (dev->alloc(dev, &k->e.ws_a, a, adt, err) || dev->alloc(dev, &k->e.ws_b, b, adt, err) ||
        dev->alloc(dev, &k->e.ws_c, c, adt, err) || dev->alloc(dev, &k->e.ws_d, dd, adt, err) ||
        dev->alloc(dev, &k->e.ws_l, w.l, adt, err) ||
        dev->alloc(dev, &k->e.g_mid, d->kind == TSL_LAYER_ENCODER ? th : 0, adt, err))
        return -1;
    return 0;
}

/* Parameters, gradients (zero), stash, activations; seeded values. */
static int alloc_state(tsl_exec_block_t *k, uint64_t seed, tsl_err_t *err)
{
    tsl_devops_t *dev = k->e.dev;
    tsl_dtype_t adt = dev->act_dtype;
    size_t th = k->L.T * k->d.hidden;
    tsl_buf_t *act[] = {&k->x, &k->out, &k->dout, &k->dx};
    if (dev->alloc(dev, &k->L.param, k->L.n_local, adt, err) ||
        dev->alloc(dev, &k->L.grad, k->L.n_local, adt, err) ||
        dev->alloc(dev, &k->c.st, k->L.st.n, adt, err) ||
        dev->alloc(dev, &k->c.st32, k->L.st.n32, TSL_DT_F32, err))
        return -1;
    for (int i = 0; i < 4; i++)
        if (dev->alloc(dev, act[i], th, adt, err) ||
            dev->fill_uniform(dev, act[i], seed, (uint64_t)i + 1, 0, 0, 1, err))
            return -1;
    return dev->fill_uniform(dev, &k->L.param, seed, 0, 0, 0, 0.05f, err) ||
                   dev->zero(dev, &k->L.grad, err)
               ? -1
               : 0;
}

int tsl_exec_block_create(tsl_devops_t *dev, const tsl_exec_layer_t *l, uint32_t attn_chunk,
                          uint64_t seed, tsl_exec_block_t **out, tsl_err_t *err)
{
    *out = NULL;
    if (check_layer(l, err))
        return -1;
    tsl_exec_block_t *k = calloc(1, sizeof(*k));
    if (!k)
        return tsl_err_setc(err, TSL_E_NOMEM, "exec block: out of host memory");
    uint64_t used0 = dev->used_bytes(dev);
    k->e.dev = dev;
    k->d = *l;
    k->d.tp = l->tp ? l->tp : 1;
    k->d.ckpt = k->d.sdp = false;
    k->L.d = &k->d;
    k->L.T = (size_t)k->d.b * k->d.seq;
    tsl_exec_offsets(&k->d, k->d.tp, &k->L.o);
    tsl_exec_stash_layout(&k->d, k->d.tp, k->d.b, &k->L.st);
    k->L.chunk = tsl_exec_attn_chunk(&k->d, k->d.tp, k->d.b, attn_chunk);
    k->L.n_local = k->L.n_held = k->L.o.n;
    k->L.own = &k->L;
    k->c = (tsl_exec_lctx_t){.e = &k->e, .L = &k->L};
    if (alloc_ws(k, err) || alloc_state(k, seed, err)) {
        tsl_exec_block_destroy(k);
        return -1;
    }
    k->c.p = k->L.param;
    k->c.g = k->L.grad;
    k->bytes = dev->used_bytes(dev) - used0;
    *out = k;
    return 0;
}

int tsl_exec_block_fwd(tsl_exec_block_t *b, tsl_err_t *err)
{
    return tsl_exec_layer_fwd(&b->c, &b->x, &b->out, err);
}

int tsl_exec_block_bwd(tsl_exec_block_t *b, tsl_err_t *err)
{
    return tsl_exec_layer_bwd(&b->c, &b->x, &b->dout, &b->dx, err);
}

uint64_t tsl_exec_block_bytes(const tsl_exec_block_t *b)
{
    return b->bytes;
}

uint32_t tsl_exec_block_chunk(const tsl_exec_block_t *b)
{
    return b->L.chunk;
}

void tsl_exec_block_destroy(tsl_exec_block_t *b)
{
    if (!b)
        return;
    tsl_devops_t *dev = b->e.dev;
    tsl_buf_t *bufs[] = {&b->e.ws_a, &b->e.ws_b,  &b->e.ws_c, &b->e.ws_d, &b->e.g_mid,
                         &b->e.ws_l, &b->L.param, &b->L.grad, &b->c.st,   &b->c.st32,
                         &b->x,      &b->out,     &b->dout,   &b->dx};
    for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
        dev->free(dev, bufs[i]);
    free(b);
}

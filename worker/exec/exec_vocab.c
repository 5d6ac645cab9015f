/*
 * exec_vocab.c — the executor's vocabulary layers, vocabulary-parallel as Megatron-LM
 * runs them under TP (and as the planner prices them: parameters, FLOPs and the logits
 * divided by t; model.c add_embedding / add_head, roofline.c ends_s).
 *
 * The vocabulary is padded to a multiple of 128·t (tsl_exec_vocab_local); TP rank j
 * holds rows [j·vl, (j+1)·vl) of the embedding table and of the head weight (stored
 * vl × h, vocabulary rows, so that a tied head is the table itself). The padding
 * rows are never looked up and their logits take no part in the softmax, so every
 * split computes the loss of the true vocabulary.
 *
 * Embedding: a lookup of the ids in this rank's rows (others give zero rows), one TP
 * all-reduce of the output, then the learned positions (replicated) added; backward
 * accumulates this rank's rows and the positions, no communication (Megatron's
 * VocabParallelEmbedding). Head: local logits T × vl; cross-entropy over the split
 * vocabulary (Megatron's vocab_parallel_cross_entropy): the row maxima all-gathered
 * over the TP group (commops reduce only by sums; the gathered maxima give the exact
 * row max), Σexp and the target logit summed over it, dlogits = scale·(softmax −
 * onehot) locally; dx = dlogits·W, then one TP all-reduce (Megatron's f).
 */
#include "exec_internal.h"

#define TRY(x)                                                                                     \
    do {                                                                                           \
        if ((x))                                                                                   \
            return -1;                                                                             \
    } while (0)

/* This rank's share of the vocabulary. */
typedef struct vshare {
    int T, h, s, b;
    int v0, vl, valid; /* first row, rows held, of them real words */
} vshare_t;

static vshare_t share_of(const tsl_exec_lctx_t *c)
{
    const tsl_exec_layer_t *l = c->L->d;
    int vl = (int)tsl_exec_vocab_local(l->vocab, l->tp), v0 = (int)l->tp_index * vl;
    int valid = (int)l->vocab - v0;
    vshare_t v = {(int)(l->b * l->seq), (int)l->hidden, (int)l->seq, (int)l->b, v0, vl, 0};
    v.valid = valid < 0 ? 0 : valid > vl ? vl : valid;
    return v;
}

static int gemm(tsl_exec_t *e, bool ta, bool tb, int m, int n, int k, float beta, tsl_buf_t a,
                int lda, tsl_buf_t b, int ldb, tsl_buf_t c, int ldc, tsl_err_t *err)
{
    tsl_gemm_t g = {ta, tb, m, n, k, 1.0f, beta, a, b, c, lda, ldb, ldc, 0, 0, 0, 1};
    return e->dev->gemm(e->dev, &g, err);
}

/* The learned positions, one sample of s rows at a time: y += pos (forward), or
 * dpos += dy (backward). */
static int positions(tsl_exec_lctx_t *c, vshare_t v, const tsl_buf_t *from, tsl_buf_t *to,
                     bool backward, tsl_err_t *err)
{
    tsl_exec_t *e = c->e;
    size_t n = (size_t)v.s * v.h;
    for (int i = 0; i < v.b; i++) {
        tsl_buf_t one = tsl_buf_view(backward ? from : to, (size_t)i * n, n);
        tsl_buf_t pos = tsl_buf_view(backward ? to : from, c->L->o.pos, n);
        TRY(backward ? e->dev->axpy(e->dev, 1.0f, &one, &pos, err)
                     : e->dev->axpy(e->dev, 1.0f, &pos, &one, err));
    }
    return 0;
}

int tsl_exec_embed_fwd(tsl_exec_lctx_t *c, tsl_buf_t *out, tsl_err_t *err)
{
    tsl_exec_t *e = c->e;
    vshare_t v = share_of(c);
    tsl_buf_t tab = tsl_buf_view(&c->p, c->L->vw, (size_t)v.vl * v.h);
    TRY(e->dev->vembed_fwd(e->dev, &tab, &c->ids, out, v.T, v.h, v.v0, v.vl, err));
    TRY(tsl_exec_tp_sum(e, c->L, out, err));
    return c->L->o.pos == TSL_NONE ? 0 : positions(c, v, &c->p, out, false, err);
}

int tsl_exec_embed_bwd(tsl_exec_lctx_t *c, const tsl_buf_t *dout, tsl_err_t *err)
{
    tsl_exec_t *e = c->e;
    vshare_t v = share_of(c);
    tsl_buf_t dtab = tsl_buf_view(&c->g, c->L->vw, (size_t)v.vl * v.h);
    TRY(e->dev->vembed_bwd(e->dev, dout, &c->ids, &dtab, v.T, v.h, v.v0, v.vl, err));
    return c->L->o.pos == TSL_NONE ? 0 : positions(c, v, dout, &c->g, true, err);
}

/* Every TP member's row maxima, member k's at k·T. */
static int gather_max(tsl_exec_t *e, const tsl_exec_xl_t *L, vshare_t v, tsl_buf_t *mxs,
                      tsl_err_t *err)
{
    tsl_buf_t loc = tsl_buf_view(&e->vloc, 0, (size_t)v.T);
    *mxs = loc;
    if (L->d->tp == 1)
        return 0;
    int back = e->ph_cur;
    *mxs = tsl_buf_view(&e->vmax, 0, (size_t)v.T * L->d->tp);
    TRY(tsl_exec_ph(e, PH_COMM, err));
    TRY(e->comm->all_gather(e->comm, L->tp_g, &loc, mxs, e->dev->stream(e->dev, TSL_STREAM_COMPUTE),
                            err));
    return tsl_exec_ph(e, back, err);
}

/* Logits (in the act dtype, for the GEMM), the loss into c->loss, and the dlogits in
 * fp32 into the stash, kept for backward as Megatron keeps its fp32 softmax (and as
 * the planner charges 4 bytes per logit). The cpu ops' act dtype is F32: the GEMM
 * writes the stash directly. */
int tsl_exec_head_fwd(tsl_exec_lctx_t *c, const tsl_buf_t *x, tsl_err_t *err)
{
    tsl_exec_t *e = c->e;
    tsl_devops_t *d = e->dev;
    vshare_t v = share_of(c);
    int parts = (int)c->L->d->tp;
    float scale = 1.0f / ((float)e->r.micro_batch * e->r.n_micro * v.s);
    tsl_buf_t w = tsl_buf_view(&c->p, c->L->vw, (size_t)v.vl * v.h);
    tsl_buf_t dl = tsl_buf_view(&c->st32, c->L->st.logits, (size_t)v.T * v.vl);
    tsl_buf_t lg = e->vlog.ptr ? tsl_buf_view(&e->vlog, 0, dl.n) : dl;
    tsl_buf_t loc = tsl_buf_view(&e->vloc, 0, (size_t)v.T), mxs;
    tsl_buf_t sums = tsl_buf_view(&e->vsum, 0, 2 * (size_t)v.T);
    TRY(gemm(e, false, true, v.T, v.vl, v.h, 0.0f, *x, v.h, w, v.h, lg, v.vl, err));
    TRY(d->vxent_max(d, &lg, &loc, v.T, v.vl, v.valid, err));
    TRY(gather_max(e, c->L, v, &mxs, err));
    TRY(d->vxent_sums(d, &lg, &c->ids, &mxs, parts, &sums, v.T, v.vl, v.valid, v.v0, err));
    TRY(tsl_exec_tp_sum(e, c->L, &sums, err));
    return d->vxent(d, &lg, &c->ids, &mxs, parts, &sums, &dl, v.T, v.vl, v.valid, v.v0, scale,
                    c->loss, err);
}

/* dW += dlogitsᵀ·x (this rank's vocabulary rows), dx = TP-sum(dlogits·W). */
int tsl_exec_head_bwd(tsl_exec_lctx_t *c, const tsl_buf_t *x, tsl_buf_t *dx, tsl_err_t *err)
{
    tsl_exec_t *e = c->e;
    vshare_t v = share_of(c);
    size_t n = (size_t)v.vl * v.h;
    tsl_buf_t dl = tsl_buf_view(&c->st32, c->L->st.logits, (size_t)v.T * v.vl);
    tsl_buf_t w = tsl_buf_view(&c->p, c->L->vw, n), dw = tsl_buf_view(&c->g, c->L->vw, n);
    if (e->vlog.ptr) { /* the GEMMs take the act dtype */
        tsl_buf_t a = tsl_buf_view(&e->vlog, 0, dl.n);
        TRY(e->dev->copy(e->dev, &a, &dl, err));
        dl = a;
    }
    TRY(gemm(e, true, false, v.vl, v.h, v.T, 1.0f, dl, v.vl, *x, v.h, dw, v.h, err));
    TRY(gemm(e, false, false, v.T, v.h, v.vl, 0.0f, dl, v.vl, w, v.h, *dx, v.h, err));
    return tsl_exec_tp_sum(e, c->L, dx, err);
}

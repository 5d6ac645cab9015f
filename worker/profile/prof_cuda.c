/*
 * prof_cuda.c — the cuda backend: measures one node's GPUs with the CUDA
 * runtime, cuBLAS and NCCL (profile.h says what, docs/profile-format.md how).
 *
 * Every figure: warm-up runs, then the median of `iters` runs timed with CUDA
 * events on a stream of this file's own, on random bf16 data (tsl_k_fill).
 * Every CUDA, cuBLAS and NCCL call is checked; a failure returns -1 with
 * TSL_E_DEVICE and a message naming the call and the library's error string.
 */
#include "prof.h"
#include "prof_kernels.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <nccl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef TSL_HAVE_NVML
#include <nvml.h>
#endif

/* A failed CUDA, cuBLAS or NCCL call: TSL_E_DEVICE naming the call and the
 * library's error string, then `goto out`. */
#define DEVICE_CHECK(type, ok, strerror_fn, call)                                                  \
    do {                                                                                           \
        type r_ = (call);                                                                          \
        if (r_ != (ok)) {                                                                          \
            tsl_err_setc(err, TSL_E_DEVICE, "%s: %s (%s:%d)", #call, strerror_fn(r_), __FILE__,    \
                         __LINE__);                                                                \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)
#define CU(call) DEVICE_CHECK(cudaError_t, cudaSuccess, cudaGetErrorString, call)
#define CB(call) DEVICE_CHECK(cublasStatus_t, CUBLAS_STATUS_SUCCESS, cublasGetStatusString, call)
#define NC(call) DEVICE_CHECK(ncclResult_t, ncclSuccess, ncclGetErrorString, call)

#define MIB                       (1024ull * 1024)
#define GIB                       (1024ull * MIB)
#define MAX_ITERS                 64u
#define MAX_GPUS                  16
#define TSL_PROF_CUBLAS_WORKSPACE (64ull << 20)
#define OVERLAP_NCCL_BYTES        (256ull << 20) /* per all-reduce of the overlap test */

typedef struct ctx {
    const tsl_prof_opts_t *o;
    tsl_prof_t *p;
    int dev;
    cudaStream_t st;
    cublasHandle_t blas;
    cudaEvent_t e0, e1;
    uint64_t seed;
} ctx_t;

/* ---- buffers ---- */

static int dalloc(ctx_t *c, void **ptr, size_t bf16_elems, tsl_err_t *err)
{
    int rc = -1;
    *ptr = NULL;
    CU(cudaMalloc(ptr, bf16_elems * 2));
    CU(tsl_k_fill(*ptr, bf16_elems, c->seed++, c->st));
    rc = 0;
out:
    return rc;
}

/* ---- GEMMs, row-major: C[m×n] = op(A)·op(B), op(A) m×k, op(B) k×n ---- */

typedef struct gemm {
    bool ta, tb;
    uint32_t m, n, k, batch;
    const void *a, *b;
    void *c;
    long long sa, sb, sc; /* batch strides, elements */
    float alpha;
} gemm_t;

static int run_gemm(ctx_t *c, const gemm_t *g, tsl_err_t *err)
{
    int rc = -1;
    float alpha = g->alpha != 0 ? g->alpha : 1.0f, beta = 0.0f;
    int lda = g->ta ? (int)g->m : (int)g->k, ldb = g->tb ? (int)g->k : (int)g->n;
    cublasOperation_t opa = g->ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opb = g->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    /* column-major: Cᵀ[n×m] = op(B)ᵀ·op(A)ᵀ */
    if (g->batch <= 1)
        CB(cublasGemmEx(c->blas, opb, opa, (int)g->n, (int)g->m, (int)g->k, &alpha, g->b,
                        CUDA_R_16BF, ldb, g->a, CUDA_R_16BF, lda, &beta, g->c, CUDA_R_16BF,
                        (int)g->n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    else
        CB(cublasGemmStridedBatchedEx(c->blas, opb, opa, (int)g->n, (int)g->m, (int)g->k, &alpha,
                                      g->b, CUDA_R_16BF, ldb, g->sb, g->a, CUDA_R_16BF, lda, g->sa,
                                      &beta, g->c, CUDA_R_16BF, (int)g->n, g->sc, (int)g->batch,
                                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    rc = 0;
out:
    return rc;
}

static double gemm_flops(const gemm_t *g)
{
    return 2.0 * g->m * g->n * g->k * (g->batch ? g->batch : 1);
}

/* The one timing loop: `warmup` untimed runs of fn, then c->o->iters times
 * `inner` runs between two events on c->st; the median, divided by inner. */
typedef int (*work_fn)(ctx_t *c, const void *arg, tsl_err_t *err);

static int time_median(ctx_t *c, work_fn fn, const void *arg, uint32_t warmup, uint32_t inner,
                       double *median_s, tsl_err_t *err)
{
    int rc = -1;
    double t[MAX_ITERS];
    for (uint32_t i = 0; i < warmup; i++)
        if (fn(c, arg, err) != 0)
            goto out;
    for (uint32_t it = 0; it < c->o->iters; it++) {
        CU(cudaEventRecord(c->e0, c->st));
        for (uint32_t i = 0; i < inner; i++)
            if (fn(c, arg, err) != 0)
                goto out;
        CU(cudaEventRecord(c->e1, c->st));
        CU(cudaEventSynchronize(c->e1));
        float ms;
        CU(cudaEventElapsedTime(&ms, c->e0, c->e1));
        t[it] = ms * 1e-3 / inner;
    }
    *median_s = tsl_prof_median(t, c->o->iters);
    rc = 0;
out:
    return rc;
}

static int gemm_work(ctx_t *c, const void *g, tsl_err_t *err)
{
    return run_gemm(c, g, err);
}

/* A GEMM alone on its own random buffers: median over iters of a loop of
 * `inner` launches between two events, divided by inner. */
static int time_gemm(ctx_t *c, const char *what, uint32_t m, uint32_t n, uint32_t k, uint32_t batch,
                     tsl_err_t *err)
{
    int rc = -1;
    void *a = NULL, *b = NULL, *cc = NULL;
    uint32_t nb = batch ? batch : 1;
    if (c->p->n_gemms >= TSL_PROF_MAX_GEMMS)
        return 0;
    if (dalloc(c, &a, (size_t)m * k * nb, err) || dalloc(c, &b, (size_t)k * n * nb, err) ||
        dalloc(c, &cc, (size_t)m * n * nb, err))
        goto out;
    gemm_t g = {
        false, false, m, n, k, nb, a, b, cc, (long long)m * k, (long long)k * n, (long long)m * n,
        1.0f};
    double med;
    if (time_median(c, gemm_work, &g, c->o->warmup + 1, 10, &med, err) != 0)
        goto out;
    tsl_prof_gemm_t *r = &c->p->gemms[c->p->n_gemms++];
    snprintf(r->what, sizeof(r->what), "%s", what);
    r->m = m;
    r->n = n;
    r->k = k;
    r->batch = nb;
    r->flops = gemm_flops(&g);
    r->time_s = med;
    rc = 0;
out:
    cudaFree(a);
    cudaFree(b);
    cudaFree(cc);
    return rc;
}

/* ---- blocks ---- */

#define MAX_BUFS 24
#define MAX_OPS  16

typedef enum { OP_GEMM, OP_SOFTMAX, OP_SOFTMAX_BWD, OP_ACT, OP_ACT_BWD } op_kind_t;

typedef struct op {
    op_kind_t kind;
    gemm_t g;
    const void *x, *y; /* inputs */
    void *z;           /* output */
    size_t rows;
    uint32_t cols;
    bool gated;
} op_t;

typedef struct block {
    void *buf[MAX_BUFS];
    uint32_t n_buf;
    op_t fwd[MAX_OPS], bwd[MAX_OPS];
    uint32_t n_fwd, n_bwd;
} block_t;

static void *balloc(ctx_t *c, block_t *b, size_t elems, tsl_err_t *err)
{
    void *p;
    if (b->n_buf >= MAX_BUFS || dalloc(c, &p, elems, err) != 0)
        return NULL;
    b->buf[b->n_buf++] = p;
    return p;
}

static void block_free(block_t *b)
{
    for (uint32_t i = 0; i < b->n_buf; i++)
        cudaFree(b->buf[i]);
    b->n_buf = 0;
}

static op_t gemm_op(bool ta, bool tb, uint32_t m, uint32_t n, uint32_t k, const void *a,
                    const void *bm, void *cm)
{
    return (op_t){.kind = OP_GEMM, .g = {ta, tb, m, n, k, 1, a, bm, cm, 0, 0, 0, 1.0f}};
}

static op_t bgemm_op(bool ta, bool tb, uint32_t m, uint32_t n, uint32_t k, uint32_t batch,
                     const void *a, const void *bm, void *cm, float alpha)
{
    return (op_t){.kind = OP_GEMM,
                  .g = {ta, tb, m, n, k, batch, a, bm, cm, (long long)m * k, (long long)k * n,
                        (long long)m * n, alpha}};
}

static int run_ops(ctx_t *c, const op_t *ops, uint32_t n, tsl_err_t *err)
{
    int rc = -1;
    for (uint32_t i = 0; i < n; i++) {
        const op_t *op = &ops[i];
        switch (op->kind) {
        case OP_GEMM:
            if (run_gemm(c, &op->g, err) != 0)
                goto out;
            break;
        case OP_SOFTMAX: CU(tsl_k_softmax(op->x, op->z, op->rows, op->cols, c->st)); break;
        case OP_SOFTMAX_BWD:
            CU(tsl_k_softmax_bwd(op->x, op->y, op->z, op->rows, op->cols, c->st));
            break;
        case OP_ACT:
            if (op->gated)
                CU(tsl_k_swiglu(op->x, op->z, op->rows, op->cols, c->st));
            else
                CU(tsl_k_gelu(op->x, op->z, op->rows * op->cols, c->st));
            break;
        case OP_ACT_BWD:
            if (op->gated)
                CU(tsl_k_swiglu_bwd(op->x, op->y, op->z, op->rows, op->cols, c->st));
            else
                CU(tsl_k_gelu_bwd(op->x, op->y, op->z, op->rows * op->cols, c->st));
            break;
        }
    }
    rc = 0;
out:
    return rc;
}

/* Attention block on one device of a TP group of tp: a/tp heads.
 * QKV, QKᵀ (batched), softmax, PV (batched), output projection; backward: two
 * GEMMs per forward GEMM and the softmax backward. Q, K and V are read as
 * [batch, s, d] slices of the QKV output (the layout transposes a framework
 * does are not timed). */
static int build_attention(ctx_t *c, block_t *b, const tsl_prof_shape_t *s, uint32_t mb,
                           uint32_t tp, tsl_err_t *err)
{
    uint32_t h = s->hidden, sl = s->seq_len, dh = s->head_dim, heads = s->heads / tp;
    uint32_t T = mb * sl, dl = heads * dh, B = mb * heads;
    size_t td = (size_t)T * dl, ss = (size_t)B * sl * sl;
    void *x = balloc(c, b, (size_t)T * h, err), *wqkv = balloc(c, b, (size_t)h * 3 * dl, err);
    void *qkv = balloc(c, b, 3 * td, err), *S = balloc(c, b, ss, err), *P = balloc(c, b, ss, err);
    void *ctxb = balloc(c, b, td, err), *wo = balloc(c, b, (size_t)dl * h, err);
    void *y = balloc(c, b, (size_t)T * h, err), *dy = balloc(c, b, (size_t)T * h, err);
    void *dwo = balloc(c, b, (size_t)dl * h, err), *dctx = balloc(c, b, td, err);
    void *dP = balloc(c, b, ss, err), *dS = balloc(c, b, ss, err);
    void *dqkv = balloc(c, b, 3 * td, err), *dwqkv = balloc(c, b, (size_t)h * 3 * dl, err);
    void *dx = balloc(c, b, (size_t)T * h, err);
    if (b->n_buf != 16)
        return -1; /* an allocation failed; err says which call */
    (void)y;
    char *q = qkv, *k = (char *)qkv + td * 2, *v = (char *)qkv + 2 * td * 2;
    char *dq = dqkv, *dk = (char *)dqkv + td * 2, *dv = (char *)dqkv + 2 * td * 2;
    float scale = 1.0f / sqrtf((float)dh);
    b->fwd[b->n_fwd++] = gemm_op(false, false, T, 3 * dl, h, x, wqkv, qkv);
    b->fwd[b->n_fwd++] = bgemm_op(false, true, sl, sl, dh, B, q, k, S, scale);
    b->fwd[b->n_fwd++] =
        (op_t){.kind = OP_SOFTMAX, .x = S, .z = P, .rows = (size_t)B * sl, .cols = sl};
    b->fwd[b->n_fwd++] = bgemm_op(false, false, sl, dh, sl, B, P, v, ctxb, 1.0f);
    b->fwd[b->n_fwd++] = gemm_op(false, false, T, h, dl, ctxb, wo, y);

    b->bwd[b->n_bwd++] = gemm_op(false, true, T, dl, h, dy, wo, dctx);
    b->bwd[b->n_bwd++] = gemm_op(true, false, dl, h, T, ctxb, dy, dwo);
    b->bwd[b->n_bwd++] = bgemm_op(false, true, sl, sl, dh, B, dctx, v, dP, 1.0f);
    b->bwd[b->n_bwd++] = bgemm_op(true, false, sl, dh, sl, B, P, dctx, dv, 1.0f);
    b->bwd[b->n_bwd++] = (op_t){
        .kind = OP_SOFTMAX_BWD, .x = P, .y = dP, .z = dS, .rows = (size_t)B * sl, .cols = sl};
    b->bwd[b->n_bwd++] = bgemm_op(false, false, sl, dh, sl, B, dS, k, dq, scale);
    b->bwd[b->n_bwd++] = bgemm_op(true, false, sl, dh, sl, B, dS, q, dk, scale);
    b->bwd[b->n_bwd++] = gemm_op(false, true, T, h, 3 * dl, dqkv, wqkv, dx);
    b->bwd[b->n_bwd++] = gemm_op(true, false, h, 3 * dl, T, x, dqkv, dwqkv);
    return 0;
}

/* FFN block on one device: f/tp columns of the up projection(s), GELU or
 * SwiGLU, the down projection; backward two GEMMs per forward GEMM. */
static int build_ffn(ctx_t *c, block_t *b, const tsl_prof_shape_t *s, uint32_t mb, uint32_t tp,
                     tsl_err_t *err)
{
    uint32_t h = s->hidden, T = mb * s->seq_len, fl = s->ffn_hidden / tp, g = s->gated ? 2 : 1;
    void *x = balloc(c, b, (size_t)T * h, err), *w1 = balloc(c, b, (size_t)h * g * fl, err);
    void *u = balloc(c, b, (size_t)T * g * fl, err), *a = balloc(c, b, (size_t)T * fl, err);
    void *w2 = balloc(c, b, (size_t)fl * h, err), *y = balloc(c, b, (size_t)T * h, err);
    void *dy = balloc(c, b, (size_t)T * h, err), *da = balloc(c, b, (size_t)T * fl, err);
    void *dw2 = balloc(c, b, (size_t)fl * h, err), *du = balloc(c, b, (size_t)T * g * fl, err);
    void *dx = balloc(c, b, (size_t)T * h, err), *dw1 = balloc(c, b, (size_t)h * g * fl, err);
    if (b->n_buf != 12)
        return -1; /* an allocation failed; err says which call */
    b->fwd[b->n_fwd++] = gemm_op(false, false, T, g * fl, h, x, w1, u);
    b->fwd[b->n_fwd++] =
        (op_t){.kind = OP_ACT, .x = u, .z = a, .rows = T, .cols = fl, .gated = s->gated};
    b->fwd[b->n_fwd++] = gemm_op(false, false, T, h, fl, a, w2, y);

    b->bwd[b->n_bwd++] = gemm_op(false, true, T, fl, h, dy, w2, da);
    b->bwd[b->n_bwd++] = gemm_op(true, false, fl, h, T, a, dy, dw2);
    b->bwd[b->n_bwd++] = (op_t){
        .kind = OP_ACT_BWD, .x = u, .y = da, .z = du, .rows = T, .cols = fl, .gated = s->gated};
    b->bwd[b->n_bwd++] = gemm_op(false, true, T, h, g * fl, du, w1, dx);
    b->bwd[b->n_bwd++] = gemm_op(true, false, h, g * fl, T, x, du, dw1);
    return 0;
}

typedef struct op_list {
    const op_t *ops;
    uint32_t n;
} op_list_t;

static int ops_work(ctx_t *c, const void *arg, tsl_err_t *err)
{
    const op_list_t *l = arg;
    return run_ops(c, l->ops, l->n, err);
}

static int time_ops(ctx_t *c, const op_t *ops, uint32_t n, double *median_s, tsl_err_t *err)
{
    op_list_t l = {ops, n};
    return time_median(c, ops_work, &l, c->o->warmup, 1, median_s, err);
}

static int measure_block(ctx_t *c, tsl_prof_block_kind_t kind, const tsl_prof_shape_t *s0,
                         uint32_t mb, uint32_t tp, tsl_err_t *err)
{
    int rc = -1;
    block_t b;
    memset(&b, 0, sizeof(b));
    tsl_prof_shape_t s = tsl_prof_shape_resolved(s0);
    if (s.heads % tp != 0 || s.ffn_hidden % tp != 0)
        return 0; /* not a valid split of this shape: skipped */
    if (c->p->n_blocks >= TSL_PROF_MAX_BLOCKS)
        return 0;
    size_t free0, free1, total;
    CU(cudaDeviceSynchronize());
    CU(cudaMemGetInfo(&free0, &total));
    if ((kind == TSL_PROF_ATTENTION ? build_attention(c, &b, &s, mb, tp, err)
                                    : build_ffn(c, &b, &s, mb, tp, err)) != 0)
        goto out;
    CU(cudaDeviceSynchronize());
    CU(cudaMemGetInfo(&free1, &total));
    tsl_prof_block_t *r = &c->p->blocks[c->p->n_blocks];
    r->kind = kind;
    r->shape = *s0;
    r->mb = mb;
    r->tp = tp;
    r->fwd_flops = tsl_prof_block_flops(kind, &s, mb, tp);
    r->mem_bytes = free0 > free1 ? free0 - free1 : 0;
    if (time_ops(c, b.fwd, b.n_fwd, &r->fwd_s, err) != 0 ||
        time_ops(c, b.bwd, b.n_bwd, &r->bwd_s, err) != 0)
        goto out;
    c->p->n_blocks++;
    rc = 0;
out:
    cudaDeviceSynchronize();
    block_free(&b);
    return rc;
}

/* The forward GEMMs of a block alone, at one (mb, tp). */
static int block_gemms(ctx_t *c, const tsl_prof_shape_t *s0, uint32_t mb, uint32_t tp,
                       tsl_err_t *err)
{
    tsl_prof_shape_t s = tsl_prof_shape_resolved(s0);
    if (s.heads % tp != 0 || s.ffn_hidden % tp != 0)
        return 0;
    uint32_t h = s.hidden, sl = s.seq_len, T = mb * sl, dl = s.heads / tp * s.head_dim;
    uint32_t B = mb * (s.heads / tp), fl = s.ffn_hidden / tp, g = s.gated ? 2 : 1;
    char w[40];
#define TG(name, m, n, k, bt)                                                                      \
    (snprintf(w, sizeof(w), "%s h%u mb%u tp%u", name, h, mb, tp), time_gemm(c, w, m, n, k, bt, err))
    if (TG("qkv", T, 3 * dl, h, 1) || TG("qk^T", sl, sl, s.head_dim, B) ||
        TG("pv", sl, s.head_dim, sl, B) || TG("attn-out", T, h, dl, 1) ||
        TG("ffn-up", T, g * fl, h, 1) || TG("ffn-down", T, h, fl, 1))
        return -1;
#undef TG
    return 0;
}

/* ---- bandwidth ---- */

typedef struct copy {
    void *dst;
    const void *src;
    size_t bytes;
    enum cudaMemcpyKind kind;
} copy_t;

static int copy_work(ctx_t *c, const void *arg, tsl_err_t *err)
{
    const copy_t *k = arg;
    int rc = -1;
    CU(cudaMemcpyAsync(k->dst, k->src, k->bytes, k->kind, c->st));
    rc = 0;
out:
    return rc;
}

static int time_copy(ctx_t *c, void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                     double *median_s, tsl_err_t *err)
{
    copy_t k = {dst, src, bytes, kind};
    return time_median(c, copy_work, &k, c->o->warmup + 1, 1, median_s, err);
}

static int measure_bandwidth(ctx_t *c, tsl_err_t *err)
{
    int rc = -1;
    size_t hb = c->o->quick ? 64 * MIB : 256 * MIB, db = c->o->quick ? 256 * MIB : GIB;
    void *host = NULL, *d0 = NULL, *d1 = NULL;
    double t;
    CU(cudaMallocHost(&host, hb));
    for (size_t i = 0; i < hb; i++)
        ((unsigned char *)host)[i] = (unsigned char)(i * 2654435761u >> 13);
    if (dalloc(c, &d0, db / 2, err) != 0 || dalloc(c, &d1, db / 2, err) != 0)
        goto out;
    if (time_copy(c, d0, host, hb, cudaMemcpyHostToDevice, &t, err) != 0)
        goto out;
    c->p->h2d_gbps = tsl_prof_gbps((double)hb, t);
    if (time_copy(c, host, d0, hb, cudaMemcpyDeviceToHost, &t, err) != 0)
        goto out;
    c->p->d2h_gbps = tsl_prof_gbps((double)hb, t);
    if (time_copy(c, d1, d0, db, cudaMemcpyDeviceToDevice, &t, err) != 0)
        goto out;
    c->p->dmem_gbps = tsl_prof_gbps(2.0 * db, t); /* read + write */
    c->p->h2d_bytes = hb;
    c->p->dmem_bytes = db;
    rc = 0;
out:
    cudaFreeHost(host);
    cudaFree(d0);
    cudaFree(d1);
    return rc;
}

/* ---- NCCL ---- */

typedef struct comm_set {
    int n;
    ncclComm_t comm[MAX_GPUS];
    cudaStream_t st[MAX_GPUS];
    cudaEvent_t e0[MAX_GPUS], e1[MAX_GPUS];
    void *send[MAX_GPUS], *recv[MAX_GPUS];
} comm_set_t;

/* Frees every rank's resources and makes restore_dev current again. */
static void comm_set_free(comm_set_t *cs, int restore_dev)
{
    for (int i = 0; i < cs->n; i++) {
        cudaSetDevice(i);
        if (cs->comm[i] != NULL)
            ncclCommDestroy(cs->comm[i]);
        cudaFree(cs->send[i]);
        cudaFree(cs->recv[i]);
        if (cs->e0[i] != NULL)
            cudaEventDestroy(cs->e0[i]);
        if (cs->e1[i] != NULL)
            cudaEventDestroy(cs->e1[i]);
        if (cs->st[i] != NULL)
            cudaStreamDestroy(cs->st[i]);
    }
    memset(cs, 0, sizeof(*cs));
    cudaSetDevice(restore_dev);
}

static int comm_set_init(ctx_t *c, comm_set_t *cs, int n, size_t max_bytes, tsl_err_t *err)
{
    int rc = -1, devs[MAX_GPUS] = {0};
    memset(cs, 0, sizeof(*cs));
    for (int i = 0; i < n; i++)
        devs[i] = i;
    cs->n = n;
    NC(ncclCommInitAll(cs->comm, n, devs));
    for (int i = 0; i < n; i++) {
        CU(cudaSetDevice(i));
        CU(cudaStreamCreateWithFlags(&cs->st[i], cudaStreamNonBlocking));
        CU(cudaEventCreate(&cs->e0[i]));
        CU(cudaEventCreate(&cs->e1[i]));
        CU(cudaMalloc(&cs->send[i], max_bytes));
        CU(cudaMalloc(&cs->recv[i], max_bytes));
        CU(tsl_k_fill(cs->send[i], max_bytes / 2, c->seed++, cs->st[i]));
        CU(tsl_k_fill(cs->recv[i], max_bytes / 2, c->seed++, cs->st[i]));
        CU(cudaStreamSynchronize(cs->st[i]));
    }
    rc = 0;
out:
    cudaSetDevice(c->dev);
    return rc;
}

/* One collective of `bytes` (nccl-tests' size) on every rank of cs. */
static int launch_coll(comm_set_t *cs, tsl_coll_t op, size_t bytes, tsl_err_t *err)
{
    int rc = -1, n = cs->n;
    size_t count = bytes / 2;
    NC(ncclGroupStart());
    for (int r = 0; r < n; r++) {
        switch (op) {
        case TSL_COLL_ALL_REDUCE:
            NC(ncclAllReduce(cs->send[r], cs->recv[r], count, ncclHalf, ncclSum, cs->comm[r],
                             cs->st[r]));
            break;
        case TSL_COLL_ALL_GATHER:
            NC(ncclAllGather(cs->send[r], cs->recv[r], count / n, ncclHalf, cs->comm[r],
                             cs->st[r]));
            break;
        case TSL_COLL_REDUCE_SCATTER:
            NC(ncclReduceScatter(cs->send[r], cs->recv[r], count / n, ncclHalf, ncclSum,
                                 cs->comm[r], cs->st[r]));
            break;
        case TSL_COLL_SEND_RECV:
            NC(ncclSend(cs->send[r], count, ncclHalf, (r + 1) % n, cs->comm[r], cs->st[r]));
            NC(ncclRecv(cs->recv[r], count, ncclHalf, (r + n - 1) % n, cs->comm[r], cs->st[r]));
            break;
        default: break;
        }
    }
    NC(ncclGroupEnd());
    rc = 0;
out:
    if (rc != 0)
        ncclGroupEnd();
    return rc;
}

static int time_coll(ctx_t *c, comm_set_t *cs, tsl_coll_t op, size_t bytes, double *median_s,
                     tsl_err_t *err)
{
    int rc = -1;
    double t[MAX_ITERS];
    uint32_t inner = bytes <= 16 * MIB ? 20 : 2;
    for (uint32_t i = 0; i < c->o->warmup + 1; i++)
        if (launch_coll(cs, op, bytes, err) != 0)
            goto out;
    for (uint32_t it = 0; it < c->o->iters; it++) {
        for (int r = 0; r < cs->n; r++) {
            CU(cudaSetDevice(r));
            CU(cudaEventRecord(cs->e0[r], cs->st[r]));
        }
        for (uint32_t i = 0; i < inner; i++)
            if (launch_coll(cs, op, bytes, err) != 0)
                goto out;
        double worst = 0;
        for (int r = 0; r < cs->n; r++) {
            CU(cudaSetDevice(r));
            CU(cudaEventRecord(cs->e1[r], cs->st[r]));
        }
        for (int r = 0; r < cs->n; r++) {
            CU(cudaSetDevice(r));
            CU(cudaEventSynchronize(cs->e1[r]));
            float ms;
            CU(cudaEventElapsedTime(&ms, cs->e0[r], cs->e1[r]));
            worst = fmax(worst, ms * 1e-3 / inner);
        }
        t[it] = worst;
    }
    *median_s = tsl_prof_median(t, c->o->iters);
    rc = 0;
out:
    cudaSetDevice(c->dev);
    return rc;
}

static int measure_nccl(ctx_t *c, int n_gpus, tsl_err_t *err)
{
    int rc = -1;
    comm_set_t cs;
    memset(&cs, 0, sizeof(cs));
    size_t max_bytes = c->o->quick ? 256 * MIB : GIB;
    int g_first = n_gpus == 1 ? 1 : 2;
    for (int g = g_first; g <= n_gpus && g <= MAX_GPUS; g++) {
        if (comm_set_init(c, &cs, g, max_bytes, err) != 0)
            goto out;
        for (int op = 0; op < TSL_COLL_COUNT; op++) {
            if (op == TSL_COLL_SEND_RECV && g == 1)
                continue; /* no peer on a one-GPU node */
            for (size_t bytes = 1024; bytes <= max_bytes; bytes *= 4) {
                size_t b = bytes / (2 * (size_t)g) * 2 * (size_t)g;
                double t;
                if (c->p->n_colls >= TSL_PROF_MAX_COLLS)
                    break;
                if (time_coll(c, &cs, (tsl_coll_t)op, b, &t, err) != 0)
                    goto out;
                tsl_prof_coll_t *r = &c->p->colls[c->p->n_colls++];
                r->op = (tsl_coll_t)op;
                r->group = (uint32_t)g;
                r->bytes = b;
                r->time_s = t;
                r->algbw_gbps = tsl_prof_gbps((double)b, t);
                r->busbw_gbps = r->algbw_gbps * tsl_prof_busbw_factor((tsl_coll_t)op, g);
            }
        }
        comm_set_free(&cs, c->dev);
    }
    rc = 0;
out:
    comm_set_free(&cs, c->dev);
    return rc;
}

/* ---- overlap: a GEMM loop on one stream, communication on another ---- */

typedef enum { COMM_NCCL, COMM_D2D, COMM_H2D } comm_kind_t;

typedef struct overlap_env {
    ctx_t *c;
    comm_kind_t kind;
    cudaStream_t cst;
    cudaEvent_t c0, c1;
    void *src, *dst;
    size_t bytes;
    comm_set_t *cs;
    gemm_t g;
} overlap_env_t;

static int comm_once(overlap_env_t *e, tsl_err_t *err)
{
    int rc = -1;
    if (e->kind == COMM_NCCL) {
        if (launch_coll(e->cs, TSL_COLL_ALL_REDUCE, e->bytes, err) != 0)
            goto out;
    } else {
        CU(cudaMemcpyAsync(e->dst, e->src, e->bytes,
                           e->kind == COMM_H2D ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToDevice,
                           e->cst));
    }
    rc = 0;
out:
    return rc;
}

/* Runs ng GEMMs and nc comm iterations (either may be 0) from one start; the
 * elapsed time of each side from the common start to its own end. */
static int overlap_run(overlap_env_t *e, uint32_t ng, uint32_t nc, double *gemm_s, double *comm_s,
                       tsl_err_t *err)
{
    int rc = -1;
    ctx_t *c = e->c;
    cudaStream_t cst = e->kind == COMM_NCCL ? e->cs->st[c->dev] : e->cst;
    CU(cudaDeviceSynchronize());
    CU(cudaEventRecord(c->e0, c->st));
    CU(cudaStreamWaitEvent(cst, c->e0, 0));
    CU(cudaEventRecord(e->c0, cst));
    for (uint32_t i = 0; i < (ng > nc ? ng : nc); i++) {
        if (i < ng && run_gemm(c, &e->g, err) != 0)
            goto out;
        if (i < nc && comm_once(e, err) != 0)
            goto out;
    }
    CU(cudaEventRecord(c->e1, c->st));
    CU(cudaEventRecord(e->c1, cst));
    CU(cudaEventSynchronize(c->e1));
    CU(cudaEventSynchronize(e->c1));
    float ms;
    CU(cudaEventElapsedTime(&ms, c->e0, c->e1));
    *gemm_s = ms * 1e-3;
    CU(cudaEventElapsedTime(&ms, e->c0, e->c1));
    *comm_s = ms * 1e-3;
    if (e->kind == COMM_NCCL)
        CU(cudaDeviceSynchronize());
    rc = 0;
out:
    return rc;
}

static int measure_overlap(ctx_t *c, comm_kind_t kind, comm_set_t *cs, tsl_err_t *err)
{
    int rc = -1;
    overlap_env_t e;
    memset(&e, 0, sizeof(e));
    e.c = c;
    e.kind = kind;
    e.cs = cs;
    uint32_t gm = 8192, reps = 3;
    void *a = NULL, *b = NULL, *cc = NULL, *host = NULL, *dsrc = NULL, *ddst = NULL;
    e.bytes = kind == COMM_H2D ? 256 * MIB : kind == COMM_NCCL ? OVERLAP_NCCL_BYTES : 512 * MIB;
    if (c->p->n_overlap >= TSL_PROF_MAX_OVERLAP)
        return 0;
    CU(cudaStreamCreateWithFlags(&e.cst, cudaStreamNonBlocking));
    CU(cudaEventCreate(&e.c0));
    CU(cudaEventCreate(&e.c1));
    if (dalloc(c, &a, (size_t)gm * gm, err) || dalloc(c, &b, (size_t)gm * gm, err) ||
        dalloc(c, &cc, (size_t)gm * gm, err))
        goto out;
    e.g = (gemm_t){false, false, gm, gm, gm, 1, a, b, cc, 0, 0, 0, 1.0f};
    if (kind == COMM_H2D) {
        CU(cudaMallocHost(&host, e.bytes));
        memset(host, 0x5a, e.bytes);
        e.src = host;
        if (dalloc(c, &ddst, e.bytes / 2, err) != 0)
            goto out;
        e.dst = ddst;
    } else if (kind == COMM_D2D) {
        if (dalloc(c, &dsrc, e.bytes / 2, err) != 0 || dalloc(c, &ddst, e.bytes / 2, err) != 0)
            goto out;
        e.src = dsrc;
        e.dst = ddst;
    }
    /* calibrate: one of each alone, then loops of about 200 ms per side */
    double g1, c1, x;
    if (overlap_run(&e, 3, 0, &g1, &x, err) || overlap_run(&e, 0, 3, &x, &c1, err))
        goto out;
    uint32_t ng = (uint32_t)fmax(4, 0.2 / (g1 / 3)), nc = (uint32_t)fmax(4, 0.2 / (c1 / 3));
    double ga[8], ca[8], gt[8], ct[8];
    for (uint32_t r = 0; r < reps; r++) {
        if (overlap_run(&e, ng, 0, &ga[r], &x, err) || overlap_run(&e, 0, nc, &x, &ca[r], err) ||
            overlap_run(&e, ng, nc, &gt[r], &ct[r], err))
            goto out;
    }
    tsl_prof_overlap_t *o = &c->p->overlap[c->p->n_overlap++];
    snprintf(o->comm, sizeof(o->comm), "%s",
             kind == COMM_NCCL  ? "nccl-all-reduce"
             : kind == COMM_D2D ? "d2d-copy"
                                : "h2d-copy");
    o->stand_in = kind != COMM_NCCL;
    o->gemm_m = o->gemm_n = o->gemm_k = gm;
    o->comm_bytes = e.bytes;
    o->gemm_alone_s = tsl_prof_median(ga, reps);
    o->comm_alone_s = tsl_prof_median(ca, reps);
    o->gemm_together_s = tsl_prof_median(gt, reps);
    o->comm_together_s = tsl_prof_median(ct, reps);
    o->gemm_slowdown = o->gemm_together_s / o->gemm_alone_s;
    o->comm_slowdown = o->comm_together_s / o->comm_alone_s;
    rc = 0;
out:
    cudaDeviceSynchronize();
    cudaFree(a);
    cudaFree(b);
    cudaFree(cc);
    cudaFree(dsrc);
    cudaFree(ddst);
    if (host != NULL)
        cudaFreeHost(host);
    if (e.c0 != NULL)
        cudaEventDestroy(e.c0);
    if (e.c1 != NULL)
        cudaEventDestroy(e.c1);
    if (e.cst != NULL)
        cudaStreamDestroy(e.cst);
    return rc;
}

/* ---- device facts ---- */

static void version3(char *out, size_t cap, int v, int major_div, int minor_div)
{
    snprintf(out, cap, "%d.%d.%d", v / major_div, v % major_div / minor_div, v % minor_div);
}

/* nvidia-smi -L's form: "GPU-8f2c1a3e-…" (8-4-4-4-12 hex digits of the 16 bytes). */
static void format_uuid(const struct cudaDeviceProp *prop, char *out, size_t cap)
{
    const unsigned char *u = (const unsigned char *)prop->uuid.bytes;
    snprintf(out, cap, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
             u[14], u[15]);
}

static int device_facts(ctx_t *c, int n_gpus, tsl_err_t *err)
{
    int rc = -1, v;
    tsl_prof_t *p = c->p;
    struct cudaDeviceProp prop;
    CU(cudaGetDeviceProperties(&prop, c->dev));
    snprintf(p->model, sizeof(p->model), "%.95s", prop.name);
    format_uuid(&prop, p->uuid, sizeof(p->uuid));
    for (int g = 0; g < n_gpus && g < (int)TSL_PROF_MAX_GPUS; g++) {
        struct cudaDeviceProp pg;
        CU(cudaGetDeviceProperties(&pg, g));
        format_uuid(&pg, p->gpu_uuids[g], sizeof(p->gpu_uuids[g]));
    }
    size_t fr, tot;
    CU(cudaMemGetInfo(&fr, &tot));
    p->mem_total_bytes = tot;
    p->mem_free_bytes = fr;
    p->sm_count = (uint32_t)prop.multiProcessorCount;
    p->cc_major = (uint32_t)prop.major;
    p->cc_minor = (uint32_t)prop.minor;
    CU(cudaDriverGetVersion(&v));
    snprintf(p->driver_version, sizeof(p->driver_version), "%d.%d", v / 1000, v % 1000 / 10);
    CU(cudaRuntimeGetVersion(&v));
    snprintf(p->runtime_version, sizeof(p->runtime_version), "%d.%d", v / 1000, v % 1000 / 10);
    CB(cublasGetVersion(c->blas, &v));
    version3(p->cublas_version, sizeof(p->cublas_version), v, 10000, 100);
    NC(ncclGetVersion(&v));
    version3(p->nccl_version, sizeof(p->nccl_version), v, 10000, 100);
    tsl_prof_hw_name(p->model, p->mem_total_bytes, p->hw_gpu, sizeof(p->hw_gpu));
    p->gpus = (uint32_t)n_gpus;
    snprintf(p->hw_link, sizeof(p->hw_link), "single");
    if (n_gpus > 1) {
        int access = 0;
        CU(cudaDeviceCanAccessPeer(&access, 0, 1));
        snprintf(p->hw_link, sizeof(p->hw_link), "%s", access ? "p2p" : "pcie");
    }
#ifdef TSL_HAVE_NVML
    /* optional: clocks and power limit where NVML answers */
    if (nvmlInit_v2() == NVML_SUCCESS) {
        nvmlDevice_t nd;
        unsigned int mhz, mw;
        if (nvmlDeviceGetHandleByIndex_v2((unsigned)c->dev, &nd) == NVML_SUCCESS) {
            if (nvmlDeviceGetClockInfo(nd, NVML_CLOCK_SM, &mhz) == NVML_SUCCESS)
                p->sm_clock_mhz = mhz;
            if (nvmlDeviceGetClockInfo(nd, NVML_CLOCK_MEM, &mhz) == NVML_SUCCESS)
                p->mem_clock_mhz = mhz;
            if (nvmlDeviceGetPowerManagementLimit(nd, &mw) == NVML_SUCCESS)
                p->power_limit_w = mw / 1000;
            if (n_gpus > 1) {
                nvmlEnableState_t on;
                if (nvmlDeviceGetNvLinkState(nd, 0, &on) == NVML_SUCCESS &&
                    on == NVML_FEATURE_ENABLED)
                    snprintf(p->hw_link, sizeof(p->hw_link), "nvlink");
            }
        }
        nvmlShutdown();
    }
#endif
    rc = 0;
out:
    return rc;
}

int tsl_prof_run_cuda(const tsl_prof_opts_t *o, tsl_prof_t *p, tsl_err_t *err)
{
    int rc = -1, n_gpus = 0;
    void *ws = NULL;
    ctx_t c;
    memset(&c, 0, sizeof(c));
    c.o = o;
    c.p = p;
    c.dev = o->device;
    c.seed = 0x7e55e1;
    comm_set_t cs;
    memset(&cs, 0, sizeof(cs));
    if (o->iters == 0 || o->iters > MAX_ITERS)
        return tsl_err_set(err, "iterations: %u outside 1..%u", o->iters, MAX_ITERS);
    snprintf(p->backend, sizeof(p->backend), "cuda");
    p->simulated = false;
    p->warmup = o->warmup;
    p->iters = o->iters;
    CU(cudaGetDeviceCount(&n_gpus));
    if (c.dev < 0 || c.dev >= n_gpus) {
        tsl_err_setc(err, TSL_E_DEVICE, "device %d: %d CUDA device(s) visible", c.dev, n_gpus);
        goto out;
    }
    CU(cudaSetDevice(c.dev));
    CU(cudaStreamCreateWithFlags(&c.st, cudaStreamNonBlocking));
    CU(cudaEventCreate(&c.e0));
    CU(cudaEventCreate(&c.e1));
    CB(cublasCreate(&c.blas));
    CB(cublasSetStream(c.blas, c.st));
    /* a workspace of its own, as training stacks give cuBLAS (PyTorch: cuBLASLt
     * with a workspace), so that the library may pick its split-K kernels */
    CU(cudaMalloc(&ws, TSL_PROF_CUBLAS_WORKSPACE));
    CB(cublasSetWorkspace(c.blas, ws, TSL_PROF_CUBLAS_WORKSPACE));
    if (device_facts(&c, n_gpus, err) != 0)
        goto out;
    fprintf(stderr, "profile: %s (%s), %d GPU(s); GEMMs...\n", p->model, p->uuid, n_gpus);
    /* about half a second of large GEMMs first, so that clocks have ramped */
    if (time_gemm(&c, "clock warm-up 8192^3", 8192, 8192, 8192, 1, err) != 0 ||
        time_gemm(&c, "clock warm-up 8192^3", 8192, 8192, 8192, 1, err) != 0)
        goto out;
    c.p->n_gemms = 0;
    if (time_gemm(&c, "reference 8192^3", 8192, 8192, 8192, 1, err) != 0 ||
        time_gemm(&c, "reference 4096^3", 4096, 4096, 4096, 1, err) != 0)
        goto out;
    for (uint32_t si = 0; si < o->n_shapes; si++) {
        uint32_t mb_lo = o->mb[0], mb_hi = o->mb[o->n_mb - 1];
        uint32_t tp_lo = o->tp[0], tp_hi = o->tp[o->n_tp - 1];
        if (block_gemms(&c, &o->shapes[si], mb_lo, tp_lo, err) ||
            (mb_hi != mb_lo && block_gemms(&c, &o->shapes[si], mb_hi, tp_lo, err)) ||
            (tp_hi != tp_lo && block_gemms(&c, &o->shapes[si], mb_hi, tp_hi, err)))
            goto out;
    }
    fprintf(stderr, "profile: blocks...\n");
    for (uint32_t si = 0; si < o->n_shapes; si++)
        for (uint32_t ti = 0; ti < o->n_tp; ti++)
            for (uint32_t mi = 0; mi < o->n_mb; mi++)
                for (int k = 0; k < 2; k++)
                    if (measure_block(&c, (tsl_prof_block_kind_t)k, &o->shapes[si], o->mb[mi],
                                      o->tp[ti], err) != 0)
                        goto out;
    fprintf(stderr, "profile: bandwidth...\n");
    if (measure_bandwidth(&c, err) != 0)
        goto out;
    fprintf(stderr, "profile: NCCL...\n");
    if (measure_nccl(&c, n_gpus, err) != 0)
        goto out;
    fprintf(stderr, "profile: overlap...\n");
    if (n_gpus > 1) {
        if (comm_set_init(&c, &cs, n_gpus, OVERLAP_NCCL_BYTES, err) != 0 ||
            measure_overlap(&c, COMM_NCCL, &cs, err) != 0)
            goto out;
    } else {
        if (measure_overlap(&c, COMM_D2D, NULL, err) != 0)
            goto out;
    }
    if (measure_overlap(&c, COMM_H2D, NULL, err) != 0)
        goto out;
    snprintf(p->notes, sizeof(p->notes),
             "%sblocks: the attention core is the batched-GEMM path (QK^T, softmax, PV), not a "
             "fused flash kernel; layer norm, dropout, biases, residual adds and layout "
             "transposes are not timed; memory_bytes is the device memory the block's buffers "
             "took (weights, their gradients, one micro-batch's activations and activation "
             "gradients). collectives: fp16 (2-byte) elements, out of place.",
             n_gpus == 1 ? "one GPU: collectives ran on a group of 1 (a local copy, busbw 0 by "
                           "definition, no send/recv peer); the overlap comm side is a copy "
                           "stream standing in for NCCL. "
                         : "");
    rc = 0;
out:
    comm_set_free(&cs, c.dev);
    if (c.blas != NULL)
        cublasDestroy(c.blas);
    cudaFree(ws);
    if (c.e0 != NULL)
        cudaEventDestroy(c.e0);
    if (c.e1 != NULL)
        cudaEventDestroy(c.e1);
    if (c.st != NULL)
        cudaStreamDestroy(c.st);
    return rc;
}

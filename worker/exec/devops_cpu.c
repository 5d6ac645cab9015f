/*
 * devops_cpu.c — the device ops in plain C, float32, one thread.
 *
 * Deterministic on purpose: every reduction runs in a fixed order (GEMM sums over k in
 * a double accumulator in index order), so two runs that issue the same ops on the
 * same data give the same bits. That is what lets tests/test_exec.c compare a
 * pipelined run with a single-rank run bitwise.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devops.h"
#include "devops_cpu_moe.h"

typedef struct cpu_ctx {
    tsl_memcount_t mem;
} cpu_ctx_t;

struct tsl_event {
    double t_s;
};

#define F(b)  ((float *)(b)->ptr)
#define CF(b) ((const float *)(b)->ptr)

static cpu_ctx_t *ctx_of(tsl_devops_t *o)
{
    return o->ctx;
}

static int cpu_alloc(tsl_devops_t *o, tsl_buf_t *out, size_t n, tsl_dtype_t dt, tsl_err_t *err)
{
    cpu_ctx_t *c = ctx_of(o);
    uint64_t bytes = (uint64_t)n * tsl_dtype_bytes(dt);
    memset(out, 0, sizeof(*out));
    if (tsl_memcount_admit(&c->mem, "cpu", bytes, err))
        return -1;
    /* calloc: fresh buffers read as zeros, so runs never depend on old heap bytes. */
    out->ptr = calloc(n ? n : 1, tsl_dtype_bytes(dt));
    if (!out->ptr)
        return tsl_err_setc(err, TSL_E_NOMEM, "cpu: out of memory allocating %llu bytes",
                            (unsigned long long)bytes);
    out->n = n;
    out->dt = dt;
    tsl_memcount_add(&c->mem, (int64_t)bytes);
    return 0;
}

static void cpu_free(tsl_devops_t *o, tsl_buf_t *b)
{
    if (!b->ptr)
        return;
    tsl_memcount_add(&ctx_of(o)->mem, -(int64_t)(b->n * tsl_dtype_bytes(b->dt)));
    free(b->ptr);
    memset(b, 0, sizeof(*b));
}

static uint64_t cpu_peak(tsl_devops_t *o)
{
    return ctx_of(o)->mem.peak_bytes;
}
static uint64_t cpu_used(tsl_devops_t *o)
{
    return ctx_of(o)->mem.used_bytes;
}
static void cpu_reset_peak(tsl_devops_t *o)
{
    ctx_of(o)->mem.peak_bytes = ctx_of(o)->mem.used_bytes;
}

static int cpu_upload(tsl_devops_t *o, tsl_buf_t *dst, const void *host, tsl_err_t *err)
{
    (void)o, (void)err;
    memcpy(dst->ptr, host, dst->n * 4u);
    return 0;
}

static int cpu_download(tsl_devops_t *o, const tsl_buf_t *src, void *host, tsl_err_t *err)
{
    (void)o, (void)err;
    memcpy(host, src->ptr, src->n * 4u);
    return 0;
}

static int cpu_copy(tsl_devops_t *o, tsl_buf_t *dst, const tsl_buf_t *src, tsl_err_t *err)
{
    (void)o;
    if (dst->n != src->n || dst->dt != src->dt) /* the cpu ops never hold BF16 */
        return tsl_err_set(err, "copy: %zu elements into %zu of another type", src->n, dst->n);
    memmove(dst->ptr, src->ptr, src->n * tsl_dtype_bytes(src->dt));
    return 0;
}

static int cpu_fill_uniform(tsl_devops_t *o, tsl_buf_t *b, uint64_t seed, uint64_t stream,
                            uint64_t base, float center, float amp, tsl_err_t *err)
{
    (void)o, (void)err;
    for (size_t i = 0; i < b->n; i++)
        F(b)[i] = center + amp * tsl_uniform(seed, stream, base + i);
    return 0;
}

static int cpu_fill_ids(tsl_devops_t *o, tsl_buf_t *b, uint64_t seed, uint64_t stream,
                        uint64_t base, uint32_t modulo, tsl_err_t *err)
{
    (void)o, (void)err;
    for (size_t i = 0; i < b->n; i++)
        ((int32_t *)b->ptr)[i] =
            (int32_t)((tsl_uniform_bits(seed, stream, base + i) >> 11) % modulo);
    return 0;
}

static int cpu_zero(tsl_devops_t *o, tsl_buf_t *b, tsl_err_t *err)
{
    (void)o, (void)err;
    memset(b->ptr, 0, b->n * tsl_dtype_bytes(b->dt));
    return 0;
}

/* One output element: Σ_p in index order, in double. */
static double gemm_dot(const tsl_gemm_t *g, const float *a, const float *b, int i, int j)
{
    double s = 0;
    for (int p = 0; p < g->k; p++) {
        float av = g->ta ? a[(size_t)p * g->lda + i] : a[(size_t)i * g->lda + p];
        float bv = g->tb ? b[(size_t)j * g->ldb + p] : b[(size_t)p * g->ldb + j];
        s += (double)av * bv;
    }
    return s;
}

static void gemm_store(const tsl_gemm_t *g, float *c, int i, int j, double s)
{
    float *cv = &c[(size_t)i * g->ldc + j];
    *cv = (float)(g->alpha * s + (g->beta != 0.0f ? g->beta * *cv : 0.0));
}

/* C row i with B read along its rows (B not transposed): the same sums in the same p
 * order as gemm_dot, so the same bits, with B walked contiguously. */
static void gemm_row(const tsl_gemm_t *g, const float *a, const float *b, float *c, int i,
                     double *acc)
{
    for (int j = 0; j < g->n; j++)
        acc[j] = 0;
    for (int p = 0; p < g->k; p++) {
        double av = g->ta ? a[(size_t)p * g->lda + i] : a[(size_t)i * g->lda + p];
        const float *br = b + (size_t)p * g->ldb;
        for (int j = 0; j < g->n; j++)
            acc[j] += av * br[j];
    }
    for (int j = 0; j < g->n; j++)
        gemm_store(g, c, i, j, acc[j]);
}

static int cpu_gemm(tsl_devops_t *o, const tsl_gemm_t *g, tsl_err_t *err)
{
    (void)o, (void)err;
    double *acc = g->tb ? NULL : malloc(sizeof(double) * (size_t)(g->n > 0 ? g->n : 1));
    for (int bi = 0; bi < g->batch; bi++) {
        const float *a = CF(&g->a) + bi * g->stride_a;
        const float *b = CF(&g->b) + bi * g->stride_b;
        float *c = F(&g->c) + bi * g->stride_c;
        for (int i = 0; i < g->m; i++) {
            if (acc) {
                gemm_row(g, a, b, c, i, acc);
                continue;
            }
            for (int j = 0; j < g->n; j++)
                gemm_store(g, c, i, j, gemm_dot(g, a, b, i, j));
        }
    }
    free(acc);
    return 0;
}

static int cpu_ln_fwd(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *gamma,
                      const tsl_buf_t *beta, tsl_buf_t *y, tsl_buf_t *mean, tsl_buf_t *rstd,
                      int rows, int cols, tsl_err_t *err)
{
    (void)o, (void)err;
    for (int r = 0; r < rows; r++) {
        const float *xr = CF(x) + (size_t)r * cols;
        double mu = 0, var = 0;
        for (int c = 0; c < cols; c++)
            mu += xr[c];
        mu /= cols;
        for (int c = 0; c < cols; c++)
            var += (xr[c] - mu) * (xr[c] - mu);
        double rs = 1.0 / sqrt(var / cols + 1e-5);
        F(mean)[r] = (float)mu;
        F(rstd)[r] = (float)rs;
        for (int c = 0; c < cols; c++)
            F(y)[(size_t)r * cols + c] = (float)((xr[c] - mu) * rs * CF(gamma)[c] + CF(beta)[c]);
    }
    return 0;
}

static int cpu_ln_bwd(tsl_devops_t *o, const tsl_buf_t *dy, const tsl_buf_t *x,
                      const tsl_buf_t *gamma, const tsl_buf_t *mean, const tsl_buf_t *rstd,
                      tsl_buf_t *dx, tsl_buf_t *dgamma, tsl_buf_t *dbeta, int rows, int cols,
                      tsl_err_t *err)
{
    (void)o, (void)err;
    for (int r = 0; r < rows; r++) {
        const float *xr = CF(x) + (size_t)r * cols, *dyr = CF(dy) + (size_t)r * cols;
        double mu = CF(mean)[r], rs = CF(rstd)[r], s1 = 0, s2 = 0;
        for (int c = 0; c < cols; c++) {
            double xh = (xr[c] - mu) * rs, g = dyr[c] * CF(gamma)[c];
            s1 += g;
            s2 += g * xh;
            F(dgamma)[c] += (float)(dyr[c] * xh);
            F(dbeta)[c] += dyr[c];
        }
        s1 /= cols;
        s2 /= cols;
        for (int c = 0; c < cols; c++) {
            double xh = (xr[c] - mu) * rs, g = dyr[c] * CF(gamma)[c];
            F(dx)[(size_t)r * cols + c] = (float)(rs * (g - s1 - xh * s2));
        }
    }
    return 0;
}

static int cpu_rms_fwd(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *gamma, tsl_buf_t *y,
                       tsl_buf_t *rstd, int rows, int cols, tsl_err_t *err)
{
    (void)o, (void)err;
    for (int r = 0; r < rows; r++) {
        const float *xr = CF(x) + (size_t)r * cols;
        double ss = 0;
        for (int c = 0; c < cols; c++)
            ss += (double)xr[c] * xr[c];
        double rs = 1.0 / sqrt(ss / cols + 1e-5);
        F(rstd)[r] = (float)rs;
        for (int c = 0; c < cols; c++)
            F(y)[(size_t)r * cols + c] = (float)(xr[c] * rs * CF(gamma)[c]);
    }
    return 0;
}

/* dx = rstd · (g − x̂ · mean(g · x̂)), g = dy · gamma, x̂ = x · rstd. */
static int cpu_rms_bwd(tsl_devops_t *o, const tsl_buf_t *dy, const tsl_buf_t *x,
                       const tsl_buf_t *gamma, const tsl_buf_t *rstd, tsl_buf_t *dx,
                       tsl_buf_t *dgamma, int rows, int cols, tsl_err_t *err)
{
    (void)o, (void)err;
    for (int r = 0; r < rows; r++) {
        const float *xr = CF(x) + (size_t)r * cols, *dyr = CF(dy) + (size_t)r * cols;
        double rs = CF(rstd)[r], s = 0;
        for (int c = 0; c < cols; c++) {
            double xh = xr[c] * rs;
            s += dyr[c] * CF(gamma)[c] * xh;
            F(dgamma)[c] += (float)(dyr[c] * xh);
        }
        s /= cols;
        for (int c = 0; c < cols; c++)
            F(dx)[(size_t)r * cols + c] = (float)(rs * (dyr[c] * CF(gamma)[c] - xr[c] * rs * s));
    }
    return 0;
}

static double sigmoid(double a)
{
    return 1.0 / (1.0 + exp(-a));
}

static int cpu_swiglu_fwd(tsl_devops_t *o, const tsl_buf_t *x, tsl_buf_t *y, int rows, int cols,
                          tsl_err_t *err)
{
    (void)o, (void)err;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            double a = CF(x)[(size_t)r * 2 * cols + c], u = CF(x)[(size_t)r * 2 * cols + cols + c];
            F(y)[(size_t)r * cols + c] = (float)(a * sigmoid(a) * u);
        }
    return 0;
}

/* dgate = dy · up · σ(a)(1 + a(1 − σ(a))), dup = dy · a·σ(a). */
static int cpu_swiglu_bwd(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *dy, tsl_buf_t *dx,
                          int rows, int cols, tsl_err_t *err)
{
    (void)o, (void)err;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            size_t i = (size_t)r * 2 * cols + c;
            double a = CF(x)[i], u = CF(x)[i + cols], g = CF(dy)[(size_t)r * cols + c];
            double sg = sigmoid(a);
            F(dx)[i] = (float)(g * u * sg * (1.0 + a * (1.0 - sg)));
            F(dx)[i + cols] = (float)(g * a * sg);
        }
    return 0;
}

#define GELU_K 0.7978845608028654 /* sqrt(2/pi) */

static int cpu_gelu_fwd(tsl_devops_t *o, const tsl_buf_t *x, tsl_buf_t *y, tsl_err_t *err)
{
    (void)o, (void)err;
    for (size_t i = 0; i < x->n; i++) {
        double v = CF(x)[i];
        F(y)[i] = (float)(0.5 * v * (1.0 + tanh(GELU_K * (v + 0.044715 * v * v * v))));
    }
    return 0;
}

static int cpu_gelu_bwd(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *dy, tsl_buf_t *dx,
                        tsl_err_t *err)
{
    (void)o, (void)err;
    for (size_t i = 0; i < x->n; i++) {
        double v = CF(x)[i], t = tanh(GELU_K * (v + 0.044715 * v * v * v));
        double d = 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * GELU_K * (1 + 3 * 0.044715 * v * v);
        F(dx)[i] = (float)(CF(dy)[i] * d);
    }
    return 0;
}

/* Row r of rows×cols sees columns [lo, hi]: hi = q0 + r mod group (causal, capped at
 * the last column), lo = hi − window + 1 (window > 0, at least 0); the rest are 0. */
static void softmax_rows(const float *x, float *y, int rows, int cols, int group, int q0,
                         bool causal, int window)
{
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * cols;
        float *yr = y + (size_t)r * cols;
        long q = causal ? q0 + r % group : cols - 1, lo = window > 0 ? q - window + 1 : 0;
        long hi = q < cols ? q : cols - 1;
        lo = lo > 0 ? lo : 0;
        double mx = lo <= hi ? xr[lo] : 0, s = 0;
        for (long c = lo + 1; c <= hi; c++)
            mx = fmax(mx, xr[c]);
        for (long c = lo; c <= hi; c++)
            s += exp(xr[c] - mx);
        for (long c = 0; c < cols; c++)
            yr[c] = c >= lo && c <= hi ? (float)(exp(xr[c] - mx) / s) : 0.0f;
    }
}

static int cpu_softmax_fwd(tsl_devops_t *o, const tsl_buf_t *x, tsl_buf_t *y, int rows, int cols,
                           bool causal, tsl_err_t *err)
{
    (void)o, (void)err;
    softmax_rows(CF(x), F(y), rows, cols, cols, 0, causal, 0);
    return 0;
}

static int cpu_softmax_chunk_fwd(tsl_devops_t *o, const tsl_buf_t *x, tsl_buf_t *y, int rows,
                                 int cols, int group, int q0, int window, tsl_err_t *err)
{
    (void)o;
    if (tsl_devops_check_softmax_chunk(x, y, rows, cols, group, q0, window, err))
        return -1;
    softmax_rows(CF(x), F(y), rows, cols, group, q0, true, window);
    return 0;
}

static int cpu_softmax_bwd(tsl_devops_t *o, const tsl_buf_t *y, const tsl_buf_t *dy, tsl_buf_t *dx,
                           int rows, int cols, tsl_err_t *err)
{
    (void)o, (void)err;
    for (int r = 0; r < rows; r++) {
        const float *yr = CF(y) + (size_t)r * cols, *dyr = CF(dy) + (size_t)r * cols;
        double s = 0;
        for (int c = 0; c < cols; c++)
            s += (double)yr[c] * dyr[c];
        for (int c = 0; c < cols; c++)
            F(dx)[(size_t)r * cols + c] = (float)(yr[c] * (dyr[c] - s));
    }
    return 0;
}

static int cpu_axpy(tsl_devops_t *o, float alpha, const tsl_buf_t *x, tsl_buf_t *y, tsl_err_t *err)
{
    (void)o;
    if (x->n != y->n)
        return tsl_err_set(err, "axpy: %zu elements into %zu", x->n, y->n);
    for (size_t i = 0; i < x->n; i++)
        F(y)[i] += alpha * CF(x)[i];
    return 0;
}

static int cpu_scale(tsl_devops_t *o, float alpha, tsl_buf_t *x, tsl_err_t *err)
{
    (void)o, (void)err;
    for (size_t i = 0; i < x->n; i++)
        F(x)[i] *= alpha;
    return 0;
}

static int cpu_add_bias(tsl_devops_t *o, tsl_buf_t *x, const tsl_buf_t *bias, int rows, int cols,
                        tsl_err_t *err)
{
    (void)o, (void)err;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            F(x)[(size_t)r * cols + c] += CF(bias)[c];
    return 0;
}

static int cpu_bias_grad(tsl_devops_t *o, const tsl_buf_t *dy, tsl_buf_t *db, int rows, int cols,
                         tsl_err_t *err)
{
    (void)o, (void)err;
    for (int c = 0; c < cols; c++) {
        double s = 0;
        for (int r = 0; r < rows; r++)
            s += CF(dy)[(size_t)r * cols + c];
        F(db)[c] += (float)s;
    }
    return 0;
}

static int cpu_mse(tsl_devops_t *o, const tsl_buf_t *y, const tsl_buf_t *t, tsl_buf_t *dy,
                   float scale, tsl_buf_t *loss, tsl_err_t *err)
{
    (void)o, (void)err;
    double s = 0;
    for (size_t i = 0; i < y->n; i++) {
        double d = (double)CF(y)[i] - CF(t)[i];
        s += d * d;
        F(dy)[i] = (float)(2.0 * scale * d);
    }
    F(loss)[0] += (float)(scale * s);
    return 0;
}

/* ---- vocabulary-parallel embedding and cross-entropy (devops.h) ---- */

static int cpu_vembed_fwd(tsl_devops_t *o, const tsl_buf_t *table, const tsl_buf_t *ids,
                          tsl_buf_t *y, int rows, int cols, int v0, int vl, tsl_err_t *err)
{
    (void)o, (void)err;
    const int32_t *id = ids->ptr;
    for (int r = 0; r < rows; r++) {
        float *yr = F(y) + (size_t)r * cols;
        if (id[r] >= v0 && id[r] < v0 + vl)
            memcpy(yr, CF(table) + (size_t)(id[r] - v0) * cols, cols * 4u);
        else
            memset(yr, 0, cols * 4u);
    }
    return 0;
}

static int cpu_vembed_bwd(tsl_devops_t *o, const tsl_buf_t *dy, const tsl_buf_t *ids,
                          tsl_buf_t *dtable, int rows, int cols, int v0, int vl, tsl_err_t *err)
{
    (void)o, (void)err;
    const int32_t *id = ids->ptr;
    for (int r = 0; r < rows; r++) {
        if (id[r] < v0 || id[r] >= v0 + vl)
            continue;
        float *d = F(dtable) + (size_t)(id[r] - v0) * cols;
        for (int c = 0; c < cols; c++)
            d[c] += CF(dy)[(size_t)r * cols + c];
    }
    return 0;
}

static int cpu_vxent_max(tsl_devops_t *o, const tsl_buf_t *y, tsl_buf_t *mx, int rows, int cols,
                         int valid, tsl_err_t *err)
{
    (void)o, (void)err;
    for (int r = 0; r < rows; r++) {
        float m = -INFINITY;
        for (int c = 0; c < valid; c++)
            m = fmaxf(m, CF(y)[(size_t)r * cols + c]);
        F(mx)[r] = m;
    }
    return 0;
}

/* The row max over every member's part of the vocabulary. */
static double vmax_of(const tsl_buf_t *mxs, int parts, int rows, int r)
{
    double m = -INFINITY;
    for (int k = 0; k < parts; k++)
        m = fmax(m, CF(mxs)[(size_t)k * rows + r]);
    return m;
}

static int cpu_vxent_sums(tsl_devops_t *o, const tsl_buf_t *y, const tsl_buf_t *t,
                          const tsl_buf_t *mxs, int parts, tsl_buf_t *sums, int rows, int cols,
                          int valid, int v0, tsl_err_t *err)
{
    (void)o, (void)err;
    const int32_t *tg = t->ptr;
    for (int r = 0; r < rows; r++) {
        const float *yr = CF(y) + (size_t)r * cols;
        double m = vmax_of(mxs, parts, rows, r), s = 0;
        for (int c = 0; c < valid; c++)
            s += exp(yr[c] - m);
        F(sums)[r] = (float)s;
        F(sums)[rows + r] = tg[r] >= v0 && tg[r] < v0 + valid ? yr[tg[r] - v0] : 0.0f;
    }
    return 0;
}

static int cpu_vxent(tsl_devops_t *o, const tsl_buf_t *y, const tsl_buf_t *t, const tsl_buf_t *mxs,
                     int parts, const tsl_buf_t *sums, tsl_buf_t *dy, int rows, int cols, int valid,
                     int v0, float scale, tsl_buf_t *loss, tsl_err_t *err)
{
    (void)o, (void)err;
    const int32_t *tg = t->ptr;
    double total = 0;
    for (int r = 0; r < rows; r++) {
        double m = vmax_of(mxs, parts, rows, r), s = CF(sums)[r];
        total += log(s) + m - CF(sums)[rows + r];
        const float *yr = CF(y) + (size_t)r * cols;
        float *dyr = F(dy) + (size_t)r * cols;
        for (int c = 0; c < cols; c++)
            dyr[c] = c < valid
                         ? (float)(scale * (exp(yr[c] - m) / s - (c + v0 == tg[r] ? 1.0 : 0.0)))
                         : 0.0f;
    }
    F(loss)[0] += (float)(scale * total);
    return 0;
}

static int cpu_adam(tsl_devops_t *o, tsl_buf_t *p, const tsl_buf_t *g, tsl_buf_t *master,
                    tsl_buf_t *m, tsl_buf_t *v, float lr, float b1, float b2, float eps, int step,
                    tsl_err_t *err)
{
    (void)o, (void)err, (void)master;
    double c1 = 1.0 - pow(b1, step), c2 = 1.0 - pow(b2, step);
    for (size_t i = 0; i < p->n; i++) {
        double gi = CF(g)[i];
        F(m)[i] = (float)(b1 * F(m)[i] + (1.0 - b1) * gi);
        F(v)[i] = (float)(b2 * F(v)[i] + (1.0 - b2) * gi * gi);
        F(p)[i] -= (float)(lr * (F(m)[i] / c1) / (sqrt(F(v)[i] / c2) + eps));
    }
    return 0;
}

static int cpu_sgd(tsl_devops_t *o, tsl_buf_t *p, const tsl_buf_t *g, tsl_buf_t *master, float lr,
                   tsl_err_t *err)
{
    (void)master;
    return cpu_axpy(o, -lr, g, p, err);
}

static void *cpu_stream(tsl_devops_t *o, int which)
{
    (void)o, (void)which;
    return NULL;
}

static int cpu_event_create(tsl_devops_t *o, tsl_event_t **ev, tsl_err_t *err)
{
    (void)o;
    *ev = calloc(1, sizeof(**ev));
    return *ev ? 0 : tsl_err_setc(err, TSL_E_NOMEM, "cpu: out of memory for an event");
}

static void cpu_event_destroy(tsl_devops_t *o, tsl_event_t *ev)
{
    (void)o;
    free(ev);
}

static int cpu_event_record(tsl_devops_t *o, tsl_event_t *ev, int stream, tsl_err_t *err)
{
    (void)o, (void)stream, (void)err;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ev->t_s = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
    return 0;
}

static int cpu_stream_wait(tsl_devops_t *o, int stream, tsl_event_t *ev, tsl_err_t *err)
{
    (void)o, (void)stream, (void)ev, (void)err;
    return 0; /* one stream really: everything already ran in order */
}

static int cpu_elapsed(tsl_devops_t *o, tsl_event_t *a, tsl_event_t *b, double *s, tsl_err_t *err)
{
    (void)o, (void)err;
    *s = b->t_s - a->t_s;
    return 0;
}

static int cpu_sync(tsl_devops_t *o, tsl_err_t *err)
{
    (void)o, (void)err;
    return 0;
}

static int cpu_host_alloc(tsl_devops_t *o, size_t bytes, void **out, tsl_err_t *err)
{
    (void)o;
    *out = malloc(bytes ? bytes : 1);
    return *out ? 0 : tsl_err_setc(err, TSL_E_NOMEM, "cpu: out of host memory (%zu bytes)", bytes);
}

static void cpu_host_free(tsl_devops_t *o, void *p)
{
    (void)o;
    free(p);
}

/* Device memory is host memory here: every direction is one memcpy, now. */
static int cpu_copy_bytes(tsl_devops_t *o, tsl_copy_dir_t dir, void *dst, const void *src,
                          size_t bytes, int stream, tsl_err_t *err)
{
    (void)o, (void)dir, (void)stream, (void)err;
    memcpy(dst, src, bytes);
    return 0;
}

/* Rotary embedding (devops.h rope): angles in double, rows in order; with ys 0 the
 * heads' rotations summed in head order. */
static int cpu_rope(tsl_devops_t *o, const tsl_buf_t *x, tsl_buf_t *y, const tsl_rope_t *r,
                    tsl_err_t *err)
{
    (void)o;
    if (tsl_devops_check_rope(x, y, r, err))
        return -1;
    int half = r->dim / 2;
    for (int t = 0; t < r->rows; t++) {
        double pos = (double)(t % r->seq);
        for (int i = 0; i < half; i++) {
            double th = pos * pow((double)r->base, -2.0 * i / r->dim);
            double cs = cos(th), sn = r->inverse ? -sin(th) : sin(th), sa = 0, sb = 0;
            for (int b = 0; b < r->heads; b++) {
                const float *xh = CF(x) + (size_t)t * r->ldx + (size_t)b * r->xs;
                double a = xh[i], c = xh[i + half];
                double ra = a * cs - c * sn, rb = c * cs + a * sn;
                if (r->ys == 0) {
                    sa += ra, sb += rb;
                    continue;
                }
                float *yh = F(y) + (size_t)t * r->ldy + (size_t)b * r->ys;
                yh[i] = (float)ra;
                yh[i + half] = (float)rb;
            }
            if (r->ys == 0) {
                float *yh = F(y) + (size_t)t * r->ldy;
                yh[i] = (float)sa;
                yh[i + half] = (float)sb;
            }
        }
    }
    return 0;
}

static int cpu_copy2d(tsl_devops_t *o, const tsl_buf_t *x, int ldx, int xs, tsl_buf_t *y, int ldy,
                      int ys, int rows, int batch, int cols, tsl_err_t *err)
{
    (void)o;
    if (tsl_devops_check_copy2d(x, ldx, xs, y, ldy, ys, rows, batch, cols, err))
        return -1;
    for (int r = 0; r < rows; r++)
        for (int b = 0; b < batch; b++)
            memmove(F(y) + (size_t)r * ldy + (size_t)b * ys,
                    CF(x) + (size_t)r * ldx + (size_t)b * xs, (size_t)cols * sizeof(float));
    return 0;
}

static void cpu_destroy(tsl_devops_t *o)
{
    if (!o)
        return;
    free(o->ctx);
    free(o);
}

static const tsl_devops_t cpu_table = {
    .name = "cpu",
    .act_dtype = TSL_DT_F32,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .peak_bytes = cpu_peak,
    .used_bytes = cpu_used,
    .reset_peak = cpu_reset_peak,
    .upload = cpu_upload,
    .download = cpu_download,
    .copy = cpu_copy,
    .fill_uniform = cpu_fill_uniform,
    .fill_ids = cpu_fill_ids,
    .zero = cpu_zero,
    .gemm = cpu_gemm,
    .layernorm_fwd = cpu_ln_fwd,
    .layernorm_bwd = cpu_ln_bwd,
    .rmsnorm_fwd = cpu_rms_fwd,
    .rmsnorm_bwd = cpu_rms_bwd,
    .swiglu_fwd = cpu_swiglu_fwd,
    .swiglu_bwd = cpu_swiglu_bwd,
    .gelu_fwd = cpu_gelu_fwd,
    .gelu_bwd = cpu_gelu_bwd,
    .softmax_fwd = cpu_softmax_fwd,
    .softmax_chunk_fwd = cpu_softmax_chunk_fwd,
    .softmax_bwd = cpu_softmax_bwd,
    .rope = cpu_rope,
    .copy2d = cpu_copy2d,
    .gate_fwd = tsl_cpu_gate_fwd,
    .gate_bwd = tsl_cpu_gate_bwd,
    .axpy = cpu_axpy,
    .scale = cpu_scale,
    .add_bias = cpu_add_bias,
    .bias_grad = cpu_bias_grad,
    .mse = cpu_mse,
    .vembed_fwd = cpu_vembed_fwd,
    .vembed_bwd = cpu_vembed_bwd,
    .vxent_max = cpu_vxent_max,
    .vxent_sums = cpu_vxent_sums,
    .vxent = cpu_vxent,
    .moe_topk = tsl_cpu_moe_topk,
    .moe_topk_bwd = tsl_cpu_moe_topk_bwd,
    .moe_sort = tsl_cpu_moe_sort,
    .gather_rows = tsl_cpu_gather_rows,
    .scatter_add_rows = tsl_cpu_scatter_add_rows,
    .rows_dot = tsl_cpu_rows_dot,
    .adam = cpu_adam,
    .sgd = cpu_sgd,
    .stream = cpu_stream,
    .event_create = cpu_event_create,
    .event_destroy = cpu_event_destroy,
    .event_record = cpu_event_record,
    .stream_wait = cpu_stream_wait,
    .event_elapsed_s = cpu_elapsed,
    .sync = cpu_sync,
    .host_alloc = cpu_host_alloc,
    .host_free = cpu_host_free,
    .copy_bytes = cpu_copy_bytes,
    .destroy = cpu_destroy,
};

int tsl_devops_cpu_create(uint64_t limit_bytes, tsl_devops_t **out, tsl_err_t *err)
{
    tsl_devops_t *o = malloc(sizeof(*o));
    cpu_ctx_t *c = calloc(1, sizeof(*c));
    if (!o || !c) {
        free(o);
        free(c);
        return tsl_err_setc(err, TSL_E_NOMEM, "cpu: out of memory creating the device ops");
    }
    *o = cpu_table;
    c->mem.limit_bytes = limit_bytes;
    o->ctx = c;
    *out = o;
    return 0;
}

/*
 * devops_cuda_kernels.cu — the cuda device ops' small kernels (see the header).
 * Row kernels (layernorm, softmax, cross-entropy) give one block to a row and reduce
 * in float through shared memory; column reductions (dgamma, dbeta, bias gradients)
 * sum row chunks into a float workspace, then the chunks in order: no atomics. In-place calls
 * (softmax, cross-entropy dy over y) are safe: a thread reads an element before it
 * writes it, and only its own.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "devops.h"
#include "devops_cuda_kernels.h"

typedef __nv_bfloat16 bf16;
#define NT 256

static unsigned blocks(size_t n)
{
    size_t b = (n + NT - 1) / NT;
    return (unsigned)(b > 65535u * 16u ? 65535u * 16u : (b ? b : 1));
}

#define GRID_LOOP(i, n)                                                                            \
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (n);                        \
         i += (size_t)gridDim.x * blockDim.x)

__device__ static float ld(const void *p, int dt, size_t i)
{
    return dt == TSL_DT_BF16 ? __bfloat162float(((const bf16 *)p)[i]) : ((const float *)p)[i];
}

__device__ static void st(void *p, int dt, size_t i, float v)
{
    if (dt == TSL_DT_BF16)
        ((bf16 *)p)[i] = __float2bfloat16(v);
    else
        ((float *)p)[i] = v;
}

static int done(void)
{
    return (int)cudaGetLastError();
}

__global__ static void k_fill(void *p, int dt, size_t n, uint64_t seed, uint64_t s, uint64_t base,
                              float c, float a)
{
    GRID_LOOP(i, n)
    {
        st(p, dt, i, c + a * tsl_uniform(seed, s, base + i));
    }
}

extern "C" int tsl_xk_fill_uniform(void *p, int dt, size_t n, uint64_t seed, uint64_t stream,
                                   uint64_t base, float center, float amp, void *s)
{
    k_fill<<<blocks(n), NT, 0, (cudaStream_t)s>>>(p, dt, n, seed, stream, base, center, amp);
    return done();
}

__global__ static void k_ids(int32_t *p, size_t n, uint64_t seed, uint64_t s, uint64_t base,
                             uint32_t mod)
{
    GRID_LOOP(i, n) p[i] = (int32_t)((tsl_uniform_bits(seed, s, base + i) >> 11) % mod);
}

extern "C" int tsl_xk_fill_ids(int32_t *p, size_t n, uint64_t seed, uint64_t stream, uint64_t base,
                               uint32_t modulo, void *s)
{
    k_ids<<<blocks(n), NT, 0, (cudaStream_t)s>>>(p, n, seed, stream, base, modulo);
    return done();
}

__global__ static void k_convert(void *d, int ddt, const void *s, int sdt, size_t n)
{
    GRID_LOOP(i, n) st(d, ddt, i, ld(s, sdt, i));
}

extern "C" int tsl_xk_convert(void *dst, int ddt, const void *src, int sdt, size_t n, void *s)
{
    k_convert<<<blocks(n), NT, 0, (cudaStream_t)s>>>(dst, ddt, src, sdt, n);
    return done();
}

/* Sum of v over the block (NT threads); every thread gets it. */
__device__ static float block_sum(float v, float *sh)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    __syncthreads();
    if ((threadIdx.x & 31) == 0)
        sh[threadIdx.x >> 5] = v;
    __syncthreads();
    float t = 0;
    for (int w = 0; w < NT / 32; w++)
        t += sh[w];
    return t;
}

__device__ static float block_max(float v, float *sh)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    __syncthreads();
    if ((threadIdx.x & 31) == 0)
        sh[threadIdx.x >> 5] = v;
    __syncthreads();
    float t = -INFINITY;
    for (int w = 0; w < NT / 32; w++)
        t = fmaxf(t, sh[w]);
    return t;
}

__global__ static void k_ln_fwd(const bf16 *x, const bf16 *g, const bf16 *b, bf16 *y, float *mean,
                                float *rstd, int cols)
{
    __shared__ float sh[NT / 32];
    size_t r = blockIdx.x, o = r * cols;
    float s = 0;
    for (int c = threadIdx.x; c < cols; c += NT)
        s += __bfloat162float(x[o + c]);
    float mu = block_sum(s, sh) / cols, v = 0;
    for (int c = threadIdx.x; c < cols; c += NT) {
        float d = __bfloat162float(x[o + c]) - mu;
        v += d * d;
    }
    float rs = rsqrtf(block_sum(v, sh) / cols + 1e-5f);
    for (int c = threadIdx.x; c < cols; c += NT)
        y[o + c] =
            __float2bfloat16((__bfloat162float(x[o + c]) - mu) * rs * __bfloat162float(g[c]) +
                             __bfloat162float(b[c]));
    if (threadIdx.x == 0)
        mean[r] = mu, rstd[r] = rs;
}

extern "C" int tsl_xk_layernorm_fwd(const void *x, const void *g, const void *b, void *y,
                                    float *mean, float *rstd, int rows, int cols, void *s)
{
    k_ln_fwd<<<rows, NT, 0, (cudaStream_t)s>>>((const bf16 *)x, (const bf16 *)g, (const bf16 *)b,
                                               (bf16 *)y, mean, rstd, cols);
    return done();
}

__global__ static void k_ln_bwd_dx(const bf16 *dy, const bf16 *x, const bf16 *g, const float *mean,
                                   const float *rstd, bf16 *dx, int cols)
{
    __shared__ float sh[NT / 32];
    size_t r = blockIdx.x, o = r * cols;
    float mu = mean[r], rs = rstd[r], s1 = 0, s2 = 0;
    for (int c = threadIdx.x; c < cols; c += NT) {
        float gy = __bfloat162float(dy[o + c]) * __bfloat162float(g[c]);
        s1 += gy;
        s2 += gy * (__bfloat162float(x[o + c]) - mu) * rs;
    }
    s1 = block_sum(s1, sh) / cols;
    s2 = block_sum(s2, sh) / cols;
    for (int c = threadIdx.x; c < cols; c += NT) {
        float xh = (__bfloat162float(x[o + c]) - mu) * rs;
        float gy = __bfloat162float(dy[o + c]) * __bfloat162float(g[c]);
        dx[o + c] = __float2bfloat16(rs * (gy - s1 - xh * s2));
    }
}

/* Column sums in two passes so that every SM has work however few the columns: pass 1
 * gives each of `ch` row chunks its own partial sums (rows chunk, chunk + ch, ...), pass
 * 2 adds the chunks in order. sb = Σ dy; sg = Σ dy · x̂ when x is given (layernorm). */
__global__ static void k_colsum_part(const bf16 *dy, const bf16 *x, const float *mean,
                                     const float *rstd, float *pg, float *pb, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x, ch = gridDim.y, k = blockIdx.y;
    if (c >= cols)
        return;
    float sg = 0, sb = 0;
    for (int r = k; r < rows; r += ch) {
        float d = __bfloat162float(dy[(size_t)r * cols + c]);
        sb += d;
        if (x)
            sg +=
                d * (__bfloat162float(x[(size_t)r * cols + c]) - (mean ? mean[r] : 0.0f)) * rstd[r];
    }
    pb[(size_t)k * cols + c] = sb;
    if (x)
        pg[(size_t)k * cols + c] = sg;
}

__global__ static void k_colsum_add(const float *pg, const float *pb, bf16 *dg, bf16 *db, int cols,
                                    int ch)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols)
        return;
    float sg = 0, sb = 0;
    for (int k = 0; k < ch; k++) {
        sb += pb[(size_t)k * cols + c];
        if (dg)
            sg += pg[(size_t)k * cols + c];
    }
    if (db)
        db[c] = __float2bfloat16(__bfloat162float(db[c]) + sb);
    if (dg)
        dg[c] = __float2bfloat16(__bfloat162float(dg[c]) + sg);
}

/* ws: TSL_K_COLSUM_WS floats. dg (and x, mean, rstd) NULL: bias gradient only; mean
 * NULL with x: RMSNorm's x̂ = x · rstd; db NULL: dgamma only. */
static int colsum(const bf16 *dy, const bf16 *x, const float *mean, const float *rstd, bf16 *dg,
                  bf16 *db, int rows, int cols, float *ws, cudaStream_t cs)
{
    size_t fit = TSL_K_COLSUM_WS / (2 * (size_t)cols);
    int ch = (int)(fit < 64 ? fit : 64);
    ch = ch < rows ? ch : rows;
    if (ch < 1)
        return (int)cudaErrorInvalidValue;
    float *pg = ws, *pb = ws + (size_t)ch * cols;
    dim3 grid((cols + NT - 1) / NT, ch);
    k_colsum_part<<<grid, NT, 0, cs>>>(dy, x, mean, rstd, pg, pb, rows, cols);
    k_colsum_add<<<(cols + NT - 1) / NT, NT, 0, cs>>>(pg, pb, dg, db, cols, ch);
    return done();
}

extern "C" int tsl_xk_layernorm_bwd(const void *dy, const void *x, const void *g, const float *mean,
                                    const float *rstd, void *dx, void *dg, void *db, int rows,
                                    int cols, float *ws, void *s)
{
    cudaStream_t cs = (cudaStream_t)s;
    k_ln_bwd_dx<<<rows, NT, 0, cs>>>((const bf16 *)dy, (const bf16 *)x, (const bf16 *)g, mean, rstd,
                                     (bf16 *)dx, cols);
    int e = done();
    return e ? e
             : colsum((const bf16 *)dy, (const bf16 *)x, mean, rstd, (bf16 *)dg, (bf16 *)db, rows,
                      cols, ws, cs);
}

__global__ static void k_rms_fwd(const bf16 *x, const bf16 *g, bf16 *y, float *rstd, int cols)
{
    __shared__ float sh[NT / 32];
    size_t r = blockIdx.x, o = r * cols;
    float ss = 0;
    for (int c = threadIdx.x; c < cols; c += NT) {
        float v = __bfloat162float(x[o + c]);
        ss += v * v;
    }
    float rs = rsqrtf(block_sum(ss, sh) / cols + 1e-5f);
    for (int c = threadIdx.x; c < cols; c += NT)
        y[o + c] = __float2bfloat16(__bfloat162float(x[o + c]) * rs * __bfloat162float(g[c]));
    if (threadIdx.x == 0)
        rstd[r] = rs;
}

extern "C" int tsl_xk_rmsnorm_fwd(const void *x, const void *g, void *y, float *rstd, int rows,
                                  int cols, void *s)
{
    k_rms_fwd<<<rows, NT, 0, (cudaStream_t)s>>>((const bf16 *)x, (const bf16 *)g, (bf16 *)y, rstd,
                                                cols);
    return done();
}

/* dx = rstd · (dy·g − x̂ · mean(dy·g·x̂)), x̂ = x · rstd. */
__global__ static void k_rms_bwd_dx(const bf16 *dy, const bf16 *x, const bf16 *g, const float *rstd,
                                    bf16 *dx, int cols)
{
    __shared__ float sh[NT / 32];
    size_t r = blockIdx.x, o = r * cols;
    float rs = rstd[r], s = 0;
    for (int c = threadIdx.x; c < cols; c += NT)
        s += __bfloat162float(dy[o + c]) * __bfloat162float(g[c]) * __bfloat162float(x[o + c]) * rs;
    s = block_sum(s, sh) / cols;
    for (int c = threadIdx.x; c < cols; c += NT) {
        float xh = __bfloat162float(x[o + c]) * rs;
        float gy = __bfloat162float(dy[o + c]) * __bfloat162float(g[c]);
        dx[o + c] = __float2bfloat16(rs * (gy - xh * s));
    }
}

extern "C" int tsl_xk_rmsnorm_bwd(const void *dy, const void *x, const void *g, const float *rstd,
                                  void *dx, void *dg, int rows, int cols, float *ws, void *s)
{
    cudaStream_t cs = (cudaStream_t)s;
    k_rms_bwd_dx<<<rows, NT, 0, cs>>>((const bf16 *)dy, (const bf16 *)x, (const bf16 *)g, rstd,
                                      (bf16 *)dx, cols);
    int e = done();
    return e ? e
             : colsum((const bf16 *)dy, (const bf16 *)x, NULL, rstd, (bf16 *)dg, NULL, rows, cols,
                      ws, cs);
}

/* x rows × 2·cols (gate | up); forward y = SiLU(gate)·up, backward dx from dy. */
__global__ static void k_swiglu(const bf16 *x, const bf16 *dy, bf16 *out, int rows, int cols,
                                int backward)
{
    GRID_LOOP(i, (size_t)rows * cols)
    {
        size_t r = i / cols, c = i % cols, xi = r * 2 * cols + c;
        float a = __bfloat162float(x[xi]), u = __bfloat162float(x[xi + cols]);
        float sg = 1.0f / (1.0f + __expf(-a));
        if (!backward) {
            out[i] = __float2bfloat16(a * sg * u);
        } else {
            float g = __bfloat162float(dy[i]);
            out[xi] = __float2bfloat16(g * u * sg * (1.0f + a * (1.0f - sg)));
            out[xi + cols] = __float2bfloat16(g * a * sg);
        }
    }
}

extern "C" int tsl_xk_swiglu(const void *x, const void *dy, void *out, int rows, int cols,
                             int backward, void *s)
{
    k_swiglu<<<blocks((size_t)rows * cols), NT, 0, (cudaStream_t)s>>>(
        (const bf16 *)x, (const bf16 *)dy, (bf16 *)out, rows, cols, backward);
    return done();
}

#define GELU_K 0.7978845608028654f

__global__ static void k_gelu(const bf16 *x, const bf16 *dy, bf16 *out, size_t n, int backward)
{
    GRID_LOOP(i, n)
    {
        float v = __bfloat162float(x[i]), t = tanhf(GELU_K * (v + 0.044715f * v * v * v));
        if (!backward) {
            out[i] = __float2bfloat16(0.5f * v * (1.0f + t));
        } else {
            float d =
                0.5f * (1 + t) + 0.5f * v * (1 - t * t) * GELU_K * (1 + 3 * 0.044715f * v * v);
            out[i] = __float2bfloat16(__bfloat162float(dy[i]) * d);
        }
    }
}

extern "C" int tsl_xk_gelu(const void *x, const void *dy, void *out, size_t n, int backward,
                           void *s)
{
    k_gelu<<<blocks(n), NT, 0, (cudaStream_t)s>>>((const bf16 *)x, (const bf16 *)dy, (bf16 *)out, n,
                                                  backward);
    return done();
}

/* Row r sees columns [lo, hi]: hi = q0 + r mod group (causal; capped at the last
 * column), lo = hi − window + 1 (window > 0; at least 0); else all. */
__global__ static void k_softmax_fwd(const bf16 *x, bf16 *y, int cols, int causal, int group,
                                     int q0, int window)
{
    __shared__ float sh[NT / 32];
    size_t r = blockIdx.x, o = r * cols;
    long q = causal ? q0 + (long)(r % group) : cols - 1, lo = window > 0 ? q - window + 1 : 0;
    long hi = q < cols ? q : cols - 1;
    lo = lo > 0 ? lo : 0;
    float mx = -INFINITY, s = 0;
    for (long c = lo + threadIdx.x; c <= hi; c += NT)
        mx = fmaxf(mx, __bfloat162float(x[o + c]));
    mx = block_max(mx, sh);
    for (long c = lo + threadIdx.x; c <= hi; c += NT)
        s += __expf(__bfloat162float(x[o + c]) - mx);
    s = block_sum(s, sh);
    for (long c = threadIdx.x; c < cols; c += NT)
        y[o + c] = __float2bfloat16(c >= lo && c <= hi ? __expf(__bfloat162float(x[o + c]) - mx) / s
                                                       : 0.0f);
}

extern "C" int tsl_xk_softmax_fwd(const void *x, void *y, int rows, int cols, int causal, void *s)
{
    k_softmax_fwd<<<rows, NT, 0, (cudaStream_t)s>>>((const bf16 *)x, (bf16 *)y, cols, causal, cols,
                                                    0, 0);
    return done();
}

extern "C" int tsl_xk_softmax_chunk_fwd(const void *x, void *y, int rows, int cols, int group,
                                        int q0, int window, void *s)
{
    k_softmax_fwd<<<rows, NT, 0, (cudaStream_t)s>>>((const bf16 *)x, (bf16 *)y, cols, 1, group, q0,
                                                    window);
    return done();
}

__global__ static void k_softmax_bwd(const bf16 *y, const bf16 *dy, bf16 *dx, int cols)
{
    __shared__ float sh[NT / 32];
    size_t o = (size_t)blockIdx.x * cols;
    float s = 0;
    for (int c = threadIdx.x; c < cols; c += NT)
        s += __bfloat162float(y[o + c]) * __bfloat162float(dy[o + c]);
    s = block_sum(s, sh);
    for (int c = threadIdx.x; c < cols; c += NT)
        dx[o + c] =
            __float2bfloat16(__bfloat162float(y[o + c]) * (__bfloat162float(dy[o + c]) - s));
}

extern "C" int tsl_xk_softmax_bwd(const void *y, const void *dy, void *dx, int rows, int cols,
                                  void *s)
{
    k_softmax_bwd<<<rows, NT, 0, (cudaStream_t)s>>>((const bf16 *)y, (const bf16 *)dy, (bf16 *)dx,
                                                    cols);
    return done();
}

__global__ static void k_axpy(float a, const void *x, void *y, int dt, size_t n)
{
    GRID_LOOP(i, n) st(y, dt, i, ld(y, dt, i) + a * ld(x, dt, i));
}

extern "C" int tsl_xk_axpy(float alpha, const void *x, void *y, int dt, size_t n, void *s)
{
    k_axpy<<<blocks(n), NT, 0, (cudaStream_t)s>>>(alpha, x, y, dt, n);
    return done();
}

__global__ static void k_scale(float a, void *x, int dt, size_t n)
{
    GRID_LOOP(i, n) st(x, dt, i, a * ld(x, dt, i));
}

extern "C" int tsl_xk_scale(float alpha, void *x, int dt, size_t n, void *s)
{
    k_scale<<<blocks(n), NT, 0, (cudaStream_t)s>>>(alpha, x, dt, n);
    return done();
}

__global__ static void k_add_bias(bf16 *x, const bf16 *b, size_t n, int cols)
{
    GRID_LOOP(i, n) x[i] = __float2bfloat16(__bfloat162float(x[i]) + __bfloat162float(b[i % cols]));
}

extern "C" int tsl_xk_add_bias(void *x, const void *bias, int rows, int cols, void *s)
{
    size_t n = (size_t)rows * cols;
    k_add_bias<<<blocks(n), NT, 0, (cudaStream_t)s>>>((bf16 *)x, (const bf16 *)bias, n, cols);
    return done();
}

extern "C" int tsl_xk_bias_grad(const void *dy, void *db, int rows, int cols, float *ws, void *s)
{
    return colsum((const bf16 *)dy, NULL, NULL, NULL, NULL, (bf16 *)db, rows, cols, ws,
                  (cudaStream_t)s);
}

__global__ static void k_mse(const bf16 *y, const bf16 *t, bf16 *dy, size_t n, float scale,
                             float *loss)
{
    __shared__ float sh[NT / 32];
    float s = 0;
    GRID_LOOP(i, n)
    {
        float d = __bfloat162float(y[i]) - __bfloat162float(t[i]);
        s += d * d;
        dy[i] = __float2bfloat16(2.0f * scale * d);
    }
    s = block_sum(s, sh);
    if (threadIdx.x == 0)
        atomicAdd(loss, scale * s);
}

extern "C" int tsl_xk_mse(const void *y, const void *t, void *dy, size_t n, float scale,
                          float *loss, void *s)
{
    k_mse<<<blocks(n), NT, 0, (cudaStream_t)s>>>((const bf16 *)y, (const bf16 *)t, (bf16 *)dy, n,
                                                 scale, loss);
    return done();
}

/* ---- vocabulary-parallel embedding and cross-entropy (devops.h) ---- */

__global__ static void k_vembed(bf16 *table, const int32_t *ids, bf16 *y, size_t n, int cols,
                                int v0, int vl, int backward)
{
    GRID_LOOP(i, n)
    {
        size_t r = i / cols, c = i % cols;
        int id = ids[r] - v0;
        bool in = id >= 0 && id < vl;
        if (!backward)
            y[i] = in ? table[(size_t)id * cols + c] : __float2bfloat16(0.0f);
        else if (in)
            atomicAdd(&table[(size_t)id * cols + c], y[i]);
    }
}

extern "C" int tsl_xk_vembed(const void *table, const int32_t *ids, void *y, int rows, int cols,
                             int v0, int vl, int backward, void *s)
{
    size_t n = (size_t)rows * cols;
    k_vembed<<<blocks(n), NT, 0, (cudaStream_t)s>>>((bf16 *)table, ids, (bf16 *)y, n, cols, v0, vl,
                                                    backward);
    return done();
}

/* One block per row: the local max over the valid columns. */
__global__ static void k_vxent_max(const bf16 *y, float *mx, int cols, int valid)
{
    __shared__ float sh[NT / 32];
    size_t o = (size_t)blockIdx.x * cols;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < valid; c += NT)
        m = fmaxf(m, __bfloat162float(y[o + c]));
    m = block_max(m, sh);
    if (threadIdx.x == 0)
        mx[blockIdx.x] = m;
}

__device__ static float vmax_of(const float *mxs, int parts, int rows, int r)
{
    float m = -INFINITY;
    for (int k = 0; k < parts; k++)
        m = fmaxf(m, mxs[(size_t)k * rows + r]);
    return m;
}

/* One block per row: Σ exp(y − M) over the valid columns, and the target's logit. */
__global__ static void k_vxent_sums(const bf16 *y, const int32_t *t, const float *mxs, int parts,
                                    float *sums, int rows, int cols, int valid, int v0)
{
    __shared__ float sh[NT / 32];
    int r = blockIdx.x, tc = t[r] - v0;
    size_t o = (size_t)r * cols;
    float m = vmax_of(mxs, parts, rows, r), s = 0;
    for (int c = threadIdx.x; c < valid; c += NT)
        s += __expf(__bfloat162float(y[o + c]) - m);
    s = block_sum(s, sh);
    if (threadIdx.x == 0) {
        sums[r] = s;
        sums[rows + r] = tc >= 0 && tc < valid ? __bfloat162float(y[o + tc]) : 0.0f;
    }
}

/* One block per row: the loss and dy = scale · (softmax − onehot), dy bf16 or float
 * (dydt); dy may be y (each thread reads its element before writing it; M and S come
 * from elsewhere). */
__global__ static void k_vxent(const bf16 *y, const int32_t *t, const float *mxs, int parts,
                               const float *sums, void *dy, int dydt, int rows, int cols, int valid,
                               int v0, float scale, float *loss)
{
    int r = blockIdx.x, tc = t[r] - v0;
    size_t o = (size_t)r * cols;
    float m = vmax_of(mxs, parts, rows, r), s = sums[r];
    for (int c = threadIdx.x; c < cols; c += NT) {
        float p = c < valid ? __expf(__bfloat162float(y[o + c]) - m) / s : 0.0f;
        float hot = c == tc && c < valid ? 1.0f : 0.0f;
        st(dy, dydt, o + c, c < valid ? scale * (p - hot) : 0.0f);
    }
    if (threadIdx.x == 0)
        atomicAdd(loss, scale * (logf(s) + m - sums[rows + r]));
}

extern "C" int tsl_xk_vxent_max(const void *y, float *mx, int rows, int cols, int valid, void *s)
{
    k_vxent_max<<<rows, NT, 0, (cudaStream_t)s>>>((const bf16 *)y, mx, cols, valid);
    return done();
}

extern "C" int tsl_xk_vxent_sums(const void *y, const int32_t *t, const float *mxs, int parts,
                                 float *sums, int rows, int cols, int valid, int v0, void *s)
{
    k_vxent_sums<<<rows, NT, 0, (cudaStream_t)s>>>((const bf16 *)y, t, mxs, parts, sums, rows, cols,
                                                   valid, v0);
    return done();
}

extern "C" int tsl_xk_vxent(const void *y, const int32_t *t, const float *mxs, int parts,
                            const float *sums, void *dy, int dydt, int rows, int cols, int valid,
                            int v0, float scale, float *loss, void *s)
{
    k_vxent<<<rows, NT, 0, (cudaStream_t)s>>>((const bf16 *)y, t, mxs, parts, sums, dy, dydt, rows,
                                              cols, valid, v0, scale, loss);
    return done();
}

__global__ static void k_adam(bf16 *p, const bf16 *g, float *w, float *m, float *v, size_t n,
                              float lr, float b1, float b2, float eps, float c1, float c2)
{
    GRID_LOOP(i, n)
    {
        float gi = __bfloat162float(g[i]);
        m[i] = b1 * m[i] + (1 - b1) * gi;
        v[i] = b2 * v[i] + (1 - b2) * gi * gi;
        w[i] -= lr * (m[i] / c1) / (sqrtf(v[i] / c2) + eps);
        p[i] = __float2bfloat16(w[i]);
    }
}

extern "C" int tsl_xk_adam(void *p, const void *g, float *master, float *m, float *v, size_t n,
                           float lr, float b1, float b2, float eps, float c1, float c2, void *s)
{
    k_adam<<<blocks(n), NT, 0, (cudaStream_t)s>>>((bf16 *)p, (const bf16 *)g, master, m, v, n, lr,
                                                  b1, b2, eps, c1, c2);
    return done();
}

__global__ static void k_sgd(bf16 *p, const bf16 *g, float *w, size_t n, float lr)
{
    GRID_LOOP(i, n)
    {
        w[i] -= lr * __bfloat162float(g[i]);
        p[i] = __float2bfloat16(w[i]);
    }
}

extern "C" int tsl_xk_sgd(void *p, const void *g, float *master, size_t n, float lr, void *s)
{
    k_sgd<<<blocks(n), NT, 0, (cudaStream_t)s>>>((bf16 *)p, (const bf16 *)g, master, n, lr);
    return done();
}

/* ---- mixture of experts (devops.h): a thread per token for the router, a thread per
 * expert for the stable sort (each scans the copies in order, so the order is the
 * cpu ops'), elementwise row gathers and sums, a block per copy for rows_dot. Indices
 * out of range are skipped. ---- */

/* Expert e's choice score: its score plus its correction bias, if any. */
__device__ static float choice_of(const float *pr, const void *bias, int dt, int e)
{
    return pr[e] + (bias ? ld(bias, dt, (size_t)e) : 0.0f);
}

__global__ static void k_moe_topk(const void *x, int dt, const void *bias, float *p, int32_t *idx,
                                  float *w, int rows, int E, int k, int sigmoid, int groups,
                                  int topk_groups, int norm, float scale)
{
    GRID_LOOP(r, (size_t)rows)
    {
        float *pr = p + r * E;
        if (sigmoid) {
            for (int e = 0; e < E; e++)
                pr[e] = 1.0f / (1.0f + expf(-ld(x, dt, r * E + e)));
        } else {
            float mx = -INFINITY, s = 0;
            for (int e = 0; e < E; e++)
                mx = fmaxf(mx, ld(x, dt, r * E + e));
            for (int e = 0; e < E; e++)
                s += expf(ld(x, dt, r * E + e) - mx);
            for (int e = 0; e < E; e++)
                pr[e] = expf(ld(x, dt, r * E + e) - mx) / s;
        }
        /* group-limited: the topk_groups best groups, each by its best (or two best
         * summed with a bias); a tie to the lower group */
        bool taken_g[TSL_MOE_MAX_GROUPS];
        int per = groups > 1 ? E / groups : E;
        for (int g = 0; g < groups && g < TSL_MOE_MAX_GROUPS; g++)
            taken_g[g] = groups <= 1;
        for (int j = 0; groups > 1 && j < topk_groups; j++) {
            int bestg = -1;
            float bests = 0;
            for (int g = 0; g < groups; g++) {
                if (taken_g[g])
                    continue;
                float b1 = -INFINITY, b2 = -INFINITY;
                for (int e = g * per; e < (g + 1) * per; e++) {
                    float c = choice_of(pr, bias, dt, e);
                    if (c > b1)
                        b2 = b1, b1 = c;
                    else if (c > b2)
                        b2 = c;
                }
                float gs = bias && per > 1 ? b1 + b2 : b1;
                if (bestg < 0 || gs > bests)
                    bestg = g, bests = gs;
            }
            taken_g[bestg] = true;
        }
        int32_t *id = idx + r * k;
        float sum = 0;
        for (int j = 0; j < k; j++) {
            int best = -1;
            float bc = 0;
            for (int e = 0; e < E; e++) {
                bool taken = groups > 1 && !taken_g[e / per];
                for (int i = 0; i < j; i++)
                    taken = taken || id[i] == e;
                float c = choice_of(pr, bias, dt, e);
                if (!taken && (best < 0 || c > bc))
                    best = e, bc = c;
            }
            id[j] = best;
            sum += pr[best];
        }
        for (int j = 0; j < k; j++)
            w[r * k + j] = norm ? scale * pr[id[j]] / sum : scale * pr[id[j]];
    }
}

extern "C" int tsl_xk_moe_topk(const void *logits, int dt, const void *bias, float *probs,
                               int32_t *idx, float *w, int rows, int experts, int k, int sigmoid,
                               int groups, int topk_groups, int norm, float scale, void *s)
{
    k_moe_topk<<<blocks((size_t)rows), NT, 0, (cudaStream_t)s>>>(logits, dt, bias, probs, idx, w,
                                                                 rows, experts, k, sigmoid, groups,
                                                                 topk_groups, norm, scale);
    return done();
}

/* The chosen score j's gradient from dw (devops.h moe_topk_bwd). */
__device__ static float dscore(const float *dw, int j, float sum, float dot, int norm, float scale)
{
    return norm ? scale / sum * (dw[j] - dot / sum) : scale * dw[j];
}

__global__ static void k_moe_topk_bwd(const float *p, const int32_t *idx, const float *dw, void *dl,
                                      int dt, int rows, int E, int k, int sigmoid, int norm,
                                      float scale)
{
    GRID_LOOP(r, (size_t)rows)
    {
        const int32_t *id = idx + r * k;
        const float *pr = p + r * E, *d = dw + r * k;
        float sum = 0, dot = 0, s = 0;
        for (int j = 0; j < k; j++)
            if (id[j] >= 0 && id[j] < E)
                sum += pr[id[j]], dot += d[j] * pr[id[j]];
        for (int j = 0; j < k; j++)
            if (id[j] >= 0 && id[j] < E)
                s += pr[id[j]] * dscore(d, j, sum, dot, norm, scale);
        for (int e = 0; e < E; e++) {
            float ds = 0;
            for (int j = 0; j < k; j++)
                ds = id[j] == e ? dscore(d, j, sum, dot, norm, scale) : ds;
            st(dl, dt, r * E + e, sigmoid ? ds * pr[e] * (1.0f - pr[e]) : pr[e] * (ds - s));
        }
    }
}

extern "C" int tsl_xk_moe_topk_bwd(const float *probs, const int32_t *idx, const float *dw,
                                   void *dlogits, int dt, int rows, int experts, int k, int sigmoid,
                                   int norm, float scale, void *s)
{
    k_moe_topk_bwd<<<blocks((size_t)rows), NT, 0, (cudaStream_t)s>>>(
        probs, idx, dw, dlogits, dt, rows, experts, k, sigmoid, norm, scale);
    return done();
}

/* Expert e's copies kept: all, or the first cap. */
__global__ static void k_moe_count(const int32_t *idx, float *counts, int n, int E, int cap)
{
    GRID_LOOP(e, (size_t)E)
    {
        int c = 0;
        for (int i = 0; i < n; i++)
            c += idx[i] == (int)e;
        counts[e] = (float)(cap > 0 && c > cap ? cap : c);
    }
}

/* Expert e's kept copies go after those of experts < e, in copy order; the rest of
 * its copies are dropped (pos −1). */
__global__ static void k_moe_place(const int32_t *idx, const float *counts, int32_t *order,
                                   int32_t *pos, int n, int E)
{
    GRID_LOOP(e, (size_t)E)
    {
        int at = 0, left = (int)counts[e];
        for (size_t f = 0; f < e; f++)
            at += (int)counts[f];
        for (int i = 0; i < n; i++)
            if (idx[i] == (int)e) {
                pos[i] = left > 0 ? at : -1;
                if (left-- > 0)
                    order[at++] = i;
            }
    }
}

extern "C" int tsl_xk_moe_sort(const int32_t *idx, int32_t *order, int32_t *pos, float *counts,
                               int n, int experts, int cap, void *s)
{
    k_moe_count<<<blocks((size_t)experts), NT, 0, (cudaStream_t)s>>>(idx, counts, n, experts, cap);
    k_moe_place<<<blocks((size_t)experts), NT, 0, (cudaStream_t)s>>>(idx, counts, order, pos, n,
                                                                     experts);
    return done();
}

__global__ static void k_gather_rows(const void *x, size_t xrows, const int32_t *idx, int div,
                                     const float *scale, void *y, int dt, int rows, int cols)
{
    GRID_LOOP(i, (size_t)rows * cols)
    {
        size_t r = i / cols, c = i % cols;
        int32_t id = idx[r];
        if (id < 0 || (size_t)(id / div) >= xrows)
            continue;
        float sc = scale ? scale[id] : 1.0f;
        st(y, dt, i, sc * ld(x, dt, (size_t)(id / div) * cols + c));
    }
}

extern "C" int tsl_xk_gather_rows(const void *x, size_t xrows, const int32_t *idx, int div,
                                  const float *scale, void *y, int dt, int rows, int cols, void *s)
{
    size_t n = (size_t)rows * cols;
    k_gather_rows<<<blocks(n), NT, 0, (cudaStream_t)s>>>(x, xrows, idx, div, scale, y, dt, rows,
                                                         cols);
    return done();
}

__global__ static void k_scatter_add(const void *x, size_t xrows, const int32_t *pos,
                                     const float *w, void *y, int dt, int rows, int k, int cols)
{
    GRID_LOOP(i, (size_t)rows * cols)
    {
        size_t t = i / cols, c = i % cols;
        float acc = ld(y, dt, i);
        for (int j = 0; j < k; j++) {
            int32_t p = pos[t * k + j];
            if (p >= 0 && (size_t)p < xrows)
                acc += (w ? w[t * k + j] : 1.0f) * ld(x, dt, (size_t)p * cols + c);
        }
        st(y, dt, i, acc);
    }
}

extern "C" int tsl_xk_scatter_add_rows(const void *x, size_t xrows, const int32_t *pos,
                                       const float *w, void *y, int dt, int rows, int k, int cols,
                                       void *s)
{
    size_t n = (size_t)rows * cols;
    k_scatter_add<<<blocks(n), NT, 0, (cudaStream_t)s>>>(x, xrows, pos, w, y, dt, rows, k, cols);
    return done();
}

__global__ static void k_rows_dot(const void *x, const void *y, size_t yrows, const int32_t *pos,
                                  float *out, int dt, int k, int cols)
{
    __shared__ float sh[NT / 32];
    size_t c = blockIdx.x;
    int32_t p = pos[c];
    bool ok = p >= 0 && (size_t)p < yrows;
    float v = 0;
    for (int i = threadIdx.x; ok && i < cols; i += NT)
        v += ld(x, dt, (c / k) * cols + i) * ld(y, dt, (size_t)p * cols + i);
    v = block_sum(v, sh);
    if (threadIdx.x == 0)
        out[c] = v;
}

extern "C" int tsl_xk_rows_dot(const void *x, const void *y, size_t yrows, const int32_t *pos,
                               float *out, int dt, int n, int k, int cols, void *s)
{
    if (n > 0)
        k_rows_dot<<<n, NT, 0, (cudaStream_t)s>>>(x, y, yrows, pos, out, dt, k, cols);
    return done();
}

/* ---- latent attention (devops.h rope, copy2d) and the shared experts' gate ---- */

/* A thread per (row, pair): the pair of every head, its angle in double; ys 0 sums
 * the heads in order. */
__global__ static void k_rope(const void *x, void *y, int dt, tsl_rope_t r)
{
    int half = r.dim / 2;
    GRID_LOOP(i, (size_t)r.rows * half)
    {
        size_t t = i / half;
        int c = (int)(i % half);
        double th = (double)(t % r.seq) * pow((double)r.base, -2.0 * c / r.dim), sn, cs;
        sincos(th, &sn, &cs);
        sn = r.inverse ? -sn : sn;
        float sa = 0, sb = 0;
        for (int b = 0; b < r.heads; b++) {
            size_t xo = t * r.ldx + (size_t)b * r.xs;
            float a = ld(x, dt, xo + c), e = ld(x, dt, xo + c + half);
            float ra = (float)(a * cs - e * sn), rb = (float)(e * cs + a * sn);
            if (r.ys == 0) {
                sa += ra, sb += rb;
                continue;
            }
            size_t yo = t * r.ldy + (size_t)b * r.ys;
            st(y, dt, yo + c, ra);
            st(y, dt, yo + c + half, rb);
        }
        if (r.ys == 0) {
            st(y, dt, t * r.ldy + c, sa);
            st(y, dt, t * r.ldy + c + half, sb);
        }
    }
}

extern "C" int tsl_xk_rope(const void *x, void *y, int dt, const tsl_rope_t *r, void *s)
{
    size_t n = (size_t)r->rows * (r->dim / 2);
    if (n)
        k_rope<<<blocks(n), NT, 0, (cudaStream_t)s>>>(x, y, dt, *r);
    return done();
}

__global__ static void k_copy2d(const void *x, int ldx, int xs, void *y, int ldy, int ys, int dt,
                                int batch, int cols, size_t n)
{
    GRID_LOOP(i, n)
    {
        size_t r = i / ((size_t)batch * cols), b = i / cols % batch, c = i % cols;
        st(y, dt, r * ldy + b * ys + c, ld(x, dt, r * ldx + b * xs + c));
    }
}

extern "C" int tsl_xk_copy2d(const void *x, int ldx, int xs, void *y, int ldy, int ys, int dt,
                             int rows, int batch, int cols, void *s)
{
    size_t n = (size_t)rows * batch * cols;
    if (n)
        k_copy2d<<<blocks(n), NT, 0, (cudaStream_t)s>>>(x, ldx, xs, y, ldy, ys, dt, batch, cols, n);
    return done();
}

__global__ static void k_gate_fwd(const void *x, const void *logit, float *gate, void *y, int dt,
                                  int cols, size_t n)
{
    GRID_LOOP(i, n)
    {
        size_t r = i / cols;
        float g = 1.0f / (1.0f + expf(-ld(logit, dt, r)));
        if (i % cols == 0)
            gate[r] = g;
        st(y, dt, i, g * ld(x, dt, i));
    }
}

extern "C" int tsl_xk_gate_fwd(const void *x, const void *logit, float *gate, void *y, int dt,
                               int rows, int cols, void *s)
{
    size_t n = (size_t)rows * cols;
    if (n)
        k_gate_fwd<<<blocks(n), NT, 0, (cudaStream_t)s>>>(x, logit, gate, y, dt, cols, n);
    return done();
}

/* A block per row: dx = g·dy, the row's dy·x summed for dlogit. */
__global__ static void k_gate_bwd(const void *x, const float *gate, const void *dy, void *dx,
                                  void *dlogit, int dt, int cols)
{
    __shared__ float sh[NT / 32];
    size_t r = blockIdx.x;
    float g = gate[r], v = 0;
    for (int c = threadIdx.x; c < cols; c += NT) {
        size_t i = r * cols + c;
        float d = ld(dy, dt, i);
        v += d * ld(x, dt, i);
        st(dx, dt, i, g * d);
    }
    v = block_sum(v, sh);
    if (threadIdx.x == 0)
        st(dlogit, dt, r, g * (1.0f - g) * v);
}

extern "C" int tsl_xk_gate_bwd(const void *x, const float *gate, const void *dy, void *dx,
                               void *dlogit, int dt, int rows, int cols, void *s)
{
    if (rows > 0)
        k_gate_bwd<<<rows, NT, 0, (cudaStream_t)s>>>(x, gate, dy, dx, dlogit, dt, cols);
    return done();
}

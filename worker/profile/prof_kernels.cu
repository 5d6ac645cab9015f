/*
 * prof_kernels.cu — the few element-wise and row-wise kernels a Transformer
 * block needs beside its GEMMs (random fill, softmax and its backward, GELU and
 * SwiGLU and their backwards), bf16 in and out, fp32 inside. Simple on purpose:
 * they are timed as part of a block, not tuned. Every launcher returns the
 * launch's error (cudaGetLastError), which the caller checks.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "prof_kernels.h"

static __device__ __forceinline__ float ld(const __nv_bfloat16 *p, size_t i)
{
    return __bfloat162float(p[i]);
}
static __device__ __forceinline__ void st(__nv_bfloat16 *p, size_t i, float v)
{
    p[i] = __float2bfloat16(v);
}

/* splitmix64 of (seed, index): uniform in [-1, 1), never all zeros */
static __device__ __forceinline__ float hash_uniform(uint64_t seed, uint64_t i)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ull * (i + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (float)(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

static __global__ void k_fill(__nv_bfloat16 *p, size_t n, uint64_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        st(p, i, hash_uniform(seed, i));
}

static unsigned grid_for(size_t n)
{
    size_t g = (n + 255) / 256;
    return (unsigned)(g > 65535 * 8 ? 65535 * 8 : (g == 0 ? 1 : g));
}

#define ROW_THREADS 256

static __device__ float block_reduce(float v, bool is_max)
{
    __shared__ float red[ROW_THREADS / 32];
    for (int o = 16; o > 0; o >>= 1) {
        float w = __shfl_xor_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, w) : v + w;
    }
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0)
        red[warp] = v;
    __syncthreads();
    v = red[0];
    for (int i = 1; i < ROW_THREADS / 32; i++)
        v = is_max ? fmaxf(v, red[i]) : v + red[i];
    return v;
}

static __global__ void k_softmax(const __nv_bfloat16 *in, __nv_bfloat16 *out, uint32_t cols)
{
    const __nv_bfloat16 *x = in + (size_t)blockIdx.x * cols;
    __nv_bfloat16 *y = out + (size_t)blockIdx.x * cols;
    float m = -3.0e38f;
    for (uint32_t j = threadIdx.x; j < cols; j += ROW_THREADS)
        m = fmaxf(m, ld(x, j));
    m = block_reduce(m, true);
    float s = 0;
    for (uint32_t j = threadIdx.x; j < cols; j += ROW_THREADS)
        s += __expf(ld(x, j) - m);
    s = block_reduce(s, false);
    float inv = 1.0f / s;
    for (uint32_t j = threadIdx.x; j < cols; j += ROW_THREADS)
        st(y, j, __expf(ld(x, j) - m) * inv);
}

/* dS = P ⊙ (dP − Σ_j P·dP) */
static __global__ void k_softmax_bwd(const __nv_bfloat16 *p, const __nv_bfloat16 *dp,
                                     __nv_bfloat16 *ds, uint32_t cols)
{
    size_t off = (size_t)blockIdx.x * cols;
    float dot = 0;
    for (uint32_t j = threadIdx.x; j < cols; j += ROW_THREADS)
        dot += ld(p, off + j) * ld(dp, off + j);
    dot = block_reduce(dot, false);
    for (uint32_t j = threadIdx.x; j < cols; j += ROW_THREADS)
        st(ds, off + j, ld(p, off + j) * (ld(dp, off + j) - dot));
}

static __device__ __forceinline__ float gelu(float x)
{
    return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}
static __device__ __forceinline__ float gelu_grad(float x)
{
    float u = 0.7978845608f * (x + 0.044715f * x * x * x), t = tanhf(u);
    return 0.5f * (1.0f + t) +
           0.5f * x * (1.0f - t * t) * 0.7978845608f * (1.0f + 0.134145f * x * x);
}
static __device__ __forceinline__ float silu(float x)
{
    return x / (1.0f + __expf(-x));
}

static __global__ void k_gelu(const __nv_bfloat16 *in, __nv_bfloat16 *out, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        st(out, i, gelu(ld(in, i)));
}

static __global__ void k_gelu_bwd(const __nv_bfloat16 *in, const __nv_bfloat16 *dout,
                                  __nv_bfloat16 *din, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        st(din, i, gelu_grad(ld(in, i)) * ld(dout, i));
}

/* rows × 2f input [gate | up] → rows × f: silu(gate) · up */
static __global__ void k_swiglu(const __nv_bfloat16 *gu, __nv_bfloat16 *out, size_t rows,
                                uint32_t f)
{
    size_t n = rows * f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        size_t r = i / f, c = i % f;
        st(out, i, silu(ld(gu, r * 2 * f + c)) * ld(gu, r * 2 * f + f + c));
    }
}

static __global__ void k_swiglu_bwd(const __nv_bfloat16 *gu, const __nv_bfloat16 *dout,
                                    __nv_bfloat16 *dgu, size_t rows, uint32_t f)
{
    size_t n = rows * f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        size_t r = i / f, c = i % f;
        float g = ld(gu, r * 2 * f + c), u = ld(gu, r * 2 * f + f + c), d = ld(dout, i);
        float sg = 1.0f / (1.0f + __expf(-g));
        st(dgu, r * 2 * f + c, d * u * sg * (1.0f + g * (1.0f - sg)));
        st(dgu, r * 2 * f + f + c, d * g * sg);
    }
}

extern "C" {

cudaError_t tsl_k_fill(void *p, size_t n, uint64_t seed, cudaStream_t st)
{
    k_fill<<<grid_for(n), 256, 0, st>>>((__nv_bfloat16 *)p, n, seed);
    return cudaGetLastError();
}

cudaError_t tsl_k_softmax(const void *in, void *out, size_t rows, uint32_t cols, cudaStream_t st)
{
    k_softmax<<<(unsigned)rows, ROW_THREADS, 0, st>>>((const __nv_bfloat16 *)in,
                                                      (__nv_bfloat16 *)out, cols);
    return cudaGetLastError();
}

cudaError_t tsl_k_softmax_bwd(const void *p, const void *dp, void *ds, size_t rows, uint32_t cols,
                              cudaStream_t st)
{
    k_softmax_bwd<<<(unsigned)rows, ROW_THREADS, 0, st>>>(
        (const __nv_bfloat16 *)p, (const __nv_bfloat16 *)dp, (__nv_bfloat16 *)ds, cols);
    return cudaGetLastError();
}

cudaError_t tsl_k_gelu(const void *in, void *out, size_t n, cudaStream_t st)
{
    k_gelu<<<grid_for(n), 256, 0, st>>>((const __nv_bfloat16 *)in, (__nv_bfloat16 *)out, n);
    return cudaGetLastError();
}

cudaError_t tsl_k_gelu_bwd(const void *in, const void *dout, void *din, size_t n, cudaStream_t st)
{
    k_gelu_bwd<<<grid_for(n), 256, 0, st>>>((const __nv_bfloat16 *)in, (const __nv_bfloat16 *)dout,
                                            (__nv_bfloat16 *)din, n);
    return cudaGetLastError();
}

cudaError_t tsl_k_swiglu(const void *gu, void *out, size_t rows, uint32_t f, cudaStream_t st)
{
    k_swiglu<<<grid_for(rows * f), 256, 0, st>>>((const __nv_bfloat16 *)gu, (__nv_bfloat16 *)out,
                                                 rows, f);
    return cudaGetLastError();
}

cudaError_t tsl_k_swiglu_bwd(const void *gu, const void *dout, void *dgu, size_t rows, uint32_t f,
                             cudaStream_t st)
{
    k_swiglu_bwd<<<grid_for(rows * f), 256, 0, st>>>(
        (const __nv_bfloat16 *)gu, (const __nv_bfloat16 *)dout, (__nv_bfloat16 *)dgu, rows, f);
    return cudaGetLastError();
}
}

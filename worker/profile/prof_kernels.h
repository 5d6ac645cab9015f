/*
 * prof_kernels.h — launchers of prof_kernels.cu (bf16 tensors given as void *).
 * Each returns the launch's cudaGetLastError(); the caller checks it.
 */
#ifndef TSL_PROF_KERNELS_H
#define TSL_PROF_KERNELS_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

cudaError_t tsl_k_fill(void *p, size_t n, uint64_t seed, cudaStream_t st);
cudaError_t tsl_k_softmax(const void *in, void *out, size_t rows, uint32_t cols, cudaStream_t st);
cudaError_t tsl_k_softmax_bwd(const void *p, const void *dp, void *ds, size_t rows, uint32_t cols,
                              cudaStream_t st);
cudaError_t tsl_k_gelu(const void *in, void *out, size_t n, cudaStream_t st);
cudaError_t tsl_k_gelu_bwd(const void *in, const void *dout, void *din, size_t n, cudaStream_t st);
cudaError_t tsl_k_swiglu(const void *gu, void *out, size_t rows, uint32_t f, cudaStream_t st);
cudaError_t tsl_k_swiglu_bwd(const void *gu, const void *dout, void *dgu, size_t rows, uint32_t f,
                             cudaStream_t st);

#ifdef __cplusplus
}
#endif

#endif

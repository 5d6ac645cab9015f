/*
 * fp8_impl.h — who runs a plan's FP8 recipe: Transformer Engine or torchao.
 *
 * The recipe (roofline.h tsl_fp8_recipe_t) says how tensors are scaled; the
 * implementation says what the stack does around each FP8 GEMM, and the two
 * stacks differ (docs/cost-model.md "FP8 — TE and torchao"):
 *
 *   TE (Megatron-LM, Megatron-Bridge, NeMo; TE release_v2.16
 *   pytorch/module/linear.py, layernorm_linear.py, grouped_linear.py)
 *     - the FP8 weight copies are cast on the first micro-batch and reused on
 *       the others (Megatron passes is_first_microbatch; update_workspace only
 *       then): once per iteration, in the step; none with fp8_param_gather;
 *     - the backward keeps the FP8 (columnwise) copy of each linear input, not
 *       the bf16 one, and the two FP8 weight copies between steps;
 *     - current scaling (tensorwise = Float8CurrentScaling) zeroes the amax
 *       (zero_amax_kernel, common/recipe/current_scaling.cu), computes it in its
 *       own kernel, then the scale (nvte_compute_scale_from_amax), then casts
 *       (csrc/quantizer.cpp Float8CurrentScalingQuantizer::quantize_impl): four
 *       kernels, one more read; a LayerNormLinear's input has its amax computed
 *       by the norm kernel into a zeroed buffer (csrc/extensions/normalization.cpp
 *       FUSED_NORM_AMAX_FP8, at::zeros): three kernels, no extra read (cost model
 *       163; 3 and 2 before);
 *     - under SP, the input of a column-parallel linear and dY of a row-parallel
 *       one have their amax all-reduced (MAX) over the TP group between the amax
 *       and the scale kernels (module/linear.py, layernorm_linear.py,
 *       layernorm_mlp.py _customize_quantizers_float8_current_scaling:
 *       with_amax_reduction; quantize_impl's amax_reduction_group->allreduce,
 *       then wait(): the compute stream waits on it) — tsl_fp8_impl_amax_reduced;
 *     - NVFP4 (NVFP4BlockScaling): the same two quantisers reduce their amax over TP
 *       under SP (release_v2.16 module/linear.py l.2087-2108, layernorm_linear.py
 *       l.1898-1919 _customize_quantizers_nvfp4; csrc/quantizer.cpp l.2402-2421
 *       NVFP4Quantizer::quantize_impl: allreduce_coalesced of the rowwise and
 *       columnwise amax, then wait()) — tsl_fp8_impl_amax_reduced (cost model 200);
 *   torchao (torchtitan; Float8Linear tensorwise, MX linear)
 *     - every use casts the weight (forward, and again in the backward);
 *     - tensorwise (compiled): the input cast once, both FP8 copies written by
 *       one kernel; the weight's backward cast reuses the forward's amax; the
 *       MX linear keeps the bf16 input and weight and casts them again;
 *     - tensorwise's amax: a reduction kernel, then the cast (2 kernels).
 *     Delayed, blockwise and nvfp4 are not torchao's recipes here: refused.
 */
#ifndef TSL_FP8_IMPL_H
#define TSL_FP8_IMPL_H

#include "err.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum tsl_fp8_impl {
    TSL_FP8_IMPL_TE = 0,      /* Transformer Engine (the default: Megatron/DeepSpeed-TE) */
    TSL_FP8_IMPL_TORCHAO = 1, /* torchao's Float8Linear / MX linear (torchtitan) */
    TSL_FP8_IMPL_COUNT = 2
} tsl_fp8_impl_t;

/* "te", "torchao"; NULL out of range. */
const char *tsl_fp8_impl_name(uint32_t impl);
/* The implementation of a name above; -1 for none. */
int tsl_fp8_impl_parse(const char *name);
/* 0 when impl runs recipe (TE: every recipe; torchao: tensorwise and mxfp8),
 * else -1 with err naming the field fp8_impl. */
int tsl_fp8_impl_ok(uint32_t recipe, uint32_t impl, tsl_err_t *err);
/* 0 unless fp8_amax_tp_only (TE's amax reduction over TP, cost.h knobs) is on under a
 * recipe other than delayed: NVTE_DP_AMAX_REDUCE_INTERVAL acts on delayed scaling's
 * amax histories alone; -1 with err naming the field. */
int tsl_fp8_amax_tp_only_ok(bool on, uint32_t recipe, tsl_err_t *err);
/* 0 unless fp8_dpa (FP8 attention, cost.h knobs) is on without an FP8 recipe, under TE's
 * Float8BlockScaling or NVFP4BlockScaling, which run no FP8 attention, or with torchao
 * running the recipe (impl), whose linears are all it quantises; -1 with err naming the
 * field. */
int tsl_fp8_dpa_ok(bool on, uint32_t recipe, uint32_t impl, tsl_err_t *err);

/* True where the implementation keeps FP8 weight copies across micro-batches and
 * FP8 stashes for the backward (TE); false: casts per use, bf16 stashes. */
bool tsl_fp8_impl_caches(uint32_t impl);
/* Kernels per quantised tensor beyond the recipe's (roofline.h
 * tsl_fp8_cast_kernels): TE current scaling's separate scale kernel (1); 0 else. */
uint32_t tsl_fp8_impl_scale_kernels(uint32_t recipe, uint32_t impl);
/* Kernels per quantised tensor that zero its amax before the amax is written (cost
 * model 163): TE current scaling's zero_amax_kernel ahead of its amax kernel
 * (common/recipe/current_scaling.cu launch_amax_kernel, TE v2.9 to v2.18;
 * cudaMemsetAsync at release_v2.7), and after a norm the at::zeros fill of the amax
 * buffer the norm kernel reduces into (pytorch/csrc/quantizer.cpp
 * create_unquantized_tensor_with_amax): 1, with or without the norm's amax; 0 else
 * (torchao's amax is a reduction that writes its output). */
uint32_t tsl_fp8_impl_zero_amax_kernels(uint32_t recipe, uint32_t impl);
/* Whether the implementation all-reduces a sequence-parallel input's amax over the
 * TP group before its scale (TE current scaling; the header's note): one 4-byte
 * all-reduce per such cast, on the compute stream's path. TE's NVFP4 likewise (cost
 * model 200): NVFP4BlockScaling's per-tensor FP32 scale comes from the amax, and
 * release_v2.16 module/linear.py and layernorm_linear.py
 * _customize_quantizers_nvfp4 set with_amax_reduction on a column-parallel SP
 * linear's input quantiser and a row-parallel one's grad-output quantiser;
 * csrc/quantizer.cpp NVFP4Quantizer::quantize_impl then runs
 * amax_reduction_group->allreduce_coalesced (MAX) over its rowwise and columnwise
 * amaxes (8 bytes, one α-bound collective, priced as current scaling's) and
 * wait()s. False elsewhere: delayed scaling reduces its amax history once per step;
 * MXFP8 and blockwise have no per-tensor scale; torchao's tensorwise casts under TP
 * (Float8ColwiseParallel) are not read here and stay unpriced (assumed). */
bool tsl_fp8_impl_amax_reduced(uint32_t recipe, uint32_t impl);
/* Bytes and kernels a cast saves when the preceding kernel computed the amax
 * (TE current scaling after its norm): the amax pass's 2 B read and kernel;
 * 0 elsewhere. */
double tsl_fp8_impl_fused_amax_bytes(uint32_t recipe, uint32_t impl);
uint32_t tsl_fp8_impl_fused_amax_kernels(uint32_t recipe, uint32_t impl);
/* Whether the backward casts a linear's input again from the bf16 it kept (one more
 * amax and cast, as the forward's): torchao's MX linear (mx_mm casts the saved
 * input_hp along dim 1 in its backward). torchao's tensorwise Float8Linear does not,
 * compiled as every torchtitan run is: the forward's one cast kernel writes the
 * input's rowwise and columnwise FP8 copies (torchao torchao/testing/float8/
 * roofline_utils.py at 6243040, get_tensor_memory_traffic_ovhd_s, tensorwise
 * input: "x_bf16, max_abs -> to_float8 -> x_fp8_dim0, x_fp8_dim1"; at eab345c,
 * the December 2024 torchtitan rows' version, manual_float8_matmul_with_args_in_float8
 * saves input_fp8 itself). TE keeps its FP8 copy (tsl_fp8_impl_caches): false. */
bool tsl_fp8_impl_recasts_input(uint32_t recipe, uint32_t impl);
/* The bytes per weight element and the kernels of torchao's tensorwise Float8Linear's
 * weight cast in the forward (bwd false) and the backward (bwd true) (TE casts its
 * copies once per iteration, in the step). torchao tensorwise (the
 * same roofline_utils.py, tensorwise weight: the amax, "to_float8 -> x_fp8_dim0"
 * forward, "x_fp8_dim1" backward with the forward's max_abs; Float8Linear casts the
 * weight outside the autograd function, so its scale is kept): forward the amax read
 * (2 B) and the rowwise cast (2 B read, 1 written), 2 kernels; backward the
 * columnwise cast (3 B), 1 kernel. 0 and no kernel elsewhere: torchao's MX linear
 * casts the whole weight each way, priced by the recipe's cast (roofline.c). */
double tsl_fp8_impl_weight_cast_bytes(uint32_t recipe, uint32_t impl, bool bwd, uint32_t *kernels);
/* Whether Transformer Engine quantises each tensor of a grouped GEMM (GroupedLinear's
 * input and output gradient, one per local expert) through its own quantizer, the
 * recipe's kernels once per expert: current scaling (tensorwise), blockwise and MXFP8
 * under TE. `tex.split_quantize` (release_v2.16 pytorch/csrc/extensions/cast.cpp) hands
 * every recipe but NVFP4 to multi_tensor_quantize_impl, whose one multi-tensor kernel
 * (nvte_multi_cast_transpose) is delayed scaling's alone ("Currently only have fused
 * kernel for FP8 delayed scaling"); the others run `quantizer->quantize` per tensor —
 * current scaling its amax, scale and cast kernels (quantizer.cpp
 * Float8CurrentScalingQuantizer::quantize_impl), the block-scaled recipes their one
 * cast (bulk-allocated, quantised one by one). False for delayed scaling and NVFP4 (its
 * fused grouped kernel, split_quantize_nvfp4_impl), and under torchao. */
bool tsl_fp8_impl_split_per_tensor(uint32_t recipe, uint32_t impl);
/* Bytes per element a sequence-parallel all-gather moves for an FP8 linear
 * (docs/cost-model.md "FP8 sequence-parallel all-gathers"): of its input (grad
 * false: the forward's gather before a column-parallel linear, its backward
 * re-gather for dW) or of its output gradient (grad true: the backward's gather of
 * dY before a row-parallel linear's dX and dW). Transformer Engine (release_v2.16,
 * distributed.py gather_along_first_dim, base.py
 * fill_userbuffers_buffer_for_all_gather) quantises before it gathers, NCCL or
 * userbuffers alike: one copy of the input (rowwise, or columnwise for the
 * re-gather: as many bytes) with its scales, tsl_fp8_copy_bytes plus the block
 * scales (blockwise 4/128, mxfp8 1/32, nvfp4's counted there); dY under delayed
 * and tensorwise scaling likewise (1: the transpose is made after), under the
 * block-scaled recipes both copies, rowwise for dX and columnwise for dW (twice
 * that). torchao (Float8ColwiseParallel / Float8RowwiseParallel /
 * PrepareFloat8ModuleInput) gathers float8 under tensorwise scaling alone: 1 byte;
 * its mxfp8 linears and bf16 (recipe none) gather 2. */
double tsl_fp8_impl_sp_gather_bytes(uint32_t recipe, uint32_t impl, bool grad);

#endif

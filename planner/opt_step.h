/*
 * opt_step.h — the optimizer step as a stack runs it: its passes over device memory.
 *
 * The step is HBM-bound (cost.h, opt_s): each pass reads and writes every element it
 * touches once. Stacks differ in how many passes they make around Adam's update
 * (docs/cost-model.md "The step as the stack runs it"); bytes per parameter, g the gradient
 * buffer's bytes per element (2 or 4), M an Adam moment's (4; 2 with bf16 moments):
 *
 *   fused (0)      one fused kernel over the gradient where it lies: read the fp32
 *                  master, m, v and the gradient, write them and the 16-bit weights
 *                  (8 + 4M + 2 + g; no 16-bit copy under autocast; 12 + g without a
 *                  master). Tessel's executor (worker/exec/exec_step.c optimize: one
 *                  Adam kernel per layer), torch.optim.AdamW(fused=True) with no
 *                  clipping (bench/torch_gpt_step.py). No per-iteration zeroing priced.
 *   megatron (1)   Megatron-LM's MixedPrecisionOptimizer with --bf16 (no loss
 *                  scaler), core at 44151194 (megatron/core/optimizer/optimizer.py
 *                  step: prepare_grads, clip_grad_norm, step_with_ready_grads):
 *                    main-grad cast (distrib_optimizer.py _copy_model_grads_to_main_grads:
 *                      .float() of a 16-bit buffer; none when g = 4)    g + 4
 *                    L2 norm (clip_grads.py get_grad_norm_fp32, TE multi_tensor_l2norm) 4
 *                    clip scale (clip_grad_by_total_norm_fp32: a tensor coefficient
 *                      clamped to 1, TE multi_tensor_scale_tensor: every step) 8
 *                    Adam over fp32 main params (TE FusedAdam)               28
 *                    main → model copy (_copy_main_params_to_model_params)  4 + 2
 *                  52 B with g = 2, 46 with g = 4; with bf16 moments (the precision-
 *                  aware optimizer: TE FusedAdam with master_weights reads the buffer's
 *                  gradient and writes the 16-bit weights itself) norm g + scale 2g +
 *                  the fused kernel's 18 + g. All over the rank's shard (ZeRO-1: its
 *                  1/d). Per local gradient element: the grad buffer's zeroing every
 *                  iteration (training.py train_step, zero_grad_buffer), g bytes.
 *   megatron-fp16 (2)  Megatron-LM 2021-22's Float16OptimizerWithFloat16Params with
 *                  --fp16 (6985e58938 megatron/optimizer/optimizer.py step, Apex):
 *                  the cast (g + 4; a fresh fp32 .grad per tensor), the dynamic loss
 *                  scale's unscale and inf check (torch._amp_foreach_non_finite_check_
 *                  and_unscale_: 8), the L2 norm (4), Adam (28), the copy (6): 52 B
 *                  with g = 2. Its clip scale runs only when the norm exceeds
 *                  --clip-grad (clip_grads.py: `if clip_coeff < 1.0`, after .item()):
 *                  not priced. The grad buffer's zeroing (g per local element) where
 *                  Megatron keeps one (contiguous buffers, 2022); none with
 *                  unfused_grad_accum (2021's param.grad, set to None by zero_grad).
 *   torch (3)      torch.optim.AdamW, foreach (torchtitan 9dec370: optimizer.fused
 *                  false, torchtitan/optimizer.py), after torch.nn.utils
 *                  clip_grad_norm_ (torchtitan/utils.py clip_grad_norm_, max_norm
 *                  1.0): _foreach_norm (g) and _foreach_mul_ by the clamped
 *                  coefficient (2g, every step); _multi_tensor_adamw's eight foreach
 *                  ops over the parameter (P bytes: 4, the fp32 master FSDP2 shards;
 *                  2 without a master): weight decay mul_ 2P, lerp_ of m 2M + g, mul_
 *                  of v 2M, addcmul_ 2M + g, sqrt into a new tensor 2M, div_ 2M, add_
 *                  2M, addcdiv_ into the parameter 2P + 2M: 4P + 14M + 2g; 92 B at
 *                  P = M = g = 4. No 16-bit copy (FSDP2 casts at its all-gather) and
 *                  no zeroing (zero_grad sets the gradients to None).
 *   deepspeed-fp16 (4)  DeepSpeed's FP16_UnfusedOptimizer, which its engine wraps
 *                  around a client optimizer that is not DeepSpeed's own FusedAdam
 *                  (runtime/engine.py _configure_fp16_optimizer) — Megatron-LM
 *                  v1.1.5's Apex FusedAdam as AMP's fork ran it (DachengLi1/AMP
 *                  72eeea4 DeepSpeed/deepspeed/runtime/fp16/unfused_optimizer.py
 *                  step), tensor by tensor over the fp16 param.grad (2 B whatever
 *                  the reduce: fp32_allreduce copies its result back): the overflow
 *                  check (utils.py CheckOverflow: float(x.float().sum()), 2 + 4 + 4),
 *                  the norm (get_grad_norm: .float().norm(), 2 + 4 + 4), the fp32
 *                  .grad (2 + 4), unscale and clip (mul_, 8), Adam (28), the fp16
 *                  copy (4 + 2): 68 B. No zeroing (grads set to None). Its two host
 *                  syncs and seven launches per tensor are not priced (one kernel
 *                  per pass is).
 *
 *   megatron-core-fp16 (5)  Megatron-LM core's MixedPrecisionOptimizer with --fp16, as
 *                  the megatron export launches an fp16 plan (d98e8a6
 *                  megatron/core/optimizer/optimizer.py prepare_grads): megatron's
 *                  passes and, between the main-grad cast and the norm, the grad
 *                  scaler's _unscale_main_grads_and_check_for_nan
 *                  (torch._amp_foreach_non_finite_check_and_unscale_ over the fp32
 *                  main gradients: 8, one kernel). Its clip scale runs every step, as
 *                  under --bf16 (clip_grad_by_total_norm_fp32). The found-inf MAX
 *                  all-reduce of one float over the grad-stats group and its .item()
 *                  are not priced, as the norm's are not. 60 B with g = 2, 54 with
 *                  g = 4 (--accumulate-allreduce-grads-in-fp32).
 *   torch-loop (6)  torch.optim.Adam as PyTorch 1.10-1.12 ran it: a Python loop over
 *                  the parameter tensors (torch/optim/adam.py Adam.step ->
 *                  torch/optim/_functional.py adam; 1.12's _single_tensor_adam makes
 *                  the same kernels; no foreach, no fused), weight decay on, no
 *                  clipping: Galvatron-BMW's trainers (PKU-DAIR/Hetu df32daa
 *                  tools/Galvatron/{bert,vit,t5,swin}/train_hp_layerwise*.py:
 *                  Adam(model.parameters(), weight_decay=0.01), loss.backward(),
 *                  optimizer.step(), optimizer.zero_grad(); torch 1.10.2 per its
 *                  requirements.txt). Per tensor, P the parameter's bytes (4 with a
 *                  master or fp32 weights, else 2), M a moment's (zeros_like(p)), T the
 *                  temporaries' (the wider of g and P):
 *                    grad.add(param, alpha=wd) into a new tensor    g + P + T
 *                    exp_avg.mul_(beta1).add_(grad, ...)            2M, 2M + T
 *                    exp_avg_sq.mul_(beta2).addcmul_(grad, grad)    2M, 2M + T
 *                    exp_avg_sq.sqrt() / sqrt(bc2), new tensors     2M, 2M
 *                    .add_(eps)                                     2M
 *                    param.addcdiv_(exp_avg, denom, ...)            2P + 2M
 *                  g + 3P + 3T + 16M: 92 B with every width 4 (fp32 training), nine
 *                  kernels per tensor. zero_grad()'s default set_to_none=False in
 *                  1.10 (torch/optim/optimizer.py) zeroes every .grad in place: g per
 *                  kept gradient element, a kernel per tensor. No 16-bit copy.
 *                  kernels_per_tensor: ten launches for every parameter tensor of
 *                  the layer (cost.c counts them).
 *   composer (7)   Composer's DecoupledAdamW as Composer 0.16 runs it under torch FSDP1
 *                  with use_orig_params (composer/optim/decoupled_weight_decay.py at
 *                  v0.16.4 adamw: a Python loop over the parameter tensors that hold
 *                  gradient on this rank; composer/trainer/dist_strategy.py:
 *                  use_orig_params defaults True), after FSDP1's clip_grad_norm_ (the
 *                  yamls' gradient_clipping, clipping_type norm: a vector_norm per
 *                  gradient g, its mul_ by the clamped coefficient 2g, every step).
 *                  The loop body over one tensor, weight decay 0 (the llm-foundry
 *                  pretrain yamls' weight_decay: 0.0, so no param.mul_): the step count
 *                  read back, `step = state_steps[i].item()` (state['step'] is a CUDA
 *                  tensor since v0.16), then m's mul_ and add_ (2M, 2M + g), v's mul_ and
 *                  addcmul_ (2M, 2M + g), sqrt and the division by sqrt(bc2) into new
 *                  tensors (2M, 2M), add_ of eps (2M), addcdiv_ into the parameter (2P +
 *                  2M): 16M + 2P + 2g, 3g + 16M + 2P + 2g = 92 B at 4. Eight kernels and
 *                  the clip's two per tensor; reads_back: each tensor's .item() drains
 *                  the GPU, so its eight kernels are issued onto an idle GPU at the
 *                  host's pace (cost_host_sync.h tsl_composer_step_sync_s). No zeroing
 *                  (zero_grad sets the gradients to None).
 * Kernels: one per pass (multi-tensor kernels, one launch per layer's tensors) except
 * torch-loop's and composer's, per tensor. The norm's all-reduce of one scalar (ZeRO-1, TP, PP
 * groups) is not priced. The PAPER cost mode prices fused whatever the plan says (the
 * seeds' 28 B).
 */
#ifndef TSL_OPT_STEP_H
#define TSL_OPT_STEP_H

#include "err.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum tsl_opt_step_impl {
    TSL_OPT_STEP_FUSED = 0,              /* one fused Adam kernel (Tessel's executor) */
    TSL_OPT_STEP_MEGATRON = 1,           /* Megatron-core, bf16, clip by norm */
    TSL_OPT_STEP_MEGATRON_FP16 = 2,      /* Megatron-LM 2021-22, fp16 with a loss scaler */
    TSL_OPT_STEP_TORCH = 3,              /* torch.optim.AdamW foreach + clip_grad_norm_ */
    TSL_OPT_STEP_DEEPSPEED_FP16 = 4,     /* DeepSpeed's unfused fp16 optimizer (AMP's fork) */
    TSL_OPT_STEP_MEGATRON_CORE_FP16 = 5, /* Megatron-core, fp16 with a loss scaler */
    TSL_OPT_STEP_TORCH_LOOP = 6,         /* torch.optim.Adam's per-tensor loop (1.10-1.12) */
    TSL_OPT_STEP_COMPOSER = 7,           /* Composer 0.16's DecoupledAdamW, a read per tensor */
    TSL_OPT_STEP_COUNT = 8
} tsl_opt_step_impl_t;

/* "fused", "megatron", "megatron-fp16", "torch", "deepspeed-fp16", "megatron-core-fp16",
 * "torch-loop", "composer"; NULL out of range. */
const char *tsl_opt_step_name(uint32_t impl);
/* The implementation of a name above; -1 for none. */
int tsl_opt_step_parse(const char *name);
/* 0 when impl names one, else -1 with err naming the field opt_step. */
int tsl_opt_step_ok(uint32_t impl, tsl_err_t *err);
/* Whether impl is Megatron-core's optimizer (megatron, megatron-core-fp16): the step
 * that tells a plan's stack is Megatron-core, whose modules the cost model prices as
 * that stack builds them (search_eval.c chunk_rs_stack; cost.h
 * tsl_cost_proj_orig_input). Megatron-LM 2021-22's (megatron-fp16) predates both. */
bool tsl_opt_step_megatron_core(uint32_t impl);

/* How the stack keeps its states, as the step reads them. */
typedef struct tsl_opt_step_states {
    double grad_bytes;       /* g: the gradient buffer's bytes per element (2 or 4) */
    bool master;             /* an fp32 master beside the weights (else 16-bit states) */
    bool bf16_moments;       /* with a master: Adam's moments in 16 bits */
    bool weights16;          /* a 16-bit weight copy the step writes (not under autocast) */
    bool unfused_grad_accum; /* gradients in param.grad, set to None (no buffer) */
} tsl_opt_step_states_t;

/* The step's device-memory traffic: shard_bytes per parameter the rank updates,
 * local_bytes per gradient element it keeps (the buffer's zeroing), in kernels
 * passes — launched once per layer, or once per parameter tensor where
 * kernels_per_tensor (a per-tensor loop: the caller multiplies by the layer's
 * tensors). */
typedef struct tsl_opt_step_cost {
    double shard_bytes, local_bytes;
    uint32_t kernels;
    bool kernels_per_tensor;
    bool reads_back; /* a host read per tensor before its kernels (composer) */
} tsl_opt_step_cost_t;

void tsl_opt_step_cost(uint32_t impl, const tsl_opt_step_states_t *st, tsl_opt_step_cost_t *out);

#endif

/*
 * loss_impl.h — how a stack runs an LM head's cross-entropy, and the memory it
 * takes beyond the logits themselves (docs/cost-model.md "The loss's memory").
 *
 * Bytes per logit of one micro-batch on the head's rank (every stack here splits
 * the vocabulary over TP, so a rank holds seq × V / t logits), in three figures:
 *   kept  what the backward keeps from the forward (in the head's stash);
 *   fwd   the loss forward's transient beyond kept, at the end of the last
 *         stage's forward;
 *   bwd   the loss backward's transient beyond kept, at the start of that
 *         stage's backward.
 * The head's transient is max(fwd, bwd): both fall where the stage holds its
 * whole stash (cost.c layer_memory adds it to the head's O_b).
 *
 *   exec      Tessel's executor (worker/exec/exec_vocab.c tsl_exec_head_fwd,
 *             exec_engine.c: e->vlog): the logits GEMM writes a bf16 workspace of
 *             one micro-batch (2 B, allocated once, there at every moment), the
 *             vocabulary-parallel softmax writes dlogits = softmax − onehot in
 *             fp32 into the stash (4 B kept); the backward copies them back into
 *             the same bf16 workspace for its GEMMs: kept 4, fwd 2, bwd 2.
 *   torch     F.cross_entropy(logits.float(), labels) eager (torchtitan 9dec370
 *             train.py loss_fn, not compiled; `del pred` before backward):
 *             log_softmax's fp32 output kept (4); while it runs the bf16 logits
 *             (2) and their fp32 copy (4) are alive too: fwd 6; the backward's
 *             nll_loss_backward writes a dense fp32 grad_input (4) and
 *             log_softmax_backward its fp32 output (4) beside the saved output:
 *             bwd 8. Under autocast the script holds its bf16 logits through the
 *             backward (TSL_AUTOCAST_LOGITS_KEPT_BYTES, cost.h), so its fwd is 4.
 *             Under TP (tp > 1) torchtitan runs the same call inside
 *             torch.distributed.tensor.parallel.loss_parallel() (9dec370
 *             parallel_dims.py:119-120 loss_parallel_enabled = tp > 1 unless
 *             disable_loss_parallel; utils.py:196-201 get_train_context), whose
 *             DTensor handlers (torch/distributed/tensor/parallel/loss.py)
 *             decompose both passes in eager ops: _log_softmax makes
 *             shifted = x − max and exp(shifted) beside the fp32 copy x before
 *             result = shifted − logsumexp (peak 2 + 4 + 4 + 4 with nothing kept
 *             yet; 2 + 4 + 4 beside the kept result): fwd 10; the fused
 *             _nll_loss_and_log_softmax_backward returns
 *             (zeros_like(x) scattered + exp(x)) · grad_output, three fp32
 *             tensors at once beside the saved output: bwd 12.
 *   megatron  Megatron-LM's vocab_parallel_cross_entropy
 *             (megatron/core/tensor_parallel/cross_entropy.py at 4415119 — the
 *             Megatron-Bridge 21d102f5e submodule — and e223b92072; the native
 *             fusion, megatron/core/fusions/fused_cross_entropy.py, the same
 *             tensors): .float() copies the bf16 logits (2, alive in the caller)
 *             into fp32, subtracts the max, exponentiates and normalises in place
 *             and saves that softmax (4 kept): fwd 2; the backward updates it in
 *             place and autograd casts the fp32 gradient to the logits' bf16 (2)
 *             while it lives: bwd 2.
 *   te        Transformer Engine's parallel_cross_entropy (Megatron-LM
 *             --cross-entropy-loss-fusion --cross-entropy-fusion-impl te, set by
 *             Megatron-Bridge's performance scripts, scripts/performance/utils/
 *             overrides.py at 21d102f5e; TE release_v2.16 pytorch/cross_entropy.py,
 *             triton/cross_entropy.py): an online softmax then a kernel that
 *             writes the gradient into the bf16 logits in place, saved (2 kept);
 *             the backward scales them in place: fwd 0, bwd 0 (per-row
 *             scalars only).
 *   torch-compile
 *             the same F.cross_entropy over logits.float() under torch.compile
 *             (torchtitan e7c0cae components/loss.py build_cross_entropy_loss:
 *             torch.compile(loss_fn) when training.compile; torchtitan#551 moved
 *             the .float() into the compiled loss). Inductor fuses the upcast into
 *             the log-softmax reductions and the backward into one pointwise
 *             kernel over the saved reductions: the graph saves its bf16 input,
 *             the logits (2 kept; the script's `del pred` drops a name, not the
 *             saved tensor) and per-row statistics; the forward allocates nothing
 *             per logit (fwd 0); the backward writes the bf16 input gradient
 *             beside the saved logits (bwd 2). Measured (Lightning-AI/
 *             lightning-thunder#1654, #1552: a compiled HF causal-LM loss with
 *             the .float() inside over 4096 × 152064 bf16 logits, 1.246 GB):
 *             the forward's peak 1245.77 MB, the logits alone; forward and
 *             backward 3.7 GB, the logits, the new gradient and the previous
 *             iteration's .grad. Under TP (loss_parallel inside the compiled
 *             graph) the same figures are assumed: no source read.
 */
#ifndef TSL_LOSS_IMPL_H
#define TSL_LOSS_IMPL_H

#include "err.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum tsl_loss_impl {
    TSL_LOSS_EXEC = 0,          /* Tessel's executor: the default (target any) */
    TSL_LOSS_TORCH = 1,         /* F.cross_entropy over logits.float(), eager (torchtitan) */
    TSL_LOSS_MEGATRON = 2,      /* Megatron-LM's vocab_parallel_cross_entropy */
    TSL_LOSS_TE = 3,            /* Transformer Engine's fused parallel_cross_entropy */
    TSL_LOSS_TORCH_COMPILE = 4, /* the same under torch.compile (torchtitan since 2025) */
    TSL_LOSS_IMPL_COUNT = 5
} tsl_loss_impl_t;

/* Bytes per logit the model's head figure already counts as kept (model.c
 * add_head: the fp32 logits kept for the loss). */
#define TSL_LOSS_MODEL_KEPT_BYTES 4.0

/* "exec", "torch", "megatron", "te", "torch-compile"; NULL out of range. */
const char *tsl_loss_impl_name(uint32_t impl);
/* The implementation of a name above; -1 for none. */
int tsl_loss_impl_parse(const char *name);
/* 0 when impl is an implementation that can price the plan, else -1 with err
 * naming the field loss_impl: under autocast the script's loss is torch's (exec,
 * the default, stands for it; megatron and te are refused). */
int tsl_loss_impl_ok(uint32_t impl, bool autocast, tsl_err_t *err);

/* Bytes per logit, as above (an impl out of range: exec's), for a head whose
 * vocabulary is split over tp TP ranks (0 or 1: not split); only torch's
 * transients depend on it (loss_parallel's decomposition above). */
double tsl_loss_kept_bytes(uint32_t impl);
/* Whether what impl keeps is the bf16 logits themselves (torch-compile: the
 * compiled graph's saved input), which a pipelined stage's output_chunks holds
 * anyway (cost.c pp_logits_held_bytes): not a second copy. */
bool tsl_loss_keeps_logits(uint32_t impl);
/* Whether impl is torchtitan's, whose pipelined runs hold every micro-batch's
 * logits in torch.distributed.pipelining's output_chunks (torch, torch-compile). */
bool tsl_loss_pp_holds_logits(uint32_t impl);
double tsl_loss_fwd_bytes(uint32_t impl, uint32_t tp);
double tsl_loss_bwd_bytes(uint32_t impl, uint32_t tp);

#endif

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
 *             Megatron-Bridge 21d102f5e submodule — and e223b92072; its native
 *             fusion is megatron-fused, below): .float() copies the bf16 logits (2, alive in the caller)
 *             into fp32, subtracts the max, exponentiates and normalises in place
 *             and saves that softmax (4 kept): fwd 2; the backward updates it in
 *             place and autograd casts the fp32 gradient to the logits' bf16 (2)
 *             while it lives: bwd 2.
 *   megatron-fused
 *             the same code under --cross-entropy-loss-fusion (native, the
 *             default impl): megatron/core/fusions/fused_cross_entropy.py at
 *             338af5145 (the MCORE_TAG of NeMo r2.0.0rc1's Dockerfile.ci) runs
 *             cross_entropy.py's steps in four jit_fuser functions, and jit_fuser
 *             is torch.compile on torch >= 2.2 (megatron/core/jit.py; NeMo's
 *             base image nvcr.io/nvidia/pytorch:24.02 ships a 2.3.0 nightly of
 *             2024-01, dao-ailab/causal-conv1d v1.2.0.post2's CI; the 24.07
 *             container's torch assumed >= 2.2 as well). The forward
 *             keeps the fp32 softmax as the eager loss does (4 kept, fwd 2); the
 *             compiled backward (calculate_gradients) scatters the target's −1
 *             into the saved softmax, an index_put on a graph input that
 *             Inductor runs on a fresh fp32 copy of it (clone, then the scatter),
 *             before the pointwise kernel writes the product back into the
 *             softmax and casts it to bf16: the copy (4) and the bf16 gradient
 *             (2) at once: bwd 6. Measured (Liger-Kernel benchmark/data/
 *             all_benchmark_data.csv, rows megatron_cross_entropy of #1260,
 *             H100, 8192 tokens, V 4096..131072, fwd+bwd peak with the bf16
 *             logits alive): 12 B per logit fused, 8 unfused.
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
 *   fused-xentropy
 *             flash-attn's fused xentropy CUDA kernel (flash_attn/losses/
 *             cross_entropy.py CrossEntropyLoss over csrc/xentropy, Dao-AILab/
 *             flash-attention before 5400fdc4 moved it to Triton; its training
 *             configs set inplace_backward: True, training/configs/experiment/
 *             owt/base.yaml and pile/base.yaml):
 *             the forward saves its bf16 input, the logits (2 kept, the logits
 *             themselves as torch-compile's), and writes per-row losses and
 *             log-sum-exp only (fwd 0); the backward writes the gradient into the
 *             saved logits in place (bwd 0).
 *   composer  llm-foundry's MPT under Composer (cost model 120): the loss is
 *             flash-attn's xentropy as fused-xentropy runs it, but through
 *             llm-foundry's FusedCrossEntropyLoss(ignore_index=-100)
 *             (llmfoundry/models/mpt/modeling_mpt.py at b2a43a147 and 5e85bd62d),
 *             which keeps flash-attn's default inplace_backward=False
 *             (flash_attn/losses/cross_entropy.py CrossEntropyLoss.__init__): the
 *             backward writes a new bf16 gradient beside the saved logits: kept 2,
 *             fwd 0, bwd 2. Composer's train metrics (below) run after the
 *             backward, when the stash is freed: their fp32 transients (4 + 4 per
 *             logit beside the kept logits) are not the stage's peak here and are
 *             not priced.
 *
 * The loss's time (docs/cost-model.md "The loss's time"): the HBM bytes per
 * logit the loss's kernels move, forward and backward, as that code runs them
 * (the logits GEMM's own output is the GEMM's, not counted here), priced at the
 * GPU's memory rate with one launch per kernel (roofline.c ends_s):
 *   exec      vxent_max, vxent_sums and vxent each read the bf16 logits (3 × 2),
 *             vxent writes the fp32 dlogits (4): fwd 10 B, 3 kernels; the
 *             backward's copy into the bf16 workspace (read 4, write 2): bwd 6,
 *             1 kernel (worker/exec/exec_vocab.c, devops.h vxent*).
 *   torch     ATen's cross_entropy over logits.float(): the cast (read 2, write
 *             4), log_softmax (cunn_SoftMaxForward over a row too long for shared
 *             memory: a max, a sum-of-exp and an output pass, read 3 × 4, write
 *             4): fwd 22, 2 kernels; nll_loss_backward's dense zero gradient
 *             (write 4), log_softmax's backward (a sum pass over the gradient,
 *             then gradient and output read, result written: 16), the cast back
 *             (read 4, write 2): bwd 26, 3 kernels. Under TP (loss_parallel, the
 *             DTensor handlers above, each op its own eager kernel): the cast (6),
 *             amax (4), x − max (8), exp (8), its sum (4), shifted − logsumexp
 *             (8): fwd 38, 6 kernels; zeros_like (write 4), exp of the saved
 *             output (8), the add (12), × grad_output (8), the cast back (6):
 *             bwd 38, 5 kernels.
 *   megatron  cross_entropy.py's eager ops: .float() (6), max (4), the in-place
 *             subtract (8), exp (8), sum (4), div_ (8): fwd 38, 6 kernels; the
 *             in-place mul_ by grad_output (8) and autograd's cast of the fp32
 *             gradient to the logits' bf16 (6): bwd 14, 2 kernels.
 *   megatron-fused
 *             the four compiled functions (Inductor's fusion assumed, no
 *             generated code read): calculate_logits_max's .float() output
 *             stored in the kernel that reduces its max (read 2, write 4);
 *             calculate_predicted_logits' in-place subtract, exp and sum in one
 *             reduction kernel that writes exp back into its input (4 + 4);
 *             calculate_cross_entropy_loss' div_ (4 + 4): fwd 22, 3 kernels;
 *             calculate_gradients' clone of the softmax (4 + 4), then one
 *             pointwise kernel reading the copy and writing the softmax back
 *             (the input's mutation) and the bf16 gradient (4 + 4 + 2): bwd 18,
 *             2 kernels (the scatter of one value per row not counted, as
 *             megatron's). The per-token scalars' kernels are not counted,
 *             as for megatron. Liger-Kernel's H100 measurement above: fused
 *             forward 11.81 ms, backward 6.42 (the fwd+bwd row less the
 *             forward), unfused 15.81 and 5.43 at 8192 × 131072 logits: the
 *             backward near these counts at the unfused loss's rate, the
 *             forward slower than 22 B at that rate (28 B's worth).
 *   te        TE release_v2.16 triton/cross_entropy.py: online_softmax_kernel
 *             reads the bf16 logits (2), cross_entropy_kernel reads them and
 *             writes the gradient over them (2 + 2): fwd 6, 2 kernels; Megatron's
 *             per-token loss makes grad_output a tensor, not 1.0, so
 *             element_mul_kernel scales the gradient in place (2 + 2): bwd 4,
 *             1 kernel.
 *   torch-compile
 *             Inductor's fused loss: the reductions read the bf16 logits twice
 *             (the max, then Σexp: a looped reduction over a row longer than its
 *             block — assumed, no generated code read; an online softmax would
 *             read once): fwd 4, 1 kernel; one pointwise backward reads the
 *             logits and writes the bf16 gradient: bwd 4, 1 kernel. Under TP the
 *             same assumed.
 *   fused-xentropy
 *             xentropy_kernel.cu cunn_SoftMaxXEntropyForward: ilpReduce's max
 *             pass and its sum-of-exp pass over the bf16 row (2 × 2): fwd 4,
 *             1 kernel; cunn_SoftMaxXEntropyBackward reads the logits and writes
 *             the gradient (2 + 2): bwd 4, 1 kernel.
 *   composer  fused-xentropy's 4 + 4 in 1 + 1 kernels, and Composer's train
 *             metrics: its Trainer updates every train metric after each
 *             micro-batch's backward (composer/trainer/trainer.py _train_microbatch
 *             → _eval_train_metrics, v0.12.1 through v0.17.2, the versions
 *             llm-foundry's MPT tables ran), under torch.no_grad() and the
 *             precision context (autocast bf16), on the same logits (llm-foundry's
 *             eval_forward hands back the model's outputs); llm-foundry trains with
 *             two, LanguageCrossEntropy and LanguagePerplexity (modeling_mpt.py
 *             `use_train_metrics`, default True; MosaicGPT at 300cc5c58 the same
 *             two), and LanguagePerplexity subclasses LanguageCrossEntropy, so each
 *             runs torch.nn.CrossEntropyLoss(reduction='sum') over the bf16 logits
 *             (composer/metrics/nlp.py). Under autocast log_softmax runs in fp32
 *             (fp32_set_opt_dtype) and bf16 has no fused half-to-float path: torch's
 *             forward figure above, the cast and log_softmax's three passes, 22 B in
 *             2 kernels, and nll_loss's gather (a value per row, 1 kernel, no bytes
 *             counted). Counted in the backward, after which they run: bwd 4 +
 *             2 × 22 = 48 B, 1 + 2 × 3 = 7 kernels; fwd 4, 1 kernel.
 * Under autocast the script's loss is torch's over its own logits (no TP split).
 */
#ifndef TSL_LOSS_IMPL_H
#define TSL_LOSS_IMPL_H

#include "err.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum tsl_loss_impl {
    TSL_LOSS_EXEC = 0,           /* Tessel's executor: the default (target any) */
    TSL_LOSS_TORCH = 1,          /* F.cross_entropy over logits.float(), eager (torchtitan) */
    TSL_LOSS_MEGATRON = 2,       /* Megatron-LM's vocab_parallel_cross_entropy */
    TSL_LOSS_TE = 3,             /* Transformer Engine's fused parallel_cross_entropy */
    TSL_LOSS_TORCH_COMPILE = 4,  /* the same under torch.compile (torchtitan since 2025) */
    TSL_LOSS_FUSED_XENTROPY = 5, /* flash-attn's fused xentropy kernel, in-place backward */
    TSL_LOSS_COMPOSER = 6,       /* llm-foundry under Composer: that kernel, a new gradient,
                                    and two train metrics' torch cross-entropy per micro-batch */
    TSL_LOSS_MEGATRON_FUSED = 7, /* Megatron-core's --cross-entropy-loss-fusion, native:
                                    vocab_parallel_cross_entropy's steps under torch.compile */
    TSL_LOSS_IMPL_COUNT = 8
} tsl_loss_impl_t;

/* Bytes per logit the model's head figure already counts as kept (model.c
 * add_head: the fp32 logits kept for the loss). */
#define TSL_LOSS_MODEL_KEPT_BYTES 4.0

/* "exec", "torch", "megatron", "te", "torch-compile", "fused-xentropy", "composer",
 * "megatron-fused"; NULL out of range. */
const char *tsl_loss_impl_name(uint32_t impl);
/* The implementation of a name above; -1 for none. */
int tsl_loss_impl_parse(const char *name);
/* The names above as a refusal lists them. */
#define TSL_LOSS_IMPL_NAMES                                                                        \
    "exec, torch, megatron, te, torch-compile, fused-xentropy, composer or megatron-fused"
/* 0 when impl is an implementation that can price the plan, else -1 with err
 * naming the field loss_impl: under autocast the script's loss is torch's (exec,
 * the default, stands for it; the others are refused). */
int tsl_loss_impl_ok(uint32_t impl, bool autocast, tsl_err_t *err);

/* Bytes per logit, as above (an impl out of range: exec's), for a head whose
 * vocabulary is split over tp TP ranks (0 or 1: not split); only torch's
 * transients depend on it (loss_parallel's decomposition above). */
double tsl_loss_kept_bytes(uint32_t impl);
/* Whether what impl keeps is the bf16 logits themselves (torch-compile: the
 * compiled graph's saved input; fused-xentropy's and composer's saved input), which a pipelined stage's output_chunks holds
 * anyway (cost.c pp_logits_held_bytes): not a second copy. */
bool tsl_loss_keeps_logits(uint32_t impl);
/* Whether impl is torchtitan's, whose pipelined runs hold every micro-batch's
 * logits in torch.distributed.pipelining's output_chunks (torch, torch-compile). */
bool tsl_loss_pp_holds_logits(uint32_t impl);
double tsl_loss_fwd_bytes(uint32_t impl, uint32_t tp);
double tsl_loss_bwd_bytes(uint32_t impl, uint32_t tp);

/* The loss's time, above: the HBM bytes per logit its kernels move in the forward
 * (bwd false) or the backward, and how many kernels, for a head whose vocabulary
 * is split over tp ranks (torch's loss_parallel under tp > 1; an impl out of
 * range: exec's). */
double tsl_loss_traffic_bytes(uint32_t impl, uint32_t tp, bool bwd);
uint32_t tsl_loss_kernels(uint32_t impl, uint32_t tp, bool bwd);

#endif

/*
 * roofline.h — time of one layer's forward on one device when no measured
 * profile exists: a roofline per GEMM plus the memory-bound elementwise work
 * (docs/cost-model.md, "Compute — a roofline per GEMM").
 *
 *   gemm(m, n, k) × b   max(2·m·n·k·b / (F·u(m, n, k, b)), 2·(m·k + k·n + m·n)·b / W) + L
 *   elementwise bytes   bytes / W + L per kernel
 *
 * F = the device's large-GEMM tensor-core rate (peak × e_max, FLOP/s), u the
 * shape's fraction of it (occupancy × depth: gemm_eff.h; 1 with a flat shape),
 * W = a sustained fraction of its datasheet memory bandwidth (bytes/s),
 * L = a per-kernel floor (launch, ramp-up and tail of a kernel: seconds). Inputs
 * and outputs are fp16/bf16 (2 bytes). A thin TP shard or a small micro-batch
 * makes a GEMM memory-bound (weights re-read per micro-batch) and pays L per
 * kernel, so splitting a batch into many micro-batches costs what it costs.
 *
 * Backward (tsl_roofline_layer_bwd_s): each forward GEMM (m, n, k) becomes its
 * two gradient GEMMs, dX (m, k, n) and dW (k, n, m), priced by the same curve; a
 * fused attention core runs TSL_ROOFLINE_FLASH_BWD_FLOPS × its forward FLOPs over
 * twice its bytes; elementwise kernels move TSL_ROOFLINE_BWD_MEM_RATIO × their
 * forward bytes. Without a bandwidth (W = 0) the backward is 2 × the forward.
 *
 * Measured profiles (planner/profile.*) replace this where they exist; cost.c
 * calls it in one place (layer_compute_f in cost.c).
 *
 * Causal self-attention (tsl_layer_t.causal): the fused core visits
 * tsl_attn_keys() keys per query ((s + 1)/2 without a window; a chunked layer,
 * attn_chunked, tsl_attn_chunk_keys(): about (w + 1)/2 for chunks of w), the
 * FLOP-only fallback drops the same FLOPs; the unfused core computes and masks all of
 * them — all s keys under a sliding window too (the FLOP-only fallback adds those
 * masked FLOPs). The layer's counted FLOPs (fwd_flops) stay s·w.
 *
 * Context parallelism as a ring (dev.cp_ring = c > 1: Megatron/TransformerEngine's
 * p2p, torch's context_parallel): a rank holds `samples`·c pieces of 2L = s/c
 * tokens (chunks i and 2c−1−i, L = s/2c) and runs, per pass, one causal kernel
 * over its own 2L × 2L block (the diagonal, (2L + 1)/2 keys per query) and c − 1
 * unmasked kernels of 2L queries × L keys (the blocks it sees whole) at the
 * unmasked rate: the same FLOPs as one causal kernel over s keys, the causal
 * rate only on the diagonal (docs/cost-model.md "Context parallelism"). With
 * dev.cp_merge (torch's _templated_ring_attention), eager fp32 kernels around
 * them, counted per element of O and K/V on the rank (K/V repeated to every head,
 * as torchtitan's Llama hands them to SDPA), the slowest rank (every step full):
 *   forward  O: 6 (first output to fp32) + 38 per later step (cast 6, out − o 12,
 *            σ(Δlse)·(…) 8, out − … 12) + 6 (back to bf16); K/V: 4 (made
 *            contiguous) + 4 per step but the last (the torch.cat to pass them on)
 *   backward dQ: 4 (zeros) + 10 per step (fp32 += bf16) + 6 (to bf16); K/V and
 *            dK/dV: 4 + 4 per step but the last, as forward, + 4 (zeros) + 10 +
 *            13 per later step (the chunk-0 update and its cat) + 8 per step (the
 *            cat of dK, dV to pass on) + 6 (to bf16): 7 + 25·c.
 * That is eager (dev.eager). Compiled (torchtitan compiles each block with
 * fullgraph=True, so the ring's Python is traced and Inductor fuses the pointwise
 * work between the SDPA calls and collectives): forward O 10 per later step (one
 * kernel: the fp32 running output and the bf16 step output read, fp32 written), K/V
 * 4 (the one torch.cat the gather uses; the later ones are dead); backward dQ 10
 * per step, dK/dV 10 + 10 per step (each step's update and cat one kernel: read 4 +
 * 2, write 4; the casts 6 + 4).
 *
 * With dev.cp_te (Megatron-core's p2p ring, TransformerEngine's AttnFuncWithCPAndKVP2P,
 * transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py at
 * d0067d0da; the same kernels in attention.py AttnFuncWithCP at da30634a6 and
 * 7d576ed25), the kernels around the c attention kernels, counted on the slowest
 * rank (the last: every step's block whole) per element of O (its a/t heads), of K
 * or of V (their kv/t heads) and of the softmax LSE (fp32, one per query and head),
 * the activation's 2 bytes (× elem_scale); the corrections are TE's jit_fuser
 * functions, torch.compile'd (transformer_engine/pytorch/jit.py): one kernel each:
 *   forward  K/V: 8 (the torch.cat into the ring's first send buffer);
 *            O: 4 (the first step's output, scaled: read, write) + 6 per later step
 *            (flash_attn_fwd_out_correction: out += out_step · exp(Δlse), read both,
 *            write out; all after the ring); LSE: 8 (the clone) + 12 per later step
 *            (flash_attn_fwd_softmax_lse_correction: read both, write one);
 *            2c + 1 kernels
 *   backward K/V: 8 (the copy into the ring's first send buffer) + 2 × (4 + 6 per
 *            later step) (dk, dv: copy_, then add_ of each step's, bf16); dQ: 4 + 6
 *            per later step (copy_, add_); LSE: 4 (the second half made contiguous);
 *            3c + 2 kernels.
 * The older TEs' extras (the sbhd ↔ bshd transposes, the K/V half copies, the dK/dV
 * torch.cat per step at da30634a6) are left out: the term is what every pin runs.
 *
 * Multi-head latent attention (kv_lora_rank > 0; docs/cost-model.md "Multi-head
 * latent attention"): with T = tokens, a heads, n/r/v the per-head widths, q/c the
 * latents: [q ? gemm(T, q, h) + gemm(T, a(n+r)/t, q) : gemm(T, a(n+r)/t, h)] +
 * gemm(T, c + r, h) (down projections replicated over TP) + gemm(T, a(n+v)/t, c)
 * + the core (a flash kernel of d' = a(n+r+v)/2: its FLOPs 2·s·w·a(n+r+v)) +
 * gemm(T, h, a·v/t) + the latents' RMSNorms (4 bytes per element) + the block's.
 *
 * Mixture of experts (experts > 0; docs/cost-model.md "Mixture of experts"):
 * each TP rank routes its T/t tokens (Megatron runs MoE under TP only with
 * sequence parallelism); with R = k·T/t routed copies, q = moe_moved, rows per
 * local expert m = etp·ep·R/E × moe_busy (the expert-TP group's gathered rows),
 * E/ep local experts, each f/etp wide:
 *   router gemm(T/t, E, h) + softmax/top-k (2 kernels, 8·T/t·E bytes)
 *   + permute and unpermute (2 kernels, 8·q·R·h bytes)
 *   + grouped gemm(m, g·f/etp, h) × E/ep + activation
 *     + grouped gemm(m, h, f/etp) × E/ep
 *     (one kernel each: the shape curve of one expert's GEMM, b = E/ep)
 *   + shared experts as one dense FFN of width S·f_s split by t
 *   + the block's elementwise work.
 * The all-to-alls and expert-TP gathers are communication (cost.c).
 *
 * Mamba-2 layers (TSL_LAYER_MAMBA; mamba.h, docs/cost-model.md "Mamba-2 layers"):
 * lin(T, w_in/t, h) + the SSD scan's batched GEMMs (Q × Q × N per chunk and local
 * group; N × P × Q, Q × P × Q, Q × P × N per chunk and local head) + its chunk
 * states (12 bytes per element forward, 28 backward), dt cumsum (10 per head and
 * token) and conv (4 per
 * element of x, B, C) + the grouped norm (4 per element of d_i/t) + lin(T, h, d_i/t)
 * + the block's elementwise work (+ two layout copies when a micro-batch holds more
 * than one sample); the backward adds the scan's recomputed forward kernels.
 *
 * Pure: no allocation, no I/O. W = 0 means "bandwidth unknown": every function
 * then returns the plain FLOP count over F with no floor (the pre-roofline model).
 */
#ifndef TSL_ROOFLINE_H
#define TSL_ROOFLINE_H

#include <stdbool.h>
#include <stdint.h>

#include "fp8_impl.h"
#include "gemm_eff.h"
#include "model.h"

#define TSL_ROOFLINE_MEM_EFF  0.80 /* sustained / datasheet bandwidth (STREAM-like copy) */
#define TSL_ROOFLINE_LAUNCH_S 4e-6 /* per-kernel floor, seconds (assumed; see docs) */
/* FlashAttention-2's backward/forward FLOPs: the backward recomputes QKᵀ and runs
 * dV, dP, dQ, dK (Dao 2023; flash-attention's benchmark_flash_attention.py) */
#define TSL_ROOFLINE_FLASH_BWD_FLOPS 2.5
/* The unfused core's score kernels outside autocast (Megatron's fused
 * scale-mask-softmax and the attention dropout: 4 + 5 bytes a score forward) take
 * this many times what their bytes take at W (cost model 128). Korthikanti et al.
 * 2022, Table 4 (one 22B layer, h 6144, 64 heads of 96, s 2048, micro-batch 4,
 * TP 8, A100 80 GB): selective recomputation, which repeats the core's forward
 * alone, adds 13.2 − 11.9 = 1.3 ms to the backward (13.1 − 11.8 with SP). Priced
 * at W the core is 1.150 ms, 0.749 of it the score kernels (1.21 GB): 1.3 ms
 * leaves them 0.898 ms, 1.20 × (2/3 of the datasheet bandwidth where W is 0.8 of
 * it). The table's 0.1 ms rounding bounds it to 1.07–1.33. Assumed: the GEMMs run
 * as priced (the H100 profile's batched pv/qkᵀ move their bytes at 0.69–0.84 of
 * the datasheet), the backward's score kernels at the same rate, other GPUs alike
 * (docs/cost-model.md "The score kernels' rate"). */
#define TSL_ROOFLINE_SCORE_KERNEL_SLOWDOWN 1.20
/* backward/forward bytes of an elementwise kernel: saved input + incoming
 * gradient read, outgoing gradient written, against the forward's read + write */
#define TSL_ROOFLINE_BWD_MEM_RATIO 1.5
/* PyTorch's own softmax backward (_softmax_backward_data on CUDA, a script's
 * torch.softmax rather than a stack's fused softmax kernel) is two kernels:
 * softmax_backward_cuda_out computes `Tensor tmp = grad * output` and only then
 * runs the softmax backward kernel on tmp and the output (aten/src/ATen/native/
 * cuda/SoftMax.cu, from PyTorch 1.x through the 2025 tree that added
 * cunn_SoftMaxBackwardSmem, pytorch/pytorch PR #145866, whose description names
 * "an elementwise kernel that runs before this"). The multiply reads the
 * gradient and the output and writes tmp: elements per score, of the softmax's
 * dtype, beside the softmax kernel's own three. */
#define TSL_ROOFLINE_SOFTMAX_BWD_MUL_ELEMS 3.0
/*
 * Megatron-LM v1.1.5's block with its fusion flags off, under PyTorch 1.7
 * (dev.unfused_elementwise; docs/cost-model.md "Megatron-LM's unfused kernels"). AMP's
 * fork (DachengLi1/AMP 72eeea4, DeepSpeedExamples/Megatron-LM-v1.1.5-3D_parallelism)
 * launches ds_pretrain_gpt2_pipe.sh without --bias-gelu-fusion, --bias-dropout-fusion,
 * --scaled-masked-softmax-fusion or --scaled-upper-triang-masked-softmax-fusion
 * (megatron/arguments.py: store_true, off by default), so the kernels the fused paths
 * fold away run as their own, each reading and writing 2-byte elements (4 B each):
 *   - the QKV bias: ColumnParallelLinear calls F.linear(input, weight, bias) on a 3-D
 *     [s, b, h] input, which PyTorch 1.7 runs as matmul then `output += bias`
 *     (torch/nn/functional.py: addmm only for 2-D input): 4 B per QKV element;
 *   - the FFN-in bias: ParallelMLP's skip_bias_add output goes through
 *     F.gelu(intermediate + bias): the add, 4 B per FFN element, before the GeLU;
 *   - the two row-parallel biases: bias_dropout_add unfused, dropout(x + bias) then
 *     residual + out: the add, 4 B per hidden element, before the dropout and the
 *     residual add the block's elementwise work already prices (twice a block);
 *   - the mask: FusedScaleMaskSoftmax without fusion runs gpt2_attention_mask_func,
 *     scores.masked_fill_(mask, -10000.0) in place, then torch.nn.Softmax: 4 B per
 *     score forward, and its backward grad.masked_fill(mask, 0): 4 B per score (the
 *     1 MB bool mask, broadcast over b and the heads, stays in L2); both at the score
 *     kernels' rate (TSL_ROOFLINE_SCORE_KERNEL_SLOWDOWN), as the softmax's;
 *   - the context: context_layer.permute(2, 0, 1, 3).contiguous(), a copy of the
 *     core's output forward (4 B per element of d/t) and of its gradient backward.
 * Each is one kernel and one host op. The biases' gradients are the reductions
 * bias_grad_s prices already; an add's backward passes its gradient through.
 */
#define TSL_ROOFLINE_UNFUSED_ADD_BYTES  4.0 /* a bias added apart, per output element */
#define TSL_ROOFLINE_UNFUSED_MASK_BYTES 4.0 /* masked_fill_ per score, each pass */
#define TSL_ROOFLINE_UNFUSED_COPY_BYTES 4.0 /* the context's permute copy, each pass */
/*
 * TransGAN's block as AMP's fork writes it (tsl_layer_t.transgan_eager; DachengLi1/AMP
 * 72eeea4, DeepSpeed/DeepSpeedExamples/Megatron-LM-v1.1.5-3D_parallelism/megatron/
 * model/trans_gan_gen.py: ParallelTransformerBlock, ParallelTransGanAttention,
 * ParallelTransGANMlp, PixelNorm, gelu), eager PyTorch 1.7 in fp16, against the
 * roofline's block (one norm kernel of 4 B per element, one activation kernel of
 * 4 B per FFN element, biases in the GEMMs' epilogues, scores only softmaxed).
 * Each ATen kernel is one host op, as docs/cost-model.md "Eager modules" counts
 * torchtitan's; autograd's kernels from tools/autograd/derivatives.yaml. Bytes
 * per element; "per row" work (one value per token) is left out.
 *   per element of h, forward: the two PixelNorms, input * rsqrt(mean(input ** 2)
 *       + 1e-8): pow (4), mean (2), + eps and rsqrt per row, the product (4): 10 B
 *       and 5 kernels each where the roofline has 4 B and 1 (+6, +4 twice); the
 *       noise, (x + randn(b, s, 1) * strength).to(float16): randn and the product
 *       per row, the fp16 + fp32 add (read 2, write 4) and the cast (read 4,
 *       write 2): +12 B, 4 kernels. 24 B, 12 kernels
 *   per element of h, backward: each PixelNorm's autograd, the product's two
 *       gradients and the row sum of one (4 + 6 + 2), rsqrt's three per row,
 *       mean's expand and division (2), pow's self.pow(1), the scale and the
 *       product (4 + 4 + 6), the two gradients of the input summed (6): 34 B and
 *       11 kernels against the roofline's 6 B and 1 (+28, +10 twice); the noise's,
 *       the cast's gradient (6), the add's gradient cast to the input's fp16 (6)
 *       and summed to (b, s, 1) (4), the strength's two per row: +16 B, 5 kernels.
 *       72 B, 25 kernels
 *   per element of the QKV output, forward: F.linear on a 3-d input is a matmul
 *       and `output += bias` (read 2, write 2): 4 B, 1 kernel. The other three
 *       linears return their bias unadded (skip_bias_add=True, never used)
 *   per element of the FFN width: gelu(x) = x * 0.5 * (1 + erf(x / sqrt(2))), five
 *       kernels of 4 B but the last product's 6: 22 B against the roofline's 4
 *       (+18 B, +4 kernels); backward the product's two gradients (6 + 6), erf's
 *       2/sqrt(pi) * exp(-b.pow(2)) * grad (4 + 4 + 4 + 4 + 6), the division's and
 *       the scale's (4 + 4), x's two gradients summed (6): 48 B, 10 kernels
 *       against 6 B and 1 (+42 B, +9 kernels)
 *   per score (unfused), forward: attn = (q @ kT) * scale and attn +
 *       relative_position_bias.unsqueeze(0), each read 2 + write 2 beside the
 *       softmax: +8 B, 2 kernels; backward the scale's gradient (4) and the
 *       bias's, a reduction over the windows and the batch (read 2; the add passes
 *       the gradient on as is): +6 B, 2 kernels, and attn.softmax's backward
 *       multiply in fp16 (TSL_ROOFLINE_SOFTMAX_BWD_MUL_ELEMS × 2 B: +6 B, a kernel;
 *       PyTorch 1.7's SoftMax.cu has it too). The core stays one host op (the
 *       roofline's rule for an unfused core), as do matmul's layout copies.
 * The intermediates' memory is not priced (those of the norms and the GELU are
 * per element of h and f, not of the scores).
 */
#define TSL_ROOFLINE_TRANSGAN_H_FWD_BYTES     24.0
#define TSL_ROOFLINE_TRANSGAN_H_FWD_KERNELS   12u
#define TSL_ROOFLINE_TRANSGAN_H_BWD_BYTES     72.0
#define TSL_ROOFLINE_TRANSGAN_H_BWD_KERNELS   25u
#define TSL_ROOFLINE_TRANSGAN_QKV_BIAS_BYTES  4.0
#define TSL_ROOFLINE_TRANSGAN_F_FWD_BYTES     18.0
#define TSL_ROOFLINE_TRANSGAN_F_FWD_KERNELS   4u
#define TSL_ROOFLINE_TRANSGAN_F_BWD_BYTES     42.0
#define TSL_ROOFLINE_TRANSGAN_F_BWD_KERNELS   9u
#define TSL_ROOFLINE_TRANSGAN_SCORE_FWD_BYTES 8.0
#define TSL_ROOFLINE_TRANSGAN_SCORE_BWD_BYTES 6.0
#define TSL_ROOFLINE_TRANSGAN_SCORE_KERNELS   2u
/*
 * transformers' GPT2Block as written (tsl_layer_t.hf_gpt2_eager; transformers 4.24.0,
 * the version Dao-AILab/flash-attention's training/Dockerfile pinned at 4a6eaa9f,
 * models/gpt2/modeling_gpt2.py GPT2Attention._attn, GPT2MLP, and activations.py
 * NewGELUActivation), run eagerly by a script under torch.autocast (PyTorch 1.13:
 * nvcr.io/nvidia/pytorch:22.11), against the roofline's autocast block (above: one
 * activation kernel of 4 B per FFN element, 6 B backward; the unfused core's scale,
 * fp32 softmax by casts, masked_fill and script-built mask). Everything else the
 * block runs is what the autocast figures already price: Conv1D is torch.addmm(bias,
 * x, W), which ATen runs as one cuBLASLt GEMM with the bias in its epilogue (Blas.cpp
 * addmm_out_cuda_impl's Lt path, CUDA >= 11.4, pytorch/pytorch#74021: beta 1, a
 * contiguous 1-d bias, contiguous operands of fewer than 65,535 rows — every row's
 * micro-batch here has at most 16,384 tokens; the bound as the later Blas.cpp states
 * it, assumed for 1.13) and whose backward sums the bias gradient (the roofline's
 * bias_grad); the LayerNorms on the fp32
 * residual stream, their casts and the fp16 + fp32 residual adds; _split_heads'
 * view + permute (matmul's copies, TSL_ROOFLINE_EAGER_COPY_BYTES) and _merge_heads'
 * .contiguous() (the context's copy); the dropouts (GPT2Config's 0.1 each). Bytes
 * per element, each kernel one host op as TransGAN's (docs/cost-model.md "HF
 * GPT-2's block"); autograd's kernels from tools/autograd/derivatives.yaml (pow_backward,
 * tanh_backward, mul's and div's self gradients) and the engine's casts of a
 * gradient to its input's dtype (engine.cpp validate_outputs).
 *   per element of the FFN width, forward: gelu_new(x) = 0.5 * x * (1 + tanh(√(2/π)
 *       * (x + 0.044715 * x³))) on c_fc's 16-bit output: autocast runs pow in fp32
 *       (its fp32 list), so x is cast (6) and cubed (8) in fp32, × 0.044715 (8), x +
 *       it in fp32 (read 2 + 4, write 4: 10), × √(2/π) (8), tanh (8), 1 + (8), 0.5 *
 *       x in 16 bits (4), the fp16 × fp32 product (10), and c_proj's addmm casts that
 *       fp32 output back to 16 bits (6): 76 B, 10 kernels against the roofline's 4
 *       and 1: +72 B, +9 kernels
 *   per element of the FFN width, backward: the cast's gradient to fp32 (6); the
 *       product's two: g·b in fp32 (12) cast to 0.5x's 16 bits (6) and g·a (10);
 *       0.5 *'s (4); tanh_backward (12); √(2/π)'s (8); the sum's toward x, cast to
 *       16 bits (6; toward the cube it passes on); 0.044715's (8); pow_backward,
 *       grad * (3 * x.pow(2)) (8 + 8 + 12); the cast's back to 16 bits (6); x's three
 *       gradients summed (6 + 6): 118 B, 15 kernels against 6 and 1: +112 B, +14
 *   per score (unfused, causal), against the autocast core: the scale divides by a
 *       0-d tensor (the core's scale); with layer_scale (scale_attn_by_inverse_
 *       layer_idx, which flash-attention's model/gpt2-hf.yaml sets) a second
 *       division by float(layer_idx + 1): +4 B, a kernel, each way (its gradient
 *       grad / (layer_idx + 1)); torch.where(causal_mask, w, mask_value) reads and
 *       writes once (4 B, 1 kernel) where masked_fill's clone and fill move 8 in 2,
 *       and its backward where(condition, grad, 0) likewise (assumed the scalar form
 *       of the 1.13-era derivatives.yaml; a zeros_like form would add a 2-byte fill);
 *       under fp16 autocast softmax(dtype=float) on a Half input is ATen's one
 *       half-to-float kernel (SoftMax.cpp: read 2, write 4) where bf16 casts first
 *       (6) and softmaxes in fp32 (8), and its backward writes the fp16 gradient
 *       itself (half_to_float: 10 where bf16 writes 12 and casts, 6): −8 B and a
 *       kernel each way (TSL_ROOFLINE_HALF_SOFTMAX_SAVED_BYTES)
 *   the mask, forward, per s × keys element of one micro-batch: the uint8 causal
 *       buffer's slice `.to(torch.bool)` (read 1, write 1): 2 B, 1 kernel where the
 *       script's ones + triu take 3 B and 2
 *   q, k, v's gradients, backward: each one's view backward a reshape copy (3
 *       kernels) then split's backward a cat (1): the 8 B per QKV element the
 *       eager layout prices, in 4 kernels where a stacked unbind takes 2: +2 kernels
 * Not priced: the two `torch.tensor(...)` constants _attn builds per layer on the
 * host and copies to the GPU, each a cudaStreamSynchronize (transformers#20061,
 * merged after 4.24, measured the iteration 0.5% faster without them); the score
 * kernels' host ops (the unfused core stays one host unit).
 * Memory: the chain keeps x in fp32 (pow's input, 4), tanh's output (4), 0.5x (2)
 * and 1 + tanh (4) for its backward, where a GELU keeps its 16-bit input (2): +12 B
 * per FFN element (TSL_ROOFLINE_HF_GPT2_F_KEPT_BYTES; tsl_roofline_hf_gpt2_act).
 */
#define TSL_ROOFLINE_HF_GPT2_F_FWD_BYTES       72.0
#define TSL_ROOFLINE_HF_GPT2_F_FWD_KERNELS     9u
#define TSL_ROOFLINE_HF_GPT2_F_BWD_BYTES       112.0
#define TSL_ROOFLINE_HF_GPT2_F_BWD_KERNELS     14u
#define TSL_ROOFLINE_HF_GPT2_LAYER_SCALE_BYTES 4.0
#define TSL_ROOFLINE_HF_GPT2_WHERE_BYTES       4.0
#define TSL_ROOFLINE_HF_GPT2_MASK_BUILD_BYTES  2.0
#define TSL_ROOFLINE_HF_GPT2_QKV_GRAD_KERNELS  2u
#define TSL_ROOFLINE_HALF_SOFTMAX_SAVED_BYTES  8.0
#define TSL_ROOFLINE_HF_GPT2_F_KEPT_BYTES      12.0
/* ATen's softmax past 1024 keys, in the HF GPT-2 block's PyTorch 1.13 (cost model 144;
 * docs/cost-model.md "HF GPT-2's block"). aten/src/ATen/native/cuda/SoftMax.cu
 * host_softmax runs the persistent warp softmax (one pass: read the row once, write
 * once, as the autocast figures above price) only while dim_size <= 1024 and
 * dim_size * sizeof(input) <= 4096; a longer row goes to cunn_SoftMaxForward, one
 * block per row, which reads the input three times — ilpReduce of MaxFloat, then of
 * SumExpFloat(max), then WriteFpropResults reading it again to write the output —
 * with a block-wide reduction between the passes: +2 reads of the softmax's input
 * a score, 8 B where it is fp32 (bf16: the cast's fp32 copy) and 4 B for fp16's
 * half-to-float kernel, which reads the 16-bit scores. Its backward,
 * cunn_SoftMaxBackward, sums gradOutput (the multiply's tmp, fp32) in one pass and
 * reads it again beside the output to write gradInput: +4 B (pytorch/pytorch#145866,
 * 2025: "Before this PR we were reading gradOutput twice"). Assumed: the re-reads
 * move at W as the first read does (an upper bound where L2 serves them; the
 * reductions between the passes keep each block's passes in series; the drop past
 * 1024 columns pytorch/pytorch#144645 measured on an RTX 3080). The same kernel
 * count. Later PyTorch caches a row that fits in shared memory (cunn_SoftMaxForwardSmem,
 * pytorch/pytorch#122970, 2024): the script-style autocast block, which stands for
 * a current PyTorch, keeps one read; priced for the HF block only. */
#define TSL_ROOFLINE_SOFTMAX_WARP_MAX_KEYS        1024.0
#define TSL_ROOFLINE_BLOCK_SOFTMAX_FWD_BYTES      8.0
#define TSL_ROOFLINE_BLOCK_SOFTMAX_HALF_FWD_BYTES 4.0
#define TSL_ROOFLINE_BLOCK_SOFTMAX_BWD_BYTES      4.0
/* The LM loss's bytes per logit and kernels, forward and backward, are its
 * implementation's (d->loss_impl; loss_impl.h "The loss's time": exec 10 + 6,
 * torch 22 + 26, 38 + 38 under loss_parallel, megatron 38 + 14, te 6 + 4,
 * torch-compile 4 + 4, fused-xentropy 4 + 4). */
/* gpt-oss's clamped gated activation under Megatron-LM (fused_bias_geglu.py
 * weighted_bias_quick_geglu_impl, Megatron-LM 44151194): before the fused
 * activation kernel, clamp(max) on the gate half and clamp(min, max) on the linear
 * half (read and write one half each), then torch.cat of the two (read and write
 * the whole): 8 bytes per element of FFN-in's output, 3 kernels. Backward, as
 * autograd runs it (PyTorch torch/csrc/autograd/FunctionsManual.cpp clamp_backward,
 * split_backward; cost model 148): the cat's gradient is two narrow views (no
 * kernel); the gate half's clamp(max) gradient is `where(self <= max, grad, 0)` —
 * the comparison reads the saved half and writes a bool mask (3 bytes), the where
 * reads it and the gradient and writes one (5); the linear half's clamp(min, max)
 * gradient `where((self >= min).logical_and_(self <= max), grad, 0)` — two
 * comparisons (3 each), the and (3), the where (5): 14; each builds its 0-d zero
 * with at::scalar_tensor (a one-element fill kernel); the chunk's gradient
 * concatenates the halves (read and write the whole: 4 per element). Per element of
 * FFN-in's output (8 + 14) / 2 + 4 = 15 bytes, in 2 + 4 + 1 + 2 = 9 kernels. Host:
 * forward the chunk, two clamps and the cat about one op (H's three framework ops),
 * the offset's torch.tensor another (below); backward the nine ATen calls of the
 * three autograd nodes, three. */
#define TSL_ROOFLINE_GLU_CLAMP_FWD_BYTES   8.0
#define TSL_ROOFLINE_GLU_CLAMP_BWD_BYTES   15.0
#define TSL_ROOFLINE_GLU_CLAMP_FWD_KERNELS 3u
#define TSL_ROOFLINE_GLU_CLAMP_BWD_KERNELS 9u
#define TSL_ROOFLINE_GLU_CLAMP_FWD_OPS     2.0
#define TSL_ROOFLINE_GLU_CLAMP_BWD_OPS     3.0
/* The same function then builds its linear offset (gpt-oss's y + 1) as
 * torch.tensor(linear_offset, dtype, device=input.device) on every call (Megatron-LM
 * 44151194 fused_bias_geglu.py:434): a CPU scalar copied to the GPU with
 * non_blocking false, which PyTorch runs as cudaMemcpyAsync and then
 * cudaStreamSynchronize (pytorch/pytorch#120996: torch.tensor(3.14, device=dev)
 * "called a synchronizing CUDA operation"; #190217, 2026-07, open, reproduced on
 * torch 2.11: "torch.tensor(3.14., device='cuda') should avoid h2d sync"). The host
 * waits for the compute stream to drain, so nothing is queued behind it: the GPU
 * idles while the host issues the next kernel (the weighted quick-GeGLU's autograd
 * Function and torch.compile'd kernel), priced as one host op H (cost model 148;
 * none without a host floor, host_op_s 0). It runs in the forward and again in the
 * moe_act recompute. Assumed: the host issues the next kernel within one op. */
#define TSL_ROOFLINE_GLU_OFFSET_SYNCS 1.0
/* The routing weights of non-gated routed experts under Megatron-LM (experts.py
 * TEGroupedMLP.forward's bias_act_func, Megatron-LM 44151194): only SwiGLU and
 * quick-GeGLU take them inside a fused kernel (bias_activation_fusion; the fused
 * weighted squared ReLU is opt-in, use_fused_weighted_squared_relu False by
 * default), so any other activation (Nemotron-H's squared ReLU) is followed by
 * `act * probs` and `.to(act.dtype)` in eager PyTorch, per element of FFN-out's
 * input. With fp32 routing weights (HybridEP and DeepEP take only fp32 probs,
 * token_dispatcher.py) the product is fp32: forward read 2, write 4, then the cast
 * read 4, write 2 — 12 bytes, 2 kernels. Backward: the cast's gradient (read 2,
 * write 4), the product's gradient toward the activation (read 4, write 4) cast by
 * autograd to its bf16 (read 4, write 2), toward the weights (read 4 + 2, write 4)
 * summed over the row (read 4) — 34 bytes, 5 kernels. With bf16 weights the
 * product is bf16 and the cast a no-op: forward 4 bytes, 1 kernel; backward the
 * two products (4, 6) and the sum (2), 12 bytes, 3 kernels. The activation
 * itself (torch.compile'd squared_relu: jit_fuser) is the one activation kernel.
 * Under use_fused_weighted_squared_relu (dev.moe_fused_srelu; cost model 196) none of
 * these runs: bias_act_func calls weighted_squared_relu_impl (experts.py l.674-681 at
 * 44151194; fusions/fused_weighted_squared_relu.py), whose forward
 * relu(x)² · w → bf16 and backward (2·relu(x)·g·w, and the row sum of relu(x)²·g for
 * the weights) are each one torch.compile'd function: forward read 2, write 2 and
 * backward read 4, write 2 per element, the activation term's own bytes (4, and 4 ×
 * TSL_ROOFLINE_BWD_MEM_RATIO), the fp32 weights one per row. */
#define TSL_ROOFLINE_EXPERT_PROBS_FP32_FWD_BYTES 12.0
#define TSL_ROOFLINE_EXPERT_PROBS_FP32_BWD_BYTES 34.0
#define TSL_ROOFLINE_EXPERT_PROBS_BF16_FWD_BYTES 4.0
#define TSL_ROOFLINE_EXPERT_PROBS_BF16_BWD_BYTES 12.0
/* The experts' FFN-out bias under Megatron-LM (experts.py TEGroupedMLP._apply_bias,
 * Megatron-LM 44151194): TE's grouped linear returns it (skip_bias_add) and each
 * local expert's rows get t + b·p (the bias times the token's routing weight) in
 * eager PyTorch, then torch.cat: per element of the h-wide output, b·p written (2),
 * the add's read of both and write (6), the cat's read and write (4) — 12 bytes,
 * 2 kernels per local expert and the cat. Backward: per expert the product's two
 * gradients (g·p and g·b, each read and written, 4 + 4) and their reductions to b's
 * and p's shapes (read, 2 + 2), the split's gradient a cat (4) — 16 bytes, 4 kernels
 * per expert and the cat. FFN-in's bias rides in the GEMM epilogue and both biases'
 * gradients in TE's wgrad GEMM (bf16) or its bgrad-quantize kernel (FP8): free. */
#define TSL_ROOFLINE_EXPERT_BIAS_FWD_BYTES 12.0
#define TSL_ROOFLINE_EXPERT_BIAS_BWD_BYTES 16.0
/* Framework ops (TSL_ROOFLINE_FRAMEWORK_OPS' unit, a third of a host op) Transformer
 * Engine's GroupedLinear issues per local expert in one forward, beyond its one grouped
 * GEMM op (TransformerEngine release_v2.16 pytorch/module/grouped_linear.py
 * _GroupedLinear.forward): FP8 (any recipe) — quantize_weight for the expert's weight
 * (a Python call per expert), its split's quantize in tex.split_quantize (one kernel per
 * split for MXFP8, extensions/cast.cpp), its cuBLASLt GEMM in general_grouped_gemm's
 * multi-stream loop (common/gemm/cublaslt_gemm.cu, one call per expert): 3; bf16 — the
 * weight's cast_if_needed (a Python call) and the GEMM: 2. Counted in a MoE forward's
 * expert stretch (tsl_roofline_fwd_t.expert_ops; cost.c moe_sync_stretch) and, since
 * cost model 198, in the forward's host floor: one host thread issues them between two
 * syncs (docs/cost-model.md "The host between two syncs"). Not in the backward (its
 * per-expert count is not read; no x86 row's backward is host-bound with it). */
#define TSL_ROOFLINE_TE_EXPERT_FOPS_FP8  3.0
#define TSL_ROOFLINE_TE_EXPERT_FOPS_BF16 2.0
/* Megatron-LM's all-to-all token dispatcher (dev.moe_a2a; MoEAlltoAllTokenDispatcher
 * with moe_permute_fusion, token_dispatcher.py at 44151194; its kernels Transformer
 * Engine's, pytorch/permutation.py and triton/permutation.py at v2.16), beyond the
 * permute, unpermute and the two all-to-alls every dispatcher runs. Forward:
 *   the counts   routing_map.sum(0) over the T × E mask (read 1 byte per entry) and
 *                five sums and copies of E-long vectors (the splits, the counts per
 *                local expert): 6 kernels; four D2H copies of them on a side stream
 *                (host ops, off the compute stream)
 *   row-id map   TE's permute first builds the T × (2E + 1) int32 map in three Triton
 *                passes: the mask read and E columns written (1 + 4), read and
 *                written (8), the 2E + 1 columns read and written (16): 29 bytes per
 *                T × E entry
 *   the sync     the host waits on the D2H copies before the dispatch all-to-all
 *                (d2h_event.synchronize()), so nothing of its own is queued behind
 *                the permutation: the GPU idles max(0, H − the permutation's time)
 *                while the host dispatches the all-to-all (H = host_op_s; none
 *                without a host floor)
 *   second permutation  with more than one local expert, the dispatched rows sorted
 *                by local expert after the all-to-all and back before the combine
 *                (sort_chunks_by_idxs: make_chunk_sort_map, then sort_chunks_by_map,
 *                reading and writing each row's h bf16 elements): 4·h bytes per row
 *                each way, 4 kernels; backward each sort's gradient once more, 2
 *                kernels (its int32 maps and the routing weights, 4 bytes a row, not
 *                counted)
 *   host ops     each kernel above, each D2H copy, and each NCCL call (the counts'
 *                all-gather, the tokens' and the routing weights' all-to-alls, the
 *                combine's): forward 6 + 3 + 4 + 4 + 4, backward 2 + 3
 * The collectives' time is cost.c's (moe_terms). */
/* MCore v0.8's unfused token permutation (dev.moe_unfused; Megatron-LM e223b92072
 * moe_utils.py permute / unpermute, moe_gather / moe_scatter), beyond the fused
 * permute and unpermute every MoE layer is priced with (4 bytes per element of the
 * R × h routed rows each, forward; their backward 1.5 × that). Per element of R × h,
 * bf16, k = top-k (T = R / k tokens):
 *   forward   permute: argsort of the R expert ids and the `// k` of the order
 *             (R int64: no bytes counted), the gather (read 2, write 2, as fused);
 *             unpermute: torch.zeros of [R, h] (write 2), the scatter into it
 *             (read 2, write 2), `* probs` (read 2, write 2), `.sum(dim=1)` over the
 *             k copies (read 2, write 2/k): 16 + 2/k against the fused 8, 7 kernels
 *             against 2
 *   backward  the product's two gradients (toward the rows: read 2/k, the broadcast
 *             gradient, write 2; toward the weights: read 2/k and the saved rows 2,
 *             write 2, its sum over h read 2), the scatter's gather (read 2, write 2);
 *             the gather's scatter_add_ into zeros of [T, h] (write 2/k, read 2,
 *             write 2): 16 + 6/k against the fused 12, 6 kernels against 2
 * Extra: forward 8 + 2/k bytes and 5 kernels, backward 4 + 6/k bytes and 4 kernels,
 * one host op each. The sort's CUB passes count as one kernel (its R keys are a few
 * kB). MCore v0.8's dispatcher also synchronises the stream before the dispatch and
 * sums its counts (an all-gather of E counts): not counted (docs/cost-model.md). */
#define TSL_ROOFLINE_UNFUSED_PERMUTE_FWD_BYTES   8.0
#define TSL_ROOFLINE_UNFUSED_PERMUTE_FWD_PER_K   2.0
#define TSL_ROOFLINE_UNFUSED_PERMUTE_BWD_BYTES   4.0
#define TSL_ROOFLINE_UNFUSED_PERMUTE_BWD_PER_K   6.0
#define TSL_ROOFLINE_UNFUSED_PERMUTE_FWD_KERNELS 5u
#define TSL_ROOFLINE_UNFUSED_PERMUTE_BWD_KERNELS 4u
#define TSL_ROOFLINE_A2A_COUNT_KERNELS           6u
#define TSL_ROOFLINE_A2A_D2H_COPIES              4u
#define TSL_ROOFLINE_A2A_ROW_MAP_BYTES           29.0
#define TSL_ROOFLINE_A2A_SORT_BYTES              4.0
/* Host time per eager op of a PyTorch training step, seconds: measured on the
 * H100 (bench/results/torch_gpt_step-h100.json, 16 micro-batches of 1, SDPA),
 * the model as that step ran it (no dropout: 685 ops per micro-batch; autocast;
 * GPT-2's 50257 words unpadded): the H for which the optimizer step plus 16 ×
 * Σ max(GPU, ops · H) over the passes equals the measured step (the head stays
 * GPU-bound); GPT2-345M 60.0 µs, GPT2-1.3B 54.4 µs, their mean. One op is one
 * of the roofline's kernels (a GEMM, each gradient GEMM, an elementwise kernel,
 * a bias gradient, the attention core); the eager step runs two to three
 * framework ops (autocast casts, views, gradient-accumulation kernels) per
 * modelled kernel, all in this figure. */
#define TSL_ROOFLINE_HOST_OP_S 57.2e-6
/* Framework ops (Python, the dispatcher, the allocator, one launch or read each) per
 * op of TSL_ROOFLINE_HOST_OP_S: the eager step it was measured on runs two to three per
 * modelled kernel (above); 3, the upper count, keeps a framework op's share of H, H / 3
 * = 19.1 us, the smaller. Prices loops the roofline does not model kernel by kernel,
 * whose ops are counted as written (cost_host_sync.h). An assumption for any other host
 * and PyTorch: docs/cost-model.md "The step as the stack runs it". */
#define TSL_ROOFLINE_FRAMEWORK_OPS 3.0
/* Framework calls (TSL_ROOFLINE_FRAMEWORK_OPS' unit) TransformerEngine's p2p ring issues on its
 * slowest rank (the last) in one pass of c steps, the c attention calls among them: base +
 * per_step · c (bench/published/README.md, docs/cost-model.md "TE's ring on the host"). Counted
 * at release_v2.7 (the 25.09 container's TE) in attention/dot_product_attention/
 * context_parallel.py AttnFuncWithCPAndKVP2P, for a causal sbhd core in bf16 under fused
 * attention (Megatron-core's), each tensor view, slice, allocation, copy, in-place op, jit_fuser
 * correction, isend, irecv, request wait and extension call one (stream and event switches,
 * NVTX and ctx bookkeeping none). Forward 5 + 15·c: before the ring the q, k, v views and the
 * torch.cat of K and V unsqueezed (6); per step but the first two request waits (sm100 sends
 * unbatched: batch_p2p_comm only below sm100, l. 490) and an empty_like, isend and irecv for
 * every step but the last (5); the first step q and K/V views, K and V slices and
 * fused_attn_fwd (5), each later one Q's view, K/V's half, its contiguous copy, the slices and
 * fused_attn_fwd (6); per step the LSE's squeeze_ and its clone or correction (2) and
 * after the ring its output correction and view (2); then out's view and cast, q's view and
 * the save for backward (5). Backward 15 + 25·c (l. 1525–2704): before the ring the restore,
 * the LSE's unsqueeze_, dout's contiguous, dq's and the two send buffers' allocations, the
 * buffer's index and copy_, out's and dout's views (10); per step two waits at its top (but
 * the first) and two at its end, isend and irecv, the K/V buffer's index (7), q, out, dout
 * and K/V views, K/V's half and contiguous (not on the diagonal), K and V slices and
 * fused_attn_bwd (8; 7 on the diagonal), dq's view and copy_ or add_ (2), the dK/dV buffer's
 * index, combine_tensors' three (utils.py l. 178: a torch.Tensor, its to, set_), view and
 * movedim (6), dK/dV's slice and copy_ or add_ (2; 1 on the diagonal); the send buffers' four
 * indexings, the diagonal's view, dq's and dkv's views and the final split (the rest). */
#define TSL_ROOFLINE_TE_RING_FWD_FCALLS      5.0
#define TSL_ROOFLINE_TE_RING_FWD_FCALLS_STEP 15.0
#define TSL_ROOFLINE_TE_RING_BWD_FCALLS      15.0
#define TSL_ROOFLINE_TE_RING_BWD_FCALLS_STEP 25.0
/* Host ops (units of host_op_s) one replay of a CUDA-graphed module costs in its place
 * (dev.cuda_graphs; cuda_graph.h): Megatron-core's graphed callable is one
 * torch.autograd.Function call per pass (TE's make_graphed_callables, transformer_engine
 * pytorch/graph.py Graphed.forward / backward; the local impl's CudaGraphRunner, Megatron-LM
 * megatron/core/transformer/cuda_graphs.py), whose body copies the inputs that are not
 * already the graph's static buffers and calls one cudaGraphLaunch: taken as one eager
 * op's host time, as a module call with its launch (assumed: no published host time of a
 * graph replay beside TSL_ROOFLINE_HOST_OP_S's step). docs/cost-model.md "CUDA-graphed
 * modules". */
#define TSL_ROOFLINE_GRAPH_LAUNCH_OPS 1.0

/*
 * torch.autocast (dev.autocast; docs/cost-model.md "Autocast"): PyTorch eager
 * modules as written, run under torch.autocast(bfloat16) over fp32 parameters
 * (bench/torch_gpt_step.py, nanoGPT/HF-style training scripts). The GEMMs and a
 * fused attention core are bf16 as in every stack; what differs, from autocast's
 * op lists (aten/src/ATen/autocast_mode.h: layer_norm in the fp32 list, softmax
 * in fp32_set_opt_dtype, linear/matmul in the lower-precision list) and ATen's
 * kernels, per element:
 *   norm + residual, forward   the norm on the fp32 residual stream (read 4,
 *       write 4), its output cast to bf16 for the next linear (read 4, write 2),
 *       the residual add fp32 + bf16 -> fp32 (read 6, write 4): 24 B, 3 kernels
 *   norm + residual, backward  the residual gradient cast to bf16 for the
 *       branch (6), the branch's bf16 input gradient cast back to fp32 (6), the
 *       fp32 norm backward: dX (read dY and X, write dX: 12) and dγ/dβ (read dY
 *       and X: 8), the two gradients of the residual summed (12): 44 B, 5 kernels
 *   unfused core, forward      per score: the scale (4) as its own kernel,
 *       softmax(dtype=float) on bf16 = a cast to fp32 (6, SoftMax.cpp: only Half
 *       has a fused half-to-float path) and an fp32 softmax (8), the
 *       probabilities cast back to bf16 for PV (6): 24 B, 4 kernels; causal, the
 *       mask as masked_fill (nanoGPT, torch_gpt_step.py), which is a clone and
 *       an in-place fill (TensorAdvancedIndexing.cpp): + 8 B, 2 kernels
 *   unfused core, backward     cast (6), the fp32 softmax backward: ATen's
 *       softmax_backward_cuda_out multiplies first, `tmp = grad * output` (a
 *       kernel of its own, TSL_ROOFLINE_SOFTMAX_BWD_MUL_ELEMS fp32 elements:
 *       12), then the softmax kernel reads tmp and the output and writes the
 *       gradient (12), cast (6), scale (4): 28 + 12 B, 4 + 1 kernels; causal,
 *       the mask's (grad.masked_fill: + 8 B, 2 kernels)
 *   the causal mask itself, forward, per s × keys element of one micro-batch
 *       (not per score: one mask broadcast over the batch and the heads):
 *       bench/torch_gpt_step.py builds it in every block's forward,
 *       torch.ones(s, s, dtype=bool) (write 1) then .triu(1) (read 1, write 1):
 *       3 B, 2 kernels (nanoGPT keeps a buffer and compares it, `bias == 0`: one
 *       kernel of 5 B; the step this knob is checked against is priced)
 *   weights                    each linear's fp32 weight cast to bf16 every
 *       forward (6 B per parameter), its bf16 gradient cast to fp32 in the
 *       backward (6 B): TSL_ROOFLINE_AUTOCAST_CAST_BYTES
 * Dropout, where the model has it, keeps its 5 bytes each way. The host floor's
 * op count is unchanged: TSL_ROOFLINE_HOST_OP_S was measured on this very step
 * and lumps autocast's extra ops.
 */
#define TSL_ROOFLINE_AUTOCAST_NORM_FWD_BYTES     24.0
#define TSL_ROOFLINE_AUTOCAST_NORM_BWD_BYTES     44.0
#define TSL_ROOFLINE_AUTOCAST_SCORE_FWD_BYTES    24.0 /* + 8 with a causal mask */
#define TSL_ROOFLINE_AUTOCAST_SCORE_BWD_BYTES    28.0 /* + the multiply's 12; + 8 causal */
#define TSL_ROOFLINE_AUTOCAST_SCORE_KERNELS      4u   /* each way; + the multiply backward */
#define TSL_ROOFLINE_AUTOCAST_MASK_BYTES         8.0
#define TSL_ROOFLINE_AUTOCAST_MASK_BUILD_BYTES   3.0
#define TSL_ROOFLINE_AUTOCAST_MASK_BUILD_KERNELS 2u
#define TSL_ROOFLINE_AUTOCAST_CAST_BYTES         6.0
/* Eager PyTorch's layout copies around the attention core of a script's modules
 * as written (q, k, v = qkv.view(b, s, 3, a, hd).permute(2, 0, 3, 1, 4), as
 * nanoGPT and bench/torch_gpt_step.py), per element of the QKV projection's output
 * (T·(d + 2e)/t) or of the context (T·d/t), read + write, 2-byte elements:
 *   backward, fused or not   unbind's backward stacks the q, k, v gradients into
 *       one tensor (tools/autograd/derivatives.yaml: unbind_backward = stack: 4 B
 *       per QKV element), and view's backward reshapes that permuted stack to
 *       (b, s, 3h), which is not a view of it: a copy (TensorShape.cpp reshape:
 *       4 B); 2 kernels. SDPA takes the strided q, k, v and its output is already
 *       (b, s, a, hd) in memory: nothing in the forward (flash's last-dimension
 *       check alone).
 *   unfused, forward         torch.matmul folds 4-d operands to 3-d batches with
 *       reshape (LinearAlgebra.cpp _matmul_impl): the strided q, kᵀ and v are not
 *       views of a batch, so each is copied (4 B per QKV element, 3 kernels); the
 *       context's transpose(1, 2).reshape(b, s, h) copies again (4 B per context
 *       element, 1 kernel)
 *   unfused, backward        the context gradient, a transposed view, copied for
 *       the batched GEMMs (4 B per context element, 1 kernel)
 * The host op count is unchanged (TSL_ROOFLINE_HOST_OP_S lumps them). */
#define TSL_ROOFLINE_EAGER_QKV_GRAD_BYTES 8.0
#define TSL_ROOFLINE_EAGER_COPY_BYTES     4.0
/*
 * Eager modules (dev.eager; docs/cost-model.md "Eager modules"): the model's
 * pointwise work as torchtitan's Llama modules are written, each ATen op its own
 * kernel, as PyTorch runs them without torch.compile (pytorch/torchtitan
 * torchtitan/models/llama/model.py and models/norms.py at 9dec370). The default
 * prices what a compiler or a fused-kernel stack runs: one norm kernel (read 2,
 * write 2), one activation kernel, no RoPE kernel. Per element, bf16 activations
 * (FSDP's MixedPrecisionPolicy: bf16 parameters, no autocast):
 *   RMSNorm, forward   x.float() (6), pow(2) (8), mean(-1) (4), + eps and rsqrt
 *       (per row), x * rsqrt (8), type_as (6), * weight (4): 36 B, 8 kernels
 *   RMSNorm, backward  autograd of the same: * weight's two products and the
 *       weight's sum (6 + 4 + 2), the cast back to fp32 (6), x * rsqrt's two
 *       products and its row sum (8 + 12 + 4), rsqrt's (per row), mean's expand
 *       (4), pow's pow(1) copy, scale and product (8 + 8 + 12), the two
 *       gradients of x summed (12), the cast to bf16 (6): 92 B, 14 kernels
 *   RoPE by complex multiplication, per element of q and of k, each pass:
 *       .float() (6), the complex product (8), type_as (6); backward the same
 *       three in reverse: 20 B, 3 kernels per tensor
 *   GQA's repeat_kv (kv_heads < heads): K and V expanded to every head by a
 *       reshape that copies (read e, write d per token, each tensor); backward
 *       the sum back over the repeats (read d, write e): 2 kernels each pass
 *   SwiGLU, per element of the FFN's width: silu (4) and the product (6):
 *       10 B, 2 kernels; backward the product's two gradients (6 + 6) and
 *       silu's (6): 18 B, 3 kernels
 * The norms are priced so in every layer with an RMSNorm (rms_norm); RoPE and
 * repeat_kv on those layers' self-attention but latent attention (the Llama
 * family, whose torchtitan models all rotate q and k); SwiGLU on dense gated FFNs
 * (MoE experts keep one activation kernel). Under autocast its own figures stand
 * (a LayerNorm model's fused ATen norm). Each kernel is one host op (layer_s's
 * floor).
 */
#define TSL_ROOFLINE_EAGER_RMSNORM_FWD_BYTES   36.0
#define TSL_ROOFLINE_EAGER_RMSNORM_BWD_BYTES   92.0
#define TSL_ROOFLINE_EAGER_RMSNORM_FWD_KERNELS 8u
#define TSL_ROOFLINE_EAGER_RMSNORM_BWD_KERNELS 14u
#define TSL_ROOFLINE_EAGER_ROPE_BYTES          20.0
#define TSL_ROOFLINE_EAGER_SWIGLU_FWD_BYTES    10.0
#define TSL_ROOFLINE_EAGER_SWIGLU_BWD_BYTES    18.0

/*
 * YaRN RoPE as Megatron-LM runs it when the attention factor is not 1 (gpt-oss's
 * 1.3466; tsl_layer_t.yarn_eager_rope, cost model 126). Megatron-LM 44151194
 * rope_utils.py apply_rotary_pos_emb: with apply_rope_fusion set (Megatron-Bridge's
 * perf overrides set it) an mscale other than 1 is "not supported by TE's fused RoPE.
 * Using unfused implementation", and attention.py passes YaRN's concentration factor
 * as mscale on q and on k separately (split_qkv: fused_single_qkv_rope is off). The
 * unfused _apply_rotary_pos_emb_bshd over the whole head (rotary_percent 1), per bf16
 * element of q and of k:
 *   forward    t * cos (4), _rotate_half's neg of one half (2) and cat (4), * sin (4),
 *              the sum (6), the final cat with the empty pass-through (4): 24 B in 6
 *              kernels, plus cos/sin of the s × d frequencies, each times mscale and
 *              cast (6 kernels, bytes negligible): 12 kernels
 *   backward   autograd of the same (PyTorch derivatives.yaml): * sin (4), neg (2),
 *              chunk's cat of the halves' gradients (4), * cos (4), the two paths
 *              summed (6), the empty pass-through slice's slice_backward (zeros of
 *              the whole tensor, 2) added in (6): 28 B in 7 kernels. t[..., :rot_dim]
 *              over the whole head is t itself (PyTorch's indexing returns self for
 *              a full slice), so no slice_backward there
 * Counted from the code, nothing fitted; the fused kernel it replaces is not priced
 * (the default prices no RoPE kernel: roofline.h "Eager modules"), so the chain is
 * charged whole. Nothing is kept for the backward beyond cos and sin (s × d).
 */
#define TSL_ROOFLINE_YARN_ROPE_FWD_BYTES   24.0
#define TSL_ROOFLINE_YARN_ROPE_BWD_BYTES   28.0
#define TSL_ROOFLINE_YARN_ROPE_FWD_KERNELS 12u
#define TSL_ROOFLINE_YARN_ROPE_BWD_KERNELS 7u

/*
 * QK norms (tsl_layer_t.qk_norm, cost model 176): the norm of each token's queries
 * and keys between the QKV projection and RoPE, over the TP rank's T·d/t query and
 * T·e/t key elements, inside the attention block (a graphed attn scope holds them).
 * As Megatron-LM 44151194 builds them (gpt_layer_specs.py: q_layernorm and
 * k_layernorm from backend.layer_norm(for_qk=True), TENorm, i.e. TE's RMSNorm over
 * head_dim; L2Norm for qk_l2_norm; attention.py get_query_key_value_tensors applies
 * them to the views SplitAlongDim cut from linear_qkv's output):
 *   TENorm (per head; over the whole projection assumed the same kernels)
 *     forward   TE release_v2.16 ops/basic/rmsnorm.py op_forward: input_.contiguous()
 *               (the key is a strided slice of the fused QKV output: read 2, write 2
 *               bytes an element, one kernel; the query too where its reshape to
 *               [s, b, np, hn] was a view — one query group on the rank, or one query
 *               head per group — elsewhere that reshape already copied it, with or
 *               without the norm), then rmsnorm_fwd: read x, write y (2 + 2) and the
 *               fp32 rstdevs (4 B a row of head_dim: left out), one kernel a tensor.
 *               Saves x and rstdevs (the 2 B stash: model.h)
 *     backward  rmsnorm_bwd: read dy and x, write dx (6 B, the elementwise backward
 *               ratio), γ and rstdevs a row's worth; two kernels a tensor, the fused
 *               kernel and the dγ partials' finalize (common/normalization/rmsnorm/
 *               rmsnorm_bwd_semi_cuda_kernel.cu launch_rmsnorm_bwd_general_, which
 *               launches rmsnorm_bwd_finalize_general_kernel after it)
 *   L2Norm (torch_norm.py, weightless, under jit_fuser): one compiled kernel a tensor
 *     each way (4 B forward, 6 backward), no copy (the compiled kernel takes strides)
 *   eager stacks (dev.eager): torchtitan's RMSNorm chain a tensor ("Eager modules"),
 *     its separate q and k projections contiguous: no copy
 * RoPE reads its input through its strides (TE apply_rope.cpp fused_rope_forward:
 * stride_s, stride_b, stride_h, stride_d), so without the norm the key was never
 * copied: the copy is the norm's. Counted from the code, nothing fitted. Under
 * autocast (a script's modules) the fused figures are assumed.
 */
/*
 * TE norms (cost model 178): every fused norm's backward is these two kernels, not
 * the QK norms' alone — a block's norm (TE's LayerNormLinear runs the same
 * rmsnorm_bwd / layernorm_bwd as TENorm; an MoE block's standalone pre_mlp_layernorm),
 * MLA's latent norms, an MTP depth's enorm, hnorm and final norm, BLOOM's embedding
 * norm (roofline.c norm_kernels). dγ is a reduction over the tokens, dX one over the
 * row: the finalize sums the main kernel's per-CTA dγ(/dβ) partials (fp32, a few rows
 * of h: their bytes left out). Other stacks' fused norms launch as many or more:
 * PyTorch's native layer_norm backward two (grad input, then gamma/beta: aten/src/
 * ATen/native/cuda/layer_norm_kernel.cu), apex's FusedLayerNorm three (part-gradient,
 * gamma/beta, input: the third unpriced); a compiled RMSNorm's backward two (assumed:
 * the two reductions run along different axes). Under autocast and for an eager
 * RMSNorm chain, their own counts.
 */
#define TSL_ROOFLINE_TE_NORM_BWD_KERNELS 2u

/*
 * The head's final norm (tsl_layer_t.final_norm, cost model 183): the model's last
 * norm over the head's s·h input, on the stage that holds the head, before the
 * output projection — Megatron-LM 44151194 TransformerBlock's final_layernorm (built
 * under post_process, the last stage, or with MTP layers the last decoder layer's,
 * has_final_layernorm_in_this_stage; TENorm, so TE's rmsnorm_fwd / layernorm_fwd
 * and the two-kernel backward above), torchtitan's norm (the model's last module
 * before output), HF's ln_f / final_layer_norm. Priced as the blocks' norm runs on
 * the same stack (roofline.c final_norm_s): fused, 4 B an element forward, 6 B
 * backward in norm_kernels; an eager RMSNorm chain where the blocks' is one
 * (torchtitan eager, HF T5's T5LayerNorm); under autocast the fp32 norm (read 4,
 * write 4) and its cast to bf16 for the head's GEMM (read 4, write 2): 14 B in 2
 * kernels forward; backward the GEMM's bf16 input gradient cast to fp32 (6), the
 * norm's dX (read dY and X, write dX: 12) and dγ/dβ (read dY and X: 8): 26 B in 3
 * kernels — the block's "norm + residual" figures less the residual's. Under
 * sequence parallelism it runs on the rank's s/t rows (final_layernorm sits before
 * the head's all-gather). Its kept input and parameters were counted already
 * (extra_act_bytes, extra_params); Megatron's full recompute does not take it in
 * (it is outside the checkpointed layers).
 */
#define TSL_ROOFLINE_AUTOCAST_FINAL_NORM_FWD_BYTES   14.0
#define TSL_ROOFLINE_AUTOCAST_FINAL_NORM_BWD_BYTES   26.0
#define TSL_ROOFLINE_AUTOCAST_FINAL_NORM_FWD_KERNELS 2u
#define TSL_ROOFLINE_AUTOCAST_FINAL_NORM_BWD_KERNELS 3u

/*
 * Mamba's gate and gated norm (cost model 183): Megatron-LM d98e8a64dd mamba_mixer.py
 * _ssm_training (the mem-eff path, training's default) calls
 * mamba_split_conv1d_scan_combined without rmsnorm_weight, so the gate y·silu(z) runs
 * inside the scan, not in the norm: mamba_ssm (state-spaces/mamba e9594ce)
 * ssd_combined.py passes z to _mamba_chunk_scan_combined_fwd, whose chunk-scan kernel
 * (ssd_chunk_scan.py _chunk_scan_fwd) reads z and writes the ungated out_x beside the
 * gated out: 4 B more per element of d_i/t forward, no kernel of its own. Backward,
 * _chunk_scan_bwd_dz reads dout, out_x, z and x (D is set) and writes dz and dout_x:
 * 12 B per element, one kernel. Megatron's self.norm(y) is then mamba_ssm's
 * layernorm_gated.py RMSNorm with z None (read 2, write 2 forward; read x and dy, write
 * dx backward, the elementwise ratio's 6), whose backward is three kernels: the Triton
 * kernel, _dw.sum(0) over its per-program fp32 partials and .to(weight.dtype), the cast
 * to the bf16 weight (their bytes, a few rows of d_i/t, left out).
 */
#define TSL_ROOFLINE_MAMBA_GATE_FWD_BYTES   4.0
#define TSL_ROOFLINE_MAMBA_GATE_BWD_BYTES   12.0
#define TSL_ROOFLINE_MAMBA_NORM_BWD_KERNELS 3u

/*
 * The same RMSNorm chain in fp32 training (knobs.fp32: activations and weights fp32),
 * as HF T5's T5LayerNorm runs it (transformers 4.16.2 modeling_t5.py, copied by
 * Galvatron df32daa t5/T5ForConditionalGeneration_tensor_parallel.py l.13-31;
 * tsl_layer_t.eager_norm) and torchtitan's when fp32: x.to(float32) and the cast
 * back are no-ops, every other kernel moves 4-byte elements, per element:
 *   forward   pow(2) (8), mean(-1) (4), + eps and rsqrt (per row), x * rsqrt (8),
 *       weight * (8): 28 B, 6 kernels
 *   backward  weight *'s two products and the weight's sum (8 + 12 + 4), x * rsqrt's
 *       two products and its row sum (8 + 12 + 4), rsqrt's (per row), mean's expand
 *       (4), pow's pow(1) copy, scale and product (8 + 8 + 12), the two gradients
 *       of x summed (12): 92 B, 12 kernels
 */
#define TSL_ROOFLINE_EAGER_RMSNORM_FP32_FWD_BYTES   28.0
#define TSL_ROOFLINE_EAGER_RMSNORM_FP32_BWD_BYTES   92.0
#define TSL_ROOFLINE_EAGER_RMSNORM_FP32_FWD_KERNELS 6u
#define TSL_ROOFLINE_EAGER_RMSNORM_FP32_BWD_KERNELS 12u

/* A GEMM whose row length is not a multiple of 16 bytes (the LM head over an
 * unpadded vocabulary, e.g. GPT-2's 50257): cuBLAS cannot take its aligned
 * (TMA, vectorised) kernels and falls back to a slower path — "tripling that
 * layer's execution time" (Netflix Tech Blog, "Scaling LLM Post-Training at
 * Netflix", 2026-02-13, which pads vocabularies to multiples of 64 for it;
 * nanoGPT pads GPT-2's 50257 to 50304 "for efficiency"). Megatron-LM pads to
 * 128 · t, so only a stack that keeps the vocabulary as given meets it. */
#define TSL_ROOFLINE_UNALIGNED_GEMM 3.0

/*
 * FP8 (docs/cost-model.md "FP8"; Transformer Engine's Linear, torchao's
 * Float8Linear). With dev.fp8 set, the Transformer blocks' linear GEMMs (QKV,
 * attention output, FFN in and out, cross-attention's projections) run on FP8
 * tensor cores: rate F8 = fp8_flops · u(shape), operands tsl_fp8_copy_bytes
 * (1 byte; nvfp4 below), output 2.
 * Before each, the operands are quantised by memory-bound cast kernels:
 *   forward   X (m × k) and W (k × n)        backward  dY (m × n)
 * each element read in bf16 (2 B) and written in FP8 twice — rowwise for this
 * GEMM, columnwise (transposed) for the gradient GEMM that takes it (Hopper's
 * FP8 MMA is TN only; MXFP8's scales run along one dimension): 4 B, plus
 *   delayed     amax from history, fused into the cast              1 kernel
 *   tensorwise  current scaling: an amax pass first (+2 B read)      2 kernels
 *   blockwise   1×128 / 128×128 scales (+4/128 B per copy)           1 kernel
 *   mxfp8       E8M0 scale per 32 elements (+1/32 B per copy)        1 kernel
 *   nvfp4       E2M1 copies (0.5 B + an E4M3 scale per 16: 1/16 B)    2 kernels
 *               after an amax pass (+2 B read): the per-tensor FP32 scale needs
 *               the amax first (TE's NVFP4Quantizer; Hadamard-transformed amax
 *               for the columnwise copies of X and dY, which get a 16x16 random
 *               Hadamard transform and, for dY, stochastic rounding in the cast
 *               kernel; weights 16x16 2D scales, no transform): 5.125 B
 * (tsl_fp8_cast_bytes). Under nvfp4 the GEMMs run on the FP4 tensor cores
 * (fp8_flops holds their rate), operands tsl_fp8_copy_bytes each.
 * Who runs the recipe is dev.fp8_impl (fp8_impl.h): under
 * torchao (torchtitan) the weight is cast at every use — tensorwise Float8Linear
 * compiled: its amax and rowwise cast forward, its columnwise cast backward, X cast
 * once (tsl_fp8_impl_weight_cast_bytes, cost model 141); its MX linear and grouped
 * experts cast the bf16 X and W they saved once more — ; under Transformer Engine the weight copies are
 * cast once per iteration (cost.c) and current scaling adds its scale kernel,
 * its amax pass taken by the norm before a LayerNormLinear. What stays bf16: the attention core,
 * norms, softmax, residuals, the embedding, the LM head (Megatron-LM's and
 * torchtitan's defaults) and any GEMM whose k or n is not a multiple of 16
 * (TE's and torchao's requirement).
 */
typedef enum tsl_fp8_recipe {
    TSL_FP8_NONE = 0,       /* bf16 */
    TSL_FP8_DELAYED = 1,    /* TE DelayedScaling (Megatron-LM's default recipe) */
    TSL_FP8_TENSORWISE = 2, /* per-tensor current scaling (torchao, TE Float8CurrentScaling) */
    TSL_FP8_BLOCKWISE = 3,  /* TE Float8BlockScaling (DeepSeek-V3's 1x128 / 128x128) */
    TSL_FP8_MXFP8 = 4,      /* OCP MX, Blackwell only (TE MXFP8BlockScaling) */
    TSL_FP8_NVFP4 = 5,      /* 4-bit E2M1, FP4 tensor cores only (TE NVFP4BlockScaling) */
    TSL_FP8_COUNT = 6
} tsl_fp8_recipe_t;

/* "bf16", "delayed", "tensorwise", "blockwise", "mxfp8", "nvfp4"; NULL out of range. */
const char *tsl_fp8_recipe_name(uint32_t r);
/* The recipe of a name above; -1 for none ("bf16" gives 0). */
int tsl_fp8_recipe_parse(const char *name);
/* Bytes moved per element quantised (read bf16, write the two quantised copies
 * of tsl_fp8_copy_bytes, the recipe's amax pass or scales) and kernels per
 * quantised tensor. */
double tsl_fp8_cast_bytes(uint32_t recipe);
uint32_t tsl_fp8_cast_kernels(uint32_t recipe);
/* Whether Transformer Engine keeps one copy of a quantised tensor, the rowwise one,
 * where the table of tsl_fp8_cast_bytes counts two: the per-tensor recipes (delayed,
 * tensorwise) under TE on a GPU whose FP8 GEMMs take any layout (any_layout:
 * Blackwell), where its Float8 quantizers allocate no transpose
 * (`with_transpose = columnwise_usage && !is_non_tn_fp8_gemm_supported`,
 * pytorch/csrc/quantizer.cpp at release_v2.16) and cuBLASLt reads the rowwise data
 * transposed. The block-scaled recipes keep both (their scales run along one
 * dimension); torchao casts its own (fp8_impl.h). */
bool tsl_fp8_one_copy(uint32_t recipe, uint32_t impl, bool any_layout);
/* Bytes per element of one quantised copy as a GEMM reads it and Transformer
 * Engine keeps it (a cached weight, a saved input): 1 for the FP8 recipes (their
 * block scales, at most 1/32 B, are not counted), 0.5 + 1/16 for nvfp4 (two E2M1
 * values per byte and one E4M3 scale per 16: an eighth of the payload, counted).
 * tsl_fp8_data_bytes: the payload alone (1; nvfp4 0.5), what a weight all-gather
 * in the recipe's format moves (Megatron-LM's packed NVFP4 buffer). */
double tsl_fp8_copy_bytes(uint32_t recipe);
double tsl_fp8_data_bytes(uint32_t recipe);

/* The FP8 GEMMs of layer l per sample on one TP rank of t (sp: sequence
 * parallel): their weight elements (*weights; a MoE FFN's routed experts are
 * not in it: cost.c adds them by the EP degree; latent MoE's two projections are,
 * whole on every TP rank), and the elements of the linear
 * inputs the backward keeps, replicated over the TP group (*repl: the norm
 * outputs feeding QKV and FFN-in, MLA's latents feeding its up projections,
 * the combined rows feeding fc2_latent_proj; divided by t under SP) and sharded (*shard: the attention output, the FFN's
 * activation, the shared experts'), each linear counted where TE/torchao run it
 * in FP8 (k and n multiples of 16). The routed experts' inputs are not in them
 * either: cost.c prices their FP8 stash with the expert layout. An input inside
 * a module of `recompute` (recompute.h) is not kept: not counted. A linear
 * input read by two linears (MLA's down projections) is kept in FP8 by each: no
 * saving, not counted; one whose bf16 copy another reader keeps (fc1_latent_proj's)
 * is a copy more: tsl_roofline_fp8_split's beside. All 0 for a layer without. */
void tsl_roofline_fp8_elems(const tsl_layer_t *l, uint32_t t, uint32_t recompute, double *weights,
                            double *repl, double *shard);
/* tsl_roofline_fp8_elems's counts by the recipe each linear runs at in a layer of
 * `recipe` whose linears module_prec overrides (module_prec.h): index r of each array
 * the elements of the linears at recipe r; a linear overridden to bf16 in none. beside:
 * the elements of linear inputs TE keeps in FP8 beside a bf16 copy another reader keeps
 * (latent MoE's fc1_latent_proj reads the pre-MLP norm's output the router keeps):
 * replicated over the TP group as repl (divided by t under SP), a copy more, not a
 * saving; tsl_roofline_fp8_elems leaves them out. */
typedef struct tsl_roofline_fp8_split {
    double weights[TSL_FP8_COUNT], repl[TSL_FP8_COUNT], shard[TSL_FP8_COUNT];
    double beside[TSL_FP8_COUNT];
} tsl_roofline_fp8_split_t;
void tsl_roofline_fp8_split(const tsl_layer_t *l, uint32_t t, uint32_t recompute,
                            uint32_t module_prec, uint32_t recipe, tsl_roofline_fp8_split_t *out);
/* Elements per sample of the attention output projection's input on one TP rank
 * among tsl_roofline_fp8_elems's shard (the core's output: s·d/t, latent attention's
 * s·a·v/t), 0 where the layer has no self-attention or the projection is not FP8
 * (fp8_dims): what a stack that keeps that input in bf16 (roofline.h
 * proj_orig_input) does not save. */
double tsl_roofline_proj_fp8_elems(const tsl_layer_t *l, uint32_t t);
/* Whether the routed experts of MoE layer l, f/etp wide, admit FP8 grouped GEMMs
 * (h and the widths multiples of 16); false for a layer without experts. */
bool tsl_roofline_fp8_experts(const tsl_layer_t *l, uint32_t etp);
/* Bytes per element an FP8 activation moves on the wire (the MoE dispatch in FP8):
 * one FP8 copy with the recipe's scales (blockwise 4/128, mxfp8 1/32); 2 for bf16.
 * nvfp4 has no such dispatch (Megatron-LM's wire is MXFP8: refused, search.h). */
double tsl_fp8_wire_bytes(uint32_t recipe);

typedef struct tsl_roofline_dev {
    double gemm_flops;      /* F: sustained tensor-core FLOP/s */
    double mem_bw;          /* W: sustained device-memory bytes/s; 0 = unknown */
    double launch_s;        /* L */
    double host_op_s;       /* host dispatch per op of an eager stack; 0: none (the
                             GPU's time alone). A pass takes max(GPU, ops × it) */
    bool launch_blocking;   /* every launch synchronous (CUDA_LAUNCH_BLOCKING=1): the host
                             dispatches an op only once the kernel before it has ended,
                             so a pass takes GPU + ops × host_op_s (false after init) */
    tsl_gemm_eff_t shape;   /* the GPU's GEMM shape curve (gemm_eff.h) */
    double fp8_flops;       /* F8: sustained FP8 tensor-core FLOP/s (peak × e_max); under
                              nvfp4 the FP4 tensor cores' (F4, the same use) */
    uint32_t fp8;           /* tsl_fp8_recipe_t of the linear GEMMs; NONE (0): bf16. Needs
                             fp8_flops > 0 and a bandwidth */
    uint32_t fp8_impl;      /* tsl_fp8_impl_t: who runs it (TE after init) */
    bool fp8_any_layout;    /* the FP8 GEMMs take any operand layout (Blackwell's cuBLASLt;
                               TE's nvte_is_non_tn_fp8_gemm_supported): TE's per-tensor
                               casts (delayed, tensorwise) write the rowwise copy alone
                               (tsl_roofline_fp8_cast_s); false after init (Hopper's TN) */
    uint32_t ep;            /* expert-parallel degree of MoE layers (1 after init) */
    uint32_t etp;           /* expert tensor-parallel degree of their experts (1 after init) */
    double moe_busy;        /* rows of the busiest expert over the mean k·T/E (1 after init;
                             tsl_cost_moe_rows: the imbalance, or the capacity's) */
    double moe_moved;       /* rows dispatched per rank over k·T (1 after init; below 1
                             when a capacity drops tokens, c when padded to it) */
    bool autocast;          /* torch.autocast over fp32 parameters (above); false after init */
    bool fp16;              /* with autocast: its lower precision is fp16, not bf16 (cost.h
                               knobs.fp16); false after init */
    double grad_acc_bytes;  /* bytes per parameter a later micro-batch's gradient
                              accumulation moves as kernels of its own (cost.c
                              grad_accum_bytes: AccumulateGrad under autocast, 4 + 4
                              read, 4 written; Megatron-LM 2021's fp16 .grad, 2 + 2 + 2);
                              0 after init: fused into the GEMM or none */
    bool eager;             /* eager modules, no torch.compile (above); false after init */
    bool moe_fp8;           /* with fp8: the routed experts' grouped GEMMs in FP8 too (false
                             after init: bf16, as torchtitan without its grouped-experts
                             converter) */
    bool proj_orig_input;   /* with fp8: the attention output projections keep their bf16
                             input and quantise it again in the backward (cost.h
                             tsl_cost_proj_orig_input: Megatron-core's
                             set_save_original_input(linear_proj), cost model 166); false
                             after init: TE's default, the FP8 copy kept */
    bool shared_orig;       /* with fp8: the MoE shared experts' linear_fc1 likewise (cost.h
                             tsl_cost_shared_fc1_orig_input, cost model 170); false after
                             init */
    bool down_orig;         /* with fp8: latent attention's down projections likewise under
                             a layernorm recompute (cost.h tsl_cost_mla_down_orig_input,
                             cost model 170); false after init */
    double wgrad_acc_bytes; /* g > 0: the linears' weight-gradient GEMMs (bf16 and FP8)
                              accumulate into a kept gradient buffer of g-byte elements
                              in their epilogue, C read with beta 1 and D written: 2·g
                              bytes per output element (gemm_eff.h tsl_gemm_tile_cost;
                              Megatron-LM's gradient_accumulation_fusion: Apex's
                              wgrad_gemm_accum_fp32 / _fp16, Transformer Engine's
                              fuse_wgrad_accumulation; Tessel's executor, beta 1 on its
                              bf16 buffer); 0 after init: a fresh 2-byte gradient
                              written once, the fit's epilogue */
    bool moe_unfused;       /* MCore v0.8's unfused permutation (TSL_ROOFLINE_UNFUSED_
                             PERMUTE_*); false after init: the fused permute, unpermute */
    bool moe_fused_mlp;     /* the experts' MLP through TE's op fuser (cost.h knobs): no
                             eager clamp, offset copy or per-expert bias; false after
                             init: TEGroupedMLP's unfused path */
    bool fp8_dpa;           /* with fp8: the fused core in FP8 (cost.h knobs.fp8_dpa, TE's
                             fp8_dpa): a causal sliding window's backward at head dimension
                             64 computes the whole causal square where the GPU has cuDNN's
                             sliding-window figures (gemm_eff.h TSL_ATTN_GB100_SWA64_*);
                             every other core as in bf16; false after init */
    bool moe_fused_srelu;   /* non-gated experts' routing weights inside the fused squared
                             ReLU (cost.h knobs.moe_fused_srelu): no eager product or cast
                             (TSL_ROOFLINE_EXPERT_PROBS_*); false after init: both */
    uint32_t cuda_graphs;   /* the modules replayed as CUDA graphs (cuda_graph.h bits;
                             cost.h knobs.cuda_graph_modules): their ops leave the host
                             floor, TSL_ROOFLINE_GRAPH_LAUNCH_OPS each graph in their
                             place; 0 after init: every op eager */
    uint32_t module_prec;   /* with fp8: the linears run at their own precision (module_prec.h
                             nibbles; cost.h knobs.module_prec, Megatron-core's quant_recipe):
                             each such linear priced on this device with its recipe for fp8,
                             at f8_flops (f4_flops under nvfp4), its casts, GEMMs and SP
                             gathers its own; 0 after init: every linear at fp8 */
    double f8_flops;        /* the FP8 and FP4 tensor cores' sustained rates (fp8_flops holds */
    double f4_flops;        /* the recipe's one) for module_prec's; 0 after init */
    bool moe_a2a;           /* the MoE layers' dispatcher is Megatron-LM's all-to-all one
                             (TSL_ROOFLINE_A2A_*); false after init: the permutation and
                             its two all-to-alls alone */
    bool moe_fp32_probs;    /* the routed experts receive fp32 routing weights (the flex
                             dispatcher: HybridEP and DeepEP take only fp32 probs), which
                             non-gated experts multiply in eager fp32
                             (TSL_ROOFLINE_EXPERT_PROBS_*); false after init: bf16 */
    uint32_t cp_ring;       /* c > 1: a causal fused self-attention core runs as the CP
                             ring's c kernels per rank (below); 1 after init: one kernel */
    bool cp_merge;          /* with cp_ring: torch's context_parallel, which merges each
                             step's partial output in fp32 and accumulates dQ, dK, dV in
                             fp32 (below); false after init */
    bool cp_te;             /* with cp_ring: TransformerEngine's p2p ring
                             (AttnFuncWithCPAndKVP2P), its bf16 kernels around the
                             attention kernels (below); false after init */
    uint32_t attn_kernel;   /* tsl_attn_kernel_t: the fused attention kernel the stack runs;
                             on a GPU with published per-kernel shares
                             (shape.attn_kernel_peak) it prices the fused core by its head
                             dimension and keys (attn_kernel.h), and a causal core by
                             its causal figure where it has one (flash1 on the A100);
                             DEFAULT after init: the family's one figure */
    bool tp_whole_heads;    /* an unfused attention core keeps all a heads on every TP
                               rank, each d/(a·t) wide (cost.h knobs.tp_whole_heads: AMP's
                               fork's TransGAN attention): its batched GEMMs run S·a
                               products of head width d/(a·t) and its a·s·keys·S scores
                               are not divided by t; false after init: a/t heads of d/a
                               per rank, as Megatron-LM splits them */
    /* Megatron-LM v1.1.5 without its fusion flags under PyTorch 1.7 (cost.h
     * knobs.unfused_elementwise: AMP's fork): each bias added by a kernel of its own, the
     * causal mask by masked_fill_, the context's permute copy (TSL_ROOFLINE_UNFUSED_*);
     * false after init: biases in the GEMMs' epilogues, the mask inside the softmax */
    bool unfused_elementwise;
    uint32_t loss_impl; /* tsl_loss_impl_t: how the stack runs an LM head's loss, whose
                               kernels' bytes per logit price its time (loss_impl.h "The
                               loss's time"); EXEC after init */
    uint32_t norm_impl; /* tsl_norm_impl_t: whose fused LayerNorm kernels (norm_impl.h;
                               norm_kernels, apex_part_grad_s): TE after init */
    bool loss_unsplit;  /* the loss runs unsplit ops even over a TP-split vocabulary (a
                               script's autocast loss; PAPER's one figure): no
                               loss_parallel decomposition; false after init */
    double elem_scale;  /* the step's element width over the 2 bytes every activation,
                               operand and elementwise figure here counts: 2 under fp32
                               training (knobs.fp32: every memory-bound kernel, GEMM operand
                               and output, fused core's traffic at 4 bytes per element; a
                               gradient accumulation's grad_acc_bytes are its own widths,
                               not scaled); 1 after init */
} tsl_roofline_dev_t;

/* Under torch.autocast (above), the activation bytes per sample layer l keeps
 * beyond tsl_layer_derive's bf16 figures: *repl, replicated over the TP group
 * (each norm's input in fp32: +2 bytes per element; the head's final norm input
 * in fp32 beside its bf16 GEMM input: +4), and *score, in its unfused core's
 * scores (the fp32 softmax output kept for its backward beside the bf16 copy PV
 * keeps: 6 bytes per score where bf16 keeps 2; with dropout 7 against 5). */
void tsl_roofline_autocast_act(const tsl_layer_t *l, double *repl, double *score);
/* Under torch.autocast, the bytes per sample transformers' NewGELUActivation keeps
 * beyond a GELU's (tsl_layer_t.hf_gpt2_eager: TSL_ROOFLINE_HF_GPT2_F_KEPT_BYTES per
 * element of the FFN width), split by TP as the FFN is; 0 for any other layer. */
double tsl_roofline_hf_gpt2_act(const tsl_layer_t *l);

/* F = peak × e_max, W = TSL_ROOFLINE_MEM_EFF × datasheet, L = the default, a flat
 * shape curve (u = 1), no host floor: the caller sets .shape for its GPU
 * (tsl_gemm_eff_for_gpu) and .host_op_s for its stack. */
void tsl_roofline_dev_init(tsl_roofline_dev_t *d, double gemm_flops, double datasheet_mem_bw);

/* b independent GEMMs of (m × k)·(k × n). */
double tsl_roofline_gemm_s(const tsl_roofline_dev_t *d, double m, double n, double k, double b);

/* `kernels` elementwise kernels moving `bytes` in all (counted at 2-byte elements:
 * × d->elem_scale). */
double tsl_roofline_mem_s(const tsl_roofline_dev_t *d, double bytes, uint32_t kernels);
/* The same for `bytes` as counted, whatever the step's element width (a kernel whose
 * buffers are bf16, int32 or bool in every precision). */
double tsl_roofline_mem_bytes_s(const tsl_roofline_dev_t *d, double bytes, uint32_t kernels);

/* Layer l's parameter tensors as PyTorch holds them (one .grad each): the linears'
 * weights and biases, each norm's γ and β, the token (and position) table, an untied
 * head's table and the final norm. */
uint32_t tsl_roofline_param_tensors(const tsl_layer_t *l);

/* Quantising `elems` bf16 elements under d->fp8 as d->fp8_impl runs it: the
 * recipe's bytes and kernels per tensor (tsl_fp8_cast_bytes / _kernels) and the
 * implementation's scale and zero-amax kernels (fp8_impl.h: TE current scaling
 * runs zero-amax, amax, scale, cast: 4 a tensor); normed: the input of a
 * LayerNormLinear, whose amax TE's current scaling takes from the norm kernel (one
 * read and one kernel fewer). *kernels (if not NULL) gets the kernel count. */
double tsl_roofline_fp8_cast_s(const tsl_roofline_dev_t *d, double elems, bool normed,
                               uint32_t *kernels);

/* cuBLASLt's MXFP8 (block-scaled, E8M0 per 32) GEMM over its per-tensor FP8 GEMM, by
 * time over one Transformer layer's twelve GEMMs on a Blackwell GPU: Transformer
 * Engine's GEMM profiling guide (docs/examples/gemm_profiling/gemm_profiling.rst, TE
 * 1609c890e, PR #2863, 2026-06-01; benchmarks/gemm/benchmark_gemm.py --pre-quantize)
 * measured a B300 at hidden 4096, FFN 16384, 15,872 tokens: FP8 current scaling
 * 6.812 ms, MXFP8 7.161 ms a layer (fprop 2.158 / 2.365, dgrad 2.329 / 2.397, wgrad
 * 2.325 / 2.400), operands quantised before the timed loop, both through TE's
 * generic_gemm. The MXFP8 time includes TE's swizzle of both operands' scales into
 * the tensor cores' layout before each GEMM (the benchmark's quantiser writes plain
 * scales; ≈ 7 MB and two kernels a GEMM of 0.2–1 ms), as TE ≤ 2.11 runs it for every
 * operand. Assumed: B200 and GB200 (the same tcgen05 block-scaled MMA) hold B300's
 * ratio, and it holds at the training rows' shapes (the guide's are Llama 3 8B's
 * within 15 %). */
#define TSL_MXFP8_GEMM_RATE (6.812 / 7.161)

/* Transformer Engine's MXFP8 quantize kernel (bf16 in; the rowwise and/or columnwise
 * FP8 copies and their E8M0 scales out) as a share of the datasheet memory bandwidth
 * it reaches, by its own bytes (2 B read, 1 B and 1/32 B written per copy), on a B200
 * (8 TB/s): 5.21 TB/s = 0.651 — both copies of a bf16 8192 x 8192 tensor in 52.34 us,
 * the B200 column of ROCm/TransformerEngine PR #598 (2026-05-27, "Single Kernel
 * Optimization Results", CAST_ONLY; rowwise alone 34.84 us = 0.73, columnwise alone
 * 39.61 us = 0.64) — and 5.07 TB/s = 0.634, TE's own C++ kernel with a dbias
 * reduction writing both copies of a 4096 x 14336 tensor on a B200 in 47.05 us
 * (NVIDIA/TransformerEngine PR #3137, 2026-09-15, the cpp_GB/s column, bytes counted
 * as here). Streaming kernels take TSL_ROOFLINE_MEM_EFF (0.80); this one stages
 * 32-element blocks through shared memory for the amax, the E8M0 scale and the
 * transposed writes (TE PR #1628, 2025-03-31: "the kernel is compute-bound"). Assumed:
 * TE 2.7–2.9's kernel (the rows' pins; #1628's design) runs at the 2026 figures, and
 * GB200's HBM3e (8 TB/s a GPU) as B200's. */
#define TSL_MXFP8_CAST_MEM_EFF 0.65

/* The share of d->fp8_flops an FP8 GEMM of d's recipe runs at: TSL_MXFP8_GEMM_RATE
 * for MXFP8 through cuBLASLt — a linear's GEMMs (TE's general_gemm, torchao's
 * torch._scaled_mm) and TE's grouped linears (a cuBLASLt GEMM per expert) — else 1:
 * the per-tensor recipes, blockwise, NVFP4 (its FP4 rate stands), and MXFP8 grouped
 * GEMMs that are not cuBLASLt's (torchao's scaled grouped mm, TE's fused grouped MLP
 * under d->moe_fused_mlp: CuTeDSL kernels with no published block-scaled figure).
 * grouped: the routed experts' grouped GEMM (roofline.c grouped_lin). */
double tsl_roofline_fp8_gemm_rate(const tsl_roofline_dev_t *d, bool grouped);

/*
 * Forward time of layer l for `samples` samples on one device of a TP group of
 * t (t divides the layer's heads and FFN: cost.c checks), with sequence
 * parallelism (norm, dropout and residual work divided by t) or without
 * (replicated). vocab is the head's and embedding's padded vocabulary. The
 * layer's FLOPs are exactly l->fwd_flops / t plus the padding's; extra_fwd_flops
 * runs at F.
 */
double tsl_roofline_layer_fwd_s(const tsl_roofline_dev_t *d, const tsl_layer_t *l, double samples,
                                uint32_t t, bool sp, double vocab);

/* Backward time of the same layer: the gradient GEMMs, the attention core's
 * backward and the elementwise backward kernels (header above). */
double tsl_roofline_layer_bwd_s(const tsl_roofline_dev_t *d, const tsl_layer_t *l, double samples,
                                uint32_t t, bool sp, double vocab);

/* tsl_roofline_layer_bwd_s of a micro-batch whose backward then adds `params`
 * gradients of this rank into the gradient buffer by kernels of their own (every
 * micro-batch after the first: d->grad_acc_bytes each, a kernel per parameter
 * tensor of the layer, as AccumulateGrad runs per tensor): the GPU's time grows by
 * it before the host floor, so a host-bound pass hides it. Without grad_acc_bytes
 * or a bandwidth figure: tsl_roofline_layer_bwd_s. */
double tsl_roofline_layer_bwd_acc_s(const tsl_roofline_dev_t *d, const tsl_layer_t *l,
                                    double samples, uint32_t t, bool sp, double vocab,
                                    double params);

/* The weight-gradient (dW GEMMs) share of tsl_roofline_layer_bwd_s's GPU time, in
 * [0, 1]: what a zero-bubble schedule's W pass runs (Qi et al. 2024); the rest is B,
 * the input gradient. 0.5 without a memory-bandwidth figure (dX and dW have the
 * forward's FLOPs each). */
double tsl_roofline_layer_wgrad_frac(const tsl_roofline_dev_t *d, const tsl_layer_t *l,
                                     double samples, uint32_t t, bool sp, double vocab);

/* The column-parallel linears of the layer (those whose input is whole on every
 * TP rank and whose output is split: QKV, cross-attention's Q and K/V, FFN-in,
 * latent attention's up projections, shared experts' FFN-in): their backward dX
 * GEMMs (*dgrad_frac) and dW GEMMs (*wgrad_frac) as shares of
 * tsl_roofline_layer_bwd_s's GPU time. The TP group reduces those dX, and
 * Megatron-LM launches the collective before the dW GEMM and, under sequence
 * parallelism, the re-gather of the input before the dX GEMM (cost.c, "TP in the
 * backward"). Without a bandwidth figure: the shapes' GEMM FLOPs over
 * 2 × fwd_flops. Both 0 for a layer without such a linear (embedding, head). */
void tsl_roofline_layer_col_frac(const tsl_roofline_dev_t *d, const tsl_layer_t *l, double samples,
                                 uint32_t t, bool sp, double vocab, double *dgrad_frac,
                                 double *wgrad_frac);

/* The TP blocks whose sequence-parallel collectives TransformerEngine's
 * userbuffers overlap with their own GEMMs (Megatron-LM --tp-comm-overlap: the TE
 * linears qkv/proj and fc1/fc2; cost.c "TP communication overlap"): a
 * self-attention's QKV and output projection, a dense MLP's FFN-in and FFN-out,
 * a Mamba-2 mixer's in_proj and out_proj (Megatron-LM's MambaMixer names their
 * buffers fc1/fc2), at most TSL_ROOFLINE_TP_BLOCKS per layer, in that order. Not the routed experts
 * (their linears leave TP to the dispatcher), latent or cross attention or shared
 * experts (no userbuffers there). Each GEMM as a share of the pass's GPU time, as
 * tsl_roofline_layer_col_frac gives its shares: col_f, row_f the column- and
 * row-parallel forward GEMMs (with their FP8 input casts); col_dx, col_dw the
 * column-parallel linear's dX and dW GEMMs and row_dx the row-parallel one's dX,
 * of the backward. Without a bandwidth figure: FLOP shares as col_frac's.
 * col_fp8, row_fp8: whether the block's column- / row-parallel linear runs in FP8
 * (dev.fp8 set, its k and n multiples of 16): the sequence-parallel all-gathers
 * of its input (col) and of its output gradient (row) then move FP8 (cost.c,
 * "FP8 sequence-parallel all-gathers"). col_amax, row_amax: whether that linear's
 * quantiser, at the recipe the module runs (module_prec), all-reduces its amax over
 * the TP group under SP before the gather (fp8_impl.h tsl_fp8_impl_amax_reduced:
 * TE's current scaling and NVFP4). */
#define TSL_ROOFLINE_TP_BLOCKS 2
typedef struct {
    uint32_t n; /* blocks recorded */
    double col_f[TSL_ROOFLINE_TP_BLOCKS], row_f[TSL_ROOFLINE_TP_BLOCKS];
    double col_dx[TSL_ROOFLINE_TP_BLOCKS], col_dw[TSL_ROOFLINE_TP_BLOCKS];
    double row_dx[TSL_ROOFLINE_TP_BLOCKS];
    bool col_fp8[TSL_ROOFLINE_TP_BLOCKS], row_fp8[TSL_ROOFLINE_TP_BLOCKS];
    bool col_amax[TSL_ROOFLINE_TP_BLOCKS], row_amax[TSL_ROOFLINE_TP_BLOCKS];
} tsl_roofline_tp_gemms_t;

void tsl_roofline_layer_tp_gemms(const tsl_roofline_dev_t *d, const tsl_layer_t *l, double samples,
                                 uint32_t t, bool sp, double vocab, tsl_roofline_tp_gemms_t *out);

/* One forward pass's figures for the cost layer, so that it prices the pass once
 * (planner/cost.c layer_compute_f): its time (s, tsl_roofline_layer_fwd_s's), the
 * GPU time of its kernels before the host floor (gpu_s: the pass at host_op_s 0,
 * save where the all-to-all dispatcher's host restart, moe_a2a, enters the
 * kernels), which of its TP blocks' linears run in FP8 and reduce their amax (n,
 * col_fp8, row_fp8, col_amax, row_amax: tsl_roofline_layer_tp_gemms's, where the device has a memory bandwidth; n 0
 * without one or for an empty pass), and a MoE layer's routed experts as
 * TEGroupedMLP's unfused path runs them after the dispatcher's device-to-host sync
 * (expert_gpu_s: their kernels' time; expert_ops: their host ops, in units of
 * host_op_s, TE's per-expert calls included, TSL_ROOFLINE_TE_EXPERT_FOPS_*; both 0
 * for any other layer, under the op fuser, or without a memory bandwidth), and the
 * share of gpu_s that Megatron-LM's EP overlap runs as the layer's "mlp" node
 * (mlp_frac; ep_overlap.h): a MoE layer's routed experts between the dispatch and
 * the combine (their grouped GEMMs, activation and weighting, whatever runs them), a
 * dense layer's MLP block with its norm and residual (_forward_mlp); 0 for a layer
 * without an FFN or without a memory bandwidth. */
typedef struct tsl_roofline_fwd {
    double s;
    double gpu_s;
    double expert_gpu_s, expert_ops;
    double mlp_frac;
    uint32_t n;
    bool col_fp8[TSL_ROOFLINE_TP_BLOCKS];
    bool row_fp8[TSL_ROOFLINE_TP_BLOCKS];
    bool col_amax[TSL_ROOFLINE_TP_BLOCKS];
    bool row_amax[TSL_ROOFLINE_TP_BLOCKS];
} tsl_roofline_fwd_t;

void tsl_roofline_layer_fwd(const tsl_roofline_dev_t *d, const tsl_layer_t *l, double samples,
                            uint32_t t, bool sp, double vocab, tsl_roofline_fwd_t *out);

/* One backward pass's figures for the cost layer, priced once: its time (s,
 * tsl_roofline_layer_bwd_s's), with the gradient accumulation of `params`
 * parameters at d->grad_acc_bytes (acc_s, tsl_roofline_layer_bwd_acc_s's) and that
 * before the host floor (acc_gpu_s, as tsl_roofline_fwd_t's gpu_s), its dW share
 * (wgrad_frac, tsl_roofline_layer_wgrad_frac's), its column-parallel linears'
 * dX and dW shares (col_frac, tsl_roofline_layer_col_frac's), and the routed
 * experts' share (mlp_frac, as tsl_roofline_fwd_t's) with the dW GEMMs' part of it
 * (mlp_wgrad_frac; both 0 without a memory bandwidth). */
typedef struct tsl_roofline_bwd {
    double s;
    double acc_s;
    double acc_gpu_s;
    double wgrad_frac;
    double col_frac[2];
    double mlp_frac, mlp_wgrad_frac;
} tsl_roofline_bwd_t;

void tsl_roofline_layer_bwd(const tsl_roofline_dev_t *d, const tsl_layer_t *l, double samples,
                            uint32_t t, bool sp, double vocab, double params,
                            tsl_roofline_bwd_t *out);

/* The short kernels a block runs between a TP collective and its next GEMM,
 * without sequence parallelism: one norm, dropout and residual-add unit on the
 * replicated activation (the block's elementwise figures above, for `samples`
 * samples; the backward's at TSL_ROOFLINE_BWD_MEM_RATIO). Returns their GPU
 * seconds and sets *kernels (may be NULL) to their count; 0 and 0 without a
 * bandwidth figure. What a queue restarted empty after a synchronised collective
 * runs at the host's pace (cost.c, "Synchronised TP collectives"). */
double tsl_roofline_tp_restart_s(const tsl_roofline_dev_t *d, const tsl_layer_t *l, double samples,
                                 bool bwd, uint32_t *kernels);

/* The attention core (QKᵀ, softmax, dropout, AV) alone: what selective
 * recomputation repeats in the backward. 0 for layers without attention. */
double tsl_roofline_core_fwd_s(const tsl_roofline_dev_t *d, const tsl_layer_t *l, double samples,
                               uint32_t t);

/* The GPU's idle in layer l's forward behind the weighted quick-GeGLU's synchronising
 * offset copy (TSL_ROOFLINE_GLU_OFFSET_SYNCS × host_op_s on an MoE layer with
 * glu_clamp run by TEGroupedMLP's unfused path, d->moe_fused_mlp false; else 0): part
 * of the forward's kernel time above, which a caller that
 * prices the kernels again without a host floor (host_op_s 0) adds back — the stream
 * is drained there, so no collective runs under it. */
double tsl_roofline_glu_offset_sync_s(const tsl_roofline_dev_t *d, double host_op_s,
                                      const tsl_layer_t *l);

/* The forward of the modules of `recompute` (recompute.h) layer l has: what the
 * backward runs again before the layer's own (the GPU's time, as the core's
 * above; communication is cost.c's). MLA's up projections and latent norms as
 * the forward prices them; a standalone norm 4 bytes per element (divided by t
 * under SP); the dense MLP with its fused norm; the MoE FFN as the forward prices
 * it without the block's norm and residual; moe_act the routed copies'
 * activation kernel; the shared experts' FFN. moe_act and shared_experts beside
 * moe add their own term to it: Megatron-LM's checkpointed MoE forward re-creates
 * their checkpoints, so each module runs a third time in the backward. The FLOP
 * count over F when there is no bandwidth figure. */
double tsl_roofline_recompute_fwd_s(const tsl_roofline_dev_t *d, const tsl_layer_t *l,
                                    double samples, uint32_t t, bool sp, uint32_t recompute);

#endif

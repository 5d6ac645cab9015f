/*
 * eval_opts.c — `tesselctl eval`: its options and --help (docs/tesselctl.md "eval").
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "attn_kernel.h"
#include "cuda_graph.h"
#include "eval_cmd.h"
#include "module_prec.h"
#include "norm_impl.h"
#include "remote.h"
#include "target.h"

static const char eval_usage[] =
    "usage: tesselctl eval (--model NAME | --hf-config PATH) [--seq-len N]\n"
    "                      --cluster SPEC|FILE.json|registered [--memory SIZE] PLAN\n"
    "                      [--profile FILE | --galvatron-profile DIR | --amp-profile DIR]\n"
    "                      [--unfused-attn] [--no-dropout] [--autocast] [--eager]\n"
    "                      [--double-block-fwd] [--tp-sync] [--ds-pipe-p2p] [--ds-pipe-engine]\n"
    "                      [--torch-pipelining] [--nccl-no-tree] [--tp-whole-heads]\n"
    "                      [--paper-cost] [--no-host-floor] [--host-op-us US]\n"
    "                      [--attn-kernel KERNEL]\n"
    "                      [--grad-reduce-bytes N] [--grad-buf-bytes N] [--ds-grad-bucket]\n"
    "                      [--ds-bf16-optimizer] [--launch-blocking] [--ds-wall-clock]\n"
    "                      [--unfused-elementwise] [--ds-zero3-v03]\n"
    "                      [--fp8-amax-tp-only] [--fp8-dpa]\n"
    "                      [--fp32] [--tf32] [--fp16]\n"
    "                      [--no-fp32-master]\n"
    "                      [--bf16-moments]\n"
    "                      [--lazy-grads] [--sdp-nosync] [--sdp-layer-roots]\n"
    "                      [--sdp-keep-weights]\n"
    "                      [--opt-step STEP] [--norm-impl IMPL]\n"
    "                      [--[no-]overlap-grad-reduce] [--overlap-param-gather]\n"
    "                      [--fp8 RECIPE | --no-fp8] [--fp8-param-gather] [--fp8-impl IMPL]\n"
    "                      [--loss-impl IMPL] [--bf16-layers-start N] [--bf16-layers-end N]\n"
    "                      [--moe-imbalance X] [--moe-bf16-experts] [--moe-fp8-dispatch]\n"
    "                      [--moe-alltoall-dispatcher] [--moe-flex-dispatcher]\n"
    "                      [--moe-flex-backend NAME]\n"
    "                      [--moe-a2a-overlap] [--moe-a2a-wgrad-inline]\n"
    "                      [--moe-unfused-permute] [--moe-fused-mlp] [--moe-fused-srelu]\n"
    "                      [--vp-group N] [--cpu-offload-layers N]\n"
    "                      [--[no-]overlap-tp-dgrad] [--tp-comm-overlap] [--async-tp]\n"
    "                      [--unfused-grad-accum] [--legacy-p2p]\n"
    "                      [--target STACK]\n"
    "                      [--no-search] [--json] [--server ADDR [--local]]\n"
    "\n"
    "Predict the iteration time, throughput and per-stage memory of a GIVEN plan (no\n"
    "search), with the figures `plan` uses, and next to it what the search finds for\n"
    "the same model, cluster, memory and batch, with the ratio. A plan that cannot run\n"
    "is refused with the reason: a TP degree that does not divide a layer's heads, K/V\n"
    "heads or FFN width, degrees that do not multiply to the devices, a batch that does\n"
    "not divide, a stage over the memory budget (exit 2). Runs in this process, or in\n"
    "tesseld (Planner.EvaluatePlan) when --server ADDR or TESSEL_SERVER names one: the\n"
    "plan is built here and the answer printed the same way.\n"
    "\n"
    "  --model NAME        a built-in preset (tesselctl models)\n"
    "  --hf-config PATH    a HuggingFace config.json\n"
    "  --name NAME         with --hf-config: the model's name (as for plan)\n"
    "  --seq-len N         sequence length (default: the given configuration's, else\n"
    "                      the preset's)\n"
    "  --cluster SPEC      [NODESx]GPUSxTYPE[:[NICSx]LINK][:nvlN] (as for plan), or a\n"
    "                      cluster JSON file;\n"
    "                      \"registered\": tesseld's online workers (with --server)\n"
    "  --memory SIZE       memory budget per device, e.g. 16G (default: plan's, device\n"
    "                      memory less 1G + 5% reserved)\n"
    "\n"
    "PLAN is one of:\n"
    "  --tp N --pp N --dp N --sdp N\n"
    "                      degrees: pipeline stages, and per stage tensor, data and\n"
    "                      sharded-data (ZeRO-3) parallel; tp x dp x sdp x pp = devices\n"
    "                      (default 1; --dp defaults to the rest)\n"
    "  --mbs N             samples per micro-batch per data-parallel rank (default 1)\n"
    "  --micro N           micro-batches per iteration (default: pp)\n"
    "  --batch N           global batch; micro-batches = N / (mbs x dp x sdp)\n"
    "  --ckpt MODE         full, selective or none (default): recompute of the\n"
    "                      Transformer layers\n"
    "  --sp                sequence parallelism with TP (Megatron-LM)\n"
    "  --zero N            0, 1 (distributed optimizer) or 2 on the DP level\n"
    "  --interleave V      V model chunks per stage (interleaved 1F1B)\n"
    "  --cp N              context parallelism: every layer's sequence split over N\n"
    "                      ranks of the data level (--dp/--sdp count the others,\n"
    "                      as Megatron-LM's DP and torchtitan's dp_shard do)\n"
    "  --cp-comm TYPE      its attention exchange: p2p (ring, the default), a2a\n"
    "                      (Ulysses) or allgather (Megatron-LM's --cp-comm-type),\n"
    "                      torch-allgather (torch's context_parallel, torchtitan);\n"
    "                      with --cp N > 1 only\n"
    "  --cp-shard          FSDP over the CP ranks too, also at --sdp 1 (torchtitan's\n"
    "                      dp_shard_cp mesh; without it --sdp 1 --cp N leaves the\n"
    "                      CP ranks' data level unsharded)\n"
    "  --ep N --etp N      MoE layers: routed experts over N expert-parallel ranks,\n"
    "                      each expert's width over N expert-TP ranks (default 1)\n"
    "  --moe-capacity-factor C [--moe-pad-to-capacity]\n"
    "                      an expert takes at most C x a rank's mean routed tokens,\n"
    "                      the rest dropped (or every expert padded to it)\n"
    "  --schedule NAME     1f1b (the default; interleaved with --interleave), zbh1,\n"
    "                      zbv or dualpipev (docs/cost-model.md)\n"
    "  --recompute-modules LIST\n"
    "                      Megatron-LM's selective recompute of these modules on\n"
    "                      every Transformer layer: core_attn (as --ckpt selective),\n"
    "                      moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts;\n"
    "                      or torchtitan_op: torchtitan's op-level selective AC\n"
    "                      (with --ckpt none)\n"
    "  --cuda-graph-modules LIST\n"
    "                      Megatron-core's per-layer CUDA graphs of these modules\n"
    "                      (cuda_graph_impl transformer_engine or local): attn,\n"
    "                      mlp, moe, moe_router, moe_preprocess (with moe_router),\n"
    "                      mamba; their ops off the host's dispatch, one graph\n"
    "                      launch each per pass (docs/cost-model.md \"CUDA-graphed\n"
    "                      modules\"); a full-iteration graph is --no-host-floor;\n"
    "                      a --megatron-args line's --cuda-graph-impl and\n"
    "                      --cuda-graph-modules are read into both\n"
    "  --module-precision LIST\n"
    "                      Megatron-core's per-module quantization config (a\n"
    "                      quant_recipe such as Megatron-Bridge's te_quant.cfg):\n"
    "                      MODULE=PRECISION items, comma-separated; modules\n"
    "                      linear_qkv, linear_proj, linear_fc1, linear_fc2 (a dense\n"
    "                      MLP's), in_proj, out_proj (Mamba's), fc1_latent_proj,\n"
    "                      fc2_latent_proj; precisions bf16, tensorwise,\n"
    "                      blockwise, mxfp8, nvfp4; each module's GEMMs, casts,\n"
    "                      weight copies and stashes at its own, in the blocks the\n"
    "                      --fp8 recipe runs (docs/cost-model.md \"Per-module\n"
    "                      precision\")\n"
    "  --layers-per-stage A,B,...\n"
    "                      layers of each stage, embedding and head included\n"
    "                      (default: balanced by FLOPs, as the search starts)\n"
    "  --strategy TEXT     every layer's strategy as text, e.g. tp2-dp4+sp+zero1+ckpt,\n"
    "                      instead of --tp/--dp/--sdp/--ckpt/--sp/--zero (refused\n"
    "                      beside it)\n"
    "or\n"
    "  --plan FILE         a plan document (tesselctl plan --json, plans show --json)\n"
    "or\n"
    "  --megatron-args S   a Megatron-LM argument line (--tensor-model-parallel-size,\n"
    "                      --pipeline-model-parallel-size, --micro-batch-size,\n"
    "                      --global-batch-size, --recompute-granularity, ...); a\n"
    "                      misspelt flag is an error naming the nearest, a Megatron-LM\n"
    "                      flag Tessel does not read is refused, one it does not\n"
    "                      model is refused or noted by name; an empty line is refused;\n"
    "                      --te-precision-config-file PATH (relative to the current\n"
    "                      directory) is read into the plan's module_precision as\n"
    "                      Megatron-LM matches it, or, where the line carries them,\n"
    "                      the '#| ' lines of an --export megatron text are that file\n"
    "or\n"
    "  --torchtitan FILE   a torchtitan job TOML ([parallelism], [training],\n"
    "                      [activation_checkpoint]; [model] flavor checked against\n"
    "                      the model) or Python Trainer.Config function (read,\n"
    "                      not run)\n"
    "\n"
    "Figures and pricing (as for plan):\n"
    "  --profile FILE      price on a measured profile (tessel-worker profile --json)\n"
    "                      instead of the built-in figures; in this process only\n"
    "  --galvatron-profile DIR\n"
    "                      price on Galvatron's profiles in DIR (as plan does); a\n"
    "                      plan searched on them evaluates to its own figures\n"
    "  --amp-profile DIR   price on AMP's per-layer profiles in DIR (its known_cost\n"
    "                      gpt2_{G4,P3}_{tp}.npy: T4, V100); in this process only\n"
    "  --unfused-attn      attention keeps its s x s scores (no flash kernel)\n"
    "  --no-dropout        the model without dropout\n"
    "  --mtp-layers N      N multi-token-prediction depths (Megatron-LM\n"
    "                      --mtp-num-layers; default: the HF config's\n"
    "                      num_nextn_predict_layers, or a --megatron-args line's)\n"
    "  --no-mtp            leave the model's MTP depths out\n"
    "  --autocast          PyTorch eager modules under torch.autocast over fp32\n"
    "                      parameters: fp32 norms and residual stream, weight casts,\n"
    "                      fp32 gradients, the vocabulary unpadded\n"
    "                      (docs/cost-model.md, \"Autocast\")\n"
    "  --double-block-fwd  every transformer block's forward runs twice per\n"
    "                      micro-batch (AMP's Megatron-LM v1.1.5 fork)\n"
    "  --tp-sync           every TP all-reduce between two device synchronisations\n"
    "                      (a synchronising timer around it: AMP's Megatron-LM\n"
    "                      v1.1.5 fork): its dispatch and the queue's restart, one\n"
    "                      host op each (docs/cost-model.md \"Synchronised TP\n"
    "                      collectives\")\n"
    "  --ds-pipe-p2p       stage boundaries by DeepSpeed's pipeline engine as AMP's\n"
    "                      fork runs it: 1/t of the activation and the fp16 mask per\n"
    "                      TP rank, a TP all-gather on each side, each exchange held\n"
    "                      by both stages (docs/cost-model.md \"DeepSpeed's pipeline\n"
    "                      p2p\")\n"
    "  --ds-pipe-engine    the stages run DeepSpeed's PipelineEngine (BLOOM's,\n"
    "                      MT-NLG's): plain 1F1B, its four one-way transfers a\n"
    "                      cycle each a blocking send/recv both stages sit in, the\n"
    "                      bytes by --legacy-p2p (docs/cost-model.md \"DeepSpeed's\n"
    "                      pipeline engine\")\n"
    "  --torch-pipelining  the stages run torch.distributed.pipelining (torchtitan's):\n"
    "                      its interleaved 1F1B waits on every chunk's exchange\n"
    "                      before the next op (docs/cost-model.md \"Interleaved\n"
    "                      1F1B\"); --torchtitan and --target torchtitan set it\n"
    "  --nccl-no-tree      the stack ran NCCL with its tree turned off\n"
    "                      (NCCL_ALGO=^tree, AMP's fork): every all-reduce priced\n"
    "                      on the ring (docs/cost-model.md \"NCCL's tree on two\n"
    "                      nodes\")\n"
    "  --eager             the model's modules run eagerly, no torch.compile\n"
    "                      (torchtitan's default): RMSNorm, RoPE and SwiGLU as\n"
    "                      unfused ATen kernels (docs/cost-model.md, \"Eager modules\")\n"
    "  --target STACK      price the plan as STACK runs it (megatron, deepspeed,\n"
    "                      torchtitan, galvatron: its defaults for what the plan\n"
    "                      and the flags leave open, as plan --target) and refuse\n"
    "                      a plan STACK cannot run, naming the rule (exit 4); the\n"
    "                      comparison search stays in STACK's space; a --torchtitan\n"
    "                      configuration is torchtitan's; default: a --plan\n"
    "                      document's target (plan --target), else none; any: none\n"
    "  --paper-cost        the seed papers' formulas instead of the stacks'\n"
    "                      (docs/cost-model.md, \"Cost modes\")\n"
    "  --no-host-floor     the GPU's time alone, no eager PyTorch host dispatch\n"
    "                      floor (a C executor, CUDA graphs)\n"
    "  --host-op-us US     the stack's host time per eager op, microseconds, from\n"
    "                      1 to 100000, measured on its own host and PyTorch\n"
    "                      (default 57.2: PyTorch 2.11 on an H100 host, x 2.75\n"
    "                      on a GB200's Grace host; a given figure is its own\n"
    "                      host's, not scaled; docs/cost-model.md \"Host\n"
    "                      dispatch\");\n"
    "                      default: a --plan document's host_op_us\n"
    "  --attn-kernel KERNEL\n"
    "                      the fused attention kernel the stack runs, priced on\n"
    "                      Hopper and the A100 at its published share by head\n"
    "                      dimension and keys: flash2 or 1 (FlashAttention-2),\n"
    "                      cudnn or 2 (cuDNN's fused SDPA, TE's FusedAttention),\n"
    "                      flash1 or 3 (FlashAttention v1's CUDA kernel),\n"
    "                      flash1-triton or 4 (its Triton port, llm-foundry's);\n"
    "                      default the GPU's one figure (the A100: FlashAttention-2);\n"
    "                      on Hopper every share at a dense step's settled clock,\n"
    "                      but flash2's at its burst clock on a 700 W part;\n"
    "                      flash1 runs a head at 32, 64 or 128, flash2 at the next\n"
    "                      multiple of 32 (their code pads the head)\n"
    "\n"
    "Precision and overlap (docs/cost-model.md, \"Precision and overlap\"; default:\n"
    "what --megatron-args / --torchtitan say, else Tessel's executor's):\n"
    "  --grad-reduce-bytes N\n"
    "                      gradient bytes in the buffer and the DP/SDP reduce: 2\n"
    "                      (bf16/fp16) or 4 (fp32 main gradients)\n"
    "  --grad-buf-bytes N  the gradient buffer's bytes where not the reduce's: 2\n"
    "                      (a 16-bit .grad cast to fp32 for the reduce: DeepSpeed's\n"
    "                      fp32_allreduce) or 4 (BF16_Optimizer's fp32 buffer cast\n"
    "                      to bf16 for it); what the weight gradients accumulate\n"
    "                      into, the memory keeps and the step reads\n"
    "  --tp-whole-heads    an unfused attention core keeps all its heads on every TP\n"
    "                      rank, each 1/TP as wide: its scores not split by TP (AMP's\n"
    "                      fork's TransGAN attention); refused under any --target\n"
    "  --ds-grad-bucket    the DP all-reduce through DeepSpeed's bucket without ZeRO:\n"
    "                      flatten, 1/DP scale after the reduce, copy back into each\n"
    "                      .grad (AMP's fork; DeepSpeed's ZeRO-0)\n"
    "  --ds-bf16-optimizer DeepSpeed's BF16_Optimizer under pipeline stages: every\n"
    "                      micro-batch's .grad cast and added into the fp32 buffer\n"
    "                      and kept until the next backward (2 B per parameter),\n"
    "                      the whole buffer all-reduced over DP (ZeRO-1's reduce-\n"
    "                      scatter otherwise), the tied gradient in its bytes (BLOOM)\n"
    "  --launch-blocking   every kernel launch synchronous (CUDA_LAUNCH_BLOCKING=1):\n"
    "                      each op's host dispatch added to the GPU's time, not run\n"
    "                      ahead of it (BLOOM's scripts)\n"
    "  --ds-wall-clock     DeepSpeed's synchronising timers around every pipeline\n"
    "                      instruction (wall_clock_breakdown): each forward and\n"
    "                      backward starts on an idle GPU, each exchange is\n"
    "                      dispatched onto one (AMP's fork)\n"
    "  --ds-zero3-v03      DeepSpeed 0.3's ZeRO-3 on the SDP level (stage3.py of\n"
    "                      v0.3.13-0.4 under DeepSpeedExamples' Megatron recipe): an\n"
    "                      all-gather per weight, again in a full recompute, a\n"
    "                      reduce-scatter per tensor, all exposed, the list API's\n"
    "                      copies per rank (Narayanan 2021 Table 2's ZeRO-3 rows)\n"
    "  --fp8-amax-tp-only  TE before v1.6 under NVTE_DP_AMAX_REDUCE_INTERVAL=0 and\n"
    "                      NVTE_ASYNC_AMAX_REDUCTION=1 (NeMo 24.03's launcher):\n"
    "                      delayed scaling's amax all-reduce over the TP group only\n"
    "                      (none at TP 1), asynchronous: the forward's waited by the\n"
    "                      next region's first module, the backward's hidden; with\n"
    "                      --fp8 delayed (docs/cost-model.md \"Delayed scaling's\n"
    "                      amax reduction over TP\")\n"
    "  --fp8-dpa           FP8 attention (TE's fp8_dpa, Megatron-LM's FP8 dot-product\n"
    "                      attention): cuDNN's FP8 kernel, whose backward computes a\n"
    "                      causal sliding window's whole causal square on B200 /\n"
    "                      GB200; with --fp8 (docs/cost-model.md \"FP8 attention on\n"
    "                      a sliding window\")\n"
    "  --unfused-elementwise\n"
    "                      Megatron-LM v1.1.5 without its fusion flags under PyTorch\n"
    "                      1.7 (AMP's fork): each bias added by a kernel of its own,\n"
    "                      the causal mask by masked_fill_ each pass, the context's\n"
    "                      permute copy\n"
    "  --fp32              fp32 training, no mixed precision: GEMMs at the GPU's TF32\n"
    "                      rate (fp32 where it has no TF32; fp32, TF32 off, under\n"
    "                      --target megatron, deepspeed or torchtitan), every activation,\n"
    "                      collective and memory-bound kernel at 4 bytes, 16 B of\n"
    "                      model states per parameter (Galvatron-BMW's runs)\n"
    "  --tf32              with --fp32 (or an fp32 plan or configuration): the stack\n"
    "                      runs fp32 matmuls as TF32 (its script sets allow_tf32 True):\n"
    "                      the GEMMs at the GPU's TF32 rate under any target (without\n"
    "                      megatron, deepspeed or torchtitan they are already: it\n"
    "                      changes nothing, and the plan says so); refused with a\n"
    "                      16-bit plan or configuration, whose GEMMs are never TF32,\n"
    "                      and where no GPU of the cluster has TF32\n"
    "  --fp16              fp16 mixed precision with a dynamic loss scaler (the\n"
    "                      default where a GPU of the cluster has no bf16: V100, T4,\n"
    "                      TITAN RTX, 2080 Ti; else bf16): the step's unscale and inf\n"
    "                      check under megatron; refused with --fp32 or FP8\n"
    "  --no-fp32-master    no fp32 master weights: 16-bit Adam states\n"
    "  --bf16-moments      Adam's moments in bf16 beside fp32 master weights\n"
    "                      (Megatron-LM's precision-aware optimizer)\n"
    "  --lazy-grads        the gradients exist from each chunk's first backward to\n"
    "                      the step (PyTorch FSDP), not in a buffer kept all along\n"
    "                      (Megatron-LM): interleaved 1F1B's peak\n"
    "  --sdp-nosync        the SDP (FSDP) level kept unsharded between micro-batches\n"
    "                      where PP > 1 (torchtitan's FSDP2 under PP): weights\n"
    "                      gathered once per iteration, gradients accumulated\n"
    "                      unsharded and reduce-scattered after the last\n"
    "                      micro-batch; on under --target torchtitan and --torchtitan\n"
    "  --sdp-layer-roots   the SDP (FSDP) level as fairscale 0.4.5's FSDP with each\n"
    "                      layer its own root, its attention and MLP units inside\n"
    "                      (Galvatron-BMW): the first unit's gather exposed in the\n"
    "                      forward, the others' under compute, the backward's\n"
    "                      prefetched beside the reduce-scatters; needs an SDP level\n"
    "  --sdp-keep-weights  the SDP (FSDP) level keeps each layer's gathered weights\n"
    "                      from its forward to its backward (torch FSDP's\n"
    "                      SHARD_GRAD_OP): one gather per micro-batch, none in the\n"
    "                      backward, every layer's gathered weights held at the\n"
    "                      peak, gradients reduce-scattered every micro-batch;\n"
    "                      needs an SDP level; torchtitan's fsdp_reshard_after_forward\n"
    "                      \"never\" under --target torchtitan (its export writes it)\n"
    "  --overlap-grad-reduce, --no-overlap-grad-reduce\n"
    "                      the DP gradient reduce under the backward, or after it\n"
    "  --overlap-param-gather\n"
    "                      ZeRO-1's weight all-gather under the next forward; on an\n"
    "                      SDP level Megatron-FSDP's gathers, prefetched under each\n"
    "                      pass's compute (docs/cost-model.md \"Megatron-FSDP's\n"
    "                      prefetched gathers\")\n"
    "  --overlap-tp-dgrad, --no-overlap-tp-dgrad\n"
    "                      the backward's TP collectives under the column-parallel\n"
    "                      gradient GEMMs (Megatron-LM's async dgrad all-reduce), or\n"
    "                      exposed as the forward's (docs/cost-model.md \"TP in the\n"
    "                      backward\")\n"
    "  --tp-comm-overlap   TransformerEngine's userbuffers (Megatron-LM\n"
    "                      --tp-comm-overlap): each SP all-gather and reduce-scatter\n"
    "                      of the attention and MLP blocks under its own GEMM, in t\n"
    "                      chunks, forward and backward; with SP only\n"
    "                      (docs/cost-model.md \"TP communication overlap\")\n"
    "  --async-tp          torch's micro-pipelined TP (torchtitan's AsyncTP,\n"
    "                      enable_async_tensor_parallel): the forward's SP\n"
    "                      all-gathers and reduce-scatters and the backward's dY\n"
    "                      all-gathers under their GEMMs, in t chunks; with SP\n"
    "                      and torch.compile only (docs/cost-model.md \"torch's\n"
    "                      micro-pipelined TP\")\n"
    "  --unfused-grad-accum\n"
    "                      each micro-batch's weight gradients added into the\n"
    "                      buffer by a kernel of their own (PyTorch's AccumulateGrad;\n"
    "                      Megatron-LM before 2022-02; docs/cost-model.md \"Gradient\n"
    "                      accumulation\")\n"
    "  --legacy-p2p        Megatron-LM's p2p before Megatron-core (2021-2022), and\n"
    "                      DeepSpeed's pipeline engine under Megatron-DeepSpeed: each\n"
    "                      TP rank sends 1/t of the boundary, all-gathered on\n"
    "                      arrival; every exchange blocks, interleaved too\n"
    "                      (docs/cost-model.md \"Between stages\"; --target deepspeed\n"
    "                      sets it where TP runs beside stages)\n"
    "  --fp8 RECIPE        the blocks' linear GEMMs in FP8: delayed, tensorwise,\n"
    "                      blockwise or mxfp8 (docs/cost-model.md \"FP8\"), or in\n"
    "                      FP4: nvfp4 (\"NVFP4\"); refused on GPUs without FP8\n"
    "                      (nvfp4: FP4) tensor cores\n"
    "  --no-fp8            bf16 GEMMs, whatever the imported plan says\n"
    "  --fp8-param-gather  with FP8: the weights themselves in FP8, all-gathered in\n"
    "                      FP8 (Megatron-LM --fp8-param-gather; nvfp4: in FP4,\n"
    "                      --fp4-param-gather)\n"
    "  --fp8-impl IMPL     who runs the FP8 recipe: te (Transformer Engine, the\n"
    "                      default: FP8 weight copies cast once per iteration, FP8\n"
    "                      inputs saved) or torchao (torchtitan: weights cast at\n"
    "                      every use, bf16 inputs saved; tensorwise and mxfp8 only;\n"
    "                      an --torchtitan import sets it); with FP8 only\n"
    "  --loss-impl IMPL    how the LM loss runs, its memory per logit and its time\n"
    "                      (its kernels' bytes per logit): exec (Tessel's executor,\n"
    "                      the default), torch (eager cross_entropy over\n"
    "                      logits.float(): torchtitan, an --torchtitan import),\n"
    "                      megatron (vocab_parallel_cross_entropy: a --megatron-args\n"
    "                      import), te (TE's fused loss), torch-compile (torch's\n"
    "                      under torch.compile: torchtitan since 2025),\n"
    "                      fused-xentropy (flash-attn's / apex's xentropy kernel,\n"
    "                      in-place backward), composer (llm-foundry under\n"
    "                      Composer: that kernel, a new gradient, and Composer's\n"
    "                      two train metrics, each torch's cross-entropy over the\n"
    "                      logits, every micro-batch) or megatron-fused\n"
    "                      (Megatron-core's --cross-entropy-loss-fusion, native:\n"
    "                      megatron's steps under torch.compile, a --megatron-args\n"
    "                      import with it); --autocast is torch's\n"
    "  --norm-impl IMPL    whose fused LayerNorm kernels the stack runs\n"
    "                      (docs/cost-model.md \"apex's LayerNorm backward\"): te\n"
    "                      (Transformer Engine's, or apex's persistent\n"
    "                      FastLayerNorm: two kernels backward; the default) or\n"
    "                      apex (apex's FusedLayerNorm, Megatron-LM 2021's\n"
    "                      MixedFusedLayerNorm: three kernels backward, 4 B an\n"
    "                      element more)\n"
    "  --opt-step STEP     the stack's optimizer step (docs/cost-model.md \"The step\n"
    "                      as the stack runs it\"): fused (one Adam kernel, Tessel's\n"
    "                      executor; the default), megatron (Megatron-core, bf16:\n"
    "                      fp32 main grads, clip norm and scale, Adam, param copy,\n"
    "                      grad buffer zeroed; Megatron-core's modules too: under\n"
    "                      FP8 but delayed, linear_proj and the shared experts'\n"
    "                      FC1 (latent attention's down projections under a\n"
    "                      layernorm recompute) keep their bf16 input and cast it\n"
    "                      again backward), megatron-fp16 (Megatron-LM\n"
    "                      2021-22, --fp16: unscale and inf check, no clip scale),\n"
    "                      torch (torch.optim.AdamW foreach + clip_grad_norm_,\n"
    "                      torchtitan; its interleaved hops block, as\n"
    "                      torch.distributed.pipelining runs them),\n"
    "                      deepspeed-fp16 (DeepSpeed's unfused fp16 optimizer,\n"
    "                      tensor by tensor: AMP's Megatron-LM v1.1.5 fork),\n"
    "                      megatron-core-fp16 (megatron's passes with --fp16's\n"
    "                      unscale and inf check: an fp16 plan under megatron),\n"
    "                      torch-loop (torch.optim.Adam's per-tensor loop of\n"
    "                      PyTorch 1.10-1.12 and zero_grad's zero_, no clipping:\n"
    "                      Galvatron-BMW's trainers) or composer (Composer\n"
    "                      0.15+'s DecoupledAdamW under FSDP1 use_orig_params: a\n"
    "                      loop over each rank's pieces of the original tensors,\n"
    "                      each tensor's step count read back first; llm-foundry)\n"
    "  --moe-imbalance X   MoE layers: the busiest expert routed X >= 1 times the\n"
    "                      mean tokens (default: the plan's, else 1, an even split)\n"
    "  --bf16-layers-start N, --bf16-layers-end N\n"
    "                      with FP8/NVFP4: the model's first / last N blocks kept\n"
    "                      bf16 (Megatron-LM --first-last-layers-bf16\n"
    "                      --num-layers-at-start/end-in-bf16; a hybrid's blocks one\n"
    "                      each; default: the plan's or --megatron-args line's)\n"
    "  --moe-bf16-experts  with FP8: the routed experts' grouped GEMMs in bf16\n"
    "                      (torchtitan without its grouped-experts converter)\n"
    "  --moe-fp8-dispatch  with FP8 experts: the dispatch all-to-all (and the\n"
    "                      combine's gradient) in FP8, as DeepSeek-V3\n"
    "  --moe-alltoall-dispatcher\n"
    "                      Megatron-LM's all-to-all token dispatcher: its counts,\n"
    "                      sync, routing-weight all-to-all and second permutation\n"
    "                      (default: the permutation and two all-to-alls alone)\n"
    "  --moe-flex-dispatcher\n"
    "                      a flex dispatcher (HybridEP, DeepEP): across NVLink domains\n"
    "                      one network copy per token and destination domain\n"
    "                      (default: NCCL's all-to-all, a copy per routed expert)\n"
    "  --moe-flex-backend NAME\n"
    "                      with --moe-flex-dispatcher, its back end: hybridep (each\n"
    "                      MoE forward first gathers the EP group's routing map,\n"
    "                      scans it and, dropless, syncs) or deepep (the layout\n"
    "                      computed locally); default: Megatron-LM's, deepep\n"
    "                      (hybridep where the experts are padded to capacity)\n"
    "  --moe-a2a-overlap   Megatron-LM's --overlap-moe-expert-parallel-comm: one\n"
    "                      micro-batch's EP all-to-alls under another's compute in\n"
    "                      the 1F1B steady state (PP 1 or interleaved)\n"
    "  --moe-a2a-wgrad-inline\n"
    "                      with it, without --delay-wgrad-compute: each backward\n"
    "                      node computes its own weight gradients (default: deferred,\n"
    "                      as Megatron-Bridge's moe_a2a_overlap runs it)\n"
    "  --moe-unfused-permute\n"
    "                      MCore v0.8's unfused token permutation: argsort and\n"
    "                      gather; the combine's scatter into zeros, routing-weight\n"
    "                      product and top-k sum, each a kernel (default: the fused\n"
    "                      permute and unpermute, Transformer Engine's)\n"
    "  --moe-fused-mlp     the experts' FC1, activation and FC2 through Transformer\n"
    "                      Engine's op fuser (Megatron-LM use_transformer_engine_op_fuser,\n"
    "                      Megatron-Bridge cutedsl_fused_grouped_mlp): none of the\n"
    "                      unfused path's eager clamp, offset copy or per-expert bias\n"
    "                      (default: that path; --moe-fp8-dispatch prices it fused)\n"
    "  --moe-fused-srelu   the non-gated experts' squared ReLU takes the routing weights\n"
    "                      in its one fused kernel (Megatron-LM\n"
    "                      use_fused_weighted_squared_relu, every Megatron-Bridge\n"
    "                      Nemotron-H recipe): no eager product and cast after it\n"
    "                      (default: Megatron-LM's eager product)\n"
    "  --vp-group N        interleaved plans: N micro-batches per group of Megatron-LM's\n"
    "                      schedule (--microbatch-group-size-per-virtual-pipeline-stage;\n"
    "                      default: the plan's, else pp; pp <= N <= micro-batches)\n"
    "  --cpu-offload-layers N\n"
    "                      the first N Transformer layers' activations offloaded to\n"
    "                      host memory between their forward and backward, as\n"
    "                      Megatron-LM's --cpu-offloading-num-layers N (default: the\n"
    "                      plan's; one stage, no recompute)\n"
    "\n"
    "  --no-search         do not run the search to compare with\n"
    "  --server ADDR       evaluate in tesseld at ADDR (also before `eval`, or\n"
    "                      TESSEL_SERVER); --token T and --timeout S as for plan\n"
    "  --local             evaluate in this process even when a server is named\n"
    "  --json              {model, cluster, plan, search: {plan}, ratio} as JSON\n";

enum {
    OPT_MODEL = TSL_OPT_HELP + 1,
    OPT_HF,
    OPT_SEQ,
    OPT_CLUSTER,
    OPT_MEMORY,
    OPT_TP,
    OPT_PP,
    OPT_DP,
    OPT_SDP,
    OPT_MBS,
    OPT_MICRO,
    OPT_BATCH,
    OPT_CKPT,
    OPT_SP,
    OPT_ZERO,
    OPT_CP,
    OPT_CP_COMM,
    OPT_CP_SHARD,
    OPT_EP,
    OPT_ETP,
    OPT_CAPACITY,
    OPT_PAD,
    OPT_IMBALANCE,
    OPT_SCHEDULE,
    OPT_RECOMPUTE_MODULES,
    OPT_CUDA_GRAPH_MODULES,
    OPT_MODULE_PRECISION,
    OPT_BF16_MOMENTS,
    OPT_LAZY_GRADS,
    OPT_INTERLEAVE,
    OPT_LPS,
    OPT_STRATEGY,
    OPT_PLAN,
    OPT_MEGATRON,
    OPT_TORCHTITAN,
    OPT_NO_SEARCH,
    OPT_LOCAL,
    OPT_NAME,
    OPT_PROFILE,
    OPT_GALVATRON,
    OPT_AMP,
    OPT_UNFUSED,
    OPT_NO_DROPOUT,
    OPT_MTP_LAYERS,
    OPT_NO_MTP,
    OPT_AUTOCAST,
    OPT_DOUBLE_FWD,
    OPT_EAGER,
    OPT_PAPER,
    OPT_TARGET,
    OPT_NO_HOST_FLOOR,
    OPT_HOST_OP_US,
    OPT_GRAD_BYTES,
    OPT_GRAD_BUF_BYTES,
    OPT_DS_GRAD_BUCKET,
    OPT_TP_WHOLE_HEADS,
    OPT_SDP_NOSYNC,
    OPT_SDP_LAYER_ROOTS,
    OPT_SDP_KEEP_WEIGHTS,
    OPT_DS_BF16_OPTIMIZER,
    OPT_LAUNCH_BLOCKING,
    OPT_DS_WALL_CLOCK,
    OPT_DS_ZERO3_V03,
    OPT_FP8_AMAX_TP_ONLY,
    OPT_FP8_DPA,
    OPT_UNFUSED_ELEMENTWISE,
    OPT_FP32,
    OPT_TF32,
    OPT_FP16,
    OPT_ATTN_KERNEL,
    OPT_NO_MASTER,
    OPT_OVERLAP_GRAD,
    OPT_NO_OVERLAP_GRAD,
    OPT_OVERLAP_PARAM,
    OPT_OVERLAP_TP,
    OPT_NO_OVERLAP_TP,
    OPT_UNFUSED_ACCUM,
    OPT_LEGACY_P2P,
    OPT_TP_COMM_OVERLAP,
    OPT_ASYNC_TP,
    OPT_FP8,
    OPT_NO_FP8,
    OPT_FP8_PARAM_GATHER,
    OPT_FP8_IMPL,
    OPT_LOSS_IMPL,
    OPT_OPT_STEP,
    OPT_NORM_IMPL,
    OPT_TP_SYNC,
    OPT_DS_PIPE_P2P,
    OPT_DS_PIPE_ENGINE,
    OPT_TORCH_PIPELINING,
    OPT_NCCL_NO_TREE,
    OPT_MOE_BF16,
    OPT_BF16_START,
    OPT_BF16_END,
    OPT_MOE_FP8_DISPATCH,
    OPT_MOE_ALLTOALL,
    OPT_MOE_FLEX,
    OPT_MOE_FLEX_BACKEND,
    OPT_MOE_UNFUSED_PERMUTE,
    OPT_MOE_FUSED_MLP,
    OPT_MOE_FUSED_SRELU,
    OPT_MOE_A2A_OVERLAP,
    OPT_MOE_A2A_WGRAD_INLINE,
    OPT_VP_GROUP,
    OPT_CPU_OFFLOAD,
};

static const struct option eval_long[] = {
    TSL_REMOTE_LONG_OPTS,
    {"model", required_argument, 0, OPT_MODEL},
    {"hf-config", required_argument, 0, OPT_HF},
    {"name", required_argument, 0, OPT_NAME},
    {"seq-len", required_argument, 0, OPT_SEQ},
    {"cluster", required_argument, 0, OPT_CLUSTER},
    {"memory", required_argument, 0, OPT_MEMORY},
    {"tp", required_argument, 0, OPT_TP},
    {"pp", required_argument, 0, OPT_PP},
    {"dp", required_argument, 0, OPT_DP},
    {"sdp", required_argument, 0, OPT_SDP},
    {"mbs", required_argument, 0, OPT_MBS},
    {"micro", required_argument, 0, OPT_MICRO},
    {"batch", required_argument, 0, OPT_BATCH},
    {"ckpt", required_argument, 0, OPT_CKPT},
    {"sp", no_argument, 0, OPT_SP},
    {"zero", required_argument, 0, OPT_ZERO},
    {"cp", required_argument, 0, OPT_CP},
    {"cp-comm", required_argument, 0, OPT_CP_COMM},
    {"cp-shard", no_argument, 0, OPT_CP_SHARD},
    {"ep", required_argument, 0, OPT_EP},
    {"etp", required_argument, 0, OPT_ETP},
    {"moe-capacity-factor", required_argument, 0, OPT_CAPACITY},
    {"moe-pad-to-capacity", no_argument, 0, OPT_PAD},
    {"moe-imbalance", required_argument, 0, OPT_IMBALANCE},
    {"schedule", required_argument, 0, OPT_SCHEDULE},
    {"recompute-modules", required_argument, 0, OPT_RECOMPUTE_MODULES},
    {"cuda-graph-modules", required_argument, 0, OPT_CUDA_GRAPH_MODULES},
    {"module-precision", required_argument, 0, OPT_MODULE_PRECISION},
    {"bf16-moments", no_argument, 0, OPT_BF16_MOMENTS},
    {"lazy-grads", no_argument, 0, OPT_LAZY_GRADS},
    {"interleave", required_argument, 0, OPT_INTERLEAVE},
    {"layers-per-stage", required_argument, 0, OPT_LPS},
    {"strategy", required_argument, 0, OPT_STRATEGY},
    {"plan", required_argument, 0, OPT_PLAN},
    {"megatron-args", required_argument, 0, OPT_MEGATRON},
    {"torchtitan", required_argument, 0, OPT_TORCHTITAN},
    {"no-search", no_argument, 0, OPT_NO_SEARCH},
    {"local", no_argument, 0, OPT_LOCAL},
    {"profile", required_argument, 0, OPT_PROFILE},
    {"galvatron-profile", required_argument, 0, OPT_GALVATRON},
    {"amp-profile", required_argument, 0, OPT_AMP},
    {"unfused-attn", no_argument, 0, OPT_UNFUSED},
    {"no-dropout", no_argument, 0, OPT_NO_DROPOUT},
    {"mtp-layers", required_argument, 0, OPT_MTP_LAYERS},
    {"no-mtp", no_argument, 0, OPT_NO_MTP},
    {"autocast", no_argument, 0, OPT_AUTOCAST},
    {"double-block-fwd", no_argument, 0, OPT_DOUBLE_FWD},
    {"eager", no_argument, 0, OPT_EAGER},
    {"paper-cost", no_argument, 0, OPT_PAPER},
    {"target", required_argument, 0, OPT_TARGET},
    {"no-host-floor", no_argument, 0, OPT_NO_HOST_FLOOR},
    {"host-op-us", required_argument, 0, OPT_HOST_OP_US},
    {"grad-reduce-bytes", required_argument, 0, OPT_GRAD_BYTES},
    {"grad-buf-bytes", required_argument, 0, OPT_GRAD_BUF_BYTES},
    {"ds-grad-bucket", no_argument, 0, OPT_DS_GRAD_BUCKET},
    {"tp-whole-heads", no_argument, 0, OPT_TP_WHOLE_HEADS},
    {"sdp-nosync", no_argument, 0, OPT_SDP_NOSYNC},
    {"sdp-layer-roots", no_argument, 0, OPT_SDP_LAYER_ROOTS},
    {"sdp-keep-weights", no_argument, 0, OPT_SDP_KEEP_WEIGHTS},
    {"ds-bf16-optimizer", no_argument, 0, OPT_DS_BF16_OPTIMIZER},
    {"launch-blocking", no_argument, 0, OPT_LAUNCH_BLOCKING},
    {"ds-wall-clock", no_argument, 0, OPT_DS_WALL_CLOCK},
    {"ds-zero3-v03", no_argument, 0, OPT_DS_ZERO3_V03},
    {"fp8-amax-tp-only", no_argument, 0, OPT_FP8_AMAX_TP_ONLY},
    {"fp8-dpa", no_argument, 0, OPT_FP8_DPA},
    {"unfused-elementwise", no_argument, 0, OPT_UNFUSED_ELEMENTWISE},
    {"fp32", no_argument, 0, OPT_FP32},
    {"tf32", no_argument, 0, OPT_TF32},
    {"fp16", no_argument, 0, OPT_FP16},
    {"attn-kernel", required_argument, 0, OPT_ATTN_KERNEL},
    {"no-fp32-master", no_argument, 0, OPT_NO_MASTER},
    {"overlap-grad-reduce", no_argument, 0, OPT_OVERLAP_GRAD},
    {"no-overlap-grad-reduce", no_argument, 0, OPT_NO_OVERLAP_GRAD},
    {"overlap-param-gather", no_argument, 0, OPT_OVERLAP_PARAM},
    {"overlap-tp-dgrad", no_argument, 0, OPT_OVERLAP_TP},
    {"no-overlap-tp-dgrad", no_argument, 0, OPT_NO_OVERLAP_TP},
    {"unfused-grad-accum", no_argument, 0, OPT_UNFUSED_ACCUM},
    {"legacy-p2p", no_argument, 0, OPT_LEGACY_P2P},
    {"tp-comm-overlap", no_argument, 0, OPT_TP_COMM_OVERLAP},
    {"async-tp", no_argument, 0, OPT_ASYNC_TP},
    {"fp8", required_argument, 0, OPT_FP8},
    {"no-fp8", no_argument, 0, OPT_NO_FP8},
    {"fp8-param-gather", no_argument, 0, OPT_FP8_PARAM_GATHER},
    {"fp8-impl", required_argument, 0, OPT_FP8_IMPL},
    {"loss-impl", required_argument, 0, OPT_LOSS_IMPL},
    {"opt-step", required_argument, 0, OPT_OPT_STEP},
    {"norm-impl", required_argument, 0, OPT_NORM_IMPL},
    {"tp-sync", no_argument, 0, OPT_TP_SYNC},
    {"ds-pipe-p2p", no_argument, 0, OPT_DS_PIPE_P2P},
    {"ds-pipe-engine", no_argument, 0, OPT_DS_PIPE_ENGINE},
    {"torch-pipelining", no_argument, 0, OPT_TORCH_PIPELINING},
    {"nccl-no-tree", no_argument, 0, OPT_NCCL_NO_TREE},
    {"moe-bf16-experts", no_argument, 0, OPT_MOE_BF16},
    {"bf16-layers-start", required_argument, 0, OPT_BF16_START},
    {"bf16-layers-end", required_argument, 0, OPT_BF16_END},
    {"moe-fp8-dispatch", no_argument, 0, OPT_MOE_FP8_DISPATCH},
    {"moe-alltoall-dispatcher", no_argument, 0, OPT_MOE_ALLTOALL},
    {"moe-flex-dispatcher", no_argument, 0, OPT_MOE_FLEX},
    {"moe-flex-backend", required_argument, 0, OPT_MOE_FLEX_BACKEND},
    {"moe-unfused-permute", no_argument, 0, OPT_MOE_UNFUSED_PERMUTE},
    {"moe-fused-mlp", no_argument, 0, OPT_MOE_FUSED_MLP},
    {"moe-fused-srelu", no_argument, 0, OPT_MOE_FUSED_SRELU},
    {"moe-a2a-overlap", no_argument, 0, OPT_MOE_A2A_OVERLAP},
    {"moe-a2a-wgrad-inline", no_argument, 0, OPT_MOE_A2A_WGRAD_INLINE},
    {"vp-group", required_argument, 0, OPT_VP_GROUP},
    {"cpu-offload-layers", required_argument, 0, OPT_CPU_OFFLOAD},
    {0, 0, 0, 0},
};

/* "4,8,8,6" into cfg->counts. */
static int parse_counts(const char *text, tsl_eval_cfg_t *cfg, tsl_err_t *err)
{
    char buf[512], shown[TSL_ERR_SHOWN_MAX(40)];
    if (snprintf(buf, sizeof buf, "%s", text) >= (int)sizeof buf)
        return tsl_err_set(err, "layers-per-stage: longer than %zu characters", sizeof buf - 1);
    cfg->n_counts = 0;
    /* every entry a count: "13,,13" (a slip) was read as 13,13 */
    for (char *rest = buf, *tok; (tok = strsep(&rest, ",")) != NULL;) {
        if (!*tok)
            return tsl_err_set(err, "layers-per-stage: an empty entry in '%s'",
                               tsl_err_shown(text, 40, shown, sizeof shown));
        if (cfg->n_counts == TSL_PLAN_MAX_STAGES)
            return tsl_err_set(err, "layers-per-stage: more than %u stages", TSL_PLAN_MAX_STAGES);
        if (tsl_parse_u32("layers-per-stage", tok, 1, TSL_PLAN_MAX_LAYERS,
                          &cfg->counts[cfg->n_counts++], err) != 0)
            return -1;
    }
    return 0;
}

static int parse_ckpt(const char *text, tsl_eval_cfg_t *cfg, tsl_err_t *err)
{
    if (strcmp(text, "full") == 0)
        cfg->ckpt = TSL_EVAL_CKPT_FULL;
    else if (strcmp(text, "selective") == 0)
        cfg->ckpt = TSL_EVAL_CKPT_SELECTIVE;
    else if (strcmp(text, "none") == 0)
        cfg->ckpt = TSL_EVAL_CKPT_NONE;
    else
        return tsl_choice_refused("ckpt", text, "full, selective or none", err);
    return 0;
}

/* --schedule NAME: the names plan documents use (pipesim.h). */
static int parse_schedule(const char *text, tsl_eval_cfg_t *cfg, tsl_err_t *err)
{
    int sc = tsl_pipesim_sched_parse(text);
    if (sc < 0)
        return tsl_choice_refused("schedule", text, "1f1b, interleaved, zbh1, zbv or dualpipev",
                                  err);
    cfg->schedule = (uint32_t)sc;
    return 0;
}

/* --recompute-modules LIST: core_attn is the attention core's selective
 * recompute (--ckpt selective, applied by check_sources), the rest the plan's
 * modules. */
static int parse_modules(const char *text, tsl_eval_opts_t *eo, tsl_err_t *err)
{
    return tsl_recompute_modules_flag(text, &eo->cfg.knobs.recompute_modules, &eo->recompute_core,
                                      err);
}

/* The flags that set every layer's strategy, which --strategy gives whole; NULL
 * for the others. */
static const char *layer_flag_name(int opt)
{
    switch (opt) {
    case OPT_TP: return "--tp";
    case OPT_DP: return "--dp";
    case OPT_SDP: return "--sdp";
    case OPT_CKPT: return "--ckpt";
    case OPT_SP: return "--sp";
    case OPT_ZERO: return "--zero";
    default: return NULL;
    }
}

/* The plan flags; 0 applied, 1 not one. */
static int plan_flag(int opt, tsl_eval_opts_t *eo, tsl_err_t *err)
{
    tsl_eval_cfg_t *c = &eo->cfg;
    uint32_t zero;
    eo->have_flags = true;
    const char *layer = layer_flag_name(opt);
    if (layer && !eo->layer_flag)
        eo->layer_flag = layer;
    switch (opt) {
    case OPT_TP: return tsl_parse_u32("tp", optarg, 1, 1u << 16, &c->tp, err);
    case OPT_PP: return tsl_parse_u32("pp", optarg, 1, TSL_PLAN_MAX_STAGES, &c->pp, err);
    case OPT_DP: return tsl_parse_u32("dp", optarg, 1, 1u << 16, &c->dp, err);
    case OPT_SDP: return tsl_parse_u32("sdp", optarg, 1, 1u << 16, &c->sdp, err);
    case OPT_MBS: return tsl_parse_u32("mbs", optarg, 1, 1u << 20, &c->mbs, err);
    case OPT_MICRO: return tsl_parse_u32("micro", optarg, 1, 1u << 16, &c->n_micro, err);
    case OPT_BATCH: return tsl_parse_u32("batch", optarg, 1, 1u << 24, &c->global_batch, err);
    case OPT_CKPT: return parse_ckpt(optarg, c, err);
    case OPT_SP: c->sp = true; return 0;
    case OPT_ZERO:
        if (tsl_parse_u32("zero", optarg, 0, 2, &zero, err) != 0)
            return -1;
        c->zero = (uint8_t)zero;
        return 0;
    case OPT_CP: return tsl_parse_u32("cp", optarg, 1, 1024, &c->knobs.cp, err);
    case OPT_CP_SHARD: c->cp_shard = true; return 0;
    case OPT_CP_COMM: {
        int comm = tsl_cp_comm_parse(optarg);
        if (comm < 0)
            return tsl_choice_refused("cp-comm", optarg, "p2p, a2a, allgather or torch-allgather",
                                      err);
        c->knobs.cp_comm = (uint32_t)comm;
        eo->cp_comm_given = true;
        return 0;
    }
    case OPT_EP: return tsl_parse_u32("ep", optarg, 1, 1024, &c->knobs.ep, err);
    case OPT_ETP: return tsl_parse_u32("etp", optarg, 1, 1024, &c->knobs.etp, err);
    case OPT_CAPACITY:
        return tsl_parse_double("moe-capacity-factor", optarg, 1e-6, 64, &c->knobs.moe_capacity,
                                err);
    case OPT_PAD: c->knobs.moe_pad = true; return 0;
    case OPT_SCHEDULE: return parse_schedule(optarg, c, err);
    case OPT_RECOMPUTE_MODULES: return parse_modules(optarg, eo, err);
    case OPT_CUDA_GRAPH_MODULES:
        return tsl_cuda_graph_modules_parse(optarg, &c->knobs.cuda_graph_modules, err);
    case OPT_MODULE_PRECISION: return tsl_module_prec_parse(optarg, &c->knobs.module_prec, err);
    case OPT_INTERLEAVE: return tsl_parse_u32("interleave", optarg, 1, 64, &c->interleave, err);
    case OPT_LPS: return parse_counts(optarg, c, err);
    case OPT_STRATEGY: eo->strategy = optarg; return 0;
    default: eo->have_flags = false; return 1;
    }
}

/* A gradient width in bytes (--grad-reduce-bytes, --grad-buf-bytes): 2 (the 16-bit
 * kind `narrow` names) or 4 (fp32). */
static int parse_grad_width(const char *flag, const char *arg, const char *narrow, uint32_t *out,
                            tsl_err_t *err)
{
    if (tsl_parse_u32(flag, arg, 2, 4, out, err) != 0)
        return -1;
    return tsl_grad_width_check(flag, *out, narrow, err); /* 3 */
}

/* 0 applied, 1 not an eval option, -1 bad value (err). */
static int eval_opt(int opt, tsl_eval_opts_t *eo, tsl_err_t *err)
{
    switch (opt) {
    case OPT_MODEL: eo->model = optarg; return 0;
    case OPT_HF: return tsl_path_opt("hf-config", optarg, &eo->hf_config, err);
    case OPT_NAME: eo->model_name = optarg; return tsl_model_name_check(optarg, err);
    case OPT_SEQ: return tsl_parse_u32("seq-len", optarg, 1, 1u << 20, &eo->seq_len, err);
    case OPT_CLUSTER: eo->cluster = optarg; return 0;
    case OPT_MEMORY: return tsl_parse_bytes("memory", optarg, &eo->mem_budget_bytes, err);
    case OPT_PLAN: return tsl_path_opt("plan", optarg, &eo->plan_file, err);
    case OPT_MEGATRON: eo->megatron_args = optarg; return 0;
    case OPT_TORCHTITAN: return tsl_path_opt("torchtitan", optarg, &eo->torchtitan, err);
    case OPT_NO_SEARCH: eo->no_search = true; return 0;
    case OPT_LOCAL: eo->local = true; return 0;
    case OPT_PROFILE: return tsl_path_opt("profile", optarg, &eo->profile, err);
    case OPT_GALVATRON:
        return tsl_path_opt("galvatron-profile", optarg, &eo->galvatron_profile, err);
    case OPT_AMP: return tsl_path_opt("amp-profile", optarg, &eo->amp_profile, err);
    case OPT_UNFUSED: eo->unfused_attn = true; return 0;
    case OPT_NO_DROPOUT: eo->no_dropout = true; return 0;
    case OPT_MTP_LAYERS: return tsl_parse_u32("mtp-layers", optarg, 1, 16, &eo->mtp_layers, err);
    case OPT_NO_MTP: eo->no_mtp = true; return 0;
    case OPT_AUTOCAST: eo->autocast = true; return 0;
    case OPT_DOUBLE_FWD: eo->double_block_fwd = true; return 0;
    case OPT_EAGER: eo->eager = true; return 0;
    case OPT_PAPER: eo->paper_cost = true; return 0;
    case OPT_TARGET:
        eo->target_given = true;
        return tsl_target_parse_flag(optarg, &eo->target, err);
    case OPT_NO_HOST_FLOOR: eo->no_host_floor = true; return 0;
    case OPT_HOST_OP_US:
        return tsl_parse_double("host-op-us", optarg, TSL_HOST_OP_MIN_US, TSL_HOST_OP_MAX_US,
                                &eo->host_op_us, err);
    case OPT_GRAD_BYTES:
        return parse_grad_width("grad-reduce-bytes", optarg, "bf16", &eo->grad_reduce_bytes, err);
    case OPT_GRAD_BUF_BYTES:
        return parse_grad_width("grad-buf-bytes", optarg, "a 16-bit .grad", &eo->grad_buf_bytes,
                                err);
    case OPT_ATTN_KERNEL: {
        int k = tsl_attn_kernel_parse(optarg);
        if (k <= 0)
            return tsl_choice_refused("attn-kernel", optarg,
                                      "flash2 (1), cudnn (2), flash1 (3) or flash1-triton (4)",
                                      err);
        eo->attn_kernel = (uint32_t)k;
        return 0;
    }
    case OPT_NO_MASTER: eo->no_fp32_master = true; return 0;
    case OPT_BF16_MOMENTS: eo->bf16_moments = true; return 0;
    case OPT_LAZY_GRADS: eo->lazy_grads = true; return 0;
    case OPT_OVERLAP_GRAD: eo->overlap_grad_reduce = true; return 0;
    case OPT_NO_OVERLAP_GRAD: eo->no_overlap_grad_reduce = true; return 0;
    case OPT_OVERLAP_PARAM: eo->overlap_param_gather = true; return 0;
    case OPT_OVERLAP_TP: eo->overlap_tp_dgrad = true; return 0;
    case OPT_NO_OVERLAP_TP: eo->no_overlap_tp_dgrad = true; return 0;
    case OPT_UNFUSED_ACCUM: eo->unfused_grad_accum = true; return 0;
    case OPT_LEGACY_P2P: eo->legacy_p2p = true; return 0;
    case OPT_TP_COMM_OVERLAP: eo->tp_comm_overlap = true; return 0;
    case OPT_ASYNC_TP: eo->async_tp = true; return 0;
    case OPT_FP8: {
        int rc = tsl_fp8_recipe_parse(optarg);
        if (rc <= 0)
            return tsl_choice_refused(
                "fp8", optarg, "a recipe (delayed, tensorwise, blockwise, mxfp8, nvfp4)", err);
        eo->fp8_recipe = (uint32_t)rc;
        return 0;
    }
    case OPT_NO_FP8: eo->no_fp8 = true; return 0;
    case OPT_FP8_PARAM_GATHER: eo->fp8_param_gather = true; return 0;
    case OPT_FP8_IMPL:
        eo->fp8_impl = tsl_fp8_impl_parse(optarg);
        if (eo->fp8_impl < 0)
            return tsl_choice_refused("fp8-impl", optarg, "te or torchao", err);
        return 0;
    case OPT_LOSS_IMPL:
        eo->loss_impl = tsl_loss_impl_parse(optarg);
        if (eo->loss_impl < 0)
            return tsl_choice_refused("loss-impl", optarg, TSL_LOSS_IMPL_NAMES, err);
        return 0;
    case OPT_OPT_STEP:
        eo->opt_step = tsl_opt_step_parse(optarg);
        if (eo->opt_step < 0)
            return tsl_choice_refused("opt-step", optarg,
                                      "fused, megatron, megatron-fp16, torch, deepspeed-fp16, "
                                      "megatron-core-fp16, torch-loop or composer",
                                      err);
        return 0;
    case OPT_NORM_IMPL:
        eo->norm_impl = tsl_norm_impl_parse(optarg);
        if (eo->norm_impl < 0)
            return tsl_choice_refused("norm-impl", optarg, "te or apex", err);
        return 0;
    case OPT_TP_SYNC: eo->tp_sync = true; return 0;
    case OPT_DS_PIPE_P2P: eo->ds_pipe_p2p = true; return 0;
    case OPT_DS_PIPE_ENGINE: eo->ds_pipe_engine = true; return 0;
    case OPT_TORCH_PIPELINING: eo->torch_pipelining = true; return 0;
    case OPT_NCCL_NO_TREE: eo->nccl_no_tree = true; return 0;
    case OPT_MOE_BF16: eo->moe_bf16_experts = true; return 0;
    case OPT_BF16_START:
        return tsl_parse_u32("bf16-layers-start", optarg, 1, 1024, &eo->bf16_layers_start, err);
    case OPT_BF16_END:
        return tsl_parse_u32("bf16-layers-end", optarg, 1, 1024, &eo->bf16_layers_end, err);
    case OPT_MOE_FP8_DISPATCH: eo->moe_fp8_dispatch = true; return 0;
    case OPT_MOE_ALLTOALL: eo->moe_alltoall = true; return 0;
    case OPT_MOE_FLEX: eo->moe_flex = true; return 0;
    case OPT_MOE_FLEX_BACKEND: {
        int b = tsl_flex_backend_parse(optarg);
        if (b < 0)
            return tsl_choice_refused("moe-flex-backend", optarg, "hybridep or deepep", err);
        eo->moe_flex_backend = (uint32_t)b;
        return 0;
    }
    case OPT_MOE_UNFUSED_PERMUTE: eo->moe_unfused_permute = true; return 0;
    case OPT_MOE_FUSED_MLP: eo->moe_fused_mlp = true; return 0;
    case OPT_MOE_FUSED_SRELU: eo->moe_fused_srelu = true; return 0;
    case OPT_MOE_A2A_OVERLAP: eo->moe_a2a_overlap = true; return 0;
    case OPT_MOE_A2A_WGRAD_INLINE: eo->moe_a2a_wgrad_inline = true; return 0;
    case OPT_DS_GRAD_BUCKET: eo->ds_grad_bucket = true; return 0;
    case OPT_TP_WHOLE_HEADS: eo->tp_whole_heads = true; return 0;
    case OPT_SDP_NOSYNC: eo->sdp_nosync = true; return 0;
    case OPT_SDP_LAYER_ROOTS: eo->sdp_layer_roots = true; return 0;
    case OPT_SDP_KEEP_WEIGHTS: eo->sdp_keep_weights = true; return 0;
    case OPT_DS_BF16_OPTIMIZER: eo->ds_bf16_optimizer = true; return 0;
    case OPT_LAUNCH_BLOCKING: eo->launch_blocking = true; return 0;
    case OPT_DS_WALL_CLOCK: eo->ds_wall_clock = true; return 0;
    case OPT_DS_ZERO3_V03: eo->ds_zero3_v03 = true; return 0;
    case OPT_FP8_AMAX_TP_ONLY: eo->fp8_amax_tp_only = true; return 0;
    case OPT_FP8_DPA: eo->fp8_dpa = true; return 0;
    case OPT_UNFUSED_ELEMENTWISE: eo->unfused_elementwise = true; return 0;
    case OPT_FP32: eo->fp32 = true; return 0;
    case OPT_FP16: eo->fp16 = true; return 0;
    case OPT_TF32: eo->tf32 = true; return 0;
    case OPT_IMBALANCE:
        return tsl_parse_double("moe-imbalance", optarg, 1, 1024, &eo->moe_imbalance, err);
    case OPT_VP_GROUP: return tsl_parse_u32("vp-group", optarg, 1, 4096, &eo->vp_group, err);
    case OPT_CPU_OFFLOAD:
        return tsl_parse_u32("cpu-offload-layers", optarg, 1, 1023, &eo->cpu_offload_layers, err);
    default: return plan_flag(opt, eo, err);
    }
}

/* Exactly one way of giving the plan. */
static int check_sources(tsl_eval_opts_t *eo)
{
    if (eo->recompute_core && eo->cfg.ckpt == TSL_EVAL_CKPT_FULL) {
        fputs("tesselctl: eval: --recompute-modules core_attn with --ckpt full: Megatron-LM "
              "recomputes modules under selective granularity only\n",
              stderr);
        return TSL_EXIT_USAGE;
    }
    /* --strategy replaces every layer's degrees, SP, ZeRO and recompute: a flag that
     * sets one of them beside it would be dropped without a word */
    if (eo->strategy && (eo->layer_flag || eo->recompute_core)) {
        fprintf(stderr,
                "tesselctl: eval: %s with --strategy: the strategy text gives every layer's "
                "degrees, sp, zero and recompute (e.g. tp2-dp4+sp+zero1+ckpt); give one or "
                "the other\n",
                eo->layer_flag ? eo->layer_flag : "--recompute-modules core_attn");
        return TSL_EXIT_USAGE;
    }
    if (eo->recompute_core)
        eo->cfg.ckpt = TSL_EVAL_CKPT_SELECTIVE;
    if (eo->overlap_grad_reduce && eo->no_overlap_grad_reduce) {
        fputs("tesselctl: eval: --overlap-grad-reduce and --no-overlap-grad-reduce: one or "
              "the other\n",
              stderr);
        return TSL_EXIT_USAGE;
    }
    if (eo->overlap_tp_dgrad && eo->no_overlap_tp_dgrad) {
        fputs("tesselctl: eval: --overlap-tp-dgrad and --no-overlap-tp-dgrad: one or the "
              "other\n",
              stderr);
        return TSL_EXIT_USAGE;
    }
    int n = (eo->have_flags || eo->strategy) + (eo->plan_file != NULL) +
            (eo->megatron_args != NULL) + (eo->torchtitan != NULL);
    if (n > 1) {
        fputs("tesselctl: eval: give the plan one way: flags (--tp, --pp, ...), --plan, "
              "--megatron-args or --torchtitan\n",
              stderr);
        return TSL_EXIT_USAGE;
    }
    return TSL_EXIT_OK;
}

/* Measured figures are attached here, in this process: tesseld prices on its
 * own workers' profiles. */
static int check_figures(const tsl_eval_opts_t *eo, const tsl_client_opts_t *co)
{
    if ((eo->profile != NULL) + (eo->galvatron_profile != NULL) + (eo->amp_profile != NULL) > 1) {
        fputs("tesselctl: eval: give one of --profile, --galvatron-profile, --amp-profile\n",
              stderr);
        return TSL_EXIT_USAGE;
    }
    const char *which = eo->profile             ? "profile"
                        : eo->galvatron_profile ? "galvatron-profile"
                        : eo->amp_profile       ? "amp-profile"
                                                : NULL;
    if (which && co->server_given && !eo->local) {
        fprintf(stderr,
                "tesselctl: eval: --%s: works in this process only; add --local (tesseld "
                "prices on its registered workers' profiles: --cluster registered)\n",
                which);
        return TSL_EXIT_USAGE;
    }
    if ((eo->galvatron_profile || eo->amp_profile) && eo->cluster &&
        strcmp(eo->cluster, "registered") == 0) {
        fprintf(stderr,
                "tesselctl: eval: --%s: give the cluster it was measured on "
                "(--cluster SPEC or FILE), not registered\n",
                which);
        return TSL_EXIT_USAGE;
    }
    return TSL_EXIT_OK;
}

int tsl_cmd_eval(int argc, char **argv, tsl_client_opts_t *co)
{
    tsl_eval_opts_t eo;
    tsl_err_t err = {0};
    int opt;
    memset(&eo, 0, sizeof eo);
    eo.fp8_impl = -1;
    eo.loss_impl = -1;
    eo.opt_step = -1;
    eo.norm_impl = -1;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":h", eval_long, NULL)) != -1) {
        if (opt == 'h' || opt == TSL_OPT_HELP) {
            fputs(eval_usage, stdout);
            return TSL_EXIT_OK;
        }
        int r = tsl_remote_common_opt(opt, optarg, co);
        if (r > 0)
            return r;
        if (r < 0)
            r = eval_opt(opt, &eo, &err);
        if (r == 1)
            return tsl_remote_getopt_error("eval", opt, argv);
        if (r != 0) {
            fprintf(stderr, "tesselctl: %s\n", err.msg);
            return TSL_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        char shown[TSL_ERR_SHOWN_MAX(40)];
        fprintf(stderr, "tesselctl: eval: unexpected argument '%s'; see tesselctl eval --help\n",
                tsl_err_shown(argv[optind], 40, shown, sizeof shown));
        return TSL_EXIT_USAGE;
    }
    int rc = check_sources(&eo);
    if (rc == TSL_EXIT_OK)
        rc = check_figures(&eo, co);
    if (rc != TSL_EXIT_OK)
        return rc;
    return eo.local || !co->server_given ? tsl_eval_local(&eo, co) : tsl_eval_remote(&eo, co);
}

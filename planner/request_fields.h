/*
 * request_fields.h — the planner request's fields, listed once.
 *
 * tsl_request_t (search.h) is generated from this list, and so is everything
 * that carries a request across a boundary:
 *   - tesselctl's `plan` options, their help lines and the options → request
 *     mapping (client/plan_opts.c);
 *   - tsl_request_t ↔ tessel.v1.PlanRequest and ↔ tessel.v1.PlanOptions, the
 *     request echo of a Plan (api/request.c, api/plan_proto.c, through the
 *     protobuf-c descriptors by field name; tests/test_api.c checks that every
 *     field named here exists in the .proto with a matching type);
 *   - the "request" object of the plan document (common/plan_json.c) and the
 *     request JSON the daemon stores.
 *
 * One X(...) per field, in the order the plan document lists them:
 *   X(name, KIND, flag, metavar, min, max, help, proto, json)
 *     name     the C member of tsl_request_t
 *     KIND     BOOL  a switch: bool, `--flag` sets it, proto bool
 *              UINT  uint32_t, `--flag N` in [min, max], proto uint32
 *              BYTES uint64_t, `--flag SIZE` (common/args.h sizes), proto uint64
 *              TARGET uint32_t holding a tsl_target_t (target.h), `--flag NAME`
 *                    (megatron, deepspeed, torchtitan, galvatron), proto enum
 *                    tessel.v1.Target (same values), JSON the name
 *              REAL  double, `--flag X` a decimal number in [min, max], proto
 *                    double, JSON a number
 *              MODULES uint32_t bitmask of recompute modules (recompute.h),
 *                    `--flag LIST` of Megatron's names, proto uint32, JSON an
 *                    array of the names
 *              LOSS  uint32_t holding a tsl_loss_impl_t (loss_impl.h), `--flag
 *                    NAME` (exec, torch, megatron, te, torch-compile, fused-xentropy,
 *                    composer, megatron-fused),
 *                    proto uint32 (0: the
 *                    target's), JSON the name (0: absent from the CLI's view,
 *                    written as 0)
 *              PREC  uint32_t per-module precision nibbles (module_prec.h), `--flag
 *                    LIST` of module=precision items (tsl_module_prec_parse, eval
 *                    --module-precision's parser), proto uint32, JSON the list as
 *                    typed ("linear_proj=bf16"; 0 written as 0, as LOSS's)
 *     flag     tesselctl's long option without "--", or NULL: not a CLI option
 *     metavar  the argument's name in --help ("N", "SIZE"; "" for BOOL)
 *     min,max  the accepted range (UINT and REAL; 0, 0 otherwise; 0 is the default
 *              and always accepted): the CLI's at parse time, and every request's,
 *              however it came (gRPC, a plan document), in search.c
 *              request_bounds_check — a REAL field also refuses NaN and ±inf there
 *     help     one line of tesselctl plan --help ("" when flag is NULL)
 *     proto    the field name in PlanRequest and PlanOptions (a string: looked
 *              up by name in the descriptor). A field with a CLI flag must be
 *              in PlanRequest; every field must be in PlanOptions.
 *     json     the key in the plan document's "request" object
 *
 * Adding a request option: one line here, the field in proto/tessel/v1/
 * planner.proto (PlanRequest and PlanOptions, new field numbers — never reuse
 * one), and its meaning in the planner (read r->name where it matters; add it
 * to tsl_request_fingerprint in search.c when it changes the answer: tesseld
 * answers from its store by fingerprint, and tests/test_search.c
 * test_fingerprint_switches fails on a switch left out). The CLI option, its
 * help line, the wire and the JSON follow from this list. Zero must mean
 * "default" (tsl_request_init zeroes the request).
 */
#ifndef TSL_REQUEST_FIELDS_H
#define TSL_REQUEST_FIELDS_H

/* host_op_us's range, µs (search.h tsl_host_op_check holds a plan's to it; a request's
 * is held by the table, as every REAL field's: search.c request_bounds_check) */
#define TSL_HOST_OP_MIN_US 1.0
#define TSL_HOST_OP_MAX_US 100000.0
/* the MoE routing knobs' ranges (cost.h TSL_COST_MOE_MAX_FACTOR, _IMBALANCE hold a
 * plan's to the same) */
#define TSL_REQUEST_MOE_MAX_FACTOR    64.0
#define TSL_REQUEST_MOE_MAX_IMBALANCE 1024.0

#define TSL_REQUEST_FIELDS(X)                                                                      \
    X(pp, UINT, "pp", "N", 1, 64, "fix the number of pipeline stages (default: searched)", "pp",   \
      "pp")                                                                                        \
    X(global_batch, UINT, "batch", "N", 1, 1u << 20,                                               \
      "fixed global batch size (not together with --sweep)", "global_batch", "global_batch")       \
    X(max_batch, UINT, "max-batch", "N", 1, 1u << 20,                                              \
      "largest batch the sweep tries (default 4096, 4 per device above 1024 devices); a --batch "  \
      "above it is planned as given",                                                              \
      "max_batch", "max_batch")                                                                    \
    X(mem_budget_bytes, BYTES, "memory", "SIZE", 0, 0,                                             \
      "memory budget per device, e.g. 16G, taken as given (default: device memory less the "       \
      "reserve)",                                                                                  \
      "memory_bytes", "memory_bytes")                                                              \
    X(mem_reserve_bytes, BYTES, "memory-reserve", "SIZE", 0, 0,                                    \
      "without --memory: device memory kept back for the CUDA context, NCCL buffers and "          \
      "fragmentation (default 1G + 5% of the device)",                                             \
      "memory_reserve_bytes", "memory_reserve_bytes")                                              \
    X(top_k, UINT, "top-k", "N", 1, 16, "alternatives to keep (default 5, at most 16)", "top_k",   \
      "top_k")                                                                                     \
    X(max_pp, UINT, NULL, "", 0, 0, "", "max_pp", "max_pp")                                        \
    X(max_micro, UINT, NULL, "", 0, 0, "", "max_micro", "max_micro")                               \
    X(bucket_bytes, BYTES, NULL, "", 0, 0, "", "bucket_bytes", "bucket_bytes")                     \
    X(no_pp, BOOL, "no-pp", "", 0, 0, "no pipeline parallelism", "no_pp", "no_pp")                 \
    X(no_tp, BOOL, "no-tp", "", 0, 0, "no tensor parallelism", "no_tp", "no_tp")                   \
    X(no_dp, BOOL, "no-dp", "", 0, 0, "no data parallelism", "no_dp", "no_dp")                     \
    X(no_sdp, BOOL, "no-sdp", "", 0, 0, "no sharded data parallelism (ZeRO-3)", "no_sdp",          \
      "no_sdp")                                                                                    \
    X(no_ckpt, BOOL, "no-ckpt", "", 0, 0, "no activation checkpointing", "no_ckpt", "no_ckpt")     \
    X(no_baselines, BOOL, "no-baselines", "", 0, 0, "skip the baseline comparison",                \
      "no_baselines", "no_baselines")                                                              \
    X(no_placement, BOOL, "no-placement", "", 0, 0,                                                \
      "heterogeneous clusters: keep the node order as given instead of searching which "           \
      "nodes take which stage (AMP)",                                                              \
      "no_placement", "no_placement")                                                              \
    X(no_memopt, BOOL, "no-memopt", "", 0, 0,                                                      \
      "never fall back to H3T's memory switches and CPU offload when nothing else fits the "       \
      "memory budget",                                                                             \
      "no_memopt", "no_memopt")                                                                    \
    X(no_slicer, BOOL, "no-slicer", "", 0, 0,                                                      \
      "no AutoPipe micro-batch slicing of the pipeline start-up", "no_slicer", "no_slicer")        \
    X(no_sublayer, BOOL, "no-sublayer", "", 0, 0,                                                  \
      "partition at whole layers only (no AutoPipe attention/FFN split)", "no_sublayer",           \
      "no_sublayer")                                                                               \
    X(no_bi_objective, BOOL, "no-bi-objective", "", 0, 0,                                          \
      "keep the compute-balanced partition (Galvatron-Base) instead of balancing memory and "      \
      "time (Galvatron-BMW)",                                                                      \
      "no_bi_objective", "no_bi_objective")                                                        \
    X(no_interleave, BOOL, "no-interleave", "", 0, 0,                                              \
      "plain 1F1B only: no interleaved schedule with several model chunks per stage "              \
      "(Megatron-LM's virtual pipeline stages)",                                                   \
      "no_interleave", "no_interleave")                                                            \
    X(vp_group, UINT, "vp-group", "N", 1, 4096,                                                    \
      "interleaved plans run N micro-batches per group (Megatron-LM "                              \
      "--microbatch-group-size-per-virtual-pipeline-stage; default: pp, which Megatron takes "     \
      "for N; it needs pp <= N <= micro-batches, their count mod N 0 or at least pp)",             \
      "vp_group", "vp_group")                                                                      \
    X(no_zero_bubble, BOOL, "no-zero-bubble", "", 0, 0,                                            \
      "no zero-bubble schedules (ZB-H1, ZBV, which split the backward's weight gradient "          \
      "off to fill the bubble): 1F1B and interleaved 1F1B only",                                   \
      "no_zero_bubble", "no_zero_bubble")                                                          \
    X(unfused_attn, BOOL, "unfused-attn", "", 0, 0,                                                \
      "attention keeps its s x s scores (no flash kernel); offers selective recomputation "        \
      "(docs/cost-model.md)",                                                                      \
      "unfused_attn", "unfused_attn")                                                              \
    X(no_seq_par, BOOL, "no-seq-par", "", 0, 0, "no sequence parallelism with tensor parallelism", \
      "no_seq_par", "no_seq_par")                                                                  \
    X(no_zero, BOOL, "no-zero", "", 0, 0,                                                          \
      "no ZeRO-1/ZeRO-2 on data-parallel levels (plain all-reduce)", "no_zero", "no_zero")         \
    X(no_selective, BOOL, "no-selective", "", 0, 0,                                                \
      "no selective recomputation (with --unfused-attn)", "no_selective", "no_selective")          \
    X(paper_cost, BOOL, "paper-cost", "", 0, 0,                                                    \
      "price as the seed papers' formulas do (Galvatron Eq. 9's summed gradient syncs, AMP's "     \
      "slowest link) instead of as the stacks run; for reproducing the papers",                    \
      "paper_cost", "paper_cost")                                                                  \
    X(no_host_floor, BOOL, "no-host-floor", "", 0, 0,                                              \
      "price compute by the GPU alone, without eager PyTorch's host dispatch floor (a C "          \
      "executor, CUDA graphs)",                                                                    \
      "no_host_floor", "no_host_floor")                                                            \
    X(host_op_us, REAL, "host-op-us", "US", TSL_HOST_OP_MIN_US, TSL_HOST_OP_MAX_US,                \
      "the stack's host time per eager op, microseconds (default 57.2: PyTorch 2.11 on an "        \
      "H100 host; docs/cost-model.md \"Host dispatch\")",                                          \
      "host_op_us", "host_op_us")                                                                  \
    X(grad_reduce_bytes, UINT, "grad-reduce-bytes", "N", 2, 4,                                     \
      "bytes per gradient in the buffer and the DP/SDP reduce: 2 (bf16) or 4 (fp32 main "          \
      "gradients); default: the target's (megatron, torchtitan 4), else 2",                        \
      "grad_reduce_bytes", "grad_reduce_bytes")                                                    \
    X(no_fp32_master, BOOL, "no-fp32-master", "", 0, 0,                                            \
      "no fp32 master weights: Adam's moments in 16 bits (torchtitan's training_dtype bfloat16)",  \
      "no_fp32_master", "no_fp32_master")                                                          \
    X(overlap_grad_reduce, BOOL, "overlap-grad-reduce", "", 0, 0,                                  \
      "the DP gradient reduce runs under the backward (the default but for megatron and "          \
      "deepspeed targets)",                                                                        \
      "overlap_grad_reduce", "overlap_grad_reduce")                                                \
    X(no_overlap_grad_reduce, BOOL, "no-overlap-grad-reduce", "", 0, 0,                            \
      "the DP gradient reduce runs after the backward, exposed", "no_overlap_grad_reduce",         \
      "no_overlap_grad_reduce")                                                                    \
    X(overlap_param_gather, BOOL, "overlap-param-gather", "", 0, 0,                                \
      "ZeRO-1's weight all-gather runs under the next forward (Megatron-LM "                       \
      "--overlap-param-gather), not after the step; an SDP level's gathers (Megatron-FSDP) "       \
      "prefetched under each pass's compute",                                                      \
      "overlap_param_gather", "overlap_param_gather")                                              \
    X(overlap_tp_dgrad, BOOL, "overlap-tp-dgrad", "", 0, 0,                                        \
      "the backward's TP collectives run under the column-parallel gradient GEMMs (Megatron-LM's " \
      "async dgrad all-reduce; the default for the megatron target)",                              \
      "overlap_tp_dgrad", "overlap_tp_dgrad")                                                      \
    X(no_overlap_tp_dgrad, BOOL, "no-overlap-tp-dgrad", "", 0, 0,                                  \
      "the backward's TP collectives exposed, as the forward's (Megatron-LM before 2021-09)",      \
      "no_overlap_tp_dgrad", "no_overlap_tp_dgrad")                                                \
    X(unfused_grad_accum, BOOL, "unfused-grad-accum", "", 0, 0,                                    \
      "each micro-batch's weight gradients added into the buffer by a kernel of their own "        \
      "(PyTorch's AccumulateGrad; Megatron-LM before 2022-02)",                                    \
      "unfused_grad_accum", "unfused_grad_accum")                                                  \
    X(legacy_p2p, BOOL, "legacy-p2p", "", 0, 0,                                                    \
      "Megatron-LM's p2p before Megatron-core (2021-2022), and DeepSpeed's pipeline engine "       \
      "under Megatron-DeepSpeed: 1/t per TP rank, all-gathered on arrival, every exchange "        \
      "blocking, interleaved too (--target deepspeed's with TP beside stages)",                    \
      "legacy_p2p", "legacy_p2p")                                                                  \
    X(tp_comm_overlap, BOOL, "tp-comm-overlap", "", 0, 0,                                          \
      "TransformerEngine's userbuffers (Megatron-LM --tp-comm-overlap): each SP all-gather and "   \
      "reduce-scatter of the attention and MLP blocks under its own GEMM, in chunks; with SP",     \
      "tp_comm_overlap", "tp_comm_overlap")                                                        \
    X(async_tp, BOOL, "async-tp", "", 0, 0,                                                        \
      "torch's micro-pipelined TP (torchtitan's AsyncTP): each SP all-gather feeding a GEMM and "  \
      "the forward's reduce-scatters under their GEMMs, in t chunks; with SP",                     \
      "async_tp", "async_tp")                                                                      \
    X(autocast, BOOL, "autocast", "", 0, 0,                                                        \
      "price PyTorch eager modules under torch.autocast over fp32 parameters: fp32 norms and "     \
      "residual stream, per-micro-batch weight casts, fp32 gradients, the vocabulary unpadded",    \
      "autocast", "autocast")                                                                      \
    X(eager, BOOL, "eager", "", 0, 0,                                                              \
      "price the model's modules run eagerly, no torch.compile (torchtitan's default): "           \
      "RMSNorm, RoPE and SwiGLU as the unfused ATen kernels its Llama modules issue",              \
      "eager", "eager")                                                                            \
    X(no_dropout, BOOL, "no-dropout", "", 0, 0,                                                    \
      "the model without dropout (the GPT/BERT/T5 presets and imports keep it where the "          \
      "architecture has it)",                                                                      \
      "no_dropout", "no_dropout")                                                                  \
    X(mtp_layers, UINT, "mtp-layers", "N", 1, 16,                                                  \
      "train N multi-token-prediction depths (Megatron-LM --mtp-num-layers; depths beyond "        \
      "those the model has weights for repeat its last one's; default: the HF config's "           \
      "num_nextn_predict_layers)",                                                                 \
      "mtp_layers", "mtp_layers")                                                                  \
    X(no_mtp, BOOL, "no-mtp", "", 0, 0,                                                            \
      "leave the model's multi-token-prediction layers out (HF num_nextn_predict_layers)",         \
      "no_mtp", "no_mtp")                                                                          \
    X(bf16_layers_start, UINT, "bf16-layers-start", "N", 1, 1024,                                  \
      "with FP8/NVFP4: the model's first N blocks kept bf16 (Megatron-LM "                         \
      "--first-last-layers-bf16 --num-layers-at-start-in-bf16 N; a hybrid's blocks count one "     \
      "each, the MTP depths none)",                                                                \
      "bf16_layers_start", "bf16_layers_start")                                                    \
    X(bf16_layers_end, UINT, "bf16-layers-end", "N", 1, 1024,                                      \
      "with FP8/NVFP4: the model's last N blocks kept bf16 (Megatron-LM "                          \
      "--num-layers-at-end-in-bf16 N)",                                                            \
      "bf16_layers_end", "bf16_layers_end")                                                        \
    X(double_block_fwd, BOOL, "double-block-fwd", "", 0, 0,                                        \
      "every transformer block's forward runs twice per micro-batch (AMP's fork of Megatron-LM "   \
      "v1.1.5, whose pipe layer prints the shape of a first full forward)",                        \
      "double_block_fwd", "double_block_fwd")                                                      \
    X(tp_sync, BOOL, "tp-sync", "", 0, 0,                                                          \
      "every TP all-reduce between two device synchronisations (AMP's fork of Megatron-LM "        \
      "v1.1.5, which times them so; searched without SP, which it has not); no --target launches " \
      "it",                                                                                        \
      "tp_sync", "tp_sync")                                                                        \
    X(no_cp, BOOL, "no-cp", "", 0, 0,                                                              \
      "no context parallelism: every rank holds whole sequences (the same as --cp 1)", "no_cp",    \
      "no_cp")                                                                                     \
    X(cp, UINT, "cp", "N", 1, 1024,                                                                \
      "fix the context-parallel degree (default: searched from sequences of 8192 tokens)", "cp",   \
      "cp")                                                                                        \
    X(no_ep, BOOL, "no-ep", "", 0, 0,                                                              \
      "no expert parallelism: every rank holds every expert of a MoE layer (the same as --ep 1)",  \
      "no_ep", "no_ep")                                                                            \
    X(ep, UINT, "ep", "N", 1, 1024,                                                                \
      "fix the expert-parallel degree of MoE layers (default: searched over the divisors of the "  \
      "expert count)",                                                                             \
      "ep", "ep")                                                                                  \
    X(etp, UINT, "etp", "N", 1, 1024,                                                              \
      "fix the expert tensor-parallel degree of MoE layers' routed experts (Megatron-LM "          \
      "--expert-tensor-parallel-size; default: 1, searched beside EP = the expert count)",         \
      "etp", "etp")                                                                                \
    X(moe_capacity, REAL, "moe-capacity-factor", "C", 0, TSL_REQUEST_MOE_MAX_FACTOR,               \
      "expert capacity factor: each expert takes at most C x a rank's mean routed tokens, the "    \
      "rest dropped (Megatron-LM --moe-expert-capacity-factor; default: dropless)",                \
      "moe_capacity_factor", "moe_capacity_factor")                                                \
    X(moe_pad, BOOL, "moe-pad-to-capacity", "", 0, 0,                                              \
      "with --moe-capacity-factor: every expert's input padded to its capacity "                   \
      "(--moe-pad-expert-input-to-capacity)",                                                      \
      "moe_pad_to_capacity", "moe_pad_to_capacity")                                                \
    X(moe_imbalance, REAL, "moe-imbalance", "X", 1, TSL_REQUEST_MOE_MAX_IMBALANCE,                 \
      "tokens of the busiest expert over the mean, at least 1 (default 1: an even split, "         \
      "assumed; docs/cost-model.md \"Mixture of experts\")",                                       \
      "moe_imbalance", "moe_imbalance")                                                            \
    X(no_fp8, BOOL, "no-fp8", "", 0, 0,                                                            \
      "bf16 GEMMs only: do not weigh FP8 (weighed by default where every GPU has FP8 tensor "      \
      "cores and the target runs it)",                                                             \
      "no_fp8", "no_fp8")                                                                          \
    X(fp8_recipe, UINT, "fp8-recipe", "N", 1, 5,                                                   \
      "FP8 only, with this recipe (its number or name): 1 delayed, 2 tensorwise, 3 blockwise, "    \
      "4 mxfp8 (Blackwell); "                                                                      \
      "5 nvfp4 (FP4, Blackwell; never weighed unasked); refused where a GPU has no FP8 (FP4)",     \
      "fp8_recipe", "fp8_recipe")                                                                  \
    X(fp8_param_gather, BOOL, "fp8-param-gather", "", 0, 0,                                        \
      "the FP8 plans keep their weights in FP8 and all-gather them in FP8 (Megatron-LM "           \
      "--fp8-param-gather, nvfp4 --fp4-param-gather; torchtitan's FSDP float8 all-gather, "        \
      "tensorwise); weighed only when asked; not with --no-fp8, --fp32, --fp16, nor under "        \
      "--target deepspeed or galvatron",                                                           \
      "fp8_param_gather", "fp8_param_gather")                                                      \
    X(module_prec, PREC, "module-precision", "LIST", 0, 0,                                         \
      "every FP8 (NVFP4) plan weighed runs these linears at their own precision, Megatron-core's " \
      "per-module quantization config (quant_recipe): MODULE=PRECISION items, comma-separated, "   \
      "of linear_qkv, linear_proj, linear_fc1, linear_fc2, in_proj, out_proj, fc1_latent_proj, "   \
      "fc2_latent_proj at bf16, tensorwise, blockwise, mxfp8 or nvfp4 (docs/cost-model.md "        \
      "\"Per-module precision\"); a bf16 plan runs them bf16; not with --no-fp8, --fp32, "         \
      "--fp16, --fp8-param-gather, nor under --target deepspeed, torchtitan or galvatron",         \
      "module_precision", "module_precision")                                                      \
    X(loss_impl, LOSS, "loss-impl", "IMPL", 0, 0,                                                  \
      "how the LM loss runs, for its memory and time per logit: exec (Tessel's executor), torch "  \
      "(eager cross_entropy over logits.float(), torchtitan), megatron "                           \
      "(vocab_parallel_cross_entropy), te (TE's fused loss), torch-compile (torch's under "        \
      "torch.compile), fused-xentropy (flash-attn's xentropy kernel), composer (llm-foundry "      \
      "under Composer: that kernel and two train metrics' cross-entropy per micro-batch), "        \
      "megatron-fused (Megatron-core's --cross-entropy-loss-fusion under torch.compile); "         \
      "default: the target's",                                                                     \
      "loss_impl", "loss_impl")                                                                    \
    X(attn_kernel, UINT, "attn-kernel", "KERNEL", 1, 4,                                            \
      "the fused attention kernel the stack runs, priced on Hopper and the A100 at its published " \
      "share by head dimension and keys: 1 flash2 (FlashAttention-2), 2 cudnn (TE's "              \
      "FusedAttention), 3 flash1 (FlashAttention v1's CUDA kernel), 4 flash1-triton (its Triton "  \
      "port, llm-foundry's); default: the GPU's one figure (the A100: FlashAttention-2's)",        \
      "attn_kernel", "attn_kernel")                                                                \
    X(recompute_modules, MODULES, "recompute-modules", "LIST", 0, 0,                               \
      "price Megatron-LM's recompute of these modules on every layer without full recompute: "     \
      "moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts (comma-separated); or "           \
      "torchtitan_op, torchtitan's op-level selective AC",                                         \
      "recompute_modules", "recompute_modules")                                                    \
    X(bf16_moments, BOOL, "bf16-moments", "", 0, 0,                                                \
      "Adam's moments in bf16 beside fp32 master weights (Megatron-LM's precision-aware "          \
      "optimizer with --exp-avg-dtype/--exp-avg-sq-dtype bf16)",                                   \
      "bf16_moments", "bf16_moments")                                                              \
    X(cpu_offload_layers, UINT, "cpu-offload-layers", "N", 1, 1023,                                \
      "the first N Transformer layers' activations offloaded to host memory between their "        \
      "forward and backward (Megatron-LM --cpu-offloading-num-layers N; one stage, no recompute)", \
      "cpu_offload_layers", "cpu_offload_layers")                                                  \
    X(lazy_grads, BOOL, "lazy-grads", "", 0, 0,                                                    \
      "the gradients exist from each chunk's first backward to the step (PyTorch FSDP's "          \
      "accumulation), not in a buffer kept all along (Megatron-LM): interleaved 1F1B's peak; "     \
      "the weight-gradient GEMMs write fresh gradients",                                           \
      "lazy_grads", "lazy_grads")                                                                  \
    X(moe_bf16_experts, BOOL, "moe-bf16-experts", "", 0, 0,                                        \
      "with FP8: the routed experts' grouped GEMMs stay bf16 (torchtitan without its "             \
      "grouped-experts converter; default: FP8 with the plan's recipe, as Megatron-LM runs them)", \
      "moe_bf16_experts", "moe_bf16_experts")                                                      \
    X(moe_fp8_dispatch, BOOL, "moe-fp8-dispatch", "", 0, 0,                                        \
      "with FP8 experts: the MoE dispatch all-to-all and the combine's gradient in FP8 "           \
      "(DeepSeek-V3; Megatron-LM --moe-dispatch-fwd-dtype mxfp8); default bf16",                   \
      "moe_fp8_dispatch", "moe_fp8_dispatch")                                                      \
    X(moe_alltoall, BOOL, "moe-alltoall-dispatcher", "", 0, 0,                                     \
      "price Megatron-LM's all-to-all token dispatcher (its moe_token_dispatcher_type alltoall): " \
      "its counts, sync, routing-weight all-to-all and second permutation; default: the "          \
      "permutation and two all-to-alls alone (HybridEP, DeepEP, torchtitan)",                      \
      "moe_alltoall_dispatcher", "moe_alltoall_dispatcher")                                        \
    X(moe_unfused_permute, BOOL, "moe-unfused-permute", "", 0, 0,                                  \
      "price MCore v0.8's unfused token permutation (argsort and gather; the combine's "           \
      "scatter into zeros, routing-weight product and top-k sum, each a kernel); default: the "    \
      "fused permute and unpermute (Transformer Engine's, moe_permute_fusion)",                    \
      "moe_unfused_permute", "moe_unfused_permute")                                                \
    X(moe_fused_mlp, BOOL, "moe-fused-mlp", "", 0, 0,                                              \
      "the routed experts' FC1, activation and FC2 run through Transformer Engine's op fuser "     \
      "(Megatron-LM use_transformer_engine_op_fuser; Megatron-Bridge cutedsl_fused_grouped_mlp): " \
      "none of the unfused path's eager pieces around the grouped GEMMs (gpt-oss's clamp and "     \
      "its offset copy, the per-expert FFN-out bias); squared-ReLU experts only with "             \
      "moe_fused_srelu, plain GeLU experts never (Megatron-LM asserts); default: that path",       \
      "moe_fused_mlp", "moe_fused_mlp")                                                            \
    X(moe_fused_srelu, BOOL, "moe-fused-srelu", "", 0, 0,                                          \
      "the non-gated routed experts' squared ReLU takes the routing weights in its one fused "     \
      "kernel (Megatron-LM use_fused_weighted_squared_relu, every Megatron-Bridge Nemotron-H "     \
      "recipe): no eager product and cast after it; default: Megatron-LM's eager product",         \
      "moe_fused_srelu", "moe_fused_srelu")                                                        \
    X(moe_flex, BOOL, "moe-flex-dispatcher", "", 0, 0,                                             \
      "price a flex MoE dispatcher's all-to-alls (HybridEP, DeepEP; Megatron-LM's "                \
      "moe_token_dispatcher_type flex): across NVLink domains one network copy per token and "     \
      "destination domain; default: NCCL's all-to-all, a copy per routed expert",                  \
      "moe_flex_dispatcher", "moe_flex_dispatcher")                                                \
    X(moe_flex_backend, UINT, "moe-flex-backend", "NAME", 1, 2,                                    \
      "with --moe-flex-dispatcher, its back end: hybridep (1: each MoE forward first gathers "     \
      "the EP group's routing map, scans it and syncs) or deepep (2: the layout computed "         \
      "locally); default: Megatron-LM's, deepep (hybridep where experts are padded)",              \
      "moe_flex_backend", "moe_flex_backend")                                                      \
    X(moe_a2a_overlap, BOOL, "moe-a2a-overlap", "", 0, 0,                                          \
      "Megatron-LM's --overlap-moe-expert-parallel-comm: one micro-batch's EP all-to-alls under "  \
      "another's compute in the 1F1B steady state (PP 1 or interleaved); default exposed",         \
      "moe_a2a_overlap", "moe_a2a_overlap")                                                        \
    X(moe_a2a_wgrad_inline, BOOL, "moe-a2a-wgrad-inline", "", 0, 0,                                \
      "with --moe-a2a-overlap, Megatron-LM without --delay-wgrad-compute: each backward node "     \
      "computes its own weight gradients, the backward's dispatch after the experts' dW; "         \
      "default deferred, as Megatron-Bridge's moe_a2a_overlap sets it",                            \
      "moe_a2a_wgrad_inline", "moe_a2a_wgrad_inline")                                              \
    X(grad_buf_bytes, UINT, "grad-buf-bytes", "N", 2, 4,                                           \
      "bytes per element of the gradient buffer the weight gradients accumulate into (.grad, "     \
      "main_grad): 2 or 4; default: --grad-reduce-bytes's (2 with 4: DeepSpeed's fp32_allreduce; " \
      "4 with 2: BF16_Optimizer's fp32 buffer reduced in bf16), cast around the reduce",           \
      "grad_buf_bytes", "grad_buf_bytes")                                                          \
    X(ds_grad_bucket, BOOL, "ds-grad-bucket", "", 0, 0,                                            \
      "DeepSpeed's engine's DP all-reduce without ZeRO: the gradients flattened into a bucket, "   \
      "scaled by 1/DP after the reduce and copied back into each .grad (AMP's fork)",              \
      "ds_grad_bucket", "ds_grad_bucket")                                                          \
    X(tp_whole_heads, BOOL, "tp-whole-heads", "", 0, 0,                                            \
      "an unfused attention core keeps all its heads on every TP rank, each 1/TP as wide: its "    \
      "scores not split by TP (AMP's fork's TransGAN attention); refused under any --target",      \
      "tp_whole_heads", "tp_whole_heads")                                                          \
    X(sdp_layer_roots, BOOL, "sdp-layer-roots", "", 0, 0,                                          \
      "the SDP (FSDP) level as fairscale 0.4.5's FSDP with each layer its own root, its "          \
      "attention and MLP units inside (Galvatron-BMW): the first unit's gather exposed in the "    \
      "forward, the others' under compute, the backward's prefetched; needs an SDP level",         \
      "sdp_layer_roots", "sdp_layer_roots")                                                        \
    X(sdp_nosync, BOOL, "sdp-nosync", "", 0, 0,                                                    \
      "the SDP (FSDP) level kept unsharded between micro-batches where PP > 1 (torchtitan's "      \
      "FSDP2 under PP): weights gathered once per iteration, gradients accumulated unsharded and " \
      "reduce-scattered after the last micro-batch; default: on for --target torchtitan, else "    \
      "gathers and a reduce-scatter every micro-batch (PP 1 always so)",                           \
      "sdp_nosync", "sdp_nosync")                                                                  \
    X(sdp_keep_weights, BOOL, "sdp-keep-weights", "", 0, 0,                                        \
      "the SDP (FSDP) level keeps each layer's gathered weights from its forward to its backward " \
      "(torch FSDP's SHARD_GRAD_OP): one gather per micro-batch, in the forward, none in the "     \
      "backward, every layer's gathered weights held at the peak; gradients reduce-scattered "     \
      "every micro-batch; needs an SDP level; under --target torchtitan its "                      \
      "fsdp_reshard_after_forward \"never\" (with PP the target's sdp_nosync holds instead)",      \
      "sdp_keep_weights", "sdp_keep_weights")                                                      \
    X(ds_bf16_optimizer, BOOL, "ds-bf16-optimizer", "", 0, 0,                                      \
      "DeepSpeed's BF16_Optimizer under pipeline stages: each micro-batch's bf16 .grad cast and "  \
      "added into fp32 buffers and kept until the next backward, the whole buffer all-reduced "    \
      "over DP, the tied gradient in fp32",                                                        \
      "ds_bf16_optimizer", "ds_bf16_optimizer")                                                    \
    X(launch_blocking, BOOL, "launch-blocking", "", 0, 0,                                          \
      "every kernel launch synchronous, as CUDA_LAUNCH_BLOCKING=1 makes it: each op's host "       \
      "dispatch added to the GPU's time instead of running ahead of it",                           \
      "launch_blocking", "launch_blocking")                                                        \
    X(ds_wall_clock, BOOL, "ds-wall-clock", "", 0, 0,                                              \
      "DeepSpeed's wall_clock_breakdown: synchronising timers around every pipeline instruction, " \
      "each forward and backward starting on an idle GPU, each exchange dispatched onto one",      \
      "ds_wall_clock", "ds_wall_clock")                                                            \
    X(ds_zero3_v03, BOOL, "ds-zero3-v03", "", 0, 0,                                                \
      "DeepSpeed 0.3's ZeRO-3 on the SDP level: an all-gather per weight, again in a full "        \
      "recompute, a reduce-scatter per tensor, all exposed, the list API's copies per rank",       \
      "ds_zero3_v03", "ds_zero3_v03")                                                              \
    X(fp8_amax_tp_only, BOOL, "fp8-amax-tp-only", "", 0, 0,                                        \
      "TE before v1.6 under NVTE_DP_AMAX_REDUCE_INTERVAL=0 and NVTE_ASYNC_AMAX_REDUCTION=1 "       \
      "(NeMo 24.03's launcher): delayed scaling's amax all-reduce over TP only (none at TP 1), "   \
      "async, the forward's exposed, the backward's hidden; with --fp8 delayed",                   \
      "fp8_amax_tp_only", "fp8_amax_tp_only")                                                      \
    X(fp8_dpa, BOOL, "fp8-dpa", "", 0, 0,                                                          \
      "FP8 attention (TE's fp8_dpa, Megatron-LM's FP8 dot-product attention): cuDNN's FP8 "        \
      "kernel, whose backward computes a causal sliding window's whole causal square on "          \
      "B200 / GB200; every other core as in bf16; with an FP8 recipe Transformer Engine runs",     \
      "fp8_dpa", "fp8_dpa")                                                                        \
    X(unfused_elementwise, BOOL, "unfused-elementwise", "", 0, 0,                                  \
      "Megatron-LM v1.1.5 without its fusion flags under PyTorch 1.7 (AMP's fork): each bias "     \
      "added by a kernel of its own, the causal mask by masked_fill_ each pass, the context's "    \
      "permute copy",                                                                              \
      "unfused_elementwise", "unfused_elementwise")                                                \
    X(fp32, BOOL, "fp32", "", 0, 0,                                                                \
      "fp32 training, no mixed precision: GEMMs at the GPU's TF32 rate (fp32 without TF32; the "   \
      "fp32 rate, TF32 off, under --target megatron, deepspeed or torchtitan), 4-byte "            \
      "activations and collectives, 16 B of model states per parameter",                           \
      "fp32", "fp32")                                                                              \
    X(tf32, BOOL, "tf32", "", 0, 0,                                                                \
      "with --fp32: the stack runs fp32 matmuls as TF32 (its script sets "                         \
      "torch.backends.cuda.matmul.allow_tf32 = True): the GEMMs at the GPU's TF32 rate under "     \
      "--target megatron, deepspeed or torchtitan too (without one they run so already: it "       \
      "changes nothing, and the plan says so); refused without --fp32 or where no GPU of the "     \
      "cluster has TF32",                                                                          \
      "tf32", "tf32")                                                                              \
    X(fp16, BOOL, "fp16", "", 0, 0,                                                                \
      "fp16 mixed precision with a dynamic loss scaler (the default where a GPU of the cluster "   \
      "has no bf16: V100, T4, TITAN RTX, 2080 Ti; else bf16); not with --fp32 or FP8",             \
      "fp16", "fp16")                                                                              \
    X(target, TARGET, "target", "STACK", 0, 0,                                                     \
      "search only what megatron, deepspeed, torchtitan or galvatron runs, and say what that "     \
      "costs against the unrestricted plan",                                                       \
      "target", "target")

/* The C type of each KIND (TSL_REQUEST_CTYPE_UINT ...). */
#define TSL_REQUEST_CTYPE_BOOL    bool
#define TSL_REQUEST_CTYPE_UINT    uint32_t
#define TSL_REQUEST_CTYPE_BYTES   uint64_t
#define TSL_REQUEST_CTYPE_TARGET  uint32_t
#define TSL_REQUEST_CTYPE_REAL    double
#define TSL_REQUEST_CTYPE_MODULES uint32_t
#define TSL_REQUEST_CTYPE_LOSS    uint32_t
#define TSL_REQUEST_CTYPE_PREC    uint32_t

/* The kinds as values, for code that walks the list at run time. */
typedef enum tsl_request_kind {
    TSL_REQUEST_KIND_BOOL,
    TSL_REQUEST_KIND_UINT,
    TSL_REQUEST_KIND_BYTES,
    TSL_REQUEST_KIND_TARGET,
    TSL_REQUEST_KIND_REAL,
    TSL_REQUEST_KIND_MODULES,
    TSL_REQUEST_KIND_LOSS,
    TSL_REQUEST_KIND_PREC,
} tsl_request_kind_t;

#endif

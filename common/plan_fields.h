/*
 * plan_fields.h — the plan result's fields, listed once.
 *
 * What request_fields.h is for the request, this is for the answer: every
 * scalar figure of a plan document (docs/plan-format.md) is one X(...) line,
 * and each mapping that carries a plan across a boundary is generated from
 * these lists:
 *   - the planner's structs → the JSON document (common/plan_json.c);
 *   - the JSON document ↔ tessel.v1.Plan, both ways (api/plan_proto.c);
 * and the printer reads that one document, whether it was planned in-process
 * or came from tesseld (client/print.c), so local and remote output agree by
 * construction. tests/test_api.c checks document → Plan → document is the
 * identity, and that every proto field of Plan, PlanFigures and Stage is named
 * by a line here or handled in plan_proto.c's hand-written part.
 *
 * A line:  X(c, KIND, proto, json, WHEN)
 *   c      the member of the C struct the list describes (tsl_plan_stage_t,
 *          tsl_plan_t, tsl_plan_head_t)
 *   KIND   U32 uint32_t, U64 uint64_t (JSON integer), I64 int64_t, REAL double,
 *          BOOL bool, STR a NUL-terminated string (a char array in C);
 *          CUSTOM: a value built by hand (the key's place in the order is fixed
 *          here; plan_json.c and plan_proto.c each have one function for it,
 *          named after c)
 *   proto  the field of the tessel.v1 message (Stage, PlanFigures, Plan)
 *   json   the key in the document
 *   WHEN   when the key is written: ALWAYS; NONZERO (absent when 0: reads back
 *          as 0); OVER1 (absent when 0 or 1); SIMULATED (with sim_iter_time_s);
 *          NONEMPTY (a STR, absent when "").
 *
 * The document head (TSL_PLAN_DOC_FIELDS) adds the object the key sits in:
 *   X(c, KIND, obj, json, WHEN) with c also the Plan field's name, obj NULL
 *   for the top level or "model", "cluster", "stats".
 *
 * Adding a plan figure: the member in planner/plan.h, one line here, the field
 * in proto/tessel/v1/planner.proto (a new number) and a row in
 * docs/plan-format.md. Keys are written in the order listed.
 */
#ifndef TSL_PLAN_FIELDS_H
#define TSL_PLAN_FIELDS_H

/* One stage of a <plan>: tsl_plan_stage_t ↔ tessel.v1.Stage. */
#define TSL_PLAN_STAGE_FIELDS(X)                                                                   \
    X(first_layer, U32, first_layer, "first_layer", ALWAYS)                                        \
    X(n_layers, U32, n_layers, "n_layers", ALWAYS)                                                 \
    X(first_device, U32, first_device, "first_device", ALWAYS)                                     \
    X(n_devices, U32, n_devices, "n_devices", ALWAYS)                                              \
    X(inflight, U32, inflight, "inflight", ALWAYS)                                                 \
    X(fwd_s, REAL, fwd_s, "fwd_s", ALWAYS)                                                         \
    X(time_s, REAL, time_s, "time_s", ALWAYS)                                                      \
    X(time_nosync_s, REAL, time_nosync_s, "time_nosync_s", ALWAYS)                                 \
    X(p2p_s, REAL, p2p_s, "p2p_s", ALWAYS)                                                         \
    X(wgrad_s, REAL, wgrad_s, "wgrad_s", NONZERO)                                                  \
    X(fb_save_s, REAL, fb_save_s, "fb_save_s", NONZERO)                                            \
    X(ep_save_s, REAL, ep_save_s, "ep_save_s", NONZERO)                                            \
    X(opt_s, REAL, optimizer_s, "opt_s", ALWAYS)                                                   \
    X(chunk1, CUSTOM, chunk1, "chunk1", ALWAYS)                                                    \
    X(ms_bytes, U64, model_states_bytes, "ms_bytes", ALWAYS)                                       \
    X(act_bytes, U64, activation_bytes, "act_bytes", ALWAYS)                                       \
    X(peak_bytes, U64, peak_bytes, "peak_bytes", ALWAYS)                                           \
    X(runs, CUSTOM, runs, "runs", ALWAYS)                                                          \
    X(layers, CUSTOM, layers, "layers", ALWAYS)

/* A <plan>: tsl_plan_t ↔ tessel.v1.PlanFigures. */
#define TSL_PLAN_FIELDS(X)                                                                         \
    X(label, CUSTOM, label, "label", ALWAYS)                                                       \
    X(pp, U32, pp, "pp", ALWAYS)                                                                   \
    X(global_batch, U32, global_batch, "global_batch", ALWAYS)                                     \
    X(micro_batch, U32, micro_batch, "micro_batch", ALWAYS)                                        \
    X(n_micro, U32, n_micro, "n_micro", ALWAYS)                                                    \
    X(iter_time_s, REAL, iter_time_s, "iter_time_s", ALWAYS)                                       \
    X(samples_per_s, REAL, samples_per_s, "samples_per_s", ALWAYS)                                 \
    X(tokens_per_s, REAL, tokens_per_s, "tokens_per_s", ALWAYS)                                    \
    X(peak_bytes, U64, peak_bytes, "peak_bytes", ALWAYS)                                           \
    X(budget_bytes, U64, budget_bytes, "budget_bytes", ALWAYS)                                     \
    X(alpha_t, REAL, alpha_t, "alpha_t", ALWAYS)                                                   \
    X(alpha_m, REAL, alpha_m, "alpha_m", ALWAYS)                                                   \
    X(stages, CUSTOM, stages, "stages", ALWAYS)                                                    \
    X(granularity, CUSTOM, granularity, "granularity", ALWAYS)                                     \
    X(opt_tail_s, REAL, optimizer_tail_s, "opt_tail_s", NONZERO)                                   \
    X(tie_s, REAL, tied_allreduce_s, "tie_s", NONZERO)                                             \
    X(tie_stage, U32, tie_stage, "tie_stage", NONZERO)                                             \
    X(sim_iter_time_s, REAL, sim_iter_time_s, "sim_iter_time_s", NONZERO)                          \
    X(master_stage, U32, master_stage, "master_stage", SIMULATED)                                  \
    X(interleave, U32, interleave, "interleave", OVER1)                                            \
    X(vp_group, U32, vp_group, "vp_group", NONZERO)                                                \
    X(schedule, CUSTOM, schedule, "schedule", ALWAYS)                                              \
    X(iter_time_1f1b_s, REAL, iter_time_1f1b_s, "iter_time_1f1b_s", NONZERO)                       \
    X(grad_reduce_bytes, U32, grad_reduce_bytes, "grad_reduce_bytes", NONZERO)                     \
    X(grad_buf_bytes, U32, grad_buf_bytes, "grad_buf_bytes", NONZERO)                              \
    X(attn_kernel, U32, attn_kernel, "attn_kernel", NONZERO)                                       \
    X(no_fp32_master, BOOL, no_fp32_master, "no_fp32_master", NONZERO)                             \
    X(grad_reduce_exposed, BOOL, grad_reduce_exposed, "grad_reduce_exposed", NONZERO)              \
    X(overlap_param_gather, BOOL, overlap_param_gather, "overlap_param_gather", NONZERO)           \
    X(overlap_tp_dgrad, BOOL, overlap_tp_dgrad, "overlap_tp_dgrad", NONZERO)                       \
    X(unfused_grad_accum, BOOL, unfused_grad_accum, "unfused_grad_accum", NONZERO)                 \
    X(legacy_p2p, BOOL, legacy_p2p, "legacy_p2p", NONZERO)                                         \
    X(tp_comm_overlap, BOOL, tp_comm_overlap, "tp_comm_overlap", NONZERO)                          \
    X(async_tp, BOOL, async_tp, "async_tp", NONZERO)                                               \
    X(autocast, BOOL, autocast, "autocast", NONZERO)                                               \
    X(eager, BOOL, eager, "eager", NONZERO)                                                        \
    X(double_block_fwd, BOOL, double_block_fwd, "double_block_fwd", NONZERO)                       \
    X(cp, U32, cp, "cp", OVER1)                                                                    \
    X(cp_comm, U32, cp_comm, "cp_comm", NONZERO)                                                   \
    X(ep, U32, ep, "ep", OVER1)                                                                    \
    X(etp, U32, etp, "etp", OVER1)                                                                 \
    X(moe_capacity, REAL, moe_capacity_factor, "moe_capacity_factor", NONZERO)                     \
    X(moe_pad, BOOL, moe_pad_to_capacity, "moe_pad_to_capacity", NONZERO)                          \
    X(moe_imbalance, REAL, moe_imbalance, "moe_imbalance", NONZERO)                                \
    X(host_op_us, REAL, host_op_us, "host_op_us", NONZERO)                                         \
    X(fp8_recipe, U32, fp8_recipe, "fp8_recipe", NONZERO)                                          \
    X(fp8_impl, U32, fp8_impl, "fp8_impl", NONZERO)                                                \
    X(loss_impl, U32, loss_impl, "loss_impl", NONZERO)                                             \
    X(fp8_param_gather, BOOL, fp8_param_gather, "fp8_param_gather", NONZERO)                       \
    X(moe_bf16_experts, BOOL, moe_bf16_experts, "moe_bf16_experts", NONZERO)                       \
    X(moe_fp8_dispatch, BOOL, moe_fp8_dispatch, "moe_fp8_dispatch", NONZERO)                       \
    X(moe_alltoall, BOOL, moe_alltoall_dispatcher, "moe_alltoall_dispatcher", NONZERO)             \
    X(moe_unfused_permute, BOOL, moe_unfused_permute, "moe_unfused_permute", NONZERO)              \
    X(moe_fused_mlp, BOOL, moe_fused_mlp, "moe_fused_mlp", NONZERO)                                \
    X(moe_fused_srelu, BOOL, moe_fused_srelu, "moe_fused_srelu", NONZERO)                          \
    X(moe_flex, BOOL, moe_flex_dispatcher, "moe_flex_dispatcher", NONZERO)                         \
    X(moe_flex_backend, U32, moe_flex_backend, "moe_flex_backend", NONZERO)                        \
    X(moe_a2a_overlap, BOOL, moe_a2a_overlap, "moe_a2a_overlap", NONZERO)                          \
    X(moe_a2a_wgrad_inline, BOOL, moe_a2a_wgrad_inline, "moe_a2a_wgrad_inline", NONZERO)           \
    X(fb_serial, BOOL, fb_serial, "fb_serial", NONZERO)                                            \
    X(recompute_modules, CUSTOM, recompute_modules, "recompute_modules", ALWAYS)                   \
    X(bf16_moments, BOOL, bf16_moments, "bf16_moments", NONZERO)                                   \
    X(lazy_grads, BOOL, lazy_grads, "lazy_grads", NONZERO)                                         \
    X(bf16_layers_start, U32, bf16_layers_start, "bf16_layers_start", NONZERO)                     \
    X(bf16_layers_end, U32, bf16_layers_end, "bf16_layers_end", NONZERO)                           \
    X(opt_step, U32, opt_step, "opt_step", NONZERO)                                                \
    X(tp_sync, BOOL, tp_sync, "tp_sync", NONZERO)                                                  \
    X(ds_pipe_p2p, BOOL, ds_pipe_p2p, "ds_pipe_p2p", NONZERO)                                      \
    X(ds_pipe_engine, BOOL, ds_pipe_engine, "ds_pipe_engine", NONZERO)                             \
    X(ds_grad_bucket, BOOL, ds_grad_bucket, "ds_grad_bucket", NONZERO)                             \
    X(torch_pipelining, BOOL, torch_pipelining, "torch_pipelining", NONZERO)                       \
    X(nccl_no_tree, BOOL, nccl_no_tree, "nccl_no_tree", NONZERO)                                   \
    X(norm_impl, U32, norm_impl, "norm_impl", NONZERO)                                             \
    X(cuda_graph_modules, U32, cuda_graph_modules, "cuda_graph_modules", NONZERO)                  \
    X(module_prec, U32, module_precision, "module_precision", NONZERO)                             \
    X(tp_whole_heads, BOOL, tp_whole_heads, "tp_whole_heads", NONZERO)                             \
    X(sdp_layer_roots, BOOL, sdp_layer_roots, "sdp_layer_roots", NONZERO)                          \
    X(sdp_nosync, BOOL, sdp_nosync, "sdp_nosync", NONZERO)                                         \
    X(sdp_keep_weights, BOOL, sdp_keep_weights, "sdp_keep_weights", NONZERO)                       \
    X(ds_bf16_optimizer, BOOL, ds_bf16_optimizer, "ds_bf16_optimizer", NONZERO)                    \
    X(launch_blocking, BOOL, launch_blocking, "launch_blocking", NONZERO)                          \
    X(ds_wall_clock, BOOL, ds_wall_clock, "ds_wall_clock", NONZERO)                                \
    X(ds_zero3_v03, BOOL, ds_zero3_v03, "ds_zero3_v03", NONZERO)                                   \
    X(fp8_amax_tp_only, BOOL, fp8_amax_tp_only, "fp8_amax_tp_only", NONZERO)                       \
    X(fp8_dpa, BOOL, fp8_dpa, "fp8_dpa", NONZERO)                                                  \
    X(unfused_elementwise, BOOL, unfused_elementwise, "unfused_elementwise", NONZERO)              \
    X(fp32, BOOL, fp32, "fp32", NONZERO)                                                           \
    X(tf32_off, BOOL, tf32_off, "tf32_off", NONZERO)                                               \
    X(tf32, BOOL, tf32, "tf32", NONZERO)                                                           \
    X(fp16, BOOL, fp16, "fp16", NONZERO)                                                           \
    X(stack_unfused_attn, BOOL, stack_unfused_attn, "stack_unfused_attn", NONZERO)                 \
    X(cpu_offload_layers, U32, cpu_offload_layers, "cpu_offload_layers", NONZERO)                  \
    X(cpu_offload_s, REAL, cpu_offload_s, "cpu_offload_s", NONZERO)                                \
    X(cpu_offload_bytes, U64, cpu_offload_bytes, "cpu_offload_bytes", NONZERO)                     \
    X(slicer, CUSTOM, slicer, "slicer", ALWAYS)                                                    \
    X(memopt, CUSTOM, memopt, "memopt", ALWAYS)                                                    \
    X(node_order, CUSTOM, node_order, "node_order", ALWAYS)

/* The document around the plans: tsl_plan_head_t (plan_json.h) ↔ tessel.v1.Plan. */
#define TSL_PLAN_DOC_FIELDS(X)                                                                     \
    X(fingerprint, STR, NULL, "fingerprint", ALWAYS)                                               \
    X(model_name, STR, "model", "name", ALWAYS)                                                    \
    X(model_layers, U32, "model", "layers", ALWAYS)                                                \
    X(model_params, U64, "model", "params", ALWAYS)                                                \
    X(tokens_per_sample, U32, "model", "tokens_per_sample", ALWAYS)                                \
    X(seq_len, CUSTOM, "model", "seq_len", ALWAYS)                                                 \
    X(max_context, U32, "model", "max_context", NONZERO)                                           \
    X(train_context, U32, "model", "train_context", NONZERO)                                       \
    X(model_mamba_layers, U32, "model", "mamba_layers", NONZERO)                                   \
    X(cluster_description, STR, "cluster", "description", ALWAYS)                                  \
    X(n_devices, U32, "cluster", "devices", ALWAYS)                                                \
    X(cluster_nodes, U32, "cluster", "nodes", ALWAYS)                                              \
    X(request, CUSTOM, NULL, "request", ALWAYS)                                                    \
    X(best, CUSTOM, NULL, "plan", ALWAYS)                                                          \
    X(alternatives, CUSTOM, NULL, "alternatives", ALWAYS)                                          \
    X(baselines, CUSTOM, NULL, "baselines", ALWAYS)                                                \
    X(dp_runs, U64, "stats", "dp_runs", ALWAYS)                                                    \
    X(dp_states, U64, "stats", "dp_states", ALWAYS)                                                \
    X(configs, U64, "stats", "configs", ALWAYS)                                                    \
    X(batches_tried, U32, "stats", "batches_tried", ALWAYS)                                        \
    X(search_time_s, REAL, NULL, "search_time_s", ALWAYS)                                          \
    X(target, CUSTOM, NULL, "target", ALWAYS)                                                      \
    X(figures, CUSTOM, NULL, "figures", ALWAYS)                                                    \
    X(cp_why, STR, NULL, "cp_why", NONEMPTY)                                                       \
    X(ep_why, STR, NULL, "ep_why", NONEMPTY)                                                       \
    X(cached, BOOL, NULL, "cached", ALWAYS)                                                        \
    X(stale, BOOL, NULL, "stale", ALWAYS)                                                          \
    X(created_unix, I64, NULL, "created_unix", ALWAYS)

/* WHEN, as a condition on the value v of a member of o (o: the C struct or the
 * proto message; both have sim_iter_time_s where SIMULATED is used). */
#define TSL_PLAN_WHEN_ALWAYS(v, o)    1
#define TSL_PLAN_WHEN_NONZERO(v, o)   ((v) != 0)
#define TSL_PLAN_WHEN_OVER1(v, o)     ((v) > 1)
#define TSL_PLAN_WHEN_NONEMPTY(v, o)  ((v) != NULL && (v)[0] != '\0')
#define TSL_PLAN_WHEN_SIMULATED(v, o) ((o)->sim_iter_time_s > 0)

#endif

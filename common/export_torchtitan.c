/*
 * export_torchtitan.c — a plan as torchtitan takes it, in two forms
 * (docs/exports.md says which release reads which):
 *
 *   torchtitan       a Python module whose function tessel_plan() returns a
 *                    Trainer.Config: torchtitan main reads no TOML since
 *                    9810191bb (2026-02-23) and counts batches in tokens since
 *                    73aed7f6c (2026-08-20): training.max_context_length,
 *                    num_tokens_per_microbatch_per_dp_rank,
 *                    num_tokens_per_train_step, parallelism.num_pp_microbatches
 *                    (torchtitan/config/configs.py). Run it with
 *                    --module MODULE --config tessel_plan.
 *   torchtitan-toml  the job TOML of v0.2.0 .. v0.2.2 ([training] local_batch_size,
 *                    global_batch_size, seq_len; pipeline_parallel_microbatch_size),
 *                    stages as module_fqns_per_model_part; v0.1.0's
 *                    pipeline_parallel_split_points (removed 6e06a49cd, 2025-10-13)
 *                    as a comment.
 *
 * torchtitan's space (planner/target_rules.c; tsl_export checks it first): one
 * strategy for the whole model on its device mesh [pp, dp_replicate, dp_shard,
 * tp] (tp innermost), replicas with TP or stages only when also sharded;
 * stages of whole blocks, the embedding in the first and the norm and output
 * in the last; activation checkpointing of every block or none. An interleaved
 * plan is Interleaved1F1B: its model chunks as module_fqns_per_model_part in
 * model order, part q on rank q mod pp (model_parts).
 */
#include <string.h>

#include "export.h"
#include "mtp.h"
#include "pipeline.h"

/* torchtitan's fsdp_reshard_after_forward (a key since 5940ddeb5, [parallelism] in
 * v0.1.0 .. v0.2.2; torchtitan/distributed/fsdp.py get_fsdp_reshard_after_forward_policy)
 * as the plan was priced (docs/cost-model.md "SDP without resharding", "FSDP's
 * SHARD_GRAD_OP"), written wherever FSDP runs so that a base configuration's own policy
 * does not run another:
 *   "never"    sdp_keep_weights without PP: each block gathered in its forward and
 *              kept to its backward, reduce-scattered every micro-batch;
 *   "default"  `not pp_enabled`: with stages, sdp_nosync (each block unsharded
 *              between micro-batches, torch.distributed.pipelining syncing the
 *              gradients on a step's last backward; "never" runs the same there);
 *              without, resharded after every block's forward as ZeRO-3 is priced
 *              ("always" would also reshard the final norm and output, which the
 *              default keeps for the backward that prefetches them at once).
 * A plan priced resharding every micro-batch under stages (no sdp_nosync: not searched
 * for torchtitan) gets no key and a comment that torchtitan runs otherwise. `key` is
 * the line's start. */
static void reshard_policy(const tsl_export_view_t *v, const tsl_export_uniform_t *u,
                           const char *key, const char *comment, FILE *out)
{
    if (u->sdp <= 1 && u->cp <= 1)
        return;
    if (v->pp <= 1 && v->plan->sdp_keep_weights)
        fprintf(out,
                "%s each block's weights gathered in its forward and kept to its backward, "
                "its\n%s gradients reduce-scattered every micro-batch (as priced: "
                "sdp_keep_weights)\n%sfsdp_reshard_after_forward = \"never\"\n",
                comment, comment, key);
    else if (v->pp <= 1)
        fprintf(out,
                "%s each block resharded after its forward and gathered again in its "
                "backward\n%s (as priced: torchtitan's default without PP)\n"
                "%sfsdp_reshard_after_forward = \"default\"\n",
                comment, comment, key);
    else if (v->plan->sdp_nosync)
        fprintf(out,
                "%s each block unsharded between micro-batches, its gradients\n"
                "%s reduce-scattered on the last backward (as priced: torchtitan's default "
                "under PP)\n%sfsdp_reshard_after_forward = \"default\"\n",
                comment, comment, key);
    else
        fprintf(out,
                "%s priced with FSDP resharding and reduce-scattering every micro-batch; "
                "torchtitan\n%s under PP keeps the blocks unsharded (plan --target torchtitan "
                "prices that)\n",
                comment, comment);
}

/* Samples per rank per step: with stages the rank's batch is cut into the
 * micro-batches, otherwise they are gradient-accumulation steps. */
static uint32_t local_batch(const tsl_export_view_t *v, const tsl_export_uniform_t *u)
{
    return v->pp > 1 ? u->micro_per_rank * v->plan->n_micro : u->micro_per_rank;
}

/* Layers [first, end)'s modules: "tok_embeddings", "layers.N", "norm", head. */
static void range_fqns(const tsl_export_view_t *v, uint32_t first, uint32_t end, const char *head,
                       FILE *out)
{
    for (uint32_t i = first; i < end; i++) {
        const char *sep = i > first ? ", " : "";
        if (i == 0)
            fprintf(out, "%s\"tok_embeddings\"", sep);
        else if (i <= v->n_blocks)
            fprintf(out, "%s\"layers.%u\"", sep, i - 1);
        else
            fprintf(out, "%s\"norm\", \"%s\"", sep, head);
    }
}

/* The first source layer of each model part, part_first[0 .. n_parts]: the model
 * cut in order into parts of the sizes the plan priced. 1F1B: part s is stage s.
 * Interleaved1F1B (P·v parts, part q on rank q mod P, torch's style "loop"):
 * part j·P + r the size of stage r's chunk j (target.h tsl_target_torchtitan_parts).
 * ZBV and DualPipeV (2P parts, part q on rank q and 2P − 1 − q, torch's style "v"):
 * the sizes of each rank's chunks (pipeline.h tsl_pipeline_v_parts, the layout the
 * plan priced) — part q < P the first half of stage q's layer count (rounded up),
 * part q >= P the rest of stage 2P − 1 − q's. Either way every rank runs as many
 * layers as its stage in the plan. n_parts: the parts. */
static int model_parts(const tsl_export_view_t *v, uint32_t *part_first, uint32_t *n_parts,
                       tsl_err_t *err)
{
    const tsl_plan_t *p = v->plan;
    if (tsl_pipesim_sched_chunks(p->schedule, 0) == 2) {
        tsl_pipeline_v_parts(v->pp, v->stage_count, part_first);
        *n_parts = 2 * v->pp;
        return 0;
    }
    uint32_t count[TSL_PLAN_MAX_STAGES], vc = p->interleave > 1 ? p->interleave : 1;
    if (tsl_target_torchtitan_parts(v, vc, count, err) != 0)
        return -1;
    *n_parts = v->pp * vc;
    part_first[0] = 0;
    for (uint32_t q = 0; q < *n_parts; q++)
        part_first[q + 1] = part_first[q] + count[q];
    return 0;
}

/* torch.distributed.pipelining's name of the plan's schedule. */
static const char *schedule_name(const tsl_plan_t *p)
{
    return p->schedule == TSL_PIPESIM_SCHED_ZBV         ? "ZBVZeroBubble"
           : p->schedule == TSL_PIPESIM_SCHED_DUALPIPEV ? "DualPipeV"
           : p->interleave > 1                          ? "Interleaved1F1B"
                                                        : "1F1B";
}

static void header(const tsl_export_view_t *v, const tsl_export_uniform_t *u, const char *form,
                   FILE *out)
{
    const tsl_plan_t *p = v->plan;
    fprintf(out,
            "# torchtitan %s for %s, plan \"%s\" from Tessel (docs/exports.md)\n"
            "# %u GPUs; predicted %.4f s/iteration, %.2f samples/s\n",
            form, v->model->name, p->label, u->stage_devices * v->pp, p->iter_time_s,
            p->samples_per_s);
    char placement[8192];
    if (tsl_export_placement(p, placement, sizeof placement))
        fprintf(out, "# %s\n", placement);
    if (tsl_export_tf32(p, placement, sizeof placement))
        fprintf(out, "# %s\n", placement);
    /* torchtitan reduces in float32 (TrainingConfig.mixed_precision_reduce has no
     * other value) and FSDP2 reduce-scatters under the backward */
    if (p->grad_reduce_bytes != 4 && !p->no_fp32_master)
        fputs("# note: the plan was priced with 16-bit gradient reduces; torchtitan "
              "reduces in float32\n",
              out);
    if (p->grad_reduce_exposed)
        fputs("# note: the plan was priced with the gradient reduce after the backward; "
              "FSDP2 overlaps it\n",
              out);
    if (p->schedule == TSL_PIPESIM_SCHED_DUALPIPEV)
        fprintf(out,
                "# DualPipeV: 2 model parts per rank in a V, %u micro-batches (at least 2 per "
                "rank; %.4f s/iteration under\n# 1F1B); the plan priced its F&B steps as "
                "torch runs an OVERLAP_F_B action: forward, then backward;\n# the output "
                "layer runs on rank 0 (the V's last part), where the plan priced it (each "
                "rank its own parts)\n",
                p->n_micro, p->iter_time_1f1b_s);
    if (p->interleave > 1)
        fprintf(out,
                "# Interleaved1F1B: %u model parts per rank, part q on rank q mod %u "
                "(torch's loop placement),\n# each the size of the model chunk the plan "
                "priced; %u micro-batches in groups of %u\n",
                p->interleave, v->pp, p->n_micro, tsl_pipeline_torch_vp_group(v->pp, p->n_micro));
    /* torch waits on every chunk's exchange (cost.h tsl_cost_vp_blocking); a plan priced
     * with the hops hidden in the steady state (Megatron-core's overlap) runs slower */
    if (p->interleave > 1 && !p->torch_pipelining && !p->legacy_p2p)
        fputs("# note: the plan was priced with the interleaved exchanges hidden in the steady "
              "state;\n# torch.distributed.pipelining waits on each (plan --target torchtitan "
              "prices that)\n",
              out);
    if (p->schedule == TSL_PIPESIM_SCHED_ZBV)
        fprintf(out,
                "# zero-bubble ZBV: 2 model parts per rank in a V (%.4f s/iteration under "
                "1F1B); the\n# output layer runs on rank 0 (the V's last part), where the plan "
                "priced it (each rank its own parts)\n",
                p->iter_time_1f1b_s);
}

/* The configurations torchtitan main ships (models/NAME/config_registry.py at
 * b5bcd76c6) for Tessel's model names: a family's words and a size. */
static const struct base_config {
    const char *family, *variant, *size, *module, *fn;
} base_configs[] = {
    {"llama", "3", "405b", "llama3", "llama3_405b"},
    {"llama", "3", "70b", "llama3", "llama3_70b"},
    {"llama", "3", "8b", "llama3", "llama3_8b"},
    {"deepseek", "v3", "", "deepseek_v3", "deepseek_v3_671b"},
    {"qwen3", "", "30b-a3b", "qwen3", "qwen3_30b_a3b"},
};

static const struct base_config *base_config(const tsl_model_t *m)
{
    char low[TSL_NAME_MAX];
    size_t n = 0;
    for (; m->name[n] && n + 1 < sizeof low; n++)
        low[n] = (char)(m->name[n] >= 'A' && m->name[n] <= 'Z' ? m->name[n] + 32
                        : m->name[n] == '_'                    ? '-' /* qwen3_30b_a3b.json */
                                                               : m->name[n]);
    low[n] = '\0';
    for (size_t i = 0; i < sizeof base_configs / sizeof base_configs[0]; i++) {
        const struct base_config *b = &base_configs[i];
        if (strstr(low, b->family) && strstr(low, b->variant) && strstr(low, b->size))
            return b;
    }
    return NULL;
}

/* The first layer with routed experts, NULL for a dense model. */
static const tsl_layer_t *moe_layer(const tsl_model_t *m)
{
    for (uint32_t i = 0; i < m->n_layers; i++)
        if (m->layers[i].experts)
            return &m->layers[i];
    return NULL;
}

/* What a MoE plan was priced as (docs/cost-model.md "Mixture of experts"). */
static void moe_note(const tsl_export_view_t *v, FILE *out)
{
    const tsl_layer_t *l = moe_layer(v->model);
    if (l == NULL)
        return;
    fprintf(out,
            "# MoE: %u routed experts (top-%u) in %u layers over expert_parallel_degree %u, the "
            "innermost\n# ranks of dp_shard x cp x tp; priced dropless and evenly routed "
            "(load_balance_coeff's\n# bias balancing assumed to even the load), each rank's "
            "experts as grouped GEMMs\n",
            l->experts, l->experts_per_tok, tsl_model_moe_layers(v->model),
            v->plan->ep > 1 ? v->plan->ep : 1);
}

/* The routed experts' grouped GEMMs in FP8, as priced: the plan is FP8, the model
 * has experts, and they were not kept bf16. */
static bool fp8_experts(const tsl_export_view_t *v)
{
    return v->plan->fp8_recipe && !v->plan->moe_bf16_experts && moe_layer(v->model) != NULL;
}

static void py_imports(const tsl_export_view_t *v, const tsl_export_uniform_t *u, FILE *out)
{
    const struct base_config *base = base_config(v->model);
    if (base)
        fprintf(out, "from torchtitan.models.%s.config_registry import %s as base_config\n",
                base->module, base->fn);
    if (u->ckpt_blocks)
        fputs("from torchtitan.distributed.activation_checkpoint import FullAC\n", out);
    else if (v->plan->recompute_modules & TSL_RECOMPUTE_TORCHTITAN_OP)
        fputs("from torchtitan.distributed.activation_checkpoint import SelectiveAC\n", out);
    bool mx = v->plan->fp8_recipe == TSL_FP8_MXFP8;
    if (v->plan->fp8_recipe)
        fprintf(out, "from torchtitan.components.quantization import %s%s\n",
                mx ? "MXFP8LinearConverter" : "Float8LinearConverter",
                !fp8_experts(v) ? ""
                : mx            ? ", MXFP8GroupedExpertsConverter"
                                : ", Float8GroupedExpertsConverter");
    if (tsl_mtp_depths(v->model)) /* the MTP depths (mtp.py, since f59c215e8) */
        fputs("from torchtitan.models.common.config_utils import decoder_vocab_size\n"
              "from torchtitan.models.deepseek_v3 import model_registry\n"
              "from torchtitan.models.deepseek_v3.mtp import MTPLoss\n",
              out);
    fputs("from torchtitan.trainer import Trainer\n\n", out);
    if (base == NULL)
        fprintf(out,
                "\ndef base_config() -> Trainer.Config:\n"
                "    # EDIT: return the torchtitan configuration of %s (model, optimizer,\n"
                "    # data); this plan changes only its batch and parallelism\n"
                "    raise NotImplementedError(\"tessel: base_config() names no model\")\n\n",
                v->model->name);
}

/* torchtitan main runs context parallelism only as models/common/decoder_sharding.py
 * set_gqa_inner_attention_local_map lays it out (b5bcd76c6): K and V all-gathered over
 * the CP ranks at the attention's local_map, one FlexAttention kernel over the whole
 * keys (decoder.py raises for SDPA), dK/dV reduced on the way back; its ring rotation
 * (context_parallel_rotate_method) was removed in 8e5554449 (2026-06-14). Tessel prices
 * ring attention (p2p, torch-allgather) or TE's per-chunk all-gather, not that. */
static int python_cp_refused(const tsl_export_uniform_t *u, tsl_err_t *err)
{
    if (u->cp <= 1)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "torchtitan: context parallelism (cp %u): torchtitan main runs it only "
                        "through FlexAttention with K and V all-gathered at the attention "
                        "(models/common/decoder_sharding.py; its ring rotation, "
                        "context_parallel_rotate_method, was removed in 8e5554449), which "
                        "Tessel does not price; export torchtitan-toml for v0.2.x's ring "
                        "attention, or plan with --cp 1",
                        u->cp);
}

int tsl_export_torchtitan(const tsl_export_view_t *v, FILE *out, tsl_err_t *err)
{
    tsl_export_uniform_t u;
    if (tsl_target_uniform(v, &u, err) != 0 || python_cp_refused(&u, err) != 0)
        return -1;
    const tsl_plan_t *p = v->plan;
    uint32_t seq = v->model->layers[1].seq_len;
    header(v, &u, "configuration (torchtitan main since 73aed7f6c, 2026-08-20)", out);
    moe_note(v, out);
    fputs("# run: --module <this module> --config tessel_plan\n", out);
    py_imports(v, &u, out);
    fprintf(out,
            "\ndef tessel_plan() -> Trainer.Config:\n    config = base_config()\n"
            "    config.training.max_context_length = %u\n"
            "    # %u samples per data-parallel rank per micro-batch, %u in all\n"
            "    config.training.num_tokens_per_microbatch_per_dp_rank = %llu\n"
            "    config.training.num_tokens_per_train_step = %llu\n",
            seq, u.micro_per_rank, p->global_batch, (unsigned long long)u.micro_per_rank * seq,
            (unsigned long long)p->global_batch * seq);
    fprintf(out,
            "    par = config.parallelism\n    par.data_parallel_replicate_degree = %u\n"
            "    par.data_parallel_shard_degree = %u\n    par.tensor_parallel_degree = %u\n"
            "    par.enable_sequence_parallel = True\n    par.context_parallel_degree = %u\n"
            "    par.pipeline_parallel_degree = %u\n",
            u.dp, u.sdp, u.tp, u.cp, v->pp);
    if (moe_layer(v->model)) /* always: a base configuration may set its own */
        fprintf(out, "    par.expert_parallel_degree = %u\n", p->ep > 1 ? p->ep : 1);
    uint32_t part_first[2 * TSL_PLAN_MAX_STAGES + 1], parts = 0;
    if (v->pp > 1 && model_parts(v, part_first, &parts, err) != 0)
        return -1;
    if (v->pp > 1) {
        fprintf(out,
                "    par.pipeline_parallel_schedule = \"%s\"\n"
                "    par.num_pp_microbatches = %u\n    par.module_fqns_per_model_part = [\n",
                schedule_name(p), p->n_micro);
        for (uint32_t q = 0; q < parts; q++) {
            fputs("        [", out);
            range_fqns(v, part_first[q], part_first[q + 1], "lm_head", out);
            fputs("],\n", out);
        }
        fputs("    ]\n", out);
    }
    reshard_policy(v, &u, "    par.", "    #", out);
    /* the MTP depths priced: deepseek_v3's model_registry builds them from its last
     * layer and MTPLoss adds their losses (models/deepseek_v3 at b5bcd76c6, as its
     * deepseek_v3_debugmodel_mtp); the flavor is deepseek_v3_671b's; before the converters, which
     * rewrite the model_spec's Linear configs */
    uint32_t mtp = tsl_mtp_depths(v->model);
    const struct base_config *bc = base_config(v->model);
    if (mtp && (bc == NULL || strcmp(bc->module, "deepseek_v3") != 0))
        fprintf(out,
                "    # EDIT: %u MTP depth%s, as priced: the model from deepseek_v3's "
                "model_registry(FLAVOR,\n    # num_mtp_layers=%u) and config.loss = "
                "MTPLoss.Config(...) (torchtitan runs them without PP and CP)\n",
                mtp, mtp > 1 ? "s" : "", mtp);
    else if (mtp)
        fprintf(out,
                "    # %u MTP depth%s, as priced (torchtitan runs them without PP and CP)\n"
                "    config.model_spec = model_registry(\"671B\", attn_backend=\"flex\", "
                "num_mtp_layers=%u)\n"
                "    config.loss = MTPLoss.Config(\n"
                "        global_vocab_size=decoder_vocab_size(config.model_spec),\n    )\n",
                mtp, mtp > 1 ? "s" : "", mtp);
    if (p->no_fp32_master) /* bf16 parameters, gradients and Adam states */
        fputs("    config.training.dtype = \"bfloat16\"\n", out);
    if (p->fp32) /* fp32 compute under FSDP / DDP (TrainingConfig.mixed_precision_param) */
        fputs("    config.training.mixed_precision_param = \"float32\"\n", out);
    /* the converters rewrite the model's Linear configs; lm_head (and a MoE router's
     * gate, priced bf16 as torchtitan's deepseek_v3_671b_float8 keeps it) stay bf16:
     * Float8LinearConverter skips filter_fqns, MXFP8LinearConverter converts only its
     * fqns (an include list: components/quantization/mx.py at b5bcd76c6, whose Config
     * has no filter_fqns; the block linears as its deepseek_v3_debugmodel_mxfp8 names
     * them). model_compile_enabled: whether compile takes the model, as torchtitan's
     * own configurations pass it. */
    const char *compiled = p->eager ? "False" : "True";
    if (p->fp8_recipe == TSL_FP8_MXFP8)
        fprintf(out,
                "    # MXFP8 linears (priced: mxfp8); the attention's and FFNs' only: lm_head%s "
                "bf16\n    config.model_spec.model = MXFP8LinearConverter.Config(\n"
                "        fqns=[\"attention\", \"feed_forward\", \"shared_experts\"],\n"
                "        model_compile_enabled=%s,\n"
                "    ).build().convert(config.model_spec.model)\n",
                moe_layer(v->model) ? " and the router's gate" : "", compiled);
    else if (p->fp8_recipe)
        fprintf(out,
                "    # FP8 linears (priced: %s scaling; torchtitan main's Float8 recipe is "
                "rowwise)\n    config.model_spec.model = Float8LinearConverter.Config(\n"
                "        filter_fqns=[\"lm_head\"%s],\n        model_compile_enabled=%s,\n"
                "    ).build().convert(config.model_spec.model)\n",
                tsl_fp8_recipe_name(p->fp8_recipe), moe_layer(v->model) ? ", \"router.gate\"" : "",
                compiled);
    /* torchtitan's deepseek_v3 float8 configuration does the same; MXFP8's token groups
     * padded to 128, "required by the CuTeDSL quantization kernel on sm_100" (mx.py,
     * deepseek_v3_debugmodel_mxfp8; its default is 32) */
    if (fp8_experts(v))
        fprintf(out,
                "    # the routed experts' grouped GEMMs in FP8 too, as priced\n"
                "    config.model_spec.model = %s.Config(\n        %smodel_compile_enabled=%s,\n"
                "    ).build().convert(config.model_spec.model)\n",
                p->fp8_recipe == TSL_FP8_MXFP8 ? "MXFP8GroupedExpertsConverter"
                                               : "Float8GroupedExpertsConverter",
                p->fp8_recipe == TSL_FP8_MXFP8 ? "pad_multiple=128, " : "", compiled);
    if (p->fp8_param_gather) /* main's float8.md: "all distributed communication is done
                                in high precision" */
        fputs("    # priced with FP8 weight all-gathers: torchtitan main gathers in bf16 (its "
              "float8\n    # all-gather is v0.2's tensorwise enable_fsdp_float8_all_gather; "
              "see the TOML export)\n",
              out);
    /* torch.compile as priced (docs/cost-model.md "Eager modules"): on, the default
     * pricing's fused norms, RoPE and SwiGLU; off for an eager plan */
    fprintf(out, "    config.compile.enable = %s\n", p->eager ? "False" : "True");
    /* torch's micro-pipelined TP as priced: CompileConfig's since 737594746 (2026-08-12;
     * ParallelismConfig has no such field, and its slots refuse the name), which needs
     * compile on with "model" in its components (the default; async_tp is never eager) */
    if (p->async_tp)
        fputs("    config.compile.enable_async_tensor_parallel = True\n", out);
    fputs(u.ckpt_blocks ? "    config.activation_checkpoint = FullAC.Config()\n"
          : p->recompute_modules & TSL_RECOMPUTE_TORCHTITAN_OP
              ? "    config.activation_checkpoint = SelectiveAC.Config()  # op-level\n"
              : "    config.activation_checkpoint = None\n",
          out);
    fputs("    return config\n", out);
    return 0;
}

/* v0.2.x's expert keys (config/job_config.py Parallelism): the experts whole on
 * each EP rank (expert_tensor_parallel_degree 1, what Tessel prices). v0.2.0
 * builds its EP mesh only over whole cp x tp groups; v0.1.0 has no MoE model
 * outside experiments/. */
static void toml_experts(const tsl_export_view_t *v, const tsl_export_uniform_t *u, FILE *out)
{
    uint32_t ep = v->plan->ep > 1 ? v->plan->ep : 1;
    fputs("# mixture of experts: v0.2.0 and later (v0.1.0 has no MoE model outside "
          "experiments/)\n",
          out);
    if (ep > 1 && ep % (u->cp * u->tp) != 0)
        fprintf(out,
                "# v0.2.0 asserts expert_parallel_degree %% (context_parallel_degree x "
                "tensor_parallel_degree = %u) == 0: run v0.2.1 or later\n",
                u->cp * u->tp);
    fprintf(out, "expert_parallel_degree = %u\nexpert_tensor_parallel_degree = 1\n", ep);
}

/* torch.compile as priced (docs/cost-model.md "Eager modules"): v0.2's [compile]
 * section (v0.1.0 reads [training] compile instead: said in a comment). */
static void toml_compile(const tsl_plan_t *p, FILE *out)
{
    fprintf(out,
            "\n# priced %s (v0.1.0: [training] compile = %s)\n[compile]\nenable = %s\n"
            "components = [\"model\", \"loss\"]\n",
            p->eager ? "eager, without torch.compile" : "with torch.compile",
            p->eager ? "false" : "true", p->eager ? "false" : "true");
}

/* FP8 in v0.2's converters (config/job_config.py Quantize): the linears, the routed
 * experts' grouped GEMMs where priced in FP8 (quantize.grouped_mm.*, fqns
 * "experts"), and torchao's FSDP float8 all-gather for fp8_param_gather — only
 * without a recipe_name (v0.2 asserts the two apart; its default path is
 * tensorwise dynamic scaling). */
static void toml_fp8(const tsl_export_view_t *v, FILE *out)
{
    const tsl_plan_t *p = v->plan;
    const char *filter = moe_layer(v->model) ? "[\"output\", \"router.gate\"]" : "[\"output\"]";
    bool mx = p->fp8_recipe == TSL_FP8_MXFP8, grouped = fp8_experts(v);
    if (!p->fp8_recipe)
        return;
    fprintf(out,
            "\n# FP8: %s, the LM head in bf16%s; your [model] keys (name, flavor) go in this "
            "table\n[model]\nconverters = [\"quantize.linear.%s\"%s]\n",
            mx ? "MXFP8 linears (torchao)" : "torchao Float8Linear, tensorwise scaling",
            grouped ? ", the routed experts' grouped GEMMs too" : "", mx ? "mx" : "float8",
            !grouped ? ""
            : mx     ? ", \"quantize.grouped_mm.mx\""
                     : ", \"quantize.grouped_mm.float8\"");
    if (mx)
        fprintf(out, "\n[quantize.linear.mx]\nrecipe_name = \"mxfp8_cublas\"\nfilter_fqns = %s\n",
                filter);
    else if (p->fp8_param_gather)
        fprintf(out,
                "\n[quantize.linear.float8]\n# tensorwise: the default (no recipe_name beside "
                "the FSDP float8 all-gather)\nenable_fsdp_float8_all_gather = true\n"
                "precompute_float8_dynamic_scale_for_fsdp = true\nfilter_fqns = %s\n",
                filter);
    else
        fprintf(out, "\n[quantize.linear.float8]\nrecipe_name = \"tensorwise\"\nfilter_fqns = %s\n",
                filter);
    if (grouped)
        fprintf(out, "\n[quantize.grouped_mm.%s]\n%sfqns = [\"experts\"]\n", mx ? "mx" : "float8",
                mx ? "recipe_name = \"mxfp8\"\n" : "");
    if (mx && p->fp8_param_gather)
        fputs("# priced with FP8 weight all-gathers: torchao's MX linears gather in bf16\n", out);
}

int tsl_export_torchtitan_toml(const tsl_export_view_t *v, FILE *out, tsl_err_t *err)
{
    tsl_export_uniform_t u;
    if (tsl_target_uniform(v, &u, err) != 0)
        return -1;
    if (tsl_mtp_depths(v->model)) /* v0.2.x has no MTP (mtp.py came with f59c215e8) */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "torchtitan-toml: the plan trains %u MTP depths, which torchtitan "
                            "v0.2.x has no module for; export torchtitan (main's Trainer.Config)",
                            tsl_mtp_depths(v->model));
    const tsl_plan_t *p = v->plan;
    header(v, &u, "job TOML (v0.2.0 .. v0.2.2; v0.1.0: see the split points below)", out);
    moe_note(v, out);
    fputs("# add [model], [optimizer] and the rest of your job as usual\n\n", out);
    fprintf(out, "[training]\nlocal_batch_size = %u\nglobal_batch_size = %u\nseq_len = %u\n",
            local_batch(v, &u), p->global_batch, v->model->layers[1].seq_len);
    /* fp32 training: the parameters FSDP (or DDP's autocast) computes in stay fp32
     * (Training.mixed_precision_param, job_config.py at v0.2.0 .. v0.2.2) */
    fputs(p->no_fp32_master ? "dtype = \"bfloat16\"\n\n"
          : p->fp32         ? "mixed_precision_param = \"float32\"\n\n"
                            : "\n",
          out);
    fprintf(out,
            "[parallelism]\ndata_parallel_replicate_degree = %u\n"
            "data_parallel_shard_degree = %u\ntensor_parallel_degree = %u\n"
            "pipeline_parallel_degree = %u\n",
            u.dp, u.sdp, u.tp, v->pp);
    if (p->async_tp) /* torch's micro-pipelined TP as priced (docs/cost-model.md "torch's
                        micro-pipelined TP"); [parallelism] since v0.1.0 */
        fputs("enable_async_tensor_parallel = true\n", out);
    if (u.cp > 1) /* [parallelism] since v0.1.0 (JobConfig Parallelism) */
        fprintf(out, "context_parallel_degree = %u\ncontext_parallel_rotate_method = \"%s\"\n",
                u.cp, p->cp_comm == TSL_CP_P2P ? "alltoall" : "allgather");
    if (moe_layer(v->model))
        toml_experts(v, &u, out);
    uint32_t part_first[2 * TSL_PLAN_MAX_STAGES + 1], parts = 0;
    if (v->pp > 1 && model_parts(v, part_first, &parts, err) != 0)
        return -1;
    if (v->pp > 1) {
        /* v0.1.0's split points start each stage, or under Interleaved1F1B each
         * model part (its stage_ids_this_rank, style "loop"); a V's stages as before */
        bool looped = tsl_pipesim_sched_chunks(p->schedule, 0) != 2;
        uint32_t n_cuts = looped ? parts : v->pp;
        fputs("# v0.1.0 reads no module_fqns_per_model_part; there write instead\n"
              "# pipeline_parallel_split_points = [",
              out);
        for (uint32_t s = 1; s < n_cuts; s++)
            fprintf(out, "%s\"layers.%u\"", s > 1 ? ", " : "",
                    (looped ? part_first[s] : v->stage_first[s]) - 1);
        /* one line: line-oriented TOML readers (Tessel's own eval import) take it */
        fputs("]\nmodule_fqns_per_model_part = [", out);
        for (uint32_t q = 0; q < parts; q++) {
            fputs(q ? ", [" : "[", out);
            range_fqns(v, part_first[q], part_first[q + 1], "output", out);
            fputs("]", out);
        }
        fprintf(out,
                "]\npipeline_parallel_schedule = \"%s\"\n"
                "pipeline_parallel_microbatch_size = %u\n",
                schedule_name(p), u.micro_per_rank);
    }
    reshard_policy(v, &u, "", "#", out);
    if (!u.ckpt_blocks && (p->recompute_modules & TSL_RECOMPUTE_TORCHTITAN_OP))
        fputs("\n[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"op\"\n",
              out);
    else
        fprintf(out, "\n[activation_checkpoint]\nmode = \"%s\"\n", u.ckpt_blocks ? "full" : "none");
    toml_fp8(v, out);
    toml_compile(p, out);
    return 0;
}

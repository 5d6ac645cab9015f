/*
 * print.c — the human-readable plan: one document (plan_json.h shape) printed the
 * same way whether it came from the local planner or from tesseld.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "attn_kernel.h"
#include "commands.h"
#include "cost.h"
#include "cuda_graph.h"
#include "export.h"
#include "gemm_eff.h"
#include "module_prec.h"
#include "mtp.h"
#include "pipesim.h"
#include "strategy.h"
#include "target.h"

static double num(json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

static long long integer(json_t *o, const char *key)
{
    return (long long)json_integer_value(json_object_get(o, key));
}

static const char *str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

const char *tsl_format_params(double n, char *buf, size_t cap)
{
    if (n >= 1e8) /* 0.35B for GPT2-345M, as the presets are quoted */
        snprintf(buf, cap, "%.2fB", n / 1e9);
    else if (n >= 1e5)
        snprintf(buf, cap, "%.2fM", n / 1e6);
    else if (n >= 1e3)
        snprintf(buf, cap, "%.1fK", n / 1e3);
    else
        snprintf(buf, cap, "%.0f", n);
    return buf;
}

const char *tsl_format_seconds(double s, char *buf, size_t cap)
{
    if (s == 0 || s >= 1e-3)
        snprintf(buf, cap, "%.4f s", s);
    else if (s >= 1e-6)
        snprintf(buf, cap, s >= 1e-5 ? "%.3f ms" : "%.2f us", s >= 1e-5 ? s * 1e3 : s * 1e6);
    else
        snprintf(buf, cap, "%.3g s", s);
    return buf;
}

static const char *gib(json_t *o, const char *key, char *buf)
{
    return tsl_format_bytes((uint64_t)integer(o, key), buf, 32);
}

static void print_runs(FILE *out, json_t *stage)
{
    json_t *run;
    size_t i;
    fprintf(out, "         layers:");
    json_array_foreach(json_object_get(stage, "runs"), i, run)
    {
        long long first = integer(run, "first_layer"), count = integer(run, "count");
        if (*str(run, "layers"))
            fprintf(out, "%s %s %s ×%lld", i ? "," : "", str(run, "layers"), str(run, "strategy"),
                    count);
        else if (count == 1)
            fprintf(out, "%s %lld %s ×1", i ? "," : "", first, str(run, "strategy"));
        else
            fprintf(out, "%s %lld-%lld %s ×%lld", i ? "," : "", first, first + count - 1,
                    str(run, "strategy"), count);
    }
    fputc('\n', out);
}

/* A stage's layers ("3-5", or a sublayer plan's "[25.5, 50)") and devices ("8-15"). */
static void stage_cells(json_t *st, char *layers, char *devs, size_t cap)
{
    long long fl = integer(st, "first_layer"), fd = integer(st, "first_device");
    if (*str(st, "layers"))
        snprintf(layers, cap, "%s", str(st, "layers"));
    else
        snprintf(layers, cap, "%lld-%lld", fl, fl + integer(st, "n_layers") - 1);
    snprintf(devs, cap, "%lld-%lld", fd, fd + integer(st, "n_devices") - 1);
}

static void print_stages(FILE *out, json_t *plan)
{
    if (strcmp(str(plan, "granularity"), "sublayer") == 0)
        fprintf(out, "\n  granularity: attention/FFN blocks (AutoPipe); layers are [from, to) in "
                     "source layers, 7.5 = the FFN half of layer 7\n");
    json_t *st, *stages = json_object_get(plan, "stages");
    size_t i;
    char layers[48], devs[48];
    /* The layers and devices columns widen to their longest entries (a sublayer
       span such as "[25.5, 50)", a 131072-GPU stage's "131064-131071"), so the
       figures after them stay under their headings. */
    int lw = 9, dw = 11;
    json_array_foreach(stages, i, st)
    {
        stage_cells(st, layers, devs, sizeof layers);
        lw = (int)strlen(layers) > lw ? (int)strlen(layers) : lw;
        dw = (int)strlen(devs) > dw ? (int)strlen(devs) : dw;
    }
    fprintf(out, "\n  %-5s %-*s %-*s %-8s %-10s %-10s %-10s %-12s %s\n", "stage", lw, "layers", dw,
            "devices", "inflight", "time/mb", "p2p/mb", "optimizer", "peak/device", "model states");
    json_array_foreach(stages, i, st)
    {
        char peak[32], ms[32], t[32], p2p[32], opt[32];
        stage_cells(st, layers, devs, sizeof layers);
        tsl_format_seconds(num(st, "time_s"), t, sizeof(t));
        tsl_format_seconds(num(st, "p2p_s"), p2p, sizeof(p2p));
        tsl_format_seconds(num(st, "opt_s"), opt, sizeof(opt));
        fprintf(out, "  %-5zu %-*s %-*s %-8lld %-10s %-10s %-10s %-12s %s\n", i, lw, layers, dw,
                devs, integer(st, "inflight"), t, p2p, opt, gib(st, "peak_bytes", peak),
                gib(st, "ms_bytes", ms));
        print_runs(out, st);
    }
}

/* Where a default budget came from: the device's memory less the reserve the
 * search keeps for what it does not count (search.h). Ends the line. */
static void print_reserve(FILE *out, json_t *req)
{
    char res[32];
    if (!json_is_object(req) || integer(req, "memory_bytes") > 0)
        fputc('\n', out); /* a budget given is the budget */
    else if (integer(req, "memory_reserve_bytes") > 0)
        fprintf(out, " (device memory less the %s reserve asked)\n",
                gib(req, "memory_reserve_bytes", res));
    else
        fprintf(out, " (device memory less 1G + 5%% reserved for the CUDA context, NCCL "
                     "buffers and fragmentation)\n");
}

/* A zero-bubble schedule (docs/cost-model.md "Zero-bubble schedules"). */
static bool zero_bubble(json_t *plan)
{
    const char *sc = str(plan, "schedule");
    return strcmp(sc, "zbh1") == 0 || strcmp(sc, "zbv") == 0;
}

/* DeepSeek-V3's DualPipeV (docs/cost-model.md "DualPipeV"). */
static bool dualpipev(json_t *plan)
{
    return strcmp(str(plan, "schedule"), "dualpipev") == 0;
}

/* What the plan recomputes beside full CKPT and the attention core (the layers'
 * +ckpt / +selckpt), and Adam's moments in bf16 (docs/cost-model.md "Recompute of
 * named modules", "Precision and overlap"). */
static void print_recompute(FILE *out, json_t *plan)
{
    json_t *mods = json_object_get(plan, "recompute_modules"), *m;
    size_t i;
    m = json_array_get(mods, 0);
    if (json_array_size(mods) == 1 && json_is_string(m) &&
        strcmp(json_string_value(m), "torchtitan_op") == 0) {
        fputs("  recompute: torchtitan's op-level selective AC (torchtitan_op): every other matmul "
              "output and the attention output saved, the rest again in the backward\n",
              out);
        mods = NULL;
    }
    if (json_array_size(mods) > 0) {
        fputs("  recompute: modules", out);
        json_array_foreach(mods, i, m)
        {
            if (json_is_string(m))
                fprintf(out, "%s %s", i ? "," : "", json_string_value(m));
            else
                fprintf(out, "%s (unknown: %lld)", i ? "," : "", (long long)json_integer_value(m));
        }
        fputs(" on every layer without +ckpt, again in the backward (Megatron-LM's "
              "--recompute-modules)\n",
              out);
    }
    if (json_is_true(json_object_get(plan, "bf16_moments")))
        fputs("  moments:   Adam's moments in bf16 beside fp32 master weights (12 bytes of "
              "states per parameter with 16-bit gradients)\n",
              out);
    if (json_is_true(json_object_get(plan, "lazy_grads")))
        fputs("  gradients: from each chunk's first backward to the step (PyTorch FSDP), not "
              "kept all along\n",
              out);
    if (json_integer_value(json_object_get(plan, "cpu_offload_layers")) > 0)
        fprintf(out,
                "  offload:   the first %lld Transformer layers' activations to host memory "
                "and back (Megatron-LM --cpu-offloading-num-layers), %.1f GiB per device; "
                "%.4f s of waits for the copies\n",
                (long long)json_integer_value(json_object_get(plan, "cpu_offload_layers")),
                (double)json_integer_value(json_object_get(plan, "cpu_offload_bytes")) /
                    (1024.0 * 1024.0 * 1024.0),
                json_number_value(json_object_get(plan, "cpu_offload_s")));
}

/* Context parallelism (docs/cost-model.md "Context parallelism"): the degree and
 * exchange, and for the best plan why the search took that degree. */
static void print_cp(FILE *out, json_t *plan, json_t *doc)
{
    static const char *const how[] = {"ring attention, K/V blocks passed under the core",
                                      "K/V all-gathered before the core",
                                      "Ulysses all-to-all of Q/K/V and O, heads split",
                                      "torch's ring, K/V all-gathered once per pass, "
                                      "exposed as compiled"};
    long long cp = integer(plan, "cp"), comm = integer(plan, "cp_comm");
    bool known = comm >= 0 && comm < TSL_CP_COMM_COUNT;
    const char *text = known ? how[comm] : "?";
    /* eager, torch's waits fall at each buffer's first use (docs/cost-model.md) */
    if (comm == TSL_CP_TORCH_AG && json_is_true(json_object_get(plan, "eager")))
        text = "torch's ring, K/V all-gathered under its first step (eager)";
    const char *why = json_object_get(doc, "plan") == plan ? str(doc, "cp_why") : "";
    if (cp > 1)
        fprintf(out, "  context:   cp %lld (%s: %s), every layer's sequence split %lld ways\n", cp,
                known ? tsl_cp_comm_name((uint32_t)comm) : "?", text, cp);
    if (why[0])
        fprintf(out, "  cp why:    %s\n", why);
}

/* Where the plan asks for Megatron-LM's EP all-to-all overlap (moe_a2a_overlap), the
 * overlap line: the planner's rule (plan.h tsl_plan_ep_overlap_runs, which the pricing
 * and the Megatron-LM export follow) on the plan read back (export.h), so that the line
 * says "overlapped" exactly where a saving was priced; where it does not run, what the
 * rule found in the plan. */
static void print_ep_overlap(FILE *out, json_t *plan)
{
    tsl_plan_t *p = malloc(sizeof(*p));
    tsl_err_t err = {0};
    if (p == NULL || tsl_plan_from_json(plan, p, &err) != 0) {
        fprintf(out, "  overlap:   moe_a2a_overlap asked (%s)\n", p ? err.msg : "out of memory");
        free(p);
        return;
    }
    uint32_t full = 0; /* layers under full recompute */
    for (uint32_t i = 0; i < p->n_layers && i < TSL_PLAN_MAX_LAYERS; i++)
        full += p->layer[i].ckpt;
    if (tsl_plan_ep_overlap_runs(p))
        fputs("  overlap:   the EP all-to-alls of one micro-batch under another's compute "
              "(Megatron-LM's --overlap-moe-expert-parallel-comm)\n",
              out);
    else /* ep_overlap saves 0 */
        fprintf(out,
                "  overlap:   none priced (moe_a2a_overlap asked): Megatron-LM overlaps the EP "
                "all-to-alls at EP > 1 with PP 1 or its interleaved 1F1B only, and not under "
                "full recompute; this plan runs EP %u, PP %u, %s%s\n",
                p->ep > 1 ? p->ep : 1, p->pp,
                p->schedule         ? str(plan, "schedule")
                : p->interleave > 1 ? "interleaved"
                                    : "not interleaved",
                full ? ", full recompute" : "");
    free(p);
}

/* Expert parallelism (docs/cost-model.md "Mixture of experts"): the degrees, the
 * routing as priced, and for the best plan why the search took them. */
static void print_ep(FILE *out, json_t *plan, json_t *doc)
{
    long long ep = integer(plan, "ep"), etp = integer(plan, "etp");
    double cap = num(plan, "moe_capacity_factor"), imb = num(plan, "moe_imbalance");
    const char *why = json_object_get(doc, "plan") == plan ? str(doc, "ep_why") : "";
    ep = ep > 1 ? ep : 1;
    if (etp > 1)
        fprintf(out,
                "  experts:   ep %lld x etp %lld, each MoE layer's experts split %lld ways and "
                "each expert's width %lld ways (expert TP), tokens dispatched by all-to-all, "
                "then gathered over the expert-TP ranks\n",
                ep, etp, ep, etp);
    else if (ep > 1)
        fprintf(out,
                "  experts:   ep %lld, each MoE layer's experts split %lld ways (expert TP 1), "
                "tokens dispatched and combined by all-to-all\n",
                ep, ep);
    if (cap > 0)
        fprintf(out,
                "  routing:   capacity factor %g: an expert takes at most %g x the mean of a "
                "rank's routed tokens, %s\n",
                cap, cap,
                json_is_true(json_object_get(plan, "moe_pad_to_capacity"))
                    ? "padded to it (the busiest expert's rows and the exchange at the capacity)"
                    : "the rest dropped");
    if (imb > 0)
        fprintf(out, "  imbalance: the busiest expert routed %g x the mean tokens%s\n", imb,
                cap > 0 && !json_is_true(json_object_get(plan, "moe_pad_to_capacity"))
                    ? " (up to the capacity)"
                    : "");
    if (json_is_true(json_object_get(plan, "moe_alltoall_dispatcher")))
        fputs("  dispatch:  Megatron-LM's all-to-all dispatcher (its counts' all-gather, the "
              "sync before the dispatch, the routing weights' all-to-all, the second "
              "permutation)\n",
              out);
    if (json_is_true(json_object_get(plan, "moe_unfused_permute")))
        fputs("  permute:   MCore v0.8's unfused token permutation (argsort and gather; the "
              "combine's scatter, routing-weight product and top-k sum)\n",
              out);
    if (json_is_true(json_object_get(plan, "moe_fused_mlp")))
        fputs("  moe mlp:   FC1, activation and FC2 through Transformer Engine's op fuser (no "
              "eager clamp, offset copy or per-expert bias)\n",
              out);
    if (json_is_true(json_object_get(plan, "moe_fused_srelu")))
        fputs("  moe act:   the routing weights inside the fused squared ReLU (no eager "
              "product and cast)\n",
              out);
    if (json_is_true(json_object_get(plan, "moe_a2a_overlap")))
        print_ep_overlap(out, plan);
    if (json_is_true(json_object_get(plan, "moe_flex_dispatcher"))) {
        json_int_t b = json_integer_value(json_object_get(plan, "moe_flex_backend"));
        const char *name = b > 0 ? tsl_flex_backend_name((uint32_t)b) : NULL;
        fprintf(out,
                "  dispatch:  a flex dispatcher (%s: one network copy per token and "
                "destination NVLink domain%s)\n",
                name ? name : "HybridEP, DeepEP",
                b == TSL_FLEX_HYBRIDEP ? "; each MoE forward gathers the group's routing map" : "");
    }
    if (why[0])
        fprintf(out, "  ep why:    %s\n", why);
}

/* The first GPU of a cluster description ("2 nodes x 8 A100-80G (80 GiB) + ...",
 * tsl_cluster_describe) that has no published attention shares for `kernel`, into
 * buf; false when every one has them or none is named. */
static bool gpu_without_kernel_shares(const char *desc, uint32_t kernel, char *buf, size_t cap)
{
    for (const char *p = desc ? strstr(desc, " x ") : NULL; p; p = strstr(p + 3, " x ")) {
        const char *g = p + 3;
        g += strspn(g, "0123456789");
        g += strspn(g, " ");
        snprintf(buf, cap, "%.*s", (int)strcspn(g, " ,("), g);
        if (buf[0] && !tsl_gemm_eff_kernel_shares(buf, kernel))
            return true;
    }
    return false;
}

/* The fused attention kernel a request named (attn_kernel.h): its published shares
 * on the H100 part; elsewhere the GPU's one figure, which the line says. */
static void print_attn_kernel(FILE *out, json_t *plan, json_t *cluster)
{
    uint32_t k = (uint32_t)integer(plan, "attn_kernel");
    if (k == TSL_ATTN_KERNEL_DEFAULT)
        return;
    const char *who = k == TSL_ATTN_KERNEL_FLASH2          ? "FlashAttention-2"
                      : k == TSL_ATTN_KERNEL_CUDNN         ? "cuDNN's fused SDPA"
                      : k == TSL_ATTN_KERNEL_FLASH1        ? "FlashAttention (v1)"
                      : k == TSL_ATTN_KERNEL_FLASH1_TRITON ? "FlashAttention's Triton port (v1)"
                                                           : "an unknown kernel";
    char gpu[64];
    if (gpu_without_kernel_shares(str(cluster, "description"), k, gpu, sizeof gpu))
        fprintf(out,
                "  stack:     fused attention by %s (attn_kernel %s): %s has no published "
                "share for it (FlashAttention-2 and cuDNN on H100, H200, H800; every kernel "
                "on A100), priced as the GPU's one figure\n",
                who, tsl_attn_kernel_name(k), gpu);
    else if (k == TSL_ATTN_KERNEL_FLASH1_TRITON) /* no figure of its own (attn_kernel.h) */
        fprintf(out,
                "  stack:     fused attention by %s (attn_kernel %s), at the A100 band 0.40 / "
                "0.30 of peak (inferred from llm-foundry's MPT runs)\n",
                who, tsl_attn_kernel_name(k));
    else
        fprintf(out,
                "  stack:     fused attention by %s (attn_kernel %s), at its published rate by "
                "head dimension and keys%s\n",
                who, tsl_attn_kernel_name(k), k == TSL_ATTN_KERNEL_FLASH1 ? ", causal or not" : "");
}

/* A plan switch (a boolean plan key) and the line that says what it prices. */
typedef struct switch_line {
    const char *key, *line;
} switch_line_t;

/* Whether a layer's strategy runs what a switch changes. */
typedef bool (*switch_runs_fn)(const tsl_strategy_t *s);

static bool runs_tp(const tsl_strategy_t *s)
{
    return tsl_strategy_degree(s, TSL_DIM_TP) > 1;
}

static bool runs_tp_sp(const tsl_strategy_t *s)
{
    return s->sp && runs_tp(s);
}

static bool runs_sdp(const tsl_strategy_t *s)
{
    return tsl_strategy_degree(s, TSL_DIM_SDP) > 1;
}

/* Some layer of the plan's stages runs f; a plan without readable runs counts as
 * running it (the line as recorded). */
static bool plan_runs(json_t *plan, switch_runs_fn f)
{
    size_t i, j, n = 0;
    json_t *st, *run;
    json_array_foreach(json_object_get(plan, "stages"), i, st)
    {
        json_array_foreach(json_object_get(st, "runs"), j, run)
        {
            tsl_strategy_t s;
            const char *text = json_string_value(json_object_get(run, "strategy"));
            if (tsl_strategy_parse(text, &s, NULL) != 0 || f(&s))
                return true;
            n++;
        }
    }
    return n == 0;
}

/* The stack switches printed before the attention kernel's line, then after it. */
static const switch_line_t stack_lines_a[] = {
    {"double_block_fwd",
     "  stack:     every block's forward runs twice (AMP's Megatron-LM v1.1.5 fork)\n"},
    {"ds_pipe_p2p", "  stack:     stage boundaries by DeepSpeed's pipeline engine (AMP's fork: "
                    "1/t and the fp16 mask per TP rank, blocking)\n"},
    {"ds_pipe_engine", "  stack:     stages by DeepSpeed's PipelineEngine (four blocking one-way "
                       "transfers a 1F1B cycle, each held by both stages)\n"},
    {"fp32", "  stack:     fp32 training: GEMMs at the GPU's TF32 rate (fp32 without TF32), "
             "4-byte activations and collectives, 16 B of model states per parameter\n"},
    {"tf32_off", "  stack:     TF32 off: fp32 GEMMs at the fp32 peak (PyTorch's allow_tf32 False "
                 "since 1.12, which the stack does not set; or GPUs without TF32)\n"},
    {"tf32", "  stack:     TF32 on: fp32 GEMMs at the TF32 rate, the training script setting "
             "allow_tf32 True (--tf32; no stack setting does)\n"},
    {"ds_bf16_optimizer",
     "  stack:     DeepSpeed's BF16_Optimizer: each micro-batch's gradient added into its "
     "buffer (cast where it is fp32), all-reduced over DP, the master and moments sharded, the "
     "tied gradient at the buffer's bytes\n"},
    {"ds_wall_clock", "  stack:     DeepSpeed's synchronising timers around every pipeline "
                      "instruction: each starts on an idle GPU\n"},
    {"fp8_amax_tp_only", "  stack:     TE's amax all-reduce over TP only, asynchronous "
                         "(NVTE_DP_AMAX_REDUCE_INTERVAL=0, TE before v1.6)\n"},
    {"fp8_dpa", "  stack:     FP8 attention: cuDNN's FP8 core, a sliding window's backward "
                "over the whole causal square\n"},
    {"ds_zero3_v03", "  stack:     DeepSpeed 0.3's ZeRO-3: a collective per weight and tensor, "
                     "all exposed, the list API's copies per rank\n"},
    {"unfused_elementwise", "  stack:     Megatron-LM v1.1.5's unfused kernels: each bias added "
                            "apart, the mask by masked_fill_, the context's permute copy\n"},
    {"launch_blocking", "  stack:     every kernel launch synchronous (CUDA_LAUNCH_BLOCKING=1): "
                        "each op's host dispatch added to the GPU's time\n"},
    {"ds_grad_bucket", "  stack:     the DP all-reduce through DeepSpeed's gradient bucket "
                       "(flatten, 1/DP scale, copy back into each .grad)\n"},
    {"tp_whole_heads", "  stack:     every attention head on each TP rank, 1/TP as wide: the "
                       "unfused core's scores not split by TP (AMP's TransGAN attention)\n"},
    {"async_tp", "  stack:     torch's micro-pipelined TP (AsyncTP): the SP all-gathers feeding a "
                 "GEMM and the forward's reduce-scatters under their GEMMs, in TP chunks\n"},
    {"sdp_layer_roots",
     "  stack:     SDP as fairscale 0.4.5's FSDP with a root per layer (Galvatron-BMW): the "
     "first unit's gather exposed in the forward, the rest and the backward's prefetched\n"},
    {"sdp_nosync",
     "  stack:     SDP kept unsharded between micro-batches (FSDP2 under PP, torchtitan): "
     "weights gathered once, gradients reduce-scattered after the last micro-batch\n"},
    {"sdp_keep_weights",
     "  stack:     SDP keeps each layer's gathered weights from its forward to its backward "
     "(torch FSDP's SHARD_GRAD_OP): no backward gather, every layer's weights held at the peak\n"},
};
/* The host figure priced where the request gave the stack's own (host_op_us;
 * docs/cost-model.md "Host dispatch"); none where it is the built-in one. */
static void print_host_op(FILE *out, json_t *plan)
{
    double us = num(plan, "host_op_us");
    if (us > 0)
        fprintf(out,
                "  stack:     eager ops at %.1f us of host time each (the stack's own figure; "
                "built-in: %.1f us)\n",
                us, TSL_ROOFLINE_HOST_OP_S * 1e6);
    /* Megatron-core's per-layer CUDA graphs (docs/cost-model.md "CUDA-graphed modules") */
    uint32_t graphs = (uint32_t)json_integer_value(json_object_get(plan, "cuda_graph_modules"));
    if (graphs) {
        char names[128];
        tsl_cuda_graph_modules_format(graphs, names, sizeof names);
        fprintf(out,
                "  stack:     CUDA graphs of %s: their host ops replayed as one graph launch "
                "each per pass\n",
                names);
    }
}

/* Whether the request asked for per-module precision: the plan document's list
 * (plan_json.c) or tesseld's stored request's nibbles (api/request.c). */
static bool req_module_prec(json_t *req)
{
    json_t *v = json_object_get(req, "module_precision");
    return json_is_string(v) ? json_string_length(v) > 0 : json_integer_value(v) != 0;
}

/* Megatron-core's per-module quantization config (docs/cost-model.md "Per-module
 * precision"): the linears priced at their own precision */
static void print_module_prec(FILE *out, json_t *plan)
{
    uint32_t prec = (uint32_t)json_integer_value(json_object_get(plan, "module_precision"));
    if (prec) {
        char list[256];
        tsl_module_prec_format(prec, list, sizeof list);
        fprintf(out, "  stack:     linears at their own precision: %s\n", list);
    }
}

static const switch_line_t stack_lines_b[] = {
    {"tp_sync", "  stack:     every TP all-reduce between two device synchronisations (AMP's "
                "Megatron-LM v1.1.5 fork)\n"},
    {"eager", "  eager:     modules run eagerly, no torch.compile: RMSNorm, RoPE and SwiGLU as "
              "unfused kernels\n"},
};

/* The switches recorded from the request whatever the search picks (plan --async-tp
 * on one GPU, --sdp-layer-roots picking DP), and their line where no layer runs them:
 * the line above described a switch no layer ran. */
static const struct idle_line {
    const char *key;
    switch_runs_fn runs;
    const char *line;
} idle_lines[] = {
    {"tp_whole_heads", runs_tp,
     "  stack:     tp_whole_heads (--tp-whole-heads) changes nothing: no layer of the plan runs "
     "TP > 1\n"},
    {"async_tp", runs_tp_sp,
     "  stack:     async_tp (--async-tp) changes nothing: no layer of the plan runs TP > 1 with "
     "SP\n"},
    {"sdp_layer_roots", runs_sdp,
     "  stack:     sdp_layer_roots (--sdp-layer-roots) changes nothing: no layer of the plan "
     "runs an SDP (FSDP) level\n"},
    {"sdp_keep_weights", runs_sdp,
     "  stack:     sdp_keep_weights (--sdp-keep-weights) changes nothing: no layer of the plan "
     "runs an SDP (FSDP) level\n"},
};

/* tf32 where the stack priced (target, "" or NULL none) runs fp32 matmuls as TF32
 * by default: only megatron, deepspeed and torchtitan turn TF32 off (target.h
 * tsl_target_knobs: knobs.tf32_off), so elsewhere --tf32 prices what fp32 does. */
static const char tf32_idle_line[] =
    "  stack:     tf32 (--tf32) changes nothing: without a --target megatron, deepspeed or "
    "torchtitan the fp32 GEMMs run as TF32 already (PyTorch 1.7-1.11's allow_tf32 default)\n";

static bool tf32_moot(const char *target)
{
    uint32_t t;
    tsl_cost_knobs_t k;
    if (target == NULL || target[0] == '\0' || tsl_target_parse(target, &t, NULL) != 0)
        return true;
    tsl_target_knobs(t, &k);
    return !k.tf32_off;
}

/* key's line where the plan runs none of what it changes, else NULL. */
static const char *idle_line(json_t *plan, const char *key, const char *target)
{
    if (strcmp(key, "tf32") == 0 && tf32_moot(target))
        return tf32_idle_line;
    for (size_t i = 0; i < sizeof idle_lines / sizeof idle_lines[0]; i++)
        if (strcmp(idle_lines[i].key, key) == 0 && !plan_runs(plan, idle_lines[i].runs))
            return idle_lines[i].line;
    return NULL;
}

static void print_switch_lines(FILE *out, json_t *plan, const char *target, const switch_line_t *t,
                               size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!json_is_true(json_object_get(plan, t[i].key)))
            continue;
        const char *idle = idle_line(plan, t[i].key, target);
        fputs(idle ? idle : t[i].line, out);
    }
}

/* The event simulator's cross-check of a pipelined plan (planner tsl_search_simulate)
 * and its slicer; a pipelined plan without one says why rather than leaving the
 * line out: m·v or the stages past what the simulator takes, else the planner
 * gave none (a tesseld built before this line stopped at m·v 1,024). */
static void print_simulated(FILE *out, json_t *plan, long long pp)
{
    char it[32];
    if (num(plan, "sim_iter_time_s") > 0) {
        fprintf(out, "  simulated: %s/iteration by the %s event simulator (master stage %lld)\n",
                tsl_format_seconds(num(plan, "sim_iter_time_s"), it, sizeof it),
                zero_bubble(plan) || dualpipev(plan) ? str(plan, "schedule")
                : integer(plan, "interleave") > 1    ? "interleaved 1F1B"
                                                     : "1F1B",
                integer(plan, "master_stage"));
        json_t *sl = json_object_get(plan, "slicer");
        if (json_is_object(sl))
            fprintf(
                out,
                "  slicer:    the first %lld micro-batch%s run forward in halves: %s/iteration\n",
                integer(sl, "n_sliced"), integer(sl, "n_sliced") == 1 ? "" : "es",
                tsl_format_seconds(num(sl, "iter_time_s"), it, sizeof it));
        return;
    }
    if (pp < 2)
        return; /* nothing to simulate */
    int sched = tsl_pipesim_sched_parse(str(plan, "schedule"));
    long long v = tsl_pipesim_sched_chunks(sched < 0 ? 0 : (uint32_t)sched,
                                           (uint32_t)integer(plan, "interleave"));
    long long mv = integer(plan, "n_micro") * v;
    if (pp > TSL_PIPESIM_MAX_STAGES)
        fprintf(out, "  simulated: none: %lld stages, past the event simulator's %u\n", pp,
                TSL_PIPESIM_MAX_STAGES);
    else if (mv > TSL_PIPESIM_MAX_MICRO)
        fprintf(out,
                "  simulated: none: m·v = %lld micro-batch chunks, past the event simulator's "
                "%u (the prediction above is the closed form's)\n",
                mv, TSL_PIPESIM_MAX_MICRO);
    else
        fputs("  simulated: none: the planner returned no simulated time for this plan\n", out);
}

static void print_plan(FILE *out, json_t *plan, json_t *doc, json_t *req, json_t *cluster,
                       const char *target, tsl_print_tie_t tie)
{
    char peak[32], budget[32];
    long long pp = integer(plan, "pp");
    fprintf(out, "  pipeline:  %lld stage%s; global batch %lld = %lld micro-batch%s of %lld (%s)\n",
            pp, pp == 1 ? "" : "s", integer(plan, "global_batch"), integer(plan, "n_micro"),
            integer(plan, "n_micro") == 1 ? "" : "es", integer(plan, "micro_batch"),
            pp > 1 && zero_bubble(plan)                 ? "zero-bubble"
            : pp > 1 && dualpipev(plan)                 ? "DualPipeV"
            : pp > 1 && integer(plan, "interleave") > 1 ? "interleaved 1F1B"
            : pp > 1                                    ? "1F1B"
            : integer(plan, "n_micro") > 1              ? "gradient accumulation"
                                                        : "one step");
    if (zero_bubble(plan)) {
        char t1[32];
        fprintf(out,
                "  schedule:  %s, the backward split into input (B) and weight (W) gradients, "
                "W filling the bubble: %s/iteration without it\n",
                strcmp(str(plan, "schedule"), "zbv") == 0 ? "ZB-V (2 chunks per stage in a V)"
                                                          : "ZB-H1",
                tsl_format_seconds(num(plan, "iter_time_1f1b_s"), t1, sizeof t1));
    }
    if (dualpipev(plan))
        fputs("  schedule:  DualPipeV, 2 chunks per stage in a V, one micro-batch's forward "
              "overlapped with another's backward (DeepSeek-V3)\n",
              out);
    if (integer(plan, "interleave") > 1)
        fprintf(out,
                "  interleave: %lld model chunks per stage (interleaved 1F1B: bubble / %lld, "
                "p2p x %lld)\n",
                integer(plan, "interleave"), integer(plan, "interleave"),
                integer(plan, "interleave"));
    if (integer(plan, "vp_group") > 0)
        fprintf(out,
                "  vp group:  %lld micro-batches per group of the interleaved schedule "
                "(Megatron-LM's default: pp, %lld)\n",
                integer(plan, "vp_group"), integer(plan, "pp"));
    char it[32];
    fprintf(out, "  predicted: %s/iteration, %.2f samples/s, %.0f tokens/s\n",
            tsl_format_seconds(num(plan, "iter_time_s"), it, sizeof it), num(plan, "samples_per_s"),
            num(plan, "tokens_per_s"));
    /* the stack's step (opt_step.h) where it is not the one fused kernel */
    const char *step = tsl_opt_step_name((uint32_t)integer(plan, "opt_step"));
    if (num(plan, "opt_tail_s") > 0)
        fprintf(out,
                "  optimizer: %s of it after the pipeline's end (each stage's step, once per "
                "iteration, after its last backward%s%s)\n",
                tsl_format_seconds(num(plan, "opt_tail_s"), it, sizeof it),
                integer(plan, "opt_step") ? "; opt_step " : "",
                integer(plan, "opt_step") ? (step ? step : "?") : "");
    if (num(plan, "tie_s") > 0) /* the embedding group's all-reduce: whose copy it sums */
        fprintf(out,
                "  %s: %s of that all-reduces the word embedding's gradient between stage 0 and "
                "stage %lld (%s), before their steps\n",
                tie == TSL_PRINT_TIE_HEAD  ? "tied head"
                : tie == TSL_PRINT_TIE_MTP ? "embedding group (MTP)"
                                           : "embedding group",
                tsl_format_seconds(num(plan, "tie_s"), it, sizeof it), pp - 1,
                tie == TSL_PRINT_TIE_HEAD  ? "its copy in the last stage"
                : tie == TSL_PRINT_TIE_MTP ? "the copy the MTP depths read in the last stage"
                                           : "its copy in the last stage: a tied head's or the "
                                             "MTP depths'");
    uint32_t fp8 = (uint32_t)integer(plan, "fp8_recipe");
    bool bf16_experts = json_is_true(json_object_get(plan, "moe_bf16_experts"));
    const char *bits = fp8 == TSL_FP8_NVFP4 ? "FP4" : "FP8"; /* nvfp4: E2M1 */
    if (fp8)
        fprintf(out,
                "  precision: %s (%s scaling%s) in the blocks' linear GEMMs%s; attention core, "
                "%snorms and LM head in bf16%s%s%s\n",
                bits, tsl_fp8_recipe_name(fp8) ? tsl_fp8_recipe_name(fp8) : "?",
                integer(plan, "fp8_impl") == TSL_FP8_IMPL_TORCHAO ? ", torchao" : "",
                bf16_experts ? "" : " and any MoE layer's routed experts'",
                bf16_experts ? "routed experts (MoE), " : "",
                json_is_true(json_object_get(plan, "fp8_param_gather")) ? "; " : "",
                json_is_true(json_object_get(plan, "fp8_param_gather"))
                    ? (fp8 == TSL_FP8_NVFP4 ? "FP4 weights, gathered in FP4"
                                            : "FP8 weights, gathered in FP8")
                    : "",
                json_is_true(json_object_get(plan, "moe_fp8_dispatch"))
                    ? "; MoE dispatch all-to-all in FP8"
                    : "");
    else if (json_is_true(json_object_get(plan, "fp32")) &&
             json_is_true(json_object_get(plan, "tf32_off")))
        fputs("  precision: fp32 (TF32 off: GEMMs at the fp32 peak, as the stack runs them with "
              "PyTorch's allow_tf32 False, or as GPUs without TF32 do)\n",
              out);
    else if (json_is_true(json_object_get(plan, "fp32")) &&
             json_is_true(json_object_get(plan, "tf32")))
        fputs("  precision: fp32 (TF32 GEMMs: the training script sets allow_tf32 True, "
              "--tf32)\n",
              out);
    else if (json_is_true(json_object_get(plan, "fp32")))
        fputs("  precision: fp32 (TF32 GEMMs where the GPU has them)\n", out);
    else if (json_is_true(json_object_get(plan, "fp16")))
        fputs("  precision: fp16 with a dynamic loss scaler (fp32 master; the default where a "
              "GPU has no bf16)\n",
              out);
    else if (json_is_true(json_object_get(req, "fp8_param_gather")))
        fputs("  precision: bf16 (fp8_param_gather, --fp8-param-gather, changes nothing: it "
              "keeps FP8 plans' weights in FP8, and no FP8 plan was faster)\n",
              out);
    else if (req_module_prec(req))
        fputs("  precision: bf16, every linear (module_precision, --module-precision, changes "
              "nothing: it overrides FP8 plans' modules, and no FP8 plan was faster)\n",
              out);
    else
        fputs("  precision: bf16\n", out);
    long long b16s = integer(plan, "bf16_layers_start"), b16e = integer(plan, "bf16_layers_end");
    if (fp8 && (b16s || b16e)) /* model.h tsl_model_set_bf16_layers */
        fprintf(out,
                "  bf16:      the first %lld and the last %lld blocks kept bf16 (Megatron-LM "
                "--first-last-layers-bf16)\n",
                b16s, b16e);
    /* the LM loss's memory as a stack runs it (loss_impl.h); autocast's is its own line */
    static const char *const loss_how[TSL_LOSS_IMPL_COUNT] = {
        [TSL_LOSS_TORCH] = "torch's eager cross_entropy over logits.float()",
        [TSL_LOSS_MEGATRON] = "Megatron-LM's vocab_parallel_cross_entropy",
        [TSL_LOSS_TE] = "Transformer Engine's fused cross-entropy",
        [TSL_LOSS_TORCH_COMPILE] = "torch.compile's cross_entropy over logits.float()",
        [TSL_LOSS_FUSED_XENTROPY] = "flash-attn's fused xentropy",
        [TSL_LOSS_COMPOSER] = "llm-foundry's fused xentropy under Composer",
        [TSL_LOSS_MEGATRON_FUSED] = "Megatron-core's compiled cross-entropy fusion"};
    uint64_t loss = (uint64_t)integer(plan, "loss_impl");
    if (loss && !json_is_true(json_object_get(plan, "autocast")))
        fprintf(out, "  loss:      the LM head's memory as %s keeps it (loss_impl %s)\n",
                loss < TSL_LOSS_IMPL_COUNT ? loss_how[loss] : "an unknown stack",
                loss < TSL_LOSS_IMPL_COUNT ? tsl_loss_impl_name((uint32_t)loss) : "?");
    if (json_is_true(json_object_get(plan, "autocast")))
        fputs("  autocast:  torch.autocast over fp32 parameters: fp32 norms and residual "
              "stream, weight casts, fp32 gradients, the vocabulary unpadded\n",
              out);
    print_switch_lines(out, plan, target, stack_lines_a,
                       sizeof stack_lines_a / sizeof stack_lines_a[0]);
    print_attn_kernel(out, plan, cluster);
    print_switch_lines(out, plan, target, stack_lines_b,
                       sizeof stack_lines_b / sizeof stack_lines_b[0]);
    print_host_op(out, plan);
    print_module_prec(out, plan);
    print_recompute(out, plan);
    fprintf(out, "  memory:    %s peak per device of a %s budget", gib(plan, "peak_bytes", peak),
            gib(plan, "budget_bytes", budget));
    print_reserve(out, req);
    print_cp(out, plan, doc);
    print_ep(out, plan, doc);
    fprintf(out, "  balance:   alpha_t %.3f, alpha_m %.3f (perfect: %.3f)\n", num(plan, "alpha_t"),
            num(plan, "alpha_m"), 1.0 - 1.0 / (double)(pp ? pp : 1));
    print_simulated(out, plan, pp);
    json_t *mo = json_object_get(plan, "memopt");
    if (json_is_object(mo)) {
        char cpu[32];
        fprintf(out, "  memory switches (H3T): global mode %s, host memory %s per node\n",
                str(mo, "mode"), gib(mo, "cpu_bytes_per_node", cpu));
    }
    json_t *order = json_object_get(plan, "node_order");
    if (json_array_size(order) > 0) {
        json_t *n;
        size_t i;
        fprintf(out, "  placement: nodes in the order");
        json_array_foreach(order, i, n)
            fprintf(out, "%s %lld", i ? "," : "", (long long)json_integer_value(n));
        fprintf(out, " (stage blocks follow this order)\n");
    }
    print_stages(out, plan);
}

/* One plan's table (tesselctl eval). */
tsl_print_tie_t tsl_print_tie_of(const tsl_model_t *m)
{
    if (m == NULL || m->n_layers == 0)
        return TSL_PRINT_TIE_UNKNOWN;
    if (!m->layers[m->n_layers - 1].tied_head && tsl_mtp_layers(m) > 0)
        return TSL_PRINT_TIE_MTP;
    return TSL_PRINT_TIE_HEAD;
}

void tsl_print_plan(FILE *out, json_t *plan, json_t *req, json_t *cluster, const char *target,
                    tsl_print_tie_t tie)
{
    print_plan(out, plan, NULL, req, cluster, target, tie);
}

static void print_baselines(FILE *out, json_t *doc, double best)
{
    json_t *bl = json_object_get(doc, "baselines");
    if (json_array_size(bl) == 0)
        return;
    fprintf(out, "\nBaselines (same cluster, memory budget and batch rule)\n");
    fprintf(out, "  %-42s %12s %9s %6s %4s %12s\n", "strategy", "samples/s", "tessel is", "batch",
            "pp", "peak/device");
    json_t *b;
    size_t i;
    json_array_foreach(bl, i, b)
    {
        json_t *p = json_object_get(b, "plan");
        if (!json_is_object(p)) {
            const char *why = str(b, "why");
            fprintf(out, "  %-42s %12s\n", str(b, "title"), *why ? why : "OOM");
            continue;
        }
        char peak[32];
        double tp = num(p, "samples_per_s");
        fprintf(out, "  %-42s %12.2f %8.2fx %6lld %4lld %12s\n", str(b, "title"), tp,
                tp > 0 ? best / tp : 0.0, integer(p, "global_batch"), integer(p, "pp"),
                gib(p, "peak_bytes", peak));
    }
}

static void print_alternatives(FILE *out, json_t *doc)
{
    json_t *alts = json_object_get(doc, "alternatives");
    if (json_array_size(alts) == 0)
        return;
    fprintf(out, "\nAlternatives\n");
    json_t *a;
    size_t i;
    json_array_foreach(alts, i, a)
    {
        char peak[32];
        const char *fp8 = tsl_fp8_recipe_name((uint32_t)integer(a, "fp8_recipe"));
        fprintf(out, "  #%zu  %.2f samples/s  batch %lld  pp %lld  m %lld  peak %s%s%s\n", i + 2,
                num(a, "samples_per_s"), integer(a, "global_batch"), integer(a, "pp"),
                integer(a, "n_micro"), gib(a, "peak_bytes", peak),
                integer(a, "fp8_recipe") ? "  fp8 " : "",
                integer(a, "fp8_recipe") && fp8 ? fp8 : "");
    }
}

/* "target megatron: X samples/s, 0.93× the unrestricted plan (Y samples/s)". */
static void print_target(FILE *out, json_t *t)
{
    if (!json_is_object(t))
        return;
    fprintf(out, "\n  target %s: %.2f samples/s", str(t, "name"), num(t, "samples_per_s"));
    if (num(t, "unrestricted_samples_per_s") > 0)
        fprintf(out, ", %.2f\u00d7 the unrestricted plan (%.2f samples/s)",
                num(t, "vs_unrestricted"), num(t, "unrestricted_samples_per_s"));
    else
        fputs(" (no unrestricted plan to compare with)", out);
    fputc('\n', out);
}

void tsl_print_result(FILE *out, json_t *doc, tsl_print_tie_t tie)
{
    json_t *model = json_object_get(doc, "model"), *cluster = json_object_get(doc, "cluster");
    json_t *plan = json_object_get(doc, "plan");
    char np[32];
    fprintf(out, "Plan for %s (%lld layers, %s parameters) on %s\n", str(model, "name"),
            integer(model, "layers"),
            tsl_format_params((double)integer(model, "params"), np, sizeof np),
            str(cluster, "description"));
    long long window = integer(model, "max_context"), train = integer(model, "train_context");
    fprintf(out, "  sequence:  %lld tokens per sample", integer(model, "tokens_per_sample"));
    if (train > 0 && window > 0)
        fprintf(out,
                " (a default: the training length the config records, "
                "original_max_position_embeddings; it allows %lld; --seq-len N to plan another)",
                window);
    else if (train > 0)
        fprintf(out, " (a default: the training length the config records, "
                     "original_max_position_embeddings; --seq-len N to plan another)");
    else if (window > 0)
        fprintf(out, " (a default: the config allows %lld; --seq-len N to plan another)", window);
    fprintf(out, "\n");
    /* GetPlan (plans show) answers a stale plan as stored: say so, or its figures
     * read as current */
    fprintf(out, "  fingerprint %s%s%s\n", str(doc, "fingerprint"),
            json_is_true(json_object_get(doc, "cached")) ? " (cached)" : "",
            json_is_true(json_object_get(doc, "stale"))
                ? " STALE: a profile it was priced from changed since, or another cost model "
                  "priced it; `tesselctl plan` with its options searches again"
                : "");
    if (!json_is_object(plan)) {
        fprintf(out, "  no plan\n");
        return;
    }
    json_t *req = json_object_get(doc, "request");
    print_plan(out, plan, doc, req, json_object_get(doc, "cluster"),
               json_string_value(json_object_get(req, "target")), tie);
    print_target(out, json_object_get(doc, "target"));
    print_baselines(out, doc, num(plan, "samples_per_s"));
    print_alternatives(out, doc);
    json_t *stats = json_object_get(doc, "stats");
    fprintf(out, "\nSearch: %.3f s, %lld layer-DP runs, %lld configurations, %lld batch sizes\n",
            num(doc, "search_time_s"), integer(stats, "dp_runs"), integer(stats, "configs"),
            integer(stats, "batches_tried"));
    /* where the figures came from (figures_json.h); below it a registered
     * cluster's sources and the workers it left out */
    const char *line = str(json_object_get(doc, "figures"), "line");
    if (line[0])
        fprintf(out, "%s\n", line);
    json_t *figures = json_object_get(doc, "figures");
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(figures, "details"), i, w)
        fprintf(out, "  %s\n", json_string_value(w));
    json_array_foreach(json_object_get(figures, "workers_left_out"), i, w)
        fprintf(out, "  left out: %s\n", json_string_value(w));
}

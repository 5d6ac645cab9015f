/*
 * tesselctl — the command line for schedulers and ops.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cluster.h"
#include "commands.h"
#include "model.h"
#include "remote.h"

static const char usage_text[] =
    "usage: tesselctl [--server ADDR] [--token T] [--json] COMMAND [ARGS]\n"
    "\n"
    "Plan how to split a Transformer's training across GPUs, and manage the plans\n"
    "cached by tesseld.\n"
    "\n"
    "Commands:\n"
    "  plan       search a hybrid-parallel plan (through tesseld, or --local in-process)\n"
    "  plans      list | show FP | delete FP | export FP: cached plans in tesseld\n"
    "  health     ask tesseld whether it is serving\n"
    "  models     list the built-in model presets\n"
    "  hardware   list the built-in GPU types and inter-node links\n"
    "\n"
    "Global options:\n"
    "  --server ADDR   tesseld address: unix:/path or host:port\n"
    "                  (env TESSEL_SERVER; default " TSL_DEFAULT_SERVER ")\n"
    "  --token T       bearer token (env TESSEL_TOKEN)\n"
    "  --timeout S     give up after S seconds (default: none for plan, 30 otherwise)\n"
    "  --json          machine-readable output\n"
    "  -h, --help      this text; `tesselctl COMMAND --help` for a command\n"
    "\n"
    "Exit status: 0 ok, 2 usage or invalid input (including: no plan fits the memory\n"
    "budget), 3 not found, 4 server error, 5 tesseld unavailable or deadline exceeded.\n";

static const char plan_usage[] =
    "usage: tesselctl plan (--model NAME | --hf-config PATH) [--seq-len N]\n"
    "                      --cluster SPEC|FILE.json [--memory SIZE]\n"
    "                      [--batch N | --sweep [--max-batch N]] [--top-k N] [--pp N]\n"
    "                      [--no-pp] [--no-tp] [--no-dp] [--no-sdp] [--no-ckpt]\n"
    "                      [--no-baselines] [--no-placement] [--no-memopt]\n"
    "                      [--no-bi-objective] [--no-sublayer] [--no-slicer]\n"
    "                      [--unfused-attn] [--no-seq-par] [--no-zero] [--no-selective]\n"
    "                      [--local] [--force] [--json]\n"
    "\n"
    "Search the hybrid-parallel plan (pipeline stages, per-layer data / sharded-data /\n"
    "tensor parallelism, activation checkpointing, micro-batching) with the highest\n"
    "predicted throughput, and compare it with pure DP, Megatron TP, GPipe PP, ZeRO-3,\n"
    "DeepSpeed 3D, DP+TP and DP+PP under the same memory budget.\n"
    "\n"
    "  --model NAME        a built-in preset (tesselctl models), e.g. GPT3-15B\n"
    "  --hf-config PATH    a HuggingFace config.json (GPT-2, BERT, T5, ViT, Llama-style)\n"
    "  --seq-len N         sequence length (default: the preset's; for --hf-config the\n"
    "                      config's window, at most 4096 unless given)\n"
    "  --cluster SPEC      [NODESx]GPUSxTYPE[:LINK], e.g. 8xA100-80G, 2x8xA100-40G:ib100,\n"
    "                      or a cluster JSON file (docs/cluster-format.md)\n"
    "  --memory SIZE       memory budget per device, e.g. 16G (default: device memory)\n"
    "  --batch N           fixed global batch size\n"
    "  --sweep             sweep the batch size for the best throughput (the default)\n"
    "  --max-batch N       largest batch the sweep tries (default 4096)\n"
    "  --top-k N           alternatives to keep (default 5, at most 16)\n"
    "  --pp N              fix the number of pipeline stages (default: searched)\n"
    "  --no-pp, --no-tp, --no-dp, --no-sdp, --no-ckpt\n"
    "                      switch a dimension off\n"
    "  --no-baselines      skip the baseline comparison\n"
    "  --no-placement      heterogeneous clusters: keep the node order as given instead of\n"
    "                      searching which nodes take which stage (AMP)\n"
    "  --no-memopt         never fall back to H3T's memory switches and CPU offload when\n"
    "                      nothing else fits the memory budget\n"
    "  --no-bi-objective   keep the compute-balanced partition (Galvatron-Base) instead of\n"
    "                      balancing memory and time (Galvatron-BMW)\n"
    "  --no-sublayer       partition at whole layers only (no AutoPipe attention/FFN split)\n"
    "  --no-slicer         no AutoPipe micro-batch slicing of the pipeline start-up\n"
    "  --unfused-attn      attention keeps its s x s scores (no flash kernel); offers\n"
    "                      selective recomputation (docs/cost-model.md)\n"
    "  --no-seq-par        no sequence parallelism with tensor parallelism\n"
    "  --no-zero           no ZeRO-1/ZeRO-2 on data-parallel levels (plain all-reduce)\n"
    "  --no-selective      no selective recomputation (with --unfused-attn)\n"
    "                      (these four: --local only for now)\n"
    "  --local             run the planner in this process instead of tesseld\n"
    "  --force             ignore tesseld's cached plan and search again\n"
    "  --json              print the plan document as JSON (docs/plan-format.md)\n";

/* The connection options (--server, --token, --timeout, --json) are remote.h's,
 * parsed by tsl_remote_common_opt for every subcommand alike. */
enum {
    OPT_MODEL = TSL_OPT_HELP + 1, OPT_HF, OPT_SEQ, OPT_CLUSTER,
    OPT_MEMORY, OPT_BATCH, OPT_SWEEP, OPT_MAXB, OPT_TOPK, OPT_NOPP, OPT_NOTP, OPT_NODP,
    OPT_NOSDP, OPT_NOCKPT, OPT_NOBASE, OPT_LOCAL, OPT_FORCE, OPT_NOPLACE, OPT_NOMEMOPT,
    OPT_NOBIOBJ, OPT_NOSUB, OPT_NOSLICE, OPT_PP,
    /* issue-10 cost-model switches */
    OPT_UNFUSED, OPT_NOSEQPAR, OPT_NOZERO, OPT_NOSEL,
};

static int plan_opt(int opt, tsl_plan_opts_t *po, tsl_err_t *err)
{
    switch (opt) {
    case OPT_MODEL: po->model = optarg; return 0;
    case OPT_HF: po->hf_config = optarg; return 0;
    case OPT_SEQ: return tsl_parse_u32("seq-len", optarg, 1, 1u << 20, &po->seq_len, err);
    case OPT_CLUSTER: po->cluster = optarg; return 0;
    case OPT_MEMORY: return tsl_parse_bytes("memory", optarg, &po->memory_bytes, err);
    case OPT_BATCH: return tsl_parse_u32("batch", optarg, 1, 1u << 20, &po->batch, err);
    case OPT_SWEEP: po->batch = 0; return 0;
    case OPT_MAXB: return tsl_parse_u32("max-batch", optarg, 1, 1u << 20, &po->max_batch, err);
    case OPT_TOPK: return tsl_parse_u32("top-k", optarg, 1, 16, &po->top_k, err);
    case OPT_PP: return tsl_parse_u32("pp", optarg, 1, 64, &po->pp, err);
    case OPT_NOPP: po->no_pp = true; return 0;
    case OPT_NOTP: po->no_tp = true; return 0;
    case OPT_NODP: po->no_dp = true; return 0;
    case OPT_NOSDP: po->no_sdp = true; return 0;
    case OPT_NOCKPT: po->no_ckpt = true; return 0;
    case OPT_NOBASE: po->no_baselines = true; return 0;
    case OPT_LOCAL: po->local = true; return 0;
    case OPT_FORCE: po->force = true; return 0;
    case OPT_NOPLACE: po->no_placement = true; return 0;
    case OPT_NOMEMOPT: po->no_memopt = true; return 0;
    case OPT_NOBIOBJ: po->no_bi_objective = true; return 0;
    case OPT_NOSUB: po->no_sublayer = true; return 0;
    case OPT_NOSLICE: po->no_slicer = true; return 0;
    /* issue-10 cost-model switches */
    case OPT_UNFUSED: po->unfused_attn = true; return 0;
    case OPT_NOSEQPAR: po->no_seq_par = true; return 0;
    case OPT_NOZERO: po->no_zero = true; return 0;
    case OPT_NOSEL: po->no_selective = true; return 0;
    default: return 1;
    }
}

static const struct option plan_long[] = {
    {"server", required_argument, 0, TSL_OPT_SERVER}, {"token", required_argument, 0, TSL_OPT_TOKEN},
    {"timeout", required_argument, 0, TSL_OPT_TIMEOUT}, {"json", no_argument, 0, TSL_OPT_JSON},
    {"model", required_argument, 0, OPT_MODEL}, {"hf-config", required_argument, 0, OPT_HF},
    {"seq-len", required_argument, 0, OPT_SEQ}, {"cluster", required_argument, 0, OPT_CLUSTER},
    {"memory", required_argument, 0, OPT_MEMORY}, {"batch", required_argument, 0, OPT_BATCH},
    {"sweep", no_argument, 0, OPT_SWEEP}, {"max-batch", required_argument, 0, OPT_MAXB},
    {"top-k", required_argument, 0, OPT_TOPK}, {"pp", required_argument, 0, OPT_PP}, {"no-pp", no_argument, 0, OPT_NOPP},
    {"no-tp", no_argument, 0, OPT_NOTP}, {"no-dp", no_argument, 0, OPT_NODP},
    {"no-sdp", no_argument, 0, OPT_NOSDP}, {"no-ckpt", no_argument, 0, OPT_NOCKPT},
    {"no-baselines", no_argument, 0, OPT_NOBASE}, {"local", no_argument, 0, OPT_LOCAL},
    {"force", no_argument, 0, OPT_FORCE}, {"no-placement", no_argument, 0, OPT_NOPLACE},
    {"no-memopt", no_argument, 0, OPT_NOMEMOPT}, {"no-bi-objective", no_argument, 0, OPT_NOBIOBJ},
    {"no-sublayer", no_argument, 0, OPT_NOSUB}, {"no-slicer", no_argument, 0, OPT_NOSLICE},
    /* issue-10 cost-model switches */
    {"unfused-attn", no_argument, 0, OPT_UNFUSED}, {"no-seq-par", no_argument, 0, OPT_NOSEQPAR},
    {"no-zero", no_argument, 0, OPT_NOZERO}, {"no-selective", no_argument, 0, OPT_NOSEL},
    {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
};

static int cmd_plan(int argc, char **argv, tsl_client_opts_t *co)
{
    tsl_plan_opts_t po = {0};
    tsl_err_t err = {0};
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", plan_long, NULL)) != -1) {
        if (opt == 'h') {
            fputs(plan_usage, stdout);
            return TSL_EXIT_OK;
        }
        int r = tsl_remote_common_opt(opt, optarg, co);
        if (r > 0)
            return r;   /* reported */
        if (r < 0)
            r = plan_opt(opt, &po, &err);
        if (r == 1) {
            fputs(plan_usage, stderr);
            return TSL_EXIT_USAGE;
        }
        if (r != 0) {
            fprintf(stderr, "tesselctl: %s\n", err.msg);
            return TSL_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tesselctl: plan: unexpected argument '%s'\n", argv[optind]);
        return TSL_EXIT_USAGE;
    }
    return po.local ? tsl_plan_local(&po, co) : tsl_plan_remote(&po, co);
}

static int cmd_models(const tsl_client_opts_t *co)
{
    if (co->json)
        fputs("[", stdout);
    for (size_t i = 0; i < tsl_model_preset_count(); i++) {
        const tsl_model_preset_t *p = tsl_model_preset_at(i);
        tsl_model_t m = {0};
        tsl_err_t err;
        if (tsl_model_preset(p->name, &m, &err) != 0)
            continue;
        if (co->json)
            printf("%s{\"name\":\"%s\",\"layers\":%u,\"params\":%llu,\"source\":\"%s\"}",
                   i ? "," : "", p->name, m.n_layers, (unsigned long long)tsl_model_params(&m),
                   p->source);
        else
            printf("%-18s %5u layers %9.3fB params  %s\n", p->name, m.n_layers,
                   tsl_model_params(&m) / 1e9, p->source);
        tsl_model_free(&m);
    }
    if (co->json)
        puts("]");
    return TSL_EXIT_OK;
}

static int cmd_hardware(void)
{
    printf("GPU types (--cluster NxTYPE):\n");
    for (size_t i = 0; i < tsl_gpu_count(); i++) {
        const tsl_gpu_spec_t *g = tsl_gpu_at(i);
        printf("  %-14s %6.1f GiB %7.1f TFLOP/s peak x %.2f  intra %6.1f GB/s  pcie %5.1f GB/s\n"
               "                 source: %s\n",
               g->name, g->mem_bytes / 1073741824.0, g->peak_flops / 1e12, g->efficiency,
               g->intra_bw / 1e9, g->pcie_bw / 1e9, g->source);
    }
    printf("Inter-node links (--cluster NxGxTYPE:LINK):\n");
    for (size_t i = 0; i < tsl_link_count(); i++) {
        const tsl_link_spec_t *l = tsl_link_at(i);
        printf("  %-8s %6.1f GB/s  source: %s\n", l->name, l->bw / 1e9, l->source);
    }
    return TSL_EXIT_OK;
}

static const struct option global_long[] = {
    {"server", required_argument, 0, TSL_OPT_SERVER}, {"token", required_argument, 0, TSL_OPT_TOKEN},
    {"timeout", required_argument, 0, TSL_OPT_TIMEOUT}, {"json", no_argument, 0, TSL_OPT_JSON},
    {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
};

int main(int argc, char **argv)
{
    tsl_client_opts_t co = {.server = getenv("TESSEL_SERVER"), .token = getenv("TESSEL_TOKEN")};
    int opt;
    while ((opt = getopt_long(argc, argv, "+h", global_long, NULL)) != -1) {
        if (opt == 'h') {
            fputs(usage_text, stdout);
            return TSL_EXIT_OK;
        }
        int r = tsl_remote_common_opt(opt, optarg, &co);
        if (r > 0)
            return r;   /* reported */
        if (r < 0) {
            fputs(usage_text, stderr);
            return TSL_EXIT_USAGE;
        }
    }
    if (co.server == NULL)
        co.server = TSL_DEFAULT_SERVER;
    if (optind >= argc) {
        fputs(usage_text, stderr);
        return TSL_EXIT_USAGE;
    }
    const char *cmd = argv[optind];
    int sub_argc = argc - optind;
    char **sub_argv = argv + optind;
    if (strcmp(cmd, "plan") == 0)
        return cmd_plan(sub_argc, sub_argv, &co);
    if (strcmp(cmd, "plans") == 0)
        return tsl_cmd_plans(sub_argc, sub_argv, &co);
    if (strcmp(cmd, "health") == 0)
        return tsl_cmd_health(sub_argc, sub_argv, &co);
    if (strcmp(cmd, "models") == 0)
        return cmd_models(&co);
    if (strcmp(cmd, "hardware") == 0)
        return cmd_hardware();
    fprintf(stderr, "tesselctl: unknown command '%s'\n", cmd);
    fputs(usage_text, stderr);
    return TSL_EXIT_USAGE;
}

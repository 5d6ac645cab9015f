/*
 * tesselctl — the command line for schedulers and ops.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "commands.h"
#include "malloc_tune.h"
#include "model.h"
#include "remote.h"
#include "trial_cmd.h"

static const char usage_text[] =
    "usage: tesselctl [--server ADDR] [--token T] [--tls] [--ca FILE] [--cert FILE --key FILE]\n"
    "                 [--timeout S] [--json] COMMAND [ARGS]\n"
    "       tesselctl --version\n"
    "\n"
    "Plan how to split a Transformer's training across GPUs, and manage the plans\n"
    "cached by tesseld.\n"
    "\n"
    "Commands:\n"
    "  plan       search a hybrid-parallel plan (through tesseld, or --local in-process)\n"
    "  eval       predict a given plan's time and memory (flags, a plan document, Megatron-LM\n"
    "             arguments or a torchtitan TOML) beside the search's plan\n"
    "  plans      list | show FP | delete FP | export FP: cached plans in tesseld\n"
    "  trial      start FP | show ID | list [FP] | watch ID | cancel ID: run cached\n"
    "             plans on the registered workers, measured beside predicted\n"
    "  health     ask tesseld whether it is serving\n"
    "  workers    the tessel-worker agents registered with tesseld, online or not\n"
    "  profiles   what the workers measured (per GPU model, or --node N raw)\n"
    "  models     list the built-in model presets\n"
    "  hardware   list the built-in GPU types and inter-node links\n"
    "\n"
    "Global options:\n"
    "  --server ADDR   tesseld address: unix:/path or host:port\n"
    "                  (env TESSEL_SERVER; default " TSL_DEFAULT_SERVER ")\n"
    "  --token T       bearer token (env TESSEL_TOKEN)\n"
    "  --tls           TLS to a host:port, verifying tesseld's certificate (implied by\n"
    "                  --ca, --cert, --key)\n"
    "  --ca FILE       PEM CA that signed tesseld's certificate (default: system roots)\n"
    "  --cert FILE     PEM client certificate for mutual TLS (with --key FILE)\n"
    "  --timeout S     give up after S seconds (default: none for plan, 30 otherwise)\n"
    "  --json          machine-readable output\n"
    "  -h, --help      this text; `tesselctl COMMAND --help` for a command\n"
    "  --version       print the version\n"
    "\n"
    "Exit status: 0 ok, 2 usage or invalid input (including: no plan fits the memory\n"
    "budget), 3 not found, 4 server error, 5 tesseld unavailable or deadline exceeded.\n";

static const char models_usage[] =
    "usage: tesselctl models [--json]\n"
    "\n"
    "List the built-in model presets that --model names: name, layers, parameters and\n"
    "the paper and table each comes from (--json: an array of {name, layers, params,\n"
    "active_params, source}; active_params: what one token runs through, a MoE model's\n"
    "routed top-k and shared experts). Does not talk to tesseld. See docs/models.md.\n";

static const char hardware_usage[] =
    "usage: tesselctl hardware [--json]\n"
    "\n"
    "List the GPU types and inter-node links a --cluster spec may name, with the\n"
    "figures the cost model uses (memory, peak FLOP/s and the efficiency applied,\n"
    "intra-node and PCIe bandwidth) and where they come from (--json: {gpus, links},\n"
    "each GPU with its default_budget_bytes, its --fp32 GEMM peak fp32_peak_flops and,\n"
    "with TF32 off as --target megatron, deepspeed and torchtitan run it,\n"
    "fp32_tf32_off_peak_flops; bf16, false on GPUs without bf16 tensor cores, which\n"
    "train 16-bit mixed precision in fp16; each link its ring bus bandwidth over one\n"
    "NIC, bw_bytes_per_s, and what one NIC carries of NCCL's all-to-all,\n"
    "a2a_bw_bytes_per_s). Does not talk to tesseld. See docs/cluster-format.md.\n";

/* models and hardware: --help, --json, nothing else. Returns -1 to go on,
 * or the exit status. */
static int local_cmd_args(const char *cmd, const char *usage, bool json_ok, int argc, char **argv,
                          tsl_client_opts_t *co)
{
    static const struct option longopts[] = {
        {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        if (opt == 'h') {
            fputs(usage, stdout);
            return TSL_EXIT_OK;
        }
        if (opt != 'j' || !json_ok)
            return tsl_remote_getopt_error(cmd, opt, argv);
        co->json = true;
    }
    if (optind < argc) {
        fprintf(stderr, "tesselctl: %s: unexpected argument '%s'; see tesselctl %s --help\n", cmd,
                argv[optind], cmd);
        return TSL_EXIT_USAGE;
    }
    return -1;
}

/* Preset i built into *m, or NULL where it does not load: `models`
 * lists what the planner can build. */
static const tsl_model_preset_t *preset_built(size_t i, tsl_model_t *m)
{
    const tsl_model_preset_t *p = tsl_model_preset_at(i);
    tsl_err_t err;
    return tsl_model_preset(p->name, m, &err) == 0 ? p : NULL;
}

/* models --json: built with jansson, so a source's quote or backslash is escaped
 * (printf wrote it raw) and a preset that fails to load leaves no stray comma. */
static int models_json(void)
{
    json_t *all = json_array();
    for (size_t i = 0; i < tsl_model_preset_count(); i++) {
        tsl_model_t m = {0};
        const tsl_model_preset_t *p = preset_built(i, &m);
        if (p == NULL)
            continue;
        json_array_append_new(all, json_pack("{s:s, s:I, s:I, s:I, s:s}", "name", p->name, "layers",
                                             (json_int_t)m.n_layers, "params",
                                             (json_int_t)tsl_model_params(&m), "active_params",
                                             (json_int_t)tsl_model_active_params(&m), "source",
                                             p->source));
        tsl_model_free(&m);
    }
    char *text = json_dumps(all, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(all);
    if (text == NULL)
        return tsl_remote_fail(TSL_EXIT_SERVER, "models: out of memory");
    puts(text);
    free(text);
    return TSL_EXIT_OK;
}

static int cmd_models(const tsl_client_opts_t *co)
{
    if (co->json)
        return models_json();
    for (size_t i = 0; i < tsl_model_preset_count(); i++) {
        tsl_model_t m = {0};
        const tsl_model_preset_t *p = preset_built(i, &m);
        if (p == NULL)
            continue;
        if (tsl_model_moe_layers(&m) > 0)
            printf("%-18s %5u layers %9.3fB params (%.3fB active)  %s\n", p->name, m.n_layers,
                   tsl_model_params(&m) / 1e9, tsl_model_active_params(&m) / 1e9, p->source);
        else
            printf("%-18s %5u layers %9.3fB params  %s\n", p->name, m.n_layers,
                   tsl_model_params(&m) / 1e9, p->source);
        tsl_model_free(&m);
    }
    return TSL_EXIT_OK;
}

/* hardware --json: {"gpus": [...], "links": [...]}, units in the key names; each GPU
 * type also carries the budget a search takes by default (device memory less the
 * reserve, search.h). */
static int hardware_json(void)
{
    json_t *gpus = json_array(), *links = json_array();
    tsl_request_t r;
    tsl_request_init(&r);
    for (size_t i = 0; i < tsl_gpu_count(); i++) {
        const tsl_gpu_spec_t *g = tsl_gpu_at(i);
        json_array_append_new(
            gpus,
            json_pack("{s:s, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:b, s:s}", "name",
                      g->name, "memory_bytes", (json_int_t)g->mem_bytes, "default_budget_bytes",
                      (json_int_t)tsl_request_device_budget(&r, g->mem_bytes), "peak_flops",
                      g->peak_flops, "efficiency", g->efficiency, "intra_bw_bytes_per_s",
                      g->intra_bw, "pcie_bw_bytes_per_s", g->pcie_bw, "mem_bw_bytes_per_s",
                      g->mem_bw, "fp32_peak_flops", tsl_gpu_fp32_peak(g),
                      "fp32_tf32_off_peak_flops", tsl_gpu_fp32_peak_as(g, true), "bf16",
                      (int)!g->no_bf16, "source", g->source));
    }
    for (size_t i = 0; i < tsl_link_count(); i++) {
        const tsl_link_spec_t *l = tsl_link_at(i);
        json_array_append_new(links,
                              json_pack("{s:s, s:f, s:f, s:f, s:s}", "name", l->name,
                                        "bw_bytes_per_s", l->bw, "a2a_bw_bytes_per_s",
                                        l->bw * tsl_link_a2a_ratio(l), "flex_bw_bytes_per_s",
                                        l->bw * tsl_link_flex_ratio(l), "source", l->source));
    }
    json_t *doc = json_pack("{s:o, s:o}", "gpus", gpus, "links", links);
    if (!doc) {
        fputs("tesselctl: hardware: out of memory\n", stderr);
        return TSL_EXIT_SERVER;
    }
    json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(12)); /* main checks stdout */
    fputc('\n', stdout);
    json_decref(doc);
    return TSL_EXIT_OK;
}

static int cmd_hardware(const tsl_client_opts_t *co)
{
    if (co->json)
        return hardware_json();
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
        printf("  %-8s %6.1f GB/s  all-to-all %6.1f GB/s  flex %6.1f GB/s  source: %s\n", l->name,
               l->bw / 1e9, l->bw * tsl_link_a2a_ratio(l) / 1e9,
               l->bw * tsl_link_flex_ratio(l) / 1e9, l->source);
    }
    return TSL_EXIT_OK;
}

static const struct option global_long[] = {
    {"server", required_argument, 0, TSL_OPT_SERVER},
    {"token", required_argument, 0, TSL_OPT_TOKEN},
    {"timeout", required_argument, 0, TSL_OPT_TIMEOUT},
    {"json", no_argument, 0, TSL_OPT_JSON},
    {"tls", no_argument, 0, TSL_OPT_TLS},
    {"ca", required_argument, 0, TSL_OPT_CA},
    {"cert", required_argument, 0, TSL_OPT_CERT},
    {"key", required_argument, 0, TSL_OPT_KEY},
    {"help", no_argument, 0, 'h'},
    {"version", no_argument, 0, 'V'},
    {0, 0, 0, 0},
};

/* What the command wrote must have reached stdout: a full disk or a closed file
 * under `tesselctl plan --json > plan.json` left an empty or cut file behind an
 * exit status of 0. The command's own failure, already reported on its one line,
 * keeps its status. */
static int stdout_written(int rc)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return rc;
    if (rc != TSL_EXIT_OK)
        return rc;
    fprintf(stderr, "tesselctl: cannot write to stdout: %s\n",
            errno ? strerror(errno) : "write error");
    return TSL_EXIT_SERVER;
}

static int run(int argc, char **argv)
{
    tsl_client_opts_t co = {.server = getenv("TESSEL_SERVER"), .token = getenv("TESSEL_TOKEN")};
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "+:h", global_long, NULL)) != -1) {
        if (opt == 'h') {
            fputs(usage_text, stdout);
            return TSL_EXIT_OK;
        }
        if (opt == 'V') {
            printf("tesselctl %s\n", TSL_VERSION);
            return TSL_EXIT_OK;
        }
        int r = tsl_remote_common_opt(opt, optarg, &co);
        if (r > 0)
            return r; /* reported */
        if (r < 0) {
            fprintf(stderr, "tesselctl: %s option '%s'; see tesselctl --help\n",
                    opt == ':' ? "a value is missing after the" : "unknown", argv[optind - 1]);
            return TSL_EXIT_USAGE;
        }
    }
    if (co.server == NULL || !*co.server)
        co.server = TSL_DEFAULT_SERVER;
    else
        co.server_given = true; /* TESSEL_SERVER, or --server (which set it too) */
    if (optind >= argc) {
        fputs("tesselctl: no command given; see tesselctl --help\n", stderr);
        return TSL_EXIT_USAGE;
    }
    const char *cmd = argv[optind];
    int sub_argc = argc - optind;
    char **sub_argv = argv + optind;
    if (strcmp(cmd, "plan") == 0)
        return tsl_cmd_plan(sub_argc, sub_argv, &co);
    if (strcmp(cmd, "eval") == 0)
        return tsl_cmd_eval(sub_argc, sub_argv, &co);
    if (strcmp(cmd, "plans") == 0)
        return tsl_cmd_plans(sub_argc, sub_argv, &co);
    if (strcmp(cmd, "workers") == 0)
        return tsl_cmd_workers(sub_argc, sub_argv, &co);
    if (strcmp(cmd, "profiles") == 0)
        return tsl_cmd_profiles(sub_argc, sub_argv, &co);
    if (strcmp(cmd, "trial") == 0)
        return tsl_cmd_trial(sub_argc, sub_argv, &co);
    if (strcmp(cmd, "health") == 0)
        return tsl_cmd_health(sub_argc, sub_argv, &co);
    int rc;
    if (strcmp(cmd, "models") == 0)
        return (rc = local_cmd_args("models", models_usage, true, sub_argc, sub_argv, &co)) >= 0
                   ? rc
                   : cmd_models(&co);
    if (strcmp(cmd, "hardware") == 0)
        return (rc = local_cmd_args("hardware", hardware_usage, true, sub_argc, sub_argv, &co)) >= 0
                   ? rc
                   : cmd_hardware(&co);
    fprintf(stderr, "tesselctl: unknown command '%s'; see tesselctl --help\n", cmd);
    return TSL_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    /* `plan --local` and `eval --local` run the planner in-process: the daemon's fixed malloc
     * thresholds, so a search's peak RSS is what it holds (common/malloc_tune.h) */
    tsl_malloc_tune();
    return stdout_written(run(argc, argv));
}

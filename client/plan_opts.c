/*
 * plan_opts.c — `tesselctl plan`: its options and --help. The request's options
 * come from planner/request_fields.h (one line there is one option here: its
 * flag, its parser, its help line); the others (model, cluster, mode) are
 * spelled out below.
 */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "args.h"
#include "attn_kernel.h"
#include "commands.h"
#include "cost.h"
#include "export.h"
#include "module_prec.h"
#include "names.h"
#include "path_kind.h"
#include "remote.h"
#include "roofline.h"

static const char plan_usage_head[] =
    "usage: tesselctl plan (--model NAME | --hf-config PATH|DIR|-) [--seq-len N]\n"
    "                      --cluster SPEC|FILE.json [--batch N | --sweep]\n"
    "                      [SEARCH OPTIONS] [--local] [--force] [--json]\n"
    "\n"
    "Search the hybrid-parallel plan (pipeline stages, per-layer data / sharded-data /\n"
    "tensor parallelism, activation checkpointing, micro-batching) with the highest\n"
    "predicted throughput, and compare it with pure DP, Megatron TP, GPipe PP, ZeRO-3,\n"
    "DeepSpeed 3D, DP+TP and DP+PP under the same memory budget.\n"
    "\n"
    "  --model NAME        a built-in preset (tesselctl models), e.g. GPT3-15B\n"
    "  --hf-config PATH    a HuggingFace config.json (GPT-2, BERT, T5, ViT, Llama-style),\n"
    "                      a model directory holding one, or - for standard input\n"
    "  --name NAME         with --hf-config: the model's name in the plan (default: the\n"
    "                      file's or directory's name; from standard input, the\n"
    "                      config's _name_or_path, else its model_type)\n"
    "  --seq-len N         sequence length (default: the preset's; for --hf-config the\n"
    "                      config's window, at most 4096 unless given)\n"
    "  --cluster SPEC      [NODESx]GPUSxTYPE[:[NICSx]LINK][:nvlN], e.g. 8xA100-80G,\n"
    "                      2x8xA100-40G:ib100, 4x8xH100-80G:8xib400 (eight NICs a\n"
    "                      node; a link alone is ONE, noted for 8-GPU DGX/HGX nodes\n"
    "                      unless stated: 1xib400), 18x4xGB200:nvl72 (an NVLink\n"
    "                      domain of 72 GPUs), or a cluster JSON file\n"
    "                      (docs/cluster-format.md), or\n"
    "                      \"registered\": the online workers registered with tesseld,\n"
    "                      on their measured figures (the plan lists their sources)\n"
    "  --nodes A,B         only these registered workers (implies --cluster registered)\n"
    "  --sweep             sweep the batch size for the best throughput (the default)\n"
    "\n"
    "Search options:\n";

static const char plan_usage_tail[] =
    "\n"
    "  --local             run the planner in this process instead of tesseld\n"
    "  --profile FILE      with --local: plan on a measured profile (tessel-worker profile\n"
    "                      --json, docs/profile-format.md) instead of built-in figures\n"
    "  --galvatron-profile DIR  plan on Galvatron's profiles in DIR (computation_ and\n"
    "                      memory_profiling_*.json; allreduce_bandwidth_*, p2p_bandwidth_*,\n"
    "                      sp_time_* and overlap_coefficient.json there or in\n"
    "                      DIR/../hardware). Through tesseld only the hardware figures\n"
    "                      travel (as the cluster JSON): block times and memory need --local\n"
    "  --amp-profile DIR   with --local: plan on AMP's per-layer profiles in DIR (its\n"
    "                      known_cost gpt2_{G4,P3}_{tp}.npy: T4, V100 layer times)\n"
    "  --te-precision-config-file PATH\n"
    "                      Megatron-LM's per-module precision YAML (relative to the\n"
    "                      current directory), read into --module-precision as eval\n"
    "                      --megatron-args reads it (Megatron-core's matchers over its\n"
    "                      module paths); not beside --module-precision; where no FP8\n"
    "                      plan is weighed (--no-fp8, a GPU without FP8) noted and\n"
    "                      not used, as Megatron-LM overrides nothing then\n"
    "  --timeout S         give up after S seconds (remote and --local alike; exit 5)\n"
    "  --force             ignore tesseld's cached plan and search again\n"
    "  --json              print the plan document as JSON (docs/plan-format.md)\n"
    "  --export FORMAT     print the best plan as megatron (launch arguments), deepspeed\n"
    "                      (config JSON), torchtitan (a Python config for torchtitan main),\n"
    "                      torchtitan-toml (the job TOML of v0.1.0 .. v0.2.2) or galvatron\n"
    "                      (strategy JSON) takes it, instead of the table; a plan the stack\n"
    "                      cannot run is refused with the reason, exit 4 (docs/exports.md;\n"
    "                      with --local)\n"
    "  --trace FILE        also write the simulated 1F1B timeline of the best plan as a\n"
    "                      Chrome trace (Perfetto, chrome://tracing; through tesseld\n"
    "                      too: ExportPlan format trace)\n";

/* ---- the request's options, from request_fields.h ------------------------------ */

typedef struct req_opt {
    const char *flag; /* NULL: not an option */
    const char *metavar;
    tsl_request_kind_t kind;
    uint32_t min, max;
    const char *help;
    size_t offset; /* in tsl_request_t */
} req_opt_t;

static const req_opt_t req_opts[] = {
#define REQ_OPT_(name, kind, flag, metavar, min, max, help, proto, json)                           \
    {flag, metavar, TSL_REQUEST_KIND_##kind, min, max, help, offsetof(tsl_request_t, name)},
    TSL_REQUEST_FIELDS(REQ_OPT_)
#undef REQ_OPT_
};

#define N_REQ_OPTS (sizeof req_opts / sizeof req_opts[0])

/* getopt ids: the other options, then OPT_REQ + the request field's index. */
enum {
    OPT_MODEL = TSL_OPT_HELP + 1,
    OPT_HF,
    OPT_SEQ,
    OPT_CLUSTER,
    OPT_SWEEP,
    OPT_LOCAL,
    OPT_FORCE,
    OPT_EXPORT,
    OPT_TRACE,
    OPT_NODES,
    OPT_PROFILE,
    OPT_GALVATRON,
    OPT_AMP,
    OPT_NAME,
    OPT_TE_PREC,
    OPT_REQ = 0x200,
};

/* The number fields of the request a flag may also give by the name eval reads
 * (eval --fp8 nvfp4, --attn-kernel cudnn, --moe-flex-backend hybridep). */
typedef struct named_uint {
    size_t offset;              /* in tsl_request_t */
    int (*parse)(const char *); /* the name's number, <= 0 for another word */
    const char *choices;        /* what a word that is no name is refused with */
} named_uint_t;

static const named_uint_t named_uints[] = {
    {offsetof(tsl_request_t, fp8_recipe), tsl_fp8_recipe_parse,
     "a recipe (1 delayed, 2 tensorwise, 3 blockwise, 4 mxfp8, 5 nvfp4)"},
    {offsetof(tsl_request_t, attn_kernel), tsl_attn_kernel_parse,
     "1 (flash2), 2 (cudnn), 3 (flash1) or 4 (flash1-triton)"},
    {offsetof(tsl_request_t, moe_flex_backend), tsl_flex_backend_parse, "hybridep or deepep"},
};

/* A named number field: its name, else a number in the flag's range (a number outside
 * it refused as out of range); a word that is neither is refused listing the names. */
static int named_uint_opt(const named_uint_t *n, const req_opt_t *o, const char *arg,
                          uint32_t *field, tsl_err_t *err)
{
    int v = n->parse(arg);
    if (v > 0) {
        *field = (uint32_t)v;
        return 0;
    }
    if (arg[0] < '0' || arg[0] > '9')
        return tsl_choice_refused(o->flag, arg, n->choices, err);
    return tsl_parse_u32(o->flag, arg, o->min, o->max, field, err);
}

static int req_opt(const req_opt_t *o, const char *arg, tsl_request_t *r, tsl_err_t *err)
{
    char *field = (char *)r + o->offset;
    switch (o->kind) {
    case TSL_REQUEST_KIND_BOOL: *(bool *)field = true; return 0;
    case TSL_REQUEST_KIND_UINT:
        for (size_t i = 0; i < sizeof named_uints / sizeof named_uints[0]; i++)
            if (o->offset == named_uints[i].offset)
                return named_uint_opt(&named_uints[i], o, arg, (uint32_t *)field, err);
        return tsl_parse_u32(o->flag, arg, o->min, o->max, (uint32_t *)field, err);
    case TSL_REQUEST_KIND_BYTES: return tsl_parse_bytes(o->flag, arg, (uint64_t *)field, err);
    case TSL_REQUEST_KIND_TARGET:
        /* the planner reads "" as no target (a request's absent field) */
        return tsl_target_parse_flag(arg, (uint32_t *)field, err);
    case TSL_REQUEST_KIND_REAL:
        return tsl_parse_double(o->flag, arg, o->min, o->max, (double *)field, err);
    case TSL_REQUEST_KIND_MODULES:
        return tsl_recompute_modules_flag(arg, (uint32_t *)field, NULL, err);
    case TSL_REQUEST_KIND_PREC: /* eval --module-precision's parser and messages */
        return tsl_module_prec_parse(arg, (uint32_t *)field, err);
    case TSL_REQUEST_KIND_LOSS: {
        int i = tsl_loss_impl_parse(arg);
        if (i < 0)
            return tsl_choice_refused(o->flag, arg, TSL_LOSS_IMPL_NAMES, err);
        *(uint32_t *)field = (uint32_t)i;
        return 0;
    }
    }
    return 1;
}

/* The daemon keeps the last path component of a config's _name_or_path, and the
 * name is a plan's key in listings: printable, no '/', short, and not blanks only
 * (which would list as no name). */
int tsl_model_name_check(const char *name, tsl_err_t *err)
{
    size_t n = strlen(name);
    char shown[TSL_ERR_SHOWN_MAX(64)];
    tsl_err_shown(name, 64, shown, sizeof shown); /* a newline would break the message */
    if (n == 0 || n >= TSL_NAME_MAX)
        return tsl_err_set(err, "name: '%s' must be 1 to %d characters", shown, TSL_NAME_MAX - 1);
    if (strspn(name, " \t") == n)
        return tsl_err_set(err, "name: '%s' is only blanks; give the model a name", shown);
    if (tsl_name_bad_char(name, "/"))
        return tsl_err_set(err, "name: '%s' holds a '/', a quote or a control character", shown);
    return 0;
}

int tsl_path_opt(const char *flag, const char *arg, const char **dst, tsl_err_t *err)
{
    if (arg[0] == '\0')
        return tsl_err_set(err, "%s: an empty file name", flag);
    if (tsl_control_char(arg) != NULL) {
        char shown[TSL_ERR_SHOWN_MAX(64)]; /* each message that names the file would end
                                            * its line at the newline */
        return tsl_err_set(err,
                           "%s: the file name '%s' holds a control character; rename "
                           "the file",
                           flag, tsl_err_shown(arg, 64, shown, sizeof shown));
    }
    *dst = arg;
    return 0;
}

/* --export FORMAT, checked before the search runs (a typo would otherwise cost
 * the whole search); json is --json's, not a stack's format. */
static int export_opt(const char *arg, tsl_plan_opts_t *po, tsl_err_t *err)
{
    tsl_export_format_t f;
    if (strcasecmp(arg, "json") == 0)
        return tsl_err_set(err, "export: json is the plan document, not a training stack's "
                                "format; give --json");
    if (tsl_export_format_parse(arg, &f, err) != 0)
        return -1;
    po->export_format = arg;
    return 0;
}

/* --nodes A,B: every name given. An empty list (an unset shell variable) or entry
 * was skipped, and --nodes "" planned on every online worker; trial's --nodes
 * refuses them alike. */
static int nodes_opt(const char *arg, tsl_plan_opts_t *po, tsl_err_t *err)
{
    char shown[TSL_ERR_SHOWN_MAX(40)];
    for (const char *p = arg;; p++) {
        size_t len = strcspn(p, ",");
        if (len == 0)
            return tsl_err_set(err,
                               "nodes: '%s' has an empty name; give the workers' names, "
                               "e.g. --nodes gpu1,gpu2 (or --cluster registered for all)",
                               tsl_err_shown(arg, 40, shown, sizeof shown));
        p += len;
        if (*p == '\0')
            break;
    }
    po->nodes = arg;
    return 0;
}

/* 0 applied, 1 not a plan option, -1 bad value (err). */
static int plan_opt(int opt, tsl_plan_opts_t *po, tsl_err_t *err)
{
    if (opt >= OPT_REQ && (size_t)(opt - OPT_REQ) < N_REQ_OPTS)
        return req_opt(&req_opts[opt - OPT_REQ], optarg, &po->req, err);
    switch (opt) {
    case OPT_MODEL: po->model = optarg; return 0;
    case OPT_HF: return tsl_path_opt("hf-config", optarg, &po->hf_config, err);
    case OPT_SEQ: return tsl_parse_u32("seq-len", optarg, 1, 1u << 20, &po->seq_len, err);
    case OPT_CLUSTER: po->cluster = optarg; return 0;
    case OPT_SWEEP: po->sweep = true; return 0;
    case OPT_LOCAL: po->local = true; return 0;
    case OPT_FORCE: po->force = true; return 0;
    case OPT_EXPORT: return export_opt(optarg, po, err);
    case OPT_TRACE: /* a typo in the path would otherwise cost the whole search */
        po->trace = optarg;
        return tsl_path_writable("trace", optarg, err);
    case OPT_NODES: return nodes_opt(optarg, po, err);
    case OPT_PROFILE: return tsl_path_opt("profile", optarg, &po->profile, err);
    case OPT_GALVATRON:
        return tsl_path_opt("galvatron-profile", optarg, &po->galvatron_profile, err);
    case OPT_AMP: return tsl_path_opt("amp-profile", optarg, &po->amp_profile, err);
    case OPT_NAME: po->model_name = optarg; return tsl_model_name_check(optarg, err);
    case OPT_TE_PREC:
        return tsl_path_opt("te-precision-config-file", optarg, &po->te_prec_file, err);
    default: return 1;
    }
}

static const struct option fixed_long[] = {
    TSL_REMOTE_LONG_OPTS,
    {"model", required_argument, 0, OPT_MODEL},
    {"hf-config", required_argument, 0, OPT_HF},
    {"seq-len", required_argument, 0, OPT_SEQ},
    {"cluster", required_argument, 0, OPT_CLUSTER},
    {"sweep", no_argument, 0, OPT_SWEEP},
    {"local", no_argument, 0, OPT_LOCAL},
    {"force", no_argument, 0, OPT_FORCE},
    {"export", required_argument, 0, OPT_EXPORT},
    {"trace", required_argument, 0, OPT_TRACE},
    {"nodes", required_argument, 0, OPT_NODES},
    {"profile", required_argument, 0, OPT_PROFILE},
    {"galvatron-profile", required_argument, 0, OPT_GALVATRON},
    {"amp-profile", required_argument, 0, OPT_AMP},
    {"name", required_argument, 0, OPT_NAME},
    {"te-precision-config-file", required_argument, 0, OPT_TE_PREC},
};

#define N_FIXED (sizeof fixed_long / sizeof fixed_long[0])

/* --fp8 RECIPE, eval's spelling, for --fp8-recipe: getopt_long took it as the only
 * option it abbreviated until --fp8-param-gather made the prefix ambiguous, and
 * scripts that plan and eval with one argument list (tests/eval_ratio_test.sh) give it.
 * Not in --help: the documented option is --fp8-recipe. */
#define N_ALIASES 1

/* The getopt_long table: the fixed options, then one per request flag, then the
 * aliases. */
static void build_long(struct option out[N_FIXED + N_REQ_OPTS + N_ALIASES + 1])
{
    size_t n = 0;
    for (size_t i = 0; i < N_FIXED; i++)
        out[n++] = fixed_long[i];
    for (size_t i = 0; i < N_REQ_OPTS; i++) {
        if (!req_opts[i].flag)
            continue;
        out[n].name = req_opts[i].flag;
        out[n].has_arg =
            req_opts[i].kind == TSL_REQUEST_KIND_BOOL ? no_argument : required_argument;
        out[n].flag = NULL;
        out[n].val = OPT_REQ + (int)i;
        n++;
    }
    for (size_t i = 0; i < N_REQ_OPTS; i++)
        if (req_opts[i].offset == offsetof(tsl_request_t, fp8_recipe))
            out[n++] = (struct option){"fp8", required_argument, NULL, OPT_REQ + (int)i};
    memset(&out[n], 0, sizeof out[n]);
}

/* "  --flag META         help", wrapped at 86 columns under the help column. */
static void print_help_line(FILE *f, const req_opt_t *o)
{
    enum { COL = 22, WIDTH = 86 };
    char lhs[64];
    snprintf(lhs, sizeof lhs, "--%s%s%s", o->flag, o->metavar[0] ? " " : "", o->metavar);
    int at = fprintf(f, "  %-*s", COL - 3, lhs);
    if (at < COL - 1)
        at += fprintf(f, "%*s", COL - 1 - at, "");
    const char *p = o->help;
    while (*p) {
        size_t room = WIDTH - (size_t)at, n = strlen(p);
        if (n > room) {
            n = room;
            while (n > 0 && p[n] != ' ')
                n--;
            if (n == 0)
                n = room;
        }
        fprintf(f, " %.*s", (int)n, p);
        p += n;
        while (*p == ' ')
            p++;
        if (*p) {
            fprintf(f, "\n%*s", COL - 1, "");
            at = COL - 1;
        }
    }
    fputc('\n', f);
}

static void plan_usage(FILE *f)
{
    fputs(plan_usage_head, f);
    for (size_t i = 0; i < N_REQ_OPTS; i++)
        if (req_opts[i].flag)
            print_help_line(f, &req_opts[i]);
    fputs(plan_usage_tail, f);
}

int tsl_cmd_plan(int argc, char **argv, tsl_client_opts_t *co)
{
    struct option longopts[N_FIXED + N_REQ_OPTS + N_ALIASES + 1];
    tsl_plan_opts_t po;
    tsl_err_t err = {0};
    int opt;

    memset(&po, 0, sizeof po);
    tsl_request_init(&po.req);
    build_long(longopts);
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        if (opt == 'h' || opt == TSL_OPT_HELP) {
            plan_usage(stdout);
            return TSL_EXIT_OK;
        }
        int r = tsl_remote_common_opt(opt, optarg, co);
        if (r > 0)
            return r; /* reported */
        if (r < 0)
            r = plan_opt(opt, &po, &err);
        if (r == 1)
            return tsl_remote_getopt_error("plan", opt, argv);
        if (r != 0) {
            fprintf(stderr, "tesselctl: %s\n", err.msg);
            return TSL_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        char shown[TSL_ERR_SHOWN_MAX(40)];
        fprintf(stderr, "tesselctl: plan: unexpected argument '%s'; see tesselctl plan --help\n",
                tsl_err_shown(argv[optind], 40, shown, sizeof shown));
        return TSL_EXIT_USAGE;
    }
    if (po.sweep && po.req.global_batch != 0) {
        fputs("tesselctl: plan: --batch fixes the batch size, --sweep searches it; give one\n",
              stderr);
        return TSL_EXIT_USAGE;
    }
    if (po.export_format && !po.local) {
        fprintf(stderr, "tesselctl: plan: --export needs --local; for a plan in tesseld use "
                        "`tesselctl plans export FP --format FORMAT`\n");
        return TSL_EXIT_USAGE;
    }
    if (po.profile != NULL && !po.local) {
        fprintf(stderr, "tesselctl: --profile: works with --local only (tesseld's profiles come "
                        "from its registered workers: --cluster registered)\n");
        return TSL_EXIT_USAGE;
    }
    if (po.galvatron_profile != NULL && po.cluster && strcmp(po.cluster, "registered") == 0) {
        fprintf(stderr, "tesselctl: --galvatron-profile: give the cluster it was measured on "
                        "(--cluster SPEC or FILE), not registered\n");
        return TSL_EXIT_USAGE;
    }
    if ((po.profile != NULL) + (po.galvatron_profile != NULL) + (po.amp_profile != NULL) > 1) {
        fprintf(stderr,
                "tesselctl: plan: give one of --profile, --galvatron-profile, --amp-profile\n");
        return TSL_EXIT_USAGE;
    }
    if (po.amp_profile != NULL && !po.local) {
        fprintf(stderr, "tesselctl: --amp-profile: works with --local only (the block times "
                        "are priced in this process)\n");
        return TSL_EXIT_USAGE;
    }
    int rc = tsl_plan_te_prec(&po);
    if (rc != TSL_EXIT_OK)
        return rc;
    if (po.nodes && !po.cluster)
        po.cluster = "registered";
    if (po.local && po.cluster && strcmp(po.cluster, "registered") == 0) {
        fprintf(stderr, "tesselctl: plan: --cluster registered needs tesseld (drop --local)\n");
        return TSL_EXIT_USAGE;
    }
    return po.local ? tsl_plan_local(&po, co) : tsl_plan_remote(&po, co);
}

/*
 * remote_plans.c — `tesselctl plans show|delete|export` and the dispatch of
 * `tesselctl plans ACTION` (list lives in remote_list.c).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan_proto.h"
#include "proto_json.h"
#include "remote.h"
#include "trial_cmd.h"

int tsl_remote_plans_list(int argc, char **argv, tsl_client_opts_t *co);

static const char plans_usage[] =
    "usage: tesselctl [--server ADDR] [--token T] plans ACTION [OPTIONS] [FINGERPRINT]\n"
    "\n"
    "Work with the plans cached in tesseld's store. A plan is named by its fingerprint,\n"
    "16 hex digits over (model, cluster, request), as printed by `tesselctl plan`.\n"
    "\n"
    "Actions:\n"
    "  list     list cached plans (filters, paging)           tesselctl plans list --help\n"
    "  show     print one plan as `tesselctl plan` does        tesselctl plans show --help\n"
    "  delete   remove one plan from the store                  tesselctl plans delete --help\n"
    "  export   write one plan in an exchange format            tesselctl plans export --help\n"
    "\n"
    "Connection options (here or before the subcommand):\n"
    "  --server ADDR   unix:/path, unix:///path or host:port\n"
    "                  (env TESSEL_SERVER; default " TSL_DEFAULT_SERVER ")\n"
    "  --token T       bearer token (env TESSEL_TOKEN); 'ops' reads, 'scheduler' deletes\n"
    "  --timeout S     deadline per call in seconds (default 30)\n"
    "  --json          machine-readable output on stdout\n"
    "\n"
    "Exit status: 0 ok, 2 usage or invalid input, 3 no such plan, 4 server error,\n"
    "5 daemon unavailable or deadline exceeded.\n";

static const char show_usage[] =
    "usage: tesselctl plans show [--json] FINGERPRINT\n"
    "\n"
    "Fetch the plan FINGERPRINT from the daemon (Planner.GetPlan) and print it exactly as\n"
    "`tesselctl plan` prints a fresh one: the pipeline stages with their layers,\n"
    "devices, strategies, memory and time, the predicted throughput, and the comparison\n"
    "with the baselines. When trials ran the plan (tesselctl trial start), a\n"
    "\"measured\" section follows: each trial's predicted vs measured iteration time and\n"
    "peak memory with the errors, and the one chosen as the answer. With --json, the\n"
    "search-result document instead, with a \"trials\" array when there are trials (see\n"
    "docs/tesselctl.md). Needs a token with the 'ops' or 'scheduler' role when the daemon\n"
    "has tokens configured.\n"
    "\n"
    "Options:\n"
    "  --json          print the JSON document\n"
    "  --server ADDR, --token T, --timeout S   as for every subcommand\n"
    "\n"
    "Exit status: 0 ok, 2 bad fingerprint, 3 no such plan, 4 server error, 5 unavailable.\n"
    "\n"
    "Example:\n"
    "  tesselctl plans show 3f2a9c0d11e4b7a8\n";

static const char delete_usage[] =
    "usage: tesselctl plans delete [--json] FINGERPRINT\n"
    "\n"
    "Remove the plan FINGERPRINT from the daemon's store (Planner.DeletePlan). The next\n"
    "`tesselctl plan` with the same model, cluster and request searches again. Needs a\n"
    "token with the 'scheduler' role when the daemon has tokens configured.\n"
    "\n"
    "Options:\n"
    "  --json          print {\"fingerprint\": ..., \"deleted\": true}\n"
    "  --server ADDR, --token T, --timeout S   as for every subcommand\n"
    "\n"
    "Exit status: 0 deleted, 2 bad fingerprint, 3 no such plan, 4 server error,\n"
    "5 unavailable.\n";

static const char export_usage[] =
    "usage: tesselctl plans export [--format FORMAT] [-o FILE] [--fresh] FINGERPRINT\n"
    "\n"
    "Export the plan FINGERPRINT (Planner.ExportPlan) in FORMAT and write it to stdout,\n"
    "or to FILE (written to FILE.tmp, then renamed, so FILE is never half-written).\n"
    "A stale plan (a profile it was priced from changed since, or another cost model\n"
    "priced it) is written as stored, with a warning on stderr. What the deepspeed and\n"
    "galvatron JSON cannot carry (a heterogeneous plan's node order, a --tf32 plan's\n"
    "TF32 setting) is noted on stderr, as plan --export notes it.\n"
    "\n"
    "Options:\n"
    "  --format FORMAT  json (the default: the plan document of docs/plan-format.md),\n"
    "                   megatron (Megatron-LM launch arguments), deepspeed (a DeepSpeed\n"
    "                   config JSON), torchtitan (a Python config for torchtitan main),\n"
    "                   torchtitan-toml (the job TOML of torchtitan v0.1.0 .. v0.2.2),\n"
    "                   galvatron (a Galvatron strategy JSON) or trace (the simulated\n"
    "                   1F1B timeline as a Chrome trace: Perfetto, chrome://tracing);\n"
    "                   see docs/exports.md\n"
    "  -o, --output FILE  write to FILE instead of stdout\n"
    "  --fresh          refuse a stale plan: write nothing, exit 4\n"
    "  --server ADDR, --token T, --timeout S   as for every subcommand\n"
    "  (--json is accepted; the export is written as the daemon produced it)\n"
    "\n"
    "Exit status: 0 ok, 2 unknown format or bad fingerprint, 3 no such plan,\n"
    "4 server error, FILE not writable, a plan the stack cannot run (the message\n"
    "says why) or a stale plan with --fresh, 5 unavailable.\n"
    "\n"
    "Example:\n"
    "  tesselctl plans export --format json -o plan.json 3f2a9c0d11e4b7a8\n"
    "  tesselctl plans export --format megatron 3f2a9c0d11e4b7a8\n";

/* ---- shared parsing ---------------------------------------------------------- */

typedef struct fp_opts {
    const char *fingerprint;
    const char *format; /* export */
    const char *output; /* export */
    bool fresh;         /* export: refuse a stale plan */
} fp_opts_t;

enum { OPT_FRESH = TSL_OPT_HELP + 1 };

static const struct option fp_longopts[] = {
    {"format", required_argument, NULL, 'f'},
    {"output", required_argument, NULL, 'o'},
    {"fresh", no_argument, NULL, OPT_FRESH},
    TSL_REMOTE_LONG_OPTS,
    {NULL, 0, NULL, 0},
};

/* Parses "[options] FINGERPRINT"; -1 on --help (usage printed), else an exit code. */
static int parse_fp(const char *cmd, const char *usage, bool is_export, int argc, char **argv,
                    tsl_client_opts_t *co, fp_opts_t *fo)
{
    int opt, rc;

    optind = 0;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, is_export ? ":ho:" : ":h", fp_longopts, NULL)) != -1) {
        if (opt == TSL_OPT_HELP || opt == 'h') {
            fputs(usage, stdout);
            return -1;
        }
        if (is_export && opt == 'f')
            fo->format = optarg;
        else if (is_export && opt == 'o')
            fo->output = optarg;
        else if (is_export && opt == OPT_FRESH)
            fo->fresh = true;
        else if ((rc = tsl_remote_common_opt(opt, optarg, co)) != -1) {
            if (rc != 0)
                return rc;
        } else
            return tsl_remote_getopt_error(cmd, opt, argv);
    }
    return tsl_remote_one_arg(cmd, "FINGERPRINT", argc, argv, optind, &fo->fingerprint);
}

/* ---- show / delete ---------------------------------------------------------- */

/* The plan, then what trials measured of it (ListTrials; nothing when the
 * daemon has no trials of it or does not serve Trials): the "measured"
 * section, or with --json a "trials" array in the document. */
static int show_with_trials(json_t *doc, const char *fp, const tsl_client_opts_t *co)
{
    Tessel__V1__ListTrialsResponse *lt = doc ? tsl_trial_list_quiet(co, fp) : NULL;
    int rc;
    if (co->json && lt && lt->n_trials) {
        json_t *all = tsl_proto_to_json(&lt->base);
        json_object_set(doc, "trials", json_object_get(all, "trials"));
        json_decref(all);
    }
    json_incref(doc);
    rc = tsl_remote_print_doc(doc, co);
    if (rc == 0 && !co->json)
        tsl_trial_print_measured(stdout, doc, lt);
    json_decref(doc);
    if (lt)
        protobuf_c_message_free_unpacked(&lt->base, NULL);
    return rc;
}

static int plans_show(int argc, char **argv, tsl_client_opts_t *co)
{
    Tessel__V1__GetPlanRequest req = TESSEL__V1__GET_PLAN_REQUEST__INIT;
    ProtobufCMessage *reply = NULL;
    fp_opts_t fo = {0};
    int rc = parse_fp("plans show", show_usage, false, argc, argv, co, &fo);

    if (rc != 0)
        return rc < 0 ? TSL_EXIT_OK : rc;
    req.fingerprint = (char *)fo.fingerprint;
    rc = tsl_remote_call(co, TSL_RPC_GET_PLAN, &req.base, &tessel__v1__plan__descriptor, &reply);
    if (rc == 0) {
        tsl_remote_print_notes((const Tessel__V1__Plan *)reply); /* stored with the plan */
        rc = show_with_trials(tsl_plan_proto_to_json((const Tessel__V1__Plan *)reply),
                              fo.fingerprint, co);
    }
    if (reply)
        protobuf_c_message_free_unpacked(reply, NULL);
    return rc;
}

static int plans_delete(int argc, char **argv, tsl_client_opts_t *co)
{
    Tessel__V1__DeletePlanRequest req = TESSEL__V1__DELETE_PLAN_REQUEST__INIT;
    ProtobufCMessage *reply = NULL;
    fp_opts_t fo = {0};
    int rc = parse_fp("plans delete", delete_usage, false, argc, argv, co, &fo);

    if (rc != 0)
        return rc < 0 ? TSL_EXIT_OK : rc;
    req.fingerprint = (char *)fo.fingerprint;
    rc = tsl_remote_call(co, TSL_RPC_DELETE_PLAN, &req.base,
                         &tessel__v1__delete_plan_response__descriptor, &reply);
    if (rc != 0)
        return rc;
    if (!((Tessel__V1__DeletePlanResponse *)reply)->deleted)
        rc = tsl_remote_fail(TSL_EXIT_NOT_FOUND, "plans delete: no plan with fingerprint %s",
                             fo.fingerprint);
    else if (co->json)
        rc = tsl_remote_print_json(
            stdout, json_pack("{s:s, s:b}", "fingerprint", fo.fingerprint, "deleted", 1));
    else
        printf("deleted plan %s\n", fo.fingerprint);
    protobuf_c_message_free_unpacked(reply, NULL);
    return rc;
}

/* ---- export -------------------------------------------------------------------- */

static int plans_export(int argc, char **argv, tsl_client_opts_t *co)
{
    fp_opts_t fo = {.format = "json"};
    int rc = parse_fp("plans export", export_usage, true, argc, argv, co, &fo);

    if (rc != 0)
        return rc < 0 ? TSL_EXIT_OK : rc;
    return tsl_remote_export_to(co, "plans export", fo.fingerprint, fo.format, fo.output, fo.fresh);
}

/* ---- dispatch ---------------------------------------------------------------- */

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv, tsl_client_opts_t *co);
} actions[] = {
    {"list", tsl_remote_plans_list}, {"show", plans_show},     {"get", plans_show},
    {"delete", plans_delete},        {"export", plans_export},
};

static bool is_help(const char *a)
{
    return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0 || strcmp(a, "help") == 0;
}

int tsl_cmd_plans(int argc, char **argv, const tsl_client_opts_t *co_in)
{
    tsl_client_opts_t co = *co_in;

    if (argc < 2) {
        fputs(plans_usage, stderr);
        return TSL_EXIT_USAGE;
    }
    if (is_help(argv[1])) {
        fputs(plans_usage, stdout);
        return TSL_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++) {
        if (strcmp(argv[1], actions[i].name) == 0)
            return actions[i].fn(argc - 1, argv + 1, &co);
    }
    return tsl_remote_fail(
        TSL_EXIT_USAGE, "plans: unknown action '%s'; give list, show, delete or export", argv[1]);
}

/*
 * remote_trials.c — `tesselctl trial start|show|list|watch` over tesseld's
 * Trials service (proto/tessel/v1/trials.proto): run cached plans for real on
 * the registered workers and show what they measured beside what was
 * predicted; `trial probe-link A B` measures the link between two nodes (a
 * trial of kind "link"). Printing is trial_print.c's; --json prints the messages as JSON
 * field for field (api/proto_json.h). Exit statuses come from api/status.h's
 * table (a daemon without the Trials service answers UNIMPLEMENTED: 4); with
 * --wait / watch, a trial that failed exits 4 as well.
 */
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "progress.h"
#include "proto_json.h"
#include "remote.h"
#include "trial_cmd.h"

#define TSL_TRIAL_MAX_NODES 256u

static const char trial_usage[] =
    "usage: tesselctl trial ACTION [OPTIONS]\n"
    "\n"
    "Run cached plans for real on the registered tessel-workers and compare what they\n"
    "measure with what was predicted (tesseld's Trials service).\n"
    "\n"
    "Actions:\n"
    "  start FP   run the plan FP (and --top-k alternatives)   tesselctl trial start --help\n"
    "  show ID    one trial: status, ranks, predicted vs measured\n"
    "  list [FP]  trials, newest first (of one plan with FP)\n"
    "  watch ID   follow a trial until it is done or failed\n"
    "  cancel ID  stop a pending or running trial; its workers are freed\n"
    "  probe-link A B  time the link between nodes A and B     tesselctl trial probe-link --help\n"
    "\n"
    "Common options: --json, --server ADDR, --token T, --timeout S (per call; for\n"
    "`start`, --timeout is the trial's own time limit).\n"
    "\n"
    "Exit status: 0 ok, 2 usage, 3 no such plan or trial, 4 server error, a trial that\n"
    "failed (--wait, watch) or a tesseld without trials, 5 unavailable.\n";

static const char start_usage[] =
    "usage: tesselctl trial start [--top-k K] [--iterations N] [--warmup W] [--nodes a,b]\n"
    "                             [--timeout S] [--wait] [--json] FINGERPRINT\n"
    "\n"
    "Run the cached plan FINGERPRINT for real (Trials.StartTrial) on online registered\n"
    "workers whose GPUs match the plan's devices, and print the trial ids. With\n"
    "--top-k K, the plan and its K-1 best alternatives run one after another; the\n"
    "measured best becomes the plan's answer (see `plans show`). A plan the executor\n"
    "cannot run (a ZB-V schedule, FP8, ...) is skipped: a line on stderr says why, and\n"
    "`trial list` shows its trial as skipped; the others run. So is an alternative no\n"
    "online workers fit (the line names the GPUs missing); the plan asked for without\n"
    "workers is exit 4, nothing started.\n"
    "\n"
    "Options:\n"
    "  --top-k K        run the plan and K-1 alternatives (1..16; default 1)\n"
    "  --iterations N   measured iterations per trial (default 10)\n"
    "  --warmup W       iterations run first and not measured (default 3)\n"
    "  --nodes a,b      only these worker hostnames (default: any that fit)\n"
    "  --timeout S      a trial not finished within S seconds fails (default 600)\n"
    "  --wait           follow the trials (a progress line on a terminal) and print\n"
    "                   each result as `trial show` does\n"
    "  --json           {\"trial_ids\", \"batch_id\", \"skipped\"} (with --wait also\n"
    "                   \"trials\")\n"
    "  --server ADDR, --token T   as for every subcommand\n"
    "  --help           this text\n"
    "\n"
    "Exit status: 0 ok (skipped plans too), 2 usage, 3 no such plan, 4 no matching\n"
    "workers for the plan asked for or no plan of the batch that runs (the message\n"
    "says what is missing), a failed trial (--wait) or a tesseld without trials,\n"
    "5 unavailable.\n";

static const char probe_usage[] =
    "usage: tesselctl trial probe-link [--iterations N] [--warmup W] [--timeout S] [--wait]\n"
    "                                  [--json] NODE_A NODE_B\n"
    "\n"
    "Measure the link between two registered nodes (Trials.StartTrial, link_probe): the\n"
    "workers on NODE_A (rank 0) and NODE_B (rank 1) time send/recv and a 2-rank\n"
    "all-reduce, one GPU each, for messages of 1 KiB .. 1 GiB (NCCL; sim workers over\n"
    "tcp: .. 64 MiB, simulated), and NODE_A's worker reports algorithm and bus\n"
    "bandwidth as inter-node figures (`tesselctl profiles` shows them; plans on\n"
    "`--cluster registered` across nodes use them).\n"
    "\n"
    "Options:\n"
    "  --iterations N   timed rounds per message size (default 10; the median is kept)\n"
    "  --warmup W       untimed rounds first (default 3)\n"
    "  --timeout S      the probe fails when not done within S seconds (default 600)\n"
    "  --wait           follow the probe and print it as `trial show` does\n"
    "  --json, --server ADDR, --token T   as for every subcommand\n"
    "\n"
    "Exit status: 0 ok, 2 usage, 4 a node unknown, offline or without a GPU (the\n"
    "message names it) or the probe failed (--wait), 5 unavailable.\n";

typedef struct trial_opts {
    uint32_t top_k, iterations, warmup;
    double trial_timeout_s;
    char *nodes[TSL_TRIAL_MAX_NODES];
    size_t n_nodes;
    char nodes_buf[4096];
    bool wait;
    uint32_t limit;
    const char *reason;
} trial_opts_t;

enum { OPT_TOPK = 0x500, OPT_ITER, OPT_WARMUP, OPT_NODES, OPT_WAIT, OPT_LIMIT, OPT_REASON };

static const struct option trial_longopts[] = {
    {"top-k", required_argument, NULL, OPT_TOPK},
    {"iterations", required_argument, NULL, OPT_ITER},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"nodes", required_argument, NULL, OPT_NODES},
    {"wait", no_argument, NULL, OPT_WAIT},
    {"limit", required_argument, NULL, OPT_LIMIT},
    {"reason", required_argument, NULL, OPT_REASON},
    TSL_REMOTE_LONG_OPTS,
    {NULL, 0, NULL, 0},
};

/* "a,b" into to->nodes: names non-empty, at most TSL_TRIAL_MAX_NODES. */
static int parse_nodes(const char *text, trial_opts_t *to, tsl_err_t *err)
{
    snprintf(to->nodes_buf, sizeof to->nodes_buf, "%s", text);
    to->n_nodes = 0;
    for (char *p = to->nodes_buf;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        if (*p == '\0')
            return tsl_err_set(err, "nodes: '%s' has an empty hostname", text);
        if (to->n_nodes == TSL_TRIAL_MAX_NODES)
            return tsl_err_set(err, "nodes: more than %u hostnames", TSL_TRIAL_MAX_NODES);
        to->nodes[to->n_nodes++] = p;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

/* One option of ACTION: 0 applied, 1 not one of ACTION's, -1 bad value (err). */
static int trial_opt(const char *action, int opt, trial_opts_t *to, tsl_client_opts_t *co,
                     tsl_err_t *err)
{
    bool probe = strcmp(action, "probe-link") == 0;
    bool start = strcmp(action, "start") == 0 || probe;
    if (opt == TSL_OPT_TIMEOUT && start) /* the trial's own limit; before `trial`, the call's */
        return tsl_parse_double("timeout", optarg, 1, 86400, &to->trial_timeout_s, err);
    switch (opt) {
    case OPT_TOPK:
        return start && !probe ? tsl_parse_u32("top-k", optarg, 1, 16, &to->top_k, err) : 1;
    case OPT_ITER:
        return start ? tsl_parse_u32("iterations", optarg, 1, 100000, &to->iterations, err) : 1;
    case OPT_WARMUP: return start ? tsl_parse_u32("warmup", optarg, 0, 10000, &to->warmup, err) : 1;
    case OPT_NODES: return start && !probe ? parse_nodes(optarg, to, err) : 1;
    case OPT_WAIT: return start ? (to->wait = true, 0) : 1;
    case OPT_LIMIT:
        return strcmp(action, "list") == 0
                   ? tsl_parse_u32("limit", optarg, 1, 1000, &to->limit, err)
                   : 1;
    case OPT_REASON: return strcmp(action, "cancel") == 0 ? (to->reason = optarg, 0) : 1;
    default: {
        int r = tsl_remote_common_opt(opt, optarg, co);
        return r == -1 ? 1 : r == 0 ? 0 : -2; /* -2: reported there */
    }
    }
}

static const char *long_name(int opt)
{
    for (const struct option *o = trial_longopts; o->name; o++)
        if (o->val == opt)
            return o->name;
    return "?";
}

/* Parses ACTION's options; -1 after --help, else 0 or an exit status. */
static int parse(const char *action, const char *usage, int argc, char **argv, trial_opts_t *to,
                 tsl_client_opts_t *co)
{
    char cmd[32];
    int opt;
    snprintf(cmd, sizeof cmd, "trial %s", action);
    optind = 0;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":h", trial_longopts, NULL)) != -1) {
        if (opt == 'h' || opt == TSL_OPT_HELP) {
            fputs(usage, stdout);
            return -1;
        }
        tsl_err_t err = {0};
        int r = opt == ':' || opt == '?' ? 1 : trial_opt(action, opt, to, co, &err);
        if (r == 1 && opt >= OPT_TOPK && opt <= OPT_REASON)
            return tsl_remote_fail(TSL_EXIT_USAGE,
                                   "%s: --%s is not an option of %s; see tesselctl %s --help", cmd,
                                   long_name(opt), cmd, cmd);
        if (r == 1)
            return tsl_remote_getopt_error(cmd, opt, argv);
        if (r == -2)
            return TSL_EXIT_USAGE; /* --timeout reported by tsl_remote_common_opt */
        if (r != 0)
            return tsl_remote_fail(TSL_EXIT_USAGE, "%s: %s", cmd, err.msg);
    }
    return 0;
}

/* ---- following trials ------------------------------------------------------- */

static bool finished(const Tessel__V1__Trial *t)
{
    return strcmp(t->status, "done") == 0 || strcmp(t->status, "failed") == 0 ||
           strcmp(t->status, "cancelled") == 0 || strcmp(t->status, "skipped") == 0;
}

/* The progress line of a trial: ranks done over its world size. */
static void draw(tsl_progress_t *pg, const Tessel__V1__Trial *t, size_t i, size_t n)
{
    size_t done = 0;
    char phase[64]; /* room for two 20-digit counts (GCC checks) */
    for (size_t r = 0; r < t->n_ranks; r++)
        done += strcmp(t->ranks[r]->state, "done") == 0;
    snprintf(phase, sizeof phase, "trial %zu/%zu %s", i + 1, n, t->status);
    tsl_progress_draw(pg, t->world_size ? (double)done / t->world_size : 0, phase);
}

/* WatchTrial until it ends; *last is the last state seen. 0 or an exit status. */
static int watch_one(tsl_rpc_client_t *c, const char *id, size_t i, size_t n,
                     Tessel__V1__Trial **last)
{
    Tessel__V1__GetTrialRequest req = TESSEL__V1__GET_TRIAL_REQUEST__INIT;
    tsl_rpc_status_t st = {0};
    tsl_progress_t pg;
    ProtobufCMessage *msg;
    req.trial_id = (char *)id;
    tsl_rpc_stream_t *s =
        tsl_rpc_stream_start(c, tsl_rpc_methods[TSL_RPC_ID_WATCH_TRIAL].path, &req.base, &st);
    if (!s)
        return tsl_rpc_report(stderr, &st);
    tsl_progress_init(&pg);
    while (tsl_rpc_stream_next(s, &tessel__v1__trial__descriptor, &msg, &st) == 1) {
        if (*last)
            protobuf_c_message_free_unpacked(&(*last)->base, NULL);
        *last = (Tessel__V1__Trial *)msg;
        draw(&pg, *last, i, n);
    }
    tsl_progress_clear(&pg);
    if (tsl_rpc_stream_finish(s, &st) != 0)
        return tsl_rpc_report(stderr, &st);
    if (*last == NULL || !finished(*last))
        return tsl_remote_fail(TSL_EXIT_SERVER, "trial %s: the watch ended before the trial did",
                               id);
    return 0;
}

/* Follows each trial in turn and prints it; --json: every final trial in *arr. */
static int follow(const tsl_client_opts_t *co, char **ids, size_t n, json_t *arr)
{
    tsl_client_opts_t eff = *co;
    tsl_rpc_client_t *c;
    int rc = 0, failed = 0;
    tsl_remote_defaults(&eff, true); /* a trial may take minutes: no deadline unless given */
    if ((rc = tsl_remote_open(&eff, &c)) != 0)
        return rc;
    for (size_t i = 0; i < n && rc == 0; i++) {
        Tessel__V1__Trial *t = NULL;
        rc = watch_one(c, ids[i], i, n, &t);
        if (rc == 0) {
            failed |= strcmp(t->status, "done") != 0; /* failed or cancelled */
            if (arr)
                json_array_append_new(arr, tsl_proto_to_json(&t->base));
            else
                tsl_trial_print(stdout, t);
            if (!arr && i + 1 < n)
                fputs("\n", stdout);
        }
        if (t)
            protobuf_c_message_free_unpacked(&t->base, NULL);
    }
    tsl_rpc_client_close(c);
    return rc ? rc : failed ? tsl_errcode_exit(TSL_E_PRECONDITION) : TSL_EXIT_OK;
}

/* ---- actions -------------------------------------------------------------------- */

/* A stale plan is tried as stored (docs/api.md "Trials"): say that its trials are held
 * to a prediction this tesseld would not make, before their results read as its error.
 * (A link probe has no plan: never stale.) */
static void warn_stale(const Tessel__V1__StartTrialResponse *r, const char *fp)
{
    if (r->plan_stale)
        fprintf(stderr,
                "tesselctl: trial start: warning: plan %s is stale (a profile it was priced "
                "from changed since, or another cost model priced it); the trials run it as "
                "stored and compare with its stored prediction; `tesselctl plan` with its "
                "options searches again\n",
                fp);
}

/* The plans of the batch that do not run (StartTrialResponse.skipped: the executor
 * cannot run them, or no online workers fit them), one line
 * each on stderr: the ids on stdout stay the trials that run, as scripts read them. */
static void warn_skipped(const Tessel__V1__StartTrialResponse *r)
{
    for (size_t i = 0; i < r->n_skipped; i++) {
        const Tessel__V1__Trial *t = r->skipped[i];
        fprintf(stderr, "tesselctl: trial start: plan #%u%s%s%s not run (trial %s): %s\n",
                t->plan_index, t->plan_label[0] ? " (" : "", t->plan_label,
                t->plan_label[0] ? ")" : "", t->trial_id, t->error);
    }
}

static int print_started(const Tessel__V1__StartTrialResponse *r, const trial_opts_t *to,
                         const tsl_client_opts_t *co, const char *fp)
{
    int rc = TSL_EXIT_OK;
    warn_stale(r, fp);
    warn_skipped(r);
    json_t *doc = co->json ? tsl_proto_to_json(&r->base) : NULL;
    json_t *arr = doc && to->wait ? json_array() : NULL;
    if (!co->json)
        for (size_t i = 0; i < r->n_trial_ids; i++)
            printf("%s\n", r->trial_ids[i]);
    if (to->wait) {
        if (!co->json && r->n_trial_ids)
            printf("\n");
        fflush(stdout);
        rc = follow(co, r->trial_ids, r->n_trial_ids, arr);
    }
    if (arr)
        json_object_set_new(doc, "trials", arr);
    if (doc) {
        int prc = tsl_remote_print_json(stdout, doc);
        rc = rc ? rc : prc;
    }
    return rc;
}

/* StartTrial (a plan's top-k or a link probe) and what it started, as print_started says. */
static int start_call(Tessel__V1__StartTrialRequest *req, const trial_opts_t *to,
                      const tsl_client_opts_t *co)
{
    ProtobufCMessage *reply = NULL;
    int rc = tsl_remote_call(co, tsl_rpc_methods[TSL_RPC_ID_START_TRIAL].path, &req->base,
                             &tessel__v1__start_trial_response__descriptor, &reply);
    if (rc == 0)
        rc = print_started((const Tessel__V1__StartTrialResponse *)reply, to, co,
                           req->plan_fingerprint);
    if (reply)
        protobuf_c_message_free_unpacked(reply, NULL);
    return rc;
}

/* The options, then exactly one operand WHAT into *arg: 0, -1 after --help, or the exit status. */
static int parse_one(const char *action, const char *usage, const char *what, int argc, char **argv,
                     trial_opts_t *to, tsl_client_opts_t *co, const char **arg)
{
    char cmd[32];
    int rc = parse(action, usage, argc, argv, to, co);
    if (rc != 0)
        return rc;
    snprintf(cmd, sizeof cmd, "trial %s", action);
    return tsl_remote_one_arg(cmd, what, argc, argv, optind, arg);
}

static int trial_start(int argc, char **argv, tsl_client_opts_t *co)
{
    trial_opts_t to = {0};
    const char *fp = NULL;
    int rc = parse_one("start", start_usage, "FINGERPRINT", argc, argv, &to, co, &fp);
    if (rc != 0)
        return rc < 0 ? TSL_EXIT_OK : rc;
    Tessel__V1__StartTrialRequest req = TESSEL__V1__START_TRIAL_REQUEST__INIT;
    req.plan_fingerprint = (char *)fp;
    req.top_k = to.top_k;
    req.iterations = to.iterations;
    req.warmup = to.warmup;
    req.nodes = to.nodes;
    req.n_nodes = to.n_nodes;
    req.timeout_s = to.trial_timeout_s;
    return start_call(&req, &to, co);
}

static int trial_probe(int argc, char **argv, tsl_client_opts_t *co)
{
    trial_opts_t to = {0};
    int rc = parse("probe-link", probe_usage, argc, argv, &to, co);
    if (rc != 0)
        return rc < 0 ? TSL_EXIT_OK : rc;
    if (argc - optind != 2)
        return tsl_remote_fail(TSL_EXIT_USAGE,
                               "trial probe-link: give two node names (NODE_A NODE_B); see "
                               "tesselctl trial probe-link --help");
    Tessel__V1__StartTrialRequest req = TESSEL__V1__START_TRIAL_REQUEST__INIT;
    req.link_probe = true;
    req.nodes = argv + optind;
    req.n_nodes = 2;
    req.iterations = to.iterations;
    req.warmup = to.warmup;
    req.timeout_s = to.trial_timeout_s;
    return start_call(&req, &to, co);
}

static const char show_usage[] =
    "usage: tesselctl trial show [--json] TRIAL_ID\n"
    "\n"
    "Print one trial (Trials.GetTrial): its status, the plan and its label, how it ran\n"
    "(ranks, comm and device ops, iterations), predicted vs measured iteration time and\n"
    "peak memory with the relative errors ((predicted - measured) / measured), whether\n"
    "it was chosen as the plan's answer, why it failed, and one row per rank: host, GPU,\n"
    "state, iteration median/min/max, peak memory and the per-phase times. STALE on the\n"
    "plan line: the plan is stale now (a profile it was priced from changed, or another\n"
    "cost model priced it), so the prediction is the stored one.\n"
    "\n"
    "Options:\n"
    "  --json          the Trial message as JSON, keys as in the proto\n"
    "  --server ADDR, --token T, --timeout S   as for every subcommand\n"
    "\n"
    "Exit status: 0 ok, 2 usage, 3 no such trial, 4 server error, 5 unavailable.\n";

static const char watch_usage[] =
    "usage: tesselctl trial watch [--json] TRIAL_ID\n"
    "\n"
    "Follow one trial (Trials.WatchTrial) until it is done or failed, with a progress\n"
    "line on stderr when it is a terminal, then print it as `trial show` does.\n"
    "\n"
    "Options:\n"
    "  --json          the final Trial message as JSON\n"
    "  --server ADDR, --token T, --timeout S   as for every subcommand (no deadline\n"
    "                  unless --timeout)\n"
    "\n"
    "Exit status: 0 done, 2 usage, 3 no such trial, 4 the trial failed or a server\n"
    "error, 5 unavailable or deadline exceeded.\n";

static const char list_usage[] =
    "usage: tesselctl trial list [--limit N] [--json] [FINGERPRINT]\n"
    "\n"
    "List trials newest first (Trials.ListTrials), of every plan or of the plan\n"
    "FINGERPRINT: id, status, plan, predicted and measured iteration time and peak\n"
    "memory with the relative errors, which one was chosen as the answer, and STALE\n"
    "for a trial whose plan is stale now (its prediction the stored one).\n"
    "\n"
    "Options:\n"
    "  --limit N       at most N trials (1..1000; default 50)\n"
    "  --json          {\"trials\": [...]}, keys as in the proto\n"
    "  --server ADDR, --token T, --timeout S   as for every subcommand\n"
    "\n"
    "Exit status: 0 ok (also when there is none), 2 usage, 4 server error,\n"
    "5 unavailable.\n";

static void print_trial(const ProtobufCMessage *m)
{
    tsl_trial_print(stdout, (const Tessel__V1__Trial *)m);
}

static void print_list(const ProtobufCMessage *m)
{
    const Tessel__V1__ListTrialsResponse *r = (const Tessel__V1__ListTrialsResponse *)m;
    tsl_trial_print_table(stdout, r->trials, r->n_trials, true);
}

/* After a call that returned rc: the reply as JSON (--json) or as print writes it; frees it. */
static int print_reply(const tsl_client_opts_t *co, int rc, ProtobufCMessage *reply,
                       void (*print)(const ProtobufCMessage *m))
{
    if (rc == 0 && co->json)
        rc = tsl_remote_print_json(stdout, tsl_proto_to_json(reply));
    else if (rc == 0)
        print(reply);
    if (reply)
        protobuf_c_message_free_unpacked(reply, NULL);
    return rc;
}

static int trial_show(int argc, char **argv, tsl_client_opts_t *co)
{
    trial_opts_t to = {0};
    const char *id = NULL;
    int rc = parse_one("show", show_usage, "TRIAL_ID", argc, argv, &to, co, &id);
    if (rc != 0)
        return rc < 0 ? TSL_EXIT_OK : rc;
    Tessel__V1__GetTrialRequest req = TESSEL__V1__GET_TRIAL_REQUEST__INIT;
    ProtobufCMessage *reply = NULL;
    req.trial_id = (char *)id;
    rc = tsl_remote_call(co, tsl_rpc_methods[TSL_RPC_ID_GET_TRIAL].path, &req.base,
                         &tessel__v1__trial__descriptor, &reply);
    return print_reply(co, rc, reply, print_trial);
}

static int trial_watch(int argc, char **argv, tsl_client_opts_t *co)
{
    trial_opts_t to = {0};
    const char *id = NULL;
    int rc = parse_one("watch", watch_usage, "TRIAL_ID", argc, argv, &to, co, &id);
    if (rc != 0)
        return rc < 0 ? TSL_EXIT_OK : rc;
    json_t *arr = co->json ? json_array() : NULL;
    char *ids[1] = {(char *)id};
    rc = follow(co, ids, 1, arr);
    if (arr && json_array_size(arr) == 1)
        tsl_remote_print_json(stdout, json_incref(json_array_get(arr, 0)));
    json_decref(arr);
    return rc;
}

static const char cancel_usage[] =
    "usage: tesselctl trial cancel [--reason TEXT] [--json] TRIAL_ID\n"
    "\n"
    "Cancel a pending or running trial (Trials.CancelTrial): it ends \"cancelled\", its\n"
    "workers are told to stop its ranks at once (through their assignments) and take\n"
    "the next trial; then print it as `trial show` does. Cancelling a cancelled trial\n"
    "prints it again.\n"
    "\n"
    "Options:\n"
    "  --reason TEXT   kept in the trial's error (\"cancelled: TEXT\"; default \"by\n"
    "                  request\"; printable ASCII, at most 200 characters)\n"
    "  --json          the Trial message as JSON, keys as in the proto\n"
    "  --server ADDR, --token T, --timeout S   as for every subcommand\n"
    "\n"
    "Exit status: 0 ok, 2 usage, 3 no such trial, 4 the trial is done or failed\n"
    "already (the message says which) or a server error, 5 unavailable.\n";

static int trial_cancel(int argc, char **argv, tsl_client_opts_t *co)
{
    trial_opts_t to = {0};
    const char *id = NULL;
    int rc = parse_one("cancel", cancel_usage, "TRIAL_ID", argc, argv, &to, co, &id);
    if (rc != 0)
        return rc < 0 ? TSL_EXIT_OK : rc;
    Tessel__V1__CancelTrialRequest req = TESSEL__V1__CANCEL_TRIAL_REQUEST__INIT;
    ProtobufCMessage *reply = NULL;
    req.trial_id = (char *)id;
    req.reason = (char *)(to.reason ? to.reason : "");
    rc = tsl_remote_call(co, tsl_rpc_methods[TSL_RPC_ID_CANCEL_TRIAL].path, &req.base,
                         &tessel__v1__trial__descriptor, &reply);
    return print_reply(co, rc, reply, print_trial);
}

/* ListTrials: 0 with *out, or the exit status after reporting. */
static int list_call(const tsl_client_opts_t *co, const char *fp, uint32_t limit,
                     Tessel__V1__ListTrialsResponse **out)
{
    Tessel__V1__ListTrialsRequest req = TESSEL__V1__LIST_TRIALS_REQUEST__INIT;
    req.plan_fingerprint = (char *)(fp ? fp : "");
    req.limit = limit;
    return tsl_remote_call(co, tsl_rpc_methods[TSL_RPC_ID_LIST_TRIALS].path, &req.base,
                           &tessel__v1__list_trials_response__descriptor, (ProtobufCMessage **)out);
}

static int trial_list(int argc, char **argv, tsl_client_opts_t *co)
{
    trial_opts_t to = {0};
    Tessel__V1__ListTrialsResponse *r = NULL;
    int rc = parse("list", list_usage, argc, argv, &to, co);
    if (rc != 0)
        return rc < 0 ? TSL_EXIT_OK : rc;
    if (optind + 1 < argc)
        return tsl_remote_fail(TSL_EXIT_USAGE, "trial list: unexpected argument '%s'",
                               argv[optind + 1]);
    rc = list_call(co, optind < argc ? argv[optind] : NULL, to.limit, &r);
    return print_reply(co, rc, (ProtobufCMessage *)r, print_list);
}

Tessel__V1__ListTrialsResponse *tsl_trial_list_quiet(const tsl_client_opts_t *co, const char *fp)
{
    Tessel__V1__ListTrialsRequest req = TESSEL__V1__LIST_TRIALS_REQUEST__INIT;
    tsl_client_opts_t eff = *co;
    tsl_rpc_client_t *c;
    tsl_rpc_status_t st = {0};
    ProtobufCMessage *out = NULL;
    req.plan_fingerprint = (char *)fp;
    tsl_remote_defaults(&eff, false);
    if (tsl_remote_open(&eff, &c) != 0)
        return NULL;
    if (tsl_rpc_unary(c, tsl_rpc_methods[TSL_RPC_ID_LIST_TRIALS].path, &req.base,
                      &tessel__v1__list_trials_response__descriptor, &out, &st) != 0)
        out = NULL;
    tsl_rpc_client_close(c);
    return (Tessel__V1__ListTrialsResponse *)out;
}

/* ---- dispatch ------------------------------------------------------------------- */

int tsl_cmd_trial(int argc, char **argv, const tsl_client_opts_t *co_in)
{
    static const struct {
        const char *name;
        int (*fn)(int argc, char **argv, tsl_client_opts_t *co);
    } actions[] = {
        {"start", trial_start}, {"show", trial_show},        {"list", trial_list},
        {"watch", trial_watch}, {"probe-link", trial_probe}, {"cancel", trial_cancel},
    };
    tsl_client_opts_t co = *co_in;
    if (argc < 2)
        return tsl_remote_fail(
            TSL_EXIT_USAGE, "trial: give start, show, list, watch or cancel (or probe-link); see "
                            "tesselctl trial --help");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        fputs(trial_usage, stdout);
        return TSL_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof actions / sizeof actions[0]; i++)
        if (strcmp(argv[1], actions[i].name) == 0)
            return actions[i].fn(argc - 1, argv + 1, &co);
    return tsl_remote_fail(
        TSL_EXIT_USAGE,
        "trial: unknown action '%s'; give start, show, list, watch, cancel or probe-link", argv[1]);
}

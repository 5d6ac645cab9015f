/*
 * remote_workers.c — `tesselctl workers` (Registry.ListWorkers) and `tesselctl
 * profiles` (Registry.GetProfile): the registered nodes and what they measured,
 * as tables or --json (keys as in the proto).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "remote.h"
#include "tessel/v1/registry.pb-c.h"

static const char workers_usage[] =
    "usage: tesselctl workers [--json]\n"
    "\n"
    "List the tessel-worker agents registered with tesseld (Registry.ListWorkers),\n"
    "one row each: node name, worker id, GPUs (count x model), state, when tesseld\n"
    "last heard from it and the age of its newest profile. States: online; offline\n"
    "(no heartbeat within the daemon's worker_timeout_s, by default three heartbeat\n"
    "intervals); stopped (the worker deregistered on SIGTERM). Simulated workers\n"
    "(the sim backend) are marked \"sim\".\n"
    "\n"
    "Options:\n"
    "  --json           {\"workers\": [...]}, keys as in the proto\n"
    "  --server ADDR, --token T, --timeout S   as for every subcommand\n"
    "\n"
    "Exit status: 0 ok (also when no worker is registered), 4 server error (e.g. a\n"
    "token without the ops, scheduler or worker role), 5 unavailable.\n";

static const char profiles_usage[] =
    "usage: tesselctl profiles [--node NAME] [--gpu MODEL] [--json]\n"
    "\n"
    "Show what the workers measured (Registry.GetProfile). Without --node: the\n"
    "figures tesseld aggregated per GPU model and link class from each worker's\n"
    "newest profile, with the number of samples averaged; simulated figures are\n"
    "listed apart and never mixed with measured ones. With --node: that node's\n"
    "newest raw report, figure by figure. Values are printed in their unit (s,\n"
    "bytes, bytes/s, ratio) with the labels that say what was measured.\n"
    "\n"
    "Options:\n"
    "  --node NAME      one node's newest raw report\n"
    "  --gpu MODEL      one GPU model, e.g. \"NVIDIA H100 80GB HBM3\"\n"
    "  --json           {\"gpu_model\": ..., \"measurements\": [...]}\n"
    "  --server ADDR, --token T, --timeout S   as for every subcommand\n"
    "\n"
    "Exit status: 0 ok (also when nothing was measured yet), 4 server error,\n"
    "5 unavailable.\n";

enum { OPT_NODE = 0x400, OPT_GPU };

static const struct option workers_longopts[] = {TSL_REMOTE_LONG_OPTS, {NULL, 0, NULL, 0}};
static const struct option profiles_longopts[] = {
    {"node", required_argument, NULL, OPT_NODE},
    {"gpu", required_argument, NULL, OPT_GPU},
    TSL_REMOTE_LONG_OPTS,
    {NULL, 0, NULL, 0},
};

/* Parses one subcommand's options: -1 after --help, else an exit code. node/gpu
 * may be NULL for a command without them. */
static int parse(const char *cmd, const char *usage, const struct option *longopts, int argc,
                 char **argv, tsl_client_opts_t *co, const char **node, const char **gpu)
{
    int opt, rc;
    optind = 0;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        if (opt == 'h' || opt == TSL_OPT_HELP) {
            fputs(usage, stdout);
            return -1;
        }
        /* "" asked for nothing: an unset shell variable read as the aggregate (--node)
         * or every model (--gpu) */
        if ((opt == OPT_NODE && node) || (opt == OPT_GPU && gpu)) {
            if (optarg[0] == '\0')
                return tsl_remote_fail(TSL_EXIT_USAGE,
                                       "%s: %s: empty; give a %s (tesselctl workers lists them) "
                                       "or leave the option out",
                                       cmd, opt == OPT_NODE ? "--node" : "--gpu",
                                       opt == OPT_NODE ? "node name" : "GPU model");
            *(opt == OPT_NODE ? node : gpu) = optarg;
        } else if ((rc = tsl_remote_common_opt(opt, optarg, co)) == -1)
            return tsl_remote_getopt_error(cmd, opt, argv);
        else if (rc != 0)
            return rc;
    }
    if (optind < argc)
        return tsl_remote_fail(TSL_EXIT_USAGE, "%s: unexpected argument '%s'", cmd, argv[optind]);
    return 0;
}

/* "12 s", "5 min", "3 h", "2 d" ago; "-" for never. */
static void fmt_age(char *buf, size_t n, int64_t t, int64_t now)
{
    int64_t s = now - t;
    if (t <= 0)
        snprintf(buf, n, "-");
    else if (s < 120)
        snprintf(buf, n, "%lld s ago", (long long)(s < 0 ? 0 : s));
    else if (s < 7200)
        snprintf(buf, n, "%lld min ago", (long long)(s / 60));
    else if (s < 172800)
        snprintf(buf, n, "%lld h ago", (long long)(s / 3600));
    else
        snprintf(buf, n, "%lld d ago", (long long)(s / 86400));
}

/* "2 x NVIDIA H100 80GB HBM3 (80 GiB)", or the models one by one when mixed. */
static void fmt_gpus(char *buf, size_t n, const Tessel__V1__Worker *w)
{
    char mem[32];
    size_t same = 0;
    if (w->n_devices == 0) {
        snprintf(buf, n, "-");
        return;
    }
    for (size_t i = 0; i < w->n_devices; i++)
        same += strcmp(w->devices[i]->model, w->devices[0]->model) == 0;
    tsl_format_bytes(w->devices[0]->memory_bytes, mem, sizeof mem);
    if (same == w->n_devices)
        snprintf(buf, n, "%zu x %s (%s)", w->n_devices, w->devices[0]->model, mem);
    else
        snprintf(buf, n, "%zu GPUs, mixed models", w->n_devices);
}

static json_t *worker_json(const Tessel__V1__Worker *w)
{
    json_t *devs = json_array();
    for (size_t i = 0; i < w->n_devices; i++) {
        const Tessel__V1__Device *d = w->devices[i];
        json_array_append_new(devs, json_pack("{s:i, s:s, s:I, s:i, s:s}", "index", (int)d->index,
                                              "model", d->model, "memory_bytes",
                                              (json_int_t)d->memory_bytes, "sm_count",
                                              (int)d->sm_count, "uuid", d->uuid));
    }
    return json_pack("{s:s, s:s, s:s, s:b, s:o, s:I, s:I, s:I, s:i, s:i, s:s, s:s, s:s}",
                     "worker_id", w->worker_id, "hostname", w->hostname, "state", w->state,
                     "simulated", w->simulated, "devices", devs, "last_seen_unix",
                     (json_int_t)w->last_seen_unix, "registered_unix",
                     (json_int_t)w->registered_unix, "profile_unix", (json_int_t)w->profile_unix,
                     "n_measurements", (int)w->n_measurements, "heartbeat_interval_s",
                     (int)w->heartbeat_interval_s, "driver_version", w->driver_version,
                     "cuda_version", w->cuda_version, "nccl_version", w->nccl_version);
}

static void print_workers(const Tessel__V1__ListWorkersResponse *r)
{
    int64_t now = (int64_t)time(NULL);
    if (r->n_workers == 0) {
        printf("no workers registered\n");
        return;
    }
    /* The GPUS column widens to the longest entry (a sim worker's model name is
       "simulated NVIDIA H100 80GB HBM3 (SXM5)"), so STATE and the rest stay under
       their headings. */
    int width = 44;
    for (size_t i = 0; i < r->n_workers; i++) {
        char gpus[160];
        fmt_gpus(gpus, sizeof gpus, r->workers[i]);
        if ((int)strlen(gpus) > width)
            width = (int)strlen(gpus);
    }
    printf("%-20s %-18s %-*s %-8s %-12s %s\n", "NODE", "WORKER", width, "GPUS", "STATE",
           "LAST SEEN", "PROFILE");
    for (size_t i = 0; i < r->n_workers; i++) {
        const Tessel__V1__Worker *w = r->workers[i];
        char gpus[160], seen[32], prof[32], state[16];
        fmt_gpus(gpus, sizeof gpus, w);
        fmt_age(seen, sizeof seen, w->last_seen_unix, now);
        fmt_age(prof, sizeof prof, w->profile_unix, now);
        snprintf(state, sizeof state, "%s%s", w->state, w->simulated ? "*" : "");
        printf("%-20s %-18s %-*s %-8s %-12s %s\n", w->hostname, w->worker_id, width, gpus, state,
               seen, prof);
    }
    for (size_t i = 0; i < r->n_workers; i++) {
        if (r->workers[i]->simulated) {
            printf("* simulated (sim backend): its figures are kept apart from measured ones\n");
            break;
        }
    }
}

int tsl_cmd_workers(int argc, char **argv, const tsl_client_opts_t *co_in)
{
    Tessel__V1__ListWorkersRequest req = TESSEL__V1__LIST_WORKERS_REQUEST__INIT;
    tsl_client_opts_t co = *co_in;
    ProtobufCMessage *reply = NULL;
    int rc = parse("workers", workers_usage, workers_longopts, argc, argv, &co, NULL, NULL);
    if (rc != 0)
        return rc < 0 ? TSL_EXIT_OK : rc;
    rc = tsl_remote_call(&co, tsl_rpc_methods[TSL_RPC_ID_LIST_WORKERS].path, &req.base,
                         &tessel__v1__list_workers_response__descriptor, &reply);
    if (rc != 0)
        return rc;
    const Tessel__V1__ListWorkersResponse *r = (const Tessel__V1__ListWorkersResponse *)reply;
    if (co.json) {
        json_t *arr = json_array();
        for (size_t i = 0; i < r->n_workers; i++)
            json_array_append_new(arr, worker_json(r->workers[i]));
        rc = tsl_remote_print_json(stdout, json_pack("{s:o}", "workers", arr));
    } else {
        print_workers(r);
    }
    protobuf_c_message_free_unpacked(reply, NULL);
    return rc;
}

/* ---- profiles ------------------------------------------------------------------------ */

static void fmt_labels(char *buf, size_t n, const Tessel__V1__Measurement *m)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < m->n_labels && at + 1 < n; i++)
        at += (size_t)snprintf(buf + at, n - at, "%s%s=%s", i ? " " : "", m->labels[i]->key,
                               m->labels[i]->value);
    if (!buf[0])
        snprintf(buf, n, "-");
}

static json_t *measurement_json(const Tessel__V1__Measurement *m)
{
    json_t *labels = json_object();
    for (size_t i = 0; i < m->n_labels; i++)
        json_object_set_new(labels, m->labels[i]->key, json_string(m->labels[i]->value));
    json_t *o = json_pack("{s:s, s:s, s:f, s:o, s:s, s:s, s:b, s:I, s:i}", "name", m->name, "unit",
                          m->unit, "value", m->value, "labels", labels, "gpu_model", m->gpu_model,
                          "link_class", m->link_class, "simulated", m->simulated, "measured_unix",
                          (json_int_t)m->measured_unix, "n_samples", (int)m->n_samples);
    if (o && m->hostname[0])
        json_object_set_new(o, "hostname", json_string(m->hostname));
    if (o && m->per_device)
        json_object_set_new(o, "device_index", json_integer(m->device_index));
    return o;
}

/* node: the --node asked for ("" the aggregate, whose rows name no GPU); gpu: the
 * --gpu ("" any). An empty answer names what was asked for: other nodes may have
 * reported. */
static void print_profiles(const Tessel__V1__GetProfileResponse *r, const char *node,
                           const char *gpu)
{
    const char *model = NULL;
    int sim = -1;
    bool raw = node[0] != '\0';
    if (r->n_measurements == 0) {
        if (raw)
            printf("no profile reported by node '%s' (tesselctl workers lists the nodes)\n", node);
        else if (gpu[0])
            printf("no profile of GPU model '%s'\n", gpu);
        else
            printf("no profiles reported yet\n");
        return;
    }
    for (size_t i = 0; i < r->n_measurements; i++) {
        const Tessel__V1__Measurement *m = r->measurements[i];
        char labels[200], where[32];
        if (!model || strcmp(model, m->gpu_model) != 0 || sim != (int)m->simulated) {
            model = m->gpu_model;
            sim = m->simulated;
            /* a raw report's figures of no one GPU (collectives, host copies) */
            printf("%s%s (%s)\n", i ? "\n" : "", model[0] ? model : "node-wide figures",
                   sim ? "simulated" : "measured");
            printf("  %-18s %-8s %-16s %-9s %-7s %s\n", "NAME", raw ? "GPU" : "LINK", "VALUE",
                   "UNIT", raw ? "" : "SAMPLES", "LABELS");
        }
        fmt_labels(labels, sizeof labels, m);
        if (!raw)
            snprintf(where, sizeof where, "%u", m->n_samples);
        else if (m->per_device)
            snprintf(where, sizeof where, "%u", m->device_index);
        else
            snprintf(where, sizeof where, "node");
        printf("  %-18s %-8s %-16.6g %-9s %-7s %s\n", m->name,
               raw ? where : (m->link_class[0] ? m->link_class : "-"), m->value, m->unit,
               raw ? "" : where, labels);
    }
}

int tsl_cmd_profiles(int argc, char **argv, const tsl_client_opts_t *co_in)
{
    Tessel__V1__GetProfileRequest req = TESSEL__V1__GET_PROFILE_REQUEST__INIT;
    tsl_client_opts_t co = *co_in;
    ProtobufCMessage *reply = NULL;
    const char *node = "", *gpu = "";
    int rc = parse("profiles", profiles_usage, profiles_longopts, argc, argv, &co, &node, &gpu);
    if (rc != 0)
        return rc < 0 ? TSL_EXIT_OK : rc;
    req.hostname = (char *)node;
    req.gpu_model = (char *)gpu;
    rc = tsl_remote_call(&co, tsl_rpc_methods[TSL_RPC_ID_GET_PROFILE].path, &req.base,
                         &tessel__v1__get_profile_response__descriptor, &reply);
    if (rc != 0)
        return rc;
    const Tessel__V1__GetProfileResponse *r = (const Tessel__V1__GetProfileResponse *)reply;
    if (co.json) {
        json_t *arr = json_array();
        for (size_t i = 0; i < r->n_measurements; i++)
            json_array_append_new(arr, measurement_json(r->measurements[i]));
        rc = tsl_remote_print_json(stdout, json_pack("{s:s, s:s, s:o}", "gpu_model", gpu, "node",
                                                     node, "measurements", arr));
    } else {
        print_profiles(r, node, gpu);
    }
    protobuf_c_message_free_unpacked(reply, NULL);
    return rc;
}

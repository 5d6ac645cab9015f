/*
 * rpc_load — GetPlan load on tesseld over loopback, with the gRPC C core API.
 *
 * Starts a tesseld on a private unix socket and a temporary database (or uses the
 * one at --server), makes sure one plan is cached, then runs GetPlan on it from
 * 1, 8 and 64 concurrent streams (one async completion queue, that many calls in
 * flight on one channel) for a fixed number of calls each: once idle, and once
 * while two long searches run (Plan calls with force, restarted should one end,
 * from two background threads). Prints calls/s and p50/p99/max latency per row,
 * and the daemon's resident memory (VmRSS, VmHWM from /proc/PID/status) right after
 * the rows and settled after the searches when it started the daemon (or was given --pid). Prints figures; never fails
 * on time — only on a daemon that cannot be started or reached.
 *
 * usage: rpc_load [--tesseld PATH | --server ADDR [--pid PID]] [--token T]
 *                 [--calls N] [--model M] [--cluster C]
 *                 [--search-model M] [--search-cluster C]
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>

#include "grpc/health/v1/health.pb-c.h"
#include "rpc_client.h"
#include "tessel/v1/planner.pb-c.h"

#ifndef TSL_TESSELD_PATH
#define TSL_TESSELD_PATH ""
#endif

#define MAX_STREAMS     64
#define CALL_DEADLINE_S 10.0
#define START_WAIT_S    30.0
#define SEARCH_WAIT_S   30.0

typedef struct bench_opts {
    const char *tesseld;
    const char *server;
    const char *token;
    long pid; /* daemon to measure; 0 = none */
    unsigned calls;
    const char *model, *cluster;
    const char *search_model, *search_cluster;
} bench_opts_t;

typedef struct row {
    const char *phase;
    unsigned streams, calls, errors;
    double wall_s, qps, p50_ms, p99_ms, max_ms;
    double client_cpu; /* this process's CPU time / wall time */
} row_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct daemon_proc daemon_proc_t;
static daemon_proc_t *g_daemon; /* stopped by die() */
static void stop_daemon(daemon_proc_t *d);

static void die(const char *fmt, const char *arg)
{
    if (g_daemon)
        stop_daemon(g_daemon);
    fprintf(stderr, "rpc_load: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(1);
}

/* ---- options ---------------------------------------------------------------- */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: rpc_load [--tesseld PATH | --server ADDR [--pid PID]] [--token T]\n"
            "                [--calls N] [--model M] [--cluster C]\n"
            "                [--search-model M] [--search-cluster C]\n"
            "\n"
            "GetPlan load on tesseld from 1, 8 and 64 concurrent streams, idle and while\n"
            "two searches run; prints calls/s, p50/p99/max latency and the daemon's RSS.\n"
            "  --tesseld PATH     daemon to start on a private socket (default: the built one)\n"
            "  --server ADDR      use a running daemon instead (unix:/path or host:port)\n"
            "  --pid PID          with --server: read that process's RSS after the run\n"
            "  --token T          bearer token (env TESSEL_TOKEN) for --server\n"
            "  --calls N          GetPlan calls per row (default 20000)\n"
            "  --model, --cluster           the cached plan (GPT2-345M, 4xA100-40G)\n"
            "  --search-model, --search-cluster  the background searches\n"
            "                     (GPT3-65B, 16x8xA100-80G:ib100; max batch 65536 and 32768)\n");
}

static void parse_opts(int argc, char **argv, bench_opts_t *o)
{
    static const struct option lo[] = {
        {"tesseld", required_argument, NULL, 't'},
        {"server", required_argument, NULL, 's'},
        {"pid", required_argument, NULL, 'p'},
        {"token", required_argument, NULL, 'k'},
        {"calls", required_argument, NULL, 'n'},
        {"model", required_argument, NULL, 'm'},
        {"cluster", required_argument, NULL, 'c'},
        {"search-model", required_argument, NULL, 'M'},
        {"search-cluster", required_argument, NULL, 'C'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int opt;

    while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (opt) {
        case 't': o->tesseld = optarg; break;
        case 's': o->server = optarg; break;
        case 'p': o->pid = strtol(optarg, NULL, 10); break;
        case 'k': o->token = optarg; break;
        case 'n': o->calls = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'm': o->model = optarg; break;
        case 'c': o->cluster = optarg; break;
        case 'M': o->search_model = optarg; break;
        case 'C': o->search_cluster = optarg; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); exit(2);
        }
    }
    if (o->calls < 100)
        die("--calls: give at least %s", "100");
}

/* ---- the daemon ------------------------------------------------------------- */

struct daemon_proc {
    pid_t pid;
    char dir[64];
    char server[128];
};

static void write_config(const daemon_proc_t *d)
{
    char path[128];
    FILE *f;

    snprintf(path, sizeof(path), "%s/tesseld.ini", d->dir);
    if (!(f = fopen(path, "w")))
        die("cannot write %s", path);
    fprintf(f,
            "[server]\nunix_socket = %s/tesseld.sock\n"
            "[store]\ndatabase = %s/tessel.db\n"
            "[search]\npool_size = 2\nqueue_size = 16\n"
            "[log]\nlevel = warn\n",
            d->dir, d->dir);
    fclose(f);
}

static void exec_daemon(const char *tesseld, const daemon_proc_t *d)
{
    char cfg[128], log[128];
    int fd;

    snprintf(cfg, sizeof(cfg), "%s/tesseld.ini", d->dir);
    snprintf(log, sizeof(log), "%s/tesseld.log", d->dir);
    fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        close(fd);
    }
    execl(tesseld, tesseld, "--config", cfg, (char *)NULL);
    _exit(127);
}

/* Forks tesseld before any gRPC state exists in this process. */
static void start_daemon(const char *tesseld, daemon_proc_t *d)
{
    snprintf(d->dir, sizeof(d->dir), "/tmp/tessel-rpc-load.XXXXXX");
    if (!mkdtemp(d->dir))
        die("mkdtemp: %s", strerror(errno));
    write_config(d);
    snprintf(d->server, sizeof(d->server), "unix:%s/tesseld.sock", d->dir);
    d->pid = fork();
    if (d->pid < 0)
        die("fork: %s", strerror(errno));
    if (d->pid == 0)
        exec_daemon(tesseld, d);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void stop_daemon(daemon_proc_t *d)
{
    int status;

    g_daemon = NULL;
    if (d->pid <= 0)
        return;
    kill(d->pid, SIGTERM);
    for (int i = 0; i < 150 && waitpid(d->pid, &status, WNOHANG) == 0; i++)
        usleep(100000);
    if (waitpid(d->pid, &status, WNOHANG) == 0) {
        kill(d->pid, SIGKILL);
        waitpid(d->pid, &status, 0);
    }
    nftw(d->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* VmRSS / VmHWM of pid in kB; 0 when unreadable. */
static void read_rss(long pid, long *rss_kb, long *hwm_kb)
{
    char path[64], line[256];
    FILE *f;

    *rss_kb = *hwm_kb = 0;
    snprintf(path, sizeof(path), "/proc/%ld/status", pid);
    if (!(f = fopen(path, "r")))
        return;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "VmRSS:", 6) == 0)
            *rss_kb = strtol(line + 6, NULL, 10);
        else if (strncmp(line, "VmHWM:", 6) == 0)
            *hwm_kb = strtol(line + 6, NULL, 10);
    }
    fclose(f);
}

/* ---- setup calls (synchronous, rpc_client.h) -------------------------------- */

static bool daemon_serving(const bench_opts_t *o)
{
    Grpc__Health__V1__HealthCheckRequest req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
    ProtobufCMessage *reply = NULL;
    tsl_rpc_status_t st;
    char err[256];
    tsl_rpc_client_t *c = tsl_rpc_client_open(o->server, o->token, 2.0, err, sizeof(err));
    bool ok = false;

    if (!c)
        die("%s", err);
    if (tsl_rpc_unary(c, TSL_RPC_HEALTH_CHECK, &req.base,
                      &grpc__health__v1__health_check_response__descriptor, &reply, &st) == 0) {
        ok = ((Grpc__Health__V1__HealthCheckResponse *)reply)->status ==
             GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING;
        protobuf_c_message_free_unpacked(reply, NULL);
    }
    tsl_rpc_client_close(c);
    return ok;
}

static void wait_serving(const bench_opts_t *o, pid_t pid)
{
    double t0 = now_s();
    int status;

    while (now_s() - t0 < START_WAIT_S) {
        if (pid > 0 && waitpid(pid, &status, WNOHANG) == pid)
            die("tesseld exited at start-up (see its log under %s)", "/tmp/tessel-rpc-load.*");
        if (daemon_serving(o))
            return;
        usleep(200000);
    }
    die("tesseld at %s is not SERVING after 30 s", o->server);
}

static void plan_request(Tessel__V1__PlanRequest *req, const char *model, const char *cluster)
{
    req->model_case = TESSEL__V1__PLAN_REQUEST__MODEL_MODEL_PRESET;
    req->model_preset = (char *)model;
    req->cluster_case = TESSEL__V1__PLAN_REQUEST__CLUSTER_CLUSTER_SPEC;
    req->cluster_spec = (char *)cluster;
}

/* Runs Plan to the end; copies the plan's fingerprint into fp[17]. */
static void cache_plan(const bench_opts_t *o, char fp[17])
{
    Tessel__V1__PlanRequest req = TESSEL__V1__PLAN_REQUEST__INIT;
    tsl_rpc_status_t st = {0};
    ProtobufCMessage *msg;
    char err[256];
    tsl_rpc_client_t *c = tsl_rpc_client_open(o->server, o->token, 600, err, sizeof(err));
    tsl_rpc_stream_t *s;

    if (!c)
        die("%s", err);
    plan_request(&req, o->model, o->cluster);
    req.global_batch = 32;
    fp[0] = '\0';
    s = tsl_rpc_stream_start(c, TSL_RPC_PLAN, &req.base, &st);
    while (s && tsl_rpc_stream_next(s, &tessel__v1__plan_event__descriptor, &msg, &st) == 1) {
        Tessel__V1__PlanEvent *ev = (Tessel__V1__PlanEvent *)msg;
        if (ev->event_case == TESSEL__V1__PLAN_EVENT__EVENT_PLAN)
            snprintf(fp, 17, "%s", ev->plan->fingerprint);
        protobuf_c_message_free_unpacked(msg, NULL);
    }
    if (!s || tsl_rpc_stream_finish(s, &st) != 0 || !fp[0])
        die("could not cache a plan: %s", st.message);
    tsl_rpc_client_close(c);
}

/* ---- background searches ------------------------------------------------------- */

typedef struct searcher {
    const bench_opts_t *o;
    uint32_t max_batch; /* differs per searcher: distinct fingerprints */
    pthread_t th;
    pthread_mutex_t mu;
    tsl_rpc_stream_t *cur;
    atomic_int stop;
    atomic_int running;    /* the current search reports progress past "queued" */
    atomic_uint completed; /* searches that ended while we waited */
} searcher_t;

static void search_follow(searcher_t *sr, tsl_rpc_stream_t *s)
{
    ProtobufCMessage *msg;
    tsl_rpc_status_t st;

    while (tsl_rpc_stream_next(s, &tessel__v1__plan_event__descriptor, &msg, &st) == 1) {
        Tessel__V1__PlanEvent *ev = (Tessel__V1__PlanEvent *)msg;
        if (ev->event_case == TESSEL__V1__PLAN_EVENT__EVENT_PROGRESS && ev->progress->phase &&
            strcmp(ev->progress->phase, "queued") != 0)
            atomic_store(&sr->running, 1);
        protobuf_c_message_free_unpacked(msg, NULL);
    }
}

static void *search_main(void *arg)
{
    searcher_t *sr = arg;
    Tessel__V1__PlanRequest req = TESSEL__V1__PLAN_REQUEST__INIT;
    char err[256];
    tsl_rpc_client_t *c = tsl_rpc_client_open(sr->o->server, sr->o->token, 0, err, sizeof(err));

    plan_request(&req, sr->o->search_model, sr->o->search_cluster);
    req.max_batch = sr->max_batch;
    req.force = true;
    while (c && !atomic_load(&sr->stop)) {
        pthread_mutex_lock(&sr->mu);
        sr->cur =
            atomic_load(&sr->stop) ? NULL : tsl_rpc_stream_start(c, TSL_RPC_PLAN, &req.base, NULL);
        pthread_mutex_unlock(&sr->mu);
        if (!sr->cur)
            break;
        search_follow(sr, sr->cur);
        pthread_mutex_lock(&sr->mu);
        tsl_rpc_stream_finish(sr->cur, NULL);
        sr->cur = NULL;
        pthread_mutex_unlock(&sr->mu);
        atomic_store(&sr->running, 0);
        if (!atomic_load(&sr->stop))
            atomic_fetch_add(&sr->completed, 1);
    }
    tsl_rpc_client_close(c);
    return NULL;
}

static void searchers_start(searcher_t sr[2], const bench_opts_t *o)
{
    for (int i = 0; i < 2; i++) {
        memset(&sr[i], 0, sizeof(sr[i]));
        sr[i].o = o;
        sr[i].max_batch = i == 0 ? 65536 : 32768;
        pthread_mutex_init(&sr[i].mu, NULL);
        pthread_create(&sr[i].th, NULL, search_main, &sr[i]);
    }
}

/* Waits (bounded) until both searches run; returns how many do. */
static int searchers_wait_running(searcher_t sr[2])
{
    double t0 = now_s();

    while (now_s() - t0 < SEARCH_WAIT_S &&
           !(atomic_load(&sr[0].running) && atomic_load(&sr[1].running)))
        usleep(50000);
    return atomic_load(&sr[0].running) + atomic_load(&sr[1].running);
}

static void searchers_stop(searcher_t sr[2])
{
    for (int i = 0; i < 2; i++) {
        atomic_store(&sr[i].stop, 1);
        pthread_mutex_lock(&sr[i].mu);
        if (sr[i].cur)
            tsl_rpc_stream_cancel(sr[i].cur);
        pthread_mutex_unlock(&sr[i].mu);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(sr[i].th, NULL);
        pthread_mutex_destroy(&sr[i].mu);
    }
}

/* ---- the load: one channel, one async completion queue, N calls in flight ---- */

typedef struct slot {
    grpc_call *call;
    grpc_byte_buffer *req, *reply;
    grpc_metadata_array init_md, trail_md;
    grpc_status_code code;
    grpc_slice details;
    double t0;
} slot_t;

typedef struct load {
    grpc_channel *ch;
    grpc_completion_queue *cq;
    grpc_byte_buffer *req_template;
    grpc_metadata auth;
    size_t n_md;
    char auth_value[320];
    double *lat_s;
    unsigned issued, done, errors, total;
    slot_t slots[MAX_STREAMS];
} load_t;

static grpc_byte_buffer *pack_get_plan(const char *fp)
{
    Tessel__V1__GetPlanRequest req = TESSEL__V1__GET_PLAN_REQUEST__INIT;
    uint8_t buf[64];
    size_t n;
    grpc_slice s;
    grpc_byte_buffer *bb;

    req.fingerprint = (char *)fp;
    n = tessel__v1__get_plan_request__pack(&req, buf);
    s = grpc_slice_from_copied_buffer((const char *)buf, n);
    bb = grpc_raw_byte_buffer_create(&s, 1);
    grpc_slice_unref(s);
    return bb;
}

static const char *load_target(const char *server, char *buf, size_t n)
{
    if (strncmp(server, "unix:///", 8) == 0) {
        snprintf(buf, n, "unix:%s", server + 7);
        return buf;
    }
    return server;
}

static void load_init(load_t *l, const bench_opts_t *o, const char *fp)
{
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    grpc_arg arg = {
        .type = GRPC_ARG_INTEGER, .key = (char *)GRPC_ARG_ENABLE_RETRIES, .value.integer = 0};
    grpc_channel_args args = {.num_args = 1, .args = &arg};
    char target[256];

    memset(l, 0, sizeof(*l));
    l->ch = grpc_channel_create(load_target(o->server, target, sizeof(target)), creds, &args);
    grpc_channel_credentials_release(creds);
    l->cq = grpc_completion_queue_create_for_next(NULL);
    l->req_template = pack_get_plan(fp);
    if (o->token && *o->token) {
        snprintf(l->auth_value, sizeof(l->auth_value), "Bearer %s", o->token);
        l->auth.key = grpc_slice_from_static_string("authorization");
        l->auth.value = grpc_slice_from_static_string(l->auth_value);
        l->n_md = 1;
    }
}

static void load_free(load_t *l)
{
    grpc_byte_buffer_destroy(l->req_template);
    grpc_channel_destroy(l->ch);
    grpc_completion_queue_shutdown(l->cq);
    while (grpc_completion_queue_next(l->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
           GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(l->cq);
}

static void slot_ops(load_t *l, slot_t *s, grpc_op ops[6])
{
    memset(ops, 0, 6 * sizeof(grpc_op));
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[0].data.send_initial_metadata.count = l->n_md;
    ops[0].data.send_initial_metadata.metadata = l->n_md ? &l->auth : NULL;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = s->req;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &s->init_md;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &s->reply;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &s->trail_md;
    ops[5].data.recv_status_on_client.status = &s->code;
    ops[5].data.recv_status_on_client.status_details = &s->details;
}

static void slot_start(load_t *l, slot_t *s)
{
    gpr_timespec deadline =
        gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                     gpr_time_from_millis((int64_t)(CALL_DEADLINE_S * 1e3), GPR_TIMESPAN));
    grpc_op ops[6];

    s->req = grpc_byte_buffer_copy(l->req_template);
    s->reply = NULL;
    s->details = grpc_empty_slice();
    grpc_metadata_array_init(&s->init_md);
    grpc_metadata_array_init(&s->trail_md);
    s->call = grpc_channel_create_call(l->ch, NULL, GRPC_PROPAGATE_DEFAULTS, l->cq,
                                       grpc_slice_from_static_string(TSL_RPC_GET_PLAN), NULL,
                                       deadline, NULL);
    slot_ops(l, s, ops);
    s->t0 = now_s();
    l->issued++;
    if (grpc_call_start_batch(s->call, ops, 6, s, NULL) != GRPC_CALL_OK)
        die("grpc_call_start_batch failed%s", "");
}

static void slot_done(load_t *l, slot_t *s, bool success)
{
    double t = now_s() - s->t0;

    if (!success || s->code != GRPC_STATUS_OK || !s->reply)
        l->errors++;
    if (l->lat_s)
        l->lat_s[l->done] = t;
    l->done++;
    if (s->reply)
        grpc_byte_buffer_destroy(s->reply);
    grpc_byte_buffer_destroy(s->req);
    grpc_slice_unref(s->details);
    grpc_metadata_array_destroy(&s->init_md);
    grpc_metadata_array_destroy(&s->trail_md);
    grpc_call_unref(s->call);
}

/* Runs `total` calls with `streams` in flight; latencies into lat_s (may be NULL). */
static double load_run(load_t *l, unsigned streams, unsigned total, double *lat_s)
{
    double t0 = now_s();

    l->issued = l->done = l->errors = 0;
    l->total = total;
    l->lat_s = lat_s;
    for (unsigned i = 0; i < streams && l->issued < total; i++)
        slot_start(l, &l->slots[i]);
    while (l->done < total) {
        grpc_event ev = grpc_completion_queue_next(l->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        slot_t *s = ev.tag;
        if (ev.type != GRPC_OP_COMPLETE)
            die("completion queue: unexpected event%s", "");
        slot_done(l, s, ev.success);
        if (l->issued < total)
            slot_start(l, s);
    }
    return now_s() - t0;
}

/* ---- rows and the table ------------------------------------------------------- */

static double cpu_s(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(const double *sorted, unsigned n, double p)
{
    unsigned i = (unsigned)(p * (double)(n - 1) + 0.5);
    return sorted[i < n ? i : n - 1];
}

static row_t measure(load_t *l, const char *phase, unsigned streams, unsigned calls, double *lat)
{
    row_t r = {.phase = phase, .streams = streams, .calls = calls};

    double cpu0;

    load_run(l, streams, calls / 20 + streams, NULL); /* warm-up */
    cpu0 = cpu_s();
    r.wall_s = load_run(l, streams, calls, lat);
    r.client_cpu = (cpu_s() - cpu0) / r.wall_s;
    r.errors = l->errors;
    qsort(lat, calls, sizeof(double), cmp_double);
    r.qps = calls / r.wall_s;
    r.p50_ms = pct(lat, calls, 0.50) * 1e3;
    r.p99_ms = pct(lat, calls, 0.99) * 1e3;
    r.max_ms = lat[calls - 1] * 1e3;
    return r;
}

static const char *verdict(const row_t *r)
{
    bool idle = strcmp(r->phase, "idle") == 0;
    bool ok = r->errors == 0 && r->p99_ms < (idle ? 10.0 : 20.0) && (!idle || r->qps >= 5000.0);
    return ok ? "met" : "MISSED";
}

static void print_row(const row_t *r)
{
    printf("%-10s %7u %8u %8.3f %10.0f %8.3f %8.3f %8.3f %6u %6.0f%%  %s\n", r->phase, r->streams,
           r->calls, r->wall_s, r->qps, r->p50_ms, r->p99_ms, r->max_ms, r->errors,
           r->client_cpu * 100.0, verdict(r));
    fflush(stdout);
}

static void print_header(void)
{
    printf("%-10s %7s %8s %8s %10s %8s %8s %8s %6s %7s  %s\n", "phase", "streams", "calls",
           "wall_s", "calls/s", "p50_ms", "p99_ms", "max_ms", "errors", "cli_cpu", "target");
}

static void run_rows(load_t *l, const char *phase, unsigned calls, double *lat)
{
    static const unsigned streams[] = {1, 8, 64};

    for (size_t i = 0; i < sizeof(streams) / sizeof(streams[0]); i++) {
        row_t r = measure(l, phase, streams[i], calls, lat);
        print_row(&r);
    }
}

/*
 * Two readings: right after the rows, while the two cancelled searches may still be
 * unwinding (their tables are working memory, ~35 MB each for GPT3-65B on 128 GPUs:
 * `tesselctl plan --local` peaks at 46 MB), and settled — polled every 0.5 s for up
 * to 15 s until two readings agree — which is what the daemon retains after a flood
 * and what the 64 MB target is about.
 */
static void print_rss(long pid)
{
    long rss_kb, hwm_kb, prev_kb = -1;

    if (pid <= 0) {
        printf("tesseld RSS: n/a (not started by rpc_load; give --pid)\n");
        return;
    }
    read_rss(pid, &rss_kb, &hwm_kb);
    printf("tesseld RSS right after the rows: %.1f MB (peak %.1f MB, searches included)\n",
           rss_kb / 1024.0, hwm_kb / 1024.0);
    for (int i = 0; i < 30 && rss_kb != prev_kb; i++) {
        usleep(500000);
        prev_kb = rss_kb;
        read_rss(pid, &rss_kb, &hwm_kb);
    }
    printf("tesseld RSS settled after the searches: %.1f MB  target < 64 MB: %s\n", rss_kb / 1024.0,
           rss_kb > 0 && rss_kb < 64 * 1024 ? "met" : "MISSED");
}

/* ---- main -------------------------------------------------------------------- */

static void run_bench(const bench_opts_t *o, long pid)
{
    searcher_t sr[2];
    load_t l;
    char fp[17];
    double *lat = calloc(o->calls, sizeof(double));
    int running;

    if (!lat)
        die("out of memory%s", "");
    cache_plan(o, fp);
    printf("rpc_load: GetPlan %s on %s, %u calls per row (tesseld pid %ld)\n", fp, o->server,
           o->calls, pid);
    printf("targets: idle >= 5000 calls/s and p99 < 10 ms; searching p99 < 20 ms\n\n");
    load_init(&l, o, fp);
    print_header();
    run_rows(&l, "idle", o->calls, lat);
    searchers_start(sr, o);
    running = searchers_wait_running(sr);
    run_rows(&l, "searching", o->calls, lat);
    printf("\nbackground: %d/2 searches of %s on %s running at the start; %u restarted during the "
           "rows\n",
           running, o->search_model, o->search_cluster,
           atomic_load(&sr[0].completed) + atomic_load(&sr[1].completed));
    searchers_stop(sr);
    load_free(&l);
    free(lat);
}

int main(int argc, char **argv)
{
    bench_opts_t o = {.tesseld = TSL_TESSELD_PATH,
                      .token = getenv("TESSEL_TOKEN"),
                      .calls = 20000,
                      .model = "GPT2-345M",
                      .cluster = "4xA100-40G",
                      .search_model = "GPT3-65B",
                      .search_cluster = "16x8xA100-80G:ib100"};
    daemon_proc_t d = {0};
    long pid;

    parse_opts(argc, argv, &o);
    if (!o.server) {
        if (!o.tesseld[0])
            die("no tesseld built; give --tesseld PATH or --server ADDR%s", "");
        start_daemon(o.tesseld, &d);
        g_daemon = &d;
        o.server = d.server;
    }
    pid = d.pid > 0 ? d.pid : o.pid;
    signal(SIGPIPE, SIG_IGN);
    grpc_init();
    wait_serving(&o, d.pid);
    run_bench(&o, pid);
    printf("\n");
    print_rss(pid);
    grpc_shutdown();
    stop_daemon(&d);
    return 0;
}

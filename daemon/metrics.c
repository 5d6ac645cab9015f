/*
 * metrics.c — tesseld's counters and their Prometheus text rendering (see
 * metrics.h).
 *
 * One mutex guards everything: an update is a few adds, far below the cost of
 * the RPC it counts, and one lock gives /metrics a consistent snapshot (a
 * histogram's _count always equals its +Inf bucket).
 */
#include "metrics.h"

#include <math.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include "status.h"

#ifndef TSL_VERSION
#define TSL_VERSION "unknown"
#endif

/* Search latency buckets, seconds: a cached plan is milliseconds, a large sweep
 * minutes. */
static const double SEARCH_BUCKETS_S[] = {0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,  2.5,
                                          5,    10,    30,   60,  120,  300, 600};
#define N_BUCKETS (sizeof(SEARCH_BUCKETS_S) / sizeof(SEARCH_BUCKETS_S[0]))

/* Method × code pairs seen; a handful in practice. Past the cap, new pairs are
 * counted under method="other" rather than growing without bound; the last
 * N_CODES slots are kept for those. */
#define MAX_SERIES 128

/* gRPC codes 0 .. UNAUTHENTICATED, named by api/status.h's one table. */
#define N_CODES TSL_STATUS_COUNT

#define N_TRIAL_EVENTS  5
#define N_WORKER_STATES 3

typedef struct series {
    char method[48];
    int code;
    uint64_t count;
} series_t;

struct tsl_metrics {
    pthread_mutex_t mu;
    series_t requests[MAX_SERIES];
    size_t n_requests;
    uint64_t buckets[N_BUCKETS]; /* not cumulative; summed when rendered */
    uint64_t search_count;
    double search_sum_s;
    uint64_t cache_hits, cache_misses;
    int64_t queued, running, plans;
    int64_t trials_pending, trials_running;
    _Atomic uint64_t refused[TSL_REFUSED_N]; /* lock-free: counted on hot refusal paths */
    _Atomic uint64_t trials[N_TRIAL_EVENTS];
    int64_t workers[N_WORKER_STATES]; /* -1: not counted yet (left out) */
};

static const char *const TRIAL_EVENTS[N_TRIAL_EVENTS] = {"started", "done", "failed", "cancelled",
                                                         "skipped"};
static const char *const WORKER_STATES[N_WORKER_STATES] = {"online", "offline", "stopped"};

static const char *const REFUSED_NAMES[TSL_REFUSED_N] = {
    "unauthenticated", "permission_denied", "unreadable", "connection",
    "accept_error",    "http_accept_error", "streams",
};

tsl_metrics_t *tsl_metrics_new(void)
{
    tsl_metrics_t *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return NULL;
    pthread_mutex_init(&m->mu, NULL);
    for (int i = 0; i < N_WORKER_STATES; i++)
        m->workers[i] = -1;
    return m;
}

void tsl_metrics_free(tsl_metrics_t *m)
{
    if (m == NULL)
        return;
    pthread_mutex_destroy(&m->mu);
    free(m);
}

static series_t *find_series(tsl_metrics_t *m, const char *method, int code)
{
    for (size_t i = 0; i < m->n_requests; i++)
        if (m->requests[i].code == code && strcmp(m->requests[i].method, method) == 0)
            return &m->requests[i];
    bool other = strcmp(method, "other") == 0;
    if (m->n_requests >= (other ? MAX_SERIES : MAX_SERIES - N_CODES))
        return other ? NULL : find_series(m, "other", code);
    series_t *s = &m->requests[m->n_requests++];
    snprintf(s->method, sizeof(s->method), "%s", method);
    s->code = code;
    s->count = 0;
    return s;
}

void tsl_metrics_request(tsl_metrics_t *m, const char *method, int grpc_code)
{
    if (m == NULL)
        return;
    if (grpc_code < 0 || grpc_code >= N_CODES)
        grpc_code = 2; /* UNKNOWN */
    pthread_mutex_lock(&m->mu);
    series_t *s = find_series(m, method ? method : "", grpc_code);
    if (s != NULL)
        s->count++;
    pthread_mutex_unlock(&m->mu);
}

void tsl_metrics_search_time(tsl_metrics_t *m, double seconds)
{
    if (m == NULL || !(seconds >= 0) || isinf(seconds))
        return;
    size_t b = 0;
    while (b < N_BUCKETS && seconds > SEARCH_BUCKETS_S[b])
        b++;
    pthread_mutex_lock(&m->mu);
    if (b < N_BUCKETS)
        m->buckets[b]++;
    m->search_count++;
    m->search_sum_s += seconds;
    pthread_mutex_unlock(&m->mu);
}

void tsl_metrics_cache(tsl_metrics_t *m, int hit)
{
    if (m == NULL)
        return;
    pthread_mutex_lock(&m->mu);
    if (hit)
        m->cache_hits++;
    else
        m->cache_misses++;
    pthread_mutex_unlock(&m->mu);
}

void tsl_metrics_set_queue(tsl_metrics_t *m, int64_t queued, int64_t running)
{
    if (m == NULL)
        return;
    pthread_mutex_lock(&m->mu);
    m->queued = queued;
    m->running = running;
    pthread_mutex_unlock(&m->mu);
}

void tsl_metrics_set_plans(tsl_metrics_t *m, int64_t stored)
{
    if (m == NULL)
        return;
    pthread_mutex_lock(&m->mu);
    m->plans = stored;
    pthread_mutex_unlock(&m->mu);
}

void tsl_metrics_trial(tsl_metrics_t *m, const char *event)
{
    for (int i = 0; m && i < N_TRIAL_EVENTS; i++)
        if (strcmp(event, TRIAL_EVENTS[i]) == 0)
            atomic_fetch_add(&m->trials[i], 1);
}

void tsl_metrics_set_trials(tsl_metrics_t *m, int64_t pending, int64_t running)
{
    if (m == NULL)
        return;
    pthread_mutex_lock(&m->mu);
    m->trials_pending = pending;
    m->trials_running = running;
    pthread_mutex_unlock(&m->mu);
}

void tsl_metrics_set_workers(tsl_metrics_t *m, int64_t online, int64_t offline, int64_t stopped)
{
    if (m == NULL)
        return;
    pthread_mutex_lock(&m->mu);
    m->workers[0] = online;
    m->workers[1] = offline;
    m->workers[2] = stopped;
    pthread_mutex_unlock(&m->mu);
}

void tsl_metrics_refused(tsl_metrics_t *m, tsl_refused_t reason)
{
    if (m && (unsigned)reason < TSL_REFUSED_N)
        atomic_fetch_add(&m->refused[reason], 1);
}

uint64_t tsl_metrics_refused_count(tsl_metrics_t *m, tsl_refused_t reason)
{
    return m && (unsigned)reason < TSL_REFUSED_N ? atomic_load(&m->refused[reason]) : 0;
}

void tsl_metrics_get_queue(tsl_metrics_t *m, int64_t *queued, int64_t *running, int64_t *plans)
{
    pthread_mutex_lock(&m->mu);
    *queued = m->queued;
    *running = m->running;
    *plans = m->plans;
    pthread_mutex_unlock(&m->mu);
}

/* ---- /proc/self ------------------------------------------------------------------------------ */

/* /proc/stat's btime: /proc/self/stat counts the start in ticks since boot. */
static double boot_time_s(void)
{
    FILE *f = fopen("/proc/stat", "re");
    char line[256];
    long long bt = -1;
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "btime %lld", &bt) == 1)
            break;
    fclose(f);
    return (double)bt;
}

/* utime, stime (fields 14, 15) and starttime (22) of /proc/self/stat. The
 * command name (field 2) may hold spaces and parentheses: parse after the last ')'. */
static void read_stat(tsl_proc_stats_t *out)
{
    char buf[1024];
    FILE *f = fopen("/proc/self/stat", "re");
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    if (f != NULL)
        fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    unsigned long long ut, st, start;
    long tck = sysconf(_SC_CLK_TCK);
    if (p == NULL || tck <= 0 ||
        sscanf(p + 1,
               " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d "
               "%*d %*d %llu",
               &ut, &st, &start) != 3)
        return;
    out->cpu_s = (double)(ut + st) / (double)tck;
    double bt = boot_time_s();
    if (bt >= 0)
        out->start_time_s = bt + (double)start / (double)tck;
}

static int64_t count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int64_t n = 0;
    if (d == NULL)
        return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

void tsl_proc_stats(tsl_proc_stats_t *out)
{
    *out = (tsl_proc_stats_t){.start_time_s = -1, .cpu_s = -1, .rss_bytes = -1, .open_fds = -1};
    read_stat(out);
    FILE *f = fopen("/proc/self/statm", "re");
    long long pages;
    if (f != NULL) {
        if (fscanf(f, "%*u %lld", &pages) == 1)
            out->rss_bytes = pages * sysconf(_SC_PAGESIZE);
        fclose(f);
    }
    out->open_fds = count_fds();
}

/* ---- rendering ---------------------------------------------------------------------------- */

/* Label values escape backslash, double quote and newline (exposition format). */
static void put_label(FILE *f, const char *v)
{
    for (; *v != '\0'; v++) {
        if (*v == '\\' || *v == '"')
            fprintf(f, "\\%c", *v);
        else if (*v == '\n')
            fputs("\\n", f);
        else
            fputc(*v, f);
    }
}

static void put_header(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static int cmp_series(const void *a, const void *b)
{
    const series_t *x = a, *y = b;
    int c = strcmp(x->method, y->method);
    return c != 0 ? c : (x->code > y->code) - (x->code < y->code);
}

static void render_requests(FILE *f, const tsl_metrics_t *m)
{
    series_t sorted[MAX_SERIES];
    memcpy(sorted, m->requests, m->n_requests * sizeof(series_t));
    qsort(sorted, m->n_requests, sizeof(series_t), cmp_series);
    put_header(f, "tessel_requests_total", "counter",
               "gRPC requests answered, by method and status code.");
    for (size_t i = 0; i < m->n_requests; i++) {
        fputs("tessel_requests_total{method=\"", f);
        put_label(f, sorted[i].method);
        fprintf(f, "\",code=\"%s\"} %llu\n", tsl_status_name((grpc_status_code)sorted[i].code),
                (unsigned long long)sorted[i].count);
    }
}

static void render_histogram(FILE *f, const tsl_metrics_t *m)
{
    put_header(f, "tessel_search_seconds", "histogram", "Wall time of plan searches, in seconds.");
    uint64_t cum = 0;
    for (size_t b = 0; b < N_BUCKETS; b++) {
        cum += m->buckets[b];
        fprintf(f, "tessel_search_seconds_bucket{le=\"%g\"} %llu\n", SEARCH_BUCKETS_S[b],
                (unsigned long long)cum);
    }
    fprintf(f, "tessel_search_seconds_bucket{le=\"+Inf\"} %llu\n",
            (unsigned long long)m->search_count);
    fprintf(f, "tessel_search_seconds_sum %.17g\n", m->search_sum_s);
    fprintf(f, "tessel_search_seconds_count %llu\n", (unsigned long long)m->search_count);
}

/* Left out until the daemon counted them once: a 0 would read as "all workers gone". */
static void render_workers(FILE *f, const tsl_metrics_t *m)
{
    if (m->workers[0] < 0)
        return;
    put_header(f, "tessel_workers", "gauge",
               "Registered workers by liveness state (online, offline, stopped).");
    for (int i = 0; i < N_WORKER_STATES; i++)
        fprintf(f, "tessel_workers{state=\"%s\"} %lld\n", WORKER_STATES[i],
                (long long)m->workers[i]);
}

static void render_scalars(FILE *f, const tsl_metrics_t *m)
{
    put_header(f, "tessel_plan_cache_hits_total", "counter",
               "Plan requests answered from the store without a search.");
    fprintf(f, "tessel_plan_cache_hits_total %llu\n", (unsigned long long)m->cache_hits);
    put_header(f, "tessel_plan_cache_misses_total", "counter",
               "Plan requests that needed a search.");
    fprintf(f, "tessel_plan_cache_misses_total %llu\n", (unsigned long long)m->cache_misses);
    put_header(f, "tessel_search_queue_depth", "gauge", "Searches waiting for a search thread.");
    fprintf(f, "tessel_search_queue_depth %lld\n", (long long)m->queued);
    put_header(f, "tessel_searches_running", "gauge", "Searches running now.");
    fprintf(f, "tessel_searches_running %lld\n", (long long)m->running);
    put_header(f, "tessel_plans_stored", "gauge", "Plans in the store.");
    fprintf(f, "tessel_plans_stored %lld\n", (long long)m->plans);
    put_header(f, "tessel_refused_total", "counter",
               "Calls and connections refused before any handler ran, by reason.");
    for (int r = 0; r < TSL_REFUSED_N; r++)
        fprintf(f, "tessel_refused_total{reason=\"%s\"} %llu\n", REFUSED_NAMES[r],
                (unsigned long long)atomic_load(&m->refused[r]));
    put_header(f, "tessel_trials_total", "counter",
               "Trials started, finished by status (done, failed, cancelled), and skipped.");
    for (int i = 0; i < N_TRIAL_EVENTS; i++)
        fprintf(f, "tessel_trials_total{event=\"%s\"} %llu\n", TRIAL_EVENTS[i],
                (unsigned long long)atomic_load(&m->trials[i]));
    put_header(f, "tessel_trials_pending", "gauge",
               "Trials waiting for their workers or for the trial before them in their batch.");
    fprintf(f, "tessel_trials_pending %lld\n", (long long)m->trials_pending);
    put_header(f, "tessel_trials_running", "gauge", "Trials running now.");
    fprintf(f, "tessel_trials_running %lld\n", (long long)m->trials_running);
    render_workers(f, m);
}

/* Unreadable fields are left out rather than exported as -1. */
static void render_process(FILE *f)
{
    tsl_proc_stats_t ps;
    tsl_proc_stats(&ps);
    put_header(f, "tessel_build_info", "gauge", "Always 1; the version of this tesseld.");
    fputs("tessel_build_info{version=\"", f);
    put_label(f, TSL_VERSION);
    fputs("\"} 1\n", f);
    if (ps.start_time_s >= 0) {
        put_header(f, "process_start_time_seconds", "gauge",
                   "Start time of the process since unix epoch in seconds.");
        fprintf(f, "process_start_time_seconds %.2f\n", ps.start_time_s);
    }
    if (ps.cpu_s >= 0) {
        put_header(f, "process_cpu_seconds_total", "counter",
                   "Total user and system CPU time spent in seconds.");
        fprintf(f, "process_cpu_seconds_total %.2f\n", ps.cpu_s);
    }
    if (ps.rss_bytes >= 0) {
        put_header(f, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
        fprintf(f, "process_resident_memory_bytes %lld\n", (long long)ps.rss_bytes);
    }
    if (ps.open_fds >= 0) {
        put_header(f, "process_open_fds", "gauge", "Number of open file descriptors.");
        fprintf(f, "process_open_fds %lld\n", (long long)ps.open_fds);
    }
}

char *tsl_metrics_render(tsl_metrics_t *m)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        return NULL;
    pthread_mutex_lock(&m->mu);
    render_requests(f, m);
    render_histogram(f, m);
    render_scalars(f, m);
    pthread_mutex_unlock(&m->mu);
    render_process(f); /* file reads: outside the lock */
    if (ferror(f)) {
        fclose(f);
        free(text);
        return NULL;
    }
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

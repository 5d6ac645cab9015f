/*
 * test_http.c — the HTTP side door on a free port: /healthz (200 and 503),
 * /metrics (content type, parsable, plans gauge refreshed from the store), / (the
 * status page lists a stored plan with its <script> name escaped), 404, 405, HEAD,
 * and start errors; the page's workers, profiles, daemon figures and a plan's
 * per-stage SVG chart (/plan/FP); trials and calibrations (http_trials.c) on both
 * pages with a hostile hostname and failure reason, a skipped trial (its reason
 * shown, neither red nor an alert), and the trial gauges. The client is a raw
 * socket written here.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <event2/buffer.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "http.h"
#include "http_page.h"
#include "http_html.h"
#include "http_overview.h"
#include "calibration.h"
#include "cost.h"
#include "http_trials.h"
#include "store_registry.h"
#include "store_trials.h"

static char tmpdir[256];
static atomic_int serving = 1;

static int health(void *ud)
{
    (void)ud;
    return atomic_load(&serving);
}

typedef struct response {
    int status;
    char head[4096];
    char *body;
} response_t;

/* One HTTP/1.0 exchange: the server closes after the reply, so read to EOF. */
static int fetch(int port, const char *method, const char *path, response_t *r)
{
    memset(r, 0, sizeof(*r));
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    char req[512];
    int n = snprintf(req, sizeof(req), "%s %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", method, path);
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return -1;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    ssize_t got;
    while ((got = read(fd, buf + len, cap - len - 1)) > 0) {
        len += (size_t)got;
        if (len + 1 == cap)
            buf = realloc(buf, cap *= 2);
    }
    close(fd);
    buf[len] = '\0';
    char *sep = strstr(buf, "\r\n\r\n");
    if (sep == NULL || sscanf(buf, "HTTP/1.%*d %d", &r->status) != 1) {
        free(buf);
        return -1;
    }
    snprintf(r->head, sizeof(r->head), "%.*s", (int)(sep - buf), buf);
    r->body = strdup(sep + 4);
    free(buf);
    return 0;
}

static int has_header(const response_t *r, const char *line)
{
    return strcasestr(r->head, line) != NULL;
}

/* Three stages: the second the slowest, the third the largest peak; budget 8 GiB.
 * The second's layers run two strategies, the third's model states are 1.35 MiB. */
static const char STAGED_RESULT[] =
    "{\"plan\": {\"pp\": 3, \"micro_batch\": 4, \"n_micro\": 16, "
    "\"budget_bytes\": 8589934592, \"stages\": ["
    "{\"first_layer\": 0, \"n_layers\": 8, \"first_device\": 0, \"n_devices\": 2, "
    "\"time_s\": 0.010, \"p2p_s\": 0.001, \"ms_bytes\": 1073741824, "
    "\"act_bytes\": 1073741824, \"peak_bytes\": 2147483648, \"runs\": [{\"first_layer\": 0, "
    "\"count\": 8, \"strategy\": \"tp2\"}]},"
    "{\"first_layer\": 8, \"n_layers\": 8, \"first_device\": 2, \"n_devices\": 2, "
    "\"time_s\": 0.020, \"p2p_s\": 0.001, \"ms_bytes\": 1073741824, "
    "\"act_bytes\": 1073741824, \"peak_bytes\": 3221225472, \"runs\": [{\"first_layer\": 8, "
    "\"count\": 4, \"strategy\": \"dp2\"}, {\"first_layer\": 12, \"count\": 4, "
    "\"strategy\": \"sdp2+ckpt\"}]},"
    "{\"first_layer\": 16, \"n_layers\": 8, \"first_device\": 4, \"n_devices\": 2, "
    "\"time_s\": 0.005, \"p2p_s\": 0, \"ms_bytes\": 1414132, "
    "\"act_bytes\": 1073741824, \"peak_bytes\": 4294967296, \"runs\": [{\"first_layer\": 16, "
    "\"count\": 8, \"strategy\": \"tp2-dp1+zero1\"}]}]}}";

static void add_charted_plan(tsl_store_t *s)
{
    tsl_stored_plan_t p;
    tsl_err_t err = {0};
    memset(&p, 0, sizeof(p));
    snprintf(p.fingerprint, sizeof(p.fingerprint), "00000000000000aa");
    snprintf(p.model_name, sizeof(p.model_name), "GPT2-345M");
    p.n_devices = 6;
    p.global_batch = 64;
    p.created_unix = 1600000000; /* oldest: the listing's other rows stay first */
    p.request_json = (char *)"{}";
    p.result_json = (char *)STAGED_RESULT;
    p.cost_model_version = TSL_COST_MODEL_VERSION; /* as this tesseld stores it */
    if (tsl_store_put_plan(s, &p, &err) != 0)
        fprintf(stderr, "put: %s\n", err.msg);
}

/* A worker whose hostname and GPU model try to inject markup, with one report. */
/* When the worker above was seeded: the page renders its ages from this clock, so
 * that a second passing between seeding and rendering does not move "30 s ago". */
static int64_t seeded_at;

static void add_worker(tsl_store_t *s)
{
    tsl_reg_device_t dev = {
        .index = 0, .model = "H100<b>", .memory_bytes = 80ULL << 30, .sm_count = 132, .uuid = ""};
    tsl_reg_worker_t w = {.hostname = "node<i>1",
                          .driver_version = "550",
                          .cuda_version = "12.4",
                          .nccl_version = "2.21",
                          .version = "0.1.0",
                          .heartbeat_s = 10,
                          .n_devices = 1,
                          .devices = &dev};
    /* A GEMM rate and two block times whose shapes differ only in TP. */
    tsl_reg_measurement_t m[3] = {
        {.name = "gemm_fwd",
         .unit = "flop/s",
         .value = 7.5e14,
         .labels_json = "{}",
         .link_class = "",
         .per_device = true},
        {.name = "attention_bwd",
         .unit = "s",
         .value = 1.2e-3,
         .labels_json = "{\"a\":\"16\",\"f\":\"4096\",\"h\":\"1024\",\"mb\":\"4\","
                        "\"s\":\"2048\",\"tp\":\"1\"}",
         .link_class = "",
         .per_device = true},
        {.name = "attention_bwd",
         .unit = "s",
         .value = 6.5e-4,
         .labels_json = "{\"a\":\"16\",\"f\":\"4096g\",\"h\":\"1024\",\"mb\":\"4\","
                        "\"s\":\"2048\",\"tp\":\"2\"}",
         .link_class = "",
         .per_device = true}};
    tsl_reg_report_result_t res;
    tsl_err_t err = {0};
    bool known;
    int64_t now = seeded_at = (int64_t)time(NULL);
    if (tsl_registry_register(s, &w, now - 30, &known, &err) != 0 ||
        tsl_registry_report(s, w.worker_id, "r-1", now - 30, now - 30, m, 3, &res, &err) != 0)
        fprintf(stderr, "registry: %s\n", err.msg);
}

/* ---- trials and a calibration (store_trials.h, calibration.h) ---- */

/* The plan object a trial ran: one stage of 2 devices, 2 micro-batches, tp2. */
static const char TRIAL_PLAN[] =
    "{\"label\": \"tessel\", \"pp\": 1, \"global_batch\": 8, \"micro_batch\": 4, \"n_micro\": 2,"
    " \"iter_time_s\": 0.5, \"peak_bytes\": 4294967296, \"stages\": [{\"first_layer\": 0,"
    " \"n_layers\": 26, \"first_device\": 0, \"n_devices\": 2, \"time_s\": 0.25,"
    " \"time_nosync_s\": 0.2, \"p2p_s\": 0.01, \"runs\": [{\"first_layer\": 0, \"count\": 26,"
    " \"strategy\": \"tp2\"}]}]}";

/* A worker-supplied hostname and error text that try to break out of an attribute. */
#define HOSTILE_HOST "gpu\"><script>alert(1)</script>"
/* 56 bytes, then "caf\xC3\xA9": byte 60 falls inside the é, so the cut goes before it. */
#define HOSTILE_ERROR                                                                              \
    "rank 1 (worker w-b, host <img src=x onerror=alert(2)>): caf\xC3\xA9 executor failed: out "    \
    "of memory while allocating the activations of stage 0"

static void new_trial(tsl_trial_t *t, const char *fp, uint32_t index, int64_t created)
{
    memset(t, 0, sizeof(*t));
    tsl_trials_new_id("t-", t->trial_id);
    snprintf(t->batch_id, sizeof(t->batch_id), "b-%s", fp);
    t->batch_pos = index;
    snprintf(t->plan_fingerprint, sizeof(t->plan_fingerprint), "%s", fp);
    t->plan_index = index;
    snprintf(t->plan_label, sizeof(t->plan_label), index ? "alternative" : "tessel");
    t->world_size = t->n_ranks = 2;
    t->iterations = 5;
    t->timeout_s = 60;
    snprintf(t->comm, sizeof(t->comm), "tcp");
    snprintf(t->devops, sizeof(t->devops), "cuda"); /* only cuda trials calibrate */
    t->simulated = true;
    snprintf(t->gpu_model, sizeof(t->gpu_model), "sim <A100>");
    t->global_batch = 8;
    t->predicted_iter_time_s = 0.5;
    t->predicted_peak_bytes = 4ULL << 30;
    t->created_unix = created;
    t->plan_json = strdup(TRIAL_PLAN);
    t->ranks = calloc(2, sizeof(*t->ranks));
    for (uint32_t r = 0; r < 2; r++) {
        t->ranks[r].rank = r;
        snprintf(t->ranks[r].worker_id, sizeof(t->ranks[r].worker_id), "w-%u", r);
        snprintf(t->ranks[r].hostname, sizeof(t->ranks[r].hostname), "%s",
                 r ? HOSTILE_HOST : "node-a");
    }
}

/* Both ranks report 0.6 s (fwd 0.15, bwd 0.3, comm 0.075) and 5 GiB: done, chosen. */
static void run_done(tsl_store_t *s, const tsl_trial_t *t, tsl_err_t *err)
{
    tsl_trial_t got;
    bool all = false;
    tsl_trials_start(s, t->trial_id, (int64_t)time(NULL) - 20, err);
    for (uint32_t r = 0; r < 2; r++) {
        tsl_trial_rank_t res = {.rank = r, .iter_time_s = 0.6, .peak_bytes = 5ULL << 30};
        snprintf(res.phase_json, sizeof(res.phase_json),
                 "{\"fwd\": 0.15, \"bwd\": 0.3, \"comm\": 0.075}");
        tsl_trials_rank_result(s, t->trial_id, &res, (int64_t)time(NULL), &all, err);
    }
    if (tsl_trials_get(s, t->trial_id, &got, err) != 0)
        return;
    got.measured_iter_time_s = 0.6;
    got.measured_peak_bytes = 5ULL << 30;
    got.measured_samples_per_s = 8 / 0.6;
    got.time_error = (0.5 - 0.6) / 0.6;
    got.memory_error = (4.0 - 5.0) / 5.0;
    tsl_trials_finish_done(s, &got, (int64_t)time(NULL), err);
    tsl_trials_set_chosen(s, t->trial_id, err);
    tsl_trial_clear(&got);
}

/* On the charted plan: #0 done and chosen, #1 failed with HOSTILE_ERROR; on
 * 0123456789abcdef one running and one pending. Then the sim key's calibration. */
static char chosen_id[TSL_TRIAL_ID_LEN + 1];
static void add_trials(tsl_store_t *s)
{
    tsl_trial_t t[4];
    tsl_err_t err = {0};
    tsl_calib_t fit;
    int64_t now = (int64_t)time(NULL);
    new_trial(&t[0], "00000000000000aa", 0, now - 60);
    new_trial(&t[1], "00000000000000aa", 1, now - 60);
    new_trial(&t[2], "0123456789abcdef", 0, now - 10);
    new_trial(&t[3], "0123456789abcdef", 1, now - 10);
    if (tsl_trials_create(s, t, 2, &err) != 0 || tsl_trials_create(s, t + 2, 2, &err) != 0)
        fprintf(stderr, "trials: %s\n", err.msg);
    snprintf(chosen_id, sizeof(chosen_id), "%s", t[0].trial_id);
    run_done(s, &t[0], &err);
    tsl_trials_start(s, t[1].trial_id, now - 5, &err);
    tsl_trials_fail(s, t[1].trial_id, HOSTILE_ERROR, now, &err);
    tsl_trials_start(s, t[2].trial_id, now - 5, &err);
    if (tsl_calibration_refit(s, "sim <A100>", true, &fit, &err) != 0 || fit.n_samples != 1)
        fprintf(stderr, "calibration: %u samples: %s\n", fit.n_samples, err.msg);
    for (int i = 0; i < 4; i++)
        tsl_trial_clear(&t[i]);
}

/* The rows (<tr>, the header's included) of the table with this id. */
static int table_rows(const char *html, const char *id)
{
    char open[96];
    snprintf(open, sizeof(open), "<table id=\"%s\"", id);
    const char *a = strstr(html, open), *z = NULL;
    while (a != NULL && a[strlen(open)] != ' ' && a[strlen(open)] != '>')
        a = strstr(a + 1, open);
    z = a ? strstr(a, "</table>") : NULL;
    int n = 0;
    for (const char *p = a; p && z && (p = strstr(p, "<tr")) != NULL && p < z; p += 3)
        n++;
    return n;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; p && (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static tsl_store_t *make_store(void)
{
    char path[400];
    tsl_err_t err = {0};
    tsl_store_t *s = NULL;
    snprintf(path, sizeof(path), "%s/http.db", tmpdir);
    if (tsl_store_open(path, &s, &err) != 0) {
        fprintf(stderr, "store: %s\n", err.msg);
        return NULL;
    }
    tsl_stored_plan_t p;
    memset(&p, 0, sizeof(p));
    snprintf(p.fingerprint, sizeof(p.fingerprint), "0123456789abcdef");
    snprintf(p.model_name, sizeof(p.model_name), "<script>alert('x')</script>&\"");
    p.n_devices = 16;
    p.global_batch = 256;
    p.samples_per_s = 123.456;
    p.peak_bytes = 3ULL << 30;
    p.iter_time_s = 2;
    p.created_unix = 1700000000;
    p.request_json = (char *)"{}";
    p.result_json = (char *)"{}";
    p.cost_model_version = TSL_COST_MODEL_VERSION; /* as this tesseld stores it */
    if (tsl_store_put_plan(s, &p, &err) != 0)
        fprintf(stderr, "put: %s\n", err.msg);
    snprintf(p.fingerprint, sizeof(p.fingerprint), "fedcba9876543210");
    snprintf(p.model_name, sizeof(p.model_name), "GPT3-15B");
    tsl_store_put_plan(s, &p, &err);
    tsl_store_mark_stale(s, "fedcba9876543210", true, &err);
    add_charted_plan(s);
    add_worker(s);
    add_trials(s);
    return s;
}

static void test_pages(tsl_store_t *store)
{
    tsl_metrics_t *m = tsl_metrics_new();
    tsl_http_t *h = NULL;
    tsl_err_t err = {0};
    response_t r;
    tsl_metrics_request(m, "GetPlan", 0);
    CHECK(tsl_http_start("127.0.0.1:0", m, store, health, NULL, &h, &err) == 0, "start: %s",
          err.msg);
    int port = tsl_http_port(h);
    CHECK(port > 0 && port < 65536, "bound port %d", port);

    CHECK(fetch(port, "GET", "/healthz", &r) == 0 && r.status == 200 && strcmp(r.body, "ok\n") == 0,
          "healthz 200 ok (%d)", r.status);
    free(r.body);
    atomic_store(&serving, 0);
    CHECK(fetch(port, "GET", "/healthz", &r) == 0 && r.status == 503, "healthz 503 (%d)", r.status);
    free(r.body);
    atomic_store(&serving, 1);

    CHECK(fetch(port, "GET", "/metrics", &r) == 0 && r.status == 200, "metrics 200 (%d)", r.status);
    CHECK(has_header(&r, "Content-Type: text/plain; version=0.0.4"), "exposition content type:\n%s",
          r.head);
    CHECK(r.body && strstr(r.body, "\ntessel_plans_stored 3\n"), "plans gauge from the store:\n%s",
          r.body);
    CHECK(r.body && strstr(r.body, "tessel_requests_total{method=\"GetPlan\",code=\"OK\"} 1"),
          "counter");
    CHECK(r.body && strstr(r.body, "# TYPE tessel_search_seconds histogram"), "histogram");
    CHECK(r.body && strstr(r.body, "\ntessel_trials_pending 1\n") &&
              strstr(r.body, "\ntessel_trials_running 1\n"),
          "trial gauges from the store:\n%s", r.body);
    free(r.body);

    CHECK(fetch(port, "GET", "/", &r) == 0 && r.status == 200, "status page 200 (%d)", r.status);
    CHECK(has_header(&r, "Content-Type: text/html"), "html");
    CHECK(has_header(&r, "Content-Security-Policy: default-src 'none'"), "CSP");
    CHECK(r.body && strstr(r.body, "<script>") == NULL, "no raw <script> in the page");
    CHECK(r.body && strstr(r.body, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"),
          "model name escaped:\n%s", r.body);
    CHECK(r.body && strstr(r.body, "0123456789abcdef") && strstr(r.body, "GPT3-15B"),
          "plans listed");
    CHECK(r.body && strstr(r.body, ">16<") && strstr(r.body, ">256<") && strstr(r.body, ">123<") &&
              strstr(r.body, "3.00 GiB") && strstr(r.body, "2023-11-14 22:13:20") &&
              strstr(r.body, ">stale<") && strstr(r.body, ">fresh<"),
          "columns:\n%s", r.body);
    free(r.body);

    CHECK(fetch(port, "GET", "/nope", &r) == 0 && r.status == 404, "404 (%d)", r.status);
    free(r.body);
    CHECK(fetch(port, "GET", "/metrics/", &r) == 0 && r.status == 404, "exact paths (%d)",
          r.status);
    free(r.body);
    /* a doubled slash is another path, for every route: libevent parses "//metrics" as
     * an authority and an empty path, which served the status page */
    static const char *const doubled[] = {"//metrics",
                                          "//healthz",
                                          "//",
                                          "///",
                                          "//metrics/",
                                          "//plan/0123456789abcdef",
                                          "/plan//0123456789abcdef",
                                          "/plan/0123456789abcdef/",
                                          "//?x=1"};
    CHECK(fetch(port, "GET", "/plan/0123456789abcdef", &r) == 0 && r.status == 200,
          "the plan page those spell (%d)", r.status);
    free(r.body);
    for (size_t i = 0; i < sizeof doubled / sizeof doubled[0]; i++) {
        CHECK(fetch(port, "GET", doubled[i], &r) == 0 && r.status == 404, "%s: 404 (%d)",
              doubled[i], r.status);
        free(r.body);
    }
    CHECK(fetch(port, "GET", "/?x=1", &r) == 0 && r.status == 200 && r.body &&
              strstr(r.body, "<html"),
          "/ with a query: the status page (%d)", r.status);
    free(r.body);
    /* the absolute form a proxy sends (RFC 9112 3.2.2): its path is the route */
    CHECK(fetch(port, "GET", "http://127.0.0.1/metrics", &r) == 0 && r.status == 200 && r.body &&
              strstr(r.body, "tessel_plans_stored"),
          "absolute form: the metrics (%d)", r.status);
    free(r.body);
    CHECK(fetch(port, "GET", "http://127.0.0.1//metrics", &r) == 0 && r.status == 404,
          "absolute form, doubled slash: 404 (%d)", r.status);
    free(r.body);
    CHECK(fetch(port, "POST", "/metrics", &r) == 0 && r.status == 405, "POST 405 (%d)", r.status);
    CHECK(has_header(&r, "Allow: GET, HEAD"), "Allow header:\n%s", r.head);
    free(r.body);
    CHECK(fetch(port, "DELETE", "/", &r) == 0 && r.status == 405, "DELETE 405 (%d)", r.status);
    free(r.body);
    CHECK(fetch(port, "HEAD", "/healthz", &r) == 0 && r.status == 200 && r.body[0] == '\0',
          "HEAD: 200, no body (%d)", r.status);
    free(r.body);
    CHECK(fetch(port, "GET", "/healthz?probe=1", &r) == 0 && r.status == 200, "query ignored");
    free(r.body);

    /* A second server on the same port is refused with the address and reason. */
    char addr[64];
    tsl_http_t *h2 = NULL;
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
    CHECK(tsl_http_start(addr, m, store, health, NULL, &h2, &err) == -1 && strstr(err.msg, addr) &&
              strstr(err.msg, "in use"),
          "port taken: %s", err.msg);
    tsl_http_stop(h);
    CHECK(fetch(port, "GET", "/healthz", &r) == -1, "stopped: connection refused");
    tsl_metrics_free(m);
}

/* The page rendered without a socket: daemon figures, workers and profiles. */
static void test_page_render(tsl_store_t *store)
{
    tsl_metrics_t *m = tsl_metrics_new();
    struct evbuffer *b = evbuffer_new();
    tsl_metrics_set_queue(m, 7, 2);
    tsl_page_ctx_t c = {.store = store, .m = m, .healthy = true, .now = seeded_at};
    tsl_page_status(b, &c);
    evbuffer_add(b, "", 1);
    const char *html = (const char *)evbuffer_pullup(b, -1);
    CHECK(strstr(html, "<table id=\"daemon\" class=\"fixed kv\">") &&
              strstr(html, "<table id=\"workers\" class=\"fixed\">") &&
              strstr(html, "<section id=\"profiles\">") &&
              strstr(html, "<table id=\"plans\" class=\"fixed\">"),
          "the tables:\n%s", html);
    CHECK(strstr(html, ">" TSL_VERSION "<") != NULL, "version");
    CHECK(strstr(html, "7 queued, 2 running") != NULL, "queue depth");
    CHECK(strstr(html, "<th>uptime</th><td>") && !strstr(html, "uptime</th><td>unknown"), "uptime");
    CHECK(strstr(html, "node&lt;i&gt;1") && strstr(html, "H100&lt;b&gt;") && !strstr(html, "<i>") &&
              !strstr(html, "<b>"),
          "worker escaped");
    CHECK(strstr(html, ">online<") && strstr(html, "30 s ago"), "state and ages");
    CHECK(strstr(html, ">gemm_fwd<") && strstr(html, ">750 TFLOP/s<") && strstr(html, ">measured<"),
          "profile row, its rate in TFLOP/s");
    CHECK(strstr(html, "<a href=\"/plan/00000000000000aa\">") != NULL, "plan linked");
    evbuffer_free(b);
    tsl_metrics_free(m);
}

static char *render_status(tsl_store_t *store)
{
    tsl_metrics_t *m = tsl_metrics_new();
    struct evbuffer *b = evbuffer_new();
    tsl_page_ctx_t c = {.store = store, .m = m, .healthy = true, .now = (int64_t)time(NULL)};
    tsl_page_status(b, &c);
    evbuffer_add(b, "", 1);
    char *html = strdup((const char *)evbuffer_pullup(b, -1));
    evbuffer_free(b);
    tsl_metrics_free(m);
    return html;
}

/* "/": the Trials and Calibration sections, newest first, predicted next to
 * measured with the errors, the chosen marker, hostile hostnames and error
 * texts escaped (the error cut short, whole in its title). */
static void test_trials_render(tsl_store_t *store)
{
    char *html = render_status(store);
    CHECK(table_rows(html, "trials") == 5, "a header and four trials (%d):\n%s",
          table_rows(html, "trials"), html);
    CHECK(strstr(html, "4 shown of 4 stored (newest first, at most 50)") != NULL, "bound said");
    CHECK(
        strstr(html, "<a href=\"/plan/00000000000000aa#trials\">00000000000000aa</a> #0 tessel") &&
            strstr(html, "#1 alternative"),
        "trials link to their plan's trials");
    const char *running = strstr(html, ">running<"), *done = strstr(html, ">done<");
    CHECK(running && done && running < done, "newest first");
    CHECK(strstr(html, ">pending<") && strstr(html, ">failed<"), "every status");
    CHECK(count(html, "<tr class=\"chosen\">") == 1 && strstr(html, "<td>chosen</td>"),
          "one chosen trial, marked");
    CHECK(strstr(html, "<td class=\"n\">500 ms</td><td class=\"n\">600 ms</td><td "
                       "class=\"n\">-16.7%</td><td class=\"n\">4.00 GiB</td><td "
                       "class=\"n\">5.00 GiB</td><td class=\"n\">-20.0%</td>"),
          "predicted, measured and the errors of the done trial");
    CHECK(strstr(html, "<td class=\"n\">2/2</td>") && strstr(html, "<td class=\"n\">0/2</td>"),
          "ranks done of the world");
    CHECK(strstr(html, "sim &lt;A100&gt; (simulated)") != NULL, "hardware key escaped");
    CHECK(strstr(html, "node-a, gpu&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;") != NULL,
          "hostnames listed, escaped");
    CHECK(strstr(html, "<script") == NULL && strstr(html, "<img") == NULL,
          "no markup from the store");
    CHECK(strstr(html, "<td class=\"reason\" title=\"rank 1 (worker w-b, host &lt;img src=x "
                       "onerror=alert(2)&gt;): caf\xC3\xA9 executor failed: out of memory while "
                       "allocating the activations of stage 0\">rank 1 (worker w-b, host "
                       "&lt;img src=x onerror=alert(2)&gt;): caf\xE2\x80\xA6</td>"),
          "reason cut before the character byte 60 falls in, whole in the title:\n%s", html);
    CHECK(count(html, "activations of stage 0") == 2,
          "the whole reason only in titles (the row's and the alert's)");
    CHECK(table_rows(html, "calibration") == 2, "one calibrated key");
    CHECK(strstr(html, "<td>sim &lt;A100&gt;</td><td>simulated</td><td class=\"n\">1</td>") != NULL,
          "the key, its source and trials fitted");
    CHECK(strstr(html, "tokens &lt; 4096: \xC3\x97") && strstr(html, "tokens \xE2\x89\xA5 65536"),
          "compute factor per token range");
    CHECK(strstr(html, "16.7% \xE2\x86\x92 ") != NULL, "iteration error before (the trial's) "
                                                       "and after");
    free(html);
}

/* A trial whose plan is stale now (a profile changed, another cost model): the store
 * reads it so (tsl_trial_t.plan_stale, from the plan's row) and the status page marks
 * its row; fresh again, unmarked. */
static void test_trials_stale(tsl_store_t *store)
{
    tsl_err_t err = {0};
    char *html = render_status(store);
    CHECK(count(html, " (stale)</td>") == 0, "no trial of a stale plan yet");
    free(html);
    CHECK(tsl_store_mark_stale(store, "0123456789abcdef", true, &err) == 0, "mark: %s", err.msg);
    html = render_status(store);
    CHECK(count(html, " (stale)</td>") == 4,
          "its two trials marked, in the recent trials and in the trials table:\n%s", html);
    free(html);
    tsl_trial_t t;
    CHECK(tsl_trials_get(store, chosen_id, &t, &err) == 0 && !t.plan_stale,
          "another plan's trial: fresh");
    tsl_trial_clear(&t);
    CHECK(tsl_store_mark_stale(store, "0123456789abcdef", false, &err) == 0, "unmark: %s", err.msg);
    html = render_status(store);
    CHECK(count(html, " (stale)</td>") == 0, "fresh again: unmarked");
    free(html);
}

/* /plan/FP: its own trials only, the chosen one named. */
static void test_plan_trials(tsl_store_t *store)
{
    tsl_page_ctx_t c = {.store = store, .healthy = true, .now = (int64_t)time(NULL)};
    struct evbuffer *b = evbuffer_new();
    CHECK(tsl_page_plan(b, &c, "00000000000000aa") == 0, "plan page");
    evbuffer_add(b, "", 1);
    const char *html = (const char *)evbuffer_pullup(b, -1);
    CHECK(strstr(html, "<h2 id=\"trials\">") && table_rows(html, "plan-trials") == 3,
          "its two trials:\n%s", html);
    CHECK(strstr(html, ">pending<") == NULL && strstr(html, ">running<") == NULL,
          "not the other plan's");
    char want[128];
    snprintf(want, sizeof(want),
             "<tr class=\"chosen\"><td class=\"id\" title=\"%s\">%.10s\xE2\x80\xA6<", chosen_id,
             chosen_id);
    CHECK(strstr(html, want) != NULL, "the chosen one marked, its id cut, whole in the title");
    snprintf(want, sizeof(want), "now this plan's answer: <b>%s</b>", chosen_id);
    CHECK(strstr(html, want) != NULL, "the chosen one named");
    CHECK(strstr(html, "<a href=\"/plan/") == NULL, "no link to itself");
    CHECK(count(html, "<svg id=\"trial-chart\"") == 1 && count(html, "<g class=\"trial\">") == 1,
          "a chart of the one done trial");
    CHECK(strstr(html, ">#0 chosen<title>") &&
              strstr(html, "width=\"333.3\" height=\"11\"><title>predicted 500 ms") &&
              strstr(html, "width=\"400.0\" height=\"11\"><title>measured 600 ms"),
          "predicted and measured bars, scaled to the larger:\n%s", html);
    evbuffer_free(b);
    b = evbuffer_new();
    CHECK(tsl_page_plan(b, &c, "fedcba9876543210") == 0, "a plan without trials");
    evbuffer_add(b, "", 1);
    CHECK(strstr((const char *)evbuffer_pullup(b, -1), "Not run for real yet") != NULL, "says so");
    evbuffer_free(b);
}

/* /plan/FP: one bar group per stage, bars scaled to the slowest stage and the
 * largest of budget and peaks, the budget line; unknown and malformed → 404. */
static void test_plan_page(tsl_store_t *store)
{
    tsl_metrics_t *m = tsl_metrics_new();
    tsl_http_t *h = NULL;
    tsl_err_t err = {0};
    response_t r;
    CHECK(tsl_http_start("127.0.0.1:0", m, store, NULL, NULL, &h, &err) == 0, "start: %s", err.msg);
    int port = tsl_http_port(h);
    CHECK(fetch(port, "GET", "/plan/00000000000000aa", &r) == 0 && r.status == 200,
          "plan page 200 (%d)", r.status);
    CHECK(has_header(&r, "Content-Security-Policy: default-src 'none'"), "CSP on the plan page");
    CHECK(r.body && count(r.body, "<svg id=\"chart\"") == 1 &&
              count(r.body, "<g class=\"stage\"") == 3,
          "one chart, three stage groups:\n%s", r.body);
    CHECK(r.body && count(r.body, "<rect class=\"time\"") == 3 &&
              count(r.body, "<rect class=\"mem\"") == 3,
          "a time and a memory bar per stage");
    CHECK(r.body && strstr(r.body, "y=\"50\" width=\"240.0\" height=\"18\"><title>20.0 ms"),
          "slowest stage at full scale:\n%s", r.body);
    CHECK(r.body && strstr(r.body, "width=\"120.0\" height=\"18\"><title>4.00 GiB") &&
              strstr(r.body, "<line class=\"budget\" x1=\"640.0\""),
          "memory against the budget");
    CHECK(r.body && table_rows(r.body, "stages") == 4, "stage table");
    free(r.body);
    CHECK(fetch(port, "GET", "/plan/0123456789abcdef", &r) == 0 && r.status == 200 &&
              strstr(r.body, "no stages to chart"),
          "plan without stages (%d)", r.status);
    free(r.body);
    /* the fingerprint in capitals is the same plan, as GetPlan and tesselctl take it */
    CHECK(fetch(port, "GET", "/plan/00000000000000AA", &r) == 0 && r.status == 200 && r.body &&
              strstr(r.body, "00000000000000aa"),
          "plan page of the fingerprint in capitals (%d)", r.status);
    free(r.body);
    CHECK(fetch(port, "GET", "/plan/ffffffffffffffff", &r) == 0 && r.status == 404, "unknown 404");
    free(r.body);
    CHECK(fetch(port, "GET", "/plan/%3Cx%3E", &r) == 0 && r.status == 404, "malformed 404");
    free(r.body);
    /* letters or digits that are not 16 hex digits: no plan's either (the store
     * refused them and the page answered 500) */
    CHECK(fetch(port, "GET", "/plan/zzz", &r) == 0 && r.status == 404, "/plan/zzz: %d", r.status);
    free(r.body);
    CHECK(fetch(port, "GET", "/plan/00000000000000a", &r) == 0 && r.status == 404, "15 digits: %d",
          r.status);
    free(r.body);
    CHECK(fetch(port, "POST", "/plan/00000000000000aa", &r) == 0 && r.status == 405, "POST 405");
    free(r.body);
    tsl_http_stop(h);
    tsl_metrics_free(m);
}

static void test_no_store_and_errors(void)
{
    tsl_metrics_t *m = tsl_metrics_new();
    tsl_http_t *h = NULL;
    tsl_err_t err = {0};
    response_t r;
    CHECK(tsl_http_start("127.0.0.1:0", m, NULL, NULL, NULL, &h, &err) == 0, "start: %s", err.msg);
    int port = tsl_http_port(h);
    CHECK(fetch(port, "GET", "/", &r) == 0 && r.status == 200 && strstr(r.body, "No store"),
          "page without a store");
    free(r.body);
    CHECK(fetch(port, "GET", "/healthz", &r) == 0 && r.status == 200, "no health fn → serving");
    free(r.body);
    tsl_http_stop(h);
    tsl_http_stop(NULL);
    /* Start and stop at once: the stop must not be lost before the loop runs. */
    for (int i = 0; i < 20; i++) {
        CHECK(tsl_http_start("127.0.0.1:0", m, NULL, NULL, NULL, &h, &err) == 0, "%s", err.msg);
        tsl_http_stop(h);
    }
    CHECK(tsl_http_start("9464", m, NULL, NULL, NULL, &h, &err) == -1 &&
              strstr(err.msg, "HOST:PORT"),
          "bad address: %s", err.msg);
    CHECK(tsl_http_start("256.1.1.1:80", m, NULL, NULL, NULL, &h, &err) == -1 &&
              strstr(err.msg, "256.1.1.1"),
          "unresolvable: %s", err.msg);
    CHECK(tsl_http_start("127.0.0.1:0", NULL, NULL, NULL, NULL, &h, &err) == -1,
          "metrics required");
    CHECK(h == NULL, "no handle on failure");
    tsl_metrics_free(m);
}

/* ---- readable units, the alert rule, the overview, profiles and strategies ---- */

static int same(const char *got, const char *want)
{
    if (strcmp(got, want) == 0)
        return 1;
    fprintf(stderr, "  got \"%s\", want \"%s\"\n", got, want);
    return 0;
}

static void test_units(void)
{
    char s[32];
    tsl_html_bytes(s, sizeof(s), 0.001317 * 1024 * 1024 * 1024);
    CHECK(same(s, "1.35 MiB"), "0.001317 GiB reads 1.35 MiB");
    tsl_html_bytes(s, sizeof(s), 3.0 * (1 << 30));
    CHECK(same(s, "3.00 GiB"), "GiB, 3 significant figures");
    tsl_html_bytes(s, sizeof(s), 512);
    CHECK(same(s, "512 B"), "bytes");
    tsl_html_bytes(s, sizeof(s), 1536);
    CHECK(same(s, "1.50 KiB"), "KiB");
    tsl_html_bytes(s, sizeof(s), 80.0 * (1 << 30));
    CHECK(same(s, "80.0 GiB"), "80 GiB");
    tsl_html_bytes(s, sizeof(s), 0);
    CHECK(same(s, "0 B"), "zero bytes");
    tsl_html_seconds(s, sizeof(s), 0.02);
    CHECK(same(s, "20.0 ms"), "ms");
    tsl_html_seconds(s, sizeof(s), 1.5e-5);
    CHECK(same(s, "15.0 \xC2\xB5s"), "µs");
    tsl_html_seconds(s, sizeof(s), 4.2e-8);
    CHECK(same(s, "42.0 ns"), "ns");
    tsl_html_seconds(s, sizeof(s), 2);
    CHECK(same(s, "2.00 s"), "s");
    tsl_html_seconds(s, sizeof(s), 0);
    CHECK(same(s, "0 s"), "zero seconds");
    tsl_html_seconds(s, sizeof(s), 5400);
    CHECK(same(s, "90.0 min"), "minutes");
    tsl_html_seconds(s, sizeof(s), 3 * 3600);
    CHECK(same(s, "3.00 h"), "hours");
    tsl_html_seconds(s, sizeof(s), 3 * 86400);
    CHECK(same(s, "3.00 d"), "days");
    tsl_html_si(s, sizeof(s), 3.12e14, "FLOP/s");
    CHECK(same(s, "312 TFLOP/s"), "TFLOP/s");
    tsl_html_value(s, sizeof(s), 2.45e10, "bytes/s");
    CHECK(same(s, "24.5 GB/s"), "bandwidth, decimal");
    tsl_html_value(s, sizeof(s), 7.5e14, "flop/s");
    CHECK(same(s, "750 TFLOP/s"), "a profile's flop/s");
    tsl_html_value(s, sizeof(s), 1.2e-3, "s");
    CHECK(same(s, "1.20 ms"), "a profile's seconds");
    tsl_html_value(s, sizeof(s), 1414132, "bytes");
    CHECK(same(s, "1.35 MiB"), "a profile's bytes");
    tsl_html_value(s, sizeof(s), 1.07, "ratio");
    CHECK(same(s, "1.07"), "a ratio");
    tsl_html_sig3(s, sizeof(s), 48676);
    CHECK(same(s, "48676"), "no exponent");
    tsl_html_sig3(s, sizeof(s), 123.456);
    CHECK(same(s, "123"), "three figures");
    tsl_html_sig3(s, sizeof(s), 0.5);
    CHECK(same(s, "0.5"), "below one");
}

static void fit(tsl_calib_t *c, double compute, double comm, double mem, double loo)
{
    tsl_calib_identity(c);
    c->n_samples = 4;
    for (uint32_t i = 0; i < TSL_CALIB_RANGES; i++)
        c->range_samples[i] = i == 0 ? 4 : 0;
    c->compute_scale[0] = compute;
    c->comm_scale = comm;
    c->mem_scale = mem;
    c->mae_before = 0.3;
    c->mae_after = loo;
    c->mem_mae_before = c->mem_mae_after = 0.02;
}

static void test_alert_rules(void)
{
    tsl_calib_t c;
    char why[320];
    fit(&c, 48676, 1, 1, 0.05);
    CHECK(tsl_page_calib_alert(&c, why, sizeof(why)) == 1, "x48,676 raises an alert");
    CHECK(strstr(why, "compute factor \xC3\x97"
                      "48676 (tokens < ") &&
              strstr(why, "outside [0.5, 2]") && strstr(why, "the planner refuses it"),
          "says which factor, its value, the bounds, and that it is refused: %s", why);
    fit(&c, 1.1, 0.9, 1.05, 0.05);
    CHECK(tsl_page_calib_alert(&c, why, sizeof(why)) == 0, "a fit near 1: no alert (%s)", why);
    fit(&c, 0.45, 1, 1, 0.05);
    CHECK(tsl_page_calib_alert(&c, why, sizeof(why)) == 1 &&
              strstr(why, "\xC3\x97"
                          "0.45") &&
              strstr(why, "priced with it"),
          "x0.45: an alert, applied all the same: %s", why);
    fit(&c, 1, 2.5, 1, 0.05);
    CHECK(tsl_page_calib_alert(&c, why, sizeof(why)) == 1 && strstr(why, "comm factor"),
          "comm factor 2.5: %s", why);
    fit(&c, 1, 1, 0.3, 0.05);
    CHECK(tsl_page_calib_alert(&c, why, sizeof(why)) == 1 && strstr(why, "memory factor"),
          "memory factor 0.3: %s", why);
    fit(&c, 1.2, 1, 1, 0.4);
    CHECK(tsl_page_calib_alert(&c, why, sizeof(why)) == 1 &&
              strstr(why, "leave-one-out iteration-time error 40.0% is above 25%"),
          "a large leave-one-out error: %s", why);
    fit(&c, 1.2, 1, 1, 0.05);
    c.compute_scale[2] = 100; /* a range no trial fell in: not fitted, not judged */
    CHECK(tsl_page_calib_alert(&c, why, sizeof(why)) == 0, "unfitted ranges ignored: %s", why);
    fit(&c, 48676, 1, 1, 0.05);
    c.n_samples = 0;
    CHECK(tsl_page_calib_alert(&c, why, sizeof(why)) == 0, "no trials fitted: no alert");
}

/* Every <table ...> has the class "fixed" (table-layout: fixed; width: 100%). */
static int tables_fixed(const char *html)
{
    int n = 0;
    for (const char *p = html; (p = strstr(p, "<table")) != NULL; p += 6) {
        const char *end = strchr(p, '>');
        char tag[256];
        snprintf(tag, sizeof(tag), "%.*s", end ? (int)(end - p) : 0, p);
        if (strstr(tag, "class=\"fixed") == NULL) {
            fprintf(stderr, "  not fixed: %s\n", tag);
            return -1;
        }
        n++;
    }
    return n;
}

/* "/": the overview first (workers, queue, alerts, recent plans and trials,
 * linked), then the sections, profiles last, one collapsed <details> per GPU
 * model, rows labelled with their shapes; every table fixed; no "0.0x GiB". */
static void test_overview(tsl_store_t *store)
{
    char *html = render_status(store);
    const char *ov = strstr(html, "<section id=\"overview\">");
    const char *alerts = strstr(html, "<ul id=\"alerts\">");
    const char *prof = strstr(html, "<section id=\"profiles\">");
    const char *trials = strstr(html, "<section id=\"trials-section\">");
    CHECK(ov && alerts && prof && trials && ov < alerts && alerts < trials && trials < prof,
          "overview, its alerts, then trials, profiles last");
    CHECK(strstr(html, "<td id=\"workers-online\">1 online, 0 offline, 0 stopped</td>") != NULL,
          "workers by state");
    CHECK(strstr(html, "0 queued, 0 running") != NULL, "the queue");
    CHECK(table_rows(html, "recent-plans") == 4 &&
              strstr(html, "<a href=\"/plan/0123456789abcdef\">0123456789abcdef</a>"),
          "recent plans, linked (%d rows)", table_rows(html, "recent-plans"));
    CHECK(table_rows(html, "recent-trials") == 5 &&
              strstr(html, "<a href=\"/plan/00000000000000aa#trials\">"),
          "recent trials, linked to their plan (%d rows)", table_rows(html, "recent-trials"));
    const char *ul_end = alerts ? strstr(alerts, "</ul>") : NULL;
    char *list = ul_end ? strndup(alerts, (size_t)(ul_end - alerts)) : strdup("");
    CHECK(count(list, "<li class=\"alert\" data-kind=\"trial\">") == 1 &&
              strstr(list, "of plan <a href=\"/plan/00000000000000aa#trials\">00000000000000aa</a> "
                           "#1 failed: <span title=\"rank 1 (worker w-b, host &lt;img"),
          "the failed trial alerted, its plan linked, reason escaped:\n%s", list);
    CHECK(count(list, "<li class=\"alert\" data-kind=\"stale\">") == 1 &&
              strstr(list, "1 cached plan is stale") &&
              strstr(list, "<a href=\"/plan/fedcba9876543210\">"),
          "the stale plan alerted, linked:\n%s", list);
    CHECK(strstr(list, "data-kind=\"worker\"") == NULL && strstr(list, "<img") == NULL,
          "no worker offline; nothing unescaped");
    free(list);
    CHECK(count(html, "<details class=\"profile\"") == 1 && strstr(html, "<details open") == NULL &&
              strstr(html, "<summary><strong>H100&lt;b&gt;</strong> (measured): 3 figures"),
          "one collapsed <details> for the one GPU model, its figures counted:\n%s", html);
    CHECK(strstr(html, "<td>attention_bwd</td><td class=\"shape\">tokens/micro-batch 8192 \xC2\xB7 "
                       "TP 1 \xC2\xB7 hidden 1024 \xC2\xB7 seq 2048 \xC2\xB7 micro-batch 4 "
                       "\xC2\xB7 heads 16 \xC2\xB7 ffn 4096</td><td></td><td "
                       "class=\"n\">1.20 ms</td>") &&
              strstr(html, "TP 2 \xC2\xB7 hidden 1024 \xC2\xB7 seq 2048 \xC2\xB7 micro-batch 4 "
                           "\xC2\xB7 heads 16 \xC2\xB7 ffn 4096 (gated)</td><td></td><td "
                           "class=\"n\">650 \xC2\xB5s</td>"),
          "each block time labelled with its shape, in readable units");
    CHECK(tables_fixed(html) >= 8, "every table fixed-layout (%d)", tables_fixed(html));
    CHECK(strstr(html, "table.fixed{table-layout:fixed;width:100%}") &&
              strstr(html, "overflow-wrap:anywhere"),
          "the CSS that keeps them in the window");
    CHECK(strstr(html, "0.00 GiB") == NULL && strstr(html, "<script") == NULL, "no 0.00 GiB");
    free(html);
}

/* /plan/FP: per stage its layers, devices, the strategies of its runs in words,
 * time, p2p and memory in readable units. */
static void test_plan_strategies(tsl_store_t *store)
{
    char s[128];
    tsl_page_strategy(s, sizeof(s), "tp2-dp4+ckpt");
    CHECK(same(s, "TP 2 \xC3\x97 DP 4, recompute"), "tp2-dp4+ckpt in words");
    tsl_page_strategy(s, sizeof(s), "sdp8");
    CHECK(same(s, "SDP (ZeRO-3) 8"), "sdp8");
    tsl_page_strategy(s, sizeof(s), "single");
    CHECK(same(s, "one GPU"), "single");
    tsl_page_strategy(s, sizeof(s), "tp4-dp2+sp+zero1+selckpt");
    CHECK(same(s, "TP 4 \xC3\x97 DP 2, sequence parallel, ZeRO-1, selective recompute"),
          "switches");
    tsl_page_strategy(s, sizeof(s), "xx3+new");
    CHECK(same(s, "xx3, new"), "unknown tokens stand");

    tsl_page_ctx_t c = {.store = store, .healthy = true, .now = (int64_t)time(NULL)};
    struct evbuffer *b = evbuffer_new();
    CHECK(tsl_page_plan(b, &c, "00000000000000aa") == 0, "plan page");
    evbuffer_add(b, "", 1);
    const char *html = (const char *)evbuffer_pullup(b, -1);
    CHECK(count(html, "<tr class=\"stage\">") == 3, "a row per stage");
    CHECK(strstr(html, "<tr class=\"stage\"><td class=\"n\">1</td><td>8\xE2\x80\x93"
                       "15 (8)</td>"
                       "<td>2\xE2\x80\x93"
                       "3 (2)</td><td class=\"strategy\"><div><code>dp2</code> "
                       "layers 8\xE2\x80\x93"
                       "11: DP 2</div><div><code>sdp2+ckpt</code> layers "
                       "12\xE2\x80\x93"
                       "15: SDP (ZeRO-3) 2, recompute</div></td>"
                       "<td class=\"n\">20.0 ms</td><td class=\"n\">1.00 ms</td>"
                       "<td class=\"n mem\">1.00 GiB</td><td class=\"n mem\">1.00 GiB</td>"
                       "<td class=\"n mem\">3.00 GiB</td></tr>"),
          "stage 1: layers, devices, two runs' strategies, time, p2p, memory:\n%s", html);
    CHECK(strstr(html, "<td class=\"n mem\">1.35 MiB</td>") && strstr(html, "0.001") == NULL,
          "1.35 MiB of model states, not 0.001317 GiB");
    CHECK(strstr(html, "<code>tp2-dp1+zero1</code> layers 16\xE2\x80\x93"
                       "23: TP 2 \xC3\x97 DP 1, "
                       "ZeRO-1"),
          "a switch in words");
    CHECK(strstr(html, "3 pipeline stages, micro-batch 4 \xC3\x97 16") != NULL, "pp and micro");
    CHECK(tables_fixed(html) == 2, "both tables fixed-layout");
    evbuffer_free(b);
}

/* A skipped plan of a batch (one the executor cannot run): its row says "skipped" with
 * the reason in the failure column, and it is no failure: neither red nor an alert. */
static void test_trials_skipped(tsl_store_t *store)
{
    tsl_trial_t t;
    tsl_err_t err = {0};
    char *html = render_status(store);
    int alerts = count(html, "data-kind=\"trial\"");
    free(html);
    new_trial(&t, "00000000000000aa", 2, (int64_t)time(NULL));
    snprintf(t.status, sizeof(t.status), "skipped");
    snprintf(t.error, sizeof(t.error),
             "plan 2: plan: schedule zbv: the executor runs 1F1B and interleaved 1F1B; the "
             "executor cannot try it");
    CHECK(tsl_trials_create(store, &t, 1, &err) == 0, "create: %s", err.msg);
    html = render_status(store);
    const char *cell = strstr(html, "<td>skipped</td>"), *row = cell;
    while (row && row > html && strncmp(row, "<tr", 3) != 0)
        row--;
    CHECK(cell && strncmp(row, "<tr>", 4) == 0, "a skipped row, not red:\n%s", html);
    CHECK(strstr(html, "<td class=\"reason\" title=\"skipped: plan 2: plan: schedule zbv: the "
                       "executor runs 1F1B and interleaved 1F1B; the executor cannot try it\">"
                       "skipped: plan 2: plan: schedule zbv: the executor runs 1F1B \xE2\x80\xA6"),
          "its reason in the failure column, whole in the title");
    CHECK(count(html, "data-kind=\"trial\"") == alerts, "no alert for it (%d, was %d)",
          count(html, "data-kind=\"trial\""), alerts);
    free(html);
    tsl_trial_clear(&t);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof(tmpdir), "%s/tsl-http-XXXXXX", base && *base ? base : "/tmp");
    if (mkdtemp(tmpdir) == NULL)
        SKIP_ALL("cannot create a temporary directory");
    int probe = socket(AF_INET, SOCK_STREAM, 0);
    if (probe < 0)
        SKIP_ALL("no IPv4 sockets here");
    close(probe);
    tsl_store_t *store = make_store();
    CHECK(store != NULL, "store");
    if (store != NULL) {
        test_pages(store);
        test_page_render(store);
        test_plan_page(store);
        test_trials_render(store);
        test_trials_stale(store);
        test_plan_trials(store);
        test_overview(store);
        test_plan_strategies(store);
        test_trials_skipped(store);
        tsl_store_close(store);
    }
    test_no_store_and_errors();
    test_units();
    test_alert_rules();
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return CHECK_DONE();
}

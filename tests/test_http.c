/*
 * test_http.c — the HTTP side door on a free port: /healthz (200 and 503),
 * /metrics (content type, parsable, plans gauge refreshed from the store), / (the
 * status page lists a stored plan with its <script> name escaped), 404, 405, HEAD,
 * and start errors. The client is a raw socket written here.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "http.h"

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
    if (tsl_store_put_plan(s, &p, &err) != 0)
        fprintf(stderr, "put: %s\n", err.msg);
    snprintf(p.fingerprint, sizeof(p.fingerprint), "fedcba9876543210");
    snprintf(p.model_name, sizeof(p.model_name), "GPT3-15B");
    tsl_store_put_plan(s, &p, &err);
    tsl_store_mark_stale(s, "fedcba9876543210", true, &err);
    return s;
}

static void test_pages(tsl_store_t *store)
{
    tsl_metrics_t *m = tsl_metrics_new();
    tsl_http_t *h = NULL;
    tsl_err_t err = {0};
    response_t r;
    tsl_metrics_request(m, "GetPlan", 0);
    CHECK(tsl_http_start("127.0.0.1:0", m, store, health, NULL, &h, &err) == 0, "start: %s", err.msg);
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
    CHECK(has_header(&r, "Content-Type: text/plain; version=0.0.4"), "exposition content type:\n%s", r.head);
    CHECK(r.body && strstr(r.body, "\ntessel_plans_stored 2\n"), "plans gauge from the store:\n%s", r.body);
    CHECK(r.body && strstr(r.body, "tessel_requests_total{method=\"GetPlan\",code=\"OK\"} 1"), "counter");
    CHECK(r.body && strstr(r.body, "# TYPE tessel_search_seconds histogram"), "histogram");
    free(r.body);

    CHECK(fetch(port, "GET", "/", &r) == 0 && r.status == 200, "status page 200 (%d)", r.status);
    CHECK(has_header(&r, "Content-Type: text/html"), "html");
    CHECK(has_header(&r, "Content-Security-Policy: default-src 'none'"), "CSP");
    CHECK(r.body && strstr(r.body, "<script>") == NULL, "no raw <script> in the page");
    CHECK(r.body && strstr(r.body, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"),
          "model name escaped:\n%s", r.body);
    CHECK(r.body && strstr(r.body, "0123456789abcdef") && strstr(r.body, "GPT3-15B"), "plans listed");
    CHECK(r.body && strstr(r.body, ">16<") && strstr(r.body, ">256<") && strstr(r.body, "123.46") &&
              strstr(r.body, "3.00 GiB") && strstr(r.body, "2023-11-14 22:13:20") &&
              strstr(r.body, ">stale<") && strstr(r.body, ">fresh<"), "columns:\n%s", r.body);
    free(r.body);

    CHECK(fetch(port, "GET", "/nope", &r) == 0 && r.status == 404, "404 (%d)", r.status);
    free(r.body);
    CHECK(fetch(port, "GET", "/metrics/", &r) == 0 && r.status == 404, "exact paths (%d)", r.status);
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
    CHECK(tsl_http_start(addr, m, store, health, NULL, &h2, &err) == -1 &&
              strstr(err.msg, addr) && strstr(err.msg, "in use"), "port taken: %s", err.msg);
    tsl_http_stop(h);
    CHECK(fetch(port, "GET", "/healthz", &r) == -1, "stopped: connection refused");
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
    CHECK(tsl_http_start("9464", m, NULL, NULL, NULL, &h, &err) == -1 && strstr(err.msg, "HOST:PORT"),
          "bad address: %s", err.msg);
    CHECK(tsl_http_start("256.1.1.1:80", m, NULL, NULL, NULL, &h, &err) == -1 &&
              strstr(err.msg, "256.1.1.1"), "unresolvable: %s", err.msg);
    CHECK(tsl_http_start("127.0.0.1:0", NULL, NULL, NULL, NULL, &h, &err) == -1, "metrics required");
    CHECK(h == NULL, "no handle on failure");
    tsl_metrics_free(m);
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
        tsl_store_close(store);
    }
    test_no_store_and_errors();
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return CHECK_DONE();
}

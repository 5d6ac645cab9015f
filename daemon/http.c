/*
 * http.c — /healthz, /metrics and the status page over libevent's evhttp, on a
 * thread of its own (see http.h).
 *
 * We open the listening socket ourselves (rather than evhttp_bind_socket) to get
 * a real errno for the error message and the bound port for port 0. Stopping
 * goes through an event activated from the stopping thread, not a bare
 * event_base_loopbreak(): libevent clears the break flag when a loop starts, so a
 * stop that raced ahead of the thread's first dispatch would be lost.
 *
 * Request deadline: libevent's timeout (HTTP_TIMEOUT_S) is one of inactivity,
 * so a client sending its request a byte a second, or taking the answer a byte
 * a second, would hold its connection (and a descriptor) for hours. Each
 * connection's bufferevent is made here (evhttp_set_bevcb) and tracked: a
 * connection whose next request has not arrived whole within HTTP_TIMEOUT_S of
 * its start or of its previous request is shut down (shutdown(2): libevent then
 * sees the end of the stream and frees it as usual). A tracked bufferevent holds
 * a reference of ours, dropped at the next sweep once evhttp has freed it
 * (libevent clears a freed bufferevent's callbacks).
 */
#include "http.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http_page.h"
#include "log.h"
#include "ratelimit.h"
#include "store_trials.h"

#define HTTP_TIMEOUT_S         30
#define HTTP_MAX_HEADERS_BYTES 16384
#define HTTP_MAX_BODY_BYTES    65536
#define ACCEPT_BACKOFF_MS      200 /* after a failed accept (EMFILE, ...), pause this long */
#define ACCEPT_LOG_INTERVAL_S  10
#define SWEEP_INTERVAL_MS      500 /* how often request deadlines are checked */

typedef struct http_conn {
    struct http_conn *next;
    struct bufferevent *bev;  /* a reference of ours */
    struct timespec deadline; /* CLOCK_MONOTONIC: the next request must have arrived */
    bool cut;
} http_conn_t;

struct tsl_http {
    struct event_base *base;
    struct evhttp *http;
    struct event *stop_ev;
    struct event *resume_ev; /* re-enables the listener after a backoff */
    struct evconnlistener *listener;
    struct event *sweep_ev;
    http_conn_t *conns;
    pthread_t thread;
    bool running;
    int port;
    tsl_metrics_t *m;
    tsl_store_t *store;
    int (*health)(void *ud);
    void *ud;
};

static pthread_once_t evthread_once = PTHREAD_ONCE_INIT;
static int evthread_rc;

static void evthread_init(void)
{
    evthread_rc = evthread_use_pthreads();
}

/* ---- listening socket ------------------------------------------------------------------ */

/* "host:port" or "[v6]:port" → host and port strings. */
static int split_addr(const char *addr, char *host, size_t hcap, char *port, size_t pcap)
{
    const char *colon = strrchr(addr, ':');
    if (colon == NULL || colon == addr || colon[1] == '\0' || strlen(colon + 1) >= pcap)
        return -1;
    const char *h = addr;
    size_t hlen = (size_t)(colon - addr);
    if (h[0] == '[') {
        if (hlen < 3 || h[hlen - 1] != ']')
            return -1;
        h++;
        hlen -= 2;
    }
    if (hlen >= hcap)
        return -1;
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    snprintf(port, pcap, "%s", colon + 1);
    return 0;
}

static int bound_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
        return -1;
    if (ss.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    if (ss.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return -1;
}

/* Logs where the page listens, with the port the kernel picked for ":0", and
 * warns when that is reachable from other hosts: the page has no
 * authentication and shows workers, plans and trials. */
static void log_bound(int fd, const char *addr)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    char host[INET6_ADDRSTRLEN] = "?";
    bool loopback = false;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0 && ss.ss_family == AF_INET) {
        const struct in_addr *a = &((struct sockaddr_in *)&ss)->sin_addr;
        inet_ntop(AF_INET, a, host, sizeof host);
        loopback = (ntohl(a->s_addr) >> 24) == 127;
    } else if (ss.ss_family == AF_INET6) {
        const struct in6_addr *a = &((struct sockaddr_in6 *)&ss)->sin6_addr;
        inet_ntop(AF_INET6, a, host, sizeof host);
        loopback = IN6_IS_ADDR_LOOPBACK(a);
    }
    tsl_log_info("http: status page, /metrics and /healthz on %s%s%s:%d (%s)",
                 ss.ss_family == AF_INET6 ? "[" : "", host, ss.ss_family == AF_INET6 ? "]" : "",
                 bound_port(fd), addr);
    if (!loopback)
        tsl_log_warnx("http: %s is not a loopback address: the status page and /metrics are "
                      "unauthenticated and readable by anyone who can reach it; bind "
                      "127.0.0.1 or put an authenticating proxy in front",
                      addr);
}

static int listen_on(const char *addr, tsl_err_t *err)
{
    char host[256], port[8];
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int fd = -1, one = 1;
    if (split_addr(addr, host, sizeof(host), port, sizeof(port)) != 0)
        return tsl_err_set(err, "http: '%s' is not HOST:PORT (e.g. 127.0.0.1:9464)", addr);
    int gai = getaddrinfo(host, port, &hints, &res);
    if (gai != 0)
        return tsl_err_set(err, "http: cannot resolve '%s': %s", addr, gai_strerror(gai));
    fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
        tsl_err_set(err, "http: cannot listen on %s: %s", addr, strerror(errno));
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

/* ---- request deadlines ---------------------------------------------------------------------- */

static struct timespec deadline_from_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += HTTP_TIMEOUT_S;
    return t;
}

static struct bufferevent *new_conn(struct event_base *base, void *arg)
{
    tsl_http_t *h = arg;
    struct bufferevent *bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    http_conn_t *c = bev ? malloc(sizeof(*c)) : NULL;
    if (c == NULL)
        return bev; /* untracked: still under the inactivity timeout */
    bufferevent_incref(bev);
    *c = (http_conn_t){.next = h->conns, .bev = bev, .deadline = deadline_from_now()};
    h->conns = c;
    return bev;
}

/* A request arrived whole: the connection's next one has its own time. */
static void conn_request_done(tsl_http_t *h, struct evhttp_request *req)
{
    struct evhttp_connection *evcon = evhttp_request_get_connection(req);
    struct bufferevent *bev = evcon ? evhttp_connection_get_bufferevent(evcon) : NULL;
    for (http_conn_t *c = h->conns; c != NULL && bev != NULL; c = c->next)
        if (c->bev == bev) {
            c->deadline = deadline_from_now();
            break;
        }
}

static bool conn_freed(struct bufferevent *bev)
{
    bufferevent_event_cb event_cb = NULL;
    bufferevent_getcb(bev, NULL, NULL, &event_cb, NULL);
    return event_cb == NULL;
}

static void conn_cut(http_conn_t *c)
{
    static tsl_ratelimit_t rl;
    uint64_t skipped;
    evutil_socket_t fd = bufferevent_getfd(c->bev);
    c->cut = true;
    if (fd >= 0)
        shutdown(fd, SHUT_RDWR);
    if (tsl_ratelimit_ok(&rl, ACCEPT_LOG_INTERVAL_S, &skipped))
        tsl_log_warnx("http: closed a connection whose request or answer took over %d s [%llu "
                      "more in the last %d s not logged]",
                      HTTP_TIMEOUT_S, (unsigned long long)skipped, ACCEPT_LOG_INTERVAL_S);
}

static void on_sweep(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    tsl_http_t *h = arg;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    for (http_conn_t **p = &h->conns; *p != NULL;) {
        http_conn_t *c = *p;
        if (conn_freed(c->bev)) {
            *p = c->next;
            bufferevent_decref(c->bev);
            free(c);
            continue;
        }
        if (!c->cut && (now.tv_sec > c->deadline.tv_sec ||
                        (now.tv_sec == c->deadline.tv_sec && now.tv_nsec >= c->deadline.tv_nsec)))
            conn_cut(c);
        p = &c->next;
    }
}

/* After evhttp_free (every connection freed): our references go. */
static void conns_free(tsl_http_t *h)
{
    while (h->conns != NULL) {
        http_conn_t *c = h->conns;
        h->conns = c->next;
        bufferevent_decref(c->bev);
        free(c);
    }
}

/* ---- responses --------------------------------------------------------------------------- */

static void reply(struct evhttp_request *req, int code, const char *reason, const char *type,
                  struct evbuffer *body)
{
    struct evkeyvalq *oh = evhttp_request_get_output_headers(req);
    evhttp_add_header(oh, "Content-Type", type);
    evhttp_add_header(oh, "Cache-Control", "no-store");
    evhttp_add_header(oh, "X-Content-Type-Options", "nosniff");
    /* evhttp sends a body even for HEAD; answer with the length alone. */
    if (body != NULL && evhttp_request_get_command(req) == EVHTTP_REQ_HEAD) {
        char len[32];
        snprintf(len, sizeof(len), "%zu", evbuffer_get_length(body));
        evhttp_add_header(oh, "Content-Length", len);
        evbuffer_drain(body, evbuffer_get_length(body));
    }
    evhttp_send_reply(req, code, reason, body);
}

static void reply_text(struct evhttp_request *req, int code, const char *reason, const char *text)
{
    struct evbuffer *b = evbuffer_new();
    if (b != NULL)
        evbuffer_add(b, text, strlen(text));
    reply(req, code, reason, "text/plain; charset=utf-8", b);
    if (b != NULL)
        evbuffer_free(b);
}

static bool is_healthy(const tsl_http_t *h)
{
    return h->health == NULL || h->health(h->ud) == 1;
}

static void serve_healthz(tsl_http_t *h, struct evhttp_request *req)
{
    if (is_healthy(h))
        reply_text(req, 200, "OK", "ok\n");
    else
        reply_text(req, 503, "Service Unavailable", "not serving\n");
}

static void serve_metrics(tsl_http_t *h, struct evhttp_request *req)
{
    if (h->store != NULL) {
        int64_t n = tsl_store_count_plans(h->store), pending = 0, running = 0;
        tsl_err_t err = {0};
        if (n >= 0)
            tsl_metrics_set_plans(h->m, n);
        /* Two indexed COUNTs on the HTTP thread's own connection (trials_by_status). */
        if (tsl_trials_count(h->store, "pending", &pending, &err) == 0 &&
            tsl_trials_count(h->store, "running", &running, &err) == 0)
            tsl_metrics_set_trials(h->m, pending, running);
    }
    char *text = tsl_metrics_render(h->m);
    struct evbuffer *b = evbuffer_new();
    if (text == NULL || b == NULL) {
        reply_text(req, 500, "Internal Server Error", "out of memory\n");
        goto out;
    }
    evbuffer_add(b, text, strlen(text));
    reply(req, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", b);
out:
    free(text);
    if (b != NULL)
        evbuffer_free(b);
}

/* ---- the status page (http_page.c) ---------------------------------------------------------- */

static void reply_page(struct evhttp_request *req, int code, const char *reason, struct evbuffer *b)
{
    /* The page carries no script and loads nothing: say so, as a second line of
     * defence behind the escaping. */
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Security-Policy",
                      "default-src 'none'; style-src 'unsafe-inline'");
    reply(req, code, reason, "text/html; charset=utf-8", b);
}

static tsl_page_ctx_t page_ctx(tsl_http_t *h)
{
    return (tsl_page_ctx_t){
        .store = h->store, .m = h->m, .healthy = is_healthy(h), .now = (int64_t)time(NULL)};
}

static void serve_status(tsl_http_t *h, struct evhttp_request *req)
{
    struct evbuffer *b = evbuffer_new();
    if (b == NULL) {
        reply_text(req, 500, "Internal Server Error", "out of memory\n");
        return;
    }
    tsl_page_ctx_t c = page_ctx(h);
    tsl_page_status(b, &c);
    reply_page(req, 200, "OK", b);
    evbuffer_free(b);
}

/* /plan/FINGERPRINT: one plan's stages and chart. */
static void serve_plan(tsl_http_t *h, struct evhttp_request *req, const char *fp)
{
    struct evbuffer *b = evbuffer_new();
    if (b == NULL) {
        reply_text(req, 500, "Internal Server Error", "out of memory\n");
        return;
    }
    tsl_page_ctx_t c = page_ctx(h);
    int rc = tsl_page_plan(b, &c, fp);
    if (rc == 1)
        reply_text(req, 404, "Not Found", "no such plan\n");
    else if (rc == 0)
        reply_page(req, 200, "OK", b);
    else
        reply_page(req, 500, "Internal Server Error", b);
    evbuffer_free(b);
}

/* ---- routing --------------------------------------------------------------------------------- */

static const struct {
    const char *path;
    void (*serve)(tsl_http_t *h, struct evhttp_request *req);
} ROUTES[] = {
    {"/healthz", serve_healthz},
    {"/metrics", serve_metrics},
    {"/", serve_status},
};

/* The request's path, without its query, into buf (cap bytes); NULL when it is none
 * of ours. A request-target that begins with '/' is its path as sent: libevent's URI
 * parser reads "//metrics" as an authority ("metrics") and an empty path, which
 * served the status page. So every route is matched exactly, "//metrics" and
 * "/metrics/" are 404 as "/nope" is; a client that sends the absolute form
 * (http://host/metrics, RFC 9112 3.2.2) gets the parsed path. */
static const char *request_path(struct evhttp_request *req, char *buf, size_t cap)
{
    const char *target = evhttp_request_get_uri(req);
    if (target != NULL && target[0] == '/') {
        size_t n = strcspn(target, "?#");
        if (n >= cap)
            return NULL;
        memcpy(buf, target, n);
        buf[n] = '\0';
        return buf;
    }
    const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
    const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
    return path == NULL || path[0] == '\0' ? "/" : path;
}

static void on_request(struct evhttp_request *req, void *arg)
{
    tsl_http_t *h = arg;
    conn_request_done(h, req);
    char buf[256];
    const char *path = request_path(req, buf, sizeof buf);
    enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
    if (path == NULL) {
        reply_text(req, 404, "Not Found", "not found\n");
        return;
    }
    if (strncmp(path, "/plan/", 6) == 0) {
        if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
            evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "GET, HEAD");
            reply_text(req, 405, "Method Not Allowed", "method not allowed\n");
            return;
        }
        serve_plan(h, req, path + 6);
        return;
    }
    for (size_t i = 0; i < sizeof(ROUTES) / sizeof(ROUTES[0]); i++) {
        if (strcmp(path, ROUTES[i].path) != 0)
            continue;
        if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
            evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "GET, HEAD");
            reply_text(req, 405, "Method Not Allowed", "method not allowed\n");
            return;
        }
        ROUTES[i].serve(h, req);
        return;
    }
    reply_text(req, 404, "Not Found", "not found\n");
}

/* ---- accept backoff ------------------------------------------------------------------------ */

/* libevent retries a failing accept() (EMFILE) at once and forever while the
 * socket stays readable: a whole core and a log line per try. Instead: pause
 * the listener, resume after ACCEPT_BACKOFF_MS, log once per interval. */
/* The listener's callback argument is evhttp's (struct evhttp *), so the
 * servers are found by it here. */
#define MAX_SERVERS 16
static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static tsl_http_t *registry[MAX_SERVERS];

static void registry_set(tsl_http_t *h, bool add)
{
    pthread_mutex_lock(&registry_mu);
    for (size_t i = 0; i < MAX_SERVERS; i++) {
        if (add ? registry[i] == NULL : registry[i] == h) {
            registry[i] = add ? h : NULL;
            break;
        }
    }
    pthread_mutex_unlock(&registry_mu);
}

static tsl_http_t *registry_find(const struct evhttp *http)
{
    tsl_http_t *h = NULL;
    pthread_mutex_lock(&registry_mu);
    for (size_t i = 0; i < MAX_SERVERS && !h; i++)
        if (registry[i] && registry[i]->http == http)
            h = registry[i];
    pthread_mutex_unlock(&registry_mu);
    return h;
}

static void on_accept_error(struct evconnlistener *lev, void *arg)
{
    static tsl_ratelimit_t rl;
    tsl_http_t *h = registry_find(arg);
    int e = EVUTIL_SOCKET_ERROR();
    uint64_t skipped;
    struct timeval tv = {0, ACCEPT_BACKOFF_MS * 1000};
    tsl_metrics_refused(h ? h->m : NULL, TSL_REFUSED_HTTP_ACCEPT);
    evconnlistener_disable(lev);
    if (h)
        evtimer_add(h->resume_ev, &tv);
    else
        evconnlistener_enable(lev); /* not ours: cannot happen; never leave it off */
    if (tsl_ratelimit_ok(&rl, ACCEPT_LOG_INTERVAL_S, &skipped))
        tsl_log_warnx("http: accept failed: %s; pausing accepts for %d ms [%llu more in the "
                      "last %d s not logged]",
                      evutil_socket_error_to_string(e), ACCEPT_BACKOFF_MS,
                      (unsigned long long)skipped, ACCEPT_LOG_INTERVAL_S);
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    evconnlistener_enable(((tsl_http_t *)arg)->listener);
}

/* ---- thread and lifecycle ------------------------------------------------------------------ */

static void on_stop(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    event_base_loopbreak(((tsl_http_t *)arg)->base);
}

static void *http_main(void *arg)
{
    tsl_http_t *h = arg;
    if (event_base_dispatch(h->base) < 0)
        tsl_log_error("http: event loop failed");
    return NULL;
}

static void http_free(tsl_http_t *h)
{
    registry_set(h, false);
    if (h->http != NULL)
        evhttp_free(h->http);
    conns_free(h);
    if (h->sweep_ev != NULL)
        event_free(h->sweep_ev);
    if (h->stop_ev != NULL)
        event_free(h->stop_ev);
    if (h->resume_ev != NULL)
        event_free(h->resume_ev);
    if (h->base != NULL)
        event_base_free(h->base);
    free(h);
}

/* evhttp answers methods outside its allowed set with its own 405 and no Allow
 * header; allowing all of them routes every request through on_request. */
static void configure(struct evhttp *http)
{
    evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
                                         EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS |
                                         EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
    evhttp_set_timeout(http, HTTP_TIMEOUT_S);
    evhttp_set_max_headers_size(http, HTTP_MAX_HEADERS_BYTES);
    evhttp_set_max_body_size(http, HTTP_MAX_BODY_BYTES);
}

static int start_thread(tsl_http_t *h, tsl_err_t *err)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&h->thread, NULL, http_main, h);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        return tsl_err_set(err, "http: cannot start its thread: %s", strerror(rc));
    h->running = true;
    return 0;
}

int tsl_http_start(const char *addr, tsl_metrics_t *m, tsl_store_t *store, int (*health)(void *ud),
                   void *ud, tsl_http_t **out, tsl_err_t *err)
{
    *out = NULL;
    if (addr == NULL || addr[0] == '\0' || m == NULL)
        return tsl_err_set(err, "http: %s", m == NULL ? "no metrics given" : "no address given");
    pthread_once(&evthread_once, evthread_init);
    if (evthread_rc != 0)
        return tsl_err_set(err, "http: libevent has no pthreads support");
    tsl_http_t *h = calloc(1, sizeof(*h));
    if (h == NULL)
        return tsl_err_set(err, "http: out of memory");
    *h = (tsl_http_t){.m = m, .store = store, .health = health, .ud = ud};
    int fd = listen_on(addr, err);
    if (fd < 0)
        goto fail;
    h->port = bound_port(fd);
    log_bound(fd, addr);
    h->base = event_base_new();
    h->http = h->base ? evhttp_new(h->base) : NULL;
    h->stop_ev = h->base ? event_new(h->base, -1, 0, on_stop, h) : NULL;
    h->resume_ev = h->base ? evtimer_new(h->base, on_resume, h) : NULL;
    h->sweep_ev = h->base ? event_new(h->base, -1, EV_PERSIST, on_sweep, h) : NULL;
    struct timeval sweep = {0, SWEEP_INTERVAL_MS * 1000};
    if (h->http == NULL || h->stop_ev == NULL || h->resume_ev == NULL || h->sweep_ev == NULL ||
        event_add(h->sweep_ev, &sweep) != 0) {
        tsl_err_set(err, "http: cannot set up the event loop (out of memory)");
        close(fd);
        goto fail;
    }
    configure(h->http);
    evhttp_set_bevcb(h->http, new_conn, h);
    evhttp_set_gencb(h->http, on_request, h);
    struct evhttp_bound_socket *bound = evhttp_accept_socket_with_handle(h->http, fd);
    if (bound == NULL) { /* owns fd on success */
        tsl_err_set(err, "http: cannot accept on %s", addr);
        close(fd);
        goto fail;
    }
    h->listener = evhttp_bound_socket_get_listener(bound);
    registry_set(h, true);
    evconnlistener_set_error_cb(h->listener, on_accept_error);
    if (start_thread(h, err) != 0)
        goto fail;
    *out = h;
    return 0;
fail:
    http_free(h);
    return -1;
}

int tsl_http_port(const tsl_http_t *h)
{
    return h ? h->port : -1;
}

void tsl_http_stop(tsl_http_t *h)
{
    if (h == NULL)
        return;
    if (h->running) {
        event_active(h->stop_ev, EV_READ, 0);
        pthread_join(h->thread, NULL);
    }
    http_free(h);
}

/*
 * fuzz_http.c — tesseld's HTTP side door (daemon/http.h) as any client can reach
 * it: each input is sent as the raw bytes of one connection to a server started
 * once in this process (127.0.0.1, a free port, a fresh store holding one plan),
 * then the write side is shut and the answer read to the end. The answer must be
 * empty (the server dropped a request it could not parse) or an HTTP status line
 * (libevent answers in the request's version, HTTP/0.1 included); a crash, a sanitizer report or an answer that never ends (5 s) is a bug.
 * The server is the one piece of state kept between inputs, as in tesseld; it
 * is stopped at exit so that leak checking sees everything freed.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz.h"
#include "http.h"

static struct {
    tsl_http_t *http;
    tsl_metrics_t *metrics;
    tsl_store_t *store;
    char dir[64];
} srv;

static void stop(void)
{
    char path[128];
    tsl_http_stop(srv.http);
    tsl_store_close(srv.store);
    tsl_metrics_free(srv.metrics);
    const char *files[] = {"fuzz.db", "fuzz.db-wal", "fuzz.db-shm"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", srv.dir, files[i]);
        unlink(path);
    }
    rmdir(srv.dir);
}

/* One stored plan, so that /plan/FP and the page have a row to render. */
static void seed_plan(void)
{
    tsl_stored_plan_t p;
    tsl_err_t err = {0};
    memset(&p, 0, sizeof p);
    snprintf(p.fingerprint, sizeof p.fingerprint, "0123456789abcdef");
    snprintf(p.model_name, sizeof p.model_name, "GPT2-345M");
    p.n_devices = 8;
    p.global_batch = 32;
    p.iter_time_s = 0.5;
    p.samples_per_s = 64;
    p.request_json = (char *)"{\"model_preset\":\"GPT2-345M\"}";
    p.result_json = (char *)"{\"plan\":{\"pp\":1,\"stages\":[{\"first_layer\":0,\"n_layers\":26,"
                            "\"n_devices\":8,\"time_s\":0.1,\"peak_bytes\":1000}]}}";
    if (tsl_store_put_plan(srv.store, &p, &err) != 0)
        fprintf(stderr, "fuzz_http: seed plan: %s\n", err.msg);
}

static int start(void)
{
    char path[128];
    tsl_err_t err = {0};
    snprintf(srv.dir, sizeof srv.dir, "/tmp/tsl-fuzz-http-XXXXXX");
    if (mkdtemp(srv.dir) == NULL)
        return -1;
    snprintf(path, sizeof path, "%s/fuzz.db", srv.dir);
    srv.metrics = tsl_metrics_new();
    if (tsl_store_open(path, &srv.store, &err) != 0 ||
        tsl_http_start("127.0.0.1:0", srv.metrics, srv.store, NULL, NULL, &srv.http, &err) != 0) {
        fprintf(stderr, "fuzz_http: cannot start: %s\n", err.msg);
        return -1;
    }
    seed_plan();
    atexit(stop);
    return 0;
}

/* Sends data on a fresh connection, shuts the write side, reads the answer's
 * first bytes into head (the rest is drained). 0, or -1 when the answer did
 * not end within 5 s. */
static int exchange(const uint8_t *data, size_t size, char *head, size_t cap)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)tsl_http_port(srv.http))};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0), rc = 0;
    size_t got = 0;
    head[0] = '\0';
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (fd >= 0)
            close(fd);
        return 0; /* the machine, not the input */
    }
    for (size_t off = 0; off < size;) {
        ssize_t n = send(fd, data + off, size - off, MSG_NOSIGNAL);
        if (n <= 0)
            break; /* the server closed early: it may answer still */
        off += (size_t)n;
    }
    shutdown(fd, SHUT_WR);
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 5000) <= 0) {
            rc = -1;
            break;
        }
        char buf[4096];
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n && got + 1 < cap; i++)
            head[got++] = buf[i];
        head[got] = '\0';
    }
    close(fd);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        if (start() != 0)
            abort();
        ready = 1;
    }
    char head[16];
    if (size > 1 << 16)
        size = 1 << 16;
    if (exchange(data, size, head, sizeof head) != 0) {
        fprintf(stderr, "fuzz_http: no end to the answer within 5 s\n");
        abort();
    }
    if (head[0] && strncmp(head, "HTTP/", 5) != 0) {
        fprintf(stderr, "fuzz_http: the answer starts '%s', not a status line\n", head);
        abort();
    }
    return 0;
}

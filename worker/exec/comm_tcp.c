/*
 * comm_tcp.c — host comm ops between processes over TCP (for tests and CPU runs; never
 * a substitute for NCCL on GPUs).
 *
 * Rendezvous by address: rank r listens on port + r. Each rank connects to every lower
 * rank (retrying until the timeout, since peers start in any order) and accepts every
 * higher one; the connecting side first sends its rank. One reader thread per peer
 * drains frames {tag, length, payload} into that peer's inbox, so a send never waits
 * for the receiver: two neighbours sending at once cannot deadlock.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "comm_host.h"

typedef struct tcp_peer {
    int fd;
    pthread_t reader;
    bool reader_started;
    pthread_mutex_t wmu;
    struct tcp_transport *t;
    int rank;
} tcp_peer_t;

typedef struct tcp_transport {
    tsl_host_comm_t *h;
    tcp_peer_t *peers; /* [size], peers[rank].fd = -1 */
} tcp_transport_t;

typedef struct frame_hdr {
    uint32_t tag;
    uint32_t pad;
    uint64_t bytes;
} frame_hdr_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int io_full(int fd, void *buf, size_t n, bool wr)
{
    unsigned char *p = buf;
    while (n) {
        ssize_t k = wr ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static void *reader_main(void *arg)
{
    tcp_peer_t *p = arg;
    tsl_inbox_t *ib = &p->t->h->inbox[p->rank];
    for (;;) {
        frame_hdr_t hd;
        if (io_full(p->fd, &hd, sizeof(hd), false))
            break;
        tsl_msg_t *m = tsl_msg_new((int)hd.tag, NULL, hd.bytes);
        if (!m) {
            tsl_inbox_close(ib, "out of memory for a message");
            return NULL;
        }
        if (io_full(p->fd, m->data, hd.bytes, false)) {
            free(m);
            break;
        }
        tsl_inbox_push(ib, m);
    }
    tsl_inbox_close(ib, "the peer closed the connection (exited or failed)");
    return NULL;
}

static int tcp_send(tsl_host_comm_t *h, int peer, int tag, const void *data, size_t bytes,
                    tsl_err_t *err)
{
    tcp_transport_t *t = h->transport;
    if (peer < 0 || peer >= h->size || peer == h->rank)
        return tsl_err_set(err, "tcp: rank %d cannot send to rank %d", h->rank, peer);
    tcp_peer_t *p = &t->peers[peer];
    frame_hdr_t hd = {(uint32_t)tag, 0, bytes};
    pthread_mutex_lock(&p->wmu);
    int rc = io_full(p->fd, &hd, sizeof(hd), true) || io_full(p->fd, (void *)data, bytes, true);
    pthread_mutex_unlock(&p->wmu);
    if (rc)
        return tsl_err_setc(err, TSL_E_UNAVAILABLE, "tcp: rank %d: send to rank %d: %s", h->rank,
                            peer, strerror(errno));
    return 0;
}

static int resolve(const char *host, int port, struct sockaddr_in *sa, tsl_err_t *err)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
    char ps[16];
    snprintf(ps, sizeof(ps), "%d", port);
    int gai = getaddrinfo(host, ps, &hints, &res);
    if (gai)
        return tsl_err_set(err, "tcp: host '%s': %s", host, gai_strerror(gai));
    memcpy(sa, res->ai_addr, sizeof(*sa));
    freeaddrinfo(res);
    return 0;
}

static int listen_on(const char *host, int port, tsl_err_t *err)
{
    struct sockaddr_in sa;
    if (resolve(host, port, &sa, err))
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (fd < 0)
        return tsl_err_setc(err, TSL_E_UNAVAILABLE, "tcp: socket: %s", strerror(errno));
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 64)) {
        tsl_err_setc(err, TSL_E_UNAVAILABLE, "tcp: listen on %s:%d: %s", host, port,
                     strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static void set_nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Connects to host:port, retrying until deadline (the peer may not listen yet). */
static int connect_retry(const char *host, int port, double deadline, tsl_err_t *err)
{
    struct sockaddr_in sa;
    if (resolve(host, port, &sa, err))
        return -1;
    for (;;) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return tsl_err_setc(err, TSL_E_UNAVAILABLE, "tcp: socket: %s", strerror(errno));
        if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
            set_nodelay(fd);
            return fd;
        }
        int e = errno;
        close(fd);
        if (now_s() > deadline)
            return tsl_err_setc(err, TSL_E_UNAVAILABLE, "tcp: connect to %s:%d: %s", host, port,
                                strerror(e));
        usleep(20000);
    }
}

static int accept_peers(tcp_transport_t *t, int lfd, double deadline, tsl_err_t *err)
{
    tsl_host_comm_t *h = t->h;
    for (int got = 0; got < h->size - 1 - h->rank; got++) {
        struct pollfd pfd = {lfd, POLLIN, 0};
        int ms = (int)((deadline - now_s()) * 1000);
        if (ms <= 0 || poll(&pfd, 1, ms) <= 0)
            return tsl_err_setc(err, TSL_E_UNAVAILABLE,
                                "tcp: rank %d: %d higher ranks did not connect in time", h->rank,
                                h->size - 1 - h->rank - got);
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        int32_t who = -1;
        if (fd < 0 || io_full(fd, &who, sizeof(who), false) || who <= h->rank || who >= h->size ||
            t->peers[who].fd >= 0) {
            if (fd >= 0)
                close(fd);
            return tsl_err_setc(err, TSL_E_UNAVAILABLE, "tcp: rank %d: bad hello from a peer",
                                h->rank);
        }
        set_nodelay(fd);
        t->peers[who].fd = fd;
    }
    return 0;
}

static void tcp_free(tsl_host_comm_t *h)
{
    tcp_transport_t *t = h->transport;
    if (!t)
        return;
    for (int r = 0; r < h->size; r++)
        if (t->peers[r].fd >= 0)
            shutdown(t->peers[r].fd, SHUT_RDWR);
    for (int r = 0; r < h->size; r++) {
        if (t->peers[r].reader_started)
            pthread_join(t->peers[r].reader, NULL);
        if (t->peers[r].fd >= 0)
            close(t->peers[r].fd);
        pthread_mutex_destroy(&t->peers[r].wmu);
    }
    for (int r = 0; r < h->size; r++)
        tsl_inbox_destroy(&h->inbox[r]);
    free(h->inbox);
    free(t->peers);
    free(t);
    h->transport = NULL;
}

static int tcp_connect_all(tcp_transport_t *t, const char *host, int port, double timeout_s,
                           tsl_err_t *err)
{
    tsl_host_comm_t *h = t->h;
    double deadline = now_s() + timeout_s;
    int lfd = listen_on(host, port + h->rank, err), rc = -1;
    if (lfd < 0)
        return -1;
    for (int r = 0; r < h->rank; r++) {
        int fd = connect_retry(host, port + r, deadline, err);
        int32_t me = h->rank;
        if (fd < 0)
            goto out;
        t->peers[r].fd = fd;
        if (io_full(fd, &me, sizeof(me), true)) {
            tsl_err_setc(err, TSL_E_UNAVAILABLE, "tcp: hello to rank %d failed", r);
            goto out;
        }
    }
    if (accept_peers(t, lfd, deadline, err))
        goto out;
    for (int r = 0; r < h->size; r++) {
        if (r == h->rank)
            continue;
        if (pthread_create(&t->peers[r].reader, NULL, reader_main, &t->peers[r])) {
            tsl_err_setc(err, TSL_E_UNAVAILABLE, "tcp: cannot start a reader thread");
            goto out;
        }
        t->peers[r].reader_started = true;
    }
    rc = 0;
out:
    close(lfd);
    return rc;
}

int tsl_comm_tcp_create(const char *host, int port, int rank, int size, double timeout_s,
                        tsl_commops_t **out, tsl_err_t *err)
{
    if (size < 1 || rank < 0 || rank >= size || port <= 0 || port + size > 65536)
        return tsl_err_set(err, "tcp: rank %d of %d on port %d is out of range", rank, size, port);
    tsl_commops_t *c = calloc(1, sizeof(*c));
    tsl_host_comm_t *h = calloc(1, sizeof(*h));
    tcp_transport_t *t = calloc(1, sizeof(*t));
    if (h)
        h->inbox = calloc((size_t)size, sizeof(tsl_inbox_t));
    if (t)
        t->peers = calloc((size_t)size, sizeof(tcp_peer_t));
    if (!c || !h || !t || !h->inbox || !t->peers) {
        if (h)
            free(h->inbox);
        if (t)
            free(t->peers);
        free(c), free(h), free(t);
        return tsl_err_setc(err, TSL_E_NOMEM, "tcp: out of memory");
    }
    h->rank = rank;
    h->size = size;
    h->send = tcp_send;
    h->transport_free = tcp_free;
    h->transport = t;
    t->h = h;
    for (int r = 0; r < size; r++) {
        tsl_inbox_init(&h->inbox[r]);
        t->peers[r] = (tcp_peer_t){.fd = -1, .t = t, .rank = r};
        pthread_mutex_init(&t->peers[r].wmu, NULL);
    }
    tsl_host_comm_ops(c, "tcp", h);
    if (tcp_connect_all(t, host, port, timeout_s, err)) {
        c->destroy(c);
        return -1;
    }
    *out = c;
    return 0;
}

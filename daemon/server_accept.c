/*
 * server_accept.c — tesseld's own accept loop for every listener: the unix
 * socket, and TCP with TLS or (insecure_tcp = true) without; see server_int.h.
 *
 * Why not gRPC's listener: in gRPC 1.51 a single failed accept4() (EMFILE when
 * the process is out of descriptors) ends its listener for good — the daemon
 * then looks alive and accepts nothing until restarted. Here one thread poll()s
 * the listening sockets and hands each accepted socket to gRPC:
 *  - plaintext ones with grpc_server_add_channel_from_fd() (which takes
 *    insecure credentials only);
 *  - TLS ones to gRPC's external-connection acceptor (TSL_TLS_ACCEPTOR), which
 *    runs the server's handshakers — the TLS handshake with the server
 *    credentials, its timeout, the resource quota — as its own listener would.
 *    gRPC's C API hands out that acceptor only as a C++ object
 *    (grpc_core::TcpServerFdHandler, stable since gRPC 1.25); hand_tls() calls
 *    its one method through the Itanium C++ ABI's vtable.
 * The thread:
 *  - keeps the top FD_RESERVE descriptors of RLIMIT_NOFILE for the store, the
 *    HTTP thread and gRPC: a connection that lands there is closed at once;
 *  - on EMFILE, ENFILE, ENOBUFS or ENOMEM backs off BACKOFF_MS and tries again;
 *  - marks the server saturated (health NOT_SERVING) while either happens and
 *    for SATURATED_HOLD_MS after, or while the descriptor table is filled up to
 *    the reserve, and logs it at most once per LOG_INTERVAL_S.
 * Idle connections are closed by gRPC after idle_connection_s (server.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grpc/grpc_posix.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/string_util.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "ratelimit.h"
#include "server_int.h"

#define BACKOFF_MS        100
#define SATURATED_HOLD_MS 1000
#define LOG_INTERVAL_S    10
#define ACCEPTS_PER_WAKE  64
#define LISTEN_BACKLOG    128

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Saturated: a refusal within the hold time, or (a level, not an event) the
 * lowest free descriptor is already inside the reserve — descriptors are
 * handed out lowest first, so that is how full the table is. */
bool tsl_accept_saturated(const tsl_server_t *s)
{
    if (now_ms() < atomic_load(&s->saturated_until_ms))
        return true;
    if (!s->accept_started)
        return false;
    int probe = fcntl(s->wake[0], F_DUPFD_CLOEXEC, 0);
    if (probe < 0)
        return true;
    close(probe);
    return probe >= s->fd_limit - s->fd_reserve;
}

/* Raises the soft descriptor limit to the hard one (capped): nothing here uses
 * select(), and more headroom means fewer refusals. Returns the soft limit. */
static long fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 1024;
    rlim_t want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
    if (rl.rlim_cur < want) {
        rl.rlim_cur = want;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            getrlimit(RLIMIT_NOFILE, &rl);
    }
    return (long)rl.rlim_cur;
}

static int add_listener(tsl_server_t *s, int fd, bool tls)
{
    if (s->n_listen >= TSL_MAX_LISTEN_FDS) {
        close(fd);
        return -1;
    }
    s->listen_tls[s->n_listen] = tls;
    s->listen_fds[s->n_listen++] = fd;
    return 0;
}

/* The channel arg gRPC looks up by the port name "external:..." and through
 * which it returns its acceptor: a pointer to where it stores it. */
static void *arg_copy(void *p)
{
    return p;
}

static void arg_destroy(void *p)
{
    (void)p;
}

static int arg_cmp(void *p, void *q)
{
    return p == q ? 0 : p < q ? -1 : 1;
}

void tsl_accept_acceptor_arg(tsl_server_t *s, grpc_arg *arg)
{
    static const grpc_arg_pointer_vtable vt = {arg_copy, arg_destroy, arg_cmp};
    arg->type = GRPC_ARG_POINTER;
    arg->key = (char *)TSL_TLS_ACCEPTOR;
    arg->value.pointer.p = &s->tls_acceptor;
    arg->value.pointer.vtable = &vt;
}

/* grpc_core::TcpServerFdHandler::Handle(listener_fd, fd, pending_read): the
 * vtable holds the two destructors (complete, deleting), then Handle. gRPC
 * takes the descriptor (it closes it on failure). */
typedef void (*fd_handle_fn)(void *self, int listener_fd, int fd, grpc_byte_buffer *pending);
#define FD_HANDLER_HANDLE_SLOT 2

static void hand_tls(tsl_server_t *s, int lfd, int fd)
{
    fd_handle_fn *const *vptr = s->tls_acceptor;
    vptr[0][FD_HANDLER_HANDLE_SLOT](s->tls_acceptor, lfd, fd, NULL);
}

int tsl_accept_bind_unix(tsl_server_t *s, const char *path, unsigned mode, tsl_err_t *err)
{
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
    struct stat st;
    /* We hold the lock file: a socket left at the path is a dead daemon's. */
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode))
            return tsl_err_set(err,
                               "unix_socket: '%s' exists and is not a socket; refusing to "
                               "replace it",
                               path);
        unlink(path);
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return tsl_err_set(err, "unix_socket: socket: %s", strerror(errno));
    mode_t old = umask((mode_t)(~mode & 0777)); /* no window with wider bits */
    int rc = bind(fd, (struct sockaddr *)&sun, sizeof sun);
    umask(old);
    if (rc != 0 || listen(fd, LISTEN_BACKLOG) != 0) {
        tsl_err_set(err, "unix_socket: cannot listen on %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    s->unix_bound = true;
    if (chmod(path, (mode_t)mode) != 0)
        tsl_log_warn("chmod %04o %s", mode, path);
    return add_listener(s, fd, false) == 0 ? 0 : tsl_err_set(err, "too many listeners");
}

/* "HOST:PORT" or "[V6]:PORT" → host and port strings. */
static int split_addr(const char *addr, char *host, size_t hcap, char *port, size_t pcap)
{
    const char *colon = strrchr(addr, ':');
    if (!colon)
        return -1;
    const char *h = addr;
    size_t hl = (size_t)(colon - addr);
    if (h[0] == '[' && hl >= 2 && h[hl - 1] == ']') {
        h++;
        hl -= 2;
    }
    if (hl == 0 || hl >= hcap || strlen(colon + 1) >= pcap)
        return -1;
    memcpy(host, h, hl);
    host[hl] = '\0';
    snprintf(port, pcap, "%s", colon + 1);
    return 0;
}

static int bind_one_tcp(const struct addrinfo *ai)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one); /* not SO_REUSEPORT */
    if (ai->ai_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, LISTEN_BACKLOG) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int tsl_accept_bind_tcp(tsl_server_t *s, const char *addr, bool tls, tsl_err_t *err)
{
    char host[128], port[16];
    if (split_addr(addr, host, sizeof host, port, sizeof port) != 0)
        return tsl_err_set(err, "tcp: '%s' is not HOST:PORT or [V6]:PORT", addr);
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int g = getaddrinfo(host, port, &hints, &res);
    if (g != 0)
        return tsl_err_set(err, "tcp: cannot resolve '%s': %s", addr, gai_strerror(g));
    int bound = 0, e = 0;
    for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd = bind_one_tcp(ai);
        if (fd < 0) {
            e = errno;
            continue;
        }
        if (add_listener(s, fd, tls) == 0)
            bound++;
    }
    freeaddrinfo(res);
    if (bound == 0)
        return tsl_err_set(err, "tcp: cannot listen on '%s': %s%s", addr, strerror(e),
                           e == EADDRINUSE ? " (another tesseld?)" : "");
    return 0;
}

static void saturated(tsl_server_t *s, tsl_refused_t why, const char *what)
{
    static tsl_ratelimit_t rl;
    uint64_t skipped;
    atomic_store(&s->saturated_until_ms, now_ms() + SATURATED_HOLD_MS);
    tsl_metrics_refused(s->metrics, why);
    if (tsl_ratelimit_ok(&rl, LOG_INTERVAL_S, &skipped))
        tsl_log_warnx("listener saturated: %s; health reports NOT_SERVING until it clears "
                      "[%llu more in the last %d s not logged]",
                      what, (unsigned long long)skipped, LOG_INTERVAL_S);
}

/* gRPC names a connection made from a descriptor "fd:N"; the log wants the
 * address, noted here at accept. */
static void note_peer(tsl_server_t *s, int fd, const struct sockaddr_storage *ss)
{
    if (!s->peer_names || fd >= s->fd_limit)
        return;
    char *out = s->peer_names[fd], host[INET6_ADDRSTRLEN] = "?";
    const size_t cap = sizeof s->peer_names[0];
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
        snprintf(out, cap, "ipv4:%s:%u", host, ntohs(a->sin_port));
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
        snprintf(out, cap, "ipv6:[%s]:%u", host, ntohs(a->sin6_port));
    } else {
        snprintf(out, cap, "unix:%.50s", s->cfg->unix_socket);
    }
}

char *tsl_accept_peer(const tsl_server_t *s, grpc_call *call)
{
    char *peer = grpc_call_get_peer(call);
    int fd;
    if (peer && s->peer_names && sscanf(peer, "fd:%d", &fd) == 1 && fd >= 0 && fd < s->fd_limit &&
        s->peer_names[fd][0]) {
        gpr_free(peer);
        peer = gpr_strdup(s->peer_names[fd]);
    }
    return peer;
}

/* Accepts what is pending on listener i; false when accept must back off. */
static bool accept_some(tsl_server_t *s, size_t i_listen)
{
    int lfd = s->listen_fds[i_listen];
    for (int i = 0; i < ACCEPTS_PER_WAKE; i++) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
                errno == ECONNABORTED || errno == EPROTO)
                return true;
            saturated(s, TSL_REFUSED_ACCEPT_ERROR, strerror(errno));
            return false;
        }
        if (fd >= s->fd_limit - s->fd_reserve) {
            close(fd);
            saturated(s, TSL_REFUSED_CONNECTION,
                      "too many open connections (descriptor "
                      "reserve reached); closing new connections at once");
            continue;
        }
        note_peer(s, fd, &ss);
        if (s->listen_tls[i_listen])
            hand_tls(s, lfd, fd);
        else
            grpc_server_add_channel_from_fd(s->server, fd, s->insecure_creds);
    }
    return true;
}

static void *accept_main(void *arg)
{
    tsl_server_t *s = arg;
    struct pollfd p[TSL_MAX_LISTEN_FDS + 1];
    int timeout = -1;
    for (;;) {
        for (size_t i = 0; i < s->n_listen; i++)
            p[i] = (struct pollfd){.fd = s->listen_fds[i], .events = POLLIN};
        p[s->n_listen] = (struct pollfd){.fd = s->wake[0], .events = POLLIN};
        int n = poll(p, s->n_listen + 1, timeout);
        if (n < 0 && errno != EINTR)
            break;
        if (p[s->n_listen].revents)
            break;
        timeout = -1;
        for (size_t i = 0; i < s->n_listen; i++)
            if ((p[i].revents & POLLIN) && !accept_some(s, i))
                timeout = BACKOFF_MS; /* the fds stay readable: wait before retrying */
    }
    return NULL;
}

int tsl_accept_start(tsl_server_t *s, tsl_err_t *err)
{
    if (s->n_listen == 0)
        return 0;
    s->fd_limit = fd_limit();
    s->fd_reserve = s->fd_limit / 8 < 32 ? 32 : s->fd_limit / 8;
    s->insecure_creds = grpc_insecure_server_credentials_create();
    s->peer_names = calloc((size_t)s->fd_limit, sizeof s->peer_names[0]); /* pages on touch */
    if (pipe2(s->wake, O_CLOEXEC) != 0)
        return tsl_err_set(err, "server: pipe: %s", strerror(errno));
    if (pthread_create(&s->accept_thread, NULL, accept_main, s) != 0)
        return tsl_err_set(err, "server: cannot start the accept thread");
    s->accept_started = true;
    return 0;
}

void tsl_accept_stop(tsl_server_t *s)
{
    if (s->accept_started) {
        char b = 0;
        if (write(s->wake[1], &b, 1) != 1)
            tsl_log_warn("accept thread: wake");
        pthread_join(s->accept_thread, NULL);
        s->accept_started = false;
        close(s->wake[0]);
        close(s->wake[1]);
    }
    for (size_t i = 0; i < s->n_listen; i++)
        close(s->listen_fds[i]);
    s->n_listen = 0;
    if (s->unix_bound) {
        unlink(s->cfg->unix_socket);
        s->unix_bound = false;
    }
    if (s->insecure_creds)
        grpc_server_credentials_release(s->insecure_creds);
    s->insecure_creds = NULL;
}

void tsl_accept_free(tsl_server_t *s)
{
    free(s->peer_names);
    s->peer_names = NULL;
}

/* Health's view (server.h): started, not stopping, and every listener accepting;
 * here beside the accept loop it depends on, so that the handlers need not call
 * back into server.c. */
bool tsl_server_serving(const tsl_server_t *s)
{
    return s && atomic_load(&s->serving) && !atomic_load(&s->shutting_down) &&
           !tsl_accept_saturated(s);
}

/*
 * agent.c — tessel-worker's loop (agent.h): one libevent base on one thread.
 *
 *   start ──▶ register ──ok──▶ heartbeat every heartbeat_s ──▶ flush the spool
 *               ▲   │ unavailable: again after a backoff        │
 *               └───┴──────── lost tesseld / NOT_FOUND ◀────────┘
 *
 * Profiles are measured at start (and every profile.interval_h, and on SIGUSR1)
 * whether or not tesseld is reachable: each goes to the spool first and leaves
 * it only when tesseld acknowledged it, so nothing measured is lost to an
 * outage or a restart. Signals are blocked in every thread (before gRPC starts
 * its own) and read from a signalfd by the loop: SIGTERM/SIGINT deregister and
 * stop, SIGUSR1 profiles now, SIGCHLD reaps trial ranks, SIGHUP is ignored. Calls
 * to tesseld block the loop for at most rpc_timeout_s each; nothing else runs on
 * this thread meanwhile. The one call that waits longer, the Assignments long poll,
 * runs on its own thread (agent_poll.c); the ranks it brings run as children
 * (agent_trials.c), watched from this loop.
 */
#include <errno.h>
#include <event2/event.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "log.h"

typedef struct agent {
    const tsl_agent_config_t *cfg;
    struct event_base *base;
    struct event *ev_signal, *ev_register, *ev_heartbeat, *ev_profile;
    int sigfd;
    tsl_agent_rpc_t *rpc;
    tsl_agent_poll_t *poll; /* NULL with trials off */
    tsl_agent_trials_t *trials;
    struct event *ev_assign;
    tsl_agent_node_t node;
    tsl_agent_identity_t id;
    tsl_backoff_t backoff;
    tsl_spool_t spool;
    bool registered, notified;
    int rc; /* -1 after a permanent error (in err) */
    tsl_err_t err;
} agent_t;

static void after(struct event *ev, double seconds)
{
    struct timeval tv = {(time_t)seconds, (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6)};
    event_del(ev);
    event_add(ev, &tv);
}

static void give_up(agent_t *a, const tsl_err_t *err)
{
    a->err = *err;
    a->rc = -1;
    event_base_loopbreak(a->base);
}

/* Back to registering, after a backoff (or at once for a daemon that merely
 * forgot us). */
static void reconnect(agent_t *a, bool now, const char *why)
{
    if (a->registered)
        tsl_log_warnx("lost tesseld: %s; registering again", why);
    a->registered = false;
    if (a->poll)
        tsl_agent_poll_set_worker(a->poll, "");
    event_del(a->ev_heartbeat);
    double delay = now ? 0 : tsl_backoff_next(&a->backoff, (double)random() / RAND_MAX);
    if (!now)
        tsl_log_info("tesseld: %s; next try in %.1f s", why, delay);
    after(a->ev_register, delay);
}

/* Sends spooled reports, oldest first, until the spool is empty or a call fails. */
static void flush(agent_t *a)
{
    for (;;) {
        char name[256];
        void *buf = NULL;
        size_t n = 0;
        uint32_t stale = 0;
        tsl_err_t err = {0};
        int got = tsl_spool_oldest(&a->spool, name, sizeof name, &buf, &n, &err);
        if (got != 0) {
            if (got < 0)
                tsl_log_warnx("%s", err.msg);
            return;
        }
        tsl_agent_rpc_rc_t rc =
            tsl_agent_rpc_send_report(a->rpc, a->id.worker_id, buf, n, &stale, &err);
        free(buf);
        if (rc == TSL_AGENT_RPC_OK) {
            tsl_log_info("profile %s sent; tesseld marked %u plan(s) stale", name, stale);
            if (tsl_spool_remove(&a->spool, name, &err) != 0) {
                tsl_log_warnx("%s", err.msg);
                return;
            }
        } else if (rc == TSL_AGENT_RPC_REFUSED) {
            tsl_log_error("profile %s refused, kept aside as .rejected: %s", name, err.msg);
            if (tsl_spool_reject(&a->spool, name, &err) != 0) {
                tsl_log_warnx("%s", err.msg);
                return;
            }
        } else {
            reconnect(a, rc == TSL_AGENT_RPC_UNKNOWN, err.msg);
            return;
        }
    }
}

static void on_register(evutil_socket_t fd, short what, void *ud)
{
    agent_t *a = ud;
    tsl_err_t err = {0};
    (void)fd, (void)what;
    tsl_agent_rpc_rc_t rc =
        tsl_agent_rpc_register(a->rpc, &a->node, a->cfg->heartbeat_s, &a->id, &err);
    if (rc == TSL_AGENT_RPC_REFUSED) {
        give_up(a, &err);
        return;
    }
    if (rc != TSL_AGENT_RPC_OK) {
        reconnect(a, false, err.msg);
        return;
    }
    a->registered = true;
    tsl_backoff_reset(&a->backoff);
    tsl_log_info("registered as %s (%s, %u GPU(s)%s)%s", a->id.worker_id, a->node.hostname,
                 a->node.n_devices, a->node.simulated ? ", simulated" : "",
                 a->id.known ? ": identity restored" : "");
    if (!a->notified) {
        sd_notifyf(0, "READY=1\nSTATUS=registered as %s", a->id.worker_id);
        a->notified = true;
    }
    struct timeval tv = {(time_t)a->id.heartbeat_s, 0};
    event_add(a->ev_heartbeat, &tv);
    if (a->poll)
        tsl_agent_poll_set_worker(a->poll, a->id.worker_id);
    flush(a);
    if (a->trials && a->registered)
        tsl_agent_trials_flush(a->trials);
}

/* A trial report found tesseld gone (agent_trials.c). */
static void on_lost(void *ud, bool now, const char *why)
{
    reconnect(ud, now, why);
}

/* The poll thread queued assignments (or a "register again"). */
static void on_assign(evutil_socket_t fd, short what, void *ud)
{
    agent_t *a = ud;
    tsl_agent_assignment_t as;
    char why[512];
    int kind;
    (void)fd, (void)what;
    while ((kind = tsl_agent_poll_take(a->poll, &as, why, sizeof why)) != 0) {
        if (kind == 1)
            tsl_agent_trials_assign(a->trials, &as);
        else if (a->registered)
            reconnect(a, true, why);
    }
}

static void on_heartbeat(evutil_socket_t fd, short what, void *ud)
{
    agent_t *a = ud;
    tsl_err_t err = {0};
    (void)fd, (void)what;
    tsl_agent_rpc_rc_t rc = tsl_agent_rpc_heartbeat(a->rpc, a->id.worker_id, false, &err);
    if (rc == TSL_AGENT_RPC_REFUSED) {
        give_up(a, &err);
        return;
    }
    if (rc != TSL_AGENT_RPC_OK) {
        reconnect(a, rc == TSL_AGENT_RPC_UNKNOWN, err.msg);
        return;
    }
    flush(a);
}

static void on_profile(evutil_socket_t fd, short what, void *ud)
{
    agent_t *a = ud;
    tsl_agent_profile_t p;
    tsl_err_t err = {0};
    void *buf = NULL;
    size_t n = 0;
    uint32_t dropped = 0;
    (void)fd, (void)what;
    if (tsl_agent_measure(a->cfg, &a->node, &p, &err) != 0) {
        give_up(a, &err);
        return;
    }
    int rc = tsl_agent_rpc_pack_report(a->id.worker_id, &p, &buf, &n, &err);
    if (rc == 0)
        rc = tsl_spool_put(&a->spool, p.report_id, buf, n, &dropped, &err);
    if (rc == 0)
        tsl_log_info("profile %s measured: %zu figures%s; %u waiting to be sent", p.report_id, p.n,
                     a->node.simulated ? " (simulated)" : "", tsl_spool_count(&a->spool));
    else
        tsl_log_error("profile %s lost: %s", p.report_id, err.msg);
    if (dropped)
        tsl_log_warnx("spool full (spool_max=%u): dropped the %u oldest report(s)",
                      a->cfg->spool_max, dropped);
    free(buf);
    tsl_agent_profile_free(&p);
    if (a->cfg->profile_interval_h > 0)
        after(a->ev_profile, a->cfg->profile_interval_h * 3600);
    if (a->registered)
        flush(a);
}

/* SIGTERM/SIGINT: tell tesseld we leave (best effort), then stop the loop. */
static void stop(agent_t *a, int sig)
{
    tsl_err_t err = {0};
    tsl_log_info("%s: stopping", strsignal(sig));
    sd_notify(0, "STOPPING=1");
    if (a->registered) {
        if (tsl_agent_rpc_heartbeat(a->rpc, a->id.worker_id, true, &err) == TSL_AGENT_RPC_OK)
            tsl_log_info("deregistered %s", a->id.worker_id);
        else
            tsl_log_warnx("could not deregister (tesseld will time us out): %s", err.msg);
    }
    event_base_loopbreak(a->base);
}

static void on_signal(evutil_socket_t fd, short what, void *ud)
{
    agent_t *a = ud;
    struct signalfd_siginfo si;
    (void)what;
    while (read(fd, &si, sizeof si) == (ssize_t)sizeof si) {
        int sig = (int)si.ssi_signo;
        if (sig == SIGTERM || sig == SIGINT) {
            stop(a, sig);
            return;
        }
        if (sig == SIGCHLD) {
            if (a->trials)
                tsl_agent_trials_reap(a->trials);
        } else if (sig == SIGUSR1) {
            tsl_log_info("SIGUSR1: measuring a profile now");
            after(a->ev_profile, 0);
        } else {
            tsl_log_info("%s ignored: restart tessel-worker to reload its configuration",
                         strsignal(sig));
        }
    }
}

/* Blocks the loop's signals in this thread and every thread started later (gRPC's). */
static int signals_fd(tsl_err_t *err)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGCHLD);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd < 0)
        tsl_err_set(err, "signalfd: %s", strerror(errno));
    return fd;
}

static int setup(agent_t *a, tsl_err_t *err)
{
    char dir[320];
    snprintf(dir, sizeof dir, "%s/spool", a->cfg->state_dir);
    if (mkdir(a->cfg->state_dir, 0700) != 0 && errno != EEXIST)
        return tsl_err_set(err, "node.state_dir: cannot create %s: %s", a->cfg->state_dir,
                           strerror(errno));
    if (tsl_agent_discover(a->cfg, &a->node, err) != 0 ||
        tsl_spool_open(&a->spool, dir, a->cfg->spool_max, err) != 0)
        return -1;
    if ((a->sigfd = signals_fd(err)) < 0 || !(a->rpc = tsl_agent_rpc_open(a->cfg, err)))
        return -1;
    a->base = event_base_new();
    if (!a->base)
        return tsl_err_set(err, "libevent: cannot create the event base");
    a->ev_signal = event_new(a->base, a->sigfd, EV_READ | EV_PERSIST, on_signal, a);
    a->ev_register = evtimer_new(a->base, on_register, a);
    a->ev_heartbeat = event_new(a->base, -1, EV_PERSIST, on_heartbeat, a);
    a->ev_profile = evtimer_new(a->base, on_profile, a);
    if (!a->ev_signal || !a->ev_register || !a->ev_heartbeat || !a->ev_profile)
        return tsl_err_setc(err, TSL_E_NOMEM, "libevent: out of memory");
    event_add(a->ev_signal, NULL);
    if (!a->cfg->trials)
        return 0;
    a->trials =
        tsl_agent_trials_new(a->base, a->cfg, &a->node, a->rpc, a->id.worker_id, on_lost, a, err);
    if (!a->trials || !(a->poll = tsl_agent_poll_start(a->cfg, err)))
        return -1;
    a->ev_assign =
        event_new(a->base, tsl_agent_poll_fd(a->poll), EV_READ | EV_PERSIST, on_assign, a);
    if (!a->ev_assign)
        return tsl_err_setc(err, TSL_E_NOMEM, "libevent: out of memory");
    event_add(a->ev_assign, NULL);
    return 0;
}

static void teardown(agent_t *a)
{
    tsl_agent_poll_stop(a->poll);
    if (a->trials && tsl_agent_trials_running(a->trials))
        tsl_log_warnx("stopping %u running trial rank(s)", tsl_agent_trials_running(a->trials));
    tsl_agent_trials_free(a->trials);
    struct event *evs[] = {a->ev_signal, a->ev_register, a->ev_heartbeat, a->ev_profile,
                           a->ev_assign};
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
        if (evs[i])
            event_free(evs[i]);
    if (a->base)
        event_base_free(a->base);
    tsl_agent_rpc_close(a->rpc);
    if (a->sigfd >= 0)
        close(a->sigfd);
}

int tsl_agent_run(const tsl_agent_config_t *cfg, tsl_err_t *err)
{
    agent_t *a = calloc(1, sizeof *a);
    if (!a)
        return tsl_err_setc(err, TSL_E_NOMEM, "out of memory");
    a->cfg = cfg;
    a->sigfd = -1;
    tsl_backoff_init(&a->backoff, cfg->backoff_base_s, cfg->backoff_cap_s);
    srandom((unsigned)time(NULL) ^ (unsigned)getpid());
    int rc = setup(a, err);
    if (rc == 0) {
        tsl_log_info("tessel-worker on %s: %u GPU(s) via %s; tesseld at %s; %u report(s) spooled",
                     a->node.hostname, a->node.n_devices, cfg->backend, cfg->server,
                     tsl_spool_count(&a->spool));
        if (cfg->token[0] && strlen(cfg->token) < 16) /* as tesseld says of its own */
            tsl_log_warnx("token: shorter than 16 characters, which can be guessed; use a "
                          "random one (e.g. openssl rand -hex 16)");
        if (geteuid() == 0)
            tsl_log_warnx("running as root: tessel-worker needs only its GPUs; run it as its own "
                          "user in the video/render group (systemd/tessel-worker.service does)");
        after(a->ev_register, 0);
        if (cfg->profile_at_start)
            after(a->ev_profile, 0);
        event_base_dispatch(a->base);
        rc = a->rc;
        if (rc != 0)
            *err = a->err;
    }
    teardown(a);
    free(a);
    return rc;
}

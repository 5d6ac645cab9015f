/*
 * agent_trials.c — the trial ranks on the agent's loop (agent.h).
 *
 * An assignment starts a rank child (agent_trial.c) with a pipe event and a
 * timer: the rank's limit is the assignment's timeout_s, capped by [trials] max_runtime_s,
 * and a rank past it is killed and reported failed saying so. Rank 0 answers
 * first with its rendezvous: tcp at once (the agent knows its address and port;
 * the others retry their connects until rank 0 listens), nccl when the child has
 * written the unique id it made. A cancel (an assignment with cancel, or a
 * ReportTrial answered cancelled) kills the trial's ranks and reports nothing;
 * each is logged "stopped" when reaped. A rank that ended on its own before the
 * cancel reached us (say its peer was stopped first) was reported already, and
 * the answer to that report logs it as "had already ended".
 *
 * Reports are kept in memory, in order, until tesseld acknowledged them: a call
 * that fails is retried after the agent's backoff, and after a reconnect. They are
 * not spooled: a rank's result means something only to the trial running now, and
 * a restarted agent has lost its ranks anyway (the daemon fails the trial when the
 * worker goes). A link probe's rank 0 sends its figures as a profile report
 * first (spooled when tesseld cannot take it now).
 */
#include <errno.h>
#include <event2/event.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent.h"
#include "log.h"

typedef struct trial_rank {
    struct trial_rank *next;
    tsl_agent_trials_t *t;
    tsl_agent_rank_t rk;
    struct event *ev_pipe, *ev_limit;
    double limit_s;
    bool cancelled;
    char killed[256]; /* why we killed it ("" = we did not) */
} trial_rank_t;

typedef struct pending {
    struct pending *next;
    tsl_agent_trial_report_t rep;
    uint32_t unknown; /* NOT_FOUND answers so far */
} pending_t;

struct tsl_agent_trials {
    struct event_base *base;
    const tsl_agent_config_t *cfg;
    const tsl_agent_node_t *node;
    tsl_agent_rpc_t *rpc;
    const char *worker_id; /* the loop's; "" while not registered */
    tsl_agent_lost_fn lost;
    void *ud;
    trial_rank_t *ranks;
    pending_t *head, **tail;
    struct event *ev_retry;
    tsl_backoff_t backoff;
};

/* Takes r off the list of running ranks: from then on no cancel can find (and
 * signal) it — its pid may already be reaped and reused. */
static void unlink_rank(trial_rank_t *r)
{
    for (trial_rank_t **pp = &r->t->ranks; *pp; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            break;
        }
}

static void drop_rank(trial_rank_t *r)
{
    unlink_rank(r);
    if (r->ev_pipe)
        event_free(r->ev_pipe);
    if (r->ev_limit)
        event_free(r->ev_limit);
    if (r->rk.fd >= 0)
        close(r->rk.fd);
    free(r);
}

/* Kills the trial's ranks (cancelled: their ends are not reported). */
static void cancel_trial(tsl_agent_trials_t *t, const char *trial_id)
{
    for (trial_rank_t *r = t->ranks; r; r = r->next)
        if (!strcmp(r->rk.trial_id, trial_id) && !r->cancelled) {
            tsl_log_info("trial %s: cancelled: stopping rank %u (pid %d)", trial_id, r->rk.rank,
                         r->rk.pid);
            r->cancelled = true;
            kill(r->rk.pid, SIGKILL);
        }
}

static void retry_later(tsl_agent_trials_t *t, const char *why)
{
    double d = tsl_backoff_next(&t->backoff, (double)random() / RAND_MAX);
    struct timeval tv = {(time_t)d, (suseconds_t)((d - (double)(time_t)d) * 1e6)};
    tsl_log_info("trial report waits: %s; next try in %.1f s", why, d);
    event_add(t->ev_retry, &tv);
}

/* Sends the waiting reports in order; false when it stopped on a failure. */
static bool send_one(tsl_agent_trials_t *t, pending_t *p)
{
    tsl_err_t err = {0};
    bool cancelled = false;
    tsl_agent_rpc_rc_t rc =
        tsl_agent_rpc_report_trial(t->rpc, t->worker_id, &p->rep, &cancelled, &err);
    if (rc == TSL_AGENT_RPC_OK) {
        if (cancelled && !p->rep.ready) /* this rank was reaped before the cancel came */
            tsl_log_info("trial %s: cancelled: rank %u had already ended (%s)", p->rep.trial_id,
                         p->rep.rank, p->rep.error[0] ? p->rep.error : "done");
        if (cancelled)
            cancel_trial(t, p->rep.trial_id);
        return true;
    }
    if (rc == TSL_AGENT_RPC_REFUSED || (rc == TSL_AGENT_RPC_UNKNOWN && p->unknown >= 1)) {
        tsl_log_error("trial %s rank %u: report dropped: %s", p->rep.trial_id, p->rep.rank,
                      err.msg);
        if (rc == TSL_AGENT_RPC_UNKNOWN) /* the trial, not the worker, is unknown */
            cancel_trial(t, p->rep.trial_id);
        return true;
    }
    if (rc == TSL_AGENT_RPC_UNKNOWN) {
        p->unknown++;
        t->lost(t->ud, true, err.msg);
    } else {
        retry_later(t, err.msg);
    }
    return false;
}

void tsl_agent_trials_flush(tsl_agent_trials_t *t)
{
    while (t->head && t->worker_id[0]) {
        pending_t *p = t->head;
        if (!send_one(t, p))
            return;
        t->head = p->next;
        if (!t->head)
            t->tail = &t->head;
        free(p);
        tsl_backoff_reset(&t->backoff);
    }
}

static void on_retry(evutil_socket_t fd, short what, void *ud)
{
    (void)fd, (void)what;
    tsl_agent_trials_flush(ud);
}

static void queue(tsl_agent_trials_t *t, const tsl_agent_trial_report_t *rep)
{
    pending_t *p = calloc(1, sizeof *p);
    if (!p) {
        tsl_log_error("trial %s rank %u: report lost: out of memory", rep->trial_id, rep->rank);
        return;
    }
    p->rep = *rep;
    *t->tail = p;
    t->tail = &p->next;
    if (!evtimer_pending(t->ev_retry, NULL))
        tsl_agent_trials_flush(t);
}

/* What the child wrote so far; rank 0's nccl id is reported (ready) at once. */
static void read_pipe(trial_rank_t *r)
{
    tsl_agent_trial_report_t ready;
    bool got = false;
    if (r->rk.fd >= 0 && tsl_agent_rank_read(&r->rk, &got, &ready) == 1)
        event_del(r->ev_pipe); /* the end comes with SIGCHLD */
    if (got && !r->cancelled) {
        tsl_log_info("trial %s: rank 0 ready (nccl id made)", r->rk.trial_id);
        queue(r->t, &ready);
    }
}

static void on_pipe(evutil_socket_t fd, short what, void *ud)
{
    (void)fd, (void)what;
    read_pipe(ud);
}

static void on_limit(evutil_socket_t fd, short what, void *ud)
{
    trial_rank_t *r = ud;
    (void)fd, (void)what;
    snprintf(r->killed, sizeof r->killed,
             "rank %u timed out: killed after %.0f s (the assignment's timeout_s, at most "
             "[trials] max_runtime_s)",
             r->rk.rank, r->limit_s);
    tsl_log_warnx("trial %s: %s", r->rk.trial_id, r->killed);
    kill(r->rk.pid, SIGKILL);
}

static void fill_opts(const tsl_agent_trials_t *t, const tsl_agent_assignment_t *a,
                      tsl_agent_trial_opts_t *o)
{
    const tsl_agent_config_t *c = t->cfg;
    memset(o, 0, sizeof *o);
    snprintf(o->address, sizeof o->address, "%s",
             c->trial_address[0] ? c->trial_address : t->node->hostname);
    o->port = c->trial_port;
    o->timeout_s =
        a->timeout_s > 0 && a->timeout_s < c->trial_max_s ? a->timeout_s : c->trial_max_s;
    if (c->trial_memory_gib > 0)
        o->cpu_memory_bytes = (uint64_t)(c->trial_memory_gib * 1073741824.0);
    else
        for (uint32_t i = 0; i < t->node->n_devices; i++)
            if (t->node->devices[i].index == a->device_index)
                o->cpu_memory_bytes = t->node->devices[i].memory_bytes;
}

static void fail_now(tsl_agent_trials_t *t, const tsl_agent_assignment_t *a, const char *why)
{
    tsl_agent_trial_report_t rep = {0};
    snprintf(rep.trial_id, sizeof rep.trial_id, "%s", a->trial_id);
    rep.rank = a->rank;
    snprintf(rep.error, sizeof rep.error, "rank %u: %.480s", a->rank, why);
    tsl_log_error("trial %s: %s", a->trial_id, rep.error);
    queue(t, &rep);
}

static void start_rank(tsl_agent_trials_t *t, const tsl_agent_assignment_t *a)
{
    tsl_agent_trial_opts_t o;
    tsl_err_t err = {0};
    trial_rank_t *r = calloc(1, sizeof *r);
    if (!r) {
        fail_now(t, a, "out of memory");
        return;
    }
    fill_opts(t, a, &o);
    if (tsl_agent_rank_start(&o, a, &r->rk, &err) != 0) {
        free(r);
        fail_now(t, a, err.msg);
        return;
    }
    r->t = t;
    r->limit_s = o.timeout_s;
    r->next = t->ranks;
    t->ranks = r;
    r->ev_pipe = event_new(t->base, r->rk.fd, EV_READ | EV_PERSIST, on_pipe, r);
    r->ev_limit = evtimer_new(t->base, on_limit, r);
    struct timeval tv = {(time_t)o.timeout_s, 0};
    if (r->ev_pipe)
        event_add(r->ev_pipe, NULL);
    if (r->ev_limit)
        event_add(r->ev_limit, &tv);
    tsl_log_info("trial %s: rank %u of %u started (pid %d; %s/%s, device %u, %u + %u iterations, "
                 "limit %.0f s)",
                 a->trial_id, a->rank, a->world_size, r->rk.pid, a->devops, a->comm,
                 a->device_index, a->warmup, a->iterations, o.timeout_s);
    if (a->rank == 0 && !strcmp(a->comm, "tcp")) {
        tsl_agent_trial_report_t rep = {0};
        snprintf(rep.trial_id, sizeof rep.trial_id, "%s", a->trial_id);
        rep.ready = true;
        snprintf(rep.rendezvous, sizeof rep.rendezvous, "%s:%u", o.address, o.port);
        queue(t, &rep);
    }
}

void tsl_agent_trials_assign(tsl_agent_trials_t *t, tsl_agent_assignment_t *a)
{
    if (a->cancel) {
        cancel_trial(t, a->trial_id);
    } else {
        bool dup = false;
        for (trial_rank_t *r = t->ranks; r; r = r->next)
            dup |= !strcmp(r->rk.trial_id, a->trial_id) && r->rk.rank == a->rank;
        if (dup)
            tsl_log_warnx("trial %s: rank %u assigned again while it runs: ignored", a->trial_id,
                          a->rank);
        else
            start_rank(t, a);
    }
    tsl_agent_assignment_free(a);
}

/* Rank 0 of a link probe: its figures go to tesseld as a profile report before
 * the rank's result, so the trial is done only once they are stored; a report
 * that cannot go now is spooled and sent with the agent's profiles later. */
static void report_link(tsl_agent_trials_t *t, const tsl_agent_rank_t *rk)
{
    tsl_agent_profile_t p;
    tsl_err_t err = {0};
    void *buf = NULL;
    size_t n = 0;
    uint32_t stale = 0, dropped = 0;
    if (tsl_agent_link_profile(rk->link, rk->n_link, t->node->hostname, rk->peer, rk->comm,
                               rk->trial_id, &p, &err) ||
        tsl_agent_rpc_pack_report(t->worker_id, &p, &buf, &n, &err)) {
        tsl_log_error("trial %s: link figures lost: %s", rk->trial_id, err.msg);
        free(p.m);
        return;
    }
    tsl_agent_rpc_rc_t rc = tsl_agent_rpc_send_report(t->rpc, t->worker_id, buf, n, &stale, &err);
    if (rc == TSL_AGENT_RPC_OK) {
        tsl_log_info("trial %s: %zu link figure(s) to %s reported (%u plan(s) marked stale)",
                     rk->trial_id, p.n, rk->peer, stale);
    } else {
        tsl_spool_t sp;
        char dir[300];
        snprintf(dir, sizeof dir, "%s/spool", t->cfg->state_dir);
        tsl_log_warnx("trial %s: link figures not sent (%s): spooled", rk->trial_id, err.msg);
        if (tsl_spool_open(&sp, dir, t->cfg->spool_max, &err) != 0 ||
            tsl_spool_put(&sp, p.report_id, buf, n, &dropped, &err) != 0)
            tsl_log_error("trial %s: link figures lost: %s", rk->trial_id, err.msg);
    }
    free(buf);
    free(p.m);
}

/* Each rank that ended: logged, then reported unless cancelled. A report sent
 * here can be answered cancelled (the cancel raced the rank's end), and
 * cancel_trial() then runs inside this loop: the rank is unlinked first, so the
 * cancel neither signals its reaped pid nor takes it for running. */
void tsl_agent_trials_reap(tsl_agent_trials_t *t)
{
    for (trial_rank_t *r = t->ranks, *next; r; r = next) {
        int st = 0;
        next = r->next;
        if (waitpid(r->rk.pid, &st, WNOHANG) != r->rk.pid)
            continue;
        unlink_rank(r);
        tsl_agent_trial_report_t rep;
        read_pipe(r); /* an nccl id the child wrote just before it ended goes first */
        tsl_agent_rank_end(&r->rk, st, &rep);
        if (r->killed[0])
            snprintf(rep.error, sizeof rep.error, "%s", r->killed);
        if (r->cancelled)
            tsl_log_info("trial %s: rank %u stopped", r->rk.trial_id, r->rk.rank);
        else if (rep.error[0] && !r->killed[0]) /* a kill was logged when it was made */
            tsl_log_warnx("trial %s: %s", r->rk.trial_id, rep.error);
        else
            tsl_log_info("trial %s: rank %u done: %.4f s per iteration, peak %.1f MiB%s",
                         r->rk.trial_id, r->rk.rank, rep.iter_time_s,
                         (double)rep.peak_bytes / 1048576.0, rep.oom ? ", out of memory" : "");
        if (!r->cancelled && !rep.error[0] && r->rk.rank == 0 && r->rk.n_link > 0 &&
            !strcmp(r->rk.kind, "link"))
            report_link(t, &r->rk);
        if (!r->cancelled)
            queue(t, &rep);
        drop_rank(r);
    }
}

uint32_t tsl_agent_trials_running(const tsl_agent_trials_t *t)
{
    uint32_t n = 0;
    for (const trial_rank_t *r = t->ranks; r; r = r->next)
        n++;
    return n;
}

tsl_agent_trials_t *tsl_agent_trials_new(struct event_base *base, const tsl_agent_config_t *cfg,
                                         const tsl_agent_node_t *node, tsl_agent_rpc_t *rpc,
                                         const char *worker_id, tsl_agent_lost_fn lost, void *ud,
                                         tsl_err_t *err)
{
    tsl_agent_trials_t *t = calloc(1, sizeof *t);
    if (t)
        t->ev_retry = evtimer_new(base, on_retry, t);
    if (!t || !t->ev_retry) {
        free(t);
        tsl_err_setc(err, TSL_E_NOMEM, "out of memory");
        return NULL;
    }
    t->base = base;
    t->cfg = cfg;
    t->node = node;
    t->rpc = rpc;
    t->worker_id = worker_id;
    t->lost = lost;
    t->ud = ud;
    t->tail = &t->head;
    tsl_backoff_init(&t->backoff, cfg->backoff_base_s, cfg->backoff_cap_s);
    return t;
}

void tsl_agent_trials_free(tsl_agent_trials_t *t)
{
    if (!t)
        return;
    while (t->ranks) {
        trial_rank_t *r = t->ranks;
        kill(r->rk.pid, SIGKILL);
        while (waitpid(r->rk.pid, NULL, 0) < 0 && errno == EINTR) {
        }
        drop_rank(r);
    }
    for (pending_t *p = t->head, *next; p; p = next) {
        next = p->next;
        free(p);
    }
    event_free(t->ev_retry);
    free(t);
}

/*
 * agent_poll.c — the Registry.Assignments long poll (agent.h), on its own thread
 * with its own channel (one gRPC client serves one thread), so that a poll that
 * waits wait_s for work never delays the loop's heartbeats.
 *
 * The thread polls while the loop has given it a worker id: a poll that ends well
 * is followed by the next at once; NOT_FOUND queues a "register again" notice and
 * pauses until the loop registers; any other failure (tesseld away, a daemon
 * without Trials: UNIMPLEMENTED) waits the agent's backoff. What arrives goes to a
 * queue, and one byte down a pipe wakes the loop, which takes it from there.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "log.h"

typedef struct poll_item {
    struct poll_item *next;
    int kind; /* 1 assignment, 2 the worker is unknown */
    tsl_agent_assignment_t a;
    char why[512];
} poll_item_t;

struct tsl_agent_poll {
    const tsl_agent_config_t *cfg;
    tsl_agent_rpc_t *rpc;
    pthread_t thread;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char worker_id[64]; /* "" = paused */
    bool stop;
    poll_item_t *head, **tail;
    int pipe[2]; /* [0] the loop watches, [1] the thread writes a byte per item */
    tsl_backoff_t backoff;
};

static void push(tsl_agent_poll_t *p, poll_item_t *it)
{
    char one = 1;
    pthread_mutex_lock(&p->mu);
    it->next = NULL;
    *p->tail = it;
    p->tail = &it->next;
    pthread_mutex_unlock(&p->mu);
    if (write(p->pipe[1], &one, 1) < 0 && errno != EAGAIN)
        tsl_log_warnx("assignments: cannot wake the loop: %s", strerror(errno));
}

static void take(void *ud, tsl_agent_assignment_t *a)
{
    poll_item_t *it = calloc(1, sizeof *it);
    if (!it) {
        tsl_log_error("assignment %s rank %u lost: out of memory", a->trial_id, a->rank);
        tsl_agent_assignment_free(a);
        return;
    }
    it->kind = 1;
    it->a = *a;
    push((tsl_agent_poll_t *)ud, it);
}

/* Sleeps seconds, or less when stopped or given another worker id. */
static void nap(tsl_agent_poll_t *p, double seconds, const char *id)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)seconds;
    until.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&p->mu);
    while (!p->stop && !strcmp(p->worker_id, id) &&
           pthread_cond_timedwait(&p->cv, &p->mu, &until) == 0) {
    }
    pthread_mutex_unlock(&p->mu);
}

static void failed(tsl_agent_poll_t *p, tsl_agent_rpc_rc_t rc, const char *id, const char *why)
{
    if (rc == TSL_AGENT_RPC_UNKNOWN) {
        poll_item_t *it = calloc(1, sizeof *it);
        pthread_mutex_lock(&p->mu);
        if (!strcmp(p->worker_id, id))
            p->worker_id[0] = '\0'; /* until the loop registered again */
        pthread_mutex_unlock(&p->mu);
        if (it) {
            it->kind = 2;
            snprintf(it->why, sizeof it->why, "%s", why);
            push(p, it);
        }
        return;
    }
    bool first = p->backoff.attempt == 0;
    double delay = tsl_backoff_next(&p->backoff, (double)random() / RAND_MAX);
    if (first || rc == TSL_AGENT_RPC_REFUSED)
        tsl_log_warnx("assignments: %s; polling again in %.1f s", why, delay);
    nap(p, delay, id);
}

static void *poll_main(void *arg)
{
    tsl_agent_poll_t *p = arg;
    for (;;) {
        char id[64];
        tsl_err_t err = {0};
        pthread_mutex_lock(&p->mu);
        while (!p->stop && !p->worker_id[0])
            pthread_cond_wait(&p->cv, &p->mu);
        bool stop = p->stop;
        memcpy(id, p->worker_id, sizeof id);
        pthread_mutex_unlock(&p->mu);
        if (stop)
            return NULL;
        tsl_agent_rpc_rc_t rc =
            tsl_agent_rpc_assignments(p->rpc, id, p->cfg->trial_poll_s, take, p, &err);
        pthread_mutex_lock(&p->mu);
        stop = p->stop; /* a poll cancelled by tsl_agent_poll_stop is no failure */
        pthread_mutex_unlock(&p->mu);
        if (rc == TSL_AGENT_RPC_OK)
            tsl_backoff_reset(&p->backoff);
        else if (!stop)
            failed(p, rc, id, err.msg);
    }
}

tsl_agent_poll_t *tsl_agent_poll_start(const tsl_agent_config_t *cfg, tsl_err_t *err)
{
    tsl_agent_poll_t *p = calloc(1, sizeof *p);
    if (!p) {
        tsl_err_setc(err, TSL_E_NOMEM, "out of memory");
        return NULL;
    }
    p->cfg = cfg;
    p->tail = &p->head;
    p->pipe[0] = p->pipe[1] = -1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    tsl_backoff_init(&p->backoff, cfg->backoff_base_s, cfg->backoff_cap_s);
    p->rpc = tsl_agent_rpc_open_deadline(cfg, cfg->trial_poll_s + cfg->rpc_timeout_s, err);
    if (!p->rpc || pipe2(p->pipe, O_CLOEXEC | O_NONBLOCK) != 0 ||
        pthread_create(&p->thread, NULL, poll_main, p) != 0) {
        if (p->rpc)
            tsl_err_set(err, "assignments: cannot start the poll: %s", strerror(errno));
        tsl_agent_poll_stop(p);
        return NULL;
    }
    p->started = true;
    return p;
}

int tsl_agent_poll_fd(const tsl_agent_poll_t *p)
{
    return p->pipe[0];
}

void tsl_agent_poll_set_worker(tsl_agent_poll_t *p, const char *worker_id)
{
    pthread_mutex_lock(&p->mu);
    snprintf(p->worker_id, sizeof p->worker_id, "%s", worker_id);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

int tsl_agent_poll_take(tsl_agent_poll_t *p, tsl_agent_assignment_t *a, char *why, size_t cap)
{
    char buf[64];
    while (read(p->pipe[0], buf, sizeof buf) > 0) {
    }
    pthread_mutex_lock(&p->mu);
    poll_item_t *it = p->head;
    if (it) {
        p->head = it->next;
        if (!p->head)
            p->tail = &p->head;
    }
    pthread_mutex_unlock(&p->mu);
    if (!it)
        return 0;
    int kind = it->kind;
    if (kind == 1)
        *a = it->a;
    else
        snprintf(why, cap, "%s", it->why);
    free(it);
    return kind;
}

void tsl_agent_poll_stop(tsl_agent_poll_t *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (p->rpc)
        tsl_agent_rpc_cancel(p->rpc);
    if (p->started)
        pthread_join(p->thread, NULL);
    for (poll_item_t *it = p->head, *next; it; it = next) {
        next = it->next;
        if (it->kind == 1)
            tsl_agent_assignment_free(&it->a);
        free(it);
    }
    tsl_agent_rpc_close(p->rpc);
    for (int i = 0; i < 2; i++)
        if (p->pipe[i] >= 0)
            close(p->pipe[i]);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p);
}

/*
 * pool.c — the search pool: threads, a bounded FIFO, drain and cancel (pool.h).
 */
#include "pool.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

#define NICE_MAX 19

struct tsl_pool {
    pthread_mutex_t lock;
    pthread_cond_t work;         /* a job was queued, or stopping */
    pthread_cond_t idle;         /* a job finished */
    tsl_pool_job_t *head, *tail; /* waiting jobs, FIFO */
    uint32_t queued, running;
    uint32_t queue_cap, n_threads;
    uint32_t nice; /* priority steps below the daemon; 0 = unchanged */
    bool refusing, stopping;
    pthread_t *threads;
    tsl_pool_job_t **current; /* per thread: the job it runs, or NULL */
    tsl_pool_change_fn on_change;
    void *ud;
};

typedef struct worker_arg {
    tsl_pool_t *pool;
    uint32_t index;
} worker_arg_t;

static void notify_locked(tsl_pool_t *p)
{
    if (p->on_change)
        p->on_change(p->ud, p->queued, p->running);
}

static tsl_pool_job_t *take_locked(tsl_pool_t *p)
{
    tsl_pool_job_t *job = p->head;
    p->head = job->next;
    if (!p->head)
        p->tail = NULL;
    job->next = NULL;
    p->queued--;
    p->running++;
    return job;
}

/* Called by each pool thread on itself: SCHED_BATCH (the scheduler treats it as
 * CPU-bound and does not let its wake-ups preempt others), then nice steps below
 * the process. On Linux the nice value of PRIO_PROCESS with a thread id is that
 * thread's alone. */
static void lower_priority(uint32_t index, uint32_t nice)
{
    if (nice == 0)
        return;
    struct sched_param sp = {.sched_priority = 0};
    int rc = pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
    if (rc != 0)
        tsl_log_warnx("pool: search thread %u: SCHED_BATCH: %s", index, strerror(rc));
    id_t tid = (id_t)syscall(SYS_gettid);
    errno = 0;
    int now = getpriority(PRIO_PROCESS, tid);
    if (now == -1 && errno != 0)
        now = 0;
    int want = now + (int)nice > NICE_MAX ? NICE_MAX : now + (int)nice;
    if (want > now && setpriority(PRIO_PROCESS, tid, want) != 0)
        tsl_log_warn("pool: search thread %u: nice %d", index, want);
}

static void *worker_main(void *arg)
{
    worker_arg_t wa = *(worker_arg_t *)arg;
    tsl_pool_t *p = wa.pool;
    free(arg);
    lower_priority(wa.index, p->nice);
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->head && !p->stopping)
            pthread_cond_wait(&p->work, &p->lock);
        if (!p->head)
            break; /* stopping and nothing left */
        tsl_pool_job_t *job = take_locked(p);
        p->current[wa.index] = job;
        notify_locked(p);
        pthread_mutex_unlock(&p->lock);
        job->run(job);
        pthread_mutex_lock(&p->lock);
        p->current[wa.index] = NULL;
        p->running--;
        notify_locked(p);
        pthread_cond_broadcast(&p->idle);
        pthread_mutex_unlock(&p->lock);
        job->release(job); /* outside the lock: may free the job */
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

static uint32_t default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (uint32_t)n : 1u;
}

static int start_threads(tsl_pool_t *p, tsl_err_t *err)
{
    for (uint32_t i = 0; i < p->n_threads; i++) {
        worker_arg_t *wa = malloc(sizeof *wa);
        if (!wa)
            return tsl_err_set(err, "pool: out of memory");
        wa->pool = p;
        wa->index = i;
        int rc = pthread_create(&p->threads[i], NULL, worker_main, wa);
        if (rc != 0) {
            free(wa);
            p->n_threads = i; /* the ones started are joined by stop */
            return tsl_err_set(err, "pool: cannot start search thread %u: %s", i, strerror(rc));
        }
    }
    return 0;
}

int tsl_pool_start(uint32_t threads, uint32_t queue_cap, uint32_t nice,
                   tsl_pool_change_fn on_change, void *ud, tsl_pool_t **out, tsl_err_t *err)
{
    *out = NULL;
    tsl_pool_t *p = calloc(1, sizeof *p);
    if (!p)
        return tsl_err_set(err, "pool: out of memory");
    p->n_threads = threads ? threads : default_threads();
    p->queue_cap = queue_cap;
    p->nice = nice > NICE_MAX ? NICE_MAX : nice;
    p->on_change = on_change;
    p->ud = ud;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->idle, NULL);
    p->threads = calloc(p->n_threads, sizeof *p->threads);
    p->current = calloc(p->n_threads, sizeof *p->current);
    if (!p->threads || !p->current) {
        p->n_threads = 0;
        tsl_pool_stop(p);
        return tsl_err_set(err, "pool: out of memory");
    }
    if (start_threads(p, err) != 0) {
        tsl_pool_stop(p);
        return -1;
    }
    *out = p;
    return 0;
}

uint32_t tsl_pool_threads(const tsl_pool_t *p)
{
    return p->n_threads;
}

uint32_t tsl_pool_queue_cap(const tsl_pool_t *p)
{
    return p->queue_cap;
}

/* Unlinks the queued jobs whose cancel flag is set — their callers have given
 * up (cancelled, or the deadline passed while they waited) — so they stop
 * holding queue places. Returns them as a list for finish_cancelled(). */
static tsl_pool_job_t *unlink_cancelled_locked(tsl_pool_t *p)
{
    tsl_pool_job_t *out = NULL, **link = &p->head, *last = NULL;
    while (*link) {
        tsl_pool_job_t *j = *link;
        if (atomic_load(&j->cancel)) {
            *link = j->next;
            j->next = out;
            out = j;
            p->queued--;
        } else {
            last = j;
            link = &j->next;
        }
    }
    p->tail = last;
    if (out) {
        notify_locked(p);
        pthread_cond_broadcast(&p->idle);
    }
    return out;
}

/* Outside the lock: run() sees its cancel flag and only answers its caller. */
static void finish_cancelled(tsl_pool_job_t *list)
{
    while (list) {
        tsl_pool_job_t *next = list->next;
        list->next = NULL;
        list->run(list);
        list->release(list);
        list = next;
    }
}

static bool has_room_locked(const tsl_pool_t *p)
{
    return !p->refusing && p->queued + p->running < p->n_threads + p->queue_cap;
}

bool tsl_pool_has_room(tsl_pool_t *p)
{
    pthread_mutex_lock(&p->lock);
    tsl_pool_job_t *gone = unlink_cancelled_locked(p);
    bool room = has_room_locked(p);
    pthread_mutex_unlock(&p->lock);
    finish_cancelled(gone);
    return room;
}

int tsl_pool_submit(tsl_pool_t *p, tsl_pool_job_t *job)
{
    pthread_mutex_lock(&p->lock);
    tsl_pool_job_t *gone = unlink_cancelled_locked(p);
    if (!has_room_locked(p)) {
        pthread_mutex_unlock(&p->lock);
        finish_cancelled(gone);
        return -1;
    }
    job->next = NULL;
    if (p->tail)
        p->tail->next = job;
    else
        p->head = job;
    p->tail = job;
    p->queued++;
    notify_locked(p);
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->lock);
    finish_cancelled(gone);
    return 0;
}

void tsl_pool_counts(tsl_pool_t *p, uint32_t *queued, uint32_t *running)
{
    pthread_mutex_lock(&p->lock);
    *queued = p->queued;
    *running = p->running;
    pthread_mutex_unlock(&p->lock);
}

uint32_t tsl_pool_drain(tsl_pool_t *p, double timeout_s)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    double whole = (double)(long)timeout_s;
    until.tv_sec += (time_t)whole;
    until.tv_nsec += (long)((timeout_s - whole) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&p->lock);
    p->refusing = true;
    while (p->queued + p->running > 0) {
        if (pthread_cond_timedwait(&p->idle, &p->lock, &until) == ETIMEDOUT)
            break;
    }
    uint32_t left = p->queued + p->running;
    pthread_mutex_unlock(&p->lock);
    return left;
}

void tsl_pool_cancel_all(tsl_pool_t *p)
{
    pthread_mutex_lock(&p->lock);
    for (tsl_pool_job_t *j = p->head; j; j = j->next)
        atomic_store(&j->cancel, 1);
    for (uint32_t i = 0; i < p->n_threads; i++)
        if (p->current[i])
            atomic_store(&p->current[i]->cancel, 1);
    pthread_mutex_unlock(&p->lock);
}

void tsl_pool_stop(tsl_pool_t *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->refusing = true;
    p->stopping = true;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (uint32_t i = 0; i < p->n_threads; i++)
        pthread_join(p->threads[i], NULL);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->idle);
    free(p->threads);
    free(p->current);
    free(p);
}

/*
 * prof_coll.c — the figures that need ranks (prof_dev.h): collectives by group size
 * and message size (the nccl-tests method: the slowest rank's time, bus bandwidth by
 * tsl_prof_busbw_factor), and the overlap of a GEMM loop with communication. Each
 * rank is a thread with its own device and comm ops (as NCCL wants one thread per
 * GPU when the launches are not grouped); the comm ops' collectives keep the ranks in
 * step, so no other synchronisation is needed.
 */
#include "prof_dev.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANKS 16
#define MAX_ITERS 64u

typedef struct rank_job rank_job_t;
typedef int (*rank_fn)(rank_job_t *j, tsl_err_t *err);

struct rank_job {
    tsl_prof_dev_t *c; /* options, sizes; read only on the ranks' threads */
    const tsl_prof_ranks_t *r;
    void *world, *arg;
    int rank, size;
    rank_fn fn;
    tsl_devops_t *dev;
    tsl_commops_t *comm;
    tsl_group_t *g; /* the whole world */
    double *t;      /* this rank's times, fn's layout */
    tsl_err_t err;
    int rc;
};

static void *rank_main(void *arg)
{
    rank_job_t *j = arg;
    j->rc = -1;
    if (j->r->rank(j->r->ud, j->world, j->rank, j->size, &j->dev, &j->comm, &j->err) == 0 &&
        j->comm->group_split(j->comm, 0, j->rank, &j->g, &j->err) == 0)
        j->rc = j->fn(j, &j->err);
    if (j->g)
        j->comm->group_free(j->comm, j->g);
    if (j->comm)
        j->comm->destroy(j->comm);
    if (j->dev)
        j->dev->destroy(j->dev);
    return NULL;
}

/* fn on n ranks, one thread each; jobs[n] are the caller's (t and arg set). The first
 * failing rank's error is the result. */
static int run_ranks(tsl_prof_dev_t *c, const tsl_prof_ranks_t *r, int n, rank_fn fn,
                     rank_job_t *jobs, tsl_err_t *err)
{
    void *world = NULL;
    pthread_t th[MAX_RANKS];
    int started = 0, rc = 0;
    if (r->open(r->ud, n, &world, err))
        return -1;
    for (; started < n; started++) {
        rank_job_t *j = &jobs[started];
        j->c = c, j->r = r, j->world = world, j->rank = started, j->size = n, j->fn = fn;
        if (pthread_create(&th[started], NULL, rank_main, j) != 0) {
            rc = tsl_err_setc(err, TSL_E_NOMEM, "profile: cannot start rank %d's thread", started);
            break; /* the ranks started fail when their peers never come */
        }
    }
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    r->close(r->ud, world);
    for (int i = 0; i < started && rc == 0; i++)
        if (jobs[i].rc != 0) {
            *err = jobs[i].err;
            rc = -1;
        }
    return rc;
}

/* ---- collectives ---- */

typedef struct coll_entry {
    tsl_coll_t op;
    size_t bytes;
} coll_entry_t;

typedef struct coll_plan {
    coll_entry_t e[TSL_PROF_MAX_COLLS];
    uint32_t n;
    size_t max_bytes;
} coll_plan_t;

static int launch(rank_job_t *j, tsl_coll_t op, size_t bytes, tsl_buf_t *send, tsl_buf_t *recv,
                  tsl_err_t *err)
{
    tsl_commops_t *cm = j->comm;
    void *st = j->dev->stream(j->dev, TSL_STREAM_COMPUTE);
    size_t n = bytes / tsl_dtype_bytes(send->dt), part = n / (size_t)j->size;
    tsl_buf_t s = tsl_buf_view(send, 0, n), rv = tsl_buf_view(recv, 0, n);
    tsl_buf_t sp = tsl_buf_view(send, 0, part), rp = tsl_buf_view(recv, 0, part);
    switch (op) {
    case TSL_COLL_ALL_REDUCE: return cm->allreduce(cm, j->g, &rv, st, err);
    case TSL_COLL_ALL_GATHER: return cm->all_gather(cm, j->g, &sp, &rv, st, err);
    case TSL_COLL_REDUCE_SCATTER: return cm->reduce_scatter(cm, j->g, &s, &rp, st, err);
    case TSL_COLL_SEND_RECV:
        return cm->sendrecv(cm, &s, (j->rank + 1) % j->size, &rv, (j->rank + j->size - 1) % j->size,
                            st, err);
    default: return tsl_err_set(err, "profile: collective %d", (int)op);
    }
}

/* Rank j's times of one collective: warm-up, then iters loops of `inner` launches
 * between two events, each divided by inner, into t[iters]. */
static int time_coll(rank_job_t *j, tsl_event_t *e[2], const coll_entry_t *ce, tsl_buf_t *send,
                     tsl_buf_t *recv, double *t, tsl_err_t *err)
{
    tsl_devops_t *d = j->dev;
    uint32_t inner = ce->bytes <= (16u << 20) ? 20 : 2;
    for (uint32_t i = 0; i < j->c->o->warmup + 1; i++)
        if (launch(j, ce->op, ce->bytes, send, recv, err))
            return -1;
    for (uint32_t it = 0; it < j->c->o->iters; it++) {
        if (d->event_record(d, e[0], TSL_STREAM_COMPUTE, err))
            return -1;
        for (uint32_t i = 0; i < inner; i++)
            if (launch(j, ce->op, ce->bytes, send, recv, err))
                return -1;
        if (d->event_record(d, e[1], TSL_STREAM_COMPUTE, err) || d->sync(d, err) ||
            d->event_elapsed_s(d, e[0], e[1], &t[it], err))
            return -1;
        t[it] /= inner;
    }
    return 0;
}

static int coll_rank(rank_job_t *j, tsl_err_t *err)
{
    const coll_plan_t *pl = j->arg;
    tsl_devops_t *d = j->dev;
    tsl_buf_t send = {0}, recv = {0};
    tsl_event_t *e[2] = {NULL, NULL};
    size_t n = pl->max_bytes / tsl_dtype_bytes(d->act_dtype);
    int rc = -1;
    if (d->alloc(d, &send, n, d->act_dtype, err) || d->alloc(d, &recv, n, d->act_dtype, err) ||
        d->fill_uniform(d, &send, 0x7e55e1, (uint64_t)j->rank, 0, 0, 1, err) ||
        d->fill_uniform(d, &recv, 0x7e55e1, (uint64_t)j->rank + MAX_RANKS, 0, 0, 1, err) ||
        d->event_create(d, &e[0], err) || d->event_create(d, &e[1], err))
        goto out;
    for (uint32_t i = 0; i < pl->n; i++)
        if (time_coll(j, e, &pl->e[i], &send, &recv, j->t + (size_t)i * j->c->o->iters, err))
            goto out;
    rc = 0;
out:
    d->sync(d, &(tsl_err_t){0});
    for (int i = 0; i < 2; i++)
        if (e[i])
            d->event_destroy(d, e[i]);
    d->free(d, &send);
    d->free(d, &recv);
    return rc;
}

/* Every op and size for a world of g: 1 KiB, ×4, up to max, each a whole number of
 * elements per rank; no send/recv on a world of 1 (no peer). */
static void coll_plan(const tsl_prof_dev_t *c, int g, uint32_t room, coll_plan_t *pl)
{
    size_t el = tsl_dtype_bytes(c->dev->act_dtype), unit = el * (size_t)g;
    pl->n = 0;
    pl->max_bytes = c->sz.coll_max_bytes;
    for (int op = 0; op < TSL_COLL_COUNT; op++) {
        if (op == TSL_COLL_SEND_RECV && g == 1)
            continue;
        for (size_t bytes = 1024; bytes <= pl->max_bytes && pl->n < room; bytes *= 4)
            pl->e[pl->n++] = (coll_entry_t){(tsl_coll_t)op, bytes / unit * unit};
    }
}

/* Entry i's figure: per iteration the slowest rank, then the median. */
static void coll_result(tsl_prof_dev_t *c, const coll_plan_t *pl, uint32_t i, int g,
                        const rank_job_t *jobs)
{
    uint32_t iters = c->o->iters;
    double t[MAX_ITERS];
    for (uint32_t it = 0; it < iters; it++) {
        t[it] = 0;
        for (int r = 0; r < g; r++)
            t[it] = fmax(t[it], jobs[r].t[(size_t)i * iters + it]);
    }
    tsl_prof_coll_t *x = &c->p->colls[c->p->n_colls++];
    x->op = pl->e[i].op;
    x->group = (uint32_t)g;
    x->bytes = pl->e[i].bytes;
    x->time_s = tsl_prof_median(t, iters);
    x->algbw_gbps = tsl_prof_gbps((double)x->bytes, x->time_s);
    x->busbw_gbps = x->algbw_gbps * tsl_prof_busbw_factor(x->op, (uint32_t)g);
}

static int coll_world(tsl_prof_dev_t *c, const tsl_prof_ranks_t *r, int g, tsl_err_t *err)
{
    rank_job_t jobs[MAX_RANKS];
    coll_plan_t *pl = malloc(sizeof(*pl));
    double *t = pl ? calloc((size_t)g * TSL_PROF_MAX_COLLS * c->o->iters, sizeof(double)) : NULL;
    int rc = -1;
    if (!t) {
        tsl_err_setc(err, TSL_E_NOMEM, "profile: out of host memory for collectives");
        goto out;
    }
    coll_plan(c, g, TSL_PROF_MAX_COLLS - c->p->n_colls, pl);
    memset(jobs, 0, sizeof(jobs));
    for (int i = 0; i < g; i++)
        jobs[i].arg = pl, jobs[i].t = t + (size_t)i * TSL_PROF_MAX_COLLS * c->o->iters;
    if (run_ranks(c, r, g, coll_rank, jobs, err))
        goto out;
    for (uint32_t i = 0; i < pl->n; i++)
        coll_result(c, pl, i, g, jobs);
    rc = 0;
out:
    free(t);
    free(pl);
    return rc;
}

int tsl_prof_dev_collectives(tsl_prof_dev_t *c, const tsl_prof_ranks_t *r, int n, tsl_err_t *err)
{
    for (int g = n == 1 ? 1 : 2; g <= n && g <= MAX_RANKS; g++)
        if (coll_world(c, r, g, err))
            return -1;
    return 0;
}

/* ---- overlap: a GEMM loop on the compute stream, communication on the comm stream ---- */

typedef enum { COMM_NCCL, COMM_D2D, COMM_H2D } comm_kind_t;

typedef struct overlap_env {
    tsl_prof_dev_t *c;
    tsl_devops_t *d;
    tsl_commops_t *comm; /* COMM_NCCL */
    tsl_group_t *g;
    comm_kind_t kind;
    tsl_event_t *ev[4]; /* GEMM side start, end; comm side start, end */
    tsl_gemm_t gemm;
    tsl_buf_t a, b, cc, buf, dst; /* GEMM operands; all-reduce or copy buffers */
    void *host;                   /* COMM_H2D's source */
    size_t bytes;
} overlap_env_t;

static int comm_once(overlap_env_t *e, tsl_err_t *err)
{
    tsl_devops_t *d = e->d;
    if (e->kind == COMM_NCCL)
        return e->comm->allreduce(e->comm, e->g, &e->buf, d->stream(d, TSL_STREAM_COMM), err);
    if (e->kind == COMM_H2D)
        return d->copy_bytes(d, TSL_COPY_H2D, e->dst.ptr, e->host, e->bytes, TSL_STREAM_COMM, err);
    return d->copy_bytes(d, TSL_COPY_D2D, e->dst.ptr, e->buf.ptr, e->bytes, TSL_STREAM_COMM, err);
}

/* ng GEMMs and nc comm iterations (either may be 0) from one start; the elapsed time
 * of each side from the common start to its own end. */
static int overlap_run(overlap_env_t *e, uint32_t ng, uint32_t nc, double *gemm_s, double *comm_s,
                       tsl_err_t *err)
{
    tsl_devops_t *d = e->d;
    if (d->sync(d, err) || d->event_record(d, e->ev[0], TSL_STREAM_COMPUTE, err) ||
        d->stream_wait(d, TSL_STREAM_COMM, e->ev[0], err) ||
        d->event_record(d, e->ev[2], TSL_STREAM_COMM, err))
        return -1;
    for (uint32_t i = 0; i < (ng > nc ? ng : nc); i++)
        if ((i < ng && d->gemm(d, &e->gemm, err)) || (i < nc && comm_once(e, err)))
            return -1;
    return d->event_record(d, e->ev[1], TSL_STREAM_COMPUTE, err) ||
                   d->event_record(d, e->ev[3], TSL_STREAM_COMM, err) || d->sync(d, err) ||
                   d->event_elapsed_s(d, e->ev[0], e->ev[1], gemm_s, err) ||
                   d->event_elapsed_s(d, e->ev[2], e->ev[3], comm_s, err)
               ? -1
               : 0;
}

static int overlap_setup(overlap_env_t *e, tsl_err_t *err)
{
    tsl_devops_t *d = e->d;
    tsl_dtype_t dt = d->act_dtype;
    size_t gm = e->c->sz.overlap_gemm, nb = e->bytes / tsl_dtype_bytes(dt);
    for (int i = 0; i < 4; i++)
        if (d->event_create(d, &e->ev[i], err))
            return -1;
    if (d->alloc(d, &e->a, gm * gm, dt, err) || d->alloc(d, &e->b, gm * gm, dt, err) ||
        d->alloc(d, &e->cc, gm * gm, dt, err) || d->fill_uniform(d, &e->a, 1, 0, 0, 0, 1, err) ||
        d->fill_uniform(d, &e->b, 2, 0, 0, 0, 1, err))
        return -1;
    e->gemm = (tsl_gemm_t){.m = (int)gm,
                           .n = (int)gm,
                           .k = (int)gm,
                           .alpha = 1,
                           .a = e->a,
                           .b = e->b,
                           .c = e->cc,
                           .lda = (int)gm,
                           .ldb = (int)gm,
                           .ldc = (int)gm,
                           .batch = 1};
    if (e->kind == COMM_H2D) {
        if (d->host_alloc(d, e->bytes, &e->host, err))
            return -1;
        memset(e->host, 0x5a, e->bytes);
    } else if (d->alloc(d, &e->buf, nb, dt, err) || d->fill_uniform(d, &e->buf, 3, 0, 0, 0, 1, err))
        return -1;
    return e->kind == COMM_NCCL ? 0 : d->alloc(d, &e->dst, nb, dt, err);
}

static void overlap_teardown(overlap_env_t *e)
{
    tsl_devops_t *d = e->d;
    d->sync(d, &(tsl_err_t){0});
    for (int i = 0; i < 4; i++)
        if (e->ev[i])
            d->event_destroy(d, e->ev[i]);
    tsl_buf_t *bufs[] = {&e->a, &e->b, &e->cc, &e->buf, &e->dst};
    for (int i = 0; i < 5; i++)
        d->free(d, bufs[i]);
    d->host_free(d, e->host);
}

/* Runs of a side for `loop` seconds from the time of 3, at least 4, at most 1e5 (a
 * time too short to read). */
static float loops(double loop, double t3_s)
{
    return (float)fmin(1e5, fmax(4, t3_s > 0 ? loop / (t3_s / 3) : 4));
}

/* Loop lengths of about overlap_loop_s per side from one run of 3 each; with comm ops
 * every rank takes the group's mean (an all-reduce), so that all run as many
 * all-reduces. */
static int calibrate(overlap_env_t *e, uint32_t *ng, uint32_t *nc, tsl_err_t *err)
{
    tsl_devops_t *d = e->d;
    double g1, c1, x, loop = e->c->sz.overlap_loop_s;
    if (overlap_run(e, 3, 0, &g1, &x, err) || overlap_run(e, 0, 3, &x, &c1, err))
        return -1;
    float n[2] = {loops(loop, g1), loops(loop, c1)};
    if (e->kind == COMM_NCCL) {
        tsl_buf_t b = {0};
        int size = e->comm->group_size(e->g);
        int rc = d->alloc(d, &b, 2, TSL_DT_F32, err) || d->upload(d, &b, n, err) ||
                 e->comm->allreduce(e->comm, e->g, &b, d->stream(d, TSL_STREAM_COMPUTE), err) ||
                 d->sync(d, err) || d->download(d, &b, n, err);
        d->free(d, &b);
        if (rc)
            return -1;
        n[0] /= (float)size, n[1] /= (float)size;
    }
    *ng = (uint32_t)n[0], *nc = (uint32_t)n[1];
    return 0;
}

/* The overlap figure of one kind on device d (and, for COMM_NCCL, comm's group g). */
static int overlap_on(tsl_prof_dev_t *c, tsl_devops_t *d, tsl_commops_t *comm, tsl_group_t *g,
                      comm_kind_t kind, tsl_prof_overlap_t *o, tsl_err_t *err)
{
    overlap_env_t e = {
        .c = c, .d = d, .comm = comm, .g = g, .kind = kind, .bytes = c->sz.overlap_bytes[kind]};
    enum { REPS = 3 };
    double ga[REPS], ca[REPS], gt[REPS], ct[REPS], x;
    uint32_t ng, nc;
    int rc = -1;
    if (overlap_setup(&e, err) || calibrate(&e, &ng, &nc, err))
        goto out;
    for (uint32_t r = 0; r < REPS; r++)
        if (overlap_run(&e, ng, 0, &ga[r], &x, err) || overlap_run(&e, 0, nc, &x, &ca[r], err) ||
            overlap_run(&e, ng, nc, &gt[r], &ct[r], err))
            goto out;
    static const char *names[] = {"nccl-all-reduce", "d2d-copy", "h2d-copy"};
    memset(o, 0, sizeof(*o));
    snprintf(o->comm, sizeof(o->comm), "%s", names[kind]);
    o->stand_in = kind != COMM_NCCL;
    o->gemm_m = o->gemm_n = o->gemm_k = c->sz.overlap_gemm;
    o->comm_bytes = e.bytes;
    o->gemm_alone_s = tsl_prof_median(ga, REPS);
    o->comm_alone_s = tsl_prof_median(ca, REPS);
    o->gemm_together_s = tsl_prof_median(gt, REPS);
    o->comm_together_s = tsl_prof_median(ct, REPS);
    o->gemm_slowdown = o->gemm_together_s / o->gemm_alone_s;
    o->comm_slowdown = o->comm_together_s / o->comm_alone_s;
    rc = 0;
out:
    overlap_teardown(&e);
    return rc;
}

/* Every rank runs the GEMMs and the all-reduces (as every GPU computes while a
 * data-parallel all-reduce runs); rank 0's figure is kept, in its job's arg. */
static int overlap_rank(rank_job_t *j, tsl_err_t *err)
{
    tsl_prof_overlap_t o;
    if (overlap_on(j->c, j->dev, j->comm, j->g, COMM_NCCL, &o, err))
        return -1;
    if (j->rank == 0)
        *(tsl_prof_overlap_t *)j->arg = o;
    return 0;
}

int tsl_prof_dev_overlap(tsl_prof_dev_t *c, const tsl_prof_ranks_t *r, int n, tsl_err_t *err)
{
    tsl_prof_t *p = c->p;
    if (p->n_overlap + 2 > TSL_PROF_MAX_OVERLAP)
        return 0;
    if (n > 1) {
        rank_job_t jobs[MAX_RANKS];
        memset(jobs, 0, sizeof(jobs));
        jobs[0].arg = &p->overlap[p->n_overlap];
        if (run_ranks(c, r, n < MAX_RANKS ? n : MAX_RANKS, overlap_rank, jobs, err))
            return -1;
        p->n_overlap++;
    } else if (overlap_on(c, c->dev, NULL, NULL, COMM_D2D, &p->overlap[p->n_overlap], err)) {
        return -1;
    } else {
        p->n_overlap++;
    }
    if (overlap_on(c, c->dev, NULL, NULL, COMM_H2D, &p->overlap[p->n_overlap], err))
        return -1;
    p->n_overlap++;
    return 0;
}

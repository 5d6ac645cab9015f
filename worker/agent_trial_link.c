/*
 * agent_trial_link.c — the child's side of a link probe (an assignment of kind
 * "link", agent.h): two ranks on two nodes time the link between them with the
 * assignment's comm ops (nccl on GPUs, tcp on sim workers) over the device ops'
 * buffers, one message size at a time.
 *
 * Sizes: 1 KiB, 2 KiB, ... up to 1 GiB (nccl) or 64 MiB (tcp: the host's socket
 * path gains nothing from larger messages and a probe should not take minutes),
 * never more than a quarter of the device ops' memory limit. Per size: `warmup`
 * untimed rounds, then `iterations` timed ones (each synchronised; the median
 * is kept, as the profiler keeps it):
 *   sendrecv   rank 0 sends to rank 1, then rank 1 sends the same bytes back; the
 *              time of one direction is half the round trip;
 *   allreduce  a 2-rank in-place sum over the pair.
 * Bandwidths as nccl-tests defines them: algbw = bytes / time, busbw = algbw ×
 * tsl_prof_busbw_factor (send/recv 1, all-reduce 2(n−1)/n = 1 for two ranks).
 * Each size writes "link OP BYTES TIME_S ALGBW_GBPS BUSBW_GBPS" to the agent's
 * pipe (rank 0's agent reports them as a profile, agent_trials.c), and the end a
 * "report" line: iterations, the 1 GiB (or largest) all-reduce's median as
 * iter_median_s, the buffers' peak bytes.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "commops.h"
#include "devops.h"
#include "prof.h"

#define LINK_MIN_BYTES  1024ull
#define LINK_NCCL_BYTES (1ull << 30)
#define LINK_TCP_BYTES  (64ull << 20)

/* Both children's pipe writer (agent.h): here, below agent_trial_run.c, which calls in. */
int tsl_agent_put_line(int fd, const char *kind, const char *fmt, ...)
{
    char buf[8192];
    int n = snprintf(buf, sizeof buf, "%s ", kind);
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 2)
        n = (int)sizeof buf - 2;
    for (char *p = buf; p < buf + n; p++)
        if (*p == '\n')
            *p = ' ';
    buf[n++] = '\n';
    for (char *p = buf; n > 0;) {
        ssize_t k = write(fd, p, (size_t)n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (int)k;
    }
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void tsl_agent_link_bandwidth(int op, uint64_t bytes, double time_s, double *algbw_gbps,
                              double *busbw_gbps)
{
    *algbw_gbps = tsl_prof_gbps((double)bytes, time_s);
    *busbw_gbps = *algbw_gbps * tsl_prof_busbw_factor((tsl_coll_t)op, 2);
}

uint64_t tsl_agent_link_max_bytes(const char *comm, uint64_t memory_limit)
{
    uint64_t max = strcmp(comm, "nccl") == 0 ? LINK_NCCL_BYTES : LINK_TCP_BYTES;
    while (memory_limit > 0 && max > LINK_MIN_BYTES && 4 * max > memory_limit)
        max /= 2;
    return max;
}

typedef struct probe {
    const tsl_agent_assignment_t *a;
    tsl_devops_t *dev;
    tsl_commops_t *comm;
    tsl_group_t *pair;
    tsl_buf_t send, recv;
    void *stream;
} probe_t;

/* One round of op over the first n elements; rank 0 sends first. */
static int round_once(probe_t *p, tsl_coll_t op, size_t n, tsl_err_t *err)
{
    tsl_buf_t s = tsl_buf_view(&p->send, 0, n), r = tsl_buf_view(&p->recv, 0, n);
    tsl_commops_t *c = p->comm;
    int me = c->rank, peer = 1 - c->rank;
    if (op == TSL_COLL_ALL_REDUCE)
        return c->allreduce(c, p->pair, &s, p->stream, err);
    for (int leg = 0; leg < 2; leg++) { /* leg 0: 0 → 1, leg 1: 1 → 0 */
        bool sender = me == leg;
        if (c->sendrecv(c, sender ? &s : NULL, sender ? peer : -1, sender ? NULL : &r,
                        sender ? -1 : peer, p->stream, err))
            return -1;
    }
    return 0;
}

/* The median seconds of one op (send/recv: one direction) at n elements. */
static int time_op(probe_t *p, tsl_coll_t op, size_t n, double *median_s, tsl_err_t *err)
{
    uint32_t iters = p->a->iterations ? p->a->iterations : 10;
    double *t = calloc(iters, sizeof *t);
    if (!t)
        return tsl_err_setc(err, TSL_E_NOMEM, "out of memory");
    int rc = 0;
    for (uint32_t i = 0; rc == 0 && i < p->a->warmup; i++)
        rc = round_once(p, op, n, err);
    for (uint32_t i = 0; rc == 0 && i < iters; i++) {
        rc = p->comm->barrier(p->comm, p->pair, err) || p->dev->sync(p->dev, err) ? -1 : 0;
        double t0 = now_s();
        if (rc == 0)
            rc = round_once(p, op, n, err) || p->dev->sync(p->dev, err) ? -1 : 0;
        t[i] = (now_s() - t0) / (op == TSL_COLL_SEND_RECV ? 2.0 : 1.0);
    }
    *median_s = tsl_prof_median(t, iters);
    free(t);
    return rc;
}

static int sweep(probe_t *p, uint64_t max, int fd, double *last_s, tsl_err_t *err)
{
    static const tsl_coll_t ops[] = {TSL_COLL_SEND_RECV, TSL_COLL_ALL_REDUCE};
    for (uint64_t bytes = LINK_MIN_BYTES; bytes <= max; bytes *= 2)
        for (size_t k = 0; k < 2; k++) {
            double t = 0, alg = 0, bus = 0;
            if (time_op(p, ops[k], (size_t)(bytes / 4), &t, err))
                return tsl_err_prefix(err, "link probe, %s of %llu bytes",
                                      tsl_prof_coll_name(ops[k]), (unsigned long long)bytes);
            tsl_agent_link_bandwidth((int)ops[k], bytes, t, &alg, &bus);
            *last_s = t;
            if (tsl_agent_put_line(fd, "link", "%s %llu %.9g %.6g %.6g",
                                   ops[k] == TSL_COLL_SEND_RECV ? "sendrecv" : "allreduce",
                                   (unsigned long long)bytes, t, alg, bus))
                return tsl_err_set(err, "link probe: the agent's pipe closed");
        }
    return 0;
}

int tsl_agent_link_probe(const tsl_agent_assignment_t *a, tsl_devops_t *dev, tsl_commops_t *comm,
                         uint64_t memory_limit, int fd, tsl_err_t *err)
{
    probe_t p = {.a = a, .dev = dev, .comm = comm};
    if (a->world_size != 2 || comm->size != 2)
        return tsl_err_set(err, "assignment: a link probe has 2 ranks, not %u", a->world_size);
    uint64_t max = tsl_agent_link_max_bytes(a->comm, memory_limit);
    double last = 0;
    p.stream = dev->stream(dev, TSL_STREAM_COMM);
    int rc = comm->group_split(comm, 0, comm->rank, &p.pair, err);
    if (rc == 0)
        rc = dev->alloc(dev, &p.send, (size_t)(max / 4), TSL_DT_F32, err) ||
                     dev->alloc(dev, &p.recv, (size_t)(max / 4), TSL_DT_F32, err) ||
                     dev->fill_uniform(dev, &p.send, a->seed, (uint64_t)comm->rank, 0, 0.0f, 1.0f,
                                       err) ||
                     dev->zero(dev, &p.recv, err) || sweep(&p, max, fd, &last, err)
                 ? -1
                 : 0;
    if (rc == 0)
        rc = tsl_agent_put_line(fd, "report",
                                "{\"iters\": %u, \"iter_median_s\": %.9g, \"iter_min_s\": %.9g, "
                                "\"iter_max_s\": %.9g, \"peak_bytes\": %llu, \"oom\": false}",
                                a->iterations ? a->iterations : 10, last, last, last,
                                (unsigned long long)dev->peak_bytes(dev));
    if (p.pair)
        comm->group_free(comm, p.pair);
    dev->free(dev, &p.send);
    dev->free(dev, &p.recv);
    return rc;
}

/* Measurement m: name, unit, value and the probe's labels. */
static void put(tsl_agent_measurement_t *m, const tsl_agent_link_row_t *r, const char *what,
                const char *unit, double value, const char *const ends[3])
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s_%s", r->op, what);
    snprintf(m->unit, sizeof m->unit, "%s", unit);
    m->value = value;
    const char *keys[] = {"op", "bytes", "group", "node", "peer", "comm", "link"};
    char bytes[24];
    snprintf(bytes, sizeof bytes, "%llu", (unsigned long long)r->bytes);
    const char *vals[] = {r->op, bytes, "2", ends[0], ends[1], ends[2], "inter-node"};
    for (uint32_t i = 0; i < TSL_AGENT_MAX_LABELS && i < 7; i++) {
        snprintf(m->keys[i], sizeof m->keys[i], "%s", keys[i]);
        snprintf(m->values[i], sizeof m->values[i], "%s", vals[i]);
    }
    m->n_labels = 7;
}

int tsl_agent_link_profile(const tsl_agent_link_row_t *rows, uint32_t n, const char *node,
                           const char *peer, const char *comm, const char *trial_id,
                           tsl_agent_profile_t *p, tsl_err_t *err)
{
    memset(p, 0, sizeof *p);
    if (!(p->m = calloc(n ? 3 * (size_t)n : 1, sizeof *p->m)))
        return tsl_err_setc(err, TSL_E_NOMEM, "out of memory");
    /* one report per probe: sent again after a lost answer, it is stored once */
    snprintf(p->report_id, sizeof p->report_id, "link:%.40s", trial_id);
    p->measured_unix = (int64_t)time(NULL);
    const char *ends[3] = {node, peer, comm};
    for (uint32_t i = 0; i < n; i++) {
        const tsl_agent_link_row_t *r = &rows[i];
        put(&p->m[p->n++], r, "busbw", "bytes/s", r->busbw_gbps * 1e9, ends);
        put(&p->m[p->n++], r, "algbw", "bytes/s", r->algbw_gbps * 1e9, ends);
        put(&p->m[p->n++], r, "time", "s", r->time_s, ends);
    }
    return 0;
}

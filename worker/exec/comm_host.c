/*
 * comm_host.c — inboxes, groups and deterministic collectives over host send/recv
 * (comm_host.h), and the loopback transport: ranks as threads of one process.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm_host.h"

struct tsl_group {
    int n, me;    /* members, this rank's index */
    int *members; /* world ranks in key order */
};

int tsl_inbox_init(tsl_inbox_t *ib)
{
    memset(ib, 0, sizeof(*ib));
    if (pthread_mutex_init(&ib->mu, NULL))
        return -1;
    if (pthread_cond_init(&ib->cv, NULL)) {
        pthread_mutex_destroy(&ib->mu);
        return -1;
    }
    return 0;
}

void tsl_inbox_destroy(tsl_inbox_t *ib)
{
    while (ib->head) {
        tsl_msg_t *m = ib->head;
        ib->head = m->next;
        free(m);
    }
    pthread_cond_destroy(&ib->cv);
    pthread_mutex_destroy(&ib->mu);
}

tsl_msg_t *tsl_msg_new(int tag, const void *data, size_t bytes)
{
    tsl_msg_t *m = malloc(sizeof(*m) + bytes);
    if (!m)
        return NULL;
    m->next = NULL;
    m->tag = tag;
    m->bytes = bytes;
    if (data && bytes)
        memcpy(m->data, data, bytes);
    return m;
}

void tsl_inbox_push(tsl_inbox_t *ib, tsl_msg_t *m)
{
    pthread_mutex_lock(&ib->mu);
    tsl_msg_t **tail = &ib->head;
    while (*tail)
        tail = &(*tail)->next;
    *tail = m;
    pthread_cond_broadcast(&ib->cv);
    pthread_mutex_unlock(&ib->mu);
}

void tsl_inbox_close(tsl_inbox_t *ib, const char *why)
{
    pthread_mutex_lock(&ib->mu);
    if (!ib->closed) {
        ib->closed = true;
        snprintf(ib->why, sizeof(ib->why), "%s", why);
    }
    pthread_cond_broadcast(&ib->cv);
    pthread_mutex_unlock(&ib->mu);
}

/* The oldest message from src with tag, exactly `bytes` long, copied into out. */
static int host_recv(tsl_host_comm_t *h, int src, int tag, void *out, size_t bytes, tsl_err_t *err)
{
    tsl_inbox_t *ib = &h->inbox[src];
    tsl_msg_t *m = NULL;
    pthread_mutex_lock(&ib->mu);
    for (;;) {
        tsl_msg_t **pp = &ib->head;
        while (*pp && (*pp)->tag != tag)
            pp = &(*pp)->next;
        if (*pp) {
            m = *pp;
            *pp = m->next;
            break;
        }
        if (ib->closed)
            break;
        pthread_cond_wait(&ib->cv, &ib->mu);
    }
    pthread_mutex_unlock(&ib->mu);
    if (!m)
        return tsl_err_setc(err, TSL_E_UNAVAILABLE, "rank %d: receive from rank %d: %s", h->rank,
                            src, ib->why);
    int rc = 0;
    if (m->bytes != bytes)
        rc = tsl_err_setc(err, TSL_E_INTERNAL, "rank %d: expected %zu bytes from rank %d, got %zu",
                          h->rank, bytes, src, m->bytes);
    else
        memcpy(out, m->data, bytes);
    free(m);
    return rc;
}

static tsl_host_comm_t *hc(tsl_commops_t *c)
{
    return c->ctx;
}

static int check_f32(const tsl_buf_t *b, const char *op, tsl_err_t *err)
{
    if (b->dt != TSL_DT_F32)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED, "%s: host comm ops move float32 only", op);
    return 0;
}

static int host_sendrecv(tsl_commops_t *c, const tsl_buf_t *send, int send_peer, tsl_buf_t *recv,
                         int recv_peer, void *stream, tsl_err_t *err)
{
    (void)stream;
    tsl_host_comm_t *h = hc(c);
    if (send_peer >= 0 && (check_f32(send, "send", err) ||
                           h->send(h, send_peer, TSL_TAG_P2P, send->ptr, send->n * 4u, err)))
        return -1;
    if (recv_peer >= 0 && (check_f32(recv, "recv", err) ||
                           host_recv(h, recv_peer, TSL_TAG_P2P, recv->ptr, recv->n * 4u, err)))
        return -1;
    return 0;
}

/* Member 0 gathers `bytes` from each member into all[n × bytes] (its own first). */
static int gather_root(tsl_host_comm_t *h, tsl_group_t *g, const void *mine, size_t bytes,
                       unsigned char *all, tsl_err_t *err)
{
    if (g->me != 0)
        return h->send(h, g->members[0], TSL_TAG_COLL, mine, bytes, err);
    memcpy(all, mine, bytes);
    for (int i = 1; i < g->n; i++)
        if (host_recv(h, g->members[i], TSL_TAG_COLL, all + i * bytes, bytes, err))
            return -1;
    return 0;
}

/* Member 0 sends chunk i of `src` (each `bytes`, or the same chunk when shared) to member
 * i; the others receive theirs into out. */
static int scatter_root(tsl_host_comm_t *h, tsl_group_t *g, const unsigned char *src, bool shared,
                        void *out, size_t bytes, tsl_err_t *err)
{
    if (g->me != 0)
        return host_recv(h, g->members[0], TSL_TAG_COLL, out, bytes, err);
    for (int i = 1; i < g->n; i++)
        if (h->send(h, g->members[i], TSL_TAG_COLL, src + (shared ? 0 : i * bytes), bytes, err))
            return -1;
    if (out != src)
        memmove(out, src, bytes);
    return 0;
}

/* all[0] += all[i] for i = 1..n-1 in order, n chunks of cnt floats. */
static void sum_chunks(float *all, int n, size_t cnt)
{
    for (int i = 1; i < n; i++)
        for (size_t k = 0; k < cnt; k++)
            all[k] += all[(size_t)i * cnt + k];
}

static int host_allreduce(tsl_commops_t *c, tsl_group_t *g, tsl_buf_t *buf, void *stream,
                          tsl_err_t *err)
{
    (void)stream;
    if (check_f32(buf, "allreduce", err))
        return -1;
    if (g->n == 1)
        return 0;
    tsl_host_comm_t *h = hc(c);
    size_t bytes = buf->n * 4u;
    float *all = g->me == 0 ? malloc(bytes * g->n) : NULL;
    if (g->me == 0 && !all)
        return tsl_err_setc(err, TSL_E_NOMEM, "allreduce: out of host memory");
    int rc = gather_root(h, g, buf->ptr, bytes, (unsigned char *)all, err);
    if (!rc && g->me == 0)
        sum_chunks(all, g->n, buf->n);
    if (!rc)
        rc = scatter_root(h, g, (unsigned char *)all, true, buf->ptr, bytes, err);
    free(all);
    return rc;
}

static int host_reduce_scatter(tsl_commops_t *c, tsl_group_t *g, const tsl_buf_t *send,
                               tsl_buf_t *recv, void *stream, tsl_err_t *err)
{
    (void)stream;
    if (check_f32(send, "reduce_scatter", err) || check_f32(recv, "reduce_scatter", err))
        return -1;
    if (send->n != recv->n * (size_t)g->n)
        return tsl_err_set(err, "reduce_scatter: %zu elements do not split %d ways into %zu",
                           send->n, g->n, recv->n);
    tsl_host_comm_t *h = hc(c);
    size_t bytes = send->n * 4u;
    float *all = g->me == 0 ? malloc(bytes * g->n) : NULL;
    if (g->me == 0 && !all)
        return tsl_err_setc(err, TSL_E_NOMEM, "reduce_scatter: out of host memory");
    int rc = gather_root(h, g, send->ptr, bytes, (unsigned char *)all, err);
    if (!rc && g->me == 0)
        sum_chunks(all, g->n, send->n);
    if (!rc)
        rc = scatter_root(h, g, (unsigned char *)all, false, recv->ptr, recv->n * 4u, err);
    free(all);
    return rc;
}

static int host_all_gather(tsl_commops_t *c, tsl_group_t *g, const tsl_buf_t *send, tsl_buf_t *recv,
                           void *stream, tsl_err_t *err)
{
    (void)stream;
    if (check_f32(send, "all_gather", err) || check_f32(recv, "all_gather", err))
        return -1;
    if (recv->n != send->n * (size_t)g->n)
        return tsl_err_set(err, "all_gather: %d × %zu elements do not fill %zu", g->n, send->n,
                           recv->n);
    tsl_host_comm_t *h = hc(c);
    if (gather_root(h, g, send->ptr, send->n * 4u, recv->ptr, err))
        return -1;
    return scatter_root(h, g, recv->ptr, true, recv->ptr, recv->n * 4u, err);
}

/* Σ counts[0 .. n), or SIZE_MAX past cap. */
static size_t total_of(const size_t *counts, int n, size_t cap)
{
    size_t t = 0;
    for (int i = 0; i < n; i++) {
        if (counts[i] > cap - t)
            return SIZE_MAX;
        t += counts[i];
    }
    return t;
}

/* Every member sends each other member its chunk (an empty one too, so that every
 * receive has its message), then receives theirs in member order; its own chunk is a
 * copy. Sends never wait (comm_host.h), so the members cannot deadlock. */
static int host_all_to_allv(tsl_commops_t *c, tsl_group_t *g, const tsl_buf_t *send,
                            const size_t *send_counts, tsl_buf_t *recv, const size_t *recv_counts,
                            void *stream, tsl_err_t *err)
{
    (void)stream;
    if (check_f32(send, "all_to_allv", err) || check_f32(recv, "all_to_allv", err))
        return -1;
    if (total_of(send_counts, g->n, send->n) == SIZE_MAX ||
        total_of(recv_counts, g->n, recv->n) == SIZE_MAX)
        return tsl_err_set(err,
                           "all_to_allv: counts past the buffers (%zu to send, %zu to receive)",
                           send->n, recv->n);
    tsl_host_comm_t *h = hc(c);
    const float *sp = send->ptr;
    float *rp = recv->ptr, *own = NULL;
    for (int j = 0; j < g->n; sp += send_counts[j], j++)
        if (j == g->me)
            own = (float *)sp;
        else if (h->send(h, g->members[j], TSL_TAG_COLL, sp, send_counts[j] * 4u, err))
            return -1;
    for (int j = 0; j < g->n; rp += recv_counts[j], j++) {
        if (j != g->me) {
            if (host_recv(h, g->members[j], TSL_TAG_COLL, rp, recv_counts[j] * 4u, err))
                return -1;
        } else if (recv_counts[j] != send_counts[j]) {
            return tsl_err_set(err, "all_to_allv: member %d sends itself %zu, receives %zu", j,
                               send_counts[j], recv_counts[j]);
        } else if (recv_counts[j]) {
            memcpy(rp, own, recv_counts[j] * 4u);
        }
    }
    return 0;
}

static int host_barrier(tsl_commops_t *c, tsl_group_t *g, tsl_err_t *err)
{
    float one = 1.0f;
    tsl_buf_t b = {&one, 1, TSL_DT_F32};
    return host_allreduce(c, g, &b, NULL, err);
}

static int group_from_table(const int *table, int size, int rank, tsl_group_t **out, tsl_err_t *err)
{
    int color = table[2 * rank];
    tsl_group_t *g = calloc(1, sizeof(*g));
    int *mem = calloc((size_t)size, sizeof(int));
    if (!g || !mem) {
        free(g);
        free(mem);
        return tsl_err_setc(err, TSL_E_NOMEM, "group_split: out of host memory");
    }
    /* Members of my color, by (key, rank): insertion sort, groups are small. */
    for (int r = 0; r < size; r++) {
        if (table[2 * r] != color)
            continue;
        int i = g->n++;
        while (i > 0 && table[2 * mem[i - 1] + 1] > table[2 * r + 1])
            mem[i] = mem[i - 1], i--;
        mem[i] = r;
    }
    for (int i = 0; i < g->n; i++)
        if (mem[i] == rank)
            g->me = i;
    g->members = mem;
    *out = g;
    return 0;
}

/* Everyone sends (color, key) to rank 0, which sends the whole table back. */
static int host_group_split(tsl_commops_t *c, int color, int key, tsl_group_t **out, tsl_err_t *err)
{
    tsl_host_comm_t *h = hc(c);
    int mine[2] = {color, key};
    int *table = calloc((size_t)h->size * 2, sizeof(int));
    int *world = calloc((size_t)h->size, sizeof(int));
    tsl_group_t wg = {h->size, h->rank, world};
    int rc = -1;
    if (!table || !world) {
        tsl_err_setc(err, TSL_E_NOMEM, "group_split: out of host memory");
        goto out;
    }
    for (int r = 0; r < h->size; r++)
        world[r] = r;
    if (gather_root(h, &wg, mine, sizeof(mine), (unsigned char *)table, err) ||
        scatter_root(h, &wg, (unsigned char *)table, true, table, sizeof(int) * 2 * h->size, err))
        goto out;
    rc = group_from_table(table, h->size, h->rank, out, err);
out:
    free(table);
    free(world);
    return rc;
}

static void host_group_free(tsl_commops_t *c, tsl_group_t *g)
{
    (void)c;
    if (g)
        free(g->members);
    free(g);
}

static int host_group_size(const tsl_group_t *g)
{
    return g->n;
}
static int host_group_rank(const tsl_group_t *g)
{
    return g->me;
}

static void host_destroy(tsl_commops_t *c)
{
    if (!c)
        return;
    tsl_host_comm_t *h = hc(c);
    if (h && h->transport_free)
        h->transport_free(h);
    free(h);
    free(c);
}

void tsl_host_comm_ops(tsl_commops_t *c, const char *name, tsl_host_comm_t *h)
{
    memset(c, 0, sizeof(*c));
    c->name = name;
    c->rank = h->rank;
    c->size = h->size;
    c->ctx = h;
    c->group_split = host_group_split;
    c->group_free = host_group_free;
    c->group_size = host_group_size;
    c->group_rank = host_group_rank;
    c->sendrecv = host_sendrecv;
    c->allreduce = host_allreduce;
    c->reduce_scatter = host_reduce_scatter;
    c->all_gather = host_all_gather;
    c->all_to_allv = host_all_to_allv;
    c->barrier = host_barrier;
    c->destroy = host_destroy;
}

/* ---- loopback: inboxes[dst × size + src] shared by the threads of one process ---- */

struct tsl_loopback_world {
    int size;
    tsl_inbox_t *inboxes;
};

int tsl_comm_loopback_world(int size, tsl_loopback_world_t **out, tsl_err_t *err)
{
    if (size < 1)
        return tsl_err_set(err, "loopback: %d ranks; give at least 1", size);
    tsl_loopback_world_t *w = calloc(1, sizeof(*w));
    if (w)
        w->inboxes = calloc((size_t)size * size, sizeof(tsl_inbox_t));
    if (!w || !w->inboxes) {
        free(w);
        return tsl_err_setc(err, TSL_E_NOMEM, "loopback: out of memory");
    }
    w->size = size;
    for (int i = 0; i < size * size; i++)
        tsl_inbox_init(&w->inboxes[i]);
    *out = w;
    return 0;
}

void tsl_comm_loopback_world_free(tsl_loopback_world_t *w)
{
    if (!w)
        return;
    for (int i = 0; i < w->size * w->size; i++)
        tsl_inbox_destroy(&w->inboxes[i]);
    free(w->inboxes);
    free(w);
}

static int loopback_send(tsl_host_comm_t *h, int peer, int tag, const void *data, size_t bytes,
                         tsl_err_t *err)
{
    tsl_loopback_world_t *w = h->transport;
    if (peer < 0 || peer >= w->size)
        return tsl_err_set(err, "loopback: no rank %d in a world of %d", peer, w->size);
    tsl_msg_t *m = tsl_msg_new(tag, data, bytes);
    if (!m)
        return tsl_err_setc(err, TSL_E_NOMEM, "loopback: out of memory for a %zu-byte message",
                            bytes);
    tsl_inbox_push(&w->inboxes[peer * w->size + h->rank], m);
    return 0;
}

/* A rank that leaves (done, or failed) closes its side: a peer still waiting for it
 * gets an error instead of waiting forever. Messages already sent are still read. */
static void loopback_leave(tsl_host_comm_t *h)
{
    tsl_loopback_world_t *w = h->transport;
    char why[64];
    snprintf(why, sizeof(why), "rank %d left", h->rank);
    for (int p = 0; p < w->size; p++)
        tsl_inbox_close(&w->inboxes[p * w->size + h->rank], why);
}

int tsl_comm_loopback_rank(tsl_loopback_world_t *w, int rank, tsl_commops_t **out, tsl_err_t *err)
{
    if (rank < 0 || rank >= w->size)
        return tsl_err_set(err, "loopback: rank %d outside 0..%d", rank, w->size - 1);
    tsl_commops_t *c = malloc(sizeof(*c));
    tsl_host_comm_t *h = calloc(1, sizeof(*h));
    if (!c || !h) {
        free(c);
        free(h);
        return tsl_err_setc(err, TSL_E_NOMEM, "loopback: out of memory");
    }
    h->rank = rank;
    h->size = w->size;
    h->inbox = &w->inboxes[rank * w->size];
    h->send = loopback_send;
    h->transport_free = loopback_leave;
    h->transport = w;
    tsl_host_comm_ops(c, "loopback", h);
    *out = c;
    return 0;
}

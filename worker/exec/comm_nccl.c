/*
 * comm_nccl.c — comm ops over NCCL, one GPU per rank. Groups are ncclCommSplit of the
 * world communicator (every rank calls it, in the same order, as commops.h requires);
 * sendrecv pairs ncclSend and ncclRecv in one ncclGroupStart/End so neighbours that
 * exchange at once do not deadlock; all_to_allv is one group of an ncclSend and an
 * ncclRecv per other member (NCCL's own all-to-all is written so), this member's chunk
 * a device copy. Everything queues on the stream given.
 */
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdlib.h>
#include <string.h>

#include "commops.h"

struct tsl_group {
    ncclComm_t comm;
    int n, me;
    bool owned;
};

typedef struct nccl_ctx {
    tsl_group_t world;
    float *scratch; /* one float for barriers */
} nccl_ctx_t;

static int nerr(ncclResult_t r, const char *what, tsl_err_t *err)
{
    if (r == ncclSuccess)
        return 0;
    return tsl_err_setc(err, TSL_E_DEVICE, "nccl: %s: %s", what, ncclGetErrorString(r));
}

static ncclDataType_t ntype(tsl_dtype_t dt)
{
    return dt == TSL_DT_BF16 ? ncclBfloat16 : ncclFloat32;
}

int tsl_comm_nccl_unique_id(uint8_t id[TSL_NCCL_ID_BYTES], tsl_err_t *err)
{
    ncclUniqueId u;
    if (nerr(ncclGetUniqueId(&u), "ncclGetUniqueId", err))
        return -1;
    _Static_assert(sizeof(u) == TSL_NCCL_ID_BYTES, "ncclUniqueId is 128 bytes");
    memcpy(id, &u, sizeof(u));
    return 0;
}

static nccl_ctx_t *nx(tsl_commops_t *c)
{
    return c->ctx;
}

static int nc_split(tsl_commops_t *c, int color, int key, tsl_group_t **out, tsl_err_t *err)
{
    tsl_group_t *g = calloc(1, sizeof(*g));
    if (!g)
        return tsl_err_setc(err, TSL_E_NOMEM, "nccl: out of host memory");
    if (nerr(ncclCommSplit(nx(c)->world.comm, color, key, &g->comm, NULL), "ncclCommSplit", err) ||
        nerr(ncclCommCount(g->comm, &g->n), "ncclCommCount", err) ||
        nerr(ncclCommUserRank(g->comm, &g->me), "ncclCommUserRank", err)) {
        free(g);
        return -1;
    }
    g->owned = true;
    *out = g;
    return 0;
}

static void nc_group_free(tsl_commops_t *c, tsl_group_t *g)
{
    (void)c;
    if (g && g->owned)
        ncclCommDestroy(g->comm);
    free(g);
}

static int nc_gsize(const tsl_group_t *g)
{
    return g->n;
}
static int nc_grank(const tsl_group_t *g)
{
    return g->me;
}

static int nc_sendrecv(tsl_commops_t *c, const tsl_buf_t *send, int send_peer, tsl_buf_t *recv,
                       int recv_peer, void *stream, tsl_err_t *err)
{
    ncclComm_t w = nx(c)->world.comm;
    cudaStream_t s = stream;
    if (nerr(ncclGroupStart(), "ncclGroupStart", err))
        return -1;
    ncclResult_t r1 = ncclSuccess, r2 = ncclSuccess;
    if (send_peer >= 0)
        r1 = ncclSend(send->ptr, send->n, ntype(send->dt), send_peer, w, s);
    if (recv_peer >= 0)
        r2 = ncclRecv(recv->ptr, recv->n, ntype(recv->dt), recv_peer, w, s);
    ncclResult_t r3 = ncclGroupEnd();
    return nerr(r1, "ncclSend", err) || nerr(r2, "ncclRecv", err) || nerr(r3, "ncclGroupEnd", err)
               ? -1
               : 0;
}

static int nc_allreduce(tsl_commops_t *c, tsl_group_t *g, tsl_buf_t *buf, void *stream,
                        tsl_err_t *err)
{
    (void)c;
    if (g->n == 1)
        return 0;
    return nerr(ncclAllReduce(buf->ptr, buf->ptr, buf->n, ntype(buf->dt), ncclSum, g->comm,
                              (cudaStream_t)stream),
                "ncclAllReduce", err);
}

static int nc_reduce_scatter(tsl_commops_t *c, tsl_group_t *g, const tsl_buf_t *send,
                             tsl_buf_t *recv, void *stream, tsl_err_t *err)
{
    (void)c;
    if (send->n != recv->n * (size_t)g->n)
        return tsl_err_set(err, "reduce_scatter: %zu elements do not split %d ways", send->n, g->n);
    return nerr(ncclReduceScatter(send->ptr, recv->ptr, recv->n, ntype(recv->dt), ncclSum, g->comm,
                                  (cudaStream_t)stream),
                "ncclReduceScatter", err);
}

static int nc_all_gather(tsl_commops_t *c, tsl_group_t *g, const tsl_buf_t *send, tsl_buf_t *recv,
                         void *stream, tsl_err_t *err)
{
    (void)c;
    if (recv->n != send->n * (size_t)g->n)
        return tsl_err_set(err, "all_gather: %d × %zu elements do not fill %zu", g->n, send->n,
                           recv->n);
    return nerr(ncclAllGather(send->ptr, recv->ptr, send->n, ntype(send->dt), g->comm,
                              (cudaStream_t)stream),
                "ncclAllGather", err);
}

/* Grouped ncclSend/ncclRecv of the counted chunks (commops.h); empty chunks are left
 * out on both sides, which agree on the counts. */
static int nc_all_to_allv(tsl_commops_t *c, tsl_group_t *g, const tsl_buf_t *send,
                          const size_t *send_counts, tsl_buf_t *recv, const size_t *recv_counts,
                          void *stream, tsl_err_t *err)
{
    (void)c;
    size_t es = tsl_dtype_bytes(send->dt), so = 0, ro = 0;
    cudaStream_t s = stream;
    const char *sp = send->ptr;
    char *rp = recv->ptr;
    for (int j = 0; j < g->n; j++)
        so += send_counts[j], ro += recv_counts[j];
    if (so > send->n || ro > recv->n || send->dt != recv->dt)
        return tsl_err_set(err,
                           "all_to_allv: counts past the buffers (%zu of %zu to send, %zu of "
                           "%zu to receive) or two dtypes",
                           so, send->n, ro, recv->n);
    if (recv_counts[g->me] != send_counts[g->me])
        return tsl_err_set(err, "all_to_allv: member %d sends itself %zu, receives %zu", g->me,
                           send_counts[g->me], recv_counts[g->me]);
    so = ro = 0;
    for (int j = 0; j < g->me; j++) /* this member's own chunk: a copy, before the group */
        so += send_counts[j], ro += recv_counts[j];
    if (send_counts[g->me] && cudaMemcpyAsync(rp + ro * es, sp + so * es, send_counts[g->me] * es,
                                              cudaMemcpyDeviceToDevice, s) != cudaSuccess)
        return tsl_err_setc(err, TSL_E_DEVICE, "all_to_allv: cudaMemcpyAsync: %s",
                            cudaGetErrorString(cudaGetLastError()));
    ncclResult_t r = ncclGroupStart();
    so = ro = 0;
    for (int j = 0; j < g->n && r == ncclSuccess; j++) {
        if (j != g->me && send_counts[j])
            r = ncclSend(sp + so * es, send_counts[j], ntype(send->dt), j, g->comm, s);
        if (r == ncclSuccess && j != g->me && recv_counts[j])
            r = ncclRecv(rp + ro * es, recv_counts[j], ntype(recv->dt), j, g->comm, s);
        so += send_counts[j], ro += recv_counts[j];
    }
    ncclResult_t r2 = ncclGroupEnd();
    return nerr(r, "all_to_allv", err) || nerr(r2, "ncclGroupEnd", err) ? -1 : 0;
}

static int nc_barrier(tsl_commops_t *c, tsl_group_t *g, tsl_err_t *err)
{
    if (nerr(ncclAllReduce(nx(c)->scratch, nx(c)->scratch, 1, ncclFloat32, ncclSum, g->comm, 0),
             "barrier", err))
        return -1;
    cudaError_t e = cudaStreamSynchronize(0);
    if (e != cudaSuccess)
        return tsl_err_setc(err, TSL_E_DEVICE, "nccl: barrier: %s", cudaGetErrorString(e));
    return 0;
}

static void nc_destroy(tsl_commops_t *c)
{
    if (!c)
        return;
    nccl_ctx_t *x = nx(c);
    if (x) {
        if (x->world.comm)
            ncclCommDestroy(x->world.comm);
        cudaFree(x->scratch);
    }
    free(x);
    free(c);
}

int tsl_comm_nccl_create(const uint8_t id[TSL_NCCL_ID_BYTES], int rank, int size, int device,
                         tsl_commops_t **out, tsl_err_t *err)
{
    tsl_commops_t *c = calloc(1, sizeof(*c));
    nccl_ctx_t *x = calloc(1, sizeof(*x));
    ncclUniqueId u;
    if (!c || !x) {
        free(c);
        free(x);
        return tsl_err_setc(err, TSL_E_NOMEM, "nccl: out of host memory");
    }
    memcpy(&u, id, sizeof(u));
    *c = (tsl_commops_t){.name = "nccl",
                         .rank = rank,
                         .size = size,
                         .ctx = x,
                         .group_split = nc_split,
                         .group_free = nc_group_free,
                         .group_size = nc_gsize,
                         .group_rank = nc_grank,
                         .sendrecv = nc_sendrecv,
                         .allreduce = nc_allreduce,
                         .reduce_scatter = nc_reduce_scatter,
                         .all_gather = nc_all_gather,
                         .all_to_allv = nc_all_to_allv,
                         .barrier = nc_barrier,
                         .destroy = nc_destroy};
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&x->scratch, sizeof(float));
    if (e != cudaSuccess) {
        tsl_err_setc(err, TSL_E_DEVICE, "nccl: device %d: %s", device, cudaGetErrorString(e));
        nc_destroy(c);
        return -1;
    }
    if (nerr(ncclCommInitRank(&x->world.comm, size, u, rank), "ncclCommInitRank", err)) {
        x->world.comm = NULL;
        nc_destroy(c);
        return -1;
    }
    x->world.n = size;
    x->world.me = rank;
    *out = c;
    return 0;
}

/*
 * commops.h — the communication operations the stage executor is written against.
 *
 * Contract. A tsl_commops_t connects `size` ranks (world ranks 0..size-1); this one is
 * `rank`. Groups are made by tsl_comm_split-style calls: EVERY world rank calls
 * group_split in the same order (color ≥ 0 picks the group, key orders its members),
 * as MPI_Comm_split and ncclCommSplit do. Collectives run over a group, point-to-point
 * over world ranks. Reductions are sums.
 *
 * Implementations:
 *   loopback  ranks are threads of one process (tsl_comm_loopback_world + _rank);
 *   tcp       ranks are processes connected by TCP sockets; rank 0 is reached at
 *             host:port, every rank listens on port + rank (rendezvous by address);
 *   nccl      one GPU per rank; rank 0's ncclUniqueId reaches the others out of band
 *             (the daemon relays it). Compiled only when meson finds NCCL.
 * loopback and tcp move host memory: they pair with the cpu device ops. Their
 * reductions are deterministic: member 0's data + member 1's + ... in group order,
 * so equal inputs give equal bits on every member and every run.
 *
 * All-to-all with counts (all_to_allv, MPI_Alltoallv; the expert-parallel dispatch and
 * combine of a MoE layer, exec_moe.c): the counts are host arrays of group_size
 * entries that every member knows beforehand — member i's recv_counts[j] is member j's
 * send_counts[i] (exchange them first, e.g. with all_gather; a mismatch is an error on
 * the host transports and undefined on nccl). Chunks are packed in member order and may
 * be empty; send and recv must not overlap.
 *
 * Ordering. sendrecv sends (if send_peer ≥ 0) and receives (if recv_peer ≥ 0) as one
 * operation, so two neighbours exchanging at once never deadlock (NCCL groups the
 * pair). Messages between two ranks arrive in the order sent. `stream` is what
 * devops->stream() gives (NULL on cpu); nccl queues there, the host transports run
 * now. Buffers' dtype must be F32 or BF16 (tcp/loopback: F32 only).
 *
 * Errors: 0 / -1 with tsl_err_t; TSL_E_UNAVAILABLE when a peer is gone (tcp: its
 * process exited; loopback: its ops were destroyed), with the peer's rank in the message; TSL_E_DEVICE for NCCL failures.
 */
#ifndef TSL_EXEC_COMMOPS_H
#define TSL_EXEC_COMMOPS_H

#include <stdint.h>

#include "devops.h"
#include "err.h"

typedef struct tsl_group tsl_group_t;
typedef struct tsl_commops tsl_commops_t;

struct tsl_commops {
    const char *name; /* "loopback", "tcp", "nccl" */
    int rank, size;
    void *ctx;

    int (*group_split)(tsl_commops_t *c, int color, int key, tsl_group_t **out, tsl_err_t *err);
    void (*group_free)(tsl_commops_t *c, tsl_group_t *g);
    int (*group_size)(const tsl_group_t *g);
    int (*group_rank)(const tsl_group_t *g);

    int (*sendrecv)(tsl_commops_t *c, const tsl_buf_t *send, int send_peer, tsl_buf_t *recv,
                    int recv_peer, void *stream, tsl_err_t *err);
    /* In place, over all of buf. */
    int (*allreduce)(tsl_commops_t *c, tsl_group_t *g, tsl_buf_t *buf, void *stream,
                     tsl_err_t *err);
    /* send: group_size × recv->n elements; member i gets the sum of chunk i. */
    int (*reduce_scatter)(tsl_commops_t *c, tsl_group_t *g, const tsl_buf_t *send, tsl_buf_t *recv,
                          void *stream, tsl_err_t *err);
    /* recv: group_size × send->n elements, member i's data at chunk i. */
    int (*all_gather)(tsl_commops_t *c, tsl_group_t *g, const tsl_buf_t *send, tsl_buf_t *recv,
                      void *stream, tsl_err_t *err);
    /* send_counts[j] elements of send (from Σ_{j'<j} send_counts[j']) to member j;
     * recv_counts[j] from member j into recv (from Σ_{j'<j} recv_counts[j']). nccl:
     * grouped ncclSend/ncclRecv (a copy for this member's own chunk). */
    int (*all_to_allv)(tsl_commops_t *c, tsl_group_t *g, const tsl_buf_t *send,
                       const size_t *send_counts, tsl_buf_t *recv, const size_t *recv_counts,
                       void *stream, tsl_err_t *err);
    int (*barrier)(tsl_commops_t *c, tsl_group_t *g, tsl_err_t *err);

    void (*destroy)(tsl_commops_t *c);
};

/* loopback: a world shared by `size` threads; each thread takes its rank's ops.
 * The world outlives the ranks' ops; free it after every rank destroyed its ops. */
typedef struct tsl_loopback_world tsl_loopback_world_t;
int tsl_comm_loopback_world(int size, tsl_loopback_world_t **out, tsl_err_t *err);
int tsl_comm_loopback_rank(tsl_loopback_world_t *w, int rank, tsl_commops_t **out, tsl_err_t *err);
void tsl_comm_loopback_world_free(tsl_loopback_world_t *w);

/* tcp: host is an IPv4 address or name; rank r listens on port + r. Connects to all
 * peers within timeout_s. */
int tsl_comm_tcp_create(const char *host, int port, int rank, int size, double timeout_s,
                        tsl_commops_t **out, tsl_err_t *err);

/* nccl: id is the 128-byte ncclUniqueId rank 0 made with tsl_comm_nccl_unique_id. */
#define TSL_NCCL_ID_BYTES 128
int tsl_comm_nccl_unique_id(uint8_t id[TSL_NCCL_ID_BYTES], tsl_err_t *err);
int tsl_comm_nccl_create(const uint8_t id[TSL_NCCL_ID_BYTES], int rank, int size, int device,
                         tsl_commops_t **out, tsl_err_t *err);

#endif

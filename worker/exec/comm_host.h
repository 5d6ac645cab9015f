/*
 * comm_host.h — what the host transports (loopback, tcp) share: per-source inboxes
 * of tagged messages, and the group and collective ops built on plain send/recv.
 *
 * A transport supplies send(peer, tag, bytes), which must not wait for the peer to
 * receive (loopback queues into the peer's inbox; tcp writes to a socket whose reader
 * thread drains into the peer's inbox). Receives take the oldest message from the
 * source with the tag. Collectives go through group member 0, which sums in member
 * order, so every member gets the same bits.
 */
#ifndef TSL_EXEC_COMM_HOST_H
#define TSL_EXEC_COMM_HOST_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "commops.h"

enum { TSL_TAG_P2P = 0, TSL_TAG_COLL = 1 };

typedef struct tsl_msg {
    struct tsl_msg *next;
    int tag;
    size_t bytes;
    unsigned char data[];
} tsl_msg_t;

typedef struct tsl_inbox {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    tsl_msg_t *head;
    bool closed; /* the source is gone; why says how */
    char why[160];
} tsl_inbox_t;

int tsl_inbox_init(tsl_inbox_t *ib);
void tsl_inbox_destroy(tsl_inbox_t *ib);
/* Takes ownership of m. */
void tsl_inbox_push(tsl_inbox_t *ib, tsl_msg_t *m);
void tsl_inbox_close(tsl_inbox_t *ib, const char *why);
tsl_msg_t *tsl_msg_new(int tag, const void *data, size_t bytes);

typedef struct tsl_host_comm tsl_host_comm_t;
struct tsl_host_comm {
    int rank, size;
    tsl_inbox_t *inbox; /* [size]: messages from each source to this rank */
    int (*send)(tsl_host_comm_t *h, int peer, int tag, const void *data, size_t bytes,
                tsl_err_t *err);
    void (*transport_free)(tsl_host_comm_t *h);
    void *transport;
};

/* Fills c's function table and name from h (owned by c from now on). */
void tsl_host_comm_ops(tsl_commops_t *c, const char *name, tsl_host_comm_t *h);

#endif

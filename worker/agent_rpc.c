/*
 * agent_rpc.c — every call tessel-worker makes to tesseld (agent.h): the one
 * file that knows the wire (tessel.v1.Registry over the shared gRPC client).
 *
 * Status codes sort into what the agent does next: UNAVAILABLE, DEADLINE,
 * RESOURCE_EXHAUSTED, ABORTED, INTERNAL, UNKNOWN, CANCELLED → try again after a
 * backoff; NOT_FOUND → register again; UNAUTHENTICATED, PERMISSION_DENIED,
 * INVALID_ARGUMENT, UNIMPLEMENTED... → refused: retrying the same call cannot help.
 */
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "rpc_client.h"
#include "tessel/v1/registry.pb-c.h"

#define TSL_RPC_REGISTER  (tsl_rpc_methods[TSL_RPC_ID_REGISTER_WORKER].path)
#define TSL_RPC_HEARTBEAT (tsl_rpc_methods[TSL_RPC_ID_HEARTBEAT].path)
#define TSL_RPC_REPORT    (tsl_rpc_methods[TSL_RPC_ID_REPORT_PROFILE].path)

#ifndef TSL_VERSION
#define TSL_VERSION "0"
#endif

struct tsl_agent_rpc {
    tsl_rpc_client_t *c;
};

tsl_agent_rpc_t *tsl_agent_rpc_open(const tsl_agent_config_t *cfg, tsl_err_t *err)
{
    char msg[TSL_RPC_MSG_MAX];
    tsl_agent_rpc_t *r = calloc(1, sizeof *r);
    if (!r) {
        tsl_err_setc(err, TSL_E_NOMEM, "out of memory");
        return NULL;
    }
    r->c = tsl_rpc_client_open(cfg->server, cfg->token, cfg->rpc_timeout_s, msg, sizeof msg);
    if (!r->c) {
        tsl_err_set(err, "daemon.%s", msg);
        free(r);
        return NULL;
    }
    return r;
}

void tsl_agent_rpc_close(tsl_agent_rpc_t *r)
{
    if (!r)
        return;
    tsl_rpc_client_close(r->c);
    free(r);
}

static tsl_agent_rpc_rc_t classify(const tsl_rpc_status_t *st, const char *what, tsl_err_t *err)
{
    tsl_err_set(err, "%s: %s: %s", what, tsl_status_name(st->code),
                st->message[0] ? st->message : "no message");
    switch (st->code) {
    case GRPC_STATUS_OK: return TSL_AGENT_RPC_OK;
    case GRPC_STATUS_NOT_FOUND: return TSL_AGENT_RPC_UNKNOWN;
    case GRPC_STATUS_UNAVAILABLE:
    case GRPC_STATUS_DEADLINE_EXCEEDED:
    case GRPC_STATUS_RESOURCE_EXHAUSTED:
    case GRPC_STATUS_ABORTED:
    case GRPC_STATUS_INTERNAL:
    case GRPC_STATUS_UNKNOWN:
    case GRPC_STATUS_CANCELLED: return TSL_AGENT_RPC_RETRY;
    default: return TSL_AGENT_RPC_REFUSED;
    }
}

/* One unary call; *out is the reply on OK (free it), NULL otherwise. */
static tsl_agent_rpc_rc_t call(tsl_agent_rpc_t *r, const char *method, const ProtobufCMessage *req,
                               const ProtobufCMessageDescriptor *desc, ProtobufCMessage **out,
                               tsl_err_t *err)
{
    tsl_rpc_status_t st = {0};
    if (tsl_rpc_unary(r->c, method, req, desc, out, &st) == 0)
        return TSL_AGENT_RPC_OK;
    return classify(&st, strrchr(method, '/') + 1, err);
}

tsl_agent_rpc_rc_t tsl_agent_rpc_register(tsl_agent_rpc_t *r, const tsl_agent_node_t *node,
                                          uint32_t heartbeat_s, tsl_agent_identity_t *id,
                                          tsl_err_t *err)
{
    Tessel__V1__RegisterRequest req = TESSEL__V1__REGISTER_REQUEST__INIT;
    Tessel__V1__Device devs[TSL_AGENT_MAX_DEVICES], *ptrs[TSL_AGENT_MAX_DEVICES];
    ProtobufCMessage *reply = NULL;
    for (uint32_t i = 0; i < node->n_devices; i++) {
        const tsl_agent_device_t *d = &node->devices[i];
        tessel__v1__device__init(&devs[i]);
        devs[i].index = d->index;
        devs[i].model = (char *)d->model;
        devs[i].memory_bytes = d->memory_bytes;
        devs[i].sm_count = d->sm_count;
        devs[i].uuid = (char *)d->uuid;
        ptrs[i] = &devs[i];
    }
    req.hostname = (char *)node->hostname;
    req.n_devices = node->n_devices;
    req.devices = ptrs;
    req.driver_version = (char *)node->driver_version;
    req.cuda_version = (char *)node->cuda_version;
    req.nccl_version = (char *)node->nccl_version;
    req.simulated = node->simulated;
    req.heartbeat_interval_s = heartbeat_s;
    req.version = TSL_VERSION;
    tsl_agent_rpc_rc_t rc = call(r, TSL_RPC_REGISTER, &req.base,
                                 &tessel__v1__register_response__descriptor, &reply, err);
    if (rc == TSL_AGENT_RPC_OK) {
        Tessel__V1__RegisterResponse *resp = (Tessel__V1__RegisterResponse *)reply;
        snprintf(id->worker_id, sizeof id->worker_id, "%s", resp->worker_id);
        id->heartbeat_s = resp->heartbeat_interval_s ? resp->heartbeat_interval_s : heartbeat_s;
        id->known = resp->known;
        protobuf_c_message_free_unpacked(reply, NULL);
    }
    return rc;
}

tsl_agent_rpc_rc_t tsl_agent_rpc_heartbeat(tsl_agent_rpc_t *r, const char *worker_id,
                                           bool deregister, tsl_err_t *err)
{
    Tessel__V1__HeartbeatRequest req = TESSEL__V1__HEARTBEAT_REQUEST__INIT;
    ProtobufCMessage *reply = NULL;
    req.worker_id = (char *)worker_id;
    req.deregister = deregister;
    tsl_agent_rpc_rc_t rc = call(r, TSL_RPC_HEARTBEAT, &req.base,
                                 &tessel__v1__heartbeat_response__descriptor, &reply, err);
    if (reply)
        protobuf_c_message_free_unpacked(reply, NULL);
    return rc;
}

/* ---- reports ------------------------------------------------------------------------------ */

typedef struct packed_labels {
    Tessel__V1__Measurement__LabelsEntry e[TSL_AGENT_MAX_LABELS];
    Tessel__V1__Measurement__LabelsEntry *p[TSL_AGENT_MAX_LABELS];
} packed_labels_t;

static void fill_measurement(Tessel__V1__Measurement *o, packed_labels_t *l,
                             const tsl_agent_measurement_t *m)
{
    tessel__v1__measurement__init(o);
    o->name = (char *)m->name;
    o->unit = (char *)m->unit;
    o->value = m->value;
    o->per_device = m->per_device;
    o->device_index = m->device_index;
    for (uint32_t k = 0; k < m->n_labels; k++) {
        tessel__v1__measurement__labels_entry__init(&l->e[k]);
        l->e[k].key = (char *)m->keys[k];
        l->e[k].value = (char *)m->values[k];
        l->p[k] = &l->e[k];
    }
    o->n_labels = m->n_labels;
    o->labels = l->p;
}

int tsl_agent_rpc_pack_report(const char *worker_id, const tsl_agent_profile_t *p, void **buf,
                              size_t *n, tsl_err_t *err)
{
    Tessel__V1__ReportProfileRequest req = TESSEL__V1__REPORT_PROFILE_REQUEST__INIT;
    size_t k = p->n ? p->n : 1;
    Tessel__V1__Measurement *ms = calloc(k, sizeof *ms), **ptrs = calloc(k, sizeof *ptrs);
    packed_labels_t *labels = calloc(k, sizeof *labels);
    int rc = -1;
    *buf = NULL;
    if (!ms || !ptrs || !labels) {
        tsl_err_setc(err, TSL_E_NOMEM, "report: out of memory");
        goto out;
    }
    for (size_t i = 0; i < p->n; i++) {
        fill_measurement(&ms[i], &labels[i], &p->m[i]);
        ptrs[i] = &ms[i];
    }
    req.worker_id = (char *)worker_id;
    req.report_id = (char *)p->report_id;
    req.measured_unix = p->measured_unix;
    req.n_measurements = p->n;
    req.measurements = ptrs;
    *n = protobuf_c_message_get_packed_size(&req.base);
    *buf = malloc(*n ? *n : 1);
    if (!*buf) {
        tsl_err_setc(err, TSL_E_NOMEM, "report: out of memory");
        goto out;
    }
    protobuf_c_message_pack(&req.base, *buf);
    rc = 0;
out:
    free(ms);
    free(ptrs);
    free(labels);
    return rc;
}

tsl_agent_rpc_rc_t tsl_agent_rpc_send_report(tsl_agent_rpc_t *r, const char *worker_id,
                                             const void *buf, size_t n, uint32_t *stale,
                                             tsl_err_t *err)
{
    Tessel__V1__ReportProfileRequest *req =
        tessel__v1__report_profile_request__unpack(NULL, n, buf);
    ProtobufCMessage *reply = NULL;
    *stale = 0;
    if (!req) {
        tsl_err_set(err, "report: the spooled bytes are not a ReportProfileRequest");
        return TSL_AGENT_RPC_REFUSED;
    }
    /* Spooled under an earlier id (a changed GPU set): the current one counts. */
    char *old = req->worker_id;
    req->worker_id = (char *)worker_id;
    tsl_agent_rpc_rc_t rc = call(r, TSL_RPC_REPORT, &req->base,
                                 &tessel__v1__report_profile_response__descriptor, &reply, err);
    req->worker_id = old;
    if (rc == TSL_AGENT_RPC_OK) {
        *stale = ((Tessel__V1__ReportProfileResponse *)reply)->plans_marked_stale;
        protobuf_c_message_free_unpacked(reply, NULL);
    }
    tessel__v1__report_profile_request__free_unpacked(req, NULL);
    return rc;
}

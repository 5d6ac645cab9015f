/*
 * agent_rpc.c — every call tessel-worker makes to tesseld (agent.h): the one
 * file that knows the wire (tessel.v1.Registry over the shared gRPC client).
 *
 * Status codes sort into what the agent does next: UNAVAILABLE, DEADLINE,
 * RESOURCE_EXHAUSTED, ABORTED, INTERNAL, UNKNOWN, CANCELLED → try again after a
 * backoff; NOT_FOUND → register again; UNAUTHENTICATED, PERMISSION_DENIED,
 * INVALID_ARGUMENT, UNIMPLEMENTED... → refused: retrying the same call cannot help.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "rpc_client.h"
#include "tessel/v1/registry.pb-c.h"

#define TSL_RPC_REGISTER  (tsl_rpc_methods[TSL_RPC_ID_REGISTER_WORKER].path)
#define TSL_RPC_HEARTBEAT (tsl_rpc_methods[TSL_RPC_ID_HEARTBEAT].path)
#define TSL_RPC_REPORT    (tsl_rpc_methods[TSL_RPC_ID_REPORT_PROFILE].path)
#define TSL_RPC_ASSIGN    (tsl_rpc_methods[TSL_RPC_ID_ASSIGNMENTS].path)
#define TSL_RPC_TRIAL     (tsl_rpc_methods[TSL_RPC_ID_REPORT_TRIAL].path)

#ifndef TSL_VERSION
#define TSL_VERSION "0"
#endif

struct tsl_agent_rpc {
    tsl_rpc_client_t *c;
    pthread_mutex_t mu; /* guards stream: tsl_agent_rpc_cancel comes from another thread */
    tsl_rpc_stream_t *stream;
    bool cancelled;
};

tsl_agent_rpc_t *tsl_agent_rpc_open(const tsl_agent_config_t *cfg, tsl_err_t *err)
{
    return tsl_agent_rpc_open_deadline(cfg, cfg->rpc_timeout_s, err);
}

tsl_agent_rpc_t *tsl_agent_rpc_open_deadline(const tsl_agent_config_t *cfg, double timeout_s,
                                             tsl_err_t *err)
{
    char msg[TSL_RPC_MSG_MAX];
    tsl_agent_rpc_t *r = calloc(1, sizeof *r);
    if (!r) {
        tsl_err_setc(err, TSL_E_NOMEM, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&r->mu, NULL);
    tsl_rpc_tls_t tls = {.ca_file = cfg->ca_file[0] ? cfg->ca_file : NULL,
                         .cert_file = cfg->cert_file[0] ? cfg->cert_file : NULL,
                         .key_file = cfg->key_file[0] ? cfg->key_file : NULL,
                         .ca_name = "ca_file",
                         .cert_name = "cert_file",
                         .key_name = "key_file"};
    r->c = tsl_rpc_client_open_tls(cfg->server, cfg->token, timeout_s, cfg->tls ? &tls : NULL, msg,
                                   sizeof msg);
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
    pthread_mutex_destroy(&r->mu);
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

/* ---- trials ------------------------------------------------------------------------------- */

void tsl_agent_rpc_cancel(tsl_agent_rpc_t *r)
{
    pthread_mutex_lock(&r->mu);
    r->cancelled = true;
    if (r->stream)
        tsl_rpc_stream_cancel(r->stream);
    pthread_mutex_unlock(&r->mu);
}

static void assignment_of(const Tessel__V1__Assignment *m, tsl_agent_assignment_t *a)
{
    memset(a, 0, sizeof *a);
    snprintf(a->trial_id, sizeof a->trial_id, "%s", m->trial_id);
    snprintf(a->plan_fingerprint, sizeof a->plan_fingerprint, "%s", m->plan_fingerprint);
    a->rank = m->rank;
    a->world_size = m->world_size;
    a->iterations = m->iterations;
    a->warmup = m->warmup;
    a->device_index = m->device_index;
    a->plan_index = m->plan_index;
    a->has_nccl_id = m->nccl_unique_id.len == sizeof a->nccl_id;
    if (a->has_nccl_id)
        memcpy(a->nccl_id, m->nccl_unique_id.data, sizeof a->nccl_id);
    snprintf(a->comm, sizeof a->comm, "%s", m->comm);
    snprintf(a->devops, sizeof a->devops, "%s", m->devops);
    snprintf(a->rendezvous, sizeof a->rendezvous, "%s", m->rendezvous);
    a->document = strdup(m->document ? m->document : "");
    a->cancel = m->cancel;
    a->seed = m->seed;
    a->timeout_s = m->timeout_s;
    snprintf(a->kind, sizeof a->kind, "%s", m->kind ? m->kind : "");
    snprintf(a->peer, sizeof a->peer, "%s", m->peer ? m->peer : "");
}

tsl_agent_rpc_rc_t tsl_agent_rpc_assignments(tsl_agent_rpc_t *r, const char *worker_id,
                                             uint32_t wait_s,
                                             void (*take)(void *ud, tsl_agent_assignment_t *a),
                                             void *ud, tsl_err_t *err)
{
    Tessel__V1__AssignmentsRequest req = TESSEL__V1__ASSIGNMENTS_REQUEST__INIT;
    tsl_rpc_status_t st = {0};
    ProtobufCMessage *m = NULL;
    req.worker_id = (char *)worker_id;
    req.wait_s = wait_s;
    pthread_mutex_lock(&r->mu);
    if (r->cancelled) {
        pthread_mutex_unlock(&r->mu);
        tsl_err_set(err, "Assignments: stopping");
        return TSL_AGENT_RPC_RETRY;
    }
    tsl_rpc_stream_t *s = r->stream = tsl_rpc_stream_start(r->c, TSL_RPC_ASSIGN, &req.base, &st);
    pthread_mutex_unlock(&r->mu);
    if (!s)
        return classify(&st, "Assignments", err);
    while (tsl_rpc_stream_next(s, &tessel__v1__assignment__descriptor, &m, &st) == 1) {
        tsl_agent_assignment_t a;
        assignment_of((const Tessel__V1__Assignment *)m, &a);
        protobuf_c_message_free_unpacked(m, NULL);
        take(ud, &a);
    }
    pthread_mutex_lock(&r->mu);
    r->stream = NULL;
    pthread_mutex_unlock(&r->mu);
    if (tsl_rpc_stream_finish(s, &st) == 0)
        return TSL_AGENT_RPC_OK;
    return classify(&st, "Assignments", err);
}

typedef struct phase_entries {
    Tessel__V1__ReportTrialRequest__PhaseSEntry e[5];
    Tessel__V1__ReportTrialRequest__PhaseSEntry *p[5];
} phase_entries_t;

static void fill_phases(Tessel__V1__ReportTrialRequest *req, phase_entries_t *ph,
                        const tsl_agent_trial_report_t *rep)
{
    const char *names[5] = {"fwd", "bwd", "comm", "bubble", "opt"};
    const double v[5] = {rep->fwd_s, rep->bwd_s, rep->comm_s, rep->bubble_s, rep->opt_s};
    for (int i = 0; i < 5; i++) {
        tessel__v1__report_trial_request__phase_sentry__init(&ph->e[i]);
        ph->e[i].key = (char *)names[i];
        ph->e[i].value = v[i];
        ph->p[i] = &ph->e[i];
    }
    req->n_phase_s = 5;
    req->phase_s = ph->p;
}

tsl_agent_rpc_rc_t tsl_agent_rpc_report_trial(tsl_agent_rpc_t *r, const char *worker_id,
                                              const tsl_agent_trial_report_t *rep, bool *cancelled,
                                              tsl_err_t *err)
{
    Tessel__V1__ReportTrialRequest req = TESSEL__V1__REPORT_TRIAL_REQUEST__INIT;
    phase_entries_t ph;
    ProtobufCMessage *reply = NULL;
    req.trial_id = (char *)rep->trial_id;
    req.worker_id = (char *)worker_id;
    req.rank = rep->rank;
    req.ready = rep->ready;
    req.rendezvous = (char *)rep->rendezvous;
    if (rep->has_nccl_id)
        req.nccl_unique_id = (ProtobufCBinaryData){sizeof rep->nccl_id, (uint8_t *)rep->nccl_id};
    req.error = (char *)rep->error;
    if (!rep->ready && !rep->error[0]) {
        req.iter_time_s = rep->iter_time_s;
        req.iter_min_s = rep->iter_min_s;
        req.iter_max_s = rep->iter_max_s;
        req.peak_bytes = rep->peak_bytes;
        req.oom = rep->oom;
        req.iterations = rep->iterations;
        req.loss = rep->loss;
        fill_phases(&req, &ph, rep);
    }
    *cancelled = false;
    tsl_agent_rpc_rc_t rc = call(r, TSL_RPC_TRIAL, &req.base,
                                 &tessel__v1__report_trial_response__descriptor, &reply, err);
    if (rc == TSL_AGENT_RPC_OK) {
        *cancelled = ((Tessel__V1__ReportTrialResponse *)reply)->cancelled;
        protobuf_c_message_free_unpacked(reply, NULL);
    }
    return rc;
}

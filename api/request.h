/*
 * request.h — a tessel.v1.PlanRequest checked and turned into the planner's
 * input, and the request's fields to and from the wire.
 *
 * In: a PlanRequest becomes a model, a cluster and a tsl_request_t, every field
 * checked against the caller's limits (tsl_request_limits_t: the daemon fills it
 * from its [limits] config, a worker or a test from anything) and against
 * physical bounds, then by the planner's own validation, before any search
 * starts. Errors carry TSL_E_INVALID and name the field and the limit
 * ("global_batch: 100000 is above the limit max_batch=65536") or carry the
 * planner's message prefixed with the field ("model_preset: ..."). A
 * cluster_spec is only ever a short spec: it is never opened as a file.
 *
 * Physical bounds of the hardware figures a request may describe (cluster_json,
 * docs/cluster-format.md); a value outside them is INVALID_ARGUMENT naming it:
 *   memory_gb      GPU memory           1/16 GiB .. 16 TiB
 *   peak_tflops    GPU peak             0.1 .. 100 000 TFLOP/s
 *   efficiency     achieved fraction    0.01 .. 1 (an assumed floor: below 1 % of
 *                  peak no GEMM of a Transformer layer runs; 1e-300 priced 10^30 s)
 *   intra_gbps, pcie_gbps, inter_gbps, inter_gbps_matrix, nic_gbps
 *                  bandwidths           0.01 .. 100 000 GB/s (nic_gbps: or 0, none)
 *   cpu_memory_gb  host memory a node   0 .. 1 PiB
 *   overlap_slowdown  slowdown factor   1 .. 100
 *
 * A `registered` cluster (RegisteredCluster: worker hostnames, none = all) is
 * assembled by tesseld from its store (daemon/registry_cluster.h), which hands
 * the document to tsl_plan_request_decode_registered; tsl_plan_request_decode
 * checks the names only and refuses the request. Names are 1..127 printable
 * characters without quotes, at most TSL_REQUEST_MAX_NODES, each once; errors
 * name "cluster.registered.nodes".
 *
 * The wire: tsl_request_from_proto / tsl_request_to_proto copy every field of
 * planner/request_fields.h between a tsl_request_t and a PlanRequest or a
 * PlanOptions (whichever message is given), by field name through the
 * protobuf-c descriptor; fields the message does not have are skipped.
 *
 * The model carries the request's MTP depths (mtp_layers, no_mtp; mtp.h) as plan
 * --local builds it, so the fingerprint, the plan document's model and the
 * max_layers limit see the layers searched.
 *
 * Ownership: tsl_plan_input_t owns its model, cluster and request_json; free it
 * with tsl_plan_input_free (also after a failed decode).
 */
#ifndef TSL_API_REQUEST_H
#define TSL_API_REQUEST_H

#include <jansson.h>
#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "search.h"
#include "tessel/v1/planner.pb-c.h"

#define TSL_REQUEST_MAX_SEQ_LEN 1048576u /* seq_len limit */
#define TSL_REQUEST_MAX_SPEC    255u     /* cluster_spec length limit */
#define TSL_REQUEST_MAX_NODES   256u     /* cluster.registered.nodes entries */
#define TSL_REQUEST_MAX_NODE    127u     /* one node name's length */
/* a device's memory and the reserve kept back on it: at most 16 TiB */
#define TSL_REQUEST_MAX_DEVICE_MEMORY (16384ull << 30)
/* the least GPU efficiency a cluster may give (the bounds above) */
#define TSL_REQUEST_MIN_EFFICIENCY 0.01
/* the bandwidth bounds above, GB/s (common/cluster_json.c checks them where it
 * knows the key; tesseld's registered clusters keep a measured figure inside them) */
#define TSL_REQUEST_MIN_GBPS 0.01
#define TSL_REQUEST_MAX_GBPS 100000.0

/* What a server accepts; the daemon copies its [limits] here. */
typedef struct tsl_request_limits {
    uint32_t max_batch;   /* global_batch and max_batch; also the sweep's default ceiling */
    uint32_t max_layers;  /* the model's layer count */
    uint32_t max_devices; /* the cluster's device count */
} tsl_request_limits_t;

#define TSL_NOTES_CAP 1024 /* bytes of a request's notes (tsl_notes_add) */

typedef struct tsl_plan_input {
    tsl_model_t model;
    tsl_cluster_t cluster;
    tsl_request_t request;
    char fingerprint[17];
    char *request_json; /* canonical JSON of the PlanRequest as received (malloc'd) */
    bool force;
    /* what plan --local prints as notes on the same request, a line each ('\n'
     * between: tsl_notes_add below): at most one of target.h
     * tsl_target_mtp_note (a target leaving the model's MTP depths out), search.h
     * tsl_tp_sync_note (tp_sync where no layer runs TP) and tsl_moe_switch_note (MoE
     * dispatch switches without MoE layers or EP), then cluster.h
     * tsl_cluster_nic_warning (an 8-GPU DGX/HGX node given one NIC unstated); "" none */
    char note[TSL_NOTES_CAP];
} tsl_plan_input_t;

/* A registered cluster as tesseld built it: the cluster document and the keys
 * of the profiles it used (store_registry.h's tsl_registry_profile_key). The
 * request JSON records both, so that a newer profile marks the plan stale. */
typedef struct tsl_request_registered {
    const char *cluster_json;
    const char *const *profile_keys;
    size_t n_profile_keys;
} tsl_request_registered_t;

/* Fills in (zeroed by the caller first); on failure in holds nothing to free
 * but tsl_plan_input_free is still safe. reg: the built cluster when req's is
 * `registered` (NULL otherwise; a registered request without it is refused). */
int tsl_plan_request_decode_registered(const Tessel__V1__PlanRequest *req,
                                       const tsl_request_limits_t *lim,
                                       const tsl_request_registered_t *reg, tsl_plan_input_t *in,
                                       tsl_err_t *err);
int tsl_plan_request_decode(const Tessel__V1__PlanRequest *req, const tsl_request_limits_t *lim,
                            tsl_plan_input_t *in, tsl_err_t *err);

/* The node names of a RegisteredCluster (the rules above). */
int tsl_request_check_registered(const Tessel__V1__RegisteredCluster *r, tsl_err_t *err);
void tsl_plan_input_free(tsl_plan_input_t *in);

/* Checks a cluster's hardware figures against the physical bounds above. */
int tsl_request_check_cluster(const tsl_cluster_t *c, tsl_err_t *err);

/* A registering worker's devices[i].memory_bytes: 0 (unknown) or at most
 * 16 TiB, the GPU memory bound above; the store keeps it as a signed 64-bit
 * integer, so 2^63 and above would otherwise fail there as INTERNAL. */
int tsl_request_check_device_memory(size_t i, uint64_t bytes, tsl_err_t *err);

/* msg: a PlanRequest or a PlanOptions. from_proto starts from tsl_request_init. */
void tsl_request_from_proto(const ProtobufCMessage *msg, tsl_request_t *r);
void tsl_request_to_proto(const tsl_request_t *r, ProtobufCMessage *msg);

/* The request fields' descriptors in msg's type, for tests: the name of the
 * first request_fields.h entry the message lacks or types differently (only
 * those with a CLI flag when cli_only), or NULL when all match. */
const char *tsl_request_proto_mismatch(const ProtobufCMessageDescriptor *desc, bool cli_only);

/* A request's notes (Plan.notes, the document's "notes") as one buffer of lines, '\n'
 * between them (a note holds none), as tsl_plan_input_t.note carries them.
 * tsl_notes_add: line appended (a line that does not fit whole in cap bytes is left
 * out, never cut). tsl_notes_json: the array of lines, a new reference; NULL for "".
 * tsl_notes_split: the lines of notes, split in place, into at most max pointers;
 * their count. tsl_notes_equal: whether notes has the n lines of lines, in order. */
void tsl_notes_add(char *notes, size_t cap, const char *line);
json_t *tsl_notes_json(const char *notes);
size_t tsl_notes_split(char *notes, char **lines, size_t max);
bool tsl_notes_equal(const char *notes, char *const *lines, size_t n);

#endif

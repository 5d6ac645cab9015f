/*
 * request.c — tessel.v1.PlanRequest → model, cluster, request, with every
 * field checked before a search starts; request fields ↔ proto (request.h).
 */
#include "request.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_json.h"
#include "hf_config.h"
#include "mtp.h"
#include "names.h"
#include "target.h"

/* ---- request fields ↔ proto, by name ---------------------------------------- */

typedef struct field_ref {
    const char *name; /* the tsl_request_t member, for messages */
    tsl_request_kind_t kind;
    bool cli; /* has a tesselctl flag */
    const char *proto;
    size_t offset; /* in tsl_request_t */
} field_ref_t;

static const field_ref_t fields[] = {
#define FIELD_REF_(name, kind, flag, metavar, min, max, help, proto, json)                         \
    {#name, TSL_REQUEST_KIND_##kind, flag != NULL, proto, offsetof(tsl_request_t, name)},
    TSL_REQUEST_FIELDS(FIELD_REF_)
#undef FIELD_REF_
};

#define N_FIELDS (sizeof fields / sizeof fields[0])

static ProtobufCType proto_type(tsl_request_kind_t k)
{
    return k == TSL_REQUEST_KIND_BOOL ? PROTOBUF_C_TYPE_BOOL
           : k == TSL_REQUEST_KIND_UINT || k == TSL_REQUEST_KIND_MODULES ||
                   k == TSL_REQUEST_KIND_LOSS || k == TSL_REQUEST_KIND_PREC
               ? PROTOBUF_C_TYPE_UINT32
           : k == TSL_REQUEST_KIND_TARGET ? PROTOBUF_C_TYPE_ENUM
           : k == TSL_REQUEST_KIND_REAL   ? PROTOBUF_C_TYPE_DOUBLE
                                          : PROTOBUF_C_TYPE_UINT64;
}

/* The field's descriptor when msg's type has it with the right type and label. */
static const ProtobufCFieldDescriptor *proto_field(const ProtobufCMessageDescriptor *d,
                                                   const field_ref_t *f)
{
    const ProtobufCFieldDescriptor *pf =
        protobuf_c_message_descriptor_get_field_by_name(d, f->proto);
    if (!pf || pf->type != proto_type(f->kind) || pf->label != PROTOBUF_C_LABEL_NONE)
        return NULL;
    return pf;
}

void tsl_request_from_proto(const ProtobufCMessage *msg, tsl_request_t *r)
{
    tsl_request_init(r);
    for (size_t i = 0; i < N_FIELDS; i++) {
        const ProtobufCFieldDescriptor *pf = proto_field(msg->descriptor, &fields[i]);
        if (!pf)
            continue;
        const char *src = (const char *)msg + pf->offset;
        char *dst = (char *)r + fields[i].offset;
        switch (fields[i].kind) {
        case TSL_REQUEST_KIND_BOOL: *(bool *)dst = *(const protobuf_c_boolean *)src != 0; break;
        case TSL_REQUEST_KIND_UINT:
        case TSL_REQUEST_KIND_MODULES:
        case TSL_REQUEST_KIND_LOSS:
        case TSL_REQUEST_KIND_PREC: memcpy(dst, src, sizeof(uint32_t)); break;
        case TSL_REQUEST_KIND_BYTES: memcpy(dst, src, sizeof(uint64_t)); break;
        case TSL_REQUEST_KIND_TARGET: *(uint32_t *)dst = (uint32_t) * (const int *)src; break;
        case TSL_REQUEST_KIND_REAL: memcpy(dst, src, sizeof(double)); break;
        }
    }
}

void tsl_request_to_proto(const tsl_request_t *r, ProtobufCMessage *msg)
{
    for (size_t i = 0; i < N_FIELDS; i++) {
        const ProtobufCFieldDescriptor *pf = proto_field(msg->descriptor, &fields[i]);
        if (!pf)
            continue;
        char *dst = (char *)msg + pf->offset;
        const char *src = (const char *)r + fields[i].offset;
        switch (fields[i].kind) {
        case TSL_REQUEST_KIND_BOOL: *(protobuf_c_boolean *)dst = *(const bool *)src; break;
        case TSL_REQUEST_KIND_UINT:
        case TSL_REQUEST_KIND_MODULES:
        case TSL_REQUEST_KIND_LOSS:
        case TSL_REQUEST_KIND_PREC: memcpy(dst, src, sizeof(uint32_t)); break;
        case TSL_REQUEST_KIND_BYTES: memcpy(dst, src, sizeof(uint64_t)); break;
        case TSL_REQUEST_KIND_TARGET: *(int *)dst = (int)*(const uint32_t *)src; break;
        case TSL_REQUEST_KIND_REAL: memcpy(dst, src, sizeof(double)); break;
        }
    }
}

const char *tsl_request_proto_mismatch(const ProtobufCMessageDescriptor *desc, bool cli_only)
{
    for (size_t i = 0; i < N_FIELDS; i++)
        if ((!cli_only || fields[i].cli) && !proto_field(desc, &fields[i]))
            return fields[i].name;
    return NULL;
}

/* ---- checks ------------------------------------------------------------------- */

/* 1..TSL_REQUEST_MAX_NODE printable characters without quotes: one clean token
 * in the cluster document, tables and logs (names.h; the Registry's rule for
 * hostnames, a backslash refused as there). */
static bool node_name_ok(const char *v)
{
    size_t n = strlen(v);
    return n > 0 && n <= TSL_REQUEST_MAX_NODE && tsl_name_bad_char(v, "\\") == NULL;
}

int tsl_request_check_registered(const Tessel__V1__RegisteredCluster *r, tsl_err_t *err)
{
    if (!r)
        return tsl_err_set(err, "cluster.registered: missing");
    if (r->n_nodes > TSL_REQUEST_MAX_NODES)
        return tsl_err_set(err, "cluster.registered.nodes: %zu names is above the limit %u",
                           r->n_nodes, TSL_REQUEST_MAX_NODES);
    char shown[TSL_ERR_SHOWN_MAX(60)];
    for (size_t i = 0; i < r->n_nodes; i++) {
        if (!node_name_ok(r->nodes[i]))
            return tsl_err_set(err,
                               "cluster.registered.nodes[%zu]: '%s' must be 1 to %u printable "
                               "characters without quotes",
                               i, tsl_err_shown(r->nodes[i], 60, shown, sizeof shown),
                               TSL_REQUEST_MAX_NODE);
        for (size_t k = 0; k < i; k++)
            if (strcmp(r->nodes[k], r->nodes[i]) == 0)
                return tsl_err_set(err, "cluster.registered.nodes[%zu]: '%s' is named twice", i,
                                   r->nodes[i]);
    }
    return 0;
}

static int check_fields(const Tessel__V1__PlanRequest *req, const tsl_request_limits_t *lim,
                        tsl_err_t *err)
{
    if (req->model_case == TESSEL__V1__PLAN_REQUEST__MODEL__NOT_SET)
        return tsl_err_set(err, "model: set model_preset (e.g. GPT3-15B) or hf_config_json");
    if (req->cluster_case == TESSEL__V1__PLAN_REQUEST__CLUSTER__NOT_SET)
        return tsl_err_set(err, "cluster: set cluster_spec (e.g. 2x8xA100-40G:ib100), "
                                "cluster_json or registered");
    if (req->cluster_case == TESSEL__V1__PLAN_REQUEST__CLUSTER_REGISTERED &&
        tsl_request_check_registered(req->registered, err) != 0)
        return -1;
    if (req->model_case == TESSEL__V1__PLAN_REQUEST__MODEL_MODEL_PRESET &&
        strlen(req->model_preset) >= TSL_NAME_MAX)
        return tsl_err_set(err, "model_preset: longer than %u characters", TSL_NAME_MAX - 1);
    if (req->seq_len > TSL_REQUEST_MAX_SEQ_LEN)
        return tsl_err_set(err, "seq_len: %u is above the limit %u", req->seq_len,
                           TSL_REQUEST_MAX_SEQ_LEN);
    if (req->cluster_case == TESSEL__V1__PLAN_REQUEST__CLUSTER_CLUSTER_SPEC &&
        strlen(req->cluster_spec) > TSL_REQUEST_MAX_SPEC)
        return tsl_err_set(err, "cluster_spec: longer than %u characters", TSL_REQUEST_MAX_SPEC);
    if (req->global_batch > lim->max_batch)
        return tsl_err_set(err, "global_batch: %u is above the limit max_batch=%u",
                           req->global_batch, lim->max_batch);
    if (req->max_batch > lim->max_batch)
        return tsl_err_set(err, "max_batch: %u is above the limit max_batch=%u", req->max_batch,
                           lim->max_batch);
    if (req->top_k > TSL_SEARCH_MAX_TOPK)
        return tsl_err_set(err, "top_k: %u is above the limit %u", req->top_k, TSL_SEARCH_MAX_TOPK);
    /* kept back on each device, so no more than a device may hold (the bound on
     * devices[i].memory_bytes); near 2^64 the planner's "leaves 64 MiB" sum would
     * wrap and a 0-byte budget be planned and cached */
    if (req->memory_reserve_bytes > TSL_REQUEST_MAX_DEVICE_MEMORY)
        return tsl_err_set(err,
                           "memory_reserve_bytes: %llu is above the physical bound %llu "
                           "(16 TiB, the most a device holds)",
                           (unsigned long long)req->memory_reserve_bytes,
                           (unsigned long long)TSL_REQUEST_MAX_DEVICE_MEMORY);
    return 0;
}

/* Physical bounds (request.h), in the planner's units. */
#define GIB      1073741824.0
#define BW_MIN   0.01e9
#define BW_MAX   100000e9
#define HOST_MAX (1048576 * GIB) /* a node's host memory: 1 PiB */

static int bounded(const char *field, double v, double lo, double hi, double unit,
                   const char *unit_name, tsl_err_t *err)
{
    if (isfinite(v) && v >= lo && v <= hi)
        return 0;
    return tsl_err_set(err, "%s: %g %s is outside the physical bounds [%g, %g]", field, v / unit,
                       unit_name, lo / unit, hi / unit);
}

int tsl_request_check_device_memory(size_t i, uint64_t bytes, tsl_err_t *err)
{
    if (bytes <= TSL_REQUEST_MAX_DEVICE_MEMORY)
        return 0;
    return tsl_err_set(err,
                       "devices[%zu].memory_bytes: %llu is above the physical bound %llu "
                       "(16 TiB; 0 = unknown)",
                       i, (unsigned long long)bytes,
                       (unsigned long long)TSL_REQUEST_MAX_DEVICE_MEMORY);
}

static int check_gpu(const tsl_gpu_spec_t *g, tsl_err_t *err)
{
    char f[96];
#define GPU_FIELD_(key) (snprintf(f, sizeof f, "gpu_types.%.40s.%s", g->name, key), f)
    if (bounded(GPU_FIELD_("memory_gb"), (double)g->mem_bytes, GIB / 16, 16384 * GIB, GIB, "GiB",
                err) != 0 ||
        bounded(GPU_FIELD_("peak_tflops"), g->peak_flops, 0.1e12, 100000e12, 1e12, "TFLOP/s",
                err) != 0 ||
        bounded(GPU_FIELD_("intra_gbps"), g->intra_bw, BW_MIN, BW_MAX, 1e9, "GB/s", err) != 0 ||
        bounded(GPU_FIELD_("pcie_gbps"), g->pcie_bw, BW_MIN, BW_MAX, 1e9, "GB/s", err) != 0 ||
        (g->fp32_peak_flops != 0 && bounded(GPU_FIELD_("fp32_tflops"), g->fp32_peak_flops, 0.01e12,
                                            100000e12, 1e12, "TFLOP/s", err) != 0) ||
        (g->tf32_peak_flops != 0 && bounded(GPU_FIELD_("tf32_tflops"), g->tf32_peak_flops, 0.01e12,
                                            100000e12, 1e12, "TFLOP/s", err) != 0))
        return -1;
    /* a floor, not just > 0: 1e-300 priced an iteration at 10^30 s, an answer
     * no one could act on (the floor is an assumption: request.h) */
    if (!(g->efficiency >= TSL_REQUEST_MIN_EFFICIENCY && g->efficiency <= 1))
        return tsl_err_set(err, "%s: %g is outside [%g, 1]", GPU_FIELD_("efficiency"),
                           g->efficiency, TSL_REQUEST_MIN_EFFICIENCY);
#undef GPU_FIELD_
    return 0;
}

/* A node's host memory, given or tsl_cluster_finish's default of twice its GPUs'
 * memory; the default above the bound is the GPU count's fault (a spec of 1x8000xA100-80G
 * named nodes[0].cpu_memory_gb, which no one gave). */
static int check_host_memory(const tsl_cluster_t *c, uint32_t n, tsl_err_t *err)
{
    const tsl_node_t *node = &c->nodes[n];
    double gpu_bytes = (double)c->gpu_types[node->gpu_type].mem_bytes;
    double dflt = TSL_DEFAULT_HOST_MEM_PER_GPU_MEM * (double)node->n_gpus * gpu_bytes;
    if ((double)node->cpu_mem_bytes == dflt && dflt > HOST_MAX)
        return tsl_err_set(err,
                           "nodes[%u].gpus: %u GPUs of %g GiB in one node make its default host "
                           "memory (%u x the GPUs') %g GiB, above any host (%g GiB): give fewer "
                           "GPUs per node",
                           n, node->n_gpus, gpu_bytes / GIB, TSL_DEFAULT_HOST_MEM_PER_GPU_MEM,
                           dflt / GIB, HOST_MAX / GIB);
    char f[64];
    snprintf(f, sizeof f, "nodes[%u].cpu_memory_gb", n);
    return bounded(f, (double)node->cpu_mem_bytes, 0, HOST_MAX, GIB, "GiB", err);
}

int tsl_request_check_cluster(const tsl_cluster_t *c, tsl_err_t *err)
{
    char f[64];
    for (uint32_t t = 0; t < c->n_gpu_types; t++)
        if (check_gpu(&c->gpu_types[t], err) != 0)
            return -1;
    for (uint32_t n = 0; n < c->n_nodes; n++) {
        snprintf(f, sizeof f, "nodes[%u].intra_gbps", n);
        if (bounded(f, c->nodes[n].intra_bw, BW_MIN, BW_MAX, 1e9, "GB/s", err) != 0)
            return -1;
        /* 0: no NIC figure of its own (the pair figure alone) */
        snprintf(f, sizeof f, "nodes[%u].nic_gbps", n);
        if (c->nodes[n].nic_bw != 0 &&
            bounded(f, c->nodes[n].nic_bw, BW_MIN, BW_MAX, 1e9, "GB/s", err) != 0)
            return -1;
        if (check_host_memory(c, n, err) != 0)
            return -1;
    }
    if (c->n_nodes > 1 && !c->inter_bw_matrix &&
        bounded("inter_gbps", c->inter_bw, BW_MIN, BW_MAX, 1e9, "GB/s", err) != 0)
        return -1;
    for (uint32_t a = 0; c->inter_bw_matrix && a < c->n_nodes; a++) {
        for (uint32_t b = 0; b < c->n_nodes; b++) {
            snprintf(f, sizeof f, "inter_gbps_matrix[%u][%u]", a, b);
            if (a != b && bounded(f, c->inter_bw_matrix[(size_t)a * c->n_nodes + b], BW_MIN, BW_MAX,
                                  1e9, "GB/s", err) != 0)
                return -1;
        }
    }
    return bounded("overlap_slowdown", c->overlap_slowdown, 1, 100, 1, "x", err);
}

/* ---- the planner's input ---------------------------------------------------------- */

static int build_model(const Tessel__V1__PlanRequest *req, const tsl_request_limits_t *lim,
                       tsl_model_t *m, tsl_err_t *err)
{
    if (req->model_case == TESSEL__V1__PLAN_REQUEST__MODEL_MODEL_PRESET) {
        if (tsl_model_preset_seq(req->model_preset, req->seq_len, m, err) != 0)
            return tsl_err_prefix(err, "model_preset");
    } else if (tsl_hf_config_parse(req->hf_config_json, "", req->seq_len, m, err) != 0) {
        return tsl_err_prefix(err, "hf_config_json");
    }
    if (m->n_layers > lim->max_layers)
        return tsl_err_set(err, "model: %u layers is above the limit max_layers=%u", m->n_layers,
                           lim->max_layers);
    return 0;
}

/* The request's MTP depths on the model (mtp.h), as plan --local applies them
 * before its search: the fingerprint, the plan document's model and the layer
 * limit see the layers searched. Left open, the target decides whether the
 * model's own depths are trained (target.h tsl_target_mtp_depths: none under
 * torchtitan, deepspeed, galvatron), as the search does. Run before
 * tsl_request_validate, as --local validates the model searched (a target's model
 * check sees the depths it trains); mtp_layers above TSL_MTP_MAX_DEPTHS or with
 * no_mtp are left for it to refuse, naming them. The note plan --local prints
 * for the depths a target leaves out goes into note (cap bytes; "" none). */
static int model_mtp(const tsl_request_t *r, const tsl_request_limits_t *lim, tsl_model_t *m,
                     char *note, size_t cap, tsl_err_t *err)
{
    if (r->mtp_layers > TSL_MTP_MAX_DEPTHS || (r->mtp_layers && r->no_mtp))
        return 0;
    uint32_t t = r->target < TSL_TARGET_COUNT ? r->target : TSL_TARGET_ANY;
    uint32_t have = tsl_mtp_depths(m);
    uint32_t want = tsl_target_mtp_depths(t, have, r->mtp_layers, r->no_mtp);
    if (tsl_model_set_mtp(m, want, err) != 0)
        return -1;
    if (!tsl_target_mtp_note(t, m->name, have, want, note, cap))
        note[0] = '\0';
    if (m->n_layers > lim->max_layers)
        return tsl_err_set(err,
                           "model: %u layers (%u of them MTP depths') is above the limit "
                           "max_layers=%u",
                           m->n_layers, tsl_mtp_layers(m), lim->max_layers);
    return 0;
}

/* The cluster field's name in errors. */
static const char *cluster_field(const Tessel__V1__PlanRequest *req)
{
    return req->cluster_case == TESSEL__V1__PLAN_REQUEST__CLUSTER_CLUSTER_SPEC ? "cluster_spec"
           : req->cluster_case == TESSEL__V1__PLAN_REQUEST__CLUSTER_REGISTERED
               ? "cluster.registered"
               : "cluster_json";
}

/* Every "*_gbps" number of a cluster document, at any depth, is 0 (the GPU
 * type's figure) or within the bandwidth bounds, checked in GB/s before the
 * parser multiplies it by 10^9: 1e308 GB/s would become infinity there and be
 * refused as "must be >= 0", a bound it did not break. */
static int check_json_gbps(json_t *v, char *path, size_t cap, tsl_err_t *err)
{
    size_t len = strlen(path);
    if (json_is_array(v)) {
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e)
        {
            snprintf(path + len, cap - len, "[%zu]", i);
            if (check_json_gbps(e, path, cap, err) != 0)
                return -1;
        }
    } else if (json_is_object(v)) {
        const char *k;
        json_t *e;
        json_object_foreach(v, k, e)
        {
            size_t n = strlen(k);
            snprintf(path + len, cap - len, "%s%s", len ? "." : "", k);
            if (n > 5 && strcmp(k + n - 5, "_gbps") == 0 && json_is_number(e) &&
                json_number_value(e) != 0 &&
                bounded(path, json_number_value(e), BW_MIN / 1e9, BW_MAX / 1e9, 1, "GB/s", err) !=
                    0)
                return -1;
            if (check_json_gbps(e, path, cap, err) != 0)
                return -1;
        }
    }
    path[len] = '\0';
    return 0;
}

static int check_cluster_json(const char *text, tsl_err_t *err)
{
    char path[256] = "";
    json_t *doc = json_loads(text, 0, NULL);
    int rc = doc ? check_json_gbps(doc, path, sizeof path, err) : 0; /* the parser says why not */
    json_decref(doc);
    return rc;
}

static int build_cluster(const Tessel__V1__PlanRequest *req, const tsl_request_limits_t *lim,
                         const tsl_request_registered_t *reg, tsl_cluster_t *c, tsl_err_t *err)
{
    if (req->cluster_case == TESSEL__V1__PLAN_REQUEST__CLUSTER_CLUSTER_SPEC) {
        if (tsl_cluster_parse_spec(c, req->cluster_spec, err) != 0)
            return tsl_err_prefix(err, "cluster_spec");
    } else if (req->cluster_case == TESSEL__V1__PLAN_REQUEST__CLUSTER_REGISTERED && !reg) {
        /* only tesseld, which has the workers, turns the names into a cluster */
        return tsl_err_set(err, "cluster.registered: only tesseld assembles a registered cluster");
    } else if (check_cluster_json(reg ? reg->cluster_json : req->cluster_json, err) != 0 ||
               tsl_cluster_json_parse(reg ? reg->cluster_json : req->cluster_json, c, err) != 0) {
        return tsl_err_prefix(err, "%s", cluster_field(req));
    }
    if (c->n_devices > lim->max_devices)
        return tsl_err_set(err, "cluster: %u devices is above the limit max_devices=%u",
                           c->n_devices, lim->max_devices);
    if (tsl_request_check_cluster(c, err) != 0)
        return tsl_err_prefix(err, "%s", cluster_field(req));
    return 0;
}

/* cluster.h tsl_cluster_nic_warning of the request's spec or JSON, as a line of notes
 * (tsl_notes_add). */
static void nic_note(const Tessel__V1__PlanRequest *req, const tsl_cluster_t *c, char *notes,
                     size_t cap)
{
    char line[TSL_NOTES_CAP];
    bool spec = req->cluster_case == TESSEL__V1__PLAN_REQUEST__CLUSTER_CLUSTER_SPEC;
    if (tsl_cluster_nic_warning(c, spec ? req->cluster_spec : NULL, line, sizeof line))
        tsl_notes_add(notes, cap, line);
}

/* The sweep's ceiling defaults to the planner's for this cluster
 * (tsl_search_max_batch), held to the limit: set only when the limit is lower,
 * so that a request within it has the fingerprint it has in-process. */
static void build_request(const Tessel__V1__PlanRequest *req, const tsl_request_limits_t *lim,
                          uint32_t n_devices, tsl_request_t *r)
{
    tsl_request_from_proto(&req->base, r);
    if (!r->global_batch && !r->max_batch && lim->max_batch < tsl_search_max_batch(r, n_devices))
        r->max_batch = lim->max_batch;
}

/* An embedded JSON document as an object when it parses, else as its text. */
static json_t *embedded(const char *text)
{
    json_t *v = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
    return v ? v : json_string(text);
}

/* "registered": the names asked for and the profile keys the cluster used
 * (the text a newer profile's stale-marking looks for, store_registry.h). */
static json_t *registered_json(const Tessel__V1__RegisteredCluster *r,
                               const tsl_request_registered_t *reg)
{
    json_t *nodes = json_array(), *keys = json_array();
    for (size_t i = 0; i < r->n_nodes; i++)
        json_array_append_new(nodes, json_string(r->nodes[i]));
    for (size_t i = 0; i < reg->n_profile_keys; i++)
        json_array_append_new(keys, json_string(reg->profile_keys[i]));
    return json_pack("{s:o, s:o}", "nodes", nodes, "profiles", keys);
}

/* The PlanRequest as received: its oneofs (a registered cluster as built, with
 * the names asked for), seq_len, and every request field PlanRequest carries
 * under its proto name (sorted keys). */
static char *request_json(const Tessel__V1__PlanRequest *req, const tsl_request_registered_t *reg)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    if (req->model_case == TESSEL__V1__PLAN_REQUEST__MODEL_MODEL_PRESET)
        json_object_set_new(o, "model_preset", json_string(req->model_preset));
    else
        json_object_set_new(o, "hf_config", embedded(req->hf_config_json));
    if (req->cluster_case == TESSEL__V1__PLAN_REQUEST__CLUSTER_CLUSTER_SPEC)
        json_object_set_new(o, "cluster_spec", json_string(req->cluster_spec));
    else
        json_object_set_new(o, "cluster", embedded(reg ? reg->cluster_json : req->cluster_json));
    if (req->cluster_case == TESSEL__V1__PLAN_REQUEST__CLUSTER_REGISTERED && reg)
        json_object_set_new(o, "registered", registered_json(req->registered, reg));
    json_object_set_new(o, "seq_len", json_integer(req->seq_len));
    tsl_request_t r;
    tsl_request_from_proto(&req->base, &r);
    for (size_t i = 0; i < N_FIELDS; i++) {
        if (!proto_field(req->base.descriptor, &fields[i]))
            continue;
        const char *p = (const char *)&r + fields[i].offset;
        json_t *v = fields[i].kind == TSL_REQUEST_KIND_BOOL ? json_boolean(*(const bool *)p)
                    : fields[i].kind == TSL_REQUEST_KIND_UINT ||
                            fields[i].kind == TSL_REQUEST_KIND_TARGET ||
                            fields[i].kind == TSL_REQUEST_KIND_MODULES ||
                            fields[i].kind == TSL_REQUEST_KIND_LOSS ||
                            fields[i].kind == TSL_REQUEST_KIND_PREC
                        ? json_integer(*(const uint32_t *)p)
                    : fields[i].kind == TSL_REQUEST_KIND_REAL
                        ? json_real(*(const double *)p)
                        : json_integer((json_int_t) * (const uint64_t *)p);
        json_object_set_new(o, fields[i].proto, v);
    }
    char *text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(o);
    return text;
}

int tsl_plan_request_decode_registered(const Tessel__V1__PlanRequest *req,
                                       const tsl_request_limits_t *lim,
                                       const tsl_request_registered_t *reg, tsl_plan_input_t *in,
                                       tsl_err_t *err)
{
    if (check_fields(req, lim, err) != 0)
        return -1;
    if (req->cluster_case != TESSEL__V1__PLAN_REQUEST__CLUSTER_REGISTERED)
        reg = NULL; /* the request's own cluster stands */
    if (build_model(req, lim, &in->model, err) != 0)
        goto fail;
    if (build_cluster(req, lim, reg, &in->cluster, err) != 0)
        goto fail;
    build_request(req, lim, in->cluster.n_devices, &in->request);
    if (model_mtp(&in->request, lim, &in->model, in->note, sizeof in->note, err) != 0 ||
        tsl_request_validate(&in->request, &in->model, &in->cluster, err) != 0)
        goto fail;
    if (!in->note[0]) /* plan --local's note on tp_sync where no layer runs TP (search.h) */
        tsl_tp_sync_note(&in->request, in->cluster.n_devices, NULL, in->note, sizeof in->note);
    if (!in->note[0]) /* and on MoE dispatch switches that change nothing (search.h) */
        tsl_moe_switch_note(&in->request, &in->model, in->note, sizeof in->note);
    if (!reg) /* the one-NIC trap, beside any of those (cluster.h); a registered cluster's
                 NICs are not the asker's to state */
        nic_note(req, &in->cluster, in->note, sizeof in->note);
    tsl_request_fingerprint(&in->request, &in->model, &in->cluster, in->fingerprint);
    in->force = req->force;
    in->request_json = request_json(req, reg);
    if (!in->request_json) {
        tsl_err_setc(err, TSL_E_NOMEM, "request: out of memory");
        goto fail;
    }
    return 0;
fail:
    tsl_plan_input_free(in);
    return -1;
}

int tsl_plan_request_decode(const Tessel__V1__PlanRequest *req, const tsl_request_limits_t *lim,
                            tsl_plan_input_t *in, tsl_err_t *err)
{
    return tsl_plan_request_decode_registered(req, lim, NULL, in, err);
}

void tsl_plan_input_free(tsl_plan_input_t *in)
{
    tsl_model_free(&in->model);
    tsl_cluster_free(&in->cluster);
    free(in->request_json);
    memset(in, 0, sizeof *in);
}

/* ---- notes ---- */

void tsl_notes_add(char *notes, size_t cap, const char *line)
{
    size_t len = strlen(notes), add = strlen(line);
    if (add == 0 || len + (len ? 1 : 0) + add >= cap) /* whole or not at all */
        return;
    snprintf(notes + len, cap - len, "%s%s", len ? "\n" : "", line);
}

json_t *tsl_notes_json(const char *notes)
{
    if (notes == NULL || notes[0] == '\0')
        return NULL;
    json_t *arr = json_array();
    for (const char *s = notes, *nl; arr && *s; s = nl ? nl + 1 : s + strlen(s)) {
        nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        json_array_append_new(arr, json_stringn(s, len));
    }
    return arr;
}

size_t tsl_notes_split(char *notes, char **lines, size_t max)
{
    size_t n = 0;
    for (char *s = notes; s && *s && n < max;) {
        char *nl = strchr(s, '\n');
        if (nl)
            *nl = '\0';
        lines[n++] = s;
        s = nl ? nl + 1 : NULL;
    }
    return n;
}

bool tsl_notes_equal(const char *notes, char *const *lines, size_t n)
{
    const char *s = notes ? notes : "";
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(lines[i]);
        if (strncmp(s, lines[i], len) != 0 || (s[len] != '\n' && s[len] != '\0'))
            return false;
        s += len;
        if (*s == '\n')
            s++;
        else if (i + 1 < n)
            return false;
    }
    return *s == '\0';
}

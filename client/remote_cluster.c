/*
 * remote_cluster.c — `tesselctl plan --cluster registered [--nodes a,b]`: the
 * cluster of the online registered workers, described as a cluster JSON
 * document (docs/cluster-format.md) on their registered GPUs and measured
 * figures, and a list saying where each figure came from.
 *
 * One node per worker, its GPU count and memory as registered. Per GPU model,
 * from tesseld's aggregate (GetProfile) — measured figures when there are any,
 * else simulated ones, never a mix:
 *   efficiency   achieved FLOP/s of the largest gemm_fwd over the built-in peak
 *   intra_gbps   the all-reduce bus bandwidth inside the node (largest message)
 *   pcie_gbps    the slower of pinned host→device and device→host
 *   overlap      the larger overlap_slowdown ratio (cluster-wide)
 *   inter-node   per node pair probed (`tesselctl trial probe-link`: rows of link
 *                class "inter-node", labels node and peer), the slower of send/recv
 *                and all-reduce bus bandwidth at the largest message, as a "links"
 *                entry; pairs never probed keep the built-in ib100
 * What was not measured keeps the built-in figure of the matching GPU type
 * (tesselctl hardware), and the source list says so. The document's comment
 * names each profile key used ("profile:<model>|measured"), which is how
 * tesseld finds the plans a newer profile makes stale.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cluster.h"
#include "remote.h"
#include "tessel/v1/registry.pb-c.h"

#define GIB        1073741824.0
#define MAX_MODELS 8
#define MAX_LINKS  64

typedef struct model_figs {
    const char *model;
    uint64_t memory_bytes;
    const tsl_gpu_spec_t *base; /* matching built-in type, or NULL */
    char type[32];              /* the name used in the document */
    bool simulated;
    json_t *type_json;
} model_figs_t;

/* One node pair's link probe figures: the bus bandwidth of its largest message. */
typedef struct link_fig {
    char a[128], b[128];
    double sr, sr_bytes, ar, ar_bytes; /* send/recv, all-reduce (bytes/s; bytes) */
    bool simulated;
    char comm[16];
} link_fig_t;

typedef struct reg_cluster {
    json_t *sources; /* array of strings */
    json_t *nodes;
    model_figs_t models[MAX_MODELS];
    size_t n_models;
    double overlap; /* 0: not measured */
    bool overlap_simulated;
    char comment[1024];
    link_fig_t links[MAX_LINKS]; /* measured inter-node pairs (link probes) */
    size_t n_links;
} reg_cluster_t;

static void source(reg_cluster_t *rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void source(reg_cluster_t *rc, const char *fmt, ...)
{
    char line[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    json_array_append_new(rc->sources, json_string(line));
}

static const char *label(const Tessel__V1__Measurement *m, const char *key)
{
    for (size_t i = 0; i < m->n_labels; i++)
        if (strcmp(m->labels[i]->key, key) == 0)
            return m->labels[i]->value;
    return "";
}

/* The rows of one kind: measured when the model has any, else simulated. */
static bool use_row(const Tessel__V1__GetProfileResponse *r, const Tessel__V1__Measurement *m,
                    bool *simulated)
{
    bool any_measured = false;
    for (size_t i = 0; i < r->n_measurements; i++)
        any_measured = any_measured || !r->measurements[i]->simulated;
    *simulated = !any_measured;
    return m->simulated == *simulated;
}

static const char *kind(bool simulated)
{
    return simulated ? "simulated" : "measured";
}

/* Efficiency (and peak, without a built-in) from the largest GEMM. */
static int figure_compute(reg_cluster_t *rc, model_figs_t *mf,
                          const Tessel__V1__GetProfileResponse *r)
{
    const Tessel__V1__Measurement *best = NULL;
    double best_work = 0;
    bool sim;
    for (size_t i = 0; i < r->n_measurements; i++) {
        const Tessel__V1__Measurement *m = r->measurements[i];
        double work = 2.0 * atof(label(m, "m")) * atof(label(m, "n")) * atof(label(m, "k"));
        if (strcmp(m->name, "gemm_fwd") == 0 && strcmp(m->unit, "s") == 0 && m->value > 0 &&
            use_row(r, m, &sim) && work > best_work) {
            best = m;
            best_work = work;
        }
    }
    if (!best && !mf->base)
        return tsl_remote_fail(TSL_EXIT_SERVER,
                               "plan: GPU model '%s' has no built-in figures "
                               "and its profile has no gemm_fwd to take its speed from",
                               mf->model);
    if (!best) {
        source(rc,
               "%s compute: built-in %s peak %.0f TFLOP/s x efficiency %.2f (no gemm_fwd measured)",
               mf->type, mf->base->name, mf->base->peak_flops / 1e12, mf->base->efficiency);
        return 0;
    }
    size_t blocks = 0;
    for (size_t i = 0; i < r->n_measurements; i++)
        blocks += strcmp(r->measurements[i]->name, "attention_fwd") == 0 ||
                  strcmp(r->measurements[i]->name, "ffn_fwd") == 0;
    if (blocks)
        source(rc,
               "%s compute: %zu attention/FFN block times (%s), interpolated by tesseld over "
               "micro-batch size and TP split; what they do not cover at the efficiency below",
               mf->type, blocks, kind(best->simulated));
    double achieved = best_work / best->value;
    double peak = mf->base && mf->base->peak_flops >= achieved ? mf->base->peak_flops : achieved;
    json_object_set_new(mf->type_json, "peak_tflops", json_real(peak / 1e12));
    json_object_set_new(mf->type_json, "efficiency", json_real(achieved / peak));
    source(rc,
           "%s compute: %.1f TFLOP/s achieved on gemm_fwd m=%s n=%s k=%s (%s, %u sample(s)) = "
           "efficiency %.3f of %s peak %.0f TFLOP/s",
           mf->type, achieved / 1e12, label(best, "m"), label(best, "n"), label(best, "k"),
           kind(best->simulated), best->n_samples, achieved / peak,
           mf->base && peak == mf->base->peak_flops ? "the built-in" : "a", peak / 1e12);
    return 0;
}

/* Largest-message all-reduce bus bandwidth; the slower PCIe direction. */
static void figure_links(reg_cluster_t *rc, model_figs_t *mf,
                         const Tessel__V1__GetProfileResponse *r)
{
    double intra = 0, intra_bytes = -1, pcie = 0;
    const char *intra_link = "";
    bool sim;
    for (size_t i = 0; i < r->n_measurements; i++) {
        const Tessel__V1__Measurement *m = r->measurements[i];
        if (!use_row(r, m, &sim) || strcmp(m->unit, "bytes/s") != 0 || !(m->value > 0) ||
            strcmp(m->link_class, "inter-node") == 0) /* a link probe's: figure_inter */
            continue;
        if (strcmp(m->name, "allreduce_busbw") == 0 && atof(label(m, "bytes")) > intra_bytes) {
            intra = m->value;
            intra_bytes = atof(label(m, "bytes"));
            intra_link = m->link_class;
        } else if ((strcmp(m->name, "pcie_h2d") == 0 || strcmp(m->name, "pcie_d2h") == 0) &&
                   (pcie == 0 || m->value < pcie)) {
            pcie = m->value;
        }
    }
    const char *k = kind(mf->simulated);
    if (intra > 0) {
        json_object_set_new(mf->type_json, "intra_gbps", json_real(intra / 1e9));
        source(rc, "%s intra-node: %.1f GB/s all-reduce bus bandwidth (%s, link %s)", mf->type,
               intra / 1e9, k, intra_link[0] ? intra_link : "?");
    } else {
        source(rc, "%s intra-node: %s (no allreduce_busbw measured)", mf->type,
               mf->base ? "built-in" : "16 GB/s assumed");
    }
    if (pcie > 0) {
        json_object_set_new(mf->type_json, "pcie_gbps", json_real(pcie / 1e9));
        source(rc, "%s host<->device: %.1f GB/s pinned PCIe, slower direction (%s)", mf->type,
               pcie / 1e9, k);
    } else {
        source(rc, "%s host<->device: %s (no pcie_h2d/pcie_d2h measured)", mf->type,
               mf->base ? "built-in" : "16 GB/s assumed");
    }
}

static void figure_overlap(reg_cluster_t *rc, const Tessel__V1__GetProfileResponse *r)
{
    bool sim;
    for (size_t i = 0; i < r->n_measurements; i++) {
        const Tessel__V1__Measurement *m = r->measurements[i];
        if (strcmp(m->name, "overlap_slowdown") == 0 && strcmp(m->unit, "ratio") == 0 &&
            use_row(r, m, &sim) && m->value >= 1 && m->value > rc->overlap) {
            rc->overlap = m->value;
            rc->overlap_simulated = m->simulated;
        }
    }
}

/* The pair {a, b} (either order), added when new; NULL when full. */
static link_fig_t *link_of(reg_cluster_t *rc, const char *a, const char *b)
{
    for (size_t i = 0; i < rc->n_links; i++) {
        link_fig_t *l = &rc->links[i];
        if ((!strcmp(l->a, a) && !strcmp(l->b, b)) || (!strcmp(l->a, b) && !strcmp(l->b, a)))
            return l;
    }
    if (rc->n_links == MAX_LINKS)
        return NULL;
    link_fig_t *l = &rc->links[rc->n_links++];
    memset(l, 0, sizeof *l);
    snprintf(l->a, sizeof l->a, "%s", a);
    snprintf(l->b, sizeof l->b, "%s", b);
    return l;
}

/* Link probe rows (link class "inter-node", labels node and peer): per node
 * pair, the send/recv and all-reduce bus bandwidth of the largest message. */
static void figure_inter(reg_cluster_t *rc, const Tessel__V1__GetProfileResponse *r)
{
    bool sim;
    for (size_t i = 0; i < r->n_measurements; i++) {
        const Tessel__V1__Measurement *m = r->measurements[i];
        bool sr = strcmp(m->name, "sendrecv_busbw") == 0,
             ar = strcmp(m->name, "allreduce_busbw") == 0;
        const char *a = label(m, "node"), *b = label(m, "peer");
        if (strcmp(m->link_class, "inter-node") != 0 || !(sr || ar) || !use_row(r, m, &sim) ||
            !(m->value > 0) || !a[0] || !b[0])
            continue;
        link_fig_t *l = link_of(rc, a, b);
        double bytes = atof(label(m, "bytes"));
        if (!l)
            continue;
        l->simulated = m->simulated;
        snprintf(l->comm, sizeof l->comm, "%s", label(m, "comm"));
        if (sr && bytes > l->sr_bytes)
            l->sr = m->value, l->sr_bytes = bytes;
        if (ar && bytes > l->ar_bytes)
            l->ar = m->value, l->ar_bytes = bytes;
    }
}

/* The gpu_types entry of one model from its aggregated profile. */
static int describe_model(reg_cluster_t *rc, model_figs_t *mf,
                          const Tessel__V1__GetProfileResponse *r)
{
    bool sim = true;
    if (r->n_measurements)
        use_row(r, r->measurements[0], &sim);
    mf->simulated = sim;
    mf->base = tsl_gpu_match_model(mf->model, mf->memory_bytes);
    snprintf(mf->type, sizeof mf->type, "%.20s-%s", mf->base ? mf->base->name : "gpu",
             r->n_measurements == 0 ? "builtin"
             : sim                  ? "sim"
                                    : "meas");
    if (!mf->base && r->n_measurements == 0)
        return tsl_remote_fail(TSL_EXIT_SERVER,
                               "plan: GPU model '%s' has no built-in figures "
                               "and no profile yet; wait for its worker's first report",
                               mf->model);
    mf->type_json = json_object();
    if (mf->base)
        json_object_set_new(mf->type_json, "base", json_string(mf->base->name));
    else
        json_object_set_new(mf->type_json, "pcie_gbps", json_real(16));
    if (!mf->base)
        json_object_set_new(mf->type_json, "intra_gbps", json_real(16));
    json_object_set_new(mf->type_json, "memory_gb", json_real((double)mf->memory_bytes / GIB));
    source(rc, "%s = %s, %.0f GiB as registered%s%s", mf->type, mf->model,
           (double)mf->memory_bytes / GIB, mf->base ? "; unmeasured figures from built-in " : "",
           mf->base ? mf->base->name : "");
    if (r->n_measurements == 0) {
        source(rc, "%s: no profile reported yet: built-in figures only", mf->type);
        return 0;
    }
    if (figure_compute(rc, mf, r) != 0)
        return TSL_EXIT_SERVER;
    figure_links(rc, mf, r);
    figure_inter(rc, r);
    figure_overlap(rc, r);
    size_t at = strlen(rc->comment);
    /* "profile:<model>|<kind>" is the key tesseld marks plans stale by; " as <type>"
     * tells it which GPU type to attach that profile's block times to. */
    snprintf(rc->comment + at, sizeof rc->comment - at, "%sprofile:%s|%s as %s", at ? "; " : "",
             mf->model, kind(sim), mf->type);
    return 0;
}

/* ---- the workers ------------------------------------------------------------------------- */

/* "a,b,c" contains name. */
static bool in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        p = comma ? comma + 1 : NULL;
    }
    return false;
}

/* Every name of --nodes is a registered, online worker. */
static int check_nodes(const Tessel__V1__ListWorkersResponse *r, const char *nodes)
{
    char name[160];
    for (const char *p = nodes; p && *p;) {
        const char *comma = strchr(p, ',');
        snprintf(name, sizeof name, "%.*s", (int)(comma ? (size_t)(comma - p) : strlen(p)), p);
        const char *state = NULL;
        for (size_t i = 0; i < r->n_workers; i++)
            if (strcmp(r->workers[i]->hostname, name) == 0 &&
                (!state || strcmp(r->workers[i]->state, "online") == 0))
                state = r->workers[i]->state;
        if (!state)
            return tsl_remote_fail(TSL_EXIT_NOT_FOUND,
                                   "--nodes: '%s' is not a registered worker "
                                   "(tesselctl workers lists them)",
                                   name);
        if (strcmp(state, "online") != 0)
            return tsl_remote_fail(TSL_EXIT_UNAVAILABLE, "--nodes: worker '%s' is %s", name, state);
        p = comma ? comma + 1 : NULL;
    }
    return 0;
}

static model_figs_t *model_of(reg_cluster_t *rc, const Tessel__V1__Device *d)
{
    for (size_t i = 0; i < rc->n_models; i++)
        if (strcmp(rc->models[i].model, d->model) == 0)
            return &rc->models[i];
    if (rc->n_models == MAX_MODELS)
        return NULL;
    model_figs_t *mf = &rc->models[rc->n_models++];
    mf->model = d->model;
    mf->memory_bytes = d->memory_bytes;
    return mf;
}

/* One node entry per selected worker (its GPUs must be of one model). */
static int add_nodes(reg_cluster_t *rc, const Tessel__V1__ListWorkersResponse *r, const char *nodes)
{
    for (size_t i = 0; i < r->n_workers; i++) {
        const Tessel__V1__Worker *w = r->workers[i];
        if (strcmp(w->state, "online") != 0 || (nodes && !in_list(nodes, w->hostname)) ||
            !w->n_devices)
            continue;
        for (size_t k = 1; k < w->n_devices; k++)
            if (strcmp(w->devices[k]->model, w->devices[0]->model) != 0)
                return tsl_remote_fail(TSL_EXIT_SERVER,
                                       "plan: worker '%s' has GPUs of different "
                                       "models; a node holds one type",
                                       w->hostname);
        if (!model_of(rc, w->devices[0]))
            return tsl_remote_fail(TSL_EXIT_SERVER, "plan: more than %d GPU models", MAX_MODELS);
        json_array_append_new(rc->nodes,
                              json_pack("{s:s, s:i, s:s}", "name", w->hostname, "gpus",
                                        (int)w->n_devices, "type", w->devices[0]->model));
    }
    if (json_array_size(rc->nodes) == 0)
        return tsl_remote_fail(TSL_EXIT_NOT_FOUND,
                               "plan: no online registered workers%s%s "
                               "(tesselctl workers)",
                               nodes ? " among " : "", nodes ? nodes : "");
    return 0;
}

/* The profile of every model, then the node types renamed to the document's. */
static int add_profiles(reg_cluster_t *rc, tsl_rpc_client_t *c)
{
    for (size_t i = 0; i < rc->n_models; i++) {
        Tessel__V1__GetProfileRequest req = TESSEL__V1__GET_PROFILE_REQUEST__INIT;
        ProtobufCMessage *reply = NULL;
        tsl_rpc_status_t st = {0};
        req.gpu_model = (char *)rc->models[i].model;
        if (tsl_rpc_unary(c, tsl_rpc_methods[TSL_RPC_ID_GET_PROFILE].path, &req.base,
                          &tessel__v1__get_profile_response__descriptor, &reply, &st) != 0)
            return tsl_rpc_report(stderr, &st);
        int rc2 = describe_model(rc, &rc->models[i], (Tessel__V1__GetProfileResponse *)reply);
        protobuf_c_message_free_unpacked(reply, NULL);
        if (rc2 != 0)
            return rc2;
    }
    size_t k;
    json_t *node;
    json_array_foreach(rc->nodes, k, node)
    {
        const char *model = json_string_value(json_object_get(node, "type"));
        for (size_t i = 0; i < rc->n_models; i++)
            if (strcmp(rc->models[i].model, model) == 0) {
                json_object_set_new(node, "type", json_string(rc->models[i].type));
                break;
            }
    }
    return 0;
}

/* The index of node name in the document, or -1. */
static long node_index(const reg_cluster_t *rc, const char *name)
{
    size_t k;
    json_t *node;
    json_array_foreach(rc->nodes, k, node)
    {
        if (strcmp(json_string_value(json_object_get(node, "name")), name) == 0)
            return (long)k;
    }
    return -1;
}

/* Inter-node bandwidth: a measured pair (link probe) gets its own "links" entry,
 * the slower of its send/recv and all-reduce bus bandwidth at the largest
 * message (docs/profile-format.md's rule for measured inter-node figures);
 * the other pairs keep the built-in ib100. */
static void add_inter(reg_cluster_t *rc, json_t *doc)
{
    json_t *links = json_array();
    size_t n_pairs = json_array_size(rc->nodes) * (json_array_size(rc->nodes) - 1) / 2;
    for (size_t i = 0; i < rc->n_links; i++) {
        const link_fig_t *l = &rc->links[i];
        long a = node_index(rc, l->a), b = node_index(rc, l->b);
        double bw = l->sr > 0 && l->ar > 0 ? fmin(l->sr, l->ar) : l->sr > 0 ? l->sr : l->ar;
        if (a < 0 || b < 0 || a == b || !(bw > 0))
            continue;
        json_array_append_new(links, json_pack("{s:i, s:i, s:f}", "a", (json_int_t)a, "b",
                                               (json_int_t)b, "gbps", bw / 1e9));
        source(rc,
               "inter-node %s<->%s: %.2f GB/s measured by a link probe (%s; the slower of "
               "send/recv %.2f and all-reduce %.2f GB/s bus bandwidth at the largest message%s%s)",
               l->a, l->b, bw / 1e9, kind(l->simulated), l->sr / 1e9, l->ar / 1e9,
               l->comm[0] ? ", comm=" : "", l->comm);
    }
    json_object_set_new(doc, "link", json_string("ib100"));
    if (json_array_size(links) == 0)
        source(rc, "inter-node: built-in ib100 (no link probe between these workers yet: "
                   "tesselctl trial probe-link)");
    else if (json_array_size(links) < n_pairs)
        source(rc, "inter-node, the other node pairs: built-in ib100 (not probed)");
    if (json_array_size(links) > 0)
        json_object_set_new(doc, "links", links);
    else
        json_decref(links);
}

static json_t *document(reg_cluster_t *rc)
{
    json_t *types = json_object(), *doc;
    char name[256] = "registered:";
    size_t k;
    json_t *node;
    for (size_t i = 0; i < rc->n_models; i++)
        json_object_set(types, rc->models[i].type, rc->models[i].type_json);
    json_array_foreach(rc->nodes, k, node)
    {
        size_t at = strlen(name);
        snprintf(name + at, sizeof name - at, "%s%s", k ? "," : " ",
                 json_string_value(json_object_get(node, "name")));
    }
    doc = json_pack("{s:s, s:s, s:o, s:O}", "name", name, "comment",
                    rc->comment[0] ? rc->comment : "built-in figures only", "gpu_types", types,
                    "nodes", rc->nodes);
    if (doc && json_array_size(rc->nodes) > 1)
        add_inter(rc, doc);
    if (doc && rc->overlap >= 1)
        json_object_set_new(doc, "overlap_slowdown", json_real(rc->overlap));
    if (rc->overlap >= 1)
        source(rc, "overlap slowdown: %.2f, the larger side (%s)", rc->overlap,
               kind(rc->overlap_simulated));
    else
        source(rc, "overlap slowdown: built-in %.2f (not measured)", TSL_DEFAULT_OVERLAP_SLOWDOWN);
    return doc;
}

int tsl_remote_registered_cluster(const tsl_client_opts_t *co, const char *nodes, char **json_text,
                                  json_t **sources)
{
    Tessel__V1__ListWorkersRequest req = TESSEL__V1__LIST_WORKERS_REQUEST__INIT;
    reg_cluster_t *rc = calloc(1, sizeof *rc);
    tsl_client_opts_t eff = *co;
    tsl_rpc_client_t *c = NULL;
    ProtobufCMessage *reply = NULL;
    tsl_rpc_status_t st = {0};
    int ret;
    *json_text = NULL;
    *sources = NULL;
    if (!rc)
        return tsl_remote_fail(TSL_EXIT_SERVER, "out of memory");
    rc->sources = json_array();
    rc->nodes = json_array();
    if (eff.timeout_s <= 0)
        eff.timeout_s = TSL_REMOTE_DEFAULT_TIMEOUT_S;
    if ((ret = tsl_remote_open(&eff, &c)) != 0)
        goto out;
    if (tsl_rpc_unary(c, tsl_rpc_methods[TSL_RPC_ID_LIST_WORKERS].path, &req.base,
                      &tessel__v1__list_workers_response__descriptor, &reply, &st) != 0) {
        ret = tsl_rpc_report(stderr, &st);
        goto out;
    }
    const Tessel__V1__ListWorkersResponse *r = (const Tessel__V1__ListWorkersResponse *)reply;
    if ((ret = check_nodes(r, nodes)) != 0 || (ret = add_nodes(rc, r, nodes)) != 0 ||
        (ret = add_profiles(rc, c)) != 0)
        goto out;
    json_t *doc = document(rc);
    *json_text = doc ? json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(doc);
    ret = *json_text ? 0 : tsl_remote_fail(TSL_EXIT_SERVER, "out of memory");
    *sources = rc->sources;
    rc->sources = NULL;
out:
    if (reply)
        protobuf_c_message_free_unpacked(reply, NULL);
    tsl_rpc_client_close(c);
    for (size_t i = 0; i < rc->n_models; i++)
        json_decref(rc->models[i].type_json);
    json_decref(rc->sources);
    json_decref(rc->nodes);
    free(rc);
    return ret;
}

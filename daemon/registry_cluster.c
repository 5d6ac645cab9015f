/*
 * registry_cluster.c — a `registered` cluster from tesseld's store
 * (registry_cluster.h): the workers, then each GPU model's figures from its
 * aggregated profile, then the document.
 */
#include "registry_cluster.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster.h"
#include "request.h"
#include "store_registry.h"

#define GIB       1073741824.0
#define MAX_LINKS 64
#define NOT_NAMED "not in cluster.registered.nodes"

/* One row of a model's aggregate, copied out of the store's callback. */
typedef struct meas {
    char *name, *unit, *link_class;
    json_t *labels;
    double value;
    bool simulated;
    uint32_t n_samples;
} meas_t;

typedef struct model_figs {
    char model[128];
    uint64_t memory_bytes;
    const tsl_gpu_spec_t *base; /* matching built-in type, or NULL */
    char type[32];              /* the name used in the document */
    bool simulated;
    json_t *type_json;
    meas_t *rows;
    size_t n_rows, cap_rows;
} model_figs_t;

/* One node pair's link probe figures: the bus bandwidth of its largest message. */
typedef struct link_fig {
    char a[128], b[128];
    double sr, sr_bytes, ar, ar_bytes; /* send/recv, all-reduce (bytes/s; bytes) */
    bool simulated;
    char comm[16];
} link_fig_t;

/* A registered worker as listed, copied out of the store's callback. */
typedef struct worker_row {
    char host[128];
    char state[16];
    int64_t last_seen_unix;
    uint32_t n_devices;
    char model[128]; /* its first GPU's */
    uint64_t memory_bytes;
    bool mixed; /* GPUs of more than one model */
} worker_row_t;

typedef struct build {
    tsl_registry_cluster_t *out;
    worker_row_t *workers;
    size_t n_workers, cap_workers;
    json_t *nodes;
    json_t *hosts; /* the lowered names of nodes' entries, a set (host_taken) */
    model_figs_t models[TSL_REGISTRY_MAX_PROFILES];
    size_t n_models;
    double overlap; /* 0: not measured */
    bool overlap_simulated;
    link_fig_t links[MAX_LINKS]; /* measured inter-node pairs (link probes) */
    size_t n_links;
    int64_t now;
} build_t;

static void source(build_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void source(build_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    json_array_append_new(b->out->sources, json_vsprintf(fmt, ap));
    va_end(ap);
}

static const char *label(const meas_t *m, const char *key)
{
    json_t *v = json_object_get(m->labels, key);
    return json_is_string(v) ? json_string_value(v) : "";
}

static const char *kind(bool simulated)
{
    return simulated ? "simulated" : "measured";
}

/* The rows of one kind: measured when the model has any, else simulated. */
static bool use_row(const model_figs_t *mf, const meas_t *m)
{
    return m->simulated == mf->simulated;
}

/* ---- per GPU model: the figures of its aggregate ------------------------------------------ */

/* Efficiency (and peak, without a built-in) from the largest GEMM. */
static int figure_compute(build_t *b, model_figs_t *mf, tsl_err_t *err)
{
    const meas_t *best = NULL;
    double best_work = 0;
    size_t blocks = 0;
    for (size_t i = 0; i < mf->n_rows; i++) {
        const meas_t *m = &mf->rows[i];
        double work = 2.0 * atof(label(m, "m")) * atof(label(m, "n")) * atof(label(m, "k"));
        blocks += strcmp(m->name, "attention_fwd") == 0 || strcmp(m->name, "ffn_fwd") == 0;
        if (strcmp(m->name, "gemm_fwd") == 0 && strcmp(m->unit, "s") == 0 && m->value > 0 &&
            use_row(mf, m) && work > best_work) {
            best = m;
            best_work = work;
        }
    }
    if (!best && !mf->base)
        return tsl_err_setc(err, TSL_E_PRECONDITION,
                            "cluster.registered: GPU model '%s' has no built-in figures and its "
                            "profile has no gemm_fwd to take its speed from; let its worker "
                            "profile again (tessel-worker) or leave it out with nodes",
                            mf->model);
    if (!best) {
        source(b,
               "%s compute: built-in %s peak %.0f TFLOP/s x efficiency %.2f (no gemm_fwd measured)",
               mf->type, mf->base->name, mf->base->peak_flops / 1e12, mf->base->efficiency);
        return 0;
    }
    if (blocks)
        source(b,
               "%s compute: %zu attention/FFN block times (%s), interpolated over micro-batch "
               "size and TP split; what they do not cover at the efficiency below",
               mf->type, blocks, kind(best->simulated));
    double achieved = best_work / best->value;
    double peak = mf->base && mf->base->peak_flops >= achieved ? mf->base->peak_flops : achieved;
    json_object_set_new(mf->type_json, "peak_tflops", json_real(peak / 1e12));
    json_object_set_new(mf->type_json, "efficiency", json_real(achieved / peak));
    source(b,
           "%s compute: %.1f TFLOP/s achieved on gemm_fwd m=%s n=%s k=%s (%s, %u sample(s)) = "
           "efficiency %.3f of %s peak %.0f TFLOP/s",
           mf->type, achieved / 1e12, label(best, "m"), label(best, "n"), label(best, "k"),
           kind(best->simulated), best->n_samples, achieved / peak,
           mf->base && peak == mf->base->peak_flops ? "the built-in" : "a", peak / 1e12);
    return 0;
}

/* A measured bandwidth (bytes/s) the cluster document may carry: one outside the
 * request's physical bounds (request.h) would make every plan on the registered
 * cluster fail to load, so it is not taken; the source line says why and the
 * built-in figure stands. A probe on a loaded or broken link can measure that. */
static bool usable_gbps(build_t *b, const char *what, double bytes_per_s, const char *instead)
{
    double gbps = bytes_per_s / 1e9;
    if (gbps >= TSL_REQUEST_MIN_GBPS && gbps <= TSL_REQUEST_MAX_GBPS)
        return true;
    source(b,
           "%s: %s (%.4g GB/s measured is outside the physical bounds [%g, %g]: not taken; "
           "measure again)",
           what, instead, gbps, TSL_REQUEST_MIN_GBPS, TSL_REQUEST_MAX_GBPS);
    return false;
}

/* Largest-message all-reduce bus bandwidth; the slower PCIe direction. */
static void figure_links(build_t *b, model_figs_t *mf)
{
    double intra = 0, intra_bytes = -1, pcie = 0;
    const char *intra_link = "";
    for (size_t i = 0; i < mf->n_rows; i++) {
        const meas_t *m = &mf->rows[i];
        if (!use_row(mf, m) || strcmp(m->unit, "bytes/s") != 0 || !(m->value > 0) ||
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
    const char *k = kind(mf->simulated), *instead = mf->base ? "built-in" : "16 GB/s assumed";
    char what[96];
    snprintf(what, sizeof what, "%s intra-node", mf->type);
    if (intra > 0 && !usable_gbps(b, what, intra, instead)) {
        /* the source line says what stands instead */
    } else if (intra > 0) {
        json_object_set_new(mf->type_json, "intra_gbps", json_real(intra / 1e9));
        source(b, "%s intra-node: %.1f GB/s all-reduce bus bandwidth (%s, link %s)", mf->type,
               intra / 1e9, k, intra_link[0] ? intra_link : "?");
    } else {
        source(b, "%s intra-node: %s (no allreduce_busbw measured)", mf->type, instead);
    }
    snprintf(what, sizeof what, "%s host<->device", mf->type);
    if (pcie > 0 && !usable_gbps(b, what, pcie, instead)) {
        /* as above */
    } else if (pcie > 0) {
        json_object_set_new(mf->type_json, "pcie_gbps", json_real(pcie / 1e9));
        source(b, "%s host<->device: %.1f GB/s pinned PCIe, slower direction (%s)", mf->type,
               pcie / 1e9, k);
    } else {
        source(b, "%s host<->device: %s (no pcie_h2d/pcie_d2h measured)", mf->type, instead);
    }
}

static void figure_overlap(build_t *b, const model_figs_t *mf)
{
    for (size_t i = 0; i < mf->n_rows; i++) {
        const meas_t *m = &mf->rows[i];
        if (strcmp(m->name, "overlap_slowdown") == 0 && strcmp(m->unit, "ratio") == 0 &&
            use_row(mf, m) && m->value >= 1 && m->value > b->overlap) {
            b->overlap = m->value;
            b->overlap_simulated = m->simulated;
        }
    }
}

/* The pair {a, c} (either order), added when new; NULL when full. */
static link_fig_t *link_of(build_t *b, const char *a, const char *c)
{
    for (size_t i = 0; i < b->n_links; i++) {
        link_fig_t *l = &b->links[i];
        if ((!strcmp(l->a, a) && !strcmp(l->b, c)) || (!strcmp(l->a, c) && !strcmp(l->b, a)))
            return l;
    }
    if (b->n_links == MAX_LINKS)
        return NULL;
    link_fig_t *l = &b->links[b->n_links++];
    memset(l, 0, sizeof *l);
    snprintf(l->a, sizeof l->a, "%s", a);
    snprintf(l->b, sizeof l->b, "%s", c);
    return l;
}

/* Link probe rows (link class "inter-node", labels node and peer): per node
 * pair, the send/recv and all-reduce bus bandwidth of the largest message. */
static void figure_inter(build_t *b, const model_figs_t *mf)
{
    for (size_t i = 0; i < mf->n_rows; i++) {
        const meas_t *m = &mf->rows[i];
        bool sr = strcmp(m->name, "sendrecv_busbw") == 0,
             ar = strcmp(m->name, "allreduce_busbw") == 0;
        const char *a = label(m, "node"), *c = label(m, "peer");
        if (strcmp(m->link_class, "inter-node") != 0 || !(sr || ar) || !use_row(mf, m) ||
            !(m->value > 0) || !a[0] || !c[0])
            continue;
        link_fig_t *l = link_of(b, a, c);
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

/* The profile keys a newer report of this model changes (stale-marking). */
static void add_keys(tsl_registry_cluster_t *out, const model_figs_t *mf, bool any_rows)
{
    for (int sim = 0; sim < 2; sim++) {
        if (any_rows && (bool)sim != mf->simulated)
            continue;
        tsl_registry_profile_key(mf->model, sim, out->keys[out->n_keys],
                                 sizeof out->keys[out->n_keys]);
        out->key_ptrs[out->n_keys] = out->keys[out->n_keys];
        out->n_keys++;
    }
}

/* The gpu_types entry of one model from its aggregated profile. */
static int describe_model(build_t *b, model_figs_t *mf, tsl_err_t *err)
{
    mf->simulated = true; /* measured rows when there are any */
    for (size_t i = 0; i < mf->n_rows; i++)
        mf->simulated = mf->simulated && mf->rows[i].simulated;
    mf->base = tsl_gpu_match_model(mf->model, mf->memory_bytes);
    snprintf(mf->type, sizeof mf->type, "%.20s-%s", mf->base ? mf->base->name : "gpu",
             mf->n_rows == 0 ? "builtin"
             : mf->simulated ? "sim"
                             : "meas");
    add_keys(b->out, mf, mf->n_rows > 0);
    if (!mf->base && mf->n_rows == 0)
        return tsl_err_setc(err, TSL_E_PRECONDITION,
                            "cluster.registered: GPU model '%s' has no built-in figures and no "
                            "profile yet; wait for its worker's first report (tesselctl workers)",
                            mf->model);
    mf->type_json = json_object();
    if (mf->base)
        json_object_set_new(mf->type_json, "base", json_string(mf->base->name));
    else
        json_object_set_new(mf->type_json, "pcie_gbps", json_real(16));
    if (!mf->base)
        json_object_set_new(mf->type_json, "intra_gbps", json_real(16));
    json_object_set_new(mf->type_json, "memory_gb", json_real((double)mf->memory_bytes / GIB));
    source(b, "%s = %s, %.0f GiB as registered%s%s", mf->type, mf->model,
           (double)mf->memory_bytes / GIB, mf->base ? "; unmeasured figures from built-in " : "",
           mf->base ? mf->base->name : "");
    if (mf->n_rows == 0) {
        source(b, "%s: no profile reported yet: built-in figures only", mf->type);
        return 0;
    }
    if (figure_compute(b, mf, err) != 0)
        return -1;
    figure_links(b, mf);
    figure_inter(b, mf);
    figure_overlap(b, mf);
    tsl_registry_profile_ref_t *p = &b->out->profiles[b->out->n_profiles++];
    snprintf(p->model, sizeof p->model, "%s", mf->model);
    snprintf(p->type, sizeof p->type, "%s", mf->type);
    p->simulated = mf->simulated;
    return 0;
}

static int take_meas(void *ud, const tsl_reg_measurement_t *m)
{
    model_figs_t *mf = ud;
    if (mf->n_rows == mf->cap_rows) {
        size_t cap = mf->cap_rows ? 2 * mf->cap_rows : 64;
        meas_t *rows = realloc(mf->rows, cap * sizeof *rows);
        if (!rows)
            return -1;
        mf->rows = rows;
        mf->cap_rows = cap;
    }
    meas_t *r = &mf->rows[mf->n_rows];
    r->name = strdup(m->name);
    r->unit = strdup(m->unit);
    r->link_class = strdup(m->link_class ? m->link_class : "");
    r->labels = json_loads(m->labels_json ? m->labels_json : "{}", 0, NULL);
    r->value = m->value;
    r->simulated = m->simulated;
    r->n_samples = m->n_samples;
    mf->n_rows++;
    return r->name && r->unit && r->link_class ? 0 : -1;
}

/* ---- the workers ------------------------------------------------------------------------- */

static int take_worker(void *ud, const tsl_reg_worker_t *w)
{
    build_t *b = ud;
    if (b->n_workers == b->cap_workers) {
        size_t cap = b->cap_workers ? 2 * b->cap_workers : 16;
        worker_row_t *ws = realloc(b->workers, cap * sizeof *ws);
        if (!ws)
            return -1;
        b->workers = ws;
        b->cap_workers = cap;
    }
    worker_row_t *r = &b->workers[b->n_workers++];
    memset(r, 0, sizeof *r);
    snprintf(r->host, sizeof r->host, "%s", w->hostname);
    snprintf(r->state, sizeof r->state, "%s", w->state ? w->state : "");
    r->last_seen_unix = w->last_seen_unix;
    r->n_devices = w->n_devices;
    if (w->n_devices) {
        snprintf(r->model, sizeof r->model, "%s", w->devices[0].model);
        r->memory_bytes = w->devices[0].memory_bytes;
    }
    for (uint32_t k = 1; k < w->n_devices; k++)
        r->mixed = r->mixed || strcmp(w->devices[k].model, w->devices[0].model) != 0;
    return 0;
}

static bool named(const char *const *nodes, size_t n, const char *host)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(nodes[i], host) == 0)
            return true;
    return false;
}

/* Every name is a registered worker's (in any state). */
static int check_names(const build_t *b, const char *const *nodes, size_t n, tsl_err_t *err)
{
    for (size_t i = 0; i < n; i++) {
        bool found = false;
        for (size_t k = 0; k < b->n_workers && !found; k++)
            found = strcmp(b->workers[k].host, nodes[i]) == 0;
        if (!found)
            return tsl_err_set(err,
                               "cluster.registered.nodes[%zu]: '%s' is not a registered worker "
                               "(tesselctl workers lists them)",
                               i, nodes[i]);
    }
    return 0;
}

/* "12:03:01" today, else "2024-05-01 12:03" (the daemon's local time). */
static void when(int64_t unix_s, int64_t now, char *buf, size_t cap)
{
    time_t t = (time_t)unix_s;
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(buf, cap, now - unix_s < 86400 ? "%H:%M:%S" : "%Y-%m-%d %H:%M", &tm);
}

/* Whether a node of the document already has host's name (case-insensitively, as
 * hostnames compare): a second worker on one host (two agents splitting its GPUs) is
 * no second node behind a network link, and the cluster format refuses a name on two
 * nodes (docs/cluster-format.md). b->hosts holds the lowered names taken. */
static const char *host_key(const char *host, char *low, size_t cap)
{
    snprintf(low, cap, "%s", host);
    for (char *p = low; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return low;
}

static bool host_taken(const build_t *b, const char *host)
{
    char low[256];
    return json_object_get(b->hosts, host_key(host, low, sizeof low)) != NULL;
}

static int take_host(build_t *b, const char *host)
{
    char low[256];
    return json_object_set_new(b->hosts, host_key(host, low, sizeof low), json_true());
}

/* Why w stays out of the cluster, or NULL when it goes in. */
static const char *why_out(const build_t *b, const worker_row_t *w, const char *const *nodes,
                           size_t n_nodes, char *buf, size_t cap)
{
    char at[32];
    when(w->last_seen_unix, b->now, at, sizeof at);
    if (n_nodes && !named(nodes, n_nodes, w->host))
        snprintf(buf, cap, NOT_NAMED);
    else if (strcmp(w->state, "offline") == 0)
        snprintf(buf, cap, "offline since %s", at);
    else if (strcmp(w->state, "online") != 0)
        snprintf(buf, cap, "%s at %s", w->state, at);
    else if (w->n_devices == 0)
        snprintf(buf, cap, "no GPUs registered");
    else if (w->mixed)
        snprintf(buf, cap, "GPUs of different models; a node holds one type");
    else if (host_taken(b, w->host))
        snprintf(buf, cap, "another worker of this host is in the cluster (one per node)");
    else if (json_array_size(b->nodes) >= TSL_CLUSTER_MAX_NODES)
        snprintf(buf, cap, "above %u nodes", TSL_CLUSTER_MAX_NODES);
    else
        return NULL;
    return buf;
}

static void leave_out(tsl_registry_cluster_t *out, const char *host, const char *why)
{
    if (out->n_left_out < TSL_REGISTRY_MAX_LEFT_OUT)
        snprintf(out->left_out[out->n_left_out++], sizeof out->left_out[0], "%.60s (%.64s)", host,
                 why);
}

static model_figs_t *model_of(build_t *b, const worker_row_t *w)
{
    for (size_t i = 0; i < b->n_models; i++)
        if (strcmp(b->models[i].model, w->model) == 0)
            return &b->models[i];
    if (b->n_models == TSL_REGISTRY_MAX_PROFILES)
        return NULL;
    model_figs_t *mf = &b->models[b->n_models++];
    snprintf(mf->model, sizeof mf->model, "%s", w->model);
    mf->memory_bytes = w->memory_bytes;
    return mf;
}

/* One node entry per online worker chosen; the others left out, with why. */
static int add_nodes(build_t *b, const char *const *nodes, size_t n_nodes, tsl_err_t *err)
{
    char why[160];
    for (size_t i = 0; i < b->n_workers; i++) {
        const worker_row_t *w = &b->workers[i];
        if (why_out(b, w, nodes, n_nodes, why, sizeof why)) {
            leave_out(b->out, w->host, why);
            continue;
        }
        if (!model_of(b, w))
            return tsl_err_setc(err, TSL_E_PRECONDITION,
                                "cluster.registered: more than %u GPU models; name the nodes "
                                "of fewer models in nodes",
                                TSL_REGISTRY_MAX_PROFILES);
        if (take_host(b, w->host) != 0 ||
            json_array_append_new(b->nodes, json_pack("{s:s, s:i, s:s}", "name", w->host, "gpus",
                                                      (int)w->n_devices, "type", w->model)) != 0)
            return tsl_err_setc(err, TSL_E_NOMEM, "cluster.registered: out of memory");
    }
    return 0;
}

/* No online worker: why each one asked for is out, and what to do. */
static int none_online(const build_t *b, size_t n_nodes, tsl_err_t *err)
{
    char list[600] = "";
    size_t at = 0;
    for (size_t i = 0; i < b->out->n_left_out && at + 2 < sizeof list; i++)
        if (!strstr(b->out->left_out[i], "(" NOT_NAMED ")"))
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", at ? ", " : "",
                                   b->out->left_out[i]);
    return tsl_err_setc(err, TSL_E_PRECONDITION,
                        "cluster.registered: no online worker with GPUs to plan on%s%s%s%s; "
                        "start tessel-worker on the nodes (tesselctl workers shows their state)",
                        n_nodes ? " among the nodes named" : "", list[0] ? " (" : "", list,
                        list[0] ? ")" : "");
}

/* ---- the document ------------------------------------------------------------------------ */

/* The profile of every model, then the node types renamed to the document's. */
static int add_profiles(build_t *b, tsl_store_t *s, tsl_err_t *err)
{
    for (size_t i = 0; i < b->n_models; i++) {
        model_figs_t *mf = &b->models[i];
        if (tsl_registry_profile(s, mf->model, NULL, take_meas, mf, err) != 0)
            return tsl_err_prefix(err, "cluster.registered: the profile of %s", mf->model);
        if (describe_model(b, mf, err) != 0)
            return -1;
    }
    size_t k;
    json_t *node;
    json_array_foreach(b->nodes, k, node)
    {
        const char *model = json_string_value(json_object_get(node, "type"));
        for (size_t i = 0; i < b->n_models; i++)
            if (strcmp(b->models[i].model, model) == 0) {
                json_object_set_new(node, "type", json_string(b->models[i].type));
                break;
            }
    }
    return 0;
}

/* The index of node name in the document, or -1. */
static long node_index(const build_t *b, const char *name)
{
    size_t k;
    json_t *node;
    json_array_foreach(b->nodes, k, node)
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
static void add_inter(build_t *b, json_t *doc)
{
    json_t *links = json_array();
    size_t n_pairs = json_array_size(b->nodes) * (json_array_size(b->nodes) - 1) / 2,
           n_unusable = 0;
    for (size_t i = 0; i < b->n_links; i++) {
        const link_fig_t *l = &b->links[i];
        long x = node_index(b, l->a), y = node_index(b, l->b);
        double bw = l->sr > 0 && l->ar > 0 ? fmin(l->sr, l->ar) : l->sr > 0 ? l->sr : l->ar;
        if (x < 0 || y < 0 || x == y || !(bw > 0))
            continue; /* not a pair of this cluster */
        char what[2 * sizeof l->a + 16];
        snprintf(what, sizeof what, "inter-node %s<->%s", l->a, l->b);
        if (!usable_gbps(b, what, bw, "built-in ib100")) {
            n_unusable++;
            continue;
        }
        json_array_append_new(links, json_pack("{s:i, s:i, s:f}", "a", (json_int_t)x, "b",
                                               (json_int_t)y, "gbps", bw / 1e9));
        source(b,
               "inter-node %s<->%s: %.2f GB/s measured by a link probe (%s; the slower of "
               "send/recv %.2f and all-reduce %.2f GB/s bus bandwidth at the largest message%s%s)",
               l->a, l->b, bw / 1e9, kind(l->simulated), l->sr / 1e9, l->ar / 1e9,
               l->comm[0] ? ", comm=" : "", l->comm);
    }
    json_object_set_new(doc, "link", json_string("ib100"));
    if (json_array_size(links) == 0 && n_unusable == 0)
        source(b, "inter-node: built-in ib100 (no link probe between these workers yet: "
                  "tesselctl trial probe-link)");
    else if (json_array_size(links) == 0)
        source(b, "inter-node: built-in ib100 (no usable link probe: above)");
    else if (json_array_size(links) < n_pairs)
        source(b, "inter-node, the other node pairs: built-in ib100 (not probed)");
    if (json_array_size(links) > 0)
        json_object_set_new(doc, "links", links);
    else
        json_decref(links);
}

/* A comment for people: the profiles used. Nothing reads it back. */
static void comment(const build_t *b, char *buf, size_t cap)
{
    const tsl_registry_cluster_t *out = b->out;
    size_t at = (size_t)snprintf(buf, cap, "assembled by tesseld from the registered workers: %s",
                                 out->n_profiles ? "profiles of " : "built-in figures only");
    for (size_t i = 0; i < out->n_profiles && at < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, "%s%s (%s) as %s", i ? ", " : "",
                               out->profiles[i].model, kind(out->profiles[i].simulated),
                               out->profiles[i].type);
}

static json_t *document(build_t *b)
{
    json_t *types = json_object(), *doc;
    char name[256] = "registered:", note[1024];
    size_t k;
    json_t *node;
    for (size_t i = 0; i < b->n_models; i++)
        json_object_set(types, b->models[i].type, b->models[i].type_json);
    json_array_foreach(b->nodes, k, node)
    {
        size_t at = strlen(name);
        snprintf(name + at, sizeof name - at, "%s%s", k ? "," : " ",
                 json_string_value(json_object_get(node, "name")));
    }
    comment(b, note, sizeof note);
    doc = json_pack("{s:s, s:s, s:o, s:O}", "name", name, "comment", note, "gpu_types", types,
                    "nodes", b->nodes);
    if (doc && json_array_size(b->nodes) > 1)
        add_inter(b, doc);
    if (doc && b->overlap >= 1)
        json_object_set_new(doc, "overlap_slowdown", json_real(b->overlap));
    if (b->overlap >= 1)
        source(b, "overlap slowdown: %.2f, the larger side (%s)", b->overlap,
               kind(b->overlap_simulated));
    else
        source(b, "overlap slowdown: built-in %.2f (not measured)", TSL_DEFAULT_OVERLAP_SLOWDOWN);
    return doc;
}

/* ---- the whole ------------------------------------------------------------------------------ */

static void build_free(build_t *b)
{
    for (size_t i = 0; i < b->n_models; i++) {
        model_figs_t *mf = &b->models[i];
        for (size_t r = 0; r < mf->n_rows; r++) {
            free(mf->rows[r].name);
            free(mf->rows[r].unit);
            free(mf->rows[r].link_class);
            json_decref(mf->rows[r].labels);
        }
        free(mf->rows);
        json_decref(mf->type_json);
    }
    free(b->workers);
    json_decref(b->nodes);
    json_decref(b->hosts);
    free(b);
}

int tsl_registry_cluster_build(tsl_store_t *s, const char *const *nodes, size_t n_nodes,
                               int64_t now, uint32_t worker_timeout_s, tsl_registry_cluster_t *out,
                               tsl_err_t *err)
{
    build_t *b = calloc(1, sizeof *b);
    int rc = -1;
    memset(out, 0, sizeof *out);
    out->sources = json_array();
    if (!b || !out->sources || !(b->nodes = json_array()) || !(b->hosts = json_object())) {
        tsl_err_setc(err, TSL_E_NOMEM, "cluster.registered: out of memory");
        goto out;
    }
    b->out = out;
    b->now = now;
    if (tsl_registry_sweep(s, now, worker_timeout_s, NULL, NULL, err) != 0 ||
        tsl_registry_list(s, take_worker, b, err) != 0) {
        tsl_err_prefix(err, "cluster.registered: the workers");
        goto out;
    }
    if (check_names(b, nodes, n_nodes, err) != 0 || add_nodes(b, nodes, n_nodes, err) != 0)
        goto out;
    if (json_array_size(b->nodes) == 0) {
        none_online(b, n_nodes, err);
        goto out;
    }
    if (add_profiles(b, s, err) != 0)
        goto out;
    json_t *doc = document(b);
    out->json = doc ? json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(doc);
    if (!out->json)
        tsl_err_setc(err, TSL_E_NOMEM, "cluster.registered: out of memory");
    rc = out->json ? 0 : -1;
out:
    if (b)
        build_free(b);
    return rc;
}

void tsl_registry_cluster_free(tsl_registry_cluster_t *rc)
{
    free(rc->json);
    json_decref(rc->sources);
    rc->json = NULL;
    rc->sources = NULL;
}

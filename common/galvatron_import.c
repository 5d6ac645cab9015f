/*
 * galvatron_import.c — Galvatron's memory profiles and inter-node bandwidths
 * applied to a model and a cluster (galvatron_import.h says what goes where).
 */
#include "galvatron_import.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "galvatron_profile.h"

#define MB          1048576.0 /* Galvatron's MB: torch's bytes / 2^20 */
#define MAX_TYPES   8u
#define FP32_BYTES  4.0  /* parameter_size counts fp32 parameters */
#define STATE_BYTES 16.0 /* Galvatron's model_states: 4 × parameter_size */
/* Every memory figure is what one device held while Galvatron's profiler ran, so
 * none is above a device's memory: the request's bound of 16 TiB
 * (api/request.h TSL_REQUEST_MAX_DEVICE_MEMORY), in MB. A parameter_size of
 * 1e308 rounded to 2^63 parameters and priced an iteration at 6·10⁸ s. */
#define MAX_DEVICE_MB (16.0 * 1024 * 1024)

/* Whether v is a memory figure: a number of MB in [0, MAX_DEVICE_MB]. */
static bool mb_figure(const json_t *v)
{
    return json_is_number(v) && json_number_value(v) >= 0 && json_number_value(v) <= MAX_DEVICE_MB;
}

/* One layer type's imported figures, in bytes (per sample for activations). */
typedef struct mem_fig {
    bool set;
    double params, act_total, repl, shard, bnd;
    bool split; /* repl and shard fitted; else act_total is split by the shapes */
} mem_fig_t;

typedef struct mem_read {
    char seq[16];
    mem_fig_t type[MAX_TYPES], first, last;
    bool sp;
    bool found_seq_elsewhere;
} mem_read_t;

/* act(t) = repl + shard / t, least squares over the measured degrees. */
static void fit_act(const double *t, const double *a, uint32_t n, mem_fig_t *f)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (uint32_t i = 0; i < n; i++) {
        double x = 1.0 / t[i];
        sx += x, sy += a[i], sxx += x * x, sxy += x * a[i];
    }
    double den = n * sxx - sx * sx;
    if (n < 2 || fabs(den) < 1e-12)
        return; /* one degree: leave the split to the shapes */
    double shard = (n * sxy - sx * sy) / den, repl = (sy - shard * sx) / n;
    if (shard < 0)
        shard = 0, repl = sy / n;
    if (repl < 0)
        repl = 0, shard = sxy / sxx;
    f->repl = repl, f->shard = shard, f->split = true;
}

/* {"1": MB, "2": MB, ..., ["checkpoint": MB]} → activation figures of f. */
static int read_act(json_t *d, const char *what, bool sp, mem_fig_t *f, tsl_err_t *err)
{
    double t[16], a[16], t1 = 0;
    uint32_t n = 0;
    const char *k;
    json_t *v;
    json_object_foreach(d, k, v)
    {
        char *end;
        unsigned long deg = strtoul(k, &end, 10);
        if (strcmp(k, "checkpoint") == 0 && mb_figure(v)) {
            f->bnd = json_number_value(v) * MB;
            continue;
        }
        if (*end != '\0' || deg == 0 || !mb_figure(v))
            return tsl_err_setc(err, TSL_E_INVALID,
                                "galvatron memory profile: %s: key '%s' is not a TP degree "
                                "with an MB figure in [0, %.0f] (a device's 16 TiB)",
                                what, k, MAX_DEVICE_MB);
        if (n < 16)
            t[n] = (double)deg, a[n++] = json_number_value(v) * MB;
        if (deg == 1)
            t1 = json_number_value(v) * MB;
    }
    if (n == 0)
        return tsl_err_setc(err, TSL_E_INVALID, "galvatron memory profile: %s: no TP degree", what);
    f->act_total = t1 > 0 ? t1 : a[0] * t[0];
    if (!sp)
        fit_act(t, a, n, f);
    return 0;
}

/* "layertype_k[_sp]": {"SEQ": {parameter_size, tp_activation_per_bsz_dict}}. */
static int read_type(json_t *e, const char *key, bool sp, mem_fig_t *f, tsl_err_t *err)
{
    json_t *ps = json_object_get(e, "parameter_size");
    json_t *act = json_object_get(e, "tp_activation_per_bsz_dict");
    if (!mb_figure(ps) || json_number_value(ps) <= 0 || !json_is_object(act))
        return tsl_err_setc(err, TSL_E_INVALID,
                            "galvatron memory profile: %s: needs a positive parameter_size "
                            "(MB, at most a device's 16 TiB) and a tp_activation_per_bsz_dict",
                            key);
    f->params = json_number_value(ps) * MB / FP32_BYTES;
    f->set = true;
    return read_act(act, key, sp, f, err);
}

/* "other_memory_pp_on_{first|last}[_sp]": {"SEQ": {model_states, activation}}. */
static int read_other(json_t *e, const char *key, bool sp, mem_fig_t *f, tsl_err_t *err)
{
    json_t *ms = json_object_get(e, "model_states");
    json_t *act = json_object_get(e, "activation");
    json_t *ms1 = json_object_get(ms, "1");
    if (!mb_figure(ms1) || !json_is_object(act))
        return tsl_err_setc(err, TSL_E_INVALID,
                            "galvatron memory profile: %s: needs model_states[\"1\"] (MB, 0 to "
                            "a device's 16 TiB) and an activation dict",
                            key);
    f->params = json_number_value(ms1) * MB / STATE_BYTES;
    f->set = true;
    return read_act(act, key, sp, f, err);
}

/* The entry at our sequence length of key or key_sp; 0 when neither exists. */
static int entry(mem_read_t *r, json_t *o, const char *key, json_t **e, bool *sp, char *name,
                 size_t cap, tsl_err_t *err)
{
    *e = NULL;
    for (int s = 1; s >= 0; s--) {
        snprintf(name, cap, "%s%s", key, s ? "_sp" : "");
        json_t *byseq = json_object_get(o, name);
        if (!json_is_object(byseq))
            continue;
        *e = json_object_get(byseq, r->seq);
        *sp = s;
        if (*e == NULL) {
            r->found_seq_elsewhere = true;
            return 0;
        }
        if (!json_is_object(*e))
            return tsl_err_setc(err, TSL_E_INVALID,
                                "galvatron memory profile: %s[\"%s\"] is "
                                "not an object",
                                name, r->seq);
        return 1;
    }
    return 0;
}

static int read_memory(void *ud, const char *path, const char *name, tsl_err_t *err)
{
    (void)name;
    mem_read_t *r = ud;
    json_t *o = tsl_galvatron_load_json(path, err), *e;
    char key[64], full[80];
    bool sp = false;
    int rc = o == NULL ? -1 : 0;
    for (uint32_t k = 0; rc == 0 && k < MAX_TYPES; k++) {
        snprintf(key, sizeof key, "layertype_%u", k);
        if (!r->type[k].set && (rc = entry(r, o, key, &e, &sp, full, sizeof full, err)) == 1) {
            r->sp = r->sp || sp;
            rc = read_type(e, full, sp, &r->type[k], err);
        }
    }
    static const char *const others[2] = {"other_memory_pp_on_first", "other_memory_pp_on_last"};
    for (int i = 0; rc == 0 && i < 2; i++) {
        mem_fig_t *f = i ? &r->last : &r->first;
        if (!f->set && (rc = entry(r, o, others[i], &e, &sp, full, sizeof full, err)) == 1)
            rc = read_other(e, full, sp, f, err);
    }
    json_decref(o);
    return rc < 0 ? -1 : 0;
}

/* The layer with fig's figures: parameters, and activations split as fitted or
 * in the shapes' ratio (all sharded when the shapes give none). */
static void apply_fig(tsl_layer_t *l, const mem_fig_t *f)
{
    l->params = (uint64_t)llround(f->params);
    double repl = f->repl, shard = f->shard;
    if (!f->split) {
        double derived = (double)l->act_repl_bytes + (double)l->act_shard_bytes;
        double share = derived > 0 ? (double)l->act_repl_bytes / derived : 0;
        repl = f->act_total * share, shard = f->act_total - repl;
    }
    l->act_repl_bytes = (uint64_t)llround(repl);
    l->act_shard_bytes = (uint64_t)llround(shard);
    if (l->act_score_bytes > l->act_shard_bytes)
        l->act_score_bytes = l->act_shard_bytes;
    if (f->bnd > 0)
        l->bnd_act_bytes = (uint64_t)llround(f->bnd);
}

/* Layer type of each Transformer layer: the index of its kind among the
 * distinct encoder/decoder kinds in model order; -1 for other layers. */
static int layer_type(const tsl_model_t *m, uint32_t i)
{
    tsl_layer_kind_t seen[2];
    int n = 0;
    for (uint32_t j = 0; j <= i; j++) {
        tsl_layer_kind_t k = m->layers[j].kind;
        if (k != TSL_LAYER_ENCODER && k != TSL_LAYER_DECODER)
            continue;
        int t = 0;
        while (t < n && seen[t] != k)
            t++;
        if (t == n)
            seen[n++] = k;
        if (j == i)
            return t;
    }
    return -1;
}

static int import_memory(const char *dir, tsl_model_t *m, tsl_galvatron_import_t *g, tsl_err_t *err)
{
    mem_read_t *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return tsl_err_setc(err, TSL_E_NOMEM, "galvatron memory profile: out of memory");
    snprintf(r->seq, sizeof r->seq, "%u", m->tokens_per_sample);
    int rc = tsl_galvatron_model_profile(dir, "memory_profiling_", read_memory, r, err);
    if (rc != 0 && tsl_err_code(err) == TSL_E_NOTFOUND)
        rc = 0; /* no memory profile: the layers keep Tessel's own figures */
    if (rc == 0 && !r->type[0].set && r->found_seq_elsewhere)
        rc = tsl_err_setc(err, TSL_E_INVALID,
                          "galvatron memory profile %s: no entry at sequence length %s", dir,
                          r->seq);
    for (uint32_t i = 0; rc == 0 && i < m->n_layers; i++) {
        tsl_layer_t *l = &m->layers[i];
        int t = layer_type(m, i);
        const mem_fig_t *f = t >= 0                           ? &r->type[t]
                             : l->kind == TSL_LAYER_EMBEDDING ? &r->first
                             : l->kind == TSL_LAYER_HEAD      ? &r->last
                                                              : NULL;
        if (f != NULL && f->set) {
            apply_fig(l, f);
            g->memory_layers++;
        }
    }
    g->memory_sp = r->sp;
    free(r);
    return rc;
}

typedef struct link_read {
    uint32_t nodes, gpus;
    tsl_galvatron_import_t *g;
} link_read_t;

/* Whether name is PREFIX{nodes}nodes_{gpus}gpus_per_node.json for our shape. */
static bool our_shape(const link_read_t *lr, const char *name, const char *prefix)
{
    char fmt[96];
    unsigned n, gp;
    snprintf(fmt, sizeof fmt, "%s%%unodes_%%ugpus_per_node", prefix);
    return sscanf(name, fmt, &n, &gp) == 2 && n == lr->nodes && gp == lr->gpus;
}

static int read_links(void *ud, const char *path, const char *name, tsl_err_t *err)
{
    link_read_t *lr = ud;
    bool ar = our_shape(lr, name, "allreduce_bandwidth_");
    bool p2p = our_shape(lr, name, "p2p_bandwidth_");
    if (lr->nodes < 2 || !(ar || p2p))
        return 0;
    json_t *o = tsl_galvatron_load_json(path, err);
    if (o == NULL)
        return -1;
    char key[64];
    double gbps = 0;
    int rc;
    /* each figure within a cluster's bandwidth bounds (tsl_galvatron_gbps): 1e-9
     * GB/s was taken as the inter-node link and priced an iteration at 5·10⁷ s,
     * a negative one or a string dropped without a word */
    if (ar) {
        snprintf(key, sizeof key, "allreduce_size_%u_consec_0", lr->nodes);
        if ((rc = tsl_galvatron_gbps(o, path, key, &gbps, err)) == 0) {
            lr->g->inter_allreduce_bw = gbps * 1e9;
            snprintf(key, sizeof key, "allreduce_size_%u_consec_1", lr->nodes * lr->gpus);
            if ((rc = tsl_galvatron_gbps(o, path, key, &gbps, err)) == 0)
                lr->g->inter_wide_allreduce_bw = gbps * 1e9;
        }
    } else {
        snprintf(key, sizeof key, "pp_size_%u", lr->nodes);
        if ((rc = tsl_galvatron_gbps(o, path, key, &gbps, err)) == 0)
            lr->g->inter_p2p_bw = gbps * 1e9;
    }
    json_decref(o);
    return rc;
}

/* sp_time: bus bandwidth of each group size at its largest message (TP groups
 * inside a node: a one-node file of our node size serves any node count). */
static int read_sp(void *ud, const char *path, const char *name, tsl_err_t *err)
{
    link_read_t *lr = ud, one = {1, lr->gpus, lr->g};
    if (lr->g->sp_groups || !(our_shape(lr, name, "sp_time_") || our_shape(&one, name, "sp_time_")))
        return 0;
    json_t *o = tsl_galvatron_load_json(path, err), *v;
    if (o == NULL)
        return -1;
    tsl_galvatron_import_t *g = lr->g;
    double best_mb[TSL_GALVATRON_SP_GROUPS] = {0};
    const char *k;
    json_object_foreach(o, k, v)
    {
        unsigned n, mb;
        if (sscanf(k, "allreduce_size_%u_%uMB_time", &n, &mb) != 2 || n < 2 || !json_is_number(v) ||
            json_number_value(v) <= 0)
            continue;
        uint32_t i = 0;
        while (i < g->sp_groups && g->sp_n[i] != n)
            i++;
        if (i == TSL_GALVATRON_SP_GROUPS || (i < g->sp_groups && mb <= best_mb[i]))
            continue;
        if (i == g->sp_groups)
            g->sp_n[g->sp_groups++] = n;
        best_mb[i] = mb;
        g->sp_busbw[i] = 2.0 * (n - 1) / n * mb * MB / (json_number_value(v) / 1000.0);
    }
    json_decref(o);
    return 0;
}

static void set_inter(tsl_cluster_t *c, double bw)
{
    c->inter_bw = bw;
    for (uint32_t a = 0; c->inter_bw_matrix != NULL && a < c->n_nodes; a++)
        for (uint32_t b = 0; b < c->n_nodes; b++)
            c->inter_bw_matrix[(size_t)a * c->n_nodes + b] = a == b ? 0 : bw;
}

int tsl_galvatron_import(const char *dir, tsl_model_t *m, tsl_cluster_t *c,
                         tsl_galvatron_import_t *out, tsl_err_t *err)
{
    memset(out, 0, sizeof(*out));
    tsl_model_t mm = {0};
    if (tsl_model_copy(&mm, m, err) != 0)
        return -1;
    link_read_t lr = {c->n_nodes, c->n_nodes ? c->nodes[0].n_gpus : 0, out};
    if (import_memory(dir, &mm, out, err) != 0 ||
        tsl_galvatron_each_file(dir, "allreduce_bandwidth_", read_links, &lr, err) != 0 ||
        tsl_galvatron_each_file(dir, "p2p_bandwidth_", read_links, &lr, err) != 0 ||
        tsl_galvatron_each_file(dir, "sp_time_", read_sp, &lr, err) != 0) {
        tsl_model_free(&mm);
        memset(out, 0, sizeof(*out));
        return -1;
    }
    double a = out->inter_allreduce_bw, p = out->inter_p2p_bw;
    out->inter_bw = a > 0 && p > 0 ? fmin(a, p) : a > 0 ? a : p;
    if (out->inter_bw > 0)
        set_inter(c, out->inter_bw);
    tsl_model_free(m);
    *m = mm;
    return 0;
}

size_t tsl_galvatron_import_describe(const tsl_galvatron_import_t *g, char *buf, size_t cap)
{
    size_t n = 0;
    int w = 0;
    if (cap > 0)
        buf[0] = '\0';
    if (g->memory_layers > 0)
        w = snprintf(buf, cap, ", memory galvatron (%u layers%s)", g->memory_layers,
                     g->memory_sp ? ", sp profile" : "");
    n += w > 0 ? (size_t)w : 0;
    if (g->inter_bw > 0) {
        w = snprintf(n < cap ? buf + n : NULL, n < cap ? cap - n : 0,
                     ", inter-node galvatron %.2f GB/s", g->inter_bw / 1e9);
        n += w > 0 ? (size_t)w : 0;
    }
    return n;
}

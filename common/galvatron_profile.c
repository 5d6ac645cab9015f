/*
 * galvatron_profile.c — Galvatron's profile files as a Tessel profile
 * (galvatron_profile.h says what is mapped onto what).
 */
#include "galvatron_profile.h"

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "path_kind.h"

#define MAX_POINTS 256

typedef struct point {
    uint32_t layers, bsz;
    double ms;
} point_t;

int tsl_galvatron_each_file(const char *dir, const char *prefix, tsl_galvatron_file_fn fn, void *ud,
                            tsl_err_t *err)
{
    static const char *const subs[] = {"", "/hardware", "/../hardware"};
    char d[4096], path[4400];
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        snprintf(d, sizeof d, "%s%s", dir, subs[i]);
        DIR *h = opendir(d);
        if (h == NULL)
            continue;
        struct dirent *e;
        int rc = 0;
        while (rc == 0 && (e = readdir(h)) != NULL) {
            size_t n = strlen(e->d_name);
            if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 || n < 5 ||
                strcmp(e->d_name + n - 5, ".json") != 0)
                continue;
            snprintf(path, sizeof path, "%s/%s", d, e->d_name);
            rc = fn(ud, path, e->d_name, err);
        }
        closedir(h);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* The model_size of a Galvatron model config (*.yaml) in dir, or "" */
static void model_size_of(const char *dir, char *out, size_t cap)
{
    out[0] = '\0';
    DIR *h = opendir(dir);
    struct dirent *e;
    while (h && !out[0] && (e = readdir(h)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".yaml") != 0)
            continue;
        char path[4400], line[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r");
        while (f && !out[0] && fgets(line, sizeof line, f))
            if (sscanf(line, "model_size: %255[^ #\r\n]", out) != 1 || (size_t)strlen(out) >= cap)
                out[0] = '\0';
        if (f)
            fclose(f);
    }
    if (h)
        closedir(h);
}

#define MAX_CANDIDATES 16

/* The names in dir that start with prefix and end in suffix (at most max). */
static size_t candidates(const char *dir, const char *prefix, const char *suffix, char names[][256],
                         size_t max)
{
    size_t k = 0, lp = strlen(prefix), ls = strlen(suffix);
    DIR *h = opendir(dir);
    struct dirent *e;
    while (h && (e = readdir(h)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < lp + ls || n >= 256 || strncmp(e->d_name, prefix, lp) != 0 ||
            strcmp(e->d_name + n - ls, suffix) != 0)
            continue;
        if (k < max)
            snprintf(names[k], 256, "%s", e->d_name);
        k++;
    }
    if (h)
        closedir(h);
    return k;
}

int tsl_galvatron_model_profile(const char *dir, const char *prefix, tsl_galvatron_file_fn fn,
                                void *ud, tsl_err_t *err)
{
    char names[MAX_CANDIDATES][256], size[256], suffix[300], path[4400];
    size_t n = candidates(dir, prefix, ".json", names, MAX_CANDIDATES);
    if (n == 0)
        return tsl_err_setc(err, TSL_E_NOTFOUND, "galvatron profile %s: no %s*.json", dir, prefix);
    model_size_of(dir, size, sizeof size);
    if (n > 1 && size[0]) {
        snprintf(suffix, sizeof suffix, "_%s_all.json", size);
        n = candidates(dir, prefix, suffix, names, MAX_CANDIDATES);
    }
    if (n != 1) {
        char list[1024] = "";
        for (size_t i = 0, at = 0; i < n && i < MAX_CANDIDATES && at < sizeof list; i++)
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", i ? ", " : "", names[i]);
        return tsl_err_setc(
            err, TSL_E_INVALID,
            "galvatron profile %s: %zu candidates for the model's profile (%s); "
            "Galvatron reads only %s{precision}_{model_size}_all.json: keep that "
            "one, or put the model's Galvatron config (model_size: ...) beside it%s",
            dir, n, list, prefix,
            size[0] ? " (the config's model_size matches none or several)" : "");
    }
    snprintf(path, sizeof path, "%s/%s", dir, names[0]);
    return fn(ud, path, names[0], err);
}

json_t *tsl_galvatron_load_json(const char *path, tsl_err_t *err)
{
    json_error_t je;
    json_t *o = json_load_file(path, 0, &je);
    if (!json_is_object(o)) {
        json_decref(o);
        tsl_err_set(err, "galvatron profile %s: not a JSON object (%s)", path, je.text);
        return NULL;
    }
    return o;
}

typedef struct comp {
    uint32_t seq, n;
    point_t pts[MAX_POINTS];
    char path[4400]; /* the file read, for the note on what was left out */
} comp_t;

static int read_computation(void *ud, const char *path, const char *name, tsl_err_t *err)
{
    (void)name;
    comp_t *cp = ud;
    json_t *o = tsl_galvatron_load_json(path, err), *v;
    const char *key;
    if (o == NULL)
        return -1;
    snprintf(cp->path, sizeof cp->path, "%s", path);
    json_object_foreach(o, key, v)
    {
        uint32_t n, b, s;
        if (sscanf(key, "layernum[%u]_bsz%u_seq%u", &n, &b, &s) != 3 || s != cp->seq ||
            cp->n == MAX_POINTS)
            continue;
        /* a time of the model's sequence: a positive number of ms, at most an hour (the
         * bound on a profile's block times, profile_json.c). A negative one was taken
         * as measured: -3 and 14 ms at 2 and 4 layers priced a layer at 8.5 ms. */
        double ms = json_is_number(v) ? json_number_value(v) : -1;
        if (!(ms > 0 && ms <= 3.6e6)) { /* key is o's: named before o goes */
            tsl_err_set(err,
                        "galvatron profile %s: %s: must be a forward time in ms in (0, 3600000]",
                        path, key);
            json_decref(o);
            return -1;
        }
        cp->pts[cp->n++] = (point_t){n, b, ms};
    }
    json_decref(o);
    return 0;
}

/* Micro-batch b's fewest and most layers measured (*lo, *hi: NULL when b has none). */
static void layer_span(const comp_t *cp, uint32_t b, const point_t **lo, const point_t **hi)
{
    *lo = *hi = NULL;
    for (uint32_t i = 0; i < cp->n; i++) {
        const point_t *p = &cp->pts[i];
        if (p->bsz != b)
            continue;
        if (*lo == NULL || p->layers < (*lo)->layers)
            *lo = p;
        if (*hi == NULL || p->layers > (*hi)->layers)
            *hi = p;
    }
}

/* One layer's forward ms at micro-batch b: two layer counts' difference, as
 * Galvatron's profiler derives it; 0 when b has no two counts or when the time
 * does not grow with the layers (a difference ≤ 0 measures the noise, not the
 * layer: see left_out). */
static double layer_ms(const comp_t *cp, uint32_t b)
{
    const point_t *lo, *hi;
    layer_span(cp, b, &lo, &hi);
    if (lo == NULL || hi->layers == lo->layers || hi->ms <= lo->ms)
        return 0;
    return (hi->ms - lo->ms) / (hi->layers - lo->layers);
}

/* The note on micro-batch sizes whose time at more layers was not above the time
 * at fewer: their difference is the measurement's noise, not a layer (a layer
 * short beside its launch overheads). Galvatron's profiler keeps such a
 * difference verbatim (a zero or negative per-layer time, core/profiler/
 * model_profiler.py _process_computation_data, Hetu-Galvatron cea12ff) and its
 * "batch" mode fits a line over every micro-batch size (search_engine.py
 * get_profiled_model_configs); Tessel leaves the size out, so its rate comes from
 * the neighbouring sizes (profile.h: interpolated in the token count), and says
 * so naming the file and the keys. Returns how many sizes were left out. */
static uint32_t left_out(const comp_t *cp, char *note, size_t cap)
{
    uint32_t n = 0;
    const point_t *first_lo = NULL, *first_hi = NULL;
    for (uint32_t b = 1; b <= 4096; b++) {
        const point_t *lo, *hi;
        layer_span(cp, b, &lo, &hi);
        if (lo == NULL || hi->layers == lo->layers || hi->ms > lo->ms)
            continue;
        if (n++ == 0) {
            first_lo = lo;
            first_hi = hi;
        }
    }
    if (n == 0 || note == NULL || cap == 0)
        return n;
    char more[64] = "";
    if (n > 1)
        snprintf(more, sizeof more, " (and %u other micro-batch size%s)", n - 1, n > 2 ? "s" : "");
    /* a path long enough to fill the note cuts it: "..." says so */
    if (snprintf(note, cap,
                 "galvatron profile %s: layernum[%u]_bsz%u_seq%u (%g ms) is not above "
                 "layernum[%u]_bsz%u_seq%u (%g ms)%s: micro-batch %u left out, its layer time "
                 "taken from the other micro-batch sizes",
                 cp->path, first_hi->layers, first_hi->bsz, cp->seq, first_hi->ms, first_lo->layers,
                 first_lo->bsz, cp->seq, first_lo->ms, more, first_lo->bsz) >= (int)cap &&
        cap > 4)
        memcpy(note + cap - 4, "...", 4);
    return n;
}

typedef struct hw {
    uint32_t want_gpus, best_gpus;
    double busbw;
    double overlap;
} hw_t;

int tsl_galvatron_gbps(json_t *o, const char *path, const char *key, double *gbps, tsl_err_t *err)
{
    json_t *v = json_object_get(o, key);
    *gbps = json_is_number(v) ? json_number_value(v) : 0;
    if (v == NULL || (json_is_number(v) && (*gbps == 0 || (*gbps >= 0.01 && *gbps <= 100000))))
        return 0;
    if (!json_is_number(v))
        return tsl_err_setc(err, TSL_E_INVALID,
                            "galvatron profile %s: %s: must be a number (bus bandwidth in GB/s, "
                            "0 for none measured)",
                            path, key);
    return tsl_err_setc(err, TSL_E_INVALID,
                        "galvatron profile %s: %s: %g GB/s is outside the physical bounds "
                        "[0.01, 100000]",
                        path, key, *gbps);
}

static int read_allreduce(void *ud, const char *path, const char *name, tsl_err_t *err)
{
    hw_t *hw = ud;
    uint32_t nodes, gpus;
    if (sscanf(name, "allreduce_bandwidth_%unodes_%ugpus_per_node", &nodes, &gpus) != 2 ||
        nodes != 1 || (hw->best_gpus == hw->want_gpus) ||
        (gpus != hw->want_gpus && gpus < hw->best_gpus))
        return 0;
    json_t *o = tsl_galvatron_load_json(path, err);
    if (o == NULL)
        return -1;
    char key[64];
    snprintf(key, sizeof key, "allreduce_size_%u_consec_1", gpus);
    double gbps;
    /* 1e-12 GB/s was taken as measured and priced an iteration at 2.5e11 s; a
     * string was dropped, the bandwidth then taken from another group's file */
    int rc = tsl_galvatron_gbps(o, path, key, &gbps, err);
    if (rc == 0 && gbps > 0) {
        hw->busbw = gbps * 1e9; /* GB/s */
        hw->best_gpus = gpus;
    }
    json_decref(o);
    return rc;
}

static int read_overlap(void *ud, const char *path, const char *name, tsl_err_t *err)
{
    (void)name;
    hw_t *hw = ud;
    json_t *o = tsl_galvatron_load_json(path, err);
    if (o == NULL)
        return -1;
    json_t *v = json_object_get(o, "overlap_coe");
    double coe = json_is_number(v) ? json_number_value(v) : 1;
    /* a slowdown: a cluster's overlap_slowdown bounds (api/request.h); -1 or
     * 1e300 was dropped or taken without a word. Below 1 (a measurement's
     * noise) stays "no slowdown measured", as before. */
    if (v != NULL && !(json_is_number(v) && coe > 0 && coe <= 100)) {
        json_decref(o);
        return tsl_err_set(err, "galvatron profile %s: overlap_coe: must be a number in (0, 100]",
                           path);
    }
    if (coe >= 1)
        hw->overlap = coe;
    json_decref(o);
    return 0;
}

static int load_compute(const char *dir, const tsl_model_t *m, tsl_profile_t *p, char *note,
                        size_t note_cap, tsl_err_t *err)
{
    const tsl_layer_t *l = m->n_layers > 2 ? &m->layers[1] : NULL;
    comp_t *cp = calloc(1, sizeof(*cp));
    int rc = -1;
    if (cp == NULL || l == NULL) {
        tsl_err_set(err, "galvatron profile: %s", l ? "out of memory" : "the model has no layers");
        goto out;
    }
    cp->seq = m->tokens_per_sample;
    if (tsl_galvatron_model_profile(dir, "computation_profiling_", read_computation, cp, err) != 0)
        goto out;
    for (uint32_t b = 1; b <= 4096; b++) {
        double ms = layer_ms(cp, b);
        if (ms > 0)
            tsl_profile_add_layer(p, l, b, 1, ms / 1000.0);
    }
    char why[1024] = "";
    uint32_t dropped = left_out(cp, why, sizeof why);
    if (p->n_blocks == 0) {
        if (dropped)
            tsl_err_setc(err, TSL_E_INVALID, "%s; no micro-batch size is left", why);
        else
            tsl_err_setc(err, cp->n ? TSL_E_INVALID : TSL_E_NOTFOUND,
                         "galvatron profile %s: %s at sequence length %u", dir,
                         cp->n ? "no two layer counts of one micro-batch size"
                               : "no computation_profiling_*.json entries",
                         cp->seq);
        goto out;
    }
    if (note != NULL && note_cap > 0)
        snprintf(note, note_cap, "%s", why);
    rc = 0;
out:
    free(cp);
    return rc;
}

int tsl_galvatron_profile_load(const char *dir, const tsl_model_t *m, const tsl_cluster_t *c,
                               tsl_profile_t **out, char *note, size_t note_cap, tsl_err_t *err)
{
    *out = NULL;
    if (note != NULL && note_cap > 0)
        note[0] = '\0';
    if (tsl_path_is_dir("galvatron profile", dir, "Galvatron's *_profiling_*.json", err) != 0)
        return -1;
    tsl_profile_t *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return tsl_err_setc(err, TSL_E_NOMEM, "galvatron profile: out of memory");
    snprintf(p->source, sizeof p->source, "galvatron-profile %s", dir);
    snprintf(p->gpu, sizeof p->gpu, "%s",
             c->n_nodes ? c->gpu_types[c->nodes[0].gpu_type].name : "");
    hw_t hw = {.want_gpus = c->n_nodes ? c->nodes[0].n_gpus : 0};
    if (load_compute(dir, m, p, note, note_cap, err) != 0 ||
        tsl_galvatron_each_file(dir, "allreduce_bandwidth_", read_allreduce, &hw, err) != 0 ||
        tsl_galvatron_each_file(dir, "overlap_coefficient", read_overlap, &hw, err) != 0 ||
        tsl_profile_finish(p, err) != 0) {
        free(p);
        return -1;
    }
    p->gpus = hw.best_gpus;
    p->intra_busbw = hw.busbw;
    p->intra_group = hw.best_gpus;
    p->overlap_slowdown = hw.overlap;
    *out = p;
    return 0;
}

/*
 * profile_check.c — physical bounds and history checks of a profile report
 * (profile_check.h).
 */
#include "profile_check.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *unit;
    double lo, hi;
    bool compare; /* against the node's history */
} unit_bound_t;

static const unit_bound_t BOUNDS[] = {
    {"s", 1e-9, 3600.0, true},
    {"bytes/s", 1e4, 1e14, true},
    {"bytes", 0.0, 17592186044416.0 /* 16 TiB */, false},
    {"flop", 0.0, 1e18, false},
    {"flop/s", 1e6, 1e17, true},
    {"ratio", 0.5, 100.0, false},
};
#define N_BOUNDS (sizeof BOUNDS / sizeof BOUNDS[0])

static const unit_bound_t *bound_of(const char *unit)
{
    for (size_t i = 0; i < N_BOUNDS; i++)
        if (strcmp(BOUNDS[i].unit, unit) == 0)
            return &BOUNDS[i];
    return NULL;
}

static const char *label(const Tessel__V1__Measurement *m, const char *key)
{
    const char *v = NULL; /* the last one wins, as in the stored labels */
    for (size_t i = 0; i < m->n_labels; i++)
        if (strcmp(m->labels[i]->key, key) == 0)
            v = m->labels[i]->value;
    return v;
}

/* A label as a positive number, 0 when absent or not one. */
static double label_num(const Tessel__V1__Measurement *m, const char *key)
{
    const char *v = label(m, key);
    char *end;
    double x = v ? strtod(v, &end) : 0.0;
    return v && *v && !*end && isfinite(x) && x > 0 ? x : 0.0;
}

/* A one-GPU group's bus bandwidth is 0 by nccl-tests' definition. */
static bool zero_ok(const Tessel__V1__Measurement *m)
{
    size_t n = strlen(m->name);
    const char *g = label(m, "group");
    return m->value == 0.0 && n > 6 && strcmp(m->name + n - 6, "_busbw") == 0 && g &&
           strcmp(g, "1") == 0;
}

/* gemm_fwd's time implies a rate from its shape: within flop/s's bounds. */
static int check_gemm_rate(const Tessel__V1__Measurement *m, size_t i, tsl_err_t *err)
{
    double b = label_num(m, "batch");
    double flops = 2.0 * label_num(m, "m") * label_num(m, "n") * label_num(m, "k") * (b ? b : 1);
    if (strcmp(m->name, "gemm_fwd") != 0 || strcmp(m->unit, "s") != 0 || flops <= 0)
        return 0;
    const unit_bound_t *r = bound_of("flop/s");
    double rate = flops / m->value;
    if (rate >= r->lo && rate <= r->hi)
        return 0;
    return tsl_err_setc(err, TSL_E_INVALID,
                        "measurements[%zu].value: gemm_fwd %g s for %g FLOP implies %g FLOP/s, "
                        "outside the physical bounds [%g, %g]",
                        i, m->value, flops, rate, r->lo, r->hi);
}

int tsl_profile_check_figure(const Tessel__V1__Measurement *m, size_t i, tsl_err_t *err)
{
    const unit_bound_t *b = bound_of(m->unit);
    if (!b)
        return tsl_err_setc(err, TSL_E_INVALID,
                            "measurements[%zu].unit: '%s' (%s) is not one of s, bytes/s, bytes, "
                            "flop, flop/s, ratio",
                            i, m->unit, m->name);
    if (!isfinite(m->value) || ((m->value < b->lo || m->value > b->hi) && !zero_ok(m)))
        return tsl_err_setc(err, TSL_E_INVALID,
                            "measurements[%zu].value: %s = %g %s is outside the physical bounds "
                            "[%g, %g] %s",
                            i, m->name, m->value, m->unit, b->lo, b->hi, b->unit);
    return check_gemm_rate(m, i, err);
}

int tsl_profile_check_time(int64_t measured_unix, int64_t now, tsl_err_t *err)
{
    /* Compared without arithmetic on measured_unix: ±2^63 must not overflow. */
    if (measured_unix == 0 || (measured_unix >= now - TSL_PROFILE_MAX_AGE_S &&
                               measured_unix <= now + TSL_PROFILE_MAX_SKEW_S))
        return 0;
    return tsl_err_setc(err, TSL_E_INVALID,
                        "measured_unix: %" PRId64 " is more than %d days before or %d s after "
                        "the daemon's clock (%" PRId64 "); check the worker's clock",
                        measured_unix, TSL_PROFILE_MAX_AGE_S / 86400, TSL_PROFILE_MAX_SKEW_S, now);
}

static int prior_cmp(const tsl_profile_prior_t *a, const tsl_profile_prior_t *b)
{
    int c = strcmp(a->name, b->name);
    if (c == 0)
        c = (a->device_index > b->device_index) - (a->device_index < b->device_index);
    return c ? c : strcmp(a->labels_json, b->labels_json);
}

static int prior_qsort(const void *a, const void *b)
{
    return prior_cmp(a, b);
}

char *tsl_profile_labels_json(const Tessel__V1__Measurement *m)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < m->n_labels; i++)
        json_object_set_new(o, m->labels[i]->key, json_string(m->labels[i]->value));
    char *text = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(o);
    return text;
}

static int check_one(const Tessel__V1__Measurement *m, size_t i, const char *text,
                     const tsl_profile_prior_t *prior, size_t n_prior, tsl_err_t *err)
{
    const unit_bound_t *b = bound_of(m->unit);
    if (!b || !b->compare || m->value <= 0)
        return 0;
    tsl_profile_prior_t key = {.name = m->name,
                               .labels_json = text,
                               .device_index = m->per_device ? (int64_t)m->device_index : -1};
    const tsl_profile_prior_t *p = bsearch(&key, prior, n_prior, sizeof *prior, prior_qsort);
    double ratio = p && p->value > 0 ? m->value / p->value : 1.0;
    int rc = 0;
    if (ratio > TSL_PROFILE_OUTLIER || ratio < 1.0 / TSL_PROFILE_OUTLIER)
        rc = tsl_err_setc(err, TSL_E_INVALID,
                          "measurements[%zu].value: %s %s = %g %s is %.3g× this node's stored "
                          "%g %s; a figure more than %g× off the node's own history is refused "
                          "(new GPUs register as a new worker)",
                          i, m->name, text, m->value, m->unit, ratio, p->value, m->unit,
                          TSL_PROFILE_OUTLIER);
    return rc;
}

int tsl_profile_check_outliers(const Tessel__V1__ReportProfileRequest *req,
                               const char *const *labels, tsl_profile_prior_t *prior,
                               size_t n_prior, tsl_err_t *err)
{
    if (n_prior == 0)
        return 0;
    qsort(prior, n_prior, sizeof *prior, prior_qsort);
    for (size_t i = 0; i < req->n_measurements; i++)
        if (check_one(req->measurements[i], i, labels[i], prior, n_prior, err) != 0)
            return -1;
    return 0;
}

/* The labels tesseld reads back as numbers (registry_plan.c, registry_cluster.c:
 * a GEMM's shape, a block's, a collective's group and size) and the largest each may
 * be; tessel-worker writes them with %u / %llu. atof took "inf" as a GEMM of
 * infinite work (an infinite achieved FLOP/s in the profile the planner is given) and "1e3" or "0x10"
 * as numbers no worker writes. */
static const struct {
    const char *key;
    uint64_t max;
} NUM_LABELS[] = {
    {"m", UINT32_MAX},  {"n", UINT32_MAX},     {"k", UINT32_MAX}, {"batch", UINT32_MAX},
    {"h", UINT32_MAX},  {"s", UINT32_MAX},     {"a", UINT32_MAX}, {"mb", UINT32_MAX},
    {"tp", UINT32_MAX}, {"group", UINT32_MAX}, {"f", UINT32_MAX}, {"bytes", INT64_MAX},
};

/* v a whole decimal number 0..max, "f" may end in 'g' (a gated FFN). */
static bool whole_label(const char *key, const char *v, uint64_t max)
{
    size_t n = strspn(v, "0123456789");
    if (n == 0 || n > 19 || (v[n] != '\0' && !(strcmp(key, "f") == 0 && strcmp(v + n, "g") == 0)))
        return false;
    return strtoull(v, NULL, 10) <= max;
}

int tsl_profile_check_labels(const Tessel__V1__Measurement *m, size_t i, tsl_err_t *err)
{
    for (size_t a = 0; a < m->n_labels; a++) {
        const char *key = m->labels[a]->key, *v = m->labels[a]->value;
        for (size_t b = 0; b < a; b++)
            if (strcmp(m->labels[b]->key, key) == 0)
                return tsl_err_setc(err, TSL_E_INVALID,
                                    "measurements[%zu].labels: '%s' is given twice (%s): one "
                                    "value a label",
                                    i, key, m->name);
        for (size_t k = 0; k < sizeof NUM_LABELS / sizeof NUM_LABELS[0]; k++)
            if (strcmp(NUM_LABELS[k].key, key) == 0 && !whole_label(key, v, NUM_LABELS[k].max))
                return tsl_err_setc(err, TSL_E_INVALID,
                                    "measurements[%zu].labels: %s '%.40s' (%s) is not a whole "
                                    "decimal number 0..%" PRIu64 "%s",
                                    i, key, v, m->name, NUM_LABELS[k].max,
                                    strcmp(key, "f") == 0 ? ", with a 'g' for a gated FFN" : "");
    }
    return 0;
}

/* One figure's key: its name, device and labels as the store spells them. */
typedef struct {
    const char *name;
    int64_t device;
    const char *labels;
    size_t i;
} fig_key_t;

static int fig_cmp(const void *pa, const void *pb)
{
    const fig_key_t *a = pa, *b = pb;
    int c = strcmp(a->name, b->name);
    if (c == 0)
        c = (a->device > b->device) - (a->device < b->device);
    if (c == 0)
        c = strcmp(a->labels, b->labels);
    return c ? c : (a->i > b->i) - (a->i < b->i);
}

int tsl_profile_check_duplicates(const Tessel__V1__ReportProfileRequest *req,
                                 const char *const *labels, tsl_err_t *err)
{
    size_t n = req->n_measurements;
    fig_key_t *k = calloc(n ? n : 1, sizeof *k);
    int rc = k ? 0 : tsl_err_setc(err, TSL_E_NOMEM, "ReportProfile: out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const Tessel__V1__Measurement *m = req->measurements[i];
        k[i] = (fig_key_t){.name = m->name,
                           .device = m->per_device ? (int64_t)m->device_index : -1,
                           .labels = labels[i],
                           .i = i};
    }
    if (rc == 0)
        qsort(k, n, sizeof *k, fig_cmp);
    for (size_t i = 1; rc == 0 && i < n; i++) {
        fig_key_t a = k[i - 1], b = k[i];
        if (strcmp(a.name, b.name) == 0 && a.device == b.device && strcmp(a.labels, b.labels) == 0)
            rc = tsl_err_setc(err, TSL_E_INVALID,
                              "measurements[%zu]: %s %s on %s is measurements[%zu] again; a "
                              "report gives each figure once",
                              b.i, b.name, b.labels, b.device < 0 ? "the node" : "its device", a.i);
    }
    free(k);
    return rc;
}

int tsl_profile_check_report(const Tessel__V1__ReportProfileRequest *req, const char *const *labels,
                             int64_t now, tsl_profile_prior_t *prior, size_t n_prior,
                             tsl_err_t *err)
{
    /* an empty report would become the node's newest and replace its stored profile
     * with nothing (the aggregate takes each worker's newest report) */
    if (req->n_measurements == 0)
        return tsl_err_setc(err, TSL_E_INVALID,
                            "measurements: none given; a report holds at least one figure");
    if (tsl_profile_check_time(req->measured_unix, now, err) != 0)
        return -1;
    for (size_t i = 0; i < req->n_measurements; i++)
        if (tsl_profile_check_labels(req->measurements[i], i, err) != 0 ||
            tsl_profile_check_figure(req->measurements[i], i, err) != 0)
            return -1;
    if (tsl_profile_check_duplicates(req, labels, err) != 0)
        return -1;
    return tsl_profile_check_outliers(req, labels, prior, n_prior, err);
}

/*
 * prof_util.c — the pure parts of profiling: defaults, option parsing, FLOP
 * counts, the median, bandwidth arithmetic and nccl-tests' bus-bandwidth
 * factors. No CUDA here: the unit tests run it on machines without a GPU.
 */
#include "prof.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void tsl_prof_opts_default(tsl_prof_opts_t *o, bool quick)
{
    memset(o, 0, sizeof(*o));
    /* GPT2-345M and GPT2-1.3B layers (planner/model_presets.c), the shapes the
     * issue's examples plan; --shape replaces them. */
    o->shapes[o->n_shapes++] = (tsl_prof_shape_t){.hidden = 1024, .seq_len = 1024, .heads = 16};
    o->shapes[o->n_shapes++] = (tsl_prof_shape_t){.hidden = 2048, .seq_len = 1024, .heads = 32};
    static const uint32_t mb_full[] = {1, 2, 4, 8, 16}, tp_full[] = {1, 2, 4, 8};
    static const uint32_t mb_quick[] = {1, 4, 16}, tp_quick[] = {1, 4};
    const uint32_t *mb = quick ? mb_quick : mb_full, *tp = quick ? tp_quick : tp_full;
    o->n_mb = quick ? 3 : 5;
    o->n_tp = quick ? 2 : 4;
    memcpy(o->mb, mb, o->n_mb * sizeof(*mb));
    memcpy(o->tp, tp, o->n_tp * sizeof(*tp));
    o->warmup = quick ? 2 : 3;
    o->iters = quick ? 5 : 10;
    o->quick = quick;
    o->soak_max_s = quick ? TSL_PROF_SOAK_QUICK_S : TSL_PROF_SOAK_FULL_S;
}

static int parse_u32(const char *text, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v == 0 || v > 1u << 24 || text[0] == '-')
        return -1;
    *out = (uint32_t)v;
    return 0;
}

int tsl_prof_parse_list(const char *text, uint32_t *out, uint32_t *n, const char *what,
                        tsl_err_t *err)
{
    char buf[256];
    if (text == NULL || strlen(text) >= sizeof(buf))
        return tsl_err_set(err, "%s: give a list like 1,2,4", what);
    strcpy(buf, text);
    *n = 0;
    /* every entry a value: "1,,2" (a slip) was read as 1,2 */
    for (char *rest = buf, *tok; (tok = strsep(&rest, ",")) != NULL;) {
        if (!*tok)
            return tsl_err_set(err, "%s: an empty entry in '%s'", what, text);
        if (*n >= TSL_PROF_MAX_AXIS)
            return tsl_err_set(err, "%s: at most %u values", what, TSL_PROF_MAX_AXIS);
        if (parse_u32(tok, &out[*n]) != 0)
            return tsl_err_set(err, "%s: '%s' is not a positive integer", what, tok);
        (*n)++;
    }
    if (*n == 0)
        return tsl_err_set(err, "%s: empty list", what);
    return 0;
}

int tsl_prof_parse_shape(const char *text, tsl_prof_shape_t *out, tsl_err_t *err)
{
    char buf[256];
    memset(out, 0, sizeof(*out));
    if (text == NULL || strlen(text) >= sizeof(buf))
        return tsl_err_set(err, "shape: give e.g. h=1024,s=1024,a=16");
    strcpy(buf, text);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        if (strcasecmp(tok, "gated") == 0) {
            out->gated = true;
            continue;
        }
        char *eq = strchr(tok, '=');
        uint32_t v;
        if (eq == NULL || parse_u32(eq + 1, &v) != 0)
            return tsl_err_set(err, "shape: '%s' is not KEY=POSITIVE (h, s, a, d, f) or 'gated'",
                               tok);
        *eq = '\0';
        if (strcmp(tok, "h") == 0)
            out->hidden = v;
        else if (strcmp(tok, "s") == 0)
            out->seq_len = v;
        else if (strcmp(tok, "a") == 0)
            out->heads = v;
        else if (strcmp(tok, "d") == 0)
            out->head_dim = v;
        else if (strcmp(tok, "f") == 0)
            out->ffn_hidden = v;
        else
            return tsl_err_set(err, "shape: unknown key '%s' (h, s, a, d, f, gated)", tok);
    }
    if (out->hidden == 0 || out->seq_len == 0 || out->heads == 0)
        return tsl_err_set(err, "shape: '%s' needs h, s and a", text);
    if (out->head_dim == 0 && out->hidden % out->heads != 0)
        return tsl_err_set(err, "shape: h=%u does not divide by a=%u; give d", out->hidden,
                           out->heads);
    return 0;
}

/* A value given twice in list[0..n), or 0. */
static uint32_t repeated(const uint32_t *list, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < i; j++)
            if (list[i] == list[j])
                return list[i];
    return 0;
}

/* Whether some shape's heads and FFN width divide by tp (the profilers' rule for
 * timing a block at a split: prof_sim.c, prof_dev.c). */
static bool some_shape_splits(const tsl_prof_opts_t *o, uint32_t tp)
{
    for (uint32_t i = 0; i < o->n_shapes; i++) {
        tsl_prof_shape_t s = tsl_prof_shape_resolved(&o->shapes[i]);
        if (s.heads % tp == 0 && s.ffn_hidden % tp == 0)
            return true;
    }
    return false;
}

int tsl_prof_opts_check(const tsl_prof_opts_t *o, const char *mb_what, const char *tp_what,
                        tsl_err_t *err)
{
    uint32_t twice;
    if ((twice = repeated(o->mb, o->n_mb)) != 0)
        return tsl_err_set(err, "%s: %u given twice", mb_what, twice);
    if ((twice = repeated(o->tp, o->n_tp)) != 0)
        return tsl_err_set(err, "%s: %u given twice", tp_what, twice);
    for (uint32_t i = 0; i < o->n_tp; i++)
        if (!some_shape_splits(o, o->tp[i])) {
            tsl_prof_shape_t s = tsl_prof_shape_resolved(&o->shapes[0]);
            return tsl_err_set(err,
                               "%s: %u divides the heads and FFN width of no shape (the first: "
                               "a=%u, f=%u), so nothing would be measured at it",
                               tp_what, o->tp[i], s.heads, s.ffn_hidden);
        }
    return 0;
}

tsl_prof_shape_t tsl_prof_shape_resolved(const tsl_prof_shape_t *s)
{
    tsl_prof_shape_t r = *s;
    if (r.head_dim == 0 && r.heads != 0)
        r.head_dim = r.hidden / r.heads;
    if (r.ffn_hidden == 0)
        r.ffn_hidden = 4 * r.hidden;
    return r;
}

double tsl_prof_block_flops(tsl_prof_block_kind_t kind, const tsl_prof_shape_t *s0, uint32_t mb,
                            uint32_t tp)
{
    tsl_prof_shape_t s = tsl_prof_shape_resolved(s0);
    double T = (double)mb * s.seq_len, h = s.hidden, t = tp;
    if (kind == TSL_PROF_ATTENTION) {
        double d = (double)s.heads * s.head_dim;
        return (2.0 * T * h * 3.0 * d + 4.0 * T * s.seq_len * d + 2.0 * T * d * h) / t;
    }
    return 2.0 * (s.gated ? 3.0 : 2.0) * T * h * s.ffn_hidden / t;
}

static bool has(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = hay; *p != '\0'; p++)
        if (strncasecmp(p, needle, n) == 0)
            return true;
    return false;
}

void tsl_prof_hw_name(const char *model, uint64_t mem_bytes, char *out, size_t cap)
{
    double gib = (double)mem_bytes / (1024.0 * 1024 * 1024);
    const char *name = NULL;
    if (has(model, "H100"))
        name = "H100-80G";
    else if (has(model, "A100"))
        name = gib > 50 ? "A100-80G" : "A100-40G";
    else if (has(model, "V100"))
        name = gib > 20 ? "V100-32G" : "V100-16G";
    else if (has(model, "T4"))
        name = "T4-16G";
    else if (has(model, "TITAN RTX"))
        name = "RTX-TITAN-24G";
    else if (has(model, "2080 Ti"))
        name = "2080Ti-11G";
    snprintf(out, cap, "%s", name != NULL ? name : model);
}

/* "CUDA driver version is insufficient for CUDA runtime version" is also what the
 * runtime says when no driver is loaded at all, and sent operators of GPU-less nodes
 * to upgrade a driver they do not have: cudaDriverGetVersion tells the two apart. */
void tsl_prof_no_gpu_reason(bool driver_too_old, int driver_cuda, int runtime_cuda, const char *raw,
                            char *out, size_t cap)
{
    int rmaj = runtime_cuda / 1000, rmin = runtime_cuda % 1000 / 10;
    if (!driver_too_old)
        snprintf(out, cap,
                 "no GPU visible: none installed, or CUDA_VISIBLE_DEVICES hides them "
                 "(the CUDA runtime: %s)",
                 raw);
    else if (driver_cuda <= 0)
        snprintf(out, cap,
                 "no NVIDIA driver is loaded, and this worker's CUDA %d.%d needs one "
                 "(the CUDA runtime: %s)",
                 rmaj, rmin, raw);
    else
        snprintf(out, cap,
                 "the NVIDIA driver is too old for CUDA %d.%d: it runs CUDA %d.%d at most; "
                 "update the driver (the CUDA runtime: %s)",
                 rmaj, rmin, driver_cuda / 1000, driver_cuda % 1000 / 10, raw);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double tsl_prof_median(double *v, uint32_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double tsl_prof_gbps(double bytes, double t_s)
{
    return t_s > 0 ? bytes / t_s / 1e9 : 0;
}

double tsl_prof_busbw_factor(tsl_coll_t op, uint32_t n)
{
    if (n == 0)
        return 0;
    switch (op) {
    case TSL_COLL_ALL_REDUCE: return 2.0 * (n - 1) / n;
    case TSL_COLL_ALL_GATHER:
    case TSL_COLL_REDUCE_SCATTER: return (double)(n - 1) / n;
    case TSL_COLL_SEND_RECV: return 1.0;
    default: return 0;
    }
}

const char *tsl_prof_coll_name(tsl_coll_t op)
{
    static const char *names[] = {"all_reduce", "all_gather", "reduce_scatter", "send_recv"};
    return (unsigned)op < TSL_COLL_COUNT ? names[op] : "?";
}

const char *tsl_prof_block_name(tsl_prof_block_kind_t k)
{
    return k == TSL_PROF_ATTENTION ? "attention" : "ffn";
}

uint64_t tsl_prof_block_bytes(tsl_prof_block_kind_t kind, const tsl_prof_shape_t *s0, uint32_t mb,
                              uint32_t tp)
{
    tsl_prof_shape_t s = tsl_prof_shape_resolved(s0);
    uint64_t T = (uint64_t)mb * s.seq_len, h = s.hidden, elems;
    if (kind == TSL_PROF_ATTENTION) {
        uint64_t heads = s.heads / tp, dl = heads * s.head_dim, B = mb * heads;
        uint64_t ss = B * s.seq_len * s.seq_len;
        elems =
            4 * T * h + 2 * (h * 3 * dl) + 2 * (dl * h) + 2 * (3 * T * dl) + 2 * (T * dl) + 4 * ss;
    } else {
        uint64_t fl = s.ffn_hidden / tp, g = s.gated ? 2 : 1;
        elems = 4 * T * h + 2 * h * g * fl + 2 * fl * h + 2 * T * g * fl + 2 * T * fl;
    }
    return 2 * elems;
}

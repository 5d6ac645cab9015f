/*
 * prof_sim.c — the sim backend: a device description file (deploy/sim/NAME.json)
 * stands in for GPUs. Every figure is computed from the file's few numbers
 * and the profile says simulated: true; nothing here was measured.
 *
 * The file (docs/profile-format.md, "Device description files"):
 *   gpu, model, gpus, link, memory_gb, sm_count      the hardware key and facts
 *   peak_tflops, efficiency                            large-GEMM rate = peak × efficiency
 *   half_rate_tokens                                   tokens per device (mb·s/tp) at which a
 *                                                      block runs at half that rate
 *   h2d_gbps, d2h_gbps, device_memory_gbps
 *   intra_busbw_gbps, nccl_latency_us                  collectives: latency + size·factor/busbw
 *   overlap_slowdown                                   both sides of the overlap test
 *   boost_ratio, clock_settle_s (optional; 1 and 0)    the clock: a cold GPU starts at
 *                                                      boost_ratio × the sustained rate and
 *                                                      decays to it with time constant
 *                                                      clock_settle_s under load
 * Rates: a block of T tokens per device runs at rate·T/(T + half_rate_tokens), times the
 * clock's factor 1 + (boost_ratio − 1)·e^(−t/clock_settle_s) at t, the seconds of load
 * so far: the soak (prof_soak.c, in modelled time, no real waiting) advances t, the
 * table is priced at the t the soak ended (its filler keeps the clock there).
 */
#include "prof.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

typedef struct sim_dev {
    const char *gpu, *model, *link;
    double gpus, memory_gb, sm_count, peak_tflops, efficiency, half_tokens;
    double h2d, d2h, dmem, busbw, latency_us, overlap;
    double boost, settle_s; /* the clock model (1, 0: none) */
} sim_dev_t;

static int num(json_t *root, const char *path, const char *key, double lo, double *out,
               tsl_err_t *err)
{
    json_t *v = json_object_get(root, key);
    if (v == NULL)
        return tsl_err_setc(err, TSL_E_INVALID, "%s: '%s' is missing", path, key);
    if (!json_is_number(v) || !(json_number_value(v) >= lo) || !isfinite(json_number_value(v)))
        return tsl_err_setc(err, TSL_E_INVALID, "%s: '%s' must be a number >= %g", path, key, lo);
    *out = json_number_value(v);
    return 0;
}

/* An optional number: *out keeps its default when the key is absent. */
static int num_opt(json_t *root, const char *path, const char *key, double lo, double *out,
                   tsl_err_t *err)
{
    return json_object_get(root, key) == NULL ? 0 : num(root, path, key, lo, out, err);
}

static int str(json_t *root, const char *path, const char *key, const char **out, tsl_err_t *err)
{
    json_t *v = json_object_get(root, key);
    if (!json_is_string(v))
        return tsl_err_setc(err, TSL_E_INVALID, "%s: '%s' must be a string", path, key);
    *out = json_string_value(v);
    return 0;
}

static double sim_rate(const sim_dev_t *d, double tokens)
{
    return d->peak_tflops * 1e12 * d->efficiency * tokens / (tokens + d->half_tokens);
}

/* The clock's mean factor over [t0, t0 + w] of load (w 0: the factor at t0). */
static double sim_clock(const sim_dev_t *d, double t0, double w)
{
    double excess = d->boost - 1;
    if (excess <= 0 || d->settle_s <= 0)
        return 1;
    double tau = d->settle_s;
    if (w <= 0)
        return 1 + excess * exp(-t0 / tau);
    return 1 + excess * tau / w * (exp(-t0 / tau) - exp(-(t0 + w) / tau));
}

/* The soak's window on the model: want_s of 8192³ GEMMs from the load so far. */
typedef struct sim_soak {
    const sim_dev_t *d;
    double t_s;
} sim_soak_t;

static int sim_window(void *ud, double want_s, double *took_s, double *rate, tsl_err_t *err)
{
    (void)err;
    sim_soak_t *k = ud;
    *rate = sim_rate(k->d, 8192) * sim_clock(k->d, k->t_s, want_s);
    *took_s = want_s;
    k->t_s += want_s;
    return 0;
}

int tsl_prof_run_sim(const tsl_prof_opts_t *o, tsl_prof_t *p, tsl_err_t *err)
{
    int rc = -1;
    json_error_t je;
    json_t *root = NULL;
    sim_dev_t d;
    memset(&d, 0, sizeof(d));
    const char *path = o->device_file;
    if (path == NULL)
        return tsl_err_setc(err, TSL_E_INVALID,
                            "--device-file: the sim backend needs a device description "
                            "(deploy/sim/*.json)");
    root = json_load_file(path, 0, &je);
    if (root == NULL) {
        tsl_err_setc(err, TSL_E_INVALID, "%s:%d: %s", path, je.line, je.text);
        goto out;
    }
    if (!json_is_object(root)) {
        tsl_err_setc(err, TSL_E_INVALID, "%s: not a JSON object", path);
        goto out;
    }
    if (str(root, path, "gpu", &d.gpu, err) || str(root, path, "model", &d.model, err) ||
        str(root, path, "link", &d.link, err) || num(root, path, "gpus", 1, &d.gpus, err) ||
        num(root, path, "memory_gb", 1e-3, &d.memory_gb, err) ||
        num(root, path, "sm_count", 1, &d.sm_count, err) ||
        num(root, path, "peak_tflops", 1e-3, &d.peak_tflops, err) ||
        num(root, path, "efficiency", 1e-3, &d.efficiency, err) ||
        num(root, path, "half_rate_tokens", 0, &d.half_tokens, err) ||
        num(root, path, "h2d_gbps", 1e-3, &d.h2d, err) ||
        num(root, path, "d2h_gbps", 1e-3, &d.d2h, err) ||
        num(root, path, "device_memory_gbps", 1e-3, &d.dmem, err) ||
        num(root, path, "intra_busbw_gbps", 1e-3, &d.busbw, err) ||
        num(root, path, "nccl_latency_us", 0, &d.latency_us, err) ||
        num(root, path, "overlap_slowdown", 1, &d.overlap, err))
        goto out;
    d.boost = 1;
    if (num_opt(root, path, "boost_ratio", 1, &d.boost, err) ||
        num_opt(root, path, "clock_settle_s", 0, &d.settle_s, err))
        goto out;
    if (d.boost > 1 && d.settle_s <= 0) {
        tsl_err_setc(err, TSL_E_INVALID,
                     "%s: 'clock_settle_s' must be > 0 where 'boost_ratio' is above 1", path);
        goto out;
    }
    if (d.efficiency > 1 || d.gpus > 64) {
        tsl_err_setc(err, TSL_E_INVALID, "%s: efficiency must be <= 1 and gpus <= 64", path);
        goto out;
    }
    snprintf(p->backend, sizeof(p->backend), "sim");
    p->simulated = true;
    snprintf(p->hw_gpu, sizeof(p->hw_gpu), "%s", d.gpu);
    snprintf(p->hw_link, sizeof(p->hw_link), "%s", d.gpus == 1 ? "single" : d.link);
    p->gpus = (uint32_t)d.gpus;
    snprintf(p->model, sizeof(p->model), "%s", d.model);
    snprintf(p->uuid, sizeof(p->uuid), "SIM-%s-0", d.gpu);
    p->mem_total_bytes = (uint64_t)(d.memory_gb * 1024 * 1024 * 1024);
    p->mem_free_bytes = p->mem_total_bytes;
    p->sm_count = (uint32_t)d.sm_count;
    snprintf(p->driver_version, sizeof(p->driver_version), "sim");
    snprintf(p->runtime_version, sizeof(p->runtime_version), "sim");
    snprintf(p->cublas_version, sizeof(p->cublas_version), "sim");
    snprintf(p->nccl_version, sizeof(p->nccl_version), "sim");
    p->warmup = 0;
    p->iters = 1;

    /* the soak, on the modelled clock: the table runs at the clock it ends at */
    sim_soak_t soak = {.d = &d, .t_s = 0};
    p->soak = (tsl_prof_soak_t){
        .max_s = o->soak_max_s > 0 ? o->soak_max_s : 0, .window_s = 1.0, .gemm = 8192};
    if (tsl_prof_soak(sim_window, &soak, &p->soak, NULL, err)) /* modelled: no progress */
        goto out;
    double clock = sim_clock(&d, soak.t_s, 0);

    /* GEMMs: rate by the cube root of m·n·k·batch, standing in for tokens */
    static const uint32_t ref[] = {8192, 4096};
    for (size_t i = 0; i < 2; i++) {
        tsl_prof_gemm_t *g = &p->gemms[p->n_gemms++];
        snprintf(g->what, sizeof(g->what), "reference %u^3", ref[i]);
        g->m = g->n = g->k = ref[i];
        g->batch = 1;
        g->flops = 2.0 * ref[i] * ref[i] * ref[i];
        g->time_s = g->flops / (sim_rate(&d, ref[i]) * clock);
    }
    for (uint32_t si = 0; si < o->n_shapes; si++)
        for (uint32_t ti = 0; ti < o->n_tp; ti++)
            for (uint32_t mi = 0; mi < o->n_mb; mi++)
                for (int k = 0; k < 2; k++) {
                    tsl_prof_shape_t s = tsl_prof_shape_resolved(&o->shapes[si]);
                    uint32_t tp = o->tp[ti], mb = o->mb[mi];
                    if (s.heads % tp != 0 || s.ffn_hidden % tp != 0 ||
                        p->n_blocks >= TSL_PROF_MAX_BLOCKS)
                        continue;
                    tsl_prof_block_t *b = &p->blocks[p->n_blocks++];
                    b->kind = (tsl_prof_block_kind_t)k;
                    b->shape = o->shapes[si];
                    b->mb = mb;
                    b->tp = tp;
                    b->fwd_flops = tsl_prof_block_flops(b->kind, &s, mb, tp);
                    double rate = sim_rate(&d, (double)mb * s.seq_len / tp) * clock;
                    b->fwd_s = b->fwd_flops / rate;
                    b->bwd_s = 2 * b->fwd_s;
                    b->mem_bytes = tsl_prof_block_bytes(b->kind, &s, mb, tp);
                }
    p->h2d_gbps = d.h2d;
    p->d2h_gbps = d.d2h;
    p->dmem_gbps = d.dmem;
    p->h2d_bytes = 256ull << 20;
    p->dmem_bytes = 1ull << 30;
    uint32_t n = p->gpus, g_first = n == 1 ? 1 : 2;
    uint64_t max_bytes = o->quick ? 256ull << 20 : 1ull << 30;
    for (uint32_t g = g_first; g <= n; g++)
        for (int op = 0; op < TSL_COLL_COUNT; op++) {
            if (op == TSL_COLL_SEND_RECV && g == 1)
                continue;
            for (uint64_t bytes = 1024; bytes <= max_bytes && p->n_colls < TSL_PROF_MAX_COLLS;
                 bytes *= 4) {
                tsl_prof_coll_t *c = &p->colls[p->n_colls++];
                c->op = (tsl_coll_t)op;
                c->group = g;
                c->bytes = bytes / (2 * g) * 2 * g;
                double f = tsl_prof_busbw_factor(c->op, g);
                /* one rank: a local copy at device-memory speed (read + write) */
                c->time_s = d.latency_us * 1e-6 + (g == 1 ? 2.0 * c->bytes / (d.dmem * 1e9)
                                                          : c->bytes * f / (d.busbw * 1e9));
                c->algbw_gbps = tsl_prof_gbps((double)c->bytes, c->time_s);
                c->busbw_gbps = c->algbw_gbps * f;
            }
        }
    tsl_prof_overlap_t *ov = &p->overlap[p->n_overlap++];
    snprintf(ov->comm, sizeof(ov->comm), "%s", n > 1 ? "nccl-all-reduce" : "d2d-copy");
    ov->stand_in = n == 1;
    ov->gemm_m = ov->gemm_n = ov->gemm_k = 8192;
    ov->comm_bytes = 512ull << 20;
    ov->gemm_alone_s = ov->comm_alone_s = 0.2;
    ov->gemm_together_s = ov->comm_together_s = 0.2 * d.overlap;
    ov->gemm_slowdown = ov->comm_slowdown = d.overlap;
    snprintf(p->notes, sizeof(p->notes),
             "SIMULATED from %s: nothing was measured; block time = FLOPs / (peak x efficiency "
             "x T/(T + half_rate_tokens)), T = tokens per device",
             path);
    rc = 0;
out:
    json_decref(root);
    return rc;
}

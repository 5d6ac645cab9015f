/*
 * agent_measure.c — what the node has and what it measures (agent.h).
 *
 * The sim backend reads a device description (JSON, docs/worker.md) and derives
 * every figure from it with the same formulas a real run is judged by (GEMM time
 * from FLOPs and achieved throughput, bus bandwidth as nccl-tests defines it), so
 * the daemon, the aggregate and the planner see the shapes of real profiles.
 * The worker registers as simulated and the daemon marks every figure so.
 *
 * The cuda backend is the profiler's (worker/profile/); this agent refuses it
 * with a clear message until that is linked in.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"

#define GIB 1073741824.0

/* ---- the device file -------------------------------------------------------------------- */

typedef struct sim_gpu {
    double peak_tflops, gemm_efficiency, hbm_gbps, pcie_gbps;
} sim_gpu_t;

typedef struct sim_file {
    json_t *root;
    double intra_busbw_gbps, overlap_slowdown;
    const char *link;
} sim_file_t;

static int load_file(const char *path, sim_file_t *f, tsl_err_t *err)
{
    json_error_t je;
    memset(f, 0, sizeof *f);
    f->root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!f->root)
        return tsl_err_set(err, "device file %s:%d: %s", path, je.line, je.text);
    json_t *gpus = json_object_get(f->root, "gpus");
    if (!json_is_array(gpus) || json_array_size(gpus) == 0 ||
        json_array_size(gpus) > TSL_AGENT_MAX_DEVICES) {
        json_decref(f->root);
        f->root = NULL;
        return tsl_err_set(err, "device file %s: \"gpus\" must be an array of 1 to %u GPUs", path,
                           TSL_AGENT_MAX_DEVICES);
    }
    json_t *v = json_object_get(f->root, "intra_busbw_gbps");
    f->intra_busbw_gbps = json_is_number(v) ? json_number_value(v) : 0;
    v = json_object_get(f->root, "overlap_slowdown");
    f->overlap_slowdown = json_is_number(v) ? json_number_value(v) : 1.3;
    v = json_object_get(f->root, "link");
    f->link = json_is_string(v) ? json_string_value(v) : "nvlink";
    return 0;
}

static double num(json_t *o, const char *key, double def)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : def;
}

static const char *str(json_t *o, const char *key, const char *def)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : def;
}

/* One GPU entry: model and memory are required, the figures positive. */
static int read_gpu(const char *path, size_t i, json_t *g, tsl_agent_device_t *d, sim_gpu_t *s,
                    tsl_err_t *err)
{
    const char *model = str(g, "model", "");
    double mem_gb = num(g, "memory_gb", 0);
    memset(d, 0, sizeof *d);
    if (!model[0] || mem_gb <= 0)
        return tsl_err_set(err, "device file %s: gpus[%zu] needs \"model\" and a positive "
                           "\"memory_gb\"", path, i);
    d->index = (uint32_t)i;
    snprintf(d->model, sizeof d->model, "%s", model);
    snprintf(d->uuid, sizeof d->uuid, "%s", str(g, "uuid", ""));
    d->memory_bytes = (uint64_t)(mem_gb * GIB);
    d->sm_count = (uint32_t)num(g, "sm_count", 0);
    if (s) {
        s->peak_tflops = num(g, "peak_tflops", 0);
        s->gemm_efficiency = num(g, "gemm_efficiency", 0.6);
        s->hbm_gbps = num(g, "hbm_gbps", 0);
        s->pcie_gbps = num(g, "pcie_gbps", 25);
        if (!(s->peak_tflops > 0) || !(s->gemm_efficiency > 0 && s->gemm_efficiency <= 1))
            return tsl_err_set(err, "device file %s: gpus[%zu] needs \"peak_tflops\" > 0 and "
                               "\"gemm_efficiency\" in (0, 1]", path, i);
    }
    return 0;
}

/* cfg->gpus: "" = every GPU, else a comma-separated list of indices. */
static bool selected(const char *list, uint32_t index)
{
    if (!list[0])
        return true;
    for (const char *p = list; *p;) {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        if (end != p && v == index)
            return true;
        p = *end ? end + 1 : end;
    }
    return false;
}

int tsl_agent_discover(const tsl_agent_config_t *cfg, tsl_agent_node_t *node, tsl_err_t *err)
{
    sim_file_t f;
    memset(node, 0, sizeof *node);
    snprintf(node->hostname, sizeof node->hostname, "%s", cfg->node_name);
    if (strcmp(cfg->backend, "sim") != 0)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "backend cuda: this tessel-worker was built without the CUDA "
                            "profiler (worker/profile); use --backend sim with a device file");
    if (load_file(cfg->device_file, &f, err) != 0)
        return -1;
    json_t *gpus = json_object_get(f.root, "gpus");
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < json_array_size(gpus); i++) {
        if (!selected(cfg->gpus, (uint32_t)i))
            continue;
        rc = read_gpu(cfg->device_file, i, json_array_get(gpus, i), &node->devices[node->n_devices],
                      NULL, err);
        node->n_devices += rc == 0;
    }
    if (rc == 0 && node->n_devices == 0)
        rc = tsl_err_set(err, "node.gpus: '%s' selects none of the %zu GPUs in %s", cfg->gpus,
                         json_array_size(gpus), cfg->device_file);
    snprintf(node->driver_version, sizeof node->driver_version, "%s", str(f.root, "driver_version", "sim"));
    snprintf(node->cuda_version, sizeof node->cuda_version, "%s", str(f.root, "cuda_version", "sim"));
    snprintf(node->nccl_version, sizeof node->nccl_version, "%s", str(f.root, "nccl_version", "sim"));
    node->simulated = true;
    json_decref(f.root);
    return rc;
}

/* ---- measurements ----------------------------------------------------------------------------- */

typedef struct builder {
    tsl_agent_profile_t *p;
    size_t cap;
} builder_t;

/* Appends one measurement; labels are "key=value" pairs, NULL-terminated. */
static tsl_agent_measurement_t *add(builder_t *b, const char *name, const char *unit, double value,
                                    int device, ...)
{
    if (b->p->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 32;
        tsl_agent_measurement_t *m = realloc(b->p->m, cap * sizeof *m);
        if (!m)
            return NULL;
        b->p->m = m;
        b->cap = cap;
    }
    tsl_agent_measurement_t *m = &b->p->m[b->p->n++];
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->unit, sizeof m->unit, "%s", unit);
    m->value = value;
    m->per_device = device >= 0;
    m->device_index = device >= 0 ? (uint32_t)device : 0;
    va_list ap;
    va_start(ap, device);
    const char *kv;
    while ((kv = va_arg(ap, const char *)) != NULL && m->n_labels < TSL_AGENT_MAX_LABELS) {
        const char *eq = strchr(kv, '=');
        if (!eq)
            continue;
        snprintf(m->keys[m->n_labels], sizeof m->keys[0], "%.*s", (int)(eq - kv), kv);
        snprintf(m->values[m->n_labels], sizeof m->values[0], "%s", eq + 1);
        m->n_labels++;
    }
    va_end(ap);
    return m;
}

/* Achieved fraction of peak for an m×n×k GEMM: small GEMMs cannot fill the GPU
 * (AMP 3.4), so efficiency rises with the work towards the file's figure. */
static double gemm_efficiency(const sim_gpu_t *s, double m)
{
    return s->gemm_efficiency * (m / (m + 768.0));
}

static int measure_gpu(builder_t *b, const tsl_agent_device_t *d, const sim_gpu_t *s)
{
    static const unsigned sizes[] = {1024, 2048, 4096, 8192};
    int dev = (int)d->index, ok = 1;
    char shape[4][24];
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        double m = sizes[i], flops = 2.0 * m * m * m;
        double t = flops / (s->peak_tflops * 1e12 * gemm_efficiency(s, m));
        snprintf(shape[0], sizeof shape[0], "m=%u", sizes[i]);
        snprintf(shape[1], sizeof shape[1], "n=%u", sizes[i]);
        snprintf(shape[2], sizeof shape[2], "k=%u", sizes[i]);
        ok &= add(b, "gemm_fwd", "s", t, dev, shape[0], shape[1], shape[2], "dtype=bf16",
                  (const char *)NULL) != NULL;
    }
    ok &= add(b, "memory_total", "bytes", (double)d->memory_bytes, dev, (const char *)NULL) != NULL;
    ok &= add(b, "pcie_h2d", "bytes/s", s->pcie_gbps * 1e9, dev, "bytes=268435456", "pinned=1",
              (const char *)NULL) != NULL;
    ok &= add(b, "pcie_d2h", "bytes/s", s->pcie_gbps * 0.95e9, dev, "bytes=268435456", "pinned=1",
              (const char *)NULL) != NULL;
    if (s->hbm_gbps > 0)
        ok &= add(b, "hbm_bw", "bytes/s", s->hbm_gbps * 1e9, dev, (const char *)NULL) != NULL;
    return ok ? 0 : -1;
}

static int measure_node(builder_t *b, const sim_file_t *f, uint32_t n_gpus)
{
    char group[24], link[40];
    int ok = 1;
    snprintf(link, sizeof link, "link=%s", f->link);
    for (uint32_t g = 2; g <= n_gpus && f->intra_busbw_gbps > 0; g *= 2) {
        snprintf(group, sizeof group, "group=%u", g);
        ok &= add(b, "allreduce_busbw", "bytes/s", f->intra_busbw_gbps * 1e9, -1, group,
                  "bytes=1073741824", link, (const char *)NULL) != NULL;
    }
    ok &= add(b, "overlap_slowdown", "ratio", f->overlap_slowdown, -1, "side=compute",
              (const char *)NULL) != NULL;
    ok &= add(b, "overlap_slowdown", "ratio", f->overlap_slowdown, -1, "side=comm",
              (const char *)NULL) != NULL;
    return ok ? 0 : -1;
}

static void make_report_id(const tsl_agent_config_t *cfg, tsl_agent_profile_t *p)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    p->measured_unix = (int64_t)ts.tv_sec;
    snprintf(p->report_id, sizeof p->report_id, "%.20s-%lld-%06ld-%d", cfg->node_name,
             (long long)ts.tv_sec, ts.tv_nsec / 1000, (int)getpid() % 100000);
    for (char *c = p->report_id; *c; c++)
        if (*c == '/' || *c == ' ')
            *c = '_';
}

int tsl_agent_measure(const tsl_agent_config_t *cfg, const tsl_agent_node_t *node,
                      tsl_agent_profile_t *p, tsl_err_t *err)
{
    sim_file_t f;
    builder_t b = {.p = p};
    int rc = 0;
    memset(p, 0, sizeof *p);
    make_report_id(cfg, p);
    if (strcmp(cfg->backend, "sim") != 0)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED, "backend cuda: not built in this tessel-worker");
    if (load_file(cfg->device_file, &f, err) != 0)
        return -1;
    json_t *gpus = json_object_get(f.root, "gpus");
    for (uint32_t i = 0; rc == 0 && i < node->n_devices; i++) {
        const tsl_agent_device_t *d = &node->devices[i];
        tsl_agent_device_t again;
        sim_gpu_t s;
        rc = read_gpu(cfg->device_file, d->index, json_array_get(gpus, d->index), &again, &s, err);
        if (rc == 0 && measure_gpu(&b, d, &s) != 0)
            rc = tsl_err_setc(err, TSL_E_NOMEM, "profile: out of memory");
    }
    if (rc == 0 && measure_node(&b, &f, node->n_devices) != 0)
        rc = tsl_err_setc(err, TSL_E_NOMEM, "profile: out of memory");
    json_decref(f.root);
    if (rc != 0)
        tsl_agent_profile_free(p);
    return rc;
}

void tsl_agent_profile_free(tsl_agent_profile_t *p)
{
    free(p->m);
    p->m = NULL;
    p->n = 0;
}

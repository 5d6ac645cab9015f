/*
 * agent_measure.c — what the node has and what it measures (agent.h), through
 * the profiler's backends (worker/profile/prof.h: cuda, sim): one profile
 * run fills a tsl_prof_t, which becomes the node's devices (registration) and
 * a flat list of figures with units and labels (the report).
 *
 * Figures (docs/api.md, "Measurements"): per device (the profiled one, index 0
 * of the visible GPUs): gemm_fwd (s; m, n, k, batch), attention_fwd/_bwd and
 * ffn_fwd/_bwd (s; h, s, a, f, mb, tp), attention_mem/ffn_mem (bytes), attention_flops/
 * ffn_flops (flop: the forward GEMM FLOPs on one device), pcie_h2d,
 * pcie_d2h, hbm_bw (bytes/s), memory_total, memory_free (bytes); per node:
 * allreduce_busbw, allgather_busbw, reducescatter_busbw, sendrecv_busbw (bytes/s;
 * group, bytes, link) and overlap_slowdown (ratio; side, comm, stand_in).
 *
 * GPU selection (node.gpus): CUDA_VISIBLE_DEVICES for cuda, set before the
 * backend first touches CUDA; the first N of the file's GPUs for sim.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "prof.h"

/* ---- running the backend --------------------------------------------------------------- */

static int count_selected(const char *list, uint32_t n)
{
    uint32_t k = 0;
    for (const char *p = list; *p;) {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p)
            return -1;
        k += v < n;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return (int)k;
}

/* One run of the configured backend into a heap tsl_prof_t (free it). soak: the
 * profiler's soak before its GEMM table (prof.h); discovery, which keeps only the
 * node's facts, skips it. */
static tsl_prof_t *run_backend(const tsl_agent_config_t *cfg, bool quick, bool soak, tsl_err_t *err)
{
    const tsl_prof_backend_t *be = tsl_prof_backend_find(cfg->backend);
    tsl_prof_opts_t o;
    if (!be || !be->run) {
        tsl_err_setc(err, TSL_E_UNSUPPORTED, "node.backend %s: %s", cfg->backend,
                     be ? be->why_absent : "not a backend (cuda, sim)");
        return NULL;
    }
    if (strcmp(cfg->backend, "cuda") == 0 && cfg->gpus[0])
        setenv("CUDA_VISIBLE_DEVICES", cfg->gpus, 0);
    if (tsl_agent_prof_opts(cfg, quick, &o, err) != 0)
        return NULL;
    if (!soak)
        o.soak_max_s = 0;
    tsl_prof_t *p = calloc(1, sizeof *p);
    if (!p) {
        tsl_err_setc(err, TSL_E_NOMEM, "profile: out of memory");
        return NULL;
    }
    if (be->run(&o, p, err) != 0) {
        tsl_err_prefix(err, "profile (%s)", cfg->backend);
        free(p);
        return NULL;
    }
    return p;
}

static int fill_node(const tsl_agent_config_t *cfg, const tsl_prof_t *p, tsl_agent_node_t *node,
                     tsl_err_t *err)
{
    int n = (int)p->gpus;
    memset(node, 0, sizeof *node);
    snprintf(node->hostname, sizeof node->hostname, "%s", cfg->node_name);
    snprintf(node->driver_version, sizeof node->driver_version, "%s", p->driver_version);
    snprintf(node->cuda_version, sizeof node->cuda_version, "%s", p->runtime_version);
    snprintf(node->nccl_version, sizeof node->nccl_version, "%s", p->nccl_version);
    node->simulated = p->simulated;
    if (p->simulated && cfg->gpus[0] && (n = count_selected(cfg->gpus, p->gpus)) <= 0)
        return tsl_err_set(err, "node.gpus: '%s' selects none of the %u simulated GPUs", cfg->gpus,
                           p->gpus);
    if (n < 1 || n > (int)TSL_AGENT_MAX_DEVICES)
        return tsl_err_set(err, "node: %d GPUs visible; a worker registers 1 to %u", n,
                           TSL_AGENT_MAX_DEVICES);
    for (int i = 0; i < n; i++) {
        tsl_agent_device_t *d = &node->devices[node->n_devices++];
        d->index = (uint32_t)i;
        snprintf(d->model, sizeof d->model, "%s", p->model);
        d->memory_bytes = p->mem_total_bytes;
        d->sm_count = p->sm_count;
        /* cuda: every GPU's own UUID; sim (and a backend without them): by index. */
        if (!p->simulated && i < (int)TSL_PROF_MAX_GPUS && p->gpu_uuids[i][0])
            snprintf(d->uuid, sizeof d->uuid, "%s", p->gpu_uuids[i]);
        else if (i == 0 && !p->simulated)
            snprintf(d->uuid, sizeof d->uuid, "%s", p->uuid);
        else
            snprintf(d->uuid, sizeof d->uuid, "%.80s+%d", p->simulated ? "SIM" : p->uuid, i);
    }
    return 0;
}

int tsl_agent_discover(const tsl_agent_config_t *cfg, tsl_agent_node_t *node, tsl_err_t *err)
{
    tsl_prof_t *p = run_backend(cfg, true, false, err);
    if (!p)
        return -1;
    int rc = fill_node(cfg, p, node, err);
    free(p);
    return rc;
}

/* ---- the figures ------------------------------------------------------------------------ */

typedef struct builder {
    tsl_agent_profile_t *p;
    size_t cap;
    bool failed;
} builder_t;

/* Appends one figure; labels are "key=value" strings, NULL-terminated. device < 0: the node. */
static void add(builder_t *b, const char *name, const char *unit, double value, int device, ...)
{
    if (b->failed)
        return;
    if (b->p->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        tsl_agent_measurement_t *m = realloc(b->p->m, cap * sizeof *m);
        if (!m) {
            b->failed = true;
            return;
        }
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
        snprintf(m->keys[m->n_labels], sizeof m->keys[0], "%.*s", (int)(eq - kv), kv);
        snprintf(m->values[m->n_labels], sizeof m->values[0], "%s", eq + 1);
        m->n_labels++;
    }
    va_end(ap);
}

#define L(buf, fmt, ...) (snprintf(buf, sizeof buf, fmt, __VA_ARGS__), buf)

static void add_gemms(builder_t *b, const tsl_prof_t *p)
{
    char m[24], n[24], k[24], batch[24];
    for (uint32_t i = 0; i < p->n_gemms; i++) {
        const tsl_prof_gemm_t *g = &p->gemms[i];
        add(b, "gemm_fwd", "s", g->time_s, 0, L(m, "m=%u", g->m), L(n, "n=%u", g->n),
            L(k, "k=%u", g->k), L(batch, "batch=%u", g->batch), (const char *)NULL);
    }
}

static void add_blocks(builder_t *b, const tsl_prof_t *p)
{
    char h[24], s[24], a[24], f[24], mb[24], tp[24], name[32];
    for (uint32_t i = 0; i < p->n_blocks; i++) {
        const tsl_prof_block_t *x = &p->blocks[i];
        tsl_prof_shape_t r = tsl_prof_shape_resolved(&x->shape);
        const char *kind = tsl_prof_block_name(x->kind);
        L(h, "h=%u", r.hidden), L(s, "s=%u", r.seq_len), L(a, "a=%u", r.heads);
        L(f, "f=%u%s", r.ffn_hidden, r.gated ? "g" : ""), L(mb, "mb=%u", x->mb),
            L(tp, "tp=%u", x->tp);
        add(b, L(name, "%s_fwd", kind), "s", x->fwd_s, 0, h, s, a, f, mb, tp, (const char *)NULL);
        add(b, L(name, "%s_bwd", kind), "s", x->bwd_s, 0, h, s, a, f, mb, tp, (const char *)NULL);
        add(b, L(name, "%s_mem", kind), "bytes", (double)x->mem_bytes, 0, h, s, a, f, mb, tp,
            (const char *)NULL);
        add(b, L(name, "%s_flops", kind), "flop", x->fwd_flops, 0, h, s, a, f, mb, tp,
            (const char *)NULL);
    }
}

static void add_device(builder_t *b, const tsl_prof_t *p)
{
    char bytes[40], dbytes[40];
    L(bytes, "bytes=%llu", (unsigned long long)p->h2d_bytes);
    L(dbytes, "bytes=%llu", (unsigned long long)p->dmem_bytes);
    add(b, "memory_total", "bytes", (double)p->mem_total_bytes, 0, (const char *)NULL);
    add(b, "memory_free", "bytes", (double)p->mem_free_bytes, 0, (const char *)NULL);
    if (p->h2d_gbps > 0)
        add(b, "pcie_h2d", "bytes/s", p->h2d_gbps * 1e9, 0, bytes, "pinned=1", (const char *)NULL);
    if (p->d2h_gbps > 0)
        add(b, "pcie_d2h", "bytes/s", p->d2h_gbps * 1e9, 0, bytes, "pinned=1", (const char *)NULL);
    if (p->dmem_gbps > 0)
        add(b, "hbm_bw", "bytes/s", p->dmem_gbps * 1e9, 0, dbytes, (const char *)NULL);
}

static void add_node(builder_t *b, const tsl_prof_t *p)
{
    char name[40], group[24], bytes[40], link[48], comm[80];
    L(link, "link=%s", p->hw_link);
    for (uint32_t i = 0; i < p->n_colls; i++) {
        const tsl_prof_coll_t *c = &p->colls[i];
        const char *op = tsl_prof_coll_name(c->op);
        size_t at = 0;
        for (const char *q = op; *q && at + 8 < sizeof name; q++) /* "all_reduce" → "allreduce" */
            if (*q != '_')
                name[at++] = *q;
        snprintf(name + at, sizeof name - at, "_busbw");
        add(b, name, "bytes/s", c->busbw_gbps * 1e9, -1, L(group, "group=%u", c->group),
            L(bytes, "bytes=%llu", (unsigned long long)c->bytes), link, (const char *)NULL);
    }
    for (uint32_t i = 0; i < p->n_overlap; i++) {
        const tsl_prof_overlap_t *o = &p->overlap[i];
        L(comm, "comm=%s", o->comm);
        const char *stand_in = o->stand_in ? "stand_in=1" : "stand_in=0";
        add(b, "overlap_slowdown", "ratio", o->gemm_slowdown, -1, "side=compute", comm, stand_in,
            (const char *)NULL);
        add(b, "overlap_slowdown", "ratio", o->comm_slowdown, -1, "side=comm", comm, stand_in,
            (const char *)NULL);
    }
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
    builder_t b = {.p = p};
    (void)node;
    memset(p, 0, sizeof *p);
    make_report_id(cfg, p);
    tsl_prof_t *prof = run_backend(cfg, cfg->profile_quick, true, err);
    if (!prof)
        return -1;
    add_gemms(&b, prof);
    add_blocks(&b, prof);
    add_device(&b, prof);
    add_node(&b, prof);
    free(prof);
    if (!b.failed)
        return 0;
    tsl_agent_profile_free(p);
    return tsl_err_setc(err, TSL_E_NOMEM, "profile: out of memory");
}

void tsl_agent_profile_free(tsl_agent_profile_t *p)
{
    free(p->m);
    p->m = NULL;
    p->n = 0;
}

/*
 * memopt.c — H3T's segment model (three streams, exact memory), the evaluator,
 * the workspace, and the simple solvers (all-on, uniform, random, greedy).
 * The DP is in memopt_dp.c, the cluster helper in memopt_ctx.c.
 */
#include "memopt.h"

#include "cost.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GIB        (1024.0 * 1024.0 * 1024.0)
#define N_R        8u /* combinations of the three communication switches */
#define TAB_STRIDE (N_R * TSL_MEMOPT_N_SWITCH_SETS * N_R)

/* ---- names --------------------------------------------------------------- */

const char *tsl_memopt_mode_name(tsl_memopt_mode_t mode)
{
    switch (mode) {
    case TSL_MEMOPT_MODE_OFFLOAD: return "zero3-offload";
    case TSL_MEMOPT_MODE_ZERO3: return "zero3";
    default: return "?";
    }
}

const char *tsl_memopt_solver_name(tsl_memopt_solver_t s)
{
    static const char *const names[TSL_MEMOPT_SOLVER_COUNT] = {"all-on", "uniform", "random",
                                                               "greedy", "dp"};
    return (unsigned)s < TSL_MEMOPT_SOLVER_COUNT ? names[s] : "?";
}

void tsl_memopt_switch_str(uint32_t sw, char *buf, uint32_t cap)
{
    static const char *const names[6] = {"remat", "offload", "partition",
                                         "lazy",  "econ-f",  "econ-b"};
    if (cap == 0)
        return;
    buf[0] = '\0';
    size_t len = 0;
    for (unsigned b = 0; b < 6; b++) {
        if (!(sw & (1u << b)))
            continue;
        int w = snprintf(buf + len, cap - len, "%s%s", len ? "+" : "", names[b]);
        if (w < 0 || (size_t)w >= cap - len)
            return;
        len += (size_t)w;
    }
    if (len == 0)
        snprintf(buf, cap, "none");
}

/* ---- context ------------------------------------------------------------- */

void tsl_memopt_ctx_init(tsl_memopt_ctx_t *ctx)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->zero_degree = 1;
    ctx->micro_batch = 1;
    ctx->devices_per_node = 1;
    ctx->overlap_slowdown = 1.0;
    ctx->allowed_switches = TSL_MEMOPT_ALL;
    ctx->allowed_modes = (1u << TSL_MEMOPT_MODE_COUNT) - 1u;
}

static bool pos_finite(double x)
{
    return isfinite(x) && x > 0.0;
}

int tsl_memopt_ctx_validate(const tsl_memopt_ctx_t *c, tsl_err_t *err)
{
    if (c == NULL)
        return tsl_err_set(err, "memopt: no context given");
    if (c->zero_degree == 0)
        return tsl_err_set(err,
                           "zero_degree: 0 devices; give the number sharing the states (>= 1)");
    if (c->micro_batch == 0)
        return tsl_err_set(err, "micro_batch: 0 samples per device; give >= 1");
    if (c->gpu_mem_limit_bytes == 0)
        return tsl_err_set(err, "gpu_mem_limit_bytes: 0 is not a memory limit; give e.g. 8000 MB");
    if (c->reserved_bytes >= c->gpu_mem_limit_bytes)
        return tsl_err_set(err, "reserved_bytes: %llu leaves nothing of the %llu-byte limit",
                           (unsigned long long)c->reserved_bytes,
                           (unsigned long long)c->gpu_mem_limit_bytes);
    if (!pos_finite(c->flops_per_s))
        return tsl_err_set(err, "flops_per_s: %g is not a positive finite FLOP/s", c->flops_per_s);
    if (c->zero_degree > 1 && !pos_finite(c->coll_bytes_per_s))
        return tsl_err_set(err,
                           "coll_bytes_per_s: %g is not a positive finite bandwidth (needed for "
                           "all-gather over %u devices)",
                           c->coll_bytes_per_s, c->zero_degree);
    if (!pos_finite(c->pcie_bytes_per_s))
        return tsl_err_set(err, "pcie_bytes_per_s: %g is not a positive finite bandwidth",
                           c->pcie_bytes_per_s);
    if (c->devices_per_node == 0)
        return tsl_err_set(err, "devices_per_node: 0; give the devices sharing a node's memory");
    if (c->param_bytes != 0 && c->param_bytes != 2 && c->param_bytes != 4)
        return tsl_err_set(err, "param_bytes: %u is not 2 (16-bit) or 4 (fp32)", c->param_bytes);
    if (!(isfinite(c->cpu_adam_params_per_s) && c->cpu_adam_params_per_s >= 0.0))
        return tsl_err_set(err, "cpu_adam_params_per_s: %g must be >= 0 (0 = not modelled)",
                           c->cpu_adam_params_per_s);
    if (!(isfinite(c->gpu_adam_params_per_s) && c->gpu_adam_params_per_s >= 0.0))
        return tsl_err_set(err, "gpu_adam_params_per_s: %g must be >= 0 (0 = not modelled)",
                           c->gpu_adam_params_per_s);
    if (!(isfinite(c->overlap_slowdown) && c->overlap_slowdown >= 1.0))
        return tsl_err_set(err, "overlap_slowdown: %g must be >= 1", c->overlap_slowdown);
    if (c->allowed_switches & ~TSL_MEMOPT_ALL)
        return tsl_err_set(err, "allowed_switches: 0x%x has bits outside 0x%x", c->allowed_switches,
                           TSL_MEMOPT_ALL);
    if (c->allowed_modes == 0 || (c->allowed_modes >> TSL_MEMOPT_MODE_COUNT) != 0)
        return tsl_err_set(err,
                           "allowed_modes: 0x%x; set bit (1 << mode) for at least one of %u modes",
                           c->allowed_modes, TSL_MEMOPT_MODE_COUNT);
    return 0;
}

static int check_layers(const tsl_layer_t *layers, uint32_t n, tsl_err_t *err)
{
    if (layers == NULL || n == 0)
        return tsl_err_set(err, "layers: none given");
    if (n > TSL_MODEL_MAX_LAYERS)
        return tsl_err_set(err, "layers: %u is more than the %u a plan holds", n,
                           TSL_MODEL_MAX_LAYERS);
    for (uint32_t i = 0; i < n; i++)
        if (!(isfinite(layers[i].fwd_flops) && layers[i].fwd_flops >= 0.0))
            return tsl_err_set(err, "layers[%u].fwd_flops: %g is not a finite FLOP count", i,
                               layers[i].fwd_flops);
    return 0;
}

/* ---- per-layer quantities ------------------------------------------------ */

typedef struct lq {
    double fwd_s;      /* forward compute of the micro-batch */
    double ag_s, rs_s; /* all-gather of the parameters, reduce-scatter of the gradients */
    double up_s;       /* one fp16 partition over PCIe (prefetch, upload, gradient offload) */
    double h_s;        /* the hidden state over PCIe */
    double adam_cpu_s, adam_gpu_s;
    uint64_t full_b;   /* gathered parameters (= gradients before reduce-scatter), param_bytes */
    uint64_t part_b;   /* this device's partition of them */
    uint64_t states_b; /* 16 B/param / n: all mixed-precision Adam states of the partition */
    uint64_t h_b;      /* input hidden state of the micro-batch */
    uint64_t a_b;      /* intermediate activations (stashed minus the hidden state) */
} lq_t;

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

/* Ring all-gather / reduce-scatter of M bytes over n devices: (n−1)/n · M / bw. */
static double ring_half_s(double bytes, uint32_t n, double bw)
{
    if (n <= 1 || bytes <= 0.0)
        return 0.0;
    return (double)(n - 1) / (double)n * bytes / bw;
}

static void lq_fill(const tsl_layer_t *l, const tsl_memopt_ctx_t *c, lq_t *q)
{
    uint64_t b = c->micro_batch, n = c->zero_degree;
    q->fwd_s = (double)b * l->fwd_flops / c->flops_per_s;
    q->full_b = (uint64_t)(c->param_bytes ? c->param_bytes : TSL_BYTES_PER_PARAM_FP16) * l->params;
    q->part_b = ceil_div(q->full_b, n);
    q->states_b = ceil_div((uint64_t)TSL_BYTES_PER_PARAM_STATES * l->params, n);
    q->h_b = b * l->bnd_act_bytes;
    uint64_t act = b * (l->act_repl_bytes + l->act_shard_bytes);
    q->a_b = act > q->h_b ? act - q->h_b : 0;
    q->ag_s = ring_half_s((double)q->full_b, c->zero_degree, c->coll_bytes_per_s);
    q->rs_s = q->ag_s;
    q->up_s = (double)q->part_b / c->pcie_bytes_per_s;
    q->h_s = (double)q->h_b / c->pcie_bytes_per_s;
    double shard_params = (double)l->params / (double)n;
    q->adam_cpu_s = c->cpu_adam_params_per_s > 0.0 ? shard_params / c->cpu_adam_params_per_s : 0.0;
    q->adam_gpu_s = c->gpu_adam_params_per_s > 0.0 ? shard_params / c->gpu_adam_params_per_s : 0.0;
}

/* ---- three-stream segment schedule -------------------------------------- */

enum { ST_PCIE = 0, ST_COLL = 1 };

typedef struct op {
    double dur;
    int8_t stream;
    int8_t dep; /* index of an op that must finish first, or -1 */
    bool post;  /* post-process of the previous layer (else preparation of the next) */
} op_t;

/*
 * End of the communication of one segment. Ops are issued per stream in list
 * order: economical mode issues every post-process op first and starts no
 * preparation before all post-processing has finished; the other mode issues
 * the preparation first. Shared bus: one stream for all.
 */
static double seg_comm(const op_t *ops, int n_ops, bool econ, bool shared)
{
    double free_at[2] = {0.0, 0.0}, end[8] = {0.0}, post_done = 0.0, last = 0.0;
    for (int pass = 0; pass < 2; pass++) {
        bool want_post = econ ? pass == 0 : pass == 1;
        for (int k = 0; k < n_ops; k++) {
            if (ops[k].post != want_post)
                continue;
            int st = shared ? ST_PCIE : ops[k].stream;
            double start = free_at[st];
            if (ops[k].dep >= 0 && end[ops[k].dep] > start)
                start = end[ops[k].dep];
            if (econ && !ops[k].post && post_done > start)
                start = post_done;
            end[k] = start + ops[k].dur;
            free_at[st] = end[k];
            if (ops[k].post && end[k] > post_done)
                post_done = end[k];
            if (end[k] > last)
                last = end[k];
        }
    }
    return last;
}

/* overlap(C, X) = max + (k − 1)·min (cost.h). */
static double overlap_s(double compute, double comm, double k)
{
    if (compute <= 0.0 || comm <= 0.0)
        return compute + comm;
    double hi = compute > comm ? compute : comm, lo = compute > comm ? comm : compute;
    return hi + (k - 1.0) * lo;
}

static uint64_t sat_sub(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static uint32_t mode_mask(tsl_memopt_mode_t mode)
{
    return mode == TSL_MEMOPT_MODE_OFFLOAD ? TSL_MEMOPT_ALL
                                           : (TSL_MEMOPT_ALL & ~(uint32_t)TSL_MEMOPT_LAZY_PREFETCH);
}

#define ON(x, bit) (((x) & (bit)) != 0)

static void segment_q(const lq_t *P, const lq_t *L, const lq_t *N, const tsl_memopt_ctx_t *c,
                      tsl_memopt_mode_t mode, uint32_t swp, uint32_t sw, uint32_t swn,
                      tsl_memopt_seg_t *o)
{
    const uint32_t mask = mode_mask(mode);
    const bool offl = mode == TSL_MEMOPT_MODE_OFFLOAD;
    const bool shared = c->coll_shares_pcie;
    const double k = c->overlap_slowdown;
    swp &= mask;
    sw &= mask;
    swn &= mask;
    const bool remat = ON(sw, TSL_MEMOPT_REMAT), off = ON(sw, TSL_MEMOPT_OFFLOAD_HIDDEN);
    const bool part = ON(sw, TSL_MEMOPT_PARTITION), lazy = ON(sw, TSL_MEMOPT_LAZY_PREFETCH);
    const bool p_off = P && ON(swp, TSL_MEMOPT_OFFLOAD_HIDDEN);
    const bool p_part = P && ON(swp, TSL_MEMOPT_PARTITION);
    const bool p_lazy = P && ON(swp, TSL_MEMOPT_LAZY_PREFETCH);
    const bool n_lazy = N && ON(swn, TSL_MEMOPT_LAZY_PREFETCH);
    const uint64_t out_b = N ? N->h_b : L->h_b; /* the layer's output (and its gradient) */
    op_t ops[6];
    int no;

    /* Forward segment i: compute F_i; prepare i+1 (lazy prefetch, all-gather);
     * post-process i−1 (offload its hidden state). */
    no = 0;
    int ip = -1;
    if (N) {
        if (n_lazy) {
            ip = no;
            ops[no++] = (op_t){N->up_s, ST_PCIE, -1, false};
        }
        ops[no++] = (op_t){N->ag_s, ST_COLL, (int8_t)ip, false};
    }
    if (p_off)
        ops[no++] = (op_t){P->h_s, ST_PCIE, -1, true};
    const bool ef = ON(sw, TSL_MEMOPT_ECON_FWD), eb = ON(sw, TSL_MEMOPT_ECON_BWD);
    o->fwd_s = overlap_s(L->fwd_s, seg_comm(ops, no, ef, shared), k);
    uint64_t pre = N ? N->full_b + (n_lazy ? N->part_b : 0) : 0;
    uint64_t post = p_off ? P->h_b : 0;
    uint64_t peak_f = L->h_b + L->full_b + post /* live at the start */
                      + L->a_b + out_b          /* what the compute creates */
                      + (ef ? sat_sub(pre, post) : pre);

    /* Backward segment i: compute (recompute) + 2 F_i; post-process i+1
     * (reduce-scatter, gradient offload); prepare i−1 (partition prefetch,
     * hidden-state prefetch, all-gather). */
    no = 0;
    if (N) {
        int irs = no;
        ops[no++] = (op_t){N->rs_s, ST_COLL, -1, true};
        if (offl)
            ops[no++] = (op_t){N->up_s, ST_PCIE, (int8_t)irs, true};
    }
    ip = -1;
    if (p_part && p_lazy) {
        ip = no;
        ops[no++] = (op_t){P->up_s, ST_PCIE, -1, false};
    }
    if (p_off)
        ops[no++] = (op_t){P->h_s, ST_PCIE, -1, false};
    if (p_part)
        ops[no++] = (op_t){P->ag_s, ST_COLL, (int8_t)ip, false};
    double cb = 2.0 * L->fwd_s + (remat ? L->fwd_s : 0.0);
    o->bwd_s = overlap_s(cb, seg_comm(ops, no, eb, shared), k);
    pre = P ? (p_off ? P->h_b : 0) + (p_part ? P->full_b + (p_lazy ? P->part_b : 0) : 0) : 0;
    post = N ? N->full_b : 0;
    uint64_t peak_b = L->a_b + L->h_b + L->full_b + out_b + post /* live: own + ∇out + grad i+1 */
                      + L->full_b + L->h_b                       /* grad_i, ∇h_i */
                      + (eb ? sat_sub(pre, post) : pre);
    uint64_t lp = max_u64(peak_f, peak_b);

    /* Edges: prologue and epilogue (first layer), turnaround (last layer). */
    o->edge_s = 0.0;
    if (!P) {
        no = 0;
        ip = -1;
        if (lazy) {
            ip = no;
            ops[no++] = (op_t){L->up_s, ST_PCIE, -1, false};
        }
        ops[no++] = (op_t){L->ag_s, ST_COLL, (int8_t)ip, false};
        o->edge_s += seg_comm(ops, no, false, shared);
        lp = max_u64(lp, L->h_b + L->full_b + (lazy ? L->part_b : 0));
        no = 0;
        ops[no++] = (op_t){L->rs_s, ST_COLL, -1, true};
        if (offl)
            ops[no++] = (op_t){L->up_s, ST_PCIE, 0, true};
        o->edge_s += seg_comm(ops, no, false, shared);
        lp = max_u64(lp, L->full_b + L->h_b);
    }
    if (!N) {
        no = 0;
        int ih = -1;
        if (off) {
            ih = no;
            ops[no++] = (op_t){L->h_s, ST_PCIE, -1, true};
            ops[no++] = (op_t){L->h_s, ST_PCIE, (int8_t)ih, false};
        }
        ip = -1;
        if (part && lazy) {
            ip = no;
            ops[no++] = (op_t){L->up_s, ST_PCIE, -1, false};
        }
        if (part)
            ops[no++] = (op_t){L->ag_s, ST_COLL, (int8_t)ip, false};
        o->edge_s += seg_comm(ops, no, true, shared);
        pre = (off ? L->h_b : 0) + (part ? L->full_b + (lazy ? L->part_b : 0) : 0);
        post = off ? L->h_b : 0;
        uint64_t live = (remat ? 0 : L->a_b) + L->h_b + (part ? 0 : L->full_b) + out_b;
        lp = max_u64(lp, live + sat_sub(pre, post));
    }

    /* Optimizer share: CPU Adam on the partition, pipelined with the upload of the
     * updated partition (which lazy prefetch defers to the next forward). */
    if (offl) {
        double up = lazy ? 0.0 : L->up_s;
        o->opt_s = L->adam_cpu_s > up ? L->adam_cpu_s : up;
    } else {
        o->opt_s = L->adam_gpu_s;
    }
    o->time_s = o->fwd_s + o->bwd_s + o->edge_s + o->opt_s;

    o->resident_bytes = offl ? (lazy ? 0 : L->part_b) : L->states_b;
    o->carried_bytes = (remat ? 0 : L->a_b) + (off ? 0 : L->h_b) + (part ? 0 : L->full_b);
    o->local_peak_bytes = lp;
}

void tsl_memopt_segment(const tsl_layer_t *layers, uint32_t n, uint32_t i,
                        const tsl_memopt_ctx_t *ctx, tsl_memopt_mode_t mode, uint32_t sw_prev,
                        uint32_t sw, uint32_t sw_next, tsl_memopt_seg_t *out)
{
    lq_t P, L, N;
    lq_fill(&layers[i], ctx, &L);
    if (i > 0)
        lq_fill(&layers[i - 1], ctx, &P);
    if (i + 1 < n)
        lq_fill(&layers[i + 1], ctx, &N);
    segment_q(i > 0 ? &P : NULL, &L, i + 1 < n ? &N : NULL, ctx, mode, sw_prev, sw, sw_next, out);
}

/* ---- evaluation ---------------------------------------------------------- */

static uint64_t cpu_fixed_bytes(const tsl_layer_t *layers, uint32_t n, const tsl_memopt_ctx_t *c,
                                tsl_memopt_mode_t mode)
{
    if (mode != TSL_MEMOPT_MODE_OFFLOAD)
        return 0;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n; i++)
        sum += ceil_div((uint64_t)TSL_BYTES_PER_PARAM_STATES * layers[i].params, c->zero_degree);
    return sum;
}

static bool cpu_fits(const tsl_memopt_ctx_t *c, uint64_t per_device)
{
    return c->cpu_mem_bytes == 0 || per_device * c->devices_per_node <= c->cpu_mem_bytes;
}

int tsl_memopt_evaluate(const tsl_layer_t *layers, uint32_t n, const tsl_memopt_ctx_t *ctx,
                        tsl_memopt_mode_t mode, const uint8_t *sw, tsl_memopt_plan_t *out,
                        tsl_err_t *err)
{
    if (tsl_memopt_ctx_validate(ctx, err) != 0 || check_layers(layers, n, err) != 0)
        return -1;
    if ((unsigned)mode >= TSL_MEMOPT_MODE_COUNT)
        return tsl_err_set(err, "mode: %d is not a global mode", (int)mode);
    if (sw == NULL)
        return tsl_err_set(err, "sw: no switch sequence given");
    memset(out, 0, sizeof(*out));
    out->mode = mode;
    out->n_layers = n;
    const uint32_t mask = mode_mask(mode);
    uint64_t curr = 0, peak = 0, hidden = 0;
    lq_t q[3];
    lq_fill(&layers[0], ctx, &q[1]);
    for (uint32_t i = 0; i < n; i++) {
        if (sw[i] & ~TSL_MEMOPT_ALL)
            return tsl_err_set(err, "sw[%u]: 0x%x has bits outside 0x%x", i, sw[i], TSL_MEMOPT_ALL);
        if (i + 1 < n)
            lq_fill(&layers[i + 1], ctx, &q[2]);
        tsl_memopt_seg_t s;
        segment_q(i > 0 ? &q[0] : NULL, &q[1], i + 1 < n ? &q[2] : NULL, ctx, mode,
                  i > 0 ? sw[i - 1] : 0, sw[i], i + 1 < n ? sw[i + 1] : 0, &s);
        uint64_t cand = curr + s.local_peak_bytes;
        if (cand > peak || i == 0) {
            out->peak_layer = i;
            peak = cand > peak ? cand : peak;
        }
        peak += s.resident_bytes;
        curr += s.resident_bytes + s.carried_bytes;
        out->step_s += s.time_s;
        out->fwd_s += s.fwd_s;
        out->bwd_s += s.bwd_s;
        out->edge_s += s.edge_s;
        out->opt_s += s.opt_s;
        uint32_t x = sw[i] & mask;
        out->sw[i] = (uint8_t)x;
        out->compute_s += q[1].fwd_s * (ON(x, TSL_MEMOPT_REMAT) ? 4.0 : 3.0);
        for (unsigned b = 0; b < 6; b++)
            out->n_on[b] += (x >> b) & 1u;
        if (ON(x, TSL_MEMOPT_OFFLOAD_HIDDEN))
            hidden += q[1].h_b;
        q[0] = q[1];
        q[1] = q[2];
    }
    out->gpu_peak_bytes = peak + ctx->reserved_bytes;
    out->cpu_bytes_per_device = cpu_fixed_bytes(layers, n, ctx, mode) + hidden;
    out->cpu_bytes_per_node = out->cpu_bytes_per_device * ctx->devices_per_node;
    out->valid =
        out->gpu_peak_bytes <= ctx->gpu_mem_limit_bytes && cpu_fits(ctx, out->cpu_bytes_per_device);
    return 0;
}

/* ---- workspace ------------------------------------------------------------ */

void tsl_memopt_ws_free(tsl_memopt_ws_t *ws)
{
    if (ws == NULL)
        return;
    free(ws->tab_time);
    free(ws->tab_mem);
    free(ws->hidden_bytes);
    free(ws->seq);
    free(ws->best);
    for (int k = 0; k < 2; k++) {
        free(ws->rt[k]);
        free(ws->curr[k]);
        free(ws->peak[k]);
        free(ws->parent[k]);
        free(ws->chosen[k]);
    }
    free(ws->kept);
    free(ws->pmin);
    free(ws->node_parent);
    free(ws->node_sw);
    memset(ws, 0, sizeof(*ws));
}

int tsl_memopt_ws_init(tsl_memopt_ws_t *ws, uint32_t max_layers, uint32_t mem_levels,
                       uint64_t dp_max_nodes, tsl_err_t *err)
{
    memset(ws, 0, sizeof(*ws));
    if (max_layers == 0 || max_layers > TSL_MODEL_MAX_LAYERS)
        return tsl_err_set(err, "max_layers: %u is outside 1..%u", max_layers,
                           TSL_MODEL_MAX_LAYERS);
    if (mem_levels > 4096)
        return tsl_err_set(err, "mem_levels: %u is more than 4096 (the DP table would not fit)",
                           mem_levels);
    ws->max_layers = max_layers;
    ws->mem_levels = mem_levels;
    size_t tab = (size_t)max_layers * TAB_STRIDE;
    ws->tab_time = malloc(tab * sizeof(double));
    ws->tab_mem = malloc(tab * 3 * sizeof(uint64_t));
    ws->hidden_bytes = malloc(max_layers * sizeof(uint64_t));
    ws->seq = malloc(max_layers);
    ws->best = malloc(max_layers);
    bool ok = ws->tab_time && ws->tab_mem && ws->hidden_bytes && ws->seq && ws->best;
    if (ok && mem_levels > 0) {
        uint64_t m1 = (uint64_t)mem_levels + 1;
        ws->tri = m1 * (m1 + 1) / 2;
        size_t cells = (size_t)(N_R * N_R) * ws->tri;
        for (int k = 0; k < 2 && ok; k++) {
            ws->rt[k] = malloc(cells * sizeof(double));
            ws->curr[k] = malloc(cells * sizeof(uint64_t));
            ws->peak[k] = malloc(cells * sizeof(uint64_t));
            ws->parent[k] = malloc(cells * sizeof(uint32_t));
            ws->chosen[k] = malloc(cells);
            ok = ws->rt[k] && ws->curr[k] && ws->peak[k] && ws->parent[k] && ws->chosen[k];
        }
        ws->max_nodes =
            dp_max_nodes ? dp_max_nodes : (uint64_t)max_layers * TSL_MEMOPT_N_SWITCH_SETS * 8u * m1;
        if (ws->max_nodes > UINT32_MAX - 1u)
            ws->max_nodes = UINT32_MAX - 1u;
        if (ok) {
            ws->kept = malloc(cells * sizeof(uint32_t));
            ws->pmin = malloc(ws->tri * sizeof(double));
            ws->node_parent = malloc(ws->max_nodes * sizeof(uint32_t));
            ws->node_sw = malloc(ws->max_nodes);
            ok = ws->kept && ws->pmin && ws->node_parent && ws->node_sw;
        }
    }
    if (!ok) {
        tsl_memopt_ws_free(ws);
        return tsl_err_setc(err, TSL_E_NOMEM,
                            "memopt workspace: out of memory for %u layers and %u levels",
                            max_layers, mem_levels);
    }
    return 0;
}

static size_t tab_index(uint32_t i, uint32_t rp, uint32_t s, uint32_t rn)
{
    return (((size_t)i * N_R + rp) * TSL_MEMOPT_N_SWITCH_SETS + s) * N_R + rn;
}

int tsl_memopt_ws_load(tsl_memopt_ws_t *ws, const tsl_layer_t *layers, uint32_t n,
                       const tsl_memopt_ctx_t *ctx, tsl_memopt_mode_t mode, tsl_err_t *err)
{
    if (tsl_memopt_ctx_validate(ctx, err) != 0 || check_layers(layers, n, err) != 0)
        return -1;
    if (n > ws->max_layers)
        return tsl_err_set(err, "layers: %u is more than the workspace's %u", n, ws->max_layers);
    if ((unsigned)mode >= TSL_MEMOPT_MODE_COUNT)
        return tsl_err_set(err, "mode: %d is not a global mode", (int)mode);
    lq_t q[3];
    lq_fill(&layers[0], ctx, &q[1]);
    for (uint32_t i = 0; i < n; i++) {
        if (i + 1 < n)
            lq_fill(&layers[i + 1], ctx, &q[2]);
        ws->hidden_bytes[i] = q[1].h_b;
        for (uint32_t rp = 0; rp < N_R; rp++)
            for (uint32_t s = 0; s < TSL_MEMOPT_N_SWITCH_SETS; s++)
                for (uint32_t rn = 0; rn < N_R; rn++) {
                    tsl_memopt_seg_t o;
                    segment_q(i > 0 ? &q[0] : NULL, &q[1], i + 1 < n ? &q[2] : NULL, ctx, mode,
                              rp << 1, s, rn << 1, &o);
                    size_t t = tab_index(i, rp, s, rn);
                    ws->tab_time[t] = o.time_s;
                    ws->tab_mem[3 * t + 0] = o.resident_bytes;
                    ws->tab_mem[3 * t + 1] = o.carried_bytes;
                    ws->tab_mem[3 * t + 2] = o.local_peak_bytes;
                }
        q[0] = q[1];
        q[1] = q[2];
    }
    ws->loaded_n = n;
    ws->loaded_mode = mode;
    return 0;
}

/* Time, GPU peak (without reserved) and offloaded hidden bytes of a sequence,
 * from the loaded table: the same sums, in the same order, as the evaluator. */
static double tab_eval(const tsl_memopt_ws_t *ws, uint32_t n, const uint8_t *seq,
                       uint64_t *peak_out, uint64_t *hidden_out)
{
    uint64_t curr = 0, peak = 0, hidden = 0;
    double t = 0.0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t rp = i > 0 ? (seq[i - 1] >> 1) & 7u : 0;
        uint32_t rn = i + 1 < n ? (seq[i + 1] >> 1) & 7u : 0;
        size_t k = tab_index(i, rp, seq[i], rn);
        const uint64_t *mm = &ws->tab_mem[3 * k];
        uint64_t cand = curr + mm[2];
        peak = (cand > peak ? cand : peak) + mm[0];
        curr += mm[0] + mm[1];
        t += ws->tab_time[k];
        if (seq[i] & TSL_MEMOPT_OFFLOAD_HIDDEN)
            hidden += ws->hidden_bytes[i];
    }
    *peak_out = peak;
    *hidden_out = hidden;
    return t;
}

/* ---- simple solvers ------------------------------------------------------- */

typedef struct search_ctx {
    tsl_memopt_ws_t *ws;
    uint32_t n;
    const tsl_memopt_ctx_t *ctx;
    uint64_t gpu_budget; /* M − reserved */
    uint64_t cpu_fixed;  /* per device */
    double best_t;
    bool found;
    uint64_t evals;
    const atomic_int *cancel; /* polled between batches of sequences */
} search_ctx_t;

static bool sc_cancelled(const search_ctx_t *sc)
{
    return sc->cancel && atomic_load(sc->cancel) != 0;
}

/* Evaluates ws->seq; keeps it in ws->best when valid and strictly faster. */
static void try_seq(search_ctx_t *sc)
{
    uint64_t peak, hidden;
    double t = tab_eval(sc->ws, sc->n, sc->ws->seq, &peak, &hidden);
    sc->evals++;
    if (peak > sc->gpu_budget || !cpu_fits(sc->ctx, sc->cpu_fixed + hidden))
        return;
    if (!sc->found || t < sc->best_t) {
        sc->found = true;
        sc->best_t = t;
        memcpy(sc->ws->best, sc->ws->seq, sc->n);
    }
}

/* The switch sets allowed by a mask, in increasing order. */
static uint32_t allowed_sets(uint32_t allowed, uint8_t *sets)
{
    uint32_t k = 0;
    for (uint32_t s = 0; s < TSL_MEMOPT_N_SWITCH_SETS; s++)
        if ((s & ~allowed) == 0)
            sets[k++] = (uint8_t)s;
    return k;
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void run_simple(search_ctx_t *sc, tsl_memopt_solver_t solver, uint32_t allowed,
                       const tsl_memopt_opts_t *o, tsl_memopt_mode_t mode)
{
    uint8_t sets[TSL_MEMOPT_N_SWITCH_SETS];
    uint32_t ns = allowed_sets(allowed, sets);
    uint32_t n = sc->n;
    uint8_t *seq = sc->ws->seq;
    switch (solver) {
    case TSL_MEMOPT_SOLVER_ALL_ON:
        memset(seq, (int)allowed, n);
        try_seq(sc);
        break;
    case TSL_MEMOPT_SOLVER_UNIFORM:
        for (uint32_t k = 0; k < ns; k++) {
            memset(seq, sets[k], n);
            try_seq(sc);
        }
        break;
    case TSL_MEMOPT_SOLVER_RANDOM: {
        uint64_t rng = o->seed ^ (0x5851f42d4c957f2dull * ((uint64_t)mode + 1u));
        uint32_t samples =
            o->random_samples ? o->random_samples : TSL_MEMOPT_DEFAULT_RANDOM_SAMPLES;
        for (uint32_t t = 0; t < samples; t++) {
            if (t % 64 == 0 && sc_cancelled(sc))
                return;
            for (uint32_t i = 0; i < n; i++)
                seq[i] = sets[splitmix64(&rng) % ns];
            try_seq(sc);
        }
        break;
    }
    case TSL_MEMOPT_SOLVER_GREEDY:
        /* Algorithm 2: all on, then s_flex at layers 1 + (k−1)⌊N/n_flex⌋. */
        memset(seq, (int)allowed, n);
        try_seq(sc);
        for (uint32_t nf = 1; nf <= n; nf++) {
            if (sc_cancelled(sc))
                return;
            uint32_t step = n / nf;
            for (uint32_t k = 0; k < ns; k++) {
                memset(seq, (int)allowed, n);
                for (uint32_t j = 0; j < nf; j++)
                    seq[j * step] = sets[k];
                try_seq(sc);
            }
        }
        break;
    default: break;
    }
}

void tsl_memopt_opts_init(tsl_memopt_opts_t *o, tsl_memopt_solver_t solver)
{
    memset(o, 0, sizeof(*o));
    o->solver = solver;
    o->mem_levels = TSL_MEMOPT_DEFAULT_MEM_LEVELS;
    o->random_samples = TSL_MEMOPT_DEFAULT_RANDOM_SAMPLES;
    o->seed = 1;
}

/* One tsl_memopt_solve call: its inputs, the workspace, the best plan so far. */
typedef struct solve {
    const tsl_layer_t *layers;
    uint32_t n;
    const tsl_memopt_ctx_t *ctx;
    const tsl_memopt_opts_t *opts;
    tsl_memopt_ws_t *ws;
    tsl_memopt_plan_t *plan;
    bool found;
    tsl_memopt_stats_t st;
    char why[400]; /* why each mode tried found nothing, "; "-separated */
} solve_t;

/* Adds one mode's reason to sv->why. Every mode's is kept: the error quotes the
 * first mode's all-on figures, and a reason of a later mode alone (zero3's GPU
 * peak) read as if it were why that one failed (zero3-offload's host memory). */
static void why_add(solve_t *sv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void why_add(solve_t *sv, const char *fmt, ...)
{
    size_t len = strlen(sv->why);
    if (len > 0 && len + 2 < sizeof(sv->why)) {
        memcpy(sv->why + len, "; ", 3);
        len += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sv->why + len, sizeof(sv->why) - len, fmt, ap);
    va_end(ap);
}

/* Uses the caller's workspace after checking it fits, or sizes one (*own). */
static int solve_ws(solve_t *sv, tsl_memopt_ws_t *ws, tsl_memopt_ws_t *own, bool *own_ws,
                    tsl_err_t *err)
{
    const uint32_t n = sv->n;
    const bool dp = sv->opts->solver == TSL_MEMOPT_SOLVER_DP;
    uint32_t m = sv->opts->mem_levels ? sv->opts->mem_levels : TSL_MEMOPT_DEFAULT_MEM_LEVELS;
    if (ws == NULL) {
        /* Without pruning 2 every reached state needs a node: the worst case. */
        uint64_t pool = dp && sv->opts->dp_no_dominance ? (uint64_t)n * TSL_MEMOPT_N_SWITCH_SETS *
                                                              ((uint64_t)m + 1) * (m + 2) / 2
                                                        : 0;
        if (tsl_memopt_ws_init(own, n, dp ? m : 0, pool, err) != 0)
            return -1;
        *own_ws = true;
        sv->ws = own;
        return 0;
    }
    if (n > ws->max_layers)
        return tsl_err_set(err, "layers: %u is more than the workspace's %u", n, ws->max_layers);
    if (dp && ws->mem_levels != m)
        return tsl_err_set(err, "mem_levels: the workspace has %u levels, the options ask %u",
                           ws->mem_levels, m);
    sv->ws = ws;
    return 0;
}

/* Evaluates ws->best under mode; keeps it in the plan when valid and faster. */
static int keep_if_faster(solve_t *sv, tsl_memopt_mode_t mode, tsl_err_t *err)
{
    tsl_memopt_plan_t cand;
    if (tsl_memopt_evaluate(sv->layers, sv->n, sv->ctx, mode, sv->ws->best, &cand, err) != 0)
        return -1;
    if (cand.valid && (!sv->found || cand.step_s < sv->plan->step_s)) {
        *sv->plan = cand;
        sv->found = true;
    }
    return 0;
}

/* H3T's DP in one mode; sets sc->found. Host memory is not a DP dimension:
 * hidden-state offload is withheld when the node could not hold every hidden
 * state. */
static int solve_dp(solve_t *sv, tsl_memopt_mode_t mode, uint32_t allowed, search_ctx_t *sc,
                    tsl_err_t *err)
{
    uint64_t all_hidden = 0;
    for (uint32_t i = 0; i < sv->n; i++)
        all_hidden += sv->ws->hidden_bytes[i];
    uint32_t a = allowed;
    if (!cpu_fits(sv->ctx, sc->cpu_fixed + all_hidden))
        a &= ~(uint32_t)TSL_MEMOPT_OFFLOAD_HIDDEN;
    tsl_err_t e2 = {0};
    int r = tsl_memopt_dp(sv->ws, sv->n, sv->ctx, a, sv->opts, sv->ws->best, &sv->st, &e2);
    if (r < 0) {
        tsl_err_setc(err, tsl_err_code(&e2), "%s", e2.msg);
        return -1;
    }
    sc->found = r == 0;
    if (r > 0)
        why_add(sv, "%s: %.160s", tsl_memopt_mode_name(mode), e2.msg);
    return 0;
}

/* One global mode: host-memory check, the segment table, the solver, and for the
 * DP greedy as its floor. */
static int solve_mode(solve_t *sv, tsl_memopt_mode_t mode, tsl_err_t *err)
{
    const tsl_memopt_ctx_t *ctx = sv->ctx;
    const bool dp = sv->opts->solver == TSL_MEMOPT_SOLVER_DP;
    uint32_t allowed = ctx->allowed_switches & mode_mask(mode);
    uint64_t fixed = cpu_fixed_bytes(sv->layers, sv->n, ctx, mode);
    if (!cpu_fits(ctx, fixed)) {
        why_add(sv,
                "cpu_mem_bytes: %s needs %.1f GiB of host memory per node for the offloaded "
                "states, the node has %.1f GiB",
                tsl_memopt_mode_name(mode), (double)fixed * ctx->devices_per_node / GIB,
                (double)ctx->cpu_mem_bytes / GIB);
        return 0;
    }
    if (tsl_memopt_ws_load(sv->ws, sv->layers, sv->n, ctx, mode, err) != 0)
        return -1;
    search_ctx_t sc = {
        sv->ws,          sv->n, ctx,   ctx->gpu_mem_limit_bytes - ctx->reserved_bytes,
        fixed,           0.0,   false, 0,
        sv->opts->cancel};
    if (dp) {
        if (solve_dp(sv, mode, allowed, &sc, err) != 0)
            return -1;
    } else {
        run_simple(&sc, sv->opts->solver, allowed, sv->opts, mode);
        sv->st.evaluations += sc.evals;
        if (!sc.found)
            why_add(sv, "%s: no sequence the %s solver tried fits", tsl_memopt_mode_name(mode),
                    tsl_memopt_solver_name(sv->opts->solver));
    }
    if (sc.found && keep_if_faster(sv, mode, err) != 0)
        return -1;
    if (dp) {
        /* The DP rounds memory to m levels and can miss what greedy (which starts
         * from all-on) finds near the limit: greedy is its floor in every mode. */
        search_ctx_t sg = sc;
        sg.found = false;
        run_simple(&sg, TSL_MEMOPT_SOLVER_GREEDY, allowed, sv->opts, mode);
        sv->st.evaluations += sg.evals;
        if (sg.found && keep_if_faster(sv, mode, err) != 0)
            return -1;
    }
    if (tsl_memopt_cancelled(sv->opts))
        return tsl_err_setc(err, TSL_E_CANCELLED, "search: cancelled");
    return 0;
}

int tsl_memopt_solve(const tsl_layer_t *layers, uint32_t n, const tsl_memopt_ctx_t *ctx,
                     const tsl_memopt_opts_t *opts, tsl_memopt_ws_t *ws, tsl_memopt_plan_t *plan,
                     tsl_memopt_stats_t *stats, tsl_err_t *err)
{
    int rc = -1;
    tsl_memopt_ws_t own;
    bool own_ws = false;
    if (opts == NULL || (unsigned)opts->solver >= TSL_MEMOPT_SOLVER_COUNT)
        return tsl_err_set(err, "solver: not one of all-on, uniform, random, greedy, dp");
    if (plan == NULL)
        return tsl_err_set(err, "plan: no output given");
    if (tsl_memopt_ctx_validate(ctx, err) != 0 || check_layers(layers, n, err) != 0)
        return -1;
    solve_t sv = {.layers = layers, .n = n, .ctx = ctx, .opts = opts, .plan = plan};
    if (solve_ws(&sv, ws, &own, &own_ws, err) != 0)
        return -1;

    bool have_diag = false;
    for (unsigned mi = 0; mi < TSL_MEMOPT_MODE_COUNT; mi++) {
        if (!(ctx->allowed_modes & (1u << mi)))
            continue;
        tsl_memopt_mode_t mode = (tsl_memopt_mode_t)mi;
        if (!have_diag) {
            /* every switch on in the first mode: the figures the error quotes */
            memset(sv.ws->seq, (int)(ctx->allowed_switches & mode_mask(mode)), n);
            if (tsl_memopt_evaluate(layers, n, ctx, mode, sv.ws->seq, plan, err) != 0)
                goto out;
            have_diag = true;
        }
        if (solve_mode(&sv, mode, err) != 0)
            goto out;
    }
    if (!sv.found) {
        tsl_err_setc(err, TSL_E_NOFIT,
                     "gpu_mem_limit_bytes: the %s solver found no switch setting within %.2f GiB "
                     "per device (every switch on, %s: peak %.2f GiB, host %.1f GiB per node)%s%s",
                     tsl_memopt_solver_name(opts->solver), (double)ctx->gpu_mem_limit_bytes / GIB,
                     tsl_memopt_mode_name(plan->mode), (double)plan->gpu_peak_bytes / GIB,
                     (double)plan->cpu_bytes_per_node / GIB, sv.why[0] ? "; " : "", sv.why);
        goto out;
    }
    rc = 0;
out:
    if (stats)
        *stats = sv.st;
    if (own_ws)
        tsl_memopt_ws_free(&own);
    return rc;
}

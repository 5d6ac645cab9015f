#include "plan.h"

#include "partition.h"
#include "pipeline.h"
#include "sublayer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void tsl_plan_init(tsl_plan_t *p)
{
    memset(p, 0, sizeof(*p));
}

static int validate_stage_cover(const tsl_plan_t *p, const tsl_model_t *m, const tsl_cluster_t *c,
                                tsl_err_t *err)
{
    uint32_t next_layer = 0, next_device = 0;
    for (uint32_t s = 0; s < p->pp; s++) {
        const tsl_plan_stage_t *st = &p->stages[s];
        if (st->first_layer != next_layer || st->n_layers == 0)
            return tsl_err_set(err,
                               "plan: stage %u starts at layer %u with %u layers; expected "
                               "a non-empty stage starting at layer %u",
                               s, st->first_layer, st->n_layers, next_layer);
        if (st->first_device != next_device || st->n_devices == 0)
            return tsl_err_set(err,
                               "plan: stage %u uses devices from %u (%u); expected a "
                               "non-empty block starting at device %u",
                               s, st->first_device, st->n_devices, next_device);
        next_layer += st->n_layers;
        next_device += st->n_devices;
    }
    if (next_layer != m->n_layers || next_layer != p->n_layers)
        return tsl_err_set(err, "plan: stages place %u layers; the model has %u", next_layer,
                           m->n_layers);
    if (next_device != c->n_devices || next_device != p->n_devices)
        return tsl_err_set(err, "plan: stages use %u devices; the cluster has %u", next_device,
                           c->n_devices);
    return 0;
}

static int validate_strategies(const tsl_plan_t *p, tsl_err_t *err)
{
    for (uint32_t s = 0; s < p->pp; s++) {
        const tsl_plan_stage_t *st = &p->stages[s];
        for (uint32_t l = st->first_layer; l < st->first_layer + st->n_layers; l++) {
            const tsl_strategy_t *ls = &p->layer[l];
            uint32_t g = tsl_strategy_group_size(ls);
            if (g != st->n_devices)
                return tsl_err_set(err,
                                   "plan: layer %u's strategy uses %u devices; its stage "
                                   "%u has %u",
                                   l, g, s, st->n_devices);
            uint32_t w = tsl_strategy_data_width(ls), cp = p->cp > 1 ? p->cp : 1, stride;
            if (!tsl_cost_cp_group(ls, cp, &stride))
                return tsl_err_set(err,
                                   "plan: layer %u has no data level whose degree divides by "
                                   "the context-parallel degree %u",
                                   l, cp);
            w /= cp; /* CP ranks split the sequence, not the micro-batch */
            if (p->micro_batch % w != 0)
                return tsl_err_set(err,
                                   "plan: layer %u splits the micro-batch %u ways; %u is "
                                   "not divisible",
                                   l, w, p->micro_batch);
        }
    }
    return 0;
}

static int validate_figures(const tsl_plan_t *p, tsl_err_t *err)
{
    if (p->micro_batch == 0 || p->n_micro == 0 ||
        (uint64_t)p->micro_batch * p->n_micro != p->global_batch)
        return tsl_err_set(err, "plan: micro_batch %u × n_micro %u != global_batch %u",
                           p->micro_batch, p->n_micro, p->global_batch);
    if (!(isfinite(p->iter_time_s) && p->iter_time_s > 0) ||
        !(isfinite(p->samples_per_s) && p->samples_per_s > 0))
        return tsl_err_set(err,
                           "plan: predicted time %g s / throughput %g samples/s is not a "
                           "positive finite number",
                           p->iter_time_s, p->samples_per_s);
    for (uint32_t s = 0; s < p->pp; s++) {
        if (p->budget_bytes && p->stages[s].peak_bytes > p->budget_bytes)
            return tsl_err_set(err,
                               "plan: stage %u needs %llu bytes per device, over the budget "
                               "of %llu",
                               s, (unsigned long long)p->stages[s].peak_bytes,
                               (unsigned long long)p->budget_bytes);
    }
    return 0;
}

static int validate(const tsl_plan_t *p, const tsl_model_t *m, const tsl_cluster_t *c,
                    tsl_err_t *err);

int tsl_plan_validate(const tsl_plan_t *p, const tsl_model_t *m, const tsl_cluster_t *c,
                      tsl_err_t *err)
{
    if (!p->sublayer)
        return validate(p, m, c, err);
    /* a sub-layer plan places the attention/FFN blocks of the split model */
    tsl_sublayer_model_t sm;
    if (tsl_sublayer_split(m, &sm, err) != 0)
        return -1;
    int rc = validate(p, &sm.model, c, err);
    tsl_sublayer_free(&sm);
    return rc;
}

/* Interleaved 1F1B: v chunks need a layer each on every stage, and Megatron's
 * schedule a group size N it runs (m divisible by P for the default N = P). */
static int validate_interleave(const tsl_plan_t *p, tsl_err_t *err)
{
    uint32_t v = p->interleave;
    if (p->vp_group && (v <= 1 || p->schedule))
        return tsl_err_set(err,
                           "plan: vp_group %u: micro-batches per group of the interleaved "
                           "schedule, which the plan does not run (interleave %u, schedule %s)",
                           p->vp_group, v, tsl_pipesim_sched_name(p->schedule, v));
    if (v <= 1)
        return 0;
    if (p->pp < 2)
        return tsl_err_set(err, "plan: interleave %u needs several stages", v);
    if (tsl_pipeline_vp_check(p->pp, p->n_micro, p->vp_group) != 0)
        return tsl_err_set(err,
                           "plan: interleave %u with vp_group %u (0: pp) and %u micro-batches: "
                           "Megatron-LM's schedule takes pp (%u) <= vp_group <= n_micro and "
                           "n_micro mod vp_group 0 or at least pp",
                           v, p->vp_group, p->n_micro, p->pp);
    for (uint32_t s = 0; s < p->pp; s++)
        if (p->stages[s].n_layers < v)
            return tsl_err_set(err, "plan: stage %u has %u layers for %u interleaved chunks", s,
                               p->stages[s].n_layers, v);
    return 0;
}

static int validate(const tsl_plan_t *p, const tsl_model_t *m, const tsl_cluster_t *c,
                    tsl_err_t *err)
{
    if (!p->valid)
        return tsl_err_set(err, "plan: empty plan");
    if (p->pp == 0 || p->pp > TSL_PLAN_MAX_STAGES)
        return tsl_err_set(err, "plan: %u stages; must be 1..%u", p->pp, TSL_PLAN_MAX_STAGES);
    if (validate_stage_cover(p, m, c, err) != 0)
        return -1;
    /* the MTP layers with the head (partition.h) */
    if (tsl_partition_mtp_check(m, p->pp, p->stages[p->pp - 1].first_layer, err) != 0)
        return tsl_err_prefix(err, "plan");
    if (validate_strategies(p, err) != 0 || validate_interleave(p, err) != 0)
        return -1;
    return validate_figures(p, err);
}

void tsl_plan_foreach_run(const tsl_plan_t *p, tsl_plan_run_fn fn, void *ud)
{
    for (uint32_t s = 0; s < p->pp; s++) {
        const tsl_plan_stage_t *st = &p->stages[s];
        uint32_t end = st->first_layer + st->n_layers;
        uint32_t run_start = st->first_layer;
        for (uint32_t l = st->first_layer + 1; l <= end; l++) {
            if (l == end || !tsl_strategy_equal(&p->layer[l], &p->layer[run_start]) ||
                p->layer_switches[l] != p->layer_switches[run_start]) {
                fn(ud, s, run_start, l - run_start, &p->layer[run_start]);
                run_start = l;
            }
        }
    }
}

/* ---- fingerprint: FNV-1a over a canonical byte stream ---- */

#define FNV_OFFSET 1469598103934665603ull
#define FNV_PRIME  1099511628211ull

void tsl_fp_init(tsl_fp_t *fp)
{
    fp->h = FNV_OFFSET;
}

static void fp_bytes(tsl_fp_t *fp, const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fp->h ^= b[i];
        fp->h *= FNV_PRIME;
    }
}

void tsl_fp_u64(tsl_fp_t *fp, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++) /* little-endian regardless of the host */
        b[i] = (unsigned char)(v >> (8 * i));
    fp_bytes(fp, b, sizeof(b));
}

void tsl_fp_f64(tsl_fp_t *fp, double v)
{
    char text[40];
    int n = snprintf(text, sizeof(text), "%.17g", v);
    fp_bytes(fp, (const unsigned char *)text, (size_t)n);
    tsl_fp_u64(fp, (uint64_t)n);
}

void tsl_fp_str(tsl_fp_t *fp, const char *s)
{
    size_t n = strlen(s);
    fp_bytes(fp, (const unsigned char *)s, n);
    tsl_fp_u64(fp, n); /* length after the bytes: "ab"+"c" ≠ "a"+"bc" */
}

static void fp_layer(tsl_fp_t *fp, const tsl_layer_t *l)
{
    uint64_t key[TSL_LAYER_KEY_LEN];
    uint32_t n = tsl_layer_key(l, key);
    for (uint32_t i = 0; i < n; i++)
        tsl_fp_u64(fp, key[i]);
    tsl_fp_f64(fp, l->fwd_flops);
    tsl_fp_f64(fp, l->extra_fwd_flops);
}

void tsl_fp_model(tsl_fp_t *fp, const tsl_model_t *m)
{
    tsl_fp_str(fp, "model");
    tsl_fp_u64(fp, m->n_layers);
    tsl_fp_u64(fp, m->tokens_per_sample);
    if (m->hybrid) /* its attention and FFN layers are blocks (tsl_model_is_block);
                      hashed only when set, so other models keep their fingerprints */
        tsl_fp_str(fp, "hybrid");
    for (uint32_t i = 0; i < m->n_layers; i++)
        fp_layer(fp, &m->layers[i]);
}

static void fp_gpu(tsl_fp_t *fp, const tsl_gpu_spec_t *g)
{
    tsl_fp_str(fp, g->name);
    tsl_fp_u64(fp, g->mem_bytes);
    tsl_fp_f64(fp, g->peak_flops);
    tsl_fp_f64(fp, g->efficiency);
    tsl_fp_f64(fp, g->intra_bw);
    tsl_fp_f64(fp, g->pcie_bw);
}

/* Whether every node pair of c's matrix has one figure (*bw). */
static bool uniform_pairs(const tsl_cluster_t *c, double *bw)
{
    for (uint32_t a = 0; a < c->n_nodes; a++)
        for (uint32_t b = a + 1; b < c->n_nodes; b++) {
            double x = c->inter_bw_matrix[(size_t)a * c->n_nodes + b];
            if (a == 0 && b == 1)
                *bw = x;
            else if (x != *bw)
                return false;
        }
    return true;
}

void tsl_fp_cluster(tsl_fp_t *fp, const tsl_cluster_t *c)
{
    tsl_fp_str(fp, "cluster");
    tsl_fp_u64(fp, c->n_nodes);
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        const tsl_node_t *n = &c->nodes[i];
        tsl_fp_u64(fp, n->n_gpus);
        fp_gpu(fp, &c->gpu_types[n->gpu_type]);
        tsl_fp_f64(fp, n->intra_bw);
        tsl_fp_u64(fp, n->cpu_mem_bytes);
        tsl_fp_u64(fp, n->n_nics); /* the topology prices collectives (cluster_topo.c) */
        tsl_fp_f64(fp, n->nic_bw);
    }
    tsl_fp_f64(fp, c->overlap_slowdown);
    tsl_fp_u64(fp, c->nvl_domain_nodes);
    /* what the NICs carry of an all-to-all (cost model 129); a cluster at the ring's
     * figure hashes as before it */
    if (c->n_nodes > 1 && tsl_cluster_inter_a2a_ratio(c) != 1.0) {
        tsl_fp_str(fp, "a2a share");
        tsl_fp_f64(fp, c->inter_a2a_ratio);
    }
    /* and of a flex dispatcher's RDMA (cost model 136), likewise */
    if (c->n_nodes > 1 && tsl_cluster_inter_flex_ratio(c) != 1.0) {
        tsl_fp_str(fp, "flex share");
        tsl_fp_f64(fp, c->inter_flex_ratio);
    }
    double uniform = c->inter_bw;
    if (c->inter_bw_matrix && !uniform_pairs(c, &uniform)) {
        for (uint32_t a = 0; a < c->n_nodes; a++)
            for (uint32_t b = a + 1; b < c->n_nodes; b++)
                tsl_fp_f64(fp, c->inter_bw_matrix[(size_t)a * c->n_nodes + b]);
        return;
    }
    /* one figure for every pair (12,500 nodes have 78 million of them), whether a
     * matrix of equal figures or inter_bw alone says so: the same cluster */
    tsl_fp_str(fp, "every pair");
    tsl_fp_f64(fp, c->n_nodes > 1 ? uniform : 0.0);
}

void tsl_fp_hex(const tsl_fp_t *fp, char buf[17])
{
    snprintf(buf, 17, "%016llx", (unsigned long long)fp->h);
}

bool tsl_plan_better(const tsl_plan_t *a, const tsl_plan_t *b)
{
    if (a->samples_per_s != b->samples_per_s)
        return a->samples_per_s > b->samples_per_s;
    if (a->peak_bytes != b->peak_bytes) /* deterministic tie-breaks */
        return a->peak_bytes < b->peak_bytes;
    if (a->pp != b->pp)
        return a->pp < b->pp;
    return a->n_micro < b->n_micro;
}

bool tsl_plan_has_sdp(const tsl_plan_t *p)
{
    uint32_t n =
        p->n_layers && p->n_layers < TSL_PLAN_MAX_LAYERS ? p->n_layers : TSL_PLAN_MAX_LAYERS;
    for (uint32_t i = 0; i < n; i++)
        if (tsl_strategy_degree(&p->layer[i], TSL_DIM_SDP) > 1)
            return true;
    return false;
}

bool tsl_plan_ep_overlap_runs(const tsl_plan_t *p)
{
    if (!p->moe_a2a_overlap || p->ep <= 1 || p->schedule || (p->pp > 1 && p->interleave <= 1))
        return false;
    for (uint32_t i = 0; i < p->n_layers && i < TSL_PLAN_MAX_LAYERS; i++)
        if (p->layer[i].ckpt)
            return false;
    return true;
}

double tsl_plan_ep_overlap_s(const tsl_plan_t *p, uint32_t s)
{
    if (!tsl_plan_ep_overlap_runs(p) || s >= p->pp)
        return 0.0;
    return tsl_pipeline_ep_overlap_s(s, p->pp, p->n_micro, p->interleave, p->vp_group,
                                     p->stages[s].ep_save_s);
}

/* A V's second chunk on stage s, within what the simulator takes (pipesim.h
 * check_chunk1): each part at most its stage's, chunk 1's W within its backward and
 * the stage's W, and chunk 0's W within chunk 0's backward (the sums' rounding aside,
 * the pricing's figures hold these already). */
static void v_chunk1(const tsl_plan_stage_t *st, tsl_plan_sim_t *sim, uint32_t s)
{
    double f = fmax(sim->fwd[s], 0), b = fmax(sim->bwd[s], 0), w = sim->wgrad[s];
    double f1 = fmin(fmax(st->chunk1_fwd_s, 0), f), b1 = fmin(fmax(st->chunk1_bwd_s, 0), b);
    double w1 = fmax(fmin(st->chunk1_wgrad_s, fmin(b1, w)), 0);
    sim->fwd1[s] = f1;
    sim->bwd1[s] = b1;
    sim->wgrad1[s] = fmin(fmax(w1, w - (b - b1)), fmin(b1, w));
}

void tsl_plan_sim_input(const tsl_plan_t *p, bool paper, tsl_plan_sim_t *sim)
{
    const bool zb = p->schedule != TSL_PIPESIM_SCHED_1F1B;
    const bool ds_engine = p->ds_pipe_p2p || p->ds_pipe_engine; /* tsl_cost_p2p_rendezvous */
    uint32_t v = tsl_pipesim_sched_chunks(p->schedule, p->interleave);
    memset(sim, 0, sizeof(*sim));
    for (uint32_t s = 0; s < p->pp && s < TSL_PLAN_MAX_STAGES; s++) {
        const tsl_plan_stage_t *st = &p->stages[s];
        double ep = tsl_plan_ep_overlap_s(p, s); /* the merged steps' saving */
        sim->fwd[s] = st->fwd_s;
        sim->bwd[s] = st->time_nosync_s - st->p2p_s - st->fwd_s - ep;
        sim->sync[s] = st->time_s - st->p2p_s - st->fwd_s - ep;
        sim->tail[s] = st->time_s - st->time_nosync_s;
        /* the stage's p2p counts both directions and, interleaved, v hops */
        sim->p2p[s] = st->p2p_s / (2.0 * v);
        sim->opt[s] = st->opt_s;
        sim->wgrad[s] = fmin(st->wgrad_s, fmax(sim->bwd[s], 0.0));
        sim->fb_save[s] = st->fb_save_s;
        v_chunk1(st, sim, s);
    }
    const bool vc = p->v_chunks && v == 2 && zb;
    const tsl_cost_knobs_t stack = {.legacy_p2p = p->legacy_p2p,
                                    .torch_pipelining = p->torch_pipelining};
    const bool vp_blocking = tsl_cost_vp_blocking(&stack);
    sim->in = (tsl_pipesim_in_t){
        .n_stages = p->pp,
        .n_micro = p->n_micro,
        .fwd_s = sim->fwd,
        .bwd_s = sim->bwd,
        .bwd_sync_s = paper ? sim->sync : NULL,
        .sync_tail_s = paper ? NULL : sim->tail,
        /* Megatron's blocking sends (plain 1F1B; interleaved where the stack waits
         * on every op's exchange, tsl_cost_vp_blocking: Megatron-LM before core,
         * torch.distributed.pipelining, as the closed form's p2p_blocking prices
         * it), or DeepSpeed's transfers both stages sit in */
        .p2p_blocking = !paper && (v == 1 || vp_blocking) && !zb && !ds_engine,
        .p2p_rendezvous = !paper && v == 1 && !zb && ds_engine,
        .p2p_s = sim->p2p,
        .n_chunks = zb ? 0 : v,
        .vp_group = zb || v <= 1 ? 0 : p->vp_group,
        .schedule = (uint8_t)p->schedule,
        .wgrad_s = zb ? sim->wgrad : NULL,
        .fb_save_s = p->schedule == TSL_PIPESIM_SCHED_DUALPIPEV ? sim->fb_save : NULL,
        .c1_fwd_s = vc ? sim->fwd1 : NULL,
        .c1_bwd_s = vc ? sim->bwd1 : NULL,
        .c1_wgrad_s = vc ? sim->wgrad1 : NULL,
        .opt_s = sim->opt,
        .tie_s = p->tie_s,
        .tie_stage = p->tie_stage < p->pp ? p->tie_stage : 0};
}

void tsl_plan_get_knobs(const tsl_plan_t *p, tsl_cost_knobs_t *k)
{
    k->grad_reduce_bytes =
        p->grad_reduce_bytes == TSL_BYTES_PER_PARAM_FP16 ? 0 : p->grad_reduce_bytes;
    k->grad_buf_bytes = p->grad_buf_bytes;
    k->attn_kernel = p->attn_kernel;
    k->no_fp32_master = p->no_fp32_master;
    k->grad_reduce_exposed = p->grad_reduce_exposed;
    k->overlap_param_gather = p->overlap_param_gather;
    k->overlap_tp_dgrad = p->overlap_tp_dgrad;
    k->unfused_grad_accum = p->unfused_grad_accum;
    k->legacy_p2p = p->legacy_p2p;
    k->tp_comm_overlap = p->tp_comm_overlap;
    k->async_tp = p->async_tp;
    k->autocast = p->autocast;
    k->eager = p->eager;
    k->double_block_fwd = p->double_block_fwd;
    k->cp = p->cp > 1 ? p->cp : 0;
    k->cp_comm = k->cp ? p->cp_comm : 0;
    k->ep = p->ep > 1 ? p->ep : 0;
    k->etp = p->etp > 1 ? p->etp : 0;
    k->moe_capacity = p->moe_capacity > 0 ? p->moe_capacity : 0.0;
    k->moe_pad = k->moe_capacity > 0 && p->moe_pad;
    k->moe_imbalance = p->moe_imbalance;
    k->host_op_s = p->host_op_us * 1e-6;
    k->fp8 = p->fp8_recipe;
    k->fp8_impl = p->fp8_impl;
    k->loss_impl = p->loss_impl;
    k->fp8_param_gather = p->fp8_param_gather;
    k->moe_bf16_experts = p->moe_bf16_experts;
    k->moe_fp8_dispatch = p->moe_fp8_dispatch;
    k->moe_alltoall = p->moe_alltoall;
    k->moe_unfused_permute = p->moe_unfused_permute;
    /* Megatron-LM's MXFP8 dispatch runs only through the op fuser's grouped GEMMs
     * (TransformerConfig: "moe_dispatch_fwd_dtype / moe_combine_bwd_dtype = 'mxfp8' require
     * BOTH use_transformer_engine_op_fuser and moe_grouped_gemm") */
    k->moe_fused_mlp = p->moe_fused_mlp || p->moe_fp8_dispatch;
    k->moe_fused_srelu = p->moe_fused_srelu;
    k->moe_flex = p->moe_flex;
    k->moe_flex_backend = p->moe_flex ? p->moe_flex_backend : 0;
    k->moe_a2a_overlap = p->moe_a2a_overlap;
    k->moe_a2a_wgrad_inline = p->moe_a2a_wgrad_inline;
    k->fb_serial = p->fb_serial;
    k->recompute_modules = p->recompute_modules;
    k->bf16_moments = p->bf16_moments;
    k->bf16_layers_start = p->bf16_layers_start;
    k->bf16_layers_end = p->bf16_layers_end;
    k->lazy_grads = p->lazy_grads;
    k->cpu_offload_layers = p->cpu_offload_layers;
    k->opt_step = p->opt_step;
    k->tp_sync = p->tp_sync;
    k->ds_pipe_p2p = p->ds_pipe_p2p;
    k->ds_pipe_engine = p->ds_pipe_engine;
    k->torch_pipelining = p->torch_pipelining;
    k->nccl_no_tree = p->nccl_no_tree;
    k->norm_impl = p->norm_impl;
    k->cuda_graph_modules = p->cuda_graph_modules;
    k->module_prec = p->module_prec;
    k->ds_grad_bucket = p->ds_grad_bucket;
    k->tp_whole_heads = p->tp_whole_heads;
    k->sdp_layer_roots = p->sdp_layer_roots;
    k->sdp_nosync = p->sdp_nosync;
    k->sdp_keep_weights = p->sdp_keep_weights;
    k->ds_bf16_optimizer = p->ds_bf16_optimizer;
    k->launch_blocking = p->launch_blocking;
    k->ds_wall_clock = p->ds_wall_clock;
    k->ds_zero3_v03 = p->ds_zero3_v03;
    k->fp8_amax_tp_only = p->fp8_amax_tp_only;
    k->fp8_dpa = p->fp8_dpa;
    k->unfused_elementwise = p->unfused_elementwise;
    k->fp32 = p->fp32;
    k->tf32_off = p->tf32_off;
    k->tf32 = p->tf32;
    k->fp16 = p->fp16;
    k->stack_unfused_attn = p->stack_unfused_attn;
}

void tsl_plan_stack_knobs(const tsl_plan_t *p, tsl_cost_knobs_t *k)
{
    if (p->fp8_impl) /* torchao binds; 0 (TE, or absent: one value, docs/api.md) leaves
                        the target's (TE but torchtitan) */
        k->fp8_impl = p->fp8_impl;
    k->fp8_param_gather |= p->fp8_param_gather;
    k->fb_serial |= p->fb_serial; /* the stack runs DualPipeV's F&B as F + B */
    if (p->opt_step)              /* the stack's optimizer step (opt_step.h) */
        k->opt_step = p->opt_step;
    k->tp_sync |= p->tp_sync;               /* its TP collectives between device synchronisations */
    k->ds_pipe_p2p |= p->ds_pipe_p2p;       /* its boundaries by DeepSpeed's pipeline engine */
    k->ds_pipe_engine |= p->ds_pipe_engine; /* its stages by that engine's blocking p2p */
    k->torch_pipelining |= p->torch_pipelining;     /* its stages by torch's pipelining */
    k->nccl_no_tree |= p->nccl_no_tree;             /* its NCCL without the tree */
    k->cuda_graph_modules |= p->cuda_graph_modules; /* its modules its CUDA graphs replay */
    if (p->module_prec)                             /* its linears at their own precision */
        k->module_prec = p->module_prec;
    if (p->norm_impl) /* its norms' kernels (norm_impl.h) */
        k->norm_impl = p->norm_impl;
    k->ds_wall_clock |= p->ds_wall_clock;       /* its instructions between synchronising timers */
    k->ds_zero3_v03 |= p->ds_zero3_v03;         /* its ZeRO-3 as DeepSpeed 0.3 ran it */
    k->fp8_amax_tp_only |= p->fp8_amax_tp_only; /* its TE's amax reduction over TP */
    k->fp8_dpa |= p->fp8_dpa;                   /* its attention in FP8 */
    k->unfused_elementwise |= p->unfused_elementwise; /* its blocks' unfused kernels */
    if (p->tf32) { /* its script runs fp32 matmuls as TF32, whatever the target */
        k->tf32 = true;
        k->tf32_off = false;
    } else if (!k->tf32) {          /* unless the request said its script runs TF32 */
        k->tf32_off |= p->tf32_off; /* its fp32 matmuls without TF32 */
    }
}

void tsl_plan_set_knobs(tsl_plan_t *p, const tsl_cost_knobs_t *k)
{
    p->grad_reduce_bytes =
        k->grad_reduce_bytes == TSL_BYTES_PER_PARAM_FP16 ? 0 : k->grad_reduce_bytes;
    p->grad_buf_bytes = k->grad_buf_bytes;
    p->attn_kernel = k->attn_kernel;
    p->no_fp32_master = k->no_fp32_master;
    p->grad_reduce_exposed = k->grad_reduce_exposed;
    p->overlap_param_gather = k->overlap_param_gather;
    p->overlap_tp_dgrad = k->overlap_tp_dgrad;
    p->unfused_grad_accum = k->unfused_grad_accum;
    p->legacy_p2p = k->legacy_p2p;
    p->tp_comm_overlap = k->tp_comm_overlap;
    p->async_tp = k->async_tp;
    p->autocast = k->autocast;
    p->eager = k->eager;
    p->double_block_fwd = k->double_block_fwd;
    p->cp = k->cp > 1 ? k->cp : 0;
    p->cp_comm = p->cp ? k->cp_comm : 0;
    p->ep = k->ep > 1 ? k->ep : 0;
    p->etp = k->etp > 1 ? k->etp : 0;
    p->moe_capacity = k->moe_capacity > 0 ? k->moe_capacity : 0.0;
    p->moe_pad = p->moe_capacity > 0 && k->moe_pad;
    p->moe_imbalance = k->moe_imbalance;
    p->host_op_us = k->host_op_s * 1e6;
    p->fp8_recipe = k->fp8;
    p->fp8_impl = k->fp8 ? k->fp8_impl : 0;
    p->loss_impl = k->autocast ? TSL_LOSS_TORCH : k->loss_impl;
    p->fp8_param_gather = k->fp8 && k->fp8_param_gather;
    p->moe_bf16_experts = k->fp8 && k->moe_bf16_experts;
    p->moe_fp8_dispatch = k->fp8 && !k->moe_bf16_experts && k->moe_fp8_dispatch;
    p->moe_alltoall = k->moe_alltoall;
    p->moe_unfused_permute = k->moe_unfused_permute;
    p->moe_fused_mlp = k->moe_fused_mlp;
    p->moe_fused_srelu = k->moe_fused_srelu;
    p->moe_flex = k->moe_flex;
    p->moe_flex_backend = k->moe_flex ? k->moe_flex_backend : 0;
    p->moe_a2a_overlap = k->moe_a2a_overlap;
    p->moe_a2a_wgrad_inline = k->moe_a2a_overlap && k->moe_a2a_wgrad_inline;
    p->fb_serial = k->fb_serial;
    p->recompute_modules = k->recompute_modules;
    p->bf16_moments = k->bf16_moments && !k->no_fp32_master;
    p->lazy_grads = k->lazy_grads;
    p->bf16_layers_start = k->fp8 ? k->bf16_layers_start : 0;
    p->bf16_layers_end = k->fp8 ? k->bf16_layers_end : 0;
    p->cpu_offload_layers = k->cpu_offload_layers;
    p->opt_step = k->opt_step;
    p->tp_sync = k->tp_sync;
    p->ds_pipe_p2p = k->ds_pipe_p2p;
    p->ds_pipe_engine = k->ds_pipe_engine;
    p->torch_pipelining = k->torch_pipelining;
    p->nccl_no_tree = k->nccl_no_tree;
    p->norm_impl = k->norm_impl;
    p->cuda_graph_modules = k->cuda_graph_modules;
    p->module_prec = k->module_prec; /* eval refuses it without a recipe */
    p->ds_grad_bucket = k->ds_grad_bucket;
    p->tp_whole_heads = k->tp_whole_heads;
    p->sdp_layer_roots = k->sdp_layer_roots;
    p->sdp_nosync = k->sdp_nosync;
    p->sdp_keep_weights = k->sdp_keep_weights;
    p->ds_bf16_optimizer = k->ds_bf16_optimizer;
    p->launch_blocking = k->launch_blocking;
    p->ds_wall_clock = k->ds_wall_clock;
    p->ds_zero3_v03 = k->ds_zero3_v03;
    p->fp8_amax_tp_only = k->fp8_amax_tp_only; /* eval refuses it without delayed scaling */
    p->fp8_dpa = k->fp8_dpa;                   /* eval refuses it without an FP8 recipe */
    p->unfused_elementwise = k->unfused_elementwise;
    p->fp32 = k->fp32;
    p->tf32_off = k->fp32 && k->tf32_off; /* recorded where it priced something */
    p->tf32 = k->fp32 && k->tf32;
    p->fp16 = k->fp16 && !k->fp32;
    p->stack_unfused_attn = k->stack_unfused_attn;
}

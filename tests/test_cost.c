/*
 * test_cost.c — cost.h's formulas against values computed by hand for a small
 * layer: DP, SDP (1.5× DP's communication, Galvatron-BMW III-A), TP, CKPT,
 * DP+SDP, overlap limits, infeasible micro-batches, model-state bytes.
 *
 * Layers and strategies are built by hand (derived fields set here) so this test
 * depends only on cluster.c and cost.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "check.h"
#include "fp8_sp_gather_bytes.h"
#include "gemm_eff.h"
#include "cost.h"
#include "cost_host_sync.h"
#include "layer_dense.h"
#include "layer_dsv3.h"
#include "minmax.h"
#include "module_prec.h"
#include "pipesim.h"
#include "sdp_roots.h"
#include "roofline.h"
#include "target.h"

#define GB  1e9
#define EPS 1e-12

/* P = 12·2^20 (divisible by every degree used), F = 4 GFLOP per sample. */
#define P_PARAMS  12582912ull
#define F_FLOPS   4e9
#define ACT_REPL  1000000ull
#define ACT_SHARD 4000000ull
#define SEQ       128u
#define HID       1024u
#define BND       (2ull * SEQ * HID)

/* A made-up GPU with round figures: X = 100 TFLOP/s × 0.5 = 5e13 FLOP/s. */
static const tsl_gpu_spec_t test_gpu = {
    .name = "TEST",
    .mem_bytes = 32ull << 30,
    .peak_flops = 100e12,
    .efficiency = 0.5,
    .intra_bw = 100 * GB,
    .pcie_bw = 10 * GB,
    .source = "test",
};
#define X_FLOPS 5e13

static tsl_layer_t test_layer(void)
{
    tsl_layer_t l;
    memset(&l, 0, sizeof(l));
    l.kind = TSL_LAYER_ENCODER;
    l.seq_len = SEQ;
    l.hidden = HID;
    l.ffn_hidden = 4 * HID;
    l.heads = 16;
    l.params = P_PARAMS;
    l.fwd_flops = F_FLOPS;
    l.bnd_act_bytes = BND;
    l.act_repl_bytes = ACT_REPL;
    l.act_shard_bytes = ACT_SHARD;
    l.tp_allreduces = 2;
    return l;
}

/* Strategy from (dim, degree) pairs, innermost first. */
static tsl_strategy_t strat(int n, const tsl_dim_t *dims, const uint32_t *degs, bool ckpt)
{
    tsl_strategy_t s;
    memset(&s, 0, sizeof(s));
    s.n_levels = (uint8_t)n;
    for (int i = 0; i < n; i++) {
        s.dim[i] = (uint8_t)dims[i];
        s.degree[i] = degs[i];
    }
    s.ckpt = ckpt;
    return s;
}

static tsl_strategy_t one(tsl_dim_t d, uint32_t deg, bool ckpt)
{
    return strat(1, &d, &deg, ckpt);
}

/* GPT-2 medium's block (seq 1024, hidden 1024, FFN 4096, 16 heads), derived: the
 * optimizer-step and host-chain tests' layer. */
static tsl_layer_t gpt2_medium_block(void)
{
    tsl_err_t err = {0};
    tsl_layer_t l = gpt2_medium(1024);
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    return l;
}

/* A cluster from its short spec and a cost environment over its first gpus devices. */
static void spec_env(tsl_cluster_t *c, tsl_cost_env_t *env, const char *spec, uint32_t gpus)
{
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(c, spec, &err) == 0, "%s", err.msg);
    CHECK(tsl_cost_env_init(env, c, 0, gpus, &err) == 0, "%s", err.msg);
}

static void make_env(tsl_cluster_t *c, tsl_cost_env_t *env, uint32_t nodes, uint32_t gpn)
{
    tsl_err_t err = {0};
    CHECK(tsl_cluster_homogeneous(c, nodes, gpn, &test_gpu, 10 * GB, &err) == 0, "%s", err.msg);
    c->overlap_slowdown = 1.3;
    CHECK(tsl_cost_env_init(env, c, 0, nodes * gpn, &err) == 0, "%s", err.msg);
    /* The hand-written figures below are the formulas' bandwidth terms over the
     * slowest link (AMP Eq. 3): PAPER mode. The default mode's topology and α are
     * checked by test_stack_* against figures computed by hand. */
    env->mode = TSL_COST_PAPER;
}

static void test_collectives(void)
{
    CHECK_NEAR(tsl_cost_allreduce_s(8e9, 8, 100 * GB), 2.0 * 7 / 8 * 8e9 / 100e9, EPS, "ar");
    CHECK_NEAR(tsl_cost_allgather_s(8e9, 4, 10 * GB), 3.0 / 4 * 8e9 / 10e9, EPS, "ag");
    CHECK_NEAR(tsl_cost_reduce_scatter_s(8e9, 4, 10 * GB), 0.6, EPS, "rs");
    CHECK_NEAR(tsl_cost_p2p_s(1e9, 10 * GB), 0.1, EPS, "p2p");
    CHECK(tsl_cost_allreduce_s(8e9, 1, 100 * GB) == 0, "n = 1");
    CHECK(tsl_cost_allgather_s(0, 8, 100 * GB) == 0, "0 bytes");
    CHECK(tsl_cost_reduce_scatter_s(0, 8, 0) == 0, "0 bytes over no link");
    CHECK(tsl_cost_allreduce_s(8e9, 8, INFINITY) == 0, "infinite link");
    CHECK(isinf(tsl_cost_allreduce_s(8e9, 8, 0)), "no link at all");
    /* all-reduce = reduce-scatter + all-gather */
    CHECK_NEAR(tsl_cost_allreduce_s(5e8, 6, 7 * GB),
               tsl_cost_allgather_s(5e8, 6, 7 * GB) + tsl_cost_reduce_scatter_s(5e8, 6, 7 * GB),
               EPS, "ar = rs + ag");
}

static void test_overlap(void)
{
    CHECK(tsl_cost_overlap_s(3, 5, 1.0) == 5, "k = 1 gives max");
    CHECK(tsl_cost_overlap_s(5, 3, 1.0) == 5, "k = 1 gives max, symmetric");
    CHECK_NEAR(tsl_cost_overlap_s(3, 5, 1.3), 5 + 0.3 * 3, EPS, "k = 1.3");
    CHECK_NEAR(tsl_cost_overlap_s(3, 5, 2.0), 8, EPS, "k = 2 serialises");
    CHECK(tsl_cost_overlap_s(0, 5, 1.3) == 5 && tsl_cost_overlap_s(4, 0, 1.3) == 4,
          "nothing to overlap with");
}

static void test_env(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_err_t err = {0};
    make_env(&c, &env, 2, 4);
    CHECK(env.block_size == 8 && env.device_flops == X_FLOPS, "env figures");
    CHECK(env.overlap_slowdown == 1.3, "the cluster's overlap slowdown");
    CHECK(tsl_cost_env_init(&env, &c, 4, 4, &err) == 0 && env.block_first == 4 &&
              env.block_size == 4,
          "%s", err.msg);
    CHECK(tsl_cost_env_init(&env, &c, 0, 1, &err) == 0 && env.block_size == 1, "one device");
    CHECK(tsl_cost_env_init(&env, &c, 4, 8, &err) == -1 && strstr(err.msg, "outside"), "%s",
          err.msg);
    CHECK(tsl_cost_env_init(&env, &c, 0, 0, &err) == -1, "empty block");
    tsl_cluster_free(&c);

    /* the slowest device of a mixed block sets the compute rate */
    uint32_t a, v;
    tsl_cluster_init(&c);
    tsl_cluster_add_gpu_type(&c, tsl_gpu_find("A100-80G"), &a, &err);
    tsl_cluster_add_gpu_type(&c, tsl_gpu_find("V100-32G"), &v, &err);
    tsl_node_t na = {.n_gpus = 4, .gpu_type = a}, nv = {.n_gpus = 4, .gpu_type = v};
    tsl_cluster_add_node(&c, &na, &err);
    tsl_cluster_add_node(&c, &nv, &err);
    c.inter_bw = 5 * GB;
    CHECK(tsl_cluster_finish(&c, &err) == 0, "%s", err.msg);
    const tsl_gpu_spec_t *vg = tsl_gpu_find("V100-32G"), *ag = tsl_gpu_find("A100-80G");
    CHECK(tsl_cost_env_init(&env, &c, 2, 4, &err) == 0, "%s", err.msg);
    CHECK(env.device_flops == vg->peak_flops * vg->efficiency, "V100 paces the block");
    CHECK(tsl_cost_env_init(&env, &c, 0, 4, &err) == 0, "%s", err.msg);
    CHECK(env.device_flops == ag->peak_flops * ag->efficiency, "A100-only block");
    /* a type met again after another (each read once a run of nodes): still the V100 */
    tsl_cluster_add_node(&c, &na, &err);
    CHECK(tsl_cluster_finish(&c, &err) == 0, "%s", err.msg);
    CHECK(tsl_cost_env_init(&env, &c, 0, 12, &err) == 0, "%s", err.msg);
    CHECK(env.device_flops == vg->peak_flops * vg->efficiency && env.device_mem_bw == vg->mem_bw,
          "A100, V100, A100: the V100 paces the block");
    tsl_cluster_free(&c);
}

static void test_dp(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_layer_cost_t r;
    tsl_layer_t l = test_layer();
    make_env(&c, &env, 1, 8);
    tsl_strategy_t s = one(TSL_DIM_DP, 8, false);

    memset(&r, 0, sizeof(r));                   /* its padding, for the memcmp below */
    tsl_cost_layer(&env, &l, &s, NULL, 16, &r); /* n = 2 samples per device */
    double cf = F_FLOPS * 2 / X_FLOPS;          /* 1.6e-4 s */
    double grad = 2.0 * 7 / 8 * (2.0 * P_PARAMS) / (100 * GB);
    CHECK(r.feasible, "DP8 mb 16 feasible");
    CHECK_NEAR(cf, 1.6e-4, EPS, "compute_f by hand");
    CHECK_NEAR(r.fwd_s, cf, EPS, "fwd = compute_f");
    CHECK_NEAR(r.bwd_s, 2 * cf, EPS, "bwd = 2 compute_f");
    CHECK_NEAR(r.grad_comm_s, grad, EPS, "grad all-reduce %g", r.grad_comm_s);
    CHECK_NEAR(r.grad_comm_s, 4.4040192e-4, EPS, "grad by hand");
    CHECK_NEAR(r.bwd_sync_s, grad + 0.3 * 2 * cf, EPS, "overlap: comm longer, compute slowed");
    CHECK_NEAR(r.compute_s, 3 * cf, EPS, "compute part");
    CHECK(r.comm_s == 0, "DP has no per-micro-batch communication");
    CHECK(r.ms_bytes == 16 * P_PARAMS, "16 bytes per parameter");
    CHECK(r.fwd_bytes == (ACT_REPL + ACT_SHARD) * 2 && r.bwd_bytes == 0, "activations");

    /* precomputed bandwidths give the same figures */
    tsl_strategy_bw_t bw;
    tsl_layer_cost_t r2;
    memset(&r2, 0, sizeof(r2));
    tsl_cost_strategy_bw(&env, &s, &bw);
    CHECK(bw.dp_bw == 100 * GB && isinf(bw.tp_bw) && isinf(bw.sdp_bw), "DP bandwidths");
    tsl_cost_layer(&env, &l, &s, &bw, 16, &r2);
    CHECK(memcmp(&r, &r2, sizeof(r)) == 0, "bw NULL == precomputed");

    /* k = 1: the synchronising backward is max(compute, comm) */
    env.overlap_slowdown = 1.0;
    tsl_cost_layer(&env, &l, &s, &bw, 16, &r);
    CHECK_NEAR(r.bwd_sync_s, fmax(2 * cf, grad), EPS, "k = 1");
    tsl_cluster_free(&c);
}

/* docs/cost-model.md "Precision and overlap", by hand on test_dp's layer (DP 8,
 * 100 GB/s, no latency, k = 1.3): cf = 1.6e-4 s, the 16-bit all-reduce
 * grad = 2·7/8·2P/100 GB/s = 4.404e-4 s, P = 12582912. */
static void test_knobs(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_layer_cost_t r;
    tsl_layer_t l = test_layer();
    make_env(&c, &env, 1, 8);
    tsl_strategy_t s = one(TSL_DIM_DP, 8, false);
    double cf = 1.6e-4, grad = 4.4040192e-4, k = 0.3;

    /* Megatron-LM --bf16: fp32 main gradients, 2 + 4 + 12 = 18 B/param, and the
     * all-reduce moves 4-byte gradients: twice the bytes, twice the time */
    env.knobs.grad_reduce_bytes = 4;
    tsl_cost_layer(&env, &l, &s, NULL, 16, &r);
    CHECK(r.ms_bytes == 18 * P_PARAMS, "fp32 main gradients: 18 B/param (%llu)",
          (unsigned long long)r.ms_bytes);
    CHECK_NEAR(r.grad_comm_s, 2 * grad, EPS, "fp32 reduce: 2 x %g s, got %g", grad, r.grad_comm_s);
    CHECK_NEAR(r.bwd_s, 2 * cf, EPS, "no sync: backward unchanged");
    CHECK_NEAR(r.bwd_sync_s, 2 * grad + k * 2 * cf, EPS, "overlapped: comm longer, compute slowed");
    /* Megatron-LM's default: the reduce after the backward, nothing hidden */
    env.knobs.grad_reduce_exposed = true;
    tsl_cost_layer(&env, &l, &s, NULL, 16, &r);
    CHECK_NEAR(r.bwd_sync_s, 2 * cf + 2 * grad, EPS, "exposed: backward + reduce (%g)",
               r.bwd_sync_s);
    CHECK_NEAR(r.grad_comm_s, 2 * grad, EPS, "exposed: the same bytes");
    env.knobs.grad_reduce_bytes = 0;
    tsl_cost_layer(&env, &l, &s, NULL, 16, &r);
    CHECK_NEAR(r.bwd_sync_s, 2 * cf + grad, EPS, "exposed 16-bit reduce");
    CHECK(r.ms_bytes == 16 * P_PARAMS, "16-bit gradients: 16 B/param");

    /* no fp32 master: 2 + 2 + 4 = 8 B/param; the step streams 14 B, not 28 */
    env.knobs = (tsl_cost_knobs_t){.no_fp32_master = true};
    tsl_cost_layer(&env, &l, &s, NULL, 16, &r);
    CHECK(r.ms_bytes == 8 * P_PARAMS, "bf16 optimizer states: 8 B/param (%llu)",
          (unsigned long long)r.ms_bytes);
    tsl_cost_knobs_t k0 = {0}, k4 = {.grad_reduce_bytes = 4}, kb = {.no_fp32_master = true};
    CHECK(tsl_cost_opt_step_bytes(&k0) == TSL_BYTES_PER_PARAM_OPT_STEP &&
              tsl_cost_opt_step_bytes(&k4) == 30 && tsl_cost_opt_step_bytes(&kb) == 14,
          "optimizer step bytes 28 / 30 / 14");

    /* ZeRO-1 (distributed optimizer) with fp32 main gradients: 2 + 4 + 12/8 B/param
     * (Megatron-LM's docs: 6 + 12/d); reduce-scatter grad/2·2 under the backward,
     * the 16-bit weight all-gather grad/2 after the step */
    s.zero = 1;
    env.knobs = (tsl_cost_knobs_t){.grad_reduce_bytes = 4};
    tsl_cost_layer(&env, &l, &s, NULL, 16, &r);
    CHECK(r.ms_bytes == (uint64_t)(7.5 * P_PARAMS), "ZeRO-1, fp32 grads: 7.5 B/param (%llu)",
          (unsigned long long)r.ms_bytes);
    CHECK_NEAR(r.bwd_sync_s, grad + k * 2 * cf + grad / 2, EPS,
               "ZeRO-1: fp32 reduce-scatter hidden, gather exposed (%g)", r.bwd_sync_s);
    /* --overlap-param-gather: the gather under the next forward (cf = 1.6e-4 <
     * 2.2e-4): what it leaves is overlap(cf, grad/2) − cf = grad/2 + k·cf − cf */
    env.knobs.overlap_param_gather = true;
    tsl_cost_layer(&env, &l, &s, NULL, 16, &r);
    CHECK_NEAR(r.bwd_sync_s, grad + k * 2 * cf + grad / 2 + k * cf - cf, EPS,
               "overlapped gather (%g)", r.bwd_sync_s);
    CHECK_NEAR(r.grad_comm_s, grad + grad / 2, EPS, "raw: the same bytes");

    /* FSDP2 (torchtitan): the sharded fp32 parameter is the master, gradients
     * reduce-scattered in fp32: (4 + 4 + 8) / 8 = 2 B/param as before; the
     * backward holds the gathered bf16 weights and the unsharded fp32 gradient */
    tsl_strategy_t z = one(TSL_DIM_SDP, 8, false);
    env.knobs = (tsl_cost_knobs_t){.grad_reduce_bytes = 4};
    tsl_cost_layer(&env, &l, &z, NULL, 16, &r);
    CHECK(r.ms_bytes == 2 * P_PARAMS, "FSDP2 fp32: 16/8 B/param (%llu)",
          (unsigned long long)r.ms_bytes);
    CHECK(r.bwd_bytes == (uint64_t)ceil(6.0 * P_PARAMS * 7 / 8), "FSDP2: (2 + 4)·P·7/8 held");
    tsl_cluster_free(&c);
}

/* One layer priced twice, a boolean switch off then on (left on): 16 micro-batches. */
static void cost_off_on(tsl_cost_env_t *env, const tsl_layer_t *l, const tsl_strategy_t *s,
                        bool *knob, tsl_layer_cost_t *off, tsl_layer_cost_t *on)
{
    *knob = false;
    tsl_cost_layer(env, l, s, NULL, 16, off);
    *knob = true;
    tsl_cost_layer(env, l, s, NULL, 16, on);
}

/* A switch that prices nothing under Galvatron's PAPER formulas (strategy s) nor on plain
 * DP 8, which has no SDP level for it to act on; leaves env in STACK mode. */
static void check_paper_dp8_inert(tsl_cost_env_t *env, const tsl_layer_t *l,
                                  const tsl_strategy_t *s, bool *knob, const char *name)
{
    tsl_layer_cost_t off, on;
    env->mode = TSL_COST_PAPER;
    cost_off_on(env, l, s, knob, &off, &on);
    CHECK(memcmp(&on, &off, sizeof(on)) == 0, "%s: PAPER unchanged", name);
    env->mode = TSL_COST_STACK;
    tsl_strategy_t d = one(TSL_DIM_DP, 8, false);
    cost_off_on(env, l, &d, knob, &off, &on);
    CHECK(memcmp(&on, &off, sizeof(on)) == 0, "%s: DP 8 unchanged", name);
}

/* One node of 8 at H = 10 us per host op, for the host-dispatch tests (tp_sync,
 * launch_blocking): TP 8 plain (s) and with its layer recomputed (sc), DP 8 (dp). */
static void tp8_host_env(tsl_cluster_t *c, tsl_cost_env_t *env, tsl_strategy_t *s,
                         tsl_strategy_t *sc, tsl_strategy_t *dp)
{
    make_env(c, env, 1, 8);
    env->host_op_s = 1e-5;
    *s = one(TSL_DIM_TP, 8, false);
    *sc = one(TSL_DIM_TP, 8, true);
    *dp = one(TSL_DIM_DP, 8, false);
}

/* launch_blocking (docs/cost-model.md "Synchronous launches"): beside the passes' own
 * ops (roofline.c host_floor: G + ops·H, test_roofline.c test_launch_blocking), each TP
 * all-reduce is dispatched once the kernel before it has ended: one host op each, on
 * the critical path. The test block (no bandwidth: the FLOP count, no host floor) at
 * TP 8, H = 10 µs: its 2 all-reduces each way add 2H = 20 µs to the forward and to the
 * backward; a full recompute repeats the forward's; DP runs none; H = 0 adds nothing. */
static void test_launch_blocking(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_layer_cost_t off, on, ck0, ck1, dp0, dp1;
    tsl_layer_t l = test_layer();
    tsl_strategy_t s, sc, dp;
    tp8_host_env(&c, &env, &s, &sc, &dp);
    tsl_cost_layer(&env, &l, &s, NULL, 4, &off);
    tsl_cost_layer(&env, &l, &sc, NULL, 4, &ck0);
    tsl_cost_layer(&env, &l, &dp, NULL, 8, &dp0);
    env.knobs.launch_blocking = true;
    tsl_cost_layer(&env, &l, &s, NULL, 4, &on);
    tsl_cost_layer(&env, &l, &sc, NULL, 4, &ck1);
    tsl_cost_layer(&env, &l, &dp, NULL, 8, &dp1);
    CHECK_NEAR(on.fwd_s, off.fwd_s + 2e-5, EPS, "forward + 2H: %g", on.fwd_s - off.fwd_s);
    CHECK_NEAR(on.bwd_s, off.bwd_s + 2e-5, EPS, "backward + 2H: %g", on.bwd_s - off.bwd_s);
    CHECK_NEAR(ck1.bwd_s, ck0.bwd_s + 4e-5, EPS, "recompute: + 2H more: %g", ck1.bwd_s - ck0.bwd_s);
    CHECK(dp1.fwd_s == dp0.fwd_s && dp1.bwd_s == dp0.bwd_s, "no TP, no collective to dispatch");
    env.host_op_s = 0;
    tsl_cost_layer(&env, &l, &s, NULL, 4, &on);
    env.knobs.launch_blocking = false;
    tsl_cost_layer(&env, &l, &s, NULL, 4, &off);
    CHECK(on.fwd_s == off.fwd_s && on.bwd_s == off.bwd_s, "no host model (H = 0): none");
    tsl_cluster_free(&c);
}

/* ds_grad_bucket (docs/cost-model.md "DeepSpeed's gradient bucket"): DeepSpeed's ZeRO-0
 * all-reduce around the collective, P = 12,582,912 parameters in 12 .grad tensors (QKV,
 * projection, FC1, FC2, two norms; weight and bias each), DP 8, W_opt = 1 TB/s:
 *   fp16 .grad reduced in fp32 (AMP's fork): flatten 2 + 2, mul_(1/8) on the fp32 copy
 *   4 + 4, unflatten copy 2 + 2 = 16 B x P = 201.326592 us; kernels 12 copies + 12/128
 *   of the cat + the mul_ = 13.09375 x 4 us = 52.375 us: 253.701592 us beyond the casts;
 *   bf16 .grad reduced in bf16: 2 + 2, 2 + 2, 2 + 2 = 12 B x P = 150.994944 us + 52.375;
 *   the host's 12 x (1 + 1/128) = 12.09375 ops at 1 ms each (12.09375 ms) exceed the
 *   reduce and the bucket: the reduce's time is then the host's;
 *   ZeRO-1, SDP and DP 1 run no bucket. */
static void test_ds_grad_bucket(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_layer_cost_t base, r;
    tsl_layer_t l = test_layer();
    make_env(&c, &env, 1, 8);
    env.opt_mem_bw = 1e12;
    env.host_op_s = 0.0;
    double kernels = (12.0 + 12.0 / 128.0 + 1.0) * TSL_ROOFLINE_LAUNCH_S; /* 52.375 us */
    CHECK_NEAR(kernels, 52.375e-6, 1e-15, "13.09375 launches");
    tsl_strategy_t s = one(TSL_DIM_DP, 8, false);
    env.knobs.grad_reduce_bytes = 4;
    env.knobs.grad_buf_bytes = 2;
    env.knobs.grad_reduce_exposed = true; /* ReduceGrads after the flush */
    tsl_cost_layer(&env, &l, &s, NULL, 16, &base);
    env.knobs.ds_grad_bucket = true;
    tsl_cost_layer(&env, &l, &s, NULL, 16, &r);
    CHECK_NEAR(r.grad_comm_s - base.grad_comm_s, 201.326592e-6 + kernels, 1e-12,
               "fp16 .grad, fp32 reduce: 16 B/param (%g)", r.grad_comm_s - base.grad_comm_s);
    CHECK_NEAR(r.bwd_s, base.bwd_s, 1e-15, "the backward unchanged");
    CHECK_NEAR(r.fwd_s, base.fwd_s, 1e-15, "the forward unchanged");
    env.knobs.grad_reduce_bytes = env.knobs.grad_buf_bytes = 0; /* one width, 2 B */
    cost_off_on(&env, &l, &s, &env.knobs.ds_grad_bucket, &base, &r);
    CHECK_NEAR(r.grad_comm_s - base.grad_comm_s, 150.994944e-6 + kernels, 1e-12,
               "bf16 .grad, bf16 reduce: 12 B/param (%g)", r.grad_comm_s - base.grad_comm_s);
    /* the host's dispatch, 12.09375 ops at 1 ms, outlasts the reduce and its kernels */
    CHECK(base.grad_comm_s + 203e-6 < 12.09375e-3, "the reduce is shorter (%g)", base.grad_comm_s);
    env.host_op_s = 1e-3;
    tsl_cost_layer(&env, &l, &s, NULL, 16, &r);
    CHECK_NEAR(r.grad_comm_s, 12.09375e-3, 1e-12, "host-bound bucket: 12.09375 ms (%g)",
               r.grad_comm_s);
    env.host_op_s = 0.0;
    /* where DeepSpeed's engine does not run the bucket: ZeRO-1 (its optimizer's
     * reduce_gradients), SDP (ZeRO-3), DP 1 (the pipeline engine skips ReduceGrads) */
    tsl_strategy_t z1 = one(TSL_DIM_DP, 8, false), z3 = one(TSL_DIM_SDP, 8, false),
                   tp = one(TSL_DIM_TP, 8, false);
    z1.zero = 1;
    const tsl_strategy_t *none[] = {&z1, &z3, &tp};
    for (size_t i = 0; i < 3; i++) {
        env.knobs.ds_grad_bucket = false;
        tsl_cost_layer(&env, &l, none[i], NULL, 16, &base);
        env.knobs.ds_grad_bucket = true;
        tsl_cost_layer(&env, &l, none[i], NULL, 16, &r);
        CHECK(memcmp(&r, &base, sizeof(r)) == 0, "no bucket on strategy %zu", i);
    }
    tsl_cluster_free(&c);
}

/* sdp_nosync (docs/cost-model.md "SDP without resharding"): FSDP2 kept unsharded
 * between micro-batches, as torchtitan runs it under PP. SDP 8, fp32 gradients,
 * P = 12,582,912 parameters:
 *   states: the gathered bf16 weights 2 B and the whole fp32 gradient 4 B per
 *   parameter, the fp32 master and Adam's moments sharded, 12 / 8: 7.5 B/param
 *   (ZeRO-1's over 8 ranks); the gradients 4 B/param, not ÷ 8; the backward's
 *   transient loses the (2 + 4)·P·7/8 it held as ZeRO-3;
 *   time (STACK): the weight gather G leaves each micro-batch's forward and backward
 *   (comm_s two G less) and runs once, under the first forward (gather_next); the
 *   reduce-scatter leaves the other micro-batches for the last (grad_comm_s G more,
 *   the same reduce); PAPER already reduce-scatters once and keeps its gathers;
 *   without SDP nothing moves. */
static void test_sdp_nosync(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_layer_cost_t base, r;
    tsl_layer_t l = test_layer();
    make_env(&c, &env, 1, 8);
    env.mode = TSL_COST_STACK;
    env.pipelined = true; /* a stage of a pipeline of several: where FSDP2 keeps it */
    tsl_strategy_t z = one(TSL_DIM_SDP, 8, false);
    env.knobs = (tsl_cost_knobs_t){.grad_reduce_bytes = 4};
    tsl_cost_layer(&env, &l, &z, NULL, 16, &base);
    env.knobs.sdp_nosync = true;
    tsl_cost_layer(&env, &l, &z, NULL, 16, &r);
    CHECK(base.ms_bytes == 2 * P_PARAMS, "ZeRO-3: 16/8 B/param (%llu)",
          (unsigned long long)base.ms_bytes);
    CHECK(r.ms_bytes == (uint64_t)(7.5 * P_PARAMS), "kept unsharded: 2 + 4 + 12/8 B/param (%llu)",
          (unsigned long long)r.ms_bytes);
    CHECK(r.grad_bytes == 4 * P_PARAMS, "the whole fp32 gradient (%llu)",
          (unsigned long long)r.grad_bytes);
    CHECK(base.bwd_bytes - r.bwd_bytes == (uint64_t)ceil(6.0 * P_PARAMS * 7 / 8),
          "no transient gather and gradient: (2 + 4)·P·7/8 (%llu)",
          (unsigned long long)(base.bwd_bytes - r.bwd_bytes));
    double g = base.fwd_s - r.fwd_s;
    CHECK(g > 0.0, "the forward's gather is gone (%g)", g);
    CHECK_NEAR(base.comm_s - r.comm_s, 2.0 * g, 1e-15, "no gather in either pass (%g)",
               base.comm_s - r.comm_s);
    CHECK_NEAR(r.grad_comm_s - base.grad_comm_s, g, 1e-15,
               "the reduce-scatter once and the gather once per iteration (%g)",
               r.grad_comm_s - base.grad_comm_s);
    CHECK(r.bwd_s < base.bwd_s - g, "a micro-batch's backward: no gather, no reduce-scatter");
    /* the reduce-scatter R after the stage's last backward (cost model 147: torch's
     * pipelining calls FSDP2's post_backward once that backward has returned), none
     * of it under that backward's compute; beside it the last backward carries the
     * once-per-iteration gather's share of the next first forward, as before (no
     * device memory rate here: the other micro-batches' accumulation is
     * test_sdp_nosync_accum's) */
    double rs = r.grad_comm_s - g, next = tsl_cost_overlap_s(r.fwd_s, g, 1.3) - r.fwd_s;
    CHECK(rs > 0.0 && next > 0.0, "a reduce-scatter and a gather (%g, %g)", rs, next);
    CHECK_NEAR(r.bwd_sync_s - r.bwd_s, rs + next, 1e-15,
               "the last backward pays the whole reduce-scatter after its compute (%g vs %g)",
               r.bwd_sync_s - r.bwd_s, rs + next);
    /* PAPER: Galvatron's SDP, one reduce-scatter and the gathers per micro-batch; the
     * memory is the stack's */
    env.mode = TSL_COST_PAPER;
    cost_off_on(&env, &l, &z, &env.knobs.sdp_nosync, &base, &r);
    CHECK(r.fwd_s == base.fwd_s && r.bwd_s == base.bwd_s && r.bwd_sync_s == base.bwd_sync_s,
          "PAPER times unchanged");
    CHECK(r.ms_bytes == (uint64_t)(7.5 * P_PARAMS), "PAPER: the same states");
    /* no SDP level: nothing to keep */
    env.mode = TSL_COST_STACK;
    tsl_strategy_t d = one(TSL_DIM_DP, 8, false);
    cost_off_on(&env, &l, &d, &env.knobs.sdp_nosync, &base, &r);
    CHECK(memcmp(&r, &base, sizeof(r)) == 0, "DP 8: unchanged");
    /* a block that is the whole pipeline (PP 1): torchtitan's FSDP2 reshards after
     * the forward and reduce-scatters every micro-batch ("default" policy: not
     * pp_enabled), so the knob prices as ZeRO-3, times and bytes */
    env.pipelined = false;
    cost_off_on(&env, &l, &z, &env.knobs.sdp_nosync, &base, &r);
    CHECK(memcmp(&r, &base, sizeof(r)) == 0, "PP 1: as ZeRO-3 (%g vs %g s, %llu vs %llu B)",
          r.bwd_s, base.bwd_s, (unsigned long long)r.ms_bytes, (unsigned long long)base.ms_bytes);
    CHECK(r.ms_bytes == 2 * P_PARAMS, "PP 1: 16/8 B/param (%llu)", (unsigned long long)r.ms_bytes);
    tsl_cluster_free(&c);
}

/* sdp_nosync's unsharded accumulation (cost model 147; docs/cost-model.md "SDP without
 * resharding"): FSDP2 with the gradient sync off adds each later micro-batch's fresh
 * bf16 gradient into its fp32 accumulator (pytorch#125191), over the unsharded
 * parameters of the TP rank, not ÷ z: P = 12,582,912, W = 1 TB/s, (4 + 2 + 4)·P / W =
 * 125.82912 us and one kernel per parameter tensor (12 at 4 us); with a bf16 reduce
 * autograd adds into the kept .grad, (2 + 2 + 2)·P / W = 75.497472 us. Not on the
 * synchronising micro-batch; PAPER and a stage that is the whole pipeline add nothing.
 * The backward with it and the synchronising one without it differ by the
 * reduce-scatter R and the gather's share `next` as test_sdp_nosync has them, less the
 * accumulation. */
static void test_sdp_nosync_accum(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_layer_cost_t base, r;
    tsl_layer_t l = test_layer();
    make_env(&c, &env, 1, 8);
    env.mode = TSL_COST_STACK;
    env.pipelined = true;
    env.device_mem_bw = 1.25e12; /* W = 0.8 x 1.25 TB/s = 1 TB/s */
    env.host_op_s = 0.0;
    double launches = 12 * TSL_ROOFLINE_LAUNCH_S;
    tsl_strategy_t z = one(TSL_DIM_SDP, 8, false);
    const double want[2] = {125.82912e-6 + launches, 75.497472e-6 + launches};
    for (int i = 0; i < 2; i++) {
        env.knobs = (tsl_cost_knobs_t){.grad_reduce_bytes = i == 0 ? 4 : 2};
        tsl_cost_layer(&env, &l, &z, NULL, 16, &base);
        env.knobs.sdp_nosync = true;
        tsl_cost_layer(&env, &l, &z, NULL, 16, &r);
        double g = base.fwd_s - r.fwd_s, rs = r.grad_comm_s - g;
        double next = tsl_cost_overlap_s(r.fwd_s, g, 1.3) - r.fwd_s;
        double acc = rs + next - (r.bwd_sync_s - r.bwd_s);
        CHECK_NEAR(acc, want[i], 1e-12, "a later micro-batch adds %s: %g us (%g)",
                   i == 0 ? "10 B/param into fp32" : "6 B/param into bf16", want[i] * 1e6, acc);
    }
    env.mode = TSL_COST_PAPER; /* Galvatron's SDP: no accumulation priced */
    env.knobs = (tsl_cost_knobs_t){.grad_reduce_bytes = 4};
    cost_off_on(&env, &l, &z, &env.knobs.sdp_nosync, &base, &r);
    CHECK(r.bwd_s == base.bwd_s, "PAPER: unchanged (%g vs %g)", r.bwd_s, base.bwd_s);
    env.mode = TSL_COST_STACK;
    env.pipelined = false; /* PP 1: ZeRO-3, reduce-scattered every micro-batch */
    cost_off_on(&env, &l, &z, &env.knobs.sdp_nosync, &base, &r);
    CHECK(memcmp(&r, &base, sizeof(r)) == 0, "PP 1: nothing accumulated");
    tsl_cluster_free(&c);
}

/* overlap_param_gather on an SDP level: Megatron-FSDP's prefetched gathers
 * (docs/cost-model.md "Megatron-FSDP's prefetched gathers", cost model 74). One layer,
 * SDP 8 in one node, k = 1.3, 16 micro-batches, STACK: the forward's gather G, exposed
 * in ZeRO-3 (Galvatron's "directly sums up"), runs beside the compute C_f instead:
 * overlap(C_f, G) = max + 0.3·min where C_f + G was; in the backward it joins the
 * reduce-scatter R under C_b: overlap(C_b, R + G) where overlap(C_b, R) + G was.
 * PAPER, DP plans and sdp_nosync's once-per-iteration gather are unchanged. */
static void test_sdp_prefetch(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_layer_cost_t base, r;
    tsl_layer_t l = test_layer();
    make_env(&c, &env, 1, 8);
    env.mode = TSL_COST_STACK;
    tsl_strategy_t z = one(TSL_DIM_SDP, 8, false);
    env.knobs = (tsl_cost_knobs_t){.grad_reduce_bytes = 2};
    tsl_cost_layer(&env, &l, &z, NULL, 16, &base);
    env.knobs.overlap_param_gather = true;
    tsl_cost_layer(&env, &l, &z, NULL, 16, &r);
    double k = env.overlap_slowdown;
    /* the gather: the comm_s of both passes, less the layer's other communication (none
     * here: no TP), halved */
    double g = base.comm_s / 2.0;
    CHECK(g > 0.0, "ZeRO-3 gathers (%g s)", g);
    CHECK_NEAR(r.comm_s, base.comm_s, 1e-15, "the same bytes moved (%g vs %g)", r.comm_s,
               base.comm_s);
    double cf = base.fwd_s - g; /* the forward's compute alone */
    CHECK_NEAR(r.fwd_s, fmax(cf, g) + (k - 1.0) * fmin(cf, g), 1e-12,
               "forward: overlap(C_f, G) (%g, was %g)", r.fwd_s, base.fwd_s);
    CHECK(r.fwd_s < base.fwd_s, "the forward is shorter (%g < %g)", r.fwd_s, base.fwd_s);
    CHECK(r.bwd_s < base.bwd_s && r.bwd_sync_s < base.bwd_sync_s,
          "the backward's gather under its compute (%g < %g)", r.bwd_s, base.bwd_s);
    CHECK(r.bwd_s > base.bwd_s - g, "not free: the contention k stays (%g)", base.bwd_s - r.bwd_s);
    CHECK(r.grad_comm_s == base.grad_comm_s && r.ms_bytes == base.ms_bytes &&
              r.bwd_bytes == base.bwd_bytes,
          "the reduce-scatter and the bytes unchanged");
    /* PAPER: Galvatron's exposed gathers; DP 8 without ZeRO: no gather to prefetch */
    check_paper_dp8_inert(&env, &l, &z, &env.knobs.overlap_param_gather, "overlap_param_gather");
    /* sdp_nosync under PP gathers once per iteration (gather_next): nothing to move */
    env.pipelined = true;
    env.knobs = (tsl_cost_knobs_t){.grad_reduce_bytes = 4, .sdp_nosync = true};
    tsl_cost_layer(&env, &l, &z, NULL, 16, &base);
    env.knobs.overlap_param_gather = true;
    tsl_cost_layer(&env, &l, &z, NULL, 16, &r);
    CHECK(r.fwd_s == base.fwd_s && r.bwd_s == base.bwd_s, "sdp_nosync: unchanged");
    tsl_cluster_free(&c);
}

/* The forward of a layer that is its own fairscale root (sdp_roots.h), by hand: unit
 * i's gather back to back on the gather stream, its compute once its gather and the
 * previous unit's compute are done, slowed by (k - 1) x the time both run. */
static void test_sdp_root_chain(void)
{
    const double g2[] = {1.0, 2.0}, c2[] = {3.0, 1.0};
    CHECK_NEAR(tsl_sdp_root_fwd_s(g2, c2, 2, 1.0), 5.0, 1e-12, "g0 + max(c0, g1) + c1 = 5");
    CHECK_NEAR(tsl_sdp_root_fwd_s(g2, c2, 2, 1.3), 5.6, 1e-12, "+ 0.3 x min(c0, g1) = 5.6");
    const double g3[] = {1.0, 1.0, 1.0}, c3[] = {0.5, 0.5, 3.0};
    CHECK_NEAR(tsl_sdp_root_fwd_s(g3, c3, 3, 1.0), 6.0, 1e-12,
               "three units: the gathers lead, the MLP starts at 3 (6)");
    const double g1[] = {2.0}, c1[] = {3.0};
    CHECK_NEAR(tsl_sdp_root_fwd_s(g1, c1, 1, 1.3), 5.0, 1e-12, "one unit: its gather exposed");
}

/* fwd_s of a unit by its forward FLOPs: enough to split test layers by (the cost layer
 * passes the roofline's time). */
static double unit_flops(const tsl_layer_t *l, void *ctx)
{
    (void)ctx;
    return l->fwd_flops;
}

/* The units fairscale gathers under Galvatron's wrapping: an encoder's attention and
 * MLP, a decoder's self-attention, cross-attention and MLP, each share of the weights
 * its parameters', the shares summing to 1; a layer without parts one unit. */
static void test_sdp_root_units(void)
{
    tsl_err_t err;
    tsl_layer_t e = gpt2_medium(512);
    CHECK(tsl_layer_derive(&e, &err) == 0, "encoder derived");
    tsl_sdp_units_t u;
    tsl_sdp_root_units(&e, unit_flops, NULL, &u);
    CHECK(u.n == 2, "encoder: 2 units (%u)", u.n);
    /* the MLP: 2 x h x f weights, f + h biases, its norm's 2 x h; the attention the
     * rest (~1/3) */
    CHECK_NEAR(u.w[1], (2.0 * 1024 * 4096 + 4096 + 1024 + 2048) / (double)e.params, 1e-12,
               "the MLP's share of the weights (%g)", u.w[1]);
    CHECK(u.w[0] > 0.3 && u.w[0] < 0.35, "the attention's ~1/3 (%g)", u.w[0]);
    CHECK_NEAR(u.w[0] + u.w[1], 1.0, 1e-12, "weights sum to 1");
    CHECK_NEAR(u.c[0] + u.c[1], 1.0, 1e-12, "compute sums to 1");
    tsl_layer_t d = e;
    d.kind = TSL_LAYER_DECODER;
    d.cross_seq_len = 512;
    CHECK(tsl_layer_derive(&d, &err) == 0, "decoder derived");
    tsl_sdp_root_units(&d, unit_flops, NULL, &u);
    CHECK(u.n == 3, "decoder: 3 units (%u)", u.n);
    CHECK(u.w[1] > 0.2 && u.w[0] > 0.2 && u.w[2] > 0.45, "self, cross ~1/4 each, MLP ~1/2");
    CHECK_NEAR(u.w[0] + u.w[1] + u.w[2], 1.0, 1e-12, "decoder weights sum to 1");
    tsl_layer_t h = {.kind = TSL_LAYER_HEAD, .seq_len = 512, .hidden = 1024, .vocab = 1000};
    CHECK(tsl_layer_derive(&h, &err) == 0, "head derived");
    tsl_sdp_root_units(&h, unit_flops, NULL, &u);
    CHECK(u.n == 1 && u.w[0] == 1.0 && u.c[0] == 1.0, "a head: one unit");
}

/* sdp_layer_roots (docs/cost-model.md "FSDP with a root per layer", cost model 81): one
 * layer at SDP 8 in one node, 16 micro-batches, STACK. What it hides: the MLP unit's
 * gather (the layer's gather G less the attention's share w_a·G) runs under the
 * attention's compute, so the forward is shorter than C_f + G but no shorter than
 * C_f + w_a·G, the attention's gather being exposed; the backward prices as
 * Megatron-FSDP's prefetched gathers (overlap(C_b, R + G)). What it exposes: the
 * first unit's gather, which overlap_param_gather hides. PAPER, DP and sdp_nosync
 * plans are unchanged. */
static void test_sdp_layer_roots(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_layer_cost_t base, r, pre;
    tsl_layer_t l = test_layer();
    make_env(&c, &env, 1, 8);
    env.mode = TSL_COST_STACK;
    tsl_strategy_t z = one(TSL_DIM_SDP, 8, false);
    env.knobs = (tsl_cost_knobs_t){.grad_reduce_bytes = 2};
    cost_off_on(&env, &l, &z, &env.knobs.sdp_layer_roots, &base, &r);
    env.knobs = (tsl_cost_knobs_t){.grad_reduce_bytes = 2, .overlap_param_gather = true};
    tsl_cost_layer(&env, &l, &z, NULL, 16, &pre);
    double g = base.comm_s / 2.0, cf = base.fwd_s - g;
    tsl_sdp_units_t u;
    tsl_sdp_root_units(&l, unit_flops, NULL, &u);
    CHECK(u.n == 2 && g > 0.0, "two units, a gather (%g s)", g);
    CHECK(r.fwd_s < base.fwd_s - 1e-9, "the MLP's gather under the attention (%g < %g)", r.fwd_s,
          base.fwd_s);
    CHECK(r.fwd_s >= cf + u.w[0] * g - 1e-12, "the attention's gather exposed (%g >= %g)", r.fwd_s,
          cf + u.w[0] * g);
    CHECK(r.fwd_s > pre.fwd_s, "more exposed than Megatron-FSDP's prefetch (%g > %g)", r.fwd_s,
          pre.fwd_s);
    CHECK(r.bwd_s == pre.bwd_s && r.bwd_sync_s == pre.bwd_sync_s,
          "the backward's gathers prefetched beside the reduce-scatter (%g vs %g)", r.bwd_s,
          pre.bwd_s);
    CHECK(r.bwd_s < base.bwd_s, "shorter than the exposed re-gather (%g < %g)", r.bwd_s,
          base.bwd_s);
    CHECK_NEAR(r.comm_s, base.comm_s, 1e-15, "the same bytes moved");
    CHECK(r.ms_bytes == base.ms_bytes && r.grad_comm_s == base.grad_comm_s,
          "states and the reduce-scatter unchanged");
    env.knobs = (tsl_cost_knobs_t){.grad_reduce_bytes = 2};
    check_paper_dp8_inert(&env, &l, &z, &env.knobs.sdp_layer_roots, "sdp_layer_roots");
    env.pipelined = true;
    env.knobs = (tsl_cost_knobs_t){.grad_reduce_bytes = 4, .sdp_nosync = true};
    cost_off_on(&env, &l, &z, &env.knobs.sdp_layer_roots, &base, &r);
    CHECK(memcmp(&r, &base, sizeof(r)) == 0, "sdp_nosync: unchanged");
    tsl_cluster_free(&c);
}

/* sdp_keep_weights (docs/cost-model.md "FSDP's SHARD_GRAD_OP", cost model 117): one layer
 * at SDP 8 in one node, STACK, 16-bit weights and gradients. torch FSDP1's SHARD_GRAD_OP
 * gathers a unit's weights in its forward and keeps them to its backward: the forward as
 * without the knob, the backward shorter by the re-gather G (base.comm_s / 2: one gather
 * each way without it), the reduce-scatter unchanged; the gathered weights beyond the
 * shard, 2·p·(z − 1)/z bytes, move from the backward's transient into the states held at
 * the stage's peak. A DP plan and an sdp_nosync stage are unchanged. */
static void test_sdp_keep_weights(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_layer_cost_t base, k;
    tsl_layer_t l = test_layer();
    make_env(&c, &env, 1, 8);
    env.mode = TSL_COST_STACK;
    tsl_strategy_t z = one(TSL_DIM_SDP, 8, false);
    env.knobs = (tsl_cost_knobs_t){.grad_reduce_bytes = 2};
    cost_off_on(&env, &l, &z, &env.knobs.sdp_keep_weights, &base, &k);
    double g = base.comm_s / 2.0, held = 2.0 * (double)l.params * 7.0 / 8.0;
    CHECK(g > 0.0, "a gather (%g s)", g);
    CHECK(k.fwd_s == base.fwd_s, "the forward's gather as without it (%g vs %g)", k.fwd_s,
          base.fwd_s);
    CHECK_NEAR(k.bwd_s, base.bwd_s - g, 1e-12, "no re-gather in the backward (%g vs %g)", k.bwd_s,
               base.bwd_s - g);
    CHECK_NEAR(k.bwd_sync_s, base.bwd_sync_s - g, 1e-12, "nor in the last micro-batch's");
    CHECK_NEAR(k.comm_s, g, 1e-15, "one gather moved (%g s)", k.comm_s);
    CHECK(k.grad_comm_s == base.grad_comm_s, "the reduce-scatter every micro-batch, unchanged");
    CHECK_NEAR((double)k.ms_bytes - (double)base.ms_bytes, held, 2.0,
               "the gathered weights held as states (%g B)",
               (double)k.ms_bytes - (double)base.ms_bytes);
    CHECK_NEAR((double)base.bwd_bytes - (double)k.bwd_bytes, held, 2.0,
               "and out of the backward's transient");
    CHECK(k.grad_bytes == base.grad_bytes, "the gradients still sharded");
    tsl_strategy_t d = one(TSL_DIM_DP, 8, false);
    cost_off_on(&env, &l, &d, &env.knobs.sdp_keep_weights, &base, &k);
    CHECK(memcmp(&k, &base, sizeof(k)) == 0, "DP 8: unchanged");
    env.pipelined = true;
    env.knobs = (tsl_cost_knobs_t){.grad_reduce_bytes = 4, .sdp_nosync = true};
    cost_off_on(&env, &l, &z, &env.knobs.sdp_keep_weights, &base, &k);
    CHECK(memcmp(&k, &base, sizeof(k)) == 0, "sdp_nosync: unchanged");
    tsl_cluster_free(&c);
}

/* ds_zero3_v03 (docs/cost-model.md "DeepSpeed 0.3's ZeRO-3", cost model 146): the test
 * block (h 1024: norms 2 × (1024, 1024), QKV 3h² + 3h, projection h² + h, FC1 4h² + 4h,
 * FC2 4h² + h) at SDP 8 in one node, STACK, fp16 gradients, W = 1 TB/s. With A(x) the SDP group's
 * all-gather of x bytes as NCCL runs it (α + x / bw), W the sustained memory rate, L the
 * kernel floor, each weight w of e ≥ 1e5 elements is gathered alone,
 *   g(e) = A(2e) + 6e / W + (8 + 2)·L   (zero-fill, shard in, 8 slices copied out)
 * and every tensor reduced alone, r(e) = A(2e) + 8e / W + (8 + 1)·L (the division, 8
 * slices copied in). The forward pays Σ g for the 4 weights where the level's one gather
 * A(2P) was; a full recompute gathers QKV, the projection and FC1 once more (FC2, the
 * last, is kept); the reduces leave the backward's overlap for its exposed time (the
 * grad_comm_s figure keeps no reduce); after the step the 8 small tensors are gathered
 * again, A(2·Σ) + 8·Σ / W + (8 + 1) · 8·L (the 8 slices copied out, then a copy per
 * tensor and rank). PAPER, DP 8 and DP 2 × SDP 4 are unchanged. */
static void test_ds_zero3_v03(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_layer_cost_t base, r, base_ck, r_ck;
    tsl_layer_t l = test_layer();
    make_env(&c, &env, 1, 8);
    env.mode = TSL_COST_STACK;
    env.knobs = (tsl_cost_knobs_t){.grad_reduce_bytes = 2};
    env.opt_mem_bw = 1e12; /* W = 1 TB/s */
    tsl_strategy_t z = one(TSL_DIM_SDP, 8, false), zc = one(TSL_DIM_SDP, 8, true);
    tsl_strategy_bw_t bw;
    tsl_cost_strategy_bw(&env, &z, &bw);
    CHECK(bw.sdp_lat.n > 1, "the SDP group is priced with NCCL's α");
    const double h = HID, W = env.opt_mem_bw, L = TSL_ROOFLINE_LAUNCH_S;
    const double w[4] = {3 * h * h, h * h, 4 * h * h, 4 * h * h}; /* QKV, proj, FC1, FC2 */
    const double small[8] = {h, h, h, h, 3 * h, h, 4 * h, h};     /* norms and biases */
#define AG(x) tsl_cluster_coll_allgather_s(&bw.sdp_lat, (x), 8, bw.sdp_bw, NULL)
    double gf = 0.0, red = 0.0, third = 0.0, ps = 0.0;
    for (int i = 0; i < 4; i++) {
        double g = AG(2.0 * w[i]) + 6.0 * w[i] / W + 10.0 * L;
        gf += g;
        third += i < 3 ? g : 0.0;
        red += AG(2.0 * w[i]) + 8.0 * w[i] / W + 9.0 * L;
    }
    for (int i = 0; i < 8; i++) {
        red += AG(2.0 * small[i]) + 8.0 * small[i] / W + 9.0 * L;
        ps += small[i];
    }
    double one_gather = AG(2.0 * P_PARAMS);
    CHECK(W > 0 && gf > one_gather, "per-weight gathers cost more than one (%g vs %g)", gf,
          one_gather);
    cost_off_on(&env, &l, &z, &env.knobs.ds_zero3_v03, &base, &r);
    CHECK_NEAR(r.fwd_s - base.fwd_s, gf - one_gather, 1e-12,
               "the forward: a gather per weight with its kernels (%g vs %g)", r.fwd_s - base.fwd_s,
               gf - one_gather);
    CHECK_NEAR(r.opt_s - base.opt_s, AG(2.0 * ps) + 8.0 * ps / W + 72.0 * L, 1e-12,
               "the small tensors gathered after the step (%g)", r.opt_s - base.opt_s);
    CHECK(r.grad_comm_s == 0.0 && base.grad_comm_s > 0.0,
          "no reduce under the backward (%g; the level's %g)", r.grad_comm_s, base.grad_comm_s);
    /* the backward: the gathers and every reduce exposed, where the level's one gather
     * was exposed and its one reduce-scatter R = A(2P) ran under the compute */
    double d = r.bwd_s - base.bwd_s;
    CHECK(d <= gf + red - one_gather + 1e-12 && d >= gf + red - 2.0 * one_gather - 1e-12,
          "the backward's gathers and reduces exposed (%g in [%g, %g])", d,
          gf + red - 2.0 * one_gather, gf + red - one_gather);
    CHECK_NEAR(r.bwd_sync_s - r.bwd_s, 0.0, 1e-12, "the last micro-batch's backward alike");
    /* a full recompute: QKV, the projection and FC1 gathered a third time */
    cost_off_on(&env, &l, &zc, &env.knobs.ds_zero3_v03, &base_ck, &r_ck);
    CHECK_NEAR((r_ck.bwd_s - r.bwd_s) - (base_ck.bwd_s - base.bwd_s), third, 1e-12,
               "the recompute's gathers, FC2 kept (%g vs %g)",
               (r_ck.bwd_s - r.bwd_s) - (base_ck.bwd_s - base.bwd_s), third);
    CHECK(r.ms_bytes == base.ms_bytes && r.grad_bytes == base.grad_bytes &&
              r.bwd_bytes == base.bwd_bytes,
          "memory as ZeRO-3's");
    check_paper_dp8_inert(&env, &l, &zc, &env.knobs.ds_zero3_v03, "ds_zero3_v03");
    tsl_dim_t dims[] = {TSL_DIM_SDP, TSL_DIM_DP};
    uint32_t degs[] = {4, 2};
    tsl_strategy_t mix = strat(2, dims, degs, true);
    cost_off_on(&env, &l, &mix, &env.knobs.ds_zero3_v03, &base, &r);
    CHECK(memcmp(&r, &base, sizeof(r)) == 0, "DP 2 x SDP 4: unchanged");
#undef AG
    tsl_cluster_free(&c);
}

/* ds_bf16_optimizer (docs/cost-model.md "DeepSpeed's BF16_Optimizer"), by hand on one
 * layer of P = 12,582,912 parameters, DP 8 under ZeRO-1 in one node (100 GB/s), an
 * fp32 buffer (grad_reduce_bytes 4), W = 1 TB/s:
 *  - the accumulation casts the fresh bf16 gradient (2 + 4 B) before the add (4 + 4 +
 *    4): 18 B where the unfused add costs 10, 8 x P / W = 100.663296 us more per
 *    micro-batch, with or without unfused_grad_accum (implied);
 *  - the DP sync all-reduces the fp32 buffer where ZeRO-1 reduce-scatters: the
 *    reduce-scatter's 7/8 x 4P / 100 GB/s = 440.401920 us again;
 *  - the tied gradient summed at 4 bytes: twice the 2-byte sum;
 *  - the states keep each backward's bf16 .grad beside the buffer: 2 B x P more, on
 *    every DP rank (cost model 65);
 *  - the buffer reduced in bf16 (grad_buf_bytes 4, grad_reduce_bytes 2: DeepSpeed's
 *    bf16 communication_data_type): the all-reduce moves half, 2 x 7/8 x 2P / 100 GB/s =
 *    440.401920 us less, and the casts around it cost 2 x (4 + 2) B x P / W_opt (1 TB/s)
 *    = 150.994944 us and two launches; the states, the accumulation unchanged. */
/* DeepSpeed's BF16_Optimizer as today's engine runs it under target deepspeed (cost model
 * 95, knobs.ds_bf16_zero0): bf16 at ZeRO-0 under a PipelineModule. By hand on the layer of
 * test_ds_bf16_optimizer (P = 12,582,912, DP 8, W = 1 TB/s):
 *  - only on a stage of a pipeline of several, DP > 1, ZeRO-0, bf16: priced there exactly
 *    as ds_bf16_optimizer, elsewhere exactly as without (ZeRO-1: DeepSpeed's ZeRO
 *    optimizer; no stages: DDP_BFLOAT16; fp16: FP16_Optimizer);
 *  - its buffer is the model's bf16 (grad_accum_dtype unset): lp.grad.to(bf16) is the
 *    tensor itself, no cast: the add alone, 3 x 2 B, where the unfused AccumulateGrad
 *    add costs 2 x 2 + 2, the same 6 B (so ds_bf16_optimizer alone, 56c522386's
 *    engine, leaves the backward as it was); today's engine zeroes the kept .grad
 *    (2 B written) and AccumulateGrad adds the fresh one into it (2 + 2 read, 2
 *    written): 8 x P / W = 100.663296 us more per micro-batch;
 *  - the states: 2 (weights) + 2 (.grad) + 2 (buffer) + 12/8, where ZeRO-0 keeps
 *    2 + 2 + 12: 8.5 x P less. */
static void test_ds_bf16_zero0(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_layer_cost_t plain, zero0, explicit_opt;
    tsl_layer_t l = test_layer();
    make_env(&c, &env, 1, 8);
    env.device_mem_bw = 1.25e12;
    env.host_op_s = 0.0;
    env.knobs.unfused_grad_accum = true;
    env.pipelined = true;
    tsl_strategy_t z0 = one(TSL_DIM_DP, 8, false), z1 = z0;
    z1.zero = 1;
    tsl_cost_layer(&env, &l, &z0, NULL, 16, &plain);
    env.knobs.ds_bf16_zero0 = true;
    tsl_cost_layer(&env, &l, &z0, NULL, 16, &zero0);
    env.knobs.ds_bf16_zero0 = false;
    env.knobs.ds_bf16_optimizer = true;
    tsl_cost_layer(&env, &l, &z0, NULL, 16, &explicit_opt);
    CHECK(zero0.ms_bytes == explicit_opt.ms_bytes && zero0.fwd_s == explicit_opt.fwd_s &&
              zero0.grad_comm_s == explicit_opt.grad_comm_s,
          "priced as ds_bf16_optimizer: its states, forward and reduce");
    CHECK_NEAR(explicit_opt.bwd_s, plain.bwd_s, 1e-15, "a bf16 buffer: no cast, the same 6 B");
    CHECK_NEAR(zero0.bwd_s - plain.bwd_s, 8.0 * P_PARAMS / 1e12, 1e-12,
               "the .grad zeroed and added into: 8 B more (%g)", zero0.bwd_s - plain.bwd_s);
    CHECK(plain.ms_bytes - zero0.ms_bytes == (uint64_t)(8.5 * P_PARAMS),
          "states 2 + 2 + 2 + 12/8 for 2 + 2 + 12 (%llu, %llu)", (unsigned long long)zero0.ms_bytes,
          (unsigned long long)plain.ms_bytes);
    CHECK(zero0.grad_comm_s > plain.grad_comm_s, "the weights all-gathered after the step");
    env.knobs.ds_bf16_optimizer = false;
    env.knobs.ds_bf16_zero0 = true;
    tsl_layer_cost_t other, want;
    struct {
        const char *what;
        bool pipelined, fp16;
        const tsl_strategy_t *s;
    } off[] = {{"no stages", false, false, &z0},
               {"ZeRO-1: DeepSpeed's ZeRO optimizer", true, false, &z1},
               {"fp16: FP16_Optimizer", true, true, &z0}};
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
        env.pipelined = off[i].pipelined;
        env.knobs.fp16 = off[i].fp16;
        env.knobs.ds_bf16_zero0 = true;
        tsl_cost_layer(&env, &l, off[i].s, NULL, 16, &other);
        env.knobs.ds_bf16_zero0 = false;
        tsl_cost_layer(&env, &l, off[i].s, NULL, 16, &want);
        CHECK(memcmp(&other, &want, sizeof(want)) == 0, "%s: as without it", off[i].what);
    }
    CHECK(!tsl_cost_ds_bf16_zero0_runs(&env.knobs, &z0, true), "the knob off: never");
    env.knobs.ds_bf16_zero0 = true;
    env.knobs.fp16 = false;
    CHECK(tsl_cost_ds_bf16_zero0_runs(&env.knobs, &z0, true) &&
              !tsl_cost_ds_bf16_zero0_runs(&env.knobs, &z0, false),
          "ZeRO-0 DP 8: under stages only");
    tsl_strategy_t dp1 = one(TSL_DIM_TP, 8, false);
    CHECK(!tsl_cost_ds_bf16_zero0_runs(&env.knobs, &dp1, true), "one DP rank: exported at ZeRO-1");
    tsl_cluster_free(&c);
}

static void test_ds_bf16_optimizer(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_layer_cost_t base, r, implied;
    tsl_layer_t l = test_layer();
    make_env(&c, &env, 1, 8);
    env.device_mem_bw = 1.25e12; /* W = 0.8 x 1.25 TB/s = 1 TB/s */
    env.host_op_s = 0.0;
    tsl_strategy_t s = one(TSL_DIM_DP, 8, false);
    s.zero = 1;
    env.knobs.grad_reduce_bytes = 4;
    env.knobs.unfused_grad_accum = true;
    tsl_cost_layer(&env, &l, &s, NULL, 16, &base);
    env.knobs.ds_bf16_optimizer = true;
    tsl_cost_layer(&env, &l, &s, NULL, 16, &r);
    CHECK_NEAR(r.bwd_s - base.bwd_s, 8.0 * P_PARAMS / 1e12, 1e-12,
               "cast before the add: 18 B/param for 10 (%g)", r.bwd_s - base.bwd_s);
    CHECK_NEAR(r.grad_comm_s - base.grad_comm_s, 7.0 / 8 * 4.0 * P_PARAMS / (100 * GB), 1e-12,
               "the fp32 buffer all-reduced, not reduce-scattered (%g)",
               r.grad_comm_s - base.grad_comm_s);
    CHECK_NEAR(r.fwd_s, base.fwd_s, 1e-15, "the forward unchanged");
    CHECK(r.ms_bytes == base.ms_bytes + 2 * P_PARAMS,
          "the states: ZeRO-1's and the bf16 .grad, 2 B/param (%llu over %llu)",
          (unsigned long long)r.ms_bytes, (unsigned long long)base.ms_bytes);
    CHECK(r.grad_bytes == base.grad_bytes, "the gradient buffer's part unchanged");
    env.knobs.unfused_grad_accum = false; /* the optimizer's own kernels: implied */
    tsl_cost_layer(&env, &l, &s, NULL, 16, &implied);
    CHECK(memcmp(&implied, &r, sizeof(r)) == 0, "unfused_grad_accum implied");
    { /* the fp32 buffer reduced in bf16, cast before and after */
        tsl_layer_cost_t bf16_reduce;
        double opt_bw = env.opt_mem_bw;
        env.opt_mem_bw = 1e12;
        tsl_cost_layer(&env, &l, &s, NULL, 16, &r);
        env.knobs.grad_reduce_bytes = 2;
        env.knobs.grad_buf_bytes = 4;
        tsl_cost_layer(&env, &l, &s, NULL, 16, &bf16_reduce);
        double casts = 12.0 * P_PARAMS / 1e12 + 2 * TSL_ROOFLINE_LAUNCH_S;
        CHECK_NEAR(r.grad_comm_s - bf16_reduce.grad_comm_s,
                   7.0 / 8 * 4.0 * P_PARAMS / (100 * GB) - casts, 1e-12,
                   "bf16 on the wire, the casts around it (%g)",
                   r.grad_comm_s - bf16_reduce.grad_comm_s);
        CHECK(bf16_reduce.ms_bytes == r.ms_bytes, "the states keep the fp32 buffer");
        CHECK_NEAR(bf16_reduce.bwd_s, r.bwd_s, 1e-15, "the accumulation into fp32 unchanged");
        env.knobs.grad_buf_bytes = 0;
        env.knobs.grad_reduce_bytes = 4;
        env.opt_mem_bw = opt_bw;
    }
    /* at ZeRO-0 its own ZeRO-1 (bf16_optimizer.py partitions the fp32 master and moments
     * over DP whatever the config's stage): priced as the ZeRO-1 plan with it (cost
     * model 95; was ZeRO-0's unsharded states) */
    tsl_strategy_t z0 = one(TSL_DIM_DP, 8, false);
    env.knobs.unfused_grad_accum = true;
    tsl_cost_layer(&env, &l, &z0, NULL, 16, &r);
    tsl_cost_layer(&env, &l, &s, NULL, 16, &implied);
    CHECK(memcmp(&implied, &r, sizeof(r)) == 0, "ZeRO-0 with it: as ZeRO-1 with it");
    env.knobs.ds_bf16_optimizer = false;
    tsl_cost_layer(&env, &l, &z0, NULL, 16, &base);
    CHECK(r.ms_bytes < base.ms_bytes, "the master and moments sharded over DP 8");
    tsl_cluster_free(&c);

    tsl_layer_t h = {
        .kind = TSL_LAYER_HEAD, .seq_len = 128, .hidden = 1024, .vocab = 50257, .tied_head = true};
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&h, &err) == 0, "%s", err.msg);
    make_env(&c, &env, 2, 2);
    tsl_strategy_t tp2 = one(TSL_DIM_TP, 2, false);
    CHECK_NEAR(tsl_cost_tied_allreduce_elem_s(&c, &h, &tp2, 0, 2, 2, 4.0),
               2.0 * tsl_cost_tied_allreduce_elem_s(&c, &h, &tp2, 0, 2, 2, 2.0), EPS,
               "the tied gradient in fp32: twice the bytes");
    env.knobs.grad_reduce_bytes = 4;
    CHECK(tsl_cost_grad_elem_bytes(&env.knobs) == 4.0, "the buffer's bytes");
    tsl_cluster_free(&c);
}

/* fp32 training (knobs.fp32, docs/cost-model.md "fp32 training"), by hand on the test
 * layer (P = 12,582,912 parameters, F = 4 GFLOP per sample; FLOP count only: no
 * memory bandwidth) on a GPU whose fp32 peak is 10 TFLOP/s (no TF32): X32 = 10e12 x 0.5
 * = 5e12 FLOP/s, PAPER mode over 100 GB/s in one node:
 *  - TP 8, 16 samples: compute F x 16 / (8 x X32) = 1.6 ms, and its two all-reduces of
 *    4 x s x h x 16 bytes = 8 MiB each (2 x 7/8 x 8388608 / 100 GB/s = 146.800640 us);
 *  - SDP 8: the weight all-gather at 4 bytes, 7/8 x 4P / 100 GB/s = 440.401920 us; the
 *    states 16 B x P / 8; the backward's gathered weights and unsharded gradients
 *    (4 + 4) x P x 7/8;
 *  - DP 8: the gradients all-reduced at 4 bytes; states 16 B x P where a 16-bit plan
 *    with fp32 gradients keeps 2 + 4 + 12 = 18;
 *  - with a TF32 peak of 40 TFLOP/s the GEMMs run at it (2e13);
 *  - the layer's activations at 4 bytes (model.c): the stash of a BERT-style encoder
 *    (s 128, h 1024, f 4096, 16 heads, unfused, dropout): replicated 2 x (8 + 1) x s x h
 *    (norm and GEMM inputs at 4, the 1-byte masks kept), sharded 16 s h + 8 s f +
 *    9 a s^2 (softmax 4, mask 1, dropped 4), the boundary 4 s h;
 *  - the roofline's memory-bound bytes twice the 16-bit count. */
static void test_fp32(void)
{
    tsl_gpu_spec_t gpu = test_gpu;
    gpu.fp32_peak_flops = 10e12;
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_homogeneous(&c, 1, 8, &gpu, 10 * GB, &err) == 0, "%s", err.msg);
    c.overlap_slowdown = 1.3;
    CHECK(tsl_cost_env_init(&env, &c, 0, 8, &err) == 0, "%s", err.msg);
    env.mode = TSL_COST_PAPER;
    CHECK_NEAR(env.device_fp32_flops, 5e12, 1.0, "X32 = fp32 peak x e_max (%g)",
               env.device_fp32_flops);
    env.knobs.fp32 = true;
    tsl_layer_t l = test_layer();
    tsl_layer_cost_t r, b16;

    tsl_strategy_t tp = one(TSL_DIM_TP, 8, false);
    tsl_cost_layer(&env, &l, &tp, NULL, 16, &r);
    double ar = 2.0 * 7 / 8 * (4.0 * SEQ * HID * 16) / (100 * GB);
    CHECK_NEAR(r.fwd_s, F_FLOPS * 16 / (8 * 5e12) + 2 * ar, 1e-12,
               "TP 8: fp32 rate, 4-byte ARs (%g)", r.fwd_s);

    tsl_strategy_t sdp = one(TSL_DIM_SDP, 8, false);
    tsl_cost_layer(&env, &l, &sdp, NULL, 16, &r);
    double ag = 7.0 / 8 * 4.0 * P_PARAMS / (100 * GB);
    CHECK_NEAR(r.fwd_s, F_FLOPS * 2 / 5e12 + ag, 1e-12, "SDP 8: the gather at 4 B (%g)", r.fwd_s);
    CHECK(r.ms_bytes == 16ull * P_PARAMS / 8, "SDP states 16 B / 8 (%llu)",
          (unsigned long long)r.ms_bytes);
    CHECK(r.bwd_bytes == (uint64_t)ceil(8.0 * P_PARAMS * 7 / 8), "SDP transient 4 + 4 (%llu)",
          (unsigned long long)r.bwd_bytes);

    tsl_strategy_t dp = one(TSL_DIM_DP, 8, false);
    tsl_cost_layer(&env, &l, &dp, NULL, 16, &r);
    CHECK(r.ms_bytes == 16ull * P_PARAMS, "DP states 16 B (%llu)", (unsigned long long)r.ms_bytes);
    CHECK_NEAR(r.grad_comm_s, 2.0 * 7 / 8 * 4.0 * P_PARAMS / (100 * GB), 1e-12,
               "DP: 4-byte gradients (%g)", r.grad_comm_s);
    env.knobs.fp32 = false;
    env.knobs.grad_reduce_bytes = 4;
    tsl_cost_layer(&env, &l, &dp, NULL, 16, &b16);
    CHECK(b16.ms_bytes == 18ull * P_PARAMS, "16-bit with fp32 gradients: 18 B");
    CHECK_NEAR(b16.grad_comm_s, r.grad_comm_s, 1e-15, "the same reduce");
    CHECK_NEAR(r.fwd_s, 10.0 * b16.fwd_s, 1e-12, "the fp32 rate: a tenth of the bf16 one");
    tsl_cluster_free(&c);

    gpu.tf32_peak_flops = 40e12; /* TF32 where the GPU has it */
    CHECK(tsl_cluster_homogeneous(&c, 1, 8, &gpu, 10 * GB, &err) == 0, "%s", err.msg);
    CHECK(tsl_cost_env_init(&env, &c, 0, 8, &err) == 0, "%s", err.msg);
    CHECK_NEAR(env.device_fp32_flops, 2e13, 1.0, "TF32 peak x e_max");
    /* cost model 69: a stack's fp32 matmuls without TF32 (knobs.tf32_off, its target's):
     * the fp32 peak's rate, a quarter of TF32's here; without fp32 the knob changes nothing */
    CHECK_NEAR(env.device_fp32_fma_flops, 5e12, 1.0, "TF32 off: fp32 peak x e_max");
    {
        tsl_layer_cost_t tf32, fma, bf16, bf16off;
        env.mode = TSL_COST_PAPER;
        env.knobs = (tsl_cost_knobs_t){.fp32 = true};
        tsl_cost_layer(&env, &l, &tp, NULL, 16, &tf32);
        env.knobs.tf32_off = true;
        tsl_cost_layer(&env, &l, &tp, NULL, 16, &fma);
        CHECK_NEAR(fma.fwd_s - tf32.fwd_s, F_FLOPS * 16 / 8 * (1 / 5e12 - 1 / 2e13), 1e-12,
                   "TF32 off: the GEMMs at the fp32 rate (%g, %g)", fma.fwd_s, tf32.fwd_s);
        env.knobs = (tsl_cost_knobs_t){0};
        tsl_cost_layer(&env, &l, &tp, NULL, 16, &bf16);
        env.knobs.tf32_off = true;
        tsl_cost_layer(&env, &l, &tp, NULL, 16, &bf16off);
        CHECK(bf16.fwd_s == bf16off.fwd_s && bf16.bwd_s == bf16off.bwd_s,
              "TF32 off without fp32: the bf16 step unchanged");
        env.knobs = (tsl_cost_knobs_t){0};
    }
    tsl_cluster_free(&c);
    gpu.tf32_peak_flops = gpu.fp32_peak_flops = 0.0; /* no figure: refused (search.c) */
    CHECK(tsl_gpu_fp32_peak(&gpu) == 0.0, "no figure");
    CHECK(tsl_gpu_fp32_peak(tsl_gpu_find("RTX-TITAN-24G")) == 16.3e12, "TITAN RTX: fp32");
    CHECK(tsl_gpu_fp32_peak(tsl_gpu_find("A100-40G")) == 156e12, "A100: TF32");
    CHECK(tsl_gpu_fp32_peak_as(tsl_gpu_find("A100-40G"), true) == 19.5e12 &&
              tsl_gpu_fp32_peak_as(tsl_gpu_find("A100-40G"), false) == 156e12,
          "A100 TF32 off: fp32");
    /* TF32 prices nothing where no GPU of the cluster has it (tsl_cluster_tf32_moot):
     * V100s and TITAN RTXs; an A100 among them does */
    {
        static const struct {
            const char *spec;
            bool moot;
        } moot[] = {{"8xV100-32G", true},
                    {"2x8xRTX-TITAN-24G", true},
                    {"8xA100-80G", false},
                    {"8xH100-80G", false}};
        for (size_t i = 0; i < sizeof moot / sizeof moot[0]; i++) {
            tsl_cluster_t cm;
            CHECK(tsl_cluster_parse_spec(&cm, moot[i].spec, NULL) == 0 &&
                      tsl_cluster_tf32_moot(&cm) == moot[i].moot,
                  "%s: TF32 moot %d", moot[i].spec, moot[i].moot);
            if (moot[i].moot) { /* and a TF32 node beside them is not */
                uint32_t idx = 0;
                CHECK(tsl_cluster_add_gpu_type(&cm, tsl_gpu_find("A100-80G"), &idx, NULL) == 0,
                      "add A100");
                cm.nodes[0].gpu_type = idx; /* the first node an A100's */
                CHECK(!tsl_cluster_tf32_moot(&cm), "%s with an A100 node: not moot", moot[i].spec);
            }
            tsl_cluster_free(&cm);
        }
    }
    /* a stack's target turns TF32 off; the executor and galvatron keep it */
    {
        tsl_cost_knobs_t kk;
        for (uint32_t t = 0; t < TSL_TARGET_COUNT; t++) {
            tsl_target_knobs(t, &kk);
            CHECK(kk.tf32_off == (t == TSL_TARGET_MEGATRON || t == TSL_TARGET_DEEPSPEED ||
                                  t == TSL_TARGET_TORCHTITAN),
                  "target %u: tf32_off %d", t, kk.tf32_off);
        }
    }
    /* the tied sum's element width (tsl_cost_tied_elem_bytes): 2 for a 16-bit gradient, even
     * beside an fp32 buffer (Megatron's main_grad: priced at 2 as before); the buffer's 4
     * under DeepSpeed's BF16_Optimizer and under fp32 training */
    tsl_cost_knobs_t kt = {0};
    CHECK(tsl_cost_tied_elem_bytes(&kt) == 2.0, "16-bit: 2");
    kt.grad_reduce_bytes = 4;
    CHECK(tsl_cost_tied_elem_bytes(&kt) == 2.0, "fp32 main_grad: 2 (unchanged)");
    kt.ds_bf16_optimizer = true;
    CHECK(tsl_cost_tied_elem_bytes(&kt) == 4.0, "BF16_Optimizer: its fp32 _hp_grad");
    kt = (tsl_cost_knobs_t){.fp32 = true};
    CHECK(tsl_cost_tied_elem_bytes(&kt) == 4.0, "fp32 training: 4");
    /* cost model 67: every built-in type has a figure (datasheets, cluster_hw.c) */
    for (size_t i = 0; i < tsl_gpu_count(); i++)
        CHECK(tsl_gpu_fp32_peak(tsl_gpu_at(i)) > 0, "%s: an fp32 figure", tsl_gpu_at(i)->name);
    CHECK(tsl_gpu_fp32_peak(tsl_gpu_find("B200")) == 1100e12, "B200: TF32 2.2 PF sparse / 2");
    CHECK(tsl_gpu_fp32_peak(tsl_gpu_find("GB200")) == 1250e12, "GB200: TF32 2.5 PF sparse / 2");
    CHECK(tsl_gpu_fp32_peak(tsl_gpu_find("L40S")) == 183e12, "L40S: TF32 dense");
    CHECK(tsl_gpu_fp32_peak(tsl_gpu_find("L4")) == 60e12, "L4: TF32 120 sparse / 2");
    CHECK(tsl_gpu_fp32_peak(tsl_gpu_find("A10G")) == 35e12, "A10G: TF32");
    CHECK(tsl_gpu_fp32_peak(tsl_gpu_find("2080Ti-10G")) == 13.4e12, "2080 Ti: fp32, no TF32");
    /* ROCm runs fp32 matmuls in fp32 unless a script opts in: the FP32 matrix peak */
    CHECK(tsl_gpu_fp32_peak(tsl_gpu_find("MI300X")) == 163.4e12 &&
              tsl_gpu_find("MI325X")->tf32_peak_flops == 0.0,
          "MI300X/MI325X: FP32 matrix, TF32 not taken");

    tsl_layer_t e = gpt2_medium(128);
    e.unfused_attn = true;
    tsl_layer_t e32 = e;
    e32.fp32_acts = true;
    CHECK(tsl_layer_derive(&e, &err) == 0 && tsl_layer_derive(&e32, &err) == 0, "%s", err.msg);
    double sh = 128.0 * 1024, sf = 128.0 * 4096, s2 = 16.0 * 128 * 128;
    CHECK(e.act_repl_bytes == (uint64_t)(10 * sh) && e32.act_repl_bytes == (uint64_t)(18 * sh),
          "replicated stash 10 -> 18 s h (%llu)", (unsigned long long)e32.act_repl_bytes);
    CHECK(e32.act_shard_bytes == (uint64_t)(16 * sh + 8 * sf + 9 * s2),
          "sharded stash at 4 B, the masks at 1 (%llu)", (unsigned long long)e32.act_shard_bytes);
    CHECK(e32.act_score_bytes == (uint64_t)(9 * s2) && e.act_score_bytes == (uint64_t)(5 * s2),
          "scores 5 -> 9 B");
    CHECK(e32.bnd_act_bytes == 2 * e.bnd_act_bytes, "the boundary at 4 B");
    CHECK(e32.params == e.params && e32.fwd_flops == e.fwd_flops, "the same layer otherwise");

    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, 1e12, 1.25e12);
    double m16 = tsl_roofline_mem_s(&d, 1e9, 0);
    d.elem_scale = 2.0;
    CHECK_NEAR(tsl_roofline_mem_s(&d, 1e9, 0), 2.0 * m16, 1e-15, "memory-bound bytes at 4 B");
}

/* unfused_grad_accum (docs/cost-model.md "Gradient accumulation"): a micro-batch
 * that does not synchronise adds its weight gradients into the buffer with a
 * kernel of its own, HBM-bound at W_opt. P = 12,582,912 parameters, DP 8, W = 1 TB/s:
 * fp16 .grad (Megatron-LM 2021): (2 + 2 + 2)·P / W + 4 µs = 79.497 µs; an fp32
 * buffer (main_grad.add_): (4 + 2 + 4)·P / W + 4 µs = 129.829 µs; the synchronising
 * micro-batch is the one priced without it (m − 1 per iteration); under SDP the
 * gradients are reduce-scattered every micro-batch: nothing to accumulate, a copy
 * into the bucket instead (Megatron-FSDP). */
static void test_grad_accum(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_layer_cost_t base, r;
    tsl_layer_t l = test_layer();
    make_env(&c, &env, 1, 8);
    env.device_mem_bw = 1.25e12; /* W = 0.8 x 1.25 TB/s = 1 TB/s */
    env.host_op_s = 0.0;         /* the GPU's time alone (a host-bound pass hides it) */
    /* one AccumulateGrad kernel per parameter tensor: QKV, projection, FC1, FC2 and
     * two norms, weight and bias each: 12 kernels at L = 4 us */
    double launches = 12 * TSL_ROOFLINE_LAUNCH_S;
    tsl_strategy_t s = one(TSL_DIM_DP, 8, false), z = one(TSL_DIM_SDP, 8, false);
    tsl_cost_layer(&env, &l, &s, NULL, 16, &base);
    env.knobs.unfused_grad_accum = true;
    tsl_cost_layer(&env, &l, &s, NULL, 16, &r);
    /* fp16 .grad read and written, the fresh fp16 gradient read: 6 B x 12582912 at
     * 1 TB/s = 75.497472 us */
    CHECK_NEAR(r.bwd_s - base.bwd_s, 75.497472e-6 + launches, 1e-12,
               "fp16 accumulate: 6 B/param (%g)", r.bwd_s - base.bwd_s);
    CHECK_NEAR(r.bwd_sync_s, base.bwd_sync_s, 1e-15, "not on the synchronising micro-batch");
    CHECK_NEAR(r.fwd_s, base.fwd_s, 1e-15, "forward unchanged");
    env.knobs.grad_reduce_bytes = 4;
    tsl_cost_layer(&env, &l, &s, NULL, 16, &r);
    env.knobs.unfused_grad_accum = false;
    tsl_cost_layer(&env, &l, &s, NULL, 16, &base);
    /* an fp32 buffer: 4 + 4 + 2 = 10 B x 12582912 = 125.82912 us */
    CHECK_NEAR(r.bwd_s - base.bwd_s, 125.82912e-6 + launches, 1e-12, "fp32 buffer: 10 B/param (%g)",
               r.bwd_s - base.bwd_s);
    { /* DeepSpeed's fp32_allreduce (AMP's fork): the fp16 param.grad accumulated, 6 B
         (75.497472 us), cast to fp32 for the reduce alone: the all-reduce still moves
         4 B per parameter, the kept gradient 2 */
        tsl_layer_cost_t fp32_reduce = r, buf16, buf16_base;
        env.knobs.grad_buf_bytes = 2;
        tsl_cost_layer(&env, &l, &s, NULL, 16, &buf16_base);
        env.knobs.unfused_grad_accum = true;
        tsl_cost_layer(&env, &l, &s, NULL, 16, &buf16);
        CHECK_NEAR(buf16.bwd_s - buf16_base.bwd_s, 75.497472e-6 + launches, 1e-12,
                   "fp16 .grad, fp32 reduce: 6 B/param (%g)", buf16.bwd_s - buf16_base.bwd_s);
        CHECK_NEAR(buf16.grad_comm_s, fp32_reduce.grad_comm_s, 1e-15,
                   "the reduce moves 4 B/param still (%g, %g)", buf16.grad_comm_s,
                   fp32_reduce.grad_comm_s);
        CHECK(buf16.grad_bytes == 2 * P_PARAMS && fp32_reduce.grad_bytes == 4 * P_PARAMS,
              "kept gradient: 2 B/param (%llu), 4 with an fp32 buffer (%llu)",
              (unsigned long long)buf16.grad_bytes, (unsigned long long)fp32_reduce.grad_bytes);
        env.knobs.grad_buf_bytes = 4; /* the reduce's own: as left out */
        tsl_cost_layer(&env, &l, &s, NULL, 16, &buf16);
        CHECK(memcmp(&buf16, &fp32_reduce, sizeof(buf16)) == 0, "grad_buf_bytes 4 = the reduce's");
        /* the casts around the reduce (grad_cast_s), at W_opt = 1 TB/s: the fp16 buffer
           read and fp32 written before it, fp32 read and fp16 written after, 2 x (2 + 4)
           B x 12582912 = 150.994944 us and two launches, on the DP all-reduce */
        double opt_bw = env.opt_mem_bw;
        env.opt_mem_bw = 1e12;
        tsl_cost_layer(&env, &l, &s, NULL, 16, &fp32_reduce);
        env.knobs.grad_buf_bytes = 2;
        tsl_cost_layer(&env, &l, &s, NULL, 16, &buf16);
        CHECK_NEAR(buf16.grad_comm_s - fp32_reduce.grad_comm_s,
                   150.994944e-6 + 2 * TSL_ROOFLINE_LAUNCH_S, 1e-12,
                   "fp16 buffer, fp32 reduce: the casts (%g)",
                   buf16.grad_comm_s - fp32_reduce.grad_comm_s);
        tsl_strategy_t solo = one(TSL_DIM_TP, 8, false); /* no DP: no reduce, no cast */
        tsl_cost_layer(&env, &l, &solo, NULL, 16, &buf16);
        env.knobs.grad_buf_bytes = 4;
        tsl_cost_layer(&env, &l, &solo, NULL, 16, &fp32_reduce);
        CHECK_NEAR(buf16.grad_comm_s, fp32_reduce.grad_comm_s, 1e-15, "TP 8, DP 1: no cast");
        env.opt_mem_bw = opt_bw;
    }
    env.knobs = (tsl_cost_knobs_t){0};
    env.knobs.autocast = true; /* AccumulateGrad on fp32 .grad: 4 + 4 + 4, the same term */
    tsl_cost_layer(&env, &l, &s, NULL, 16, &r);
    CHECK(r.bwd_s > r.bwd_sync_s - r.grad_comm_s, "autocast accumulates on its own");
    env.knobs.unfused_grad_accum = true; /* implied by autocast: not counted twice */
    tsl_cost_layer(&env, &l, &s, NULL, 16, &base);
    CHECK_NEAR(base.bwd_s, r.bwd_s, 1e-15, "autocast + --unfused-grad-accum: one accumulation");
    env.knobs = (tsl_cost_knobs_t){0};
    tsl_cost_layer(&env, &l, &z, NULL, 16, &base);
    env.knobs.unfused_grad_accum = true;
    tsl_cost_layer(&env, &l, &z, NULL, 16, &r);
    /* SDP reduce-scatters every micro-batch: nothing accumulated, but Megatron-FSDP
     * without the fusion copies each micro-batch's fresh gradient into the bucket of
     * the whole unsharded gradient (megatron_fsdp.py _grad_acc): 2 read + 2 written
     * = 4 B x 12582912 (all of P, not P / 8) at 1 TB/s = 50.331648 us, on every
     * micro-batch, the synchronising one too */
    CHECK_NEAR(r.bwd_s - base.bwd_s, 50.331648e-6 + launches, 1e-12,
               "SDP unfused: a 4 B/param copy (%g)", r.bwd_s - base.bwd_s);
    CHECK_NEAR(r.bwd_sync_s - base.bwd_sync_s, 50.331648e-6 + launches, 1e-12,
               "SDP unfused: the synchronising micro-batch copies too (%g)",
               r.bwd_sync_s - base.bwd_sync_s);
    env.knobs.grad_reduce_bytes = 4; /* an fp32 bucket: 2 + 4 = 6 B = 75.497472 us */
    tsl_cost_layer(&env, &l, &z, NULL, 16, &r);
    env.knobs.unfused_grad_accum = false;
    tsl_cost_layer(&env, &l, &z, NULL, 16, &base);
    CHECK_NEAR(r.bwd_s - base.bwd_s, 75.497472e-6 + launches, 1e-12,
               "SDP unfused, fp32 bucket: 6 B/param (%g)", r.bwd_s - base.bwd_s);
    env.knobs = (tsl_cost_knobs_t){.autocast = true}; /* FSDP2: no copy priced */
    tsl_cost_layer(&env, &l, &z, NULL, 16, &base);
    env.knobs.unfused_grad_accum = true;
    tsl_cost_layer(&env, &l, &z, NULL, 16, &r);
    CHECK_NEAR(r.bwd_s, base.bwd_s, 1e-15, "SDP under autocast: unchanged");
    tsl_cluster_free(&c);
}

static void test_sdp(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_layer_cost_t dp, sdp;
    tsl_layer_t l = test_layer();
    make_env(&c, &env, 1, 8);
    env.mode = TSL_COST_PAPER; /* Galvatron's SDP: one reduce-scatter per iteration */
    tsl_strategy_t s_dp = one(TSL_DIM_DP, 8, false), s_sdp = one(TSL_DIM_SDP, 8, false);
    tsl_cost_layer(&env, &l, &s_dp, NULL, 16, &dp);
    tsl_cost_layer(&env, &l, &s_sdp, NULL, 16, &sdp);

    double cf = F_FLOPS * 2 / X_FLOPS;
    double gather = 7.0 / 8 * (2.0 * P_PARAMS) / (100 * GB); /* 2.2020096e-4 */
    CHECK(sdp.feasible, "SDP8 feasible");
    CHECK_NEAR(sdp.fwd_s, cf + gather, EPS, "fwd gathers the weights");
    CHECK_NEAR(sdp.bwd_s, 2 * cf + gather, EPS, "bwd gathers again");
    CHECK_NEAR(sdp.grad_comm_s, gather, EPS, "reduce-scatter = gather time");
    CHECK_NEAR(sdp.comm_s, 2 * gather, EPS, "two gathers per micro-batch");
    CHECK_NEAR(sdp.bwd_sync_s, gather + tsl_cost_overlap_s(2 * cf, gather, 1.3), EPS,
               "sync overlaps the reduce-scatter");
    /* Galvatron-BMW III-A: SDP's communication is 1.5x DP's for the same degree */
    CHECK_NEAR(sdp.comm_s + sdp.grad_comm_s, 1.5 * (dp.comm_s + dp.grad_comm_s), EPS,
               "SDP %g vs DP %g", sdp.comm_s + sdp.grad_comm_s, dp.grad_comm_s);
    CHECK(sdp.ms_bytes == 16 * P_PARAMS / 8, "states sharded 8 ways");
    CHECK(sdp.fwd_bytes == dp.fwd_bytes, "same activations as DP");
    CHECK(sdp.bwd_bytes == 4 * P_PARAMS * 7 / 8, "transient gathered weights + grads");

    /* DP2 x SDP4 (SDP inner): all-reduce of the shard over DP + reduce-scatter over SDP */
    tsl_dim_t dims[] = {TSL_DIM_SDP, TSL_DIM_DP};
    uint32_t degs[] = {4, 2};
    tsl_strategy_t mix = strat(2, dims, degs, false);
    tsl_layer_cost_t m;
    tsl_cost_layer(&env, &l, &mix, NULL, 16, &m);
    double want = tsl_cost_allreduce_s(2.0 * P_PARAMS / 4, 2, 100 * GB) +
                  tsl_cost_reduce_scatter_s(2.0 * P_PARAMS, 4, 100 * GB);
    CHECK(m.feasible, "DP2xSDP4 feasible");
    CHECK_NEAR(m.grad_comm_s, want, EPS, "mixed gradient sync");
    CHECK(m.ms_bytes == 16 * P_PARAMS / 4, "states sharded over SDP only");
    CHECK(m.bwd_bytes == 4 * P_PARAMS * 3 / 4, "SDP4 transient");

    /* STACK: ZeRO-3 reduce-scatters after every micro-batch's backward (the executor,
     * FSDP), under it: bwd_s = gather + overlap(2·cf, rs) with rs = gather's
     * 2.2020096e-4 s; the last micro-batch adds nothing */
    env.mode = TSL_COST_STACK;
    tsl_strategy_bw_t sbw, mbw; /* STACK adds NCCL's latency α to every collective */
    tsl_cost_strategy_bw(&env, &s_sdp, &sbw);
    tsl_cost_strategy_bw(&env, &mix, &mbw);
    CHECK(sbw.sdp_bw == 100 * GB && sbw.sdp_lat.n == 8 && sbw.sdp_lat.k == 1,
          "stack: one node's bandwidth, NCCL's model for 8 ranks on one node");
    /* 25 MB gathered over 8 ranks at 100 GB/s is bandwidth-bound: NCCL's Simple ring,
     * α = 8.4 + 7 · 3.4 = 32.2 µs (LL128: 27.3 µs + 220.2 / 0.92 = 266.6 µs) */
    tsl_coll_choice_t ch;
    double gather_st = gather + 32.2e-6;
    CHECK_NEAR(tsl_cluster_coll_allgather_s(&sbw.sdp_lat, 2.0 * P_PARAMS, 8, 100 * GB, &ch),
               gather_st, EPS, "stack: the gather's NCCL time");
    CHECK(ch.algo == TSL_NCCL_RING && ch.proto == TSL_NCCL_SIMPLE, "stack: Simple ring");
    tsl_cost_layer(&env, &l, &s_sdp, NULL, 16, &sdp);
    double every = gather_st + tsl_cost_overlap_s(2 * cf, gather_st, 1.3);
    CHECK_NEAR(sdp.fwd_s, cf + gather_st, EPS, "stack: fwd as paper, plus α");
    CHECK_NEAR(sdp.bwd_s, every, EPS, "stack: bwd reduce-scatters: %g", sdp.bwd_s);
    CHECK_NEAR(sdp.bwd_sync_s, every, EPS, "stack: the last micro-batch adds nothing");
    CHECK_NEAR(sdp.grad_comm_s, gather_st, EPS, "stack: one reduce-scatter a micro-batch");
    /* DP2 x SDP4: the shard's DP all-reduce stays on the last micro-batch */
    tsl_cost_layer(&env, &l, &mix, NULL, 16, &m);
    /* Simple rings too: reduce-scatter over 4, α 8.4 + 3 · 3.4 = 18.6 µs; the 6.3 MB
     * shard's all-reduce over 2, α 8.4 + 2 · 3.4 = 15.2 µs */
    double rs4 = tsl_cost_reduce_scatter_s(2.0 * P_PARAMS, 4, 100 * GB) + 18.6e-6;
    double ar2 = tsl_cost_allreduce_s(2.0 * P_PARAMS / 4, 2, 100 * GB) + 15.2e-6;
    CHECK_NEAR(m.grad_comm_s, rs4 + ar2, EPS, "stack: same bytes in all, plus α");
    CHECK_NEAR(m.bwd_sync_s - m.bwd_s,
               tsl_cost_overlap_s(2 * m.compute_s / 3, rs4 + ar2, 1.3) -
                   tsl_cost_overlap_s(2 * m.compute_s / 3, rs4, 1.3),
               1e-9, "stack: the last adds the DP all-reduce");
    tsl_cluster_free(&c);
}

/* A decoder's cross-attention under TP (cost model 76, cost.c cross_kv_grad_s): its
 * K/V projection is column-parallel over the encoder's T tokens, so the backward
 * all-reduces that input's gradient, T·h·n elements, besides the layer's own
 * tp_allreduces over its s tokens. test_layer as a decoder of s = SEQ attending to
 * T = 4·SEQ encoder tokens at TP 8 (n = 4 samples), STACK: bwd_s and comm_s grow by
 * NCCL's all-reduce of 2·T·h·n bytes over 8 ranks (the strategy's bandwidth and α),
 * fwd_s does not; without cross-attention (T 0), at TP 1 and in PAPER mode (the seed's
 * formulas, Galvatron's reproductions) nothing moves. */
static void test_cross_kv_grad(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    make_env(&c, &env, 1, 8);
    env.mode = TSL_COST_STACK;
    tsl_layer_t dec = test_layer(), self = test_layer();
    dec.kind = self.kind = TSL_LAYER_DECODER;
    dec.cross_seq_len = 4 * SEQ;
    tsl_strategy_t tp = one(TSL_DIM_TP, 8, false), dp = one(TSL_DIM_DP, 8, false);
    tsl_layer_cost_t with, without;
    tsl_cost_layer(&env, &dec, &tp, NULL, 4, &with);
    tsl_cost_layer(&env, &self, &tp, NULL, 4, &without);
    tsl_strategy_bw_t bw;
    tsl_cost_strategy_bw(&env, &tp, &bw);
    double bytes = 2.0 * 4 * SEQ * HID * 4; /* 16-bit, T tokens, 4 samples */
    double ar = bw.tp_lat.n > 1 ? tsl_cluster_coll_allreduce_s(&bw.tp_lat, bytes, 8, bw.tp_bw, NULL)
                                : tsl_cost_allreduce_s(bytes, 8, bw.tp_bw);
    CHECK(ar > 0, "the all-reduce takes time");
    CHECK_NEAR(with.bwd_s - without.bwd_s, ar, EPS, "backward: the encoder output's dX");
    CHECK_NEAR(with.bwd_sync_s - without.bwd_sync_s, ar, EPS, "and with the sync");
    CHECK_NEAR(with.comm_s - without.comm_s, ar, EPS, "counted as communication");
    CHECK_NEAR(with.fwd_s, without.fwd_s, EPS, "the forward has no such collective");
    CHECK_NEAR(with.compute_s, without.compute_s, EPS, "compute unchanged");

    tsl_cost_layer(&env, &dec, &dp, NULL, 32, &with);
    tsl_cost_layer(&env, &self, &dp, NULL, 32, &without);
    CHECK_NEAR(with.bwd_s, without.bwd_s, EPS, "TP 1: no partial gradient");

    env.mode = TSL_COST_PAPER;
    tsl_cost_layer(&env, &dec, &tp, NULL, 4, &with);
    tsl_cost_layer(&env, &self, &tp, NULL, 4, &without);
    CHECK_NEAR(with.bwd_s, without.bwd_s, EPS, "PAPER: the seed's formulas");
    tsl_cluster_free(&c);
}

static void test_tp_and_ckpt(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_layer_cost_t tp, ck;
    tsl_layer_t l = test_layer();
    make_env(&c, &env, 1, 8);
    tsl_strategy_t s = one(TSL_DIM_TP, 8, false), sc = one(TSL_DIM_TP, 8, true);
    tsl_cost_layer(&env, &l, &s, NULL, 4, &tp); /* w = 1: n = 4 */
    tsl_cost_layer(&env, &l, &sc, NULL, 4, &ck);

    double cf = F_FLOPS * 4 / (8 * X_FLOPS);           /* 4e-5 */
    double msg = 2.0 * SEQ * HID * 4;                  /* 1 MiB */
    double tpf = 2 * (2.0 * 7 / 8 * msg / (100 * GB)); /* two all-reduces */
    CHECK_NEAR(tpf, 3.670016e-5, EPS, "tp_f by hand");
    CHECK_NEAR(tp.fwd_s, cf + tpf, EPS, "TP fwd");
    CHECK_NEAR(tp.bwd_s, 2 * cf + tpf, EPS, "TP bwd");
    CHECK(tp.grad_comm_s == 0 && tp.bwd_sync_s == tp.bwd_s, "TP has no gradient sync");
    CHECK_NEAR(tp.comm_s, 2 * tpf, EPS, "TP comm");
    CHECK(tp.ms_bytes == 16 * P_PARAMS / 8, "TP shards states");
    uint64_t act = (ACT_REPL + ACT_SHARD / 8) * 4;
    CHECK(tp.fwd_bytes == act && tp.bwd_bytes == 0, "TP activations %llu",
          (unsigned long long)tp.fwd_bytes);

    /* CKPT: recompute forward (with its all-reduces) in backward; O_f = bnd·n, O_b = act */
    CHECK_NEAR(ck.fwd_s, tp.fwd_s, EPS, "CKPT forward unchanged");
    CHECK_NEAR(ck.bwd_s, 2 * cf + tpf + cf + tpf, EPS, "CKPT recompute");
    CHECK_NEAR(ck.compute_s, 4 * cf, EPS, "CKPT compute");
    CHECK_NEAR(ck.comm_s, 3 * tpf, EPS, "CKPT comm");
    CHECK_NEAR(ck.compute_s + ck.comm_s, ck.fwd_s + ck.bwd_s, EPS, "parts add up");
    CHECK(ck.fwd_bytes == BND * 4 && ck.bwd_bytes == act, "CKPT memory");
    CHECK(ck.ms_bytes == tp.ms_bytes, "CKPT keeps the states");

    /* CKPT on DP: O_f = bnd·n, recompute = compute_f */
    tsl_strategy_t dc = one(TSL_DIM_DP, 8, true);
    tsl_layer_cost_t d;
    tsl_cost_layer(&env, &l, &dc, NULL, 8, &d);
    double cf1 = F_FLOPS * 1 / X_FLOPS;
    CHECK_NEAR(d.bwd_s, 3 * cf1, EPS, "DP CKPT bwd");
    CHECK(d.fwd_bytes == BND && d.bwd_bytes == ACT_REPL + ACT_SHARD, "DP CKPT memory");
    tsl_cluster_free(&c);
}

/* tp_sync (AMP's fork times every TP all-reduce between two torch.cuda.synchronize()):
 * a pass of G kernel seconds, time s = max(G, N·H), with k synchronised collectives
 * takes max(G + k·H, s) + k·H. test_tp_and_ckpt's TP-8 layer (no bandwidth figure:
 * GEMMs alone, no host floor, s = G), H = 10 µs, k = 2 each way, by hand: the
 * forward cf = 4e-5 s grows by 2H (the kernels across two restarts) + 2H (the two
 * dispatches) = 4e-5 s; the backward (2cf) likewise; a second forward run pays it
 * again, a full recompute re-runs both runs' syncs; DP and H = 0 add nothing. Then
 * a host-bound pass: GPT-2 345M's block at TP 4 on a T4, H = 1 s, so N·H (N ≥ 3
 * ops) is above G + 2H: only the two dispatches show, 2H = 2 s each way. */
static void test_tp_sync(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_layer_cost_t off, on, d2, ck, dp0, dp1;
    tsl_layer_t l = test_layer();
    tsl_strategy_t s, sc, dp;
    tp8_host_env(&c, &env, &s, &sc, &dp);
    tsl_cost_layer(&env, &l, &s, NULL, 4, &off);
    tsl_cost_layer(&env, &l, &dp, NULL, 8, &dp0);
    env.knobs.tp_sync = true;
    tsl_cost_layer(&env, &l, &s, NULL, 4, &on);
    tsl_cost_layer(&env, &l, &dp, NULL, 8, &dp1);
    double cf = F_FLOPS * 4 / (8 * X_FLOPS), tpf = 3.670016e-5, sync = 4e-5;
    CHECK_NEAR(off.fwd_s, cf + tpf, EPS, "off: as test_tp_and_ckpt");
    CHECK_NEAR(on.fwd_s, cf + tpf + sync, EPS, "forward + 4H: %g", on.fwd_s);
    CHECK_NEAR(on.bwd_s, 2 * cf + tpf + sync, EPS, "backward + 4H: %g", on.bwd_s);
    CHECK_NEAR(on.compute_s, off.compute_s + 2 * sync, EPS, "the idle GPU is compute time");
    CHECK_NEAR(on.comm_s, off.comm_s, EPS, "the collectives as they were");
    CHECK(dp1.fwd_s == dp0.fwd_s && dp1.bwd_s == dp0.bwd_s, "no TP, no syncs");
    env.knobs.double_block_fwd = true;
    tsl_cost_layer(&env, &l, &s, NULL, 4, &d2);
    tsl_cost_layer(&env, &l, &sc, NULL, 4, &ck);
    CHECK_NEAR(d2.fwd_s, 2 * (cf + tpf + sync), EPS, "two runs, two runs' syncs");
    CHECK_NEAR(d2.bwd_s, on.bwd_s, EPS, "backward once");
    CHECK_NEAR(ck.bwd_s, 2 * cf + tpf + sync + 2 * (cf + tpf + sync), EPS,
               "CKPT re-runs both runs with their syncs: %g", ck.bwd_s);
    CHECK_NEAR(ck.compute_s + ck.comm_s, ck.fwd_s + ck.bwd_s, EPS, "parts add up");
    env.knobs.double_block_fwd = false;
    env.host_op_s = 0;
    tsl_cost_layer(&env, &l, &s, NULL, 4, &on);
    CHECK(on.fwd_s == off.fwd_s && on.bwd_s == off.bwd_s, "no host model (H = 0): none");
    tsl_cluster_free(&c);

    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "4xT4-16G", &err) == 0, "%s", err.msg);
    tsl_layer_t g = gpt2_medium_block();
    CHECK(g.tp_allreduces == 2, "a block: two TP all-reduces each way");
    CHECK(tsl_cost_env_init(&env, &c, 0, 4, &err) == 0, "%s", err.msg);
    env.host_op_s = 1.0;
    tsl_strategy_t t4 = one(TSL_DIM_TP, 4, false);
    tsl_cost_layer(&env, &g, &t4, NULL, 1, &off);
    env.knobs.tp_sync = true;
    tsl_cost_layer(&env, &g, &t4, NULL, 1, &on);
    CHECK_NEAR(on.fwd_s - off.fwd_s, 2.0, 1e-9, "host-bound forward: the dispatches, %g",
               on.fwd_s - off.fwd_s);
    CHECK_NEAR(on.bwd_s - off.bwd_s, 2.0, 1e-9, "host-bound backward: the dispatches, %g",
               on.bwd_s - off.bwd_s);

    /* at Tessel's H = 57.2 µs the same block is GPU-bound, and the restart's short
     * kernels count: one norm, dropout and residual unit on the replicated
     * activation, 15 B per element over 1024 × 1024 elements at the T4's 0.8 × 320
     * GB/s = 61.44 µs, plus 3 launches of 4 µs: g_p = 73.44 µs, three kernels, each
     * shorter than H, so the next GEMM starts 4H after the restart, not H + g_p: r =
     * H + (3H − g_p) = 155.36 µs; the pass takes max(G + 2r, s) + 2H. At 8 samples
     * g_p = 8 × 61.44 + 12 = 503.52 µs is longer than 3H: r = H. */
    env.host_op_s = 57.2e-6;
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, env.device_flops, env.device_mem_bw);
    d.shape = env.gemm_shape;
    d.host_op_s = env.host_op_s;
    uint32_t kf = 0;
    double gp = tsl_roofline_tp_restart_s(&d, &g, 1, false, &kf);
    CHECK(kf == 3, "the restart's kernels: norm, dropout, residual (%u)", kf);
    CHECK_NEAR(gp, 73.44e-6, 1e-12, "g_p by hand: %g", gp);
    CHECK_NEAR(tsl_roofline_tp_restart_s(&d, &g, 8, false, NULL), 503.52e-6, 1e-12, "8 samples");
    const double H = 57.2e-6;
    for (int n = 1; n <= 8; n += 7) {
        tsl_roofline_fwd_t f;
        tsl_roofline_layer_fwd(&d, &g, n, 4, false, 0, &f);
        double r = H + fmax(0.0, 3 * H - tsl_roofline_tp_restart_s(&d, &g, n, false, NULL));
        CHECK(n == 1 ? r > 2 * H : r == H, "n %d: restart %g", n, r);
        env.knobs.tp_sync = false;
        tsl_cost_layer(&env, &g, &t4, NULL, n, &off);
        env.knobs.tp_sync = true;
        tsl_cost_layer(&env, &g, &t4, NULL, n, &on);
        CHECK(f.gpu_s + 2 * r > f.s, "n %d: GPU-bound across the restarts", n);
        CHECK_NEAR(on.fwd_s - off.fwd_s, fmax(f.gpu_s + 2 * r, f.s) + 2 * H - f.s, 1e-12,
                   "n %d: forward + %g", n, on.fwd_s - off.fwd_s);
    }
    tsl_cluster_free(&c);
}

/* double_block_fwd (AMP's Megatron-LM v1.1.5 fork runs each block's forward twice):
 * test_tp_and_ckpt's TP-8 layer, by hand: the forward pays cf + tpf twice, the
 * backward is unchanged; a full recompute runs the twice-run forward again; the
 * embedding and the head are not blocks and stay as they were. */
static void test_double_block_fwd(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_layer_cost_t r, ck, h0, h1;
    tsl_layer_t l = test_layer();
    make_env(&c, &env, 1, 8);
    env.knobs.double_block_fwd = true;
    tsl_strategy_t s = one(TSL_DIM_TP, 8, false), sc = one(TSL_DIM_TP, 8, true);
    tsl_cost_layer(&env, &l, &s, NULL, 4, &r);
    tsl_cost_layer(&env, &l, &sc, NULL, 4, &ck);
    double cf = F_FLOPS * 4 / (8 * X_FLOPS); /* 4e-5, as test_tp_and_ckpt */
    double tpf = 3.670016e-5;                /* its two all-reduces */
    CHECK_NEAR(r.fwd_s, 2 * (cf + tpf), EPS, "forward twice: %g", r.fwd_s);
    CHECK_NEAR(r.bwd_s, 2 * cf + tpf, EPS, "backward once");
    CHECK_NEAR(r.compute_s, 4 * cf, EPS, "compute: 2 cf forward + 2 cf backward");
    CHECK_NEAR(r.comm_s, 3 * tpf, EPS, "comm: two forwards' and the backward's all-reduces");
    CHECK_NEAR(ck.fwd_s, r.fwd_s, EPS, "CKPT forward as without");
    CHECK_NEAR(ck.bwd_s, 2 * cf + tpf + 2 * (cf + tpf), EPS, "CKPT recomputes both runs");
    CHECK_NEAR(ck.compute_s + ck.comm_s, ck.fwd_s + ck.bwd_s, EPS, "parts add up: %g + %g",
               ck.compute_s, ck.comm_s);
    CHECK_NEAR(ck.comm_s, 5 * tpf, EPS, "CKPT comm: 2 + 2 forward runs, 1 backward");
    /* the first run's output only printed: its activations are freed at once */
    CHECK(r.fwd_bytes == (ACT_REPL + ACT_SHARD / 8) * 4 && ck.fwd_bytes == BND * 4,
          "memory as one run");
    tsl_layer_t h = l;
    h.kind = TSL_LAYER_HEAD;
    tsl_cost_layer(&env, &h, &s, NULL, 4, &h1);
    env.knobs.double_block_fwd = false;
    tsl_cost_layer(&env, &h, &s, NULL, 4, &h0);
    CHECK(h1.fwd_s == h0.fwd_s && h1.bwd_s == h0.bwd_s, "a head runs once (%g, %g)", h1.fwd_s,
          h0.fwd_s);
    tsl_cluster_free(&c);
}

/* TP2 inner stays in a node; TP over the outer level crosses the slow link. */
static void test_placement(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_strategy_bw_t bw;
    tsl_layer_t l = test_layer();
    make_env(&c, &env, 2, 4);
    tsl_dim_t in_dims[] = {TSL_DIM_TP, TSL_DIM_DP}, out_dims[] = {TSL_DIM_DP, TSL_DIM_TP};
    uint32_t in_degs[] = {2, 4}, out_degs[] = {4, 2};
    tsl_strategy_t tp_in = strat(2, in_dims, in_degs, false);
    tsl_strategy_t tp_out = strat(2, out_dims, out_degs, false);
    tsl_cost_strategy_bw(&env, &tp_in, &bw);
    CHECK(bw.tp_bw == 100 * GB && bw.dp_bw == 10 * GB && isinf(bw.sdp_bw), "TP inner");
    tsl_cost_strategy_bw(&env, &tp_out, &bw);
    CHECK(bw.tp_bw == 10 * GB && bw.dp_bw == 100 * GB, "TP outer");

    tsl_layer_cost_t a, b;
    tsl_cost_layer(&env, &l, &tp_in, NULL, 8, &a);
    tsl_cost_layer(&env, &l, &tp_out, NULL, 8, &b);
    CHECK(a.feasible && b.feasible, "both feasible");
    CHECK(a.fwd_s < b.fwd_s, "TP over the slow link costs more forward");
    double grad_in = tsl_cost_allreduce_s(2.0 * P_PARAMS / 2, 4, 10 * GB);
    CHECK_NEAR(a.grad_comm_s, grad_in, EPS, "DP4 over the slow link, half the parameters");
    tsl_cluster_free(&c);
}

static void test_infeasible(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_layer_cost_t r;
    tsl_layer_t l = test_layer();
    make_env(&c, &env, 1, 8);
    tsl_strategy_t s = one(TSL_DIM_DP, 8, false);
    tsl_cost_layer(&env, &l, &s, NULL, 12, &r);
    CHECK(!r.feasible && isinf(r.fwd_s) && isinf(r.bwd_s) && isinf(r.bwd_sync_s),
          "12 samples over 8 ways");
    tsl_cost_layer(&env, &l, &s, NULL, 0, &r);
    CHECK(!r.feasible, "empty micro-batch");
    tsl_strategy_t t4 = one(TSL_DIM_TP, 4, false);
    tsl_cost_layer(&env, &l, &t4, NULL, 4, &r);
    CHECK(!r.feasible, "strategy of 4 devices on a block of 8");
    tsl_strategy_t t8 = one(TSL_DIM_TP, 8, false);
    tsl_cost_layer(&env, &l, &t8, NULL, 3, &r);
    CHECK(r.feasible, "TP does not split the batch: any mb works");

    tsl_err_t err;
    tsl_strategy_t single;
    memset(&single, 0, sizeof(single));
    CHECK(tsl_cost_env_init(&env, &c, 5, 1, &err) == 0, "%s", err.msg);
    tsl_cost_layer(&env, &l, &single, NULL, 3, &r);
    CHECK(r.feasible && r.comm_s == 0 && r.grad_comm_s == 0, "one device: no communication");
    CHECK_NEAR(r.fwd_s, F_FLOPS * 3 / X_FLOPS, EPS, "one device compute");
    CHECK(r.ms_bytes == 16 * P_PARAMS, "one device holds all states");
    tsl_cluster_free(&c);
}

/* R of layer l from strategy `from` to `to` on env's block, mb samples. */
static tsl_transition_cost_t trans(const tsl_cost_env_t *env, const tsl_layer_t *l,
                                   const char *from, const char *to, uint32_t mb)
{
    tsl_strategy_t a, b;
    tsl_relayout_t mv;
    tsl_transition_cost_t r = {-1, -1};
    uint32_t scratch[3 * 64];
    tsl_err_t err = {0};
    CHECK(tsl_strategy_parse(from, &a, &err) == 0 && tsl_strategy_parse(to, &b, &err) == 0 &&
              tsl_relayout_plan(&a, &b, env->cluster, env->block_first, scratch, &mv, &err) == 0,
          "%s > %s: %s", from, to, err.msg);
    tsl_cost_transition(env, l, &mv, mb, &r);
    return r;
}

#define CHECK_TRANS(r, f, b, what)                                                                 \
    do {                                                                                           \
        CHECK_NEAR((r).fwd_s, (f), EPS, "%s: forward", (what));                                    \
        CHECK_NEAR((r).bwd_s, (b), EPS, "%s: backward", (what));                                   \
    } while (0)

/*
 * R by the pair of layouts, as the executor moves the activation (relayout.h).
 * X = bnd · B_m = 262144 B · 8 = 2 MiB; one node of 4 (100 GB/s) then two of 4
 * (10 GB/s between them). The formulas: a gather by need over k = w_H / w_N moves
 * (k − 1)/k · X / w_N, a whole gather over k = w_H moves (k − 1)/k · X.
 */
static void test_transition(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_layer_t l = test_layer();
    const double X = (double)BND * 8, in = 100 * GB, out = 10 * GB;
    make_env(&c, &env, 1, 4);
    /* narrowing DP4 → TP4: forward gathers k = 4/1 ranks, 3/4 · X / 1; backward
     * slices. The old price was 2 · 3/4 · X / 1 = 3/2 X: twice this 3/4 X. */
    CHECK_TRANS(trans(&env, &l, "dp4", "tp4", 8), 0.75 * X / in, 0.0, "dp4 > tp4");
    /* widening TP4 → DP4: forward slices; backward gathers the gradient over
     * k = 4/1: 3/4 · X / w_A = 3/4 · X / 1 (the old price: 2 · 3/4 · X / 4 = 3/8 X) */
    CHECK_TRANS(trans(&env, &l, "tp4", "dp4", 8), 0.0, 0.75 * X / in, "tp4 > dp4");
    /* widening TP2×DP2 → DP4: backward k = 4/2 = 2, 1/2 · X / 2 = X/4 */
    CHECK_TRANS(trans(&env, &l, "tp2-dp2", "dp4", 8), 0.0, 0.25 * X / in, "tp2-dp2 > dp4");
    /* narrowing SDP4 → TP2×DP2 (quarters p nest in halves p/2): forward k = 2, X/4 */
    CHECK_TRANS(trans(&env, &l, "sdp4", "tp2-dp2", 8), 0.25 * X / in, 0.0, "sdp4 > tp2-dp2");
    /* not nesting, equal widths (rank 1 holds half 0, needs half 1): the whole
     * micro-batch over k = w_H = 2 each way, 1/2 · X */
    CHECK_TRANS(trans(&env, &l, "tp2-dp2", "dp2-tp2", 8), 0.5 * X / in, 0.5 * X / in,
                "tp2-dp2 > dp2-tp2");
    /* not nesting, to a wider layout: forward whole over w_H = 2 (1/2 X), backward
     * whole over w_H = 4 (3/4 X) */
    CHECK_TRANS(trans(&env, &l, "dp2-tp2", "dp4", 8), 0.5 * X / in, 0.75 * X / in, "dp2-tp2 > dp4");
    /* the same layout (DP vs SDP, CKPT do not matter): nothing */
    CHECK_TRANS(trans(&env, &l, "dp4", "sdp4+ckpt", 8), 0.0, 0.0, "dp4 > sdp4+ckpt");
    /* calibration: comm_scale multiplies R as every other communication */
    tsl_calib_t k;
    tsl_calib_identity(&k);
    k.comm_scale = 2.0;
    env.calib = &k;
    CHECK_TRANS(trans(&env, &l, "dp4", "tp4", 8), 2 * 0.75 * X / in, 0.0, "comm_scale 2");
    tsl_cluster_free(&c);

    /* two nodes of 4: DP8 → TP8 gathers over all 8, a ring that crosses nodes:
     * 7/8 · X at 10 GB/s; DP8 → TP2×DP4 gathers pairs {0,1}, {2,3}, ... inside a
     * node: 1/2 · X/4 at 100 GB/s; TP2×DP4 → DP4×TP2 does not nest: whole over
     * w_H = 4 each way — forward the r-th holder of each quarter p/2 gives groups
     * {0,2,4,6} and {1,3,5,7}, across nodes: 3/4 · X at 10 GB/s; backward the
     * holders of quarters p%4 give {0,1,2,3} and {4,5,6,7}, inside: 100 GB/s */
    make_env(&c, &env, 2, 4);
    CHECK_TRANS(trans(&env, &l, "dp8", "tp8", 8), 7.0 / 8 * X / out, 0.0, "dp8 > tp8");
    CHECK_TRANS(trans(&env, &l, "dp8", "tp2-dp4", 8), 0.5 * X / 4 / in, 0.0, "dp8 > tp2-dp4");
    CHECK_TRANS(trans(&env, &l, "tp2-dp4", "dp4-tp2", 8), 0.75 * X / out, 0.75 * X / in,
                "tp2-dp4 > dp4-tp2");
    tsl_cluster_free(&c);
}

static tsl_strategy_t parsed(const char *text)
{
    tsl_strategy_t s;
    tsl_err_t err = {0};
    CHECK(tsl_strategy_parse(text, &s, &err) == 0, "parse %s: %s", text, err.msg);
    return s;
}

static void test_p2p(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    make_env(&c, &env, 2, 4);
    /* PAPER (AMP): the whole micro-batch's boundary on the first devices' link */
    tsl_strategy_t dp4 = parsed("dp4");
    CHECK_NEAR(tsl_cost_stage_p2p_s(&c, TSL_COST_PAPER, 0, 4, &dp4, BND, 8),
               2.0 * BND * 8 / (10 * GB), EPS, "paper: across nodes: activation + gradient");
    CHECK_NEAR(tsl_cost_stage_p2p_s(&c, TSL_COST_PAPER, 0, 2, NULL, BND, 8),
               2.0 * BND * 8 / (100 * GB), EPS, "paper: inside a node");
    CHECK(tsl_cost_stage_p2p_s(&c, TSL_COST_PAPER, 0, 4, NULL, 0, 8) == 0, "nothing to send");
    /* STACK: each of dp4's ranks sends its 8/4 samples to its counterpart at once;
     * the four sends cross the node's one NIC together (cluster.h,
     * tsl_cluster_pairs_bw): 10 GB/s / 4 each */
    const double nic4 = 10 * GB / 4;
    CHECK_NEAR(tsl_cost_stage_p2p_s(&c, TSL_COST_STACK, 0, 4, &dp4, BND, 8), 2.0 * BND * 2 / nic4,
               EPS, "stack: dp4, 2 samples a rank");
    /* TP without SP: every TP rank sends its replica's whole tensor (8 / 2 samples) */
    tsl_strategy_t tp2dp2 = parsed("tp2-dp2"), sp = parsed("tp2-dp2+sp");
    CHECK_NEAR(tsl_cost_stage_p2p_s(&c, TSL_COST_STACK, 0, 4, &tp2dp2, BND, 8),
               2.0 * BND * 4 / nic4, EPS, "stack: tp2-dp2");
    /* with SP each TP rank holds (and sends) 1/t of the sequence */
    CHECK_NEAR(tsl_cost_stage_p2p_s(&c, TSL_COST_STACK, 0, 4, &sp, BND, 8), 2.0 * BND * 2 / nic4,
               EPS, "stack: tp2-dp2+sp");
    tsl_strategy_t dp2 = parsed("dp2");
    CHECK_NEAR(tsl_cost_stage_p2p_s(&c, TSL_COST_STACK, 0, 2, &dp2, BND, 8),
               2.0 * BND * 4 / (100 * GB), EPS, "stack: inside a node");
    CHECK(tsl_cost_stage_p2p_s(&c, TSL_COST_STACK, 0, 4, &dp4, 0, 8) == 0, "stack: nothing");
    /* issue 18.1: one sample per replica, DP 1 → 2 (B_m 1 → 2): every GPU does the
     * same work, so STACK's p2p stays 2·BND/10 GB; PAPER's doubles */
    tsl_strategy_t tp4 = parsed("tp4");
    double one = tsl_cost_stage_p2p_s(&c, TSL_COST_STACK, 0, 4, &tp4, BND, 1);
    CHECK_NEAR(one, 2.0 * BND / nic4, EPS, "stack: tp4, one sample");
    CHECK_NEAR(tsl_cost_stage_p2p_s(&c, TSL_COST_STACK, 0, 4, &tp2dp2, BND, 2), one, EPS,
               "stack: DP 2 sends no more per rank");
    CHECK_NEAR(tsl_cost_stage_p2p_s(&c, TSL_COST_PAPER, 0, 4, &tp2dp2, BND, 2),
               2.0 * BND * 2 / (10 * GB), EPS, "paper: the whole micro-batch on one link");
    /* legacy_p2p (Megatron-LM 2021-2022's scatter/gather): tp4 sends BND/4 from each
     * rank over the shared NIC, then the receiving node's TP group all-gathers
     * the whole at 100 GB/s: 2 · (BND/4 / nic4 + 3/4 · BND / 100 GB) */
    double pairs = tsl_cluster_pairs_bw(&c, 0, 4, 4);
    CHECK_NEAR(tsl_cost_stage_p2p_pairs_s(&c, TSL_COST_STACK, 0, 4, &tp4, BND, 1, pairs,
                                          TSL_P2P_SCATTER_GATHER, 0),
               2.0 * (BND / 4.0 / nic4 + 0.75 * BND / (100 * GB)), EPS, "scatter/gather: tp4");
    CHECK_NEAR(tsl_cost_stage_p2p_pairs_s(&c, TSL_COST_STACK, 0, 4, &sp, BND, 8, pairs,
                                          TSL_P2P_SCATTER_GATHER, 0),
               2.0 * BND * 2 / nic4, EPS, "scatter/gather: SP already sends 1/t");
    CHECK_NEAR(tsl_cost_stage_p2p_pairs_s(&c, TSL_COST_STACK, 0, 4, &dp4, BND, 8, pairs,
                                          TSL_P2P_SCATTER_GATHER, 0),
               2.0 * BND * 2 / nic4, EPS, "scatter/gather: no TP, nothing to split");
    /* ds_pipe_p2p (DeepSpeed's PipelineEngine, AMP's fork), mask M = 1 MB: tp4 sends
     * BND/4 + M from each rank over the shared NIC, the receivers all-gather BND at
     * 100 GB/s; the gradient goes back whole (BND from each rank) and the senders
     * all-gather their output back: (BND/4 + M + BND) / nic4 + 2 · 3/4 · BND / 100 GB */
    const double M = 1e6;
    CHECK_NEAR(tsl_cost_stage_p2p_pairs_s(&c, TSL_COST_STACK, 0, 4, &tp4, BND, 1, pairs,
                                          TSL_P2P_DS_PIPE, (uint64_t)M),
               (BND / 4.0 + M + BND) / nic4 + 2.0 * 0.75 * BND / (100 * GB), EPS, "ds pipe: tp4");
    /* no TP: each rank's whole share both ways, and the mask forward: (2 + 2) samples
     * and M over the shared NIC */
    CHECK_NEAR(tsl_cost_stage_p2p_pairs_s(&c, TSL_COST_STACK, 0, 4, &dp4, BND, 8, pairs,
                                          TSL_P2P_DS_PIPE, (uint64_t)M),
               (2.0 * BND * 2 + M) / nic4, EPS, "ds pipe: no TP, the mask alone added");
    /* the mask: Megatron's 1 x 1 x s x s causal mask in fp16, 2 s^2 bytes */
    tsl_layer_t gl = {.seq_len = 1024};
    CHECK(tsl_cost_ds_mask_bytes(TSL_P2P_DS_PIPE, &gl) == 2097152u, "ds mask: 2 MB at s 1024");
    CHECK(tsl_cost_ds_mask_bytes(TSL_P2P_CORE, &gl) == 0, "ds mask: none under core");
    tsl_cost_knobs_t kn = {.legacy_p2p = true};
    CHECK(tsl_cost_p2p_proto(&kn) == TSL_P2P_SCATTER_GATHER, "proto: legacy");
    kn.ds_pipe_p2p = true;
    CHECK(tsl_cost_p2p_proto(&kn) == TSL_P2P_DS_PIPE, "proto: ds first");
    tsl_cluster_free(&c);
}

/* cost.c reads degrees and strides itself (to inline them); they must agree with
 * strategy.c's definitions for every enumerated strategy. */
static void test_agrees_with_strategy(void)
{
    static tsl_strategy_t all[TSL_STRATEGY_MAX];
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_err_t err = {0};
    tsl_layer_t l = test_layer();
    tsl_strategy_opts_t opts = tsl_strategy_opts_default();
    opts.takeaway3 = false;
    CHECK(tsl_cluster_homogeneous(&c, 3, 4, &test_gpu, 10 * GB, &err) == 0, "%s", err.msg);
    uint32_t sizes[] = {4, 6, 12};
    for (size_t k = 0; k < 3; k++) {
        uint32_t g = sizes[k];
        CHECK(tsl_cost_env_init(&env, &c, 0, g, &err) == 0, "%s", err.msg);
        env.mode = TSL_COST_PAPER; /* compared with the slowest link of tsl_cluster_dim_bw */
        int n = tsl_strategy_enumerate(g, &opts, all, NULL, TSL_STRATEGY_MAX, &err);
        CHECK(n > 0, "enumerate %u: %s", g, err.msg);
        for (int i = 0; i < n; i++) {
            tsl_strategy_bw_t bw;
            tsl_cost_strategy_bw(&env, &all[i], &bw);
            double want[3];
            for (int d = 0; d < 3; d++)
                want[d] =
                    tsl_strategy_degree(&all[i], (tsl_dim_t)d) > 1
                        ? tsl_cluster_dim_bw(&c, 0, g, tsl_strategy_stride(&all[i], (tsl_dim_t)d),
                                             tsl_strategy_degree(&all[i], (tsl_dim_t)d))
                        : INFINITY;
            CHECK(bw.dp_bw == want[TSL_DIM_DP] && bw.sdp_bw == want[TSL_DIM_SDP] &&
                      bw.tp_bw == want[TSL_DIM_TP],
                  "G %u strategy %d bandwidths", g, i);
            uint32_t w = tsl_strategy_data_width(&all[i]);
            tsl_layer_cost_t r;
            tsl_cost_layer(&env, &l, &all[i], &bw, 2 * w, &r);
            /* TP must divide the 16 heads and the FFN: tp3, tp6, tp12 cannot */
            uint32_t tp = tsl_strategy_degree(&all[i], TSL_DIM_TP);
            bool fits = l.heads % tp == 0 && l.ffn_hidden % tp == 0;
            CHECK(r.feasible == fits, "G %u strategy %d feasible at 2w iff tp%u fits", g, i, tp);
            if (!fits)
                continue;
            if (w > 1) {
                tsl_cost_layer(&env, &l, &all[i], &bw, w + 1, &r);
                CHECK(!r.feasible, "G %u strategy %d infeasible at w + 1", g, i);
            }
        }
    }
    tsl_cluster_free(&c);
}

/* ---- beyond the papers: SP, selective recompute, ZeRO-1/2, feasibility, vocab padding ---- */

/* Mixtral 8x7B's MoE FFN (h 4096, f 14336, 8 experts, top-2; SwiGLU, RMSNorm, no bias,
 * no dropout) at s 4096, derived; the MoE tests' layer. */
static tsl_layer_t mixtral_ffn(tsl_err_t *err)
{
    tsl_layer_t l = {.kind = TSL_LAYER_FFN,
                     .seq_len = 4096,
                     .hidden = 4096,
                     .ffn_hidden = 14336,
                     .heads = 32,
                     .gated_ffn = true,
                     .no_bias = true,
                     .rms_norm = true,
                     .no_dropout = true,
                     .experts = 8,
                     .experts_per_tok = 2};
    CHECK(tsl_layer_derive(&l, err) == 0, "%s", err->msg);
    return l;
}

/* One GPT layer of Korthikanti et al. Table 2's shape, derived by model.c:
 * s = 2048, h = 4096, a = 32, f = 4h, unfused attention with dropout. */
static tsl_layer_t gpt_layer(void)
{
    tsl_layer_t l = dense_4k(TSL_LAYER_ENCODER); /* f = 4h = 16384 */
    l.unfused_attn = true;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    return l;
}

/* Memory of one layer, one sample per device, TP 4, against Table 2's forms. */
static void test_sp_selective_memory(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    make_env(&c, &env, 1, 4);
    tsl_layer_t l = gpt_layer();
    double s = 2048, h = 4096, a = 32, t = 4;
    tsl_strategy_t plain = one(TSL_DIM_TP, 4, false), sp = plain, sel = plain, spsel, spck;
    sp.sp = true;
    sel.selective = true;
    spsel = sp;
    spsel.selective = true;
    spck = sp;
    spck.ckpt = true;
    tsl_layer_cost_t r;
    tsl_cost_layer(&env, &l, &plain, NULL, 1, &r);
    CHECK(r.fwd_bytes == (uint64_t)(s * h * (10 + 24 / t) + 5 * a * s * s / t),
          "TP: sbh(10 + 24/t + 5as/(ht)): %llu", (unsigned long long)r.fwd_bytes);
    tsl_cost_layer(&env, &l, &sp, NULL, 1, &r);
    CHECK(r.fwd_bytes == (uint64_t)(s * h / t * (34 + 5 * a * s / h)),
          "TP+SP: sbh/t (34 + 5as/h): %llu", (unsigned long long)r.fwd_bytes);
    tsl_cost_layer(&env, &l, &sel, NULL, 1, &r);
    CHECK(r.fwd_bytes == (uint64_t)(s * h * (10 + 24 / t)), "TP + selective: sbh(10 + 24/t)");
    tsl_cost_layer(&env, &l, &spsel, NULL, 1, &r);
    CHECK(r.fwd_bytes == (uint64_t)(34 * s * h / t) && r.bwd_bytes == 0,
          "TP + SP + selective: 34sbh/t");
    tsl_cost_layer(&env, &l, &spck, NULL, 1, &r);
    CHECK(r.fwd_bytes == (uint64_t)(2 * s * h / t) &&
              r.bwd_bytes == (uint64_t)(s * h / t * (34 + 5 * a * s / h)),
          "full recompute under SP keeps the sharded 2sbh/t input");
    /* every head on each TP rank (tp_whole_heads: AMP's TransGAN attention) keeps all
     * 5as² bytes of scores there; selective recompute drops them either way */
    env.knobs.tp_whole_heads = true;
    tsl_cost_layer(&env, &l, &plain, NULL, 1, &r);
    CHECK(r.fwd_bytes == (uint64_t)(s * h * (10 + 24 / t) + 5 * a * s * s),
          "TP, whole heads: sbh(10 + 24/t) + 5as²: %llu", (unsigned long long)r.fwd_bytes);
    tsl_cost_layer(&env, &l, &sel, NULL, 1, &r);
    CHECK(r.fwd_bytes == (uint64_t)(s * h * (10 + 24 / t)), "whole heads + selective: as before");
    env.knobs.tp_whole_heads = false;
    tsl_cluster_free(&c);
}

/* Costs of layer l under three strategies at micro-batch mb. */
static void cost3(const tsl_cost_env_t *env, const tsl_layer_t *l, const tsl_strategy_t s[3],
                  uint32_t mb, tsl_layer_cost_t out[3])
{
    for (int i = 0; i < 3; i++)
        tsl_cost_layer(env, l, &s[i], NULL, mb, &out[i]);
}

/* Times, FLOP-only device (no bandwidth figure): SP moves the same ring bytes as
 * the all-reduce; selective recompute repeats QKᵀ and AV in the backward. */
static void test_sp_selective_time(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    make_env(&c, &env, 1, 4);
    tsl_layer_t l = gpt_layer();
    tsl_strategy_t plain = one(TSL_DIM_TP, 4, false), v[3] = {plain, plain, plain}, sp;
    v[1].sp = true;
    v[2].selective = true;
    sp = v[1];
    tsl_layer_cost_t r[3];
    cost3(&env, &l, v, 2, r);
    tsl_layer_cost_t a = r[0], b = r[1], d = r[2];
    CHECK(a.fwd_s == b.fwd_s && a.bwd_s == b.bwd_s && a.comm_s == b.comm_s,
          "SP: all-gather + reduce-scatter = the all-reduce's bytes");
    double core = 4.0 * 2048 * 2048 * 4096 * 2 / (4 * X_FLOPS); /* 4·s²·d·n / (t·X) */
    CHECK_NEAR(d.bwd_s - a.bwd_s, core, EPS, "selective recomputes the attention core");
    CHECK_NEAR(d.fwd_s, a.fwd_s, EPS, "selective: forward unchanged");

    /* with a memory bandwidth, SP divides norm/residual/dropout traffic by t:
     * 2 blocks × 15 bytes per element × s·h·n·(1 − 1/t) at 0.8 × bandwidth */
    tsl_gpu_spec_t g = test_gpu;
    g.mem_bw = 1000 * GB;
    tsl_cluster_free(&c);
    tsl_err_t err = {0};
    CHECK(tsl_cluster_homogeneous(&c, 1, 4, &g, 10 * GB, &err) == 0, "%s", err.msg);
    CHECK(tsl_cost_env_init(&env, &c, 0, 4, &err) == 0, "%s", err.msg);
    tsl_cost_layer(&env, &l, &plain, NULL, 2, &a);
    tsl_cost_layer(&env, &l, &sp, NULL, 2, &b);
    double saved = 30.0 * 2048 * 4096 * 2 * (1 - 1.0 / 4) / (0.8 * 1000 * GB);
    CHECK_NEAR(a.fwd_s - b.fwd_s, saved, 1e-12, "SP elementwise saving: %g vs %g",
               a.fwd_s - b.fwd_s, saved);
    tsl_cluster_free(&c);
}

/* Full against selective recomputation of one GPT layer (s 2048, h 4096, f 4h,
 * unfused core), TP 4, one sample, FLOP-only device, STACK, as Megatron-LM runs
 * it (knobs.overlap_tp_dgrad; Korthikanti et al. 2022 Sec. 4.2.2, 6.2): the
 * backward's all-reduces C under the column-parallel dW GEMMs (QKV, FFN-in:
 * dW = dX = 2·s·h·(3h + f)/t / X), the recomputed forward's exposed. */
static void test_recompute_tp_overlap(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    make_env(&c, &env, 1, 4);
    env.mode = TSL_COST_STACK;
    tsl_layer_t l = gpt_layer();
    double s = 2048, h = 4096, f = 4 * 4096, t = 4, k = 1.3;
    tsl_strategy_t plain = one(TSL_DIM_TP, 4, false), full = one(TSL_DIM_TP, 4, true);
    tsl_strategy_t sel = plain, spsel = plain;
    sel.selective = true;
    spsel.sp = true;
    spsel.selective = true;
    tsl_strategy_bw_t bw;
    tsl_cost_strategy_bw(&env, &plain, &bw);
    double cf = l.fwd_flops / (t * X_FLOPS); /* compute_f */
    double tpf = 2 * tsl_cluster_coll_allreduce_s(&bw.tp_lat, 2 * s * h, 4, bw.tp_bw, NULL);
    double dw = 2 * s * h * (3 * h + f) / t / X_FLOPS, dx = dw; /* 2.40518168576e-3 */
    double core = 4 * s * s * h / (t * X_FLOPS);                /* QKᵀ and AV */
    CHECK_NEAR(dw, 2.40518168576e-3, 1e-9, "column-parallel dW by hand");
    CHECK(tpf < dw, "the all-reduces fit under dW: %g < %g", tpf, dw);
    double tpb = tsl_cost_overlap_s(dw, tpf, k) - dw; /* (k − 1)·C */
    double half = tpf / 2;
    double tpb_sp =
        half + tsl_cost_overlap_s(dx, half, k) - dx + tsl_cost_overlap_s(dw, half, k) - dw;
    CHECK_NEAR(tpb, 0.3 * tpf, EPS, "under dW only k − 1 of C shows");
    CHECK_NEAR(tpb_sp, 0.8 * tpf, EPS, "SP: the all-gather + 0.3 of each half");

    tsl_layer_cost_t r[3];
    tsl_strategy_t v[3] = {plain, full, sel};
    /* the executor's way (the knob off): every collective exposed, as before */
    cost3(&env, &l, v, 1, r);
    CHECK_NEAR(r[0].bwd_s, 2 * cf + tpf, 1e-12, "off: bwd = 2cf + tp_f");
    CHECK_NEAR(r[1].bwd_s, 2 * cf + tpf + cf + tpf, 1e-12, "off: full recompute");

    env.knobs.overlap_tp_dgrad = true;
    cost3(&env, &l, v, 1, r);
    tsl_layer_cost_t none = r[0], fu = r[1], se = r[2], ss;
    tsl_cost_layer(&env, &l, &spsel, NULL, 1, &ss);
    CHECK_NEAR(none.fwd_s, cf + tpf, 1e-12, "forward unchanged");
    CHECK_NEAR(none.bwd_s, 2 * cf + tpb, 1e-12, "bwd = 2cf + overlap(dW, C) − dW");
    CHECK_NEAR(fu.bwd_s, 2 * cf + tpb + cf + tpf, 1e-12,
               "full: + the forward, collectives exposed");
    CHECK_NEAR(se.bwd_s, 2 * cf + tpb + core, 1e-12, "selective: + the core alone");
    CHECK_NEAR(ss.bwd_s, 2 * cf + tpb_sp + core, 1e-12, "SP + selective");
    CHECK_NEAR(fu.compute_s + fu.comm_s, fu.fwd_s + fu.bwd_s, 1e-12, "parts add up");
    CHECK_NEAR(none.wgrad_s, cf - (tpf - tpb), 1e-12, "W gives up what it hid (B keeps tp_f)");
    double ratio = (fu.fwd_s + fu.bwd_s) / (ss.fwd_s + ss.bwd_s);
    double want = (4 * cf + 2 * tpf + tpb) / (3 * cf + tpf + tpb_sp + core);
    CHECK_NEAR(ratio, want, 1e-12, "full / (SP + selective): %g", ratio);
    /* PAPER mode keeps Galvatron's exposed backward whatever the knob */
    env.mode = TSL_COST_PAPER;
    tsl_cost_layer(&env, &l, &plain, NULL, 1, &r[0]);
    tsl_strategy_bw_t pbw;
    tsl_cost_strategy_bw(&env, &plain, &pbw);
    double tpf_p = 2 * tsl_cost_allreduce_s(2 * s * h, 4, pbw.tp_bw);
    CHECK_NEAR(r[0].bwd_s, 2 * cf + tpf_p, 1e-12, "paper: exposed");
    tsl_cluster_free(&c);
}

/* TransformerEngine's userbuffers (knobs.tp_comm_overlap; docs/cost-model.md "TP
 * communication overlap") on the GPT layer above, TP 4 with SP, one sample, FLOP-only
 * device (X = 5e13), STACK. Each block's all-gather and reduce-scatter (half = tp_f / 4:
 * two all-reduces' worth, each an AG + RS) under its own GEMM, by hand:
 *   QKV  2·s·h·3h/t / X = 1.03079215104e-3    proj 2·s·h·h/t / X = 3.4359738368e-4
 *   FC1 = FC2 = 2·s·h·f/t / X = 1.37438953472e-3
 * ring exchange: t chunks, t − 1 under transfers: ring(g) = overlap(¾g, half) − ¾g;
 * bulk (the column-parallel dX and dW, overlap_tp_dgrad's): overlap(g, half) − g. In the
 * backward col dX = col dW = the forward GEMM, row dX = the forward GEMM. */
/* test_tp_comm_overlap's layer on a GPU with a known SM count (132, an H100's):
 * each userbuffers overlap prices its GEMM short of the SMs its collective holds,
 * not k. A GEMM g beside a collective c on n of N SMs: max(c, g + n/N·c) − g
 * exposed. The rings (copy engines) hold none, the projection / FFN-out rings
 * keep 1 off the GEMM, the bulk overlaps Megatron-Bridge's FP8 cfg's 4, 24 (QKV
 * dX, dW) and 2, 4 (FFN-in dX, dW). On this layer one transfer (half) is
 * 0.140 ms and every GEMM is longer (QKV 1.031, projection 0.344 — ¾ of it 0.258
 * —, FFN 1.374 ms), so each overlap shows n/N of its transfer: the forward
 * (0 + 1 + 0 + 1)/132 · half = 2.1 µs (k = 1.3 gave 4 · 0.3 · half = 168 µs), the
 * backward's rings 0 and its bulk overlaps (4 + 24 + 2 + 4)/132 · half = 36.1 µs. */
static void test_tp_comm_overlap_sms(tsl_cost_env_t *env, const tsl_layer_t *l,
                                     const tsl_strategy_t *sp, double tpf, double qkv, double proj,
                                     double fc)
{
    double half = tpf / 4, N = 132;
#define SHARE(g, n) (fmax(half, (g) + (n) / N * half) - (g))
#define RING(g, n)  SHARE(0.75 * (g), n)
    /* the share rule by its parts: a compute-bound pair shows n/N of the transfer,
     * a comm-bound one what the GEMM does not cover */
    CHECK_NEAR(SHARE(10 * half, 24), 24.0 / 132 * half, 1e-12, "compute-bound: n/N of c");
    CHECK_NEAR(SHARE(0.5 * half, 24), 0.5 * half, 1e-15, "comm-bound: c − g");
    env->knobs.overlap_tp_dgrad = true;
    env->knobs.recompute_modules = 0;
    env->knobs.double_block_fwd = false;
    env->knobs.tp_comm_overlap = false;
    tsl_layer_cost_t off, on, kon;
    env->gemm_shape.sms = N;
    tsl_cost_layer(env, l, sp, NULL, 1, &off);
    env->knobs.tp_comm_overlap = true;
    tsl_cost_layer(env, l, sp, NULL, 1, &on);
    double fwd = RING(qkv, 0) + RING(proj, 1) + RING(fc, 0) + RING(fc, 1);
    double bwd =
        RING(proj, 0) + RING(fc, 0) + SHARE(qkv, 4) + SHARE(qkv, 24) + SHARE(fc, 2) + SHARE(fc, 4);
    CHECK_NEAR(fwd, 2.0 / 132 * half, 1e-12, "forward: the two 1-SM margins alone");
    CHECK_NEAR(bwd, 34.0 / 132 * half, 1e-12, "backward: the bulk overlaps' 34 SMs");
    CHECK_NEAR(off.fwd_s - on.fwd_s, tpf - fwd, 1e-12, "forward by SMs: %g exposed of %g", fwd,
               tpf);
    double agg = tsl_cost_overlap_s(qkv + fc, tpf / 2, 1.3) - (qkv + fc);
    CHECK_NEAR(on.bwd_s - off.bwd_s, bwd - (tpf / 2 + 2 * agg), 1e-12,
               "backward by SMs: %g (overlap_tp_dgrad alone keeps k)", bwd);
    /* the FFN-in's GEMM hides its ring's transfer whole: nothing shows on the copy
     * engines, 1/132 of it on the FFN-out's margin */
    CHECK(0.75 * fc > half, "FFN-in longer than its transfer");
    CHECK_NEAR(RING(fc, 0), 0.0, 1e-18, "copy-engine ring: nothing exposed");
    CHECK_NEAR(RING(fc, 1), half / 132, 1e-12, "1-SM margin: 1/132 of the transfer");
    /* below k's figure: k bounded the contention from above */
    env->gemm_shape.sms = 0; /* no SM figure: k, as before */
    tsl_cost_layer(env, l, sp, NULL, 1, &kon);
    CHECK(on.fwd_s < kon.fwd_s && on.bwd_s < kon.bwd_s, "SM shares below k = 1.3: %g < %g",
          on.fwd_s + on.bwd_s, kon.fwd_s + kon.bwd_s);
    env->knobs.tp_comm_overlap = false;
#undef SHARE
#undef RING
}

/* GPT layer (h 4096, s 2048) at TP 4 in STACK mode, for the two overlaps that hide
 * the TP collectives under their GEMMs: the plain and SP strategies, the TP traffic
 * of a pass (tpf) and the column/row GEMM times by hand at X_FLOPS. */
typedef struct tp4_fixture {
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_strategy_t sp, plain;
    double tpf, qkv, proj, fc;
} tp4_fixture_t;

static void tp4_fixture(tp4_fixture_t *x)
{
    double s = 2048, h = 4096, f = 4 * 4096, t = 4;
    make_env(&x->c, &x->env, 1, 4);
    x->env.mode = TSL_COST_STACK;
    x->sp = x->plain = one(TSL_DIM_TP, 4, false);
    x->sp.sp = true;
    tsl_strategy_bw_t bw;
    tsl_cost_strategy_bw(&x->env, &x->sp, &bw);
    x->tpf = 2 * tsl_cluster_coll_allreduce_s(&bw.tp_lat, 2 * s * h, 4, bw.tp_bw, NULL);
    x->qkv = 2 * s * h * 3 * h / t / X_FLOPS;
    x->proj = 2 * s * h * h / t / X_FLOPS;
    x->fc = 2 * s * h * f / t / X_FLOPS;
}

static void test_tp_comm_overlap(void)
{
    tp4_fixture_t fx;
    tp4_fixture(&fx);
    tsl_cost_env_t env = fx.env;
    tsl_layer_t l = gpt_layer();
    tsl_strategy_t sp = fx.sp, plain = fx.plain;
    double k = 1.3, tpf = fx.tpf, half = tpf / 4, qkv = fx.qkv, proj = fx.proj, fc = fx.fc;
    CHECK_NEAR(qkv, 1.03079215104e-3, 1e-12, "QKV by hand");
    CHECK_NEAR(proj, 3.4359738368e-4, 1e-12, "proj by hand");
    CHECK_NEAR(fc, 1.37438953472e-3, 1e-12, "FC1 by hand");
#define RING(g) (tsl_cost_overlap_s(0.75 * (g), half, k) - 0.75 * (g))
#define BULK(g) (tsl_cost_overlap_s((g), half, k) - (g))
    double fwd = RING(qkv) + RING(proj) + 2 * RING(fc);
    double bwd = RING(proj) + RING(fc) + 2 * BULK(qkv) + 2 * BULK(fc);
    /* the one tail chunk (¼ of the GEMM) has no transfer beside it: a comm-bound
     * pair shows half − ¾g + 0.3·¾g, a compute-bound one 0.3·half */
    double lo = fmin(0.75 * proj, half), hi = fmax(0.75 * proj, half);
    CHECK_NEAR(RING(proj), hi + 0.3 * lo - 0.75 * proj, 1e-15, "ring by its parts");

    tsl_layer_cost_t off, on, noseq, paper;
    env.knobs.overlap_tp_dgrad = true; /* the rows' Megatron default */
    tsl_cost_layer(&env, &l, &sp, NULL, 1, &off);
    env.knobs.tp_comm_overlap = true;
    tsl_cost_layer(&env, &l, &sp, NULL, 1, &on);
    tsl_cost_layer(&env, &l, &plain, NULL, 1, &noseq);
    CHECK_NEAR(off.fwd_s - on.fwd_s, tpf - fwd, 1e-12, "forward: %g exposed of %g", fwd, tpf);
    CHECK(fwd < 0.75 * tpf, "most of the forward's %g hidden: %g", tpf, fwd);
    /* overlap_tp_dgrad alone: dY's all-gather exposed, the re-gather and dX's
     * reduce-scatter under the column-parallel dX and dW summed (qkv + fc each) */
    double agg = tsl_cost_overlap_s(qkv + fc, tpf / 2, k) - (qkv + fc);
    double tpb_off = tpf / 2 + 2 * agg;
    CHECK_NEAR(on.bwd_s - off.bwd_s, bwd - tpb_off, 1e-12,
               "backward: ring under row dX, bulk under col dX and dW, block by block: %g", bwd);
    CHECK_NEAR(on.compute_s + on.comm_s, on.fwd_s + on.bwd_s, 1e-12, "parts add up");
    CHECK_NEAR(on.wgrad_s - off.wgrad_s, (tpf / 2 - 2 * agg) - (2 * half - BULK(qkv) - BULK(fc)),
               1e-12, "W gives up what the dW GEMMs hid, block by block");
    /* without SP Megatron-LM refuses it and Megatron-Bridge turns it off: as before */
    env.knobs.tp_comm_overlap = false;
    tsl_layer_cost_t plain_off;
    tsl_cost_layer(&env, &l, &plain, NULL, 1, &plain_off);
    CHECK_NEAR(noseq.fwd_s, plain_off.fwd_s, 1e-15, "no SP: forward as without the knob");
    CHECK_NEAR(noseq.bwd_s, plain_off.bwd_s, 1e-15, "no SP: backward as without the knob");
    /* the bulk overlaps come with the switch (TE's ub_bulk_dgrad/wgrad), even where
     * overlap_tp_dgrad is off */
    env.knobs.tp_comm_overlap = true;
    env.knobs.overlap_tp_dgrad = false;
    tsl_layer_cost_t bare;
    tsl_cost_layer(&env, &l, &sp, NULL, 1, &bare);
    CHECK_NEAR(bare.bwd_s, on.bwd_s, 1e-15, "bulk overlaps implied");
    /* PAPER keeps every TP collective exposed */
    env.mode = TSL_COST_PAPER;
    tsl_cost_layer(&env, &l, &sp, NULL, 1, &paper);
    env.knobs.tp_comm_overlap = false;
    tsl_layer_cost_t paper_off;
    tsl_cost_layer(&env, &l, &sp, NULL, 1, &paper_off);
    CHECK_NEAR(paper.fwd_s, paper_off.fwd_s, 1e-15, "paper: forward exposed");
    CHECK_NEAR(paper.bwd_s, paper_off.bwd_s, 1e-15, "paper: backward exposed");
    /* A MoE layer (the GPT layer, its FFN 8 experts, top-2): the attention block is
     * the only userbuffers block and QKV the only column-parallel linear (the
     * experts leave TP to the dispatcher), so the MoE FFN's collectives (rest =
     * tpf/2) have no column-parallel GEMM left to hide under: "TP in the backward"
     * with dX = dW = 0 gives rest/2 exposed + rest/2 + rest/2 = 3/4·tpf. Taking
     * their share of the layer's tp_b (which hid them under QKV's dX and dW, the
     * GEMMs the attention's bulk overlaps use) counted QKV twice. */
    env.mode = TSL_COST_STACK;
    env.knobs.overlap_tp_dgrad = true;
    tsl_layer_t moe = l;
    moe.experts = 8;
    moe.experts_per_tok = 2;
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&moe, &err) == 0 && moe.tp_allreduces == 2, "%s", err.msg);
    tsl_layer_cost_t moff, mon;
    env.knobs.tp_comm_overlap = false;
    tsl_cost_layer(&env, &moe, &sp, NULL, 1, &moff);
    env.knobs.tp_comm_overlap = true;
    tsl_cost_layer(&env, &moe, &sp, NULL, 1, &mon);
    double qagg = tsl_cost_overlap_s(qkv, tpf / 2, k) - qkv; /* QKV's dX (= its dW) */
    double mb_off = tpf / 2 + 2 * qagg;
    double mb_on = RING(proj) + 2 * BULK(qkv) + 0.75 * tpf;
    CHECK_NEAR(mon.bwd_s - moff.bwd_s, mb_on - mb_off, 1e-12,
               "MoE backward: the rest under no GEMM the block used (%g)", mb_on - mb_off);
    CHECK_NEAR(moff.fwd_s - mon.fwd_s, tpf - (RING(qkv) + RING(proj) + tpf / 2), 1e-12,
               "MoE forward: the attention block's rings, the FFN's exposed");
    /* What re-runs the overlapped forward runs it overlapped: a recomputed MLP
     * repeats its block's rings (2·RING(fc)), not its exposed all-reduce (tpf/2); a
     * stack's second forward repeats the layer's forward figure (fwd), not tpf. The
     * compute each adds is the same with the switch off, so the differences of
     * differences are the TP figures' alone. */
    tsl_layer_cost_t r[2][2], w[2][2]; /* [overlap][mlp recompute / double forward] */
    for (int ov = 0; ov < 2; ov++) {
        env.knobs.tp_comm_overlap = ov;
        for (int x = 0; x < 2; x++) {
            env.knobs.recompute_modules = x ? TSL_RECOMPUTE_MLP : 0;
            tsl_cost_layer(&env, &l, &sp, NULL, 1, &r[ov][x]);
            env.knobs.recompute_modules = 0;
            env.knobs.double_block_fwd = x;
            tsl_cost_layer(&env, &l, &sp, NULL, 1, &w[ov][x]);
            env.knobs.double_block_fwd = false;
        }
    }
    CHECK_NEAR((r[1][1].bwd_s - r[1][0].bwd_s) - (r[0][1].bwd_s - r[0][0].bwd_s),
               2 * RING(fc) - tpf / 2, 1e-12, "recomputed MLP: its block's rings");
    CHECK_NEAR((w[1][1].fwd_s - w[1][0].fwd_s) - (w[0][1].fwd_s - w[0][0].fwd_s), fwd - tpf, 1e-12,
               "second forward: the overlapped figure");
#undef RING
#undef BULK
    test_tp_comm_overlap_sms(&env, &l, &sp, tpf, qkv, proj, fc);
    tsl_cluster_free(&fx.c);
}

/* Userbuffers' ring-exchange reduce-scatters end in a sum (cost model 152;
 * TransformerEngine split_overlap_rs, "Reduce GEMM output chunks": reduce_bf16 over
 * the t partial chunks of the rank's shard, on the main stream once the ring is
 * done). test_tp_comm_overlap's layer on an H100's SM count with a memory
 * bandwidth: every GEMM is longer than its transfer, so the forward shows the two
 * 1-SM margins (2/132 of a transfer) and the projection's and FFN-out's sums, each
 * (1 + 1/t)·s·h·2 bytes streamed in one kernel; a recomputed MLP repeats its own. */
static void test_tp_comm_overlap_sum(void)
{
    tp4_fixture_t fx;
    tp4_fixture(&fx);
    tsl_cost_env_t env = fx.env;
    tsl_layer_t l = gpt_layer();
    double tpf = fx.tpf, half = tpf / 4;
    env.knobs.overlap_tp_dgrad = true;
    env.gemm_shape.sms = 132;
    env.device_mem_bw = 1.25e12;
    tsl_layer_cost_t off, on, roff, ron;
    tsl_cost_layer(&env, &l, &fx.sp, NULL, 1, &off);
    env.knobs.tp_comm_overlap = true;
    tsl_cost_layer(&env, &l, &fx.sp, NULL, 1, &on);
    tsl_roofline_dev_t dev;
    tsl_roofline_dev_init(&dev, env.device_flops, env.device_mem_bw);
    double s = 2048, h = 4096, t = 4; /* tp4_fixture's layer and TP degree */
    double sum = tsl_roofline_mem_s(&dev, 2 * s * h * (1 + 1 / t), 1);
    CHECK(sum > 0.1 * half, "a sum worth pricing: %g against a transfer of %g", sum, half);
    CHECK_NEAR(off.fwd_s - on.fwd_s, tpf - (2.0 / 132 * half + 2 * sum), 1e-12,
               "forward: the margins and the two sums (%g) of %g", 2 * sum, tpf);
    /* a recomputed MLP re-runs its block's rings, its sum with them */
    env.knobs.recompute_modules = TSL_RECOMPUTE_MLP;
    tsl_cost_layer(&env, &l, &fx.sp, NULL, 1, &ron);
    env.knobs.tp_comm_overlap = false;
    tsl_cost_layer(&env, &l, &fx.sp, NULL, 1, &roff);
    CHECK_NEAR((ron.bwd_s - on.bwd_s) - (roff.bwd_s - off.bwd_s), half / 132 + sum - tpf / 2, 1e-12,
               "recomputed MLP: its rings and its sum in place of the exposed all-reduce");
    /* PAPER has no userbuffers: nothing added */
    env.knobs.recompute_modules = 0;
    env.mode = TSL_COST_PAPER;
    tsl_layer_cost_t p_off, p_on;
    tsl_cost_layer(&env, &l, &fx.sp, NULL, 1, &p_off);
    env.knobs.tp_comm_overlap = true;
    tsl_cost_layer(&env, &l, &fx.sp, NULL, 1, &p_on);
    CHECK_NEAR(p_on.fwd_s, p_off.fwd_s, 1e-15, "paper: no sum");
    tsl_cluster_free(&fx.c);
}

/* torch's micro-pipelined TP (knobs.async_tp; docs/cost-model.md "torch's
 * micro-pipelined TP") on test_tp_comm_overlap's GPT layer, TP 4 with SP, one sample,
 * FLOP-only device, STACK. The forward's four collectives run in rings under their
 * own GEMMs (QKV, projection, FFN-in, FFN-out: ring(g) = overlap(¾g, half) − ¾g, the
 * copy engines holding no SMs: k where the GPU has no SM count); in the backward only
 * dY's gathers, under the row-parallel dX GEMMs (projection, FFN-out); the dX
 * reduce-scatters (a sum of linears' dX, which inductor's pass does not fuse) stay
 * exposed: tp_f/2. Nothing under the dW GEMMs: userbuffers' bulk overlaps are not
 * torch's. */
static void test_async_tp(void)
{
    tp4_fixture_t fx;
    tp4_fixture(&fx);
    tsl_cost_env_t env = fx.env;
    tsl_layer_t l = gpt_layer();
    tsl_strategy_t sp = fx.sp, plain = fx.plain;
    double k = 1.3, tpf = fx.tpf, half = tpf / 4, qkv = fx.qkv, proj = fx.proj, fc = fx.fc;
#define RING(g) (tsl_cost_overlap_s(0.75 * (g), half, k) - 0.75 * (g))
    double fwd = RING(qkv) + RING(proj) + 2 * RING(fc);
    double bwd = RING(proj) + RING(fc) + tpf / 2;
    tsl_layer_cost_t off, on, ub, noseq, noseq_off, paper, paper_off;
    tsl_cost_layer(&env, &l, &sp, NULL, 1, &off);
    env.knobs.async_tp = true;
    tsl_cost_layer(&env, &l, &sp, NULL, 1, &on);
    CHECK_NEAR(off.fwd_s - on.fwd_s, tpf - fwd, 1e-12, "forward: %g exposed of %g", fwd, tpf);
    CHECK_NEAR(off.bwd_s - on.bwd_s, tpf - bwd, 1e-12,
               "backward: dY's gathers in rings, dX's reduce-scatters exposed (%g of %g)", bwd,
               tpf);
    CHECK(on.fwd_s < off.fwd_s && on.bwd_s < off.bwd_s, "lowers both passes' TP");
    CHECK_NEAR(on.compute_s + on.comm_s, on.fwd_s + on.bwd_s, 1e-12, "parts add up");
    CHECK_NEAR(on.wgrad_s, off.wgrad_s, 1e-15, "nothing hidden under dW: W keeps its figure");
    /* userbuffers (with overlap_tp_dgrad's bulk overlaps) hide more of the backward:
     * AsyncTP is not its stand-in */
    env.knobs.async_tp = false;
    env.knobs.tp_comm_overlap = true;
    tsl_cost_layer(&env, &l, &sp, NULL, 1, &ub);
    CHECK_NEAR(ub.fwd_s, on.fwd_s, 1e-12, "forward: the same rings as userbuffers' (0 SMs)");
    CHECK(ub.bwd_s < on.bwd_s, "backward: userbuffers' bulk overlaps hide dX's scatter");
    env.knobs.tp_comm_overlap = false;
    /* a full recompute re-runs the overlapped forward */
    tsl_strategy_t ck = sp;
    ck.ckpt = true;
    tsl_layer_cost_t ck_off, ck_on;
    tsl_cost_layer(&env, &l, &ck, NULL, 1, &ck_off);
    env.knobs.async_tp = true;
    tsl_cost_layer(&env, &l, &ck, NULL, 1, &ck_on);
    CHECK_NEAR(ck_off.bwd_s - ck_on.bwd_s, (tpf - bwd) + (tpf - fwd), 1e-12,
               "full recompute: its forward's rings too");
    /* meaningless without SP (torchtitan runs TP with SP) and in PAPER mode: as off */
    tsl_cost_layer(&env, &l, &plain, NULL, 1, &noseq);
    env.mode = TSL_COST_PAPER;
    tsl_cost_layer(&env, &l, &sp, NULL, 1, &paper);
    env.knobs.async_tp = false;
    tsl_cost_layer(&env, &l, &sp, NULL, 1, &paper_off);
    env.mode = TSL_COST_STACK;
    tsl_cost_layer(&env, &l, &plain, NULL, 1, &noseq_off);
    CHECK_NEAR(noseq.fwd_s + noseq.bwd_s, noseq_off.fwd_s + noseq_off.bwd_s, 1e-15, "no SP: off");
    CHECK_NEAR(paper.fwd_s + paper.bwd_s, paper_off.fwd_s + paper_off.bwd_s, 1e-15, "paper: off");
    /* torchtitan's op recompute policy saves the reduce-scatter's output and the pass
     * no longer matches it (pytorch/torchtitan#866): the forward's scatters exposed */
    env.knobs.recompute_modules = TSL_RECOMPUTE_TORCHTITAN_OP;
    tsl_layer_cost_t op_off, op_on;
    tsl_cost_layer(&env, &l, &sp, NULL, 1, &op_off);
    env.knobs.async_tp = true;
    tsl_cost_layer(&env, &l, &sp, NULL, 1, &op_on);
    CHECK_NEAR(op_off.fwd_s - op_on.fwd_s, tpf - (RING(qkv) + RING(fc) + 2 * half), 1e-12,
               "op policy: the gathers' rings alone");
    env.knobs.recompute_modules = 0;
    /* An H100's SM count and a memory bandwidth: every GEMM here is longer than its
     * transfer, so the rings show nothing and what is left of the forward's TP is
     * the two reduce-scatters' sums of t partials, (1 + 1/t)·s·h·2 bytes each, at
     * ATen's reduce_kernel rate: 0.33 of the datasheet bandwidth (pytorch/pytorch#191803:
     * 23-43 % of HBM peak), one launch; the roofline's streaming 0.80 was 2.4 × faster */
    env.gemm_shape.sms = 132;
    env.device_mem_bw = 1.25e12;
    tsl_layer_cost_t m_off, m_on;
    tsl_cost_layer(&env, &l, &sp, NULL, 1, &m_on);
    env.knobs.async_tp = false;
    tsl_cost_layer(&env, &l, &sp, NULL, 1, &m_off);
    tsl_roofline_dev_t dev;
    tsl_roofline_dev_init(&dev, env.device_flops, env.device_mem_bw);
    double s = 2048, h = 4096, t = 4; /* tp4_fixture's layer and TP degree */
    double bytes = 2 * s * h * (1 + 1 / t);
    double red = bytes / (0.33 * env.device_mem_bw) + tsl_roofline_mem_s(&dev, 0, 1);
    CHECK(red > tsl_roofline_mem_s(&dev, bytes, 1), "the sum is slower than a streaming copy: %g",
          red);
    CHECK_NEAR(m_off.fwd_s - m_on.fwd_s, tpf - 2 * red, 1e-12, "forward: the sums alone (%g of %g)",
               2 * red, tpf);
#undef RING
    tsl_cluster_free(&fx.c);
}

/* ZeRO-1 / ZeRO-2 on dp4: states, transient gradients, communication. */
static void test_zero(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    make_env(&c, &env, 1, 4);
    tsl_layer_t l = test_layer();
    tsl_strategy_t dp = one(TSL_DIM_DP, 4, false), v[3] = {dp, dp, dp};
    v[1].zero = 1;
    v[2].zero = 2;
    tsl_layer_cost_t r[3];
    cost3(&env, &l, v, 8, r);
    tsl_layer_cost_t a = r[0], b = r[1], d = r[2];
    CHECK(a.ms_bytes == 16 * P_PARAMS, "DP: 16 bytes per parameter");
    CHECK(b.ms_bytes == 7 * P_PARAMS, "ZeRO-1: 2 + 2 + 12/4 = 7 bytes per parameter");
    CHECK(d.ms_bytes == 11 * P_PARAMS / 2, "ZeRO-2: 2 + 2/4 + 12/4 = 5.5 bytes per parameter");
    CHECK(b.bwd_bytes == a.bwd_bytes && d.bwd_bytes == a.bwd_bytes + 3 * P_PARAMS / 2,
          "ZeRO-2 holds a layer's full fp16 gradient (2P·3/4 beyond its shard) until the "
          "reduce-scatter");
    double cb = 2 * F_FLOPS * 2 / X_FLOPS; /* n = 2 */
    double rs = 3.0 / 4 * 2 * P_PARAMS / (100 * GB), ag = rs;
    CHECK_NEAR(a.grad_comm_s, tsl_cost_allreduce_s(2.0 * P_PARAMS, 4, 100 * GB), EPS, "DP ar");
    CHECK_NEAR(b.grad_comm_s, rs + ag, EPS, "ZeRO-1: reduce-scatter + all-gather, same bytes");
    CHECK_NEAR(b.bwd_s, cb, EPS, "ZeRO-1: nothing per micro-batch");
    CHECK_NEAR(b.bwd_sync_s, tsl_cost_overlap_s(cb, rs, 1.3) + ag, EPS,
               "ZeRO-1: RS under the backward, the weight all-gather exposed");
    CHECK_NEAR(d.bwd_s, tsl_cost_overlap_s(cb, rs, 1.3), EPS, "ZeRO-2: RS every micro-batch");
    CHECK_NEAR(d.bwd_sync_s, tsl_cost_overlap_s(cb, rs, 1.3) + ag, EPS, "ZeRO-2: last one");
    tsl_cluster_free(&c);
}

/* TP must divide heads, K/V heads and the FFN; Megatron's vocabulary padding. */
static void test_feasibility_and_padding(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    make_env(&c, &env, 1, 8);
    /* Qwen2-7B: 28 heads, 4 K/V heads */
    tsl_layer_t q = {.kind = TSL_LAYER_ENCODER,
                     .seq_len = 128,
                     .hidden = 3584,
                     .ffn_hidden = 18944,
                     .heads = 28,
                     .kv_heads = 4};
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&q, &err) == 0, "%s", err.msg);
    tsl_layer_cost_t r;
    tsl_strategy_t tp8 = one(TSL_DIM_TP, 8, false);
    tsl_cost_layer(&env, &q, &tp8, NULL, 1, &r);
    CHECK(!r.feasible, "tp8 does not divide 28 heads");
    tsl_cluster_free(&c);
    make_env(&c, &env, 1, 4);
    tsl_strategy_t tp4 = one(TSL_DIM_TP, 4, false);
    tsl_cost_layer(&env, &q, &tp4, NULL, 1, &r);
    CHECK(r.feasible, "tp4 divides 28 heads, 4 K/V heads, 18944");
    q.kv_heads = 2;
    tsl_cost_layer(&env, &q, &tp4, NULL, 1, &r);
    CHECK(!r.feasible, "tp4 does not divide 2 K/V heads");

    /* GPT-2's 50257 tokens pad to 50304 at t = 1 (128·1) and 50688 at t = 4 (99·512) */
    tsl_layer_t e = {.kind = TSL_LAYER_EMBEDDING, .seq_len = 128, .hidden = 1024, .vocab = 50257};
    CHECK(tsl_layer_derive(&e, &err) == 0, "%s", err.msg);
    tsl_cost_layer(&env, &e, &tp4, NULL, 1, &r);
    CHECK(r.ms_bytes == 16ull * 50688 * 1024 / 4, "padded embedding states at t = 4: %llu",
          (unsigned long long)r.ms_bytes);
    tsl_cluster_free(&c);
    make_env(&c, &env, 1, 1);
    tsl_strategy_t single;
    memset(&single, 0, sizeof(single));
    tsl_cost_layer(&env, &e, &single, NULL, 1, &r);
    CHECK(r.ms_bytes == 16ull * 50304 * 1024, "padded to 128 at t = 1");
    tsl_cluster_free(&c);
}

/* Megatron's layout of the vocabulary layers (cost.h "Vocabulary layers"), by hand.
 * GPT-2's 50257 tokens pad to a multiple of 128·t (the executor's
 * tsl_exec_vocab_local rule): 50432 = 197·256 at t = 2, 51200 = 50·1024 at t = 8.
 * The learned position table (1024 × 1024) is replicated over the TP group, the
 * word embedding split: one rank of tp2 holds 50432·1024/2 + 1024·1024 =
 * 26,869,760 parameters (not (50432 + 1024)·1024/2 = 26,345,472). */
static void test_vocab_layers(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_err_t err = {0};
    tsl_layer_cost_t r;
    make_env(&c, &env, 1, 4);
    tsl_layer_t e = {.kind = TSL_LAYER_EMBEDDING,
                     .seq_len = 128,
                     .hidden = 1024,
                     .vocab = 50257,
                     .positions = 1024};
    CHECK(tsl_layer_derive(&e, &err) == 0, "%s", err.msg);
    const double rank = 50432.0 * 1024 / 2 + 1024.0 * 1024; /* 26,869,760 */
    tsl_dim_t td[] = {TSL_DIM_TP, TSL_DIM_DP}, ts[] = {TSL_DIM_TP, TSL_DIM_SDP};
    uint32_t deg[] = {2, 2};
    tsl_strategy_t tp2dp2 = strat(2, td, deg, false), tp2sdp2 = strat(2, ts, deg, false);
    tsl_cost_layer(&env, &e, &tp2dp2, NULL, 2, &r);
    CHECK(r.ms_bytes == 16ull * 26869760,
          "tp2: the position table once per rank: %llu, by hand %llu",
          (unsigned long long)r.ms_bytes, 16ull * 26869760);
    /* its fp16 gradient at full size in the DP all-reduce: 2 ranks over the intra
     * link (100 GB/s), 2·(2 − 1)/2 · 2·26,869,760 B / 100 GB/s = 537.4 µs */
    CHECK_NEAR(r.grad_comm_s, 2.0 * rank / (100 * GB), EPS, "DP all-reduce %g s", r.grad_comm_s);
    /* ZeRO-3: sharded over the data group like everything else */
    tsl_cost_layer(&env, &e, &tp2sdp2, NULL, 2, &r);
    CHECK(r.ms_bytes == 16ull * 26869760 / 2, "tp2 x sdp2: %llu", (unsigned long long)r.ms_bytes);
    tsl_cluster_free(&c);

    /* t = 8: 50257 pads to 51200; with positions 51200·1024/8 + 1024·1024 */
    make_env(&c, &env, 1, 8);
    tsl_strategy_t tp8 = one(TSL_DIM_TP, 8, false);
    tsl_cost_layer(&env, &e, &tp8, NULL, 1, &r);
    CHECK(r.ms_bytes == 16ull * (51200 * 1024 / 8 + 1024 * 1024), "tp8 padding: %llu",
          (unsigned long long)r.ms_bytes);

    /* A tied head owns no parameters beside its embedding; in a later stage it keeps
     * a copy of the padded word embedding: 51200·1024/8 per rank of tp8. */
    tsl_layer_t h = {
        .kind = TSL_LAYER_HEAD, .seq_len = 128, .hidden = 1024, .vocab = 50257, .tied_head = true};
    CHECK(tsl_layer_derive(&h, &err) == 0, "%s", err.msg);
    tsl_cost_layer(&env, &h, &tp8, NULL, 1, &r);
    CHECK(r.ms_bytes == 0, "tied head in its embedding's stage: %llu",
          (unsigned long long)r.ms_bytes);
    env.tied_copy = true;
    tsl_cost_layer(&env, &h, &tp8, NULL, 1, &r);
    CHECK(r.ms_bytes == 16ull * 51200 * 1024 / 8, "tied copy: %llu",
          (unsigned long long)r.ms_bytes);
    tsl_cluster_free(&c);

    /* The tied all-reduce: stage 0 on node 0, the head's stage on node 1 (10 GB/s,
     * one NIC); 2 ranks, ring 2·(2 − 1)/2 · M, M = 2 B · 50432·1024/2 = 51,642,368 B at
     * t = 2, and both TP ranks' pairs cross the one NIC at once: 5 GB/s each, 10.328 ms.
     * Between GPUs of one node the intra link (100 GB/s), one pair: 0.51642 ms. */
    make_env(&c, &env, 2, 2);
    tsl_strategy_t tp2 = one(TSL_DIM_TP, 2, false);
    CHECK_NEAR(tsl_cost_tied_allreduce_elem_s(&c, &h, &tp2, 0, 2, 2, 2.0), 51642368.0 / (5 * GB),
               EPS, "tied all-reduce across nodes, two pairs on one NIC");
    CHECK_NEAR(tsl_cost_tied_allreduce_elem_s(&c, &h, &tp2, 0, 1, 1, 2.0), 51642368.0 / (100 * GB),
               EPS, "tied all-reduce inside a node");
    /* SDP 2 (t = 1, z = 2), the head's block [2, 4) on node 1: M = 2 B · 50304·1024 =
     * 103,022,592 B; the 2-rank sums across nodes, both data ranks' pairs on the NIC,
     * M / 5 GB/s = 20.605 ms, plus the gather over the data group inside node 1,
     * (2 − 1)/2 · M / 100 GB/s = 0.515 ms. */
    tsl_strategy_t sdp2 = one(TSL_DIM_SDP, 2, false);
    CHECK_NEAR(tsl_cost_tied_allreduce_elem_s(&c, &h, &sdp2, 0, 2, 2, 2.0),
               103022592.0 / (5 * GB) + 0.5 * 103022592.0 / (100 * GB), EPS,
               "tied all-reduce plus the SDP gather");
    tsl_strategy_t dp2 = one(TSL_DIM_DP, 2, false); /* z = 1: the sum alone */
    CHECK_NEAR(tsl_cost_tied_allreduce_elem_s(&c, &h, &dp2, 0, 2, 2, 2.0), 103022592.0 / (5 * GB),
               EPS, "tied all-reduce, no SDP");
    CHECK_NEAR(tsl_cost_tied_allreduce_elem_s(&c, &h, &dp2, 0, 2, 1, 2.0), 103022592.0 / (10 * GB),
               EPS, "one pair alone has the NIC");
    h.tied_head = false;
    CHECK(tsl_cost_tied_allreduce_elem_s(&c, &h, &tp2, 0, 2, 2, 2.0) == 0,
          "an untied head sums nothing");
    CHECK(tsl_cost_tied_allreduce_elem_s(&c, &e, &tp2, 0, 2, 2, 2.0) == 0, "not a head");
    tsl_cluster_free(&c);
}

/* Parameters beside the parallel linears that TP does not split (model.h
 * tp_repl_extra, cost model 151). AMP's TransGAN projection 512 -> 81·1024 is a plain
 * nn.Linear in its fork: one rank of tp2 holds it whole, 512·82944 + 82944 =
 * 42,550,272 parameters, with the stage-1 position table (81·1024 = 82,944) 42,633,216
 * in all; split as a Megatron layer it would be 42,550,272 / 2 + 82,944 = 21,358,080.
 * Its fp16 gradient in the DP all-reduce is the whole 2 B · 42,633,216 too. The
 * preset's layers set it (the projection, and the blocks' position tables). */
static void test_tp_repl_extra(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_err_t err = {0};
    tsl_layer_cost_t r;
    make_env(&c, &env, 1, 4);
    tsl_layer_t e = {.kind = TSL_LAYER_EMBEDDING,
                     .seq_len = 81,
                     .hidden = 1024,
                     .positions = 81,
                     .extra_params = 512ull * 82944 + 82944,
                     .tp_repl_extra = true};
    CHECK(tsl_layer_derive(&e, &err) == 0, "%s", err.msg);
    tsl_dim_t td[] = {TSL_DIM_TP, TSL_DIM_DP};
    uint32_t deg[] = {2, 2};
    tsl_strategy_t tp2dp2 = strat(2, td, deg, false);
    tsl_cost_layer(&env, &e, &tp2dp2, NULL, 2, &r);
    CHECK(r.ms_bytes == 16ull * 42633216, "tp2: the projection whole on each rank: %llu",
          (unsigned long long)r.ms_bytes);
    CHECK_NEAR(r.grad_comm_s, 2.0 * 42633216.0 / (100 * GB), EPS, "DP all-reduce %g s",
               r.grad_comm_s);
    /* without the flag, Megatron's layout: the extra parameters split over t */
    e.tp_repl_extra = false;
    tsl_cost_layer(&env, &e, &tp2dp2, NULL, 2, &r);
    CHECK(r.ms_bytes == 16ull * 21358080, "tp2, split: %llu", (unsigned long long)r.ms_bytes);
    tsl_cluster_free(&c);

    tsl_model_t m;
    CHECK(tsl_model_preset("TransGAN-Hetero", &m, &err) == 0, "%s", err.msg);
    size_t whole = 0;
    uint64_t tables = 0;
    for (size_t i = 0; i < m.n_layers; i++) {
        whole += m.layers[i].tp_repl_extra;
        tables += m.layers[i].tp_repl_extra ? m.layers[i].extra_params : 0;
    }
    /* the projection (42,550,272), stages 2-6's position tables (5,640,192) and the
     * 24 blocks' relative-position tables (12·17²·4 + 12·35²·4 = 72,672) */
    CHECK(whole == 25 && !m.layers[m.n_layers - 1].tp_repl_extra &&
              tables == 42550272ull + 5640192 + 72672,
          "TransGAN-Hetero: %zu layers, %llu parameters TP-whole", whole,
          (unsigned long long)tables);
    tsl_model_free(&m);
}

/* Context parallelism on one layer by hand (docs/cost-model.md "Context
 * parallelism"): DP 8 in one node, cp 4 (the 4 innermost DP ranks, stride 1, the
 * node's 100 GB/s), micro-batch 2: each rank holds n = 2/8 sample's tokens, T = 32
 * (2 chunks of 16 of 2·4/8 = one sample). 16 heads of 64, no GQA. PAPER mode: no α. */
static void test_cp(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    tsl_layer_cost_t r, r1;
    tsl_layer_t l = test_layer();
    l.core_fwd_flops = 1e9; /* per sample */
    make_env(&c, &env, 1, 8);
    tsl_strategy_t s = one(TSL_DIM_DP, 8, false);
    const double n = 2.0 / 8, bw = 100 * GB, k = 1.3;
    const double cf = F_FLOPS * n / X_FLOPS, core = 1e9 * n / X_FLOPS;
    const double T = n * SEQ, b_kv = 2 * 2 * T * 16 * 64, b_q = 2 * T * 16 * 64;
    uint32_t stride;
    CHECK(tsl_cost_cp_group(&s, 4, &stride) && stride == 1, "cp group: innermost DP ranks");

    /* cp 1 needs a sample per data rank: micro-batch 2 over 8 is infeasible */
    tsl_cost_layer(&env, &l, &s, NULL, 2, &r);
    CHECK(!r.feasible, "cp 1, micro-batch 2 over DP 8");
    tsl_cost_layer(&env, &l, &s, NULL, 8, &r1);

    /* ring (p2p): 3 steps of B_kv, each under a quarter of the core; backward
     * passes K/V and dK/dV under a quarter of the core's backward (2·core) */
    env.knobs.cp = 4;
    env.knobs.cp_comm = TSL_CP_P2P;
    tsl_cost_layer(&env, &l, &s, NULL, 2, &r);
    double step = b_kv / bw;
    double f = 3 * tsl_cost_overlap_s(core / 4, step, k) + core / 4 - core;
    double b = 3 * tsl_cost_overlap_s(2 * core / 4, 2 * step, k) + 2 * core / 4 - 2 * core;
    CHECK(r.feasible, "cp 4, micro-batch 2 over DP 8");
    CHECK_NEAR(f, 3 * (step + 0.3 * core / 4) - 3 * core / 4, EPS, "ring forward by hand");
    CHECK_NEAR(r.cp_s, f + b, EPS, "ring exposed %g, want %g", r.cp_s, f + b);
    CHECK_NEAR(r.fwd_s, cf + f, EPS, "ring forward: compute + exposed exchange");
    CHECK_NEAR(r.bwd_s, 2 * cf + b, EPS, "ring backward: compute + exposed exchange");
    /* activations ÷ cp: a rank holds a quarter of what one sample per rank holds */
    CHECK(r.fwd_bytes * 4 == r1.fwd_bytes, "activations ÷ 4: %llu vs %llu",
          (unsigned long long)r.fwd_bytes, (unsigned long long)r1.fwd_bytes);
    CHECK(r.ms_bytes == r1.ms_bytes, "model states as DP 8");
    /* the weights' gradients are reduced over DP × CP: the same all-reduce */
    CHECK_NEAR(r.grad_comm_s, r1.grad_comm_s, EPS, "gradient reduce over DP x CP");

    /* all-gather: K/V gathered in the forward, gathered again and dK/dV
     * reduce-scattered in the backward, nothing hidden */
    env.knobs.cp_comm = TSL_CP_ALLGATHER;
    tsl_cost_layer(&env, &l, &s, NULL, 2, &r);
    double ag = 3.0 / 4 * 4 * b_kv / bw;
    CHECK_NEAR(r.cp_s, 3 * ag, EPS, "allgather: %g, want %g", r.cp_s, 3 * ag);
    CHECK(r.cp_s > f + b, "allgather exposes what the ring hides");

    /* torch's context_parallel (torch-allgather): K/V of every head (16: no GQA here,
     * B_kv) gathered once per pass, gathered again in the backward, and dK/dV in fp32
     * (2·B_kv) sent around the ring at each of the 4 steps. PAPER mode: the kernels
     * as one (the ring's kernels are the roofline's, test_roofline). Compiled (eager
     * off, torchtitan's rows): each wait right after its collective, nothing hidden:
     * forward ag = 3·B_kv/bw, backward ag + 4 · 2·B_kv/bw; 14·B_kv/bw in all against
     * TE's all-gather's 9 */
    env.knobs.cp_comm = TSL_CP_TORCH_AG;
    tsl_cost_layer(&env, &l, &s, NULL, 2, &r);
    double dkv = 2 * b_kv / bw;
    CHECK_NEAR(r.cp_s, 14 * b_kv / bw, EPS, "torch-allgather compiled: %g, want %g", r.cp_s,
               14 * b_kv / bw);
    CHECK_NEAR(r.fwd_s, cf + ag, EPS, "torch-allgather compiled forward: the gather exposed");
    CHECK(r.cp_s > 3 * ag, "compiled, torch's ring exposes more than TE's all-gather");
    /* eager (AsyncCollectiveTensor, each wait at the first use): the gather under the
     * first ring step's kernel (a quarter of the core); the backward's gather under
     * its first step, three of the four sends under the next step's backward, the
     * last exposed */
    env.knobs.eager = true;
    tsl_cost_layer(&env, &l, &s, NULL, 2, &r);
    env.knobs.eager = false;
    double tf = tsl_cost_overlap_s(core / 4, ag, k) - core / 4;
    double tb = tsl_cost_overlap_s(2 * core / 4, ag, k) - 2 * core / 4 +
                3 * (tsl_cost_overlap_s(2 * core / 4, dkv, k) - 2 * core / 4) + dkv;
    CHECK_NEAR(r.cp_s, tf + tb, EPS, "torch-allgather eager: %g, want %g", r.cp_s, tf + tb);
    CHECK_NEAR(r.fwd_s, cf + tf, EPS, "torch-allgather eager forward");
    CHECK(r.cp_s < 3 * ag, "eager, torch's gather runs under the first step");

    /* Ulysses: all-to-all of Q, K, V and of O, (c−1)/c of the rank's bytes, both ways */
    env.knobs.cp_comm = TSL_CP_A2A;
    tsl_cost_layer(&env, &l, &s, NULL, 2, &r);
    double a2a = 3.0 / 4 * (2 * b_q + b_kv) / bw;
    CHECK_NEAR(r.cp_s, 2 * a2a, EPS, "a2a: %g, want %g", r.cp_s, 2 * a2a);
    CHECK_NEAR(r.fwd_s, cf + a2a, EPS, "a2a forward");

    /* feasibility: cp must divide the data level, 2·cp the sequence; a2a splits heads */
    env.knobs.cp = 3;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &r);
    CHECK(!r.feasible, "cp 3 does not divide DP 8");
    CHECK(!tsl_cost_cp_fits(&l, &s, 128, TSL_CP_P2P), "2·128 does not divide 128 tokens");
    l.kv_heads = 2;
    CHECK(!tsl_cost_cp_fits(&l, &s, 4, TSL_CP_A2A) && tsl_cost_cp_fits(&l, &s, 4, TSL_CP_P2P),
          "a2a needs K/V heads divisible by cp; the ring does not");
    tsl_strategy_t tp = one(TSL_DIM_TP, 8, false);
    CHECK(!tsl_cost_cp_fits(&l, &tp, 2, TSL_CP_P2P), "no data level, no CP group");
    CHECK(tsl_cp_comm_parse("a2a") == TSL_CP_A2A && tsl_cp_comm_parse("a2a+p2p") == -1 &&
              strcmp(tsl_cp_comm_name(TSL_CP_ALLGATHER), "allgather") == 0 &&
              tsl_cp_comm_parse("torch-allgather") == TSL_CP_TORCH_AG,
          "Megatron's --cp-comm-type names, and torch's");
    tsl_cluster_free(&c);
}

/* One Llama 3 405B layer at seq s (h 16384, GQA 128 / 8 heads, SwiGLU 53248, RMSNorm,
 * no biases, no dropout, causal), derived. */
static tsl_layer_t llama3_405b_layer(uint32_t s, tsl_err_t *err)
{
    tsl_layer_t l = {.kind = TSL_LAYER_ENCODER,
                     .seq_len = s,
                     .hidden = 16384,
                     .ffn_hidden = 53248,
                     .heads = 128,
                     .kv_heads = 8,
                     .causal = true,
                     .gated_ffn = true,
                     .no_bias = true,
                     .rms_norm = true,
                     .no_dropout = true};
    CHECK(tsl_layer_derive(&l, err) == 0, "%s", err->msg);
    return l;
}

/* The Llama 3 paper's CP (Dubey et al. 2024, Sec. 3.3.2; bench/published row
 * llama3-405b-128k-cp16): one Llama 3 405B layer at 131,072 tokens, TP 8 in a node,
 * CP 16 over 16 nodes, one 400 Gb/s RoCE NIC per GPU, micro-batch 1 over the CP
 * group: a rank holds 8,192 tokens (chunks i and 31 − i). K and V are all-gathered
 * before the core, exposed: with GQA's 8 K/V heads a TP rank holds one,
 * B_kv = 2·2·8192·1·128 = 4 MiB, the group 64 MiB; the rank's NIC moves 15/16 of it
 * at 400/8 · 0.80 = 40 GB/s, 1.57 ms + α in the forward and twice that in the
 * backward (re-gather, reduce-scatter of dK/dV): 5.37 ms (cost model 150), a few
 * percent of the layer, as the paper's "negligible" says. Ring attention hides more of the same
 * bytes. */
static void test_cp_llama3(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "16x8xH100-80G:8xroce400", &err) == 0, "%s", err.msg);
    tsl_layer_t l = llama3_405b_layer(131072, &err);
    tsl_cost_env_t env;
    CHECK(tsl_cost_env_init(&env, &c, 0, 128, &err) == 0, "%s", err.msg);
    env.knobs.cp = 16;
    env.knobs.cp_comm = TSL_CP_ALLGATHER;
    tsl_strategy_t s;
    CHECK(tsl_strategy_parse("tp8-dp16+sp", &s, &err) == 0, "%s", err.msg);
    tsl_strategy_bw_t bw;
    tsl_cost_strategy_bw(&env, &s, &bw);
    CHECK_NEAR(bw.cp_bw, 400e9 / 8 * 0.80, 1e-3, "CP group: one RoCE NIC per GPU, %g", bw.cp_bw);
    tsl_layer_cost_t r, ring;
    tsl_cost_layer(&env, &l, &s, NULL, 1, &r);
    CHECK(r.feasible, "cp 16, micro-batch 1 over DP 16");
    const double b_kv = 2.0 * 2 * 8192 * 1 * 128; /* K and V, bf16, one K/V head per TP rank */
    CHECK(b_kv == 4 << 20, "B_kv %g", b_kv);
    tsl_coll_choice_t how;
    const double ag = tsl_cluster_coll_allgather_s(&bw.cp_lat, 16 * b_kv, 16, bw.cp_bw, &how);
    CHECK_NEAR(r.cp_s, 3 * ag, 1e-12, "allgather exposed %g, want %g", r.cp_s, 3 * ag);
    /* 64 MiB: NCCL's ring Simple, bandwidth-bound; its α (base 8.4 µs + 15 network
     * steps of 14 µs + post overheads) well under the bytes' 1.57 ms */
    CHECK(how.algo == TSL_NCCL_RING && how.proto == TSL_NCCL_SIMPLE, "ring Simple: %s %s",
          tsl_nccl_algo_name(how.algo), tsl_nccl_proto_name(how.proto));
    CHECK(ag > 1.572864e-3 && ag < 1.572864e-3 + 0.4e-3, "forward gather by hand: %g", ag);
    CHECK(r.cp_s < 0.08 * (r.fwd_s + r.bwd_s), "the gather small beside the layer: %g of %g",
          r.cp_s, r.fwd_s + r.bwd_s);
    env.knobs.cp_comm = TSL_CP_P2P;
    tsl_cost_layer(&env, &l, &s, NULL, 1, &ring);
    CHECK(ring.cp_s < r.cp_s, "the ring hides what the all-gather exposes: %g < %g", ring.cp_s,
          r.cp_s);
    tsl_cluster_free(&c);
}

/* TE's p2p ring where every hop crosses the network (cost model 192): one Llama 3 405B
 * layer at 131,072 tokens, TP 8 filling each node, CP 16 over 16 nodes (one CP rank an
 * NVLink domain: cp_lat.k == cp_lat.n), 400 Gb/s InfiniBand a GPU. Each step's transfer m (B_kv over the rank's
 * NIC, the gather's α spread over its steps) runs beside a far longer core block, so
 * all the exchange costs is what the block loses beside it: NCCL's send/recv kernels
 * hold 2 channels a network peer, one CTA each, two peers (cp_p2p_net_ctas), so the
 * block runs at (132 − 4)/132 of the H100 for m: 15 steps × (m + 2m) × 4/132, not
 * k − 1 = 0.3 of it. TP 4 × DP 32 (two CP ranks a node: one hop on NVLink, where a
 * peer's channels are an all-reduce's) keeps k, and PAPER mode too. */
static void test_cp_p2p_net(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "16x8xH100-80G:8xib400", &err) == 0, "%s", err.msg);
    tsl_layer_t l = llama3_405b_layer(131072, &err);
    tsl_cost_env_t env;
    CHECK(tsl_cost_env_init(&env, &c, 0, 128, &err) == 0, "%s", err.msg);
    CHECK(env.mode != TSL_COST_PAPER && env.gemm_shape.sms == 132, "H100: 132 SMs, %g",
          env.gemm_shape.sms);
    env.knobs.cp = 16;
    env.knobs.cp_comm = TSL_CP_P2P;
    tsl_strategy_t s, s4;
    CHECK(tsl_strategy_parse("tp8-dp16+sp", &s, &err) == 0, "%s", err.msg);
    CHECK(tsl_strategy_parse("tp4-dp32+sp", &s4, &err) == 0, "%s", err.msg);
    tsl_strategy_bw_t bw, bw4;
    tsl_cost_strategy_bw(&env, &s, &bw);
    tsl_cost_strategy_bw(&env, &s4, &bw4);
    CHECK(bw.cp_lat.n == 16 && bw.cp_lat.k == 16, "a CP rank a node: %u ranks, %u domains",
          bw.cp_lat.n, bw.cp_lat.k);
    CHECK(bw4.cp_lat.n == 16 && bw4.cp_lat.k == 8, "two CP ranks a node: %u ranks, %u domains",
          bw4.cp_lat.n, bw4.cp_lat.k);
    const double b_kv = 2.0 * 2 * 8192 * 1 * 128; /* K and V, bf16, one K/V head a TP rank */
    const double m = tsl_cluster_coll_allgather_s(&bw.cp_lat, 16 * b_kv, 16, bw.cp_bw, NULL) / 15;
    tsl_layer_cost_t r;
    tsl_cost_layer(&env, &l, &s, NULL, 1, &r);
    CHECK(r.feasible, "cp 16 over 16 nodes");
    CHECK_NEAR(r.cp_s, 15 * 3 * m * 4.0 / 132, 1e-12, "network ring: %g, want %g", r.cp_s,
               15 * 3 * m * 4.0 / 132);
    CHECK(r.cp_s < 0.11 * 15 * 3 * m * 0.3, "a tenth of the k price: %g", r.cp_s);
    /* two CP ranks a node: the overlap slowdown k on the group's step */
    const double m4 =
        tsl_cluster_coll_allgather_s(&bw4.cp_lat, 16 * 2 * b_kv, 16, bw4.cp_bw, NULL) / 15;
    tsl_cost_layer(&env, &l, &s4, NULL, 2, &r); /* two CP groups: 8,192 tokens a rank */
    CHECK(r.feasible, "cp 16 over 8 nodes");
    CHECK_NEAR(r.cp_s, 15 * 3 * m4 * 0.3, 1e-12, "mixed ring keeps k: %g, want %g", r.cp_s,
               15 * 3 * m4 * 0.3);
    /* PAPER: the bytes alone, and k */
    env.mode = TSL_COST_PAPER;
    tsl_cost_layer(&env, &l, &s, NULL, 1, &r);
    CHECK_NEAR(r.cp_s, 15 * 3 * b_kv / bw.cp_bw * 0.3, 1e-12, "PAPER keeps k: %g", r.cp_s);
    tsl_cluster_free(&c);
}

/* One causal flash core on an H100 TP rank at the family's default shares (gemm_eff.h:
 * the settled clock, the causal rule): q queries, s keys (s + 1)/2 of them visited,
 * `heads` heads of 128; forward + backward (2.5 × the forward's FLOPs), seconds. The
 * backward's 0.18, measured at 1,024 keys, × `bwd_keys`: FlashAttention-2's published
 * backward at head dimension 128 and s keys over its 260 TFLOP/s at 1,024 (cost model
 * 172; the FA3 paper's Fig. 6: 318 at 8k, 322 at 16k and flat past it). */
static double h100_causal_core_s(double q, double s, double heads, double bwd_keys)
{
    const double peak = 989e12, v = (s + 1) / 2, hd = 128;
    const double causal = TSL_ATTN_CAUSAL_EFF * v / (v + TSL_ATTN_CAUSAL_KEYS);
    const double fwd = 4 * q * v * hd * heads;
    return fwd / (peak * TSL_ATTN_H100_FWD_EFF * TSL_ATTN_GH100_SETTLED * causal) +
           TSL_ROOFLINE_FLASH_BWD_FLOPS * fwd /
               (peak * TSL_ATTN_H100_BWD_EFF * bwd_keys * TSL_ATTN_GH100_SETTLED * causal);
}

/* Where the Llama 3 128K row's time goes (bench/published/README.md "Llama 3 rows at
 * cost model 150"): a rank of the CP 16 row at 131,072 tokens and a rank of the DP 128
 * row at 8,192 both hold 8,192 tokens a micro-batch, so every GEMM, norm, TP
 * collective and stash is the same; the 128K layer costs more by its causal core and
 * its exposed K/V all-gather alone. The core is counted causal and split exactly
 * 1/16 a rank by the load-balanced chunks: TE's all-gather kernels (chunk j: 4,096
 * queries over the keys up to its end, bottom-right) sum to one causal kernel of
 * 8,192 queries over (131,072 + 1)/2 keys — 4.40 TFLOP forward, 79.3 ms with its
 * backward against 5.2 ms at 8K since cost model 172 (94.3 and 6.1 when the backward
 * took its 1,024-key share at every length: 88.3 ms of extra core, now 74.1). */
static void test_cp_llama3_extra(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "16x8xH100-80G:8xroce400", &err) == 0, "%s", err.msg);
    tsl_layer_t l8 = llama3_405b_layer(8192, &err), l128 = llama3_405b_layer(131072, &err);
    tsl_cost_env_t env;
    CHECK(tsl_cost_env_init(&env, &c, 0, 128, &err) == 0, "%s", err.msg);
    tsl_strategy_t s;
    CHECK(tsl_strategy_parse("tp8-dp16+sp", &s, &err) == 0, "%s", err.msg);
    tsl_layer_cost_t r8, r128;
    tsl_cost_layer(&env, &l8, &s, NULL, 16, &r8); /* one 8K sequence per rank */
    env.knobs.cp = 16;
    env.knobs.cp_comm = TSL_CP_ALLGATHER;
    tsl_cost_layer(&env, &l128, &s, NULL, 1, &r128); /* one 128K sequence per CP group */
    CHECK(r8.feasible && r128.feasible, "both layers run");
    const double extra = r128.fwd_s + r128.bwd_s - (r8.fwd_s + r8.bwd_s);
    const double core = h100_causal_core_s(8192, 131072, 16, 322.0 / 260.0) -
                        h100_causal_core_s(8192, 8192, 16, 318.0 / 260.0);
    CHECK_NEAR(extra - r128.cp_s, core, 5e-3,
               "the 128K layer's extra beyond its exchange %g, the "
               "causal core's %g",
               extra - r128.cp_s, core);
    CHECK(r128.cp_s < 0.07 * extra, "the exchange %g of the extra %g", r128.cp_s, extra);
    CHECK(core > 0.073 && core < 0.076, "74 ms of core by hand: %g", core);
    /* at the 1,024-key share the extra core was 88 ms: the keys' factor is what moved */
    const double flat =
        h100_causal_core_s(8192, 131072, 16, 1.0) - h100_causal_core_s(8192, 8192, 16, 1.0);
    CHECK(flat > 0.085 && flat < 0.090 && extra - r128.cp_s < flat - 0.01,
          "88 ms at the flat share, %g priced", extra - r128.cp_s);
    tsl_cluster_free(&c);
}

/* What a Llama 3 405B layer keeps for its backward on one rank of the paper's
 * Table 4 run (seq 8192, TP 8 with SP, bf16, flash attention, no recompute), tensor
 * by tensor as Megatron-LM with TransformerEngine saves it (bench/published/README.md
 * "Llama 3 rows"; TE d0067d0 LayerNormLinear/Linear/FusedAttnFunc, Megatron d98e8a6
 * SwiGLUFunction), per token of the rank's s/t under SP, h = d = 16384, e = 1024
 * (8 K/V heads of 128), f = 53248:
 *   RMSNorm inputs (TE's inputmat: the layer input, x + attention)  2·2h = 65536
 *   RMSNorm outputs (ln_out, the QKV and fc1 inputs: the local
 *     shard, all-gathered again in the backward)                   2·2h = 65536
 *   Q after RoPE 2d, attention output (= the proj input) 2d                 65536
 *   K, V (one K/V head per TP rank) 2e + 2e                                  4096
 *   fc1 output (SwiGLU's input) 2·2f, SwiGLU output (fc2's input) 2f       319488
 * = 520192 bytes = 31.75·h; × 8192 tokens / 8 = 532,676,608 per micro-batch.
 * Left out (< 0.2 %): flash's fp32 softmax statistics (4 bytes × 16 heads per
 * token), the norms' fp32 rsigma. Model states per layer, Megatron's distributed
 * optimizer over DP 64 with fp32 gradients: P/8 · (2 + 4 + 12/64), P = 2·h·d +
 * 2·h·e + 3·h·f + 2·h = 3,187,703,808. */
static void test_llama3_405b_memory(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "64x8xH100-80G:8xroce400", &err) == 0, "%s", err.msg);
    tsl_layer_t l = llama3_405b_layer(8192, &err);
    CHECK(l.params == 3187703808ull, "params %llu", (unsigned long long)l.params);
    CHECK(l.act_repl_bytes == 8ull * 8192 * 16384, "norm inputs and outputs %llu",
          (unsigned long long)l.act_repl_bytes);
    CHECK(l.act_shard_bytes == 8192ull * (4 * 16384 + 4 * 1024 + 6 * 53248), "Q, O, K, V, FFN %llu",
          (unsigned long long)l.act_shard_bytes);
    tsl_cost_env_t env;
    CHECK(tsl_cost_env_init(&env, &c, 0, 512, &err) == 0, "%s", err.msg);
    env.knobs.grad_reduce_bytes = 4;
    tsl_strategy_t s;
    CHECK(tsl_strategy_parse("tp8-dp64+sp+zero1", &s, &err) == 0, "%s", err.msg);
    tsl_layer_cost_t r;
    tsl_cost_layer(&env, &l, &s, NULL, 64, &r); /* one sequence per DP rank */
    CHECK(r.feasible, "tp8-dp64+sp+zero1, micro-batch 1 per DP rank");
    CHECK(r.fwd_bytes == 532676608ull && r.bwd_bytes == 0, "stash %llu / %llu",
          (unsigned long long)r.fwd_bytes, (unsigned long long)r.bwd_bytes);
    const double ms = 3187703808.0 / 8 * (2 + 4 + 12.0 / 64);
    CHECK_NEAR((double)r.ms_bytes, ms, 1e-6, "model states %llu, want %.0f",
               (unsigned long long)r.ms_bytes, ms);
    tsl_cluster_free(&c);
}

/* FP8's memory on one H100 TP pair with SP (docs/cost-model.md "FP8"):
 * delayed scaling keeps 2 bytes of FP8 weight copies per linear weight element
 * and stashes the linear inputs in 1 byte instead of 2; tensorwise (torchao)
 * neither; an A100 block prices none of it. */
static void test_fp8_memory(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "2xH100-80G", &err) == 0, "%s", err.msg);
    tsl_layer_t l = encoder_4k();
    tsl_cost_env_t env;
    CHECK(tsl_cost_env_init(&env, &c, 0, 2, &err) == 0, "%s", err.msg);
    /* FP8 e_max 0.632: the H200's sustained FP8 rate (MSMF), 65.1 %, x 0.97 (cluster_hw.c) */
    CHECK_NEAR(env.device_fp8_flops, 1979e12 * 0.632, 1e-9, "H100 FP8 rate: FP8 peak x its e_max");
    tsl_strategy_t s = one(TSL_DIM_TP, 2, false);
    s.sp = true;
    tsl_layer_cost_t b, f8, tw;
    tsl_cost_layer(&env, &l, &s, NULL, 4, &b);
    env.knobs.fp8 = TSL_FP8_DELAYED;
    tsl_cost_layer(&env, &l, &s, NULL, 4, &f8);
    env.knobs.fp8 = TSL_FP8_TENSORWISE; /* TE's current scaling: as delayed in memory */
    tsl_cost_layer(&env, &l, &s, NULL, 4, &tw);
    CHECK(tw.ms_bytes == f8.ms_bytes && tw.fwd_bytes == f8.fwd_bytes,
          "TE tensorwise: the weight copies and FP8 stashes of delayed");
    env.knobs.fp8_impl = TSL_FP8_IMPL_TORCHAO;
    tsl_cost_layer(&env, &l, &s, NULL, 4, &tw);
    env.knobs.fp8_impl = TSL_FP8_IMPL_TE;
    double w8 = (2.0 * 4096 * 4096 * 2 + 2.0 * 16384 * 4096) / 2; /* QKV + out, FFN, / t */
    double stash = 4 * (2.0 * 2048 * 4096 / 2 + 2048.0 * (4096 + 16384) / 2);
    CHECK(f8.ms_bytes - b.ms_bytes == (uint64_t)(2 * w8), "FP8 weight copies: %llu",
          (unsigned long long)(f8.ms_bytes - b.ms_bytes));
    /* ... but the output projection's input (cost model 170): the fused core keeps
     * its bf16 output and TE its FP8 copy beside it, 3 B where bf16 counts 2 */
    double proj = 4 * 2048.0 * 4096 / 2;
    CHECK(b.fwd_bytes - f8.fwd_bytes == (uint64_t)(stash - 2 * proj), "FP8 stashes: %llu vs %g",
          (unsigned long long)(b.fwd_bytes - f8.fwd_bytes), stash - 2 * proj);
    CHECK(tw.ms_bytes == b.ms_bytes && tw.fwd_bytes == b.fwd_bytes,
          "torchao tensorwise: bf16 stashes, no weight copies kept");
    CHECK(f8.fwd_s < b.fwd_s && f8.bwd_s < b.bwd_s, "FP8 faster on this layer");
    tsl_cluster_free(&c);
    CHECK(tsl_cluster_parse_spec(&c, "2xA100-80G", &err) == 0, "%s", err.msg);
    CHECK(tsl_cost_env_init(&env, &c, 0, 2, &err) == 0, "%s", err.msg);
    CHECK(env.device_fp8_flops == 0, "A100: no FP8");
    tsl_cost_layer(&env, &l, &s, NULL, 4, &b);
    env.knobs.fp8 = TSL_FP8_DELAYED;
    tsl_cost_layer(&env, &l, &s, NULL, 4, &f8);
    CHECK(f8.fwd_s == b.fwd_s && f8.ms_bytes == b.ms_bytes, "A100: FP8 knob prices nothing");
    tsl_cluster_free(&c);
}

/* Under torch.autocast (cost.h knobs.autocast, docs/cost-model.md "Autocast"), on
 * one H100, a GPT-2 medium layer (causal, unfused, no dropout) at 16 samples: fp32
 * weights and gradients, Adam's m and v and the bf16 copies the forward casts:
 * 2 + 4 + 12 = 18 B per parameter (16 without); the activations keep each norm's
 * fp32 input (+2 B, two norms) and the fp32 softmax beside its bf16 copy (+4 B
 * per score): 16 × (4·s·h + 4·a·s²) bytes more; the step streams 28 B (read the
 * fp32 weight, gradient, m, v, write three), no 16-bit copy; an untied LM head
 * keeps GPT-2's 50257 rows (no padding to 50304). */
static void test_autocast_memory(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "1xH100-80G", &err) == 0, "%s", err.msg);
    tsl_layer_t l = gpt2_medium(1024);
    l.causal = l.no_dropout = l.unfused_attn = true;
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    tsl_cost_env_t env;
    CHECK(tsl_cost_env_init(&env, &c, 0, 1, &err) == 0, "%s", err.msg);
    tsl_strategy_t s = one(TSL_DIM_DP, 1, false);
    tsl_layer_cost_t b, a;
    tsl_cost_layer(&env, &l, &s, NULL, 16, &b);
    env.knobs.autocast = true;
    tsl_cost_layer(&env, &l, &s, NULL, 16, &a);
    CHECK(b.ms_bytes == 16 * l.params && a.ms_bytes == 18 * l.params, "states %llu / %llu",
          (unsigned long long)b.ms_bytes, (unsigned long long)a.ms_bytes);
    uint64_t more = 16ull * (4 * 1024 * 1024 + 4ull * 16 * 1024 * 1024);
    CHECK(a.fwd_bytes - b.fwd_bytes == more, "activations + %llu (by hand %llu)",
          (unsigned long long)(a.fwd_bytes - b.fwd_bytes), (unsigned long long)more);
    CHECK(a.fwd_s > b.fwd_s && a.bwd_s > b.bwd_s, "autocast slower");
    /* a micro-batch that accumulates into .grad (bwd_s) against the one that does
     * not (bwd_sync_s: one micro-batch of m spared; no DP, so nothing else apart):
     * 12 B per parameter and a kernel per tensor (12), tsl_roofline_layer_bwd_acc_s */
    CHECK_NEAR(a.bwd_s - a.bwd_sync_s, 12.0 * l.params / (0.8 * 3350e9) + 12 * 4e-6, 1e-9,
               "accumulation %g s", a.bwd_s - a.bwd_sync_s);
    CHECK(b.bwd_s == b.bwd_sync_s, "bf16 stack: none priced");
    tsl_cost_knobs_t k = {.autocast = true};
    CHECK(tsl_cost_opt_step_bytes(&k) == 28, "autocast step: 28 B");
    /* with main's bf16 moments (the merge): m and v read and written in 2 B each,
     * 8 + 8 + 4 = 20 B; the states 2 + 4 + (4 + 2 + 2) = 14 B per parameter */
    k.bf16_moments = true;
    CHECK(tsl_cost_opt_step_bytes(&k) == 20, "autocast, bf16 moments: 20 B");
    CHECK_NEAR(a.opt_s, 28.0 * l.params / (0.8 * 3350e9) + 4e-6, 1e-12, "step of %g s", a.opt_s);
    tsl_layer_t h = {.kind = TSL_LAYER_HEAD, .seq_len = 1024, .hidden = 1024, .vocab = 50257};
    CHECK(tsl_layer_derive(&h, &err) == 0, "%s", err.msg);
    env.knobs.autocast = false;
    tsl_cost_layer(&env, &h, &s, NULL, 1, &b);
    env.knobs.autocast = true;
    tsl_cost_layer(&env, &h, &s, NULL, 1, &a);
    CHECK(b.ms_bytes == 16ull * 50304 * 1024 && a.ms_bytes == 18ull * 50257 * 1024,
          "head: padded %llu, as given %llu", (unsigned long long)b.ms_bytes,
          (unsigned long long)a.ms_bytes);
    /* the script's loss over one sample's 1024 × 50257 logits: kept, the fp32
     * log-probabilities (4 B each) and the bf16 logits the script holds (2 B), beside
     * the GEMM's bf16 input (2·s·h) and the final norm's fp32 input (4·s·h); while
     * log_softmax's backward runs, nll_loss's fp32 gradient and its own (8 B per
     * logit, transient: bwd_bytes) */
    uint64_t logits = 1024ull * 50257;
    CHECK(b.bwd_bytes == 2 * logits && a.bwd_bytes == 8 * logits,
          "loss transient %llu (the executor's %llu)", (unsigned long long)a.bwd_bytes,
          (unsigned long long)b.bwd_bytes);
    /* the script's loss is torch's whatever the knob says (loss_impl.h) */
    env.knobs.loss_impl = TSL_LOSS_TE;
    tsl_layer_cost_t te;
    tsl_cost_layer(&env, &h, &s, NULL, 1, &te);
    CHECK(te.fwd_bytes == a.fwd_bytes && te.bwd_bytes == a.bwd_bytes, "autocast: torch's loss");
    CHECK(a.fwd_bytes == (2 + 4) * logits + 2 * 1024 * 1024 + 4 * 1024 * 1024, "head stash %llu",
          (unsigned long long)a.fwd_bytes);
    tsl_cluster_free(&c);
}

/* The LM loss as each stack runs it (loss_impl.h, docs/cost-model.md "The loss's memory"):
 * GPT-2's untied head, s 1024, h 1024, V 50257, one sample per H100 (DP 2). The
 * head keeps its bf16 input (2·s·h) and, per logit L = s·V, what the loss keeps;
 * its transient, max(forward, backward), is the head's O_b:
 *   exec      4 B kept (fp32 dlogits); 2 B (the bf16 logits workspace)
 *   torch     4 B (log_softmax's output); max(2 + 4, 4 + 4) = 8 B
 *   megatron  4 B (the fp32 softmax); max(2 bf16 logits, 2 bf16 gradient) = 2 B
 *   te        2 B (the bf16 logits, the gradient written into them); 0
 *   torch-compile  2 B (the compiled graph's saved bf16 input, the logits);
 *             max(0, 2 the bf16 input gradient) = 2 B
 *   fused-xentropy 2 B (the saved bf16 logits); 0 (per-row outputs, the gradient
 *             written into the logits in place)
 *   composer  2 B (the same saved logits); 2 B (llm-foundry's non-in-place backward
 *             writes a new bf16 gradient; cost model 120)
 *   megatron-fused 4 B (megatron's fp32 softmax); max(2, 4 + 2) = 6 B: the compiled
 *             backward's fp32 clone of the softmax beside the bf16 gradient (cost
 *             model 186; megatron's 2 would not see it)
 * Under TP 2 every figure halves (the vocabulary split: L/2 logits a rank), and
 * torch's loss is loss_parallel's DTensor decomposition (torchtitan under TP):
 * max(2 + 4 + 4, 4 + 4 + 4) = 12 B transient per logit, not 8. */
static void test_loss_impl(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "2xH100-80G", &err) == 0, "%s", err.msg);
    tsl_layer_t h = {.kind = TSL_LAYER_HEAD, .seq_len = 1024, .hidden = 1024, .vocab = 50257};
    CHECK(tsl_layer_derive(&h, &err) == 0, "%s", err.msg);
    tsl_cost_env_t env;
    CHECK(tsl_cost_env_init(&env, &c, 0, 2, &err) == 0, "%s", err.msg);
    const uint64_t L = 1024ull * 50257, x = 2ull * 1024 * 1024;
    const uint64_t kept[] = {4, 4, 4, 2, 2, 2, 2, 4}, peak[] = {2, 8, 2, 0, 2, 0, 2, 6};
    const uint64_t peak_tp[] = {2, 12, 2, 0, 2, 0, 2, 6};
    tsl_strategy_t s1 = one(TSL_DIM_DP, 2, false), s2 = one(TSL_DIM_TP, 2, false);
    for (uint32_t i = 0; i < TSL_LOSS_IMPL_COUNT; i++) {
        CHECK(strstr(TSL_LOSS_IMPL_NAMES, tsl_loss_impl_name(i)) != NULL,
              "the refusals' list names %s", tsl_loss_impl_name(i));
        tsl_layer_cost_t a, b;
        env.knobs.loss_impl = i;
        tsl_cost_layer(&env, &h, &s1, NULL, 2, &a);
        tsl_cost_layer(&env, &h, &s2, NULL, 1, &b);
        CHECK(a.fwd_bytes == kept[i] * L + x && a.bwd_bytes == peak[i] * L,
              "%s: kept %llu, transient %llu", tsl_loss_impl_name(i),
              (unsigned long long)a.fwd_bytes, (unsigned long long)a.bwd_bytes);
        CHECK(b.fwd_bytes == kept[i] * L / 2 + x && b.bwd_bytes == peak_tp[i] * L / 2,
              "%s, TP 2: kept %llu, transient %llu", tsl_loss_impl_name(i),
              (unsigned long long)b.fwd_bytes, (unsigned long long)b.bwd_bytes);
    }
    /* PAPER keeps the seeds' head: the model's 4 B fp32 logits kept, no transient,
     * whatever loss_impl says; autocast's script loss stays as STACK prices it */
    env.mode = TSL_COST_PAPER;
    for (uint32_t i = 0; i < TSL_LOSS_IMPL_COUNT; i++) {
        tsl_layer_cost_t a;
        env.knobs.loss_impl = i;
        tsl_cost_layer(&env, &h, &s1, NULL, 2, &a);
        CHECK(a.fwd_bytes == 4 * L + x && a.bwd_bytes == 0, "PAPER, %s: kept %llu, transient %llu",
              tsl_loss_impl_name(i), (unsigned long long)a.fwd_bytes,
              (unsigned long long)a.bwd_bytes);
    }
    env.knobs.loss_impl = TSL_LOSS_EXEC;
    env.knobs.autocast = true;
    tsl_layer_cost_t pa, sa;
    tsl_cost_layer(&env, &h, &s1, NULL, 2, &pa);
    env.mode = TSL_COST_STACK;
    tsl_cost_layer(&env, &h, &s1, NULL, 2, &sa);
    /* a script's autocast loss under TP is ATen's, not loss_parallel's: 8 B */
    tsl_layer_cost_t ta;
    tsl_cost_layer(&env, &h, &s2, NULL, 1, &ta);
    env.knobs.autocast = false;
    CHECK(pa.fwd_bytes == sa.fwd_bytes && pa.bwd_bytes == sa.bwd_bytes && pa.bwd_bytes == 8 * L,
          "PAPER, autocast: the script's loss (%llu, %llu)", (unsigned long long)pa.bwd_bytes,
          (unsigned long long)sa.bwd_bytes);
    CHECK(ta.bwd_bytes == 8 * L / 2, "autocast, TP 2: transient %llu",
          (unsigned long long)ta.bwd_bytes);
    /* the three figures as loss_impl.h gives them */
    CHECK(tsl_loss_kept_bytes(TSL_LOSS_TORCH) == 4.0 &&
              tsl_loss_fwd_bytes(TSL_LOSS_TORCH, 1) == 6.0 &&
              tsl_loss_bwd_bytes(TSL_LOSS_TORCH, 1) == 8.0 &&
              tsl_loss_fwd_bytes(TSL_LOSS_TORCH, 0) == 6.0 &&
              tsl_loss_fwd_bytes(TSL_LOSS_TORCH, 8) == 10.0 &&
              tsl_loss_bwd_bytes(TSL_LOSS_TORCH, 8) == 12.0 &&
              tsl_loss_fwd_bytes(TSL_LOSS_MEGATRON, 8) == 2.0 &&
              tsl_loss_bwd_bytes(TSL_LOSS_MEGATRON, 1) == 2.0 &&
              tsl_loss_bwd_bytes(TSL_LOSS_EXEC, 8) == 2.0 &&
              tsl_loss_kept_bytes(TSL_LOSS_TE) == 2.0 &&
              tsl_loss_bwd_bytes(TSL_LOSS_TE, 8) == 0.0 && tsl_loss_kept_bytes(9) == 4.0 &&
              tsl_loss_kept_bytes(TSL_LOSS_TORCH_COMPILE) == 2.0 &&
              tsl_loss_fwd_bytes(TSL_LOSS_TORCH_COMPILE, 1) == 0.0 &&
              tsl_loss_bwd_bytes(TSL_LOSS_TORCH_COMPILE, 8) == 2.0 &&
              tsl_loss_kept_bytes(TSL_LOSS_COMPOSER) == 2.0 &&
              tsl_loss_fwd_bytes(TSL_LOSS_COMPOSER, 1) == 0.0 &&
              tsl_loss_bwd_bytes(TSL_LOSS_COMPOSER, 1) == 2.0 &&
              tsl_loss_keeps_logits(TSL_LOSS_COMPOSER) &&
              !tsl_loss_pp_holds_logits(TSL_LOSS_COMPOSER),
          "figures");
    /* a classification head (one token) has no LM loss */
    tsl_layer_t cls = {
        .kind = TSL_LAYER_HEAD, .seq_len = 1024, .hidden = 1024, .vocab = 1000, .head_tokens = 1};
    CHECK(tsl_layer_derive(&cls, &err) == 0, "%s", err.msg);
    tsl_layer_cost_t e, t;
    env.knobs.loss_impl = TSL_LOSS_EXEC;
    tsl_cost_layer(&env, &cls, &s1, NULL, 2, &e);
    env.knobs.loss_impl = TSL_LOSS_TORCH;
    tsl_cost_layer(&env, &cls, &s1, NULL, 2, &t);
    CHECK(e.bwd_bytes == 0 && t.bwd_bytes == 0 && e.fwd_bytes == t.fwd_bytes, "no LM loss");
    /* names both ways, the defaults by target, and the field named when refused */
    CHECK(tsl_loss_impl_parse("exec") == TSL_LOSS_EXEC &&
              tsl_loss_impl_parse("te") == TSL_LOSS_TE && tsl_loss_impl_parse("Torch") == -1 &&
              tsl_loss_impl_parse(NULL) == -1 &&
              strcmp(tsl_loss_impl_name(TSL_LOSS_MEGATRON), "megatron") == 0 &&
              tsl_loss_impl_parse("torch-compile") == TSL_LOSS_TORCH_COMPILE &&
              tsl_loss_impl_parse("fused-xentropy") == TSL_LOSS_FUSED_XENTROPY &&
              tsl_loss_impl_parse("composer") == TSL_LOSS_COMPOSER &&
              strcmp(tsl_loss_impl_name(TSL_LOSS_COMPOSER), "composer") == 0 &&
              tsl_loss_impl_parse("megatron-fused") == TSL_LOSS_MEGATRON_FUSED &&
              strcmp(tsl_loss_impl_name(TSL_LOSS_MEGATRON_FUSED), "megatron-fused") == 0 &&
              tsl_loss_impl_name(8) == NULL,
          "names");
    CHECK(tsl_target_loss_impl(TSL_TARGET_ANY) == TSL_LOSS_EXEC &&
              tsl_target_loss_impl(TSL_TARGET_TORCHTITAN) == TSL_LOSS_TORCH &&
              tsl_target_loss_impl(TSL_TARGET_MEGATRON) == TSL_LOSS_MEGATRON &&
              tsl_target_loss_impl(TSL_TARGET_DEEPSPEED) == TSL_LOSS_MEGATRON &&
              tsl_target_loss_impl(TSL_TARGET_GALVATRON) == TSL_LOSS_MEGATRON,
          "defaults by target");
    tsl_cost_knobs_t k;
    tsl_target_knobs(TSL_TARGET_TORCHTITAN, &k);
    CHECK(k.loss_impl == TSL_LOSS_TORCH, "torchtitan's knobs: torch (%u)", k.loss_impl);
    CHECK(tsl_loss_impl_ok(TSL_LOSS_TE, false, &err) == 0 &&
              tsl_loss_impl_ok(TSL_LOSS_EXEC, true, &err) == 0 &&
              tsl_loss_impl_ok(TSL_LOSS_TORCH, true, &err) == 0,
          "accepted: %s", err.msg);
    CHECK(tsl_loss_impl_ok(8, false, &err) != 0 && strstr(err.msg, "loss_impl: 8"), "%s", err.msg);
    CHECK(tsl_loss_impl_ok(TSL_LOSS_MEGATRON_FUSED, true, &err) != 0 && strstr(err.msg, "autocast"),
          "megatron-fused under autocast: %s", err.msg);
    /* Megatron-LM runs its native fusion; the other stacks do not */
    CHECK(tsl_target_loss_runs(TSL_TARGET_MEGATRON, TSL_LOSS_MEGATRON_FUSED) &&
              !tsl_target_loss_runs(TSL_TARGET_DEEPSPEED, TSL_LOSS_MEGATRON_FUSED) &&
              !tsl_target_loss_runs(TSL_TARGET_TORCHTITAN, TSL_LOSS_MEGATRON_FUSED),
          "megatron-fused by target");
    CHECK(tsl_loss_impl_ok(TSL_LOSS_COMPOSER, true, &err) != 0 && strstr(err.msg, "autocast"),
          "composer under autocast: %s", err.msg);
    CHECK(tsl_loss_impl_ok(TSL_LOSS_FUSED_XENTROPY, true, &err) != 0 && strstr(err.msg, "autocast"),
          "fused-xentropy under autocast: %s", err.msg);
    CHECK(tsl_loss_impl_ok(TSL_LOSS_TORCH_COMPILE, true, &err) != 0 && strstr(err.msg, "autocast"),
          "torch-compile under autocast: %s", err.msg);
    /* torchtitan runs either of torch's losses, the others none */
    CHECK(tsl_target_loss_runs(TSL_TARGET_TORCHTITAN, TSL_LOSS_TORCH_COMPILE) &&
              !tsl_target_loss_runs(TSL_TARGET_MEGATRON, TSL_LOSS_TORCH_COMPILE),
          "torch-compile by target");
    CHECK(tsl_loss_impl_ok(TSL_LOSS_MEGATRON, true, &err) != 0 && strstr(err.msg, "loss_impl") &&
              strstr(err.msg, "autocast"),
          "%s", err.msg);
    tsl_cluster_free(&c);
}

/* FP8 weight all-gathers and the weights' cast (docs/cost-model.md "FP8"), one
 * Transformer layer (h 4096, f 16384, 32 heads, MHA) on 8xH100-80G, PAPER mode:
 * the FP8 linears hold w8 = 4h² + 2fh weight elements of the layer's P. Under
 * SDP 8 with fp8_param_gather (Megatron-LM --fp8-param-gather, torchao's FSDP
 * float8 all-gather) the forward's gather moves 2P − w8 bytes instead of 2P, the
 * backward's again; under ZeRO-1 the weight all-gather after the step the same.
 * Without it delayed scaling casts the FP8 weight copies once per iteration, in
 * the step: 4 B per element at 0.8 × 3350 GB/s + one launch; tensorwise casts per
 * use (in the roofline, not the step). */
static void test_fp8_gather(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "8xH100-80G", &err) == 0, "%s", err.msg);
    const double h = 4096, f = 16384, w8 = 4 * h * h + 2 * f * h;
    tsl_layer_t l = encoder_4k();
    const double P = (double)l.params;
    tsl_cost_env_t env;
    CHECK(tsl_cost_env_init(&env, &c, 0, 8, &err) == 0, "%s", err.msg);
    env.mode = TSL_COST_PAPER;
    const double bw = tsl_cluster_dim_bw(&c, 0, 8, 1, 8);
    tsl_strategy_t sdp = one(TSL_DIM_SDP, 8, false), z1 = one(TSL_DIM_DP, 8, false);
    z1.zero = 1;
    tsl_layer_cost_t a, b, a1, b1, bf;
    tsl_cost_layer(&env, &l, &sdp, NULL, 8, &bf); /* bf16 */
    env.knobs.fp8 = TSL_FP8_DELAYED;
    tsl_cost_layer(&env, &l, &sdp, NULL, 8, &a);
    tsl_cost_layer(&env, &l, &z1, NULL, 8, &a1);
    env.knobs.fp8_param_gather = true;
    tsl_cost_layer(&env, &l, &sdp, NULL, 8, &b);
    tsl_cost_layer(&env, &l, &z1, NULL, 8, &b1);
    double g16 = tsl_cost_allgather_s(2 * P, 8, bw), g8 = tsl_cost_allgather_s(2 * P - w8, 8, bw);
    CHECK_NEAR(a.fwd_s - b.fwd_s, g16 - g8, 1e-9, "SDP: the forward's gather %g -> %g", g16, g8);
    CHECK_NEAR(a.comm_s - b.comm_s, 2 * (g16 - g8), 1e-9, "SDP: both gathers in 1 byte");
    CHECK_NEAR(a.comm_s - bf.comm_s, 0, 1e-12, "without the flag the gathers stay 2 bytes");
    CHECK_NEAR(a1.grad_comm_s - b1.grad_comm_s, g16 - g8, 1e-9, "ZeRO-1's weight all-gather");
    CHECK_NEAR(a1.opt_s - b1.opt_s, 4 * w8 / (0.8 * 3350e9) + 4e-6, 1e-9,
               "delayed: the FP8 weights cast once per step, %g s", a1.opt_s - b1.opt_s);
    env.knobs.fp8 = TSL_FP8_TENSORWISE;
    env.knobs.fp8_param_gather = false;
    tsl_cost_layer(&env, &l, &z1, NULL, 8, &a);
    env.knobs.fp8 = TSL_FP8_NONE;
    tsl_cost_layer(&env, &l, &z1, NULL, 8, &b);
    /* TE current scaling: 6 bytes per element (amax read, read, two FP8 writes) and
     * four kernels (zero-amax, amax, scale, cast; 3 before cost model 163) per
     * tensor, once per step */
    CHECK_NEAR(a.opt_s - b.opt_s, 6 * w8 / (0.8 * 3350e9) + 4 * 4e-6, 1e-9,
               "TE tensorwise: the FP8 weights cast once per step, %g s", a.opt_s - b.opt_s);
    env.knobs.fp8 = TSL_FP8_TENSORWISE;
    env.knobs.fp8_impl = TSL_FP8_IMPL_TORCHAO;
    tsl_cost_layer(&env, &l, &z1, NULL, 8, &a);
    env.knobs.fp8_impl = TSL_FP8_IMPL_TE;
    CHECK_NEAR(a.opt_s, b.opt_s, 1e-15, "torchao: the weights cast per use, not in the step");
    tsl_cluster_free(&c);
}

/* FP8 on Blackwell (docs/cost-model.md "FP8", Time and Memory; cost model 51): the
 * encoder layer of test_fp8_gather on 8 GB200s. The GB200's FP8 GEMMs take every
 * layout, so TE's per-tensor casts write the rowwise copy alone (tensorwise 6 -> 5 B
 * per element, delayed 4 -> 3) and keep one cached FP8 weight (1 B, not 2; with
 * fp8_param_gather the weight's 1 B replaces its 2 bf16 bytes: -1 B); an H100
 * keeps both. MXFP8 keeps both everywhere, and with fp8_param_gather under ZeRO-1
 * (Megatron-LM's reuse_grad_buf_for_mxfp8_param_ag) gathers bf16 and casts every
 * weight once per step: 4 + 2/32 B and a kernel, then the bucket's 2 B zeroed and a
 * kernel; under SDP (Megatron-FSDP) its gathers stay FP8. W = 0.8 x the datasheet
 * bandwidth, L = 4 us. */
static void test_fp8_blackwell(void)
{
    tsl_cluster_t c, h;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "2x4xGB200-186G:nvl72", &err) == 0, "%s", err.msg);
    CHECK(tsl_cluster_parse_spec(&h, "8xH100-80G", &err) == 0, "%s", err.msg);
    const double hd = 4096, f = 16384, w8 = 4 * hd * hd + 2 * f * hd;
    tsl_layer_t l = encoder_4k();
    const double P = (double)l.params;
    tsl_cost_env_t env, envh;
    CHECK(tsl_cost_env_init(&env, &c, 0, 8, &err) == 0, "%s", err.msg);
    CHECK(tsl_cost_env_init(&envh, &h, 0, 8, &err) == 0, "%s", err.msg);
    CHECK(env.device_fp8_any_layout && !envh.device_fp8_any_layout,
          "GB200: any FP8 layout; H100: TN only");
    env.mode = envh.mode = TSL_COST_PAPER;
    const double W = 0.8 * tsl_cluster_device_gpu(&c, 0)->mem_bw, L = 4e-6;
    tsl_strategy_t z1 = one(TSL_DIM_DP, 8, false), sdp = one(TSL_DIM_SDP, 8, false);
    z1.zero = 1;
    tsl_layer_cost_t bf, a, b;
    tsl_cost_layer(&env, &l, &z1, NULL, 8, &bf);
    env.knobs.fp8 = TSL_FP8_TENSORWISE;
    tsl_cost_layer(&env, &l, &z1, NULL, 8, &a);
    CHECK_NEAR(a.opt_s - bf.opt_s, 5 * w8 / W + 4 * L, 1e-9,
               "GB200 TE tensorwise: 5 B per weight element, %g s", a.opt_s - bf.opt_s);
    CHECK_NEAR((double)a.ms_bytes - (double)bf.ms_bytes, w8, 2, "one cached FP8 weight");
    env.knobs.fp8_param_gather = true;
    tsl_cost_layer(&env, &l, &z1, NULL, 8, &b);
    CHECK_NEAR((double)b.ms_bytes - (double)bf.ms_bytes, -w8, 2, "the FP8 weight replaces bf16");
    CHECK_NEAR(b.opt_s, bf.opt_s, 1e-15, "FP8-CS with FP8 weights: no cast in the step");
    env.knobs.fp8_param_gather = false;
    env.knobs.fp8 = TSL_FP8_DELAYED;
    tsl_cost_layer(&env, &l, &z1, NULL, 8, &a);
    CHECK_NEAR(a.opt_s - bf.opt_s, 3 * w8 / W + L, 1e-9, "GB200 delayed: 3 B, one kernel");
    env.knobs.fp8_impl = TSL_FP8_IMPL_TORCHAO;
    env.knobs.fp8 = TSL_FP8_TENSORWISE;
    tsl_cost_layer(&env, &l, &z1, NULL, 8, &a);
    CHECK_NEAR(a.opt_s, bf.opt_s, 1e-15, "torchao: nothing in the step");
    env.knobs.fp8_impl = TSL_FP8_IMPL_TE;
    /* MXFP8: both copies; with FP8 weights under ZeRO-1, the bf16 gather and the cast */
    env.knobs.fp8 = TSL_FP8_MXFP8;
    tsl_cost_layer(&env, &l, &z1, NULL, 8, &a);
    /* TE's MXFP8 quantize at TSL_MXFP8_CAST_MEM_EFF of the datasheet (cost model 189) */
    const double mxr = TSL_ROOFLINE_MEM_EFF / TSL_MXFP8_CAST_MEM_EFF;
    CHECK_NEAR(a.opt_s - bf.opt_s, (4 + 2.0 / 32) * mxr * w8 / W + L, 1e-9, "mxfp8: 4 + 2/32 B");
    CHECK_NEAR((double)a.ms_bytes - (double)bf.ms_bytes, 2 * w8, 2, "mxfp8: two copies");
    env.knobs.fp8_param_gather = true;
    tsl_cost_layer(&env, &l, &z1, NULL, 8, &b);
    CHECK_NEAR(b.opt_s - bf.opt_s, ((4 + 2.0 / 32) * mxr + 2) * w8 / W + 2 * L, 1e-9,
               "mxfp8 ZeRO-1: cast and zero once per step, %g s", b.opt_s - bf.opt_s);
    CHECK_NEAR(b.grad_comm_s, bf.grad_comm_s, 1e-12, "mxfp8 ZeRO-1: the gather in bf16");
    const double bw = tsl_cluster_dim_bw(&c, 0, 8, 1, 8);
    tsl_layer_cost_t s8, s16;
    tsl_cost_layer(&env, &l, &sdp, NULL, 8, &s8);
    env.knobs.fp8_param_gather = false;
    tsl_cost_layer(&env, &l, &sdp, NULL, 8, &s16);
    double g16 = tsl_cost_allgather_s(2 * P, 8, bw), g8 = tsl_cost_allgather_s(2 * P - w8, 8, bw);
    CHECK_NEAR(s16.fwd_s - s8.fwd_s, g16 - g8, 1e-9, "mxfp8 SDP: the gathers stay FP8");
    /* the H100 keeps two per-tensor copies */
    tsl_layer_cost_t hb, ha;
    tsl_cost_layer(&envh, &l, &z1, NULL, 8, &hb);
    envh.knobs.fp8 = TSL_FP8_TENSORWISE;
    tsl_cost_layer(&envh, &l, &z1, NULL, 8, &ha);
    CHECK_NEAR(ha.opt_s - hb.opt_s, 6 * w8 / (0.8 * 3350e9) + 4 * L, 1e-9, "H100: 6 B");
    CHECK_NEAR((double)ha.ms_bytes - (double)hb.ms_bytes, 2 * w8, 2, "H100: two copies");
    tsl_cluster_free(&c);
    tsl_cluster_free(&h);
}

/* The FP8 SP tests' setting: 8 GB200s (two trays in one NVLink domain), one
 * encoder layer (hidden 4096, FFN 16384, 32 heads, 2048 tokens), the stack's
 * pricing without a host floor. */
static void gb200_encoder_env(tsl_cluster_t *c, tsl_layer_t *l, tsl_cost_env_t *env)
{
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(c, "2x4xGB200-186G:nvl72", &err) == 0, "%s", err.msg);
    *l = dense_4k(TSL_LAYER_ENCODER);
    CHECK(tsl_layer_derive(l, &err) == 0 && l->tp_allreduces == 2, "%s", err.msg);
    CHECK(tsl_cost_env_init(env, c, 0, 2, &err) == 0, "%s", err.msg);
    env->mode = TSL_COST_STACK;
    env->host_op_s = 0;
}

/* FP8 sequence-parallel all-gathers (docs/cost-model.md "FP8 sequence-parallel
 * all-gathers"): the encoder layer of test_nvfp4_memory on 8 GB200s, TP 2 + SP,
 * 4 samples, STACK, the TP link priced as a ring (NCCL's alphas zeroed). msg =
 * 2 B x 2048 x 4096 x 4 = 64 MiB; an all-reduce over 2 ranks moves msg / bw, so
 * tp_f = 2 msg / bw (attention and MLP) and one block's all-gather or
 * reduce-scatter half = msg / (2 bw). Both blocks' linears run FP8 (widths
 * multiples of 16): the input's gathers move b_in per element, dY's b_dy
 * (fp8_impl.h), the reduce-scatters 2. Exposed (no overlap knob): the forward
 * pays half (2 + b_in), the backward half (2 + b_dy): comm_s = half (4 + b_in +
 * b_dy), 8 half in bf16. With the overlaps on a slow link (every collective
 * longer than its GEMM) what shows is the transfer less a GEMM term that does
 * not depend on the link: halving the bandwidth adds the transfers again, the
 * forward half (2 + b_in), the backward half (2 + b_in + b_dy) (dY, the
 * re-gather under dX, the reduce-scatter under dW), userbuffers or not; the
 * recomputed MLP and torchtitan's op policy repeat the FP8 gathers they re-run. */
static void test_fp8_sp_gather(void)
{
    tsl_cluster_t c;
    tsl_layer_t l;
    tsl_cost_env_t env;
    gb200_encoder_env(&c, &l, &env);
    tsl_strategy_t s = one(TSL_DIM_TP, 2, false);
    s.sp = true;
    tsl_strategy_bw_t bw, slow, slower;
    tsl_cost_strategy_bw(&env, &s, &bw);
    memset(&bw.tp_lat, 0, sizeof(bw.tp_lat));
    const double msg = 2.0 * 2048 * 4096 * 4, half = msg / (2.0 * bw.tp_bw);
    slow = slower = bw;
    slow.tp_bw = 1e9; /* 33.6 ms per transfer: longer than any GEMM here */
    slower.tp_bw = 0.5e9;
    const double shalf = msg / (2.0 * slow.tp_bw);
    const struct fp8_sp_gather_bytes *v = fp8_sp_gather_bytes;
    for (size_t i = 0; i < sizeof(fp8_sp_gather_bytes) / sizeof(v[0]); i++) {
        const char *name = tsl_fp8_recipe_name(v[i].r), *impl = tsl_fp8_impl_name(v[i].impl);
        env.knobs.fp8 = v[i].r;
        env.knobs.fp8_impl = v[i].impl;
        env.knobs.overlap_tp_dgrad = env.knobs.tp_comm_overlap = false;
        tsl_layer_cost_t a, b;
        /* TE current scaling's amax all-reduces (cost model 163): 4 bytes over the 2
         * ranks per FP8 gather, 2 forward and 2 backward (test_fp8_cs_amax_reduce) */
        double ar = tsl_fp8_impl_amax_reduced(v[i].r, v[i].impl) ? 4.0 : 0.0;
        tsl_cost_layer(&env, &l, &s, &bw, 4, &a);
        CHECK_NEAR(a.comm_s, half * (4.0 + v[i].in + v[i].dy) + 4.0 * ar / bw.tp_bw, 1e-12,
                   "%s/%s exposed: comm %g, by hand %g", name, impl, a.comm_s,
                   half * (4.0 + v[i].in + v[i].dy));
        for (int ov = 0; ov < 3; ov++) { /* none, overlap_tp_dgrad, + userbuffers */
            env.knobs.overlap_tp_dgrad = ov >= 1;
            env.knobs.tp_comm_overlap = ov == 2;
            tsl_cost_layer(&env, &l, &s, &slow, 4, &a);
            tsl_cost_layer(&env, &l, &s, &slower, 4, &b);
            double bwd = shalf * (2.0 + v[i].dy + (ov ? v[i].in : 0.0)) + 2.0 * ar / slow.tp_bw;
            CHECK_NEAR(b.fwd_s - a.fwd_s, shalf * (2.0 + v[i].in) + 2.0 * ar / slow.tp_bw, 1e-9,
                       "%s/%s overlap %d: forward's transfers %g", name, impl, ov,
                       b.fwd_s - a.fwd_s);
            CHECK_NEAR(b.bwd_s - a.bwd_s, bwd, 1e-9, "%s/%s overlap %d: backward's %g, by hand %g",
                       name, impl, ov, b.bwd_s - a.bwd_s, bwd);
        }
        /* what a recompute repeats (exposed): the MLP module its block's gather and
         * reduce-scatter, half (1 + b_in / 2); torchtitan's op policy the forward's
         * all-gathers, 2 half · b_in / 2 */
        env.knobs.overlap_tp_dgrad = env.knobs.tp_comm_overlap = false;
        const uint32_t mods[2] = {TSL_RECOMPUTE_MLP, TSL_RECOMPUTE_TORCHTITAN_OP};
        const double rep[2] = {shalf * (1.0 + v[i].in / 2.0), shalf * v[i].in};
        for (int m = 0; m < 2; m++) {
            tsl_layer_cost_t ra, rb;
            env.knobs.recompute_modules = mods[m];
            tsl_cost_layer(&env, &l, &s, &slow, 4, &ra);
            tsl_cost_layer(&env, &l, &s, &slower, 4, &rb);
            env.knobs.recompute_modules = 0;
            tsl_cost_layer(&env, &l, &s, &slow, 4, &a);
            tsl_cost_layer(&env, &l, &s, &slower, 4, &b);
            double d = (rb.bwd_s - ra.bwd_s) - (b.bwd_s - a.bwd_s);
            CHECK_NEAR(d, rep[m], 1e-9, "%s/%s recompute %u repeats %g, by hand %g", name, impl,
                       mods[m], d, rep[m]);
        }
    }
    /* bf16 where FP8 is not SP's: without SP (all-reduces), in PAPER mode */
    env.knobs.fp8 = TSL_FP8_DELAYED;
    env.knobs.fp8_impl = TSL_FP8_IMPL_TE;
    env.knobs.overlap_tp_dgrad = env.knobs.tp_comm_overlap = false;
    tsl_strategy_t plain = one(TSL_DIM_TP, 2, false);
    tsl_layer_cost_t a;
    tsl_cost_layer(&env, &l, &plain, &bw, 4, &a);
    CHECK_NEAR(a.comm_s, 8.0 * half, 1e-12, "no SP: bf16 all-reduces, %g", a.comm_s);
    env.mode = TSL_COST_PAPER;
    tsl_cost_strategy_bw(&env, &s, &bw);
    tsl_cost_layer(&env, &l, &s, &bw, 4, &a);
    CHECK_NEAR(a.comm_s, 8.0 * msg / (2.0 * bw.tp_bw), 1e-12, "PAPER: 2 bytes, %g", a.comm_s);
    tsl_cluster_free(&c);
}

/* TE delayed scaling's amax reduction (cost model 177; cost.c
 * tsl_cost_fp8_delayed_amax_s): on the 2-GPU block of gb200_encoder_env with NCCL's
 * alphas, 10 layers in 4 chunks (3 layers a chunk, rounded up) — each chunk's forward
 * all-reduces 3 amaxes of 4 GEMMs a layer, 4 B each, over the block, its backward 2, and
 * each pays two launch floors more (the concatenation and the fused update): 4 times
 * (that all-reduce + 2 L) each pass. On one rank the kernels alone; nothing under
 * current scaling, torchao, PAPER or without FP8. */
static void test_fp8_delayed_amax_reduce(void)
{
    tsl_cluster_t c;
    tsl_layer_t l;
    tsl_cost_env_t env;
    gb200_encoder_env(&c, &l, &env);
    tsl_strategy_t s = one(TSL_DIM_TP, 2, false); /* the block's one group of 2 */
    tsl_strategy_bw_t bw;
    tsl_cost_strategy_bw(&env, &s, &bw);
    CHECK(bw.tp_lat.n > 1, "NCCL's alphas priced");
    double launch = TSL_ROOFLINE_LAUNCH_S;
    double ar_f = tsl_cluster_coll_allreduce_s(&bw.tp_lat, 3.0 * 4 * 3 * 4.0, 2, bw.tp_bw, NULL);
    double ar_b = tsl_cluster_coll_allreduce_s(&bw.tp_lat, 2.0 * 4 * 3 * 4.0, 2, bw.tp_bw, NULL);
    CHECK(ar_f > 1e-6 && ar_f < 1e-4, "an amax all-reduce is alpha-bound: %g s", ar_f);
    double f, b;
    env.knobs.fp8_impl = TSL_FP8_IMPL_TE;
    env.knobs.fp8 = TSL_FP8_DELAYED;
    tsl_cost_fp8_delayed_amax_s(&env, NULL, 10, 4, &f, &b);
    CHECK_NEAR(f, 4.0 * (ar_f + 2.0 * launch), 1e-12, "forward: 4 chunks, %g", f);
    CHECK_NEAR(b, 4.0 * (ar_b + 2.0 * launch), 1e-12, "backward: 4 chunks, %g", b);
    tsl_cost_fp8_delayed_amax_s(&env, NULL, 10, 0, &f, &b);
    double one = tsl_cluster_coll_allreduce_s(&bw.tp_lat, 3.0 * 4 * 10 * 4.0, 2, bw.tp_bw, NULL);
    CHECK_NEAR(f, one + 2.0 * launch, 1e-12, "no interleave: one region, %g", f);
    tsl_cost_env_t one_rank;
    CHECK(tsl_cost_env_init(&one_rank, &c, 0, 1, NULL) == 0, "one-rank env");
    one_rank.mode = TSL_COST_STACK;
    one_rank.knobs = env.knobs;
    tsl_cost_fp8_delayed_amax_s(&one_rank, NULL, 10, 1, &f, &b);
    CHECK_NEAR(f, 2.0 * launch, 1e-15, "one rank: the kernels alone, %g", f);
    CHECK_NEAR(b, 2.0 * launch, 1e-15, "one rank: the kernels alone, %g", b);
    env.knobs.fp8 = TSL_FP8_TENSORWISE;
    tsl_cost_fp8_delayed_amax_s(&env, NULL, 10, 4, &f, &b);
    CHECK(f == 0.0 && b == 0.0, "current scaling: none (%g, %g)", f, b);
    env.knobs.fp8_impl = TSL_FP8_IMPL_TORCHAO;
    tsl_cost_fp8_delayed_amax_s(&env, NULL, 10, 4, &f, &b);
    CHECK(f == 0.0 && b == 0.0, "torchao: none (%g, %g)", f, b);
    env.knobs.fp8_impl = TSL_FP8_IMPL_TE;
    env.knobs.fp8 = TSL_FP8_NONE;
    tsl_cost_fp8_delayed_amax_s(&env, NULL, 10, 4, &f, &b);
    CHECK(f == 0.0 && b == 0.0, "bf16: none (%g, %g)", f, b);
    env.knobs.fp8 = TSL_FP8_DELAYED;
    env.mode = TSL_COST_PAPER;
    tsl_cost_fp8_delayed_amax_s(&env, NULL, 10, 4, &f, &b);
    CHECK(f == 0.0 && b == 0.0, "PAPER: none (%g, %g)", f, b);
    tsl_cluster_free(&c);
}

/* TE's amax reduction over TP only, asynchronous (knobs.fp8_amax_tp_only, cost model
 * 185; cost.c amax_tp_only_s): TE da30634a6 under NVTE_DP_AMAX_REDUCE_INTERVAL=0 and
 * NVTE_ASYNC_AMAX_REDUCTION=1. On the 8-GPU block of 2x4xGB200 (TP 2 inside, DP 4), 10
 * layers in 4 chunks: the forward all-reduces its 3 x 4 x 3 amaxes over the 2 TP ranks
 * (not the 8 of cost model 177) and pays the concatenation and the update, the backward
 * the two kernels alone (its all-reduce waited at the next backward region: hidden). At
 * TP 1 no all-reduce and no torch.cat: one launch floor a pass. The switch without it
 * prices as 177 did; the old pricing's whole-group all-reduce is dearer. */
static void test_fp8_amax_tp_only(void)
{
    tsl_cluster_t c;
    tsl_layer_t l;
    tsl_cost_env_t env;
    tsl_err_t err = {0};
    gb200_encoder_env(&c, &l, &env);
    CHECK(tsl_cost_env_init(&env, &c, 0, 8, &err) == 0, "%s", err.msg);
    env.mode = TSL_COST_STACK;
    env.host_op_s = 0;
    env.knobs.fp8_impl = TSL_FP8_IMPL_TE;
    env.knobs.fp8 = TSL_FP8_DELAYED;
    tsl_dim_t dims[] = {TSL_DIM_TP, TSL_DIM_DP};
    uint32_t degs[] = {2, 4};
    tsl_strategy_t s = strat(2, dims, degs, false);
    tsl_strategy_bw_t bw;
    tsl_cost_strategy_bw(&env, &s, &bw);
    double launch = TSL_ROOFLINE_LAUNCH_S;
    double ar_tp = tsl_cluster_coll_allreduce_s(&bw.tp_lat, 3.0 * 4 * 3 * 4.0, 2, bw.tp_bw, NULL);
    CHECK(ar_tp > 1e-6 && ar_tp < 1e-4, "the TP all-reduce alpha-bound: %g s", ar_tp);
    double f0, b0, f, b;
    tsl_cost_fp8_delayed_amax_s(&env, &s, 10, 4, &f0, &b0); /* cost model 177: all 8 ranks */
    env.knobs.fp8_amax_tp_only = true;
    tsl_cost_fp8_delayed_amax_s(&env, &s, 10, 4, &f, &b);
    CHECK_NEAR(f, 4.0 * (ar_tp + 2.0 * launch), 1e-12, "forward: the TP all-reduce, %g", f);
    CHECK_NEAR(b, 4.0 * 2.0 * launch, 1e-15, "backward: its all-reduce hidden, %g", b);
    CHECK(f0 > f && b0 > b + 4.0 * 1e-6, "the whole group's dearer: %g > %g, %g > %g", f0, f, b0,
          b);
    tsl_strategy_t dp = one(TSL_DIM_DP, 8, false); /* TP 1: no reduction, no torch.cat */
    tsl_cost_fp8_delayed_amax_s(&env, &dp, 10, 4, &f, &b);
    CHECK_NEAR(f, 4.0 * launch, 1e-15, "TP 1 forward: the update alone, %g", f);
    CHECK_NEAR(b, 4.0 * launch, 1e-15, "TP 1 backward: the update alone, %g", b);
    tsl_cost_fp8_delayed_amax_s(&env, NULL, 10, 4, &f, &b);
    CHECK_NEAR(f, 4.0 * launch, 1e-15, "no strategy reads as TP 1, %g", f);
    env.knobs.fp8 = TSL_FP8_TENSORWISE;
    tsl_cost_fp8_delayed_amax_s(&env, &s, 10, 4, &f, &b);
    CHECK(f == 0.0 && b == 0.0, "current scaling: none (%g, %g)", f, b);
    CHECK(tsl_fp8_amax_tp_only_ok(true, TSL_FP8_DELAYED, &err) == 0 &&
              tsl_fp8_amax_tp_only_ok(false, TSL_FP8_TENSORWISE, &err) == 0,
          "delayed, or off: accepted");
    CHECK(tsl_fp8_amax_tp_only_ok(true, TSL_FP8_TENSORWISE, &err) != 0 &&
              strstr(err.msg, "fp8_amax_tp_only") && strstr(err.msg, "another recipe is priced"),
          "another recipe refused naming the field: %s", err.msg);
    CHECK(tsl_fp8_amax_tp_only_ok(true, TSL_FP8_NONE, &err) != 0 &&
              strstr(err.msg, "no FP8 recipe is priced"),
          "bf16 refused: %s", err.msg);
    tsl_cluster_free(&c);
}

/* TE current scaling's amax all-reduces under SP (cost model 163; fp8_impl.h
 * tsl_fp8_impl_amax_reduced, cost.c tp_sp_shares): the encoder layer of
 * test_fp8_sp_gather on 8 GB200s, TP 2 + SP, with NCCL's alphas. Each FP8 gather's
 * cast — the column-parallel linears' inputs forward, the row-parallel ones' dY
 * backward, 2 each — first all-reduces a 4-byte amax over the TP group: against
 * delayed scaling (the same 1-byte gathers), comm_s holds 4 such all-reduces, the
 * forward 2 and the backward 2; none without SP, under torchao, or in PAPER mode. */
static void test_fp8_cs_amax_reduce(void)
{
    tsl_cluster_t c;
    tsl_layer_t l;
    tsl_cost_env_t env;
    gb200_encoder_env(&c, &l, &env);
    tsl_strategy_t s = one(TSL_DIM_TP, 2, false), plain = s;
    s.sp = true;
    tsl_strategy_bw_t bw;
    tsl_cost_strategy_bw(&env, &s, &bw);
    CHECK(bw.tp_lat.n > 1, "NCCL's alphas priced");
    double ar = tsl_cluster_coll_allreduce_s(&bw.tp_lat, 4.0, 2, bw.tp_bw, NULL);
    CHECK(ar > 1e-6 && ar < 1e-4, "a 4-byte all-reduce is alpha-bound: %g s", ar);
    tsl_layer_cost_t cs, dl, ao;
    env.knobs.fp8_impl = TSL_FP8_IMPL_TE;
    env.knobs.fp8 = TSL_FP8_DELAYED;
    tsl_cost_layer(&env, &l, &s, &bw, 4, &dl);
    env.knobs.fp8 = TSL_FP8_TENSORWISE;
    tsl_cost_layer(&env, &l, &s, &bw, 4, &cs);
    CHECK_NEAR(cs.comm_s - dl.comm_s, 4.0 * ar, 1e-9, "four amax all-reduces: %g, by hand %g",
               cs.comm_s - dl.comm_s, 4.0 * ar);
    double fd = cs.fwd_s - dl.fwd_s, bd = cs.bwd_s - dl.bwd_s;
    tsl_cost_layer(&env, &l, &plain, &bw, 4, &cs);
    env.knobs.fp8 = TSL_FP8_DELAYED;
    tsl_cost_layer(&env, &l, &plain, &bw, 4, &dl);
    CHECK_NEAR(fd - (cs.fwd_s - dl.fwd_s), 2.0 * ar, 1e-9, "the forward's two, %g",
               fd - (cs.fwd_s - dl.fwd_s));
    CHECK_NEAR(bd - (cs.bwd_s - dl.bwd_s), 2.0 * ar, 1e-9, "the backward's two, %g",
               bd - (cs.bwd_s - dl.bwd_s));
    CHECK_NEAR(cs.comm_s, dl.comm_s, 1e-12, "without SP: none");
    env.knobs.fp8 = TSL_FP8_TENSORWISE;
    env.knobs.fp8_impl = TSL_FP8_IMPL_TORCHAO;
    tsl_cost_layer(&env, &l, &s, &bw, 4, &ao);
    env.knobs.fp8 = TSL_FP8_DELAYED;
    env.knobs.fp8_impl = TSL_FP8_IMPL_TE;
    tsl_cost_layer(&env, &l, &s, &bw, 4, &dl);
    CHECK_NEAR(ao.comm_s, dl.comm_s, 1e-12, "torchao: its 1-byte gathers alone, %g against %g",
               ao.comm_s, dl.comm_s);
    tsl_cluster_free(&c);
}

/* TE's NVFP4 amax all-reduces under SP (cost model 200; fp8_impl.h
 * tsl_fp8_impl_amax_reduced, cost.c tp_sp_shares): the encoder layer of
 * test_fp8_cs_amax_reduce, NVFP4 under TE, TP 2 + SP, NCCL's alphas. NVFP4Quantizer
 * all-reduces its amax over the TP group as current scaling's does (TE release_v2.16
 * _customize_quantizers_nvfp4): the column-parallel linears' inputs forward (QKV,
 * FFN-in) and the row-parallel ones' dY backward (the projection, FFN-out). Each
 * linear at the recipe its module runs: with the row-parallel pair kept MXFP8
 * (module_precision; MXFP8 has no per-tensor scale) the backward's two go — the
 * gathers' bytes are the plan's either way — and with the column-parallel pair MXFP8
 * the forward's two; all four MXFP8, none. Without SP, none. */
static void test_nvfp4_amax_reduce(void)
{
    tsl_cluster_t c;
    tsl_layer_t l;
    tsl_cost_env_t env;
    gb200_encoder_env(&c, &l, &env);
    tsl_strategy_t s = one(TSL_DIM_TP, 2, false), plain = s;
    s.sp = true;
    tsl_strategy_bw_t bw;
    tsl_cost_strategy_bw(&env, &s, &bw);
    CHECK(bw.tp_lat.n > 1, "NCCL's alphas priced");
    double ar = tsl_cluster_coll_allreduce_s(&bw.tp_lat, 4.0, 2, bw.tp_bw, NULL);
    CHECK(ar > 1e-6 && ar < 1e-4, "a 4-byte all-reduce is alpha-bound: %g s", ar);
    CHECK(tsl_fp8_impl_amax_reduced(TSL_FP8_NVFP4, TSL_FP8_IMPL_TE) &&
              !tsl_fp8_impl_amax_reduced(TSL_FP8_MXFP8, TSL_FP8_IMPL_TE),
          "NVFP4 reduces its amax, MXFP8 does not");
    env.knobs.fp8_impl = TSL_FP8_IMPL_TE;
    env.knobs.fp8 = TSL_FP8_NVFP4;
    const char *keep[3] = {"linear_proj=mxfp8,linear_fc2=mxfp8",
                           "linear_qkv=mxfp8,linear_fc1=mxfp8",
                           "linear_qkv=mxfp8,linear_proj=mxfp8,linear_fc1=mxfp8,linear_fc2=mxfp8"};
    const double f_ar[3] = {0.0, 2.0, 2.0}, b_ar[3] = {2.0, 0.0, 2.0};
    tsl_layer_cost_t all, part;
    tsl_cost_layer(&env, &l, &s, &bw, 4, &all);
    for (int i = 0; i < 3; i++) {
        tsl_err_t err;
        CHECK(tsl_module_prec_parse(keep[i], &env.knobs.module_prec, &err) == 0, "%s", keep[i]);
        tsl_cost_layer(&env, &l, &s, &bw, 4, &part);
        CHECK_NEAR(all.comm_s - part.comm_s, (f_ar[i] + b_ar[i]) * ar, 1e-9,
                   "%s: %g fewer, by hand %g", keep[i], all.comm_s - part.comm_s,
                   (f_ar[i] + b_ar[i]) * ar);
        env.knobs.module_prec = 0;
    }
    CHECK(all.comm_s - part.comm_s > 3.9 * ar, "every NVFP4 gather's cast reduces its amax");
    tsl_cost_layer(&env, &l, &plain, &bw, 4, &all);
    tsl_err_t err;
    CHECK(tsl_module_prec_parse(keep[2], &env.knobs.module_prec, &err) == 0, "all MXFP8");
    tsl_cost_layer(&env, &l, &plain, &bw, 4, &part);
    env.knobs.module_prec = 0;
    CHECK_NEAR(all.comm_s, part.comm_s, 1e-12, "without SP: none, %g against %g", all.comm_s,
               part.comm_s);
    tsl_cluster_free(&c);
}

/* Megatron-core's set_save_original_input(linear_proj) (cost model 166; cost.h
 * tsl_cost_proj_orig_input): the encoder layer of gb200_encoder_env at TP 2 + SP,
 * 4 samples, MXFP8 under TE. The projection's input is the core's output, E =
 * 4 · 2048 · 4096/2 elements per rank. Megatron-core's optimizer (opt_step megatron)
 * against Tessel's executor (opt_step fused: TE's default):
 *   memory    the input kept bf16, no FP8 copy: 2 B · E, where TE's default keeps
 *             the fused core's bf16 output and its FP8 copy, 3 B · E (cost model
 *             170): 1 B · E less; with the core recomputed (+selckpt) or unfused
 *             nothing keeps the core's output but TE: 1 B · E under the default,
 *             (2 − 1) B · E more with the flag
 *   forward   the cast's columnwise copy not written: −(1 + 1/32) B · E
 *   backward  the kept input cast again, columnwise: 2 B read, (1 + 1/32) written,
 *             one kernel: (3 + 1/32) B · E / W + L
 * W = 0.8 × the GB200's datasheet bandwidth. Delayed scaling (TE refuses the flag),
 * torchao (torchtitan), bf16 and DeepSpeed's optimizer: nothing moves. */
static void test_proj_orig_input(void)
{
    tsl_cluster_t c;
    tsl_layer_t l;
    tsl_cost_env_t env;
    gb200_encoder_env(&c, &l, &env);
    tsl_strategy_t s = one(TSL_DIM_TP, 2, false);
    s.sp = true;
    tsl_strategy_bw_t bw;
    tsl_cost_strategy_bw(&env, &s, &bw);
    const double E = 4.0 * 2048 * 4096 / 2, W = TSL_ROOFLINE_MEM_EFF * env.device_mem_bw;
    const double L = TSL_ROOFLINE_LAUNCH_S;
    tsl_layer_cost_t te, mc;
    env.knobs.fp8_impl = TSL_FP8_IMPL_TE;
    env.knobs.fp8 = TSL_FP8_MXFP8;
    env.knobs.opt_step = TSL_OPT_STEP_FUSED;
    CHECK(!tsl_cost_proj_orig_input(&env.knobs), "Tessel's executor: TE's default");
    tsl_cost_layer(&env, &l, &s, &bw, 4, &te);
    env.knobs.opt_step = TSL_OPT_STEP_MEGATRON;
    CHECK(tsl_cost_proj_orig_input(&env.knobs), "Megatron-core under MXFP8");
    tsl_cost_layer(&env, &l, &s, &bw, 4, &mc);
    CHECK(te.fwd_bytes - mc.fwd_bytes == (uint64_t)E,
          "the fused core's output and TE's copy against the output alone: %llu B, %g",
          (unsigned long long)(te.fwd_bytes - mc.fwd_bytes), E);
    {
        tsl_strategy_t sel = s;
        sel.selective = true; /* the core recomputed: its output not kept by it */
        tsl_layer_cost_t te_sel, mc_sel;
        tsl_cost_layer(&env, &l, &sel, &bw, 4, &mc_sel);
        env.knobs.opt_step = TSL_OPT_STEP_FUSED;
        tsl_cost_layer(&env, &l, &sel, &bw, 4, &te_sel);
        env.knobs.opt_step = TSL_OPT_STEP_MEGATRON;
        CHECK(mc_sel.fwd_bytes - te_sel.fwd_bytes == (uint64_t)E,
              "+selckpt: the input kept bf16, %llu B more than the FP8 copy, %g",
              (unsigned long long)(mc_sel.fwd_bytes - te_sel.fwd_bytes), E);
    }
    const double mxr = TSL_ROOFLINE_MEM_EFF / TSL_MXFP8_CAST_MEM_EFF; /* cost model 189 */
    CHECK_NEAR(mc.fwd_s - te.fwd_s, -(1.0 + 1.0 / 32) * mxr * E / W, 1e-12,
               "forward: no columnwise copy, %g", mc.fwd_s - te.fwd_s);
    CHECK_NEAR(mc.bwd_s - te.bwd_s, (3.0 + 1.0 / 32) * mxr * E / W + L, 1e-12,
               "backward: the columnwise cast again, %g", mc.bwd_s - te.bwd_s);
    /* the other stacks and recipes keep TE's default */
    env.knobs.opt_step = TSL_OPT_STEP_MEGATRON_CORE_FP16;
    CHECK(tsl_cost_proj_orig_input(&env.knobs), "Megatron-core's fp16 optimizer too");
    env.knobs.opt_step = TSL_OPT_STEP_MEGATRON;
    env.knobs.fp8 = TSL_FP8_DELAYED;
    CHECK(!tsl_cost_proj_orig_input(&env.knobs), "not under delayed scaling");
    env.knobs.fp8 = TSL_FP8_NONE;
    CHECK(!tsl_cost_proj_orig_input(&env.knobs), "not in bf16");
    env.knobs.fp8 = TSL_FP8_TENSORWISE;
    env.knobs.fp8_impl = TSL_FP8_IMPL_TORCHAO;
    CHECK(!tsl_cost_proj_orig_input(&env.knobs), "not under torchao");
    env.knobs.fp8_impl = TSL_FP8_IMPL_TE;
    CHECK(tsl_cost_proj_orig_input(&env.knobs), "current scaling under Megatron-core");
    env.knobs.opt_step = TSL_OPT_STEP_DEEPSPEED_FP16;
    CHECK(!tsl_cost_proj_orig_input(&env.knobs), "not under DeepSpeed");
    env.knobs.opt_step = TSL_OPT_STEP_MEGATRON_FP16;
    CHECK(!tsl_cost_proj_orig_input(&env.knobs), "not Megatron-LM 2021-22 (no TE)");
    env.knobs.fp8 = TSL_FP8_NVFP4;
    env.knobs.opt_step = TSL_OPT_STEP_MEGATRON;
    CHECK(tsl_cost_proj_orig_input(&env.knobs), "FP4 under Megatron-core");
    /* the other sites (cost model 170): the shared experts' FC1 unless they are
     * recomputed, latent attention's down projections under a layernorm recompute */
    CHECK(tsl_cost_shared_fc1_orig_input(&env.knobs) && !tsl_cost_mla_down_orig_input(&env.knobs),
          "no recompute: the shared FC1, not the down projections");
    env.knobs.recompute_modules = TSL_RECOMPUTE_LAYERNORM | TSL_RECOMPUTE_SHARED_EXPERTS;
    CHECK(!tsl_cost_shared_fc1_orig_input(&env.knobs) && tsl_cost_mla_down_orig_input(&env.knobs),
          "layernorm, shared_experts: the down projections, not the shared FC1");
    env.knobs.recompute_modules = TSL_RECOMPUTE_MOE | TSL_RECOMPUTE_LAYERNORM;
    CHECK(tsl_cost_shared_fc1_orig_input(&env.knobs), "moe: the shared FC1 still (its flag)");
    env.knobs.fp8 = TSL_FP8_DELAYED;
    CHECK(!tsl_cost_shared_fc1_orig_input(&env.knobs) && !tsl_cost_mla_down_orig_input(&env.knobs),
          "delayed: neither (TE refuses the flag)");
    env.knobs.recompute_modules = 0;
    tsl_cluster_free(&c);
}

/* NVFP4 on 8 GB200s (docs/cost-model.md "NVFP4"), the encoder layer of
 * test_fp8_memory by hand:
 *   rate    the block's FP4 rate 10000e12 x 0.571 (FP4 peak x the FP8 e_max);
 *   memory  TP 2 + SP, 4 samples: TE's two NVFP4 weight copies, 2 x 0.5625 =
 *           1.125 B per weight element beyond the bf16 weight; with
 *           --fp4-param-gather they are the weight, in place of its 2 bytes:
 *           0.875 B less; the stash keeps each linear input's 0.5625-byte copy in
 *           place of bf16, 1.4375 B less per element;
 *   gather  SDP 8: a layer's gather moves 2 B per weight, 0.5 (the packed E2M1
 *           bytes) per NVFP4 weight element with --fp4-param-gather;
 *   step    without it, the weights' cast once per iteration: 5.125 B per element,
 *           2 kernels. */
static void test_nvfp4_memory(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "2x4xGB200-186G:nvl72", &err) == 0, "%s", err.msg);
    tsl_layer_t l = encoder_4k();
    tsl_cost_env_t env;
    CHECK(tsl_cost_env_init(&env, &c, 0, 2, &err) == 0, "%s", err.msg);
    CHECK_NEAR(env.device_fp4_flops, 10000e12 * 0.571, 1e-9, "GB200 FP4 rate");
    tsl_strategy_t s = one(TSL_DIM_TP, 2, false);
    s.sp = true;
    tsl_layer_cost_t b, m8, f4, p4;
    /* the GPU's time alone: at 4 samples of this small layer the eager host floor
     * (57.2 us per kernel) binds, and NVFP4's second kernel per cast costs there */
    env.host_op_s = 0;
    tsl_cost_layer(&env, &l, &s, NULL, 4, &b);
    env.knobs.fp8 = TSL_FP8_MXFP8;
    tsl_cost_layer(&env, &l, &s, NULL, 4, &m8);
    env.knobs.fp8 = TSL_FP8_NVFP4;
    tsl_cost_layer(&env, &l, &s, NULL, 4, &f4);
    env.knobs.fp8_param_gather = true;
    tsl_cost_layer(&env, &l, &s, NULL, 4, &p4);
    double w8 = (2.0 * 4096 * 4096 * 2 + 2.0 * 16384 * 4096) / 2; /* QKV + out, FFN, / t */
    double kept = 4 * (2.0 * 2048 * 4096 / 2 + 2048.0 * (4096 + 16384) / 2);
    CHECK(f4.ms_bytes - b.ms_bytes == (uint64_t)(1.125 * w8), "NVFP4 weight copies: %llu vs %g",
          (unsigned long long)(f4.ms_bytes - b.ms_bytes), 1.125 * w8);
    CHECK(b.ms_bytes - p4.ms_bytes == (uint64_t)(0.875 * w8), "FP4 weights: %llu less vs %g",
          (unsigned long long)(b.ms_bytes - p4.ms_bytes), 0.875 * w8);
    /* the projection's input beside the fused core's output (cost model 170): its
     * 1.4375 B saving gone, its 0.5625 B copy added */
    double proj = 4 * 2048.0 * 4096 / 2;
    CHECK(b.fwd_bytes - f4.fwd_bytes == (uint64_t)(1.4375 * kept - 2.0 * proj),
          "NVFP4 stash: %llu vs %g", (unsigned long long)(b.fwd_bytes - f4.fwd_bytes),
          1.4375 * kept - 2.0 * proj);
    CHECK(f4.fwd_s < m8.fwd_s && f4.bwd_s < m8.bwd_s,
          "NVFP4 faster than MXFP8: %g %g vs %g %g (bf16 %g %g)", f4.fwd_s, f4.bwd_s, m8.fwd_s,
          m8.bwd_s, b.fwd_s, b.bwd_s);
    /* the step's weight cast: 5.125 B per element, 2 kernels; none with FP4 weights */
    env.knobs.fp8_param_gather = false;
    tsl_strategy_t z1 = one(TSL_DIM_DP, 2, false);
    z1.zero = 1;
    tsl_layer_cost_t o4, o0;
    tsl_cost_layer(&env, &l, &z1, NULL, 4, &o4);
    env.knobs.fp8 = TSL_FP8_NONE;
    tsl_cost_layer(&env, &l, &z1, NULL, 4, &o0);
    const double W8 = 2.0 * 4096 * 4096 * 2 + 2.0 * 16384 * 4096;
    CHECK_NEAR(o4.opt_s - o0.opt_s, 5.125 * W8 / (0.8 * 8000e9) + 2 * 4e-6, 1e-9,
               "nvfp4: the weights cast once per step, %g s", o4.opt_s - o0.opt_s);
    /* gathers: SDP 8, PAPER mode (test_fp8_gather's way) */
    CHECK(tsl_cost_env_init(&env, &c, 0, 8, &err) == 0, "%s", err.msg);
    env.mode = TSL_COST_PAPER;
    const double P = (double)l.params, bw = tsl_cluster_dim_bw(&c, 0, 8, 1, 8);
    tsl_strategy_t sdp = one(TSL_DIM_SDP, 8, false);
    tsl_layer_cost_t a, g;
    env.knobs.fp8 = TSL_FP8_NVFP4;
    tsl_cost_layer(&env, &l, &sdp, NULL, 8, &a);
    env.knobs.fp8_param_gather = true;
    tsl_cost_layer(&env, &l, &sdp, NULL, 8, &g);
    double g16 = tsl_cost_allgather_s(2 * P, 8, bw),
           g4 = tsl_cost_allgather_s(2 * P - 1.5 * W8, 8, bw);
    CHECK_NEAR(a.fwd_s - g.fwd_s, g16 - g4, 1e-9, "SDP: the forward's gather %g -> %g", g16, g4);
    tsl_cluster_free(&c);
}

/* Latent MoE in FP8 (cost model 175; docs/cost-model.md "Latent MoE in FP8"): the
 * Mixtral FFN of test_fp8_moe with ℓ = 1024 (Nemotron 3 Super's latent) on 8 GB200s at
 * DP 8 and EP 8, MXFP8, one sample a rank. Its fc1_latent_proj and fc2_latent_proj
 * (h × ℓ each, whole on every rank) keep TE's two MXFP8 weight copies, 4·h·ℓ bytes;
 * fc2_latent_proj keeps its input in 1 B instead of 2 (T·ℓ less) and fc1_latent_proj an
 * FP8 copy of the norm's output beside the router's bf16 one (T·h more). Kept bf16 by
 * module_precision, neither (one overridden: its own part); under the moe module's
 * recompute no input is kept, the weight copies are. Before, every term was 0. */
static void test_fp8_latent_moe(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "2x4xGB200-186G:nvl72", &err) == 0, "%s", err.msg);
    const double h = 4096, r = 1024, T = 4096;
    tsl_layer_t l = mixtral_ffn(&err);
    l.moe_latent = (uint32_t)r;
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    tsl_cost_env_t env;
    CHECK(tsl_cost_env_init(&env, &c, 0, 8, &err) == 0, "%s", err.msg);
    env.mode = TSL_COST_PAPER;
    env.host_op_s = 0;
    env.knobs.ep = 8;
    env.knobs.fp8 = TSL_FP8_MXFP8;
    tsl_strategy_t s = one(TSL_DIM_DP, 8, false);
    const uint32_t fc1 = 1u << (4 * TSL_MODULE_FC1_LATENT), fc2 = 1u << (4 * TSL_MODULE_FC2_LATENT);
    tsl_layer_cost_t f8, kb, k1, m8, mkb;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &f8);
    env.knobs.module_prec = fc1 | fc2; /* te_quant.cfg's *mlp.fc[12]_latent_proj bf16 */
    tsl_cost_layer(&env, &l, &s, NULL, 8, &kb);
    env.knobs.module_prec = fc1;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &k1);
    CHECK_NEAR((double)f8.ms_bytes - (double)kb.ms_bytes, 4 * h * r, 2,
               "the two projections' MXFP8 weight copies: %g B",
               (double)f8.ms_bytes - (double)kb.ms_bytes);
    CHECK_NEAR((double)f8.fwd_bytes - (double)kb.fwd_bytes, T * h - T * r, 2,
               "fc1_latent's FP8 copy beside the router's input, fc2_latent's input in 1 B: %g",
               (double)f8.fwd_bytes - (double)kb.fwd_bytes);
    CHECK_NEAR((double)k1.ms_bytes - (double)kb.ms_bytes, 2 * h * r, 2,
               "fc2_latent alone in MXFP8: its copies");
    CHECK_NEAR((double)kb.fwd_bytes - (double)k1.fwd_bytes, T * r, 2,
               "fc2_latent alone in MXFP8: its input's byte saved");
    CHECK(f8.opt_s > kb.opt_s, "the projections' weights cast once per step: %g vs %g s", f8.opt_s,
          kb.opt_s);
    env.knobs.recompute_modules = TSL_RECOMPUTE_MOE;
    env.knobs.module_prec = 0;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &m8);
    env.knobs.module_prec = fc1 | fc2;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &mkb);
    CHECK(m8.fwd_bytes == mkb.fwd_bytes &&
              fabs((double)m8.ms_bytes - (double)mkb.ms_bytes - 4 * h * r) <= 2,
          "moe recomputed: no input kept (%llu vs %llu), the copies are",
          (unsigned long long)m8.fwd_bytes, (unsigned long long)mkb.fwd_bytes);
    tsl_cluster_free(&c);
}

/* One FP8 MoE layer: test_moe's Mixtral FFN on 8xH100-80G at EP 8 (one expert per
 * rank, m = R = 2T rows), DP 8, PAPER mode, delayed scaling (docs/cost-model.md
 * "FP8" and "Mixture of experts"):
 *   time    the grouped GEMMs as roofline.h prices them (test_roofline checks them by
 *           hand); moe_bf16_experts keeps the bf16 layer;
 *   a2a     bf16: 4 all-to-alls of R·h·2 bytes; FP8 dispatch (DeepSeek-V3 Sec. 3.3.2):
 *           per pass one of them in 1 byte (delayed: no scale bytes): 3 of them;
 *   memory  the expert's FP8 weight copies 2·p_e bytes beside its states, and the
 *           stash of fc1's input (h) and fc2's (f) per routed copy in 1 byte
 *           instead of 2: k·T·(h + f) bytes less per sample; none of the copies
 *           with fp8_param_gather;
 *   step    the expert's FP8 weights cast once, 4·p_e bytes;
 *   DualPipeV its F&B step hides the all-to-alls: comm_s is ep_s here, and
 *           tsl_pipesim_fb_save_s saves on it. */
static void test_fp8_moe(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "8xH100-80G", &err) == 0, "%s", err.msg);
    const double h = 4096, f = 14336, T = 4096, R = 2 * T, pe = 3 * h * f;
    tsl_layer_t l = mixtral_ffn(&err);
    tsl_cost_env_t env;
    CHECK(tsl_cost_env_init(&env, &c, 0, 8, &err) == 0, "%s", err.msg);
    env.mode = TSL_COST_PAPER;
    env.host_op_s = 0;
    env.knobs.ep = 8;
    tsl_strategy_t s = one(TSL_DIM_DP, 8, false);
    tsl_layer_cost_t b16, f8, kb, disp, pg;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &b16);
    env.knobs.fp8 = TSL_FP8_DELAYED;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &f8);
    env.knobs.moe_bf16_experts = true;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &kb);
    env.knobs.moe_bf16_experts = false;
    env.knobs.moe_fp8_dispatch = true;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &disp);
    env.knobs.moe_fp8_dispatch = false;
    env.knobs.fp8_param_gather = true;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &pg);
    /* time: the roofline's FP8 layer */
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, env.device_flops, env.device_mem_bw);
    d.shape = env.gemm_shape;
    d.ep = 8;
    d.fp8 = TSL_FP8_DELAYED;
    d.fp8_flops = env.device_fp8_flops;
    d.moe_fp8 = true;
    const double bw = tsl_cluster_dim_bw(&c, 0, 8, 1, 8), a2a = 7.0 / 8 * (2 * R * h) / bw;
    CHECK_NEAR(f8.fwd_s, tsl_roofline_layer_fwd_s(&d, &l, 1, 1, false, 0) + 2 * a2a, 1e-12,
               "FP8 MoE forward: the roofline's FP8 grouped GEMMs + dispatch and combine");
    CHECK(f8.fwd_s < b16.fwd_s && f8.bwd_s < b16.bwd_s, "FP8 experts faster: %g vs %g", f8.fwd_s,
          b16.fwd_s);
    CHECK(kb.fwd_s == b16.fwd_s && kb.bwd_s == b16.bwd_s && kb.ms_bytes == b16.ms_bytes &&
              kb.fwd_bytes == b16.fwd_bytes,
          "experts kept bf16 (and nothing else in FP8 in this layer): the bf16 figures");
    /* the all-to-alls */
    CHECK_NEAR(f8.ep_s, 4 * a2a, 1e-12, "bf16 dispatch: 4 all-to-alls");
    CHECK_NEAR(disp.ep_s, 2 * (a2a + a2a / 2), 1e-12,
               "FP8 dispatch: one of each pass's two in 1 B");
    CHECK_NEAR(b16.fwd_s - disp.fwd_s, b16.fwd_s - f8.fwd_s + a2a / 2, 1e-12,
               "FP8 dispatch saves half an all-to-all per pass");
    /* memory */
    CHECK(f8.ms_bytes - b16.ms_bytes == (uint64_t)(2 * pe), "FP8 expert weight copies %llu",
          (unsigned long long)(f8.ms_bytes - b16.ms_bytes));
    CHECK(b16.fwd_bytes - f8.fwd_bytes == (uint64_t)(2 * T * (h + f)),
          "FP8 routed stash: %llu less, by hand %g",
          (unsigned long long)(b16.fwd_bytes - f8.fwd_bytes), 2 * T * (h + f));
    CHECK(pg.ms_bytes == b16.ms_bytes && pg.fwd_bytes == f8.fwd_bytes,
          "fp8_param_gather: no copies beside the FP8 weights");
    CHECK_NEAR(f8.opt_s - b16.opt_s, 4 * pe / (0.8 * 3350e9) + 4e-6, 1e-9,
               "the expert's FP8 weights cast once per step");
    CHECK(pg.opt_s == b16.opt_s, "... none with FP8 weights");
    /* with main's recompute modules (the merge): moe_act recomputes the SwiGLU, so
     * fc2's input is not kept and FP8 saves fc1's byte per routed copy alone,
     * k·T·h = 2·T·h per sample; moe recomputes the whole FFN: no routed input kept,
     * nothing saved (no shared experts here), the FP8 weight copies still kept */
    env.knobs.fp8_param_gather = false;
    tsl_layer_cost_t a16, a8, m16, m8;
    env.knobs.recompute_modules = TSL_RECOMPUTE_MOE_ACT;
    env.knobs.fp8 = TSL_FP8_NONE;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &a16);
    env.knobs.fp8 = TSL_FP8_DELAYED;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &a8);
    env.knobs.recompute_modules = TSL_RECOMPUTE_MOE;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &m8);
    env.knobs.fp8 = TSL_FP8_NONE;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &m16);
    env.knobs.recompute_modules = 0;
    env.knobs.fp8 = TSL_FP8_DELAYED;
    CHECK(a16.fwd_bytes - a8.fwd_bytes == (uint64_t)(2 * T * h),
          "moe_act: FP8 saves fc1's input alone, %llu (by hand %g)",
          (unsigned long long)(a16.fwd_bytes - a8.fwd_bytes), 2 * T * h);
    CHECK(m16.fwd_bytes == m8.fwd_bytes && m8.ms_bytes - m16.ms_bytes == (uint64_t)(2 * pe),
          "moe: no routed input kept, nothing saved in FP8 (%llu, %llu)",
          (unsigned long long)m16.fwd_bytes, (unsigned long long)m8.fwd_bytes);
    /* DualPipeV: the all-to-alls are the layer's communication its F&B step hides */
    CHECK_NEAR(f8.comm_s, f8.ep_s, 1e-12, "comm_s holds the EP all-to-alls (%g, %g)", f8.comm_s,
               f8.ep_s);
    double save = tsl_pipesim_fb_save_s(f8.fwd_s, f8.bwd_s, f8.comm_s, 1.3);
    CHECK(save > 0.5 * f8.ep_s, "F&B hides the all-to-alls: saves %g of %g", save, f8.ep_s);
    CHECK(tsl_pipesim_fb_save_s(f8.fwd_s, f8.bwd_s, 0, 1.3) == 0, "nothing without them");
    tsl_cluster_free(&c);
}

/* One Mixtral-8x7B MoE FFN (h 4096, f 14336, E 8, top-2, SwiGLU, no bias, no
 * dropout, 4096 tokens) on 8xH100-80G, DP 8, one sample per rank, at EP 1 and EP 8
 * (docs/cost-model.md "Mixture of experts"), by hand from the roofline's pieces:
 * router gemm(T, E, h), softmax/top-k 8·T·E bytes, permute/unpermute 8·R·h bytes
 * (R = k·T routed copies), grouped gemm(m, 2f, h) × E/ep with m = ep·R/E rows per
 * local expert, SwiGLU 2·3·f·m·E/ep bytes, grouped gemm(m, h, f) × E/ep, the
 * block's norm + residual 10·h·T bytes; dispatch + combine all-to-all of R·h·2
 * bytes, (ep−1)/ep of it over the node's link, forward (2) and backward (2).
 * PAPER mode (no α), no host floor. */
/* The same layer's EP all-to-alls in the default mode (NCCL's α and protocol): over the
 * 8 H100s of a node NCCL's all-to-all runs at 320 / 370 of its ring (cluster_hw.c,
 * docs/cost-model.md "All-to-all"), so each of the four all-to-alls of B = 2·R·h =
 * 67.1 MB is α + 7/8 · B / (239 GB/s · 320/370): Simple, α = 8.4 + 7 · 3.4 = 32.2 µs,
 * 277.9 µs at the ring's 239 GB/s (an H100 copy without the ratio) → 316.3 µs, the
 * bandwidth term × 370/320. */
static void test_moe_a2a_ratio(void)
{
    tsl_err_t err = {0};
    tsl_layer_t l = mixtral_ffn(&err);
    tsl_gpu_spec_t ring_only = *tsl_gpu_find("H100-80G");
    ring_only.a2a_ratio = 0;
    tsl_cluster_t c[2];
    CHECK(tsl_cluster_parse_spec(&c[0], "8xH100-80G", &err) == 0, "%s", err.msg);
    CHECK(tsl_cluster_homogeneous(&c[1], 1, 8, &ring_only, 0, &err) == 0, "%s", err.msg);
    tsl_strategy_t s = one(TSL_DIM_DP, 8, false);
    const double B = 2.0 * (2 * 4096) * 4096, alpha = 32.2e-6, ring = 239e9;
    double a2a[2];
    for (int i = 0; i < 2; i++) {
        tsl_cost_env_t env;
        tsl_layer_cost_t r;
        CHECK(tsl_cost_env_init(&env, &c[i], 0, 8, &err) == 0, "%s", err.msg);
        env.knobs.ep = 8;
        tsl_cost_layer(&env, &l, &s, NULL, 8, &r);
        a2a[i] = r.ep_s / 4;
        tsl_cluster_free(&c[i]);
    }
    CHECK_NEAR(a2a[1], alpha + 7.0 / 8 * B / ring, 1e-9, "ring-priced all-to-all %g s", a2a[1]);
    CHECK_NEAR(a2a[0], alpha + 7.0 / 8 * B / (ring * 320 / 370), 1e-9, "all-to-all %g s", a2a[0]);
    CHECK_NEAR((a2a[0] - alpha) / (a2a[1] - alpha), 370.0 / 320, 1e-9,
               "bandwidth term x 370/320: %g", (a2a[0] - alpha) / (a2a[1] - alpha));

    /* Ulysses CP (cp 4, the 4 innermost of DP 8) on a causal layer of s 8192, 32 heads
     * of 128, micro-batch 2: T = 2048 tokens per rank, B_q = 2·T·4096 = 16.8 MB,
     * B_kv = 33.6 MB; each pass an all-to-all of B_q + B_kv and one of B_q, Simple (α
     * the same on both clusters): the two clusters differ by 2 · 3/4 · (2·B_q + B_kv) ·
     * (370/320 − 1) / 239 GB/s */
    tsl_layer_t d = {.kind = TSL_LAYER_ENCODER,
                     .causal = true,
                     .seq_len = 8192,
                     .hidden = 4096,
                     .ffn_hidden = 14336,
                     .heads = 32,
                     .gated_ffn = true,
                     .no_bias = true,
                     .rms_norm = true,
                     .no_dropout = true};
    CHECK(tsl_layer_derive(&d, &err) == 0, "%s", err.msg);
    CHECK(tsl_cluster_parse_spec(&c[0], "8xH100-80G", &err) == 0, "%s", err.msg);
    CHECK(tsl_cluster_homogeneous(&c[1], 1, 8, &ring_only, 0, &err) == 0, "%s", err.msg);
    double cp_s[2];
    for (int i = 0; i < 2; i++) {
        tsl_cost_env_t env;
        tsl_layer_cost_t r;
        CHECK(tsl_cost_env_init(&env, &c[i], 0, 8, &err) == 0, "%s", err.msg);
        env.knobs.cp = 4;
        env.knobs.cp_comm = TSL_CP_A2A;
        tsl_cost_layer(&env, &d, &s, NULL, 2, &r);
        CHECK(r.feasible && r.cp_s > 0, "Ulysses cp 4 feasible");
        cp_s[i] = r.cp_s;
        tsl_cluster_free(&c[i]);
    }
    const double bq = 2.0 * 2048 * 4096, bkv = 2 * bq;
    const double want = 2 * 0.75 * (2 * bq + bkv) * (370.0 / 320 - 1) / ring;
    CHECK_NEAR(cp_s[0] - cp_s[1], want, 1e-9, "Ulysses: %g s more, by hand %g", cp_s[0] - cp_s[1],
               want);
}

static void test_moe(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "8xH100-80G", &err) == 0, "%s", err.msg);
    const double h = 4096, f = 14336, E = 8, k = 2, T = 4096;
    tsl_layer_t l = mixtral_ffn(&err);
    const double pe = 3 * h * f; /* one expert: gate, up, down */
    CHECK(tsl_layer_expert_params(&l) == E * pe, "expert params %g", tsl_layer_expert_params(&l));
    tsl_cost_env_t env;
    CHECK(tsl_cost_env_init(&env, &c, 0, 8, &err) == 0, "%s", err.msg);
    env.mode = TSL_COST_PAPER;
    env.host_op_s = 0;
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, env.device_flops, env.device_mem_bw);
    d.shape = env.gemm_shape;
    tsl_strategy_t s = one(TSL_DIM_DP, 8, false);
    const double bw = tsl_cluster_dim_bw(&c, 0, 8, 1, 8), R = k * T;
    tsl_layer_cost_t r1, r8;
    double fwd[2];
    for (int i = 0; i < 2; i++) {
        double ep = i ? 8 : 1, m = ep * R / E, local = E / ep;
        fwd[i] = tsl_roofline_gemm_s(&d, T, E, h, 1) + tsl_roofline_mem_s(&d, 8 * T * E, 2) +
                 tsl_roofline_mem_s(&d, 8 * R * h, 2) +
                 tsl_roofline_gemm_s(&d, m, 2 * f, h, local) +
                 tsl_roofline_mem_s(&d, 2 * 3 * f * m * local, 1) +
                 tsl_roofline_gemm_s(&d, m, h, f, local) + tsl_roofline_mem_s(&d, 10 * h * T, 2);
    }
    env.knobs.ep = 1;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &r1);
    env.knobs.ep = 8;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &r8);
    double a2a = 7.0 / 8 * (2 * R * h) / bw;
    CHECK(r1.feasible && r8.feasible, "ep 1 and ep 8 feasible");
    CHECK_NEAR(r1.fwd_s, fwd[0], 1e-12, "ep 1 forward %g, by hand %g", r1.fwd_s, fwd[0]);
    CHECK(r1.ep_s == 0, "no all-to-all at ep 1");
    CHECK_NEAR(r8.ep_s, 4 * a2a, 1e-12, "ep 8: 4 all-to-alls of %g s", a2a);
    CHECK_NEAR(r8.fwd_s, fwd[1] + 2 * a2a, 1e-12, "ep 8 forward %g, by hand %g", r8.fwd_s,
               fwd[1] + 2 * a2a);
    /* Megatron-LM's all-to-all dispatcher (knobs.moe_alltoall; one local expert, so no
     * second permutation): the routing weights' all-to-all each pass (R bf16 values,
     * 2·R bytes), the forward's all-gather of the counts over the 8 ranks (E int64 each:
     * 512 bytes), and in the forward the roofline's counts and row-id map (30 bytes per
     * T × E entry, 9 kernels; no host floor here, so no sync idle) */
    env.knobs.moe_alltoall = true;
    tsl_layer_cost_t ra;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &ra);
    env.knobs.moe_alltoall = false;
    const double w = 7.0 / 8 * (2 * R) / bw, counts = 7.0 / 8 * (8 * E * 8) / bw;
    CHECK_NEAR(ra.ep_s, 4 * a2a + 2 * w + counts, 1e-12, "dispatcher: %g, by hand %g", ra.ep_s,
               4 * a2a + 2 * w + counts);
    CHECK_NEAR(ra.fwd_s, fwd[1] + 2 * a2a + w + counts + tsl_roofline_mem_s(&d, 30 * T * E, 9),
               1e-12, "dispatcher forward %g", ra.fwd_s);
    /* a host-bound pass (docs/cost-model.md "Host dispatch"): the all-to-alls run on the
     * stream while the host dispatches, so the forward takes max(kernels + all-to-alls,
     * ops · H); ops from H = 1 s, then H set so that ops · H is the kernels and one, or
     * three, of the forward's two all-to-alls */
    tsl_roofline_dev_t dh = d;
    dh.ep = 8;
    dh.host_op_s = 1.0;
    const double ops = tsl_roofline_layer_fwd_s(&dh, &l, 1, 1, false, 0);
    for (int x = 1; x <= 3; x += 2) {
        env.host_op_s = dh.host_op_s = (fwd[1] + x * a2a) / ops;
        tsl_layer_cost_t rh;
        tsl_cost_layer(&env, &l, &s, NULL, 8, &rh);
        CHECK_NEAR(tsl_roofline_layer_fwd_s(&dh, &l, 1, 1, false, 0), fwd[1] + x * a2a, 1e-12,
                   "host-bound: ops · H");
        CHECK_NEAR(rh.fwd_s, fmax(fwd[1] + 2 * a2a, fwd[1] + x * a2a), 1e-12,
                   "host lead %d all-to-alls: forward %g", x, rh.fwd_s);
    }
    env.host_op_s = 0;
    /* calibration scales every collective, the ones the moe module's recompute repeats
     * too: a DP layer's communication is its all-to-alls alone (forward 2, backward 2,
     * the recompute's 2 again), so comm_scale 2 doubles all of it */
    tsl_calib_t cal;
    tsl_calib_identity(&cal);
    env.calib = &cal;
    env.knobs.recompute_modules = TSL_RECOMPUTE_MOE;
    tsl_layer_cost_t c1, c2;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &c1);
    cal.comm_scale = 2.0;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &c2);
    env.calib = NULL;
    env.knobs.recompute_modules = 0;
    CHECK_NEAR(c1.comm_s, 6 * a2a, 1e-12, "moe recompute: 6 all-to-alls, %g", c1.comm_s);
    CHECK_NEAR(c2.comm_s, 2 * c1.comm_s, 1e-12, "comm_scale 2: %g, twice %g", c2.comm_s, c1.comm_s);
    /* the same FLOPs per rank either way: E/ep experts of ep·R/E rows */
    CHECK(fabs(fwd[1] / fwd[0] - 1) < 0.05, "ep 8 compute %g vs ep 1 %g", fwd[1], fwd[0]);
    /* memory: expert states ÷ ep; the router (h·E) and the norm (h) on every rank */
    double dense = h * E + h;
    CHECK(r1.ms_bytes == (uint64_t)(16 * (E * pe + dense)), "ep 1 states %llu",
          (unsigned long long)r1.ms_bytes);
    CHECK(r8.ms_bytes == (uint64_t)(16 * (pe + dense)), "ep 8 states %llu",
          (unsigned long long)r8.ms_bytes);
    /* the routed activations per rank do not depend on ep (k·T copies either way) */
    CHECK(r8.fwd_bytes == r1.fwd_bytes, "routed stash per rank as at ep 1");
    /* the experts' gradients: all-reduced over the 8 ranks at ep 1, none at ep 8 */
    CHECK_NEAR(r1.grad_comm_s,
               tsl_cost_allreduce_s(2 * E * pe, 8, bw) + tsl_cost_allreduce_s(2 * dense, 8, bw),
               1e-12, "ep 1 gradient reduce");
    CHECK_NEAR(r8.grad_comm_s, tsl_cost_allreduce_s(2 * dense, 8, bw), 1e-12,
               "ep 8: only the router's and norm's gradients");
    /* feasibility: ep divides the experts and the block */
    env.knobs.ep = 3;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &r8);
    CHECK(!r8.feasible && !tsl_cost_ep_fits(&l, 8, 16, 1) && tsl_cost_ep_fits(&l, 8, 4, 1),
          "ep 3 and ep 16 do not fit 8 experts on 8 ranks");
    CHECK_NEAR(tsl_cost_alltoall_s(8e9, 4, 10 * GB), 0.6, EPS, "all-to-all (n-1)/n M / bw");
    tsl_cluster_free(&c);
}

/* HybridEP's routing map (docs/cost-model.md "HybridEP's routing map"): the EP time a
 * flex plan adds under hybridep over deepep, on 4 DGX H100 at DP 32. */
static double hybridep_extra(const tsl_cluster_t *c, const tsl_layer_t *l, uint32_t ep, uint32_t mb,
                             double host_op_s, double capacity, bool paper)
{
    tsl_err_t err = {0};
    tsl_strategy_t s = one(TSL_DIM_DP, 32, false);
    double t[2];
    for (int i = 0; i < 2; i++) {
        tsl_cost_env_t env;
        tsl_layer_cost_t r;
        CHECK(tsl_cost_env_init(&env, c, 0, 32, &err) == 0, "%s", err.msg);
        if (paper)
            env.mode = TSL_COST_PAPER;
        env.host_op_s = host_op_s;
        env.knobs.ep = ep;
        env.knobs.moe_flex = true;
        env.knobs.moe_capacity = capacity;
        env.knobs.moe_flex_backend = i == 0 ? TSL_FLEX_DEEPEP : TSL_FLEX_HYBRIDEP;
        tsl_cost_layer(&env, l, &s, NULL, mb, &r);
        t[i] = r.ep_s;
    }
    return t[1] - t[0];
}

/* A MoE FFN layer at h 4096 with experts of 1024 (SwiGLU, RMSNorm, no bias or dropout),
 * seq 4096: the routing tests' shape; groups 0 for a plain top-k. */
/* A gated, bias-free MoE FFN layer of seq 4096 (not derived: callers add router
 * fields first where they need them). */
static tsl_layer_t moe_ffn(uint32_t hidden, uint32_t ffn, uint32_t heads, uint32_t experts,
                           uint32_t topk)
{
    return (tsl_layer_t){.kind = TSL_LAYER_FFN,
                         .seq_len = 4096,
                         .hidden = hidden,
                         .ffn_hidden = ffn,
                         .heads = heads,
                         .gated_ffn = true,
                         .no_bias = true,
                         .rms_norm = true,
                         .no_dropout = true,
                         .experts = experts,
                         .experts_per_tok = topk};
}

static tsl_layer_t moe_ffn_4096(uint32_t experts, uint32_t topk, uint32_t groups,
                                uint32_t topk_groups, tsl_err_t *err)
{
    tsl_layer_t l = moe_ffn(4096, 1024, 32, experts, topk);
    l.router_groups = groups;
    l.router_topk_groups = topk_groups;
    CHECK(tsl_layer_derive(&l, err) == 0, "%s", err->msg);
    return l;
}

static void test_hybridep_map(void)
{
    tsl_err_t err = {0};
    CHECK(tsl_flex_backend_parse("hybridep") == TSL_FLEX_HYBRIDEP &&
              tsl_flex_backend_parse("deepep") == TSL_FLEX_DEEPEP &&
              tsl_flex_backend_parse("ncclep") == -1 && tsl_flex_backend_name(0) == NULL &&
              strcmp(tsl_flex_backend_name(TSL_FLEX_HYBRIDEP), "hybridep") == 0,
          "back end names");
    /* the default: Megatron-LM's deepep, hybridep where the experts are padded */
    CHECK(tsl_flex_backend_of(true, 0, false) == TSL_FLEX_DEEPEP &&
              tsl_flex_backend_of(true, 0, true) == TSL_FLEX_HYBRIDEP &&
              tsl_flex_backend_of(true, TSL_FLEX_HYBRIDEP, false) == TSL_FLEX_HYBRIDEP &&
              tsl_flex_backend_of(false, TSL_FLEX_HYBRIDEP, false) == TSL_FLEX_DEFAULT,
          "tsl_flex_backend_of");
    tsl_layer_t l = moe_ffn_4096(128, 4, 0, 0, &err),
                wide = moe_ffn_4096(256, 4, 0, 0, &err); /* twice the experts: twice the map */
    tsl_cluster_t c;
    CHECK(tsl_cluster_parse_spec(&c, "4x8xH100-80G:8xib400", &err) == 0, "%s", err.msg);
    double base = hybridep_extra(&c, &l, 32, 32, 1e-5, 0.0, false);
    /* the map: 4096 tokens x 128 experts x 32 ranks = 16.8 MB gathered over the network,
     * each rank receiving 31/32 of it: at least through its node's 8 NICs' 400 Gb/s */
    double map = 4096.0 * 128 * 32;
    CHECK(base > map * 31 / 32 / 8 / 50e9 && base < 20e-3, "hybridep's map: %g s", base);
    /* affine in the map's bytes (the all-gather's α and the scan's launch apart): twice
     * the tokens add twice what the first doubling added; twice the experts as much as
     * twice the tokens (the scan's writes aside) */
    double tok = hybridep_extra(&c, &l, 32, 64, 1e-5, 0.0, false),
           tok4 = hybridep_extra(&c, &l, 32, 128, 1e-5, 0.0, false),
           exp = hybridep_extra(&c, &wide, 32, 64, 1e-5, 0.0, false),
           ep16 = hybridep_extra(&c, &l, 16, 32, 1e-5, 0.0, false);
    CHECK((tok4 - tok) / (tok - base) > 1.9 && (tok4 - tok) / (tok - base) < 2.1,
          "tokens: %g, %g, %g s", base, tok, tok4);
    CHECK(fabs(exp / tok4 - 1) < 0.03, "twice the experts: %g s, twice the tokens %g s", exp, tok4);
    CHECK(ep16 < base * 0.75, "half the EP ranks: %g / %g s", ep16, base);
    /* under a capacity factor (no sync) it stays an EP collective: less or as much
     * exposed; none in PAPER mode, none without the flex dispatcher's hybridep */
    double cap = hybridep_extra(&c, &l, 32, 32, 1e-5, 1.5, false);
    CHECK(cap > 0 && cap <= base * (1 + 1e-9), "capacity 1.5: %g s, dropless %g s", cap, base);
    CHECK(hybridep_extra(&c, &l, 32, 32, 1e-5, 0.0, true) == 0.0, "PAPER: none");
    tsl_cluster_free(&c);
}

/* One flex pass (dispatch + combine) of layer l at EP n over `spec`'s first n GPUs (DP n,
 * a rank's 4096 tokens), its routing-map gather left out: HybridEP's ep_s with the GPU
 * type's HybridEP figure less with it zeroed is twice (its pass − NCCL's), and DeepEP's is
 * twice NCCL's (no map). `nccl` gets NCCL's pass. */
static double hybridep_pass(const char *spec, const tsl_layer_t *l, uint32_t n, bool paper,
                            double *nccl)
{
    tsl_err_t err = {0};
    tsl_cluster_t c;
    CHECK(tsl_cluster_parse_spec(&c, spec, &err) == 0, "%s", err.msg);
    tsl_strategy_t s = one(TSL_DIM_DP, n, false);
    double ep_s[3]; /* hybridep with the figure, hybridep without it, deepep */
    double figure = c.gpu_types[0].hybridep_nvl_bw;
    for (int i = 0; i < 3; i++) {
        tsl_cost_env_t env;
        tsl_layer_cost_t r;
        c.gpu_types[0].hybridep_nvl_bw = i == 1 ? 0.0 : figure;
        CHECK(tsl_cost_env_init(&env, &c, 0, n, &err) == 0, "%s", err.msg);
        if (paper)
            env.mode = TSL_COST_PAPER;
        env.host_op_s = 0.0;
        env.knobs.ep = n;
        env.knobs.moe_flex = true;
        env.knobs.moe_flex_backend = i == 2 ? TSL_FLEX_DEEPEP : TSL_FLEX_HYBRIDEP;
        tsl_cost_layer(&env, l, &s, NULL, n, &r);
        ep_s[i] = r.ep_s;
    }
    tsl_cluster_free(&c);
    *nccl = ep_s[2] / 2;
    return (ep_s[0] - ep_s[1]) / 2 + ep_s[2] / 2;
}

/* HybridEP's kernels inside one NVLink domain (cost model 199; docs/cost-model.md
 * "HybridEP's kernels inside one NVLink domain"): on Blackwell its dispatch and combine
 * at the part's published kernel figure, 691.9 GB/s bus + 2.751 µs a peer, not NCCL's
 * all-to-all; HybridEP's GB200 sweep reproduced; NCCL's figure where the part has none,
 * across domains, in PAPER mode and for DeepEP. */
static void test_hybridep_nvl(void)
{
    tsl_err_t err = {0};
    /* HybridEP's own benchmark shape (DeepEP hybrid-ep 94a9f8f docs/README_Hybrid-EP.md,
     * GB200, kernel only, 32 SMs, BF16): 4096 tokens of h 7168, top-8 of 8 local experts a
     * rank, uniform; 32 ranks = 256 experts on 8 trays of one NVL72 */
    tsl_layer_t l = moe_ffn(7168, 2048, 56, 256, 8);
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    double nccl, hep = hybridep_pass("8x4xGB200-186G:nvl72", &l, 32, false, &nccl);
    /* a rank receives 4096 · 32 · hit(1/32) rows of 14336 B, hit = 1 − C(248,8)/C(256,8) */
    double miss = 1;
    for (int i = 0; i < 8; i++)
        miss *= (248.0 - i) / (256 - i);
    double B = 4096.0 * 32 * (1 - miss) * 7168 * 2;
    double op = 31.0 / 32 * B / 691.9e9 + 31 * 2.751e-6;
    CHECK_NEAR(hep, 2 * op, 1e-9, "HybridEP's pass: %g s, by hand %g", hep, 2 * op);
    /* the published dispatch 642.23 and combine 605.15 GB/s (algorithm bandwidth of B):
     * each pass runs one of each; the model within 1 % of their sum */
    double published = B / 642.23e9 + B / 605.15e9;
    CHECK(fabs(hep / published - 1) < 0.01, "HybridEP at 32 ranks: %g s, published %g s", hep,
          published);
    /* NCCL's all-to-all model (640/680 of GB200's 440 GB/s ring figure, with NCCL's α) was
     * 1.6x slower */
    CHECK(nccl / hep > 1.5 && nccl / hep < 1.8, "NCCL's %g s over HybridEP's %g s", nccl, hep);
    /* B200: the same figure (its one published point within 2 % of GB200's) */
    double b200 = hybridep_pass("4x8xB200-180G:8xib400", &l, 8, false, &nccl);
    miss = 1;
    for (int i = 0; i < 8; i++)
        miss *= (224.0 - i) / (256 - i);
    double B8 = 4096.0 * 8 * (1 - miss) * 7168 * 2;
    CHECK_NEAR(b200, 2 * (7.0 / 8 * B8 / 691.9e9 + 7 * 2.751e-6), 1e-9, "B200 EP 8: %g s", b200);
    /* NCCL's figure: a part without a published sweep (H100), a group across NVLink
     * domains (GB200 trays without the rack's domain: EP 32 over 8 trays' NICs), PAPER */
    CHECK(hybridep_pass("4x8xH100-80G:8xib400", &l, 8, false, &nccl) == nccl, "H100: NCCL's");
    CHECK(hybridep_pass("8x4xGB200-186G:4xib400", &l, 32, false, &nccl) == nccl,
          "across domains: NCCL's NVLink leg");
    CHECK(hybridep_pass("8x4xGB200-186G:nvl72", &l, 32, true, &nccl) == nccl, "PAPER: NCCL's");
}

/* A flex dispatcher (moe_flex) against NCCL's all-to-all over 4 DGX H100 (EP 32, 8 per
 * node; docs/cost-model.md "Across NVLink domains"). */
static void test_moe_flex(void)
{
    tsl_err_t err = {0};
    /* the hit chance: DeepSeek-V3's 256 experts, top-8 of the best 4 of 8 groups; a
     * domain of one group (share 1/8): 1 − C(7,4)/C(8,4) = 1 − 35/70 = 0.5; of two
     * (1/4): 1 − C(6,4)/C(8,4) = 1 − 15/70; of 1/3 (no whole group): the plain top-8,
     * 1 − Π_{i<8} (256 − 256/3 − i)/(256 − i) */
    tsl_layer_t v3 = {
        .experts = 256, .experts_per_tok = 8, .router_groups = 8, .router_topk_groups = 4};
    CHECK_NEAR(tsl_cost_flex_hit(1.0 / 8, &v3), 0.5, 1e-12, "one group");
    CHECK_NEAR(tsl_cost_flex_hit(1.0 / 4, &v3), 55.0 / 70, 1e-12, "two groups");
    double miss = 1;
    for (int i = 0; i < 8; i++)
        miss *= (256 - 256.0 / 3 - i) / (256 - i);
    CHECK_NEAR(tsl_cost_flex_hit(1.0 / 3, &v3), 1 - miss, 1e-12, "no whole group: plain top-8");
    CHECK(tsl_cost_flex_route(&v3).experts == 256 && tsl_cost_flex_route(NULL).experts == 0,
          "routing key");
    { /* more than 255 groups: 264 groups are not 8 (264 & 0xff, what an 8-bit key kept),
         and their hit differs: a domain of 1/4 holds 66 of 264 groups, 1 − C(198,2)/C(264,2)
         = 1 − 198·197/(264·263), against 2 of 8: 1 − C(6,2)/C(8,2) = 13/28 */
        tsl_layer_t wide = {.experts = 1056,
                            .experts_per_tok = 4,
                            .router_groups = 264,
                            .router_topk_groups = 2},
                    narrow = wide;
        narrow.router_groups = 8;
        CHECK(!tsl_cost_route_eq(tsl_cost_flex_route(&wide), tsl_cost_flex_route(&narrow)),
              "264 groups and 8: two routings");
        CHECK(tsl_cost_route_eq(tsl_cost_flex_route(&wide), tsl_cost_flex_route(&wide)),
              "a routing is itself");
        CHECK_NEAR(tsl_cost_flex_hit(0.25, &wide), 1 - 198.0 * 197 / (264.0 * 263), 1e-12,
                   "264 groups");
        CHECK_NEAR(tsl_cost_flex_hit(0.25, &narrow), 13.0 / 28, 1e-12, "8 groups");
    }

    /* 32 experts, top-4 of the best 2 of 4 groups, one group per node: hit 1/2, each node
     * receives 24 × 1/2 = 12 copies per token row of a rank and sends 8 × (2 − 1/2) = 12
     * through 8 × 43.66 GB/s (DeepEP's measured RDMA a ConnectX-7 carries off the node,
     * cost model 136; 128-135 priced the ring's 47). A rank's dispatch B =
     * 2·4096·4·4096 bytes (k = 4 copies of 4096 tokens): B/4 · 12 / 349.25 GB/s = 1.153 ms,
     * over NVLink's 31/32 · B / 206.7 GB/s + α; NCCL's: 31/32 · B at 31 × 8 × 37.2/(8 × 24)
     * = 48 GB/s (2.71 ms) + α, a NIC carrying 37.2 GB/s of NCCL's all-to-all (cost model
     * 129: NVIDIA GTC25 S72583 slide 13 measured 48 GB/s on this layout) */
    tsl_layer_t l = moe_ffn_4096(32, 4, 4, 2, &err);
    tsl_cluster_t c;
    CHECK(tsl_cluster_parse_spec(&c, "4x8xH100-80G:8xib400", &err) == 0, "%s", err.msg);
    tsl_strategy_t s = one(TSL_DIM_DP, 32, false);
    const double B = 2.0 * 4096 * 4 * 4096, cap = 8 * 43.65625e9;
    double a2a[3];
    for (int i = 0; i < 3; i++) {
        tsl_cost_env_t env;
        tsl_layer_cost_t r;
        c.inter_a2a_ratio = i == 2 ? 1.0 : tsl_link_a2a_ratio(tsl_link_find("ib400"));
        CHECK(tsl_cost_env_init(&env, &c, 0, 32, &err) == 0, "%s", err.msg);
        env.knobs.ep = 32;
        env.knobs.moe_flex = i == 1;
        tsl_cost_layer(&env, &l, &s, NULL, 32, &r);
        a2a[i] = r.ep_s / 4;
    }
    c.inter_a2a_ratio = tsl_link_a2a_ratio(tsl_link_find("ib400"));
    CHECK_NEAR(a2a[1], B / 4 * 12 / cap, 1e-9, "flex: %g s", a2a[1]);
    CHECK_NEAR(a2a[1], 1.153e-3, 1e-3, "flex: %g s", a2a[1]);
    /* NCCL's all-to-all no faster than NVIDIA measured it, and 47/37.2 = 1.265x slower in
     * its bandwidth term than at the ring's NIC figure (what 128 priced, α aside) */
    CHECK(a2a[0] >= 31.0 / 32 * B / 48e9, "NCCL's: %g s, measured %g", a2a[0],
          31.0 / 32 * B / 48e9);
    CHECK(a2a[0] / a2a[2] > 1.2 && a2a[0] / a2a[2] < 47 / (48.0 * 24 / 31),
          "NCCL's over the ring's NIC figure: %g / %g", a2a[0], a2a[2]);
    { /* the EP group's flex figures made once per block (the search's cache) price the
         same; made for another routing they are walked again */
        tsl_cost_env_t env;
        tsl_layer_cost_t walked, made_r, other_r;
        CHECK(tsl_cost_env_init(&env, &c, 0, 32, &err) == 0, "%s", err.msg);
        env.knobs.ep = 32;
        env.knobs.moe_flex = true;
        tsl_cost_layer(&env, &l, &s, NULL, 32, &walked);
        tsl_strategy_bw_t made, other;
        tsl_cost_strategy_bw(&env, &s, &made);
        tsl_cost_moe_bw(&env, &l, &made);
        CHECK(tsl_cost_route_eq(made.moe[0].flex_route, tsl_cost_flex_route(&l)) &&
                  made.moe[0].flex.net_s > 0,
              "flex figures made for the layer's routing");
        tsl_cost_layer(&env, &l, &s, &made, 32, &made_r);
        CHECK(memcmp(&walked, &made_r, sizeof(walked)) == 0, "made flex figures: the walked ones");
        tsl_layer_t plain = l; /* a plain top-4: other figures, not read */
        plain.router_groups = plain.router_topk_groups = 0;
        tsl_cost_strategy_bw(&env, &s, &other);
        tsl_cost_moe_bw(&env, &plain, &other);
        tsl_cost_layer(&env, &l, &s, &other, 32, &other_r);
        CHECK(memcmp(&walked, &other_r, sizeof(walked)) == 0, "another routing's figures: walked");
        /* 260 groups kept 4 in an 8-bit key (260 & 0xff): 2080 experts in 4 groups and in
         * 260 (one node, 1/4: 1 and 65 whole groups) route apart, and the figures made for
         * the 260 are not read for the 4 */
        tsl_layer_t g4 = l, g260;
        g4.experts = 2080;
        CHECK(tsl_layer_derive(&g4, &err) == 0, "%s", err.msg);
        g260 = g4;
        g260.router_groups = 260;
        tsl_layer_cost_t g4_walked, g4_made;
        tsl_cost_layer(&env, &g4, &s, NULL, 32, &g4_walked);
        tsl_cost_strategy_bw(&env, &s, &other);
        tsl_cost_moe_bw(&env, &g260, &other);
        tsl_cost_layer(&env, &g4, &s, &other, 32, &g4_made);
        CHECK(tsl_cost_flex_hit(0.25, &g4) != tsl_cost_flex_hit(0.25, &g260),
              "260 groups: another hit");
        CHECK(memcmp(&g4_walked, &g4_made, sizeof(g4_walked)) == 0,
              "260 groups' figures: not read for 4 (walked)");
    }
    { /* Megatron-LM's FP8 dispatch runs the flex dispatcher (ncclep): its all-to-alls
         are the flex ones, asked for or not, in FP8 or not (the export writes flex, the
         Megatron-LM line reads back as moe_flex) */
        tsl_layer_cost_t r8[2];
        for (int i = 0; i < 2; i++) {
            tsl_cost_env_t env;
            CHECK(tsl_cost_env_init(&env, &c, 0, 32, &err) == 0, "%s", err.msg);
            env.knobs.ep = 32;
            env.knobs.fp8 = TSL_FP8_BLOCKWISE;
            env.knobs.moe_fp8_dispatch = true;
            env.knobs.moe_flex = i == 1;
            tsl_cost_layer(&env, &l, &s, NULL, 32, &r8[i]);
        }
        CHECK(r8[0].ep_s == r8[1].ep_s, "FP8 dispatch: %g s, with moe_flex %g s", r8[0].ep_s,
              r8[1].ep_s);
    }
    { /* inside one NVLink domain the flex dispatcher sends a token once to each rank
         holding one of its experts (HybridEP's sparse_to_dense_map, DeepEP's
         is_token_in_rank), not once per expert: a plain top-4 of 32 over EP 8 reaches
         a rank with chance 1 − C(28,4)/C(32,4), so its NVLink bytes are 8 · that / 4 of
         NCCL's. The bytes' share, α aside: each time's growth from 4096 to 8192 tokens */
        tsl_layer_t plain = l;
        plain.router_groups = plain.router_topk_groups = 0;
        tsl_cluster_t one_node;
        CHECK(tsl_cluster_parse_spec(&one_node, "1x8xH100-80G", &err) == 0, "%s", err.msg);
        tsl_strategy_t s8 = one(TSL_DIM_DP, 8, false);
        double t[2][2];
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) {
                tsl_layer_t x = plain;
                x.seq_len = 4096u << j;
                CHECK(tsl_layer_derive(&x, &err) == 0, "%s", err.msg);
                tsl_cost_env_t env;
                tsl_layer_cost_t r;
                CHECK(tsl_cost_env_init(&env, &one_node, 0, 8, &err) == 0, "%s", err.msg);
                env.knobs.ep = 8;
                env.knobs.moe_flex = i == 1;
                tsl_cost_layer(&env, &x, &s8, NULL, 8, &r);
                t[i][j] = r.ep_s;
            }
        double hit = 1.0 - (28.0 * 27 * 26 * 25) / (32.0 * 31 * 30 * 29);
        CHECK(t[1][0] < t[0][0], "flex in one domain: %g s, NCCL %g s", t[1][0], t[0][0]);
        CHECK_NEAR((t[1][1] - t[1][0]) / (t[0][1] - t[0][0]), 8 * hit / 4, 1e-9,
                   "flex in one domain: one copy per rank");
        tsl_cluster_free(&one_node);
    }
    CHECK(a2a[0] > 31.0 / 32 * B / (31 * cap / 192) &&
              a2a[0] < 31.0 / 32 * B / (31 * cap / 192) + 1e-3,
          "NCCL: %g s, bandwidth term %g", a2a[0], 31.0 / 32 * B / (31 * cap / 192));
    /* PAPER mode keeps the slowest link whatever the dispatcher */
    tsl_cost_env_t p;
    tsl_layer_cost_t rp[2];
    for (int i = 0; i < 2; i++) {
        CHECK(tsl_cost_env_init(&p, &c, 0, 32, &err) == 0, "%s", err.msg);
        p.mode = TSL_COST_PAPER;
        p.knobs.ep = 32;
        p.knobs.moe_flex = i == 1;
        tsl_cost_layer(&p, &l, &s, NULL, 32, &rp[i]);
    }
    CHECK(rp[0].ep_s == rp[1].ep_s, "PAPER: the same with and without flex");
    tsl_cluster_free(&c);
}

/* The EP, expert-DP and expert-TP groups' figures made once per block
 * (tsl_cost_moe_bw, the search's cache) price a MoE layer as the topology walk
 * tsl_cost_layer makes without them does, at several (EP, expert TP) degrees in
 * turn as a search tries them, in the default mode with NCCL's α's: the whole
 * result the same to the byte. Figures made at other degrees, or never made, are
 * not read (the layer walks); the made ones are read (a figure spoiled on purpose
 * shows), so the groups made are moe_terms' own. */
/* A block's strategies' figures, walked and read back from kept walks
 * (tsl_cost_walks_t), bit for bit: kept in an empty table, read from it again (nothing
 * walked again), kept in a table that fills up and starts afresh, and with a table of
 * another cluster (not read, nothing made). */
static void bw_each_way(const tsl_cost_env_t *env, tsl_cost_walks_t *walks, const tsl_strategy_t *s,
                        tsl_strategy_bw_t *out)
{
    tsl_cost_env_t e = *env;
    e.walks = walks;
    memset(out, 0, sizeof(*out));
    tsl_cost_strategy_bw(&e, s, out);
}

/* Every strategy of every block of `size` devices from 0 to `span` in steps of `step`
 * priced with no table and with each of the n tables, twice (pass 1 reads what pass 0
 * kept); the figures the same to the byte. kept_n[t]: table t's walks after pass 0. */
static void walks_each_block(const tsl_cluster_t *c, uint32_t size, uint32_t step, uint32_t span,
                             tsl_cost_walks_t *const *tables, uint32_t n, uint32_t *kept_n)
{
    static tsl_strategy_t all[TSL_STRATEGY_MAX];
    tsl_strategy_opts_t opts = tsl_strategy_opts_default();
    tsl_err_t err = {0};
    int ns = tsl_strategy_enumerate(size, &opts, all, NULL, TSL_STRATEGY_MAX, &err);
    CHECK(ns > 0, "enumerate %u: %s", size, err.msg);
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t first = 0; first + size <= span; first += step) {
            tsl_cost_env_t env;
            CHECK(tsl_cost_env_init(&env, c, first, size, &err) == 0, "%s", err.msg);
            env.knobs.cp = size >= 64 ? 4 : 2;
            env.knobs.cp_comm = TSL_CP_A2A; /* the all-to-all's walk too */
            for (int i = 0; i < ns; i++) {
                tsl_strategy_bw_t want, got;
                bw_each_way(&env, NULL, &all[i], &want);
                for (uint32_t t = 0; t < n; t++) {
                    bw_each_way(&env, tables[t], &all[i], &got);
                    CHECK(memcmp(&want, &got, sizeof(got)) == 0,
                          "block %u+%u strategy %d pass %d table %u: kept walks' figures", first,
                          size, i, pass, t);
                }
            }
        }
        for (uint32_t t = 0; t < n && pass == 0; t++)
            kept_n[t] = tables[t]->figures.n;
    }
}

static void test_kept_walks(void)
{
    tsl_cluster_t c, other;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "64x8xH100-80G:8xib400", &err) == 0, "%s", err.msg);
    CHECK(tsl_cluster_parse_spec(&other, "2x8xA100-80G:ib100", &err) == 0, "%s", err.msg);
    tsl_cost_walks_t *kept = tsl_cost_walks_new(&c), *small = tsl_cost_walks_new(&c);
    tsl_cost_walks_t *foreign = tsl_cost_walks_new(&other);
    CHECK(kept && small && foreign, "walk tables made");
    if (!kept || !small || !foreign)
        return;
    CHECK(kept->figures.cap == 0 && kept->figures.n == 0, "no slots before the first walk");
    small->figures.most = TSL_COST_WALKS_FIRST; /* never grows: fills up and starts afresh */
    tsl_cost_walks_t *const tables[] = {kept, small, foreign};
    uint32_t n[3], after[3];
    /* big blocks, then many small ones at every offset: more groups than the first
     * slots hold */
    walks_each_block(&c, 512, 256, 512, tables, 3, n);
    walks_each_block(&c, 64, 64, 512, tables, 3, n);
    walks_each_block(&c, 4, 4, 512, tables, 3, n);
    walks_each_block(&c, 8, 2, 512, tables, 3, after);
    CHECK(kept->figures.n > 3 * TSL_COST_WALKS_FIRST / 4 &&
              kept->figures.cap > TSL_COST_WALKS_FIRST &&
              4 * kept->figures.n <= 3 * kept->figures.cap && kept->figures.restarts == 0,
          "the table grew to hold its %u walks (%u slots, %u restarts)", kept->figures.n,
          kept->figures.cap, kept->figures.restarts);
    CHECK(after[0] == kept->figures.n,
          "a kept walk is not walked again: %u walks after pass 0, %u after", after[0],
          kept->figures.n);
    CHECK(small->figures.cap == TSL_COST_WALKS_FIRST && small->figures.restarts > 0 &&
              4 * small->figures.n <= 3 * small->figures.cap,
          "a table at its most slots starts afresh (%u slots, %u walks, %u restarts)",
          small->figures.cap, small->figures.n, small->figures.restarts);
    CHECK(foreign->figures.cap == 0 && foreign->figures.n == 0,
          "another cluster's table left as it was");
    tsl_cost_walks_free(kept);
    tsl_cost_walks_free(small);
    tsl_cost_walks_free(foreign);
    tsl_cluster_free(&c);
    tsl_cluster_free(&other);
}

static void test_moe_bw_made(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "4x8xH100-80G:8xib400", &err) == 0, "%s", err.msg);
    tsl_layer_t l = {.kind = TSL_LAYER_FFN,
                     .seq_len = 4096,
                     .hidden = 4096,
                     .ffn_hidden = 14336,
                     .heads = 32,
                     .gated_ffn = true,
                     .no_bias = true,
                     .rms_norm = true,
                     .experts = 8,
                     .experts_per_tok = 2};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    tsl_cost_env_t env;
    CHECK(tsl_cost_env_init(&env, &c, 0, 32, &err) == 0, "%s", err.msg);
    const tsl_dim_t tp_dp[2] = {TSL_DIM_TP, TSL_DIM_DP}, tp_sdp[2] = {TSL_DIM_TP, TSL_DIM_SDP};
    const uint32_t d84[2] = {8, 4}, d216[2] = {2, 16};
    const tsl_strategy_t ss[] = {one(TSL_DIM_DP, 32, false), one(TSL_DIM_SDP, 32, true),
                                 strat(2, tp_dp, d84, false), strat(2, tp_sdp, d216, false)};
    enum { NS = sizeof(ss) / sizeof(ss[0]), ND = 4 };
    const uint32_t eps[ND] = {2, 8, 4, 2}, etps[ND] = {1, 1, 2, 4};
    tsl_layer_cost_t ref[ND][NS];
    memset(ref, 0, sizeof(ref));
    for (int i = 0; i < ND; i++) {
        tsl_cost_env_t other = env;
        env.knobs.ep = eps[i];
        env.knobs.etp = etps[i];
        other.knobs.ep = eps[(i + 1) % ND];
        other.knobs.etp = etps[(i + 1) % ND];
        for (size_t k = 0; k < NS; k++) {
            tsl_strategy_bw_t made, stale, plain;
            tsl_layer_cost_t got;
            tsl_cost_layer(&env, &l, &ss[k], NULL, 32, &ref[i][k]);
            CHECK(ref[i][k].feasible && ref[i][k].ep_s > 0, "ep %u etp %u, strategy %zu feasible",
                  eps[i], etps[i], k);
            tsl_cost_strategy_bw(&env, &ss[k], &made);
            tsl_cost_moe_bw(&env, &l, &made);
            memset(&got, 0, sizeof(got));
            tsl_cost_layer(&env, &l, &ss[k], &made, 32, &got);
            CHECK(memcmp(&got, &ref[i][k], sizeof(got)) == 0,
                  "ep %u etp %u, strategy %zu: made figures %.9g s, walked %.9g s", eps[i], etps[i],
                  k, got.fwd_s, ref[i][k].fwd_s);
            tsl_cost_strategy_bw(&env, &ss[k], &plain); /* none made */
            memset(&got, 0, sizeof(got));
            tsl_cost_layer(&env, &l, &ss[k], &plain, 32, &got);
            CHECK(memcmp(&got, &ref[i][k], sizeof(got)) == 0,
                  "ep %u etp %u, strategy %zu: none made", eps[i], etps[i], k);
            tsl_cost_strategy_bw(&other, &ss[k], &stale); /* made at other degrees */
            tsl_cost_moe_bw(&other, &l, &stale);
            memset(&got, 0, sizeof(got));
            tsl_cost_layer(&env, &l, &ss[k], &stale, 32, &got);
            CHECK(memcmp(&got, &ref[i][k], sizeof(got)) == 0,
                  "ep %u etp %u, strategy %zu: figures of ep %u etp %u", eps[i], etps[i], k,
                  other.knobs.ep, other.knobs.etp);
            /* each made group of more than one rank is read: spoilt, it shows */
            for (uint32_t q = 0; k == 0 && q < TSL_COST_MOE_GROUPS; q++) {
                if (made.moe[q].degree <= 1)
                    continue;
                tsl_strategy_bw_t spoilt = made;
                spoilt.moe[q].bw /= 2; /* the EP group's all-to-all reads its own */
                spoilt.moe[q].a2a_bw /= 2;
                tsl_cost_layer(&env, &l, &ss[k], &spoilt, 32, &got);
                CHECK(got.fwd_s + got.bwd_s + got.grad_comm_s + got.opt_s >
                          ref[i][k].fwd_s + ref[i][k].bwd_s + ref[i][k].grad_comm_s +
                              ref[i][k].opt_s,
                      "ep %u etp %u: made group %u (%u@%u) not read", eps[i], etps[i], q,
                      made.moe[q].degree, made.moe[q].stride);
            }
        }
        tsl_strategy_bw_t g;
        tsl_cost_moe_bw(&env, &l, &g);
        const uint32_t ep = eps[i], etp = etps[i];
        CHECK(g.moe[0].stride == etp && g.moe[0].degree == ep && g.moe[1].stride == ep * etp &&
                  g.moe[1].degree == 32 / (ep * etp) && g.moe[2].stride == 1 &&
                  g.moe[2].degree == etp,
              "ep %u etp %u: groups %u@%u, %u@%u and %u@%u", ep, etp, g.moe[0].degree,
              g.moe[0].stride, g.moe[1].degree, g.moe[1].stride, g.moe[2].degree, g.moe[2].stride);
        CHECK(g.moe[0].lat.n == ep && g.moe[0].lat.ar_s[TSL_NCCL_RING][TSL_NCCL_SIMPLE] > 0,
              "ep %u etp %u: the EP group's NCCL α's made (n %u)", ep, etp, g.moe[0].lat.n);
    }
    /* the degrees price differently: a figure of one read at another would show */
    CHECK(ref[0][0].ep_s != ref[1][0].ep_s && ref[0][0].grad_comm_s != ref[1][0].grad_comm_s,
          "ep 2 and ep 8: all-to-all %g vs %g s, gradient sync %g vs %g s", ref[0][0].ep_s,
          ref[1][0].ep_s, ref[0][0].grad_comm_s, ref[1][0].grad_comm_s);
    CHECK(ref[0][0].ep_s != ref[3][0].ep_s, "ep 2 at etp 1 and 4: %g vs %g s", ref[0][0].ep_s,
          ref[3][0].ep_s);
    tsl_cluster_free(&c);
}

/* The Mixtral layer of test_moe with the routed rows as knobs set them
 * (tsl_cost_moe_rows) and expert TP etp: the forward of roofline.h by hand, m =
 * etp·ep·R/E × busy rows per local expert at width f/etp, permute bytes × moved. */
static double moe_fwd_by_hand(const tsl_roofline_dev_t *d, double ep, double etp, double busy,
                              double moved)
{
    const double h = 4096, f = 14336, E = 8, T = 4096, R = 2 * T;
    double m = etp * ep * R / E * busy, local = E / ep, fe = f / etp;
    return tsl_roofline_gemm_s(d, T, E, h, 1) + tsl_roofline_mem_s(d, 8 * T * E, 2) +
           tsl_roofline_mem_s(d, 8 * moved * R * h, 2) +
           tsl_roofline_gemm_s(d, m, 2 * fe, h, local) +
           tsl_roofline_mem_s(d, 2 * 3 * fe * m * local, 1) +
           tsl_roofline_gemm_s(d, m, h, fe, local) + tsl_roofline_mem_s(d, 10 * h * T, 2);
}

/* Expert TP 2 and a capacity factor on test_moe's Mixtral layer (8xH100-80G, DP 8,
 * one sample per rank, PAPER mode, no host floor; docs/cost-model.md "Mixture of
 * experts"), each figure by hand:
 *   ep 4 × etp 2 (expert DP 1): rows per local expert m = 2·4·R/8 = R = 8192 at
 *   f/2 = 7168; per pass the dispatch and combine all-to-alls of R·h·2 bytes over 4
 *   ranks at stride 2 and the gather and reduce-scatter of 2·R·h·2 bytes over the
 *   2 innermost ranks; the experts' states 16·E·p_e/8 = 16·p_e, their gradients
 *   not synchronised (expert DP 1); the stash holds the gathered copies: 2·R·h·2 −
 *   R·h·2 = R·h·2 bytes more than at etp 1.
 *   capacity 1.25 against an imbalance 1.5: the busiest expert runs 1.25 × the mean
 *   (tokens dropped), the exchange the mean; padded, everything 1.25 × the mean and
 *   the stash 0.25·k·T·(2h + 6f) bytes more; capacity 0.5 drops half of it. */
/* The experts after the sync (cost.c moe_sync_stretch, cost model 167): Qwen3-30B-A3B's
 * MoE FFN (h 2048, 128 experts of 768, top-8) at EP 8, MXFP8, the flex dispatcher, 4
 * samples of 4096 tokens a device — the 26.04 preset on two GB200 trays and one DGX
 * B200. On B200's x86 host the 16 local experts' host ops stay under their kernels and
 * the dispatch and combine: nothing shows. On Grace (host_scale 2.75) they do not, and
 * the forward (only) takes host − GPU more; none with a capacity factor (no sync) or
 * under TE's op fuser (no per-expert calls). */
static void test_moe_sync_stretch(void)
{
    tsl_err_t err = {0};
    tsl_layer_t l = moe_ffn(2048, 768, 32, 128, 8);
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    const char *spec[2] = {"8xB200-180G", "2x4xGB200-186G:nvl72"};
    tsl_strategy_t s = one(TSL_DIM_DP, 8, false);
    for (int i = 0; i < 2; i++) {
        tsl_cluster_t c;
        tsl_cost_env_t env;
        CHECK(tsl_cluster_parse_spec(&c, spec[i], &err) == 0, "%s", err.msg);
        CHECK(tsl_cost_env_init(&env, &c, 0, 8, &err) == 0, "%s", err.msg);
        /* cost model 171: the host's pace on every host op, not only the stretch */
        CHECK(env.host_op_s == TSL_ROOFLINE_HOST_OP_S * (i ? 2.75 : 1.0),
              "the built-in host figure at the host's pace: %g", env.host_op_s);
        CHECK(env.host_scale == (i ? 2.75 : 1.0), "%s host_scale %g", spec[i], env.host_scale);
        env.mode = TSL_COST_STACK;
        env.knobs.ep = 8;
        env.knobs.fp8 = TSL_FP8_MXFP8;
        env.knobs.moe_flex = true;
        double scale = env.host_scale;
        tsl_layer_cost_t x86, r, raw;
        env.host_op_s = 0.0; /* no host: the EP collectives whole (ep_host_lead off) */
        tsl_cost_layer(&env, &l, &s, NULL, 32, &raw);
        env.host_op_s = TSL_ROOFLINE_HOST_OP_S; /* the x86 host's figure */
        tsl_cost_layer(&env, &l, &s, NULL, 32, &x86);
        env.host_op_s = TSL_ROOFLINE_HOST_OP_S * scale; /* the block's own */
        tsl_cost_layer(&env, &l, &s, NULL, 32, &r);
        CHECK(x86.feasible && r.feasible, "%s feasible", spec[i]);
        /* the stretch by hand: the roofline's expert ops and kernels, the forward's EP
         * collectives (half of ep_s without a host: the same all-to-alls each pass) */
        tsl_roofline_dev_t d;
        tsl_roofline_dev_init(&d, env.device_flops, env.device_mem_bw);
        d.shape = env.gemm_shape;
        d.host_op_s = TSL_ROOFLINE_HOST_OP_S;
        d.ep = 8;
        d.fp8 = TSL_FP8_MXFP8;
        d.fp8_flops = env.device_fp8_flops;
        d.moe_fp8 = true;
        tsl_roofline_fwd_t f;
        tsl_roofline_layer_fwd(&d, &l, 4, 1, false, 0, &f);
        CHECK(f.expert_ops >= 2 * 16, "FP8: one op a local expert and linear at least: %g",
              f.expert_ops);
        double host = f.expert_ops * TSL_ROOFLINE_HOST_OP_S;
        double gpu = f.expert_gpu_s + raw.ep_s / 2;
        CHECK(host < gpu, "%s: x86 host %g under the GPU's %g", spec[i], host, gpu);
        /* each pace's forward by hand: its floor (TE's per-expert calls in it since cost
         * model 198) hides what it can of the forward's EP collectives (ep_host_lead);
         * the stretch is what the sync leaves beyond that floor, less what of the floor
         * hid them (cost model 171) */
        tsl_roofline_fwd_t fg;
        d.host_op_s = env.host_op_s;
        tsl_roofline_layer_fwd(&d, &l, 4, 1, false, 0, &fg);
        double ep_f = raw.ep_s / 2, fwd[2], stretch[2], hid[2];
        const tsl_roofline_fwd_t *pass[2] = {&f, &fg};
        for (int k = 0; k < 2; k++) {
            double floor = fmax(0.0, pass[k]->s - pass[k]->gpu_s);
            hid[k] = fmin(ep_f, floor);
            stretch[k] = fmax(0.0, (k ? scale : 1.0) * host - gpu - (floor - hid[k]));
            fwd[k] = pass[k]->s - hid[k] + stretch[k];
        }
        CHECK(stretch[0] == 0, "%s: no stretch at the x86 pace: %g", spec[i], stretch[0]);
        /* the host's serial work: the pass's ops and the per-expert calls at its pace */
        CHECK(fg.s >= scale * host, "%s: floor %g holds the stretch's host %g", spec[i], fg.s,
              scale * host);
        CHECK_NEAR(r.fwd_s - x86.fwd_s, fwd[1] - fwd[0], 1e-9,
                   "%s: the forward takes it: +%g, by hand %g", spec[i], r.fwd_s - x86.fwd_s,
                   fwd[1] - fwd[0]);
        /* a capacity factor (HybridEP's fixed budget): no sync, no stretch; the floor's
         * calls stay (the host issues them either way) */
        tsl_layer_cost_t a, b;
        env.knobs.moe_capacity = 1.5;
        tsl_cost_layer(&env, &l, &s, NULL, 32, &r);
        env.host_op_s = TSL_ROOFLINE_HOST_OP_S;
        tsl_cost_layer(&env, &l, &s, NULL, 32, &a);
        CHECK_NEAR(r.fwd_s - a.fwd_s, (fg.s - hid[1]) - (f.s - hid[0]), 1e-9,
                   "%s: capacity factor, no sync: +%g", spec[i], r.fwd_s - a.fwd_s);
        env.knobs.moe_capacity = 0;
        env.knobs.moe_fused_mlp = true;
        tsl_cost_layer(&env, &l, &s, NULL, 32, &a);
        env.host_op_s = TSL_ROOFLINE_HOST_OP_S * scale;
        tsl_cost_layer(&env, &l, &s, NULL, 32, &b);
        CHECK(a.fwd_s == b.fwd_s, "%s: TE's op fuser, no per-expert calls", spec[i]);
        tsl_cluster_free(&c);
    }
}

/* The host between two syncs (cost model 198): a dropless MoE forward syncs once
 * (Megatron-LM 44151194 token_dispatcher.py: the all-to-all dispatcher's
 * d2h_event.synchronize() before its all-to-all; HybridEP and DeepEP size their output
 * on the host), and one host thread issues everything from one layer's sync to the
 * next: the pass's ops and TE's per-expert calls (TransformerEngine release_v2.16
 * grouped_linear.py, cost model 167's count, 3 framework ops an expert and linear
 * under FP8). Both are the forward's floor. Qwen3-30B-A3B's MoE FFN, MXFP8, the
 * all-to-all dispatcher, a quarter sample on a B200 (host-bound): 16 local experts at
 * EP 8 against 8 at EP 16 issue 2 · 8 · 3 / 3 = 16 host ops more, and the forward
 * takes 16 · H more — at cost model 196 the two floors were equal. */
static void test_moe_te_host_floor(void)
{
    tsl_err_t err = {0};
    tsl_layer_t l = moe_ffn(2048, 768, 32, 128, 8);
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    tsl_cluster_t c;
    tsl_cost_env_t env;
    CHECK(tsl_cluster_parse_spec(&c, "8xB200-180G", &err) == 0, "%s", err.msg);
    CHECK(tsl_cost_env_init(&env, &c, 0, 8, &err) == 0, "%s", err.msg);
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, env.device_flops, env.device_mem_bw);
    d.shape = env.gemm_shape;
    d.host_op_s = TSL_ROOFLINE_HOST_OP_S;
    d.fp8 = TSL_FP8_MXFP8;
    d.fp8_flops = env.device_fp8_flops;
    d.moe_fp8 = true;
    d.moe_a2a = true;
    tsl_roofline_fwd_t f8, f16;
    d.ep = 8;
    tsl_roofline_layer_fwd(&d, &l, 0.25, 1, false, 0, &f8);
    d.ep = 16;
    tsl_roofline_layer_fwd(&d, &l, 0.25, 1, false, 0, &f16);
    CHECK(f8.s > f8.gpu_s && f16.s > f16.gpu_s, "host-bound: %g over %g, %g over %g", f8.s,
          f8.gpu_s, f16.s, f16.gpu_s);
    CHECK_NEAR(f8.expert_ops - f16.expert_ops, 16.0, 1e-9, "the stretch's ops: %g more",
               f8.expert_ops - f16.expert_ops);
    CHECK_NEAR(f8.s - f16.s, 16.0 * TSL_ROOFLINE_HOST_OP_S, 1e-12,
               "the floor holds the per-expert calls: %g s more, 16 H = %g", f8.s - f16.s,
               16.0 * TSL_ROOFLINE_HOST_OP_S);
    /* the layer's forward, EP and stretch told, is never under the host's serial work */
    env.mode = TSL_COST_STACK;
    env.host_op_s = TSL_ROOFLINE_HOST_OP_S;
    env.knobs.ep = 8;
    env.knobs.fp8 = TSL_FP8_MXFP8;
    env.knobs.moe_alltoall = true;
    tsl_strategy_t s = one(TSL_DIM_DP, 8, false);
    tsl_layer_cost_t r;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &r);
    d.ep = 8;
    tsl_roofline_layer_fwd(&d, &l, 1, 1, false, 0, &f8); /* a sample a device */
    CHECK(r.feasible, "feasible");
    CHECK(f8.s > f8.gpu_s, "a sample: host-bound, %g over %g", f8.s, f8.gpu_s);
    CHECK(r.fwd_s >= f8.s - 1e-12, "forward %g under the host's %g", r.fwd_s, f8.s);
    tsl_cluster_free(&c);
}

static void test_moe_etp_capacity(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "8xH100-80G", &err) == 0, "%s", err.msg);
    const double h = 4096, f = 14336, E = 8, k = 2, T = 4096, R = k * T;
    tsl_layer_t l = mixtral_ffn(&err);
    const double pe = 3 * h * f, dense = h * E + h;
    tsl_cost_env_t env;
    CHECK(tsl_cost_env_init(&env, &c, 0, 8, &err) == 0, "%s", err.msg);
    env.mode = TSL_COST_PAPER;
    env.host_op_s = 0;
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, env.device_flops, env.device_mem_bw);
    d.shape = env.gemm_shape;
    tsl_strategy_t s = one(TSL_DIM_DP, 8, false);
    tsl_layer_cost_t e1, e2;
    env.knobs.ep = 4;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &e1);
    env.knobs.etp = 2;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &e2);
    const double bw_ep = tsl_cluster_dim_bw(&c, 0, 8, 2, 4),
                 bw_etp = tsl_cluster_dim_bw(&c, 0, 8, 1, 2);
    double a2a = 3.0 / 4 * (2 * R * h) / bw_ep, tpc = 1.0 / 2 * (2 * 2 * R * h) / bw_etp;
    CHECK(e1.feasible && e2.feasible, "ep 4 at etp 1 and 2 feasible");
    CHECK_NEAR(e2.ep_s, 4 * (a2a + tpc), 1e-12, "etp 2: 4 all-to-alls + 2 gathers + 2 scatters");
    double fwd = moe_fwd_by_hand(&d, 4, 2, 1, 1);
    CHECK_NEAR(e2.fwd_s, fwd + 2 * (a2a + tpc), 1e-12, "etp 2 forward %g, by hand %g", e2.fwd_s,
               fwd + 2 * (a2a + tpc));
    CHECK(e2.ms_bytes == (uint64_t)(16 * (pe + dense)), "etp 2 states %llu, 16 x %g",
          (unsigned long long)e2.ms_bytes, pe + dense);
    CHECK(e1.ms_bytes == (uint64_t)(16 * (2 * pe + dense)), "etp 1: two experts per rank");
    CHECK(e2.fwd_bytes - e1.fwd_bytes == (uint64_t)(R * h * 2), "etp 2 stash +%llu",
          (unsigned long long)(e2.fwd_bytes - e1.fwd_bytes));
    CHECK_NEAR(e2.grad_comm_s,
               tsl_cost_allreduce_s(2 * dense, 8, tsl_cluster_dim_bw(&c, 0, 8, 1, 8)), 1e-12,
               "expert DP 1: only the router's and norm's gradients reduced");
    /* etp must divide f and ep·etp the block */
    env.knobs.etp = 3;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &e2);
    CHECK(!e2.feasible && !tsl_cost_ep_fits(&l, 8, 2, 3), "etp 3 does not divide f 14336");
    CHECK(!tsl_cost_ep_fits(&l, 8, 4, 4) && tsl_cost_ep_fits(&l, 8, 2, 4) &&
              tsl_cost_ep_fits(&l, 8, 1, 8),
          "ep x etp must divide the block of 8");

    /* capacity factor: the busiest expert's rows (imbalance 1.5 as the worst) */
    double busy, moved;
    tsl_cost_knobs_t kn = {.moe_imbalance = 1.5};
    tsl_cost_moe_rows(&kn, &busy, &moved);
    CHECK(busy == 1.5 && moved == 1, "dropless: the imbalance %g, %g", busy, moved);
    kn.moe_capacity = 1.25;
    tsl_cost_moe_rows(&kn, &busy, &moved);
    CHECK(busy == 1.25 && moved == 1, "capacity 1.25: %g, %g", busy, moved);
    kn.moe_pad = true;
    tsl_cost_moe_rows(&kn, &busy, &moved);
    CHECK(busy == 1.25 && moved == 1.25, "padded: %g, %g", busy, moved);
    kn.moe_capacity = 0.5;
    kn.moe_pad = false;
    tsl_cost_moe_rows(&kn, &busy, &moved);
    CHECK(busy == 0.5 && moved == 0.5, "capacity 0.5 drops half: %g, %g", busy, moved);

    tsl_layer_cost_t imb, cap, pad, half;
    env.knobs = (tsl_cost_knobs_t){.ep = 8, .moe_imbalance = 1.5};
    tsl_cost_layer(&env, &l, &s, NULL, 8, &imb);
    env.knobs.moe_capacity = 1.25;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &cap);
    env.knobs.moe_pad = true;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &pad);
    env.knobs.moe_pad = false;
    env.knobs.moe_capacity = 0.5;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &half);
    const double bw = tsl_cluster_dim_bw(&c, 0, 8, 1, 8), a8 = 7.0 / 8 * (2 * R * h) / bw;
    CHECK_NEAR(imb.fwd_s, moe_fwd_by_hand(&d, 8, 1, 1.5, 1) + 2 * a8, 1e-12, "imbalance 1.5");
    CHECK_NEAR(cap.fwd_s, moe_fwd_by_hand(&d, 8, 1, 1.25, 1) + 2 * a8, 1e-12,
               "capacity 1.25: 1.25 x the mean rows, the mean exchanged");
    CHECK_NEAR(pad.fwd_s, moe_fwd_by_hand(&d, 8, 1, 1.25, 1.25) + 2 * 1.25 * a8, 1e-12,
               "padded: 1.25 x the rows and the exchange");
    CHECK_NEAR(half.fwd_s, moe_fwd_by_hand(&d, 8, 1, 0.5, 0.5) + 2 * 0.5 * a8, 1e-12,
               "capacity 0.5: half the rows and the exchange");
    CHECK(cap.fwd_s < imb.fwd_s && pad.fwd_s > cap.fwd_s, "dropping is faster, padding slower");
    double extra = 0.25 * k * T * (2 * h + 6 * f); /* k input copies and SwiGLU's 3 f */
    CHECK(cap.fwd_bytes == imb.fwd_bytes, "capacity without padding: the mean's stash");
    CHECK(pad.fwd_bytes - cap.fwd_bytes == (uint64_t)extra, "padded stash +%llu, by hand %g",
          (unsigned long long)(pad.fwd_bytes - cap.fwd_bytes), extra);
    CHECK(imb.fwd_bytes - half.fwd_bytes == (uint64_t)(2 * extra), "capacity 0.5 stash -%llu",
          (unsigned long long)(imb.fwd_bytes - half.fwd_bytes));
    CHECK(pad.ms_bytes == imb.ms_bytes, "states do not depend on routing");
    tsl_cluster_free(&c);
}

/* DeepSeek-V3's latent attention (h 7168, 128 heads, q_lora 1536, kv_lora 512,
 * nope 128, rope 64, v 128; 4096 tokens) on one H100: the forward less its core
 * is the projections' GEMMs, the latents' norms and the block's elementwise work,
 * by hand (roofline.h "Multi-head latent attention"). */
static void test_mla(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "1xH100-80G", &err) == 0, "%s", err.msg);
    tsl_layer_t l = dsv3_mla_attention();
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    tsl_cost_env_t env;
    CHECK(tsl_cost_env_init(&env, &c, 0, 1, &err) == 0, "%s", err.msg);
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, env.device_flops, env.device_mem_bw);
    d.shape = env.gemm_shape;
    const double T = 4096, h = 7168, a = 128, q = 1536, ckv = 512, n = 128, r = 64, v = 128;
    double gemms =
        tsl_roofline_gemm_s(&d, T, q, h, 1) + tsl_roofline_gemm_s(&d, T, a * (n + r), q, 1) +
        tsl_roofline_gemm_s(&d, T, ckv + r, h, 1) +
        tsl_roofline_gemm_s(&d, T, a * (n + v), ckv, 1) + tsl_roofline_gemm_s(&d, T, h, a * v, 1);
    double elem =
        tsl_roofline_mem_s(&d, 4 * T * (q + ckv), 2) + tsl_roofline_mem_s(&d, 10 * h * T, 2);
    double fwd = tsl_roofline_layer_fwd_s(&d, &l, 1, 1, false, 0);
    double core = tsl_roofline_core_fwd_s(&d, &l, 1, 1);
    CHECK_NEAR(fwd - core, gemms + elem, 1e-12, "MLA forward less core %g, by hand %g", fwd - core,
               gemms + elem);
    /* the core's FLOPs: Q·K over n + r and A·V over v per head, causal (half the keys) */
    CHECK(core > 2.0 * T * T * a * (n + r + v) / 2 / env.device_flops, "core at most the peak");
    tsl_cluster_free(&c);
}

/* A recompute mask and the stash bytes it drops from a layer, by hand. */
typedef struct recompute_case {
    uint32_t mask;
    double drop;
} recompute_case_t;

/* Each case's mask priced on layer l at strategy s against the same layer without one:
 * the stash drops its bytes, the model states stay, and the backward is longer exactly
 * where something is dropped (recomputed). */
static void check_recompute_drops(tsl_cost_env_t *env, const tsl_layer_t *l,
                                  const tsl_strategy_t *s, const char *what,
                                  const recompute_case_t *cases, size_t n)
{
    tsl_layer_cost_t base, mod;
    env->knobs.recompute_modules = 0;
    tsl_cost_layer(env, l, s, NULL, 1, &base);
    for (size_t i = 0; i < n; i++) {
        env->knobs.recompute_modules = cases[i].mask;
        tsl_cost_layer(env, l, s, NULL, 1, &mod);
        CHECK(base.fwd_bytes - mod.fwd_bytes == (uint64_t)cases[i].drop,
              "%s, mask 0x%x drops %llu bytes, by hand %.0f", what, cases[i].mask,
              (unsigned long long)(base.fwd_bytes - mod.fwd_bytes), cases[i].drop);
        CHECK(mod.ms_bytes == base.ms_bytes, "%s: recompute leaves the states", what);
        CHECK((mod.bwd_s > base.bwd_s) == (cases[i].drop > 0),
              "%s, mask 0x%x: recompute time %g > %g", what, cases[i].mask, mod.bwd_s, base.bwd_s);
    }
    env->knobs.recompute_modules = 0;
}

/* Megatron's recompute modules (recompute.h) on one layer, by hand.
 * (a) a DeepSeek-V3 layer (MLA + 256 experts top-8 + 1 shared, SwiGLU, 4096
 * tokens) on one H100, one sample: mla_up_proj drops the latents' norm outputs
 * 2·s·(q + c) and Q, K, V 4·s·a·(n + r) + 2·s·a·v; moe_act the routed copies'
 * activation outputs 2·k·s·f; layernorm the MLA input norm's and the pre-MoE
 * norm's outputs 2·s·h each; moe the whole MoE FFN's stash but its input.
 * (b) a Llama-2-7B-shaped dense layer: mlp drops the fused norm's output 2·s·h
 * and the FFN's 2·g·s·f + 2·s·f; its recompute is norm + FFN-in + SwiGLU +
 * FFN-out again in the backward, and with TP 2 one all-reduce more; under FP8
 * (delayed) the dropped inputs save no FP8 byte. (c) bf16 moments: 2 + 2 + 4 +
 * 2 + 2 = 12 B/param, 2 + 2 + 4/8 + (2 + 2)/8 under ZeRO-1 over 8, and an
 * optimizer step of 20 B. */
static void test_recompute_modules(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "8xH100-80G", &err) == 0, "%s", err.msg);
    tsl_layer_t dsv3 = {.kind = TSL_LAYER_ENCODER,
                        .seq_len = 4096,
                        .hidden = 7168,
                        .ffn_hidden = 2048,
                        .heads = 128,
                        .gated_ffn = true,
                        .no_bias = true,
                        .rms_norm = true,
                        .no_dropout = true,
                        .causal = true,
                        .experts = 256,
                        .experts_per_tok = 8,
                        .shared_experts = 1,
                        .q_lora_rank = 1536,
                        .kv_lora_rank = 512,
                        .qk_nope_dim = 128,
                        .qk_rope_dim = 64,
                        .v_head_dim = 128};
    CHECK(tsl_layer_derive(&dsv3, &err) == 0, "%s", err.msg);
    const double s = 4096, h = 7168, f = 2048, k = 8, E = 256, a = 128, q = 1536, ckv = 512,
                 n = 128, r = 64, v = 128;
    tsl_cost_env_t env;
    CHECK(tsl_cost_env_init(&env, &c, 0, 1, &err) == 0, "%s", err.msg);
    tsl_strategy_t single = {0};
    tsl_layer_cost_t base, mod;
    const recompute_case_t cases[] = {
        {TSL_RECOMPUTE_MLA_UP_PROJ, 2 * s * (q + ckv) + 4 * s * a * (n + r) + 2 * s * a * v},
        {TSL_RECOMPUTE_MOE_ACT, 2 * k * s * f},
        {TSL_RECOMPUTE_LAYERNORM, 2 * (2 * s * h)},
        {TSL_RECOMPUTE_MLA_UP_PROJ | TSL_RECOMPUTE_MOE_ACT,
         2 * s * (q + ckv) + 4 * s * a * (n + r) + 2 * s * a * v + 2 * k * s * f},
        /* the whole MoE FFN: k dispatched copies, fp32 probabilities, the routed
         * and shared experts' FFN stash; moe_act adds nothing beside it */
        {TSL_RECOMPUTE_MOE | TSL_RECOMPUTE_MOE_ACT,
         2 * k * s * h + 4 * s * E + k * 6 * s * f + 6 * s * f},
        {TSL_RECOMPUTE_MLP, 0}, /* no dense FFN in a MoE layer */
    };
    check_recompute_drops(&env, &dsv3, &single, "DeepSeek-V3", cases,
                          sizeof cases / sizeof cases[0]);
    /* (a') the same layer as a latent MoE one (ℓ 1024, Nemotron 3 Super's; cost model
     * 179): moe drops the ℓ-wide dispatched copies and fc2_latent_proj's ℓ-wide input,
     * both inside moe_layer.py's checkpointed custom_forward (model.h's latent stash),
     * not k h-wide copies; layernorm and moe_act as before (the norm's output, f-wide
     * activations) */
    tsl_layer_t lat = dsv3;
    lat.moe_latent = 1024;
    CHECK(tsl_layer_derive(&lat, &err) == 0, "%s", err.msg);
    const double lw = 1024;
    const recompute_case_t lcases[] = {
        {TSL_RECOMPUTE_MOE, 2 * k * s * lw + 4 * s * E + 2 * s * lw + k * 6 * s * f + 6 * s * f},
        {TSL_RECOMPUTE_LAYERNORM, 2 * (2 * s * h)},
        {TSL_RECOMPUTE_MOE_ACT, 2 * k * s * f},
    };
    check_recompute_drops(&env, &lat, &single, "latent", lcases, sizeof lcases / sizeof lcases[0]);
    /* full CKPT recomputes everything: the modules change nothing there */
    tsl_strategy_t ck = single;
    ck.ckpt = true;
    tsl_layer_cost_t fb, fm;
    env.knobs.recompute_modules = 0;
    tsl_cost_layer(&env, &dsv3, &ck, NULL, 1, &fb);
    env.knobs.recompute_modules = TSL_RECOMPUTE_ALL;
    tsl_cost_layer(&env, &dsv3, &ck, NULL, 1, &fm);
    CHECK(fb.fwd_bytes == fm.fwd_bytes && fb.bwd_bytes == fm.bwd_bytes && fb.bwd_s == fm.bwd_s,
          "+ckpt: modules ignored");

    /* (b) the dense MLP */
    tsl_layer_t ll = {.kind = TSL_LAYER_ENCODER,
                      .seq_len = 4096,
                      .hidden = 4096,
                      .ffn_hidden = 11008,
                      .heads = 32,
                      .gated_ffn = true,
                      .no_bias = true,
                      .rms_norm = true,
                      .no_dropout = true,
                      .causal = true};
    CHECK(tsl_layer_derive(&ll, &err) == 0, "%s", err.msg);
    const double H = 4096, F = 11008, T = 4096;
    env.knobs.recompute_modules = 0;
    tsl_cost_layer(&env, &ll, &single, NULL, 1, &base);
    env.knobs.recompute_modules = TSL_RECOMPUTE_MLP;
    tsl_cost_layer(&env, &ll, &single, NULL, 1, &mod);
    double mlp_drop = 2 * T * H + 2 * 2 * T * F + 2 * T * F;
    CHECK(base.fwd_bytes - mod.fwd_bytes == (uint64_t)mlp_drop, "mlp drops %llu, by hand %.0f",
          (unsigned long long)(base.fwd_bytes - mod.fwd_bytes), mlp_drop);
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, env.device_flops, env.device_mem_bw);
    d.shape = env.gemm_shape;
    double again = tsl_roofline_mem_s(&d, 4 * T * H, 1) + tsl_roofline_gemm_s(&d, T, 2 * F, H, 1) +
                   tsl_roofline_mem_s(&d, 2 * 3 * F * T, 1) + tsl_roofline_gemm_s(&d, T, H, F, 1);
    CHECK_NEAR(mod.bwd_s - base.bwd_s, again, 1e-12, "mlp recompute %g, by hand %g",
               mod.bwd_s - base.bwd_s, again);
    CHECK_NEAR(mod.compute_s - base.compute_s, again, 1e-12, "mlp recompute is compute");
    /* TP 2 (no SP): the MLP's forward again, split by 2, and its all-reduce */
    tsl_cost_env_t env2;
    CHECK(tsl_cost_env_init(&env2, &c, 0, 2, &err) == 0, "%s", err.msg);
    tsl_strategy_t tp2 = one(TSL_DIM_TP, 2, false);
    tsl_cost_layer(&env2, &ll, &tp2, NULL, 1, &base);
    env2.knobs.recompute_modules = TSL_RECOMPUTE_MLP;
    tsl_cost_layer(&env2, &ll, &tp2, NULL, 1, &mod);
    tsl_strategy_bw_t bw;
    tsl_cost_strategy_bw(&env2, &tp2, &bw);
    double ar = tsl_cluster_coll_allreduce_s(&bw.tp_lat, 2 * T * H, 2, bw.tp_bw, NULL);
    double again2 =
        tsl_roofline_mem_s(&d, 4 * T * H, 1) + tsl_roofline_gemm_s(&d, T, 2 * F / 2, H, 1) +
        tsl_roofline_mem_s(&d, 2 * 3 * F / 2 * T, 1) + tsl_roofline_gemm_s(&d, T, H, F / 2, 1);
    CHECK_NEAR(mod.bwd_s - base.bwd_s, again2 + ar, 1e-12, "tp 2: recompute %g + all-reduce %g",
               again2, ar);
    CHECK_NEAR(mod.comm_s - base.comm_s, ar, 1e-12, "the repeated all-reduce is communication");
    /* FP8 (delayed): the MLP's inputs are not kept, in FP8 or otherwise */
    env.knobs = (tsl_cost_knobs_t){.fp8 = TSL_FP8_DELAYED};
    tsl_cost_layer(&env, &ll, &single, NULL, 1, &base);
    env.knobs.recompute_modules = TSL_RECOMPUTE_MLP;
    tsl_cost_layer(&env, &ll, &single, NULL, 1, &mod);
    double fp8_kept = T * H + T * F; /* the FFN's FP8 inputs the plain layer saved on */
    CHECK(base.fwd_bytes - mod.fwd_bytes == (uint64_t)(mlp_drop - fp8_kept),
          "fp8 + mlp drops %llu, by hand %.0f",
          (unsigned long long)(base.fwd_bytes - mod.fwd_bytes), mlp_drop - fp8_kept);

    /* torchtitan_op (recompute.h): the block's stash but the saved mm outputs (the
     * larger alternate set wq, wv, w1, w2: 2·T·(d + e + f) sharded, 2·T·h
     * replicated) and SDPA's output and logsumexp (2·T·d + 4·T·a); again in the
     * backward, the block's forward but its core and half its linear GEMMs */
    env.knobs = (tsl_cost_knobs_t){0};
    tsl_cost_layer(&env, &ll, &single, NULL, 1, &base);
    env.knobs.recompute_modules = TSL_RECOMPUTE_TORCHTITAN_OP;
    tsl_cost_layer(&env, &ll, &single, NULL, 1, &mod);
    double kept = 2 * T * H + 2 * T * (H + H + F) + 2 * T * H + 4 * T * 32;
    double stash = (double)ll.act_repl_bytes + (double)ll.act_shard_bytes;
    CHECK(base.fwd_bytes - mod.fwd_bytes == (uint64_t)(stash - kept),
          "torchtitan_op drops %llu, by hand %.0f",
          (unsigned long long)(base.fwd_bytes - mod.fwd_bytes), stash - kept);
    double lins = tsl_roofline_gemm_s(&d, T, 3 * H, H, 1) + tsl_roofline_gemm_s(&d, T, H, H, 1) +
                  tsl_roofline_gemm_s(&d, T, 2 * F, H, 1) + tsl_roofline_gemm_s(&d, T, H, F, 1);
    double tt_again = tsl_roofline_layer_fwd_s(&d, &ll, 1, 1, false, 0) - 0.5 * lins -
                      tsl_roofline_core_fwd_s(&d, &ll, 1, 1);
    CHECK_NEAR(mod.bwd_s - base.bwd_s, tt_again, 1e-12, "torchtitan_op recompute %g, by hand %g",
               mod.bwd_s - base.bwd_s, tt_again);

    /* (c) bf16 moments, Megatron's precision-aware optimizer */
    tsl_cost_env_t env8;
    CHECK(tsl_cost_env_init(&env8, &c, 0, 8, &err) == 0, "%s", err.msg);
    tsl_strategy_t dp8 = one(TSL_DIM_DP, 8, false);
    env8.knobs = (tsl_cost_knobs_t){.bf16_moments = true};
    tsl_cost_layer(&env8, &ll, &dp8, NULL, 8, &mod);
    double P = (double)ll.params;
    CHECK(mod.ms_bytes == (uint64_t)(12 * P), "bf16 moments: 12 B/param (%llu for %.0f)",
          (unsigned long long)mod.ms_bytes, P);
    env8.knobs.grad_reduce_bytes = 4;
    tsl_cost_layer(&env8, &ll, &dp8, NULL, 8, &mod);
    CHECK(mod.ms_bytes == (uint64_t)(14 * P), "bf16 moments, fp32 gradients: 14 B/param");
    dp8.zero = 1;
    env8.knobs.grad_reduce_bytes = 0;
    tsl_cost_layer(&env8, &ll, &dp8, NULL, 8, &mod);
    CHECK(mod.ms_bytes == (uint64_t)ceil(P * (2 + 2 + 8.0 / 8)), "ZeRO-1: 2 + 2 + 8/8 (%llu)",
          (unsigned long long)mod.ms_bytes);
    tsl_cost_knobs_t km = {.bf16_moments = true},
                     kmn = {.bf16_moments = true, .no_fp32_master = true};
    CHECK(tsl_cost_opt_step_bytes(&km) == 20 && tsl_cost_opt_step_bytes(&kmn) == 14,
          "optimizer step bytes with bf16 moments: 20, without a master 14");
    tsl_cluster_free(&c);
}

/* The optimizer step as the stack runs it (opt_step.h), bytes per parameter by hand:
 *   fused          28 (g = 2: master, m, v read and written 24, g read, 2 written);
 *                  30 with g = 4
 *   megatron       cast 2 + 4, scale 8, norm 4, Adam 28, copy 4 + 2 = 52 (g = 2);
 *                  46 with g = 4 (no cast); bf16 moments: norm 2 + scale 4 + the
 *                  fused kernel's 18 + 2 = 26; the buffer zeroed, g per kept element
 *   megatron-fp16  cast 6, unscale 8, norm 4, Adam 28, copy 6 = 52; no zeroing with
 *                  unfused_grad_accum (param.grad set to None)
 *   torch          norm 4 + scale 8 + AdamW foreach 4·4 + 14·4 + 2·4 = 92 (g = 4);
 *                  without a master (P = M = 2): 12 + 8 + 28 + 8 = 56
 *   deepspeed-fp16 68 over fp16 gradients
 * Times on H100 (W_opt = 0.8 × 3350 GB/s), a launch (4 µs) per pass. */
/* 16-bit mixed precision by cluster: fp16 where a GPU has no bf16 (a V100 among A100s
 * too), bf16 elsewhere unless asked; never beside fp32; Megatron's step then carries
 * the scaler's unscale (megatron -> megatron-core-fp16), other steps as they were. */
static void test_knobs_fp16(void)
{
    tsl_err_t err = {0};
    tsl_cluster_t a100, v100, mixed;
    CHECK(tsl_cluster_parse_spec(&a100, "8xA100-80G", &err) == 0 &&
              tsl_cluster_parse_spec(&v100, "8xV100-32G", &err) == 0,
          "%s", err.msg);
    tsl_cluster_init(&mixed);
    uint32_t ta, tv;
    CHECK(tsl_cluster_add_gpu_type(&mixed, tsl_gpu_find("A100-80G"), &ta, &err) == 0 &&
              tsl_cluster_add_gpu_type(&mixed, tsl_gpu_find("V100-16G"), &tv, &err) == 0,
          "%s", err.msg);
    tsl_node_t n0 = {.n_gpus = 8, .gpu_type = ta}, n1 = {.n_gpus = 8, .gpu_type = tv};
    mixed.inter_bw = 10e9;
    CHECK(tsl_cluster_add_node(&mixed, &n0, &err) == 0 &&
              tsl_cluster_add_node(&mixed, &n1, &err) == 0 && tsl_cluster_finish(&mixed, &err) == 0,
          "%s", err.msg);
    tsl_cost_knobs_t k = {.opt_step = TSL_OPT_STEP_MEGATRON};
    tsl_knobs_fp16(&k, &a100);
    CHECK(!k.fp16 && k.opt_step == TSL_OPT_STEP_MEGATRON, "A100: bf16, megatron's step");
    k.fp16 = true; /* asked for */
    tsl_knobs_fp16(&k, &a100);
    CHECK(k.fp16 && k.opt_step == TSL_OPT_STEP_MEGATRON_CORE_FP16, "A100, asked: fp16");
    k = (tsl_cost_knobs_t){.opt_step = TSL_OPT_STEP_MEGATRON};
    tsl_knobs_fp16(&k, &v100);
    CHECK(k.fp16 && k.opt_step == TSL_OPT_STEP_MEGATRON_CORE_FP16, "V100: fp16 by default");
    k = (tsl_cost_knobs_t){.opt_step = TSL_OPT_STEP_TORCH};
    tsl_knobs_fp16(&k, &mixed);
    CHECK(k.fp16 && k.opt_step == TSL_OPT_STEP_TORCH, "A100 + V100: fp16, torch's step kept");
    k = (tsl_cost_knobs_t){.opt_step = TSL_OPT_STEP_MEGATRON, .fp32 = true, .fp16 = true};
    tsl_knobs_fp16(&k, &v100);
    CHECK(!k.fp16 && k.opt_step == TSL_OPT_STEP_MEGATRON, "fp32: never fp16");
    tsl_cluster_free(&a100);
    tsl_cluster_free(&v100);
    tsl_cluster_free(&mixed);
}

static void test_opt_step(void)
{
    tsl_err_t err = {0};
    CHECK(tsl_opt_step_parse("megatron-fp16") == TSL_OPT_STEP_MEGATRON_FP16 &&
              tsl_opt_step_parse("torch") == TSL_OPT_STEP_TORCH &&
              tsl_opt_step_parse("deepspeed-fp16") == TSL_OPT_STEP_DEEPSPEED_FP16 &&
              tsl_opt_step_parse("Megatron") == -1 && tsl_opt_step_parse(NULL) == -1 &&
              strcmp(tsl_opt_step_name(TSL_OPT_STEP_FUSED), "fused") == 0 &&
              tsl_opt_step_name(TSL_OPT_STEP_COUNT) == NULL,
          "opt_step names");
    CHECK(tsl_opt_step_ok(TSL_OPT_STEP_COUNT, &err) != 0 && strstr(err.msg, "opt_step: 8"),
          "refused naming the field: %s", err.msg);
    CHECK(tsl_opt_step_parse("megatron-core-fp16") == TSL_OPT_STEP_MEGATRON_CORE_FP16 &&
              strcmp(tsl_opt_step_name(TSL_OPT_STEP_MEGATRON_CORE_FP16), "megatron-core-fp16") == 0,
          "megatron-core-fp16 named");

    double local;
    uint32_t n;
    tsl_cost_knobs_t k = {0};
    CHECK(tsl_cost_opt_step_cost(&k, &local, &n) == 28 && local == 0 && n == 1, "fused 28");
    k.grad_reduce_bytes = 4;
    CHECK(tsl_cost_opt_step_bytes(&k) == 30, "fused, fp32 gradients: 30");
    k = (tsl_cost_knobs_t){.opt_step = TSL_OPT_STEP_MEGATRON};
    CHECK(tsl_cost_opt_step_cost(&k, &local, &n) == 52 && local == 2 && n == 6,
          "megatron, bf16 buffer: 52 + zeroing 2, 6 kernels (%g, %u)", local, n);
    k.grad_reduce_bytes = 4;
    CHECK(tsl_cost_opt_step_cost(&k, &local, &n) == 46 && local == 4 && n == 5,
          "megatron, fp32 main grads: 46 + zeroing 4, 5 kernels (%g, %u)", local, n);
    k = (tsl_cost_knobs_t){.opt_step = TSL_OPT_STEP_MEGATRON, .bf16_moments = true};
    CHECK(tsl_cost_opt_step_cost(&k, &local, &n) == 26 && local == 2 && n == 4,
          "megatron precision-aware: 26 (%g, %u)", local, n);
    k = (tsl_cost_knobs_t){.opt_step = TSL_OPT_STEP_MEGATRON_FP16};
    CHECK(tsl_cost_opt_step_cost(&k, &local, &n) == 52 && local == 2 && n == 6,
          "megatron-fp16: 52 + zeroing 2");
    k.unfused_grad_accum = true;
    CHECK(tsl_cost_opt_step_cost(&k, &local, &n) == 52 && local == 0 && n == 5,
          "megatron-fp16 over param.grad: no zeroing");
    /* Megatron-core's --fp16 step: megatron's and the scaler's unscale and inf check
     * over the fp32 main gradients (8, a kernel): 60 with a 16-bit buffer, 54 with
     * --accumulate-allreduce-grads-in-fp32; the buffer zeroed as under --bf16 */
    k = (tsl_cost_knobs_t){.opt_step = TSL_OPT_STEP_MEGATRON_CORE_FP16};
    CHECK(tsl_cost_opt_step_cost(&k, &local, &n) == 60 && local == 2 && n == 7,
          "megatron-core-fp16, fp16 buffer: 60 + zeroing 2, 7 kernels (%g, %u)", local, n);
    k.grad_reduce_bytes = 4;
    CHECK(tsl_cost_opt_step_cost(&k, &local, &n) == 54 && local == 4 && n == 6,
          "megatron-core-fp16, fp32 main grads: 54 + zeroing 4, 6 kernels (%g, %u)", local, n);
    k = (tsl_cost_knobs_t){.opt_step = TSL_OPT_STEP_TORCH, .grad_reduce_bytes = 4};
    CHECK(tsl_cost_opt_step_cost(&k, &local, &n) == 92 && local == 0 && n == 10, "torch 92");
    k.no_fp32_master = true;
    CHECK(tsl_cost_opt_step_bytes(&k) == 56, "torch, bf16 training dtype: 56");
    /* DeepSpeed's unfused fp16 optimizer over fp16 param.grad, whatever the reduce:
     * overflow 10 + norm 10 + cast 6 + unscale 8 + Adam 28 + copy 6 = 68 */
    k = (tsl_cost_knobs_t){.opt_step = TSL_OPT_STEP_DEEPSPEED_FP16, .grad_reduce_bytes = 4};
    CHECK(tsl_cost_opt_step_cost(&k, &local, &n) == 68 && local == 0 && n == 7,
          "deepspeed-fp16 68");

    /* one H100, DP 1: megatron's (52 + 2)·P / W + 6 launches; PAPER keeps the
     * seeds' fused 28·P / W + 1 */
    tsl_cluster_t c;
    CHECK(tsl_cluster_parse_spec(&c, "2xH100-80G", &err) == 0, "%s", err.msg);
    tsl_layer_t l = test_layer();
    tsl_cost_env_t env;
    CHECK(tsl_cost_env_init(&env, &c, 0, 1, &err) == 0, "%s", err.msg);
    double P = (double)l.params, W = 0.8 * 3350e9;
    tsl_strategy_t s = one(TSL_DIM_DP, 1, false);
    tsl_layer_cost_t r;
    env.knobs.opt_step = TSL_OPT_STEP_MEGATRON;
    tsl_cost_layer(&env, &l, &s, NULL, 1, &r);
    CHECK_NEAR(r.opt_s, 54.0 * P / W + 6 * 4e-6, 1e-12, "megatron step %g s", r.opt_s);
    env.mode = TSL_COST_PAPER;
    tsl_cost_layer(&env, &l, &s, NULL, 1, &r);
    CHECK_NEAR(r.opt_s, 28.0 * P / W + 4e-6, 1e-12, "PAPER: fused %g s", r.opt_s);
    /* two H100s, ZeRO-1 with fp32 main grads: 46 B over the half the rank
     * updates, the whole buffer's 4 B zeroed: (23 + 4)·P / W + 5 launches */
    CHECK(tsl_cost_env_init(&env, &c, 0, 2, &err) == 0, "%s", err.msg);
    env.knobs = (tsl_cost_knobs_t){.opt_step = TSL_OPT_STEP_MEGATRON, .grad_reduce_bytes = 4};
    s = one(TSL_DIM_DP, 2, false);
    s.zero = 1;
    tsl_cost_layer(&env, &l, &s, NULL, 2, &r);
    CHECK(r.feasible, "ZeRO-1 over two ranks");
    CHECK_NEAR(r.opt_s, 27.0 * P / W + 5 * 4e-6, 1e-12, "ZeRO-1 megatron step %g s", r.opt_s);
    tsl_cluster_free(&c);
}

/* torch.optim.Adam's per-tensor loop as PyTorch 1.10 ran it (opt_step torch-loop,
 * Galvatron-BMW's trainers): the bytes by hand from the loop's kernels, zero_grad's
 * zero_ of each kept gradient, and ten launches per parameter tensor of the layer. */
static void test_torch_loop_step(void)
{
    CHECK(tsl_opt_step_parse("torch-loop") == TSL_OPT_STEP_TORCH_LOOP &&
              strcmp(tsl_opt_step_name(TSL_OPT_STEP_TORCH_LOOP), "torch-loop") == 0,
          "torch-loop named");
    /* fp32 training, every width 4: grad.add(param) 12, m mul_ 8 and add_ 12, v mul_ 8
     * and addcmul_ 12, sqrt 8, / sqrt(bc2) 8, add_(eps) 8, addcdiv_ 16 = 92 */
    double local;
    uint32_t n;
    tsl_cost_knobs_t k = {
        .opt_step = TSL_OPT_STEP_TORCH_LOOP, .fp32 = true, .grad_reduce_bytes = 4};
    CHECK(tsl_cost_opt_step_cost(&k, &local, &n) == 92 && local == 4 && n == 10,
          "torch-loop, fp32: 92 + zeroing 4, 10 kernels a tensor (%g, %u)", local, n);
    /* over 16-bit weights without a master, 2 B each: 2 + 6 + 6 + 32 */
    k = (tsl_cost_knobs_t){.opt_step = TSL_OPT_STEP_TORCH_LOOP, .no_fp32_master = true};
    CHECK(tsl_cost_opt_step_cost(&k, &local, &n) == 46 && local == 2,
          "torch-loop, 16-bit states: 46 + zeroing 2 (%g)", local);

    /* GPT-2 medium's block on one A100-80G, DP: its 12 tensors (Megatron's layout)
     * ten launches each, 92 B per parameter and the 4 B zeroing; under SDP 2, each
     * rank steps half, zeroes the half it keeps, and walks two flat FSDP units */
    tsl_layer_t l = gpt2_medium_block();
    tsl_cluster_t c;
    tsl_cost_env_t env;
    spec_env(&c, &env, "2xA100-80G", 2);
    env.knobs = (tsl_cost_knobs_t){
        .opt_step = TSL_OPT_STEP_TORCH_LOOP, .fp32 = true, .grad_reduce_bytes = 4};
    double P = (double)l.params, W = env.opt_mem_bw, L = 4e-6;
    tsl_strategy_t s = one(TSL_DIM_DP, 2, false);
    tsl_layer_cost_t r;
    tsl_cost_layer(&env, &l, &s, NULL, 2, &r);
    CHECK(r.feasible, "DP 2");
    CHECK_NEAR(r.opt_s, 96.0 * P / W + 12 * 10 * L, 1e-12, "DP: 12 tensors' loop %g s", r.opt_s);
    s = one(TSL_DIM_SDP, 2, false);
    tsl_cost_layer(&env, &l, &s, NULL, 2, &r);
    CHECK(r.feasible, "SDP 2");
    CHECK_NEAR(r.opt_s, 96.0 * P / 2 / W + 2 * 10 * L, 1e-12, "SDP: two units' loop %g s", r.opt_s);
    env.mode = TSL_COST_PAPER; /* the seeds' fused step */
    tsl_cost_layer(&env, &l, &s, NULL, 2, &r);
    CHECK_NEAR(r.opt_s, 28.0 * P / 2 / W + L, 1e-12, "PAPER: fused %g s", r.opt_s);
    tsl_cluster_free(&c);
}

/* Composer 0.15+'s DecoupledAdamW under FSDP1 use_orig_params (opt_step composer,
 * llm-foundry's MPT runs): the bytes by hand from the clip and the loop's kernels, the
 * pieces of a unit's tensors the busiest rank's shard holds, the host chain each
 * tensor's .item() starts, and a block's step under SDP 8 against torch's foreach. */
static void test_composer_step(void)
{
    CHECK(tsl_opt_step_parse("composer") == TSL_OPT_STEP_COMPOSER &&
              strcmp(tsl_opt_step_name(TSL_OPT_STEP_COMPOSER), "composer") == 0,
          "composer named");
    /* clip: norm 4, mul_ 8; weight decay 0: m mul_ 8, add_ 12, v mul_ 8, addcmul_ 12,
     * sqrt 8, / sqrt(bc2) 8, add_(eps) 8, addcdiv_ 16 = 92; no zeroing; 10 a tensor */
    double local;
    uint32_t n;
    tsl_cost_knobs_t k = {.opt_step = TSL_OPT_STEP_COMPOSER, .grad_reduce_bytes = 4};
    CHECK(tsl_cost_opt_step_cost(&k, &local, &n) == 92 && local == 0 && n == 10,
          "composer: 92, no zeroing, 10 kernels a tensor (%g, %u)", local, n);

    /* a flat parameter of 1 + 1 + 6 + 2 elements: over 2 ranks (chunks of 5) rank 0
     * holds pieces 1, 1, 3; over 5 (chunks of 2) at most two; over 1 all four */
    double e[4] = {1, 1, 6, 2}, out[TSL_DS_STEP_MAX_TENSORS];
    CHECK(tsl_shard_step_tensors(e, 4, 2, out) == 3 && out[0] == 1 && out[1] == 1 && out[2] == 3,
          "z 2: the first rank's three pieces (%g %g %g)", out[0], out[1], out[2]);
    CHECK(tsl_shard_step_tensors(e, 4, 5, out) == 2, "z 5: two pieces at most");
    CHECK(tsl_shard_step_tensors(e, 4, 1, out) == 4 && out[2] == 6, "z 1: the tensors");
    /* empty pieces: each kernel a launch L under a host op h > L: the read ends the
     * chain at 9h, 9h - 8L over the kernels */
    double zero = 0.0, h = 19e-6, L = 4e-6;
    CHECK_NEAR(tsl_composer_step_sync_s(&zero, 1, h, 2e12, L), 9 * h - 8 * L, 1e-15,
               "one piece: the host's nine ops");
    CHECK(tsl_composer_step_sync_s(&zero, 1, 0.0, 2e12, L) == 0.0, "no host figure: none");

    /* GPT-2 medium's block under SDP 8 on 8 A100-80G: the busiest rank's five pieces
     * (the two norms' four tensors and QKV's first part in Megatron's layout), ten
     * launches and a read each, at h = H / 3; torch's foreach steps the same bytes */
    tsl_layer_t l = gpt2_medium_block();
    tsl_cluster_t c;
    tsl_cost_env_t env;
    spec_env(&c, &env, "8xA100-80G", 8);
    env.knobs = (tsl_cost_knobs_t){.opt_step = TSL_OPT_STEP_COMPOSER, .grad_reduce_bytes = 4};
    double P = (double)l.params, W = env.opt_mem_bw, t[TSL_DS_STEP_MAX_TENSORS];
    uint32_t m = tsl_ds_step_tensors(&l, 1, P, t);
    m = tsl_shard_step_tensors(t, m, 8, out);
    CHECK(m == 5, "five pieces on the busiest rank, %u", m);
    h = env.host_op_s / 3.0;
    double sync = tsl_composer_step_sync_s(out, m, h, W, L);
    tsl_strategy_t s = one(TSL_DIM_SDP, 8, false);
    tsl_layer_cost_t r;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &r);
    CHECK(r.feasible, "SDP 8");
    CHECK_NEAR(r.opt_s, 92.0 * P / 8 / W + 5 * 10 * L + sync, 1e-12, "SDP 8: %g s", r.opt_s);
    CHECK(sync > 4 * (9 * h - 8 * L) && sync < 5 * 9 * h,
          "the four small pieces at the host's pace, QKV's mostly (%g s)", sync);
    double composer = r.opt_s;
    env.knobs.opt_step = TSL_OPT_STEP_TORCH;
    tsl_cost_layer(&env, &l, &s, NULL, 8, &r);
    CHECK(composer > r.opt_s + sync * 0.99, "composer %g s over torch's foreach %g s", composer,
          r.opt_s);
    tsl_cluster_free(&c);
}

/* DeepSpeed's unfused fp16 step reads each tensor back twice (cost_host_sync.h):
 * by hand on a chain, then GPT-2's block on a T4 at H = 57.2 us (h = H / 3). */
static void test_ds_step_host_sync(void)
{
    double g2[3] = {1.0, 1.0, 0.0};
    CHECK_NEAR(tsl_host_chain_s(g2, 3, 2.0), 4.0, 1e-12,
               "short kernels at the host's pace: ends at 3h = 6 over 2 of kernels");
    double g3[3] = {5.0, 5.0, 0.0};
    CHECK_NEAR(tsl_host_chain_s(g3, 3, 2.0), 2.0, 1e-12, "long kernels: the first dispatch");
    CHECK(tsl_host_chain_s(g3, 3, 0.0) == 0.0 && tsl_host_chain_s(g3, 0, 2.0) == 0.0, "none");

    tsl_err_t err = {0};
    tsl_layer_t g = gpt2_medium_block();
    double e[TSL_DS_STEP_MAX_TENSORS], sum = 0;
    uint32_t n = tsl_ds_step_tensors(&g, 1, (double)g.params, e);
    for (uint32_t i = 0; i < n; i++)
        sum += e[i];
    CHECK(n == 12 && sum == (double)g.params, "Megatron's block: 12 tensors, %u, %g", n, sum);
    CHECK(tsl_ds_step_tensors(&g, 2, (double)g.params / 2, e) == 12, "over TP 2 the same 12");
    tsl_layer_t moe = g;
    moe.experts = 8;
    CHECK(tsl_ds_step_tensors(&moe, 1, (double)g.params, e) == 0, "experts: not laid out");

    /* the T4 (W = 0.8 x 320 GB/s, L = 4 us), h = 19.07 us, each of the 12 tensors'
     * two chains by hand: kernel i starts at max(i h, the kernel before's end); the
     * bytes are the step's already, so the chains add their ends less the kernels */
    tsl_cluster_t c;
    CHECK(tsl_cluster_parse_spec(&c, "4xT4-16G", &err) == 0, "%s", err.msg);
    tsl_cost_env_t env;
    CHECK(tsl_cost_env_init(&env, &c, 0, 1, &err) == 0, "%s", err.msg);
    env.host_op_s = 57.2e-6;
    tsl_strategy_t s = one(TSL_DIM_DP, 1, false);
    tsl_layer_cost_t fused, ds;
    env.knobs.grad_reduce_bytes = 4;
    env.knobs.opt_step = TSL_OPT_STEP_DEEPSPEED_FP16;
    double W = env.opt_mem_bw, h = 57.2e-6 / 3.0, L = 4e-6, want = 0;
    CHECK_NEAR(W, 0.8 * 320e9, 1e6, "the T4's W: %g", W);
    n = tsl_ds_step_tensors(&g, 1, (double)g.params, e);
    for (uint32_t i = 0; i < n; i++) {
        double cast = 6 * e[i] / W + L, red = 4 * e[i] / W + L;
        double o = fmax(2 * h, h + cast) + red, m1 = h + cast;
        double m2 = fmax(2 * h, m1) + cast, m3 = fmax(3 * h, m2) + red;
        want += fmax(3 * h, o) - (cast + red) + fmax(4 * h, m3) - (2 * cast + red);
    }
    CHECK(want > 12 * 2 * h && want < 12 * 7 * h, "between one and every dispatch: %g", want);
    tsl_cost_layer(&env, &g, &s, NULL, 1, &ds);
    env.host_op_s = 0;
    tsl_cost_layer(&env, &g, &s, NULL, 1, &fused);
    CHECK_NEAR(ds.opt_s - fused.opt_s, want, 1e-12, "the reads' chains on the step: %g",
               ds.opt_s - fused.opt_s);
    env.host_op_s = 57.2e-6;
    env.knobs.opt_step = TSL_OPT_STEP_FUSED;
    tsl_cost_layer(&env, &g, &s, NULL, 1, &ds);
    env.host_op_s = 0;
    tsl_cost_layer(&env, &g, &s, NULL, 1, &fused);
    CHECK(ds.opt_s == fused.opt_s, "the fused step reads nothing back");
    tsl_cluster_free(&c);
}

/* minmax.h's tsl_min / tsl_max give fmin's and fmax's value to the bit wherever no
 * operand is NaN: zeros of either sign, infinities, subnormals, equal operands. */
static void test_minmax(void)
{
    /* volatile: libm's fmin and fmax at run time, as the planner calls them (GCC may
     * fold a constant fmin(+0, −0) otherwise) */
    static volatile const double v[] = {0.0,     -0.0,  1.0,      -1.0,      0.5, 1e-310,
                                        -1e-310, 3e300, INFINITY, -INFINITY, 2.0, 1.0 + 0x1p-52};
    const size_t n = sizeof v / sizeof v[0];
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double a = fmin(v[i], v[j]), b = tsl_min(v[i], v[j]);
            double c = fmax(v[i], v[j]), d = tsl_max(v[i], v[j]);
            bad += memcmp(&a, &b, sizeof a) != 0 || memcmp(&c, &d, sizeof c) != 0;
        }
    CHECK(bad == 0, "tsl_min/tsl_max differ from fmin/fmax on %d of %zu pairs", bad, n * n);
}

/* tsl_cost_walks_nodes_alike: whether a cluster's nodes are alike (and of one GPU
 * type), found once in the search's table of walks for every engine that keeps it —
 * a change to the cluster afterwards is not seen (it does not change during a search),
 * a table of another cluster's, or none, finds it again. Two types of the same figures
 * are alike but not one type. */
static void test_nodes_alike(void)
{
    tsl_cluster_t c, two;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "4x8xH100-80G:8xib400", &err) == 0, "%s", err.msg);
    tsl_cluster_init(&two);
    tsl_gpu_spec_t twin = *tsl_gpu_find("H100-80G");
    snprintf(twin.name, sizeof twin.name, "H100-twin");
    uint32_t a, b;
    CHECK(tsl_cluster_add_gpu_type(&two, tsl_gpu_find("H100-80G"), &a, &err) == 0 &&
              tsl_cluster_add_gpu_type(&two, &twin, &b, &err) == 0,
          "%s", err.msg);
    tsl_node_t na = {.n_gpus = 8, .gpu_type = a, .intra_bw = 450e9},
               nb = {.n_gpus = 8, .gpu_type = b, .intra_bw = 450e9};
    CHECK(tsl_cluster_add_node(&two, &na, &err) == 0 && tsl_cluster_add_node(&two, &nb, &err) == 0,
          "%s", err.msg);
    two.inter_bw = 50e9;
    CHECK(tsl_cluster_finish(&two, &err) == 0, "%s", err.msg);
    CHECK(tsl_cluster_is_homogeneous(&two), "two types of the same figures: alike nodes");
    CHECK(tsl_cost_walks_nodes_alike(NULL, &two, false) &&
              !tsl_cost_walks_nodes_alike(NULL, &two, true),
          "two types of the same figures: alike, not one type");

    tsl_cost_walks_t *w = tsl_cost_walks_new(&c);
    CHECK(w != NULL, "walks");
    if (w != NULL) {
        CHECK(tsl_cost_walks_nodes_alike(w, &c, true) && tsl_cost_walks_nodes_alike(w, &c, false),
              "one type, alike");
        c.nodes[3].intra_bw /= 2; /* after the first call: the table's answer stands */
        CHECK(tsl_cost_walks_nodes_alike(w, &c, true), "found once per table");
        CHECK(!tsl_cost_walks_nodes_alike(NULL, &c, false), "no table: found now");
        CHECK(tsl_cost_walks_nodes_alike(w, &two, false) &&
                  !tsl_cost_walks_nodes_alike(w, &two, true),
              "another cluster's table: found now");
        tsl_cost_walks_free(w);
    }
    tsl_cluster_free(&c);
    tsl_cluster_free(&two);
}

/* tsl_cost_pp_recv_held: torch.distributed.pipelining's receive buffers are kept only
 * in a pipeline of several under torch's loss, neither autocast nor PAPER; where not,
 * every strategy's figure is 0 (the engine adds nothing to any row then). */
static void test_recv_held(void)
{
    tsl_cluster_t c;
    tsl_cost_env_t env;
    make_env(&c, &env, 1, 8);
    tsl_strategy_t s = one(TSL_DIM_DP, 8, false);
    env.mode = TSL_COST_STACK; /* make_env's is PAPER */
    env.pipelined = true;
    env.knobs.loss_impl = TSL_LOSS_TORCH;
    CHECK(tsl_cost_pp_recv_held(&env) && tsl_cost_pp_recv_bytes(&env, &s, 1 << 20, 2) > 0,
          "torch's loss in a pipeline: held");
    env.knobs.autocast = true;
    CHECK(!tsl_cost_pp_recv_held(&env) && tsl_cost_pp_recv_bytes(&env, &s, 1 << 20, 2) == 0,
          "autocast: none");
    env.knobs.autocast = false;
    env.mode = TSL_COST_PAPER;
    CHECK(!tsl_cost_pp_recv_held(&env), "PAPER: none");
    env.mode = TSL_COST_STACK;
    env.knobs.loss_impl = TSL_LOSS_MEGATRON;
    CHECK(!tsl_cost_pp_recv_held(&env) && tsl_cost_pp_recv_bytes(&env, &s, 1 << 20, 2) == 0,
          "Megatron's loss: none");
    env.knobs.loss_impl = TSL_LOSS_TORCH;
    env.pipelined = false;
    CHECK(!tsl_cost_pp_recv_held(&env), "one stage: none");
    tsl_cluster_free(&c);
}

int main(void)
{
    test_minmax();
    test_recv_held();
    test_nodes_alike();
    test_knobs_fp16();
    test_opt_step();
    test_ds_step_host_sync();
    test_torch_loop_step();
    test_composer_step();
    test_fp8_memory();
    test_autocast_memory();
    test_loss_impl();
    test_collectives();
    test_overlap();
    test_env();
    test_dp();
    test_knobs();
    test_grad_accum();
    test_ds_grad_bucket();
    test_launch_blocking();
    test_sdp_nosync();
    test_sdp_nosync_accum();
    test_sdp_prefetch();
    test_sdp_root_chain();
    test_sdp_root_units();
    test_sdp_layer_roots();
    test_sdp_keep_weights();
    test_ds_zero3_v03();
    test_ds_bf16_optimizer();
    test_ds_bf16_zero0();
    test_fp32();
    test_sdp();
    test_tp_and_ckpt();
    test_cross_kv_grad();
    test_double_block_fwd();
    test_tp_sync();
    test_placement();
    test_infeasible();
    test_transition();
    test_p2p();
    test_agrees_with_strategy();
    test_sp_selective_memory();
    test_sp_selective_time();
    test_recompute_tp_overlap();
    test_tp_comm_overlap();
    test_tp_comm_overlap_sum();
    test_async_tp();
    test_zero();
    test_feasibility_and_padding();
    test_vocab_layers();
    test_tp_repl_extra();
    test_cp();
    test_cp_llama3();
    test_cp_llama3_extra();
    test_cp_p2p_net();
    test_llama3_405b_memory();
    test_moe();
    test_moe_a2a_ratio();
    test_moe_flex();
    test_hybridep_map();
    test_hybridep_nvl();
    test_moe_bw_made();
    test_kept_walks();
    test_moe_etp_capacity();
    test_moe_sync_stretch();
    test_moe_te_host_floor();
    test_fp8_gather();
    test_fp8_blackwell();
    test_nvfp4_memory();
    test_fp8_sp_gather();
    test_fp8_cs_amax_reduce();
    test_nvfp4_amax_reduce();
    test_fp8_amax_tp_only();
    test_fp8_delayed_amax_reduce();
    test_proj_orig_input();
    test_fp8_moe();
    test_fp8_latent_moe();
    test_recompute_modules();
    test_mla();
    return CHECK_DONE();
}

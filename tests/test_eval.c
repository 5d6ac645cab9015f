/* Tests for planner/eval: a given plan's figures, refusals naming the reason,
 * and eval(search best) == search best. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn_kernel.h"
#include "check.h"
#include "cost.h"
#include "eval.h"
#include "layer_dense.h"
#include "loss_impl.h"
#include "mtp.h"
#include "pipeline.h"
#include "roofline.h"
#include "sublayer.h"

static tsl_search_result_t res;

static void load(const char *model, const char *cluster, tsl_model_t *m, tsl_cluster_t *c)
{
    tsl_err_t err;
    if (tsl_model_preset(model, m, &err) != 0 || tsl_cluster_parse_spec(c, cluster, &err) != 0) {
        fprintf(stderr, "setup %s on %s: %s\n", model, cluster, err.msg);
        exit(2);
    }
}

/* One encoder layer: h, heads, FFN 4h, sequence 512; causal self-attention or not. */
static void one_layer_causal(tsl_model_t *m, uint32_t h, uint32_t heads, bool causal)
{
    tsl_err_t err;
    tsl_layer_t l = {.kind = TSL_LAYER_ENCODER,
                     .seq_len = 512,
                     .hidden = h,
                     .ffn_hidden = 4 * h,
                     .heads = heads,
                     .causal = causal};
    tsl_model_init(m, "one-layer");
    if (tsl_model_add(m, &l, &err) != 0) {
        fprintf(stderr, "setup: %s\n", err.msg);
        exit(2);
    }
}

static void one_layer(tsl_model_t *m, uint32_t h, uint32_t heads)
{
    one_layer_causal(m, h, heads, false);
}

/* The optimizer step of one layer on one A100-80G, by hand: the layer has
 * 12h² + 13h parameters (Q, K, V, O: 4h² + 4h; FFN 8h² + 5h; two LayerNorms 4h),
 * 12,596,224 for h = 1024; a mixed-precision Adam streams 28 bytes of each
 * (read fp32 master, m, v and the fp16 gradient, write master, m, v and the fp16
 * weights) at 0.8 × 2039 GB/s = 1631.2 GB/s, plus one 4 µs launch:
 * 352,694,272 B / 1.6312e12 B/s + 4e-6 s = 220.218 µs. */
static double optimizer_by_hand_s(double h)
{
    double params = 12.0 * h * h + 13.0 * h;
    return 28.0 * params / (0.8 * 2039e9) + 4e-6;
}

/* A given plan of P stages, every layer under strategy text, balanced split. */
static void given_plan(tsl_plan_t *g, uint32_t L, uint32_t P, const char *strategy, uint32_t mb,
                       uint32_t m)
{
    tsl_err_t err;
    tsl_plan_init(g);
    g->pp = P;
    g->n_layers = L;
    g->micro_batch = mb;
    g->n_micro = m;
    g->global_batch = mb * m;
    for (uint32_t i = 0; i < L; i++)
        if (tsl_strategy_parse(strategy, &g->layer[i], &err) != 0) {
            fprintf(stderr, "setup %s: %s\n", strategy, err.msg);
            exit(2);
        }
}

/* One layer on one GPU: Eq. 9 with P = 1 is (m − 1)·(fwd + bwd) + fwd + bwd_sync,
 * then the optimizer step (optimizer_by_hand_s: one stage, so nothing drains
 * while it runs and it adds in full); on one device there is no communication,
 * so the backward is the roofline's: each forward GEMM's two gradient GEMMs by
 * their own shapes (tsl_roofline_layer_bwd_s, tested by hand in test_roofline.c),
 * between 1.5 and 2.5 forwards for this layer, and the peak is 16
 * bytes per parameter plus one micro-batch's stashed activations. */
static void test_one_layer_by_hand(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    one_layer(&m, 1024, 16);
    CHECK(tsl_cluster_parse_spec(&c, "1xA100-80G", &err) == 0, "%s", err.msg);
    tsl_request_t r;
    tsl_request_init(&r);
    r.no_host_floor = true; /* the GPU's roofline by hand; the floor: test_host_floor */
    tsl_plan_t g, out;
    given_plan(&g, 1, 1, "single", 2, 3);
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == 0, "one layer: %s", err.msg);

    tsl_cost_env_t env;
    tsl_layer_cost_t lc;
    tsl_cost_env_init(&env, &c, 0, 1, NULL);
    CHECK(env.host_op_s == TSL_ROOFLINE_HOST_OP_S, "eager PyTorch's host floor by default");
    env.host_op_s = 0.0;
    tsl_cost_layer(&env, &m.layers[0], &g.layer[0], NULL, 2, &lc);
    const tsl_layer_t *l = &m.layers[0];
    tsl_roofline_dev_t dev;
    tsl_roofline_dev_init(&dev, 312e12 * 0.82, 2039e9);
    tsl_gemm_eff_for_gpu(&dev.shape, "A100-80G", 312e12, 2039e9);
    dev.wgrad_acc_bytes = 2.0; /* the dW GEMMs accumulate into the bf16 gradient buffer */
    const tsl_layer_t *l0 = &m.layers[0];
    CHECK_NEAR(lc.fwd_s, tsl_roofline_layer_fwd_s(&dev, l0, 2, 1, false, 0), 1e-12, "forward");
    CHECK_NEAR(lc.bwd_s, tsl_roofline_layer_bwd_s(&dev, l0, 2, 1, false, 0), 1e-12, "backward");
    CHECK(lc.bwd_s > 1.5 * lc.fwd_s && lc.bwd_s < 2.5 * lc.fwd_s, "backward %.3g x forward",
          lc.bwd_s / lc.fwd_s);
    CHECK(lc.bwd_sync_s == lc.bwd_s, "no gradient sync on one GPU");
    CHECK(l->params == 12596224, "parameters %llu, by hand 12h^2 + 13h = 12596224",
          (unsigned long long)l->params);
    double opt = optimizer_by_hand_s(1024);
    CHECK_NEAR(lc.opt_s, opt, 1e-12, "optimizer %.9g s, by hand %.9g s", lc.opt_s, opt);
    CHECK_NEAR(out.stages[0].opt_s, opt, 1e-12, "the stage's optimizer");
    CHECK_NEAR(out.opt_tail_s, opt, 1e-12, "one stage: the step adds in full");
    double iter = 2 * (lc.fwd_s + lc.bwd_s) + lc.fwd_s + lc.bwd_sync_s + opt;
    CHECK_NEAR(out.iter_time_s, iter, 1e-12, "iteration %.9g s, by hand %.9g s", out.iter_time_s,
               iter);
    CHECK_NEAR(out.samples_per_s, 6.0 / iter, 1e-12, "throughput");
    CHECK(out.stages[0].ms_bytes == 16 * l->params, "model states %llu, by hand 16 x %llu",
          (unsigned long long)out.stages[0].ms_bytes, (unsigned long long)l->params);
    uint64_t act = 2 * (l->act_repl_bytes + l->act_shard_bytes);
    CHECK(out.stages[0].act_bytes == act, "activations %llu, by hand %llu",
          (unsigned long long)out.stages[0].act_bytes, (unsigned long long)act);
    CHECK(out.peak_bytes >= 16 * l->params + act, "peak below its parts");

    /* full checkpointing recomputes the forward in the backward: fwd + bwd */
    given_plan(&g, 1, 1, "single+ckpt", 2, 3);
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == 0, "ckpt: %s", err.msg);
    CHECK_NEAR(out.stages[0].time_nosync_s, 2.0 * lc.fwd_s + lc.bwd_s, 1e-12,
               "ckpt: fwd + (fwd + bwd)");
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

/* The same layer with causal self-attention, by hand. Fused attention visits
 * (s + 1)/2 = 256.5 keys per query instead of 512, so its core does
 * 4·s·(s − (s + 1)/2)·d = 4·512·255.5·1024 = 535,822,336 FLOPs per sample less:
 * 1,071,644,672 for the micro-batch of 2 samples. Under attn_kernel flash1-triton
 * (FlashAttention's Triton port: flat in the shape, cost model 121; the A100's default is
 * FlashAttention-2's by shape, flash1's v1's own bars) the A100's core runs at 0.40 of the 312 TFLOPS peak forward and 0.30
 * backward (gemm_eff.h; its 128 query tiles fill the 108 SMs), the causal one at
 * ρ = 0.94 · 256.5 / (256.5 + 128) = 0.62707 of them (docs/cost-model.md "Flash
 * attention's rate"): forward 2,147,483,648 / 124.8 TFLOP/s = 17.2074 µs full,
 * 1,075,838,976 / (124.8 · ρ) = 13.7472 µs causal, 3.4602 µs less; the backward 2.5 ×
 * those FLOPs at 93.6 TFLOP/s: 11.5340 µs less. The core stays compute-bound (13.75 µs
 * causal forward against its Q, K, V, O bytes 2·(2·512·1024 + 2·512·1024)·2 =
 * 8,388,608 B / 1631.2 GB/s = 5.14 µs; the backward 2.5× the FLOPs over 2× the
 * bytes), so the roofline takes the FLOP term on both sides. m = 3 micro-batches
 * save 3·(3.4602 + 11.5340) = 44.983 µs of the iteration. The layer's FLOPs (what MFU
 * counts) keep the full s² (Megatron-LM's convention). */
static void test_causal_by_hand(void)
{
    tsl_model_t full, causal;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    one_layer(&full, 1024, 16);
    one_layer_causal(&causal, 1024, 16, true);
    CHECK(tsl_cluster_parse_spec(&c, "1xA100-80G", &err) == 0, "%s", err.msg);
    CHECK(causal.layers[0].fwd_flops == full.layers[0].fwd_flops,
          "causal keeps the reported FLOPs: %.17g vs %.17g", causal.layers[0].fwd_flops,
          full.layers[0].fwd_flops);
    tsl_request_t r;
    tsl_request_init(&r);
    r.no_host_floor = true; /* this one layer of 2 samples would be host-bound */
    r.attn_kernel = TSL_ATTN_KERNEL_FLASH1_TRITON; /* the A100's flat 0.40 / 0.30 (no shape
                                                      term) */
    tsl_plan_t g, a, b;
    given_plan(&g, 1, 1, "single", 2, 3);
    CHECK(tsl_eval_plan(&full, &c, &r, &g, &a, &err) == 0, "full: %s", err.msg);
    CHECK(tsl_eval_plan(&causal, &c, &r, &g, &b, &err) == 0, "causal: %s", err.msg);
    double full_flops = 4.0 * 512 * 512 * 1024 * 2,
           saved_flops = 4.0 * 512 * (512 - 513.0 / 2) * 1024 * 2;
    CHECK(saved_flops == 1071644672.0, "skipped FLOPs %.17g", saved_flops);
    double causal_flops = full_flops - saved_flops, bytes = 2.0 * (2 * 512 * 1024.0 * 2) * 2;
    double rf = 0.40 * 312e12, rb = 0.30 * 312e12; /* gemm_eff.h TSL_ATTN_A100_*: Triton */
    double rho = TSL_ATTN_CAUSAL_EFF * 256.5 / (256.5 + TSL_ATTN_CAUSAL_KEYS);
    CHECK_NEAR(rho, 0.62707, 1e-4, "causal share %.5f", rho);
    CHECK(causal_flops / (rf * rho) > bytes / (0.8 * 2039e9),
          "the causal core is still compute-bound");
    double fwd = full_flops / rf - causal_flops / (rf * rho);
    double bwd = 2.5 * (full_flops / rb - causal_flops / (rb * rho));
    CHECK_NEAR(fwd, 3.4602e-6, 1e-4, "forward by hand %.6g s", fwd);
    CHECK_NEAR(a.stages[0].fwd_s - b.stages[0].fwd_s, fwd, 1e-9,
               "forward saves %.6g s, by hand %.6g s", a.stages[0].fwd_s - b.stages[0].fwd_s, fwd);
    CHECK_NEAR(a.iter_time_s - b.iter_time_s, 3.0 * (fwd + bwd), 1e-9,
               "iteration saves %.6g s, by hand 3 x (%.6g + %.6g) s", a.iter_time_s - b.iter_time_s,
               fwd, bwd);
    CHECK_NEAR(a.opt_tail_s, b.opt_tail_s, 1e-12, "causality leaves the optimizer alone");
    tsl_model_free(&full);
    tsl_model_free(&causal);
    tsl_cluster_free(&c);
}

static void test_refusals(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    tsl_request_t r;
    tsl_request_init(&r);
    tsl_plan_t g, out;
    one_layer(&m, 768, 12);
    CHECK(tsl_cluster_parse_spec(&c, "8xA100-80G", &err) == 0, "%s", err.msg);

    given_plan(&g, 1, 1, "tp8", 1, 1); /* 12 heads over 8 */
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == -1 && tsl_err_code(&err) == TSL_E_INVALID &&
              strstr(err.msg, "layer 0") && strstr(err.msg, "TP degree 8"),
          "tp8: %s", err.msg);
    given_plan(&g, 1, 1, "tp4-dp4", 4, 1); /* 16 devices on 8 */
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == -1 && strstr(err.msg, "multiply to 16"),
          "degrees: %s", err.msg);
    given_plan(&g, 1, 3, "single", 1, 1); /* pp 3 on 8 devices */
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == -1 && strstr(err.msg, "pp 3"), "pp: %s",
          err.msg);
    given_plan(&g, 1, 1, "tp4-dp2", 2, 1); /* a placement eval would not run */
    g.stages[0].first_device = UINT32_MAX;
    g.stages[0].n_devices = 5;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == -1 && tsl_err_code(&err) == TSL_E_INVALID &&
              strstr(err.msg, "stage 0: first_device 4294967295, n_devices 5") &&
              strstr(err.msg, "devices 0-7"),
          "placement: %s", err.msg);
    g.stages[0].first_device = 0;
    g.stages[0].n_devices = 8;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == 0, "the placement eval runs: %s", err.msg);
    given_plan(&g, 1, 1, "tp4-dp2", 3, 1); /* 3 samples over data width 2 */
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == -1 && strstr(err.msg, "micro-batch 3"),
          "batch: %s", err.msg);
    given_plan(&g, 1, 1, "tp4-dp2", 64, 1);
    r.mem_budget_bytes = 64ull << 20;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == -1 && tsl_err_code(&err) == TSL_E_NOFIT &&
              strstr(err.msg, "stage 0") && strstr(err.msg, "budget"),
          "nofit: %s", err.msg);
    CHECK(out.valid && out.stages[0].peak_bytes > r.mem_budget_bytes,
          "nofit: the figures are kept");
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

/* Eight encoder layers of hidden 1024 at 512 tokens: the interleaving tests' model. */
static void eight_layers(tsl_model_t *m)
{
    tsl_err_t err = {0};
    tsl_layer_t l = gpt2_medium(512);
    tsl_model_init(m, "eight-layers");
    for (int i = 0; i < 8; i++)
        CHECK(tsl_model_add(m, &l, &err) == 0, "%s", err.msg);
}

/* Interleaved 1F1B's activations chunk by chunk, on 8 equal encoder layers, 2 stages
 * of 4, v 2 (chunks of 2 layers), m 4, one device per stage: Megatron's table with N =
 * P = 2 runs w = 4 and 2 warm-up chunk forwards; at the peak stage 0 holds micro-batches
 * 0–2 of chunk 0 and 0–1 of chunk 1, 5 chunk micro-batches = 10 layers' stash, stage 1
 * 2 + 1 = 6 layers' — where plain 1F1B holds 2 and 1 micro-batches of 4 layers (8 and
 * 4): ratios 1.25 and 1.5 (the closed form's ⌈5/2⌉ = 3 and ⌈3/2⌉ = 2 stages' worth
 * would be 1.5 and 2). N 4 (= m): w_0 = 2 + 4 = 6, micro-batches 0–3 of chunk 0 and 0–2
 * of chunk 1, 14 layers' (1.75); N 3 is refused (4 mod 3 = 1 < P, as Megatron raises),
 * by name. */
static void test_interleaved_chunks(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    tsl_request_t r;
    tsl_request_init(&r);
    eight_layers(&m);
    CHECK(tsl_cluster_parse_spec(&c, "2xA100-80G", &err) == 0, "%s", err.msg);
    static tsl_plan_t g, plain, out;
    given_plan(&g, 8, 2, "single", 1, 4);
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &plain, &err) == 0, "plain: %s", err.msg);
    g.interleave = 2;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == 0, "v 2: %s", err.msg);
    double r0 = (double)out.stages[0].act_bytes / plain.stages[0].act_bytes,
           r1 = (double)out.stages[1].act_bytes / plain.stages[1].act_bytes;
    CHECK(fabs(r0 - 1.25) < 1e-12 && fabs(r1 - 1.5) < 1e-12, "v 2 over plain: %.6f, %.6f", r0, r1);
    CHECK(out.stages[0].inflight == 3 && out.stages[1].inflight == 2 && out.vp_group == 0,
          "stages' worth 2.5 and 1.5, rounded: %u, %u", out.stages[0].inflight,
          out.stages[1].inflight);
    g.vp_group = 4;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == 0 && out.vp_group == 4, "N 4: %s", err.msg);
    r0 = (double)out.stages[0].act_bytes / plain.stages[0].act_bytes;
    CHECK(fabs(r0 - 1.75) < 1e-12, "N 4 over plain: %.6f", r0);
    CHECK(out.sim_iter_time_s > 0 && fabs(out.iter_time_s - out.sim_iter_time_s) < 1e-12,
          "N 4 is priced by the event simulator: %.12g vs %.12g", out.iter_time_s,
          out.sim_iter_time_s);
    g.vp_group = 2; /* N = P: Megatron's default, the plan keeps 0 */
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == 0 && out.vp_group == 0, "N = P: %s",
          err.msg);
    g.vp_group = 0;
    r.vp_group = 3; /* eval --vp-group over the plan's */
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == -1 && strstr(err.msg, "vp_group 3"),
          "N 3: %s", err.msg);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

/* The iteration of out in the closed form from its stages, each stage's sync
 * taken as given (sync[s]), its interleaved hops blocking its stages or not. */
static double closed_iter_as_s(const tsl_plan_t *out, const double *sync, bool blocking)
{
    double nosync[TSL_PLAN_MAX_STAGES], fwd[TSL_PLAN_MAX_STAGES], p2p[TSL_PLAN_MAX_STAGES],
        opt[TSL_PLAN_MAX_STAGES];
    for (uint32_t s = 0; s < out->pp; s++) {
        nosync[s] = out->stages[s].time_nosync_s;
        fwd[s] = out->stages[s].fwd_s;
        p2p[s] = out->stages[s].p2p_s;
        opt[s] = out->stages[s].opt_s;
    }
    tsl_pipeline_in_t in = {.n_stages = out->pp,
                            .n_micro = out->n_micro,
                            .interleave = out->interleave,
                            .fwd_s = fwd,
                            .nosync_s = nosync,
                            .sync_s = sync,
                            .p2p_s = p2p,
                            .opt_s = opt,
                            .p2p_blocking = blocking};
    tsl_pipeline_out_t t;
    tsl_pipeline_iter(&in, &t);
    return t.flush_s + t.opt_tail_s;
}

/* As the stack of out runs its hops (cost.h tsl_cost_vp_blocking). */
static double closed_iter_s(const tsl_plan_t *out, const double *sync)
{
    const tsl_cost_knobs_t k = {.legacy_p2p = out->legacy_p2p,
                                .torch_pipelining = out->torch_pipelining};
    return closed_iter_as_s(out, sync, tsl_cost_vp_blocking(&k));
}

/* The event simulator's input from plan p (tsl_plan_sim_input, as eval's
 * tsl_search_simulate runs it) takes stage s's sync as sync[s] − time_nosync_s,
 * sync[s] the figure the closed form priced, and the simulator then gives the
 * plan's sim_iter_time_s. */
static void sim_agrees(const tsl_plan_t *p, const double *sync, const char *what)
{
    static tsl_plan_sim_t sim;
    tsl_plan_sim_input(p, false, &sim);
    for (uint32_t s = 0; s < p->pp; s++)
        CHECK_NEAR(sim.tail[s], sync[s] - p->stages[s].time_nosync_s, 1e-12,
                   "%s stage %u: the simulator's sync %.9g s, the closed form's %.9g s", what, s,
                   sim.tail[s], sync[s] - p->stages[s].time_nosync_s);
    size_t bytes = tsl_pipesim_in_ws_bytes(&sim.in);
    void *ws = malloc(bytes);
    tsl_pipesim_out_t o;
    CHECK(ws && tsl_pipesim_run(&sim.in, ws, bytes, &o, NULL) == 0, "%s: simulated", what);
    CHECK(p->sim_iter_time_s == o.iter_s, "%s: sim_iter_time_s %.9g s, simulated %.9g s", what,
          p->sim_iter_time_s, o.iter_s);
    free(ws);
}

/* Megatron-core under interleaving with overlap_grad_reduce launches each chunk's
 * DP reduce after that chunk's last backward (pipeline.h tsl_pipeline_chunk_rs_s):
 * each stage's sync is its time_s less what it charged the reduce under the last
 * backward, plus the chunks' queue; in plain 1F1B every stage but the first runs
 * its reduce after its last backward. Eight layers at PP 2 × DP 2 across two nodes
 * (ib100: the reduce longer than a layer's backward); the executor's step and
 * Megatron-LM 2021's legacy_p2p keep the reduce after the last backward. */
static void test_chunk_grad_reduce(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    tsl_request_t r;
    tsl_request_init(&r);
    r.overlap_grad_reduce = true;
    eight_layers(&m);
    CHECK(tsl_cluster_parse_spec(&c, "2x2xA100-80G:ib100", &err) == 0, "%s", err.msg);
    static tsl_plan_t g, out;
    given_plan(&g, 8, 2, "dp2", 2, 4);
    g.interleave = 2;
    g.opt_step = TSL_OPT_STEP_MEGATRON;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == 0, "megatron v 2: %s", err.msg);
    /* the same stages under the executor's step, which reduces under the last
     * backward: the stage figures the per-chunk reduce starts from */
    static tsl_plan_t fused;
    g.opt_step = TSL_OPT_STEP_FUSED;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &fused, &err) == 0, "fused v 2: %s", err.msg);
    g.opt_step = TSL_OPT_STEP_MEGATRON;
    double whole[TSL_PLAN_MAX_STAGES], chunked[TSL_PLAN_MAX_STAGES], bare[TSL_PLAN_MAX_STAGES];
    for (uint32_t s = 0; s < out.pp; s++) {
        const tsl_plan_stage_t *st = &out.stages[s];
        CHECK(st->dp_rs_s > 0 && st->dp_rs_sync_s > 0, "stage %u: reduce %.9g, charged %.9g", s,
              st->dp_rs_s, st->dp_rs_sync_s);
        CHECK(st->time_nosync_s == fused.stages[s].time_nosync_s &&
                  st->dp_rs_sync_s == fused.stages[s].dp_rs_sync_s,
              "stage %u: the executor's step prices the same backward", s);
        double beta = (st->time_nosync_s - st->fwd_s - st->p2p_s / 2.0) / 2.0;
        whole[s] = fused.stages[s].time_s;
        chunked[s] =
            whole[s] - st->dp_rs_sync_s +
            tsl_pipeline_chunk_rs_cost_s(st->dp_rs_s, beta, s, out.pp, 2, c.overlap_slowdown);
        bare[s] =
            whole[s] - st->dp_rs_sync_s + tsl_pipeline_chunk_rs_s(st->dp_rs_s, beta, s, out.pp, 2);
        /* cost model 161: the stage's own time_s carries it, so that the event
         * simulator, the trace and the document price the sync the closed form
         * does (158 moved only the closed form's copy: the simulator kept the
         * reduce under the last backward) */
        CHECK_NEAR(st->time_s, chunked[s], 1e-12, "stage %u: time_s %.9g s, per chunk %.9g s", s,
                   st->time_s, chunked[s]);
    }
    sim_agrees(&out, chunked, "megatron v 2");
    double want = closed_iter_s(&out, chunked), old = closed_iter_s(&out, whole);
    CHECK_NEAR(out.iter_time_s, want, 1e-12, "per-chunk reduce: %.9g s, by the form %.9g s",
               out.iter_time_s, want);
    /* cost model 157: what of the queue runs beside the drain's backwards slows them
     * at k, as under the last backward before (155 priced it beside nothing) */
    CHECK(c.overlap_slowdown > 1.0 && out.iter_time_s > closed_iter_s(&out, bare) + 1e-9,
          "the reduce's contention: %.9g s, without it %.9g s", out.iter_time_s,
          closed_iter_s(&out, bare));
    /* here the last chunk's reduce, now unhidden, outweighs what the drain hides of
     * the others' (the 405B H100 row the other way: bench/published/README.md) */
    CHECK(fabs(out.iter_time_s - old) > 1e-6,
          "not the reduce under the last backward: %.9g vs %.9g", out.iter_time_s, old);
    /* plain 1F1B: stage 0 keeps its reduce under its last backward
     * (grad_sync_first_stage), stage 1 runs its whole reduce after its own; with
     * six layers of eight on stage 1 the drain below it (stage 0's last backward)
     * hides less than that */
    g.interleave = 0;
    g.stages[0].first_layer = 0;
    g.stages[1].first_layer = 2;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == 0, "megatron 1F1B: %s", err.msg);
    g.opt_step = TSL_OPT_STEP_FUSED;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &fused, &err) == 0, "fused 1F1B: %s", err.msg);
    g.opt_step = TSL_OPT_STEP_MEGATRON;
    for (uint32_t s = 0; s < out.pp; s++) {
        const tsl_plan_stage_t *st = &out.stages[s];
        whole[s] = fused.stages[s].time_s;
        chunked[s] = s == 0 ? whole[s] : whole[s] - st->dp_rs_sync_s + st->dp_rs_s;
        CHECK_NEAR(st->time_s, chunked[s], 1e-12, "1F1B stage %u: time_s %.9g s, after %.9g s", s,
                   st->time_s, chunked[s]);
    }
    sim_agrees(&out, chunked, "megatron 1F1B");
    want = closed_iter_s(&out, chunked);
    old = closed_iter_s(&out, whole);
    CHECK_NEAR(out.iter_time_s, want, 1e-12, "1F1B: stage 1's reduce after its backward: %.9g s",
               out.iter_time_s);
    CHECK(out.iter_time_s > old + 1e-6, "1F1B: more than under the backward: %.9g vs %.9g",
          out.iter_time_s, old);
    g.interleave = 2;
    g.stages[1].first_layer = 4;
    g.legacy_p2p = true; /* Megatron-LM 2021: the reduce after the whole backward */
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == 0, "legacy v 2: %s", err.msg);
    for (uint32_t s = 0; s < out.pp; s++)
        whole[s] = out.stages[s].time_s;
    CHECK_NEAR(out.iter_time_s, closed_iter_s(&out, whole), 1e-12, "legacy_p2p: as before");
    g.legacy_p2p = false;
    g.opt_step = TSL_OPT_STEP_FUSED; /* the executor: no per-chunk reduce */
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == 0, "executor v 2: %s", err.msg);
    for (uint32_t s = 0; s < out.pp; s++)
        whole[s] = out.stages[s].time_s;
    CHECK_NEAR(out.iter_time_s, closed_iter_s(&out, whole), 1e-12, "the executor: as before");
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

/* torch.distributed.pipelining's interleaved 1F1B (cost model 162): torch 2.6's
 * PipelineScheduleMulti waits on each time step's batched send and receives before
 * its next op, so stages run by it (torch_pipelining) hold every hop as Megatron-LM
 * 2021 does, none hidden in the steady state as Megatron-core's overlap_p2p_comm
 * hides them (161 priced torchtitan's interleaving so); the event simulator runs the
 * same blocking sends, within 2 % of the closed form. The executor's stages keep the
 * hidden hops, and so does torch's optimizer step without torch's pipelining (cost
 * model 168: opt_step torch no longer stands for it). Eight layers at PP 2 x DP 2, the
 * stages on two nodes: their boundary crosses the NIC. */
static void test_torch_vp_blocking(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    tsl_request_t r;
    tsl_request_init(&r);
    eight_layers(&m);
    CHECK(tsl_cluster_parse_spec(&c, "2x2xA100-80G:ib100", &err) == 0, "%s", err.msg);
    static tsl_plan_t g, out, exec;
    given_plan(&g, 8, 2, "dp2", 2, 4);
    g.interleave = 2;
    g.opt_step = TSL_OPT_STEP_TORCH;
    g.torch_pipelining = true;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == 0, "torch v 2: %s", err.msg);
    double sync[TSL_PLAN_MAX_STAGES];
    for (uint32_t s = 0; s < out.pp; s++)
        sync[s] = out.stages[s].time_s;
    CHECK(out.stages[0].p2p_s > 0, "the boundary costs: %.9g s", out.stages[0].p2p_s);
    double blocking = closed_iter_as_s(&out, sync, true);
    double hidden = closed_iter_as_s(&out, sync, false);
    CHECK_NEAR(out.iter_time_s, blocking, 1e-12, "torch v 2: %.9g s, blocking hops %.9g s",
               out.iter_time_s, blocking);
    CHECK(blocking > hidden + 1e-9, "blocking %.9g s over hidden %.9g s", blocking, hidden);
    static tsl_plan_sim_t sim;
    tsl_plan_sim_input(&out, false, &sim);
    CHECK(sim.in.p2p_blocking == 1 && sim.in.n_chunks == 2, "the simulator's sends block");
    sim_agrees(&out, sync, "torch v 2");
    CHECK(fabs(out.sim_iter_time_s - out.iter_time_s) < 0.02 * out.iter_time_s,
          "simulated %.9g s, closed form %.9g s", out.sim_iter_time_s, out.iter_time_s);
    for (uint32_t step = 0; step < 2; step++) {
        /* the executor's stages, with its own step and with torch's: hops hidden */
        g.torch_pipelining = false;
        g.opt_step = step ? TSL_OPT_STEP_TORCH : TSL_OPT_STEP_FUSED;
        CHECK(tsl_eval_plan(&m, &c, &r, &g, &exec, &err) == 0, "executor v 2: %s", err.msg);
        for (uint32_t s = 0; s < exec.pp; s++)
            sync[s] = exec.stages[s].time_s;
        CHECK_NEAR(exec.iter_time_s, closed_iter_as_s(&exec, sync, false), 1e-12,
                   "opt_step %u, the executor's hops hidden: %.9g s", g.opt_step, exec.iter_time_s);
        tsl_plan_sim_input(&exec, false, &sim);
        CHECK(sim.in.p2p_blocking == 0, "opt_step %u: the simulated sends do not block",
              g.opt_step);
    }
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

/* The search's best plan (and its alternatives), given back: the same figures. */
static void check_reproduces(const char *model, const char *cluster, uint32_t batch)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    load(model, cluster, &m, &c);
    tsl_request_t r;
    tsl_request_init(&r);
    r.global_batch = batch;
    r.no_baselines = true;
    CHECK(tsl_search(&m, &c, &r, NULL, &res, &err) == TSL_SEARCH_OK, "%s", err.msg);
    for (uint32_t i = 0; i < res.n_top; i++) {
        const tsl_plan_t *p = i == 0 ? &res.best : &res.top[i];
        tsl_plan_t out;
        CHECK(tsl_eval_plan(&m, &c, &r, p, &out, &err) == 0, "%s #%u: %s", model, i, err.msg);
        CHECK(tsl_eval_same_figures(&out, p),
              "%s on %s #%u (pp %u, m %u, v %u, sublayer %d): eval %.9g s vs search %.9g s", model,
              cluster, i, p->pp, p->n_micro, p->interleave, p->sublayer, out.iter_time_s,
              p->iter_time_s);
    }
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

/* A plan over the attention/FFN blocks (plan.sublayer) is costed on the split
 * model; one over the whole layers with sublayer set is refused. */
static void test_sublayer(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    tsl_sublayer_model_t sm;
    load("GPT2-345M", "8xA100-80G", &m, &c);
    CHECK(tsl_sublayer_split(&m, &sm, &err) == 0, "%s", err.msg);
    tsl_request_t r;
    tsl_request_init(&r);
    static tsl_plan_t g, out, whole;
    given_plan(&g, sm.model.n_layers, 2, "tp2-dp2", 2, 8);
    g.sublayer = true;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == 0, "sublayer: %s", err.msg);
    CHECK(out.sublayer && out.stages[1].first_layer + out.stages[1].n_layers == sm.model.n_layers,
          "sublayer plan covers the %u blocks", sm.model.n_layers);
    given_plan(&g, m.n_layers, 2, "tp2-dp2", 2, 8);
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &whole, &err) == 0, "whole: %s", err.msg);
    g.sublayer = true;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == -1 && strstr(err.msg, "layers, the model"),
          "a whole-layer plan marked sublayer: %s", err.msg);
    tsl_sublayer_free(&sm);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

/* A small tied GPT: embedding (50257 tokens, 1024 learned positions), two blocks,
 * the head tied to the embedding; h = 1024, sequence 1024. */
static void tied_gpt(tsl_model_t *m)
{
    tsl_err_t err;
    tsl_layer_t emb = {.kind = TSL_LAYER_EMBEDDING,
                       .seq_len = 1024,
                       .hidden = 1024,
                       .vocab = 50257,
                       .positions = 1024};
    tsl_layer_t blk = gpt2_medium(1024);
    blk.causal = true;
    tsl_layer_t head = {
        .kind = TSL_LAYER_HEAD, .seq_len = 1024, .hidden = 1024, .vocab = 50257, .tied_head = true};
    tsl_model_init(m, "tied-gpt");
    if (tsl_model_add(m, &emb, &err) || tsl_model_add_n(m, &blk, 2, &err) ||
        tsl_model_add(m, &head, &err)) {
        fprintf(stderr, "setup: %s\n", err.msg);
        exit(2);
    }
}

/* The tied head across stages, by hand (Megatron's embedding group). pp 2 on two
 * nodes of one A100-80G each (ib100: NCCL's measured 12.2 GB/s, cost model 127), every layer
 * on one GPU, split [embedding, block | block, head]. The last stage keeps a copy of
 * the padded word embedding, 50304 × 1024 (50257 padded to 128·1): 16 B each =
 * 824,180,736 B of model states beside its block's 16 × 12,596,224. Once per
 * iteration, after stage 0's last backward (the pipeline's end T), the two stages
 * all-reduce its fp16 gradient, 2 × 50304 × 1024 = 103,022,592 B between 2 ranks:
 * 2·(2 − 1)/2 × 103,022,592 / 12.2e9 = 8.4445 ms; then both step, so the
 * iteration is T + 8.4445 ms + the longer of the two steps. On one stage (pp 1)
 * the head shares the embedding's table: no copy, no all-reduce. */
static void test_tied_head_by_hand(void)
{
    tsl_model_t m;
    tsl_cluster_t c2, c1;
    tsl_err_t err = {0};
    tied_gpt(&m);
    CHECK(tsl_cluster_parse_spec(&c2, "2x1xA100-80G:ib100", &err) == 0, "%s", err.msg);
    CHECK(tsl_cluster_parse_spec(&c1, "1xA100-80G", &err) == 0, "%s", err.msg);
    tsl_request_t r;
    tsl_request_init(&r);
    static tsl_plan_t g, out;
    given_plan(&g, 4, 2, "single", 1, 4);
    g.stages[0].first_layer = 0;
    g.stages[1].first_layer = 2;
    CHECK(tsl_eval_plan(&m, &c2, &r, &g, &out, &err) == 0, "pp 2: %s", err.msg);
    uint64_t blk = m.layers[1].params, copy = 50304ull * 1024;
    CHECK(blk == 12596224, "block parameters %llu", (unsigned long long)blk);
    CHECK(out.stages[1].ms_bytes == 16 * (blk + copy),
          "last stage: its block and the copy, %llu B, by hand %llu",
          (unsigned long long)out.stages[1].ms_bytes, (unsigned long long)(16 * (blk + copy)));
    /* stage 0: the word embedding (padded) and the positions, and its block */
    uint64_t emb = 50304ull * 1024 + 1024ull * 1024;
    CHECK(out.stages[0].ms_bytes == 16 * (emb + blk), "first stage %llu",
          (unsigned long long)out.stages[0].ms_bytes);
    double tie = 103022592.0 / 12.2e9;
    CHECK_NEAR(out.tie_s, tie, 1e-12, "tied all-reduce %.9g s, by hand %.9g s", out.tie_s, tie);
    double opt = fmax(out.stages[0].opt_s, out.stages[1].opt_s);
    CHECK(out.stages[1].opt_s > optimizer_by_hand_s(1024), "the copy steps too");
    CHECK_NEAR(out.opt_tail_s, tie + opt, 1e-12, "tail: the all-reduce, then the longer step");
    /* T: Eq. 9 over each stage's cycle, which holds one hop of the boundary whichever
     * side it is on (Megatron's blocking exchanges, cost model 161: pipeline.h) */
    const tsl_plan_stage_t *s0 = &out.stages[0], *s1 = &out.stages[1];
    double hop = s0->p2p_s / 2.0;
    double T = tsl_pipeline_time_s(2, (double[]){s0->time_nosync_s - hop, s1->time_nosync_s + hop},
                                   (double[]){s0->time_s - hop, s1->time_s + hop}, 4);
    CHECK(hop > 0, "a boundary between the nodes: %.9g s a hop", hop);
    CHECK_NEAR(out.iter_time_s, T + tie + opt, 1e-12, "iteration = T + all-reduce + step");

    given_plan(&g, 4, 1, "single", 1, 4);
    CHECK(tsl_eval_plan(&m, &c1, &r, &g, &out, &err) == 0, "pp 1: %s", err.msg);
    CHECK(out.tie_s == 0, "pp 1: no all-reduce");
    CHECK(out.stages[0].ms_bytes == 16 * (emb + 2 * blk), "pp 1: no copy, %llu",
          (unsigned long long)out.stages[0].ms_bytes);
    CHECK_NEAR(out.opt_tail_s, out.stages[0].opt_s, 1e-12, "pp 1: the step alone");
    tsl_model_free(&m);
    tsl_cluster_free(&c2);
    tsl_cluster_free(&c1);
}

/* torch.distributed.pipelining's last stage keeps every micro-batch's logits until
 * the step ends (output_chunks; docs/cost-model.md "The loss's memory"): under
 * loss_impl torch the tied GPT's last stage [block, head] at PP 2 holds m × 2 B ×
 * 1024 × 50257 logits beside its one micro-batch in flight, so 8 micro-batches
 * peak 6 × 102,926,336 B above 2 (and 6 more receive buffers); Megatron's loss
 * keeps nothing across the step,
 * nor does torch's without PP (one stage: the script's `del pred`). */
static void test_pp_held_logits(void)
{
    tsl_model_t m;
    tsl_cluster_t c2, c1;
    tsl_err_t err = {0};
    tied_gpt(&m);
    CHECK(tsl_cluster_parse_spec(&c2, "2x1xA100-80G:ib100", &err) == 0, "%s", err.msg);
    CHECK(tsl_cluster_parse_spec(&c1, "1xA100-80G", &err) == 0, "%s", err.msg);
    tsl_request_t r;
    tsl_request_init(&r);
    static tsl_plan_t g, out2, out8;
    const uint64_t held = 2ull * 1024 * 50257;
    const uint32_t impls[] = {TSL_LOSS_TORCH, TSL_LOSS_MEGATRON, TSL_LOSS_TORCH_COMPILE};
    static tsl_plan_t torch2;
    for (uint32_t i = 0; i < 3; i++) {
        r.loss_impl = impls[i];
        given_plan(&g, 4, 2, "single", 1, 2);
        g.stages[0].first_layer = 0;
        g.stages[1].first_layer = 2;
        CHECK(tsl_eval_plan(&m, &c2, &r, &g, &out2, &err) == 0, "m 2: %s", err.msg);
        given_plan(&g, 4, 2, "single", 1, 8);
        g.stages[0].first_layer = 0;
        g.stages[1].first_layer = 2;
        CHECK(tsl_eval_plan(&m, &c2, &r, &g, &out8, &err) == 0, "m 8: %s", err.msg);
        /* with them its activation receive buffers, one block input each (2·s·h B):
         * test_pp_recv_buffers */
        uint64_t want = impls[i] != TSL_LOSS_MEGATRON ? 6 * (held + 2ull * 1024 * 1024) : 0;
        CHECK(out2.stages[1].inflight == 1 && out8.stages[1].inflight == 1 &&
                  out8.stages[1].peak_bytes - out2.stages[1].peak_bytes == want,
              "%s: last stage %llu → %llu B, want +%llu", tsl_loss_impl_name(impls[i]),
              (unsigned long long)out2.stages[1].peak_bytes,
              (unsigned long long)out8.stages[1].peak_bytes, (unsigned long long)want);
        if (impls[i] == TSL_LOSS_TORCH)
            torch2 = out2;
    }
    /* the compiled loss keeps the held bf16 logits themselves, not a copy: against
     * torch's 4 B kept and 8 B transient, 0 and 2 per logit (held / 2 logits) */
    CHECK(torch2.stages[1].peak_bytes - out2.stages[1].peak_bytes == 10 * (held / 2),
          "torch-compile: last stage %llu B against torch's %llu",
          (unsigned long long)out2.stages[1].peak_bytes,
          (unsigned long long)torch2.stages[1].peak_bytes);
    r.loss_impl = TSL_LOSS_TORCH;
    given_plan(&g, 4, 1, "single", 1, 2);
    CHECK(tsl_eval_plan(&m, &c1, &r, &g, &out2, &err) == 0, "pp 1, m 2: %s", err.msg);
    given_plan(&g, 4, 1, "single", 1, 8);
    CHECK(tsl_eval_plan(&m, &c1, &r, &g, &out8, &err) == 0, "pp 1, m 8: %s", err.msg);
    CHECK(out2.stages[0].peak_bytes == out8.stages[0].peak_bytes, "pp 1: %llu vs %llu",
          (unsigned long long)out2.stages[0].peak_bytes,
          (unsigned long long)out8.stages[0].peak_bytes);
    tsl_model_free(&m);
    tsl_cluster_free(&c2);
    tsl_cluster_free(&c1);
}

/* torch.distributed.pipelining's receive buffers (docs/cost-model.md "Receive buffers
 * under torch's pipelining"): PipelineStage keeps one per micro-batch and direction,
 * a block's input, 2 · 1024 · 1024 B for the tied GPT's one sample (bnd_act_bytes).
 * At PP 2, 1F1B, the first stage [embedding, block] keeps m gradient buffers, the
 * last [block, head] m activation buffers; m 2 → 8 holds both stages' in-flight
 * micro-batches (2 and 1) and so adds 6 buffers to each peak under torch's loss
 * (and its held logits on the last: test_pp_held_logits), none under Megatron-LM's
 * (its p2p buffers are made per transfer and freed). Micro-batches of 2 samples:
 * under dp2 a rank receives its 1 sample (bnd), under tp2+sp both samples' 1/2 of
 * the sequence (bnd), under tp2 without SP both whole (2 · bnd). */
static void test_pp_recv_buffers(void)
{
    tsl_model_t m;
    tsl_cluster_t c2;
    tsl_err_t err = {0};
    tied_gpt(&m);
    CHECK(tsl_cluster_parse_spec(&c2, "2x2xA100-80G:ib100", &err) == 0, "%s", err.msg);
    const uint64_t bnd = 2ull * 1024 * 1024;
    CHECK(m.layers[1].bnd_act_bytes == bnd && m.layers[2].bnd_act_bytes == bnd,
          "a block's input: %llu B", (unsigned long long)m.layers[1].bnd_act_bytes);
    tsl_request_t r;
    tsl_request_init(&r);
    static tsl_plan_t g, out2, out8;
    const char *strategies[] = {"dp2", "tp2+sp", "tp2"};
    const uint64_t per_rank[] = {bnd, bnd, 2 * bnd};
    for (uint32_t k = 0; k < 3; k++)
        for (uint32_t torch = 0; torch < 2; torch++) {
            r.loss_impl = torch ? TSL_LOSS_TORCH : TSL_LOSS_MEGATRON;
            given_plan(&g, 4, 2, strategies[k], 2, 2);
            g.stages[1].first_layer = 2;
            CHECK(tsl_eval_plan(&m, &c2, &r, &g, &out2, &err) == 0, "m 2: %s", err.msg);
            given_plan(&g, 4, 2, strategies[k], 2, 8);
            g.stages[1].first_layer = 2;
            CHECK(tsl_eval_plan(&m, &c2, &r, &g, &out8, &err) == 0, "m 8: %s", err.msg);
            /* the first stage holds no logits: its growth is the buffers alone */
            uint64_t want = torch ? 6 * per_rank[k] : 0;
            CHECK(out8.stages[0].peak_bytes - out2.stages[0].peak_bytes == want,
                  "%s, %s: first stage %llu → %llu B, want +%llu", strategies[k],
                  torch ? "torch" : "megatron", (unsigned long long)out2.stages[0].peak_bytes,
                  (unsigned long long)out8.stages[0].peak_bytes, (unsigned long long)want);
        }
    tsl_model_free(&m);
    tsl_cluster_free(&c2);
}

/* An untied GPT of n blocks ([embedding, n blocks, head]; tied_gpt's layers),
 * or without its head. */
static void untied_gpt(tsl_model_t *m, uint32_t n, bool head_too)
{
    tsl_err_t err;
    tsl_model_t tied;
    tied_gpt(&tied);
    tsl_layer_t head = tied.layers[3];
    head.tied_head = false;
    tsl_model_init(m, head_too ? "untied-gpt" : "headless-gpt");
    if (tsl_model_add(m, &tied.layers[0], &err) || tsl_model_add_n(m, &tied.layers[1], n, &err) ||
        (head_too && tsl_model_add(m, &head, &err))) {
        fprintf(stderr, "setup: %s\n", err.msg);
        exit(2);
    }
    tsl_model_free(&tied);
}

/* md at PP 2 on two A100s under Megatron-LM's loss, m 4 of micro-batch 1, schedule
 * sched, stage 1 from layer cut: the given plan the V tests below evaluate. */
static void eval_pp2(const tsl_model_t *md, uint32_t sched, uint32_t cut, tsl_plan_t *out,
                     const char *what)
{
    static tsl_plan_t g;
    tsl_cluster_t c2;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c2, "2x1xA100-80G:ib100", &err) == 0, "%s", err.msg);
    tsl_request_t r;
    tsl_request_init(&r);
    r.loss_impl = TSL_LOSS_MEGATRON;
    given_plan(&g, md->n_layers, 2, "single", 1, 4);
    g.schedule = (uint8_t)sched;
    g.stages[1].first_layer = cut;
    CHECK(tsl_eval_plan(md, &c2, &r, &g, out, &err) == 0, "%s: %s", what, err.msg);
    tsl_cluster_free(&c2);
}

/* A V schedule's ends on rank 0 (docs/cost-model.md "Where a V runs its ends"):
 * ZBV at PP 2, m 4, split [embedding, block, block | block, block, head] under
 * Megatron-LM's loss (no receive buffers, no held logits). Rank 0 runs virtual stages
 * 0 and 3, the embedding and the head; rank 1 the middle ones: stage 1 prices three
 * blocks (the head's row a block of stage 0's), so its peak and time are those of
 * a headless model's last stage [block, block, block] under ZBV; stage 0 runs the
 * embedding, a block and the head, whose GEMMs (h 1024, V 50257) take more than a
 * block (before cost model 107: the embedding and two blocks, the head on stage 1).
 * The plan's stage cuts stay. DualPipeV likewise (m 4 = 2P). */
static void test_v_ends(void)
{
    tsl_model_t m, headless;
    untied_gpt(&m, 4, true);
    untied_gpt(&headless, 4, false);
    static tsl_plan_t out, ref;
    const uint32_t scheds[] = {TSL_PIPESIM_SCHED_ZBV, TSL_PIPESIM_SCHED_DUALPIPEV};
    for (uint32_t k = 0; k < 2; k++) {
        eval_pp2(&m, scheds[k], 3, &out, "with head");
        eval_pp2(&headless, scheds[k], 2, &ref, "headless");
        const char *name = tsl_pipesim_sched_name(scheds[k], 1);
        CHECK(out.stages[1].peak_bytes == ref.stages[1].peak_bytes,
              "%s: stage 1 %llu B, three blocks %llu", name,
              (unsigned long long)out.stages[1].peak_bytes,
              (unsigned long long)ref.stages[1].peak_bytes);
        CHECK_NEAR(out.stages[1].time_s, ref.stages[1].time_s, 1e-12, "%s: stage 1 %.6f s vs %.6f",
                   name, out.stages[1].time_s, ref.stages[1].time_s);
        /* stage 0 over [embedding, block] by the head, more than a block's */
        double block_s = ref.stages[1].time_s / 3;
        CHECK(out.stages[0].time_s > ref.stages[0].time_s + block_s &&
                  out.stages[0].peak_bytes > ref.stages[0].peak_bytes,
              "%s: stage 0 %.6f s ([embedding, block] %.6f, a block %.6f), %llu B", name,
              out.stages[0].time_s, ref.stages[0].time_s, block_s,
              (unsigned long long)out.stages[0].peak_bytes);
        CHECK(out.stages[0].first_layer == 0 && out.stages[0].n_layers == 3 &&
                  out.stages[1].first_layer == 3 && out.stages[1].n_layers == 3,
              "%s: the plan's cuts", name);
    }
    tsl_model_free(&m);
    tsl_model_free(&headless);
}

/* A GPT of two block kinds in the given order ('a': ffn 4096, 'b': ffn 8192),
 * between an embedding and an untied head. */
static void mixed_gpt(tsl_model_t *m, const char *kinds)
{
    tsl_err_t err;
    tsl_model_t tied;
    tied_gpt(&tied);
    tsl_layer_t a = tied.layers[1], b = tied.layers[1], head = tied.layers[3];
    b.ffn_hidden = 8192;
    head.tied_head = false;
    tsl_model_init(m, kinds);
    bool bad = tsl_model_add(m, &tied.layers[0], &err) != 0;
    for (const char *k = kinds; *k && !bad; k++)
        bad = tsl_model_add(m, *k == 'a' ? &a : &b, &err) != 0;
    if (bad || tsl_model_add(m, &head, &err)) {
        fprintf(stderr, "setup: %s\n", err.msg);
        exit(2);
    }
    tsl_model_free(&tied);
}

/* A V over blocks of two kinds prices the blocks each rank runs (docs/cost-model.md
 * "Where a V runs its ends", cost model 110): the model cut in order into 2P parts
 * (pipeline.h tsl_pipeline_v_parts, the torchtitan export's module_fqns_per_model_part).
 * [embedding, a a b b b, head] cut 4 | 3 at PP 2: parts [emb a] [a b] [b] [b head], so
 * rank 0 runs emb, a, b, head and rank 1 a, b, b — not a, a on rank 0 and b, b, b on
 * rank 1 as cost model 107's swap of stage 0's last block priced it. [embedding, a b a
 * b b, head] places a, b on rank 0 and b, a, b on rank 1: the same blocks per rank,
 * the same stage times. Rank 0's second chunk (virtual stage 3: b, head) carries its
 * own time (v_chunks), more than half the stage's forward. */
static void test_v_mixed_blocks(void)
{
    tsl_model_t m1, m2;
    mixed_gpt(&m1, "aabbb");
    mixed_gpt(&m2, "ababb");
    static tsl_plan_t o1, o2;
    const uint32_t scheds[] = {TSL_PIPESIM_SCHED_ZBV, TSL_PIPESIM_SCHED_DUALPIPEV};
    for (uint32_t k = 0; k < 2; k++) {
        const char *name = tsl_pipesim_sched_name(scheds[k], 1);
        eval_pp2(&m1, scheds[k], 4, &o1, "aabbb");
        eval_pp2(&m2, scheds[k], 4, &o2, "ababb");
        for (uint32_t s = 0; s < 2; s++)
            CHECK_NEAR(o1.stages[s].time_s, o2.stages[s].time_s, 1e-12,
                       "%s: stage %u runs the same blocks, %.9f s vs %.9f", name, s,
                       o1.stages[s].time_s, o2.stages[s].time_s);
        CHECK(o1.v_chunks && o1.stages[0].chunk1_fwd_s > o1.stages[0].fwd_s / 2 &&
                  o1.stages[0].chunk1_fwd_s < o1.stages[0].fwd_s,
              "%s: rank 0's second chunk (b, head) %.6f s of its forward %.6f", name,
              o1.stages[0].chunk1_fwd_s, o1.stages[0].fwd_s);
        CHECK(o1.stages[0].first_layer == 0 && o1.stages[0].n_layers == 4 &&
                  o1.stages[1].first_layer == 4 && o1.stages[1].n_layers == 3,
              "%s: the plan's cuts", name);
    }
    tsl_model_free(&m1);
    tsl_model_free(&m2);
}

/* A tied head under a V sits beside its embedding on rank 0 (the V's first and last
 * virtual stages; cost model 110): one table, no copy and no all-reduce — as at PP 1,
 * and as DualPipe's two modules of one rank would share it (torchtitan refuses weight
 * tying with PP, models/common/decoder.py). tied_gpt split [embedding, block | block,
 * head] under ZBV: parts [emb] [block] [block] [head], rank 1 two blocks; before
 * cost model 110 the head stayed on stage 1 with its copy and the tie all-reduce. */
static void test_v_tied_head(void)
{
    tsl_model_t m, headless;
    tied_gpt(&m);
    untied_gpt(&headless, 3, false);
    static tsl_plan_t out, ref;
    eval_pp2(&m, TSL_PIPESIM_SCHED_ZBV, 2, &out, "tied under ZBV");
    eval_pp2(&headless, TSL_PIPESIM_SCHED_ZBV, 2, &ref, "headless");
    CHECK(out.tie_s == 0, "no tie all-reduce: %g s", out.tie_s);
    CHECK(out.stages[1].peak_bytes == ref.stages[1].peak_bytes,
          "rank 1 two blocks and no embedding copy: %llu B vs %llu",
          (unsigned long long)out.stages[1].peak_bytes,
          (unsigned long long)ref.stages[1].peak_bytes);
    CHECK_NEAR(out.stages[1].time_s, ref.stages[1].time_s, 1e-12, "rank 1 %.6f s vs %.6f",
               out.stages[1].time_s, ref.stages[1].time_s);
    tsl_model_free(&m);
    tsl_model_free(&headless);
}

/* A V's chunks each at their own count (docs/cost-model.md "Where a V runs its ends",
 * cost model 118; pipeline.h tsl_pipeline_v_held): the V of test_v_ends at PP 2, m 4,
 * split [embedding, block, block | block, block, head]. Rank 1 runs parts 1 and 2,
 * [block, block] then [block]: chunk 0 twice chunk 1's stash X. By the schedules'
 * order (P 2, s 1): ZBV's peaks (2P − s, s) = (3, 1) and (2P − s − 1, s + 1) =
 * (2, 2) give max(3·2X + X, 2·2X + 2X) = 7X; DualPipeV's (2P − s, s + 1) = (3, 2)
 * 8X. X comes from the headless model's last stage [block, block, block] under
 * ZB-H1 (2 micro-batches each, 6X) and plain 1F1B (1 each, 3X): the same rows, the
 * same states, only the stash differs. Before cost model 118 every row of the rank
 * held the two chunks' count together: ZBV P = 2 (6X), DualPipeV P + 1 = 3 (9X). */
static void test_v_chunk_held(void)
{
    tsl_model_t m, headless;
    untied_gpt(&m, 4, true);
    untied_gpt(&headless, 4, false);
    static tsl_plan_t zbh1, plain, zbv, dpv;
    eval_pp2(&headless, TSL_PIPESIM_SCHED_1F1B, 2, &plain, "1F1B");
    eval_pp2(&headless, TSL_PIPESIM_SCHED_ZBH1, 2, &zbh1, "ZB-H1");
    uint64_t x3 = zbh1.stages[1].peak_bytes - plain.stages[1].peak_bytes, x = x3 / 3;
    CHECK(x > 0 && x3 == 3 * x, "three blocks' stash %llu B", (unsigned long long)x3);
    const uint32_t scheds[] = {TSL_PIPESIM_SCHED_ZBV, TSL_PIPESIM_SCHED_DUALPIPEV};
    tsl_plan_t *out[] = {&zbv, &dpv};
    const uint64_t want[] = {7, 8};
    for (uint32_t k = 0; k < 2; k++) {
        const char *name = tsl_pipesim_sched_name(scheds[k], 1);
        eval_pp2(&m, scheds[k], 3, out[k], name);
        uint64_t got = out[k]->stages[1].peak_bytes,
                 by_hand = zbh1.stages[1].peak_bytes - 6 * x + want[k] * x;
        CHECK(got == by_hand, "%s rank 1: %llu B, by hand %llu (%llu X, X = %llu B)", name,
              (unsigned long long)got, (unsigned long long)by_hand, (unsigned long long)want[k],
              (unsigned long long)x);
    }
    tsl_model_free(&m);
    tsl_model_free(&headless);
}

/* An MTP depth a V places on rank 1 (cost model 118): [embedding, 7 blocks, MTP entry,
 * inner block, head copy, head] cut 2 | 6 | 4 at PP 3 under ZBV: parts [emb] [b b b]
 * [b b] [b b] [entry, inner, copy] [head], so the depth runs on rank 1 (part 4) and
 * the head on rank 0. Its embedding copy's all-reduce is priced with rank 1's devices
 * and now timed between ranks 0 and 1 (tie_stage 1), not 0 and P − 1. */
static void test_v_mtp_tie_stage(void)
{
    tsl_model_t m;
    tsl_cluster_t c3;
    tsl_err_t err = {0};
    untied_gpt(&m, 7, true);
    CHECK(tsl_model_set_mtp(&m, 1, &err) == 0 && m.n_layers == 12, "one MTP depth: %s", err.msg);
    CHECK(tsl_cluster_parse_spec(&c3, "3x1xA100-80G:ib100", &err) == 0, "%s", err.msg);
    tsl_request_t r;
    tsl_request_init(&r);
    r.loss_impl = TSL_LOSS_MEGATRON;
    static tsl_plan_t g, out;
    given_plan(&g, 12, 3, "single", 1, 6);
    g.schedule = TSL_PIPESIM_SCHED_ZBV;
    g.stages[1].first_layer = 2;
    g.stages[2].first_layer = 8;
    CHECK(tsl_eval_plan(&m, &c3, &r, &g, &out, &err) == 0, "ZBV with MTP: %s", err.msg);
    CHECK(out.tie_s > 0 && out.tie_stage == 1, "the depth's tie with rank 1: %g s, stage %u",
          out.tie_s, out.tie_stage);
    tsl_model_free(&m);
    tsl_cluster_free(&c3);
}

/* The eager host floor through eval (docs/cost-model.md "Host dispatch"): one
 * encoder layer of h 1024, 2 samples of 512 on an A100 issues 12 ops forward and
 * 20 backward; at 57.2 µs an op the host takes 686.4 µs and 1144 µs, more than
 * the GPU's roofline (~0.2 / 0.4 ms), so the stage's forward is the host's; the
 * request's no_host_floor (a C executor) and PAPER mode price the GPU alone. */
static void test_host_floor(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    one_layer(&m, 1024, 16);
    CHECK(tsl_cluster_parse_spec(&c, "1xA100-80G", &err) == 0, "%s", err.msg);
    tsl_request_t r;
    tsl_request_init(&r);
    tsl_plan_t g, eager, gpu, paper;
    given_plan(&g, 1, 1, "single", 2, 1);
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &eager, &err) == 0, "eager: %s", err.msg);
    r.no_host_floor = true;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &gpu, &err) == 0, "gpu: %s", err.msg);
    r.no_host_floor = false;
    r.paper_cost = true;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &paper, &err) == 0, "paper: %s", err.msg);
    tsl_roofline_dev_t dev;
    tsl_roofline_dev_init(&dev, 312e12 * 0.82, 2039e9);
    tsl_gemm_eff_for_gpu(&dev.shape, "A100-80G", 312e12, 2039e9);
    dev.wgrad_acc_bytes = 2.0; /* the executor's dW GEMMs: beta 1 on its bf16 buffer */
    double gf = tsl_roofline_layer_fwd_s(&dev, &m.layers[0], 2, 1, false, 0);
    double gb = tsl_roofline_layer_bwd_s(&dev, &m.layers[0], 2, 1, false, 0);
    CHECK(gf < 686.4e-6 && gb < 1258.4e-6, "GPU %.1f / %.1f us", gf * 1e6, gb * 1e6);
    CHECK_NEAR(eager.stages[0].fwd_s, 12 * TSL_ROOFLINE_HOST_OP_S, 1e-12, "eager forward %.1f us",
               eager.stages[0].fwd_s * 1e6);
    CHECK_NEAR(gpu.stages[0].fwd_s, gf, 1e-12, "no floor: the GPU's %.1f us",
               gpu.stages[0].fwd_s * 1e6);
    CHECK_NEAR(paper.stages[0].fwd_s, gf, 1e-12, "paper: the GPU's");
    /* one micro-batch, one GPU: the iteration is forward + backward + optimizer */
    CHECK_NEAR(eager.iter_time_s - gpu.iter_time_s, (12 + 22) * TSL_ROOFLINE_HOST_OP_S - gf - gb,
               1e-9, "the iteration carries the floor: %.1f us more",
               (eager.iter_time_s - gpu.iter_time_s) * 1e6);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

/* The stack's own host figure (the request's host_op_us, cost model 156): the same
 * host-bound layer as test_host_floor prices its forward at 12 ops of the given
 * figure, the plan records it, a given plan's figure is taken where the request gives
 * none, no_host_floor and PAPER still price the GPU alone, and a plan without one
 * prices as before (the built-in figure). */
static void test_host_op_us(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    one_layer(&m, 1024, 16);
    CHECK(tsl_cluster_parse_spec(&c, "1xA100-80G", &err) == 0, "%s", err.msg);
    tsl_request_t r;
    tsl_request_init(&r);
    tsl_plan_t g, built_in, own, again, gpu, paper;
    given_plan(&g, 1, 1, "single", 2, 1);
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &built_in, &err) == 0, "built-in: %s", err.msg);
    CHECK(built_in.host_op_us == 0, "no figure given, none recorded: %g", built_in.host_op_us);
    CHECK_NEAR(built_in.stages[0].fwd_s, 12 * TSL_ROOFLINE_HOST_OP_S, 1e-12, "built-in forward");
    r.host_op_us = 93.0;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &own, &err) == 0, "own: %s", err.msg);
    CHECK_NEAR(own.stages[0].fwd_s, 12 * 93e-6, 1e-12, "the stack's own: 12 ops at 93 us, %.1f us",
               own.stages[0].fwd_s * 1e6);
    CHECK_NEAR(own.iter_time_s - built_in.iter_time_s, (12 + 22) * (93e-6 - TSL_ROOFLINE_HOST_OP_S),
               1e-9, "the iteration: every op of both passes at the stack's figure");
    CHECK_NEAR(own.host_op_us, 93.0, 1e-9, "the plan records the figure priced: %g",
               own.host_op_us);
    tsl_request_init(&r); /* the given plan's own figure where the request has none */
    CHECK(tsl_eval_plan(&m, &c, &r, &own, &again, &err) == 0, "again: %s", err.msg);
    CHECK(again.iter_time_s == own.iter_time_s && again.host_op_us == own.host_op_us,
          "the plan's figure kept: %g s against %g", again.iter_time_s, own.iter_time_s);
    r.host_op_us = 93.0;
    r.no_host_floor = true;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &gpu, &err) == 0, "gpu: %s", err.msg);
    r.no_host_floor = false;
    r.paper_cost = true;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &paper, &err) == 0, "paper: %s", err.msg);
    CHECK(gpu.stages[0].fwd_s < 12 * TSL_ROOFLINE_HOST_OP_S &&
              paper.stages[0].fwd_s == gpu.stages[0].fwd_s,
          "no host floor either way: %.1f / %.1f us", gpu.stages[0].fwd_s * 1e6,
          paper.stages[0].fwd_s * 1e6);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

/* The request's no_dropout and autocast through eval: no_dropout prices the
 * model with every layer's dropout removed (the same figures as that model given
 * outright), and drops the dropout's 5 bytes per element and kernel per block;
 * autocast prices the same plan slower, the plan records it, and its states hold
 * 18 B per parameter. */
static void test_request_dropout_autocast(void)
{
    tsl_model_t m, nd;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    one_layer_causal(&m, 1024, 16, true);
    one_layer_causal(&nd, 1024, 16, true);
    CHECK(tsl_model_set_no_dropout(&nd, &err) == 0 && nd.layers[0].no_dropout, "%s", err.msg);
    CHECK(tsl_cluster_parse_spec(&c, "1xH100-80G", &err) == 0, "%s", err.msg);
    tsl_request_t r;
    tsl_request_init(&r);
    r.no_host_floor = true;
    tsl_plan_t g, with, without, outright, ac;
    given_plan(&g, 1, 1, "single", 16, 1);
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &with, &err) == 0, "%s", err.msg);
    CHECK(tsl_eval_plan(&nd, &c, &r, &g, &outright, &err) == 0, "%s", err.msg);
    r.no_dropout = true;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &without, &err) == 0, "%s", err.msg);
    CHECK(without.iter_time_s == outright.iter_time_s && without.peak_bytes == outright.peak_bytes,
          "no_dropout: as the model without it");
    CHECK(without.iter_time_s < with.iter_time_s && without.peak_bytes < with.peak_bytes,
          "no_dropout: faster and smaller (%g < %g s)", without.iter_time_s, with.iter_time_s);
    CHECK(!without.autocast, "bf16 unless asked");
    r.autocast = true;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &ac, &err) == 0, "%s", err.msg);
    CHECK(ac.autocast && ac.iter_time_s > without.iter_time_s, "autocast: %g s against %g",
          ac.iter_time_s, without.iter_time_s);
    CHECK(ac.stages[0].ms_bytes == 18 * m.layers[0].params, "autocast: 18 B/param (%llu)",
          (unsigned long long)ac.stages[0].ms_bytes);
    /* one micro-batch: its backward allocates the fp32 .grad as it goes, so the peak
     * (this layer's backward) lacks its 4 B per parameter; with two of the same size
     * the second finds the first's .grad there: the whole 18 B (the activations the
     * same, one micro-batch held either way) */
    tsl_plan_t g2, ac2;
    given_plan(&g2, 1, 1, "single", 16, 2);
    CHECK(tsl_eval_plan(&m, &c, &r, &g2, &ac2, &err) == 0, "%s", err.msg);
    CHECK(ac2.peak_bytes - ac.peak_bytes == 4 * m.layers[0].params,
          "first micro-batch: %llu B less (4 B x %llu)",
          (unsigned long long)(ac2.peak_bytes - ac.peak_bytes),
          (unsigned long long)m.layers[0].params);
    CHECK(ac2.peak_bytes == ac2.stages[0].ms_bytes + ac2.stages[0].act_bytes,
          "two micro-batches: states and activations whole");
    tsl_model_free(&nd);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

/* The request's eager through eval (docs/cost-model.md "Eager modules"): Llama 3 8B
 * on 8 H100 under FSDP, one micro-batch of 8 × 8192 tokens: the same plan slower by
 * the eager kernels, nothing else (memory the same), the plan records it, and GPT-2
 * (LayerNorm, GELU) does not move. */
static void test_request_eager(void)
{
    tsl_model_t m, gpt;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(tsl_model_preset("Llama3-8B", &m, &err) == 0 &&
              tsl_model_preset("GPT2-345M", &gpt, &err) == 0,
          "%s", err.msg);
    CHECK(tsl_cluster_parse_spec(&c, "8xH100-80G", &err) == 0, "%s", err.msg);
    /* the time alone: an H100 of 1 TiB, so the 8 x 8192 tokens fit (a budget above the
       device's memory is refused, as plan refuses it) */
    c.gpu_types[c.nodes[0].gpu_type].mem_bytes = 1ull << 40;
    tsl_request_t r;
    tsl_request_init(&r);
    r.mem_budget_bytes = 1ull << 40;
    tsl_plan_t g, fused, eager, g2, gf, ge;
    given_plan(&g, m.n_layers, 1, "sdp8", 8, 1);
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &fused, &err) == 0, "%s", err.msg);
    given_plan(&g2, gpt.n_layers, 1, "sdp8", 8, 1);
    CHECK(tsl_eval_plan(&gpt, &c, &r, &g2, &gf, &err) == 0, "%s", err.msg);
    r.eager = true;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &eager, &err) == 0, "%s", err.msg);
    CHECK(tsl_eval_plan(&gpt, &c, &r, &g2, &ge, &err) == 0, "%s", err.msg);
    CHECK(eager.eager && !fused.eager, "the plan records eager");
    /* 1.40 MB per token and layer at 0.8 x 3350 GB/s: 65,536 tokens x 32 layers over
     * 8 GPUs ≈ 0.137 s more per iteration */
    double more = eager.iter_time_s - fused.iter_time_s;
    CHECK(more > 0.12 && more < 0.16, "eager: %.3f s more", more);
    CHECK(eager.peak_bytes == fused.peak_bytes, "eager: memory as priced fused");
    CHECK(ge.iter_time_s == gf.iter_time_s, "GPT-2: unchanged (%g, %g)", ge.iter_time_s,
          gf.iter_time_s);
    /* back at 80 GiB the 1 TiB budget is refused, naming memory, as plan refuses it */
    c.gpu_types[c.nodes[0].gpu_type].mem_bytes = 80ull << 30;
    CHECK(tsl_eval_plan(&gpt, &c, &r, &g2, &ge, &err) != 0 &&
              strstr(err.msg, "eval: memory: the budget of 1024.0 GiB exceeds the 80.0 GiB") ==
                  err.msg,
          "a budget over the device: %s", err.msg);
    tsl_model_free(&gpt);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

/* Who runs a given plan's FP8 (docs/api.md, plan_json): the plan's fp8_impl 1
 * (torchao) binds whatever the request's target; 0 (Transformer Engine, or the field
 * absent: a plan document writes it only when nonzero, and proto3 has no presence)
 * leaves it to the target — torchtitan's torchao, TE for the rest. */
static void test_fp8_impl_rule(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    load("GPT2-345M", "8xH100-80G", &m, &c);
    tsl_request_t r;
    tsl_request_init(&r);
    tsl_plan_t g, te, ao, tt0, tt1, mg1;
    given_plan(&g, m.n_layers, 1, "tp2-sdp4+sp", 8, 1); /* in both stacks' spaces */
    g.fp8_recipe = 2;                                   /* tensorwise: both run it */
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &te, &err) == 0, "%s", err.msg);
    g.fp8_impl = 1;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &ao, &err) == 0, "%s", err.msg);
    CHECK(te.fp8_impl == 0 && ao.fp8_impl == 1 && te.iter_time_s != ao.iter_time_s,
          "TE and torchao priced apart: %g, %g", te.iter_time_s, ao.iter_time_s);
    r.target = 3; /* torchtitan */
    g.fp8_impl = 0;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &tt0, &err) == 0, "%s", err.msg);
    g.fp8_impl = 1;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &tt1, &err) == 0, "%s", err.msg);
    CHECK(tt0.fp8_impl == 1 && tt0.iter_time_s == tt1.iter_time_s,
          "0 with target torchtitan: the target's torchao (%u, %g vs %g)", tt0.fp8_impl,
          tt0.iter_time_s, tt1.iter_time_s);
    r.target = 1; /* megatron: the plan's torchao still binds, and Megatron-LM cannot run it */
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &mg1, &err) != 0 &&
              tsl_err_code(&err) == TSL_E_UNSUPPORTED &&
              strstr(err.msg, "priced as torchao runs it (fp8_impl torchao)") != NULL,
          "megatron refuses a torchao plan: %s", err.msg);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

/* Mixtral-8x7B on 2x8xH100 as one NVLink domain: the search's best plan at ep 8 x
 * etp 2 with a padded capacity factor carries its expert layout and routing,
 * and eval reproduces its figures from the plan alone; dropping instead of
 * padding is faster, a request's imbalance slows a dropless plan; a layout that
 * does not fit the stage and routing knobs out of range are refused naming them. */
static void test_moe_plan(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    load("Mixtral-8x7B", "2x8xH100-80G:nvl16", &m, &c);
    tsl_request_t r, er;
    tsl_request_init(&r);
    tsl_request_init(&er);
    r.global_batch = 64;
    r.no_pp = r.no_baselines = true;
    r.ep = 8;
    r.etp = 2;
    r.moe_capacity = 1.25;
    r.moe_pad = true;
    CHECK(tsl_search(&m, &c, &r, NULL, &res, &err) == TSL_SEARCH_OK, "%s", err.msg);
    const tsl_plan_t *b = &res.best;
    CHECK(b->ep == 8 && b->etp == 2 && b->moe_capacity == 1.25 && b->moe_pad,
          "the plan carries ep %u etp %u capacity %g pad %d", b->ep, b->etp, b->moe_capacity,
          b->moe_pad);
    tsl_plan_t g = *b, out, other;
    CHECK(tsl_eval_plan(&m, &c, &er, &g, &out, &err) == 0 && tsl_eval_same_figures(&out, b),
          "eval of the best: %s, %.9g s vs %.9g s", err.msg, out.iter_time_s, b->iter_time_s);
    g.moe_pad = false;
    CHECK(tsl_eval_plan(&m, &c, &er, &g, &other, &err) == 0 && other.iter_time_s < out.iter_time_s,
          "dropping (%.4f s) beats padding (%.4f s): %s", other.iter_time_s, out.iter_time_s,
          err.msg);
    g.moe_capacity = 0;
    CHECK(tsl_eval_plan(&m, &c, &er, &g, &out, &err) == 0, "dropless: %s", err.msg);
    er.moe_imbalance = 1.5;
    CHECK(tsl_eval_plan(&m, &c, &er, &g, &other, &err) == 0 &&
              other.iter_time_s > out.iter_time_s && other.moe_imbalance == 1.5,
          "imbalance 1.5: %.4f s against %.4f s", other.iter_time_s, out.iter_time_s);
    er.moe_imbalance = 0;
    g = *b;
    g.etp = 4; /* 8 x 4 = 32 ranks on a stage of 16 */
    CHECK(tsl_eval_plan(&m, &c, &er, &g, &out, &err) == -1 && strstr(err.msg, "ep 8 x etp 4"),
          "etp 4: %s", err.msg);
    g.etp = 3; /* does not divide the expert width 14336 */
    CHECK(tsl_eval_plan(&m, &c, &er, &g, &out, &err) == -1 && strstr(err.msg, "etp 3"), "etp 3: %s",
          err.msg);
    g = *b;
    g.moe_capacity = -1;
    CHECK(tsl_eval_plan(&m, &c, &er, &g, &out, &err) == -1 &&
              strstr(err.msg, "moe_capacity_factor"),
          "capacity -1: %s", err.msg);
    g = *b;
    g.moe_imbalance = 0.5;
    CHECK(tsl_eval_plan(&m, &c, &er, &g, &out, &err) == -1 && strstr(err.msg, "moe_imbalance"),
          "imbalance 0.5: %s", err.msg);
    /* above E/k (8 experts, top-2: 4) the busiest expert would take more tokens than its
     * rank holds: refused as the search refuses it (both were priced, 16 x the mean) */
    g = *b;
    g.moe_imbalance = 16;
    CHECK(tsl_eval_plan(&m, &c, &er, &g, &out, &err) == -1 &&
              strstr(err.msg, "moe_imbalance: 16 is above E/k = 4 of model Mixtral-8x7B"),
          "the plan's imbalance 16: %s", err.msg);
    g = *b;
    er.moe_imbalance = 4.5;
    CHECK(tsl_eval_plan(&m, &c, &er, &g, &out, &err) == -1 &&
              strstr(err.msg, "moe_imbalance: 4.5 is above E/k = 4"),
          "the request's imbalance 4.5: %s", err.msg);
    er.moe_imbalance = 4;
    CHECK(tsl_eval_plan(&m, &c, &er, &g, &out, &err) == 0, "imbalance 4 = E/k: %s", err.msg);
    er.moe_imbalance = 0;
    tsl_model_free(&m);
    tsl_cluster_free(&c);
    /* a model without MoE layers has no expert to load */
    load("GPT2-345M", "8xA100-80G", &m, &c);
    r.ep = r.etp = 0;
    r.moe_capacity = 0;
    r.moe_pad = false;
    r.global_batch = 8;
    CHECK(tsl_search(&m, &c, &r, NULL, &res, &err) == TSL_SEARCH_OK, "%s", err.msg);
    g = res.best;
    er.moe_imbalance = 2;
    CHECK(tsl_eval_plan(&m, &c, &er, &g, &out, &err) == -1 &&
              strstr(err.msg, "moe_imbalance: 2, but model GPT2-345M has no MoE layers"),
          "a dense model's imbalance: %s", err.msg);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

/* DualPipeV's F&B under a flex dispatcher (docs/cost-model.md "DualPipeV", cost model
 * 155): GPT-OSS-20B at PP 2 on two DGX H100, each stage one node (DP 8, EP 8 over its
 * NVLink; m 4 = 2P). DeepEP's all-to-alls hold 20 of the
 * H100's 132 SMs, so a stage whose only communication is its EP exchange saves the
 * same on a cluster of overlap_slowdown 1 as of 1.3 (the partner at 112 of 132 SMs,
 * not k); under NCCL's all-to-all the cluster's k still sets the saving (less at
 * 1.3 than at 1). Before cost model 153 the flex plan saved less at 1.3, too. */
static void test_dualpipev_deepep_sms(void)
{
    double save[2][2];
    for (int flex = 0; flex < 2; flex++)
        for (int ki = 0; ki < 2; ki++) {
            tsl_model_t m;
            tsl_cluster_t c;
            tsl_err_t err = {0};
            load("GPT-OSS-20B", "2x8xH100-80G:8xib400", &m, &c);
            c.overlap_slowdown = ki ? 1.3 : 1.0;
            tsl_request_t r;
            tsl_request_init(&r);
            static tsl_plan_t g, out;
            given_plan(&g, m.n_layers, 2, "dp8", 8, 4);
            g.schedule = TSL_PIPESIM_SCHED_DUALPIPEV;
            g.stages[1].first_layer = m.n_layers / 2;
            g.ep = 8;
            g.moe_flex = flex;
            CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == 0, "flex %d, k %g: %s", flex,
                  c.overlap_slowdown, err.msg);
            save[flex][ki] = out.stages[1].fb_save_s;
            tsl_model_free(&m);
            tsl_cluster_free(&c);
        }
    CHECK(save[1][0] > 0 && fabs(save[1][1] - save[1][0]) <= 1e-12 * save[1][0],
          "flex: the same F&B saving at k 1 and 1.3 (DeepEP's SMs): %.9g vs %.9g", save[1][0],
          save[1][1]);
    CHECK(save[0][1] > 0 && save[0][1] < save[0][0],
          "NCCL: less saved at k 1.3 than at 1: %.9g vs %.9g", save[0][1], save[0][0]);
}

/* An MoE plan whose EP group crosses nodes (GPT-OSS-20B, EP 16 over 2 DGX H100 with 8
 * NDR cards each), under NCCL's all-to-all and under a flex dispatcher: the search's
 * best plan and its alternatives, given back to eval, keep their figures, and both read
 * the network's all-to-all figures the same way — with the NICs at the ring's figure
 * (the cluster's inter_a2a_ratio, and since cost model 136 inter_flex_ratio, set to 1)
 * the search's best is faster, eval of the first best on that cluster prices it below
 * what it was, and the search there finds that figure or better. */
static void test_moe_across_nodes(void)
{
    for (int flex = 0; flex < 2; flex++) {
        tsl_model_t m;
        tsl_cluster_t c;
        tsl_err_t err = {0};
        load("GPT-OSS-20B", "2x8xH100-80G:8xib400", &m, &c);
        tsl_request_t r;
        tsl_request_init(&r);
        r.global_batch = 64;
        r.no_pp = r.no_baselines = true;
        r.ep = 16;
        r.moe_flex = flex;
        CHECK(tsl_search(&m, &c, &r, NULL, &res, &err) == TSL_SEARCH_OK, "%s", err.msg);
        const char *name = flex ? "flex" : "NCCL";
        CHECK(res.best.ep == 16 && res.best.moe_flex == (bool)flex, "%s: ep %u, flex %d", name,
              res.best.ep, res.best.moe_flex);
        tsl_plan_t best = res.best, out;
        for (uint32_t i = 0; i < res.n_top; i++) {
            const tsl_plan_t *p = i == 0 ? &res.best : &res.top[i];
            CHECK(tsl_eval_plan(&m, &c, &r, p, &out, &err) == 0 && tsl_eval_same_figures(&out, p),
                  "%s #%u: eval %.9g s vs search %.9g s (%s)", name, i, out.iter_time_s,
                  p->iter_time_s, err.msg);
        }
        /* the NICs at the ring's figure for the EP all-to-alls */
        double *share = flex ? &c.inter_flex_ratio : &c.inter_a2a_ratio;
        CHECK(*share > 0 && *share < 1, "%s: ib400's share %g", name, *share);
        *share = 1.0;
        CHECK(tsl_eval_plan(&m, &c, &r, &best, &out, &err) == 0 &&
                  out.iter_time_s < best.iter_time_s,
              "%s: eval at the ring's NIC figure %.9g s, at the link's %.9g s (%s)", name,
              out.iter_time_s, best.iter_time_s, err.msg);
        CHECK(tsl_search(&m, &c, &r, NULL, &res, &err) == TSL_SEARCH_OK &&
                  res.best.iter_time_s <= out.iter_time_s,
              "%s: the search at the ring's NIC figure %.9g s, eval of the plan there %.9g s", name,
              res.best.iter_time_s, out.iter_time_s);
        tsl_plan_t again;
        CHECK(tsl_eval_plan(&m, &c, &r, &res.best, &again, &err) == 0 &&
                  tsl_eval_same_figures(&again, &res.best),
              "%s at the ring's: eval %.9g s vs search %.9g s", name, again.iter_time_s,
              res.best.iter_time_s);
        tsl_model_free(&m);
        tsl_cluster_free(&c);
    }
}

/* The comparison search's request (tsl_eval_search_request): the request's switches
 * win, then the given plan's recorded stack switches; the plan's own choices (its
 * degrees) stay the search's; a plan recording nothing leaves the request. */
static void test_search_request(void)
{
    tsl_request_t r, out;
    tsl_plan_t g;
    tsl_request_init(&r);
    tsl_plan_init(&g);
    tsl_eval_search_request(&r, &g, &out);
    CHECK(memcmp(&r, &out, sizeof r) == 0, "a plan recording nothing leaves the request");
    g.autocast = true;
    g.cpu_offload_layers = 2;
    g.fp8_recipe = TSL_FP8_TENSORWISE;
    g.loss_impl = TSL_LOSS_MEGATRON;
    g.tp_comm_overlap = true;
    g.grad_reduce_bytes = 4;
    g.grad_reduce_exposed = true;
    g.recompute_modules = 1;
    g.moe_capacity = 1.25;
    g.moe_pad = true;
    g.cp = 2;
    g.ep = 4;
    g.etp = 2;
    g.pp = 2;
    tsl_eval_search_request(&r, &g, &out);
    CHECK(out.autocast && out.cpu_offload_layers == 2 && out.fp8_recipe == TSL_FP8_TENSORWISE &&
              out.loss_impl == TSL_LOSS_MEGATRON && out.tp_comm_overlap &&
              out.grad_reduce_bytes == 4 && out.no_overlap_grad_reduce &&
              out.recompute_modules == 1 && out.moe_capacity == 1.25 && out.moe_pad,
          "the plan's stack switches are inherited");
    CHECK(out.cp == 0 && out.ep == 0 && out.etp == 0 && out.pp == 0,
          "the plan's degrees stay the search's: cp %u ep %u etp %u pp %u", out.cp, out.ep, out.etp,
          out.pp);
    r.cpu_offload_layers = 1;
    r.loss_impl = TSL_LOSS_TE;
    r.overlap_grad_reduce = true;
    r.no_fp8 = true;
    tsl_eval_search_request(&r, &g, &out);
    CHECK(out.cpu_offload_layers == 1 && out.loss_impl == TSL_LOSS_TE &&
              !out.no_overlap_grad_reduce && out.overlap_grad_reduce && out.fp8_recipe == 0,
          "the request's switches win (offload %u, loss %u, fp8 %u under --no-fp8)",
          out.cpu_offload_layers, out.loss_impl, out.fp8_recipe);
}

int main(void)
{
    test_search_request();
    test_sublayer();
    test_one_layer_by_hand();
    test_causal_by_hand();
    test_host_floor();
    test_host_op_us();
    test_request_dropout_autocast();
    test_request_eager();
    test_tied_head_by_hand();
    test_pp_held_logits();
    test_pp_recv_buffers();
    test_v_ends();
    test_v_mixed_blocks();
    test_v_tied_head();
    test_v_chunk_held();
    test_v_mtp_tie_stage();
    test_refusals();
    test_moe_plan();
    test_moe_across_nodes();
    test_dualpipev_deepep_sms();
    test_fp8_impl_rule();
    test_interleaved_chunks();
    test_chunk_grad_reduce();
    test_torch_vp_blocking();
    check_reproduces("BERT-Huge-32", "8xA100-40G", 32);
    check_reproduces("GPT2-1.3B", "2x4xV100-16G:ib100", 16);
    check_reproduces("GPT3-39B", "2x8xA100-80G:ib200", 32);
    return CHECK_DONE();
}

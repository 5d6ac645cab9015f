/*
 * test_profile.c — measured profiles in the planner (planner/profile.h): the
 * interpolation across tokens, TP split and hidden size, a layer's time from
 * its blocks, attaching a profile to a cluster, and the cost model and the
 * search honouring it (blocks twice as fast → compute and iteration time halve).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cost.h"
#include "layer_dense.h"
#include "profile.h"
#include "search.h"

/* A hand-made profile for the GPT2-345M layer shape (h 1024, s 1024, a 16,
 * f 4096) and a 2048 one: rate(T, t) = R·x/(x + 2048) with x = T/t, R 600
 * TFLOP/s for FFN and 200 for attention; backward at 0.9 of the forward rate.
 * `speed` scales every rate. */
static double attn_flops(double h, double s, double mb, double tp)
{
    return (8.0 * s * h * h + 4.0 * s * s * h) * mb / tp;
}
static double ffn_flops(double h, double s, double mb, double tp)
{
    return 16.0 * s * h * h * mb / tp;
}
static double model_rate(int kind, double tokens, double tp)
{
    double x = tokens / tp, r = kind == TSL_PROFILE_FFN ? 600e12 : 200e12;
    return r * x / (x + 2048);
}

static tsl_profile_t *make_profile(double speed)
{
    tsl_profile_t *p = calloc(1, sizeof(*p));
    static const uint32_t hs[] = {1024, 2048}, mbs[] = {1, 4, 16}, tps[] = {1, 4};
    snprintf(p->gpu, sizeof(p->gpu), "H100"); /* an alias: attach resolves it */
    snprintf(p->link, sizeof(p->link), "single");
    snprintf(p->source, sizeof(p->source), "test");
    p->gpus = 1;
    /* out of order on purpose: finish sorts */
    for (int k = 1; k >= 0; k--)
        for (size_t hi = 0; hi < 2; hi++)
            for (size_t ti = 0; ti < 2; ti++)
                for (size_t mi = 0; mi < 3; mi++) {
                    tsl_profile_block_t *b = &p->blocks[p->n_blocks++];
                    double h = hs[hi], s = 1024, mb = mbs[mi], tp = tps[ti];
                    b->kind = (tsl_profile_block_kind_t)k;
                    b->hidden = hs[hi];
                    b->seq_len = 1024;
                    b->heads = hs[hi] / 64;
                    b->head_dim = 64;
                    b->ffn_hidden = 4 * hs[hi];
                    b->mb = mbs[mi];
                    b->tp = tps[ti];
                    b->fwd_flops =
                        k == TSL_PROFILE_FFN ? ffn_flops(h, s, mb, tp) : attn_flops(h, s, mb, tp);
                    double r = model_rate(k, mb * s, tp) * speed;
                    b->fwd_s = b->fwd_flops / r;
                    b->bwd_s = 2 * b->fwd_flops / (0.9 * r);
                }
    tsl_err_t err = {0};
    if (tsl_profile_finish(p, &err) != 0) {
        fprintf(stderr, "finish: %s\n", err.msg);
        exit(1);
    }
    return p;
}

static void test_finish(void)
{
    tsl_profile_t *p = make_profile(1.0);
    for (uint32_t i = 1; i < p->n_blocks; i++)
        CHECK(p->blocks[i - 1].kind < p->blocks[i].kind ||
                  (p->blocks[i - 1].kind == p->blocks[i].kind &&
                   (p->blocks[i - 1].hidden < p->blocks[i].hidden ||
                    (p->blocks[i - 1].hidden == p->blocks[i].hidden &&
                     p->blocks[i - 1].tp <= p->blocks[i].tp))),
              "sorted at %u", i);
    tsl_err_t err = {0};
    p->blocks[3].fwd_s = 0;
    CHECK(tsl_profile_finish(p, &err) != 0 && strstr(err.msg, "fwd_s"), "%s", err.msg);
    p->blocks[3].fwd_s = 1;
    p->blocks[5].tp = 0;
    CHECK(tsl_profile_finish(p, &err) != 0 && strstr(err.msg, "tp"), "%s", err.msg);
    free(p);
}

static void test_interpolation(void)
{
    tsl_profile_t *p = make_profile(1.0);
    double f, b;
    /* exact at a measured point */
    CHECK(tsl_profile_block_rate(p, TSL_PROFILE_FFN, 1024, 4096, 1, &f, &b) == 0, "found");
    CHECK_NEAR(f, model_rate(TSL_PROFILE_FFN, 4096, 1), 1e-12, "exact fwd %g", f);
    CHECK_NEAR(b, 0.9 * model_rate(TSL_PROFILE_FFN, 4096, 1), 1e-12, "exact bwd %g", b);
    /* log-midpoint of 1024 and 4096 tokens: the mean of the two rates */
    tsl_profile_block_rate(p, TSL_PROFILE_FFN, 1024, 2048, 1, &f, &b);
    double want = 0.5 * (model_rate(1, 1024, 1) + model_rate(1, 4096, 1));
    CHECK_NEAR(f, want, 1e-12, "between: %g vs %g", f, want);
    /* below the smallest: the smallest's time (rate ∝ tokens) */
    tsl_profile_block_rate(p, TSL_PROFILE_FFN, 1024, 512, 1, &f, &b);
    CHECK_NEAR(f, 0.5 * model_rate(1, 1024, 1), 1e-12, "below: %g", f);
    /* above the largest: the largest's rate */
    tsl_profile_block_rate(p, TSL_PROFILE_FFN, 1024, 1 << 20, 1, &f, &b);
    CHECK_NEAR(f, model_rate(1, 16384, 1), 1e-12, "above: %g", f);
    /* TP 2 between measured 1 and 4: log-midpoint, the mean */
    tsl_profile_block_rate(p, TSL_PROFILE_ATTENTION, 1024, 4096, 2, &f, &b);
    want = 0.5 * (model_rate(0, 4096, 1) + model_rate(0, 4096, 4));
    CHECK_NEAR(f, want, 1e-12, "tp 2: %g vs %g", f, want);
    /* TP 8, beyond the measured 4: TP 4's */
    tsl_profile_block_rate(p, TSL_PROFILE_ATTENTION, 1024, 4096, 8, &f, &b);
    CHECK_NEAR(f, model_rate(0, 4096, 4), 1e-12, "tp 8 clamps: %g", f);
    /* hidden: the nearest in ratio (1500 is nearer 2048 than 1024) */
    double f1024, f2048;
    tsl_profile_block_rate(p, TSL_PROFILE_FFN, 1024, 4096, 1, &f1024, &b);
    tsl_profile_block_rate(p, TSL_PROFILE_FFN, 2048, 4096, 1, &f2048, &b);
    tsl_profile_block_rate(p, TSL_PROFILE_FFN, 1100, 4096, 1, &f, &b);
    CHECK(f == f1024, "1100 → 1024");
    tsl_profile_block_rate(p, TSL_PROFILE_FFN, 1500, 4096, 1, &f, &b);
    CHECK(f == f2048, "1500 → 2048");
    tsl_profile_block_rate(p, TSL_PROFILE_FFN, 8192, 4096, 1, &f, &b);
    CHECK(f == f2048, "8192 → 2048 (largest)");
    /* bad input, missing kind */
    CHECK(tsl_profile_block_rate(p, TSL_PROFILE_FFN, 0, 4096, 1, &f, &b) == -1, "h 0");
    CHECK(tsl_profile_block_rate(p, TSL_PROFILE_FFN, 1024, 0, 1, &f, &b) == -1, "no tokens");
    p->n_blocks = 12; /* the attention blocks only (sorted first) */
    CHECK(tsl_profile_block_rate(p, TSL_PROFILE_FFN, 1024, 4096, 1, &f, &b) == -1, "no ffn");
    free(p);
}

static tsl_layer_t gpt_layer(void)
{
    tsl_layer_t l = gpt2_medium(1024);
    tsl_err_t err = {0};
    tsl_layer_derive(&l, &err);
    return l;
}

static void test_layer(void)
{
    tsl_profile_t *p = make_profile(1.0);
    tsl_layer_t l = gpt_layer();
    double f, b;
    /* at a measured shape: the sum of the measured attention and FFN blocks,
     * up to the biases the model counts in fwd_flops (none here: FLOPs only) */
    tsl_profile_layer_s(p, &l, 4, 1, 1e15, &f, &b);
    double fa = attn_flops(1024, 1024, 4, 1) / model_rate(0, 4096, 1);
    double ff = ffn_flops(1024, 1024, 4, 1) / model_rate(1, 4096, 1);
    CHECK_NEAR(f, fa + ff, 1e-9, "layer fwd %g vs %g", f, fa + ff);
    CHECK_NEAR(b, (fa + ff) * 2 / 0.9, 1e-9, "layer bwd %g", b);
    /* an FFN-only layer is all FFN rate; a head at the FFN rate */
    tsl_layer_t ffn = {.kind = TSL_LAYER_FFN, .seq_len = 1024, .hidden = 1024, .ffn_hidden = 4096};
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&ffn, &err) == 0, "%s", err.msg);
    tsl_profile_layer_s(p, &ffn, 4, 1, 1e15, &f, &b);
    CHECK_NEAR(f, ffn.fwd_flops * 4 / model_rate(1, 4096, 1), 1e-9, "ffn layer");
    /* no FFN blocks: the fallback rate prices them */
    p->n_blocks = 12;
    tsl_profile_layer_s(p, &ffn, 4, 1, 1e15, &f, &b);
    CHECK_NEAR(f, ffn.fwd_flops * 4 / 1e15, 1e-9, "fallback %g", f);
    CHECK_NEAR(b, 2 * f, 1e-12, "fallback bwd = 2 fwd");
    free(p);
}

/* An importer's whole-layer time (tsl_profile_add_layer) splits the layer's forward
 * FLOPs as tsl_profile_layer_s charges them: fwd_flops, which holds extra_fwd_flops
 * (model.h). Counting the extra again (profile.c until cost model 180) overstated the
 * attention block's FLOPs, so its rate, and a layer with extra FLOPs (Gemma's soft-cap
 * and sandwich norms) priced under its measured time. */
static void test_add_layer_extra(void)
{
    tsl_profile_t *p = calloc(1, sizeof(*p));
    tsl_layer_t l = gpt_layer();
    tsl_err_t err = {0};
    l.extra_fwd_flops = 0.25 * l.fwd_flops;
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    snprintf(p->gpu, sizeof(p->gpu), "H100");
    tsl_profile_add_layer(p, &l, 4, 2, 0.01);
    CHECK(p->n_blocks == 2, "attention and FFN blocks: %u", p->n_blocks);
    CHECK_NEAR(p->blocks[0].fwd_flops + p->blocks[1].fwd_flops, l.fwd_flops * 4 / 2, 1e-12,
               "the blocks' FLOPs are the layer's fwd_flops");
    CHECK(tsl_profile_finish(p, &err) == 0, "%s", err.msg);
    double f, b;
    tsl_profile_layer_s(p, &l, 4, 2, 1e15, &f, &b);
    CHECK_NEAR(f, 0.01, 1e-9, "the measured layer prices at its time: %g s", f);
    CHECK_NEAR(b, 0.02, 1e-9, "backward twice: %g s", b);
    free(p);
}

static void test_attach(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    tsl_profile_use_t use;
    CHECK(tsl_cluster_parse_spec(&c, "2xH100-80G", &err) == 0, "%s", err.msg);
    tsl_profile_t *p = make_profile(1.0);
    char line[256];
    tsl_profile_describe(NULL, NULL, line, sizeof(line));
    CHECK(strstr(line, "built-in") != NULL, "%s", line);
    CHECK(tsl_profile_for_block(&c, 0, 2) == NULL, "no profile yet");
    double k0 = c.overlap_slowdown, intra0 = c.nodes[0].intra_bw;
    CHECK(tsl_profile_attach(&c, p, &use, &err) == 0, "%s", err.msg);
    CHECK(use.compute && !use.pcie && !use.intra && !use.overlap, "only compute measured");
    CHECK(c.overlap_slowdown == k0 && c.nodes[0].intra_bw == intra0, "the rest built-in");
    /* efficiency: the FFN block with the most work at TP 1 (h 2048, mb 16) */
    CHECK_NEAR(use.efficiency_after, model_rate(1, 16384, 1) / 989e12, 1e-9, "eff %g",
               use.efficiency_after);
    CHECK(use.efficiency_before == 0.695,
          "built-in e_max 0.695 (cluster_hw.c, the sustained clock)");
    CHECK(tsl_profile_for_block(&c, 0, 2) == p && tsl_profile_for_block(&c, 1, 1) == p, "block");
    tsl_profile_describe(p, &use, line, sizeof(line));
    CHECK(strstr(line, "compute measured (test") && strstr(line, "overlap built-in"), "%s", line);
    tsl_cluster_free(&c);

    /* measured bandwidths and a NCCL overlap factor replace the built-in ones */
    p->h2d_bw = 55e9;
    p->d2h_bw = 54e9;
    p->intra_busbw = 400e9;
    p->intra_group = 2;
    p->overlap_slowdown = 1.2;
    CHECK(tsl_cluster_parse_spec(&c, "2xH100", &err) == 0, "%s", err.msg);
    CHECK(tsl_profile_attach(&c, p, &use, &err) == 0, "%s", err.msg);
    CHECK(use.pcie && use.intra && use.overlap, "all measured");
    CHECK(c.gpu_types[0].pcie_bw == 54e9 && c.nodes[0].intra_bw == 400e9 &&
              c.overlap_slowdown == 1.2,
          "figures replaced");
    /* the all-to-all keeps the part's ratio to the ring on the measured figure: NCCL's
     * all-to-all over its ring all-reduce, 320 / 370 on H100 (cluster_hw.c) */
    CHECK_NEAR(tsl_cluster_dim_a2a_busbw(&c, 0, 2, 1, 2, NULL), 400e9 * 320 / 370, 1e-3,
               "measured 400 GB/s ring: all-to-all %g",
               tsl_cluster_dim_a2a_busbw(&c, 0, 2, 1, 2, NULL));
    tsl_cluster_t copy;
    CHECK(tsl_cluster_copy(&copy, &c, &err) == 0 && copy.gpu_profile[0] == p, "copy keeps it");
    tsl_cluster_free(&copy);
    tsl_cluster_free(&c);

    /* another GPU type: refused, and the cluster is unchanged */
    CHECK(tsl_cluster_parse_spec(&c, "4xA100-40G", &err) == 0, "%s", err.msg);
    CHECK(tsl_profile_attach(&c, p, &use, &err) == -1 && tsl_err_code(&err) == TSL_E_PRECONDITION &&
              strstr(err.msg, "H100"),
          "%s", err.msg);
    CHECK(c.gpu_profile[0] == NULL, "not attached");
    tsl_cluster_free(&c);
    free(p);
}

/* The cost model takes the profile's block times; twice as fast blocks halve
 * compute, and so the search's predicted iteration time on one GPU. */
static void test_cost_and_search(void)
{
    tsl_cluster_t c, c2;
    tsl_err_t err = {0};
    tsl_profile_use_t use;
    tsl_profile_t *p = make_profile(1.0), *p2 = make_profile(2.0);
    CHECK(tsl_cluster_parse_spec(&c, "1xH100-80G", &err) == 0, "%s", err.msg);
    CHECK(tsl_cluster_parse_spec(&c2, "1xH100-80G", &err) == 0, "%s", err.msg);
    tsl_layer_t l = gpt_layer();
    tsl_strategy_t s = {0};
    tsl_cost_env_t env;
    tsl_layer_cost_t builtin, measured, fast;
    CHECK(tsl_cost_env_init(&env, &c, 0, 1, &err) == 0 && env.profile == NULL, "%s", err.msg);
    tsl_cost_layer(&env, &l, &s, NULL, 4, &builtin);
    /* built-in: the roofline (roofline.h), never below the FLOPs at peak x efficiency */
    CHECK(builtin.fwd_s >= l.fwd_flops * 4 / (989e12 * 0.5) * (1 - 1e-9),
          "built-in: %g s, not below peak x eff", builtin.fwd_s);
    CHECK(tsl_profile_attach(&c, p, &use, &err) == 0 &&
              tsl_profile_attach(&c2, p2, &use, &err) == 0,
          "%s", err.msg);
    CHECK(tsl_cost_env_init(&env, &c, 0, 1, &err) == 0 && env.profile == p, "env has it");
    tsl_cost_layer(&env, &l, &s, NULL, 4, &measured);
    double fwd, bwd;
    tsl_profile_layer_s(p, &l, 4, 1, env.device_flops, &fwd, &bwd);
    CHECK_NEAR(measured.fwd_s, fwd, 1e-12, "cost fwd = profile %g vs %g", measured.fwd_s, fwd);
    CHECK_NEAR(measured.bwd_s, bwd, 1e-12, "cost bwd = profile");
    CHECK(fabs(measured.fwd_s - builtin.fwd_s) > 1e-3 * builtin.fwd_s, "differs from built-in");
    CHECK(tsl_cost_env_init(&env, &c2, 0, 1, &err) == 0, "%s", err.msg);
    tsl_cost_layer(&env, &l, &s, NULL, 4, &fast);
    CHECK_NEAR(fast.fwd_s, measured.fwd_s / 2, 1e-12, "2x faster blocks: half the forward");
    CHECK_NEAR(fast.compute_s, measured.compute_s / 2, 1e-12, "and half the compute");

    tsl_model_t m;
    CHECK(tsl_model_preset("GPT2-345M", &m, &err) == 0, "%s", err.msg);
    tsl_request_t r;
    tsl_request_init(&r);
    r.global_batch = 16;
    r.no_baselines = true;
    tsl_search_result_t *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
    CHECK(tsl_search(&m, &c, &r, NULL, a, &err) == TSL_SEARCH_OK, "%s", err.msg);
    CHECK(tsl_search(&m, &c2, &r, NULL, b, &err) == TSL_SEARCH_OK, "%s", err.msg);
    double ratio = b->best.iter_time_s / a->best.iter_time_s;
    CHECK(ratio > 0.45 && ratio < 0.55, "iteration time ratio %g (want ~0.5)", ratio);
    free(a);
    free(b);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
    tsl_cluster_free(&c2);
    free(p);
    free(p2);
}

int main(void)
{
    test_finish();
    test_interpolation();
    test_layer();
    test_add_layer_extra();
    test_attach();
    test_cost_and_search();
    return CHECK_DONE();
}

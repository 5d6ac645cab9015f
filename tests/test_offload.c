/*
 * test_offload.c — activation CPU offloading (planner/offload.h): TransformerEngine's
 * schedule by hand, and through eval the memory an offloaded layer leaves and the
 * time its copies add, with Megatron-LM's refusals named.
 */
#include <math.h>
#include <string.h>

#include "check.h"
#include "cost.h"
#include "layer_dense.h"
#include "eval.h"
#include "offload.h"
#include "search.h"
#include "tiny_hybrid.h"

#define EPS 1e-12

static void uniform(tsl_offload_layer_t *l, uint32_t L, uint32_t N, double f, double b, double c)
{
    for (uint32_t i = 0; i < L; i++)
        l[i] = (tsl_offload_layer_t){f, b, i < N ? c : 0.0, i < N ? c : 0.0};
}

/* The schedule by hand (offload.h). Copy i leaves as layer i + 1's forward starts,
 * must be done before layer L − N + i's; its reload starts with layer L − 1 − N + i's
 * backward and layer i's backward waits for it; one copy stream. */
static void test_schedule_by_hand(void)
{
    tsl_offload_layer_t l[80];
    /* TE's Figure 3: L 5, N 2, copies shorter than a layer: nothing waits */
    uniform(l, 5, 2, 1.0, 2.0, 0.5);
    CHECK(fabs(tsl_offload_exposed_s(l, 5, 2)) < EPS, "L 5, N 2: hidden");
    /* TE's Figure 4: L 5, N 3, f 1, b 2, copies 1.5. Forward: copy 0 runs 1–2.5,
     * copy 1 2.5–4, copy 2 4–5.5; layer 2 waits for copy 0 (2 → 2.5), layer 3 for
     * copy 1 (3.5 → 4), layer 4 for copy 2 (5 → 5.5): 1.5 s. Backward: the reloads
     * start at layers 3, 2, 1 (8.5, 10.5, 12.5) and end at 10, 12, 14, each before
     * its layer's backward (10.5, 12.5, 14.5): none. */
    uniform(l, 5, 3, 1.0, 2.0, 1.5);
    CHECK_NEAR(tsl_offload_exposed_s(l, 5, 3), 1.5, EPS, "L 5, N 3: %.6f",
               tsl_offload_exposed_s(l, 5, 3));
    /* L 4, N 2, f = b = 1, copies 3 (slower than a layer both ways): forward waits
     * 4 − 2 and 7 − 5, backward 12 − 10 and 15 − 13: 4c − 2f − 2b = 8 s */
    uniform(l, 4, 2, 1.0, 1.0, 3.0);
    CHECK_NEAR(tsl_offload_exposed_s(l, 4, 2), 8.0, EPS, "L 4, N 2, slow link: %.6f",
               tsl_offload_exposed_s(l, 4, 2));
    /* the row's shape: 80 layers, 40 offloaded, a copy (10 ms) under a forward (13 ms) */
    uniform(l, 80, 40, 0.013, 0.026, 0.010);
    CHECK(fabs(tsl_offload_exposed_s(l, 80, 40)) < EPS, "80/40: hidden");
    /* copies of 1.5 forwards still hide: the 40 serial copies (0.78 s) end before
     * layer 79's forward (1.03 s), and the reloads (0.039 s) outlast no backward */
    uniform(l, 80, 40, 0.013, 0.026, 0.0195);
    CHECK(fabs(tsl_offload_exposed_s(l, 80, 40)) < EPS, "80/40, 1.5x: %.6f",
          tsl_offload_exposed_s(l, 80, 40));
    /* at 3 forwards the copy stream binds: copy 39 ends at f + 40c = 1.573 s, where
     * layer 79 would start at 79f = 1.027 s: 40c − 78f = 0.546 s; the reloads (40c =
     * 1.56 s from layer 78's backward) end before layer 0's (39b + 39b = 2.03 s) */
    uniform(l, 80, 40, 0.013, 0.026, 0.039);
    CHECK_NEAR(tsl_offload_exposed_s(l, 80, 40), 40 * 0.039 - 78 * 0.013, 1e-9, "80/40, 3x: %.6f",
               tsl_offload_exposed_s(l, 80, 40));
    /* ... not at 78 of 80, where a copy has one layer's forward to hide under */
    uniform(l, 80, 78, 0.013, 0.026, 0.039);
    CHECK(tsl_offload_exposed_s(l, 80, 78) > 1.0, "80/78, 3x: %.6f",
          tsl_offload_exposed_s(l, 80, 78));
    CHECK(tsl_offload_exposed_s(l, 80, 0) == 0.0 && tsl_offload_exposed_s(l, 4, 4) == 0.0,
          "none offloaded, or all (not run): 0");
}

/* n encoder layers (h 1024, FFN 4h, 16 heads, sequence 512). */
static void encoders(tsl_model_t *m, uint32_t n)
{
    tsl_err_t err;
    tsl_layer_t l = gpt2_medium(512);
    tsl_model_init(m, "encoders");
    if (tsl_model_add_n(m, &l, n, &err) != 0) {
        fprintf(stderr, "setup: %s\n", err.msg);
        exit(2);
    }
}

/* A small hybrid (Megatron's hybrid_layer_pattern "M*-M-"): 5 blocks. */
static void hybrid(tsl_model_t *m)
{
    tsl_err_t err;
    if (tiny_hybrid_build("M*-M-", m, &err) != 0) {
        fprintf(stderr, "setup: %s\n", err.msg);
        exit(2);
    }
}

static void refusals(void)
{
    tsl_err_t err = {0};
    static tsl_model_t m;
    encoders(&m, 80);
    CHECK(tsl_offload_check(0, &m, 8, true, &err) == 0, "none: anything goes");
    CHECK(tsl_offload_check(40, &m, 1, false, &err) == 0, "40 of 80: %s", err.msg);
    CHECK(tsl_offload_check(80, &m, 1, false, &err) == -1 &&
              strstr(err.msg, "cpu_offload_layers: 80 of the model's 80"),
          "all: %s", err.msg);
    CHECK(tsl_offload_check(4, &m, 2, false, &err) == -1 &&
              strstr(err.msg, "cpu_offload_layers: with pipeline parallelism (pp 2)"),
          "pp: %s", err.msg);
    CHECK(tsl_offload_check(4, &m, 1, true, &err) == -1 &&
              strstr(err.msg, "cpu_offload_layers: with activation recompute"),
          "recompute: %s", err.msg);
    /* a hybrid: its 5 blocks are layers as Megatron counts them (the embedding and
     * head not), but its stack never enters TE's offload context: refused as a
     * hybrid, not as "N of the model's 0 Transformer layers" */
    tsl_model_free(&m);
    hybrid(&m);
    CHECK(tsl_offload_blocks(&m) == 5, "hybrid blocks %u", tsl_offload_blocks(&m));
    CHECK(tsl_offload_check(0, &m, 1, false, &err) == 0, "hybrid, none offloaded");
    CHECK(tsl_offload_check(2, &m, 1, false, &err) == -1 &&
              strstr(err.msg, "cpu_offload_layers: tiny-hybrid is a hybrid (Mamba) model") &&
              !strstr(err.msg, "of the model's"),
          "hybrid: %s", err.msg);
    tsl_model_free(&m);
}

/* Four encoder layers (h 1024, FFN 4h, 16 heads, sequence 512) on one H100-80G. */
static void four_layers(tsl_model_t *m)
{
    tsl_err_t err;
    tsl_layer_t l = gpt2_medium(512);
    tsl_model_init(m, "four-layers");
    for (int i = 0; i < 4; i++)
        if (tsl_model_add(m, &l, &err) != 0) {
            fprintf(stderr, "setup: %s\n", err.msg);
            exit(2);
        }
}

static void given(tsl_plan_t *g, const char *strategy)
{
    tsl_err_t err;
    tsl_plan_init(g);
    g->pp = 1;
    g->n_layers = 4;
    g->micro_batch = 8;
    g->n_micro = 2;
    g->global_batch = 16;
    for (uint32_t i = 0; i < 4; i++)
        CHECK(tsl_strategy_parse(strategy, &g->layer[i], &err) == 0, "%s", err.msg);
}

/* Through eval: with layers 0 and 1 offloaded the stage's peak drops by exactly their
 * two one-micro-batch stashes (O_f of the layer, tsl_cost_layer); the iteration grows
 * by m × the schedule's waits, which on the H100's host link (48 GB/s: PCIe gen5 x16
 * × 0.78) are those of the slow-link case above, 4c − 2f − 2b per micro-batch, c the
 * stash over 48 GB/s and f, b the layer's forward and backward. */
static void test_eval_by_hand(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    tsl_request_t r;
    tsl_plan_t g, plain, off;
    four_layers(&m);
    CHECK(tsl_cluster_parse_spec(&c, "1xH100-80G", &err) == 0, "%s", err.msg);
    tsl_request_init(&r);
    given(&g, "single");
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &plain, &err) == 0, "plain: %s", err.msg);
    r.cpu_offload_layers = 2;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &off, &err) == 0, "offload 2: %s", err.msg);

    tsl_cost_env_t env;
    tsl_layer_cost_t lc;
    CHECK(tsl_cost_env_init(&env, &c, 0, 1, &err) == 0, "%s", err.msg);
    tsl_cost_layer(&env, &m.layers[0], &g.layer[0], NULL, 8, &lc);
    CHECK(lc.feasible && lc.bwd_bytes == 0, "the layer's costs");
    CHECK(plain.peak_bytes - off.peak_bytes == 2 * lc.fwd_bytes, "peak: %llu - %llu = 2 x %llu",
          (unsigned long long)plain.peak_bytes, (unsigned long long)off.peak_bytes,
          (unsigned long long)lc.fwd_bytes);
    CHECK(off.cpu_offload_layers == 2 && off.cpu_offload_bytes == 2 * lc.fwd_bytes,
          "host bytes: %llu", (unsigned long long)off.cpu_offload_bytes);

    double f = lc.fwd_s, b = lc.bwd_s, cp = (double)lc.fwd_bytes / 48e9;
    CHECK(cp > f && cp > b, "the copy (%.3g s) outlasts a layer (%.3g, %.3g)", cp, f, b);
    double wait = 4 * cp - 2 * f - 2 * b;
    CHECK_NEAR(off.cpu_offload_s, 2 * wait, 1e-9, "waits: %.9f, by hand %.9f", off.cpu_offload_s,
               2 * wait);
    CHECK_NEAR(off.iter_time_s - plain.iter_time_s, 2 * wait, 1e-9, "iteration: +%.9f",
               off.iter_time_s - plain.iter_time_s);

    /* Megatron-LM's refusals, through eval: all four layers, full recompute */
    r.cpu_offload_layers = 4;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &off, &err) == -1 &&
              strstr(err.msg, "eval: cpu_offload_layers: 4 of the model's 4"),
          "all four: %s", err.msg);
    r.cpu_offload_layers = 1;
    given(&g, "single+ckpt");
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &off, &err) == -1 &&
              strstr(err.msg, "cpu_offload_layers: with activation recompute"),
          "ckpt: %s", err.msg);
    /* the given plan's field is read when the request has none */
    r.cpu_offload_layers = 0;
    given(&g, "single");
    g.cpu_offload_layers = 2;
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &off, &err) == 0 && off.cpu_offload_layers == 2 &&
              plain.peak_bytes - off.peak_bytes == 2 * lc.fwd_bytes,
          "the plan's own: %s", err.msg);
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

/* The host must hold what the node's devices offload (tsl_offload_host_check): eval
 * refuses a plan whose stashes do not fit, and the search holds its plans to the same
 * test, so it never returns one eval would refuse. */
static void test_host_memory(void)
{
    static tsl_search_result_t res;
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    tsl_request_t r;
    tsl_plan_t g, off;
    four_layers(&m);
    CHECK(tsl_cluster_parse_spec(&c, "1xH100-80G", &err) == 0, "%s", err.msg);
    tsl_request_init(&r);
    r.cpu_offload_layers = 2;
    r.global_batch = 16;
    r.pp = 1;
    given(&g, "single");
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &off, &err) == 0 && off.cpu_offload_bytes > 0, "%s",
          err.msg);
    CHECK(tsl_search(&m, &c, &r, NULL, &res, &err) == TSL_SEARCH_OK &&
              res.best.cpu_offload_bytes > 0,
          "search with room: %s", err.msg);
    /* one byte short of the given plan's stash, and of the search's */
    uint64_t need = off.cpu_offload_bytes < res.best.cpu_offload_bytes ? off.cpu_offload_bytes
                                                                       : res.best.cpu_offload_bytes;
    c.nodes[0].cpu_mem_bytes = need - 1;
    CHECK(tsl_offload_host_check(&c, &off, &err) == -1 && tsl_err_code(&err) == TSL_E_NOFIT &&
              strstr(err.msg, "cpu_offload_layers 2: node 0's 1 devices offload"),
          "the shared test: %s", err.msg);
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &off, &err) == -1 &&
              strstr(err.msg, "eval: cpu_offload_layers 2: node 0's"),
          "eval: %s", err.msg);
    int rc = tsl_search(&m, &c, &r, NULL, &res, &err);
    CHECK(rc == TSL_SEARCH_ERR || (res.best.cpu_offload_bytes <= need - 1 &&
                                   tsl_eval_plan(&m, &c, &r, &res.best, &off, &err) == 0),
          "the search returns no plan eval refuses: rc %d, %llu bytes offloaded", rc,
          (unsigned long long)res.best.cpu_offload_bytes);
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

int main(void)
{
    test_schedule_by_hand();
    refusals();
    test_eval_by_hand();
    test_host_memory();
    return CHECK_DONE();
}

/* Tests for planner/eval: a given plan's figures, refusals naming the reason,
 * and eval(search best) == search best. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "cost.h"
#include "eval.h"
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

/* One encoder layer: h, heads, FFN 4h, sequence 512. */
static void one_layer(tsl_model_t *m, uint32_t h, uint32_t heads)
{
    tsl_err_t err;
    tsl_layer_t l = {.kind = TSL_LAYER_ENCODER,
                     .seq_len = 512,
                     .hidden = h,
                     .ffn_hidden = 4 * h,
                     .heads = heads};
    tsl_model_init(m, "one-layer");
    if (tsl_model_add(m, &l, &err) != 0) {
        fprintf(stderr, "setup: %s\n", err.msg);
        exit(2);
    }
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

/* One layer on one GPU: Eq. 9 with P = 1 is (m − 1)·(fwd + bwd) + fwd + bwd_sync;
 * on one device there is no communication, so the backward is the two GEMMs per
 * forward GEMM (2·fwd), and the peak is 16 bytes per parameter plus one
 * micro-batch's stashed activations. */
static void test_one_layer_by_hand(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    one_layer(&m, 1024, 16);
    CHECK(tsl_cluster_parse_spec(&c, "1xA100-80G", &err) == 0, "%s", err.msg);
    tsl_request_t r;
    tsl_request_init(&r);
    tsl_plan_t g, out;
    given_plan(&g, 1, 1, "single", 2, 3);
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == 0, "one layer: %s", err.msg);

    tsl_cost_env_t env;
    tsl_layer_cost_t lc;
    tsl_cost_env_init(&env, &c, 0, 1, NULL);
    tsl_cost_layer(&env, &m.layers[0], &g.layer[0], NULL, 2, &lc);
    const tsl_layer_t *l = &m.layers[0];
    CHECK_NEAR(lc.bwd_s, 2.0 * lc.fwd_s, 1e-12, "backward is twice the forward on one GPU");
    CHECK(lc.bwd_sync_s == lc.bwd_s, "no gradient sync on one GPU");
    double iter = 2 * (lc.fwd_s + lc.bwd_s) + lc.fwd_s + lc.bwd_sync_s;
    CHECK_NEAR(out.iter_time_s, iter, 1e-12, "iteration %.9g s, by hand %.9g s", out.iter_time_s,
               iter);
    CHECK_NEAR(out.samples_per_s, 6.0 / iter, 1e-12, "throughput");
    CHECK(out.stages[0].ms_bytes == 16 * l->params, "model states %llu, by hand 16 x %llu",
          (unsigned long long)out.stages[0].ms_bytes, (unsigned long long)l->params);
    uint64_t act = 2 * (l->act_repl_bytes + l->act_shard_bytes);
    CHECK(out.stages[0].act_bytes == act, "activations %llu, by hand %llu",
          (unsigned long long)out.stages[0].act_bytes, (unsigned long long)act);
    CHECK(out.peak_bytes >= 16 * l->params + act, "peak below its parts");

    /* full checkpointing recomputes the forward in the backward: 3·fwd */
    given_plan(&g, 1, 1, "single+ckpt", 2, 3);
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == 0, "ckpt: %s", err.msg);
    CHECK_NEAR(out.stages[0].time_nosync_s, 4.0 * lc.fwd_s, 1e-12, "ckpt: fwd + 3 fwd");
    tsl_model_free(&m);
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

int main(void)
{
    test_sublayer();
    test_one_layer_by_hand();
    test_refusals();
    check_reproduces("BERT-Huge-32", "8xA100-40G", 32);
    check_reproduces("GPT2-1.3B", "2x4xV100-16G:ib100", 16);
    check_reproduces("GPT3-39B", "2x8xA100-80G:ib200", 32);
    return CHECK_DONE();
}

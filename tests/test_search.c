/* Tests for planner/search: Algorithm 1, baselines, determinism, hooks, errors. */
#include <stdatomic.h>
#include <string.h>

#include "check.h"
#include "search.h"
#include "sublayer.h"

static tsl_search_result_t res, res2;

static void load(const char *model, const char *cluster, tsl_model_t *m, tsl_cluster_t *c)
{
    tsl_err_t err;
    if (tsl_model_preset(model, m, &err) != 0 || tsl_cluster_parse_spec(c, cluster, &err) != 0) {
        fprintf(stderr, "setup %s on %s: %s\n", model, cluster, err.msg);
        exit(2);
    }
}

static int run(const char *model, const char *cluster, uint64_t mem_gib, uint32_t batch,
               tsl_search_result_t *out, tsl_err_t *err)
{
    tsl_model_t m;
    tsl_cluster_t c;
    load(model, cluster, &m, &c);
    tsl_request_t r;
    tsl_request_init(&r);
    r.mem_budget_bytes = mem_gib << 30;
    r.global_batch = batch;
    int rc = tsl_search(&m, &c, &r, NULL, out, err);
    if (rc == TSL_SEARCH_OK) {
        tsl_err_t verr = {0};
        CHECK(tsl_plan_validate(&out->best, &m, &c, &verr) == 0, "%s best plan invalid: %s",
              model, verr.msg);
        for (int b = 0; b < TSL_BASELINE_COUNT; b++)
            if (out->baseline[b].valid)
                CHECK(tsl_plan_validate(&out->baseline[b], &m, &c, &verr) == 0,
                      "%s baseline %s invalid: %s", model, tsl_baseline_name(b), verr.msg);
    }
    tsl_model_free(&m);
    tsl_cluster_free(&c);
    return rc;
}

/* With a fixed batch every baseline's space is inside Tessel's: Tessel must not lose. */
static void test_beats_baselines(void)
{
    tsl_err_t err = {0};
    int rc = run("BERT-Huge-32", "8xRTX-TITAN-24G", 16, 32, &res, &err);
    CHECK(rc == TSL_SEARCH_OK, "BERT-Huge-32 batch 32: %s", err.msg);
    int valid = 0;
    for (int b = 0; b < TSL_BASELINE_COUNT; b++) {
        const tsl_plan_t *p = &res.baseline[b];
        if (!p->valid)
            continue;
        valid++;
        CHECK(res.best.samples_per_s >= p->samples_per_s * 0.999,
              "baseline %s %.3f beats tessel %.3f", tsl_baseline_name(b), p->samples_per_s,
              res.best.samples_per_s);
        CHECK(p->global_batch == 32, "baseline %s changed the fixed batch to %u",
              tsl_baseline_name(b), p->global_batch);
    }
    CHECK(valid >= 3, "only %d baselines fit", valid);
    CHECK(res.best.global_batch == 32, "fixed batch not kept: %u", res.best.global_batch);
    CHECK(res.n_top >= 1 && res.top[0].samples_per_s == res.best.samples_per_s,
          "top[0] is not the best");
    for (uint32_t i = 1; i < res.n_top; i++)
        CHECK(res.top[i].samples_per_s <= res.top[i - 1].samples_per_s, "top-k not sorted at %u",
              i);
    CHECK(res.stats.dp_runs > 0 && res.stats.configs > 0, "no statistics");
}

/* GPT3-15B cannot be replicated per device: DP OOMs, Tessel shards or pipelines. */
static void test_large_model(void)
{
    tsl_err_t err = {0};
    int rc = run("GPT3-15B", "4x8xA100-80G:ib400", 80, 0, &res, &err);
    CHECK(rc == TSL_SEARCH_OK, "GPT3-15B on 32 GPUs: %s", err.msg);
    CHECK(!res.baseline[TSL_BASELINE_DP].valid, "pure DP of 15B params fitted 80 GB");
    CHECK(res.best.peak_bytes <= (80ull << 30), "peak %llu over budget",
          (unsigned long long)res.best.peak_bytes);
    bool split = res.best.pp > 1;
    for (uint32_t l = 0; l < res.best.n_layers && !split; l++)
        split = tsl_strategy_degree(&res.best.layer[l], TSL_DIM_TP) > 1 ||
                tsl_strategy_degree(&res.best.layer[l], TSL_DIM_SDP) > 1;
    CHECK(split, "the plan neither pipelines nor shards a 15B model");
}

/* The sweep finds a batch at least as good as any fixed power of two it passes. */
static void test_sweep_not_worse_than_fixed(void)
{
    tsl_err_t err = {0};
    CHECK(run("GPT2-345M", "8xA100-40G", 40, 0, &res, &err) == TSL_SEARCH_OK, "sweep: %s",
          err.msg);
    CHECK(run("GPT2-345M", "8xA100-40G", 40, 8, &res2, &err) == TSL_SEARCH_OK, "batch 8: %s",
          err.msg);
    CHECK(res.best.samples_per_s >= res2.best.samples_per_s * 0.999,
          "sweep %.2f below fixed batch 8 %.2f", res.best.samples_per_s, res2.best.samples_per_s);
}

static void test_memory_too_small(void)
{
    tsl_err_t err = {0};
    int rc = run("GPT3-65B", "8xA100-40G", 1, 0, &res, &err);
    CHECK(rc == TSL_SEARCH_ERR, "65B on 8 GPUs of 1 GiB returned %d", rc);
    CHECK(strncmp(err.msg, "memory:", 7) == 0, "error does not name the memory: %s", err.msg);
    CHECK(tsl_err_code(&err) == TSL_E_NOFIT, "no-fit error has code %s",
          tsl_errcode_name(tsl_err_code(&err)));
}

static void test_divisibility(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    load("BERT-Huge-32", "8xA100-80G", &m, &c);
    tsl_request_t r;
    tsl_request_init(&r);
    r.global_batch = 3;
    r.no_tp = r.no_pp = true;   /* only DP/SDP across 8: a batch of 3 cannot split */
    tsl_err_t err = {0};
    int rc = tsl_search(&m, &c, &r, NULL, &res, &err);
    CHECK(rc == TSL_SEARCH_ERR && strncmp(err.msg, "batch:", 6) == 0,
          "batch 3 over dp8: rc %d, %s", rc, err.msg);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

static void test_deterministic(void)
{
    tsl_err_t err;
    run("T5-512/4-32", "2x4xV100-16G:ib100", 16, 0, &res, &err);
    run("T5-512/4-32", "2x4xV100-16G:ib100", 16, 0, &res2, &err);
    CHECK(res.best.valid && res2.best.valid, "T5 plans missing: %s", err.msg);
    CHECK(res.best.iter_time_s == res2.best.iter_time_s &&
              res.best.global_batch == res2.best.global_batch && res.best.pp == res2.best.pp &&
              memcmp(res.best.layer, res2.best.layer, sizeof(res.best.layer)) == 0 &&
              memcmp(res.best.stages, res2.best.stages, sizeof(res.best.stages)) == 0,
          "two identical searches differ");
}

struct progress_log {
    int n;
    double last;
    bool monotone;
};

static void on_progress(void *ud, double f, const char *phase)
{
    struct progress_log *p = ud;
    (void)phase;
    if (f < p->last || f < 0 || f > 1)
        p->monotone = false;
    p->last = f;
    p->n++;
}

static void test_hooks(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    load("BERT-Huge-32", "8xA100-40G", &m, &c);
    tsl_request_t r;
    tsl_request_init(&r);
    struct progress_log log = {.monotone = true};
    tsl_search_hooks_t hooks = {.progress = on_progress, .progress_ud = &log};
    tsl_err_t err = {0};
    CHECK(tsl_search(&m, &c, &r, &hooks, &res, &err) == TSL_SEARCH_OK, "%s", err.msg);
    CHECK(log.n >= 3 && log.monotone && log.last == 1.0, "progress: %d calls, monotone %d, last %g",
          log.n, log.monotone, log.last);

    atomic_int cancel = 1;
    hooks.cancel = &cancel;
    CHECK(tsl_search(&m, &c, &r, &hooks, &res, &err) == TSL_SEARCH_CANCELLED,
          "cancel flag ignored");
    CHECK(tsl_err_code(&err) == TSL_E_CANCELLED, "cancelled search has code %s",
          tsl_errcode_name(tsl_err_code(&err)));
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

static void test_request_validation(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    load("GPT2-345M", "8xA100-40G", &m, &c);
    tsl_request_t r;
    tsl_err_t err = {0};
    tsl_request_init(&r);
    r.mem_budget_bytes = 100ull << 30;
    CHECK(tsl_request_validate(&r, &m, &c, &err) != 0 && strstr(err.msg, "memory"),
          "budget above device memory: %s", err.msg);
    tsl_request_init(&r);
    r.top_k = 99;
    CHECK(tsl_request_validate(&r, &m, &c, &err) != 0 && strstr(err.msg, "top_k"), "top_k: %s",
          err.msg);
    tsl_request_init(&r);
    r.no_dp = r.no_sdp = r.no_tp = r.no_pp = true;
    CHECK(tsl_request_validate(&r, &m, &c, &err) != 0, "all dimensions off accepted");

    char a[17], b[17];
    tsl_request_init(&r);
    tsl_request_fingerprint(&r, &m, &c, a);
    r.global_batch = 64;
    tsl_request_fingerprint(&r, &m, &c, b);
    CHECK(strcmp(a, b) != 0, "batch does not change the fingerprint");
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

/* GPT-3 175B on 64 A100-40G: the states alone overflow 40 GB in Galvatron's space;
 * H3T's switches and CPU offload make it fit (issue #3, part 4). */
static void test_memopt_fallback(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    load("GPT3-175B", "8x8xA100-40G:ib200", &m, &c);
    tsl_request_t r;
    tsl_request_init(&r);
    r.global_batch = 64;
    r.no_baselines = true;
    tsl_err_t err = {0};
    int rc = tsl_search(&m, &c, &r, NULL, &res, &err);
    CHECK(rc == TSL_SEARCH_OK, "GPT3-175B on 64xA100-40G: %s", err.msg);
    CHECK(res.best.memopt != 0, "the plan does not use memory switches");
    CHECK(res.best.peak_bytes <= (40ull << 30), "peak %llu over 40 GiB",
          (unsigned long long)res.best.peak_bytes);
    CHECK(res.best.cpu_bytes_per_node > 0 && res.best.cpu_bytes_per_node <= c.nodes[0].cpu_mem_bytes,
          "host memory %llu per node vs %llu available",
          (unsigned long long)res.best.cpu_bytes_per_node,
          (unsigned long long)c.nodes[0].cpu_mem_bytes);
    tsl_err_t verr = {0};
    CHECK(tsl_plan_validate(&res.best, &m, &c, &verr) == 0, "memopt plan invalid: %s", verr.msg);
    r.no_memopt = true;
    rc = tsl_search(&m, &c, &r, NULL, &res, &err);
    CHECK(rc == TSL_SEARCH_ERR && strncmp(err.msg, "memory:", 7) == 0,
          "without memopt 175B should not fit: rc %d %s", rc, err.msg);
    CHECK(tsl_err_code(&err) == TSL_E_NOFIT, "no-fit error has code %s",
          tsl_errcode_name(tsl_err_code(&err)));
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

/* AutoPipe's granularity and simulator inside the search. */
static void test_sublayer_and_simulator(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    load("GPT2-1.3B", "2x4xV100-16G:ib100", &m, &c);
    tsl_request_t r;
    tsl_request_init(&r);
    r.global_batch = 64;
    r.no_baselines = true;
    tsl_err_t err = {0};
    CHECK(tsl_search(&m, &c, &r, NULL, &res, &err) == TSL_SEARCH_OK, "%s", err.msg);
    r.no_sublayer = true;
    CHECK(tsl_search(&m, &c, &r, NULL, &res2, &err) == TSL_SEARCH_OK, "%s", err.msg);
    CHECK(!res2.best.sublayer, "--no-sublayer returned a sub-layer plan");
    CHECK(res.best.samples_per_s >= res2.best.samples_per_s,
          "sub-layer refinement made it slower: %.3f < %.3f", res.best.samples_per_s,
          res2.best.samples_per_s);
    tsl_err_t verr = {0};
    CHECK(tsl_plan_validate(&res.best, &m, &c, &verr) == 0, "plan invalid: %s", verr.msg);
    if (res.best.sublayer) {
        tsl_sublayer_model_t sm;
        CHECK(tsl_sublayer_split(&m, &sm, &err) == 0, "%s", err.msg);
        CHECK(res.best.n_layers == sm.model.n_layers, "sub-layer plan has %u blocks, split %u",
              res.best.n_layers, sm.model.n_layers);
        tsl_sublayer_free(&sm);
    }
    /* the simulator ran on the pipelined plan and agrees with Eq. 9 within 10% */
    if (res.best.pp > 1)
        CHECK(res.best.sim_iter_time_s > 0 &&
                  fabs(res.best.sim_iter_time_s - res.best.iter_time_s) <= 0.1 * res.best.iter_time_s,
              "simulated %.4f vs Eq. 9 %.4f", res.best.sim_iter_time_s, res.best.iter_time_s);
    if (res.best.n_sliced)
        CHECK(res.best.sliced_iter_time_s < res.best.sim_iter_time_s, "slicer made it slower");
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

int main(void)
{
    test_sublayer_and_simulator();
    test_memopt_fallback();
    test_request_validation();
    test_beats_baselines();
    test_large_model();
    test_sweep_not_worse_than_fixed();
    test_memory_too_small();
    test_divisibility();
    test_deterministic();
    test_hooks();
    return CHECK_DONE();
}

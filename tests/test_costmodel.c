/*
 * test_costmodel.c — the cost-model choices beyond the papers end to end through
 * tsl_search: TP feasibility holds in the plan, its alternatives and every
 * baseline; the roofline stops micro-batches of 1; each request switch keeps
 * its choice out of the plan. Calibration (calibrate.h): an identity calibration
 * gives the same plan, bit for bit; compute_scale, comm_scale and mem_scale
 * scale what they name, only in their token range; placement keeps them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "check.h"
#include "cost.h"
#include "layer_dense.h"
#include "profile.h"
#include "search.h"

/* Largest TP degree a transformer layer of p uses (0 for an empty plan); the
 * embedding and head may use any (vocabulary-parallel, padded). */
static uint32_t max_tp(const tsl_plan_t *p, const tsl_model_t *m)
{
    uint32_t most = 0;
    for (uint32_t i = 0; p->valid && i < p->n_layers && i < m->n_layers; i++) {
        uint32_t t = tsl_strategy_degree(&p->layer[i], TSL_DIM_TP);
        if (m->layers[i].kind == TSL_LAYER_ENCODER && t > most)
            most = t;
    }
    return most;
}

/* Whether any layer of p has the flag `what` ("sp", "zero", "sel", "ckpt"). */
static bool uses(const tsl_plan_t *p, const char *what)
{
    for (uint32_t i = 0; p->valid && i < p->n_layers; i++) {
        const tsl_strategy_t *s = &p->layer[i];
        if ((!strcmp(what, "sp") && s->sp) || (!strcmp(what, "zero") && s->zero) ||
            (!strcmp(what, "sel") && s->selective))
            return true;
    }
    return false;
}

static int run(const tsl_model_t *m, const char *spec, const tsl_request_t *r,
               tsl_search_result_t *res)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    if (tsl_cluster_parse_spec(&c, spec, &err) != 0) {
        CHECK(0, "%s", err.msg);
        return -1;
    }
    int rc = tsl_search(m, &c, r, NULL, res, &err);
    CHECK(rc == TSL_SEARCH_OK, "search on %s: %s", spec, err.msg);
    tsl_cluster_free(&c);
    return rc;
}

/* gpt2-xl's 25 heads: no TP degree of 2, 4 or 8 divides them: no plan may use TP there. */
static void test_tp_feasibility(tsl_search_result_t *res)
{
    tsl_arch_spec_t sp = {.arch = TSL_ARCH_GPT,
                          .layers = 12,
                          .hidden = 1600,
                          .ffn_hidden = 6400,
                          .heads = 25,
                          .seq_len = 1024,
                          .vocab = 50257,
                          .positions = 1024,
                          .tied_head = true};
    tsl_model_t m;
    tsl_err_t err = {0};
    CHECK(tsl_model_build(&sp, "gpt2-xl-12", &m, &err) == 0, "%s", err.msg);
    tsl_request_t r;
    tsl_request_init(&r);
    r.global_batch = 64;
    r.no_sublayer = true; /* plan layers = model layers */
    if (run(&m, "8xA100-80G", &r, res) == 0) {
        CHECK(max_tp(&res->best, &m) == 1, "best plan uses tp%u", max_tp(&res->best, &m));
        for (uint32_t i = 0; i < res->n_top; i++)
            CHECK(max_tp(&res->top[i], &m) == 1, "alternative %u uses TP", i);
        for (int b = 0; b < TSL_BASELINE_COUNT; b++)
            CHECK(max_tp(&res->baseline[b], &m) <= 1, "baseline %s uses tp%u", tsl_baseline_name(b),
                  max_tp(&res->baseline[b], &m));
        CHECK(!res->baseline[TSL_BASELINE_TP].valid,
              "pure TP has no plan: tp8 cannot split 25 heads");
    }
    tsl_model_free(&m);
}

/* GPT-2 345M, batch 16 on one H100: not 16 micro-batches of 1 (the roofline prices
 * the small GEMMs' memory traffic). */
static void test_micro_batch(tsl_search_result_t *res)
{
    tsl_model_t m;
    tsl_err_t err = {0};
    CHECK(tsl_model_preset("GPT2-345M", &m, &err) == 0, "%s", err.msg);
    tsl_request_t r;
    tsl_request_init(&r);
    r.global_batch = 16;
    r.no_baselines = true;
    if (run(&m, "1xH100-80G", &r, res) == 0)
        CHECK(res->best.micro_batch > 1, "micro-batch %u x %u", res->best.micro_batch,
              res->best.n_micro);
    tsl_model_free(&m);
}

/* Each switch keeps its choice out; the defaults use SP and ZeRO where they pay. */
static void test_switches(tsl_search_result_t *res)
{
    tsl_model_t m;
    tsl_err_t err = {0};
    CHECK(tsl_model_preset_seq("Llama2-7B", 2048, &m, &err) == 0, "%s", err.msg);
    tsl_request_t r;
    tsl_request_init(&r);
    r.global_batch = 32;
    r.no_baselines = true;
    r.no_dp = r.no_sdp = true; /* TP and PP only: SP is all that can differ */
    r.max_pp = 4; /* so TP at least 2 on 8 GPUs (cost model 119's cheaper loss makes PP 8 best) */
    if (run(&m, "8xA100-40G", &r, res) == 0)
        CHECK(uses(&res->best, "sp"), "TP levels come with SP by default");
    r.no_seq_par = true;
    if (run(&m, "8xA100-40G", &r, res) == 0)
        CHECK(!uses(&res->best, "sp"), "no_seq_par: no SP");
    tsl_request_init(&r);
    r.global_batch = 32;
    r.no_baselines = true;
    r.no_zero = true;
    if (run(&m, "8xA100-80G", &r, res) == 0)
        CHECK(!uses(&res->best, "zero"), "no_zero: no ZeRO-1/2");
    r.no_zero = false;
    if (run(&m, "8xA100-80G", &r, res) == 0)
        CHECK(!uses(&res->best, "sel"), "fused attention: no selective recomputation");
    tsl_model_free(&m);
}

/* ---- calibration (calibrate.h) ---- */

static tsl_layer_t enc_layer(uint32_t seq)
{
    tsl_layer_t l = gpt2_medium(seq);
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    return l;
}

static void layer_cost(tsl_cluster_t *c, const char *strategy, uint32_t seq, uint32_t mb,
                       tsl_layer_cost_t *out)
{
    tsl_err_t err = {0};
    tsl_strategy_t s;
    memset(&s, 0, sizeof(s));
    if (strategy != NULL) /* NULL: one device, no parallelism */
        CHECK(tsl_strategy_parse(strategy, &s, &err) == 0, "%s", err.msg);
    tsl_cost_env_t env;
    CHECK(tsl_cost_env_init(&env, c, 0, c->n_devices, &err) == 0, "%s", err.msg);
    tsl_layer_t l = enc_layer(seq);
    tsl_cost_layer(&env, &l, &s, NULL, mb, out);
}

/* compute_scale 2 in the range of 1024-token micro-batches doubles their compute
 * and nothing else; 16384 tokens (another range) keep theirs. */
static void test_calib_layer(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "1xH100-80G", &err) == 0, "%s", err.msg);
    tsl_layer_cost_t small0, big0, small1, big1;
    layer_cost(&c, NULL, 1024, 1, &small0);
    layer_cost(&c, NULL, 1024, 16, &big0);
    tsl_calib_t k;
    tsl_calib_identity(&k);
    k.compute_scale[0] = 2.0;
    k.mem_scale = 1.5;
    CHECK(tsl_cluster_set_calib(&c, "h100", &k, &err) == 0, "alias resolves: %s", err.msg);
    CHECK(tsl_cluster_set_calib(&c, "T4", &k, &err) == -1 && strstr(err.msg, "T4") != NULL,
          "a type the cluster lacks is refused, named: %s", err.msg);
    layer_cost(&c, NULL, 1024, 1, &small1);
    layer_cost(&c, NULL, 1024, 16, &big1);
    CHECK_NEAR(small1.compute_s, 2 * small0.compute_s, 1e-12, "range 0 compute doubled");
    CHECK_NEAR(small1.fwd_s, 2 * small0.fwd_s, 1e-12, "one device: forward is compute");
    CHECK(big1.compute_s == big0.compute_s && big1.fwd_s == big0.fwd_s, "other range unchanged");
    CHECK_NEAR((double)small1.fwd_bytes, 1.5 * (double)small0.fwd_bytes, 1e-6, "activations");
    CHECK_NEAR((double)big1.ms_bytes, 1.5 * (double)big0.ms_bytes, 1e-6, "model states");
    tsl_cluster_free(&c);

    /* comm_scale 3 triples the TP all-reduces, compute untouched */
    CHECK(tsl_cluster_parse_spec(&c, "2xA100-80G", &err) == 0, "%s", err.msg);
    tsl_calib_identity(&k);
    layer_cost(&c, "tp2", 2048, 4, &small0);
    k.comm_scale = 3.0;
    CHECK(tsl_cluster_set_calib(&c, "A100-80G", &k, &err) == 0, "%s", err.msg);
    layer_cost(&c, "tp2", 2048, 4, &small1);
    CHECK(small0.comm_s > 0, "tp2 communicates");
    CHECK_NEAR(small1.comm_s, 3 * small0.comm_s, 1e-12, "comm tripled");
    CHECK(small1.compute_s == small0.compute_s, "compute untouched");
    tsl_cluster_free(&c);
}

static int search_on(const tsl_model_t *m, tsl_cluster_t *c, tsl_search_result_t *res)
{
    tsl_request_t r;
    tsl_request_init(&r);
    r.global_batch = 16;
    r.no_baselines = true;
    tsl_err_t err = {0};
    int rc = tsl_search(m, c, &r, NULL, res, &err);
    CHECK(rc == TSL_SEARCH_OK, "search: %s", err.msg);
    return rc;
}

/* An identity calibration is no calibration: the same plan, bit for bit; a
 * uniform compute_scale of 2 on one GPU about doubles the iteration. */
static void test_calib_plan(tsl_search_result_t *res)
{
    tsl_model_t m;
    tsl_err_t err = {0};
    CHECK(tsl_model_preset("GPT2-345M", &m, &err) == 0, "%s", err.msg);
    tsl_search_result_t *base = malloc(sizeof(*base));
    tsl_cluster_t c;
    CHECK(base != NULL && tsl_cluster_parse_spec(&c, "2xH100-80G", &err) == 0, "%s", err.msg);
    if (base == NULL || search_on(&m, &c, base) != 0)
        goto out;
    tsl_calib_t k;
    tsl_calib_identity(&k);
    CHECK(tsl_cluster_set_calib(&c, "H100-80G", &k, &err) == 0, "%s", err.msg);
    if (search_on(&m, &c, res) == 0)
        CHECK(res->best.iter_time_s == base->best.iter_time_s &&
                  res->best.peak_bytes == base->best.peak_bytes &&
                  res->best.micro_batch == base->best.micro_batch && res->best.pp == base->best.pp,
              "identity: %.9g s vs %.9g s", res->best.iter_time_s, base->best.iter_time_s);
    tsl_cluster_t moved;
    uint16_t order[1] = {0};
    CHECK(tsl_cluster_permute(&c, order, &moved, &err) == 0 && moved.gpu_calib[0] == &k,
          "permute keeps the calibration");
    tsl_cluster_free(&moved);
    for (uint32_t i = 0; i < TSL_CALIB_RANGES; i++)
        k.compute_scale[i] = 2.0;
    if (search_on(&m, &c, res) == 0) {
        double ratio = res->best.iter_time_s / base->best.iter_time_s;
        CHECK(ratio > 1.5 && ratio <= 2.0 + 1e-9, "compute x2: iteration x%g", ratio);
    }
    tsl_profile_use_t use = {.calib = &k};
    char line[512];
    k.n_samples = 12;
    k.mae_before = 0.2;
    k.mae_after = 0.04;
    tsl_profile_describe(NULL, &use, line, sizeof(line));
    CHECK(strstr(line, "built-in") && strstr(line, "calibrated from 12 trials") &&
              strstr(line, "20.0% -> 4.0%"),
          "figures line says so: %s", line);
out:
    free(base);
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

int main(void)
{
    tsl_search_result_t *res = malloc(sizeof(*res));
    if (res == NULL)
        return 1;
    test_tp_feasibility(res);
    test_micro_batch(res);
    test_switches(res);
    test_calib_layer();
    test_calib_plan(res);
    free(res);
    return CHECK_DONE();
}

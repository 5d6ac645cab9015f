/*
 * test_costmodel.c — the issue-10 cost-model choices end to end through
 * tsl_search: TP feasibility holds in the plan, its alternatives and every
 * baseline; the roofline stops micro-batches of 1; each request switch keeps
 * its choice out of the plan.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
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

/* gpt2-xl's 25 heads: no TP degree of 2, 4 or 8 divides them (issue 10 repro). */
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

/* GPT-2 345M, batch 16 on one H100: not 16 micro-batches of 1 (issue 10 repro). */
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

int main(void)
{
    tsl_search_result_t *res = malloc(sizeof(*res));
    if (res == NULL)
        return 1;
    test_tp_feasibility(res);
    test_micro_batch(res);
    test_switches(res);
    free(res);
    return CHECK_DONE();
}

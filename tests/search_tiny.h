/*
 * search_tiny.h — the small GPT the searched-plan tests share and its search: the
 * executor's tests run the plans (test_exec.c) that the planner's tests price
 * (test_relayout.c), so both must mean the same model. Header-only so that its
 * CHECKs count in the including test (check.h keeps per-file counters).
 */
#ifndef TSL_TEST_SEARCH_TINY_H
#define TSL_TEST_SEARCH_TINY_H

#include <stdlib.h>

#include "check.h"
#include "search.h"

/* A small GPT (hidden 32, 4 heads, seq 8, vocabulary 64, learned positions, tied
 * head) of `layers` blocks. */
static inline void gpt_tiny_tied(tsl_model_t *m, uint32_t layers, bool tied)
{
    tsl_err_t err = {0};
    tsl_arch_spec_t spec = {.arch = TSL_ARCH_GPT,
                            .layers = layers,
                            .hidden = 32,
                            .ffn_hidden = 128,
                            .heads = 4,
                            .seq_len = 8,
                            .vocab = 64,
                            .positions = 8,
                            .tied_head = tied};
    CHECK(!tsl_model_build(&spec, "gpt-tiny", m, &err), "%s", err.msg);
}

static inline void gpt_tiny(tsl_model_t *m, uint32_t layers)
{
    gpt_tiny_tied(m, layers, true);
}

/* What the search returns for m on `cluster` (c set up, to free) under request rq.
 * The caller frees it. */
static inline tsl_search_result_t *search_req_on(const tsl_model_t *m, tsl_cluster_t *c,
                                                 const char *cluster, const tsl_request_t *rq)
{
    tsl_err_t err = {0};
    tsl_search_result_t *res = calloc(1, sizeof(*res));
    tsl_cluster_init(c);
    CHECK(res && !tsl_cluster_parse_spec(c, cluster, &err), "%s: %s", cluster, err.msg);
    CHECK(tsl_search(m, c, rq, NULL, res, &err) == TSL_SEARCH_OK, "search: %s", err.msg);
    return res;
}

/* The same at global batch `batch`; pp and top_k as the request's (0: searched, the
 * default). */
static inline tsl_search_result_t *search_on(const tsl_model_t *m, tsl_cluster_t *c,
                                             const char *cluster, uint32_t batch, uint32_t pp,
                                             uint32_t top_k)
{
    tsl_request_t rq;
    tsl_request_init(&rq);
    rq.global_batch = batch;
    rq.pp = pp;
    if (top_k)
        rq.top_k = top_k;
    return search_req_on(m, c, cluster, &rq);
}

#endif

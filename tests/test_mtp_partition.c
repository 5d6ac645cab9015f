/*
 * test_mtp_partition.c — the MTP depths stay on the output head's stage
 * (mtp.h, partition.h max_cut): every partitioner keeps its cuts at or before
 * the first MTP layer and still finds the best partition that does (by hand
 * and against brute force), the starting partitions, the enumeration and the
 * interleaved chunks do the same, and a search of a DeepSeek-V3-shaped model
 * returns only plans whose last stage holds every MTP layer.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "eval.h"
#include "mtp.h"
#include "partition.h"
#include "plan.h"
#include "search.h"
#include "search_internal.h"
#include "sublayer.h"

/* Eight layers of equal time 1, P = 3, the last four (an MTP depth's entry,
 * inner layer, head copy, and the head) on the last stage: max_cut = 4. Without
 * the bound the best split is 3 | 3 | 2 (max 3); with it the last stage starts
 * at 4 at the latest, so it holds 4 layers and the best is 3 | 1 | 4 (max 4; of
 * the ties, the latest cuts).
 * At m = 4 micro-batches T = (m − 1)·max + Σ = 3·4 + 8 = 20 (Eq. 9). */
static void test_by_hand(void)
{
    double t[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    uint64_t ms[8] = {0}, act[8] = {0};
    tsl_partition_in_t in = {.n_layers = 8,
                             .n_stages = 3,
                             .n_micro = 4,
                             .time_s = t,
                             .ms_bytes = ms,
                             .act_bytes = act,
                             .budget_bytes = TSL_PARTITION_NO_BUDGET};
    tsl_partition_ws_t *ws = tsl_partition_ws_new(8, 3);
    tsl_err_t err = {0};
    uint32_t first[4];
    tsl_partition_stats_t st;
    CHECK(tsl_partition_time_balanced(&in, ws, false, first, &st, &err) == TSL_PARTITION_OK &&
              st.max_time_s == 3 && first[2] == 6,
          "no bound: max %g, last stage at %u", st.max_time_s, first[2]);
    in.max_cut = 4;
    CHECK(tsl_partition_time_balanced(&in, ws, false, first, &st, &err) == TSL_PARTITION_OK &&
              st.max_time_s == 4 && first[2] == 4 && first[1] == 3, /* ties: the latest cuts */
          "max_cut 4: max %g, first %u %u", st.max_time_s, first[1], first[2]);
    CHECK(tsl_partition_memory_balanced(&in, ws, first, &st, &err) == 0 && first[2] <= 4,
          "memory-balanced: last stage at %u", first[2]);
    tsl_partition_amp_t amp;
    CHECK(tsl_partition_amp(&in, ws, false, &amp, &err) == TSL_PARTITION_OK && amp.first[2] == 4 &&
              amp.stats.pipeline_s == 20,
          "AMP: last stage at %u, T %g (want 4, 20)", amp.first[2], amp.stats.pipeline_s);
    tsl_partition_biobj_t bo;
    CHECK(tsl_partition_bi_objective(&in, ws, 0, true, &bo, &err) == 0 && bo.found &&
              bo.first[2] <= 4 && bo.pm_first[2] <= 4 && bo.pt_first[2] <= 4,
          "bi-objective: last stage at %u", bo.first[2]);
    /* Algorithm 2's move of the slowest (last) stage's first layer to stage 1
     * would cut after max_cut: refused, naming the bound */
    uint32_t p[4] = {0, 2, 4, 8}, next[4];
    tsl_partition_step_t step;
    CHECK(tsl_partition_adjust(&in, p, 4, UINT64_MAX, next, &step, &err) == 0 && !step.moved &&
              strstr(step.why, "max_cut"),
          "adjust: moved %d, %s", step.moved, step.why);
    /* a partition past the bound is named; so is a bound that leaves no room */
    uint32_t bad[4] = {0, 2, 5, 8};
    CHECK(tsl_partition_stats(&in, bad, &st, &err) == -1 && strstr(err.msg, "first[2]: 5"),
          "stats of a cut past max_cut: %s", err.msg);
    in.max_cut = 1;
    CHECK(tsl_partition_time_balanced(&in, ws, false, first, &st, &err) == TSL_PARTITION_ERR &&
              strstr(err.msg, "max_cut: 1"),
          "max_cut 1 for 3 stages: %s", err.msg);
    /* the enumeration: C(4, 2) = 6 partitions with both cuts in 1..4, of C(7, 2) = 21 */
    CHECK(tsl_partition_count(8, 4, 3) == 6 && tsl_partition_count(8, 0, 3) == 21 &&
              tsl_partition_count(8, 4, 6) == 0,
          "counts %u %u", tsl_partition_count(8, 4, 3), tsl_partition_count(8, 0, 3));
    uint32_t n = 0, ok = 0;
    tsl_partition_first(8, 3, first);
    do {
        n++;
        ok += first[2] <= 4 && first[3] == 8;
    } while (tsl_partition_next(8, 4, 3, first));
    CHECK(n == 6 && ok == 6, "enumerated %u, %u within the bound", n, ok);
    tsl_partition_ws_free(ws);
}

static double rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return ((*s >> 8) & 0xffff) / 65536.0;
}

/* Random costs: the bounded partitioners' optimum is the best of every legal
 * partition (brute force over the enumeration), and each keeps the bound. */
static void test_vs_brute(void)
{
    unsigned seed = 7;
    tsl_partition_ws_t *ws = tsl_partition_ws_new(12, 5);
    for (int trial = 0; trial < 200; trial++) {
        uint32_t L = 6 + trial % 7, P = 2 + trial % 4,
                 cut = P - 1 + (uint32_t)(rnd(&seed) * (L - P));
        double t[12], y[12], e[12];
        uint64_t ms[12], act[12];
        for (uint32_t l = 0; l < L; l++) {
            t[l] = 0.1 + rnd(&seed);
            y[l] = 0.05 * rnd(&seed);
            e[l] = 0.02 * rnd(&seed);
            ms[l] = (uint64_t)(1000 * rnd(&seed));
            act[l] = (uint64_t)(100 * rnd(&seed));
        }
        tsl_partition_in_t in = {.n_layers = L,
                                 .n_stages = P,
                                 .n_micro = 1 + trial % 8,
                                 .time_s = t,
                                 .sync_s = y,
                                 .p2p_s = e,
                                 .ms_bytes = ms,
                                 .act_bytes = act,
                                 .budget_bytes = TSL_PARTITION_NO_BUDGET,
                                 .max_cut = cut};
        double best_t = INFINITY, best_max = INFINITY;
        uint32_t f[6];
        tsl_partition_stats_t st;
        tsl_err_t err = {0};
        tsl_partition_first(L, P, f);
        do {
            tsl_partition_stats(&in, f, &st, &err);
            best_t = fmin(best_t, st.pipeline_s);
            best_max = fmin(best_max, st.max_time_s);
        } while (tsl_partition_next(L, cut, P, f));
        tsl_partition_amp_t amp;
        uint32_t tb[6];
        CHECK(tsl_partition_amp(&in, ws, false, &amp, &err) == TSL_PARTITION_OK &&
                  amp.first[P - 1] <= cut && fabs(amp.stats.pipeline_s - best_t) <= 1e-12 * best_t,
              "trial %d: AMP T %.17g, brute %.17g, last stage at %u (max_cut %u)", trial,
              amp.stats.pipeline_s, best_t, amp.first[P - 1], cut);
        CHECK(tsl_partition_time_balanced(&in, ws, false, tb, &st, &err) == TSL_PARTITION_OK &&
                  tb[P - 1] <= cut && st.max_time_s == best_max,
              "trial %d: time-balanced max %.17g, brute %.17g", trial, st.max_time_s, best_max);
    }
    tsl_partition_ws_free(ws);
}

/* A DeepSeek-V3-shaped model, small: MLA, a dense first layer, then MoE layers
 * (8 experts, top 2, one shared), one MTP depth. Layers: embedding 0, blocks
 * 1..6, the MTP entry 7, its MoE layer 8, the head copy 9, the head 10. */
static void dsv3_small(tsl_model_t *m)
{
    tsl_arch_spec_t sp;
    memset(&sp, 0, sizeof sp);
    sp.arch = TSL_ARCH_LLAMA;
    sp.layers = 6, sp.hidden = 1024, sp.heads = 16, sp.seq_len = 1024, sp.vocab = 32768;
    sp.ffn_hidden = 2816, sp.gated_ffn = true;
    sp.q_lora_rank = 384, sp.kv_lora_rank = 128, sp.qk_nope_dim = 64, sp.qk_rope_dim = 32;
    sp.v_head_dim = 64;
    sp.experts = 8, sp.experts_per_tok = 2, sp.moe_ffn_hidden = 512, sp.shared_experts = 1;
    sp.moe_layers[0] = 0x3e; /* layers 1..5 (0-based): the first dense */
    sp.mtp_layers = 1;
    tsl_err_t err = {0};
    CHECK(tsl_model_build(&sp, "dsv3-small", m, &err) == 0, "%s", err.msg);
}

static void test_model_partitions(void)
{
    tsl_model_t m;
    dsv3_small(&m);
    CHECK(m.n_layers == 11 && m.layers[7].kind == TSL_LAYER_MTP && tsl_partition_max_cut(&m) == 7,
          "%u layers, max_cut %u", m.n_layers, tsl_partition_max_cut(&m));
    uint32_t first[9];
    for (uint32_t P = 2; P <= 8; P++) {
        tsl_partition_by_flops(&m, P, first);
        CHECK(first[P - 1] <= 7 && first[P] == 11, "by FLOPs, P %u: last stage at %u", P,
              first[P - 1]);
        tsl_partition_uniform(&m, P, first);
        CHECK(first[P - 1] <= 7 && first[P] == 11, "uniform, P %u: last stage at %u", P,
              first[P - 1]);
    }
    /* 8 units (7 layers, then the MTP layers with the head), 4 stages: 2 each */
    tsl_partition_uniform(&m, 4, first);
    CHECK(first[1] == 2 && first[2] == 4 && first[3] == 6, "uniform P 4: %u %u %u", first[1],
          first[2], first[3]);
    /* the sub-layer split keeps mtp_depth on its blocks: the bound moves with them
     * (embedding, 6 layers split in two, then the entry at 13) */
    tsl_sublayer_model_t sm;
    tsl_err_t err = {0};
    CHECK(tsl_sublayer_split(&m, &sm, &err) == 0, "%s", err.msg);
    uint32_t c = tsl_partition_max_cut(&sm.model);
    CHECK(sm.model.layers[c].kind == TSL_LAYER_MTP && c == 13, "sub-layer max_cut %u", c);
    tsl_partition_by_flops(&sm.model, 4, first);
    CHECK(first[3] <= c, "sub-layer by FLOPs: last stage at %u", first[3]);
    tsl_sublayer_free(&sm);
    tsl_model_free(&m);
}

/* The first layer of an MTP depth, read here, not through the planner's bound. */
static uint32_t first_mtp(const tsl_model_t *m)
{
    for (uint32_t i = 0; i < m->n_layers; i++)
        if (m->layers[i].mtp_depth)
            return i;
    return m->n_layers;
}

/* Every plan a search returns keeps the MTP layers on its last stage: pp 2, 4
 * and 8 (8 stages of 8 units: the MTP layers and the head alone on the last).
 * Without the bound this search put pp 4's and pp 8's last stage at layers 8
 * and 9, the MTP depth's MoE layer and head copy. */
static void test_search(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    dsv3_small(&m);
    CHECK(tsl_cluster_parse_spec(&c, "8xH100-80G", &err) == 0, "%s", err.msg);
    static const uint32_t pps[] = {2, 4, 8};
    for (size_t k = 0; k < sizeof pps / sizeof pps[0]; k++) {
        tsl_request_t r;
        tsl_request_init(&r);
        r.pp = pps[k];
        r.global_batch = 16;
        r.no_baselines = true;
        r.top_k = 4;
        tsl_search_result_t *res = calloc(1, sizeof(*res));
        CHECK(tsl_search(&m, &c, &r, NULL, res, &err) == TSL_SEARCH_OK, "pp %u: %s", r.pp, err.msg);
        for (uint32_t i = 0; i < res->n_top; i++) {
            const tsl_plan_t *p = &res->top[i];
            tsl_sublayer_model_t sm;
            const tsl_model_t *pm = &m;
            if (p->sublayer && tsl_sublayer_split(&m, &sm, &err) == 0)
                pm = &sm.model;
            uint32_t cut = first_mtp(pm);
            CHECK(p->pp == r.pp && p->stages[p->pp - 1].first_layer <= cut &&
                      tsl_plan_validate(p, &m, &c, &err) == 0,
                  "pp %u plan %u: last stage at %u, the first MTP layer %u: %s", r.pp, i,
                  p->stages[p->pp - 1].first_layer, cut, err.msg);
            if (pm != &m)
                tsl_sublayer_free(&sm);
        }
        printf("dsv3-small pp %u: %u plans, best %.2f samples/s, last stage from layer %u%s\n",
               r.pp, res->n_top, res->best.samples_per_s,
               res->best.stages[res->best.pp - 1].first_layer,
               res->best.sublayer ? " (sub-layer)" : "");
        free(res);
    }
    /* pp 16 would need 15 cuts before the MTP entry at 7: no such plan */
    tsl_request_t r;
    tsl_request_init(&r);
    r.pp = 16;
    tsl_cluster_t c16;
    CHECK(tsl_cluster_parse_spec(&c16, "2x8xH100-80G", &err) == 0, "%s", err.msg);
    tsl_search_result_t *res = calloc(1, sizeof(*res));
    CHECK(tsl_search(&m, &c16, &r, NULL, res, &err) != TSL_SEARCH_OK, "pp 16 found a plan");
    free(res);
    tsl_cluster_free(&c16);
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

/* The engine costs no split that cuts an MTP depth off the head, whoever asks. */
static void test_engine_guard(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    dsv3_small(&m);
    CHECK(tsl_cluster_parse_spec(&c, "8xH100-80G", &err) == 0, "%s", err.msg);
    tsl_request_t r;
    tsl_request_init(&r);
    tsl_space_t sp = tsl_space_tessel(&r);
    sp.fixed_pp = 2;
    tsl_engine_t e;
    CHECK(tsl_engine_init(&e, &m, &c, &r, NULL, &sp, &err) == 0, "%s", err.msg);
    tsl_plan_t *p = malloc(sizeof(*p));
    uint32_t ok[3] = {0, 7, 11}, bad[3] = {0, 8, 11};
    tsl_plan_init(p);
    tsl_engine_eval(&e, 16, 2, 4, ok, p);
    CHECK(p->valid, "the last stage from the MTP entry: a plan");
    tsl_plan_init(p);
    tsl_engine_eval(&e, 16, 2, 4, bad, p);
    CHECK(!p->valid, "the last stage from the MTP layer after the entry: none");
    free(p);
    tsl_engine_free(&e);
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

/* A plan whose last stage starts after the MTP entry is refused with one message
 * whoever checks it (partition.h tsl_partition_mtp_check): the plan's validation
 * (plan.c) and eval's layer split (eval.c) say the same after their prefixes. The
 * searched pp 2 split of dsv3_small, 0-6 | 7-10, moved to 0-8 | 9-10: stage 1
 * from layer 9, the depth's head copy, after the entry at 7. */
static void test_one_check(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_err_t err = {0}, verr = {0}, eerr = {0};
    dsv3_small(&m);
    CHECK(tsl_cluster_parse_spec(&c, "8xH100-80G", &err) == 0, "%s", err.msg);
    tsl_request_t r;
    tsl_request_init(&r);
    r.pp = 2, r.global_batch = 16, r.no_baselines = true, r.no_sublayer = true;
    tsl_search_result_t *res = calloc(1, sizeof(*res));
    tsl_plan_t *out = malloc(sizeof(*out));
    CHECK(tsl_search(&m, &c, &r, NULL, res, &err) == TSL_SEARCH_OK, "%s", err.msg);
    tsl_plan_t *p = &res->best;
    CHECK(p->pp == 2 && !p->sublayer && tsl_plan_validate(p, &m, &c, &err) == 0, "searched: %s",
          err.msg);
    p->stages[0].n_layers = 9;
    p->stages[1].first_layer = 9;
    p->stages[1].n_layers = 2;
    const char *want = "stage 1 starts at layer 9, after the first MTP layer 7; Megatron-LM "
                       "builds every MTP depth on the head's stage, so the last stage starts at "
                       "layer 7 at the latest";
    char vwant[TSL_ERR_MAX], ewant[TSL_ERR_MAX];
    snprintf(vwant, sizeof vwant, "plan: %s", want);
    snprintf(ewant, sizeof ewant, "eval: layer split: %s", want);
    CHECK(tsl_plan_validate(p, &m, &c, &verr) != 0 && strcmp(verr.msg, vwant) == 0, "validate: %s",
          verr.msg);
    tsl_request_init(&r);
    CHECK(tsl_eval_plan(&m, &c, &r, p, out, &eerr) != 0 && strcmp(eerr.msg, ewant) == 0, "eval: %s",
          eerr.msg);
    free(out);
    free(res);
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

int main(void)
{
    test_by_hand();
    test_vs_brute();
    test_model_partitions();
    test_search();
    test_engine_guard();
    test_one_check();
    return CHECK_DONE();
}

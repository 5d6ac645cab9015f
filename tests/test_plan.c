/* Tests for planner/plan: validation, run folding, fingerprints. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pipeline.h"
#include "pipesim.h"
#include "plan.h"

static tsl_strategy_t strat(const char *text)
{
    tsl_strategy_t s;
    tsl_err_t err;
    if (tsl_strategy_parse(text, &s, &err) != 0) {
        fprintf(stderr, "bad strategy %s: %s\n", text, err.msg);
        exit(2);
    }
    return s;
}

/* A 2-stage plan of a 6-layer model on 8 devices: stage 0 layers 0-2 on 0-3, stage 1 3-5 on 4-7. */
static void make_plan(tsl_plan_t *p)
{
    tsl_plan_init(p);
    p->valid = true;
    p->n_devices = 8;
    p->pp = 2;
    p->n_layers = 6;
    p->global_batch = 16;
    p->micro_batch = 4;
    p->n_micro = 4;
    p->iter_time_s = 1.0;
    p->samples_per_s = 16.0;
    p->budget_bytes = 1000;
    for (uint32_t s = 0; s < 2; s++) {
        p->stages[s].first_layer = 3 * s;
        p->stages[s].n_layers = 3;
        p->stages[s].first_device = 4 * s;
        p->stages[s].n_devices = 4;
        p->stages[s].peak_bytes = 900;
    }
    p->layer[0] = strat("tp2-dp2");
    p->layer[1] = strat("tp2-dp2");
    p->layer[2] = strat("sdp4+ckpt");
    for (int l = 3; l < 6; l++)
        p->layer[l] = strat("tp4");
}

static void make_inputs(tsl_model_t *m, tsl_cluster_t *c)
{
    tsl_err_t err;
    tsl_model_init(m, "tiny");
    tsl_layer_t l = {
        .kind = TSL_LAYER_ENCODER, .seq_len = 128, .hidden = 256, .ffn_hidden = 1024, .heads = 4};
    if (tsl_model_add_n(m, &l, 6, &err) != 0 ||
        tsl_cluster_parse_spec(c, "8xA100-80G", &err) != 0) {
        fprintf(stderr, "setup: %s\n", err.msg);
        exit(2);
    }
}

static void test_validate(const tsl_model_t *m, const tsl_cluster_t *c)
{
    tsl_plan_t p;
    tsl_err_t err = {0};
    make_plan(&p);
    CHECK(tsl_plan_validate(&p, m, c, &err) == 0, "valid plan rejected: %s", err.msg);

    make_plan(&p);
    p.stages[1].first_layer = 4; /* layer 3 unplaced */
    CHECK(tsl_plan_validate(&p, m, c, &err) != 0 && strstr(err.msg, "stage 1"), "gap: %s", err.msg);

    make_plan(&p);
    p.layer[4] = strat("tp2"); /* uses 2 of the stage's 4 devices */
    CHECK(tsl_plan_validate(&p, m, c, &err) != 0 && strstr(err.msg, "layer 4"), "degrees: %s",
          err.msg);

    make_plan(&p);
    p.stages[0].peak_bytes = 1001;
    CHECK(tsl_plan_validate(&p, m, c, &err) != 0 && strstr(err.msg, "budget"), "budget: %s",
          err.msg);

    make_plan(&p);
    p.n_micro = 3;
    CHECK(tsl_plan_validate(&p, m, c, &err) != 0 && strstr(err.msg, "micro"), "batch: %s", err.msg);

    make_plan(&p);
    p.micro_batch = 2;
    p.n_micro = 8;
    p.layer[0] = strat("dp4"); /* micro-batch 2 cannot split 4 ways */
    p.layer[1] = strat("dp4");
    CHECK(tsl_plan_validate(&p, m, c, &err) != 0 && strstr(err.msg, "divisible"), "width: %s",
          err.msg);

    make_plan(&p);
    p.stages[1].n_devices = 2;
    CHECK(tsl_plan_validate(&p, m, c, &err) != 0, "device cover accepted");
}

struct runs {
    int n;
    uint32_t stage[8], first[8], count[8];
};

static void collect(void *ud, uint32_t stage, uint32_t first, uint32_t count,
                    const tsl_strategy_t *s)
{
    struct runs *r = ud;
    (void)s;
    r->stage[r->n] = stage;
    r->first[r->n] = first;
    r->count[r->n] = count;
    r->n++;
}

static void test_runs(void)
{
    tsl_plan_t p;
    make_plan(&p);
    struct runs r = {0};
    tsl_plan_foreach_run(&p, collect, &r);
    CHECK(r.n == 3, "3 runs expected, got %d", r.n);
    CHECK(r.first[0] == 0 && r.count[0] == 2 && r.stage[0] == 0, "run 0 %u+%u", r.first[0],
          r.count[0]);
    CHECK(r.first[1] == 2 && r.count[1] == 1, "run 1 %u+%u", r.first[1], r.count[1]);
    CHECK(r.first[2] == 3 && r.count[2] == 3 && r.stage[2] == 1, "run 2 %u+%u", r.first[2],
          r.count[2]);
}

static void test_fingerprint(const tsl_model_t *m, const tsl_cluster_t *c)
{
    tsl_fp_t a, b;
    char ha[17], hb[17];
    tsl_fp_init(&a);
    tsl_fp_str(&a, "");
    tsl_fp_hex(&a, ha);
    CHECK(strlen(ha) == 16, "hex length %zu", strlen(ha));

    tsl_fp_init(&a);
    tsl_fp_model(&a, m);
    tsl_fp_cluster(&a, c);
    tsl_fp_init(&b);
    tsl_fp_model(&b, m);
    tsl_fp_cluster(&b, c);
    CHECK(a.h == b.h, "same input, different fingerprint");

    tsl_model_t m2;
    tsl_err_t err;
    tsl_model_copy(&m2, m, &err);
    m2.layers[5].seq_len = 256;
    tsl_layer_derive(&m2.layers[5], &err);
    tsl_fp_init(&b);
    tsl_fp_model(&b, &m2);
    tsl_fp_cluster(&b, c);
    CHECK(a.h != b.h, "a changed layer kept the fingerprint");
    /* the same layers as a hybrid's: its attention and FFN halves count as
     * blocks (tsl_model_is_block: offloading, the offload window), another model */
    tsl_model_free(&m2);
    tsl_model_copy(&m2, m, &err);
    m2.hybrid = true;
    tsl_fp_init(&b);
    tsl_fp_model(&b, &m2);
    tsl_fp_cluster(&b, c);
    CHECK(a.h != b.h, "hybrid kept the fingerprint");
    tsl_model_free(&m2);

    /* the inter-node figure: a matrix of equal figures is the cluster inter_bw
     * alone describes (hashed once, not per pair); one pair apart is another */
    {
        tsl_cluster_t u, w;
        CHECK(tsl_cluster_parse_spec(&u, "3x8xA100-80G:ib200", &err) == 0, "%s", err.msg);
        tsl_cluster_init(&w);
        uint32_t gi;
        tsl_node_t nd = {.n_gpus = 8};
        CHECK(tsl_cluster_add_gpu_type(&w, tsl_gpu_find("A100-80G"), &gi, &err) == 0, "%s",
              err.msg);
        nd.gpu_type = gi;
        for (int k = 0; k < 3; k++)
            CHECK(tsl_cluster_add_node(&w, &nd, &err) == 0, "%s", err.msg);
        for (uint32_t x = 0; x < 3; x++)
            for (uint32_t y = x + 1; y < 3; y++)
                CHECK(tsl_cluster_set_pair_bw(&w, x, y, u.inter_bw, &err) == 0, "%s", err.msg);
        CHECK(tsl_cluster_finish(&w, &err) == 0, "%s", err.msg);
        tsl_fp_init(&a);
        tsl_fp_cluster(&a, &u);
        tsl_fp_init(&b);
        tsl_fp_cluster(&b, &w);
        /* the link's all-to-all share (cost model 129) prices: a cluster without it differs */
        CHECK(a.h != b.h, "ib200's all-to-all share left out of the fingerprint");
        w.inter_a2a_ratio = u.inter_a2a_ratio;
        tsl_fp_init(&b);
        tsl_fp_cluster(&b, &w);
        /* and its flex dispatcher's RDMA share (cost model 136) */
        CHECK(a.h != b.h, "ib200's flex share left out of the fingerprint");
        w.inter_flex_ratio = u.inter_flex_ratio;
        tsl_fp_init(&b);
        tsl_fp_cluster(&b, &w);
        CHECK(a.h == b.h, "a uniform matrix and inter_bw fingerprint differently");
        w.inter_bw_matrix[1 * 3 + 2] = w.inter_bw_matrix[2 * 3 + 1] = u.inter_bw / 2;
        tsl_fp_init(&b);
        tsl_fp_cluster(&b, &w);
        CHECK(a.h != b.h, "a slower pair kept the fingerprint");
        tsl_cluster_free(&u);
        tsl_cluster_free(&w);
    }

    /* concatenation ambiguity: "ab","c" vs "a","bc" */
    tsl_fp_init(&a);
    tsl_fp_str(&a, "ab");
    tsl_fp_str(&a, "c");
    tsl_fp_init(&b);
    tsl_fp_str(&b, "a");
    tsl_fp_str(&b, "bc");
    CHECK(a.h != b.h, "string boundaries not hashed");

    /* byte-order independence: the u64 encoding is fixed little-endian FNV-1a */
    tsl_fp_init(&a);
    tsl_fp_u64(&a, 1);
    tsl_fp_hex(&a, ha);
    tsl_fp_init(&b);
    tsl_fp_u64(&b, 1ull << 56);
    tsl_fp_hex(&b, hb);
    CHECK(strcmp(ha, hb) != 0, "byte order ignored");
    /* FNV-1a of 01 00 00 00 00 00 00 00, computed independently */
    CHECK(strcmp(ha, "29034675a49f07c2") == 0, "reference value %s", ha);
}

/* A ds_pipe_p2p plan (DeepSpeed's pipeline engine, AMP's fork) by hand: 3 stages, f 1,
 * b 2 and a boundary of 0.5 per micro-batch (0.25 each way) on stages 0 and 1, the head's
 * stage 2 f 2, b 4 (nosync 3.5, 3.5, 6), m = 4, no sync, no steps. K = 3.5, 4, 6.5
 * (each stage's incoming exchanges too); the closed form (m − 1) · 6.5 + Σ C_nosync 13 =
 * 32.5. The event simulator's rendezvous (tsl_plan_sim_input sets it from ds_pipe_p2p):
 * F0, hop, F0, hop on stages 0, 1 (2.5), stage 2's F0 B0 (6) and three cycles of its
 * exchange with stage 1 (receive A_j, send G_{j−1}: 0.5), F, B (19.5), then G3 back
 * down: hop, B3, hop, B3 (4.5) = 32.5, the same. Without the switch: Megatron's
 * blocking sends, no rendezvous. */
static void test_ds_pipe_p2p_sim(void)
{
    tsl_plan_t *p = malloc(sizeof(*p));
    tsl_plan_sim_t *sim = malloc(sizeof(*sim));
    make_plan(p);
    p->pp = 3;
    double fwd[3] = {1, 1, 2}, nosync[3] = {3.5, 3.5, 6}, p2p[3] = {0.5, 0.5, 0}, zero[3] = {0};
    for (uint32_t s = 0; s < 3; s++) {
        p->stages[s].fwd_s = fwd[s];
        p->stages[s].time_nosync_s = p->stages[s].time_s = nosync[s];
        p->stages[s].p2p_s = p2p[s];
        p->stages[s].opt_s = 0;
    }
    p->ds_pipe_p2p = true;
    tsl_plan_sim_input(p, false, sim);
    CHECK(sim->in.p2p_rendezvous && !sim->in.p2p_blocking && sim->p2p[0] == 0.25,
          "ds_pipe_p2p: a rendezvous of 0.25 each way");
    size_t bytes = tsl_pipesim_in_ws_bytes(&sim->in);
    void *ws = malloc(bytes);
    tsl_pipesim_out_t out;
    tsl_err_t err = {0};
    CHECK(tsl_pipesim_run(&sim->in, ws, bytes, &out, &err) == 0 && fabs(out.iter_s - 32.5) < 1e-12,
          "simulated %g (%s)", out.iter_s, err.msg);
    tsl_pipeline_in_t in = {.n_stages = 3,
                            .n_micro = 4,
                            .interleave = 1,
                            .fwd_s = fwd,
                            .nosync_s = nosync,
                            .sync_s = nosync,
                            .p2p_s = p2p,
                            .opt_s = zero,
                            .p2p_both = true};
    tsl_pipeline_out_t t;
    tsl_pipeline_iter(&in, &t);
    CHECK(fabs(t.flush_s + t.opt_tail_s - 32.5) < 1e-12, "closed form %g",
          t.flush_s + t.opt_tail_s);
    p->ds_pipe_p2p = false;
    p->ds_pipe_engine = true; /* the same engine's exchanges over legacy_p2p's bytes */
    tsl_plan_sim_input(p, false, sim);
    CHECK(sim->in.p2p_rendezvous && !sim->in.p2p_blocking, "ds_pipe_engine: a rendezvous");
    p->ds_pipe_engine = false;
    tsl_plan_sim_input(p, false, sim);
    CHECK(!sim->in.p2p_rendezvous && sim->in.p2p_blocking, "without it: Megatron's sends");
    free(ws);
    free(sim);
    free(p);
}

/* One simulation of p (STACK); its iteration, or -1 with the simulator's message. */
static double sim_iter(const tsl_plan_t *p, tsl_plan_sim_t *sim)
{
    tsl_plan_sim_input(p, false, sim);
    size_t bytes = tsl_pipesim_in_ws_bytes(&sim->in);
    void *ws = malloc(bytes ? bytes : 1);
    tsl_pipesim_out_t out;
    tsl_err_t err = {0};
    double iter = tsl_pipesim_run(&sim->in, ws, bytes, &out, &err) == 0 ? out.iter_s : -1;
    CHECK(iter > 0, "simulate: %s", err.msg);
    free(ws);
    return iter;
}

/* What a plan read back from its document simulates with (plan.h v_chunks, the stage's
 * "chunk1"): a ZB-V of two stages whose rank 0 holds the heavy head chunk (0.8 of its
 * forward, backward and W) takes the chunks' own times as given, within each stage's
 * figures (a second chunk above its stage's forward is cut to it); without v_chunks (a
 * document written before "chunk1") each chunk is half its stage, another iteration. */
static void test_v_chunks_sim(void)
{
    tsl_plan_t *p = malloc(sizeof(*p));
    tsl_plan_sim_t *sim = malloc(sizeof(*sim));
    make_plan(p);
    p->schedule = TSL_PIPESIM_SCHED_ZBV;
    double c1[2] = {0.8, 0.2};
    for (uint32_t s = 0; s < 2; s++) {
        tsl_plan_stage_t *st = &p->stages[s];
        st->fwd_s = 1;
        st->time_s = st->time_nosync_s = 4; /* a backward of 3, p2p 0 */
        st->p2p_s = 0;
        st->wgrad_s = 1;
        st->opt_s = 0;
        st->chunk1_fwd_s = c1[s];
        st->chunk1_bwd_s = 3 * c1[s];
        st->chunk1_wgrad_s = c1[s];
    }
    p->v_chunks = true;
    double own = sim_iter(p, sim);
    CHECK(sim->in.c1_fwd_s && sim->in.c1_bwd_s && sim->in.c1_wgrad_s &&
              sim->in.c1_fwd_s[0] == 0.8 && sim->in.c1_bwd_s[0] == 3 * 0.8 &&
              sim->in.c1_wgrad_s[1] == 0.2,
          "v_chunks: the chunks' own times go to the simulator");
    p->stages[1].chunk1_fwd_s = 1.5;
    sim_iter(p, sim);
    CHECK(sim->fwd1[1] == 1, "a second chunk above its stage's forward is cut to it: %g",
          sim->fwd1[1]);
    p->v_chunks = false;
    double halves = sim_iter(p, sim);
    CHECK(!sim->in.c1_fwd_s && !sim->in.c1_bwd_s && !sim->in.c1_wgrad_s,
          "without v_chunks: halves");
    CHECK(own > 0 && halves > 0 && fabs(own - halves) > 1e-9,
          "uneven chunks %g s, halves %g s: another iteration", own, halves);
    free(sim);
    free(p);
}

int main(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    make_inputs(&m, &c);
    test_validate(&m, &c);
    test_runs();
    test_fingerprint(&m, &c);
    test_ds_pipe_p2p_sim();
    test_v_chunks_sim();
    tsl_model_free(&m);
    tsl_cluster_free(&c);
    return CHECK_DONE();
}

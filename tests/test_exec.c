/*
 * test_exec.c — the stage executor without GPUs: the same small model and seed run
 * as one rank and split by pipeline (pp 2, 4; 2–4 micro-batches; checkpointing),
 * data (dp 2, sdp 2) and tensor (tp 2) parallelism, ranks as loopback threads, gives
 * the same loss and gradients — bitwise where the reduction order is the same (pure
 * pipelines), else within 1e-5 relative. Fused attention by query chunks against the
 * unfused one (same loss and gradients within 1e-5), and its peak memory linear in the
 * sequence. Plans whose layers change layout inside a stage and between stages (slices
 * and gathers both ways, by hand and from the search on 8 GPUs) against one rank. One
 * pp = 2 run with tcp comm ops between forked processes; OOM as a result agreed by
 * every rank; plans the executor refuses. Llama-family layers (the preset family at
 * tiny shapes: RMSNorm, no biases, SwiGLU, grouped-query attention, and a sliding
 * window) split the same ways, the search's plan for them, their refusals, and one
 * layer's activation bytes against the planner's count.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "exec.h"
#include "exec_internal.h"
#include "memopt.h"
#include "pipeline.h"
#include "search.h"
#include "search_tiny.h"

#define MAXR 8
#define MAXL 12
#define CAP  (1u << 18)

typedef struct result {
    double loss; /* from a last-stage rank */
    bool ok;
    /* per rank, per stage layer */
    struct {
        uint32_t n_layers, tp, tp_index, dp, dp_index;
        uint32_t index[MAXL];
        tsl_exec_layer_t lay[MAXL];
        uint64_t peak; /* the cpu ops' count after the steps */
        bool sdp[MAXL];
        size_t n[MAXL];
        float *g[MAXL];
    } r[MAXR];
    uint32_t world;
} result_t;

typedef struct job {
    const tsl_plan_t *plan;
    const tsl_model_t *model;
    tsl_loopback_world_t *world;
    result_t *res;
    uint32_t rank;
    uint64_t mem_limit;
    bool oom;
} job_t;

/* Query rows per fused-attention chunk for the runs that follow (0: the engine's rule);
 * set before any rank starts. */
static uint32_t attn_chunk;

static void opts(tsl_exec_opts_t *o)
{
    tsl_exec_opts_default(o);
    o->attn_chunk = attn_chunk;
    o->warmup = 0;
    o->iters = 2; /* the second step's gradients depend on the first's update */
    o->optim = TSL_EXEC_SGD;
    o->lr = 0.5f;
    o->seed = 42;
}

static void collect(tsl_exec_t *e, const tsl_exec_rank_t *r, result_t *res)
{
    tsl_err_t err = {0};
    res->r[r->rank].n_layers = r->n_layers;
    res->r[r->rank].tp = r->tp;
    res->r[r->rank].tp_index = r->tp_index;
    res->r[r->rank].dp = r->dp;
    res->r[r->rank].dp_index = r->dp_index;
    for (uint32_t i = 0; i < r->n_layers && i < MAXL; i++) {
        float *g = malloc(CAP * sizeof(float));
        size_t n = 0;
        CHECK(g && !tsl_exec_layer_grad(e, i, g, CAP, &n, &err), "%s", err.msg);
        res->r[r->rank].g[i] = g;
        res->r[r->rank].n[i] = n;
        res->r[r->rank].index[i] = r->layers[i].index;
        res->r[r->rank].lay[i] = r->layers[i];
        res->r[r->rank].sdp[i] = r->layers[i].sdp;
    }
    if (r->next_rank < 0)
        res->loss = tsl_exec_loss(e);
}

/* One rank: create, two steps, collect. */
static int run_one(job_t *j, tsl_commops_t *c, tsl_err_t *err)
{
    tsl_exec_rank_t r;
    tsl_exec_opts_t o;
    tsl_devops_t *d = NULL;
    tsl_exec_t *e = NULL;
    int rc = -1;
    opts(&o);
    if (tsl_exec_rank_from_plan(j->plan, j->model, j->rank, &r, err))
        return -1;
    if (tsl_devops_cpu_create(j->mem_limit, &d, err))
        goto out;
    if (tsl_exec_create(&r, &o, d, c, &e, err)) {
        j->oom = tsl_err_code(err) == TSL_E_NOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < o.iters; i++)
        if (tsl_exec_step(e, NULL, err))
            goto out;
    collect(e, &r, j->res);
    j->res->r[j->rank].peak = d->peak_bytes(d);
    rc = 0;
out:
    tsl_exec_destroy(e);
    if (d)
        d->destroy(d);
    tsl_exec_rank_free(&r);
    return rc;
}

static void *thread_main(void *p)
{
    job_t *j = p;
    tsl_err_t err = {0};
    tsl_commops_t *c = NULL;
    if (tsl_comm_loopback_rank(j->world, (int)j->rank, &c, &err) || run_one(j, c, &err)) {
        if (!j->oom)
            fprintf(stderr, "rank %u: %s\n", j->rank, err.msg);
        j->res->ok = false;
    }
    if (c)
        c->destroy(c);
    return NULL;
}

/* All ranks of the plan as threads; limit_rank (if < world) gets a memory limit. */
static void run_plan(const tsl_plan_t *p, const tsl_model_t *m, result_t *res, int limit_rank,
                     uint64_t limit, int *n_oom)
{
    tsl_err_t err = {0};
    job_t jobs[MAXR];
    pthread_t th[MAXR];
    memset(res, 0, sizeof(*res));
    res->ok = true;
    res->world = p->n_devices;
    CHECK(!tsl_comm_loopback_world((int)p->n_devices, &jobs[0].world, &err), "%s", err.msg);
    for (uint32_t k = 0; k < p->n_devices; k++) {
        jobs[k] = (job_t){p, m, jobs[0].world, res, k, (int)k == limit_rank ? limit : 0, false};
        pthread_create(&th[k], NULL, thread_main, &jobs[k]);
    }
    *n_oom = 0;
    for (uint32_t k = 0; k < p->n_devices; k++) {
        pthread_join(th[k], NULL);
        *n_oom += jobs[k].oom;
    }
    tsl_comm_loopback_world_free(jobs[0].world);
}

static void free_result(result_t *res)
{
    for (int k = 0; k < MAXR; k++)
        for (int i = 0; i < MAXL; i++)
            free(res->r[k].g[i]);
}

/* The reference's (one rank) full gradient of model layer idx; a tied head's copy is
 * compared with the embedding's (model layer 0) table. */
static const float *ref_grad(const result_t *ref, uint32_t idx, tsl_exec_tie_t tie, size_t *n)
{
    if (tie == TSL_EXEC_TIE_COPY)
        idx = 0;
    for (uint32_t i = 0; i < ref->r[0].n_layers; i++)
        if (ref->r[0].index[i] == idx) {
            *n = ref->r[0].n[i];
            return ref->r[0].g[i];
        }
    return NULL;
}

static void compare(const result_t *ref, const result_t *got, const char *what, bool bitwise)
{
    CHECK(got->ok && ref->ok, "%s: every rank ran", what);
    if (bitwise)
        CHECK(got->loss == ref->loss, "%s: loss %.9g, one rank %.9g", what, got->loss, ref->loss);
    else
        CHECK_NEAR(got->loss, ref->loss, 1e-5, "%s: loss %.9g, one rank %.9g", what, got->loss,
                   ref->loss);
    for (uint32_t k = 0; k < got->world; k++) {
        for (uint32_t i = 0; i < got->r[k].n_layers; i++) {
            size_t nf = 0;
            tsl_exec_layer_t l = got->r[k].lay[i];
            const float *full = ref_grad(ref, got->r[k].index[i], l.tie, &nf);
            uint32_t tp = l.tp, dp = l.dw; /* each layer's own layout */
            size_t np = tsl_exec_layer_params(&l, tp), shard = (np + dp - 1) / dp;
            float *want = calloc(shard * dp + 1, sizeof(float));
            tsl_exec_layer_slice(&l, tp, l.tp_index, full, want);
            const float *w = want;
            size_t n = np;
            if (got->r[k].sdp[i]) {
                w = want + l.dw_index * shard;
                n = shard;
            }
            CHECK(got->r[k].n[i] == n, "%s: rank %u layer %u: %zu gradients, expected %zu", what, k,
                  got->r[k].index[i], got->r[k].n[i], n);
            double mx = 0, worst = 0;
            for (size_t j = 0; j < n; j++)
                mx = fmax(mx, fabs(w[j]));
            for (size_t j = 0; j < n && got->r[k].n[i] == n; j++)
                worst = fmax(worst, fabs((double)got->r[k].g[i][j] - w[j]));
            if (bitwise)
                CHECK(got->r[k].n[i] == n && !memcmp(got->r[k].g[i], w, n * sizeof(float)),
                      "%s: rank %u layer %u: gradients differ (max %g)", what, k,
                      got->r[k].index[i], worst);
            else
                CHECK(worst <= 1e-5 * mx, "%s: rank %u layer %u: gradient off by %g of %g", what, k,
                      got->r[k].index[i], worst, mx);
            free(want);
        }
    }
}

/* 4 encoder layers, with (vocab > 0) a token embedding (learned positions when
 * positions > 0) and an LM head, tied to the embedding when asked. */
static void model_enc(tsl_model_t *m, uint32_t vocab, uint32_t positions, bool tied, uint32_t n_enc)
{
    tsl_err_t err = {0};
    tsl_layer_t enc = {
        .kind = TSL_LAYER_ENCODER, .seq_len = 8, .hidden = 32, .ffn_hidden = 64, .heads = 4};
    tsl_layer_t emb = {.kind = TSL_LAYER_EMBEDDING,
                       .seq_len = 8,
                       .hidden = 32,
                       .vocab = vocab,
                       .positions = positions};
    tsl_layer_t head = {
        .kind = TSL_LAYER_HEAD, .seq_len = 8, .hidden = 32, .vocab = vocab, .tied_head = tied};
    tsl_model_init(m, "small");
    if (vocab)
        CHECK(!tsl_model_add(m, &emb, &err), "%s", err.msg);
    CHECK(!tsl_model_add_n(m, &enc, n_enc, &err), "%s", err.msg);
    if (vocab)
        CHECK(!tsl_model_add(m, &head, &err), "%s", err.msg);
}

static void model_with(tsl_model_t *m, uint32_t vocab, uint32_t positions, bool tied)
{
    model_enc(m, vocab, positions, tied, 4);
}

static void model(tsl_model_t *m, uint32_t vocab)
{
    model_with(m, vocab, 0, false);
}

static void run_spec(const tsl_model_t *m, tsl_exec_plan_spec_t s, result_t *res)
{
    tsl_err_t err = {0};
    tsl_plan_t p;
    int oom = 0;
    CHECK(!tsl_exec_uniform_plan(m, &s, &p, &err), "%s", err.msg);
    run_plan(&p, m, res, -1, 0, &oom);
}

static void case_vs(const tsl_model_t *m, const result_t *ref, tsl_exec_plan_spec_t s,
                    const char *what, bool bitwise)
{
    result_t got;
    run_spec(m, s, &got);
    compare(ref, &got, what, bitwise);
    free_result(&got);
}

static void splits(uint32_t vocab)
{
    tsl_model_t m;
    model(&m, vocab);
    result_t ref4, ref2;
    run_spec(&m, (tsl_exec_plan_spec_t){1, 1, 1, false, false, 4, 4}, &ref4);
    run_spec(&m, (tsl_exec_plan_spec_t){1, 1, 1, false, false, 4, 2}, &ref2);
    CHECK(ref4.ok && isfinite(ref4.loss) && ref4.loss > 0, "reference loss %g", ref4.loss);
    CHECK(ref4.loss != ref2.loss, "different batches give different losses");
    case_vs(&m, &ref4, (tsl_exec_plan_spec_t){2, 1, 1, false, false, 4, 4}, "pp2 m4", true);
    case_vs(&m, &ref2, (tsl_exec_plan_spec_t){2, 1, 1, false, false, 4, 2}, "pp2 m2", true);
    case_vs(&m, &ref4, (tsl_exec_plan_spec_t){4, 1, 1, false, false, 4, 4}, "pp4 m4", true);
    case_vs(&m, &ref2, (tsl_exec_plan_spec_t){4, 1, 1, false, false, 4, 2}, "pp4 m2", true);
    case_vs(&m, &ref4, (tsl_exec_plan_spec_t){2, 1, 1, false, true, 4, 4}, "pp2 ckpt", true);
    case_vs(&m, &ref4, (tsl_exec_plan_spec_t){2, 1, 2, false, false, 4, 4}, "pp2 dp2", false);
    case_vs(&m, &ref4, (tsl_exec_plan_spec_t){2, 1, 2, true, false, 4, 4}, "pp2 sdp2", false);
    case_vs(&m, &ref4, (tsl_exec_plan_spec_t){1, 2, 1, false, false, 4, 4}, "tp2", false);
    case_vs(&m, &ref2, (tsl_exec_plan_spec_t){2, 2, 2, false, true, 4, 2}, "pp2 tp2 dp2 ckpt",
            false);
    free_result(&ref4);
    free_result(&ref2);
    tsl_model_free(&m);
}

/* Fused attention by query chunks computes what the unfused one does: a sequence of 40
 * in chunks of 16 (16, 16 and a ragged 8), one chunk of 40 (the rule, at this size),
 * and chunks of 16 split pp 2 × tp 2 × dp 2 with checkpointing, against the model's
 * unfused_attn run on one rank; causal or not. Returns the loss. */
static double fused_vs_unfused(bool causal)
{
    tsl_err_t err = {0};
    tsl_model_t m, mu;
    tsl_layer_t enc = {.kind = TSL_LAYER_ENCODER,
                       .seq_len = 40,
                       .hidden = 32,
                       .ffn_hidden = 64,
                       .heads = 4,
                       .causal = causal};
    tsl_layer_t emb = {.kind = TSL_LAYER_EMBEDDING, .seq_len = 40, .hidden = 32, .vocab = 24};
    tsl_layer_t head = {.kind = TSL_LAYER_HEAD, .seq_len = 40, .hidden = 32, .vocab = 24};
    tsl_model_init(&m, "fused");
    tsl_model_init(&mu, "unfused");
    tsl_model_t *both[] = {&m, &mu};
    for (int k = 0; k < 2; k++)
        CHECK(!tsl_model_add(both[k], &emb, &err) && !tsl_model_add_n(both[k], &enc, 2, &err) &&
                  !tsl_model_add(both[k], &head, &err),
              "%s", err.msg);
    CHECK(!tsl_model_set_unfused_attn(&mu, true, &err), "%s", err.msg);
    result_t ref;
    attn_chunk = 0;
    run_spec(&mu, (tsl_exec_plan_spec_t){1, 1, 1, false, false, 4, 2}, &ref);
    CHECK(ref.ok && isfinite(ref.loss) && ref.loss > 0, "unfused loss %g", ref.loss);
    attn_chunk = 16;
    case_vs(&m, &ref, (tsl_exec_plan_spec_t){1, 1, 1, false, false, 4, 2}, "fused chunks of 16",
            false);
    case_vs(&m, &ref, (tsl_exec_plan_spec_t){2, 2, 2, false, true, 4, 2},
            "fused chunks of 16, pp2 tp2 dp2 ckpt", false);
    attn_chunk = 0;
    case_vs(&m, &ref, (tsl_exec_plan_spec_t){1, 1, 1, false, false, 4, 2}, "fused, one chunk",
            false);
    double loss = ref.loss;
    free_result(&ref);
    tsl_model_free(&m);
    tsl_model_free(&mu);
    return loss;
}

/* The model's causal flag reaches the attention: fused equals unfused either way, and
 * the two functions differ (a mask that were ignored would give the same loss). */
static void causal_and_not(void)
{
    double c = fused_vs_unfused(true), full = fused_vs_unfused(false);
    CHECK(fabs(c - full) > 1e-6 * fabs(full), "causal loss %.9g, non-causal %.9g: the same", c,
          full);
}

/* One rank's cpu peak and model-state bytes for n copies of layer l (its derived form
 * in *out), micro-batch 2, one micro-batch, no checkpointing. */
static void peak_of(const tsl_layer_t *l, uint32_t n, uint64_t *peak, uint64_t *states,
                    tsl_layer_t *out)
{
    tsl_err_t err = {0};
    tsl_model_t m;
    tsl_model_init(&m, "peak");
    CHECK(!tsl_model_add_n(&m, l, n, &err), "%s", err.msg);
    *out = m.layers[0];
    tsl_exec_plan_spec_t spec = {1, 1, 1, false, false, 2, 1};
    tsl_plan_t p;
    tsl_exec_rank_t r;
    tsl_exec_opts_t o;
    tsl_exec_report_t rep = {0};
    tsl_loopback_world_t *w = NULL;
    tsl_commops_t *c = NULL;
    tsl_devops_t *d = NULL;
    opts(&o);
    o.iters = 1;
    CHECK(!tsl_exec_uniform_plan(&m, &spec, &p, &err) &&
              !tsl_exec_rank_from_plan(&p, &m, 0, &r, &err),
          "%s", err.msg);
    CHECK(!tsl_comm_loopback_world(1, &w, &err) && !tsl_comm_loopback_rank(w, 0, &c, &err) &&
              !tsl_devops_cpu_create(0, &d, &err),
          "%s", err.msg);
    CHECK(!tsl_exec_run(&r, &o, d, c, &rep, &err) && !rep.oom, "%s", err.msg);
    *peak = rep.peak_bytes;
    *states = rep.param_bytes;
    d->destroy(d);
    c->destroy(c);
    tsl_comm_loopback_world_free(w);
    tsl_exec_rank_free(&r);
    tsl_model_free(&m);
}

/* The cpu device's peak bytes of one rank (one encoder, a micro-batch of 2) at seq s. */
static uint64_t peak_at(uint32_t s, bool unfused)
{
    tsl_layer_t enc = {.kind = TSL_LAYER_ENCODER,
                       .seq_len = s,
                       .hidden = 32,
                       .ffn_hidden = 64,
                       .heads = 4,
                       .unfused_attn = unfused},
                derived;
    uint64_t peak = 0, states = 0;
    peak_of(&enc, 1, &peak, &states, &derived);
    return peak;
}

/* Fused attention keeps nothing of size s²: doubling the sequence about doubles the
 * peak (unfused: about quadruples, the b·a·s² softmax output dominating). The chunk
 * is forced to 64 rows: this model is so small (h 32) that the default's 256-row
 * floor would make the a·c·s workspace, not the stash, the peak. */
static void peak_linear_in_seq(void)
{
    attn_chunk = 64;
    uint64_t f1 = peak_at(256, false), f2 = peak_at(512, false);
    uint64_t u1 = peak_at(256, true), u2 = peak_at(512, true);
    printf("cpu peak bytes, seq 256 -> 512: fused %llu -> %llu (x%.2f), unfused %llu -> %llu "
           "(x%.2f)\n",
           (unsigned long long)f1, (unsigned long long)f2, (double)f2 / (double)f1,
           (unsigned long long)u1, (unsigned long long)u2, (double)u2 / (double)u1);
    CHECK(f1 > 0 && (double)f2 / (double)f1 < 2.2, "fused peak %llu -> %llu grows faster than s",
          (unsigned long long)f1, (unsigned long long)f2);
    CHECK(u1 > 0 && (double)u2 / (double)u1 > 3.0, "unfused peak %llu -> %llu grows as s²",
          (unsigned long long)u1, (unsigned long long)u2);
    CHECK(f2 * 3 < u2, "fused peak %llu, unfused %llu at seq 512", (unsigned long long)f2,
          (unsigned long long)u2);
    attn_chunk = 0;
}

/* The vocabulary-parallel embedding and head: V = 450 (a multiple of neither 128 nor
 * 4: padded to 512, and every rank of tp 4 holds real words, the last 66 of its 128)
 * with learned positions, as one rank against TP splits of
 * the vocabulary (gradients compared part by part), with pipelines, data parallelism,
 * SDP and checkpointing. Tied: the head shares the table in the stage (no parameters
 * of its own), or keeps a copy in the last stage whose gradient the two stages sum. */
static void vocab_splits(bool tied)
{
    tsl_model_t m;
    model_with(&m, 450, 8, tied);
    result_t ref;
    run_spec(&m, (tsl_exec_plan_spec_t){1, 1, 1, false, false, 4, 4}, &ref);
    CHECK(ref.ok && isfinite(ref.loss) && ref.loss > 0, "vocab reference loss %g", ref.loss);
    uint32_t last = ref.r[0].n_layers - 1;
    CHECK(ref.r[0].n[last] == (tied ? 0 : 512 * 32),
          "one rank: the head holds %zu values (tied: none, else 512 padded rows × 32)",
          ref.r[0].n[last]);
    case_vs(&m, &ref, (tsl_exec_plan_spec_t){1, 2, 1, false, false, 4, 4},
            tied ? "tied tp2" : "vocab tp2", false);
    case_vs(&m, &ref, (tsl_exec_plan_spec_t){1, 4, 1, false, false, 4, 4},
            tied ? "tied tp4" : "vocab tp4", false);
    case_vs(&m, &ref, (tsl_exec_plan_spec_t){2, 2, 1, false, false, 4, 4},
            tied ? "tied pp2 tp2" : "vocab pp2 tp2", false);
    case_vs(&m, &ref, (tsl_exec_plan_spec_t){2, 1, 1, false, false, 4, 4},
            tied ? "tied pp2" : "vocab pp2", !tied);
    case_vs(&m, &ref, (tsl_exec_plan_spec_t){2, 2, 2, false, true, 4, 4},
            tied ? "tied pp2 tp2 dp2 ckpt" : "vocab pp2 tp2 dp2 ckpt", false);
    case_vs(&m, &ref, (tsl_exec_plan_spec_t){1, 2, 2, true, false, 4, 4},
            tied ? "tied tp2 sdp2" : "vocab tp2 sdp2", false);
    case_vs(&m, &ref, (tsl_exec_plan_spec_t){2, 2, 2, true, false, 4, 4},
            tied ? "tied pp2 tp2 sdp2" : "vocab pp2 tp2 sdp2", false);
    free_result(&ref);
    tsl_model_free(&m);
}

/* The vocabulary layers' parameters per rank are the planner's share, 1/t of the
 * padded vocabulary (V = 2000 pads to 2048 for t = 1, 2, 4), and the rank's peak of
 * counted bytes drops by at least 90% of what the split saves. */
static void vocab_memory(void)
{
    tsl_err_t err = {0};
    tsl_model_t m;
    tsl_layer_t emb = {
        .kind = TSL_LAYER_EMBEDDING, .seq_len = 8, .hidden = 32, .vocab = 2000, .positions = 16};
    tsl_layer_t enc = {
        .kind = TSL_LAYER_ENCODER, .seq_len = 8, .hidden = 32, .ffn_hidden = 64, .heads = 4};
    tsl_layer_t head = {.kind = TSL_LAYER_HEAD, .seq_len = 8, .hidden = 32, .vocab = 2000};
    tsl_model_init(&m, "vocab");
    CHECK(!tsl_model_add(&m, &emb, &err) && !tsl_model_add(&m, &enc, &err) &&
              !tsl_model_add(&m, &head, &err),
          "%s", err.msg);
    uint64_t peak[5] = {0}, saved1 = 0;
    for (uint32_t t = 1; t <= 4; t *= 2) {
        result_t res;
        run_spec(&m, (tsl_exec_plan_spec_t){1, t, 1, false, false, 4, 1}, &res);
        CHECK(res.ok, "tp %u ran", t);
        size_t vl = 2048 / t; /* 2000 padded to a multiple of 128·t, over t */
        for (uint32_t k = 0; k < t; k++) {
            CHECK(res.r[k].n[0] == vl * 32 + 16 * 32 && res.r[k].n[2] == vl * 32,
                  "tp %u rank %u: embedding %zu and head %zu parameters, expected %zu and %zu", t,
                  k, res.r[k].n[0], res.r[k].n[2], vl * 32 + 16 * 32, vl * 32);
            peak[t] = peak[t] > res.r[k].peak ? peak[t] : res.r[k].peak;
        }
        if (t == 1) /* SGD on cpu: parameters and gradients, 4 bytes each */
            saved1 = 2 * 4 * (uint64_t)(res.r[0].n[0] + res.r[0].n[2] - 16 * 32);
        else
            CHECK(peak[t] + (uint64_t)(0.9 * saved1 * (1.0 - 1.0 / t)) <= peak[1],
                  "tp %u: peak %llu bytes, one rank %llu (vocabulary states %llu)", t,
                  (unsigned long long)peak[t], (unsigned long long)peak[1],
                  (unsigned long long)saved1);
        free_result(&res);
    }
    printf("vocab memory: peak bytes per rank tp1 %llu, tp2 %llu, tp4 %llu\n",
           (unsigned long long)peak[1], (unsigned long long)peak[2], (unsigned long long)peak[4]);
    tsl_model_free(&m);
}

/* What the vocabulary layers refuse: positions shorter than the sequence, a tied
 * head with no embedding to share (by every rank, not only the head's). */
static void vocab_refusals(void)
{
    tsl_err_t err = {0};
    tsl_model_t m;
    tsl_plan_t p;
    tsl_exec_rank_t r;
    model_with(&m, 50, 4, false);
    tsl_exec_plan_spec_t s = {1, 1, 1, false, false, 2, 1};
    CHECK(!tsl_exec_uniform_plan(&m, &s, &p, &err), "%s", err.msg);
    CHECK(tsl_exec_rank_from_plan(&p, &m, 0, &r, &err) == -1 &&
              tsl_err_code(&err) == TSL_E_UNSUPPORTED && strstr(err.msg, "4 learned positions"),
          "positions shorter than the sequence refused: %s", err.msg);
    tsl_model_free(&m);
    tsl_layer_t enc = {
        .kind = TSL_LAYER_ENCODER, .seq_len = 8, .hidden = 32, .ffn_hidden = 64, .heads = 4};
    tsl_layer_t head = {
        .kind = TSL_LAYER_HEAD, .seq_len = 8, .hidden = 32, .vocab = 50, .tied_head = true};
    tsl_model_init(&m, "headless");
    CHECK(!tsl_model_add(&m, &enc, &err) && !tsl_model_add(&m, &head, &err), "%s", err.msg);
    s = (tsl_exec_plan_spec_t){2, 1, 1, false, false, 2, 1};
    CHECK(!tsl_exec_uniform_plan(&m, &s, &p, &err), "%s", err.msg);
    for (uint32_t k = 0; k < 2; k++)
        CHECK(tsl_exec_rank_from_plan(&p, &m, k, &r, &err) == -1 &&
                  tsl_err_code(&err) == TSL_E_UNSUPPORTED && strstr(err.msg, "tied head"),
              "rank %u: a tied head without an embedding refused: %s", k, err.msg);
    tsl_model_free(&m);
}

/* A two-rank plan over tcp between two forked processes: bitwise the loopback run. */
static void tcp_vs_loopback(const tsl_plan_t *p, const tsl_model_t *m, int port, const char *what)
{
    tsl_err_t err = {0};
    result_t lo;
    int oom = 0, fds[2][2];
    run_plan(p, m, &lo, -1, 0, &oom);
    CHECK(lo.ok, "%s: the loopback run", what);
    pid_t pid[2];
    for (int k = 0; k < 2; k++) {
        CHECK(!pipe(fds[k]), "pipe");
        pid[k] = fork();
        if (pid[k] == 0) {
            result_t res;
            memset(&res, 0, sizeof(res));
            res.ok = true;
            tsl_commops_t *c = NULL;
            job_t j = {p, m, NULL, &res, (uint32_t)k, 0, false};
            int rc =
                tsl_comm_tcp_create("127.0.0.1", port, k, 2, 30, &c, &err) || run_one(&j, c, &err);
            if (rc)
                fprintf(stderr, "%s: tcp rank %d: %s\n", what, k, err.msg);
            if (c)
                c->destroy(c);
            /* loss, then each layer's gradients */
            FILE *f = fdopen(fds[k][1], "w");
            fwrite(&res.loss, sizeof(double), 1, f);
            for (uint32_t i = 0; i < res.r[k].n_layers; i++)
                fwrite(res.r[k].g[i], sizeof(float), res.r[k].n[i], f);
            fclose(f);
            _exit(rc ? 1 : 0);
        }
        close(fds[k][1]);
    }
    for (int k = 0; k < 2; k++) {
        FILE *f = fdopen(fds[k][0], "r");
        double loss = 0;
        bool same = fread(&loss, sizeof(double), 1, f) == 1;
        for (uint32_t i = 0; same && i < lo.r[k].n_layers; i++) {
            float *g = malloc(lo.r[k].n[i] * sizeof(float));
            same = fread(g, sizeof(float), lo.r[k].n[i], f) == lo.r[k].n[i] &&
                   !memcmp(g, lo.r[k].g[i], lo.r[k].n[i] * sizeof(float));
            free(g);
        }
        fclose(f);
        int st = 0;
        waitpid(pid[k], &st, 0);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: tcp rank %d exited %d", what, k, st);
        CHECK(same, "%s: tcp rank %d: gradients equal the loopback run's", what, k);
        if (k == 1)
            CHECK(loss == lo.loss, "%s: tcp loss %.9g, loopback %.9g", what, loss, lo.loss);
    }
    free_result(&lo);
}

/* pp 2 over tcp, plain and interleaved (two model chunks per stage, the wrap from
 * stage 1 back to stage 0 over the same connection). */
static void tcp_pp2(void)
{
    tsl_err_t err = {0};
    tsl_model_t m;
    model(&m, 0);
    tsl_plan_t p;
    tsl_exec_plan_spec_t s = {2, 1, 1, false, false, 4, 3};
    CHECK(!tsl_exec_uniform_plan(&m, &s, &p, &err), "%s", err.msg);
    int port = 20000 + (int)(getpid() % 2000) * 8;
    tcp_vs_loopback(&p, &m, port, "tcp pp2");
    s.n_micro = 4;
    CHECK(!tsl_exec_uniform_plan(&m, &s, &p, &err), "%s", err.msg);
    p.interleave = 2;
    tcp_vs_loopback(&p, &m, port + 4, "tcp pp2 v2");
    tsl_model_free(&m);
}

/* One rank short of memory: both ranks report OOM, neither hangs or crashes. */
static void oom_agreed(void)
{
    tsl_err_t err = {0};
    tsl_model_t m;
    model(&m, 0);
    tsl_plan_t p;
    tsl_exec_plan_spec_t s = {2, 1, 1, false, false, 4, 2};
    CHECK(!tsl_exec_uniform_plan(&m, &s, &p, &err), "%s", err.msg);
    result_t res;
    int oom = 0;
    run_plan(&p, &m, &res, 1, 64 * 1024, &oom);
    CHECK(!res.ok && oom == 2, "both ranks report OOM (%d did)", oom);
    free_result(&res);
    tsl_model_free(&m);
}

static void refusals(void)
{
    tsl_err_t err = {0};
    tsl_model_t m;
    tsl_model_init(&m, "dec");
    tsl_layer_t dec = {.kind = TSL_LAYER_DECODER,
                       .seq_len = 8,
                       .hidden = 32,
                       .ffn_hidden = 64,
                       .heads = 4,
                       .cross_seq_len = 8};
    CHECK(!tsl_model_add_n(&m, &dec, 2, &err), "%s", err.msg);
    tsl_plan_t p;
    tsl_exec_rank_t r;
    tsl_exec_plan_spec_t s = {1, 1, 1, false, false, 2, 1};
    CHECK(!tsl_exec_uniform_plan(&m, &s, &p, &err), "%s", err.msg);
    CHECK(tsl_exec_rank_from_plan(&p, &m, 0, &r, &err) == -1 &&
              tsl_err_code(&err) == TSL_E_UNSUPPORTED && strstr(err.msg, "decoder"),
          "decoder refused: %s", err.msg);
    tsl_model_free(&m);
    model(&m, 0);
    s = (tsl_exec_plan_spec_t){1, 1, 2, false, false, 3, 1};
    CHECK(!tsl_exec_uniform_plan(&m, &s, &p, &err), "%s", err.msg);
    CHECK(tsl_exec_rank_from_plan(&p, &m, 1, &r, &err) == -1 && strstr(err.msg, "micro-batch 3"),
          "odd micro-batch over dp 2 refused: %s", err.msg);
    s = (tsl_exec_plan_spec_t){1, 8, 1, false, false, 2, 1};
    CHECK(!tsl_exec_uniform_plan(&m, &s, &p, &err), "%s", err.msg);
    CHECK(tsl_exec_rank_from_plan(&p, &m, 0, &r, &err) == -1 && strstr(err.msg, "heads"),
          "tp 8 over 4 heads refused: %s", err.msg);
    CHECK(tsl_exec_rank_from_plan(&p, &m, 9, &r, &err) == -1, "rank outside the plan refused");
    tsl_model_free(&m);
}

/* The collectives on three loopback ranks, groups by split: {0, 2} and {1} by parity,
 * keys reversing the order in the first. */
typedef struct coll_arg {
    tsl_loopback_world_t *w;
    int rank, ok;
} coll_arg_t;

static void *coll_main(void *p)
{
    coll_arg_t *a = p;
    tsl_err_t err = {0};
    tsl_commops_t *c = NULL;
    tsl_group_t *world = NULL, *par = NULL;
    float v[6], part[2], all[6];
    tsl_buf_t bv = {v, 6, TSL_DT_F32}, bp = {part, 2, TSL_DT_F32}, ba = {all, 6, TSL_DT_F32};
    a->ok = !tsl_comm_loopback_rank(a->w, a->rank, &c, &err) &&
            !c->group_split(c, 0, a->rank, &world, &err) &&
            !c->group_split(c, a->rank % 2, -a->rank, &par, &err);
    for (int i = 0; i < 6; i++)
        v[i] = (float)(10 * a->rank + i);
    a->ok = a->ok && !c->allreduce(c, world, &bv, NULL, &err) && v[0] == 30 && v[5] == 45;
    /* world sums: 30 + 3i; member me gets chunk me */
    a->ok = a->ok && !c->reduce_scatter(c, world, &bv, &bp, NULL, &err) &&
            part[0] == 3 * (30 + 6 * a->rank) && part[1] == 3 * (33 + 6 * a->rank);
    tsl_buf_t mine = {part, 2, TSL_DT_F32};
    a->ok = a->ok && !c->all_gather(c, world, &mine, &ba, NULL, &err) && all[0] == 90 &&
            all[5] == 3 * 45;
    a->ok = a->ok && c->group_size(par) == (a->rank % 2 ? 1 : 2) &&
            c->group_rank(par) == (a->rank == 0 && c->group_size(par) == 2 ? 1 : 0);
    a->ok = a->ok && !c->barrier(c, par, &err) && !c->barrier(c, world, &err);
    if (!a->ok)
        fprintf(stderr, "rank %d: %s\n", a->rank, err.msg);
    if (c) {
        c->group_free(c, world);
        c->group_free(c, par);
        c->destroy(c);
    }
    return NULL;
}

static void collectives(void)
{
    tsl_err_t err = {0};
    coll_arg_t a[3];
    pthread_t th[3];
    tsl_loopback_world_t *w = NULL;
    CHECK(!tsl_comm_loopback_world(3, &w, &err), "%s", err.msg);
    for (int k = 0; k < 3; k++) {
        a[k] = (coll_arg_t){w, k, 0};
        pthread_create(&th[k], NULL, coll_main, &a[k]);
    }
    for (int k = 0; k < 3; k++) {
        pthread_join(th[k], NULL);
        CHECK(a[k].ok, "rank %d: split, allreduce, reduce_scatter, all_gather, barrier", k);
    }
    tsl_comm_loopback_world_free(w);
}

/* A loopback rank that leaves wakes a peer waiting for it; what it sent still arrives. */
static void loopback_leave(void)
{
    tsl_err_t err = {0};
    tsl_loopback_world_t *w = NULL;
    tsl_commops_t *a = NULL, *b = NULL;
    float one = 1.0f, got = 0.0f;
    tsl_buf_t sb = {&one, 1, TSL_DT_F32}, rb = {&got, 1, TSL_DT_F32};
    CHECK(!tsl_comm_loopback_world(2, &w, &err) && !tsl_comm_loopback_rank(w, 0, &a, &err) &&
              !tsl_comm_loopback_rank(w, 1, &b, &err),
          "%s", err.msg);
    CHECK(!b->sendrecv(b, &sb, 0, NULL, -1, NULL, &err), "%s", err.msg);
    b->destroy(b);
    CHECK(!a->sendrecv(a, NULL, -1, &rb, 1, NULL, &err) && got == 1.0f, "sent before leaving");
    CHECK(a->sendrecv(a, NULL, -1, &rb, 1, NULL, &err) == -1 &&
              tsl_err_code(&err) == TSL_E_UNAVAILABLE && strstr(err.msg, "rank 1 left"),
          "then an error, not a hang: %s", err.msg);
    a->destroy(a);
    tsl_comm_loopback_world_free(w);
}

/* Plans the search returns for a small GPT on 4 GPUs: every rank of every plan either
 * maps to work or is refused as unsupported, and one accepted multi-device plan runs. */
static void searched_plans(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    gpt_tiny(&m, 4);
    tsl_search_result_t *res = search_on(&m, &c, "4xA100-80G", 8, 0, 0);
    const tsl_plan_t *plans[1 + TSL_BASELINE_COUNT], *run = NULL;
    int n = 0, accepted = 0;
    plans[n++] = &res->best;
    for (int b = 0; b < (int)TSL_BASELINE_COUNT; b++)
        if (res->baseline[b].valid)
            plans[n++] = &res->baseline[b];
    for (int k = 0; k < n; k++) {
        bool all = true;
        for (uint32_t r = 0; r < plans[k]->n_devices; r++) {
            tsl_exec_rank_t er;
            tsl_err_t e2 = {0};
            if (tsl_exec_rank_from_plan(plans[k], &m, r, &er, &e2)) {
                CHECK(tsl_err_code(&e2) == TSL_E_UNSUPPORTED, "plan %s rank %u: %s",
                      plans[k]->label, r, e2.msg);
                all = false;
                break;
            }
            tsl_exec_rank_free(&er);
        }
        accepted += all;
        if (all && plans[k]->n_devices > 1 && (!run || plans[k]->pp > run->pp))
            run = plans[k];
    }
    CHECK(accepted >= 1 && run, "%d of %d searched plans run", accepted, n);
    if (run) {
        printf("searched plans: %d of %d run here; running %s (pp %u, %u devices)\n", accepted, n,
               run->label, run->pp, run->n_devices);
        result_t got;
        int oom = 0;
        run_plan(run, &m, &got, -1, 0, &oom);
        CHECK(got.ok && isfinite(got.loss) && got.loss > 0,
              "plan %s (pp %u, %u devices) ran: "
              "loss %g",
              run->label, run->pp, run->n_devices, got.loss);
        free_result(&got);
    }
    free(res);
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

/* A plan by hand: pp stages of G devices, per_stage[k] layers each, layer i's strategy
 * parsed from strat[i] ("tp2-dp2+ckpt", innermost first). */
static void hand_plan(const tsl_model_t *m, uint32_t G, uint32_t pp, const uint32_t *per_stage,
                      const char *const *strat, uint32_t mb, uint32_t n_micro, tsl_plan_t *p)
{
    tsl_err_t err = {0};
    tsl_plan_init(p);
    p->valid = true;
    strcpy(p->label, "hand");
    p->pp = pp;
    p->n_devices = pp * G;
    p->n_layers = m->n_layers;
    p->micro_batch = mb;
    p->n_micro = n_micro;
    p->global_batch = mb * n_micro;
    for (uint32_t k = 0, at = 0; k < pp; k++) {
        p->stages[k] = (tsl_plan_stage_t){.first_layer = at,
                                          .n_layers = per_stage[k],
                                          .first_device = k * G,
                                          .n_devices = G,
                                          .inflight = pp - k < n_micro ? pp - k : n_micro};
        at += per_stage[k];
    }
    for (uint32_t i = 0; i < m->n_layers; i++)
        CHECK(!tsl_strategy_parse(strat[i], &p->layer[i], &err), "%s: %s", strat[i], err.msg);
}

/* How often each kind of move (forward and backward) appears among the ranks' layers. */
static void count_moves(const result_t *res, uint32_t fwd[3], uint32_t bwd[3])
{
    memset(fwd, 0, 3 * sizeof(uint32_t));
    memset(bwd, 0, 3 * sizeof(uint32_t));
    for (uint32_t k = 0; k < res->world; k++)
        for (uint32_t i = 0; i < res->r[k].n_layers; i++) {
            fwd[res->r[k].lay[i].in_fwd.kind]++;
            bwd[res->r[k].lay[i].in_bwd.kind]++;
        }
}

/* Runs the hand plan and compares it with ref; returns the moves it made. */
static void hand_vs(const tsl_model_t *m, const result_t *ref, uint32_t G, uint32_t pp,
                    const uint32_t *per_stage, const char *const *strat, uint32_t mb,
                    uint32_t n_micro, const char *what, uint32_t fwd[3], uint32_t bwd[3])
{
    tsl_plan_t p;
    result_t got;
    int oom = 0;
    hand_plan(m, G, pp, per_stage, strat, mb, n_micro, &p);
    run_plan(&p, m, &got, -1, 0, &oom);
    compare(ref, &got, what, false);
    count_moves(&got, fwd, bwd);
    free_result(&got);
}

/* Layers of one stage of 4 ranks in five layouts, TP2×DP2 → DP4 → TP4 → SDP4 → TP2×DP2
 * (slices forward where the next layer's samples are a part of the rank's, gathers
 * where they are more; backward the reverse), checkpointing on two; then layouts
 * whose samples sit on other ranks (data innermost against TP innermost: gathers of
 * the whole micro-batch); against one rank. */
static void layouts_in_stage(void)
{
    tsl_model_t m;
    model_enc(&m, 0, 0, false, 5);
    result_t ref;
    uint32_t fwd[3], bwd[3], one[] = {5};
    run_spec(&m, (tsl_exec_plan_spec_t){1, 1, 1, false, false, 4, 2}, &ref);
    CHECK(ref.ok && isfinite(ref.loss), "five-layer reference loss %g", ref.loss);
    const char *a[] = {"tp2-dp2", "dp4+ckpt", "tp4", "sdp4+ckpt", "tp2-dp2"};
    hand_vs(&m, &ref, 4, 1, one, a, 4, 2, "tp2-dp2 > dp4 > tp4 > sdp4 > tp2-dp2", fwd, bwd);
    CHECK(fwd[TSL_EXEC_MOVE_SLICE] && fwd[TSL_EXEC_MOVE_GATHER] && bwd[TSL_EXEC_MOVE_SLICE] &&
              bwd[TSL_EXEC_MOVE_GATHER],
          "slices and gathers both ways (forward %u/%u, backward %u/%u)", fwd[1], fwd[2], bwd[1],
          bwd[2]);
    const char *b[] = {"dp2-tp2", "tp2-dp2", "dp2-tp2+ckpt", "dp4", "tp4"};
    hand_vs(&m, &ref, 4, 1, one, b, 4, 2, "dp2-tp2 > tp2-dp2 > dp2-tp2 > dp4 > tp4", fwd, bwd);
    CHECK(fwd[TSL_EXEC_MOVE_GATHER] >= 4 * 4, "every change gathers (%u gathers)", fwd[2]);
    free_result(&ref);
    tsl_model_free(&m);
}

/* pp 2 whose stages differ in layout (the second receives at the same position and
 * moves to its first layer's layout), with a vocabulary-parallel embedding and head of
 * their own TP degrees; tied: the head shares the table in one stage, or in the last
 * stage sums its copy's gradient with the embedding's at the same position. */
static void layouts_across_stages(void)
{
    tsl_model_t m, mt;
    uint32_t fwd[3], bwd[3], two[] = {3, 3}, six[] = {6};
    model_with(&m, 450, 8, false);
    model_with(&mt, 450, 8, true);
    result_t ref, reft;
    run_spec(&m, (tsl_exec_plan_spec_t){1, 1, 1, false, false, 4, 4}, &ref);
    run_spec(&mt, (tsl_exec_plan_spec_t){1, 1, 1, false, false, 4, 4}, &reft);
    const char *a[] = {"tp4", "tp2-dp2+ckpt", "dp4", "tp4", "sdp4", "dp2-tp2"};
    hand_vs(&m, &ref, 4, 2, two, a, 4, 4, "pp2: tp4 tp2-dp2 dp4 | tp4 sdp4 dp2-tp2 (vocab)", fwd,
            bwd);
    const char *b[] = {"tp2-dp2", "dp4", "tp4+ckpt", "sdp4", "dp2-tp2", "tp2-dp2"};
    hand_vs(&mt, &reft, 4, 1, six, b, 4, 4, "tied in a stage: tp2-dp2 ... tp2-dp2", fwd, bwd);
    const char *c[] = {"tp2-dp2", "dp4", "tp4", "sdp4", "dp2-tp2+ckpt", "tp2-dp2"};
    hand_vs(&mt, &reft, 4, 2, two, c, 4, 4, "tied pp2: tp2-dp2 dp4 tp4 | sdp4 dp2-tp2 tp2-dp2", fwd,
            bwd);
    free_result(&ref);
    free_result(&reft);
    tsl_model_free(&m);
    tsl_model_free(&mt);
}

/* What layout changes still refuse, on every rank: a tied head in another stage whose
 * TP index differs from the embedding's at the same position; neighbouring stages of
 * different device counts; a tied head in the embedding's stage in another layout. */
static void layout_refusals(void)
{
    tsl_err_t err = {0};
    tsl_model_t m;
    tsl_plan_t p;
    tsl_exec_rank_t r;
    uint32_t two[] = {3, 3}, six[] = {6};
    model_with(&m, 450, 8, true);
    const char *a[] = {"tp2-dp2", "dp4", "tp4", "sdp4", "tp4", "dp2-tp2"};
    hand_plan(&m, 4, 2, two, a, 4, 4, &p);
    for (uint32_t k = 0; k < 8; k++)
        CHECK(tsl_exec_rank_from_plan(&p, &m, k, &r, &err) == -1 &&
                  tsl_err_code(&err) == TSL_E_UNSUPPORTED && strstr(err.msg, "TP degree and index"),
              "rank %u: a tied head on other TP indices than the embedding refused: %s", k,
              err.msg);
    hand_plan(&m, 4, 1, six, a, 4, 4, &p);
    CHECK(tsl_exec_rank_from_plan(&p, &m, 2, &r, &err) == -1 &&
              strstr(err.msg, "embedding's layout"),
          "a tied head in the stage in another layout refused: %s", err.msg);
    const char *b[] = {"dp2", "dp2", "dp2", "dp4", "dp4", "dp4"};
    hand_plan(&m, 4, 2, two, b, 4, 4, &p);
    p.stages[0].n_devices = 2;
    p.stages[1].first_device = 2;
    p.n_devices = 6;
    for (uint32_t k = 0; k < 6; k++)
        CHECK(tsl_exec_rank_from_plan(&p, &m, k, &r, &err) == -1 &&
                  tsl_err_code(&err) == TSL_E_UNSUPPORTED && strstr(err.msg, "differ in devices"),
              "rank %u: stages of 2 and 4 devices refused: %s", k, err.msg);
    tsl_model_free(&m);
}

/* The search's plan for a small GPT on 8 GPUs mixes layouts inside its stage (DP 8 on
 * the embedding and head, TP × DP on the blocks); it runs on 8 ranks and computes
 * what one rank does. (The executor runs "+sp" and "+zero1" levels as plain TP and DP:
 * the same function.) Untied, so that the head's layout is free (a tied head keeps the
 * embedding's; test_search.c checks the searched plans keep it). */
static void searched_mixed(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    gpt_tiny_tied(&m, 4, false);
    tsl_search_result_t *res = search_on(&m, &c, "8xA100-80G", 8, 0, 0);
    const tsl_plan_t *p = &res->best;
    uint32_t changes = 0;
    for (uint32_t s = 0; s < p->pp; s++)
        for (uint32_t i = p->stages[s].first_layer + 1;
             i < p->stages[s].first_layer + p->stages[s].n_layers; i++)
            changes += !tsl_strategy_same_layout(&p->layer[i - 1], &p->layer[i]);
    char lay[2][64];
    tsl_strategy_format(&p->layer[0], lay[0], sizeof(lay[0]));
    tsl_strategy_format(&p->layer[1], lay[1], sizeof(lay[1]));
    printf("searched on 8 GPUs: pp %u, micro-batch %u × %u, %u layout changes (%s, %s, ...)\n",
           p->pp, p->micro_batch, p->n_micro, changes, lay[0], lay[1]);
    CHECK(p->n_devices == 8 && !p->sublayer && changes >= 1,
          "the search mixes layouts in a stage (%u changes)", changes);
    if (p->n_devices == 8 && !p->sublayer) {
        result_t ref, got;
        int oom = 0;
        run_spec(&m, (tsl_exec_plan_spec_t){1, 1, 1, false, false, p->micro_batch, p->n_micro},
                 &ref);
        run_plan(p, &m, &got, -1, 0, &oom);
        compare(&ref, &got, "searched 8-GPU plan", false);
        free_result(&ref);
        free_result(&got);
    }
    free(res);
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

/* ---- Llama-family layers (RMSNorm, no biases, SwiGLU, grouped-query attention,
 * sliding window) ---- */

/* The Llama preset family at tiny shapes: a token embedding (RoPE: no position
 * table), 4 layers of 4 query heads and 2 K/V heads, FFN 48 gated, an LM head;
 * window > 0 makes it Mistral-like (a sliding window of that many keys). */
static void model_llama(tsl_model_t *m, uint32_t window)
{
    tsl_err_t err = {0};
    tsl_arch_spec_t sp = {.arch = TSL_ARCH_LLAMA,
                          .layers = 4,
                          .hidden = 32,
                          .ffn_hidden = 48,
                          .heads = 4,
                          .kv_heads = 2,
                          .seq_len = 8,
                          .vocab = 40,
                          .attn_window = window,
                          .gated_ffn = true};
    CHECK(!tsl_model_build(&sp, "tiny-llama", m, &err), "%s", err.msg);
    const tsl_layer_t *L = &m->layers[1];
    CHECK(m->n_layers == 6 && L->rms_norm && L->no_bias && L->gated_ffn && L->kv_heads == 2 &&
              L->causal,
          "the preset builds Llama layers");
}

/* One rank against TP 2 (K/V heads split too), pp 2 (bitwise), pp 2 × tp 2, dp 2, SDP
 * and everything with checkpointing. */
static void llama_splits(void)
{
    tsl_model_t m;
    model_llama(&m, 0);
    result_t ref;
    run_spec(&m, (tsl_exec_plan_spec_t){1, 1, 1, false, false, 4, 4}, &ref);
    CHECK(ref.ok && isfinite(ref.loss) && ref.loss > 0, "llama reference loss %g", ref.loss);
    case_vs(&m, &ref, (tsl_exec_plan_spec_t){2, 1, 1, false, true, 4, 4}, "llama pp2 ckpt", true);
    case_vs(&m, &ref, (tsl_exec_plan_spec_t){1, 2, 1, false, false, 4, 4}, "llama tp2", false);
    case_vs(&m, &ref, (tsl_exec_plan_spec_t){2, 2, 1, false, false, 4, 4}, "llama pp2 tp2", false);
    case_vs(&m, &ref, (tsl_exec_plan_spec_t){1, 1, 2, false, false, 4, 4}, "llama dp2", false);
    case_vs(&m, &ref, (tsl_exec_plan_spec_t){1, 2, 2, true, true, 4, 4}, "llama tp2 sdp2 ckpt",
            false);
    case_vs(&m, &ref, (tsl_exec_plan_spec_t){2, 2, 2, false, true, 4, 4}, "llama pp2 tp2 dp2 ckpt",
            false);
    free_result(&ref);
    tsl_model_free(&m);
}

/* A sliding window of 3 keys over 8 tokens: one chunk of the whole sequence (every key
 * computed, the window masked) against chunks of 2 query rows (whole key blocks
 * skipped), split pp 2 × tp 2 × dp 2 with checkpointing, and the unfused attention. */
static void llama_window(void)
{
    tsl_err_t err = {0};
    tsl_model_t m, mu;
    model_llama(&m, 3);
    model_llama(&mu, 3);
    CHECK(!tsl_model_set_unfused_attn(&mu, true, &err), "%s", err.msg);
    result_t ref, plain;
    attn_chunk = 8;
    run_spec(&m, (tsl_exec_plan_spec_t){1, 1, 1, false, false, 4, 4}, &ref);
    CHECK(ref.ok && isfinite(ref.loss) && ref.loss > 0, "windowed loss %g", ref.loss);
    tsl_model_t mp;
    model_llama(&mp, 0);
    run_spec(&mp, (tsl_exec_plan_spec_t){1, 1, 1, false, false, 4, 4}, &plain);
    CHECK(plain.loss != ref.loss, "the window changes the loss (%.9g, %.9g)", plain.loss, ref.loss);
    free_result(&plain);
    tsl_model_free(&mp);
    attn_chunk = 2;
    case_vs(&m, &ref, (tsl_exec_plan_spec_t){1, 1, 1, false, false, 4, 4}, "window, chunks of 2",
            false);
    case_vs(&m, &ref, (tsl_exec_plan_spec_t){2, 2, 2, false, true, 4, 4},
            "window, chunks of 2, pp2 tp2 dp2 ckpt", false);
    attn_chunk = 0;
    case_vs(&mu, &ref, (tsl_exec_plan_spec_t){1, 1, 1, false, false, 4, 4}, "window, unfused",
            false);
    free_result(&ref);
    tsl_model_free(&m);
    tsl_model_free(&mu);
}

/* Llama blocks as sub-layers (attention and FFN layers of their own, as a sub-layer
 * plan runs them): one rank against pp 2 (the stages cut between an attention and an
 * FFN block, bitwise) and pp 2 × tp 2 with checkpointing. */
static void llama_sublayers(void)
{
    tsl_err_t err = {0};
    tsl_model_t m;
    tsl_layer_t a = {.kind = TSL_LAYER_ATTENTION,
                     .seq_len = 8,
                     .hidden = 32,
                     .heads = 4,
                     .kv_heads = 2,
                     .attn_window = 5,
                     .rms_norm = true,
                     .no_bias = true,
                     .no_dropout = true,
                     .causal = true};
    tsl_layer_t f = {.kind = TSL_LAYER_FFN,
                     .seq_len = 8,
                     .hidden = 32,
                     .ffn_hidden = 48,
                     .gated_ffn = true,
                     .rms_norm = true,
                     .no_bias = true,
                     .no_dropout = true};
    tsl_model_init(&m, "llama-sub");
    for (int k = 0; k < 3; k++)
        CHECK(!tsl_model_add(&m, &a, &err) && !tsl_model_add(&m, &f, &err), "%s", err.msg);
    result_t ref;
    attn_chunk = 2;
    run_spec(&m, (tsl_exec_plan_spec_t){1, 1, 1, false, false, 4, 4}, &ref);
    CHECK(ref.ok && isfinite(ref.loss) && ref.loss > 0, "sub-layer loss %g", ref.loss);
    case_vs(&m, &ref, (tsl_exec_plan_spec_t){2, 1, 1, false, false, 4, 4}, "llama sub-layers pp2",
            true);
    case_vs(&m, &ref, (tsl_exec_plan_spec_t){2, 2, 1, false, true, 4, 4},
            "llama sub-layers pp2 tp2 ckpt", false);
    attn_chunk = 0;
    free_result(&ref);
    tsl_model_free(&m);
}

/* The search's best plan for the tiny Llama on 4 GPUs maps to ranks and runs, giving
 * one rank's loss and gradients (within 1e-5) for the same micro-batches. */
static void llama_searched(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    model_llama(&m, 0);
    tsl_search_result_t *res = search_on(&m, &c, "4xA100-80G", 8, 0, 0);
    const tsl_plan_t *p = &res->best;
    char lay[64];
    tsl_strategy_format(&p->layer[1], lay, sizeof(lay));
    printf("llama searched on 4 GPUs: pp %u, micro-batch %u × %u, layer 1 %s%s\n", p->pp,
           p->micro_batch, p->n_micro, lay, p->sublayer ? ", sub-layer" : "");
    result_t got;
    int oom = 0;
    run_plan(p, &m, &got, -1, 0, &oom);
    CHECK(got.ok && isfinite(got.loss) && got.loss > 0, "the searched Llama plan ran: loss %g",
          got.loss);
    if (!p->sublayer) {
        result_t ref;
        run_spec(&m, (tsl_exec_plan_spec_t){1, 1, 1, false, false, p->micro_batch, p->n_micro},
                 &ref);
        compare(&ref, &got, "searched Llama plan", false);
        free_result(&ref);
    }
    free_result(&got);
    free(res);
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

/* ---- interleaved 1F1B ---- */

/* Megatron-LM's loop (forward_backward_pipelining_with_interleaving) written out: stage
 * s's ops in order, fwd[n] and the index k[n] of the forward or backward. */
static uint32_t megatron_order(uint32_t P, uint32_t s, uint32_t v, uint32_t m, bool *fwd,
                               uint32_t *k)
{
    uint32_t total = m * v, w = (P - s - 1) * 2 + (v - 1) * P, n = 0;
    w = w < total ? w : total;
    for (uint32_t i = 0; i < w; i++)
        fwd[n] = true, k[n++] = i;
    for (uint32_t i = 0; i < total - w; i++) {
        fwd[n] = true, k[n++] = w + i;
        fwd[n] = false, k[n++] = i;
    }
    for (uint32_t i = total - w; i < total; i++)
        fwd[n] = false, k[n++] = i;
    return n;
}

/* One stage's calls against Megatron's order, and each of its sends against its
 * neighbour's receive at the same tick (call i of stage s is tick i + s). */
static void il_stage(uint32_t P, uint32_t s, uint32_t v, uint32_t m, uint32_t *sends,
                     uint32_t *recvs)
{
    tsl_exec_il_t il, nb;
    tsl_exec_il_init(&il, P, s, v, m);
    bool fwd[2 * 64], mf[2 * 64];
    uint32_t k[2 * 64], mk[2 * 64], n = 0, mn = megatron_order(P, s, v, m, mf, mk);
    for (uint32_t i = 0; i + 1 < il.n_calls; i++) {
        if (i < il.total)
            fwd[n] = true, k[n++] = i;
        if (i >= il.warm && i - il.warm < il.total)
            fwd[n] = false, k[n++] = i - il.warm;
    }
    CHECK(n == mn && !memcmp(k, mk, n * sizeof(*k)) && !memcmp(fwd, mf, n * sizeof(*fwd)),
          "P %u v %u m %u stage %u: Megatron's order", P, v, m, s);
    for (uint32_t i = 0; i < il.n_calls; i++) {
        tsl_exec_il_call_t cl, o;
        tsl_exec_il_call(&il, i, &cl);
        *recvs += (cl.recv_f >= 0) + (cl.recv_b >= 0);
        int64_t legs[2] = {cl.send_f, cl.send_b};
        for (int d = 0; d < 2; d++) {
            if (legs[d] < 0)
                continue;
            (*sends)++;
            uint32_t kk = (uint32_t)legs[d], c = tsl_exec_il_chunk(&il, kk, d == 0);
            uint32_t to = d == 0 ? (s + 1) % P : (s + P - 1) % P;
            int64_t at = (int64_t)i + s - to; /* the receiver's call at the same tick */
            tsl_exec_il_init(&nb, P, to, v, m);
            bool ok = at >= 0 && at < nb.n_calls;
            if (ok)
                tsl_exec_il_call(&nb, (uint32_t)at, &o);
            int64_t got = ok ? (d == 0 ? o.recv_f : o.recv_b) : -1;
            uint32_t want_c = d == 0 ? c + (to == 0) : c - (s == 0);
            CHECK(got >= 0 && tsl_exec_il_chunk(&nb, (uint32_t)got, d == 0) == want_c &&
                      tsl_exec_il_micro(&nb, (uint32_t)got) == tsl_exec_il_micro(&il, kk),
                  "P %u v %u m %u: stage %u call %u sends %s of chunk %u micro-batch %u; stage "
                  "%u receives it at the same tick",
                  P, v, m, s, i, d ? "a gradient" : "an activation", c, tsl_exec_il_micro(&il, kk),
                  to);
        }
    }
    uint32_t *slot_of = calloc(il.total, sizeof(*slot_of)), held = tsl_exec_il_slots(&il, slot_of);
    uint32_t planned = tsl_pipeline_inflight_interleaved(s, P, m, v);
    CHECK((held + v - 1) / v == planned,
          "P %u v %u m %u stage %u: %u chunk stashes in flight, the planner's %u micro-batches", P,
          v, m, s, held, planned);
    free(slot_of);
}

/* Every stage runs Megatron's order; every send meets its receive at the same tick. */
static void il_schedule(void)
{
    const uint32_t Ps[] = {2, 3, 4, 8}, vs[] = {2, 3, 4};
    for (size_t a = 0; a < 4; a++)
        for (size_t b = 0; b < 3; b++)
            for (uint32_t mult = 1; mult <= 3; mult++) {
                uint32_t P = Ps[a], v = vs[b], m = P * mult, sends = 0, recvs = 0;
                if (m * v > 64)
                    continue;
                for (uint32_t s = 0; s < P; s++)
                    il_stage(P, s, v, m, &sends, &recvs);
                /* each stage sends and receives all but the model's ends */
                CHECK(sends == recvs && sends == 2 * m * (P * v - 1),
                      "P %u v %u m %u: %u sends, %u receives", P, v, m, sends, recvs);
            }
}

/* A uniform plan of the spec, run with v model chunks per stage. */
static void run_il(const tsl_model_t *m, tsl_exec_plan_spec_t s, uint32_t v, result_t *res)
{
    tsl_err_t err = {0};
    tsl_plan_t p;
    int oom = 0;
    CHECK(!tsl_exec_uniform_plan(m, &s, &p, &err), "%s", err.msg);
    p.interleave = v;
    run_plan(&p, m, res, -1, 0, &oom);
}

static void il_vs(const tsl_model_t *m, const result_t *ref, tsl_exec_plan_spec_t s, uint32_t v,
                  const char *what, bool bitwise)
{
    result_t got;
    run_il(m, s, v, &got);
    compare(ref, &got, what, bitwise);
    free_result(&got);
}

/* Interleaved splits against one rank: pp 2 and 4 × 2 chunks, 4 and 8 micro-batches,
 * checkpointing, dp 2; bitwise for pure pipelines (each layer sums its micro-batches in
 * order). Without vocabulary layers, pp 2 × 2 chunks of a 4-layer model puts layers 0
 * and 2 on stage 0, 1 and 3 on stage 1 (chunk c of stage s: virtual stage 2c + s). */
static void il_splits(uint32_t vocab, bool tied)
{
    tsl_model_t m4, m8;
    model_with(&m4, vocab, 0, tied);
    model_enc(&m8, vocab, 0, tied, 8);
    result_t r44, r48, r84, r88, got;
    run_spec(&m4, (tsl_exec_plan_spec_t){1, 1, 1, false, false, 2, 4}, &r44);
    run_spec(&m4, (tsl_exec_plan_spec_t){1, 1, 1, false, false, 2, 8}, &r48);
    run_spec(&m8, (tsl_exec_plan_spec_t){1, 1, 1, false, false, 2, 4}, &r84);
    run_spec(&m8, (tsl_exec_plan_spec_t){1, 1, 1, false, false, 2, 8}, &r88);
    bool bw = !tied; /* a tied head's copy sums its gradient with the table's */
    run_il(&m4, (tsl_exec_plan_spec_t){2, 1, 1, false, false, 2, 4}, 2, &got);
    compare(&r44, &got, "pp2 v2 m4", bw);
    if (!vocab)
        CHECK(got.r[0].n_layers == 2 && got.r[0].index[0] == 0 && got.r[0].index[1] == 2 &&
                  got.r[1].n_layers == 2 && got.r[1].index[0] == 1 && got.r[1].index[1] == 3,
              "pp2 v2: stage 0 holds layers 0 and 2, stage 1 layers 1 and 3");
    else
        CHECK(got.r[0].lay[0].kind == TSL_LAYER_EMBEDDING &&
                  got.r[1].lay[got.r[1].n_layers - 1].kind == TSL_LAYER_HEAD,
              "pp2 v2: the embedding in the first virtual stage, the head in the last");
    free_result(&got);
    il_vs(&m4, &r48, (tsl_exec_plan_spec_t){2, 1, 1, false, false, 2, 8}, 2, "pp2 v2 m8", bw);
    il_vs(&m8, &r84, (tsl_exec_plan_spec_t){4, 1, 1, false, false, 2, 4}, 2, "pp4 v2 m4", bw);
    il_vs(&m8, &r88, (tsl_exec_plan_spec_t){4, 1, 1, false, false, 2, 8}, 2, "pp4 v2 m8", bw);
    il_vs(&m4, &r44, (tsl_exec_plan_spec_t){2, 1, 1, false, true, 2, 4}, 2, "pp2 v2 ckpt", bw);
    il_vs(&m4, &r44, (tsl_exec_plan_spec_t){2, 1, 2, false, false, 2, 4}, 2, "pp2 v2 dp2", false);
    il_vs(&m8, &r88, (tsl_exec_plan_spec_t){2, 1, 1, false, false, 2, 8}, 4, "pp2 v4 m8", bw);
    result_t *refs[] = {&r44, &r48, &r84, &r88};
    for (size_t k = 0; k < 4; k++)
        free_result(refs[k]);
    tsl_model_free(&m4);
    tsl_model_free(&m8);
}

/* The stash the interleaved schedule holds (the cpu ops' peak bytes, counted) follows
 * the planner's in-flight count: pp 2 × 2 chunks of one layer each, 2, 4 and 8
 * micro-batches. Stage 0 holds all 4 chunk stashes of m = 2 (the planner: 2
 * micro-batches), W + 1 = 5 of m ≥ 4 (the planner: ⌈5 / 2⌉ = 3 micro-batches, half a
 * micro-batch more than held); stage 1 W + 1 = 3 (2). A slot: the chunk's input and
 * output and the layer's stash. */
static void il_memory(void)
{
    tsl_model_t m;
    model(&m, 0);
    const uint32_t ms[] = {2, 4, 8};
    uint64_t peak[3][2];
    uint32_t held[3][2];
    size_t slot = 0;
    for (int k = 0; k < 3; k++) {
        result_t res;
        run_il(&m, (tsl_exec_plan_spec_t){2, 1, 1, false, false, 2, ms[k]}, 2, &res);
        CHECK(res.ok, "pp2 v2 m%u ran", ms[k]);
        for (uint32_t s = 0; s < 2; s++) {
            tsl_exec_il_t il;
            tsl_exec_il_init(&il, 2, s, 2, ms[k]);
            uint32_t *of = calloc(il.total, sizeof(*of));
            held[k][s] = tsl_exec_il_slots(&il, of);
            free(of);
            peak[k][s] = res.r[s].peak;
            CHECK((held[k][s] + 1) / 2 == tsl_pipeline_inflight_interleaved(s, 2, ms[k], 2),
                  "m %u stage %u: %u chunk stashes, the planner's %u micro-batches", ms[k], s,
                  held[k][s], tsl_pipeline_inflight_interleaved(s, 2, ms[k], 2));
        }
        tsl_exec_stash_t st;
        tsl_exec_layer_t l = res.r[0].lay[0];
        tsl_exec_stash_layout(&l, 1, l.b, &st);
        slot = sizeof(float) * (2 * (size_t)l.b * l.seq * l.hidden + st.n + st.n32);
        free_result(&res);
    }
    CHECK(held[0][0] == 4 && held[1][0] == 5 && held[2][0] == 5 && held[0][1] == 3 &&
              held[2][1] == 3,
          "stage 0 holds 4, 5, 5 chunk stashes; stage 1 3");
    printf("interleaved pp2 v2 stash: m 2/4/8: stage 0 %u/%u/%u chunk slots, peak %llu/%llu/%llu; "
           "stage 1 %u/%u/%u, peak %llu/%llu/%llu; a slot %zu bytes\n",
           held[0][0], held[1][0], held[2][0], (unsigned long long)peak[0][0],
           (unsigned long long)peak[1][0], (unsigned long long)peak[2][0], held[0][1], held[1][1],
           held[2][1], (unsigned long long)peak[0][1], (unsigned long long)peak[1][1],
           (unsigned long long)peak[2][1], slot);
    for (int k = 1; k < 3; k++)
        for (uint32_t s = 0; s < 2; s++)
            CHECK(peak[k][s] - peak[0][s] == (uint64_t)(held[k][s] - held[0][s]) * slot,
                  "m %u stage %u: peak %llu bytes, m 2 %llu: %u more stashes of %zu bytes", ms[k],
                  s, (unsigned long long)peak[k][s], (unsigned long long)peak[0][s],
                  held[k][s] - held[0][s], slot);
    tsl_model_free(&m);
}

/* Interleaved pp 2 × 2 chunks of 4 ranks whose layers differ in layout: virtual
 * stages (embedding, block 1) | (block 2) | (block 3) | (block 4, head) on stages 0, 1,
 * 0, 1, so block 3 on stage 0 receives block 2's output across the wrap and moves it
 * from dp4 to tp4 (a gather; backward a slice); with a head tied to the embedding, its
 * copy in the last virtual stage. Against one rank. */
static void il_layouts(void)
{
    tsl_model_t m, mt;
    uint32_t two[] = {3, 3};
    model_with(&m, 450, 8, false);
    model_with(&mt, 450, 8, true);
    const char *a[] = {"tp4", "tp2-dp2+ckpt", "dp4", "tp4", "sdp4", "dp2-tp2"};
    const char *c[] = {"tp2-dp2", "dp4", "tp4", "sdp4", "dp2-tp2+ckpt", "tp2-dp2"};
    const tsl_model_t *ms[] = {&m, &mt};
    const char *const *strat[] = {a, c};
    for (int k = 0; k < 2; k++) {
        result_t ref, got;
        tsl_plan_t p;
        int oom = 0;
        run_spec(ms[k], (tsl_exec_plan_spec_t){1, 1, 1, false, false, 4, 4}, &ref);
        hand_plan(ms[k], 4, 2, two, strat[k], 4, 4, &p);
        p.interleave = 2;
        run_plan(&p, ms[k], &got, -1, 0, &oom);
        compare(&ref, &got, k ? "interleaved pp2 v2, tied head, layouts" : "interleaved layouts",
                false);
        uint32_t wrap_gather = 0;
        for (uint32_t r = 0; r < 4; r++)
            for (uint32_t i = 0; i < got.r[r].n_layers; i++)
                wrap_gather += got.r[r].index[i] == 3 && got.r[r].lay[i].in_fwd.kind != 0;
        CHECK(k || wrap_gather == 4, "block 3 moves what it receives across the wrap (%u ranks)",
              wrap_gather);
        free_result(&ref);
        free_result(&got);
    }
    tsl_model_free(&m);
    tsl_model_free(&mt);
}

/* An interleaved plan the search chooses (a GPT of 8 blocks with an embedding and a
 * tied head on 4 GPUs, pp 2 fixed: it interleaves 4 chunks per stage), run on its 4
 * ranks against one rank. Whole layers: with sub-layer stages the search now takes 8
 * chunks of an attention or FFN block each, ahead of every whole-layer plan. */
static void searched_interleaved(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_request_t rq;
    gpt_tiny(&m, 8);
    tsl_request_init(&rq);
    rq.global_batch = 8;
    rq.pp = 2;
    rq.top_k = 16;
    rq.no_sublayer = true;
    tsl_search_result_t *res = search_req_on(&m, &c, "4xA100-80G", &rq);
    const tsl_plan_t *p = NULL;
    for (uint32_t k = 0; k < res->n_top && !p; k++)
        if (res->top[k].interleave > 1 && !res->top[k].sublayer)
            p = &res->top[k];
    CHECK(p != NULL, "the search interleaves a plan of whole layers (%u plans)", res->n_top);
    if (p) {
        char lay[64];
        tsl_strategy_format(&p->layer[1], lay, sizeof(lay));
        printf("searched interleaved: pp %u × v %u, micro-batch %u × %u, %s\n", p->pp,
               p->interleave, p->micro_batch, p->n_micro, lay);
        result_t ref, got;
        int oom = 0;
        run_spec(&m, (tsl_exec_plan_spec_t){1, 1, 1, false, false, p->micro_batch, p->n_micro},
                 &ref);
        run_plan(p, &m, &got, -1, 0, &oom);
        compare(&ref, &got, "searched interleaved plan", false);
        free_result(&ref);
        free_result(&got);
    }
    free(res);
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

static void refused(tsl_model_t *m, uint32_t tp, const char *want, const char *what)
{
    tsl_err_t err = {0};
    tsl_plan_t p;
    tsl_exec_rank_t r;
    tsl_exec_plan_spec_t s = {1, tp, 1, false, false, 2, 1};
    CHECK(!tsl_exec_uniform_plan(m, &s, &p, &err), "%s", err.msg);
    CHECK(tsl_exec_rank_from_plan(&p, m, 0, &r, &err) == -1 &&
              tsl_err_code(&err) == TSL_E_UNSUPPORTED && strstr(err.msg, want),
          "%s refused: %s", what, err.msg);
}

/* What is left refused of the Llama family's neighbours: K/V heads a TP degree does not
 * split (K/V heads that do not group the query heads the model itself refuses). */
static void llama_refusals(void)
{
    tsl_err_t err = {0};
    tsl_model_t m;
    model_llama(&m, 0);
    refused(&m, 4, "2 K/V heads do not group 4 query heads and split 4 ways", "tp 4 over 2 K/V");
    tsl_model_free(&m);
    (void)err;
}

/* The Llama layer of llama_peak: seq 64, h 64, FFN 96 gated, 4 query / 2 K/V heads. */
static tsl_layer_t llama_peak_layer(void)
{
    return (tsl_layer_t){.kind = TSL_LAYER_ENCODER,
                         .seq_len = 64,
                         .hidden = 64,
                         .ffn_hidden = 96,
                         .heads = 4,
                         .kv_heads = 2,
                         .gated_ffn = true,
                         .rms_norm = true,
                         .no_bias = true,
                         .no_dropout = true,
                         .causal = true};
}

static void llama_peak_of(uint32_t n, uint64_t *peak, uint64_t *states, tsl_layer_t *out)
{
    tsl_layer_t l = llama_peak_layer();
    peak_of(&l, n, peak, states, out);
}

/* What one more Llama layer adds to the peak beyond its model states is its
 * activations: the layer input, the stash (norm outputs, Q | K | V, the context, the
 * FFN's gate | up and its SwiGLU output) and the two F32 RMS statistics per token.
 * The planner's count (act_repl + act_shard, 2-byte elements, the statistics left
 * out) is the same tensors: on cpu (F32) exactly twice it plus 8 bytes a token. */
static void llama_peak(void)
{
    uint64_t p1, s1, p2, s2;
    tsl_layer_t l;
    llama_peak_of(1, &p1, &s1, &l);
    llama_peak_of(2, &p2, &s2, &l);
    uint64_t act = (p2 - s2) - (p1 - s1), b = 2, T = b * l.seq_len;
    uint64_t planned = b * (l.act_repl_bytes + l.act_shard_bytes);
    printf("one Llama layer (s 64, h 64, f 96 gated, 4/2 heads, b 2): cpu activation bytes %llu, "
           "planner %llu (2-byte) -> %llu in F32 + %llu of F32 statistics\n",
           (unsigned long long)act, (unsigned long long)planned, (unsigned long long)(2 * planned),
           (unsigned long long)(8 * T));
    CHECK(act == 2 * planned + 8 * T, "a Llama layer's activations: %llu bytes, planned %llu",
          (unsigned long long)act, (unsigned long long)(2 * planned + 8 * T));
}

/* Interleaved plans the executor refuses, naming the numbers. */
static void il_refusals(void)
{
    tsl_err_t err = {0};
    tsl_model_t m;
    model(&m, 0);
    tsl_plan_t p;
    tsl_exec_rank_t r;
    CHECK(
        !tsl_exec_uniform_plan(&m, &(tsl_exec_plan_spec_t){2, 1, 1, false, false, 2, 3}, &p, &err),
        "%s", err.msg);
    p.interleave = 2;
    CHECK(tsl_exec_rank_from_plan(&p, &m, 0, &r, &err) == -1 &&
              tsl_err_code(&err) == TSL_E_UNSUPPORTED && strstr(err.msg, "n_micro 3") &&
              strstr(err.msg, "pp 2"),
          "3 micro-batches over pp 2 interleaved refused: %s", err.msg);
    tsl_model_free(&m);
    model_enc(&m, 24, 0, false, 2); /* embedding, 2 blocks, head: stage 0 one block */
    CHECK(
        !tsl_exec_uniform_plan(&m, &(tsl_exec_plan_spec_t){2, 1, 1, false, false, 2, 2}, &p, &err),
        "%s", err.msg);
    p.interleave = 2;
    CHECK(tsl_exec_rank_from_plan(&p, &m, 1, &r, &err) == -1 &&
              tsl_err_code(&err) == TSL_E_UNSUPPORTED && strstr(err.msg, "without a layer"),
          "a chunk without a layer refused: %s", err.msg);
    tsl_model_free(&m);
}

/* One plan-level field set on a plan the executor runs: refused by name, code
 * TSL_E_UNSUPPORTED, by tsl_plan_exec_scope and by tsl_exec_rank_from_plan alike. */
static void scope_refused(const tsl_plan_t *p, const tsl_model_t *m, const char *want)
{
    tsl_err_t err = {0};
    tsl_exec_rank_t r;
    CHECK(tsl_plan_exec_scope(p, &err) == -1 && tsl_err_code(&err) == TSL_E_UNSUPPORTED &&
              strstr(err.msg, want),
          "scope refuses '%s': %s", want, err.msg);
    err = (tsl_err_t){0};
    CHECK(tsl_exec_rank_from_plan(p, m, 0, &r, &err) == -1 && strstr(err.msg, want),
          "rank_from_plan refuses '%s': %s", want, err.msg);
}

/* Plan-level fields the executor does not run (planner/plan_scope.c): a trial must not time
 * another plan than the one priced. */
static void plan_scope_refusals(void)
{
    tsl_err_t err = {0};
    tsl_model_t m;
    model(&m, 0);
    tsl_plan_t base, p;
    tsl_exec_rank_t r;
    CHECK(!tsl_exec_uniform_plan(&m, &(tsl_exec_plan_spec_t){2, 1, 1, false, false, 2, 4}, &base,
                                 &err),
          "%s", err.msg);
    CHECK(!tsl_plan_exec_scope(&base, &err) && !tsl_exec_rank_from_plan(&base, &m, 0, &r, &err),
          "the plain plan runs: %s", err.msg);
    tsl_exec_rank_free(&r);
    p = base, p.schedule = TSL_PIPESIM_SCHED_ZBH1;
    scope_refused(&p, &m, "schedule zbh1");
    p = base, p.schedule = TSL_PIPESIM_SCHED_DUALPIPEV;
    scope_refused(&p, &m, "schedule dualpipev");
    p = base, p.schedule = UINT32_MAX; /* a stored plan's schedule this build does not know */
    scope_refused(&p, &m, "unknown to this build");
    p = base, p.cp = 2;
    scope_refused(&p, &m, "context parallelism 2");
    p = base, p.etp = 2;
    scope_refused(&p, &m, "expert TP 2");
    p = base, p.fp8_recipe = 1;
    scope_refused(&p, &m, "FP8 linear GEMMs");
    p = base, p.moe_pad = true;
    scope_refused(&p, &m, "padding to capacity");
    p = base, p.recompute_modules = 1;
    scope_refused(&p, &m, "recompute modules");
    p = base, p.bf16_moments = true;
    scope_refused(&p, &m, "bf16 Adam moments");
    p = base, p.cpu_offload_layers = 1;
    scope_refused(&p, &m, "cpu_offload_layers 1");
    p = base, p.memopt = 1 + TSL_MEMOPT_MODE_OFFLOAD;
    scope_refused(&p, &m, "zero3-offload");
    p = base, p.memopt = 1 + TSL_MEMOPT_MODE_ZERO3, p.layer_switches[1] = TSL_MEMOPT_ECON_FWD;
    scope_refused(&p, &m, "layer 1: memory switches");
    /* ZeRO-3 without switches, expert TP 1 and cp 1 spelled out: plain plans */
    p = base, p.memopt = 1 + TSL_MEMOPT_MODE_ZERO3, p.etp = 1, p.cp = 1;
    CHECK(!tsl_plan_exec_scope(&p, &err), "zero3 without switches runs: %s", err.msg);
    tsl_model_free(&m);
}

/* ---- parallel attention/FFN blocks (GPT-J, NeoX, Falcon, Phi) ---- */

/* The neox preset family at tiny shapes, parallel blocks: kind 0 GPT-NeoX (two
 * LayerNorms, biases), 1 Falcon-like (one shared norm, no biases, 2 K/V heads), 2 a
 * Llama layer made parallel (RMSNorm, SwiGLU, GQA, two norms). */
static void model_par(tsl_model_t *m, int kind)
{
    tsl_err_t err = {0};
    if (kind == 2) {
        model_llama(m, 0);
        for (uint32_t i = 0; i < m->n_layers; i++)
            if (m->layers[i].kind == TSL_LAYER_ENCODER) {
                m->layers[i].parallel_block = true;
                CHECK(!tsl_layer_derive(&m->layers[i], &err), "%s", err.msg);
            }
        return;
    }
    tsl_arch_spec_t sp = {.arch = TSL_ARCH_NEOX,
                          .layers = 4,
                          .hidden = 32,
                          .ffn_hidden = 64,
                          .heads = 4,
                          .kv_heads = kind == 1 ? 2 : 0,
                          .seq_len = 8,
                          .vocab = 40,
                          .no_bias = kind == 1,
                          .parallel_block = true,
                          .shared_norm = kind == 1};
    CHECK(!tsl_model_build(&sp, kind ? "tiny-falcon" : "tiny-neox", m, &err), "%s", err.msg);
    const tsl_layer_t *L = &m->layers[1];
    CHECK(m->n_layers == 6 && L->parallel_block && L->shared_norm == (kind == 1),
          "the preset builds parallel blocks");
}

static const char *const par_name[] = {"neox", "falcon", "llama-parallel"};

/* One rank against tp 2, pp 2 × tp 2 with checkpointing, dp 2; and each encoder
 * layer's parameters are the planner's count. */
static void par_splits(int kind)
{
    tsl_model_t m;
    model_par(&m, kind);
    const char *nm = par_name[kind];
    char what[96];
    tsl_layer_t L = m.layers[1];
    tsl_exec_layer_t xl = {.kind = L.kind,
                           .seq = L.seq_len,
                           .hidden = L.hidden,
                           .ffn = L.ffn_hidden,
                           .heads = L.heads,
                           .bias = !L.no_bias,
                           .rms_norm = L.rms_norm,
                           .gated_ffn = L.gated_ffn,
                           .kv_heads = L.kv_heads ? L.kv_heads : L.heads,
                           .parallel = true,
                           .shared_norm = L.shared_norm};
    CHECK(tsl_exec_layer_params(&xl, 1) == L.params, "%s: %zu parameters, planner %llu", nm,
          tsl_exec_layer_params(&xl, 1), (unsigned long long)L.params);
    result_t ref;
    run_spec(&m, (tsl_exec_plan_spec_t){1, 1, 1, false, false, 4, 4}, &ref);
    CHECK(ref.ok && isfinite(ref.loss) && ref.loss > 0, "%s reference loss %g", nm, ref.loss);
    snprintf(what, sizeof(what), "%s tp2", nm);
    case_vs(&m, &ref, (tsl_exec_plan_spec_t){1, 2, 1, false, false, 4, 4}, what, false);
    snprintf(what, sizeof(what), "%s pp2 tp2 ckpt", nm);
    case_vs(&m, &ref, (tsl_exec_plan_spec_t){2, 2, 1, false, true, 4, 4}, what, false);
    snprintf(what, sizeof(what), "%s dp2", nm);
    case_vs(&m, &ref, (tsl_exec_plan_spec_t){1, 1, 2, false, false, 4, 4}, what, false);
    free_result(&ref);
    tsl_model_free(&m);
}

/* All-reduces rank 0 makes of T·h and of 2·T·h elements (the TP sums of a one-layer
 * model; the loss's and flags' are smaller, the parameters' larger). */
static int (*par_real_allreduce)(tsl_commops_t *, tsl_group_t *, tsl_buf_t *, void *, tsl_err_t *);
static size_t par_th;
static uint32_t par_n1, par_n2;

static int par_count_allreduce(tsl_commops_t *c, tsl_group_t *g, tsl_buf_t *buf, void *stream,
                               tsl_err_t *err)
{
    if (c->rank == 0 && buf->n == par_th)
        par_n1++;
    if (c->rank == 0 && buf->n == 2 * par_th)
        par_n2++;
    return par_real_allreduce(c, g, buf, stream, err);
}

static void *par_count_main(void *p)
{
    job_t *j = p;
    tsl_err_t err = {0};
    tsl_commops_t *c = NULL;
    if (tsl_comm_loopback_rank(j->world, (int)j->rank, &c, &err) == 0) {
        par_real_allreduce = c->allreduce; /* the same function on every rank */
        c->allreduce = par_count_allreduce;
        if (run_one(j, c, &err))
            j->res->ok = false;
    }
    if (c)
        c->destroy(c);
    return NULL;
}

/* One parallel layer at tp 2: per micro-batch, forward all-reduces as many T×h
 * activations as the planner's tp_allreduces (1), backward one more (T×h under a
 * shared norm; both norms' inputs side by side, 2·T×h, with two). A sequential layer
 * of the same shape makes 2 each way. */
static void par_allreduces(void)
{
    tsl_err_t err = {0};
    for (int v = 0; v < 3; v++) {
        tsl_layer_t l = {.kind = TSL_LAYER_ENCODER,
                         .seq_len = 4,
                         .hidden = 16,
                         .ffn_hidden = 32,
                         .heads = 2,
                         .parallel_block = v > 0,
                         .shared_norm = v == 2};
        tsl_model_t m;
        tsl_model_init(&m, "par-count");
        CHECK(!tsl_model_add(&m, &l, &err), "%s", err.msg);
        uint32_t mb = 2, nm = 3, fwd = m.layers[0].tp_allreduces;
        tsl_plan_t p;
        CHECK(!tsl_exec_uniform_plan(&m, &(tsl_exec_plan_spec_t){1, 2, 1, false, false, mb, nm}, &p,
                                     &err),
              "%s", err.msg);
        result_t res;
        memset(&res, 0, sizeof(res));
        res.ok = true;
        res.world = 2;
        job_t jobs[2];
        pthread_t th[2];
        par_th = (size_t)mb * l.seq_len * l.hidden;
        par_n1 = par_n2 = 0;
        CHECK(!tsl_comm_loopback_world(2, &jobs[0].world, &err), "%s", err.msg);
        for (uint32_t k = 0; k < 2; k++) {
            jobs[k] = (job_t){&p, &m, jobs[0].world, &res, k, 0, false};
            pthread_create(&th[k], NULL, par_count_main, &jobs[k]);
        }
        for (uint32_t k = 0; k < 2; k++)
            pthread_join(th[k], NULL);
        tsl_comm_loopback_world_free(jobs[0].world);
        tsl_exec_opts_t o;
        opts(&o);
        uint32_t runs = nm * (o.warmup + o.iters);
        uint32_t bwd1 = v == 1 ? 0 : fwd, bwd2 = v == 1 ? 1 : 0;
        printf("%s layer, tp 2: %u all-reduces of T*h and %u of 2*T*h per micro-batch; planner "
               "tp_allreduces %u\n",
               v == 0   ? "sequential"
               : v == 1 ? "parallel"
                        : "parallel shared-norm",
               par_n1 / runs, par_n2 / runs, fwd);
        CHECK(res.ok && fwd == (v ? 1u : 2u) && par_n1 == runs * (fwd + bwd1) &&
                  par_n2 == runs * bwd2,
              "layer %d: %u + %u all-reduces over %u micro-batches, planner %u each way", v, par_n1,
              par_n2, runs, fwd);
        free_result(&res);
        tsl_model_free(&m);
    }
}

/* One parallel layer's cpu activations against the planner's act_repl + act_shard, as
 * llama_peak: the Llama layer made parallel keeps no FFN-norm input (x2), and with a
 * shared norm no FFN-norm output nor its statistics (F32 statistics: 4 bytes a token
 * per RMSNorm). */
static void par_peak(bool shared)
{
    tsl_layer_t l = llama_peak_layer(), L;
    l.parallel_block = true;
    l.shared_norm = shared;
    uint64_t p1, s1, p2, s2;
    peak_of(&l, 1, &p1, &s1, &L);
    peak_of(&l, 2, &p2, &s2, &L);
    uint64_t act = (p2 - s2) - (p1 - s1), b = 2, T = b * L.seq_len;
    uint64_t planned = b * (L.act_repl_bytes + L.act_shard_bytes), stats = (shared ? 4 : 8) * T;
    printf("one parallel%s Llama layer: cpu activation bytes %llu, planner %llu (2-byte) -> "
           "%llu in F32 + %llu of F32 statistics\n",
           shared ? " shared-norm" : "", (unsigned long long)act, (unsigned long long)planned,
           (unsigned long long)(2 * planned), (unsigned long long)stats);
    CHECK(act == 2 * planned + stats, "a parallel layer's activations: %llu bytes, planned %llu",
          (unsigned long long)act, (unsigned long long)(2 * planned + stats));
}

int main(void)
{
    searched_plans();
    refusals();
    collectives();
    loopback_leave();
    splits(0);
    splits(24); /* with a token embedding and an LM head */
    causal_and_not();
    peak_linear_in_seq();
    vocab_splits(false);
    vocab_splits(true);
    vocab_memory();
    vocab_refusals();
    layouts_in_stage();
    layouts_across_stages();
    layout_refusals();
    searched_mixed();
    il_schedule();
    il_refusals();
    plan_scope_refusals();
    il_splits(0, false);
    il_splits(24, false); /* the embedding in the first virtual stage, the head in the last */
    il_splits(24, true);
    il_memory();
    il_layouts();
    searched_interleaved();
    tcp_pp2();
    oom_agreed();
    /* Llama-family layers */
    llama_splits();
    llama_window();
    llama_searched();
    llama_sublayers();
    llama_refusals();
    llama_peak();
    /* parallel attention/FFN blocks */
    par_splits(0);
    par_splits(1);
    par_splits(2);
    par_allreduces();
    par_peak(false);
    par_peak(true);
    return CHECK_DONE();
}

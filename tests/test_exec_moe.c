/*
 * test_exec_moe.c — the executor's mixture-of-experts layers without GPUs. The
 * all-to-all with counts (commops all_to_allv) on loopback threads and tcp processes,
 * empty chunks and sub-groups included, and a count the peer does not send refused;
 * the MoE device ops on hand-checked cases (softmax top-k with its tie-break, the
 * stable sort, gathers, the weighted combine, its backward against finite
 * differences) and their refusals; a gradient check of MoE layers (GPT-like with
 * biases and a shared expert, Mixtral-like SwiGLU) through the engine against central
 * finite differences; then tiny Mixtral-like and DeepSeek-like (a shared expert, a
 * dense first layer) models, seed 42, two SGD steps, one rank against EP 1, 2, 4 with
 * DP, TP, SDP, pipelines and checkpointing (loss and every gradient, the experts'
 * included, within 1e-5 of the layer's largest), over loopback threads and over tcp
 * between forked processes (bitwise the loopback run); the all-to-alls per
 * micro-batch (what the planner prices); the search's plan for the tiny Mixtral on 4
 * GPUs against one rank; and the plans the executor refuses (EP that does not divide
 * the experts, tokens that do not split over TP). Latent attention and the routers
 * of DeepSeek and Qwen2-MoE: test_exec_mla.c.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "exec.h"
#include "exec_bufs.h"
#include "search.h"
#include "search_tiny.h"

#define MAXR 8
#define MAXL 8
#define CAP  (1u << 18)

#include "exec_split.h"

/* ---- all_to_allv ---- */

/* What rank s sends rank d in a world of n: (s + 2d) mod 3 values (0 included),
 * s·100 + d·10 + i each. */
static size_t a2a_count(int s, int d)
{
    return (size_t)((s + 2 * d) % 3);
}

/* One member's exchange over group g (members = world ranks base .. base + n − 1);
 * returns the number of wrong values (-1: the op failed). */
static int a2a_member(tsl_commops_t *c, tsl_group_t *g, int base, tsl_err_t *err)
{
    int n = c->group_size(g), me = c->group_rank(g), bad = 0;
    size_t sc[MAXR], rc[MAXR], ns = 0, nr = 0;
    float snd[64], rcv[64];
    for (int j = 0; j < n; j++) {
        sc[j] = a2a_count(me, j), rc[j] = a2a_count(j, me);
        for (size_t i = 0; i < sc[j]; i++)
            snd[ns++] = (float)(me * 100 + j * 10 + (int)i);
        nr += rc[j];
    }
    tsl_buf_t sb = {snd, ns, TSL_DT_F32}, rb = {rcv, nr + 3, TSL_DT_F32};
    if (c->all_to_allv(c, g, &sb, sc, &rb, rc, NULL, err))
        return -1;
    for (int j = 0, at = 0; j < n; j++)
        for (size_t i = 0; i < rc[j]; i++, at++)
            bad += rcv[at] != (float)(j * 100 + me * 10 + (int)i);
    (void)base;
    return bad;
}

typedef struct a2a_job {
    tsl_loopback_world_t *w;
    int rank, groups, bad;
    char msg[sizeof(((tsl_err_t *)0)->msg)];
} a2a_job_t;

/* Groups of world/groups consecutive ranks each exchange at once. */
static int a2a_run(tsl_commops_t *c, int groups, tsl_err_t *err)
{
    tsl_group_t *g = NULL;
    int per = c->size / groups;
    if (c->group_split(c, c->rank / per, c->rank % per, &g, err))
        return -1;
    int bad = a2a_member(c, g, c->rank / per * per, err);
    c->group_free(c, g);
    return bad;
}

static void *a2a_thread(void *p)
{
    a2a_job_t *j = p;
    tsl_err_t err = {0};
    tsl_commops_t *c = NULL;
    j->bad = -1;
    if (!tsl_comm_loopback_rank(j->w, j->rank, &c, &err))
        j->bad = a2a_run(c, j->groups, &err);
    snprintf(j->msg, sizeof(j->msg), "%s", err.msg);
    if (c)
        c->destroy(c);
    return NULL;
}

static void a2a_loopback(int n, int groups)
{
    tsl_err_t err = {0};
    tsl_loopback_world_t *w = NULL;
    a2a_job_t jobs[MAXR];
    pthread_t th[MAXR];
    CHECK(!tsl_comm_loopback_world(n, &w, &err), "%s", err.msg);
    for (int k = 0; k < n; k++) {
        jobs[k] = (a2a_job_t){w, k, groups, 0, ""};
        pthread_create(&th[k], NULL, a2a_thread, &jobs[k]);
    }
    for (int k = 0; k < n; k++) {
        pthread_join(th[k], NULL);
        CHECK(jobs[k].bad == 0,
              "loopback all_to_allv, %d ranks in %d groups: rank %d: %d wrong (%s)", n, groups, k,
              jobs[k].bad, jobs[k].msg);
    }
    tsl_comm_loopback_world_free(w);
}

static void a2a_tcp(int n, int port)
{
    pid_t pid[MAXR];
    for (int k = 0; k < n; k++) {
        pid[k] = fork();
        if (pid[k] == 0) {
            tsl_err_t err = {0};
            tsl_commops_t *c = NULL;
            int bad = tsl_comm_tcp_create("127.0.0.1", port, k, n, 30, &c, &err)
                          ? -1
                          : a2a_run(c, 1, &err);
            if (bad)
                fprintf(stderr, "tcp all_to_allv rank %d: %d wrong: %s\n", k, bad, err.msg);
            if (c)
                c->destroy(c);
            _exit(bad ? 1 : 0);
        }
    }
    for (int k = 0; k < n; k++) {
        int st = 0;
        waitpid(pid[k], &st, 0);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "tcp all_to_allv: rank %d exited %d", k, st);
    }
}

/* Rank 1 expects one value more from rank 0 than rank 0 sends: refused, naming it. */
static void *a2a_mismatch_thread(void *p)
{
    a2a_job_t *j = p;
    tsl_err_t err = {0};
    tsl_commops_t *c = NULL;
    tsl_group_t *g = NULL;
    float s[4] = {1, 2, 3, 4}, r[8];
    size_t sc[2] = {1, 1}, rc[2] = {1, j->rank == 1 ? 1 : 1};
    if (j->rank == 1)
        rc[0] = 2;
    tsl_buf_t sb = {s, 2, TSL_DT_F32}, rb = {r, 8, TSL_DT_F32};
    j->bad = tsl_comm_loopback_rank(j->w, j->rank, &c, &err) ||
             c->group_split(c, 0, j->rank, &g, &err) ||
             c->all_to_allv(c, g, &sb, sc, &rb, rc, NULL, &err);
    snprintf(j->msg, sizeof(j->msg), "%s", err.msg);
    if (c) {
        c->group_free(c, g);
        c->destroy(c);
    }
    return NULL;
}

static void a2a_mismatch(void)
{
    tsl_err_t err = {0};
    tsl_loopback_world_t *w = NULL;
    a2a_job_t jobs[2];
    pthread_t th[2];
    CHECK(!tsl_comm_loopback_world(2, &w, &err), "%s", err.msg);
    for (int k = 0; k < 2; k++) {
        jobs[k] = (a2a_job_t){w, k, 1, 0, ""};
        pthread_create(&th[k], NULL, a2a_mismatch_thread, &jobs[k]);
    }
    for (int k = 0; k < 2; k++)
        pthread_join(th[k], NULL);
    CHECK(jobs[0].bad == 0, "rank 0 sent and received: %s", jobs[0].msg);
    CHECK(jobs[1].bad && strstr(jobs[1].msg, "expected 8 bytes from rank 0, got 4"),
          "a count the peer does not send refused: %s", jobs[1].msg);
    tsl_comm_loopback_world_free(w);
    /* counts past the buffers */
    tsl_commops_t *c = NULL;
    tsl_group_t *g = NULL;
    float s[2] = {0}, r[2];
    size_t sc[1] = {3}, rc[1] = {3};
    tsl_buf_t sb = {s, 2, TSL_DT_F32}, rb = {r, 2, TSL_DT_F32};
    CHECK(!tsl_comm_loopback_world(1, &w, &err) && !tsl_comm_loopback_rank(w, 0, &c, &err) &&
              !c->group_split(c, 0, 0, &g, &err),
          "%s", err.msg);
    CHECK(c->all_to_allv(c, g, &sb, sc, &rb, rc, NULL, &err) &&
              strstr(err.msg, "counts past the buffers"),
          "counts past the buffers refused: %s", err.msg);
    c->group_free(c, g);
    c->destroy(c);
    tsl_comm_loopback_world_free(w);
}

static void all_to_allv(void)
{
    a2a_loopback(3, 1);
    a2a_loopback(4, 2); /* {0, 1} and {2, 3} at once */
    a2a_loopback(1, 1);
    a2a_tcp(3, 21000 + (int)(getpid() % 1000) * 8);
    a2a_mismatch();
}

/* ---- the MoE device ops (cpu) by hand ---- */

static void ops_topk(tsl_devops_t *d)
{
    tsl_err_t err = {0};
    /* a tie (3, 3) goes to the lower expert; all equal: the first k; k = 3 */
    float lg[12] = {1, 3, 3, 0, 0, 0, 0, 0, -1, 2, 0.5f, 2}, p[12], w[9];
    int32_t id[9];
    tsl_buf_t L = fb(lg, 12), P = fb(p, 12), W = fb(w, 6), I = ib(id, 6);
    CHECK(!d->moe_topk(d, &L, NULL, &P, &I, &W, 3, 4, 2, &err), "%s", err.msg);
    double s0 = exp(1) + 2 * exp(3) + 1;
    CHECK(id[0] == 1 && id[1] == 2 && id[2] == 0 && id[3] == 1 && id[4] == 1 && id[5] == 3,
          "top-2 with ties: %d %d | %d %d | %d %d", id[0], id[1], id[2], id[3], id[4], id[5]);
    CHECK(fabs(p[1] - exp(3) / s0) < 1e-6 && fabs(w[0] - p[1]) < 1e-7 && fabs(p[4] - 0.25) < 1e-7,
          "softmax probabilities: %g (by hand %g), %g", p[1], exp(3) / s0, p[4]);
    tsl_buf_t W3 = fb(w, 9), I3 = ib(id, 9);
    CHECK(!d->moe_topk(d, &L, NULL, &P, &I3, &W3, 3, 4, 3, &err) && id[6] == 1 && id[7] == 3 &&
              id[8] == 2,
          "top-3 of (-1, 2, 0.5, 2): %d %d %d", id[6], id[7], id[8]);
    CHECK(d->moe_topk(d, &L, NULL, &P, &I3, &W3, 3, 4, 5, &err) &&
              tsl_err_code(&err) == TSL_E_INVALID && strstr(err.msg, "moe_topk: k does not fit"),
          "k 5 of 4 experts refused: %s", err.msg);
    tsl_buf_t Pshort = fb(p, 11);
    CHECK(d->moe_topk(d, &L, NULL, &Pshort, &I, &W, 3, 4, 2, &err) && strstr(err.msg, "probs"),
          "a short probs buffer refused: %s", err.msg);
}

/* moe_topk_bwd against central differences of Σ_j dw_j·p[idx_j] in the logits. */
static void ops_topk_bwd(tsl_devops_t *d)
{
    tsl_err_t err = {0};
    float lg[4] = {0.3f, -0.7f, 1.1f, 0.2f}, p[4], w[2], dw[2] = {0.8f, -1.3f}, dl[4];
    int32_t id[2];
    tsl_buf_t L = fb(lg, 4), P = fb(p, 4), W = fb(w, 2), I = ib(id, 2), DW = fb(dw, 2);
    tsl_buf_t DL = fb(dl, 4);
    CHECK(!d->moe_topk(d, &L, NULL, &P, &I, &W, 1, 4, 2, &err) &&
              !d->moe_topk_bwd(d, &P, &I, &DW, NULL, &DL, 1, 4, 2, &err),
          "%s", err.msg);
    int bad = 0;
    for (int e = 0; e < 4; e++) {
        double f[2];
        for (int s = 0; s < 2; s++) {
            double x[4], z = 0;
            for (int k = 0; k < 4; k++)
                x[k] = lg[k] + (k == e ? (s ? -1e-4 : 1e-4) : 0);
            for (int k = 0; k < 4; k++)
                z += exp(x[k]);
            f[s] = dw[0] * exp(x[id[0]]) / z + dw[1] * exp(x[id[1]]) / z;
        }
        double fd = (f[0] - f[1]) / 2e-4;
        bad += fabs(fd - dl[e]) > 1e-4;
    }
    CHECK(bad == 0 && id[0] == 2 && id[1] == 0, "router backward: %d of 4 off finite differences",
          bad);
}

static void ops_rows(tsl_devops_t *d)
{
    tsl_err_t err = {0};
    /* 3 tokens × top-2: experts (1, 2), (1, 2), (3, 1) */
    int32_t idx[6] = {1, 2, 1, 2, 3, 1}, ord[6], pos[6];
    float cnt[4];
    tsl_buf_t I = ib(idx, 6), O = ib(ord, 6), Q = ib(pos, 6), C = fb(cnt, 4);
    CHECK(!d->moe_sort(d, &I, &O, &Q, &C, 6, 4, 0, &err), "%s", err.msg);
    int want[6] = {0, 2, 5, 1, 3, 4};
    bool ok = cnt[0] == 0 && cnt[1] == 3 && cnt[2] == 2 && cnt[3] == 1;
    for (int i = 0; i < 6; i++)
        ok = ok && ord[i] == want[i] && pos[ord[i]] == i;
    CHECK(ok, "stable expert-major order %d %d %d %d %d %d, counts %g %g %g %g", ord[0], ord[1],
          ord[2], ord[3], ord[4], ord[5], cnt[0], cnt[1], cnt[2], cnt[3]);
    /* dispatch: row p = token ord[p] / 2, scaled by w[ord[p]] */
    float x[6] = {1, 2, 3, 4, 5, 6}, y[12], w[6] = {0.5f, 0.25f, 1, 2, 3, 4};
    tsl_buf_t X = fb(x, 6), Y = fb(y, 12), W = fb(w, 6);
    CHECK(!d->gather_rows(d, &X, &O, 2, NULL, &Y, 6, 2, &err) && y[2] == 3 && y[3] == 4 &&
              y[4] == 5 && y[5] == 6 && y[6] == 1,
          "gather_rows by copy: %g %g %g %g", y[2], y[3], y[4], y[5]);
    CHECK(!d->gather_rows(d, &X, &O, 2, &W, &Y, 6, 2, &err) && y[4] == 5 * 4.0f && y[2] == 3,
          "gather_rows scaled: %g, %g", y[4], y[2]);
    /* combine: out[t] += Σ_j w[2t + j]·rows[pos[2t + j]] */
    float rows[12], out[6] = {1, 1, 1, 1, 1, 1};
    for (int i = 0; i < 12; i++)
        rows[i] = (float)(i + 1);
    tsl_buf_t R = fb(rows, 12), OUT = fb(out, 6);
    CHECK(!d->scatter_add_rows(d, &R, &Q, &W, &OUT, 3, 2, 2, &err), "%s", err.msg);
    /* token 2: copies 4 (pos 5: rows 11, 12) w 3 and 5 (pos 2: rows 5, 6) w 4 */
    CHECK(out[4] == 1 + 3 * 11 + 4 * 5 && out[5] == 1 + 3 * 12 + 4 * 6 &&
              out[0] == 1 + 0.5f * 1 + 0.25f * 7,
          "weighted combine: %g %g %g", out[4], out[5], out[0]);
    float dots[6];
    tsl_buf_t D = fb(dots, 6);
    CHECK(!d->rows_dot(d, &X, &R, &Q, &D, 6, 2, 2, &err) && dots[4] == 5 * 11 + 6 * 12 &&
              dots[1] == 1 * 7 + 2 * 8,
          "rows_dot: %g %g", dots[4], dots[1]);
    /* capacity 2: expert 1 keeps copies 0 and 2, copy 5 is dropped (pos -1) */
    CHECK(!d->moe_sort(d, &I, &O, &Q, &C, 6, 4, 2, &err), "%s", err.msg);
    int want2[5] = {0, 2, 1, 3, 4};
    ok = cnt[0] == 0 && cnt[1] == 2 && cnt[2] == 2 && cnt[3] == 1 && pos[5] == -1;
    for (int i = 0; i < 5; i++)
        ok = ok && ord[i] == want2[i] && pos[ord[i]] == i;
    CHECK(ok, "capacity 2: order %d %d %d %d %d, pos[5] %d, counts %g %g %g %g", ord[0], ord[1],
          ord[2], ord[3], ord[4], pos[5], cnt[0], cnt[1], cnt[2], cnt[3]);
    float out2[6] = {1, 1, 1, 1, 1, 1};
    tsl_buf_t OUT2 = fb(out2, 6);
    CHECK(!d->scatter_add_rows(d, &R, &Q, &W, &OUT2, 3, 2, 2, &err) && out2[4] == 1 + 3 * 9 &&
              out2[5] == 1 + 3 * 10 && !d->rows_dot(d, &X, &R, &Q, &D, 6, 2, 2, &err) &&
              dots[5] == 0,
          "a dropped copy adds nothing (%g %g) and its dot is 0 (%g)", out2[4], out2[5], dots[5]);
    idx[3] = 7;
    CHECK(d->moe_sort(d, &I, &O, &Q, &C, 6, 4, 0, &err) && strstr(err.msg, "expert 7 of 4"),
          "an expert out of range refused: %s", err.msg);
    ord[0] = 9;
    CHECK(d->gather_rows(d, &X, &O, 2, NULL, &Y, 6, 2, &err) && strstr(err.msg, "past 3 rows"),
          "a row out of range refused: %s", err.msg);
    CHECK(d->gather_rows(d, &X, &O, 0, NULL, &Y, 6, 2, &err) && strstr(err.msg, "div"),
          "div 0 refused: %s", err.msg);
}

static void moe_ops(void)
{
    tsl_err_t err = {0};
    tsl_devops_t *d = NULL;
    CHECK(!tsl_devops_cpu_create(0, &d, &err), "%s", err.msg);
    ops_topk(d);
    ops_topk_bwd(d);
    ops_rows(d);
    d->destroy(d);
}

/* ---- the engine ---- */

/* Layer li's dense (experts false) or routed experts' gradients against central
 * differences at a spread of indices. Top-k routing is piecewise smooth: where a
 * probe flips a token's experts, the two one-sided differences disagree and the point
 * is a kink, skipped (a few at most). */
static void gradcheck(tsl_exec_t *e, uint32_t li, bool experts, const char *what)
{
    tsl_err_t err = {0};
    size_t n = 0;
    float *g = malloc(CAP * 4), *p = malloc(CAP * 4);
    int (*get)(tsl_exec_t *, uint32_t, float *, size_t, size_t *, tsl_err_t *) =
        experts ? tsl_exec_expert_param : tsl_exec_layer_param;
    int (*set)(tsl_exec_t *, uint32_t, const float *, size_t, tsl_err_t *) =
        experts ? tsl_exec_expert_set_param : tsl_exec_layer_set_param;
    double l0 = loss_now(e);
    CHECK(!(experts ? tsl_exec_expert_grad : tsl_exec_layer_grad)(e, li, g, CAP, &n, &err) &&
              !get(e, li, p, CAP, &n, &err),
          "%s", err.msg);
    int bad = 0, tried = 0, kinks = 0;
    for (size_t j = 0; j < n; j += 1 + n / 89) {
        float keep = p[j], h = 2e-3f;
        double f[2];
        for (int s = 0; s < 2; s++) {
            p[j] = keep + (s ? -h : h);
            set(e, li, p, n, &err);
            f[s] = loss_now(e);
        }
        p[j] = keep;
        set(e, li, p, n, &err);
        double fd = (f[0] - f[1]) / (2.0 * h), up = (f[0] - l0) / h, down = (l0 - f[1]) / h;
        if (fabs(up - down) > 0.5 * fmax(fabs(up), fabs(down)) + 2e-3) {
            kinks++;
            continue;
        }
        tried++;
        if (fabs(fd - g[j]) > 2e-2 * fmax(fabs(fd), fabs(g[j])) + 2e-4 && bad++ < 5)
            fprintf(stderr, "%s: param %zu: analytic %.6g, finite difference %.6g\n", what, j, g[j],
                    fd);
    }
    printf("%s: %d gradients checked, %d kinks skipped\n", what, tried, kinks);
    CHECK(bad == 0 && tried > 10 && kinks * 8 <= tried, "%s: %d of %d gradients off (%d kinks)",
          what, bad, tried, kinks);
    free(g);
    free(p);
}

/* One rank: a GPT-like MoE layer (LayerNorm, GeLU, biases, one shared expert) and a
 * Mixtral-like one (RMSNorm, SwiGLU, no biases), 4 experts top 2, every dense and
 * expert parameter tensor against finite differences. */
static void moe_gradcheck(void)
{
    tsl_err_t err = {0};
    tsl_model_t m;
    tsl_layer_t gpt = {.kind = TSL_LAYER_ENCODER,
                       .seq_len = 4,
                       .hidden = 8,
                       .ffn_hidden = 6,
                       .heads = 2,
                       .experts = 4,
                       .experts_per_tok = 2,
                       .shared_experts = 1,
                       .shared_ffn_hidden = 4};
    tsl_layer_t mix = {.kind = TSL_LAYER_ENCODER,
                       .seq_len = 4,
                       .hidden = 8,
                       .ffn_hidden = 6,
                       .heads = 2,
                       .experts = 4,
                       .experts_per_tok = 2,
                       .gated_ffn = true,
                       .rms_norm = true,
                       .no_bias = true,
                       .causal = true};
    tsl_model_init(&m, "moe-grad");
    CHECK(!tsl_model_add(&m, &gpt, &err) && !tsl_model_add(&m, &mix, &err), "%s", err.msg);
    tsl_plan_t plan;
    tsl_exec_rank_t r;
    tsl_exec_opts_t o;
    tsl_exec_opts_default(&o);
    o.optim = TSL_EXEC_SGD;
    o.lr = 0;
    o.same_batch = true;
    o.moe_capacity = split_capacity;
    tsl_loopback_world_t *w = NULL;
    tsl_commops_t *c = NULL;
    tsl_devops_t *d = NULL;
    tsl_exec_t *e = NULL;
    CHECK(!tsl_exec_uniform_plan(&m, &(tsl_exec_plan_spec_t){1, 1, 1, false, false, 2, 2}, &plan,
                                 &err) &&
              !tsl_exec_rank_from_plan(&plan, &m, 0, &r, &err),
          "%s", err.msg);
    CHECK(!tsl_comm_loopback_world(1, &w, &err) && !tsl_comm_loopback_rank(w, 0, &c, &err) &&
              !tsl_devops_cpu_create(0, &d, &err) && !tsl_exec_create(&r, &o, d, c, &e, &err),
          "%s", err.msg);
    CHECK(r.layers[0].ffn == 4 && r.layers[0].expert_ffn == 6 && r.layers[1].ffn == 0,
          "shared experts as the dense FFN (%u), routed experts of %u", r.layers[0].ffn,
          r.layers[0].expert_ffn);
    if (e && split_capacity > 0) { /* copies dropped: their outputs and gradients are zero */
        gradcheck(e, 1, false, "mixtral layer at capacity 1: dense");
        gradcheck(e, 1, true, "mixtral layer at capacity 1: routed experts");
    } else if (e) {
        gradcheck(e, 0, false, "gpt moe layer: dense (router, shared expert, attention)");
        gradcheck(e, 0, true, "gpt moe layer: routed experts");
        gradcheck(e, 1, false, "mixtral layer: dense");
        gradcheck(e, 1, true, "mixtral layer: routed experts");
    }
    tsl_exec_destroy(e);
    d->destroy(d);
    c->destroy(c);
    tsl_comm_loopback_world_free(w);
    tsl_exec_rank_free(&r);
    tsl_model_free(&m);
}

/* ---- one rank against splits ---- */

/* All-to-alls rank 0 makes (counted through its comm ops when split_wrap is set). */
static int (*real_a2a)(tsl_commops_t *, tsl_group_t *, const tsl_buf_t *, const size_t *,
                       tsl_buf_t *, const size_t *, void *, tsl_err_t *);
static uint32_t n_a2a;

static int count_a2a(tsl_commops_t *c, tsl_group_t *g, const tsl_buf_t *s, const size_t *sc,
                     tsl_buf_t *r, const size_t *rc, void *st, tsl_err_t *err)
{
    if (c->rank == 0)
        n_a2a++;
    return real_a2a(c, g, s, sc, r, rc, st, err);
}

static void wrap_a2a(tsl_commops_t *c)
{
    real_a2a = c->all_to_allv;
    c->all_to_allv = count_a2a;
}

/* A tiny Mixtral (shared 0) or DeepSeek-like model (a shared expert of 16 columns and
 * a dense first layer): embedding, 3 Llama layers of hidden 64, 4 heads (2 K/V), seq
 * 8, 4 experts of 32 columns top 2, an LM head. */
static void model_moe(tsl_model_t *m, uint32_t shared)
{
    tsl_err_t err = {0};
    tsl_arch_spec_t sp = {.arch = TSL_ARCH_LLAMA,
                          .layers = 3,
                          .hidden = 64,
                          .ffn_hidden = 96,
                          .heads = 4,
                          .kv_heads = 2,
                          .seq_len = 8,
                          .vocab = 96,
                          .gated_ffn = true,
                          .experts = 4,
                          .experts_per_tok = 2,
                          .moe_ffn_hidden = 32,
                          .shared_experts = shared,
                          .shared_ffn_hidden = shared ? 16 : 0};
    if (shared)
        sp.moe_layers[0] = 0x6; /* layers 1 and 2 (0-based); layer 0 dense */
    CHECK(!tsl_model_build(&sp, shared ? "tiny-deepseek" : "tiny-mixtral", m, &err), "%s", err.msg);
    CHECK(m->n_layers == 5 && m->layers[2].experts == 4 && (m->layers[1].experts == 0) == !!shared,
          "the family builds MoE layers");
}

static void splits_of(uint32_t shared)
{
    tsl_model_t m;
    model_moe(&m, shared);
    const char *nm = shared ? "deepseek-like" : "mixtral-like";
    split_t one = {1, 1, 1, false, false, 1, "one rank"};
    split_t cases[] = {{1, 1, 2, false, false, 1, "dp2 ep1"},
                       {1, 1, 2, false, false, 2, "dp2 ep2"},
                       {1, 1, 4, false, false, 2, "dp4 ep2"},
                       {1, 1, 4, false, false, 4, "dp4 ep4"},
                       {1, 2, 1, false, false, 2, "tp2 ep2"},
                       {1, 2, 2, false, true, 4, "tp2 dp2 ep4 ckpt"},
                       {2, 1, 2, false, false, 2, "pp2 dp2 ep2"},
                       {1, 1, 4, true, false, 2, "sdp4 ep2"},
                       {2, 2, 2, false, true, 2, "pp2 tp2 dp2 ep2 ckpt"}};
    tsl_plan_t p;
    result_t ref, got;
    plan_of(&m, one, 4, 2, &p);
    run_plan(&p, &m, &ref);
    CHECK(ref.ok && isfinite(ref.loss) && ref.loss > 0, "%s reference loss %g", nm, ref.loss);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char what[96];
        snprintf(what, sizeof(what), "%s %s", nm, cases[i].name);
        plan_of(&m, cases[i], 4, 2, &p);
        run_plan(&p, &m, &got);
        compare(&ref, &got, what);
        free_result(&got);
    }
    free_result(&ref);
    tsl_model_free(&m);
}

/* GPT-like MoE blocks as sub-layers (attention, then an FFN block of 4 GeLU experts
 * with biases, top 2, and a shared expert of 24 columns; twice; no vocabulary: the
 * squared error) against one rank: EP 2 with DP, TP and SDP, pp 2 cut between the
 * blocks, and Megatron's interleaved 1F1B over pp 2 × v 2 at EP 2. */
static void splits_gpt(void)
{
    tsl_err_t err = {0};
    tsl_model_t m;
    tsl_layer_t a = {.kind = TSL_LAYER_ATTENTION, .seq_len = 8, .hidden = 32, .heads = 4};
    tsl_layer_t f = {.kind = TSL_LAYER_FFN,
                     .seq_len = 8,
                     .hidden = 32,
                     .ffn_hidden = 16,
                     .experts = 4,
                     .experts_per_tok = 2,
                     .shared_experts = 1,
                     .shared_ffn_hidden = 24};
    tsl_model_init(&m, "gpt-moe-sub");
    for (int k = 0; k < 2; k++)
        CHECK(!tsl_model_add(&m, &a, &err) && !tsl_model_add(&m, &f, &err), "%s", err.msg);
    split_t cases[] = {{1, 1, 2, false, false, 2, "dp2 ep2"},
                       {1, 2, 2, false, true, 2, "tp2 dp2 ep2 ckpt"},
                       {1, 1, 2, true, false, 2, "sdp2 ep2"},
                       {2, 1, 2, false, false, 2, "pp2 dp2 ep2"},
                       {2, 1, 2, false, false, 2, "pp2 v2 dp2 ep2"}};
    tsl_plan_t p;
    result_t ref, got;
    plan_of(&m, (split_t){1, 1, 1, false, false, 1, "one"}, 4, 2, &p);
    run_plan(&p, &m, &ref);
    CHECK(ref.ok && isfinite(ref.loss) && ref.loss > 0, "gpt-like MoE reference loss %g", ref.loss);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char what[96];
        snprintf(what, sizeof(what), "gpt-like MoE sub-layers %s", cases[i].name);
        plan_of(&m, cases[i], 4, 2, &p);
        p.interleave = strstr(cases[i].name, "v2") ? 2 : 0;
        run_plan(&p, &m, &got);
        compare(&ref, &got, what);
        free_result(&got);
    }
    free_result(&ref);
    tsl_model_free(&m);
}

/* EP 1, 2 and 4 over tcp: the loopback run's bits, and one rank's within 1e-5. */
static void moe_tcp(void)
{
    tsl_model_t m;
    tsl_plan_t p;
    result_t ref;
    model_moe(&m, 1);
    plan_of(&m, (split_t){1, 1, 1, false, false, 1, "one"}, 4, 2, &p);
    run_plan(&p, &m, &ref);
    int port = 23000 + (int)(getpid() % 1000) * 8;
    split_t cases[] = {{1, 1, 2, false, false, 1, "tcp dp2 ep1"},
                       {1, 1, 2, false, false, 2, "tcp dp2 ep2"},
                       {1, 2, 2, false, false, 4, "tcp tp2 dp2 ep4"}};
    for (int i = 0; i < 3; i++) {
        plan_of(&m, cases[i], 4, 2, &p);
        split_tcp_vs_loopback(&p, &m, &ref, port + 4 * i, cases[i].name);
    }
    free_result(&ref);
    tsl_model_free(&m);
}

/* Per micro-batch a MoE layer at EP > 1 makes the planner's 4 all-to-alls (dispatch
 * and combine, each way; docs/cost-model.md "Mixture of experts"), 6 when
 * checkpointed (the forward's two again); at EP 1 none. */
static void a2a_count_per_micro(void)
{
    tsl_model_t m;
    model_moe(&m, 0); /* 3 MoE layers */
    uint32_t ep[] = {2, 2, 1};
    bool ckpt[] = {false, true, false};
    for (int v = 0; v < 3; v++) {
        tsl_plan_t p;
        result_t res;
        plan_of(&m, (split_t){1, 1, 2, false, ckpt[v], ep[v], "count"}, 4, 2, &p);
        split_wrap = wrap_a2a;
        n_a2a = 0;
        run_plan(&p, &m, &res);
        split_wrap = NULL;
        uint32_t per = ep[v] == 1 ? 0 : ckpt[v] ? 6 : 4, want = 3 * 2 * 2 * per;
        printf("ep %u%s: %u all-to-alls over 3 MoE layers × 2 micro-batches × 2 steps\n", ep[v],
               ckpt[v] ? " ckpt" : "", n_a2a);
        CHECK(res.ok && n_a2a == want, "ep %u ckpt %d: %u all-to-alls, want %u", ep[v], ckpt[v],
              n_a2a, want);
        free_result(&res);
    }
    tsl_model_free(&m);
}

/* The search's best plan for the tiny Mixtral on 4 GPUs (EP searched, or fixed by the
 * request's ep) maps to ranks and runs, its EP included, giving one rank's loss and
 * gradients for the same micro-batches. */
static void moe_searched_at(uint32_t ep)
{
    tsl_err_t err = {0};
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_request_t rq;
    tsl_search_result_t *res = calloc(1, sizeof(*res));
    model_moe(&m, 0);
    tsl_cluster_init(&c);
    tsl_request_init(&rq);
    rq.global_batch = 8;
    rq.ep = ep;
    CHECK(res && !tsl_cluster_parse_spec(&c, "4xA100-80G", &err) &&
              tsl_search(&m, &c, &rq, NULL, res, &err) == TSL_SEARCH_OK,
          "search: %s", err.msg);
    const tsl_plan_t *p = &res->best;
    char lay[64];
    tsl_strategy_format(&p->layer[2], lay, sizeof(lay));
    printf("tiny Mixtral searched on 4 GPUs%s: pp %u, ep %u, micro-batch %u × %u, layer 2 %s%s\n",
           ep ? " at a fixed ep" : "", p->pp, p->ep, p->micro_batch, p->n_micro, lay,
           p->sublayer ? ", sub-layer" : "");
    CHECK(!ep || p->ep == ep, "the request's ep %u, the plan's %u", ep, p->ep);
    result_t got;
    run_plan(p, &m, &got);
    CHECK(got.ok && isfinite(got.loss) && got.loss > 0, "the searched MoE plan ran: loss %g",
          got.loss);
    if (!p->sublayer && got.ok) {
        result_t ref;
        tsl_plan_t one;
        plan_of(&m, (split_t){1, 1, 1, false, false, 1, "one"}, p->micro_batch, p->n_micro, &one);
        run_plan(&one, &m, &ref);
        compare(&ref, &got, "searched MoE plan");
        free_result(&ref);
    }
    free_result(&got);
    free(res);
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

static void moe_searched(void)
{
    moe_searched_at(0);
    moe_searched_at(4);
}

/* A capacity factor: at 8 no copy is dropped (one rank's bits, EP 2 within 1e-5 of
 * one rank); at 1 copies are dropped (another loss), the same at EP 1 and EP 2 of the
 * same data split (each rank drops its own tokens' copies before the dispatch), and
 * the peak bytes of EP 4 fall (the experts' rows sized for c·Tl·k, not the worst
 * case). */
static void moe_capacity(void)
{
    tsl_model_t m;
    tsl_plan_t p;
    result_t ref, got, c1, c1ep;
    model_moe(&m, 0);
    plan_of(&m, (split_t){1, 1, 1, false, false, 1, "one"}, 4, 2, &p);
    run_plan(&p, &m, &ref);
    split_capacity = 8;
    run_plan(&p, &m, &got);
    CHECK(got.ok && got.loss == ref.loss, "capacity 8 drops nothing: loss %.9g, dropless %.9g",
          got.loss, ref.loss);
    free_result(&got);
    plan_of(&m, (split_t){1, 1, 2, false, false, 2, "dp2 ep2"}, 4, 2, &p);
    run_plan(&p, &m, &got);
    compare(&ref, &got, "capacity 8 dp2 ep2");
    free_result(&got);
    split_capacity = 1;
    plan_of(&m, (split_t){1, 1, 2, false, false, 1, "dp2 ep1"}, 4, 2, &p);
    run_plan(&p, &m, &c1);
    plan_of(&m, (split_t){1, 1, 2, false, false, 2, "dp2 ep2"}, 4, 2, &p);
    run_plan(&p, &m, &c1ep);
    CHECK(c1.ok && fabs(c1.loss - ref.loss) > 1e-6 * ref.loss,
          "capacity 1 drops copies: loss %.9g, dropless %.9g", c1.loss, ref.loss);
    compare(&c1, &c1ep, "capacity 1: dp2 ep2 against dp2 ep1");
    free_result(&c1);
    free_result(&c1ep);
    uint64_t peak[2];
    for (int k = 0; k < 2; k++) {
        split_capacity = k ? 1.0f : 0.0f;
        plan_of(&m, (split_t){1, 1, 4, false, false, 4, "dp4 ep4"}, 8, 2, &p);
        run_plan(&p, &m, &got);
        peak[k] = got.peak[0];
        free_result(&got);
    }
    printf("dp4 ep4 peak bytes: dropless %llu, capacity 1 %llu\n", (unsigned long long)peak[0],
           (unsigned long long)peak[1]);
    CHECK(peak[1] < peak[0], "capacity 1 holds fewer bytes at EP 4: %llu, dropless %llu",
          (unsigned long long)peak[1], (unsigned long long)peak[0]);
    split_capacity = 0;
    free_result(&ref);
    tsl_model_free(&m);
}

/* Plans the executor refuses, said before any rank runs, naming the layer. */
static void refusals(void)
{
    tsl_err_t err = {0};
    tsl_model_t m;
    tsl_plan_t p;
    tsl_exec_rank_t r;
    model_moe(&m, 0);
    plan_of(&m, (split_t){1, 1, 4, false, false, 3, "ep3"}, 4, 2, &p);
    CHECK(tsl_exec_rank_from_plan(&p, &m, 0, &r, &err) && tsl_err_code(&err) == TSL_E_UNSUPPORTED &&
              strstr(err.msg, "layer 1: EP 3 must divide its 4 experts and its stage's 4"),
          "EP 3 over 4 experts refused: %s", err.msg);
    tsl_model_t odd;
    tsl_arch_spec_t sp = {.arch = TSL_ARCH_LLAMA,
                          .layers = 1,
                          .hidden = 16,
                          .ffn_hidden = 32,
                          .heads = 2,
                          .seq_len = 3,
                          .vocab = 16,
                          .gated_ffn = true,
                          .experts = 2,
                          .experts_per_tok = 1,
                          .moe_ffn_hidden = 8};
    CHECK(!tsl_model_build(&sp, "odd", &odd, &err), "%s", err.msg);
    plan_of(&odd, (split_t){1, 2, 1, false, false, 1, "odd tokens"}, 1, 2, &p);
    CHECK(tsl_exec_rank_from_plan(&p, &odd, 0, &r, &err) &&
              strstr(err.msg, "3 tokens of a micro-batch's share do not split over TP 2"),
          "tokens that do not split over TP refused: %s", err.msg);
    tsl_model_free(&odd);
    tsl_model_free(&m);
}

int main(void)
{
    all_to_allv();
    moe_ops();
    moe_gradcheck();
    split_capacity = 1;
    moe_gradcheck();
    split_capacity = 0;
    splits_of(0);
    splits_of(1);
    splits_gpt();
    moe_tcp();
    a2a_count_per_micro();
    moe_capacity();
    moe_searched();
    refusals();
    return CHECK_DONE();
}

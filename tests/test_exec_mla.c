/*
 * test_exec_mla.c — the executor's multi-head latent attention (DeepSeek-V2/V3's MLA)
 * and its routers as the models say (DeepSeek-V3's sigmoid scores with a
 * score-correction bias and group-limited choice, normalised and scaled top-k
 * weights; Qwen2-MoE's sigmoid gate on the shared expert), without GPUs. The new
 * device ops by hand (RoPE and its inverse, a key shared by the heads and its summed
 * gradient, strided copies, the gate and its backward, the routers' choice and
 * weights, their backward against central differences) and their refusals; a
 * gradient check through the engine of every tensor of an MLA + MoE layer (with and
 * without a query latent) and of a gated shared expert; tiny DeepSeek-V3-, V2- and
 * Qwen2-MoE-like models, seed 42, two SGD steps, one rank against TP 2, DP 2, EP 2,
 * PP 2 and their mixes with checkpointing and SDP (loss and every gradient within
 * 1e-5 of the layer's largest), over loopback threads and once over tcp (bitwise the
 * loopback run); the TP all-reduces of a latent-attention layer per micro-batch (one
 * each way, the planner's tp_allreduces); one latent-attention layer's activation
 * bytes against the planner's count; the search's plan for the tiny DeepSeek-like
 * model on 4 GPUs against one rank; and what is refused.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "exec.h"
#include "exec_bufs.h"
#include "exec_internal.h"
#include "search.h"
#include "search_tiny.h"
#include "sublayer.h"

#define MAXR 8
#define MAXL 8
#define CAP  (1u << 18)

#include "exec_split.h"

/* ---- the device ops by hand (cpu) ---- */

/* RoPE: two heads of 4 at stride 6 in rows of 12, positions t mod 3; by hand, the
 * inverse undoes it, a shared key into both heads, the heads' sum back, refusals. */
static void ops_rope(tsl_devops_t *d)
{
    tsl_err_t err = {0};
    float x[4 * 12], y[4 * 12], k[4 * 4], back[4 * 4];
    for (int i = 0; i < 48; i++)
        x[i] = y[i] = (float)((i * 7) % 11) * 0.25f - 1.0f;
    for (int i = 0; i < 16; i++)
        k[i] = (float)((i * 5) % 7) * 0.5f - 1.5f;
    tsl_buf_t X = fb(x, 48), Y = fb(y, 48), K = fb(k, 16), B = fb(back, 16);
    tsl_rope_t r = {4, 2, 4, 3, 12, 6, 12, 6, 100.0f, false};
    CHECK(!d->rope(d, &X, &Y, &r, &err), "%s", err.msg);
    /* row 2 (position 2), head 1 (at 6), pair 1: θ = 2 · 100^(−2/4) = 0.2 */
    double a = x[2 * 12 + 6 + 1], b = x[2 * 12 + 6 + 3], th = 0.2;
    CHECK(fabs(y[2 * 12 + 6 + 1] - (a * cos(th) - b * sin(th))) < 1e-6 &&
              fabs(y[2 * 12 + 6 + 3] - (b * cos(th) + a * sin(th))) < 1e-6 && y[5] == x[5] &&
              y[4] == x[4] && fabs(y[3 * 12] - x[3 * 12]) < 1e-7,
          "rope by hand: %g (want %g), position 0 unrotated, columns between heads untouched",
          y[2 * 12 + 7], a * cos(th) - b * sin(th));
    r.inverse = true;
    CHECK(!d->rope(d, &Y, &Y, &r, &err), "%s", err.msg);
    double worst = 0;
    for (int i = 0; i < 48; i++)
        worst = fmax(worst, fabs(y[i] - x[i]));
    CHECK(worst < 1e-6, "the inverse undoes it in place: off by %g", worst);
    /* a shared key (xs 0) into both heads, then both heads' inverses summed (ys 0) */
    tsl_rope_t kr = {4, 2, 4, 3, 4, 0, 12, 6, 100.0f, false};
    CHECK(!d->rope(d, &K, &Y, &kr, &err), "%s", err.msg);
    CHECK(y[2 * 12 + 1] == y[2 * 12 + 6 + 1] && y[2 * 12 + 3] == y[2 * 12 + 6 + 3],
          "the shared key is the same in every head");
    tsl_rope_t sum = {4, 2, 4, 3, 12, 6, 4, 0, 100.0f, true};
    CHECK(!d->rope(d, &Y, &B, &sum, &err), "%s", err.msg);
    worst = 0;
    for (int i = 0; i < 16; i++)
        worst = fmax(worst, fabs(back[i] - 2 * k[i]));
    CHECK(worst < 1e-5, "the heads' inverse rotations summed: twice the key, off by %g", worst);
    tsl_rope_t odd = {4, 2, 3, 3, 12, 6, 12, 6, 100.0f, false};
    CHECK(d->rope(d, &X, &Y, &odd, &err) && tsl_err_code(&err) == TSL_E_INVALID &&
              strstr(err.msg, "rope: rows, heads, an even dim"),
          "an odd width refused: %s", err.msg);
    tsl_rope_t lap = {4, 2, 4, 3, 12, 3, 12, 3, 100.0f, false};
    CHECK(d->rope(d, &X, &Y, &lap, &err) && strstr(err.msg, "rope: a stride"),
          "heads that overlap refused: %s", err.msg);
    tsl_buf_t Xs = fb(x, 40);
    CHECK(d->rope(d, &Xs, &Y, &r, &err) && strstr(err.msg, "rope: x does not fit"),
          "a short buffer refused: %s", err.msg);
}

static void ops_copy2d(tsl_devops_t *d)
{
    tsl_err_t err = {0};
    float x[3 * 10], y[3 * 8];
    for (int i = 0; i < 30; i++)
        x[i] = (float)i;
    memset(y, 0, sizeof(y));
    tsl_buf_t X = fb(x, 30), Y = fb(y, 24);
    /* 2 blocks of 3 columns at stride 4 (from column 1) → stride 4 in rows of 8 */
    tsl_buf_t X1 = tsl_buf_view(&X, 1, 29);
    CHECK(!d->copy2d(d, &X1, 10, 4, &Y, 8, 4, 3, 2, 3, &err), "%s", err.msg);
    CHECK(y[0] == 1 && y[2] == 3 && y[3] == 0 && y[4] == 5 && y[8 + 4] == 15 && y[16 + 6] == 27,
          "copy2d by hand: %g %g %g %g %g", y[0], y[2], y[4], y[12], y[22]);
    CHECK(d->copy2d(d, &X, 10, 4, &Y, 8, 2, 3, 2, 3, &err) && strstr(err.msg, "overlap"),
          "blocks written over each other refused: %s", err.msg);
    tsl_buf_t Ys = fb(y, 20);
    CHECK(d->copy2d(d, &X, 10, 4, &Ys, 8, 4, 3, 2, 3, &err) && strstr(err.msg, "copy2d: y"),
          "a short buffer refused: %s", err.msg);
}

/* The gate: y = σ(l)·x, and its backward against central differences of Σ dy·y. */
static void ops_gate(tsl_devops_t *d)
{
    tsl_err_t err = {0};
    float x[6] = {1, -2, 0.5f, 3, 0.25f, -1}, lg[2] = {0.3f, -1.2f}, g[2], y[6];
    float dy[6] = {0.7f, 0.1f, -0.4f, 1.1f, -0.3f, 0.2f}, dx[6], dl[2];
    tsl_buf_t X = fb(x, 6), L = fb(lg, 2), G = fb(g, 2), Y = fb(y, 6), DY = fb(dy, 6),
              DX = fb(dx, 6), DL = fb(dl, 2);
    CHECK(!d->gate_fwd(d, &X, &L, &G, &Y, 2, 3, &err) &&
              !d->gate_bwd(d, &X, &G, &DY, &DX, &DL, 2, 3, &err),
          "%s", err.msg);
    double s1 = 1 / (1 + exp(1.2));
    CHECK(fabs(g[1] - s1) < 1e-7 && fabs(y[4] - s1 * 0.25) < 1e-7 && fabs(dx[3] - s1 * 1.1) < 1e-7,
          "the gate by hand: %g (σ %g), %g", y[4], s1, dx[3]);
    int bad = 0;
    for (int r = 0; r < 2; r++) {
        double f[2];
        for (int s = 0; s < 2; s++) {
            double sg = 1 / (1 + exp(-(lg[r] + (s ? -1e-4 : 1e-4)))), v = 0;
            for (int c = 0; c < 3; c++)
                v += dy[r * 3 + c] * sg * x[r * 3 + c];
            f[s] = v;
        }
        bad += fabs((f[0] - f[1]) / 2e-4 - dl[r]) > 1e-5;
    }
    CHECK(bad == 0, "the gate's logit gradient against finite differences: %d off", bad);
    tsl_buf_t Gs = fb(g, 1);
    CHECK(d->gate_fwd(d, &X, &L, &Gs, &Y, 2, 3, &err) && strstr(err.msg, "gate_fwd: gate"),
          "a short gate buffer refused: %s", err.msg);
}

/* The routers: DeepSeek-V3's (sigmoid, a correction bias, 4 experts in 2 groups of 2
 * scored by their two best, top 1 group, normalised, × 2.5) by hand; V2's groups
 * scored by their best; refusals. */
static void ops_route(tsl_devops_t *d)
{
    tsl_err_t err = {0};
    /* row 0: σ-scores ordered 3 > 0 > 1 > 2; the bias lifts expert 1 and group 0 */
    float lg[8] = {0.5f, 0.2f, -0.4f, 0.9f, -1.0f, 0.0f, 1.0f, 0.4f}, bias[4] = {0, 0.5f, 0, 0};
    float p[8], w[4];
    int32_t id[4];
    tsl_buf_t L = fb(lg, 8), P = fb(p, 8), W = fb(w, 4), I = ib(id, 4), Bi = fb(bias, 4);
    tsl_moe_route_t v3 = {true, &Bi, 2, 1, true, 2.5f};
    CHECK(!d->moe_topk(d, &L, &v3, &P, &I, &W, 2, 4, 2, &err), "%s", err.msg);
    double s[8];
    for (int i = 0; i < 8; i++)
        s[i] = 1 / (1 + exp(-(double)lg[i]));
    /* row 0: group 0 = {.622, .550 + .5}: 1.67; group 1 = {.401, .711}: 1.11 → group
     * 0, experts 1 (1.05) then 0; weights s/Σ·2.5 of the unbiased scores */
    CHECK(id[0] == 1 && id[1] == 0 && fabs(p[3] - s[3]) < 1e-7 &&
              fabs(w[0] - 2.5 * s[1] / (s[0] + s[1])) < 1e-6 &&
              fabs(w[1] - 2.5 * s[0] / (s[0] + s[1])) < 1e-6,
          "V3 routing row 0: experts %d %d, weights %g %g", id[0], id[1], w[0], w[1]);
    /* row 1: group 0 {.269, .5 + .5}: 1.27, group 1 {.731, .599}: 1.33 → 2 then 3 */
    CHECK(id[2] == 2 && id[3] == 3, "V3 routing row 1: experts %d %d (group 1)", id[2], id[3]);
    /* V2: softmax, groups by their best (no bias), not normalised, × 16 */
    tsl_moe_route_t v2 = {false, NULL, 2, 1, false, 16.0f};
    CHECK(!d->moe_topk(d, &L, &v2, &P, &I, &W, 2, 4, 2, &err) && id[0] == 3 && id[1] == 2 &&
              fabs(w[0] - 16 * p[3]) < 1e-5,
          "V2 routing row 0: experts %d %d (group 1 by its best), weight %g", id[0], id[1], w[0]);
    tsl_moe_route_t bad = {true, NULL, 3, 1, false, 1};
    CHECK(d->moe_topk(d, &L, &bad, &P, &I, &W, 2, 4, 2, &err) &&
              strstr(err.msg, "moe_topk: groups does not fit"),
          "3 groups over 4 experts refused: %s", err.msg);
    tsl_moe_route_t few = {true, NULL, 4, 1, false, 1};
    CHECK(d->moe_topk(d, &L, &few, &P, &I, &W, 2, 4, 2, &err) && strstr(err.msg, "groups"),
          "top 2 from one group of 1 refused: %s", err.msg);
    tsl_buf_t Bs = fb(bias, 3);
    tsl_moe_route_t shortb = {true, &Bs, 0, 0, false, 1};
    CHECK(d->moe_topk(d, &L, &shortb, &P, &I, &W, 2, 4, 2, &err) && strstr(err.msg, "bias"),
          "a short bias refused: %s", err.msg);
}

/* moe_topk_bwd against central differences of Σ_j dw_j·w_j in the logits, for
 * sigmoid and softmax scores, normalised or not, scaled; the bias and groups fix the
 * choice (a probe never flips it here). */
static void ops_route_bwd(tsl_devops_t *d)
{
    tsl_err_t err = {0};
    float lg[6] = {0.3f, -0.7f, 1.1f, 0.2f, -0.2f, 0.6f}, bias[6] = {0, 0.3f, 0, 0, 0.1f, 0};
    tsl_buf_t Bi = fb(bias, 6);
    tsl_moe_route_t cases[] = {{true, &Bi, 3, 2, true, 2.5f},
                               {true, NULL, 0, 0, false, 1.5f},
                               {false, NULL, 2, 1, true, 1.0f},
                               {false, NULL, 0, 0, false, 16.0f}};
    for (int v = 0; v < 4; v++) {
        float p[6], w[2], dw[2] = {0.8f, -1.3f}, dl[6];
        int32_t id[2];
        tsl_buf_t L = fb(lg, 6), P = fb(p, 6), W = fb(w, 2), I = ib(id, 2), DW = fb(dw, 2),
                  DL = fb(dl, 6);
        CHECK(!d->moe_topk(d, &L, &cases[v], &P, &I, &W, 1, 6, 2, &err) &&
                  !d->moe_topk_bwd(d, &P, &I, &DW, &cases[v], &DL, 1, 6, 2, &err),
              "%s", err.msg);
        int bad = 0;
        for (int e = 0; e < 6; e++) {
            double f[2];
            for (int s = 0; s < 2; s++) {
                float x[6], pp[6], ww[2];
                int32_t ii[2];
                memcpy(x, lg, sizeof(x));
                x[e] += s ? -1e-3f : 1e-3f;
                tsl_buf_t X = fb(x, 6), PP = fb(pp, 6), WW = fb(ww, 2), II = ib(ii, 2);
                d->moe_topk(d, &X, &cases[v], &PP, &II, &WW, 1, 6, 2, &err);
                f[s] = (ii[0] == id[0] && ii[1] == id[1]) ? dw[0] * ww[0] + dw[1] * ww[1] : NAN;
            }
            double fd = (f[0] - f[1]) / 2e-3;
            bad += !(fabs(fd - dl[e]) <= 2e-3 * fmax(1, fabs(fd)));
        }
        CHECK(bad == 0, "router %d backward: %d of 6 logits off finite differences", v, bad);
    }
}

static void device_ops(void)
{
    tsl_err_t err = {0};
    tsl_devops_t *d = NULL;
    CHECK(!tsl_devops_cpu_create(0, &d, &err), "%s", err.msg);
    ops_rope(d);
    ops_copy2d(d);
    ops_gate(d);
    ops_route(d);
    ops_route_bwd(d);
    d->destroy(d);
}

/* ---- gradients through the engine against finite differences ---- */

/* Up to 6 elements of [off, off + n) of layer li's vector (experts: its routed
 * experts') against central differences; a kink (a probe flipping a token's experts)
 * skipped. Counts into *tried, *bad, *kinks. */
static void fd_range(tsl_exec_t *e, uint32_t li, bool experts, size_t off, size_t n, float *p,
                     const float *g, size_t np, const char *what, double l0, int *tried, int *bad,
                     int *kinks)
{
    tsl_err_t err = {0};
    int (*set)(tsl_exec_t *, uint32_t, const float *, size_t, tsl_err_t *) =
        experts ? tsl_exec_expert_set_param : tsl_exec_layer_set_param;
    for (size_t j = off; j < off + n; j += 1 + n / 6) {
        float keep = p[j], h = 2e-3f;
        double f[2];
        for (int s = 0; s < 2; s++) {
            p[j] = keep + (s ? -h : h);
            set(e, li, p, np, &err);
            f[s] = loss_now(e);
        }
        p[j] = keep;
        set(e, li, p, np, &err);
        double fd = (f[0] - f[1]) / (2.0 * h), up = (f[0] - l0) / h, down = (l0 - f[1]) / h;
        if (fabs(up - down) > 0.5 * fmax(fabs(up), fabs(down)) + 2e-3) {
            (*kinks)++;
            continue;
        }
        (*tried)++;
        if (fabs(fd - g[j]) > 2e-2 * fmax(fabs(fd), fabs(g[j])) + 2e-4 && (*bad)++ < 5)
            fprintf(stderr, "%s: param %zu: analytic %.6g, finite difference %.6g\n", what, j, g[j],
                    fd);
    }
}

/* Every tensor of layer li (one rank, so its vector is the full layout) and its
 * routed experts; the correction bias's gradient is exactly 0 (it only chooses). */
static void gradcheck(tsl_exec_t *e, const tsl_exec_rank_t *r, uint32_t li, const char *what)
{
    tsl_err_t err = {0};
    size_t n = 0, ne = 0;
    float *g = malloc(CAP * 4), *p = malloc(CAP * 4), *ge = malloc(CAP * 4), *pe = malloc(CAP * 4);
    double l0 = loss_now(e);
    CHECK(!tsl_exec_layer_grad(e, li, g, CAP, &n, &err) &&
              !tsl_exec_layer_param(e, li, p, CAP, &n, &err) &&
              !tsl_exec_expert_grad(e, li, ge, CAP, &ne, &err) &&
              !tsl_exec_expert_param(e, li, pe, CAP, &ne, &err),
          "%s", err.msg);
    tsl_exec_offs_t o;
    tsl_exec_offsets(&r->layers[li], 1, &o);
    size_t size[] = {o.ln1g, o.wdq, o.lnq, o.wuq, o.wdkv, o.lnkv, o.wukv, o.wo,
                     o.ln2g, o.w1,  o.w2,  o.wr,  o.wg,   o.br,   o.wqkv, o.n};
    const char *names[] = {"ln1", "wdq", "lnq", "wuq", "wdkv", "lnkv", "wukv", "wo",
                           "ln2", "w1",  "w2",  "wr",  "wg",   "br",   "wqkv"};
    int tried = 0, bad = 0, kinks = 0, covered = 0;
    for (size_t t = 0; t + 1 < sizeof(size) / sizeof(size[0]); t++) {
        if (size[t] == TSL_NONE)
            continue;
        size_t end = o.n; /* the next tensor present */
        for (size_t u = 0; u + 1 < sizeof(size) / sizeof(size[0]); u++)
            if (size[u] != TSL_NONE && size[u] > size[t] && size[u] < end)
                end = size[u];
        if (size[t] == o.br) {
            bool zero = true;
            for (size_t j = o.br; j < end; j++)
                zero = zero && g[j] == 0.0f;
            CHECK(zero, "%s: the correction bias has no gradient", what);
            continue;
        }
        int before = tried;
        fd_range(e, li, false, size[t], end - size[t], p, g, n, what, l0, &tried, &bad, &kinks);
        covered += tried > before;
        if (tried == before)
            fprintf(stderr, "%s: %s: no point checked\n", what, names[t]);
    }
    if (ne)
        fd_range(e, li, true, 0, ne, pe, ge, ne, what, l0, &tried, &bad, &kinks);
    printf("%s: %d gradients of %d tensors checked, %d kinks skipped\n", what, tried, covered,
           kinks);
    CHECK(bad == 0 && tried > 20 && kinks * 6 <= tried, "%s: %d of %d gradients off (%d kinks)",
          what, bad, tried, kinks);
    free(g);
    free(p);
    free(ge);
    free(pe);
}

/* A hand-made DeepSeek-like layer: RMSNorm, SwiGLU, no biases, causal; latent attention
 * (q latent 12 or none, KV latent 8, heads of 4 + 4 and values of 6); 4 experts of 6
 * in 2 groups, top 2, a shared expert of 4. */
static tsl_layer_t ds_layer(uint32_t q_lora, bool v3)
{
    tsl_layer_t l = {.kind = TSL_LAYER_ENCODER,
                     .seq_len = 4,
                     .hidden = 16,
                     .ffn_hidden = 6,
                     .heads = 2,
                     .gated_ffn = true,
                     .rms_norm = true,
                     .no_bias = true,
                     .no_dropout = true,
                     .causal = true,
                     .experts = 4,
                     .experts_per_tok = 2,
                     .shared_experts = 1,
                     .shared_ffn_hidden = 4,
                     .q_lora_rank = q_lora,
                     .kv_lora_rank = 8,
                     .qk_nope_dim = 4,
                     .qk_rope_dim = 4,
                     .v_head_dim = 6};
    if (v3) {
        l.router_score = TSL_ROUTER_SIGMOID;
        l.router_bias = TSL_ROUTER_BIAS_CHOICE;
        l.router_norm = true;
        l.router_scale = 2.5;
        l.router_groups = 2;
        l.router_topk_groups = 1;
    } else { /* V2-like: softmax, groups by their best, not normalised, scaled */
        l.router_groups = 2;
        l.router_topk_groups = 2;
        l.router_scale = 4;
    }
    return l;
}

/* One rank of model m (two steps of SGD at lr 0, the same batch): each layer of `which`
 * against finite differences. */
static void gradcheck_model(const tsl_model_t *m, uint32_t which, const char *what)
{
    tsl_err_t err = {0};
    tsl_plan_t plan;
    tsl_exec_rank_t r;
    tsl_exec_opts_t o;
    tsl_exec_opts_default(&o);
    o.optim = TSL_EXEC_SGD;
    o.lr = 0;
    o.same_batch = true;
    tsl_loopback_world_t *w = NULL;
    tsl_commops_t *c = NULL;
    tsl_devops_t *d = NULL;
    tsl_exec_t *e = NULL;
    CHECK(!tsl_exec_uniform_plan(m, &(tsl_exec_plan_spec_t){1, 1, 1, false, false, 2, 2}, &plan,
                                 &err) &&
              !tsl_exec_rank_from_plan(&plan, m, 0, &r, &err),
          "%s: %s", what, err.msg);
    CHECK(!tsl_comm_loopback_world(1, &w, &err) && !tsl_comm_loopback_rank(w, 0, &c, &err) &&
              !tsl_devops_cpu_create(0, &d, &err) && !tsl_exec_create(&r, &o, d, c, &e, &err),
          "%s: %s", what, err.msg);
    for (uint32_t i = 0; e && i < r.n_layers; i++) {
        char nm[96];
        snprintf(nm, sizeof(nm), "%s, layer %u", what, i);
        if (which & (1u << i))
            gradcheck(e, &r, i, nm);
    }
    tsl_exec_destroy(e);
    if (d)
        d->destroy(d);
    if (c)
        c->destroy(c);
    tsl_comm_loopback_world_free(w);
    tsl_exec_rank_free(&r);
}

static void engine_gradcheck(void)
{
    tsl_err_t err = {0};
    tsl_model_t m;
    tsl_layer_t v3 = ds_layer(12, true), v2 = ds_layer(0, false);
    /* a dense MLA layer (the first layers of DeepSeek), then the MoE ones */
    tsl_layer_t dense = ds_layer(12, true);
    dense.experts = dense.experts_per_tok = dense.shared_experts = dense.shared_ffn_hidden = 0;
    dense.router_score = dense.router_bias = 0;
    dense.router_norm = false;
    dense.router_scale = 0;
    dense.router_groups = dense.router_topk_groups = 0;
    tsl_model_init(&m, "mla-grad");
    CHECK(!tsl_model_add(&m, &dense, &err) && !tsl_model_add(&m, &v3, &err) &&
              !tsl_model_add(&m, &v2, &err),
          "%s", err.msg);
    gradcheck_model(&m, 0x7, "latent attention (q latent; none) + V3/V2 routing");
    tsl_model_free(&m);
    /* Qwen2-MoE-like: ordinary attention, softmax top 2 of 4, a gated shared expert;
     * and unfused latent attention with a window */
    tsl_layer_t qw = {.kind = TSL_LAYER_ENCODER,
                      .seq_len = 4,
                      .hidden = 16,
                      .ffn_hidden = 6,
                      .heads = 2,
                      .gated_ffn = true,
                      .rms_norm = true,
                      .no_bias = true,
                      .no_dropout = true,
                      .causal = true,
                      .experts = 4,
                      .experts_per_tok = 2,
                      .shared_experts = 1,
                      .shared_ffn_hidden = 8,
                      .shared_expert_gate = true};
    tsl_layer_t uf = ds_layer(12, true);
    uf.unfused_attn = true;
    uf.attn_window = 3;
    tsl_model_init(&m, "gate-grad");
    CHECK(!tsl_model_add(&m, &qw, &err) && !tsl_model_add(&m, &uf, &err), "%s", err.msg);
    gradcheck_model(&m, 0x3, "gated shared expert; unfused windowed latent attention");
    tsl_model_free(&m);
}

/* ---- one rank against splits ---- */

/* TP all-reduces rank 0 makes (counted through its comm ops when split_wrap is set), by size. */
static int (*real_allreduce)(tsl_commops_t *, tsl_group_t *, tsl_buf_t *, void *, tsl_err_t *);
static size_t count_n[4];
static uint32_t counted[4];

static int count_allreduce(tsl_commops_t *c, tsl_group_t *g, tsl_buf_t *buf, void *stream,
                           tsl_err_t *err)
{
    for (int k = 0; k < 4 && c->rank == 0; k++)
        counted[k] += buf->n == count_n[k];
    return real_allreduce(c, g, buf, stream, err);
}

static void wrap_allreduce(tsl_commops_t *c)
{
    real_allreduce = c->allreduce;
    c->allreduce = count_allreduce;
}

/* Tiny models of the LLAMA family (embedding, 3 layers of hidden 64, 4 heads, seq 8,
 * 8 experts of 32 columns top 2, an LM head), the first layer dense (DeepSeek's
 * first_k_dense_replace): DeepSeek-V3-like (latent attention with a query latent of
 * 32, KV latent 16, heads of 8 + 4 and values of 8; sigmoid scores, a correction
 * bias, 4 groups top 2, normalised, × 2.5; a shared expert of 32), DeepSeek-V2-like
 * (no query latent; softmax, groups by their best, × 2) or Qwen2-MoE-like (ordinary
 * attention, softmax, a gated shared expert of 48). */
typedef enum { TINY_V3, TINY_V2, TINY_QWEN } tiny_t;

static void model_tiny(tsl_model_t *m, tiny_t kind)
{
    tsl_err_t err = {0};
    tsl_arch_spec_t sp = {.arch = TSL_ARCH_LLAMA,
                          .layers = 3,
                          .hidden = 64,
                          .ffn_hidden = 96,
                          .heads = 4,
                          .seq_len = 8,
                          .vocab = 96,
                          .gated_ffn = true,
                          .experts = 8,
                          .experts_per_tok = 2,
                          .moe_ffn_hidden = 32,
                          .shared_experts = 1,
                          .shared_ffn_hidden = kind == TINY_QWEN ? 48 : 32,
                          .moe_layers = {0x6}};
    if (kind != TINY_QWEN) {
        sp.q_lora_rank = kind == TINY_V3 ? 32 : 0;
        sp.kv_lora_rank = 16;
        sp.qk_nope_dim = 8;
        sp.qk_rope_dim = 4;
        sp.v_head_dim = 8;
        sp.router_groups = 4;
        sp.router_topk_groups = 2;
    }
    if (kind == TINY_V3) {
        sp.router_bias = true;
        sp.router_score = TSL_ROUTER_SIGMOID;
        sp.router_norm = true;
        sp.router_scale = 2.5;
    } else if (kind == TINY_V2) {
        sp.router_scale = 2;
    } else {
        sp.kv_heads = 2;
        sp.shared_expert_gate = true;
    }
    const char *nm[] = {"tiny-deepseek-v3", "tiny-deepseek-v2", "tiny-qwen2-moe"};
    CHECK(!tsl_model_build(&sp, nm[kind], m, &err), "%s", err.msg);
    CHECK(m->n_layers == 5 && m->layers[1].experts == 0 && m->layers[2].experts == 8 &&
              (kind == TINY_QWEN || m->layers[1].kv_lora_rank == 16) &&
              m->layers[3].shared_expert_gate == (kind == TINY_QWEN) &&
              m->layers[3].router_bias == (kind == TINY_V3 ? TSL_ROUTER_BIAS_CHOICE : 0),
          "the family builds %s", nm[kind]);
}

static void splits_of(tiny_t kind, const split_t *cases, size_t n)
{
    tsl_model_t m;
    model_tiny(&m, kind);
    tsl_plan_t p;
    result_t ref, got;
    plan_of(&m, (split_t){1, 1, 1, false, false, 1, "one"}, 4, 2, &p);
    run_plan(&p, &m, &ref);
    CHECK(ref.ok && isfinite(ref.loss) && ref.loss > 0, "%s reference loss %g", m.name, ref.loss);
    for (size_t i = 0; i < n; i++) {
        char what[128];
        snprintf(what, sizeof(what), "%s %s", m.name, cases[i].name);
        plan_of(&m, cases[i], 4, 2, &p);
        run_plan(&p, &m, &got);
        compare(&ref, &got, what);
        free_result(&got);
    }
    free_result(&ref);
    tsl_model_free(&m);
}

static void splits(void)
{
    split_t v3[] = {{1, 2, 1, false, false, 1, "tp2"},
                    {1, 1, 2, false, false, 1, "dp2 ep1"},
                    {1, 1, 2, false, false, 2, "dp2 ep2"},
                    {2, 1, 1, false, false, 1, "pp2"},
                    {1, 2, 2, false, true, 4, "tp2 dp2 ep4 ckpt"},
                    {1, 1, 4, true, false, 2, "sdp4 ep2"},
                    {2, 2, 2, false, true, 2, "pp2 tp2 dp2 ep2 ckpt"}};
    split_t v2[] = {{1, 2, 1, false, false, 2, "tp2 ep2"},
                    {1, 2, 2, false, true, 2, "tp2 dp2 ep2 ckpt"},
                    {2, 1, 2, false, false, 2, "pp2 dp2 ep2"}};
    split_t qw[] = {{1, 2, 1, false, false, 2, "tp2 ep2"},
                    {1, 2, 2, false, true, 4, "tp2 dp2 ep4 ckpt"},
                    {1, 1, 2, true, false, 2, "sdp2 ep2"},
                    {2, 1, 2, false, false, 2, "pp2 dp2 ep2"}};
    splits_of(TINY_V3, v3, sizeof(v3) / sizeof(v3[0]));
    splits_of(TINY_V2, v2, sizeof(v2) / sizeof(v2[0]));
    splits_of(TINY_QWEN, qw, sizeof(qw) / sizeof(qw[0]));
}

/* The tiny DeepSeek-V3-like model as sub-layers (attention and FFN blocks, AutoPipe's
 * granularity: the MoE layers' attention blocks keep the layer's MoE fields but have
 * no FFN, so no experts run there), one rank against pp 2 × dp 2 at EP 2 with
 * checkpointing and tp 2 at EP 2 (the blocks seeded by their own index: a sub-layer
 * plan's one rank is the reference). */
static void sublayers(void)
{
    tsl_err_t err = {0};
    tsl_model_t m;
    tsl_sublayer_model_t sm;
    model_tiny(&m, TINY_V3);
    CHECK(!tsl_sublayer_split(&m, &sm, &err), "%s", err.msg);
    tsl_plan_t p;
    result_t ref, got;
    plan_of(&sm.model, (split_t){1, 1, 1, false, false, 1, "one"}, 4, 2, &p);
    p.sublayer = true;
    run_plan(&p, &m, &ref);
    CHECK(ref.ok && isfinite(ref.loss) && ref.loss > 0, "sub-layers: one rank's loss %g", ref.loss);
    split_t cases[] = {{2, 1, 2, false, true, 2, "sub-layers pp2 dp2 ep2 ckpt"},
                       {1, 2, 1, false, false, 2, "sub-layers tp2 ep2"}};
    for (int i = 0; i < 2; i++) {
        plan_of(&sm.model, cases[i], 4, 2, &p);
        p.sublayer = true;
        run_plan(&p, &m, &got);
        compare(&ref, &got, cases[i].name);
        free_result(&got);
    }
    free_result(&ref);
    tsl_sublayer_free(&sm);
    tsl_model_free(&m);
}

/* The tiny DeepSeek-V3-like model at tp2 dp2 ep2 over tcp between forked processes:
 * bitwise the loopback run, which is one rank's within 1e-5. */
static void tcp_vs_loopback(void)
{
    tsl_model_t m;
    tsl_plan_t p;
    result_t ref;
    model_tiny(&m, TINY_V3);
    plan_of(&m, (split_t){1, 1, 1, false, false, 1, "one"}, 4, 2, &p);
    run_plan(&p, &m, &ref);
    plan_of(&m, (split_t){1, 2, 2, false, false, 2, "tcp tp2 dp2 ep2"}, 4, 2, &p);
    split_tcp_vs_loopback(&p, &m, &ref, 25000 + (int)(getpid() % 1000) * 8, "tcp tp2 dp2 ep2");
    free_result(&ref);
    tsl_model_free(&m);
}

/* A latent-attention layer at tp 2 makes one TP all-reduce each way per micro-batch, as
 * the planner's tp_allreduces (1): forward the block's output (T·h), backward the
 * latents' gradients side by side (T·(q + c + r); without a query latent T·(h + c +
 * r)), never the norm output's T·h. */
static void mla_allreduces(void)
{
    tsl_err_t err = {0};
    for (int v = 0; v < 2; v++) {
        tsl_layer_t l = ds_layer(v ? 0 : 12, true);
        l.kind = TSL_LAYER_ATTENTION;
        l.ffn_hidden = 0;
        l.experts = l.experts_per_tok = l.shared_experts = l.shared_ffn_hidden = 0;
        tsl_model_t m;
        tsl_model_init(&m, "mla-count");
        CHECK(!tsl_model_add(&m, &l, &err), "%s", err.msg);
        uint32_t mb = 2, nm = 3;
        size_t T = (size_t)mb * l.seq_len, lat = (v ? l.hidden : 12) + 8 + 4;
        tsl_plan_t p;
        plan_of(&m, (split_t){1, 2, 1, false, false, 1, "count"}, mb, nm, &p);
        count_n[0] = T * l.hidden, count_n[1] = T * lat;
        counted[0] = counted[1] = 0;
        result_t res;
        split_wrap = wrap_allreduce;
        run_plan(&p, &m, &res);
        split_wrap = NULL;
        uint32_t runs = nm * 2, fwd = m.layers[0].tp_allreduces;
        printf("latent attention%s at tp 2: %u all-reduces of T*h and %u of T*(latents) per "
               "micro-batch; planner tp_allreduces %u\n",
               v ? " without a query latent" : "", counted[0] / runs, counted[1] / runs, fwd);
        CHECK(res.ok && fwd == 1 && counted[0] == runs && counted[1] == runs,
              "%d: %u and %u all-reduces over %u micro-batches", v, counted[0], counted[1], runs);
        free_result(&res);
        tsl_model_free(&m);
    }
}

/* What one more latent-attention layer (dense FFN) adds to the peak beyond its model
 * states: its activations, on cpu (F32) twice the planner's act_repl + act_shard
 * (2-byte elements: the layer input, the norm output, the query latent and its norm,
 * the KV latent and its norm, the rope key; Q, K, V and the context; the FFN's) plus 4
 * bytes a token of each of its four F32 RMS statistics. */
static void peak_of(uint32_t n, uint64_t *act, tsl_layer_t *out)
{
    tsl_err_t err = {0};
    tsl_layer_t l = ds_layer(24, true);
    l.seq_len = 32;
    l.hidden = 64;
    l.heads = 4;
    l.ffn_hidden = 96;
    l.experts = l.experts_per_tok = l.shared_experts = l.shared_ffn_hidden = 0;
    tsl_model_t m;
    tsl_model_init(&m, "mla-peak");
    CHECK(!tsl_model_add_n(&m, &l, n, &err), "%s", err.msg);
    *out = m.layers[0];
    tsl_plan_t p;
    tsl_exec_rank_t r;
    tsl_exec_opts_t o;
    tsl_exec_report_t rep = {0};
    tsl_loopback_world_t *w = NULL;
    tsl_commops_t *c = NULL;
    tsl_devops_t *d = NULL;
    tsl_exec_opts_default(&o);
    o.warmup = 0;
    o.iters = 1;
    plan_of(&m, (split_t){1, 1, 1, false, false, 1, "peak"}, 2, 1, &p);
    CHECK(!tsl_exec_rank_from_plan(&p, &m, 0, &r, &err), "%s", err.msg);
    CHECK(!tsl_comm_loopback_world(1, &w, &err) && !tsl_comm_loopback_rank(w, 0, &c, &err) &&
              !tsl_devops_cpu_create(0, &d, &err),
          "%s", err.msg);
    CHECK(!tsl_exec_run(&r, &o, d, c, &rep, &err) && !rep.oom, "%s", err.msg);
    *act = rep.peak_bytes - rep.param_bytes;
    d->destroy(d);
    c->destroy(c);
    tsl_comm_loopback_world_free(w);
    tsl_exec_rank_free(&r);
    tsl_model_free(&m);
}

static void mla_peak(void)
{
    uint64_t a1, a2;
    tsl_layer_t l;
    peak_of(1, &a1, &l);
    peak_of(2, &a2, &l);
    uint64_t act = a2 - a1, b = 2, T = b * l.seq_len;
    uint64_t planned = b * (l.act_repl_bytes + l.act_shard_bytes);
    printf("one latent-attention layer (s 32, h 64, 4 heads of 8+4 / 8, q 24, c 8, f 96 gated, "
           "b 2): cpu activation bytes %llu, planner %llu (2-byte) -> %llu in F32 + %llu of F32 "
           "statistics\n",
           (unsigned long long)act, (unsigned long long)planned, (unsigned long long)(2 * planned),
           (unsigned long long)(16 * T));
    CHECK(act == 2 * planned + 16 * T,
          "a latent-attention layer's activations: %llu bytes, "
          "planned %llu",
          (unsigned long long)act, (unsigned long long)(2 * planned + 16 * T));
}

/* The search's best plan for the tiny DeepSeek-V3-like model on 4 GPUs maps to ranks
 * and runs, giving one rank's loss and gradients for the same micro-batches. */
static void searched(void)
{
    tsl_err_t err = {0};
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_request_t rq;
    tsl_search_result_t *res = calloc(1, sizeof(*res));
    model_tiny(&m, TINY_V3);
    tsl_cluster_init(&c);
    tsl_request_init(&rq);
    rq.global_batch = 8;
    CHECK(res && !tsl_cluster_parse_spec(&c, "4xA100-80G", &err) &&
              tsl_search(&m, &c, &rq, NULL, res, &err) == TSL_SEARCH_OK,
          "search: %s", err.msg);
    const tsl_plan_t *p = &res->best;
    char lay[64];
    tsl_strategy_format(&p->layer[2], lay, sizeof(lay));
    printf("tiny DeepSeek-V3-like searched on 4 GPUs: pp %u, ep %u, micro-batch %u × %u, layer 2 "
           "%s%s\n",
           p->pp, p->ep, p->micro_batch, p->n_micro, lay, p->sublayer ? ", sub-layer" : "");
    result_t got;
    run_plan(p, &m, &got);
    CHECK(got.ok && isfinite(got.loss) && got.loss > 0, "the searched plan ran: loss %g", got.loss);
    if (!p->sublayer && got.ok) {
        result_t ref;
        tsl_plan_t one;
        plan_of(&m, (split_t){1, 1, 1, false, false, 1, "one"}, p->micro_batch, p->n_micro, &one);
        run_plan(&one, &m, &ref);
        compare(&ref, &got, "searched DeepSeek-like plan");
        free_result(&ref);
    }
    free_result(&got);
    free(res);
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

/* Refused before any rank runs, naming the layer. */
static void refused_layer(const tsl_layer_t *l, uint32_t tp, const char *want, const char *what)
{
    tsl_err_t err = {0};
    tsl_model_t m;
    tsl_plan_t p;
    tsl_exec_rank_t r;
    tsl_model_init(&m, "refused");
    CHECK(!tsl_model_add(&m, l, &err), "%s: %s", what, err.msg);
    plan_of(&m, (split_t){1, tp, 1, false, false, 1, what}, 2, 1, &p);
    CHECK(tsl_exec_rank_from_plan(&p, &m, 0, &r, &err) && tsl_err_code(&err) == TSL_E_UNSUPPORTED &&
              strstr(err.msg, want),
          "%s refused: %s", what, err.msg);
    tsl_model_free(&m);
}

static void refusals(void)
{
    tsl_layer_t l = ds_layer(12, true);
    l.router_bias = TSL_ROUTER_BIAS_LOGIT;
    refused_layer(&l, 1, "layer 0: the executor does not run a linear bias on the router's logits",
                  "gpt-oss's router bias");
    l = ds_layer(12, true);
    l.router_groups = 3;
    refused_layer(&l, 1, "layer 0: a router of 3 groups, top 1, does not choose 2 of 4 experts",
                  "3 groups over 4 experts");
    l = ds_layer(12, true);
    l.router_topk_groups = 0;
    refused_layer(&l, 1, "a router of 2 groups, top 0", "no group chosen");
    l = ds_layer(12, true);
    l.qk_rope_dim = 3;
    refused_layer(&l, 1, "layer 0: the executor does not run latent attention with an odd RoPE",
                  "an odd RoPE width");
    l = ds_layer(12, true); /* a dense one: the planner models no experts in parallel */
    l.experts = l.experts_per_tok = l.shared_experts = l.shared_ffn_hidden = 0;
    l.parallel_block = true;
    refused_layer(&l, 1, "latent attention in a parallel block", "a parallel latent block");
    l = ds_layer(12, true);
    refused_layer(&l, 4, "layer 0: 2 heads of hidden 16 do not split 4 ways", "tp 4 over 2 heads");
}

int main(void)
{
    device_ops();
    engine_gradcheck();
    splits();
    sublayers();
    tcp_vs_loopback();
    mla_allreduces();
    mla_peak();
    searched();
    refusals();
    return CHECK_DONE();
}

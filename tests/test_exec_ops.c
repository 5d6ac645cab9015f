/*
 * test_exec_ops.c — the cpu device ops: a gradient check of a whole tiny layer (every
 * op's backward, through the executor; also parallel attention/FFN blocks) against
 * central finite differences, and a few
 * op contracts (causal softmax, its chunked form with a query offset, layernorm, OOM as
 * a result, the vocabulary-parallel embedding and cross-entropy on hand-checked cases).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "exec.h"
#include "exec_loss.h"

/* Checks layer li's gradient at a spread of indices. */
static void gradcheck_layer(tsl_exec_t *e, uint32_t li, const char *what)
{
    tsl_err_t err = {0};
    size_t n = 0;
    float *g = malloc(1 << 20), *p = malloc(1 << 20);
    CHECK(!tsl_exec_layer_grad(e, li, g, (1 << 20) / 4, &n, &err), "%s", err.msg);
    CHECK(!tsl_exec_layer_param(e, li, p, (1 << 20) / 4, &n, &err), "%s", err.msg);
    int bad = 0, tried = 0;
    for (size_t j = 0; j < n; j += 1 + n / 97) {
        float keep = p[j], h = 1e-2f;
        p[j] = keep + h;
        tsl_exec_layer_set_param(e, li, p, n, &err);
        double up = loss_now(e);
        p[j] = keep - h;
        tsl_exec_layer_set_param(e, li, p, n, &err);
        double down = loss_now(e);
        p[j] = keep;
        tsl_exec_layer_set_param(e, li, p, n, &err);
        double fd = (up - down) / (2.0 * h);
        tried++;
        if (fabs(fd - g[j]) > 2e-2 * fmax(fabs(fd), fabs(g[j])) + 2e-4) {
            if (bad++ < 5)
                fprintf(stderr, "%s: param %zu: analytic %.6g, finite difference %.6g\n", what, j,
                        g[j], fd);
        }
    }
    CHECK(bad == 0 && tried > 10, "%s: %d of %d gradients off", what, bad, tried);
    free(g);
    free(p);
}

/* The encoder layer of a gradient check: 4 tokens of 8 by default; chunk: query rows
 * per fused-attention chunk (0: the engine's rule). */
typedef struct gc_shape {
    tsl_layer_t enc;
    uint32_t chunk;
    const char *name;
} gc_shape_t;

static gc_shape_t gpt_shape(void)
{
    return (gc_shape_t){
        {.kind = TSL_LAYER_ENCODER, .seq_len = 4, .hidden = 8, .ffn_hidden = 16, .heads = 2},
        0,
        ""};
}

/* positions: the embedding's learned positions; tied: the head shares its table (the
 * head has no parameters; the table's gradient carries both uses). */
static void gradcheck_shape(uint32_t vocab, uint32_t positions, bool tied, gc_shape_t sh)
{
    tsl_err_t err = {0};
    tsl_model_t m;
    tsl_model_init(&m, "tiny");
    uint32_t s = sh.enc.seq_len, hd = sh.enc.hidden;
    tsl_layer_t emb = {.kind = TSL_LAYER_EMBEDDING,
                       .seq_len = s,
                       .hidden = hd,
                       .vocab = vocab,
                       .positions = positions};
    tsl_layer_t enc = sh.enc;
    tsl_layer_t head = {
        .kind = TSL_LAYER_HEAD, .seq_len = s, .hidden = hd, .vocab = vocab, .tied_head = tied};
    if (vocab)
        tsl_model_add(&m, &emb, &err);
    tsl_model_add(&m, &enc, &err);
    if (vocab)
        tsl_model_add(&m, &head, &err);
    tsl_exec_plan_spec_t spec = {.pp = 1, .tp = 1, .dp = 1, .micro_batch = 2, .n_micro = 2};
    tsl_plan_t plan;
    tsl_exec_rank_t r;
    tsl_exec_opts_t o;
    tsl_exec_opts_default(&o);
    o.optim = TSL_EXEC_SGD;
    o.lr = 0;
    o.same_batch = true;
    o.attn_chunk = sh.chunk;
    tsl_loopback_world_t *w = NULL;
    tsl_commops_t *c = NULL;
    tsl_devops_t *d = NULL;
    tsl_exec_t *e = NULL;
    CHECK(!tsl_exec_uniform_plan(&m, &spec, &plan, &err), "%s", err.msg);
    CHECK(!tsl_exec_rank_from_plan(&plan, &m, 0, &r, &err), "%s", err.msg);
    CHECK(!tsl_comm_loopback_world(1, &w, &err) && !tsl_comm_loopback_rank(w, 0, &c, &err), "%s",
          err.msg);
    CHECK(!tsl_devops_cpu_create(0, &d, &err), "%s", err.msg);
    CHECK(!tsl_exec_create(&r, &o, d, c, &e, &err), "%s", err.msg);
    if (e) {
        double l0 = loss_now(e);
        CHECK(isfinite(l0) && l0 > 0, "loss %g", l0);
        for (uint32_t i = 0; i < r.n_layers; i++) {
            char what[64];
            if (!tsl_exec_layer_params(&r.layers[i], 1))
                continue; /* a tied head: checked through the embedding */
            snprintf(what, sizeof(what), "%svocab %u positions %u%s layer %u", sh.name, vocab,
                     positions, tied ? " tied" : "", i);
            loss_now(e); /* the gradients of the unperturbed parameters */
            gradcheck_layer(e, i, what);
        }
    }
    tsl_exec_destroy(e);
    d->destroy(d);
    c->destroy(c);
    tsl_comm_loopback_world_free(w);
    tsl_exec_rank_free(&r);
    tsl_model_free(&m);
}

static void gradcheck(uint32_t vocab, uint32_t positions, bool tied)
{
    gradcheck_shape(vocab, positions, tied, gpt_shape());
}

/* A Llama-like layer: RMSNorm, no biases, SwiGLU, grouped-query attention (4 query
 * heads, 2 K/V heads), causal; window > 0: a sliding window of that many keys, in
 * chunks of 2 query rows so that whole key blocks are skipped. */
static void gradcheck_llama(uint32_t window)
{
    gc_shape_t sh = {{.kind = TSL_LAYER_ENCODER,
                      .seq_len = window ? 8 : 4,
                      .hidden = 8,
                      .ffn_hidden = 12,
                      .heads = 4,
                      .kv_heads = 2,
                      .attn_window = window,
                      .gated_ffn = true,
                      .rms_norm = true,
                      .no_bias = true,
                      .no_dropout = true,
                      .causal = true},
                     window ? 2 : 0,
                     window ? "llama window: " : "llama: "};
    gradcheck_shape(11, 0, false, sh);
}

/* RMSNorm on a hand-checked row and its backward's invariants; SwiGLU by hand. */
static void rmsnorm_swiglu(void)
{
    tsl_err_t err = {0};
    tsl_devops_t *d = NULL;
    CHECK(!tsl_devops_cpu_create(0, &d, &err), "%s", err.msg);
    float x[4] = {1, 2, 3, 4}, g[4] = {1, 2, 1, 0.5f}, y[4], rs[1], dy[4] = {1, -1, 2, 3};
    float dx[4], dg[4] = {0};
    tsl_buf_t xb = {x, 4, TSL_DT_F32}, gb = {g, 4, TSL_DT_F32}, yb = {y, 4, TSL_DT_F32};
    tsl_buf_t rb = {rs, 1, TSL_DT_F32}, dyb = {dy, 4, TSL_DT_F32}, dxb = {dx, 4, TSL_DT_F32};
    tsl_buf_t dgb = {dg, 4, TSL_DT_F32};
    double r = 1.0 / sqrt(7.5 + 1e-5); /* mean of squares (1 + 4 + 9 + 16) / 4 */
    CHECK(!d->rmsnorm_fwd(d, &xb, &gb, &yb, &rb, 1, 4, &err), "%s", err.msg);
    CHECK_NEAR(rs[0], r, 1e-6, "rstd %g, by hand %g", rs[0], r);
    for (int c = 0; c < 4; c++)
        CHECK_NEAR(y[c], x[c] * r * g[c], 1e-6, "y[%d] = %g", c, y[c]);
    CHECK(!d->rmsnorm_bwd(d, &dyb, &xb, &gb, &rb, &dxb, &dgb, 1, 4, &err), "%s", err.msg);
    double xdx = 0;
    for (int c = 0; c < 4; c++) {
        CHECK_NEAR(dg[c], dy[c] * x[c] * r, 1e-6, "dgamma[%d] = %g", c, dg[c]);
        xdx += x[c] * dx[c];
    }
    /* y(α·x) = y(x) (up to eps): the gradient is orthogonal to x */
    CHECK(fabs(xdx) < 1e-5, "x · dx = %g, want 0", xdx);
    /* dx[0] = r·(dy·g − x̂·mean(dy·g·x̂)) by hand */
    double m = (1 * 1 * 1 - 1 * 2 * 2 + 2 * 1 * 3 + 3 * 0.5 * 4) * r / 4;
    CHECK_NEAR(dx[0], r * (1 - 1 * r * m), 1e-6, "dx[0] %g", dx[0]);

    /* SwiGLU: rows of gate | up; gate 0 gives 0; gate 1, up 2 gives 2·σ(1). */
    float sx[4] = {0, 1, 5, 2}, sy[2], sdy[2] = {1, 1}, sdx[4];
    tsl_buf_t sxb = {sx, 4, TSL_DT_F32}, syb = {sy, 2, TSL_DT_F32};
    tsl_buf_t sdyb = {sdy, 2, TSL_DT_F32}, sdxb = {sdx, 4, TSL_DT_F32};
    double s1 = 1 / (1 + exp(-1.0));
    CHECK(!d->swiglu_fwd(d, &sxb, &syb, 1, 2, &err), "%s", err.msg);
    CHECK(sy[0] == 0 && fabs(sy[1] - 2 * s1) < 1e-6, "swiglu %g %g, want 0 %g", sy[0], sy[1],
          2 * s1);
    CHECK(!d->swiglu_bwd(d, &sxb, &sdyb, &sdxb, 1, 2, &err), "%s", err.msg);
    /* d/dgate a·σ(a)·u = u·σ(a)(1 + a(1 − σ(a))): at a = 0, u/2; d/dup = a·σ(a) */
    CHECK_NEAR(sdx[0], 2.5, 1e-6, "dgate at 0: %g", sdx[0]);
    CHECK_NEAR(sdx[1], 2 * s1 * (1 + (1 - s1)), 1e-6, "dgate at 1: %g", sdx[1]);
    CHECK(sdx[2] == 0 && fabs(sdx[3] - s1) < 1e-6, "dup %g %g", sdx[2], sdx[3]);
    d->destroy(d);
}

/* The windowed chunked softmax: 4 queries, window 2, query q sees keys q − 1 and q;
 * then a chunk whose keys start 2 before its first query (q0 = 2 from the first
 * column) with window 3: its rows see columns 0-2 and 1-3. */
static void softmax_window(void)
{
    tsl_err_t err = {0};
    tsl_devops_t *d = NULL;
    CHECK(!tsl_devops_cpu_create(0, &d, &err), "%s", err.msg);
    float x[16], y[16];
    for (int i = 0; i < 16; i++)
        x[i] = (float)(i % 4);
    tsl_buf_t xb = {x, 16, TSL_DT_F32}, yb = {y, 16, TSL_DT_F32};
    CHECK(!d->softmax_chunk_fwd(d, &xb, &yb, 4, 4, 4, 0, 2, &err), "%s", err.msg);
    double a = 1 / (1 + exp(1.0)), b = 1 - a; /* softmax of (k, k + 1) */
    float want[16] = {1, 0,        0,        0, (float)a, (float)b, 0,        0,
                      0, (float)a, (float)b, 0, 0,        0,        (float)a, (float)b};
    for (int i = 0; i < 16; i++)
        CHECK_NEAR(y[i], want[i], 1e-6, "window 2: element %d %g, want %g", i, y[i], want[i]);
    CHECK(!d->softmax_chunk_fwd(d, &xb, &yb, 2, 4, 2, 2, 3, &err), "%s", err.msg);
    double z = 1 + exp(1.0) + exp(2.0);
    /* row 0 sees columns 0..2 of (0 1 2 3), row 1 columns 1..3: the same softmax */
    float p0 = (float)(1 / z), p1 = (float)(exp(1.0) / z), p2 = (float)(exp(2.0) / z);
    float want2[8] = {p0, p1, p2, 0, 0, p0, p1, p2};
    for (int i = 0; i < 8; i++)
        CHECK_NEAR(y[i], want2[i], 1e-6, "offset window: element %d %g, want %g", i, y[i],
                   want2[i]);
    tsl_err_t bad = {0};
    CHECK(d->softmax_chunk_fwd(d, &xb, &yb, 4, 4, 4, 0, -1, &bad) == -1 &&
              tsl_err_code(&bad) == TSL_E_INVALID,
          "a negative window refused");
    d->destroy(d);
}

static void softmax_layernorm(void)
{
    tsl_err_t err = {0};
    tsl_devops_t *d = NULL;
    CHECK(!tsl_devops_cpu_create(0, &d, &err), "%s", err.msg);
    tsl_buf_t x, y, g, b, mu, rs;
    CHECK(!d->alloc(d, &x, 12, TSL_DT_F32, &err) && !d->alloc(d, &y, 12, TSL_DT_F32, &err),
          "alloc");
    d->fill_uniform(d, &x, 7, 1, 0, 0, 3, &err);
    d->softmax_fwd(d, &x, &y, 4, 3, true, &err); /* rows 0..3 see 1,2,3,1 columns */
    const float *v = y.ptr;
    CHECK(v[0] == 1.0f && v[1] == 0 && v[2] == 0, "row 0 sees only column 0");
    CHECK(fabsf(v[3] + v[4] - 1) < 1e-6f && v[5] == 0, "row 1 masks column 2");
    CHECK(fabsf(v[6] + v[7] + v[8] - 1) < 1e-6f, "row 2 sums to 1");
    CHECK(v[9] == 1.0f, "row 3 is query 0 of the next sequence");
    CHECK(!d->alloc(d, &g, 3, TSL_DT_F32, &err) && !d->alloc(d, &b, 3, TSL_DT_F32, &err) &&
              !d->alloc(d, &mu, 4, TSL_DT_F32, &err) && !d->alloc(d, &rs, 4, TSL_DT_F32, &err),
          "alloc");
    d->fill_uniform(d, &g, 1, 1, 0, 1, 0, &err); /* gamma 1 */
    d->layernorm_fwd(d, &x, &g, &b, &y, &mu, &rs, 4, 3, &err);
    for (int r = 0; r < 4; r++) {
        double s = 0, s2 = 0;
        for (int c = 0; c < 3; c++)
            s += v[r * 3 + c], s2 += v[r * 3 + c] * v[r * 3 + c];
        CHECK(fabs(s) < 1e-5 && fabs(s2 / 3 - 1) < 1e-2, "row %d: mean %g, var %g", r, s / 3,
              s2 / 3);
    }
    uint64_t used = d->used_bytes(d);
    CHECK(used == (12 + 12 + 3 + 3 + 4 + 4) * 4u, "used %llu", (unsigned long long)used);
    tsl_buf_t *all[] = {&x, &y, &g, &b, &mu, &rs};
    for (int i = 0; i < 6; i++)
        d->free(d, all[i]);
    CHECK(d->used_bytes(d) == 0 && d->peak_bytes(d) == used, "peak kept after free");
    d->destroy(d);

    /* A limit makes alloc fail with NOMEM, and leaves the counters as they were. */
    CHECK(!tsl_devops_cpu_create(100, &d, &err), "%s", err.msg);
    CHECK(!d->alloc(d, &x, 20, TSL_DT_F32, &err), "80 bytes fit");
    tsl_err_t oom = {0};
    CHECK(d->alloc(d, &y, 20, TSL_DT_F32, &oom) == -1 && tsl_err_code(&oom) == TSL_E_NOMEM,
          "160 bytes do not: %s", oom.msg);
    CHECK(d->used_bytes(d) == 80 && y.ptr == NULL, "used %llu",
          (unsigned long long)d->used_bytes(d));
    d->free(d, &x);
    d->destroy(d);
}

/* The chunked causal softmax: groups of query rows from q0, hand-checked; group = cols
 * and q0 = 0 is softmax_fwd's causal softmax, bit for bit; bad shapes are refused. */
static void softmax_chunk(void)
{
    tsl_err_t err = {0};
    tsl_devops_t *d = NULL;
    CHECK(!tsl_devops_cpu_create(0, &d, &err), "%s", err.msg);
    tsl_buf_t x, y, z;
    CHECK(!d->alloc(d, &x, 16, TSL_DT_F32, &err) && !d->alloc(d, &y, 16, TSL_DT_F32, &err) &&
              !d->alloc(d, &z, 16, TSL_DT_F32, &err),
          "alloc");
    /* Two groups (heads) of two rows, queries 1 and 2 of 4 keys. Row 0 sees keys 0..1:
     * e^0 : e^ln3 = 1 : 3; row 1 sees 0..2: 2 : 1 : 5; the second group is the first
     * shifted by 10 (softmax does not see a shift). Masked keys hold large values. */
    float in[16] = {0,  logf(3),      50, 70, logf(2),      0,  logf(5),      90,
                    10, 10 + logf(3), 60, 80, 10 + logf(2), 10, 10 + logf(5), 99};
    float want[8] = {0.25f, 0.75f, 0, 0, 0.25f, 0.125f, 0.625f, 0};
    memcpy(x.ptr, in, sizeof(in));
    CHECK(!d->softmax_chunk_fwd(d, &x, &y, 4, 4, 2, 1, 0, &err), "%s", err.msg);
    const float *v = y.ptr;
    for (int i = 0; i < 16; i++)
        CHECK(fabsf(v[i] - want[i % 8]) < 1e-6f, "element %d: %g, want %g", i, v[i], want[i % 8]);
    /* A query past the last key sees every key. */
    CHECK(!d->softmax_chunk_fwd(d, &x, &y, 1, 4, 1, 5, 0, &err) && v[3] > 0.99f, "row sees all 4");
    d->fill_uniform(d, &x, 3, 1, 0, 0, 3, &err);
    d->softmax_fwd(d, &x, &y, 16 / 4, 4, true, &err);
    CHECK(!d->softmax_chunk_fwd(d, &x, &z, 4, 4, 4, 0, 0, &err) && !memcmp(y.ptr, z.ptr, 64),
          "group = cols, q0 = 0 is the causal softmax");
    CHECK(!d->softmax_chunk_fwd(d, &x, &x, 4, 4, 4, 0, 0, &err) && !memcmp(x.ptr, z.ptr, 64),
          "in place");
    tsl_err_t bad = {0};
    CHECK(d->softmax_chunk_fwd(d, &x, &y, 3, 4, 2, 0, 0, &bad) == -1 &&
              tsl_err_code(&bad) == TSL_E_INVALID && strstr(bad.msg, "groups of 2"),
          "3 rows in groups of 2 refused: %s", bad.msg);
    CHECK(d->softmax_chunk_fwd(d, &x, &y, 8, 4, 2, 0, 0, &bad) == -1,
          "32 elements into 16 refused");
    d->free(d, &x);
    d->free(d, &y);
    d->free(d, &z);
    d->destroy(d);
}

/* Buffers over host arrays: the cpu ops read ptr directly. */
static tsl_buf_t hb(void *p, size_t n, tsl_dtype_t dt)
{
    return (tsl_buf_t){p, n, dt};
}

/* Two TP ranks' shares of a vocabulary of 5, vl = 3: rank 0 columns 0-2, rank 1
 * columns 3-4 and one padding column (set to 100: it would dominate if it took part).
 * Row 0: logits 1..5, target 4 (rank 1's); loss log Σ_k e^k − 5 = log(1 + e^-1 + e^-2
 * + e^-3 + e^-4). Row 1: logits 0, 0, 0, 0, −1, target 0 (rank 0's); loss log(4 +
 * e^-1). Each rank computes the whole loss from the reduced sums. */
static void vocab_xent(void)
{
    tsl_err_t err = {0};
    tsl_devops_t *d = NULL;
    CHECK(!tsl_devops_cpu_create(0, &d, &err), "%s", err.msg);
    float y[2][6] = {{1, 2, 3, 0, 0, 0}, {4, 5, 100, 0, -1, 100}}, dy[2][6];
    int32_t t[2] = {4, 0};
    int valid[2] = {3, 2}, v0[2] = {0, 3};
    float mxs[4], sums[2][4], total[4] = {0}, loss[2] = {0, 0};
    tsl_buf_t tb = hb(t, 2, TSL_DT_I32), mb = hb(mxs, 4, TSL_DT_F32);
    for (int k = 0; k < 2; k++) {
        tsl_buf_t yb = hb(y[k], 6, TSL_DT_F32), mx = hb(mxs + 2 * k, 2, TSL_DT_F32);
        CHECK(!d->vxent_max(d, &yb, &mx, 2, 3, valid[k], &err), "%s", err.msg);
    }
    CHECK(mxs[0] == 3 && mxs[1] == 0 && mxs[2] == 5 && mxs[3] == 0,
          "local maxima over the real columns: %g %g %g %g", mxs[0], mxs[1], mxs[2], mxs[3]);
    for (int k = 0; k < 2; k++) {
        tsl_buf_t yb = hb(y[k], 6, TSL_DT_F32), sb = hb(sums[k], 4, TSL_DT_F32);
        CHECK(!d->vxent_sums(d, &yb, &tb, &mb, 2, &sb, 2, 3, valid[k], v0[k], &err), "%s", err.msg);
        for (int i = 0; i < 4; i++)
            total[i] += sums[k][i]; /* the TP all-reduce */
    }
    CHECK(total[2] == 5 && total[3] == 0, "target logits %g %g", total[2], total[3]);
    tsl_buf_t sb = hb(total, 4, TSL_DT_F32);
    for (int k = 0; k < 2; k++) {
        tsl_buf_t yb = hb(y[k], 6, TSL_DT_F32), db = hb(dy[k], 6, TSL_DT_F32);
        tsl_buf_t lb = hb(&loss[k], 1, TSL_DT_F32);
        CHECK(!d->vxent(d, &yb, &tb, &mb, 2, &sb, &db, 2, 3, valid[k], v0[k], 0.5f, &lb, &err),
              "%s", err.msg);
    }
    double e1 = exp(-1.0),
           want = 0.5 * (log1p(e1 + e1 * e1 + pow(e1, 3) + pow(e1, 4)) + log(4 + e1));
    CHECK_NEAR(loss[0], want, 1e-6, "rank 0 loss %.7g, by hand %.7g", loss[0], want);
    CHECK_NEAR(loss[1], want, 1e-6, "rank 1 loss %.7g, by hand %.7g", loss[1], want);
    double s0 = exp(1) + exp(2) + exp(3) + exp(4) + exp(5), s1 = 4 + e1;
    CHECK_NEAR(dy[0][0], 0.5 * exp(1) / s0, 1e-6, "row 0 column 0: %g", dy[0][0]);
    CHECK_NEAR(dy[1][1], 0.5 * (exp(5) / s0 - 1), 1e-6, "row 0 target: %g", dy[1][1]);
    CHECK_NEAR(dy[0][3], 0.5 * (1 / s1 - 1), 1e-6, "row 1 target: %g", dy[0][3]);
    CHECK_NEAR(dy[1][4], 0.5 * e1 / s1, 1e-6, "row 1 column 4: %g", dy[1][4]);
    CHECK(dy[1][2] == 0 && dy[1][5] == 0, "padding columns get no gradient");
    d->destroy(d);
}

/* Rank 1 of a vocabulary split in threes: ids 4 and 5 are its rows 1 and 2, id 0 is
 * another rank's (a zero row); backward adds to its own rows only. */
static void vocab_embed(void)
{
    tsl_err_t err = {0};
    tsl_devops_t *d = NULL;
    CHECK(!tsl_devops_cpu_create(0, &d, &err), "%s", err.msg);
    float table[6] = {1, 2, 3, 4, 5, 6}, y[6] = {9, 9, 9, 9, 9, 9}, g[6] = {0};
    float dy[6] = {1, 1, 10, 10, 100, 100};
    int32_t ids[3] = {4, 0, 5};
    tsl_buf_t tb = hb(table, 6, TSL_DT_F32), yb = hb(y, 6, TSL_DT_F32), ib = hb(ids, 3, TSL_DT_I32);
    tsl_buf_t gb = hb(g, 6, TSL_DT_F32), db = hb(dy, 6, TSL_DT_F32);
    CHECK(!d->vembed_fwd(d, &tb, &ib, &yb, 3, 2, 3, 3, &err), "%s", err.msg);
    CHECK(y[0] == 3 && y[1] == 4 && y[2] == 0 && y[3] == 0 && y[4] == 5 && y[5] == 6,
          "lookup: %g %g | %g %g | %g %g", y[0], y[1], y[2], y[3], y[4], y[5]);
    CHECK(!d->vembed_bwd(d, &db, &ib, &gb, 3, 2, 3, 3, &err), "%s", err.msg);
    CHECK(g[0] == 0 && g[1] == 0 && g[2] == 1 && g[3] == 1 && g[4] == 100 && g[5] == 100,
          "backward: %g %g | %g %g | %g %g", g[0], g[1], g[2], g[3], g[4], g[5]);
    d->destroy(d);
}

/* Parallel attention/FFN blocks (GPT-J, NeoX: two norms; Falcon, Phi: shared_norm, one
 * norm feeding both): a GPT shape with biases and LayerNorm, and a NeoX/Falcon-like one
 * with RMSNorm, SwiGLU and grouped-query attention. */
static void gradcheck_parallel(bool shared, bool llama)
{
    gc_shape_t sh = gpt_shape();
    if (llama)
        sh.enc = (tsl_layer_t){.kind = TSL_LAYER_ENCODER,
                               .seq_len = 4,
                               .hidden = 8,
                               .ffn_hidden = 12,
                               .heads = 4,
                               .kv_heads = 2,
                               .gated_ffn = true,
                               .rms_norm = true,
                               .no_bias = true,
                               .no_dropout = true,
                               .causal = true};
    sh.enc.parallel_block = true;
    sh.enc.shared_norm = shared;
    static char name[64];
    snprintf(name, sizeof(name), "parallel%s%s: ", shared ? " shared" : "", llama ? " llama" : "");
    sh.name = name;
    gradcheck_shape(11, 0, false, sh);
}

int main(void)
{
    softmax_layernorm();
    softmax_chunk();
    vocab_xent();
    vocab_embed();
    gradcheck(0, 0, false);
    gradcheck(11, 0, false);
    gradcheck(11, 4, false);
    gradcheck(11, 6, true);
    rmsnorm_swiglu();
    softmax_window();
    gradcheck_llama(0);
    gradcheck_llama(3);
    gradcheck_parallel(false, false);
    gradcheck_parallel(true, false);
    gradcheck_parallel(false, true);
    gradcheck_parallel(true, true);
    return CHECK_DONE();
}

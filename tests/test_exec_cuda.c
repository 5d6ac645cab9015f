/*
 * test_exec_cuda.c — the cuda device ops against the cpu ops on a small layer stack:
 * one rank, same seed and batch, one step; loss and every layer's gradient within
 * bf16 tolerance (2% of the largest gradient of the layer, 1% on the loss). The stack
 * has GPT layers (LayerNorm, GeLU, biases) and Llama-like ones (RMSNorm, SwiGLU, no
 * biases, grouped-query attention, a sliding window of 24 keys in chunks of 16 query
 * rows) and a mixture-of-experts layer (4 SwiGLU experts, every one chosen — top 4, so
 * bf16 rounding cannot change a routing — and a shared expert), so every kernel the
 * executor uses is checked, the routed experts' gradients too. Then the MoE device ops
 * alone, cuda against cpu, on logits bf16 holds exactly (top 2 of 8 at a capacity that
 * drops copies: the same experts, order, drops and counts; gathers, the weighted
 * combine and its dot products within bf16 rounding). The stack ends with a DeepSeek-
 * like layer: multi-head latent attention (a query latent, RoPE on a key shared by the
 * heads), DeepSeek-V3's router (sigmoid scores, a correction bias, 2 groups, weights
 * normalised and scaled; top 4 of 4 again) and a gated shared expert (Qwen2-MoE's);
 * then the latent-attention and routing ops alone (RoPE, its summed inverse, strided
 * copies, the gate and its backward, V3's choice of 2 of 8 in 4 groups on exact
 * logits: the same experts, weights within bf16 rounding). Skips (77) where no GPU
 * can be used. Run on a GPU machine: bench/exec_gpu_check.sh.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "exec.h"

#define CAP (1u << 22)

/* g[i], n[i]: layer i's gradients; g[8 + i], n[8 + i]: its routed experts' (n 0: none). */
static int run(const char *devops, const tsl_exec_rank_t *r, double *loss, float **g, size_t *n,
               tsl_err_t *err)
{
    tsl_exec_opts_t o;
    tsl_loopback_world_t *w = NULL;
    tsl_commops_t *c = NULL;
    tsl_devops_t *d = NULL;
    tsl_exec_t *e = NULL;
    int rc = -1;
    tsl_exec_opts_default(&o);
    o.optim = TSL_EXEC_SGD;
    o.lr = 0;
    o.same_batch = true;
    o.attn_chunk = 16; /* several chunks, so that the window skips keys */
    if (tsl_comm_loopback_world(1, &w, err) || tsl_comm_loopback_rank(w, 0, &c, err) ||
        tsl_devops_create(devops, 0, 0, &d, err) || tsl_exec_create(r, &o, d, c, &e, err) ||
        tsl_exec_step(e, NULL, err))
        goto out;
    *loss = tsl_exec_loss(e);
    for (uint32_t i = 0; i < r->n_layers; i++) {
        g[i] = malloc(CAP * sizeof(float));
        g[8 + i] = malloc(CAP * sizeof(float));
        if (tsl_exec_layer_grad(e, i, g[i], CAP, &n[i], err) ||
            tsl_exec_expert_grad(e, i, g[8 + i], CAP, &n[8 + i], err))
            goto out;
    }
    rc = 0;
out:
    tsl_exec_destroy(e);
    if (d)
        d->destroy(d);
    if (c)
        c->destroy(c);
    tsl_comm_loopback_world_free(w);
    return rc;
}

/* Host values through a device buffer of dtype dt and back (cuda: F32 → bf16 → F32). */
static int put(tsl_devops_t *d, tsl_buf_t *b, size_t n, tsl_dtype_t dt, const void *host,
               tsl_err_t *err)
{
    return d->alloc(d, b, n, dt, err) || d->upload(d, b, host, err);
}

/* The MoE ops on one implementation: 16 tokens of 8 experts, top 2, a capacity of 3
 * copies per expert (4 on average: some dropped). out: probs (128),
 * w (32), idx, order, pos (32 each, as floats), counts (8), gathered rows (32 × 4),
 * the combine (16 × 4), the dots (32): 552 floats. */
static int moe_ops_on(const char *devops, float *out, tsl_err_t *err)
{
    enum { T = 16, E = 8, K = 2, H = 4 };
    tsl_devops_t *d = NULL;
    float lg[T * E], x[T * H], y[T * H], rows[T * K * H];
    for (int i = 0; i < T * E; i++) /* distinct per row, quarters: exact in bf16 */
        lg[i] = (float)((i * 37 + i / E * 11) % 29) * 0.25f - 3.0f;
    for (int i = 0; i < T * H; i++)
        x[i] = (float)(i % 13) * 0.125f - 0.75f, y[i] = 0.5f;
    for (int i = 0; i < T * K * H; i++)
        rows[i] = (float)(i % 7) * 0.25f - 0.5f;
    tsl_buf_t L, P, W, I, O, Q, C, X, G, Y, R, D;
    int rc =
        tsl_devops_create(devops, 0, 0, &d, err) || put(d, &L, T * E, d->act_dtype, lg, err) ||
        d->alloc(d, &P, T * E, TSL_DT_F32, err) || d->alloc(d, &W, T * K, TSL_DT_F32, err) ||
        d->alloc(d, &I, T * K, TSL_DT_I32, err) || d->alloc(d, &O, T * K, TSL_DT_I32, err) ||
        d->alloc(d, &Q, T * K, TSL_DT_I32, err) || d->alloc(d, &C, E, TSL_DT_F32, err) ||
        put(d, &X, T * H, d->act_dtype, x, err) || d->alloc(d, &G, T * K * H, d->act_dtype, err) ||
        put(d, &Y, T * H, d->act_dtype, y, err) || put(d, &R, T * K * H, d->act_dtype, rows, err) ||
        d->alloc(d, &D, T * K, TSL_DT_F32, err);
    rc = rc || d->moe_topk(d, &L, NULL, &P, &I, &W, T, E, K, err) ||
         d->moe_sort(d, &I, &O, &Q, &C, T * K, E, 3, err) ||
         d->gather_rows(d, &X, &O, K, &W, &G, T * K, H, err) ||
         d->scatter_add_rows(d, &R, &Q, &W, &Y, T, K, H, err) ||
         d->rows_dot(d, &X, &R, &Q, &D, T * K, K, H, err) || d->sync(d, err);
    int32_t ints[3][T * K];
    tsl_buf_t *ib[3] = {&I, &O, &Q};
    rc = rc || d->download(d, &P, out, err) || d->download(d, &W, out + 128, err) ||
         d->download(d, &C, out + 256, err) || d->download(d, &G, out + 264, err) ||
         d->download(d, &Y, out + 392, err) || d->download(d, &D, out + 456, err);
    for (int k = 0; k < 3 && !rc; k++) {
        rc = d->download(d, ib[k], ints[k], err);
        for (int i = 0; i < T * K; i++)
            out[160 + 32 * k + i] = (float)ints[k][i];
    }
    if (d) {
        tsl_buf_t *all[] = {&L, &P, &W, &I, &O, &Q, &C, &X, &G, &Y, &R, &D};
        for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++)
            d->free(d, all[k]);
        d->destroy(d);
    }
    return rc;
}

static void moe_ops(void)
{
    tsl_err_t err = {0};
    static float c[552], g[552];
    CHECK(!moe_ops_on("cpu", c, &err), "cpu: %s", err.msg);
    CHECK(!moe_ops_on("cuda", g, &err), "cuda: %s", err.msg);
    int same = 1;
    for (int i = 160; i < 264; i++) /* idx, order, pos, counts: exact */
        same &= c[i] == g[i];
    double worst = 0;
    for (int i = 0; i < 552; i++)
        if (i < 160 || i >= 264)
            worst = fmax(worst, fabs(c[i] - g[i]) / fmax(1.0, fabs(c[i])));
    printf("moe ops: routing %s, worst relative difference %.3g\n", same ? "identical" : "differs",
           worst);
    CHECK(same, "cuda routes the tokens as cpu does (top 2, order, counts)");
    CHECK(worst < 2e-2, "moe ops: cuda off by %g", worst);
}

/* The latent-attention and routing ops on one implementation (out: 1024 floats): RoPE
 * of 2 heads of 8 in rows of 20 (positions t mod 5, base 1e4) in place, the inverse of
 * the heads summed into rows of 8; copy2d of 3 blocks of 4; the gate on 6 rows of 8
 * and its backward; V3 routing of 16 tokens, 8 experts in 4 groups, top 2 groups, top
 * 2, a bias, normalised × 2.5 (idx as floats at 750), and its backward. */
static int mla_ops_on(const char *devops, float *out, tsl_err_t *err)
{
    enum { R = 12, T = 16, E = 8, K = 2 };
    tsl_devops_t *d = NULL;
    float x[R * 20], k[R * 8], gx[6 * 8], gl[6], gd[6 * 8], lg[T * E], bias[E], dw[T * K];
    for (int i = 0; i < R * 20; i++)
        x[i] = (float)((i * 7) % 17) * 0.125f - 1.0f;
    for (int i = 0; i < 48; i++)
        gx[i] = (float)(i % 9) * 0.25f - 1.0f, gd[i] = (float)(i % 5) * 0.25f - 0.5f;
    for (int i = 0; i < 6; i++)
        gl[i] = (float)i * 0.5f - 1.5f;
    for (int i = 0; i < T * E; i++) /* distinct per row, quarters: exact in bf16 */
        lg[i] = (float)((i * 37 + i / E * 11) % 29) * 0.25f - 3.0f;
    for (int e = 0; e < E; e++)
        bias[e] = (float)(e % 3) * 0.125f;
    for (int i = 0; i < T * K; i++)
        dw[i] = (float)(i % 7) * 0.25f - 0.75f;
    (void)k;
    tsl_buf_t X, Kb, C, GX, GL, GG, GY, GD, GDX, GDL, L, B, P, W, I, DW, DL;
    int rc = tsl_devops_create(devops, 0, 0, &d, err) || put(d, &X, R * 20, d->act_dtype, x, err) ||
             d->alloc(d, &Kb, R * 8, d->act_dtype, err) ||
             d->alloc(d, &C, R * 12, d->act_dtype, err) || put(d, &GX, 48, d->act_dtype, gx, err) ||
             put(d, &GL, 6, d->act_dtype, gl, err) || d->alloc(d, &GG, 6, TSL_DT_F32, err) ||
             d->alloc(d, &GY, 48, d->act_dtype, err) || put(d, &GD, 48, d->act_dtype, gd, err) ||
             d->alloc(d, &GDX, 48, d->act_dtype, err) || d->alloc(d, &GDL, 6, d->act_dtype, err) ||
             put(d, &L, T * E, d->act_dtype, lg, err) || put(d, &B, E, d->act_dtype, bias, err) ||
             d->alloc(d, &P, T * E, TSL_DT_F32, err) || d->alloc(d, &W, T * K, TSL_DT_F32, err) ||
             d->alloc(d, &I, T * K, TSL_DT_I32, err) || put(d, &DW, T * K, TSL_DT_F32, dw, err) ||
             d->alloc(d, &DL, T * E, d->act_dtype, err);
    tsl_rope_t fwd = {R, 2, 8, 5, 20, 10, 20, 10, 10000.0f, false};
    tsl_rope_t sum = {R, 2, 8, 5, 20, 10, 8, 0, 10000.0f, true};
    tsl_buf_t X2 = rc ? X : tsl_buf_view(&X, 2, R * 20 - 2);
    tsl_moe_route_t v3 = {true, &B, 4, 2, true, 2.5f};
    rc = rc || d->rope(d, &X2, &X2, &fwd, err) || d->rope(d, &X2, &Kb, &sum, err) ||
         d->copy2d(d, &X, 20, 5, &C, 12, 4, R, 3, 4, err) ||
         d->gate_fwd(d, &GX, &GL, &GG, &GY, 6, 8, err) ||
         d->gate_bwd(d, &GX, &GG, &GD, &GDX, &GDL, 6, 8, err) ||
         d->moe_topk(d, &L, &v3, &P, &I, &W, T, E, K, err) ||
         d->moe_topk_bwd(d, &P, &I, &DW, &v3, &DL, T, E, K, err) || d->sync(d, err);
    int32_t ids[T * K];
    rc = rc || d->download(d, &X, out, err) || d->download(d, &Kb, out + 240, err) ||
         d->download(d, &C, out + 336, err) || d->download(d, &GY, out + 480, err) ||
         d->download(d, &GDX, out + 528, err) || d->download(d, &GDL, out + 576, err) ||
         d->download(d, &W, out + 582, err) || d->download(d, &DL, out + 614, err) ||
         d->download(d, &I, ids, err);
    for (int i = 0; i < T * K && !rc; i++)
        out[750 + i] = (float)ids[i];
    if (d) {
        tsl_buf_t *all[] = {&X,   &Kb, &C, &GX, &GL, &GG, &GY, &GD, &GDX,
                            &GDL, &L,  &B, &P,  &W,  &I,  &DW, &DL};
        for (size_t j = 0; j < sizeof(all) / sizeof(all[0]); j++)
            d->free(d, all[j]);
        d->destroy(d);
    }
    return rc;
}

static void mla_ops(void)
{
    tsl_err_t err = {0};
    static float c[1024], g[1024];
    CHECK(!mla_ops_on("cpu", c, &err), "cpu: %s", err.msg);
    CHECK(!mla_ops_on("cuda", g, &err), "cuda: %s", err.msg);
    int same = 1;
    for (int i = 750; i < 782; i++)
        same &= c[i] == g[i];
    double worst = 0;
    for (int i = 0; i < 742; i++)
        worst = fmax(worst, fabs(c[i] - g[i]) / fmax(1.0, fabs(c[i])));
    printf("latent-attention and routing ops: V3 choice %s, worst relative difference %.3g\n",
           same ? "identical" : "differs", worst);
    CHECK(same, "cuda chooses the experts cpu does (V3 routing: bias, groups)");
    CHECK(worst < 2e-2, "latent-attention and routing ops: cuda off by %g", worst);
}

int main(void)
{
    tsl_err_t err = {0};
    tsl_model_t m;
    tsl_model_init(&m, "gpu-check");
    tsl_layer_t emb = {.kind = TSL_LAYER_EMBEDDING, .seq_len = 64, .hidden = 128, .vocab = 256};
    tsl_layer_t enc = {
        .kind = TSL_LAYER_ENCODER, .seq_len = 64, .hidden = 128, .ffn_hidden = 512, .heads = 4};
    tsl_layer_t head = {.kind = TSL_LAYER_HEAD, .seq_len = 64, .hidden = 128, .vocab = 256};
    tsl_model_add(&m, &emb, &err);
    tsl_layer_t llama = enc;
    llama.rms_norm = llama.no_bias = llama.gated_ffn = llama.no_dropout = llama.causal = true;
    llama.ffn_hidden = 352;
    llama.kv_heads = 2;
    llama.attn_window = 24;
    tsl_layer_t moe = llama;
    moe.experts = moe.experts_per_tok = 4;
    moe.ffn_hidden = 64;
    moe.shared_experts = 1;
    moe.shared_ffn_hidden = 96;
    /* DeepSeek-like: latent attention, V3's router over all 4 experts, a gated shared
     * expert */
    tsl_layer_t ds = moe;
    ds.kv_heads = 0;
    ds.attn_window = 0;
    ds.q_lora_rank = 48;
    ds.kv_lora_rank = 32;
    ds.qk_nope_dim = 16;
    ds.qk_rope_dim = 16;
    ds.v_head_dim = 32;
    ds.router_score = TSL_ROUTER_SIGMOID;
    ds.router_bias = TSL_ROUTER_BIAS_CHOICE;
    ds.router_norm = true;
    ds.router_scale = 2.5;
    ds.router_groups = ds.router_topk_groups = 2;
    ds.shared_expert_gate = true;
    tsl_model_add_n(&m, &enc, 2, &err);
    tsl_model_add_n(&m, &llama, 2, &err);
    tsl_model_add(&m, &moe, &err);
    tsl_model_add(&m, &ds, &err);
    tsl_model_add(&m, &head, &err);
    tsl_exec_plan_spec_t s = {1, 1, 1, false, true, 2, 2};
    tsl_plan_t p;
    tsl_exec_rank_t r;
    CHECK(!tsl_exec_uniform_plan(&m, &s, &p, &err) && !tsl_exec_rank_from_plan(&p, &m, 0, &r, &err),
          "%s", err.msg);
    float *gc[16] = {0}, *gg[16] = {0};
    size_t nc[16] = {0}, ng[16] = {0};
    double lc = 0, lg = 0;
    CHECK(!run("cpu", &r, &lc, gc, nc, &err), "cpu: %s", err.msg);
    if (run("cuda", &r, &lg, gg, ng, &err)) {
        printf("cuda: %s\n", err.msg);
        SKIP_ALL("no usable GPU");
    }
    CHECK_NEAR(lg, lc, 1e-2, "loss: cuda %g, cpu %g", lg, lc);
    CHECK(nc[8 + 5] > 0 && nc[8 + 6] > 0 && r.n_layers == 8 && r.layers[6].kv_lora == 32,
          "the MoE layers' routed experts have gradients; the latent-attention layer runs");
    for (uint32_t i = 0; i < 16; i++) {
        if (i >= r.n_layers && i < 8)
            continue;
        if (i >= 8 && (i - 8 >= r.n_layers || !nc[i])) {
            free(gc[i]);
            free(gg[i]);
            continue;
        }
        double mx = 0, worst = 0;
        CHECK(nc[i] == ng[i], "layer %u: %zu and %zu gradients", i, nc[i], ng[i]);
        for (size_t j = 0; j < nc[i]; j++)
            mx = fmax(mx, fabs(gc[i][j]));
        for (size_t j = 0; j < nc[i] && nc[i] == ng[i]; j++)
            worst = fmax(worst, fabs(gc[i][j] - gg[i][j]));
        printf("layer %u%s: %zu gradients, max |cpu| %.3g, max |cuda - cpu| %.3g\n", i % 8,
               i >= 8 ? " routed experts" : "", nc[i], mx, worst);
        CHECK(worst <= 2e-2 * mx, "layer %u: cuda off by %g of %g", i, worst, mx);
        free(gc[i]);
        free(gg[i]);
    }
    moe_ops();
    mla_ops();
    tsl_exec_rank_free(&r);
    tsl_model_free(&m);
    return CHECK_DONE();
}

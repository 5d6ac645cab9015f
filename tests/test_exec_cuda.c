/*
 * test_exec_cuda.c — the cuda device ops against the cpu ops on a small layer stack:
 * one rank, same seed and batch, one step; loss and every layer's gradient within
 * bf16 tolerance (2% of the largest gradient of the layer, 1% on the loss). The stack
 * has GPT layers (LayerNorm, GeLU, biases) and Llama-like ones (RMSNorm, SwiGLU, no
 * biases, grouped-query attention, a sliding window of 24 keys in chunks of 16 query
 * rows), so every kernel the executor uses is checked. Skips
 * (77) where no GPU can be used. Run on a GPU machine: bench/exec_gpu_check.sh.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "exec.h"

#define CAP (1u << 22)

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
        if (tsl_exec_layer_grad(e, i, g[i], CAP, &n[i], err))
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
    tsl_model_add_n(&m, &enc, 2, &err);
    tsl_model_add_n(&m, &llama, 2, &err);
    tsl_model_add(&m, &head, &err);
    tsl_exec_plan_spec_t s = {1, 1, 1, false, true, 2, 2};
    tsl_plan_t p;
    tsl_exec_rank_t r;
    CHECK(!tsl_exec_uniform_plan(&m, &s, &p, &err) && !tsl_exec_rank_from_plan(&p, &m, 0, &r, &err),
          "%s", err.msg);
    float *gc[8] = {0}, *gg[8] = {0};
    size_t nc[8], ng[8];
    double lc = 0, lg = 0;
    CHECK(!run("cpu", &r, &lc, gc, nc, &err), "cpu: %s", err.msg);
    if (run("cuda", &r, &lg, gg, ng, &err)) {
        printf("cuda: %s\n", err.msg);
        SKIP_ALL("no usable GPU");
    }
    CHECK_NEAR(lg, lc, 1e-2, "loss: cuda %g, cpu %g", lg, lc);
    for (uint32_t i = 0; i < r.n_layers; i++) {
        double mx = 0, worst = 0;
        CHECK(nc[i] == ng[i], "layer %u: %zu and %zu gradients", i, nc[i], ng[i]);
        for (size_t j = 0; j < nc[i]; j++)
            mx = fmax(mx, fabs(gc[i][j]));
        for (size_t j = 0; j < nc[i] && nc[i] == ng[i]; j++)
            worst = fmax(worst, fabs(gc[i][j] - gg[i][j]));
        printf("layer %u: %zu gradients, max |cpu| %.3g, max |cuda - cpu| %.3g\n", i, nc[i], mx,
               worst);
        CHECK(worst <= 2e-2 * mx, "layer %u: cuda off by %g of %g", i, worst, mx);
        free(gc[i]);
        free(gg[i]);
    }
    tsl_exec_rank_free(&r);
    tsl_model_free(&m);
    return CHECK_DONE();
}

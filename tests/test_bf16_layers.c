/*
 * test_bf16_layers.c — blocks kept bf16 under a low-precision recipe (model.h
 * tsl_model_set_bf16_layers, Megatron-LM --first-last-layers-bf16) and MTP layers
 * under nvfp4 (cost.c layer_bf16): which layers are marked, the refusal naming
 * the field, and the cost model pricing such a layer exactly as under a bf16 plan,
 * with the NVFP4 weight copies and stashes it no longer has computed by hand.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cost.h"
#include "layer_dense.h"
#include "mtp.h"
#include "target.h"

/* A hybrid "M*EM" (Megatron numbers its blocks 0..3) with one MTP depth "*E":
 * [emb, M, *, E, M, head, mtp entry, *, E, head copy]. start 1, end 2 keeps
 * blocks 0, 2 and 3 bf16, block 1 (the attention) not; the embedding, the head
 * and the MTP depth's layers are no blocks: never marked. */
static void test_marking(void)
{
    tsl_arch_spec_t sp;
    memset(&sp, 0, sizeof sp);
    sp.arch = TSL_ARCH_LLAMA;
    sp.layers = 4, sp.hidden = 256, sp.heads = 4, sp.kv_heads = 2, sp.seq_len = 64;
    sp.vocab = 1024, sp.ffn_hidden = 512, sp.gated_ffn = false;
    snprintf(sp.hybrid, sizeof sp.hybrid, "M*EM");
    sp.ssm_heads = 8, sp.ssm_head_dim = 32, sp.ssm_state = 16, sp.ssm_groups = 1;
    sp.ssm_conv = 4, sp.ssm_chunk = 32;
    sp.experts = 4, sp.experts_per_tok = 2, sp.moe_ffn_hidden = 256;
    sp.mtp_layers = 1;
    snprintf(sp.mtp_hybrid, sizeof sp.mtp_hybrid, "*E");
    tsl_model_t m = {0}, own = {0};
    const tsl_model_t *out = NULL;
    tsl_err_t err = {0};
    CHECK(tsl_model_build(&sp, "hy", &m, &err) == 0, "%s", err.msg);
    if (m.n_layers == 0)
        return;
    CHECK(tsl_model_for_request(
              &m, &(tsl_model_switches_t){.bf16_layers_start = 1, .bf16_layers_end = 2}, &own, &out,
              &err) == 0 &&
              out == &own,
          "switches: %s", err.msg);
    const bool want[] = {false, true, false, true, true, false, false, false, false, false};
    CHECK(own.n_layers == 10, "%u layers", own.n_layers);
    for (uint32_t i = 0; i < own.n_layers && i < 10; i++)
        CHECK(own.layers[i].bf16 == want[i], "layer %u (kind %d, depth %u): bf16 %d", i,
              (int)own.layers[i].kind, own.layers[i].mtp_depth, own.layers[i].bf16);
    CHECK(!m.layers[1].bf16, "the model itself untouched");
    /* a marked layer keys apart from its twin (the cost caches, plan fingerprints),
     * an unmarked one keeps its key from before (51 words: latent MoE and MTP's) */
    uint64_t ka[TSL_LAYER_KEY_LEN], kb[TSL_LAYER_KEY_LEN];
    uint32_t na = tsl_layer_key(&own.layers[1], ka), nb = tsl_layer_key(&m.layers[1], kb);
    CHECK(na == 52 && nb == 48 && ka[51] == 1, "Mamba keys: %u (bf16) vs %u", na, nb);
    na = tsl_layer_key(&own.layers[2], ka);
    nb = tsl_layer_key(&m.layers[2], kb);
    CHECK(na == 30 && nb == 30 && memcmp(ka, kb, sizeof ka) == 0,
          "the attention block unmarked: the dense key (%u)", na);
    tsl_model_free(&own);
    /* 3 + 2 > the 4 blocks: refused, naming the field */
    CHECK(tsl_model_for_request(
              &m, &(tsl_model_switches_t){.bf16_layers_start = 3, .bf16_layers_end = 2}, &own, &out,
              &err) == -1 &&
              strstr(err.msg, "bf16_layers_start") && strstr(err.msg, "4 blocks"),
          "refusal: %s", err.msg);
    tsl_model_free(&own);
    /* all four: every block */
    CHECK(tsl_model_set_bf16_layers(&m, 4, 0, &err) == 0 && m.layers[1].bf16 && m.layers[4].bf16 &&
              !m.layers[7].bf16,
          "start 4: %s", err.msg);
    tsl_model_free(&m);
}

/* test_cost's FP8 layer (h 4096, f 16384, s 2048, 32 heads) on 2xB200-180G at TP 2
 * with SP, 4 samples, under nvfp4 (TE): per TP rank its linears hold
 * w = (4·h² + 2·h·f) / 2 = 100,663,296 weight elements, each with two cached NVFP4
 * copies of 0.5 + 1/16 bytes: 1.125·w = 113,246,208 bytes beside its states; its
 * linears' inputs are stashed in 0.5625 bytes, not 2: QKV's (s·h / t with SP),
 * out's (s·h/t), FFN-in's (s·h/t, SP) and FFN-out's (s·f/t), for 4 samples
 * 4·s·(3h + f)/2 = 117,440,512 elements × 1.4375 = 168,820,736 bytes fewer. Kept
 * bf16 the layer has neither, and its passes are the bf16 layer's: every figure
 * equals the bf16 plan's. An MTP layer is bf16 under nvfp4 (Megatron
 * enters no FP4 autocast there) but FP8 under mxfp8. */
static void test_pricing(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "2xB200-180G", &err) == 0, "%s", err.msg);
    tsl_layer_t l = encoder_4k();
    tsl_layer_t kept = l, mtp = l;
    kept.bf16 = true;
    mtp.mtp_depth = 1;
    tsl_cost_env_t env;
    CHECK(tsl_cost_env_init(&env, &c, 0, 2, &err) == 0, "%s", err.msg);
    CHECK(env.device_fp4_flops > 0, "B200: FP4 rate");
    tsl_strategy_t s = {.n_levels = 1, .dim = {TSL_DIM_TP}, .degree = {2}};
    s.sp = true;
    tsl_layer_cost_t b, f4, k4, m4, m8, l8, kb;
    tsl_cost_layer(&env, &l, &s, NULL, 4, &b);
    tsl_cost_layer(&env, &kept, &s, NULL, 4, &kb);
    env.knobs.fp8 = TSL_FP8_NVFP4;
    tsl_cost_layer(&env, &l, &s, NULL, 4, &f4);
    tsl_cost_layer(&env, &kept, &s, NULL, 4, &k4);
    tsl_cost_layer(&env, &mtp, &s, NULL, 4, &m4);
    env.knobs.fp8 = TSL_FP8_MXFP8;
    tsl_cost_layer(&env, &l, &s, NULL, 4, &l8);
    tsl_cost_layer(&env, &mtp, &s, NULL, 4, &m8);
    CHECK(memcmp(&kb, &b, sizeof b) == 0, "bf16 plan: the mark prices nothing");
    CHECK(f4.ms_bytes - b.ms_bytes == 113246208ull, "NVFP4 weight copies: %llu",
          (unsigned long long)(f4.ms_bytes - b.ms_bytes));
    /* the projection's input beside the fused core's output (cost model 170): 4 samples
     * of 2048 · 4096/2 elements lose their 1.4375 B saving and add a 0.5625 B copy */
    CHECK(b.fwd_bytes - f4.fwd_bytes == 168820736ull - 2ull * 4 * 2048 * 4096 / 2,
          "NVFP4 stashes: %llu", (unsigned long long)(b.fwd_bytes - f4.fwd_bytes));
    CHECK(f4.fwd_s < b.fwd_s && f4.bwd_s < b.bwd_s, "NVFP4 faster on this layer");
    CHECK(k4.ms_bytes == b.ms_bytes && k4.fwd_bytes == b.fwd_bytes && k4.bwd_bytes == b.bwd_bytes,
          "kept bf16: bf16's memory (%llu, %llu)", (unsigned long long)k4.ms_bytes,
          (unsigned long long)k4.fwd_bytes);
    CHECK(k4.fwd_s == b.fwd_s && k4.bwd_s == b.bwd_s && k4.compute_s == b.compute_s &&
              k4.opt_s == b.opt_s && k4.comm_s == b.comm_s,
          "kept bf16: bf16's times (%g vs %g)", k4.compute_s, b.compute_s);
    CHECK(memcmp(&m4, &b, sizeof b) == 0, "an MTP layer under nvfp4: bf16");
    CHECK(memcmp(&m8, &l8, sizeof b) == 0 && l8.compute_s < b.compute_s,
          "an MTP layer under mxfp8: the FP8 layer's");
    tsl_cluster_free(&c);
}

/* Megatron-LM builds every layer alike and picks a block's precision at run time
 * (is_first_last_bf16_layer), so --target megatron sees a GPT2-345M with its last 2
 * of 24 layers kept bf16 as one shape (it refused: "layer 23's shape differs from
 * layer 1's"); a layer of another width still differs. */
static void test_megatron_shapes(void)
{
    tsl_model_t m = {0};
    tsl_err_t err = {0};
    CHECK(tsl_model_preset("GPT2-345M", &m, &err) == 0, "%s", err.msg);
    if (m.n_layers == 0)
        return;
    CHECK(tsl_model_set_bf16_layers(&m, 0, 2, &err) == 0 && m.layers[23].bf16 &&
              m.layers[24].bf16 && !m.layers[22].bf16,
          "end 2: %s", err.msg);
    CHECK(tsl_target_megatron_shapes(&m, &err) == 0, "bf16 blocks as one shape: %s", err.msg);
    m.layers[23].ffn_hidden *= 2;
    CHECK(tsl_target_megatron_shapes(&m, &err) == -1 && strstr(err.msg, "layer 23's shape"),
          "a wider layer still refused: %s", err.msg);
    tsl_model_free(&m);
}

int main(void)
{
    test_marking();
    test_megatron_shapes();
    test_pricing();
    return CHECK_DONE();
}

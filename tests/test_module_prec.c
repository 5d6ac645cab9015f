/*
 * test_module_prec.c — per-module precision (module_prec.h): the flag's grammar and its
 * refusals naming the field, the encoding written back, the roofline pricing an
 * overridden linear at its own precision (forward and backward, its casts and GEMMs),
 * only inside a quantized layer, and the FP8 weights and stashes counted by recipe.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "layer_dense.h"
#include "mamba.h"
#include "model.h"
#include "module_prec.h"
#include "recompute.h"
#include "roofline.h"

static void refused(const char *list, const char *what)
{
    uint32_t p = 0;
    tsl_err_t err = {0};
    CHECK(tsl_module_prec_parse(list, &p, &err) == -1 &&
              strncmp(err.msg, "module_precision: ", 18) == 0 && strstr(err.msg, what) != NULL,
          "'%s' refused naming the field and '%s': %s", list ? list : "(null)", what, err.msg);
}

static void test_parse(void)
{
    uint32_t p = 0;
    tsl_err_t err = {0};
    const char *cfg = "linear_qkv=bf16,linear_proj=bf16,out_proj=mxfp8,fc1_latent_proj=bf16,"
                      "fc2_latent_proj=bf16";
    CHECK(tsl_module_prec_parse(cfg, &p, &err) == 0, "%s", err.msg);
    /* te_quant.cfg's: nibbles 0, 1, 6, 7 at bf16 (1), nibble 5 at mxfp8 (1 + 4) */
    CHECK(p == 0x11500011u, "te_quant.cfg's overrides: 0x%x", p);
    CHECK(tsl_module_prec_recipe(p, TSL_MODULE_LINEAR_QKV, TSL_FP8_NVFP4) == TSL_FP8_NONE &&
              tsl_module_prec_recipe(p, TSL_MODULE_OUT_PROJ, TSL_FP8_NVFP4) == TSL_FP8_MXFP8 &&
              tsl_module_prec_recipe(p, TSL_MODULE_IN_PROJ, TSL_FP8_NVFP4) == TSL_FP8_NVFP4 &&
              tsl_module_prec_recipe(p, TSL_MODULE_COUNT, TSL_FP8_NVFP4) == TSL_FP8_NVFP4,
          "each module's recipe: its own, else the layer's");
    CHECK(tsl_module_prec_recipe(p, TSL_MODULE_OUT_PROJ, TSL_FP8_NONE) == TSL_FP8_NONE,
          "a bf16 layer keeps its linears bf16 (override_nonquantized_autocast false)");
    char buf[256];
    size_t n = tsl_module_prec_format(p, buf, sizeof buf);
    uint32_t back = 0;
    CHECK(n == strlen(buf) && tsl_module_prec_parse(buf, &back, &err) == 0 && back == p,
          "written as read: '%s'", buf);
    CHECK(strcmp(buf, "linear_qkv=bf16,linear_proj=bf16,out_proj=mxfp8,fc1_latent_proj=bf16,"
                      "fc2_latent_proj=bf16") == 0,
          "in the modules' order: '%s'", buf);
    CHECK(tsl_module_prec_format(p, buf, 8) == n && strlen(buf) == 7, "cut at the buffer");
    CHECK(tsl_module_prec_format(0, buf, sizeof buf) == 0 && buf[0] == '\0', "none: ''");
    CHECK(tsl_module_prec_parse("linear_fc1=tensorwise,linear_fc2=nvfp4", &p, &err) == 0 &&
              p == ((1u + TSL_FP8_TENSORWISE) << 8 | (1u + TSL_FP8_NVFP4) << 12),
          "a dense MLP's: 0x%x", p);
    CHECK(tsl_module_prec_check(0x11500011u, &err) == 0, "%s", err.msg);
    refused("", "an empty list");
    refused(NULL, "an empty list");
    refused("linear_qkv=bf16,,out_proj=mxfp8", "an empty item");
    refused("linear_qkv", "no '='");
    refused("qkv=bf16", "'qkv' names no module");
    refused("linear_qkv=fp4", "'fp4' is not a precision");
    refused("linear_qkv=delayed", "delayed scaling is not one");
    refused("linear_qkv=bf16,linear_qkv=mxfp8", "linear_qkv given twice");
    refused("linear_qkv=averyveryverylongprecisionname", "is not a precision");
    CHECK(tsl_module_prec_check(0x7u, &err) == -1 && strstr(err.msg, "module_precision") &&
              strstr(err.msg, "linear_qkv's value 7"),
          "a document's nibble 7: %s", err.msg);
    CHECK(tsl_module_prec_check(0x20u, &err) == -1 && strstr(err.msg, "linear_proj's value 2"),
          "delayed's nibble: %s", err.msg);
}

/* One FFN layer on a GB200 at its built-in rates (test_roofline's test_nvfp4_layer):
 * NVFP4 at F4 = 2 F8, MXFP8 at F8, bf16 at F. */
static tsl_roofline_dev_t gb200_dev(uint32_t recipe)
{
    tsl_roofline_dev_t d;
    tsl_roofline_dev_init(&d, 2500e12 * 0.581, 8000e9);
    d.f4_flops = 10000e12 * 0.571;
    d.f8_flops = 5000e12 * 0.571;
    d.fp8 = recipe;
    d.fp8_flops = recipe == TSL_FP8_NVFP4 ? d.f4_flops : recipe ? d.f8_flops : 0.0;
    return d;
}

static double fwd_of(const tsl_roofline_dev_t *d, const tsl_layer_t *l, uint32_t prec)
{
    tsl_roofline_dev_t o = *d;
    o.module_prec = prec;
    return tsl_roofline_layer_fwd_s(&o, l, 2, 1, false, 0);
}

static double bwd_of(const tsl_roofline_dev_t *d, const tsl_layer_t *l, uint32_t prec)
{
    tsl_roofline_dev_t o = *d;
    o.module_prec = prec;
    return tsl_roofline_layer_bwd_s(&o, l, 2, 1, false, 0);
}

#define BF16(m) (1u << (4 * (m)))
#define MX8(m)  ((1u + TSL_FP8_MXFP8) << (4 * (m)))

/* A dense FFN whose two linears are overridden prices as the layer at that precision,
 * forward and backward, and one linear's override adds that linear's difference alone:
 * its bf16 GEMM in place of the FP4 one and the input's NVFP4 cast (5.125 B an element,
 * 2 kernels). Under NVFP4 on a GB200 a bf16 FFN-in's forward GEMM is F4 / F = 3.9 times
 * the FP4 one's. */
static void test_ffn_priced(void)
{
    tsl_layer_t l = ffn_4k();
    tsl_roofline_dev_t n4 = gb200_dev(TSL_FP8_NVFP4), m8 = gb200_dev(TSL_FP8_MXFP8);
    tsl_roofline_dev_t bf = gb200_dev(TSL_FP8_NONE);
    uint32_t both_bf16 = BF16(TSL_MODULE_LINEAR_FC1) | BF16(TSL_MODULE_LINEAR_FC2);
    uint32_t both_mx = MX8(TSL_MODULE_LINEAR_FC1) | MX8(TSL_MODULE_LINEAR_FC2);
    CHECK_NEAR(fwd_of(&n4, &l, both_bf16), fwd_of(&bf, &l, 0), 1e-12, "both bf16: bf16's forward");
    CHECK_NEAR(bwd_of(&n4, &l, both_bf16), bwd_of(&bf, &l, 0), 1e-12, "and backward");
    CHECK_NEAR(fwd_of(&n4, &l, both_mx), fwd_of(&m8, &l, 0), 1e-12, "both mxfp8: MXFP8's forward");
    CHECK_NEAR(bwd_of(&n4, &l, both_mx), bwd_of(&m8, &l, 0), 1e-12, "and backward");
    double f0 = fwd_of(&n4, &l, 0), b0 = bwd_of(&n4, &l, 0);
    double f1 = fwd_of(&n4, &l, BF16(TSL_MODULE_LINEAR_FC1));
    double f2 = fwd_of(&n4, &l, BF16(TSL_MODULE_LINEAR_FC2));
    CHECK(f0 < f1 && f1 < fwd_of(&bf, &l, 0) && f0 < f2, "slower: %g < %g, %g", f0, f1, f2);
    CHECK_NEAR(f1 - f0 + f2 - f0, fwd_of(&n4, &l, both_bf16) - f0, 1e-9, "each linear its own");
    CHECK(bwd_of(&n4, &l, BF16(TSL_MODULE_LINEAR_FC1)) > b0, "a slower backward");
    /* by hand: FFN-in, (T x h)·(h x f), T = 4096 */
    const double T = 4096, h = 4096, f = 16384, W = n4.mem_bw, L = n4.launch_s, F4 = n4.f4_flops;
    double g4 = fmax(2.0 * T * f * h / F4, ((T * h + h * f) * 0.5625 + 2.0 * T * f) / W) + L;
    double cast = 5.125 * T * h / W + 2 * L;
    CHECK_NEAR(f1 - f0, tsl_roofline_gemm_s(&n4, T, f, h, 1) - g4 - cast, 1e-9,
               "FFN-in bf16: %g s more", f1 - f0);
    CHECK(tsl_roofline_gemm_s(&n4, T, f, h, 1) > 3.5 * (g4 - L), "bf16 GEMM ~3.9 x FP4's");
    /* a layer priced without a recipe (a block kept bf16) keeps its bf16 linears */
    CHECK(fwd_of(&bf, &l, both_mx) == fwd_of(&bf, &l, 0), "no override outside a recipe");
    /* a GPU without FP4 tensor cores prices an nvfp4 override as bf16, never at 0 */
    tsl_roofline_dev_t no4 = m8;
    no4.f4_flops = 0;
    uint32_t fc1_n4 = (1u + TSL_FP8_NVFP4) << (4 * TSL_MODULE_LINEAR_FC1);
    CHECK_NEAR(fwd_of(&no4, &l, fc1_n4), fwd_of(&m8, &l, BF16(TSL_MODULE_LINEAR_FC1)), 1e-12,
               "no FP4 rate: bf16");
}

/* Nemotron 3 Super's Mamba mixer (h 4096, 128 heads of 64, 8 groups, state 128) under
 * NVFP4: out_proj in MXFP8 (te_quant.cfg's mamba_outproj_mxfp8) between the NVFP4 and
 * the bf16 out_proj; in_proj untouched. */
static void test_mamba_priced(void)
{
    tsl_err_t err = {0};
    tsl_layer_t mm = {.kind = TSL_LAYER_MAMBA,
                      .seq_len = 8192,
                      .hidden = 4096,
                      .ssm_heads = 128,
                      .ssm_head_dim = 64,
                      .ssm_state = 128,
                      .ssm_groups = 8,
                      .ssm_conv = 4,
                      .ssm_chunk = 128};
    CHECK(tsl_layer_derive(&mm, &err) == 0, "%s", err.msg);
    tsl_roofline_dev_t n4 = gb200_dev(TSL_FP8_NVFP4);
    double f0 = fwd_of(&n4, &mm, 0), fm = fwd_of(&n4, &mm, MX8(TSL_MODULE_OUT_PROJ));
    double fb = fwd_of(&n4, &mm, BF16(TSL_MODULE_OUT_PROJ));
    CHECK(f0 < fm && fm < fb, "out_proj: nvfp4 %g < mxfp8 %g < bf16 %g", f0, fm, fb);
    CHECK(bwd_of(&n4, &mm, MX8(TSL_MODULE_OUT_PROJ)) > bwd_of(&n4, &mm, 0), "backward too");
    CHECK(fwd_of(&n4, &mm, BF16(TSL_MODULE_LINEAR_FC1)) == f0, "a module it has not: no change");
    /* out_proj's GEMM (T x h)·(h over d_i = 8192): at most its FP8 time more, and its
     * input's MXFP8 quantize (4 + 2/32 B an element at TE's quantize rate, cost model 189) */
    double T = 8192, di = tsl_mamba_inner(&mm), F8 = n4.f8_flops;
    double q =
        (4 + 2.0 / 32) * T * di / (n4.mem_bw * TSL_MXFP8_CAST_MEM_EFF / TSL_ROOFLINE_MEM_EFF);
    CHECK(fm - f0 < 2.0 * T * 4096 * di / F8 + q + 1e-5, "%g s more", fm - f0);
}

/* The FP8 weights and kept inputs by recipe: a bf16 linear in none, an MXFP8 one in
 * MXFP8's slot; without overrides tsl_roofline_fp8_elems's counts in the recipe's. */
static void test_split(void)
{
    tsl_layer_t l = ffn_4k();
    tsl_roofline_fp8_split_t s;
    double w, repl, shard;
    tsl_roofline_fp8_elems(&l, 2, 0, &w, &repl, &shard);
    tsl_roofline_fp8_split(&l, 2, 0, 0, TSL_FP8_NVFP4, &s);
    CHECK(s.weights[TSL_FP8_NVFP4] == w && s.repl[TSL_FP8_NVFP4] == repl &&
              s.shard[TSL_FP8_NVFP4] == shard && w == 2.0 * 4096 * 8192,
          "no override: the recipe's slot (%g)", s.weights[TSL_FP8_NVFP4]);
    uint32_t p = BF16(TSL_MODULE_LINEAR_FC1) | MX8(TSL_MODULE_LINEAR_FC2);
    tsl_roofline_fp8_split(&l, 2, 0, p, TSL_FP8_NVFP4, &s);
    CHECK(s.weights[TSL_FP8_NVFP4] == 0 && s.repl[TSL_FP8_NVFP4] == 0 &&
              s.weights[TSL_FP8_MXFP8] == 8192.0 * 4096 &&
              s.shard[TSL_FP8_MXFP8] == 2048.0 * 8192 && s.repl[TSL_FP8_MXFP8] == 0 &&
              s.weights[TSL_FP8_NONE] == 0,
          "FFN-in bf16 counted nowhere, FFN-out in MXFP8's slot");
    tsl_roofline_fp8_split(&l, 2, 0, p, TSL_FP8_NONE, &s);
    double sum = 0;
    for (uint32_t r = 0; r < TSL_FP8_COUNT; r++)
        sum += s.weights[r] + s.repl[r] + s.shard[r];
    CHECK(sum == 0, "a bf16 layer: nothing (%g)", sum);
}

/* Latent MoE's projections (cost model 175): h x l weights each, whole at TP 2;
 * fc2_latent_proj's input (s·l) among the kept ones, fc1_latent_proj's (s·h) beside the
 * router's bf16 copy; kept bf16, in no slot; fc2 alone in MXFP8, in MXFP8's. Before,
 * none of them was counted. */
static void test_split_latent(void)
{
    tsl_err_t err = {0};
    tsl_layer_t l = {.kind = TSL_LAYER_FFN,
                     .seq_len = 2048,
                     .hidden = 4096,
                     .ffn_hidden = 2688,
                     .heads = 32,
                     .gated_ffn = false,
                     .no_dropout = true,
                     .no_bias = true,
                     .experts = 16,
                     .experts_per_tok = 4,
                     .moe_latent = 1024};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    tsl_roofline_fp8_split_t s;
    const double h = 4096, r = 1024, n = 2048;
    tsl_roofline_fp8_split(&l, 2, 0, 0, TSL_FP8_NVFP4, &s);
    CHECK(s.weights[TSL_FP8_NVFP4] == 2.0 * h * r && s.repl[TSL_FP8_NVFP4] == n * r &&
              s.beside[TSL_FP8_NVFP4] == n * h && s.shard[TSL_FP8_NVFP4] == 0,
          "the projections: %g weights, %g kept, %g beside", s.weights[TSL_FP8_NVFP4],
          s.repl[TSL_FP8_NVFP4], s.beside[TSL_FP8_NVFP4]);
    double w, repl, shard;
    tsl_roofline_fp8_elems(&l, 2, 0, &w, &repl, &shard);
    CHECK(w == 2.0 * h * r && repl == n * r && shard == 0, "fp8_elems: %g %g", w, repl);
    tsl_roofline_fp8_split(&l, 2, TSL_RECOMPUTE_MOE, 0, TSL_FP8_NVFP4, &s);
    CHECK(s.weights[TSL_FP8_NVFP4] == 2.0 * h * r && s.repl[TSL_FP8_NVFP4] == 0 &&
              s.beside[TSL_FP8_NVFP4] == 0,
          "moe recomputed: the weights alone");
    uint32_t p = BF16(TSL_MODULE_FC1_LATENT) | BF16(TSL_MODULE_FC2_LATENT);
    tsl_roofline_fp8_split(&l, 2, 0, p, TSL_FP8_NVFP4, &s);
    double sum = 0;
    for (uint32_t k = 0; k < TSL_FP8_COUNT; k++)
        sum += s.weights[k] + s.repl[k] + s.shard[k] + s.beside[k];
    CHECK(sum == 0, "te_quant.cfg's latent projections bf16: nothing (%g)", sum);
    tsl_roofline_fp8_split(&l, 2, 0, BF16(TSL_MODULE_FC1_LATENT) | MX8(TSL_MODULE_FC2_LATENT),
                           TSL_FP8_NVFP4, &s);
    CHECK(s.weights[TSL_FP8_MXFP8] == h * r && s.repl[TSL_FP8_MXFP8] == n * r &&
              s.beside[TSL_FP8_MXFP8] == 0 && s.weights[TSL_FP8_NVFP4] == 0,
          "fc2_latent in MXFP8's slot alone");
}

int main(void)
{
    test_parse();
    test_ffn_priced();
    test_mamba_priced();
    test_split();
    test_split_latent();
    return CHECK_DONE();
}

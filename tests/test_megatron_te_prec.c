/* Tests for common/megatron_te_prec: Megatron-LM's --te-precision-config-file read
 * into module_precision as quant_config.py matches it, and every bad file refused
 * naming the file, the line and the field. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "megatron_te_prec.h"
#include "module_prec.h"
#include "roofline.h"

/* The configs every case below names. */
#define CONFIGS                                                                                    \
    "configs:\n"                                                                                   \
    "  bf16:\n"                                                                                    \
    "    transformer_engine_config_type: \"TEQuantizationParams\"\n"                               \
    "    training_recipe: {}\n"                                                                    \
    "  mx:\n"                                                                                      \
    "    transformer_engine_config_type: TEQuantizationParams\n"                                   \
    "    training_recipe:\n"                                                                       \
    "      fp8_quantization_recipe: mxfp8\n"                                                       \
    "      fp8_format: e4m3\n"                                                                     \
    "  fp4:\n"                                                                                     \
    "    transformer_engine_config_type: TEQuantizationParams\n"                                   \
    "    training_recipe:\n"                                                                       \
    "      fp4_quantization_recipe: nvfp4\n"

/* A matcher entry, enabled. */
#define M(name, pattern, config)                                                                   \
    "  " name ":\n    type: glob\n    pattern: \"" pattern "\"\n    config: " config               \
    "\n    enabled: true\n"

static int parse(const char *yaml, uint32_t recipe, uint32_t mtp, uint32_t *prec, tsl_err_t *err)
{
    *prec = 0xdeadu;
    return tsl_megatron_te_prec_parse(yaml, strlen(yaml), "t.yaml", recipe, mtp, prec, err);
}

static uint32_t list(const char *l)
{
    uint32_t p = 0;
    tsl_err_t err = {0};
    CHECK(tsl_module_prec_parse(l, &p, &err) == 0, "%s: %s", l, err.msg);
    return p;
}

/* Megatron's own matching: the first enabled matcher wins, disabled ones and those
 * without `enabled` are skipped, a module no matcher takes keeps the recipe, a config
 * with override_quantized_autocast false overrides nothing, '*' crosses dots. */
static void test_first_match(void)
{
    tsl_err_t err = {0};
    uint32_t prec;
    const char *y = CONFIGS "  keep:\n    transformer_engine_config_type: TEQuantizationParams\n"
                            "    training_recipe:\n      fp8_quantization_recipe: mxfp8\n"
                            "      override_quantized_autocast: false\n"
                            "matchers:\n" M("qkv", "*linear_qkv", "bf16")
                                M("attn", "*.self_attention.linear_proj", "fp4")
                                    M("fc2", "*.mlp.linear_fc2",
                                      "keep") "  off:\n    type: glob\n    pattern: \"*\"\n"
                                              "    config: mx\n    enabled: false\n"
                                              "  unset:\n    type: glob\n    pattern: \"*\"\n"
                                              "    config: mx\n" M("mamba", "*mixer.*_proj", "mx");
    CHECK(parse(y, TSL_FP8_TENSORWISE, 0, &prec, &err) == 0, "%s", err.msg);
    CHECK(prec == list("linear_qkv=bf16,linear_proj=nvfp4,in_proj=mxfp8,out_proj=mxfp8"), "0x%x",
          prec);
    /* no matchers at all (null): nothing overridden */
    CHECK(parse(CONFIGS "matchers:\n", TSL_FP8_MXFP8, 0, &prec, &err) == 0 && prec == 0, "%s 0x%x",
          err.msg, prec);
}

/* Te_quant.cfg's shape (Nemotron 3 Super): an mtp.* matcher first, which under NVFP4
 * takes only the MTP depths' modules, which run bf16 there anyway; under FP8, where the
 * depths run quantized, the same file gives attention two precisions and is refused. */
static void test_mtp(void)
{
    tsl_err_t err = {0};
    uint32_t prec;
    const char *y = CONFIGS "matchers:\n" M("mtp", "mtp.*", "bf16") M("qkv", "*linear_qkv", "fp4")
        M("out", "*.mixer.out_proj", "mx");
    CHECK(parse(y, TSL_FP8_NVFP4, 2, &prec, &err) == 0 &&
              prec == list("linear_qkv=nvfp4,out_proj=mxfp8"),
          "%s 0x%x", err.msg, prec);
    CHECK(parse(y, TSL_FP8_MXFP8, 0, &prec, &err) == 0, "no MTP depths: %s", err.msg);
    /* te_quant.cfg's matchers in its order (Megatron-Bridge 21d102f5e
     * scripts/performance/configs/nemotronh/te_quant.cfg, as bench/published/rows.json
     * cites its lines): the module_precision tests/module_prec_test.sh prices */
    const char *tq = CONFIGS "matchers:\n" M("attn_qkv_bf16", "*.linear_qkv", "bf16")
        M("attn_proj_bf16", "*.linear_proj", "bf16")
            M("latent_bf16", "*mlp.fc[12]_latent_proj", "bf16") M("mtp_bf16", "mtp.*", "bf16")
                M("mamba_outproj_mxfp8", "*mixer.out_proj", "mx");
    CHECK(parse(tq, TSL_FP8_NVFP4, 2, &prec, &err) == 0 && prec == 0x11500011u, "%s 0x%x", err.msg,
          prec);
    CHECK(parse(y, TSL_FP8_MXFP8, 2, &prec, &err) == -1 &&
              tsl_err_code(&err) == TSL_E_UNSUPPORTED &&
              strstr(err.msg, "t.yaml: linear_qkv gets nvfp4 at decoder.layers.0."
                              "self_attention.linear_qkv (matcher 'qkv', line ") &&
              strstr(err.msg, "but bf16 at mtp.layers.0.mtp_model_layer.self_attention."
                              "linear_qkv (matcher 'mtp', line "),
          "%s", err.msg);
}

/* What Tessel cannot price: one module at two precisions across layers, and a module
 * it keeps at the recipe (experts, MLA, the LM head) given another. */
static void test_unpriced_modules(void)
{
    tsl_err_t err = {0};
    uint32_t prec;
    CHECK(parse(CONFIGS "matchers:\n" M("first", "decoder.layers.0.*", "bf16"), TSL_FP8_MXFP8, 0,
                &prec, &err) == -1 &&
              strstr(err.msg, "linear_qkv gets bf16 at decoder.layers.0.self_attention.linear_qkv "
                              "(matcher 'first', line 15) but the run's recipe at "
                              "decoder.layers.1.self_attention.linear_qkv (no matcher); Tessel "
                              "prices one precision a module"),
          "%s", err.msg);
    CHECK(parse(CONFIGS "matchers:\n" M("fc1", "*linear_fc1", "bf16"), TSL_FP8_MXFP8, 0, &prec,
                &err) == -1 &&
              tsl_err_code(&err) == TSL_E_UNSUPPORTED &&
              strstr(err.msg, "t.yaml, line 15: matcher 'fc1' (pattern '*linear_fc1') gives bf16 "
                              "to decoder.layers.0.mlp.experts.linear_fc1, a module Tessel "
                              "prices at the run's recipe (mxfp8) only"),
          "%s", err.msg);
    /* the catch-all at the run's own recipe changes nothing: accepted */
    CHECK(parse(CONFIGS "matchers:\n" M("qkv", "*linear_qkv", "bf16") M("all", "*", "mx"),
                TSL_FP8_MXFP8, 0, &prec, &err) == 0 &&
              prec == list("linear_qkv=bf16,linear_proj=mxfp8,linear_fc1=mxfp8,linear_fc2=mxfp8,"
                           "in_proj=mxfp8,out_proj=mxfp8,fc1_latent_proj=mxfp8,"
                           "fc2_latent_proj=mxfp8"),
          "%s 0x%x", err.msg, prec);
    CHECK(parse(CONFIGS "matchers:\n" M("all", "*", "bf16"), TSL_FP8_MXFP8, 0, &prec, &err) == -1 &&
              strstr(err.msg, "output_layer") == NULL && strstr(err.msg, "experts"),
          "%s", err.msg);
    CHECK(parse(CONFIGS "matchers:\n" M("head", "output_layer", "bf16"), TSL_FP8_MXFP8, 0, &prec,
                &err) == -1 &&
              strstr(err.msg, "gives bf16 to output_layer"),
          "%s", err.msg);
}

/* Each refusal names the file, the line and the field. */
static void test_refused(void)
{
    static const struct {
        const char *yaml, *want;
    } cases[] = {
        {"configs: [a\n", "t.yaml, line 2: YAML: "},
        {"", "t.yaml: empty"},
        {"a: 1\n---\nb: 2\n", "t.yaml: more than one YAML document"},
        {"- 1\n", "t.yaml, line 1: the document: not a mapping"},
        {"matcher: {}\n", "line 1: the document: unknown key 'matcher'"},
        {CONFIGS "matchers:\n" M("a", "*qkv", "nope"), "line 18: matcher 'a': config 'nope' is "
                                                       "not in configs"},
        {CONFIGS "matchers:\n  a:\n    type: regex\n    pattern: x\n    config: bf16\n"
                 "    enabled: true\n",
         "line 16: type: \"Match type 'regex' not implemented\""},
        {CONFIGS "matchers:\n  a:\n    type: glob\n    config: bf16\n    enabled: true\n",
         "line 16: no 'pattern' (Megatron-LM requires it)"},
        {CONFIGS "matchers:\n  a:\n    type: glob\n    pattern: x\n    config: bf16\n"
                 "    enabled: \"false\"\n",
         "line 19: enabled: 'false' is not a YAML boolean"},
        {CONFIGS "matchers:\n  a:\n    type: glob\n    pattern: x\n    pattern: y\n",
         "line 18: a: 'pattern' given twice"},
        {"configs:\n  d:\n    transformer_engine_config_type: TEQuantizationParams\n"
         "    training_recipe:\n      fp8_quantization_recipe: delayed\n"
         "matchers:\n" M("a", "*qkv", "d"),
         "line 5: fp8_quantization_recipe: delayed: \"Delayed scaling not in scope"},
        {"configs:\n  d:\n    transformer_engine_config_type: TEQuantizationParams\n"
         "    training_recipe:\n      fp8_quantization_recipe: mxfp8\n"
         "      fp4_quantization_recipe: nvfp4\n"
         "matchers:\n" M("a", "*qkv", "d"),
         "line 6: training_recipe: \"fp8 and fp4 quantization settings are mutually exclusive"},
        {"configs:\n  d:\n    transformer_engine_config_type: TEQuantizationParams\n"
         "    training_recipe:\n      fp8_quantization_recipe: tensorwise\n"
         "      fp8_param: true\n"
         "matchers:\n" M("a", "*qkv", "d"),
         "line 6: fp8_param: true: that module's weights kept in FP8, which Tessel does not "
         "price"},
        {"configs:\n  d:\n    transformer_engine_config_type: TEQuantizationParams\n"
         "    training_recipe:\n      fp8_quantization_recipe: custom\n"
         "matchers:\n" M("a", "*qkv", "d"),
         "line 5: fp8_quantization_recipe: custom"},
        {"configs:\n  d:\n    transformer_engine_config_type: TEQuantizationParams\n"
         "    training_recipe:\n      fp8_quantization_recipe: mxfp8\n"
         "      fp8_format: e5m2\n"
         "matchers:\n" M("a", "*qkv", "d"),
         "line 6: fp8_format: 'e5m2': \"Unhandled fp8_format\""},
        {"configs:\n  d:\n    transformer_engine_config_type: TEQuantizationParams\n"
         "    training_recipe:\n      fp8_recipe: mxfp8\n"
         "matchers:\n" M("a", "*qkv", "d"),
         "line 5: training_recipe: unknown key 'fp8_recipe'"},
        {"configs:\n  d:\n    transformer_engine_config_type: KitchenParams\n"
         "    training_recipe: {}\n"
         "matchers:\n" M("a", "*qkv", "d"),
         "line 3: transformer_engine_config_type: \"Unsupported config type 'KitchenParams'\""},
        {"configs:\n  d:\n    transformer_engine_config_type: TEQuantizationParams\n"
         "matchers:\n" M("a", "*qkv", "d"),
         "line 3: config 'd': no 'training_recipe'"},
    };
    tsl_err_t err;
    uint32_t prec;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        err = (tsl_err_t){0};
        CHECK(parse(cases[i].yaml, TSL_FP8_MXFP8, 0, &prec, &err) == -1 &&
                  strstr(err.msg, "megatron: --te-precision-config-file ") == err.msg &&
                  strstr(err.msg, cases[i].want) != NULL,
              "case %zu: want '%s', got '%s'", i, cases[i].want, err.msg);
    }
    /* a disabled matcher is skipped unread, as Megatron-LM skips it */
    CHECK(parse(CONFIGS "matchers:\n  a:\n    type: regex\n    config: nope\n", TSL_FP8_MXFP8, 0,
                &prec, &err) == 0 &&
              prec == 0,
          "%s", err.msg);
}

/* The file read from disk: its content, and a missing one named with errno's reason. */
static void test_file(void)
{
    tsl_err_t err = {0};
    uint32_t prec = 0;
    char path[] = "/tmp/test_te_prec_XXXXXX";
    int fd = mkstemp(path);
    const char *y = CONFIGS "matchers:\n" M("qkv", "*.self_attention.linear_qkv", "bf16");
    CHECK(fd >= 0 && write(fd, y, strlen(y)) == (ssize_t)strlen(y), "mkstemp");
    if (fd >= 0)
        close(fd);
    CHECK(tsl_megatron_te_prec_read(path, TSL_FP8_MXFP8, 0, &prec, &err) == 0 &&
              prec == list("linear_qkv=bf16"),
          "%s 0x%x", err.msg, prec);
    unlink(path);
    CHECK(tsl_megatron_te_prec_read(path, TSL_FP8_MXFP8, 0, &prec, &err) == -1 &&
              strstr(err.msg, path) && strstr(err.msg, "cannot open: No such file"),
          "%s", err.msg);
    CHECK(tsl_megatron_te_prec_read("/tmp", TSL_FP8_MXFP8, 0, &prec, &err) == -1 &&
              strstr(err.msg, "/tmp: is a directory"),
          "%s", err.msg);
}

/* The "#| " lines of an export, as sed -n 's/^#| //p' takes them out. */
static void test_embedded(void)
{
    char *out = NULL;
    CHECK(tsl_megatron_te_prec_embedded("--bf16\n# a comment\n#| a:\n#|   b: 1\n#|no\n#| c",
                                        &out) == 0 &&
              out && strcmp(out, "a:\n  b: 1\nc\n") == 0,
          "'%s'", out ? out : "(null)");
    free(out);
    CHECK(tsl_megatron_te_prec_embedded("--bf16 --fp8-format hybrid\n", &out) == 0 && out == NULL,
          "none");
}

int main(void)
{
    test_first_match();
    test_mtp();
    test_unpriced_modules();
    test_refused();
    test_file();
    test_embedded();
    return CHECK_DONE();
}

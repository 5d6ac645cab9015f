/*
 * test_export.c — common/export.h: plans written as Megatron-LM, DeepSpeed,
 * torchtitan and Galvatron take them, checked key for key against hand-written
 * files in tests/data/export/, and the plans each target cannot run refused
 * with TSL_E_UNSUPPORTED and a reason.
 *
 * The plans are built by hand on GPT2-345M ([embedding, 24 layers, head]) so
 * that every field the exports read is known here, independent of the search.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cuda_graph.h"
#include "eval_cfg.h"
#include "export.h"
#include "module_prec.h"
#include "mtp.h"
#include "hf_config.h"
#include "plan_json.h"
#include "search.h"
#include "sublayer.h"
#include "trace_json.h"
#include "tiny_hybrid.h"

static tsl_model_t model;

/* Stage s runs layers [cut[s], cut[s+1]) on `per` devices under strategy text. */
static void make_plan(tsl_plan_t *p, uint32_t pp, const uint32_t *cut, uint32_t per,
                      const char *strategy, uint32_t micro, uint32_t n_micro)
{
    tsl_plan_init(p);
    p->valid = true;
    snprintf(p->label, sizeof p->label, "tessel");
    p->pp = pp;
    p->n_layers = model.n_layers;
    p->n_devices = pp * per;
    for (uint32_t s = 0; s < pp; s++) {
        p->stages[s].first_layer = cut[s];
        p->stages[s].n_layers = cut[s + 1] - cut[s];
        p->stages[s].first_device = s * per;
        p->stages[s].n_devices = per;
    }
    for (uint32_t i = 0; i < p->n_layers; i++)
        CHECK(tsl_strategy_parse(strategy, &p->layer[i], NULL) == 0, "strategy %s", strategy);
    p->micro_batch = micro;
    p->n_micro = n_micro;
    p->global_batch = micro * n_micro;
    p->iter_time_s = 1.5;
    p->samples_per_s = p->global_batch / 1.5;
    p->peak_bytes = 10ull << 30;
}

static void set_layers(tsl_plan_t *p, uint32_t first, uint32_t count, const char *strategy)
{
    for (uint32_t i = first; i < first + count; i++)
        CHECK(tsl_strategy_parse(strategy, &p->layer[i], NULL) == 0, "strategy %s", strategy);
}

/* tests/data, or TSL_TESTDATA where meson points it (main sets it). */
static char data_dir[400];

static char *slurp(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/export/%s", data_dir, name);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "open %s", path);
    if (f == NULL)
        return strdup("");
    char *buf = calloc(1, 1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The lines that are not comments or blank, joined. */
static void strip_comments(char *text)
{
    char *w = text;
    for (char *line = text; *line;) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line + 1) : strlen(line);
        if (line[0] != '#' && line[0] != '\n') {
            memmove(w, line, len);
            w += len;
        }
        line += len;
    }
    *w = '\0';
}

/* tsl_export of p with the fixture model, whose tied head (GPT2-345M's) a torchtitan
 * plan of stages runs untied for the call: torchtitan refuses weight tying with
 * pipeline parallelism (target.h tsl_target_tied_pp_refused, test_target.c) and its
 * export writes nothing of the tie, so the texts below are those of the untied model. */
static int export_fixture(tsl_export_format_t f, const tsl_plan_t *p, char **text, size_t *len,
                          tsl_err_t *err)
{
    tsl_layer_t *head = model.n_layers ? &model.layers[model.n_layers - 1] : NULL;
    bool untie = (f == TSL_EXPORT_TORCHTITAN || f == TSL_EXPORT_TORCHTITAN_TOML) && p->pp > 1 &&
                 head && head->kind == TSL_LAYER_HEAD && head->tied_head;
    if (untie)
        head->tied_head = false;
    int rc = tsl_export(f, p, &model, text, len, err);
    if (untie)
        head->tied_head = true;
    return rc;
}

static char *export_ok(tsl_export_format_t f, const tsl_plan_t *p)
{
    char *text = NULL;
    size_t len = 0;
    tsl_err_t err = {0};
    int rc = export_fixture(f, p, &text, &len, &err);
    CHECK(rc == 0, "%s export: %s", tsl_export_format_name(f), err.msg);
    CHECK(rc != 0 || strlen(text) == len, "%s: length", tsl_export_format_name(f));
    return text ? text : strdup("");
}

static void expect_json(tsl_export_format_t f, const tsl_plan_t *p, const char *file)
{
    char *text = export_ok(f, p), *want = slurp(file);
    json_t *a = json_loads(text, 0, NULL), *b = json_loads(want, 0, NULL);
    CHECK(a && b && json_equal(a, b), "%s: export differs from %s:\n%s", tsl_export_format_name(f),
          file, text);
    json_decref(a);
    json_decref(b);
    free(text);
    free(want);
}

static void expect_lines(tsl_export_format_t f, const tsl_plan_t *p, const char *file)
{
    char *text = export_ok(f, p), *want = slurp(file);
    CHECK(text[0] == '#', "%s: starts with a comment naming the model", tsl_export_format_name(f));
    strip_comments(text);
    strip_comments(want);
    CHECK(strcmp(text, want) == 0, "%s: export differs from %s:\n%s", tsl_export_format_name(f),
          file, text);
    free(text);
    free(want);
}

static void expect_refused(tsl_export_format_t f, const tsl_plan_t *p, const char *why)
{
    char *text = (char *)"untouched";
    size_t len;
    tsl_err_t err = {0};
    int rc = export_fixture(f, p, &text, &len, &err);
    CHECK(rc == -1 && text == NULL, "%s: refused", tsl_export_format_name(f));
    CHECK(tsl_err_code(&err) == TSL_E_UNSUPPORTED, "%s: TSL_E_UNSUPPORTED, got %s (%s)",
          tsl_export_format_name(f), tsl_errcode_name(tsl_err_code(&err)), err.msg);
    CHECK(strstr(err.msg, why) != NULL, "%s: '%s' says '%s'", tsl_export_format_name(f), err.msg,
          why);
    CHECK(strncmp(err.msg, tsl_export_format_name(f), strlen(tsl_export_format_name(f))) == 0,
          "message names the target: %s", err.msg);
}

/* A refusal that already says "plan again with --target T" gets no second hint
 * ("; re-plan with --target T ..." followed it). */
static void expect_hint_once(tsl_export_format_t f, const tsl_plan_t *p)
{
    char *text = NULL;
    size_t len;
    tsl_err_t err = {0};
    int rc = tsl_export(f, p, &model, &text, &len, &err);
    const char *first = strstr(err.msg, "with --target");
    CHECK(rc == -1 && first && strstr(first + 1, "with --target") == NULL,
          "%s: one --target hint: %s", tsl_export_format_name(f), err.msg);
    free(text);
}

static tsl_plan_t plan;

static void test_megatron(void)
{
    /* 2 stages of 12 Transformer layers, tp2-dp2, the first 4 of each recomputed. */
    const uint32_t cut[] = {0, 13, 26};
    char *text;
    make_plan(&plan, 2, cut, 4, "tp2-dp2", 8, 16);
    for (uint32_t i = 0; i < 4; i++)
        plan.layer[1 + i].ckpt = plan.layer[13 + i].ckpt = true;
    expect_lines(TSL_EXPORT_MEGATRON, &plan, "gpt2-345m.megatron");
    /* TE's fused loss: Megatron-LM's validate_args refuses --cross-entropy-loss-fusion
     * with --cross-entropy-fusion-impl te since 168cb15d70 (arguments.py:1697 at
     * d98e8a6), so the line would not start: refused, not written */
    plan.loss_impl = TSL_LOSS_TE;
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "megatron: loss_impl te: Megatron-LM refuses");
    plan.loss_impl = TSL_LOSS_MEGATRON;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(!strstr(text, "cross-entropy"), "megatron's unfused loss: no flag:\n%s", text);
    free(text);
    /* Megatron-core's native fusion (cost model 186): its flag, the impl native by default */
    plan.loss_impl = TSL_LOSS_MEGATRON_FUSED;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "\n--cross-entropy-loss-fusion\n") && !strstr(text, "fusion-impl"),
          "megatron-fused: --cross-entropy-loss-fusion:\n%s", text);
    free(text);
    /* torch's compiled loss is torchtitan's, not a Megatron-LM line's */
    plan.loss_impl = TSL_LOSS_TORCH_COMPILE;
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "loss_impl torch-compile");
    plan.loss_impl = TSL_LOSS_EXEC;
    /* CP: TE's ring (Megatron-LM --cp-comm-type p2p); Megatron's DP leaves the CP ranks
     * out (world / (TP x CP x PP)), and so does the header */
    make_plan(&plan, 2, cut, 8, "tp2-dp4+sp", 8, 16); /* dp4: CP 2 x DP 2 */
    plan.cp = 2;
    plan.cp_comm = TSL_CP_P2P;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "# 16 GPUs = TP 2 x CP 2 x DP 2 x PP 2;") &&
              strstr(text, "\n--context-parallel-size 2\n--cp-comm-type p2p\n") &&
              strstr(text, "\n--micro-batch-size 4\n"),
          "megatron CP:\n%s", text);
    free(text);
    /* TE's all-gather type is all_gather (it raises on "allgather") */
    plan.cp_comm = TSL_CP_ALLGATHER;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "\n--cp-comm-type all_gather\n") != NULL, "megatron CP all_gather:\n%s",
          text);
    free(text);

    /* Uneven first/last stages: 10, 14 layers. */
    const uint32_t cut2[] = {0, 11, 26};
    make_plan(&plan, 2, cut2, 4, "tp2-dp2", 8, 16);
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "--decoder-first-pipeline-num-layers 10\n") &&
              strstr(text, "--decoder-last-pipeline-num-layers 14\n"),
          "uneven stages:\n%s", text);
    free(text);

    /* priced with the fp16 optimizer's step (opt_step megatron-fp16, what a --fp16
     * line reads as): trained in fp16, its gradients reduced in fp16 (Megatron-LM's
     * default under --fp16) or fp32 (--accumulate-allreduce-grads-in-fp32); a step
     * Megatron-LM does not run (torch's) is refused naming the field */
    make_plan(&plan, 2, cut, 4, "tp2-dp2", 8, 16);
    plan.opt_step = TSL_OPT_STEP_MEGATRON_FP16;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "\n--fp16\n") && !strstr(text, "--bf16") &&
              !strstr(text, "--grad-reduce-in-bf16") && !strstr(text, "accumulate-allreduce"),
          "megatron-fp16, 2-byte reduce:\n%s", text);
    free(text);
    plan.grad_reduce_bytes = 4;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "\n--fp16\n") && strstr(text, "\n--accumulate-allreduce-grads-in-fp32\n"),
          "megatron-fp16, fp32 reduce:\n%s", text);
    free(text);
    plan.opt_step = TSL_OPT_STEP_TORCH;
    expect_refused(
        TSL_EXPORT_MEGATRON, &plan,
        "megatron: runs its own optimizer step; the plan was priced with opt_step torch");

    make_plan(&plan, 2, cut, 4, "tp2-dp2", 8, 16);
    set_layers(&plan, 5, 3, "tp4");
    expect_refused(TSL_EXPORT_MEGATRON, &plan,
                   "layer 5 (Transformer layer) runs tp4 but layer 1 runs tp2-dp2");
    /* a plan no stack runs says how to get one that does */
    expect_refused(TSL_EXPORT_MEGATRON, &plan,
                   "; re-plan with --target megatron to search only what Megatron-LM runs");
    expect_refused(TSL_EXPORT_TORCHTITAN, &plan, "re-plan with --target torchtitan");
    make_plan(&plan, 2, cut, 4, "tp2-dp2", 8, 16);
    plan.layer[3].ckpt = true;
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "first N layers");
    make_plan(&plan, 2, cut, 4, "tp2-dp2", 8, 16);
    plan.layer[25].ckpt = true;
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "layer 25 (head) is checkpointed");
}

/* model = the HF config tests/data/hf/NAME (the GPT2-345M one kept in *saved). */
static void use_hf(const char *name, tsl_model_t *saved)
{
    char path[512];
    tsl_err_t err = {0};
    snprintf(path, sizeof path, "%s/hf/%s", data_dir, name);
    *saved = model;
    if (tsl_hf_config_load(path, 0, &model, &err) != 0) {
        /* every check after this indexes the model's layers: stop here, not past them */
        fprintf(stderr, "test_export: %s (run from the source root or set TSL_TESTDATA)\n",
                err.msg);
        exit(1);
    }
}

static void restore_model(tsl_model_t *saved)
{
    tsl_model_free(&model);
    model = *saved;
}

/* The launch line builds the model that was planned: RoPE base, norm epsilon,
 * Qwen2's Q/K/V biases, Llama 3.1's RoPE scaling (Megatron-LM d98e8a6 names). */
static void test_megatron_model(void)
{
    tsl_model_t gpt2;
    use_hf("qwen2_7b.json", &gpt2);
    make_plan(&plan, 1, (const uint32_t[]){0, model.n_layers}, 4, "tp2-dp2", 8, 4);
    char *text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "--rotary-base 1000000\n") && strstr(text, "--norm-epsilon 1e-06\n") &&
              strstr(text, "--disable-bias-linear\n--add-qkv-bias\n") &&
              !strstr(text, "rope-scaling"),
          "qwen2-7b:\n%s", text);
    free(text);
    restore_model(&gpt2);

    use_hf("llama3_1_8b.json", &gpt2);
    make_plan(&plan, 1, (const uint32_t[]){0, model.n_layers}, 4, "tp2-dp2", 8, 4);
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "--rotary-base 500000\n") && strstr(text, "--norm-epsilon 1e-05\n") &&
              strstr(text, "--use-rope-scaling\n--rope-scaling-factor 8\n") &&
              !strstr(text, "--add-qkv-bias"),
          "llama3.1-8b:\n%s", text);
    free(text);
    model.rope.high_freq_factor = 2.0;
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "--use-rope-scaling builds");
    model.rope.scaling = TSL_ROPE_SCALING_OTHER;
    snprintf(model.rope.scaling_type, sizeof model.rope.scaling_type, "yarn");
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "rope_type 'yarn'");
    restore_model(&gpt2);
}

/* gpt-oss (gpt_oss_20b.json): GPTModel's YaRN with every parameter, the sliding window
 * on the odd 1-based layers (--window-size 127,0, --window-attn-skip-freq 2: Megatron-
 * Bridge's gpt_oss_bridge.py), the clamped quick-GeGLU; the line reads back against the
 * model. Another window pattern is a list; what Megatron-LM's flags cannot build (a
 * chunked window, two window sizes, a dense FFN beside clamped experts, Gemma's norms)
 * is refused naming it. */
static void test_megatron_gpt_oss(void)
{
    tsl_model_t saved;
    use_hf("gpt_oss_20b.json", &saved);
    make_plan(&plan, 1, (const uint32_t[]){0, model.n_layers}, 4, "dp4", 8, 4);
    plan.ep = 4;
    char *text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "--position-embedding-type yarn\n--window-size 127,0\n"
                       "--window-attn-skip-freq 2\n--quick-geglu\n--glu-linear-offset 1\n"
                       "--activation-func-clamp-value 7\n") &&
              strstr(text, "--rotary-base 150000\n") &&
              strstr(text, "--rotary-scaling-factor 32\n--yarn-original-max-position-embeddings "
                           "4096\n--yarn-beta-fast 32\n--yarn-beta-slow 1\n--mscale 1\n"
                           "--mscale-all-dim 0\n--no-yarn-correction-range-round-to-int\n") &&
              strstr(text, "--softmax-type learnable\n") && !strstr(text, "--swiglu") &&
              !strstr(text, "--rope-type") && !strstr(text, "--disable-bias-linear"),
          "gpt-oss:\n%s", text);
    tsl_eval_cfg_t *cfg = calloc(1, sizeof *cfg);
    tsl_err_t err = {0};
    CHECK(cfg && tsl_eval_cfg_megatron(text, cfg, &err) == 0 &&
              tsl_eval_shape_check(&cfg->shape, &model, 1, &err) == 0,
          "gpt-oss read back: %s", err.msg);
    free(text);
    /* full attention on every third layer instead: --window-attn-skip-freq 3; on the
     * first four only: a list */
    for (uint32_t i = 1; i + 1 < model.n_layers; i++)
        model.layers[i].attn_window = i % 3 ? 128 : 0;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "--window-attn-skip-freq 3\n"), "every third:\n%s", text);
    free(text);
    for (uint32_t i = 1; i + 1 < model.n_layers; i++)
        model.layers[i].attn_window = i > 4 ? 128 : 0;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "--window-attn-skip-freq '([0]*4+[1]*20)'\n"), "a list:\n%s", text);
    CHECK(tsl_eval_cfg_megatron(text, cfg, &err) == 0 && cfg->shape.window_len == 24 &&
              tsl_eval_shape_check(&cfg->shape, &model, 1, &err) == 0,
          "the list read back: %s", err.msg);
    free(text);
    model.layers[5].attn_window = 256;
    expect_refused(TSL_EXPORT_MEGATRON, &plan,
                   "megatron: layer 6 of gpt_oss_20b has a 128-key "
                   "window, layer 5 one of 256");
    model.layers[5].attn_window = 128;
    model.layers[5].attn_chunked = true;
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "megatron: attn_chunked: layer 5 of gpt_oss_20b");
    model.layers[5].attn_chunked = false;
    /* a dense FFN, unclamped, beside the clamped experts: not one line's model */
    tsl_layer_t moe3 = model.layers[3];
    model.layers[3].experts = model.layers[3].experts_per_tok = 0;
    model.layers[3].glu_clamp = false;
    CHECK(tsl_layer_derive(&model.layers[3], &err) == 0, "dense layer 3: %s", err.msg);
    expect_refused(TSL_EXPORT_MEGATRON, &plan,
                   "glu_clamp: gpt_oss_20b clamps its experts' gated "
                   "activation but not layer 3's FFN");
    model.layers[3] = moe3;
    model.sandwich_norm = true;
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "megatron: sandwich_norm: gpt_oss_20b has norms");
    free(cfg);
    restore_model(&saved);
}

/* DeepSeek-V3: 3 dense layers (ffn 18432) then 58 MoE layers (experts of 2048):
 * --ffn-hidden-size from the dense layers, --moe-layer-freq as Megatron-LM's
 * moe_freq_type reads it, and eval --megatron-args reads the line back against
 * the model (a round trip); a pattern that disagrees with the model is refused. */
static void test_megatron_moe_freq(void)
{
    tsl_model_t saved;
    use_hf("deepseek_v3.json", &saved);
    make_plan(&plan, 2, (const uint32_t[]){0, 32, model.n_layers}, 16, "tp2-dp8+sp", 8, 64);
    plan.ep = 8;
    char *text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "--num-layers 61\n") && strstr(text, "--ffn-hidden-size 18432\n") &&
              strstr(text, "--moe-ffn-hidden-size 2048\n") && strstr(text, "--num-experts 256\n") &&
              strstr(text, "--moe-layer-freq '([0]*3+[1]*58)'\n") &&
              strstr(text, "--expert-model-parallel-size 8\n"),
          "deepseek-v3:\n%s", text);
    tsl_eval_cfg_t *cfg = calloc(1, sizeof *cfg);
    tsl_plan_t *back = calloc(1, sizeof *back);
    tsl_err_t err = {0};
    CHECK(cfg && back && tsl_eval_cfg_megatron(text, cfg, &err) == 0, "read back: %s", err.msg);
    CHECK(cfg->moe_len == 61 && cfg->moe_pattern[2] == 0 && cfg->moe_pattern[3] == 1 &&
              cfg->moe_pattern[60] == 1 && cfg->knobs.ep == 8,
          "pattern %u layers, ep %u", cfg->moe_len, cfg->knobs.ep);
    /* its MTP depth (HF num_nextn_predict_layers 1) exported and read back; a line
     * without the flag trains none */
    CHECK(strstr(text, "--mtp-num-layers 1\n") && !strstr(text, "mtp_use_repeated_layer") &&
              cfg->mtp_read && cfg->mtp_layers == 1,
          "MTP round trip: %u depths read", cfg->mtp_layers);
    tsl_err_t me = {0};
    CHECK(tsl_model_set_mtp(&model, 2, &me) == 0 && tsl_mtp_repeated(&model), "2 depths: %s",
          me.msg);
    make_plan(&plan, 2, (const uint32_t[]){0, 32, model.n_layers}, 16, "tp2-dp8+sp", 8, 64);
    plan.ep = 8;
    char *two = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(two, "--mtp-num-layers 2\n# mtp_use_repeated_layer") &&
              strstr(two, "--num-layers 61\n") && tsl_eval_cfg_megatron(two, cfg, &err) == 0 &&
              cfg->mtp_layers == 2,
          "2 repeated depths:\n%s", two);
    free(two);
    /* the EP all-to-all overlap where Megatron-LM runs it: TransformerConfig asserts
     * virtual pipelining where PP > 1 and no full recompute, so the flags go out at PP
     * 1 without recompute only (the pricing saves nothing elsewhere:
     * tsl_pipeline_ep_overlap_s, search_eval.c ep_overlap); one MTP depth at most
     * beside it (two are refused: test_moe_flex_overlap) */
    CHECK(tsl_model_set_mtp(&model, 1, &me) == 0, "1 depth: %s", me.msg);
    make_plan(&plan, 2, (const uint32_t[]){0, 32, model.n_layers}, 16, "tp2-dp8+sp", 8, 64);
    plan.ep = 8;
    plan.moe_a2a_overlap = true;
    char *ov = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(!strstr(ov, "\n--overlap-moe-expert-parallel-comm\n"), "PP 2 without VP:\n%s", ov);
    free(ov);
    make_plan(&plan, 1, (const uint32_t[]){0, model.n_layers}, 16, "tp2-dp8+sp", 8, 64);
    plan.ep = 8;
    plan.moe_a2a_overlap = true;
    ov = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(ov, "--overlap-moe-expert-parallel-comm\n--delay-wgrad-compute\n"), "PP 1:\n%s",
          ov);
    free(ov);
    /* priced without delayed wgrad (moe_a2a_wgrad_inline): the overlap alone, which the
     * line reads back as the same knob */
    plan.moe_a2a_wgrad_inline = true;
    ov = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(ov, "--overlap-moe-expert-parallel-comm\n") &&
              !strstr(ov, "--delay-wgrad-compute") && tsl_eval_cfg_megatron(ov, cfg, &err) == 0 &&
              cfg->knobs.moe_a2a_overlap && cfg->knobs.moe_a2a_wgrad_inline,
          "inline dW: %s\n%s", err.msg, ov);
    free(ov);
    plan.moe_a2a_wgrad_inline = false;
    set_layers(&plan, 1, model.n_layers - 2, "tp2-dp8+sp+ckpt");
    ov = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(ov, "--recompute-granularity full") &&
              !strstr(ov, "\n--overlap-moe-expert-parallel-comm\n"),
          "full recompute:\n%s", ov);
    free(ov);
    make_plan(&plan, 2, (const uint32_t[]){0, 32, model.n_layers}, 16, "tp2-dp8+sp", 8, 64);
    plan.ep = 8;
    /* an FP8 dispatch: the flex dispatcher's MXFP8 wire, read back as the same knob */
    plan.fp8_recipe = TSL_FP8_MXFP8;
    plan.moe_fp8_dispatch = true;
    char *fp8 = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(fp8, "--moe-token-dispatcher-type flex\n") &&
              strstr(fp8, "--moe-flex-dispatcher-backend ncclep\n--use-transformer-engine-op-"
                          "fuser\n--moe-dispatch-fwd-dtype mxfp8\n--moe-combine-bwd-dtype "
                          "mxfp8\n") &&
              tsl_eval_cfg_megatron(fp8, cfg, &err) == 0 && cfg->knobs.moe_fp8_dispatch &&
              cfg->knobs.fp8 == TSL_FP8_MXFP8,
          "fp8 dispatch: %s\n%s", err.msg, fp8);
    free(fp8);
    /* the experts' MLP through TE's op fuser: written once, read back as priced */
    plan.moe_fused_mlp = true;
    fp8 = export_ok(TSL_EXPORT_MEGATRON, &plan);
    const char *fuser = strstr(fp8, "--use-transformer-engine-op-fuser\n");
    CHECK(fuser && !strstr(fuser + 1, "--use-transformer-engine-op-fuser"),
          "the op fuser once beside the FP8 dispatch:\n%s", fp8);
    free(fp8);
    plan.moe_fp8_dispatch = false;
    plan.fp8_recipe = 0;
    fp8 = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(fp8, "--moe-grouped-gemm\n") &&
              strstr(fp8, "--use-transformer-engine-op-fuser\n") &&
              tsl_eval_cfg_megatron(fp8, cfg, &err) == 0 && cfg->knobs.moe_fused_mlp,
          "fused expert MLP: %s\n%s", err.msg, fp8);
    free(fp8);
    plan.moe_fused_mlp = false;
    /* the weighted squared ReLU fused: written, read back as priced */
    plan.moe_fused_srelu = true;
    fp8 = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(fp8, "--use-fused-weighted-squared-relu\n") &&
              tsl_eval_cfg_megatron(fp8, cfg, &err) == 0 && cfg->knobs.moe_fused_srelu,
          "fused weighted squared ReLU: %s\n%s", err.msg, fp8);
    free(fp8);
    plan.moe_fused_srelu = false;
    plan.fp8_recipe = TSL_FP8_MXFP8;
    plan.moe_fp8_dispatch = true;
    /* NVFP4 is Megatron-LM's FP4 (--fp4-format e2m1 --fp4-recipe nvfp4, weights in FP4
     * with --fp4-param-gather), no --fp8-* flag; read back as the same recipe */
    plan.fp8_recipe = TSL_FP8_NVFP4;
    plan.moe_fp8_dispatch = false;
    plan.fp8_param_gather = true;
    char *fp4 = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(fp4, "--fp4-format e2m1\n--fp4-recipe nvfp4\n--fp4-param-gather\n") &&
              !strstr(fp4, "--fp8-") && tsl_eval_cfg_megatron(fp4, cfg, &err) == 0 &&
              cfg->knobs.fp8 == TSL_FP8_NVFP4 && cfg->knobs.fp8_param_gather,
          "nvfp4: %s\n%s", err.msg, fp4);
    free(fp4);
    /* blocks kept bf16: Megatron-LM's flag and both counts, read back the same */
    plan.fp8_param_gather = false;
    plan.bf16_layers_start = 0;
    plan.bf16_layers_end = 14;
    char *kb = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(kb, "--first-last-layers-bf16\n--num-layers-at-start-in-bf16 0\n"
                     "--num-layers-at-end-in-bf16 14\n") &&
              tsl_eval_cfg_megatron(kb, cfg, &err) == 0 && cfg->knobs.bf16_layers_start == 0 &&
              cfg->knobs.bf16_layers_end == 14,
          "bf16 blocks: %s\n%s", err.msg, kb);
    free(kb);
    plan.bf16_layers_end = 0;
    plan.fp8_recipe = TSL_FP8_NONE;
    plan.moe_fp8_dispatch = false;
    CHECK(tsl_eval_cfg_plan(cfg, &model, 32, back, &err) == 0 && back->pp == 2 &&
              back->n_devices == 32 && back->ep == 8,
          "plan from the line: %s (pp %u, ep %u)", err.msg, back->pp, back->ep);
    /* Megatron's int form and a wrong pattern: checked against the model's layers */
    CHECK(tsl_eval_cfg_megatron("--moe-layer-freq 1 --tensor-model-parallel-size 2 "
                                "--sequence-parallel --pipeline-model-parallel-size 2",
                                cfg, &err) == 0 &&
              tsl_eval_cfg_plan(cfg, &model, 32, back, &err) == -1 &&
              strstr(err.msg, "layer 0 is MoE in the configuration, dense in the model"),
          "freq 1 on DeepSeek-V3: %s", err.msg);
    CHECK(tsl_eval_cfg_megatron("--moe-layer-freq \"([0]*3+[1]*57)\"", cfg, &err) == 0 &&
              tsl_eval_cfg_plan(cfg, &model, 32, back, &err) == -1 && strstr(err.msg, "60 layers"),
          "short pattern: %s", err.msg);
    free(cfg);
    free(back);
    free(text);
    /* a MoE layer whose attention differs from the dense layers' is refused */
    for (uint32_t i = 0; i < model.n_layers; i++)
        if (model.layers[i].experts)
            model.layers[i].heads = 64;
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "attention differs");
    restore_model(&saved);
}

/* DeepSeek-V3 as Megatron-Bridge's B200 recipe runs it: recompute of mla_up_proj
 * and mlp, bf16 Adam moments (the precision-aware optimizer) with bf16 main
 * gradients; exported and read back; the moments without ZeRO-1 refused. */
static void test_megatron_modules(void)
{
    tsl_model_t saved;
    use_hf("deepseek_v3.json", &saved);
    make_plan(&plan, 2, (const uint32_t[]){0, 32, model.n_layers}, 16, "dp16+zero1", 16, 64);
    plan.ep = 16;
    plan.recompute_modules = TSL_RECOMPUTE_MLA_UP_PROJ | TSL_RECOMPUTE_MLP;
    plan.bf16_moments = true;
    char *text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(
        strstr(text, "--recompute-granularity selective\n--recompute-modules mla_up_proj mlp\n") &&
            strstr(text, "--use-precision-aware-optimizer\n--exp-avg-dtype bf16\n"
                         "--exp-avg-sq-dtype bf16\n--main-grads-dtype bf16\n"),
        "modules and moments:\n%s", text);
    tsl_eval_cfg_t *cfg = calloc(1, sizeof *cfg);
    tsl_err_t err = {0};
    CHECK(cfg && tsl_eval_cfg_megatron(text, cfg, &err) == 0, "read back: %s", err.msg);
    CHECK(cfg->ckpt == TSL_EVAL_CKPT_NONE &&
              cfg->knobs.recompute_modules == plan.recompute_modules && cfg->knobs.bf16_moments &&
              cfg->knobs.grad_reduce_bytes == 0,
          "read back: ckpt %d modules 0x%x moments %d grad %u", cfg->ckpt,
          cfg->knobs.recompute_modules, cfg->knobs.bf16_moments, cfg->knobs.grad_reduce_bytes);
    free(cfg);
    free(text);
    make_plan(&plan, 2, (const uint32_t[]){0, 32, model.n_layers}, 16, "dp16", 16, 64);
    plan.ep = 16;
    plan.bf16_moments = true;
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "distributed optimizer only");
    plan.bf16_moments = false;
    plan.lazy_grads = true; /* Megatron-LM's gradient buffer is kept all along */
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "lazy_grads");
    plan.lazy_grads = false;
    plan.recompute_modules = TSL_RECOMPUTE_MOE_ACT;
    for (uint32_t i = 1; i + 1 < model.n_layers; i++)
        plan.layer[i].ckpt = true;
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "one --recompute-granularity");
    restore_model(&saved);
}

/* Interleaved with N micro-batches per group: written when not pp (Megatron's
 * default), read back by eval --megatron-args; an N Megatron-LM's schedules.py
 * raises on refused naming vp_group. 2 stages of 12 layers, 4 chunks of 3 each. */
static void test_megatron_vp_group(void)
{
    const uint32_t cut[] = {0, 13, 26};
    make_plan(&plan, 2, cut, 4, "tp2-dp2", 8, 16);
    plan.interleave = 4;
    char *text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "--num-layers-per-virtual-pipeline-stage 3\n") &&
              !strstr(text, "microbatch-group-size"),
          "N = pp is Megatron's default, not written:\n%s", text);
    /* the header comment names the schedule the arguments run (it said "1F1B") */
    CHECK(strstr(text, "per data-parallel rank (interleaved 1F1B)\n"), "header:\n%s", text);
    free(text);
    plan.vp_group = 4;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "--microbatch-group-size-per-virtual-pipeline-stage 4\n"), "N 4:\n%s", text);
    tsl_eval_cfg_t *cfg = calloc(1, sizeof *cfg);
    static tsl_plan_t back;
    tsl_err_t err = {0};
    CHECK(cfg && tsl_eval_cfg_megatron(text, cfg, &err) == 0 &&
              tsl_eval_cfg_plan(cfg, &model, 8, &back, &err) == 0,
          "read back: %s", err.msg);
    CHECK(back.interleave == 4 && back.vp_group == 4 && back.n_micro == 16,
          "read back: interleave %u vp_group %u m %u", back.interleave, back.vp_group,
          back.n_micro);
    free(cfg);
    free(text);
    plan.vp_group = 1; /* below pp */
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "vp_group 1");
    plan.vp_group = 5; /* 16 mod 5 = 1, a last group smaller than pp */
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "vp_group 5");
}

/* A Megatron export read back by eval --megatron-args: the same stages, chunks
 * and checkpointed layers. */
static void megatron_back(const char *text, const tsl_plan_t *p)
{
    tsl_eval_cfg_t *cfg = calloc(1, sizeof *cfg);
    tsl_plan_t *back = calloc(1, sizeof *back);
    tsl_err_t err = {0};
    CHECK(cfg && back && tsl_eval_cfg_megatron(text, cfg, &err) == 0 &&
              tsl_eval_cfg_plan(cfg, &model, p->n_devices, back, &err) == 0,
          "read back: %s\n%s", err.msg, text);
    bool same = back->pp == p->pp && back->interleave == p->interleave &&
                back->n_micro == p->n_micro && back->global_batch == p->global_batch;
    for (uint32_t s = 0; s < p->pp; s++)
        same &= back->stages[s].first_layer == p->stages[s].first_layer &&
                back->stages[s].n_layers == p->stages[s].n_layers;
    for (uint32_t i = 0; i < model.n_layers; i++)
        same &= back->layer[i].ckpt == p->layer[i].ckpt;
    CHECK(same, "megatron round trip: pp %u v %u m %u, stage 0 [%u, +%u), last [%u, +%u)\n%s",
          back->pp, back->interleave, back->n_micro, back->stages[0].first_layer,
          back->stages[0].n_layers, back->stages[back->pp ? back->pp - 1 : 0].first_layer,
          back->stages[back->pp ? back->pp - 1 : 0].n_layers, text);
    free(cfg);
    free(back);
}

/* A small hybrid of 16 blocks, pattern pat (M, *, -), as the global model (tiny_hybrid.h). */
static void use_hybrid(const char *pat, tsl_model_t *saved)
{
    tsl_err_t err = {0};
    *saved = model;
    if (tiny_hybrid_build(pat, &model, &err) != 0) {
        fprintf(stderr, "test_export: %s\n", err.msg);
        exit(1);
    }
}

/* A hybrid interleaved (Megatron-LM d98e8a6 hybrid_layer_allocation.py
 * select_pipeline_segment: segment j·P + r builds rank r's model chunk j, no
 * --num-layers-per-virtual-pipeline-stage beside it). "M*M-" four times over 2 stages
 * of 8 blocks in 2 chunks of 4: Tessel prices stage 0 as blocks 0..7 (chunks 0..3,
 * 4..7), stage 1 as 8..15; Megatron-LM builds segment 0 (rank 0, chunk 0) from blocks
 * 0..3, segment 1 (rank 1, chunk 0) from 4..7 — priced as 8..11, "M*M-" both —,
 * segment 2 (rank 0, chunk 1) from 8..11, priced as 4..7, segment 3 from 12..15: the
 * line is "M*M-|M*M-|M*M-|M*M-", read back to the same stages and chunks. Where the
 * blocks differ ("MMMM****MMMM----": rank 0's second chunk would build "MMMM" where
 * "****" was priced), with some blocks recomputed, or read with other segment lengths:
 * refused naming it. */
static void test_megatron_hybrid_vp(void)
{
    tsl_model_t saved;
    use_hybrid("M*M-M*M-M*M-M*M-", &saved);
    make_plan(&plan, 2, (const uint32_t[]){0, 9, 18}, 2, "dp2", 2, 8);
    plan.interleave = 2;
    char *text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "\n--hybrid-layer-pattern M*M-|M*M-|M*M-|M*M-\n") &&
              strstr(text, "\n--pipeline-model-parallel-size 2\n") && !strstr(text, "virtual") &&
              !strstr(text, "pipeline-num-layers") && !strstr(text, "in-pipeline-split"),
          "interleaved hybrid:\n%s", text);
    megatron_back(text, &plan);
    /* the same line with segments of other lengths: rank 0 holds 6 + 4 blocks */
    char *moved = strdup(text), *at = strstr(moved, "M*M-|M*M-|M*M-|M*M-");
    if (at)
        memcpy(at, "M*M-M*|M-|M*M-|M*M-", 19);
    tsl_eval_cfg_t *cfg = calloc(1, sizeof *cfg);
    tsl_plan_t *back = calloc(1, sizeof *back);
    tsl_err_t err = {0};
    CHECK(tsl_eval_cfg_megatron(moved, cfg, &err) == 0 &&
              tsl_eval_cfg_plan(cfg, &model, plan.n_devices, back, &err) == -1 &&
              tsl_err_code(&err) == TSL_E_UNSUPPORTED &&
              strstr(err.msg, "segment 0 (stage 0's model chunk 0) has 6 layers; Tessel prices "
                              "that chunk with 5"),
          "other segment lengths: %s", err.msg);
    free(moved);
    free(text);
    set_layers(&plan, 1, 2, "dp2+ckpt");
    set_layers(&plan, 9, 2, "dp2+ckpt");
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "with 4 of its 16 blocks recomputed");
    set_layers(&plan, 0, model.n_layers, "dp2");
    restore_model(&saved);

    use_hybrid("MMMM****MMMM----", &saved);
    make_plan(&plan, 2, (const uint32_t[]){0, 9, 18}, 2, "dp2", 2, 8);
    plan.interleave = 2;
    expect_refused(TSL_EXPORT_MEGATRON, &plan,
                   "segment 1 (stage 1's model chunk 0) would build blocks 4..7, block 4 a '*'; "
                   "the plan priced that chunk as blocks 8..11 of its stage, there a 'M'");
    plan.interleave = 0; /* plain 1F1B: a '|' segment a stage (cost model 106) */
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "\n--hybrid-layer-pattern MMMM****|MMMM----\n") &&
              !strstr(text, "pipeline-num-layers"),
          "1F1B hybrid:\n%s", text);
    megatron_back(text, &plan);
    /* an older export's pipe-free pattern still reads as Megatron-LM's even split */
    char *old = strdup(text), *bar = strchr(old, '|');
    if (bar)
        memmove(bar, bar + 1, strlen(bar));
    CHECK(strstr(old, "\n--hybrid-layer-pattern MMMM****MMMM----\n"), "pipe-free:\n%s", old);
    megatron_back(old, &plan);
    free(old);
    free(text);
    free(cfg);
    free(back);
    restore_model(&saved);
}

/* A hybrid's 1F1B stages of uneven middle lengths (cost model 106), as a split balanced
 * over unlike blocks gives them: "MMMM****MMMM----" over 4 stages of 3, 5, 6 and 2 blocks
 * (the embedding on stage 0, the head on stage 3). Megatron-LM's pipe-free split runs only
 * the middle stages even (--decoder-first/last-pipeline-num-layers); '|' segments, one a
 * stage of any length (select_pipeline_segment at d98e8a6), say this one, with none of
 * the split flags beside them (validate_args asserts so), and read back to the same
 * stages. */
static void test_megatron_hybrid_uneven(void)
{
    tsl_model_t saved;
    use_hybrid("MMMM****MMMM----", &saved);
    make_plan(&plan, 4, (const uint32_t[]){0, 4, 9, 15, 18}, 2, "dp2", 2, 8);
    char *text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "\n--hybrid-layer-pattern MMM|M****|MMMM--|--\n") &&
              strstr(text, "\n--pipeline-model-parallel-size 4\n") && !strstr(text, "virtual") &&
              !strstr(text, "pipeline-num-layers") && !strstr(text, "in-pipeline-split"),
          "uneven hybrid stages:\n%s", text);
    megatron_back(text, &plan);
    free(text);
    restore_model(&saved);
    /* a GPT model's middle stages stay even: the split flags cannot say otherwise */
    make_plan(&plan, 4, (const uint32_t[]){0, 6, 12, 19, 26}, 2, "dp2", 2, 8);
    expect_refused(TSL_EXPORT_MEGATRON, &plan,
                   "stage 2 has 7 Transformer layers but stage 1 has 6; Megatron-LM splits the "
                   "middle stages evenly");
}

/* Interleaved with the embedding and the loss counted as layers (Megatron-LM
 * d98e8a6 get_num_layers_to_build): Qwen3-235B-A22B, 94 layers + 2 = 96 over PP 32,
 * 3 a rank, 3 chunks of 1 — stage 0 the embedding and 2 layers (its first chunk
 * the embedding alone), stages 1-30 3 layers, stage 31 2 layers and the head
 * (its last chunk the loss alone). Written as the two flags and
 * --num-layers-per-virtual-pipeline-stage 1, read back to the same split. Only
 * the embedding counted (GPT2-345M, 24 + 1 = 25 over PP 5, 5 chunks of 1): stage
 * 0 holds 4 layers, the others 5. Uneven first/last stages each a multiple of v:
 * --num-virtual-stages-per-pipeline-rank (arguments.py asserts it there). */
static void test_megatron_account(void)
{
    tsl_model_t gpt2;
    use_hf("qwen3_235b_a22b.json", &gpt2);
    CHECK(model.n_layers == 96, "Qwen3-235B: %u layers", model.n_layers);
    uint32_t cut[33];
    cut[0] = 0;
    for (uint32_t s = 1; s < 32; s++)
        cut[s] = 3 * s; /* stage 0: layers 0-2 (the embedding, blocks 1-2) */
    cut[32] = 96;
    make_plan(&plan, 32, cut, 8, "tp2-dp4+sp", 4, 256);
    plan.interleave = 3;
    char *text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "--account-for-embedding-in-pipeline-split\n"
                       "--account-for-loss-in-pipeline-split\n"
                       "--num-layers-per-virtual-pipeline-stage 1\n") &&
              !strstr(text, "--decoder-first") && strstr(text, "--num-layers 94\n"),
          "qwen3-235b pp 32 v 3:\n%s", text);
    megatron_back(text, &plan);
    free(text);
    /* the mb2604-q235b rows' split: PP 8, 12 a rank, 4 chunks of 3 (stage 0: the
     * embedding and 2, then 3, 3, 3); block recompute of 2 a chunk checkpoints 8
     * layers of every stage (2 + 2 + 2 + 2), 9 none */
    uint32_t cut8[9] = {0};
    for (uint32_t s = 1; s < 8; s++)
        cut8[s] = 12 * s;
    cut8[8] = 96;
    make_plan(&plan, 8, cut8, 32, "tp2-dp16+sp", 16, 512);
    plan.interleave = 4;
    for (uint32_t s = 0; s < 8; s++)
        for (uint32_t i = cut8[s]; i < cut8[s + 1]; i++)
            plan.layer[i].ckpt = i >= 1 && i <= 94 && i - (s ? cut8[s] : 1) < 8;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "--recompute-method block\n--recompute-num-layers 2\n") &&
              strstr(text, "--num-layers-per-virtual-pipeline-stage 3\n"),
          "block recompute 2 a chunk:\n%s", text);
    megatron_back(text, &plan);
    free(text);
    plan.layer[8].ckpt = false; /* stage 0: 7 — no N gives it */
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "one number for every stage");
    /* one layer moved from the last stage to stage 0: no Megatron split */
    cut[1] = 4;
    for (uint32_t s = 2; s < 32; s++)
        cut[s] = 3 * s + 1;
    make_plan(&plan, 32, cut, 8, "tp2-dp4+sp", 4, 256);
    plan.interleave = 3;
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "--account-for-embedding-in-pipeline-split");
    restore_model(&gpt2);

    const uint32_t five[] = {0, 5, 10, 15, 20, 26}; /* the embedding and 4, then 5 each */
    make_plan(&plan, 5, five, 2, "dp2", 2, 10);
    plan.interleave = 5;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "--account-for-embedding-in-pipeline-split\n"
                       "--num-layers-per-virtual-pipeline-stage 1\n") &&
              !strstr(text, "account-for-loss"),
          "gpt2 pp 5 v 5, the embedding counted:\n%s", text);
    megatron_back(text, &plan);
    free(text);
    const uint32_t uneven[] = {0, 5, 13, 21, 26}; /* 4, 8, 8, 4 layers: v 2 */
    make_plan(&plan, 4, uneven, 2, "dp2", 2, 8);
    plan.interleave = 2;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "--decoder-first-pipeline-num-layers 4\n"
                       "--decoder-last-pipeline-num-layers 4\n"
                       "--num-virtual-stages-per-pipeline-rank 2\n") &&
              !strstr(text, "--num-layers-per-virtual"),
          "gpt2 4/8/8/4 v 2:\n%s", text);
    megatron_back(text, &plan);
    free(text);
    plan.interleave = 4; /* 4 | 4 and 8, but the import must agree too */
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    megatron_back(text, &plan);
    free(text);
}

/* A torchtitan export read back by eval --torchtitan: the same stages,
 * strategy and ep. */
static void torchtitan_back(const char *text, const tsl_plan_t *p)
{
    tsl_eval_cfg_t *cfg = calloc(1, sizeof *cfg);
    tsl_plan_t *back = calloc(1, sizeof *back);
    tsl_err_t err = {0};
    CHECK(cfg && back && tsl_eval_cfg_torchtitan(text, cfg, &err) == 0, "read back: %s\n%s",
          err.msg, text);
    CHECK(tsl_eval_cfg_plan(cfg, &model, p->n_devices, back, &err) == 0, "plan back: %s\n%s",
          err.msg, text);
    bool same = back->pp == p->pp && back->ep == p->ep && back->n_micro == p->n_micro &&
                back->global_batch == p->global_batch;
    for (uint32_t s = 0; s < p->pp; s++)
        same &= back->stages[s].first_layer == p->stages[s].first_layer &&
                back->stages[s].n_layers == p->stages[s].n_layers;
    for (uint32_t i = 0; i < model.n_layers; i++)
        same &= tsl_strategy_equal(&back->layer[i], &p->layer[i]);
    CHECK(same, "torchtitan round trip: pp %u ep %u m %u, stage 0 [%u, +%u)\n%s", back->pp,
          back->ep, back->n_micro, back->stages[0].first_layer, back->stages[0].n_layers, text);
    free(cfg);
    free(back);
}

/* Mixture of experts to torchtitan (b5bcd76c6 ParallelDims, fsdp.py): DeepSeek-V3
 * with ep 16 (its base configuration, expert_parallel_degree, the TOML's
 * expert_tensor_parallel_degree 1) read back with the same ep and strategy; the
 * layouts torchtitan's sparse mesh would run otherwise than Tessel prices are
 * refused naming the rule; DeepSpeed and Galvatron refuse MoE with the reason. */
static void test_torchtitan_moe(void)
{
    tsl_model_t saved;
    use_hf("deepseek_v3.json", &saved);
    tsl_err_t e = {0}; /* torchtitan's DeepSeek-V3 trains no MTP depth: --no-mtp (mtp.h) */
    CHECK(tsl_model_set_mtp(&model, 0, &e) == 0, "no MTP: %s", e.msg);
    const uint32_t cut[] = {0, 32, 63};
    make_plan(&plan, 2, cut, 16, "tp2-sdp8+sp", 16, 32);
    plan.ep = 16;
    char *py = export_ok(TSL_EXPORT_TORCHTITAN, &plan);
    CHECK(strstr(py, "from torchtitan.models.deepseek_v3.config_registry import "
                     "deepseek_v3_671b as base_config\n") &&
              strstr(py, "    par.expert_parallel_degree = 16\n") &&
              strstr(py, "# MoE: 256 routed experts (top-8) in 58 layers over "
                         "expert_parallel_degree 16"),
          "deepseek-v3 python:\n%s", py);
    torchtitan_back(py, &plan);
    char *toml = export_ok(TSL_EXPORT_TORCHTITAN_TOML, &plan);
    CHECK(strstr(toml, "\nexpert_parallel_degree = 16\nexpert_tensor_parallel_degree = 1\n") &&
              !strstr(toml, "v0.2.0 asserts"),
          "deepseek-v3 toml:\n%s", toml);
    torchtitan_back(toml, &plan);
    free(py);
    free(toml);
    /* EP inside the TP group: main and v0.2.1+ build it, v0.2.0 does not (a comment) */
    make_plan(&plan, 2, cut, 16, "tp4-sdp4+sp", 16, 32);
    plan.ep = 2;
    toml = export_ok(TSL_EXPORT_TORCHTITAN_TOML, &plan);
    CHECK(strstr(toml, "v0.2.0 asserts expert_parallel_degree % (context_parallel_degree x "
                       "tensor_parallel_degree = 4) == 0"),
          "ep 2 under tp 4:\n%s", toml);
    torchtitan_back(toml, &plan);
    free(toml);
    /* the loss: priced as Megatron-LM's (loss_impl megatron) it is not torchtitan's,
     * refused naming the field; the executor's, torch's and torch's compiled one pass
     * (loss_impl.h: torchtitan compiles its loss with training.compile since 2025) */
    plan.loss_impl = TSL_LOSS_MEGATRON;
    expect_refused(TSL_EXPORT_TORCHTITAN, &plan,
                   "torchtitan: runs its LM loss as loss_impl torch; the plan was priced with "
                   "loss_impl megatron");
    plan.loss_impl = TSL_LOSS_TORCH;
    free(export_ok(TSL_EXPORT_TORCHTITAN, &plan));
    plan.loss_impl = TSL_LOSS_TORCH_COMPILE;
    free(export_ok(TSL_EXPORT_TORCHTITAN, &plan));
    plan.loss_impl = TSL_LOSS_EXEC;
    /* the optimizer step likewise (opt_step.h): Megatron-core's is not torchtitan's;
     * torch's foreach AdamW and the executor's fused step pass */
    plan.opt_step = TSL_OPT_STEP_MEGATRON;
    expect_refused(TSL_EXPORT_TORCHTITAN, &plan,
                   "torchtitan: runs its own optimizer step; the plan was priced with opt_step "
                   "megatron");
    plan.opt_step = TSL_OPT_STEP_TORCH;
    free(export_ok(TSL_EXPORT_TORCHTITAN, &plan));
    plan.opt_step = TSL_OPT_STEP_FUSED;
    /* FP8: priced as Transformer Engine runs it (fp8_impl te), it is not what
     * torchtitan's torchao runs: refused, the field named */
    plan.fp8_recipe = TSL_FP8_TENSORWISE;
    expect_refused(TSL_EXPORT_TORCHTITAN, &plan,
                   "runs FP8 through torchao; the plan was priced as Transformer Engine runs it "
                   "(fp8_impl te)");
    /* FP8 as torchao runs it: the router's gate stays bf16, as priced */
    plan.fp8_impl = TSL_FP8_IMPL_TORCHAO;
    py = export_ok(TSL_EXPORT_TORCHTITAN, &plan);
    toml = export_ok(TSL_EXPORT_TORCHTITAN_TOML, &plan);
    CHECK(strstr(py, "filter_fqns=[\"lm_head\", \"router.gate\"]") &&
              strstr(toml, "filter_fqns = [\"output\", \"router.gate\"]\n"),
          "fp8 filters:\n%s\n%s", py, toml);
    /* the routed experts in FP8 as priced: torchtitan's grouped-experts converters,
     * read back as FP8 experts; the FSDP float8 all-gather in the TOML form */
    CHECK(strstr(py, "import Float8LinearConverter, Float8GroupedExpertsConverter\n") &&
              strstr(py, "Float8GroupedExpertsConverter.Config(\n        "
                         "model_compile_enabled=True,\n    ).build().convert(") &&
              strstr(toml, "converters = [\"quantize.linear.float8\", "
                           "\"quantize.grouped_mm.float8\"]\n") &&
              strstr(toml, "[quantize.grouped_mm.float8]\nfqns = [\"experts\"]\n"),
          "fp8 experts:\n%s\n%s", py, toml);
    tsl_eval_cfg_t *cfg = calloc(1, sizeof *cfg);
    tsl_err_t e8 = {0};
    CHECK(cfg && tsl_eval_cfg_torchtitan(py, cfg, &e8) == 0 && !cfg->knobs.moe_bf16_experts &&
              tsl_eval_cfg_torchtitan(toml, cfg, &e8) == 0 && !cfg->knobs.moe_bf16_experts &&
              cfg->knobs.fp8_impl == TSL_FP8_IMPL_TORCHAO,
          "fp8 experts read back (torchao): %s", e8.msg);
    free(py);
    free(toml);
    plan.moe_bf16_experts = true;
    plan.fp8_param_gather = true;
    py = export_ok(TSL_EXPORT_TORCHTITAN, &plan);
    toml = export_ok(TSL_EXPORT_TORCHTITAN_TOML, &plan);
    CHECK(!strstr(py, "GroupedExperts") && !strstr(toml, "grouped_mm") &&
              strstr(toml, "enable_fsdp_float8_all_gather = true\n") &&
              !strstr(toml, "recipe_name =") && strstr(py, "torchtitan main gathers in bf16"),
          "bf16 experts, FP8 gathers:\n%s\n%s", py, toml);
    CHECK(tsl_eval_cfg_torchtitan(toml, cfg, &e8) == 0 && cfg->knobs.moe_bf16_experts &&
              cfg->knobs.fp8_param_gather && cfg->knobs.fp8 == TSL_FP8_TENSORWISE,
          "bf16 experts, FP8 gathers read back: %s", e8.msg);
    free(cfg);
    free(py);
    free(toml);
    plan.moe_fp8_dispatch = true; /* torchtitan dispatches bf16 */
    plan.moe_bf16_experts = plan.fp8_param_gather = false;
    expect_refused(TSL_EXPORT_TORCHTITAN, &plan, "dispatches the routed tokens in bf16");
    plan.moe_fp8_dispatch = false;
    /* priced with Megatron-LM's all-to-all dispatcher: not torchtitan's dispatch */
    plan.moe_alltoall = true;
    expect_refused(TSL_EXPORT_TORCHTITAN, &plan,
                   "torchtitan: runs its own token dispatch (the plan priced Megatron-LM's "
                   "all-to-all dispatcher, moe_alltoall_dispatcher)");
    plan.moe_alltoall = false;
    /* priced with Megatron-LM's EP all-to-all overlap: torchtitan runs no such step */
    plan.moe_a2a_overlap = true;
    expect_refused(TSL_EXPORT_TORCHTITAN, &plan,
                   "torchtitan: runs no EP all-to-all overlap (the plan priced Megatron-LM's "
                   "--overlap-moe-expert-parallel-comm, moe_a2a_overlap)");
    plan.moe_a2a_overlap = false;
    static const struct {
        const char *strategy;
        uint32_t ep;
        const char *why;
    } refused[] = {
        {"tp2-sdp8+sp", 0, "with expert parallelism off on deepseek_v3's 58 MoE layers"},
        {"tp2-sdp8+sp", 3, "does not divide layer 4's 256 experts"},
        {"tp2-sdp8+sp", 32,
         "does not divide data_parallel_shard_degree x "
         "context_parallel_degree x tensor_parallel_degree = 16"},
        {"tp2-sdp4-dp2+sp", 8, "keeps 2 replicas (HSDP)"},
        {"tp16+sp", 8, "FSDP-shards the routed experts over efsdp = 2 ranks"},
    };
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
        make_plan(&plan, 2, cut, 16, refused[k].strategy, 16, 32);
        plan.ep = refused[k].ep;
        expect_refused(TSL_EXPORT_TORCHTITAN, &plan, refused[k].why);
        expect_refused(TSL_EXPORT_TORCHTITAN, &plan, "re-plan with --target torchtitan");
    }
    make_plan(&plan, 2, cut, 16, "tp16+sp", 16, 32);
    plan.ep = 16;
    torchtitan_back(py = export_ok(TSL_EXPORT_TORCHTITAN, &plan), &plan);
    free(py);
    /* no re-planning helps a stack that runs no MoE model as Tessel prices it */
    make_plan(&plan, 2, cut, 16, "sdp16", 16, 32);
    plan.ep = 16;
    expect_refused(TSL_EXPORT_DEEPSPEED, &plan, "DeepSpeed takes experts from the model's code");
    expect_refused(TSL_EXPORT_GALVATRON, &plan, "Galvatron v2.4.0 runs no mixture-of-experts");
    tsl_err_t err = {0};
    char *text = NULL;
    size_t len;
    CHECK(tsl_export(TSL_EXPORT_DEEPSPEED, &plan, &model, &text, &len, &err) == -1 &&
              !strstr(err.msg, "re-plan"),
          "model-level refusal without a re-plan hint: %s", err.msg);
    restore_model(&saved);
}

/* Mixtral-8x7B at ep 4 x etp 2 with a padded capacity factor of 1.25 and an
 * imbalance of 1.3: the export writes Megatron-LM's flags for the first three
 * (the imbalance as a comment: Megatron-LM has none), and eval --megatron-args
 * reads them back into the same plan; a line without --expert-tensor-parallel-size
 * gives the experts the attention's TP, as Megatron-LM does. */
static void test_megatron_moe_etp(void)
{
    tsl_model_t saved = model;
    CHECK(tsl_model_preset("Mixtral-8x7B", &model, NULL) == 0, "Mixtral-8x7B");
    make_plan(&plan, 2, (const uint32_t[]){0, 17, model.n_layers}, 8, "tp2-dp4+sp", 8, 8);
    plan.ep = 4;
    plan.etp = 2;
    plan.moe_capacity = 1.25;
    plan.moe_pad = true;
    plan.moe_imbalance = 1.3;
    char *text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "--expert-model-parallel-size 4\n--expert-tensor-parallel-size 2\n") &&
              strstr(text, "--moe-expert-capacity-factor 1.25\n") &&
              strstr(text, "--moe-pad-expert-input-to-capacity\n") &&
              strstr(text, "# priced with the busiest expert at 1.3 x the mean tokens"),
          "mixtral ep 4 etp 2:\n%s", text);
    tsl_eval_cfg_t *cfg = calloc(1, sizeof *cfg);
    tsl_plan_t *back = calloc(1, sizeof *back);
    tsl_err_t err = {0};
    /* the plan document carries the four */
    json_t *doc = tsl_plan_to_json(&plan);
    CHECK(back && tsl_plan_from_json(doc, back, &err) == 0 && back->etp == 2 &&
              back->moe_capacity == 1.25 && back->moe_pad && back->moe_imbalance == 1.3,
          "plan JSON: %s etp %u capacity %g", err.msg, back->etp, back->moe_capacity);
    json_decref(doc);
    CHECK(cfg && back && tsl_eval_cfg_megatron(text, cfg, &err) == 0, "read back: %s", err.msg);
    CHECK(tsl_eval_cfg_plan(cfg, &model, 16, back, &err) == 0 && back->ep == 4 && back->etp == 2 &&
              back->moe_capacity == 1.25 && back->moe_pad && back->moe_imbalance == 0 &&
              back->pp == 2,
          "plan from the line: %s (ep %u etp %u capacity %g pad %d)", err.msg, back->ep, back->etp,
          back->moe_capacity, back->moe_pad);
    /* Megatron-LM's default expert TP is the attention's */
    CHECK(tsl_eval_cfg_megatron("--tensor-model-parallel-size 2 --sequence-parallel "
                                "--expert-model-parallel-size 4 --num-experts 8 --bf16",
                                cfg, &err) == 0 &&
              tsl_eval_cfg_plan(cfg, &model, 16, back, &err) == 0 && back->etp == 2 &&
              back->ep == 4,
          "no --expert-tensor-parallel-size: etp %u (%s)", back->etp, err.msg);
    free(text);
    free(cfg);
    free(back);
    tsl_model_free(&model);
    model = saved;
}

/* Every MoE layer of the model routed as given (model.h "Routing"). */
static void set_router(uint8_t score, uint8_t bias, bool norm, double scale, uint16_t groups,
                       uint16_t topk_groups)
{
    for (uint32_t i = 0; i < model.n_layers; i++) {
        tsl_layer_t *l = &model.layers[i];
        if (!l->experts)
            continue;
        l->router_score = score;
        l->router_bias = bias;
        l->router_norm = norm;
        l->router_scale = scale;
        l->router_groups = groups;
        l->router_topk_groups = topk_groups;
    }
}

/* The router as Megatron-LM's topk_routing_with_score_function (moe_utils.py at
 * d98e8a6) runs it: Mixtral's (softmax over the top 2, renormalised) needs no flag;
 * noaux_tc's sigmoid, bias, scale and groups (top 8 from 4 of 8 groups, each scored
 * by its best 8 / 4 = 2: DeepSeek-V3's) are written; what Megatron-LM's router cannot
 * take is refused naming the field. The form flags: QK-norm, sinks, dropout. */
static void test_megatron_router(void)
{
    tsl_model_t saved = model;
    CHECK(tsl_model_preset("Mixtral-8x7B", &model, NULL) == 0, "Mixtral-8x7B");
    make_plan(&plan, 2, (const uint32_t[]){0, 17, model.n_layers}, 8, "tp2-dp4+sp", 8, 8);
    plan.ep = 4;
    char *text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(!strstr(text, "--moe-router-score") && !strstr(text, "--moe-router-pre") &&
              !strstr(text, "--moe-router-enable") && !strstr(text, "--moe-router-num") &&
              !strstr(text, "--moe-router-topk-scaling") && !strstr(text, "--qk-") &&
              strstr(text, "--attention-dropout 0\n--hidden-dropout 0\n"),
          "mixtral's router and form:\n%s", text);
    free(text);
    /* Mixtral's experts are 8: top 2 of 8 from 1 of 4 groups of 2, scored by the best 2 */
    set_router(TSL_ROUTER_SIGMOID, TSL_ROUTER_BIAS_CHOICE, true, 2.5, 4, 1);
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "--moe-router-score-function sigmoid\n--moe-router-enable-expert-bias\n"
                       "--moe-router-topk-scaling-factor 2.5\n--moe-router-num-groups 4\n"
                       "--moe-router-group-topk 1\n"),
          "noaux_tc:\n%s", text);
    free(text);
    set_router(TSL_ROUTER_SOFTMAX, TSL_ROUTER_BIAS_NONE, false, 0, 0, 0);
    model.qk_norm = TSL_QK_NORM_PER_HEAD;
    model.attn_sinks = true;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "--moe-router-pre-softmax\n") && strstr(text, "--qk-layernorm\n") &&
              strstr(text, "--softmax-type learnable\n"),
          "pre-softmax, QK-norm, sinks:\n%s", text);
    free(text);
    model.attn_sinks = false;
    model.qk_norm = TSL_QK_NORM_FULL;
    expect_refused(TSL_EXPORT_MEGATRON, &plan,
                   "megatron: qk_norm: Mixtral-8x7B normalises Q and K");
    model.qk_norm = TSL_QK_NORM_NONE;
    for (uint32_t i = 0; i < model.n_layers; i++) /* BLOOM's: Megatron-LM has no ALiBi */
        model.layers[i].alibi = model.layers[i].kind == TSL_LAYER_ENCODER;
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "megatron: alibi: Mixtral-8x7B biases its scores");
    for (uint32_t i = 0; i < model.n_layers; i++)
        model.layers[i].alibi = false;
    model.layers[0].embed_norm = true; /* nor an embedding LayerNorm */
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "megatron: alibi: Mixtral-8x7B biases its scores");
    model.layers[0].embed_norm = false;
    set_router(TSL_ROUTER_SIGMOID, TSL_ROUTER_BIAS_NONE, false, 0, 0, 0);
    expect_refused(TSL_EXPORT_MEGATRON, &plan,
                   "megatron: router_norm: Mixtral-8x7B weighs its top-2 sigmoid scores as they "
                   "are; Megatron-LM renormalises them exactly when top-k > 1");
    set_router(TSL_ROUTER_SOFTMAX, TSL_ROUTER_BIAS_CHOICE, true, 0, 0, 0);
    expect_refused(TSL_EXPORT_MEGATRON, &plan,
                   "megatron: router_bias: Mixtral-8x7B corrects softmax");
    /* DeepSeek-V2's group_limited_greedy scores a group by its best score; Megatron-LM
     * sums each group's best top-k / group-topk: the same at 2 / 2 = 1, not at 2 / 1 */
    set_router(TSL_ROUTER_SOFTMAX, TSL_ROUTER_BIAS_NONE, true, 0, 4, 2);
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "--moe-router-num-groups 4\n--moe-router-group-topk 2\n"), "groups:\n%s",
          text);
    free(text);
    set_router(TSL_ROUTER_SOFTMAX, TSL_ROUTER_BIAS_NONE, true, 0, 4, 1);
    expect_refused(TSL_EXPORT_MEGATRON, &plan,
                   "megatron: router_groups: Mixtral-8x7B scores each of its 4 groups by its best "
                   "1 score; Megatron-LM sums the best top-k / group-topk = 2 / 1");
    tsl_model_free(&model);
    model = saved;
}

/* DeepSpeedConfig's batch logic (0.19.6 runtime/config.py,
 * _set_batch_related_parameters and _batch_assertion) on a config's three
 * keys (-1: absent) for a world size; 0 when DeepSpeed accepts them. */
static int deepspeed_batch_check(json_int_t train, json_int_t micro, json_int_t gas,
                                 json_int_t world)
{
    if (train < 0 && micro > 0 && gas > 0)
        train = micro * gas * world;
    else if (train > 0 && micro > 0 && gas < 0)
        gas = train / micro / world;
    else if (train > 0 && gas > 0 && micro < 0)
        micro = train / world / gas;
    return train > 0 && micro > 0 && gas > 0 && train == micro * gas * world ? 0 : -1;
}

static json_int_t key_or_absent(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return v ? json_integer_value(v) : -1;
}

/* AutoTP: DeepSpeed counts every GPU in world_size without an mpu (its
 * tutorial passes none), the TP group's size with one; the export passes both. */
static void test_deepspeed_autotp_batch(void)
{
    make_plan(&plan, 1, (const uint32_t[]){0, 26}, 8, "tp4-dp2", 8, 32);
    plan.grad_reduce_exposed = true; /* ZeRO-0 reduces after the backward */
    char *text = export_ok(TSL_EXPORT_DEEPSPEED, &plan);
    json_t *o = json_loads(text, 0, NULL);
    json_int_t train = key_or_absent(o, "train_batch_size");
    json_int_t micro = key_or_absent(o, "train_micro_batch_size_per_gpu");
    json_int_t gas = key_or_absent(o, "gradient_accumulation_steps");
    CHECK(deepspeed_batch_check(train, micro, gas, 8) == 0 &&
              deepspeed_batch_check(train, micro, gas, 2) == 0 && micro * gas * 2 == 256,
          "autotp: DeepSpeed's batch check with and without an mpu (train %lld, micro %lld, "
          "gas %lld):\n%s",
          (long long)train, (long long)micro, (long long)gas, text);
    json_decref(o);
    free(text);
    make_plan(&plan, 1, (const uint32_t[]){0, 26}, 8, "dp8", 8, 4);
    plan.grad_reduce_exposed = true;
    text = export_ok(TSL_EXPORT_DEEPSPEED, &plan);
    o = json_loads(text, 0, NULL);
    CHECK(deepspeed_batch_check(key_or_absent(o, "train_batch_size"),
                                key_or_absent(o, "train_micro_batch_size_per_gpu"),
                                key_or_absent(o, "gradient_accumulation_steps"), 8) == 0 &&
              key_or_absent(o, "train_batch_size") == 32,
          "dp8: DeepSpeed's batch check:\n%s", text);
    json_decref(o);
    free(text);
}

static void test_deepspeed(void)
{
    const uint32_t cut[] = {0, 26};
    make_plan(&plan, 1, cut, 8, "sdp8", 16, 4);
    for (uint32_t i = 1; i <= 24; i++)
        plan.layer[i].ckpt = true;
    expect_json(TSL_EXPORT_DEEPSPEED, &plan, "gpt2-345m.deepspeed.json");

    const uint32_t cut2[] = {0, 13, 26};
    make_plan(&plan, 2, cut2, 4, "dp4+zero1", 8, 16);
    plan.grad_reduce_exposed = true; /* the pipeline engine reduces after the flush */
    {
        char *text = export_ok(TSL_EXPORT_DEEPSPEED, &plan);
        json_t *o = json_loads(text, 0, NULL);
        CHECK(json_integer_value(json_object_get(json_object_get(o, "pipeline"), "stages")) == 2 &&
                  json_integer_value(json_object_get(o, "train_micro_batch_size_per_gpu")) == 2 &&
                  json_integer_value(json_object_get(o, "gradient_accumulation_steps")) == 16,
              "deepspeed pipeline:\n%s", text);
        json_decref(o);
        free(text);
    }
    make_plan(&plan, 1, cut, 8, "sdp8", 16, 4);
    plan.layer[2].ckpt = true;
    expect_refused(TSL_EXPORT_DEEPSPEED, &plan, "1 of 24 Transformer layers");
    /* a 16-bit .grad reduced in fp32 (grad_buf_bytes 2, grad_reduce_bytes 4): DeepSpeed's
     * communication_data_type fp32 over its bf16 gradients; Megatron-LM's buffer is its
     * reduce's dtype, so refused there by the field's name */
    make_plan(&plan, 2, cut2, 4, "dp4+zero1", 8, 16);
    plan.grad_reduce_exposed = true;
    plan.grad_reduce_bytes = 4;
    plan.grad_buf_bytes = 2;
    {
        char *text = export_ok(TSL_EXPORT_DEEPSPEED, &plan);
        json_t *o = json_loads(text, 0, NULL);
        const char *comm = json_string_value(json_object_get(o, "communication_data_type"));
        CHECK(comm && !strcmp(comm, "fp32"), "deepspeed fp32 reduce over a 16-bit .grad:\n%s",
              text);
        json_decref(o);
        free(text);
    }
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "(grad_buf_bytes)");
    plan.grad_buf_bytes = 4; /* the reduce's own: exported as before */
    free(export_ok(TSL_EXPORT_MEGATRON, &plan));
    plan.grad_reduce_bytes = plan.grad_buf_bytes = 0;
    /* DeepSpeed's ZeRO-0 gradient bucket (ds_grad_bucket): what its engine runs, so the
     * deepspeed export takes it; Megatron-LM and torchtitan reduce their own buffers */
    plan.ds_grad_bucket = true;
    free(export_ok(TSL_EXPORT_DEEPSPEED, &plan));
    expect_refused(TSL_EXPORT_MEGATRON, &plan,
                   "megatron: does not reduce its gradients through DeepSpeed's bucket");
    expect_refused(TSL_EXPORT_TORCHTITAN, &plan, "priced with ds_grad_bucket");
    plan.ds_grad_bucket = false;
    /* FSDP kept unsharded between micro-batches (sdp_nosync): torchtitan's under PP;
     * Megatron-LM's and DeepSpeed's ZeRO-3 reshard every micro-batch */
    plan.sdp_nosync = true;
    expect_refused(TSL_EXPORT_MEGATRON, &plan,
                   "megatron: does not keep its sharded data-parallel level unsharded");
    expect_refused(TSL_EXPORT_DEEPSPEED, &plan, "priced with sdp_nosync");
    plan.sdp_nosync = false;
}

static int deepspeed_zero_stage(const tsl_plan_t *p)
{
    char *text = export_ok(TSL_EXPORT_DEEPSPEED, p);
    json_t *o = json_loads(text, 0, NULL);
    int stage =
        (int)json_integer_value(json_object_get(json_object_get(o, "zero_optimization"), "stage"));
    bool overlap =
        json_is_true(json_object_get(json_object_get(o, "zero_optimization"), "overlap_comm"));
    json_decref(o);
    free(text);
    return overlap ? 10 + stage : stage;
}

/* The same plan (PP 2, DP 4, ZeRO-0, bf16) priced with BF16_Optimizer (ds_bf16_optimizer,
 * as target deepspeed prices it): written as the config DeepSpeed runs it from, bf16 at
 * stage 0 under "pipeline", its .grad added after the backward (immediate_grad_update
 * false), no grad_accum_dtype (bf16, as priced); its ZeRO-1 form (BLOOM's rows) likewise
 * at stage 0. Refused where BF16_Optimizer does not run: fp16, one DP rank, an fp32
 * buffer (stage 0 accumulates in bf16), without stages, and an overlapped reduce. */
static void test_deepspeed_bf16_optimizer(void)
{
    tsl_plan_t saved = plan;
    plan.ds_bf16_optimizer = true;
    char *text = export_ok(TSL_EXPORT_DEEPSPEED, &plan);
    json_t *o = json_loads(text, 0, NULL);
    json_t *bf16 = json_object_get(o, "bf16");
    CHECK(json_is_true(json_object_get(bf16, "enabled")) &&
              json_is_false(json_object_get(bf16, "immediate_grad_update")),
          "bf16 enabled, immediate_grad_update false:\n%s", text);
    CHECK(json_integer_value(json_object_get(json_object_get(o, "zero_optimization"), "stage")) ==
                  0 &&
              json_object_get(json_object_get(o, "zero_optimization"), "overlap_comm") == NULL,
          "ZeRO stage 0, nothing overlapped:\n%s", text);
    CHECK(json_integer_value(json_object_get(json_object_get(o, "pipeline"), "stages")) == 2,
          "a PipelineModule of 2 stages:\n%s", text);
    CHECK(json_object_get(o, "data_types") == NULL && json_object_get(o, "fp16") == NULL,
          "no grad_accum_dtype (the model's bf16), no fp16:\n%s", text);
    json_decref(o);
    free(text);
    uint32_t cut2[] = {0, 13, 26};
    make_plan(&plan, 2, cut2, 4, "dp4+zero1", 8, 16);
    plan.grad_reduce_exposed = plan.ds_bf16_optimizer = true;
    CHECK(deepspeed_zero_stage(&plan) == 0, "its ZeRO-1 form at stage 0 as well");
    plan.fp16 = true;
    expect_refused(TSL_EXPORT_DEEPSPEED, &plan, "under fp16 (FP16_Optimizer runs there)");
    plan.fp16 = false;
    plan.grad_buf_bytes = 4;
    expect_refused(TSL_EXPORT_DEEPSPEED, &plan, "with a 4-byte gradient buffer");
    plan.grad_buf_bytes = 0;
    plan.grad_reduce_exposed = false;
    expect_refused(TSL_EXPORT_DEEPSPEED, &plan, "not under pipeline stages");
    make_plan(&plan, 2, cut2, 1, "single", 8, 16);
    plan.grad_reduce_exposed = plan.ds_bf16_optimizer = true;
    expect_refused(TSL_EXPORT_DEEPSPEED, &plan, "with one data-parallel rank");
    const uint32_t cut[] = {0, 26};
    make_plan(&plan, 1, cut, 8, "dp8", 8, 4);
    plan.grad_reduce_exposed = plan.ds_bf16_optimizer = true;
    expect_refused(TSL_EXPORT_DEEPSPEED, &plan, "without pipeline stages");
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "does not run DeepSpeed's BF16_Optimizer");
    plan = saved;
}

/* The value after launch argument a in the export's megatron_deepspeed.args (NULL:
 * absent; "" for a switch without one). */
static const char *mds_arg(const json_t *o, const char *a)
{
    const json_t *args = json_object_get(json_object_get(o, "megatron_deepspeed"), "args");
    size_t n = json_array_size(args);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(json_string_value(json_array_get(args, i)), a)) {
            const char *next = i + 1 < n ? json_string_value(json_array_get(args, i + 1)) : "";
            return strncmp(next, "--", 2) ? next : "";
        }
    return NULL;
}

/* TP beside pipeline stages (cost model 101): Megatron-DeepSpeed's GPTModelPipe under
 * DeepSpeed's pipeline engine (bigscience-workshop/Megatron-DeepSpeed, BLOOM's launch).
 * The config has its mpu's batch (train_batch_size over the data-parallel ranks, the
 * world size DeepSpeed sees from the PipelineModule's grid), no AutoTP, and the launch
 * arguments under "megatron_deepspeed": the layout, the cut the target's equal layer
 * counts make ('type:transformer|embedding'), the model, the recompute as priced (no
 * --partition-activations); a TP-free plan's export is as before. Refused by name:
 * what the fork does not run. */
static void test_deepspeed_pipe_tp(void)
{
    const uint32_t cut[] = {0, 13, 26};
    make_plan(&plan, 2, cut, 4, "tp2-dp2+zero1", 8, 8);
    plan.grad_reduce_exposed = true; /* the pipeline engine reduces after the flush */
    plan.legacy_p2p = true;          /* PartitionedTensor over TP, as --target prices it */
    char *text = export_ok(TSL_EXPORT_DEEPSPEED, &plan);
    json_t *o = json_loads(text, 0, NULL);
    json_int_t train = key_or_absent(o, "train_batch_size");
    json_int_t micro = key_or_absent(o, "train_micro_batch_size_per_gpu");
    json_int_t gas = key_or_absent(o, "gradient_accumulation_steps");
    const json_t *mds = json_object_get(o, "megatron_deepspeed");
    CHECK(train == 64 && deepspeed_batch_check(train, micro, gas, 2) == 0 &&
              !json_object_get(o, "tensor_parallel") &&
              !strcmp(json_string_value(json_object_get(mds, "repository")),
                      "bigscience-workshop/Megatron-DeepSpeed") &&
              !strcmp(json_string_value(json_object_get(mds, "script")), "pretrain_gpt.py"),
          "tp x pp: the mpu's batch, no AutoTP:\n%s", text);
    static const char *const want[][2] = {{"--tensor-model-parallel-size", "2"},
                                          {"--pipeline-model-parallel-size", "2"},
                                          {"--pp-partition-method", "type:transformer|embedding"},
                                          {"--micro-batch-size", "4"},
                                          {"--global-batch-size", "64"},
                                          {"--num-layers", "24"},
                                          {"--hidden-size", "1024"},
                                          {"--num-attention-heads", "16"},
                                          {"--seq-length", "1024"},
                                          {"--bf16", ""},
                                          {"--zero-stage", "1"},
                                          {"--deepspeed", ""},
                                          {"--deepspeed_config", "ds_config.json"}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const char *got = mds_arg(o, want[i][0]);
        CHECK(got && !strcmp(got, want[i][1]), "%s %s:\n%s", want[i][0], want[i][1], text);
    }
    CHECK(!mds_arg(o, "--checkpoint-activations") && !mds_arg(o, "--position-embedding-type"),
          "no recompute, learned positions:\n%s", text);
    json_decref(o);
    free(text);
    for (uint32_t i = 1; i <= 24; i++)
        plan.layer[i].ckpt = true;
    text = export_ok(TSL_EXPORT_DEEPSPEED, &plan);
    o = json_loads(text, 0, NULL);
    CHECK(mds_arg(o, "--checkpoint-activations") &&
              mds_arg(o, "--deepspeed-activation-checkpointing") &&
              !mds_arg(o, "--partition-activations") &&
              json_integer_value(json_object_get(json_object_get(o, "pipeline"),
                                                 "activation_checkpoint_interval")) == 1,
          "every block recomputed, whole on every TP rank:\n%s", text);
    json_decref(o);
    free(text);
    plan.overlap_tp_dgrad = true;
    expect_refused(TSL_EXPORT_DEEPSPEED, &plan, "overlap_tp_dgrad");
    plan.overlap_tp_dgrad = false;
    plan.legacy_p2p = false;
    expect_refused(TSL_EXPORT_DEEPSPEED, &plan, "--legacy-p2p");
    /* cost model 104: four stages of GPT2-345M's 24 blocks, 6 each, the embedding and
     * head beside the end stages' (7, 6, 6, 7 of 26 layers), are DeepSpeed's
     * 'type:transformer' cut (the fork's GPTModelPipe default): written with that method,
     * in the config and the launch; a block moved off it is refused naming both cuts */
    const uint32_t cut4[] = {0, 7, 13, 19, 26};
    make_plan(&plan, 4, cut4, 4, "tp2-dp2+zero1", 8, 8);
    plan.grad_reduce_exposed = plan.legacy_p2p = true;
    text = export_ok(TSL_EXPORT_DEEPSPEED, &plan);
    o = json_loads(text, 0, NULL);
    CHECK(
        !strcmp(mds_arg(o, "--pp-partition-method"), "type:transformer") &&
            !strcmp(mds_arg(o, "--pipeline-model-parallel-size"), "4") &&
            !strcmp(json_string_value(json_object_get(json_object_get(o, "pipeline"), "partition")),
                    "type:transformer"),
        "the type:transformer cut:\n%s", text);
    json_decref(o);
    free(text);
    const uint32_t off4[] = {0, 8, 13, 19, 26};
    make_plan(&plan, 4, off4, 4, "tp2-dp2+zero1", 8, 8);
    plan.grad_reduce_exposed = plan.legacy_p2p = true;
    expect_refused(TSL_EXPORT_DEEPSPEED, &plan, "stage 0 holds 7 of 24 Transformer layers");
    make_plan(&plan, 4, cut4, 4, "dp4+zero1", 8, 16);
    plan.grad_reduce_exposed = true;
    text = export_ok(TSL_EXPORT_DEEPSPEED, &plan);
    CHECK(strstr(text, "\"partition\": \"type:transformer\"") &&
              !strstr(text, "megatron_deepspeed"),
          "a TP-free type:transformer pipeline:\n%s", text);
    free(text);
    /* cost model 111: five stages of the 24 blocks, which 5 divides as it does not the 26
     * layers, are DeepSpeed's uneven 'type:transformer' cut, partition_balanced's 5, 5, 5,
     * 5, 4 blocks (6, 5, 5, 5, 5 layers: runtime/utils.py at edaa722), refused before:
     * written with that method; the blocks the other way round are no cut of DeepSpeed's,
     * refused naming the stage and the count it gets */
    const uint32_t cut5[] = {0, 6, 11, 16, 21, 26}, off5[] = {0, 5, 10, 15, 20, 26};
    make_plan(&plan, 5, cut5, 4, "tp2-dp2+zero1", 8, 8);
    plan.grad_reduce_exposed = plan.legacy_p2p = true;
    text = export_ok(TSL_EXPORT_DEEPSPEED, &plan);
    o = json_loads(text, 0, NULL);
    CHECK(
        !strcmp(mds_arg(o, "--pp-partition-method"), "type:transformer") &&
            !strcmp(mds_arg(o, "--pipeline-model-parallel-size"), "5") &&
            !strcmp(json_string_value(json_object_get(json_object_get(o, "pipeline"), "partition")),
                    "type:transformer"),
        "the uneven type:transformer cut:\n%s", text);
    json_decref(o);
    free(text);
    make_plan(&plan, 5, off5, 4, "tp2-dp2+zero1", 8, 8);
    plan.grad_reduce_exposed = plan.legacy_p2p = true;
    expect_refused(TSL_EXPORT_DEEPSPEED, &plan,
                   "stage 0 holds 4 of 24 Transformer layers, where 'type:transformer' gives it 5 "
                   "(DeepSpeed's balanced cut");
    /* a TP-free pipeline and AutoTP without stages: no launch arguments */
    make_plan(&plan, 2, cut, 4, "dp4+zero1", 8, 16);
    plan.grad_reduce_exposed = true;
    text = export_ok(TSL_EXPORT_DEEPSPEED, &plan);
    CHECK(!strstr(text, "megatron_deepspeed"), "dp4 pipeline:\n%s", text);
    free(text);
    make_plan(&plan, 1, (const uint32_t[]){0, 26}, 8, "tp4-dp2", 8, 32);
    plan.grad_reduce_exposed = true;
    text = export_ok(TSL_EXPORT_DEEPSPEED, &plan);
    CHECK(strstr(text, "autotp_size") && !strstr(text, "megatron_deepspeed"), "autotp:\n%s", text);
    free(text);

    /* BLOOM: ALiBi and the embedding LayerNorm as the fork's switches */
    tsl_model_t saved = model;
    CHECK(tsl_model_preset("BLOOM-7B1", &model, NULL) == 0 && model.n_layers == 32, "BLOOM-7B1");
    make_plan(&plan, 2, (const uint32_t[]){0, 16, 32}, 8, "tp4-dp2+zero1", 4, 16);
    plan.grad_reduce_exposed = plan.legacy_p2p = true;
    text = export_ok(TSL_EXPORT_DEEPSPEED, &plan);
    o = json_loads(text, 0, NULL);
    const char *pos = mds_arg(o, "--position-embedding-type");
    CHECK(pos && !strcmp(pos, "alibi") && mds_arg(o, "--embed-layernorm") &&
              !strcmp(mds_arg(o, "--num-layers"), "30"),
          "BLOOM's form:\n%s", text);
    json_decref(o);
    free(text);
    restore_model(&saved);
    /* Llama's RMSNorm, no biases, GQA: GPTModelPipe of the fork builds none */
    saved = model;
    CHECK(tsl_model_preset("Llama3-8B", &model, NULL) == 0 && model.n_layers == 34, "Llama3-8B");
    make_plan(&plan, 2, (const uint32_t[]){0, 17, 34}, 8, "tp4-dp2+zero1", 4, 16);
    plan.grad_reduce_exposed = plan.legacy_p2p = true;
    expect_refused(TSL_EXPORT_DEEPSPEED, &plan, "has RMSNorm (rms_norm)");
    set_layers(&plan, 0, plan.n_layers, "dp8+zero1"); /* without TP: the caller's model code */
    plan.micro_batch = 8;
    plan.global_batch = 128;
    free(export_ok(TSL_EXPORT_DEEPSPEED, &plan));
    restore_model(&saved);
}

/* What DeepSpeed's engine makes of the config (runtime/engine.py, runtime/pipe/engine.py
 * at edaa722): bf16 at ZeRO stage 0 under a PipelineModule runs BF16_Optimizer, and
 * overlap_comm is a ZeRO-1/2 setting the pipeline engine turns off. The export wrote
 * those as priced before; now it refuses them, or writes what runs as priced. */
static void test_deepspeed_engine(void)
{
    const uint32_t cut2[] = {0, 13, 26};
    make_plan(&plan, 2, cut2, 4, "dp4", 8, 16);
    plan.grad_reduce_exposed = true;
    expect_refused(TSL_EXPORT_DEEPSPEED, &plan, "runs DeepSpeed's BF16_Optimizer");
    test_deepspeed_bf16_optimizer();
    plan.fp32 = plan.tf32_off = true; /* fp32: the plain optimizer, as priced */
    CHECK(deepspeed_zero_stage(&plan) == 0, "fp32 pipeline at ZeRO-0");
    plan.fp32 = plan.tf32_off = false;
    /* one data-parallel rank: ZeRO-1 holds the same states and reduces nothing */
    make_plan(&plan, 2, cut2, 1, "single", 8, 16);
    plan.grad_reduce_exposed = true;
    CHECK(deepspeed_zero_stage(&plan) == 1, "bf16 pipeline of one DP rank at ZeRO-1");
    /* a DP reduce priced under the backward: not under stages, not at ZeRO-0 */
    make_plan(&plan, 2, cut2, 4, "dp4+zero1", 8, 16);
    expect_refused(TSL_EXPORT_DEEPSPEED, &plan, "not under pipeline stages");
    const uint32_t cut[] = {0, 26};
    make_plan(&plan, 1, cut, 8, "dp8", 8, 4);
    expect_refused(TSL_EXPORT_DEEPSPEED, &plan, "only with ZeRO stage 1 or 2");
    plan.grad_reduce_exposed = true;
    CHECK(deepspeed_zero_stage(&plan) == 0, "ZeRO-0, reduced after the backward");
    make_plan(&plan, 1, cut, 8, "dp8+zero1", 8, 4);
    CHECK(deepspeed_zero_stage(&plan) == 11, "ZeRO-1 overlapped: overlap_comm");
    make_plan(&plan, 1, cut, 8, "sdp8", 8, 4); /* ZeRO-3's own overlap, priced either way */
    CHECK(deepspeed_zero_stage(&plan) == 3, "ZeRO-3");
}

/* FSDP2 under stages (sdp_nosync, docs/cost-model.md "SDP without resharding"): a plan
 * so priced names torchtitan's "default" reshard policy, which keeps the blocks
 * unsharded under PP, in both forms, and reads back so; one priced resharding every
 * micro-batch says torchtitan runs otherwise. One stage: "default" (resharded after
 * every forward, as ZeRO-3 is priced), and "never" for a plan priced keeping each
 * block's weights to its backward (sdp_keep_weights), read back to it. */
static void test_torchtitan_reshard(void)
{
    tsl_plan_t saved = plan;
    plan.sdp_nosync = true;
    char *py = export_ok(TSL_EXPORT_TORCHTITAN, &plan);
    char *toml = export_ok(TSL_EXPORT_TORCHTITAN_TOML, &plan);
    CHECK(strstr(py, "    par.fsdp_reshard_after_forward = \"default\"\n") != NULL,
          "python: the default policy:\n%s", py);
    CHECK(strstr(toml, "\nfsdp_reshard_after_forward = \"default\"\n") != NULL,
          "toml: the default policy:\n%s", toml);
    tsl_eval_cfg_t *cfg = calloc(1, sizeof *cfg);
    tsl_plan_t *back = calloc(1, sizeof *back);
    tsl_err_t err = {0};
    for (int i = 0; i < 2; i++) {
        const char *text = i ? toml : py;
        CHECK(cfg && back && tsl_eval_cfg_torchtitan(text, cfg, &err) == 0 &&
                  cfg->knobs.sdp_nosync &&
                  tsl_eval_cfg_plan(cfg, &model, plan.n_devices, back, &err) == 0 &&
                  back->pp == 2 && back->sdp_nosync,
              "read back with sdp_nosync: %s\n%s", err.msg, text);
    }
    free(py);
    free(toml);
    plan.sdp_nosync = false;
    py = export_ok(TSL_EXPORT_TORCHTITAN, &plan);
    CHECK(!strstr(py, "fsdp_reshard_after_forward =") &&
              strstr(py, "# priced with FSDP resharding and reduce-scattering every micro-batch"),
          "python: priced as ZeRO-3 under PP:\n%s", py);
    free(py);
    plan.sdp_keep_weights = true; /* under stages torchtitan's "never" is sdp_nosync */
    expect_refused(TSL_EXPORT_TORCHTITAN, &plan, "sdp_keep_weights under pipeline stages");
    plan.sdp_keep_weights = false;
    make_plan(&plan, 1, (const uint32_t[]){0, 26}, 8, "sdp8", 16, 2);
    plan.sdp_nosync = true; /* not recorded at PP 1 by a search: "default" all the same */
    py = export_ok(TSL_EXPORT_TORCHTITAN, &plan);
    CHECK(strstr(py, "    par.fsdp_reshard_after_forward = \"default\"\n") &&
              !strstr(py, "priced with FSDP"),
          "python: one stage, the default policy:\n%s", py);
    CHECK(tsl_eval_cfg_torchtitan(py, cfg, &err) == 0 &&
              tsl_eval_cfg_plan(cfg, &model, plan.n_devices, back, &err) == 0 &&
              !back->sdp_nosync && !back->sdp_keep_weights,
          "one stage read back without sdp_nosync: %s", err.msg);
    free(py);
    plan.sdp_nosync = false;
    plan.sdp_keep_weights = true; /* torchtitan's "never" without PP */
    py = export_ok(TSL_EXPORT_TORCHTITAN, &plan);
    toml = export_ok(TSL_EXPORT_TORCHTITAN_TOML, &plan);
    CHECK(strstr(py, "    par.fsdp_reshard_after_forward = \"never\"\n") != NULL,
          "python: never:\n%s", py);
    CHECK(strstr(toml, "\nfsdp_reshard_after_forward = \"never\"\n") != NULL, "toml: never:\n%s",
          toml);
    for (int i = 0; i < 2; i++) {
        const char *text = i ? toml : py;
        CHECK(tsl_eval_cfg_torchtitan(text, cfg, &err) == 0 && cfg->knobs.sdp_keep_weights &&
                  tsl_eval_cfg_plan(cfg, &model, plan.n_devices, back, &err) == 0 &&
                  back->pp == 1 && back->sdp_keep_weights && !back->sdp_nosync,
              "read back with sdp_keep_weights: %s\n%s", err.msg, text);
    }
    free(py);
    free(toml);
    free(cfg);
    free(back);
    plan = saved;
}

/* fp16 mixed precision (plan.fp16, cost model 89: asked, or on GPUs without bf16):
 * megatron --fp16 (its dynamic loss scaler's defaults) with the fp32 reduce it was
 * priced with; deepspeed's "fp16" section, dynamic (loss_scale 0), no bf16; torchtitan
 * has no fp16 path and galvatron's strategy file no precision: both refused */
static void test_fp16(void)
{
    const uint32_t cut[] = {0, 13, 26};
    make_plan(&plan, 2, cut, 4, "tp2-dp2", 8, 16);
    plan.fp16 = true;
    plan.grad_reduce_bytes = 4;
    plan.opt_step = TSL_OPT_STEP_MEGATRON_CORE_FP16;
    char *text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "\n--fp16\n") && !strstr(text, "--bf16") &&
              strstr(text, "\n--accumulate-allreduce-grads-in-fp32\n"),
          "megatron fp16:\n%s", text);
    free(text);
    make_plan(&plan, 2, cut, 4, "dp4", 8, 16);
    plan.fp16 = true;
    plan.grad_reduce_exposed = true; /* DeepSpeed's pipeline reduces after the flush */
    text = export_ok(TSL_EXPORT_DEEPSPEED, &plan);
    json_t *o = json_loads(text, 0, NULL);
    json_t *f = o ? json_object_get(o, "fp16") : NULL;
    CHECK(f && json_is_true(json_object_get(f, "enabled")) &&
              json_integer_value(json_object_get(f, "loss_scale")) == 0 &&
              !json_object_get(o, "bf16"),
          "deepspeed fp16 section:\n%s", text);
    json_decref(o);
    free(text);
    make_plan(&plan, 2, (const uint32_t[]){0, 11, 26}, 4, "tp2-sdp2+sp", 4, 8);
    plan.fp16 = true;
    expect_refused(TSL_EXPORT_TORCHTITAN, &plan,
                   "torchtitan: trains in bf16 or fp32 (mixed_precision_param, no loss scaler); "
                   "the plan was priced with fp16 mixed precision: plan it again with --fp32");
    make_plan(&plan, 2, cut, 4, "tp2-dp2", 8, 4);
    plan.fp16 = true;
    expect_refused(TSL_EXPORT_GALVATRON, &plan,
                   "galvatron: its strategy file carries no precision");
    plan.fp16 = false;
}

/* A plan priced for Megatron-LM on a GPU older than Ampere (plan.stack_unfused_attn, cost
 * model 91): --transformer-impl local (Megatron-LM's DotProductAttention, the unfused core it
 * was priced with), RoPE's TE fusion not asked for a model with learned positions; what only
 * Transformer Engine runs (its userbuffers, CP) refused, naming it; a plan without the flag
 * writes no --transformer-impl (Megatron-LM's default, TE) */
static void test_local_impl(void)
{
    const uint32_t cut[] = {0, 13, 26};
    make_plan(&plan, 2, cut, 4, "tp2-dp2", 8, 16);
    plan.fp16 = true;
    char *text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(!strstr(text, "--transformer-impl"), "megatron without stack_unfused_attn:\n%s", text);
    free(text);
    plan.stack_unfused_attn = true;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "\n--fp16\n--transformer-impl local\n") && !strstr(text, "--no-rope-fusion"),
          "megatron local impl:\n%s", text);
    free(text);
    /* the unfused core on a GPU TE runs on (--unfused-attn): TE's unfused backend asked
     * for, as its fused one would run by default; under the local impl not needed */
    for (uint32_t i = 0; i < model.n_layers; i++)
        model.layers[i].unfused_attn = true;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(!strstr(text, "--attention-backend"), "local impl with a backend:\n%s", text);
    free(text);
    plan.stack_unfused_attn = false;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "\n--attention-backend unfused\n") && !strstr(text, "--transformer-impl"),
          "megatron --unfused-attn on TE:\n%s", text);
    /* read back by eval --megatron-args as the unfused core it was priced with (the
     * flag read as no effect, the line priced with the fused kernel), and its --fp16
     * as the step an fp16 plan under megatron prices (megatron-core-fp16) */
    tsl_eval_cfg_t *cfg = malloc(sizeof *cfg);
    tsl_err_t err = {0};
    CHECK(cfg && tsl_eval_cfg_megatron(text, cfg, &err) == 0 && cfg->unfused_attn &&
              cfg->knobs.fp16 && cfg->knobs.opt_step == TSL_OPT_STEP_MEGATRON_CORE_FP16,
          "read back: %s\n%s", err.msg, text);
    free(cfg);
    free(text);
    for (uint32_t i = 0; i < model.n_layers; i++)
        model.layers[i].unfused_attn = false;
    plan.stack_unfused_attn = true;
    plan.tp_comm_overlap = true;
    expect_refused(TSL_EXPORT_MEGATRON, &plan,
                   "megatron: tp_comm_overlap runs in Transformer Engine, which does not run on a "
                   "GPU older than Ampere");
    plan.tp_comm_overlap = false;
    plan.cp = 2;
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "megatron: cp runs in Transformer Engine");
    plan.cp = 0;
    plan.stack_unfused_attn = plan.fp16 = false;
}

/* fp32 training (plan.fp32, cost model 63; priced without TF32, tf32_off, cost model 69):
 * megatron writes neither --bf16 nor --fp16
 * (Megatron-LM's params_dtype stays torch.float, arguments.py at d98e8a6) and no bf16
 * reduce; deepspeed no bf16 section (its fp32 default); torchtitan mixed_precision_param
 * "float32" (TrainingConfig; v0.2.x's Training); galvatron's strategy file carries no
 * precision: refused naming it */
static void test_fp32(void)
{
    const uint32_t cut[] = {0, 13, 26};
    make_plan(&plan, 2, cut, 4, "tp2-dp2", 8, 16);
    plan.fp32 = plan.tf32_off = true;
    char *text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(!strstr(text, "--bf16") && !strstr(text, "--fp16") &&
              !strstr(text, "--grad-reduce-in-bf16"),
          "megatron fp32: no 16-bit flag:\n%s", text);
    /* read back (eval --megatron-args): neither flag is fp32, without TF32 (cost model 69) */
    tsl_eval_cfg_t *cfg = calloc(1, sizeof *cfg);
    tsl_err_t err = {0};
    CHECK(cfg && tsl_eval_cfg_megatron(text, cfg, &err) == 0 && cfg->knobs.fp32 &&
              cfg->knobs.tf32_off && cfg->knobs.grad_reduce_bytes == 4,
          "megatron fp32 read back: %s", err.msg);
    free(text);
    make_plan(&plan, 2, cut, 4, "dp4", 8, 16);
    plan.fp32 = plan.tf32_off = true;
    plan.grad_reduce_exposed = true; /* the pipeline engine reduces after the flush */
    text = export_ok(TSL_EXPORT_DEEPSPEED, &plan);
    json_t *o = json_loads(text, 0, NULL);
    CHECK(o && !json_object_get(o, "bf16") && !json_object_get(o, "fp16"),
          "deepspeed fp32: no bf16/fp16 section:\n%s", text);
    json_decref(o);
    free(text);
    make_plan(&plan, 2, (const uint32_t[]){0, 11, 26}, 4, "tp2-sdp2+sp", 4, 8);
    plan.fp32 = plan.tf32_off = true;
    text = export_ok(TSL_EXPORT_TORCHTITAN_TOML, &plan);
    CHECK(strstr(text, "[training]\n") && strstr(text, "\nmixed_precision_param = \"float32\"\n"),
          "torchtitan toml fp32:\n%s", text);
    CHECK(tsl_eval_cfg_torchtitan(text, cfg, &err) == 0 && cfg->knobs.fp32 && cfg->knobs.tf32_off,
          "torchtitan toml fp32 read back: %s", err.msg);
    free(text);
    text = export_ok(TSL_EXPORT_TORCHTITAN, &plan);
    CHECK(strstr(text, "    config.training.mixed_precision_param = \"float32\"\n") != NULL,
          "torchtitan fp32:\n%s", text);
    CHECK(tsl_eval_cfg_torchtitan(text, cfg, &err) == 0 && cfg->knobs.fp32 && cfg->knobs.tf32_off,
          "torchtitan fp32 read back: %s", err.msg);
    free(cfg);
    free(text);
    make_plan(&plan, 2, cut, 4, "tp2-dp2", 8, 4);
    plan.fp32 = plan.tf32_off = true;
    expect_refused(TSL_EXPORT_GALVATRON, &plan,
                   "galvatron: its strategy file carries no precision");
    plan.fp32 = plan.tf32_off = false;
    /* cost model 69: a plan priced with TF32 GEMMs (no tf32_off: planned without the
     * target) is refused by each stack, which runs them without it */
    make_plan(&plan, 2, cut, 4, "tp2-dp2", 8, 16);
    plan.fp32 = true;
    expect_refused(TSL_EXPORT_MEGATRON, &plan,
                   "megatron: runs fp32 matmuls without TF32 (PyTorch's allow_tf32 is off since "
                   "1.12 and the stack turns it on nowhere); the plan was priced with TF32 "
                   "GEMMs: plan it again with --target megatron");
    expect_refused(TSL_EXPORT_DEEPSPEED, &plan, "plan it again with --target deepspeed");
    /* --tf32: the script turns TF32 on; taken, megatron and torchtitan saying so in a
     * comment, deepspeed's JSON with none (tesselctl notes it: tsl_export_tf32) */
    plan.tf32 = true;
    char *t32 = export_ok(TSL_EXPORT_MEGATRON, &plan), note[512];
    CHECK(strstr(t32, "\n# TF32: the plan runs fp32 matmuls as TF32 (--tf32), which no setting "
                      "of this stack turns on") &&
              strstr(t32, "set torch.backends.cuda.matmul.allow_tf32 = True in the training "
                          "script"),
          "megatron tf32: the comment:\n%s", t32);
    free(t32);
    make_plan(&plan, 2, cut, 4, "dp4", 8, 16);
    plan.fp32 = plan.tf32 = plan.grad_reduce_exposed = true;
    t32 = export_ok(TSL_EXPORT_DEEPSPEED, &plan);
    json_t *ds = json_loads(t32, 0, NULL);
    CHECK(ds != NULL, "deepspeed tf32: its JSON:\n%s", t32);
    json_decref(ds);
    free(t32);
    CHECK(tsl_export_tf32(&plan, note, sizeof note) > 0 && strstr(note, "TF32: "), "the note");
    plan.fp32 = false;
    CHECK(tsl_export_tf32(&plan, note, sizeof note) == 0 && note[0] == '\0',
          "no note without fp32");
    plan.tf32 = false;
    make_plan(&plan, 2, (const uint32_t[]){0, 11, 26}, 4, "tp2-sdp2+sp", 4, 8);
    plan.fp32 = plan.tf32 = true;
    t32 = export_ok(TSL_EXPORT_TORCHTITAN, &plan);
    CHECK(strstr(t32, "# TF32: the plan runs fp32 matmuls as TF32") != NULL,
          "torchtitan tf32: the comment:\n%s", t32);
    free(t32);
    plan.fp32 = plan.tf32 = false;
}

/* The Python form as torchtitan main (b5bcd76c6) takes it, its configuration classes
 * being slots dataclasses (an unknown attribute raises): AsyncTP is CompileConfig's
 * since 737594746, CP runs only as FlexAttention over all-gathered K/V (the ring's
 * rotate method removed in 8e5554449: refused; the TOML for v0.2.x keeps it), and
 * MXFP8LinearConverter takes an include list, fqns (no filter_fqns). */
static void test_torchtitan_main(void)
{
    make_plan(&plan, 1, (const uint32_t[]){0, 26}, 8, "tp2-sdp4+sp", 4, 4);
    plan.async_tp = true;
    char *py = export_ok(TSL_EXPORT_TORCHTITAN, &plan);
    CHECK(strstr(py, "    config.compile.enable = True\n"
                     "    config.compile.enable_async_tensor_parallel = True\n") &&
              !strstr(py, "par.enable_async_tensor_parallel"),
          "async TP is CompileConfig's:\n%s", py);
    tsl_eval_cfg_t *cfg = calloc(1, sizeof *cfg);
    tsl_err_t err = {0};
    CHECK(cfg && tsl_eval_cfg_torchtitan(py, cfg, &err) == 0 && cfg->knobs.async_tp,
          "read back as async_tp: %s", err.msg);
    free(py);
    char *toml = export_ok(TSL_EXPORT_TORCHTITAN_TOML, &plan);
    CHECK(strstr(toml, "\nenable_async_tensor_parallel = true\n") != NULL,
          "v0.2.x: [parallelism] enable_async_tensor_parallel:\n%s", toml);
    free(toml);
    plan.async_tp = false;
    /* CP: refused by the Python form, written by the TOML form with its rotation */
    plan.cp = 2;
    plan.cp_comm = TSL_CP_P2P;
    expect_refused(TSL_EXPORT_TORCHTITAN, &plan,
                   "torchtitan: context parallelism (cp 2): torchtitan main runs it only "
                   "through FlexAttention");
    toml = export_ok(TSL_EXPORT_TORCHTITAN_TOML, &plan);
    CHECK(strstr(toml, "context_parallel_degree = 2\ncontext_parallel_rotate_method = "
                       "\"alltoall\"\n") != NULL,
          "v0.2.x: the ring's rotation:\n%s", toml);
    free(toml);
    plan.cp = 0;
    /* MXFP8: the block linears named (fqns), lm_head left bf16; compile as priced */
    plan.fp8_recipe = TSL_FP8_MXFP8;
    plan.fp8_impl = TSL_FP8_IMPL_TORCHAO;
    py = export_ok(TSL_EXPORT_TORCHTITAN, &plan);
    CHECK(strstr(py, "MXFP8LinearConverter.Config(\n        fqns=[\"attention\", "
                     "\"feed_forward\", \"shared_experts\"],\n        "
                     "model_compile_enabled=True,\n") &&
              !strstr(py, "filter_fqns"),
          "MXFP8 linears by fqns:\n%s", py);
    CHECK(cfg && tsl_eval_cfg_torchtitan(py, cfg, &err) == 0 && cfg->knobs.fp8 == TSL_FP8_MXFP8,
          "read back as mxfp8: %s", err.msg);
    free(py);
    plan.fp8_recipe = TSL_FP8_TENSORWISE;
    py = export_ok(TSL_EXPORT_TORCHTITAN, &plan);
    CHECK(strstr(py, "Float8LinearConverter.Config(\n        filter_fqns=[\"lm_head\"],\n        "
                     "model_compile_enabled=True,\n") != NULL,
          "Float8 linears:\n%s", py);
    free(py);
    plan.fp8_recipe = TSL_FP8_NONE;
    plan.fp8_impl = 0;
    free(cfg);
    /* an HF config's file name (qwen3_30b_a3b) is torchtitan's qwen3_30b_a3b */
    tsl_model_t gpt2;
    use_hf("qwen3_30b_a3b.json", &gpt2);
    snprintf(model.name, sizeof model.name, "qwen3_30b_a3b");
    const uint32_t cut[] = {0, model.n_layers};
    make_plan(&plan, 1, cut, 8, "sdp8", 8, 4);
    plan.ep = 8;
    py = export_ok(TSL_EXPORT_TORCHTITAN, &plan);
    CHECK(strstr(py, "from torchtitan.models.qwen3.config_registry import qwen3_30b_a3b as "
                     "base_config\n") != NULL,
          "qwen3_30b_a3b's base configuration:\n%s", py);
    free(py);
    restore_model(&gpt2);
}

/* An interleaved plan goes to torchtitan as Interleaved1F1B (torchtitan b5bcd76c6
 * distributed/pipeline_parallel.py: module_fqns_per_model_part one list a virtual
 * stage, part q on rank q mod pp, style "loop"): 2 stages of 13 layers in 2 chunks
 * each, the 4 parts in model order, part j·2 + r stage r's chunk j — the
 * embedding and 6 blocks, 6, 6, 6 and the head — and v0.1.0's split points at every
 * part; read back by eval as the same interleaved plan. A count of micro-batches
 * torch's schedule raises for is refused by name. */
static void test_torchtitan_interleaved(void)
{
    const uint32_t cut[] = {0, 13, 26};
    make_plan(&plan, 2, cut, 4, "tp2-sdp2+sp", 4, 8);
    plan.sdp_nosync = true;
    plan.interleave = 2;
    char *toml = export_ok(TSL_EXPORT_TORCHTITAN_TOML, &plan);
    /* priced with the hops hidden (no torch_pipelining): said; priced as torch runs it: not */
    CHECK(strstr(toml, "# note: the plan was priced with the interleaved exchanges hidden"),
          "the hidden hops noted:\n%s", toml);
    free(toml);
    plan.torch_pipelining = true;
    toml = export_ok(TSL_EXPORT_TORCHTITAN_TOML, &plan);
    CHECK(!strstr(toml, "exchanges hidden"), "priced blocking, no note:\n%s", toml);
    CHECK(strstr(toml,
                 "\nmodule_fqns_per_model_part = [[\"tok_embeddings\", \"layers.0\", "
                 "\"layers.1\", \"layers.2\", \"layers.3\", \"layers.4\", \"layers.5\"], "
                 "[\"layers.6\", \"layers.7\", \"layers.8\", \"layers.9\", \"layers.10\", "
                 "\"layers.11\"], [\"layers.12\", \"layers.13\", \"layers.14\", \"layers.15\", "
                 "\"layers.16\", \"layers.17\"], [\"layers.18\", \"layers.19\", \"layers.20\", "
                 "\"layers.21\", \"layers.22\", \"layers.23\", \"norm\", \"output\"]]\n") &&
              strstr(toml, "\npipeline_parallel_schedule = \"Interleaved1F1B\"\n") &&
              strstr(toml, "# pipeline_parallel_split_points = [\"layers.6\", \"layers.12\", "
                           "\"layers.18\"]\n"),
          "Interleaved1F1B's 4 parts:\n%s", toml);
    tsl_eval_cfg_t *cfg = calloc(1, sizeof *cfg);
    static tsl_plan_t back;
    tsl_err_t err = {0};
    CHECK(cfg && tsl_eval_cfg_torchtitan(toml, cfg, &err) == 0 &&
              tsl_eval_cfg_plan(cfg, &model, 8, &back, &err) == 0,
          "read back: %s", err.msg);
    CHECK(back.pp == 2 && back.interleave == 2 && back.n_micro == 8 &&
              back.stages[1].first_layer == 13 && back.stages[1].n_layers == 13,
          "read back: pp %u v %u m %u, stage 1 [%u, +%u)", back.pp, back.interleave, back.n_micro,
          back.stages[1].first_layer, back.stages[1].n_layers);
    free(toml);
    char *py = export_ok(TSL_EXPORT_TORCHTITAN, &plan);
    CHECK(
        strstr(py, "    par.pipeline_parallel_schedule = \"Interleaved1F1B\"\n"
                   "    par.num_pp_microbatches = 8\n") &&
            strstr(py,
                   "    par.module_fqns_per_model_part = [\n        [\"tok_embeddings\", "
                   "\"layers.0\", \"layers.1\", \"layers.2\", \"layers.3\", \"layers.4\", "
                   "\"layers.5\"],\n        [\"layers.6\", \"layers.7\", \"layers.8\", "
                   "\"layers.9\", \"layers.10\", \"layers.11\"],\n        [\"layers.12\", "
                   "\"layers.13\", \"layers.14\", \"layers.15\", \"layers.16\", \"layers.17\"],\n  "
                   "      [\"layers.18\", \"layers.19\", \"layers.20\", \"layers.21\", "
                   "\"layers.22\", \"layers.23\", \"norm\", \"lm_head\"],\n    ]\n"),
        "python: Interleaved1F1B's 4 parts:\n%s", py);
    memset(cfg, 0, sizeof *cfg);
    CHECK(tsl_eval_cfg_torchtitan(py, cfg, &err) == 0 &&
              tsl_eval_cfg_plan(cfg, &model, 8, &back, &err) == 0 && back.interleave == 2 &&
              back.stages[1].first_layer == 13,
          "python read back: v %u: %s", back.interleave, err.msg);
    free(py);
    free(cfg);
    plan.n_micro = 5, plan.global_batch = 20; /* 2 rounds of 2: torch raises */
    expect_refused(TSL_EXPORT_TORCHTITAN, &plan, "ScheduleInterleaved1F1B raises");
    plan.interleave = 0;
    plan.torch_pipelining = false;
}

static void test_torchtitan(void)
{
    const uint32_t cut[] = {0, 11, 26};
    make_plan(&plan, 2, cut, 4, "tp2-sdp2+sp", 4, 8);
    for (uint32_t i = 1; i <= 24; i++)
        plan.layer[i].ckpt = true;
    plan.sdp_nosync = true; /* as --target torchtitan prices FSDP under PP */
    expect_lines(TSL_EXPORT_TORCHTITAN, &plan, "gpt2-345m.torchtitan.py");
    expect_lines(TSL_EXPORT_TORCHTITAN_TOML, &plan, "gpt2-345m.torchtitan.toml");
    char *text = export_ok(TSL_EXPORT_TORCHTITAN_TOML, &plan);
    CHECK(strstr(text, "# pipeline_parallel_split_points = [\"layers.10\"]\n") != NULL,
          "v0.1.0's split points as a comment:\n%s", text);
    free(text);
    test_torchtitan_reshard();
    test_torchtitan_main();
    test_torchtitan_interleaved();
    tsl_export_format_t f;
    CHECK(tsl_export_format_parse("torchtitan-toml", &f, NULL) == 0 &&
              f == TSL_EXPORT_TORCHTITAN_TOML &&
              strcmp(tsl_export_content_type(f), "application/toml") == 0 &&
              strcmp(tsl_export_content_type(TSL_EXPORT_TORCHTITAN), "text/x-python") == 0,
          "torchtitan-toml is a format of its own");
    /* one stage, no CKPT: no pipeline keys, AC off */
    make_plan(&plan, 1, (const uint32_t[]){0, 26}, 8, "sdp8", 16, 2);
    text = export_ok(TSL_EXPORT_TORCHTITAN, &plan);
    CHECK(strstr(text, "config.activation_checkpoint = None\n") &&
              !strstr(text, "module_fqns_per_model_part") &&
              strstr(text, "num_tokens_per_train_step = 32768\n") &&
              strstr(text, "raise NotImplementedError"),
          "one stage:\n%s", text);
    free(text);
    /* torchtitan's op-level selective AC (recompute module torchtitan_op) and eager
     * modules: written as torchtitan takes them, read back the same; Megatron-LM and
     * DeepSpeed have no such policy */
    plan.recompute_modules = TSL_RECOMPUTE_TORCHTITAN_OP;
    plan.eager = true;
    text = export_ok(TSL_EXPORT_TORCHTITAN_TOML, &plan);
    CHECK(strstr(text, "mode = \"selective\"\nselective_ac_option = \"op\"\n") &&
              strstr(text, "[compile]\nenable = false\n"),
          "op-level SAC, eager:\n%s", text);
    tsl_eval_cfg_t *cfg = calloc(1, sizeof *cfg);
    tsl_err_t err = {0};
    CHECK(cfg && tsl_eval_cfg_torchtitan(text, cfg, &err) == 0 && cfg->ckpt == TSL_EVAL_CKPT_NONE &&
              cfg->knobs.recompute_modules == TSL_RECOMPUTE_TORCHTITAN_OP && cfg->knobs.eager,
          "read back: %s", err.msg);
    free(text);
    text = export_ok(TSL_EXPORT_TORCHTITAN, &plan);
    CHECK(strstr(text, "import SelectiveAC\n") &&
              strstr(text, "config.activation_checkpoint = SelectiveAC.Config()") &&
              strstr(text, "config.compile.enable = False\n"),
          "python: op-level SAC, eager:\n%s", text);
    CHECK(cfg && tsl_eval_cfg_torchtitan(text, cfg, &err) == 0 &&
              cfg->knobs.recompute_modules == TSL_RECOMPUTE_TORCHTITAN_OP && cfg->knobs.eager,
          "python read back: %s", err.msg);
    free(cfg);
    free(text);
    expect_refused(TSL_EXPORT_DEEPSPEED, &plan, "recomputes modules (torchtitan_op)");
    make_plan(&plan, 1, (const uint32_t[]){0, 26}, 8, "dp8", 16, 2);
    plan.recompute_modules = TSL_RECOMPUTE_TORCHTITAN_OP;
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "op-level selective");
    plan.recompute_modules = 0;
    plan.eager = false;
}

/* A heterogeneous placement (node_order 1, 2, 0: stage blocks take the cluster's
 * nodes in that order) is carried by no launch argument: every export that can
 * hold a comment says the order, so that the hosts are listed that way; the
 * identity order (n_nodes set, nothing moved) says nothing. */
static void test_placement(void)
{
    const uint32_t cut[] = {0, 11, 26};
    make_plan(&plan, 2, cut, 4, "tp2-sdp2+sp", 4, 8);
    plan.n_nodes = 3;
    plan.node_order[0] = 1, plan.node_order[1] = 2, plan.node_order[2] = 0;
    const char *want = "# heterogeneous placement: the stages take the cluster's nodes in the "
                       "order 1, 2, 0";
    tsl_export_format_t fs[] = {TSL_EXPORT_TORCHTITAN, TSL_EXPORT_TORCHTITAN_TOML};
    for (size_t k = 0; k < 2; k++) {
        char *text = export_ok(fs[k], &plan);
        CHECK(strstr(text, want) != NULL, "format %d says the node order:\n%s", (int)fs[k], text);
        free(text);
    }
    make_plan(&plan, 2, cut, 4, "tp2-dp2", 4, 8);
    plan.n_nodes = 3;
    plan.node_order[0] = 1, plan.node_order[1] = 2, plan.node_order[2] = 0;
    char *text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, want) != NULL, "megatron says the node order:\n%s", text);
    free(text);
    plan.node_order[0] = 0, plan.node_order[1] = 1, plan.node_order[2] = 2;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "placement") == NULL, "the cluster's own order says nothing:\n%s", text);
    free(text);
    plan.n_nodes = 0;
}

/* What the JSON formats cannot carry travels beside them (tsl_export_side_notes):
 * deepspeed the placement and the TF32 note, galvatron the placement, the formats
 * with comments nothing; a stored document's plan gives the same notes (the daemon's
 * ExportPlanResponse.notes), a document without a plan none. */
static void test_side_notes(void)
{
    static char notes[TSL_EXPORT_MAX_NOTES][TSL_EXPORT_NOTE_CAP];
    make_plan(&plan, 2, (const uint32_t[]){0, 11, 26}, 4, "dp4", 8, 16);
    plan.n_nodes = 3;
    plan.node_order[0] = 1, plan.node_order[1] = 2, plan.node_order[2] = 0;
    plan.fp32 = plan.tf32 = true;
    CHECK(tsl_export_side_notes(TSL_EXPORT_DEEPSPEED, &plan, notes) == 2 &&
              strstr(notes[0], "heterogeneous placement: ") == notes[0] &&
              strstr(notes[1], "TF32: ") == notes[1],
          "deepspeed: the placement, then TF32 ('%s', '%s')", notes[0], notes[1]);
    CHECK(tsl_export_side_notes(TSL_EXPORT_GALVATRON, &plan, notes) == 1 &&
              strstr(notes[0], "heterogeneous placement: ") == notes[0],
          "galvatron: the placement alone ('%s')", notes[0]);
    CHECK(tsl_export_side_notes(TSL_EXPORT_MEGATRON, &plan, notes) == 0 &&
              tsl_export_side_notes(TSL_EXPORT_TORCHTITAN, &plan, notes) == 0,
          "the formats with comments: none");
    json_t *result = json_pack("{s:o}", "plan", tsl_plan_to_json(&plan));
    char *doc = json_dumps(result, JSON_COMPACT);
    CHECK(tsl_export_stored_notes(TSL_EXPORT_DEEPSPEED, doc, notes) == 2 &&
              strstr(notes[1], "allow_tf32 = True"),
          "stored: the same two ('%s')", notes[1]);
    plan.node_order[0] = 0, plan.node_order[1] = 1, plan.node_order[2] = 2;
    plan.fp32 = plan.tf32 = false;
    CHECK(tsl_export_side_notes(TSL_EXPORT_DEEPSPEED, &plan, notes) == 0,
          "the cluster's order, bf16: none");
    CHECK(tsl_export_stored_notes(TSL_EXPORT_DEEPSPEED, "{\"plan\": 3}", notes) == 0 &&
              tsl_export_stored_notes(TSL_EXPORT_DEEPSPEED, "not json", notes) == 0,
          "no plan that parses: none");
    free(doc);
    json_decref(result);
    plan.n_nodes = 0;
}

/* Zero-bubble plans: torchtitan runs ZBV and DualPipeV with 2·pp model parts
 * placed in a V (part q on rank q and 2·pp − 1 − q); the other stacks refuse
 * both by name. */
static void test_zero_bubble(void)
{
    const uint32_t cut[] = {0, 11, 26};
    /* stage 0's 11 layers: parts 0 (6) and 3 (5); stage 1's 15: parts 1 (8), 2 (7) */
    const char *parts =
        "module_fqns_per_model_part = [[\"tok_embeddings\", \"layers.0\", \"layers.1\", "
        "\"layers.2\", \"layers.3\", \"layers.4\"], [\"layers.5\", \"layers.6\", "
        "\"layers.7\", \"layers.8\", \"layers.9\", \"layers.10\", \"layers.11\", "
        "\"layers.12\"], [\"layers.13\", \"layers.14\", \"layers.15\", \"layers.16\", "
        "\"layers.17\", \"layers.18\", \"layers.19\"], [\"layers.20\", \"layers.21\", "
        "\"layers.22\", \"layers.23\", \"norm\", \"output\"]]\n";
    static const struct {
        uint32_t schedule;
        const char *name, *torch;
    } zb[] = {{TSL_PIPESIM_SCHED_ZBV, "zbv", "ZBVZeroBubble"},
              {TSL_PIPESIM_SCHED_DUALPIPEV, "dualpipev", "DualPipeV"}};
    for (size_t k = 0; k < sizeof zb / sizeof zb[0]; k++) {
        char want[96], why[96];
        make_plan(&plan, 2, cut, 4, "tp2-sdp2+sp", 4, 8);
        plan.schedule = zb[k].schedule;
        char *text = export_ok(TSL_EXPORT_TORCHTITAN_TOML, &plan);
        snprintf(want, sizeof want, "pipeline_parallel_schedule = \"%s\"\n", zb[k].torch);
        CHECK(strstr(text, want) && strstr(text, parts), "%s: TOML with 4 V-placed parts:\n%s",
              zb[k].name, text);
        free(text);
        text = export_ok(TSL_EXPORT_TORCHTITAN, &plan);
        snprintf(want, sizeof want, "    par.pipeline_parallel_schedule = \"%s\"\n", zb[k].torch);
        uint32_t n_parts = 0;
        for (const char *q = text; (q = strstr(q, "\n        [")) != NULL; q++)
            n_parts++;
        CHECK(strstr(text, want) && n_parts == 4 &&
                  strstr(text, "        [\"layers.20\", \"layers.21\", \"layers.22\", "
                               "\"layers.23\", \"norm\", \"lm_head\"],\n"),
              "%s: Python with 4 V-placed parts (%u):\n%s", zb[k].name, n_parts, text);
        free(text);
        snprintf(why, sizeof why, "the plan runs the %s pipeline schedule", zb[k].name);
        make_plan(&plan, 2, (const uint32_t[]){0, 13, 26}, 4, "tp2-dp2", 8, 8);
        plan.schedule = zb[k].schedule;
        expect_refused(TSL_EXPORT_MEGATRON, &plan, why);
        expect_refused(TSL_EXPORT_GALVATRON, &plan, why);
        expect_hint_once(TSL_EXPORT_MEGATRON, &plan);
        make_plan(&plan, 2, (const uint32_t[]){0, 13, 26}, 4, "dp4", 8, 8);
        plan.schedule = zb[k].schedule;
        expect_refused(TSL_EXPORT_DEEPSPEED, &plan, why);
    }
    /* torch's ScheduleDualPipeV needs m >= 2·pp */
    make_plan(&plan, 2, cut, 4, "tp2-sdp2+sp", 4, 3);
    plan.schedule = TSL_PIPESIM_SCHED_DUALPIPEV;
    expect_refused(TSL_EXPORT_TORCHTITAN, &plan, "DualPipeV needs at least as many");
}

static void test_galvatron(void)
{
    /* Layer-level: mixed TP degrees, ZeRO-3 layers, CKPT. */
    const uint32_t cut[] = {0, 9, 26};
    make_plan(&plan, 2, cut, 4, "tp2-dp2", 8, 4);
    set_layers(&plan, 9, 4, "sdp4");
    set_layers(&plan, 13, 4, "tp4");
    for (uint32_t i = 5; i < 9; i++)
        plan.layer[i].ckpt = true;
    expect_json(TSL_EXPORT_GALVATRON, &plan, "gpt2-345m.galvatron.json");

    /* ZeRO-3 embedding and head: Galvatron v2.4.0 reads embed_sdp, 3.0 vocab_sdp */
    set_layers(&plan, 0, 1, "sdp4");
    set_layers(&plan, 25, 1, "sdp4");
    {
        char *text = export_ok(TSL_EXPORT_GALVATRON, &plan);
        json_t *o = json_loads(text, 0, NULL);
        CHECK(json_integer_value(json_object_get(o, "embed_sdp")) == 1 &&
                  json_integer_value(json_object_get(o, "vocab_sdp")) == 1,
              "galvatron: both versions' key:\n%s", text);
        json_decref(o);
        free(text);
    }
    set_layers(&plan, 0, 1, "tp2-dp2");
    set_layers(&plan, 25, 1, "tp4");
    expect_refused(TSL_EXPORT_GALVATRON, &plan, "vocabulary TP degree");
    set_layers(&plan, 25, 1, "tp2-dp2");
    set_layers(&plan, 10, 1, "sdp2-dp2");
    expect_refused(TSL_EXPORT_GALVATRON, &plan, "layer 10");
    set_layers(&plan, 10, 1, "sdp4");

    /* TP ranks apart: Galvatron main lays every TP group on consecutive GPUs
     * (tp_consecutive_flags unread since f055046), v2.4.0 the embedding's and
     * head's; written as 0 before, the run would have been another plan */
    set_layers(&plan, 3, 2, "dp2-tp2");
    expect_refused(TSL_EXPORT_GALVATRON, &plan,
                   "layer 3 (Transformer layer) runs dp2-tp2, its TP ranks apart");
    set_layers(&plan, 3, 2, "tp2-dp2");
    set_layers(&plan, 0, 1, "dp2-tp2");
    set_layers(&plan, 25, 1, "dp2-tp2");
    expect_refused(TSL_EXPORT_GALVATRON, &plan, "layer 0 (embedding)");

    /* one ZeRO-3 flag for the embedding and the head (vocab_sdp): written from the
     * embedding's before, Galvatron sharded a replicated head */
    set_layers(&plan, 0, 1, "tp2-sdp2");
    set_layers(&plan, 25, 1, "tp2-dp2");
    expect_refused(TSL_EXPORT_GALVATRON, &plan, "one ZeRO-3 flag (vocab_sdp");
    set_layers(&plan, 25, 1, "tp2-sdp2");
    free(export_ok(TSL_EXPORT_GALVATRON, &plan));
}

/* Galvatron runs Megatron sequence parallelism on its TP layers by default, and
 * holds a plan to its own memory rules: 20% of a budget over 20 GiB kept back,
 * ZeRO-3 gradients accumulated unsharded over several micro-batches. */
static void test_galvatron_rules(void)
{
    make_plan(&plan, 1, (const uint32_t[]){0, 26}, 8, "tp2-dp4+sp", 8, 4);
    free(export_ok(TSL_EXPORT_GALVATRON, &plan));
    make_plan(&plan, 1, (const uint32_t[]){0, 26}, 8, "sdp8", 8, 4);
    plan.budget_bytes = 36ull << 30;
    /* 36864 MB - int(0.2 * 36864) = 29492 MB: 1 MiB under it */
    plan.stages[0].peak_bytes = (29492ull - 1) << 20;
    expect_refused(TSL_EXPORT_GALVATRON, &plan, "unsharded accumulated ZeRO-3 gradients over 4");
    plan.n_micro = 1;
    plan.micro_batch = plan.global_batch;
    free(export_ok(TSL_EXPORT_GALVATRON, &plan));
    plan.stages[0].peak_bytes = 30ull << 30; /* within 36 GiB, past Galvatron's 80% */
    expect_refused(TSL_EXPORT_GALVATRON, &plan, "keeps 20% back");
    plan.budget_bytes = 20ull << 30; /* 20 GiB and less: nothing kept back */
    plan.stages[0].peak_bytes = 19ull << 30;
    free(export_ok(TSL_EXPORT_GALVATRON, &plan));
}

/* Plans one target cannot run, each under one strategy: 2 stages cut at `cut`
 * (1 stage when cut is 0), 4 devices per stage. */
static const struct refusal {
    tsl_export_format_t f;
    uint32_t cut;
    const char *strategy;
    uint32_t micro;
    const char *why;
} refusals[] = {
    {TSL_EXPORT_MEGATRON, 13, "dp2-tp2", 8, "consecutive GPUs"},
    /* Megatron-FSDP (cost model 94): not a plan priced with exposed gathers, nor HSDP */
    {TSL_EXPORT_MEGATRON, 13, "sdp4", 8, "weight gathers exposed"},
    {TSL_EXPORT_MEGATRON, 13, "sdp2-dp2", 8, "not its hybrid mode (HSDP)"},
    {TSL_EXPORT_MEGATRON, 0, "tp2-dp2", 3, "3 samples does not divide over 2"},
    /* TP beside stages as Megatron-DeepSpeed runs it (cost model 101): its boundaries
     * priced as DeepSpeed's PartitionedTensor p2p (legacy_p2p), TP ranks consecutive
     * (PipeModelDataParallelTopology: pipe, data, model), no SP in the fork */
    {TSL_EXPORT_DEEPSPEED, 13, "tp2-dp2", 8, "priced with Megatron-core's p2p"},
    {TSL_EXPORT_DEEPSPEED, 13, "dp2-tp2", 8, "Megatron-DeepSpeed's mpu"},
    {TSL_EXPORT_DEEPSPEED, 13, "tp2-dp2+sp", 8,
     "Megatron-DeepSpeed (bigscience-workshop) does not run"},
    {TSL_EXPORT_DEEPSPEED, 13, "sdp4", 8, "ZeRO-3"},
    {TSL_EXPORT_DEEPSPEED, 11, "dp4", 8, "'uniform' partition"},
    {TSL_EXPORT_TORCHTITAN, 11, "sdp2-tp2", 4, "mesh"},
    {TSL_EXPORT_TORCHTITAN, 25, "tp2-sdp2+sp", 4, "output head alone"},
    {TSL_EXPORT_TORCHTITAN, 0, "tp2-dp2", 8, "DDP has not supported > 1D parallelism"},
    {TSL_EXPORT_TORCHTITAN, 13, "dp4", 8, "DDP) together with pipeline stages"},
    {TSL_EXPORT_TORCHTITAN, 11, "tp2-sdp2", 4, "TP is always sequence-parallel"},
    {TSL_EXPORT_GALVATRON, 1, "tp2-dp2", 8, "stage 0 holds no Transformer layer"},
};

static void test_refusals(void)
{
    for (size_t k = 0; k < sizeof refusals / sizeof refusals[0]; k++) {
        const struct refusal *r = &refusals[k];
        const uint32_t cut[] = {0, r->cut ? r->cut : 26, 26};
        make_plan(&plan, r->cut ? 2 : 1, cut, 4, r->strategy, r->micro, 8);
        expect_refused(r->f, &plan, r->why);
    }
}

/* Refusals every target shares: stage cuts inside a layer, H3T switches. */
static void test_common_refusals(void)
{
    tsl_sublayer_model_t sm;
    CHECK(tsl_sublayer_split(&model, &sm, NULL) == 0, "split");
    make_plan(&plan, 2, (const uint32_t[]){0, 14, 50}, 4, "tp2-dp2", 8, 4);
    plan.sublayer = true;
    plan.n_layers = sm.model.n_layers;
    set_layers(&plan, 0, plan.n_layers, "tp2-dp2");
    for (int f = 0; f < TSL_EXPORT_COUNT; f++)
        expect_refused((tsl_export_format_t)f, &plan, "starts inside layer 7 (at 7.5");
    /* Cut between layers: folds back onto the model like a whole-layer plan. */
    plan.stages[0].n_layers = 13;
    plan.stages[1].first_layer = 13;
    plan.stages[1].n_layers = 37;
    set_layers(&plan, 0, plan.n_layers, "tp2-sdp2+sp");
    char *text = export_ok(TSL_EXPORT_TORCHTITAN_TOML, &plan);
    CHECK(strstr(text, "pipeline_parallel_split_points = [\"layers.6\"]") != NULL,
          "a sub-layer plan cut at whole layers exports:\n%s", text);
    free(text);
    set_layers(&plan, 0, plan.n_layers, "tp2-dp2");
    set_layers(&plan, 20, 1, "tp4");
    expect_refused(TSL_EXPORT_GALVATRON, &plan,
                   "attention block runs tp2-dp2 but its FFN block tp4");
    tsl_sublayer_free(&sm);

    make_plan(&plan, 1, (const uint32_t[]){0, 26}, 8, "sdp8", 8, 4);
    plan.memopt = 1;
    for (int f = 0; f < TSL_EXPORT_COUNT; f++)
        expect_refused((tsl_export_format_t)f, &plan, "--no-memopt");
}

/* Activation CPU offloading (cpu_offload_layers): megatron writes Megatron-LM's
 * --cpu-offloading-num-layers, which eval --megatron-args reads back; the other
 * exports write no such setting and refuse it by name. */
static void test_cpu_offload(void)
{
    make_plan(&plan, 1, (const uint32_t[]){0, 26}, 8, "dp8+zero1", 8, 4);
    plan.cpu_offload_layers = 12;
    char *text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "--cpu-offloading-num-layers 12\n") != NULL, "megatron:\n%s", text);
    tsl_eval_cfg_t *cfg = calloc(1, sizeof *cfg);
    tsl_err_t err = {0};
    CHECK(cfg && tsl_eval_cfg_megatron(text, cfg, &err) == 0 && cfg->knobs.cpu_offload_layers == 12,
          "read back: %s", err.msg);
    free(cfg);
    free(text);
    for (int f = 0; f < TSL_EXPORT_COUNT; f++)
        if (f != TSL_EXPORT_MEGATRON)
            expect_refused((tsl_export_format_t)f, &plan, "offloads 12 layers' activations");
}

/* An MXFP8 plan with FP8 weights under the distributed optimizer was priced with
 * its weights gathered in bf16 through the gradient buffer (cost model 51): the
 * Megatron-LM export asks for that gather; without ZeRO or FP8 weights it does not. */
static void test_mxfp8_param_ag(void)
{
    const char *flag = "--reuse-grad-buf-for-mxfp8-param-ag\n";
    make_plan(&plan, 1, (const uint32_t[]){0, 26}, 8, "dp8+zero1", 8, 4);
    plan.fp8_recipe = TSL_FP8_MXFP8;
    plan.fp8_param_gather = true;
    char *text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    tsl_eval_cfg_t *cfg = calloc(1, sizeof *cfg);
    tsl_err_t err = {0};
    CHECK(cfg && strstr(text, "--use-distributed-optimizer\n") && strstr(text, flag) &&
              tsl_eval_cfg_megatron(text, cfg, &err) == 0 && cfg->knobs.fp8 == TSL_FP8_MXFP8 &&
              cfg->knobs.fp8_param_gather,
          "mxfp8 zero1 (read back: %s):\n%s", err.msg, text);
    /* the line without the flag does not run in Megatron-LM (its param buffer cannot hold
     * MXFP8 weights: TE's replace_raw_data refuses them): refused by the flag's name */
    char *at = strstr(text, flag);
    if (at != NULL)
        memmove(at, at + strlen(flag), strlen(at + strlen(flag)) + 1);
    memset(cfg, 0, sizeof *cfg);
    err = (tsl_err_t){0};
    CHECK(at != NULL && tsl_eval_cfg_megatron(text, cfg, &err) != 0 &&
              strstr(err.msg, "needs --reuse-grad-buf-for-mxfp8-param-ag"),
          "mxfp8 zero1 without the flag refused (%s)", err.msg);
    free(text);
    plan.fp8_recipe = TSL_FP8_TENSORWISE;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(!strstr(text, flag), "tensorwise:\n%s", text);
    free(text);
    plan.fp8_recipe = TSL_FP8_MXFP8;
    plan.fp8_param_gather = false;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(!strstr(text, flag), "bf16 weights:\n%s", text);
    free(text);
    /* FP8 weights on replicas without the distributed optimizer: Megatron-LM refuses
     * --fp8-param-gather there (validate_args), so the export does */
    make_plan(&plan, 1, (const uint32_t[]){0, 26}, 8, "dp8", 8, 4);
    plan.fp8_recipe = TSL_FP8_MXFP8;
    plan.fp8_param_gather = true;
    expect_refused(TSL_EXPORT_MEGATRON, &plan,
                   "megatron: fp8_param_gather needs the distributed optimizer or "
                   "Megatron-FSDP (Megatron-LM validate_args); dp8 replicates");
    plan.fp8_recipe = TSL_FP8_TENSORWISE;
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "dp8 replicates its states over 8");
    /* no data-parallel rank: the distributed optimizer, which shards nothing over one
     * rank, beside the flag; read back at zero 0, as priced. MXFP8 there is refused:
     * that optimizer would gather its weights in bf16 through the gradient buffer */
    make_plan(&plan, 1, (const uint32_t[]){0, 26}, 8, "tp8+sp", 8, 4);
    plan.fp8_recipe = TSL_FP8_TENSORWISE;
    plan.fp8_param_gather = true;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    memset(cfg, 0, sizeof *cfg);
    err = (tsl_err_t){0};
    CHECK(strstr(text, "--use-distributed-optimizer\n") && strstr(text, "--fp8-param-gather\n") &&
              !strstr(text, flag) && tsl_eval_cfg_megatron(text, cfg, &err) == 0 &&
              cfg->zero == 1 && cfg->zero_one_rank && cfg->knobs.fp8_param_gather,
          "tp8, FP8 weights (read back: %s):\n%s", err.msg, text);
    free(text);
    plan.fp8_param_gather = false;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(!strstr(text, "--use-distributed-optimizer\n"), "tp8, bf16 weights:\n%s", text);
    free(text);
    plan.fp8_recipe = TSL_FP8_MXFP8;
    plan.fp8_param_gather = true;
    expect_refused(TSL_EXPORT_MEGATRON, &plan,
                   "megatron: fp8_param_gather with mxfp8 and one data-parallel rank");
    free(cfg);
    plan.fp8_recipe = TSL_FP8_NONE;
    plan.fp8_param_gather = false;
}

/* TE's userbuffers (tp_comm_overlap): megatron writes --tp-comm-overlap beside
 * --sequence-parallel; the other exports refuse the plan priced with them by name,
 * as they refuse cpu_offload_layers. */
static void test_tp_comm_overlap(void)
{
    make_plan(&plan, 1, (const uint32_t[]){0, 26}, 8, "tp2-dp4+sp", 8, 4);
    plan.tp_comm_overlap = true;
    char *text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "--tp-comm-overlap\n") != NULL &&
              strstr(text, "--sequence-parallel\n") != NULL,
          "megatron:\n%s", text);
    free(text);
    for (int f = 0; f < TSL_EXPORT_COUNT; f++)
        if (f != TSL_EXPORT_MEGATRON)
            expect_refused((tsl_export_format_t)f, &plan, "userbuffers (tp_comm_overlap");
}

/* The recipe a "#| " config of megatron's te_precision.yaml names: its training_recipe's
 * fp8_ / fp4_quantization_recipe, or bf16 where it has none ("{}"); -1 where the config
 * is not there or not as TEQuantizationParams reads it. */
static int yaml_config_recipe(const char *yaml, const char *name)
{
    char key[48], want[160];
    snprintf(key, sizeof key, "\n#|   %s:\n", name);
    const char *c = strstr(yaml, key);
    if (c == NULL)
        return -1;
    c += strlen(key);
    snprintf(want, sizeof want,
             "#|     transformer_engine_config_type: \"TEQuantizationParams\"\n"
             "#|     training_recipe:");
    if (strncmp(c, want, strlen(want)) != 0)
        return -1;
    c += strlen(want);
    if (strncmp(c, " {}\n", 4) == 0)
        return TSL_FP8_NONE;
    char r[24] = "";
    if (sscanf(c, "\n#|       fp8_quantization_recipe: \"%23[a-z0-9]\"", r) == 1 &&
        strstr(c, "\n#|       fp8_format: \"hybrid\"\n") != NULL)
        return tsl_fp8_recipe_parse(r);
    if (sscanf(c, "\n#|       fp4_quantization_recipe: \"%23[a-z0-9]\"", r) == 1)
        return tsl_fp8_recipe_parse(r);
    return -1;
}

/* module_precision read back from the "#| " lines of a megatron export: each enabled
 * glob matcher's pattern to the module it is Tessel's pattern of, its config to the
 * recipe; 0xffffffff where a matcher is not as Megatron-LM's RecipeConfig builds it. */
static uint32_t yaml_module_prec(const char *text)
{
    const char *mt = strstr(text, "\n#| matchers:\n");
    if (mt == NULL || strstr(text, "\n#| configs:\n") == NULL)
        return 0xffffffffu;
    uint32_t prec = 0;
    for (const char *c = mt + strlen("\n#| matchers:\n"); strncmp(c, "#|   ", 5) == 0;) {
        char name[32], cfg[24], pat[64];
        int n = 0;
        if (sscanf(c,
                   "#|   %31[a-z0-9_]:\n#|     config: \"%23[a-z0-9]\"\n#|     type: \"glob\"\n"
                   "#|     pattern: \"%63[^\"]\"\n#|     enabled: true\n%n",
                   name, cfg, pat, &n) != 3 ||
            n == 0)
            return 0xffffffffu;
        uint32_t m = 0;
        while (m < TSL_MODULE_COUNT && (strncmp(pat, "*.", 2) != 0 ||
                                        strcmp(tsl_export_megatron_prec_leaf(m), pat + 2) != 0))
            m++;
        int r = yaml_config_recipe(text, cfg);
        if (m == TSL_MODULE_COUNT || strcmp(tsl_module_name(m), name) != 0 || r < 0)
            return 0xffffffffu;
        prec |= (uint32_t)(r + 1) << (4 * m);
        c += n;
    }
    return prec;
}

/* megatron's te_precision.yaml for module_precision (export_megatron_prec.c): the flag
 * beside the recipe's, and the "#| " lines' configs and matchers reading back to the
 * plan's per-module recipes — te_quant.cfg's under nvfp4 (Nemotron 3 Super), every
 * module and precision under tensorwise — out of the launch line; a plan with none
 * has neither. Before, the plan was refused ("this export does not write"). */
static void test_megatron_te_prec(void)
{
    static const char *const lists[] = {
        "linear_qkv=bf16,linear_proj=bf16,out_proj=mxfp8,fc1_latent_proj=bf16,"
        "fc2_latent_proj=bf16",
        "linear_qkv=bf16,linear_proj=tensorwise,linear_fc1=blockwise,linear_fc2=mxfp8,"
        "in_proj=nvfp4,out_proj=bf16,fc1_latent_proj=mxfp8,fc2_latent_proj=blockwise",
    };
    tsl_err_t err = {0};
    make_plan(&plan, 1, (const uint32_t[]){0, 26}, 8, "dp8", 8, 4);
    for (size_t k = 0; k < 2; k++) {
        plan.fp8_recipe = k == 0 ? TSL_FP8_NVFP4 : TSL_FP8_TENSORWISE;
        CHECK(tsl_module_prec_parse(lists[k], &plan.module_prec, &err) == 0, "%s", err.msg);
        char *text = export_ok(TSL_EXPORT_MEGATRON, &plan);
        CHECK(yaml_module_prec(text) == plan.module_prec, "read back 0x%x, plan 0x%x:\n%s",
              yaml_module_prec(text), plan.module_prec, text);
        CHECK(strstr(text, k == 0 ? "--fp4-recipe nvfp4\n--te-precision-config-file "
                                    "te_precision.yaml\n"
                                  : "--fp8-recipe tensorwise\n--te-precision-config-file "
                                    "te_precision.yaml\n") != NULL &&
                  strstr(text, "#   sed -n 's/^#| //p' THIS_FILE > te_precision.yaml\n") != NULL,
              "megatron:\n%s", text);
        strip_comments(text);
        CHECK(strstr(text, "#|") == NULL && strstr(text, "configs") == NULL, "line:\n%s", text);
        free(text);
    }
    plan.module_prec = 0;
    char *text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "te-precision") == NULL && strstr(text, "#|") == NULL, "none:\n%s", text);
    free(text);
    plan.module_prec = 0x2; /* linear_qkv at delayed: no per-module recipe */
    text = NULL;
    size_t len;
    CHECK(tsl_export(TSL_EXPORT_MEGATRON, &plan, &model, &text, &len, &err) == -1 && !text &&
              strstr(err.msg, "module_precision: 0x2: linear_qkv's value 2 is no precision"),
          "%s", err.msg);
    plan.module_prec = 0x1;
    set_layers(&plan, 0, plan.n_layers, "dp8+zero1"); /* FP8 weights need a sharded state */
    plan.fp8_param_gather = true; /* the overrides miss the FP8 weights' initialization */
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "megatron: module_precision with fp8_param_gather");
    plan.fp8_param_gather = false;
    plan.fp8_recipe = TSL_FP8_NONE;
    expect_refused(TSL_EXPORT_MEGATRON, &plan,
                   "megatron: module_precision: per-module precision on a plan without FP8");
    plan.module_prec = 0;
}

/* Megatron-core's per-module precision (module_precision, cost model 173) and the blocks
 * Megatron-LM keeps bf16 under FP8 (bf16_layers_start / _end): every export but megatron
 * refuses the plan naming the field (megatron writes both: test_megatron_te_prec), the
 * torchtitan ones before the FP8 they would write (one converter recipe for every block
 * linear), deepspeed and galvatron before their "no FP8". Before, torchtitan's exports
 * dropped both silently. */
static void test_precision_fields(void)
{
    static const tsl_export_format_t others[] = {TSL_EXPORT_TORCHTITAN, TSL_EXPORT_TORCHTITAN_TOML,
                                                 TSL_EXPORT_DEEPSPEED, TSL_EXPORT_GALVATRON};
    tsl_err_t err = {0};
    make_plan(&plan, 1, (const uint32_t[]){0, 26}, 8, "dp8", 8, 4);
    plan.fp8_recipe = TSL_FP8_TENSORWISE;
    CHECK(tsl_module_prec_parse("linear_qkv=bf16,linear_fc2=mxfp8", &plan.module_prec, &err) == 0,
          "%s", err.msg);
    for (size_t k = 0; k < sizeof others / sizeof others[0]; k++)
        expect_refused(others[k], &plan,
                       "linears at their own precision (module_precision "
                       "linear_qkv=bf16,linear_fc2=mxfp8, Megatron-core's");
    plan.module_prec = 0;
    plan.bf16_layers_start = 1;
    plan.bf16_layers_end = 2;
    for (size_t k = 0; k < sizeof others / sizeof others[0]; k++)
        expect_refused(others[k], &plan, "first 1 and last 2 blocks in bf16 (bf16_layers_start");
    char *text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "--first-last-layers-bf16\n") != NULL, "megatron:\n%s", text);
    free(text);
    plan.bf16_layers_start = plan.bf16_layers_end = 0;
    plan.fp8_recipe = TSL_FP8_NONE;
}

/* Megatron-core's per-layer CUDA graphs (cuda_graph_modules, cost model 171): megatron
 * writes --cuda-graph-impl transformer_engine --cuda-graph-modules by name, and its
 * --megatron-args reads the modules back; what Megatron-LM's TransformerConfig asserts
 * (d98e8a6) is refused naming the rule — on GPT2-345M the MoE modules, graphs beside
 * offloading or full recompute, the graphed attention beside its core's recompute under
 * dropout; on Mixtral drop-and-pad for moe, mlp with no dense FFN — and the other exports
 * refuse the plan naming cuda_graph_modules. Before, megatron wrote no graph and the
 * others dropped the graphs silently. */
static void test_cuda_graphs(void)
{
    make_plan(&plan, 1, (const uint32_t[]){0, 26}, 8, "tp2-dp4+sp", 8, 4);
    plan.cuda_graph_modules = TSL_CUDA_GRAPH_ATTN | TSL_CUDA_GRAPH_MLP;
    char *text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    tsl_eval_cfg_t *cfg = calloc(1, sizeof *cfg);
    tsl_err_t err = {0};
    CHECK(cfg &&
              strstr(text, "--cuda-graph-impl transformer_engine\n"
                           "--cuda-graph-modules attn mlp\n") &&
              tsl_eval_cfg_megatron(text, cfg, &err) == 0 &&
              cfg->knobs.cuda_graph_modules == plan.cuda_graph_modules &&
              cfg->cuda_graph_impl == TSL_EVAL_CGRAPH_TE,
          "megatron (read back: %s):\n%s", err.msg, text);
    free(text);
    free(cfg);
    for (int f = 0; f < TSL_EXPORT_COUNT; f++)
        if (f != TSL_EXPORT_MEGATRON)
            expect_refused((tsl_export_format_t)f, &plan,
                           "CUDA graphs of attn,mlp (cuda_graph_modules");
    expect_refused(TSL_EXPORT_TORCHTITAN_TOML, &plan, "(cuda_graph_modules");
    plan.cuda_graph_modules = TSL_CUDA_GRAPH_ATTN | TSL_CUDA_GRAPH_MOE_ROUTER;
    expect_refused(TSL_EXPORT_MEGATRON, &plan,
                   "megatron: cuda_graph_modules: moe, moe_router and moe_preprocess need a "
                   "MoE model");
    plan.cuda_graph_modules = TSL_CUDA_GRAPH_ATTN;
    plan.cpu_offload_layers = 2;
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "not supported with CPU offloading");
    plan.cpu_offload_layers = 0;
    set_layers(&plan, 1, model.n_layers - 2, "tp2-dp4+sp+ckpt");
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "beside full recompute");
    set_layers(&plan, 1, model.n_layers - 2, "tp2-dp4+sp+selckpt");
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "attention dropout is not supported");
    plan.cuda_graph_modules = TSL_CUDA_GRAPH_MLP; /* the core's recompute outside the graph */
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "--cuda-graph-modules mlp\n") != NULL, "mlp beside +selckpt:\n%s", text);
    free(text);
    plan.cuda_graph_modules = 0;

    tsl_model_t saved = model;
    CHECK(tsl_model_preset("Mixtral-8x7B", &model, NULL) == 0, "Mixtral-8x7B");
    make_plan(&plan, 1, (const uint32_t[]){0, model.n_layers}, 8, "dp8", 8, 4);
    plan.ep = 8;
    plan.cuda_graph_modules = TSL_CUDA_GRAPH_MLP;
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "mlp cuda graph is only supported for dense");
    plan.cuda_graph_modules = TSL_CUDA_GRAPH_MOE;
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "with drop-and-pad only");
    plan.cuda_graph_modules = TSL_CUDA_GRAPH_ATTN | TSL_CUDA_GRAPH_MOE_ROUTER;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "--cuda-graph-modules attn moe_router\n") != NULL, "Mixtral:\n%s", text);
    free(text);
    plan.cuda_graph_modules = 0;
    tsl_model_free(&model);
    model = saved;
}

/* The flex dispatcher and the EP all-to-all overlap on Mixtral-8x7B at EP 8:
 * megatron writes them where Megatron-LM runs them and reads them back; DeepEP
 * (its default backend) raises on padding to capacity, so a padded plan gets
 * HybridEP; at PP 2 without interleaving TransformerConfig refuses the overlap, and
 * the plan saved nothing there (tsl_pipeline_ep_overlap_s), so a comment says it is
 * left out; beside full recompute it refuses it too, and the plan was priced with
 * the saving: refused naming the field. torchtitan's export refuses both by name. */
static void test_moe_flex_overlap(void)
{
    static const char ovl[] = "--overlap-moe-expert-parallel-comm\n--delay-wgrad-compute\n";
    tsl_model_t saved = model;
    CHECK(tsl_model_preset("Mixtral-8x7B", &model, NULL) == 0, "Mixtral-8x7B");
    make_plan(&plan, 1, (const uint32_t[]){0, model.n_layers}, 8, "dp8", 8, 8);
    plan.ep = 8;
    plan.moe_flex = true;
    plan.moe_a2a_overlap = true;
    char *text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    tsl_eval_cfg_t *cfg = calloc(1, sizeof *cfg);
    tsl_err_t err = {0};
    CHECK(cfg && strstr(text, "--moe-token-dispatcher-type flex\n") &&
              strstr(text, "--moe-flex-dispatcher-backend deepep\n") && strstr(text, ovl) &&
              tsl_eval_cfg_megatron(text, cfg, &err) == 0 && cfg->knobs.moe_flex &&
              cfg->knobs.moe_a2a_overlap && cfg->knobs.moe_flex_backend == TSL_FLEX_DEEPEP,
          "pp 1 (read back: %s):\n%s", err.msg, text);
    free(text);
    /* the back end named: written, and read back as the one priced */
    plan.moe_flex_backend = TSL_FLEX_HYBRIDEP;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    memset(cfg, 0, sizeof *cfg);
    CHECK(strstr(text, "--moe-flex-dispatcher-backend hybridep\n") &&
              tsl_eval_cfg_megatron(text, cfg, &err) == 0 &&
              cfg->knobs.moe_flex_backend == TSL_FLEX_HYBRIDEP,
          "hybridep (read back: %s):\n%s", err.msg, text);
    free(text);
    plan.moe_flex_backend = 0;
    plan.moe_capacity = 1.25;
    plan.moe_pad = true;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(strstr(text, "--moe-flex-dispatcher-backend hybridep\n") && !strstr(text, "deepep"),
          "padded:\n%s", text);
    free(text);
    plan.moe_fp8_dispatch = true; /* ncclep: "drop and pad is not supported yet" */
    plan.fp8_recipe = TSL_FP8_MXFP8;
    expect_refused(TSL_EXPORT_MEGATRON, &plan, "moe_fp8_dispatch: the FP8 dispatch runs");
    plan.moe_fp8_dispatch = false;
    plan.fp8_recipe = TSL_FP8_NONE;
    plan.moe_capacity = 0;
    plan.moe_pad = false;
    expect_refused(TSL_EXPORT_TORCHTITAN, &plan, "moe_flex_dispatcher");
    plan.moe_flex = false;
    expect_refused(TSL_EXPORT_TORCHTITAN, &plan, "moe_a2a_overlap");
    plan.layer[5].ckpt = true;
    set_layers(&plan, 1, model.n_layers - 2, "dp8+ckpt");
    /* full recompute: Megatron-LM refuses the overlap there and the pricing saved
     * nothing (search_eval.c ep_overlap), so the flags are left out with a comment */
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(!strstr(text, ovl) && strstr(text, "# moe_a2a_overlap not written") &&
              strstr(text, "--recompute-granularity full"),
          "full recompute:\n%s", text);
    free(text);
    make_plan(&plan, 2, (const uint32_t[]){0, 17, model.n_layers}, 8, "dp8", 8, 8);
    plan.ep = 8;
    plan.moe_a2a_overlap = true;
    text = export_ok(TSL_EXPORT_MEGATRON, &plan);
    CHECK(!strstr(text, ovl) && strstr(text, "# moe_a2a_overlap not written") &&
              tsl_eval_cfg_megatron(text, cfg, &err) == 0 && !cfg->knobs.moe_a2a_overlap,
          "pp 2 without interleaving (%s):\n%s", err.msg, text);
    free(text);
    free(cfg);
    tsl_model_free(&model);
    model = saved;
}

/* A plan through its JSON document and back exports the same text (the daemon's path). */
static void test_roundtrip(void)
{
    const uint32_t cut[] = {0, 9, 26};
    make_plan(&plan, 2, cut, 4, "tp2-dp2", 8, 4);
    set_layers(&plan, 13, 4, "tp4");
    plan.layer[2].ckpt = true;
    json_t *doc = tsl_plan_to_json(&plan);
    tsl_plan_t back;
    tsl_err_t err = {0};
    CHECK(tsl_plan_from_json(doc, &back, &err) == 0, "from_json: %s", err.msg);
    char *a = export_ok(TSL_EXPORT_GALVATRON, &plan), *b = export_ok(TSL_EXPORT_GALVATRON, &back);
    CHECK(strcmp(a, b) == 0, "round trip:\n%s\n%s", a, b);
    free(a);
    free(b);
    json_decref(doc);
    tsl_export_format_t f;
    CHECK(tsl_export_format_parse("TorchTitan", &f, NULL) == 0 && f == TSL_EXPORT_TORCHTITAN,
          "format names are case-insensitive");
    CHECK(tsl_export_format_parse("yaml", &f, &err) == -1 && strstr(err.msg, "megatron"),
          "an unknown format lists the known ones: %s", err.msg);
}

/* A document's stage and its runs refused naming the key at fault (tests/cli_fuzz.py):
 * the messages were "stage 1: bad first_layer/n_layers/n_devices", "stage 1: a run
 * outside the stage" and "plan: a run has no strategy", and runs that left a layer out
 * priced it as a single device's, refused as "layer 25 (single): its degrees
 * multiply to 1 devices". */
static void test_doc_stage_refusals(void)
{
    const uint32_t cut[] = {0, 9, 26};
    make_plan(&plan, 2, cut, 4, "tp2-dp2", 8, 4);
    set_layers(&plan, 13, 4, "tp4");
    static const struct {
        const char *what, *want;
    } cases[] = {
        {"runs cut", "plan: stages[1].runs: cover 8 layers, but the stage has 17 (layers 9..25"},
        {"count 0", "plan: stages[1].runs[0].count: must be at least 1"},
        {"run before the stage", "plan: stages[1].runs[0]: layers 3..6 (first_layer, count) are "
                                 "not inside the stage's layers 9..25"},
        {"strategy absent", "plan: stages[1].runs[1].strategy: missing or not a string"},
        {"strategy bad", "plan: stages[1].runs[1].strategy: strategy \"tp2-bogus\""},
        {"n_layers absent", "plan: stages[1].n_layers: missing or 0"},
        {"first_layer off", "plan: stages[1].first_layer: 8, but the stages before it end before "
                            "layer 9"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *doc = tsl_plan_to_json(&plan);
        json_t *st = json_array_get(json_object_get(doc, "stages"), 1);
        json_t *runs = json_object_get(st, "runs");
        json_t *r0 = json_array_get(runs, 0), *r1 = json_array_get(runs, 1);
        CHECK(json_array_size(runs) == 3, "stage 1 has three runs (dp, tp4, dp)");
        if (i == 0)
            json_array_remove(runs, 2);
        else if (i == 1)
            json_object_set_new(r0, "count", json_integer(0));
        else if (i == 2)
            json_object_set_new(r0, "first_layer", json_integer(3));
        else if (i == 3)
            json_object_del(r1, "strategy");
        else if (i == 4)
            json_object_set_new(r1, "strategy", json_string("tp2-bogus"));
        else if (i == 5)
            json_object_del(st, "n_layers");
        else
            json_object_set_new(st, "first_layer", json_integer(8));
        tsl_plan_t back;
        tsl_err_t err = {0};
        CHECK(tsl_plan_from_json(doc, &back, &err) == -1 && strstr(err.msg, cases[i].want),
              "%s: %s", cases[i].what, err.msg);
        json_decref(doc);
    }
}

/* The daemon's export of a stored plan (tsl_export_stored): the model rebuilt from the
 * stored request with its MTP depths (mtp_layers 2: 26 + 2 x 3 = 32 layers, the plan's),
 * so the Megatron-LM line trains them; without them the 32-layer plan is not the
 * 26-layer model's and is refused. */
static void test_stored_mtp(void)
{
    tsl_model_t saved = model, two = {0};
    tsl_err_t err = {0};
    CHECK(tsl_model_preset("GPT2-345M", &two, &err) == 0 && tsl_model_set_mtp(&two, 2, &err) == 0,
          "%s", err.msg);
    model = two;
    make_plan(&plan, 2, (const uint32_t[]){0, 13, model.n_layers}, 4, "tp2-dp2", 8, 4);
    json_t *result = json_pack("{s:o}", "plan", tsl_plan_to_json(&plan));
    char *doc = json_dumps(result, JSON_COMPACT), *text = NULL;
    size_t len = 0;
    CHECK(tsl_export_stored(TSL_EXPORT_MEGATRON,
                            "{\"model_preset\": \"GPT2-345M\", "
                            "\"mtp_layers\": 2}",
                            doc, &text, &len, &err) == 0 &&
              strstr(text, "--mtp-num-layers 2\n") && strstr(text, "--num-layers 24\n"),
          "stored, 2 depths: %s\n%s", err.msg, text ? text : "");
    free(text);
    text = NULL;
    CHECK(tsl_export_stored(TSL_EXPORT_MEGATRON, "{\"model_preset\": \"GPT2-345M\"}", doc, &text,
                            &len, &err) == -1 &&
              text == NULL,
          "a 32-layer plan on the 26-layer model is refused");
    free(doc);
    json_decref(result);
    tsl_model_free(&two);
    model = saved;
}

/* A plan tesseld stored before cost model 89 for a cluster of GPUs without bf16 (V100,
 * T4) says neither fp16 nor fp32: it was priced in bf16, which they do not run. Its
 * stack exports are refused, naming the GPU and the way out (plan again), where they
 * wrote --bf16 / DeepSpeed's bf16 section; the same plan stored since (fp16), or for
 * A100s, or read as its trace, exports as before. */
static void test_stored_old_bf16(void)
{
    static const char v100[] =
        "{\"model_preset\": \"GPT2-345M\", \"cluster_spec\": \"8xV100-32G\"}";
    static const char t4[] = "{\"model_preset\": \"GPT2-345M\", \"cluster_spec\": "
                             "\"2x4xT4:ib100\"}";
    static const char a100[] = "{\"model_preset\": \"GPT2-345M\", \"cluster_spec\": "
                               "\"8xA100-80G\"}";
    make_plan(&plan, 2, (const uint32_t[]){0, 13, model.n_layers}, 4, "tp2-dp2", 8, 4);
    json_t *result = json_pack("{s:o}", "plan", tsl_plan_to_json(&plan));
    char *doc = json_dumps(result, JSON_COMPACT), *text = NULL;
    size_t len = 0;
    tsl_err_t err = {0};
    CHECK(!strstr(doc, "\"fp16\""), "the old shape has no fp16 key: %s", doc);
    static const tsl_export_format_t fmts[] = {TSL_EXPORT_MEGATRON, TSL_EXPORT_DEEPSPEED,
                                               TSL_EXPORT_TORCHTITAN, TSL_EXPORT_GALVATRON};
    for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
        const char *name = tsl_export_format_name(fmts[i]);
        err = (tsl_err_t){0};
        CHECK(tsl_export_stored(fmts[i], v100, doc, &text, &len, &err) == -1 && text == NULL &&
                  tsl_err_code(&err) == TSL_E_UNSUPPORTED &&
                  strstr(err.msg, "priced in bf16, but the V100-32G of its cluster has no bf16") &&
                  strstr(err.msg, "plan it again"),
              "%s: an old bf16 plan on V100s: %s\n%s", name, err.msg, text ? text : "");
        free(text);
        text = NULL;
    }
    err = (tsl_err_t){0};
    CHECK(tsl_export_stored(TSL_EXPORT_MEGATRON, t4, doc, &text, &len, &err) == -1 &&
              strstr(err.msg, "the T4-16G of its cluster"),
          "T4: %s", err.msg);
    free(text);
    text = NULL;
    CHECK(tsl_export_stored(TSL_EXPORT_TRACE, v100, doc, &text, &len, &err) == 0 && text,
          "the trace of the stored figures: %s", err.msg);
    free(text);
    text = NULL;
    CHECK(tsl_export_stored(TSL_EXPORT_MEGATRON, a100, doc, &text, &len, &err) == 0 &&
              strstr(text, "\n--bf16\n"),
          "A100s: %s", err.msg);
    free(text);
    text = NULL;
    free(doc);
    plan.fp16 = true; /* stored since cost model 89 */
    json_object_set_new(result, "plan", tsl_plan_to_json(&plan));
    doc = json_dumps(result, JSON_COMPACT);
    CHECK(tsl_export_stored(TSL_EXPORT_MEGATRON, v100, doc, &text, &len, &err) == 0 &&
              strstr(text, "\n--fp16\n") && !strstr(text, "--bf16"),
          "an fp16 plan on V100s: %s", err.msg);
    free(text);
    plan.fp16 = false;
    free(doc);
    json_decref(result);
}

/* Every model switch the search applies (search.h tsl_request_model_switches) is
 * applied by the stored plan's export too, so that it is plan --local --export's:
 * the export of a stored request with unfused_attn, no_dropout, blocks kept bf16
 * and an MTP depth under --target megatron equals the export of the same plan on
 * the model the search built, in every format (the trace included). */
static void test_stored_switches(void)
{
    static const char req[] = "{\"model_preset\": \"GPT2-345M\", \"target\": 1, \"mtp_layers\": 1, "
                              "\"unfused_attn\": true, \"no_dropout\": true, \"fp8_recipe\": 1, "
                              "\"bf16_layers_start\": 1, \"bf16_layers_end\": 2, "
                              "\"recompute_modules\": 0}";
    tsl_model_t saved = model, own = {0};
    const tsl_model_t *built = NULL;
    tsl_err_t err = {0};
    tsl_request_t r;
    json_t *jr = json_loads(req, 0, NULL);
    tsl_request_from_json(jr, &r);
    json_decref(jr);
    tsl_model_switches_t sw = tsl_request_model_switches(&r);
    CHECK(tsl_model_for_request(&saved, &sw, &own, &built, &err) == 0 && built == &own,
          "the switches: %s", err.msg);
    model = own;
    /* 26 + 1 x 3 = 29 layers, the last 3 the depth's */
    make_plan(&plan, 2, (const uint32_t[]){0, 14, model.n_layers}, 4, "tp2-dp2", 8, 4);
    plan.fp8_recipe = 1;
    plan.bf16_layers_start = 1;
    plan.bf16_layers_end = 2;
    json_t *result = json_pack("{s:o}", "plan", tsl_plan_to_json(&plan));
    char *doc = json_dumps(result, JSON_COMPACT | JSON_REAL_PRECISION(17));
    static const tsl_export_format_t fs[] = {TSL_EXPORT_MEGATRON, TSL_EXPORT_DEEPSPEED,
                                             TSL_EXPORT_TORCHTITAN, TSL_EXPORT_GALVATRON,
                                             TSL_EXPORT_TRACE};
    for (size_t k = 0; k < sizeof fs / sizeof fs[0]; k++) {
        char *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        tsl_err_t ea = {0}, eb = {0};
        int ra = fs[k] == TSL_EXPORT_TRACE ? -2 : tsl_export(fs[k], &plan, &model, &a, &na, &ea);
        if (fs[k] == TSL_EXPORT_TRACE) {
            json_t *t = tsl_trace_plan(&plan, &model, &ea);
            a = t ? json_dumps(t, JSON_COMPACT | JSON_REAL_PRECISION(12)) : NULL;
            ra = a ? 0 : -1;
            json_decref(t);
        }
        int rb = tsl_export_stored(fs[k], req, doc, &b, &nb, &eb);
        CHECK(ra == rb && (ra != 0 || strcmp(a, b) == 0) && (ra == 0 || !strcmp(ea.msg, eb.msg)),
              "format %d: stored %d '%s' vs direct %d '%s'\n%s\n----\n%s", (int)fs[k], rb, eb.msg,
              ra, ea.msg, b ? b : "", a ? a : "");
        free(a);
        free(b);
    }
    /* the switches are applied, not only read: 20 + 10 blocks kept bf16 are more than
     * GPT2-345M's 24 (the MTP depth is none), refused as the search refuses them */
    char *text = NULL;
    size_t len = 0;
    CHECK(tsl_export_stored(TSL_EXPORT_MEGATRON,
                            "{\"model_preset\": \"GPT2-345M\", \"target\": 1, \"mtp_layers\": 1, "
                            "\"bf16_layers_start\": 20, \"bf16_layers_end\": 10}",
                            doc, &text, &len, &err) == -1 &&
              text == NULL && strstr(err.msg, "bf16_layers_start"),
          "30 bf16 blocks of 24: '%s'", err.msg);
    free(doc);
    json_decref(result);
    tsl_model_free(&own);
    model = saved;
}

/* Whether a call refused naming recompute_modules: rc, and the field or its phrase in
 * the message (err cleared for the next call). */
static bool refused_recompute(int rc, tsl_err_t *err)
{
    bool named = rc != 0 && (strstr(err->msg, "recompute_modules") != NULL ||
                             strstr(err->msg, "recomputes modules (") != NULL);
    memset(err, 0, sizeof *err);
    return named;
}

/* One rule for which recompute_modules a stack runs (target.h tsl_target_recompute_runs):
 * for every target and policy, the request check (search.c, tsl_request_validate), the
 * target's rules (target_rules.c, tsl_target_check) and the exports of its formats
 * (export.c) refuse naming the field exactly where the predicate says no — a caller with
 * a rule of its own fails here. Before, the request and the rules under megatron took
 * torchtitan_op, which its export alone refused, so `plan --target megatron
 * --recompute-modules torchtitan_op --export megatron` searched a plan it then refused. */
static void test_recompute_one_rule(void)
{
    static const uint32_t masks[] = {0, TSL_RECOMPUTE_MLP,
                                     TSL_RECOMPUTE_MOE_ACT | TSL_RECOMPUTE_LAYERNORM,
                                     TSL_RECOMPUTE_TORCHTITAN_OP};
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(&c, "8xA100-80G", &err) == 0, "%s", err.msg);
    tsl_target_view_t *view = malloc(sizeof *view);
    CHECK(tsl_target_recompute_runs(TSL_TARGET_MEGATRON, TSL_RECOMPUTE_MLP) &&
              !tsl_target_recompute_runs(TSL_TARGET_MEGATRON, TSL_RECOMPUTE_TORCHTITAN_OP) &&
              tsl_target_recompute_runs(TSL_TARGET_TORCHTITAN, TSL_RECOMPUTE_TORCHTITAN_OP) &&
              !tsl_target_recompute_runs(TSL_TARGET_TORCHTITAN, TSL_RECOMPUTE_MLP) &&
              !tsl_target_recompute_runs(TSL_TARGET_DEEPSPEED, TSL_RECOMPUTE_TORCHTITAN_OP) &&
              tsl_target_recompute_runs(TSL_TARGET_ANY, TSL_RECOMPUTE_TORCHTITAN_OP),
          "the predicate");
    for (uint32_t t = TSL_TARGET_MEGATRON; t < TSL_TARGET_COUNT && view; t++) {
        for (size_t k = 0; k < sizeof masks / sizeof masks[0]; k++) {
            bool no = !tsl_target_recompute_runs(t, masks[k]);
            tsl_request_t r;
            tsl_request_init(&r);
            r.target = t;
            r.recompute_modules = masks[k];
            int rc = tsl_request_validate(&r, &model, &c, &err);
            CHECK(refused_recompute(rc, &err) == no, "request, %s, 0x%x: rc %d", tsl_target_name(t),
                  masks[k], rc);
            make_plan(&plan, 1, (const uint32_t[]){0, 26}, 8, "dp8", 8, 4);
            plan.recompute_modules = masks[k];
            rc = tsl_target_check(t, &plan, &model, view, &err);
            CHECK(refused_recompute(rc, &err) == no, "rules, %s, 0x%x: rc %d", tsl_target_name(t),
                  masks[k], rc);
            for (int f = 0; f <= TSL_EXPORT_TORCHTITAN_TOML; f++) {
                int k2 = f == TSL_EXPORT_TORCHTITAN_TOML ? TSL_EXPORT_TORCHTITAN : f;
                if (f == TSL_EXPORT_TRACE || f == TSL_EXPORT_COUNT || (uint32_t)k2 + 1 != t)
                    continue;
                char *text = NULL;
                size_t len;
                rc = export_fixture((tsl_export_format_t)f, &plan, &text, &len, &err);
                CHECK(refused_recompute(rc, &err) == no, "export %s, 0x%x: rc %d",
                      tsl_export_format_name((tsl_export_format_t)f), masks[k], rc);
                free(text);
            }
        }
    }
    plan.recompute_modules = 0;
    free(view);
    tsl_cluster_free(&c);
}

/* test_export --megatron-te-prec RECIPE LIST: the megatron export of a DP-8 GPT2-345M
 * plan at fp8 recipe RECIPE with module_precision LIST, on stdout, for
 * te_precision_yaml_test.py (Megatron-LM's reader of the YAML is Python). */
static int print_te_prec(const char *recipe, const char *list)
{
    tsl_err_t err = {0};
    make_plan(&plan, 1, (const uint32_t[]){0, 26}, 8, "dp8", 8, 4);
    int r = tsl_fp8_recipe_parse(recipe);
    plan.fp8_recipe = r > 0 ? (uint32_t)r : TSL_FP8_NONE;
    char *text = NULL;
    size_t len;
    if (tsl_module_prec_parse(list, &plan.module_prec, &err) != 0 ||
        tsl_export(TSL_EXPORT_MEGATRON, &plan, &model, &text, &len, &err) != 0) {
        fprintf(stderr, "test_export: %s\n", err.msg);
        return 1;
    }
    fputs(text, stdout);
    free(text);
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = getenv("TSL_TESTDATA");
    snprintf(data_dir, sizeof data_dir, "%s", dir ? dir : "tests/data");
    CHECK(tsl_model_preset("GPT2-345M", &model, NULL) == 0 && model.n_layers == 26, "GPT2-345M");
    if (argc == 4 && strcmp(argv[1], "--megatron-te-prec") == 0) {
        int rc = print_te_prec(argv[2], argv[3]);
        tsl_model_free(&model);
        return rc;
    }
    test_stored_mtp();
    test_stored_old_bf16();
    test_stored_switches();
    test_megatron();
    test_megatron_model();
    test_megatron_moe_freq();
    test_megatron_gpt_oss();
    test_megatron_modules();
    test_megatron_vp_group();
    test_megatron_account();
    test_megatron_hybrid_vp();
    test_megatron_hybrid_uneven();
    test_torchtitan_moe();
    test_megatron_moe_etp();
    test_megatron_router();
    test_deepspeed();
    test_deepspeed_autotp_batch();
    test_deepspeed_engine();
    test_deepspeed_pipe_tp();
    test_torchtitan();
    test_fp32();
    test_fp16();
    test_local_impl();
    test_placement();
    test_side_notes();
    test_zero_bubble();
    test_galvatron();
    test_galvatron_rules();
    test_refusals();
    test_cpu_offload();
    test_mxfp8_param_ag();
    test_tp_comm_overlap();
    test_cuda_graphs();
    test_precision_fields();
    test_megatron_te_prec();
    test_recompute_one_rule();
    test_moe_flex_overlap();
    test_common_refusals();
    test_roundtrip();
    test_doc_stage_refusals();
    tsl_model_free(&model);
    return CHECK_DONE();
}

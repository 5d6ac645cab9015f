/* Tests for common/eval_cfg: launch configurations as plans, and the round trip
 * plan -> Megatron-LM arguments / torchtitan TOML -> plan with the same figures. */
#include <string.h>

#include "check.h"
#include "cuda_graph.h"
#include "eval.h"
#include "eval_cfg.h"
#include "megatron_flags.h"
#include "module_prec.h"
#include "export.h"

static void load(const char *model, const char *cluster, tsl_model_t *m, tsl_cluster_t *c)
{
    tsl_err_t err;
    if (tsl_model_preset(model, m, &err) != 0 || tsl_cluster_parse_spec(c, cluster, &err) != 0) {
        fprintf(stderr, "setup %s on %s: %s\n", model, cluster, err.msg);
        exit(2);
    }
}

/* cfg -> plan -> eval -> export f -> parse -> plan -> eval: the same figures. */
static void round_trip(const char *model, const char *cluster, const tsl_eval_cfg_t *cfg_in,
                       tsl_export_format_t f)
{
    /* torchtitan reduces in float32 only: its plans are priced so (the
     * executor's 16-bit reduce exports to Megatron-LM as --grad-reduce-in-bf16) */
    tsl_eval_cfg_t copy = *cfg_in, *cfg = &copy;
    if (f != TSL_EXPORT_MEGATRON && !copy.knobs.no_fp32_master) {
        tsl_target_knobs(TSL_TARGET_TORCHTITAN, &copy.knobs);
        copy.knobs.fp8 = cfg_in->knobs.fp8;
        copy.knobs.ep = cfg_in->knobs.ep;
        copy.knobs.fp32 = cfg_in->knobs.fp32;
    }
    /* Megatron-LM always runs the backward's TP collectives under the gradient
     * GEMMs (no flag turns it off): its plans are priced so */
    if (f == TSL_EXPORT_MEGATRON)
        copy.knobs.overlap_tp_dgrad = true;
    /* and each stack's LM loss is its own (loss_impl.h): an import reads it back so
     * (TE's fused loss is not exported: today's Megatron-LM refuses it; the native
     * fusion is, as --cross-entropy-loss-fusion) */
    copy.knobs.loss_impl = f != TSL_EXPORT_MEGATRON ? TSL_LOSS_TORCH
                           : cfg_in->knobs.loss_impl == TSL_LOSS_MEGATRON_FUSED
                               ? TSL_LOSS_MEGATRON_FUSED
                               : TSL_LOSS_MEGATRON;
    /* and each stack steps its own way (opt_step.h): Megatron-LM's MixedPrecision-
     * Optimizer (the export's --bf16), torchtitan's foreach AdamW after clipping */
    if (copy.knobs.opt_step == TSL_OPT_STEP_FUSED)
        copy.knobs.opt_step = f == TSL_EXPORT_MEGATRON ? TSL_OPT_STEP_MEGATRON : TSL_OPT_STEP_TORCH;
    /* and the export names Megatron-LM's all-to-all dispatcher (the flex one with an FP8
     * dispatch), which an import reads back: priced so (a dense model has no dispatch) */
    if (f == TSL_EXPORT_MEGATRON)
        copy.knobs.moe_alltoall = !copy.knobs.moe_fp8_dispatch;
    /* and torchtitan's FSDP2 keeps no gradient buffer (lazy_grads), which its import
     * reads back */
    if (f != TSL_EXPORT_MEGATRON)
        copy.knobs.lazy_grads = true;
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    tsl_request_t r;
    tsl_request_init(&r);
    load(model, cluster, &m, &c);
    /* torchtitan refuses weight tying with pipeline parallelism (target.h
     * tsl_target_tied_pp_refused): its round trips of stages run the GPTs' head
     * untied, in both directions alike (the export writes nothing of the tie) */
    tsl_layer_t *head = &m.layers[m.n_layers - 1];
    if (f != TSL_EXPORT_MEGATRON && cfg->pp > 1 && head->kind == TSL_LAYER_HEAD)
        head->tied_head = false;
    static tsl_plan_t g, a, g2, b;
    char *text = NULL;
    size_t len;
    const char *fmt = tsl_export_format_name(f);
    CHECK(tsl_eval_cfg_plan(cfg, &m, c.n_devices, &g, &err) == 0, "%s: cfg: %s", fmt, err.msg);
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &a, &err) == 0, "%s: eval: %s", fmt, err.msg);
    int exported = tsl_export(f, &a, &m, &text, &len, &err);
    CHECK(exported == 0, "%s: export: %s", fmt, err.msg);
    if (exported != 0)
        goto out; /* nothing to parse */
    tsl_eval_cfg_t back;
    int rc = f == TSL_EXPORT_MEGATRON ? tsl_eval_cfg_megatron(text, &back, &err)
                                      : tsl_eval_cfg_torchtitan(text, &back, &err);
    CHECK(rc == 0, "%s: parse: %s\n%s", fmt, err.msg, text);
    CHECK(tsl_eval_cfg_plan(&back, &m, c.n_devices, &g2, &err) == 0, "%s: back: %s", fmt, err.msg);
    CHECK(tsl_eval_plan(&m, &c, &r, &g2, &b, &err) == 0, "%s: eval back: %s", fmt, err.msg);
    CHECK(tsl_eval_same_figures(&a, &b), "%s round trip: %.9g s vs %.9g s\n%s", fmt, a.iter_time_s,
          b.iter_time_s, text);
    CHECK(a.grad_reduce_bytes == b.grad_reduce_bytes && a.no_fp32_master == b.no_fp32_master &&
              a.grad_reduce_exposed == b.grad_reduce_exposed &&
              a.overlap_param_gather == b.overlap_param_gather &&
              a.grad_reduce_bytes == cfg->knobs.grad_reduce_bytes &&
              a.grad_reduce_exposed == cfg->knobs.grad_reduce_exposed &&
              a.overlap_param_gather == cfg->knobs.overlap_param_gather &&
              a.overlap_tp_dgrad == b.overlap_tp_dgrad &&
              a.overlap_tp_dgrad == cfg->knobs.overlap_tp_dgrad && a.fp8_recipe == b.fp8_recipe &&
              a.fp8_recipe == cfg->knobs.fp8 && a.ep == b.ep &&
              a.ep == (cfg->knobs.ep > 1 ? cfg->knobs.ep : 0) &&
              a.recompute_modules == b.recompute_modules &&
              a.recompute_modules == cfg->knobs.recompute_modules &&
              a.cuda_graph_modules == b.cuda_graph_modules &&
              a.cuda_graph_modules == cfg->knobs.cuda_graph_modules &&
              a.bf16_moments == b.bf16_moments && a.bf16_moments == cfg->knobs.bf16_moments &&
              a.loss_impl == b.loss_impl && a.loss_impl == cfg->knobs.loss_impl &&
              a.opt_step == b.opt_step && a.opt_step == cfg->knobs.opt_step && a.fp32 == b.fp32 &&
              a.fp32 == cfg->knobs.fp32 && a.tf32_off == b.tf32_off &&
              a.tf32_off == (cfg->knobs.fp32 && cfg->knobs.tf32_off) &&
              a.module_prec == b.module_prec && a.module_prec == cfg->knobs.module_prec,
          "%s round trip: the plan's precision, overlap and ep kept (fp8 %u %u %u, ep %u %u, "
          "module_precision 0x%x 0x%x)\n%s",
          fmt, a.fp8_recipe, b.fp8_recipe, cfg->knobs.fp8, a.ep, b.ep, a.module_prec, b.module_prec,
          text);
out:
    free(text);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

static void test_round_trips(void)
{
    tsl_eval_cfg_t cfg = {.tp = 2,
                          .pp = 2,
                          .mbs = 2,
                          .global_batch = 64,
                          .ckpt = TSL_EVAL_CKPT_FULL,
                          .even_blocks = true};
    round_trip("GPT2-345M", "8xA100-80G", &cfg, TSL_EXPORT_MEGATRON);
    /* TE's fused loss is not exported: Megatron-LM refuses it since 168cb15d70
     * (tests/test_export.c); an older line's --cross-entropy-fusion-impl te is still
     * read as loss_impl te (the line tests below) */
    /* Megatron-core's native loss fusion (cost model 186): written as
     * --cross-entropy-loss-fusion, read back as loss_impl megatron-fused */
    tsl_eval_cfg_t fused = cfg;
    fused.knobs.loss_impl = TSL_LOSS_MEGATRON_FUSED;
    round_trip("GPT2-345M", "8xA100-80G", &fused, TSL_EXPORT_MEGATRON);
    /* an fp16 plan under Megatron-core's step with the loss scaler: written as --fp16
     * (with its fp32 reduce), read back so */
    tsl_eval_cfg_t fp16 = cfg;
    fp16.knobs.fp16 = true;
    fp16.knobs.opt_step = TSL_OPT_STEP_MEGATRON_CORE_FP16;
    round_trip("GPT2-345M", "8xA100-80G", &fp16, TSL_EXPORT_MEGATRON);
    fp16.knobs.grad_reduce_bytes = 4;
    round_trip("GPT2-345M", "8xA100-80G", &fp16, TSL_EXPORT_MEGATRON);
    /* torchtitan's TP is sequence-parallel, and beside TP or stages its data
     * parallelism is sharded (it refuses DDP there): the plans it runs, in both
     * the Python form and the TOML */
    cfg.sp = true;
    cfg.sdp = 2;
    round_trip("GPT2-345M", "8xA100-80G", &cfg, TSL_EXPORT_TORCHTITAN);
    round_trip("GPT2-345M", "8xA100-80G", &cfg, TSL_EXPORT_TORCHTITAN_TOML);
    /* uneven split (by FLOPs: the embedding and head weigh), no checkpointing */
    tsl_eval_cfg_t uneven = {.tp = 4, .pp = 2, .mbs = 1, .n_micro = 8};
    round_trip("GPT2-1.3B", "2x8xA100-40G:ib100", &uneven, TSL_EXPORT_MEGATRON);
    uneven.sp = true;
    uneven.sdp = 2;
    round_trip("GPT2-1.3B", "2x8xA100-40G:ib100", &uneven, TSL_EXPORT_TORCHTITAN);
    round_trip("GPT2-1.3B", "2x8xA100-40G:ib100", &uneven, TSL_EXPORT_TORCHTITAN_TOML);
    tsl_eval_cfg_t fsdp = {.sdp = 8, .mbs = 2, .global_batch = 64};
    round_trip("GPT2-345M", "8xA100-80G", &fsdp, TSL_EXPORT_TORCHTITAN);
    round_trip("GPT2-345M", "8xA100-80G", &fsdp, TSL_EXPORT_TORCHTITAN_TOML);
    /* mixture of experts: Mixtral's experts over 8 EP ranks (the TP and FSDP
     * ranks of a stage), with Megatron-LM and torchtitan */
    tsl_eval_cfg_t moe = {.tp = 2,
                          .sp = true,
                          .pp = 2,
                          .sdp = 4,
                          .mbs = 1,
                          .global_batch = 64,
                          .ckpt = TSL_EVAL_CKPT_FULL,
                          .even_blocks = true,
                          .knobs = {.ep = 8}};
    round_trip("Mixtral-8x7B", "2x8xH100-80G:8xib400", &moe, TSL_EXPORT_TORCHTITAN);
    round_trip("Mixtral-8x7B", "2x8xH100-80G:8xib400", &moe, TSL_EXPORT_TORCHTITAN_TOML);
    moe.sdp = 0;
    round_trip("Mixtral-8x7B", "2x8xH100-80G:8xib400", &moe, TSL_EXPORT_MEGATRON);
    /* Megatron's recompute modules and its precision-aware optimizer's bf16
     * moments (--recompute-modules, --exp-avg-dtype): exported and read back */
    moe.ckpt = TSL_EVAL_CKPT_SELECTIVE;
    moe.zero = 1;
    moe.knobs.recompute_modules = TSL_RECOMPUTE_MOE_ACT | TSL_RECOMPUTE_LAYERNORM;
    moe.knobs.bf16_moments = true;
    round_trip("Mixtral-8x7B", "2x8xH100-80G:8xib400", &moe, TSL_EXPORT_MEGATRON);
    /* Megatron-core's per-layer CUDA graphs (cuda_graph_modules): written as
     * --cuda-graph-impl transformer_engine --cuda-graph-modules ..., read back the same */
    moe.knobs.cuda_graph_modules = TSL_CUDA_GRAPH_ATTN | TSL_CUDA_GRAPH_MOE_ROUTER;
    round_trip("Mixtral-8x7B", "2x8xH100-80G:8xib400", &moe, TSL_EXPORT_MEGATRON);
    moe.knobs.cuda_graph_modules |= TSL_CUDA_GRAPH_MOE_PREPROCESS;
    round_trip("Mixtral-8x7B", "2x8xH100-80G:8xib400", &moe, TSL_EXPORT_MEGATRON);
    moe.knobs.cuda_graph_modules = 0;
    tsl_eval_cfg_t dense = {.tp = 2, .pp = 2, .mbs = 2, .global_batch = 64, .even_blocks = true};
    dense.knobs.cuda_graph_modules = TSL_CUDA_GRAPH_ATTN | TSL_CUDA_GRAPH_MLP;
    round_trip("GPT2-345M", "8xA100-80G", &dense, TSL_EXPORT_MEGATRON);
    moe.ckpt = TSL_EVAL_CKPT_NONE; /* modules without the attention core */
    moe.knobs.recompute_modules = TSL_RECOMPUTE_MOE;
    moe.knobs.grad_reduce_bytes = 4;
    round_trip("Mixtral-8x7B", "2x8xH100-80G:8xib400", &moe, TSL_EXPORT_MEGATRON);
    /* per-module precision: the export's te_precision.yaml (its "#| " lines) read back
     * by --megatron-args (megatron_te_prec.h) to the same overrides and figures; before,
     * the line was refused (--te-precision-config-file not read) */
    tsl_err_t err = {0};
    tsl_eval_cfg_t prec = {.tp = 2, .pp = 2, .mbs = 2, .global_batch = 64, .even_blocks = true};
    prec.knobs.fp8 = TSL_FP8_TENSORWISE;
    CHECK(tsl_module_prec_parse("linear_qkv=bf16,linear_proj=blockwise,linear_fc1=mxfp8,"
                                "linear_fc2=nvfp4",
                                &prec.knobs.module_prec, &err) == 0,
          "%s", err.msg);
    round_trip("GPT2-345M", "8xB200-180G", &prec, TSL_EXPORT_MEGATRON);
    moe.knobs.fp8 = TSL_FP8_MXFP8; /* the experts stay at the recipe */
    CHECK(tsl_module_prec_parse("linear_qkv=bf16,linear_proj=tensorwise", &moe.knobs.module_prec,
                                &err) == 0,
          "%s", err.msg);
    round_trip("Mixtral-8x7B", "2x8xB200-180G:8xib400", &moe, TSL_EXPORT_MEGATRON);
}

static void mg_refuses(const char *line, const char *want);
static void tt_refuses(const char *text, const char *want1, const char *want2);

/* Megatron-LM's --recompute-modules and the precision-aware optimizer's dtypes
 * (TransformerConfig.recompute_modules, OptimizerConfig at d98e8a6), read. */
static void mg_modules(const char *line, tsl_eval_ckpt_t ckpt, uint32_t mods, bool moments,
                       uint32_t grad)
{
    tsl_eval_cfg_t c;
    tsl_err_t err = {0};
    CHECK(tsl_eval_cfg_megatron(line, &c, &err) == 0, "'%s': %s", line, err.msg);
    CHECK(c.ckpt == ckpt && c.knobs.recompute_modules == mods && c.knobs.bf16_moments == moments &&
              c.knobs.grad_reduce_bytes == grad,
          "'%s': ckpt %d modules 0x%x moments %d grad %u", line, c.ckpt, c.knobs.recompute_modules,
          c.knobs.bf16_moments, c.knobs.grad_reduce_bytes);
}

static void test_megatron_modules(void)
{
    const char *sel = "--bf16 --recompute-granularity selective";
    char line[512];
    snprintf(line, sizeof line, "%s --recompute-modules core_attn moe_act mla_up_proj", sel);
    mg_modules(line, TSL_EVAL_CKPT_SELECTIVE, TSL_RECOMPUTE_MOE_ACT | TSL_RECOMPUTE_MLA_UP_PROJ,
               false, 4);
    /* without core_attn the layers keep their attention core */
    snprintf(line, sizeof line, "%s --recompute-modules mla_up_proj mlp --use-mcore-models", sel);
    mg_modules(line, TSL_EVAL_CKPT_NONE, TSL_RECOMPUTE_MLA_UP_PROJ | TSL_RECOMPUTE_MLP, false, 4);
    snprintf(line, sizeof line, "%s --recompute-modules", sel); /* an empty list: none */
    mg_modules(line, TSL_EVAL_CKPT_NONE, 0, false, 4);
    mg_modules(sel, TSL_EVAL_CKPT_SELECTIVE, 0, false, 4); /* Megatron's default, core_attn */
    mg_modules("--bf16 --moe-layer-recompute", TSL_EVAL_CKPT_SELECTIVE, TSL_RECOMPUTE_MOE, false,
               4);
    mg_modules("--bf16 --recompute-modules moe_act", TSL_EVAL_CKPT_NONE, 0, false, 4);
    snprintf(line, sizeof line, "%s --recompute-modules moe_act bogus", sel);
    mg_refuses(line, "'bogus' is not a module");
    mg_refuses("--bf16 --recompute-granularity full --recompute-method uniform "
               "--recompute-num-layers 1 --moe-layer-recompute",
               "moe-layer-recompute");
    /* DeepSeek-V3's optimizer in Megatron-Bridge: bf16 moments and main gradients */
    mg_modules("--bf16 --use-distributed-optimizer --use-precision-aware-optimizer "
               "--main-grads-dtype bf16 --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16",
               TSL_EVAL_CKPT_NONE, 0, true, 0);
    mg_modules("--bf16 --use-distributed-optimizer --use-precision-aware-optimizer "
               "--exp-avg-dtype fp16 --exp-avg-sq-dtype fp16",
               TSL_EVAL_CKPT_NONE, 0, true, 4);
    mg_refuses("--bf16 --use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype "
               "bf16",
               "only supported with distributed optimizer");
    mg_refuses("--bf16 --use-distributed-optimizer --exp-avg-dtype bf16", "need "
                                                                          "--use-precision-aware");
    mg_refuses("--bf16 --use-distributed-optimizer --use-precision-aware-optimizer "
               "--exp-avg-dtype bf16",
               "both moments");
    mg_refuses("--bf16 --use-distributed-optimizer --use-precision-aware-optimizer "
               "--exp-avg-dtype fp8 --exp-avg-sq-dtype fp8",
               "fp8");
    mg_refuses("--bf16 --use-distributed-optimizer --use-precision-aware-optimizer "
               "--main-params-dtype fp16",
               "fp32 master");
    mg_refuses("--bf16 --main-grads-dtype fp16", "fp32 or bf16");
    /* eval refuses mla_up_proj on a model without latent attention (Megatron does) */
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    tsl_request_t r;
    static tsl_plan_t g, a;
    tsl_request_init(&r);
    load("Mixtral-8x7B", "2x8xH100-80G:8xib400", &m, &c);
    tsl_eval_cfg_t cfg = {.pp = 2,
                          .mbs = 1,
                          .global_batch = 64,
                          .ckpt = TSL_EVAL_CKPT_FULL,
                          .even_blocks = true,
                          .knobs = {.ep = 8, .recompute_modules = TSL_RECOMPUTE_MLA_UP_PROJ}};
    CHECK(tsl_eval_cfg_plan(&cfg, &m, c.n_devices, &g, &err) == 0, "%s", err.msg);
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &a, &err) == -1 && strstr(err.msg, "mla_up_proj"),
          "mla_up_proj on Mixtral: %s", err.msg);
    /* the other exports have no module recompute or bf16 moments: refused by name */
    cfg.knobs.recompute_modules = TSL_RECOMPUTE_MOE_ACT;
    char *text = NULL;
    size_t len;
    CHECK(tsl_eval_cfg_plan(&cfg, &m, c.n_devices, &g, &err) == 0 &&
              tsl_eval_plan(&m, &c, &r, &g, &a, &err) == 0,
          "%s", err.msg);
    CHECK(tsl_export(TSL_EXPORT_TORCHTITAN, &a, &m, &text, &len, &err) == -1 &&
              strstr(err.msg, "recomputes modules (moe_act)"),
          "torchtitan export of module recompute: %s", err.msg);
    free(text);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

/* Gradient precision and overlap through the imports and back (docs/cost-model.md
 * "Precision and overlap"): Megatron-LM's defaults, its --overlap-* flags, the
 * refusals it makes; torchtitan's float32 reduce and bf16 training dtype. */
static void mg_knobs(const char *line, uint32_t grad, bool exposed, bool param)
{
    tsl_eval_cfg_t c;
    tsl_err_t err = {0};
    CHECK(tsl_eval_cfg_megatron(line, &c, &err) == 0, "'%s': %s", line, err.msg);
    CHECK(c.knobs.grad_reduce_bytes == grad && c.knobs.grad_reduce_exposed == exposed &&
              c.knobs.overlap_param_gather == param && !c.knobs.no_fp32_master,
          "'%s': grad %u exposed %d param %d", line, c.knobs.grad_reduce_bytes,
          c.knobs.grad_reduce_exposed, c.knobs.overlap_param_gather);
}

static void test_knobs(void)
{
    const char *base = "--tensor-model-parallel-size 2 --micro-batch-size 1 ";
    char line[256];
    snprintf(line, sizeof line, "%s--bf16", base);
    mg_knobs(line, 4, true, false); /* accumulate_allreduce_grads_in_fp32, no overlap */
    snprintf(line, sizeof line, "%s--bf16 --grad-reduce-in-bf16 --overlap-grad-reduce", base);
    mg_knobs(line, 0, false, false);
    snprintf(line, sizeof line, "%s--fp16", base);
    mg_knobs(line, 0, true, false);
    snprintf(line, sizeof line, "%s--fp16 --accumulate-allreduce-grads-in-fp32", base);
    mg_knobs(line, 4, true, false);
    snprintf(line, sizeof line,
             "%s--bf16 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather",
             base);
    mg_knobs(line, 4, false, true);
    snprintf(line, sizeof line, "%s--bf16 --use-distributed-optimizer --overlap-param-gather",
             base);
    mg_refuses(line, "--overlap-param-gather needs --overlap-grad-reduce");
    snprintf(line, sizeof line, "%s--bf16 --overlap-grad-reduce --overlap-param-gather", base);
    mg_refuses(line, "--use-distributed-optimizer");

    tsl_eval_cfg_t c;
    tsl_err_t err = {0};
    /* --no-gradient-accumulation-fusion: the DDP hook's main_grad.add_ per micro-batch */
    snprintf(line, sizeof line, "%s--bf16", base);
    CHECK(tsl_eval_cfg_megatron(line, &c, &err) == 0 && !c.knobs.unfused_grad_accum,
          "fused gradient accumulation by default (%s)", err.msg);
    snprintf(line, sizeof line, "%s--bf16 --no-gradient-accumulation-fusion", base);
    CHECK(tsl_eval_cfg_megatron(line, &c, &err) == 0 && c.knobs.unfused_grad_accum &&
              c.knobs.grad_reduce_bytes == 4,
          "--no-gradient-accumulation-fusion: unfused, into fp32 main_grad (%s)", err.msg);
    /* --tp-comm-overlap: TE's userbuffers, read as tp_comm_overlap; Megatron-LM asserts SP
     * with it (arguments.py), and SP is switched off at TP 1 before that assert */
    snprintf(line, sizeof line, "%s--bf16", base);
    CHECK(tsl_eval_cfg_megatron(line, &c, &err) == 0 && !c.knobs.tp_comm_overlap,
          "no userbuffers by default (%s)", err.msg);
    snprintf(line, sizeof line, "%s--bf16 --sequence-parallel --tp-comm-overlap", base);
    CHECK(tsl_eval_cfg_megatron(line, &c, &err) == 0 && c.knobs.tp_comm_overlap &&
              c.knobs.overlap_tp_dgrad && c.sp,
          "--tp-comm-overlap with SP (%s)", err.msg);
    snprintf(line, sizeof line, "%s--bf16 --tp-comm-overlap", base);
    mg_refuses(line, "--tp-comm-overlap needs --sequence-parallel");
    snprintf(line, sizeof line,
             "--tensor-model-parallel-size 1 --micro-batch-size 1 --bf16 --sequence-parallel "
             "--tp-comm-overlap");
    mg_refuses(line, "--tp-comm-overlap needs --sequence-parallel");
    /* the LM loss (loss_impl.h): Megatron's vocab_parallel_cross_entropy, its native
     * fusion under torch.compile (megatron-fused, cost model 186; 185 read it as
     * megatron), TE's fused loss with --cross-entropy-fusion-impl te (a line of
     * Megatron-LM before 168cb15d70, which refuses it since) */
    snprintf(line, sizeof line, "%s--bf16", base);
    CHECK(tsl_eval_cfg_megatron(line, &c, &err) == 0 && c.knobs.loss_impl == TSL_LOSS_MEGATRON,
          "megatron's loss by default (%u, %s)", c.knobs.loss_impl, err.msg);
    snprintf(line, sizeof line, "%s--bf16 --cross-entropy-loss-fusion", base);
    CHECK(tsl_eval_cfg_megatron(line, &c, &err) == 0 &&
              c.knobs.loss_impl == TSL_LOSS_MEGATRON_FUSED,
          "the native fusion: megatron-fused (%u, %s)", c.knobs.loss_impl, err.msg);
    snprintf(line, sizeof line,
             "%s--bf16 --cross-entropy-loss-fusion --cross-entropy-fusion-impl native", base);
    CHECK(tsl_eval_cfg_megatron(line, &c, &err) == 0 &&
              c.knobs.loss_impl == TSL_LOSS_MEGATRON_FUSED,
          "native named: megatron-fused (%u, %s)", c.knobs.loss_impl, err.msg);
    snprintf(line, sizeof line,
             "%s--bf16 --cross-entropy-loss-fusion --cross-entropy-fusion-impl te", base);
    CHECK(tsl_eval_cfg_megatron(line, &c, &err) == 0 && c.knobs.loss_impl == TSL_LOSS_TE,
          "TE's fused loss (%u, %s)", c.knobs.loss_impl, err.msg);
    snprintf(line, sizeof line, "%s--bf16 --cross-entropy-fusion-impl triton", base);
    mg_refuses(line, "--cross-entropy-fusion-impl: 'triton' is not native or te");
    CHECK(tsl_eval_cfg_torchtitan("[training]\nlocal_batch_size = 2\n", &c, &err) == 0 &&
              c.knobs.loss_impl == TSL_LOSS_TORCH,
          "torchtitan: torch's loss (%u, %s)", c.knobs.loss_impl, err.msg);
    CHECK(tsl_eval_cfg_torchtitan("[parallelism]\ndata_parallel_shard_degree = 8\n", &c, &err) ==
                  0 &&
              c.knobs.grad_reduce_bytes == 4 && !c.knobs.grad_reduce_exposed &&
              !c.knobs.no_fp32_master,
          "torchtitan: float32 reduce under the backward (%s)", err.msg);
    /* a key given twice is no TOML (tomllib: "Cannot overwrite a value"), so
     * torchtitan would not start: refused naming both lines, not the last taken */
    CHECK(tsl_eval_cfg_torchtitan("[parallelism]\ntensor_parallel_degree = 2\n\n"
                                  "tensor_parallel_degree = 4\n",
                                  &c, &err) == -1 &&
              strstr(err.msg, "line 4: [parallelism] tensor_parallel_degree") &&
              strstr(err.msg, "line 2"),
          "torchtitan: a key given twice is refused: %s", err.msg);
    /* a table given twice is no TOML either (tomllib: "Cannot declare ... twice"):
     * refused naming both lines; it was read as one table (tests/cli_fuzz.py) */
    CHECK(tsl_eval_cfg_torchtitan("[parallelism]\ntensor_parallel_degree = 2\n[training]\n"
                                  "seq_len = 2048\n[parallelism]\npipeline_parallel_degree = 2\n",
                                  &c, &err) == -1 &&
              strstr(err.msg, "line 5: [parallelism] is given again (first on line 1); TOML "
                              "defines a table once"),
          "torchtitan: a table given twice is refused: %s", err.msg);
    /* 0 for the two degrees that take -1: named with what they take (the message
     * said "data_parallel_shard_degree: 0" and no more) */
    tt_refuses("[parallelism]\ndata_parallel_shard_degree = 0\n",
               "line 2: [parallelism] data_parallel_shard_degree: 0 is no degree",
               "-1 (the devices the other degrees leave) or an integer >= 1");
    tt_refuses("[training]\nglobal_batch_size = 0\n",
               "line 2: [training] global_batch_size: 0 is no batch",
               "-1 (local_batch_size x the data-parallel degree) or an integer >= 1");
    /* the same key in two sections is two keys; a Python config may assign twice */
    CHECK(tsl_eval_cfg_torchtitan("[training]\nseq_len = 2048\n[job]\nseq_len = 1\n", &c, &err) ==
              0,
          "torchtitan: one key name in two sections: %s", err.msg);
    CHECK(tsl_eval_cfg_torchtitan("def tessel_plan():\n    p.tensor_parallel_degree = 2\n"
                                  "    p.tensor_parallel_degree = 4\n",
                                  &c, &err) == 0 &&
              c.tp == 4,
          "torchtitan Python: the last assignment holds (%u, %s)", c.tp, err.msg);
    CHECK(tsl_eval_cfg_torchtitan("[training]\ndtype = \"bfloat16\"\n", &c, &err) == 0 &&
              c.knobs.no_fp32_master && c.knobs.grad_reduce_bytes == 0,
          "torchtitan dtype bfloat16: no master, bf16 reduce (%s)", err.msg);

    /* torchtitan's Float8: the converter and recipe keys of both forms */
    CHECK(tsl_eval_cfg_torchtitan("[model]\nconverters = [\"quantize.linear.float8\"]\n"
                                  "[quantize.linear.float8]\nrecipe_name = \"tensorwise\"\n",
                                  &c, &err) == 0 &&
              c.knobs.fp8 == TSL_FP8_TENSORWISE,
          "torchtitan v0.2 float8 converter: tensorwise (%s)", err.msg);
    CHECK(tsl_eval_cfg_torchtitan("[float8]\nenable_float8_linear = true\n", &c, &err) == 0 &&
              c.knobs.fp8 == TSL_FP8_TENSORWISE,
          "torchtitan 2024 enable_float8_linear (%s)", err.msg);
    CHECK(tsl_eval_cfg_torchtitan("[model]\nconverters = [\"float8\"]\n[float8]\n"
                                  "recipe_name = \"rowwise\"\n",
                                  &c, &err) == 0 &&
              c.knobs.fp8 == TSL_FP8_TENSORWISE && strstr(c.notes, "rowwise"),
          "torchtitan rowwise: priced as tensorwise, noted (%s)", err.msg);
    CHECK(tsl_eval_cfg_torchtitan("[model]\nconverters = [\"quantize.linear.float8\"]\n"
                                  "[quantize.linear.float8]\nrecipe_name = \"bogus\"\n",
                                  &c, &err) != 0 &&
              strstr(err.msg, "bogus"),
          "torchtitan unknown float8 recipe refused (%s)", err.msg);
    CHECK(tsl_eval_cfg_torchtitan("[model]\nconverters = [\"quantize.linear.mx\"]\n", &c, &err) ==
                  0 &&
              c.knobs.fp8 == TSL_FP8_MXFP8,
          "torchtitan mx converter: mxfp8 (%s)", err.msg);
    CHECK(tsl_eval_cfg_torchtitan(
              "def f() -> Trainer.Config:\n    x = model_registry(\"8B\", "
              "converters=[Float8LinearConverter.Config()])\n    c.activation_checkpoint = None\n",
              &c, &err) == 0 &&
              c.knobs.fp8 == TSL_FP8_TENSORWISE,
          "torchtitan main: Float8LinearConverter (%s)", err.msg);
    CHECK(tsl_eval_cfg_torchtitan("[training]\nseq_len = 8\n", &c, &err) == 0 && c.knobs.fp8 == 0,
          "torchtitan without converters: bf16 (%s)", err.msg);
    /* the routed experts: bf16 unless the grouped GEMMs are converted too; torchao's
     * FSDP float8 all-gather (v0.2, the tensorwise default path only) */
    CHECK(c.knobs.moe_bf16_experts == false, "bf16: no expert switch");
    CHECK(tsl_eval_cfg_torchtitan("[model]\nconverters = [\"quantize.linear.float8\"]\n", &c,
                                  &err) == 0 &&
              c.knobs.moe_bf16_experts && !c.knobs.fp8_param_gather,
          "v0.2 float8 linears alone: experts bf16 (%s)", err.msg);
    CHECK(tsl_eval_cfg_torchtitan("[model]\nconverters = [\"quantize.linear.float8\", "
                                  "\"quantize.grouped_mm.float8\"]\n[quantize.linear.float8]\n"
                                  "enable_fsdp_float8_all_gather = true\n"
                                  "precompute_float8_dynamic_scale_for_fsdp = true\n"
                                  "[quantize.grouped_mm.float8]\nfqns = [\"experts\"]\n",
                                  &c, &err) == 0 &&
              c.knobs.fp8 == TSL_FP8_TENSORWISE && !c.knobs.moe_bf16_experts &&
              c.knobs.fp8_param_gather,
          "v0.2 grouped_mm float8 and the FSDP float8 all-gather (%s)", err.msg);
    CHECK(tsl_eval_cfg_torchtitan("[model]\nconverters = [\"quantize.linear.float8\"]\n"
                                  "[quantize.linear.float8]\nrecipe_name = \"rowwise\"\n"
                                  "enable_fsdp_float8_all_gather = true\n",
                                  &c, &err) != 0 &&
              strstr(err.msg, "do not combine"),
          "torchtitan refuses a recipe_name beside the float8 all-gather (%s)", err.msg);
    CHECK(tsl_eval_cfg_torchtitan(
              "def f() -> Trainer.Config:\n    x = model_registry(\"671B\", "
              "converters=[Float8LinearConverter.Config(), "
              "Float8GroupedExpertsConverter.Config()])\n    c.activation_checkpoint = None\n",
              &c, &err) == 0 &&
              c.knobs.fp8 == TSL_FP8_TENSORWISE && !c.knobs.moe_bf16_experts,
          "torchtitan main: Float8GroupedExpertsConverter (%s)", err.msg);

    /* FP8 plans export with their recipe and come back the same (H100) */
    tsl_eval_cfg_t mg8 = {.tp = 2, .pp = 2, .mbs = 2, .global_batch = 64, .even_blocks = true};
    tsl_target_knobs(TSL_TARGET_MEGATRON, &mg8.knobs);
    for (uint32_t r = TSL_FP8_DELAYED; r <= TSL_FP8_BLOCKWISE; r++) {
        mg8.knobs.fp8 = r;
        round_trip("GPT2-345M", "8xH100-80G", &mg8, TSL_EXPORT_MEGATRON);
    }
    tsl_eval_cfg_t tt8 = {.sdp = 8, .mbs = 2, .global_batch = 64};
    tt8.knobs.fp8 = TSL_FP8_TENSORWISE;
    round_trip("GPT2-345M", "8xH100-80G", &tt8, TSL_EXPORT_TORCHTITAN);
    round_trip("GPT2-345M", "8xH100-80G", &tt8, TSL_EXPORT_TORCHTITAN_TOML);

    /* an FP8 plan on GPUs without FP8 is refused, naming the GPU */
    {
        tsl_model_t m;
        tsl_cluster_t cl;
        tsl_request_t r;
        static tsl_plan_t g, out;
        tsl_request_init(&r);
        load("GPT2-345M", "8xA100-80G", &m, &cl);
        CHECK(tsl_eval_cfg_plan(&mg8, &m, cl.n_devices, &g, &err) == 0, "cfg: %s", err.msg);
        CHECK(tsl_eval_plan(&m, &cl, &r, &g, &out, &err) != 0 && strstr(err.msg, "A100-80G") &&
                  strstr(err.msg, "FP8"),
              "FP8 plan on A100 refused: %s", err.msg);
        tsl_model_free(&m);
        tsl_cluster_free(&cl);
    }

    /* plans priced the stacks' way export and import back to the same figures */
    tsl_eval_cfg_t mg = {.tp = 2, .pp = 2, .mbs = 2, .global_batch = 64, .even_blocks = true};
    tsl_target_knobs(TSL_TARGET_MEGATRON, &mg.knobs);
    round_trip("GPT2-345M", "8xA100-80G", &mg, TSL_EXPORT_MEGATRON);
    /* fp32 training without TF32 (cost model 69): megatron's line without --bf16 reads
     * back as fp32, torchtitan's mixed_precision_param "float32" likewise */
    mg.knobs.fp32 = true;
    round_trip("GPT2-345M", "8xA100-80G", &mg, TSL_EXPORT_MEGATRON);
    mg.knobs.fp32 = false;
    tsl_eval_cfg_t tt32 = {.sdp = 8, .mbs = 2, .global_batch = 64, .knobs = {.fp32 = true}};
    tsl_target_knobs(TSL_TARGET_TORCHTITAN, &tt32.knobs);
    tt32.knobs.fp32 = true;
    round_trip("GPT2-345M", "8xA100-80G", &tt32, TSL_EXPORT_TORCHTITAN_TOML);
    round_trip("GPT2-345M", "8xA100-80G", &tt32, TSL_EXPORT_TORCHTITAN);
    mg.zero = 1;
    mg.knobs.grad_reduce_exposed = false;
    mg.knobs.overlap_param_gather = true;
    round_trip("GPT2-345M", "8xA100-80G", &mg, TSL_EXPORT_MEGATRON);
    tsl_eval_cfg_t bf16 = {
        .sdp = 8, .mbs = 2, .global_batch = 64, .knobs = {.no_fp32_master = true}};
    round_trip("GPT2-345M", "8xA100-80G", &bf16, TSL_EXPORT_TORCHTITAN);
    round_trip("GPT2-345M", "8xA100-80G", &bf16, TSL_EXPORT_TORCHTITAN_TOML);
}

static void test_megatron_line(void)
{
    tsl_eval_cfg_t c;
    tsl_err_t err = {0};
    CHECK(tsl_eval_cfg_megatron("--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 "
                                "--micro-batch-size 1 --global-batch-size=512 "
                                "--recompute-granularity full --recompute-method uniform "
                                "--recompute-num-layers 1 --sequence-parallel "
                                "--use-distributed-optimizer --bf16 --lr 1e-4",
                                &c, &err) == 0,
          "%s", err.msg);
    CHECK(c.tp == 8 && c.pp == 4 && c.mbs == 1 && c.global_batch == 512 &&
              c.ckpt == TSL_EVAL_CKPT_FULL && c.sp && c.zero == 1 && !c.knobs.fp32,
          "megatron line read wrong");
    /* neither --bf16 nor --fp16: Megatron-LM's params_dtype torch.float, fp32 training
     * without TF32 (arguments.py at d98e8a6; cost model 69); --fp16 is not fp32 */
    CHECK(tsl_eval_cfg_megatron("--micro-batch-size 1", &c, &err) == 0 && c.knobs.fp32 &&
              c.knobs.tf32_off && c.knobs.grad_reduce_bytes == 4,
          "neither flag: fp32 (%s)", err.msg);
    CHECK(tsl_eval_cfg_megatron("--micro-batch-size 1 --fp16", &c, &err) == 0 && !c.knobs.fp32,
          "--fp16: not fp32 (%s)", err.msg);
    /* --fp16 at d98e8a6 is Megatron-core's MixedPrecisionOptimizer with its loss
     * scaler: megatron-core-fp16, the step --target megatron --fp16 prices (it read
     * as Megatron-LM 2021-22's megatron-fp16, which a d98e8a6 line does not run) */
    CHECK(c.knobs.fp16 && c.knobs.opt_step == TSL_OPT_STEP_MEGATRON_CORE_FP16,
          "--fp16: fp16 %d, opt_step %s", c.knobs.fp16, tsl_opt_step_name(c.knobs.opt_step));
    /* --attention-backend (AttnBackend at d98e8a6): unfused is TE's unfused core, the
     * request's unfused_attn; flash, fused and auto a fused kernel (it read as no
     * effect whatever its value); local needs --spec local; another value is refused */
    CHECK(tsl_eval_cfg_megatron("--bf16 --attention-backend unfused", &c, &err) == 0 &&
              c.unfused_attn,
          "--attention-backend unfused: %s", err.msg);
    static const char *const fused[] = {"flash", "fused", "auto"};
    for (size_t i = 0; i < sizeof fused / sizeof fused[0]; i++) {
        char line[96];
        snprintf(line, sizeof line, "--bf16 --attention-backend %s", fused[i]);
        CHECK(tsl_eval_cfg_megatron(line, &c, &err) == 0 && !c.unfused_attn, "%s: %s", line,
              err.msg);
    }
    CHECK(tsl_eval_cfg_megatron("--bf16", &c, &err) == 0 && !c.unfused_attn, "no backend");
    mg_refuses("--bf16 --attention-backend local", "--spec local");
    mg_refuses("--bf16 --attention-backend sdpa", "'sdpa' is not flash, fused, unfused");
    mg_refuses("--bf16 --attention-backend", "'' is not flash");
    /* --transformer-impl local: Megatron-LM's own modules, the unfused DotProductAttention
     * core (it read as no effect); transformer_engine the default; inference_optimized
     * and other values refused naming them */
    CHECK(tsl_eval_cfg_megatron("--bf16 --transformer-impl local", &c, &err) == 0 && c.local_impl,
          "--transformer-impl local: %s", err.msg);
    CHECK(tsl_eval_cfg_megatron("--bf16 --transformer-impl transformer_engine", &c, &err) == 0 &&
              !c.local_impl,
          "--transformer-impl transformer_engine: %s", err.msg);
    mg_refuses("--bf16 --transformer-impl inference_optimized", "inference layers");
    mg_refuses("--bf16 --transformer-impl apex", "'apex' is not transformer_engine or local");
    CHECK(tsl_eval_cfg_megatron("--tensor-model-parallel-size x", &c, &err) == -1 &&
              strstr(err.msg, "tensor-model-parallel-size"),
          "bad value: %s", err.msg);
    CHECK(tsl_eval_cfg_megatron("--recompute-granularity some", &c, &err) == -1 &&
              strstr(err.msg, "recompute-granularity"),
          "bad granularity: %s", err.msg);
}

/* Megatron-LM d98e8a6's flags: read, refused by name, noted, or no effect; an
 * unknown one is an error naming it. */
static void mg_refuses(const char *line, const char *want)
{
    tsl_eval_cfg_t c;
    tsl_err_t err = {0};
    CHECK(tsl_eval_cfg_megatron(line, &c, &err) == -1 && strstr(err.msg, want),
          "'%s': want an error with '%s', got '%s'", line, want, err.msg);
}

static void test_megatron_flags(void)
{
    tsl_eval_cfg_t c;
    tsl_err_t err = {0};
    mg_refuses("--tensor-model-parallel-size 2 --context-parallel-size 2 --cp-comm-type a2a+p2p",
               "cp-comm-type a2a+p2p");
    mg_refuses("--hierarchical-context-parallel-sizes 2 2", "hierarchical-context-parallel");
    /* expert TP, a capacity factor and padding are read; padding needs a factor */
    CHECK(tsl_eval_cfg_megatron("--num-experts 8 --expert-model-parallel-size 4 "
                                "--expert-tensor-parallel-size 2 --moe-expert-capacity-factor 1.5 "
                                "--moe-pad-expert-input-to-capacity --moe-token-drop-policy probs",
                                &c, &err) == 0 &&
              c.knobs.ep == 4 && c.knobs.etp == 2 && c.knobs.moe_capacity == 1.5 &&
              c.knobs.moe_pad && !c.etp_follows_tp,
          "etp 2, capacity 1.5, padded: %s", err.msg);
    CHECK(tsl_eval_cfg_megatron("--num-experts 8 --expert-model-parallel-size 4", &c, &err) == 0 &&
              c.knobs.etp == 0 && c.etp_follows_tp && c.knobs.moe_capacity == 0,
          "no expert TP given: the attention's (%s)", err.msg);
    mg_refuses("--num-experts 8 --moe-pad-expert-input-to-capacity",
               "--moe-pad-expert-input-to-capacity needs --moe-expert-capacity-factor");
    mg_refuses("--num-experts 8 --moe-expert-capacity-factor -1", "moe-expert-capacity-factor");
    mg_refuses("--num-experts 8 --expert-tensor-parallel-size 0", "expert-tensor-parallel-size");
    /* mixture of experts and latent attention: the shape flags read, EP priced */
    CHECK(
        tsl_eval_cfg_megatron("--tensor-model-parallel-size 2 --sequence-parallel --num-experts 8 "
                              "--moe-router-topk 2 --moe-ffn-hidden-size 14336 "
                              "--moe-grouped-gemm --expert-model-parallel-size 8 "
                              "--expert-tensor-parallel-size 1 --multi-latent-attention "
                              "--kv-lora-rank 512 --qk-head-dim 128 --qk-pos-emb-head-dim 64 "
                              "--v-head-dim 128 --bf16",
                              &c, &err) == 0 &&
            c.knobs.ep == 8,
        "ep 8: %s ep %u", err.msg, c.knobs.ep);
    /* context parallelism is read: the degree and the exchange (default p2p) */
    CHECK(tsl_eval_cfg_megatron("--tensor-model-parallel-size 2 --context-parallel-size 4 --bf16",
                                &c, &err) == 0 &&
              c.knobs.cp == 4 && c.knobs.cp_comm == TSL_CP_P2P,
          "cp 4: %s cp %u comm %u", err.msg, c.knobs.cp, c.knobs.cp_comm);
    CHECK(tsl_eval_cfg_megatron("--context-parallel-size 2 --cp-comm-type a2a --bf16", &c, &err) ==
                  0 &&
              c.knobs.cp == 2 && c.knobs.cp_comm == TSL_CP_A2A,
          "cp a2a: %s", err.msg);
    /* TE's all_gather, which the export writes; Megatron-LM's help text's allgather,
     * which TE raises on, read the same with a note */
    CHECK(tsl_eval_cfg_megatron("--context-parallel-size 2 --cp-comm-type all_gather --bf16", &c,
                                &err) == 0 &&
              c.knobs.cp_comm == TSL_CP_ALLGATHER && !strstr(c.notes, "cp-comm-type"),
          "cp all_gather: %s", err.msg);
    CHECK(tsl_eval_cfg_megatron("--context-parallel-size 2 --cp-comm-type allgather --bf16", &c,
                                &err) == 0 &&
              c.knobs.cp_comm == TSL_CP_ALLGATHER &&
              strstr(c.notes, "raises \"Unsupported communication type\""),
          "cp allgather: %s", err.msg);
    /* --moe-layer-freq as moe_freq_type evaluates it: lists, +, *, parentheses */
    CHECK(tsl_eval_cfg_megatron("--moe-layer-freq '([1]*3+[0]*1)*3' --bf16", &c, &err) == 0 &&
              c.moe_len == 12 && c.moe_pattern[0] == 1 && c.moe_pattern[3] == 0 &&
              c.moe_pattern[7] == 0 && c.moe_pattern[11] == 0 && c.moe_pattern[8] == 1,
          "([1]*3+[0]*1)*3: %s len %u", err.msg, c.moe_len);
    CHECK(tsl_eval_cfg_megatron("--moe-layer-freq '[0,1, 1]+[1]*2' --bf16", &c, &err) == 0 &&
              c.moe_len == 5 && c.moe_pattern[0] == 0 && c.moe_pattern[4] == 1,
          "[0,1,1]+[1]*2: %s len %u", err.msg, c.moe_len);
    CHECK(tsl_eval_cfg_megatron("--moe-layer-freq 2 --bf16", &c, &err) == 0 && c.moe_every == 2 &&
              c.moe_len == 0,
          "int form: %s", err.msg);
    mg_refuses("--moe-layer-freq '[0]*3+[2]'", "--moe-layer-freq: 2 is not 0 or 1");
    /* the sliding window (eval_shape.h): --window-size's tuple, --window-attn-skip-freq's
     * int or list, as Megatron-LM's tuple_type and moe_freq_type read them */
    CHECK(tsl_eval_cfg_megatron("--window-size 127,0 --window-attn-skip-freq '([1,0]*18)' --bf16",
                                &c, &err) == 0 &&
              c.shape.window_set && c.shape.window_left == 127 && c.shape.window_right == 0 &&
              c.shape.window_len == 36 && c.shape.window_pattern[0] == 1 &&
              c.shape.window_pattern[1] == 0 && c.shape.window_pattern[35] == 0 &&
              c.shape.window_every == 0,
          "window list: %s", err.msg);
    CHECK(tsl_eval_cfg_megatron("--window-size '(4095,0)' --window-attn-skip-freq 2 --bf16", &c,
                                &err) == 0 &&
              c.shape.window_left == 4095 && c.shape.window_every == 2 && c.shape.window_len == 0,
          "window int: %s", err.msg);
    mg_refuses("--window-attn-skip-freq '[1,0,3]'", "--window-attn-skip-freq: 3 is not 0 or 1");
    mg_refuses("--window-size 127", "--window-size: '127' is not two integers");
    mg_refuses("--window-size -1,0", "LEFT + 1 keys");
    mg_refuses("--no-yarn-correction-range-round-to-int 1", "takes no value");
    mg_refuses("--moe-layer-freq '([0]*3+[1]*58'", "')' expected");
    mg_refuses("--moe-layer-freq '[1]*1000+[1]*100'", "more than 1024 layers");
    mg_refuses("--moe-layer-freq '[1]*2000'", "2000 is too large");
    mg_refuses("--moe-layer-freq '[1]x'", "left over");
    mg_refuses("--checkpoint-activations", "--recompute-activations");
    mg_refuses("--totally-bogus-flag 7", "--totally-bogus-flag");
    mg_refuses("--virtual-pipeline-model-parallel-size 2", "num-virtual-stages-per-pipeline-rank");
    mg_refuses("--use-torch-fsdp2 --pipeline-model-parallel-size 2", "use-torch-fsdp2");
    mg_refuses("--sequence-parallel true", "sequence-parallel");
    mg_refuses("--num-virtual-stages-per-pipeline-rank 2 --num-layers-per-virtual-pipeline-stage 2",
               "no more than one");
    CHECK(tsl_eval_cfg_megatron("--context-parallel-size 1 --lr 1e-4 --log-interval 1 --bf16 "
                                "--num-virtual-stages-per-pipeline-rank 2 --recompute-activations",
                                &c, &err) == 0,
          "%s", err.msg);
    CHECK(c.interleave == 2 && c.ckpt == TSL_EVAL_CKPT_SELECTIVE && c.notes[0] == '\0',
          "vpp %u ckpt %d notes '%s'", c.interleave, (int)c.ckpt, c.notes);
    CHECK(tsl_eval_cfg_megatron("--bf16 --fp8-format hybrid", &c, &err) == 0 &&
              c.knobs.fp8 == TSL_FP8_DELAYED && c.notes[0] == '\0',
          "fp8 hybrid: Megatron's default recipe, delayed: %s / %s", err.msg, c.notes);
    CHECK(tsl_eval_cfg_megatron("--bf16 --fp8-format e4m3 --fp8-recipe blockwise "
                                "--fp8-param-gather",
                                &c, &err) == 0 &&
              c.knobs.fp8 == TSL_FP8_BLOCKWISE && strstr(c.notes, "e4m3") &&
              c.knobs.fp8_param_gather,
          "fp8 e4m3 blockwise, FP8 weights: %s / %s", err.msg, c.notes);
    /* the flex dispatcher's MXFP8 wire (Megatron-LM TransformerConfig): one knob */
    CHECK(tsl_eval_cfg_megatron("--bf16 --fp8-format e4m3 --fp8-recipe mxfp8 "
                                "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend "
                                "ncclep --use-transformer-engine-op-fuser "
                                "--moe-dispatch-fwd-dtype mxfp8 --moe-combine-bwd-dtype mxfp8",
                                &c, &err) == 0 &&
              c.knobs.fp8 == TSL_FP8_MXFP8 && c.knobs.moe_fp8_dispatch &&
              !strstr(c.notes, "differ"),
          "MXFP8 dispatch: %s / %s", err.msg, c.notes);
    /* TE's op fuser runs the experts' MLP fused over grouped GEMMs only (moe_fused_mlp) */
    CHECK(tsl_eval_cfg_megatron("--bf16 --moe-grouped-gemm --use-transformer-engine-op-fuser", &c,
                                &err) == 0 &&
              c.knobs.moe_fused_mlp && c.notes[0] == '\0',
          "op fuser over grouped GEMMs: fused expert MLP: %s / %s", err.msg, c.notes);
    CHECK(tsl_eval_cfg_megatron("--bf16 --use-transformer-engine-op-fuser", &c, &err) == 0 &&
              !c.knobs.moe_fused_mlp && strstr(c.notes, "without --moe-grouped-gemm"),
          "op fuser without grouped GEMMs: unfused, noted: %s / %s", err.msg, c.notes);
    CHECK(tsl_eval_cfg_megatron("--bf16 --moe-grouped-gemm", &c, &err) == 0 &&
              !c.knobs.moe_fused_mlp && c.notes[0] == '\0',
          "grouped GEMMs alone: unfused: %s / %s", err.msg, c.notes);
    /* the weighted squared ReLU fused: TEGroupedMLP's, over grouped GEMMs (moe_fused_srelu) */
    CHECK(tsl_eval_cfg_megatron("--bf16 --moe-grouped-gemm --use-fused-weighted-squared-relu", &c,
                                &err) == 0 &&
              c.knobs.moe_fused_srelu && !c.knobs.moe_fused_mlp,
          "fused weighted squared ReLU: %s / %s", err.msg, c.notes);
    CHECK(tsl_eval_cfg_megatron("--bf16 --use-fused-weighted-squared-relu", &c, &err) == 0 &&
              !c.knobs.moe_fused_srelu,
          "fused weighted squared ReLU without grouped GEMMs: eager: %s", err.msg);
    CHECK(tsl_eval_cfg_megatron("--bf16 --moe-dispatch-fwd-dtype mxfp8", &c, &err) == 0 &&
              !c.knobs.moe_fp8_dispatch && strstr(c.notes, "without --fp8-format"),
          "an FP8 dispatch without FP8: bf16: %s / %s", err.msg, c.notes);
    mg_refuses("--moe-dispatch-fwd-dtype fp8", "--moe-dispatch-fwd-dtype");
    CHECK(tsl_eval_cfg_megatron("--bf16 --fp8-recipe tensorwise", &c, &err) == 0 &&
              c.knobs.fp8 == 0 && strstr(c.notes, "without --fp8-format"),
          "a recipe alone is bf16: %s / %s", err.msg, c.notes);
    mg_refuses("--fp8-format hybrid --fp8-recipe nvfp4", "--fp4-format e2m1");
    mg_refuses("--fp8-format e5m2", "--fp8-format");
    /* NVFP4 as Megatron-LM names it (TransformerConfig fp4 'e2m1', fp4_recipe 'nvfp4'
     * by default, arguments.py --fp4-param-gather): Megatron-Bridge's
     * bf16_with_nvfp4_mixed */
    CHECK(tsl_eval_cfg_megatron("--bf16 --fp4-format e2m1 --fp4-recipe nvfp4 --fp4-param-gather "
                                "--use-distributed-optimizer",
                                &c, &err) == 0 &&
              c.knobs.fp8 == TSL_FP8_NVFP4 && c.knobs.fp8_param_gather && c.notes[0] == '\0',
          "nvfp4, FP4 weights: %s / %s", err.msg, c.notes);
    CHECK(tsl_eval_cfg_megatron("--bf16 --fp4-format e2m1", &c, &err) == 0 &&
              c.knobs.fp8 == TSL_FP8_NVFP4 && !c.knobs.fp8_param_gather,
          "--fp4-format alone: nvfp4 (the default fp4_recipe): %s", err.msg);
    mg_refuses("--fp4-format e2m1 --fp8-format hybrid", "cannot be used together");
    mg_refuses("--fp4-param-gather", "together with --fp4-format");
    mg_refuses("--fp4-format e3m0", "--fp4-format");
    mg_refuses("--fp4-format e2m1 --fp4-recipe custom", "custom");
    /* blocks kept bf16 (TransformerConfig first_last_layers_bf16, 1 at each end unless
     * told): Megatron-Bridge's nemotron_3_super_bf16_with_nvfp4_mixed keeps the last 14,
     * none at the start (its MixedPrecisionConfig's 0 written over the model's 1) */
    CHECK(tsl_eval_cfg_megatron("--bf16 --fp4-format e2m1 --first-last-layers-bf16 "
                                "--num-layers-at-start-in-bf16 0 --num-layers-at-end-in-bf16 14",
                                &c, &err) == 0 &&
              c.knobs.bf16_layers_start == 0 && c.knobs.bf16_layers_end == 14,
          "Super's NVFP4: the last 14 blocks: %s", err.msg);
    CHECK(tsl_eval_cfg_megatron("--bf16 --fp8-format hybrid --fp8-recipe mxfp8 "
                                "--first-last-layers-bf16",
                                &c, &err) == 0 &&
              c.knobs.bf16_layers_start == 1 && c.knobs.bf16_layers_end == 1,
          "the flag alone: one block at each end: %s", err.msg);
    CHECK(tsl_eval_cfg_megatron("--bf16 --first-last-layers-bf16", &c, &err) == 0 &&
              c.knobs.bf16_layers_start == 0 && c.knobs.bf16_layers_end == 0,
          "without FP8 every block is bf16: nothing kept apart: %s", err.msg);
    CHECK(tsl_eval_cfg_megatron("--bf16 --fp4-format e2m1 --num-layers-at-end-in-bf16 14", &c,
                                &err) == 0 &&
              c.knobs.bf16_layers_end == 0 && strstr(c.notes, "without --first-last-layers-bf16"),
          "counts without the flag: none, noted: %s / %s", err.msg, c.notes);
    mg_refuses("--fp8-format hybrid --first-last-layers-bf16", "delayed scaling");
    mg_refuses("--fp4-format e2m1 --first-last-layers-bf16 --num-layers-at-end-in-bf16 x",
               "num-layers-at-end-in-bf16");

    /* what the flags mean on a model: FSDP2 shards the data-parallel ranks; the
     * embedding counted as a layer takes one from the first stage; 2 virtual stages */
    tsl_model_t m;
    tsl_cluster_t cl;
    static tsl_plan_t g;
    load("GPT2-345M", "8xA100-80G", &m, &cl);
    CHECK(tsl_eval_cfg_megatron("--use-torch-fsdp2 --tensor-model-parallel-size 2", &c, &err) ==
                  0 &&
              tsl_eval_cfg_plan(&c, &m, 8, &g, &err) == 0,
          "fsdp2: %s", err.msg);
    CHECK(tsl_strategy_degree(&g.layer[1], TSL_DIM_SDP) == 4 &&
              tsl_strategy_degree(&g.layer[1], TSL_DIM_DP) == 1 && g.layer[1].zero == 0,
          "fsdp2 is sdp 4");
    CHECK(tsl_eval_cfg_megatron("--pipeline-model-parallel-size 5 "
                                "--account-for-embedding-in-pipeline-split",
                                &c, &err) == 0 &&
              tsl_eval_cfg_plan(&c, &m, 5, &g, &err) == 0,
          "account-for-embedding: %s", err.msg);
    CHECK(g.stages[0].n_layers == 5 && g.stages[1].n_layers == 5 && g.stages[4].n_layers == 6,
          "account-for-embedding: %u %u %u", g.stages[0].n_layers, g.stages[1].n_layers,
          g.stages[4].n_layers);
    CHECK(tsl_eval_cfg_megatron("--pipeline-model-parallel-size 4 "
                                "--num-virtual-stages-per-pipeline-rank 2 --global-batch-size 8",
                                &c, &err) == 0 &&
              tsl_eval_cfg_plan(&c, &m, 8, &g, &err) == 0 && g.interleave == 2,
          "virtual stages: %s (interleave %u)", err.msg, g.interleave);
    /* the micro-batches per group of its schedule (schedules.py: N in [PP, M], M mod N
     * 0 or at least PP); N = PP is the default, kept as 0; not read without a VP */
    const char *vp = "--pipeline-model-parallel-size 4 --num-virtual-stages-per-pipeline-rank 2 "
                     "--global-batch-size 16 --microbatch-group-size-per-virtual-pipeline-stage ";
    char line[256];
    const uint32_t ns[] = {8, 4, 2, 5, 9};
    const int ok[] = {1, 1, 0, 0, 0};
    for (uint32_t k = 0; k < 5; k++) {
        snprintf(line, sizeof line, "%s%u", vp, ns[k]);
        int rc = tsl_eval_cfg_megatron(line, &c, &err) == 0 ? tsl_eval_cfg_plan(&c, &m, 8, &g, &err)
                                                            : -1;
        CHECK(ok[k]
                  ? rc == 0 && g.vp_group == (ns[k] == 4 ? 0 : ns[k])
                  : rc != 0 && strstr(err.msg, "microbatch-group-size-per-virtual-pipeline-stage"),
              "N %u: rc %d vp_group %u: %s", ns[k], rc, g.vp_group, err.msg);
    }
    CHECK(tsl_eval_cfg_megatron("--pipeline-model-parallel-size 4 --global-batch-size 8 "
                                "--microbatch-group-size-per-virtual-pipeline-stage 2",
                                &c, &err) == 0 &&
              tsl_eval_cfg_plan(&c, &m, 8, &g, &err) == 0 && g.vp_group == 0,
          "no VP, N not read: %s", err.msg);
    tsl_model_free(&m);
    tsl_cluster_free(&cl);
}

/* Megatron accepts --sequence-parallel at TP 1 and switches it off; quoted values;
 * full recompute needs a method and a layer count, selective neither. */
static void test_megatron_validate(void)
{
    tsl_eval_cfg_t c;
    tsl_err_t err = {0};
    CHECK(tsl_eval_cfg_megatron("--tensor-model-parallel-size 1 --sequence-parallel", &c, &err) ==
                  0 &&
              !c.sp && strstr(c.notes, "sequence-parallel"),
          "sp at tp 1: %s / %s", err.msg, c.notes);
    CHECK(tsl_eval_cfg_megatron("--data-path \"a b\" 'c d' --split '99,1,0' \\\n"
                                "  --tensor-model-parallel-size '2'",
                                &c, &err) == 0 &&
              c.tp == 2,
          "quoted: %s", err.msg);
    /* no word: Megatron-LM's defaults are not priced as if a line had asked for them */
    const char *empty[] = {"", "  \t\n", "# a comment\n  # another"};
    for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++)
        CHECK(tsl_eval_cfg_megatron(empty[i], &c, &err) == -1 &&
                  strstr(err.msg, "--megatron-args: no arguments"),
              "empty line %zu: %s", i, err.msg);
    mg_refuses("--data-path \"a b", "unterminated quote");
    mg_refuses("--recompute-granularity full --recompute-method block", "recompute-num-layers");
    mg_refuses("--recompute-granularity full --recompute-num-layers 1", "recompute-method");
    mg_refuses("--recompute-granularity selective --recompute-num-layers 2",
               "recompute-num-layers");
    CHECK(tsl_eval_cfg_megatron("--recompute-granularity full --recompute-method block "
                                "--recompute-num-layers 2",
                                &c, &err) == 0 &&
              c.ckpt == TSL_EVAL_CKPT_FULL && c.ckpt_per_stage == 2,
          "block: %s", err.msg);
}

static void test_torchtitan_toml(void)
{
    tsl_eval_cfg_t c;
    tsl_err_t err = {0};
    const char *ok = "[training]\nlocal_batch_size = 8 # per rank\nseq_len = 2048\n"
                     "[parallelism]\ntensor_parallel_degree = 2\npipeline_parallel_degree = 2\n"
                     "data_parallel_shard_degree = -1\npipeline_parallel_microbatch_size = 2\n"
                     "pipeline_parallel_split_points = [\"layers.12\"]\n"
                     "[activation_checkpoint]\nmode = \"selective\"\n";
    CHECK(tsl_eval_cfg_torchtitan(ok, &c, &err) == 0, "%s", err.msg);
    CHECK(c.tp == 2 && c.pp == 2 && c.sdp_rest && c.mbs == 2 && c.local_batch == 8 &&
              c.seq_len == 2048 && c.n_split_points == 1 && c.split_points[0] == 12 && c.sp &&
              c.ckpt == TSL_EVAL_CKPT_FULL && c.ckpt_every == 2,
          "toml read wrong");
    CHECK(tsl_eval_cfg_torchtitan("[parallelism]\ntensor_parallel_degree = \"2\"\n", &c, &err) ==
                  -1 &&
              strstr(err.msg, "tensor_parallel_degree") && strstr(err.msg, "line 2"),
          "typed key: %s", err.msg);
    CHECK(tsl_eval_cfg_torchtitan("[activation_checkpoint]\nmode = \"most\"\n", &c, &err) == -1 &&
              strstr(err.msg, "mode"),
          "mode: %s", err.msg);
}

/* Refuses a TOML key torchtitan never had in a section Tessel reads (a typo would
 * price its default: TP 1), an unknown section, a key at its pre-v0.1.0 place and
 * an unterminated \"\"\" string; accepts unread the keys of other sections and
 * anything under a custom config module. */
static void tt_refuses(const char *text, const char *want1, const char *want2)
{
    tsl_eval_cfg_t c;
    tsl_err_t err = {0};
    CHECK(tsl_eval_cfg_torchtitan(text, &c, &err) == -1 && strstr(err.msg, want1) &&
              strstr(err.msg, want2),
          "%s: %s", want1, err.msg);
}

/* [training] batch_size, torchtitan's name for local_batch_size before 8570415c3
 * (#1238): read as it (was refused); under PP split as that torchtitan split it, by
 * pipeline_parallel_microbatches before 5e2033c75 (#1073), by
 * pipeline_parallel_microbatch_size after, and refused where the file says neither. */
static void test_torchtitan_old_batch(void)
{
    tsl_eval_cfg_t c, n;
    tsl_err_t err = {0};
    CHECK(tsl_eval_cfg_torchtitan("[training]\nbatch_size = 16\n", &c, &err) == 0 &&
              tsl_eval_cfg_torchtitan("[training]\nlocal_batch_size = 16\n", &n, &err) == 0 &&
              c.mbs == n.mbs && c.mbs == 16 && c.local_batch == n.local_batch,
          "batch_size as local_batch_size without PP: mbs %u/%u (%s)", c.mbs, n.mbs, err.msg);
    CHECK(strstr(c.notes, "batch_size read as local_batch_size"), "noted: %s", c.notes);
    const char *pp = "[parallelism]\npipeline_parallel_degree = 4\n";
    char text[512];
    /* April to June 2025: micro-batches of pipeline_parallel_microbatch_size */
    snprintf(text, sizeof text,
             "%spipeline_parallel_microbatch_size = 2\n[training]\n"
             "batch_size = 16\n",
             pp);
    CHECK(tsl_eval_cfg_torchtitan(text, &c, &err) == 0 && c.local_batch == 16 && c.mbs == 2 &&
              c.n_micro == 0,
          "#1073..#1238: local %u mbs %u (%s)", c.local_batch, c.mbs, err.msg);
    /* before April 2025: 8 micro-batches of 16 / 8 */
    snprintf(text, sizeof text,
             "%spipeline_parallel_microbatches = 8\n[training]\n"
             "batch_size = 16\n",
             pp);
    CHECK(tsl_eval_cfg_torchtitan(text, &c, &err) == 0 && c.local_batch == 16 && c.mbs == 2 &&
              c.n_micro == 8,
          "before #1073: local %u mbs %u n %u (%s)", c.local_batch, c.mbs, c.n_micro, err.msg);
    snprintf(text, sizeof text,
             "%spipeline_parallel_microbatches = 3\n[training]\n"
             "batch_size = 16\n",
             pp);
    tt_refuses(text, "batch_size 16 does not divide", "pipeline_parallel_microbatches 3");
    snprintf(text, sizeof text, "%s[training]\nbatch_size = 16\n", pp);
    tt_refuses(text, "line 4: [training] batch_size under pipeline_parallel_degree 4",
               "give [parallelism] the key your torchtitan had");
    snprintf(text, sizeof text,
             "%spipeline_parallel_microbatches = 8\n"
             "pipeline_parallel_microbatch_size = 2\n[training]\nbatch_size = 16\n",
             pp);
    tt_refuses(text, "line 3: [parallelism] pipeline_parallel_microbatches",
               "no torchtitan read both");
    snprintf(text, sizeof text, "%spipeline_parallel_microbatches = 8\n", pp);
    tt_refuses(text, "line 3: [parallelism] pipeline_parallel_microbatches",
               "give the run's batch_size");
    tt_refuses("[experimental]\npipeline_parallel_microbatches = 8\n",
               "[experimental] pipeline_parallel_microbatches",
               "Tessel reads [parallelism] pipeline_parallel_microbatches");
}

static void test_torchtitan_unknown(void)
{
    tsl_eval_cfg_t c;
    tsl_err_t err = {0};
    tt_refuses("[training]\nseq_len = 8\n[parallelism]\ntensor_paralel_degree = 8\n",
               "line 4: [parallelism] tensor_paralel_degree",
               "did you mean tensor_parallel_degree");
    tt_refuses("[paralellism]\ntensor_parallel_degree = 8\n", "line 1: [paralellism]",
               "did you mean [parallelism]");
    tt_refuses("[activation_checkpoint]\nzzz = 1\n", "[activation_checkpoint] zzz",
               "its keys: debug determinism_check");
    /* numbers past uint32: refused, not cut (4294967296 became 0, the default 8) */
    tt_refuses("[training]\nlocal_batch_size = 4294967296\n", "line 2: [training] local_batch_size",
               "4294967296 is above 4294967295");
    tt_refuses("[training]\nglobal_batch_size = 99999999999\n", "global_batch_size",
               "99999999999 is above");
    /* a product past 2^40 refused before it overflows (UBSan) */
    tt_refuses("[training]\nlocal_batch_size = 1099511627776 * 1099511627776\n", "local_batch_size",
               "is not an integer >= 1");
    /* batch_size (before torchtitan #1238) beside its newer names: of no torchtitan */
    tt_refuses("[training]\nbatch_size = 16\nlocal_batch_size = 8\n",
               "line 2: [training] batch_size", "beside local_batch_size");
    tt_refuses("[training]\nbatch_size = 16\nglobal_batch_size = 64\n",
               "line 2: [training] batch_size", "beside global_batch_size");
    tt_refuses("[training]\nbatch_size = 0\n", "[training] batch_size", ">= 1");
    tt_refuses("[training]\ntensor_parallel_degree = 8\n", "[training] tensor_parallel_degree",
               "Tessel reads [parallelism] tensor_parallel_degree");
    tt_refuses("[job]\ncustom_config_module = \"\"\n[mine]\nx = 1\n", "[mine]",
               "not a torchtitan section");
    tt_refuses("[job]\ndescription = \"\"\"never closed\n[parallelism]\n"
               "tensor_parallel_degree = 8\n",
               "line 2", "\"\"\" string is not closed");
    /* an array never closed: the tables after it were read as its value and dropped
     * (TP 8 priced as 1, the local batch as the default), the file accepted */
    tt_refuses("[optimizer]\nimplementation = [\"x\",\n[parallelism]\n"
               "tensor_parallel_degree = 8\n[training]\nlocal_batch_size = 4\n",
               "line 2: a '[' or '(' opened here is not closed by the end of the file",
               "tomllib and Python refuse the file");
    tt_refuses("[parallelism]\ntensor_parallel_degree = 8\n[float8]\nfilter_fqns = [\"output\"\n",
               "line 4: a '[' or '(' opened", "not closed");
    tt_refuses("[compile\nenable = false\n", "line 1: a '[' or '(' opened", "not closed");
    /* a closed multi-line array still reads as one value */
    CHECK(tsl_eval_cfg_torchtitan("[float8]\nfilter_fqns = [\n\"output\",\n]\n[parallelism]\n"
                                  "tensor_parallel_degree = 8\n",
                                  &c, &err) == 0 &&
              c.tp == 8,
          "multi-line array: %s", err.msg);
    /* [optimizer] is not priced: its keys stay unread, known or not */
    CHECK(tsl_eval_cfg_torchtitan("[optimizer]\nlr_typo = 1\n[parallelism]\n"
                                  "tensor_parallel_degree = 2\n",
                                  &c, &err) == 0 &&
              c.tp == 2,
          "optimizer: %s", err.msg);
    /* a custom module may add sections and keys */
    CHECK(tsl_eval_cfg_torchtitan("[job]\ncustom_config_module = \"my.cfg\"\n[mine]\nx = 1\n"
                                  "[parallelism]\nmy_degree = 2\ntensor_parallel_degree = 2\n",
                                  &c, &err) == 0 &&
              c.tp == 2,
          "custom: %s", err.msg);
    /* a closed multi-line string: its lines are its text, not keys */
    CHECK(tsl_eval_cfg_torchtitan("[job]\ndescription = \"\"\"a\n[parallelism]\n"
                                  "tensor_parallel_degree = 8\n\"\"\"\n[parallelism]\n"
                                  "tensor_parallel_degree = 4\n",
                                  &c, &err) == 0 &&
              c.tp == 4,
          "multi-line string: %s", err.msg);
}

/* torchtitan: SP with TP, global_batch_size -1, CP refused, schedules, its split
 * rule, model parts over several lines, and the Python form. */
static void test_torchtitan_keys(void)
{
    tsl_eval_cfg_t c;
    tsl_err_t err = {0};
    CHECK(tsl_eval_cfg_torchtitan("[training]\nglobal_batch_size = -1\n[parallelism]\n"
                                  "tensor_parallel_degree = 4\n[activation_checkpoint]\n"
                                  "mode = \"none\"\n",
                                  &c, &err) == 0 &&
              c.sp && c.global_batch == 0,
          "sp / global -1: %s", err.msg);
    /* CP is read: ring attention, K/V rotated by all-gather (torchtitan's default:
     * Tessel's torch-allgather) or all-to-all (Tessel's p2p); the CP ranks join the
     * FSDP (SDP) level */
    CHECK(tsl_eval_cfg_torchtitan("[parallelism]\ncontext_parallel_degree = 2\n", &c, &err) == 0 &&
              c.knobs.cp == 2 && c.knobs.cp_comm == TSL_CP_TORCH_AG,
          "cp: %s", err.msg);
    CHECK(tsl_eval_cfg_torchtitan("[parallelism]\ndata_parallel_shard_degree = 4\n"
                                  "context_parallel_degree = 2\n"
                                  "context_parallel_rotate_method = \"alltoall\"\n",
                                  &c, &err) == 0 &&
              c.knobs.cp == 2 && c.knobs.cp_comm == TSL_CP_P2P && c.sdp == 4,
          "cp alltoall: %s sdp %u", err.msg, c.sdp);
    CHECK(tsl_eval_cfg_torchtitan("[parallelism]\ndata_parallel_shard_degree = 1\n"
                                  "context_parallel_degree = 2\n",
                                  &c, &err) == 0 &&
              c.sdp == 2 && c.cp_counted,
          "cp at dp_shard 1: FSDP over the CP ranks: %s sdp %u", err.msg, c.sdp);
    CHECK(tsl_eval_cfg_torchtitan("[parallelism]\ncontext_parallel_degree = 2\n"
                                  "context_parallel_rotate_method = \"ring\"\n",
                                  &c, &err) == -1 &&
              strstr(err.msg, "context_parallel_rotate_method ring"),
          "cp rotate: %s", err.msg);
    /* torch.compile: off by default (eager modules); [training] compile (late 2024,
     * v0.1.0), [compile] enable and components (v0.2), Python's config.compile */
    CHECK(tsl_eval_cfg_torchtitan("[parallelism]\ntensor_parallel_degree = 1\n", &c, &err) == 0 &&
              c.knobs.eager,
          "no compile key: torchtitan's default, eager: %s", err.msg);
    CHECK(tsl_eval_cfg_torchtitan("[training]\ncompile = true\n", &c, &err) == 0 && !c.knobs.eager,
          "[training] compile: %s", err.msg);
    CHECK(tsl_eval_cfg_torchtitan("[compile]\nenable = true\ncomponents = [\"model\", \"loss\"]\n",
                                  &c, &err) == 0 &&
              !c.knobs.eager,
          "[compile] enable: %s", err.msg);
    CHECK(tsl_eval_cfg_torchtitan("[compile]\nenable = true\ncomponents = [\"loss\"]\n", &c,
                                  &err) == 0 &&
              c.knobs.eager,
          "the loss alone compiled: the model eager: %s", err.msg);
    CHECK(tsl_eval_cfg_torchtitan("[compile]\nenable = \"yes\"\n", &c, &err) == -1 &&
              strstr(err.msg, "enable"),
          "enable typed: %s", err.msg);
    CHECK(tsl_eval_cfg_torchtitan("def f():\n    config = base_config()\n"
                                  "    config.compile.enable = True\n"
                                  "    config.activation_checkpoint = None\n    return config\n",
                                  &c, &err) == 0 &&
              !c.knobs.eager,
          "python compile.enable: %s", err.msg);
    CHECK(tsl_eval_cfg_torchtitan("def f():\n    config = base_config()\n"
                                  "    config.compile = CompileConfig(enable=True, "
                                  "components=[\"loss\"])\n"
                                  "    config.activation_checkpoint = None\n    return config\n",
                                  &c, &err) == 0 &&
              c.knobs.eager,
          "python CompileConfig without the model: %s", err.msg);
    /* expert parallelism: priced as the plan's ep; v0.2.x's expert TP only at 1 (no
     * effect at ep 1); the Python form's keyword */
    CHECK(tsl_eval_cfg_torchtitan("[parallelism]\nexpert_parallel_degree = 8\n"
                                  "expert_tensor_parallel_degree = 1\n",
                                  &c, &err) == 0 &&
              c.knobs.ep == 8 && c.torchtitan,
          "ep 8: %s", err.msg);
    CHECK(tsl_eval_cfg_torchtitan("[parallelism]\nexpert_parallel_degree = 4\n"
                                  "tensor_parallel_degree = 2\n"
                                  "expert_tensor_parallel_degree = 2\n",
                                  &c, &err) == -1 &&
              strstr(err.msg, "expert_tensor_parallel_degree 2"),
          "etp 2: %s", err.msg);
    CHECK(tsl_eval_cfg_torchtitan("[parallelism]\nexpert_tensor_parallel_degree = 2\n", &c, &err) ==
                  0 &&
              c.knobs.ep == 0,
          "etp at ep 1: %s", err.msg);
    CHECK(tsl_eval_cfg_torchtitan("def f():\n    return Trainer.Config(parallelism="
                                  "ParallelismConfig(expert_parallel_degree=2 * 4),\n"
                                  "        activation_checkpoint=None)\n",
                                  &c, &err) == 0 &&
              c.knobs.ep == 8,
          "python ep: %s", err.msg);
    CHECK(tsl_eval_cfg_torchtitan("[parallelism]\nexpert_parallel_degree = 0\n", &c, &err) == -1 &&
              strstr(err.msg, "expert_parallel_degree"),
          "ep 0: %s", err.msg);
    /* ZBV and DualPipeV are read (two chunks per stage); a schedule Tessel does not
     * simulate is refused by name */
    CHECK(tsl_eval_cfg_torchtitan("[parallelism]\npipeline_parallel_schedule = \"ZBVZeroBubble\"\n",
                                  &c, &err) == 0 &&
              c.tt_zbv,
          "schedule ZBV: %s", err.msg);
    CHECK(tsl_eval_cfg_torchtitan("[parallelism]\npipeline_parallel_schedule = \"DualPipeV\"\n", &c,
                                  &err) == 0 &&
              c.tt_zbv && c.tt_dualpipev,
          "schedule DualPipeV: %s", err.msg);
    CHECK(tsl_eval_cfg_torchtitan(
              "[parallelism]\npipeline_parallel_schedule = \"InterleavedZeroBubble\"\n", &c,
              &err) == -1 &&
              strstr(err.msg, "InterleavedZeroBubble"),
          "schedule InterleavedZeroBubble: %s", err.msg);
    CHECK(tsl_eval_cfg_torchtitan("[parallelism]\npipeline_parallel_degree = 2\n"
                                  "module_fqns_per_model_part = [\n  [\"tok_embeddings\", "
                                  "\"layers.0\"],\n  [\"layers.1\", \"norm\", \"output\"],\n]\n"
                                  "[activation_checkpoint]\nmode = \"full\"\n",
                                  &c, &err) == 0 &&
              c.n_counts == 2 && c.counts[0] == 2 && c.counts[1] == 2 && !c.tt_split,
          "model parts: %s", err.msg);
    const char *py = "def cfg() -> Trainer.Config:\n    config = base()\n"
                     "    config.training.max_context_length = 1024\n"
                     "    config.training.num_tokens_per_microbatch_per_dp_rank = 2 * 1024\n"
                     "    par = config.parallelism\n    par.tensor_parallel_degree = 2\n"
                     "    par.enable_sequence_parallel = False\n"
                     "    config.activation_checkpoint = FullAC.Config()\n    return config\n";
    CHECK(tsl_eval_cfg_torchtitan(py, &c, &err) == 0 && c.tp == 2 && !c.sp && c.mbs == 2 &&
              c.seq_len == 1024 && c.ckpt == TSL_EVAL_CKPT_FULL,
          "python: %s", err.msg);

    /* the split: 32 layers on 4 stages, embedding and head a layer each */
    tsl_model_t m;
    tsl_err_t e2;
    static tsl_plan_t g;
    CHECK(tsl_model_preset("GPT3-15B", &m, &e2) == 0, "%s", e2.msg);
    /* eval --cp-shard (cfg.cp_shard): at sdp 1 the CP ranks alone are the FSDP group
     * (torchtitan's dp_shard_cp at dp_shard 1); without it --sdp 1 --cp 8 leaves
     * them a plain data level; at sdp 2 the shard level holds them either way */
    for (int shard = 0; shard < 2; shard++) {
        tsl_eval_cfg_t f = {.tp = 1, .pp = 1, .dp = 1, .sdp = 1, .mbs = 1, .global_batch = 1};
        f.knobs.cp = 8;
        f.cp_shard = shard;
        char text[64];
        CHECK(tsl_eval_cfg_plan(&f, &m, 8, &g, &err) == 0, "cp-shard %d: %s", shard, err.msg);
        tsl_strategy_format(&g.layer[1], text, sizeof text);
        CHECK(strcmp(text, shard ? "sdp8" : "dp8") == 0 && g.cp == 8, "cp-shard %d: %s", shard,
              text);
    }
    tsl_eval_cfg_t f2 = {.pp = 1, .sdp = 2, .mbs = 1, .global_batch = 2, .cp_shard = true};
    f2.knobs.cp = 4;
    char t2[64];
    CHECK(tsl_eval_cfg_plan(&f2, &m, 8, &g, &err) == 0, "cp-shard at sdp 2: %s", err.msg);
    tsl_strategy_format(&g.layer[1], t2, sizeof t2);
    CHECK(strcmp(t2, "sdp8") == 0, "sdp 2 x cp 4: %s", t2);
    uint32_t nb = m.n_layers - 2;
    CHECK(tsl_eval_cfg_torchtitan("[parallelism]\npipeline_parallel_degree = 4\n"
                                  "[activation_checkpoint]\nmode = \"none\"\n",
                                  &c, &err) == 0 &&
              tsl_eval_cfg_plan(&c, &m, 8, &g, &err) == 0,
          "split: %s", err.msg);
    /* (nb + 2) / 4 each, the first (nb + 2) % 4 stages one more; minus the weights */
    uint32_t each = (nb + 2) / 4, extra = (nb + 2) % 4;
    for (uint32_t s = 0; s < 4; s++)
        CHECK(g.stages[s].n_layers == each + (s < extra), "stage %u: %u layers (nb %u)", s,
              g.stages[s].n_layers, nb);
    /* ZBV / DualPipeV: 2·pp model parts, part q on rank q and 2·pp − 1 − q
     * (torchtitan's _get_pp_rank_to_stage_indices_mapping, style "v"): rank 0
     * runs parts 0 and 3 (2 + 2 layers: the norm is no layer), rank 1 parts 1
     * and 2 (nb − 3 + 1) */
    char v[1024];
    int n = snprintf(v, sizeof v,
                     "[parallelism]\npipeline_parallel_degree = 2\n"
                     "pipeline_parallel_schedule = \"%%s\"\nmodule_fqns_per_model_part = "
                     "[[\"tok_embeddings\", \"layers.0\"], [");
    for (uint32_t b = 1; b < nb - 2; b++)
        n += snprintf(v + n, sizeof v - (size_t)n, "%s\"layers.%u\"", b > 1 ? ", " : "", b);
    snprintf(v + n, sizeof v - (size_t)n,
             "], [\"layers.%u\"], [\"layers.%u\", \"norm\", \"output\"]]\n"
             "[activation_checkpoint]\nmode = \"none\"\n",
             nb - 2, nb - 1);
    for (int dpv = 0; dpv < 2; dpv++) {
        char text[1100];
        snprintf(text, sizeof text, v, dpv ? "DualPipeV" : "ZBVZeroBubble");
        CHECK(tsl_eval_cfg_torchtitan(text, &c, &err) == 0 && c.n_counts == 4 &&
                  tsl_eval_cfg_plan(&c, &m, 8, &g, &err) == 0,
              "V parts (%d): %s", dpv, err.msg);
        CHECK(g.pp == 2 && g.stages[0].n_layers == 4 && g.stages[1].first_layer == 4 &&
                  g.stages[1].n_layers == nb - 2 && g.interleave == 0 &&
                  g.schedule == (dpv ? TSL_PIPESIM_SCHED_DUALPIPEV : TSL_PIPESIM_SCHED_ZBV) &&
                  g.fb_serial,
              "V parts (%d): stages %u + %u, interleave %u, schedule %u", dpv, g.stages[0].n_layers,
              g.stages[1].n_layers, g.interleave, g.schedule);
    }
    /* a V needs exactly 2 parts per rank; 1F1B one */
    CHECK(tsl_eval_cfg_torchtitan("[parallelism]\npipeline_parallel_degree = 2\n"
                                  "pipeline_parallel_schedule = \"ZBVZeroBubble\"\n"
                                  "module_fqns_per_model_part = [[\"tok_embeddings\", "
                                  "\"layers.0\"], [\"layers.1\", \"norm\", \"output\"]]\n",
                                  &c, &err) == 0 &&
              tsl_eval_cfg_plan(&c, &m, 8, &g, &err) == -1 &&
              strstr(err.msg, "2 parts for pp 2; ZBVZeroBubble places exactly 2 per rank"),
          "ZBV with pp parts: %s", err.msg);
    char text_1f1b[1100];
    snprintf(text_1f1b, sizeof text_1f1b, v, "1F1B");
    CHECK(tsl_eval_cfg_torchtitan(text_1f1b, &c, &err) == 0 &&
              tsl_eval_cfg_plan(&c, &m, 8, &g, &err) == -1 && strstr(err.msg, "4 counts for pp 2"),
          "1F1B with 2·pp parts: %s", err.msg);
    tsl_model_free(&m);
}

static void test_cfg_refusals(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    tsl_plan_t g;
    load("GPT2-345M", "8xA100-80G", &m, &c);
    tsl_eval_cfg_t deg = {.tp = 3};
    CHECK(tsl_eval_cfg_plan(&deg, &m, 8, &g, &err) == -1 && strstr(err.msg, "tp 3"),
          "tp 3 on 8: %s", err.msg);
    tsl_eval_cfg_t bat = {.tp = 2, .global_batch = 30, .mbs = 4};
    CHECK(tsl_eval_cfg_plan(&bat, &m, 8, &g, &err) == -1 && strstr(err.msg, "global batch 30"),
          "batch: %s", err.msg);
    /* the batch's products in 64 bits: 9 x 8192 x 65536 wrapped to 536870912 in 32,
     * priced at one sample per rank; 8 x 8192 x 65536 to 0 */
    tsl_model_t big;
    tsl_cluster_t bc;
    load("GPT2-345M", "1024x8xA100-80G", &big, &bc);
    tsl_eval_cfg_t wrap = {.mbs = 9, .n_micro = 65536};
    CHECK(tsl_eval_cfg_plan(&wrap, &big, bc.n_devices, &g, &err) == -1 &&
              strstr(err.msg, "batch: 65536 micro-batches of 73728 samples (9 per rank x data "
                              "width 8192) are a global batch of 4831838208, above 16777216"),
          "9 x 8192 x 65536: %s", err.msg);
    tsl_eval_cfg_t wide = {.mbs = 1u << 20, .n_micro = 1};
    CHECK(tsl_eval_cfg_plan(&wide, &big, bc.n_devices, &g, &err) == -1 &&
              strstr(err.msg, "batch: micro-batches of 8589934592 samples (1048576 per rank"),
          "2^20 x 8192: %s", err.msg);
    tsl_eval_cfg_t local = {.local_batch = 1u << 16};
    CHECK(tsl_eval_cfg_plan(&local, &big, bc.n_devices, &g, &err) == -1 &&
              strstr(err.msg, "batch: a local batch of 65536 x data width 8192 is a global "
                              "batch of 536870912"),
          "local 2^16 x 8192: %s", err.msg);
    tsl_eval_cfg_t fits = {.mbs = 2, .n_micro = 1024};
    CHECK(tsl_eval_cfg_plan(&fits, &big, bc.n_devices, &g, &err) == 0 &&
              g.global_batch == 16777216 && g.micro_batch == 16384,
          "2 x 8192 x 1024: %s (%u)", err.msg, g.global_batch);
    /* the bound it breaks named, not both */
    tsl_eval_cfg_t deep = {.pp = 1024};
    CHECK(tsl_eval_cfg_plan(&deep, &big, bc.n_devices, &g, &err) == -1 &&
              strcmp(err.msg, "pp: 1024 stages are more than the model's 26 layers") == 0,
          "pp 1024 of 26 layers: %s", err.msg);
    tsl_eval_cfg_t odd = {.pp = 3};
    CHECK(tsl_eval_cfg_plan(&odd, &big, bc.n_devices, &g, &err) == -1 &&
              strcmp(err.msg, "pp: 3 does not divide the 8192 devices") == 0,
          "pp 3 on 8192: %s", err.msg);
    tsl_model_free(&big);
    tsl_cluster_free(&bc);
    tsl_eval_cfg_t lps = {.pp = 2, .n_counts = 2, .counts = {10, 10}};
    CHECK(tsl_eval_cfg_plan(&lps, &m, 8, &g, &err) == -1 && strstr(err.msg, "add up to 20"),
          "counts: %s", err.msg);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

/* --mtp-num-layers (Megatron-LM arguments.py at 44151194): the depths read; a line
 * without it trains none (mtp_read, 0); a bad count refused naming the flag. */
static void test_megatron_mtp(void)
{
    tsl_eval_cfg_t c;
    tsl_err_t err = {0};
    CHECK(tsl_eval_cfg_megatron("--mtp-num-layers 2 --mtp-loss-scaling-factor 0.3 "
                                "--moe-latent-size 1024",
                                &c, &err) == 0 &&
              c.mtp_read && c.mtp_layers == 2,
          "--mtp-num-layers 2: %s (%u)", err.msg, c.mtp_layers);
    CHECK(tsl_eval_cfg_megatron("--num-layers 4", &c, &err) == 0 && c.mtp_read && c.mtp_layers == 0,
          "no --mtp-num-layers: none");
    mg_refuses("--mtp-num-layers -1", "mtp-num-layers");
    mg_refuses("--mtp-num-layers 1.5", "mtp-num-layers");
    mg_refuses("--mtp-num-layers 0", "mtp-num-layers");
    /* the unified pattern's MTP part (Megatron's functional test of Super ends in two
     * "*E" depths after slashes):
     * 2 depths of *E, which win over --mtp-num-layers as Megatron infers them */
    CHECK(tsl_eval_cfg_megatron("--mtp-num-layers 1 --hybrid-layer-pattern MEM*E/*E/*E", &c,
                                &err) == 0 &&
              strcmp(c.hybrid, "MEM*E") == 0 && strcmp(c.hybrid_mtp, "*E") == 0 &&
              c.hybrid_mtp_depths == 2 && c.mtp_layers == 2,
          "MTP part: %s '%s' '%s' %u", err.msg, c.hybrid, c.hybrid_mtp, c.mtp_layers);
    CHECK(strstr(c.notes, "--mtp-num-layers 1 conflicts with the 2 MTP depths"),
          "the conflict noted, as Megatron-LM warns: '%s'", c.notes);
    CHECK(tsl_eval_cfg_megatron("--mtp-num-layers 2 --hybrid-layer-pattern MEM*E/*E/*E", &c,
                                &err) == 0 &&
              !strstr(c.notes, "conflicts"),
          "no conflict, no note: '%s'", c.notes);
    mg_refuses("--mtp-num-layers 17", "megatron: --mtp-num-layers: 17 depths; Tessel models 1..16");
    mg_refuses("--hybrid-layer-pattern M/E/E/E/E/E/E/E/E/E/E/E/E/E/E/E/E/E",
               "--mtp-num-layers: 17 depths");
    mg_refuses("--hybrid-layer-pattern MEM*E/*E/E*", "MTP depth 2 is not '*E'");
    mg_refuses("--hybrid-layer-pattern MEM*E/", "MTP part");
    /* an MTP part alone: no main pattern to check it against the model's */
    mg_refuses("--hybrid-layer-pattern /*E/*E", "no layers before the MTP part '/*E/*E'");
    mg_refuses("--hybrid-layer-pattern MEM*E/*X", "MTP part");
    /* '|' segments (Megatron-LM's stages and virtual stages): a pipeline needed, their
     * count a multiple of it, none empty, and no other virtual-stage or split flag */
    mg_refuses("--hybrid-layer-pattern ME|M*E",
               "2 '|' segments at --pipeline-model-parallel-size 1");
    mg_refuses("--pipeline-model-parallel-size 2 --hybrid-layer-pattern ME|M|*E",
               "3 '|' segments do not divide over --pipeline-model-parallel-size 2");
    mg_refuses("--pipeline-model-parallel-size 2 --hybrid-layer-pattern ME||M*E",
               "'|' segment 1 has no layers");
    mg_refuses("--pipeline-model-parallel-size 2 --num-virtual-stages-per-pipeline-rank 2 "
               "--hybrid-layer-pattern MEM*E",
               "--num-virtual-stages-per-pipeline-rank with --hybrid-layer-pattern");
    mg_refuses("--pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 1 "
               "--hybrid-layer-pattern MEM*",
               "--num-layers-per-virtual-pipeline-stage with --hybrid-layer-pattern");
    mg_refuses("--pipeline-model-parallel-size 2 --decoder-first-pipeline-num-layers 3 "
               "--hybrid-layer-pattern MEM|*E",
               "--decoder-first/last-pipeline-num-layers with --hybrid-layer-pattern");
    CHECK(tsl_eval_cfg_megatron("--pipeline-model-parallel-size 2 --hybrid-layer-pattern "
                                "ME|M*E|MEM|*E/*E",
                                &c, &err) == 0 &&
              strcmp(c.hybrid, "MEM*EMEM*E") == 0 && c.hybrid_segs == 4 && c.interleave == 2 &&
              c.hybrid_seg[0] == 2 && c.hybrid_seg[1] == 3 && c.hybrid_seg[2] == 3 &&
              c.hybrid_seg[3] == 2 && c.hybrid_mtp_depths == 1,
          "4 segments over pp 2: %s '%s' %u v %u", err.msg, c.hybrid, c.hybrid_segs, c.interleave);
}

/* DeepSeek-V3's line as `plan --export megatron` writes it: accepted; each flag left out
 * takes Megatron-LM's default (d98e8a6: MLA off, kv-lora-rank 32, no shared expert,
 * --moe-layer-freq 1, dropout 0.1, a softmax router without bias, scale or groups),
 * refused naming it against the model's (MLA ranks 1536/512, shared expert 2048,
 * first 3 layers dense, no dropout, noaux_tc: sigmoid, a correction bias, x2.5, top 4
 * of 8 groups, the latent norms that --qk-layernorm builds under MLA, its config.json's
 * norm epsilon 1e-6 and YaRN of factor 40, mscale 1 and 1). */
static const char v3_line[] =
    "--num-layers 61 --hidden-size 7168 --ffn-hidden-size 18432 --num-attention-heads 128 "
    "--seq-length 4096 --max-position-embeddings 4096 --position-embedding-type rope --swiglu "
    "--normalization RMSNorm --disable-bias-linear --multi-latent-attention "
    "--q-lora-rank 1536 --kv-lora-rank 512 --qk-head-dim 128 --qk-pos-emb-head-dim 64 "
    "--v-head-dim 128 --num-experts 256 --moe-router-topk 8 --moe-ffn-hidden-size 2048 "
    "--moe-grouped-gemm --expert-model-parallel-size 8 --expert-tensor-parallel-size 1 "
    "--moe-shared-expert-intermediate-size 2048 --moe-layer-freq ([0]*3+[1]*58) "
    "--attention-dropout 0 --hidden-dropout 0 --qk-layernorm --moe-router-score-function sigmoid "
    "--moe-router-enable-expert-bias --moe-router-topk-scaling-factor 2.5 "
    "--moe-router-num-groups 8 --moe-router-group-topk 4 "
    "--rotary-base 10000 --norm-epsilon 1e-06 --rope-type yarn --rotary-scaling-factor 40 "
    "--mscale 1 --mscale-all-dim 1 "
    "--untie-embeddings-and-output-weights --mtp-num-layers 1 --bf16";

/* v3_line less `drop` on DeepSeek-V3 over 8 devices: 0, or -1 with err. */
static int v3_without(const tsl_model_t *m, const char *drop, tsl_err_t *err)
{
    char line[sizeof v3_line];
    const char *at = strstr(v3_line, drop);
    CHECK(at != NULL, "'%s' is in the line", drop);
    size_t n = at ? (size_t)(at - v3_line) : strlen(v3_line);
    memcpy(line, v3_line, n);
    snprintf(line + n, sizeof line - n, "%s", at ? at + strlen(drop) : "");
    tsl_eval_cfg_t c;
    tsl_plan_t g;
    if (tsl_eval_cfg_megatron(line, &c, err) != 0)
        return -1;
    return tsl_eval_cfg_plan(&c, m, 8, &g, err);
}

static void test_megatron_defaults(void)
{
    tsl_model_t m;
    tsl_err_t err = {0};
    CHECK(tsl_model_preset("DeepSeek-V3", &m, &err) == 0, "%s", err.msg);
    static const struct {
        const char *drop, *want;
    } cases[] = {
        {"", NULL},
        {"--multi-latent-attention ", "megatron: --multi-latent-attention not given (Megatron's "
                                      "default, not in the line): the model DeepSeek-V3 has "
                                      "multi-latent attention"},
        {"--kv-lora-rank 512 ", "megatron: --kv-lora-rank 32 (Megatron's default, not in the "
                                "line): the model DeepSeek-V3 has 512"},
        {"--q-lora-rank 1536 ", "megatron: --q-lora-rank none (Megatron's default, not in the "
                                "line): the model DeepSeek-V3 has 1536"},
        {"--moe-shared-expert-intermediate-size 2048 ",
         "megatron: --moe-shared-expert-intermediate-size none (Megatron's default, not in the "
         "line): the model DeepSeek-V3 has 2048"},
        {"--moe-layer-freq ([0]*3+[1]*58) ",
         "moe-layer-freq 1 (Megatron's default, not in the line): Transformer layer 0 is MoE in "
         "the configuration, dense in the model DeepSeek-V3"},
        {"--qk-layernorm ", "megatron: --qk-layernorm not given, no QK-norm (Megatron's default, "
                            "not in the line): the model DeepSeek-V3 has multi-latent attention "
                            "with its latent norms"},
        {"--hidden-dropout 0 ", "megatron: --hidden-dropout above 0 (Megatron's default, not "
                                "in the line): the model DeepSeek-V3 has no dropout"},
        {"--attention-dropout 0 ", "megatron: --attention-dropout above 0 (Megatron's default, "
                                   "not in the line): the model DeepSeek-V3 has no dropout"},
        {"--moe-router-score-function sigmoid ",
         "megatron: --moe-router-score-function softmax (Megatron's default, not in the line): "
         "the model DeepSeek-V3 has sigmoid scores"},
        {"--moe-router-enable-expert-bias ",
         "megatron: --moe-router-enable-expert-bias not given, no correction bias (Megatron's "
         "default, not in the line): the model DeepSeek-V3 has a score-correction bias"},
        {"--moe-router-topk-scaling-factor 2.5 ",
         "megatron: --moe-router-topk-scaling-factor 1 (Megatron's default, not in the line): "
         "the model DeepSeek-V3 has routing weights scaled by 2.5"},
        {"--moe-router-num-groups 8 ", "megatron: --moe-router-num-groups none (Megatron's "
                                       "default, not in the line): the model DeepSeek-V3 has 8"},
        {"--moe-router-group-topk 4 ", "megatron: --moe-router-group-topk none (Megatron's "
                                       "default, not in the line): the model DeepSeek-V3 has 4"},
        {"--norm-epsilon 1e-06 ", "megatron: --norm-epsilon 1e-05 (Megatron's default, not in "
                                  "the line): the model DeepSeek-V3 has norm epsilon 1e-06"},
        /* --rope-type left out is yarn under MLA (MLATransformerConfig's default) */
        {"--rope-type yarn ", NULL},
        {"--mscale-all-dim 1 ", "megatron: --mscale-all-dim 0 (Megatron's default, not in the "
                                "line): the model DeepSeek-V3 has YaRN mscale_all_dim 1"},
        /* the dense layers' width under --swiglu: int(8·7168/3/64)·64 = 298·64 */
        {"--ffn-hidden-size 18432 ", "megatron: --ffn-hidden-size 19072 (Megatron's default, not "
                                     "in the line) = int(8 x --hidden-size / 3 / 64) x 64 under "
                                     "--swiglu: the model DeepSeek-V3 has 18432"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tsl_err_t e = {0};
        int rc = v3_without(&m, cases[i].drop, &e);
        if (!cases[i].want)
            CHECK(rc == 0, "DeepSeek-V3's own line without '%s': %s", cases[i].drop, e.msg);
        else
            CHECK(rc == -1 && strstr(e.msg, cases[i].want), "without '%s': %s", cases[i].drop,
                  e.msg);
    }
    tsl_model_free(&m);
}

/* The plan a torchtitan TOML's [model] flavor names on the model given: 0, or the
 * refusal naming [model] flavor with both models (torchtitan builds its flavor,
 * whatever --model says: the 8B file was priced as Llama3-70B without a word). */
static int flavor_plan(const char *model, const char *toml, tsl_eval_cfg_t *c, tsl_err_t *err)
{
    tsl_model_t m;
    tsl_cluster_t cl;
    tsl_plan_t g;
    load(model, "8xH100-80G", &m, &cl);
    int rc = tsl_eval_cfg_torchtitan(toml, c, err);
    if (rc == 0)
        rc = tsl_eval_cfg_plan(c, &m, 8, &g, err);
    tsl_model_free(&m);
    tsl_cluster_free(&cl);
    return rc;
}

static void test_torchtitan_flavor(void)
{
    tsl_eval_cfg_t c;
    tsl_err_t err = {0};
    const char *l8 = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nseq_len = 2048\n";
    CHECK(flavor_plan("Llama3-8B", l8, &c, &err) == 0, "8B on Llama3-8B: %s", err.msg);
    CHECK(flavor_plan("Llama3-70B", l8, &c, &err) == -1 && err.code == TSL_E_INVALID &&
              strstr(err.msg, "line 3: [model] flavor \"8B\" of llama3 is hidden 4096, 32 "
                              "Transformer layers") &&
              strstr(err.msg, "Llama3-70B, is hidden 8192, 80 layers") &&
              strstr(err.msg, "give --model Llama3-8B for the flavor"),
          "8B on Llama3-70B: %s", err.msg);
    /* no name: torchtitan's llama3; an attention variant is its base's shape */
    CHECK(flavor_plan("Llama3-8B", "[model]\nflavor = \"8B_flex\"\n", &c, &err) == 0, "8B_flex: %s",
          err.msg);
    CHECK(flavor_plan("Llama3-405B", "[model]\nflavor = \"70B\"\n", &c, &err) == -1 &&
              strstr(err.msg, "[model] flavor \"70B\"") && strstr(err.msg, "Llama3-405B"),
          "70B on Llama3-405B: %s", err.msg);
    /* the same size of another family, and the experts: Scout's 16 against 128 */
    CHECK(flavor_plan("Llama3-8B", "[model]\nname = \"qwen3\"\nflavor = \"8B\"\n", &c, &err) ==
                  -1 &&
              strstr(err.msg, "of qwen3 is hidden 4096, 36") && !strstr(err.msg, "--model"),
          "qwen3 8B on Llama3-8B: %s", err.msg);
    CHECK(flavor_plan("Llama4-Scout", "[model]\nname = \"llama4\"\nflavor = \"17bx16e\"\n", &c,
                      &err) == 0,
          "Scout: %s", err.msg);
    CHECK(flavor_plan("Llama4-Scout", "[model]\nname = \"llama4\"\nflavor = \"17bx128e\"\n", &c,
                      &err) == -1 &&
              strstr(err.msg, "128 routed experts") && strstr(err.msg, "Llama4-Maverick"),
          "Maverick on Scout: %s", err.msg);
    /* DeepSeek-V3's n_layers leave its MTP depth out */
    CHECK(flavor_plan("DeepSeek-V3", "[model]\nname = \"deepseek_v3\"\nflavor = \"671B\"\n", &c,
                      &err) == 0,
          "671B: %s", err.msg);
    CHECK(flavor_plan("GPT-OSS-20B", "[model]\nname = \"gpt_oss\"\nflavor = \"20b\"\n", &c, &err) ==
              0,
          "20b: %s", err.msg);
    /* a flavor Tessel has no figures for: said, not checked */
    CHECK(flavor_plan("Llama3-8B", "[model]\nname = \"llama2\"\nflavor = \"7B\"\n", &c, &err) ==
                  0 &&
              strstr(c.notes, "line 3: [model] flavor \"7B\" of llama2: not one Tessel knows"),
          "llama2 7B: %s / %s", err.msg, c.notes);
    CHECK(tsl_eval_cfg_torchtitan("[model]\nflavor = 8\n", &c, &err) == -1 &&
              strstr(err.msg, "[model] flavor"),
          "flavor 8: %s", err.msg);
}

/* A line's flags against what Tessel prices (Megatron-LM d98e8a6): the permutation's
 * fusion read into moe_unfused_permute; flags that change what runs without a knob
 * accepted with a "not modelled" note; a Megatron-LM flag Tessel does not read refused
 * as such; a misspelt one refused with the nearest flag; bad values named. */
static void test_megatron_audit(void)
{
    tsl_eval_cfg_t c;
    tsl_err_t err = {0};
    /* TransformerConfig moe_permute_fusion defaults False: unfused unless the line asks */
    CHECK(tsl_eval_cfg_megatron("--bf16 --expert-model-parallel-size 8", &c, &err) == 0 &&
              c.knobs.moe_unfused_permute,
          "no --moe-permute-fusion: the unfused permutation: %s", err.msg);
    CHECK(tsl_eval_cfg_megatron("--bf16 --expert-model-parallel-size 8 --moe-permute-fusion", &c,
                                &err) == 0 &&
              !c.knobs.moe_unfused_permute && c.notes[0] == '\0',
          "--moe-permute-fusion: fused: %s / %s", err.msg, c.notes);
    mg_refuses("--moe-permute-fusion 1", "--moe-permute-fusion takes no value");
    /* unmodelled: accepted, each named in a note, nothing else changed */
    CHECK(tsl_eval_cfg_megatron("--bf16 --optimizer-cuda-graph --moe-router-dtype fp32 "
                                "--moe-shared-expert-overlap "
                                "--no-fp8-wgrad --deterministic-mode --no-bias-swiglu-fusion "
                                "--ddp-bucket-size 40000000",
                                &c, &err) == 0 &&
              strstr(c.notes, "--optimizer-cuda-graph: not modelled by Tessel (a CUDA graph") &&
              strstr(c.notes, "--moe-router-dtype: not modelled") &&
              strstr(c.notes, "--moe-shared-expert-overlap: not modelled") &&
              strstr(c.notes, "--no-fp8-wgrad: not modelled") &&
              strstr(c.notes, "--deterministic-mode: not modelled") &&
              strstr(c.notes, "--no-bias-swiglu-fusion: not modelled") &&
              strstr(c.notes, "--ddp-bucket-size: not modelled"),
          "unmodelled flags noted: %s / %s", err.msg, c.notes);
    mg_refuses("--moe-router-dtype bf16", "--moe-router-dtype: 'bf16' is not fp32 or fp64");
    /* the local modules' fusion switches: noted only where those modules run */
    CHECK(tsl_eval_cfg_megatron("--bf16 --no-masked-softmax-fusion", &c, &err) == 0 &&
              c.notes[0] == '\0',
          "--no-masked-softmax-fusion under Transformer Engine: no effect: %s / %s", err.msg,
          c.notes);
    CHECK(tsl_eval_cfg_megatron("--bf16 --transformer-impl local --no-persist-layer-norm", &c,
                                &err) == 0 &&
              strstr(c.notes, "--no-persist-layer-norm: not modelled"),
          "--no-persist-layer-norm with the local modules: noted: %s / %s", err.msg, c.notes);
    CHECK(tsl_eval_cfg_megatron("--bf16 --num-distributed-optimizer-instances 1", &c, &err) == 0,
          "one distributed-optimizer instance: %s", err.msg);
    mg_refuses("--bf16 --num-distributed-optimizer-instances 2",
               "--num-distributed-optimizer-instances 2: Tessel prices one");
    /* refused by name: not a flag of Megatron-LM's, or not modelled where it changes
     * memory */
    mg_refuses("--bf16 --fp8-wgrad", "--fp8-wgrad is not a Megatron-LM argument (FP8 weight");
    mg_refuses("--bf16 --optimizer-cpu-offload", "--optimizer-cpu-offload (optimizer states");
    /* the interleaved schedule's p2p overlap off: noted there (PP > 2, as Megatron-LM
     * asserts), nothing without interleaving (Megatron-LM turns it off) */
    CHECK(tsl_eval_cfg_megatron("--bf16 --pipeline-model-parallel-size 4 "
                                "--num-virtual-stages-per-pipeline-rank 2 "
                                "--no-overlap-p2p-communication",
                                &c, &err) == 0 &&
              strstr(c.notes, "--no-overlap-p2p-communication: not modelled"),
          "no p2p overlap, interleaved: noted: %s / %s", err.msg, c.notes);
    CHECK(tsl_eval_cfg_megatron("--bf16 --pipeline-model-parallel-size 2 "
                                "--no-overlap-p2p-communication",
                                &c, &err) == 0 &&
              c.notes[0] == '\0',
          "no p2p overlap without interleaving: no effect: %s / %s", err.msg, c.notes);
    mg_refuses("--bf16 --pipeline-model-parallel-size 2 --num-virtual-stages-per-pipeline-rank 2 "
               "--no-overlap-p2p-communication",
               "pipeline-model-parallel size should be greater than 2");
    /* DeepEP's deprecated switch: the flex dispatcher's backend, which it needs */
    CHECK(tsl_eval_cfg_megatron("--bf16 --moe-token-dispatcher-type flex --moe-enable-deepep", &c,
                                &err) == 0 &&
              c.knobs.moe_flex && c.knobs.moe_flex_backend == TSL_FLEX_DEEPEP,
          "--moe-enable-deepep with the flex dispatcher: %s", err.msg);
    /* the flex back end: priced by name (HybridEP's routing map); ncclep noted as deepep */
    CHECK(tsl_eval_cfg_megatron("--bf16 --moe-token-dispatcher-type flex "
                                "--moe-flex-dispatcher-backend hybridep",
                                &c, &err) == 0 &&
              c.knobs.moe_flex_backend == TSL_FLEX_HYBRIDEP,
          "hybridep: %s", err.msg);
    CHECK(tsl_eval_cfg_megatron("--bf16 --moe-token-dispatcher-type flex "
                                "--moe-flex-dispatcher-backend ncclep",
                                &c, &err) == 0 &&
              c.knobs.moe_flex_backend == 0 && strstr(c.notes, "ncclep priced as deepep"),
          "ncclep: %s / %s", err.msg, c.notes);
    mg_refuses("--bf16 --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend nvep",
               "--moe-flex-dispatcher-backend: 'nvep' is not deepep, hybridep or ncclep");
    mg_refuses("--bf16 --moe-token-dispatcher-type flex --moe-enable-deepep "
               "--moe-flex-dispatcher-backend hybridep",
               "only one backend is supported for flex token dispatcher");
    mg_refuses("--bf16 --moe-enable-deepep", "--moe-enable-deepep: DeepEP backend is only "
                                             "supported with flex token dispatcher");
    /* a Megatron-LM flag Tessel has not read: refused as such, not as a typo */
    mg_refuses("--bf16 --moe-use-upcycling", "--moe-use-upcycling: a Megatron-LM flag Tessel "
                                             "does not read");
    /* a typo: the nearest flag named */
    mg_refuses("--bf16 --moe-permute-fuson", "--moe-permute-fuson is not a Megatron-LM argument "
                                             "(did you mean --moe-permute-fusion?)");
    mg_refuses("--bf16 --cuda-graph-iml local", "did you mean --cuda-graph-impl?");
    mg_refuses("--bf16 --zzzzzzzzzzzzzzz", "--zzzzzzzzzzzzzzz is not a Megatron-LM argument "
                                           "(Megatron-LM d98e8a6's parser refuses it");
    /* the list the refusals rest on */
    CHECK(tsl_mg_flag_known("moe-permute-fusion") && tsl_mg_flag_known("no-fp8-wgrad") &&
              tsl_mg_flag_known("cuda-graph-impl") && !tsl_mg_flag_known("fp8-wgrad") &&
              !tsl_mg_flag_known("moe-permute") && !tsl_mg_flag_known(""),
          "Megatron-LM d98e8a6's flags");
}

/* A Megatron-LM line's CUDA-graph flags as read (eval_cgraph.h). */
static void mg_graphs(const char *line, uint8_t impl, uint32_t mods, bool whole, bool nhf)
{
    tsl_eval_cfg_t c;
    tsl_err_t err = {0};
    CHECK(tsl_eval_cfg_megatron(line, &c, &err) == 0 && c.cuda_graph_impl == impl &&
              c.knobs.cuda_graph_modules == mods && c.cuda_graph_whole == whole &&
              c.no_host_floor == nhf,
          "'%s': %s (impl %u modules 0x%x whole %d no_host_floor %d)", line, err.msg,
          c.cuda_graph_impl, c.knobs.cuda_graph_modules, c.cuda_graph_whole, c.no_host_floor);
}

/* line on model over n devices: 0 and *g, or -1 with err's code. */
static int mg_plan(const char *model, const char *line, uint32_t n, tsl_plan_t *g, tsl_err_t *err)
{
    tsl_model_t m;
    tsl_cluster_t cl;
    tsl_eval_cfg_t c;
    load(model, "8xH100-80G", &m, &cl);
    int rc = tsl_eval_cfg_megatron(line, &c, err) == 0 ? tsl_eval_cfg_plan(&c, &m, n, g, err) : -1;
    tsl_model_free(&m);
    tsl_cluster_free(&cl);
    return rc;
}

static void mg_plan_refuses(const char *model, const char *line, tsl_errcode_t code,
                            const char *want)
{
    static tsl_plan_t g;
    tsl_err_t err = {0};
    CHECK(mg_plan(model, line, 8, &g, &err) == -1 && tsl_err_code(&err) == code &&
              strstr(err.msg, want),
          "%s '%s': want code %d and '%s', got %d '%s'", model, line, (int)code, want,
          (int)tsl_err_code(&err), err.msg);
}

/* Megatron-LM d98e8a6's CUDA graphs (validate_args, TransformerConfig.__post_init__):
 * a per-layer impl is the plan's cuda_graph_modules (local adds moe_preprocess to
 * moe_router and back), no modules the whole layer (its modules on the model),
 * full_iteration the request's no_host_floor; what Megatron-LM refuses refused. Before,
 * every flag was accepted as not modelled and priced eager. */
static void test_megatron_cuda_graphs(void)
{
    const uint32_t A = TSL_CUDA_GRAPH_ATTN, ML = TSL_CUDA_GRAPH_MLP, R = TSL_CUDA_GRAPH_MOE_ROUTER,
                   P = TSL_CUDA_GRAPH_MOE_PREPROCESS, MB = TSL_CUDA_GRAPH_MAMBA;
    const char *te = "--bf16 --cuda-graph-impl transformer_engine";
    char line[256];
    mg_graphs("--bf16 --cuda-graph-impl transformer_engine --cuda-graph-modules attn moe_router",
              TSL_EVAL_CGRAPH_TE, A | R, false, false);
    mg_graphs("--bf16 --cuda-graph-impl local --cuda-graph-modules attn moe_router",
              TSL_EVAL_CGRAPH_LOCAL, A | R | P, false, false);
    mg_graphs("--bf16 --cuda-graph-impl local --cuda-graph-modules moe_preprocess",
              TSL_EVAL_CGRAPH_LOCAL, R | P, false, false);
    mg_graphs("--bf16 --external-cuda-graph --cuda-graph-scope attn mamba", TSL_EVAL_CGRAPH_TE,
              A | MB, false, false);
    mg_graphs("--bf16 --enable-cuda-graph --cuda-graph-warmup-steps 2", TSL_EVAL_CGRAPH_LOCAL, 0,
              true, false);
    mg_graphs("--bf16 --cuda-graph-impl transformer_engine --cuda-graph-modules full",
              TSL_EVAL_CGRAPH_TE, 0, true, false);
    mg_graphs("--bf16 --cuda-graph-impl full_iteration --no-check-for-nan-in-loss-and-grad",
              TSL_EVAL_CGRAPH_FULL_ITERATION, 0, false, true);
    mg_graphs("--bf16 --cuda-graph-impl local --cuda-graph-modules full_iteration "
              "--no-check-for-nan-in-loss-and-grad",
              TSL_EVAL_CGRAPH_FULL_ITERATION, 0, false, true);
    mg_graphs("--bf16 --cuda-graph-modules=full_iteration --no-check-for-nan-in-loss-and-grad",
              TSL_EVAL_CGRAPH_FULL_ITERATION, 0, false, true);
    mg_graphs("--bf16 --cuda-graph-modules attn", TSL_EVAL_CGRAPH_NONE, 0, false, false);
    tsl_eval_cfg_t c;
    tsl_err_t err = {0};
    CHECK(tsl_eval_cfg_megatron("--bf16 --cuda-graph-modules attn", &c, &err) == 0 &&
              strstr(c.notes, "--cuda-graph-modules without --cuda-graph-impl: no CUDA graph"),
          "modules without an impl noted: %s", c.notes);
    CHECK(tsl_eval_cfg_megatron("--bf16 --cuda-graph-impl full_iteration "
                                "--no-check-for-nan-in-loss-and-grad",
                                &c, &err) == 0 &&
              strstr(c.notes, "full_iteration: one CUDA graph") &&
              strstr(c.notes, "(as --no-host-floor)"),
          "full_iteration noted: %s", c.notes);
    CHECK(tsl_eval_cfg_megatron("--bf16 --cuda-graph-impl none --cuda-graph-warmup-steps 3", &c,
                                &err) == 0 &&
              c.notes[0] == '\0' && !c.knobs.cuda_graph_modules && !c.no_host_floor,
          "--cuda-graph-impl none: no CUDA graph, nothing to note: %s / %s", err.msg, c.notes);
    mg_refuses("--cuda-graph-impl te", "--cuda-graph-impl: 'te' is not none, local");
    mg_refuses("--cuda-graph-impl local --cuda-graph-modules attn router",
               "--cuda-graph-modules: 'router' is not attn, mlp");
    mg_refuses("--cuda-graph-impl local --cuda-graph-modules", "needs one or more modules");
    mg_refuses("--enable-cuda-graph 1", "--enable-cuda-graph takes no value");
    mg_refuses("--cuda-graph-impl local --enable-cuda-graph", "refuses the deprecated flag");
    mg_refuses("--enable-cuda-graph --external-cuda-graph", "cannot be enabled at the same time");
    mg_refuses("--cuda-graph-impl local --cuda-graph-scope attn --cuda-graph-modules mlp",
               "cannot be used together");
    mg_refuses("--cuda-graph-impl local --cuda-graph-modules full attn",
               "full cannot be used with other scopes");
    mg_refuses("--cuda-graph-impl full_iteration --no-check-for-nan-in-loss-and-grad "
               "--cuda-graph-modules attn",
               "--cuda-graph-modules must be empty with --cuda-graph-impl full_iteration");
    mg_refuses("--cuda-graph-impl full_iteration", "needs --no-check-for-nan-in-loss-and-grad");
    mg_refuses("--cuda-graph-impl transformer_engine --cuda-graph-modules full_iteration",
               "cannot be combined with --cuda-graph-impl transformer_engine");
    mg_refuses("--cuda-graph-impl transformer_engine --cuda-graph-modules moe_preprocess",
               "moe_preprocess is captured with the router");
    mg_refuses("--cuda-graph-impl local --cuda-graph-modules moe moe_router",
               "moe graphs the whole MoE block");
    mg_refuses("--cuda-graph-impl local --cuda-graph-modules full_iteration_inference",
               "an inference graph scope");

    /* on the model: a whole layer is its modules; what TransformerConfig asserts refused
     * (exit 2), a whole MoE layer unpriced (exit 4) */
    static tsl_plan_t g;
    CHECK(mg_plan("GPT2-345M", te, 8, &g, &err) == 0 && g.cuda_graph_modules == (A | ML),
          "a whole GPT layer: attn and mlp: %s (0x%x)", err.msg, g.cuda_graph_modules);
    snprintf(line, sizeof line, "%s --cuda-graph-modules attn", te);
    CHECK(mg_plan("GPT2-345M", line, 8, &g, &err) == 0 && g.cuda_graph_modules == A,
          "attn on GPT: %s (0x%x)", err.msg, g.cuda_graph_modules);
    mg_plan_refuses("Mixtral-8x7B", te, TSL_E_UNSUPPORTED, "captures every layer whole");
    snprintf(line, sizeof line, "%s --cuda-graph-modules attn moe_router", te);
    mg_plan_refuses("GPT2-345M", line, TSL_E_INVALID, "has no routed experts");
    CHECK(mg_plan("Mixtral-8x7B", line, 8, &g, &err) == 0 && g.cuda_graph_modules == (A | R),
          "attn and the router on Mixtral: %s (0x%x)", err.msg, g.cuda_graph_modules);
    snprintf(line, sizeof line, "%s --cuda-graph-modules mlp", te);
    mg_plan_refuses("Mixtral-8x7B", line, TSL_E_INVALID, "every FFN of");
    snprintf(line, sizeof line, "%s --cuda-graph-modules moe", te);
    mg_plan_refuses("Mixtral-8x7B", line, TSL_E_INVALID, "drop-and-pad");
    snprintf(line, sizeof line,
             "%s --cuda-graph-modules moe --moe-expert-capacity-factor 1 "
             "--moe-pad-expert-input-to-capacity",
             te);
    CHECK(mg_plan("Mixtral-8x7B", line, 8, &g, &err) == 0 &&
              g.cuda_graph_modules == TSL_CUDA_GRAPH_MOE,
          "moe under drop-and-pad: %s", err.msg);
    snprintf(line, sizeof line,
             "%s --cuda-graph-modules attn --recompute-granularity full --recompute-method "
             "uniform --recompute-num-layers 1",
             te);
    mg_plan_refuses("GPT2-345M", line, TSL_E_INVALID, "beside full recompute");
    snprintf(line, sizeof line, "%s --cuda-graph-modules attn --cpu-offloading-num-layers 2", te);
    mg_plan_refuses("GPT2-345M", line, TSL_E_INVALID, "not supported with CPU offloading");
    const char *rec = "--cuda-graph-modules moe_router moe_preprocess --recompute-granularity "
                      "selective --recompute-modules moe";
    snprintf(line, sizeof line, "%s %s", te, rec);
    mg_plan_refuses("Mixtral-8x7B", line, TSL_E_INVALID, "beside the moe module's recompute");
    snprintf(line, sizeof line, "--bf16 --cuda-graph-impl local %s", rec);
    CHECK(mg_plan("Mixtral-8x7B", line, 8, &g, &err) == 0 && g.cuda_graph_modules == (R | P),
          "local: the router beside moe recompute: %s", err.msg);
    snprintf(line, sizeof line,
             "%s --cuda-graph-modules moe_router moe_preprocess --moe-token-dispatcher-type "
             "alltoall --moe-expert-capacity-factor 1.5",
             te);
    mg_plan_refuses("Mixtral-8x7B", line, TSL_E_INVALID, "moe_preprocess under the all-to-all");
}

int main(void)
{
    test_megatron_line();
    test_megatron_audit();
    test_megatron_flags();
    test_megatron_validate();
    test_torchtitan_toml();
    test_torchtitan_flavor();
    test_torchtitan_keys();
    test_torchtitan_unknown();
    test_torchtitan_old_batch();
    test_cfg_refusals();
    test_round_trips();
    test_megatron_modules();
    test_knobs();
    test_megatron_mtp();
    test_megatron_defaults();
    test_megatron_cuda_graphs();
    return CHECK_DONE();
}

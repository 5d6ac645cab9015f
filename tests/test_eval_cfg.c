/* Tests for common/eval_cfg: launch configurations as plans, and the round trip
 * plan -> Megatron-LM arguments / torchtitan TOML -> plan with the same figures. */
#include <string.h>

#include "check.h"
#include "eval.h"
#include "eval_cfg.h"
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
static void round_trip(const char *model, const char *cluster, const tsl_eval_cfg_t *cfg,
                       tsl_export_format_t f)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    tsl_request_t r;
    tsl_request_init(&r);
    load(model, cluster, &m, &c);
    static tsl_plan_t g, a, g2, b;
    char *text = NULL;
    size_t len;
    const char *fmt = tsl_export_format_name(f);
    CHECK(tsl_eval_cfg_plan(cfg, &m, c.n_devices, &g, &err) == 0, "%s: cfg: %s", fmt, err.msg);
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &a, &err) == 0, "%s: eval: %s", fmt, err.msg);
    CHECK(tsl_export(f, &a, &m, &text, &len, &err) == 0, "%s: export: %s", fmt, err.msg);
    tsl_eval_cfg_t back;
    int rc = f == TSL_EXPORT_MEGATRON ? tsl_eval_cfg_megatron(text, &back, &err)
                                      : tsl_eval_cfg_torchtitan(text, &back, &err);
    CHECK(rc == 0, "%s: parse: %s\n%s", fmt, err.msg, text);
    CHECK(tsl_eval_cfg_plan(&back, &m, c.n_devices, &g2, &err) == 0, "%s: back: %s", fmt, err.msg);
    CHECK(tsl_eval_plan(&m, &c, &r, &g2, &b, &err) == 0, "%s: eval back: %s", fmt, err.msg);
    CHECK(tsl_eval_same_figures(&a, &b), "%s round trip: %.9g s vs %.9g s\n%s", fmt, a.iter_time_s,
          b.iter_time_s, text);
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
    round_trip("GPT2-345M", "8xA100-80G", &cfg, TSL_EXPORT_TORCHTITAN);
    /* uneven split (by FLOPs: the embedding and head weigh), no checkpointing */
    tsl_eval_cfg_t uneven = {.tp = 4, .pp = 2, .mbs = 1, .n_micro = 8};
    round_trip("GPT2-1.3B", "2x8xA100-40G:ib100", &uneven, TSL_EXPORT_MEGATRON);
    round_trip("GPT2-1.3B", "2x8xA100-40G:ib100", &uneven, TSL_EXPORT_TORCHTITAN);
    tsl_eval_cfg_t fsdp = {.sdp = 8, .mbs = 2, .global_batch = 64};
    round_trip("GPT2-345M", "8xA100-80G", &fsdp, TSL_EXPORT_TORCHTITAN);
}

static void test_megatron_line(void)
{
    tsl_eval_cfg_t c;
    tsl_err_t err = {0};
    CHECK(tsl_eval_cfg_megatron("--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 "
                                "--micro-batch-size 1 --global-batch-size=512 "
                                "--recompute-granularity full --sequence-parallel "
                                "--use-distributed-optimizer --bf16 --lr 1e-4",
                                &c, &err) == 0,
          "%s", err.msg);
    CHECK(c.tp == 8 && c.pp == 4 && c.mbs == 1 && c.global_batch == 512 &&
              c.ckpt == TSL_EVAL_CKPT_FULL && c.sp && c.zero == 1,
          "megatron line read wrong");
    CHECK(tsl_eval_cfg_megatron("--tensor-model-parallel-size x", &c, &err) == -1 &&
              strstr(err.msg, "tensor-model-parallel-size"),
          "bad value: %s", err.msg);
    CHECK(tsl_eval_cfg_megatron("--recompute-granularity some", &c, &err) == -1 &&
              strstr(err.msg, "recompute-granularity"),
          "bad granularity: %s", err.msg);
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
              c.seq_len == 2048 && c.n_split_points == 1 && c.split_points[0] == 12 &&
              c.ckpt == TSL_EVAL_CKPT_SELECTIVE,
          "toml read wrong");
    CHECK(tsl_eval_cfg_torchtitan("[parallelism]\ntensor_parallel_degree = \"2\"\n", &c, &err) ==
                  -1 &&
              strstr(err.msg, "tensor_parallel_degree") && strstr(err.msg, "line 2"),
          "typed key: %s", err.msg);
    CHECK(tsl_eval_cfg_torchtitan("[activation_checkpoint]\nmode = \"most\"\n", &c, &err) == -1 &&
              strstr(err.msg, "mode"),
          "mode: %s", err.msg);
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
    tsl_eval_cfg_t lps = {.pp = 2, .n_counts = 2, .counts = {10, 10}};
    CHECK(tsl_eval_cfg_plan(&lps, &m, 8, &g, &err) == -1 && strstr(err.msg, "add up to 20"),
          "counts: %s", err.msg);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

int main(void)
{
    test_megatron_line();
    test_torchtitan_toml();
    test_cfg_refusals();
    test_round_trips();
    return CHECK_DONE();
}

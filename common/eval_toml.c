/*
 * eval_toml.c — torchtitan's configuration, the subset a plan needs (eval_cfg.h),
 * in both forms it has had (pytorch/torchtitan; docs/tesselctl.md "eval"):
 *
 * - the job TOML of v0.1.0 .. v0.2.x (removed in 9810191bb, 2026-02-23):
 *   [section] headers, `key = value` lines with integers, "strings", booleans and
 *   arrays (of strings, or of arrays of strings, over several lines), '#' comments;
 * - the Python function returning Trainer.Config of torchtitan since then (read,
 *   not run: `name = literal` assignments and `name=literal` keywords whose last
 *   name is a key below, e.g. `par.tensor_parallel_degree = 8` or
 *   `ParallelismConfig(tensor_parallel_degree=8)`, literals being integers and
 *   their products, strings, True/False, lists of strings).
 *
 * Other keys are skipped unread; a key we read with the wrong type fails naming it
 * and its line. In the TOML form an unknown section, or an unknown key in a
 * section Tessel reads, is refused (eval_toml_keys.h), as torchtitan v0.2 refuses
 * it, unless the file names a custom config module (which may add fields).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eval_cfg.h"
#include "eval_toml_keys.h"

#define TT_VALUE 16384 /* an 80-stage module_fqns_per_model_part fits */

typedef struct toml_line {
    char section[64], key[64], value[TT_VALUE];
    uint32_t line;
} toml_line_t;

/* The TOML keys seen so far, as a hash of "section.key" and the line: TOML allows
 * a key once in a table (tomllib: "Cannot overwrite a value"), so torchtitan
 * refuses a file that gives one twice, which must not be priced at its last
 * value. A file with more keys than this is checked for its first ones. */
#define TT_SEEN 512

typedef struct tt_seen {
    uint64_t hash[TT_SEEN];
    uint32_t line[TT_SEEN], n;
} tt_seen_t;

/* What is read besides cfg's own fields, settled once the file is read. */
typedef struct tt_state {
    bool python, ac_given, sp_off;
    /* [parallelism] enable_async_tensor_parallel (v0.1.0 on; [experimental] at 9dec370):
     * torch's micro-pipelined TP, priced as async_tp where TP > 1 */
    bool async_tp;
    tsl_eval_ckpt_t ac_mode;
    char ac_option[16];
    char cp_rotate[16]; /* context_parallel_rotate_method; "" = allgather (its default) */
    char reshard[16];   /* fsdp_reshard_after_forward; "" = "default" */
    int64_t cp, ep, etp, tokens_mb, tokens_step, ctx, pp_micro;
    uint32_t global_line; /* global_batch_size = -1's line, 0: not given */
    /* torchtitan before #1238: [training] batch_size (the rank's batch) and, before
     * #1073, [parallelism] pipeline_parallel_microbatches (tt_old_batch); 0: not given */
    int64_t old_batch, old_micro;
    uint32_t old_batch_line, old_micro_line;
    /* Float8 (torchao through torchtitan's model converters): float8 the
     * converter (v0.2 "quantize.linear.float8", v0.1 "float8") or v0.1-era
     * [float8] enable_float8_linear; mx "quantize.linear.mx"; recipe_name */
    bool float8, mx;
    char fp8_recipe[24];
    /* the routed experts' grouped GEMMs converted too (v0.2 "quantize.grouped_mm.float8"
     * or ".mx", main's Float8/MXFP8GroupedExpertsConverter); torchao's FSDP float8
     * all-gather (v0.1/v0.2 enable_fsdp_float8_all_gather) */
    bool grouped, fsdp_fp8;
    char other_conv[48]; /* the first [model] converters name none of the above (noted) */
    /* torch.compile: [training] compile (late 2024, v0.1.0), [compile] enable and
     * components (v0.2, main's CompileConfig); off, torchtitan's default, or
     * without "model" among the components: the model runs eagerly (knobs.eager) */
    bool compile, compile_no_model;
    tt_seen_t *seen; /* the TOML form's keys */
    /* [job] custom_config_module (v0.2) or [experimental] custom_args_module
     * (v0.1) named: its own sections and keys are accepted unread */
    bool custom;
} tt_state_t;

/* An integer, or (Python) a product of integers: "8 * 8192". */
static int want_int(const toml_line_t *t, int64_t lo, int64_t *out, tsl_err_t *err)
{
    const char *s = t->value;
    long long v = 1;
    for (;;) {
        char *end;
        long long f = strtoll(s, &end, 10);
        /* each factor and the product within 2^40: checked before multiplying,
         * 2^40 * 2^40 overflowed long long (UBSan) */
        if (end == s || (v != 1 && f < 0) || llabs(f) > (1ll << 40) ||
            (f != 0 && llabs(v) > (1ll << 40) / llabs(f)))
            break;
        v *= f;
        while (isspace((unsigned char)*end))
            end++;
        if (*end == '\0' && v >= lo && v <= (1ll << 40)) {
            *out = v;
            return 0;
        }
        if (*end != '*')
            break;
        s = end + 1;
    }
    return tsl_err_set(err, "torchtitan: line %u: [%s] %s: '%s' is not an integer >= %lld", t->line,
                       t->section, t->key, t->value, (long long)lo);
}

/* v fits the uint32_t it is stored in: 4294967296 was cut to 0 ("not given",
 * priced at the default) and 99999999999 to 1215752191. */
static int u32_range(const toml_line_t *t, int64_t v, tsl_err_t *err)
{
    if (v <= (int64_t)UINT32_MAX)
        return 0;
    return tsl_err_set(err, "torchtitan: line %u: [%s] %s: %lld is above %u", t->line, t->section,
                       t->key, (long long)v, UINT32_MAX);
}

/* A "string" (or Python's 'string') value into buf. */
static int want_str(const toml_line_t *t, char *buf, size_t cap, tsl_err_t *err)
{
    size_t n = strlen(t->value);
    char q = t->value[0];
    if (n < 2 || (q != '"' && q != '\'') || t->value[n - 1] != q || n - 1 > cap)
        return tsl_err_set(err, "torchtitan: line %u: [%s] %s: expected a \"string\"", t->line,
                           t->section, t->key);
    snprintf(buf, cap, "%.*s", (int)(n - 2), t->value + 1);
    return 0;
}

static int want_bool(const toml_line_t *t, bool *out, tsl_err_t *err)
{
    if (strcmp(t->value, "true") == 0 || strcmp(t->value, "True") == 0)
        *out = true;
    else if (strcmp(t->value, "false") == 0 || strcmp(t->value, "False") == 0)
        *out = false;
    else
        return tsl_err_set(err, "torchtitan: line %u: [%s] %s: '%s' is not true or false", t->line,
                           t->section, t->key, t->value);
    return 0;
}

/* pipeline_parallel_split_points = ["layers.4", "layers.8"] (v0.1.0) */
static int split_points(const toml_line_t *t, tsl_eval_cfg_t *c, tsl_err_t *err)
{
    const char *s = t->value;
    if (*s++ != '[')
        return tsl_err_set(err, "torchtitan: line %u: %s: expected [\"layers.N\", ...]", t->line,
                           t->key);
    c->n_split_points = 0;
    for (;;) {
        while (isspace((unsigned char)*s) || *s == ',')
            s++;
        if (*s == ']')
            return 0;
        unsigned n;
        int used = 0;
        if (sscanf(s, "\"layers.%u\"%n", &n, &used) != 1 || used == 0 ||
            c->n_split_points == TSL_PLAN_MAX_STAGES)
            return tsl_err_set(err, "torchtitan: line %u: %s: expected \"layers.N\" entries",
                               t->line, t->key);
        c->split_points[c->n_split_points++] = n;
        s += used;
    }
}

/* module_fqns_per_model_part = [["tok_embeddings", "layers.0"], ...]: Tessel's
 * layers per stage, the embedding and the head (norm with output / lm_head) one
 * layer each. */
static int model_parts(const toml_line_t *t, tsl_eval_cfg_t *c, tsl_err_t *err)
{
    const char *s = t->value;
    int depth = 0;
    c->n_counts = 0;
    for (; *s; s++) {
        if (*s == '[' && ++depth == 2) {
            if (c->n_counts == TSL_PLAN_MAX_STAGES)
                break;
            c->counts[c->n_counts++] = 0;
        } else if (*s == ']') {
            depth--;
        } else if ((*s == '"' || *s == '\'') && depth == 2) {
            const char *e = strchr(s + 1, *s);
            if (e == NULL)
                break;
            size_t n = (size_t)(e - s - 1);
            bool counted = (n == 14 && strncmp(s + 1, "tok_embeddings", n) == 0) ||
                           (n > 7 && strncmp(s + 1, "layers.", 7) == 0) ||
                           (n == 6 && strncmp(s + 1, "output", n) == 0) ||
                           (n == 7 && strncmp(s + 1, "lm_head", n) == 0);
            if (!counted && !(n == 4 && strncmp(s + 1, "norm", n) == 0))
                return tsl_err_set(err,
                                   "torchtitan: line %u: %s: '%.*s' is not a module "
                                   "Tessel places (tok_embeddings, layers.N, norm, "
                                   "output / lm_head)",
                                   t->line, t->key, (int)n, s + 1);
            c->counts[c->n_counts - 1] += counted;
            s = e;
        }
    }
    if (depth != 0 || c->n_counts == 0)
        return tsl_err_set(err, "torchtitan: line %u: %s: expected [[\"module\", ...], ...]",
                           t->line, t->key);
    return 0;
}

static int ckpt_mode(const toml_line_t *t, tt_state_t *st, tsl_err_t *err)
{
    char mode[32];
    if (want_str(t, mode, sizeof mode, err) != 0)
        return -1;
    st->ac_given = true;
    if (strcmp(mode, "full") == 0)
        st->ac_mode = TSL_EVAL_CKPT_FULL;
    else if (strcmp(mode, "selective") == 0)
        st->ac_mode = TSL_EVAL_CKPT_SELECTIVE;
    else if (strcmp(mode, "none") == 0)
        st->ac_mode = TSL_EVAL_CKPT_NONE;
    else if (strcmp(mode, "memory_budget") == 0)
        return tsl_err_set(err,
                           "torchtitan: line %u: [activation_checkpoint] mode "
                           "\"memory_budget\" (the compiler's choice) is not modelled by "
                           "Tessel",
                           t->line);
    else
        return tsl_err_set(err,
                           "torchtitan: line %u: [activation_checkpoint] mode: '%s' is "
                           "not full, selective or none",
                           t->line, mode);
    return 0;
}

/* pipeline_parallel_schedule: the schedules Tessel models (torch's
 * get_schedule_class takes the name in any case). */
static int schedule(const toml_line_t *t, tsl_eval_cfg_t *c, tsl_err_t *err)
{
    char name[64];
    if (want_str(t, name, sizeof name, err) != 0)
        return -1;
    c->tt_zbv = c->tt_dualpipev = false;
    if (strcasecmp(name, "1F1B") == 0)
        c->tt_multi = false;
    else if (strcasecmp(name, "Interleaved1F1B") == 0)
        c->tt_multi = true;
    else if (strcasecmp(name, "ZBVZeroBubble") == 0)
        c->tt_multi = c->tt_zbv = true;
    else if (strcasecmp(name, "DualPipeV") == 0)
        c->tt_multi = c->tt_zbv = c->tt_dualpipev = true;
    else
        return tsl_err_set(err,
                           "torchtitan: line %u: pipeline_parallel_schedule \"%s\": "
                           "Tessel models 1F1B, Interleaved1F1B, ZBVZeroBubble and "
                           "DualPipeV only",
                           t->line, name);
    return 0;
}

typedef struct tt_key {
    const char *section, *key;
    int64_t min;
    size_t offset; /* a uint32_t of tsl_eval_cfg_t */
} tt_key_t;

static const tt_key_t tt_u32[] = {
    {"parallelism", "tensor_parallel_degree", 1, offsetof(tsl_eval_cfg_t, tp)},
    {"parallelism", "pipeline_parallel_degree", 1, offsetof(tsl_eval_cfg_t, pp)},
    {"parallelism", "data_parallel_replicate_degree", 1, offsetof(tsl_eval_cfg_t, dp)},
    {"parallelism", "pipeline_parallel_microbatch_size", 1, offsetof(tsl_eval_cfg_t, mbs)},
    {"parallelism", "pipeline_parallel_layers_per_stage", 1,
     offsetof(tsl_eval_cfg_t, tt_layers_per_stage)},
    {"parallelism", "pipeline_parallel_first_stage_less_layers", 0,
     offsetof(tsl_eval_cfg_t, tt_in_w)},
    {"parallelism", "pipeline_parallel_last_stage_less_layers", 0,
     offsetof(tsl_eval_cfg_t, tt_out_w)},
    {"training", "local_batch_size", 1, offsetof(tsl_eval_cfg_t, local_batch)},
    {"training", "seq_len", 1, offsetof(tsl_eval_cfg_t, seq_len)},
};

typedef struct tt_i64 {
    const char *section, *key;
    int64_t min;
    size_t offset; /* an int64_t of tt_state_t */
} tt_i64_t;

static const tt_i64_t tt_state_keys[] = {
    {"parallelism", "context_parallel_degree", 1, offsetof(tt_state_t, cp)},
    {"parallelism", "expert_parallel_degree", 1, offsetof(tt_state_t, ep)},
    {"parallelism", "expert_tensor_parallel_degree", 1, offsetof(tt_state_t, etp)},
    {"parallelism", "num_pp_microbatches", 1, offsetof(tt_state_t, pp_micro)},
    {"training", "num_tokens_per_microbatch_per_dp_rank", 1, offsetof(tt_state_t, tokens_mb)},
    {"training", "num_tokens_per_train_step", -1, offsetof(tt_state_t, tokens_step)},
    {"training", "max_context_length", 1, offsetof(tt_state_t, ctx)},
};

/* Not inlined: GCC 12 under -fsanitize=address misreads the inlined strcmp of
 * the line's fixed arrays as an over-read (-Wstringop-overread), a false
 * positive that -Werror would turn into a failed build. */
__attribute__((noinline)) static bool is(const toml_line_t *t, const char *section, const char *key)
{
    return strcmp(t->section, section) == 0 && strcmp(t->key, key) == 0;
}

/* [training] dtype: "float32" (the default) keeps fp32 parameters under
 * FSDP2's bf16 compute; "bfloat16" puts parameters, gradients and optimizer
 * states in bf16 without an fp32 copy (torchtitan/config/configs.py). */
static int training_dtype(const toml_line_t *t, tsl_eval_cfg_t *c, tsl_err_t *err)
{
    char v[32];
    if (want_str(t, v, sizeof v, err) != 0)
        return -1;
    if (strcmp(v, "bfloat16") != 0 && strcmp(v, "float32") != 0)
        return tsl_err_set(err, "torchtitan: line %u: dtype = \"%s\": bfloat16 or float32", t->line,
                           v);
    /* bf16 throughout: the gradients too, reduced in their 16 bits */
    c->knobs.no_fp32_master = strcmp(v, "bfloat16") == 0;
    c->knobs.grad_reduce_bytes = c->knobs.no_fp32_master ? 0 : 4;
    return 0;
}

/* [training] mixed_precision_param: "bfloat16" (the default) computes in bf16 over the
 * fp32 parameters; "float32" trains in fp32 (TrainingConfig; Training at v0.2.0 ..
 * v0.2.2), its matmuls without TF32 (torchtitan sets allow_tf32 only to False, in
 * deterministic mode, distributed/utils.py: knobs.tf32_off). */
static int training_mp_param(const toml_line_t *t, tsl_eval_cfg_t *c, tsl_err_t *err)
{
    char v[32];
    if (want_str(t, v, sizeof v, err) != 0)
        return -1;
    if (strcmp(v, "bfloat16") != 0 && strcmp(v, "float32") != 0)
        return tsl_err_set(err,
                           "torchtitan: line %u: mixed_precision_param = \"%s\": bfloat16 or "
                           "float32",
                           t->line, v);
    c->knobs.fp32 = c->knobs.tf32_off = strcmp(v, "float32") == 0;
    return 0;
}

/* The first quoted name in a converters list that is none of the Float8/MX ones
 * read above, into st->other_conv: a misspelt "quantize.linear.flaot8" would
 * otherwise price bf16 without a word (torchtitan's registry refuses it). */
static void other_converter(const char *v, tt_state_t *st)
{
    static const char *const known[] = {"float8",
                                        "mx",
                                        "quantize.linear.float8",
                                        "quantize.linear.mx",
                                        "quantize.grouped_mm.float8",
                                        "quantize.grouped_mm.mx"};
    for (const char *q = strchr(v, '"'); q && !st->other_conv[0]; q = strchr(q, '"')) {
        const char *e = strchr(q + 1, '"');
        if (e == NULL)
            break;
        size_t n = (size_t)(e - q - 1);
        bool ok = false;
        for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
            ok |= strlen(known[k]) == n && strncmp(known[k], q + 1, n) == 0;
        if (!ok)
            snprintf(st->other_conv, sizeof st->other_conv, "%.*s", (int)(n < 40 ? n : 40), q + 1);
        q = e + 1;
    }
}

/* Float8 keys (docs/tesselctl.md "eval"): [model] converters naming float8 or
 * mx, [float8] enable_float8_linear (torchtitan late 2024), recipe_name under
 * [quantize.linear.float8] (v0.2) or [float8] (v0.1); 1: not one of them. */
static int tt_float8(const toml_line_t *t, tt_state_t *st, tsl_err_t *err)
{
    if (is(t, "model", "converters")) {
        st->float8 |= strstr(t->value, "\"float8\"") != NULL ||
                      strstr(t->value, "\"quantize.linear.float8\"") != NULL;
        st->mx |= strstr(t->value, "\"mx\"") != NULL ||
                  strstr(t->value, "\"quantize.linear.mx\"") != NULL;
        st->grouped |= strstr(t->value, "\"quantize.grouped_mm.float8\"") != NULL ||
                       strstr(t->value, "\"quantize.grouped_mm.mx\"") != NULL;
        other_converter(t->value, st);
        return 0;
    }
    if (is(t, "quantize.linear.float8", "enable_fsdp_float8_all_gather") ||
        is(t, "float8", "enable_fsdp_float8_all_gather"))
        return want_bool(t, &st->fsdp_fp8, err);
    if (is(t, "float8", "enable_float8_linear")) {
        bool on = false;
        if (want_bool(t, &on, err) != 0)
            return -1;
        st->float8 |= on;
        return 0;
    }
    if (is(t, "quantize.linear.float8", "recipe_name") || is(t, "float8", "recipe_name"))
        return want_str(t, st->fp8_recipe, sizeof st->fp8_recipe, err);
    return 1;
}

/* The recipe the converters ask for: torchao's tensorwise (its default, and
 * the benchmarks'), rowwise priced as tensorwise (noted), MXFP8 — run by torchao. */
static int tt_fp8(tsl_eval_cfg_t *c, const tt_state_t *st, tsl_err_t *err)
{
    /* the experts stay bf16 unless their grouped GEMMs are converted too */
    c->knobs.moe_bf16_experts = (st->mx || st->float8) && !st->grouped;
    c->knobs.fp8_impl = TSL_FP8_IMPL_TORCHAO; /* Float8Linear, MX linear (fp8_impl.h) */
    if (st->other_conv[0])
        tsl_eval_cfg_note(c,
                          "torchtitan: model converter \"%s\" is not one Tessel prices (the "
                          "Float8 and MX linear and grouped-experts converters): priced without "
                          "it",
                          st->other_conv);
    if (st->mx) {
        c->knobs.fp8 = TSL_FP8_MXFP8;
        return 0;
    }
    if (!st->float8)
        return 0;
    c->knobs.fp8 = TSL_FP8_TENSORWISE;
    /* v0.2's Float8LinearConverter asserts the FSDP float8 all-gather apart from a
     * recipe_name; its default path is tensorwise dynamic scaling */
    if (st->fsdp_fp8 && st->fp8_recipe[0] != '\0')
        return tsl_err_set(err,
                           "torchtitan: enable_fsdp_float8_all_gather with recipe_name "
                           "\"%s\": torchtitan asserts the two do not combine",
                           st->fp8_recipe);
    c->knobs.fp8_param_gather = st->fsdp_fp8;
    if (st->fp8_recipe[0] == '\0' || strcmp(st->fp8_recipe, "tensorwise") == 0)
        return 0;
    if (strncmp(st->fp8_recipe, "rowwise", 7) != 0)
        return tsl_err_set(err,
                           "torchtitan: float8 recipe_name \"%s\": tensorwise, rowwise or "
                           "rowwise_with_gw_hp",
                           st->fp8_recipe);
    tsl_eval_cfg_note(c,
                      "torchtitan: float8 recipe %s is priced as tensorwise (its "
                      "per-row scales are not modelled)",
                      st->fp8_recipe);
    return 0;
}

/* The keys with a form of their own; 1: not one of them. */
static int tt_special(const toml_line_t *t, tsl_eval_cfg_t *c, tt_state_t *st, tsl_err_t *err)
{
    int64_t v;
    if (is(t, "parallelism", "data_parallel_shard_degree")) {
        if (want_int(t, -1, &v, err) != 0)
            return -1;
        if (v == 0)
            return tsl_err_set(err,
                               "torchtitan: line %u: [parallelism] data_parallel_shard_degree: 0 "
                               "is no degree; -1 (the devices the other degrees leave) or an "
                               "integer >= 1",
                               t->line);
        c->sdp_rest = v == -1;
        c->sdp = v > 0 ? (uint32_t)v : 0;
        return 0;
    }
    if (is(t, "training", "global_batch_size")) { /* -1, the default: local × DP */
        if (want_int(t, -1, &v, err) != 0)
            return -1;
        st->global_line = t->line;
        if (v == 0)
            return tsl_err_set(err,
                               "torchtitan: line %u: [training] global_batch_size: 0 is no "
                               "batch; -1 (local_batch_size x the data-parallel degree) or an "
                               "integer >= 1",
                               t->line);
        if (u32_range(t, v, err) != 0)
            return -1;
        c->global_batch = v > 0 ? (uint32_t)v : 0;
        return 0;
    }
    if (is(t, "training", "batch_size") || is(t, "parallelism", "pipeline_parallel_microbatches")) {
        bool batch = t->key[0] == 'b';
        if (want_int(t, 1, batch ? &st->old_batch : &st->old_micro, err) != 0 ||
            u32_range(t, batch ? st->old_batch : st->old_micro, err) != 0)
            return -1;
        *(batch ? &st->old_batch_line : &st->old_micro_line) = t->line;
        return 0;
    }
    if (is(t, "parallelism", "enable_async_tensor_parallel"))
        return want_bool(t, &st->async_tp, err);
    if (is(t, "parallelism", "enable_sequence_parallel")) {
        bool on = true;
        if (want_bool(t, &on, err) != 0)
            return -1;
        st->sp_off = !on;
        return 0;
    }
    if (is(t, "parallelism", "pipeline_parallel_split_points"))
        return split_points(t, c, err);
    if (is(t, "parallelism", "module_fqns_per_model_part"))
        return strcmp(t->value, "None") == 0 ? 0 : model_parts(t, c, err);
    if (is(t, "parallelism", "pipeline_parallel_schedule"))
        return schedule(t, c, err);
    if (is(t, "parallelism", "context_parallel_rotate_method"))
        return want_str(t, st->cp_rotate, sizeof st->cp_rotate, err);
    /* [training] from 5940ddeb5 (2025-02-06), [parallelism] since v0.1.0 */
    if (is(t, "parallelism", "fsdp_reshard_after_forward") ||
        is(t, "training", "fsdp_reshard_after_forward"))
        return want_str(t, st->reshard, sizeof st->reshard, err);
    if (is(t, "activation_checkpoint", "mode"))
        return ckpt_mode(t, st, err);
    if (is(t, "activation_checkpoint", "selective_ac_option"))
        return want_str(t, st->ac_option, sizeof st->ac_option, err);
    if (is(t, "training", "dtype")) /* "bfloat16": no fp32 master (TrainingConfig.dtype) */
        return training_dtype(t, c, err);
    if (is(t, "training", "mixed_precision_param")) /* "float32": fp32 training */
        return training_mp_param(t, c, err);
    if (is(t, "training", "compile") || is(t, "compile", "enable"))
        return want_bool(t, &st->compile, err);
    if (is(t, "compile", "components")) {
        st->compile_no_model =
            strstr(t->value, "\"model\"") == NULL && strstr(t->value, "'model'") == NULL;
        return 0;
    }
    return tt_float8(t, st, err);
}

static int tt_line(const toml_line_t *t, tsl_eval_cfg_t *c, tt_state_t *st, tsl_err_t *err)
{
    int64_t v;
    for (size_t i = 0; i < sizeof tt_u32 / sizeof tt_u32[0]; i++) {
        if (!is(t, tt_u32[i].section, tt_u32[i].key))
            continue;
        if (want_int(t, tt_u32[i].min, &v, err) != 0 || u32_range(t, v, err) != 0)
            return -1;
        *(uint32_t *)((char *)c + tt_u32[i].offset) = (uint32_t)v;
        return 0;
    }
    for (size_t i = 0; i < sizeof tt_state_keys / sizeof tt_state_keys[0]; i++) {
        if (!is(t, tt_state_keys[i].section, tt_state_keys[i].key))
            continue;
        return want_int(t, tt_state_keys[i].min, (int64_t *)((char *)st + tt_state_keys[i].offset),
                        err);
    }
    if (is(t, "model", "name")) /* checked with the flavor once the model is known */
        return want_str(t, c->tt_model, sizeof c->tt_model, err);
    if (is(t, "model", "flavor")) {
        c->tt_flavor_line = t->line;
        return want_str(t, c->tt_flavor, sizeof c->tt_flavor, err);
    }
    int r = tt_special(t, c, st, err);
    return r < 0 ? -1 : 0;
}

/* [model] name is torchtitan's "llama3" where the file gives none (JobConfig
 * Model.name); a flavor Tessel has no figures for is said, not checked
 * (tsl_eval_cfg_tt_flavor_check checks the others against the model). */
static void tt_flavor_note(tsl_eval_cfg_t *c)
{
    if (!c->tt_model[0])
        snprintf(c->tt_model, sizeof c->tt_model, "llama3");
    if (c->tt_flavor_line && !tsl_eval_tt_flavor_known(c->tt_model, c->tt_flavor))
        tsl_eval_cfg_note(c,
                          "torchtitan: line %u: [model] flavor \"%s\" of %s: not one Tessel "
                          "knows (llama3, llama4, deepseek_v3, qwen3, gpt_oss), not checked "
                          "against the model priced",
                          c->tt_flavor_line, c->tt_flavor, c->tt_model);
}

static const char op_sac[] =
    "every other matmul output and the attention outputs saved, the rest recomputed "
    "(recompute module torchtitan_op)";

/* Checkpointing as torchtitan applies it: TOML mode "selective" (its default) is
 * full recompute of every N-th layer for selective_ac_option N (default "2",
 * _apply_layer_sac) or op-level for "op"; Python's SelectiveAC (its default) is
 * op-level. */
static int tt_ckpt(tsl_eval_cfg_t *c, const tt_state_t *st, tsl_err_t *err)
{
    const char *opt = st->ac_option[0] ? st->ac_option : "2";
    c->ckpt = st->ac_mode;
    if (st->ac_mode != TSL_EVAL_CKPT_SELECTIVE)
        return 0;
    if (st->python || strcmp(opt, "op") == 0) { /* recompute.h torchtitan_op */
        c->ckpt = TSL_EVAL_CKPT_NONE;
        c->knobs.recompute_modules = TSL_RECOMPUTE_TORCHTITAN_OP;
        tsl_eval_cfg_note(c, "torchtitan: %sop-level selective checkpointing: %s",
                          st->ac_given ? "" : "no activation checkpointing given: its default, ",
                          op_sac);
        return 0;
    }
    char *end;
    long n = strtol(opt, &end, 10);
    if (end == opt || *end || n < 0)
        return tsl_err_set(err,
                           "torchtitan: selective_ac_option '%s' is not 'op' or a layer "
                           "frequency",
                           opt);
    c->ckpt = TSL_EVAL_CKPT_FULL;
    c->ckpt_every = n > 1 ? (uint32_t)n : 0;
    tsl_eval_cfg_note(c,
                      "torchtitan: %sselective checkpointing with selective_ac_option %s: "
                      "full recompute of every N-th Transformer layer, N = %ld",
                      st->ac_given ? "" : "no [activation_checkpoint]: its default, ", opt,
                      n > 1 ? n : 1);
    return 0;
}

/* Python's batch in tokens (TrainingConfig): samples of max_context_length. */
static int tt_tokens(tsl_eval_cfg_t *c, const tt_state_t *st, tsl_err_t *err)
{
    int64_t ctx = st->ctx ? st->ctx : 2048, mb = st->tokens_mb ? st->tokens_mb : 16384;
    int64_t step = st->tokens_step ? st->tokens_step : -1;
    if (mb % ctx != 0 || (step > 0 && step % ctx != 0))
        return tsl_err_set(err,
                           "torchtitan: num_tokens_per_%s %lld is not whole samples of "
                           "max_context_length %lld",
                           mb % ctx ? "microbatch_per_dp_rank" : "train_step",
                           (long long)(mb % ctx ? mb : step), (long long)ctx);
    c->seq_len = (uint32_t)ctx;
    c->mbs = (uint32_t)(mb / ctx);
    c->global_batch = step > 0 ? (uint32_t)(step / ctx) : 0;
    c->n_micro = step > 0 ? 0 : c->pp > 1 && st->pp_micro ? (uint32_t)st->pp_micro : 1;
    c->local_batch = 0;
    return 0;
}

/* Expert parallelism: the routed experts of the MoE layers over the innermost
 * ep ranks of dp_shard x cp x tp (ParallelDims' sparse mesh), whole on each
 * rank. v0.2.x's expert_tensor_parallel_degree has no effect at ep 1; at ep > 1
 * only 1 is what Tessel prices. Whether torchtitan lays the experts out so on
 * the model is tsl_eval_cfg_plan's check (cfg->torchtitan). */
static int tt_experts(tsl_eval_cfg_t *c, const tt_state_t *st, tsl_err_t *err)
{
    if (st->ep > (1 << 24))
        return tsl_err_set(err, "torchtitan: expert_parallel_degree %lld is above %d",
                           (long long)st->ep, 1 << 24);
    if (st->ep > 1 && st->etp > 1)
        return tsl_err_set(err,
                           "torchtitan: expert_tensor_parallel_degree %lld: Tessel prices the "
                           "routed experts whole on each expert-parallel rank "
                           "(expert_tensor_parallel_degree 1)",
                           (long long)st->etp);
    c->knobs.ep = st->ep > 1 ? (uint32_t)st->ep : 0;
    return 0;
}

/* fsdp_reshard_after_forward (torchtitan/distributed/fsdp.py
 * get_fsdp_reshard_after_forward_policy at b5bcd76c6): "default" is
 * reshard_after_forward = not pp_enabled. Under PP the blocks stay unsharded between
 * micro-batches and the pipeline schedule reduce-scatters on the last backward
 * (sdp_nosync); "never" is the same there. Without PP "default" and "always" reshard
 * and reduce-scatter every micro-batch (ZeRO-3), and "never" keeps each block gathered
 * from its forward to its backward, still reduce-scattering every micro-batch (the
 * trainer's accumulation leaves the gradient sync on): sdp_keep_weights, which the cost
 * model applies where sdp_nosync does not hold (cost.c sdp_keeps_weights). "always"
 * under PP gathers every micro-batch beside gradients held unsharded to the last
 * backward, which Tessel does not price. */
static int tt_reshard(tsl_eval_cfg_t *c, const tt_state_t *st, tsl_err_t *err)
{
    const char *r = st->reshard[0] ? st->reshard : "default";
    bool pp = c->pp > 1;
    bool never = strcmp(r, "never") == 0, always = strcmp(r, "always") == 0;
    if (!never && !always && strcmp(r, "default") != 0)
        return tsl_err_set(err,
                           "torchtitan: fsdp_reshard_after_forward \"%s\" is not default, always "
                           "or never",
                           r);
    if (always && pp)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "torchtitan: fsdp_reshard_after_forward \"always\" under pipeline "
                            "parallelism: a gather every micro-batch beside gradients held "
                            "unsharded to the last backward, which Tessel does not price (it "
                            "prices \"default\" and \"never\", the weights held and the "
                            "gradients reduce-scattered once)");
    /* the level held unsharded between micro-batches: the cost model applies it at
     * PP > 1 only (cost.h sdp_nosync), as --target torchtitan sets it */
    c->knobs.sdp_nosync = true;
    c->knobs.sdp_keep_weights = never; /* what "never" adds without PP */
    return 0;
}

/* The micro-batches of a pre-#1238 file under PP: before 5e2033c75 (#1073, 2025-04-07)
 * build_pipeline_schedule split batch_size into pipeline_parallel_microbatches (None:
 * one per stage), from it into micro-batches of pipeline_parallel_microbatch_size
 * (default 1). A file naming neither key reads either way, so it is refused. */
static int tt_old_micro(tsl_eval_cfg_t *c, const tt_state_t *st, tsl_err_t *err)
{
    if (st->old_micro_line && c->mbs)
        return tsl_err_set(err,
                           "torchtitan: line %u: [parallelism] pipeline_parallel_microbatches "
                           "(before torchtitan #1073) beside pipeline_parallel_microbatch_size "
                           "(from #1073): no torchtitan read both; keep the one yours had",
                           st->old_micro_line);
    if (st->old_micro_line) {
        if (st->old_batch % st->old_micro != 0)
            return tsl_err_set(err,
                               "torchtitan: line %u: [training] batch_size %lld does not divide "
                               "into pipeline_parallel_microbatches %lld (torchtitan refused it "
                               "too)",
                               st->old_batch_line, (long long)st->old_batch,
                               (long long)st->old_micro);
        c->n_micro = (uint32_t)st->old_micro;
        c->mbs = (uint32_t)(st->old_batch / st->old_micro);
        return 0;
    }
    if (c->mbs)
        return 0;
    return tsl_err_set(err,
                       "torchtitan: line %u: [training] batch_size under pipeline_parallel_degree "
                       "%u: torchtitan before #1073 (2025-04-07) split it into "
                       "pipeline_parallel_microbatches (default: one per stage), from #1073 to "
                       "#1238 into micro-batches of pipeline_parallel_microbatch_size (default 1); "
                       "give [parallelism] the key your torchtitan had, or write [training] "
                       "local_batch_size and pipeline_parallel_microbatch_size as torchtitan "
                       "v0.1.0 on reads them",
                       st->old_batch_line, c->pp);
}

/* [training] batch_size, the data-parallel rank's batch until torchtitan 8570415c3
 * (#1238, 2025-06-05) renamed it local_batch_size and added global_batch_size
 * (build_hf_dataloader and build_pipeline_schedule read one for the other): read as
 * local_batch_size. A file with the newer keys too is of no torchtitan's. */
static int tt_old_batch(tsl_eval_cfg_t *c, const tt_state_t *st, tsl_err_t *err)
{
    if (!st->old_batch_line) {
        if (st->old_micro_line && c->pp > 1 && !c->local_batch)
            return tsl_err_set(err,
                               "torchtitan: line %u: [parallelism] pipeline_parallel_microbatches "
                               "(torchtitan before #1073) splits [training] batch_size, which the "
                               "file does not give: give the run's batch_size (that torchtitan's "
                               "default was 8)",
                               st->old_micro_line);
        if (st->old_micro_line && c->pp > 1)
            tsl_eval_cfg_note(c,
                              "torchtitan: line %u: pipeline_parallel_microbatches left unread: "
                              "torchtitan #1073 removed it, and the torchtitan of local_batch_size "
                              "splits it by pipeline_parallel_microbatch_size",
                              st->old_micro_line);
        return 0;
    }
    if (c->local_batch || st->global_line)
        return tsl_err_set(err,
                           "torchtitan: line %u: [training] batch_size (torchtitan before #1238) "
                           "beside %s (from #1238): no torchtitan read both; keep "
                           "local_batch_size, batch_size's newer name",
                           st->old_batch_line,
                           c->local_batch ? "local_batch_size" : "global_batch_size");
    c->local_batch = (uint32_t)st->old_batch;
    tsl_eval_cfg_note(c,
                      "torchtitan: line %u: [training] batch_size read as local_batch_size, its "
                      "name from torchtitan #1238",
                      st->old_batch_line);
    return c->pp > 1 ? tt_old_micro(c, st, err) : 0;
}

static int tt_finish(tsl_eval_cfg_t *c, tt_state_t *st, tsl_err_t *err)
{
    tt_flavor_note(c);
    if (tt_reshard(c, st, err) != 0)
        return -1;
    if (st->cp > 1 && st->python) /* docs/exports.md "torchtitan": main's CP */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "torchtitan: context_parallel_degree %lld: torchtitan main runs "
                            "context parallelism only through FlexAttention with K and V "
                            "all-gathered at the attention (models/common/decoder_sharding.py; "
                            "the ring's context_parallel_rotate_method was removed in "
                            "8e5554449), which Tessel does not price; v0.2.x's job TOML runs "
                            "the ring",
                            (long long)st->cp);
    if (st->cp > 1) {
        /* ring attention (torch's context_parallel): K/V rotated by all-gather (the
         * default) or all-to-all, Tessel's torch-allgather and p2p; the FSDP mesh is
         * dp_shard x cp, so the CP ranks are the innermost of the SDP level
         * (tsl_eval_cfg_plan multiplies a given shard degree by cp) */
        const char *rot = st->cp_rotate[0] ? st->cp_rotate : "allgather";
        if (strcmp(rot, "allgather") != 0 && strcmp(rot, "alltoall") != 0)
            return tsl_err_set(err,
                               "torchtitan: context_parallel_rotate_method %s is not allgather "
                               "or alltoall",
                               rot);
        if (st->cp > 1024)
            return tsl_err_set(err, "torchtitan: context_parallel_degree %lld is above 1024",
                               (long long)st->cp);
        c->knobs.cp = (uint32_t)st->cp;
        c->knobs.cp_comm = strcmp(rot, "allgather") == 0 ? TSL_CP_TORCH_AG : TSL_CP_P2P;
        if (!c->sdp_rest && c->sdp <= 1) { /* FSDP over dp_shard x cp at dp_shard 1 too */
            c->sdp = (uint32_t)st->cp;
            c->cp_counted = true;
        }
    }
    if (tt_experts(c, st, err) != 0)
        return -1;
    /* the model's modules eager unless torch.compile takes the model (docs/cost-model.md
     * "Eager modules") */
    c->knobs.eager = !st->compile || st->compile_no_model;
    /* the loss: cross_entropy over the logits .float(), eager (loss_impl.h; train.py
     * loss_fn at 9dec370, whose compile was commented out) */
    c->knobs.loss_impl = TSL_LOSS_TORCH;
    /* TP is sequence-parallel in torchtitan (always before 2026-02; since, unless
       enable_sequence_parallel = False) */
    c->sp = c->tp > 1 && !st->sp_off;
    /* AsyncTP: apply_tp's switch, so nothing at TP 1; eval refuses it eager (torchtitan
     * raises "Async TP requires --training.compile") or without SP (target.h
     * tsl_async_tp_ok) */
    c->knobs.async_tp = st->async_tp && c->tp > 1;
    if (c->n_split_points || c->n_counts)
        c->tt_split = false;
    if (tt_fp8(c, st, err) != 0)
        return -1;
    if (st->python)
        return tt_ckpt(c, st, err) != 0 ? -1 : tt_tokens(c, st, err);
    if (tt_old_batch(c, st, err) != 0)
        return -1;
    /* pipelined: local_batch_size is the rank's micro-batches; otherwise one step */
    if (c->pp <= 1 && c->local_batch) {
        c->mbs = c->local_batch;
        c->local_batch = 0;
    }
    return tt_ckpt(c, st, err);
}

/* Where a line leaves the scan: the bracket depth, and the quote of a
 * multi-line string (TOML's and Python's \"\"\" or \'\'\') still open. */
typedef struct tt_scan {
    int depth;
    char triple;
} tt_scan_t;

/* Cuts a '#' comment outside strings ("..." or '...', and triple-quoted ones that
 * may span lines), updating *sc. */
static void cut_comment(char *s, tt_scan_t *sc)
{
    char q = sc->triple;
    for (; *s; s++) {
        bool three = s[0] && s[1] == s[0] && s[2] == s[0];
        if (q && sc->triple) {
            if (*s == q && three) {
                q = sc->triple = 0;
                s += 2;
            }
        } else if (q) {
            q = *s == q ? 0 : q;
        } else if (*s == '"' || *s == '\'') {
            q = *s;
            if (three) {
                sc->triple = q;
                s += 2;
            }
        } else if (*s == '[' || *s == '(') {
            sc->depth++;
        } else if (*s == ']' || *s == ')') {
            sc->depth--;
        } else if (*s == '#') {
            *s = '\0';
            return;
        }
    }
}

/* The next logical line of *p into buf: physical lines joined while a [ is open
 * (a multi-line array); *line is the first one's number. 0 at the end. */
static int logical_line(const char **p, char *buf, size_t cap, uint32_t *line, uint32_t *next,
                        tsl_err_t *err)
{
    size_t n = 0;
    tt_scan_t sc = {0};
    if (!**p)
        return 0;
    *line = *next;
    do {
        const char *nl = strchr(*p, '\n');
        size_t len = nl ? (size_t)(nl - *p) : strlen(*p);
        if (n + len + 2 > cap)
            return tsl_err_set(err, "torchtitan: line %u: longer than %zu bytes", *line, cap - 2);
        memcpy(buf + n, *p, len);
        buf[n + len] = '\0';
        cut_comment(buf + n, &sc);
        n = strlen(buf);
        buf[n++] = ' ';
        buf[n] = '\0';
        *p += len + (nl ? 1 : 0);
        (*next)++;
    } while ((sc.depth > 0 || sc.triple) && **p);
    if (sc.triple) /* tomllib: "Unterminated string"; Python: a SyntaxError */
        return tsl_err_set(err, "torchtitan: line %u: a %c%c%c string is not closed", *line,
                           sc.triple, sc.triple, sc.triple);
    /* tomllib: "Invalid value"; Python: "'[' was never closed". Read on, the lines
     * after it (whole tables: [parallelism], [training]) were one value, dropped */
    if (sc.depth > 0)
        return tsl_err_set(err,
                           "torchtitan: line %u: a '[' or '(' opened here is not closed by the "
                           "end of the file (tomllib and Python refuse the file)",
                           *line);
    return 1;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* FNV-1a of "section.key". */
static uint64_t key_hash(const char *section, const char *key)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *parts[] = {section, ".", key}, **q = parts; q < parts + 3; q++)
        for (const unsigned char *c = (const unsigned char *)*q; *c; c++)
            h = (h ^ *c) * 1099511628211ull;
    return h;
}

/* t's key a second time in its table: refused naming both lines. */
static int key_once(const toml_line_t *t, tt_seen_t *seen, tsl_err_t *err)
{
    uint64_t h = key_hash(t->section, t->key);
    for (uint32_t i = 0; i < seen->n; i++)
        if (seen->hash[i] == h)
            return tsl_err_set(err,
                               "torchtitan: line %u: [%s] %s is given again (first on line %u); "
                               "TOML takes a key once, and torchtitan refuses the file",
                               t->line, t->section, t->key, seen->line[i]);
    if (seen->n < TT_SEEN) {
        seen->hash[seen->n] = h;
        seen->line[seen->n++] = t->line;
    }
    return 0;
}

/* t's [section] header a second time: refused naming both lines. TOML defines a
 * table once (tomllib: "Cannot declare ... twice"), so torchtitan refuses such a
 * file, which was read as if the two were one. The header's hash is of
 * "section." and an empty key, which no key line has. */
static int section_once(const toml_line_t *t, tt_seen_t *seen, tsl_err_t *err)
{
    uint64_t h = key_hash(t->section, "");
    for (uint32_t i = 0; i < seen->n; i++)
        if (seen->hash[i] == h)
            return tsl_err_set(err,
                               "torchtitan: line %u: [%s] is given again (first on line %u); "
                               "TOML defines a table once, and torchtitan refuses the file",
                               t->line, t->section, seen->line[i]);
    if (seen->n < TT_SEEN) {
        seen->hash[seen->n] = h;
        seen->line[seen->n++] = t->line;
    }
    return 0;
}

static const char *py_section(const char *key);

/* t's key is one torchtitan has had in its section (eval_toml_keys.h), and not a
 * key Tessel reads in another section at its older place ([training]
 * tensor_parallel_degree of 2024, [experimental] pipeline_parallel_degree of
 * v0.1.0's predecessors), which would price the default without a word. */
static int toml_key_known(const toml_line_t *t, tsl_err_t *err)
{
    const char *home = py_section(t->key);
    bool old_home = strcmp(t->section, "training") == 0 || strcmp(t->section, "experimental") == 0;
    if (home && old_home && strcmp(home, t->section) != 0)
        return tsl_err_set(err,
                           "torchtitan: line %u: [%s] %s: an older torchtitan's place for it; "
                           "Tessel reads [%s] %s (v0.1.0 on)",
                           t->line, t->section, t->key, home, t->key);
    /* the 2024 argparse flags --training.enable_float8_linear and kin */
    bool old_fp8 = strstr(t->key, "float8_linear") != NULL || strstr(t->key, "fp8_linear") != NULL;
    if (old_fp8 && strcmp(t->section, "training") == 0)
        return tsl_err_set(err,
                           "torchtitan: line %u: [training] %s: an older torchtitan's place for "
                           "it; Tessel reads [float8] enable_float8_linear or [model] converters",
                           t->line, t->key);
    return tsl_tt_check_key(t->section, t->key, t->line, err);
}

/* A TOML line: a [section] header (into t->section) or key = value. */
static int toml_kv(char *s, toml_line_t *t, tsl_eval_cfg_t *c, tt_state_t *st, tsl_err_t *err)
{
    s = trim(s);
    if (!*s)
        return 0;
    if (*s == '[') {
        char *end = strchr(s, ']');
        if (end == NULL || end[1])
            return tsl_err_set(err, "torchtitan: line %u: a section header without ']'", t->line);
        snprintf(t->section, sizeof t->section, "%.*s", (int)(end - s - 1), s + 1);
        if (st->seen && section_once(t, st->seen, err) != 0)
            return -1;
        return st->custom ? 0 : tsl_tt_check_section(t->section, t->line, err);
    }
    char *eq = strchr(s, '=');
    if (eq == NULL)
        return tsl_err_set(err, "torchtitan: line %u: expected key = value", t->line);
    *eq = '\0';
    snprintf(t->key, sizeof t->key, "%s", trim(s));
    snprintf(t->value, sizeof t->value, "%s", trim(eq + 1));
    if (st->seen && key_once(t, st->seen, err) != 0)
        return -1;
    if (!st->custom && toml_key_known(t, err) != 0)
        return -1;
    return tt_line(t, c, st, err);
}

/* The section a Python key belongs to (its keys are unique across sections). */
static const char *py_section(const char *key)
{
    static const char *const special[][2] = {
        {"data_parallel_shard_degree", "parallelism"},
        {"enable_sequence_parallel", "parallelism"},
        {"pipeline_parallel_split_points", "parallelism"},
        {"module_fqns_per_model_part", "parallelism"},
        {"pipeline_parallel_schedule", "parallelism"},
        {"context_parallel_rotate_method", "parallelism"},
        {"fsdp_reshard_after_forward", "parallelism"},
        /* config.compile's since 737594746 (2026-08-12); read as the TOML's */
        {"enable_async_tensor_parallel", "parallelism"},
        /* [experimental] until 785c34c99 (2025-03-18): refused there, as its degree */
        {"pipeline_parallel_microbatches", "parallelism"},
        {"dtype", "training"},
        {"mixed_precision_param", "training"},
    };
    for (size_t i = 0; i < sizeof tt_u32 / sizeof tt_u32[0]; i++)
        if (strcmp(key, tt_u32[i].key) == 0)
            return tt_u32[i].section;
    for (size_t i = 0; i < sizeof tt_state_keys / sizeof tt_state_keys[0]; i++)
        if (strcmp(key, tt_state_keys[i].key) == 0)
            return tt_state_keys[i].section;
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        if (strcmp(key, special[i][0]) == 0)
            return special[i][1];
    return NULL;
}

/* activation_checkpoint = FullAC.Config() | SelectiveAC.Config() | None | ... */
static int py_ac(const toml_line_t *t, tt_state_t *st, tsl_err_t *err)
{
    st->ac_given = true;
    if (strncmp(t->value, "FullAC", 6) == 0)
        st->ac_mode = TSL_EVAL_CKPT_FULL;
    else if (strcmp(t->value, "None") == 0)
        st->ac_mode = TSL_EVAL_CKPT_NONE;
    else if (strncmp(t->value, "SelectiveAC", 11) == 0)
        st->ac_mode = TSL_EVAL_CKPT_SELECTIVE;
    else
        return tsl_err_set(err,
                           "torchtitan: line %u: activation_checkpoint = %.40s: Tessel "
                           "reads FullAC.Config(), SelectiveAC.Config() or None",
                           t->line, t->value);
    return 0;
}

/* The end of a keyword's value: the next ',' or ')' outside brackets and strings. */
static char *py_value_end(char *s)
{
    int depth = 0;
    char q = 0;
    for (; *s; s++) {
        if (q)
            q = *s == q ? 0 : q;
        else if (*s == '"' || *s == '\'')
            q = *s;
        else if (*s == '[' || *s == '(')
            depth++;
        else if ((*s == ']' || *s == ')') && depth > 0)
            depth--;
        else if ((*s == ',' || *s == ')' || *s == ']') && depth == 0)
            break;
    }
    return s;
}

/* Every `name = value` / `name=value` of a logical Python line whose name (its last
 * dotted part) is a key Tessel reads. */
static int py_line(char *s, toml_line_t *t, tsl_eval_cfg_t *c, tt_state_t *st, bool *set,
                   tsl_err_t *err)
{
    for (char *eq = strchr(s, '='); eq; eq = strchr(eq + 1, '=')) {
        if (eq[1] == '=' || (eq > s && strchr("=<>!", eq[-1])))
            continue;
        char *k = eq;
        while (k > s && isspace((unsigned char)k[-1]))
            k--;
        char *kend = k;
        while (k > s && (isalnum((unsigned char)k[-1]) || k[-1] == '_'))
            k--;
        char *v = eq + 1, *vend = py_value_end(v);
        snprintf(t->key, sizeof t->key, "%.*s", (int)(kend - k), k);
        snprintf(t->value, sizeof t->value, "%.*s", (int)(vend - v), v);
        char *tv = trim(t->value);
        memmove(t->value, tv, strlen(tv) + 1);
        const char *sec = py_section(t->key);
        bool cc = (k - s >= 8 && strncmp(k - 8, "compile.", 8) == 0) ||
                  strstr(s, "CompileConfig(") != NULL; /* config.compile's fields */
        if (cc && (strcmp(t->key, "enable") == 0 || strcmp(t->key, "components") == 0))
            sec = "compile";
        int r = 0;
        if (strcmp(t->key, "activation_checkpoint") == 0)
            r = py_ac(t, st, err);
        else if (sec) {
            snprintf(t->section, sizeof t->section, "%s", sec);
            r = tt_line(t, c, st, err);
        } else
            continue;
        if (r != 0)
            return -1;
        *set = true;
    }
    return 0;
}

/* A Python configuration sets its keys in one function (a file of several, such
 * as a config_registry.py, would mix presets): fn is the function a line is in. */
static void py_function(const char *s, char *fn, size_t cap)
{
    if (strncmp(s, "def ", 4) == 0) {
        const char *e = strchr(s + 4, '(');
        snprintf(fn, cap, "%.*s", e ? (int)(e - s - 4) : 0, s + 4);
    }
}

static bool is_python(const char *text)
{
    return strstr(text, "Trainer.Config") != NULL || strstr(text, "\ndef ") != NULL ||
           strncmp(text, "def ", 4) == 0;
}

static int tt_read(const char *text, char *buf, size_t cap, tsl_eval_cfg_t *out, tt_state_t *st,
                   toml_line_t *t, tsl_err_t *err)
{
    const char *p = text;
    uint32_t next = 1;
    char fn[64] = "", setter[64] = "";
    int r;
    while ((r = logical_line(&p, buf, cap, &t->line, &next, err)) > 0) {
        bool set = false;
        if (!st->python) {
            if (toml_kv(buf, t, out, st, err) != 0)
                return -1;
            continue;
        }
        py_function(trim(buf), fn, sizeof fn);
        if (py_line(buf, t, out, st, &set, err) != 0)
            return -1;
        if (set && setter[0] && strcmp(setter, fn) != 0)
            return tsl_err_set(err,
                               "torchtitan: line %u: %s() and %s() both set the plan's "
                               "keys; give a file with the one configuration you run",
                               t->line, setter, fn);
        if (set)
            snprintf(setter, sizeof setter, "%s", fn);
    }
    return r;
}

/* A Python keyword argument set to True anywhere in text ("name=True", spaces
 * allowed around "="). */
static bool py_true_kwarg(const char *text, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = strstr(text, name); p != NULL; p = strstr(p + n, name)) {
        const char *q = p + n;
        while (*q == ' ')
            q++;
        if (*q++ != '=')
            continue;
        while (*q == ' ')
            q++;
        if (strncmp(q, "True", 4) == 0)
            return true;
    }
    return false;
}

/* The Python form's first *Converter name that is none of the Float8/MX ones read
 * below, into st->other_conv (a misspelt Float8LinearConvertr would price bf16). */
static void py_other_converter(const char *text, tt_state_t *st)
{
    static const char *const known[] = {"Float8LinearConverter", "MXFP8LinearConverter",
                                        "MXLinearConverter", "Float8GroupedExpertsConverter",
                                        "MXFP8GroupedExpertsConverter"};
    for (const char *q = strstr(text, "Convert"); q && !st->other_conv[0];
         q = strstr(q + 1, "Convert")) {
        const char *b = q, *e = q;
        while (b > text && (isalnum((unsigned char)b[-1]) || b[-1] == '_'))
            b--;
        while (isalnum((unsigned char)*e) || *e == '_')
            e++;
        size_t n = (size_t)(e - b);
        bool ok = b == q; /* "Convert..." alone: a base class or a word, not a converter */
        for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
            ok |= strlen(known[k]) == n && strncmp(known[k], b, n) == 0;
        if (!ok)
            snprintf(st->other_conv, sizeof st->other_conv, "%.*s", (int)(n < 40 ? n : 40), b);
    }
}

/* key = "non-empty" somewhere in text (a custom config module named). */
static bool names_module(const char *text, const char *key)
{
    for (const char *p = strstr(text, key); p; p = strstr(p + 1, key)) {
        const char *q = p + strlen(key);
        q += strspn(q, " \t");
        if (*q++ != '=')
            continue;
        q += strspn(q, " \t");
        if ((*q == '"' || *q == '\'') && q[1] && q[1] != *q)
            return true;
    }
    return false;
}

int tsl_eval_cfg_torchtitan(const char *text, tsl_eval_cfg_t *out, tsl_err_t *err)
{
    tt_state_t st = {.python = is_python(text),
                     .ac_mode = TSL_EVAL_CKPT_SELECTIVE,
                     .custom = names_module(text, "custom_config_module") ||
                               names_module(text, "custom_args_module")};
    /* Python: model_registry(..., converters=[Float8LinearConverter.Config(...)])
     * (torchtitan main: recipe rowwise, priced as tensorwise) or MXLinearConverter */
    if (st.python) {
        st.float8 = strstr(text, "Float8LinearConverter") != NULL;
        st.mx = strstr(text, "MXFP8LinearConverter") != NULL ||
                strstr(text, "MXLinearConverter") != NULL;
        st.grouped = strstr(text, "Float8GroupedExpertsConverter") != NULL ||
                     strstr(text, "MXFP8GroupedExpertsConverter") != NULL;
        st.fsdp_fp8 = py_true_kwarg(text, "enable_fsdp_float8_all_gather");
        py_other_converter(text, &st);
    }
    memset(out, 0, sizeof(*out));
    out->torchtitan = true;
    out->tt_split = true;
    out->tt_in_w = out->tt_out_w = 1;
    out->sdp_rest = true; /* torchtitan's default shard degree: -1, the rest */
    /* TrainingConfig.mixed_precision_reduce "float32" (its only value): FSDP2
     * reduce-scatters fp32 gradients, under the backward */
    out->knobs.grad_reduce_bytes = 4;
    /* torch.distributed.pipelining runs DualPipeV's OVERLAP_F_B as its forward, then its
     * backward (schedules.py), as --target torchtitan prices it */
    out->knobs.fb_serial = true;
    out->knobs.torch_pipelining = true; /* its stages by torch.distributed.pipelining */
    /* torch.optim.AdamW foreach after clip_grad_norm_ (opt_step.h) */
    out->knobs.opt_step = TSL_OPT_STEP_TORCH;
    /* FSDP2 keeps no gradient buffer: a fresh gradient per backward (lazy_grads), as
     * --target torchtitan prices it */
    out->knobs.lazy_grads = true;
    out->dp = 1;
    toml_line_t *t = calloc(1, sizeof *t);
    char *buf = malloc(4 * TT_VALUE);
    st.seen = st.python ? NULL : calloc(1, sizeof *st.seen);
    int rc = -1;
    if (t == NULL || buf == NULL || (!st.python && st.seen == NULL))
        tsl_err_setc(err, TSL_E_NOMEM, "torchtitan: out of memory");
    else if (tt_read(text, buf, 4 * TT_VALUE, out, &st, t, err) == 0)
        rc = tt_finish(out, &st, err);
    free(st.seen);
    free(t);
    free(buf);
    return rc;
}

/*
 * eval_cfg.c — a launch configuration's numbers as a plan (eval_cfg.h), and
 * Megatron-LM's argument line. torchtitan's TOML is in eval_toml.c.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "eval_cfg.h"
#include "partition.h"

static bool is_block(const tsl_layer_t *l)
{
    return l->kind == TSL_LAYER_ENCODER || l->kind == TSL_LAYER_DECODER;
}

/* deg[0..2] = TP, SDP, DP for a stage of G devices. */
static int degrees(const tsl_eval_cfg_t *cfg, uint32_t G, uint32_t deg[3], tsl_err_t *err)
{
    uint32_t tp = cfg->tp ? cfg->tp : 1, sdp = cfg->sdp ? cfg->sdp : 1, dp = cfg->dp ? cfg->dp : 1;
    if (cfg->sdp_rest && !cfg->sdp)
        sdp = G % (tp * dp) == 0 ? G / (tp * dp) : 0;
    else if (!cfg->dp)
        dp = G % (tp * sdp) == 0 ? G / (tp * sdp) : 0;
    if (dp == 0 || sdp == 0)
        return tsl_err_set(err,
                           "degrees: tp %u x %s %u does not divide a stage's %u devices "
                           "(devices / pp)",
                           tp, dp ? "dp" : "sdp", dp ? dp : sdp, G);
    if ((uint64_t)tp * dp * sdp != G)
        return tsl_err_set(err,
                           "degrees: tp %u x dp %u x sdp %u do not multiply to a stage's "
                           "%u devices (devices / pp)",
                           tp, dp, sdp, G);
    if (cfg->sp && tp < 2)
        return tsl_err_set(err, "sequence parallelism needs tp > 1");
    if (cfg->zero && dp < 2)
        return tsl_err_set(err, "zero %u needs dp > 1 (it shards over the data-parallel ranks)",
                           cfg->zero);
    deg[0] = tp;
    deg[1] = sdp;
    deg[2] = dp;
    return 0;
}

static tsl_strategy_t strategy_of(const tsl_eval_cfg_t *cfg, const uint32_t deg[3])
{
    static const tsl_dim_t dims[3] = {TSL_DIM_TP, TSL_DIM_SDP, TSL_DIM_DP};
    tsl_strategy_t s = {0};
    for (int k = 0; k < 3; k++) {
        if (deg[k] < 2)
            continue;
        s.dim[s.n_levels] = (uint8_t)dims[k];
        s.degree[s.n_levels++] = deg[k];
    }
    s.sp = cfg->sp;
    s.zero = cfg->zero;
    return s;
}

static int batch(const tsl_eval_cfg_t *cfg, uint32_t width, uint32_t P, tsl_plan_t *out,
                 tsl_err_t *err)
{
    uint32_t mbs = cfg->mbs ? cfg->mbs : 1, B = cfg->global_batch;
    out->micro_batch = mbs * width;
    if (B == 0 && cfg->local_batch)
        B = cfg->local_batch * width;
    if (cfg->n_micro) {
        out->n_micro = cfg->n_micro;
        if (B && B != out->micro_batch * cfg->n_micro)
            return tsl_err_set(err,
                               "batch: %u micro-batches of %u samples are not a global "
                               "batch of %u",
                               cfg->n_micro, out->micro_batch, B);
    } else if (B) {
        if (B % out->micro_batch != 0)
            return tsl_err_set(err,
                               "batch: global batch %u does not divide into micro-batches "
                               "of %u samples (%u per rank x data width %u)",
                               B, out->micro_batch, mbs, width);
        out->n_micro = B / out->micro_batch;
    } else {
        out->n_micro = P;
    }
    out->global_batch = out->micro_batch * out->n_micro;
    return 0;
}

/* Stage s's first layer when stage s starts at Transformer block b (0-based). */
static uint32_t block_layer(const tsl_model_t *m, uint32_t b)
{
    for (uint32_t i = 0, n = 0; i < m->n_layers; i++)
        if (is_block(&m->layers[i]) && n++ == b)
            return i;
    return m->n_layers;
}

/* Blocks per stage: even, or Megatron's uneven first and/or last stage with the
 * rest even over the others. */
static int even_split(const tsl_eval_cfg_t *cfg, uint32_t nb, uint32_t P, uint32_t *first_block,
                      tsl_err_t *err)
{
    uint32_t f = cfg->first_blocks, l = cfg->last_blocks, mid = P - (f ? 1 : 0) - (l ? 1 : 0);
    uint32_t fixed = f + l;
    if (fixed > nb || (mid == 0 && fixed != nb) || (mid > 0 && (nb - fixed) % mid != 0) ||
        (mid > 0 && nb == fixed))
        return tsl_err_set(err,
                           "split: %u Transformer layers do not split over pp %u (first "
                           "stage %u, last stage %u, the rest evenly)",
                           nb, P, f, l);
    uint32_t each = mid ? (nb - fixed) / mid : 0;
    first_block[0] = 0;
    for (uint32_t s = 1; s < P; s++)
        first_block[s] = first_block[s - 1] + (s == 1 && f ? f : each);
    return 0;
}

static int split(const tsl_eval_cfg_t *cfg, const tsl_model_t *m, uint32_t P, uint32_t *first,
                 tsl_err_t *err)
{
    uint32_t L = m->n_layers, nb = 0, fb[TSL_PLAN_MAX_STAGES];
    for (uint32_t i = 0; i < L; i++)
        nb += is_block(&m->layers[i]);
    if (cfg->n_blocks && cfg->n_blocks != nb)
        return tsl_err_set(err,
                           "num-layers: the configuration has %u Transformer layers, the "
                           "model %u",
                           cfg->n_blocks, nb);
    first[P] = L;
    if (cfg->n_counts) {
        if (cfg->n_counts != P)
            return tsl_err_set(err, "layers-per-stage: %u counts for pp %u", cfg->n_counts, P);
        first[0] = 0;
        for (uint32_t s = 0; s < P; s++)
            first[s + 1] = first[s] + cfg->counts[s];
        if (first[P] != L)
            return tsl_err_set(err,
                               "layers-per-stage: the counts add up to %u, the model has %u "
                               "layers (embedding and head included)",
                               first[P], L);
        return 0;
    }
    if (cfg->n_split_points) {
        if (cfg->n_split_points != P - 1)
            return tsl_err_set(err, "pipeline_parallel_split_points: %u points for %u stages",
                               cfg->n_split_points, P);
        memcpy(fb + 1, cfg->split_points, (P - 1) * sizeof(fb[0]));
    } else if (cfg->even_blocks && P > 1) {
        if (even_split(cfg, nb, P, fb, err) != 0)
            return -1;
    } else {
        tsl_partition_by_flops(m, P, first);
        return 0;
    }
    first[0] = 0;
    for (uint32_t s = 1; s < P; s++) {
        first[s] = block_layer(m, fb[s]);
        if (fb[s] >= nb || first[s] <= first[s - 1])
            return tsl_err_set(err,
                               "split: stage %u would start at Transformer layer %u (the "
                               "model has %u)",
                               s, fb[s], nb);
    }
    return 0;
}

/* Strategies per layer: ckpt on Transformer layers (all, or a stage's first k). */
static void fill_layers(const tsl_eval_cfg_t *cfg, const tsl_model_t *m, const uint32_t *first,
                        const tsl_strategy_t *s, tsl_plan_t *out)
{
    for (uint32_t st = 0; st < out->pp; st++) {
        uint32_t k = 0;
        for (uint32_t i = first[st]; i < first[st + 1]; i++) {
            tsl_strategy_t x = *s;
            if (is_block(&m->layers[i])) {
                bool on = cfg->ckpt_per_stage ? k++ < cfg->ckpt_per_stage : true;
                x.ckpt = on && cfg->ckpt == TSL_EVAL_CKPT_FULL;
                x.selective = on && cfg->ckpt == TSL_EVAL_CKPT_SELECTIVE;
            }
            out->layer[i] = x;
        }
        out->stages[st].first_layer = first[st];
        out->stages[st].n_layers = first[st + 1] - first[st];
    }
}

int tsl_eval_cfg_plan(const tsl_eval_cfg_t *cfg, const tsl_model_t *m, uint32_t n_devices,
                      tsl_plan_t *out, tsl_err_t *err)
{
    uint32_t P = cfg->pp ? cfg->pp : 1, deg[3], first[TSL_PLAN_MAX_STAGES + 1];
    tsl_plan_init(out);
    if (P > TSL_PLAN_MAX_STAGES || P > m->n_layers || n_devices % P != 0)
        return tsl_err_set(err,
                           "pp: %u does not divide the %u devices (or exceeds the %u "
                           "layers)",
                           P, n_devices, m->n_layers);
    if (degrees(cfg, n_devices / P, deg, err) != 0)
        return -1;
    tsl_strategy_t s = strategy_of(cfg, deg);
    out->pp = P;
    out->n_layers = m->n_layers;
    out->n_devices = n_devices;
    if (batch(cfg, deg[1] * deg[2], P, out, err) != 0 || split(cfg, m, P, first, err) != 0)
        return -1;
    fill_layers(cfg, m, first, &s, out);
    out->interleave = cfg->interleave;
    if (cfg->vpp_blocks) {
        uint32_t n0 = 0;
        for (uint32_t i = first[0]; i < first[1]; i++)
            n0 += is_block(&m->layers[i]);
        if (n0 % cfg->vpp_blocks != 0)
            return tsl_err_set(err,
                               "num-layers-per-virtual-pipeline-stage: %u does not divide "
                               "stage 0's %u Transformer layers",
                               cfg->vpp_blocks, n0);
        out->interleave = n0 / cfg->vpp_blocks;
    }
    return 0;
}

/* ---- Megatron-LM arguments ------------------------------------------------------ */

/* The next whitespace-separated token of *p ('#' comments skipped) into buf. */
static bool next_token(const char **p, char *buf, size_t cap)
{
    const char *s = *p;
    for (;;) {
        while (isspace((unsigned char)*s))
            s++;
        if (*s != '#')
            break;
        while (*s && *s != '\n')
            s++;
    }
    if (!*s)
        return false;
    size_t n = 0;
    while (*s && !isspace((unsigned char)*s)) {
        if (n + 1 < cap)
            buf[n++] = *s;
        s++;
    }
    buf[n] = '\0';
    *p = s;
    return true;
}

typedef struct mg_key {
    const char *name;
    size_t offset; /* a uint32_t of tsl_eval_cfg_t */
} mg_key_t;

static const mg_key_t mg_u32[] = {
    {"tensor-model-parallel-size", offsetof(tsl_eval_cfg_t, tp)},
    {"pipeline-model-parallel-size", offsetof(tsl_eval_cfg_t, pp)},
    {"micro-batch-size", offsetof(tsl_eval_cfg_t, mbs)},
    {"global-batch-size", offsetof(tsl_eval_cfg_t, global_batch)},
    {"recompute-num-layers", offsetof(tsl_eval_cfg_t, ckpt_per_stage)},
    {"decoder-first-pipeline-num-layers", offsetof(tsl_eval_cfg_t, first_blocks)},
    {"decoder-last-pipeline-num-layers", offsetof(tsl_eval_cfg_t, last_blocks)},
    {"num-layers-per-virtual-pipeline-stage", offsetof(tsl_eval_cfg_t, vpp_blocks)},
    {"virtual-pipeline-model-parallel-size", offsetof(tsl_eval_cfg_t, interleave)},
    {"seq-length", offsetof(tsl_eval_cfg_t, seq_len)},
    {"num-layers", offsetof(tsl_eval_cfg_t, n_blocks)},
};

/* One "--key [value]"; *val is NULL for a flag. */
static int mg_arg(const char *key, const char *val, tsl_eval_cfg_t *c, bool *block, tsl_err_t *err)
{
    for (size_t i = 0; i < sizeof mg_u32 / sizeof mg_u32[0]; i++) {
        if (strcmp(key, mg_u32[i].name) != 0)
            continue;
        if (val == NULL)
            return tsl_err_set(err, "megatron: --%s needs a value", key);
        return tsl_parse_u32(key, val, 1, 1u << 24, (uint32_t *)((char *)c + mg_u32[i].offset),
                             err);
    }
    if (strcmp(key, "sequence-parallel") == 0)
        c->sp = true;
    else if (strcmp(key, "use-distributed-optimizer") == 0)
        c->zero = 1;
    else if (strcmp(key, "recompute-granularity") == 0) {
        if (val && strcmp(val, "full") == 0)
            c->ckpt = TSL_EVAL_CKPT_FULL;
        else if (val && strcmp(val, "selective") == 0)
            c->ckpt = TSL_EVAL_CKPT_SELECTIVE;
        else
            return tsl_err_set(err,
                               "megatron: --recompute-granularity: '%s' is not full or "
                               "selective",
                               val ? val : "");
    } else if (strcmp(key, "recompute-method") == 0) {
        if (val == NULL || (strcmp(val, "uniform") != 0 && strcmp(val, "block") != 0))
            return tsl_err_set(err, "megatron: --recompute-method: '%s' is not uniform or block",
                               val ? val : "");
        *block = strcmp(val, "block") == 0;
    }
    return 0;
}

int tsl_eval_cfg_megatron(const char *args, tsl_eval_cfg_t *out, tsl_err_t *err)
{
    char key[128], val[128], next[128];
    const char *p = args;
    bool have = next_token(&p, key, sizeof key), block = false;
    memset(out, 0, sizeof(*out));
    out->even_blocks = true;
    while (have) {
        if (strncmp(key, "--", 2) != 0)
            return tsl_err_set(err, "megatron: '%s' is not an --argument", key);
        const char *v = NULL;
        char *eq = strchr(key, '=');
        have = next_token(&p, next, sizeof next);
        if (eq) {
            *eq = '\0';
            snprintf(val, sizeof val, "%s", eq + 1);
            v = val;
        } else if (have && strncmp(next, "--", 2) != 0) {
            snprintf(val, sizeof val, "%s", next);
            v = val;
            have = next_token(&p, next, sizeof next);
        }
        if (mg_arg(key + 2, v, out, &block, err) != 0)
            return -1;
        memcpy(key, next, sizeof key);
    }
    /* uniform recompute (Megatron's num-layers 1 there is a chunk size) covers all */
    if (!block || out->ckpt != TSL_EVAL_CKPT_FULL)
        out->ckpt_per_stage = 0;
    return 0;
}

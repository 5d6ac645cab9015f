/*
 * eval_toml.c — torchtitan's job TOML, the subset a plan needs (eval_cfg.h):
 * [section] headers, `key = value` lines with integers, "strings", booleans and
 * one-line arrays of strings, '#' comments. Other sections and keys are skipped
 * unread; a key we read with the wrong type fails naming it and its line.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval_cfg.h"

typedef struct toml_line {
    char section[64], key[64], value[512];
    uint32_t line;
} toml_line_t;

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* Cuts a comment that is not inside a string. */
static void cut_comment(char *s)
{
    bool in = false;
    for (; *s; s++) {
        if (*s == '"')
            in = !in;
        else if (*s == '#' && !in) {
            *s = '\0';
            return;
        }
    }
}

static int want_int(const toml_line_t *t, int64_t lo, int64_t *out, tsl_err_t *err)
{
    char *end;
    long long v = strtoll(t->value, &end, 10);
    if (end == t->value || *end || v < lo || v > (1 << 24))
        return tsl_err_set(err, "torchtitan: line %u: [%s] %s: '%s' is not an integer >= %lld",
                           t->line, t->section, t->key, t->value, (long long)lo);
    *out = v;
    return 0;
}

/* A "string" value into buf. */
static int want_str(const toml_line_t *t, char *buf, size_t cap, tsl_err_t *err)
{
    size_t n = strlen(t->value);
    if (n < 2 || t->value[0] != '"' || t->value[n - 1] != '"' || n - 1 > cap)
        return tsl_err_set(err, "torchtitan: line %u: [%s] %s: expected a \"string\"", t->line,
                           t->section, t->key);
    snprintf(buf, cap, "%.*s", (int)(n - 2), t->value + 1);
    return 0;
}

/* pipeline_parallel_split_points = ["layers.4", "layers.8"] */
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

static int ckpt_mode(const toml_line_t *t, tsl_eval_cfg_t *c, tsl_err_t *err)
{
    char mode[32];
    if (want_str(t, mode, sizeof mode, err) != 0)
        return -1;
    if (strcmp(mode, "full") == 0)
        c->ckpt = TSL_EVAL_CKPT_FULL;
    else if (strcmp(mode, "selective") == 0)
        c->ckpt = TSL_EVAL_CKPT_SELECTIVE;
    else if (strcmp(mode, "none") == 0)
        c->ckpt = TSL_EVAL_CKPT_NONE;
    else
        return tsl_err_set(err,
                           "torchtitan: line %u: [activation_checkpoint] mode: '%s' is "
                           "not full, selective or none",
                           t->line, mode);
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
    {"training", "local_batch_size", 1, offsetof(tsl_eval_cfg_t, local_batch)},
    {"training", "global_batch_size", 1, offsetof(tsl_eval_cfg_t, global_batch)},
    {"training", "seq_len", 1, offsetof(tsl_eval_cfg_t, seq_len)},
};

static int tt_line(const toml_line_t *t, tsl_eval_cfg_t *c, tsl_err_t *err)
{
    int64_t v;
    for (size_t i = 0; i < sizeof tt_u32 / sizeof tt_u32[0]; i++) {
        if (strcmp(t->section, tt_u32[i].section) != 0 || strcmp(t->key, tt_u32[i].key) != 0)
            continue;
        if (want_int(t, tt_u32[i].min, &v, err) != 0)
            return -1;
        *(uint32_t *)((char *)c + tt_u32[i].offset) = (uint32_t)v;
        return 0;
    }
    if (strcmp(t->section, "parallelism") == 0 &&
        strcmp(t->key, "data_parallel_shard_degree") == 0) {
        if (want_int(t, -1, &v, err) != 0)
            return -1;
        if (v == 0)
            return tsl_err_set(err, "torchtitan: line %u: data_parallel_shard_degree: 0", t->line);
        c->sdp_rest = v == -1;
        c->sdp = v > 0 ? (uint32_t)v : 0;
        return 0;
    }
    if (strcmp(t->section, "parallelism") == 0 &&
        strcmp(t->key, "pipeline_parallel_split_points") == 0)
        return split_points(t, c, err);
    if (strcmp(t->section, "activation_checkpoint") == 0 && strcmp(t->key, "mode") == 0)
        return ckpt_mode(t, c, err);
    return 0;
}

/* One line of text into t (section carried over); false for blank/section lines. */
static int parse_line(char *s, toml_line_t *t, bool *kv, tsl_err_t *err)
{
    cut_comment(s);
    s = trim(s);
    *kv = false;
    if (!*s)
        return 0;
    if (*s == '[') {
        char *end = strchr(s, ']');
        if (end == NULL || end[1])
            return tsl_err_set(err, "torchtitan: line %u: a section header without ']'", t->line);
        snprintf(t->section, sizeof t->section, "%.*s", (int)(end - s - 1), s + 1);
        return 0;
    }
    char *eq = strchr(s, '=');
    if (eq == NULL)
        return tsl_err_set(err, "torchtitan: line %u: expected key = value", t->line);
    *eq = '\0';
    snprintf(t->key, sizeof t->key, "%s", trim(s));
    snprintf(t->value, sizeof t->value, "%s", trim(eq + 1));
    *kv = true;
    return 0;
}

int tsl_eval_cfg_torchtitan(const char *toml, tsl_eval_cfg_t *out, tsl_err_t *err)
{
    memset(out, 0, sizeof(*out));
    out->even_blocks = true;
    out->sdp_rest = true; /* torchtitan's default shard degree: -1, the rest */
    out->dp = 1;
    toml_line_t t = {.line = 0};
    const char *p = toml;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char buf[1024];
        t.line++;
        if (n >= sizeof buf)
            return tsl_err_set(err, "torchtitan: line %u: longer than %zu bytes", t.line,
                               sizeof buf - 1);
        memcpy(buf, p, n);
        buf[n] = '\0';
        bool kv;
        if (parse_line(buf, &t, &kv, err) != 0 || (kv && tt_line(&t, out, err) != 0))
            return -1;
        p += n + (nl ? 1 : 0);
    }
    /* pipelined: local_batch_size is the rank's micro-batches; otherwise one step */
    if (out->pp <= 1 && out->local_batch) {
        out->mbs = out->local_batch;
        out->local_batch = 0;
    }
    return 0;
}

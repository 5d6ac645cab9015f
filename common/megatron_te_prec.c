/*
 * megatron_te_prec.c — --te-precision-config-file read back (megatron_te_prec.h).
 *
 * The schema is Megatron-LM d98e8a64dd's: quantization/quant_config.py
 * RecipeConfig._build_matchers (enabled defaults to false and a disabled matcher is
 * skipped unread; type is required and only "glob" is built; pattern and config are
 * required; GlobMatcher is fnmatch.fnmatch, where '*' crosses dots and nothing
 * escapes), RecipeConfig.match (first matcher wins; self.configs[key]) and
 * extensions/transformer_engine.py TEQuantizationParams / TEQuantizationRecipe
 * .parse_from_config (the keys, delayed and fp8-with-fp4 refused) and
 * _get_fp8_autocast_for_quant_recipe (the recipe each precision opens; bf16 where
 * neither is set; nothing where override_quantized_autocast is false). Megatron-LM
 * ignores keys it does not look up (a top-level or matcher key): refused here as
 * likely typos, since the file would then mean another plan than it seems to.
 */
#include "megatron_te_prec.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "export.h"
#include "model.h"
#include "module_prec.h"
#include "roofline.h"

#define TP_MAX        64    /* configs, and enabled matchers, a file */
#define TP_KEEP       0xffu /* a config that leaves the run's recipe (no override) */
#define TP_UNREAD     0xfeu /* a config no matcher has named yet */
#define TP_MTP_BLOCKS 8u    /* a hybrid MTP depth's blocks (eval_cfg.h hybrid_mtp) */
#define TP_MAX_BYTES  (1u << 20)

typedef struct tp_config {
    const char *name;
    yaml_node_t *node;
    uint32_t value; /* TP_UNREAD, TP_KEEP or a tsl_fp8_recipe_t */
} tp_config_t;

typedef struct tp_matcher {
    const char *name, *pattern;
    size_t line;
    uint32_t config; /* index into configs */
} tp_matcher_t;

typedef struct tp_state {
    yaml_document_t *doc;
    const char *what;
    uint32_t recipe, mtp; /* mtp: the depths whose modules run quantized */
    tp_config_t cfg[TP_MAX];
    uint32_t n_cfg;
    tp_matcher_t mat[TP_MAX];
    uint32_t n_mat;
    tsl_err_t *err;
} tp_state_t;

static size_t line_of(const yaml_node_t *n)
{
    return n->start_mark.line + 1;
}

/* err = "WHAT, line N: message" with the given code; -1. */
static int fail(tp_state_t *s, const yaml_node_t *n, tsl_errcode_t code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(tp_state_t *s, const yaml_node_t *n, tsl_errcode_t code, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tsl_err_setc(s->err, code, "megatron: --te-precision-config-file %s, line %zu: %s",
                        s->what, line_of(n), msg);
}

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static bool plain_in(const yaml_node_t *n, const char *const *words)
{
    if (!scalar(n) || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    for (; *words; words++)
        if (strcmp(scalar(n), *words) == 0)
            return true;
    return false;
}

/* YAML 1.1's null and booleans as PyYAML's SafeLoader resolves a plain scalar. */
static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
static const char *const trues[] = {"true", "True", "TRUE", "yes", "Yes",
                                    "YES",  "on",   "On",   "ON",  NULL};
static const char *const falses[] = {"false", "False", "FALSE", "no",  "No",
                                     "NO",    "off",   "Off",   "OFF", NULL};

static bool is_null(const yaml_node_t *n)
{
    return n == NULL || plain_in(n, nulls);
}

/* A boolean field into *v (absent or null: false, Python's falsy None); anything else
 * is refused: a quoted "false" is a string, which Python's truth test takes as true. */
static int boolean(tp_state_t *s, const yaml_node_t *n, const char *field, bool *v)
{
    *v = false;
    if (is_null(n) || plain_in(n, falses))
        return 0;
    if (plain_in(n, trues)) {
        *v = true;
        return 0;
    }
    return fail(s, n, TSL_E_INVALID,
                "%s: '%s' is not a YAML boolean (Megatron-LM tests it for truth, so a "
                "string such as \"false\" would mean true); write true or false",
                field, scalar(n) ? scalar(n) : "(a collection)");
}

/* A string field that must be given: its text, or NULL with err set. */
static const char *text(tp_state_t *s, const yaml_node_t *parent, const yaml_node_t *n,
                        const char *field)
{
    if (n == NULL)
        fail(s, parent, TSL_E_INVALID, "no '%s' (Megatron-LM requires it)", field);
    else if (is_null(n) || !scalar(n))
        fail(s, n, TSL_E_INVALID, "%s: not a string", field);
    else
        return scalar(n);
    return NULL;
}

/* The value of key in mapping map, NULL where absent. */
static yaml_node_t *get(tp_state_t *s, const yaml_node_t *map, const char *key)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const char *k = scalar(yaml_document_get_node(s->doc, p->key));
        if (k && strcmp(k, key) == 0)
            return yaml_document_get_node(s->doc, p->value);
    }
    return NULL;
}

/* map must be a mapping of string keys, each once, each one of `keys` (NULL: any). */
static int check_map(tp_state_t *s, const yaml_node_t *map, const char *field,
                     const char *const *keys)
{
    if (map->type != YAML_MAPPING_NODE)
        return fail(s, map, TSL_E_INVALID, "%s: not a mapping", field);
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *kn = yaml_document_get_node(s->doc, p->key);
        const char *k = scalar(kn);
        if (k == NULL)
            return fail(s, kn, TSL_E_INVALID, "%s: a key that is not a string", field);
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++)
            if (strcmp(k, scalar(yaml_document_get_node(s->doc, q->key))) == 0)
                return fail(s, kn, TSL_E_INVALID, "%s: '%s' given twice", field, k);
        const char *const *w = keys;
        while (w && *w && strcmp(*w, k) != 0)
            w++;
        if (w && !*w)
            return fail(s, kn, TSL_E_INVALID, "%s: unknown key '%s'", field, k);
    }
    return 0;
}

static const char *const recipe_keys[] = {"fp8_quantization_recipe",
                                          "fp4_quantization_recipe",
                                          "custom_recipe_factory",
                                          "fp8_format",
                                          "override_quantized_autocast",
                                          "override_nonquantized_autocast",
                                          "tp_only_amax_red",
                                          "fp8_param",
                                          "fp4_param",
                                          NULL};

/* The FP8 (FP4) recipe named by n: a tsl_fp8_recipe_t, or -1 with err set. */
static int recipe_name(tp_state_t *s, const yaml_node_t *n, const char *field, bool fp4)
{
    const char *v = scalar(n);
    if (v == NULL)
        return fail(s, n, TSL_E_INVALID, "%s: not a string", field);
    if (!fp4 && strcmp(v, "delayed") == 0)
        return fail(s, n, TSL_E_INVALID,
                    "%s: delayed: \"Delayed scaling not in scope of te per-module "
                    "quantization config\" (Megatron-LM)",
                    field);
    if (strcmp(v, "custom") == 0)
        return fail(s, n, TSL_E_UNSUPPORTED,
                    "%s: custom: a custom recipe factory's numerics; Tessel prices "
                    "tensorwise, blockwise, mxfp8 and nvfp4",
                    field);
    int r = tsl_fp8_recipe_parse(v);
    if (fp4 ? r != TSL_FP8_NVFP4
            : r != TSL_FP8_TENSORWISE && r != TSL_FP8_BLOCKWISE && r != TSL_FP8_MXFP8)
        return fail(s, n, TSL_E_INVALID, "%s: '%s' is not a recipe Megatron-LM handles (%s)", field,
                    v, fp4 ? "nvfp4" : "tensorwise, blockwise, mxfp8");
    return r;
}

/* The switches of a TEQuantizationRecipe that Tessel does not price: refused where the
 * recipe is the training one (priced), read only for their type otherwise. */
static int recipe_switches(tp_state_t *s, const yaml_node_t *n, bool priced, bool *keep)
{
    static const char *const unpriced[] = {"override_nonquantized_autocast", "tp_only_amax_red",
                                           "fp8_param", "fp4_param"};
    static const char *const why[] = {
        "quantizes the modules of the blocks that run bf16 (--first-last-layers-bf16, "
        "MTP depths under FP4)",
        "the amax reduction over TP ranks only", "that module's weights kept in FP8",
        "that module's weights kept in FP4"};
    bool on;
    if (boolean(s, get(s, n, "override_quantized_autocast"), "override_quantized_autocast", &on) !=
        0)
        return -1;
    *keep = get(s, n, "override_quantized_autocast") != NULL && !on;
    for (size_t i = 0; i < sizeof unpriced / sizeof *unpriced; i++) {
        yaml_node_t *v = get(s, n, unpriced[i]);
        if (boolean(s, v, unpriced[i], &on) != 0)
            return -1;
        if (on && priced)
            return fail(s, v, TSL_E_UNSUPPORTED, "%s: true: %s, which Tessel does not price",
                        unpriced[i], why[i]);
    }
    return 0;
}

/* A TEQuantizationRecipe mapping: its precision (a tsl_fp8_recipe_t; TSL_FP8_NONE
 * for bf16) or TP_KEEP into *value. */
static int parse_recipe(tp_state_t *s, const yaml_node_t *n, const char *field, bool priced,
                        uint32_t *value)
{
    if (is_null(n))
        return fail(s, n, TSL_E_INVALID, "%s: not a mapping", field);
    if (check_map(s, n, field, recipe_keys) != 0)
        return -1;
    yaml_node_t *f8 = get(s, n, "fp8_quantization_recipe");
    yaml_node_t *f4 = get(s, n, "fp4_quantization_recipe");
    yaml_node_t *fmt = get(s, n, "fp8_format");
    if (!is_null(f8) && !is_null(f4))
        return fail(s, f4, TSL_E_INVALID,
                    "%s: \"fp8 and fp4 quantization settings are mutually exclusive\" "
                    "(Megatron-LM)",
                    field);
    if (!is_null(get(s, n, "custom_recipe_factory")))
        return fail(s, get(s, n, "custom_recipe_factory"), TSL_E_UNSUPPORTED,
                    "%s: custom_recipe_factory: a custom recipe's numerics; Tessel does not "
                    "price them",
                    field);
    int r = TSL_FP8_NONE;
    if (!is_null(f8) || !is_null(f4))
        r = recipe_name(s, is_null(f8) ? f4 : f8,
                        is_null(f8) ? "fp4_quantization_recipe" : "fp8_quantization_recipe",
                        is_null(f8));
    if (r < 0)
        return -1;
    /* the format is read only where an FP8 recipe is (priced alike: assumed, as the
     * export's "hybrid" is) */
    if (!is_null(f8) && fmt &&
        (!scalar(fmt) || (strcmp(scalar(fmt), "e4m3") != 0 && strcmp(scalar(fmt), "hybrid") != 0)))
        return fail(s, fmt, TSL_E_INVALID,
                    "fp8_format: '%s': \"Unhandled fp8_format\" (Megatron-LM: e4m3 or hybrid)",
                    scalar(fmt) ? scalar(fmt) : "(a collection)");
    bool keep;
    if (recipe_switches(s, n, priced, &keep) != 0)
        return -1;
    *value = keep ? TP_KEEP : (uint32_t)r;
    return 0;
}

/* Config i, read the first time a matcher names it: its training recipe's value. */
static int read_config(tp_state_t *s, uint32_t i)
{
    static const char *const keys[] = {"transformer_engine_config_type", "training_recipe",
                                       "evaluation_recipe", NULL};
    tp_config_t *c = &s->cfg[i];
    uint32_t unused;
    if (c->value != TP_UNREAD)
        return 0;
    if (check_map(s, c->node, c->name, keys) != 0)
        return -1;
    yaml_node_t *type = get(s, c->node, "transformer_engine_config_type");
    const char *t = text(s, c->node, type, "transformer_engine_config_type");
    if (t == NULL)
        return -1;
    if (strcmp(t, "TEQuantizationParams") != 0)
        return fail(s, type, TSL_E_INVALID,
                    "transformer_engine_config_type: \"Unsupported config type '%s'\" "
                    "(Megatron-LM: TEQuantizationParams)",
                    t);
    yaml_node_t *train = get(s, c->node, "training_recipe");
    if (train == NULL)
        return fail(s, c->node, TSL_E_INVALID,
                    "config '%s': no 'training_recipe' (Megatron-LM requires it)", c->name);
    yaml_node_t *eval = get(s, c->node, "evaluation_recipe");
    if (eval && parse_recipe(s, eval, "evaluation_recipe", false, &unused) != 0)
        return -1;
    return parse_recipe(s, train, "training_recipe", true, &c->value);
}

/* The `configs` mapping: the names, read when named. */
static int read_configs(tp_state_t *s, const yaml_node_t *root)
{
    yaml_node_t *cs = get(s, root, "configs");
    if (cs == NULL)
        return 0;
    if (check_map(s, cs, "configs", NULL) != 0)
        return -1;
    for (yaml_node_pair_t *p = cs->data.mapping.pairs.start; p < cs->data.mapping.pairs.top; p++) {
        if (s->n_cfg == TP_MAX)
            return fail(s, cs, TSL_E_INVALID, "configs: more than %u", TP_MAX);
        tp_config_t *c = &s->cfg[s->n_cfg++];
        c->name = scalar(yaml_document_get_node(s->doc, p->key));
        c->node = yaml_document_get_node(s->doc, p->value);
        c->value = TP_UNREAD;
    }
    return 0;
}

/* One entry of `matchers`; disabled ones are skipped unread, as Megatron-LM does. */
static int read_matcher(tp_state_t *s, const yaml_node_t *key, yaml_node_t *m)
{
    const char *name = scalar(key);
    static const char *const keys[] = {"enabled", "type", "pattern", "config", NULL};
    bool on;
    if (check_map(s, m, name, keys) != 0 || boolean(s, get(s, m, "enabled"), "enabled", &on) != 0)
        return -1;
    if (!on)
        return 0;
    const char *type = text(s, m, get(s, m, "type"), "type");
    if (type == NULL)
        return -1;
    if (strcmp(type, "glob") != 0)
        return fail(s, get(s, m, "type"), TSL_E_INVALID,
                    "type: \"Match type '%s' not implemented\" (Megatron-LM: glob)", type);
    const char *pattern = text(s, m, get(s, m, "pattern"), "pattern");
    const char *config = pattern ? text(s, m, get(s, m, "config"), "config") : NULL;
    if (config == NULL)
        return -1;
    uint32_t i = 0;
    while (i < s->n_cfg && strcmp(s->cfg[i].name, config) != 0)
        i++;
    if (i == s->n_cfg)
        return fail(s, get(s, m, "config"), TSL_E_INVALID,
                    "matcher '%s': config '%s' is not in configs", name, config);
    if (s->n_mat == TP_MAX)
        return fail(s, m, TSL_E_INVALID, "matchers: more than %u enabled", TP_MAX);
    s->mat[s->n_mat++] = (tp_matcher_t){name, pattern, line_of(key), i};
    return read_config(s, i);
}

static int read_matchers(tp_state_t *s, const yaml_node_t *root)
{
    yaml_node_t *ms = get(s, root, "matchers");
    if (is_null(ms)) /* None: no matchers (RecipeConfig._build_matchers) */
        return 0;
    if (check_map(s, ms, "matchers", NULL) != 0)
        return -1;
    for (yaml_node_pair_t *p = ms->data.mapping.pairs.start; p < ms->data.mapping.pairs.top; p++)
        if (read_matcher(s, yaml_document_get_node(s->doc, p->key),
                         yaml_document_get_node(s->doc, p->value)) != 0)
            return -1;
    return 0;
}

/* The TE linears of a layer that module_prec.h leaves at the run's recipe
 * (moe_layer.py, experts.py TEGroupedLinear and SequentialMLP, shared_experts.py,
 * multi_latent_attention.py). */
static const char *const other_leaf[] = {
    "mlp.experts.linear_fc1",
    "mlp.experts.linear_fc2",
    "mlp.experts.local_experts.0.linear_fc1",
    "mlp.experts.local_experts.0.linear_fc2",
    "mlp.shared_experts.linear_fc1",
    "mlp.shared_experts.linear_fc2",
    "self_attention.linear_q_proj",
    "self_attention.linear_q_down_proj",
    "self_attention.linear_q_up_proj",
    "self_attention.linear_kv_down_proj",
    "self_attention.linear_kv_up_proj",
};
#define N_OTHER (sizeof other_leaf / sizeof *other_leaf)

/* Path k of a layer's linear `leaf` into buf: the decoder's layers, then (where the
 * MTP depths count) each depth's layer as gpt_model.py and hybrid_model.py nest it
 * (multi_token_prediction.py mtp_model_layer, a HybridStack's layers). false past the
 * last. */
static bool layer_path(const tp_state_t *s, const char *leaf, uint32_t k, char *buf, size_t cap)
{
    if (k < TSL_MODEL_MAX_LAYERS) {
        snprintf(buf, cap, "decoder.layers.%u.%s", k, leaf);
        return true;
    }
    k -= TSL_MODEL_MAX_LAYERS;
    uint32_t per = 1 + TP_MTP_BLOCKS, d = k / per, j = k % per;
    if (d >= s->mtp)
        return false;
    if (j == 0)
        snprintf(buf, cap, "mtp.layers.%u.mtp_model_layer.%s", d, leaf);
    else
        snprintf(buf, cap, "mtp.layers.%u.mtp_model_layer.layers.%u.%s", d, j - 1, leaf);
    return true;
}

/* The first enabled matcher whose pattern matches path (fnmatch.fnmatch: no escapes,
 * '*' across dots), -1 for none. */
static int winner(const tp_state_t *s, const char *path)
{
    for (uint32_t i = 0; i < s->n_mat; i++)
        if (fnmatch(s->mat[i].pattern, path, FNM_NOESCAPE) == 0)
            return (int)i;
    return -1;
}

static uint32_t value_of(const tp_state_t *s, int w)
{
    return w < 0 ? TP_KEEP : s->cfg[s->mat[w].config].value;
}

static const char *value_name(uint32_t v)
{
    return v == TP_KEEP ? "the run's recipe" : tsl_fp8_recipe_name(v);
}

/* "matcher 'x' (line N)" or "no matcher" into buf. */
static const char *by(const tp_state_t *s, int w, char *buf, size_t cap)
{
    if (w < 0)
        snprintf(buf, cap, "no matcher");
    else
        snprintf(buf, cap, "matcher '%s', line %zu", s->mat[w].name, s->mat[w].line);
    return buf;
}

/* Module m's precision over all its paths into *nibble (module_prec.h's 0 or 1 + a
 * recipe); one module at two precisions is refused. */
static int module_value(tp_state_t *s, uint32_t m, uint32_t *nibble)
{
    char path[160], first[160], b1[160], b2[160];
    int fw = -1;
    uint32_t fv = TP_KEEP;
    for (uint32_t k = 0; layer_path(s, tsl_export_megatron_prec_leaf(m), k, path, sizeof path);
         k++) {
        int w = winner(s, path);
        uint32_t v = value_of(s, w);
        if (k == 0) {
            memcpy(first, path, sizeof first);
            fw = w;
            fv = v;
        } else if (v != fv) {
            return tsl_err_setc(s->err, TSL_E_UNSUPPORTED,
                                "megatron: --te-precision-config-file %s: %s gets %s at %s (%s) "
                                "but %s at %s (%s); Tessel prices one precision a module, the "
                                "same in every layer",
                                s->what, tsl_module_name(m), value_name(fv), first,
                                by(s, fw, b1, sizeof b1), value_name(v), path,
                                by(s, w, b2, sizeof b2));
        }
    }
    *nibble = fv == TP_KEEP ? 0 : fv + 1;
    return 0;
}

/* A linear Tessel prices at the run's recipe only, at path: refused where a matcher
 * gives it another precision. */
static int other_value(tp_state_t *s, const char *path)
{
    int w = winner(s, path);
    uint32_t v = value_of(s, w);
    if (v == TP_KEEP || v == s->recipe)
        return 0;
    return tsl_err_setc(s->err, TSL_E_UNSUPPORTED,
                        "megatron: --te-precision-config-file %s, line %zu: matcher '%s' "
                        "(pattern '%s') gives %s to %s, a module Tessel prices at the run's "
                        "recipe (%s) only; narrow the pattern to the modules of "
                        "--module-precision",
                        s->what, s->mat[w].line, s->mat[w].name, s->mat[w].pattern, value_name(v),
                        path, value_name(s->recipe));
}

static int match_all(tp_state_t *s, uint32_t *prec)
{
    char path[160];
    uint32_t nib = 0;
    *prec = 0;
    for (uint32_t m = 0; m < TSL_MODULE_COUNT; m++) {
        if (module_value(s, m, &nib) != 0)
            return -1;
        *prec |= nib << (4 * m);
    }
    for (size_t i = 0; i < N_OTHER; i++)
        for (uint32_t k = 0; layer_path(s, other_leaf[i], k, path, sizeof path); k++)
            if (other_value(s, path) != 0)
                return -1;
    for (uint32_t d = 0; d < s->mtp; d++) { /* each MTP depth's eh_proj */
        snprintf(path, sizeof path, "mtp.layers.%u.eh_proj", d);
        if (other_value(s, path) != 0)
            return -1;
    }
    return other_value(s, "output_layer"); /* TELMHeadColumnParallelLinear */
}

/* The document's root, read: configs, then the matchers in order. */
static int read_root(tp_state_t *s, yaml_node_t *root, uint32_t *prec)
{
    static const char *const keys[] = {"configs", "matchers", NULL};
    if (root == NULL)
        return tsl_err_set(s->err,
                           "megatron: --te-precision-config-file %s: empty (no configs, no "
                           "matchers)",
                           s->what);
    if (check_map(s, root, "the document", keys) != 0 || read_configs(s, root) != 0 ||
        read_matchers(s, root) != 0)
        return -1;
    return match_all(s, prec);
}

static int syntax_error(const yaml_parser_t *p, const char *what, tsl_err_t *err)
{
    return tsl_err_set(err, "megatron: --te-precision-config-file %s, line %zu: YAML: %s%s%s", what,
                       p->problem_mark.line + 1, p->problem ? p->problem : "error",
                       p->context ? " " : "", p->context ? p->context : "");
}

int tsl_megatron_te_prec_parse(const char *text, size_t len, const char *what, uint32_t recipe,
                               uint32_t mtp_depths, uint32_t *prec, tsl_err_t *err)
{
    yaml_parser_t parser;
    yaml_document_t doc, next;
    tp_state_t *s = NULL;
    int rc = -1;
    if (!yaml_parser_initialize(&parser))
        return tsl_err_setc(err, TSL_E_NOMEM, "megatron: --te-precision-config-file: no memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        syntax_error(&parser, what, err);
        yaml_parser_delete(&parser);
        return -1;
    }
    /* yaml.load reads one document ("expected a single document in the stream") */
    if (!yaml_parser_load(&parser, &next)) {
        syntax_error(&parser, what, err);
        goto out;
    }
    bool more = yaml_document_get_root_node(&next) != NULL;
    yaml_document_delete(&next);
    if (more) {
        tsl_err_set(err, "megatron: --te-precision-config-file %s: more than one YAML document",
                    what);
        goto out;
    }
    if ((s = calloc(1, sizeof *s)) == NULL) {
        tsl_err_setc(err, TSL_E_NOMEM, "megatron: --te-precision-config-file: no memory");
        goto out;
    }
    *s = (tp_state_t){.doc = &doc, .what = what, .recipe = recipe, .err = err};
    s->mtp = recipe == TSL_FP8_NVFP4 ? 0 : mtp_depths; /* FP4's MTP depths run bf16 */
    rc = read_root(s, yaml_document_get_root_node(&doc), prec);
out:
    free(s);
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return rc;
}

int tsl_megatron_te_prec_read(const char *path, uint32_t recipe, uint32_t mtp_depths,
                              uint32_t *prec, tsl_err_t *err)
{
    struct stat st;
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return tsl_err_set(err, "megatron: --te-precision-config-file %s: cannot open: %s", path,
                           strerror(errno));
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return tsl_err_set(err, "megatron: --te-precision-config-file %s: is a directory", path);
    }
    char *buf = malloc(TP_MAX_BYTES + 1);
    if (buf == NULL) {
        fclose(f);
        return tsl_err_setc(err, TSL_E_NOMEM, "megatron: --te-precision-config-file: no memory");
    }
    size_t n = fread(buf, 1, TP_MAX_BYTES + 1, f);
    bool bad = ferror(f) != 0;
    fclose(f);
    int rc;
    if (bad)
        rc = tsl_err_set(err, "megatron: --te-precision-config-file %s: cannot read", path);
    else if (n > TP_MAX_BYTES)
        rc = tsl_err_set(err, "megatron: --te-precision-config-file %s: over %u bytes", path,
                         TP_MAX_BYTES);
    else
        rc = tsl_megatron_te_prec_parse(buf, n, path, recipe, mtp_depths, prec, err);
    free(buf);
    return rc;
}

int tsl_megatron_te_prec_embedded(const char *args, char **out)
{
    size_t cap = strlen(args) + 1, n = 0;
    *out = NULL;
    for (const char *l = args; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] == '\n')) {
        if (strncmp(l, "#| ", 3) != 0)
            continue;
        if (*out == NULL && (*out = malloc(cap)) == NULL)
            return -1;
        size_t w = strcspn(l + 3, "\n");
        memcpy(*out + n, l + 3, w);
        n += w;
        (*out)[n++] = '\n';
    }
    if (*out)
        (*out)[n] = '\0';
    return 0;
}

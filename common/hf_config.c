/*
 * hf_config.c — HuggingFace config.json → tsl_arch_spec_t → tsl_model_t.
 *
 * Reading is split from building: a per-architecture reader fills a family spec
 * (model.h) from the JSON keys and the planner's tsl_model_build() makes the
 * layers, so an imported model and a preset of the same family are built by the
 * same code. Keys are read through a small reader that collects every missing
 * key before failing, so one run tells the user all that is absent.
 */
#include "hf_config.h"
#include "mtp.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "json_num.h"
#include "names.h"

#define SUPPORTED                                                                                  \
    "gpt2, bert, roberta, t5, vit, llama, mistral, mistral3, qwen2, gpt_neox, bloom, falcon, "     \
    "phi, "                                                                                        \
    "qwen3, "                                                                                      \
    "gemma2, "                                                                                     \
    "gemma3, gemma3_text, phi3, olmo2, RefinedWeb, RefinedWebModel, mixtral, qwen2_moe, "          \
    "qwen3_moe, deepseek_v2, deepseek_v3, kimi_k2, glm4_moe, gpt_oss, llama4, llama4_text, "       \
    "nemotron_h"

/* The sequence a config with a longer window is planned at by default: what
 * people pre-train such models at (Llama 2/3 pre-training: 4096 / 8192); the
 * full window (Qwen2-7B: 131072) is a long-context fine-tuning setting. */
#define DEFAULT_SEQ_CAP 4096u

const char *tsl_hf_config_supported(void)
{
    return SUPPORTED;
}

/* ---- key reader ---- */

typedef struct reader {
    const json_t *root;
    char missing[256];     /* "n_layer, n_embd" */
    char bad[TSL_ERR_MAX]; /* the first value of a wrong type or range */
} reader_t;

static void note_missing(reader_t *r, const char *label)
{
    size_t n = strlen(r->missing);
    if (n < sizeof(r->missing) - 1)
        snprintf(r->missing + n, sizeof(r->missing) - n, "%s%s", n ? ", " : "", label);
}

static void note_bad(reader_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_bad(reader_t *r, const char *fmt, ...)
{
    if (r->bad[0] != '\0')
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->bad, sizeof(r->bad), fmt, ap);
    va_end(ap);
}

/* A positive integer that fits uint32; integral reals (768.0) are accepted
 * because some tools write them. Returns 0 after noting what was wrong. */
static uint32_t as_u32(reader_t *r, const char *key, const json_t *v)
{
    double x;
    if (json_is_integer(v)) {
        x = (double)json_integer_value(v);
    } else if (json_is_real(v)) {
        x = json_real_value(v);
        if (x > -1e18 && x < 1e18 && (double)(long long)x != x) {
            note_bad(r, "%s: %g is not an integer", key, x);
            return 0;
        }
    } else {
        note_bad(r, "%s: expected a positive integer, got %s", key, tsl_json_type_name(v));
        return 0;
    }
    if (!(x >= 1.0)) {
        note_bad(r, "%s: %.15g is not valid; expected a positive integer", key, x);
        return 0;
    }
    if (x > (double)UINT32_MAX) {
        /* %.15g: 1e300 as 1e+300, not 301 digits that fill the message */
        note_bad(r, "%s: %.15g is too large (at most %u)", key, x, UINT32_MAX);
        return 0;
    }
    return (uint32_t)x;
}

static uint32_t req_u32(reader_t *r, const char *key)
{
    const json_t *v = json_object_get(r->root, key);
    if (v == NULL) {
        note_missing(r, key);
        return 0;
    }
    return as_u32(r, key, v);
}

/* Required under either of two names (GPT-2's n_positions / n_ctx). */
static uint32_t req_u32_alt(reader_t *r, const char *key, const char *alt, const char *label)
{
    if (json_object_get(r->root, key) != NULL)
        return req_u32(r, key);
    if (json_object_get(r->root, alt) != NULL)
        return req_u32(r, alt);
    note_missing(r, label);
    return 0;
}

/* Absent or null gives dflt. */
static uint32_t opt_u32(reader_t *r, const char *key, uint32_t dflt)
{
    const json_t *v = json_object_get(r->root, key);
    if (v == NULL || json_is_null(v))
        return dflt;
    return as_u32(r, key, v);
}

/* A count that may be 0 (absent or null: 0). */
static uint32_t opt_count(reader_t *r, const char *key)
{
    const json_t *v = json_object_get(r->root, key);
    if (v == NULL || json_is_null(v) || (json_is_integer(v) && json_integer_value(v) == 0))
        return 0;
    return as_u32(r, key, v);
}

/* The MTP depths with weights of their own (mtp.h): num_nextn_predict_layers
 * (DeepSeek-V3 1, Nemotron 3 Super 1), at most TSL_MTP_MAX_DEPTHS. */
static void read_mtp_layers(reader_t *r, tsl_arch_spec_t *sp)
{
    sp->mtp_layers = opt_count(r, "num_nextn_predict_layers");
    if (sp->mtp_layers > TSL_MTP_MAX_DEPTHS) {
        note_bad(r, "num_nextn_predict_layers: %u exceeds %u MTP depths", sp->mtp_layers,
                 TSL_MTP_MAX_DEPTHS);
        sp->mtp_layers = 0;
    }
}

static bool opt_bool(reader_t *r, const char *key, bool dflt)
{
    const json_t *v = json_object_get(r->root, key);
    if (v == NULL || json_is_null(v))
        return dflt;
    if (!json_is_boolean(v)) {
        note_bad(r, "%s: expected true or false, got %s", key, tsl_json_type_name(v));
        return dflt;
    }
    return json_is_true(v);
}

static const char *opt_str(reader_t *r, const char *key, const char *dflt)
{
    const json_t *v = json_object_get(r->root, key);
    if (v == NULL || json_is_null(v))
        return dflt;
    if (!json_is_string(v)) {
        note_bad(r, "%s: expected a string, got %s", key, tsl_json_type_name(v));
        return dflt;
    }
    const char *s = json_string_value(v);
    return s != NULL ? s : dflt;
}

/* A positive real from obj[key]; 0 when absent or null. */
/* As opt_pos_real, the key named in messages as `name` (a nested object's key
 * with its path: "rope_scaling.factor"). */
static double opt_pos_real_named(reader_t *r, const json_t *obj, const char *key, const char *name)
{
    const json_t *v = json_object_get(obj, key);
    if (v == NULL || json_is_null(v))
        return 0.0;
    if (!json_is_number(v)) {
        note_bad(r, "%s: expected a positive number, got %s", name, tsl_json_type_name(v));
        return 0.0;
    }
    if (!(json_number_value(v) > 0.0)) {
        note_bad(r, "%s: %g is not valid; expected a positive number", name, json_number_value(v));
        return 0.0;
    }
    return json_number_value(v);
}

static double opt_pos_real(reader_t *r, const json_t *obj, const char *key)
{
    return opt_pos_real_named(r, obj, key, key);
}

/* A non-negative real from obj[key], dflt when absent or null. */
static double opt_nonneg_real(reader_t *r, const json_t *obj, const char *key, double dflt)
{
    const json_t *v = json_object_get(obj, key);
    if (v == NULL || json_is_null(v))
        return dflt;
    if (!json_is_number(v) || !(json_number_value(v) >= 0.0)) {
        note_bad(r, "rope_scaling.%s: expected a number >= 0", key);
        return dflt;
    }
    return json_number_value(v);
}

/* rope_scaling.KEY, a boolean; dflt when absent or null. */
static bool opt_bool_in(reader_t *r, const json_t *obj, const char *key, bool dflt)
{
    const json_t *v = json_object_get(obj, key);
    if (v == NULL || json_is_null(v))
        return dflt;
    if (!json_is_boolean(v)) {
        note_bad(r, "rope_scaling.%s: expected true or false, got %s", key, tsl_json_type_name(v));
        return dflt;
    }
    return json_is_true(v);
}

/* YaRN's parameters (transformers' _compute_yarn_parameters and DeepSeek's
 * yarn_get_mscale): beta_fast 32, beta_slow 1, mscale 1, mscale_all_dim 0 unless
 * given. */
static void read_yarn(reader_t *r, const json_t *sc, tsl_model_rope_t *rope)
{
    rope->beta_fast = opt_nonneg_real(r, sc, "beta_fast", 32.0);
    rope->beta_slow = opt_nonneg_real(r, sc, "beta_slow", 1.0);
    rope->mscale = opt_nonneg_real(r, sc, "mscale", 1.0);
    rope->mscale_all_dim = opt_nonneg_real(r, sc, "mscale_all_dim", 0.0);
    /* "truncate" (transformers' _compute_yarn_parameters, true when absent): false
     * keeps the correction range's ends unrounded (gpt-oss) */
    rope->yarn_no_truncate = !opt_bool_in(r, sc, "truncate", true);
}

/* RoPE and the norm epsilon (model.h tsl_model_rope_t): no cost reads them, but
 * an export must build the same model (Megatron-LM's --rotary-base defaults to
 * 10000 where Llama 3.x has 500000). rope_scaling: rope_type (or the older
 * "type"), factor, low/high_freq_factor, original_max_position_embeddings. */
static void read_rope(reader_t *r, tsl_model_rope_t *rope, double *eps)
{
    rope->base = opt_pos_real(r, r->root, "rope_theta");
    *eps = opt_pos_real(r, r->root, "rms_norm_eps");
    if (*eps == 0.0)
        *eps = opt_pos_real(r, r->root, "layer_norm_eps");
    if (*eps == 0.0)
        *eps = opt_pos_real(r, r->root, "layer_norm_epsilon");
    const json_t *sc = json_object_get(r->root, "rope_scaling");
    if (sc == NULL || json_is_null(sc))
        return;
    if (!json_is_object(sc)) {
        note_bad(r, "rope_scaling: expected an object or null, got %s", tsl_json_type_name(sc));
        return;
    }
    const json_t *t = json_object_get(sc, "rope_type");
    if (!json_is_string(t))
        t = json_object_get(sc, "type");
    const char *type = json_string_value(t); /* NULL unless a string */
    if (type == NULL || strcmp(type, "default") == 0)
        return;
    snprintf(rope->scaling_type, sizeof rope->scaling_type, "%s", type);
    rope->scaling = strcmp(type, "llama3") == 0 ? TSL_ROPE_SCALING_LLAMA3
                    : strcmp(type, "yarn") == 0 ? TSL_ROPE_SCALING_YARN
                                                : TSL_ROPE_SCALING_OTHER;
    if (rope->scaling == TSL_ROPE_SCALING_YARN) /* absent: transformers' YaRN defaults */
        read_yarn(r, sc, rope);
    rope->scaling_factor = opt_pos_real_named(r, sc, "factor", "rope_scaling.factor");
    rope->low_freq_factor =
        opt_pos_real_named(r, sc, "low_freq_factor", "rope_scaling.low_freq_factor");
    rope->high_freq_factor =
        opt_pos_real_named(r, sc, "high_freq_factor", "rope_scaling.high_freq_factor");
    const json_t *o = json_object_get(sc, "original_max_position_embeddings");
    if (o != NULL && !json_is_null(o))
        rope->original_max_positions =
            as_u32(r, "rope_scaling.original_max_position_embeddings", o);
}

/* The sequence the model was trained at, when its config records one:
 * "original_max_position_embeddings" (Phi-3/Phi-4, at the top level) or
 * rope_scaling's (Llama 3.1, YaRN configs); 0 when neither. */
static uint32_t training_length(reader_t *r, const tsl_model_rope_t *rope)
{
    uint32_t top = opt_u32(r, "original_max_position_embeddings", 0);
    return top ? top : rope->original_max_positions;
}

/* ---- per-architecture readers ---- */

/* What a reader leaves for the common checks: the keys to name in messages. */
typedef struct keys {
    const char *layers, *hidden, *heads;
    uint32_t max_seq; /* learned positions limit an override; 0 = no limit */
} keys_t;

static void read_gpt2(reader_t *r, tsl_arch_spec_t *sp, keys_t *k)
{
    *k = (keys_t){"n_layer", "n_embd", "n_head", 0};
    sp->arch = TSL_ARCH_GPT;
    sp->layers = req_u32(r, "n_layer");
    sp->hidden = req_u32(r, "n_embd");
    sp->heads = req_u32(r, "n_head");
    sp->positions = req_u32_alt(r, "n_positions", "n_ctx", "n_positions (or n_ctx)");
    sp->vocab = req_u32(r, "vocab_size");
    sp->ffn_hidden = opt_u32(r, "n_inner", 0);
    if (sp->ffn_hidden == 0 && sp->hidden > UINT32_MAX / 4)
        note_bad(r, "n_embd: %u is too large for the default n_inner = 4 x n_embd", sp->hidden);
    else if (sp->ffn_hidden == 0)
        sp->ffn_hidden = 4 * sp->hidden;
    sp->tied_head = opt_bool(r, "tie_word_embeddings", true);
    sp->seq_len = k->max_seq = sp->positions;
    /* transformers' own GPT-2 (GPT2Block, run eagerly): read only where the config
     * names its activation, as every GPT-2 config transformers writes does; a GPT-2
     * shape written without it (a Megatron or nanoGPT run's sizes) keeps the fused
     * block. Priced under autocast alone (docs/cost-model.md "HF GPT-2's block") */
    const char *act = opt_str(r, "activation_function", NULL);
    sp->hf_gpt2_eager = act != NULL && strcmp(act, "gelu_new") == 0;
    sp->layer_scale = opt_bool(r, "scale_attn_by_inverse_layer_idx", false) && sp->hf_gpt2_eager;
    (void)opt_bool(r, "reorder_and_upcast_attn", false); /* read for its type: not priced */
}

/* The sequence a BLOOM config is planned at when it records none: BLOOM's
 * training length (arXiv:2211.05100 Sec. 3.5; tr11-176B-ml.slurm SEQ_LEN=2048).
 * ALiBi has no position table, so no key limits an override. */
#define BLOOM_DEFAULT_SEQ 2048u

/* BLOOM (transformers' BloomConfig): the GPT family with ALiBi instead of a position
 * table and a LayerNorm on the embedding; hidden_size (or n_embed), n_layer (or
 * num_hidden_layers), n_head (or num_attention_heads), vocab_size; FFN 4·h GeLU,
 * biases, LayerNorms, tied head. apply_residual_connection_post_layernorm moves
 * the residual's source, not a count: read for its type only. */
static void read_bloom(reader_t *r, tsl_arch_spec_t *sp, keys_t *k)
{
    *k = (keys_t){"n_layer", "hidden_size", "n_head", 0};
    sp->arch = TSL_ARCH_GPT;
    sp->layers = req_u32_alt(r, "n_layer", "num_hidden_layers", "n_layer (or num_hidden_layers)");
    sp->hidden = req_u32_alt(r, "hidden_size", "n_embed", "hidden_size (or n_embed)");
    sp->heads = req_u32_alt(r, "n_head", "num_attention_heads", "n_head (or num_attention_heads)");
    sp->vocab = req_u32(r, "vocab_size");
    if (sp->hidden > UINT32_MAX / 4)
        note_bad(r, "hidden_size: %u is too large for BLOOM's 4 x hidden_size FFN", sp->hidden);
    else
        sp->ffn_hidden = 4 * sp->hidden;
    sp->tied_head = opt_bool(r, "tie_word_embeddings", true);
    (void)opt_bool(r, "apply_residual_connection_post_layernorm", false);
    sp->alibi = sp->embed_norm = true;
    sp->seq_len = opt_u32(r, "seq_length", BLOOM_DEFAULT_SEQ);
}

static void read_bert(reader_t *r, tsl_arch_spec_t *sp, keys_t *k, bool roberta)
{
    *k = (keys_t){"num_hidden_layers", "hidden_size", "num_attention_heads", 0};
    sp->arch = TSL_ARCH_BERT;
    sp->layers = req_u32(r, "num_hidden_layers");
    sp->hidden = req_u32(r, "hidden_size");
    sp->heads = req_u32(r, "num_attention_heads");
    sp->ffn_hidden = req_u32(r, "intermediate_size");
    sp->positions = req_u32(r, "max_position_embeddings");
    sp->vocab = req_u32(r, "vocab_size");
    sp->type_vocab = opt_u32(r, "type_vocab_size", 2);
    sp->tied_head = opt_bool(r, "tie_word_embeddings", true);
    /* RoBERTa numbers positions from padding_idx + 1: two rows are never used */
    uint32_t pad = roberta ? 2 : 0;
    if (sp->positions > pad)
        sp->seq_len = k->max_seq = sp->positions - pad;
    else if (sp->positions != 0)
        note_bad(r, "max_position_embeddings: %u leaves no usable position", sp->positions);
}

static void read_t5(reader_t *r, tsl_arch_spec_t *sp, keys_t *k)
{
    *k = (keys_t){"num_layers", "d_model", "num_heads", 0};
    sp->arch = TSL_ARCH_T5;
    sp->layers = req_u32(r, "num_layers");
    sp->hidden = req_u32(r, "d_model");
    sp->ffn_hidden = req_u32(r, "d_ff");
    sp->heads = req_u32(r, "num_heads");
    sp->head_dim = req_u32(r, "d_kv");
    sp->vocab = req_u32(r, "vocab_size");
    sp->dec_layers = opt_u32(r, "num_decoder_layers", sp->layers);
    sp->rel_buckets = opt_u32(r, "relative_attention_num_buckets", 32);
    sp->tied_head = opt_bool(r, "tie_word_embeddings", true);
    const char *proj = opt_str(r, "feed_forward_proj", "relu");
    sp->gated_ffn = strncmp(proj, "gated-", 6) == 0;
    sp->seq_len = sp->dec_seq_len = 512; /* T5's configs carry no length */
}

/* Classifier outputs: id2label's size, else num_labels, else ImageNet-1K. */
static uint32_t vit_classes(reader_t *r)
{
    const json_t *labels = json_object_get(r->root, "id2label");
    if (json_is_object(labels) && json_object_size(labels) > 0)
        return (uint32_t)json_object_size(labels);
    return opt_u32(r, "num_labels", 1000);
}

static void read_vit(reader_t *r, tsl_arch_spec_t *sp, keys_t *k)
{
    *k = (keys_t){"num_hidden_layers", "hidden_size", "num_attention_heads", 0};
    sp->arch = TSL_ARCH_VIT;
    uint32_t image = req_u32(r, "image_size");
    sp->patch = req_u32(r, "patch_size");
    sp->channels = opt_u32(r, "num_channels", 3);
    sp->hidden = req_u32(r, "hidden_size");
    sp->layers = req_u32(r, "num_hidden_layers");
    sp->ffn_hidden = req_u32(r, "intermediate_size");
    sp->heads = req_u32(r, "num_attention_heads");
    sp->classes = vit_classes(r);
    if (image == 0 || sp->patch == 0)
        return;
    if (image % sp->patch != 0 || image / sp->patch > 65535) {
        note_bad(r,
                 "patch_size: %u does not tile image_size %u into at most 65535 x 65535 "
                 "patches",
                 sp->patch, image);
        return;
    }
    uint32_t side = image / sp->patch;
    sp->seq_len = side * side + 1; /* + the class token */
    sp->positions = sp->seq_len;   /* the table stays this size under an override */
}

/* The keys the Llama, GPT-NeoX and Phi configs name alike. */
static void read_decoder_keys(reader_t *r, tsl_arch_spec_t *sp, keys_t *k, tsl_arch_t arch)
{
    *k = (keys_t){"num_hidden_layers", "hidden_size", "num_attention_heads", 0};
    sp->arch = arch;
    sp->hidden = req_u32(r, "hidden_size");
    sp->ffn_hidden = req_u32(r, "intermediate_size");
    sp->layers = req_u32(r, "num_hidden_layers");
    sp->heads = req_u32(r, "num_attention_heads");
    sp->vocab = req_u32(r, "vocab_size");
    sp->seq_len = req_u32(r, "max_position_embeddings");
    sp->tied_head = opt_bool(r, "tie_word_embeddings", false);
}

static void set_full_attention(tsl_arch_spec_t *sp, uint32_t i)
{
    if (i < TSL_MODEL_MAX_LAYERS)
        sp->full_attn_layers[i / 64] |= 1ull << (i % 64);
}

/* "layer_types" ("full_attention" or `local`, one per layer; newer
 * transformers) marks the full-attention layers; false when the config has none. */
static bool read_layer_type_list(reader_t *r, tsl_arch_spec_t *sp, const char *local)
{
    const json_t *types = json_object_get(r->root, "layer_types");
    if (types == NULL || json_is_null(types))
        return false;
    if (!json_is_array(types) || json_array_size(types) != sp->layers) {
        note_bad(r, "layer_types: expected an array of %u layer types (one per layer)", sp->layers);
        return true;
    }
    for (uint32_t i = 0; i < sp->layers; i++) {
        const char *t = json_string_value(json_array_get(types, i));
        if (t != NULL && strcmp(t, "full_attention") == 0)
            set_full_attention(sp, i);
        else if (t == NULL || strcmp(t, local) != 0) {
            note_bad(r, "layer_types[%u]: expected \"full_attention\" or \"%s\"", i, local);
            return true;
        }
    }
    return true;
}

/* With a sliding window: which layers attend to everything. "layer_types"
 * ("full_attention" / "sliding_attention") when present; else every period-th
 * layer, those with (i + 1) % period == 0 (Gemma 2: period 2, the odd layers;
 * Gemma 3: sliding_window_pattern, 6); else, below max_window_layers, the first
 * layers (Qwen2/3); period 0 and no max_window_layers: none (Mistral). */
static void read_layer_types(reader_t *r, tsl_arch_spec_t *sp, uint32_t period,
                             uint32_t max_window_layers)
{
    if (read_layer_type_list(r, sp, "sliding_attention"))
        return;
    /* past the layer limit check_spec refuses the config; no need to mark them */
    for (uint32_t i = 0; i < sp->layers && i < TSL_MODEL_MAX_LAYERS; i++) {
        if ((period && (i + 1) % period == 0) || i < max_window_layers)
            set_full_attention(sp, i);
    }
}

/* Llama, Mistral, Qwen2 and Qwen3 (its Q/K RMSNorm per head, head_dim wide;
 * attention_bias for Q/K/V biases). Qwen's window (use_sliding_window) applies
 * from layer max_window_layers on. */
static void read_llama(reader_t *r, tsl_arch_spec_t *sp, keys_t *k, const char *type)
{
    read_decoder_keys(r, sp, k, TSL_ARCH_LLAMA);
    sp->kv_heads = opt_u32(r, "num_key_value_heads", 0);
    sp->head_dim = opt_u32(r, "head_dim", 0);
    sp->gated_ffn = true;
    bool qwen2 = strcmp(type, "qwen2") == 0 || strcmp(type, "qwen2_moe") == 0;
    bool qwen3 = strcmp(type, "qwen3") == 0 || strcmp(type, "qwen3_moe") == 0;
    sp->qkv_bias = qwen2 || (qwen3 && opt_bool(r, "attention_bias", false));
    if (qwen3)
        sp->qk_norm = TSL_QK_NORM_PER_HEAD;
    if (strcmp(type, "mistral") == 0 || strcmp(type, "mixtral") == 0) {
        sp->attn_window = opt_u32(r, "sliding_window", 0);
    } else if ((qwen2 || qwen3) && opt_bool(r, "use_sliding_window", false)) {
        sp->attn_window = opt_u32(r, "sliding_window", 0);
        if (sp->attn_window)
            read_layer_types(r, sp, 0, opt_u32(r, "max_window_layers", 0));
    }
}

/* A soft-cap value: absent gives the family's default (on or off), null turns
 * it off, a positive number turns it on. */
static bool read_softcap(reader_t *r, const char *key, bool dflt)
{
    const json_t *v = json_object_get(r->root, key);
    if (v == NULL)
        return dflt;
    return opt_pos_real(r, r->root, key) > 0.0;
}

/* Gemma 2 and Gemma 3 (gemma3_text, or gemma3's text_config: the vision tower
 * is not planned). head_dim (256) need not be h/a; gated GELU FFN; RMSNorm
 * before and after attention and FFN; the embedding scaled by sqrt(h); a tied
 * head by default; a sliding window on all but the global layers. Gemma 2
 * soft-caps scores (attn_logit_softcapping, 50) and logits
 * (final_logit_softcapping, 30); Gemma 3 has Q/K norms instead. Absent keys take
 * transformers' Gemma2Config / Gemma3TextConfig defaults where the published
 * configs leave them out (vocab_size 256000 / 262208, max_position_embeddings
 * 8192 / 131072, sliding_window 4096, sliding_window_pattern 6). */
static void read_gemma(reader_t *r, tsl_arch_spec_t *sp, keys_t *k, bool gemma3)
{
    *k = (keys_t){"num_hidden_layers", "hidden_size", "num_attention_heads", 0};
    sp->arch = TSL_ARCH_LLAMA;
    sp->hidden = req_u32(r, "hidden_size");
    sp->ffn_hidden = req_u32(r, "intermediate_size");
    sp->layers = req_u32(r, "num_hidden_layers");
    sp->heads = req_u32(r, "num_attention_heads");
    sp->kv_heads = opt_u32(r, "num_key_value_heads", 0);
    sp->head_dim = opt_u32(r, "head_dim", 256);
    sp->vocab = opt_u32(r, "vocab_size", gemma3 ? 262208 : 256000);
    sp->seq_len = opt_u32(r, "max_position_embeddings", gemma3 ? 131072 : 8192);
    sp->tied_head = opt_bool(r, "tie_word_embeddings", true);
    sp->gated_ffn = sp->sandwich_norm = sp->embed_scale = true;
    sp->qk_norm = gemma3 ? TSL_QK_NORM_PER_HEAD : TSL_QK_NORM_NONE;
    sp->attn_softcap = read_softcap(r, "attn_logit_softcapping", !gemma3);
    sp->logit_softcap = read_softcap(r, "final_logit_softcapping", !gemma3);
    sp->attn_window = opt_u32(r, "sliding_window", 4096);
    uint32_t period = gemma3 ? opt_u32(r, "sliding_window_pattern", 6) : 2;
    read_layer_types(r, sp, period, 0);
}

/* Phi-3, Phi-3.5 and Phi-4: Llama's block with fused qkv_proj and gate_up_proj
 * (the same shapes and counts), sliding_window when set, an untied head. */
static void read_phi3(reader_t *r, tsl_arch_spec_t *sp, keys_t *k)
{
    read_decoder_keys(r, sp, k, TSL_ARCH_LLAMA);
    sp->kv_heads = opt_u32(r, "num_key_value_heads", 0);
    sp->head_dim = opt_u32(r, "head_dim", 0);
    sp->gated_ffn = true;
    sp->attn_window = opt_u32(r, "sliding_window", 0);
}

/* OLMo 2: Llama's block with RMSNorm after attention and FFN instead of before
 * (the same count) and Q/K norms over the whole projection (d + e). */
static void read_olmo2(reader_t *r, tsl_arch_spec_t *sp, keys_t *k)
{
    read_decoder_keys(r, sp, k, TSL_ARCH_LLAMA);
    sp->kv_heads = opt_u32(r, "num_key_value_heads", 0);
    sp->head_dim = opt_u32(r, "head_dim", 0);
    sp->gated_ffn = true;
    sp->qk_norm = TSL_QK_NORM_FULL;
}

/* GPT-NeoX: parallel attention/FFN unless use_parallel_residual is false, two
 * LayerNorms either way, biases, untied embed_out. */
static void read_neox(reader_t *r, tsl_arch_spec_t *sp, keys_t *k)
{
    read_decoder_keys(r, sp, k, TSL_ARCH_NEOX);
    sp->parallel_block = opt_bool(r, "use_parallel_residual", true);
}

/* Falcon: parallel_attn with one LayerNorm (7B) or two (new_decoder_architecture:
 * 40B/180B); multi_query or num_kv_heads; no biases unless bias; FFN 4·h unless
 * ffn_hidden_size; tied head. The legacy configs of Falcon's own code name the
 * same keys (n_layer, n_head, hidden_size, multi_query, parallel_attn, bias):
 * model_type RefinedWebModel (7B) and RefinedWeb (40B: two LayerNorms and
 * n_head_kv K/V heads). */
static void read_falcon(reader_t *r, tsl_arch_spec_t *sp, keys_t *k, bool legacy40b)
{
    *k = (keys_t){"num_hidden_layers", "hidden_size", "num_attention_heads", 0};
    sp->arch = TSL_ARCH_NEOX;
    sp->hidden = req_u32(r, "hidden_size");
    sp->layers = req_u32_alt(r, "num_hidden_layers", "n_layer", "num_hidden_layers (or n_layer)");
    sp->heads = req_u32_alt(r, "num_attention_heads", "n_head", "num_attention_heads (or n_head)");
    sp->vocab = req_u32(r, "vocab_size");
    sp->seq_len = opt_u32(r, "max_position_embeddings", 2048);
    /* RefinedWeb (Falcon-40B's own code) is the new decoder architecture with
     * n_head_kv K/V heads; RefinedWebModel (Falcon-7B's) the old one */
    bool legacy_kv = json_object_get(r->root, "n_head_kv") != NULL;
    bool new_arch = opt_bool(r, "new_decoder_architecture", legacy40b || legacy_kv);
    uint32_t kv = legacy_kv ? opt_u32(r, "n_head_kv", 0) : opt_u32(r, "num_kv_heads", 0);
    sp->kv_heads = new_arch ? kv : opt_bool(r, "multi_query", true) ? 1 : 0;
    uint32_t dflt_ffn = sp->hidden <= UINT32_MAX / 4 ? 4 * sp->hidden : 0;
    sp->ffn_hidden = opt_u32(r, "ffn_hidden_size", dflt_ffn);
    sp->no_bias = !opt_bool(r, "bias", false);
    sp->parallel_block = new_arch || opt_bool(r, "parallel_attn", true);
    sp->shared_norm = !new_arch;
    sp->tied_head = opt_bool(r, "tie_word_embeddings", true);
    if (opt_bool(r, "alibi", false))
        note_bad(r, "alibi: true (Falcon-RW's ALiBi attention) is not supported");
}

/* Phi-1/1.5/2: one LayerNorm feeding parallel attention and FFN, biases, an
 * untied LM head with a bias. */
static void read_phi(reader_t *r, tsl_arch_spec_t *sp, keys_t *k)
{
    read_decoder_keys(r, sp, k, TSL_ARCH_NEOX);
    sp->kv_heads = opt_u32(r, "num_key_value_heads", 0);
    sp->parallel_block = sp->shared_norm = true;
    sp->head_bias = !sp->tied_head;
}

/* ---- mixture of experts and latent attention (docs/models.md) ---- */

static void set_moe_layer(tsl_arch_spec_t *sp, uint32_t i)
{
    if (i < TSL_MODEL_MAX_LAYERS)
        sp->moe_layers[i / 64] |= 1ull << (i % 64);
}

/* Layer indices in an array (Qwen's mlp_only_layers); marks them in `dense`. */
static void read_layer_list(reader_t *r, const char *key, uint32_t layers, bool *dense)
{
    const json_t *v = json_object_get(r->root, key);
    if (v == NULL || json_is_null(v))
        return;
    if (!json_is_array(v)) {
        note_bad(r, "%s: expected an array of layer indices, got %s", key, tsl_json_type_name(v));
        return;
    }
    for (size_t i = 0; i < json_array_size(v); i++) {
        const json_t *x = json_array_get(v, i);
        json_int_t n = json_is_integer(x) ? json_integer_value(x) : -1;
        if (n < 0 || (uint64_t)n >= layers) {
            note_bad(r, "%s[%zu]: expected a layer index below %u", key, i, layers);
            return;
        }
        dense[n] = true;
    }
}

/* A token's top k within the experts, said by the config's own keys: past them the
 * model builder's "llama spec: experts: ... experts_per_tok" named neither key. */
static void check_topk(reader_t *r, const tsl_arch_spec_t *sp, const char *experts_key,
                       const char *topk_key)
{
    if (sp->experts && sp->experts_per_tok > sp->experts)
        note_bad(r, "%s: %u experts per token is more than the %u experts of %s", topk_key,
                 sp->experts_per_tok, sp->experts, experts_key);
}

/* Mixtral: every layer has num_local_experts experts of intermediate_size. */
static void read_mixtral(reader_t *r, tsl_arch_spec_t *sp)
{
    sp->experts = req_u32(r, "num_local_experts");
    sp->experts_per_tok = req_u32(r, "num_experts_per_tok");
    check_topk(r, sp, "num_local_experts", "num_experts_per_tok");
    sp->moe_ffn_hidden = sp->ffn_hidden;
    sp->router_norm = true; /* transformers' MixtralSparseMoeBlock renormalises the top k */
}

/* Qwen2-MoE / Qwen3-MoE: layer i has experts unless it is in mlp_only_layers or
 * (i + 1) is not a multiple of decoder_sparse_step (transformers'
 * Qwen2MoeDecoderLayer); the others are dense at intermediate_size. Qwen2-MoE
 * adds one shared expert of shared_expert_intermediate_size with a sigmoid gate
 * (h x 1). */
static void read_qwen_moe(reader_t *r, tsl_arch_spec_t *sp, bool qwen2)
{
    sp->experts = req_u32(r, "num_experts");
    sp->experts_per_tok = req_u32(r, "num_experts_per_tok");
    check_topk(r, sp, "num_experts", "num_experts_per_tok");
    sp->moe_ffn_hidden = req_u32(r, "moe_intermediate_size");
    uint32_t step = opt_u32(r, "decoder_sparse_step", 1);
    sp->router_norm = opt_bool(r, "norm_topk_prob", false);
    if (qwen2) {
        sp->shared_ffn_hidden = opt_u32(r, "shared_expert_intermediate_size", 0);
        sp->shared_experts = sp->shared_ffn_hidden ? 1 : 0;
        sp->shared_expert_gate = sp->shared_experts > 0;
    }
    if (sp->layers == 0 || sp->layers > TSL_MODEL_MAX_LAYERS || step == 0)
        return; /* check_spec reports it */
    bool dense[TSL_MODEL_MAX_LAYERS] = {false};
    read_layer_list(r, "mlp_only_layers", sp->layers, dense);
    uint32_t n = 0;
    for (uint32_t i = 0; i < sp->layers; i++) {
        if (!dense[i] && (i + 1) % step == 0) {
            set_moe_layer(sp, i);
            n++;
        }
    }
    if (n == 0)
        sp->experts = 0; /* every layer dense */
}

/* DeepSeek's router (modeling_deepseek.py's MoEGate; transformers' DeepseekV2/V3
 * configs for the defaults): scoring_func softmax or sigmoid (V3: sigmoid);
 * topk_method "greedy" (the top k), "group_limited_greedy" (V2: within the best
 * topk_group of n_group groups, each scored by its best expert) or "noaux_tc"
 * (V3: the same, a group scored by its two best, and a score-correction bias of E
 * that chooses but does not weigh); norm_topk_prob; routed_scaling_factor, which
 * V2 applies only to weights it does not normalise (V3 to both). V3's defaults:
 * sigmoid, 8 groups, top 4, normalised, 2.5. */
static void read_deepseek_router(reader_t *r, tsl_arch_spec_t *sp, bool v3)
{
    const char *topk = opt_str(r, "topk_method", NULL);
    const char *score = opt_str(r, "scoring_func", NULL);
    topk = topk != NULL ? topk : v3 ? "noaux_tc" : "greedy";
    score = score != NULL ? score : v3 ? "sigmoid" : "softmax";
    bool grouped = strcmp(topk, "greedy") != 0;
    sp->router_bias = strcmp(topk, "noaux_tc") == 0;
    if (grouped && !sp->router_bias && strcmp(topk, "group_limited_greedy") != 0)
        note_bad(r, "topk_method: \"%s\" is not greedy, group_limited_greedy or noaux_tc", topk);
    if (strcmp(score, "softmax") && strcmp(score, "sigmoid"))
        note_bad(r, "scoring_func: \"%s\" is not softmax or sigmoid", score);
    sp->router_score = strcmp(score, "sigmoid") ? TSL_ROUTER_SOFTMAX : TSL_ROUTER_SIGMOID;
    sp->router_norm = opt_bool(r, "norm_topk_prob", v3);
    double scale = opt_pos_real(r, r->root, "routed_scaling_factor");
    sp->router_scale = scale > 0 ? scale : v3 ? 2.5 : 1.0;
    if (!v3 && sp->router_norm)
        sp->router_scale = 1.0;
    uint32_t g = grouped ? opt_u32(r, "n_group", v3 ? 8 : 1) : 1;
    uint32_t tg = grouped ? opt_u32(r, "topk_group", v3 ? 4 : 1) : 1;
    if (g > 1 && (g > UINT16_MAX || sp->experts % g || tg > g ||
                  (uint64_t)sp->experts_per_tok > (uint64_t)tg * (sp->experts / g))) {
        note_bad(r,
                 "n_group %u, topk_group %u: the groups must split the %u experts and hold the "
                 "%u chosen",
                 g, tg, sp->experts, sp->experts_per_tok);
        return;
    }
    sp->router_groups = g > 1 ? (uint16_t)g : 0;
    sp->router_topk_groups = g > 1 ? (uint16_t)tg : 0;
}

static void read_deepseek_moe(reader_t *r, tsl_arch_spec_t *sp, bool v3);

/* DeepSeek-V2/V3 (and Kimi K2, model_type kimi_k2, DeepSeek-V3's architecture):
 * multi-head latent attention on every layer; experts from
 * layer first_k_dense_replace on, on every moe_layer_freq-th (layer i has them
 * when i >= first_k_dense_replace and i % moe_layer_freq == 0, as in DeepSeek's
 * modeling_deepseek.py); n_shared_experts shared experts of moe_intermediate_size
 * (one MLP of n_shared x that width in the code: the same counts); the router as
 * read_deepseek_router reads it (V3's "noaux_tc" has a score-correction bias of E).
 * The MTP module (num_nextn_predict_layers: V3's one depth, a MoE layer as its last)
 * is built (mtp.h; leave it out with --no-mtp). */
static void read_deepseek(reader_t *r, tsl_arch_spec_t *sp, bool v3)
{
    sp->kv_heads = 0;
    read_mtp_layers(r, sp);
    sp->q_lora_rank = opt_u32(r, "q_lora_rank", 0);
    sp->kv_lora_rank = req_u32(r, "kv_lora_rank");
    sp->qk_nope_dim = req_u32(r, "qk_nope_head_dim");
    sp->qk_rope_dim = req_u32(r, "qk_rope_head_dim");
    sp->v_head_dim = req_u32(r, "v_head_dim");
    if (opt_bool(r, "attention_bias", false))
        note_bad(r, "attention_bias: true (biases on latent attention) is not supported");
    read_deepseek_moe(r, sp, v3);
}

/* GLM-4.5 (transformers a0699c97 modeling_glm4_moe.py: Glm4MoeAttention, Glm4MoeMoE,
 * Glm4MoeTopkRouter, Glm4MoeMLP):
 * read_llama's grouped-query attention, head_dim wide, with biases on Q, K and V
 * (attention_bias; O has none) and, under use_qk_norm, an RMSNorm per head on Q and
 * K; RoPE on partial_rotary_factor of each head (no cost here); DeepSeek-V3's
 * experts, shared experts, dense first layers and sigmoid router with its
 * score-correction bias (read_deepseek_moe; Glm4MoeTopkRouter's
 * e_score_correction_bias); the MTP depths as DeepSeek-V3's
 * (num_nextn_predict_layers). */
static void read_glm4_moe(reader_t *r, tsl_arch_spec_t *sp)
{
    sp->qkv_bias = opt_bool(r, "attention_bias", false);
    if (opt_bool(r, "use_qk_norm", false))
        sp->qk_norm = TSL_QK_NORM_PER_HEAD;
    read_mtp_layers(r, sp);
    read_deepseek_moe(r, sp, true);
}

/* DeepSeek-V3's mixture of experts (and GLM-4.5's, read_glm4_moe). */
static void read_deepseek_moe(reader_t *r, tsl_arch_spec_t *sp, bool v3)
{
    sp->experts = opt_u32(r, "n_routed_experts", 0);
    if (sp->experts == 0)
        return;
    sp->experts_per_tok = req_u32(r, "num_experts_per_tok");
    check_topk(r, sp, "n_routed_experts", "num_experts_per_tok");
    sp->moe_ffn_hidden = req_u32(r, "moe_intermediate_size");
    sp->shared_experts = opt_u32(r, "n_shared_experts", 0);
    sp->shared_ffn_hidden = sp->moe_ffn_hidden;
    read_deepseek_router(r, sp, v3);
    const json_t *fk = json_object_get(r->root, "first_k_dense_replace");
    uint32_t first =
        (fk == NULL || json_is_null(fk) || (json_is_integer(fk) && json_integer_value(fk) == 0))
            ? 0
            : as_u32(r, "first_k_dense_replace", fk);
    uint32_t freq = opt_u32(r, "moe_layer_freq", 1);
    uint32_t n = 0;
    for (uint32_t i = first; freq && i < sp->layers && i < TSL_MODEL_MAX_LAYERS; i++) {
        if (i % freq == 0) {
            set_moe_layer(sp, i);
            n++;
        }
    }
    /* n_routed_experts says the model has experts, and no layer would hold them:
     * transformers builds every layer dense then, but a config that says both is a
     * slip (num_hidden_layers cut for a small run with DeepSeek-V3's 3 dense layers
     * kept) more often than a wish, and it was planned as a dense model without a
     * word. A dense model leaves n_routed_experts out (or null). */
    if (n == 0 && sp->layers > 0 && freq > 0)
        note_bad(r,
                 "first_k_dense_replace: %u (moe_layer_freq %u) leaves no MoE layer among "
                 "num_hidden_layers %u, yet n_routed_experts is %u; lower "
                 "first_k_dense_replace, or leave n_routed_experts out (null) for a dense model",
                 first, freq, sp->layers, sp->experts);
    if (n == 0)
        sp->experts = 0;
}

/* gpt-oss (transformers' GptOssAttention, GptOssExperts, GptOssTopKRouter):
 * Llama's block with biases on Q, K, V and O (attention_bias) and on each
 * expert's fused gate/up (2·f) and down (h) projections, a learned sink logit
 * per head, a router with a bias; sliding_window (128) on the layers
 * layer_types marks "sliding_attention" (else the even ones), full attention on
 * the others; num_local_experts experts of intermediate_size in every layer, top
 * num_experts_per_tok (experts_per_token in OpenAI's own code). Absent head_dim
 * and sliding_window take GptOssConfig's defaults (64, 128). */
static void read_gpt_oss(reader_t *r, tsl_arch_spec_t *sp, keys_t *k)
{
    read_decoder_keys(r, sp, k, TSL_ARCH_LLAMA);
    sp->kv_heads = opt_u32(r, "num_key_value_heads", 0);
    sp->head_dim = opt_u32(r, "head_dim", 64);
    sp->gated_ffn = sp->linear_bias = sp->attn_sinks = sp->router_bias = true;
    sp->router_norm = true; /* the softmax of the top k logits: the top k renormalised */
    /* the experts clamp their gate/up output at swiglu_limit (absent: GptOssConfig's
     * 7.0; null: no clamp) */
    const json_t *lim = json_object_get(r->root, "swiglu_limit");
    sp->glu_limit = lim == NULL ? 7.0 : opt_pos_real(r, r->root, "swiglu_limit");
    sp->glu_clamp = sp->glu_limit > 0;
    /* one bias switch per layer (model.h no_bias): the experts always have theirs */
    if (!opt_bool(r, "attention_bias", true))
        note_bad(r, "attention_bias: false is not supported for gpt_oss (Tessel gives a "
                    "layer's attention and experts their biases together)");
    sp->attn_window = opt_u32(r, "sliding_window", 128);
    read_layer_types(r, sp, 2, 0);
    sp->experts = req_u32(r, "num_local_experts");
    sp->experts_per_tok = req_u32_alt(r, "num_experts_per_tok", "experts_per_token",
                                      "num_experts_per_tok (or experts_per_token)");
    check_topk(r, sp, "num_local_experts", "num_experts_per_tok");
    sp->moe_ffn_hidden = sp->ffn_hidden;
}

static void set_nope_layer(tsl_arch_spec_t *sp, uint32_t i)
{
    if (i < TSL_MODEL_MAX_LAYERS)
        sp->nope_layers[i / 64] |= 1ull << (i % 64);
}

/* Llama 4's RoPE layers: "no_rope_layers" holds, despite its name, 1 for a
 * layer that uses RoPE and 0 for a NoPE layer; empty or absent, every
 * no_rope_layer_interval-th layer (4: layers 3, 7, ...) is NoPE (transformers'
 * Llama4TextConfig). Marks the NoPE layers in nope_layers. */
static void read_llama4_rope(reader_t *r, tsl_arch_spec_t *sp)
{
    const json_t *v = json_object_get(r->root, "no_rope_layers");
    if (v != NULL && !json_is_null(v) && !json_is_array(v)) {
        note_bad(r, "no_rope_layers: expected an array of 0 or 1 per layer, got %s",
                 tsl_json_type_name(v));
        return;
    }
    size_t n = json_array_size(v); /* 0 unless an array */
    if (n == 0) {
        uint32_t every = opt_u32(r, "no_rope_layer_interval", 4);
        for (uint32_t i = 0; every && i < sp->layers && i < TSL_MODEL_MAX_LAYERS; i++) {
            if ((i + 1) % every == 0)
                set_nope_layer(sp, i);
        }
        return;
    }
    if (n != sp->layers) {
        note_bad(r, "no_rope_layers: %zu entries; expected one per layer (%u)", n, sp->layers);
        return;
    }
    for (uint32_t i = 0; i < sp->layers; i++) {
        const json_t *x = json_array_get(v, i);
        json_int_t b = json_is_integer(x) ? json_integer_value(x) : -1;
        if (b != 0 && b != 1) {
            note_bad(r, "no_rope_layers[%u]: expected 1 (RoPE) or 0 (NoPE)", i);
            return;
        }
        if (b == 0)
            set_nope_layer(sp, i);
    }
}

/* Llama 4's MoE layers: "moe_layers" (indices) when given, else every
 * interleave_moe_layer_step-th, layer i with i % step == step - 1 (Scout: 1,
 * every layer; Maverick: 2, the odd layers). None: every layer dense. */
static void read_llama4_moe_layers(reader_t *r, tsl_arch_spec_t *sp)
{
    if (sp->layers == 0 || sp->layers > TSL_MODEL_MAX_LAYERS)
        return; /* check_spec reports it */
    bool moe[TSL_MODEL_MAX_LAYERS] = {false};
    const json_t *list = json_object_get(r->root, "moe_layers");
    if (list != NULL && !json_is_null(list)) {
        read_layer_list(r, "moe_layers", sp->layers, moe);
    } else {
        uint32_t step = opt_u32(r, "interleave_moe_layer_step", 1);
        for (uint32_t i = 0; step && i < sp->layers; i++)
            moe[i] = i % step == step - 1;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < sp->layers; i++) {
        if (moe[i]) {
            set_moe_layer(sp, i);
            n++;
        }
    }
    if (n == 0)
        sp->experts = 0;
}

/* Llama 4 (the text_config of Llama4ForConditionalGeneration, or a llama4_text
 * config; transformers' Llama4TextAttention, Llama4TextMoe, Llama4TextMLP): MoE
 * layers of one shared expert and top num_experts_per_tok of num_local_experts
 * routed experts, all intermediate_size wide, router without bias; dense layers
 * intermediate_size_mlp (16384 when absent, as transformers); chunked attention
 * of attention_chunk_size (8192 when absent, none when null) on the layers
 * layer_types marks "chunked_attention" (else the RoPE layers), full attention on
 * the others; use_qk_norm (true): a weightless L2 norm of Q and K on the RoPE
 * layers. The NoPE layers' temperature tuning (a scale on Q) is not counted. */
static void read_llama4(reader_t *r, tsl_arch_spec_t *sp, keys_t *k)
{
    read_decoder_keys(r, sp, k, TSL_ARCH_LLAMA);
    sp->kv_heads = opt_u32(r, "num_key_value_heads", 0);
    sp->head_dim = opt_u32(r, "head_dim", 0);
    sp->gated_ffn = true;
    if (opt_bool(r, "attention_bias", false))
        note_bad(r, "attention_bias: true (biases on Llama 4's attention) is not supported");
    sp->experts = req_u32(r, "num_local_experts");
    sp->experts_per_tok = opt_u32(r, "num_experts_per_tok", 1);
    check_topk(r, sp, "num_local_experts", "num_experts_per_tok");
    sp->moe_ffn_hidden = sp->shared_ffn_hidden = sp->ffn_hidden;
    sp->shared_experts = 1;
    sp->ffn_hidden = opt_u32(r, "intermediate_size_mlp", 16384);
    read_llama4_moe_layers(r, sp);
    read_llama4_rope(r, sp);
    if (opt_bool(r, "use_qk_norm", true))
        sp->qk_norm = TSL_QK_NORM_L2;
    const json_t *chunk = json_object_get(r->root, "attention_chunk_size");
    sp->attn_window = chunk == NULL ? 8192 : opt_u32(r, "attention_chunk_size", 0);
    sp->attn_chunked = sp->attn_window > 0;
    if (sp->attn_chunked && !read_layer_type_list(r, sp, "chunked_attention"))
        memcpy(sp->full_attn_layers, sp->nope_layers, sizeof sp->full_attn_layers);
}

/* ---- mixture of experts: refused for the families not read (docs/models.md) ---- */

/* Nemotron-H's block list: hybrid_override_pattern (M, *, -, E), or the newer
 * configs' layers_block_type list ("mamba", "attention", "mlp", "moe"). */
static void read_hybrid_pattern(reader_t *r, tsl_arch_spec_t *sp)
{
    const char *pat = opt_str(r, "hybrid_override_pattern", NULL);
    const json_t *list = json_object_get(r->root, "layers_block_type");
    size_t n = 0, cap = sizeof sp->hybrid - 1;
    if (pat != NULL) {
        n = strlen(pat);
        if (n > cap) {
            note_bad(r, "hybrid_override_pattern: %zu layers exceed the limit of %zu", n, cap);
            return;
        }
        memcpy(sp->hybrid, pat, n + 1);
    } else if (json_is_array(list)) {
        static const char *const names[] = {"mamba", "attention", "mlp", "moe"};
        static const char sym[] = "M*-E";
        n = json_array_size(list);
        for (size_t i = 0; i < n && i < cap; i++) {
            const char *t = json_string_value(json_array_get(list, i));
            char c = '?';
            for (size_t j = 0; t != NULL && j < 4; j++)
                c = strcmp(t, names[j]) == 0 ? sym[j] : c;
            if (c == '?') {
                note_bad(r,
                         "layers_block_type[%zu]: \"%.32s\" is not mamba, attention, mlp or "
                         "moe",
                         i, t ? t : "(not a string)");
                return;
            }
            sp->hybrid[i] = c;
        }
        if (n > cap) {
            note_bad(r, "layers_block_type: %zu layers exceed the limit of %zu", n, cap);
            return;
        }
    } else {
        note_missing(r, "hybrid_override_pattern (or layers_block_type)");
        return;
    }
    if (sp->layers != n)
        note_bad(r, "hybrid_override_pattern: %zu layers, num_hidden_layers says %u", n,
                 sp->layers);
}

/* A hybrid's MTP depths (mtp.h): num_nextn_predict_layers, each the blocks of
 * mtp_hybrid_override_pattern ("*E": attention then MoE, Nemotron 3 Super) or of
 * mtp_layers_block_type (["attention", "moe"]). */
static void read_mtp_pattern(reader_t *r, tsl_arch_spec_t *sp)
{
    read_mtp_layers(r, sp);
    const char *pat = opt_str(r, "mtp_hybrid_override_pattern", NULL);
    const json_t *list = json_object_get(r->root, "mtp_layers_block_type");
    size_t cap = sizeof sp->mtp_hybrid - 1;
    if (sp->mtp_layers == 0)
        return;
    if (pat != NULL) {
        if (strlen(pat) > cap || strspn(pat, "M*-E") != strlen(pat) || pat[0] == '\0') {
            note_bad(r, "mtp_hybrid_override_pattern: \"%.16s\": 1..%zu blocks of M, *, - or E",
                     pat, cap);
            return;
        }
        memcpy(sp->mtp_hybrid, pat, strlen(pat) + 1);
        return;
    }
    static const char *const names[] = {"mamba", "attention", "mlp", "moe"};
    static const char sym[] = "M*-E";
    size_t n = json_is_array(list) ? json_array_size(list) : 0;
    if (n == 0 || n > cap) {
        note_bad(r,
                 "num_nextn_predict_layers: %u MTP depths need their blocks: "
                 "mtp_hybrid_override_pattern (\"*E\") or mtp_layers_block_type (1..%zu)",
                 sp->mtp_layers, cap);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const char *t = json_string_value(json_array_get(list, i));
        char c = '?';
        for (size_t j = 0; t != NULL && j < 4; j++)
            c = strcmp(t, names[j]) == 0 ? sym[j] : c;
        if (c == '?') {
            note_bad(r, "mtp_layers_block_type[%zu]: not mamba, attention, mlp or moe", i);
            return;
        }
        sp->mtp_hybrid[i] = c;
    }
}

/* Nemotron-H and Nemotron 3 (transformers' NemotronHConfig; Megatron-Bridge's
 * nemotron_h_bridge.py): a hybrid of Mamba-2 mixers (mamba_num_heads,
 * mamba_head_dim, ssm_state_size, n_groups, conv_kernel, chunk_size), grouped-query
 * attention blocks without RoPE cost (head_dim), non-gated squared-ReLU MLP blocks
 * (intermediate_size) and MoE blocks (n_routed_experts of moe_intermediate_size,
 * top num_experts_per_tok, one shared expert of moe_shared_expert_intermediate_size,
 * DeepSeek-V3's sigmoid router with its score-correction bias, routed_scaling_factor,
 * n_group/topk_group); RMSNorm, no biases, an untied head. Nemotron 3 Super's
 * latent MoE (moe_latent_size, model.h "Latent MoE") and MTP depths
 * (num_nextn_predict_layers, each depth the blocks of mtp_hybrid_override_pattern
 * or mtp_layers_block_type; mtp.h). */
static void read_nemotron_h(reader_t *r, tsl_arch_spec_t *sp, keys_t *k)
{
    *k = (keys_t){"num_hidden_layers", "hidden_size", "num_attention_heads", 0};
    sp->arch = TSL_ARCH_LLAMA;
    sp->hidden = req_u32(r, "hidden_size");
    sp->layers = req_u32(r, "num_hidden_layers");
    sp->heads = req_u32(r, "num_attention_heads");
    sp->vocab = req_u32(r, "vocab_size");
    sp->seq_len = req_u32(r, "max_position_embeddings");
    sp->tied_head = opt_bool(r, "tie_word_embeddings", false);
    sp->kv_heads = opt_u32(r, "num_key_value_heads", 0);
    sp->head_dim = opt_u32(r, "head_dim", 0);
    sp->ffn_hidden = opt_u32(r, "intermediate_size", 0);
    sp->relu2 = true;
    const char *act = opt_str(r, "mlp_hidden_act", "relu2");
    if (strcmp(act, "relu2") != 0)
        note_bad(r,
                 "mlp_hidden_act: \"%s\": Nemotron-H's MLP is modelled with relu2 (squared "
                 "ReLU, not gated)",
                 act);
    if (opt_bool(r, "mamba_proj_bias", false) || opt_bool(r, "use_bias", false) ||
        opt_bool(r, "mlp_bias", false) || opt_bool(r, "attention_bias", false))
        note_bad(r, "mamba_proj_bias, use_bias, mlp_bias, attention_bias: biases are not modelled "
                    "on a hybrid (Megatron's MambaMixer asserts bias=False)");
    read_hybrid_pattern(r, sp);
    read_mtp_pattern(r, sp);
    sp->ssm_heads = req_u32(r, "mamba_num_heads");
    sp->ssm_head_dim = req_u32(r, "mamba_head_dim");
    sp->ssm_state = req_u32(r, "ssm_state_size");
    sp->ssm_groups = req_u32(r, "n_groups");
    sp->ssm_conv = opt_u32(r, "conv_kernel", 4);
    sp->ssm_chunk = opt_u32(r, "chunk_size", 128);
    if (!strchr(sp->hybrid, 'E'))
        return;
    sp->experts = req_u32(r, "n_routed_experts");
    sp->experts_per_tok = req_u32(r, "num_experts_per_tok");
    check_topk(r, sp, "n_routed_experts", "num_experts_per_tok");
    sp->moe_ffn_hidden = req_u32(r, "moe_intermediate_size");
    uint32_t fs = opt_u32(r, "moe_shared_expert_intermediate_size", 0);
    sp->shared_experts = fs ? opt_u32(r, "n_shared_experts", 1) : 0;
    sp->shared_ffn_hidden = sp->shared_experts ? fs / sp->shared_experts : 0;
    sp->moe_latent = opt_u32(r, "moe_latent_size", 0);
    if (sp->moe_latent >= sp->hidden && sp->hidden) {
        note_bad(r,
                 "moe_latent_size: %u must be below hidden_size (%u): the latent projection "
                 "narrows the routed experts' rows",
                 sp->moe_latent, sp->hidden);
        sp->moe_latent = 0;
    }
    sp->router_bias = true; /* e_score_correction_bias: DeepSeek-V3's noaux_tc choice */
    sp->router_score = TSL_ROUTER_SIGMOID;
    sp->router_norm = opt_bool(r, "norm_topk_prob", true);
    double scale = opt_pos_real(r, r->root, "routed_scaling_factor");
    sp->router_scale = scale > 0 ? scale : 1.0;
    uint32_t g = opt_u32(r, "n_group", 1), tg = opt_u32(r, "topk_group", 1);
    if (g > 1 && (g > UINT16_MAX || sp->experts % g || tg > g))
        note_bad(r, "n_group %u, topk_group %u: the groups must split the %u experts", g, tg,
                 sp->experts);
    else if (g > 1) {
        sp->router_groups = (uint16_t)g;
        sp->router_topk_groups = (uint16_t)tg;
    }
}

static const char *const moe_types[] = {
    "deepseek", "dbrx", "olmoe", "phimoe", "jamba", "granitemoe", "jetmoe", "switch_transformers",
    "nllb_moe",
};

/* Experts a config declares under any of the usual keys; 0 when none. */
static int64_t moe_experts(const json_t *root, const char **key)
{
    static const char *const keys[] = {"num_local_experts", "num_experts", "n_routed_experts",
                                       "moe_num_experts"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        const json_t *v = json_object_get(root, keys[i]);
        if (json_is_integer(v) && json_integer_value(v) > 1) {
            *key = keys[i];
            return json_integer_value(v);
        }
    }
    return 0;
}

/* The MoE families read below (mixtral, qwen2_moe, qwen3_moe, deepseek_v2/v3,
 * kimi_k2, glm4_moe, gpt_oss, llama4, nemotron_h) are imported with their experts; any other config that
 * declares experts, or an MoE model_type not read, is refused: built as dense it
 * would be wrong in every figure. TSL_E_INVALID, as an unknown model_type: an input
 * Tessel does not read, exit 2 on every path (docs/tesselctl.md "Exit status"). */
static const char *const moe_read[] = {"mixtral",     "qwen2_moe",   "qwen3_moe", "deepseek_v2",
                                       "deepseek_v3", "kimi_k2",     "glm4_moe",  "gpt_oss",
                                       "llama4",      "llama4_text", "nemotron_h"};
#define N_MOE_READ (sizeof(moe_read) / sizeof(moe_read[0]))

static bool moe_type_read(const char *type)
{
    for (size_t i = 0; type && i < N_MOE_READ; i++) {
        if (strcmp(type, moe_read[i]) == 0)
            return true;
    }
    return false;
}

/* "mixtral, qwen2_moe, ..., nemotron_h": what a refusal offers instead. */
static const char *moe_read_list(char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < N_MOE_READ && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", moe_read[i]);
    return buf;
}

/* type: the model_type read, or that of the class named in "architectures"
 * (GptOssForCausalLM is gpt_oss), or NULL. */
static int refuse_moe(const json_t *root, const char *type, tsl_err_t *err)
{
    const char *key = NULL;
    char read[160], shown[TSL_ERR_SHOWN_MAX(64)];
    if (moe_type_read(type))
        return 0;
    int64_t n = moe_experts(root, &key);
    if (n > 0) /* the type as given, shown escaped: a raw newline would end the line */
        return tsl_err_set(err,
                           "mixture-of-experts model (%s = %lld) of model_type %s is not "
                           "supported: Tessel reads the experts of model_type %s only, and "
                           "planned as dense it would be wrong in every figure",
                           key, (long long)n,
                           type ? tsl_err_shown(type, 64, shown, sizeof shown) : "(none)",
                           moe_read_list(read, sizeof read));
    for (size_t i = 0; type && i < sizeof(moe_types) / sizeof(moe_types[0]); i++) {
        if (strcmp(type, moe_types[i]) == 0)
            return tsl_err_set(err,
                               "model_type \"%s\" is a mixture-of-experts model, which is not "
                               "supported: Tessel reads the experts of model_type %s only",
                               type, moe_read_list(read, sizeof read));
    }
    return 0;
}

/* ---- architecture detection ---- */

typedef struct hf_arch {
    const char *model_type;
    const char *class_prefix; /* in "architectures": GPT2LMHeadModel, BertForMaskedLM */
} hf_arch_t;

static const hf_arch_t archs[] = {
    {"gpt2", "GPT2"},
    {"bert", "Bert"},
    {"roberta", "Roberta"},
    {"t5", "T5"},
    {"vit", "ViT"},
    {"llama", "Llama"},
    {"mistral", "Mistral"},
    {"mistral3", "Mistral3"}, /* Mistral3ForConditionalGeneration: text_config read */
    {"qwen2", "Qwen2"},
    {"gpt_neox", "GPTNeoX"},
    {"bloom", "Bloom"},
    {"falcon", "Falcon"},
    {"phi", "Phi"},
    {"qwen3", "Qwen3"},
    {"gemma2", "Gemma2"},
    {"gemma3", "Gemma3"},
    {"gemma3_text", "Gemma3"},
    {"phi3", "Phi3"},
    {"olmo2", "Olmo2"},
    {"mixtral", "Mixtral"},
    {"qwen2_moe", "Qwen2Moe"},
    {"qwen3_moe", "Qwen3Moe"},
    {"deepseek_v2", "DeepseekV2"},
    {"deepseek_v3", "DeepseekV3"},
    /* Kimi K2: DeepseekV3ForCausalLM under its own model_type (read as deepseek_v3) */
    {"kimi_k2", "DeepseekV3"},
    {"glm4_moe", "Glm4Moe"},
    {"gpt_oss", "GptOss"},
    {"llama4", "Llama4"}, /* Llama4ForConditionalGeneration, Llama4ForCausalLM */
    {"llama4_text", "Llama4"},
    {"nemotron_h", "NemotronH"},
    /* Falcon's own code: RWForCausalLM, told apart by n_head_kv (read_falcon) */
    {"RefinedWebModel", "RW"},
    {"RefinedWeb", "RW"},
};

#define N_ARCHS (sizeof(archs) / sizeof(archs[0]))

static const hf_arch_t *arch_by_type(const char *type)
{
    for (size_t i = 0; i < N_ARCHS; i++) {
        if (strcmp(archs[i].model_type, type) == 0)
            return &archs[i];
    }
    return NULL;
}

/* "LlamaForCausalLM" is llama; "Qwen2MoeForCausalLM" is not qwen2: what follows
 * the prefix must be the task part of the class name. */
static const hf_arch_t *arch_by_class(const char *cls)
{
    static const char *const tails[] = {"Model", "For", "LMHead"};
    for (size_t i = 0; i < N_ARCHS; i++) {
        size_t n = strlen(archs[i].class_prefix);
        if (strncmp(cls, archs[i].class_prefix, n) != 0)
            continue;
        for (size_t j = 0; j < sizeof(tails) / sizeof(tails[0]); j++) {
            if (strncmp(cls + n, tails[j], strlen(tails[j])) == 0)
                return &archs[i];
        }
    }
    return NULL;
}

static const hf_arch_t *detect(const json_t *root, tsl_err_t *err)
{
    const json_t *mt = json_object_get(root, "model_type");
    if (mt != NULL && !json_is_string(mt)) {
        tsl_err_set(err, "model_type: expected a string, got %s", tsl_json_type_name(mt));
        return NULL;
    }
    if (mt != NULL) {
        const hf_arch_t *a = arch_by_type(json_string_value(mt));
        char shown[TSL_ERR_SHOWN_MAX(64)]; /* a raw newline would end the message's line */
        if (a == NULL)
            tsl_err_set(err, "model_type \"%s\" is not supported; supported: " SUPPORTED,
                        tsl_err_shown(json_string_value(mt), 64, shown, sizeof shown));
        return a;
    }
    const json_t *list = json_object_get(root, "architectures");
    const json_t *first = json_is_array(list) ? json_array_get(list, 0) : NULL;
    if (!json_is_string(first)) {
        tsl_err_set(err, "no \"model_type\" and no \"architectures\" naming the architecture; "
                         "supported model_type values: " SUPPORTED);
        return NULL;
    }
    const hf_arch_t *a = arch_by_class(json_string_value(first));
    char shown[TSL_ERR_SHOWN_MAX(64)];
    if (a == NULL)
        tsl_err_set(err,
                    "architectures: \"%s\" is not supported (and model_type is absent); "
                    "supported: " SUPPORTED,
                    tsl_err_shown(json_string_value(first), 64, shown, sizeof shown));
    return a;
}

/* ---- checks shared by all architectures ---- */

static int check_spec(const reader_t *r, const tsl_arch_spec_t *sp, const keys_t *k, tsl_err_t *err)
{
    if (r->missing[0] && r->bad[0])
        return tsl_err_set(err, "missing keys: %s; and %s", r->missing, r->bad);
    if (r->missing[0])
        return tsl_err_set(err, "missing keys: %s", r->missing);
    if (r->bad[0])
        return tsl_err_set(err, "%s", r->bad);
    uint64_t layers = 2ull + sp->layers + (sp->arch == TSL_ARCH_T5 ? sp->dec_layers : 0);
    if (layers > TSL_MODEL_MAX_LAYERS)
        return tsl_err_set(err,
                           "%s: %u layers (plus embedding, head%s) exceed the limit of %u "
                           "layers (TSL_MODEL_MAX_LAYERS)",
                           k->layers, sp->layers, sp->arch == TSL_ARCH_T5 ? ", decoder layers" : "",
                           TSL_MODEL_MAX_LAYERS);
    if (sp->head_dim == 0 && sp->hidden % sp->heads != 0)
        return tsl_err_set(err, "%s: %s %u is not a multiple of %u heads", k->heads, k->hidden,
                           sp->hidden, sp->heads);
    if (sp->kv_heads > sp->heads || (sp->kv_heads && sp->heads % sp->kv_heads != 0))
        return tsl_err_set(err, "num_key_value_heads: %u must divide %s (%u)", sp->kv_heads,
                           k->heads, sp->heads);
    return 0;
}

static int apply_override(tsl_arch_spec_t *sp, const keys_t *k, uint32_t seq, tsl_err_t *err)
{
    if (seq == 0)
        return 0;
    if (k->max_seq && seq > k->max_seq)
        return tsl_err_set(err,
                           "sequence length %u exceeds the %u learned positions of this "
                           "model",
                           seq, k->max_seq);
    sp->seq_len = seq;
    if (sp->arch == TSL_ARCH_T5)
        sp->dec_seq_len = seq;
    return 0;
}

static void default_name(const json_t *root, const char *type, char *buf, size_t len)
{
    const char *path = json_string_value(json_object_get(root, "_name_or_path"));
    const char *base = path ? strrchr(path, '/') : NULL;
    base = base ? base + 1 : path;
    snprintf(buf, len, "%s", (base && *base) ? base : type);
}

/* The model's name as the plan, the listings and every export write it (a comment
 * line of the megatron and torchtitan exports among them): a control character or
 * a quote would end that line or string there — "_name_or_path": "x\nimport os"
 * wrote a live line of Python — so it is refused, as tesselctl refuses such a
 * --name. from: what the name came from, for the message. */
static int check_name(const char *use, const char *from, tsl_err_t *err)
{
    if (tsl_name_bad_char(use, NULL) == NULL) /* names.h: the rule tesselctl's --name keeps */
        return 0;
    char shown[TSL_NAME_MAX];
    size_t i = 0, hidden = 0; /* a Unicode control's bytes (err.h) shown as ? too */
    for (; use[i] && i + 1 < sizeof shown; i++) {
        unsigned char c = (unsigned char)use[i];
        if (hidden == 0)
            hidden = tsl_err_unicode_control(use + i);
        shown[i] = c < 0x20 || c == 0x7f || hidden ? '?' : (char)c;
        if (hidden)
            hidden--;
    }
    shown[i] = '\0';
    return tsl_err_set(err,
                       "%s: the model's name '%s' holds a quote or a control character (shown "
                       "as ?); give the model a name with --name",
                       from, shown);
}

/* Causal self-attention: Tessel's own "causal" key (true/false) when present;
 * else a BERT/RoBERTa config with "is_decoder": true (BertLMHeadModel, a causal
 * LM) is causal; else the family's (model.h: GPT, Llama, NeoX and T5's decoder). */
static void read_causal(reader_t *r, tsl_arch_spec_t *sp)
{
    const json_t *v = json_object_get(r->root, "causal");
    if (v != NULL && !json_is_null(v))
        sp->causal = opt_bool(r, "causal", false) ? TSL_CAUSAL_ON : TSL_CAUSAL_OFF;
    else if (sp->arch == TSL_ARCH_BERT && opt_bool(r, "is_decoder", false))
        sp->causal = TSL_CAUSAL_ON;
}

/* Families people bring whose layers are none of Tessel's kinds, refused with the
 * reason, before the generic "not supported" or "mixture-of-experts" refusal, which
 * would name their experts and not what is missing. */
static int refuse_known(const char *type, tsl_err_t *err)
{
    static const struct {
        const char *type, *why;
    } known[] = {
        {"qwen3_next",
         "Qwen3-Next's layers are Gated DeltaNet linear attention (linear_num_value_heads, "
         "linear_key_head_dim, linear_conv_kernel_dim) beside gated full attention "
         "(full_attention_interval); Tessel's hybrids interleave Mamba-2 mixers only "
         "(nemotron_h), and a DeltaNet layer priced as attention or Mamba would be wrong"},
    };
    for (size_t i = 0; type && i < sizeof known / sizeof known[0]; i++)
        if (strcmp(type, known[i].type) == 0)
            return tsl_err_set(err, "model_type \"%s\" is not supported: %s", type, known[i].why);
    return 0;
}

static int from_json(const json_t *root, const char *name, uint32_t seq, tsl_model_t *out,
                     tsl_err_t *err)
{
    if (!json_is_object(root))
        return tsl_err_set(err, "the top level is %s, not a JSON object", tsl_json_type_name(root));
    tsl_err_t unknown = {0};
    const hf_arch_t *a = detect(root, &unknown);
    const char *type = json_string_value(json_object_get(root, "model_type"));
    if (refuse_known(type, err) != 0 || refuse_moe(root, a ? a->model_type : type, err) != 0)
        return -1;
    if (a == NULL) {
        if (err != NULL)
            *err = unknown;
        return -1;
    }
    const char *t = a->model_type;
    /* Gemma 3's and Llama 4's multimodal configs keep the language model in
     * text_config; the vision tower and projector are not planned */
    const json_t *text = json_object_get(root, "text_config");
    bool gemma3 = strcmp(t, "gemma3") == 0 || strcmp(t, "gemma3_text") == 0;
    bool llama4 = strncmp(t, "llama4", 6) == 0;
    /* Mistral Small 3.1/3.2 (Mistral3ForConditionalGeneration): a mistral text
     * model in text_config beside a Pixtral vision tower, which is not planned */
    bool mistral3 = strcmp(t, "mistral3") == 0;
    reader_t r = {.root = ((gemma3 || llama4 || mistral3) && json_is_object(text)) ? text : root};
    tsl_arch_spec_t sp = {0};
    keys_t k;
    if (strcmp(t, "gpt2") == 0)
        read_gpt2(&r, &sp, &k);
    else if (strcmp(t, "bert") == 0 || strcmp(t, "roberta") == 0)
        read_bert(&r, &sp, &k, strcmp(t, "roberta") == 0);
    else if (strcmp(t, "t5") == 0)
        read_t5(&r, &sp, &k);
    else if (strcmp(t, "vit") == 0)
        read_vit(&r, &sp, &k);
    else if (strcmp(t, "gpt_neox") == 0)
        read_neox(&r, &sp, &k);
    else if (strcmp(t, "bloom") == 0)
        read_bloom(&r, &sp, &k);
    else if (strcmp(t, "falcon") == 0 || strcmp(t, "RefinedWebModel") == 0)
        read_falcon(&r, &sp, &k, false);
    else if (strcmp(t, "RefinedWeb") == 0)
        read_falcon(&r, &sp, &k, true);
    else if (strcmp(t, "gemma2") == 0 || gemma3)
        read_gemma(&r, &sp, &k, gemma3);
    else if (strcmp(t, "phi3") == 0)
        read_phi3(&r, &sp, &k);
    else if (strcmp(t, "olmo2") == 0)
        read_olmo2(&r, &sp, &k);
    else if (strcmp(t, "phi") == 0)
        read_phi(&r, &sp, &k);
    else if (strcmp(t, "gpt_oss") == 0)
        read_gpt_oss(&r, &sp, &k);
    else if (llama4)
        read_llama4(&r, &sp, &k);
    else if (strcmp(t, "nemotron_h") == 0)
        read_nemotron_h(&r, &sp, &k);
    else
        read_llama(&r, &sp, &k, mistral3 ? "mistral" : t);
    if (strcmp(t, "mixtral") == 0)
        read_mixtral(&r, &sp);
    else if (strcmp(t, "qwen2_moe") == 0 || strcmp(t, "qwen3_moe") == 0)
        read_qwen_moe(&r, &sp, strcmp(t, "qwen2_moe") == 0);
    else if (strncmp(t, "deepseek_v", 10) == 0 || strcmp(t, "kimi_k2") == 0)
        read_deepseek(&r, &sp, strcmp(t, "deepseek_v2") != 0);
    else if (strcmp(t, "glm4_moe") == 0)
        read_glm4_moe(&r, &sp);
    read_causal(&r, &sp);
    tsl_model_rope_t rope = {0};
    double eps = 0.0;
    read_rope(&r, &rope, &eps);
    uint32_t window = sp.seq_len, train = 0;
    if (seq == 0 && (sp.arch == TSL_ARCH_LLAMA || sp.arch == TSL_ARCH_NEOX)) {
        train = training_length(&r, &rope);
        if (train > sp.seq_len)
            train = sp.seq_len; /* a window shorter than the training length: the window */
        if (train)
            sp.seq_len = train;
        else if (sp.seq_len > DEFAULT_SEQ_CAP)
            sp.seq_len = DEFAULT_SEQ_CAP;
    }
    if (check_spec(&r, &sp, &k, err) != 0 || apply_override(&sp, &k, seq, err) != 0)
        return tsl_err_prefix(err, "model_type %s", t);
    char dflt[TSL_NAME_MAX];
    default_name(root, t, dflt, sizeof(dflt));
    const char *use = (name && *name) ? name : dflt;
    const char *from = (name && *name) ? "the file's or directory's name"
                       : json_string_value(json_object_get(root, "_name_or_path")) ? "_name_or_path"
                                                                                   : "model_type";
    if (check_name(use, from, err) != 0 || tsl_model_build(&sp, use, out, err) != 0)
        return -1;
    out->max_context = window > out->tokens_per_sample ? window : 0;
    out->train_context = train;
    tsl_model_set_rope(out, &rope);
    out->norm_eps = eps;
    return 0;
}

int tsl_hf_config_parse(const char *json_text, const char *name, uint32_t seq_len_override,
                        tsl_model_t *out, tsl_err_t *err)
{
    if (out == NULL)
        return tsl_err_set(err, "hf config: NULL output model");
    tsl_model_init(out, "");
    /* messages start "hf config NAME:", or "hf config:" for an unnamed text */
    const char *label = name ? name : "", *sep = *label ? " " : "";
    if (json_text == NULL)
        return tsl_err_set(err, "hf config%s%.64s: no JSON text", sep, label);
    json_error_t je;
    json_t *root = json_loads(json_text, 0, &je);
    if (root == NULL)
        return tsl_err_set(err, "hf config%s%.64s: invalid JSON at line %d column %d: %s", sep,
                           label, je.line, je.column, je.text);
    int rc = from_json(root, name, seq_len_override, out, err);
    json_decref(root);
    if (rc != 0)
        tsl_err_prefix(err, "hf config%s%.64s", sep, label);
    return rc;
}

/* "models/gpt2/config.json" → "gpt2"; "data/bert.json" → "bert"; "config.json" → NULL. */
static const char *name_from_path(const char *path, char *buf, size_t len)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (strcmp(base, "config.json") == 0) {
        if (slash == NULL || slash == path)
            return NULL;
        const char *dir = slash;
        while (dir > path && dir[-1] != '/')
            dir--;
        snprintf(buf, len, "%.*s", (int)(slash - dir), dir);
        return buf[0] ? buf : NULL;
    }
    size_t n = strlen(base);
    if (n > 5 && strcmp(base + n - 5, ".json") == 0)
        n -= 5;
    snprintf(buf, len, "%.*s", (int)n, base);
    return buf[0] ? buf : NULL;
}

const char *tsl_hf_config_path_name(const char *path, char *buf, size_t len)
{
    return name_from_path(path, buf, len);
}

int tsl_hf_config_resolve(const char *arg, char *buf, size_t len, tsl_err_t *err)
{
    struct stat st;
    if (strcmp(arg, "-") == 0 || stat(arg, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(buf, len, "%s", arg); /* a file: its own errors come when it is read */
        return 0;
    }
    size_t n = strlen(arg);
    while (n > 1 && arg[n - 1] == '/')
        n--;
    if ((size_t)snprintf(buf, len, "%.*s/config.json", (int)n, arg) >= len)
        return tsl_err_set(err, "hf config: the path '%.64s...' is too long", arg);
    if (stat(buf, &st) != 0 || !S_ISREG(st.st_mode))
        return tsl_err_setc(err, TSL_E_NOTFOUND,
                            "%s: a directory without a config.json; give the model directory "
                            "that holds one, or the file itself",
                            arg);
    return 0;
}

int tsl_hf_config_load(const char *arg, uint32_t seq_len_override, tsl_model_t *out, tsl_err_t *err)
{
    return tsl_hf_config_load_as(arg, NULL, seq_len_override, out, err);
}

int tsl_hf_config_load_as(const char *arg, const char *as, uint32_t seq_len_override,
                          tsl_model_t *out, tsl_err_t *err)
{
    if (out == NULL)
        return tsl_err_set(err, "hf config: NULL output model");
    tsl_model_init(out, "");
    if (arg == NULL || *arg == '\0')
        return tsl_err_set(err, "hf config: no path given");
    char path[4096];
    if (tsl_hf_config_resolve(arg, path, sizeof path, err) != 0)
        return -1;
    bool in = strcmp(path, "-") == 0;
    json_error_t je;
    json_t *root = in ? json_loadf(stdin, 0, &je) : json_load_file(path, 0, &je);
    if (in)
        snprintf(path, sizeof path, "standard input"); /* for messages */
    if (root == NULL && je.line < 0)                   /* could not open or read it */
        return tsl_err_set(err, "%s: cannot read: %s", path, je.text);
    if (root == NULL)
        return tsl_err_set(err, "%s:%d:%d: invalid JSON: %s", path, je.line, je.column, je.text);
    char buf[TSL_NAME_MAX];
    const char *name = as ? as : in ? NULL : name_from_path(path, buf, sizeof(buf));
    int rc = from_json(root, name, seq_len_override, out, err);
    json_decref(root);
    if (rc != 0)
        tsl_err_prefix(err, "%s", path);
    return rc;
}

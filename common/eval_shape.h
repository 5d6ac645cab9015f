/*
 * eval_shape.h — the model shape a Megatron-LM argument line states
 * (--hidden-size, --num-experts, ...), checked against the model `tesselctl eval`
 * prices (--model / --hf-config), so that a line written for another model is
 * refused naming the flag instead of being priced as this one.
 *
 * What Megatron-LM builds is checked: the value the line gives, or, for a flag it
 * leaves out, Megatron-LM's default (the message says "(Megatron's default, not in
 * the line)"). Defaults are checked only on a line that states the model, i.e.
 * gives --hidden-size and --num-attention-heads (which Megatron-LM requires); a
 * line of parallel settings alone is checked for what it gives (and for
 * --moe-ffn-hidden-size, which takes a given --ffn-hidden-size's). The defaults and
 * their post-processing are Megatron-LM's at d98e8a6 (megatron/training/
 * arguments.py _add_network_size_args, _add_moe_args, _add_mla_args,
 * validate_args; argument_utils.py core_transformer_config_from_args;
 * core/transformer/transformer_config.py; core/ssm/mamba_mixer.py for the Mamba
 * heads): --ffn-hidden-size 4·h (--swiglu: int(8h/3/64)·64), --kv-channels h/a,
 * --num-query-groups a (1 with --group-query-attention), no experts, top-2, the
 * experts' width --ffn-hidden-size's, no shared expert, no latent, no MLA (with it
 * ranks none/32, heads 128/64/128), LayerNorm, learned positions, biases, tied
 * output, no gated FFN, no Mamba layers (with --hybrid-layer-pattern: state 128,
 * head 64, 8 groups, 2h/head heads). The form beyond the shape, given or at the
 * default, against the model (model.h tsl_model_t's qk_norm, attn_sinks, relu2,
 * rope, norm_eps; the layers' no_dropout and router_*): --qk-layernorm /
 * --qk-l2-norm (off), --softmax-type (vanilla), --squared-relu (off: GeLU),
 * --attention-dropout / --hidden-dropout (0.1; 0 for a model without dropout),
 * --norm-epsilon (1e-5) and --rotary-base (10000) where the model's source states
 * them, --use-rope-scaling (off) and --rope-scaling-factor (8) where it states its
 * RoPE, under MLA --rope-type (yarn) with --rotary-scaling-factor (1), --mscale (1)
 * and --mscale-all-dim (0) where it states its RoPE; YaRN elsewhere (gpt-oss)
 * --position-embedding-type yarn with those three, --yarn-original-max-position-
 * embeddings (4096), --yarn-beta-fast (32), --yarn-beta-slow (1) and
 * --[no-]yarn-correction-range-round-to-int (rounded); the FFN's activation
 * --swiglu or --quick-geglu with --glu-linear-offset (0) and
 * --activation-func-clamp-value (none: gpt-oss's clamped GLU has 1 and 7); the
 * sliding window --window-size (none) and --window-attn-skip-freq (every layer:
 * transformer/utils.py is_layer_window_attention, by 1-based layer number),
 * --moe-router-score-function (softmax), --moe-router-pre-softmax (off: the
 * top k renormalised), --moe-router-enable-expert-bias (off),
 * --moe-router-topk-scaling-factor (none), --moe-router-num-groups /
 * --moe-router-group-topk (none), --moe-shared-expert-gate (off). The model's
 * values are as the Megatron exporter (export_megatron.c) writes them for it.
 */
#ifndef TSL_EVAL_SHAPE_H
#define TSL_EVAL_SHAPE_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "model.h"

typedef enum tsl_eval_shape_key {
    TSL_EVAL_SHAPE_HIDDEN = 0,        /* --hidden-size */
    TSL_EVAL_SHAPE_FFN,               /* --ffn-hidden-size */
    TSL_EVAL_SHAPE_HEADS,             /* --num-attention-heads */
    TSL_EVAL_SHAPE_QUERY_GROUPS,      /* --num-query-groups (read with --group-query-attention) */
    TSL_EVAL_SHAPE_KV_CHANNELS,       /* --kv-channels */
    TSL_EVAL_SHAPE_MAX_POS,           /* --max-position-embeddings */
    TSL_EVAL_SHAPE_VOCAB,             /* --vocab-size (before Megatron's padding) */
    TSL_EVAL_SHAPE_EXPERTS,           /* --num-experts */
    TSL_EVAL_SHAPE_TOPK,              /* --moe-router-topk */
    TSL_EVAL_SHAPE_MOE_FFN,           /* --moe-ffn-hidden-size */
    TSL_EVAL_SHAPE_SHARED_FFN,        /* --moe-shared-expert-intermediate-size */
    TSL_EVAL_SHAPE_MOE_LATENT,        /* --moe-latent-size */
    TSL_EVAL_SHAPE_Q_LORA,            /* --q-lora-rank */
    TSL_EVAL_SHAPE_KV_LORA,           /* --kv-lora-rank */
    TSL_EVAL_SHAPE_QK_HEAD,           /* --qk-head-dim */
    TSL_EVAL_SHAPE_QK_POS,            /* --qk-pos-emb-head-dim */
    TSL_EVAL_SHAPE_V_HEAD,            /* --v-head-dim */
    TSL_EVAL_SHAPE_ROTARY_BASE,       /* --rotary-base (an int) */
    TSL_EVAL_SHAPE_ROUTER_GROUPS,     /* --moe-router-num-groups */
    TSL_EVAL_SHAPE_ROUTER_GROUP_TOPK, /* --moe-router-group-topk */
    TSL_EVAL_SHAPE_MAMBA_STATE,       /* --mamba-state-dim */
    TSL_EVAL_SHAPE_MAMBA_HEAD,        /* --mamba-head-dim */
    TSL_EVAL_SHAPE_MAMBA_GROUPS,      /* --mamba-num-groups */
    TSL_EVAL_SHAPE_MAMBA_HEADS,       /* --mamba-num-heads */
    TSL_EVAL_SHAPE_YARN_ORIG,         /* --yarn-original-max-position-embeddings (4096) */
    TSL_EVAL_SHAPE_COUNT
} tsl_eval_shape_key_t;

/* The real-valued flags of the model's form, with Megatron-LM's defaults
 * (eval_shape.c): --norm-epsilon 1e-5, --attention-dropout / --hidden-dropout 0.1,
 * --rope-scaling-factor 8 (with --use-rope-scaling), --moe-router-topk-scaling-factor
 * none (1). */
typedef enum tsl_eval_shape_real {
    TSL_EVAL_SHAPE_NORM_EPS = 0,
    TSL_EVAL_SHAPE_ATTN_DROPOUT,
    TSL_EVAL_SHAPE_HIDDEN_DROPOUT,
    TSL_EVAL_SHAPE_ROPE_FACTOR,
    TSL_EVAL_SHAPE_TOPK_SCALE,
    TSL_EVAL_SHAPE_ROTARY_SCALING, /* --rotary-scaling-factor: YaRN's under MLA (1) */
    TSL_EVAL_SHAPE_MSCALE,         /* --mscale (1) */
    TSL_EVAL_SHAPE_MSCALE_ALL_DIM, /* --mscale-all-dim (0) */
    TSL_EVAL_SHAPE_YARN_BETA_FAST, /* --yarn-beta-fast (32) */
    TSL_EVAL_SHAPE_YARN_BETA_SLOW, /* --yarn-beta-slow (1) */
    TSL_EVAL_SHAPE_GLU_OFFSET,     /* --glu-linear-offset (0) */
    TSL_EVAL_SHAPE_GLU_CLAMP,      /* --activation-func-clamp-value (none: 0) */
    TSL_EVAL_SHAPE_REAL_COUNT
} tsl_eval_shape_real_t;

typedef struct tsl_eval_shape {
    uint32_t v[TSL_EVAL_SHAPE_COUNT]; /* the line's values; 0: not given */
    bool gqa;                         /* --group-query-attention */
    bool mla;                         /* --multi-latent-attention */
    uint32_t vocab_divisor;           /* --make-vocab-size-divisible-by; 0: 128 */
    uint32_t padded_vocab;            /* --padded-vocab-size; 0: not given */
    /* the switches and named values of the model's form; all false/0: not given */
    bool swiglu, quick_geglu; /* --swiglu, --quick-geglu: a gated FFN */
    bool untie;               /* --untie-embeddings-and-output-weights */
    bool bias_set, bias;      /* --disable-bias-linear (bias false) / --add-bias-linear */
    bool qkv_bias;            /* --add-qkv-bias */
    bool rotary;              /* --use-rotary-position-embeddings (deprecated: rope) */
    uint8_t norm;             /* --normalization: 0 not given, 1 LayerNorm, 2 RMSNorm */
    uint8_t pos;              /* --position-embedding-type: 0 not given, 1 + its index in
                                 learned_absolute, rope, yarn, mrope, relative, none, alibi
                                 (Megatron-DeepSpeed's; its absolute and rotary read as 1, 2) */
    bool embed_ln;            /* --embed-layernorm (Megatron-DeepSpeed's, BLOOM) */
    bool hybrid;              /* --hybrid-layer-pattern given (eval_cfg.c reads it) */
    /* the attention's, FFN's and router's form beyond the shape (TransformerConfig) */
    double r[TSL_EVAL_SHAPE_REAL_COUNT]; /* the line's values where r_set */
    bool r_set[TSL_EVAL_SHAPE_REAL_COUNT];
    bool qk_ln, qk_l2; /* --qk-layernorm, --qk-l2-norm */
    bool relu2;        /* --squared-relu */
    bool rope_scaling; /* --use-rope-scaling */
    uint8_t rope_type; /* --rope-type: 0 not given (MLA: yarn), 1 rope, 2 yarn */
    uint8_t softmax;   /* --softmax-type: 0 not given, 1 vanilla, 2 off-by-one, 3 learnable */
    uint8_t score;     /* --moe-router-score-function: 0 not given, 1 softmax, 2 sigmoid,
                             3 sqrtsoftplus */
    bool pre_softmax;  /* --moe-router-pre-softmax */
    bool expert_bias;  /* --moe-router-enable-expert-bias */
    bool shared_gate;  /* --moe-shared-expert-gate */
    /* YaRN's --[no-]yarn-correction-range-round-to-int (round_set: given; Megatron
     * rounds unless told) */
    bool yarn_round_set, yarn_round;
    /* the sliding window: --window-size LEFT,RIGHT (window_set), and
     * --window-attn-skip-freq, an int N (window_every) or a 0/1 list of window_len
     * layers (1: windowed) that the caller parses into window_pattern */
    bool window_set;
    int32_t window_left, window_right;
    uint32_t window_every, window_len;
    uint8_t window_pattern[TSL_MODEL_MAX_LAYERS];
    bool no_dropout; /* set by the caller: the request prices the model without
                             dropout (eval --no-dropout), whatever its layers say */
} tsl_eval_shape_t;

/* Reads "--key val" into sh when key is a shape flag (0); 1 when it is not one;
 * -1 with err naming the flag for a bad value (a count must be a positive
 * integer; a switch takes no value; --normalization and --position-embedding-type
 * one of Megatron-LM's choices). */
int tsl_eval_shape_read(const char *key, const char *val, tsl_eval_shape_t *sh, tsl_err_t *err);

/* Whether the line states the model (gives --hidden-size and --num-attention-heads,
 * which Megatron-LM requires): then the flags it leaves out take their defaults. */
bool tsl_eval_shape_states_model(const tsl_eval_shape_t *sh);

/* Checks sh against m, whose Transformer layers run tp-way tensor parallel (the
 * vocabulary's padding): 0, or -1 with err naming the first flag that differs,
 * the line's value (or Megatron-LM's default, said so) and the model's. */
int tsl_eval_shape_check(const tsl_eval_shape_t *sh, const tsl_model_t *m, uint32_t tp,
                         tsl_err_t *err);

#endif

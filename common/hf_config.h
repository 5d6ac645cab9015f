/*
 * hf_config.h — a Tessel model from a HuggingFace transformers config.json.
 *
 * Supported model_type values (docs/models.md lists the keys read for each):
 *   gpt2                 n_layer, n_embd, n_head, n_positions (or n_ctx), vocab_size;
 *                        n_inner (null or absent: 4·n_embd), tie_word_embeddings;
 *                        activation_function "gelu_new" (named: transformers' GPT2Block,
 *                        hf_gpt2_eager), scale_attn_by_inverse_layer_idx (with it:
 *                        layer_scale), reorder_and_upcast_attn (type only)
 *   bert, roberta        num_hidden_layers, hidden_size, num_attention_heads,
 *                        intermediate_size, max_position_embeddings, vocab_size;
 *                        type_vocab_size (default 2)
 *   t5                   num_layers, d_model, d_ff, num_heads, d_kv, vocab_size;
 *                        num_decoder_layers (default num_layers), feed_forward_proj
 *                        ("gated-*" gives a gated FFN), relative_attention_num_buckets
 *                        (default 32), tie_word_embeddings (default true)
 *   vit                  image_size, patch_size, hidden_size, num_hidden_layers,
 *                        intermediate_size, num_attention_heads; num_channels
 *                        (default 3); classes from id2label, else num_labels, else 1000
 *   llama, mistral,      hidden_size, intermediate_size, num_hidden_layers,
 *   qwen2                num_attention_heads, vocab_size, max_position_embeddings;
 *                        num_key_value_heads (default heads), head_dim,
 *                        tie_word_embeddings (default false), sliding_window
 *                        (mistral; qwen2 when use_sliding_window is true)
 *   qwen3                as llama; Q/K norms per head, attention_bias, use_sliding_window
 *   gemma2, gemma3,      hidden_size, intermediate_size, num_hidden_layers,
 *   gemma3_text          num_attention_heads (gemma3: from text_config when present);
 *                        head_dim (256), vocab_size, max_position_embeddings,
 *                        sliding_window, layer_types or sliding_window_pattern,
 *                        attn_/final_logit_softcapping (defaults: docs/models.md)
 *   phi3                 as llama; sliding_window (Phi-3, Phi-3.5, Phi-4)
 *   olmo2                as llama; Q/K norms over the whole projection
 *   bloom                n_layer (or num_hidden_layers), hidden_size (or n_embed), n_head
 *                        (or num_attention_heads), vocab_size; ALiBi (no position table),
 *                        an embedding LayerNorm, FFN 4·h, tied head; seq_length (default
 *                        2048, BLOOM's training length; no table limits an override)
 *   gpt_neox, falcon,    docs/models.md; RefinedWebModel / RefinedWeb are Falcon's
 *   phi, RefinedWeb*     legacy configs (Falcon-7B / Falcon-40B), read as falcon
 *   mixtral, qwen2_moe,  mixture of experts (docs/models.md "Mixture of experts")
 *   qwen3_moe,
 *   deepseek_v2/v3
 *   gpt_oss              as llama; num_local_experts, num_experts_per_tok (or
 *                        experts_per_token); biases, sinks, sliding_window on the
 *                        layer_types' sliding layers (docs/models.md)
 *   llama4, llama4_text  from text_config when present (the vision tower is not
 *                        planned); num_local_experts, intermediate_size_mlp,
 *                        interleave_moe_layer_step or moe_layers, no_rope_layers,
 *                        attention_chunk_size, use_qk_norm (docs/models.md)
 *   nemotron_h           a hybrid (Nemotron-H, Nemotron 3): hybrid_override_pattern or
 *                        layers_block_type (M Mamba-2, * attention, - MLP, E MoE),
 *                        mamba_num_heads, mamba_head_dim, ssm_state_size, n_groups,
 *                        conv_kernel, chunk_size and the MoE keys; MTP and latent MoE
 *                        refused (docs/models.md "Hybrid models")
 * Every type also reads "causal" (Tessel's own key, true or false): whether
 * self-attention is causal (model.h). Absent, the family decides: gpt2, bloom, llama,
 * mistral, qwen2, gpt_neox, falcon, phi and t5's decoder are causal; bert and
 * roberta are when "is_decoder" is true (BertLMHeadModel); vit never.
 * The architecture comes from "model_type", or failing that from the first entry
 * of "architectures" (GPT2LMHeadModel, BertForMaskedLM, LlamaForCausalLM, ...).
 *
 * Sequence length: seq_len_override when non-zero, otherwise the longest the
 * config allows: n_positions (gpt2), max_position_embeddings (bert; roberta
 * minus its 2 padding positions; llama family: the training length the config
 * records in original_max_position_embeddings (top level or rope_scaling), which
 * tsl_model_t.train_context then repeats, else at most 4096), 512 for t5 (its config has no
 * length; the override sets both encoder and decoder), (image/patch)² + 1 for
 * vit (the override is then the token count, class token included). A model
 * with learned positions refuses an override longer than its table.
 *
 * Name: the name argument when non-empty; otherwise the last path component of
 * "_name_or_path" when the config has one, otherwise model_type. _load passes
 * the file's name without ".json", or the directory's name for a file called
 * config.json (models/gpt2/config.json → "gpt2").
 *
 * Errors name what is wrong: the file and jansson's line:column for unreadable
 * or invalid JSON; the model_type and the supported list for an unknown
 * architecture; every missing key at once; the key for a value of the wrong type
 * or out of range. On failure *out is an empty model (tsl_model_free is safe);
 * on success the caller owns it.
 */
#ifndef TSL_HF_CONFIG_H
#define TSL_HF_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "model.h"

/* path: a config.json, a model directory holding one (DIR/config.json), or "-"
 * for standard input (the model is then named by _name_or_path or model_type). A
 * name so derived that holds a quote or a control character (it would end the
 * exports' comment lines and strings) fails naming where it came from. */
int tsl_hf_config_load(const char *path, uint32_t seq_len_override, tsl_model_t *out,
                       tsl_err_t *err);
/* tsl_hf_config_load, the model named name where it is not NULL (tesselctl's
 * --name, checked by the caller) instead of a name derived from the file. */
int tsl_hf_config_load_as(const char *path, const char *name, uint32_t seq_len_override,
                          tsl_model_t *out, tsl_err_t *err);

/* The file tsl_hf_config_load reads for arg, into buf: DIR/config.json for a
 * directory (TSL_E_NOTFOUND when it has none, saying so), else arg itself
 * ("-" included). For the client, which sends the file's text to tesseld. */
int tsl_hf_config_resolve(const char *arg, char *buf, size_t len, tsl_err_t *err);

int tsl_hf_config_parse(const char *json_text, const char *name, uint32_t seq_len_override,
                        tsl_model_t *out, tsl_err_t *err);

/* The model name tsl_hf_config_load gives a config read from path
 * ("models/gpt2/config.json" → "gpt2", "data/bert.json" → "bert"), into buf; NULL
 * when the path names none (a bare "config.json": then _name_or_path or the
 * model_type names it). */
const char *tsl_hf_config_path_name(const char *path, char *buf, size_t len);

/* "gpt2, bert, roberta, ..., RefinedWeb, RefinedWebModel": the model_type values read */
const char *tsl_hf_config_supported(void);

#endif

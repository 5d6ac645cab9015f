/*
 * model.h — what is being trained: an ordered list of layers and their shapes.
 *
 * A model is a sequence of layers. Each layer carries its shape (sequence length,
 * hidden size, FFN size, heads, vocabulary) and the figures derived from it by
 * tsl_layer_derive(). Everything the cost model needs about a layer is here; the
 * cost model never looks at the kind except through these numbers.
 *
 * Units: parameters are counts, FLOPs are floating-point operations for ONE sample
 * (one sequence), activation sizes are bytes for ONE sample in the activation dtype
 * (fp16/bf16, 2 bytes) as training with mixed precision keeps them.
 *
 * Formulas (s = seq_len, h = hidden, f = ffn_hidden, a = heads, d = attention
 * inner width = heads * head_dim, normally h; V = vocab; t = s_cross, the
 * encoder length a decoder attends to; g = 1 for plain FFN, 2 for gated FFN):
 *
 *   parameters
 *     self-attention   4·h·d + 3·d + h       (Q,K,V,O weights + biases)
 *     cross-attention  4·h·d + 3·d + h
 *     FFN              (g+1)·h·f + g·f + h   (up[,gate],down weights + biases)
 *     layer norm       2·h each (encoder: 2, decoder: 3)
 *     embedding        V·h + P·h             (P = learned positions, 0 for RoPE)
 *     patch embedding  c·p²·h + h            (ViT/Swin; stored as vocab = c·p²)
 *     head             V·h when untied, else 0 (weights shared with the embedding;
 *                      cost.h prices a copy where the head is in a later stage)
 *
 *   forward FLOPs per sample (2 FLOPs per multiply-add; Megatron-LM, Narayanan 2021)
 *     self-attention   8·s·h·d + 4·s²·d      (projections + QKᵀ + AV)
 *     cross-attention  4·s·h·d + 4·t·h·d + 4·s·t·d
 *     FFN              2·(g+1)·s·h·f
 *     head             2·s·h·V
 *     embedding        0 (a lookup)
 *   backward = 2 × forward (two GEMMs per forward GEMM), documented in cost.h.
 *
 *   activations per sample, bytes, fp16 (Korthikanti et al. 2022, "Reducing
 *   activation recomputation", Sec. 4.1, generalised to f ≠ 4h and d ≠ h):
 *     self-attention block  2·s·h (LN in) + 2·s·h (QKV in) + 4·s·d (Q,K) + 2·s·d (V)
 *                           + 2·a·s² (softmax) + a·s² (dropout mask) + 2·a·s² (dropout out)
 *                           + 2·s·d (proj in) + s·h (dropout mask)
 *     FFN block             2·s·h (LN in) + 2·s·h (fc1 in) + 2·g·s·f (fc1 out)
 *                           + 2·s·f (act out) + s·h (dropout mask)
 *     For f = 4h, d = h this is the paper's 34·s·h + 5·a·s².
 *   Under tensor parallelism of degree k (no sequence parallelism), the parts that
 *   depend on d, f and a are split k ways, the rest (LN inputs, block inputs,
 *   dropout masks on h) is replicated: act(k) = act_repl + act_shard / k.
 *   The boundary activation (the layer's input kept when the layer is
 *   checkpointed) is 2·s·h.
 *
 * Extensions (fields added after the original contract; all default to 0/false,
 * which gives exactly the formulas above; docs/models.md has the full table):
 *   kv_heads      grouped-query attention: K and V have width e = kv_heads·d/a, so
 *                 self-attention params 2·h·d + 2·h·e (+ d + 2·e + h biases), FLOPs
 *                 4·s·h·d + 4·s·h·e + 4·s²·d, stash 4·s·d + 4·s·e instead of 8·s·d.
 *   attn_window   windowed attention (Swin, TransGAN, sliding window): each query
 *                 sees w = min(attn_window, s) keys, so every s² above becomes s·w
 *                 (s/w windows of w² scores each) — except an unfused causal
 *                 (sliding) window's score stash, which keeps all s² (masked).
 *   attn_chunked  with attn_window: the window is a chunk (Llama 4's chunked
 *                 attention): the sequence is cut into s/w blocks of w tokens and
 *                 each attends within its block. Every count above is the sliding
 *                 window's (s·w scores: s/w blocks of w²; an unfused causal one keeps
 *                 all s², masked); only the keys a fused causal kernel visits differ:
 *                 (w + 1)/2 per query instead of about w (tsl_attn_chunk_keys).
 *   no_bias       linear layers without biases (T5, Llama): drop the bias terms.
 *   rms_norm      norms with a scale only: h parameters per norm instead of 2·h.
 *   patch_embed   the embedding is a linear projection of c·p² pixel values
 *                 (vocab = c·p²): params c·p²·h + h, FLOPs 2·s·c·p²·h.
 *   head_tokens   tokens the head projects (0 = all s, an LM head; 1 = a
 *                 classifier on the class or pooled token): FLOPs 2·n·h·V.
 *   extra_*       added verbatim to params / fwd_flops / act_repl_bytes, for what
 *                 the formulas leave out: final norms, BERT's token-type table and
 *                 MLM transform, relative-position tables, Swin patch merging, ...
 *   cross-attention stash: 5·s·h replicated; 2·s·d (Q) + 4·t·e (K,V) + 2·s·d
 *                 (proj in) + 5·a·s·t sharded. The encoder output the K/V
 *                 projections read is shared by all decoder layers and not charged.
 *   alibi         ALiBi instead of positions (BLOOM): changes no count above.
 *   embed_norm    embedding LayerNorm (BLOOM): 2·h parameters, 2·s·h stash (its input).
 *   embedding     stash s·h (dropout mask), plus 2·s·V (the input pixels) for a
 *                 patch embedding; input (boundary) 8·s bytes of int64 token ids,
 *                 or 2·s·V pixel bytes for a patch embedding.
 *   head          stash 2·s·h (its input) replicated + 4·n·V (fp32 logits for the
 *                 loss) sharded (vocab-parallel); boundary 2·s·h.
 *   tp_allreduces encoder 2, decoder 3, attention or FFN block 1; a token
 *                 embedding 1 (the vocab-parallel lookup all-reduces its s·h output
 *                 in forward; the cost model's mirrored backward charge stands for
 *                 the LM head's input-gradient all-reduce, so the pair is counted
 *                 once, on the embedding); patch embedding 0 (replicated); head 0
 *                 (vocab-parallel cross-entropy reduces only s-sized scalars).
 *
 * Mixture of experts (experts > 0; an encoder-kind or FFN layer; docs/models.md).
 * ffn_hidden is then ONE routed expert's width f (HF moe_intermediate_size, or
 * Mixtral's intermediate_size); E = experts, k = experts_per_tok, S =
 * shared_experts, f_s = shared_ffn_hidden (0: f), p_e = (g+1)·h·f (+ g·f + h
 * biases) one expert's parameters, p_s the same at f_s:
 *     params          E·p_e + S·p_s + h·E (router, no bias) + norm
 *     active_params   params − (E − k)·p_e: what one token's forward touches
 *                     (top-k routed + shared + router + the rest of the layer)
 *     FLOPs           k·2·(g+1)·s·h·f + S·2·(g+1)·s·h·f_s + 2·s·h·E (router)
 *     stash, repl     5·s·h as a dense FFN (4·s·h without dropout)
 *                     + k·2·s·h (each token's k dispatched copies of its input)
 *                     + 4·s·E (fp32 router probabilities)
 *     stash, shard    k·(2·g·s·f + 2·s·f) (the routed tokens' fc1/act outputs:
 *                     top-k copies of a token's FFN activations)
 *                     + S·(2·g·s·f_s + 2·s·f_s)
 *     tp_allreduces   1, as a dense FFN.
 *   Routing (the fields router_*; what a trial runs, priced alike): scores s =
 *   softmax over the E logits (router_score SOFTMAX, the default) or a sigmoid per
 *   expert (SIGMOID, DeepSeek-V3); a token's k experts are those of the largest
 *   s + b, b = 0, or a per-expert score-correction bias (router_bias CHOICE,
 *   DeepSeek-V3's noaux_tc: E parameters that choose but never weigh), within the
 *   best router_topk_groups of router_groups equal groups of experts when
 *   router_groups > 1 (a group scored by its best s + b, or with a CHOICE bias its
 *   two best summed: DeepSeek-V2's group_limited_greedy, V3's noaux_tc); their
 *   weights s, divided by their sum when router_norm (norm_topk_prob; Mixtral,
 *   Qwen3-MoE, DeepSeek-V3), times router_scale (routed_scaling_factor). A LOGIT
 *   bias is a linear bias on the logits (gpt-oss). shared_expert_gate: the shared
 *   experts' output times sigmoid(x·w_g) per token (Qwen2-MoE). The bias and the
 *   gate are in extra_params.
 *   These are the figures of expert parallelism 1 (every rank holds every expert;
 *   no all-to-all); an even, capacity-free routing is assumed (each expert sees
 *   k·s/E tokens on average). Dense models have experts = 0 and
 *   active_params = params. Layer-level extras (Qwen2-MoE's shared-expert gate,
 *   h; DeepSeek-V3's router correction bias, E) are in extra_params and count as
 *   active.
 *
 * Latent MoE (moe_latent = ℓ > 0, with experts; Nemotron 3 Super; Megatron-LM
 * moe_layer.py at 44151194: fc1_latent_proj / fc2_latent_proj, TELinear
 * "duplicated"): the router and the shared experts read h as above; the routed
 * experts run on ℓ: fc1_latent (h × ℓ) projects the tokens down before the
 * dispatch, each expert is ℓ → f → ℓ, fc2_latent (ℓ × h) projects the combined
 * output back. With p_e = (g+1)·ℓ·f (+ g·f + ℓ biases) one expert's:
 *     params          E·p_e + S·p_s + h·E + norm + 2·h·ℓ (+ ℓ + h biases)
 *     FLOPs           k·2·(g+1)·s·ℓ·f + S·2·(g+1)·s·h·f_s + 2·s·h·E + 4·s·h·ℓ
 *     stash, repl     5·s·h (4 without dropout) + k·2·s·ℓ (the dispatched copies,
 *                     ℓ wide) + 4·s·E + 2·s·ℓ (fc2_latent's input); fc1_latent
 *                     reads the norm output the router keeps
 *     stash, shard    as above (k·(2·g·s·f + 2·s·f) + the shared experts')
 *   The dispatch and combine carry ℓ-wide rows (cost.h "Mixture of experts").
 *   The two projections are replicated over TP: on the rank's s/t tokens under
 *   SP (roofline.h).
 *
 * Multi-head latent attention (kv_lora_rank > 0; DeepSeek-V2/V3; DeepSeek-V2
 * paper, Sec. 2.1). a = heads, r = qk_rope_dim, n = qk_nope_dim, v = v_head_dim,
 * q = q_lora_rank (0: a full h × a·(n+r) query projection), c = kv_lora_rank;
 * attn_dim and kv_heads are ignored; no biases (no_bias must be set); the two
 * latent norms are RMSNorms (q and c parameters):
 *     params    [q ? h·q + q + q·a·(n+r) : h·a·(n+r)]        (query)
 *               + h·(c + r) + c + c·a·(n + v)                (KV down, norm, up)
 *               + a·v·h + norm                               (output)
 *     FLOPs     2·s·(the projection weights above) + 2·s·w·a·(n+r) + 2·s·w·a·v
 *     stash     repl: block 4·s·h (5·s·h with dropout) + 4·s·q + 4·s·c + 2·s·r
 *               (the latents' norm and up-projection inputs, the shared rope key);
 *               shard: 4·s·a·(n+r) (Q, K) + 4·s·a·v (V, proj in) + scores.
 *   The down projections are replicated under TP, the heads split (act_repl /
 *   act_shard as above).
 *
 * Mamba-2 mixer (kind TSL_LAYER_MAMBA; the ssm_* fields): a hybrid model's M block,
 * its parameters, FLOPs (the SSD scan's by Dao & Gu 2024, Sec. 6), stash and TP split
 * as mamba.h states them; tp_allreduces 1; no attention core (core_fwd_flops 0).
 *
 * Stash variants (Korthikanti et al. 2022, Sec. 4; docs/models.md, docs/cost-model.md):
 *   unfused_attn  false (the default) is fused/flash attention: the 5·a·s·w score
 *                 stash above is not kept (flash keeps only fp32 softmax statistics,
 *                 4·a·s bytes, left out as negligible). true keeps it, in
 *                 act_shard_bytes and again in act_score_bytes.
 *   no_dropout    drops the s·h dropout masks (one per block) and, unfused, the
 *                 dropout of the scores: 2·a·s·w (softmax output) instead of 5·a·s·w.
 *   causal        self-attention is causal (set by the families: GPT, Llama, NeoX and
 *                 T5's decoder; not BERT, ViT, Swin, TransGAN). Changes no count
 *                 above: the FLOPs keep the full s·w (the MFU convention); time
 *                 with a fused kernel uses tsl_attn_keys (roofline.c).
 *   transgan_eager  the block as AMP's fork writes TransGAN's generator
 *                 (trans_gan_gen.py ParallelTransformerBlock, PyTorch eager): pixel
 *                 norms and the erf GELU as chains of ATen kernels, a noise
 *                 injection before the QKV projection, the QKV bias added by a
 *                 kernel of its own, and, unfused, the scores scaled and biased by a
 *                 relative-position table in kernels of their own. Changes no count
 *                 above (their intermediates are not priced as memory); time only:
 *                 the kernels' bytes and host ops (roofline.h TSL_ROOFLINE_TRANSGAN_*).
 *   tp_repl_extra  the layer's extra_params are plain torch modules beside the
 *                 TP-parallel linears (nn.Linear, nn.Parameter), so every TP rank
 *                 holds, reduces over DP and steps them whole: AMP's fork's TransGAN
 *                 (trans_gan_gen.py ParallelTransGANGeneratorPipe: the latent
 *                 projection a LayerSpec(nn.Linear), PositionEmbedding's table and
 *                 ParallelTransGanAttention's relative-position table nn.Parameters).
 *                 Changes no count above; the TP rank's share (cost.c rank_params).
 *   hf_gpt2_eager  the block as transformers' GPT2Block writes it (modeling_gpt2.py,
 *                 transformers 4.24), run by a script under torch.autocast: the FFN's
 *                 NewGELUActivation (gelu_new) as a chain of eager ATen kernels, and,
 *                 unfused, GPT2Attention._attn's score kernels (a scale by a 0-d
 *                 tensor, torch.where over the causal buffer's slice; with
 *                 layer_scale a second division by the layer's index + 1). Changes no
 *                 count above; priced only under autocast (no other stack here runs
 *                 transformers' modules): the kernels' bytes and host ops, and the
 *                 chain's fp32 intermediates kept (roofline.h TSL_ROOFLINE_HF_GPT2_*).
 *   parallel_block  y = x + attn(LN(x)) + ffn(LN'(x)): the FFN's norm input is the
 *                 attention's (−2·s·h replicated) and TP all-reduces once per layer;
 *                 with shared_norm LN' = LN: no FFN norm and its output is the QKV
 *                 input (−2·s·h more, −norm parameters).
 *   Llama (no biases, RMSNorm, SwiGLU, no dropout) per sample, fused:
 *     8·s·h replicated + (4·s·d + 4·s·e + 6·s·f) sharded, e.g. Llama-2-7B
 *     (d = e = h, f = 11008 = 2.6875·h): s·h·(8 + 24.125/t).
 */
#ifndef TSL_MODEL_H
#define TSL_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define TSL_ACT_DTYPE_BYTES  2u /* fp16/bf16 activations */
#define TSL_MODEL_MAX_LAYERS 1024u
#define TSL_NAME_MAX         64

typedef enum tsl_layer_kind {
    TSL_LAYER_EMBEDDING = 0, /* token (+ position) embedding, or patch embedding */
    TSL_LAYER_ENCODER,       /* self-attention + FFN */
    TSL_LAYER_DECODER,       /* self-attention + cross-attention + FFN */
    TSL_LAYER_ATTENTION,     /* self-attention block alone (sub-layer partitioning) */
    TSL_LAYER_FFN,           /* FFN block alone (sub-layer partitioning) */
    TSL_LAYER_HEAD,          /* LM / classification head */
    TSL_LAYER_MAMBA,         /* Mamba-2 mixer with its pre-norm (hybrid models; mamba.h) */
    TSL_LAYER_MTP,           /* an MTP depth's entry: enorm, hnorm, eh_proj (mtp.h) */
    TSL_LAYER_KIND_COUNT
} tsl_layer_kind_t;

#define TSL_ROUTER_SOFTMAX     0u /* router_score: softmax over the E logits */
#define TSL_ROUTER_SIGMOID     1u /* router_score: a sigmoid per expert (DeepSeek-V3) */
#define TSL_ROUTER_BIAS_NONE   0u
#define TSL_ROUTER_BIAS_CHOICE 1u /* a score-correction bias, for the choice only (V3) */
#define TSL_ROUTER_BIAS_LOGIT  2u /* a linear bias on the logits (gpt-oss) */

typedef struct tsl_layer {
    /* shape: set by the caller */
    tsl_layer_kind_t kind;
    uint32_t seq_len;       /* s: tokens (or patches) per sample at this layer */
    uint32_t hidden;        /* h */
    uint32_t ffn_hidden;    /* f; 0 for layers without an FFN */
    uint32_t heads;         /* a */
    uint32_t attn_dim;      /* d = heads × head_dim; 0 means d = h */
    uint32_t cross_seq_len; /* t: encoder tokens a decoder attends to; 0 otherwise */
    uint32_t vocab;         /* V: embedding/head vocabulary, or c·p² for a patch embedding */
    uint32_t positions;     /* learned position embeddings (embedding layer), 0 for none */
    bool gated_ffn;         /* SwiGLU-style FFN (Llama): g = 2 */
    bool tied_head;         /* head shares the embedding's weights (no parameters) */
    /* shape extensions (see "Extensions" above); zero keeps the plain formulas */
    uint32_t kv_heads;        /* K/V heads for grouped-query attention; 0 means = heads */
    uint32_t attn_window;     /* keys per query under windowed attention; 0 means all s */
    bool attn_chunked;        /* attn_window is a chunk, not a sliding window (Llama 4) */
    uint32_t head_tokens;     /* head: tokens projected to V outputs; 0 means all s */
    bool patch_embed;         /* embedding is a patch projection; vocab = c·p² */
    bool no_bias;             /* linear layers have no biases (T5, Llama) */
    bool rms_norm;            /* norms have h parameters, not 2·h (T5, Llama) */
    uint64_t extra_params;    /* added to params (final norm, patch merging, ...) */
    double extra_fwd_flops;   /* added to fwd_flops, per sample */
    uint64_t extra_act_bytes; /* added to act_repl_bytes, per sample */
    /* shape flags (see "Stash variants" above); false keeps the GPT forms */
    bool no_dropout;     /* no dropout anywhere (Llama family): no masks, no dropped copies */
    bool unfused_attn;   /* attention keeps its s×w scores (no fused/flash kernel) */
    bool fp32_acts;      /* fp32 training (cost.h knobs.fp32): every 16-bit activation
                            figure at 4 bytes per element (stash, scores, boundary); the
                            dropout masks (1 byte), token ids (int64) and the head's fp32
                            logits keep theirs */
    bool transgan_eager; /* TransGAN's block as AMP's fork writes it (see above) */
    bool tp_repl_extra;  /* extra_params are plain torch modules beside the TP-parallel
                            linears, whole on every TP rank (see above) */
    bool hf_gpt2_eager;  /* transformers' GPT2Block as written, run eagerly (see above) */
    bool layer_scale;    /* with hf_gpt2_eager: the scores also divided by the layer's
                            index + 1 (scale_attn_by_inverse_layer_idx) */
    bool parallel_block; /* attention and FFN read the same input (GPT-J/NeoX/Falcon/Phi) */
    bool shared_norm;    /* with parallel_block: one norm feeds both (Falcon-7B, Phi) */
    bool causal;         /* self-attention is causal (decoder-only LMs, T5's decoder): a
                            fused kernel skips the masked keys (tsl_attn_keys); the
                            cross-attention of a decoder layer never is. false (the
                            default, hand-written layers): every key, as BERT/ViT */
    bool alibi;          /* ALiBi (Press et al. 2022): a per-head linear bias on the
                            self-attention scores instead of position embeddings
                            (BLOOM). No count changes; unfused, the bias enters the score
                            GEMM as torch.baddbmm's input (beta 1), priced in time only
                            (roofline.c core_s; docs/cost-model.md "ALiBi") */
    bool embed_norm;     /* embedding: a LayerNorm on the looked-up rows (BLOOM's
                            word_embeddings_layernorm, Megatron-DeepSpeed --embed-layernorm):
                            2·h parameters (h with rms_norm), its input kept (2·s·h) */
    bool eager_norm;     /* the block's norms are an eager chain of ATen kernels, whatever
                            the stack (HF T5's T5LayerNorm: pow, mean, rsqrt, two
                            multiplies, transformers 4.16.2 modeling_t5.py; Galvatron's
                            copy of it); with rms_norm. Time only (roofline.c
                            eager_norm_s; docs/cost-model.md "HF T5's block") */
    bool final_norm;     /* head: the model's final norm over its s·h input before the
                            projection (Megatron-core's final_layernorm, torchtitan's norm,
                            HF's ln_f / final_layer_norm, BERT's transform LayerNorm, ViT's
                            and Swin's layernorm), of the blocks' kind (rms_norm,
                            eager_norm); its parameters and kept input are extra_params and
                            extra_act_bytes. Time only (roofline.c final_norm_s; docs/
                            cost-model.md "The head's final norm") */
    bool ffn_dropout;    /* dropout on the FFN's inner activation (HF T5's
                            T5DenseReluDense: wi, act, dropout, wo): one more dropout
                            kernel over the f-wide activation, its mask (1 byte) and the
                            dropped copy (the wo GEMM's input) kept; none without dropout */
    bool glu_clamp;      /* the routed experts' gated activation clamps both halves of
                            FFN-in's output first (gpt-oss's swiglu_limit): elementwise
                            kernels of their own (docs/cost-model.md "Mixture of experts") */
    /* self-attention's RoPE as Megatron-LM runs YaRN with an attention factor other
     * than 1 (gpt-oss): TE's fused RoPE takes no mscale, so q and k go through the
     * eager _apply_rotary_pos_emb_bshd chain. Set by tsl_model_set_rope; time only
     * (roofline.h TSL_ROOFLINE_YARN_ROPE_*) */
    bool yarn_eager_rope;
    /* self-attention's QK-norm (TSL_QK_NORM_*, below; 0: none): a norm of each token's
     * queries and keys after the QKV projection, on the TP rank's heads. Its FLOPs
     * (4 per element) and its input, which the norm's backward keeps (2 bytes an
     * element, act_shard), are counted with the attention's; its parameters stay in
     * extra_params. The roofline prices its kernels (roofline.h "QK norms"); latent
     * attention normalises its latents instead and takes none */
    uint8_t qk_norm;
    /* mixture of experts (see "Mixture of experts" above); experts = 0: a dense FFN */
    uint32_t experts;           /* E routed experts; ffn_hidden is then one expert's width */
    uint32_t experts_per_tok;   /* k: experts each token is routed to (1..E) */
    uint32_t shared_experts;    /* S experts every token passes through */
    uint32_t shared_ffn_hidden; /* f_s, each shared expert's width; 0 means ffn_hidden */
    /* How the router weighs and chooses (see "Routing" above). Not priced: every
     * variant is the same h x E GEMM and per-token work on E scores; a trial runs it */
    uint8_t router_score;        /* TSL_ROUTER_SOFTMAX (0) or TSL_ROUTER_SIGMOID */
    uint8_t router_bias;         /* TSL_ROUTER_BIAS_NONE (0), _CHOICE or _LOGIT */
    bool router_norm;            /* the top-k weights divided by their sum (norm_topk_prob) */
    uint16_t router_groups;      /* n_group: group-limited choice; 0 or 1: none */
    uint16_t router_topk_groups; /* topk_group: the groups a token's experts come from */
    double router_scale;         /* routed_scaling_factor on the weights; 0 means 1 */
    bool shared_expert_gate;     /* sigmoid(x·w_g), w_g h x 1, scales the shared experts' output */
    /* latent MoE (see "Latent MoE" above): the routed experts' width in and out,
     * ℓ < h; 0: the experts take h */
    uint32_t moe_latent;
    /* multi-head latent attention (see above); kv_lora_rank = 0: ordinary attention */
    uint32_t q_lora_rank;  /* query latent width; 0 = a full query projection */
    uint32_t kv_lora_rank; /* compressed KV latent width c */
    uint32_t qk_nope_dim;  /* per-head query/key width without RoPE */
    uint32_t qk_rope_dim;  /* per-head query/key RoPE width (the key's is shared) */
    uint32_t v_head_dim;   /* per-head value width */
    /* Mamba-2 mixer (kind TSL_LAYER_MAMBA; mamba.h); zero on every other kind */
    uint32_t ssm_heads;    /* H: SSM heads (mamba_num_heads) */
    uint32_t ssm_head_dim; /* P: each head's width (mamba_head_dim); d_i = H·P */
    uint32_t ssm_state;    /* N: state size (ssm_state_size) */
    uint32_t ssm_groups;   /* G: B/C groups (n_groups) */
    uint32_t ssm_conv;     /* K: causal conv1d width (conv_kernel, 4) */
    uint32_t ssm_chunk;    /* Q: the SSD scan's chunk (chunk_size, 128) */
    /* multi-token prediction (mtp.h): the MTP depth this layer belongs to (0: the
     * main model), and whether its weights are another layer's of the same stage
     * (an MTP head's are the output head's, a repeated depth's the first depth's):
     * its parameters are counted, kept, synced and stepped there, never here; its
     * compute and activations are its own */
    uint8_t mtp_depth;
    bool shared_weights;
    /* the stack keeps this block's linears in bf16 under the plan's low-precision
     * recipe (Megatron-LM --first-last-layers-bf16: tsl_model_set_bf16_layers); the
     * cost model prices its GEMMs, weights and stashes as bf16 (cost.h) */
    bool bf16;

    /* derived by tsl_layer_derive() */
    uint64_t params;
    double fwd_flops;         /* per sample */
    uint64_t bnd_act_bytes;   /* per sample: the layer input, kept under CKPT */
    uint64_t act_repl_bytes;  /* per sample: stashed activations replicated under TP */
    uint64_t act_shard_bytes; /* per sample: stashed activations divided by the TP degree */
    uint32_t tp_allreduces;   /* all-reduces of s·h activations per forward under TP */
    uint64_t act_score_bytes; /* per sample: the s×w (unfused sliding: s×s) stash in act_shard_bytes
                                  (0 with fused attention); selective recompute drops it */
    double core_fwd_flops;    /* per sample: QKᵀ and AV, what selective recompute repeats */
    uint64_t active_params;   /* parameters one token's forward uses: params, less the
                                 experts it is not routed to (MoE) */
} tsl_layer_t;

/* What a stack needs to build the model that was planned but the costs never
 * read: RoPE and the norm epsilon (HuggingFace rope_theta, rope_scaling,
 * rms_norm_eps). Zero means "not given": the stack's default applies. */
#define TSL_ROPE_SCALING_NONE   0u
#define TSL_ROPE_SCALING_LLAMA3 1u /* rope_type "llama3" (Llama 3.1/3.2) */
#define TSL_ROPE_SCALING_OTHER  2u /* linear, dynamic, ...: no export writes it */
#define TSL_ROPE_SCALING_YARN   3u /* rope_type "yarn" (DeepSeek-V2/V3, gpt-oss) */

typedef struct tsl_model_rope {
    double base;                     /* rope_theta (Llama 3.x 500000, Qwen2.5 1e6) */
    uint8_t scaling;                 /* TSL_ROPE_SCALING_* */
    char scaling_type[16];           /* rope_type as given, for messages */
    double scaling_factor;           /* rope_scaling "factor" */
    double low_freq_factor;          /* rope_scaling low_freq_factor (Llama 3: 1) */
    double high_freq_factor;         /* rope_scaling high_freq_factor (Llama 3: 4) */
    uint32_t original_max_positions; /* rope_scaling original_max_position_embeddings */
    /* YaRN (rope_scaling beta_fast, beta_slow, mscale, mscale_all_dim), at
     * transformers' defaults 32, 1, 1, 0 where the config leaves them out */
    double beta_fast, beta_slow, mscale, mscale_all_dim;
    /* YaRN: rope_scaling "truncate": false (gpt-oss) keeps the correction range's
     * ends unrounded; transformers rounds them by default (Megatron-LM's
     * yarn_correction_range_round_to_int, True unless told) */
    bool yarn_no_truncate;
} tsl_model_rope_t;

typedef struct tsl_model {
    char name[TSL_NAME_MAX];
    uint32_t n_layers;
    tsl_layer_t *layers;        /* owned; n_layers entries */
    uint32_t tokens_per_sample; /* for tokens/s: the longest input sequence */
    uint32_t max_context;       /* the longer window the source allows when the model was
                              built at a shorter default sequence (hf_config.h); 0 = none */
    uint32_t train_context;     /* the sequence was defaulted to the training length the
                                   source records (original_max_position_embeddings,
                                   hf_config.h); 0 = not */
    tsl_model_rope_t rope;      /* RoPE as the source gives it (zeros: not given) */
    double norm_eps;            /* rms_norm_eps / layer_norm_eps; 0: not given */
    bool qkv_bias;              /* Q/K/V carry biases though the other linears have none (Qwen2;
                      counted in the layers' extra_params) */
    /* The attention's and FFN's form where no count shows it (the exports build the
     * model from it; model_presets.c sets it from the spec): QK-norm (TSL_QK_NORM_*,
     * on the RoPE layers), a learned sink logit per head (gpt-oss), and squared ReLU
     * as the non-gated FFN's activation (Nemotron-H's relu2; false: GeLU) */
    uint8_t qk_norm;
    bool attn_sinks;
    bool relu2;
    /* with the layers' glu_clamp: gpt-oss's gated activation, x·σ(1.702·x)·(y + 1) with
     * the gate x clamped from above and the linear half y both ways at this limit
     * (swiglu_limit, 7); 0 without glu_clamp */
    double glu_limit;
    /* Gemma's form, which no count shows: norms after attention and FFN as well
     * as before (sandwich_norm), soft-capped scores or logits (softcap), the
     * embedding scaled by sqrt(h) (embed_scale); the exports refuse what their
     * stack cannot build */
    bool sandwich_norm, softcap, embed_scale;
    bool hybrid; /* built from a hybrid pattern (tsl_arch_spec_t.hybrid): its attention,
                    FFN and Mamba blocks are each a layer, as Megatron-LM counts them */
} tsl_model_t;

/* Whether layer i of m is a Transformer layer as the stacks count them (what a
 * stack's uniform recompute covers, what Megatron's --num-layers counts): a whole
 * encoder or decoder layer, or one block of a hybrid model (M, *, - or E). Not the
 * embedding, the head, AutoPipe's attention/FFN halves of a split layer, nor the
 * layers of an MTP depth (mtp.h). */
bool tsl_model_is_block(const tsl_model_t *m, uint32_t i);

/* A hybrid block's character in its pattern (tsl_arch_spec_t.hybrid, Megatron-LM's
 * --hybrid-layer-pattern): M a Mamba-2 mixer, * attention, - a dense FFN, E an FFN
 * with experts; '?' for any other kind. */
char tsl_layer_hybrid_char(const tsl_layer_t *l);

/*
 * Keys per query, averaged over the s queries, that attention over s tokens with
 * a window of w keys (0 or w >= s: no window) must visit. Not causal: w (s/w
 * windows of w² scores each, or s without a window). Causal: query i (0-based)
 * sees keys max(0, i − w + 1) … i, min(i + 1, w) of them, so the sum is
 * Σ_{i<w} (i + 1) + (s − w)·w = w(w + 1)/2 + (s − w)·w = s·w − w(w − 1)/2 and
 * the mean w − w(w − 1)/(2s); without a window (w = s) that is (s + 1)/2. What a
 * fused (flash) kernel computes: it skips key tiles wholly above the diagonal
 * (its diagonal tiles run in full, ≈ B/2 keys more per query for tiles of B:
 * 64 of 2048 for B = 128, left out). An unfused attention computes all w and
 * masks them. FLOPs the model reports (fwd_flops, MFU) keep the full s·w
 * (Megatron-LM's convention); only time uses this.
 */
double tsl_attn_keys(uint32_t seq_len, uint32_t window, bool causal);

/*
 * The same for chunked attention (attn_chunked; Llama 4): the s tokens are cut
 * into chunks of w (the last one shorter when w does not divide s) and query i
 * sees the keys of its own chunk only. Not causal: each query sees its whole
 * chunk, so the mean is Σ c²/s over the chunk lengths c (w when w divides s).
 * Causal: query j of a chunk (0-based) sees j + 1 keys, c(c + 1)/2 per chunk, so
 * the mean is about (w + 1)/2 — where a sliding window of w keeps about w; with
 * w >= s both are (s + 1)/2. What a fused kernel visits; counted FLOPs keep s·w.
 */
double tsl_attn_chunk_keys(uint32_t seq_len, uint32_t chunk, bool causal);

/* Fills params, FLOPs and activation sizes of l from its shape (formulas above).
 * Returns -1 if the shape is invalid (zero hidden size, FFN without size, ...). */
int tsl_layer_derive(tsl_layer_t *l, tsl_err_t *err);

/*
 * The layer's integer shape and derived fields in a fixed order (its FLOPs,
 * fwd_flops and extra_fwd_flops, are the only other fields that matter). Two
 * layers with equal keys and equal FLOPs cost the same everywhere; the search
 * groups layers by it and the plan fingerprint hashes it. Returns the length:
 * 30 for a layer without experts, latent attention or chunked attention (the key
 * it always had, so dense fingerprints are unchanged), 39 with the MoE and MLA
 * shape appended, 40 with attn_chunked after those (so MoE keys are unchanged),
 * 42 with the kernel-level flags, 48 for a Mamba layer (its ssm_* shape last), 51
 * with latent MoE or multi-token prediction (moe_latent, mtp_depth, shared_weights),
 * 52 with bf16, 53 with ALiBi or an embedding LayerNorm (BLOOM).
 */
#define TSL_LAYER_KEY_LEN 55 /* 30 for a dense layer without MLA, which keeps its old key */
uint32_t tsl_layer_key(const tsl_layer_t *l, uint64_t key[TSL_LAYER_KEY_LEN]);

/* Short lowercase name of a kind: "embedding", "encoder", ... */
const char *tsl_layer_kind_name(tsl_layer_kind_t kind);

/* Whether a layer of this kind holds a self-attention block (encoder, decoder,
 * attention) or an FFN block (encoder, decoder, ffn): the blocks every cost and
 * memory term is split into. A decoder's cross-attention is not counted. */
bool tsl_layer_has_attention(const tsl_layer_t *l);
bool tsl_layer_has_ffn(const tsl_layer_t *l);

/* Whether a layer is of the model's body: not the embedding, the head or an MTP depth's
 * entry, which stand at its ends (the EP overlap's merged step runs them alone; the
 * search's re-balancing does not weigh them as a stage's kind of block). */
bool tsl_layer_is_body(const tsl_layer_t *l);

/* Builder: init an empty model, append layers (derived on append), free.
 * tsl_model_add copies l, derives the copy and appends it; it fails (and leaves m
 * unchanged) on an invalid shape, on running out of memory, or when m would
 * exceed TSL_MODEL_MAX_LAYERS. tokens_per_sample follows the longest seq_len.
 * tsl_model_free releases the layers and leaves an empty model; it may be called
 * twice. Names longer than TSL_NAME_MAX - 1 bytes are cut. */
void tsl_model_init(tsl_model_t *m, const char *name);
int tsl_model_add(tsl_model_t *m, const tsl_layer_t *l, tsl_err_t *err);
int tsl_model_add_n(tsl_model_t *m, const tsl_layer_t *l, uint32_t count, tsl_err_t *err);
void tsl_model_free(tsl_model_t *m);

/* Deep copy. dst is overwritten, not freed: pass an empty or freed model. On
 * failure dst is left empty (tsl_model_free on it is safe). */
int tsl_model_copy(tsl_model_t *dst, const tsl_model_t *src, tsl_err_t *err);

/* Totals over the layers. */
uint64_t tsl_model_params(const tsl_model_t *m);
double tsl_model_fwd_flops(const tsl_model_t *m);       /* per sample */
uint64_t tsl_model_act_bytes(const tsl_model_t *m);     /* per sample, TP = 1 */
uint64_t tsl_model_active_params(const tsl_model_t *m); /* per token; = params when dense */
/* The routed experts' parameters of layer l, E·p_e (0 without experts): the part
 * of l->params that expert parallelism shards (cost.h "Mixture of experts"). */
double tsl_layer_expert_params(const tsl_layer_t *l);
/* The width of a routed row of layer l: what its experts read and write and its
 * dispatch carries, ℓ under latent MoE, else h. */
uint32_t tsl_layer_expert_width(const tsl_layer_t *l);
/* Layers with routed experts / with latent attention / Mamba layers (0 for a
 * dense Transformer). */
uint32_t tsl_model_moe_layers(const tsl_model_t *m);
uint32_t tsl_model_mla_layers(const tsl_model_t *m);
uint32_t tsl_model_mamba_layers(const tsl_model_t *m);
/* YaRN's attention factor (the "concentration factor" Megatron-LM multiplies cos and
 * sin by; transformers' attention_factor): g(F, mscale) / g(F, mscale_all_dim), with
 * g(F, m) = 0.1·m·ln F + 1 (1 at F ≤ 1). 1 for any other RoPE or NULL. gpt-oss
 * (F 32, 1, 0) 1.3466; DeepSeek-V3 (40, 1, 1) 1. */
double tsl_model_yarn_attention_factor(const tsl_model_rope_t *r);

/* m->rope = *rope, and each self-attention layer's yarn_eager_rope from it: true for
 * YaRN with an attention factor other than 1 on a layer that is not latent attention
 * (MLA rotates its own rope slice; not priced). No YaRN model has NoPE layers. */
void tsl_model_set_rope(tsl_model_t *m, const tsl_model_rope_t *rope);

/* The model's first layer with routed experts (the routing its EP groups' figures are
 * made for, cost.h tsl_cost_moe_bw), or NULL. */
const tsl_layer_t *tsl_model_first_moe(const tsl_model_t *m);

/*
 * Whether the cost model can price m: 0 for every model the builders make — dense
 * layers, mixture-of-experts FFNs (priced at per-plan EP and expert TP degrees,
 * cost.h) and multi-head latent attention (roofline.h). Kept as the one
 * place the search and the evaluator ask (a layer the cost model cannot price
 * gets its refusal here, TSL_E_UNSUPPORTED, naming what is missing).
 */
int tsl_model_check_priced(const tsl_model_t *m, tsl_err_t *err);

/* Attention of every layer fused (false, the default) or keeping its s×w scores
 * (true); re-derives the layers. For a request's unfused_attn switch. */
int tsl_model_set_unfused_attn(tsl_model_t *m, bool unfused, tsl_err_t *err);

/* Every layer without dropout; re-derives the layers. For a request's no_dropout
 * switch (a model trained without it: bench/torch_gpt_step.py, nanoGPT's
 * dropout 0.0, HF configs with zero *_pdrop). */
int tsl_model_set_no_dropout(tsl_model_t *m, tsl_err_t *err);

/* The first `start` and the last `end` blocks of m (tsl_model_is_block: a hybrid's
 * Mamba, attention and FFN blocks each one, the MTP depths none, as Megatron-LM
 * numbers them) kept bf16 under a low-precision
 * recipe, the others not: Megatron-LM --first-last-layers-bf16 with
 * --num-layers-at-start-in-bf16 / --num-layers-at-end-in-bf16 (fp8_utils.py
 * is_first_last_bf16_layer, fp4_utils.py get_fp4_context: a global layer index
 * below start or at least num_layers − end runs outside the FP8/FP4 autocast).
 * Fails, naming bf16_layers_start, when start + end exceed the blocks. */
int tsl_model_set_bf16_layers(tsl_model_t *m, uint32_t start, uint32_t end, tsl_err_t *err);

/* tsl_model_set_bf16_layers' check alone (tsl_request_validate runs it, so that
 * a request asking more blocks than the model has is refused before a search):
 * 0, or -1 naming bf16_layers_start. */
int tsl_model_bf16_layers_ok(const tsl_model_t *m, uint32_t start, uint32_t end, tsl_err_t *err);

/* Sets every layer's fp32_acts (fp32 training) and re-derives the layers. */
int tsl_model_set_fp32(tsl_model_t *m, tsl_err_t *err);

/* A request's model switches: unfused_attn, no_dropout, and the MTP depths
 * (mtp.h tsl_model_set_mtp: mtp_layers depths, or none with no_mtp; 0 and false:
 * the model's own where the stack `target` trains them by default, none where it
 * does not: target.h tsl_target_mtp_depths), the blocks kept bf16 (bf16_layers_start /
 * _end, after the MTP depths are set). */
typedef struct tsl_model_switches {
    bool unfused_attn, no_dropout;
    bool fp32; /* fp32 training: the layers' activations at 4 bytes (tsl_model_set_fp32) */
    uint32_t mtp_layers;
    bool no_mtp;
    uint32_t target; /* the request's stack (target.h TSL_TARGET_*; 0: any) */
    uint32_t bf16_layers_start, bf16_layers_end; /* tsl_model_set_bf16_layers */
} tsl_model_switches_t;

/* The switches applied (model_request.c) to a copy of m in *own, whose layers are
 * re-derived: *out is own, or m itself when the request changes nothing (own is
 * then left empty). tsl_model_free(own) either way. */
int tsl_model_for_request(const tsl_model_t *m, const tsl_model_switches_t *sw, tsl_model_t *own,
                          const tsl_model_t **out, tsl_err_t *err);

/* Checks every layer's shape and the layer count. */
int tsl_model_validate(const tsl_model_t *m, tsl_err_t *err);

/*
 * Presets. Names are case-insensitive. Galvatron Table I: BERT-Huge-32/48,
 * ViT-Huge-32/48, T5-Large-32/48, T5-512/4-32/48, Swin-Huge-32/48,
 * GPT3-15B/39B/65B, BERT-xHuge, ViT-xHuge; AutoPipe Table I: GPT2-345M,
 * GPT2-762M, GPT2-1.3B, BERT-Large; AMP 4.3: TransGAN-Hetero; H3T Table 2:
 * BERT-1.8B/6B/13B/100B; Llama2-7B; BLOOM-176B and BLOOM-7B1 (their model cards).
 */
typedef struct tsl_model_preset {
    const char *name;
    const char *source;        /* paper and table it comes from */
    uint64_t published_params; /* the count the source states (for the 3% check) */
    bool params_are_ours;      /* the source states no count: published_params is
                                    Tessel's own figure, documented in docs/models.md */
} tsl_model_preset_t;

size_t tsl_model_preset_count(void);
const tsl_model_preset_t *tsl_model_preset_at(size_t i);
const tsl_model_preset_t *tsl_model_preset_find(const char *name);
int tsl_model_preset(const char *name, tsl_model_t *out, tsl_err_t *err);
/* The preset at another sequence length (0: its own). Family presets only, and
 * no longer than a learned position table; T5 sets its encoder length. */
int tsl_model_preset_seq(const char *name, uint32_t seq_len, tsl_model_t *out, tsl_err_t *err);

/*
 * Architecture families: one spec builds a whole model, [embedding, layers...,
 * head], the same way for the presets and for imported HuggingFace configs
 * (common/hf_config.c). What each family puts where (docs/models.md):
 *   GPT   token + learned position embedding; pre-LN encoder-kind layers (self-
 *         attention + FFN: causality does not change the counts); final LN and a
 *         tied LM head. BLOOM: alibi (no position table) and embed_norm.
 *   BERT  token + position + token-type embedding and its LN; encoder layers; MLM
 *         head: dense h×h + LN + output bias, decoder weights tied. No pooler.
 *   T5    shared token embedding, no positions (relative-position buckets in the
 *         first encoder and decoder layer); no biases, scale-only norms; `layers`
 *         encoder layers at seq_len, then `dec_layers` decoder layers at
 *         dec_seq_len attending to seq_len encoder tokens; head tied unless
 *         tied_head is false (T5 v1.1).
 *   VIT   patch embedding (c·p² → h) + class token + learned positions; encoder
 *         layers; final LN and a classifier on the class token (`classes`).
 *   LLAMA token embedding, RoPE (no position table); no biases (qkv_bias adds
 *         Qwen2's Q/K/V biases), RMSNorm, gated FFN, grouped-query attention;
 *         final norm and a head tied or not. Also Qwen3, Phi-3 and OLMo 2
 *         (qk_norm), and Gemma 2/3: head_dim ≠ h/a (attention d = a·head_dim
 *         wide), sandwich_norm, embed_scale, soft-capping and a window on all
 *         layers but full_attn_layers. Their elementwise work (the extra norms,
 *         the √h scale, soft-capping) is counted in the layers' extra_*: an
 *         RMSNorm 4 FLOPs per element and its input stashed (2 bytes), a
 *         soft-cap c·tanh(x/c) 3 FLOPs per element (docs/models.md); QK-norm's
 *         likewise, with the attention's figures (tsl_layer_t.qk_norm). With
 *         experts: Mixtral, Qwen2-MoE/Qwen3-MoE and, with latent attention,
 *         DeepSeek-V2/V3 (their MoE layers per moe_layers); gpt-oss (biases on
 *         every block linear, attention sinks, a 128-token window on alternate
 *         layers); Llama 4 (a shared expert, chunked attention on its RoPE
 *         layers, full attention and no QK-norm on its NoPE layers). With a
 *         hybrid pattern (Nemotron-H, Nemotron 3): one Mamba-2, attention, FFN or
 *         MoE block per character instead of whole layers (docs/models.md).
 *   NEOX  token embedding, rotary (no position table); LayerNorm with bias;
 *         plain (GELU) FFN; biases unless no_bias; attention and FFN in parallel
 *         when parallel_block (one norm when shared_norm); grouped-query
 *         attention; no dropout; final LayerNorm and a head tied or not, with a
 *         bias when head_bias. GPT-NeoX, Falcon and Phi(-1/1.5/2) configs.
 */
typedef enum tsl_arch {
    TSL_ARCH_GPT = 0,
    TSL_ARCH_BERT,
    TSL_ARCH_T5,
    TSL_ARCH_VIT,
    TSL_ARCH_LLAMA,
    TSL_ARCH_NEOX,
    TSL_ARCH_COUNT
} tsl_arch_t;

typedef struct tsl_arch_spec {
    tsl_arch_t arch;
    uint32_t layers;          /* transformer layers (T5: encoder layers) */
    uint32_t dec_layers;      /* T5: decoder layers */
    uint32_t hidden;          /* h */
    uint32_t ffn_hidden;      /* f */
    uint32_t heads;           /* a */
    uint32_t kv_heads;        /* 0 means = heads */
    uint32_t head_dim;        /* 0 means h / a (then d = h) */
    uint32_t seq_len;         /* tokens per sample (T5: encoder; ViT: patches + 1) */
    uint32_t dec_seq_len;     /* T5: decoder tokens; 0 means seq_len */
    uint32_t vocab;           /* token vocabulary (not used by ViT) */
    uint32_t positions;       /* learned positions (GPT, BERT; ViT: 0 means seq_len) */
    uint32_t type_vocab;      /* BERT token types */
    uint32_t channels, patch; /* ViT: image channels and patch side */
    uint32_t classes;         /* ViT: classifier outputs */
    uint32_t rel_buckets;     /* T5: relative-position buckets */
    uint32_t attn_window;     /* sliding-window attention; 0 means none */
    bool attn_chunked;        /* LLAMA family: attn_window is a chunk, not a sliding
                                 window (Llama 4's attention_chunk_size; model.h) */
    /* with attn_window: the layers (0-based, bit i of word i/64) that attend to the
     * whole sequence instead (Gemma 2's odd layers, every 6th of Gemma 3); all
     * zero: every layer is windowed (Mistral) */
    uint64_t full_attn_layers[TSL_MODEL_MAX_LAYERS / 64];
    /* LLAMA family: the layers without RoPE (Llama 4's NoPE layers, bit i of word
     * i/64), which have no QK-norm either (Llama 4 normalises Q and K only where it
     * rotates them); RoPE itself costs nothing here */
    uint64_t nope_layers[TSL_MODEL_MAX_LAYERS / 64];
    uint8_t qk_norm;    /* TSL_QK_NORM_*: RMSNorm on queries and keys (LLAMA family) */
    bool sandwich_norm; /* LLAMA family: norms after attention and FFN as well as
                                 before (Gemma 2/3): 2·h parameters per layer more */
    bool embed_scale;   /* the embedding output is multiplied by sqrt(h) (Gemma) */
    bool attn_softcap;  /* scores soft-capped, c·tanh(x/c) (Gemma 2) */
    bool logit_softcap; /* final logits soft-capped (Gemma 2) */
    bool gated_ffn;     /* gated FFN (Llama SwiGLU, T5 v1.1 gated-gelu) */
    bool tied_head;     /* LM head shares the embedding (GPT, BERT, T5 v1.0) */
    bool qkv_bias;      /* LLAMA family: Q/K/V projections have biases (Qwen2) */
    bool linear_bias;   /* LLAMA family: every linear layer of the blocks has a bias:
                           Q, K, V, O and each expert's gate/up (2·f) and down (h)
                           (gpt-oss); the LM head has none */
    bool attn_sinks;    /* LLAMA family: a learned sink logit per head joins each
                           softmax (gpt-oss): heads parameters per layer */
    bool relu2;         /* LLAMA family, a non-gated FFN: squared ReLU (Nemotron-H's
                           relu2) instead of GeLU; no count changes (the exports say it) */
    bool glu_clamp;     /* LLAMA family, MoE: the experts' gated activation clamps the
                           gate half from above and the linear half both ways before
                           the product (gpt-oss, swiglu_limit 7): no parameters */
    double glu_limit;   /* with glu_clamp: the limit (swiglu_limit); 0 means 7,
                           GptOssConfig's default */
    /* GPT family, BLOOM: ALiBi on every layer's self-attention (positions must be
     * 0: no table), and a LayerNorm on the embedding's output */
    bool alibi;
    bool embed_norm;
    /* GPT family: transformers' GPT2Block as written (an HF config naming
     * activation_function gelu_new; the layer's hf_gpt2_eager), and its
     * scale_attn_by_inverse_layer_idx (layer_scale; needs hf_gpt2_eager) */
    bool hf_gpt2_eager;
    bool layer_scale;
    /* NEOX family (GPT-NeoX, Falcon, Phi) */
    bool no_bias;        /* linear layers without biases (Falcon) */
    bool parallel_block; /* attention and FFN in parallel on the same input */
    bool shared_norm;    /* with parallel_block: one norm feeds both (Falcon-7B, Phi) */
    bool head_bias;      /* the LM head has a bias of vocab entries (Phi) */
    /* causal self-attention: TSL_CAUSAL_ARCH (0, the default) is what the family
     * implies: GPT, LLAMA, NEOX and T5's decoder layers causal, BERT, VIT and T5's
     * encoder not; ON / OFF override it for every self-attention */
    uint8_t causal;
    /* LLAMA family, mixture of experts (model.h "Mixture of experts"); experts = 0:
     * every layer dense. The MoE layers take moe_ffn_hidden as the expert width,
     * the others ffn_hidden (DeepSeek's first dense layers, Qwen's mlp_only_layers) */
    uint32_t experts;           /* routed experts per MoE layer */
    uint32_t experts_per_tok;   /* top-k */
    uint32_t moe_ffn_hidden;    /* one routed expert's width (moe_intermediate_size) */
    uint32_t shared_experts;    /* always-on experts per MoE layer */
    uint32_t shared_ffn_hidden; /* each shared expert's width; 0 means moe_ffn_hidden */
    bool shared_expert_gate;    /* Qwen2-MoE: a sigmoid gate h x 1 on the shared expert */
    bool router_bias;           /* the router's bias, E: DeepSeek-V3's score correction,
                                   gpt-oss's linear bias (linear_bias set) */
    /* routing (model.h "Mixture of experts", the layer's router_* fields): sigmoid
     * scores, top-k weights normalised, their scale, group-limited choice */
    uint8_t router_score;
    bool router_norm;
    double router_scale;
    uint16_t router_groups, router_topk_groups;
    /* which layers have experts (bit i of word i/64, 0-based); all zero with
     * experts > 0: every layer. hf_config.c derives it from first_k_dense_replace
     * and moe_layer_freq (DeepSeek), decoder_sparse_step and mlp_only_layers (Qwen) */
    uint64_t moe_layers[TSL_MODEL_MAX_LAYERS / 64];
    /* LLAMA family, multi-head latent attention (DeepSeek-V2/V3); kv_lora_rank = 0:
     * ordinary attention. head_dim and kv_heads are then ignored */
    uint32_t q_lora_rank, kv_lora_rank, qk_nope_dim, qk_rope_dim, v_head_dim;
    /* LLAMA family, a hybrid model (Nemotron-H, Nemotron 3; Megatron-LM's
     * hybrid_layer_pattern): one layer per character, M a Mamba-2 mixer (the ssm_*
     * widths, mamba.h), * an attention block, - a dense FFN block (ffn_hidden), E an
     * FFN block with the experts; layers is then the pattern's length. Empty: every
     * layer a whole Transformer layer. */
    char hybrid[TSL_MODEL_MAX_LAYERS + 1];
    uint32_t ssm_heads, ssm_head_dim, ssm_state, ssm_groups, ssm_conv, ssm_chunk;
    /* LLAMA family, latent MoE (model.h "Latent MoE"): the routed experts' width ℓ
     * (moe_latent_size); 0: h */
    uint32_t moe_latent;
    /* LLAMA family, multi-token prediction (mtp.h): depths, each with its own
     * weights (HF num_nextn_predict_layers); each depth's inner layer a copy of the
     * model's last one, or for a hybrid the blocks of mtp_hybrid (HF
     * mtp_hybrid_override_pattern, "*E"; required with a hybrid) */
    uint32_t mtp_layers;
    char mtp_hybrid[9];
} tsl_arch_spec_t;

/* QK-norm: none; one RMSNorm of head_dim shared by every head, on Q and on K
 * (Qwen3, Gemma 3: 2·head_dim parameters); one over the whole projection (OLMo 2:
 * d + e parameters); a per-head L2 norm without weights (Llama 4: no parameters,
 * the same FLOPs and stash as the others). */
#define TSL_QK_NORM_NONE     0u
#define TSL_QK_NORM_PER_HEAD 1u
#define TSL_QK_NORM_FULL     2u
#define TSL_QK_NORM_L2       3u
/* An RMSNorm's work per element: a square, a sum, a scale by the reciprocal root and a
 * weight multiply (the QK norms, model.c; the LLAMA variants' sandwich norms,
 * model_presets.c). */
#define TSL_NORM_FLOPS_PER_ELEM 4.0

#define TSL_CAUSAL_ARCH 0u
#define TSL_CAUSAL_ON   1u
#define TSL_CAUSAL_OFF  2u

/* Builds [embedding, layers..., head] for spec into out (initialised here; free
 * with tsl_model_free). Fails, naming the spec field, on a zero or inconsistent
 * shape or when the layers would exceed TSL_MODEL_MAX_LAYERS. */
int tsl_model_build(const tsl_arch_spec_t *spec, const char *name, tsl_model_t *out,
                    tsl_err_t *err);

/* Lowercase family name: "gpt", "bert", "t5", "vit", "llama", "neox". */
const char *tsl_arch_name(tsl_arch_t arch);

#endif

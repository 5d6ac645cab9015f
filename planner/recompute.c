/*
 * recompute.c — Megatron-LM's recompute modules: names, the layers each applies
 * to, and the stash each drops (recompute.h).
 */
#include "recompute.h"
#include "name_list.h"

#include <string.h>

static const char *const names[TSL_RECOMPUTE_COUNT] = {
    "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts", "torchtitan_op",
};

const char *tsl_recompute_module_name(uint32_t i)
{
    return i < TSL_RECOMPUTE_COUNT ? names[i] : NULL;
}

static int one_name(const char *w, size_t n, uint32_t *mask, bool *core_attn, tsl_err_t *err)
{
    if (n == strlen("core_attn") && strncmp(w, "core_attn", n) == 0) {
        if (core_attn == NULL)
            return tsl_err_set(err,
                               "recompute-modules: core_attn is the attention core's selective "
                               "recompute (+selckpt, --ckpt selective), not a module here");
        *core_attn = true;
        return 0;
    }
    for (uint32_t i = 0; i < TSL_RECOMPUTE_COUNT; i++)
        if (strlen(names[i]) == n && strncmp(w, names[i], n) == 0) {
            *mask |= 1u << i;
            return 0;
        }
    return tsl_err_set(err,
                       "recompute-modules: '%.*s' is not a module Tessel prices (core_attn, "
                       "moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts, "
                       "torchtitan_op)",
                       (int)(n > 64 ? 64 : n), w);
}

int tsl_recompute_modules_parse(const char *list, uint32_t *mask, bool *core_attn, tsl_err_t *err)
{
    *mask = 0;
    if (core_attn)
        *core_attn = false;
    for (const char *p = list ? list : ""; *p;) {
        size_t n = strcspn(p, ", \t\n");
        if (n > 0 && one_name(p, n, mask, core_attn, err) != 0)
            return -1;
        p += n;
        p += strspn(p, ", \t\n");
    }
    return 0;
}

/* The 1-based number of the first comma-separated item of list that is empty or
 * blanks only ("a,,b": 2; ",a" and "a,": 1 and 2), 0 where none is: the flag's
 * list is comma-separated, and an item left out is more likely a name lost (an
 * unset shell variable in "mlp,$MORE,moe") than one asked for. */
static size_t empty_item(const char *list)
{
    size_t item = 1;
    for (const char *p = list;; item++) {
        size_t n = strcspn(p, ",");
        if (strspn(p, " \t\n") >= n)
            return item;
        if (p[n] == '\0')
            return 0;
        p += n + 1;
    }
}

int tsl_recompute_modules_flag(const char *list, uint32_t *mask, bool *core_attn, tsl_err_t *err)
{
    size_t empty = list && *list ? empty_item(list) : 0;
    if (empty)
        return tsl_err_set(err,
                           "recompute-modules: '%.64s': item %zu is empty; give module names "
                           "separated by single commas (mlp,moe)",
                           list, empty);
    if (tsl_recompute_modules_parse(list, mask, core_attn, err) != 0)
        return -1;
    if (*mask == 0 && !(core_attn && *core_attn))
        return tsl_err_set(err,
                           "recompute-modules: '%.64s' names no module; give one or more of "
                           "%smoe_act, layernorm, mla_up_proj, mlp, moe, shared_experts, "
                           "comma-separated, or torchtitan_op",
                           list ? list : "", core_attn ? "core_attn, " : "");
    return 0;
}

int tsl_recompute_modules_check(uint32_t mask, tsl_err_t *err)
{
    /* a request's bitmask (PlanRequest.recompute_modules) with a bit no module has:
     * 0x100 or 2^31 was searched as no module, without a word */
    if (mask & ~TSL_RECOMPUTE_ALL)
        return tsl_err_set(err,
                           "recompute_modules: 0x%x names no module this build prices (bits 0-%u: "
                           "moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts, "
                           "torchtitan_op)",
                           mask & ~TSL_RECOMPUTE_ALL, TSL_RECOMPUTE_COUNT - 1);
    if ((mask & TSL_RECOMPUTE_TORCHTITAN_OP) && mask != TSL_RECOMPUTE_TORCHTITAN_OP)
        return tsl_err_set(err, "recompute_modules: torchtitan_op (torchtitan's op-level "
                                "selective AC) is a policy of its own, not one beside "
                                "Megatron-LM's modules");
    return 0;
}

size_t tsl_recompute_modules_format(uint32_t mask, char *buf, size_t cap)
{
    return tsl_name_list_format(names, TSL_RECOMPUTE_COUNT, mask, buf, cap);
}

uint32_t tsl_recompute_applies(const tsl_layer_t *l, uint32_t mask)
{
    bool mla = tsl_layer_has_attention(l) && l->kv_lora_rank,
         moe = tsl_layer_has_ffn(l) && l->experts;
    uint32_t has = 0;
    if (moe)
        has |= TSL_RECOMPUTE_MOE_ACT | TSL_RECOMPUTE_MOE | TSL_RECOMPUTE_LAYERNORM |
               (l->shared_experts ? TSL_RECOMPUTE_SHARED_EXPERTS : 0);
    if (mla)
        has |= TSL_RECOMPUTE_MLA_UP_PROJ | TSL_RECOMPUTE_LAYERNORM;
    if (tsl_layer_has_ffn(l) && !l->experts)
        has |= TSL_RECOMPUTE_MLP;
    if (l->kind == TSL_LAYER_ENCODER && !l->experts && !l->kv_lora_rank)
        has |= TSL_RECOMPUTE_TORCHTITAN_OP; /* torchtitan's dense TransformerBlock */
    return mask & has;
}

void tsl_recompute_drop(const tsl_layer_t *l, uint32_t mask, uint64_t *repl, uint64_t *shard)
{
    uint32_t m = tsl_recompute_applies(l, mask);
    double s = l->seq_len, h = l->hidden, f = l->ffn_hidden, g = l->gated_ffn ? 2.0 : 1.0;
    double k = l->experts_per_tok, E = l->experts, S = l->shared_experts;
    double fs = l->shared_ffn_hidden ? l->shared_ffn_hidden : f;
    double a = l->heads, n = l->qk_nope_dim, r = l->qk_rope_dim, v = l->v_head_dim;
    double q = l->q_lora_rank, c = l->kv_lora_rank;
    double rp = 0.0, sh = 0.0, shared = S * (2.0 * g * s * fs + 2.0 * s * fs);
    if (m & TSL_RECOMPUTE_LAYERNORM) /* one standalone norm per MLA block, per MoE block */
        rp += 2.0 * s * h *
              ((tsl_layer_has_attention(l) && l->kv_lora_rank) +
               (tsl_layer_has_ffn(l) && l->experts));
    if (m & TSL_RECOMPUTE_MLA_UP_PROJ) {
        rp += 2.0 * s * (q + c);
        sh += 4.0 * s * a * (n + r) + 2.0 * s * a * v;
    }
    if (m & TSL_RECOMPUTE_MLP) {
        rp += 2.0 * s * h;
        sh += 2.0 * g * s * f + 2.0 * s * f;
    }
    if (m & TSL_RECOMPUTE_MOE) {
        /* the whole of moe_layer.py's custom_forward: the routed copies at their width
         * (ℓ under latent MoE) and fc2_latent_proj's ℓ-wide input, which the
         * checkpoint's forward runs too; its own input, the norm's output, is kept */
        double w = tsl_layer_expert_width(l);
        rp += 2.0 * k * s * w + 4.0 * s * E + (l->moe_latent ? 2.0 * s * w : 0.0);
        sh += k * (2.0 * g * s * f + 2.0 * s * f) + shared;
    } else {
        if (m & TSL_RECOMPUTE_MOE_ACT)
            sh += 2.0 * k * s * f;
        if (m & TSL_RECOMPUTE_SHARED_EXPERTS)
            sh += shared;
    }
    if (m & TSL_RECOMPUTE_TORCHTITAN_OP) { /* all but what its policy saves */
        double d = l->attn_dim ? l->attn_dim : h;
        double e = l->kv_heads && l->heads ? d / l->heads * l->kv_heads : d;
        double kr = 2.0 * s * h, ks = 2.0 * s * (d + e + f) + 2.0 * s * d + 4.0 * s * a;
        rp = kr < (double)l->act_repl_bytes ? (double)l->act_repl_bytes - kr : 0.0;
        sh = ks < (double)l->act_shard_bytes ? (double)l->act_shard_bytes - ks : 0.0;
    }
    /* within the stash (a hand-built layer may hold less than its shape says) */
    *repl = rp < (double)l->act_repl_bytes ? (uint64_t)rp : l->act_repl_bytes;
    *shard = sh < (double)l->act_shard_bytes ? (uint64_t)sh : l->act_shard_bytes;
}

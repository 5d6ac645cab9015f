/*
 * export_megatron.c — a plan as Megatron-LM launch arguments (pretrain_gpt.py,
 * megatron/training/arguments.py names), one argument per line after '#'
 * comment lines.
 *
 * Megatron-LM's space: one tensor-parallel degree for every layer on consecutive
 * GPUs (rank order tp, dp, pp), data parallelism with full model states per rank,
 * stages of equal device count whose Transformer layers split evenly, except the
 * first and last stage (--decoder-first/last-pipeline-num-layers), and full
 * recompute of the first N Transformer layers of every stage
 * (--recompute-method block) or of all of them (uniform, 1).
 */
#include <stdbool.h>
#include <string.h>

#include "export.h"

static int check_layout(const tsl_export_view_t *v, const tsl_export_uniform_t *u, tsl_err_t *err)
{
    char b[64];
    if (u->sdp > 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: the plan shards model states (%s, ZeRO-3); Tessel exports "
                            "those to deepspeed, torchtitan or galvatron, not Megatron-LM",
                            tsl_export_strategy_str(&u->s, b));
    if (u->tp > 1 && tsl_strategy_stride(&u->s, TSL_DIM_TP) != 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: the plan's %s puts tensor-parallel ranks %u GPUs apart; "
                            "Megatron-LM puts them on consecutive GPUs",
                            tsl_export_strategy_str(&u->s, b),
                            tsl_strategy_stride(&u->s, TSL_DIM_TP));
    for (uint32_t s = 0; s < v->pp; s++)
        if (v->stage_blocks[s] == 0)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "megatron: stage %u holds no Transformer layer", s);
    /* Uneven stages: only the first and the last may differ from the rest. */
    for (uint32_t s = 2; s + 1 < v->pp; s++)
        if (v->stage_blocks[s] != v->stage_blocks[1])
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "megatron: stage %u has %u Transformer layers but stage 1 has %u; "
                                "Megatron-LM splits the middle stages evenly", s,
                                v->stage_blocks[s], v->stage_blocks[1]);
    return 0;
}

/* Checkpointed layers must be the first k of every stage, the same k. Returns k. */
static int recompute_per_stage(const tsl_export_view_t *v, uint32_t *k, tsl_err_t *err)
{
    for (uint32_t s = 0; s < v->pp; s++) {
        uint32_t first = v->stage_first[s] ? v->stage_first[s] : 1, n = v->stage_blocks[s];
        uint32_t c = 0;
        while (c < n && v->layer[first + c].ckpt)
            c++;
        for (uint32_t i = first + c; i < first + n; i++)
            if (v->layer[i].ckpt)
                return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                    "megatron: layer %u is checkpointed but layer %u before it "
                                    "in stage %u is not; Megatron-LM recomputes the first N "
                                    "layers of a stage", i, first + c, s);
        if (s > 0 && c != *k)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "megatron: stage %u checkpoints %u layers but stage 0 %u; "
                                "--recompute-num-layers is one number for every stage", s, c, *k);
        *k = c;
    }
    return 0;
}

static int check_shapes(const tsl_export_view_t *v, tsl_err_t *err)
{
    const tsl_layer_t *l1 = &v->model->layers[1];
    uint64_t k1[TSL_LAYER_KEY_LEN], k[TSL_LAYER_KEY_LEN];
    uint32_t n1 = tsl_layer_key(l1, k1);
    if (l1->kind != TSL_LAYER_ENCODER || l1->attn_window || v->model->layers[0].patch_embed)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "megatron: Tessel exports GPT-, BERT- and Llama-style stacks of "
                            "self-attention layers (no decoder cross-attention, windowed "
                            "attention or patch embedding)");
    for (uint32_t i = 2; i <= v->n_blocks; i++)
        if (tsl_layer_key(&v->model->layers[i], k) != n1 || memcmp(k, k1, n1 * sizeof k[0]))
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "megatron: layer %u's shape differs from layer 1's; "
                                "Megatron-LM builds identical layers", i);
    return 0;
}

static void write_model(const tsl_export_view_t *v, FILE *out)
{
    const tsl_layer_t *e = &v->model->layers[0], *l = &v->model->layers[1];
    const tsl_layer_t *h = &v->model->layers[v->n_blocks + 1];
    fprintf(out, "--num-layers %u\n--hidden-size %u\n--ffn-hidden-size %u\n"
                 "--num-attention-heads %u\n--seq-length %u\n--max-position-embeddings %u\n",
            v->n_blocks, l->hidden, l->ffn_hidden, l->heads, l->seq_len,
            e->positions ? e->positions : l->seq_len);
    if (l->attn_dim && l->attn_dim != l->hidden)
        fprintf(out, "--kv-channels %u\n", l->attn_dim / l->heads);
    if (l->kv_heads && l->kv_heads != l->heads)
        fprintf(out, "--group-query-attention\n--num-query-groups %u\n", l->kv_heads);
    if (!e->positions)
        fputs("--position-embedding-type rope\n", out);
    if (l->gated_ffn)
        fputs("--swiglu\n", out);
    if (l->rms_norm)
        fputs("--normalization RMSNorm\n", out);
    if (l->no_bias)
        fputs("--disable-bias-linear\n", out);
    if (!h->tied_head && h->params)
        fputs("--untie-embeddings-and-output-weights\n", out);
    fputs("--bf16\n", out);
}

static void write_parallel(const tsl_export_view_t *v, const tsl_export_uniform_t *u,
                           uint32_t ckpt_k, FILE *out)
{
    const tsl_plan_t *p = v->plan;
    fprintf(out, "--tensor-model-parallel-size %u\n--pipeline-model-parallel-size %u\n"
                 "--micro-batch-size %u\n--global-batch-size %u\n",
            u->tp, v->pp, u->micro_per_rank, p->global_batch);
    bool uneven = false;
    for (uint32_t s = 1; s < v->pp; s++)
        uneven |= v->stage_blocks[s] != v->stage_blocks[0];
    if (uneven)
        fprintf(out, "--decoder-first-pipeline-num-layers %u\n"
                     "--decoder-last-pipeline-num-layers %u\n",
                v->stage_blocks[0], v->stage_blocks[v->pp - 1]);
    if (u->ckpt_blocks == v->n_blocks)
        fputs("--recompute-granularity full\n--recompute-method uniform\n"
              "--recompute-num-layers 1\n", out);
    else if (u->ckpt_blocks)
        fprintf(out, "--recompute-granularity full\n--recompute-method block\n"
                     "--recompute-num-layers %u\n", ckpt_k);
}

int tsl_export_megatron(const tsl_export_view_t *v, FILE *out, tsl_err_t *err)
{
    tsl_export_uniform_t u;
    uint32_t ckpt_k = 0;
    if (tsl_export_uniform(v, &u, err) != 0 || check_layout(v, &u, err) != 0 ||
        check_shapes(v, err) != 0)
        return -1;
    if (u.ckpt_blocks && u.ckpt_blocks < v->n_blocks && recompute_per_stage(v, &ckpt_k, err) != 0)
        return -1;
    const tsl_plan_t *p = v->plan;
    fprintf(out, "# Megatron-LM arguments for %s, plan \"%s\" from Tessel (docs/exports.md)\n"
                 "# %u GPUs = TP %u x DP %u x PP %u; %u micro-batches of %u per data-parallel "
                 "rank (%s)\n",
            v->model->name, p->label, u.stage_devices * v->pp, u.tp, u.dp, v->pp, p->n_micro,
            u.micro_per_rank, v->pp > 1 ? "1F1B" : "gradient accumulation");
    fprintf(out, "# predicted %.4f s/iteration, %.2f samples/s, peak %.1f GiB per GPU\n"
                 "# not set: --sequence-parallel and --use-distributed-optimizer (the plan "
                 "keeps both off)\n"
                 "# the vocabulary (%u) comes from your tokenizer arguments\n",
            p->iter_time_s, p->samples_per_s, p->peak_bytes / 1073741824.0,
            v->model->layers[0].vocab);
    if (p->n_nodes)
        fputs("# heterogeneous placement: order the hosts as the plan's node_order\n", out);
    write_parallel(v, &u, ckpt_k, out);
    write_model(v, out);
    return 0;
}

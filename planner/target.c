/*
 * target.c — the view every stack's rules read (a plan folded onto the source
 * model's layers), the checks all targets share, the target names and the
 * starting partition of a target's space. The per-stack rules, and the entry
 * points that dispatch to them (tsl_target_check, tsl_target_model_ok), are
 * target_rules.c.
 */
#include "target.h"
#include "mtp.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#include "ds_partition.h"
#include "partition.h"
#include "sublayer.h"

static const char *const target_names[TSL_TARGET_COUNT] = {
    [TSL_TARGET_ANY] = "any",
    [TSL_TARGET_MEGATRON] = "megatron",
    [TSL_TARGET_DEEPSPEED] = "deepspeed",
    [TSL_TARGET_TORCHTITAN] = "torchtitan",
    [TSL_TARGET_GALVATRON] = "galvatron",
};

const char *tsl_target_name(uint32_t t)
{
    return t < TSL_TARGET_COUNT ? target_names[t] : "?";
}

int tsl_target_parse(const char *name, uint32_t *out, tsl_err_t *err)
{
    if (name[0] == '\0') {
        *out = TSL_TARGET_ANY;
        return 0;
    }
    for (uint32_t t = 0; t < TSL_TARGET_COUNT; t++) {
        if (strcasecmp(name, target_names[t]) == 0) {
            *out = t;
            return 0;
        }
    }
    char shown[TSL_ERR_SHOWN_MAX(40)]; /* a value's escape sequence, not acted on */
    return tsl_err_set(err,
                       "target: '%s' is not one of megatron, deepspeed, torchtitan, "
                       "galvatron",
                       tsl_err_shown(name, 40, shown, sizeof shown));
}

int tsl_target_parse_flag(const char *arg, uint32_t *out, tsl_err_t *err)
{
    if (arg[0] == '\0')
        return tsl_err_set(err, "target: empty; give megatron, deepspeed, torchtitan or "
                                "galvatron (or leave --target out)");
    return tsl_target_parse(arg, out, err);
}

const char *tsl_target_layer_kind(const tsl_target_view_t *v, uint32_t layer)
{
    if (layer == 0)
        return "embedding";
    if (layer > v->n_blocks && layer + 1 < v->model->n_layers)
        return "MTP layer";
    return layer > v->n_blocks ? "head" : "Transformer layer";
}

const char *tsl_target_strategy_str(const tsl_strategy_t *s, char buf[64])
{
    tsl_strategy_t t = *s;
    t.ckpt = false;
    tsl_strategy_format(&t, buf, 64);
    return buf;
}

static bool is_block(const tsl_layer_t *l)
{
    return l->kind == TSL_LAYER_ENCODER || l->kind == TSL_LAYER_DECODER;
}

/* Layer i of m as target's Transformer layer: a whole one, or under megatron a
 * hybrid's block (M, *, - or E: Megatron-LM's HybridModel, pretrain_hybrid.py at
 * d98e8a6, builds one layer per --hybrid-layer-pattern character; its families'
 * shapes are tsl_target_megatron_shapes' rule). The other stacks build whole
 * Transformer layers only. */
static bool target_block(const char *target, const tsl_model_t *m, uint32_t i)
{
    if (is_block(&m->layers[i]))
        return true;
    return m->hybrid && strcmp(target, "megatron") == 0 && tsl_model_is_block(m, i);
}

int tsl_target_check_model(const char *target, const tsl_model_t *m, tsl_err_t *err)
{
    uint32_t n = m->n_layers;
    if (n < 3 || m->layers[0].kind != TSL_LAYER_EMBEDDING ||
        m->layers[n - 1].kind != TSL_LAYER_HEAD)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: model %s is not [embedding, Transformer layers..., head]", target,
                            m->name);
    /* MTP depths (mtp.h, target.h): Megatron-LM's, and torchtitan's DeepSeek-V3's
     * (multi-head latent attention: its deepseek_v3 model, MTPDecoder) */
    uint32_t mtp = tsl_mtp_layers(m);
    bool tt = strcmp(target, "torchtitan") == 0;
    if (mtp && strcmp(target, "megatron") != 0 && !(tt && tsl_model_mla_layers(m) > 0))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: mtp_layers: model %s has %u MTP depths; %s: plan without "
                            "--mtp-layers (the model as %s trains it) or with --no-mtp",
                            target, m->name, tsl_mtp_depths(m),
                            tt ? "torchtitan trains them for DeepSeek-V3 only (its deepseek_v3 "
                                 "model)"
                               : "this stack trains no multi-token prediction",
                            target);
    for (uint32_t i = 1; i + 1 < n; i++)
        if (i + 1 + mtp >= n ? m->layers[i].mtp_depth == 0 : !target_block(target, m, i))
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "%s: layer %u of %s is a %s block, not a whole Transformer layer",
                                target, i, m->name, tsl_layer_kind_name(m->layers[i].kind));
    return 0;
}

/* A whole-layer plan: strategies and stages as they are. */
static int view_layers(tsl_target_view_t *v, const tsl_plan_t *p, const tsl_model_t *m,
                       tsl_err_t *err)
{
    if (p->n_layers != m->n_layers)
        return tsl_err_set(err, "plan: %u layers, but model %s has %u", p->n_layers, m->name,
                           m->n_layers);
    memcpy(v->layer, p->layer, m->n_layers * sizeof(p->layer[0]));
    for (uint32_t s = 0; s < p->pp; s++) {
        v->stage_first[s] = p->stages[s].first_layer;
        v->stage_count[s] = p->stages[s].n_layers;
    }
    return 0;
}

/* A sub-layer plan folded back: both blocks of a layer in one stage, one strategy. */
static int fold_sublayers(tsl_target_view_t *v, const tsl_plan_t *p, const tsl_sublayer_model_t *sm,
                          tsl_err_t *err)
{
    char a[64], b[64];
    if (p->n_layers != sm->model.n_layers)
        return tsl_err_set(err, "plan: %u sub-layer blocks, but the split model has %u",
                           p->n_layers, sm->model.n_layers);
    for (uint32_t i = 0; i < p->n_layers; i++) {
        uint32_t src = sm->ref[i].layer;
        if (sm->ref[i].part != TSL_SUBLAYER_FFN) {
            v->layer[src] = p->layer[i];
        } else if (!tsl_strategy_equal(&v->layer[src], &p->layer[i])) {
            tsl_strategy_format(&v->layer[src], a, sizeof a);
            tsl_strategy_format(&p->layer[i], b, sizeof b);
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "%s: layer %u's attention block runs %s but its FFN block %s; "
                                "%s takes one strategy per layer",
                                v->target, src, a, b, v->target);
        }
    }
    for (uint32_t s = 0; s < p->pp; s++) {
        uint32_t lo = tsl_sublayer_boundary_halves(sm, p->stages[s].first_layer);
        uint32_t hi =
            tsl_sublayer_boundary_halves(sm, p->stages[s].first_layer + p->stages[s].n_layers);
        if (lo % 2)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "%s: stage %u starts inside layer %u (at %u.5, between its "
                                "attention and FFN blocks); %s cuts stages at whole layers; plan "
                                "again with --no-sublayer",
                                v->target, s, lo / 2, lo / 2, v->target);
        v->stage_first[s] = lo / 2;
        v->stage_count[s] = (hi - lo + 1) / 2;
    }
    return 0;
}

/* CKPT of the embedding or the head: no target recomputes those. */
static int check_ckpt_outside_blocks(const tsl_target_view_t *v, tsl_err_t *err)
{
    uint32_t ends[2] = {0, v->model->n_layers - 1};
    for (int k = 0; k < 2; k++)
        if (v->layer[ends[k]].ckpt)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "%s: layer %u (%s) is checkpointed; %s recomputes Transformer "
                                "layers only",
                                v->target, ends[k], tsl_target_layer_kind(v, ends[k]), v->target);
    return 0;
}

int tsl_target_view_init(tsl_target_view_t *v, const char *target, const tsl_plan_t *p,
                         const tsl_model_t *m, tsl_err_t *err)
{
    memset(v, 0, sizeof(*v));
    v->plan = p;
    v->model = m;
    v->target = target;
    v->pp = p->pp;
    if (!p->valid || p->pp == 0 || p->pp > TSL_PLAN_MAX_STAGES)
        return tsl_err_set(err, "plan: empty; there is nothing to export");
    if (p->memopt)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: the plan uses H3T's memory switches and CPU offload, which %s "
                            "does not take per layer; plan again with --no-memopt",
                            target, target);
    if (tsl_target_check_model(target, m, err) != 0)
        return -1;
    v->n_blocks = m->n_layers - 2 - tsl_mtp_layers(m); /* the MTP layers follow (mtp.h) */
    int rc;
    if (!p->sublayer) {
        rc = view_layers(v, p, m, err);
    } else {
        tsl_sublayer_model_t sm;
        if (tsl_sublayer_split(m, &sm, err) != 0)
            return -1;
        rc = fold_sublayers(v, p, &sm, err);
        tsl_sublayer_free(&sm);
    }
    if (rc != 0)
        return -1;
    for (uint32_t s = 0; s < p->pp; s++)
        for (uint32_t i = v->stage_first[s]; i < v->stage_first[s] + v->stage_count[s]; i++)
            v->stage_blocks[s] += i >= 1 && i <= v->n_blocks;
    return check_ckpt_outside_blocks(v, err);
}

static int check_same_strategy(const tsl_target_view_t *v, const tsl_strategy_t *ref,
                               tsl_err_t *err)
{
    char a[64], b[64];
    for (uint32_t i = 0; i < v->model->n_layers; i++) {
        tsl_strategy_t t = v->layer[i];
        t.ckpt = false;
        if (i == 0 || i > v->n_blocks) /* no attention core to recompute there */
            t.selective = ref->selective;
        if (!tsl_strategy_equal(&t, ref))
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "%s: layer %u (%s) runs %s but layer 1 runs %s; %s runs the "
                                "whole model under one strategy",
                                v->target, i, tsl_target_layer_kind(v, i),
                                tsl_target_strategy_str(&t, a), tsl_target_strategy_str(ref, b),
                                v->target);
    }
    return 0;
}

int tsl_target_uniform(const tsl_target_view_t *v, tsl_target_uniform_t *u, tsl_err_t *err)
{
    const tsl_plan_t *p = v->plan;
    memset(u, 0, sizeof(*u));
    u->s = v->layer[1];
    u->s.ckpt = false;
    if (check_same_strategy(v, &u->s, err) != 0)
        return -1;
    u->stage_devices = p->stages[0].n_devices;
    for (uint32_t s = 1; s < p->pp; s++)
        if (p->stages[s].n_devices != u->stage_devices)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "%s: stage %u has %u devices but stage 0 has %u; %s gives every "
                                "stage the same number",
                                v->target, s, p->stages[s].n_devices, u->stage_devices, v->target);
    u->tp = tsl_strategy_degree(&u->s, TSL_DIM_TP);
    u->dp = tsl_strategy_degree(&u->s, TSL_DIM_DP);
    u->sdp = tsl_strategy_degree(&u->s, TSL_DIM_SDP);
    u->cp = p->cp > 1 ? p->cp : 1;
    uint32_t stride;
    if (!tsl_cost_cp_group(&u->s, u->cp, &stride))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: context parallelism %u does not divide the data-parallel degree",
                            v->target, u->cp);
    /* the CP ranks are the innermost of the innermost data level (cost.h) */
    for (uint32_t i = 0; u->cp > 1 && i < u->s.n_levels; i++) {
        if (u->s.dim[i] == TSL_DIM_DP || u->s.dim[i] == TSL_DIM_SDP) {
            uint32_t *d = u->s.dim[i] == TSL_DIM_DP ? &u->dp : &u->sdp;
            *d /= u->cp;
            break;
        }
    }
    uint32_t width = u->dp * u->sdp;
    if (p->micro_batch % width)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: a micro-batch of %u samples does not divide over %u "
                            "data-parallel ranks",
                            v->target, p->micro_batch, width);
    u->micro_per_rank = p->micro_batch / width;
    for (uint32_t i = 1; i <= v->n_blocks; i++)
        u->ckpt_blocks += v->layer[i].ckpt;
    return 0;
}

/* ---- the starting partition ---- */

/* Forward FLOPs of layers [a, b). fwd_flops already holds extra_fwd_flops (model.h):
 * adding it again weighed a soft-capped head or a scaled embedding twice. */
static double flops(const tsl_model_t *m, uint32_t a, uint32_t b)
{
    double f = 0;
    for (uint32_t i = a; i < b; i++)
        f += m->layers[i].fwd_flops;
    return f;
}

/* The weight of a stage, layers [a, b): forward FLOPs (span_flops) or priced time
 * (span_priced). */
typedef double (*span_fn)(const void *ctx, uint32_t a, uint32_t b);

static double span_flops(const void *ctx, uint32_t a, uint32_t b)
{
    return flops(ctx, a, b);
}

/* ctx: prefix sums S[0..n_layers], S[i] the weight of layers [0, i). */
static double span_priced(const void *ctx, uint32_t a, uint32_t b)
{
    const double *S = ctx;
    return S[b] - S[a];
}

/* First stage f blocks, last l, the P − 2 middle ones mid each: the split whose
 * largest stage (by span) is smallest, into first[0..P] and *worst. Megatron's shape,
 * which torchtitan and Galvatron also run. The MTP layers ride on the last stage with
 * the head (mtp.h): B counts the main model's blocks only. Ties keep the first found
 * (mid, then f, ascending). */
static bool ends_cut(const tsl_model_t *m, uint32_t P, span_fn span, const void *ctx,
                     uint32_t *first, double *worst_out)
{
    uint32_t B = m->n_layers - 2 - tsl_mtp_layers(m), best_f = 0, best_mid = 0;
    double best = INFINITY;
    if (P == 1) {
        first[0] = 0;
        first[1] = m->n_layers;
        *worst_out = span(ctx, 0, m->n_layers);
        return true;
    }
    for (uint32_t mid = P > 2 ? 1 : 0; mid * (P - 2) + 2 <= B; mid++) {
        uint32_t rest = B - mid * (P - 2);
        for (uint32_t f = 1; f < rest; f++) {
            uint32_t l = rest - f;
            double worst = fmax(span(ctx, 0, 1 + f), span(ctx, B + 1 - l, m->n_layers));
            if (P > 2)
                worst = fmax(worst, span(ctx, 1 + f, 1 + f + mid));
            if (worst < best) {
                best = worst;
                best_f = f;
                best_mid = mid;
            }
        }
        if (P == 2)
            break;
    }
    if (!isfinite(best))
        return false;
    first[0] = 0;
    for (uint32_t s = 1; s < P; s++)
        first[s] = 1 + best_f + (s - 1) * best_mid;
    first[P] = m->n_layers;
    *worst_out = best;
    return true;
}

static bool partition_ends(const tsl_model_t *m, uint32_t P, uint32_t *first)
{
    double worst;
    return ends_cut(m, P, span_flops, m, first, &worst);
}

bool tsl_target_ends_cut(const tsl_model_t *m, uint32_t P, const double *layer_s, uint32_t *first,
                         double *worst_s)
{
    double S[TSL_MODEL_MAX_LAYERS + 1];
    if (P == 0 || P > TSL_PLAN_MAX_STAGES || m->n_layers < 3 ||
        m->n_layers > TSL_MODEL_MAX_LAYERS || P > m->n_layers - 2 - tsl_mtp_layers(m))
        return false;
    S[0] = 0;
    for (uint32_t i = 0; i < m->n_layers; i++) {
        if (!isfinite(layer_s[i]) || layer_s[i] < 0)
            return false;
        S[i + 1] = S[i] + layer_s[i];
    }
    return ends_cut(m, P, span_priced, S, first, worst_s);
}

/* Transformer layers of m, the units DeepSpeed's 'type:transformer' weighs: every
 * layer but the embedding and the head (the deepspeed target takes no MTP model). */
static uint32_t ds_blocks(const tsl_model_t *m)
{
    return m->n_layers - 2;
}

/* Whether every stage of first[0..P] holds a Transformer layer: the fork's GPTModelPipe
 * "fails unless each stage has at least one transformer layer" (gpt_model.py at 8387ae17),
 * and a stage of the embedding or the head alone is no stage Tessel prices. */
static bool ds_stages_hold_blocks(const tsl_model_t *m, uint32_t P, const uint32_t *first)
{
    for (uint32_t s = 0; s < P; s++) {
        uint32_t a = first[s] > 1 ? first[s] : 1,
                 b = first[s + 1] < m->n_layers - 1 ? first[s + 1] : m->n_layers - 1;
        if (b <= a)
            return false;
    }
    return true;
}

/* DeepSpeed's 'type:transformer' cut (partition_balanced over weights 1 for the blocks and
 * 0 for the rest, ds_partition.h) of the layer list the export describes, one PipelineModule
 * layer a Tessel layer: [embedding, blocks..., head]. Where P divides the blocks that is
 * equal blocks with the embedding on the first stage and the head on the last (the one cut
 * of cost 0); else the programme's uneven cut, run here. Megatron-DeepSpeed's GPTModelPipe
 * list puts more zero-weight layers around the blocks (a cast, a transpose, undo, the final
 * norm, the cast back): the programme cuts its blocks alike (test_target compares the two
 * lists up to 128 blocks and 64 stages; bench/stack_configs.py runs DeepSpeed's own
 * functions on each export's list). False out of memory. */
static bool ds_cut_blocks(const tsl_model_t *m, uint32_t P, uint32_t *first)
{
    uint32_t blocks = ds_blocks(m);
    if (blocks % P == 0) {
        for (uint32_t s = 0; s <= P; s++)
            first[s] = s == 0 ? 0 : s == P ? m->n_layers : 1 + s * (blocks / P);
        return true;
    }
    uint64_t w[TSL_MODEL_MAX_LAYERS];
    for (uint32_t i = 0; i < m->n_layers; i++)
        w[i] = i > 0 && i + 1 < m->n_layers;
    return tsl_ds_partition_balanced(w, m->n_layers, P, first) == 0;
}

/* One of DeepSpeed's cuts of m into P stages (first[0..P]): 'uniform' over every layer
 * where P divides them (equal counts, which every DeepSpeed version cuts alike), or by_blocks
 * 'type:transformer' (ds_cut_blocks) where every stage then holds a Transformer layer; false
 * where neither is one. */
static bool ds_cut(const tsl_model_t *m, uint32_t P, bool by_blocks, uint32_t *first)
{
    if (P == 0 || P > TSL_PLAN_MAX_STAGES || m->n_layers < 3)
        return false;
    if (by_blocks)
        return P <= ds_blocks(m) && ds_cut_blocks(m, P, first) &&
               ds_stages_hold_blocks(m, P, first);
    if (m->n_layers % P != 0)
        return false;
    for (uint32_t s = 0; s <= P; s++)
        first[s] = s * (m->n_layers / P);
    return true;
}

/* Whether stage_count[0..P) are the stages of that cut. */
static bool ds_cut_is(const tsl_model_t *m, uint32_t P, bool by_blocks, const uint32_t *stage_count)
{
    uint32_t first[TSL_PLAN_MAX_STAGES + 1];
    if (!ds_cut(m, P, by_blocks, first))
        return false;
    for (uint32_t s = 0; s < P; s++)
        if (stage_count[s] != first[s + 1] - first[s])
            return false;
    return true;
}

const char *tsl_target_ds_partition(const tsl_model_t *m, uint32_t P, const uint32_t *stage_count)
{
    if (P < 2 || m->n_layers < 3)
        return NULL;
    return ds_cut_is(m, P, false, stage_count)  ? "uniform"
           : ds_cut_is(m, P, true, stage_count) ? "type:transformer"
                                                : NULL;
}

bool tsl_target_ds_blocks_cut(const tsl_model_t *m, uint32_t P, uint32_t *first)
{
    return ds_cut(m, P, true, first);
}

/* DeepSpeed's cut of m into P stages (PipelineModule._partition_layers, runtime/pipe/
 * module.py at edaa722): 'uniform' (partition_uniform over every layer) where P divides
 * the layer count, else 'type:transformer' (partition_balanced over the Transformer
 * layers weighted 1, the rest 0: Megatron-DeepSpeed's GPTModelPipe default): equal blocks
 * where P divides them (cost model 104), else, since cost model 111, the balanced
 * programme's uneven cut, each stage at least one block. The uneven 'uniform' cut
 * (partition_uniform's first n mod P stages one layer longer) is not weighed beside it:
 * the engine takes one cut a depth (search_engine.c), and this is the one
 * Megatron-DeepSpeed runs by default. */
static bool ds_partition(const tsl_model_t *m, uint32_t P, uint32_t *first)
{
    if (!ds_cut(m, P, false, first) && !ds_cut(m, P, true, first))
        return false;
    /* equal counts that would cut an MTP depth off the head: the engine's own cut */
    return tsl_partition_cuts_ok(first, P, tsl_partition_max_cut(m));
}

bool tsl_target_tied_pp_refused(uint32_t t, const tsl_model_t *m, uint32_t pp)
{
    if (t != TSL_TARGET_TORCHTITAN || pp <= 1)
        return false;
    for (uint32_t i = 0; i < m->n_layers; i++)
        if (m->layers[i].kind == TSL_LAYER_HEAD && m->layers[i].tied_head)
            return true;
    return false;
}

int tsl_target_pp_ok(uint32_t t, const tsl_model_t *m, uint32_t pp, tsl_err_t *err)
{
    uint32_t first[TSL_PLAN_MAX_STAGES + 1];
    if (tsl_target_tied_pp_refused(t, m, pp))
        return tsl_err_set(err,
                           "pp: %u stages under target torchtitan with model %s's head tied to "
                           "its embedding; torchtitan raises NotImplementedError for weight "
                           "tying with pipeline parallelism (models/common/decoder.py): give "
                           "pp 1 or leave it open",
                           pp, m->name);
    /* a pp past the stage limit is the request check's to name */
    if (t != TSL_TARGET_DEEPSPEED || pp < 2 || pp > TSL_PLAN_MAX_STAGES || m->n_layers < 3 ||
        ds_partition(m, pp, first))
        return 0;
    return tsl_err_set(err,
                       "pp: %u stages under target deepspeed; its PipelineModule's 'uniform' "
                       "partition gives every stage the same number of model %s's %u layers "
                       "(embedding and head included), which %u does not divide, and "
                       "'type:transformer' needs a Transformer layer on every stage, of which "
                       "the model has %u",
                       pp, m->name, m->n_layers, pp, ds_blocks(m));
}

bool tsl_target_partition(uint32_t t, const tsl_model_t *m, uint32_t P, uint32_t *first)
{
    if (P == 0 || m->n_layers < 3 || P > m->n_layers - 2)
        return false;
    if (t != TSL_TARGET_DEEPSPEED)
        return partition_ends(m, P, first);
    return ds_partition(m, P, first);
}

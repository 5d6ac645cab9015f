/*
 * export.c — what every export shares: the format table, the check of the plan
 * against the target's space (planner/target.h, before any writer runs), and
 * the way back from a stored plan document.
 */
#include "export.h"
#include "cuda_graph.h"
#include "module_prec.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef int (*export_fn)(const tsl_export_view_t *v, FILE *out, tsl_err_t *err);

static const struct {
    const char *name, *content_type;
    export_fn fn;
} formats[TSL_EXPORT_COUNT] = {
    [TSL_EXPORT_MEGATRON] = {"megatron", "text/plain", tsl_export_megatron},
    [TSL_EXPORT_DEEPSPEED] = {"deepspeed", "application/json", tsl_export_deepspeed},
    [TSL_EXPORT_TORCHTITAN] = {"torchtitan", "text/x-python", tsl_export_torchtitan},
    [TSL_EXPORT_GALVATRON] = {"galvatron", "application/json", tsl_export_galvatron},
};

/* Formats past the stacks' own (export.h): another form for a stack's older
 * releases, checked against that stack's space. */
static const struct {
    tsl_export_format_t f;
    const char *name, *content_type;
    uint32_t target;
    export_fn fn;
} variants[] = {
    {TSL_EXPORT_TORCHTITAN_TOML, "torchtitan-toml", "application/toml", TSL_TARGET_TORCHTITAN,
     tsl_export_torchtitan_toml},
};

#define N_VARIANTS (sizeof variants / sizeof variants[0])

static int variant_of(tsl_export_format_t f)
{
    for (size_t i = 0; i < N_VARIANTS; i++)
        if (variants[i].f == f)
            return (int)i;
    return -1;
}

int tsl_export_format_parse(const char *name, tsl_export_format_t *out, tsl_err_t *err)
{
    for (int f = 0; f < TSL_EXPORT_COUNT; f++) {
        if (strcasecmp(name, formats[f].name) == 0) {
            *out = (tsl_export_format_t)f;
            return 0;
        }
    }
    for (size_t i = 0; i < N_VARIANTS; i++) {
        if (strcasecmp(name, variants[i].name) == 0) {
            *out = variants[i].f;
            return 0;
        }
    }
    /* the names from the two tables, so that the list never names a format
     * this parser refuses (json and trace are its callers' own); appended with
     * the room left, so that a format added to a table cuts the list short
     * rather than writing past it */
    char known[128] = "";
    size_t n = 0;
    for (size_t i = 0; i < TSL_EXPORT_COUNT + N_VARIANTS && n < sizeof known; i++) {
        const char *nm =
            i < TSL_EXPORT_COUNT ? formats[i].name : variants[i - TSL_EXPORT_COUNT].name;
        int w = snprintf(known + n, sizeof known - n, "%s%s", i ? ", " : "", nm);
        n += w > 0 ? (size_t)w : 0;
    }
    char shown[TSL_ERR_SHOWN_MAX(40)]; /* the name as a message may show it (err.h) */
    return tsl_err_set(err, "format: '%s' is not one of %s",
                       tsl_err_shown(name, 40, shown, sizeof shown), known);
}

const char *tsl_export_format_name(tsl_export_format_t f)
{
    int k = variant_of(f);
    return f < TSL_EXPORT_COUNT ? formats[f].name : k >= 0 ? variants[k].name : "?";
}

const char *tsl_export_content_type(tsl_export_format_t f)
{
    int k = variant_of(f);
    return f < TSL_EXPORT_COUNT ? formats[f].content_type
           : k >= 0             ? variants[k].content_type
                                : "application/octet-stream";
}

/* The plan is in the target's space (the same predicate `plan --target`
 * searches under); where it is not, the message says how to get one that is
 * (unless the stack cannot run the model at all: re-planning would not help, or
 * the reason says it already: "plan again with --target megatron (or
 * --no-zero-bubble)" was followed by "; re-plan with --target megatron ..."). */
static int check_target(uint32_t t, const tsl_plan_t *p, const tsl_model_t *m, tsl_export_view_t *v,
                        tsl_err_t *err)
{
    if (tsl_target_check(t, p, m, v, err) == 0)
        return 0;
    char again[64]; /* a reason that already says to plan with --target t needs no hint */
    snprintf(again, sizeof again, "with --target %s", tsl_target_name(t));
    if (err && tsl_err_code(err) == TSL_E_UNSUPPORTED && tsl_target_model_ok(t, m, NULL) == 0 &&
        strstr(err->msg, again) == NULL) {
        static const char *const stack[TSL_TARGET_COUNT] = {[TSL_TARGET_MEGATRON] = "Megatron-LM",
                                                            [TSL_TARGET_DEEPSPEED] = "DeepSpeed",
                                                            [TSL_TARGET_TORCHTITAN] = "torchtitan",
                                                            [TSL_TARGET_GALVATRON] = "Galvatron"};
        size_t n = strlen(err->msg);
        snprintf(err->msg + n, sizeof err->msg - n,
                 "; re-plan with --target %s to search only what %s runs", tsl_target_name(t),
                 stack[t]);
    }
    return -1;
}

/* What of the plan's pricing only Megatron-LM runs (docs/exports.md): its
 * recompute of named modules (and torchtitan's of its ops, which megatron does not run:
 * tsl_target_recompute_runs), its precision-aware optimizer's bf16 moments, its
 * activation CPU offloading, its per-layer CUDA graphs, Megatron-core's per-module
 * precision, the blocks it keeps bf16 under FP8 and TE's userbuffers.
 * Another stack's file would drop them silently: refused. */
static int check_megatron_only(tsl_export_format_t f, uint32_t target, const tsl_plan_t *p,
                               tsl_err_t *err)
{
    char mods[96];
    if (!tsl_target_recompute_runs(target, p->recompute_modules)) { /* torchtitan_op too */
        tsl_recompute_modules_format(p->recompute_modules, mods, sizeof mods);
        return tsl_err_setc(
            err, TSL_E_UNSUPPORTED, "%s: the plan recomputes modules (%s) as %s does; %s",
            tsl_export_format_name(f), mods, tsl_target_recompute_policy(p->recompute_modules),
            tsl_target_recompute_instead(target));
    }
    if (f == TSL_EXPORT_MEGATRON)
        return 0;
    if (p->bf16_moments)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: the plan keeps Adam's moments in bf16 beside an fp32 master "
                            "(Megatron-LM's precision-aware optimizer); this stack has no such "
                            "setting",
                            tsl_export_format_name(f));
    if (p->cpu_offload_layers)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: the plan offloads %u layers' activations to the host "
                            "(cpu_offload_layers, Megatron-LM's --cpu-offloading-num-layers); "
                            "this export writes no such setting",
                            tsl_export_format_name(f), p->cpu_offload_layers);
    if (p->cuda_graph_modules) { /* priced with their ops off the host: not dropped */
        tsl_cuda_graph_modules_format(p->cuda_graph_modules, mods, sizeof mods);
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: the plan was priced with Megatron-core's CUDA graphs of %s "
                            "(cuda_graph_modules, Megatron-LM's --cuda-graph-modules); this "
                            "stack has no such setting",
                            tsl_export_format_name(f), mods);
    }
    if (p->module_prec) { /* priced module by module: one recipe would not be the plan */
        char prec[160];
        tsl_module_prec_format(p->module_prec, prec, sizeof prec);
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: the plan runs linears at their own precision "
                            "(module_precision %s, Megatron-core's per-module quant_recipe); "
                            "this stack has no such setting",
                            tsl_export_format_name(f), prec);
    }
    if (p->bf16_layers_start || p->bf16_layers_end)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: the plan keeps its first %u and last %u blocks in bf16 "
                            "(bf16_layers_start / bf16_layers_end, Megatron-LM's "
                            "--first-last-layers-bf16); this stack has no such setting",
                            tsl_export_format_name(f), p->bf16_layers_start, p->bf16_layers_end);
    if (p->tp_comm_overlap) /* priced with it: refused, as cpu_offload_layers, not dropped */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: the plan was priced with TransformerEngine's userbuffers "
                            "(tp_comm_overlap, Megatron-LM's --tp-comm-overlap); this stack "
                            "runs none",
                            tsl_export_format_name(f));
    return 0;
}

int tsl_export(tsl_export_format_t f, const tsl_plan_t *p, const tsl_model_t *m, char **text,
               size_t *len, tsl_err_t *err)
{
    *text = NULL;
    *len = 0;
    int k = variant_of(f);
    if (f >= TSL_EXPORT_COUNT && k < 0)
        return tsl_err_set(err, "format: %d is not an export format", (int)f);
    uint32_t target = k >= 0 ? variants[k].target : (uint32_t)f + 1;
    export_fn fn = k >= 0 ? variants[k].fn : formats[f].fn;
    tsl_export_view_t *v = malloc(sizeof(*v));
    char *buf = NULL;
    size_t n = 0;
    FILE *out = NULL;
    int rc = -1;
    if (v == NULL || (out = open_memstream(&buf, &n)) == NULL) {
        tsl_err_setc(err, TSL_E_NOMEM, "export: out of memory");
        goto out;
    }
    if (check_megatron_only(f, target, p, err) != 0 || check_target(target, p, m, v, err) != 0 ||
        fn(v, out, err) != 0)
        goto out;
    if (fclose(out) != 0) {
        out = NULL;
        tsl_err_setc(err, TSL_E_NOMEM, "export: out of memory");
        goto out;
    }
    out = NULL;
    *text = buf;
    *len = n;
    buf = NULL;
    rc = 0;
out:
    if (out)
        fclose(out);
    free(buf);
    free(v);
    return rc;
}

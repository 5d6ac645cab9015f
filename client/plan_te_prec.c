/*
 * plan_te_prec.c — `tesselctl plan --te-precision-config-file PATH`: Megatron-LM's
 * per-module precision YAML read into the request's module_precision, with eval's
 * rules for such a file (docs/tesselctl.md "plan"), every message naming the flag.
 *
 * Megatron-core overrides a quantized autocast's modules only
 * (override_nonquantized_autocast false, megatron_te_prec.h), so a file on a request
 * that weighs no FP8 plan (--no-fp8, --fp32, --fp16, a cluster without the recipe)
 * overrides nothing: Megatron-LM runs such a launch line, eval --megatron-args notes
 * it (eval_cfg.c mg_te_prec), and so does plan here, dropping the field. The switch
 * --module-precision asks for an override itself: there the search refuses it
 * (search.c module_prec_request_check), as eval does.
 */
#include <stdio.h>
#include <string.h>

#include "cluster_json.h"
#include "commands.h"
#include "megatron_te_prec.h"
#include "search.h"
#include "target.h"

/* The reason no FP8 plan is weighed for r (the flag that turns FP8 off, or the
 * cluster's GPU without the recipe) into why; false where FP8 plans are weighed or
 * the cluster is not known here (registered: tesseld's workers, whose refusal of the
 * overrides makes remote.c ask again without them, with this note). */
static bool no_fp8_plan(const tsl_plan_opts_t *po, char *why, size_t cap)
{
    const tsl_request_t *r = &po->req;
    const char *off = r->no_fp8 ? "--no-fp8" : r->fp32 ? "--fp32" : r->fp16 ? "--fp16" : NULL;
    if (off != NULL) {
        snprintf(why, cap, "%s weighs no FP8 plan", off);
        return true;
    }
    if (po->cluster == NULL || strcmp(po->cluster, "registered") == 0 || po->nodes != NULL)
        return false;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    if (tsl_cluster_from_arg(po->cluster, &c, &err) != 0)
        return false; /* refused where the plan loads it, with the reason */
    uint32_t recipe = r->fp8_recipe ? r->fp8_recipe : tsl_target_fp8_recipe(r->target);
    bool none = tsl_cluster_fp8_ok(&c, recipe, &err) != 0;
    tsl_cluster_free(&c);
    if (none)
        snprintf(why, cap, "no FP8 plan is weighed on this cluster (%s)", err.msg);
    return none;
}

/* What the search would refuse of the file's overrides, named by the flag: a target
 * other than megatron, --fp8-param-gather (search.c module_prec_request_check). */
static int te_prec_refused(const tsl_plan_opts_t *po)
{
    const tsl_request_t *r = &po->req;
    if (r->target && r->target != TSL_TARGET_MEGATRON && r->target < TSL_TARGET_COUNT) {
        fprintf(stderr,
                "tesselctl: module_precision: --te-precision-config-file under --target %s: "
                "linears at their own precision are Megatron-core's per-module quant_recipe; "
                "Tessel exports them "
                "to megatron only: drop --te-precision-config-file or --target %s\n",
                tsl_target_name(r->target), tsl_target_name(r->target));
        return tsl_errcode_exit(TSL_E_UNSUPPORTED);
    }
    if (r->fp8_param_gather) {
        fputs("tesselctl: module_precision: --te-precision-config-file with --fp8-param-gather: "
              "Megatron-LM "
              "matches the per-module overrides after initialization, so FP8 weights would be "
              "built for the overridden modules as well, which Tessel does not price: drop "
              "one\n",
              stderr);
        return tsl_errcode_exit(TSL_E_UNSUPPORTED);
    }
    return TSL_EXIT_OK;
}

void tsl_plan_te_prec_unused(const char *why)
{
    fprintf(stderr,
            "tesselctl: plan: note: --te-precision-config-file: its overrides apply "
            "inside a quantized autocast only, and %s, so nothing is overridden\n",
            why);
}

/* --te-precision-config-file PATH into po->req.module_prec, read as eval
 * --megatron-args reads it once every option is in: the recipe its modules are
 * checked against is the FP8 plans' (--fp8-recipe, else the target's), the MTP
 * depths --mtp-layers' (assumed: none where it is not given, the model's own depths
 * not being known before the model is loaded). 0, or an exit code (reported). */
int tsl_plan_te_prec(tsl_plan_opts_t *po)
{
    tsl_request_t *r = &po->req;
    tsl_err_t err = {0};
    if (!po->te_prec_file)
        return TSL_EXIT_OK;
    if (r->module_prec) {
        fputs("tesselctl: plan: --module-precision and --te-precision-config-file both give "
              "the per-module precision (module_precision); give one\n",
              stderr);
        return TSL_EXIT_USAGE;
    }
    uint32_t recipe = r->fp8_recipe ? r->fp8_recipe : tsl_target_fp8_recipe(r->target);
    if (tsl_megatron_te_prec_read(po->te_prec_file, recipe, r->no_mtp ? 0 : r->mtp_layers,
                                  &r->module_prec, &err) != 0) {
        fprintf(stderr, "tesselctl: %s\n", err.msg);
        return tsl_errcode_exit(tsl_err_code(&err) == TSL_E_NONE ? TSL_E_INVALID
                                                                 : tsl_err_code(&err));
    }
    char why[TSL_ERR_MAX + 64];
    if (r->module_prec && no_fp8_plan(po, why, sizeof why)) {
        tsl_plan_te_prec_unused(why);
        r->module_prec = 0;
        return TSL_EXIT_OK;
    }
    return r->module_prec ? te_prec_refused(po) : TSL_EXIT_OK;
}

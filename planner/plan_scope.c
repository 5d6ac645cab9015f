/*
 * plan_scope.c — the plan-level fields Tessel's executor does not run, refused by name.
 *
 * The planner prices more than the executor runs. A trial exists to time the plan that
 * was priced, so a plan whose schedule, precision or memory switches the executor
 * would silently replace with its own must fail before any rank starts (tesseld
 * refuses to start such a trial), saying which field; the executor's layer-level
 * refusals (worker/exec/exec_rank.c check_layer) follow it.
 */
#include <stdio.h>

#include "memopt.h"
#include "pipesim.h"
#include "plan.h"
#include "recompute.h"
#include "roofline.h"

static int refuse(tsl_err_t *err, const char *what, const char *why)
{
    return tsl_err_setc(err, TSL_E_UNSUPPORTED, "plan: %s: %s", what, why);
}

/* H3T's per-layer switches (offload, partition, prefetch, recompute of the
 * economical parts): the executor runs a memopt plan only as plain ZeRO-3. */
static int check_memopt(const tsl_plan_t *p, tsl_err_t *err)
{
    if (p->memopt == 1 + TSL_MEMOPT_MODE_OFFLOAD)
        return refuse(err, "memopt zero3-offload",
                      "the executor keeps parameters and optimizer states on the device");
    for (uint32_t i = 0; p->memopt && i < p->n_layers; i++)
        if (p->layer_switches[i])
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "plan: layer %u: memory switches 0x%02x (H3T's offload, "
                                "partition, prefetch, recompute): the executor runs none",
                                i, p->layer_switches[i]);
    return 0;
}

void tsl_plan_trial_form(tsl_plan_t *p)
{
    if (p->schedule == TSL_PIPESIM_SCHED_ZBH1)
        p->schedule = TSL_PIPESIM_SCHED_1F1B;
}

int tsl_plan_exec_scope(const tsl_plan_t *p, tsl_err_t *err)
{
    char buf[160];
    if (p->schedule != TSL_PIPESIM_SCHED_1F1B) {
        if (p->schedule > TSL_PIPESIM_SCHED_DUALPIPEV) /* a name this build does not know */
            snprintf(buf, sizeof buf, "schedule %u (unknown to this build)", p->schedule);
        else
            snprintf(buf, sizeof buf, "schedule %s", tsl_pipesim_sched_name(p->schedule, 1));
        return refuse(err, buf, "the executor runs 1F1B and interleaved 1F1B");
    }
    if (p->cp > 1) {
        snprintf(buf, sizeof buf, "context parallelism %u", p->cp);
        return refuse(err, buf, "the executor runs every sequence whole on each rank");
    }
    if (p->etp > 1) {
        snprintf(buf, sizeof buf, "expert TP %u", p->etp);
        return refuse(err, buf, "the executor keeps each expert whole on its EP rank");
    }
    if (p->fp8_recipe) {
        snprintf(buf, sizeof buf, "FP8 linear GEMMs (%s)", tsl_fp8_recipe_name(p->fp8_recipe));
        return refuse(err, buf, "the executor runs bf16 (cuda) or fp32 (cpu) GEMMs");
    }
    if (p->moe_pad)
        return refuse(err, "MoE padding to capacity",
                      "the executor drops what exceeds the capacity and pads nothing");
    if (p->recompute_modules) {
        char mods[128];
        tsl_recompute_modules_format(p->recompute_modules, mods, sizeof mods);
        snprintf(buf, sizeof buf, "recompute modules %s", mods);
        return refuse(err, buf, "the executor recomputes whole layers (ckpt) or nothing");
    }
    if (p->bf16_moments)
        return refuse(err, "bf16 Adam moments", "the executor keeps Adam's moments in fp32");
    if (p->cpu_offload_layers) {
        snprintf(buf, sizeof buf, "cpu_offload_layers %u (activation CPU offloading)",
                 p->cpu_offload_layers);
        return refuse(err, buf, "the executor keeps every activation on the device");
    }
    return check_memopt(p, err);
}

int tsl_exec_scope_mamba(uint32_t mamba_layers, tsl_err_t *err)
{
    if (mamba_layers == 0)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "%u Mamba-2 mixer layers (a hybrid model): the executor runs "
                        "attention, FFN and MoE layers, no SSM scan",
                        mamba_layers);
}

int tsl_model_exec_scope(const tsl_model_t *m, tsl_err_t *err)
{
    for (uint32_t i = 0; m != NULL && i < m->n_layers; i++)
        if (m->layers[i].kind == TSL_LAYER_MAMBA) {
            tsl_exec_scope_mamba(tsl_model_mamba_layers(m), err);
            return tsl_err_prefix(err, "model %s (layer %u the first)", m->name, i);
        }
    return 0;
}

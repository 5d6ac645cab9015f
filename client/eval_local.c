/*
 * eval_local.c — `tesselctl eval`: the given plan from flags, a plan document,
 * a Megatron-LM argument line or a torchtitan TOML (eval_cfg.h), on the model
 * and cluster of the options (tsl_eval_input_load, shared with the remote
 * mode), costed here by common/eval_doc.h and printed by eval_print.c.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cluster_json.h"
#include "eval.h"
#include "eval_cmd.h"
#include "eval_doc.h"
#include "fp8_impl.h"
#include "json_num.h"
#include "loss_impl.h"
#include "mtp.h"
#include "norm_impl.h"
#include "opt_step.h"
#include "plan_json.h"
#include "remote.h"
#include "request.h"
#include "search.h"
#include "target.h"

/* What the import read differently from the stack, or left out, on stderr: a
 * person sees it whichever way the plan is then costed. */
static void print_notes(const tsl_eval_cfg_t *cfg)
{
    for (const char *s = cfg->notes, *nl; *s; s = nl + 1) {
        nl = strchr(s, '\n');
        if (nl == NULL)
            break;
        fprintf(stderr, "tesselctl: eval: note: %.*s\n", (int)(nl - s), s);
    }
}

/* The --plan document; a path that cannot be opened says why (errno), and a
 * directory, which opens but reads as nothing, says so before JSON would. A key
 * given twice is refused, as EvaluatePlan refuses it in plan_json
 * (handlers_eval.c): otherwise the last would silently win here, and the remote
 * mode, which sends the document as read here, would never see the second. */
static json_t *load_plan_doc(const char *path, tsl_err_t *err)
{
    FILE *f = fopen(path, "r");
    struct stat st;
    json_error_t je;
    if (f == NULL) {
        tsl_err_setc(err, TSL_E_INVALID, "plan: cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        tsl_err_setc(err, TSL_E_INVALID, "plan: %s: is a directory", path);
        return NULL;
    }
    json_t *doc = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
    fclose(f);
    if (doc == NULL)
        tsl_err_setc(err, TSL_E_INVALID, "plan: %s: line %d: %s", path, je.line, je.text);
    return doc;
}

static int read_source(const tsl_eval_opts_t *eo, tsl_eval_cfg_t *cfg, json_t **doc, tsl_err_t *err)
{
    *cfg = eo->cfg;
    if (eo->megatron_args)
        return tsl_eval_cfg_megatron(eo->megatron_args, cfg, err);
    if (eo->torchtitan) {
        char *text = NULL;
        if (tsl_remote_read_file("torchtitan", eo->torchtitan, 1 << 20, &text) != 0)
            return tsl_err_set(err, "torchtitan: cannot read '%s'", eo->torchtitan);
        int rc = tsl_eval_cfg_torchtitan(text, cfg, err);
        free(text);
        return rc;
    }
    if (eo->plan_file && (*doc = load_plan_doc(eo->plan_file, err)) == NULL)
        return -1;
    return 0;
}

/* The configuration the plan comes from (flags, Megatron-LM, torchtitan), or the
 * plan document (*doc) of --plan. */
static int load_source(const tsl_eval_opts_t *eo, tsl_eval_cfg_t *cfg, json_t **doc, tsl_err_t *err)
{
    if (read_source(eo, cfg, doc, err) != 0)
        return -1;
    print_notes(cfg);
    return 0;
}

/* The stack a --torchtitan or --megatron-args configuration names; TSL_TARGET_ANY
 * for flags or a plan document. */
static uint32_t config_stack(const tsl_eval_opts_t *eo)
{
    return eo->torchtitan      ? TSL_TARGET_TORCHTITAN
           : eo->megatron_args ? TSL_TARGET_MEGATRON
                               : TSL_TARGET_ANY;
}

/* The MTP depths a plan document's request was searched with (plan --json, plans
 * show --json), so that the plan given back is split on the layers it was found on:
 * the request read as every request document is (plan_json.h: its target by name or
 * by number) and its mtp_layers / no_mtp as tesseld reads them (eval_doc.h
 * tsl_eval_doc_mtp), else the target's rule (mtp.h),
 * the rule of stack t where eval names one (target.h), else of the request's
 * target: a torchtitan plan is searched without the model's own depths. */
static uint32_t doc_mtp_depths(const json_t *doc, uint32_t t, uint32_t own)
{
    tsl_request_t r;
    tsl_request_from_json(json_object_get(doc, "request"), &r);
    if (t == TSL_TARGET_ANY && r.target < TSL_TARGET_COUNT)
        t = r.target;
    uint32_t mtp_layers = 0;
    bool no_mtp = false;
    tsl_eval_doc_mtp(doc, &mtp_layers, &no_mtp);
    return tsl_target_mtp_depths(t, own, mtp_layers, no_mtp);
}

/* --model/--hf-config, or the plan document's model when it names a preset;
 * in->po keeps the options it was loaded by. */
static int load_model(const tsl_eval_opts_t *eo, const tsl_eval_cfg_t *cfg, tsl_eval_input_t *in,
                      tsl_err_t *err)
{
    tsl_plan_opts_t *po = &in->po;
    po->model = eo->model;
    po->hf_config = eo->hf_config;
    po->model_name = eo->model_name;
    /* two sequences asked for: --seq-len 512 beside a line's --seq-length 1024 priced
     * 512 without a word, as if the configuration said it */
    if (eo->seq_len && cfg->seq_len && eo->seq_len != cfg->seq_len)
        return tsl_err_set(err, "seq-len: %u, but the configuration says %u (%s); give one",
                           eo->seq_len, cfg->seq_len,
                           eo->torchtitan ? "torchtitan [training] seq_len"
                                          : "Megatron-LM --seq-length");
    po->seq_len = eo->seq_len ? eo->seq_len : cfg->seq_len;
    const json_t *jm = json_object_get(in->doc, "model");
    const char *doc_model = json_string_value(json_object_get(jm, "name"));
    if (!po->model && !po->hf_config && doc_model)
        po->model = doc_model;
    /* the document's sequence for its own model, named or not (--model, --hf-config,
     * or the document's preset): --model GPT2-345M
     * beside a plan searched at --seq-len 512 priced it at the preset's 1024. Asked
     * for only where it is not the model's own: a ViT or Swin preset refuses any
     * sequence asked (its image sets it), its own 197 too */
    uint32_t doc_seq = 0;
    if (tsl_plan_load_model(po, &in->model, err) != 0)
        return -1;
    /* the document's model: a preset by any spelling, an HF config by its name (not
     * one from standard input, which cannot be read again at another sequence);
     * eval_doc.h's rule, tesseld's EvaluatePlan's too */
    bool again = !po->hf_config || strcmp(po->hf_config, "-") != 0;
    if (!po->seq_len && again && tsl_eval_doc_seq_len(in->doc, &in->model, &doc_seq, err) != 0)
        return tsl_err_prefix(err, "plan: %s", eo->plan_file);
    if (doc_seq) {
        tsl_model_free(&in->model);
        po->seq_len = doc_seq;
        if (tsl_plan_load_model(po, &in->model, err) != 0)
            return -1;
    }
    /* the MTP depths the run trains (mtp.h): --no-mtp, --mtp-layers N, a Megatron-LM
     * line's --mtp-num-layers (none without it), a plan document's request, else the
     * model's own where the stack (--target, or the configuration's) trains them by
     * default, none where it does not, with a note (target.h); before the split,
     * which puts them with the head */
    uint32_t own = tsl_mtp_depths(&in->model), t = eo->target ? eo->target : config_stack(eo);
    uint32_t want = eo->no_mtp || eo->mtp_layers
                        ? tsl_target_mtp_depths(t, own, eo->mtp_layers, eo->no_mtp)
                    : cfg->mtp_read ? cfg->mtp_layers
                    : in->doc       ? doc_mtp_depths(in->doc, t, own)
                                    : tsl_target_mtp_depths(t, own, 0, false);
    in->mtp_dropped = want == 0 && own > 0;
    if (tsl_model_set_mtp(&in->model, want, err) != 0)
        return eo->no_mtp || eo->mtp_layers || cfg->mtp_read || !in->doc
                   ? -1
                   : tsl_err_prefix(err, "plan: %s: request", eo->plan_file);
    char note[400];
    if (tsl_target_mtp_note(t, in->model.name, own, want, note, sizeof note))
        fprintf(stderr, "tesselctl: eval: note: %s\n", note);
    return 0;
}

/* --strategy TEXT: its degrees for the batch arithmetic, then every layer's. */
static int plan_of_strategy(const tsl_eval_opts_t *eo, const tsl_model_t *m, uint32_t N,
                            tsl_plan_t *g, tsl_err_t *err)
{
    tsl_strategy_t s;
    if (tsl_strategy_parse(eo->strategy, &s, err) != 0)
        return tsl_err_prefix(err, "strategy");
    tsl_eval_cfg_t cfg = eo->cfg;
    cfg.tp = tsl_strategy_degree(&s, TSL_DIM_TP);
    cfg.dp = tsl_strategy_degree(&s, TSL_DIM_DP);
    cfg.sdp = tsl_strategy_degree(&s, TSL_DIM_SDP);
    cfg.sp = false;
    cfg.zero = 0;
    if (tsl_eval_cfg_plan(&cfg, m, N, g, err) != 0)
        return -1;
    for (uint32_t i = 0; i < m->n_layers; i++)
        g->layer[i] = s;
    return 0;
}

static int given_plan_of(const tsl_eval_opts_t *eo, const tsl_eval_cfg_t *cfg, tsl_eval_input_t *in,
                         tsl_err_t *err)
{
    if (in->doc)
        return tsl_eval_plan_of_json(in->doc, in->given, err);
    if (eo->strategy)
        return plan_of_strategy(eo, &in->model, in->cluster.n_devices, in->given, err);
    tsl_eval_cfg_t c = *cfg; /* the line's dropout against the model as the request prices it */
    c.shape.no_dropout = eo->no_dropout;
    return tsl_eval_cfg_plan(&c, &in->model, in->cluster.n_devices, in->given, err);
}

/* The FP8 recipe the evaluated plan runs: --fp8's, none under --no-fp8, else the
 * plan's (its document's or its --megatron-args line's); 0 for none. */
static uint32_t evaluated_fp8(const tsl_eval_opts_t *eo, const tsl_plan_t *g)
{
    return eo->fp8_recipe ? eo->fp8_recipe : eo->no_fp8 ? 0 : g->fp8_recipe;
}

/* --fp8-impl names who runs an FP8 recipe and --cp-comm the exchange between CP
 * ranks: on a plan that runs no FP8 (none given, the plan's or the line's, or
 * --no-fp8) or CP 1 each would price nothing, so it is refused naming the field,
 * as --tf32 is without fp32 (search.c fp32_request_check). */
static int check_inert_flags(const tsl_eval_opts_t *eo, const tsl_plan_t *g, tsl_err_t *err)
{
    uint32_t fp8 = evaluated_fp8(eo, g);
    if (eo->fp8_impl >= 0 && fp8 == 0)
        return tsl_err_set(err,
                           "fp8_impl: --fp8-impl %s on a plan without FP8 (%s): it names who "
                           "runs an FP8 recipe; give --fp8 RECIPE, or drop --fp8-impl",
                           tsl_fp8_impl_name((uint32_t)eo->fp8_impl),
                           eo->no_fp8 ? "--no-fp8" : "no --fp8, and none in the plan");
    if (eo->cfg.knobs.module_prec && fp8 == 0)
        return tsl_err_set(err,
                           "module_precision: per-module precision on a plan without FP8 (%s): "
                           "Megatron-core overrides only a quantized recipe's modules; give "
                           "--fp8 RECIPE, or drop --module-precision",
                           eo->no_fp8 ? "--no-fp8" : "no --fp8, and none in the plan");
    if (eo->cp_comm_given && g->cp <= 1)
        return tsl_err_set(err,
                           "cp_comm: --cp-comm %s with CP 1: it names the attention exchange "
                           "between CP ranks; give --cp N (N > 1), or drop --cp-comm",
                           tsl_cp_comm_name(eo->cfg.knobs.cp_comm));
    return 0;
}

/* A configuration's per-module precision (a --megatron-args line's
 * --te-precision-config-file, a plan document's module_precision) on a plan that runs
 * no FP8 (--no-fp8 over the line's or the document's recipe): Megatron-core overrides
 * a quantized autocast's modules only (override_nonquantized_autocast false), so it
 * overrides nothing, as Megatron-LM runs such a line: noted and dropped, as plan does
 * with --te-precision-config-file (plan_te_prec.c). --module-precision itself asks for
 * the override and is refused (check_inert_flags). */
static void config_module_prec_off(const tsl_eval_opts_t *eo, tsl_plan_t *g)
{
    if (!g->module_prec || eo->cfg.knobs.module_prec || evaluated_fp8(eo, g) != 0)
        return;
    fprintf(stderr,
            "tesselctl: eval: note: %s: its overrides apply inside a quantized autocast only, "
            "and the plan runs no FP8 (%s), so nothing is overridden\n",
            eo->megatron_args ? "--te-precision-config-file" : "the plan's module_precision",
            eo->no_fp8 ? "--no-fp8" : "none in the plan");
    g->module_prec = 0;
}

/* The given plan; --fp8-param-gather, --fp8-impl, --loss-impl, --opt-step, --norm-impl,
 * --tp-sync, --ds-pipe-p2p, --ds-pipe-engine, --torch-pipelining and --nccl-no-tree set its
 * fp8_param_gather, fp8_impl, loss_impl, opt_step, norm_impl, tp_sync, ds_pipe_p2p,
 * ds_pipe_engine, torch_pipelining and nccl_no_tree (and the plan document's,
 * which the remote mode sends as given): the FP8 ones priced where the plan or
 * --fp8 runs FP8. */
static int given_plan(const tsl_eval_opts_t *eo, const tsl_eval_cfg_t *cfg, tsl_eval_input_t *in,
                      tsl_err_t *err)
{
    if (given_plan_of(eo, cfg, in, err) != 0)
        return -1;
    config_module_prec_off(eo, in->given);
    if (check_inert_flags(eo, in->given, err) != 0)
        return -1;
    json_t *p = json_object_get(in->doc, "plan") ? json_object_get(in->doc, "plan") : in->doc;
    if (eo->fp8_param_gather) {
        in->given->fp8_param_gather = true;
        if (json_is_object(p))
            json_object_set_new(p, "fp8_param_gather", json_true());
    }
    if (eo->fp8_impl >= 0) { /* --fp8-impl: who runs the recipe (fp8_impl.h) */
        in->given->fp8_impl = (uint32_t)eo->fp8_impl;
        if (json_is_object(p))
            json_object_set_new(p, "fp8_impl", json_integer(eo->fp8_impl));
    }
    if (eo->loss_impl >= 0) { /* --loss-impl: how the LM loss runs (loss_impl.h) */
        in->given->loss_impl = (uint32_t)eo->loss_impl;
        if (json_is_object(p))
            json_object_set_new(p, "loss_impl", json_integer(eo->loss_impl));
    }
    if (eo->opt_step >= 0) { /* --opt-step: the stack's optimizer step (opt_step.h) */
        in->given->opt_step = (uint32_t)eo->opt_step;
        if (json_is_object(p))
            json_object_set_new(p, "opt_step", json_integer(eo->opt_step));
    }
    if (eo->norm_impl >= 0) { /* --norm-impl: whose fused LayerNorm (norm_impl.h) */
        in->given->norm_impl = (uint32_t)eo->norm_impl;
        if (json_is_object(p))
            json_object_set_new(p, "norm_impl", json_integer(eo->norm_impl));
    }
    if (eo->tp_sync) { /* --tp-sync: TP collectives between device synchronisations */
        in->given->tp_sync = true;
        if (json_is_object(p))
            json_object_set_new(p, "tp_sync", json_true());
    }
    if (eo->ds_pipe_p2p) { /* --ds-pipe-p2p: DeepSpeed's pipeline p2p (AMP's fork) */
        in->given->ds_pipe_p2p = true;
        if (json_is_object(p))
            json_object_set_new(p, "ds_pipe_p2p", json_true());
    }
    if (eo->ds_pipe_engine) { /* --ds-pipe-engine: DeepSpeed's PipelineEngine's p2p */
        in->given->ds_pipe_engine = true;
        if (json_is_object(p))
            json_object_set_new(p, "ds_pipe_engine", json_true());
    }
    if (eo->torch_pipelining) { /* --torch-pipelining: torch.distributed.pipelining */
        in->given->torch_pipelining = true;
        if (json_is_object(p))
            json_object_set_new(p, "torch_pipelining", json_true());
    }
    if (eo->nccl_no_tree) { /* --nccl-no-tree: the stack's NCCL_ALGO=^tree */
        in->given->nccl_no_tree = true;
        if (json_is_object(p))
            json_object_set_new(p, "nccl_no_tree", json_true());
    }
    char note[160]; /* tp_sync on a plan without TP: said, not refused (search.h) */
    if (tsl_tp_sync_note(NULL, 0, in->given, note, sizeof note))
        fprintf(stderr, "tesselctl: eval: note: %s\n", note);
    return 0;
}

/* The one-NIC trap (cluster.h tsl_cluster_nic_warning) on stderr, as plan notes it; not
 * for a registered cluster, whose NICs tesseld assembles. */
static void note_nics(const tsl_eval_opts_t *eo, const tsl_cluster_t *c)
{
    char line[1024];
    if (eo->cluster == NULL || strcmp(eo->cluster, "registered") == 0)
        return;
    const char *spec = tsl_cluster_arg_is_file(eo->cluster) ? NULL : eo->cluster;
    if (tsl_cluster_nic_warning(c, spec, line, sizeof line))
        fprintf(stderr, "tesselctl: eval: note: %s\n", line);
}

static int load_cluster(const tsl_eval_opts_t *eo, const char *cluster_json, tsl_cluster_t *c,
                        tsl_err_t *err)
{
    if (cluster_json) { /* --server's file, or the registered cluster tesseld assembled */
        if (tsl_cluster_json_parse(cluster_json, c, err) != 0)
            return -1;
        note_nics(eo, c);
        return 0;
    }
    if (eo->cluster == NULL)
        return tsl_err_set(err, "cluster: missing; give --cluster 8xA100-80G or a JSON file");
    if (tsl_cluster_from_arg(eo->cluster, c, err) != 0)
        return -1;
    /* tesseld's bounds on the figures (api/request.h), as plan --local holds them */
    if (tsl_request_check_cluster(c, err) != 0)
        return tsl_err_prefix(err, "%s", eo->cluster);
    note_nics(eo, c);
    return 0;
}

/* A plan document searched on measured or imported figures, priced here on
 * others, would be compared on different ground: say so (the search's own plan
 * gives ratio 1.0 only on the figures it was searched on). */
static void note_figures(const json_t *doc, const tsl_figures_load_t *f)
{
    const json_t *fig = json_object_get(doc, "figures");
    const char *compute = json_string_value(json_object_get(fig, "compute"));
    const char *line = json_string_value(json_object_get(fig, "line"));
    if (compute == NULL || strcmp(compute, "built-in") == 0 || f->prof != NULL)
        return;
    fprintf(stderr,
            "tesselctl: eval: note: the plan was searched on %s figures (%s); this prices it "
            "on the built-in ones: give the same --profile or --galvatron-profile to price it "
            "as the search did\n",
            compute, line && line[0] ? line : "see its figures");
}

/* --fp8-impl te and --opt-step fused are a plan document's 0, which a --target
 * prices as its own (docs/api.md): where the target's differs, the flag would
 * be dropped without a word, so it is refused naming the field. torchtitan runs
 * no Transformer Engine (its rule, exit 4); a stack's own step is the target's
 * default, and the executor's fused step under a stack is asked for by leaving
 * --target out (exit 2). */
static int check_target_zeros(const tsl_eval_opts_t *eo, tsl_err_t *err)
{
    tsl_cost_knobs_t k;
    if (!eo->target)
        return 0;
    tsl_target_knobs(eo->target, &k);
    if (eo->fp8_impl == TSL_FP8_IMPL_TE && tsl_target_fp8_impl(eo->target) != TSL_FP8_IMPL_TE)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "fp8_impl: %s runs FP8 through %s, not Transformer Engine "
                            "(--fp8-impl te); leave --fp8-impl out, or --target",
                            tsl_target_name(eo->target),
                            tsl_fp8_impl_name(tsl_target_fp8_impl(eo->target)));
    if (eo->opt_step == TSL_OPT_STEP_FUSED && k.opt_step != TSL_OPT_STEP_FUSED)
        return tsl_err_set(err,
                           "opt_step: fused under --target %s, which prices its own step (%s): "
                           "give --opt-step %s, or leave --target out for the executor's",
                           tsl_target_name(eo->target), tsl_opt_step_name(k.opt_step),
                           tsl_opt_step_name(k.opt_step));
    return 0;
}

/* The request's switches checked as a search checks them (tsl_request_knobs_check),
 * for the stack the configuration names: a torchtitan configuration runs neither
 * userbuffers nor Megatron-LM's activation offloading. */

/* A configuration is its stack t's run: a loss or an optimizer step the stack does
 * not run is refused, as its other switches are (tsl_request_knobs_check), not
 * priced as a what-if. */
static int check_config_stack(const tsl_eval_opts_t *eo, uint32_t t, tsl_err_t *err)
{
    if (t == TSL_TARGET_ANY)
        return 0;
    if (eo->loss_impl > 0 && !tsl_target_loss_runs(t, (uint32_t)eo->loss_impl))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "loss_impl: a %s configuration runs its LM loss as %s, not %s",
                            tsl_target_name(t), tsl_loss_impl_name(tsl_target_loss_impl(t)),
                            tsl_loss_impl_name((uint32_t)eo->loss_impl));
    if (eo->opt_step > 0 && !tsl_target_opt_step_runs(t, (uint32_t)eo->opt_step))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "opt_step: a %s configuration runs its own optimizer step, not %s",
                            tsl_target_name(t), tsl_opt_step_name((uint32_t)eo->opt_step));
    if (eo->tp_sync) /* neither stack times its TP collectives with device syncs */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "tp_sync: a %s configuration does not synchronise the device "
                            "around its TP collectives (AMP's Megatron-LM v1.1.5 fork does)",
                            tsl_target_name(t));
    if (eo->ds_pipe_p2p) /* none runs DeepSpeed's pipeline engine */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "ds_pipe_p2p: a %s configuration does not run DeepSpeed's pipeline "
                            "engine (AMP's DeepSpeed fork does)",
                            tsl_target_name(t));
    if (eo->ds_pipe_engine) /* likewise */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "ds_pipe_engine: a %s configuration does not run DeepSpeed's "
                            "pipeline engine",
                            tsl_target_name(t));
    if (eo->torch_pipelining && t != TSL_TARGET_TORCHTITAN) /* torchtitan's own */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "torch_pipelining: a %s configuration does not run "
                            "torch.distributed.pipelining",
                            tsl_target_name(t));
    if (eo->ds_bf16_optimizer) /* neither runs DeepSpeed's engine */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "ds_bf16_optimizer: a %s configuration does not run DeepSpeed's "
                            "BF16_Optimizer",
                            tsl_target_name(t));
    if (eo->launch_blocking) /* an environment of the launch, not a configuration's */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "launch_blocking: a %s configuration does not make every kernel "
                            "launch synchronous (CUDA_LAUNCH_BLOCKING=1)",
                            tsl_target_name(t));
    if (eo->ds_wall_clock) /* the configurations do not turn DeepSpeed's timers on */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "ds_wall_clock: a %s configuration does not run DeepSpeed's "
                            "synchronising timers (wall_clock_breakdown) around every pipeline "
                            "instruction",
                            tsl_target_name(t));
    if (eo->fp8_amax_tp_only) /* the configurations' TE ignores NVTE_DP_AMAX_REDUCE_INTERVAL */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "fp8_amax_tp_only: a %s configuration runs a TE that ignores "
                            "NVTE_DP_AMAX_REDUCE_INTERVAL (removed in TE 73f8d90fe, v1.6)",
                            tsl_target_name(t));
    if (eo->ds_zero3_v03) /* the configurations run their own sharding */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "ds_zero3_v03: a %s configuration does not run DeepSpeed 0.3's "
                            "ZeRO-3",
                            tsl_target_name(t));
    if (eo->unfused_elementwise) /* the configurations name their fusions themselves */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "unfused_elementwise: a %s configuration does not run Megatron-LM "
                            "v1.1.5's unfused bias, mask and copy kernels (AMP's fork)",
                            tsl_target_name(t));
    if (eo->fp32) /* both configurations name their precision themselves */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "fp32: a %s configuration names its own precision (megatron: "
                            "neither --bf16 nor --fp16; torchtitan: mixed_precision_param "
                            "\"float32\")",
                            tsl_target_name(t));
    if (eo->fp16) /* likewise */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "fp16: a %s configuration names its own precision (megatron: "
                            "--fp16; torchtitan has none)",
                            tsl_target_name(t));
    if (eo->ds_grad_bucket) /* both reduce their own buffers in place */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "ds_grad_bucket: a %s configuration does not reduce its gradients "
                            "through DeepSpeed's bucket",
                            tsl_target_name(t));
    if (eo->sdp_layer_roots) /* both run their own FSDP */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "sdp_layer_roots: a %s configuration runs its own FSDP, not "
                            "fairscale 0.4.5's with a root per layer",
                            tsl_target_name(t));
    if (eo->sdp_keep_weights) /* the configuration says how its FSDP runs */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "sdp_keep_weights: a %s configuration runs its own FSDP%s",
                            tsl_target_name(t),
                            t == TSL_TARGET_TORCHTITAN
                                ? " as its fsdp_reshard_after_forward says (\"never\" is torch "
                                  "FSDP's SHARD_GRAD_OP without PP)"
                                : ", not torch FSDP's SHARD_GRAD_OP");
    if (eo->tp_whole_heads) /* both split the heads over the TP group */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "tp_whole_heads: a %s configuration splits the attention heads "
                            "over the TP group",
                            tsl_target_name(t));
    return 0;
}

static int check_switches(const tsl_eval_opts_t *eo, tsl_err_t *err)
{
    tsl_request_t r;
    tsl_eval_request(eo, &r);
    uint32_t cs = config_stack(eo);
    if (cs && eo->target && eo->target != cs)
        return tsl_err_set(err, "target: %s: the plan comes from a %s configuration",
                           tsl_target_name(eo->target),
                           cs == TSL_TARGET_TORCHTITAN ? "torchtitan" : "Megatron-LM");
    if (check_target_zeros(eo, err) != 0 || check_config_stack(eo, cs, err) != 0)
        return -1;
    if (eo->mtp_layers && eo->no_mtp)
        return tsl_err_set(err, "mtp-layers: %u with --no-mtp: give one", eo->mtp_layers);
    if (eo->torchtitan)
        r.target = TSL_TARGET_TORCHTITAN;
    if (cs) /* the configuration names its precision: tf32 is checked against it (eval.c) */
        r.tf32 = false;
    return tsl_request_knobs_check(&r, err);
}

/* A Megatron-LM line on the cluster's GPUs. Where one is older than Ampere (V100,
 * T4: tsl_target_unfused_attn) Transformer Engine does not run, so the line runs
 * Megatron-LM's local impl, whose core attention is the unfused DotProductAttention:
 * priced as --unfused-attn, as --target megatron prices its plans there (cost model
 * 91; the line was priced with a fused kernel), its TE-only switches refused as the
 * search refuses them. And such a GPU has no bf16 tensor cores: a --bf16 line, which
 * the cost model would price as fp16 without a word, is refused naming the GPU. A line
 * that asks for the local impl (--transformer-impl local) runs that core on any GPU. */
static int check_megatron_gpus(const tsl_eval_opts_t *eo, const tsl_eval_cfg_t *cfg,
                               tsl_eval_input_t *in, tsl_err_t *err)
{
    if (config_stack(eo) != TSL_TARGET_MEGATRON)
        return 0;
    const tsl_gpu_spec_t *g = tsl_cluster_no_bf16(&in->cluster);
    if (g != NULL && !cfg->knobs.fp32 && !cfg->knobs.fp16)
        return tsl_err_set(err,
                           "megatron: --bf16, but the %s has no bf16 tensor cores (compute "
                           "capability below 8.0); Megatron-LM trains 16-bit there with --fp16: "
                           "give --fp16",
                           g->name);
    if (cfg->local_impl) {
        const char *te = tsl_target_te_only_knob(&cfg->knobs);
        if (te != NULL)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "megatron: %s runs in Transformer Engine, which "
                                "--transformer-impl local does not use",
                                te);
        in->unfused_attn = true;
    }
    if (!tsl_target_unfused_attn(TSL_TARGET_MEGATRON, &in->cluster))
        return 0;
    if (tsl_target_unfused_attn_ok(TSL_TARGET_MEGATRON, &in->cluster, &cfg->knobs, err) != 0)
        return tsl_err_prefix(err, "megatron");
    in->unfused_attn = true;
    return 0;
}

/* The stack eval prices the plan as and searches the comparison in: --target (any
 * included), else a plan document's request's target, so that a plan searched with
 * plan --target STACK is held to STACK's rules and compared within its space as
 * plan compared it, not with plans STACK cannot run. */
static int eval_target(const tsl_eval_opts_t *eo, const json_t *doc, uint32_t *target,
                       tsl_err_t *err)
{
    if (tsl_eval_doc_target(doc, eo->target_given, eo->target, target, err) != 0)
        return tsl_err_prefix(err, "plan: %s", eo->plan_file);
    return 0;
}

int tsl_eval_input_load(const tsl_eval_opts_t *eo, const char *cluster_json, tsl_eval_input_t *in,
                        tsl_err_t *err)
{
    tsl_eval_cfg_t cfg;
    memset(in, 0, sizeof *in);
    in->given = malloc(sizeof(*in->given));
    if (in->given == NULL)
        return tsl_err_setc(err, TSL_E_NOMEM, "out of memory");
    if (check_switches(eo, err) != 0 || load_source(eo, &cfg, &in->doc, err) != 0)
        return -1;
    /* the flags under the document's stack, as if --target had named it */
    tsl_eval_opts_t e = *eo;
    if (eval_target(eo, in->doc, &in->target, err) != 0)
        return -1;
    e.target = in->target;
    if ((e.target != eo->target && check_switches(&e, err) != 0) ||
        load_model(&e, &cfg, in, err) != 0 ||
        load_cluster(&e, cluster_json, &in->cluster, err) != 0 ||
        tsl_figures_load(e.profile, e.galvatron_profile, e.amp_profile, &in->model, &in->cluster,
                         &in->figures, err) != 0)
        return -1;
    note_figures(in->doc, &in->figures);
    in->unfused_attn = cfg.unfused_attn;
    in->no_host_floor = cfg.no_host_floor;
    if (check_megatron_gpus(eo, &cfg, in, err) != 0)
        return -1;
    return given_plan(&e, &cfg, in, err);
}

void tsl_eval_input_free(tsl_eval_input_t *in)
{
    json_decref(in->doc);
    tsl_model_free(&in->model);
    tsl_cluster_free(&in->cluster);
    tsl_figures_load_free(&in->figures);
    free(in->given);
    memset(in, 0, sizeof *in);
}

void tsl_eval_request(const tsl_eval_opts_t *eo, tsl_request_t *r)
{
    tsl_request_init(r);
    r->mem_budget_bytes = eo->mem_budget_bytes;
    r->unfused_attn = eo->unfused_attn;
    r->no_dropout = eo->no_dropout;
    r->mtp_layers = eo->mtp_layers;
    r->no_mtp = eo->no_mtp;
    r->bf16_layers_start = eo->bf16_layers_start;
    r->bf16_layers_end = eo->bf16_layers_end;
    r->autocast = eo->autocast;
    r->double_block_fwd = eo->double_block_fwd;
    r->eager = eo->eager;
    r->paper_cost = eo->paper_cost;
    r->no_host_floor = eo->no_host_floor;
    r->host_op_us = eo->host_op_us;
    r->grad_reduce_bytes = eo->grad_reduce_bytes;
    r->grad_buf_bytes = eo->grad_buf_bytes;
    r->ds_grad_bucket = eo->ds_grad_bucket;
    r->tp_whole_heads = eo->tp_whole_heads;
    r->sdp_nosync = eo->sdp_nosync;
    r->sdp_layer_roots = eo->sdp_layer_roots;
    r->sdp_keep_weights = eo->sdp_keep_weights;
    r->ds_bf16_optimizer = eo->ds_bf16_optimizer;
    r->launch_blocking = eo->launch_blocking;
    r->ds_wall_clock = eo->ds_wall_clock;
    r->ds_zero3_v03 = eo->ds_zero3_v03;
    r->fp8_amax_tp_only = eo->fp8_amax_tp_only;
    r->fp8_dpa = eo->fp8_dpa;
    r->unfused_elementwise = eo->unfused_elementwise;
    r->fp32 = eo->fp32;
    r->tf32 = eo->tf32;
    r->fp16 = eo->fp16;
    r->attn_kernel = eo->attn_kernel;
    r->no_fp32_master = eo->no_fp32_master;
    r->bf16_moments = eo->bf16_moments;
    r->lazy_grads = eo->lazy_grads;
    r->overlap_grad_reduce = eo->overlap_grad_reduce;
    r->no_overlap_grad_reduce = eo->no_overlap_grad_reduce;
    r->overlap_param_gather = eo->overlap_param_gather;
    r->overlap_tp_dgrad = eo->overlap_tp_dgrad;
    r->no_overlap_tp_dgrad = eo->no_overlap_tp_dgrad;
    r->unfused_grad_accum = eo->unfused_grad_accum;
    r->legacy_p2p = eo->legacy_p2p;
    r->tp_comm_overlap = eo->tp_comm_overlap;
    r->async_tp = eo->async_tp;
    r->fp8_recipe = eo->fp8_recipe;
    r->no_fp8 = eo->no_fp8;
    r->moe_imbalance = eo->moe_imbalance;
    r->moe_bf16_experts = eo->moe_bf16_experts;
    r->moe_fp8_dispatch = eo->moe_fp8_dispatch;
    r->moe_alltoall = eo->moe_alltoall;
    r->moe_flex = eo->moe_flex;
    r->moe_flex_backend = eo->moe_flex_backend;
    r->moe_unfused_permute = eo->moe_unfused_permute;
    r->moe_fused_mlp = eo->moe_fused_mlp;
    r->moe_fused_srelu = eo->moe_fused_srelu;
    r->moe_a2a_overlap = eo->moe_a2a_overlap;
    r->moe_a2a_wgrad_inline = eo->moe_a2a_wgrad_inline;
    r->vp_group = eo->vp_group;
    r->cpu_offload_layers = eo->cpu_offload_layers;
    r->target = eo->target;
}

void tsl_eval_input_request(const tsl_eval_opts_t *eo, const tsl_eval_input_t *in, tsl_request_t *r)
{
    tsl_eval_request(eo, r);
    r->target = in->target;
    r->unfused_attn |= in->unfused_attn;
    r->no_host_floor |= in->no_host_floor;
}

int tsl_eval_input_exit(const tsl_err_t *err)
{
    tsl_errcode_t code = tsl_err_code(err);
    return tsl_errcode_exit(code == TSL_E_NONE || code == TSL_E_NOTFOUND ? TSL_E_INVALID : code);
}

int tsl_eval_local(const tsl_eval_opts_t *eo, const tsl_client_opts_t *co)
{
    tsl_eval_input_t in;
    tsl_err_t err = {0};
    int rc;
    if (tsl_eval_input_load(eo, NULL, &in, &err) != 0) {
        fprintf(stderr, "tesselctl: eval: %s\n", err.msg);
        rc = tsl_eval_input_exit(&err);
    } else {
        tsl_request_t r;
        tsl_eval_input_request(eo, &in, &r);
        json_t *doc = NULL;
        if (tsl_eval_document(&in.model, &in.cluster, &r, in.given, !eo->no_search, NULL, &doc,
                              &err) != 0) {
            fprintf(stderr, "tesselctl: %s\n", err.msg);
            json_decref(doc);
            rc = tsl_errcode_exit(tsl_err_code(&err));
        } else {
            /* only for figures loaded here: a remote answer has none (same bytes) */
            if (in.figures.prof != NULL)
                json_object_set_new(doc, "figures", tsl_figures_load_json(&in.figures));
            rc = tsl_eval_print(doc, tsl_print_tie_of(&in.model), co);
        }
    }
    tsl_eval_input_free(&in);
    return rc;
}

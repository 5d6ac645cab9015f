/*
 * export.h — a plan written as another training stack takes it, in that stack's
 * own key names (docs/exports.md):
 *
 *   megatron    Megatron-LM launch arguments, one per line (text/plain); a plan's
 *               module_precision file (--te-precision-config-file) in "#| " comments
 *   deepspeed   a DeepSpeed config JSON (application/json)
 *   torchtitan  a torchtitan configuration in Python, a function returning
 *               Trainer.Config, as torchtitan main reads it since its TOML
 *               reader went (text/x-python)
 *   torchtitan-toml  the job TOML torchtitan v0.1.0 .. v0.2.2 read
 *               (application/toml)
 *   galvatron   a Galvatron strategy JSON, as its galvatron_config_*.json files
 *
 * A plan the target cannot express is refused, never exported approximately: the
 * call fails with TSL_E_UNSUPPORTED and a message that names the layer or stage
 * and the target's rule ("megatron: layer 0 (embedding) uses tp2-dp4 but layer 1
 * uses dp8; Megatron-LM runs every layer at one tensor-parallel degree").
 * Megatron-LM, DeepSpeed and torchtitan take one strategy for the whole model;
 * Galvatron takes one per Transformer layer. None of them cuts a stage inside a
 * layer, and none takes H3T's per-layer memory switches.
 *
 * The model is the source model the plan was searched for (a sub-layer plan is
 * folded back onto it: its attention and FFN blocks must share a strategy and a
 * stage). Models must have the shape [embedding, Transformer layers..., head].
 *
 * Pure apart from memory: nothing is written to a file or a descriptor here.
 */
#ifndef TSL_EXPORT_H
#define TSL_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "err.h"
#include "model.h"
#include "plan.h"
#include "target.h"

/* In the order of tsl_target_t (target.h): format f is target f + 1. */
typedef enum tsl_export_format {
    TSL_EXPORT_MEGATRON = 0,
    TSL_EXPORT_DEEPSPEED,
    TSL_EXPORT_TORCHTITAN,
    TSL_EXPORT_GALVATRON,
    TSL_EXPORT_COUNT,
    /* not a training stack: the simulated timeline of a stored plan
     * (tsl_export_stored only; trace_json.h), application/json */
    TSL_EXPORT_TRACE = TSL_EXPORT_COUNT + 1,
    /* torchtitan's job TOML for the releases that read one (target torchtitan) */
    TSL_EXPORT_TORCHTITAN_TOML = TSL_EXPORT_COUNT + 2
} tsl_export_format_t;

/* "megatron", ... (case-insensitive). Fails naming the known formats. */
int tsl_export_format_parse(const char *name, tsl_export_format_t *out, tsl_err_t *err);
const char *tsl_export_format_name(tsl_export_format_t f);
/* "text/plain", "application/json", "text/x-python", "application/toml". */
const char *tsl_export_content_type(tsl_export_format_t f);

/*
 * Writes plan p of model m in format f into a new NUL-terminated string *text
 * (its length in *len; free() it). On failure *text is NULL and err says why:
 * TSL_E_UNSUPPORTED when the target cannot express the plan, TSL_E_INVALID for
 * an invalid or empty plan, TSL_E_NOMEM.
 */
int tsl_export(tsl_export_format_t f, const tsl_plan_t *p, const tsl_model_t *m, char **text,
               size_t *len, tsl_err_t *err);

/*
 * A heterogeneous plan's placement, which no stack's launch arguments carry:
 * "heterogeneous placement: the stages take the cluster's nodes in the order
 * 1, 2, 0 (as the cluster lists them, from 0); list the hosts to the launcher,
 * and the cluster to tesselctl eval, in this order" into buf; "" (0) when the
 * plan keeps the cluster's own order (plan.h node_order). The exports that
 * hold comments write it as one; tesselctl notes it beside those that cannot.
 */
size_t tsl_export_placement(const tsl_plan_t *p, char *buf, size_t cap);
/* Room for the longest note: a placement over TSL_PLAN_MAX_ORDER_NODES nodes. */
#define TSL_EXPORT_NOTE_CAP 8192

/*
 * A plan priced with the stack's fp32 matmuls as TF32 (plan.h tf32, --tf32), which no
 * stack's arguments or keys turn on: "TF32: ... set torch.backends.cuda.matmul.allow_tf32
 * = True in the training script ..." into buf; "" (0) for any other plan. As the
 * placement: the exports that hold comments write it as one; tesselctl notes it beside
 * those that cannot.
 */
size_t tsl_export_tf32(const tsl_plan_t *p, char *buf, size_t cap);

/*
 * The notes format f's content cannot carry, for whoever hands the content on
 * (plan --export on stderr, ExportPlanResponse.notes): for the JSON formats
 * (deepspeed, galvatron) the placement, and for deepspeed the TF32 note — the
 * other formats write both as comments. Each note into notes[i] (cap bytes each)
 * for i below the returned count (at most TSL_EXPORT_MAX_NOTES).
 */
#define TSL_EXPORT_MAX_NOTES 2
size_t tsl_export_side_notes(tsl_export_format_t f, const tsl_plan_t *p,
                             char (*notes)[TSL_EXPORT_NOTE_CAP]);

/*
 * The plan object of a plan document (plan_json.h) back into a tsl_plan_t: the
 * fields an export reads (stages, per-layer strategies, batch, micro-batches,
 * granularity, memopt, label, figures). Memory switches are not read back: a
 * memopt plan comes back with memopt set, which every export refuses.
 */
int tsl_plan_from_json(const json_t *plan, tsl_plan_t *out, tsl_err_t *err);
/* 0 when each scalar key of the <plan> object o that is present has its kind
 * (plan_fields.h: a whole number in the type's range, a number, true/false),
 * its stages' too; else -1 with err naming the key ("plan: fp8_recipe: expected
 * a whole number, got a string"). tsl_plan_from_json checks it first. */
int tsl_plan_json_check(const json_t *o, tsl_err_t *err);

/*
 * Export of a plan the daemon stored: request_json is the request as the daemon
 * keeps it ({"model_preset": NAME} or {"hf_config": {...}}, "seq_len"), result_json
 * the search-result document. Rebuilds the model with the request's model
 * switches as the search applied them (search.h tsl_request_model_switches: MTP
 * depths under the target's rule, blocks kept bf16, unfused_attn, no_dropout),
 * so that the export is plan --local --export's, reads the document's "plan"
 * and calls tsl_export(), or for TSL_EXPORT_TRACE writes tsl_trace_plan()'s
 * Chrome trace (the stage timings the document stores: fwd_s, time_s,
 * time_nosync_s, p2p_s, interleave).
 */
int tsl_export_stored(tsl_export_format_t f, const char *request_json, const char *result_json,
                      char **text, size_t *len, tsl_err_t *err);

/*
 * tsl_export_side_notes of the plan a stored search-result document holds
 * (result_json: its "plan"); 0 where it holds none that parses (the export
 * itself reports that).
 */
size_t tsl_export_stored_notes(tsl_export_format_t f, const char *result_json,
                               char (*notes)[TSL_EXPORT_NOTE_CAP]);

/* ---- for the exporters (export_*.c) ------------------------------------------ */

/* The view and the shared rules live in planner/target.h: tsl_export() checks
 * the plan with tsl_target_check (the same predicate `plan --target` searches
 * under) before a writer runs, so the writers only write. */
typedef tsl_target_view_t tsl_export_view_t;
typedef tsl_target_uniform_t tsl_export_uniform_t;

int tsl_export_megatron(const tsl_export_view_t *v, FILE *out, tsl_err_t *err);
int tsl_export_deepspeed(const tsl_export_view_t *v, FILE *out, tsl_err_t *err);
int tsl_export_torchtitan(const tsl_export_view_t *v, FILE *out, tsl_err_t *err);
int tsl_export_torchtitan_toml(const tsl_export_view_t *v, FILE *out, tsl_err_t *err);
int tsl_export_galvatron(const tsl_export_view_t *v, FILE *out, tsl_err_t *err);

/* The file megatron's --te-precision-config-file names (export_megatron_prec.c). */
#define TSL_EXPORT_TE_PREC_FILE "te_precision.yaml"
/* A plan's module_precision as that file's YAML, in "#| " comment lines (nothing for a
 * plan without one; module_prec checked by the caller, tsl_module_prec_check). */
void tsl_export_megatron_prec(const tsl_plan_t *p, FILE *out);
/* Module m's path under a layer in Megatron-core (module_prec.h tsl_module_t), e.g.
 * "self_attention.linear_qkv"; that file's glob for it is "*." and this. NULL out of
 * range. eval's reader of the file (megatron_te_prec.c) matches the same paths. */
const char *tsl_export_megatron_prec_leaf(uint32_t m);

#endif

/*
 * plan_json_check.c — a <plan> object's scalar keys checked against their kinds
 * (plan_fields.h) before tsl_plan_from_json reads them: a hand-edited document's
 * "fp8_recipe": "5", "cpu_offload_layers": -1 or "tp_comm_overlap": 1 would
 * otherwise read as absent, and 1.5 or 2^32 as another number, and the plan be
 * priced as something it does not say. The document's "request" object likewise
 * against request_fields.h (tsl_request_json_check).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "json_num.h"
#include "loss_impl.h"
#include "module_prec.h"
#include "export.h"
#include "plan_fields.h"
#include "plan_json.h"
#include "request_fields.h"

/* A whole number from 0 to max; integral reals (2.0) pass, as some tools write them. */
static int check_whole(const json_t *o, const char *where, const char *key, double max,
                       tsl_err_t *err)
{
    const json_t *v = json_object_get(o, key);
    if (v == NULL)
        return 0;
    if (!json_is_number(v))
        return tsl_err_set(err, "%s%s: expected a whole number, got %s", where, key,
                           tsl_json_type_name(v));
    double x = json_number_value(v);
    if (json_is_integer(v) && json_integer_value(v) < 0)
        return tsl_err_set(err, "%s%s: %lld is negative", where, key,
                           (long long)json_integer_value(v));
    if (!(x >= 0) || x != floor(x))
        return tsl_err_set(err, "%s%s: %g is not a whole number >= 0", where, key, x);
    if (x > max && x < 1e18)
        return tsl_err_set(err, "%s%s: %.0f is out of range (at most %.0f)", where, key, x, max);
    if (x > max)
        return tsl_err_set(err, "%s%s: %g is out of range (at most %.0f)", where, key, x, max);
    return 0;
}

static int check_real(const json_t *o, const char *where, const char *key, tsl_err_t *err)
{
    const json_t *v = json_object_get(o, key);
    if (v == NULL || json_is_number(v))
        return 0;
    return tsl_err_set(err, "%s%s: expected a number, got %s", where, key, tsl_json_type_name(v));
}

static int check_bool(const json_t *o, const char *where, const char *key, tsl_err_t *err)
{
    const json_t *v = json_object_get(o, key);
    if (v == NULL || json_is_boolean(v))
        return 0;
    return tsl_err_set(err, "%s%s: expected true or false, got %s", where, key,
                       tsl_json_type_name(v));
}

#define CHECK_(c, kind, proto, json, when) CHECK_##kind(json)
#define CHECK_CUSTOM(json)                 /* each read_plan_* reads its own */
#define CHECK_U32(json)                                                                            \
    if (check_whole(o, where, json, (double)UINT32_MAX, err) != 0)                                 \
        return -1;
#define CHECK_U64(json)                                                                            \
    if (check_whole(o, where, json, 18446744073709551615.0, err) != 0)                             \
        return -1;
#define CHECK_REAL(json)                                                                           \
    if (check_real(o, where, json, err) != 0)                                                      \
        return -1;
#define CHECK_BOOL(json)                                                                           \
    if (check_bool(o, where, json, err) != 0)                                                      \
        return -1;

static int check_stage(const json_t *o, const char *where, tsl_err_t *err)
{
    TSL_PLAN_STAGE_FIELDS(CHECK_)
    return 0;
}

/* The hand-built keys (CUSTOM) their readers take by type: of another type each
 * read as absent — a "schedule": 2 as 1F1B, "granularity": "Sublayer" as whole
 * layers, "recompute_modules": "mlp" as none, "runs": {} as one strategy for the
 * stage — and the plan priced as something it does not say. */
static int check_type(const json_t *o, const char *where, const char *key, bool ok,
                      const char *want, tsl_err_t *err)
{
    const json_t *v = json_object_get(o, key);
    if (v == NULL || ok)
        return 0;
    return tsl_err_set(err, "%s%s: expected %s, got %s", where, key, want, tsl_json_type_name(v));
}

/* recompute_modules' bitmask (tessel.v1's form, whole or as an entry): 0 to
 * 2^32 - 1, the width the plan keeps; 2^32 + 8 was cut to 8 (mlp) and 2^40 to 0. */
static int check_module_mask(const json_t *v, const char *at, tsl_err_t *err)
{
    json_int_t x = json_integer_value(v);
    if (x < 0 || x > (json_int_t)UINT32_MAX)
        return tsl_err_set(err, "%s: %lld is not a module bitmask (0 to %u)", at, (long long)x,
                           UINT32_MAX);
    return 0;
}

/* Each entry of recompute_modules a module's name or a bitmask, as
 * tsl_recompute_of_json reads them: a null, 1.5 or "" was read as no module and
 * the plan priced without the recompute it names. */
static int check_modules(const json_t *rm, tsl_err_t *err)
{
    if (json_is_integer(rm))
        return check_module_mask(rm, "plan: recompute_modules", err);
    size_t i;
    const json_t *e;
    json_array_foreach(rm, i, e)
    {
        char at[48];
        snprintf(at, sizeof at, "plan: recompute_modules[%zu]", i);
        if (json_is_integer(e)) {
            if (check_module_mask(e, at, err) != 0)
                return -1;
        } else if (!json_is_string(e)) {
            return tsl_err_set(err, "%s: expected a module's name, got %s", at,
                               tsl_json_type_name(e));
        } else if (json_string_length(e) == 0) {
            return tsl_err_set(err, "%s: an empty name; give a module's name, e.g. \"mlp\"", at);
        }
    }
    return 0;
}

static int check_custom(const json_t *o, tsl_err_t *err)
{
    const char *w = "plan: ";
    const json_t *g = json_object_get(o, "granularity"),
                 *rm = json_object_get(o, "recompute_modules");
    const json_t *no = json_object_get(o, "node_order");
    if (check_type(o, w, "label", json_is_string(json_object_get(o, "label")), "a string", err) ||
        check_type(o, w, "schedule", json_is_string(json_object_get(o, "schedule")),
                   "a schedule's name (1F1B, interleaved, zbh1, zbv, dualpipev)", err) ||
        check_type(o, w, "recompute_modules", json_is_array(rm) || json_is_integer(rm),
                   "an array of module names (or tessel.v1's bitmask)", err) ||
        check_type(o, w, "node_order", json_is_array(no), "an array of node indices", err) ||
        check_type(o, w, "slicer", json_is_object(json_object_get(o, "slicer")), "an object",
                   err) ||
        check_type(o, w, "memopt", json_is_object(json_object_get(o, "memopt")), "an object",
                   err) ||
        check_type(o, w, "stages", json_is_array(json_object_get(o, "stages")), "an array", err) ||
        check_modules(rm, err))
        return -1;
    char shown[TSL_ERR_SHOWN_MAX(40)]; /* a raw newline would end the message's line */
    if (g && !(json_is_string(g) && (strcmp(json_string_value(g), "layer") == 0 ||
                                     strcmp(json_string_value(g), "sublayer") == 0)))
        return tsl_err_set(
            err, "plan: granularity: expected \"layer\" or \"sublayer\"%s%s",
            json_is_string(g) ? ", got " : "",
            json_is_string(g) ? tsl_err_shown(json_string_value(g), 40, shown, sizeof shown) : "");
    /* the reader keeps TSL_PLAN_MAX_ORDER_NODES: a longer order was read as none,
     * and a node past it as node 0 */
    if (json_array_size(no) > TSL_PLAN_MAX_ORDER_NODES)
        return tsl_err_set(err, "plan: node_order: %zu nodes; a plan orders at most %u",
                           json_array_size(no), TSL_PLAN_MAX_ORDER_NODES);
    size_t k;
    const json_t *e;
    json_array_foreach(no, k, e)
    {
        if (!json_is_integer(e) || json_integer_value(e) < 0 ||
            json_integer_value(e) >= TSL_PLAN_MAX_ORDER_NODES)
            return tsl_err_set(err, "plan: node_order[%zu]: expected a node index 0..%u", k,
                               TSL_PLAN_MAX_ORDER_NODES - 1);
    }
    return 0;
}

/* A V's second chunk (plan_json.c stage_custom_chunk1): an object of three times,
 * each a number >= 0, all given — one left out would read as 0 and the chunk be
 * simulated as running nothing. Which schedule and stages may carry it,
 * tsl_plan_from_json checks (read_v_chunks). */
static int check_chunk1(const json_t *st, const char *at, tsl_err_t *err)
{
    static const char *const keys[] = {"fwd_s", "bwd_s", "wgrad_s"};
    const json_t *c = json_object_get(st, "chunk1");
    if (c == NULL)
        return 0;
    if (!json_is_object(c))
        return tsl_err_set(
            err, "%schunk1: expected an object {\"fwd_s\", \"bwd_s\", \"wgrad_s\"}, got %s", at,
            tsl_json_type_name(c));
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        const json_t *v = json_object_get(c, keys[k]);
        if (v == NULL)
            return tsl_err_set(err, "%schunk1.%s: missing (a V chunk's times come as all three)",
                               at, keys[k]);
        if (!json_is_number(v))
            return tsl_err_set(err, "%schunk1.%s: expected a number, got %s", at, keys[k],
                               tsl_json_type_name(v));
        if (!(json_number_value(v) >= 0) || !isfinite(json_number_value(v)))
            return tsl_err_set(err, "%schunk1.%s: %g is not a time >= 0", at, keys[k],
                               json_number_value(v));
    }
    return 0;
}

int tsl_plan_json_check(const json_t *o, tsl_err_t *err)
{
    const char *where = "plan: ";
    TSL_PLAN_FIELDS(CHECK_)
    if (check_custom(o, err) != 0)
        return -1;
    size_t s;
    const json_t *st;
    json_array_foreach(json_object_get(o, "stages"), s, st)
    {
        char at[48];
        snprintf(at, sizeof at, "plan: stages[%zu].", s);
        if (check_stage(st, at, err) != 0 || check_chunk1(st, at, err) != 0 ||
            check_type(st, at, "runs", json_is_array(json_object_get(st, "runs")), "an array",
                       err) != 0)
            return -1;
    }
    return 0;
}

/* ---- the document's "request" object (request_fields.h) ---- */

/* A UINT key: a JSON integer 0..max (the table's max; 0 there: any uint32), as
 * tsl_request_from_json reads it; -1 read as 0 (the default), "2" as absent and
 * 2^32 + 1 as UINT32_MAX. */
static int req_uint(const json_t *v, const char *key, uint32_t max, tsl_err_t *err)
{
    uint32_t top = max ? max : UINT32_MAX;
    if (!json_is_integer(v))
        return tsl_err_set(err, "request.%s: expected a whole number 0..%u, got %s", key, top,
                           tsl_json_type_name(v));
    if (json_integer_value(v) < 0 || json_integer_value(v) > (json_int_t)top)
        return tsl_err_set(err, "request.%s: %lld is out of range; expected 0..%u", key,
                           (long long)json_integer_value(v), top);
    return 0;
}

/* A REAL key: a number, 0 (the default) or within the table's [min, max], the
 * range search.c request_bounds_check holds a request to. */
static int req_real(const json_t *v, const char *key, double min, double max, tsl_err_t *err)
{
    if (!json_is_number(v))
        return tsl_err_set(err, "request.%s: expected a number, got %s", key,
                           tsl_json_type_name(v));
    double x = json_number_value(v);
    if (x != 0 && !(x >= min && x <= max))
        return tsl_err_set(err, "request.%s: %g is not from %g to %g (0: the default)", key, x, min,
                           max);
    return 0;
}

/* recompute_modules: an array of names (or bitmasks), or tessel.v1's bitmask, as
 * the plan's own (check_modules); 2^63 - 1 read as UINT32_MAX, every module. */
static int req_modules(const json_t *v, tsl_err_t *err)
{
    if (json_is_integer(v))
        return check_module_mask(v, "request.recompute_modules", err);
    if (!json_is_array(v))
        return tsl_err_set(err,
                           "request.recompute_modules: expected an array of module names (or "
                           "tessel.v1's bitmask), got %s",
                           tsl_json_type_name(v));
    size_t i;
    const json_t *e;
    json_array_foreach(v, i, e)
    {
        char at[48];
        snprintf(at, sizeof at, "request.recompute_modules[%zu]", i);
        if (json_is_integer(e) ? check_module_mask(e, at, err) != 0 : !json_is_string(e))
            return json_is_integer(e) ? -1
                                      : tsl_err_set(err, "%s: expected a module's name, got %s", at,
                                                    tsl_json_type_name(e));
    }
    return 0;
}

/* loss_impl: an implementation's name (loss_impl.h) or its number; an unknown name
 * or 2^63 - 1 was read as 0, the target's own. */
static int req_loss(const json_t *v, tsl_err_t *err)
{
    char shown[TSL_ERR_SHOWN_MAX(40)];
    if (json_is_string(v) && tsl_loss_impl_parse(json_string_value(v)) < 0)
        return tsl_err_set(err, "request.loss_impl: '%s' is not " TSL_LOSS_IMPL_NAMES,
                           tsl_err_shown(json_string_value(v), 40, shown, sizeof shown));
    if (json_is_integer(v) &&
        (json_integer_value(v) < 0 || json_integer_value(v) >= (json_int_t)TSL_LOSS_IMPL_COUNT))
        return tsl_err_set(err, "request.loss_impl: %lld is not an implementation's number (0..%d)",
                           (long long)json_integer_value(v), TSL_LOSS_IMPL_COUNT - 1);
    if (!json_is_string(v) && !json_is_integer(v))
        return tsl_err_set(err, "request.loss_impl: expected an implementation's name, got %s",
                           tsl_json_type_name(v));
    return 0;
}

/* module_precision: the list (module_prec.h, as --module-precision reads it) or
 * tessel.v1's nibbles, each refused naming the field as the flag's and a gRPC
 * request's are. */
static int req_prec(const json_t *v, tsl_err_t *err)
{
    uint32_t prec = 0;
    if (json_is_string(v))
        return tsl_module_prec_parse(json_string_value(v), &prec, err) != 0
                   ? tsl_err_prefix(err, "request")
                   : 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > UINT32_MAX)
        return tsl_err_set(err,
                           "request.module_precision: expected a list of module=precision "
                           "items (or tessel.v1's nibbles), got %s",
                           json_is_integer(v) ? "an integer out of range" : tsl_json_type_name(v));
    return tsl_module_prec_check((uint32_t)json_integer_value(v), err) != 0
               ? tsl_err_prefix(err, "request")
               : 0;
}

static int req_type(const json_t *v, const char *key, bool ok, const char *want, tsl_err_t *err)
{
    if (ok)
        return 0;
    return tsl_err_set(err, "request.%s: expected %s, got %s", key, want, tsl_json_type_name(v));
}

#define REQ_BOOL(v, key, min, max) req_type(v, key, json_is_boolean(v), "true or false", err)
#define REQ_UINT(v, key, min, max) req_uint(v, key, max, err)
#define REQ_BYTES(v, key, min, max)                                                                \
    req_type(v, key, json_is_integer(v) && json_integer_value(v) >= 0, "a whole number of bytes",  \
             err)
#define REQ_REAL(v, key, min, max)    req_real(v, key, min, max, err)
#define REQ_TARGET(v, key, min, max)  0 /* eval_doc.c doc_target's, naming the stacks */
#define REQ_MODULES(v, key, min, max) req_modules(v, err)
#define REQ_LOSS(v, key, min, max)    req_loss(v, err)
#define REQ_PREC(v, key, min, max)    req_prec(v, err)

int tsl_request_json_check(const json_t *req, tsl_err_t *err)
{
    const json_t *v;
#define REQ_FIELD_(name, kind, flag, metavar, min, max, help, proto, json)                         \
    if ((v = json_object_get(req, json)) != NULL && !json_is_null(v) &&                            \
        REQ_##kind(v, json, min, max) != 0)                                                        \
        return -1;
    TSL_REQUEST_FIELDS(REQ_FIELD_)
#undef REQ_FIELD_
    return 0;
}

/*
 * registry_plan.c — plans on registered workers (registry_plan.h): the measured
 * profiles the store aggregated, attached to the request's cluster so that the
 * cost model prices layers by the measured block times (planner/profile.h).
 *
 * The aggregate rows become a tsl_profile_t the way common/profile_json.c reads
 * a profile file: blocks from <kind>_fwd / _bwd / _flops / _mem (labels h, s, a,
 * f, mb, tp), gemm_flops from the fastest gemm_fwd, pcie and device memory
 * bandwidths, the all-reduce bus bandwidth of the largest group at its largest
 * message, the overlap slowdown of a real NCCL test (a copy stand-in only sets
 * overlap_stand_in). Only rows of the kind the cluster used (simulated or measured).
 */
#include "registry_plan.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibration.h"
#include "log.h"
#include "store_registry.h"

typedef struct build {
    tsl_profile_t *p;
    bool simulated;
    uint64_t intra_bytes;
} build_t;

static double label_num(json_t *labels, const char *key)
{
    json_t *v = json_object_get(labels, key);
    return json_is_string(v) ? atof(json_string_value(v)) : 0;
}

/* The block of this kind and labels, added (zeroed) when new; NULL when full. */
static tsl_profile_block_t *block_of(tsl_profile_t *p, tsl_profile_block_kind_t kind, json_t *l)
{
    json_t *f = json_object_get(l, "f");
    const char *ftext = json_is_string(f) ? json_string_value(f) : "";
    tsl_profile_block_t key = {.kind = kind,
                               .hidden = (uint32_t)label_num(l, "h"),
                               .seq_len = (uint32_t)label_num(l, "s"),
                               .heads = (uint32_t)label_num(l, "a"),
                               .ffn_hidden = (uint32_t)atof(ftext),
                               .gated = strchr(ftext, 'g') != NULL,
                               .mb = (uint32_t)label_num(l, "mb"),
                               .tp = (uint32_t)label_num(l, "tp")};
    for (uint32_t i = 0; i < p->n_blocks; i++) {
        tsl_profile_block_t *b = &p->blocks[i];
        if (b->kind == key.kind && b->hidden == key.hidden && b->seq_len == key.seq_len &&
            b->heads == key.heads && b->ffn_hidden == key.ffn_hidden && b->gated == key.gated &&
            b->mb == key.mb && b->tp == key.tp)
            return b;
    }
    if (p->n_blocks == TSL_PROFILE_MAX_BLOCKS)
        return NULL;
    p->blocks[p->n_blocks] = key;
    return &p->blocks[p->n_blocks++];
}

/* attention_fwd, ffn_bwd, ...: true when the row was a block figure. */
static bool take_block(tsl_profile_t *p, const tsl_reg_measurement_t *m, json_t *labels)
{
    const char *us = strchr(m->name, '_');
    tsl_profile_block_kind_t kind;
    if (!us)
        return false;
    if (strncmp(m->name, "attention_", 10) == 0)
        kind = TSL_PROFILE_ATTENTION;
    else if (strncmp(m->name, "ffn_", 4) == 0)
        kind = TSL_PROFILE_FFN;
    else
        return false;
    tsl_profile_block_t *b = block_of(p, kind, labels);
    if (!b)
        return true;
    if (strcmp(us, "_fwd") == 0)
        b->fwd_s = m->value;
    else if (strcmp(us, "_bwd") == 0)
        b->bwd_s = m->value;
    else if (strcmp(us, "_flops") == 0)
        b->fwd_flops = m->value;
    else if (strcmp(us, "_mem") == 0)
        b->mem_bytes = (uint64_t)m->value;
    return true;
}

static void take_node(build_t *bd, const tsl_reg_measurement_t *m, json_t *labels)
{
    tsl_profile_t *p = bd->p;
    if (strcmp(m->link_class, "inter-node") == 0) /* a link probe's: not inside the node */
        return;
    if (strcmp(m->name, "allreduce_busbw") == 0) {
        uint32_t group = (uint32_t)label_num(labels, "group");
        uint64_t bytes = (uint64_t)label_num(labels, "bytes");
        if (group >= 2 &&
            (group > p->intra_group || (group == p->intra_group && bytes > bd->intra_bytes))) {
            p->intra_group = group;
            bd->intra_bytes = bytes;
            p->intra_busbw = m->value;
            snprintf(p->link, sizeof p->link, "%s", m->link_class);
        }
    } else if (strcmp(m->name, "overlap_slowdown") == 0) {
        json_t *si = json_object_get(labels, "stand_in");
        bool stand_in = json_is_string(si) && strcmp(json_string_value(si), "1") == 0;
        if (stand_in)
            p->overlap_stand_in = fmax(p->overlap_stand_in, m->value);
        else
            p->overlap_slowdown = fmax(p->overlap_slowdown, fmax(1.0, m->value));
    }
}

static int take_row(void *ud, const tsl_reg_measurement_t *m)
{
    build_t *bd = ud;
    tsl_profile_t *p = bd->p;
    if (m->simulated != bd->simulated)
        return 0;
    json_t *labels = json_loads(m->labels_json, 0, NULL);
    if (!take_block(p, m, labels)) {
        if (strcmp(m->name, "gemm_fwd") == 0 && m->value > 0) {
            double work = 2 * label_num(labels, "m") * label_num(labels, "n") *
                          label_num(labels, "k") * fmax(1, label_num(labels, "batch"));
            p->gemm_flops = fmax(p->gemm_flops, work / m->value);
        } else if (strcmp(m->name, "pcie_h2d") == 0) {
            p->h2d_bw = m->value;
        } else if (strcmp(m->name, "pcie_d2h") == 0) {
            p->d2h_bw = m->value;
        } else if (strcmp(m->name, "hbm_bw") == 0) {
            p->dmem_bw = m->value;
        } else {
            take_node(bd, m, labels);
        }
    }
    json_decref(labels);
    return 0;
}

/* Keeps the blocks with every figure the cost model needs. */
static void drop_incomplete(tsl_profile_t *p)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->n_blocks; i++) {
        const tsl_profile_block_t *b = &p->blocks[i];
        if (b->fwd_s > 0 && b->bwd_s > 0 && b->fwd_flops > 0 && b->mb >= 1 && b->tp >= 1 &&
            b->hidden > 0 && b->seq_len > 0 && b->heads > 0)
            p->blocks[n++] = *b;
    }
    p->n_blocks = n;
}

/* One profile from the aggregate of (model, simulated), for GPU type `type`;
 * NULL with err on failure, NULL without (err code NONE) when it has no blocks. */
static tsl_profile_t *build_profile(tsl_store_t *s, const char *model, bool simulated,
                                    const char *type, tsl_err_t *err)
{
    build_t bd = {.p = calloc(1, sizeof(tsl_profile_t)), .simulated = simulated};
    if (!bd.p) {
        tsl_err_setc(err, TSL_E_NOMEM, "plan: out of memory building the profile of %s", model);
        return NULL;
    }
    snprintf(bd.p->gpu, sizeof bd.p->gpu, "%.31s", type);
    snprintf(bd.p->link, sizeof bd.p->link, "single");
    snprintf(bd.p->source, sizeof bd.p->source, "tesseld registry: %.80s (%s)", model,
             simulated ? "simulated" : "measured");
    bd.p->simulated = simulated;
    if (tsl_registry_profile(s, model, NULL, take_row, &bd, err) != 0) {
        free(bd.p);
        return NULL;
    }
    drop_incomplete(bd.p);
    if (tsl_calibration_get(s, model, simulated, &bd.p->calib, err) < 0) {
        free(bd.p);
        return NULL;
    }
    bd.p->calibrated = bd.p->calib.n_samples > 0;
    if (bd.p->n_blocks == 0 || tsl_profile_finish(bd.p, err) != 0) {
        free(bd.p);
        return NULL;
    }
    return bd.p;
}

/* Attaches the profile of one model the cluster used. */
static int attach_one(tsl_store_t *s, tsl_plan_input_t *in, const tsl_registry_profile_ref_t *ref,
                      tsl_registry_profiles_t *out, tsl_err_t *err)
{
    const char *kind = ref->simulated ? "simulated" : "measured";
    if (out->n == TSL_REGISTRY_MAX_PROFILES)
        return 0;
    tsl_err_t why = {0};
    tsl_profile_t *p = build_profile(s, ref->model, ref->simulated, ref->type, &why);
    tsl_profile_use_t use;
    if (!p) {
        if (tsl_err_code(&why) == TSL_E_NOMEM)
            return tsl_err_setc(err, TSL_E_NOMEM, "%s", why.msg);
        tsl_log_info("plan %s: %s has no usable block times%s%s; its derived figures only",
                     in->fingerprint, ref->model, why.msg[0] ? ": " : "", why.msg);
        return 0;
    }
    if (tsl_profile_attach(&in->cluster, p, &use, &why) != 0) {
        tsl_log_warnx("plan %s: profile of %s not attached: %s", in->fingerprint, ref->model,
                      why.msg);
        free(p);
        return 0;
    }
    out->use[out->n] = use;
    out->p[out->n++] = p;
    size_t at = strlen(out->line);
    if (at + 3 < sizeof out->line) {
        if (at)
            at += (size_t)snprintf(out->line + at, sizeof out->line - at, "; ");
        tsl_profile_describe(p, &use, out->line + at, sizeof out->line - at);
    }
    tsl_log_info("plan %s: %s prices layers by %u %s block times of %s", in->fingerprint, ref->type,
                 p->n_blocks, kind, ref->model);
    return 0;
}

int tsl_registry_attach_profiles(tsl_store_t *s, tsl_plan_input_t *in,
                                 const tsl_registry_profile_ref_t *used, size_t n_used,
                                 tsl_registry_profiles_t *out, tsl_err_t *err)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < n_used; i++)
        if (attach_one(s, in, &used[i], out, err) != 0)
            return -1;
    return 0;
}

void tsl_registry_profiles_free(tsl_registry_profiles_t *ps)
{
    for (size_t i = 0; i < ps->n; i++)
        free(ps->p[i]);
    ps->n = 0;
}

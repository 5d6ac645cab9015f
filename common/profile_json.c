/*
 * profile_json.c — docs/profile-format.md → tsl_profile_t (profile_json.h).
 */
#include "profile_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "path_kind.h"

#define GBPS 1e9

static int get_num(const json_t *obj, const char *path, const char *key, bool required, double lo,
                   double *out, tsl_err_t *err)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL || json_is_null(v)) {
        if (required)
            return tsl_err_set(err, "%s.%s: missing", path, key);
        *out = 0;
        return 0;
    }
    if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < lo)
        return tsl_err_set(err, "%s.%s: must be a number >= %g", path, key, lo);
    *out = json_number_value(v);
    return 0;
}

/* A bandwidth in GB/s: absent or 0 (not measured), else within [lo, 100 000]:
 * 0.01 for the large copies of bandwidth.* (a cluster's bandwidth bounds,
 * api/request.h), 1e-5 for a collective's busbw (a 1 KiB all-reduce's latency
 * makes it small; the bound on a worker's bytes/s, api/profile_check.c). A
 * device memory at 1e-9 GB/s priced an optimizer step at 10^9 s. */
static int get_gbps(const json_t *obj, const char *path, const char *key, double lo, double *out,
                    tsl_err_t *err)
{
    if (get_num(obj, path, key, false, 0, out, err) != 0)
        return -1;
    if (*out != 0 && (*out < lo || *out > 100000))
        return tsl_err_set(err, "%s.%s: %g GB/s is outside the physical bounds [%g, 100000]", path,
                           key, *out, lo);
    return 0;
}

/* A block's time: at least 1e-12 s, at most an hour (the bound on a worker's
 * reported seconds, api/profile_check.c). */
static int get_block_s(const json_t *obj, const char *path, const char *key, double *out,
                       tsl_err_t *err)
{
    if (get_num(obj, path, key, true, 1e-12, out, err) != 0)
        return -1;
    if (*out > 3600)
        return tsl_err_set(err, "%s.%s: %g s is above the physical bound of 3600 s", path, key,
                           *out);
    return 0;
}

/* A collective's group: a whole number of ranks in one node, at most a node's GPUs
 * as a cluster may have them (131072, common/cluster_json.c). A fractional group
 * was read as the next lower one, and one past 2^32 cast into intra_group
 * (undefined behaviour). */
static int get_group(const json_t *obj, const char *path, double *out, tsl_err_t *err)
{
    if (get_num(obj, path, "group", true, 1, out, err) != 0)
        return -1;
    if (*out != floor(*out) || *out > 131072)
        return tsl_err_set(err, "%s.group: %g is not a whole number of ranks in 1..131072", path,
                           *out);
    return 0;
}

/* A collective's op: one of nccl-tests' four the profiler runs (docs/profile-format.md);
 * an unknown name was skipped as if it were not an all-reduce. */
static int check_coll_op(const json_t *obj, const char *path, tsl_err_t *err)
{
    static const char *const ops[] = {"all_reduce", "all_gather", "reduce_scatter", "send_recv"};
    json_t *op = json_object_get(obj, "op");
    if (!json_is_string(op))
        return tsl_err_set(err, "%s.op: must be a string", path);
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(json_string_value(op), ops[i]) == 0)
            return 0;
    return tsl_err_set(err,
                       "%s.op: \"%s\" is not all_reduce, all_gather, reduce_scatter or send_recv",
                       path, json_string_value(op));
}

/* An overlap slowdown, together / alone: a ratio of two times, so above 0 (0 is no
 * measurement, and read as none). */
static int get_slowdown(const json_t *obj, const char *path, const char *key, double *out,
                        tsl_err_t *err)
{
    if (get_num(obj, path, key, true, 0, out, err) != 0)
        return -1;
    if (*out <= 0)
        return tsl_err_set(err, "%s.%s: must be above 0 (time together / time alone)", path, key);
    return 0;
}

static int get_u32(const json_t *obj, const char *path, const char *key, uint32_t *out,
                   tsl_err_t *err)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > (1 << 30))
        return tsl_err_set(err, "%s.%s: must be a positive integer", path, key);
    *out = (uint32_t)json_integer_value(v);
    return 0;
}

static int get_str(const json_t *obj, const char *path, const char *key, char *out, size_t cap,
                   tsl_err_t *err)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) >= cap)
        return tsl_err_set(err, "%s.%s: must be a string of 1..%zu characters", path, key, cap - 1);
    memcpy(out, json_string_value(v), json_string_length(v) + 1);
    return 0;
}

static int read_block(const json_t *o, const char *path, tsl_profile_block_t *b, tsl_err_t *err)
{
    char kind[16], ffn_kind[16];
    double mem;
    if (!json_is_object(o))
        return tsl_err_set(err, "%s: must be an object", path);
    if (get_str(o, path, "block", kind, sizeof(kind), err) != 0)
        return -1;
    if (strcmp(kind, "attention") == 0)
        b->kind = TSL_PROFILE_ATTENTION;
    else if (strcmp(kind, "ffn") == 0)
        b->kind = TSL_PROFILE_FFN;
    else
        return tsl_err_set(err, "%s.block: '%s' is not attention or ffn", path, kind);
    if (get_u32(o, path, "hidden", &b->hidden, err) ||
        get_u32(o, path, "seq_len", &b->seq_len, err) ||
        get_u32(o, path, "heads", &b->heads, err) ||
        get_u32(o, path, "head_dim", &b->head_dim, err) ||
        get_u32(o, path, "ffn_hidden", &b->ffn_hidden, err) ||
        get_u32(o, path, "micro_batch", &b->mb, err) || get_u32(o, path, "tp", &b->tp, err) ||
        get_str(o, path, "ffn_kind", ffn_kind, sizeof(ffn_kind), err) ||
        get_block_s(o, path, "fwd_s", &b->fwd_s, err) ||
        get_block_s(o, path, "bwd_s", &b->bwd_s, err) ||
        get_num(o, path, "fwd_flops", true, 1, &b->fwd_flops, err) ||
        get_num(o, path, "memory_bytes", false, 0, &mem, err))
        return -1;
    if (strcmp(ffn_kind, "gelu") != 0 && strcmp(ffn_kind, "swiglu") != 0)
        return tsl_err_set(err, "%s.ffn_kind: '%s' is not gelu or swiglu", path, ffn_kind);
    b->gated = strcmp(ffn_kind, "swiglu") == 0;
    b->mem_bytes = (uint64_t)mem;
    return 0;
}

int tsl_profile_json_from(const json_t *root, const char *source, tsl_profile_t **out,
                          tsl_err_t *err)
{
    *out = NULL;
    tsl_profile_t *p = calloc(1, sizeof(*p));
    char path[64], fmt[32];
    if (p == NULL)
        return tsl_err_setc(err, TSL_E_NOMEM, "profile: out of memory");
    snprintf(p->source, sizeof(p->source), "%s", source != NULL ? source : "(inline)");
    if (!json_is_object(root)) {
        tsl_err_set(err, "profile: the document must be a JSON object");
        goto fail;
    }
    if (get_str(root, "profile", "format", fmt, sizeof(fmt), err) != 0)
        goto fail;
    if (strcmp(fmt, "tessel-profile/1") != 0) {
        tsl_err_set(err, "profile.format: '%s' is not tessel-profile/1", fmt);
        goto fail;
    }
    json_t *sim = json_object_get(root, "simulated");
    if (!json_is_boolean(sim)) {
        tsl_err_set(err, "profile.simulated: must be true or false");
        goto fail;
    }
    p->simulated = json_is_true(sim);
    json_t *hw = json_object_get(root, "hardware");
    if (!json_is_object(hw)) {
        tsl_err_set(err, "profile.hardware: must be an object (gpu, link, gpus)");
        goto fail;
    }
    if (get_str(hw, "hardware", "gpu", p->gpu, sizeof(p->gpu), err) ||
        get_str(hw, "hardware", "link", p->link, sizeof(p->link), err) ||
        get_u32(hw, "hardware", "gpus", &p->gpus, err))
        goto fail;

    json_t *blocks = json_object_get(root, "blocks"), *v;
    size_t i;
    if (!json_is_array(blocks) || json_array_size(blocks) == 0) {
        tsl_err_set(err, "profile.blocks: must be a non-empty array");
        goto fail;
    }
    if (json_array_size(blocks) > TSL_PROFILE_MAX_BLOCKS) {
        tsl_err_set(err, "profile.blocks: %zu entries, at most %u", json_array_size(blocks),
                    TSL_PROFILE_MAX_BLOCKS);
        goto fail;
    }
    json_array_foreach(blocks, i, v)
    {
        snprintf(path, sizeof(path), "blocks[%zu]", i);
        if (read_block(v, path, &p->blocks[p->n_blocks++], err) != 0)
            goto fail;
    }
    json_t *gemms = json_object_get(root, "gemms");
    json_array_foreach(gemms, i, v)
    {
        double tf;
        snprintf(path, sizeof(path), "gemms[%zu]", i);
        if (get_num(v, path, "tflops", false, 0, &tf, err) != 0)
            goto fail;
        p->gemm_flops = fmax(p->gemm_flops, tf * 1e12);
    }
    json_t *bw = json_object_get(root, "bandwidth");
    if (bw != NULL) {
        if (!json_is_object(bw)) {
            tsl_err_set(err, "profile.bandwidth: must be an object");
            goto fail;
        }
        if (get_gbps(bw, "bandwidth", "h2d_gbps", 0.01, &p->h2d_bw, err) ||
            get_gbps(bw, "bandwidth", "d2h_gbps", 0.01, &p->d2h_bw, err) ||
            get_gbps(bw, "bandwidth", "device_memory_gbps", 0.01, &p->dmem_bw, err))
            goto fail;
        p->h2d_bw *= GBPS;
        p->d2h_bw *= GBPS;
        p->dmem_bw *= GBPS;
    }
    double best_bytes = 0;
    json_t *colls = json_object_get(root, "collectives");
    json_array_foreach(colls, i, v)
    {
        double group, bytes, busbw;
        snprintf(path, sizeof(path), "collectives[%zu]", i);
        if (check_coll_op(v, path, err) != 0 || get_group(v, path, &group, err) ||
            get_num(v, path, "bytes", true, 1, &bytes, err) ||
            get_num(v, path, "busbw_gbps", true, 0, &busbw, err) ||
            get_gbps(v, path, "busbw_gbps", 1e-5, &busbw, err))
            goto fail;
        if (group > p->gpus) { /* the collectives are the node's own */
            tsl_err_set(err, "%s.group: %g ranks, above the node's hardware.gpus %u", path, group,
                        p->gpus);
            goto fail;
        }
        json_t *op = json_object_get(v, "op");
        if (strcmp(json_string_value(op), "all_reduce") != 0 || group < 2 || busbw <= 0)
            continue;
        if (group > p->intra_group || (group == p->intra_group && bytes > best_bytes)) {
            p->intra_group = (uint32_t)group;
            best_bytes = bytes;
            p->intra_busbw = busbw * GBPS;
        }
    }
    json_t *ov = json_object_get(root, "overlap");
    json_array_foreach(ov, i, v)
    {
        double gs, cs;
        snprintf(path, sizeof(path), "overlap[%zu]", i);
        json_t *stand_in = json_object_get(v, "stand_in");
        if (get_slowdown(v, path, "gemm_slowdown", &gs, err) ||
            get_slowdown(v, path, "comm_slowdown", &cs, err))
            goto fail;
        if (!json_is_false(stand_in))
            p->overlap_stand_in = fmax(p->overlap_stand_in, gs);
        else
            p->overlap_slowdown = fmax(p->overlap_slowdown, fmax(1.0, fmax(gs, cs)));
    }
    /* corrections fitted from trials (docs/profile-format.md "Calibration") */
    json_t *cal = json_object_get(root, "calibration");
    if (cal != NULL && !json_is_null(cal)) {
        if (tsl_profile_json_calib_from(cal, TSL_PROFILE_CALIB_MAX, "profile.calibration",
                                        &p->calib, err) != 0)
            goto fail;
        p->calibrated = true;
    }
    if (tsl_profile_finish(p, err) != 0)
        goto fail;
    *out = p;
    return 0;
fail:
    free(p);
    return -1;
}

int tsl_profile_json_load(const char *path, tsl_profile_t **out, tsl_err_t *err)
{
    json_error_t je;
    *out = NULL;
    if (tsl_path_not_dir("profile", path, err) != 0)
        return -1;
    json_t *root = json_load_file(path, 0, &je);
    if (root == NULL) {
        if (je.line < 0)
            return tsl_err_setc(err, TSL_E_NOTFOUND, "profile %s: %s", path, je.text);
        return tsl_err_set(err, "profile %s:%d: %s", path, je.line, je.text);
    }
    int rc = tsl_profile_json_from(root, path, out, err);
    json_decref(root);
    if (rc != 0)
        tsl_err_prefix(err, "profile %s", path);
    return rc;
}

/*
 * profile_calib_json.c — the "calibration" object of docs/profile-format.md
 * ↔ tsl_calib_t (planner/calibrate.h): corrections fitted from trials, carried
 * by a profile of the hardware they were fitted on.
 */
#include "profile_json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int read_factor(const json_t *v, double max, const char *path, const char *key, double *out,
                       tsl_err_t *err)
{
    double lo = max > 0 ? 1.0 / max : 0, hi = max > 0 ? max : HUGE_VAL;
    if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) <= 0 ||
        json_number_value(v) < lo || json_number_value(v) > hi)
        return max > 0 ? tsl_err_set(err, "%s.%s: must be a number in [%g, %g]", path, key, lo, hi)
                       : tsl_err_set(err, "%s.%s: must be a number above 0", path, key);
    *out = json_number_value(v);
    return 0;
}

static int read_error(const json_t *o, const char *path, const char *key, double *out,
                      tsl_err_t *err)
{
    json_t *v = json_object_get(o, key);
    if (v == NULL)
        return 0;
    if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < 0)
        return tsl_err_set(err, "%s.%s: must be a number >= 0 (a relative error)", path, key);
    *out = json_number_value(v);
    return 0;
}

static int read_count(const json_t *v, const char *path, const char *key, uint32_t *out,
                      tsl_err_t *err)
{
    if (v == NULL)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > (1 << 30))
        return tsl_err_set(err, "%s.%s: must be an integer >= 0", path, key);
    *out = (uint32_t)json_integer_value(v);
    return 0;
}

/* compute_scale[TSL_CALIB_RANGES], optional range_trials, optional range edges */
static int read_ranges(const json_t *o, double max, const char *path, tsl_calib_t *c,
                       tsl_err_t *err)
{
    char key[48];
    json_t *cs = json_object_get(o, "compute_scale"), *rt = json_object_get(o, "range_trials");
    json_t *edges = json_object_get(o, "range_max_tokens");
    if (!json_is_array(cs) || json_array_size(cs) != TSL_CALIB_RANGES)
        return tsl_err_set(err, "%s.compute_scale: must be an array of %u factors", path,
                           TSL_CALIB_RANGES);
    if (rt != NULL && (!json_is_array(rt) || json_array_size(rt) != TSL_CALIB_RANGES))
        return tsl_err_set(err, "%s.range_trials: must be an array of %u counts", path,
                           TSL_CALIB_RANGES);
    if (edges != NULL && (!json_is_array(edges) || json_array_size(edges) != TSL_CALIB_RANGES - 1))
        return tsl_err_set(err, "%s.range_max_tokens: must be an array of %u ascending counts",
                           path, TSL_CALIB_RANGES - 1);
    for (uint32_t i = 0; i < TSL_CALIB_RANGES; i++) {
        snprintf(key, sizeof(key), "compute_scale[%u]", i);
        if (read_factor(json_array_get(cs, i), max, path, key, &c->compute_scale[i], err) != 0)
            return -1;
        snprintf(key, sizeof(key), "range_trials[%u]", i);
        if (rt != NULL && read_count(json_array_get(rt, i), path, key, &c->range_samples[i], err))
            return -1;
        if (edges == NULL || i + 1 == TSL_CALIB_RANGES)
            continue;
        json_t *e = json_array_get(edges, i);
        uint32_t below = i ? c->range_max[i - 1] : 0;
        if (!json_is_integer(e) || json_integer_value(e) <= below ||
            json_integer_value(e) >= UINT32_MAX)
            return tsl_err_set(err, "%s.range_max_tokens[%u]: must be an integer above %u", path, i,
                               below);
        c->range_max[i] = (uint32_t)json_integer_value(e);
    }
    return 0;
}

int tsl_profile_json_calib_from(const json_t *o, double max_factor, const char *path,
                                tsl_calib_t *c, tsl_err_t *err)
{
    tsl_calib_identity(c);
    if (!json_is_object(o))
        return tsl_err_set(err, "%s: must be an object (compute_scale, comm_scale, mem_scale)",
                           path);
    double max = max_factor;
    if (read_ranges(o, max, path, c, err) != 0 ||
        read_factor(json_object_get(o, "comm_scale"), max, path, "comm_scale", &c->comm_scale,
                    err) ||
        read_factor(json_object_get(o, "mem_scale"), max, path, "mem_scale", &c->mem_scale, err) ||
        read_count(json_object_get(o, "trials"), path, "trials", &c->n_samples, err) ||
        read_error(o, path, "iter_error_before", &c->mae_before, err) ||
        read_error(o, path, "iter_error_after", &c->mae_after, err) ||
        read_error(o, path, "mem_error_before", &c->mem_mae_before, err) ||
        read_error(o, path, "mem_error_after", &c->mem_mae_after, err))
        return -1;
    return 0;
}

json_t *tsl_profile_json_calib(const tsl_calib_t *c)
{
    json_t *cs = json_array(), *rt = json_array(), *edges = json_array();
    for (uint32_t i = 0; cs && rt && edges && i < TSL_CALIB_RANGES; i++) {
        json_array_append_new(cs, json_real(c->compute_scale[i]));
        json_array_append_new(rt, json_integer(c->range_samples[i]));
        if (i + 1 < TSL_CALIB_RANGES)
            json_array_append_new(edges, json_integer(c->range_max[i]));
    }
    return json_pack("{s:I, s:o*, s:o*, s:o*, s:f, s:f, s:f, s:f, s:f, s:f}", "trials",
                     (json_int_t)c->n_samples, "range_max_tokens", edges, "compute_scale", cs,
                     "range_trials", rt, "comm_scale", c->comm_scale, "mem_scale", c->mem_scale,
                     "iter_error_before", c->mae_before, "iter_error_after", c->mae_after,
                     "mem_error_before", c->mem_mae_before, "mem_error_after", c->mem_mae_after);
}

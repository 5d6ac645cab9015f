/*
 * export.c — what every export shares: the format table, the check of the plan
 * against the target's space (planner/target.h, before any writer runs), and
 * the way back from a stored plan document.
 */
#include "export.h"

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
    [TSL_EXPORT_TORCHTITAN] = {"torchtitan", "application/toml", tsl_export_torchtitan},
    [TSL_EXPORT_GALVATRON] = {"galvatron", "application/json", tsl_export_galvatron},
};

int tsl_export_format_parse(const char *name, tsl_export_format_t *out, tsl_err_t *err)
{
    for (int f = 0; f < TSL_EXPORT_COUNT; f++) {
        if (strcasecmp(name, formats[f].name) == 0) {
            *out = (tsl_export_format_t)f;
            return 0;
        }
    }
    return tsl_err_set(err,
                       "format: '%.40s' is not one of json, megatron, deepspeed, "
                       "torchtitan, galvatron",
                       name);
}

const char *tsl_export_format_name(tsl_export_format_t f)
{
    return f < TSL_EXPORT_COUNT ? formats[f].name : "?";
}

const char *tsl_export_content_type(tsl_export_format_t f)
{
    return f < TSL_EXPORT_COUNT ? formats[f].content_type : "application/octet-stream";
}

int tsl_export(tsl_export_format_t f, const tsl_plan_t *p, const tsl_model_t *m, char **text,
               size_t *len, tsl_err_t *err)
{
    *text = NULL;
    *len = 0;
    if (f >= TSL_EXPORT_COUNT)
        return tsl_err_set(err, "format: %d is not an export format", (int)f);
    tsl_export_view_t *v = malloc(sizeof(*v));
    char *buf = NULL;
    size_t n = 0;
    FILE *out = NULL;
    int rc = -1;
    if (v == NULL || (out = open_memstream(&buf, &n)) == NULL) {
        tsl_err_setc(err, TSL_E_NOMEM, "export: out of memory");
        goto out;
    }
    if (tsl_target_check(f + 1, p, m, v, err) != 0 || formats[f].fn(v, out, err) != 0)
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

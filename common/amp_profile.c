/*
 * amp_profile.c — AMP's known_cost files as Tessel profiles (amp_profile.h says
 * what is mapped onto what).
 */
#include "amp_profile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "path_kind.h"

#define MAX_UNITS 4096u

/* AMP's instance tags and the Tessel GPU types they carry (AMP Sec. 4.3). */
static const struct {
    const char *tag, *gpu;
} instances[TSL_AMP_MAX_TYPES] = {
    {"G4", "T4-16G"},   /* g4dn.12xlarge: 4 x T4 */
    {"P3", "V100-16G"}, /* p3.8xlarge: 4 x V100 SXM2 16 GB */
};

/* The value of 'key': in a NumPy header dict, copied up to the next ',' or
 * '}' outside parentheses; -1 when absent. */
static int header_field(const char *hdr, const char *key, char *out, size_t cap)
{
    char pat[64];
    snprintf(pat, sizeof pat, "'%s':", key);
    const char *p = strstr(hdr, pat);
    if (p == NULL)
        return -1;
    p += strlen(pat);
    while (*p == ' ')
        p++;
    size_t k = 0;
    int depth = 0;
    for (; *p && k + 1 < cap; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')')
            depth--;
        else if (depth == 0 && (*p == ',' || *p == '}'))
            break;
        out[k++] = *p;
        if (depth < 0)
            break;
    }
    out[k] = '\0';
    return 0;
}

static double decode(const unsigned char *b, int f8)
{
    /* little-endian on disk; assemble explicitly so the host order does not matter */
    uint64_t u = 0;
    for (int i = (f8 ? 8 : 4) - 1; i >= 0; i--)
        u = (u << 8) | b[i];
    if (f8) {
        double d;
        memcpy(&d, &u, sizeof d);
        return d;
    }
    uint32_t w = (uint32_t)u;
    float f;
    memcpy(&f, &w, sizeof f);
    return f;
}

int tsl_amp_npy_read(const char *path, double *vals, uint32_t cap, uint32_t *len, tsl_err_t *err)
{
    int rc = -1;
    unsigned char pre[12], *data = NULL;
    char *hdr = NULL, field[128];
    FILE *f = fopen(path, "rb");
    *len = 0;
    if (f == NULL)
        return tsl_err_setc(err, TSL_E_NOTFOUND, "amp profile %s: %s", path, strerror(errno));
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        tsl_err_setc(err, TSL_E_INVALID, "amp profile %s: magic: not a NumPy .npy file", path);
        goto out;
    }
    uint32_t hlen;
    if (pre[6] == 1) {
        hlen = pre[8] | (uint32_t)pre[9] << 8;
    } else if (pre[6] == 2 || pre[6] == 3) {
        if (fread(pre + 10, 1, 2, f) != 2)
            goto short_read;
        hlen = pre[8] | (uint32_t)pre[9] << 8 | (uint32_t)pre[10] << 16 | (uint32_t)pre[11] << 24;
    } else {
        tsl_err_setc(err, TSL_E_INVALID, "amp profile %s: version: %u.%u, expected 1.0-3.0", path,
                     pre[6], pre[7]);
        goto out;
    }
    if (hlen == 0 || hlen > 65536 || (hdr = calloc(1, hlen + 1)) == NULL ||
        fread(hdr, 1, hlen, f) != hlen)
        goto short_read;
    if (header_field(hdr, "descr", field, sizeof field) != 0 ||
        (strcmp(field, "'<f8'") != 0 && strcmp(field, "'<f4'") != 0)) {
        char shown[TSL_ERR_SHOWN_MAX(40)]; /* the header's bytes: a newline would end the line */
        tsl_err_setc(
            err, TSL_E_INVALID,
            "amp profile %s: descr: %s, expected '<f8' or '<f4' (little-endian float)", path,
            field[0] && strstr(hdr, "'descr':") ? tsl_err_shown(field, 40, shown, sizeof shown)
                                                : "missing");
        goto out;
    }
    int f8 = strcmp(field, "'<f8'") == 0;
    if (header_field(hdr, "fortran_order", field, sizeof field) != 0 ||
        strcmp(field, "False") != 0) {
        tsl_err_setc(err, TSL_E_INVALID, "amp profile %s: fortran_order: expected False", path);
        goto out;
    }
    unsigned long n = 0;
    char tail[8] = "", shown[TSL_ERR_SHOWN_MAX(40)];
    if (header_field(hdr, "shape", field, sizeof field) != 0 ||
        sscanf(field, "(%lu%7[^0-9]", &n, tail) != 2 || strcmp(tail, ",)") != 0 || n == 0 ||
        n > cap) {
        tsl_err_setc(
            err, TSL_E_INVALID,
            "amp profile %s: shape: %s, expected a 1-D array (N,) of 1 to %u entries", path,
            strstr(hdr, "'shape':") ? tsl_err_shown(field, 40, shown, sizeof shown) : "missing",
            cap);
        goto out;
    }
    size_t w = f8 ? 8 : 4;
    if ((data = malloc(n * w)) == NULL) {
        tsl_err_setc(err, TSL_E_NOMEM, "amp profile %s: out of memory", path);
        goto out;
    }
    if (fread(data, w, n, f) != n)
        goto short_read;
    /* a .npy holds exactly its shape's elements: bytes past them are a header that
     * does not describe the data (float64 values under '<f4' read as 2n garbage
     * times, (15,) over 30 elements the first half), which was read without a word */
    if (fgetc(f) != EOF) {
        tsl_err_setc(err, TSL_E_INVALID,
                     "amp profile %s: data: bytes past the %lu %s elements the header's descr "
                     "and shape give",
                     path, n, f8 ? "'<f8'" : "'<f4'");
        goto out;
    }
    for (unsigned long i = 0; i < n; i++)
        vals[i] = decode(data + i * w, f8);
    *len = (uint32_t)n;
    rc = 0;
    goto out;
short_read:
    tsl_err_setc(err, TSL_E_INVALID, "amp profile %s: data: file ends early (truncated)", path);
out:
    free(hdr);
    free(data);
    fclose(f);
    return rc;
}

/* One instance's files into p: 0 loaded, 1 none there, -1 error. */
static int load_instance(const char *dir, const char *tag, const tsl_layer_t *l, uint32_t n_layers,
                         tsl_profile_t *p, double *vals, tsl_err_t *err)
{
    char path[4400];
    for (uint32_t tp = 1; tp <= TSL_AMP_MAX_TP; tp++) {
        snprintf(path, sizeof path, "%s/gpt2_%s_%u.npy", dir, tag, tp);
        FILE *probe = fopen(path, "rb");
        if (probe == NULL)
            continue;
        fclose(probe);
        uint32_t len;
        if (tsl_amp_npy_read(path, vals, MAX_UNITS, &len, err) != 0)
            return -1;
        if (len != n_layers + 6)
            return tsl_err_setc(err, TSL_E_INVALID,
                                "amp profile %s: shape: (%u,), expected (%u,) for AMP's gpt2 "
                                "units of a %u-layer model (embedding, no-op, layers, 2 no-ops, "
                                "head, no-op)",
                                path, len, n_layers + 6, n_layers);
        double sum = 0;
        /* at most an hour a unit (a worker report's bound on seconds,
         * api/profile_check.c): 1e300 overflowed the block's backward (2x) to
         * infinity and was refused as "profile: blocks[0]: ... must be positive" */
        for (uint32_t i = 0; i < len; i++)
            if (!isfinite(vals[i]) || vals[i] < 0 || vals[i] > 3600 ||
                (i >= 2 && i < 2 + n_layers && vals[i] <= 0))
                return tsl_err_setc(err, TSL_E_INVALID,
                                    "amp profile %s: element %u: %g is not a %s time in seconds "
                                    "(at most 3600)",
                                    path, i, vals[i],
                                    i >= 2 && i < 2 + n_layers ? "positive" : "non-negative");
        for (uint32_t i = 2; i < 2 + n_layers; i++)
            sum += vals[i];
        tsl_profile_add_layer(p, l, 1, tp, sum / n_layers);
    }
    return p->n_blocks ? 0 : 1;
}

int tsl_amp_profile_load(const char *dir, const tsl_model_t *m, const tsl_cluster_t *c,
                         tsl_profile_t *out[TSL_AMP_MAX_TYPES], uint32_t *n, tsl_err_t *err)
{
    *n = 0;
    if (tsl_path_is_dir("amp profile", dir, "AMP's gpt2_{G4,P3}_{tp}.npy", err) != 0)
        return -1;
    const tsl_layer_t *l = NULL;
    uint32_t n_layers = 0;
    for (uint32_t i = 0; i < m->n_layers; i++)
        if (m->layers[i].kind == TSL_LAYER_ENCODER || m->layers[i].kind == TSL_LAYER_DECODER) {
            l = l ? l : &m->layers[i];
            n_layers++;
        }
    if (l == NULL)
        return tsl_err_setc(err, TSL_E_INVALID,
                            "amp profile %s: the model has no Transformer layers", dir);
    double *vals = malloc(MAX_UNITS * sizeof(*vals));
    if (vals == NULL)
        return tsl_err_setc(err, TSL_E_NOMEM, "amp profile: out of memory");
    char found[64] = "";
    int rc = -1;
    for (uint32_t k = 0; k < TSL_AMP_MAX_TYPES; k++) {
        tsl_profile_t *p = calloc(1, sizeof(*p));
        if (p == NULL) {
            tsl_err_setc(err, TSL_E_NOMEM, "amp profile: out of memory");
            goto out;
        }
        int r = load_instance(dir, instances[k].tag, l, n_layers, p, vals, err);
        if (r != 0 || tsl_cluster_gpu_index(c, instances[k].gpu) < 0) {
            if (r == 0)
                snprintf(found + strlen(found), sizeof found - strlen(found), "%s%s",
                         found[0] ? ", " : "", instances[k].gpu);
            free(p);
            if (r < 0)
                goto out;
            continue;
        }
        snprintf(p->gpu, sizeof p->gpu, "%s", instances[k].gpu);
        snprintf(p->link, sizeof p->link, "%s", "amp");
        p->tp_comm_in_times = true; /* Megatron-LM's TP all-reduce ran inside (header) */
        snprintf(p->source, sizeof p->source, "amp-profile %s (%s)", dir, instances[k].tag);
        if (tsl_profile_finish(p, err) != 0) {
            free(p);
            goto out;
        }
        out[(*n)++] = p;
    }
    if (*n == 0) {
        if (found[0])
            tsl_err_setc(err, TSL_E_PRECONDITION,
                         "amp profile %s: profiles for %s; the cluster has none of these GPU "
                         "types (%s%s)",
                         dir, found, c->n_gpu_types ? c->gpu_types[0].name : "none",
                         c->n_gpu_types > 1 ? ", ..." : "");
        else
            tsl_err_setc(err, TSL_E_NOTFOUND,
                         "amp profile %s: no gpt2_G4_{tp}.npy or gpt2_P3_{tp}.npy (AMP's "
                         "src/known_cost files, tp 1 to %u)",
                         dir, TSL_AMP_MAX_TP);
        goto out;
    }
    rc = 0;
out:
    if (rc != 0)
        for (uint32_t i = 0; i < *n; i++)
            free(out[i]);
    if (rc != 0)
        *n = 0;
    free(vals);
    return rc;
}

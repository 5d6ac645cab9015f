/*
 * module_prec.c — the per-module precision overrides (module_prec.h).
 */
#include "module_prec.h"

#include <stdio.h>
#include <string.h>

#include "roofline.h"

static const char *const names[TSL_MODULE_COUNT] = {
    "linear_qkv", "linear_proj", "linear_fc1",      "linear_fc2",
    "in_proj",    "out_proj",    "fc1_latent_proj", "fc2_latent_proj",
};

#define NAMES_LIST                                                                                 \
    "linear_qkv, linear_proj, linear_fc1, linear_fc2, in_proj, out_proj, fc1_latent_proj, "        \
    "fc2_latent_proj"
#define PRECS_LIST "bf16, tensorwise, blockwise, mxfp8, nvfp4"

/* The precisions by tsl_fp8_recipe_t, as roofline.c names the recipes (its table is not
 * called from here: roofline.c calls this file); delayed's NULL, no per-module one. */
static const char *const precs[TSL_FP8_COUNT] = {"bf16",      NULL,    "tensorwise",
                                                 "blockwise", "mxfp8", "nvfp4"};

const char *tsl_module_name(uint32_t m)
{
    return m < TSL_MODULE_COUNT ? names[m] : NULL;
}

/* Module m's nibble of prec: 0 (the plan's recipe) or 1 + a precision; 0 out of range. */
static uint32_t nibble(uint32_t prec, uint32_t m)
{
    return m < TSL_MODULE_COUNT ? (prec >> (4 * m)) & 0xfu : 0u;
}

uint32_t tsl_module_prec_recipe(uint32_t prec, uint32_t m, uint32_t recipe)
{
    uint32_t v = nibble(prec, m);
    return v == 0 || recipe == TSL_FP8_NONE ? recipe : v - 1;
}

bool tsl_module_prec_override(uint32_t prec, uint32_t m, uint32_t *recipe)
{
    uint32_t v = nibble(prec, m);
    if (v == 0 || v > TSL_FP8_COUNT)
        return false;
    *recipe = v - 1;
    return true;
}

static int find(const char *w, size_t n, const char *const *table, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        if (table[i] != NULL && strlen(table[i]) == n && strncmp(w, table[i], n) == 0)
            return (int)i;
    return -1;
}

/* One "module=precision" item of n bytes at w into *prec. */
static int one_item(const char *w, size_t n, uint32_t *prec, tsl_err_t *err)
{
    char shown[TSL_ERR_SHOWN_MAX(64)]; /* a piece of the item as a message may show it */
    const char *eq = memchr(w, '=', n);
    if (n == 0)
        return tsl_err_set(err, "module_precision: an empty item; give module=precision "
                                "items separated by single commas (linear_qkv=bf16)");
    if (eq == NULL)
        return tsl_err_set(err, "module_precision: '%s' has no '='; give module=precision",
                           tsl_err_shown(w, n > 64 ? 64 : n, shown, sizeof shown));
    int m = find(w, (size_t)(eq - w), names, TSL_MODULE_COUNT);
    if (m < 0)
        return tsl_err_set(
            err, "module_precision: '%s' names no module Tessel prices (" NAMES_LIST ")",
            tsl_err_shown(w, eq - w > 64 ? 64 : (size_t)(eq - w), shown, sizeof shown));
    size_t pn = n - (size_t)(eq - w) - 1;
    int r = find(eq + 1, pn, precs, TSL_FP8_COUNT);
    if (r < 0)
        return tsl_err_set(err,
                           "module_precision: %s: '%s' is not a precision of Megatron-core's "
                           "per-module config (" PRECS_LIST "; delayed scaling is not one)",
                           names[m], tsl_err_shown(eq + 1, pn > 32 ? 32 : pn, shown, sizeof shown));
    if (nibble(*prec, m))
        return tsl_err_set(err, "module_precision: %s given twice", names[m]);
    *prec |= (uint32_t)(r + 1) << (4 * m);
    return 0;
}

int tsl_module_prec_parse(const char *list, uint32_t *prec, tsl_err_t *err)
{
    *prec = 0;
    if (list == NULL || *list == '\0')
        return tsl_err_set(err, "module_precision: an empty list; give module=precision items, "
                                "comma-separated (modules: " NAMES_LIST ")");
    for (const char *p = list;;) {
        size_t n = strcspn(p, ",");
        if (one_item(p, n, prec, err) != 0)
            return -1;
        if (p[n] == '\0')
            break;
        p += n + 1;
    }
    return 0;
}

int tsl_module_prec_check(uint32_t prec, tsl_err_t *err)
{
    for (uint32_t m = 0; m < TSL_MODULE_COUNT; m++) {
        uint32_t v = nibble(prec, m);
        if (v > TSL_FP8_COUNT || v == 1 + TSL_FP8_DELAYED)
            return tsl_err_set(err,
                               "module_precision: 0x%x: %s's value %u is no precision (1 + "
                               "the recipe: 1 bf16, 3 tensorwise, 4 blockwise, 5 mxfp8, 6 nvfp4)",
                               prec, names[m], v);
    }
    return 0;
}

size_t tsl_module_prec_format(uint32_t prec, char *buf, size_t cap)
{
    size_t len = 0;
    if (cap > 0)
        buf[0] = '\0';
    for (uint32_t m = 0; m < TSL_MODULE_COUNT; m++) {
        uint32_t v = nibble(prec, m);
        const char *r = v && v <= TSL_FP8_COUNT ? precs[v - 1] : NULL;
        if (r == NULL)
            continue;
        int k = snprintf(len < cap ? buf + len : NULL, len < cap ? cap - len : 0, "%s%s=%s",
                         len ? "," : "", names[m], r);
        len += k > 0 ? (size_t)k : 0;
    }
    return len;
}

/*
 * eval_flavor.c — a torchtitan TOML's [model] name and flavor checked against the
 * model `tesselctl eval` prices (eval_cfg.h tsl_eval_cfg_tt_flavor_check).
 *
 * torchtitan builds the model its [model] flavor names, whatever Tessel is told to
 * price: a file for Llama 3 8B evaluated with --model Llama3-70B was priced as 70B
 * without a word. The flavors are torchtitan's (torchtitan/models/<name>/__init__.py
 * at 9810191bb~1, the last commit that read TOML): each one's dim, n_layers and
 * routed experts (moe_args.num_experts; 0 for a dense model), the figures that tell
 * the sizes of a family apart. gpt_oss's dim is GptOssModelArgs' default, 2880.
 */
#include <stdio.h>
#include <string.h>

#include "eval_cfg.h"

typedef struct tt_flavor {
    const char *name, *flavor;
    uint32_t dim, layers, experts;
    const char *preset; /* Tessel's preset of the same model; NULL: none */
} tt_flavor_t;

static const tt_flavor_t tt_flavors[] = {
    {"llama3", "debugmodel", 256, 6, 0, NULL},
    {"llama3", "8B", 4096, 32, 0, "Llama3-8B"},
    {"llama3", "70B", 8192, 80, 0, "Llama3-70B"},
    {"llama3", "405B", 16384, 126, 0, "Llama3-405B"},
    {"llama4", "debugmodel", 256, 6, 8, NULL},
    {"llama4", "17bx16e", 5120, 48, 16, "Llama4-Scout"},
    {"llama4", "17bx128e", 5120, 48, 128, "Llama4-Maverick"},
    {"deepseek_v3", "debugmodel", 256, 6, 8, NULL},
    {"deepseek_v3", "16B", 2048, 27, 64, NULL},
    {"deepseek_v3", "236B", 5120, 60, 160, NULL},
    {"deepseek_v3", "671B", 7168, 61, 256, "DeepSeek-V3"},
    {"qwen3", "debugmodel", 256, 8, 0, NULL},
    {"qwen3", "debugmodel_moe", 256, 8, 64, NULL},
    {"qwen3", "0.6B", 1024, 28, 0, NULL},
    {"qwen3", "1.7B", 2048, 28, 0, NULL},
    {"qwen3", "4B", 2560, 36, 0, NULL},
    {"qwen3", "8B", 4096, 36, 0, NULL},
    {"qwen3", "14B", 5120, 40, 0, NULL},
    {"qwen3", "32B", 5120, 64, 0, NULL},
    {"qwen3", "30B-A3B", 2048, 48, 128, NULL},
    {"qwen3", "235B-A22B", 4096, 94, 128, NULL},
    {"gpt_oss", "debugmodel", 256, 4, 8, NULL},
    {"gpt_oss", "20b", 2880, 24, 32, "GPT-OSS-20B"},
    {"gpt_oss", "120b", 2880, 36, 128, "GPT-OSS-120B"},
};

#define N_FLAVORS (sizeof tt_flavors / sizeof tt_flavors[0])

/* llama3_ft (torchtitan's fault-tolerant Llama 3) builds from llama3's flavors. */
static const char *family(const char *name)
{
    return strcmp(name, "llama3_ft") == 0 ? "llama3" : name;
}

/* The flavor of name: its own row, else the row whose flavor is the given one's
 * base before a '_' suffix (torchtitan's attention variants "8B_flex",
 * "debugmodel_varlen_attn", "17bx16e_irope" build the base's shape). */
static const tt_flavor_t *lookup(const char *name, const char *flavor)
{
    const tt_flavor_t *base = NULL;
    name = family(name);
    for (size_t i = 0; i < N_FLAVORS; i++) {
        const tt_flavor_t *f = &tt_flavors[i];
        size_t n = strlen(f->flavor);
        if (strcmp(f->name, name) != 0)
            continue;
        if (strcmp(f->flavor, flavor) == 0)
            return f;
        if (strncmp(f->flavor, flavor, n) == 0 && flavor[n] == '_')
            base = f;
    }
    return base;
}

bool tsl_eval_tt_flavor_known(const char *name, const char *flavor)
{
    return lookup(name, flavor) != NULL;
}

/* m's figures as a flavor states them: the first Transformer layer's hidden size,
 * the Transformer layers (MTP depths left out, as torchtitan's n_layers leaves them)
 * and the most routed experts of a layer. */
static void model_figures(const tsl_model_t *m, uint32_t *dim, uint32_t *layers, uint32_t *experts)
{
    *dim = *layers = *experts = 0;
    for (uint32_t i = 0; i < m->n_layers; i++) {
        if (!tsl_model_is_block(m, i))
            continue;
        if (*layers == 0)
            *dim = m->layers[i].hidden;
        (*layers)++;
        if (m->layers[i].experts > *experts)
            *experts = m->layers[i].experts;
    }
}

int tsl_eval_cfg_tt_flavor_check(const tsl_eval_cfg_t *cfg, const tsl_model_t *m, tsl_err_t *err)
{
    if (cfg->tt_flavor_line == 0)
        return 0;
    const tt_flavor_t *f = lookup(cfg->tt_model, cfg->tt_flavor);
    uint32_t dim, layers, experts;
    model_figures(m, &dim, &layers, &experts);
    if (f == NULL || (f->dim == dim && f->layers == layers && f->experts == experts))
        return 0;
    char give[96] = "";
    if (f->preset)
        snprintf(give, sizeof give, "--model %s for the flavor, or ", f->preset);
    return tsl_err_set(err,
                       "torchtitan: line %u: [model] flavor \"%s\" of %s is hidden %u, %u "
                       "Transformer layers, %u routed experts; the model priced, %s, is hidden "
                       "%u, %u layers, %u experts: give %sthe flavor of the model priced",
                       cfg->tt_flavor_line, cfg->tt_flavor, cfg->tt_model, f->dim, f->layers,
                       f->experts, m->name, dim, layers, experts, give);
}

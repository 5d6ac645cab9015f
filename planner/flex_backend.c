/*
 * flex_backend.c — the flex dispatcher's back end by name, and the one a plan runs
 * (cost.h tsl_flex_backend_t).
 */
#include "cost.h"

#include <string.h>

static const char *const names[TSL_FLEX_BACKEND_COUNT] = {NULL, "hybridep", "deepep"};

const char *tsl_flex_backend_name(uint32_t b)
{
    return b < TSL_FLEX_BACKEND_COUNT ? names[b] : NULL;
}

int tsl_flex_backend_parse(const char *name)
{
    for (int i = 1; name != NULL && i < TSL_FLEX_BACKEND_COUNT; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

uint32_t tsl_flex_backend_of(bool moe_flex, uint32_t backend, bool moe_pad)
{
    if (!moe_flex)
        return TSL_FLEX_DEFAULT;
    if (backend != TSL_FLEX_DEFAULT)
        return backend;
    /* Megatron-LM's default, save where DeepEP refuses the plan's padding */
    return moe_pad ? TSL_FLEX_HYBRIDEP : TSL_FLEX_DEEPEP;
}

/*
 * norm_impl.c — the names of norm_impl.h's implementations.
 */
#include "norm_impl.h"

#include <string.h>

static const char *const norm_names[TSL_NORM_IMPL_COUNT] = {"te", "apex"};

const char *tsl_norm_impl_name(uint32_t impl)
{
    return impl < TSL_NORM_IMPL_COUNT ? norm_names[impl] : NULL;
}

int tsl_norm_impl_parse(const char *name)
{
    for (int i = 0; name != NULL && i < (int)TSL_NORM_IMPL_COUNT; i++)
        if (strcmp(name, norm_names[i]) == 0)
            return i;
    return -1;
}

int tsl_norm_impl_ok(uint32_t impl, tsl_err_t *err)
{
    if (impl >= TSL_NORM_IMPL_COUNT)
        return tsl_err_set(err, "norm_impl: %u is not a norm implementation (0 te, 1 apex)", impl);
    return 0;
}

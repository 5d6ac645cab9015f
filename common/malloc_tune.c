/* malloc_tune.c — malloc_tune.h's fixed thresholds. */
#include "malloc_tune.h"

#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

bool tsl_malloc_tune_wanted(const char *tunables, const char *mmap_env, const char *trim_env)
{
    if (tunables != NULL && strstr(tunables, "glibc.malloc.") != NULL)
        return false;
    return mmap_env == NULL && trim_env == NULL;
}

void tsl_malloc_tune(void)
{
#ifdef __GLIBC__
    if (!tsl_malloc_tune_wanted(getenv("GLIBC_TUNABLES"), getenv("MALLOC_MMAP_THRESHOLD_"),
                                getenv("MALLOC_TRIM_THRESHOLD_")))
        return;
    mallopt(M_MMAP_THRESHOLD, TSL_MALLOC_MMAP_THRESHOLD_BYTES);
    mallopt(M_TRIM_THRESHOLD, TSL_MALLOC_TRIM_THRESHOLD_BYTES);
#endif
}

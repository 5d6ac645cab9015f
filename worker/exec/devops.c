/*
 * devops.c — device ops by name ("cpu", "cuda"); the one place that knows both
 * implementations.
 */
#include <string.h>

#include "devops.h"

int tsl_devops_create(const char *name, int device, uint64_t limit_bytes, tsl_devops_t **out,
                      tsl_err_t *err)
{
    if (!strcmp(name, "cpu"))
        return tsl_devops_cpu_create(limit_bytes, out, err);
    if (!strcmp(name, "cuda"))
        return tsl_devops_cuda_create(device, limit_bytes, out, err);
    return tsl_err_set(err, "devops: '%s' is not one of cpu, cuda", name);
}

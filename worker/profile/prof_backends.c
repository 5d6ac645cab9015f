/*
 * prof_backends.c — the backends this binary was built with (meson decides:
 * cuda where the executor's cuda ops were built, i.e. CUDA, cuBLAS, cuBLASLt, NCCL
 * and nvcc were found; sim where jansson was).
 */
#include "prof.h"

#include <strings.h>

static const tsl_prof_backend_t backends[] = {
#ifdef TSL_HAVE_PROF_CUDA
    {"cuda", tsl_prof_run_cuda, NULL},
#else
    {"cuda", NULL,
     "this tessel-worker was built without CUDA (meson found no cudart, cuBLAS, "
     "cuBLASLt, NCCL or nvcc; see -Dcudadir)"},
#endif
#ifdef TSL_HAVE_SIM
    {"sim", tsl_prof_run_sim, NULL},
#else
    {"sim", NULL,
     "this tessel-worker was built without jansson and libyaml (common/), which the "
     "sim backend's device files need"},
#endif
};

const tsl_prof_backend_t *tsl_prof_backend_find(const char *name)
{
    for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
        if (name != NULL && strcasecmp(name, backends[i].name) == 0)
            return &backends[i];
    return NULL;
}

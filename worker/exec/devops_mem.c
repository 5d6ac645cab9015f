/*
 * devops_mem.c — what every device-ops implementation shares: the memory
 * counter (an OOM is a result, not a crash), element sizes and buffer views.
 * Its own file so that the implementations (devops_cpu.c, devops_cuda.c) and the
 * factory (devops.c) depend on it and never on each other.
 */
#include <assert.h>

#include "devops.h"

int tsl_memcount_admit(const tsl_memcount_t *m, const char *who, uint64_t bytes, tsl_err_t *err)
{
    if (!m->limit_bytes || m->used_bytes + bytes <= m->limit_bytes)
        return 0;
    return tsl_err_setc(err, TSL_E_NOMEM,
                        "%s: out of memory: %llu bytes in use, %llu more exceed the limit %llu",
                        who, (unsigned long long)m->used_bytes, (unsigned long long)bytes,
                        (unsigned long long)m->limit_bytes);
}

void tsl_memcount_add(tsl_memcount_t *m, int64_t bytes)
{
    m->used_bytes += (uint64_t)bytes;
    if (m->used_bytes > m->peak_bytes)
        m->peak_bytes = m->used_bytes;
}

size_t tsl_dtype_bytes(tsl_dtype_t dt)
{
    return dt == TSL_DT_BF16 ? 2u : 4u;
}

tsl_buf_t tsl_buf_view(const tsl_buf_t *b, size_t off, size_t n)
{
    assert(off + n <= b->n);
    tsl_buf_t v = {(char *)b->ptr + off * tsl_dtype_bytes(b->dt), n, b->dt};
    return v;
}

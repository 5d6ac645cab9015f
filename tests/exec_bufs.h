/*
 * exec_bufs.h — the executor's device-op tests' views of their own arrays as the
 * buffers devops.h takes: fb over floats, ib over int32s (test_exec_mla.c,
 * test_exec_moe.c). Header-only.
 */
#ifndef TSL_TESTS_EXEC_BUFS_H
#define TSL_TESTS_EXEC_BUFS_H

#include "devops.h"

static inline tsl_buf_t fb(float *p, size_t n)
{
    return (tsl_buf_t){p, n, TSL_DT_F32};
}

static inline tsl_buf_t ib(int32_t *p, size_t n)
{
    return (tsl_buf_t){p, n, TSL_DT_I32};
}

#endif

/*
 * devops_check.c — argument checks every device-ops implementation shares, so that
 * cpu and cuda refuse the same shapes with the same words (devops.h).
 */
#include "devops.h"

int tsl_devops_check_softmax_chunk(const tsl_buf_t *x, const tsl_buf_t *y, int rows, int cols,
                                   int group, int q0, int window, tsl_err_t *err)
{
    if (group < 1 || rows % group || q0 < 0 || window < 0 || cols < 1 ||
        (size_t)rows * cols > x->n || (size_t)rows * cols > y->n)
        return tsl_err_setc(err, TSL_E_INVALID,
                            "softmax_chunk_fwd: %d rows of %d columns in groups of %d from query "
                            "%d do not fit buffers of %zu and %zu",
                            rows, cols, group, q0, x->n, y->n);
    return 0;
}

/*
 * exec_loss.h — the executor's finite-difference checks' loss (test_exec_ops.c and
 * exec_split.h's users): one step with SGD at lr 0, parameters unchanged and the same
 * batch every time; NaN, said on stderr, when the step fails. Header-only.
 */
#ifndef TSL_TESTS_EXEC_LOSS_H
#define TSL_TESTS_EXEC_LOSS_H

#include <math.h>
#include <stdio.h>

#include "exec.h"

static inline double loss_now(tsl_exec_t *e)
{
    tsl_err_t err = {0};
    if (tsl_exec_step(e, NULL, &err)) {
        fprintf(stderr, "step: %s\n", err.msg);
        return NAN;
    }
    return tsl_exec_loss(e);
}

#endif

/*
 * export_tf32.c — the note an export carries for a plan priced with the stack's fp32
 * matmuls as TF32 (plan.h tf32, the request's --tf32), which no stack's settings write.
 */
#include "export.h"

#include <stdio.h>

/* At the mirrored commits Megatron-LM (d98e8a6) sets allow_tf32 only to False, in unit
 * tests; DeepSpeed (edaa722) never names it; torchtitan (b5bcd76) sets it to False in
 * its deterministic mode (torchtitan/distributed/utils.py): none has an argument or key
 * that turns it on, so the script the user launches must (docs/exports.md). */
size_t tsl_export_tf32(const tsl_plan_t *p, char *buf, size_t cap)
{
    if (cap)
        buf[0] = '\0';
    if (!p->fp32 || !p->tf32 || cap == 0)
        return 0;
    int n = snprintf(buf, cap,
                     "TF32: the plan runs fp32 matmuls as TF32 (--tf32), which no setting of "
                     "this stack turns on (PyTorch's allow_tf32 is False since 1.12): set "
                     "torch.backends.cuda.matmul.allow_tf32 = True in the training script, or "
                     "the run is slower than predicted");
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

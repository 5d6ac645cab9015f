/*
 * fp8_sp_gather_bytes.h — the bytes per element of a sequence-parallel all-gather
 * of a linear's input (in) and of its output gradient dY (dy) under each FP8 recipe
 * and implementation, by hand (fp8_impl.h, docs/cost-model.md "FP8
 * sequence-parallel all-gathers"): TE one copy of the input with its scales
 * (delayed, tensorwise 1; blockwise 1 + 4/128; mxfp8 1 + 1/32; nvfp4 0.5 + 1/16),
 * dY the same under per-tensor scaling, both copies under the block-scaled recipes;
 * torchao float8 under tensorwise alone; bf16 2. The table test_roofline asserts
 * tsl_fp8_impl_sp_gather_bytes against and test_cost prices the gathers with.
 */
#ifndef TSL_TEST_FP8_SP_GATHER_BYTES_H
#define TSL_TEST_FP8_SP_GATHER_BYTES_H

#include <stdint.h>

#include "fp8_impl.h"
#include "roofline.h"

static const struct fp8_sp_gather_bytes {
    uint32_t r, impl;
    double in, dy;
} fp8_sp_gather_bytes[] = {{TSL_FP8_NONE, TSL_FP8_IMPL_TE, 2.0, 2.0},
                           {TSL_FP8_DELAYED, TSL_FP8_IMPL_TE, 1.0, 1.0},
                           {TSL_FP8_TENSORWISE, TSL_FP8_IMPL_TE, 1.0, 1.0},
                           {TSL_FP8_BLOCKWISE, TSL_FP8_IMPL_TE, 1.03125, 2.0625},
                           {TSL_FP8_MXFP8, TSL_FP8_IMPL_TE, 1.03125, 2.0625},
                           {TSL_FP8_NVFP4, TSL_FP8_IMPL_TE, 0.5625, 1.125},
                           {TSL_FP8_TENSORWISE, TSL_FP8_IMPL_TORCHAO, 1.0, 1.0},
                           {TSL_FP8_MXFP8, TSL_FP8_IMPL_TORCHAO, 2.0, 2.0},
                           {TSL_FP8_NONE, TSL_FP8_IMPL_TORCHAO, 2.0, 2.0}};

#endif

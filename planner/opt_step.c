/*
 * opt_step.c — the passes of opt_step.h, byte by byte.
 */
#include "opt_step.h"

#include <string.h>

static const char *const step_names[TSL_OPT_STEP_COUNT] = {
    "fused",          "megatron",           "megatron-fp16", "torch",
    "deepspeed-fp16", "megatron-core-fp16", "torch-loop",    "composer"};

const char *tsl_opt_step_name(uint32_t impl)
{
    return impl < TSL_OPT_STEP_COUNT ? step_names[impl] : NULL;
}

int tsl_opt_step_parse(const char *name)
{
    for (int i = 0; name != NULL && i < (int)TSL_OPT_STEP_COUNT; i++)
        if (strcmp(name, step_names[i]) == 0)
            return i;
    return -1;
}

int tsl_opt_step_ok(uint32_t impl, tsl_err_t *err)
{
    if (impl >= TSL_OPT_STEP_COUNT)
        return tsl_err_set(err,
                           "opt_step: %u is not an optimizer step (0 fused, 1 megatron, "
                           "2 megatron-fp16, 3 torch, 4 deepspeed-fp16, 5 megatron-core-fp16, "
                           "6 torch-loop, 7 composer)",
                           impl);
    return 0;
}

/* One fused kernel: the states read and written, the gradient read, the 16-bit
 * weights written. Master: 4 + 4 and two moments of M read and written (4M);
 * without: the 16-bit weights and moments, 2 each, read and written (12). */
static double fused_bytes(const tsl_opt_step_states_t *st)
{
    if (!st->master)
        return 12.0 + st->grad_bytes;
    double moments = st->bf16_moments ? 8.0 : 16.0;
    return 8.0 + moments + (st->weights16 ? 2.0 : 0.0) + st->grad_bytes;
}

/* Adam over fp32 main parameters with an fp32 gradient, no 16-bit write: p, g, m, v
 * read (16), p, m, v written (12); bf16 moments 4 fewer each way. */
static double main_adam_bytes(const tsl_opt_step_states_t *st)
{
    return st->bf16_moments ? 20.0 : 28.0;
}

/* Megatron's step around Adam over the fp32 main parameters (opt_step.h). */
static void megatron(bool fp16, const tsl_opt_step_states_t *st, tsl_opt_step_cost_t *o)
{
    double g = st->grad_bytes;
    if (!st->master || (st->bf16_moments && !fp16)) {
        /* the optimizer reads the buffer's gradient itself (precision-aware
         * FusedAdam's decoupled_grad): norm g, scale 2g, the fused kernel */
        o->shard_bytes = g + 2.0 * g + fused_bytes(st);
        o->kernels = 3;
        return;
    }
    double cast = g < 4.0 ? g + 4.0 : 0.0; /* .float() of a 16-bit buffer */
    /* fp16: unscale and inf check (8; its conditional clip scale not priced); bf16:
     * the scale by the clamped coefficient, every step (8) */
    double unscale_or_scale = 8.0;
    o->shard_bytes = cast + unscale_or_scale + 4.0 + main_adam_bytes(st) + 4.0 + 2.0;
    o->kernels = (cast > 0 ? 1u : 0u) + 4u; /* + (un)scale, norm, Adam, copy */
}

/* torch.optim's parameter and moment widths: the fp32 master (FSDP2's sharded fp32
 * parameter, fp32 training's weights) and moments like it, else the 16-bit weights
 * and moments zeros_like them; bf16 moments beside a master. */
static double param_bytes(const tsl_opt_step_states_t *st)
{
    return st->master ? 4.0 : 2.0;
}

static double moment_bytes(const tsl_opt_step_states_t *st)
{
    return st->master && !st->bf16_moments ? 4.0 : 2.0;
}

/* torch.optim.Adam's loop body over one tensor (opt_step.h torch-loop), bytes per
 * element: the weight-decayed gradient into a temporary (g + P read, T written); m's
 * mul_ and add_ (2M, 2M + T); v's mul_ and addcmul_ of the temporary with itself (2M,
 * 2M + T: one read serves both operands); sqrt and the division by sqrt(bc2), each
 * into a new tensor of v's width (2M, 2M), the in-place add_ of eps (2M); addcdiv_
 * into the parameter (2P + 2M). */
static double torch_loop_bytes(const tsl_opt_step_states_t *st)
{
    double g = st->grad_bytes, P = param_bytes(st), M = moment_bytes(st);
    double T = g > P ? g : P;
    return g + 3.0 * P + 3.0 * T + 16.0 * M;
}

bool tsl_opt_step_megatron_core(uint32_t impl)
{
    return impl == TSL_OPT_STEP_MEGATRON || impl == TSL_OPT_STEP_MEGATRON_CORE_FP16;
}

void tsl_opt_step_cost(uint32_t impl, const tsl_opt_step_states_t *st, tsl_opt_step_cost_t *out)
{
    *out = (tsl_opt_step_cost_t){.shard_bytes = fused_bytes(st), .kernels = 1};
    double g = st->grad_bytes;
    switch (impl) {
    case TSL_OPT_STEP_MEGATRON:
    case TSL_OPT_STEP_MEGATRON_FP16: {
        bool fp16 = impl == TSL_OPT_STEP_MEGATRON_FP16;
        megatron(fp16, st, out);
        /* the grad buffer zeroed every iteration; 2021's param.grad is set to None */
        if (!(fp16 && st->unfused_grad_accum)) {
            out->local_bytes = g;
            out->kernels += 1;
        }
        break;
    }
    case TSL_OPT_STEP_TORCH: {
        double P = param_bytes(st), M = moment_bytes(st);
        /* _foreach_norm g, _foreach_mul_ 2g; _multi_tensor_adamw 4P + 14M + 2g */
        out->shard_bytes = 3.0 * g + 4.0 * P + 14.0 * M + 2.0 * g;
        out->kernels = 10;
        break;
    }
    case TSL_OPT_STEP_DEEPSPEED_FP16: {
        /* over fp16 gradients (2 B): overflow check 2 + 4 + 4, norm 2 + 4 + 4, the
         * fp32 .grad 2 + 4, unscale and clip 8, Adam 28 (bf16 moments 20), copy 6 */
        double fp16 = 2.0;
        out->shard_bytes = 2.0 * (fp16 + 8.0) + (fp16 + 4.0) + 8.0 + main_adam_bytes(st) + 6.0;
        out->kernels = 7;
        break;
    }
    case TSL_OPT_STEP_MEGATRON_CORE_FP16:
        /* megatron's passes, the grad buffer's zeroing, and the scaler's unscale and
         * inf check over the fp32 main gradients (8, a kernel) */
        megatron(false, st, out);
        out->shard_bytes += 8.0;
        out->kernels += 1;
        out->local_bytes = g;
        out->kernels += 1;
        break;
    case TSL_OPT_STEP_TORCH_LOOP:
        /* nine kernels per tensor, and zero_grad's in-place zero_ of each .grad
         * (set_to_none False before PyTorch 2.0): g per kept element, a kernel */
        out->shard_bytes = torch_loop_bytes(st);
        out->local_bytes = g;
        out->kernels = 9 + 1;
        out->kernels_per_tensor = true;
        break;
    case TSL_OPT_STEP_COMPOSER: {
        /* clip_grad_norm_'s norm and mul_ (3g); DecoupledAdamW's loop body without
         * weight decay (16M + 2P + 2g); eight kernels and the clip's two per tensor,
         * each tensor's step count read back first */
        double P = param_bytes(st), M = moment_bytes(st);
        out->shard_bytes = 3.0 * g + 16.0 * M + 2.0 * P + 2.0 * g;
        out->kernels = 8 + 2;
        out->kernels_per_tensor = true;
        out->reads_back = true;
        break;
    }
    default: break;
    }
}

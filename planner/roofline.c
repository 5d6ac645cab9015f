/*
 * roofline.c — the formulas of roofline.h. Each layer kind lists its GEMMs with
 * their shapes and its elementwise kernels with the bytes they move (read +
 * write, 2-byte elements unless said); docs/cost-model.md has the table.
 */
#include "roofline.h"
#include "module_prec.h"
#include "attn_kernel.h"
#include "cuda_graph.h"
#include "loss_impl.h"
#include "mamba.h"
#include "norm_impl.h"
#include "recompute.h"

#include <math.h>
#include <string.h>

void tsl_roofline_dev_init(tsl_roofline_dev_t *d, double gemm_flops, double datasheet_mem_bw)
{
    d->module_prec = 0; /* every linear at the recipe */
    d->f8_flops = d->f4_flops = 0.0;
    d->gemm_flops = gemm_flops;
    d->mem_bw = datasheet_mem_bw > 0 ? TSL_ROOFLINE_MEM_EFF * datasheet_mem_bw : 0.0;
    d->launch_s = TSL_ROOFLINE_LAUNCH_S;
    d->host_op_s = 0.0;         /* no host-bound floor until the caller sets its stack's */
    d->launch_blocking = false; /* asynchronous launches: the host runs ahead */
    d->shape.sms = 0.0;         /* flat until the caller sets the GPU's curve */
    d->shape.k_half = 0.0;
    d->shape.attn_fwd_flops = 0.0; /* flash priced as a GEMM until then */
    d->shape.attn_bwd_flops = 0.0;
    d->shape.attn_mla_bwd_flops = 0.0;
    d->shape.attn_kernel_peak = 0.0;
    d->shape.attn_kernel_ampere = false;
    d->shape.attn_power_capped = false;
    d->shape.attn_swa64_fwd_flops = 0.0;
    d->shape.attn_swa64_bwd_flops = 0.0;
    d->attn_kernel = TSL_ATTN_KERNEL_DEFAULT;
    d->fp8_flops = 0.0;
    d->fp8 = TSL_FP8_NONE;
    d->fp8_impl = TSL_FP8_IMPL_TE;
    d->fp8_any_layout = false;
    d->ep = 1;
    d->etp = 1;
    d->moe_busy = 1.0;
    d->moe_moved = 1.0;
    d->autocast = false;
    d->fp16 = false;
    d->grad_acc_bytes = 0.0;
    d->eager = false;
    d->tp_whole_heads = false;
    d->moe_fp8 = false;
    d->proj_orig_input = false;
    d->shared_orig = false;
    d->down_orig = false;
    d->wgrad_acc_bytes = 0.0;
    d->moe_a2a = false;
    d->moe_unfused = false;
    d->moe_fused_mlp = false;
    d->fp8_dpa = false;
    d->moe_fused_srelu = false;
    d->cuda_graphs = 0;
    d->moe_fp32_probs = false;
    d->cp_ring = 1;
    d->cp_merge = false;
    d->cp_te = false;
    d->loss_impl = TSL_LOSS_EXEC;
    d->loss_unsplit = false;
    d->norm_impl = TSL_NORM_IMPL_TE;
    d->unfused_elementwise = false;
    d->elem_scale = 1.0;
}

static const char *const fp8_names[TSL_FP8_COUNT] = {"bf16",      "delayed", "tensorwise",
                                                     "blockwise", "mxfp8",   "nvfp4"};

const char *tsl_fp8_recipe_name(uint32_t r)
{
    return r < TSL_FP8_COUNT ? fp8_names[r] : NULL;
}

int tsl_fp8_recipe_parse(const char *name)
{
    for (int i = 0; name != NULL && i < (int)TSL_FP8_COUNT; i++)
        if (strcmp(name, fp8_names[i]) == 0)
            return i;
    return -1;
}

double tsl_fp8_data_bytes(uint32_t recipe)
{
    return recipe == TSL_FP8_NVFP4 ? 0.5 : 1.0;
}

double tsl_fp8_copy_bytes(uint32_t recipe)
{
    return recipe == TSL_FP8_NVFP4 ? 0.5 + 1.0 / 16.0 : 1.0;
}

double tsl_fp8_cast_bytes(uint32_t recipe)
{
    switch (recipe) {
    case TSL_FP8_DELAYED: return 4.0;
    case TSL_FP8_TENSORWISE: return 6.0;
    case TSL_FP8_BLOCKWISE: return 4.0 + 2.0 * 4.0 / 128.0;
    case TSL_FP8_MXFP8: return 4.0 + 2.0 / 32.0;
    /* the amax pass's read, the cast's read, its rowwise and columnwise copies */
    case TSL_FP8_NVFP4: return 2.0 + 2.0 + 2.0 * tsl_fp8_copy_bytes(recipe);
    default: return 0.0;
    }
}

double tsl_fp8_wire_bytes(uint32_t recipe)
{
    switch (recipe) {
    case TSL_FP8_NONE: return 2.0;
    case TSL_FP8_BLOCKWISE: return 1.0 + 4.0 / 128.0;
    case TSL_FP8_MXFP8: return 1.0 + 1.0 / 32.0;
    default: return 1.0;
    }
}

bool tsl_fp8_one_copy(uint32_t recipe, uint32_t impl, bool any_layout)
{
    return any_layout && tsl_fp8_impl_caches(impl) &&
           (recipe == TSL_FP8_DELAYED || recipe == TSL_FP8_TENSORWISE);
}

uint32_t tsl_fp8_cast_kernels(uint32_t recipe)
{
    return recipe == TSL_FP8_TENSORWISE || recipe == TSL_FP8_NVFP4 ? 2u : recipe ? 1u : 0u;
}

/* The roofline of b GEMMs of (m × k)·(k × n) at `peak` FLOP/s through the shape curve
 * with its tile's fixed cost scaled by tc (gemm_eff.h tsl_gemm_tile_cost), operands of
 * op_bytes per element and an epilogue moving epi bytes per output element; one
 * launch. Every GEMM the roofline prices (bf16, a fused-wgrad epilogue, FP8) is one. */
static double gemm_roof_s(const tsl_roofline_dev_t *d, double peak, double m, double n, double k,
                          double b, double op_bytes, double epi, double tc)
{
    double rate = peak * tsl_gemm_eff_shape_tc(&d->shape, m, n, k, b, tc);
    double bytes = (op_bytes * (m * k + k * n) + epi * m * n) * b;
    return fmax(2.0 * m * n * k * b / rate, bytes / d->mem_bw) + d->launch_s;
}

double tsl_roofline_gemm_s(const tsl_roofline_dev_t *d, double m, double n, double k, double b)
{
    if (d->mem_bw <= 0)
        return 2.0 * m * n * k * b / d->gemm_flops;
    /* operands and output at the step's element width (elem_scale: fp32 4 bytes) */
    double u = d->elem_scale;
    return gemm_roof_s(d, d->gemm_flops, m, n, k, b, 2.0 * u, TSL_GEMM_FIT_EPILOGUE_BYTES * u, 1.0);
}

/* Bytes already at their own widths (a gradient buffer's), not scaled. */
static double mem_raw_s(const tsl_roofline_dev_t *d, double bytes, uint32_t kernels)
{
    if (d->mem_bw <= 0)
        return 0.0;
    return bytes / d->mem_bw + kernels * d->launch_s;
}

double tsl_roofline_mem_s(const tsl_roofline_dev_t *d, double bytes, uint32_t kernels)
{
    return mem_raw_s(d, bytes * d->elem_scale, kernels);
}

double tsl_roofline_mem_bytes_s(const tsl_roofline_dev_t *d, double bytes, uint32_t kernels)
{
    return mem_raw_s(d, bytes, kernels);
}

/* One pass over a layer: the forward, or the backward of the same kernels;
 * ops counts the host dispatches it issues (the eager host floor, layer_s). */
typedef struct pass {
    const tsl_roofline_dev_t *d;
    bool bwd;
    double ops;
    double wgrad_s;            /* backward: the dW GEMMs' part of the time (zero-bubble's W) */
    double dx_s, dw_s;         /* backward: the last GEMM's dX and dW (lin_col) */
    double lin_s;              /* forward: the linear GEMMs' part (torchtitan_op recompute) */
    double col_dx_s, col_dw_s; /* backward: the column-parallel linears' dX and dW */
    /* userbuffers' TP blocks (tsl_roofline_layer_tp_gemms): the column-parallel
     * linear of the block being priced (forward GEMM, or dX and dW), then each
     * block whole: {col, col_dw, row} per pass */
    double open_col, open_dw;
    bool open;
    uint32_t nblk;
    double blk[TSL_ROOFLINE_TP_BLOCKS][3];
    bool lin_fp8;                            /* the last lin() ran in FP8 */
    bool open_fp8;                           /* the open block's column-parallel linear did */
    bool blk_fp8[TSL_ROOFLINE_TP_BLOCKS][2]; /* each block's {col, row} linear in FP8 */
    /* likewise whether the linear's quantiser all-reduces its amax over TP under SP
     * (fp8_impl.h tsl_fp8_impl_amax_reduced, at the recipe the module runs) */
    bool lin_amax, open_amax;
    bool blk_amax[TSL_ROOFLINE_TP_BLOCKS][2];
    bool normed; /* the linear being priced takes a norm's output as TE's
                                  LayerNormLinear does (ln_lin_col) */

    /* forward: the routed experts after the dispatcher's sync (tsl_roofline_fwd_t) */
    double expert_gpu_s, expert_ops;
    /* either pass: the EP overlap's "mlp" node (mlp_frac: a MoE layer's routed
     * experts, a dense layer's MLP block), and the dW GEMMs' part of it */
    double mlp_s, mlp_wgrad_s;

    /* CUDA-graphed modules (dev.cuda_graphs): the ops their graphs took off the host's
     * dispatch, and the graph launches in their place (host_floor) */
    double graphed_ops, graphs;
} pass_t;

/* The ops counted since `ops0` ran inside a CUDA graph (`share` of them: 1 for a whole
 * module) when the device graphs `module` (cuda_graph.h bits): they leave the host's
 * dispatch, one graph launch in their place (launch: false where another module's graph
 * already counted it, moe_preprocess in the router's). */
static void graphed(pass_t *p, uint32_t module, double ops0, double share, bool launch)
{
    if (!(p->d->cuda_graphs & module))
        return;
    p->graphed_ops += share * (p->ops - ops0);
    p->graphs += launch ? 1.0 : 0.0;
}

/* b bf16 GEMMs of (m × k)·(k × n) whose epilogue moves `epi` bytes per output
 * element: tsl_roofline_gemm_s with its tile's fixed cost in depth scaled by epi / 2
 * (gemm_eff.h tsl_gemm_tile_cost) and its output's bytes at epi. epi 2 (a bf16
 * output written once, the fit's) is tsl_roofline_gemm_s itself. */
static double gemm_epi_s(const tsl_roofline_dev_t *d, double m, double n, double k, double b,
                         double epi)
{
    if (d->mem_bw <= 0 || epi == TSL_GEMM_FIT_EPILOGUE_BYTES)
        return tsl_roofline_gemm_s(d, m, n, k, b);
    return gemm_roof_s(d, d->gemm_flops, m, n, k, b, 2.0 * d->elem_scale, epi,
                       tsl_gemm_tile_cost(1.0, epi));
}

/* The bytes per output element of a linear's weight-gradient GEMM epilogue: 2·g where
 * it accumulates into the kept g-byte gradient buffer (wgrad_acc_bytes: C read with
 * beta 1, D written), else the fit's 2 (a fresh bf16 gradient written once). */
static double wgrad_epi_bytes(const tsl_roofline_dev_t *d)
{
    return d->wgrad_acc_bytes > 0 ? 2.0 * d->wgrad_acc_bytes : TSL_GEMM_FIT_EPILOGUE_BYTES;
}

/* A forward GEMM Y = X·W, (m × k)·(k × n); its backward is two GEMMs of other
 * shapes: dX = dY·Wᵀ, (m × n)·(n × k), and dW = Xᵀ·dY, (k × m)·(m × n) — the
 * weight gradient's depth is the token count m, so a thin-k forward GEMM
 * (a TP shard) has a deep, efficient wgrad. dW's epilogue moves dw_epi bytes per
 * output element (gemm_epi_s). */
static double gemm_dw(pass_t *p, double m, double n, double k, double b, double dw_epi)
{
    p->ops += p->bwd ? 2.0 : 1.0;
    if (!p->bwd)
        return tsl_roofline_gemm_s(p->d, m, n, k, b);
    p->dw_s = gemm_epi_s(p->d, k, n, m, b, dw_epi);
    p->dx_s = tsl_roofline_gemm_s(p->d, m, k, n, b);
    p->wgrad_s += p->dw_s;
    return p->dx_s + p->dw_s;
}

/* gemm_dw of GEMMs without a kept gradient: batched attention GEMMs (both operands
 * activations, their "dW" an activation's gradient), the SSD scan's, the router's
 * (a plain linear whose gradient autograd hands to a hook) and the patch embedding's:
 * each gradient a fresh bf16 output. */
static double gemm(pass_t *p, double m, double n, double k, double b)
{
    return gemm_dw(p, m, n, k, b, TSL_GEMM_FIT_EPILOGUE_BYTES);
}

/* gemm_dw of a linear layer's weight in bf16: its dW's epilogue accumulates into the
 * kept gradient buffer where the stack fuses it (wgrad_epi_bytes). */
static double wgemm(pass_t *p, double m, double n, double k, double b)
{
    return gemm_dw(p, m, n, k, b, wgrad_epi_bytes(p->d));
}

/* cuBLASLt's MXFP8 below its per-tensor rate (roofline.h, cost model 160). */
double tsl_roofline_fp8_gemm_rate(const tsl_roofline_dev_t *d, bool grouped)
{
    if (d->fp8 != TSL_FP8_MXFP8)
        return 1.0;
    bool cublaslt = !grouped || (d->fp8_impl == TSL_FP8_IMPL_TE && !d->moe_fused_mlp);
    return cublaslt ? TSL_MXFP8_GEMM_RATE : 1.0;
}

/* b FP8 GEMMs of (m × k)·(k × n): F8 by the same shape curve, its tile's fixed
 * cost in depth scaled by F8 over the bf16 rate and by the epilogue's bytes per
 * output element (gemm_eff.h tsl_gemm_tile_cost: 2, a bf16 output written; a wgrad
 * accumulating into the kept g-byte buffer 2·g: wgrad_epi_bytes), operands of the
 * recipe's copy bytes (1; nvfp4 0.5 + 1/16), the output's bytes once each way. The
 * rate is F8 × tsl_roofline_fp8_gemm_rate (grouped: the routed experts' kernel); the
 * tile's fixed cost stays F8's. */
static double fp8_gemm_s(const tsl_roofline_dev_t *d, double m, double n, double k, double b,
                         bool wgrad, bool grouped)
{
    double epi = wgrad ? wgrad_epi_bytes(d) : TSL_GEMM_FIT_EPILOGUE_BYTES;
    double tc = tsl_gemm_tile_cost(d->gemm_flops > 0 ? d->fp8_flops / d->gemm_flops : 1.0, epi);
    double rate = d->fp8_flops * tsl_roofline_fp8_gemm_rate(d, grouped);
    return gemm_roof_s(d, rate, m, n, k, b, tsl_fp8_copy_bytes(d->fp8), epi, tc);
}

/* The bytes of a quantisation under d's recipe and implementation at the rate its
 * kernel streams them: Transformer Engine's MXFP8 quantize at TSL_MXFP8_CAST_MEM_EFF
 * of the datasheet bandwidth (roofline.h, cost model 189), every other cast at the
 * roofline's TSL_ROOFLINE_MEM_EFF (d->mem_bw). */
static double cast_mem_s(const tsl_roofline_dev_t *d, double bytes, uint32_t kernels)
{
    if (d->fp8 == TSL_FP8_MXFP8 && d->fp8_impl == TSL_FP8_IMPL_TE)
        bytes *= TSL_ROOFLINE_MEM_EFF / TSL_MXFP8_CAST_MEM_EFF;
    return tsl_roofline_mem_s(d, bytes, kernels);
}

double tsl_roofline_fp8_cast_s(const tsl_roofline_dev_t *d, double elems, bool normed,
                               uint32_t *kernels)
{
    uint32_t kern = tsl_fp8_cast_kernels(d->fp8) + tsl_fp8_impl_scale_kernels(d->fp8, d->fp8_impl) +
                    tsl_fp8_impl_zero_amax_kernels(d->fp8, d->fp8_impl);
    double bytes = tsl_fp8_cast_bytes(d->fp8);
    if (normed) {
        kern -= tsl_fp8_impl_fused_amax_kernels(d->fp8, d->fp8_impl);
        bytes -= tsl_fp8_impl_fused_amax_bytes(d->fp8, d->fp8_impl);
    }
    if (tsl_fp8_one_copy(d->fp8, d->fp8_impl, d->fp8_any_layout))
        bytes -= tsl_fp8_copy_bytes(d->fp8); /* no columnwise (transposed) copy written */
    if (kernels)
        *kernels = kern;
    return cast_mem_s(d, bytes * elems, kern);
}

/* The host dispatches of a cast of `kern` kernels: one a kernel, but for TE current
 * scaling's zero-amax kernel (fp8_impl.h), which nvte_compute_amax launches from C++
 * in the same call as the amax kernel (after a norm, the at::zeros of the same
 * quantizer call): a launch floor on the GPU, no framework op of its own (cost model
 * 163; the eager host floor's H is a framework op's figure, "Host dispatch"). */
static double cast_host_ops(const tsl_roofline_dev_t *d, uint32_t kern)
{
    return (double)(kern - tsl_fp8_impl_zero_amax_kernels(d->fp8, d->fp8_impl));
}

/* A pass's quantisation of `elems` elements (tsl_roofline_fp8_cast_s), its
 * kernels counted among the pass's ops (cast_host_ops). */
static double cast_s(pass_t *p, double elems, bool normed)
{
    uint32_t kern;
    double t = tsl_roofline_fp8_cast_s(p->d, elems, normed, &kern);
    p->ops += cast_host_ops(p->d, kern);
    return t;
}

/* A grouped GEMM's quantisation of b local experts' rows, `elems` over all of them
 * (tsl_roofline_fp8_cast_s: the group's bytes). Where Transformer Engine's
 * split_quantize quantises each expert's tensor on its own
 * (tsl_fp8_impl_split_per_tensor) under TEGroupedMLP's unfused path (not the op
 * fuser's grouped MLP, dev.moe_fused_mlp), the recipe's kernels run once per expert:
 * b − 1 more launches each. The host issues that loop in C++ inside the one framework
 * call: the pass's ops count the group's kernels once, as for one tensor. */
static double grouped_cast_s(pass_t *p, double elems, double b)
{
    uint32_t kern;
    double t = tsl_roofline_fp8_cast_s(p->d, elems, false, &kern);
    p->ops += cast_host_ops(p->d, kern);
    if (b > 1.0 && !p->d->moe_fused_mlp && tsl_fp8_impl_split_per_tensor(p->d->fp8, p->d->fp8_impl))
        t += tsl_roofline_mem_s(p->d, 0.0, (uint32_t)lround((b - 1.0) * kern));
    return t;
}

/* One FP8 copy of `elems` elements with its scales (fp8_impl.h: what an SP gather
 * moves), written at the rate the recipe's quantize kernel writes it (cast_mem_s): the
 * part of a cast that one copy fewer saves. */
static double fp8_copy_s(const tsl_roofline_dev_t *d, double elems)
{
    return cast_mem_s(d, tsl_fp8_impl_sp_gather_bytes(d->fp8, d->fp8_impl, false) * elems, 0);
}

/* Transformer Engine's save_original_input (linear.py, grouped_linear.py; TE 2.6 to
 * 2.18): the module keeps its bf16 input for the backward, so its forward cast writes
 * the rowwise copy alone (columnwise usage off), and its backward quantises the kept
 * input again for the wgrad. The forward's columnwise copy not written, where the
 * recipe's cast writes one (none where one copy serves both layouts; none for a
 * current-scaling input gathered under SP, whose default cast wrote the rowwise copy
 * alone already: "All-gather is not supported with FP8 column-wise data"). */
static double orig_fwd_saved_s(const pass_t *p, double elems, bool gathered)
{
    const tsl_roofline_dev_t *d = p->d;
    bool one = tsl_fp8_one_copy(d->fp8, d->fp8_impl, d->fp8_any_layout);
    return one || (gathered && d->fp8 == TSL_FP8_TENSORWISE) ? 0.0 : fp8_copy_s(d, elems);
}

/* ... and the backward's cast of the kept input, over b tensors (grouped_cast_s):
 * current scaling writes both copies with a fresh amax (Float8CurrentScalingQuantizer
 * supports_only_rowwise_all_gather: set_usage rowwise and columnwise, no amax
 * reduction for an input that is not gathered) — the rowwise copy alone where the
 * input is gathered under SP (columnwise = not backward_input_needs_gather: the
 * gathered copy is transposed after the gather, as TE's default does) — the
 * block-scaled recipes the columnwise copy alone. */
static double orig_bwd_cast_s(pass_t *p, double elems, double b, bool gathered)
{
    const tsl_roofline_dev_t *d = p->d;
    bool both = tsl_fp8_one_copy(d->fp8, d->fp8_impl, d->fp8_any_layout) ||
                (d->fp8 == TSL_FP8_TENSORWISE && !gathered);
    return grouped_cast_s(p, elems, b) - (both ? 0.0 : fp8_copy_s(d, elems));
}

/* A Megatron-core set_save_original_input site (`on`: dev.proj_orig_input,
 * shared_orig, down_orig; cost.h tsl_cost_proj_orig_input and
 * the two after it) on the linear just priced (the last lin(), over `elems` input
 * elements on this rank, `gathered` where TE all-gathers that input under SP): in the
 * forward its cast less the columnwise copy, in the backward the recast for the
 * wgrad. Nothing where the linear ran in bf16. */
static double orig_input_s(pass_t *p, bool on, double elems, bool gathered)
{
    if (!on || !p->lin_fp8)
        return 0.0;
    return p->bwd ? orig_bwd_cast_s(p, elems, 1.0, gathered)
                  : -orig_fwd_saved_s(p, elems, gathered);
}

/* Megatron-core's set_save_original_input(linear_proj) (cost model 166) on the
 * output projection just priced: orig_input_s over the local head-split core output
 * (a row-parallel linear's input is not gathered under SP). */
static double proj_orig_s(pass_t *p, double elems)
{
    return orig_input_s(p, p->d->proj_orig_input, elems, false);
}

/* A per-use implementation's cast of `elems` weight elements in this pass
 * (tsl_fp8_impl_weight_cast_bytes), its kernels counted among the pass's ops. */
static double weight_cast_s(pass_t *p, double elems)
{
    uint32_t kern;
    double bytes = tsl_fp8_impl_weight_cast_bytes(p->d->fp8, p->d->fp8_impl, p->bwd, &kern);
    p->ops += kern;
    return tsl_roofline_mem_s(p->d, bytes * elems, kern);
}

/* TE and torchao take an FP8 GEMM only where k and n are multiples of 16. */
static bool fp8_dims(double k, double n)
{
    return fmod(k, 16.0) == 0 && fmod(n, 16.0) == 0;
}

/* b FP8 linears Y = X·W of (m × k)·(k × n) each, run as one kernel (b > 1: a
 * grouped GEMM over the local experts, its casts grouped_cast_s's). Forward:
 * cast X, then the GEMM; W is cast here only under torchao (it casts per use),
 * Transformer Engine reuses the FP8 weight copies cast once per iteration (priced
 * in the step: cost.c). Backward: cast dY (E5M2 under the hybrid format),
 * dX = dY·Wᵀ and dW = Xᵀ·dY from the columnwise copies — torchao casts W again
 * (its columnwise copy) and, but for a tensorwise Float8Linear (linear: b = 1 from
 * lin()), X too from the bf16 it saved (fp8_impl.h). torchao's grouped experts
 * keep the recast input (their scaled grouped mm is not Float8Linear). */
static double fp8_lin(pass_t *p, double m, double n, double k, double b, bool linear)
{
    const tsl_roofline_dev_t *d = p->d;
    bool per_use = !tsl_fp8_impl_caches(d->fp8_impl);
    bool float8_linear = linear && !tsl_fp8_impl_recasts_input(d->fp8, d->fp8_impl);
    if (!p->bwd) {
        p->ops += 1.0;
        double w = !per_use        ? 0.0
                   : float8_linear ? weight_cast_s(p, k * n * b)
                                   : cast_s(p, k * n * b, false);
        double x = linear ? cast_s(p, m * k * b, p->normed) : grouped_cast_s(p, m * k * b, b);
        return x + w + fp8_gemm_s(d, m, n, k, b, false, !linear);
    }
    p->ops += 2.0;
    p->dw_s = fp8_gemm_s(d, k, n, m, b, true, !linear);
    p->dx_s = fp8_gemm_s(d, m, k, n, b, false, !linear);
    p->wgrad_s += p->dw_s;
    double c = linear ? cast_s(p, m * n * b, false) : grouped_cast_s(p, m * n * b, b);
    if (per_use && float8_linear)
        c += weight_cast_s(p, k * n * b);
    else if (per_use)
        c += cast_s(p, m * k * b, false) + cast_s(p, k * n * b, false);
    return c + p->dx_s + p->dw_s;
}

/* A linear of `module` (module_prec.h) priced at its own precision where the device's
 * module_prec overrides the recipe: the pass runs on a copy of the device with that
 * recipe and its tensor cores' rate (bf16: no recipe) until prec_leave. Megatron-core's
 * TE linear enters its own autocast around its forward, and TE's backward runs dgrad
 * and wgrad at the forward's recipe (ctx.fp8_recipe): every GEMM and cast of the
 * linear, forward and backward, at the module's precision. A layer priced without a
 * recipe (bf16, a block kept bf16: d->fp8 NONE) keeps it: the override applies inside
 * a quantized autocast only (override_nonquantized_autocast false). */
typedef struct prec_scope {
    const tsl_roofline_dev_t *d;
    tsl_roofline_dev_t own;
} prec_scope_t;

static void prec_enter(pass_t *p, uint32_t module, prec_scope_t *sc)
{
    const tsl_roofline_dev_t *d = p->d;
    sc->d = d;
    uint32_t r = tsl_module_prec_recipe(d->module_prec, module, d->fp8);
    if (r == d->fp8 || !(d->fp8_flops > 0))
        return;
    sc->own = *d;
    sc->own.fp8 = r;
    sc->own.fp8_flops = r == TSL_FP8_NVFP4 ? d->f4_flops : r != TSL_FP8_NONE ? d->f8_flops : 0.0;
    p->d = &sc->own;
}

static void prec_leave(pass_t *p, const prec_scope_t *sc)
{
    p->d = sc->d;
}

static double lin(pass_t *p, double m, double n, double k);
static double lin_row(pass_t *p, double m, double n, double k);
static double ln_lin_col(pass_t *p, double m, double n, double k);

typedef double (*lin_fn)(pass_t *p, double m, double n, double k);

/* lin(), lin_row() or ln_lin_col() of a named module, at its precision (prec_enter) */
static double lin_at(pass_t *p, uint32_t module, lin_fn f, double m, double n, double k)
{
    prec_scope_t sc;
    prec_enter(p, module, &sc);
    double c = f(p, m, n, k);
    prec_leave(p, &sc);
    return c;
}

/* A linear layer's GEMM Y = X·W, (m × k)·(k × n), k and n per TP rank: FP8
 * (fp8_lin) when the device runs the blocks' linears in FP8 and both are
 * multiples of 16, else the bf16 gemm(). */
static double lin(pass_t *p, double m, double n, double k)
{
    const tsl_roofline_dev_t *d = p->d;
    p->lin_fp8 = d->fp8 != TSL_FP8_NONE && d->fp8_flops > 0 && fp8_dims(k, n);
    p->lin_amax = p->lin_fp8 && tsl_fp8_impl_amax_reduced(d->fp8, d->fp8_impl);
    double c = p->lin_fp8 ? fp8_lin(p, m, n, k, 1, true) : wgemm(p, m, n, k, 1);
    if (!p->bwd)
        p->lin_s += c;
    return c;
}

/* The routed experts' grouped GEMM: b local experts of (m × k)·(k × n), FP8 as
 * fp8_lin where the device runs the experts in FP8 too (moe_fp8: Transformer
 * Engine's GroupedLinear under Megatron-LM, torchao's scaled grouped mm), its
 * casts over every expert's rows and weights, else the bf16 gemm(). */
static double grouped_lin(pass_t *p, double m, double n, double k, double b)
{
    const tsl_roofline_dev_t *d = p->d;
    if (!d->moe_fp8 || d->fp8 == TSL_FP8_NONE || !(d->fp8_flops > 0) || !fp8_dims(k, n))
        return wgemm(p, m, n, k, b);
    return fp8_lin(p, m, n, k, b, false);
}

/* A column-parallel linear (its output split over the TP group, its input whole:
 * QKV, FFN-in): lin(), its backward's dX and dW GEMMs noted apart — the TP group
 * reduces that dX, and Megatron-LM runs the collective under these GEMMs
 * (roofline.h, tsl_roofline_layer_col_frac). */
static double lin_col(pass_t *p, double m, double n, double k)
{
    double c = lin(p, m, n, k);
    if (p->bwd) {
        p->col_dx_s += p->dx_s;
        p->col_dw_s += p->dw_s;
    }
    p->open_col = p->bwd ? p->dx_s : c;
    p->open_dw = p->bwd ? p->dw_s : 0.0;
    p->open_fp8 = p->lin_fp8;
    p->open_amax = p->lin_amax;
    p->open = true;
    return c;
}

/* The row-parallel linear that closes a TP block userbuffers overlap (QKV's
 * projection, FFN-in's FFN-out; tsl_roofline_layer_tp_gemms): lin(), the block
 * recorded with the column-parallel linear priced just before it. */
static double lin_row(pass_t *p, double m, double n, double k)
{
    double c = lin(p, m, n, k);
    if (p->open && p->nblk < TSL_ROOFLINE_TP_BLOCKS) {
        double *b = p->blk[p->nblk++];
        b[0] = p->open_col;
        b[1] = p->open_dw;
        b[2] = p->bwd ? p->dx_s : c;
        p->blk_fp8[p->nblk - 1][0] = p->open_fp8;
        p->blk_fp8[p->nblk - 1][1] = p->lin_fp8;
        p->blk_amax[p->nblk - 1][0] = p->open_amax;
        p->blk_amax[p->nblk - 1][1] = p->lin_amax;
    }
    p->open = false;
    return c;
}

/* A column-parallel linear that takes a norm's output, as Transformer Engine's
 * LayerNormLinear runs it under Megatron-LM (QKV, FFN-in, latent attention's up
 * projections after their norms): lin_col, its input's amax from the norm kernel
 * under TE current scaling (cast_s). */
static double ln_lin_col(pass_t *p, double m, double n, double k)
{
    p->normed = true;
    double c = lin_col(p, m, n, k);
    p->normed = false;
    return c;
}

/* Elementwise kernels: a backward kernel reads the forward's saved input (or
 * output) and the incoming gradient and writes the outgoing one — three tensors
 * where the forward moved two (TSL_ROOFLINE_BWD_MEM_RATIO). */
static double mem(pass_t *p, double bytes, uint32_t kernels)
{
    p->ops += kernels;
    return tsl_roofline_mem_s(p->d, p->bwd ? TSL_ROOFLINE_BWD_MEM_RATIO * bytes : bytes, kernels);
}

/* The shape in doubles, defaults resolved (as model.c's dims). */
typedef struct shape {
    double s, h, f, a, d, e, w, ct, g, n;
    bool dropout;
    bool mla; /* latent attention's core: its own backward rate where known */
} shape_t;

static shape_t shape_of(const tsl_layer_t *l)
{
    shape_t x;
    x.s = l->seq_len;
    x.h = l->hidden;
    x.f = l->ffn_hidden;
    x.a = l->heads ? l->heads : 1;
    x.d = l->attn_dim ? l->attn_dim : l->hidden;
    x.e = (l->kv_heads && l->heads) ? x.d / l->heads * l->kv_heads : x.d;
    x.w = (l->attn_window && l->attn_window < l->seq_len) ? l->attn_window : l->seq_len;
    x.ct = l->cross_seq_len;
    x.g = l->gated_ffn ? 2.0 : 1.0;
    x.n = l->head_tokens ? l->head_tokens : l->seq_len;
    x.dropout = !l->no_dropout;
    x.mla = l->kv_lora_rank != 0;
    if (l->kv_lora_rank) { /* latent attention's core: Q·K of n + r, A·V of v per head */
        x.d = x.a * ((double)l->qk_nope_dim + l->qk_rope_dim + l->v_head_dim) / 2.0;
        x.e = x.d;
    }
    return x;
}

/* Kernels that move `bytes` in this pass as counted (no backward ratio): the
 * eager modules' figures count each pass's kernels (roofline.h). */
static double counted(pass_t *p, double bytes, uint32_t kernels)
{
    p->ops += kernels;
    return tsl_roofline_mem_s(p->d, bytes, kernels);
}

/* TE's FP8 attention runs the MXFP8 kernel under the MXFP8 recipe, the per-tensor one
 * under delayed and current scaling (TE v2.16 dot_product_attention.py init_fp8_metadata;
 * eval refuses fp8_dpa under the others, fp8_impl.h tsl_fp8_dpa_ok). */
static bool fp8_dpa_mx(const tsl_roofline_dev_t *d)
{
    return d->fp8 == TSL_FP8_MXFP8;
}

/* Whether this pass's causal sliding window at head dimension hd runs cuDNN's FP8 backward,
 * which computes the whole causal square (gemm_eff.h TSL_ATTN_GB100_SWA64_MXFP8_BWD_EFF):
 * FP8 attention on a GPU with the sliding-window figures it was measured beside. */
static bool fp8_window_square(const pass_t *p, double hd)
{
    const tsl_roofline_dev_t *d = p->d;
    return p->bwd && d->fp8_dpa && d->fp8 != TSL_FP8_NONE && hd == 64.0 &&
           d->shape.attn_swa64_bwd_flops > 0;
}

/* A masked kernel's rate over `visited` keys per query, below its unmasked `rate`
 * (gemm_eff.h): a causal sliding window (swa) at head dimension 64 where the GPU has
 * cuDNN's published sliding-window figures (TSL_ATTN_GB100_SWA64_*: their own share
 * of peak, at occupancy occ, and their own keys), else the causal rule. */
static double masked_rate(const pass_t *p, double rate, double hd, double visited, bool swa,
                          double occ)
{
    const tsl_roofline_dev_t *d = p->d;
    double swa_flops = p->bwd ? d->shape.attn_swa64_bwd_flops : d->shape.attn_swa64_fwd_flops;
    if (swa && hd == 64.0 && swa_flops > 0) {
        if (p->bwd && d->fp8_dpa && fp8_dpa_mx(d)) /* MXFP8's own share (gemm_eff.h) */
            swa_flops *= TSL_ATTN_GB100_SWA64_MXFP8_BWD_EFF / TSL_ATTN_GB100_SWA64_BWD_EFF;
        double k = p->bwd ? TSL_ATTN_GB100_SWA64_BWD_KEYS : TSL_ATTN_GB100_SWA64_FWD_KEYS;
        return fmin(d->gemm_flops, swa_flops) * occ * visited / (visited + k);
    }
    return rate * TSL_ATTN_CAUSAL_EFF * visited / (visited + TSL_ATTN_CAUSAL_KEYS);
}

/* The named kernel's published share of the A100's peak under a causal mask over
 * `keys` keys, of the FLOPs the mask leaves (attn_kernel.h: flash1's causal bars); 0
 * where it has none or the GPU has no A100 per-kernel table (the causal rule then). */
static double causal_share(const tsl_roofline_dev_t *d, bool bwd, double hd, double keys)
{
    if (!(d->shape.attn_kernel_peak > 0) || !d->shape.attn_kernel_ampere)
        return 0.0;
    return tsl_attn_ampere_causal_share(d->attn_kernel, bwd, hd, keys);
}

/* One fused (flash) kernel of q queries over `keys` keys per sample, `visited` of
 * them per query (fewer: a causal mask; swa: a causal sliding window), S samples,
 * t TP ranks (core_s). A named kernel that pads the head (attn_kernel.h
 * tsl_attn_kernel_run_hd: flash1, flash2) does its padded head's FLOPs at its padded
 * head's rate; the bytes stay the real head's (its loads and stores are predicated). */
static double flash_s(pass_t *p, const shape_t *x, double q, double keys, double visited, double S,
                      double t, bool swa)
{
    const tsl_roofline_dev_t *d = p->d;
    double hd_real = x->d / x->a, b = S * x->a / t;
    double hd = tsl_attn_kernel_run_hd(d->attn_kernel, hd_real);
    double flops = 4.0 * q * visited * x->d * (hd / hd_real) * S / t *
                   (p->bwd ? TSL_ROOFLINE_FLASH_BWD_FLOPS : 1);
    if (d->mem_bw <= 0)
        return flops / d->gemm_flops;
    double flash = !p->bwd                                     ? d->shape.attn_fwd_flops
                   : x->mla && d->shape.attn_mla_bwd_flops > 0 ? d->shape.attn_mla_bwd_flops
                                                               : d->shape.attn_bwd_flops;
    /* a named kernel on the H100 part, any kernel on the A100: its published share at
       this head dimension and key length (attn_kernel.h) in place of the family's one
       figure */
    double share =
        d->shape.attn_kernel_peak <= 0 ? 0.0
        : d->shape.attn_kernel_ampere
            ? tsl_attn_ampere_share(d->attn_kernel, p->bwd, hd, keys)
            : tsl_attn_hopper_share(d->attn_kernel, p->bwd, hd, keys, d->shape.attn_power_capped);
    if (share > 0)
        flash = d->shape.attn_kernel_peak * share;
    else if (p->bwd && d->attn_kernel == TSL_ATTN_KERNEL_DEFAULT && d->shape.attn_kernel_peak > 0 &&
             !d->shape.attn_kernel_ampere)
        /* Hopper's one backward figure was measured at 1,024 keys: at these keys */
        flash *= tsl_attn_hopper_default_bwd_keys(hd, keys);
    double occ = tsl_gemm_eff_occupancy(&d->shape, q, hd, visited, b);
    double rate = flash > 0 ? fmin(d->gemm_flops, flash) * occ
                            : d->gemm_flops * tsl_gemm_eff_shape(&d->shape, q, hd, visited, b);
    /* masked: a kernel's own causal figure where it has one (the A100's flash1), else
       below the unmasked rate (gemm_eff.h) */
    double causal = flash > 0 && visited < keys && !swa ? causal_share(d, p->bwd, hd, keys) : 0.0;
    if (causal > 0)
        rate = fmin(d->gemm_flops, d->shape.attn_kernel_peak * causal) * occ;
    else if (flash > 0 && visited < keys)
        rate = masked_rate(p, rate, hd, visited, swa, occ);
    double bytes =
        2.0 * (2.0 * q * x->d + 2.0 * keys * x->e) * S / t * (p->bwd ? 2.0 : 1.0) * d->elem_scale;
    return fmax(flops / rate, bytes / d->mem_bw) + d->launch_s;
}

/* torch's fp32 merges around the ring's kernels (roofline.h: bytes per element of
 * O and of K or V on the slowest rank; K/V repeated to every head), c steps: eager
 * kernel by kernel, or compiled (the block under torch.compile: one fused kernel
 * per step between the SDPA calls, the dead cats gone). */
static double ring_merge_s(pass_t *p, const shape_t *x, double S, double t, double c)
{
    double o = S * x->s * x->d / t, kv = o; /* K, V as SDPA sees them: a heads */
    if (!p->d->eager) {
        if (!p->bwd)
            return counted(p, o * 10.0 * (c - 1.0) + 2.0 * kv * 4.0, (uint32_t)c);
        return counted(p, o * 10.0 * c + 2.0 * kv * (10.0 + 10.0 * c), (uint32_t)(2.0 * c + 2.0));
    }
    if (!p->bwd)
        return counted(p, o * (12.0 + 38.0 * (c - 1.0)) + 2.0 * kv * 4.0 * c,
                       (uint32_t)(4.0 + 5.0 * (c - 1.0)));
    return counted(p, o * (10.0 + 10.0 * c) + 2.0 * kv * (7.0 + 25.0 * c),
                   (uint32_t)(5.0 + 7.0 * c));
}

/* TransformerEngine's bf16 kernels around its ring's attention kernels (roofline.h:
 * bytes per element of O, of K or V and of the fp32 LSE on the slowest rank, c steps):
 * the ring's first K/V buffer, the output and LSE corrections forward, the dQ, dK, dV
 * accumulation backward, each a kernel (the corrections torch.compile'd). */
static double ring_te_s(pass_t *p, const shape_t *x, double S, double t, double c)
{
    double tok = S * x->s / t, lse = tok * x->a; /* the LSE: fp32, one per query, head */
    double o = tok * x->d * p->d->elem_scale, kv = tok * x->e * p->d->elem_scale;
    if (!p->bwd)
        return counted(p, 8.0 * kv + o * (4.0 + 6.0 * (c - 1.0)) + lse * (8.0 + 12.0 * (c - 1.0)),
                       (uint32_t)(2.0 * c + 1.0));
    return counted(p, 8.0 * kv + (o + 2.0 * kv) * (4.0 + 6.0 * (c - 1.0)) + 4.0 * lse,
                   (uint32_t)(3.0 * c + 2.0));
}

/* The host ops TransformerEngine's ring takes beyond the `kernels` ring_te_s counted (one op
 * each, as the c attention kernels are): its framework calls but the c attention calls
 * (roofline.h TSL_ROOFLINE_TE_RING_*) at TSL_ROOFLINE_FRAMEWORK_OPS a host op, where they
 * outnumber those kernels. Host time only: the GPU's kernels are ring_te_s's. */
static double te_ring_host_ops(bool bwd, double c, double kernels)
{
    double calls = bwd ? TSL_ROOFLINE_TE_RING_BWD_FCALLS + TSL_ROOFLINE_TE_RING_BWD_FCALLS_STEP * c
                       : TSL_ROOFLINE_TE_RING_FWD_FCALLS + TSL_ROOFLINE_TE_RING_FWD_FCALLS_STEP * c;
    return fmax(0.0, (calls - c) / TSL_ROOFLINE_FRAMEWORK_OPS - kernels);
}

/* The CP ring's kernels on a rank (roofline.h): S·c pieces of 2L = s/c tokens,
 * the diagonal causal, c − 1 blocks of 2L queries × L keys unmasked. */
static double ring_s(pass_t *p, const shape_t *x, double S, double t)
{
    double c = p->d->cp_ring, q = x->s / c, n = S * c;
    p->ops += c - 1.0; /* c kernels where one was counted */
    double r = flash_s(p, x, q, q, (q + 1.0) / 2.0, n, t, false) +
               (c - 1.0) * flash_s(p, x, q, q / 2.0, q / 2.0, n, t, false);
    if (p->d->cp_merge)
        return r + ring_merge_s(p, x, S, t, c);
    if (!p->d->cp_te)
        return r;
    double ops0 = p->ops, te = ring_te_s(p, x, S, t, c);
    p->ops += te_ring_host_ops(p->bwd, c, p->ops - ops0);
    return r + te;
}

/* An unfused core's score kernels under autocast, `scores` scores on this rank
 * (roofline.h "torch.autocast"): the scale and the fp32 softmax by casts, the
 * backward's softmax multiply in fp32 (TSL_ROOFLINE_SOFTMAX_BWD_MUL_ELEMS),
 * dropout's 5 bytes; causal, masked_fill each way and, forward, the mask the
 * script builds for the micro-batch (s × keys, broadcast over batch and heads).
 * transformers' GPT2Attention._attn (l->hf_gpt2_eager; roofline.h
 * TSL_ROOFLINE_HF_GPT2_*) differs in these places: fp16's softmax is one
 * half-to-float kernel each way, the optional division by the layer's index + 1,
 * and torch.where over the causal buffer in place of masked_fill, forward the
 * buffer's slice cast to bool; past 1024 keys PyTorch 1.13's block softmax re-reads
 * its input (roofline.h TSL_ROOFLINE_BLOCK_SOFTMAX_*). */
static double autocast_scores_s(const pass_t *p, const tsl_layer_t *l, const shape_t *x,
                                double scores, double keys)
{
    const bool hf = l->hf_gpt2_eager;
    double bytes =
        p->bwd ? TSL_ROOFLINE_AUTOCAST_SCORE_BWD_BYTES + 4.0 * TSL_ROOFLINE_SOFTMAX_BWD_MUL_ELEMS
               : TSL_ROOFLINE_AUTOCAST_SCORE_FWD_BYTES;
    uint32_t kernels = TSL_ROOFLINE_AUTOCAST_SCORE_KERNELS + (p->bwd ? 1u : 0u);
    double mask = 0.0;
    if (hf && p->d->fp16) {
        bytes -= TSL_ROOFLINE_HALF_SOFTMAX_SAVED_BYTES;
        kernels -= 1u;
    }
    if (x->dropout) {
        bytes += 5.0;
        kernels += 1u;
    }
    if (hf && keys > TSL_ROOFLINE_SOFTMAX_WARP_MAX_KEYS) /* ATen's block softmax (roofline.h) */
        bytes += p->bwd       ? TSL_ROOFLINE_BLOCK_SOFTMAX_BWD_BYTES
                 : p->d->fp16 ? TSL_ROOFLINE_BLOCK_SOFTMAX_HALF_FWD_BYTES
                              : TSL_ROOFLINE_BLOCK_SOFTMAX_FWD_BYTES;
    if (hf && l->layer_scale) {
        bytes += TSL_ROOFLINE_HF_GPT2_LAYER_SCALE_BYTES;
        kernels += 1u;
    }
    if (l->causal) {
        bytes += hf ? TSL_ROOFLINE_HF_GPT2_WHERE_BYTES : TSL_ROOFLINE_AUTOCAST_MASK_BYTES;
        kernels += hf ? 1u : 2u;
        if (!p->bwd)
            mask =
                hf ? tsl_roofline_mem_s(p->d, TSL_ROOFLINE_HF_GPT2_MASK_BUILD_BYTES * x->s * keys,
                                        1)
                   : tsl_roofline_mem_s(p->d, TSL_ROOFLINE_AUTOCAST_MASK_BUILD_BYTES * x->s * keys,
                                        TSL_ROOFLINE_AUTOCAST_MASK_BUILD_KERNELS);
    }
    return tsl_roofline_mem_s(p->d, bytes * scores, kernels) + mask;
}

/* ALiBi's bias in an unfused core (docs/cost-model.md "ALiBi"): Megatron-DeepSpeed
 * (transformer.py l.291, l.318-322 at affff3d2) computes the scores as
 * torch.baddbmm(alibi, q, kᵀ, beta=1, alpha=1/√d) with alibi of shape
 * (b·a/t, 1, s), built once at init in the params' dtype (bf16). ATen copies the
 * broadcast input into the b·a/t × s × keys result when beta ≠ 0
 * (LinearAlgebra.cpp common_checks_baddbmm_bmm: result.copy_(self)), a kernel
 * writing 2 bytes per score; cuBLAS then reads that C with beta 1 and writes D:
 * the score GEMM's epilogue moves 4 bytes per score where a fresh output moves 2
 * (as a weight gradient accumulated into its buffer, wgrad_epi_bytes). Forward
 * only, recompute included: the bias needs no gradient (a plain tensor), so the
 * backward's GEMMs are QKᵀ's as without it. A fused kernel with ALiBi (FlashAttention
 * 2.4's alibi_slopes) adds the bias in registers: free, flash_s unchanged. */
static double alibi_scores_gemm_s(pass_t *p, double m, double n, double k, double b)
{
    if (p->bwd || p->d->mem_bw <= 0)
        return gemm(p, m, n, k, b);
    double u = p->d->elem_scale; /* 16-bit scores: 1; fp32: 2 */
    p->ops += 1.0;               /* the GEMM; counted() adds the copy */
    return counted(p, 2.0 * u * m * n * b, 1) +
           gemm_epi_s(p->d, m, n, k, b, 2.0 * TSL_GEMM_FIT_EPILOGUE_BYTES * u);
}

/* Megatron-LM v1.1.5's unfused mask (roofline.h TSL_ROOFLINE_UNFUSED_*): masked_fill_
 * over the scores before the softmax, and its gradient's masked_fill in the backward,
 * at the score kernels' rate; 0 unless dev.unfused_elementwise. */
static double unfused_mask_s(pass_t *p, double scores)
{
    if (!p->d->unfused_elementwise)
        return 0.0;
    return counted(p, TSL_ROOFLINE_SCORE_KERNEL_SLOWDOWN * TSL_ROOFLINE_UNFUSED_MASK_BYTES * scores,
                   1);
}

/* Megatron-LM v1.1.5's unfused kernels of one half-block outside the core (roofline.h
 * TSL_ROOFLINE_UNFUSED_*): forward, the column-parallel GEMM's bias added apart over its
 * `col` outputs, the row-parallel one's over its `row` outputs and, in the attention
 * half, the context's permute copy over `ctx` elements; backward, that copy's again.
 * A layer without biases (l->no_bias) has the copy alone. 0 unless
 * dev.unfused_elementwise. */
static double unfused_adds_s(pass_t *p, const tsl_layer_t *l, double col, double row, double ctx)
{
    if (!p->d->unfused_elementwise)
        return 0.0;
    uint32_t copy = ctx > 0 ? 1u : 0u, adds = l->no_bias ? 0u : 2u;
    if (l->no_bias)
        col = row = 0.0;
    if (p->bwd)
        return copy ? counted(p, TSL_ROOFLINE_UNFUSED_COPY_BYTES * ctx, copy) : 0.0;
    if (adds + copy == 0)
        return 0.0;
    return counted(
        p, TSL_ROOFLINE_UNFUSED_ADD_BYTES * (col + row) + TSL_ROOFLINE_UNFUSED_COPY_BYTES * ctx,
        adds + copy);
}

/* QKᵀ, softmax (+ dropout), AV for `keys` keys per query. Fused (flash): one
 * kernel that reads Q, K, V and writes O, no score traffic, at the GPU's
 * measured flash rate (gemm_eff.h: attn_fwd_flops / attn_bwd_flops, times the
 * grid's occupancy) where one is known, else at the GEMM curve's;
 * it visits `visited` keys per query (fewer than `keys` for causal
 * self-attention: tsl_attn_keys). Its grid is one block per 128 queries per
 * head, its depth the keys visited: the GEMM curve of (s × hd)·(visited) per
 * head. Its backward (FlashAttention-2) recomputes the scores and runs
 * TSL_ROOFLINE_FLASH_BWD_FLOPS × the forward's FLOPs, reading Q, K, V, O, dO
 * and writing dQ, dK, dV: twice the forward's bytes. Unfused: batched GEMMs over
 * all `keys`, the mask applied to the full scores, so causality saves nothing. */
static double core_s(pass_t *p, const tsl_layer_t *l, const shape_t *x, double S, double t,
                     double keys, double visited)
{
    const tsl_roofline_dev_t *d = p->d;
    double hd = x->d / x->a, b = S * x->a / t;
    /* the fork's TransGAN attention keeps every head on each TP rank, 1/t as wide
       (roofline.h tp_whole_heads): the same FLOPs, all the scores */
    bool whole = l->unfused_attn && d->tp_whole_heads;
    double heads_t = whole ? 1.0 : t;
    if (whole) {
        hd = x->d / x->a / t;
        b = S * x->a;
    }
    /* one host unit either way: measured, PyTorch's unfused core (7 eager ops)
     * costs the host no more than one SDPA call (docs/cost-model.md) */
    double ops = p->ops + 1.0;
    if (l->unfused_attn) {
        double scores = x->a * x->s * keys * S / heads_t;
        double c =
            (l->alibi ? alibi_scores_gemm_s(p, x->s, keys, hd, b) : gemm(p, x->s, keys, hd, b)) +
            gemm(p, x->s, hd, keys, b);
        if (d->autocast) /* eager: scale, mask, fp32 softmax by casts (roofline.h) */
            c += autocast_scores_s(p, l, x, scores, keys);
        else /* Megatron's fused softmax and dropout, at their measured rate (roofline.h) */
            c += mem(p, TSL_ROOFLINE_SCORE_KERNEL_SLOWDOWN * (x->dropout ? 9.0 : 4.0) * scores,
                     x->dropout ? 2 : 1) +
                 unfused_mask_s(p, scores);
        if (l->transgan_eager) /* the scale, the relative-position bias and torch.softmax's
                                  fp16 backward multiply (roofline.h) */
            c += tsl_roofline_mem_s(d,
                                    scores * (p->bwd ? TSL_ROOFLINE_TRANSGAN_SCORE_BWD_BYTES +
                                                           2.0 * TSL_ROOFLINE_SOFTMAX_BWD_MUL_ELEMS
                                                     : TSL_ROOFLINE_TRANSGAN_SCORE_FWD_BYTES),
                                    TSL_ROOFLINE_TRANSGAN_SCORE_KERNELS + (p->bwd ? 1u : 0u));
        p->ops = ops;
        return c;
    }
    p->ops = ops;
    uint32_t c = d->cp_ring;
    if (c > 1 && l->causal && !l->attn_chunked && keys == x->s && visited < keys &&
        d->mem_bw > 0) /* the CP ring's kernels (roofline.h) */
        return ring_s(p, x, S, t);
    /* a causal sliding window (not Llama 4's chunks): cuDNN's own figures where known;
       its FP8 backward visits every key under the diagonal (fp8_window_square) */
    bool swa = l->causal && !l->attn_chunked && keys < x->s;
    if (swa && fp8_window_square(p, x->d / x->a)) {
        keys = x->s;
        visited = tsl_attn_keys(l->seq_len, 0, true);
    }
    return flash_s(p, x, x->s, keys, visited, S, t, swa);
}

/* Keys per query whose scores the layer's self-attention core computes: an
 * unfused sliding (causal) window computes all s and masks those outside it
 * (HF eager, exec_attn.c); a non-causal window is s/w blocks of w (Swin). */
static double self_keys(const tsl_layer_t *l, const shape_t *x)
{
    return l->unfused_attn && l->causal ? x->s : x->w;
}

/* Keys per query the self-attention core visits: a fused kernel skips masked
 * tiles (tsl_attn_keys; a causal chunk of w keeps about w/2 of them,
 * tsl_attn_chunk_keys); an unfused one computes them all. */
static double self_visited(const tsl_layer_t *l, const shape_t *x)
{
    if (l->unfused_attn)
        return self_keys(l, x);
    if (l->attn_chunked)
        return tsl_attn_chunk_keys(l->seq_len, l->attn_window, l->causal);
    return tsl_attn_keys(l->seq_len, l->attn_window, l->causal);
}

/* FLOPs per sample the self-attention core runs fewer than the counted 4·s·w·d
 * (the FLOP-count-only path's share of the above): 4·s·d per key per query a fused
 * causal kernel does not visit; negative for an unfused sliding window, which
 * computes s − w keys per query more. */
static double core_saved_flops(const tsl_layer_t *l)
{
    if (!tsl_layer_has_attention(l))
        return 0.0;
    shape_t x = shape_of(l);
    return 4.0 * x.s * (x.w - self_visited(l, &x)) * x.d;
}

/* An eager RMSNorm over `elems` elements (roofline.h "Eager modules"): torchtitan's,
 * HF T5's T5LayerNorm (eager_norm); in fp32 without its casts (elem_scale 2: the
 * figures are fp32 bytes already, not scaled again). */
static double eager_norm_s(pass_t *p, double elems)
{
    if (p->d->elem_scale > 1.0) {
        uint32_t k = p->bwd ? TSL_ROOFLINE_EAGER_RMSNORM_FP32_BWD_KERNELS
                            : TSL_ROOFLINE_EAGER_RMSNORM_FP32_FWD_KERNELS;
        double b = p->bwd ? TSL_ROOFLINE_EAGER_RMSNORM_FP32_BWD_BYTES
                          : TSL_ROOFLINE_EAGER_RMSNORM_FP32_FWD_BYTES;
        p->ops += k;
        return mem_raw_s(p->d, b * elems, k);
    }
    return p->bwd ? counted(p, TSL_ROOFLINE_EAGER_RMSNORM_BWD_BYTES * elems,
                            TSL_ROOFLINE_EAGER_RMSNORM_BWD_KERNELS)
                  : counted(p, TSL_ROOFLINE_EAGER_RMSNORM_FWD_BYTES * elems,
                            TSL_ROOFLINE_EAGER_RMSNORM_FWD_KERNELS);
}

/* Eager RoPE on q and k and GQA's repeat_kv of k and v, T tokens on one TP rank of
 * t (roofline.h "Eager modules"): 0 unless eager, for RMSNorm layers. */
static double eager_rope_s(pass_t *p, const tsl_layer_t *l, const shape_t *x, double T, double t)
{
    if (!p->d->eager || !l->rms_norm || p->d->autocast)
        return 0.0;
    double c = counted(p, TSL_ROOFLINE_EAGER_ROPE_BYTES * (x->d + x->e) * T / t, 6);
    if (x->e < x->d) /* K and V: read e, write d (backward: read d, write e) each */
        c += counted(p, 2.0 * 2.0 * (x->e + x->d) * T / t, 2);
    return c;
}

/* The kernels of `norms` fused norms (TE's RMSNorm / LayerNorm, roofline.h "TE
 * norms"): one a norm forward; backward the elementwise kernel and the dγ(/dβ)
 * finalize, TSL_ROOFLINE_TE_NORM_BWD_KERNELS; apex's (norm_impl.h) one more, its
 * part-gradient kernel, whose bytes norm_part_grad_s adds. */
static uint32_t norm_kernels(const pass_t *p, uint32_t norms)
{
    if (!p->bwd)
        return norms;
    uint32_t k = TSL_ROOFLINE_TE_NORM_BWD_KERNELS;
    if (p->d->norm_impl == TSL_NORM_IMPL_APEX)
        k += TSL_NORM_APEX_EXTRA_BWD_KERNELS;
    return norms * k;
}

/* What apex's backward reads beyond te's over `elems` elements of its fused norms
 * (norm_impl.h: cuComputePartGradGammaBeta reads dY and X, 4 B an element in 16-bit;
 * counted as read, not by the elementwise backward ratio; its launch is
 * norm_kernels'): 0 forward and for te. */
static double norm_part_grad_s(const pass_t *p, double elems)
{
    if (!p->bwd || p->d->norm_impl != TSL_NORM_IMPL_APEX)
        return 0.0;
    return tsl_roofline_mem_s(p->d, TSL_NORM_APEX_EXTRA_BWD_BYTES * elems, 0);
}

/* The QK norms on the rank's T·d/t query and T·e/t key elements (roofline.h "QK
 * norms"): 0 unless the layer has them. */
static double qk_norm_s(pass_t *p, const tsl_layer_t *l, const shape_t *x, double T, double t)
{
    if (l->qk_norm == TSL_QK_NORM_NONE)
        return 0.0;
    double q = x->d * T / t, k = x->e * T / t;
    if (p->d->eager && !p->d->autocast)
        return eager_norm_s(p, q) + eager_norm_s(p, k);
    if (l->qk_norm == TSL_QK_NORM_L2)
        return mem(p, 4.0 * (q + k), 2);
    double c = mem(p, 4.0 * (q + k), norm_kernels(p, 2)) + norm_part_grad_s(p, q + k);
    if (p->bwd)
        return c;
    double groups = x->e / (x->d / x->a) / t, heads = x->a / t; /* the rank's */
    bool q_view = groups <= 1.0 || heads <= groups;
    return c + mem(p, 4.0 * (k + (q_view ? q : 0.0)), q_view ? 2 : 1);
}

/* Megatron-LM's unfused YaRN RoPE on q and k (roofline.h TSL_ROOFLINE_YARN_ROPE_*),
 * T tokens on one TP rank of t, once per tensor: 0 unless the layer has it. */
static double yarn_rope_s(pass_t *p, const tsl_layer_t *l, const shape_t *x, double T, double t)
{
    if (!l->yarn_eager_rope)
        return 0.0;
    double elems = (x->d + x->e) * T / t;
    return p->bwd ? counted(p, TSL_ROOFLINE_YARN_ROPE_BWD_BYTES * elems,
                            2u * TSL_ROOFLINE_YARN_ROPE_BWD_KERNELS)
                  : counted(p, TSL_ROOFLINE_YARN_ROPE_FWD_BYTES * elems,
                            2u * TSL_ROOFLINE_YARN_ROPE_FWD_KERNELS);
}

/* The FFN's activation over `elems` elements of its width: SwiGLU as two eager
 * kernels (silu, product) under eager, else one fused kernel reading the g
 * inputs and writing the output. */
static double ffn_act_s(pass_t *p, const shape_t *x, double elems)
{
    if (p->d->eager && x->g == 2.0 && !p->d->autocast)
        return p->bwd ? counted(p, TSL_ROOFLINE_EAGER_SWIGLU_BWD_BYTES * elems, 3)
                      : counted(p, TSL_ROOFLINE_EAGER_SWIGLU_FWD_BYTES * elems, 2);
    return mem(p, 2.0 * (x->g + 1.0) * elems, 1);
}

/* The block's norm is an eager RMSNorm chain (torchtitan eager, HF T5's eager_norm). */
static bool eager_block_norm(const pass_t *p, const tsl_layer_t *l)
{
    return (p->d->eager || l->eager_norm) && l->rms_norm && !p->d->autocast;
}

/* The share of block_elementwise_s's ops that are its norm's, without dropout: the
 * fused norm's norm_kernels of them and the residual add's one; 1 of 2 otherwise
 * (the pre-MLP norm in the router's graph, moe_ffn_s). */
static double block_norm_share(const pass_t *p, const tsl_layer_t *l)
{
    if (p->d->autocast || eager_block_norm(p, l))
        return 0.5;
    return norm_kernels(p, 1) / (norm_kernels(p, 1) + 1.0);
}

/* Norm (4 bytes/element; its kernels norm_kernels'), residual add (6) and dropout (5:
 * two copies and a mask) of one block: replicated over the TP group unless sequence-parallel.
 * An eager RMSNorm (torchtitan eager, HF T5's eager_norm) at its own kernels'.
 * Under autocast the norm and the residual stream are fp32 with a cast to bf16
 * between (roofline.h): 24 bytes forward, 44 backward (dropout 5 each way), the
 * host op count as without. */
static double block_elementwise_s(pass_t *p, const tsl_layer_t *l, const shape_t *x, double S,
                                  double split)
{
    double elems = x->h * x->s * S / split;
    if (eager_block_norm(p, l))
        return eager_norm_s(p, elems) +
               mem(p, (x->dropout ? 11.0 : 6.0) * elems, x->dropout ? 2 : 1);
    if (!p->d->autocast)
        return mem(p, (x->dropout ? 15.0 : 10.0) * elems,
                   norm_kernels(p, 1) + (x->dropout ? 2 : 1)) +
               norm_part_grad_s(p, elems);
    p->ops += x->dropout ? 3 : 2;
    double bytes =
        (p->bwd ? TSL_ROOFLINE_AUTOCAST_NORM_BWD_BYTES : TSL_ROOFLINE_AUTOCAST_NORM_FWD_BYTES) +
        (x->dropout ? 5.0 : 0.0);
    return tsl_roofline_mem_s(p->d, bytes * elems, (p->bwd ? 5u : 3u) + (x->dropout ? 1u : 0u));
}

/* The bias gradients of a block's two GEMM groups, backward only: each is a
 * reduction of the output gradient over the tokens, dY.sum(0), one kernel reading
 * 2 bytes per output element (PyTorch's addmm backward; Megatron-LM's linear
 * layers' grad_output.sum(dim=0)). col: the column-parallel outputs (sharded by
 * t, every token); row: the row-parallel output (h wide, its tokens divided
 * under SP). The forward's bias add rides in the GEMM's epilogue: free. */
static double bias_grad_s(pass_t *p, const tsl_layer_t *l, double col, double row)
{
    if (!p->bwd || l->no_bias)
        return 0.0;
    p->ops += 2;
    return tsl_roofline_mem_s(p->d, 2.0 * (col + row), 2);
}

/* Multi-head latent attention (roofline.h): the latent down projections and their
 * norms replicated over the TP group, the up projections and the heads split. */
static double latent_attention_s(pass_t *p, const tsl_layer_t *l, const shape_t *x, double S,
                                 double t, double split, double keys, double visited)
{
    double T = S * x->s, a = x->a, n = l->qk_nope_dim, r = l->qk_rope_dim, v = l->v_head_dim;
    double q = l->q_lora_rank, c = l->kv_lora_rank;
    /* the down projections keep the input norm's bf16 output under a layernorm
     * recompute (dev.down_orig, cost model 170) */
    bool down = p->d->down_orig;
    double qp = 0.0;
    if (q) {
        qp = lin(p, T, q, x->h);
        qp += orig_input_s(p, down, T * x->h, false) + ln_lin_col(p, T, a * (n + r) / t, q);
    } else {
        qp = lin_col(p, T, a * (n + r) / t, x->h);
    }
    double kv = lin(p, T, c + r, x->h);
    kv += orig_input_s(p, down, T * x->h, false) + ln_lin_col(p, T, a * (n + v) / t, c);
    double norms =
        mem(p, 4.0 * T * (q + c), norm_kernels(p, q ? 2 : 1)) + norm_part_grad_s(p, T * (q + c));
    p->open = false; /* no userbuffers block: its projection is plain lin() */
    prec_scope_t sc; /* linear_proj at its own precision (module_prec.h) */
    prec_enter(p, TSL_MODULE_LINEAR_PROJ, &sc);
    double out = lin(p, T, x->h, a * v / t);
    out += proj_orig_s(p, T * a * v / t);
    prec_leave(p, &sc);
    return qp + kv + norms + core_s(p, l, x, S, t, keys, visited) + out +
           block_elementwise_s(p, l, x, S, split);
}

/* Under autocast (a script's modules as written), eager PyTorch's layout copies
 * around a self-attention core (roofline.h, TSL_ROOFLINE_EAGER_*): the q, k, v
 * gradients stacked and reshaped in the backward, and, unfused, matmul's copies
 * of q, kᵀ, v and the context's in the forward, the context gradient's in the
 * backward. The host op count is unchanged (H lumps them). */
static double eager_layout_s(const pass_t *p, const tsl_layer_t *l, const shape_t *x, double S,
                             double t)
{
    if (!p->d->autocast)
        return 0.0;
    double T = S * x->s, qkv = T * (x->d + 2.0 * x->e) / t, ctx = T * x->d / t;
    double bytes = p->bwd ? TSL_ROOFLINE_EAGER_QKV_GRAD_BYTES * qkv : 0.0;
    uint32_t kernels = p->bwd ? 2u : 0u;
    if (l->unfused_attn) {
        bytes += TSL_ROOFLINE_EAGER_COPY_BYTES * (p->bwd ? ctx : qkv + ctx);
        kernels += p->bwd ? 1u : 4u;
    }
    if (p->bwd && l->hf_gpt2_eager) /* split's cat after three reshapes (roofline.h) */
        kernels += TSL_ROOFLINE_HF_GPT2_QKV_GRAD_KERNELS;
    return tsl_roofline_mem_s(p->d, bytes, kernels);
}

static double attention_s(pass_t *p, const tsl_layer_t *l, const shape_t *x, double S, double t,
                          double split, bool cross)
{
    double T = S * x->s, keys = cross ? x->ct : self_keys(l, x), q, col;
    double visited = cross ? keys : self_visited(l, x);
    if (!cross && l->kv_lora_rank)
        return latent_attention_s(p, l, x, S, t, split, keys, visited);
    if (cross) {
        q = ln_lin_col(p, T, x->d / t, x->h) + lin_col(p, S * x->ct, 2.0 * x->e / t, x->h);
        col = T * x->d / t + S * x->ct * 2.0 * x->e / t;
    } else {
        q = lin_at(p, TSL_MODULE_LINEAR_QKV, ln_lin_col, T, (x->d + 2.0 * x->e) / t, x->h);
        q += eager_layout_s(p, l, x, S, t) + qk_norm_s(p, l, x, T, t) +
             eager_rope_s(p, l, x, T, t) + yarn_rope_s(p, l, x, T, t);
        col = T * (x->d + 2.0 * x->e) / t;
    }
    p->open = p->open && !cross; /* userbuffers: self-attention's block only */
    prec_scope_t sc;             /* linear_proj at its own precision (module_prec.h); not cross-
                        attention's (Tessel names no module of it) */
    prec_enter(p, cross ? TSL_MODULE_COUNT : TSL_MODULE_LINEAR_PROJ, &sc);
    double out = lin_row(p, T, x->h, x->d / t);
    out += proj_orig_s(p, T * x->d / t);
    prec_leave(p, &sc);
    double adds = cross ? 0.0 : unfused_adds_s(p, l, col, T / split * x->h, T * x->d / t);
    return q + core_s(p, l, x, S, t, keys, visited) + out + adds +
           bias_grad_s(p, l, col, T / split * x->h) + block_elementwise_s(p, l, x, S, split);
}

/* A layer's self-attention block, a graph when the device graphs attn (cuda_graph.h:
 * _forward_attention's norm, attention and residual add) */
static double self_attention_s(pass_t *p, const tsl_layer_t *l, const shape_t *x, double S,
                               double t, double split)
{
    double ops0 = p->ops, c = attention_s(p, l, x, S, t, split, false);
    graphed(p, TSL_CUDA_GRAPH_ATTN, ops0, 1.0, true);
    return c;
}

/* The clamp before a clamped gated activation (gpt-oss; roofline.h
 * TSL_ROOFLINE_GLU_CLAMP_*), over elems elements of FFN-in's output: the clamps and
 * the cat forward, autograd's masks, wheres and cat backward. */
static double glu_clamp_s(pass_t *p, double elems)
{
    p->ops += p->bwd ? TSL_ROOFLINE_GLU_CLAMP_BWD_OPS : TSL_ROOFLINE_GLU_CLAMP_FWD_OPS;
    if (p->bwd)
        return tsl_roofline_mem_s(p->d, TSL_ROOFLINE_GLU_CLAMP_BWD_BYTES * elems,
                                  TSL_ROOFLINE_GLU_CLAMP_BWD_KERNELS);
    return tsl_roofline_mem_s(p->d, TSL_ROOFLINE_GLU_CLAMP_FWD_BYTES * elems,
                              TSL_ROOFLINE_GLU_CLAMP_FWD_KERNELS);
}

/* The linear offset's synchronising copy in the weighted quick-GeGLU's forward
 * (roofline.h TSL_ROOFLINE_GLU_OFFSET_SYNCS): the drained stream idles one host op
 * while the host issues the activation; backward nothing (the offset is saved). */
static double glu_offset_sync_s(const pass_t *p)
{
    return p->bwd ? 0.0 : TSL_ROOFLINE_GLU_OFFSET_SYNCS * p->d->host_op_s;
}

/* TEGroupedMLP's unfused path (bias_act_func and _apply_bias) runs the layer's
 * experts: not under Transformer Engine's op fuser (dev.moe_fused_mlp), which runs
 * FC1, the clamped or plain GLU and FC2 as its own ops. */
static bool eager_experts(const tsl_roofline_dev_t *d)
{
    return !d->moe_fused_mlp;
}

double tsl_roofline_glu_offset_sync_s(const tsl_roofline_dev_t *d, double host_op_s,
                                      const tsl_layer_t *l)
{
    return l->experts && l->glu_clamp && eager_experts(d)
               ? TSL_ROOFLINE_GLU_OFFSET_SYNCS * host_op_s
               : 0.0;
}

/* Non-gated routed experts' routing weights, applied after the activation in eager
 * PyTorch (roofline.h TSL_ROOFLINE_EXPERT_PROBS_*) to elems elements of FFN-out's
 * input; fp32 weights add the cast back. Host: the product and the cast are an op
 * each forward, their autograd nodes one each backward. None under the fused weighted
 * squared ReLU (dev.moe_fused_srelu): the weights are read inside the activation's own
 * kernel, whose bytes the activation term prices (roofline.h). */
static double expert_probs_s(pass_t *p, double elems)
{
    if (p->d->moe_fused_srelu)
        return 0.0;
    bool f32 = p->d->moe_fp32_probs;
    double b = p->bwd ? (f32 ? TSL_ROOFLINE_EXPERT_PROBS_FP32_BWD_BYTES
                             : TSL_ROOFLINE_EXPERT_PROBS_BF16_BWD_BYTES)
                      : (f32 ? TSL_ROOFLINE_EXPERT_PROBS_FP32_FWD_BYTES
                             : TSL_ROOFLINE_EXPERT_PROBS_BF16_FWD_BYTES);
    uint32_t kernels = p->bwd ? (f32 ? 5u : 3u) : (f32 ? 2u : 1u);
    p->ops += f32 ? 2.0 : 1.0;
    return tsl_roofline_mem_s(p->d, b * elems, kernels);
}

/* The experts' FFN-out bias, added per local expert in eager PyTorch (roofline.h)
 * to rows × h outputs. Host: each expert's split view, product and add are one op
 * forward (three framework ops, as H counts them), its four gradient kernels and
 * the autograd nodes two backward; the cat one more. */
static double expert_bias_s(pass_t *p, double rows, double h, double local)
{
    double b = p->bwd ? TSL_ROOFLINE_EXPERT_BIAS_BWD_BYTES : TSL_ROOFLINE_EXPERT_BIAS_FWD_BYTES;
    double per = p->bwd ? 4.0 : 2.0;
    p->ops += (p->bwd ? 2.0 : 1.0) * local + 1.0;
    return tsl_roofline_mem_s(p->d, b * rows * h, (uint32_t)(per * local + 1.0));
}

/* MCore v0.8's unfused permutation beyond the fused one (roofline.h
 * TSL_ROOFLINE_UNFUSED_PERMUTE_*): `elems` = R × h routed elements at top-k k. */
static double unfused_permute_s(pass_t *p, double elems, double k)
{
    double b =
        p->bwd
            ? TSL_ROOFLINE_UNFUSED_PERMUTE_BWD_BYTES + TSL_ROOFLINE_UNFUSED_PERMUTE_BWD_PER_K / k
            : TSL_ROOFLINE_UNFUSED_PERMUTE_FWD_BYTES + TSL_ROOFLINE_UNFUSED_PERMUTE_FWD_PER_K / k;
    return counted(p, b * elems,
                   p->bwd ? TSL_ROOFLINE_UNFUSED_PERMUTE_BWD_KERNELS
                          : TSL_ROOFLINE_UNFUSED_PERMUTE_FWD_KERNELS);
}

/* Megatron-LM's all-to-all dispatcher beyond the permutation and its all-to-alls
 * (roofline.h TSL_ROOFLINE_A2A_*): Tr tokens routed over E experts, R rows
 * permuted, `rows` on this rank after the dispatch (the expert-TP group's), h
 * wide, `local` experts here; the counts, the row-id map and the sync only with
 * an EP group (ep > 1), the second permutation with more than one local expert. */
static double a2a_dispatcher_s(pass_t *p, double Tr, double E, double R, double rows, double h,
                               double local, double ep)
{
    const tsl_roofline_dev_t *d = p->d;
    double c = 0.0;
    if (local > 1.0) /* sort_chunks_by_idxs after the dispatch and before the combine */
        c += counted(p, 2.0 * TSL_ROOFLINE_A2A_SORT_BYTES * h * rows, p->bwd ? 2u : 4u);
    if (!(ep > 1.0))
        return c;
    if (p->bwd) { /* the three all-to-alls' gradients: NCCL calls */
        p->ops += 3.0;
        return c;
    }
    c += counted(p, Tr * E, TSL_ROOFLINE_A2A_COUNT_KERNELS);
    p->ops += TSL_ROOFLINE_A2A_D2H_COPIES + 4.0; /* the copies; the NCCL calls */
    double map = counted(p, TSL_ROOFLINE_A2A_ROW_MAP_BYTES * Tr * E, 3);
    /* the permutation queued behind the copies: what covers the host's restart */
    double permute = map + tsl_roofline_mem_s(d, 4.0 * R * h, 1);
    return c + map + fmax(0.0, d->host_op_s - permute);
}

/* TE's GroupedLinear per-expert host work in a forward, in host ops, beyond what the
 * two grouped linears' GEMM and cast ops already count (`counted`; roofline.h
 * TSL_ROOFLINE_TE_EXPERT_FOPS_*): each linear's local experts' framework ops over
 * TSL_ROOFLINE_FRAMEWORK_OPS. FP8 as the routed experts run it (moe_fp8, the plan's
 * recipe). */
static double te_expert_calls(const tsl_roofline_dev_t *d, double local, double counted)
{
    bool fp8 = d->moe_fp8 && d->fp8 != TSL_FP8_NONE && d->fp8_flops > 0;
    double f = fp8 ? TSL_ROOFLINE_TE_EXPERT_FOPS_FP8 : TSL_ROOFLINE_TE_EXPERT_FOPS_BF16;
    return fmax(0.0, 2.0 * local * f / TSL_ROOFLINE_FRAMEWORK_OPS - counted);
}

/* A mixture-of-experts FFN (roofline.h): router, permutation, the local experts'
 * grouped GEMMs over the expert-TP group's gathered rows at f/etp, the shared
 * experts as one dense FFN. */
static double moe_ffn_s(pass_t *p, const tsl_layer_t *l, const shape_t *x, double S, double t,
                        double split)
{
    double T = S * x->s, Tr = T / t, E = l->experts, k = l->experts_per_tok;
    double ep = p->d->ep > 1 ? p->d->ep : 1.0, etp = p->d->etp > 1 ? p->d->etp : 1.0;
    double busy = p->d->moe_busy > 0 ? p->d->moe_busy : 1.0;
    double moved = p->d->moe_moved > 0 ? p->d->moe_moved : 1.0;
    double R = k * Tr, local = E / ep, m = etp * ep * R / E * busy, fe = x->f / etp;
    double r = tsl_layer_expert_width(l); /* the routed rows' width: ℓ under latent MoE */
    double block0 = p->ops, router0 = p->ops;
    double c = gemm(p, Tr, E, x->h, 1) + mem(p, 8.0 * Tr * E, 2);
    graphed(p, TSL_CUDA_GRAPH_MOE_ROUTER, router0, 1.0, true); /* the router's graph */
    c += mem(p, 8.0 * moved * R * r, 2);
    if (l->moe_latent) /* fc1_latent before the dispatch, fc2_latent after the combine:
                          replicated linears over the rank's Tr tokens (model.h) */
        c += lin_at(p, TSL_MODULE_FC1_LATENT, lin, Tr, r, x->h) +
             lin_at(p, TSL_MODULE_FC2_LATENT, lin, Tr, x->h, r);
    double c0 = c, ops0 = p->ops, wg0 = p->wgrad_s;
    c += grouped_lin(p, m, x->g * fe, r, local);
    double lin_ops = p->ops - ops0; /* FC1's GEMM and casts as counted */
    c += mem(p, 2.0 * (x->g + 1.0) * fe * m * local, 1);
    double ops1 = p->ops;
    c += grouped_lin(p, m, r, fe, local);
    lin_ops += p->ops - ops1; /* and FC2's */
    if (l->glu_clamp && eager_experts(p->d))
        c += glu_clamp_s(p, x->g * fe * m * local) + glu_offset_sync_s(p);
    if (x->g == 1.0) /* no fused weighted activation: the weights in eager PyTorch */
        c += expert_probs_s(p, fe * m * local);
    if (!l->no_bias && eager_experts(p->d)) /* experts with biases (gpt-oss): Megatron-LM
                                                adds FFN-out's per expert */
        c += expert_bias_s(p, m * local, r, local);
    p->mlp_s += c - c0;
    p->mlp_wgrad_s += p->wgrad_s - wg0;
    if (!p->bwd && eager_experts(p->d) && !(p->d->cuda_graphs & TSL_CUDA_GRAPH_MOE)) {
        /* TE's per-expert calls are the forward's host work like any op: one host thread
         * issues them between this layer's sync and the next, so they join the pass's
         * floor (cost model 198, docs/cost-model.md "The host between two syncs") */
        p->ops += te_expert_calls(p->d, local, lin_ops);
        p->expert_gpu_s = c - c0;
        p->expert_ops = p->ops - ops0;
    }
    if (p->d->moe_a2a)
        c += a2a_dispatcher_s(p, Tr, E, moved * R, m * local, r, local, ep);
    if (p->d->moe_unfused)
        c += unfused_permute_s(p, moved * R * r, k);
    if (l->shared_experts) {
        double fs = (l->shared_ffn_hidden ? l->shared_ffn_hidden : x->f) * l->shared_experts;
        double shared0 = p->ops;
        c += lin_col(p, T, x->g * fs / t, x->h);
        /* FC1 keeps the pre-MLP norm's bf16 output (dev.shared_orig, cost
         * model 170): the local rows, gathered by TE under SP */
        c += orig_input_s(p, p->d->shared_orig, T / split * x->h, split > 1.0);
        c += mem(p, 2.0 * (x->g + 1.0) * fs / t * T, 1) + lin(p, T, x->h, fs / t);
        /* not overlapped with the EP exchange: in the router's graph (cuda_graph.h) */
        graphed(p, TSL_CUDA_GRAPH_MOE_ROUTER, shared0, 1.0, false);
    }
    double norm0 = p->ops;
    c += block_elementwise_s(p, l, x, S, split);
    /* the pre-MLP norm's kernels (its dγ finalize too, backward) open the router's
     * graph; the residual add after the combine is eager */
    graphed(p, TSL_CUDA_GRAPH_MOE_ROUTER, norm0, block_norm_share(p, l), false);
    graphed(p, TSL_CUDA_GRAPH_MOE, block0, 1.0, true); /* drop-and-pad: the block whole */
    return c;
}

static double ffn_s(pass_t *p, const tsl_layer_t *l, const shape_t *x, double S, double t,
                    double split)
{
    double T = S * x->s, ops0 = p->ops, wg0 = p->wgrad_s;
    if (l->experts)
        return moe_ffn_s(p, l, x, S, t, split);
    double up = lin_at(p, TSL_MODULE_LINEAR_FC1, ln_lin_col, T, x->g * x->f / t, x->h);
    double act = ffn_act_s(p, x, x->f / t * T);
    if (l->ffn_dropout && x->dropout) /* HF T5's dropout before wo: 5 bytes, as a block's */
        act += mem(p, 5.0 * x->f / t * T, 1);
    double down = lin_at(p, TSL_MODULE_LINEAR_FC2, lin_row, T, x->h, x->f / t);
    double adds = unfused_adds_s(p, l, T * x->g * x->f / t, T / split * x->h, 0.0);
    double c = up + act + down + adds + bias_grad_s(p, l, T * x->g * x->f / t, T / split * x->h) +
               block_elementwise_s(p, l, x, S, split);
    graphed(p, TSL_CUDA_GRAPH_MLP, ops0, 1.0, true); /* a dense block's graph */
    p->mlp_s += c; /* the EP overlap's "mlp" node of a dense layer: _forward_mlp whole */
    p->mlp_wgrad_s += p->wgrad_s - wg0;
    return c;
}

/* The head's final norm over its T·h/split input rows (roofline.h "The head's final
 * norm"), as the blocks' norm runs: a fused norm's 4 bytes per element in norm_kernels,
 * an eager RMSNorm chain, or under autocast the fp32 norm with its cast to bf16. */
static double final_norm_s(pass_t *p, const tsl_layer_t *l, const shape_t *x, double S,
                           double split)
{
    double elems = x->h * x->s * S / split;
    if (!l->final_norm)
        return 0.0;
    if (eager_block_norm(p, l))
        return eager_norm_s(p, elems);
    if (!p->d->autocast)
        return mem(p, 4.0 * elems, norm_kernels(p, 1)) + norm_part_grad_s(p, elems);
    return p->bwd ? counted(p, TSL_ROOFLINE_AUTOCAST_FINAL_NORM_BWD_BYTES * elems,
                            TSL_ROOFLINE_AUTOCAST_FINAL_NORM_BWD_KERNELS)
                  : counted(p, TSL_ROOFLINE_AUTOCAST_FINAL_NORM_FWD_BYTES * elems,
                            TSL_ROOFLINE_AUTOCAST_FINAL_NORM_FWD_KERNELS);
}

static double ends_s(pass_t *p, const tsl_layer_t *l, const shape_t *x, double S, double t,
                     double split, double V)
{
    double T = S * x->s;
    if (l->kind == TSL_LAYER_HEAD) { /* logits GEMM, then the loss as the stack runs it */
        uint32_t loss_split = p->d->loss_unsplit ? 1u : (uint32_t)t;
        double ce = tsl_loss_traffic_bytes(p->d->loss_impl, loss_split, p->bwd) * V / t;
        uint32_t ce_kernels = tsl_loss_kernels(p->d->loss_impl, loss_split, p->bwd);
        double logits = wgemm(p, S * x->n, V / t, x->h, 1);
        /* an LM head's rows of V/t bf16 not 16-byte aligned: an unpadded vocabulary
         * (roofline.h; a classifier's few outputs are launch-bound either way) */
        if (l->head_tokens == 0 && fmod(V / t, 8.0) != 0) {
            if (p->bwd)
                p->wgrad_s += (TSL_ROOFLINE_UNALIGNED_GEMM - 1.0) * p->dw_s;
            logits *= TSL_ROOFLINE_UNALIGNED_GEMM;
        }
        /* the elementwise backward ratio does not apply: ce counts each pass's bytes */
        p->ops += ce_kernels;
        return final_norm_s(p, l, x, S, split) + logits +
               tsl_roofline_mem_s(p->d, ce * S * x->n, ce_kernels);
    }
    double out = (l->positions ? 6.0 : 4.0) + (x->dropout ? 5.0 : 0.0); /* rows, +pos, dropout */
    double rows = mem(p, out * x->h * T / split, 2);
    if (l->embed_norm) /* BLOOM's LayerNorm on the rows: a fused norm's 4 bytes per element */
        rows += mem(p, 4.0 * x->h * T / split, norm_kernels(p, 1)) +
                norm_part_grad_s(p, x->h * T / split);
    if (l->patch_embed)
        return gemm(p, T, x->h, V, 1) + rows;
    return rows;
}

/* The SSD scan's kernels on one TP rank (roofline.h "Mamba-2 layers"): T tokens
 * in chunks of Q, Hl heads and Gl groups local. Its matmuls as batched GEMMs by
 * the shape curve — C·Bᵀ per chunk and group (Q × Q × N), the chunk states Bᵀ·X
 * per chunk and head (N × P × Q), the chunk scan (L∘CBᵀ)·X and C·state per chunk
 * and head (Q × P × Q, Q × P × N) — and, per element of the chunk states (mamba_ssm
 * ssd_combined.py _mamba_chunk_scan_combined_fwd / _bwd): forward 12 bytes (written
 * in fp32 by the chunk-state kernel, read by the state passing, which writes them
 * in the inputs' bf16, out_dtype=C.dtype, read by the scan); backward 28 (dstates
 * written in fp32, the passing's backward reading states and dstates in fp32 and
 * writing both in bf16, dstates read by the dx and dB kernels, the states cast to
 * bf16 and read by the dC kernel); the dt cumsum (per head and token: read 2,
 * write 8 fp32 dt and dA_cumsum), the causal conv1d with its silu (read 2, write 2
 * per element of x, B, C). The backward (MambaSplitConv1dScanCombinedFn.backward)
 * first runs the conv, C·Bᵀ, the chunk states and their passing again (the passing
 * in fp32 then: 12 bytes per state element): those forward kernels are added. */
static double ssd_s(pass_t *p, const tsl_layer_t *l, double T, double t)
{
    double Q = l->ssm_chunk, N = l->ssm_state, P = l->ssm_head_dim;
    double Hl = l->ssm_heads / t, Gl = l->ssm_groups / t, chunks = ceil(T / Q);
    double conv = T * (Hl * P + 2.0 * Gl * N), states = chunks * Hl * P * N;
    double c = gemm(p, Q, Q, N, chunks * Gl) + gemm(p, N, P, Q, chunks * Hl) +
               gemm(p, Q, P, Q, chunks * Hl) + gemm(p, Q, P, N, chunks * Hl);
    c += counted(p, (p->bwd ? 28.0 : 12.0) * states, p->bwd ? 2u : 1u) + mem(p, 10.0 * T * Hl, 1) +
         mem(p, 4.0 * conv, 1);
    if (p->bwd) { /* the forward kernels the backward runs again */
        pass_t f = {.d = p->d, .bwd = false};
        c += gemm(&f, Q, Q, N, chunks * Gl) + gemm(&f, N, P, Q, chunks * Hl) +
             counted(&f, 12.0 * states, 1) + mem(&f, 10.0 * T * Hl, 1) + mem(&f, 4.0 * conv, 1);
        p->ops += f.ops;
    }
    return c;
}

/* The gate y·silu(z) inside the scan and the grouped RMSNorm after it, over `elems`
 * elements of d_i/t (roofline.h "Mamba's gate and gated norm"): forward the gate's
 * z read and out_x write in the chunk-scan kernel and the norm's kernel; backward
 * _chunk_scan_bwd_dz and the norm's three kernels. */
static double mamba_gate_norm_s(pass_t *p, double elems)
{
    double gate = p->bwd ? counted(p, TSL_ROOFLINE_MAMBA_GATE_BWD_BYTES * elems, 1)
                         : counted(p, TSL_ROOFLINE_MAMBA_GATE_FWD_BYTES * elems, 0);
    return gate + mem(p, 4.0 * elems, p->bwd ? TSL_ROOFLINE_MAMBA_NORM_BWD_KERNELS : 1);
}

/* A Mamba-2 mixer layer (mamba.h; roofline.h "Mamba-2 layers"): the fused pre-norm
 * and residual as a block's, in_proj (column-parallel, w_in/t wide), the SSD scan
 * with its conv (ssd_s), the gate and the grouped RMSNorm over d_i/t
 * (mamba_gate_norm_s), out_proj
 * (row-parallel; with in_proj one userbuffers TP block: MambaMixer builds them with
 * tp_comm_buffer_name "fc1" and "fc2", megatron/core/ssm/mamba_mixer.py at
 * d98e8a64dd), and, with more than one sample per micro-batch, the two layout
 * copies _ssm_training makes (rearrange(...).contiguous() of in_proj's output to
 * batch-major and of the scan's output back: read 2, write 2 each). */
static double mamba_s(pass_t *p, const tsl_layer_t *l, const shape_t *x, double S, double t,
                      double split)
{
    double T = S * x->s, win = tsl_mamba_in_width(l) / t, di = tsl_mamba_inner(l) / t;
    double c = lin_at(p, TSL_MODULE_IN_PROJ, ln_lin_col, T, win, x->h) + ssd_s(p, l, T, t) +
               mamba_gate_norm_s(p, T * di) + lin_at(p, TSL_MODULE_OUT_PROJ, lin_row, T, x->h, di) +
               block_elementwise_s(p, l, x, S, split);
    if (S > 1.0)
        c += mem(p, 4.0 * T * (win + di), 2);
    return c;
}

/* An MTP depth's entry (mtp.h): the shifted tokens' embedding rows (read and
 * written, 4 bytes per element), enorm and hnorm (read 2, write 2 each), their
 * concatenation into eh_proj's 2h-wide input (read 4, write 4), eh_proj (column-
 * parallel, 2h -> h/t) and the depth's final norm after its inner layer. */
static double mtp_s(pass_t *p, const shape_t *x, double S, double t, double split)
{
    double T = S * x->s, row = x->h * T / split;
    return mem(p, 4.0 * row, 1) + mem(p, 2.0 * 4.0 * row, norm_kernels(p, 2)) +
           mem(p, 8.0 * row, 1) + lin_col(p, T, x->h / t, 2.0 * x->h) +
           mem(p, 4.0 * row, norm_kernels(p, 1)) + norm_part_grad_s(p, 3.0 * row);
}

/* The FLOP count over F: no bandwidth known (the pre-roofline model). */
static double flat_s(const tsl_roofline_dev_t *d, const tsl_layer_t *l, double samples, double tt,
                     double vocab)
{
    double pad = 0.0;
    if (l->kind == TSL_LAYER_HEAD && vocab > l->vocab)
        pad = 2.0 * (l->head_tokens ? l->head_tokens : l->seq_len) * l->hidden * (vocab - l->vocab);
    return (l->fwd_flops + pad - core_saved_flops(l)) * samples / (tt * d->gemm_flops);
}

/* The pass's GPU time, or its host dispatch when that is longer: an eager stack
 * issues kernels asynchronously, so the GPU idles only when its kernels are
 * shorter than the host's ops × host_op_s (docs/cost-model.md, "Host dispatch").
 * With synchronous launches (launch_blocking) the host dispatches each op only after
 * the kernel before it has ended: nothing runs ahead, and the two add
 * (docs/cost-model.md, "Synchronous launches"). A CUDA-graphed module's ops are not
 * the host's: one graph launch stands for them (graphed; "CUDA-graphed modules"). */
static double host_floor(const pass_t *p, double gpu_s)
{
    double eager = p->ops - p->graphed_ops + p->graphs * TSL_ROOFLINE_GRAPH_LAUNCH_OPS;
    double host = eager * p->d->host_op_s;
    return p->d->launch_blocking ? gpu_s + host : fmax(gpu_s, host);
}

static double layer_gpu_s(pass_t *p, const tsl_layer_t *l, double samples, uint32_t t, bool sp,
                          double vocab);

static double layer_s(pass_t *p, const tsl_layer_t *l, double samples, uint32_t t, bool sp,
                      double vocab)
{
    double gpu = layer_gpu_s(p, l, samples, t, sp, vocab);
    return p->d->mem_bw > 0 ? host_floor(p, gpu) : gpu;
}

/* Under autocast, the linears' fp32 weights cast to bf16 (forward) and their
 * bf16 gradients cast back to fp32 (backward), once per micro-batch: 6 bytes per
 * parameter of this TP rank, a kernel per weight and bias (roofline.h). The
 * embedding's lookup reads its fp32 table as is; the head casts the vocabulary's
 * V × h. */
static double weight_casts_s(const pass_t *p, const tsl_layer_t *l, const shape_t *x, double tt,
                             double vocab)
{
    double w;
    uint32_t kernels;
    switch (l->kind) {
    case TSL_LAYER_EMBEDDING:
        if (!l->patch_embed)
            return 0.0;
        w = (double)l->params - (double)l->positions * l->hidden;
        kernels = l->no_bias ? 1 : 2;
        break;
    case TSL_LAYER_HEAD:
        w = vocab * x->h;
        kernels = 1;
        break;
    default: { /* QKV and output (+ cross-attention's), FFN in and out */
        uint32_t lin = l->kind == TSL_LAYER_MTP ? 1
                       : l->kind == TSL_LAYER_ATTENTION || l->kind == TSL_LAYER_FFN ||
                               l->kind == TSL_LAYER_MAMBA
                           ? 2
                       : l->kind == TSL_LAYER_DECODER ? 6
                                                      : 4;
        w = (double)l->params;
        kernels = l->no_bias ? lin : 2 * lin;
    }
    }
    return tsl_roofline_mem_s(p->d, TSL_ROOFLINE_AUTOCAST_CAST_BYTES * w / tt, kernels);
}

/* TransGAN's block as AMP's fork writes it, beyond the roofline's kernels
 * (roofline.h TSL_ROOFLINE_TRANSGAN_*): the pixel norms and the noise over the
 * block's h-wide activations (replicated over TP unless sequence-parallel), the
 * QKV bias add over its column-parallel output, the erf GELU over the FFN width;
 * each kernel one host op. The scores' scale and bias are in core_s. */
static double transgan_eager_s(pass_t *p, const shape_t *x, double S, double t, double split)
{
    double T = S * x->s, h = T * x->h / split, f = T * x->f / t;
    if (p->bwd)
        return counted(p, TSL_ROOFLINE_TRANSGAN_H_BWD_BYTES * h,
                       TSL_ROOFLINE_TRANSGAN_H_BWD_KERNELS) +
               counted(p, TSL_ROOFLINE_TRANSGAN_F_BWD_BYTES * f,
                       TSL_ROOFLINE_TRANSGAN_F_BWD_KERNELS);
    return counted(p, TSL_ROOFLINE_TRANSGAN_H_FWD_BYTES * h, TSL_ROOFLINE_TRANSGAN_H_FWD_KERNELS) +
           counted(p, TSL_ROOFLINE_TRANSGAN_QKV_BIAS_BYTES * T * (x->d + 2.0 * x->e) / t, 1) +
           counted(p, TSL_ROOFLINE_TRANSGAN_F_FWD_BYTES * f, TSL_ROOFLINE_TRANSGAN_F_FWD_KERNELS);
}

/* A dense FFN that runs transformers' GPT-2 block (its gelu_new chain): the
 * layers both the time (hf_gpt2_eager_s) and the kept bytes are charged on. */
static bool hf_gpt2_ffn(const tsl_layer_t *l)
{
    return l->hf_gpt2_eager && !l->experts &&
           (l->kind == TSL_LAYER_ENCODER || l->kind == TSL_LAYER_FFN);
}

/* transformers' NewGELUActivation beyond the roofline's one activation kernel
 * (roofline.h TSL_ROOFLINE_HF_GPT2_*), over the FFN's f/t-wide activations under
 * autocast; each kernel one host op. Its scores are in core_s, its QKV gradients'
 * extra kernels in eager_layout_s. */
static double hf_gpt2_eager_s(pass_t *p, const shape_t *x, double S, double t)
{
    double f = S * x->s * x->f / t;
    return p->bwd ? counted(p, TSL_ROOFLINE_HF_GPT2_F_BWD_BYTES * f,
                            TSL_ROOFLINE_HF_GPT2_F_BWD_KERNELS)
                  : counted(p, TSL_ROOFLINE_HF_GPT2_F_FWD_BYTES * f,
                            TSL_ROOFLINE_HF_GPT2_F_FWD_KERNELS);
}

/* The layer's kernels, by kind (with W = 0 its GEMMs alone, as FLOPs over F). */
static double kernels_s(pass_t *p, const tsl_layer_t *l, double samples, double tt, double split,
                        double vocab)
{
    double extra = (p->bwd ? 2.0 : 1.0) * l->extra_fwd_flops * samples / (tt * p->d->gemm_flops);
    shape_t x = shape_of(l);
    if (p->d->autocast)
        extra += weight_casts_s(p, l, &x, tt, vocab);
    if (l->transgan_eager && l->kind == TSL_LAYER_ENCODER)
        extra += transgan_eager_s(p, &x, samples, tt, split);
    if (hf_gpt2_ffn(l) && p->d->autocast && x.f > 0)
        extra += hf_gpt2_eager_s(p, &x, samples, tt);
    switch (l->kind) {
    case TSL_LAYER_ENCODER:
        return extra + self_attention_s(p, l, &x, samples, tt, split) +
               ffn_s(p, l, &x, samples, tt, split);
    case TSL_LAYER_DECODER: /* _forward_attention: self- and cross-attention */
        return extra + self_attention_s(p, l, &x, samples, tt, split) +
               attention_s(p, l, &x, samples, tt, split, true) +
               ffn_s(p, l, &x, samples, tt, split);
    case TSL_LAYER_ATTENTION: return extra + self_attention_s(p, l, &x, samples, tt, split);
    case TSL_LAYER_FFN: return extra + ffn_s(p, l, &x, samples, tt, split);
    case TSL_LAYER_MAMBA: {
        double ops0 = p->ops, c = mamba_s(p, l, &x, samples, tt, split);
        graphed(p, TSL_CUDA_GRAPH_MAMBA, ops0, 1.0, true);
        return extra + c;
    }
    case TSL_LAYER_MTP: return extra + mtp_s(p, &x, samples, tt, split);
    default: return extra + ends_s(p, l, &x, samples, tt, split, vocab);
    }
}

static double layer_gpu_s(pass_t *p, const tsl_layer_t *l, double samples, uint32_t t, bool sp,
                          double vocab)
{
    double tt = t ? t : 1;
    if (p->d->mem_bw <= 0) /* FLOP count only: backward = 2 × forward, as before */
        return (p->bwd ? 2.0 : 1.0) * flat_s(p->d, l, samples, tt, vocab);
    return kernels_s(p, l, samples, tt, sp ? tt : 1.0, vocab);
}

double tsl_roofline_layer_fwd_s(const tsl_roofline_dev_t *d, const tsl_layer_t *l, double samples,
                                uint32_t t, bool sp, double vocab)
{
    pass_t p = {.d = d, .bwd = false};
    return layer_s(&p, l, samples, t, sp, vocab);
}

double tsl_roofline_layer_bwd_s(const tsl_roofline_dev_t *d, const tsl_layer_t *l, double samples,
                                uint32_t t, bool sp, double vocab)
{
    pass_t p = {.d = d, .bwd = true};
    return layer_s(&p, l, samples, t, sp, vocab);
}

/* A .grad accumulation kernel per tensor; the linears as weight_casts_s counts them. */
uint32_t tsl_roofline_param_tensors(const tsl_layer_t *l)
{
    uint32_t per = l->no_bias ? 1 : 2, lin, norms;
    switch (l->kind) {
    case TSL_LAYER_EMBEDDING: return 1 + (l->positions ? 1 : 0) + (l->patch_embed ? per : 0);
    case TSL_LAYER_HEAD: return (l->tied_head ? 0 : 1) + per;
    case TSL_LAYER_DECODER: lin = 6, norms = 3; break;
    case TSL_LAYER_ENCODER: lin = 4, norms = l->shared_norm ? 1 : 2; break;
    case TSL_LAYER_MAMBA: return 9; /* in/out_proj, conv w and b, dt_bias, A_log, D, 2 norms */
    case TSL_LAYER_MTP: return 4;   /* eh_proj and three norms (mtp.h) */
    default: lin = 2, norms = 1; break;
    }
    bool qk_w = tsl_layer_has_attention(l) &&
                (l->qk_norm == TSL_QK_NORM_PER_HEAD || l->qk_norm == TSL_QK_NORM_FULL);
    return per * (lin + norms) + (qk_w ? 2u : 0u); /* q_layernorm, k_layernorm: no bias */
}

/* A backward pass's time with the gradient accumulation after its kernels (gpu_s:
 * the pass's GPU time), floored by the host; *acc_gpu_s the same before the floor. */
static double acc_pass_s(const pass_t *p, const tsl_layer_t *l, double params, double gpu_s,
                         double *acc_gpu_s)
{
    const tsl_roofline_dev_t *d = p->d;
    *acc_gpu_s = gpu_s;
    if (!(d->grad_acc_bytes > 0) || d->mem_bw <= 0 || !(params > 0))
        return d->mem_bw > 0 ? host_floor(p, gpu_s) : gpu_s; /* layer_s */
    *acc_gpu_s += mem_raw_s(d, d->grad_acc_bytes * params, tsl_roofline_param_tensors(l));
    return host_floor(p, *acc_gpu_s);
}

double tsl_roofline_layer_bwd_acc_s(const tsl_roofline_dev_t *d, const tsl_layer_t *l,
                                    double samples, uint32_t t, bool sp, double vocab,
                                    double params)
{
    pass_t p = {.d = d, .bwd = true};
    double gpu = layer_gpu_s(&p, l, samples, t, sp, vocab), acc_gpu;
    return acc_pass_s(&p, l, params, gpu, &acc_gpu);
}

void tsl_roofline_layer_fwd(const tsl_roofline_dev_t *d, const tsl_layer_t *l, double samples,
                            uint32_t t, bool sp, double vocab, tsl_roofline_fwd_t *out)
{
    pass_t p = {.d = d, .bwd = false};
    memset(out, 0, sizeof(*out));
    out->gpu_s = layer_gpu_s(&p, l, samples, t, sp, vocab);
    out->s = d->mem_bw > 0 ? host_floor(&p, out->gpu_s) : out->gpu_s; /* layer_s */
    if (d->mem_bw > 0) {
        out->expert_gpu_s = p.expert_gpu_s;
        out->expert_ops = p.expert_ops;
        out->mlp_frac = out->gpu_s > 0 ? fmin(1.0, p.mlp_s / out->gpu_s) : 0.0;
    }
    /* the blocks as tsl_roofline_layer_tp_gemms keeps them: a backward records the
     * same linears in the same order, and prices them above 0 where the forward does */
    if (!(d->mem_bw > 0) || !(out->gpu_s > 0))
        return;
    out->n = p.nblk;
    for (uint32_t i = 0; i < p.nblk; i++) {
        out->col_fp8[i] = p.blk_fp8[i][0];
        out->row_fp8[i] = p.blk_fp8[i][1];
        out->col_amax[i] = p.blk_amax[i][0];
        out->row_amax[i] = p.blk_amax[i][1];
    }
}

double tsl_roofline_layer_wgrad_frac(const tsl_roofline_dev_t *d, const tsl_layer_t *l,
                                     double samples, uint32_t t, bool sp, double vocab)
{
    if (d->mem_bw <= 0)
        return 0.5; /* FLOPs only: dX and dW, one forward's FLOPs each */
    pass_t p = {.d = d, .bwd = true};
    double gpu = layer_gpu_s(&p, l, samples, t, sp, vocab);
    return gpu > 0 ? fmin(1.0, p.wgrad_s / gpu) : 0.0;
}

void tsl_roofline_layer_col_frac(const tsl_roofline_dev_t *d, const tsl_layer_t *l, double samples,
                                 uint32_t t, bool sp, double vocab, double *dgrad_frac,
                                 double *wgrad_frac)
{
    double tt = t ? t : 1;
    pass_t p = {.d = d, .bwd = true};
    *dgrad_frac = *wgrad_frac = 0.0;
    if (d->mem_bw > 0) {
        double gpu = layer_gpu_s(&p, l, samples, t, sp, vocab);
        if (gpu > 0) {
            *dgrad_frac = fmin(1.0, p.col_dx_s / gpu);
            *wgrad_frac = fmin(1.0, p.col_dw_s / gpu);
        }
        return;
    }
    /* FLOP count only: the shapes' GEMM FLOPs against the backward's 2 × fwd_flops */
    double b = 2.0 * flat_s(d, l, samples, tt, vocab);
    kernels_s(&p, l, samples, tt, sp ? tt : 1.0, vocab);
    if (b > 0) {
        *dgrad_frac = fmin(1.0, p.col_dx_s / b);
        *wgrad_frac = fmin(1.0, p.col_dw_s / b);
    }
}

void tsl_roofline_layer_bwd(const tsl_roofline_dev_t *d, const tsl_layer_t *l, double samples,
                            uint32_t t, bool sp, double vocab, double params,
                            tsl_roofline_bwd_t *out)
{
    pass_t p = {.d = d, .bwd = true};
    double gpu = layer_gpu_s(&p, l, samples, t, sp, vocab);
    memset(out, 0, sizeof(*out));
    out->s = d->mem_bw > 0 ? host_floor(&p, gpu) : gpu; /* layer_s */
    out->acc_s = acc_pass_s(&p, l, params, gpu, &out->acc_gpu_s);
    if (d->mem_bw > 0) { /* tsl_roofline_layer_wgrad_frac, _col_frac */
        out->wgrad_frac = gpu > 0 ? fmin(1.0, p.wgrad_s / gpu) : 0.0;
        out->col_frac[0] = gpu > 0 ? fmin(1.0, p.col_dx_s / gpu) : 0.0;
        out->col_frac[1] = gpu > 0 ? fmin(1.0, p.col_dw_s / gpu) : 0.0;
        out->mlp_frac = gpu > 0 ? fmin(1.0, p.mlp_s / gpu) : 0.0;
        out->mlp_wgrad_frac = gpu > 0 ? fmin(out->mlp_frac, p.mlp_wgrad_s / gpu) : 0.0;
        return;
    }
    out->wgrad_frac = 0.5; /* FLOP count only: as those functions price it */
    tsl_roofline_layer_col_frac(d, l, samples, t, sp, vocab, &out->col_frac[0], &out->col_frac[1]);
}

void tsl_roofline_layer_tp_gemms(const tsl_roofline_dev_t *d, const tsl_layer_t *l, double samples,
                                 uint32_t t, bool sp, double vocab, tsl_roofline_tp_gemms_t *out)
{
    double tt = t ? t : 1;
    pass_t f = {.d = d, .bwd = false}, b = {.d = d, .bwd = true};
    double gf, gb;
    memset(out, 0, sizeof(*out));
    if (d->mem_bw > 0) {
        gf = layer_gpu_s(&f, l, samples, t, sp, vocab);
        gb = layer_gpu_s(&b, l, samples, t, sp, vocab);
    } else { /* FLOP count only: the shapes' GEMM FLOPs against fwd_flops, 2 × backward */
        gf = flat_s(d, l, samples, tt, vocab);
        gb = 2.0 * gf;
        kernels_s(&f, l, samples, tt, sp ? tt : 1.0, vocab);
        kernels_s(&b, l, samples, tt, sp ? tt : 1.0, vocab);
    }
    if (!(gf > 0) || !(gb > 0))
        return;
    out->n = f.nblk < b.nblk ? f.nblk : b.nblk;
    for (uint32_t i = 0; i < out->n; i++) {
        out->col_f[i] = fmin(1.0, f.blk[i][0] / gf);
        out->row_f[i] = fmin(1.0, f.blk[i][2] / gf);
        out->col_dx[i] = fmin(1.0, b.blk[i][0] / gb);
        out->col_dw[i] = fmin(1.0, b.blk[i][1] / gb);
        out->row_dx[i] = fmin(1.0, b.blk[i][2] / gb);
        out->col_fp8[i] = f.blk_fp8[i][0];
        out->row_fp8[i] = f.blk_fp8[i][1];
        out->col_amax[i] = f.blk_amax[i][0];
        out->row_amax[i] = f.blk_amax[i][1];
    }
}

double tsl_roofline_tp_restart_s(const tsl_roofline_dev_t *d, const tsl_layer_t *l, double samples,
                                 bool bwd, uint32_t *kernels)
{
    if (kernels)
        *kernels = 0;
    if (d->mem_bw <= 0)
        return 0.0;
    shape_t x = shape_of(l);
    pass_t p = {.d = d, .bwd = bwd};
    double s = block_elementwise_s(&p, l, &x, samples, 1.0);
    if (kernels)
        *kernels = (uint32_t)p.ops;
    return s;
}

double tsl_roofline_core_fwd_s(const tsl_roofline_dev_t *d, const tsl_layer_t *l, double samples,
                               uint32_t t)
{
    if (l->core_fwd_flops <= 0)
        return 0.0;
    double tt = t ? t : 1;
    if (d->mem_bw <= 0)
        return (l->core_fwd_flops - core_saved_flops(l)) * samples / (tt * d->gemm_flops);
    shape_t x = shape_of(l);
    pass_t p = {.d = d, .bwd = false};
    double c = core_s(&p, l, &x, samples, tt, self_keys(l, &x), self_visited(l, &x));
    if (l->kind == TSL_LAYER_DECODER)
        c += core_s(&p, l, &x, samples, tt, x.ct, x.ct);
    return c;
}

void tsl_roofline_autocast_act(const tsl_layer_t *l, double *repl, double *score)
{
    shape_t x = shape_of(l);
    double norms = 0.0;
    switch (l->kind) {
    case TSL_LAYER_ENCODER: norms = l->parallel_block ? 1.0 : 2.0; break; /* one x kept */
    case TSL_LAYER_DECODER: norms = 3.0; break;
    case TSL_LAYER_ATTENTION:
    case TSL_LAYER_FFN: norms = 1.0; break;
    case TSL_LAYER_HEAD: norms = 2.0; break; /* the final norm's fp32 input beside the GEMM's */
    default: break;
    }
    *repl = 2.0 * norms * x.s * x.h;
    /* 2 (or with dropout 5) bytes per score in act_score_bytes become 6 (7) */
    *score = (double)l->act_score_bytes * (x.dropout ? 2.0 / 5.0 : 2.0);
}

double tsl_roofline_hf_gpt2_act(const tsl_layer_t *l)
{
    if (!hf_gpt2_ffn(l))
        return 0.0;
    return TSL_ROOFLINE_HF_GPT2_F_KEPT_BYTES * (double)l->seq_len * (double)l->ffn_hidden;
}

/* Where fp8_count tallies: each linear's elements by the recipe it runs at (the
 * module's own, module_prec.h; bf16 ones not counted), its kept input among the
 * replicated or sharded ones or none (an input kept by two linears: no saving). */
typedef enum { KEPT_NONE, KEPT_REPL, KEPT_SHARD, KEPT_BESIDE } kept_t;
typedef struct fp8_tally {
    uint32_t prec, recipe;
    tsl_roofline_fp8_split_t *out;
} fp8_tally_t;

/* One FP8 linear of `module` (TSL_MODULE_COUNT: one module_prec names not) of (k × n)
 * weights per TP rank taking `in` input elements per sample that the backward keeps:
 * counted where TE/torchao convert it (fp8_dims), at its precision. */
static void fp8_count(const fp8_tally_t *ty, uint32_t module, double k, double n, double in,
                      kept_t kept)
{
    uint32_t r = tsl_module_prec_recipe(ty->prec, module, ty->recipe);
    if (!fp8_dims(k, n) || r == TSL_FP8_NONE || r >= TSL_FP8_COUNT)
        return;
    ty->out->weights[r] += k * n;
    if (kept == KEPT_REPL)
        ty->out->repl[r] += in;
    else if (kept == KEPT_SHARD)
        ty->out->shard[r] += in;
    else if (kept == KEPT_BESIDE)
        ty->out->beside[r] += in;
}

/* The attention output projection's input width per TP rank: the core's output,
 * d/t wide (latent attention's a·v/t). */
static double proj_width(const tsl_layer_t *l, const shape_t *x, double tt)
{
    return l->kv_lora_rank ? x->a * l->v_head_dim / tt : x->d / tt;
}

double tsl_roofline_proj_fp8_elems(const tsl_layer_t *l, uint32_t t)
{
    shape_t x = shape_of(l);
    double k = proj_width(l, &x, t ? t : 1);
    return tsl_layer_has_attention(l) && fp8_dims(k, x.h) ? x.s * k : 0.0;
}

/* Elements of the linear inputs TransformerEngine keeps quantised
 * (tsl_fp8_copy_bytes each: 1 byte, nvfp4 0.5625, not bf16's 2),
 * per sample on one TP rank, for each linear TE/torchao run in FP8 (fp8_count):
 * a linear's input read by that linear alone (the norm output two MLA down
 * projections read is kept in FP8 twice: no saving); for a MoE FFN the shared
 * experts' FFN-out input — the norm output the router keeps in bf16 saves
 * nothing, and the routed experts' inputs are the expert layout's (cost.c,
 * moe_terms, by EP, expert TP and the rows moved). Inputs inside a module the
 * plan recomputes (recompute.h) are not kept at all: not counted. */
static void fp8_attention(const tsl_layer_t *l, const shape_t *x, double tt, uint32_t mods,
                          const fp8_tally_t *ty)
{
    const uint32_t other = TSL_MODULE_COUNT; /* a linear module_prec does not name */
    double pw = proj_width(l, x, tt);
    if (!l->kv_lora_rank) { /* QKV from the norm's output, the output projection from the core's */
        fp8_count(ty, TSL_MODULE_LINEAR_QKV, x->h, (x->d + 2.0 * x->e) / tt, x->s * x->h,
                  KEPT_REPL);
        fp8_count(ty, TSL_MODULE_LINEAR_PROJ, pw, x->h, x->s * pw, KEPT_SHARD);
        return;
    }
    /* latent attention (latent_attention_s): the norm's output feeds the two down
     * projections; the latents (replicated, as the model stashes them) the up
     * projections, unless mla_up_proj recomputes them; the core's output the
     * output projection */
    double a = x->a, n = l->qk_nope_dim, r = l->qk_rope_dim, v = l->v_head_dim;
    double q = l->q_lora_rank, c = l->kv_lora_rank;
    double up = (mods & TSL_RECOMPUTE_MLA_UP_PROJ) ? 0.0 : x->s;
    if (q) {
        fp8_count(ty, other, x->h, q, 0.0, KEPT_NONE);
        fp8_count(ty, other, q, a * (n + r) / tt, up * q, KEPT_REPL);
    } else {
        fp8_count(ty, other, x->h, a * (n + r) / tt, 0.0, KEPT_NONE);
    }
    fp8_count(ty, other, x->h, c + r, 0.0, KEPT_NONE);
    fp8_count(ty, other, c, a * (n + v) / tt, up * c, KEPT_REPL);
    fp8_count(ty, TSL_MODULE_LINEAR_PROJ, pw, x->h, x->s * pw, KEPT_SHARD);
}

static void fp8_ffn(const tsl_layer_t *l, const shape_t *x, double tt, uint32_t mods,
                    const fp8_tally_t *ty)
{
    if (!l->experts) { /* FFN-in from the norm's output, FFN-out from the activation's */
        double kept = (mods & TSL_RECOMPUTE_MLP) ? 0.0 : x->s;
        fp8_count(ty, TSL_MODULE_LINEAR_FC1, x->h, x->g * x->f / tt, kept * x->h, KEPT_REPL);
        fp8_count(ty, TSL_MODULE_LINEAR_FC2, x->f / tt, x->h, kept * x->f / tt, KEPT_SHARD);
        return;
    }
    /* latent MoE's two TELinears, duplicated over TP (h x l and l x h whole on every
     * rank; Megatron-LM moe_layer.py at d98e8a6): fc1_latent_proj's FP8 copy of the
     * pre-MLP norm's output is kept beside the bf16 one the router keeps
     * (RouterGatingLinearFunction saves its input): no saving, a copy more;
     * fc2_latent_proj's of the combined rows replaces their bf16 stash (model.h: 2·s·l).
     * Inside the moe module's recompute neither is kept */
    double moe_in = (mods & TSL_RECOMPUTE_MOE) ? 0.0 : x->s;
    if (l->moe_latent) {
        double r = l->moe_latent;
        fp8_count(ty, TSL_MODULE_FC1_LATENT, x->h, r, moe_in * x->h, KEPT_BESIDE);
        fp8_count(ty, TSL_MODULE_FC2_LATENT, r, x->h, moe_in * r, KEPT_REPL);
    }
    /* the shared experts, one dense FFN; their FFN-out input is not kept when moe
     * or shared_experts recomputes them */
    double fs = (l->shared_ffn_hidden ? l->shared_ffn_hidden : x->f) * l->shared_experts;
    if (!(fs > 0))
        return;
    double kept = (mods & TSL_RECOMPUTE_SHARED_EXPERTS) ? 0.0 : moe_in;
    fp8_count(ty, TSL_MODULE_COUNT, x->h, x->g * fs / tt, 0.0, KEPT_NONE);
    fp8_count(ty, TSL_MODULE_COUNT, fs / tt, x->h, kept * fs / tt, KEPT_SHARD);
}

void tsl_roofline_fp8_split(const tsl_layer_t *l, uint32_t t, uint32_t recompute,
                            uint32_t module_prec, uint32_t recipe, tsl_roofline_fp8_split_t *out)
{
    double tt = t ? t : 1;
    shape_t x = shape_of(l);
    uint32_t mods = tsl_recompute_applies(l, recompute);
    bool attn = tsl_layer_has_attention(l), ffn = tsl_layer_has_ffn(l);
    memset(out, 0, sizeof(*out));
    fp8_tally_t ty = {.prec = module_prec, .recipe = recipe, .out = out};
    if (attn)
        fp8_attention(l, &x, tt, mods, &ty);
    if (ffn)
        fp8_ffn(l, &x, tt, mods, &ty);
    if (l->kind == TSL_LAYER_MAMBA) { /* in_proj from the norm's output, out_proj from the
                                         gated norm's (mamba_s) */
        double di = tsl_mamba_inner(l) / tt;
        fp8_count(&ty, TSL_MODULE_IN_PROJ, x.h, tsl_mamba_in_width(l) / tt, x.s * x.h, KEPT_REPL);
        fp8_count(&ty, TSL_MODULE_OUT_PROJ, di, x.h, x.s * di, KEPT_SHARD);
    }
}

void tsl_roofline_fp8_elems(const tsl_layer_t *l, uint32_t t, uint32_t recompute, double *weights,
                            double *repl, double *shard)
{
    tsl_roofline_fp8_split_t s;
    tsl_roofline_fp8_split(l, t, recompute, 0, TSL_FP8_DELAYED, &s); /* every linear one slot */
    *weights = s.weights[TSL_FP8_DELAYED];
    *repl = s.repl[TSL_FP8_DELAYED];
    *shard = s.shard[TSL_FP8_DELAYED];
}

/* ---- the forward of the modules a plan recomputes (recompute.h) ---- */

/* FLOPs per sample of the recomputed modules' GEMMs (no bandwidth known). */
static double recompute_flops(const tsl_layer_t *l, uint32_t m)
{
    shape_t x = shape_of(l);
    double a = x.a, n = l->qk_nope_dim, r = l->qk_rope_dim, v = l->v_head_dim;
    double q = l->q_lora_rank, c = l->kv_lora_rank, k = l->experts_per_tok;
    double fs = (l->shared_ffn_hidden ? l->shared_ffn_hidden : x.f) * l->shared_experts;
    double per_width = 2.0 * (x.g + 1.0) * x.s * x.h, fl = 0.0;
    double routed = per_width / x.h * tsl_layer_expert_width(l); /* ℓ wide under latent MoE */
    if (m & TSL_RECOMPUTE_MLA_UP_PROJ)
        fl += 2.0 * x.s * ((q ? q : x.h) * a * (n + r) + c * a * (n + v));
    if (m & TSL_RECOMPUTE_MLP)
        fl += per_width * x.f;
    if (m & TSL_RECOMPUTE_TORCHTITAN_OP) /* half the block's linears (no core) */
        fl += 0.5 * (l->fwd_flops - l->core_fwd_flops);
    if (m & TSL_RECOMPUTE_MOE)
        fl += k * routed * x.f + per_width * fs + 2.0 * x.s * x.h * l->experts +
              (l->moe_latent ? 4.0 * x.s * x.h * l->moe_latent : 0.0);
    if (m & TSL_RECOMPUTE_SHARED_EXPERTS) /* a third run beside moe (recompute_fwd_s) */
        fl += per_width * fs;
    return fl;
}

/* The routed copies' activation as moe_ffn_s runs it, on T tokens: E/ep experts of
 * width f/etp over etp·ep·R/E × busy rows each, with what runs inside Megatron-LM's
 * checkpointed bias_act_func (experts.py TEGroupedMLP): the clamp of a clamped GLU
 * (weighted_bias_quick_geglu_impl), the routing weights' product and cast of a
 * non-gated expert. */
static double moe_act_fwd_s(pass_t *p, const tsl_layer_t *l, const shape_t *x, double T, double tt)
{
    double R = l->experts_per_tok * T / tt, busy = p->d->moe_busy;
    double c = mem(p, 2.0 * (x->g + 1.0) * x->f * R * busy, 1);
    if (l->glu_clamp && eager_experts(p->d))
        c += glu_clamp_s(p, x->g * x->f * R * busy) + glu_offset_sync_s(p);
    if (x->g == 1.0)
        c += expert_probs_s(p, x->f * R * busy);
    return c;
}

/* FC2's input quantised again in the backward under moe_act with FP8 (cost model
 * 163): Megatron-LM sets save_original_input on the experts' linear_fc2 where
 * moe_act is recomputed selectively under fp8 or fp4 (moe/experts.py
 * TEGroupedMLP.__init__, set_save_original_input, 44151194), so TE's GroupedLinear
 * keeps no FP8 copy of the activation's output: its forward casts rowwise only
 * (grouped_linear.py _GroupedLinear.forward, columnwise usage off under
 * save_original_input, TE v2.16), and its backward, after moe_act's recompute has
 * rebuilt the bf16 input, runs tex.split_quantize over it again for the wgrad — both
 * copies under current scaling (set_usage rowwise and columnwise), the columnwise
 * one under the block-scaled recipes — one quantizer per local expert
 * (orig_bwd_cast_s over grouped_cast_s). Net of the forward's copy not written
 * (orig_fwd_saved_s): under current scaling on
 * Hopper 6 − 1 B per element and 4 kernels an expert. TE refuses it under delayed
 * scaling (Float8Quantizer: save_original_input disabled, nothing changes); the op
 * fuser's grouped MLP (moe_fused_mlp) is not GroupedLinear and is not priced so
 * (assumed unchanged); torchao is not Megatron-LM's. */
static double fc2_recast_s(pass_t *p, const tsl_layer_t *l, const shape_t *x, double T, double tt)
{
    const tsl_roofline_dev_t *d = p->d;
    double etp = d->etp > 1 ? d->etp : 1.0, ep = d->ep > 1 ? d->ep : 1.0;
    double fe = x->f / etp, r = tsl_layer_expert_width(l), local = l->experts / ep;
    if (!d->moe_fp8 || d->fp8 == TSL_FP8_NONE || d->fp8 == TSL_FP8_DELAYED || !(d->fp8_flops > 0) ||
        d->fp8_impl != TSL_FP8_IMPL_TE || d->moe_fused_mlp || !fp8_dims(fe, r) || !(local > 0))
        return 0.0;
    double elems = l->experts_per_tok * T / tt * d->moe_busy * x->f; /* moe_act_fwd_s's */
    return orig_bwd_cast_s(p, elems, local, false) - orig_fwd_saved_s(p, elems, false);
}

double tsl_roofline_recompute_fwd_s(const tsl_roofline_dev_t *d, const tsl_layer_t *l,
                                    double samples, uint32_t t, bool sp, uint32_t recompute)
{
    uint32_t m = tsl_recompute_applies(l, recompute);
    double tt = t ? t : 1, split = sp ? tt : 1.0;
    if (m == 0)
        return 0.0;
    if (d->mem_bw <= 0)
        return recompute_flops(l, m) * samples / (tt * d->gemm_flops);
    shape_t x = shape_of(l);
    pass_t p = {.d = d};
    double T = samples * x.s, c = 0.0, norm = 4.0 * T * x.h / split;
    if (m & TSL_RECOMPUTE_LAYERNORM) /* each standalone norm: read and write 2 bytes */
        c += mem(&p, norm, 1) * (((l->kind != TSL_LAYER_FFN) && l->kv_lora_rank) +
                                 ((l->kind != TSL_LAYER_ATTENTION) && l->experts));
    if (m & TSL_RECOMPUTE_MLA_UP_PROJ) { /* as latent_attention_s prices them */
        double a = x.a, n = l->qk_nope_dim, r = l->qk_rope_dim, v = l->v_head_dim;
        double q = l->q_lora_rank, kv = l->kv_lora_rank;
        c += (q ? lin(&p, T, a * (n + r) / tt, q) : lin(&p, T, a * (n + r) / tt, x.h)) +
             lin(&p, T, a * (n + v) / tt, kv) + mem(&p, 4.0 * T * (q + kv), q ? 2 : 1);
    }
    if (m & TSL_RECOMPUTE_MLP) /* the fused norm, FFN-in, the activation, FFN-out */
        c += mem(&p, norm, 1) + lin_at(&p, TSL_MODULE_LINEAR_FC1, lin, T, x.g * x.f / tt, x.h) +
             mem(&p, 2.0 * (x.g + 1.0) * x.f / tt * T, 1) +
             lin_at(&p, TSL_MODULE_LINEAR_FC2, lin, T, x.h, x.f / tt);
    if (m & TSL_RECOMPUTE_TORCHTITAN_OP) { /* the block but its core and half its linears */
        pass_t b = {.d = d};
        c += kernels_s(&b, l, samples, tt, split, 0.0) - 0.5 * b.lin_s -
             tsl_roofline_core_fwd_s(d, l, samples, t);
    }
    if (m & TSL_RECOMPUTE_MOE_ACT) /* the routed copies' activation, once more, and
                                      FC2's input quantised again for its wgrad */
        c += moe_act_fwd_s(&p, l, &x, T, tt) + fc2_recast_s(&p, l, &x, T, tt);
    if (m & TSL_RECOMPUTE_SHARED_EXPERTS) {
        double fs = (l->shared_ffn_hidden ? l->shared_ffn_hidden : x.f) * l->shared_experts;
        c += lin(&p, T, x.g * fs / tt, x.h) + mem(&p, 2.0 * (x.g + 1.0) * fs / tt * T, 1) +
             lin(&p, T, x.h, fs / tt);
    }
    if (m & TSL_RECOMPUTE_MOE) { /* the MoE FFN without the block's norm and residual */
        /* moe_act and shared_experts beside it run their modules a third time: the
         * checkpointed MoE forward re-creates their checkpoints, which recompute
         * again in that forward's backward (moe_layer.py custom_forward under
         * te_checkpoint, shared_experts_compute; experts.py CheckpointWithoutOutput,
         * discard_output_and_register_recompute) — the two terms above */
        pass_t e = {.d = d};
        c += moe_ffn_s(&p, l, &x, samples, tt, split) -
             block_elementwise_s(&e, l, &x, samples, split);
    }
    return c;
}

bool tsl_roofline_fp8_experts(const tsl_layer_t *l, uint32_t etp)
{
    double fe = (double)l->ffn_hidden / (etp > 1 ? etp : 1), g = l->gated_ffn ? 2.0 : 1.0;
    double r = tsl_layer_expert_width(l);
    return l->experts > 0 && fp8_dims(r, g * fe) && fp8_dims(fe, r);
}

/*
 * devops.h — the device operations the stage executor (exec.h) is written against.
 *
 * Contract. A tsl_devops_t is a table of functions over one device and its state
 * (ctx). Implementations: `cpu` (plain C, float32, deterministic: the same inputs give
 * the same bits on every run and every thread count) and `cuda` (cuBLAS bf16 GEMMs with
 * fp32 accumulation and small kernels; compiled only when meson finds CUDA).
 *
 * Buffers. tsl_buf_t is a typed view {ptr, n elements, dtype}; the engine never
 * dereferences ptr (on cuda it is device memory). tsl_buf_view() makes sub-views;
 * only what alloc returned may be passed to free. Activations, weights and gradients
 * use ops->act_dtype (cpu: F32, cuda: BF16); layer-norm statistics, optimizer state
 * and the loss use F32; token ids use I32.
 *
 * Memory. alloc counts bytes in use and their peak (peak_bytes, reset_peak). Running
 * out of memory — the device's, or the limit given at creation — is a result: alloc
 * returns -1 with TSL_E_NOMEM and the state stays consistent. Nothing else allocates
 * device memory after the engine's setup.
 *
 * Ordering. Every op is queued on the compute stream in call order (cpu: runs now).
 * Comm ops (commops.h) take a stream from stream(); event_record/stream_wait order the
 * two streams; sync waits for both. Timing: event_record then, after sync,
 * event_elapsed_s(a, b) = seconds from a to b.
 *
 * Shapes are row-major. Errors: 0 / -1 with tsl_err_t (TSL_E_DEVICE for CUDA and
 * cuBLAS failures, TSL_E_INVALID for bad arguments).
 */
#ifndef TSL_EXEC_DEVOPS_H
#define TSL_EXEC_DEVOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

typedef enum tsl_dtype { TSL_DT_F32 = 0, TSL_DT_BF16, TSL_DT_I32 } tsl_dtype_t;

size_t tsl_dtype_bytes(tsl_dtype_t dt);

/* nvcc compiles these for the device too (devops_cuda_kernels.cu). */
#ifdef __CUDACC__
#define TSL_HD __host__ __device__
#else
#define TSL_HD
#endif

/* Counter-based random bits (splitmix64 of seed, stream and index): no state, so any
 * element of any tensor can be made on its own, in any order, on any device. */
TSL_HD static inline uint64_t tsl_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

TSL_HD static inline uint64_t tsl_uniform_bits(uint64_t seed, uint64_t stream, uint64_t index)
{
    return tsl_mix64(tsl_mix64(seed ^ tsl_mix64(stream)) + index);
}

/* Uniform in [-1, 1), exact in float32 (23 random bits). */
TSL_HD static inline float tsl_uniform(uint64_t seed, uint64_t stream, uint64_t index)
{
    return (float)((double)(tsl_uniform_bits(seed, stream, index) >> 41) / (double)(1u << 22) -
                   1.0);
}

/* The byte counters every implementation keeps: in use, their peak, an optional limit
 * (0: none). admit: 0 when `bytes` more fit, else -1 with TSL_E_NOMEM naming `who`;
 * add: counts bytes in (> 0) or out (< 0) and follows the peak. */
typedef struct tsl_memcount {
    uint64_t limit_bytes, used_bytes, peak_bytes;
} tsl_memcount_t;
int tsl_memcount_admit(const tsl_memcount_t *m, const char *who, uint64_t bytes, tsl_err_t *err);
void tsl_memcount_add(tsl_memcount_t *m, int64_t bytes);

typedef struct tsl_buf {
    void *ptr;
    size_t n; /* elements */
    tsl_dtype_t dt;
} tsl_buf_t;

/* Elements [off, off + n) of b (off + n ≤ b->n, checked by assert). */
tsl_buf_t tsl_buf_view(const tsl_buf_t *b, size_t off, size_t n);

/*
 * C = alpha · op(A) · op(B) + beta · C for `batch` matrices: op(A) is m×k, op(B) k×n,
 * C m×n, row-major with leading dimensions lda/ldb/ldc (elements between rows) and
 * batch strides (elements between consecutive matrices). beta = 1 accumulates
 * (gradient accumulation across micro-batches); cuda accumulates in fp32.
 */
typedef struct tsl_gemm {
    bool ta, tb;
    int m, n, k;
    float alpha, beta;
    tsl_buf_t a, b, c;
    int lda, ldb, ldc;
    long long stride_a, stride_b, stride_c;
    int batch; /* ≥ 1 */
} tsl_gemm_t;

enum { TSL_STREAM_COMPUTE = 0, TSL_STREAM_COMM = 1 };

/* copy_bytes' direction: host memory (host_alloc's) to a device buffer, back, or
 * between device buffers. */
typedef enum tsl_copy_dir { TSL_COPY_H2D = 0, TSL_COPY_D2H, TSL_COPY_D2D } tsl_copy_dir_t;

/* How a MoE router scores, chooses and weighs (model.h "Routing"; moe_topk below).
 * NULL where an op takes one: softmax, the top k of the scores, weighed by them. */
#define TSL_MOE_MAX_GROUPS 64 /* the most expert groups a group-limited router has */

typedef struct tsl_moe_route {
    bool sigmoid;          /* scores σ(logit) per expert (DeepSeek-V3), else the softmax */
    const tsl_buf_t *bias; /* E (act dtype) added to the scores to choose, never to weigh
                              (DeepSeek-V3's score correction); NULL: none */
    int groups;            /* > 1: group-limited choice over `groups` equal groups (at
                              most TSL_MOE_MAX_GROUPS) */
    int topk_groups;       /* the groups a token's experts come from */
    bool norm;             /* the k weights divided by their sum (norm_topk_prob) */
    float scale;           /* the weights times scale (routed_scaling_factor); 0 means 1 */
} tsl_moe_route_t;

/* Rotary position embedding over strided heads (rope below): rows (tokens, row t at
 * position t mod seq), heads of dim (even) values; head b of row t at x[t·ldx + b·xs]
 * and y[t·ldy + b·ys]. xs 0: every head reads the same values (a key shared by the
 * heads); ys 0: the heads' rotations are summed into y (that key's gradient). */
typedef struct tsl_rope {
    int rows, heads, dim, seq;
    int ldx, xs, ldy, ys;
    float base;   /* θ_i = position · base^(−2i/dim) */
    bool inverse; /* rotate by −θ: the backward */
} tsl_rope_t;

typedef struct tsl_devops tsl_devops_t;
typedef struct tsl_event tsl_event_t;

struct tsl_devops {
    const char *name; /* "cpu", "cuda" */
    tsl_dtype_t act_dtype;
    void *ctx;

    int (*alloc)(tsl_devops_t *o, tsl_buf_t *out, size_t n, tsl_dtype_t dt, tsl_err_t *err);
    void (*free)(tsl_devops_t *o, tsl_buf_t *b); /* NULL ptr: no-op; clears *b */
    uint64_t (*peak_bytes)(tsl_devops_t *o);
    uint64_t (*used_bytes)(tsl_devops_t *o);
    void (*reset_peak)(tsl_devops_t *o); /* peak = in use now */

    /* host <-> device, float32 on the host, converted to b's dtype (I32: int32_t). */
    int (*upload)(tsl_devops_t *o, tsl_buf_t *dst, const void *host, tsl_err_t *err);
    int (*download)(tsl_devops_t *o, const tsl_buf_t *src, void *host, tsl_err_t *err);
    /* dst ← src, same length; converts F32 ↔ BF16. */
    int (*copy)(tsl_devops_t *o, tsl_buf_t *dst, const tsl_buf_t *src, tsl_err_t *err);
    /* Seeded synthetic values: b[i] = center + amp · tsl_uniform(seed, stream, base + i)
     * (F32/BF16); ids: b[i] = (tsl_uniform_bits(...) >> 11) mod modulo (I32). The same
     * on every implementation, so a device makes its own data without a transfer. */
    int (*fill_uniform)(tsl_devops_t *o, tsl_buf_t *b, uint64_t seed, uint64_t stream,
                        uint64_t base, float center, float amp, tsl_err_t *err);
    int (*fill_ids)(tsl_devops_t *o, tsl_buf_t *b, uint64_t seed, uint64_t stream, uint64_t base,
                    uint32_t modulo, tsl_err_t *err);
    int (*zero)(tsl_devops_t *o, tsl_buf_t *b, tsl_err_t *err);

    int (*gemm)(tsl_devops_t *o, const tsl_gemm_t *g, tsl_err_t *err);

    /* x: rows×cols; gamma, beta: cols; mean, rstd: F32 rows. bwd accumulates dgamma,
     * dbeta (+=) and writes dx. */
    int (*layernorm_fwd)(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *gamma,
                         const tsl_buf_t *beta, tsl_buf_t *y, tsl_buf_t *mean, tsl_buf_t *rstd,
                         int rows, int cols, tsl_err_t *err);
    int (*layernorm_bwd)(tsl_devops_t *o, const tsl_buf_t *dy, const tsl_buf_t *x,
                         const tsl_buf_t *gamma, const tsl_buf_t *mean, const tsl_buf_t *rstd,
                         tsl_buf_t *dx, tsl_buf_t *dgamma, tsl_buf_t *dbeta, int rows, int cols,
                         tsl_err_t *err);
    /* RMSNorm (Llama): y = x · rstd · gamma, rstd (F32 rows) = 1/√(mean(x²) + 1e-5),
     * statistics in F32 as layernorm's. bwd accumulates dgamma (+=) and writes dx. */
    int (*rmsnorm_fwd)(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *gamma, tsl_buf_t *y,
                       tsl_buf_t *rstd, int rows, int cols, tsl_err_t *err);
    int (*rmsnorm_bwd)(tsl_devops_t *o, const tsl_buf_t *dy, const tsl_buf_t *x,
                       const tsl_buf_t *gamma, const tsl_buf_t *rstd, tsl_buf_t *dx,
                       tsl_buf_t *dgamma, int rows, int cols, tsl_err_t *err);
    /* SwiGLU: x is rows × 2·cols, each row gate | up; y (rows × cols) = SiLU(gate) ⊙ up,
     * SiLU(a) = a·σ(a). bwd: dx (rows × 2·cols) = dgate | dup from x and dy. */
    int (*swiglu_fwd)(tsl_devops_t *o, const tsl_buf_t *x, tsl_buf_t *y, int rows, int cols,
                      tsl_err_t *err);
    int (*swiglu_bwd)(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *dy, tsl_buf_t *dx,
                      int rows, int cols, tsl_err_t *err);
    /* GeLU (tanh form), elementwise; bwd: dx = dy · gelu'(x). */
    int (*gelu_fwd)(tsl_devops_t *o, const tsl_buf_t *x, tsl_buf_t *y, tsl_err_t *err);
    int (*gelu_bwd)(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *dy, tsl_buf_t *dx,
                    tsl_err_t *err);
    /* Row softmax of rows×cols; causal: row r masks columns > r mod cols (queries of
     * one (sample, head) are `cols` consecutive rows). bwd: dx = y ⊙ (dy − Σ y·dy). */
    int (*softmax_fwd)(tsl_devops_t *o, const tsl_buf_t *x, tsl_buf_t *y, int rows, int cols,
                       bool causal, tsl_err_t *err);
    /* Causal row softmax of a block of query rows (fused attention by query chunks):
     * rows×cols in groups of `group` consecutive rows, one (sample, head) each; row g
     * of a group is query q0 + g counted from the first column and masks columns
     * > q0 + g, and with a window w > 0 (sliding-window attention: query q sees keys
     * (q − w, q]) also columns ≤ q0 + g − w; a row left no column is all zeros.
     * softmax_fwd(causal) is group = cols, q0 = 0, window 0. In place (x = y) allowed. */
    int (*softmax_chunk_fwd)(tsl_devops_t *o, const tsl_buf_t *x, tsl_buf_t *y, int rows, int cols,
                             int group, int q0, int window, tsl_err_t *err);
    int (*softmax_bwd)(tsl_devops_t *o, const tsl_buf_t *y, const tsl_buf_t *dy, tsl_buf_t *dx,
                       int rows, int cols, tsl_err_t *err);
    /* Rotary position embedding (RoFormer, Su et al. 2021), the rotate-half pairing of
     * the Llama/DeepSeek modeling code: element i < dim/2 of a head pairs with
     * i + dim/2, (a, b) → (a·cos θ_i − b·sin θ_i, b·cos θ_i + a·sin θ_i), as tsl_rope_t
     * lays out; in place (x = y, the same strides) allowed. Shapes checked alike on
     * every implementation (tsl_devops_check_rope). */
    int (*rope)(tsl_devops_t *o, const tsl_buf_t *x, tsl_buf_t *y, const tsl_rope_t *r,
                tsl_err_t *err);
    /* Column blocks between strided layouts: y[r·ldy + b·ys + c] = x[r·ldx + b·xs + c]
     * for r < rows, b < batch, c < cols (no two (r, b, c) may write one element). */
    int (*copy2d)(tsl_devops_t *o, const tsl_buf_t *x, int ldx, int xs, tsl_buf_t *y, int ldy,
                  int ys, int rows, int batch, int cols, tsl_err_t *err);
    /* A sigmoid gate per row (Qwen2-MoE's shared expert): gate (F32 rows) = σ(logit)
     * (logit: act dtype, rows), y (rows × cols) = gate[r] · x[r]. bwd: dx = gate[r] ·
     * dy[r], dlogit[r] (act) = gate(1 − gate) · (dy[r] · x[r]). */
    int (*gate_fwd)(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *logit, tsl_buf_t *gate,
                    tsl_buf_t *y, int rows, int cols, tsl_err_t *err);
    int (*gate_bwd)(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *gate, const tsl_buf_t *dy,
                    tsl_buf_t *dx, tsl_buf_t *dlogit, int rows, int cols, tsl_err_t *err);
    /* y += alpha · x (n = x->n = y->n). */
    int (*axpy)(tsl_devops_t *o, float alpha, const tsl_buf_t *x, tsl_buf_t *y, tsl_err_t *err);
    int (*scale)(tsl_devops_t *o, float alpha, tsl_buf_t *x, tsl_err_t *err);
    /* x[r][c] += bias[c]; bias_grad: db[c] += Σ_r dy[r][c]. */
    int (*add_bias)(tsl_devops_t *o, tsl_buf_t *x, const tsl_buf_t *bias, int rows, int cols,
                    tsl_err_t *err);
    int (*bias_grad)(tsl_devops_t *o, const tsl_buf_t *dy, tsl_buf_t *db, int rows, int cols,
                     tsl_err_t *err);
    /* The loss without a head, scaled by `scale` (1 / elements of the global batch):
     * loss (F32, one element) += scale · Σ (y − t)², dy = ∂/∂y. (With a head the loss
     * is the vocabulary-parallel cross-entropy below; tp = 1 is its one-part case.) */
    int (*mse)(tsl_devops_t *o, const tsl_buf_t *y, const tsl_buf_t *t, tsl_buf_t *dy, float scale,
               tsl_buf_t *loss, tsl_err_t *err);
    /* ---- vocabulary-parallel embedding and cross-entropy (Megatron; exec_vocab.c) ----
     * This rank holds vocabulary rows (embedding) or logit columns (head) [v0, v0 + vl);
     * of those only the first `valid` are real words, the rest pad the vocabulary and
     * take no part (zero rows, no logits). vembed_fwd: y[r] = table[ids[r] − v0] for an
     * id in range, else a zero row (the TP sum completes it); bwd: dtable[ids[r] − v0]
     * += dy[r] for the ids in range (rows in order). */
    int (*vembed_fwd)(tsl_devops_t *o, const tsl_buf_t *table, const tsl_buf_t *ids, tsl_buf_t *y,
                      int rows, int cols, int v0, int vl, tsl_err_t *err);
    int (*vembed_bwd)(tsl_devops_t *o, const tsl_buf_t *dy, const tsl_buf_t *ids, tsl_buf_t *dtable,
                      int rows, int cols, int v0, int vl, tsl_err_t *err);
    /* Cross-entropy over logits split by vocabulary columns, in three steps with TP
     * reductions between them. y: rows × cols local logits, valid ≤ cols real.
     * vxent_max: mx[r] (F32 rows) = the local row max (−inf when valid = 0). Then the
     * engine all-gathers mx over the group into mxs (F32 parts × rows, member k's at
     * k·rows); M[r] = max_k mxs[k·rows + r] is the row max over the whole vocabulary.
     * vxent_sums: sums (F32 2·rows) = [Σ_c<valid exp(y − M)] then [y[r][t[r] − v0]
     * where t[r] is in range, else 0]; the engine sums them over the group. vxent:
     * loss += scale · Σ_r (log S + M − y_target), dy = scale · (softmax − onehot) on
     * the valid columns, 0 on the padding; dy (F32, or y's dtype) may be y. */
    int (*vxent_max)(tsl_devops_t *o, const tsl_buf_t *y, tsl_buf_t *mx, int rows, int cols,
                     int valid, tsl_err_t *err);
    int (*vxent_sums)(tsl_devops_t *o, const tsl_buf_t *y, const tsl_buf_t *t, const tsl_buf_t *mxs,
                      int parts, tsl_buf_t *sums, int rows, int cols, int valid, int v0,
                      tsl_err_t *err);
    int (*vxent)(tsl_devops_t *o, const tsl_buf_t *y, const tsl_buf_t *t, const tsl_buf_t *mxs,
                 int parts, const tsl_buf_t *sums, tsl_buf_t *dy, int rows, int cols, int valid,
                 int v0, float scale, tsl_buf_t *loss, tsl_err_t *err);
    /* ---- mixture of experts: routing, dispatch and combine (exec_moe.c) ----
     * moe_topk: per row (token) of the router's logits (rows × E, act dtype), probs
     * (F32 rows × E) = their scores, in F32: the softmax over the row, or with
     * rt->sigmoid σ of each; idx (I32 rows × k) the k experts of the largest scores
     * (plus rt->bias when given), largest first, a tie going to the lower expert —
     * with rt->groups > 1 only from the rt->topk_groups best groups (E/groups
     * consecutive experts each, scored by their best, or with a bias their two best
     * summed; a tie to the lower group); w (F32 rows × k) their scores, divided by
     * their sum when rt->norm, times rt->scale. rt NULL: softmax, top k, w = the
     * probabilities. 1 ≤ k ≤ E (≤ topk_groups·E/groups).
     * moe_topk_bwd (the same rt, bias and groups unused): dlogits (rows × E, act
     * dtype) from dw (F32 rows × k): the scores' gradient dS (0 off idx; at idx
     * scale·dw, or normalised scale/Σ·(dw − Σ_j dw_j·s_j/Σ)), then through the
     * softmax, P ⊙ (dS − Σ_e P·dS), or the sigmoid, dS·σ(1 − σ).
     * moe_sort: the n routed copies (copy c goes to expert idx[c], I32) in expert-major
     * order, stable (by expert, then copy): order (I32 n) lists the copies, pos (I32 n)
     * is its inverse (pos[order[p]] = p), counts (F32 E) the copies of each expert. With
     * cap > 0 an expert keeps its first cap copies: the others are dropped, pos −1, not
     * in order (which lists Σ counts copies) nor counted.
     * gather_rows: y[r] = s · x[idx[r] / div] for r < rows (cols wide; div ≥ 1), s =
     * scale[idx[r]] (F32) or 1 where scale is NULL: a dispatch (div k: copy → token).
     * scatter_add_rows: y[t] += Σ_{j<k} s · x[pos[t·k + j]] for t < rows, j in order, s =
     * w[t·k + j] (F32) or 1 where w is NULL: the weighted combine of a token's copies.
     * rows_dot: out[c] (F32) = x[c / k] · y[pos[c]] (cols wide) for c < n: a combine
     * weight's gradient. Both take a dropped copy (pos −1) as a zero row. Shapes are checked (tsl_devops_check_moe); indices out of
     * range are an error on cpu, skipped on cuda. */
    int (*moe_topk)(tsl_devops_t *o, const tsl_buf_t *logits, const tsl_moe_route_t *rt,
                    tsl_buf_t *probs, tsl_buf_t *idx, tsl_buf_t *w, int rows, int experts, int k,
                    tsl_err_t *err);
    int (*moe_topk_bwd)(tsl_devops_t *o, const tsl_buf_t *probs, const tsl_buf_t *idx,
                        const tsl_buf_t *dw, const tsl_moe_route_t *rt, tsl_buf_t *dlogits,
                        int rows, int experts, int k, tsl_err_t *err);
    int (*moe_sort)(tsl_devops_t *o, const tsl_buf_t *idx, tsl_buf_t *order, tsl_buf_t *pos,
                    tsl_buf_t *counts, int n, int experts, int cap, tsl_err_t *err);
    int (*gather_rows)(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *idx, int div,
                       const tsl_buf_t *scale, tsl_buf_t *y, int rows, int cols, tsl_err_t *err);
    int (*scatter_add_rows)(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *pos,
                            const tsl_buf_t *w, tsl_buf_t *y, int rows, int k, int cols,
                            tsl_err_t *err);
    int (*rows_dot)(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *y, const tsl_buf_t *pos,
                    tsl_buf_t *out, int n, int k, int cols, tsl_err_t *err);

    /* Optimizers on n = p->n elements. master (F32, may have ptr NULL) holds the fp32
     * copy when act_dtype is not F32. step counts from 1. */
    int (*adam)(tsl_devops_t *o, tsl_buf_t *p, const tsl_buf_t *g, tsl_buf_t *master, tsl_buf_t *m,
                tsl_buf_t *v, float lr, float b1, float b2, float eps, int step, tsl_err_t *err);
    int (*sgd)(tsl_devops_t *o, tsl_buf_t *p, const tsl_buf_t *g, tsl_buf_t *master, float lr,
               tsl_err_t *err);

    /* Streams and events. stream() gives what comm ops take (cudaStream_t, or NULL). */
    void *(*stream)(tsl_devops_t *o, int which);
    int (*event_create)(tsl_devops_t *o, tsl_event_t **ev, tsl_err_t *err);
    void (*event_destroy)(tsl_devops_t *o, tsl_event_t *ev);
    int (*event_record)(tsl_devops_t *o, tsl_event_t *ev, int stream, tsl_err_t *err);
    int (*stream_wait)(tsl_devops_t *o, int stream, tsl_event_t *ev, tsl_err_t *err);
    int (*event_elapsed_s)(tsl_devops_t *o, tsl_event_t *a, tsl_event_t *b, double *s,
                           tsl_err_t *err);
    int (*sync)(tsl_devops_t *o, tsl_err_t *err);

    /* Raw transfers, for what the profiler measures (PCIe and device-memory bandwidth,
     * a copy standing in for communication in the overlap figure; DESIGN.md
     * "Profiles"). host_alloc: `bytes` of host memory the device copies at full speed
     * (cuda: pinned, cudaMallocHost; cpu: malloc), not in the device's byte counters;
     * host_free(NULL) is a no-op. copy_bytes queues a copy of `bytes` raw bytes on
     * `stream` (TSL_STREAM_*; cpu: memcpy, now): no dtype conversion, unlike copy. */
    int (*host_alloc)(tsl_devops_t *o, size_t bytes, void **out, tsl_err_t *err);
    void (*host_free)(tsl_devops_t *o, void *p);
    int (*copy_bytes)(tsl_devops_t *o, tsl_copy_dir_t dir, void *dst, const void *src, size_t bytes,
                      int stream, tsl_err_t *err);

    /* Releases everything; o itself is freed. Buffers still allocated are leaked
     * from the counters' point of view only (the engine frees its own first). */
    void (*destroy)(tsl_devops_t *o);
};

/* CPU ops; limit_bytes > 0 makes alloc fail (TSL_E_NOMEM) beyond it. */
int tsl_devops_cpu_create(uint64_t limit_bytes, tsl_devops_t **out, tsl_err_t *err);

/* CUDA ops on `device`; -1 with TSL_E_UNSUPPORTED when built without CUDA. */
int tsl_devops_cuda_create(int device, uint64_t limit_bytes, tsl_devops_t **out, tsl_err_t *err);

/* The arguments softmax_chunk_fwd takes on every implementation: 0, or -1 with
 * TSL_E_INVALID naming the shape that does not fit. */
int tsl_devops_check_softmax_chunk(const tsl_buf_t *x, const tsl_buf_t *y, int rows, int cols,
                                   int group, int q0, int window, tsl_err_t *err);

/* The arguments of the mixture-of-experts ops (above), the same on every
 * implementation: 0, or -1 with TSL_E_INVALID naming the op and the argument that does
 * not fit (a count below 1, k above E, a buffer too short or of another dtype). `op` is
 * the op's name; the rest as it takes them, NULL where it has no such argument (n or
 * cols 0 where unused). */
typedef struct tsl_moe_args {
    const tsl_buf_t *x, *y, *idx, *order, *pos, *probs, *w, *counts, *out;
    int rows, cols, experts, k, n, div;
    const tsl_moe_route_t *rt; /* moe_topk, moe_topk_bwd: groups and bias checked */
} tsl_moe_args_t;
int tsl_devops_check_moe(const char *op, const tsl_moe_args_t *a, tsl_err_t *err);

/* rope, copy2d, gate_fwd and gate_bwd's arguments, the same on every implementation:
 * 0, or -1 with TSL_E_INVALID naming the op and what does not fit (an odd dim, a
 * stride that overlaps, a buffer too short). gate: x, y or dx, dy rows × cols; logit
 * or dlogit and gate rows (NULL: not checked). */
int tsl_devops_check_rope(const tsl_buf_t *x, const tsl_buf_t *y, const tsl_rope_t *r,
                          tsl_err_t *err);
int tsl_devops_check_copy2d(const tsl_buf_t *x, int ldx, int xs, const tsl_buf_t *y, int ldy,
                            int ys, int rows, int batch, int cols, tsl_err_t *err);
int tsl_devops_check_gate(const char *op, const tsl_buf_t *x, const tsl_buf_t *logit,
                          const tsl_buf_t *gate, const tsl_buf_t *y, int rows, int cols,
                          tsl_err_t *err);

/* By name: "cpu" or "cuda". */
int tsl_devops_create(const char *name, int device, uint64_t limit_bytes, tsl_devops_t **out,
                      tsl_err_t *err);

#endif

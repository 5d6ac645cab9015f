/*
 * devops_cpu_moe.c — the cpu device ops of a mixture-of-experts layer: the router's
 * softmax and top-k, the stable expert-major sort of the routed copies, and the row
 * gathers and weighted sums of the dispatch and combine (devops.h). Float32, sums in
 * double in a fixed order, as the other cpu ops, so a split run repeats the bits of
 * the same rows. Indices out of range are refused (TSL_E_INVALID), never followed.
 */
#include <math.h>
#include <stdlib.h>

#include "devops_cpu_moe.h"

#define F(b)  ((float *)(b)->ptr)
#define CF(b) ((const float *)(b)->ptr)
#define I(b)  ((int32_t *)(b)->ptr)
#define CI(b) ((const int32_t *)(b)->ptr)

/* The k largest of c[0 .. E) not masked into id (largest first; a tie to the lower
 * index). */
static void top_k(const double *c, const bool *masked, int E, int k, int32_t *id)
{
    for (int j = 0; j < k; j++) {
        int best = -1;
        for (int e = 0; e < E; e++) {
            bool taken = masked[e];
            for (int i = 0; i < j && !taken; i++)
                taken = id[i] == e;
            if (!taken && (best < 0 || c[e] > c[best]))
                best = e;
        }
        id[j] = best;
    }
}

/* Group-limited choice (devops.h moe_topk): masks the experts outside the
 * topk_groups best groups of c, a group scored by its best, or (top2) its two best
 * summed. */
static void mask_groups(const double *c, int E, int groups, int topk_groups, bool top2,
                        bool *masked, double *gs, bool *gtaken)
{
    int per = E / groups;
    for (int g = 0; g < groups; g++) {
        double b1 = -INFINITY, b2 = -INFINITY;
        for (int e = g * per; e < (g + 1) * per; e++) {
            if (c[e] > b1)
                b2 = b1, b1 = c[e];
            else if (c[e] > b2)
                b2 = c[e];
        }
        gs[g] = top2 && per > 1 ? b1 + b2 : b1;
        gtaken[g] = false;
    }
    for (int j = 0; j < topk_groups; j++) {
        int best = -1;
        for (int g = 0; g < groups; g++)
            if (!gtaken[g] && (best < 0 || gs[g] > gs[best]))
                best = g;
        gtaken[best] = true;
    }
    for (int e = 0; e < E; e++)
        masked[e] = !gtaken[e / per];
}

int tsl_cpu_moe_topk(tsl_devops_t *o, const tsl_buf_t *logits, const tsl_moe_route_t *rt,
                     tsl_buf_t *probs, tsl_buf_t *idx, tsl_buf_t *w, int rows, int experts, int k,
                     tsl_err_t *err)
{
    (void)o;
    tsl_moe_args_t a = {.x = logits,
                        .probs = probs,
                        .idx = idx,
                        .w = w,
                        .rows = rows,
                        .experts = experts,
                        .k = k,
                        .rt = rt};
    if (tsl_devops_check_moe("moe_topk", &a, err))
        return -1;
    tsl_moe_route_t plain = {0};
    rt = rt ? rt : &plain;
    int groups = rt->groups > 1 ? rt->groups : 0;
    double *c = malloc(((size_t)experts + (size_t)groups + 1) * sizeof(double));
    bool *masked = calloc((size_t)experts + (size_t)groups + 1, sizeof(bool));
    if (!c || !masked) {
        free(c);
        free(masked);
        return tsl_err_setc(err, TSL_E_NOMEM, "moe_topk: out of host memory");
    }
    double scale = rt->scale > 0 ? rt->scale : 1.0;
    for (int r = 0; r < rows; r++) {
        const float *x = CF(logits) + (size_t)r * experts;
        float *p = F(probs) + (size_t)r * experts;
        if (rt->sigmoid) {
            for (int e = 0; e < experts; e++)
                p[e] = (float)(1.0 / (1.0 + exp(-(double)x[e])));
        } else {
            double mx = x[0], s = 0;
            for (int e = 1; e < experts; e++)
                mx = fmax(mx, x[e]);
            for (int e = 0; e < experts; e++)
                s += exp(x[e] - mx);
            for (int e = 0; e < experts; e++)
                p[e] = (float)(exp(x[e] - mx) / s);
        }
        for (int e = 0; e < experts; e++)
            c[e] = (double)p[e] + (rt->bias ? CF(rt->bias)[e] : 0.0);
        if (groups)
            mask_groups(c, experts, groups, rt->topk_groups, rt->bias != NULL, masked, c + experts,
                        masked + experts);
        int32_t *id = I(idx) + (size_t)r * k;
        top_k(c, masked, experts, k, id);
        double sum = 0;
        for (int j = 0; j < k; j++)
            sum += p[id[j]];
        for (int j = 0; j < k; j++)
            F(w)[(size_t)r * k + j] = (float)(rt->norm ? scale * p[id[j]] / sum : scale * p[id[j]]);
    }
    free(c);
    free(masked);
    return 0;
}

int tsl_cpu_moe_topk_bwd(tsl_devops_t *o, const tsl_buf_t *probs, const tsl_buf_t *idx,
                         const tsl_buf_t *dw, const tsl_moe_route_t *rt, tsl_buf_t *dlogits,
                         int rows, int experts, int k, tsl_err_t *err)
{
    (void)o;
    tsl_moe_args_t a = {.probs = probs,
                        .idx = idx,
                        .w = dw,
                        .y = dlogits,
                        .rows = rows,
                        .experts = experts,
                        .k = k,
                        .rt = rt};
    if (tsl_devops_check_moe("moe_topk_bwd", &a, err))
        return -1;
    tsl_moe_route_t plain = {0};
    rt = rt ? rt : &plain;
    double scale = rt->scale > 0 ? rt->scale : 1.0;
    for (int r = 0; r < rows; r++) {
        const float *p = CF(probs) + (size_t)r * experts, *d = CF(dw) + (size_t)r * k;
        const int32_t *id = CI(idx) + (size_t)r * k;
        double sum = 0, dot = 0, s = 0;
        for (int j = 0; j < k; j++) {
            if (id[j] < 0 || id[j] >= experts)
                return tsl_err_setc(err, TSL_E_INVALID, "moe_topk_bwd: row %d: expert %d of %d", r,
                                    id[j], experts);
            sum += p[id[j]];
            dot += (double)d[j] * p[id[j]];
        }
        /* dS at the chosen (0 elsewhere), then Σ_e P·dS for the softmax */
        for (int j = 0; j < k; j++) {
            double ds = rt->norm ? scale / sum * (d[j] - dot / sum) : scale * d[j];
            s += p[id[j]] * ds;
        }
        for (int e = 0; e < experts; e++) {
            double ds = 0;
            for (int j = 0; j < k; j++)
                if (id[j] == e)
                    ds = rt->norm ? scale / sum * (d[j] - dot / sum) : scale * d[j];
            double g = rt->sigmoid ? ds * p[e] * (1.0 - p[e]) : p[e] * (ds - s);
            F(dlogits)[(size_t)r * experts + e] = (float)g;
        }
    }
    return 0;
}

int tsl_cpu_moe_sort(tsl_devops_t *o, const tsl_buf_t *idx, tsl_buf_t *order, tsl_buf_t *pos,
                     tsl_buf_t *counts, int n, int experts, int cap, tsl_err_t *err)
{
    (void)o;
    tsl_moe_args_t a = {
        .idx = idx, .order = order, .pos = pos, .counts = counts, .n = n, .experts = experts};
    if (tsl_devops_check_moe("moe_sort", &a, err))
        return -1;
    /* kept[e]: expert e's copies kept (the first cap), start[e]: where they go */
    size_t *kept = calloc(3 * (size_t)experts + 1, sizeof(size_t));
    size_t *start = kept ? kept + experts : NULL, *used = kept ? start + experts : NULL;
    if (!kept)
        return tsl_err_setc(err, TSL_E_NOMEM, "moe_sort: out of host memory");
    for (int c = 0; c < n; c++) {
        int32_t e = CI(idx)[c];
        if (e < 0 || e >= experts) {
            free(kept);
            return tsl_err_setc(err, TSL_E_INVALID, "moe_sort: copy %d routed to expert %d of %d",
                                c, e, experts);
        }
        kept[e] += cap <= 0 || kept[e] < (size_t)cap;
    }
    for (int e = 0; e < experts; e++) {
        F(counts)[e] = (float)kept[e];
        start[e] = e ? start[e - 1] + kept[e - 1] : 0;
    }
    for (int c = 0; c < n; c++) {
        int32_t e = CI(idx)[c];
        bool keep = used[e] < kept[e];
        size_t p = start[e] + used[e];
        used[e] += keep;
        if (keep)
            I(order)[p] = c;
        I(pos)[c] = keep ? (int32_t)p : -1;
    }
    free(kept);
    return 0;
}

/* Rows of x (n elements of cols). */
static size_t rows_in(const tsl_buf_t *x, int cols)
{
    return x->n / (size_t)cols;
}

int tsl_cpu_gather_rows(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *idx, int div,
                        const tsl_buf_t *scale, tsl_buf_t *y, int rows, int cols, tsl_err_t *err)
{
    (void)o;
    tsl_moe_args_t a = {
        .x = x, .idx = idx, .w = scale, .y = y, .rows = rows, .cols = cols, .div = div};
    if (tsl_devops_check_moe("gather_rows", &a, err))
        return -1;
    for (int r = 0; r < rows; r++) {
        int32_t i = CI(idx)[r];
        if (i < 0 || (size_t)(i / div) >= rows_in(x, cols) || (scale && (size_t)i >= scale->n))
            return tsl_err_setc(err, TSL_E_INVALID, "gather_rows: row %d: index %d past %zu rows",
                                r, i, rows_in(x, cols));
        float s = scale ? CF(scale)[i] : 1.0f;
        const float *xr = CF(x) + (size_t)(i / div) * cols;
        float *yr = F(y) + (size_t)r * cols;
        for (int c = 0; c < cols; c++)
            yr[c] = s * xr[c];
    }
    return 0;
}

int tsl_cpu_scatter_add_rows(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *pos,
                             const tsl_buf_t *w, tsl_buf_t *y, int rows, int k, int cols,
                             tsl_err_t *err)
{
    (void)o;
    tsl_moe_args_t a = {.x = x, .pos = pos, .w = w, .y = y, .rows = rows, .cols = cols, .k = k};
    if (tsl_devops_check_moe("scatter_add_rows", &a, err))
        return -1;
    for (size_t c = 0; c < (size_t)rows * k; c++)
        if (CI(pos)[c] < -1 || (CI(pos)[c] >= 0 && (size_t)CI(pos)[c] >= rows_in(x, cols)))
            return tsl_err_setc(err, TSL_E_INVALID, "scatter_add_rows: copy %zu at row %d of %zu",
                                c, CI(pos)[c], rows_in(x, cols));
    for (int t = 0; t < rows; t++) {
        float *yr = F(y) + (size_t)t * cols;
        for (int c = 0; c < cols; c++) {
            double acc = yr[c];
            for (int j = 0; j < k; j++) {
                size_t cp = (size_t)t * k + j;
                double s = w ? CF(w)[cp] : 1.0;
                if (CI(pos)[cp] >= 0) /* −1: a dropped copy, a zero row */
                    acc += s * CF(x)[(size_t)CI(pos)[cp] * cols + c];
            }
            yr[c] = (float)acc;
        }
    }
    return 0;
}

int tsl_cpu_rows_dot(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *y, const tsl_buf_t *pos,
                     tsl_buf_t *out, int n, int k, int cols, tsl_err_t *err)
{
    (void)o;
    tsl_moe_args_t a = {.x = x, .y = y, .pos = pos, .out = out, .n = n, .cols = cols, .k = k};
    if (tsl_devops_check_moe("rows_dot", &a, err))
        return -1;
    for (int c = 0; c < n; c++) {
        int32_t p = CI(pos)[c];
        if (p < -1 || (p >= 0 && (size_t)p >= rows_in(y, cols)))
            return tsl_err_setc(err, TSL_E_INVALID, "rows_dot: copy %d at row %d of %zu", c, p,
                                rows_in(y, cols));
        const float *xr = CF(x) + (size_t)(c / k) * cols,
                    *yr = CF(y) + (size_t)(p > 0 ? p : 0) * cols;
        double s = 0;
        for (int i = 0; p >= 0 && i < cols; i++) /* −1: a dropped copy, 0 */
            s += (double)xr[i] * yr[i];
        F(out)[c] = (float)s;
    }
    return 0;
}

int tsl_cpu_gate_fwd(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *logit, tsl_buf_t *gate,
                     tsl_buf_t *y, int rows, int cols, tsl_err_t *err)
{
    (void)o;
    if (tsl_devops_check_gate("gate_fwd", x, logit, gate, y, rows, cols, err))
        return -1;
    for (int r = 0; r < rows; r++) {
        double g = 1.0 / (1.0 + exp(-(double)CF(logit)[r]));
        F(gate)[r] = (float)g;
        for (int c = 0; c < cols; c++)
            F(y)[(size_t)r * cols + c] = (float)(g * CF(x)[(size_t)r * cols + c]);
    }
    return 0;
}

int tsl_cpu_gate_bwd(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *gate,
                     const tsl_buf_t *dy, tsl_buf_t *dx, tsl_buf_t *dlogit, int rows, int cols,
                     tsl_err_t *err)
{
    (void)o;
    if (tsl_devops_check_gate("gate_bwd", x, dlogit, gate, dy, rows, cols, err) ||
        tsl_devops_check_gate("gate_bwd", dx, NULL, NULL, dy, rows, cols, err))
        return -1;
    for (int r = 0; r < rows; r++) {
        double g = CF(gate)[r], s = 0;
        for (int c = 0; c < cols; c++) {
            size_t i = (size_t)r * cols + c;
            s += (double)CF(dy)[i] * CF(x)[i];
            F(dx)[i] = (float)(g * CF(dy)[i]);
        }
        F(dlogit)[r] = (float)(g * (1.0 - g) * s);
    }
    return 0;
}

/*
 * devops_check.c — argument checks every device-ops implementation shares, so that
 * cpu and cuda refuse the same shapes with the same words (devops.h).
 */
#include <string.h>

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

/* A buffer of at least n elements of dtype dt (act: F32 or BF16); else its name. */
enum { DT_ACT = -1 };

static const char *short_of(const tsl_buf_t *b, size_t n, int dt, const char *name)
{
    if (!b)
        return name;
    bool ok_dt = dt == DT_ACT ? b->dt == TSL_DT_F32 || b->dt == TSL_DT_BF16 : (int)b->dt == dt;
    return ok_dt && b->n >= n ? NULL : name;
}

/* moe_topk (x: the logits) and moe_topk_bwd (y: dlogits): E per row, k chosen. */
static const char *topk_misfit(const tsl_moe_args_t *a, bool bwd)
{
    size_t r = (size_t)a->rows, E = (size_t)a->experts, k = (size_t)a->k;
    const char *bad;
    if (a->k < 1 || a->k > a->experts || a->rows < 0)
        return "k";
    if ((bad = short_of(a->probs, r * E, TSL_DT_F32, "probs")) ||
        (bad = short_of(a->idx, r * k, TSL_DT_I32, "idx")) ||
        (bad = short_of(a->w, r * k, TSL_DT_F32, bwd ? "dw" : "w")))
        return bad;
    return bwd ? short_of(a->y, r * E, DT_ACT, "dlogits") : short_of(a->x, r * E, DT_ACT, "logits");
}

/* gather_rows, scatter_add_rows and rows_dot: rows (or n copies) of cols. */
static const char *rows_misfit(const char *op, const tsl_moe_args_t *a)
{
    size_t r = (size_t)a->rows, c = (size_t)a->cols, k = (size_t)a->k, n = (size_t)a->n;
    const char *bad;
    if (!strcmp(op, "gather_rows")) {
        if (a->rows < 0 || a->cols < 1 || a->div < 1)
            return "rows, cols or div";
        if ((bad = short_of(a->idx, r, TSL_DT_I32, "idx")) ||
            (a->w && (bad = short_of(a->w, 1, TSL_DT_F32, "scale"))) ||
            (bad = short_of(a->x, c, DT_ACT, "x")))
            return bad;
        return short_of(a->y, r * c, DT_ACT, "y");
    }
    if (!strcmp(op, "scatter_add_rows")) {
        if (a->rows < 0 || a->cols < 1 || a->k < 1)
            return "rows, cols or k";
        if ((bad = short_of(a->pos, r * k, TSL_DT_I32, "pos")) ||
            (a->w && (bad = short_of(a->w, r * k, TSL_DT_F32, "w"))) ||
            (bad = short_of(a->x, c, DT_ACT, "x")))
            return bad;
        return short_of(a->y, r * c, DT_ACT, "y");
    }
    if (a->n < 0 || a->cols < 1 || a->k < 1) /* rows_dot */
        return "n, cols or k";
    if ((bad = short_of(a->pos, n, TSL_DT_I32, "pos")) ||
        (bad = short_of(a->x, (n + k - 1) / k * c, DT_ACT, "x")) ||
        (bad = short_of(a->y, c, DT_ACT, "y")))
        return bad;
    return short_of(a->out, n, TSL_DT_F32, "out");
}

/* The first argument of the op that does not fit, or NULL. */
static const char *moe_misfit(const char *op, const tsl_moe_args_t *a)
{
    const char *bad;
    if (!strcmp(op, "moe_topk") || !strcmp(op, "moe_topk_bwd"))
        return topk_misfit(a, !strcmp(op, "moe_topk_bwd"));
    if (strcmp(op, "moe_sort"))
        return rows_misfit(op, a);
    if (a->n < 0 || a->experts < 1)
        return "n or experts";
    size_t n = (size_t)a->n;
    if ((bad = short_of(a->idx, n, TSL_DT_I32, "idx")) ||
        (bad = short_of(a->order, n, TSL_DT_I32, "order")) ||
        (bad = short_of(a->pos, n, TSL_DT_I32, "pos")))
        return bad;
    return short_of(a->counts, (size_t)a->experts, TSL_DT_F32, "counts");
}

int tsl_devops_check_moe(const char *op, const tsl_moe_args_t *a, tsl_err_t *err)
{
    const char *bad = moe_misfit(op, a);
    if (!bad)
        return 0;
    return tsl_err_setc(err, TSL_E_INVALID,
                        "%s: %s does not fit (rows %d, cols %d, experts %d, k %d, n %d, div %d)",
                        op, bad, a->rows, a->cols, a->experts, a->k, a->n, a->div);
}

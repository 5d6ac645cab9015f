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
    const tsl_moe_route_t *rt = a->rt;
    if (a->k < 1 || a->k > a->experts || a->rows < 0)
        return "k";
    if (rt && rt->groups > 1 &&
        (rt->groups > TSL_MOE_MAX_GROUPS || a->experts % rt->groups || rt->topk_groups < 1 ||
         rt->topk_groups > rt->groups || a->k > rt->topk_groups * (a->experts / rt->groups)))
        return "groups";
    if (rt && rt->bias && !bwd && (bad = short_of(rt->bias, E, DT_ACT, "bias")))
        return bad;
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

/* A strided operand: `rows` rows `ld` apart of `n` blocks `s` apart, `w` wide, in b. */
static bool strided_fits(const tsl_buf_t *b, int rows, int ld, int n, int s, int w)
{
    if (rows == 0 || n == 0)
        return true;
    size_t need = (size_t)(rows - 1) * (size_t)ld + (size_t)(n - 1) * (size_t)s + (size_t)w;
    return b && b->n >= need && (b->dt == TSL_DT_F32 || b->dt == TSL_DT_BF16);
}

int tsl_devops_check_rope(const tsl_buf_t *x, const tsl_buf_t *y, const tsl_rope_t *r,
                          tsl_err_t *err)
{
    const char *bad = NULL;
    if (r->rows < 0 || r->heads < 1 || r->dim < 2 || r->dim % 2 || r->seq < 1 || !(r->base > 0))
        bad = "rows, heads, an even dim, seq or base";
    else if (r->xs < 0 || r->ys < 0 || (r->ys && r->ys < r->dim) ||
             r->ldx < (r->heads - 1) * r->xs + r->dim || r->ldy < (r->heads - 1) * r->ys + r->dim)
        bad = "a stride";
    else if (!strided_fits(x, r->rows, r->ldx, r->heads, r->xs, r->dim))
        bad = "x";
    else if (!strided_fits(y, r->rows, r->ldy, r->ys ? r->heads : 1, r->ys, r->dim) ||
             y->dt != x->dt)
        bad = "y";
    if (!bad)
        return 0;
    return tsl_err_setc(err, TSL_E_INVALID,
                        "rope: %s does not fit (rows %d, heads %d, dim %d, seq %d, x %d/%d, "
                        "y %d/%d)",
                        bad, r->rows, r->heads, r->dim, r->seq, r->ldx, r->xs, r->ldy, r->ys);
}

int tsl_devops_check_copy2d(const tsl_buf_t *x, int ldx, int xs, const tsl_buf_t *y, int ldy,
                            int ys, int rows, int batch, int cols, tsl_err_t *err)
{
    const char *bad = NULL;
    if (rows < 0 || batch < 0 || cols < 1 || xs < 0 || ys < 0)
        bad = "rows, batch, cols or a stride";
    else if ((batch > 1 && ys < cols) || ldy < (batch ? batch - 1 : 0) * ys + cols ||
             ldx < (batch ? batch - 1 : 0) * xs + cols)
        bad = "a stride (blocks overlap)";
    else if (!strided_fits(x, rows, ldx, batch, xs, cols))
        bad = "x";
    else if (!strided_fits(y, rows, ldy, batch, ys, cols) || y->dt != x->dt)
        bad = "y";
    if (!bad)
        return 0;
    return tsl_err_setc(err, TSL_E_INVALID,
                        "copy2d: %s does not fit (rows %d, batch %d, cols %d, x %d/%d, y %d/%d)",
                        bad, rows, batch, cols, ldx, xs, ldy, ys);
}

int tsl_devops_check_gate(const char *op, const tsl_buf_t *x, const tsl_buf_t *logit,
                          const tsl_buf_t *gate, const tsl_buf_t *y, int rows, int cols,
                          tsl_err_t *err)
{
    size_t r = rows > 0 ? (size_t)rows : 0, c = cols > 0 ? (size_t)cols : 0;
    const char *bad = NULL;
    if (rows < 0 || cols < 1)
        bad = "rows or cols";
    else if (!(bad = short_of(x, r * c, DT_ACT, "x")) && !(bad = short_of(y, r * c, DT_ACT, "y")) &&
             !(gate && (bad = short_of(gate, r, TSL_DT_F32, "gate"))))
        bad = logit ? short_of(logit, r, DT_ACT, "logit") : NULL;
    if (!bad)
        return 0;
    return tsl_err_setc(err, TSL_E_INVALID, "%s: %s does not fit (rows %d, cols %d)", op, bad, rows,
                        cols);
}

/*
 * strategy.c — decision-tree enumeration of one layer's strategies inside a
 * pipeline stage (Galvatron-BMW Sec. III-B). See strategy.h for the contract and
 * docs/search-space.md for the rules and the counts.
 *
 * Enumeration order (fixed, independent of the platform):
 *   1. number of levels ascending (0 only for a group of one device, then 1, 2, 3);
 *   2. ordered factorisation of G, degrees compared lexicographically innermost
 *      first (8 | 2·4 | 4·2 | 2·2·2);
 *   3. the dimensions of the levels, lexicographically innermost first with
 *      DP < SDP < TP (dp-sdp, dp-tp, sdp-dp, sdp-tp, tp-dp, tp-sdp);
 *   4. each tree is followed by its SP / ZeRO twins when the options allow them:
 *      "+zero1", "+zero2" (trees with DP); with allow_sp a tree with TP comes as
 *      its "+sp" form only (the plain form is dominated: docs/search-space.md);
 *   5. all of those without CKPT in that order, then their CKPT twins in the same
 *      order, then their selective-recomputation twins.
 *
 * Layout classes: a strategy's layout is the sequence of its levels with DP and SDP
 * both seen as "data", adjacent data levels merged into one (their product) —
 * e.g. dp2-sdp2-tp2 is data4-tp2. Two strategies with the same sequence put the
 * same samples and the same tensor slices on the same devices. When the data
 * levels are contiguous this is exactly "same TP degree and stride, same data
 * width and stride"; the sequence also covers trees whose data levels sit on
 * both sides of TP (dp2-tp2-sdp2), which have no single data stride.
 */
#include "strategy.h"

#include <stdio.h>
#include <string.h>

enum { ROLE_DATA = 0, ROLE_TP = 1 };

/* More than the number of divisors of any uint32_t (1344). */
#define MAX_DIVISORS 1536u

static const char *const dim_name[TSL_DIM_COUNT] = {"dp", "sdp", "tp"};

tsl_strategy_opts_t tsl_strategy_opts_default(void)
{
    tsl_strategy_opts_t o;
    memset(&o, 0, sizeof(o));
    o.allow_dp = true;
    o.allow_sdp = true;
    o.allow_tp = true;
    o.allow_ckpt = true;
    o.allow_no_ckpt = true;
    o.takeaway3 = true;
    o.max_tp = 0;
    return o;
}

static int level_of(const tsl_strategy_t *s, tsl_dim_t d)
{
    for (uint32_t i = 0; i < s->n_levels && i < TSL_STRATEGY_MAX_LEVELS; i++)
        if (s->dim[i] == (uint8_t)d)
            return (int)i;
    return -1;
}

uint32_t tsl_strategy_degree(const tsl_strategy_t *s, tsl_dim_t d)
{
    int lv = level_of(s, d);
    return lv < 0 ? 1u : s->degree[lv];
}

/* Stride of the level that uses d: the product of the degrees inside it. An unused
 * dimension has degree 1, and its stride is reported as 1 (any value would do). */
uint32_t tsl_strategy_stride(const tsl_strategy_t *s, tsl_dim_t d)
{
    int lv = level_of(s, d);
    if (lv < 0)
        return 1u;
    uint32_t st = 1;
    for (int i = 0; i < lv; i++)
        st *= s->degree[i];
    return st;
}

uint32_t tsl_strategy_group_size(const tsl_strategy_t *s)
{
    uint32_t g = 1;
    for (uint32_t i = 0; i < s->n_levels && i < TSL_STRATEGY_MAX_LEVELS; i++)
        g *= s->degree[i];
    return g;
}

uint32_t tsl_strategy_data_width(const tsl_strategy_t *s)
{
    return tsl_strategy_degree(s, TSL_DIM_DP) * tsl_strategy_degree(s, TSL_DIM_SDP);
}

/* The layout key described at the top: roles and degrees, adjacent data merged. */
static uint32_t layout_key(const tsl_strategy_t *s, uint8_t role[TSL_STRATEGY_MAX_LEVELS],
                           uint32_t deg[TSL_STRATEGY_MAX_LEVELS])
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->n_levels && i < TSL_STRATEGY_MAX_LEVELS; i++) {
        uint8_t r = s->dim[i] == TSL_DIM_TP ? ROLE_TP : ROLE_DATA;
        if (n > 0 && r == ROLE_DATA && role[n - 1] == ROLE_DATA) {
            deg[n - 1] *= s->degree[i];
        } else {
            role[n] = r;
            deg[n] = s->degree[i];
            n++;
        }
    }
    return n;
}

bool tsl_strategy_same_layout(const tsl_strategy_t *a, const tsl_strategy_t *b)
{
    uint8_t ra[TSL_STRATEGY_MAX_LEVELS], rb[TSL_STRATEGY_MAX_LEVELS];
    uint32_t da[TSL_STRATEGY_MAX_LEVELS], db[TSL_STRATEGY_MAX_LEVELS];
    uint32_t na = layout_key(a, ra, da), nb = layout_key(b, rb, db);
    if (na != nb)
        return false;
    for (uint32_t i = 0; i < na; i++)
        if (ra[i] != rb[i] || da[i] != db[i])
            return false;
    return true;
}

bool tsl_strategy_equal(const tsl_strategy_t *a, const tsl_strategy_t *b)
{
    if (a->n_levels != b->n_levels || a->ckpt != b->ckpt || a->sp != b->sp ||
        a->selective != b->selective || a->zero != b->zero)
        return false;
    for (uint32_t i = 0; i < a->n_levels && i < TSL_STRATEGY_MAX_LEVELS; i++)
        if (a->dim[i] != b->dim[i] || a->degree[i] != b->degree[i])
            return false;
    return true;
}

/* ---- enumeration ---- */

typedef struct enum_ctx {
    const tsl_strategy_opts_t *opts;
    tsl_strategy_t *out; /* NULL: count only */
    uint32_t cap;
    uint32_t n; /* trees accepted so far (without the CKPT twins) */
} enum_ctx_t;

static bool dim_allowed(const tsl_strategy_opts_t *o, uint32_t d)
{
    switch (d) {
    case TSL_DIM_DP: return o->allow_dp;
    case TSL_DIM_SDP: return o->allow_sdp;
    case TSL_DIM_TP: return o->allow_tp;
    default: return false;
    }
}

/* One tree and its SP / ZeRO twins (order 4 at the top). */
static void emit_tree(enum_ctx_t *cx, const uint32_t *deg, const uint32_t *d, uint32_t k)
{
    const tsl_strategy_opts_t *o = cx->opts;
    bool has_tp = false, has_dp = false;
    for (uint32_t i = 0; i < k; i++) {
        has_tp |= d[i] == TSL_DIM_TP;
        has_dp |= d[i] == TSL_DIM_DP;
    }
    /* SP moves the bytes TP moves and stores and computes less (docs/cost-model.md):
     * where it is allowed a TP level comes with it only, its plain twin dominated */
    uint32_t sp0 = (o->allow_sp && has_tp) ? 1 : 0, n_zero = (o->allow_zero && has_dp) ? 3 : 1;
    for (uint32_t sp = sp0; sp < sp0 + 1; sp++) {
        for (uint32_t z = 0; z < n_zero; z++) {
            if (cx->out != NULL && cx->n < cx->cap) {
                tsl_strategy_t *s = &cx->out[cx->n];
                memset(s, 0, sizeof(*s));
                s->n_levels = (uint8_t)k;
                for (uint32_t i = 0; i < k; i++) {
                    s->dim[i] = (uint8_t)d[i];
                    s->degree[i] = deg[i];
                }
                s->sp = sp == 1;
                s->zero = (uint8_t)z;
            }
            cx->n++;
        }
    }
}

/* Every assignment of distinct allowed dimensions to the k levels of one
 * factorisation, in lexicographic order, after the filters. */
static void emit_factorisation(enum_ctx_t *cx, const uint32_t *deg, uint32_t k)
{
    const tsl_strategy_opts_t *o = cx->opts;
    uint32_t d[TSL_STRATEGY_MAX_LEVELS] = {0, 0, 0};
    uint32_t total = 1;
    for (uint32_t i = 0; i < k; i++)
        total *= TSL_DIM_COUNT;
    for (uint32_t code = 0; code < total; code++) {
        /* decode code as k base-3 digits, level 0 most significant (lexicographic) */
        uint32_t c = code;
        for (uint32_t i = k; i-- > 0;) {
            d[i] = c % TSL_DIM_COUNT;
            c /= TSL_DIM_COUNT;
        }
        bool ok = true, has_dp = false, has_sdp = false;
        for (uint32_t i = 0; i < k && ok; i++) {
            if (!dim_allowed(o, d[i]))
                ok = false;
            for (uint32_t q = 0; q < i && ok; q++)
                if (d[q] == d[i])
                    ok = false;
            if (d[i] == TSL_DIM_TP && o->max_tp != 0 && deg[i] > o->max_tp)
                ok = false;
            if (d[i] == TSL_DIM_TP && o->tp_innermost && i != 0)
                ok = false;
            has_dp |= d[i] == TSL_DIM_DP;
            has_sdp |= d[i] == TSL_DIM_SDP;
        }
        if (!ok || (o->takeaway3 && has_dp && has_sdp))
            continue;
        emit_tree(cx, deg, d, k);
    }
}

static uint32_t divisors_of(uint32_t g, uint32_t *div)
{
    /* ascending: small ones from the front, their partners collected behind */
    uint32_t lo = 0, hi = 0;
    uint32_t big[MAX_DIVISORS];
    for (uint32_t x = 1; (uint64_t)x * x <= g; x++) {
        if (g % x != 0)
            continue;
        div[lo++] = x;
        if (x != g / x)
            big[hi++] = g / x;
    }
    for (uint32_t i = hi; i-- > 0;)
        div[lo++] = big[i];
    return lo;
}

static void enumerate_trees(enum_ctx_t *cx, uint32_t g)
{
    if (g == 1) {
        /* the single empty tree: one device, no parallel dimension */
        if (cx->out != NULL && cx->n < cx->cap)
            memset(&cx->out[cx->n], 0, sizeof(cx->out[0]));
        cx->n++;
        return;
    }
    uint32_t div[MAX_DIVISORS];
    uint32_t nd = divisors_of(g, div);
    uint32_t deg[TSL_STRATEGY_MAX_LEVELS];

    deg[0] = g;
    emit_factorisation(cx, deg, 1);
    for (uint32_t a = 1; a + 1 < nd; a++) { /* 1 < div[a] < g */
        deg[0] = div[a];
        deg[1] = g / div[a];
        emit_factorisation(cx, deg, 2);
    }
    for (uint32_t a = 1; a + 1 < nd; a++) {
        uint32_t rest = g / div[a];
        for (uint32_t b = 1; b + 1 < nd && div[b] < rest; b++) {
            if (rest % div[b] != 0)
                continue;
            deg[0] = div[a];
            deg[1] = div[b];
            deg[2] = rest / div[b];
            emit_factorisation(cx, deg, 3);
        }
    }
}

int tsl_strategy_enumerate(uint32_t group_size, const tsl_strategy_opts_t *opts,
                           tsl_strategy_t *out, uint32_t *layout, uint32_t cap, tsl_err_t *err)
{
    tsl_strategy_opts_t def = tsl_strategy_opts_default();
    if (opts == NULL)
        opts = &def;
    if (group_size == 0)
        return tsl_err_set(err, "group_size: 0 devices; a stage needs at least one device");

    enum_ctx_t cx = {.opts = opts, .out = out, .cap = cap, .n = 0};
    enumerate_trees(&cx, group_size);
    uint32_t trees = cx.n;
    uint32_t variants = (opts->allow_no_ckpt ? 1u : 0u) + (opts->allow_ckpt ? 1u : 0u) +
                        (opts->allow_selective ? 1u : 0u);
    uint64_t total = (uint64_t)trees * variants;
    if (out == NULL)
        return (int)total; /* count only */
    if (total > cap)
        return tsl_err_set(err,
                           "cap: %u strategies for a group of %u devices do not fit in %u slots",
                           (unsigned)total, (unsigned)group_size, (unsigned)cap);

    /* trees are in out[0..trees); lay out the variants: plain ones, then CKPT
     * twins, then selective-recomputation twins (block b holds variant b) */
    uint32_t b = 0;
    bool want[3] = {opts->allow_no_ckpt, opts->allow_ckpt, opts->allow_selective};
    for (uint32_t v = 0; v < 3; v++) {
        if (!want[v])
            continue;
        for (uint32_t i = 0; i < trees && b > 0; i++)
            memcpy(&out[b * trees + i], &out[i], sizeof(out[0])); /* padding too */
        for (uint32_t i = 0; i < trees; i++) {
            out[b * trees + i].ckpt = v == 1;
            out[b * trees + i].selective = v == 2;
        }
        b++;
    }

    if (layout != NULL && total > 0) {
        /* class ids in order of first appearance among the trees; twins share them */
        uint32_t nclass = 0;
        for (uint32_t i = 0; i < trees; i++) {
            uint32_t id = nclass;
            for (uint32_t q = 0; q < i; q++) {
                if (tsl_strategy_same_layout(&out[q], &out[i])) {
                    id = layout[q];
                    break;
                }
            }
            if (id == nclass)
                nclass++;
            layout[i] = id;
        }
        for (uint32_t v = 1; v < variants; v++)
            for (uint32_t i = 0; i < trees; i++)
                layout[v * trees + i] = layout[i];
    }
    return (int)total;
}

/* ---- text form ---- */

size_t tsl_strategy_format(const tsl_strategy_t *s, char *buf, size_t cap)
{
    char tmp[96];
    size_t n = 0;
    if (s->n_levels == 0) {
        n = (size_t)snprintf(tmp, sizeof(tmp), "single");
    } else {
        for (uint32_t i = 0; i < s->n_levels && i < TSL_STRATEGY_MAX_LEVELS; i++) {
            const char *name = s->dim[i] < TSL_DIM_COUNT ? dim_name[s->dim[i]] : "?";
            n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "%s%s%u", i ? "-" : "", name,
                                  (unsigned)s->degree[i]);
        }
    }
    if (s->sp)
        n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "+sp");
    if (s->zero)
        n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "+zero%u", (unsigned)s->zero);
    if (s->ckpt)
        n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "+ckpt");
    else if (s->selective)
        n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "+selckpt");
    if (cap > 0) {
        size_t c = n < cap - 1 ? n : cap - 1;
        memcpy(buf, tmp, c);
        buf[c] = '\0';
    }
    return n;
}

/* Parses one "<dim><degree>" token of length len. */
static int parse_level(const char *text, const char *tok, size_t len, uint8_t *dim, uint32_t *deg,
                       tsl_err_t *err)
{
    size_t nl = 0;
    int d = -1;
    for (int i = TSL_DIM_COUNT; i-- > 0;) {
        size_t l = strlen(dim_name[i]);
        if (len > l && strncmp(tok, dim_name[i], l) == 0) {
            d = i;
            nl = l;
            break;
        }
    }
    if (d < 0)
        return tsl_err_set(err,
                           "strategy \"%s\": bad token \"%.*s\": expected dp<N>, sdp<N> or tp<N>",
                           text, (int)len, tok);
    uint64_t v = 0;
    const char *p = tok + nl, *end = tok + len;
    if (*p == '0')
        return tsl_err_set(err,
                           "strategy \"%s\": bad token \"%.*s\": degree must be an integer > 1 "
                           "without leading zeros",
                           text, (int)len, tok);
    for (; p < end; p++) {
        if (*p < '0' || *p > '9')
            return tsl_err_set(err,
                               "strategy \"%s\": bad token \"%.*s\": degree must be a decimal "
                               "integer > 1",
                               text, (int)len, tok);
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > UINT32_MAX)
            return tsl_err_set(err, "strategy \"%s\": bad token \"%.*s\": degree too large", text,
                               (int)len, tok);
    }
    if (v < 2)
        return tsl_err_set(err,
                           "strategy \"%s\": bad token \"%.*s\": degree must be > 1 "
                           "(leave the dimension out instead)",
                           text, (int)len, tok);
    *dim = (uint8_t)d;
    *deg = (uint32_t)v;
    return 0;
}

/* "+sp+zero1+ckpt": each known suffix once, in the order tsl_strategy_format
 * writes them. */
static int parse_suffixes(const char *text, const char *plus, tsl_strategy_t *s, tsl_err_t *err)
{
    static const char *const names[] = {"+sp", "+zero1", "+zero2", "+ckpt", "+selckpt"};
    static const int rank[] = {0, 1, 1, 2, 2};
    const char *all = plus;
    int last = -1;
    while (*plus != '\0') {
        size_t tl = strcspn(plus + 1, "+") + 1;
        int k = -1;
        for (int i = 0; i < 5; i++)
            if (strlen(names[i]) == tl && strncmp(plus, names[i], tl) == 0)
                k = i;
        if (k < 0 || rank[k] <= last)
            return tsl_err_set(err,
                               "strategy \"%s\": bad suffix \"%.*s\" in \"%s\": expected, "
                               "in this order, +sp, +zero1|+zero2, +ckpt|+selckpt",
                               text, (int)tl, plus, all);
        last = rank[k];
        s->sp |= k == 0;
        s->zero = k == 1 ? 1 : k == 2 ? 2 : s->zero;
        s->ckpt |= k == 3;
        s->selective |= k == 4;
        plus += tl;
    }
    return 0;
}

/* +sp needs a TP level and +zero a DP level (the enumeration makes no others). */
static int check_twins(const char *text, const tsl_strategy_t *s, tsl_err_t *err)
{
    if (s->sp && tsl_strategy_degree(s, TSL_DIM_TP) < 2)
        return tsl_err_set(err, "strategy \"%s\": +sp needs a tp level", text);
    if (s->zero && tsl_strategy_degree(s, TSL_DIM_DP) < 2)
        return tsl_err_set(err, "strategy \"%s\": +zero%u needs a dp level", text,
                           (unsigned)s->zero);
    return 0;
}

int tsl_strategy_parse(const char *text, tsl_strategy_t *out, tsl_err_t *err)
{
    if (text == NULL || out == NULL)
        return tsl_err_set(err, "strategy: no text given");
    tsl_strategy_t s;
    memset(&s, 0, sizeof(s));

    /* every refusal below quotes the text as given: one that no strategy is spelt
     * with (a control byte, a quote, a backslash, a non-ASCII byte, or past any
     * strategy's length) is refused first, shown escaped, so that no message
     * carries a raw newline or escape sequence (a document's "strategy") */
    size_t len = strlen(text);
    if (len > 256 || tsl_err_token_bad_byte(text) != NULL) {
        char shown[TSL_ERR_SHOWN_MAX(60)];
        return tsl_err_set(err,
                           "strategy \"%s\": not a strategy (letters, digits, '-' and '+', "
                           "at most 256 characters; e.g. \"tp2-dp4+ckpt\")",
                           tsl_err_shown(text, 60, shown, sizeof shown));
    }
    const char *plus = strchr(text, '+');
    size_t body = plus ? (size_t)(plus - text) : len;
    if (plus != NULL && parse_suffixes(text, plus, &s, err) != 0)
        return -1;
    if (body == 0)
        return tsl_err_set(
            err, "strategy \"%s\": empty strategy; give e.g. \"tp2-dp4\" or \"single\"", text);
    if (body == 6 && strncmp(text, "single", 6) == 0) {
        if (check_twins(text, &s, err) != 0)
            return -1;
        memcpy(out, &s, sizeof(s));
        return 0;
    }

    uint64_t group = 1;
    const char *tok = text;
    while (tok <= text + body) {
        const char *dash = memchr(tok, '-', (size_t)(text + body - tok));
        size_t tl = dash ? (size_t)(dash - tok) : (size_t)(text + body - tok);
        if (tl == 0)
            return tsl_err_set(err, "strategy \"%s\": empty token at offset %u", text,
                               (unsigned)(tok - text));
        if (s.n_levels == TSL_STRATEGY_MAX_LEVELS)
            return tsl_err_set(err, "strategy \"%s\": bad token \"%.*s\": at most %u levels", text,
                               (int)tl, tok, (unsigned)TSL_STRATEGY_MAX_LEVELS);
        uint8_t d = 0;
        uint32_t deg = 0;
        if (parse_level(text, tok, tl, &d, &deg, err) != 0)
            return -1;
        for (uint32_t i = 0; i < s.n_levels; i++)
            if (s.dim[i] == d)
                return tsl_err_set(err, "strategy \"%s\": bad token \"%.*s\": %s appears twice",
                                   text, (int)tl, tok, dim_name[d]);
        group *= deg;
        if (group > UINT32_MAX)
            return tsl_err_set(err, "strategy \"%s\": bad token \"%.*s\": group size overflows",
                               text, (int)tl, tok);
        s.dim[s.n_levels] = d;
        s.degree[s.n_levels] = deg;
        s.n_levels++;
        if (dash == NULL)
            break;
        tok = dash + 1;
    }
    if (check_twins(text, &s, err) != 0)
        return -1;
    memcpy(out, &s, sizeof(s));
    return 0;
}

bool tsl_strategy_tie_ok(const tsl_strategy_t *emb, const tsl_strategy_t *head, bool same_stage,
                         uint32_t devices)
{
    if (same_stage)
        return tsl_strategy_same_layout(emb, head);
    uint32_t te = tsl_strategy_degree(emb, TSL_DIM_TP), th = tsl_strategy_degree(head, TSL_DIM_TP);
    uint32_t se = tsl_strategy_stride(emb, TSL_DIM_TP), sh = tsl_strategy_stride(head, TSL_DIM_TP);
    if (te != th)
        return false;
    for (uint32_t q = 0; q < devices; q++)
        if ((q / se) % te != (q / sh) % th)
            return false;
    return true;
}

/*
 * test_strategy.c — decision-tree enumeration (Galvatron-BMW Sec. III-B): counts,
 * order, layout classes, degrees and strides, text round-trip, errors.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "strategy.h"

static tsl_strategy_t S(const char *text)
{
    tsl_strategy_t s;
    tsl_err_t err = {0};
    memset(&s, 0, sizeof(s));
    int rc = tsl_strategy_parse(text, &s, &err);
    CHECK(rc == 0, "parse \"%s\": %s", text, err.msg);
    return s;
}

static int count(uint32_t g, const tsl_strategy_opts_t *o)
{
    static tsl_strategy_t buf[TSL_STRATEGY_MAX];
    tsl_err_t err = {0};
    int n = tsl_strategy_enumerate(g, o, buf, NULL, TSL_STRATEGY_MAX, &err);
    CHECK(n >= 0, "enumerate(%u): %s", (unsigned)g, err.msg);
    /* the count-only form agrees */
    int n2 = tsl_strategy_enumerate(g, o, NULL, NULL, 0, &err);
    CHECK(n2 == n, "count-only %d vs %d for G=%u", n2, n, (unsigned)g);
    return n;
}

/* ---- the paper's counts for 8 GPUs ---- */
static void test_counts_8(void)
{
    const uint32_t groups[4] = {1, 2, 4, 8}; /* PP degree 8 / 4 / 2 / 1 */
    const int before[4] = {2, 6, 18, 42};    /* CKPT twins, DP+SDP mixes kept */
    const int after[4] = {2, 6, 14, 22};     /* Takeaway #3 */
    const int no_ckpt[4] = {1, 3, 7, 11};    /* Takeaway #3, no CKPT */

    tsl_strategy_opts_t all = tsl_strategy_opts_default();
    all.takeaway3 = false;
    tsl_strategy_opts_t def = tsl_strategy_opts_default();
    tsl_strategy_opts_t plain = def;
    plain.allow_ckpt = false;
    tsl_strategy_opts_t only_ckpt = def;
    only_ckpt.allow_no_ckpt = false;

    int s_before = 0, s_after = 0, s_plain = 0, s_only = 0;
    for (int i = 0; i < 4; i++) {
        int a = count(groups[i], &all), b = count(groups[i], &def);
        int c = count(groups[i], &plain), d = count(groups[i], &only_ckpt);
        CHECK(a == before[i], "G=%u before Takeaway #3: %d, want %d", (unsigned)groups[i], a,
              before[i]);
        CHECK(b == after[i], "G=%u after Takeaway #3: %d, want %d", (unsigned)groups[i], b,
              after[i]);
        CHECK(c == no_ckpt[i], "G=%u without CKPT: %d, want %d", (unsigned)groups[i], c,
              no_ckpt[i]);
        CHECK(d == no_ckpt[i], "G=%u CKPT only: %d, want %d", (unsigned)groups[i], d, no_ckpt[i]);
        s_before += a;
        s_after += b;
        s_plain += c;
        s_only += d;
    }
    CHECK(s_before == 68, "sum before Takeaway #3: %d, want 68", s_before);
    CHECK(s_after == 44, "sum after Takeaway #3: %d, want 44", s_after);
    CHECK(s_plain == 22, "sum without CKPT: %d, want 22", s_plain);
    CHECK(s_only == 22, "sum CKPT only: %d, want 22", s_only);
    CHECK(count(8, NULL) == 22, "NULL opts = the default space");
}

/* ---- groups that are not powers of two, and larger ones ---- */
static void test_counts_other(void)
{
    tsl_strategy_opts_t all = tsl_strategy_opts_default();
    all.takeaway3 = false;
    tsl_strategy_opts_t def = tsl_strategy_opts_default();

    /*
     * Derivations (trees; ×2 for the CKPT twins). A factorisation with k levels
     * takes an ordered choice of k distinct dimensions out of 3: 3, 6 or 6 ways;
     * under Takeaway #3 the pairs {dp,sdp} in either order go (6 − 2 = 4 ways for
     * k = 2) and every k = 3 tree holds both DP and SDP (0 ways).
     *
     * G = 3, 5 (prime): only the single level (3)      → 3 trees: 6 / 6.
     * G = 6: (6) | (2,3) (3,2); no three factors > 1
     *        all: 3 + 2·6 = 15 → 30;   Takeaway #3: 3 + 2·4 = 11 → 22.
     * G = 12: (12) | (2,6) (3,4) (4,3) (6,2) | (2,2,3) (2,3,2) (3,2,2)
     *        all: 3 + 4·6 + 3·6 = 45 → 90;   Takeaway #3: 3 + 4·4 = 19 → 38.
     * G = 16: (16) | (2,8) (4,4) (8,2) | (2,2,4) (2,4,2) (4,2,2)
     *        all: 3 + 3·6 + 3·6 = 39 → 78;   Takeaway #3: 3 + 3·4 = 15 → 30.
     * G = 30 = 2·3·5: (30) | 6 two-factor ones (2·15, 3·10, 5·6 and reversed)
     *        | 6 orders of 2·3·5
     *        all: 3 + 6·6 + 6·6 = 75 → 150;   Takeaway #3: 3 + 6·4 = 27 → 54.
     */
    CHECK(count(3, &all) == 6 && count(3, &def) == 6, "G=3");
    CHECK(count(5, &all) == 6 && count(5, &def) == 6, "G=5");
    CHECK(count(6, &all) == 30, "G=6 all: %d", count(6, &all));
    CHECK(count(6, &def) == 22, "G=6 default: %d", count(6, &def));
    CHECK(count(12, &all) == 90, "G=12 all: %d", count(12, &all));
    CHECK(count(12, &def) == 38, "G=12 default: %d", count(12, &def));
    CHECK(count(16, &all) == 78, "G=16 all: %d", count(16, &all));
    CHECK(count(16, &def) == 30, "G=16 default: %d", count(16, &def));
    CHECK(count(30, &all) == 150, "G=30 all: %d", count(30, &all));
    CHECK(count(30, &def) == 54, "G=30 default: %d", count(30, &def));

    /* G = 2^n: n−1 two-level and C(n−1, 2) three-level factorisations. */
    for (uint32_t n = 1; n <= 14; n++) {
        uint32_t g = 1u << n;
        int two = (int)(n - 1), three = (int)((n - 1) * (n - 2) / 2);
        int want_all = 2 * (3 + 6 * two + 6 * three);
        int want_def = 2 * (3 + 4 * two);
        CHECK(count(g, &all) == want_all, "G=%u all: %d want %d", (unsigned)g, count(g, &all),
              want_all);
        CHECK(count(g, &def) == want_def, "G=%u default: %d want %d", (unsigned)g, count(g, &def),
              want_def);
        CHECK(want_all <= (int)TSL_STRATEGY_MAX, "G=%u fits TSL_STRATEGY_MAX", (unsigned)g);
    }

    /* each enumerated strategy is well formed, for every G up to 64 */
    static tsl_strategy_t buf[TSL_STRATEGY_MAX];
    for (uint32_t g = 1; g <= 64; g++) {
        int n = tsl_strategy_enumerate(g, &all, buf, NULL, TSL_STRATEGY_MAX, NULL);
        int bad = 0;
        for (int i = 0; i < n; i++) {
            const tsl_strategy_t *s = &buf[i];
            if (tsl_strategy_group_size(s) != g || s->n_levels > 3 || (g > 1) != (s->n_levels > 0))
                bad++;
            for (int a = 0; a < s->n_levels; a++) {
                if (s->degree[a] < 2 || s->dim[a] >= TSL_DIM_COUNT)
                    bad++;
                for (int b = 0; b < a; b++)
                    if (s->dim[a] == s->dim[b])
                        bad++;
            }
            for (int q = 0; q < i; q++)
                if (tsl_strategy_equal(&buf[q], s))
                    bad++; /* duplicates */
        }
        CHECK(n > 0 && bad == 0, "G=%u: %d malformed/duplicate strategies", (unsigned)g, bad);
    }
}

/* ---- option filters ---- */
static void test_opts(void)
{
    tsl_strategy_opts_t o = tsl_strategy_opts_default();
    o.allow_ckpt = false;

    /* max_tp = 2 on 8 devices: dp8 sdp8 | tp2-dp4 tp2-sdp4 | dp4-tp2 sdp4-tp2 */
    o.max_tp = 2;
    CHECK(count(8, &o) == 6, "max_tp 2: %d", count(8, &o));
    o.max_tp = 4; /* only tp8 goes */
    CHECK(count(8, &o) == 10, "max_tp 4: %d", count(8, &o));
    o.max_tp = 1; /* no TP: dp8 sdp8 (dp/sdp mixes are Takeaway #3'd) */
    CHECK(count(8, &o) == 2, "max_tp 1: %d", count(8, &o));
    o.max_tp = 8;
    CHECK(count(8, &o) == 11, "max_tp 8 = no limit: %d", count(8, &o));
    o.max_tp = 0;

    tsl_strategy_opts_t t = o;
    t.allow_dp = t.allow_sdp = false;
    CHECK(count(8, &t) == 1, "TP only on 8: tp8");
    CHECK(count(1, &t) == 1, "TP only on 1: single");
    t.max_tp = 4;
    CHECK(count(8, &t) == 0, "TP only, max_tp 4, on 8: nothing");
    CHECK(count(4, &t) == 1, "TP only, max_tp 4, on 4: tp4");

    tsl_strategy_opts_t d = o;
    d.allow_sdp = false; /* dp, tp: 8: 2 + 2·2 = 6 trees */
    CHECK(count(8, &d) == 6, "DP+TP on 8: %d", count(8, &d));
    d.takeaway3 = false; /* no change without SDP */
    CHECK(count(8, &d) == 6, "DP+TP on 8 without Takeaway #3: %d", count(8, &d));

    tsl_strategy_opts_t none = tsl_strategy_opts_default();
    none.allow_ckpt = none.allow_no_ckpt = false;
    CHECK(count(8, &none) == 0, "no CKPT variant allowed: nothing");

    tsl_strategy_opts_t def = tsl_strategy_opts_default();
    CHECK(def.allow_dp && def.allow_sdp && def.allow_tp && def.allow_ckpt && def.allow_no_ckpt &&
              def.takeaway3 && def.max_tp == 0,
          "default options");
}

/* ---- order, class ids ---- */
static void test_order_and_layout(void)
{
    static const char *const want8[] = {
        "dp8",      "sdp8",    "tp8",      "dp2-tp4", "sdp2-tp4", "tp2-dp4",
        "tp2-sdp4", "dp4-tp2", "sdp4-tp2", "tp4-dp2", "tp4-sdp2",
    };
    static const uint32_t want_layout8[] = {0, 0, 1, 2, 2, 3, 3, 4, 4, 5, 5};
    tsl_strategy_t out[64];
    uint32_t layout[64];
    tsl_err_t err = {0};
    int n = tsl_strategy_enumerate(8, NULL, out, layout, 64, &err);
    CHECK(n == 22, "default on 8: %d (%s)", n, err.msg);
    for (int i = 0; i < 22 && n == 22; i++) {
        char buf[64], want[64];
        tsl_strategy_format(&out[i], buf, sizeof(buf));
        snprintf(want, sizeof(want), "%s%s", want8[i % 11], i < 11 ? "" : "+ckpt");
        CHECK(strcmp(buf, want) == 0, "order [%d]: %s, want %s", i, buf, want);
        CHECK(layout[i] == want_layout8[i % 11], "layout [%d] %s: %u, want %u", i, buf,
              (unsigned)layout[i], (unsigned)want_layout8[i % 11]);
        CHECK(out[i].ckpt == (i >= 11), "[%d] ckpt", i);
    }

    /* CKPT only: the same trees in the same order, all with CKPT */
    tsl_strategy_opts_t oc = tsl_strategy_opts_default();
    oc.allow_no_ckpt = false;
    n = tsl_strategy_enumerate(8, &oc, out, layout, 64, &err);
    CHECK(n == 11, "CKPT only on 8: %d", n);
    for (int i = 0; i < n; i++) {
        char buf[64], want[64];
        tsl_strategy_format(&out[i], buf, sizeof(buf));
        snprintf(want, sizeof(want), "%s+ckpt", want8[i]);
        CHECK(strcmp(buf, want) == 0, "CKPT-only order [%d]: %s, want %s", i, buf, want);
        CHECK(layout[i] == want_layout8[i], "CKPT-only layout [%d]", i);
    }

    /* G = 1: "single" then "single+ckpt", one class */
    n = tsl_strategy_enumerate(1, NULL, out, layout, 64, &err);
    CHECK(n == 2 && out[0].n_levels == 0 && !out[0].ckpt && out[1].n_levels == 0 && out[1].ckpt &&
              layout[0] == 0 && layout[1] == 0,
          "G=1 enumeration");

    /* G = 6 without Takeaway #3, first trees: dp6 sdp6 tp6 dp2-sdp3 dp2-tp3 sdp2-dp3 ... */
    tsl_strategy_opts_t all = tsl_strategy_opts_default();
    all.takeaway3 = false;
    n = tsl_strategy_enumerate(6, &all, out, layout, 64, &err);
    static const char *const want6[] = {"dp6",      "sdp6",     "tp6",     "dp2-sdp3", "dp2-tp3",
                                        "sdp2-dp3", "sdp2-tp3", "tp2-dp3", "tp2-sdp3", "dp3-sdp2"};
    for (int i = 0; i < 10 && n == 30; i++) {
        char buf[64];
        tsl_strategy_format(&out[i], buf, sizeof(buf));
        CHECK(strcmp(buf, want6[i]) == 0, "G=6 order [%d]: %s, want %s", i, buf, want6[i]);
    }
    CHECK(layout[0] == 0 && layout[1] == 0 && layout[3] == 0 && layout[5] == 0,
          "G=6: dp6, sdp6, dp2-sdp3, sdp2-dp3 are one class (data 6)");

    /* for many groups: class ids are 0..k−1 in order of first appearance and equal
     * ids ⇔ same_layout; the run is deterministic (byte-identical) */
    static tsl_strategy_t a[TSL_STRATEGY_MAX], b[TSL_STRATEGY_MAX];
    static uint32_t la[TSL_STRATEGY_MAX], lb[TSL_STRATEGY_MAX];
    for (uint32_t g = 1; g <= 48; g++) {
        int na = tsl_strategy_enumerate(g, &all, a, la, TSL_STRATEGY_MAX, NULL);
        int nb = tsl_strategy_enumerate(g, &all, b, lb, TSL_STRATEGY_MAX, NULL);
        CHECK(na == nb && memcmp(a, b, sizeof(a[0]) * (size_t)na) == 0 &&
                  memcmp(la, lb, sizeof(la[0]) * (size_t)na) == 0,
              "G=%u deterministic", (unsigned)g);
        int bad = 0;
        uint32_t next = 0;
        for (int i = 0; i < na; i++) {
            if (la[i] > next)
                bad++;
            if (la[i] == next)
                next++;
            for (int q = 0; q < na; q++)
                if ((la[i] == la[q]) != tsl_strategy_same_layout(&a[i], &a[q]))
                    bad++;
        }
        CHECK(bad == 0, "G=%u: %d class-id mismatches", (unsigned)g, bad);
    }
}

/* ---- degree, stride, group size, data width ---- */
static void test_degree_stride(void)
{
    struct {
        const char *text;
        uint32_t dp, sdp, tp;          /* degrees */
        uint32_t dp_st, sdp_st, tp_st; /* strides (1 when unused) */
        uint32_t group, width;
    } cases[] = {
        {"single", 1, 1, 1, 1, 1, 1, 1, 1},
        {"tp2-dp4", 4, 1, 2, 2, 1, 1, 8, 4},
        {"dp4-tp2", 4, 1, 2, 1, 1, 4, 8, 4},
        {"sdp8+ckpt", 1, 8, 1, 1, 1, 1, 8, 8},
        {"tp2-sdp2-dp2+ckpt", 2, 2, 2, 4, 2, 1, 8, 4},
        {"dp2-sdp3", 2, 3, 1, 1, 2, 1, 6, 6},
        {"sdp3-tp2-dp5", 5, 3, 2, 6, 1, 3, 30, 15},
        {"tp16", 1, 1, 16, 1, 1, 1, 16, 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tsl_strategy_t s = S(cases[i].text);
        CHECK(tsl_strategy_degree(&s, TSL_DIM_DP) == cases[i].dp, "%s dp degree", cases[i].text);
        CHECK(tsl_strategy_degree(&s, TSL_DIM_SDP) == cases[i].sdp, "%s sdp degree", cases[i].text);
        CHECK(tsl_strategy_degree(&s, TSL_DIM_TP) == cases[i].tp, "%s tp degree", cases[i].text);
        CHECK(tsl_strategy_stride(&s, TSL_DIM_DP) == cases[i].dp_st, "%s dp stride %u",
              cases[i].text, (unsigned)tsl_strategy_stride(&s, TSL_DIM_DP));
        CHECK(tsl_strategy_stride(&s, TSL_DIM_SDP) == cases[i].sdp_st, "%s sdp stride %u",
              cases[i].text, (unsigned)tsl_strategy_stride(&s, TSL_DIM_SDP));
        CHECK(tsl_strategy_stride(&s, TSL_DIM_TP) == cases[i].tp_st, "%s tp stride %u",
              cases[i].text, (unsigned)tsl_strategy_stride(&s, TSL_DIM_TP));
        CHECK(tsl_strategy_group_size(&s) == cases[i].group, "%s group size", cases[i].text);
        CHECK(tsl_strategy_data_width(&s) == cases[i].width, "%s data width", cases[i].text);
    }
}

/* ---- same_layout ---- */

/* Independent model of a layout: device d holds the tensor slice tp_rank(d) of the
 * samples of its data group; two strategies lay activations out the same way when
 * every device has the same TP rank and the devices are grouped into the same
 * data groups (which samples a group holds is immaterial). */
static bool layout_by_devices(const tsl_strategy_t *x, const tsl_strategy_t *y)
{
    uint32_t g = tsl_strategy_group_size(x);
    if (g != tsl_strategy_group_size(y))
        return false;
    uint32_t dx[64], dy[64], tx[64], ty[64];
    const tsl_strategy_t *s2[2] = {x, y};
    uint32_t *dd[2] = {dx, dy}, *tt[2] = {tx, ty};
    for (int k = 0; k < 2; k++) {
        const tsl_strategy_t *s = s2[k];
        for (uint32_t d = 0; d < g; d++) {
            uint32_t stride = 1, data = 0, tp = 0;
            for (int lv = 0; lv < s->n_levels; lv++) {
                uint32_t rank = (d / stride) % s->degree[lv];
                if (s->dim[lv] == TSL_DIM_TP)
                    tp = rank;
                else
                    data += rank * stride; /* the data coordinates, as one number */
                stride *= s->degree[lv];
            }
            dd[k][d] = data;
            tt[k][d] = tp;
        }
    }
    for (uint32_t a = 0; a < g; a++) {
        if (tx[a] != ty[a])
            return false;
        for (uint32_t b = 0; b < g; b++)
            if ((dx[a] == dx[b]) != (dy[a] == dy[b]))
                return false;
    }
    return true;
}

static void test_same_layout(void)
{
    /* explicit truth table */
    const char *names[] = {
        "dp8",     "sdp8+ckpt", "tp8",          "tp2-dp4",           "tp2-sdp4+ckpt",
        "dp4-tp2", "dp2-sdp4",  "dp2-tp2-sdp2", "sdp2-tp2-dp2+ckpt", "tp2-dp2-sdp2"};
    enum { N = 10 };
    /* clang-format off */
    static const int truth[N][N] = {
        /*          dp8 sdp8 tp8 t2d4 t2s4 d4t2 d2s4 dts sdtd tdds */
        /* dp8  */ {1, 1, 0, 0, 0, 0, 1, 0, 0, 0},
        /* sdp8 */ {1, 1, 0, 0, 0, 0, 1, 0, 0, 0},
        /* tp8  */ {0, 0, 1, 0, 0, 0, 0, 0, 0, 0},
        /* t2d4 */ {0, 0, 0, 1, 1, 0, 0, 0, 0, 1},
        /* t2s4 */ {0, 0, 0, 1, 1, 0, 0, 0, 0, 1},
        /* d4t2 */ {0, 0, 0, 0, 0, 1, 0, 0, 0, 0},
        /* d2s4 */ {1, 1, 0, 0, 0, 0, 1, 0, 0, 0},
        /* dts  */ {0, 0, 0, 0, 0, 0, 0, 1, 1, 0},
        /* sdtd */ {0, 0, 0, 0, 0, 0, 0, 1, 1, 0},
        /* tdds */ {0, 0, 0, 1, 1, 0, 0, 0, 0, 1},
    };
    /* clang-format on */
    tsl_strategy_t s[N];
    for (int i = 0; i < N; i++)
        s[i] = S(names[i]);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            CHECK(tsl_strategy_same_layout(&s[i], &s[j]) == (bool)truth[i][j],
                  "same_layout(%s, %s) "
                  "want %d",
                  names[i], names[j], truth[i][j]);

    /* small cases across group sizes */
    tsl_strategy_t one = S("single"), onec = S("single+ckpt"), dp2 = S("dp2"), tp2 = S("tp2"),
                   dp4 = S("dp4"), tp2dp2 = S("tp2-dp2"), dp2tp2 = S("dp2-tp2");
    CHECK(tsl_strategy_same_layout(&one, &onec), "single ~ single+ckpt");
    CHECK(!tsl_strategy_same_layout(&one, &dp2), "single !~ dp2");
    CHECK(!tsl_strategy_same_layout(&dp2, &tp2), "dp2 !~ tp2");
    CHECK(!tsl_strategy_same_layout(&dp2, &dp4), "dp2 !~ dp4");
    CHECK(!tsl_strategy_same_layout(&tp2, &tp2dp2), "tp2 !~ tp2-dp2 (other group size)");
    CHECK(!tsl_strategy_same_layout(&tp2dp2, &dp2tp2), "tp2-dp2 !~ dp2-tp2 (strides differ)");

    /* against the device model, for every pair of every group up to 32 */
    tsl_strategy_opts_t all = tsl_strategy_opts_default();
    all.takeaway3 = false;
    all.allow_ckpt = false;
    static tsl_strategy_t buf[TSL_STRATEGY_MAX];
    int pairs = 0, bad = 0;
    for (uint32_t g = 1; g <= 32; g++) {
        int n = tsl_strategy_enumerate(g, &all, buf, NULL, TSL_STRATEGY_MAX, NULL);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++, pairs++)
                if (tsl_strategy_same_layout(&buf[i], &buf[j]) !=
                    layout_by_devices(&buf[i], &buf[j]))
                    bad++;
    }
    CHECK(bad == 0, "same_layout disagrees with the device model on %d of %d pairs", bad, pairs);
    printf("same_layout checked against the device model on %d pairs\n", pairs);

    /* equal */
    tsl_strategy_t x = S("tp2-dp4"), y = S("tp2-dp4"), z = S("tp2-dp4+ckpt"), w = S("dp4-tp2");
    CHECK(tsl_strategy_equal(&x, &y), "equal");
    CHECK(!tsl_strategy_equal(&x, &z), "ckpt differs");
    CHECK(!tsl_strategy_equal(&x, &w), "order differs");
    CHECK(tsl_strategy_equal(&one, &one) && !tsl_strategy_equal(&one, &onec), "single");
}

/* ---- format / parse ---- */
static void test_text(void)
{
    const char *good[] = {"single",    "single+ckpt",       "tp2-dp4",
                          "sdp8+ckpt", "tp2-sdp2-dp2+ckpt", "dp3-tp5",
                          "tp1024",    "sdp65536-dp65535"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        tsl_strategy_t s = S(good[i]);
        char buf[64];
        size_t n = tsl_strategy_format(&s, buf, sizeof(buf));
        CHECK(strcmp(buf, good[i]) == 0 && n == strlen(good[i]), "round-trip \"%s\" -> \"%s\"",
              good[i], buf);
    }
    tsl_strategy_t s = S("tp2-sdp2-dp2+ckpt");
    CHECK(s.n_levels == 3 && s.dim[0] == TSL_DIM_TP && s.dim[1] == TSL_DIM_SDP &&
              s.dim[2] == TSL_DIM_DP && s.degree[0] == 2 && s.degree[1] == 2 && s.degree[2] == 2 &&
              s.ckpt,
          "parsed fields, innermost first");

    /* truncation behaves like snprintf */
    char small[5];
    size_t n = tsl_strategy_format(&s, small, sizeof(small));
    CHECK(n == strlen("tp2-sdp2-dp2+ckpt") && strcmp(small, "tp2-") == 0, "truncated: \"%s\" %zu",
          small, n);
    CHECK(tsl_strategy_format(&s, NULL, 0) == n, "cap 0 only measures");

    /* every enumerated strategy of many groups round-trips */
    tsl_strategy_opts_t all = tsl_strategy_opts_default();
    all.takeaway3 = false;
    static tsl_strategy_t buf[TSL_STRATEGY_MAX];
    int checked = 0, bad = 0;
    for (uint32_t g = 1; g <= 128; g++) {
        int cnt = tsl_strategy_enumerate(g, &all, buf, NULL, TSL_STRATEGY_MAX, NULL);
        for (int i = 0; i < cnt; i++, checked++) {
            char t[64];
            tsl_strategy_t back;
            tsl_strategy_format(&buf[i], t, sizeof(t));
            if (tsl_strategy_parse(t, &back, NULL) != 0 || !tsl_strategy_equal(&back, &buf[i]) ||
                memcmp(&back, &buf[i], sizeof(back)) != 0)
                bad++;
        }
    }
    CHECK(bad == 0, "%d of %d enumerated strategies fail the round-trip", bad, checked);
    printf("format/parse round-trip on %d strategies\n", checked);

    /* errors name the bad token */
    struct {
        const char *text, *needle;
    } bad_cases[] = {
        {"", "empty"},
        {"tp2-xx4", "\"xx4\""},
        {"tp2-dp1", "\"dp1\""},
        {"tp2-tp2", "twice"},
        {"dp2-tp2-sdp2-dp2", "at most"},
        {"tp2+ckp", "\"+ckp\""},
        {"tp2+ckpt+ckpt", "\"+ckpt+ckpt\""},
        {"tp", "\"tp\""},
        {"tp02", "\"tp02\""},
        {"tp2--dp2", "empty token"},
        {"tp2-", "empty token"},
        {"-tp2", "empty token"},
        {"TP2", "\"TP2\""},
        {"tp2x", "\"tp2x\""},
        {"tp99999999999", "too large"},
        {"sdp65536-dp65536", "overflows"},
        {"singles", "\"singles\""},
        {"+ckpt", "empty"},
        /* a control byte, a quote, a non-ASCII byte: refused before any token, shown
         * escaped (a document's strategy echoed raw put its newline in the message) */
        {"tp2\n-dp2", "strategy \"tp2\\n-dp2\": not a strategy"},
        {"\x1b[31mtp2", "strategy \"\\x1b[31mtp2\": not a strategy"},
        {"tp2\"", "strategy \"tp2\\\"\": not a strategy"},
        {"tp2-dp\xc3\xa9"
         "2",
         "not a strategy"},
        {"tp2 ", "not a strategy"},
    };
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
        tsl_err_t err = {0};
        tsl_strategy_t out;
        memset(&out, 0x5a, sizeof(out));
        int rc = tsl_strategy_parse(bad_cases[i].text, &out, &err);
        CHECK(rc == -1 && strstr(err.msg, bad_cases[i].needle) != NULL,
              "parse \"%s\": rc %d, message \"%s\" lacks %s", bad_cases[i].text, rc, err.msg,
              bad_cases[i].needle);
    }
    CHECK(tsl_strategy_parse("tp2-xx4", &s, NULL) == -1, "NULL err is fine");
}

/* ---- enumerate errors ---- */
static void test_errors(void)
{
    tsl_strategy_t out[8];
    uint32_t layout[8];
    tsl_err_t err = {0};
    CHECK(tsl_strategy_enumerate(0, NULL, out, layout, 8, &err) == -1 &&
              strstr(err.msg, "group_size") != NULL,
          "group 0: %s", err.msg);
    CHECK(tsl_strategy_enumerate(8, NULL, out, layout, 8, &err) == -1 &&
              strstr(err.msg, "cap") != NULL && strstr(err.msg, "22") != NULL,
          "cap 8 for 22 strategies: %s", err.msg);
    CHECK(tsl_strategy_enumerate(2, NULL, out, layout, 6, &err) == 6, "G=2 fits exactly");
    CHECK(tsl_strategy_enumerate(2, NULL, out, layout, 5, NULL) == -1, "NULL err is fine");
}

int main(void)
{
    test_counts_8();
    test_counts_other();
    test_opts();
    test_order_and_layout();
    test_degree_stride();
    test_same_layout();
    test_text();
    test_errors();

    /* the counts table, as the docs print it */
    tsl_strategy_opts_t all = tsl_strategy_opts_default(), def = tsl_strategy_opts_default(),
                        plain = tsl_strategy_opts_default();
    all.takeaway3 = false;
    plain.allow_ckpt = false;
    printf("PP  group  all+ckpt  takeaway3  no-ckpt\n");
    for (uint32_t pp = 8; pp >= 1; pp /= 2)
        printf("%2u  %5u  %8d  %9d  %7d\n", (unsigned)pp, (unsigned)(8 / pp),
               tsl_strategy_enumerate(8 / pp, &all, NULL, NULL, 0, NULL),
               tsl_strategy_enumerate(8 / pp, &def, NULL, NULL, 0, NULL),
               tsl_strategy_enumerate(8 / pp, &plain, NULL, NULL, 0, NULL));
    return CHECK_DONE();
}

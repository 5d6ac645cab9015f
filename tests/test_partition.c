/*
 * test_partition.c — time- and memory-balanced partitions, Algorithm 2's
 * adjustment and driver, and AMP's layer-assignment DP (planner/partition.h).
 *
 * The references here are independent of partition.c: stage figures by direct
 * sums, optima by enumerating every partition (L ≤ 10, P ≤ 4), and for larger
 * instances AMP's DP as the paper writes it (every cap, an O(P·L²) DP per cap).
 */
#include "check.h"

#include <stdint.h>
#include <string.h>
#include <time.h>

#include "model.h"
#include "partition.h"
#include "pipeline.h"

static uint64_t lcg_state = 0x9a27171023u;

static double lcg01(void)
{
    lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(lcg_state >> 11) / 9007199254740992.0;
}

static uint32_t lcg_below(uint32_t n)
{
    return (uint32_t)(lcg01() * n);
}

#define MAXL 256
#define MAXP 16

typedef struct inst {
    uint32_t L, P, m;
    double t[MAXL], y[MAXL], e[MAXL], v[MAXP];
    uint64_t o[MAXL], u[MAXL], E[MAXP];
    bool has_y, has_e, has_v, has_E;
    uint64_t budget;
    tsl_partition_in_t in;
} inst_t;

static void inst_wire(inst_t *s)
{
    memset(&s->in, 0, sizeof(s->in));
    s->in.n_layers = s->L;
    s->in.n_stages = s->P;
    s->in.n_micro = s->m;
    s->in.time_s = s->t;
    s->in.sync_s = s->has_y ? s->y : NULL;
    s->in.p2p_s = s->has_e ? s->e : NULL;
    s->in.speed = s->has_v ? s->v : NULL;
    s->in.ms_bytes = s->o;
    s->in.act_bytes = s->u;
    s->in.budget_bytes = s->budget;
    s->in.stage_budget_bytes = s->has_E ? s->E : NULL;
}

/* Random instance; integer-valued times one case in three (exact ties). */
static void inst_random(inst_t *s, uint32_t maxL, uint32_t maxP, bool extras)
{
    memset(s, 0, sizeof(*s));
    s->L = 1 + lcg_below(maxL);
    uint32_t pmax = s->L < maxP ? s->L : maxP;
    s->P = 1 + lcg_below(pmax);
    s->m = 1 + lcg_below(8);
    bool ints = lcg_below(3) == 0;
    for (uint32_t l = 0; l < s->L; l++) {
        s->t[l] = ints ? (double)lcg_below(5) : 0.1 + lcg01();
        s->y[l] = ints ? (double)lcg_below(2) : 0.3 * lcg01();
        s->e[l] = ints ? (double)lcg_below(2) : 0.2 * lcg01();
        s->o[l] = 1000 + lcg_below(4000);
        s->u[l] = lcg_below(3000);
    }
    if (extras) {
        s->has_y = lcg_below(2);
        s->has_e = lcg_below(2);
        s->has_v = lcg_below(2);
    }
    for (uint32_t i = 0; i < s->P; i++)
        s->v[i] = ints ? (lcg_below(2) ? 1.0 : 0.5) : 0.3 + 1.2 * lcg01();
    s->budget = TSL_PARTITION_NO_BUDGET;
    inst_wire(s);
}

/* Independent figures of a partition: direct sums. */
typedef struct ref {
    double a[MAXP], c[MAXP];
    uint64_t M[MAXP];
    double max_a, sum_c, T;
    uint64_t max_M;
    bool fits;
} ref_t;

static void ref_eval(const inst_t *s, const uint32_t *first, ref_t *r)
{
    memset(r, 0, sizeof(*r));
    r->fits = true;
    for (uint32_t i = 0; i < s->P; i++) {
        double t = 0, y = 0;
        uint64_t o = 0, u = 0;
        for (uint32_t l = first[i]; l < first[i + 1]; l++) {
            t += s->t[l];
            y += s->has_y ? s->y[l] : 0;
            o += s->o[l];
            u += s->u[l];
        }
        double v = s->has_v ? s->v[i] : 1.0;
        double e = (first[i + 1] < s->L && s->has_e) ? s->e[first[i + 1] - 1] : 0;
        uint64_t w = s->P - i < s->m ? s->P - i : s->m;
        r->a[i] = t / v + e;
        r->c[i] = r->a[i] + y;
        r->M[i] = o + w * u;
        r->max_a = fmax(r->max_a, r->a[i]);
        r->max_M = r->M[i] > r->max_M ? r->M[i] : r->max_M;
        r->sum_c += r->c[i];
        uint64_t E = s->has_E ? s->E[i] : s->budget;
        if (r->M[i] > E)
            r->fits = false;
    }
    r->T = (s->m - 1) * r->max_a + r->sum_c;
}

static bool near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(1.0, fmax(fabs(a), fabs(b)));
}

/* Calls fn on every partition of s into P non-empty stages. */
typedef void (*visit_fn)(const inst_t *s, const uint32_t *first, void *ud);

static void enum_rec(const inst_t *s, uint32_t *first, uint32_t i, visit_fn fn, void *ud)
{
    if (i == s->P) {
        fn(s, first, ud);
        return;
    }
    /* stage i − 1 starts at first[i − 1]; choose first[i] */
    for (uint32_t b = first[i - 1] + 1; b + (s->P - i) <= s->L; b++) {
        first[i] = b;
        enum_rec(s, first, i + 1, fn, ud);
    }
}

static void enumerate(const inst_t *s, visit_fn fn, void *ud)
{
    uint32_t first[MAXP + 1];
    first[0] = 0;
    first[s->P] = s->L;
    if (s->P == 1) {
        fn(s, first, ud);
        return;
    }
    enum_rec(s, first, 1, fn, ud);
}

typedef struct brute {
    int pass;             /* 0: primaries; 1: secondaries given the primaries */
    double min_max_a;     /* min max a */
    uint64_t min_max_M;   /* min max M */
    double min_max_a_fit; /* min max a among fitting (INF: none) */
    double min_T, min_T_fit;
    uint64_t sec_M_of_pt; /* min max M among max-a optimal */
    double sec_a_of_pm;   /* min max a among max-M optimal */
    int count;
} brute_t;

static void brute_visit(const inst_t *s, const uint32_t *first, void *ud)
{
    brute_t *b = ud;
    ref_t r;
    ref_eval(s, first, &r);
    if (b->pass == 0) {
        b->count++;
        b->min_max_a = fmin(b->min_max_a, r.max_a);
        b->min_max_M = r.max_M < b->min_max_M ? r.max_M : b->min_max_M;
        b->min_T = fmin(b->min_T, r.T);
        if (r.fits) {
            b->min_max_a_fit = fmin(b->min_max_a_fit, r.max_a);
            b->min_T_fit = fmin(b->min_T_fit, r.T);
        }
    } else {
        if (near(r.max_a, b->min_max_a) && r.max_M < b->sec_M_of_pt)
            b->sec_M_of_pt = r.max_M;
        if (r.max_M == b->min_max_M)
            b->sec_a_of_pm = fmin(b->sec_a_of_pm, r.max_a);
    }
}

static void brute(const inst_t *s, brute_t *b)
{
    memset(b, 0, sizeof(*b));
    b->min_max_a = b->min_T = b->min_T_fit = b->min_max_a_fit = INFINITY;
    b->min_max_M = UINT64_MAX;
    b->sec_M_of_pt = UINT64_MAX;
    b->sec_a_of_pm = INFINITY;
    enumerate(s, brute_visit, b);
    b->pass = 1;
    enumerate(s, brute_visit, b);
}

static bool valid_first(const inst_t *s, const uint32_t *first)
{
    if (first[0] != 0 || first[s->P] != s->L)
        return false;
    for (uint32_t i = 0; i < s->P; i++)
        if (first[i + 1] <= first[i])
            return false;
    return true;
}

static bool alpha_ok(double a, uint32_t P)
{
    return a >= -1e-15 && a <= 1.0 - 1.0 / P + 1e-12;
}

/* ---- p_t and p_m against brute force ---- */

typedef struct stats_check {
    int n, ok, alpha_ok;
} stats_check_t;

static void stats_visit(const inst_t *s, const uint32_t *first, void *ud)
{
    stats_check_t *sc = ud;
    tsl_partition_stats_t st;
    tsl_err_t err;
    ref_t r;
    ref_eval(s, first, &r);
    sc->n++;
    if (tsl_partition_stats(&s->in, first, &st, &err))
        return;
    bool ok = near(st.max_time_s, r.max_a) && st.max_mem_bytes == r.max_M &&
              near(st.pipeline_s, r.T) && st.fits == r.fits;
    for (uint32_t i = 0; i < s->P; i++)
        ok = ok && near(st.stage_time_s[i], r.a[i]) && near(st.stage_sync_s[i], r.c[i]) &&
             st.stage_mem_bytes[i] == r.M[i];
    sc->ok += ok;
    sc->alpha_ok += alpha_ok(st.alpha_t, s->P) && alpha_ok(st.alpha_m, s->P);
}

static void test_balanced_vs_brute(void)
{
    tsl_partition_ws_t *ws = tsl_partition_ws_new(10, 4);
    CHECK(ws != NULL, "workspace");
    int n = 0, pt_ok = 0, pt_sec = 0, pm_ok = 0, pm_sec = 0, fit_ok = 0, none_ok = 0, n_none = 0;
    stats_check_t sc = {0, 0, 0};
    for (int k = 0; k < 600; k++) {
        inst_t s;
        inst_random(&s, 10, 4, true);
        /* a budget inside the range of the partitions' max memory, or none */
        brute_t b;
        brute(&s, &b);
        if (k % 2) {
            s.budget = b.min_max_M + lcg_below((uint32_t)(b.min_max_M / 2 + 1));
            if (k % 7 == 0)
                s.budget = b.min_max_M > 1 ? b.min_max_M - 1 : 1; /* nothing fits */
            if (k % 5 == 0 && s.P > 1) {
                s.has_E = true; /* per-stage budgets */
                for (uint32_t i = 0; i < s.P; i++)
                    s.E[i] = s.budget / 2 + lcg_below((uint32_t)(s.budget + 1));
            }
            inst_wire(&s);
            brute(&s, &b);
        }
        n++;
        uint32_t first[MAXP + 1];
        tsl_partition_stats_t st;
        tsl_err_t err;
        int rc = tsl_partition_time_balanced(&s.in, ws, false, first, &st, &err);
        ref_t r;
        if (rc == 0 && valid_first(&s, first)) {
            ref_eval(&s, first, &r);
            pt_ok += near(r.max_a, b.min_max_a);
            pt_sec += r.max_M == b.sec_M_of_pt;
            if (!near(r.max_a, b.min_max_a))
                fprintf(stderr, "p_t: L=%u P=%u max %.17g, brute %.17g\n", s.L, s.P, r.max_a,
                        b.min_max_a);
        }
        rc = tsl_partition_memory_balanced(&s.in, ws, first, &st, &err);
        if (rc == 0 && valid_first(&s, first)) {
            ref_eval(&s, first, &r);
            pm_ok += r.max_M == b.min_max_M;
            pm_sec += near(r.max_a, b.sec_a_of_pm);
        }
        rc = tsl_partition_time_balanced(&s.in, ws, true, first, &st, &err);
        if (isinf(b.min_max_a_fit)) {
            n_none++;
            none_ok += rc == TSL_PARTITION_NONE_FITS;
            fit_ok += rc == TSL_PARTITION_NONE_FITS;
        } else if (rc == 0 && valid_first(&s, first)) {
            ref_eval(&s, first, &r);
            fit_ok += r.fits && near(r.max_a, b.min_max_a_fit);
        }
        enumerate(&s, stats_visit, &sc);
    }
    CHECK(pt_ok == n, "p_t = exhaustive min max stage time in %d/%d", pt_ok, n);
    CHECK(pt_sec == n, "p_t's tie-break = least max memory among them in %d/%d", pt_sec, n);
    CHECK(pm_ok == n, "p_m = exhaustive min max stage memory in %d/%d", pm_ok, n);
    CHECK(pm_sec == n, "p_m's tie-break = least max time among them in %d/%d", pm_sec, n);
    CHECK(fit_ok == n, "p_t within budget = exhaustive optimum over fitting partitions %d/%d",
          fit_ok, n);
    CHECK(n_none > 0 && none_ok == n_none, "none fits reported %d/%d", none_ok, n_none);
    CHECK(sc.ok == sc.n, "stats = direct sums on %d/%d partitions", sc.ok, sc.n);
    CHECK(sc.alpha_ok == sc.n, "alpha_t, alpha_m in [0, 1 - 1/P] on %d/%d partitions", sc.alpha_ok,
          sc.n);
    printf("p_t, p_m: exhaustive optimum (and tie-break) on %d/%d random instances (L<=10, "
           "P<=4, speeds, p2p); within budget %d/%d (%d with nothing fitting); stats and "
           "alpha checked on %d partitions\n",
           pt_ok, n, fit_ok, n, n_none, sc.n);
    tsl_partition_ws_free(ws);
}

/* ---- the bisection's cap: exact, in few sweeps ---- */

typedef struct exact_min {
    double max_a;   /* least max a_i over the partitions, tsl_partition_stats' figures */
    uint64_t max_M; /* least max M_i */
} exact_min_t;

static void exact_visit(const inst_t *s, const uint32_t *first, void *ud)
{
    exact_min_t *x = ud;
    tsl_partition_stats_t st;
    tsl_err_t err;
    if (tsl_partition_stats(&s->in, first, &st, &err))
        return;
    x->max_a = st.max_time_s < x->max_a ? st.max_time_s : x->max_a;
    x->max_M = st.max_mem_bytes < x->max_M ? st.max_mem_bytes : x->max_M;
}

/* C₀ (tsl_partition_amp's min_max_time_s, partition.c min_time_cap) and p_m's max
 * memory are the exhaustive least max a_i and M_i to the bit (tsl_partition_stats
 * sums as the sweeps do), and the bracket closes from both sides (the partition a
 * sweep found, the next figure a refused stage has): C₀ in a handful of sweeps where
 * the bisection over every double's bit pattern took about 64. */
static void test_bisect_exact(void)
{
    tsl_partition_ws_t *ws = tsl_partition_ws_new(10, 4);
    CHECK(ws != NULL, "workspace");
    int n = 0, a_ok = 0, m_ok = 0;
    uint32_t most = 0;
    for (int k = 0; k < 400; k++) {
        inst_t s;
        inst_random(&s, 10, 4, true);
        exact_min_t x = {INFINITY, UINT64_MAX};
        enumerate(&s, exact_visit, &x);
        tsl_partition_amp_t a;
        tsl_partition_stats_t st;
        uint32_t first[MAXP + 1];
        tsl_err_t err;
        if (tsl_partition_amp(&s.in, ws, false, &a, &err) != 0 ||
            tsl_partition_memory_balanced(&s.in, ws, first, &st, &err) != 0)
            continue;
        n++;
        a_ok += a.min_max_time_s == x.max_a;
        m_ok += st.max_mem_bytes == x.max_M;
        most = a.bisect_steps > most ? a.bisect_steps : most;
    }
    CHECK(n == 400 && a_ok == n, "C0 = the exhaustive least max stage time, bit for bit, %d/%d",
          a_ok, n);
    CHECK(m_ok == n, "p_m = the exhaustive least max stage memory %d/%d", m_ok, n);
    CHECK(most <= 24, "C0 in at most %u feasibility sweeps (the bisection over bit patterns: ~64)",
          most);
    printf("C0 and p_m's memory exact on %d random instances, C0 in at most %u sweeps\n", n, most);
    tsl_partition_ws_free(ws);
}

/* ---- AMP's DP against brute force ---- */

static void test_amp_vs_brute(void)
{
    tsl_partition_ws_t *ws = tsl_partition_ws_new(10, 4);
    int n = 0, ok = 0, ok_fit = 0, consistent = 0;
    for (int k = 0; k < 800; k++) {
        inst_t s;
        inst_random(&s, 10, 4, true);
        if (k % 3 == 0) { /* heterogeneous speeds and p2p for sure */
            s.has_v = s.has_e = true;
            inst_wire(&s);
        }
        brute_t b;
        brute(&s, &b);
        s.budget = b.min_max_M + lcg_below((uint32_t)(b.min_max_M / 3 + 1));
        if (k % 9 == 0)
            s.budget = b.min_max_M - 1;
        inst_wire(&s);
        brute(&s, &b);
        n++;
        tsl_partition_amp_t a;
        tsl_err_t err;
        int rc = tsl_partition_amp(&s.in, ws, false, &a, &err);
        ref_t r;
        if (rc == 0 && valid_first(&s, a.first)) {
            ref_eval(&s, a.first, &r);
            ok += near(r.T, b.min_T);
            consistent += near(r.T, a.stats.pipeline_s);
            if (!near(r.T, b.min_T))
                fprintf(stderr, "amp: L=%u P=%u m=%u T %.17g, brute %.17g\n", s.L, s.P, s.m, r.T,
                        b.min_T);
        }
        rc = tsl_partition_amp(&s.in, ws, true, &a, &err);
        if (isinf(b.min_T_fit)) {
            ok_fit += rc == TSL_PARTITION_NONE_FITS;
        } else if (rc == 0 && valid_first(&s, a.first)) {
            ref_eval(&s, a.first, &r);
            ok_fit += r.fits && near(r.T, b.min_T_fit);
        }
    }
    CHECK(ok == n, "AMP DP = exhaustive min of Eq. 9 in %d/%d", ok, n);
    CHECK(consistent == n, "AMP DP reports its partition's T in %d/%d", consistent, n);
    CHECK(ok_fit == n, "AMP DP within budget = exhaustive optimum in %d/%d", ok_fit, n);
    printf("AMP DP: exhaustive optimum on %d/%d random instances (speeds, p2p, sync), within "
           "budget %d/%d\n",
           ok, n, ok_fit, n);
    tsl_partition_ws_free(ws);
}

/* AMP's DP as the paper writes it: every distinct stage time is a cap C; per cap
 * an O(P·L²) DP of the least Σ c with every a_i ≤ C; the answer is the least
 * (m − 1)·C + G(C). Independent of partition.c; for instances brute force cannot
 * enumerate. */
static double amp_reference(const inst_t *s, double *caps, double *G, double *A, double *Cc)
{
    uint32_t L = s->L, P = s->P, n = 0;
#define IDX(i, x, y) (((size_t)(i) * (L + 1) + (x)) * (L + 1) + (y))
    for (uint32_t i = 0; i < P; i++)
        for (uint32_t x = 0; x < L; x++)
            for (uint32_t y = x + 1; y <= L; y++) {
                double t = 0, yy = 0;
                for (uint32_t l = x; l < y; l++) {
                    t += s->t[l];
                    yy += s->has_y ? s->y[l] : 0;
                }
                double v = s->has_v ? s->v[i] : 1.0;
                A[IDX(i, x, y)] = t / v + ((y < L && s->has_e) ? s->e[y - 1] : 0);
                Cc[IDX(i, x, y)] = A[IDX(i, x, y)] + yy;
                caps[n++] = A[IDX(i, x, y)];
            }
    double best = INFINITY;
    for (uint32_t k = 0; k < n; k++) {
        double C = caps[k] * (1 + 1e-12);
        /* G[i][y]: least sum of c over stages 0..i ending at y with every a <= C */
        for (uint32_t i = 0; i < P; i++)
            for (uint32_t y = 0; y <= L; y++) {
                double g = INFINITY;
                for (uint32_t x = i; x < y; x++) {
                    if (i == 0 && x != 0)
                        break;
                    double before = i ? G[(i - 1) * (L + 1) + x] : 0;
                    if (isfinite(before) && A[IDX(i, x, y)] <= C)
                        g = fmin(g, before + Cc[IDX(i, x, y)]);
                }
                G[i * (L + 1) + y] = g;
            }
        double g = G[(P - 1) * (L + 1) + L];
        if (isfinite(g))
            best = fmin(best, (s->m - 1) * caps[k] + g);
    }
#undef IDX
    return best;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_amp_vs_paper_dp(void)
{
    tsl_partition_ws_t *ws = tsl_partition_ws_new(40, 8);
    static double caps[8 * 41 * 41], G[8 * 41], A[8 * 41 * 41], Cc[8 * 41 * 41];
    int n = 0, ok = 0;
    double t_ref = 0, t_ours = 0;
    for (int k = 0; k < 12; k++) {
        inst_t s;
        inst_random(&s, 40, 8, true);
        s.L = 24 + lcg_below(17);
        s.P = 2 + lcg_below(7);
        s.m = 2 + lcg_below(15);
        s.has_v = s.has_e = s.has_y = true;
        for (uint32_t l = 0; l < s.L; l++) {
            s.t[l] = 0.1 + lcg01();
            s.e[l] = 0.3 * lcg01();
            s.y[l] = 0.2 * lcg01();
        }
        for (uint32_t i = 0; i < s.P; i++)
            s.v[i] = 0.4 + lcg01();
        inst_wire(&s);
        double t0 = now_s();
        double want = amp_reference(&s, caps, G, A, Cc);
        double t1 = now_s();
        tsl_partition_amp_t a;
        tsl_err_t err;
        int rc = tsl_partition_amp(&s.in, ws, false, &a, &err);
        double t2 = now_s();
        t_ref += t1 - t0;
        t_ours += t2 - t1;
        n++;
        ref_t r;
        if (rc == 0 && valid_first(&s, a.first)) {
            ref_eval(&s, a.first, &r);
            ok += near(r.T, want);
            if (!near(r.T, want))
                fprintf(stderr, "amp vs paper DP: L=%u P=%u %.17g vs %.17g\n", s.L, s.P, r.T, want);
        }
    }
    CHECK(ok == n, "AMP DP = the paper's every-cap DP on %d/%d instances (L 24..40)", ok, n);
    printf("AMP DP vs the paper's every-cap DP (L 24..40, P 2..8, speeds, p2p, sync): equal on "
           "%d/%d; %.1f ms vs %.1f ms in all\n",
           ok, n, t_ours * 1e3, t_ref * 1e3);
    tsl_partition_ws_free(ws);
}

/* ---- Algorithm 2's step ---- */

static void test_adjust(void)
{
    tsl_partition_ws_t *ws = tsl_partition_ws_new(12, 5);
    int n = 0, moved = 0, limits_ok = 0, stuck_ok = 0, n_stuck = 0, shape_ok = 0, alpha_up = 0,
        n_alpha = 0;
    for (int k = 0; k < 1500; k++) {
        inst_t s;
        inst_random(&s, 12, 5, k % 2 == 0);
        if (s.P < 2)
            continue;
        /* a random partition */
        uint32_t first[MAXP + 1], next[MAXP + 1];
        first[0] = 0;
        for (uint32_t i = 1; i < s.P; i++)
            first[i] = first[i - 1] + 1 + lcg_below(s.L - first[i - 1] - (s.P - i));
        first[s.P] = s.L;
        ref_t r, rn;
        ref_eval(&s, first, &r);
        s.budget = r.max_M + lcg_below((uint32_t)(r.max_M / 4 + 1));
        inst_wire(&s);
        uint32_t pt[MAXP + 1];
        tsl_partition_stats_t pts, cur;
        tsl_err_t err;
        if (tsl_partition_time_balanced(&s.in, ws, false, pt, &pts, &err) ||
            tsl_partition_stats(&s.in, first, &cur, &err))
            continue;
        uint64_t pt_max = pts.max_mem_bytes > r.max_M ? pts.max_mem_bytes : r.max_M;
        if (k % 3 == 0)
            pt_max = pts.max_mem_bytes;
        tsl_partition_step_t st;
        n++;
        if (tsl_partition_adjust(&s.in, first, cur.max_time_s, pt_max, next, &st, &err))
            continue;
        /* the slowest stage, by the independent figures (lowest index on ties) */
        uint32_t slow = 0;
        for (uint32_t i = 1; i < s.P; i++)
            if (r.a[i] > r.a[slow])
                slow = i;
        if (st.moved) {
            moved++;
            ref_eval(&s, next, &rn);
            /* exactly one boundary of the slowest stage moved by one layer */
            int diffs = 0;
            bool shape = valid_first(&s, next) && st.from_stage == slow;
            for (uint32_t i = 0; i <= s.P; i++)
                if (next[i] != first[i]) {
                    diffs++;
                    shape = shape && ((i == slow && next[i] == first[i] + 1) ||
                                      (i == slow + 1 && next[i] == first[i] - 1));
                }
            shape_ok += shape && diffs == 1;
            bool lim = true;
            for (uint32_t i = 0; i < s.P; i++) {
                bool changed = i == st.from_stage || i == st.to_stage;
                lim = lim && (changed ? rn.a[i] < r.max_a : rn.a[i] <= r.max_a * (1 + 1e-12));
            }
            lim = lim && rn.fits && rn.max_M <= pt_max;
            limits_ok += lim;
            if (!s.has_v && !s.has_e) { /* Σ a constant: α_t cannot fall (App. B) */
                tsl_partition_stats_t ns;
                tsl_partition_stats(&s.in, next, &ns, &err);
                n_alpha++;
                alpha_up += ns.alpha_t >= cur.alpha_t - 1e-12;
            }
        } else {
            /* both moves must really break a limit */
            n_stuck++;
            bool really = memcmp(next, first, (s.P + 1) * sizeof(uint32_t)) == 0;
            for (int d = 0; d < 2 && really; d++) {
                uint32_t c[MAXP + 1];
                memcpy(c, first, sizeof(c));
                uint32_t nb;
                if (first[slow + 1] - first[slow] < 2)
                    break;
                if (d == 0) {
                    if (slow == 0)
                        continue;
                    c[slow]++;
                    nb = slow - 1;
                } else {
                    if (slow == s.P - 1)
                        continue;
                    c[slow + 1]--;
                    nb = slow + 1;
                }
                ref_eval(&s, c, &rn);
                /* limit 1 concerns the two changed stages (the others keep their time) */
                bool pass =
                    rn.fits && rn.max_M <= pt_max && rn.a[slow] < r.max_a && rn.a[nb] < r.max_a;
                really = !pass;
            }
            stuck_ok += really && st.why[0] != 0;
        }
    }
    CHECK(shape_ok == moved, "a move takes one boundary layer of the slowest stage: %d/%d",
          shape_ok, moved);
    CHECK(limits_ok == moved, "every move keeps limits 1-3: %d/%d", limits_ok, moved);
    CHECK(stuck_ok == n_stuck, "no move only when both neighbours break a limit: %d/%d", stuck_ok,
          n_stuck);
    CHECK(moved > 50 && n_stuck > 50, "both outcomes exercised (%d moved, %d stuck)", moved,
          n_stuck);
    CHECK(alpha_up == n_alpha && n_alpha > 0, "alpha_t never falls (constant sum): %d/%d", alpha_up,
          n_alpha);
    printf("adjust: %d steps on random partitions, %d moved (limits 1-3 hold), %d stuck "
           "(both neighbours really blocked)\n",
           n, moved, n_stuck);

    /* hand-made: 6 equal layers, p = [1, 1, 4]: stage 2 gives its first layer to stage 1 */
    inst_t s;
    memset(&s, 0, sizeof(s));
    s.L = 6;
    s.P = 3;
    s.m = 4;
    for (uint32_t l = 0; l < 6; l++) {
        s.t[l] = 1;
        s.o[l] = 10;
        s.u[l] = 1;
    }
    s.budget = TSL_PARTITION_NO_BUDGET;
    inst_wire(&s);
    uint32_t p[4] = {0, 1, 2, 6}, q[4];
    tsl_partition_step_t st;
    tsl_err_t err;
    int rc = tsl_partition_adjust(&s.in, p, 4.0, UINT64_MAX, q, &st, &err);
    CHECK(rc == 0 && st.moved && st.from_stage == 2 && st.to_stage == 1 && st.layer == 2 &&
              q[2] == 3 && q[3] == 6,
          "[1,1,4] -> [1,2,3] (moved %d, %u->%u, layer %u)", st.moved, st.from_stage, st.to_stage,
          st.layer);
    /* the same under a budget that stage 1 cannot take a second layer in: stage 1
     * holds min(3 − 1, 4) = 2 micro-batches: 2 layers = 20 + 2·2 = 24 bytes */
    s.budget = 23;
    s.in.budget_bytes = 23;
    rc = tsl_partition_adjust(&s.in, p, 4.0, UINT64_MAX, q, &st, &err);
    CHECK(rc == 0 && !st.moved && strstr(st.why, "limit 2") && memcmp(p, q, sizeof(p)) == 0,
          "budget blocks the move: %s", st.why);
    s.in.budget_bytes = TSL_PARTITION_NO_BUDGET;
    rc = tsl_partition_adjust(&s.in, p, 4.0, 23, q, &st, &err);
    CHECK(rc == 0 && !st.moved && strstr(st.why, "limit 3"), "p_t's memory blocks it: %s", st.why);
    /* [1, 2, 3]: stage 1 would reach C_max = 3 exactly; limit 1 wants it below,
     * or the next step could hand the layer back */
    uint32_t p3[4] = {0, 1, 3, 6};
    rc = tsl_partition_adjust(&s.in, p3, 3.0, UINT64_MAX, q, &st, &err);
    CHECK(rc == 0 && !st.moved && strstr(st.why, "limit 1"), "a tie at C_max is no move (%s)",
          st.why);
    /* both neighbours pass: the lower max wins — [2 | 1 1 1.5 | 0.5]: giving 1.5
     * to stage 2 leaves max 2, giving 1 to stage 0 leaves max 3 */
    inst_t h = s;
    h.L = 5;
    h.budget = TSL_PARTITION_NO_BUDGET;
    double ht[5] = {2, 1, 1, 1.5, 0.5};
    memcpy(h.t, ht, sizeof(ht));
    inst_wire(&h);
    uint32_t p4[4] = {0, 1, 4, 5};
    rc = tsl_partition_adjust(&h.in, p4, 3.5, UINT64_MAX, q, &st, &err);
    CHECK(rc == 0 && st.moved && st.to_stage == 2 && st.layer == 3 && q[2] == 3 &&
              st.max_time_s == 2.0,
          "prefers the neighbour that leaves the lower max (to %u, layer %u)", st.to_stage,
          st.layer);
    /* equal max time [1 | 1 1 1 | 1]: the lower max memory — stage 0 holds 3
     * micro-batches, stage 2 one, so giving the layer to stage 2 costs less */
    double he[5] = {1, 1, 1, 1, 1};
    memcpy(h.t, he, sizeof(he));
    rc = tsl_partition_adjust(&h.in, p4, 3.0, UINT64_MAX, q, &st, &err);
    CHECK(rc == 0 && st.moved && st.to_stage == 2 && q[2] == 3,
          "equal time: the lower memory (to %u)", st.to_stage);
    /* equal time and memory (no activations): towards the shallower stage */
    memset(h.u, 0, sizeof(h.u));
    rc = tsl_partition_adjust(&h.in, p4, 3.0, UINT64_MAX, q, &st, &err);
    CHECK(rc == 0 && st.moved && st.to_stage == 0 && q[1] == 2, "full tie: stage k - 1 (to %u)",
          st.to_stage);
    /* [3, 3] with C_max 3: the receiving stage would reach 4 > 3 */
    uint32_t p2[4] = {0, 2, 4, 6};
    rc = tsl_partition_adjust(&s.in, p2, 2.0, UINT64_MAX, q, &st, &err);
    CHECK(rc == 0 && !st.moved && strstr(st.why, "limit 1"), "balanced: no move (%s)", st.why);
    tsl_partition_ws_free(ws);
}

/* ---- the driver on random instances ---- */

static void test_bi_objective_random(void)
{
    tsl_partition_ws_t *ws = tsl_partition_ws_new(MAXL, MAXP);
    int n = 0, ok = 0, c7 = 0, n_ord = 0, found = 0;
    for (int k = 0; k < 400; k++) {
        inst_t s;
        inst_random(&s, 60, 8, false);
        uint32_t pm[MAXP + 1], pt[MAXP + 1];
        tsl_partition_stats_t pms, pts;
        tsl_err_t err;
        tsl_partition_memory_balanced(&s.in, ws, pm, &pms, &err);
        tsl_partition_time_balanced(&s.in, ws, false, pt, &pts, &err);
        uint64_t lo = pms.max_mem_bytes, hi = pts.max_mem_bytes;
        s.budget = lo + (uint64_t)(lcg01() * 1.2 * (double)(hi - lo + 1));
        inst_wire(&s);
        tsl_partition_stats(&s.in, pm, &pms, &err);
        tsl_partition_stats(&s.in, pt, &pts, &err);
        tsl_partition_biobj_t b;
        if (tsl_partition_bi_objective(&s.in, ws, 0, k % 2, &b, &err))
            continue;
        n++;
        found += b.found;
        bool good = b.found && b.stats.fits;
        if (pms.fits)
            good = good && b.stats.pipeline_s <= pms.pipeline_s;
        if (pts.fits)
            good = good && b.stats.pipeline_s <= pts.pipeline_s;
        good = good && alpha_ok(b.stats.alpha_t, s.P) && alpha_ok(b.stats.alpha_m, s.P);
        if (k % 2 && b.fit_found &&
            (!b.endpoints_ordered || tsl_partition_condition7(&b.fit, &pms, &pts)))
            good = good && b.stats.pipeline_s <= b.fit.pipeline_s;
        ok += good;
        if (b.endpoints_ordered) {
            n_ord++;
            c7 += b.cond7 && tsl_partition_condition7(&b.stats, &pms, &pts);
        }
    }
    CHECK(ok == n && found == n, "bi-objective: fits, no slower than fitting p_m/p_t: %d/%d", ok,
          n);
    CHECK(c7 == n_ord, "chosen satisfies Eq. 7 whenever p_m, p_t are ordered: %d/%d", c7, n_ord);
    printf("bi-objective on %d random instances: never slower than a fitting p_m or p_t; Eq. 7 "
           "held on the %d with ordered endpoints\n",
           n, n_ord);
    tsl_partition_ws_free(ws);
}

/* ---- the paper's models ---- */

typedef struct model_in {
    uint32_t L;
    double t[MAXL];
    uint64_t o[MAXL], u[MAXL];
    tsl_partition_in_t in;
} model_in_t;

/* time ∝ 3·fwd FLOPs (fwd + bwd) of a micro-batch of 8 at 100 TFLOP/s; model
 * states 16 bytes per parameter sharded 8 ways; activations of 8 samples. */
static int model_in(const char *name, model_in_t *mi)
{
    tsl_model_t m;
    tsl_err_t err;
    memset(mi, 0, sizeof(*mi));
    if (tsl_model_preset(name, &m, &err)) {
        fprintf(stderr, "%s: %s\n", name, err.msg);
        return -1;
    }
    mi->L = m.n_layers;
    for (uint32_t l = 0; l < m.n_layers && l < MAXL; l++) {
        const tsl_layer_t *ly = &m.layers[l];
        mi->t[l] = 3.0 * ly->fwd_flops * 8 / 100e12;
        mi->o[l] = 16 * ly->params / 8;
        mi->u[l] = (ly->act_repl_bytes + ly->act_shard_bytes) * 8;
    }
    tsl_model_free(&m);
    mi->in.n_layers = mi->L;
    mi->in.n_stages = 4;
    mi->in.n_micro = 8;
    mi->in.time_s = mi->t;
    mi->in.ms_bytes = mi->o;
    mi->in.act_bytes = mi->u;
    mi->in.budget_bytes = TSL_PARTITION_NO_BUDGET;
    return 0;
}

static void print_part(const char *what, const uint32_t *first, const tsl_partition_stats_t *s)
{
    printf("    %-8s [", what);
    for (uint32_t i = 0; i < s->n_stages; i++)
        printf("%s%u", i ? "," : "", first[i + 1] - first[i]);
    printf("]  T %.4f s  max mem %.2f GiB  alpha_t %.3f  alpha_m %.3f%s\n", s->pipeline_s,
           s->max_mem_bytes / 1073741824.0, s->alpha_t, s->alpha_m, s->fits ? "" : "  (OOM)");
}

static void test_models(void)
{
    const char *names[] = {"T5-512/4-48", "BERT-Huge-48"};
    tsl_partition_ws_t *ws = tsl_partition_ws_new(TSL_MODEL_MAX_LAYERS, 8);
    for (int k = 0; k < 2; k++) {
        static model_in_t mi;
        if (model_in(names[k], &mi)) {
            CHECK(0, "preset %s", names[k]);
            continue;
        }
        tsl_err_t err;
        uint32_t pm[5], pt[5];
        tsl_partition_stats_t pms, pts;
        int rc = tsl_partition_memory_balanced(&mi.in, ws, pm, &pms, &err) |
                 tsl_partition_time_balanced(&mi.in, ws, false, pt, &pts, &err);
        CHECK(rc == 0 && pms.max_mem_bytes < pts.max_mem_bytes && pts.max_time_s < pms.max_time_s,
              "%s: p_m holds less memory, p_t is faster", names[k]);
        uint64_t budgets[2] = {pms.max_mem_bytes + (pts.max_mem_bytes - pms.max_mem_bytes) / 2,
                               pts.max_mem_bytes};
        printf("%s, P = 4, m = 8 (%u layers):\n", names[k], mi.L);
        for (int bi = 0; bi < 2; bi++) {
            mi.in.budget_bytes = budgets[bi];
            tsl_partition_stats_t a, b;
            tsl_partition_stats(&mi.in, pm, &a, &err);
            tsl_partition_stats(&mi.in, pt, &b, &err);
            CHECK(a.fits && b.fits == (bi == 1), "%s budget %d: p_m fits, p_t %s", names[k], bi,
                  bi ? "fits" : "does not");
            tsl_partition_biobj_t r;
            rc = tsl_partition_bi_objective(&mi.in, ws, 0, false, &r, &err);
            CHECK(rc == 0 && r.found, "%s: bi-objective found a partition: %s", names[k],
                  rc ? err.msg : "");
            if (rc || !r.found)
                continue;
            /* throughput = B / T */
            CHECK(r.stats.fits && r.stats.pipeline_s <= a.pipeline_s &&
                      (!b.fits || r.stats.pipeline_s <= b.pipeline_s),
                  "%s budget %d: T %.6f vs p_m %.6f, p_t %.6f%s", names[k], bi, r.stats.pipeline_s,
                  a.pipeline_s, b.pipeline_s, b.fits ? "" : " (OOM)");
            CHECK(r.endpoints_ordered && r.cond7 && tsl_partition_condition7(&r.stats, &a, &b),
                  "%s budget %d: chosen satisfies Eq. 7", names[k], bi);
            CHECK(alpha_ok(r.stats.alpha_t, 4) && alpha_ok(r.stats.alpha_m, 4) &&
                      alpha_ok(a.alpha_t, 4) && alpha_ok(a.alpha_m, 4) && alpha_ok(b.alpha_t, 4) &&
                      alpha_ok(b.alpha_m, 4),
                  "%s: alpha in [0, 0.75]", names[k]);
            /* replay the queue: α_t rises, α stays in range, limits hold */
            uint32_t p[5];
            memcpy(p, pm, sizeof(p));
            tsl_partition_stats_t ps = a;
            int steps = 0, mono = 1;
            for (;;) {
                tsl_partition_step_t st;
                tsl_partition_adjust(&mi.in, p, ps.max_time_s, pts.max_mem_bytes, p, &st, &err);
                if (!st.moved)
                    break;
                tsl_partition_stats_t ns;
                tsl_partition_stats(&mi.in, p, &ns, &err);
                mono &= ns.alpha_t >= ps.alpha_t - 1e-12 && alpha_ok(ns.alpha_t, 4) &&
                        alpha_ok(ns.alpha_m, 4) && ns.fits && ns.max_mem_bytes <= pts.max_mem_bytes;
                ps = ns;
                steps++;
            }
            CHECK(steps == (int)r.steps && mono, "%s: queue of %d steps, alpha_t non-decreasing",
                  names[k], steps);
            printf("  budget %.2f GiB: %u adjustments, chosen from %s (%s)\n",
                   budgets[bi] / 1073741824.0, r.steps,
                   r.source == TSL_PARTITION_FROM_PM      ? "p_m"
                   : r.source == TSL_PARTITION_FROM_QUEUE ? "the queue"
                                                          : "p_t",
                   r.stop_why);
            print_part("p_m", pm, &a);
            print_part("p_t", pt, &b);
            print_part("chosen", r.first, &r.stats);
            printf("    throughput gain over p_m %.1f%%\n",
                   100.0 * (a.pipeline_s / r.stats.pipeline_s - 1));
            /* Tessel's driver: p_fit joins the candidates */
            tsl_partition_biobj_t rw;
            rc = tsl_partition_bi_objective(&mi.in, ws, 0, true, &rw, &err);
            CHECK(rc == 0 && rw.found && rw.cond7 && rw.stats.fits &&
                      rw.stats.pipeline_s <= r.stats.pipeline_s,
                  "%s budget %d: with p_fit no slower than the queue and Eq. 7 holds", names[k],
                  bi);
            if (rc == 0 && rw.found) {
                print_part("with_fit", rw.first, &rw.stats);
                printf("    throughput gain of with_fit over p_m %.1f%%\n",
                       100.0 * (a.pipeline_s / rw.stats.pipeline_s - 1));
            }
            /* for reference: the exact optima over the fitting partitions */
            uint32_t pf[5];
            tsl_partition_stats_t fs;
            tsl_partition_amp_t opt;
            int rf = tsl_partition_time_balanced(&mi.in, ws, true, pf, &fs, &err);
            int ro = tsl_partition_amp(&mi.in, ws, true, &opt, &err);
            CHECK(rf == 0 && ro == 0 && opt.stats.fits &&
                      opt.stats.pipeline_s <= r.stats.pipeline_s * (1 + 1e-12) &&
                      opt.stats.pipeline_s <= fs.pipeline_s * (1 + 1e-12),
                  "%s: the exact optimum within the budget bounds the heuristic", names[k]);
            if (rf == 0)
                print_part("p_t|fit", pf, &fs);
            if (ro == 0)
                print_part("amp|fit", opt.first, &opt.stats);
        }
    }
    tsl_partition_ws_free(ws);
}

/* ---- heterogeneous clusters ---- */

static void test_heterogeneous(void)
{
    tsl_partition_ws_t *ws = tsl_partition_ws_new(64, 8);
    inst_t s;
    memset(&s, 0, sizeof(s));
    s.L = 24;
    s.P = 4;
    s.m = 8;
    for (uint32_t l = 0; l < s.L; l++) {
        s.t[l] = 0.01;
        s.e[l] = 0.001;
        s.o[l] = 1 << 20;
        s.u[l] = 1 << 16;
    }
    s.has_v = s.has_e = true;
    s.v[0] = s.v[1] = 1.0; /* e.g. V100 stages */
    s.v[2] = s.v[3] = 0.5; /* T4 stages, half as fast */
    s.budget = TSL_PARTITION_NO_BUDGET;
    inst_wire(&s);
    tsl_partition_amp_t a;
    tsl_err_t err;
    int rc = tsl_partition_amp(&s.in, ws, false, &a, &err);
    uint32_t n[4] = {0};
    for (uint32_t i = 0; i < 4 && rc == 0; i++)
        n[i] = a.first[i + 1] - a.first[i];
    CHECK(rc == 0 && n[2] < n[0] && n[2] < n[1] && n[3] < n[0] && n[3] < n[1],
          "slower stages get fewer layers: [%u,%u,%u,%u]", n[0], n[1], n[2], n[3]);
    uint32_t uni[5] = {0, 6, 12, 18, 24};
    tsl_partition_stats_t us;
    tsl_partition_stats(&s.in, uni, &us, &err);
    CHECK(rc == 0 && a.stats.pipeline_s < us.pipeline_s, "beats uniform layers: %.4f vs %.4f",
          a.stats.pipeline_s, us.pipeline_s);
    printf("heterogeneous (speeds 1,1,0.5,0.5, 24 equal layers): AMP DP [%u,%u,%u,%u], T %.4f s "
           "vs uniform %.4f s\n",
           n[0], n[1], n[2], n[3], a.stats.pipeline_s, us.pipeline_s);

    /* AMP 4.3's heterogeneous model on homogeneous devices: non-uniform, faster */
    static model_in_t mi;
    if (model_in("TransGAN-Hetero", &mi) == 0) {
        mi.in.n_stages = 4;
        mi.in.n_micro = 16;
        rc = tsl_partition_amp(&mi.in, ws, false, &a, &err);
        uint32_t ufirst[5];
        for (uint32_t i = 0; i <= 4; i++)
            ufirst[i] = mi.L * i / 4;
        tsl_partition_stats(&mi.in, ufirst, &us, &err);
        bool nonuni = false;
        for (uint32_t i = 0; i < 4 && rc == 0; i++)
            nonuni |= a.first[i + 1] - a.first[i] != ufirst[i + 1] - ufirst[i];
        CHECK(rc == 0 && nonuni && a.stats.pipeline_s < us.pipeline_s,
              "TransGAN-Hetero: non-uniform and faster than uniform (%.5f vs %.5f)",
              a.stats.pipeline_s, us.pipeline_s);
        printf("TransGAN-Hetero (%u layers), P = 4: AMP DP [%u,%u,%u,%u] T %.5f s vs uniform "
               "%.5f s\n",
               mi.L, a.first[1] - a.first[0], a.first[2] - a.first[1], a.first[3] - a.first[2],
               a.first[4] - a.first[3], a.stats.pipeline_s, us.pipeline_s);
    }
    tsl_partition_ws_free(ws);
}

/* ---- timing (printed, not asserted) ---- */

static void test_timing(void)
{
    static inst_t s;
    memset(&s, 0, sizeof(s));
    s.L = 200;
    s.P = 16;
    s.m = 32;
    s.has_v = s.has_e = s.has_y = true;
    for (uint32_t l = 0; l < s.L; l++) {
        s.t[l] = 0.01 * (0.5 + lcg01());
        s.e[l] = 0.002 * lcg01();
        s.y[l] = 0.001 * lcg01();
        s.o[l] = 1u << 24;
        s.u[l] = 1u << 20;
    }
    for (uint32_t i = 0; i < s.P; i++)
        s.v[i] = i % 4 == 3 ? 0.5 : 1.0;
    s.budget = TSL_PARTITION_NO_BUDGET;
    inst_wire(&s);
    tsl_partition_ws_t *ws = tsl_partition_ws_new(s.L, s.P);
    tsl_partition_amp_t a;
    tsl_err_t err;
    int reps = 20, rc = 0;
    double t0 = now_s();
    for (int r = 0; r < reps; r++)
        rc |= tsl_partition_amp(&s.in, ws, false, &a, &err);
    double t_amp = (now_s() - t0) / reps;
    uint32_t first[17];
    t0 = now_s();
    for (int r = 0; r < reps; r++)
        rc |= tsl_partition_time_balanced(&s.in, ws, false, first, NULL, &err);
    double t_pt = (now_s() - t0) / reps;
    tsl_partition_biobj_t b;
    t0 = now_s();
    for (int r = 0; r < reps; r++)
        rc |= tsl_partition_bi_objective(&s.in, ws, 0, false, &b, &err);
    double t_bi = (now_s() - t0) / reps;
    CHECK(rc == 0, "timing runs succeed");
    printf("timing, L = 200, P = 16, m = 32, speeds + p2p + sync: AMP DP %.3f ms (%u capped DPs, "
           "%u DPs, %u feasibility sweeps), p_t %.3f ms, bi-objective %.3f ms (%u steps)\n",
           t_amp * 1e3, a.caps_tried, a.dp_runs, a.bisect_steps, t_pt * 1e3, t_bi * 1e3, b.steps);
    tsl_partition_ws_free(ws);
}

/* ---- errors and determinism ---- */

static void test_errors(void)
{
    tsl_partition_ws_t *ws = tsl_partition_ws_new(8, 4);
    inst_t s;
    memset(&s, 0, sizeof(s));
    s.L = 5;
    s.P = 3;
    s.m = 4;
    for (uint32_t l = 0; l < 5; l++) {
        s.t[l] = 1;
        s.o[l] = 1;
    }
    s.budget = TSL_PARTITION_NO_BUDGET;
    inst_wire(&s);
    uint32_t first[8];
    tsl_err_t err;
    err.msg[0] = 0;
    s.in.n_stages = 6;
    CHECK(tsl_partition_time_balanced(&s.in, ws, false, first, NULL, &err) == -1 &&
              strstr(err.msg, "n_stages"),
          "more stages than layers: %s", err.msg);
    s.in.n_stages = 3;
    s.t[1] = -1;
    CHECK(tsl_partition_memory_balanced(&s.in, ws, first, NULL, &err) == -1 &&
              strstr(err.msg, "time_s[1]"),
          "negative time: %s", err.msg);
    s.t[1] = 1;
    double v[3] = {1, 0, 1};
    s.in.speed = v;
    tsl_partition_amp_t a;
    CHECK(tsl_partition_amp(&s.in, ws, false, &a, &err) == -1 && strstr(err.msg, "speed[1]"),
          "zero speed: %s", err.msg);
    s.in.speed = NULL;
    s.in.budget_bytes = 0;
    CHECK(tsl_partition_amp(&s.in, ws, true, &a, &err) == -1 && strstr(err.msg, "budget_bytes"),
          "zero budget: %s", err.msg);
    s.in.budget_bytes = TSL_PARTITION_NO_BUDGET;
    uint32_t bad[4] = {0, 2, 2, 5};
    tsl_partition_stats_t st;
    CHECK(tsl_partition_stats(&s.in, bad, &st, &err) == -1 && strstr(err.msg, "first[2]"),
          "empty stage: %s", err.msg);
    s.in.n_layers = 9;
    CHECK(tsl_partition_amp(&s.in, ws, false, &a, &err) == -1 && strstr(err.msg, "n_layers"),
          "beyond the workspace: %s", err.msg);
    CHECK(tsl_partition_ws_new(0, 4) == NULL && tsl_partition_ws_new(4, 65) == NULL,
          "workspace sizes checked");
    tsl_partition_ws_free(ws);

    /* determinism: the same answers, bit for bit, from a fresh workspace */
    inst_t r;
    inst_random(&r, 10, 4, true);
    r.has_v = r.has_e = r.has_y = true;
    inst_wire(&r);
    tsl_partition_ws_t *w1 = tsl_partition_ws_new(10, 4), *w2 = tsl_partition_ws_new(64, 16);
    tsl_partition_amp_t a1, a2;
    tsl_partition_biobj_t b1, b2;
    memset(&a1, 0, sizeof(a1));
    memset(&a2, 0xff, sizeof(a2));
    tsl_partition_amp(&r.in, w1, false, &a1, &err);
    tsl_partition_amp(&r.in, w2, false, &a2, &err);
    tsl_partition_bi_objective(&r.in, w1, 0, true, &b1, &err);
    tsl_partition_bi_objective(&r.in, w2, 0, true, &b2, &err);
    CHECK(memcmp(&a1, &a2, sizeof(a1)) == 0 && memcmp(&b1, &b2, sizeof(b1)) == 0,
          "deterministic across workspaces");
    tsl_partition_ws_free(w1);
    tsl_partition_ws_free(w2);
}

/* A V partition's largest rank load by direct sums over the parts the engine lays
 * out (pipeline.h tsl_pipeline_v_parts): rank s runs parts s and 2P − 1 − s, and
 * pays the p2p after each that feeds another rank. INFINITY where a stage has fewer
 * than 2 layers or the last stage starts past max_cut. */
static double v_ref_max(const inst_t *s, const uint32_t *first)
{
    uint32_t count[MAXP] = {0}, part[2 * MAXP + 1] = {0}, P = s->P;
    uint32_t cut = s->in.max_cut ? s->in.max_cut : s->L - 1;
    for (uint32_t i = 0; i < P; i++)
        count[i] = first[i + 1] - first[i];
    if (first[P - 1] > cut)
        return INFINITY;
    tsl_pipeline_v_parts(P, count, part);
    double most = 0;
    for (uint32_t r = 0; r < P; r++) {
        if (count[r] < 2)
            return INFINITY;
        uint32_t q[2] = {r, 2 * P - 1 - r};
        double t = 0, e = 0;
        for (int k = 0; k < 2; k++) {
            for (uint32_t l = part[q[k]]; l < part[q[k] + 1]; l++)
                t += s->t[l];
            bool own = q[k] == P - 1 || q[k] == 2 * P - 1; /* feeds itself, or the end */
            e += !own && s->has_e ? s->e[part[q[k] + 1] - 1] : 0;
        }
        most = fmax(most, t / (s->has_v ? s->v[r] : 1.0) + e);
    }
    return most;
}

static void v_visit(const inst_t *s, const uint32_t *first, void *ud)
{
    double *best = ud;
    *best = fmin(*best, v_ref_max(s, first));
}

/* tsl_partition_v is the least largest rank load over every partition (each rank's
 * two parts as the engine lays them), and reports its own partition's figure. */
static void test_v_vs_brute(void)
{
    int n = 0, ok = 0, none = 0;
    for (int k = 0; k < 800; k++) {
        inst_t s;
        inst_random(&s, 12, 4, true);
        if (k % 4 == 0 && s.L > 2 * s.P)
            s.in.max_cut = s.L - 2 - lcg_below(2);
        double want = INFINITY, got = -1;
        enumerate(&s, v_visit, &want);
        uint32_t first[MAXP + 1];
        tsl_err_t err = {0};
        int rc = tsl_partition_v(&s.in, first, &got, &err);
        n++;
        if (isinf(want)) {
            none++;
            ok += rc == TSL_PARTITION_NONE_FITS;
        } else if (rc == TSL_PARTITION_OK && valid_first(&s, first)) {
            ok += near(got, want) && near(v_ref_max(&s, first), want);
            if (!near(got, want))
                fprintf(stderr, "v: L=%u P=%u got %.17g, brute %.17g\n", s.L, s.P, got, want);
        }
    }
    CHECK(ok == n, "tsl_partition_v = exhaustive least largest rank load in %d/%d (%d none)", ok, n,
          none);
    /* 10 blocks of 1 s and a 4 s head: contiguous stages balance at 7/4 (7 s each,
     * the head on the last stage); a V's rank 0 holds the head beside the first
     * layers (parts of 2 and 2 layers), rank 1 the middle 7: 4/7, 7 s each */
    inst_t s;
    memset(&s, 0, sizeof(s));
    s.L = 11;
    s.P = 2;
    s.m = 8;
    for (uint32_t l = 0; l < s.L; l++)
        s.t[l] = l + 1 < s.L ? 1.0 : 4.0;
    s.budget = TSL_PARTITION_NO_BUDGET;
    inst_wire(&s);
    uint32_t first[3];
    double most = 0;
    CHECK(tsl_partition_v(&s.in, first, &most, NULL) == TSL_PARTITION_OK, "V of 11 layers");
    CHECK(first[1] == 4 && near(most, 7.0), "V of 11 layers: %u/%u, %.3f s", first[1],
          s.L - first[1], most);
    tsl_partition_ws_t *ws = tsl_partition_ws_new(s.L, s.P);
    CHECK(ws && tsl_partition_time_balanced(&s.in, ws, false, first, NULL, NULL) == 0 &&
              first[1] == 7,
          "contiguous: %u/%u", first[1], s.L - first[1]);
    tsl_partition_ws_free(ws);
}

int main(void)
{
    test_balanced_vs_brute();
    test_amp_vs_brute();
    test_amp_vs_paper_dp();
    test_adjust();
    test_bi_objective_random();
    test_models();
    test_heterogeneous();
    test_timing();
    test_errors();
    test_v_vs_brute();
    test_bisect_exact(); /* last: the instances before it drawn as they were */
    return CHECK_DONE();
}

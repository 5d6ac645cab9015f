/*
 * autopipe.c — AutoPipe's Algorithm 1 (min-max partition DP), the master-stage
 * heuristic partitioner and the micro-batch slicer (autopipe.txt III-B-2, III-C).
 * See autopipe.h for the contracts and docs/autopipe.md for the algorithms and
 * where Tessel departs from the paper.
 */
#include "autopipe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

/* ---------------------------------------------------------------- Algorithm 1 */

/*
 * Min-max partition of blocks [lo, hi) into p non-empty consecutive stages, by the
 * prefix sums S (S[k] = sum of the first k weights, weights >= 0). cap (may be NULL)
 * bounds the cumulative load of the first j stages, j = 1 .. p − 1:
 * S[boundary_j] − S[lo] <= cap[j]. T and arg hold (hi − lo + 1)·(p + 1) entries.
 * Writes first[0..p] (absolute block indices) and returns the optimum, or INFINITY
 * when the caps leave no partition.
 *
 * time[i][j] = min_k max(time[k][j − 1], S[i] − S[k]) (the paper's lines 8–14).
 * time[k][j − 1] never decreases with k (a prefix with one more block cannot be
 * split better; with nondecreasing caps this still holds) and S[i] − S[k] never
 * increases, so the minimum sits where they cross: a binary search finds the
 * first k with time[k][j − 1] >= S[i] − S[k], and the optimum is at it or just
 * before it. O(n·p·log n) instead of the paper's O(n²·p) — exact all the same.
 */
static double dp_minmax(const double *S, uint32_t lo, uint32_t hi, uint32_t p, const double *cap,
                        double *T, uint32_t *arg, uint32_t *first)
{
    const uint32_t len = hi - lo, W = p + 1;
    for (size_t x = 0; x < (size_t)(len + 1) * W; x++) {
        T[x] = INFINITY;
        arg[x] = 0;
    }
    T[0] = 0;
    for (uint32_t j = 1; j <= p; j++) {
        uint32_t i_from = j;
        if (j == p)
            i_from = len; /* the last stage must end at the last block */
        for (uint32_t i = i_from; i <= len; i++) {
            double load = S[lo + i] - S[lo];
            if (cap && j < p && load > cap[j] * (1 + 1e-12))
                continue;
            /* first k in [j − 1, i − 1] with time[k][j − 1] >= S[i] − S[k] */
            uint32_t a = j - 1, z = i; /* answer in [a, z]; z = i: none */
            while (a < z) {
                uint32_t mid = a + (z - a) / 2;
                if (T[(size_t)mid * W + j - 1] >= S[lo + i] - S[lo + mid])
                    z = mid;
                else
                    a = mid + 1;
            }
            double best = INFINITY;
            uint32_t barg = 0;
            if (a < i) {
                best = T[(size_t)a * W + j - 1];
                barg = a;
            }
            if (a > j - 1) {
                double v = S[lo + i] - S[lo + a - 1]; /* > time[a − 1][j − 1] */
                if (v < best) {
                    best = v;
                    barg = a - 1;
                }
            }
            T[(size_t)i * W + j] = best;
            arg[(size_t)i * W + j] = barg;
        }
    }
    double opt = T[(size_t)len * W + p];
    if (!isfinite(opt))
        return INFINITY;
    uint32_t i = len;
    for (uint32_t j = p; j >= 1; j--) {
        first[j] = lo + i;
        i = arg[(size_t)i * W + j];
    }
    first[0] = lo;
    return opt;
}

static int check_weights(const double *w, uint32_t n, const char *field, tsl_err_t *err)
{
    for (uint32_t i = 0; i < n; i++)
        if (!isfinite(w[i]) || w[i] < 0)
            return tsl_err_set(err, "%s[%u]: %g is not a valid time; give a finite value >= 0",
                               field, i, w[i]);
    return 0;
}

int tsl_autopipe_minmax(const double *w, uint32_t n, uint32_t p, uint32_t *first, double *max_out,
                        tsl_err_t *err)
{
    int rc = -1;
    double *S = NULL, *T = NULL;
    uint32_t *arg = NULL;
    if (w == NULL || first == NULL)
        return tsl_err_set(err, "minmax: %s is NULL", w ? "first" : "w");
    if (n == 0 || n > TSL_AUTOPIPE_MAX_BLOCKS)
        return tsl_err_set(err, "n_blocks: %u is out of range; give 1..%u", n,
                           TSL_AUTOPIPE_MAX_BLOCKS);
    if (p == 0 || p > n || p > TSL_PIPESIM_MAX_STAGES)
        return tsl_err_set(err,
                           "n_stages: %u is out of range; give 1..%u (one block per "
                           "stage at least)",
                           p, n < TSL_PIPESIM_MAX_STAGES ? n : TSL_PIPESIM_MAX_STAGES);
    if (check_weights(w, n, "w", err))
        return -1;
    size_t cells = (size_t)(n + 1) * (p + 1);
    S = malloc((n + 1) * sizeof(*S));
    T = malloc(cells * sizeof(*T));
    arg = malloc(cells * sizeof(*arg));
    if (!S || !T || !arg) {
        tsl_err_setc(err, TSL_E_NOMEM, "minmax: out of memory for %u blocks x %u stages", n, p);
        goto out;
    }
    S[0] = 0;
    for (uint32_t i = 0; i < n; i++)
        S[i + 1] = S[i] + w[i];
    dp_minmax(S, 0, n, p, NULL, T, arg, first);
    if (max_out) {
        /* report the stage sums summed directly, not as prefix differences */
        double mx = 0;
        for (uint32_t s = 0; s < p; s++) {
            double sum = 0;
            for (uint32_t k = first[s]; k < first[s + 1]; k++)
                sum += w[k];
            mx = fmax(mx, sum);
        }
        *max_out = mx;
    }
    rc = 0;
out:
    free(S);
    free(T);
    free(arg);
    return rc;
}

/* ------------------------------------------------------------- stage times */

static int check_partition(const uint32_t *first, uint32_t n, uint32_t P, tsl_err_t *err)
{
    if (first[0] != 0 || first[P] != n)
        return tsl_err_set(err, "first: a partition must start at block 0 and end at block %u", n);
    for (uint32_t s = 0; s < P; s++)
        if (first[s + 1] <= first[s])
            return tsl_err_set(err, "first[%u]: stage %u is empty or reversed", s + 1, s);
    return 0;
}

static double cut_p2p(const tsl_autopipe_in_t *in, uint32_t after_block)
{
    return in->cut_p2p_s ? in->cut_p2p_s[after_block] : in->p2p_s;
}

int tsl_autopipe_stage_times(const tsl_autopipe_in_t *in, const uint32_t *first,
                             double *stage_fwd_s, double *stage_bwd_s, double *stage_p2p_s,
                             tsl_err_t *err)
{
    if (in == NULL || first == NULL || in->fwd_s == NULL || in->bwd_s == NULL)
        return tsl_err_set(err, "stage_times: missing input");
    if (in->n_stages == 0 || in->n_stages > TSL_PIPESIM_MAX_STAGES)
        return tsl_err_set(err, "n_stages: %u is out of range; give 1..%u", in->n_stages,
                           TSL_PIPESIM_MAX_STAGES);
    if (check_partition(first, in->n_blocks, in->n_stages, err))
        return -1;
    for (uint32_t s = 0; s < in->n_stages; s++) {
        double f = 0, b = 0;
        for (uint32_t k = first[s]; k < first[s + 1]; k++) {
            f += in->fwd_s[k];
            b += in->bwd_s[k];
        }
        if (stage_fwd_s)
            stage_fwd_s[s] = f;
        if (stage_bwd_s)
            stage_bwd_s[s] = b;
        if (stage_p2p_s)
            stage_p2p_s[s] = s + 1 < in->n_stages ? cut_p2p(in, first[s + 1] - 1) : 0;
    }
    return 0;
}

/* --------------------------------------------------------- the partitioner */

typedef struct ap_ctx {
    const tsl_autopipe_in_t *in;
    uint32_t n, P;
    double *S;   /* prefix sums of f + b */
    double *dpT; /* Algorithm 1 tables, (n + 1)·(P + 1) */
    uint32_t *dpArg;
    void *simws;
    size_t simws_bytes;
    uint32_t *pool; /* cap partitions of P + 1 starts */
    double *pool_iter, *pool_startup;
    uint32_t *pool_master;
    uint32_t pool_n, pool_cap;
    uint32_t *hash; /* open addressing: pool index + 1, 0 = empty */
    uint32_t hash_mask;
    uint32_t *stack;
    uint32_t stack_n;
    bool cap_hit;
} ap_ctx_t;

static uint64_t part_hash(const uint32_t *first, uint32_t P)
{
    uint64_t h = 1469598103934665603ull;
    for (uint32_t s = 1; s < P; s++) {
        h ^= first[s];
        h *= 1099511628211ull;
    }
    return h;
}

static int simulate(ap_ctx_t *c, const uint32_t *first, tsl_pipesim_out_t *so, tsl_err_t *err)
{
    double f[TSL_PIPESIM_MAX_STAGES], b[TSL_PIPESIM_MAX_STAGES], p2p[TSL_PIPESIM_MAX_STAGES];
    if (tsl_autopipe_stage_times(c->in, first, f, b, p2p, err))
        return -1;
    tsl_pipesim_in_t si;
    memset(&si, 0, sizeof(si));
    si.n_stages = c->P;
    si.n_micro = c->in->n_micro;
    si.fwd_s = f;
    si.bwd_s = b;
    si.p2p_s = p2p;
    return tsl_pipesim_run(&si, c->simws, c->simws_bytes, so, err);
}

/* Index of partition `first` in the pool, simulating it if new (*is_new then
 * true). NONE when the pool is full. */
static int evaluate(ap_ctx_t *c, const uint32_t *first, uint32_t *idx, bool *is_new, tsl_err_t *err)
{
    const uint32_t W = c->P + 1;
    uint64_t h = part_hash(first, c->P);
    uint32_t slot = (uint32_t)(h & c->hash_mask);
    *is_new = false;
    while (c->hash[slot] != 0) {
        uint32_t k = c->hash[slot] - 1;
        if (memcmp(&c->pool[(size_t)k * W], first, W * sizeof(uint32_t)) == 0) {
            *idx = k;
            return 0;
        }
        slot = (slot + 1) & c->hash_mask;
    }
    if (c->pool_n == c->pool_cap) {
        c->cap_hit = true;
        *idx = NONE;
        return 0;
    }
    tsl_pipesim_out_t so;
    if (simulate(c, first, &so, err))
        return -1;
    uint32_t k = c->pool_n++;
    memcpy(&c->pool[(size_t)k * W], first, W * sizeof(uint32_t));
    c->pool_iter[k] = so.iter_s;
    c->pool_startup[k] = so.startup_s;
    c->pool_master[k] = so.master_stage;
    c->hash[slot] = k + 1;
    *idx = k;
    *is_new = true;
    return 0;
}

/* Step 2: make the stages after master i satisfy Eq. (1),
 *   sum_{j=i+1..s} (f_j + b_j) <= (s − i)·b_i  for every s > i,
 * so that they never starve the master in cooldown: Algorithm 1 on the blocks
 * after stage i with those cumulative caps (the last stage takes the rest).
 * Returns false when Eq. (1) already holds or no partition meets it. */
static bool adjust_after_master(ap_ctx_t *c, const uint32_t *first, uint32_t i, uint32_t *adj)
{
    const uint32_t P = c->P;
    if (i + 1 >= P)
        return false;
    double bi = 0, fb = 0;
    for (uint32_t k = first[i]; k < first[i + 1]; k++)
        bi += c->in->bwd_s[k];
    bool holds = true;
    for (uint32_t s = i + 1; s + 1 < P && holds; s++) {
        fb += c->S[first[s + 1]] - c->S[first[s]];
        if (fb > (double)(s - i) * bi * (1 + 1e-12))
            holds = false;
    }
    if (holds)
        return false;
    double cap[TSL_PIPESIM_MAX_STAGES + 1];
    uint32_t q = P - 1 - i;
    for (uint32_t j = 1; j < q; j++)
        cap[j] = (double)j * bi;
    uint32_t tail[TSL_PIPESIM_MAX_STAGES + 1];
    if (!isfinite(dp_minmax(c->S, first[i + 1], c->n, q, cap, c->dpT, c->dpArg, tail)))
        return false;
    memcpy(adj, first, (P + 1) * sizeof(uint32_t));
    for (uint32_t j = 0; j <= q; j++)
        adj[i + 1 + j] = tail[j];
    return memcmp(adj, first, (P + 1) * sizeof(uint32_t)) != 0;
}

/* Algorithm 1 on the first `stages` stages, over the blocks they hold now. */
static void rebalance_prefix(ap_ctx_t *c, uint32_t *first, uint32_t stages)
{
    uint32_t pre[TSL_PIPESIM_MAX_STAGES + 1];
    if (stages < 2)
        return;
    if (!isfinite(dp_minmax(c->S, 0, first[stages], stages, NULL, c->dpT, c->dpArg, pre)))
        return;
    for (uint32_t j = 0; j <= stages; j++)
        first[j] = pre[j];
}

static int push(ap_ctx_t *c, uint32_t idx)
{
    if (c->stack_n == c->pool_cap)
        return -1;
    c->stack[c->stack_n++] = idx;
    return 0;
}

/* Evaluates a candidate; a new one whose master is <= i is queued for steps 2–3. */
static int consider(ap_ctx_t *c, const uint32_t *cand, uint32_t i, tsl_err_t *err)
{
    uint32_t k;
    bool is_new;
    if (evaluate(c, cand, &k, &is_new, err))
        return -1;
    if (k != NONE && is_new && c->pool_master[k] <= i)
        push(c, k);
    return 0;
}

static int search(ap_ctx_t *c, uint32_t start, tsl_err_t *err)
{
    const uint32_t P = c->P, W = P + 1;
    uint32_t cur[TSL_PIPESIM_MAX_STAGES + 1], cand[TSL_PIPESIM_MAX_STAGES + 1];
    push(c, start);
    while (c->stack_n > 0) {
        uint32_t idx = c->stack[--c->stack_n];
        memcpy(cur, &c->pool[(size_t)idx * W], W * sizeof(uint32_t));
        uint32_t i = c->pool_master[idx];

        /* step 2: no cooldown bubbles after the master */
        if (adjust_after_master(c, cur, i, cand)) {
            uint32_t k;
            bool is_new;
            if (evaluate(c, cand, &k, &is_new, err))
                return -1;
            if (k != NONE && c->pool_iter[k] <= c->pool_iter[idx]) {
                memcpy(cur, cand, W * sizeof(uint32_t));
                idx = k;
                i = c->pool_master[k];
            }
        }

        /* step 3: move the master stage forward */
        if (i == 0)
            continue;
        if (cur[i + 1] - cur[i] >= 2) {
            /* first block of stage i to stage i − 1, as is and rebalanced */
            memcpy(cand, cur, W * sizeof(uint32_t));
            cand[i]++;
            if (consider(c, cand, i, err))
                return -1;
            rebalance_prefix(c, cand, i);
            if (consider(c, cand, i, err))
                return -1;
            if (i + 1 < P) {
                /* last block of stage i to stage i + 1, as is and rebalanced */
                memcpy(cand, cur, W * sizeof(uint32_t));
                cand[i + 1]--;
                if (consider(c, cand, i, err))
                    return -1;
                rebalance_prefix(c, cand, i + 1);
                if (consider(c, cand, i, err))
                    return -1;
            }
        }
    }
    return 0;
}

static int check_ap_in(const tsl_autopipe_in_t *in, tsl_err_t *err)
{
    if (in->n_blocks == 0 || in->n_blocks > TSL_AUTOPIPE_MAX_BLOCKS)
        return tsl_err_set(err, "n_blocks: %u is out of range; give 1..%u", in->n_blocks,
                           TSL_AUTOPIPE_MAX_BLOCKS);
    if (in->n_stages == 0 || in->n_stages > TSL_PIPESIM_MAX_STAGES)
        return tsl_err_set(err, "n_stages: %u is out of range; give 1..%u", in->n_stages,
                           TSL_PIPESIM_MAX_STAGES);
    if (in->n_stages > in->n_blocks)
        return tsl_err_set(err, "n_stages: %u stages need at least %u blocks, there are %u",
                           in->n_stages, in->n_stages, in->n_blocks);
    if (in->n_micro == 0 || in->n_micro > TSL_PIPESIM_MAX_MICRO)
        return tsl_err_set(err, "n_micro: %u is out of range; give 1..%u", in->n_micro,
                           TSL_PIPESIM_MAX_MICRO);
    if (in->fwd_s == NULL || in->bwd_s == NULL)
        return tsl_err_set(err, "%s: missing per-block times", in->fwd_s ? "bwd_s" : "fwd_s");
    if (check_weights(in->fwd_s, in->n_blocks, "fwd_s", err) ||
        check_weights(in->bwd_s, in->n_blocks, "bwd_s", err))
        return -1;
    if (in->cut_p2p_s && check_weights(in->cut_p2p_s, in->n_blocks, "cut_p2p_s", err))
        return -1;
    if (!in->cut_p2p_s && (!isfinite(in->p2p_s) || in->p2p_s < 0))
        return tsl_err_set(err, "p2p_s: %g is not a valid time; give a finite value >= 0",
                           in->p2p_s);
    return 0;
}

static void fill_result(ap_ctx_t *c, uint32_t best, uint32_t start, tsl_autopipe_result_t *out)
{
    const uint32_t P = c->P, W = P + 1;
    memset(out, 0, sizeof(*out));
    out->n_stages = P;
    memcpy(out->first, &c->pool[(size_t)best * W], W * sizeof(uint32_t));
    out->iter_s = c->pool_iter[best];
    out->startup_s = c->pool_startup[best];
    out->master_stage = c->pool_master[best];
    tsl_autopipe_stage_times(c->in, out->first, out->stage_fwd_s, out->stage_bwd_s,
                             out->stage_p2p_s, NULL);
    for (uint32_t s = 0; s < P; s++)
        out->max_stage_s = fmax(out->max_stage_s, out->stage_fwd_s[s] + out->stage_bwd_s[s]);
    memcpy(out->alg1_first, &c->pool[(size_t)start * W], W * sizeof(uint32_t));
    out->alg1_iter_s = c->pool_iter[start];
    out->alg1_master_stage = c->pool_master[start];
    double f[TSL_PIPESIM_MAX_STAGES], b[TSL_PIPESIM_MAX_STAGES];
    tsl_autopipe_stage_times(c->in, out->alg1_first, f, b, NULL, NULL);
    for (uint32_t s = 0; s < P; s++)
        out->alg1_max_stage_s = fmax(out->alg1_max_stage_s, f[s] + b[s]);
    out->evals = c->pool_n;
    out->eval_cap_hit = c->cap_hit;
}

int tsl_autopipe_partition(const tsl_autopipe_in_t *in, tsl_autopipe_result_t *out, tsl_err_t *err)
{
    int rc = -1;
    ap_ctx_t c;
    memset(&c, 0, sizeof(c));
    if (in == NULL || out == NULL)
        return tsl_err_set(err, "partition: %s is NULL", in ? "out" : "in");
    if (check_ap_in(in, err))
        return -1;

    c.in = in;
    c.n = in->n_blocks;
    c.P = in->n_stages;
    c.pool_cap = in->max_evals ? in->max_evals : TSL_AUTOPIPE_DEFAULT_MAX_EVALS;
    uint32_t hcap = 1;
    while (hcap < 2 * c.pool_cap)
        hcap <<= 1;
    c.hash_mask = hcap - 1;
    const size_t cells = (size_t)(c.n + 1) * (c.P + 1);
    c.simws_bytes = tsl_pipesim_ws_bytes(c.P, in->n_micro, 0);
    c.S = malloc((c.n + 1) * sizeof(double));
    c.dpT = malloc(cells * sizeof(double));
    c.dpArg = malloc(cells * sizeof(uint32_t));
    c.simws = malloc(c.simws_bytes);
    c.pool = malloc((size_t)c.pool_cap * (c.P + 1) * sizeof(uint32_t));
    c.pool_iter = malloc(c.pool_cap * sizeof(double));
    c.pool_startup = malloc(c.pool_cap * sizeof(double));
    c.pool_master = malloc(c.pool_cap * sizeof(uint32_t));
    c.hash = calloc(hcap, sizeof(uint32_t));
    c.stack = malloc(c.pool_cap * sizeof(uint32_t));
    if (!c.S || !c.dpT || !c.dpArg || !c.simws || !c.pool || !c.pool_iter || !c.pool_startup ||
        !c.pool_master || !c.hash || !c.stack) {
        tsl_err_setc(err, TSL_E_NOMEM,
                     "partition: out of memory for %u blocks, %u stages, %u evaluations", c.n, c.P,
                     c.pool_cap);
        goto out;
    }
    c.S[0] = 0;
    for (uint32_t k = 0; k < c.n; k++)
        c.S[k + 1] = c.S[k] + in->fwd_s[k] + in->bwd_s[k];

    /* step 1: Algorithm 1 */
    uint32_t first[TSL_PIPESIM_MAX_STAGES + 1];
    dp_minmax(c.S, 0, c.n, c.P, NULL, c.dpT, c.dpArg, first);
    uint32_t start;
    bool is_new;
    if (evaluate(&c, first, &start, &is_new, err))
        goto out;
    if (start == NONE) {
        tsl_err_set(err, "max_evals: %u leaves no room to evaluate a partition", c.pool_cap);
        goto out;
    }
    if (search(&c, start, err))
        goto out;

    uint32_t best = start;
    for (uint32_t k = 0; k < c.pool_n; k++)
        if (c.pool_iter[k] < c.pool_iter[best])
            best = k;
    fill_result(&c, best, start, out);
    rc = 0;
out:
    free(c.S);
    free(c.dpT);
    free(c.dpArg);
    free(c.simws);
    free(c.pool);
    free(c.pool_iter);
    free(c.pool_startup);
    free(c.pool_master);
    free(c.hash);
    free(c.stack);
    return rc;
}

/* --------------------------------------------------------------- the slicer */

int tsl_autopipe_slice(const tsl_pipesim_in_t *pipe, const tsl_autopipe_slice_cfg_t *cfg,
                       tsl_autopipe_slice_t *out, tsl_err_t *err)
{
    int rc = -1;
    void *ws = NULL;
    if (pipe == NULL || out == NULL)
        return tsl_err_set(err, "slice: %s is NULL", pipe ? "out" : "pipe");
    tsl_autopipe_slice_cfg_t dc;
    memset(&dc, 0, sizeof(dc));
    if (cfg)
        dc = *cfg;
    if (dc.min_stages == 0)
        dc.min_stages = 3;
    if (!(dc.min_gain >= 0 && dc.min_gain < 1))
        return tsl_err_set(err, "min_gain: %g is out of range; give 0 <= min_gain < 1",
                           dc.min_gain);

    tsl_pipesim_in_t si = *pipe;
    si.n_sliced = 0;
    si.slice_fwd_frac = dc.half_fwd_frac;
    si.slice_p2p_frac = dc.half_p2p_frac;
    const uint32_t P = si.n_stages, m = si.n_micro;
    const uint32_t K = tsl_pipesim_warmup(0, P, m);
    size_t bytes = tsl_pipesim_ws_bytes(P, m, K);
    if (bytes == 0) {
        tsl_pipesim_out_t bad;
        return tsl_pipesim_run(&si, NULL, 0, &bad, err); /* names the bad field */
    }
    ws = malloc(bytes);
    if (ws == NULL) {
        tsl_err_setc(err, TSL_E_NOMEM, "slice: out of memory for %zu bytes of workspace", bytes);
        goto out;
    }

    memset(out, 0, sizeof(*out));
    tsl_pipesim_out_t so;
    if (tsl_pipesim_run(&si, ws, bytes, &so, err))
        goto out;
    out->iter_s = so.iter_s;
    out->startup_s = so.startup_s;
    out->sliced_iter_s = so.iter_s;
    out->sliced_startup_s = so.startup_s;
    if (K == 0) {
        snprintf(out->why, sizeof(out->why), "not applied: one stage has no startup overhead");
        rc = 0;
        goto out;
    }

    /* Algorithm 2's loop: slice one more micro-batch while that still helps */
    uint32_t k = 1;
    si.n_sliced = 1;
    if (tsl_pipesim_run(&si, ws, bytes, &so, err))
        goto out;
    double t_k = so.iter_s, st_k = so.startup_s;
    while (k < K) {
        si.n_sliced = k + 1;
        if (tsl_pipesim_run(&si, ws, bytes, &so, err))
            goto out;
        if (!(so.iter_s < t_k * (1 - 1e-12)))
            break;
        k++;
        t_k = so.iter_s;
        st_k = so.startup_s;
    }
    out->best_k = k;
    out->sliced_iter_s = t_k;
    out->sliced_startup_s = st_k;
    out->startup_cut = out->startup_s > 0 ? 1 - st_k / out->startup_s : 0;

    double gain = out->iter_s > 0 ? 1 - t_k / out->iter_s : 0;
    if (P < dc.min_stages)
        snprintf(out->why, sizeof(out->why),
                 "not applied: %u stages < %u (AutoPipe Fig. 10: slicing slows shallow "
                 "pipelines)",
                 P, dc.min_stages);
    else if (!(t_k < out->iter_s) || gain <= dc.min_gain)
        snprintf(out->why, sizeof(out->why),
                 "not applied: slicing %u micro-batch(es) changes the iteration time by "
                 "%+.2f%% (needs < -%.2f%%)",
                 k, -100 * gain, 100 * dc.min_gain);
    else {
        out->applied = true;
        out->n_sliced = k;
        snprintf(out->why, sizeof(out->why),
                 "applied: %u micro-batch(es) sliced, startup -%.1f%%, iteration -%.2f%%", k,
                 100 * out->startup_cut, 100 * gain);
    }
    rc = 0;
out:
    free(ws);
    return rc;
}

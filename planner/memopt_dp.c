/*
 * memopt_dp.c — H3T's DP solver (Appendix B, Algorithm 4) over the segment table
 * that tsl_memopt_ws_load filled.
 *
 * State after layer i: (mem_curr level, mem_peak level, r_i, r_{i+1}), where r is
 * a layer's three communication switches (offload, partition, lazy): segment i
 * needs only r_{i−1}, s_i and r_{i+1} (pruning 1, |R| = 8 instead of |S| = 64).
 * Each cell keeps the fastest sub-solution that reached it, with that
 * sub-solution's exact bytes; the transfer is Algorithm 4's lines 17–18:
 *   curr' = curr + resident_i + carried_i
 *   peak' = max(peak, curr + local_peak_i) + resident_i      (kept only if ≤ M)
 * Pruning 2: per (i, r_i, r_{i+1}) a 2-D prefix-minimum scan over the (curr, peak)
 * triangle drops every state that a state with no higher levels and no longer
 * runtime dominates; the survivors get a back-pointer node and are expanded.
 *
 * Memory: two layers of cells (64 r-pairs × (m+1)(m+2)/2 levels) and a pool of
 * back-pointer nodes, all in the workspace. Nothing is allocated here.
 */
#include "memopt.h"

#include <math.h>
#include <string.h>

#define N_R  8u
#define ROOT UINT32_MAX

static size_t tab_index(uint32_t i, uint32_t rp, uint32_t s, uint32_t rn)
{
    return (((size_t)i * N_R + rp) * TSL_MEMOPT_N_SWITCH_SETS + s) * N_R + rn;
}

static uint64_t tri_index(uint64_t c, uint64_t p)
{
    return p * (p + 1) / 2 + c;
}

int tsl_memopt_dp(tsl_memopt_ws_t *ws, uint32_t n, const tsl_memopt_ctx_t *ctx, uint32_t allowed,
                  const tsl_memopt_opts_t *opts, uint8_t *sw, tsl_memopt_stats_t *stats,
                  tsl_err_t *err)
{
    if (ws == NULL || ws->mem_levels == 0 || ws->rt[0] == NULL)
        return tsl_err_set(err, "dp: the workspace was made without memory levels (m = 0)");
    if (ws->loaded_n != n || n == 0)
        return tsl_err_set(err, "dp: the workspace holds a table for %u layers, not %u",
                           ws->loaded_n, n);
    if (ctx == NULL || ctx->reserved_bytes >= ctx->gpu_mem_limit_bytes)
        return tsl_err_set(err, "dp: reserved_bytes leave nothing of gpu_mem_limit_bytes");
    allowed &= TSL_MEMOPT_ALL;
    if (ws->loaded_mode != TSL_MEMOPT_MODE_OFFLOAD)
        allowed &= ~(uint32_t)TSL_MEMOPT_LAZY_PREFETCH;

    const uint64_t m = ws->mem_levels, T = ws->tri;
    const uint64_t budget = ctx->gpu_mem_limit_bytes - ctx->reserved_bytes;
    const uint64_t bucket = budget / m ? budget / m : 1;
    const bool prune = !(opts && opts->dp_no_dominance);

    /* R: the allowed communication-switch combinations; ext(r): the switch sets
     * that extend r (remat, economical modes). */
    uint32_t rlist[N_R], nr = 0;
    uint8_t ext[N_R][TSL_MEMOPT_N_SWITCH_SETS];
    uint32_t next[N_R];
    for (uint32_t r = 0; r < N_R; r++) {
        if (((r << 1) & ~allowed) != 0)
            continue;
        next[nr] = 0;
        for (uint32_t s = 0; s < TSL_MEMOPT_N_SWITCH_SETS; s++)
            if (((s >> 1) & 7u) == r && (s & ~allowed) == 0)
                ext[nr][next[nr]++] = (uint8_t)s;
        rlist[nr++] = r;
    }
    const uint64_t cells = (uint64_t)nr * nr * T;

    int cur = 0;
    for (uint64_t j = 0; j < cells; j++)
        ws->rt[cur][j] = INFINITY;
    for (uint32_t ri = 0; ri < nr; ri++) {
        uint64_t j = (uint64_t)ri * T; /* pair (r_{-1} = none, r_0 = rlist[ri]), cell (0, 0) */
        ws->rt[cur][j] = 0.0;
        ws->curr[cur][j] = 0;
        ws->peak[cur][j] = 0;
        ws->parent[cur][j] = ROOT;
        ws->chosen[cur][j] = 0;
    }
    uint64_t nodes = 0;

    for (uint32_t i = 0; i < n; i++) {
        if (tsl_memopt_cancelled(opts))
            return tsl_err_setc(err, TSL_E_CANCELLED, "search: cancelled");
        /* Pruning 2 and back-pointer nodes for the states after layer i − 1. */
        uint64_t nk = 0;
        for (uint64_t pair = 0; pair < (uint64_t)nr * nr; pair++) {
            const double *rt = ws->rt[cur] + pair * T;
            for (uint64_t p = 0; p <= m; p++) {
                for (uint64_t c = 0; c <= p; c++) {
                    uint64_t x = tri_index(c, p);
                    double v = rt[x];
                    if (v < INFINITY && stats)
                        stats->dp_states++;
                    bool keep;
                    if (prune) {
                        double left = c > 0 ? ws->pmin[x - 1] : INFINITY;
                        double down = c + 1 <= p ? ws->pmin[tri_index(c, p - 1)] : INFINITY;
                        double mn = left < down ? left : down;
                        keep = v < mn;
                        ws->pmin[x] = keep ? v : mn;
                    } else {
                        keep = v < INFINITY;
                    }
                    if (keep)
                        ws->kept[nk++] = (uint32_t)(pair * T + x);
                }
            }
        }
        if (i > 0) {
            if (nodes + nk > ws->max_nodes)
                return tsl_err_set(err,
                                   "dp_max_nodes: the back-pointer pool (%llu nodes) is full at "
                                   "layer %u; give a larger pool or fewer memory levels",
                                   (unsigned long long)ws->max_nodes, i);
            for (uint64_t k = 0; k < nk; k++) {
                uint32_t j = ws->kept[k];
                ws->node_parent[nodes] = ws->parent[cur][j];
                ws->node_sw[nodes] = ws->chosen[cur][j];
                ws->parent[cur][j] = (uint32_t)nodes++;
            }
        }
        if (stats)
            stats->dp_kept += nk;

        /* Transfers to the states after layer i. */
        const int nxt = cur ^ 1;
        for (uint64_t j = 0; j < cells; j++)
            ws->rt[nxt][j] = INFINITY;
        const bool last = i + 1 == n;
        const uint32_t n_rn = last ? 1 : nr;
        for (uint64_t k = 0; k < nk; k++) {
            uint32_t j = ws->kept[k];
            uint32_t pair = (uint32_t)(j / T);
            uint32_t rpi = pair / nr, rci = pair % nr;
            const double rt0 = ws->rt[cur][j];
            const uint64_t c0 = ws->curr[cur][j], p0 = ws->peak[cur][j];
            const uint32_t node = ws->parent[cur][j];
            const uint32_t rp = rlist[rpi];
            for (uint32_t e = 0; e < next[rci]; e++) {
                const uint32_t s = ext[rci][e];
                for (uint32_t rni = 0; rni < n_rn; rni++) {
                    size_t t = tab_index(i, rp, s, rlist[rni]);
                    const uint64_t *mm = &ws->tab_mem[3 * t];
                    if (stats)
                        stats->dp_transitions++;
                    uint64_t cand = c0 + mm[2];
                    uint64_t p1 = (cand > p0 ? cand : p0) + mm[0];
                    if (p1 > budget)
                        continue;
                    uint64_t c1 = c0 + mm[0] + mm[1];
                    double rt1 = rt0 + ws->tab_time[t];
                    uint64_t lc = c1 / bucket, lp = p1 / bucket;
                    if (lc > m)
                        lc = m;
                    if (lp > m)
                        lp = m;
                    uint64_t dst = ((uint64_t)rci * nr + rni) * T + tri_index(lc, lp);
                    if (rt1 < ws->rt[nxt][dst]) {
                        ws->rt[nxt][dst] = rt1;
                        ws->curr[nxt][dst] = c1;
                        ws->peak[nxt][dst] = p1;
                        ws->parent[nxt][dst] = node;
                        ws->chosen[nxt][dst] = (uint8_t)s;
                    }
                }
            }
        }
        cur = nxt;
    }

    /* The fastest complete sequence. */
    uint64_t best = UINT64_MAX;
    double best_rt = INFINITY;
    for (uint64_t j = 0; j < cells; j++)
        if (ws->rt[cur][j] < best_rt) {
            best_rt = ws->rt[cur][j];
            best = j;
        }
    if (stats)
        stats->dp_nodes += nodes;
    if (best == UINT64_MAX) {
        tsl_err_set(err, "dp: no switch sequence keeps the peak within %llu bytes",
                    (unsigned long long)budget);
        return 1;
    }
    sw[n - 1] = ws->chosen[cur][best];
    uint32_t node = ws->parent[cur][best];
    for (uint32_t i = n - 1; i-- > 0;) {
        sw[i] = ws->node_sw[node];
        node = ws->node_parent[node];
    }
    return 0;
}

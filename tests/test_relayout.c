/*
 * test_relayout.c — the layout-change rule (planner/relayout.h), which the search
 * prices and the executor (worker/exec/exec_layout.c) runs: the cases
 * tests/test_exec.c runs, by hand; then every pair of layouts of 1- to 16-device
 * stages against tsl_exec_stage_layout itself, rank by rank (kind, gather group
 * size, samples gathered); the bytes the executor's moves carry against the bytes
 * the cost model prices, and that every move delivers the rank's samples; the
 * layout counts the search's pair tables have; bad input; then what the search and
 * eval charge for R: a given plan by hand (inside a stage and at a stage boundary),
 * and a searched plan's stages against R recomputed pair by pair; and the planner's
 * fast walks against its plain ones on many clusters and blocks. Links the
 * executor (its layout planning only: no device is touched).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cost.h"
#include "layer_dense.h"
#include "eval.h"
#include "exec_internal.h"
#include "mixed_cluster.h"
#include "relayout.h"
#include "search.h"
#include "search_tiny.h"

#define REL 1e-9

static tsl_strategy_t parse(const char *s)
{
    tsl_strategy_t st;
    tsl_err_t err = {0};
    CHECK(tsl_strategy_parse(s, &st, &err) == 0, "%s: %s", s, err.msg);
    return st;
}

static tsl_relayout_t plan(const char *from, const char *to)
{
    tsl_strategy_t a = parse(from), b = parse(to);
    tsl_relayout_t r;
    uint32_t scratch[3 * 64];
    tsl_err_t err = {0};
    memset(&r, 0, sizeof(r));
    CHECK(tsl_relayout_plan(&a, &b, NULL, 0, scratch, &r, &err) == 0, "%s > %s: %s", from, to,
          err.msg);
    return r;
}

static void check_move(const tsl_relayout_move_t *m, tsl_relayout_kind_t kind, uint32_t k,
                       uint32_t width, const char *what)
{
    CHECK(m->kind == kind && m->k == k && m->width == width,
          "%s: %s k %u width %u, want %s k %u width %u", what, tsl_relayout_kind_name(m->kind),
          m->k, m->width, tsl_relayout_kind_name(kind), k, width);
}

/* tests/test_exec.c layouts_in_stage, stage of 4: TP2×DP2 → DP4 → TP4 → SDP4 → TP2×DP2
 * slices forward where the later layer's samples are a part of the rank's and
 * gathers where they are more; backward the reverse. */
static void exec_stage_a(void)
{
    tsl_relayout_t r = plan("tp2-dp2", "dp4+ckpt"); /* widening 2 → 4 */
    check_move(&r.fwd, TSL_RELAYOUT_SLICE, 1, 0, "tp2-dp2 > dp4 fwd");
    check_move(&r.bwd, TSL_RELAYOUT_GATHER, 2, 2, "tp2-dp2 > dp4 bwd (k = 4/2, X/2)");
    r = plan("dp4+ckpt", "tp4"); /* narrowing 4 → 1 */
    check_move(&r.fwd, TSL_RELAYOUT_GATHER, 4, 1, "dp4 > tp4 fwd (k = 4/1, X/1)");
    check_move(&r.bwd, TSL_RELAYOUT_SLICE, 1, 0, "dp4 > tp4 bwd");
    r = plan("tp4", "sdp4+ckpt"); /* widening 1 → 4 */
    check_move(&r.fwd, TSL_RELAYOUT_SLICE, 1, 0, "tp4 > sdp4 fwd");
    check_move(&r.bwd, TSL_RELAYOUT_GATHER, 4, 1, "tp4 > sdp4 bwd (k = 4/1, X/1)");
    r = plan("sdp4+ckpt", "tp2-dp2"); /* narrowing 4 → 2: quarters p inside halves p/2 */
    check_move(&r.fwd, TSL_RELAYOUT_GATHER, 2, 2, "sdp4 > tp2-dp2 fwd (k = 4/2, X/2)");
    check_move(&r.bwd, TSL_RELAYOUT_SLICE, 1, 0, "sdp4 > tp2-dp2 bwd");
    r = plan("dp4", "sdp4+ckpt"); /* one layout: DP vs SDP and CKPT do not matter */
    check_move(&r.fwd, TSL_RELAYOUT_NONE, 1, 0, "dp4 > sdp4 fwd");
    check_move(&r.bwd, TSL_RELAYOUT_NONE, 1, 0, "dp4 > sdp4 bwd");
}

/* layouts_in_stage's second plan, dp2-tp2 > tp2-dp2 > dp2-tp2 > dp4 > tp4: every
 * forward gathers; data innermost against TP innermost does not nest, so those
 * gather the whole micro-batch over k = w_H. */
static void exec_stage_b(void)
{
    tsl_relayout_t r = plan("dp2-tp2", "tp2-dp2"); /* rank 1 holds half 1, needs half 0 */
    check_move(&r.fwd, TSL_RELAYOUT_WHOLE, 2, 1, "dp2-tp2 > tp2-dp2 fwd");
    check_move(&r.bwd, TSL_RELAYOUT_WHOLE, 2, 1, "dp2-tp2 > tp2-dp2 bwd");
    r = plan("tp2-dp2", "dp2-tp2+ckpt");
    check_move(&r.fwd, TSL_RELAYOUT_WHOLE, 2, 1, "tp2-dp2 > dp2-tp2 fwd");
    check_move(&r.bwd, TSL_RELAYOUT_WHOLE, 2, 1, "tp2-dp2 > dp2-tp2 bwd");
    r = plan("dp2-tp2+ckpt", "dp4"); /* rank 1 holds half 1, needs quarter 1 */
    check_move(&r.fwd, TSL_RELAYOUT_WHOLE, 2, 1, "dp2-tp2 > dp4 fwd (whole over w_H = 2)");
    check_move(&r.bwd, TSL_RELAYOUT_WHOLE, 4, 1, "dp2-tp2 > dp4 bwd (whole over w_H = 4)");
    r = plan("dp4", "tp4");
    check_move(&r.fwd, TSL_RELAYOUT_GATHER, 4, 1, "dp4 > tp4 fwd");
}

/* A stage of G devices whose two layers take strategies a then b. */
static void two_layer_plan(const tsl_strategy_t *a, const tsl_strategy_t *b, uint32_t G,
                           tsl_plan_t *p)
{
    tsl_plan_init(p);
    p->valid = true;
    p->pp = 1;
    p->n_devices = G;
    p->n_layers = 2;
    p->micro_batch = 2 * G; /* every data width divides it */
    p->n_micro = 1;
    p->global_batch = p->micro_batch;
    p->stages[0] = (tsl_plan_stage_t){
        .first_layer = 0, .n_layers = 2, .first_device = 0, .n_devices = G, .inflight = 1};
    p->layer[0] = *a;
    p->layer[1] = *b;
}

/* One direction on every rank: the executor's kind, group size and the samples
 * the group gathers (size × held) against the planner's move. */
static int agree_dir(const tsl_exec_move_t *x, const tsl_exec_group_t *groups,
                     const tsl_relayout_move_t *m, uint32_t mb)
{
    switch (m->kind) {
    case TSL_RELAYOUT_NONE: return x->kind == TSL_EXEC_MOVE_NONE;
    case TSL_RELAYOUT_SLICE: return x->kind == TSL_EXEC_MOVE_SLICE;
    case TSL_RELAYOUT_GATHER:
    case TSL_RELAYOUT_WHOLE:
        return x->kind == TSL_EXEC_MOVE_GATHER && x->group >= 0 && groups[x->group].size == m->k &&
               m->k * x->from_b == mb / m->width;
    }
    return 0;
}

/* Every pair of strategies of a G-device stage (Takeaway #3: no DP × SDP mix, which
 * the executor refuses), on every rank. */
static void agree_with_executor(uint32_t G, uint32_t *pairs, uint32_t *gathers, uint32_t *wholes)
{
    static tsl_strategy_t all[TSL_STRATEGY_MAX];
    static uint32_t layout[TSL_STRATEGY_MAX];
    static tsl_plan_t p;
    uint32_t scratch[3 * 64];
    tsl_err_t err = {0};
    tsl_strategy_opts_t o = tsl_strategy_opts_default();
    o.allow_ckpt = false;
    int n = tsl_strategy_enumerate(G, &o, all, layout, TSL_STRATEGY_MAX, &err);
    CHECK(n > 0, "enumerate %u: %s", G, err.msg);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            tsl_relayout_t r;
            CHECK(tsl_relayout_plan(&all[i], &all[j], NULL, 0, scratch, &r, &err) == 0, "%s",
                  err.msg);
            two_layer_plan(&all[i], &all[j], G, &p);
            (*pairs)++;
            *gathers += r.fwd.kind == TSL_RELAYOUT_GATHER;
            *wholes += r.fwd.kind == TSL_RELAYOUT_WHOLE;
            for (uint32_t me = 0; me < G; me++) {
                tsl_exec_layer_t L[2];
                tsl_exec_group_t *groups = NULL;
                uint32_t ng = 0, ns = 0;
                if (tsl_exec_stage_layout(&p, 0, me, L, &groups, &ng, &ns, &err) != 0) {
                    CHECK(0, "executor refused G %u pair %d > %d: %s", G, i, j, err.msg);
                    return;
                }
                int ok = agree_dir(&L[1].in_fwd, groups, &r.fwd, p.micro_batch) &&
                         agree_dir(&L[1].in_bwd, groups, &r.bwd, p.micro_batch);
                if (!ok && bad++ < 5) {
                    char a[64], b[64];
                    tsl_strategy_format(&all[i], a, sizeof(a));
                    tsl_strategy_format(&all[j], b, sizeof(b));
                    CHECK(0, "G %u %s > %s rank %u: planner %s/%s k %u/%u, executor kinds %d/%d", G,
                          a, b, me, tsl_relayout_kind_name(r.fwd.kind),
                          tsl_relayout_kind_name(r.bwd.kind), r.fwd.k, r.bwd.k,
                          (int)L[1].in_fwd.kind, (int)L[1].in_bwd.kind);
                }
                free(groups);
            }
            /* Slice-Gather's pairs: a slice one way is a gather by need the other */
            bool paired =
                (r.fwd.kind == TSL_RELAYOUT_SLICE) == (r.bwd.kind == TSL_RELAYOUT_GATHER) &&
                (r.fwd.kind == TSL_RELAYOUT_WHOLE) == (r.bwd.kind == TSL_RELAYOUT_WHOLE) &&
                (r.fwd.kind == TSL_RELAYOUT_NONE) == tsl_strategy_same_layout(&all[i], &all[j]);
            CHECK(paired, "G %u pair %d > %d: forward %s, backward %s", G, i, j,
                  tsl_relayout_kind_name(r.fwd.kind), tsl_relayout_kind_name(r.bwd.kind));
        }
    }
}

static void exhaustive(void)
{
    static const uint32_t sizes[] = {1, 2, 4, 6, 8, 12, 16};
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        uint32_t pairs = 0, gathers = 0, wholes = 0;
        agree_with_executor(sizes[s], &pairs, &gathers, &wholes);
        printf("G %2u: %u strategy pairs agree with the executor (%u gather by need, %u whole "
               "forward)\n",
               sizes[s], pairs, gathers, wholes);
        if (sizes[s] >= 4)
            CHECK(gathers > 0 && wholes > 0, "G %u: both gathers occur", sizes[s]);
    }
}

/* One rank's side of one direction of a move, from tsl_exec_stage_layout. */
typedef struct side {
    tsl_exec_move_t mv;
    tsl_exec_group_t g;  /* the move's group (GATHER) */
    uint32_t held, need; /* first sample held, first wanted */
} side_t;

/* Every rank's side of the move between the two layers of a 2-layer stage plan p;
 * fwd: the activation (layer 0's samples held, layer 1's wanted), else its gradient. */
static void sides_of(const tsl_plan_t *p, bool fwd, side_t *out)
{
    uint32_t G = p->stages[0].n_devices;
    for (uint32_t me = 0; me < G; me++) {
        tsl_exec_layer_t L[2];
        tsl_exec_group_t *groups = NULL;
        uint32_t ng = 0, ns = 0;
        tsl_err_t err = {0};
        CHECK(tsl_exec_stage_layout(p, 0, me, L, &groups, &ng, &ns, &err) == 0, "%s", err.msg);
        const tsl_exec_layer_t *h = fwd ? &L[0] : &L[1], *n = fwd ? &L[1] : &L[0];
        out[me].mv = fwd ? L[1].in_fwd : L[1].in_bwd;
        out[me].g = out[me].mv.group >= 0 ? groups[out[me].mv.group] : (tsl_exec_group_t){0};
        out[me].held = h->dw_index * h->b;
        out[me].need = n->dw_index * n->b;
        free(groups);
    }
}

/* The executor's moves deliver what each rank needs: a slice lies in what it holds;
 * a gather's members, in key order, hold consecutive pieces whose concatenation
 * starts `offset` samples before the rank's need and covers it. */
static void check_delivers(const side_t *x, uint32_t G, const char *what)
{
    for (uint32_t me = 0; me < G; me++) {
        const tsl_exec_move_t *m = &x[me].mv;
        if (m->kind != TSL_EXEC_MOVE_GATHER) {
            uint32_t off = m->kind == TSL_EXEC_MOVE_SLICE ? m->offset : 0;
            CHECK(x[me].held + off == x[me].need && off + m->to_b <= m->from_b,
                  "%s rank %u: a local move misses its samples", what, me);
            continue;
        }
        uint32_t base = UINT32_MAX, members = 0;
        for (uint32_t q = 0; q < G; q++)
            if (x[q].mv.kind == TSL_EXEC_MOVE_GATHER && x[q].g.color == x[me].g.color &&
                x[q].mv.group == m->group && x[q].g.key == 0)
                base = x[q].held;
        for (uint32_t q = 0; q < G; q++) {
            if (x[q].mv.kind != TSL_EXEC_MOVE_GATHER || x[q].mv.group != m->group ||
                x[q].g.color != x[me].g.color)
                continue;
            members++;
            CHECK(x[q].held == base + (uint32_t)x[q].g.key * m->from_b,
                  "%s rank %u: member %u's piece is out of key order", what, me, q);
        }
        CHECK(members == x[me].g.size && base + m->offset == x[me].need &&
                  m->offset + m->to_b <= members * m->from_b,
              "%s rank %u: the gather (%u members from %u) misses samples [%u, +%u)", what, me,
              members, base, x[me].need, m->to_b);
    }
}

/*
 * The bytes the executor moves are the bytes the search prices: for a few pairs
 * on one node of A100s (every link the node's NVLink, bw), one micro-batch of mb,
 * each rank of a gather receives (size − 1) · held samples of X / mb bytes each,
 * which must be tsl_cost_transition's time × bw, (1 − 1/k) · X / width; a slice or
 * nothing moves no byte and is priced 0. And every move delivers the rank's need.
 */
static void priced_bytes(void)
{
    static const char *pairs[][2] = {
        {"dp4", "tp4"},         {"tp4", "dp4"},         {"tp2-dp2", "dp4"},
        {"dp2-tp2", "tp2-dp2"}, {"dp2-tp2", "dp4"},     {"dp4", "sdp4"},
        {"dp8", "tp2-dp4"},     {"dp2-tp4", "tp2-dp4"}, {"tp2-sdp4", "dp4-tp2"},
    };
    tsl_model_t md;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    tsl_layer_t l = {
        .kind = TSL_LAYER_ENCODER, .seq_len = 128, .hidden = 256, .ffn_hidden = 1024, .heads = 4};
    tsl_model_init(&md, "one-layer");
    CHECK(tsl_model_add(&md, &l, &err) == 0, "%s", err.msg);
    CHECK(tsl_cluster_parse_spec(&c, "8xA100-80G", &err) == 0, "%s", err.msg);
    double bw = c.nodes[0].intra_bw, per_sample = (double)md.layers[0].bnd_act_bytes;
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        tsl_strategy_t a = parse(pairs[i][0]), b = parse(pairs[i][1]);
        uint32_t G = tsl_strategy_group_size(&a), scratch[3 * 8];
        static tsl_plan_t p;
        static side_t x[8];
        tsl_cost_env_t env;
        tsl_relayout_t r;
        tsl_transition_cost_t t;
        two_layer_plan(&a, &b, G, &p);
        CHECK(tsl_cost_env_init(&env, &c, 0, G, &err) == 0 &&
                  tsl_relayout_plan(&a, &b, &c, 0, scratch, &r, &err) == 0,
              "%s", err.msg);
        tsl_cost_transition(&env, &md.layers[0], &r, p.micro_batch, &t);
        for (int fwd = 1; fwd >= 0; fwd--) {
            char what[64];
            snprintf(what, sizeof(what), "%s > %s %s", pairs[i][0], pairs[i][1],
                     fwd ? "fwd" : "bwd");
            sides_of(&p, fwd, x);
            check_delivers(x, G, what);
            double priced = (fwd ? t.fwd_s : t.bwd_s) * bw;
            for (uint32_t me = 0; me < G; me++) {
                const tsl_exec_move_t *m = &x[me].mv;
                double got = m->kind == TSL_EXEC_MOVE_GATHER
                                 ? (double)(x[me].g.size - 1) * m->from_b * per_sample
                                 : 0.0;
                CHECK_NEAR(got, priced, REL, "%s rank %u: executor moves %.0f B, priced %.0f B",
                           what, me, got, priced);
            }
            printf("%-24s %-6s %8.0f B per rank, as priced\n", what,
                   tsl_relayout_kind_name(fwd ? r.fwd.kind : r.bwd.kind), priced);
        }
    }
    tsl_model_free(&md);
    tsl_cluster_free(&c);
}

/* Λ per stage size: what the search's R tables are per layer class (Λ × Λ). Without
 * DP × SDP mixes a layout is (t, data inner or TP inner), t | G: for 8 devices
 * tp8, data8, and t = 2, 4 each way = 6; 16: 8; 32: 10. */
static void layout_counts(void)
{
    static tsl_strategy_t all[TSL_STRATEGY_MAX];
    static uint32_t layout[TSL_STRATEGY_MAX];
    static const uint32_t G[] = {8, 16, 32}, want[] = {6, 8, 10};
    tsl_strategy_opts_t o = tsl_strategy_opts_default();
    o.allow_sp = o.allow_zero = o.allow_selective = true; /* twins share their tree's layout */
    for (int g = 0; g < 3; g++) {
        tsl_err_t err = {0};
        int n = tsl_strategy_enumerate(G[g], &o, all, layout, TSL_STRATEGY_MAX, &err);
        uint32_t k = 0;
        for (int i = 0; i < n; i++)
            k = layout[i] + 1 > k ? layout[i] + 1 : k;
        printf("G %u: %d strategies, %u layouts\n", G[g], n, k);
        CHECK(n > 0 && k == want[g], "G %u: %u layouts, want %u", G[g], k, want[g]);
    }
}

static void bad_input(void)
{
    tsl_strategy_t a = parse("dp4"), b = parse("tp8");
    tsl_relayout_t r;
    uint32_t scratch[3 * 8];
    tsl_err_t err = {0};
    CHECK(tsl_relayout_plan(&a, &b, NULL, 0, scratch, &r, &err) == -1 &&
              strstr(err.msg, "span 4 and 8 devices"),
          "group sizes differ: %s", err.msg);
    CHECK(tsl_relayout_plan(&a, &a, NULL, 0, NULL, &r, &err) == -1 && strstr(err.msg, "scratch"),
          "no scratch: %s", err.msg);
    tsl_cluster_t c;
    CHECK(tsl_cluster_parse_spec(&c, "4xA100-80G", &err) == 0, "%s", err.msg);
    CHECK(tsl_relayout_plan(&a, &a, &c, 2, scratch, &r, &err) == -1 &&
              strstr(err.msg, "outside the cluster"),
          "block outside: %s", err.msg);
    CHECK(tsl_relayout_plan(&a, &a, &c, 0, scratch, &r, &err) == 0 &&
              r.fwd.kind == TSL_RELAYOUT_NONE && r.fwd.bw == INFINITY,
          "same layout on a cluster: nothing moves");
    tsl_cluster_free(&c);
}

/* Σ over the layer boundaries of stage s of plan p — inside it, and for s > 0 the
 * one from stage s − 1's last layer to its first (priced on stage s's devices, as
 * the executor moves it there): R's forward and backward parts (recomputed pair by
 * pair) and the layers' own forward and forward+backward times, all for one
 * micro-batch; the number of layout changes. */
typedef struct stage_sum {
    double r_fwd, r_bwd, fwd, fb;
    uint32_t changes;
} stage_sum_t;

static stage_sum_t stage_sum(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_plan_t *p,
                             uint32_t s)
{
    stage_sum_t out = {0, 0, 0, 0, 0};
    const tsl_plan_stage_t *st = &p->stages[s];
    tsl_cost_env_t env;
    tsl_err_t err = {0};
    uint32_t *scratch = calloc(3 * (size_t)st->n_devices, sizeof(uint32_t));
    CHECK(scratch && tsl_cost_env_init(&env, c, st->first_device, st->n_devices, &err) == 0, "%s",
          err.msg);
    for (uint32_t i = st->first_layer; i < st->first_layer + st->n_layers; i++) {
        tsl_layer_cost_t lc;
        tsl_cost_layer(&env, &m->layers[i], &p->layer[i], NULL, p->micro_batch, &lc);
        out.fwd += lc.fwd_s;
        out.fb += lc.fwd_s + lc.bwd_s;
        if (i == 0)
            continue;
        tsl_relayout_t mv;
        tsl_transition_cost_t t;
        CHECK(tsl_relayout_plan(&p->layer[i - 1], &p->layer[i], c, st->first_device, scratch, &mv,
                                &err) == 0,
              "%s", err.msg);
        tsl_cost_transition(&env, &m->layers[i], &mv, p->micro_batch, &t);
        out.r_fwd += t.fwd_s;
        out.r_bwd += t.bwd_s;
        out.changes += !tsl_strategy_same_layout(&p->layer[i - 1], &p->layer[i]);
    }
    free(scratch);
    return out;
}

/*
 * A given stage of 4 A100s, three equal encoders as DP4 → TP4 → DP4, one
 * micro-batch of 4. X = bnd · 4; bw the node's NVLink. DP4 → TP4 narrows: forward
 * gathers 3/4 · X over 4 ranks, backward slices; TP4 → DP4 widens: forward
 * slices, backward gathers 3/4 · X. The stage pays 3/2 · X / bw in all, 3/4 of it
 * in forward — where the old price was 2 · (3/4 · X / 1 + 3/4 · X / 4) = 15/8 X.
 */
static void eval_by_hand(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    tsl_layer_t l = gpt2_medium(512);
    tsl_model_init(&m, "three-layers");
    for (int i = 0; i < 3; i++)
        CHECK(tsl_model_add(&m, &l, &err) == 0, "%s", err.msg);
    CHECK(tsl_cluster_parse_spec(&c, "4xA100-80G", &err) == 0, "%s", err.msg);
    tsl_request_t r;
    tsl_request_init(&r);
    tsl_plan_t g, out;
    tsl_plan_init(&g);
    g.pp = 1;
    g.n_layers = 3;
    g.micro_batch = 4;
    g.n_micro = 1;
    g.global_batch = 4;
    g.layer[0] = parse("dp4");
    g.layer[1] = parse("tp4");
    g.layer[2] = parse("dp4");
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == 0, "eval: %s", err.msg);
    double X = (double)m.layers[1].bnd_act_bytes * 4, bw = c.nodes[0].intra_bw;
    stage_sum_t sum = stage_sum(&m, &c, &out, 0);
    CHECK_NEAR(sum.r_fwd, 0.75 * X / bw, REL, "R forward: dp4 > tp4 gathers 3/4 X");
    CHECK_NEAR(sum.r_bwd, 0.75 * X / bw, REL, "R backward: tp4 > dp4 gathers 3/4 X");
    CHECK_NEAR(out.stages[0].time_nosync_s - sum.fb, 1.5 * X / bw, REL,
               "the stage pays 3/2 X / bw (old price 15/8 X / bw)");
    CHECK_NEAR(out.stages[0].fwd_s - sum.fwd, 0.75 * X / bw, REL,
               "the forward part holds the forward gather only");
    printf("dp4 > tp4 > dp4, X = %.0f B: R %.3g s (forward %.3g s), old price %.3g s\n", X,
           sum.r_fwd + sum.r_bwd, sum.r_fwd, 15.0 / 8 * X / bw);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

/* Stage 1's time less its layers' and its p2p, and its forward part less its
 * layers' forward, of the given plan of two stages of 4 A100s (four equal
 * encoders, one micro-batch of 4): layers 0-1 as `a`, layers 2-3 as `b`. */
static void boundary_plan(const char *a, const char *b, double *extra, double *extra_fwd,
                          double *x_over_bw)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_err_t err = {0};
    tsl_layer_t l = gpt2_medium(512);
    tsl_model_init(&m, "four-layers");
    for (int i = 0; i < 4; i++)
        CHECK(tsl_model_add(&m, &l, &err) == 0, "%s", err.msg);
    CHECK(tsl_cluster_parse_spec(&c, "8xA100-80G", &err) == 0, "%s", err.msg);
    tsl_request_t r;
    tsl_request_init(&r);
    tsl_plan_t g, out;
    tsl_plan_init(&g);
    g.pp = 2;
    g.n_layers = 4;
    g.micro_batch = 4;
    g.n_micro = 1;
    g.global_batch = 4;
    g.layer[0] = g.layer[1] = parse(a);
    g.layer[2] = g.layer[3] = parse(b);
    CHECK(tsl_eval_plan(&m, &c, &r, &g, &out, &err) == 0, "eval: %s", err.msg);
    stage_sum_t s0 = stage_sum(&m, &c, &out, 0), s1 = stage_sum(&m, &c, &out, 1);
    CHECK_NEAR(out.stages[0].time_nosync_s - out.stages[0].p2p_s, s0.fb, REL,
               "%s | %s: stage 0 pays its layers only", a, b);
    *extra = out.stages[1].time_nosync_s - out.stages[1].p2p_s - s1.fb;
    *extra_fwd = out.stages[1].fwd_s - s1.fwd;
    *x_over_bw = (double)m.layers[2].bnd_act_bytes * 4 / c.nodes[0].intra_bw;
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

/*
 * The stage boundary, by hand: stage 0 (devices 0-3) ends dp4, stage 1 (4-7)
 * starts tp4. Each rank of stage 1 receives its partner's quarter of the
 * micro-batch (X / 4) and needs all of it: forward gathers 3/4 · X over its 4
 * ranks on the node's NVLink, backward slices — R = 3/4 · X / bw, all of it in
 * forward, on stage 1. tp4 → dp4 the other way round: forward slices, backward
 * gathers 3/4 · X. Equal layouts (dp4 | dp4): nothing extra.
 */
static void boundary_by_hand(void)
{
    double extra, extra_fwd, xb;
    boundary_plan("dp4", "tp4", &extra, &extra_fwd, &xb);
    CHECK_NEAR(extra, 0.75 * xb, REL, "dp4 | tp4: stage 1 pays 3/4 X / bw");
    CHECK_NEAR(extra_fwd, 0.75 * xb, REL, "dp4 | tp4: in forward");
    printf("stage boundary dp4 | tp4: R %.3g s on stage 1 (forward %.3g s)\n", extra, extra_fwd);
    boundary_plan("tp4", "dp4", &extra, &extra_fwd, &xb);
    CHECK_NEAR(extra, 0.75 * xb, REL, "tp4 | dp4: stage 1 pays 3/4 X / bw");
    CHECK_NEAR(extra_fwd, 0.0, REL, "tp4 | dp4: in backward");
    boundary_plan("dp4", "dp4", &extra, &extra_fwd, &xb);
    CHECK_NEAR(extra, 0.0, REL, "dp4 | dp4: nothing at the boundary");
    CHECK_NEAR(extra_fwd, 0.0, REL, "dp4 | dp4: nothing in forward");
}

/*
 * The search prices R by the pair: the best plan for a small GPT on 8 GPUs (the
 * one tests/test_exec.c runs) and on 2 × 8 changes layouts inside its stages;
 * every stage's time less its layers' is the R of its changes, recomputed pair
 * by pair, and its forward part the forward moves only. Which plan wins is not
 * asserted: R is. Untied, as test_exec.c's (a tied head keeps the embedding's layout).
 */
static void searched(const char *cluster, uint32_t batch)
{
    tsl_model_t m;
    tsl_cluster_t c;
    gpt_tiny_tied(&m, 4, false);
    tsl_search_result_t *res = search_on(&m, &c, cluster, batch, 0, 0);
    const tsl_plan_t *p = &res->best;
    uint32_t changes = 0;
    double r_all = 0;
    for (uint32_t s = 0; p->valid && !p->sublayer && s < p->pp; s++) {
        const tsl_plan_stage_t *st = &p->stages[s];
        stage_sum_t sum = stage_sum(&m, &c, p, s);
        changes += sum.changes;
        r_all += sum.r_fwd + sum.r_bwd;
        CHECK_NEAR(st->time_nosync_s - st->p2p_s - sum.fb, sum.r_fwd + sum.r_bwd, REL,
                   "%s stage %u: time less layers = R", cluster, s);
        CHECK_NEAR(st->fwd_s - sum.fwd, sum.r_fwd, REL, "%s stage %u: forward R", cluster, s);
    }
    printf("searched on %s: pp %u, micro-batch %u x %u, %u layout changes, R %.3g s per "
           "micro-batch\n",
           cluster, p->pp, p->micro_batch, p->n_micro, changes, r_all);
    CHECK(p->valid && !p->sublayer && changes >= 1, "%s: the plan changes layouts (%u)", cluster,
          changes);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
    free(res);
}

#define GB 1e9

/* One move of the short-cut against the plain reference's, bit for bit. */
static bool same_move(const tsl_relayout_move_t *a, const tsl_relayout_move_t *b)
{
    return a->kind == b->kind && a->k == b->k && a->width == b->width &&
           memcmp(&a->bw, &b->bw, sizeof a->bw) == 0;
}

/* Every pair of layouts of a G-device block at `first` of c (c NULL: the kinds
 * alone), tsl_relayout_plan_floor (the one walk of a gather by need) against
 * tsl_relayout_plan_plain, the floor made inside and given; at most max_layouts of
 * the layouts, spread over the enumeration. Returns the gathers by need compared. */
static uint32_t fast_agrees(const char *name, const tsl_cluster_t *c, uint32_t G, uint32_t first,
                            uint32_t max_layouts)
{
    static tsl_strategy_t all[TSL_STRATEGY_MAX], rep[TSL_STRATEGY_MAX];
    static uint32_t layout[TSL_STRATEGY_MAX];
    tsl_err_t err = {0};
    tsl_strategy_opts_t o = tsl_strategy_opts_default();
    o.allow_ckpt = false;
    o.takeaway3 = false; /* DP × SDP trees too: TP between two data levels (dp2-tp2-sdp4) */
    int n = tsl_strategy_enumerate(G, &o, all, layout, TSL_STRATEGY_MAX, &err);
    CHECK(n > 0, "enumerate %u: %s", G, err.msg);
    uint32_t K = 0;
    for (int i = 0; i < n; i++) { /* each layout's first strategy */
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = layout[j] == layout[i];
        if (!seen)
            rep[K++] = all[i];
    }
    uint32_t step = K > max_layouts ? (K + max_layouts - 1) / max_layouts : 1, gathers = 0;
    uint32_t *scratch = malloc(3 * (size_t)G * sizeof *scratch);
    CHECK(scratch != NULL, "scratch of %u", G);
    double floor = c != NULL ? tsl_relayout_links_floor(c, first, G) : -1.0;
    for (uint32_t a = 0; a < K; a += step)
        for (uint32_t b = 0; b < K; b += step)
            for (int given = 0; given < 2; given++) {
                tsl_relayout_t f, pl;
                memset(&f, 0xa5, sizeof f);
                memset(&pl, 0x5a, sizeof pl);
                double fl = given ? floor : -1.0;
                CHECK(tsl_relayout_plan_floor(&rep[a], &rep[b], c, first, fl, scratch, &f, &err) ==
                              0 &&
                          tsl_relayout_plan_plain(&rep[a], &rep[b], c, first, fl, scratch, &pl,
                                                  &err) == 0,
                      "%s: %s", name, err.msg);
                if (!same_move(&f.fwd, &pl.fwd) || !same_move(&f.bwd, &pl.bwd)) {
                    char x[64], y[64];
                    tsl_strategy_format(&rep[a], x, sizeof x);
                    tsl_strategy_format(&rep[b], y, sizeof y);
                    CHECK(0,
                          "%s G %u at %u%s: %s > %s fast %s/%s k %u/%u bw %.17g/%.17g, plain "
                          "%s/%s k %u/%u bw %.17g/%.17g",
                          name, G, first, given ? " (floor given)" : "", x, y,
                          tsl_relayout_kind_name(f.fwd.kind), tsl_relayout_kind_name(f.bwd.kind),
                          f.fwd.k, f.bwd.k, f.fwd.bw, f.bwd.bw, tsl_relayout_kind_name(pl.fwd.kind),
                          tsl_relayout_kind_name(pl.bwd.kind), pl.fwd.k, pl.bwd.k, pl.fwd.bw,
                          pl.bwd.bw);
                }
                gathers += f.fwd.kind == TSL_RELAYOUT_GATHER;
            }
    free(scratch);
    return gathers;
}

static void parse_cluster(const char *spec, tsl_cluster_t *c)
{
    tsl_err_t err = {0};
    CHECK(tsl_cluster_parse_spec(c, spec, &err) == 0, "%s: %s", spec, err.msg);
}

/* Mixed nodes (mixed_cluster.h), 12 to 150 GB/s inside, 1 to 4 NICs; matrix: two slow
 * pairs and a fast one between nodes (the ring of a group over nodes 1 and 6 closes
 * on its slowest link). */
static void mixed_cluster(tsl_cluster_t *c, bool matrix)
{
    static const mixed_pair_t pairs[] = {{1, 6, 3 * GB}, {0, 3, 5 * GB}, {4, 9, 40 * GB}};
    mixed_links_t links[MIXED_NODES];
    for (uint32_t i = 0; i < MIXED_NODES; i++)
        links[i] = (mixed_links_t){.intra_bw = mixed_gpus(i) == 2 ? 12 * GB
                                               : i == 7           ? 100 * GB
                                                                  : 150 * GB,
                                   .n_nics = 1 + i % 4,
                                   .nic_bw = 25 * GB};
    mixed_cluster_build(c, links, pairs, matrix ? 3 : 0);
}

/* tsl_relayout_plan_floor's short-cuts (the gather by need tested and priced in one
 * walk, group numbers from the positions' digits, the backward kind from the
 * forward one) against the plain walks of tsl_relayout_plan_plain, bit for bit:
 * no cluster;
 * HGX nodes; 1-NIC A100 nodes; NVL72-style domains, whole and with a short last
 * one; NVL16; mixed nodes with and without a pair matrix; blocks on and off node
 * boundaries; and blocks of thousands of devices on a 2,048-node cluster. */
static void fast_vs_plain(void)
{
    static const uint32_t sizes[] = {4, 8, 12, 16, 24, 32, 48, 64};
    uint32_t gathers = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        gathers += fast_agrees("no cluster", NULL, sizes[i], 0, 64);
    static const char *specs[] = {"64x8xH100-80G:8xib400", "64x8xA100-80G:ib200",
                                  "36x4xGB200:nvl72:4xib800", "24x4xGB200:nvl72:4xib800",
                                  "32x4xGB200:nvl16:2xib400"};
    static const uint32_t blocks[][2] = {{8, 0},   {16, 4},  {24, 12}, {32, 0},  {48, 40},
                                         {64, 64}, {96, 20}, {128, 0}, {256, 8}, {72, 0}};
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
        tsl_cluster_t c;
        parse_cluster(specs[s], &c);
        for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++)
            if (blocks[b][0] + blocks[b][1] <= c.n_devices)
                gathers += fast_agrees(specs[s], &c, blocks[b][0], blocks[b][1], 24);
        tsl_cluster_free(&c);
    }
    for (int matrix = 0; matrix < 2; matrix++) {
        tsl_cluster_t c;
        mixed_cluster(&c, matrix);
        const char *name = matrix ? "mixed, pair matrix" : "mixed";
        static const uint32_t mblocks[][2] = {{64, 0},  {32, 8}, {24, 20}, {16, 30},
                                              {40, 16}, {12, 2}, {60, 4}};
        for (size_t b = 0; b < sizeof mblocks / sizeof mblocks[0]; b++)
            gathers += fast_agrees(name, &c, mblocks[b][0], mblocks[b][1], 48);
        tsl_cluster_free(&c);
    }
    tsl_cluster_t big;
    parse_cluster("2048x8xH100-80G:8xib400", &big);
    gathers += fast_agrees("2048 nodes", &big, 4096, 8192, 10);
    gathers += fast_agrees("2048 nodes", &big, 2000, 12, 10);
    tsl_cluster_free(&big);
    printf("fast vs plain: %u gathers by need compared, every move equal\n", gathers);
    CHECK(gathers > 1000, "%u gathers by need compared", gathers);
}

/* Every pair of strategies (recompute twins included) of a G-device block at `first`
 * of c through the kept tables (tsl_relayout_plan_kept), twice, against
 * tsl_relayout_plan_floor, bit for bit. Returns the pairs compared; *after0 the big
 * table's moves after the first pass. */
static uint32_t kept_agrees(const tsl_cluster_t *c, uint32_t G, uint32_t first, tsl_kept_t *big,
                            tsl_kept_t *small, uint32_t *after0)
{
    static tsl_strategy_t all[TSL_STRATEGY_MAX];
    tsl_err_t err = {0};
    tsl_strategy_opts_t o = tsl_strategy_opts_default(); /* CKPT twins: the same levels */
    int n = tsl_strategy_enumerate(G, &o, all, NULL, TSL_STRATEGY_MAX, &err);
    CHECK(n > 0, "enumerate %u: %s", G, err.msg);
    uint32_t *scratch = malloc(3 * (size_t)G * sizeof *scratch), pairs = 0;
    CHECK(scratch != NULL, "scratch of %u", G);
    double floor = tsl_relayout_links_floor(c, first, G);
    for (int pass = 0; pass < 2 && scratch; pass++) {
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) {
                tsl_relayout_t want, got, got_small;
                CHECK(tsl_relayout_plan_floor(&all[a], &all[b], c, first, floor, scratch, &want,
                                              &err) == 0 &&
                          tsl_relayout_plan_kept(big, &all[a], &all[b], c, first, floor, scratch,
                                                 &got, &err) == 0 &&
                          tsl_relayout_plan_kept(small, &all[a], &all[b], c, first, floor, scratch,
                                                 &got_small, &err) == 0,
                      "G %u at %u: %s", G, first, err.msg);
                CHECK(same_move(&want.fwd, &got.fwd) && same_move(&want.bwd, &got.bwd) &&
                          same_move(&want.fwd, &got_small.fwd) &&
                          same_move(&want.bwd, &got_small.bwd),
                      "G %u at %u, strategies %d > %d pass %d: kept moves", G, first, a, b, pass);
                pairs++;
            }
        if (pass == 0)
            *after0 = big->n;
    }
    free(scratch);
    return pairs;
}

/* The moves kept by block and pair of layouts (tsl_relayout_plan_kept, the search's
 * table: cost.h tsl_cost_walks_t) are the moves made afresh, bit for bit: read back
 * (nothing made again), with recompute twins sharing one move, in a table that fills
 * up and starts afresh; a pair that cannot move (group sizes differ) fails each time
 * and keeps nothing. */
static void kept_moves(void)
{
    tsl_cluster_t c;
    parse_cluster("64x8xH100-80G:8xib400", &c);
    tsl_kept_t big, small;
    tsl_relayout_kept_init(&big, 64, 4096);
    tsl_relayout_kept_init(&small, 64, 64); /* never grows: starts afresh */
    static const uint32_t blocks[][2] = {{16, 0}, {16, 4}, {32, 64}, {64, 0}};
    uint32_t pairs = 0;
    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
        uint32_t before = big.n, after0 = 0,
                 n = kept_agrees(&c, blocks[b][0], blocks[b][1], &big, &small, &after0);
        pairs += n / 2;
        CHECK(after0 == big.n, "G %u at %u: %u moves after pass 0, %u after pass 1", blocks[b][0],
              blocks[b][1], after0, big.n);
        CHECK(big.n - before < n / 2, "G %u at %u: %u moves kept for %u pairs (twins share)",
              blocks[b][0], blocks[b][1], big.n - before, n / 2);
    }
    CHECK(big.restarts == 0 && big.cap > 64, "the table grew (%u slots, %u moves)", big.cap, big.n);
    CHECK(small.restarts > 0 && small.cap == 64, "the small table started afresh %u times",
          small.restarts);
    tsl_strategy_t a = parse("dp8"), b = parse("tp4");
    tsl_relayout_t out;
    uint32_t scratch[24], kept = big.n;
    tsl_err_t err = {0};
    for (int i = 0; i < 2; i++)
        CHECK(tsl_relayout_plan_kept(&big, &a, &b, &c, 0, -1.0, scratch, &out, &err) == -1 &&
                  big.n == kept,
              "sizes 8 and 4: refused (%s), nothing kept", err.msg);
    printf("kept moves: %u pairs compared, %u moves kept\n", pairs, big.n);
    tsl_kept_free(&big);
    tsl_kept_free(&small);
    tsl_cluster_free(&c);
}

int main(void)
{
    exec_stage_a();
    exec_stage_b();
    exhaustive();
    priced_bytes();
    layout_counts();
    bad_input();
    fast_vs_plain();
    kept_moves();
    eval_by_hand();
    boundary_by_hand();
    searched("8xA100-80G", 8);
    searched("2x8xA100-80G:ib200", 16);
    return CHECK_DONE();
}

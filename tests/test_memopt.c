/*
 * test_memopt.c — H3T memory switches and solvers (planner/memopt.h).
 *
 * Settings (h3t.txt): Table 2 shapes (BERT-1.8B: 48 layers, h 1024, FFN 16384, 32
 * heads; BERT-6B: FFN 65536, 128 heads; seq 512); Table 1's 8×2080Ti batches
 * (1.8B: 128 and 512; 6B: 8 and 32, over 8 GPUs with no accumulation, so 16, 64,
 * 1 and 4 samples per device); C.3's memory constraint M = 8000 MB on 2080 Ti;
 * C.2's host memory (126 GB for the 2080 Ti node, 503 GB for an A100 node).
 * The CPU Adam rates are assumptions (see cpu_adam below); they add the same time
 * to every plan of a setting and do not change which plan wins.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cluster.h"
#include "memopt.h"
#include "model.h"

#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * 1024.0 * 1024.0)

static int build_model(tsl_model_t *m, const char *name, uint32_t layers, uint32_t h, uint32_t f,
                       uint32_t a, uint32_t seq, uint32_t vocab)
{
    tsl_err_t err = {0};
    tsl_model_init(m, name);
    tsl_layer_t e = {0};
    e.kind = TSL_LAYER_EMBEDDING;
    e.seq_len = seq;
    e.hidden = h;
    e.vocab = vocab;
    e.positions = seq;
    tsl_layer_t l = {0};
    l.kind = TSL_LAYER_ENCODER;
    l.seq_len = seq;
    l.hidden = h;
    l.ffn_hidden = f;
    l.heads = a;
    l.unfused_attn = true; /* H3T's BERT (2022) kept the attention scores */
    tsl_layer_t hd = {0};
    hd.kind = TSL_LAYER_HEAD;
    hd.seq_len = seq;
    hd.hidden = h;
    hd.vocab = vocab;
    hd.tied_head = true;
    if (tsl_model_add(m, &e, &err) != 0 || tsl_model_add_n(m, &l, layers, &err) != 0 ||
        tsl_model_add(m, &hd, &err) != 0) {
        fprintf(stderr, "building %s: %s\n", name, err.msg);
        return -1;
    }
    return 0;
}

static int make_ctx(tsl_memopt_ctx_t *ctx, tsl_cluster_t *c, const char *spec, double cpu_gib,
                    uint32_t micro, uint64_t limit, double cpu_adam_node, double gpu_adam)
{
    tsl_err_t err = {0};
    if (tsl_cluster_parse_spec(c, spec, &err) != 0) {
        fprintf(stderr, "cluster %s: %s\n", spec, err.msg);
        return -1;
    }
    for (uint32_t k = 0; k < c->n_nodes; k++)
        c->nodes[k].cpu_mem_bytes = (uint64_t)(cpu_gib * GIB);
    tsl_memopt_ctx_init(ctx);
    ctx->micro_batch = micro;
    if (tsl_memopt_ctx_from_cluster(ctx, c, 0, c->n_devices, limit, &err) != 0) {
        fprintf(stderr, "ctx %s: %s\n", spec, err.msg);
        return -1;
    }
    ctx->cpu_adam_params_per_s = cpu_adam_node / ctx->devices_per_node;
    ctx->gpu_adam_params_per_s = gpu_adam;
    return 0;
}

/* CPU Adam rate of a node (an assumption): a 2-socket Xeon streams ~30 B per
 * parameter (read fp32 master, m, v, fp16 grad; write master, m, v, fp16 param)
 * at ~60 GB/s (E5-2680 v4) or ~200 GB/s (Xeon 8358): 2e9 and 6.5e9 params/s,
 * shared by the node's GPUs. GPU Adam (plain ZeRO-3) at the same ~30 B/param
 * from device memory: 616 GB/s (2080 Ti) and 1.5 TB/s (A100). */
#define CPU_ADAM_2080TI_NODE 2e9
#define CPU_ADAM_A100_NODE   6.5e9
#define GPU_ADAM_2080TI      2e10
#define GPU_ADAM_A100        5e10

/* Independent peak: max_i (Σ_all resident + Σ_{j<i} carried + local_peak_i). */
static uint64_t peak_by_formula(const tsl_layer_t *L, uint32_t n, const tsl_memopt_ctx_t *ctx,
                                tsl_memopt_mode_t mode, const uint8_t *sw)
{
    uint64_t res = 0, best = 0, carried = 0;
    for (uint32_t i = 0; i < n; i++) {
        tsl_memopt_seg_t s;
        tsl_memopt_segment(L, n, i, ctx, mode, i ? sw[i - 1] : 0, sw[i], i + 1 < n ? sw[i + 1] : 0,
                           &s);
        res += s.resident_bytes;
    }
    for (uint32_t i = 0; i < n; i++) {
        tsl_memopt_seg_t s;
        tsl_memopt_segment(L, n, i, ctx, mode, i ? sw[i - 1] : 0, sw[i], i + 1 < n ? sw[i + 1] : 0,
                           &s);
        uint64_t v = res + carried + s.local_peak_bytes;
        if (v > best)
            best = v;
        carried += s.carried_bytes;
    }
    return best + ctx->reserved_bytes;
}

static uint64_t rng_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void print_plan(const char *what, const tsl_memopt_plan_t *p, const tsl_memopt_ctx_t *c)
{
    printf("  %-8s %-13s step %8.3f s  peak %6.2f GiB / %.2f  host %6.1f GiB/node  on: remat "
           "%u offload %u partition %u lazy %u econ-f %u econ-b %u (of %u)\n",
           what, tsl_memopt_mode_name(p->mode), p->step_s, p->gpu_peak_bytes / GIB,
           c->gpu_mem_limit_bytes / GIB, p->cpu_bytes_per_node / GIB, p->n_on[0], p->n_on[1],
           p->n_on[2], p->n_on[3], p->n_on[4], p->n_on[5], p->n_layers);
}

/* ---- the memory model ------------------------------------------------------ */

static void test_memory_model(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_memopt_ctx_t ctx;
    tsl_err_t err = {0};
    if (build_model(&m, "BERT-1.8B", 48, 1024, 16384, 32, 512, 30522) != 0 ||
        make_ctx(&ctx, &c, "8x2080Ti-10G", 126, 16, (uint64_t)(8000 * MIB), 2e9, GPU_ADAM_2080TI) !=
            0) {
        CHECK(0, "setup failed");
        return;
    }
    const tsl_layer_t *L = m.layers;
    const uint32_t n = m.n_layers;
    CHECK(ctx.coll_shares_pcie, "2080 Ti has no NVLink: collectives share PCIe");
    uint8_t sw[TSL_MODEL_MAX_LAYERS], sw2[TSL_MODEL_MAX_LAYERS];
    uint64_t rng = 0x1234567u;
    int remat_bad = 0, off_bad = 0, formula_bad = 0, econ_bad = 0, cpu_bad = 0, seg_bad = 0;
    for (int trial = 0; trial < 200; trial++) {
        tsl_memopt_mode_t mode = (tsl_memopt_mode_t)(trial % 2);
        for (uint32_t i = 0; i < n; i++)
            sw[i] = (uint8_t)(rng_next(&rng) & TSL_MEMOPT_ALL);
        tsl_memopt_plan_t a, b;
        if (tsl_memopt_evaluate(L, n, &ctx, mode, sw, &a, &err) != 0) {
            CHECK(0, "evaluate: %s", err.msg);
            break;
        }
        if (a.gpu_peak_bytes != peak_by_formula(L, n, &ctx, mode, a.sw))
            formula_bad++;
        uint32_t i = (uint32_t)(rng_next(&rng) % n);
        /* Remat on: never a higher peak, never a shorter step. */
        memcpy(sw2, sw, n);
        sw[i] &= (uint8_t)~TSL_MEMOPT_REMAT;
        sw2[i] |= TSL_MEMOPT_REMAT;
        tsl_memopt_evaluate(L, n, &ctx, mode, sw, &a, &err);
        tsl_memopt_evaluate(L, n, &ctx, mode, sw2, &b, &err);
        if (b.gpu_peak_bytes > a.gpu_peak_bytes || b.step_s < a.step_s)
            remat_bad++;
        /* Offload on: the hidden state moves to the host — exactly its bytes more on
         * the host, no more on the GPU, and the layer carries exactly that much less. */
        memcpy(sw2, sw, n);
        sw[i] &= (uint8_t)~TSL_MEMOPT_OFFLOAD_HIDDEN;
        sw2[i] |= TSL_MEMOPT_OFFLOAD_HIDDEN;
        tsl_memopt_evaluate(L, n, &ctx, mode, sw, &a, &err);
        tsl_memopt_evaluate(L, n, &ctx, mode, sw2, &b, &err);
        uint64_t h = (uint64_t)ctx.micro_batch * L[i].bnd_act_bytes;
        if (b.gpu_peak_bytes > a.gpu_peak_bytes)
            off_bad++;
        if (b.cpu_bytes_per_device != a.cpu_bytes_per_device + h ||
            b.cpu_bytes_per_node != b.cpu_bytes_per_device * ctx.devices_per_node)
            cpu_bad++;
        tsl_memopt_seg_t s0, s1;
        tsl_memopt_segment(L, n, i, &ctx, mode, 0, sw[i], 0, &s0);
        tsl_memopt_segment(L, n, i, &ctx, mode, 0, sw2[i], 0, &s1);
        if (s0.carried_bytes != s1.carried_bytes + h)
            seg_bad++;
        /* Economical modes: never faster, never more memory in the segment. */
        uint32_t base = sw[i] & ~(uint32_t)(TSL_MEMOPT_ECON_FWD | TSL_MEMOPT_ECON_BWD);
        uint32_t nb = i + 1 < n ? sw[i + 1] : 0, pb = i ? sw[i - 1] : 0;
        tsl_memopt_segment(L, n, i, &ctx, mode, pb, base, nb, &s0);
        tsl_memopt_segment(L, n, i, &ctx, mode, pb,
                           base | TSL_MEMOPT_ECON_FWD | TSL_MEMOPT_ECON_BWD, nb, &s1);
        if (s1.time_s < s0.time_s || s1.local_peak_bytes > s0.local_peak_bytes)
            econ_bad++;
    }
    CHECK(formula_bad == 0, "%d plans whose peak differs from the decomposition formula",
          formula_bad);
    CHECK(remat_bad == 0, "%d cases where remat raised the peak or shortened the step", remat_bad);
    CHECK(off_bad == 0, "%d cases where hidden offload raised the GPU peak", off_bad);
    CHECK(cpu_bad == 0, "%d cases where offload did not add exactly the hidden bytes to the host",
          cpu_bad);
    CHECK(seg_bad == 0, "%d cases where offload did not take the hidden bytes off the GPU",
          seg_bad);
    CHECK(econ_bad == 0, "%d cases where economical mode was faster or used more memory", econ_bad);

    /* Partition and lazy prefetch: the bytes they take off the GPU. */
    tsl_memopt_seg_t s0, s1;
    uint32_t i = 10;
    uint64_t full = 2 * L[i].params, part = (full + ctx.zero_degree - 1) / ctx.zero_degree;
    tsl_memopt_segment(L, n, i, &ctx, TSL_MEMOPT_MODE_OFFLOAD, 0, 0, 0, &s0);
    tsl_memopt_segment(L, n, i, &ctx, TSL_MEMOPT_MODE_OFFLOAD, 0, TSL_MEMOPT_PARTITION, 0, &s1);
    CHECK(s0.carried_bytes == s1.carried_bytes + full, "partition frees the gathered parameters");
    {
        tsl_memopt_plan_t p0, p1;
        memset(sw, 0, n);
        tsl_memopt_evaluate(L, n, &ctx, TSL_MEMOPT_MODE_OFFLOAD, sw, &p0, &err);
        sw[i] = TSL_MEMOPT_PARTITION;
        tsl_memopt_evaluate(L, n, &ctx, TSL_MEMOPT_MODE_OFFLOAD, sw, &p1, &err);
        CHECK(p1.step_s > p0.step_s && p1.gpu_peak_bytes < p0.gpu_peak_bytes,
              "partition: a second all-gather (%.4f -> %.4f s) for less memory", p0.step_s,
              p1.step_s);
    }
    tsl_memopt_segment(L, n, i, &ctx, TSL_MEMOPT_MODE_OFFLOAD, 0, TSL_MEMOPT_LAZY_PREFETCH, 0, &s1);
    CHECK(s0.resident_bytes == part && s1.resident_bytes == 0,
          "lazy prefetch removes the resident partition (%llu -> %llu)",
          (unsigned long long)s0.resident_bytes, (unsigned long long)s1.resident_bytes);
    tsl_memopt_segment(L, n, i, &ctx, TSL_MEMOPT_MODE_ZERO3, 0, 0, 0, &s1);
    CHECK(s1.resident_bytes == (16 * L[i].params + ctx.zero_degree - 1) / ctx.zero_degree,
          "ZeRO-3 on the GPU keeps 16 B/param / n resident");

    /* All switches on in every layer: no resident parameters, no carried bytes. */
    memset(sw, TSL_MEMOPT_ALL, n);
    tsl_memopt_plan_t on, off;
    tsl_memopt_evaluate(L, n, &ctx, TSL_MEMOPT_MODE_OFFLOAD, sw, &on, &err);
    memset(sw, 0, n);
    tsl_memopt_evaluate(L, n, &ctx, TSL_MEMOPT_MODE_OFFLOAD, sw, &off, &err);
    CHECK(on.gpu_peak_bytes < off.gpu_peak_bytes / 4, "all-on peak %.2f GiB vs all-off %.2f GiB",
          on.gpu_peak_bytes / GIB, off.gpu_peak_bytes / GIB);
    CHECK(on.step_s > off.step_s, "switches cost time: all-on %.3f s, all-off %.3f s", on.step_s,
          off.step_s);
    CHECK(on.n_on[0] == n && on.n_on[3] == n, "switch counts");

    /* Bad input names the field. */
    tsl_memopt_ctx_t bad = ctx;
    bad.pcie_bytes_per_s = 0;
    CHECK(tsl_memopt_evaluate(L, n, &bad, TSL_MEMOPT_MODE_OFFLOAD, sw, &on, &err) == -1 &&
              strstr(err.msg, "pcie_bytes_per_s") != NULL,
          "bad pcie: %s", err.msg);
    bad = ctx;
    bad.gpu_mem_limit_bytes = 0;
    CHECK(tsl_memopt_ctx_validate(&bad, &err) == -1 && strstr(err.msg, "gpu_mem_limit_bytes"),
          "bad limit: %s", err.msg);
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

/* ---- the DP against exhaustive search on a small model ---------------------- */

static void test_dp_exhaustive(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_memopt_ctx_t ctx;
    tsl_err_t err = {0};
    /* 5 encoder layers of BERT-1.8B shape (+ embedding and head = 7 segments). */
    if (build_model(&m, "toy", 5, 1024, 16384, 32, 512, 30522) != 0 ||
        make_ctx(&ctx, &c, "8x2080Ti-10G", 126, 16, (uint64_t)(8000 * MIB), 2e9, GPU_ADAM_2080TI) !=
            0) {
        CHECK(0, "setup failed");
        return;
    }
    const uint32_t n = m.n_layers;
    ctx.allowed_switches = TSL_MEMOPT_REMAT | TSL_MEMOPT_OFFLOAD_HIDDEN | TSL_MEMOPT_PARTITION;
    ctx.allowed_modes = 1u << TSL_MEMOPT_MODE_OFFLOAD;
    uint8_t sw[16];
    tsl_memopt_plan_t on, off, p;
    memset(sw, (int)ctx.allowed_switches, n);
    tsl_memopt_evaluate(m.layers, n, &ctx, TSL_MEMOPT_MODE_OFFLOAD, sw, &on, &err);
    memset(sw, 0, n);
    tsl_memopt_evaluate(m.layers, n, &ctx, TSL_MEMOPT_MODE_OFFLOAD, sw, &off, &err);
    tsl_memopt_ws_t ws;
    if (tsl_memopt_ws_init(&ws, n, 128, 0, &err) != 0) {
        CHECK(0, "ws: %s", err.msg);
        goto out;
    }
    for (int tight = 0; tight < 3; tight++) {
        /* limits between the all-on and all-off peaks */
        double f = tight == 0 ? 0.25 : tight == 1 ? 0.5 : 0.9;
        ctx.gpu_mem_limit_bytes =
            on.gpu_peak_bytes + (uint64_t)(f * (double)(off.gpu_peak_bytes - on.gpu_peak_bytes));
        double best = INFINITY;
        uint32_t total = 1;
        for (uint32_t i = 0; i < n; i++)
            total *= 8;
        for (uint32_t code = 0; code < total; code++) {
            /* digit i in base 8 = layer i's set over remat (1), offload (2), partition (4) */
            uint32_t x = code;
            for (uint32_t i = 0; i < n; i++, x /= 8)
                sw[i] = (uint8_t)(x % 8);
            tsl_memopt_evaluate(m.layers, n, &ctx, TSL_MEMOPT_MODE_OFFLOAD, sw, &p, &err);
            if (p.valid && p.step_s < best)
                best = p.step_s;
        }
        tsl_memopt_opts_t o;
        tsl_memopt_opts_init(&o, TSL_MEMOPT_SOLVER_DP);
        tsl_memopt_stats_t st, st2;
        int rc = tsl_memopt_solve(m.layers, n, &ctx, &o, &ws, &p, &st, &err);
        CHECK(rc == 0 && p.valid, "dp on toy (limit %.0f%%): %s", f * 100, err.msg);
        CHECK(p.gpu_peak_bytes <= ctx.gpu_mem_limit_bytes, "dp peak within the limit");
        CHECK(p.step_s >= best * (1 - 1e-12) && p.step_s <= best * 1.001,
              "dp %.6f s vs exhaustive optimum %.6f s (limit at %.0f%%)", p.step_s, best, f * 100);
        o.dp_no_dominance = true;
        tsl_memopt_plan_t q;
        rc = tsl_memopt_solve(m.layers, n, &ctx, &o, &ws, &q, &st2, &err);
        CHECK(rc == 0 && q.step_s <= best * 1.001, "dp without pruning 2: %.6f s", q.step_s);
        CHECK(st.dp_kept < st2.dp_kept, "pruning 2 keeps fewer states (%llu vs %llu)",
              (unsigned long long)st.dp_kept, (unsigned long long)st2.dp_kept);
        printf("toy %u segments, limit %.2f GiB: exhaustive %.6f s, dp %.6f s (kept %llu states; "
               "%llu without pruning 2)\n",
               n, ctx.gpu_mem_limit_bytes / GIB, best, p.step_s, (unsigned long long)st.dp_kept,
               (unsigned long long)st2.dp_kept);
    }
    tsl_memopt_ws_free(&ws);
out:
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

/* ---- H3T's 8×2080Ti settings ------------------------------------------------- */

static void run_setting(const char *name, uint32_t f, uint32_t a, uint32_t global_batch,
                        tsl_memopt_ws_t *ws)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_memopt_ctx_t ctx;
    tsl_err_t err = {0};
    uint32_t micro = global_batch / 8;
    if (build_model(&m, name, 48, 1024, f, a, 512, 30522) != 0 ||
        make_ctx(&ctx, &c, "8x2080Ti-10G", 126, micro, (uint64_t)(8000 * MIB), CPU_ADAM_2080TI_NODE,
                 GPU_ADAM_2080TI) != 0) {
        CHECK(0, "setup failed");
        return;
    }
    printf("%s, global batch %u (%u per device), 8x2080Ti, M = 8000 MB:\n", name, global_batch,
           micro);
    tsl_memopt_plan_t plans[TSL_MEMOPT_SOLVER_COUNT];
    int rcs[TSL_MEMOPT_SOLVER_COUNT];
    for (int s = 0; s < TSL_MEMOPT_SOLVER_COUNT; s++) {
        tsl_memopt_opts_t o;
        tsl_memopt_opts_init(&o, (tsl_memopt_solver_t)s);
        o.random_samples = 2000;
        rcs[s] = tsl_memopt_solve(m.layers, m.n_layers, &ctx, &o, ws, &plans[s], NULL, &err);
        if (rcs[s] == 0)
            print_plan(tsl_memopt_solver_name((tsl_memopt_solver_t)s), &plans[s], &ctx);
        else
            printf("  %-8s no plan: %s\n", tsl_memopt_solver_name((tsl_memopt_solver_t)s), err.msg);
    }
    const tsl_memopt_plan_t *dp = &plans[TSL_MEMOPT_SOLVER_DP];
    const tsl_memopt_plan_t *on = &plans[TSL_MEMOPT_SOLVER_ALL_ON];
    const tsl_memopt_plan_t *gr = &plans[TSL_MEMOPT_SOLVER_GREEDY];
    CHECK(rcs[TSL_MEMOPT_SOLVER_DP] == 0 && dp->valid, "%s b%u: dp found a plan", name,
          global_batch);
    CHECK(dp->gpu_peak_bytes <= ctx.gpu_mem_limit_bytes,
          "%s b%u: dp peak %.3f GiB exceeds the limit %.3f GiB", name, global_batch,
          dp->gpu_peak_bytes / GIB, ctx.gpu_mem_limit_bytes / GIB);
    CHECK(peak_by_formula(m.layers, m.n_layers, &ctx, dp->mode, dp->sw) == dp->gpu_peak_bytes,
          "%s b%u: dp peak matches the independent formula", name, global_batch);
    CHECK(dp->cpu_bytes_per_node <= ctx.cpu_mem_bytes, "%s b%u: host memory", name, global_batch);
    if (rcs[TSL_MEMOPT_SOLVER_ALL_ON] == 0)
        CHECK(dp->step_s <= on->step_s, "%s b%u: dp %.4f s slower than all-on %.4f s", name,
              global_batch, dp->step_s, on->step_s);
    else
        CHECK(0, "%s b%u: all-on does not fit", name, global_batch);
    CHECK(rcs[TSL_MEMOPT_SOLVER_GREEDY] == 0 && dp->step_s <= gr->step_s * 1.02,
          "%s b%u: dp %.4f s more than 2%% slower than greedy %.4f s", name, global_batch,
          dp->step_s, gr->step_s);

    /* The same within H3T's own global mode (ZeRO-3 + CPU offload). */
    tsl_memopt_ctx_t h3t = ctx;
    h3t.allowed_modes = 1u << TSL_MEMOPT_MODE_OFFLOAD;
    tsl_memopt_plan_t p3[3];
    const tsl_memopt_solver_t which[3] = {TSL_MEMOPT_SOLVER_ALL_ON, TSL_MEMOPT_SOLVER_GREEDY,
                                          TSL_MEMOPT_SOLVER_DP};
    int ok3 = 1;
    for (int k = 0; k < 3; k++) {
        tsl_memopt_opts_t o;
        tsl_memopt_opts_init(&o, which[k]);
        ok3 &= tsl_memopt_solve(m.layers, m.n_layers, &h3t, &o, ws, &p3[k], NULL, &err) == 0;
        if (ok3)
            printf("  %-8s zero3-offload only: step %8.3f s  peak %6.2f GiB\n",
                   tsl_memopt_solver_name(which[k]), p3[k].step_s, p3[k].gpu_peak_bytes / GIB);
    }
    CHECK(ok3, "%s b%u: offload mode: %s", name, global_batch, err.msg);
    if (ok3) {
        CHECK(p3[2].gpu_peak_bytes <= h3t.gpu_mem_limit_bytes, "%s b%u: offload-mode dp peak", name,
              global_batch);
        CHECK(p3[2].step_s <= p3[0].step_s && p3[2].step_s <= p3[1].step_s * 1.02,
              "%s b%u: offload-mode dp %.4f s vs all-on %.4f s, greedy %.4f s", name, global_batch,
              p3[2].step_s, p3[0].step_s, p3[1].step_s);
    }
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

/* BERT-1.8B (48 layers, batch 16) on 8 2080 Ti at 8000 MB, H3T's Table 1 setting. */
static int bert18_on_2080ti(tsl_model_t *m, tsl_cluster_t *c, tsl_memopt_ctx_t *ctx)
{
    if (build_model(m, "BERT-1.8B", 48, 1024, 16384, 32, 512, 30522) != 0 ||
        make_ctx(ctx, c, "8x2080Ti-10G", 126, 16, (uint64_t)(8000 * MIB), CPU_ADAM_2080TI_NODE,
                 GPU_ADAM_2080TI) != 0) {
        CHECK(0, "setup failed");
        return -1;
    }
    return 0;
}

static void test_random_reproducible(tsl_memopt_ws_t *ws)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_memopt_ctx_t ctx;
    tsl_err_t err = {0};
    if (bert18_on_2080ti(&m, &c, &ctx) != 0)
        return;
    /* Uniform samples leave remat off in half the layers: only a loose limit lets
     * some of them fit (at 8000 MB none does, as H3T's Table 1 reports). */
    ctx.gpu_mem_limit_bytes = (uint64_t)(40 * GIB);
    tsl_memopt_opts_t o;
    tsl_memopt_opts_init(&o, TSL_MEMOPT_SOLVER_RANDOM);
    o.seed = 42;
    o.random_samples = 500;
    tsl_memopt_plan_t a, b, d;
    int ra = tsl_memopt_solve(m.layers, m.n_layers, &ctx, &o, ws, &a, NULL, &err);
    int rb = tsl_memopt_solve(m.layers, m.n_layers, &ctx, &o, NULL, &b, NULL, &err);
    CHECK(ra == 0 && rb == 0, "random found plans: %s", err.msg);
    CHECK(memcmp(&a, &b, sizeof(a)) == 0, "random with seed 42 is reproducible byte for byte");
    o.seed = 43;
    tsl_memopt_solve(m.layers, m.n_layers, &ctx, &o, ws, &d, NULL, &err);
    CHECK(memcmp(a.sw, d.sw, m.n_layers) != 0, "another seed samples other sequences");
    printf("random (seed 42, 500 samples, M 40 GiB): %.4f s; seed 43: %.4f s\n", a.step_s,
           d.step_s);
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

/* ---- GPT-3 175B on 64×A100-40G ------------------------------------------------ */

static void test_gpt3(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_memopt_ctx_t ctx;
    tsl_err_t err = {0};
    const uint64_t limit = 40000000000ull; /* 40 GB */
    if (build_model(&m, "GPT3-175B", 96, 12288, 49152, 96, 2048, 50257) != 0 ||
        make_ctx(&ctx, &c, "8x8xA100-40G:ib200", 503, 1, limit, CPU_ADAM_A100_NODE,
                 GPU_ADAM_A100) != 0) {
        CHECK(0, "setup failed");
        return;
    }
    const uint32_t n = m.n_layers;
    CHECK(ctx.zero_degree == 64 && ctx.devices_per_node == 8 && !ctx.coll_shares_pcie,
          "64 devices, 8 per node, NVLink inside");
    printf("GPT3-175B (%.1fB params), seq 2048, micro-batch 1 per device, 64xA100-40G, M 40 GB, "
           "503 GiB host per node:\n",
           tsl_model_params(&m) / 1e9);
    uint8_t sw[TSL_MODEL_MAX_LAYERS];
    tsl_memopt_plan_t p;
    /* Without the switches: nothing fits. */
    memset(sw, 0, n);
    for (int mode = 0; mode < TSL_MEMOPT_MODE_COUNT; mode++) {
        tsl_memopt_evaluate(m.layers, n, &ctx, (tsl_memopt_mode_t)mode, sw, &p, &err);
        CHECK(!p.valid && p.gpu_peak_bytes > limit, "%s without switches peaks at %.1f GiB",
              tsl_memopt_mode_name((tsl_memopt_mode_t)mode), p.gpu_peak_bytes / GIB);
        printf("  no switches, %-13s peak %8.1f GiB (does not fit)\n",
               tsl_memopt_mode_name((tsl_memopt_mode_t)mode), p.gpu_peak_bytes / GIB);
    }
    memset(sw, TSL_MEMOPT_ALL, n);
    tsl_memopt_evaluate(m.layers, n, &ctx, TSL_MEMOPT_MODE_ZERO3, sw, &p, &err);
    CHECK(!p.valid,
          "plain ZeRO-3 (states on the GPU) does not fit even with every switch on: "
          "%.1f GiB",
          p.gpu_peak_bytes / GIB);
    printf("  zero3 (no CPU offload), every switch on: peak %.1f GiB (does not fit)\n",
           p.gpu_peak_bytes / GIB);
    tsl_memopt_opts_t o;
    tsl_memopt_opts_init(&o, TSL_MEMOPT_SOLVER_DP);
    tsl_memopt_ctx_t no = ctx;
    no.allowed_switches = 0;
    CHECK(tsl_memopt_solve(m.layers, n, &no, &o, NULL, &p, NULL, &err) == -1 &&
              strstr(err.msg, "gpu_mem_limit_bytes") != NULL,
          "dp without switches fails: %s", err.msg);
    no = ctx;
    no.allowed_modes = 1u << TSL_MEMOPT_MODE_ZERO3;
    CHECK(tsl_memopt_solve(m.layers, n, &no, &o, NULL, &p, NULL, &err) == -1,
          "dp without CPU offload fails");

    /* With them: every solver. */
    tsl_memopt_plan_t dp;
    int rc_dp = -1;
    for (int s = 0; s < TSL_MEMOPT_SOLVER_COUNT; s++) {
        tsl_memopt_opts_init(&o, (tsl_memopt_solver_t)s);
        o.random_samples = 1000;
        int rc = tsl_memopt_solve(m.layers, n, &ctx, &o, NULL, &p, NULL, &err);
        if (rc == 0)
            print_plan(tsl_memopt_solver_name((tsl_memopt_solver_t)s), &p, &ctx);
        else
            printf("  %-8s no plan: %s\n", tsl_memopt_solver_name((tsl_memopt_solver_t)s), err.msg);
        if (s == TSL_MEMOPT_SOLVER_DP) {
            rc_dp = rc;
            dp = p;
        }
    }
    CHECK(rc_dp == 0 && dp.valid, "GPT-3 175B fits with the switches");
    CHECK(dp.gpu_peak_bytes <= limit, "GPU peak %.2f GB <= 40 GB", dp.gpu_peak_bytes / 1e9);
    CHECK(dp.cpu_bytes_per_node <= 503 * (uint64_t)GIB, "host %.1f GiB per node <= 503 GiB",
          dp.cpu_bytes_per_node / GIB);
    CHECK(dp.mode == TSL_MEMOPT_MODE_OFFLOAD, "it needs the CPU offload mode");
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

/* BERT-13B, batch 4096 over 64 A100-40G, M = 25 GiB: the DP's 128 memory levels
 * miss the zero3 plans near the limit that greedy finds (bench/search showed DP
 * 20.735 s vs greedy 20.617 s); greedy is the DP's floor in every mode. */
static void test_dp_floor(tsl_memopt_ws_t *ws)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_memopt_ctx_t ctx;
    tsl_err_t err = {0};
    if (build_model(&m, "BERT-13B", 48, 2048, 65536, 128, 512, 30522) != 0 ||
        make_ctx(&ctx, &c, "8x8xA100-40G:ib200", 503, 4096 / 64, (uint64_t)(25 * GIB),
                 CPU_ADAM_A100_NODE, GPU_ADAM_A100) != 0) {
        CHECK(0, "setup failed");
        return;
    }
    tsl_memopt_plan_t dp, on, gr;
    tsl_memopt_opts_t o;
    tsl_memopt_opts_init(&o, TSL_MEMOPT_SOLVER_DP);
    int rdp = tsl_memopt_solve(m.layers, m.n_layers, &ctx, &o, ws, &dp, NULL, &err);
    tsl_memopt_opts_init(&o, TSL_MEMOPT_SOLVER_ALL_ON);
    int ron = tsl_memopt_solve(m.layers, m.n_layers, &ctx, &o, ws, &on, NULL, &err);
    tsl_memopt_opts_init(&o, TSL_MEMOPT_SOLVER_GREEDY);
    int rgr = tsl_memopt_solve(m.layers, m.n_layers, &ctx, &o, ws, &gr, NULL, &err);
    CHECK(rdp == 0 && ron == 0 && rgr == 0, "BERT-13B b4096: %s", err.msg);
    CHECK(dp.step_s <= on.step_s && dp.step_s <= gr.step_s,
          "BERT-13B b4096: dp %.4f s vs all-on %.4f s, greedy %.4f s", dp.step_s, on.step_s,
          gr.step_s);
    CHECK(dp.gpu_peak_bytes <= ctx.gpu_mem_limit_bytes, "BERT-13B b4096: dp over the limit");
    printf("BERT-13B b4096 on 64xA100: dp %.3f s, greedy %.3f s, all-on %.3f s\n", dp.step_s,
           gr.step_s, on.step_s);
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

/* A set cancel flag stops every solver at its first check: the DP
 * before its first layer, greedy after its all-on sequence, random before its
 * first sample; the error says cancelled, not "no plan fits". */
static void test_cancel(tsl_memopt_ws_t *ws)
{
    atomic_int flag = 1;
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_memopt_ctx_t ctx;
    if (bert18_on_2080ti(&m, &c, &ctx) != 0)
        return;
    tsl_err_t err = {0};
    const tsl_memopt_solver_t solvers[] = {TSL_MEMOPT_SOLVER_DP, TSL_MEMOPT_SOLVER_GREEDY,
                                           TSL_MEMOPT_SOLVER_RANDOM};
    for (size_t i = 0; i < sizeof(solvers) / sizeof(solvers[0]); i++) {
        tsl_memopt_opts_t o;
        tsl_memopt_opts_init(&o, solvers[i]);
        tsl_memopt_plan_t p;
        tsl_memopt_stats_t st;
        int rc = tsl_memopt_solve(m.layers, m.n_layers, &ctx, &o, ws, &p, &st, &err);
        CHECK(rc == 0 || tsl_err_code(&err) == TSL_E_NOFIT, "%s without a cancel flag: %s",
              tsl_memopt_solver_name(solvers[i]), err.msg);
        uint64_t full = st.evaluations + st.dp_transitions;
        o.cancel = &flag;
        rc = tsl_memopt_solve(m.layers, m.n_layers, &ctx, &o, ws, &p, &st, &err);
        CHECK(rc == -1 && tsl_err_code(&err) == TSL_E_CANCELLED, "%s cancelled: rc %d, %s",
              tsl_memopt_solver_name(solvers[i]), rc, err.msg);
        CHECK(st.dp_transitions == 0 && st.evaluations <= 1 && full > 1,
              "%s ran on after the flag: %llu transitions, %llu evaluations (full run %llu)",
              tsl_memopt_solver_name(solvers[i]), (unsigned long long)st.dp_transitions,
              (unsigned long long)st.evaluations, (unsigned long long)full);
    }
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

/* fp32 training (tsl_memopt_ctx_fp32): the parameters a device gathers and the
 * gradients it reduce-scatters are 4 bytes, not the 2 of mixed precision, so a layer's
 * resident partition doubles; its compute runs at the fp32 rate, TF32 on an A100: 156
 * against 312 TFLOP/s, twice the time; the states stay 16 B/param. */
static void test_fp32(void)
{
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_memopt_ctx_t mixed, fp32;
    tsl_err_t err = {0};
    if (build_model(&m, "BERT-small", 2, 1024, 4096, 16, 512, 30522) != 0 ||
        make_ctx(&mixed, &c, "1x8xA100-80G", 503, 4, 0, CPU_ADAM_A100_NODE, GPU_ADAM_A100) != 0) {
        CHECK(0, "setup");
        return;
    }
    fp32 = mixed;
    CHECK(tsl_memopt_ctx_fp32(&fp32, &c, 0, 8, false, &err) == 0, "%s", err.msg);
    CHECK(fp32.param_bytes == 4 && fp32.flops_per_s == 0.5 * mixed.flops_per_s,
          "TF32 at half the bf16 rate (%g / %g)", fp32.flops_per_s, mixed.flops_per_s);
    tsl_memopt_seg_t a, b;
    uint32_t sw = TSL_MEMOPT_PARTITION; /* the partition stays resident: part_b */
    tsl_memopt_segment(m.layers, m.n_layers, 1, &mixed, TSL_MEMOPT_MODE_OFFLOAD, sw, sw, sw, &a);
    tsl_memopt_segment(m.layers, m.n_layers, 1, &fp32, TSL_MEMOPT_MODE_OFFLOAD, sw, sw, sw, &b);
    uint64_t params = m.layers[1].params;
    CHECK(a.resident_bytes == (2 * params + 7) / 8 && b.resident_bytes == (4 * params + 7) / 8,
          "the partition: 2 -> 4 B/param / 8 (%llu, %llu, %llu params)",
          (unsigned long long)a.resident_bytes, (unsigned long long)b.resident_bytes,
          (unsigned long long)params);
    CHECK(b.local_peak_bytes > a.local_peak_bytes, "the gathered layer is twice the bytes");
    tsl_memopt_ctx_t one = mixed, one32;
    one.zero_degree = 1; /* no collective: the forward segment is its compute */
    one32 = one;
    CHECK(tsl_memopt_ctx_fp32(&one32, &c, 0, 1, false, &err) == 0, "%s", err.msg);
    tsl_memopt_segment(m.layers, m.n_layers, 1, &one, TSL_MEMOPT_MODE_ZERO3, 0, 0, 0, &a);
    tsl_memopt_segment(m.layers, m.n_layers, 1, &one32, TSL_MEMOPT_MODE_ZERO3, 0, 0, 0, &b);
    CHECK_NEAR(b.fwd_s, 2.0 * a.fwd_s, 1e-12, "the forward at the TF32 rate (%g, %g)", a.fwd_s,
               b.fwd_s);
    one32.param_bytes = 3;
    CHECK(tsl_memopt_ctx_validate(&one32, &err) != 0 && strstr(err.msg, "param_bytes: 3"),
          "3-byte parameters refused: %s", err.msg);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

int main(void)
{
    tsl_err_t err = {0};
    test_memory_model();
    test_dp_exhaustive();
    test_fp32();
    tsl_memopt_ws_t ws;
    if (tsl_memopt_ws_init(&ws, 64, TSL_MEMOPT_DEFAULT_MEM_LEVELS, 0, &err) != 0) {
        CHECK(0, "ws: %s", err.msg);
        return CHECK_DONE();
    }
    run_setting("BERT-1.8B", 16384, 32, 128, &ws);
    run_setting("BERT-1.8B", 16384, 32, 512, &ws);
    run_setting("BERT-6B", 65536, 128, 8, &ws);
    run_setting("BERT-6B", 65536, 128, 32, &ws);
    test_random_reproducible(&ws);
    test_dp_floor(&ws);
    test_cancel(&ws);
    tsl_memopt_ws_free(&ws);
    test_gpt3();
    return CHECK_DONE();
}

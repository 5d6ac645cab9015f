/*
 * prof_emit.c — a profile as JSON (docs/profile-format.md) or as a table.
 * A small printf-based emitter: the GPU machine may have no jansson.
 */
#include "prof.h"

#include <math.h>
#include <string.h>

static void jstr(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* Finite numbers with enough digits to round-trip; JSON has no inf/nan. */
static void jnum(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.9g", v);
    else
        fputs("null", f);
}

#define KS(k, v) (fprintf(f, "%s\"%s\": ", sep, k), jstr(f, v), sep = ", ")
#define KN(k, v) (fprintf(f, "%s\"%s\": ", sep, k), jnum(f, v), sep = ", ")
#define KU(k, v) (fprintf(f, "%s\"%s\": %llu", sep, k, (unsigned long long)(v)), sep = ", ")
#define KB(k, v) (fprintf(f, "%s\"%s\": %s", sep, k, (v) ? "true" : "false"), sep = ", ")

/* Starts item i of an array: the separator, a new line, the brace. */
static const char *item(FILE *f, uint32_t i)
{
    fprintf(f, "%s\n    {", i ? "," : "");
    return "";
}

static void shape_keys(FILE *f, const tsl_prof_shape_t *s0, const char **sepp)
{
    const char *sep = *sepp;
    tsl_prof_shape_t s = tsl_prof_shape_resolved(s0);
    KU("hidden", s.hidden);
    KU("seq_len", s.seq_len);
    KU("heads", s.heads);
    KU("head_dim", s.head_dim);
    KU("ffn_hidden", s.ffn_hidden);
    KS("ffn_kind", s.gated ? "swiglu" : "gelu");
    *sepp = sep;
}

/* The sim backend models the unfused batched-GEMM core and leaves the field empty. */
static const char *attn_core(const tsl_prof_t *p)
{
    return p->attention_core[0] ? p->attention_core : "batched-gemm";
}

int tsl_prof_write_json(FILE *f, const tsl_prof_t *p)
{
    const char *sep = "";
    fputs("{\n  ", f);
    KS("format", "tessel-profile/1");
    KB("simulated", p->simulated);
    KS("backend", p->backend);
    KS("created", p->created);
    KS("command", p->command);
    fputs(",\n  \"hardware\": {", f);
    sep = "";
    KS("gpu", p->hw_gpu);
    KS("link", p->hw_link);
    KU("gpus", p->gpus);
    fputs("},\n  \"device\": {", f);
    sep = "";
    KS("model", p->model);
    KS("uuid", p->uuid);
    KU("memory_total_bytes", p->mem_total_bytes);
    KU("memory_free_bytes", p->mem_free_bytes);
    KU("sm_count", p->sm_count);
    char cc[16];
    snprintf(cc, sizeof(cc), "%u.%u", p->cc_major, p->cc_minor);
    KS("compute_capability", cc);
    KS("driver_version", p->driver_version);
    KS("cuda_runtime_version", p->runtime_version);
    KS("cublas_version", p->cublas_version);
    KS("nccl_version", p->nccl_version);
    KU("sm_clock_mhz", p->sm_clock_mhz);
    KU("memory_clock_mhz", p->mem_clock_mhz);
    KU("power_limit_w", p->power_limit_w);
    fputs("},\n  \"conditions\": {", f);
    sep = "";
    KS("dtype", "bf16");
    KS("accumulate", "fp32");
    KS("statistic", "median");
    KU("warmup", p->warmup);
    KU("iterations", p->iters);
    KS("timer", p->simulated ? "none (simulated)" : "cuda-events");
    KS("data", p->simulated ? "none (simulated)" : "uniform random in [-1, 1), never zeros");
    KS("gemm", p->simulated ? "none (simulated)"
                            : "cublasGemmStridedBatchedEx (the executor's cuda device ops), "
                              "CUBLAS_GEMM_DEFAULT, cuBLAS's default workspace");
    fputs("},\n  \"soak\": {", f);
    sep = "";
    const tsl_prof_soak_t *sk = &p->soak;
    KN("max_s", sk->max_s);
    KN("window_s", sk->window_s);
    KN("tolerance", TSL_PROF_SOAK_TOL);
    KU("stable_windows", TSL_PROF_SOAK_STABLE);
    KU("gemm", sk->gemm);
    KU("windows", sk->windows);
    KN("seconds", sk->seconds);
    KB("settled", sk->settled);
    KN("first_tflops", sk->first_tflops);
    KN("last_tflops", sk->last_tflops);
    KN("settled_tflops", sk->settled_tflops);
    KN("spread", sk->spread);
    KN("keep_warm_s", sk->keep_warm_s);
    fputs("},\n  \"gemms\": [", f);
    for (uint32_t i = 0; i < p->n_gemms; i++) {
        const tsl_prof_gemm_t *g = &p->gemms[i];
        sep = item(f, i);
        KS("what", g->what);
        KU("m", g->m);
        KU("n", g->n);
        KU("k", g->k);
        KU("batch", g->batch);
        KN("flops", g->flops);
        KN("time_s", g->time_s);
        KN("tflops", g->time_s > 0 ? g->flops / g->time_s / 1e12 : 0);
        fputc('}', f);
    }
    fputs("\n  ],\n  \"blocks\": [", f);
    for (uint32_t i = 0; i < p->n_blocks; i++) {
        const tsl_prof_block_t *b = &p->blocks[i];
        sep = item(f, i);
        KS("block", tsl_prof_block_name(b->kind));
        if (b->kind == TSL_PROF_ATTENTION)
            KS("attention_core", attn_core(p));
        shape_keys(f, &b->shape, &sep);
        KU("micro_batch", b->mb);
        KU("tp", b->tp);
        KN("fwd_s", b->fwd_s);
        KN("bwd_s", b->bwd_s);
        KN("fwd_flops", b->fwd_flops);
        KN("fwd_tflops", b->fwd_s > 0 ? b->fwd_flops / b->fwd_s / 1e12 : 0);
        KN("bwd_tflops", b->bwd_s > 0 ? 2 * b->fwd_flops / b->bwd_s / 1e12 : 0);
        KU("memory_bytes", b->mem_bytes);
        fputc('}', f);
    }
    fputs("\n  ],\n  \"bandwidth\": {", f);
    sep = "";
    KN("h2d_gbps", p->h2d_gbps);
    KN("d2h_gbps", p->d2h_gbps);
    KU("host_copy_bytes", p->h2d_bytes);
    KB("pinned", true);
    KN("device_memory_gbps", p->dmem_gbps);
    KU("device_copy_bytes", p->dmem_bytes);
    KS("device_memory_counts", "bytes read + bytes written");
    fputs("},\n  \"collectives\": [", f);
    for (uint32_t i = 0; i < p->n_colls; i++) {
        const tsl_prof_coll_t *c = &p->colls[i];
        sep = item(f, i);
        KS("op", tsl_prof_coll_name(c->op));
        KU("group", c->group);
        KU("bytes", c->bytes);
        KN("time_s", c->time_s);
        KN("algbw_gbps", c->algbw_gbps);
        KN("busbw_gbps", c->busbw_gbps);
        fputc('}', f);
    }
    fputs("\n  ],\n  \"overlap\": [", f);
    for (uint32_t i = 0; i < p->n_overlap; i++) {
        const tsl_prof_overlap_t *o = &p->overlap[i];
        sep = item(f, i);
        KS("comm", o->comm);
        KB("stand_in", o->stand_in);
        KU("gemm_m", o->gemm_m);
        KU("gemm_n", o->gemm_n);
        KU("gemm_k", o->gemm_k);
        KU("comm_bytes", o->comm_bytes);
        KN("gemm_alone_s", o->gemm_alone_s);
        KN("comm_alone_s", o->comm_alone_s);
        KN("gemm_together_s", o->gemm_together_s);
        KN("comm_together_s", o->comm_together_s);
        KN("gemm_slowdown", o->gemm_slowdown);
        KN("comm_slowdown", o->comm_slowdown);
        fputc('}', f);
    }
    fputs("\n  ],\n  ", f);
    sep = "";
    KS("notes", p->notes);
    fputs("\n}\n", f);
    return ferror(f) ? -1 : 0;
}

static const char *human_bytes(uint64_t b, char *buf, size_t cap)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    double v = (double)b;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(buf, cap, "%.4g %s", v, unit[u]);
    return buf;
}

void tsl_prof_print_table(FILE *f, const tsl_prof_t *p)
{
    char b1[32], b2[32];
    fprintf(f, "profile: %s backend%s, hardware %s / %s (%u GPU%s)\n", p->backend,
            p->simulated ? " (SIMULATED: no figure below was measured)" : "", p->hw_gpu, p->hw_link,
            p->gpus, p->gpus == 1 ? "" : "s");
    fprintf(f, "device: %s  uuid %s  SMs %u  cc %u.%u  memory %s total, %s free\n", p->model,
            p->uuid, p->sm_count, p->cc_major, p->cc_minor,
            human_bytes(p->mem_total_bytes, b1, sizeof(b1)),
            human_bytes(p->mem_free_bytes, b2, sizeof(b2)));
    fprintf(f, "versions: driver %s  CUDA runtime %s  cuBLAS %s  NCCL %s\n", p->driver_version,
            p->runtime_version, p->cublas_version, p->nccl_version);
    if (p->sm_clock_mhz != 0)
        fprintf(f, "clocks (NVML, at start): SM %u MHz, memory %u MHz, power limit %u W\n",
                p->sm_clock_mhz, p->mem_clock_mhz, p->power_limit_w);
    fprintf(f, "conditions: bf16 in/out, fp32 accumulate, median of %u after %u warm-up%s\n",
            p->iters, p->warmup, p->simulated ? "" : ", CUDA events, random data");
    const tsl_prof_soak_t *sk = &p->soak;
    if (sk->max_s > 0)
        fprintf(f,
                "soak: %u^3 GEMMs for %.1f s (%u windows of %g s), %s at %.1f TFLOP/s "
                "(first window %.1f)%s\n\n",
                sk->gemm, sk->seconds, sk->windows, sk->window_s,
                sk->settled ? "settled" : "stopped at its cap before settling", sk->settled_tflops,
                sk->first_tflops, sk->keep_warm_s > 0 ? "; filler GEMMs before each figure" : "");
    else
        fprintf(f, "soak: none (--soak 0): the GEMMs may run at the boost clock\n\n");

    fprintf(f, "%-28s %7s %7s %7s %6s %12s %9s\n", "GEMM", "m", "n", "k", "batch", "time",
            "TFLOP/s");
    for (uint32_t i = 0; i < p->n_gemms; i++) {
        const tsl_prof_gemm_t *g = &p->gemms[i];
        fprintf(f, "%-28s %7u %7u %7u %6u %9.1f us %9.1f\n", g->what, g->m, g->n, g->k, g->batch,
                g->time_s * 1e6, g->time_s > 0 ? g->flops / g->time_s / 1e12 : 0);
    }
    fprintf(f, "\n%-9s %5s %5s %4s %4s %3s %3s %10s %10s %8s %8s %10s\n", "block", "h", "s", "a",
            "mb", "tp", "", "fwd", "bwd", "fwdTF/s", "bwdTF/s", "memory");
    for (uint32_t i = 0; i < p->n_blocks; i++) {
        const tsl_prof_block_t *b = &p->blocks[i];
        tsl_prof_shape_t s = tsl_prof_shape_resolved(&b->shape);
        fprintf(f, "%-9s %5u %5u %4u %4u %3u %3s %7.1f us %7.1f us %8.1f %8.1f %10s\n",
                tsl_prof_block_name(b->kind), s.hidden, s.seq_len, s.heads, b->mb, b->tp,
                s.gated ? "glu" : "", b->fwd_s * 1e6, b->bwd_s * 1e6,
                b->fwd_s > 0 ? b->fwd_flops / b->fwd_s / 1e12 : 0,
                b->bwd_s > 0 ? 2 * b->fwd_flops / b->bwd_s / 1e12 : 0,
                human_bytes(b->mem_bytes, b1, sizeof(b1)));
    }
    if (p->attention_core[0] == '\0')
        fprintf(f, "(attention core: batched-gemm QK^T, softmax, PV; layer norm, dropout, biases "
                   "and residual adds are not in these blocks)\n");
    else
        fprintf(f, "(the executor's layers, attention core %s; no dropout, no TP all-reduce)\n",
                p->attention_core);
    fprintf(f,
            "\nbandwidth: H2D %.1f GB/s, D2H %.1f GB/s (pinned, %s), device memory %.0f GB/s "
            "(D2D copy of %s, read + write bytes)\n",
            p->h2d_gbps, p->d2h_gbps, human_bytes(p->h2d_bytes, b1, sizeof(b1)), p->dmem_gbps,
            human_bytes(p->dmem_bytes, b2, sizeof(b2)));
    if (p->n_colls > 0)
        fprintf(f, "\n%-15s %5s %10s %12s %10s %10s\n", "collective", "group", "size", "time",
                "algbw", "busbw");
    for (uint32_t i = 0; i < p->n_colls; i++) {
        const tsl_prof_coll_t *c = &p->colls[i];
        fprintf(f, "%-15s %5u %10s %9.1f us %6.1f GB/s %6.1f GB/s\n", tsl_prof_coll_name(c->op),
                c->group, human_bytes(c->bytes, b1, sizeof(b1)), c->time_s * 1e6, c->algbw_gbps,
                c->busbw_gbps);
    }
    for (uint32_t i = 0; i < p->n_overlap; i++) {
        const tsl_prof_overlap_t *o = &p->overlap[i];
        fprintf(f,
                "\noverlap: GEMM %ux%ux%u loop with %s%s (%s per iteration): GEMM side "
                "%.3fx (%.2f -> %.2f ms), comm side %.3fx (%.2f -> %.2f ms)\n",
                o->gemm_m, o->gemm_n, o->gemm_k, o->comm, o->stand_in ? " (stand-in for NCCL)" : "",
                human_bytes(o->comm_bytes, b1, sizeof(b1)), o->gemm_slowdown, o->gemm_alone_s * 1e3,
                o->gemm_together_s * 1e3, o->comm_slowdown, o->comm_alone_s * 1e3,
                o->comm_together_s * 1e3);
    }
    if (p->notes[0] != '\0')
        fprintf(f, "\nnotes: %s\n", p->notes);
}

/*
 * test_pipeline.c — Galvatron-BMW Eq. 9 by hand, 1F1B in-flight micro-batches,
 * the optimizer steps' tail, and the balance degrees of Eq. 6.
 */
#include <stdbool.h>
#include <stdint.h>

#include "check.h"
#include "ep_overlap.h"
#include "pipeline.h"
#include "pipesim.h"

#define EPS 1e-12

static void test_time(void)
{
    double nosync[] = {1.0, 3.0, 2.0};
    double sync[] = {1.5, 3.5, 2.5};
    /* (m − 1) · max nosync + Σ sync = 3 · 3 + 7.5 */
    CHECK_NEAR(tsl_pipeline_time_s(3, nosync, sync, 4), 16.5, EPS, "Eq. 9, m = 4");
    CHECK_NEAR(tsl_pipeline_time_s(3, nosync, sync, 1), 7.5, EPS, "m = 1: one pass");
    CHECK_NEAR(tsl_pipeline_time_s(1, nosync, sync, 8), 7 * 1.0 + 1.5, EPS, "one stage");
    /* the bottleneck stage, not the first, paces the steady state */
    double flat[] = {2.0, 2.0, 2.0, 2.0}, flat_sync[] = {2.5, 2.5, 2.5, 2.5};
    CHECK_NEAR(tsl_pipeline_time_s(4, flat, flat_sync, 8), 7 * 2.0 + 10.0, EPS, "balanced");
    CHECK(tsl_pipeline_time_s(0, nosync, sync, 4) == 0, "no stages");
    CHECK(tsl_pipeline_time_s(3, nosync, sync, 0) == 0, "no micro-batches");
}

static void test_inflight(void)
{
    uint32_t want_m2[] = {2, 2, 2, 1}, want_m8[] = {4, 3, 2, 1};
    for (uint32_t i = 0; i < 4; i++) {
        CHECK(tsl_pipeline_inflight(i, 4, 2) == want_m2[i], "P 4, m 2, stage %u: %u", i,
              tsl_pipeline_inflight(i, 4, 2));
        CHECK(tsl_pipeline_inflight(i, 4, 8) == want_m8[i], "P 4, m 8, stage %u: %u", i,
              tsl_pipeline_inflight(i, 4, 8));
    }
    CHECK(tsl_pipeline_inflight(0, 1, 16) == 1, "no pipeline: one micro-batch at a time");
    CHECK(tsl_pipeline_inflight(4, 4, 8) == 0, "stage beyond the pipeline");
}

/* torch.distributed.pipelining's receive buffers per micro-batch: an activation
 * buffer on every virtual stage but the first, a gradient buffer on every one but the
 * last. 1F1B at P 4: 1, 2, 2, 1; looped v 2: 3, 4, 4, 3 (virtual stages s and 4 + s);
 * a V at P 4: stage 0 holds virtual stages 0 and 7, the pipeline's ends, so 2; the
 * others 4; one stage: none. */
static void test_recv_buffers(void)
{
    const uint32_t plain[] = {1, 2, 2, 1}, looped[] = {3, 4, 4, 3}, vee[] = {2, 4, 4, 4};
    for (uint32_t s = 0; s < 4; s++) {
        CHECK(tsl_pipeline_recv_buffers(s, 4, 1, false) == plain[s] &&
                  tsl_pipeline_recv_buffers(s, 4, 0, false) == plain[s],
              "1F1B stage %u: %u", s, tsl_pipeline_recv_buffers(s, 4, 1, false));
        CHECK(tsl_pipeline_recv_buffers(s, 4, 2, false) == looped[s], "v 2 stage %u: %u", s,
              tsl_pipeline_recv_buffers(s, 4, 2, false));
        CHECK(tsl_pipeline_recv_buffers(s, 4, 0, true) == vee[s], "V stage %u: %u", s,
              tsl_pipeline_recv_buffers(s, 4, 0, true));
    }
    CHECK(tsl_pipeline_recv_buffers(0, 1, 1, false) == 0 &&
              tsl_pipeline_recv_buffers(0, 1, 0, true) == 0 &&
              tsl_pipeline_recv_buffers(4, 4, 1, false) == 0,
          "one stage, or a stage beyond the pipeline: none");
}

/* Interleaved 1F1B, v = 2 on 2 stages of nosync 2 s (sync 2.5 s), m = 4:
 * m·max + (Σ nosync − max) / v + Σ (sync − nosync) = 8 + 2 / 2 + 1 = 10, against
 * Eq. 9's 3·2 + 5 = 11; v = 1 is Eq. 9 itself. In flight on stage 0: Megatron's
 * (P − 1)·2 + (v − 1)·P = 4 warmup chunk forwards plus one, in chunks of half a
 * stage: ⌈5 / 2⌉ = 3 micro-batches (plain 1F1B: 2); stage 1: ⌈3 / 2⌉ = 2. */
static void test_interleaved(void)
{
    double nosync[] = {2.0, 2.0}, sync[] = {2.5, 2.5};
    CHECK_NEAR(tsl_pipeline_time_interleaved_s(2, nosync, sync, 4, 2), 10.0, EPS, "v 2: %g",
               tsl_pipeline_time_interleaved_s(2, nosync, sync, 4, 2));
    CHECK(tsl_pipeline_time_interleaved_s(2, nosync, sync, 4, 1) ==
              tsl_pipeline_time_s(2, nosync, sync, 4),
          "v 1 is Eq. 9");
    CHECK(tsl_pipeline_inflight_interleaved(0, 2, 4, 2) == 3 &&
              tsl_pipeline_inflight_interleaved(1, 2, 4, 2) == 2,
          "in flight under v 2: %u, %u", tsl_pipeline_inflight_interleaved(0, 2, 4, 2),
          tsl_pipeline_inflight_interleaved(1, 2, 4, 2));
    CHECK(tsl_pipeline_inflight_interleaved(0, 2, 1, 2) == 1, "never more than m");
    CHECK(tsl_pipeline_inflight_interleaved(0, 4, 8, 1) == tsl_pipeline_inflight(0, 4, 8),
          "v 1 is plain 1F1B");
}

/* Megatron-LM's schedule table (schedules.py get_schedule_table at d98e8a6), its
 * own docstring's example: PP 2, N 3, M 5, VP 2 runs micro-batches 0 1 2 0 1 2 3 4
 * 3 4 on chunks 0 0 0 1 1 1 0 0 1 1. N = P is the depth-first order: forward k
 * is chunk (k mod P·v)/P of micro-batch (k / P·v)·P + k mod P. */
static void test_vp_table(void)
{
    const uint32_t mb[] = {0, 1, 2, 0, 1, 2, 3, 4, 3, 4}, ch[] = {0, 0, 0, 1, 1, 1, 0, 0, 1, 1};
    for (uint32_t k = 0; k < 10; k++) {
        uint32_t j, c;
        tsl_pipeline_vp_table(k, 5, 2, 3, &j, &c);
        CHECK(j == mb[k] && c == ch[k], "PP 2 N 3 M 5 VP 2, entry %u: micro %u chunk %u", k, j, c);
    }
    for (uint32_t k = 0; k < 8 * 3; k++) {
        uint32_t j, c;
        tsl_pipeline_vp_table(k, 8, 3, 4, &j, &c);
        CHECK(c == (k % 12) / 4 && j == k / 12 * 4 + k % 4, "N = P 4, v 3, entry %u: %u/%u", k, j,
              c);
    }
    /* warm-up forwards: (P − s − 1)·2 + (v − 1)·N, at most m·v */
    const uint32_t w4[] = {10, 8, 6, 4}, w8[] = {14, 12, 10, 8};
    for (uint32_t s = 0; s < 4; s++)
        CHECK(tsl_pipeline_vp_warmup(s, 4, 8, 2, 4) == w4[s] &&
                  tsl_pipeline_vp_warmup(s, 4, 8, 2, 8) == w8[s],
              "P 4 v 2 m 8, stage %u: %u, %u", s, tsl_pipeline_vp_warmup(s, 4, 8, 2, 4),
              tsl_pipeline_vp_warmup(s, 4, 8, 2, 8));
    CHECK(tsl_pipeline_vp_warmup(0, 4, 2, 2, 4) == 4, "all m·v forwards first");
    /* Megatron's asserts: N in [P, m], m mod N 0 or >= P; 0 is P */
    CHECK(tsl_pipeline_vp_check(4, 8, 0) == 0 && tsl_pipeline_vp_check(4, 8, 4) == 0 &&
              tsl_pipeline_vp_check(4, 8, 8) == 0,
          "P 4, m 8: N 4, 8");
    CHECK(tsl_pipeline_vp_check(4, 8, 3) && tsl_pipeline_vp_check(4, 8, 5) &&
              tsl_pipeline_vp_check(4, 8, 9) && tsl_pipeline_vp_check(4, 6, 0),
          "below P, a last group of 3 < P, above m, m 6 with N = P 4");
    CHECK(tsl_pipeline_vp_check(2, 5, 3) == 0, "the docstring's PP 2 N 3 M 5");
}

/* The walk of the table in order (tsl_pipeline_vp_walk_t) gives each entry's
 * micro-batch and chunk as tsl_pipeline_vp_table does, for every m up to 40, v up to
 * 8 and N from 0 (m) to beyond m: whole groups, a shorter or longer last group, one
 * group. */
static void test_vp_walk(void)
{
    uint32_t differ = 0, entries = 0;
    for (uint32_t m = 1; m <= 40; m++)
        for (uint32_t v = 1; v <= 8; v++)
            for (uint32_t N = 0; N <= m + 2; N++) {
                tsl_pipeline_vp_walk_t w;
                tsl_pipeline_vp_walk_init(&w, m, v, N);
                for (uint32_t k = 0; k < m * v; k++) {
                    uint32_t j, c, wj, wc;
                    tsl_pipeline_vp_table(k, m, v, N, &j, &c);
                    tsl_pipeline_vp_walk_next(&w, &wj, &wc);
                    differ += j != wj || c != wc;
                    entries++;
                }
            }
    CHECK(differ == 0, "%u of %u entries walked differ from the table", differ, entries);
}

/* Dependencies alone (no times): whether every stage runs its order of
 * tsl_pipeline_vp_table with the warm-ups of tsl_pipeline_vp_warmup to the end.
 * F of virtual stage q = c·P + s waits for F of q − 1, B of q for B of q + 1, the
 * last virtual stage's B for its own F. */
static bool vp_order_runs(uint32_t P, uint32_t m, uint32_t v, uint32_t N)
{
    enum { MAXP = 8, MAXO = 2 * 64 };
    uint32_t pos[MAXP][2][64], ptr[MAXP] = {0}, T = m * v;
    uint8_t kind[MAXP][MAXO], chunk[MAXP][MAXO], micro[MAXP][MAXO];
    for (uint32_t s = 0; s < P; s++) {
        uint32_t w = tsl_pipeline_vp_warmup(s, P, m, v, N), nf = 0, nb = 0, q = 0, j, c;
        while (nf < T || nb < T) {
            bool f = nf < w || (nf < T && nf - w == nb);
            tsl_pipeline_vp_table(f ? nf++ : nb++, m, v, N, &j, &c);
            c = f ? c : v - 1 - c;
            kind[s][q] = f, chunk[s][q] = (uint8_t)c, micro[s][q] = (uint8_t)j;
            pos[s][!f][c * m + j] = q++;
        }
    }
    for (bool moved = true; moved;) {
        moved = false;
        for (uint32_t s = 0; s < P; s++)
            for (; ptr[s] < 2 * T; ptr[s]++, moved = true) {
                uint32_t q = ptr[s], c = chunk[s][q], j = micro[s][q], vq = c * P + s, d, cd;
                bool f = kind[s][q];
                if (f && vq == 0)
                    continue;
                if (!f && vq == P * v - 1) {
                    d = s, cd = c, f = true; /* its own forward */
                } else if (f) {
                    d = s ? s - 1 : P - 1, cd = s ? c : c - 1;
                } else {
                    d = s + 1 < P ? s + 1 : 0, cd = s + 1 < P ? c : c + 1;
                }
                if (ptr[d] <= pos[d][!f][cd * m + j])
                    break;
            }
    }
    for (uint32_t s = 0; s < P; s++)
        if (ptr[s] < 2 * T)
            return false;
    return true;
}

/* The same walk with the gradients' lifetime (tsl_pipeline_peak_chunks, lazy_grads).
 * Llama 3 405B's stage 1 (P 16, v 8, N 16, a layer a chunk: 532.68 MB of stash and
 * 1.594 GB of fp32 gradients per chunk and micro-batch / chunk). At m 16 (DP 128)
 * w_1 = 140 ≥ m·v = 128: every forward precedes the first backward, chunk 7's,
 * which adds its gradients while all 128 are held: 16 of each chunk, only chunk 7's
 * gradients, 128·A + G = 69.78 GB, where a buffer held all along (grad_w NULL)
 * counts 8·G beside 128·A. At m 32 (DP 64) the steady state holds 140–141 until
 * backward 113, chunk 0's first (backwards 16k..16k+15 run chunk 7 − k), with 32 of
 * chunk 0, 16 of chunks 1–6, 13 of chunk 7 held: 141·A + 8·G, every gradient live —
 * the buffer's peak again. P 4, v 2, m 8 with grad_w NULL: the held counts of
 * tsl_pipeline_inflight_chunks, every chunk live. */
static void test_peak_chunks(void)
{
    uint32_t held[8], held0[8];
    uint8_t live[8];
    uint32_t n = tsl_pipeline_peak_chunks(8, 2, 4, tsl_pipeline_vp_warmup(0, 4, 8, 2, 4), NULL,
                                          NULL, held, live);
    tsl_pipeline_inflight_chunks(8, 2, 4, tsl_pipeline_vp_warmup(0, 4, 8, 2, 4), NULL, held0);
    CHECK(n == 11 && held[0] == held0[0] && held[1] == held0[1] && live[0] && live[1],
          "no gradient weights: the plain walk, %u = %u + %u", n, held[0], held[1]);

    double a[8], g[8];
    for (uint32_t c = 0; c < 8; c++) {
        a[c] = 532.68e6;
        g[c] = 1.594e9;
    }
    n = tsl_pipeline_peak_chunks(16, 8, 16, tsl_pipeline_vp_warmup(1, 16, 16, 8, 16), a, g, held,
                                 live);
    CHECK(n == 128, "DP 128, stage 1: %u held", n);
    for (uint32_t c = 0; c < 8; c++)
        CHECK(held[c] == 16 && live[c] == (c == 7), "DP 128, chunk %u: %u held, live %u", c,
              held[c], live[c]);
    n = tsl_pipeline_peak_chunks(32, 8, 16, tsl_pipeline_vp_warmup(1, 16, 32, 8, 16), a, g, held,
                                 live);
    CHECK(n == 141 && held[0] == 32 && held[1] == 16 && held[6] == 16 && held[7] == 13,
          "DP 64, stage 1: %u = %u + 16·6 + %u", n, held[0], held[7]);
    for (uint32_t c = 0; c < 8; c++)
        CHECK(live[c] == 1, "DP 64: chunk %u's gradients live at the peak", c);
}

/* In flight, chunk by chunk (tsl_pipeline_inflight_chunks), by hand.
 *
 * P 4, v 2, m 8, N 4 (Megatron's default), equal chunks: stage s runs w_s = 10, 8,
 * 6, 4 warm-up forwards and one more before its first backward. Stage 0's 11 are
 * the table's entries 0–10: micro-batches 0–3 on chunk 0, 0–3 on chunk 1, 4–6 on
 * chunk 0: 7 + 4; stage 1: 5 + 4; stage 2: 4 + 3; stage 3: 4 + 1 (11, 9, 7, 5
 * chunk micro-batches, 5.5, 4.5, 3.5, 2.5 stages' worth, where the closed form
 * counts ⌈·⌉ = 6, 5, 4, 3). N 8: stage 0's 15 = 8 + 7: a larger N holds more.
 *
 * Llama 3 405B (P 16, v 8, m 32 at DP 64, N 16; one layer per chunk, chunk 0 of
 * stage 0 the embedding alone, chunk 7 of stage 15 the head alone). Stage 0: w_0 =
 * 15·2 + 7·16 = 142, the peak at forward 143: micro-batches 0–15 on chunks 0–7 and
 * 16–30 on chunk 0, i.e. 31 of chunk 0 and 16 of each layer chunk. After it each
 * steady step adds one chunk forward and frees one: the backwards 0–15 free chunk
 * 7's layers, the forwards from entry 144 on add group 2's chunks 1–7, so the
 * layer count stays at 112 while chunk 0 (which gets no forward after entry 143)
 * only drains: 112 layer-micro-batches + 31 embeddings, where ⌈143/8⌉ = 18 stages'
 * worth would be 144 layers'. Stage 1 (equal chunks): w_1 + 1 = 141 = 29 + 7·16.
 * Stage 15: w = 112 (chunks 0–6 of micro-batches 0–15); its first 16 steady steps
 * run the head's chunk 7 forward and backward, the 17th forwards micro-batch 16 on
 * chunk 0 before it frees a layer: 17 + 6·16 = 113 layer-micro-batches, no head.
 * At DP 128 (m 16) w_1 = 140 ≥ m·v: all 128, 16 of each chunk. */
static void test_inflight_chunks(void)
{
    const uint32_t want[4][2] = {{7, 4}, {5, 4}, {4, 3}, {4, 1}}, total[] = {11, 9, 7, 5};
    uint32_t held[64];
    for (uint32_t s = 0; s < 4; s++) {
        uint32_t n = tsl_pipeline_inflight_chunks(8, 2, 4, tsl_pipeline_vp_warmup(s, 4, 8, 2, 4),
                                                  NULL, held);
        CHECK(n == total[s] && held[0] == want[s][0] && held[1] == want[s][1],
              "P 4 v 2 m 8 N 4, stage %u: %u = %u + %u", s, n, held[0], held[1]);
    }
    uint32_t n =
        tsl_pipeline_inflight_chunks(8, 2, 8, tsl_pipeline_vp_warmup(0, 4, 8, 2, 8), NULL, held);
    CHECK(n == 15 && held[0] == 8 && held[1] == 7, "N 8: %u = %u + %u", n, held[0], held[1]);

    const double layer = 533e6, emb = 1e6; /* bytes per micro-batch */
    double w0[8], w1[8], w15[8];
    for (uint32_t c = 0; c < 8; c++)
        w0[c] = w1[c] = w15[c] = layer;
    w0[0] = emb;
    w15[7] = 5e6; /* the head's */
    n = tsl_pipeline_inflight_chunks(32, 8, 16, tsl_pipeline_vp_warmup(0, 16, 32, 8, 16), w0, held);
    CHECK(n == 143 && held[0] == 31, "Llama 3 stage 0: %u, chunk 0 %u", n, held[0]);
    for (uint32_t c = 1; c < 8; c++)
        CHECK(held[c] == 16, "Llama 3 stage 0, chunk %u: %u", c, held[c]);
    n = tsl_pipeline_inflight_chunks(32, 8, 16, tsl_pipeline_vp_warmup(1, 16, 32, 8, 16), w1, held);
    CHECK(n == 141 && held[0] == 29 && held[1] == 16 && held[7] == 16, "stage 1: %u (%u, %u)", n,
          held[0], held[1]);
    n = tsl_pipeline_inflight_chunks(32, 8, 16, tsl_pipeline_vp_warmup(15, 16, 32, 8, 16), w15,
                                     held);
    CHECK(n == 113 && held[0] == 17 && held[6] == 16 && held[7] == 0, "stage 15: %u, head %u", n,
          held[7]);
    n = tsl_pipeline_inflight_chunks(16, 8, 16, tsl_pipeline_vp_warmup(1, 16, 16, 8, 16), w1, held);
    CHECK(n == 128 && held[0] == 16 && held[7] == 16, "DP 128, stage 1: %u", n);

    /* the chunks as Megatron-LM cuts a stage's layers */
    uint32_t cnt[8];
    tsl_pipeline_chunk_layers(8, true, false, 0, 8, cnt);
    CHECK(cnt[0] == 1 && cnt[7] == 1, "Llama 3 stage 0: the embedding alone in chunk 0");
    tsl_pipeline_chunk_layers(9, true, false, 0, 2, cnt);
    CHECK(cnt[0] == 5 && cnt[1] == 4, "embedding + 8 layers, v 2: %u, %u", cnt[0], cnt[1]);
    tsl_pipeline_chunk_layers(9, false, true, 0, 2, cnt);
    CHECK(cnt[0] == 4 && cnt[1] == 5, "8 layers + head, v 2: %u, %u", cnt[0], cnt[1]);
    tsl_pipeline_chunk_layers(8, true, false, 0, 2, cnt);
    CHECK(cnt[0] == 4 && cnt[1] == 4, "embedding + 7 layers (account-for-embedding): %u, %u",
          cnt[0], cnt[1]);
    tsl_pipeline_chunk_layers(7, false, false, 0, 2, cnt);
    CHECK(cnt[0] == 4 && cnt[1] == 3, "7 layers: %u, %u", cnt[0], cnt[1]);
    /* DeepSeek-V3's last stage, v 2: 8 layers, one MTP depth (entry, layer, head copy)
     * and the head: the 8 layers split 4 + 4, the head and the 3 MTP layers join the
     * last chunk (Megatron-LM: MTP on the last virtual stage) */
    tsl_pipeline_chunk_layers(12, false, true, 3, 2, cnt);
    CHECK(cnt[0] == 4 && cnt[1] == 8, "8 layers + MTP 3 + head, v 2: %u, %u", cnt[0], cnt[1]);
    /* 7 layers + head, account-for-loss: 8 units 4 + 4, the MTP layers after them */
    tsl_pipeline_chunk_layers(11, false, true, 3, 2, cnt);
    CHECK(cnt[0] == 4 && cnt[1] == 7, "7 layers + MTP 3 + head, v 2: %u, %u", cnt[0], cnt[1]);
    /* chunks of one size (the search's v past 2 and 4): the layers divide by v, or
     * do with the embedding and the head counted */
    CHECK(tsl_pipeline_chunks_even(6, true, false, 0, 5, true), "embedding + 5 layers, v 5");
    CHECK(tsl_pipeline_chunks_even(5, false, true, 0, 5, true),
          "4 layers + head, v 5 (account-for-loss)");
    CHECK(tsl_pipeline_chunks_even(22, true, true, 0, 5, true),
          "the embedding, 20 layers, the head: v 5");
    CHECK(!tsl_pipeline_chunks_even(5, false, true, 0, 3, true), "4 layers + head, v 3: 2, 2, 1");
    CHECK(!tsl_pipeline_chunks_even(8, false, false, 0, 3, true), "8 layers, v 3: 3, 3, 2");
    CHECK(tsl_pipeline_chunks_even(12, false, true, 3, 4, true), "8 layers + MTP 3 + head, v 4");
    CHECK(tsl_pipeline_chunks_even(12, false, true, 3, 3, true), "8 layers + head counted, v 3");
    CHECK(!tsl_pipeline_chunks_even(12, false, true, 3, 5, true), "8 layers + MTP 3 + head, v 5");
    CHECK(!tsl_pipeline_chunks_even(2, false, false, 0, 3, true), "2 layers, v 3: a chunk empty");
    CHECK(tsl_pipeline_chunks_even(7, false, false, 0, 1, true), "v 1: one chunk");
    /* without the ends counted (Tessel's executor's cut) only the layers dividing */
    CHECK(!tsl_pipeline_chunks_even(5, false, true, 0, 5, false), "4 layers + head, v 5");
    CHECK(tsl_pipeline_chunks_even(6, true, false, 0, 5, false), "embedding + 5 layers, v 5");

    /* Why N >= P: below it Megatron's order deadlocks (it refuses N < P) */
    CHECK(vp_order_runs(4, 8, 2, 4) && vp_order_runs(4, 8, 2, 8) && vp_order_runs(2, 5, 2, 3) &&
              vp_order_runs(8, 16, 3, 8),
          "N >= P runs");
    CHECK(!vp_order_runs(4, 8, 2, 3) && !vp_order_runs(4, 8, 2, 2) && !vp_order_runs(4, 8, 2, 1) &&
              !vp_order_runs(8, 16, 2, 6),
          "N < P deadlocks");
}

/* The optimizer tail by hand. Three stages, forward f = 1, nosync 4 (so the
 * backward plus both p2p directions is 3), p2p 0.5 (0.25 per direction), the
 * last micro-batch's gradient sync 0.5 more (sync 4.5). Stage i's last backward
 * ends tail_i before T: tail_0 = 0, tail_1 = (4 − 1 − 0.25) + 0.5 = 3.25,
 * tail_2 = 6.5. Steps of 1, 2, 9: the tail is max(1 − 0, 2 − 3.25, 9 − 6.5) = 2.5
 * (the last stage's long step outlasts the drain below it); steps 1, 2, 3: stage
 * 0's own 1 (it ends last). Under v = 2 the backward part of the drain halves,
 * the sync does not: tail_1 = 2.75 / 2 + 0.5 = 1.875, tail_2 = 3.75: with steps
 * 1, 2, 3 the tail is max(1, 0.125, −0.75) = 1. */
static void test_opt_tail(void)
{
    double fwd[] = {1, 1, 1}, nosync[] = {4, 4, 4}, sync[] = {4.5, 4.5, 4.5};
    double p2p[] = {0.5, 0.5, 0.5}, big[] = {1, 2, 9}, small[] = {1, 2, 3};
    CHECK_NEAR(tsl_pipeline_opt_tail_s(3, fwd, nosync, sync, p2p, big, 0, 1), 2.5, EPS,
               "a long last step: %g",
               tsl_pipeline_opt_tail_s(3, fwd, nosync, sync, p2p, big, 0, 1));
    CHECK_NEAR(tsl_pipeline_opt_tail_s(3, fwd, nosync, sync, p2p, small, 0, 1), 1.0, EPS,
               "stage 0 ends last");
    CHECK_NEAR(tsl_pipeline_opt_tail_s(3, fwd, nosync, sync, p2p, small, 0, 2), 1.0, EPS,
               "interleaved: stage 0 still last");
    CHECK_NEAR(tsl_pipeline_opt_tail_s(3, fwd, nosync, sync, p2p, big, 0, 2), 9 - 3.75, EPS,
               "interleaved drain is shorter: %g",
               tsl_pipeline_opt_tail_s(3, fwd, nosync, sync, p2p, big, 0, 2));
    double none[] = {0, 0, 0};
    CHECK(tsl_pipeline_opt_tail_s(3, fwd, nosync, sync, p2p, none, 0, 1) == 0, "no steps");
    CHECK(tsl_pipeline_opt_tail_s(0, fwd, nosync, sync, p2p, big, 0, 1) == 0, "no stages");
    CHECK(tsl_pipeline_opt_tail_s(1, fwd, nosync, sync, p2p, big, 0, 1) == 1,
          "one stage: its step");
    /* A tied head's all-reduce of 0.5 s: stages 0 and 2 start it at T (stage 0's
     * backward ends last) and step after it; stage 1 keeps its credit. Steps 1, 2,
     * 3: max(0.5 + 1, 2 − 3.25, 0.5 + 3) = 3.5; steps 1, 2, 9: 0.5 + 9 = 9.5 (the
     * last stage no longer steps during the drain). One stage: no all-reduce. */
    CHECK_NEAR(tsl_pipeline_opt_tail_s(3, fwd, nosync, sync, p2p, small, 0.5, 1), 3.5, EPS,
               "tied: %g", tsl_pipeline_opt_tail_s(3, fwd, nosync, sync, p2p, small, 0.5, 1));
    CHECK_NEAR(tsl_pipeline_opt_tail_s(3, fwd, nosync, sync, p2p, big, 0.5, 1), 9.5, EPS,
               "tied, long last step");
    CHECK_NEAR(tsl_pipeline_opt_tail_s(3, fwd, nosync, sync, p2p, none, 0.5, 1), 0.5, EPS,
               "tied, no steps: the all-reduce alone");
    CHECK(tsl_pipeline_opt_tail_s(1, fwd, nosync, sync, p2p, big, 0.5, 1) == 1,
          "one stage: no all-reduce");
}

/* tsl_pipeline_iter by hand, on test_opt_tail's three stages (f 1, nosync 4 with
 * p2p 0.5, sync 4.5), m = 4.
 * STACK, v = 1: T0 = 3 · 4 + 12 = 24; each sync (0.5) after the stage's own last
 * backward, which ends tail_i = 0, 2.75, 5.5 before T0: ends 24.5, 21.75, 19 —
 * flush 24.5 (Eq. 9 sums them: 25.5). Steps 1, 2, 3: done at max(25.5, 23.75, 22),
 * tail 1; steps 1, 2, 9: 28, tail 3.5. Tied (0.5): stages 0 and 2 meet at
 * max(24.5, 19) and step after 25: max(26, 28) → tail 3.5. A slow sync on the last
 * stage (6.5, its backward ending at 24 − 5.5) ends at 18.5 + 6.5 = 25: flush 25
 * against Eq. 9's 31.5.
 * v = 2, m = 6: K = 3.5, T0 = 6 · 3.5 + 7 / 2 + 1.5 · 1/2 = 25.25; tails halve
 * (0, 1.375, 2.75): flush 25.75, steps 1, 2, 3 → tail 1. Blocking hops: K = 4.
 * Both stages holding each exchange (v = 1, p2p_both): see below.
 * PAPER: Eq. 9 / T_v and tsl_pipeline_opt_tail_s, bit for bit. */
static void test_iter(void)
{
    double fwd[] = {1, 1, 1}, nosync[] = {4, 4, 4}, sync[] = {4.5, 4.5, 4.5};
    double p2p[] = {0.5, 0.5, 0.5}, big[] = {1, 2, 9}, small[] = {1, 2, 3};
    tsl_pipeline_in_t in = {.n_stages = 3,
                            .n_micro = 4,
                            .interleave = 1,
                            .fwd_s = fwd,
                            .nosync_s = nosync,
                            .sync_s = sync,
                            .p2p_s = p2p,
                            .opt_s = small};
    tsl_pipeline_out_t o;
    tsl_pipeline_iter(&in, &o);
    CHECK_NEAR(o.flush_s, 24.5, EPS, "stack flush: %g", o.flush_s);
    CHECK_NEAR(o.opt_tail_s, 1.0, EPS, "stack steps: %g", o.opt_tail_s);
    /* each exchange held by both stages (DeepSpeed's engine): K = 4, 4.5, 4.5 (the
     * receivers add the incoming 0.5) in the steady state; the fill and the drain
     * cross each boundary once each way, Σ C_nosync = 12: T0 = 3 · 4.5 + 12 = 25.5,
     * flush 26. One micro-batch: T0 = 12, nothing but the fill and the drain. */
    in.p2p_both = true;
    tsl_pipeline_iter(&in, &o);
    CHECK_NEAR(o.flush_s, 26.0, EPS, "stack, both stages hold each hop: %g", o.flush_s);
    in.n_micro = 1;
    tsl_pipeline_iter(&in, &o);
    CHECK_NEAR(o.flush_s, 12.5, EPS, "stack, both hold each hop, one micro-batch: %g", o.flush_s);
    in.n_micro = 4;
    in.p2p_both = false;
    in.opt_s = big;
    tsl_pipeline_iter(&in, &o);
    CHECK_NEAR(o.flush_s + o.opt_tail_s, 28.0, EPS, "stack, a long last step: %g",
               o.flush_s + o.opt_tail_s);
    in.opt_s = small;
    in.tie_s = 0.5;
    tsl_pipeline_iter(&in, &o);
    CHECK_NEAR(o.opt_tail_s, 3.5, EPS, "stack, tied: %g", o.opt_tail_s);
    in.tie_s = 0;
    double slow[] = {4.5, 4.5, 10.5};
    in.sync_s = slow;
    tsl_pipeline_iter(&in, &o);
    CHECK_NEAR(o.flush_s, 25.0, EPS, "stack: a slow sync overlaps the drain: %g", o.flush_s);
    CHECK_NEAR(tsl_pipeline_time_s(3, nosync, slow, 4), 31.5, EPS, "Eq. 9 sums it");
    in.paper = true;
    tsl_pipeline_iter(&in, &o);
    CHECK(o.flush_s == tsl_pipeline_time_s(3, nosync, slow, 4) &&
              o.opt_tail_s == tsl_pipeline_opt_tail_s(3, fwd, nosync, slow, p2p, small, 0, 1),
          "paper: Eq. 9 and its tail");
    in.paper = false;
    in.sync_s = sync;
    in.interleave = 2;
    in.n_micro = 6;
    tsl_pipeline_iter(&in, &o);
    CHECK_NEAR(o.flush_s, 25.75, EPS, "stack, v 2: %g", o.flush_s);
    CHECK_NEAR(o.opt_tail_s, 1.0, EPS, "stack, v 2 steps: %g", o.opt_tail_s);
    /* blocking hops (Megatron-LM before core): K = C_nosync = 4, T0 = 6 · 4 + 8 / 2
     * = 28, flush 28.5; the steps as before */
    in.p2p_blocking = true;
    tsl_pipeline_iter(&in, &o);
    CHECK_NEAR(o.flush_s, 28.5, EPS, "stack, v 2, blocking: %g", o.flush_s);
    CHECK_NEAR(o.opt_tail_s, 1.0, EPS, "stack, v 2, blocking steps: %g", o.opt_tail_s);
    in.p2p_blocking = false;
    in.paper = true;
    tsl_pipeline_iter(&in, &o);
    CHECK(o.flush_s == tsl_pipeline_time_interleaved_s(3, nosync, sync, 6, 2) &&
              o.opt_tail_s == tsl_pipeline_opt_tail_s(3, fwd, nosync, sync, p2p, small, 0, 2),
          "paper, v 2: T_v and its tail");
    in.n_stages = 0;
    tsl_pipeline_iter(&in, &o);
    CHECK(o.flush_s == 0 && o.opt_tail_s == 0, "no stages");
}

/* Megatron's blocking exchanges hold a stage for one hop of each of its boundaries
 * (cost model 161): P 3, m 4, f 1, b 2 (the last stage's b 2.4), both boundaries 0.4
 * (0.2 a hop). C_nosync 3.4, 3.4, 3.4; K = 3.4 − 0.2, 3.4, 3.4 + 0.2 = 3.2, 3.4, 3.6:
 * the last stage holds its incoming hop (158: K = C_nosync, 3.4 everywhere): T0 =
 * 3 · 3.6 + 10.2 = 21.0 (158: 20.4). The event simulator's blocking sends give the
 * same: the last stage is the slowest, so its m cycles and the fill and drain. */
static void test_iter_exchanges(void)
{
    double fwd[] = {1, 1, 1}, nosync[] = {3.4, 3.4, 3.4}, p2p[] = {0.4, 0.4, 0}, zero[] = {0, 0, 0};
    tsl_pipeline_in_t in = {.n_stages = 3,
                            .n_micro = 4,
                            .interleave = 1,
                            .fwd_s = fwd,
                            .nosync_s = nosync,
                            .sync_s = nosync,
                            .p2p_s = p2p,
                            .opt_s = zero};
    tsl_pipeline_out_t o;
    tsl_pipeline_iter(&in, &o);
    CHECK_NEAR(o.flush_s, 21.0, EPS, "one hop of each boundary: %g", o.flush_s);
    double b[] = {2, 2, 2.4}, hop[] = {0.2, 0.2};
    tsl_pipesim_in_t sin = {.n_stages = 3,
                            .n_micro = 4,
                            .fwd_s = fwd,
                            .bwd_s = b,
                            .p2p_s = hop,
                            .sync_tail_s = zero,
                            .opt_s = zero,
                            .p2p_blocking = 1};
    static double ws[4096];
    tsl_pipesim_out_t so;
    tsl_err_t err = {0};
    CHECK(tsl_pipesim_ws_bytes(3, 4, 0) <= sizeof(ws) &&
              tsl_pipesim_run(&sin, ws, sizeof(ws), &so, &err) == 0,
          "simulated: %s", err.msg);
    CHECK_NEAR(so.iter_s, o.flush_s, EPS, "the simulator's blocking sends: %g", so.iter_s);
    /* interleaved with blocking hops (legacy_p2p): stage 0's incoming boundary is the
     * last stage's wrap, p2p_2; with every boundary alike nothing moves */
    double even[] = {0.4, 0.4, 0.4}, flat[] = {3.4, 3.4, 3.4};
    in.interleave = 2;
    in.p2p_blocking = true;
    in.p2p_s = even;
    in.nosync_s = in.sync_s = flat;
    tsl_pipeline_iter(&in, &o);
    CHECK_NEAR(o.flush_s, 4 * 3.4 + 2 * 3.4 / 2, EPS, "v 2, even boundaries: %g", o.flush_s);
}

static void test_balance(void)
{
    double equal[] = {3, 3, 3, 3};
    CHECK_NEAR(tsl_pipeline_balance(4, equal), 1 - 1.0 / 4, EPS, "perfect balance = 1 - 1/P");
    double lopsided[] = {0, 0, 5, 0};
    CHECK_NEAR(tsl_pipeline_balance(4, lopsided), 0, EPS, "all on one stage = 0");
    double ramp[] = {1, 2, 3, 4};
    CHECK_NEAR(tsl_pipeline_balance(4, ramp), 1 - 4.0 / 10, EPS, "1 - max/sum");
    CHECK(tsl_pipeline_balance(1, ramp) == 0, "one stage");
    double zeros[] = {0, 0, 0};
    CHECK(tsl_pipeline_balance(3, zeros) == 0, "zero sum");

    /* any values: α ∈ [0, 1 − 1/P] */
    uint32_t seed = 12345;
    for (int rep = 0; rep < 1000; rep++) {
        double v[8];
        uint32_t p = 2 + (uint32_t)rep % 7;
        for (uint32_t i = 0; i < p; i++) {
            seed = seed * 1103515245u + 12345u;
            v[i] = (double)(seed >> 8) / (1u << 24);
        }
        double a = tsl_pipeline_balance(p, v);
        CHECK(a >= 0 && a <= 1 - 1.0 / p + EPS, "alpha %g for P %u", a, p);
    }
}

/* Megatron-LM's EP all-to-all overlap: the merged steps' saving per micro-batch
 * (docs/cost-model.md "EP all-to-all overlap"), by hand. */
static void test_ep_overlap(void)
{
    /* PP 1, 4 micro-batches: F0, then F1&B0, F2&B1, F3&B2, then B3 — 3 merged steps */
    CHECK_NEAR(tsl_pipeline_ep_overlap_s(0, 1, 4, 1, 0, 2.0), 2.0 * 3 / 4, EPS, "PP 1");
    /* PP 8, v 4, N = P, 512 micro-batches (Qwen3-235B H100): stage 0 warms up with
     * 7·2 + 3·8 = 38 of its 2048 chunk forwards, stage 7 with 24 */
    CHECK_NEAR(tsl_pipeline_ep_overlap_s(0, 8, 512, 4, 0, 1.0), 2010.0 / 2048, EPS, "stage 0");
    CHECK_NEAR(tsl_pipeline_ep_overlap_s(7, 8, 512, 4, 8, 1.0), 2024.0 / 2048, EPS, "stage 7");
    /* N = 16: (v − 1)·16 = 48 more in the warm-up: stage 7 2000 of 2048 */
    CHECK_NEAR(tsl_pipeline_ep_overlap_s(7, 8, 512, 4, 16, 1.0), 2000.0 / 2048, EPS, "N 16");
    CHECK(tsl_pipeline_ep_overlap_s(0, 8, 512, 1, 0, 1.0) == 0, "plain 1F1B: Megatron refuses");
    CHECK(tsl_pipeline_ep_overlap_s(0, 1, 1, 1, 0, 1.0) == 0, "one micro-batch: nothing merged");
    CHECK(tsl_pipeline_ep_overlap_s(0, 2, 2, 2, 0, 1.0) == 0, "all warm-up: w = 2 + 2 = m·v");
}

/* Megatron-LM's combined 1F1B step node by node (ep_overlap.h), by hand. One layer
 * beside itself: attn 1 / mlp 1 forward, attn 2 + 1 / mlp 2 + 1 backward (dX + dW). */
static void test_ep_merged(void)
{
    tsl_ep_layer_t l = {.attn_f = 1,
                        .mlp_f = 1,
                        .attn_b = 2,
                        .attn_w = 1,
                        .mlp_b = 2,
                        .mlp_w = 1,
                        .disp_f = 0.5,
                        .comb_f = 0.5,
                        .disp_b = 0.5,
                        .comb_b = 0.5};
    double e = -1;
    /* each all-to-all under its partner: the step is the compute, 8 */
    CHECK_NEAR(tsl_ep_merged_s(&l, 1, true, &e), 8.0, EPS, "hidden: the compute");
    CHECK_NEAR(e, 0.0, EPS, "hidden: nothing exposed");
    CHECK_NEAR(tsl_ep_merged_s(&l, 1, false, &e), 8.0, EPS, "hidden without delay too");
    /* then cost model 52's C + (k − 1)·A */
    CHECK_NEAR(tsl_ep_merged_k_s(&l, 1, true, 1.3), 8.0 + 0.3 * 2.0, EPS, "C + (k - 1) A");
    /* all-to-alls of 2: combine_bwd [0, 2], attn_fwd [0, 1], mlp_bwd [2, 4], dispatch_fwd
     * [2, 4], mlp_dw [4, 5], dispatch_bwd [4, 6], mlp_fwd [5, 6], combine_fwd [6, 8],
     * attn_bwd [6, 8], then attn_dw: 9, 1 exposed */
    l.disp_f = l.comb_f = l.disp_b = l.comb_b = 2.0;
    CHECK_NEAR(tsl_ep_merged_s(&l, 1, true, &e), 9.0, EPS, "delayed dW: 9");
    CHECK_NEAR(e, 1.0, EPS, "delayed dW: 1 exposed");
    CHECK_NEAR(tsl_ep_merged_k_s(&l, 1, true, 1.3), 9.0 + 0.3 * 7.0, EPS, "E + C + (k - 1) H");
    /* without: mlp_bwd [2, 5] with its dW, dispatch_bwd waits for it [5, 7], mlp_fwd
     * [5, 6], combine_fwd [7, 9], attn_bwd with its dW [7, 10]: 10, 2 exposed */
    CHECK_NEAR(tsl_ep_merged_s(&l, 1, false, &e), 10.0, EPS, "inline dW: 10");
    CHECK_NEAR(e, 2.0, EPS, "inline dW: 2 exposed");
    /* a dense layer D (NoopScheduleNode for its all-to-alls: issued nowhere, waiting on
     * nothing) and a MoE layer M. F(D) & B(M): M's combine_bwd [0, 2] beside D's
     * attention [0, 1], M's mlp_bwd [2, 4], its dispatch_bwd [4, 6] beside D's MLP
     * [4, 5], M's attn_bwd [6, 8]; F(M) & B(D): M's attention [8, 9], D's mlp_bwd
     * [9, 11] under M's dispatch [9, 11], M's MLP [11, 12], D's attn_bwd [12, 15]
     * under M's combine [12, 14]: 15, 13 of compute */
    tsl_ep_layer_t two[2] = {{.attn_f = 1, .mlp_f = 1, .attn_b = 3, .mlp_b = 2},
                             {.attn_f = 1,
                              .mlp_f = 1,
                              .attn_b = 2,
                              .mlp_b = 2,
                              .disp_f = 2,
                              .comb_f = 2,
                              .disp_b = 2,
                              .comb_b = 2}};
    CHECK_NEAR(tsl_ep_merged_s(two, 2, true, &e), 15.0, EPS, "dense beside MoE: 15");
    CHECK_NEAR(e, 2.0, EPS, "dense beside MoE: 2 exposed");
    CHECK(tsl_ep_merged_s(NULL, 0, true, &e) == 0.0 && e == 0.0, "no layer");
    /* the same layers without all-to-alls: the compute, whatever the delay */
    tsl_ep_layer_t d = {.attn_f = 1, .mlp_f = 2, .attn_b = 2, .attn_w = 1, .mlp_b = 3, .mlp_w = 2};
    tsl_ep_layer_t dd[3] = {d, d, d};
    CHECK_NEAR(tsl_ep_merged_k_s(dd, 3, true, 1.3), 3 * 11.0, EPS, "no all-to-all: no overlap");
    CHECK_NEAR(tsl_ep_merged_k_s(dd, 3, false, 1.3), 3 * 11.0, EPS, "likewise inline");
}

/* Megatron-core's per-chunk reduce by hand (pipeline.h): chunk c launches
 * c·P − stage chunk backwards (beta each) before the stage's end, the reduces one
 * after another, rs/v each. */
static void test_chunk_rs(void)
{
    /* P 4, v 2, rs 8, beta 1: chunk 0 after the end (4); chunk 1 launched 4 − s
     * before it, so stage 0 ends its queue 8 − 4 = 4 after, stage 3 8 − 1 = 7 */
    CHECK_NEAR(tsl_pipeline_chunk_rs_s(8, 1, 0, 4, 2), 4.0, 1e-12, "stage 0: the last chunk's");
    CHECK_NEAR(tsl_pipeline_chunk_rs_s(8, 1, 3, 4, 2), 7.0, 1e-12, "stage 3: chunk 1 spills");
    CHECK_NEAR(tsl_pipeline_chunk_rs_s(8, 0, 0, 4, 2), 8.0, 1e-12, "no backward hides it");
    /* P 2, v 4, stage 1, rs 4, beta 0.5: chunks 1..3 launched 1, 3, 5 backwards
     * before the end: max(1, 2 − 0.5, 3 − 1.5, 4 − 2.5) = 1.5 */
    CHECK_NEAR(tsl_pipeline_chunk_rs_s(4, 0.5, 1, 2, 4), 1.5, 1e-12, "P 2, v 4");
    CHECK_NEAR(tsl_pipeline_chunk_rs_s(4, 100, 1, 2, 4), 1.0, 1e-12, "at least rs / v");
    CHECK(tsl_pipeline_chunk_rs_s(4, 1, 0, 2, 1) == 4.0, "v 1: the whole reduce");
    CHECK(tsl_pipeline_chunk_rs_s(0, 1, 0, 2, 4) == 0.0, "no reduce");
}

/* The same with the contention of what runs beside the drain's backwards (cost
 * model 157): E + (k − 1)·(rs − E), E the part after the stage's end. */
static void test_chunk_rs_cost(void)
{
    /* P 4, v 2, rs 8, beta 1 as above: stage 0 E = 4, 4 beside; stage 3 E = 7, 1 */
    CHECK_NEAR(tsl_pipeline_chunk_rs_cost_s(8, 1, 0, 4, 2, 1.3), 4.0 + 0.3 * 4.0, 1e-12,
               "stage 0: chunk 1's reduce beside 4 backwards");
    CHECK_NEAR(tsl_pipeline_chunk_rs_cost_s(8, 1, 3, 4, 2, 1.3), 7.0 + 0.3 * 1.0, 1e-12,
               "stage 3: 1 of chunk 1's beside its last backward");
    CHECK_NEAR(tsl_pipeline_chunk_rs_cost_s(8, 1, 0, 4, 2, 1.0), 4.0, 1e-12, "k 1: no contention");
    CHECK_NEAR(tsl_pipeline_chunk_rs_cost_s(8, 1, 0, 4, 2, 0.5), 4.0, 1e-12, "k < 1 counts as 1");
    CHECK_NEAR(tsl_pipeline_chunk_rs_cost_s(8, 0, 0, 4, 2, 1.3), 8.0, 1e-12,
               "no backward: nothing beside");
    CHECK(tsl_pipeline_chunk_rs_cost_s(4, 1, 0, 2, 1, 1.3) == 4.0, "v 1: after the backward");
    CHECK(tsl_pipeline_chunk_rs_cost_s(0, 1, 0, 2, 4, 1.3) == 0.0, "no reduce");
}

int main(void)
{
    test_chunk_rs();
    test_chunk_rs_cost();
    test_time();
    test_inflight();
    test_vp_walk();
    test_recv_buffers();
    test_interleaved();
    test_vp_table();
    test_inflight_chunks();
    test_ep_overlap();
    test_ep_merged();
    test_peak_chunks();
    test_opt_tail();
    test_iter();
    test_iter_exchanges();
    test_balance();
    return CHECK_DONE();
}

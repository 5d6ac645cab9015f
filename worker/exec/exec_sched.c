/*
 * exec_sched.c — the order of Megatron-LM's interleaved 1F1B on one stage
 * (schedules.py, forward_backward_pipelining_with_interleaving), the ticks its
 * point-to-point legs run at, and the stash slots it holds. Arithmetic only: the
 * engine (exec_step.c) runs it.
 *
 * Order. A stage of v model chunks runs total = m·v chunk forwards and as many
 * backwards; the k-th forward is of chunk ⌊(k mod P·v) / P⌋ (get_model_chunk_id), the
 * k-th backward of chunk v − 1 minus that, both of micro-batch ⌊k / P·v⌋·P + k mod P:
 * groups of P micro-batches go through chunk 0, then chunk 1, ... W = (P − s − 1)·2 +
 * (v − 1)·P warm-up forwards (at most total), then one forward and one backward
 * while forwards last, then the remaining backwards. Megatron needs m a multiple of P.
 *
 * Calls. Stage s makes calls i = 0 .. W + total; between call i and call i + 1 it runs
 * F(i) (if i < total), then B(i − W) (if W ≤ i < W + total); W uncapped, so that an
 * all-warm-up stage runs all forwards then all backwards, as Megatron does. Call i
 * receives F(i)'s input and B(i − W)'s output gradient and sends F(i − 1)'s output
 * and B(i − W − 1)'s input gradient. Call i of stage s happens at tick i + s: every
 * transfer's send and receive are at the same tick. Forward: stage s's F(k) output
 * (chunk c) feeds stage s + 1's F(k), or across the wrap stage 0's F(k + P) (chunk
 * c + 1): sent at call k + 1 (tick k + 1 + s), received at call k of stage s + 1 (tick
 * k + s + 1) or call k + P of stage 0 (tick k + P). Backward: stage s's B(k) gradient
 * feeds stage s − 1's B(k) (received at call W_{s−1} + k = W_s + 2 + k, tick W_s + k + 1
 * + s, as sent), or across the wrap stage P − 1's B(k + P) (tick W_{P−1} + k + P + P − 1
 * = W_0 + k + 1, as sent). W_s − W_{s+1} = 2 is what makes the ticks meet.
 */
#include <stdlib.h>

#include "exec_internal.h"

uint32_t tsl_exec_il_chunk(const tsl_exec_il_t *il, uint32_t k, bool fwd)
{
    uint32_t c = (k % (il->pp * il->v)) / il->pp;
    return fwd ? c : il->v - 1 - c;
}

uint32_t tsl_exec_il_micro(const tsl_exec_il_t *il, uint32_t k)
{
    return k / (il->pp * il->v) * il->pp + k % il->pp;
}

void tsl_exec_il_init(tsl_exec_il_t *il, uint32_t pp, uint32_t stage, uint32_t v, uint32_t m)
{
    *il = (tsl_exec_il_t){.pp = pp, .stage = stage, .v = v, .m = m, .total = m * v};
    il->warm = (pp - stage - 1) * 2 + (v - 1) * pp;
    il->n_calls = il->warm + il->total + 1;
}

/* Whether the chunk is the first (0) or last virtual stage of the model. */
static bool first_virtual(const tsl_exec_il_t *il, uint32_t c)
{
    return il->stage == 0 && c == 0;
}

static bool last_virtual(const tsl_exec_il_t *il, uint32_t c)
{
    return il->stage + 1 == il->pp && c + 1 == il->v;
}

void tsl_exec_il_call(const tsl_exec_il_t *il, uint32_t i, tsl_exec_il_call_t *out)
{
    *out = (tsl_exec_il_call_t){-1, -1, -1, -1};
    if (i < il->total && !first_virtual(il, tsl_exec_il_chunk(il, i, true)))
        out->recv_f = i;
    if (i >= 1 && i - 1 < il->total && !last_virtual(il, tsl_exec_il_chunk(il, i - 1, true)))
        out->send_f = i - 1;
    if (i >= il->warm && i - il->warm < il->total &&
        !last_virtual(il, tsl_exec_il_chunk(il, i - il->warm, false)))
        out->recv_b = i - il->warm;
    if (i >= il->warm + 1 && i - il->warm - 1 < il->total &&
        !first_virtual(il, tsl_exec_il_chunk(il, i - il->warm - 1, false)))
        out->send_b = i - il->warm - 1;
}

uint32_t tsl_exec_il_slots(const tsl_exec_il_t *il, uint32_t *slot_of)
{
    uint8_t *busy = calloc(il->total ? il->total : 1, 1);
    uint32_t used = 0, most = 0;
    if (!busy)
        return 0;
    for (uint32_t i = 0; i + 1 < il->n_calls; i++) {
        if (i < il->total) { /* F(i) takes the lowest free slot */
            uint32_t k = 0, c = tsl_exec_il_chunk(il, i, true);
            while (busy[k])
                k++;
            busy[k] = 1;
            slot_of[c * il->m + tsl_exec_il_micro(il, i)] = k;
            most = ++used > most ? used : most;
        }
        if (i >= il->warm) { /* B(i − W) frees its forward's */
            uint32_t b = i - il->warm, c = tsl_exec_il_chunk(il, b, false);
            busy[slot_of[c * il->m + tsl_exec_il_micro(il, b)]] = 0;
            used--;
        }
    }
    free(busy);
    return most;
}

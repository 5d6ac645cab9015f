/*
 * sim_memo.c — the event simulator's answers by a fingerprint of its input
 * (sim_memo.h).
 */
#include "sim_memo.h"

#include <stdlib.h>
#include <string.h>

#include "lane_hash.h"

typedef struct sim_memo_slot {
    uint64_t h[2];
    double flush_s, iter_s;
    bool used;
} sim_memo_slot_t;

struct tsl_sim_memo {
    sim_memo_slot_t slot[TSL_SIM_MEMO_SLOTS];
    uint32_t n_used;
};

/* One of the input's arrays: a mark for NULL, else its n figures. */
static void key_array(tsl_lane_hash_t *f, const double *x, uint32_t n)
{
    const uint64_t mark = x != NULL ? n : UINT64_MAX;
    tsl_lane_hash_bytes(f, &mark, sizeof(mark));
    if (x != NULL && n > 0)
        tsl_lane_hash_bytes(f, x, n * sizeof(*x));
}

void tsl_sim_memo_key(const tsl_pipesim_in_t *in, uint64_t h[2])
{
    const uint32_t P = in->n_stages;
    /* the scalars one at a time (not the struct's bytes, whose padding a copy need
     * not keep) */
    uint64_t w[12] = {P,
                      in->n_micro,
                      in->n_sliced,
                      in->n_chunks,
                      in->tie_stage,
                      in->p2p_blocking,
                      in->p2p_rendezvous,
                      in->schedule,
                      in->vp_group};
    memcpy(&w[9], &in->slice_fwd_frac, sizeof(double));
    memcpy(&w[10], &in->slice_p2p_frac, sizeof(double));
    memcpy(&w[11], &in->tie_s, sizeof(double));
    tsl_lane_hash_t f;
    tsl_lane_hash_init(&f);
    tsl_lane_hash_bytes(&f, w, sizeof(w));
    key_array(&f, in->fwd_s, P);
    key_array(&f, in->bwd_s, P);
    key_array(&f, in->bwd_sync_s, P);
    key_array(&f, in->p2p_s, P > 0 ? P - 1 : 0);
    key_array(&f, in->opt_s, P);
    key_array(&f, in->sync_tail_s, P);
    key_array(&f, in->wgrad_s, P);
    key_array(&f, in->fb_save_s, P);
    key_array(&f, in->c1_fwd_s, P);
    key_array(&f, in->c1_bwd_s, P);
    key_array(&f, in->c1_wgrad_s, P);
    tsl_lane_hash_final(&f, h);
}

/* h's slot: its answer, or the empty slot where it goes. */
static const sim_memo_slot_t *find(const tsl_sim_memo_t *m, const uint64_t h[2])
{
    uint32_t i = (uint32_t)h[0] & (TSL_SIM_MEMO_SLOTS - 1);
    while (m->slot[i].used && (m->slot[i].h[0] != h[0] || m->slot[i].h[1] != h[1]))
        i = (i + 1) & (TSL_SIM_MEMO_SLOTS - 1);
    return &m->slot[i];
}

bool tsl_sim_memo_get(const tsl_sim_memo_t *m, const uint64_t h[2], double *flush_s, double *iter_s)
{
    if (m == NULL)
        return false;
    const sim_memo_slot_t *s = find(m, h);
    if (!s->used)
        return false;
    *flush_s = s->flush_s;
    *iter_s = s->iter_s;
    return true;
}

void tsl_sim_memo_put(tsl_sim_memo_t **m, const uint64_t h[2], double flush_s, double iter_s)
{
    if (*m == NULL && (*m = calloc(1, sizeof(**m))) == NULL)
        return;
    tsl_sim_memo_t *memo = *m;
    if (2 * (memo->n_used + 1) > TSL_SIM_MEMO_SLOTS) { /* afresh */
        memset(memo->slot, 0, sizeof(memo->slot));
        memo->n_used = 0;
    }
    sim_memo_slot_t *s = (sim_memo_slot_t *)find(memo, h);
    if (!s->used)
        memo->n_used++;
    *s = (sim_memo_slot_t){{h[0], h[1]}, flush_s, iter_s, true};
}

void tsl_sim_memo_free(tsl_sim_memo_t *m)
{
    free(m);
}

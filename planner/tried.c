/*
 * tried.c — the partitions a re-balancing has costed (tried.h): open addressing over
 * an array of whole keys, grown by doubling.
 */
#include "tried.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lane_hash.h"
#include "plan.h"

typedef struct tried_entry {
    uint32_t B, P, m;
    uint32_t first[TSL_PLAN_MAX_STAGES];
    double held;
} tried_entry_t;

struct tsl_tried {
    tried_entry_t *entry; /* [n], room for cap */
    uint32_t n, cap;
    uint32_t *slot; /* [n_slots]: 1 + an entry's index, 0 empty; n_slots = 2 · cap */
    uint32_t n_slots;
};

tsl_tried_t *tsl_tried_new(void)
{
    return calloc(1, sizeof(tsl_tried_t));
}

void tsl_tried_free(tsl_tried_t *t)
{
    if (t == NULL)
        return;
    free(t->entry);
    free(t->slot);
    free(t);
}

void tsl_tried_clear(tsl_tried_t *t)
{
    if (t == NULL)
        return;
    t->n = 0;
    if (t->slot)
        memset(t->slot, 0, t->n_slots * sizeof(*t->slot));
}

static uint64_t key_hash(uint32_t B, uint32_t P, uint32_t m, const uint32_t *first)
{
    uint64_t h = tsl_lane_mix64(((uint64_t)B << 32) ^ ((uint64_t)P << 20) ^ m);
    for (uint32_t s = 0; s < P; s++)
        h = tsl_lane_mix64(h ^ first[s]);
    return h;
}

static bool key_eq(const tried_entry_t *x, uint32_t B, uint32_t P, uint32_t m,
                   const uint32_t *first)
{
    return x->B == B && x->P == P && x->m == m && memcmp(x->first, first, P * sizeof(*first)) == 0;
}

/* The slot of the key: its entry's, or the empty one it would take. */
static uint32_t *find(const tsl_tried_t *t, uint32_t B, uint32_t P, uint32_t m,
                      const uint32_t *first)
{
    uint32_t mask = t->n_slots - 1, i = (uint32_t)key_hash(B, P, m, first) & mask;
    while (t->slot[i] && !key_eq(&t->entry[t->slot[i] - 1], B, P, m, first))
        i = (i + 1) & mask;
    return &t->slot[i];
}

double tsl_tried_held(const tsl_tried_t *t, uint32_t B, uint32_t P, uint32_t m,
                      const uint32_t *first)
{
    if (t == NULL || t->n == 0 || P > TSL_PLAN_MAX_STAGES)
        return 0;
    const uint32_t *at = find(t, B, P, m, first);
    return *at ? t->entry[*at - 1].held : 0;
}

/* Room for one more entry, the slots rebuilt at twice the entries' room. */
static bool grow(tsl_tried_t *t)
{
    if (t->n < t->cap)
        return true;
    uint32_t cap = t->cap ? 2 * t->cap : 256;
    tried_entry_t *entry = realloc(t->entry, cap * sizeof(*entry));
    if (entry == NULL)
        return false;
    t->entry = entry;
    uint32_t *slot = calloc(2 * (size_t)cap, sizeof(*slot));
    if (slot == NULL)
        return false;
    free(t->slot);
    t->slot = slot;
    t->cap = cap;
    t->n_slots = 2 * cap;
    for (uint32_t k = 0; k < t->n; k++) {
        const tried_entry_t *x = &t->entry[k];
        *find(t, x->B, x->P, x->m, x->first) = k + 1;
    }
    return true;
}

void tsl_tried_note(tsl_tried_t *t, uint32_t B, uint32_t P, uint32_t m, const uint32_t *first,
                    double held)
{
    if (t == NULL || P > TSL_PLAN_MAX_STAGES || !grow(t))
        return;
    uint32_t *at = find(t, B, P, m, first);
    if (*at) {
        tried_entry_t *x = &t->entry[*at - 1];
        x->held = held > x->held ? held : x->held;
        return;
    }
    tried_entry_t *x = &t->entry[t->n];
    x->B = B;
    x->P = P;
    x->m = m;
    memcpy(x->first, first, P * sizeof(*first));
    x->held = held;
    *at = ++t->n;
}

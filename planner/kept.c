/* kept.c — the figures' table of kept.h. */
#include "kept.h"

#include <stdlib.h>
#include <string.h>

void tsl_kept_init(tsl_kept_t *t, uint32_t key_size, uint32_t val_size, uint32_t first,
                   uint32_t most)
{
    memset(t, 0, sizeof(*t));
    t->key_size = key_size;
    t->val_size = val_size;
    t->first = first;
    t->most = most;
}

void tsl_kept_free(tsl_kept_t *t)
{
    free(t->used);
    free(t->entry);
    t->used = NULL;
    t->entry = NULL;
    t->cap = t->n = 0;
}

/* Where key's probe starts in t's slots: FNV-1a over its bytes, then a 64-bit
 * finaliser (murmur3's) so the low bits the mask keeps mix every byte. */
static uint32_t kept_home(const tsl_kept_t *t, const unsigned char *key)
{
    uint64_t h = 0xCBF29CE484222325ull;
    for (uint32_t i = 0; i < t->key_size; i++)
        h = (h ^ key[i]) * 0x100000001B3ull;
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    return (uint32_t)h & (t->cap - 1);
}

/* A key's bytes rounded up to 8: its value starts there, aligned for a double. */
static size_t kept_val_at(const tsl_kept_t *t)
{
    return (t->key_size + 7u) & ~(size_t)7u;
}

/* An entry's bytes: its key and its value, each rounded up to 8 (every value aligned). */
static size_t kept_stride(const tsl_kept_t *t)
{
    return kept_val_at(t) + ((t->val_size + 7u) & ~(size_t)7u);
}

static unsigned char *kept_entry(const tsl_kept_t *t, uint32_t i)
{
    return t->entry + (size_t)i * kept_stride(t);
}

/* The slot holding key, or the empty one where it goes (never full: kept_room keeps a
 * quarter of the slots empty). */
static uint32_t kept_probe(const tsl_kept_t *t, const void *key)
{
    uint32_t i = kept_home(t, key);
    while (t->used[i] && memcmp(kept_entry(t, i), key, t->key_size) != 0)
        i = (i + 1) & (t->cap - 1);
    return i;
}

/* cap empty slots for t; -1 out of memory, t as it was. */
static int kept_alloc(tsl_kept_t *t, uint32_t cap)
{
    uint8_t *used = calloc(cap, 1);
    unsigned char *entry = malloc((size_t)cap * kept_stride(t));
    if (used == NULL || entry == NULL) {
        free(used);
        free(entry);
        return -1;
    }
    t->used = used;
    t->entry = entry;
    t->cap = cap;
    t->n = 0;
    return 0;
}

/* Doubles t's slots, its entries moved over; -1 out of memory (t as it was). */
static int kept_grow(tsl_kept_t *t)
{
    tsl_kept_t old = *t;
    const size_t size = kept_stride(t);
    if (kept_alloc(t, old.cap * 2) != 0)
        return -1;
    for (uint32_t i = 0; i < old.cap; i++) {
        if (!old.used[i])
            continue;
        const unsigned char *e = kept_entry(&old, i);
        uint32_t j = kept_probe(t, e);
        t->used[j] = 1;
        memcpy(kept_entry(t, j), e, size);
        t->n++;
    }
    free(old.used);
    free(old.entry);
    return 0;
}

/* Room for one more key at most three quarters full: the first slots made, doubled
 * below `most`, else (or out of memory) emptied. false when t has no slots at all. */
static bool kept_room(tsl_kept_t *t)
{
    if (t->cap == 0)
        return kept_alloc(t, t->first) == 0;
    if (4 * (uint64_t)(t->n + 1) <= 3 * (uint64_t)t->cap)
        return true;
    if (t->cap < t->most && kept_grow(t) == 0)
        return true;
    memset(t->used, 0, t->cap);
    t->n = 0;
    t->restarts++;
    return true;
}

const void *tsl_kept_find(const tsl_kept_t *t, const void *key)
{
    if (t->cap == 0)
        return NULL;
    uint32_t i = kept_probe(t, key);
    return t->used[i] ? kept_entry(t, i) + kept_val_at(t) : NULL;
}

void *tsl_kept_put(tsl_kept_t *t, const void *key)
{
    if (!kept_room(t))
        return NULL;
    uint32_t i = kept_probe(t, key);
    unsigned char *e = kept_entry(t, i);
    if (!t->used[i]) {
        t->used[i] = 1;
        t->n++;
        memcpy(e, key, t->key_size);
    }
    return e + kept_val_at(t);
}

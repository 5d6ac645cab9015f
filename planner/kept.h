/*
 * kept.h — a table of figures kept by key, for work the search would otherwise
 * repeat bit for bit (cost.h tsl_cost_walks_t: the groups' topology walks and the
 * layout moves' walks of a search's engines). Keys and values are fixed-size bytes;
 * keys compare with memcmp, so a caller zeroes a key's padding and unused fields.
 * Open addressing (linear probing): a key put is found until the table starts afresh.
 * The slots are made at the first put (an empty table costs its header alone), doubled
 * when three quarters full up to `most`, and past that emptied and filled again (the
 * memory stays bounded; a figure dropped is made again by its caller, the same).
 */
#ifndef TSL_KEPT_H
#define TSL_KEPT_H

#include <stdbool.h>
#include <stdint.h>

typedef struct tsl_kept {
    uint32_t key_size, val_size; /* bytes of a key, of a value */
    uint32_t first, most;        /* slots made at the first put; the most it grows to
                                    (powers of two) */
    uint32_t cap;                /* slots now, 0 before the first put */
    uint32_t n;                  /* slots filled */
    uint32_t restarts;           /* times it filled up at `most` and started afresh */
    uint8_t *used;               /* [cap] 1 where the slot holds a key */
    unsigned char *entry;        /* [cap] entries: each key, then its value (each rounded
                                    up to 8 bytes: a value is aligned for a double) */
} tsl_kept_t;

/* An empty table of key_size-byte keys and val_size-byte values (first ≤ most, both
 * powers of two). Makes nothing: the first tsl_kept_put makes the slots. */
void tsl_kept_init(tsl_kept_t *t, uint32_t key_size, uint32_t val_size, uint32_t first,
                   uint32_t most);

/* Frees t's slots; t is empty again (its sizes kept). */
void tsl_kept_free(tsl_kept_t *t);

/* The value kept for key, or NULL where none is. */
const void *tsl_kept_find(const tsl_kept_t *t, const void *key);

/* Where key's value goes (key not in t: tsl_kept_find said NULL), its key written, the
 * caller writing the value before the next put; may grow or empty t. NULL out of
 * memory (nothing kept). */
void *tsl_kept_put(tsl_kept_t *t, const void *key);

#endif

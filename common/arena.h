/*
 * arena.h — a bump allocator for data that lives and dies together (one RPC
 * answer's protobuf message tree, one page of a listing): every allocation is
 * zeroed and aligned for any type; one tsl_arena_free releases them all.
 *
 * `tsl_arena_t a = {0};` is an empty arena. Allocation returns NULL when out of
 * memory; what was allocated before stays valid until the free.
 */
#ifndef TSL_ARENA_H
#define TSL_ARENA_H

#include <stddef.h>

typedef struct tsl_arena {
    struct tsl_arena_chunk *head;
} tsl_arena_t;

void *tsl_arena_alloc(tsl_arena_t *a, size_t size);
/* A copy of s ("" for NULL). */
char *tsl_arena_strdup(tsl_arena_t *a, const char *s);
void tsl_arena_free(tsl_arena_t *a);

#endif

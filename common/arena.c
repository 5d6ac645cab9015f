/*
 * arena.c — chunks of 16 KiB (or one allocation's size when larger), newest
 * first (arena.h).
 */
#include "arena.h"

#include <stdlib.h>
#include <string.h>

#define ARENA_CHUNK 16384u

struct tsl_arena_chunk {
    struct tsl_arena_chunk *next;
    size_t used, cap;
    _Alignas(max_align_t) unsigned char data[];
};

void *tsl_arena_alloc(tsl_arena_t *a, size_t size)
{
    size = (size + _Alignof(max_align_t) - 1) & ~(_Alignof(max_align_t) - 1);
    struct tsl_arena_chunk *c = a->head;
    if (!c || c->cap - c->used < size) {
        size_t cap = size > ARENA_CHUNK ? size : ARENA_CHUNK;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->next = a->head;
        c->used = 0;
        c->cap = cap;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

char *tsl_arena_strdup(tsl_arena_t *a, const char *s)
{
    size_t n = strlen(s ? s : "") + 1;
    char *d = tsl_arena_alloc(a, n);
    if (d)
        memcpy(d, s ? s : "", n);
    return d;
}

void tsl_arena_free(tsl_arena_t *a)
{
    while (a->head) {
        struct tsl_arena_chunk *next = a->head->next;
        free(a->head);
        a->head = next;
    }
}

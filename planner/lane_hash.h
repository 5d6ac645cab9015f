/*
 * lane_hash.h — a 128-bit fingerprint of runs of bytes, the search's memo key
 * (search_eval.c: everything a layer-DP problem holds, a few hundred kilobytes at
 * 100k GPUs, so its speed shows in the search's CPU).
 *
 * TSL_LANE_HASH_LANES (32) independent 64-bit lanes, each word taken in as XXH64's
 * round (acc += w·P2, rotate 31, acc ·= P1): word k of each 32-word block into lane
 * k, the tail's words into lanes 0, 1, …, then the run's length into lane 0. A round
 * is two dependent multiplies, so a scalar core does about half a word per cycle;
 * with AVX-512DQ (chosen at run time) four vectors of eight lanes take 32 words per
 * pass — the same rounds lane by lane, so the fingerprint is the same on every CPU
 * (tsl_lane_hash_bytes_portable is the scalar reference the tests hold it to).
 * Not cryptographic: distinct inputs collide with probability about 2^-128.
 *
 * Pure: no allocation, no I/O, no global state.
 */
#ifndef TSL_LANE_HASH_H
#define TSL_LANE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define TSL_LANE_HASH_LANES 32u

typedef struct tsl_lane_hash {
    uint64_t v[TSL_LANE_HASH_LANES];
} tsl_lane_hash_t;

/* splitmix64's finaliser: a bijection that spreads every input bit. */
static inline uint64_t tsl_lane_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ x >> 31;
}

/* Distinct starting lanes (no two alike). */
void tsl_lane_hash_init(tsl_lane_hash_t *f);

/* p[0 .. n) into the lanes, then n itself (the tail zero-padded to whole words). */
void tsl_lane_hash_bytes(tsl_lane_hash_t *f, const void *p, size_t n);

/* tsl_lane_hash_bytes with the scalar rounds only, whatever the CPU: the same result. */
void tsl_lane_hash_bytes_portable(tsl_lane_hash_t *f, const void *p, size_t n);

/* The two 64-bit halves, each drawn from every lane. */
void tsl_lane_hash_final(const tsl_lane_hash_t *f, uint64_t h[2]);

#endif

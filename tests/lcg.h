/*
 * lcg.h — the tests' reproducible random numbers: Knuth's MMIX linear congruential
 * generator (x ← 6364136223846793005·x + 1442695040888963407 mod 2⁶⁴), its top 53 bits
 * as a double in [0, 1). lcg01 and lcg_below draw from the file's own stream,
 * lcg_state, seeded with LCG_SEED, which the test defines before including this;
 * lcg_next01 draws from any other. Header-only: each test keeps its own stream.
 */
#ifndef TSL_TEST_LCG_H
#define TSL_TEST_LCG_H

#include <stdint.h>

static inline double lcg_next01(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*x >> 11) / 9007199254740992.0;
}

static uint64_t lcg_state = LCG_SEED;

static inline double lcg01(void)
{
    return lcg_next01(&lcg_state);
}

/* [0, n) */
static inline uint32_t lcg_below(uint32_t n)
{
    return (uint32_t)(lcg01() * n);
}

#endif

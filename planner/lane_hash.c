/* lane_hash.c — lane_hash.h's lanes, scalar and AVX-512DQ. */
#include "lane_hash.h"

#include <stdbool.h>
#include <string.h>

#define FP_P1    0x9e3779b185ebca87ull
#define FP_P2    0xc2b2ae3d27d4eb4full
#define FP_BLOCK (TSL_LANE_HASH_LANES * sizeof(uint64_t))

static inline uint64_t fp_round(uint64_t acc, uint64_t w)
{
    acc += w * FP_P2;
    acc = acc << 31 | acc >> 33;
    return acc * FP_P1;
}

/* The whole FP_BLOCK blocks of b[0 .. n) into the lanes; returns the bytes taken. */
static size_t blocks_scalar(uint64_t *v, const unsigned char *b, size_t n)
{
    size_t i = 0;
    for (; i + FP_BLOCK <= n; i += FP_BLOCK) {
        uint64_t w[TSL_LANE_HASH_LANES];
        memcpy(w, b + i, sizeof w);
        for (uint32_t k = 0; k < TSL_LANE_HASH_LANES; k++)
            v[k] = fp_round(v[k], w[k]);
    }
    return i;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define TSL_LANE_HASH_AVX512 1
/* blocks_scalar with lanes 8q … 8q + 7 in vector q: four independent chains hide the
 * multiplies' latency */
__attribute__((target("avx512f,avx512dq"))) static size_t
blocks_avx512(uint64_t *v, const unsigned char *b, size_t n)
{
    const __m512i p1 = _mm512_set1_epi64((long long)FP_P1),
                  p2 = _mm512_set1_epi64((long long)FP_P2);
    __m512i acc[4];
    for (uint32_t q = 0; q < 4; q++)
        acc[q] = _mm512_loadu_si512(v + 8 * q);
    size_t i = 0;
    for (; i + FP_BLOCK <= n; i += FP_BLOCK)
        for (uint32_t q = 0; q < 4; q++) {
            __m512i w = _mm512_loadu_si512(b + i + 64 * q);
            __m512i a = _mm512_add_epi64(acc[q], _mm512_mullo_epi64(w, p2));
            acc[q] = _mm512_mullo_epi64(_mm512_rol_epi64(a, 31), p1);
        }
    for (uint32_t q = 0; q < 4; q++)
        _mm512_storeu_si512(v + 8 * q, acc[q]);
    return i;
}
#endif

static void fp_take(tsl_lane_hash_t *f, const void *p, size_t n, bool portable)
{
    const unsigned char *b = p;
    size_t i;
#ifdef TSL_LANE_HASH_AVX512
    if (!portable && __builtin_cpu_supports("avx512dq"))
        i = blocks_avx512(f->v, b, n);
    else
#endif
        i = blocks_scalar(f->v, b, n);
    (void)portable;
    for (uint32_t k = 0; i < n; i += 8, k++) {
        uint64_t w = 0;
        memcpy(&w, b + i, n - i < 8 ? n - i : 8);
        f->v[k] = fp_round(f->v[k], w);
    }
    f->v[0] = fp_round(f->v[0], n);
}

void tsl_lane_hash_init(tsl_lane_hash_t *f)
{
    for (uint32_t k = 0; k < TSL_LANE_HASH_LANES; k++)
        f->v[k] = tsl_lane_mix64(0x243f6a8885a308d3ull + k * FP_P1);
}

void tsl_lane_hash_bytes(tsl_lane_hash_t *f, const void *p, size_t n)
{
    fp_take(f, p, n, false);
}

void tsl_lane_hash_bytes_portable(tsl_lane_hash_t *f, const void *p, size_t n)
{
    fp_take(f, p, n, true);
}

void tsl_lane_hash_final(const tsl_lane_hash_t *f, uint64_t h[2])
{
    uint64_t a = 0, b = FP_P1;
    for (uint32_t k = 0; k < TSL_LANE_HASH_LANES; k++) {
        a = tsl_lane_mix64(a ^ f->v[k]);
        b = tsl_lane_mix64(b + f->v[TSL_LANE_HASH_LANES - 1 - k]);
    }
    h[0] = a;
    h[1] = b;
}

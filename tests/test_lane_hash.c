/*
 * test_lane_hash.c — the search memo's fingerprint (planner/lane_hash.h): the
 * vector path (AVX-512DQ where this CPU has it) gives the scalar rounds' lanes
 * bit for bit at every length and alignment, a run's length and every byte count,
 * and the two halves differ for inputs one bit apart.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "lane_hash.h"

static uint64_t next(uint64_t *x)
{
    *x += 0x9e3779b97f4a7c15ull;
    return tsl_lane_mix64(*x);
}

static void fill(unsigned char *b, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)next(&seed);
}

/* Both paths over the same runs, each run at every offset 0..7 and every length
 * across the block boundaries (32 words = 256 bytes). */
static void test_vector_is_scalar(void)
{
    static unsigned char buf[4096 + 8];
    fill(buf, sizeof buf, 1);
    uint32_t differ = 0, runs = 0;
    for (size_t off = 0; off < 8; off++)
        for (size_t n = 0; n <= 1100; n += n < 600 ? 1 : 37) {
            tsl_lane_hash_t a, b;
            tsl_lane_hash_init(&a);
            tsl_lane_hash_init(&b);
            tsl_lane_hash_bytes(&a, buf + off, n);
            tsl_lane_hash_bytes_portable(&b, buf + off, n);
            tsl_lane_hash_bytes(&a, buf + 4096 - n / 2, n / 2);
            tsl_lane_hash_bytes_portable(&b, buf + 4096 - n / 2, n / 2);
            differ += memcmp(a.v, b.v, sizeof a.v) != 0;
            runs++;
        }
    CHECK(differ == 0, "%u of %u runs: the vector lanes differ from the scalar rounds", differ,
          runs);
}

static void digest(const void *p, size_t n, uint64_t h[2])
{
    tsl_lane_hash_t f;
    tsl_lane_hash_init(&f);
    tsl_lane_hash_bytes(&f, p, n);
    tsl_lane_hash_final(&f, h);
}

/* One bit flipped anywhere, a byte more or less, a zero byte appended: each moves
 * both halves. */
static void test_sensitive(void)
{
    static unsigned char buf[1024];
    fill(buf, sizeof buf, 7);
    uint64_t h0[2], h[2];
    digest(buf, sizeof buf, h0);
    uint32_t same = 0;
    for (size_t bit = 0; bit < 8 * sizeof buf; bit += 13) {
        buf[bit / 8] ^= (unsigned char)(1u << bit % 8);
        digest(buf, sizeof buf, h);
        same += h[0] == h0[0] || h[1] == h0[1];
        buf[bit / 8] ^= (unsigned char)(1u << bit % 8);
    }
    CHECK(same == 0, "%u one-bit changes left a half unchanged", same);
    digest(buf, sizeof buf - 1, h);
    CHECK(h[0] != h0[0] && h[1] != h0[1], "a byte shorter");
    unsigned char zeros[16] = {0};
    uint64_t z7[2], z8[2];
    digest(zeros, 7, z7);
    digest(zeros, 8, z8);
    CHECK(z7[0] != z8[0] && z7[1] != z8[1], "7 and 8 zero bytes: the length counts");
    digest(buf, sizeof buf, h);
    CHECK(h[0] == h0[0] && h[1] == h0[1], "the same bytes, the same fingerprint");
}

int main(void)
{
    test_vector_is_scalar();
    test_sensitive();
    return CHECK_DONE();
}

/* Tests for common/malloc_tune: the operator's own malloc tunables win; and with the
 * thresholds set, a large block freed no longer moves blocks under its size onto the
 * heap (glibc's dynamic mmap threshold, which made bench/search's peak RSS follow the
 * heap's layout: docs/design.md "Performance"). */
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "check.h"
#include "malloc_tune.h"

static void wanted(void)
{
    CHECK(tsl_malloc_tune_wanted(NULL, NULL, NULL), "nothing set: tuned");
    CHECK(tsl_malloc_tune_wanted("glibc.rtld.optional_static_tls=2048", NULL, NULL),
          "a tunable of another namespace: tuned");
    CHECK(!tsl_malloc_tune_wanted("glibc.malloc.mmap_threshold=65536", NULL, NULL),
          "the operator's GLIBC_TUNABLES malloc tunable wins");
    CHECK(!tsl_malloc_tune_wanted(NULL, "65536", NULL), "MALLOC_MMAP_THRESHOLD_ wins");
    CHECK(!tsl_malloc_tune_wanted(NULL, NULL, "0"), "MALLOC_TRIM_THRESHOLD_ wins");
}

/* A 4 MiB block freed, then a 1 MiB one made: glibc's dynamic threshold would have
 * risen to 4 MiB and put it on the heap; held at TSL_MALLOC_MMAP_THRESHOLD_BYTES it is
 * mmap()ed (mallinfo2's hblkhd counts mmap()ed bytes). */
#if defined(__SANITIZE_ADDRESS__)
#define TSL_OWN_MALLOC 1 /* gcc's ASan: its allocator, not glibc's */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TSL_OWN_MALLOC 1 /* clang's */
#endif
#endif

static void held(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33) && !defined(TSL_OWN_MALLOC)
    unsetenv("GLIBC_TUNABLES");
    unsetenv("MALLOC_MMAP_THRESHOLD_");
    unsetenv("MALLOC_TRIM_THRESHOLD_");
    tsl_malloc_tune();
    char *big = malloc(4u << 20);
    CHECK(big != NULL, "4 MiB");
    memset(big, 1, 4u << 20);
    free(big);
    size_t before = mallinfo2().hblkhd;
    char *mid = malloc(1u << 20);
    CHECK(mid != NULL, "1 MiB");
    size_t after = mallinfo2().hblkhd;
    CHECK(after >= before + (1u << 20), "1 MiB after a 4 MiB block freed: mmap()ed (%zu -> %zu)",
          before, after);
    free(mid);
#endif
}

int main(void)
{
    wanted();
    held();
    return CHECK_DONE();
}

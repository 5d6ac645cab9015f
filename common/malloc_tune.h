/*
 * malloc_tune.h — fixed glibc malloc thresholds for every program that runs searches
 * (tesseld, tesselctl's local planning, bench/search).
 *
 * glibc raises its mmap threshold to the size of each mmap()ed block freed (up to
 * 32 MiB) and its trim threshold to twice that. A search frees such blocks early (its
 * kept table's arrays as they double, the event simulator's workspace as it grows, the
 * sub-layer engine's layouts), after which every block under the new threshold — the
 * engines' tables, the layer DP's workspace, the cost memo's chunks — lands on the brk
 * heap, whose top is no longer trimmed: the peak RSS follows the heap's layout rather
 * than the memory live at once (Llama3-405B on 12,500×8 H100: 231 MiB, 155 with the
 * thresholds held; docs/design.md "Performance"). Fixed thresholds keep large blocks in
 * mmap (unmapped on free) and trim a heap's top, so a search's peak is what it holds.
 */
#ifndef TSL_MALLOC_TUNE_H
#define TSL_MALLOC_TUNE_H

#include <stdbool.h>

/* glibc malloc: blocks from this size on are mmap()ed (and unmapped on free) ... */
#define TSL_MALLOC_MMAP_THRESHOLD_BYTES (256 * 1024)
/* ... and an arena hands back free memory at its top past this much. */
#define TSL_MALLOC_TRIM_THRESHOLD_BYTES (1024 * 1024)

/* Whether to set the thresholds, given the environment's GLIBC_TUNABLES,
 * MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_ (each NULL where unset): false
 * where the operator set a malloc tunable of their own (theirs wins). */
bool tsl_malloc_tune_wanted(const char *tunables, const char *mmap_env, const char *trim_env);

/* Sets both thresholds unless the environment sets its own (tsl_malloc_tune_wanted);
 * call first thing in main, before any thread starts. Nothing off glibc. */
void tsl_malloc_tune(void);

#endif

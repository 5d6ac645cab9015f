/*
 * ds_partition.h — the two ways DeepSpeed's PipelineModule cuts its layer list into
 * pipeline stages (runtime/pipe/module.py _partition_layers at deepspeedai/DeepSpeed
 * edaa722), written for Tessel from the algorithms of deepspeed/runtime/utils.py:
 *
 *   'uniform'      partition_uniform over the list's length;
 *   'type:REGEX',  partition_balanced over per-layer weights: 1 for the layers whose
 *   'parameters'   class name matches REGEX and 0 for the rest, or parameter counts.
 *
 * A cut is parts[0..P]: stage s holds list items [parts[s], parts[s + 1]), parts[0] = 0,
 * parts[P] = n.
 *
 * tsl_ds_partition_uniform(n, P): n ≤ P: parts[p] = min(p, n) (trailing stages empty).
 *   Else every stage n / P items and the first n mod P stages one more — DeepSpeed since
 *   v0.10.1 (#4053, 2023-08); before, the last stage took the whole remainder.
 *
 * tsl_ds_partition_balanced(w, n, P): n ≤ P: the uniform cut. Else DeepSpeed's dynamic
 *   programme (since v0.12.5, #4312, 2023-12; before, a bisection on the heaviest stage
 *   that cut otherwise): state (i, j), the first i items in j non-empty parts, keeps ONE
 *   pair (max, min) of part weights — the one of the split k (state (k, j − 1), then the
 *   part [k, i)) whose max − min is smallest, the LARGEST such k on ties; state (0, 0) is
 *   (0, +inf). The cut is traced back from (n, P). One pair per state makes this a
 *   heuristic, not the exact min of max − min over all cuts: it is reproduced as is,
 *   ties included, since it is what DeepSpeed builds. Integer weights (DeepSpeed sums
 *   float64, exact while the total stays below 2^53, which the caller keeps).
 *   Time O(n² P) at worst; a split k is skipped once its part alone outweighs the best
 *   cost by more than the average of the j − 1 parts before it (no smaller k can then
 *   win, so the result is unchanged), which makes a uniform-weight list ~O(n² P / P).
 *   Memory: (n + 1)(P + 1) positions and 4 (n + 1) weights, allocated per call.
 *   Returns 0, or -1 when out of memory (parts untouched).
 *
 * Pure: no I/O, no globals.
 */
#ifndef TSL_DS_PARTITION_H
#define TSL_DS_PARTITION_H

#include <stdint.h>

void tsl_ds_partition_uniform(uint32_t n, uint32_t P, uint32_t *parts);
int tsl_ds_partition_balanced(const uint64_t *w, uint32_t n, uint32_t P, uint32_t *parts);

#endif

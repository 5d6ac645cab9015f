#!/usr/bin/env python3
"""fsdp2_mem_probe_test.py — bench/fsdp2_mem_probe.py where there is no GPU (suite bench).

The probe needs a CUDA device and is run by hand (bench/published/README.md, "Memory
against published runs", the reading of 2026-11-30, says how); here: it byte-compiles;
its pure helpers give the hand-worked figures below (Llama 3.1 8B's parameters, the
reading's per-stream pools); and it refuses with exit 2, a message naming the reason and
no JSON written, where PyTorch does not import and where torch sees no CUDA device (a
stub `torch` package first on PYTHONPATH, so the result does not depend on this machine).

usage: fsdp2_mem_probe_test.py PATH/TO/bench/fsdp2_mem_probe.py
"""
import sys

from probe_check import check, run


def check_helpers(p):
    m = p.LLAMA8B
    # a block: 2 x 4096^2 (q, out) + 2 x 4096 x 1024 (k, v) + 3 x 4096 x 14336 + 2 x 4096
    # = 33,554,432 + 8,388,608 + 176,160,768 + 8,192
    block = 218112000
    # the root: 2 x 128,256 x 4096 (embedding, untied head) + 4096 (final norm)
    root = 1050677248
    pred8 = p.predicted(m, 8)
    want = [(p.block_params(m), block), (p.root_params(m), root),
            # 32 blocks + the root: the 8.03 B the benchmark names
            (pred8["total_params"], 32 * block + root),
            (pred8["total_params"], 8030261248),
            (pred8["unit_params"], root),
            # the root's flat fp32 RS input and bf16 AG output: 6 B x 1,050,677,248
            # = 6,304,063,488 B = 5.871 GiB, the same at any FSDP degree
            (pred8["beyond_tessel"], 6304063488),
            (round(pred8["beyond_tessel"] / 2 ** 30, 3), 5.871),
            (p.predicted(m, 128)["beyond_tessel"], 6304063488),
            # RS pool at 8 ranks: the sharded fp32 gradients 4 x 8,030,261,248 / 8
            # = 4,015,130,624 plus the root's 4 B input 4,202,708,992
            (pred8["reduce_scatter_pool"], 8217839616),
            (pred8["all_gather_pool"], 2101354496),
            # both pools: 10,319,194,112 B = 9.610 GiB beyond the allocated peak
            (pred8["beyond_allocated"], 10319194112),
            (round(pred8["beyond_allocated"] / 2 ** 30, 3), 9.61),
            # bf16 gradients reduced in bf16, a block-only stack: 2 + 2 B per block param
            (p.predicted(dict(m, vocab=1, hidden=4096), 1, 2, 2)["unit_params"], block)]
    segs = [{"stream": 0, "total_size": 100, "allocated_size": 60, "active_size": 70},
            {"stream": 0, "total_size": 20, "allocated_size": 0, "active_size": 0},
            {"stream": 0x55, "total_size": 40, "allocated_size": 8, "active_size": 8},
            {"stream": 0x66, "total_size": 6, "allocated_size": 6, "active_size": 6}]
    want.append((p.by_stream(segs, {0: "default", 0x55: "reduce_scatter"}),
                 {"default": {"reserved": 120, "allocated": 60, "active": 70},
                  "reduce_scatter": {"reserved": 40, "allocated": 8, "active": 8},
                  "stream 0x66": {"reserved": 6, "allocated": 6, "active": 6}}))
    for got, exp in want:
        check(got == exp, f"helper: got {got}, want {exp}")


def main():
    run(sys.argv[1], "fsdp2_mem_probe", check_helpers)


if __name__ == "__main__":
    main()

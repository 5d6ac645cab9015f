#!/usr/bin/env python3
"""torch_probe_test.py — bench/torch_probe.py where there is no GPU (suite bench).

The probe itself needs a CUDA device (bench/exec_gpu_check.sh step 6 runs it); here:
it byte-compiles; its pure helpers give the hand-worked figures below; and it refuses
with exit 2, a message naming the reason and no JSON written, both where PyTorch does
not import and where torch sees no CUDA device (each with a stub `torch` package first
on PYTHONPATH, so the result does not depend on what this machine has installed).

usage: torch_probe_test.py PATH/TO/bench/torch_probe.py
"""
import sys

from probe_check import check, run


def check_helpers(probe):
    p = probe
    want = [(p.reason_names(0), ["none"]),
            (p.reason_names(0x4 | 0x80), ["sw-power-cap", "hw-thermal"]),
            (p.reason_names(0x4 | 0x10), ["sw-power-cap", "0x10"]),
            # slope of 10 + 3 x over 4, 8, 16, 32 experts: 3 us per expert
            (round(p.slope([4, 8, 16, 32], [22, 34, 58, 106]), 9), 3.0),
            # 32,768 x 128,256 x 2 B = 8,405,385,216 B = 7.828 GiB (the README's 7.8)
            (round(p.predicted_gap_gib(32768), 3), 7.828),
            # per token 16 x 128256 + 2 x 4096 x 32 + 2 x (6 x 4096 + 2048 + 3 x 14336)
            # = 2,052,096 + 262,144 + 139,264 = 2,453,504 B; x 32,768 + 4 x 128256 x 4096
            (p.mem_need_bytes(32768), 2453504 * 32768 + 4 * 128256 * 4096)]
    # batches of (s, flop): mids at 0.2, 0.6 -> window 0 (0-0.8 s, 8e12: 10 TFLOP/s);
    # 1.0, 1.6 -> window 1 (0.8-2.0 s, 10e12: 8.333 TFLOP/s)
    w = p.windows([(0.4, 4e12), (0.4, 4e12), (0.4, 2e12), (0.8, 8e12)])
    want.append(([(round(s, 9), round(e, 9), round(r / 1e12, 3)) for s, e, r in w],
                 [(0.0, 0.8, 10.0), (0.8, 2.0, 8.333)]))
    # first_last: the first window, and the windows ending in the last 10 s as one:
    # windows 0-1 (10), 1-6 (8), 6-11 (6), 11-12 (4 TFLOP/s): last = 1-12 s,
    # (40 + 30 + 4) e12 / 11 s = 6.727 TFLOP/s
    fl = p.first_last([(0.0, 1.0, 10e12), (1.0, 6.0, 8e12), (6.0, 11.0, 6e12),
                       (11.0, 12.0, 4e12)])
    want.append(((fl[0], fl[1][:2], round(fl[1][2] / 1e12, 3)),
                 ((0.0, 1.0, 10e12), (1.0, 12.0), 6.727)))
    for got, exp in want:
        check(got == exp, f"helper: got {got}, want {exp}")


def main():
    run(sys.argv[1], "torch_probe", check_helpers)


if __name__ == "__main__":
    main()

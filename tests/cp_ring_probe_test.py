#!/usr/bin/env python3
"""cp_ring_probe_test.py — bench/cp_ring_probe.py where there is no GPU (suite bench).

The probe needs a CUDA device (bench/exec_gpu_check.sh step 7 runs it); here: it
byte-compiles; its pure helpers give the hand-worked figures below (the rows' measured
ring steps of bench/published/README.md, "torchtitan rows", the 8.8 TFLOP block of
its third reading, and the step kinds one rank runs in a pass of torch's ring, its
sixth reading); and it refuses with exit 2, a message naming the reason and no JSON
written, where PyTorch does not import and where torch sees no CUDA device (a stub
`torch` package first on PYTHONPATH, so the result does not depend on this machine).

usage: cp_ring_probe_test.py PATH/TO/bench/cp_ring_probe.py
"""
import sys

from probe_check import check, run


def check_helpers(p):
    steps = {c: round(s, 3) for c, s in p.measured_steps().items()}
    want = [
        # Table 2: 32,768 / TPS: 8.424, 12.901, 30.597, 59.796 s; per step against CP 1:
        # 4.477 (CP 2), 22.174 / 3 = 7.391 (CP 4), 51.372 / 7 = 7.339 (CP 8)
        (steps, {2: 4.477, 4: 7.391, 8: 7.339}),
        # the causal 32,768^2 block: 4 x 128 x 32,768 x 32,769 / 2 x 32 heads
        (p.kernel_flop(32768, 32768, True), 4 * 128 * 536887296 * 32),
        # an unmasked 32,768 x 16,384 block, and its transpose: 2^39 x 16 = 8.796e12
        (p.kernel_flop(32768, 16384, False), 8796093022208),
        (p.kernel_flop(16384, 32768, False), 8796093022208),
        # 32 layers x (2 x (25 + 1) + 60) ms = 3.584 s
        (round(p.per_iteration_s(25.0, 60.0, 1.0), 9), 3.584),
        (round(p.per_iteration_s(25.0, 60.0, 1.0, layers=1), 9), 0.112),
    ]
    for got, exp in want:
        check(got == exp, f"helper: got {got}, want {exp}")
    # one rank's pass: step i <= rank takes the source's first K/V chunk (kv_half), a
    # later one the second query chunk (q_half); CP 1 the causal kernel alone
    plans = [
        (p.ring_plan(1, 0), ["causal"]),
        (p.ring_plan(2, 0), ["causal", "q_half"]),
        (p.ring_plan(2, 1), ["causal", "kv_half"]),
        (p.ring_plan(4, 2), ["causal", "kv_half", "kv_half", "q_half"]),
        (p.ring_plan(8, 0), ["causal"] + ["q_half"] * 7),
        (p.ring_plan(8, 7), ["causal"] + ["kv_half"] * 7),
    ]
    for got, exp in plans:
        check(got == exp, f"ring_plan: got {got}, want {exp}")
    try:
        p.ring_plan(2, 2)
        check(False, "ring_plan(2, 2): no error for a rank outside the ring")
    except ValueError as e:
        check("rank 2" in str(e), f"ring_plan(2, 2): message {e}")
    # per step against CP 1: 12 - 8, (26 - 8) / 3, (50 - 8) / 7
    check(p.step_s({1: 8.0, 2: 12.0, 4: 26.0, 8: 50.0}) == {2: 4.0, 4: 6.0, 8: 6.0},
          f"step_s: {p.step_s({1: 8.0, 2: 12.0, 4: 26.0, 8: 50.0})}")
    check(p.step_s(p.MEASURED_S) == p.measured_steps(), "step_s of the measured rows")
    check(set(p.KINDS) == {"causal", "kv_half", "q_half"} and
          p.KINDS["q_half"] == (16384, 32768, False), f"kinds: {p.KINDS}")


def main():
    run(sys.argv[1], "cp_ring_probe", check_helpers)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""cp_ring_probe_test.py — bench/cp_ring_probe.py where there is no GPU (suite bench).

The probe needs a CUDA device (bench/exec_gpu_check.sh step 7 runs it); here: it
byte-compiles; its pure helpers give the hand-worked figures below (the rows' measured
ring steps of bench/published/README.md, "torchtitan rows", the 8.8 TFLOP block of
its third reading, and the step kinds one rank runs in a pass of torch's ring, its
sixth reading; the sustained unit's FLOPs and the --sustain / --pause defaults, a
negative one refused); its whole-pass closures run every rank's pass at CP 1, 2, 4 and 8 on
shape-only stand-ins for torch's tensors (each flash call's operands as ATen takes them,
every merge and accumulation lined up); and it refuses with exit 2, a message naming the reason and no JSON
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
    # the sustained unit: the 8.796 TFLOP kv_half forward and its 2.5 x backward
    check(p.unit_flop() == 3.5 * 8796093022208, f"unit_flop: {p.unit_flop()}")
    settings = [((True,), (20.0, 5.0)), ((False,), (60.0, 30.0)), ((True, 0, None), (0.0, 5.0)),
                ((False, 12, 0), (12.0, 0.0))]
    for args, exp in settings:
        check(p.sustain_settings(*args) == exp,
              f"sustain_settings{args}: {p.sustain_settings(*args)}, want {exp}")
    try:
        p.sustain_settings(True, -1)
        check(False, "sustain_settings(True, -1): no error for negative seconds")
    except ValueError as e:
        check("--sustain" in str(e), f"sustain_settings(True, -1): message {e}")


def check_bad_sustain(script):
    """--sustain -1 is refused by the argument parser (exit 2, naming --sustain) before
    torch is imported or anything is timed."""
    import subprocess
    r = subprocess.run([sys.executable, script, "--sustain", "-1"], capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 2 and "--sustain" in r.stderr and not r.stdout,
          f"--sustain -1: exit {r.returncode}, stderr {r.stderr.strip()!r}")


class Shape:
    """A shape-only stand-in for a torch tensor: the pass's views, chunks, casts and
    arithmetic as shapes and dtypes, with torch's broadcasting; any mismatch raises."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), dtype

    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def transpose(self, a, b):
        s = list(self.shape)
        s[a], s[b] = s[b], s[a]
        return Shape(s, self.dtype)

    def chunk(self, k, dim):
        assert self.shape[dim] % k == 0, (self.shape, k, dim)
        s = list(self.shape)
        s[dim] //= k
        return [Shape(s, self.dtype) for _ in range(k)]

    def view(self, shape):
        assert Shape(shape, self.dtype).numel() == self.numel(), (shape, self.shape)
        return Shape(shape, self.dtype)

    def __getitem__(self, sl):
        assert len(self.shape) == 1 and isinstance(sl, slice)
        return Shape((len(range(*sl.indices(self.shape[0]))),), self.dtype)

    def flatten(self):
        return Shape((self.numel(),), self.dtype)

    def clone(self):
        return Shape(self.shape, self.dtype)

    contiguous = clone

    def to(self, dtype):
        return Shape(self.shape, dtype)

    def unsqueeze(self, dim):
        assert dim == -1
        return Shape(self.shape + (1,), self.dtype)

    def squeeze(self, dim):
        assert dim == -1 and self.shape[-1] == 1
        return Shape(self.shape[:-1], self.dtype)

    def _binary(self, o):
        assert len(self.shape) == len(o.shape), (self.shape, o.shape)
        for a, b in zip(self.shape, o.shape):
            assert a == b or 1 in (a, b), (self.shape, o.shape)
        dtype = "f32" if "f32" in (self.dtype, o.dtype) else self.dtype
        return Shape([max(a, b) for a, b in zip(self.shape, o.shape)], dtype)

    __add__ = __sub__ = __mul__ = _binary


def fake_torch():
    """The names one_pass uses: aten's flash calls check their operands as ATen does
    (K and V alike, one head size, a causal call square) and return shaped results."""
    import types

    def flash(q, k, v, p, causal):
        assert k.shape == v.shape and q.shape[-1] == k.shape[-1] and q.shape[:2] == k.shape[:2]
        assert not causal or q.shape[2] == k.shape[2], (q.shape, k.shape)
        return (Shape(q.shape, "bf16"), Shape(q.shape[:3], "f32"), None, None,
                q.shape[2], k.shape[2], Shape((), "i64"), Shape((), "i64"), None)

    def flash_bwd(go, q, k, v, out, lse, cq, ck, mq, mk, p, causal, seed, off):
        assert go.shape == out.shape == q.shape and lse.shape == q.shape[:3], (
            go.shape, out.shape, q.shape, lse.shape)
        assert (mq, mk) == (q.shape[2], k.shape[2]) and k.shape == v.shape
        return Shape(q.shape, "bf16"), Shape(k.shape, "bf16"), Shape(v.shape, "bf16")

    def cat(ts, dim=0):
        s = list(ts[0].shape)
        s[dim] = sum(t.shape[dim] for t in ts)
        for t in ts:
            assert len(t.shape) == len(s) and all(
                a == b for i, (a, b) in enumerate(zip(t.shape, s)) if i != dim % len(s))
        return Shape(s, ts[0].dtype)

    aten = types.SimpleNamespace(_scaled_dot_product_flash_attention=flash,
                                 _scaled_dot_product_flash_attention_backward=flash_bwd)
    same = lambda t: Shape(t.shape, t.dtype)  # noqa: E731
    return types.SimpleNamespace(
        float32="f32", bfloat16="bf16", ops=types.SimpleNamespace(aten=aten), cat=cat,
        randn=lambda *s, device=None, dtype=None: Shape(s, dtype),
        zeros=lambda s, device=None, dtype=None: Shape(s, dtype),
        zeros_like=same, sigmoid=same,
        nn=types.SimpleNamespace(functional=types.SimpleNamespace(logsigmoid=same)))


def check_passes(p):
    """one_pass runs every rank's pass at CP 1, 2, 4, 8 on shape stand-ins: each flash
    call gets operands ATen accepts, the merges and accumulations line up, and the
    pass returns dQ of the rank's 2L queries and the fp32 dK/dV send buffer."""
    torch = fake_torch()
    n = p.HEADS * 2 * p.L * p.HEAD_DIM
    kv_src = Shape((8 * 2 * n,), "bf16")
    for c in (1, 2, 4, 8):
        for rank in range(c):
            try:
                fwd, bwd = p.one_pass(torch, c, rank, kv_src)
                out = fwd()
                res = bwd()
            except AssertionError as e:
                check(False, f"one_pass cp {c} rank {rank}: {e!r}")
                continue
            want = (1, p.HEADS, 2 * p.L, p.HEAD_DIM)
            check(out.shape == want, f"one_pass cp {c} rank {rank}: out {out.shape}")
            if c == 1:
                check(res[0].shape == want and res[1].shape == want,
                      f"one_pass cp 1: grads {[g.shape for g in res]}")
            else:
                check(res[0].shape == want and res[1].shape == (2 * n,),
                      f"one_pass cp {c} rank {rank}: dq {res[0].shape}, send {res[1].shape}")


def main():
    run(sys.argv[1], "cp_ring_probe",
        lambda p: (check_helpers(p), check_passes(p), check_bad_sustain(sys.argv[1])))


if __name__ == "__main__":
    main()

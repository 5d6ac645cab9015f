"""probe_check.py — what the GPU probes' CPU tests share (tests/*_probe_test.py).

A probe under bench/ needs PyTorch and a CUDA device; where there is none its test checks
that it byte-compiles, runs the test's own checks of its pure helpers, and that it
refuses with exit 2, a message naming the reason and no JSON written, both where PyTorch
does not import and where torch sees no CUDA device (each with a stub `torch` package
first on PYTHONPATH, so the result does not depend on what this machine has installed).
"""
import importlib.util
import os
import py_compile
import subprocess
import sys
import tempfile

STUBS = {
    "no-import": ("raise ImportError('stub: no torch here')\n", "PyTorch does not import"),
    "no-cuda": ("__version__ = '0.0-stub'\n\n\nclass cuda:\n"
                "    @staticmethod\n    def is_available():\n        return False\n",
                "torch 0.0-stub sees no CUDA device"),
}
RESULTS = []  # (ok, what) per check


def check(ok, what):
    RESULTS.append((ok, what))


def check_refusal(script, tmp, name):
    body, reason = STUBS[name]
    pkg = os.path.join(tmp, name, "torch")
    os.makedirs(pkg)
    with open(os.path.join(pkg, "__init__.py"), "w") as f:
        f.write(body)
    out = os.path.join(tmp, name + ".json")
    env = dict(os.environ, PYTHONPATH=os.path.join(tmp, name), CUDA_VISIBLE_DEVICES="")
    r = subprocess.run([sys.executable, script, "--quick", "--json", out], env=env,
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 2, f"{name}: exit {r.returncode}, want 2 ({r.stderr.strip()})")
    check("refused" in r.stderr and reason in r.stderr,
          f"{name}: stderr {r.stderr.strip()!r} names '{reason}'")
    check(not r.stdout and not os.path.exists(out),
          f"{name}: prints nothing and writes no {out} while refusing (stdout {r.stdout!r})")


def run(script, module_name, check_helpers):
    """Compile and load the probe (it imports no torch until its main()), run
    check_helpers(module), then each refusal; print the tally and exit 0 or 1."""
    with tempfile.TemporaryDirectory() as tmp:
        py_compile.compile(script, cfile=os.path.join(tmp, "probe.pyc"), doraise=True)
        spec = importlib.util.spec_from_file_location(module_name, script)
        probe = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(probe)
        check_helpers(probe)
        for name in STUBS:
            check_refusal(script, tmp, name)
    fails = [what for ok, what in RESULTS if not ok]
    for what in fails:
        print("FAIL", what)
    print(f"{len(RESULTS) - len(fails)} passed, {len(fails)} failed")
    sys.exit(1 if fails else 0)

#!/usr/bin/env python3
"""No file-level circles in the call graph (docs/design.md, "Module boundaries").

Reads every object the build made from the project's own C sources (not tests,
benchmarks or generated protobuf code) with nm, links each undefined symbol to
the source file that defines it, and fails on any strongly connected component
of more than one file. Usage: callgraph_test.py SOURCE_ROOT BUILD_ROOT.
"""
import collections
import os
import re
import shutil
import subprocess
import sys

src_root, build_root = sys.argv[1], sys.argv[2]
if shutil.which("nm") is None:
    print("skip: nm (binutils) is not installed")
    sys.exit(77)

defs, uses = {}, collections.defaultdict(set)
for dirpath, _, names in os.walk(build_root):
    rel = os.path.relpath(dirpath, build_root)
    if rel.split(os.sep)[0] in ("tests", "bench") or "meson-private" in rel:
        continue
    for name in names:
        m = re.match(r"(.+\.(?:c|cu))\.o$", name)
        if not m or "meson-generated" in name or ".pb-c." in name:
            continue
        source = os.path.normpath(os.path.join(os.path.dirname(rel), m.group(1)))
        if not os.path.exists(os.path.join(src_root, source)):
            continue  # a stale object of a removed file
        out = subprocess.run(["nm", os.path.join(dirpath, name)], capture_output=True,
                             text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBR":
                defs.setdefault(parts[2], set()).add(source)
            elif len(parts) == 2 and parts[0] == "U":
                uses[source].add(parts[1])

graph = collections.defaultdict(set)
for f, symbols in uses.items():
    for s in symbols:
        graph[f].update(d for d in defs.get(s, ()) if d != f)

index, low, stack, on, cycles, counter = {}, {}, [], set(), [], [0]
sys.setrecursionlimit(100000)


def visit(v):
    index[v] = low[v] = counter[0]
    counter[0] += 1
    stack.append(v)
    on.add(v)
    for w in graph.get(v, ()):
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            cycles.append(sorted(comp))


for v in list(graph):
    if v not in index:
        visit(v)
print(f"{len(uses)} source files, {sum(len(v) for v in graph.values())} file-level calls")
for c in cycles:
    print("not ok - a call circle:", " <-> ".join(c))
print(f"{0 if cycles else 1} passed, {len(cycles)} failed")
sys.exit(1 if cycles else 0)

#!/usr/bin/env python3
"""No file-level circles and no call against the layering (docs/design.md,
"Module boundaries").

Maps every object file of the build to the source it was compiled from, by the
build's own record: compile_commands.json (each C object's "output" and "file")
and meson-info/intro-targets.json (custom targets that make an object, such as
the nvcc kernels, with their one input). An object under the build root that
neither names, or one whose source is gone, fails the test: it used to be guessed
from its name, which silently dropped every source in a subfolder of its target's
folder (worker/profile/*.c are built by worker/meson.build as
"profile_prof_x.c.o").

The objects of the project's own sources are read with nm (tests/, bench/ and
generated code such as protobuf-c are mapped but left out of the graph); each
undefined symbol links the file to the source that defines it. Fails on any
strongly connected component of more than one file, and on any call from a
folder into one the layering (LAYERS below) does not allow.

Usage: callgraph_test.py SOURCE_ROOT BUILD_ROOT
       callgraph_test.py --self-test   (plants a circle and a forbidden call in a
                                        small synthetic build and expects both)
"""
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

# Folder -> the folders its sources may call into (besides its own). The
# direction of docs/design.md: client, daemon, worker -> api -> common -> planner;
# the worker's measuring code (worker/exec, worker/profile) on the planner alone,
# so that it builds on a GPU machine without gRPC (the profiler runs kernels
# through the executor's device ops).
LAYERS = {
    "planner": set(),
    "common": {"planner"},
    "api": {"common", "planner"},
    "worker/exec": {"planner"},
    "worker/profile": {"worker/exec", "planner"},
    "worker": {"worker/exec", "worker/profile", "api", "common", "planner"},
    "daemon": {"api", "common", "planner"},
    "client": {"api", "common", "planner"},
    "schema": set(),  # embed_sql.c, the build-time tool that embeds the migrations
}
# Files that belong to an upper layer than their folder, and why.
FILE_LAYER = {
    # a trial's rank from the daemon's plan document: the agent's, with common/'s
    # JSON (worker/exec/meson.build builds it into its own library)
    "worker/exec/exec_doc.c": "worker",
}
SKIPPED = ("tests", "bench")  # programs of their own: mapped, not in the graph


def folder_of(source):
    """The layer of a source path relative to the source root."""
    if source in FILE_LAYER:
        return FILE_LAYER[source]
    parts = source.split("/")
    if len(parts) > 2 and "/".join(parts[:2]) in LAYERS:
        return "/".join(parts[:2])
    return parts[0]


def objects_of(src_root, build_root):
    """[(object path, source relative to src_root or None for generated code)]
    for every object under build_root; raises SystemExit naming any it cannot map."""
    src_root, build_root = os.path.realpath(src_root), os.path.realpath(build_root)
    known, bad = {}, []

    def add(obj, src):
        obj = os.path.normpath(os.path.join(build_root, obj))
        src = os.path.realpath(src)
        if src.startswith(build_root + os.sep):
            known[obj] = None  # generated at build time
        elif not src.startswith(src_root + os.sep) or not os.path.exists(src):
            bad.append(f"{obj}: its source {src} is not a file of {src_root}")
        else:
            known[obj] = os.path.relpath(src, src_root)

    with open(os.path.join(build_root, "compile_commands.json")) as f:
        for e in json.load(f):
            add(e["output"], os.path.join(e["directory"], e["file"]))
    intro = os.path.join(build_root, "meson-info", "intro-targets.json")
    if os.path.exists(intro):
        with open(intro) as f:
            for t in json.load(f):
                outs = [o for o in t["filename"] if o.endswith(".o")]
                srcs = [s for ts in t.get("target_sources", []) for s in ts.get("sources", [])]
                if t["type"] == "custom" and outs:
                    if len(outs) != 1 or len(srcs) != 1:
                        bad.append(f"custom target {t['name']}: {outs} from {srcs}")
                    else:
                        add(outs[0], srcs[0])
    for dirpath, dirs, names in os.walk(build_root):
        dirs[:] = [d for d in dirs if d not in ("meson-private", "meson-logs")]
        for name in names:
            obj = os.path.join(dirpath, name)
            if name.endswith((".o", ".obj")) and obj not in known:
                bad.append(f"{obj}: no compile command or custom target makes it "
                           "(stale? ninja -t cleandead)")
    missing = [o for o in known if not os.path.exists(o)]
    bad += [f"{o}: listed by the build but not built" for o in missing]
    if bad:
        print("not ok - objects the call graph cannot map to a source:")
        for b in bad:
            print("  " + b)
        sys.exit(1)
    return sorted(known.items())


def symbols(objects):
    """defs: symbol -> sources defining it; uses: source -> undefined symbols."""
    defs, uses = {}, collections.defaultdict(set)
    for obj, source in objects:
        if source is None or source.split("/")[0] in SKIPPED:
            continue
        out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
        uses.setdefault(source, set())  # a file that calls nothing is still a file
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBR":
                defs.setdefault(parts[2], set()).add(source)
            elif len(parts) == 2 and parts[0] == "U":
                uses[source].add(parts[1])
    return defs, uses


def file_graph(defs, uses):
    graph = collections.defaultdict(set)
    for f, syms in uses.items():
        for s in syms:
            graph[f].update(d for d in defs.get(s, ()) if d != f)
    return graph


def circles(graph):
    """Strongly connected components of more than one file (Tarjan, iterative)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def forbidden(graph):
    """Calls against LAYERS, and folders LAYERS does not know."""
    bad = []
    for f in sorted(graph):
        a = folder_of(f)
        if a not in LAYERS:
            bad.append(f"{f}: folder {a} has no layering rule (add it to LAYERS)")
            continue
        for t in sorted(graph[f]):
            b = folder_of(t)
            if b != a and b not in LAYERS[a]:
                bad.append(f"{f} calls {t} ({a} -> {b})")
    return bad


def check(src_root, build_root):
    defs, uses = symbols(objects_of(src_root, build_root))
    graph = file_graph(defs, uses)
    found, bad = circles(graph), forbidden(graph)
    print(f"{len(uses)} source files, {sum(len(v) for v in graph.values())} file-level calls")
    for c in found:
        print("not ok - a call circle:", " <-> ".join(c))
    for b in bad:
        print("not ok - against the layering:", b)
    print(f"{0 if found or bad else 1} passed, {len(found) + len(bad)} failed")
    return found, bad


# ---- self-test: a synthetic build laid out as meson lays out worker/ ----

SELF_SOURCES = {
    "planner/p.c": "int p_base(void) { return 1; }\n",
    "common/c.c": "int p_base(void);\nint c_help(void) { return p_base(); }\n",
    "worker/profile/prof_a.c": "int prof_b(void);\nint prof_a(int n) { return n ? prof_b() : 0; }\n",
    "worker/profile/prof_b.c": "int prof_a(int);\nint prof_b(void) { return prof_a(0); }\n",
}


def self_build(root, sources):
    """Sources under root/src, objects under root/build named as worker/meson.build's
    tessel-worker target names them (profile/prof_a.c -> profile_prof_a.c.o)."""
    src, build = os.path.join(root, "src"), os.path.join(root, "build")
    cmds = []
    for rel, text in sources.items():
        path = os.path.join(src, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        top, rest = rel.split("/", 1)
        obj = f"{top}/lib{top}.a.p/{rest.replace('/', '_')}.o"
        os.makedirs(os.path.join(build, os.path.dirname(obj)), exist_ok=True)
        subprocess.run(["cc", "-c", "-o", os.path.join(build, obj), path], check=True)
        cmds.append({"directory": build, "file": os.path.relpath(path, build), "output": obj,
                     "command": "cc"})
    with open(os.path.join(build, "compile_commands.json"), "w") as f:
        json.dump(cmds, f)
    return src, build


def self_test():
    if shutil.which("cc") is None:
        print("skip: no cc to build the synthetic objects")
        return 77
    ok = True

    def expect(cond, what):
        nonlocal ok
        print(("ok - " if cond else "not ok - ") + what)
        ok = ok and cond

    with tempfile.TemporaryDirectory() as tmp:
        planted = dict(SELF_SOURCES)
        planted["planner/p.c"] = "int c_help(void);\nint p_base(void) { return c_help(); }\n"
        src, build = self_build(os.path.join(tmp, "a"), planted)
        print("# a build with a circle in worker/profile and planner calling common:")
        found, bad = check(src, build)
        expect(["worker/profile/prof_a.c", "worker/profile/prof_b.c"] in found,
               "a circle between two files of worker/profile is found")
        expect(["common/c.c", "planner/p.c"] in found, "a circle across folders is found")
        expect(any(b.startswith("planner/p.c calls common/c.c") for b in bad),
               "planner calling common is against the layering")

        clean = dict(SELF_SOURCES)
        clean["worker/profile/prof_b.c"] = "int prof_b(void) { return 0; }\n"
        src, build = self_build(os.path.join(tmp, "b"), clean)
        print("# the same build without them:")
        found, bad = check(src, build)
        expect(not found and not bad, "the same build without them passes")

        stray = os.path.join(build, "worker", "libworker.a.p", "profile_gone.c.o")
        shutil.copy(os.path.join(build, "planner", "libplanner.a.p", "p.c.o"), stray)
        r = subprocess.run([sys.executable, __file__, src, build], capture_output=True, text=True)
        expect(r.returncode == 1 and "profile_gone.c.o" in r.stdout,
               "an object no compile command makes fails the test")
    print(f"self-test: {'all passed' if ok else 'FAILED'}")
    return 0 if ok else 1


def main(argv):
    if shutil.which("nm") is None:
        print("skip: nm (binutils) is not installed")
        return 77
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 3:
        print(__doc__)
        return 2
    found, bad = check(argv[1], argv[2])
    return 1 if found or bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

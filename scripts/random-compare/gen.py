#!/usr/bin/env python3
"""Generate a random multi-file C program for comparing `gmon gprof` with GNU gprof.

The program has N global functions `fK` spread over several translation units, a random call
DAG (every function has one "tree parent" earlier in the order, so one traversal reaches all of
them), extra forward edges, back edges (cycles), self recursion, same-named `static` functions in
several files (`helper`, and `compute` in some files), a few functions never called, and an
optional translation unit built without `-pg` (time without calls).

Termination and run time are bounded without any depth argument: function K expands its callees
only while its entry in the global `expand[]` array is below a per-function limit, so each function
runs its call sites at most `limit` times per round; `main` resets the array between rounds.

The output directory gets `tuN.c`, `main.c`, `prog.h`, `build.sh` (the gcc commands) and
`manifest.json` (names, files, definition lines; the driver uses it to fill symspec options).

Used by run.py and by ../bench-gprof.sh (with --functions 20000).
"""

import argparse
import json
import os
import random


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("outdir")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--functions", type=int, default=None, help="number of global functions")
    p.add_argument("--tus", type=int, default=None, help="number of translation units")
    p.add_argument("--max-fanout", type=int, default=3, help="extra call sites per function")
    p.add_argument("--work-scale", type=float, default=1.0, help="multiplies the work loops")
    p.add_argument("--rounds", type=int, default=None, help="rounds of the whole traversal")
    p.add_argument("--target-work", type=float, default=8e8,
                   help="work-loop iterations the default run should make (sets the rounds)")
    p.add_argument("--no-pg-tu", choices=["auto", "yes", "no"], default="auto")
    p.add_argument("--bench", action="store_true",
                   help="big-program mode: few arcs per function, no unused/back-edge extras")
    p.add_argument("--dense", action="store_true",
                   help="dense call graph: several call sites per callee, long cycles, self "
                        "recursion, never-called functions, statics called from everywhere")
    return p.parse_args()


STATIC_WORK = {}


class Func:
    """One global function and what it calls."""

    def __init__(self, idx, tu):
        self.idx = idx
        self.name = f"f{idx}"
        self.tu = tu
        self.calls = []          # (callee, repeat count; -1: one of several call sites)
        self.helper_calls = []   # static functions of the same file
        self.work = 0
        self.limit = 1
        self.noinline = False
        self.line = 0


def generate(args):
    if args.dense:
        return generate_dense(args)
    rnd = random.Random(args.seed)
    n = args.functions or rnd.randint(8, 60)
    tus = args.tus or (max(1, n // 400) if args.bench else rnd.randint(1, 5))
    tus = max(1, min(tus, n))
    funcs = [Func(i, i * tus // n) for i in range(n)]
    unused = set()
    if not args.bench:
        # A few functions nobody calls (they appear only with -z).
        for _ in range(rnd.randint(0, max(1, n // 10))):
            unused.add(rnd.randrange(1, n))
    for f in funcs:
        f.work = int(rnd.choice([0, 10, 50, 200, 1000, 5000, 20000]) * args.work_scale)
        if args.bench:
            f.work = int(rnd.choice([20, 100, 400]) * args.work_scale)
        f.limit = rnd.choice([1, 1, 2, 3, 10, 50]) if not args.bench else 1
        f.noinline = rnd.random() < 0.5
    # Tree edges: each reachable function gets one parent earlier in the order.
    for f in funcs[1:]:
        if f.idx in unused:
            continue
        candidates = [p for p in range(f.idx) if p not in unused]
        parent = rnd.choice(candidates[-50:]) if args.bench else rnd.choice(candidates)
        funcs[parent].calls.append((f.name, rnd.choice([1, 1, 2, 5])))
    if not args.bench:
        for f in funcs:
            # Extra forward edges (DAG), back edges (cycles) and self recursion.
            for _ in range(rnd.randint(0, args.max_fanout)):
                if f.idx + 1 < n:
                    t = rnd.randrange(f.idx + 1, n)
                    if t not in unused:
                        f.calls.append((funcs[t].name, rnd.choice([1, 2, 3])))
            if f.idx > 0 and rnd.random() < 0.15:
                f.calls.append((funcs[rnd.randrange(0, f.idx)].name, 1))
            if rnd.random() < 0.1:
                f.calls.append((f.name, 1))
            rnd.shuffle(f.calls)
    # Static functions: `helper` in every file, `compute` in about half of them.
    statics = {}
    for t in range(tus):
        names = ["helper"]
        for nm in ("helper", "compute"):
            STATIC_WORK[(t, nm)] = rnd.choice([5, 40, 300, 3000])
        if rnd.random() < 0.5 or (t < 2 and not args.bench):
            names.append("compute")
        statics[t] = names
    for f in funcs:
        if args.bench:
            if rnd.random() < 0.05:
                f.helper_calls.append("helper")
            continue
        for s in statics[f.tu]:
            if rnd.random() < 0.3:
                f.helper_calls.append(s)
    no_pg_tu = None
    if args.no_pg_tu == "yes" or (args.no_pg_tu == "auto" and not args.bench
                                  and tus > 1 and rnd.random() < 0.3):
        no_pg_tu = tus - 1
    per_round = simulate(funcs, statics)
    if per_round is None:
        # Too many calls per round: make every function expand only once.
        for f in funcs:
            f.limit = 1
        per_round = simulate(funcs, statics) or 1
    rounds = args.rounds or max(1, min(100000, round(args.target_work / max(per_round, 1))))
    return rnd, funcs, tus, statics, unused, no_pg_tu, rounds


def generate_dense(args):
    """A dense call graph at any size (the numbers scale with N; for N = 20,000 in 80 files:
    about 23,000 caller/callee edges, 133 cycles, 100 self-recursive and 200 never-called
    functions, and some 60,000 call sites, each its own arc in gmon.out).

    Every function expands once per round (limit 1), so every call site of a reached function
    runs in the first round and the arcs are the same at any round count. Back edges go to a
    tree ancestor 2 to 60 levels up, so each one closes a cycle (long ones; overlapping ones
    merge, as in real programs). glibc keeps at most textsize * 3 % arcs, so a call site costs
    about 33 bytes of code: the work loops keep the text large enough."""
    rnd = random.Random(args.seed)
    n = args.functions or rnd.randint(60, 400)
    tus = args.tus or max(3, n // 250)
    tus = max(1, min(tus, n))
    funcs = [Func(i, i * tus // n) for i in range(n)]
    unused = set(rnd.sample(range(1, n), min(n - 1, max(1, n // 100))))
    parent = {}
    for f in funcs:
        f.work = int(rnd.choice([20, 100, 400]) * args.work_scale)
        f.limit = 1
        f.noinline = rnd.random() < 0.8
    used = [i for i in range(n) if i not in unused]
    for pos, i in enumerate(used[1:], 1):
        parent[i] = rnd.choice(used[max(0, pos - 50):pos])
    edges = {}  # (caller, callee) -> call sites

    def add(a, b):
        edges.setdefault((a, b), rnd.choice([1, 1, 2, 2, 3, 4, 6]))

    for i, p in parent.items():
        add(p, i)
    # Extra forward edges: about 15 % more edges than the tree has.
    for _ in range(len(used) * 3 // 20):
        a = rnd.randrange(len(used) - 1)
        b = rnd.randrange(a + 1, min(len(used), a + 2000))
        add(used[a], used[b])
    # Back edges to an ancestor: one cycle each (n / 150 of them).
    reached = [i for i in used if i in parent]
    for _ in range(max(1, n // 150)):
        i = rnd.choice(reached)
        a = i
        for _ in range(rnd.randint(2, 60)):
            if a not in parent:
                break
            a = parent[a]
        if a != i:
            add(i, a)
    # Self recursion (n / 200 functions).
    for i in rnd.sample(used, max(1, n // 200)):
        add(i, i)
    for (a, b), sites in edges.items():
        if sites == 1:
            funcs[a].calls.append((funcs[b].name, 1))
        else:
            # Separate statements: each is its own call site (a loop would be one site).
            funcs[a].calls += [(funcs[b].name, -1)] * sites
    for f in funcs:
        rnd.shuffle(f.calls)
    statics = {}
    for t in range(tus):
        for nm in ("helper", "compute"):
            STATIC_WORK[(t, nm)] = rnd.choice([5, 40, 300])
        statics[t] = ["helper", "compute"]
    for f in funcs:
        for s in statics[f.tu]:
            if rnd.random() < 0.25:
                f.helper_calls.append(s)
    per_round = simulate(funcs, statics) or 1
    rounds = args.rounds or max(1, min(100000, round(args.target_work / per_round)))
    return rnd, funcs, tus, statics, unused, None, rounds


def simulate(funcs, statics, max_calls=2_000_000):
    """Work-loop iterations of one round of main, or None if it makes more than max_calls."""
    by_name = {f.name: f for f in funcs}
    expand = [0] * len(funcs)
    total = 0
    calls = 0
    # Iterative DFS: a frame is (function, index of the next call site to run).
    stack = []

    def enter(f):
        nonlocal total, calls
        calls += 1
        total += f.work
        if (f.calls or f.helper_calls) and expand[f.idx] < f.limit:
            expand[f.idx] += 1
            for s in f.helper_calls:
                total += STATIC_WORK.get((f.tu, s), 0)
            sites = [c for c, rep in f.calls for _ in range(abs(rep))]
            stack.append(iter(sites))
        elif f.calls or f.helper_calls:
            expand[f.idx] += 1

    enter(funcs[0])
    while stack:
        if calls > max_calls:
            return None
        nxt = next(stack[-1], None)
        if nxt is None:
            stack.pop()
        else:
            enter(by_name[nxt])
    return total


def emit(args, rnd, funcs, tus, statics, unused, no_pg_tu, rounds):
    os.makedirs(args.outdir, exist_ok=True)
    n = len(funcs)
    with open(os.path.join(args.outdir, "prog.h"), "w") as h:
        h.write("/* generated by scripts/random-compare/gen.py */\n")
        h.write("extern volatile unsigned long sink;\n")
        h.write(f"extern unsigned expand[{n}];\n")
        for f in funcs:
            h.write(f"int {f.name}(int x);\n")
    manifest = {"seed": args.seed, "files": [], "functions": [], "statics": [],
                "unused": sorted(funcs[i].name for i in unused), "no_pg_file": None}
    for t in range(tus):
        fname = f"tu{t}.c"
        lines = ["/* generated by scripts/random-compare/gen.py */", '#include "prog.h"', ""]
        for s in statics[t]:
            attr = "__attribute__((noinline)) " if rnd.random() < 0.7 else ""
            work = STATIC_WORK[(t, s)]
            lines.append(f"static {attr}int {s}(int x)")
            manifest["statics"].append({"name": s, "file": fname, "line": len(lines)})
            lines += ["{", f"    for (int i = 0; i < {work}; i++)",
                      "        sink += (unsigned long)(i ^ x);",
                      "    return x + 1;", "}", ""]
        for f in (g for g in funcs if g.tu == t):
            attr = "__attribute__((noinline)) " if f.noinline else ""
            lines.append(f"{attr}int {f.name}(int x)")
            f.line = len(lines)
            lines.append("{")
            lines.append("    int r = x;")
            if f.work:
                lines.append(f"    for (int i = 0; i < {f.work}; i++)")
                lines.append("        sink += (unsigned long)(i * 7 + r);")
            if f.calls or f.helper_calls:
                lines.append(f"    if (expand[{f.idx}]++ < {f.limit}) {{")
                for k, (callee, rep) in enumerate(f.calls):
                    if rep == 1:
                        lines.append(f"        r += {callee}(r);")
                    elif rep < 0:
                        # One of several separate call sites of the same callee.
                        lines.append(f"        r += {callee}(r ^ {k});")
                    else:
                        lines.append(f"        for (int k = 0; k < {rep}; k++)")
                        lines.append(f"            r += {callee}(r + k);")
                for s in f.helper_calls:
                    lines.append(f"        r += {s}(r);")
                lines.append("    }")
            lines += ["    return r;", "}", ""]
            manifest["functions"].append({"name": f.name, "file": fname, "line": f.line,
                                          "work": f.work, "unused": f.idx in unused})
        if not any(g.tu == t for g in funcs) or not any(
                s in g.helper_calls for g in funcs if g.tu == t for s in statics[t]):
            # Keep every static referenced so that -O0 builds without warnings.
            lines.append("int (*keep_" + str(t) + "[])(int) = { " +
                         ", ".join(statics[t]) + " };")
        with open(os.path.join(args.outdir, fname), "w") as out:
            out.write("\n".join(lines) + "\n")
        manifest["files"].append(fname)
    roots = [0] + sorted(unused)[:0]
    with open(os.path.join(args.outdir, "main.c"), "w") as m:
        m.write("/* generated by scripts/random-compare/gen.py */\n")
        m.write('#include <stdlib.h>\n#include <string.h>\n#include "prog.h"\n\n')
        m.write("volatile unsigned long sink;\n")
        m.write(f"unsigned expand[{n}];\n\n")
        m.write("int main(int argc, char **argv)\n{\n")
        m.write(f"    int rounds = argc > 1 ? atoi(argv[1]) : {rounds};\n")
        m.write("    int r = 0;\n")
        m.write("    for (int k = 0; k < rounds; k++) {\n")
        m.write("        memset(expand, 0, sizeof expand);\n")
        for i in roots:
            m.write(f"        r += {funcs[i].name}(k);\n")
        m.write("    }\n    return r == 42;\n}\n")
    manifest["files"].append("main.c")
    if no_pg_tu is not None:
        manifest["no_pg_file"] = f"tu{no_pg_tu}.c"
    with open(os.path.join(args.outdir, "manifest.json"), "w") as out:
        json.dump(manifest, out, indent=1)
    # build.sh: $1 = output name, $2.. = extra flags (e.g. -O2 -no-pie); $CC compiles (e.g.
    # "g++ -x c++" to build the same sources as C++), $LD links.
    with open(os.path.join(args.outdir, "build.sh"), "w") as b:
        b.write("#!/bin/sh\n# generated: build.sh OUT [CFLAGS...]\nset -e\nout=$1; shift\n")
        b.write('cd "$(dirname "$0")"\n')
        objs = []
        for fname in manifest["files"]:
            obj = f"$out.{fname[:-2]}.o"
            pg = "" if fname == manifest["no_pg_file"] else "-pg"
            b.write(f'${{CC:-gcc}} -c {pg} "$@" -o {obj} {fname}\n')
            objs.append(obj)
        b.write(f'${{LD:-gcc}} -pg "$@" -o "$out" {" ".join(objs)}\n')
        # A map file for `gprof -R` (function -> object file), as nm writes it.
        b.write(f'nm --print-file-name --defined-only {" ".join(objs)} > "$out.map"\n')
        b.write(f'rm -f {" ".join(objs)}\n')
    os.chmod(os.path.join(args.outdir, "build.sh"), 0o755)
    return manifest


def main():
    args = parse_args()
    emit(args, *generate(args))


if __name__ == "__main__":
    main()

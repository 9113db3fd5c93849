#!/usr/bin/env python3
"""Randomized comparison of `gmon gprof` with GNU gprof.

For each seed: generate a random C program (gen.py), build it with `gcc -pg` in several variants
(-O0/-O2, PIE/no-PIE, with/without -g), run it twice (two profiles), then run GNU gprof and
`gmon gprof` with the same arguments for every option set below and compare stdout and the exit
status byte for byte (and the `*-ann` files written by -y). Stderr differences are counted apart.

Failing cases are kept under WORKDIR/failures/<case>/ (program sources, binaries, profiles,
the command, both outputs and a diff); a summary is printed at the end and written to
WORKDIR/summary.txt. Exit status 0 when everything matched, 1 otherwise.

Usage: run.py --gmon PATH [--count N] [--seed S] [--jobs J] [--workdir DIR] [--sets REGEX]
              [--dense] [--target TRIPLET]

--target TRIPLET builds with Debian's cross compiler `TRIPLET-gcc`/`-g++`, runs the programs
under `qemu-ARCH -L /usr/TRIPLET` and compares with `/usr/bin/TRIPLET-gprof` (see
testdata/cross.sh for the packages).
"""

import argparse
import collections
import concurrent.futures
import difflib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# Build variants: name -> gcc flags.
VARIANTS = {
    "O0-pie": ["-O0", "-g"],
    "O2-pie": ["-O2", "-g"],
    "O0-nopie": ["-O0", "-g", "-no-pie"],
    "O2-nopie": ["-O2", "-g", "-no-pie"],
    "O0-nog": ["-O0"],
    "O2-dwarf4": ["-O2", "-gdwarf-4"],
    # The same sources compiled as C++: mangled names, C++ DWARF (linkage names).
    "cxx-O0": ["-O0", "-g"],
    "cxx-O2": ["-O2", "-g"],
}
# Environment for build.sh per variant (compiler and linker).
VARIANT_ENV = {
    "cxx-O0": {"CC": "g++ -x c++", "LD": "g++"},
    "cxx-O2": {"CC": "g++ -x c++", "LD": "g++"},
}

# Option sets. Placeholders: {f} {g} a called global function, {arc} a "caller/callee" pair that
# exists in the program, {file} a source basename, {line} a definition line in {file}, {static} a
# static function of {file}, {map} the nm map file for -R, {sum} marks a set run on two profiles.
# Only -b sets (or sets that print no explanatory text) are compared: without -b gmon prints its
# own explanations by design.
OPTION_SETS = [
    "-b", "-b {sum}", "-b -p", "-b -q", "-b -P", "-b -Q", "-b -z", "-b -a", "-b -D", "-b -c",
    "-b -c -z", "-b -T", "-b -T -z", "-b -i", "-b -i {sum}", "-b -w 50", "-b -w1", "-b -L",
    "-b --inline-file-names", "-b -L --inline-file-names", "-b --no-demangle", "-b --demangle",
    "-b -l", "-b --line -z", "-b -l -L", "-b -l --inline-file-names", "-b -l -p", "-b -l -q",
    "-b -l {sum}", "-b -l -T", "-b -s", "-b -s {sum}",
    "-b -e {f}", "-b -E {f}", "-b -f {f}", "-b -F {f}", "-b -n {f}", "-b -N {f}",
    "-b -p{f}", "-b -P{f}", "-b -q{f}", "-b -Q{f}", "-b -k {arc}", "-b -q{arc}", "-b -Q{arc}",
    "-b -p{file}:", "-b -p{file}:{static}", "-b -q{file}:{static}", "-b -l -p{file}:{line}",
    "-b -e {f} -e {g}", "-b -F {f} -E {g}", "-b -z -a -T",
    "-C", "-b -C", "-C{f}", "-Z -b", "-b -l -C", "-C -z",
    "-A", "-A -x", "-A{f}", "-A -J{f}", "-J -b", "-A -m 5", "-A -I /nonexistent", "-l -A",
    "-l -A -x", "-A -y", "-A -z", "-A -L", "-A{file}:",
    # "-R {map}" is left out: GNU gprof reads an uninitialised is_first flag for every map entry
    # but the first of each object, so its output depends on heap garbage (see ordering.rs).
    "-r", "-r {sum}", "-r -R {map}", "-b -Oprof", "-b -O magic",
    "-b nonexistent.out",
]


# Cross targets: triplet -> qemu-user program.
QEMU = {
    "aarch64-linux-gnu": "qemu-aarch64",
    "arm-linux-gnueabihf": "qemu-arm",
    "arm-linux-gnueabi": "qemu-arm",
    "i686-linux-gnu": "qemu-i386",
    "powerpc64-linux-gnu": "qemu-ppc64",
    "powerpc64le-linux-gnu": "qemu-ppc64le",
    "s390x-linux-gnu": "qemu-s390x",
    "mips-linux-gnu": "qemu-mips",
    "mipsel-linux-gnu": "qemu-mipsel",
    "mips64el-linux-gnuabi64": "qemu-mips64el",
    "riscv64-linux-gnu": "qemu-riscv64",
    "powerpc-linux-gnu": "qemu-ppc",
    "sparc64-linux-gnu": "qemu-sparc64",
}


def build_env(variant, target):
    """Compiler and linker for build.sh."""
    env = dict(VARIANT_ENV.get(variant, {}))
    if target:
        cxx = variant.startswith("cxx")
        tool = f"{target}-g++" if cxx else f"{target}-gcc"
        env = {"CC": tool + (" -x c++" if cxx else ""), "LD": tool}
    return env


def run_prefix(target):
    """How a built program is started: directly, or under qemu-user with the target's sysroot."""
    return [QEMU[target], "-L", f"/usr/{target}"] if target else []


def parse_args():
    p = argparse.ArgumentParser(description="compare gmon gprof with GNU gprof on random programs")
    p.add_argument("--gmon", required=True, help="path of the built gmon binary")
    p.add_argument("--gprof", default="/usr/bin/gprof")
    p.add_argument("--count", type=int, default=10, help="number of random programs")
    p.add_argument("--seed", type=int, default=1, help="first seed")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--workdir", default=os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                                     "gmon-random-compare"))
    p.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated variant names")
    p.add_argument("--sets", default=None, help="only option sets matching this regex")
    p.add_argument("--keep", type=int, default=40, help="failing cases kept in full")
    p.add_argument("--target-work", type=float, default=4e8, help="passed to gen.py")
    p.add_argument("--dense", action="store_true",
                   help="dense programs (gen.py --dense: 60-400 functions, several call sites "
                        "per callee, long cycles, recursion, never-called functions)")
    p.add_argument("--target", default=None, choices=sorted(QEMU),
                   help="cross target (gcc, qemu-user and gprof of that triplet)")
    a = p.parse_args()
    if a.target and a.gprof == "/usr/bin/gprof":
        a.gprof = f"/usr/bin/{a.target}-gprof"
    return a


def sh(cmd, cwd, env=None, timeout=300, argv0=None):
    """Runs cmd; with argv0, cmd[0] is executed under that name (so gprof's messages start
    with "gprof:" whatever its path, as gmon's do)."""
    args = [argv0] + cmd[1:] if argv0 else cmd
    return subprocess.run(args, executable=cmd[0], cwd=cwd, env=env, capture_output=True,
                          timeout=timeout)


def prepare(seed, args):
    """Generate and build one program; returns (dir, manifest, built variants) or raises."""
    d = os.path.join(args.workdir, "progs", f"s{seed}")
    shutil.rmtree(d, ignore_errors=True)
    r = sh([sys.executable, os.path.join(HERE, "gen.py"), d, "--seed", str(seed),
            "--target-work", str(args.target_work)] + (["--dense"] if args.dense else []),
           cwd=args.workdir)
    if r.returncode != 0:
        raise RuntimeError(f"gen.py failed: {r.stderr.decode(errors='replace')}")
    with open(os.path.join(d, "manifest.json")) as f:
        manifest = json.load(f)
    built = []
    for v in args.variants.split(","):
        r = sh(["sh", "build.sh", f"prog-{v}"] + VARIANTS[v], cwd=d,
               env=dict(os.environ, **build_env(v, args.target)))
        if r.returncode != 0:
            raise RuntimeError(f"build {v} failed: {r.stderr.decode(errors='replace')}")
        for i, extra in enumerate([[], ["1"]]):
            for leftover in ("gmon.out",):
                if os.path.exists(os.path.join(d, leftover)):
                    os.remove(os.path.join(d, leftover))
            r = sh(run_prefix(args.target) + [f"./prog-{v}"] + extra, cwd=d)
            if not os.path.exists(os.path.join(d, "gmon.out")):
                raise RuntimeError(f"run {v} wrote no gmon.out: {r.stderr.decode(errors='replace')}")
            os.rename(os.path.join(d, "gmon.out"), os.path.join(d, f"prog-{v}.gmon{i + 1}"))
        built.append(v)
    return d, manifest, built


def fill(template, manifest, rnd, variant):
    """Substitute placeholders; returns (argument list, uses two profiles)."""
    called = [f for f in manifest["functions"] if not f["unused"]] or manifest["functions"]
    f = rnd.choice(called)
    g = rnd.choice(called)
    statics = manifest["statics"]
    st = rnd.choice(statics)
    arcs = manifest.get("arcs") or []
    arc = rnd.choice(arcs) if arcs else f"{f['name']}/{g['name']}"
    defs = [x for x in manifest["functions"] + statics if x["file"] == st["file"]]
    line = rnd.choice(defs)["line"] if defs else 1
    text = template.format(f=f["name"], g=g["name"], arc=arc, file=st["file"],
                           static=st["name"], line=line, map=f"prog-{variant}.map", sum="{sum}")
    two = "{sum}" in text
    argv = [a for a in text.replace("{sum}", "").split() if a]
    return argv, two


def arcs_of(manifest, d):
    """Caller/callee pairs from the sources (for -k and a/b specs)."""
    pairs = []
    for fname in manifest["files"]:
        cur = None
        with open(os.path.join(d, fname)) as src:
            for ln in src:
                m = re.match(r"^(?:__attribute__\(\(noinline\)\) )?int (f\d+)\(int x\)$", ln)
                if m:
                    cur = m.group(1)
                for callee in re.findall(r"\b(f\d+)\(r", ln):
                    if cur:
                        pairs.append(f"{cur}/{callee}")
    return sorted(set(pairs))


def run_tool(cmd, d, argv0=None):
    """Runs one tool in the program dir; returns (stdout, stderr, status, ann files)."""
    for name in os.listdir(d):
        if name.endswith("-ann") or name == "gmon.sum":
            os.remove(os.path.join(d, name))
    env = dict(os.environ, LC_ALL="C")
    env.pop("GPROF_PATH", None)
    try:
        r = sh(cmd, cwd=d, env=env, timeout=120, argv0=argv0)
        out, err, code = r.stdout, r.stderr, r.returncode
    except subprocess.TimeoutExpired:
        out, err, code = b"", b"timeout", -999
    ann = {}
    for name in sorted(os.listdir(d)):
        if name.endswith("-ann"):
            with open(os.path.join(d, name), "rb") as f:
                ann[name] = f.read()
    return out, err, code, ann


def first_diff(a, b):
    al = a.decode(errors="replace").splitlines()
    bl = b.decode(errors="replace").splitlines()
    for i, (x, y) in enumerate(zip(al, bl)):
        if x != y:
            return f"line {i + 1}: gprof {x!r} / gmon {y!r}"
    if len(al) != len(bl):
        return f"line {min(len(al), len(bl)) + 1}: gprof has {len(al)} lines, gmon {len(bl)}"
    return "bytes differ (line endings or trailing newline)"


def compare_program(seed, args):
    """Returns a list of result dicts, one per (variant, option set)."""
    results = []
    try:
        d, manifest, built = prepare(seed, args)
    except Exception as e:  # noqa: BLE001 - a program that cannot be built is reported, not fatal
        return [{"seed": seed, "variant": "-", "set": "-", "status": "setup-error", "detail": str(e)}]
    manifest["arcs"] = arcs_of(manifest, d)
    rnd = random.Random(seed * 7919)
    sets = [s for s in OPTION_SETS if not args.sets or re.search(args.sets, s)]
    for v in built:
        for template in sets:
            argv, two = fill(template, manifest, rnd, v)
            files = [f"prog-{v}", f"prog-{v}.gmon1"] + ([f"prog-{v}.gmon2"] if two else [])
            if "nonexistent.out" in argv:
                files = [f"prog-{v}"]
            gp = run_tool([args.gprof] + argv + files, d, argv0="gprof")
            gm = run_tool([args.gmon, "gprof"] + argv + files, d)
            res = {"seed": seed, "variant": v, "set": template, "argv": argv + files}
            problems = []
            if gp[2] != gm[2]:
                problems.append(f"exit status gprof {gp[2]} / gmon {gm[2]}")
            if gp[0] != gm[0]:
                problems.append("stdout: " + first_diff(gp[0], gm[0]))
            if gp[3] != gm[3]:
                problems.append(f"-ann files differ: gprof {sorted(gp[3])} / gmon {sorted(gm[3])}")
            res["stderr_same"] = gp[1] == gm[1]
            if problems:
                res["status"] = "mismatch"
                res["detail"] = "; ".join(problems)
                res["outputs"] = (gp, gm)
                res["dir"] = d
            else:
                res["status"] = "match"
            results.append(res)
    return results


def keep_failure(res, args, n):
    case = os.path.join(args.workdir, "failures", f"{n:04d}-s{res['seed']}-{res['variant']}")
    os.makedirs(case, exist_ok=True)
    src = res["dir"]
    prog = os.path.join(case, "prog")
    if not os.path.exists(prog):
        shutil.copytree(src, prog, ignore=shutil.ignore_patterns("*-ann", "gmon.sum"))
    (gp, gm) = res["outputs"]
    for who, (out, err, code, ann) in (("gprof", gp), ("gmon", gm)):
        with open(os.path.join(case, f"{who}.stdout"), "wb") as f:
            f.write(out)
        with open(os.path.join(case, f"{who}.stderr"), "wb") as f:
            f.write(err)
        with open(os.path.join(case, f"{who}.status"), "w") as f:
            f.write(f"{code}\n")
    with open(os.path.join(case, "cmd.txt"), "w") as f:
        f.write("cd prog && LC_ALL=C gprof " + " ".join(res["argv"]) + "\n")
        f.write(res["detail"] + "\n")
    diff = difflib.unified_diff(gp[0].decode(errors="replace").splitlines(True),
                                gm[0].decode(errors="replace").splitlines(True), "gprof", "gmon")
    with open(os.path.join(case, "stdout.diff"), "w") as f:
        f.writelines(diff)
    return case


def main():
    args = parse_args()
    args.gmon = os.path.abspath(args.gmon)
    os.makedirs(args.workdir, exist_ok=True)
    shutil.rmtree(os.path.join(args.workdir, "failures"), ignore_errors=True)
    start = time.time()
    per_set = collections.defaultdict(lambda: [0, 0])
    per_variant = collections.defaultdict(lambda: [0, 0])
    totals = collections.Counter()
    stderr_diff = 0
    failures = []
    progs_ok = set()
    progs_bad = set()
    seeds = range(args.seed, args.seed + args.count)
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futs = {pool.submit(compare_program, s, args): s for s in seeds}
        for fut in concurrent.futures.as_completed(futs):
            for res in fut.result():
                totals[res["status"]] += 1
                if res["status"] == "setup-error":
                    print(f"seed {res['seed']}: {res['detail']}", file=sys.stderr)
                    continue
                ok = res["status"] == "match"
                per_set[res["set"]][0 if ok else 1] += 1
                per_variant[res["variant"]][0 if ok else 1] += 1
                if not res["stderr_same"]:
                    stderr_diff += 1
                if ok:
                    progs_ok.add(res["seed"])
                else:
                    progs_bad.add(res["seed"])
                    failures.append(res)
            done = len(progs_ok | progs_bad)
            print(f"[{time.time() - start:6.0f}s] {done}/{args.count} programs, "
                  f"{totals['match']} matches, {totals['mismatch']} mismatches", file=sys.stderr)
    failures.sort(key=lambda r: (r["seed"], r["variant"], OPTION_SETS.index(r["set"])))
    lines = [f"programs: {args.count} (seeds {args.seed}..{args.seed + args.count - 1}), "
             f"variants: {args.variants}, target: {args.target or 'native'}",
             f"comparisons: {totals['match'] + totals['mismatch']}, matches: {totals['match']}, "
             f"mismatches: {totals['mismatch']}, setup errors: {totals['setup-error']}",
             f"programs with every comparison matching: {len(progs_ok - progs_bad)}",
             f"comparisons whose stderr differed: {stderr_diff}", "", "per option set (match/mismatch):"]
    for s in OPTION_SETS:
        if s in per_set:
            lines.append(f"  {per_set[s][0]:5d} {per_set[s][1]:5d}  {s}")
    lines.append("per variant (match/mismatch):")
    for v, (a, b) in sorted(per_variant.items()):
        lines.append(f"  {a:5d} {b:5d}  {v}")
    if failures:
        lines.append("")
        lines.append("failures (first of each option set kept in full):")
        kept_sets = set()
        kept = 0
        with open(os.path.join(args.workdir, "failures.tsv"), "w") as tsv:
            for res in failures:
                tsv.write(f"{res['seed']}\t{res['variant']}\t{' '.join(res['argv'])}\t"
                          f"{res['detail']}\n")
                if kept < args.keep and res["set"] not in kept_sets:
                    kept_sets.add(res["set"])
                    kept += 1
                    case = keep_failure(res, args, kept)
                    lines.append(f"  {case}: {' '.join(res['argv'])}\n      {res['detail']}")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.workdir, "summary.txt"), "w") as f:
        f.write(text)
    print(text)
    sys.exit(0 if not failures and not totals["setup-error"] else 1)


if __name__ == "__main__":
    main()

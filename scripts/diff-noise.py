#!/usr/bin/env python3
"""Measures how well `gmon diff` tells change from noise (issue 28, spec/diff.md).

Builds a small C program whose four functions do fixed work (hot 45%, warm 25%, mild 20%,
cool 10% of the CPU time); with DIFF_SLOW=1 in its environment `hot` does 20% more work (no
other change: same calls, same path). Each run is recorded with `gmon record` at --hz
(default 1000) for about --cpu seconds of CPU time (default 2; the work is calibrated on this
machine first). Then, over --pairs pairs (default 40):

  A/A   two runs of the same program: the share of pairs where `gmon diff` reports any change
        (the false-alarm rate; the goal is below 5%),
  A/B   a run against a run with `hot` slowed: the share of pairs where `hot` is a change (the
        goal is at least 90%),

for one profile per side (BASE NEW) and for three per side (--base A1 A2 A3 --new B1 B2 B3),
and how `--fail-above PCT` (default 2 points; `hot` grows by about 4.5) gated both. The runs
are a pool of --pairs + 1 A runs and --pairs B runs: A/A pairs are neighbours (A_k, A_k+1),
A/B pairs (A_k, B_k), and triples are drawn from the pools, rotating; pairs share runs, so the
rates are estimated from dependent pairs, each of which is a valid comparison.

Besides the neighbouring pairs, --random-pairs N (default 400) A/A pairs of one profile per
side are drawn at random from all A runs (a fixed seed): distinct runs each, so one unusual run
weighs less than in the neighbours.

--tree records a process tree instead: `sh -c 'prog R; prog2 R/4'` (prog2 another build of the
same program, a quarter of the work; DIFF_SLOW slows `hot` in both), each recording `gmon record
-o DIR/OUT` writing OUT (prog), OUT.prog2 and OUT.dash (or the shell's name). Each side is then
one recording or three (`--base a1/OUT a1/OUT.* a2/OUT ...`, spec/diff.md §11); the rates are
of prog (`hot`) and of any change in any executable of the tree.

--command 'CMD ARGS' records that command instead of the C program (A runs only, no B): a
second workload for the A/A rates, e.g. a pure-Python benchmark (`python3 bench.py 150`) or
`sort` of a fixed file; calibrate its arguments to about --cpu seconds yourself. --level L is
passed to every `gmon diff`, and so is --dispersion PHI (the dispersion one profile per side
assumes; default: gmon's own defaults).

Usage (from anywhere in a checkout; needs gcc and a release build):
    cargo build --release -p gmon-tools
    python3 scripts/diff-noise.py [--pairs 40] [--cpu 2] [--hz 1000] [--fail-above 2]
                                  [--level L] [--dispersion PHI] [--random-pairs 400] [--command 'CMD ARGS']
                                  [--tree] [--pictures DIR] [--old-gmon PATH] [--inferno CMD]
                                  [--keep | --from DIR]

`gmon` is this checkout's target/release/gmon unless GMON names another. Work files go to a
fresh temporary directory (removed at the end unless --keep). --pictures DIR writes the
differential flame graph of the first A/B pair (`noise-aware.svg`), of the first A/A pair
(`noise-aware-aa.svg`) and of the first three runs a side (`three-a-side.svg`); with --old-gmon
each pair drawn by another gmon binary (`before.svg`, `before-aa.svg`), and with --inferno CMD
each pair's `gmon diff --folded` drawn by that inferno-flamegraph command, every difference
coloured (`naive.svg`, `naive-aa.svg`), for comparison. --keep keeps the recorded
runs; --from DIR compares the runs kept in DIR again (another gmon build, the same data)
without recording. Prints one markdown table, with the smallest growth of `hot`'s share and
slowdown of `cool` that an A/A comparison could have detected (spec/diff.md §9).
"""

import argparse
import json
import os
import random
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile

SOURCE = r"""
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

/* Fixed work inside each function itself (no callee), so that its samples are its own. */
#define WORK(n)                                                                 \
    do {                                                                        \
        unsigned long x = sink;                                                 \
        for (unsigned long i = 0; i < (n); i++)                                 \
            x = x * 6364136223846793005UL + 1442695040888963407UL;              \
        sink = x;                                                               \
    } while (0)

__attribute__((noinline)) void hot(unsigned long n) { WORK(n); }
__attribute__((noinline)) void warm(unsigned long n) { WORK(n); }
__attribute__((noinline)) void mild(unsigned long n) { WORK(n); }
__attribute__((noinline)) void cool(unsigned long n) { WORK(n); }

int main(int argc, char **argv) {
    unsigned long rounds = argc > 1 ? strtoul(argv[1], 0, 10) : 100;
    /* 20% more work in hot, nothing else different. */
    unsigned long h = getenv("DIFF_SLOW") ? 54000 : 45000;
    for (unsigned long r = 0; r < rounds; r++) {
        hot(h);
        warm(25000);
        mild(20000);
        cool(10000);
    }
    printf("%lu\n", (unsigned long)sink & 1);
    return 0;
}
"""


# Options for every `gmon diff` (--level, --dispersion; empty: gmon's defaults).
OPTIONS = []
# Whether the runs are recorded process trees (--tree): each run is a directory's OUT, given
# with the OUT.* files beside it, and the comparison is a `process-tree` document.
TREE = []


def root():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_cpu(cmd, env=None):
    before = child_cpu()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    return child_cpu() - before


def files(out):
    """A recorded tree's profiles: OUT and the OUT.<name> beside it (no sidecars)."""
    d, stem = os.path.split(out)
    beside = sorted(
        os.path.join(d, n) for n in os.listdir(d) if n.startswith(stem + ".") and not n.endswith(".gmonx")
    )
    return [out] + beside


def diff(gmon, base, new, extra=()):
    if TREE:
        base = [f for out in base for f in files(out)]
        new = [f for out in new for f in files(out)]
    if len(base) == 1:
        cmd = [gmon, "diff", "--json", *extra, base[0], new[0]]
    else:
        cmd = [gmon, "diff", "--json", *extra, "--base", *base, "--new", *new]
    cmd[3:3] = OPTIONS
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"gmon diff failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    d = json.loads(p.stdout)
    if d.get("kind") == "process-tree":
        # prog's comparison, with any change anywhere in the tree counted as its own.
        prog = next((e["diff"] for e in d["executables"] if e["root"] == "prog"), None)
        if prog is None:
            sys.exit(f"no prog in the trees compared: {' '.join(cmd)}")
        prog = dict(prog, changes=sum(e["diff"]["changes"] for e in d["executables"]))
        return p.returncode, prog
    return p.returncode, d


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=40)
    ap.add_argument("--cpu", type=float, default=2.0, help="CPU seconds per run")
    ap.add_argument("--hz", type=int, default=1000)
    ap.add_argument("--fail-above", type=float, default=2.0)
    ap.add_argument("--level", type=float, help="gmon diff --level (default: gmon's)")
    ap.add_argument(
        "--dispersion", type=float, help="gmon diff --dispersion (one profile a side; default: gmon's)"
    )
    ap.add_argument("--random-pairs", type=int, default=400, help="random A/A pairs, one a side")
    ap.add_argument("--command", help="record this command (A/A only) instead of the C program")
    ap.add_argument("--tree", action="store_true", help="record a process tree of two programs")
    ap.add_argument("--pictures", help="directory for the differential flame graphs")
    ap.add_argument("--old-gmon", help="another gmon binary to draw before.svg with")
    ap.add_argument(
        "--inferno", help="an inferno-flamegraph command to draw naive.svg (gmon diff --folded) with"
    )
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument(
        "--from",
        dest="reuse",
        metavar="DIR",
        help="compare the runs an earlier --keep left in DIR instead of recording new ones",
    )
    a = ap.parse_args()
    OPTIONS.extend(["--level", str(a.level)] if a.level is not None else [])
    OPTIONS.extend(["--dispersion", str(a.dispersion)] if a.dispersion is not None else [])
    TREE.extend([True] if a.tree else [])

    gmon = os.environ.get("GMON") or os.path.join(root(), "target", "release", "gmon")
    if not os.access(gmon, os.X_OK):
        sys.exit(f"{gmon}: missing; build it with `cargo build --release -p gmon-tools` or set GMON")
    if shutil.which("gcc") is None and not a.command:
        sys.exit("gcc is needed to build the measured program")
    if a.reuse:
        # Another gmon on the same runs: only the comparisons are made again.
        measure(a, gmon, a.reuse)
        return
    work = tempfile.mkdtemp(prefix="diff-noise.")
    try:
        measure(a, gmon, work)
    finally:
        if a.keep:
            print(f"work files kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


def recorded(work, kind):
    """The runs of `kind` ("a" or "b") an earlier run left in `work`: kind0.out, kind1.out, ...
    (with --tree: kind0/OUT, kind1/OUT, ...)"""
    runs = []
    while os.path.exists(run_path(work, kind, len(runs))):
        runs.append(run_path(work, kind, len(runs)))
    return runs


def run_path(work, kind, i):
    """Where run `i` of `kind` is recorded: a profile, or a tree's OUT in a directory of its own."""
    if TREE:
        return os.path.join(work, f"{kind}{i}", "OUT")
    return os.path.join(work, f"{kind}{i}.out")


def measure(a, gmon, work):
    if a.reuse:
        runs_a, runs_b = recorded(work, "a"), recorded(work, "b")
        a.pairs = min(a.pairs, len(runs_a) - 1, len(runs_b) if runs_b else len(runs_a))
        if a.pairs < 1:
            sys.exit(f"{work}: no runs a0.out, a1.out, b0.out ... of an earlier --keep")
        rounds, cpu = "the same", []
        print(f"reusing {len(runs_a)} A and {len(runs_b)} B runs of {work}", file=sys.stderr)
    else:
        rounds, cpu, runs_a, runs_b = record(a, gmon, work)
    compare(a, gmon, runs_a, runs_b, rounds, cpu)


def record(a, gmon, work):
    """Builds the program, calibrates it and records --pairs + 1 A runs and --pairs B runs
    (--command: records --pairs + 1 runs of it, A runs only)."""
    if a.command:
        runs_a, cpu = [], []
        for i in range(a.pairs + 1):
            out = os.path.join(work, f"a{i}.out")
            cmd = [gmon, "record", "-q", "--hz", str(a.hz), "-o", out, "--", *shlex.split(a.command)]
            cpu.append(run_cpu(cmd))
            runs_a.append(out)
            print(f"\rrecorded {len(runs_a)} A", end="", file=sys.stderr)
        print(file=sys.stderr)
        return "its own", cpu, runs_a, []
    src = os.path.join(work, "prog.c")
    prog = os.path.join(work, "prog")
    with open(src, "w") as f:
        f.write(SOURCE)
    subprocess.run(["gcc", "-O1", "-g", "-o", prog, src], check=True)
    # Another build (other code: another build id), for the second program of a tree.
    prog2 = os.path.join(work, "prog2")
    with open(prog2 + ".c", "w") as f:
        f.write(SOURCE.replace("10000", "10001"))
    subprocess.run(["gcc", "-O1", "-g", "-o", prog2, prog2 + ".c"], check=True)

    # Calibrate the rounds to about --cpu seconds of CPU time on this machine.
    probe = 200
    t = run_cpu([prog, str(probe)])
    rounds = max(1, round(probe * a.cpu / max(t, 1e-3)))
    print(f"calibrated: {rounds} rounds for ~{a.cpu} s CPU ({t:.3f} s for {probe})", file=sys.stderr)

    plain = dict(os.environ)
    plain.pop("DIFF_SLOW", None)
    slow = dict(plain, DIFF_SLOW="1")
    # A/A pairs are neighbours (A_k, A_k+1): 41 A runs give 40 pairs, each of two distinct
    # runs of one program, which is what each comparison needs.
    n_a, n_b = a.pairs + 1, a.pairs
    runs_a, runs_b = [], []
    cpu = []
    # Interleaved (A, B, A, B, ...) so that drift in the machine's load falls on both alike.
    for i in range(n_a):
        for kind, env, runs in [("a", plain, runs_a)] + ([("b", slow, runs_b)] if i < n_b else []):
            out = run_path(work, kind, len(runs))
            cmd = [gmon, "record", "-q", "--hz", str(a.hz), "-o", out, "--", prog, str(rounds)]
            if TREE:
                os.makedirs(os.path.dirname(out))
                script = f"{shlex.quote(prog)} {rounds}; {shlex.quote(prog2)} {max(1, rounds // 4)}"
                cmd[cmd.index("--") + 1 :] = ["sh", "-c", script]
            cpu.append(run_cpu(cmd, env))
            runs.append(out)
        print(f"\rrecorded {len(runs_a)} A, {len(runs_b)} B", end="", file=sys.stderr)
    print(file=sys.stderr)
    return rounds, cpu, runs_a, runs_b


def compare(a, gmon, runs_a, runs_b, rounds, cpu):
    """Runs the A/A and A/B comparisons, one and three profiles per side, and prints the table."""
    n_a, n_b = len(runs_a), len(runs_b)

    def pairs(k):
        """(base, new) lists for pair index `k` of each experiment, k-per-side."""
        aa = {
            ("single", "A/A"): ([runs_a[k]], [runs_a[k + 1]]),
            ("three", "A/A"): (
                [runs_a[(6 * k + j) % n_a] for j in range(3)],
                [runs_a[(6 * k + 3 + j) % n_a] for j in range(3)],
            ),
        }
        if not runs_b:
            return aa
        return aa | {
            ("single", "A/B"): ([runs_a[k]], [runs_b[k]]),
            ("three", "A/B"): (
                [runs_a[(3 * k + j) % n_a] for j in range(3)],
                [runs_b[(3 * k + j) % n_b] for j in range(3)],
            ),
        }

    results = {}
    for k in range(a.pairs):
        for key, (base, new) in pairs(k).items():
            _, d = diff(gmon, base, new)
            gate, _ = diff(gmon, base, new, ["--fail-above", str(a.fail_above)])
            hot = next((e for e in d["entries"] if e["name"] == "hot"), None)
            r = results.setdefault(key, [])
            r.append(
                {
                    "any": d["changes"] > 0,
                    "hot": hot is not None and hot["verdict"] == "change",
                    "hot_share": hot["share_base"] if hot else 0.0,
                    "hot_delta": hot["delta_share"] if hot else 0.0,
                    "gate": gate == 1,
                    "phi": d["dispersion"],
                    "jitter": d.get("jitter", 0.0),
                    "hot_detectable": hot.get("detectable_delta_share", 0.0) if hot else 0.0,
                    "cool_detectable": next(
                        (e.get("detectable_slowdown") or 0.0 for e in d["entries"] if e["name"] == "cool"),
                        0.0,
                    ),
                    "samples": d["base"]["samples"] / len(base),
                }
            )
        print(f"\rcompared {k + 1} of {a.pairs}", end="", file=sys.stderr)
    print(file=sys.stderr)

    # Random A/A pairs of distinct runs (a fixed seed, so that --from compares the same ones).
    rng = random.Random(28)
    random_alarms = 0
    for _ in range(a.random_pairs if n_a > 1 else 0):
        i, k = rng.sample(range(n_a), 2)
        random_alarms += diff(gmon, [runs_a[i]], [runs_a[k]])[1]["changes"] > 0

    def pct(rows, f):
        return f"{100.0 * sum(1 for r in rows if r[f]) / len(rows):.1f}%" if rows else "-"

    def mean(rows, f):
        return sum(r[f] for r in rows) / len(rows) if rows else 0.0

    what = "`hot` is 20% slower in B" if runs_b else f"{a.command or 'the kept runs'}, A/A only"
    level = " ".join(OPTIONS) or "gmon diff's defaults"
    print(
        f"\n{a.pairs} pairs each; {n_a} A runs and {n_b} B runs of {rounds} rounds, "
        + (f"mean {sum(cpu) / len(cpu):.2f} s CPU per recorded run, " if cpu else "")
        + f"--hz {a.hz}, {level}; {what}\n"
    )
    print(
        "| profiles per side | pairs | model (mean φ, mean τ) | samples per profile | hot's share in BASE | "
        "hot's Δshare | A/A: any change | A/B: hot a change | "
        f"--fail-above {a.fail_above:g}: A/A exit 1 | A/B exit 1 | "
        "A/A: hot's detectable Δshare | A/A: cool's detectable slowdown |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for per in ("single", "three"):
        aa, ab = results[(per, "A/A")], results.get((per, "A/B"), [])
        model = (
            "sampling"
            if per == "single"
            else f"run-to-run ({mean(aa + ab, 'phi'):.2f}, {100 * mean(aa + ab, 'jitter'):.1f}%)"
        )
        print(
            f"| {1 if per == 'single' else 3} | {a.pairs} | {model} | {mean(aa, 'samples'):.0f} | "
            f"{100 * mean(ab, 'hot_share'):.1f}% | {100 * mean(ab, 'hot_delta'):+.2f} points | "
            f"{pct(aa, 'any')} | {pct(ab, 'hot')} | {pct(aa, 'gate')} | "
            f"{pct(ab, 'gate')} | {100 * mean(aa, 'hot_detectable'):.2f} points | "
            f"{100 * mean(aa, 'cool_detectable'):.0f}% |"
        )
    if a.random_pairs and n_a > 1:
        print(
            f"\n{a.random_pairs} random A/A pairs of distinct runs, one profile per side: "
            f"{100.0 * random_alarms / a.random_pairs:.2f}% with any change"
        )

    if a.pictures and runs_b:
        pictures(a, gmon, runs_a, runs_b)


def pictures(a, gmon, runs_a, runs_b):
    """The differential flame graphs of the first A/B pair (`noise-aware.svg`; `before.svg`
    drawn by --old-gmon; `naive.svg`, every difference coloured, drawn from `gmon diff --folded`
    by the inferno-flamegraph command --inferno names), the same of the first A/A pair
    (`*-aa.svg`), and of the first A/B triple, three runs a side (`three-a-side.svg`)."""
    os.makedirs(a.pictures, exist_ok=True)
    side = (lambda outs: [f for out in outs for f in files(out)]) if TREE else list

    def sides(base, new):
        return ["--base", *side(base), "--new", *side(new)]

    what = "the tree, " if TREE else ""
    ab, aa = "A/B, hot 20% slower", "A/A, two runs of one program"
    drawn = []
    for suffix, one, words in [("", sides(runs_a[:1], runs_b[:1]), ab), ("-aa", sides(runs_a[:1], runs_a[1:2]), aa)]:
        drawn.append((gmon, f"noise-aware{suffix}.svg", one, f"{what}one run a side: {words}"))
        if a.old_gmon:
            drawn.append((a.old_gmon, f"before{suffix}.svg", one, f"{what}one run a side: {words}"))
        if a.inferno:
            drawn.append((None, f"naive{suffix}.svg", one, f"{what}one run a side, every difference coloured: {words}"))
    three = sides(runs_a[:3], runs_b[:3])
    drawn.append((gmon, "three-a-side.svg", three, f"{what}three runs a side: {ab}"))
    for binary, name, operands, title in drawn:
        out = os.path.join(a.pictures, name)
        if binary is None:
            # What an inferno user draws today: every difference coloured, noise or not.
            folded = subprocess.run(
                [gmon, "diff", "--folded", *operands], capture_output=True, text=True, check=True
            ).stdout
            with open(out, "w") as f:
                subprocess.run(
                    [a.inferno, "--title", f"{name}: {title}"], input=folded, text=True, stdout=f, check=True
                )
        else:
            subprocess.run(
                [binary, "flame", "--diff", "--title", f"{name}: {title}", "-o", out, *operands],
                check=True,
            )
        print(f"wrote {out}", file=sys.stderr)

if __name__ == "__main__":
    main()

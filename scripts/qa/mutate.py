"""mutate.py EXE GMON N [OUTDIR]: random damage to a real profile, every subcommand, look for crashes.

Each round flips bits, overwrites a 4- or 8-byte field with an extreme value (0, 0xff.., a huge
count), truncates, or duplicates a slice of GMON, then runs gmon dump/gprof/convert/merge/flame/
pprof/diff on it. A crash is exit status 101 or >= 128, "panicked" on stderr, or a run over 60 s;
a failure that leaves the output file behind, or an error not starting with "gmon:" (gprof: not
checked, it speaks gprof's words), is reported too. Inputs that crash are kept in OUTDIR.
Env: GMON (default: this checkout's target/release/gmon). Seeded: the same N gives the same inputs.
"""

import os
import random
import resource
import subprocess
import sys
import tempfile

gmon = os.environ.get("GMON", os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "target/release/gmon"))
exe, src, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
outdir = sys.argv[4] if len(sys.argv) > 4 else tempfile.mkdtemp(prefix="qa-mutate.")
os.makedirs(outdir, exist_ok=True)
data = open(src, "rb").read()
rnd = random.Random(20261121)
problems = 0


def limit_memory():
    # 4 GB of address space: an unbounded allocation becomes an abort (reported as a crash)
    # instead of a visit from the OOM killer, which may pick someone else's process.
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def mutate(b: bytearray) -> bytearray:
    kind = rnd.randrange(5)
    # most structure is in the first 64 bytes and at record starts: aim there often
    pos = rnd.randrange(min(len(b), 64)) if rnd.random() < 0.5 else rnd.randrange(len(b))
    if kind == 0:
        for _ in range(rnd.choice([1, 2, 8])):
            p = rnd.randrange(len(b))
            b[p] ^= 1 << rnd.randrange(8)
    elif kind == 1:
        w = rnd.choice([4, 8])
        val = rnd.choice([0, 0xFFFFFFFFFFFFFFFF, 0x7FFFFFFF, 0x80000000, 1 << 40, 65535, 65536])
        b[pos:pos + w] = val.to_bytes(8, "little")[:w]
    elif kind == 2:
        del b[rnd.randrange(1, len(b)):]
    elif kind == 3:
        a = rnd.randrange(len(b))
        b[a:a] = b[a:a + rnd.randrange(1, 64)]
    else:
        b[pos] = rnd.choice([0, 1, 2, 3, 0x80, 0xFF])
    return b


for i in range(rounds):
    b = bytearray(data)
    for _ in range(rnd.choice([1, 1, 2, 3])):
        if len(b) > 1:
            b = mutate(b)
    path = os.path.join(outdir, f"in-{i}")
    open(path, "wb").write(b)
    out = os.path.join(outdir, f"out-{i}")
    cmds = {
        "dump": [gmon, "dump", "--json", path],
        "gprof": [gmon, "gprof", "-b", exe, path],
        "gprof-l": [gmon, "gprof", "-b", "-l", "-C", exe, path],
        "convert": [gmon, "convert", path, "--to", "bsd44", "-o", out],
        "merge": [gmon, "merge", "-o", out, src, path],
        "flame": [gmon, "flame", "--exe", exe, "-o", out, path],
        "pprof": [gmon, "pprof", "--exe", exe, "-o", out, path],
        "diff": [gmon, "diff", "--exe", exe, src, path],
    }
    bad_here = False
    for name, cmd in cmds.items():
        if os.path.exists(out):
            os.unlink(out)
        try:
            r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60,
                               preexec_fn=limit_memory)
        except subprocess.TimeoutExpired:
            print(f"TIMEOUT {name}: {' '.join(cmd)}")
            problems += 1
            bad_here = True
            continue
        err = r.stderr.decode("utf-8", "replace")
        what = None
        if (r.returncode == 101 or r.returncode >= 128 or r.returncode < 0 or "panicked" in err
                or "memory allocation" in err):
            what = f"CRASH exit {r.returncode}"
        elif r.returncode != 0 and "-o" in cmd and os.path.exists(out):
            what = "output left behind on failure"
        elif r.returncode != 0 and not name.startswith("gprof") and not err.startswith("gmon: "):
            what = "error not 'gmon: ...'"
        if what:
            print(f"{what} {name}: {' '.join(cmd)}\n  {err.strip()[:300]}")
            problems += 1
            bad_here = True
    if not bad_here:
        os.unlink(path)
    if os.path.exists(out):
        os.unlink(out)
print(f"{rounds} mutated inputs, {problems} problems; kept inputs in {outdir}")
sys.exit(1 if problems else 0)

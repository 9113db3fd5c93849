#!/usr/bin/env python3
"""How many sampled stacks of a gmon-write profile reach the program's start.

Usage: stack-coverage.py GMON.OUT [-v]

Reads GMON.OUT.gmonx (layout: spec/runtime.md section 5) and prints, weighted by ticks:
  * the share of each stack kind (complete / frame-pointer / truncated / unknown);
  * "reach start": stacks whose outermost frame is the main executable's entry point
    (`_start`, which only reaches the sampled code through `__libc_start_main` and `main`) or,
    on other threads, the C library's thread start (`clone`/`clone3`), after a complete unwind.
With -v, the ten heaviest stacks that do not reach it (addresses resolved with addr2line -f).
"""
import struct
import subprocess
import sys

KINDS = {0: "unknown", 1: "complete", 2: "frame-pointer", 3: "truncated"}


def read_sidecar(path):
    b = open(path, "rb").read()
    if b[:8] != b"gmonext\0":
        sys.exit(f"{path}: not a gmon-write sidecar")
    pos, objs, stacks, kinds = 16, [], [], []
    while pos < len(b):
        kind, ln = struct.unpack_from("<IQ", b, pos)
        body, pos = b[pos + 12 : pos + 12 + ln], pos + 12 + ln
        p = 0
        if kind == 2:
            (n,) = struct.unpack_from("<I", body, p); p += 4
            for _ in range(n):
                bias, flags = struct.unpack_from("<QI", body, p); p += 12
                (l,) = struct.unpack_from("<I", body, p); p += 4
                name = body[p : p + l].decode(); p += l
                (l,) = struct.unpack_from("<I", body, p); p += 4 + l
                (r,) = struct.unpack_from("<I", body, p); p += 4
                ranges = [struct.unpack_from("<QQ", body, p + 16 * i) for i in range(r)]
                p += 16 * r
                objs.append((name, bias, flags, ranges))
        elif kind == 4:
            (n,) = struct.unpack_from("<I", body, p); p += 4
            for _ in range(n):
                count, depth = struct.unpack_from("<QI", body, p); p += 12
                pcs = list(struct.unpack_from(f"<{depth}Q", body, p)); p += 8 * depth
                stacks.append((count, pcs))
        elif kind == 7:
            (n,) = struct.unpack_from("<I", body, p)
            kinds = list(body[4 : 4 + n])
    return objs, stacks, kinds


def object_of(objs, pc):
    for o in objs:
        if any(s <= pc < e for s, e in o[3]):
            return o
    return None


def entry_point(path):
    with open(path, "rb") as f:
        h = f.read(64)
    return struct.unpack_from("<Q", h, 24)[0]


def main():
    gmon, verbose = sys.argv[1], "-v" in sys.argv[2:]
    objs, stacks, kinds = read_sidecar(gmon + ".gmonx")
    exe = next(o for o in objs if o[2] & 1)
    start = exe[1] + entry_point(exe[0])
    total = sum(c for c, _ in stacks)
    by_kind, reach, misses = {}, 0, []
    for i, (count, pcs) in enumerate(stacks):
        k = KINDS.get(kinds[i] if i < len(kinds) else 0, "unknown")
        by_kind[k] = by_kind.get(k, 0) + count
        root = pcs[-1] - 1 if len(pcs) > 1 else pcs[-1]
        o = object_of(objs, root)
        at_start = start <= root < start + 64
        thread_start = k == "complete" and o is not None and "/libc.so" in o[0]
        if at_start or thread_start:
            reach += count
        else:
            misses.append((count, k, pcs))
    print(f"{gmon}: {total} ticks in {len(stacks)} stacks")
    for k, c in sorted(by_kind.items()):
        print(f"  {k:14} {100.0 * c / max(total, 1):6.1f} %")
    print(f"  reach start    {100.0 * reach / max(total, 1):6.1f} %")
    if verbose:
        for count, k, pcs in sorted(misses, key=lambda m: -m[0])[:10]:
            names = []
            for j, pc in enumerate(pcs):
                o = object_of(objs, pc - (1 if j else 0))
                if o is None:
                    names.append(hex(pc)); continue
                link = pc - (1 if j else 0) - o[1]
                r = subprocess.run(["addr2line", "-f", "-e", o[0], hex(link)],
                                   capture_output=True, text=True)
                fn = r.stdout.split("\n")[0] if r.returncode == 0 else "?"
                names.append(f"{fn}@{o[0].rsplit('/', 1)[-1]}+{link:#x}")
            print(f"  {count:6} {k}: " + " <- ".join(names))


if __name__ == "__main__":
    main()

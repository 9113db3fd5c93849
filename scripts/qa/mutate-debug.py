#!/usr/bin/env python3
"""mutate-debug.py [N] [SEED]: damaged compressed debug sections through gmon gprof, flame and pprof.

Builds a small -pg program with `gcc -g -gz=zlib` and runs it for a gmon.out, then makes copies
of it whose DWARF is compressed every way BFD reads (`objcopy --compress-debug-sections=zlib-gnu`
(.zdebug_*), `zlib-gabi`, `zstd`), in the executable or in a separate debug file reached by
`.gnu_debuglink` (whose CRC is fixed up after each mutation so that the damaged file is used).
Each of N mutants damages one compressed section: its recorded size (huge, zero, off by one),
compression type, stream bytes, section size or offset, the SHF_COMPRESSED flag, the .zdebug
header, or replaces the stream by a bomb (zstd RLE blocks or zlib zeros claiming up to 4 GiB).
Every mutant goes through `gmon gprof -b -l`, `gmon flame --folded` and `gmon pprof`, each
under a 4 GiB address-space limit and a 60 s timeout.

Reports: runs, problems (crash = exit 101, a signal, "panicked" or an allocation failure;
timeouts), the peak max RSS of one run and the longest run. GMON selects the binary
(default target/release/gmon). spec/inputs.md §3 states the bounds this exercises.
"""
import os, random, resource, shutil, signal, struct, subprocess, sys, tempfile, time, zlib

G = os.path.abspath(os.environ.get("GMON", "target/release/gmon"))
N = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
rnd = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 24)
SHF_COMPRESSED = 0x800

PROG = r"""
#include <stdio.h>
#include <stdlib.h>
struct point { double x, y; };
static volatile double sink;
static double dist(struct point a, struct point b) { return (a.x-b.x)*(a.x-b.x)+(a.y-b.y)*(a.y-b.y); }
static void walk(int n) { struct point p = {0, 0}; for (int i = 0; i < n; i++) { struct point q = {i, i * 0.5}; sink += dist(p, q); p = q; } }
static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
int main(int argc, char **argv) { (void)argv; for (int r = 0; r < 40; r++) walk(200000); printf("%d\n", fib(24 + argc)); return 0; }
"""


def sh(*cmd, cwd):
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def sections(d):
    """(index, name, header offset, flags, offset, size) of every section of an ELF64 LE file."""
    shoff, = struct.unpack_from("<Q", d, 0x28)
    es, n, si = struct.unpack_from("<HHH", d, 0x3A)
    so, = struct.unpack_from("<Q", d, shoff + si * es + 0x18)
    out = []
    for i in range(n):
        h = shoff + i * es
        nm, = struct.unpack_from("<I", d, h)
        name = bytes(d[so + nm:d.index(b"\0", so + nm)]).decode("latin-1")
        flags, = struct.unpack_from("<Q", d, h + 8)
        off, size = struct.unpack_from("<QQ", d, h + 0x18)
        out.append((i, name, h, flags, off, size))
    return out


def zstd_rle_bomb(size):
    blk = 128 * 1024
    fr = struct.pack("<I", 0xFD2FB528) + bytes([0, 0x38])
    n = max(1, size // blk)
    for i in range(n):
        fr += struct.pack("<I", (1 if i == n - 1 else 0) | 2 | (blk << 3))[:3] + b"\0"
    return fr


def mutate(d):
    """Damages one compressed debug section of `d` in place; returns what was done."""
    secs = [s for s in sections(d) if s[1].startswith((".debug_", ".zdebug_"))]
    packed = [s for s in secs if s[3] & SHF_COMPRESSED or s[1].startswith(".zdebug_")]
    i, name, h, flags, off, size = rnd.choice(packed or secs)
    gnu = name.startswith(".zdebug_")
    k = rnd.randrange(9)
    huge = rnd.choice([0, 1, size - 1, size + 1, 1 << 24, (1 << 32) - 1, 1 << 31, 1 << 40, (1 << 64) - 1])
    if k == 0:  # recorded size
        if gnu:
            struct.pack_into(">I", d, off + 4, huge & 0xFFFFFFFF)
            struct.pack_into(">I", d, off + 8, huge & 0xFFFFFFFF)
        else:
            struct.pack_into("<Q", d, off + 8, huge)
    elif k == 1:  # compression type / .zdebug magic
        if gnu:
            d[off + rnd.randrange(4)] = rnd.randrange(256)
        else:
            struct.pack_into("<I", d, off, rnd.choice([0, 1, 2, 3, 0x60000000, rnd.randrange(1 << 32)]))
    elif k == 2:  # stream bytes
        for _ in range(rnd.choice([1, 4, 32])):
            d[off + rnd.randrange(12 if gnu else 24, max(size, 25))] = rnd.randrange(256)
    elif k == 3:  # section size
        struct.pack_into("<Q", d, h + 0x20, rnd.choice([0, 1, 12, 23, size // 2, size + 1, len(d), 1 << 40]))
    elif k == 4:  # section offset
        struct.pack_into("<Q", d, h + 0x18, rnd.choice([0, len(d) - 1, len(d), rnd.randrange(len(d)), 1 << 62]))
    elif k == 5:  # SHF_COMPRESSED toggled
        struct.pack_into("<Q", d, h + 8, flags ^ SHF_COMPRESSED)
    elif k == 6 or k == 7:  # a bomb appended and pointed at
        claim = rnd.choice([15 << 20, 17 << 20, 1 << 30, (4 << 30) - 1, 4 << 30, 1 << 40])
        if k == 6:
            # RLE blocks cost 4 bytes per 128 KiB: the stream really gives what it claims.
            stream, kind = zstd_rle_bomb(min(claim, 4 << 30)), 2
        else:
            stream, kind = zlib.compress(bytes(min(claim, 32 << 20)), 9), 1
        if gnu:
            blob = b"ZLIB" + struct.pack(">Q", claim & 0xFFFFFFFF) + zlib.compress(bytes(min(claim, 32 << 20)), 9)
        else:
            blob = struct.pack("<IIQQ", kind, 0, claim, 1) + stream
            struct.pack_into("<Q", d, h + 8, flags | SHF_COMPRESSED)
        at = len(d) + (-len(d) % 8)
        d.extend(bytes(at - len(d)) + blob)
        struct.pack_into("<QQ", d, h + 0x18, at, len(blob))
    else:  # stream cut short in place
        cut = rnd.randrange(max(1, size))
        d[off + cut:off + size] = bytes(size - cut)
    return f"{name} k={k}"


def run(cmd, cwd):
    """(status, max RSS KiB, seconds, stderr) of one command under the limits."""
    def lim():
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    err = tempfile.TemporaryFile()
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err, preexec_fn=lim)
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - t0 > 60:
            p.kill()
            _, status, ru = os.wait4(p.pid, 0)
            status = "timeout"
            break
        time.sleep(0.002)
    p.returncode = 0  # reaped by wait4
    err.seek(0)
    return status, ru.ru_maxrss, time.monotonic() - t0, err.read().decode("utf-8", "replace")


def main():
    work = tempfile.mkdtemp(prefix="gmon-mutate-debug.")
    try:
        open(os.path.join(work, "p.c"), "w").write(PROG)
        sh("gcc", "-pg", "-g", "-O1", "-gz=zlib", "-o", "p", "p.c", cwd=work)
        sh("./p", cwd=work)
        bases = []
        for z in ["zlib-gnu", "zlib-gabi", "zstd"]:
            sh("objcopy", "--decompress-debug-sections", "p", "plain", cwd=work)
            sh("objcopy", f"--compress-debug-sections={z}", "plain", f"in-{z}", cwd=work)
            bases.append((f"in-{z}", None))
            sh("objcopy", "--only-keep-debug", f"--compress-debug-sections={z}", "plain", f"dbg-{z}.debug", cwd=work)
            sh("objcopy", "--strip-debug", "plain", f"exe-{z}", cwd=work)
            sh("objcopy", f"--add-gnu-debuglink=dbg-{z}.debug", f"exe-{z}", cwd=work)
            bases.append((f"exe-{z}", f"dbg-{z}.debug"))
        runs = probs = 0
        peak = (0, "")
        longest = (0.0, "")
        for i in range(N):
            exe, dbg = rnd.choice(bases)
            target = dbg or exe
            d = bytearray(open(os.path.join(work, target), "rb").read())
            what = mutate(d)
            mexe = f"m-{i}"
            if dbg:
                open(os.path.join(work, f"m-{i}.debug"), "wb").write(d)
                e = bytearray(open(os.path.join(work, exe), "rb").read())
                link = [s for s in sections(e) if s[1] == ".gnu_debuglink"][0]
                name = f"m-{i}.debug".encode() + b"\0"
                name += bytes(-len(name) % 4)
                e[link[4]:link[4] + link[5]] = (name + struct.pack("<I", zlib.crc32(d)))[:link[5]].ljust(link[5], b"\0")
                open(os.path.join(work, mexe), "wb").write(e)
            else:
                open(os.path.join(work, mexe), "wb").write(d)
            for cmd in (["gprof", "-b", "-l", mexe, "gmon.out"], ["flame", "--folded", "--exe", mexe, "gmon.out"],
                        ["pprof", "--exe", mexe, "-o", "o.pb.gz", "gmon.out"]):
                status, rss, secs, e = run([G] + cmd, work)
                runs += 1
                tag = f"{cmd[0]} {mexe} ({what}{', debug file' if dbg else ''})"
                if rss > peak[0]:
                    peak = (rss, tag)
                if secs > longest[0]:
                    longest = (secs, tag)
                code = os.waitstatus_to_exitcode(status) if status != "timeout" else None
                if status == "timeout":
                    print("TIMEOUT", tag); probs += 1
                elif code == 101 or code < 0 or "panicked" in e or "memory allocation" in e:
                    print("CRASH", code, tag, e[:300]); probs += 1
            for f in (mexe, f"m-{i}.debug", "o.pb.gz"):
                if os.path.exists(os.path.join(work, f)):
                    os.unlink(os.path.join(work, f))
        print(f"{N} mutants, {runs} runs, {probs} problems; peak max RSS {peak[0]} KiB ({peak[1]}); "
              f"longest run {longest[0]:.2f} s ({longest[1]})")
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    main()

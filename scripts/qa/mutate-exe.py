"""mutate-exe.py EXE GMON N: damaged copies of EXE (truncated, bytes overwritten in the ELF header,
the section headers at the end, anywhere) through gmon gprof -b / -b -l, flame --folded and pprof;
reports crashes (exit 101 / signal / panic / allocation failure under a 4 GB limit) and timeouts.
Writes exe-N files in the current directory."""
import os, random, resource, subprocess, sys
G = os.environ.get("GMON", os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "target/release/gmon"))
exe, prof, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(exe, "rb").read()
rnd = random.Random(7)
def lim(): resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
probs = 0
for i in range(n):
    b = bytearray(data)
    k = rnd.randrange(3)
    if k == 0:
        del b[rnd.randrange(64, len(b)):]
    else:
        for _ in range(rnd.choice([1, 4, 32])):
            # ELF header, program/section headers and the end of the file (section headers) matter most
            r = rnd.random()
            p = rnd.randrange(64) if r < 0.3 else (rnd.randrange(len(b) - 4096, len(b)) if r < 0.7 else rnd.randrange(len(b)))
            b[p] = rnd.randrange(256)
    path = f"exe-{i}"
    open(path, "wb").write(b)
    for cmd in (["gprof", "-b", path, prof], ["gprof", "-b", "-l", path, prof], ["flame", "--folded", "--exe", path, prof], ["pprof", "--exe", path, "-o", f"o{i}.pb.gz", prof]):
        try:
            r = subprocess.run([G] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60, preexec_fn=lim)
        except subprocess.TimeoutExpired:
            print("TIMEOUT", cmd); probs += 1; continue
        e = r.stderr.decode("utf-8", "replace")
        if r.returncode == 101 or r.returncode < 0 or r.returncode >= 128 or "panicked" in e or "memory allocation" in e:
            print("CRASH", r.returncode, cmd, e[:300]); probs += 1
    if os.path.exists(f"o{i}.pb.gz"): os.unlink(f"o{i}.pb.gz")
print(n, "exes,", probs, "problems")

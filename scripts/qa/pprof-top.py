"""pprof-top.py PPROF GMON EXE PROFILE...: Go pprof's -top flat time per function vs gprof's self
seconds (GNU gprof -b -p), to the 2 decimals gprof prints; also that `gmon pprof` writes the same
bytes twice. Prints mismatches; exit 1 if any.
"""

import os
import re
import subprocess
import sys
import tempfile

pprof, gmon, exe, profiles = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
tmp = tempfile.mkdtemp(prefix="qa-pprof.")
a, b = os.path.join(tmp, "a.pb.gz"), os.path.join(tmp, "b.pb.gz")
for out in (a, b):
    subprocess.run([gmon, "pprof", "--exe", exe, "-o", out] + profiles, check=True)
bad = 0
if open(a, "rb").read() != open(b, "rb").read():
    print("gmon pprof: two runs wrote different bytes")
    bad = 1
top = subprocess.run([pprof, "-top", "-nodecount=100000", "-unit=s", a], capture_output=True,
                     text=True, check=True).stdout
ours = {}
for line in top.splitlines():
    m = re.match(r"\s*([0-9.]+)s\s+[0-9.]+%\s+[0-9.]+%\s+[0-9.]+s\s+[0-9.]+%\s+(.*)$", line)
    if m:
        ours[m.group(2).strip()] = ours.get(m.group(2).strip(), 0.0) + float(m.group(1))
flat = subprocess.run(["gprof", "-b", "-p", exe] + profiles, capture_output=True, text=True).stdout
gnu = {}
for line in flat.splitlines():
    m = re.match(r"\s*[0-9.]+\s+[0-9.]+\s+([0-9.]+)\s+(?:\d+\s+[0-9.]+\s+[0-9.]+\s+)?(.*)$", line)
    if m and float(m.group(1)) > 0:
        gnu[m.group(2).strip()] = gnu.get(m.group(2).strip(), 0.0) + float(m.group(1))
n = 0
for name, secs in sorted(gnu.items()):
    mine = ours.get(name)
    n += 1
    if mine is None or f"{mine:.2f}" != f"{secs:.2f}":
        print(f"{name}: gprof {secs:.2f} s, pprof -top {mine}")
        bad = 1
print(f"{n} functions with self time compared")
sys.exit(bad)

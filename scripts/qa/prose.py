"""prose.py GNU OURS: compare two gprof reports printed without -b.

Our explanations are different prose by design (issue 3), so this checks what must still be
identical: the number of form-feed lines, and every line of GNU's report that is not part of an
explanation, in order. An explanation line is recognised loosely: a line GNU prints that does
not occur in ours at all is taken as prose; a data line (one with a digit and a function name)
that is missing is reported.
"""

import re
import sys

gnu = open(sys.argv[1], encoding="latin-1").read().split("\n")
ours = open(sys.argv[2], encoding="latin-1").read().split("\n")
bad = 0
if gnu.count("\f") != ours.count("\f"):
    print(f"form-feed lines: gnu {gnu.count(chr(12))}, ours {ours.count(chr(12))}")
    bad = 1
# Data lines: index rows "[n]", flat rows starting with a percentage.
data = re.compile(r"^\s*(\[\d+\]|\d+\.\d\d\s+\d)")
gd = [line for line in gnu if data.match(line)]
od = [line for line in ours if data.match(line)]
if gd != od:
    for i, (a, b) in enumerate(zip(gd, od)):
        if a != b:
            print(f"data line {i}:\n- {a}\n+ {b}")
            break
    print(f"data lines: gnu {len(gd)}, ours {len(od)}")
    bad = 1
sys.exit(bad)

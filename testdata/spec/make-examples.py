#!/usr/bin/env python3
"""Write the worked examples of spec/ into testdata/spec/.

Every file is crafted byte by byte here (they are format examples, not profiler
output). The spec embeds `xxd FILE` of each one and states its field values;
gmon-format/tests/spec_examples.rs checks both, so spec and files cannot drift.

All examples describe one small profile of testdata/cases/ties-pie-O0/prog, whose
functions are (nm):  work 0x11e3, tie_b 0x1240, tie_a 0x126a, main 0x1294.
With -pg each function calls mcount right after its prologue, and glibc records
the return address of that call as the callee's self_pc:
    work 0x11f1, tie_b 0x124e, tie_a 0x1278
and the call site rounded down to 16 bytes as from_pc:
    tie_b -> work from 0x1250, tie_a -> work from 0x1280, main -> tie_* from 0x12b0.
So `gprof -b testdata/cases/ties-pie-O0/prog testdata/spec/gnu-le64.gmon` prints a
sensible report, and the BSD copies print the same report.

The histogram covers work only: [0x11e0, 0x1240) = 96 bytes, 24 bins of 4 bytes
each, which is the ratio glibc uses (one 16-bit bin per 4 bytes of text).

The second half writes testdata/spec/rules/: one small file per reading rule of
spec/gmon-out.md, spec/gnu.md and spec/bsd.md (what detection accepts and prefers, every
rejection and the offset it reports), and testdata/spec/manifest.tsv, which states for
every file here what a reader must make of it. The expectations are the spec's rules
applied by hand, not output of gmon; gmon-format/tests/spec_examples.rs checks gmon
against them and checks that the spec text states each one.

Usage: testdata/spec/make-examples.py   (rewrites every *.gmon next to this script)
"""

import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# --- the profile shared by most examples -----------------------------------------

LOW_PC = 0x11E0
HIGH_PC = 0x1240
RATE = 100
# 24 bins; the samples sit in work's loop (0x11f8..0x1230).
BINS = [0, 0, 0, 0, 0, 0, 3, 9, 14, 11, 6, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
assert len(BINS) == (HIGH_PC - LOW_PC) // 4

# (from_pc, self_pc, count), in the order glibc wrote them (ascending from_pc).
ARCS = [
    (0x1250, 0x11F1, 5000),  # tie_b -> work
    (0x1280, 0x11F1, 5000),  # tie_a -> work
    (0x12B0, 0x124E, 50),  # main -> tie_b
    (0x12B0, 0x1278, 50),  # main -> tie_a
]

GMONVERSION = 0x00051879


def fmt(endian):
    return "<" if endian == "le" else ">"


def ptr(endian, width, value):
    return struct.pack(fmt(endian) + ("I" if width == 4 else "Q"), value)


def u32(endian, value):
    return struct.pack(fmt(endian) + "I", value)


def i32(endian, value):
    return struct.pack(fmt(endian) + "i", value)


def u16(endian, value):
    return struct.pack(fmt(endian) + "H", value)


def uint(endian, size, value):
    code = {1: "B", 2: "H", 4: "I", 8: "Q"}[size]
    return struct.pack(fmt(endian) + code, value)


# --- GNU tagged format ------------------------------------------------------------


def gnu_header(endian, version=1, spare=b"\0" * 12):
    return b"gmon" + u32(endian, version) + spare


def gnu_hist(endian, width, low, high, bins, rate=RATE, dimen=b"seconds", abbrev=b"s"):
    return (
        b"\x00"
        + ptr(endian, width, low)
        + ptr(endian, width, high)
        + u32(endian, len(bins))
        + u32(endian, rate)
        + dimen.ljust(15, b"\0")
        + abbrev
        + b"".join(u16(endian, b) for b in bins)
    )


def gnu_arc(endian, width, from_pc, self_pc, count):
    return b"\x01" + ptr(endian, width, from_pc) + ptr(endian, width, self_pc) + u32(endian, count)


def gnu_bb_v1(endian, width, blocks):
    out = b"\x02" + u32(endian, len(blocks))
    for addr, count in blocks:
        out += ptr(endian, width, addr) + ptr(endian, width, count)
    return out


def gnu_bb_v0(endian, width, name, blocks):
    """Version-0 layout: nblocks, a NUL-terminated name, then per block
    count, address, function\\0, file\\0, int line."""
    out = b"\x02" + u32(endian, len(blocks)) + name + b"\0"
    for count, addr, func, path, line in blocks:
        out += ptr(endian, width, count) + ptr(endian, width, addr)
        out += func + b"\0" + path + b"\0" + i32(endian, line)
    return out


def gnu_profile(endian, width):
    out = gnu_header(endian) + gnu_hist(endian, width, LOW_PC, HIGH_PC, BINS)
    for a in ARCS:
        out += gnu_arc(endian, width, *a)
    return out


# --- BSD layouts --------------------------------------------------------------------


def bsd_arcs(endian, width, arcs):
    # struct rawarc: from_pc, self_pc, count -- all three pointer-sized ("long").
    return b"".join(
        ptr(endian, width, f) + ptr(endian, width, s) + ptr(endian, width, c) for f, s, c in arcs
    )


def bsd44(endian, width, bins=BINS, counter_type=0, counter_size=2, arcs=ARCS, rate=RATE):
    header_size = 2 * width + 24
    ncnt = header_size + counter_size * len(bins)
    out = ptr(endian, width, LOW_PC) + ptr(endian, width, HIGH_PC)
    out += u32(endian, ncnt) + u32(endian, GMONVERSION) + u32(endian, rate)
    out += i32(endian, counter_type) + b"\0" * 8
    out += b"".join(uint(endian, counter_size, b) for b in bins)
    return out + bsd_arcs(endian, width, arcs)


def bsd_old(endian, width, header_size):
    ncnt = header_size + 2 * len(BINS)
    out = ptr(endian, width, LOW_PC) + ptr(endian, width, HIGH_PC) + u32(endian, ncnt)
    out += b"\0" * (header_size - (2 * width + 4))  # tail padding of a 24-byte header
    out += b"".join(u16(endian, b) for b in BINS)
    return out + bsd_arcs(endian, width, ARCS)


# --- the examples -------------------------------------------------------------------


def shobj(endian, width):
    """A GMON_SHOBJ_VERSION file as ld.so writes for LD_PROFILE: 32-bit tag words, a
    histogram of textsize/4 bins, then a u32 arc count and a fixed-size table of packed
    arc slots (from_pc, self_pc: P bytes each, count: u32), unused slots zero."""
    out = gnu_header(endian, version=0x1FFFF)
    out += u32(endian, 0)
    out += ptr(endian, width, 0x1000) + ptr(endian, width, 0x1010) + u32(endian, 4)
    out += u32(endian, RATE) + b"seconds".ljust(15, b"\0") + b"s"
    out += b"".join(u16(endian, b) for b in [0, 2, 0, 1])
    out += u32(endian, 1) + u32(endian, 1)
    for f, s_, c in [(0x0, 0x1004, 7), (0, 0, 0)]:
        out += ptr(endian, width, f) + ptr(endian, width, s_) + u32(endian, c)
    return out


def examples():
    ex = {}
    # A header and nothing else: a valid, empty profile.
    ex["gnu-header-only.gmon"] = gnu_header("le")
    # One histogram record (tag 0).
    ex["gnu-le64-hist.gmon"] = gnu_header("le") + gnu_hist("le", 8, LOW_PC, HIGH_PC, BINS)
    # One call-graph arc record (tag 1).
    ex["gnu-le64-arc.gmon"] = gnu_header("le") + gnu_arc("le", 8, *ARCS[1])
    # The whole profile in the four encodings.
    ex["gnu-le64.gmon"] = gnu_profile("le", 8)
    ex["gnu-be64.gmon"] = gnu_profile("be", 8)
    ex["gnu-le32.gmon"] = gnu_profile("le", 4)
    ex["gnu-be32.gmon"] = gnu_profile("be", 4)
    # How records combine: two histogram records with the same range (summed bin
    # by bin), one with a disjoint range (a second histogram), and the same arc
    # twice (counts summed).
    ex["gnu-le64-combine.gmon"] = (
        gnu_header("le")
        + gnu_hist("le", 8, 0x11E0, 0x1200, [0, 0, 0, 0, 0, 0, 3, 9])
        + gnu_arc("le", 8, 0x1280, 0x11F1, 3000)
        + gnu_hist("le", 8, 0x11E0, 0x1200, [0, 0, 0, 0, 0, 0, 1, 1])
        + gnu_hist("le", 8, 0x1200, 0x1240, [14, 11, 6, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        + gnu_arc("le", 8, 0x1280, 0x11F1, 2000)
    )
    # Basic-block counts (tag 2), version-1 layout: address then count, both P bytes.
    ex["gnu-le64-bb-v1.gmon"] = gnu_header("le") + gnu_bb_v1(
        "le", 8, [(0x11F1, 10000), (0x1206, 1500000000)]
    )
    # Version-0 file: same header with version 0, and the old tag-2 layout.
    ex["gnu-v0-le64-bb.gmon"] = gnu_header("le", version=0) + gnu_bb_v0(
        "le", 8, b"ties.c", [(10000, 0x11F1, b"work", b"ties.c", 25)]
    )
    # 4.4BSD: struct gmonhdr, u16 bins, pointer-sized arcs.
    ex["bsd44-le64.gmon"] = bsd44("le", 8)
    ex["bsd44-be32.gmon"] = bsd44("be", 4)
    # FreeBSD histcounter_type = 32: unsigned 32-bit bins (kernel profiles).
    ex["bsd44-le64-u32.gmon"] = bsd44(
        "le", 8, bins=[b * 100000 for b in BINS], counter_type=32, counter_size=4, arcs=ARCS[:1]
    )
    # A file whose last arc is cut short: the partial record is ignored.
    ex["bsd44-le64-partial.gmon"] = bsd44("le", 8, arcs=ARCS[:1]) + bsd_arcs("le", 8, [ARCS[1]])[:10]
    # Old BSD: lpc, hpc, ncnt only (no rate): 20, 24 (padded) and 12 bytes.
    ex["bsd-old-le64.gmon"] = bsd_old("le", 8, 20)
    ex["bsd-old-le64-pad24.gmon"] = bsd_old("le", 8, 24)
    ex["bsd-old-le32.gmon"] = bsd_old("le", 4, 12)
    # A 64-bit PIE old-BSD profile (text from 0) whose last arc is cut to 12 bytes: its 4-byte
    # reading is accepted too (lpc = hpc = 0, 26 bins, 8 whole arcs), but is less plausible.
    ex["bsd-old-le64-pie-partial.gmon"] = pie_partial()
    # Not a gmon.out: ld.so's LD_PROFILE output, which gprof refuses (named like the real
    # files, <soname>.profile).
    ex["gnu-shobj-le64.profile"] = shobj("le", 8)
    return ex


def pie_partial():
    """Old BSD, little-endian, P = 8, 20-byte header, text [0, 0x40): 16 bins, four arcs
    inside the text, then the first 12 bytes of a fifth arc."""
    bins = [0, 2, 5, 1, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0]
    arcs = [(0x30, 0x04, 7), (0x34, 0x04, 7), (0x38, 0x21, 1), (0x3c, 0x21, 1)]
    out = ptr("le", 8, 0) + ptr("le", 8, 0x40) + u32("le", 20 + 2 * len(bins))
    out += b"".join(u16("le", b) for b in bins)
    out += bsd_arcs("le", 8, arcs)
    return out + bsd_arcs("le", 8, [(0x3c, 0x04, 2)])[:12]


# --- reading rules: testdata/spec/rules/ and manifest.tsv --------------------------------

# A manifest row: (file, options, result, offset, ambiguous, less plausible).
# result is a reading "VARIANT ENDIAN WIDTH [HEADER]" or an error class (spec/gmon-out.md,
# "Implementing a reader"); offset is "-" for a reading; the two lists are readings joined
# by ";" or "-".


def reading(variant, endian, width, header=None):
    return f"{variant} {endian} {width}" + (f" {header}" if header else "")


def le64_arc_gnu(from_pc, self_pc, count):
    return gnu_arc("le", 8, from_pc, self_pc, count)


def bsd44_header(endian, width, low, high, ncnt, counter_type=0):
    return (
        ptr(endian, width, low)
        + ptr(endian, width, high)
        + u32(endian, ncnt)
        + u32(endian, GMONVERSION)
        + u32(endian, RATE)
        + i32(endian, counter_type)
        + b"\0" * 8
    )


def rules():
    """(name, bytes, [(options, result, offset, ambiguous, less)])"""
    hdr = gnu_header("le")
    v0 = gnu_header("le", version=0)
    arc = le64_arc_gnu(0x1280, 0x11F1, 5000)
    r = []
    # -- detection: acceptance and preference
    r.append(("empty.gmon", b"", [("-", "eof", "0x0", "-", "-")]))
    r.append(("garbage.gmon", b"\xff" * 64, [("-", "unknown-format", "0x10", "-", "-")]))
    # 273 bytes of 1s after the header: 13 arcs of 21 bytes or 21 of 13, both valid.
    r.append(("gnu-arcs-only-ambiguous.gmon", hdr + b"\x01" * 273,
              [("-", reading("gnu", "le", 8), "-", reading("gnu", "le", 4), "-")]))
    r.append(("gnu-v0-header-only.gmon", v0,
              [("-", reading("gnu", "le", 8), "-",
                ";".join([reading("gnu", "le", 4), reading("gnu", "be", 8), reading("gnu", "be", 4)]),
                "-")]))
    # Version 0 with a histogram whose range is ordered only when read little-endian.
    r.append(("gnu-v0-tiebreak.gmon", v0 + gnu_hist("le", 8, 0x1FF, 0x200, []),
              [("-", reading("gnu", "le", 8), "-", "-", reading("gnu", "be", 8))]))
    r.append(("gnu-low-above-high.gmon", hdr + gnu_hist("le", 8, HIGH_PC, LOW_PC, BINS),
              [("-", reading("gnu", "le", 8), "-", "-", "-")]))
    # An old BSD file, 4-byte pointers, whose bins put GMONVERSION at offset 20 (where an
    # 8-byte 4.4BSD header has its version): the accepted old BSD reading wins.
    bins = [0, 0, 0, 0, 0x1879, 0x0005, 0, 0, 3, 9, 14, 11]
    r.append(("bsd-old-le32-gmonversion.gmon",
              ptr("le", 4, LOW_PC) + ptr("le", 4, LOW_PC + 4 * len(bins)) + u32("le", 12 + 2 * len(bins))
              + b"".join(u16("le", b) for b in bins) + bsd_arcs("le", 4, ARCS[:1]),
              [("-", reading("bsd-old", "le", 4, 12), "-", "-", "-")]))
    # -- Darwin magic, both byte orders
    r.append(("darwin-be.gmon", bytes.fromhex("beefbabe") + b"\0" * 28, [("-", "not-supported", "0x0", "-", "-")]))
    r.append(("darwin-le.gmon", bytes.fromhex("bfbaefbe") + b"\0" * 28, [("-", "not-supported", "0x0", "-", "-")]))
    # -- GNU rejections
    r.append(("gnu-short-header.gmon", hdr[:12], [("-", "eof", "0x0", "-", "-")]))
    r.append(("gnu-bad-version.gmon", gnu_header("le", version=2), [("-", "bad-version", "0x4", "-", "-")]))
    r.append(("gnu-bad-tag.gmon", hdr + arc + b"\x07", [("-", "bad-tag", "0x29", "-", "-")]))
    r.append(("gnu-truncated-arc.gmon", hdr + arc[:11], [("-", "eof", "0x14", "-", "-")]))
    r.append(("gnu-truncated-hist-header.gmon", hdr + gnu_hist("le", 8, LOW_PC, HIGH_PC, [])[:30],
              [("-", "eof", "0x14", "-", "-")]))
    r.append(("gnu-hist-too-large.gmon", hdr + gnu_hist("le", 8, LOW_PC, HIGH_PC, BINS)[:-2],
              [("-", "too-large", "0x25", "-", "-")]))
    r.append(("gnu-bb-too-many.gmon", hdr + b"\x02" + u32("le", 3) + ptr("le", 8, 0x11F1) + ptr("le", 8, 1),
              [("-", "eof", "0x15", "-", "-")]))
    r.append(("gnu-v0-unterminated-name.gmon", v0 + b"\x02" + u32("le", 1) + b"ties.c",
              [("-", "eof", "0x19", "-", "-")]))
    r.append(("gnu-v0-cut-block.gmon", v0 + b"\x02" + u32("le", 1) + b"ties.c\0" + ptr("le", 8, 10000) + b"\xf1\x11",
              [("ptr-width=8", "eof", "0x20", "-", "-"),
               ("-", "eof", "0x28", "-", "-")]))
    # -- 4.4BSD rejections
    full = 40 + 48
    r.append(("bsd44-short-header.gmon", bsd44_header("le", 8, LOW_PC, HIGH_PC, full)[:30],
              [("-", "eof", "0x0", "-", "-")]))
    r.append(("bsd44-bad-counter-type.gmon", bsd44_header("le", 8, LOW_PC, HIGH_PC, 40, 12),
              [("-", "bad-counter-type", "0x1c", "-", "-")]))
    r.append(("bsd44-negative-count.gmon",
              bsd44_header("le", 8, LOW_PC, HIGH_PC, 40 + 8, -32) + i32("le", 5) + i32("le", -1),
              [("-", "negative-count", "0x2c", "-", "-")]))
    r.append(("bsd44-signed-counts.gmon",
              bsd44_header("le", 8, LOW_PC, HIGH_PC, 40 + 8, -32) + i32("le", 5) + i32("le", 0x7FFFFFFF),
              [("-", reading("bsd44", "le", 8), "-", "-", "-")]))
    r.append(("bsd44-ncnt-too-large.gmon", bsd44_header("le", 8, LOW_PC, HIGH_PC, full) + b"\0" * 20,
              [("-", "too-large", "0x10", "-", "-")]))
    r.append(("bsd44-ncnt-below-header.gmon", bsd44_header("le", 8, LOW_PC, HIGH_PC, 30),
              [("-", "bad-ncnt", "0x10", "-", "-")]))
    r.append(("bsd44-ncnt-odd.gmon", bsd44_header("le", 8, LOW_PC, HIGH_PC, 41) + b"\0\0",
              [("-", "bad-ncnt", "0x10", "-", "-")]))
    r.append(("bsd44-low-above-high.gmon", bsd44_header("le", 8, HIGH_PC, LOW_PC, full) + b"\0" * 48,
              [("-", "bad-range", "0x0", "-", "-")]))
    # -- old BSD rejections
    pad = bytearray(bsd_old("le", 8, 24))
    pad[0x16] = 0x5A
    r.append(("bsd-old-nonzero-padding.gmon", bytes(pad),
              [("header-size=24", "nonzero-padding", "0x16", "-", "-"),
               ("-", reading("bsd-old", "le", 8, 20), "-", "-", "-")]))
    old32 = bsd_old("le", 4, 12)
    r.append(("bsd-old-ncnt-too-large.gmon", old32[:40],
              [("variant=bsd-old,endian=little,ptr-width=4", "too-large", "0x8", "-", "-")]))
    return r


def example_rows():
    """Manifest rows for the worked examples."""
    le8, be8, le4, be4 = (("le", 8), ("be", 8), ("le", 4), ("be", 4))
    rows = []
    for name in ["gnu-le64.gmon", "gnu-le64-hist.gmon", "gnu-le64-arc.gmon",
                 "gnu-le64-combine.gmon", "gnu-le64-bb-v1.gmon"]:
        rows.append((name, "-", reading("gnu", *le8), "-", "-", "-"))
    rows.append(("gnu-header-only.gmon", "-", reading("gnu", *le8), "-", reading("gnu", *le4), "-"))
    rows.append(("gnu-be64.gmon", "-", reading("gnu", *be8), "-", "-", "-"))
    rows.append(("gnu-le32.gmon", "-", reading("gnu", *le4), "-", "-", "-"))
    rows.append(("gnu-be32.gmon", "-", reading("gnu", *be4), "-", "-", "-"))
    rows.append(("gnu-v0-le64-bb.gmon", "-", reading("gnu", *le8), "-", "-", "-"))
    rows.append(("gnu-v0-le64-bb.gmon", "ptr-width=4", "eof", "0x3e", "-", "-"))
    rows.append(("gnu-shobj-le64.profile", "-", "not-supported", "0x4", "-", "-"))
    rows.append(("bsd44-le64.gmon", "variant=gnu", "bad-magic", "0x0", "-", "-"))
    rows.append(("bsd-old-le64.gmon", "variant=bsd44", "bad-version", "0x14", "-", "-"))
    rows.append(("bsd44-le64.gmon", "-", reading("bsd44", *le8), "-", "-", "-"))
    rows.append(("bsd44-be32.gmon", "-", reading("bsd44", *be4), "-", "-", "-"))
    rows.append(("bsd44-le64-u32.gmon", "-", reading("bsd44", *le8), "-", "-", "-"))
    rows.append(("bsd44-le64-partial.gmon", "-", reading("bsd44", *le8), "-", "-", "-"))
    rows.append(("bsd-old-le64.gmon", "-", reading("bsd-old", *le8, 20), "-", "-", "-"))
    rows.append(("bsd-old-le64-pad24.gmon", "-", reading("bsd-old", *le8, 20), "-", "-", "-"))
    rows.append(("bsd-old-le64-pad24.gmon", "header-size=24", reading("bsd-old", *le8, 24), "-", "-", "-"))
    rows.append(("bsd-old-le32.gmon", "-", reading("bsd-old", *le4, 12), "-", "-", "-"))
    rows.append(("bsd-old-le64-pie-partial.gmon", "-", reading("bsd-old", *le8, 20), "-", "-",
                 reading("bsd-old", *le4, 12)))
    rows.append(("bsd-old-le64-pie-partial.gmon", "ptr-width=4", reading("bsd-old", *le4, 12), "-", "-", "-"))
    return rows


MANIFEST_HEADER = """\
# What a reader must make of every file in testdata/spec/ (spec/gmon-out.md, "Implementing a reader").
# Written by make-examples.py; the expectations are the spec's rules, checked by gmon-format/tests/spec_examples.rs.
# file: relative to testdata/spec/. options: "-" or comma-separated variant=gnu|bsd44|bsd-old,
#   endian=little|big, ptr-width=4|8, header-size=12|20|24 (forced; the rest is detected).
# result: the chosen reading "VARIANT ENDIAN WIDTH [OLD-BSD-HEADER-SIZE]", or the error class.
# offset: the error's byte offset (hex), "-" for a reading. ambiguous / less-plausible: the other
#   accepted readings (";"-separated, "-" for none) as plausible as / less plausible than the chosen one.
file\toptions\tresult\toffset\tambiguous\tless-plausible
"""


def main():
    for name, data in sorted(examples().items()):
        path = os.path.join(HERE, name)
        with open(path, "wb") as f:
            f.write(data)
        print(f"{name:28} {len(data):4} bytes")
    rules_dir = os.path.join(HERE, "rules")
    os.makedirs(rules_dir, exist_ok=True)
    rows = example_rows()
    for name, data, expectations in rules():
        with open(os.path.join(rules_dir, name), "wb") as f:
            f.write(data)
        print(f"rules/{name:28} {len(data):4} bytes")
        rows.extend(("rules/" + name,) + e for e in expectations)
    with open(os.path.join(HERE, "manifest.tsv"), "w") as f:
        f.write(MANIFEST_HEADER)
        for row in rows:
            f.write("\t".join(row) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes the sidecar test vectors of spec/runtime.md §5 into testdata/spec/sidecar/, one file per
rule of the "Rejections" table and per unusual-but-valid case, and manifest.tsv beside them.

The expectations are computed here, from where each file's defect was placed, by the spec's
offset rule; gmon-format/tests/sidecar_examples.rs checks gmon's reader against them. Run from
anywhere: python3 testdata/spec/make-sidecars.py
"""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sidecar")
MAGIC = b"gmonext\0"


def u32(v):
    return struct.pack("<I", v)


def u64(v):
    return struct.pack("<Q", v)


def string(b):
    return u32(len(b)) + b


def section(kind, body, length=None):
    return u32(kind) + u64(len(body) if length is None else length) + body


def header(version=1):
    return MAGIC + u32(version) + u32(0)


def info(writer=b"vectors 1", samples=9):
    return u32(1000) + u32(42) + u64(samples) + u64(1) + u64(0) + u64(0) + u64(0) + string(writer)


def obj(path, bias, flags, ranges, build_id=b"\xab\xcd"):
    body = u64(bias) + u32(flags) + string(path) + string(build_id) + u32(len(ranges))
    for start, end in ranges:
        body += u64(start) + u64(end)
    return body


MAIN = obj(b"/bin/prog", 0x1000, 1, [(0x2000, 0x3000)])
LIB = obj(b"/lib/libx.so", 0x7F0000000000, 0, [(0x7F0000001000, 0x7F0000002000)])


def objects(*objs):
    return u32(len(objs)) + b"".join(objs)


def pcs(*pairs):
    return u32(len(pairs)) + b"".join(u64(p) + u64(c) for p, c in pairs)


def stacks(*st):
    body = u32(len(st))
    for count, frames in st:
        body += u64(count) + u32(len(frames)) + b"".join(u64(f) for f in frames)
    return body


def threads(*t):
    return u32(len(t)) + b"".join(u32(tid) + u64(n) for tid, n in t)


def thread_clocks(dropped, *c):
    return u64(dropped) + u32(len(c)) + b"".join(u32(t) + u64(a) + u64(b) for t, a, b in c)


def kinds(*k):
    return u32(len(k)) + bytes(k)


def mappings(*m):
    return u32(len(m)) + b"".join(u32(o) + u64(s) + u64(e) + u64(off) + u64(bias)
                                  for o, s, e, off, bias in m)


def valid_sections():
    """(kind, body) of a sidecar with every section, as the runtime writes them."""
    return [
        (1, info()),
        (2, objects(MAIN, LIB)),
        (3, pcs((0x2010, 5), (0x7F0000001010, 4))),
        (4, stacks((5, [0x2010, 0x2100]), (4, [0x7F0000001010, 0x2100]))),
        (5, threads((42, 9))),
        (6, u64(123) + u64(0x1234)),
        (7, kinds(1, 1)),
        (8, u32(2) + u32(0) + u64(9) + u64(0)),
        (9, mappings((0, 0x7FF000000000, 0x7FF000001000, 0x1000, 0x7FF000000000 - 0x1000))),
        (10, u64(1) + u64(1)),
        (11, u64(2_700_000) + u64(800_000)),
        (12, u64(5_000_000_000) + u64(5_004_000_000)),
    ]


def build(sections):
    return header() + b"".join(section(k, b) for k, b in sections)


def offset_of_section(sections, index):
    """File offset of the header of sections[index]."""
    return 16 + sum(12 + len(b) for _, b in sections[:index])


rows = []  # (file, result, offset, objects, pc_samples, stacks, threads, link, main, note)


def ok(name, data, note, main="0"):
    write(name, data)
    rows.append((name, "ok", "-", note, main))


def bad(name, data, cls, offset, note):
    write(name, data)
    rows.append((name, cls, "%#x" % offset, note, "-"))


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def main():
    os.makedirs(OUT, exist_ok=True)
    for old in os.listdir(OUT):
        if old.endswith(".gmonx") or old == "manifest.tsv":
            os.remove(os.path.join(OUT, old))
    base = valid_sections()
    full = build(base)
    ok("valid.gmonx", full, "every section, as the runtime writes them")
    ok("empty-sections.gmonx", header(), "the header alone: valid, with nothing in it", main="-")
    # Valid: ends between two sections (before GMON_LINK): unlinked, samples kept.
    ok("cut-before-link.gmonx", build(base[:5]), "ends between sections, before GMON_LINK")
    # Valid: an unknown kind, with garbage inside, is skipped.
    ok("unknown-kind.gmonx", build(base[:1] + [(99, b"\xff" * 7)] + base[1:]),
       "an unknown kind (99) skipped whole")
    # Valid: sections in another order.
    ok("reordered.gmonx", build(list(reversed(base))), "sections in reverse order")
    # Valid: two objects flagged main: the first is the main one.
    two_main = [(2, objects(MAIN, obj(b"/lib/libx.so", 0x7F0000000000, 1,
                                      [(0x7F0000001000, 0x7F0000002000)])))]
    ok("two-main-objects.gmonx", build(base[:1] + two_main + base[2:]),
       "two objects flagged main: the first is the executable", main="0")
    # Valid: a stack of depth 0, and the same stack twice.
    odd_stacks = [(4, stacks((3, []), (5, [0x2010, 0x2100]), (2, [0x2010, 0x2100]))),
                  (7, kinds(1, 1, 1))]
    ok("depth-zero-and-repeated-stacks.gmonx",
       build(base[:3] + odd_stacks[:1] + base[4:6] + odd_stacks[1:]),
       "a stack of depth 0 and the same stack twice")
    # Valid: an empty range (end == start).
    ok("empty-range.gmonx",
       build(base[:1] + [(2, objects(obj(b"/bin/prog", 0x1000, 1, [(0x2000, 0x2000)])))]
             + base[2:]), "a range with end == start")

    # Rule 1: bad magic; a short file too.
    bad("bad-magic.gmonx", b"gmonexT\0" + full[8:], "sidecar-bad-magic", 0, "rule 1")
    bad("short-magic.gmonx", MAGIC[:5], "sidecar-bad-magic", 0, "rule 1: shorter than the magic")
    # Rules 2-4: header cut or wrong.
    bad("cut-version.gmonx", MAGIC + b"\x01\x00", "eof", 8, "rule 2")
    bad("bad-version.gmonx", header(2) + full[16:], "bad-version", 8, "rule 3")
    bad("cut-flags.gmonx", MAGIC + u32(1) + b"\x00", "eof", 12, "rule 4")
    # Rule 5: cut inside a section's kind, then inside its length.
    bad("cut-kind.gmonx", full[:16 + 2], "eof", 16, "rule 5: kind")
    bad("cut-length.gmonx", full[:16 + 4 + 3], "eof", 20, "rule 5: length")
    # Rule 6: a length past the end (known and unknown kinds).
    at = offset_of_section(base, 6)
    bad("length-past-end.gmonx", full[:at] + section(7, kinds(1, 1), length=100),
        "eof", at + 12, "rule 6")
    bad("unknown-length-past-end.gmonx", full + section(99, b"abc", length=4),
        "eof", len(full) + 12, "rule 6: an unknown kind too")
    # Rule 7: a known kind twice.
    bad("duplicate-threads.gmonx", full + section(5, threads()),
        "sidecar-duplicate-section", len(full), "rule 7")
    # Rule 8: a field past its body's end: INFO cut inside a counter; a string's bytes.
    info_at = offset_of_section(base, 0)
    cut = info()[:20]
    bad("info-cut-counter.gmonx", header() + section(1, cut) + b"".join(
        section(k, b) for k, b in base[1:]), "eof", info_at + 12 + 16, "rule 8: a counter")
    writer_bytes = info_at + 12 + 48 + 4
    w = info()
    short_writer = w[:48] + u32(50) + w[52:]
    bad("writer-past-body.gmonx", header() + section(1, short_writer) + b"".join(
        section(k, b) for k, b in base[1:]), "eof", writer_bytes, "rule 8: a string's bytes")
    # Rule 9: counts that cannot fit the body.
    pcs_at = offset_of_section(base, 2)
    bad("pc-count-too-large.gmonx",
        build(base[:2] + [(3, u32(3) + pcs((0x2010, 5), (1, 1))[4:])] + base[3:]),
        "bad-value", pcs_at + 12, "rule 9: PC samples")
    st_at = offset_of_section(base, 3)
    deep = u32(1) + u64(5) + u32(9) + u64(0x2010)
    bad("stack-depth-too-large.gmonx", build(base[:3] + [(4, deep)] + base[4:]),
        "bad-value", st_at + 12 + 4 + 8, "rule 9: a stack's depth")
    obj_at = offset_of_section(base, 1)
    bad("object-count-too-large.gmonx", build(base[:1] + [(2, u32(9) + MAIN)] + base[2:]),
        "bad-value", obj_at + 12, "rule 9: objects")
    # Rule 10: a path that is not UTF-8.
    bad_path = obj(b"/bin/\xffprog", 0x1000, 1, [(0x2000, 0x3000)])
    bad("path-not-utf8.gmonx", build(base[:1] + [(2, objects(bad_path))] + base[2:]),
        "not-utf8", obj_at + 12 + 4 + 8 + 4 + 4, "rule 10")
    # Rule 11: a range with end < start: the offset of its start field.
    backwards = obj(b"/bin/prog", 0x1000, 1, [(0x3000, 0x2000)])
    range_at = obj_at + 12 + 4 + 8 + 4 + 4 + len(b"/bin/prog") + 4 + 2 + 4
    bad("range-backwards.gmonx", build(base[:1] + [(2, objects(backwards))] + base[2:]),
        "bad-value", range_at, "rule 11")
    # Rule 12: bytes left in a known body.
    th_at = offset_of_section(base, 4)
    bad("threads-trailing.gmonx", build(base[:4] + [(5, threads((42, 9)) + b"\x00\x00")] + base[5:]),
        "sidecar-trailing-bytes", th_at + 12 + 4 + 12, "rule 12")
    # Rule 13: STACK_KINDS' count differs from the stacks', whichever comes first.
    k_at = offset_of_section(base, 6)
    bad("kinds-count-differs.gmonx", build(base[:6] + [(7, kinds(1))] + base[7:]),
        "bad-value", k_at + 12, "rule 13")
    early = [base[0], (7, kinds(1)), *base[1:6]]
    bad("kinds-before-stacks-differs.gmonx", build(early), "bad-value",
        offset_of_section(early, 1) + 12, "rule 13: STACK_KINDS before STACKS")

    # Rule 14: a mapping that names no object of OBJECTS (checked after the last section).
    m_at = offset_of_section(base, 8)
    bad("mapping-object-missing.gmonx",
        build(base[:8] + [(9, mappings((2, 0x7FF000000000, 0x7FF000001000, 0, 0)))] + base[9:]),
        "bad-value", m_at + 12 + 4, "rule 14")
    # Rule 11 for a mapping's range, and rule 9 for its count.
    bad("mapping-range-backwards.gmonx",
        build(base[:8] + [(9, mappings((0, 0x7FF000001000, 0x7FF000000000, 0, 0)))] + base[9:]),
        "bad-value", m_at + 12 + 4 + 4, "rule 11: a mapping")
    bad("mapping-count-too-big.gmonx",
        build(base[:8] + [(9, u32(2) + mappings((0, 0, 0, 0, 0))[4:])] + base[9:]),
        "bad-value", m_at + 12, "rule 9: mappings")

    # CLOCK (8), PROCESSES (10) and UNCLOCKED (11): fixed-size bodies, rules 7, 8 and 12.
    c_at = offset_of_section(base, 7)
    bad("clock-cut.gmonx", build(base[:7] + [(8, base[7][1][:20])] + base[8:]),
        "eof", c_at + 12 + 16, "rule 8: CLOCK's unsampled cut short")
    p_at = offset_of_section(base, 9)
    bad("processes-trailing.gmonx", build(base[:9] + [(10, base[9][1] + b"\x00")] + base[10:]),
        "sidecar-trailing-bytes", p_at + 12 + 16, "rule 12: PROCESSES")
    u_at = offset_of_section(base, 10)
    bad("unclocked-cut.gmonx", build(base[:10] + [(11, base[10][1][:12])]),
        "eof", u_at + 12 + 8, "rule 8: UNCLOCKED's runtime_ns cut short")
    bad("unclocked-trailing.gmonx", build(base[:10] + [(11, base[10][1] + u32(0))]),
        "sidecar-trailing-bytes", u_at + 12 + 16, "rule 12: UNCLOCKED")
    bad("unclocked-twice.gmonx", full + section(11, base[10][1]),
        "sidecar-duplicate-section", len(full), "rule 7: UNCLOCKED")
    # WINDOW (12): fixed size, and its end not before its start (rule 11).
    w_at = offset_of_section(base, 11)
    bad("window-cut.gmonx", build(base[:11] + [(12, base[11][1][:12])]),
        "eof", w_at + 12 + 8, "rule 8: WINDOW's end cut short")
    bad("window-backwards.gmonx", build(base[:11] + [(12, u64(7) + u64(6))]),
        "bad-value", w_at + 12, "rule 11: a WINDOW that ends before it starts")
    bad("window-twice.gmonx", full + section(12, base[11][1]),
        "sidecar-duplicate-section", len(full), "rule 7: WINDOW")
    ok("window-empty.gmonx", build(base[:11] + [(12, u64(7) + u64(7))]),
       "a WINDOW that ends where it starts (a write at once)")
    # THREAD_CLOCKS (13): a count of 20-byte clocks after `dropped`; rules 7, 8, 9, 11, 12.
    tc = [(13, thread_clocks(0, (42, 5_000_100_000, 5_003_000_000), (43, 5_000_200_000, 5_000_900_000),
                             (43, 5_001_000_000, 5_001_000_000)))]
    with_tc = base + tc
    tc_at = offset_of_section(with_tc, 12)
    ok("thread-clocks.gmonx", build(with_tc),
       "THREAD_CLOCKS: one thread's clock, and another thread armed twice (the second for no time)")
    ok("thread-clocks-dropped.gmonx", build(base + [(13, thread_clocks(3))]),
       "THREAD_CLOCKS with none listed and 3 dropped: an incomplete list")
    bad("thread-clocks-cut.gmonx", build(base + [(13, thread_clocks(0)[:5])]),
        "eof", tc_at + 12, "rule 8: THREAD_CLOCKS' dropped cut short")
    bad("thread-clocks-count-too-large.gmonx",
        build(base + [(13, u64(0) + u32(2) + thread_clocks(0, (42, 1, 2))[12:])]),
        "bad-value", tc_at + 12 + 8, "rule 9: thread clocks")
    bad("thread-clocks-backwards.gmonx",
        build(base + [(13, thread_clocks(0, (42, 1, 2), (43, 9, 8)))]),
        "bad-value", tc_at + 12 + 8 + 4 + 20 + 4, "rule 11: a thread clock that ends before it starts")
    bad("thread-clocks-trailing.gmonx", build(base + [(13, thread_clocks(0, (42, 1, 2)) + b"\x00")]),
        "sidecar-trailing-bytes", tc_at + 12 + 8 + 4 + 20, "rule 12: THREAD_CLOCKS")
    bad("thread-clocks-twice.gmonx", build(with_tc) + section(13, thread_clocks(0)),
        "sidecar-duplicate-section", len(build(with_tc)), "rule 7: THREAD_CLOCKS, the last known kind")
    # Valid: UNCLOCKED before the CLOCK it completes, and without any CLOCK.
    early_u = base[:7] + [base[10], base[7]] + base[8:10]
    ok("unclocked-before-clock.gmonx", build(early_u), "UNCLOCKED before CLOCK: kept for it")
    ok("unclocked-without-clock.gmonx", build(base[:7] + base[8:]),
       "UNCLOCKED without CLOCK: an unknown clock with its two times")

    with open(os.path.join(OUT, "manifest.tsv"), "w") as f:
        f.write("# What a reader must make of every sidecar in this folder (spec/runtime.md §5,\n"
                "# \"Rejections\" and \"Unusual but valid content\"). Written by make-sidecars.py.\n"
                "# result: ok, or the error class. offset: the error's byte offset (hex), - when ok.\n"
                "# main: the index of the main object (the first flagged), - for none.\n")
        f.write("file\tresult\toffset\tmain\tcase\n")
        for name, result, offset, note, main_index in rows:
            f.write("%s\t%s\t%s\t%s\t%s\n" % (name, result, offset, main_index, note))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Compare gmon's C++ demangler with binutils' libiberty on real symbols.

Collects every `_Z` symbol of the given ELF files (default: the QA programs under
/work/qa-scratch/progs/*/prog, the testdata cases, libstdc++ and the C++ programs in
/usr/bin), demangles each with libiberty's `cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI)`
-- the call gprof 2.40 makes, loaded from binutils' own libbfd-2.40 through ctypes -- and
writes "mangled<TAB>expected" rows. `c++filt` uses the same libiberty but adds DMGL_VERBOSE
(it spells `Ss` as `std::basic_string<...>` where gprof prints `std::string`), so it is not
the reference here.

Then it runs gmon-tools' `demangle_cases` test over the rows, which prints the mismatch count.

Usage: scripts/demangle-check.py [--write-cases N] [ELF...]
  --write-cases N   also write testdata/demangle/cases.tsv: up to N rows that gmon prints
                    right, chosen to cover the tricky constructs (literals of every integer
                    type, bool, lambdas, empty packs, substitutions, ...)
"""
import ctypes, glob, os, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)

def elf_files():
    files = sorted(glob.glob("/work/qa-scratch/progs/*/prog"))
    files += sorted(glob.glob(os.path.join(root, "testdata/cases/*/prog")))
    files.append("/usr/lib/x86_64-linux-gnu/libstdc++.so.6")
    for f in sorted(glob.glob("/usr/bin/*")):
        try:
            if not os.path.isfile(f) or os.path.islink(f):
                continue
            with open(f, "rb") as fh:
                if fh.read(4) != b"\x7fELF":
                    continue
            out = subprocess.run(["readelf", "-d", f], capture_output=True, text=True).stdout
            if "libstdc++" in out:
                files.append(f)
        except OSError:
            pass
    return files

def symbols(files):
    syms = set()
    for f in files:
        for args in (["nm", "--defined-only", f], ["nm", "-D", "--defined-only", f]):
            out = subprocess.run(args, capture_output=True, text=True, errors="replace").stdout
            for line in out.splitlines():
                parts = line.split()
                if not parts:
                    continue
                s = parts[-1].split("@")[0]
                if s.startswith("_Z") and "\t" not in s:
                    syms.add(s)
    return sorted(syms)

def main():
    argv = sys.argv[1:]
    write_cases = 0
    if argv[:1] == ["--write-cases"]:
        write_cases = int(argv[1])
        argv = argv[2:]
    files = argv or elf_files()
    syms = symbols(files)
    lib = ctypes.CDLL("/usr/lib/x86_64-linux-gnu/libbfd-2.40-system.so")
    lib.cplus_demangle.restype = ctypes.c_char_p
    lib.cplus_demangle.argtypes = [ctypes.c_char_p, ctypes.c_int]
    DMGL_PARAMS, DMGL_ANSI = 1, 2
    rows = []
    for s in syms:
        d = lib.cplus_demangle(s.encode(), DMGL_PARAMS | DMGL_ANSI)
        rows.append((s, d.decode(errors="replace") if d else s))
    allrows = "/tmp/demangle-check.tsv"
    with open(allrows, "w") as fh:
        for s, d in rows:
            fh.write(f"{s}\t{d}\n")
    print(f"{len(files)} ELF files, {len(rows)} distinct _Z symbols -> {allrows}")
    env = dict(os.environ, DEMANGLE_CASES=allrows, DEMANGLE_MISMATCHES="/tmp/demangle-check.mismatches")
    env.setdefault("CARGO_TARGET_DIR", "/work/targets/gfix")
    r = subprocess.run(["cargo", "test", "-q", "-p", "gmon-tools", "--test", "demangle_cases", "--", "--nocapture"],
                       cwd=root, env=env, capture_output=True, text=True)
    for line in (r.stdout + r.stderr).splitlines():
        if line.startswith("demangle:"):
            print(line)
    if write_cases:
        bad = set()
        if os.path.exists(env["DEMANGLE_MISMATCHES"]):
            bad = {l.split("\t")[0] for l in open(env["DEMANGLE_MISMATCHES"]) if l.strip()}
        keys = ["JE", "Lm", "Lj", "Ll", "Lx", "Ly", "Lb", "Lc", "Li", "UlR", "Ul", "Z", "C1I", "C2I", "sr", "Dp", "li", "RA", "Ss", "So", "Si", "Sd", "NSoC", "NSsC", "NSoD", "TS", "TI", "NKUlS", "NKUlN", "NSdC", "RZ", "DpOT_", "DpOT0_", "DpRT_", "CI2", "_Zli", "XadL_Z", "IFN", "13basic_ostreamI", "13basic_istreamI", "IFNS", "_Function_handlerIFN", "clEvEUlvE", "mOT2_", "UlRT_E_", "XspT", "DpOT0_E2", "IFN2v88internal6ObjectEiE", "EUlOT_E_J", "DpRKT_", "_ZTC", "E0_EES", "PKT_iPKT0_", "IJEEEvPN", "RKNSE_"]
        picked = []
        for k in keys:
            cand = [s for s, _ in rows if k in s]
            cand.sort(key=len)
            # Only rows we print right: the committed table guards what is fixed; the
            # script's count above is the measure of what is not.
            picked += [s for s in cand if s not in bad][:6]
        picked = sorted(set(picked), key=lambda s: (len(s), s))[:write_cases]
        exp = dict(rows)
        with open(os.path.join(root, "testdata/demangle/cases.tsv"), "w") as fh:
            fh.write("# mangled<TAB>libiberty cplus_demangle(DMGL_PARAMS|DMGL_ANSI), written by scripts/demangle-check.py\n")
            for s in picked:
                fh.write(f"{s}\t{exp[s]}\n")
        print(f"wrote {len(picked)} rows to testdata/demangle/cases.tsv")
    return r.returncode

sys.exit(main())

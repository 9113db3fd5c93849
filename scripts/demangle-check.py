#!/usr/bin/env python3
"""Compare gmon's C++ demangler with binutils' libiberty on real symbols.

Collects every `_Z` (C++, legacy Rust) and `_R` (Rust v0) symbol of the given ELF files
(default: the testdata cases, libstdc++ and the C++ programs in /usr/bin), keeping `@version` suffixes, demangles each with
`bfd_demangle(NULL, name, DMGL_PARAMS | DMGL_ANSI)` -- the call gprof 2.40 makes (leading
`.`/`$` and the `@...` suffix set aside, then libiberty's `cplus_demangle`), loaded from
binutils' own libbfd-2.40 through ctypes -- once in the default style and once in the Java
style (`cplus_demangle_set_style(java)` first, as
`gprof --demangle=java` does; libiberty then answers through `java_demangle_v3`), and writes
"mangled<TAB>expected" rows (expected = the mangled name where libiberty gives up). `c++filt`
uses the same libiberty but adds DMGL_VERBOSE (it spells `Ss` as `std::basic_string<...>`
where gprof prints `std::string`), so it is not the reference here.

Then it runs the gmon-demangle crate's `libiberty_cases` test over the rows of each style and
prints the mismatch counts; the rows and the differing rows stay in a fresh directory under
$TMPDIR that the script names. Exit status 0 when every row matches.

Needs binutils (its libbfd-2.40 shared library), python3 and cargo; runs from any directory.

Usage: scripts/demangle-check.py [--all-libs] [--all-styles] [--mutate N] [--write-cases N] [ELF...]
  --all-libs        also every shared library under /usr/lib/x86_64-linux-gnu (LLVM, boost,
                    ICU, ...: about 100,000 more symbols)
  --all-styles      also every defined symbol, C names included, in the gnu-v3, gnat, rust,
                    dlang and none styles (and 100,000 GNAT look-alikes for gnat)
  --mutate N        also N names made by damaging real ones (cut short, a byte changed,
                    inserted or a stretch dropped; seeded, so repeatable): the demangler must
                    give up exactly where libiberty does and print the same where it does not
  --write-cases N   also write testdata/demangle/cases.tsv, cases-java.tsv and cases-gnat.tsv
                    (implies --all-styles): up to N rows each that gmon prints right, chosen to cover the tricky constructs
                    (literals of every integer type, bool, lambdas, empty packs,
                    substitutions, unresolved names, ...)
"""
import ctypes, glob, os, random, subprocess, sys, tempfile

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)

def elf_files():
    files = sorted(glob.glob(os.path.join(root, "testdata/cases/*/prog")))
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

def symbols(files, every=False):
    """The `_Z`/`_R` symbols of `files` (with `every`, all defined symbols: C names too)."""
    syms = set()
    for f in files:
        for args in (["nm", "--defined-only", f], ["nm", "-D", "--defined-only", f]):
            out = subprocess.run(args, capture_output=True, text=True, errors="replace").stdout
            for line in out.splitlines():
                parts = line.split()
                if not parts:
                    continue
                s = parts[-1]
                if "\t" not in s and (every or s.lstrip(".$").startswith(("_Z", "_R"))):
                    syms.add(s)
    return sorted(syms)

KEYS = ["JE", "Lm", "Lj", "Ll", "Lx", "Ly", "Lb", "Lc", "Li", "UlR", "Ul", "Ut", "Z", "C1I", "C2I",
        "sr", "srN", "Dp", "li", "RA", "Ss", "So", "Si", "Sd", "NSoC", "NSsC", "NSoD", "TS", "TI",
        "TV", "TT", "TC", "Th", "Tv", "Tc", "GV", "GR", "TH", "TW", "NKUlS", "NKUlN", "NSdC", "RZ",
        "DpOT_", "DpOT0_", "DpRT_", "CI2", "_Zli", "XadL_Z", "IFN", "13basic_ostreamI",
        "13basic_istreamI", "IFNS", "_Function_handlerIFN", "clEvEUlvE", "mOT2_", "UlRT_E_",
        "XspT", "DpOT0_E2", "IFN2v88internal6ObjectEiE", "EUlOT_E_J", "DpRKT_", "_ZTC",
        "E0_EES", "PKT_iPKT0_", "IJEEEvPN", "RKNSE_", "DT", "Dt", "Da", "Dc", "Dn", "DC", "fp",
        "sZ", "sP", "L_Z", "LZ", "Dv", "cv", "B5cxx11", "B", "M", "A", "Do", "DO", "Dx", "fl",
        "fr", "fL", "fR", "nw", "dt", "pt", "qu", "aa", "ix", "cl", "st", "sz", "at", "ad",
        "Ld", "Lf", "Ln", "Lh", "Ls", "Lt", "La", "Dd", "Ds", "Di", "Du", "K", "V", "r", "O",
        ".constprop", ".isra", ".cold", ".part", ".lto_priv", "_GLOBAL__N", "E_", "d_", "@", "@@",
        "_R", "17h"]

def stress_names():
    """Deep nesting up to libiberty's 1024-byte limit (and just past it): pointers, function
    types, templates, expressions, substitutions and packs. Written into the committed
    tables so that the test also guards the stack and the length limit."""
    names = []
    for n in (100, 500, 1018, 1100):
        names.append("_Z1f" + "P" * n + "i")
        names.append("_Z1f" + "PF" * (n // 2) + "i" + "vE" * (n // 2))
        names.append("_Z1f" + "1aI" * (n // 3) + "i" + "E" * (n // 3))
        names.append("_Z1fIiEvT_" + "S_" * (n // 2))
        names.append("_Z1fILi1EEvAX" + "ngng" * (n // 4) + "Li1EE_i")
        names.append("_ZN" + "1a" * (n // 2) + "E")
        names.append("_Z1fIJ" + "i" * n + "EEvDpT_")
        names.append("_Z1f" + "RA1_" * (n // 4) + "i")
    return names

ADA_TOKENS = ["pkg", "a", "b1", "x_y", "__", "___elabb", "___elabs", "___size", "___alignment",
              "___assign", "___foo", "TK__", "TKB", "TK", "X", "Xnb", "Xb", "SR", "SW", "SI", "SO",
              "SQ", "DF", "DA", "DZ", "_B12s", "_E3s", "_B1", ".3", ".", "Oadd", "Oeq", "One",
              "Onot", "Oxx", "__2", "__1_2", "__3X", "__3Xnb", "E", "P", "N", "S", "_", "1",
              "_ada_", "<", "Z", "9"]

def ada_names(n):
    """GNAT-encoding look-alikes made of the pieces libiberty's ada_demangle reads (seeded)."""
    rnd = random.Random(7)
    out = set()
    while len(out) < n:
        out.add("".join(rnd.choice(ADA_TOKENS) for _ in range(rnd.randint(1, 6))))
    return sorted(out)

def other_styles(files, lib, env):
    """Every defined symbol (C names included) in the styles besides auto and java, plus
    GNAT look-alikes for gnat; returns the gnat rows and the names that differ."""
    every = symbols(files, every=True)
    rc = 0
    gnat = ([], set())
    for style in ("gnu-v3", "gnat", "rust", "dlang", "none"):
        names = every + (ada_names(100000) if style == "gnat" else [])
        lib.cplus_demangle_set_style(lib.cplus_demangle_name_to_style(style.encode()))
        rows = []
        for s in names:
            d = lib.bfd_demangle(None, s.encode(errors="surrogateescape"), 3)
            rows.append((s, d.decode(errors="replace") if d else s))
        r, bad = run_test(rows, style, f"-{style}", env)
        rc = rc or r
        if style == "gnat":
            gnat = (rows, bad)
    lib.cplus_demangle_set_style(lib.cplus_demangle_name_to_style(b"auto"))
    return rc, gnat

def mutations(syms, n):
    rnd = random.Random(20261121)
    alpha = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
    out = set()
    while len(out) < n and syms:
        s = rnd.choice(syms)
        if len(s) < 3:
            continue
        k = rnd.random()
        i = rnd.randrange(2, len(s))
        if k < 0.3:
            s = s[:i]
        elif k < 0.6:
            s = s[:i] + rnd.choice(alpha) + s[i + 1:]
        elif k < 0.8:
            s = s[:i] + rnd.choice(alpha) + s[i:]
        else:
            s = s[:i] + s[rnd.randrange(2, len(s)):]
        out.add(s)
    return sorted(out)

# Created exclusively (mkdtemp), so no name in a shared /tmp can be planted in advance.
WORK = tempfile.mkdtemp(prefix="demangle-check-")

def run_test(rows, style, tag, env_base):
    path = os.path.join(WORK, f"rows{tag}.tsv")
    with open(path, "w") as fh:
        for s, d in rows:
            fh.write(f"{s}\t{d}\n")
    env = dict(env_base, DEMANGLE_CASES=path, DEMANGLE_STYLE=style,
               DEMANGLE_MISMATCHES=os.path.join(WORK, f"mismatches{tag}.tsv"))
    r = subprocess.run(["cargo", "test", "-q", "-p", "gmon-demangle", "--test", "libiberty_cases", "--", "--nocapture"],
                       cwd=root, env=env, capture_output=True, text=True)
    counts = [l for l in (r.stdout + r.stderr).splitlines() if l.startswith("demangle:")]
    for line in counts:
        print(f"{line}   rows: {path}")
    if not counts:
        # The test never reached its count: a build failure or a moved test, never a silent pass.
        sys.stderr.write((r.stdout + r.stderr)[-4000:])
        sys.exit(f"demangle-check: the libiberty_cases test did not run (status {r.returncode})")
    bad = set()
    if os.path.exists(env["DEMANGLE_MISMATCHES"]):
        bad = {l.split("\t")[0] for l in open(env["DEMANGLE_MISMATCHES"]) if l.strip()}
    return r.returncode, bad

def write_cases(rows, bad, n, name, header, extra, keys=KEYS):
    picked = []
    for k in keys:
        cand = [s for s, _ in rows if k in s]
        cand.sort(key=len)
        # Only rows we print right: the committed table guards what is fixed; the
        # script's count above is the measure of what is not.
        picked += [s for s in cand if s not in bad][:6]
    picked = sorted(set(picked), key=lambda s: (len(s), s))[:n]
    exp = dict(rows)
    with open(os.path.join(root, "testdata/demangle", name), "w") as fh:
        fh.write(header)
        for s in picked:
            fh.write(f"{s}\t{exp[s]}\n")
        for s, d in extra:
            fh.write(f"{s}\t{d}\n")
    print(f"wrote {len(picked) + len(extra)} rows to testdata/demangle/{name}")

def main():
    argv = sys.argv[1:]
    write_n = 0
    all_libs = False
    all_styles = False
    mutate = 0
    while argv and argv[0].startswith("--"):
        if argv[0] == "--write-cases":
            write_n = int(argv[1]); argv = argv[2:]
        elif argv[0] == "--mutate":
            mutate = int(argv[1]); argv = argv[2:]
        elif argv[0] == "--all-libs":
            all_libs = True; argv = argv[1:]
        elif argv[0] == "--all-styles":
            all_styles = True; argv = argv[1:]
        else:
            sys.exit(f"unknown option {argv[0]}")
    files = argv or elf_files()
    if all_libs:
        files += sorted(f for f in glob.glob("/usr/lib/x86_64-linux-gnu/**/*.so*", recursive=True)
                        if os.path.isfile(f) and not os.path.islink(f))
    syms = symbols(files)
    if mutate:
        syms += mutations(syms, mutate)
    bfd = sorted(glob.glob("/usr/lib/*/libbfd-2.40*.so") + glob.glob("/usr/lib/libbfd-2.40*.so"))
    if not bfd:
        sys.exit("demangle-check: binutils' libbfd-2.40 shared library is not installed (apt-get install binutils)")
    lib = ctypes.CDLL(bfd[0])
    lib.bfd_demangle.restype = ctypes.c_char_p
    lib.bfd_demangle.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    lib.cplus_demangle_name_to_style.argtypes = [ctypes.c_char_p]
    lib.cplus_demangle_set_style.argtypes = [ctypes.c_int]
    DMGL_PARAMS, DMGL_ANSI = 1, 2
    results = {}
    stress = {}
    for style in ("auto", "java"):
        lib.cplus_demangle_set_style(lib.cplus_demangle_name_to_style(style.encode()))
        def expect(names):
            rows = []
            for s in names:
                d = lib.bfd_demangle(None, s.encode(), DMGL_PARAMS | DMGL_ANSI)
                rows.append((s, d.decode(errors="replace") if d else s))
            return rows
        results[style] = expect(syms)
        stress[style] = expect(stress_names())
    lib.cplus_demangle_set_style(lib.cplus_demangle_name_to_style(b"auto"))
    print(f"{len(files)} ELF files, {len(syms)} distinct _Z/_R symbols" + (f" ({mutate} damaged)" if mutate else ""))
    env = dict(os.environ)
    rc_auto, bad_auto = run_test(results["auto"], "auto", "", env)
    rc_java, bad_java = run_test(results["java"], "java", "-java", env)
    rc_stress, bad_stress = run_test(stress["auto"], "auto", "-stress", env)
    rc_styles = 0
    if all_styles or write_n:
        rc_styles, (gnat_rows, gnat_bad) = other_styles(files, lib, env)
    if write_n:
        write_cases(results["auto"], bad_auto, write_n, "cases.tsv",
                    "# mangled<TAB>bfd_demangle(NULL, mangled, DMGL_PARAMS|DMGL_ANSI) from libbfd 2.40, written by scripts/demangle-check.py\n",
                    [r for r in stress["auto"] if r[0] not in bad_stress])
        write_cases(results["java"], bad_java, write_n, "cases-java.tsv",
                    "# mangled<TAB>bfd_demangle(NULL, mangled, DMGL_PARAMS|DMGL_ANSI) from libbfd 2.40 in the java style (gprof --demangle=java), written by scripts/demangle-check.py\n",
                    [])
        # GNAT: the real names the decoder changes (`buf.4`) and the look-alikes.
        rows = [(s, d) for s, d in gnat_rows if d != f"<{s}>" and d != s]
        write_cases(rows, gnat_bad, write_n, "cases-gnat.tsv",
                    "# mangled<TAB>bfd_demangle(NULL, mangled, DMGL_PARAMS|DMGL_ANSI) from libbfd 2.40 in the gnat style (gprof --demangle=gnat), written by scripts/demangle-check.py\n",
                    [], ADA_TOKENS)
    print(f"rows and mismatches: {WORK}")
    return rc_auto or rc_java or rc_stress or rc_styles

sys.exit(main())

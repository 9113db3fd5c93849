//! Symbol demangling exactly as GNU binutils prints it: `bfd_demangle(abfd, name, DMGL_ANSI |
//! DMGL_PARAMS)`, the call GNU gprof makes for every function name.
//!
//! ```
//! use gmon_demangle::{Style, demangle};
//! assert_eq!(demangle("_ZN4geom5Shape4areaEv", Style::Auto).as_deref(), Some("geom::Shape::area()"));
//! assert_eq!(demangle("_ZSt4swapIiEvRT_S1_", Style::Auto).as_deref(), Some("void std::swap<int>(int&, int&)"));
//! assert_eq!(demangle("main", Style::Auto), None);
//! ```
//!
//! Other demanglers print C++ names in their own way (spacing, `std::string` against
//! `std::basic_string<char, ...>`, when to give up): a tool that must print what gprof, `nm -C`
//! or `objdump -C` print needs libiberty's text. The crate's tests check it against rows written
//! from libiberty itself (`testdata/demangle/*.tsv`, made by `scripts/demangle-check.py`, which
//! also compares it with libiberty over every symbol of a system's C++ binaries).
//!
//! libiberty's "auto" style tries the Rust demangler first (legacy `_ZN…17h<hash>E` and v0
//! `_R…`), then the Itanium C++ ABI demangler (`itanium`, which prints exactly libiberty's
//! text). Without `DMGL_VERBOSE` the Rust hash and crate disambiguators are left out. Leading
//! `.`s and `$`s are skipped and a `@version` suffix is demangled separately and appended again.
//! When nothing demangles, [`demangle`] answers `None` and a caller prints the raw name.
//!
//! The style comes from gprof's `--demangle=STYLE`, as libiberty's `cplus_demangle` applies it:
//! `gnu-v3` is the C++ demangler alone, `java` the C++ demangler with Java output
//! (`java_demangle_v3`: `.` between scopes, no `*`, `unsigned` for `unsigned int`, the return
//! type after the parameters), `rust` the Rust demangler alone, `gnat` the Ada decoder, and
//! `dlang` and `none` demangle nothing that a C or C++ program contains.

#![deny(missing_docs)]

mod itanium;

/// The demangling styles gprof's `--demangle=STYLE` accepts (libiberty's style names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Style {
    /// `auto`: Rust, then GNU v3 C++.
    #[default]
    Auto,
    /// `gnu-v3`: Itanium C++ only.
    GnuV3,
    /// `rust`: Rust only.
    Rust,
    /// `gnat`: GNAT Ada encoding (lower-case identifiers, `__` between units); anything else is
    /// printed as `<name>`, as libiberty's `ada_demangle` does.
    Gnat,
    /// `java`: Itanium names in libiberty's Java rendering (`geom.Shape.area(double)`,
    /// `max<int>(int, int)int`).
    Java,
    /// `dlang`, `none`: accepted; C and C++ names are printed raw (`dlang` only reads `_D`
    /// names, which C and C++ programs do not have).
    Other,
}

impl Style {
    /// libiberty's `cplus_demangle_name_to_style`; `None` for an unknown style name.
    pub fn from_name(name: &str) -> Option<Style> {
        match name {
            "auto" => Some(Style::Auto),
            "gnu-v3" => Some(Style::GnuV3),
            "rust" => Some(Style::Rust),
            "gnat" => Some(Style::Gnat),
            "java" => Some(Style::Java),
            "dlang" | "none" => Some(Style::Other),
            _ => None,
        }
    }
}

/// Demangles `name` like `bfd_demangle`; `None` when it is not a mangled name.
pub fn demangle(name: &str, style: Style) -> Option<String> {
    // Every leading `.` and `$` (PowerPC64 and XCOFF function descriptors), as bfd does.
    let rest = name.trim_start_matches(['.', '$']);
    let pre = &name[..name.len() - rest.len()];
    let (base, suffix) = match rest.find('@') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, ""),
    };
    let d = demangle_plain(base, style)?;
    Some(format!("{pre}{d}{suffix}"))
}

fn demangle_plain(name: &str, style: Style) -> Option<String> {
    if style == Style::Gnat {
        return Some(demangle_gnat(name));
    }
    if matches!(style, Style::Auto | Style::Rust) {
        if let Some(d) = demangle_rust(name) {
            return Some(d);
        }
        if style == Style::Rust {
            return None;
        }
    }
    match style {
        Style::Auto | Style::GnuV3 => itanium::demangle(name, false),
        Style::Java => itanium::demangle(name, true),
        _ => None,
    }
}

/// Ada operator names (`Oadd` = `"+"`).
const ADA_OPERATORS: [(&str, &str); 19] = [
    ("Oabs", "abs"),
    ("Oand", "and"),
    ("Omod", "mod"),
    ("Onot", "not"),
    ("Oor", "or"),
    ("Orem", "rem"),
    ("Oxor", "xor"),
    ("Oeq", "="),
    ("One", "/="),
    ("Olt", "<"),
    ("Ole", "<="),
    ("Ogt", ">"),
    ("Oge", ">="),
    ("Oadd", "+"),
    ("Osubtract", "-"),
    ("Oconcat", "&"),
    ("Omultiply", "*"),
    ("Odivide", "/"),
    ("Oexpon", "**"),
];

/// Ada attribute subprograms after `___`.
const ADA_SPECIALS: [(&str, &str); 5] = [
    ("_elabb", "'Elab_Body"),
    ("_elabs", "'Elab_Spec"),
    ("_size", "'Size"),
    ("_alignment", "'Alignment"),
    ("_assign", ".\":=\""),
];

/// libiberty's `ada_demangle` (the GNAT encoding of gcc/ada/exp_dbug.ads): an optional
/// `_ada_` prefix, lower-case identifiers, `__` between units printed as `.`, operator names
/// (`Oadd` = `"+"`), overloading numbers, task, protected, stream and controlled-type
/// suffixes, and `.N` nested-subprogram numbers dropped. Anything else is printed in angle
/// brackets (without the `_ada_`).
fn demangle_gnat(name: &str) -> String {
    let mangled = name.strip_prefix("_ada_").unwrap_or(name);
    match ada_decode(mangled.as_bytes()) {
        Some(d) => String::from_utf8_lossy(&d).into_owned(),
        None if mangled.starts_with('<') => mangled.to_string(),
        None => format!("<{mangled}>"),
    }
}

/// The decoding proper; `None` where libiberty gives up ("unknown").
fn ada_decode(m: &[u8]) -> Option<Vec<u8>> {
    let at = |i: usize| m.get(i).copied().unwrap_or(0);
    let lower = |c: u8| c.is_ascii_lowercase();
    let digit = |c: u8| c.is_ascii_digit();
    if !lower(at(0)) {
        return None;
    }
    let mut d = Vec::with_capacity(m.len() + 8);
    let mut p = 0;
    loop {
        // An entity name: a lower-case identifier or an operator.
        if lower(at(p)) {
            loop {
                d.push(at(p));
                p += 1;
                let c = at(p);
                if !(lower(c) || digit(c) || (c == b'_' && (lower(at(p + 1)) || digit(at(p + 1)))))
                {
                    break;
                }
            }
        } else if at(p) == b'O' {
            let rest = m.get(p..)?;
            let &(code, op) = ADA_OPERATORS
                .iter()
                .find(|(code, _)| rest.starts_with(code.as_bytes()))?;
            p += code.len();
            d.push(b'"');
            d.extend_from_slice(op.as_bytes());
            d.push(b'"');
        } else {
            return None;
        }
        // Upper-case suffixes.
        if at(p) == b'T' && at(p + 1) == b'K' {
            if at(p + 2) == b'B' && at(p + 3) == 0 {
                break;
            } else if at(p + 2) == b'_' && at(p + 3) == b'_' {
                p += 4;
                d.push(b'.');
                continue;
            }
            return None;
        }
        if at(p) == b'E' && at(p + 1) == 0 {
            return None;
        }
        if matches!(at(p), b'P' | b'N') && at(p + 1) == 0 {
            break;
        }
        if at(p) == b'S' && at(p + 1) == 0 {
            return None;
        }
        if at(p) == b'X' {
            p += 1;
            while matches!(at(p), b'n' | b'b') {
                p += 1;
            }
        }
        if at(p) == b'S' && at(p + 1) != 0 && matches!(at(p + 2), b'_' | 0) {
            let attr = match at(p + 1) {
                b'R' => "'Read",
                b'W' => "'Write",
                b'I' => "'Input",
                b'O' => "'Output",
                _ => return None,
            };
            p += 2;
            d.extend_from_slice(attr.as_bytes());
        } else if at(p) == b'D' {
            let op = match at(p + 1) {
                b'F' => ".Finalize",
                b'A' => ".Adjust",
                _ => return None,
            };
            d.extend_from_slice(op.as_bytes());
            break;
        }
        if at(p) == b'_' {
            if at(p + 1) == b'_' {
                p += 2;
                if digit(at(p)) {
                    // An overloading number.
                    loop {
                        p += 1;
                        if !(digit(at(p)) || (at(p) == b'_' && digit(at(p + 1)))) {
                            break;
                        }
                    }
                    if at(p) == b'X' {
                        p += 1;
                        while matches!(at(p), b'n' | b'b') {
                            p += 1;
                        }
                    }
                } else if at(p) == b'_' && at(p + 1) != b'_' {
                    let rest = m.get(p..)?;
                    let &(_, attr) = ADA_SPECIALS
                        .iter()
                        .find(|(code, _)| rest.starts_with(code.as_bytes()))?;
                    d.extend_from_slice(attr.as_bytes());
                    break;
                } else {
                    d.push(b'.');
                    continue;
                }
            } else if matches!(at(p + 1), b'B' | b'E') {
                // An entry body or barrier evaluation.
                p += 2;
                while digit(at(p)) {
                    p += 1;
                }
                if at(p) == b's' && at(p + 1) == 0 {
                    break;
                }
                return None;
            } else {
                return None;
            }
        }
        if at(p) == b'.' && digit(at(p + 1)) {
            // A nested subprogram's number.
            p += 2;
            while digit(at(p)) {
                p += 1;
            }
        }
        if at(p) == 0 {
            break;
        }
        return None;
    }
    Some(d)
}

/// libiberty only takes a `_ZN…E` name for Rust when its last component is `h` + 16
/// lower-case hex digits (at least 5 distinct ones), after dropping a `.suffix` behind the
/// final `E` (`.llvm.1234`). Returns the name without the suffix.
fn rust_legacy_core(name: &str) -> Option<&str> {
    if !name.starts_with("_ZN") {
        return None;
    }
    // Bytes, not `str` slices: a name may hold any bytes (shown lossily as UTF-8).
    let b = name.as_bytes();
    if !b
        .iter()
        .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.' | b':' | b'@'))
    {
        return None;
    }
    // Back to the last `E` that ends the name or is followed by a `.`.
    let mut len = b.len();
    let mut dot_suffix = true;
    while len > 0 && !(dot_suffix && b[len - 1] == b'E') {
        dot_suffix = b[len - 1] == b'.';
        len -= 1;
    }
    if len == 0 {
        return None;
    }
    let body = &b[..len - 1];
    let tail = body.get(body.len().checked_sub(19)?..)?;
    if body.len() <= 19 || !tail.starts_with(b"17h") {
        return None;
    }
    let mut seen = 0u16;
    for &c in &tail[3..] {
        let nibble = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            _ => return None,
        };
        seen |= 1 << nibble;
    }
    (seen.count_ones() >= 5).then(|| name.get(..len)).flatten()
}

/// libiberty's Rust demangler: legacy `_ZN…17h<hash>E` names and v0 `_R…` names, each without
/// its `.suffix` (v0 names end at the first `.`), printed without hash or disambiguators.
fn demangle_rust(name: &str) -> Option<String> {
    let core = if name.starts_with("_R") {
        let core = &name[..name.find('.').unwrap_or(name.len())];
        if !core.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
            return None;
        }
        core
    } else {
        rust_legacy_core(name)?
    };
    let d = rustc_demangle::try_demangle(core).ok()?;
    Some(format!("{d:#}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpp_and_plain() {
        assert_eq!(
            demangle("_Z4worki", Style::Auto).as_deref(),
            Some("work(int)")
        );
        assert_eq!(demangle("main", Style::Auto), None);
        assert_eq!(
            demangle("_ZL6helperi.constprop.0", Style::Auto).as_deref(),
            Some("helper(int) [clone .constprop.0]")
        );
        assert_eq!(
            demangle("$.._Z1fv@plt", Style::Auto).as_deref(),
            Some("$..f()@plt")
        );
    }

    #[test]
    fn qualifier_after_nested_name() {
        assert_eq!(
            demangle("_ZN1x1fEPKNS_1aERNS0_1bE", Style::Auto).as_deref(),
            Some("x::f(x::a const*, x::a::b&)")
        );
        assert_eq!(
            demangle(
                "_ZNK10__cxxabiv120__si_class_type_info11__do_upcastEPKNS_17__class_type_infoEPKvRNS1_15__upcast_resultE",
                Style::Auto
            )
            .as_deref(),
            Some(
                "__cxxabiv1::__si_class_type_info::__do_upcast(__cxxabiv1::__class_type_info const*, void const*, __cxxabiv1::__class_type_info::__upcast_result&) const"
            )
        );
    }

    #[test]
    fn special_names_in_words() {
        let d = |n: &str| demangle(n, Style::Auto);
        assert_eq!(d("_ZTV1A").as_deref(), Some("vtable for A"));
        assert_eq!(
            d("_ZThn8_N1B1fEv").as_deref(),
            Some("non-virtual thunk to B::f()")
        );
        assert_eq!(
            d("_ZTv0_n24_N1B1fEv").as_deref(),
            Some("virtual thunk to B::f()")
        );
        assert_eq!(
            d("_ZTISt6vectorIiSaIiEE").as_deref(),
            Some("typeinfo for std::vector<int, std::allocator<int> >")
        );
        assert_eq!(d("_Z1lDn").as_deref(), Some("l(decltype(nullptr))"));
    }

    #[test]
    fn odd_bytes_do_not_panic() {
        for n in [
            "_ZN\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}E",
            "_Z\u{fffd}",
            ".",
            "$",
            "@",
            "_ZTh",
            "_ZTv1_",
            "_ZTV",
            "_ZN1\u{e9}C1IiEEi",
            "_ZN2a\u{e9}C1IiEEi",
            "_Z1fIJ\u{e9}EEvDpOT_",
            "_Z2f\u{e9}IJiEEvDpOT_",
            "_ZN1aC1IJEEEDpOT_",
            "_Z1fIJEEvDpOT_",
        ] {
            let _ = demangle(n, Style::Auto);
            let _ = demangle(n, Style::Gnat);
        }
    }

    #[test]
    fn gnat_names() {
        let d = |n: &str| demangle(n, Style::Gnat);
        assert_eq!(d("frame_dummy").as_deref(), Some("frame_dummy"));
        assert_eq!(d("pkg__sub__proc").as_deref(), Some("pkg.sub.proc"));
        assert_eq!(d("_init").as_deref(), Some("<_init>"));
        assert_eq!(d("_Z3mixi").as_deref(), Some("<_Z3mixi>"));
        assert_eq!(d("buf.4").as_deref(), Some("buf"));
        assert_eq!(d("_ada_Foo").as_deref(), Some("<Foo>"));
        assert_eq!(d("pkg__Oadd").as_deref(), Some("pkg.\"+\""));
        assert_eq!(d("pkg__f__2").as_deref(), Some("pkg.f"));
        assert_eq!(d("pkg___elabb").as_deref(), Some("pkg'Elab_Body"));
    }

    #[test]
    fn rust_hash_is_lower_hex_with_five_digits() {
        assert_eq!(
            demangle("_ZN7mycrate3foo17h001122334455D677E", Style::Auto).as_deref(),
            Some("mycrate::foo::h001122334455D677")
        );
        assert_eq!(
            demangle("_ZN7mycrate3foo17h0000111122223333E", Style::Auto).as_deref(),
            Some("mycrate::foo::h0000111122223333")
        );
    }

    #[test]
    fn rust_suffixes_are_dropped() {
        let d = |n: &str| demangle(n, Style::Auto);
        assert_eq!(
            d("_ZN4core3fmt5write17h0123456789abcdefE.llvm.1234").as_deref(),
            Some("core::fmt::write")
        );
        assert_eq!(d("_RNvC3foo3bar.llvm.123").as_deref(), Some("foo::bar"));
    }

    #[test]
    fn rust_without_hash() {
        assert_eq!(
            demangle("_ZN4core3fmt5write17h0123456789abcdefE", Style::Auto).as_deref(),
            Some("core::fmt::write")
        );
    }
}

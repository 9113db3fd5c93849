//! An Itanium C++ ABI demangler that prints what binutils' libiberty prints.
//!
//! gprof shows `cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI)` (or the Java rendering with
//! `--demangle=java`), and sorts by it, so the text must match libiberty byte for byte, including
//! its quirks: `> >` between closing brackets, integer literals with C suffixes, the return
//! type of a template function, `{lambda(auto:1)#1}`, a reference to a template parameter that
//! collapses, and so on. Matching another demangler's output after the fact proved fragile, so
//! this module works the way libiberty's `cp-demangle.c` is documented to work: the name is
//! first parsed into a tree of components (with the substitution table of the ABI), then the
//! tree is printed with a stack of pending type modifiers (so that `int (*f(long))(char)` and
//! `char const (&)[4]` come out in declarator order) and a stack of the templates whose
//! parameters are in scope. The component kinds and the printing rules follow libiberty's
//! published behaviour; the code is our own.
//!
//! The pieces: `ast` (the component kinds and the arena's node), `tables` (the ABI's builtin
//! types, operators and standard abbreviations), `parser` (mangled name → components, with the
//! substitution table), `printer` (components → text).

mod ast;
mod parser;
mod printer;
mod tables;

use ast::K;
use parser::{MAX_NAME_LEN, Parser, parse_top};
use printer::{JAVA, Printer, RET_POSTFIX};

/// Demangles an Itanium C++ name (`_Z…`, or `_GLOBAL_[._$][ID]_…`) as libiberty's
/// `cplus_demangle_v3` with `DMGL_PARAMS` does, or as `java_demangle_v3` when `java` is set.
/// `None` when libiberty would not demangle it.
pub fn demangle(name: &str, java: bool) -> Option<String> {
    let b = name.as_bytes();
    let global = if b.starts_with(b"_Z") {
        None
    } else if b.starts_with(b"_GLOBAL_")
        && matches!(b.get(8), Some(b'.' | b'_' | b'$'))
        && matches!(b.get(9), Some(b'D' | b'I'))
        && b.get(10) == Some(&b'_')
    {
        Some(if b[9] == b'I' {
            K::GlobalConstructors
        } else {
            K::GlobalDestructors
        })
    } else {
        return None;
    };
    if b.len() > MAX_NAME_LEN {
        return None;
    }
    let mut p = Parser::new(b, java);
    let mut top = parse_top(&mut p, global);
    if top.is_none() && p.unresolved_name_state == -1 {
        // libiberty reads an ambiguous `sr` the old way when the new way fails.
        p = Parser::new(b, java);
        p.unresolved_name_state = 0;
        top = parse_top(&mut p, global);
    }
    let top = top?;
    let opts = if java { JAVA | RET_POSTFIX } else { 0 };
    let mut pr = Printer::new(&p.nodes);
    pr.comp(opts, Some(top));
    if pr.failed {
        return None;
    }
    // A Java `__U<hex>_` escape can decode to NUL, where libiberty's C string ends.
    if let Some(nul) = pr.out.iter().position(|&c| c == 0) {
        pr.out.truncate(nul);
    }
    Some(match String::from_utf8(pr.out) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::demangle;

    #[test]
    fn plain_and_java() {
        let d = |s: &str| demangle(s, false);
        let j = |s: &str| demangle(s, true);
        assert_eq!(d("_Z4worki").as_deref(), Some("work(int)"));
        assert_eq!(
            d("_Z12accumulate_nIdET_S0_j").as_deref(),
            Some("double accumulate_n<double>(double, unsigned int)")
        );
        assert_eq!(
            j("_Z12accumulate_nIdET_S0_j").as_deref(),
            Some("accumulate_n<double>(double, unsigned)double")
        );
        assert_eq!(
            j("_ZN4geom5ShapeD1Ev").as_deref(),
            Some("geom.Shape.~Shape()")
        );
        assert_eq!(
            j("_ZN12_GLOBAL__N_16helperEm").as_deref(),
            Some("(anonymous namespace).helper(unsigned long)")
        );
        assert_eq!(d("_ZL3foo.lto_priv.0"), None);
        assert_eq!(
            d("_GLOBAL__I_abc").as_deref(),
            Some("global constructors keyed to abc")
        );
        let long = format!("_Z1f{}", "i".repeat(1100));
        assert_eq!(d(&long), None);
        assert_eq!(j("_ZN1a6b__U_1E").as_deref(), Some("a.b"));
        assert_eq!(j("_ZN1a8b__U41_cE").as_deref(), Some("a.bAc"));
    }

    #[test]
    fn declarators_and_literals() {
        let d = |s: &str| demangle(s, false);
        assert_eq!(d("_Z1fPFilE").as_deref(), Some("f(int (*)(long))"));
        assert_eq!(
            d("_Z1fIJidEEvDpT_").as_deref(),
            Some("void f<int, double>(int, double)")
        );
        assert_eq!(d("_Z1fILm500EEvv").as_deref(), Some("void f<500ul>()"));
        assert_eq!(d("_Z1fILb1EEvv").as_deref(), Some("void f<true>()"));
    }
}

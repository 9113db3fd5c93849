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

use std::fmt::Write as _;

/// Index of a component in the parser's arena.
type Id = u32;

/// Print option: Java rendering (`.` between scopes, no `*`, Java names of builtin types).
const JAVA: u8 = 1;
/// Print option: the return type of a function type after its parameters.
const RET_POSTFIX: u8 = 2;
/// Print option: no return type at all (never set by gprof; kept so the rules read as written).
const RET_DROP: u8 = 4;

/// libiberty rejects names whose component budget (two per byte) exceeds its recursion limit.
const MAX_NAME_LEN: usize = 1024;
/// libiberty's limit on nested function types while parsing.
const MAX_FUNCTION_NESTING: u32 = 2048;
/// libiberty's limit on nested printing calls.
const MAX_PRINT_RECURSION: u32 = 1024;
/// Our own bound on the parser's recursion (libiberty has none besides the function-type one).
/// A name of at most `MAX_NAME_LEN` bytes nests at most two levels per byte, so this never
/// cuts a name libiberty reads; it only bounds the stack (the deepest 1024-byte names need
/// about 256 KiB in a release build).
const MAX_PARSE_DEPTH: u32 = 2 * MAX_NAME_LEN as u32 + 16;
/// Our own cap on the printed text: a pack expanded inside a pack can multiply a short name.
const MAX_OUTPUT: usize = 1 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum K {
    Name,
    QualName,
    LocalName,
    TypedName,
    TaggedName,
    Template,
    TemplateParam,
    FunctionParam,
    Ctor,
    Dtor,
    Vtable,
    Vtt,
    ConstructionVtable,
    Typeinfo,
    TypeinfoName,
    TypeinfoFn,
    Thunk,
    VirtualThunk,
    CovariantThunk,
    JavaClass,
    Guard,
    TlsInit,
    TlsWrapper,
    Reftemp,
    HiddenAlias,
    SubStd,
    Restrict,
    Volatile,
    Const,
    RestrictThis,
    VolatileThis,
    ConstThis,
    ReferenceThis,
    RvalueReferenceThis,
    TransactionSafe,
    Noexcept,
    ThrowSpec,
    VendorTypeQual,
    Pointer,
    Reference,
    RvalueReference,
    Complex,
    Imaginary,
    BuiltinType,
    VendorType,
    FunctionType,
    ArrayType,
    PtrmemType,
    VectorType,
    ArgList,
    TemplateArgList,
    TparmObj,
    InitializerList,
    Operator,
    ExtendedOperator,
    Cast,
    Conversion,
    Nullary,
    Unary,
    Binary,
    BinaryArgs,
    Trinary,
    TrinaryArg1,
    TrinaryArg2,
    Literal,
    LiteralNeg,
    Number,
    Decltype,
    GlobalConstructors,
    GlobalDestructors,
    Lambda,
    DefaultArg,
    UnnamedType,
    TransactionClone,
    NontransactionClone,
    PackExpansion,
    Clone,
    ExtendedBuiltin,
    StructuredBinding,
    ModuleName,
    ModulePartition,
    ModuleEntity,
}

/// The qualifiers that belong to a member function (`this`) rather than to a type.
fn is_fnqual(k: K) -> bool {
    matches!(
        k,
        K::RestrictThis
            | K::VolatileThis
            | K::ConstThis
            | K::ReferenceThis
            | K::RvalueReferenceThis
            | K::TransactionSafe
            | K::Noexcept
            | K::ThrowSpec
    )
}

/// One component: a kind, up to two children, and a text or number payload (a name's bytes,
/// a builtin type's or operator's table index, a lambda's number, ...).
#[derive(Clone, Copy, Debug)]
struct Node<'a> {
    k: K,
    l: Option<Id>,
    r: Option<Id>,
    s: &'a [u8],
    n: i64,
}

/// How a builtin type prints as a literal's type.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lit {
    Default,
    Int,
    Unsigned,
    Long,
    UnsignedLong,
    LongLong,
    UnsignedLongLong,
    Bool,
    Float,
    Void,
}

/// Builtin types: the C++ name, the Java name and the literal style. Indexes 0..26 are the
/// one-letter codes `a`..`z` (empty names are codes that are not builtin types).
const BUILTINS: [(&str, &str, Lit); 35] = [
    ("signed char", "signed char", Lit::Default),
    ("bool", "boolean", Lit::Bool),
    ("char", "byte", Lit::Default),
    ("double", "double", Lit::Float),
    ("long double", "long double", Lit::Float),
    ("float", "float", Lit::Float),
    ("__float128", "__float128", Lit::Float),
    ("unsigned char", "unsigned char", Lit::Default),
    ("int", "int", Lit::Int),
    ("unsigned int", "unsigned", Lit::Unsigned),
    ("", "", Lit::Default),
    ("long", "long", Lit::Long),
    ("unsigned long", "unsigned long", Lit::UnsignedLong),
    ("__int128", "__int128", Lit::Default),
    ("unsigned __int128", "unsigned __int128", Lit::Default),
    ("", "", Lit::Default),
    ("", "", Lit::Default),
    ("", "", Lit::Default),
    ("short", "short", Lit::Default),
    ("unsigned short", "unsigned short", Lit::Default),
    ("", "", Lit::Default),
    ("void", "void", Lit::Void),
    ("wchar_t", "char", Lit::Default),
    ("long long", "long", Lit::LongLong),
    (
        "unsigned long long",
        "unsigned long long",
        Lit::UnsignedLongLong,
    ),
    ("...", "...", Lit::Default),
    ("decimal32", "decimal32", Lit::Default),
    ("decimal64", "decimal64", Lit::Default),
    ("decimal128", "decimal128", Lit::Default),
    ("half", "half", Lit::Float),
    ("char8_t", "char8_t", Lit::Default),
    ("char16_t", "char16_t", Lit::Default),
    ("char32_t", "char32_t", Lit::Default),
    ("decltype(nullptr)", "decltype(nullptr)", Lit::Default),
    ("std::bfloat16_t", "std::bfloat16_t", Lit::Float),
];
const NULLPTR_BUILTIN: i64 = 33;
const BFLOAT16_BUILTIN: i64 = 34;

/// Operators: code, printed name, operand count.
const OPERATORS: [(&[u8; 2], &str, u8); 72] = [
    (b"aN", "&=", 2),
    (b"aS", "=", 2),
    (b"aa", "&&", 2),
    (b"ad", "&", 1),
    (b"an", "&", 2),
    (b"at", "alignof ", 1),
    (b"aw", "co_await ", 1),
    (b"az", "alignof ", 1),
    (b"cc", "const_cast", 2),
    (b"cl", "()", 2),
    (b"cm", ",", 2),
    (b"co", "~", 1),
    (b"dV", "/=", 2),
    (b"dX", "[...]=", 3),
    (b"da", "delete[] ", 1),
    (b"dc", "dynamic_cast", 2),
    (b"de", "*", 1),
    (b"di", "=", 2),
    (b"dl", "delete ", 1),
    (b"ds", ".*", 2),
    (b"dt", ".", 2),
    (b"dv", "/", 2),
    (b"dx", "]=", 2),
    (b"eO", "^=", 2),
    (b"eo", "^", 2),
    (b"eq", "==", 2),
    (b"fL", "...", 3),
    (b"fR", "...", 3),
    (b"fl", "...", 2),
    (b"fr", "...", 2),
    (b"ge", ">=", 2),
    (b"gs", "::", 1),
    (b"gt", ">", 2),
    (b"ix", "[]", 2),
    (b"lS", "<<=", 2),
    (b"le", "<=", 2),
    (b"li", "operator\"\" ", 1),
    (b"ls", "<<", 2),
    (b"lt", "<", 2),
    (b"mI", "-=", 2),
    (b"mL", "*=", 2),
    (b"mi", "-", 2),
    (b"ml", "*", 2),
    (b"mm", "--", 1),
    (b"na", "new[]", 3),
    (b"ne", "!=", 2),
    (b"ng", "-", 1),
    (b"nt", "!", 1),
    (b"nw", "new", 3),
    (b"oR", "|=", 2),
    (b"oo", "||", 2),
    (b"or", "|", 2),
    (b"pL", "+=", 2),
    (b"pl", "+", 2),
    (b"pm", "->*", 2),
    (b"pp", "++", 1),
    (b"ps", "+", 1),
    (b"pt", "->", 2),
    (b"qu", "?", 3),
    (b"rM", "%=", 2),
    (b"rS", ">>=", 2),
    (b"rc", "reinterpret_cast", 2),
    (b"rm", "%", 2),
    (b"rs", ">>", 2),
    (b"sP", "sizeof...", 1),
    (b"sZ", "sizeof...", 1),
    (b"sc", "static_cast", 2),
    (b"ss", "<=>", 2),
    (b"st", "sizeof ", 1),
    (b"sz", "sizeof ", 1),
    (b"tr", "throw", 0),
    (b"tw", "throw ", 1),
];

/// An operator node's table entry (its index is checked when the node is made).
fn op_info(n: i64) -> (&'static [u8; 2], &'static str, u8) {
    usize::try_from(n)
        .ok()
        .and_then(|i| OPERATORS.get(i).copied())
        .unwrap_or((b"  ", " ", 0))
}

/// The standard abbreviations: code, short text, full text (before a constructor or
/// destructor), and the name a constructor or destructor of it takes.
const STD_SUBS: [(u8, &str, &str, &str); 7] = [
    (b't', "std", "std", ""),
    (b'a', "std::allocator", "std::allocator", "allocator"),
    (
        b'b',
        "std::basic_string",
        "std::basic_string",
        "basic_string",
    ),
    (
        b's',
        "std::string",
        "std::basic_string<char, std::char_traits<char>, std::allocator<char> >",
        "basic_string",
    ),
    (
        b'i',
        "std::istream",
        "std::basic_istream<char, std::char_traits<char> >",
        "basic_istream",
    ),
    (
        b'o',
        "std::ostream",
        "std::basic_ostream<char, std::char_traits<char> >",
        "basic_ostream",
    ),
    (
        b'd',
        "std::iostream",
        "std::basic_iostream<char, std::char_traits<char> >",
        "basic_iostream",
    ),
];

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

/// Parses the whole name; `None` unless every byte is used.
fn parse_top(p: &mut Parser<'_>, global: Option<K>) -> Option<Id> {
    let top = match global {
        None => p.mangled_name(true),
        Some(k) => {
            p.pos = 11;
            let inner = if p.s.get(11..13) == Some(b"_Z".as_slice()) {
                p.pos = 13;
                p.encoding(false)
            } else {
                p.name_node(p.s.get(11..)?)
            };
            p.pos = p.s.len();
            p.comp(k, inner, None)
        }
    };
    let top = top?;
    (p.pos == p.s.len()).then_some(top)
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    nodes: Vec<Node<'a>>,
    max_nodes: usize,
    subs: Vec<Id>,
    max_subs: usize,
    last_name: Option<Id>,
    is_expression: bool,
    is_conversion: bool,
    function_nesting: u32,
    depth: u32,
    java: bool,
    /// How `sr` is read: 1 = try the current `sr <qualifier-level>+ E` form first (set to -1
    /// once tried, so that a failed parse is retried), 0 = the old `sr <type> <name>` form.
    unresolved_name_state: i8,
}

fn is_digit(c: u8) -> bool {
    c.is_ascii_digit()
}
fn is_lower(c: u8) -> bool {
    c.is_ascii_lowercase()
}
fn is_upper(c: u8) -> bool {
    c.is_ascii_uppercase()
}

impl<'a> Parser<'a> {
    fn new(s: &'a [u8], java: bool) -> Parser<'a> {
        Parser {
            s,
            pos: 0,
            nodes: Vec::with_capacity(s.len()),
            max_nodes: 2 * s.len(),
            subs: Vec::new(),
            max_subs: s.len(),
            last_name: None,
            is_expression: false,
            is_conversion: false,
            function_nesting: 0,
            depth: 0,
            java,
            unresolved_name_state: 1,
        }
    }

    fn peek(&self) -> u8 {
        self.s.get(self.pos).copied().unwrap_or(0)
    }
    fn peek_next(&self) -> u8 {
        if self.peek() == 0 {
            return 0;
        }
        self.s.get(self.pos + 1).copied().unwrap_or(0)
    }
    fn next_char(&mut self) -> u8 {
        let c = self.peek();
        if c != 0 {
            self.pos += 1;
        }
        c
    }
    fn advance(&mut self, n: usize) {
        self.pos = self.pos.saturating_add(n);
    }
    fn check(&mut self, c: u8) -> bool {
        if self.peek() == c {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn kind(&self, id: Id) -> K {
        self.nodes[id as usize].k
    }
    fn left(&self, id: Id) -> Option<Id> {
        self.nodes[id as usize].l
    }
    fn right(&self, id: Id) -> Option<Id> {
        self.nodes[id as usize].r
    }

    fn make(&mut self, k: K, l: Option<Id>, r: Option<Id>, s: &'a [u8], n: i64) -> Option<Id> {
        if self.nodes.len() >= self.max_nodes {
            return None;
        }
        let id = Id::try_from(self.nodes.len()).ok()?;
        self.nodes.push(Node { k, l, r, s, n });
        Some(id)
    }

    /// A component with children, refused (like libiberty's `d_make_comp`) when a child the
    /// kind needs is missing — which is how a failed sub-parse propagates.
    fn comp(&mut self, k: K, l: Option<Id>, r: Option<Id>) -> Option<Id> {
        use K::*;
        let ok = match k {
            QualName | LocalName | TypedName | TaggedName | Template | ConstructionVtable
            | VendorTypeQual | PtrmemType | Unary | Binary | BinaryArgs | Trinary | TrinaryArg1
            | Literal | LiteralNeg | VectorType | Clone | ModuleEntity => {
                l.is_some() && r.is_some()
            }
            Vtable | Vtt | Typeinfo | TypeinfoName | TypeinfoFn | Thunk | VirtualThunk
            | CovariantThunk | JavaClass | Guard | TlsInit | TlsWrapper | Reftemp | HiddenAlias
            | TransactionClone | NontransactionClone | Pointer | Reference | RvalueReference
            | Complex | Imaginary | VendorType | Cast | Conversion | Decltype | PackExpansion
            | GlobalConstructors | GlobalDestructors | Nullary | TrinaryArg2 | TparmObj
            | StructuredBinding => l.is_some(),
            ArrayType | InitializerList => r.is_some(),
            FunctionType | Restrict | Volatile | Const | ArgList | TemplateArgList => true,
            _ if is_fnqual(k) => true,
            _ => false,
        };
        if !ok {
            return None;
        }
        self.make(k, l, r, b"", 0)
    }

    fn name_node(&mut self, s: &'a [u8]) -> Option<Id> {
        if s.is_empty() {
            return None;
        }
        self.make(K::Name, None, None, s, 0)
    }
    fn static_name(&mut self, s: &'static str) -> Option<Id> {
        self.make(K::Name, None, None, s.as_bytes(), 0)
    }
    fn add_sub(&mut self, dc: Option<Id>) -> Option<()> {
        let dc = dc?;
        if self.subs.len() >= self.max_subs {
            return None;
        }
        self.subs.push(dc);
        Some(())
    }

    /// One level deeper into the grammar; `None` (and no level taken) past the bound.
    fn enter(&mut self) -> Option<()> {
        if self.depth >= MAX_PARSE_DEPTH {
            return None;
        }
        self.depth += 1;
        Some(())
    }

    /// `_Z <encoding> [<clone-suffix>]*`
    fn mangled_name(&mut self, top_level: bool) -> Option<Id> {
        if !self.check(b'_') && top_level {
            return None;
        }
        if !self.check(b'Z') {
            return None;
        }
        let mut p = self.encoding(top_level);
        if top_level {
            while self.peek() == b'.' && {
                let c = self.peek_next();
                is_lower(c) || c == b'_' || is_digit(c)
            } {
                p = self.clone_suffix(p);
            }
        }
        p
    }

    fn has_return_type(&self, dc: Option<Id>) -> bool {
        let Some(dc) = dc else { return false };
        match self.kind(dc) {
            K::LocalName => self.has_return_type(self.right(dc)),
            K::Template => !self.is_ctor_dtor_or_conversion(self.left(dc)),
            k if is_fnqual(k) => self.has_return_type(self.left(dc)),
            _ => false,
        }
    }

    fn is_ctor_dtor_or_conversion(&self, dc: Option<Id>) -> bool {
        let Some(dc) = dc else { return false };
        match self.kind(dc) {
            K::QualName | K::LocalName => self.is_ctor_dtor_or_conversion(self.right(dc)),
            K::Ctor | K::Dtor | K::Conversion => true,
            _ => false,
        }
    }

    fn encoding(&mut self, top_level: bool) -> Option<Id> {
        self.enter()?;
        let r = self.encoding_inner(top_level);
        self.depth -= 1;
        r
    }

    fn encoding_inner(&mut self, top_level: bool) -> Option<Id> {
        let peek = self.peek();
        if peek == b'G' || peek == b'T' {
            return self.special_name();
        }
        let dc = self.name(false)?;
        let peek = self.peek();
        if peek == 0 || peek == b'E' {
            return Some(dc);
        }
        let has_ret = self.has_return_type(Some(dc));
        let ftype = self.bare_function_type(has_ret)?;
        if !top_level && self.kind(dc) == K::LocalName && self.kind(ftype) == K::FunctionType {
            self.nodes[ftype as usize].l = None;
        }
        self.comp(K::TypedName, Some(dc), Some(ftype))
    }

    fn abi_tags(&mut self, mut dc: Option<Id>) -> Option<Id> {
        let hold = self.last_name;
        while self.peek() == b'B' {
            self.advance(1);
            let tag = self.source_name();
            dc = self.comp(K::TaggedName, dc, tag);
        }
        self.last_name = hold;
        dc
    }

    /// `<name>`; with `substable`, the name is also a substitution candidate (unless it
    /// came whole from a substitution).
    fn name(&mut self, substable: bool) -> Option<Id> {
        self.enter()?;
        let r = self.name_inner(substable);
        self.depth -= 1;
        r
    }

    fn name_inner(&mut self, substable: bool) -> Option<Id> {
        let mut subst = false;
        let mut dc = match self.peek() {
            b'N' => self.nested_name(),
            b'Z' => self.local_name(),
            b'U' => self.unqualified_name(None, None),
            peek => {
                let mut dc = None;
                let mut module = None;
                if peek == b'S' {
                    if self.peek_next() == b't' {
                        self.advance(2);
                        dc = self.static_name("std");
                    }
                    if self.peek() == b'S' {
                        let m = self.substitution(false)?;
                        if matches!(self.kind(m), K::ModuleName | K::ModulePartition) {
                            module = Some(m);
                        } else {
                            if dc.is_some() {
                                return None;
                            }
                            subst = true;
                            dc = Some(m);
                        }
                    }
                }
                if !subst {
                    dc = self.unqualified_name(dc, module);
                }
                if self.peek() == b'I' {
                    if !subst {
                        self.add_sub(dc)?;
                    }
                    let args = self.template_args();
                    dc = self.comp(K::Template, dc, args);
                    subst = false;
                }
                dc
            }
        };
        if substable && !subst {
            self.add_sub(dc)?;
        }
        dc.take()
    }

    fn nested_name(&mut self) -> Option<Id> {
        if !self.check(b'N') {
            return None;
        }
        let quals = self.cv_qualifiers(true)?;
        let rqual = match self.peek() {
            b'R' | b'O' => {
                let k = if self.peek() == b'R' {
                    K::ReferenceThis
                } else {
                    K::RvalueReferenceThis
                };
                self.advance(1);
                Some(k)
            }
            _ => None,
        };
        let prefix = self.prefix(true)?;
        let mut ret = self.wrap(&quals, Some(prefix));
        if let Some(k) = rqual {
            ret = self.comp(k, ret, None);
        }
        if !self.check(b'E') {
            return None;
        }
        ret
    }

    /// Puts the qualifiers of `quals` (outermost first) around `inner`.
    fn wrap(&mut self, quals: &[(K, Option<Id>)], inner: Option<Id>) -> Option<Id> {
        let mut cur = inner;
        for &(k, r) in quals.iter().rev() {
            cur = Some(self.comp(k, cur, r)?);
        }
        cur
    }

    /// `<prefix>` up to the `E` of a nested name; with `substable`, each step is a
    /// substitution candidate (not in an unresolved name).
    fn prefix(&mut self, substable: bool) -> Option<Id> {
        let mut ret: Option<Id> = None;
        loop {
            let peek = self.peek();
            if peek == b'D' && matches!(self.peek_next(), b'T' | b't') {
                if ret.is_some() {
                    return None;
                }
                ret = self.type_();
            } else if peek == b'I' {
                ret?;
                let args = self.template_args()?;
                ret = self.comp(K::Template, ret, Some(args));
            } else if peek == b'T' {
                if ret.is_some() {
                    return None;
                }
                ret = self.template_param();
            } else if peek == b'M' {
                // A lambda's initializer scope: already a substitution candidate.
                self.advance(1);
                continue;
            } else {
                let mut module = None;
                if peek == b'S' {
                    let m = self.substitution(true)?;
                    if matches!(self.kind(m), K::ModuleName | K::ModulePartition) {
                        module = Some(m);
                    } else {
                        if ret.is_some() {
                            return None;
                        }
                        ret = Some(m);
                        continue;
                    }
                }
                ret = self.unqualified_name(ret, module);
            }
            ret?;
            if self.peek() == b'E' {
                break;
            }
            if substable {
                self.add_sub(ret)?;
            }
        }
        ret
    }

    /// `W <source-name>` / `WP <source-name>` module names in front of a name.
    fn maybe_module_name(&mut self, module: &mut Option<Id>) -> Option<()> {
        while self.peek() == b'W' {
            self.advance(1);
            let mut k = K::ModuleName;
            if self.peek() == b'P' {
                k = K::ModulePartition;
                self.advance(1);
            }
            let sn = self.source_name();
            let m = self.make(k, *module, Some(sn?), b"", 0)?;
            *module = Some(m);
            self.add_sub(*module)?;
        }
        Some(())
    }

    /// `<unqualified-name>`, qualified by `scope` when there is one.
    fn unqualified_name(&mut self, scope: Option<Id>, module: Option<Id>) -> Option<Id> {
        let mut module = module;
        self.maybe_module_name(&mut module)?;
        let peek = self.peek();
        let mut ret = if is_digit(peek) {
            self.source_name()
        } else if is_lower(peek) {
            let was = self.is_expression;
            if peek == b'o' && self.peek_next() == b'n' {
                self.advance(2);
                // `on cv …` names a conversion operator.
                self.is_expression = false;
            }
            let mut ret = self.operator_name();
            self.is_expression = was;
            if let Some(op) = ret
                && self.kind(op) == K::Operator
                && op_info(self.nodes[op as usize].n).0 == b"li"
            {
                let sn = self.source_name();
                ret = self.comp(K::Unary, ret, sn);
            }
            ret
        } else if peek == b'D' && self.peek_next() == b'C' {
            // A structured binding: `DC <source-name>+ E`.
            self.advance(2);
            let mut first = None;
            let mut prev: Option<Id> = None;
            loop {
                let sn = self.source_name();
                let Some(next) = self.comp(K::StructuredBinding, sn, None) else {
                    prev = None;
                    break;
                };
                match prev {
                    Some(p) => self.nodes[p as usize].r = Some(next),
                    None => first = Some(next),
                }
                prev = Some(next);
                if self.peek() == b'E' {
                    break;
                }
            }
            if prev.is_some() {
                self.advance(1);
                first
            } else {
                None
            }
        } else if peek == b'C' || peek == b'D' {
            self.ctor_dtor_name()
        } else if peek == b'L' {
            self.advance(1);
            let ret = self.source_name()?;
            if !self.discriminator() {
                return None;
            }
            Some(ret)
        } else if peek == b'U' {
            match self.peek_next() {
                b'l' => self.lambda(),
                b't' => self.unnamed_type(),
                _ => None,
            }
        } else {
            None
        };
        if module.is_some() {
            ret = self.comp(K::ModuleEntity, ret, module);
        }
        if self.peek() == b'B' {
            ret = self.abi_tags(ret);
        }
        if scope.is_some() {
            ret = self.comp(K::QualName, scope, ret);
        }
        ret
    }

    fn source_name(&mut self) -> Option<Id> {
        let len = self.number();
        if len <= 0 {
            return None;
        }
        let ret = self.identifier(usize::try_from(len).ok()?);
        self.last_name = ret;
        ret
    }

    fn number(&mut self) -> i64 {
        let mut negative = false;
        if self.peek() == b'n' {
            negative = true;
            self.advance(1);
        }
        let mut ret: i64 = 0;
        loop {
            let c = self.peek();
            if !is_digit(c) {
                return if negative { -ret } else { ret };
            }
            let d = i64::from(c - b'0');
            if ret > (i64::from(i32::MAX) - d) / 10 {
                return -1;
            }
            ret = ret * 10 + d;
            self.advance(1);
        }
    }

    fn identifier(&mut self, len: usize) -> Option<Id> {
        let start = self.pos;
        let name = self.s.get(start..start.checked_add(len)?)?;
        self.advance(len);
        if self.java && self.peek() == b'$' {
            self.advance(1);
        }
        if len >= 10
            && name.starts_with(b"_GLOBAL_")
            && matches!(name[8], b'.' | b'_' | b'$')
            && name[9] == b'N'
        {
            return self.static_name("(anonymous namespace)");
        }
        self.name_node(name)
    }

    fn operator_name(&mut self) -> Option<Id> {
        let c1 = self.next_char();
        let c2 = self.next_char();
        if c1 == b'v' && is_digit(c2) {
            let name = self.source_name()?;
            return self.make(
                K::ExtendedOperator,
                Some(name),
                None,
                b"",
                i64::from(c2 - b'0'),
            );
        }
        if c1 == b'c' && c2 == b'v' {
            let was = self.is_conversion;
            self.is_conversion = !self.is_expression;
            let ty = self.type_();
            let k = if self.is_conversion {
                K::Conversion
            } else {
                K::Cast
            };
            let res = self.comp(k, ty, None);
            self.is_conversion = was;
            return res;
        }
        let code = [c1, c2];
        let i = OPERATORS
            .binary_search_by(|(c, _, _)| c[..].cmp(&code[..]))
            .ok()?;
        self.make(K::Operator, None, None, b"", i64::try_from(i).ok()?)
    }

    fn special_name(&mut self) -> Option<Id> {
        if self.check(b'T') {
            let c = self.next_char();
            let one = |p: &mut Self, k: K, x: Option<Id>| p.comp(k, x, None);
            match c {
                b'V' => {
                    let t = self.type_();
                    one(self, K::Vtable, t)
                }
                b'T' => {
                    let t = self.type_();
                    one(self, K::Vtt, t)
                }
                b'I' => {
                    let t = self.type_();
                    one(self, K::Typeinfo, t)
                }
                b'S' => {
                    let t = self.type_();
                    one(self, K::TypeinfoName, t)
                }
                b'h' => {
                    if !self.call_offset(b'h') {
                        return None;
                    }
                    let e = self.encoding(false);
                    one(self, K::Thunk, e)
                }
                b'v' => {
                    if !self.call_offset(b'v') {
                        return None;
                    }
                    let e = self.encoding(false);
                    one(self, K::VirtualThunk, e)
                }
                b'c' => {
                    if !self.call_offset(0) || !self.call_offset(0) {
                        return None;
                    }
                    let e = self.encoding(false);
                    one(self, K::CovariantThunk, e)
                }
                b'C' => {
                    let derived = self.type_();
                    if self.number() < 0 || !self.check(b'_') {
                        return None;
                    }
                    let base = self.type_();
                    self.comp(K::ConstructionVtable, base, derived)
                }
                b'F' => {
                    let t = self.type_();
                    one(self, K::TypeinfoFn, t)
                }
                b'J' => {
                    let t = self.type_();
                    one(self, K::JavaClass, t)
                }
                b'H' => {
                    let n = self.name(false);
                    one(self, K::TlsInit, n)
                }
                b'W' => {
                    let n = self.name(false);
                    one(self, K::TlsWrapper, n)
                }
                b'A' => {
                    let a = self.template_arg();
                    one(self, K::TparmObj, a)
                }
                _ => None,
            }
        } else if self.check(b'G') {
            match self.next_char() {
                b'V' => {
                    let n = self.name(false);
                    self.comp(K::Guard, n, None)
                }
                b'R' => {
                    let n = self.name(false);
                    let num = self.number();
                    let num = self.make(K::Number, None, None, b"", num)?;
                    self.comp(K::Reftemp, n, Some(num))
                }
                b'A' => {
                    let e = self.encoding(false);
                    self.comp(K::HiddenAlias, e, None)
                }
                b'T' => {
                    let k = if self.next_char() == b'n' {
                        K::NontransactionClone
                    } else {
                        K::TransactionClone
                    };
                    let e = self.encoding(false);
                    self.comp(k, e, None)
                }
                _ => None,
            }
        } else {
            None
        }
    }

    fn call_offset(&mut self, c: u8) -> bool {
        let c = if c == 0 { self.next_char() } else { c };
        if c == b'h' {
            self.number();
        } else if c == b'v' {
            self.number();
            if !self.check(b'_') {
                return false;
            }
            self.number();
        } else {
            return false;
        }
        self.check(b'_')
    }

    fn ctor_dtor_name(&mut self) -> Option<Id> {
        match self.peek() {
            b'C' => {
                let inheriting = self.peek_next() == b'I';
                if inheriting {
                    self.advance(1);
                }
                if !matches!(self.peek_next(), b'1'..=b'5') {
                    return None;
                }
                self.advance(2);
                if inheriting {
                    self.type_();
                }
                let name = self.last_name?;
                self.make(K::Ctor, Some(name), None, b"", 0)
            }
            b'D' => {
                if !matches!(self.peek_next(), b'0' | b'1' | b'2' | b'4' | b'5') {
                    return None;
                }
                self.advance(2);
                let name = self.last_name?;
                self.make(K::Dtor, Some(name), None, b"", 0)
            }
            _ => None,
        }
    }

    fn next_is_type_qual(&self) -> bool {
        match self.peek() {
            b'r' | b'V' | b'K' => true,
            b'D' => matches!(self.peek_next(), b'x' | b'o' | b'O' | b'w'),
            _ => false,
        }
    }

    fn type_(&mut self) -> Option<Id> {
        self.enter()?;
        let r = self.type_inner();
        self.depth -= 1;
        r
    }

    fn type_inner(&mut self) -> Option<Id> {
        if self.next_is_type_qual() {
            let quals = self.cv_qualifiers(false)?;
            let inner = if self.peek() == b'F' {
                self.function_type()
            } else {
                self.type_()
            }?;
            let ret = if matches!(self.kind(inner), K::RvalueReferenceThis | K::ReferenceThis) {
                // The ref-qualifier goes outside the cv-qualifiers, so that they print in
                // the right order.
                let f = self.left(inner);
                let chain = self.wrap(&quals, f);
                self.nodes[inner as usize].l = chain;
                Some(inner)
            } else {
                self.wrap(&quals, Some(inner))
            };
            self.add_sub(ret)?;
            return ret;
        }
        let mut can_subst = true;
        let peek = self.peek();
        let ret = match peek {
            b'a'..=b'j' | b'l'..=b'o' | b's' | b't' | b'v'..=b'z' => {
                can_subst = false;
                self.advance(1);
                self.make(K::BuiltinType, None, None, b"", i64::from(peek - b'a'))
            }
            b'u' => {
                self.advance(1);
                let n = self.source_name();
                self.comp(K::VendorType, n, None)
            }
            b'F' => self.function_type(),
            b'A' => self.array_type(),
            b'M' => self.pointer_to_member_type(),
            b'T' => {
                let mut ret = self.template_param();
                if self.peek() == b'I' {
                    if !self.is_conversion {
                        self.add_sub(ret)?;
                        let args = self.template_args();
                        ret = self.comp(K::Template, ret, args);
                    } else {
                        let (pos, nn, ns) = (self.pos, self.nodes.len(), self.subs.len());
                        let args = self.template_args();
                        if self.peek() == b'I' {
                            self.add_sub(ret)?;
                            ret = self.comp(K::Template, ret, args);
                        } else {
                            self.pos = pos;
                            self.nodes.truncate(nn);
                            self.subs.truncate(ns);
                        }
                    }
                }
                ret
            }
            b'O' | b'P' | b'R' | b'C' | b'G' => {
                self.advance(1);
                let k = match peek {
                    b'O' => K::RvalueReference,
                    b'P' => K::Pointer,
                    b'R' => K::Reference,
                    b'C' => K::Complex,
                    _ => K::Imaginary,
                };
                let t = self.type_();
                self.comp(k, t, None)
            }
            b'U' => {
                self.advance(1);
                let mut ret = self.source_name();
                if self.peek() == b'I' {
                    let args = self.template_args();
                    ret = self.comp(K::Template, ret, args);
                }
                let t = self.type_();
                self.comp(K::VendorTypeQual, t, ret)
            }
            b'D' => {
                can_subst = false;
                self.advance(1);
                let c = self.next_char();
                let builtin = |p: &mut Self, i: i64| p.make(K::BuiltinType, None, None, b"", i);
                match c {
                    b'T' | b't' => {
                        let e = self.expression();
                        let mut ret = self.comp(K::Decltype, e, None);
                        if ret.is_some() && self.next_char() != b'E' {
                            ret = None;
                        }
                        can_subst = true;
                        ret
                    }
                    b'p' => {
                        let t = self.type_();
                        can_subst = true;
                        self.comp(K::PackExpansion, t, None)
                    }
                    b'a' => self.static_name("auto"),
                    b'c' => self.static_name("decltype(auto)"),
                    b'f' => builtin(self, 26),
                    b'd' => builtin(self, 27),
                    b'e' => builtin(self, 28),
                    b'h' => builtin(self, 29),
                    b'u' => builtin(self, 30),
                    b's' => builtin(self, 31),
                    b'i' => builtin(self, 32),
                    b'n' => builtin(self, NULLPTR_BUILTIN),
                    b'F' => {
                        // `DF <N> _` = `_FloatN`, `DF <N> x` = `_FloatNx`, `DF16b`.
                        let arg = self.number();
                        if self.peek() == b'b' {
                            if arg != 16 {
                                return None;
                            }
                            self.advance(1);
                            builtin(self, BFLOAT16_BUILTIN)
                        } else {
                            let suffix: &'static [u8] =
                                if self.peek() == b'x' { b"x" } else { b"" };
                            if suffix.is_empty() && self.peek() != b'_' {
                                return None;
                            }
                            self.advance(1);
                            self.make(K::ExtendedBuiltin, None, None, suffix, arg)
                        }
                    }
                    b'v' => {
                        can_subst = true;
                        self.vector_type()
                    }
                    _ => return None,
                }
            }
            // Names, substitutions, and whatever else reads as a name.
            _ => return self.name(true),
        };
        if can_subst {
            self.add_sub(ret)?;
        }
        ret
    }

    /// `<CV-qualifiers>`: the qualifiers in order (outermost first), each with its operand
    /// (`noexcept(expr)`, `throw(types)`).
    fn cv_qualifiers(&mut self, member_fn: bool) -> Option<Vec<(K, Option<Id>)>> {
        let mut quals = Vec::new();
        let mut peek = self.peek();
        while self.next_is_type_qual() {
            self.advance(1);
            let mut right = None;
            let t = match peek {
                b'r' if member_fn => K::RestrictThis,
                b'r' => K::Restrict,
                b'V' if member_fn => K::VolatileThis,
                b'V' => K::Volatile,
                b'K' if member_fn => K::ConstThis,
                b'K' => K::Const,
                _ => match self.next_char() {
                    b'x' => K::TransactionSafe,
                    c @ (b'o' | b'O') => {
                        if c == b'O' {
                            right = Some(self.expression()?);
                            if !self.check(b'E') {
                                return None;
                            }
                        }
                        K::Noexcept
                    }
                    b'w' => {
                        right = Some(self.parmlist()?);
                        if !self.check(b'E') {
                            return None;
                        }
                        K::ThrowSpec
                    }
                    _ => return None,
                },
            };
            quals.push((t, right));
            peek = self.peek();
        }
        if !member_fn && peek == b'F' {
            for q in &mut quals {
                q.0 = match q.0 {
                    K::Restrict => K::RestrictThis,
                    K::Volatile => K::VolatileThis,
                    K::Const => K::ConstThis,
                    k => k,
                };
            }
        }
        Some(quals)
    }

    fn function_type(&mut self) -> Option<Id> {
        if self.function_nesting > MAX_FUNCTION_NESTING {
            return None;
        }
        self.function_nesting += 1;
        let mut ret = None;
        if self.check(b'F') {
            if self.peek() == b'Y' {
                self.advance(1);
            }
            ret = self.bare_function_type(true);
            if ret.is_some() && matches!(self.peek(), b'R' | b'O') {
                let k = if self.peek() == b'R' {
                    K::ReferenceThis
                } else {
                    K::RvalueReferenceThis
                };
                self.advance(1);
                ret = self.comp(k, ret, None);
            }
            if !self.check(b'E') {
                ret = None;
            }
        }
        self.function_nesting -= 1;
        ret
    }

    fn parmlist(&mut self) -> Option<Id> {
        let mut first: Option<Id> = None;
        let mut last: Option<Id> = None;
        loop {
            let peek = self.peek();
            if peek == 0 || peek == b'E' || peek == b'.' {
                break;
            }
            if (peek == b'R' || peek == b'O') && self.peek_next() == b'E' {
                break;
            }
            let t = self.type_()?;
            let node = self.comp(K::ArgList, Some(t), None)?;
            match last {
                None => first = Some(node),
                Some(l) => self.nodes[l as usize].r = Some(node),
            }
            last = Some(node);
        }
        let first = first?;
        if self.right(first).is_none()
            && let Some(t) = self.left(first)
            && self.kind(t) == K::BuiltinType
            && self.nodes[t as usize].n == 21
        {
            self.nodes[first as usize].l = None;
        }
        Some(first)
    }

    fn bare_function_type(&mut self, mut has_ret: bool) -> Option<Id> {
        if self.peek() == b'J' {
            self.advance(1);
            has_ret = true;
        }
        let rt = if has_ret { Some(self.type_()?) } else { None };
        let tl = self.parmlist()?;
        self.comp(K::FunctionType, rt, Some(tl))
    }

    fn array_type(&mut self) -> Option<Id> {
        if !self.check(b'A') {
            return None;
        }
        let peek = self.peek();
        let dim = if peek == b'_' {
            None
        } else if is_digit(peek) {
            let start = self.pos;
            while is_digit(self.peek()) {
                self.advance(1);
            }
            Some(self.name_node(&self.s[start..self.pos])?)
        } else {
            Some(self.expression()?)
        };
        if !self.check(b'_') {
            return None;
        }
        let t = self.type_();
        self.comp(K::ArrayType, dim, t)
    }

    fn vector_type(&mut self) -> Option<Id> {
        let dim = if self.peek() == b'_' {
            self.advance(1);
            self.expression()
        } else {
            let n = self.number();
            self.make(K::Number, None, None, b"", n)
        };
        dim?;
        if !self.check(b'_') {
            return None;
        }
        let t = self.type_();
        self.comp(K::VectorType, dim, t)
    }

    fn pointer_to_member_type(&mut self) -> Option<Id> {
        if !self.check(b'M') {
            return None;
        }
        let cl = self.type_()?;
        let mem = self.type_()?;
        self.comp(K::PtrmemType, Some(cl), Some(mem))
    }

    fn compact_number(&mut self) -> i64 {
        let num = match self.peek() {
            b'_' => 0,
            b'n' => return -1,
            _ => {
                let n = self.number();
                if n < 0 {
                    return -1;
                }
                n + 1
            }
        };
        if !self.check(b'_') {
            return -1;
        }
        num
    }

    fn template_param(&mut self) -> Option<Id> {
        if !self.check(b'T') {
            return None;
        }
        let param = self.compact_number();
        if param < 0 {
            return None;
        }
        self.make(K::TemplateParam, None, None, b"", param)
    }

    fn template_args(&mut self) -> Option<Id> {
        if self.peek() != b'I' && self.peek() != b'J' {
            return None;
        }
        self.advance(1);
        self.template_args_1()
    }

    fn template_args_1(&mut self) -> Option<Id> {
        let hold = self.last_name;
        if self.peek() == b'E' {
            self.advance(1);
            return self.comp(K::TemplateArgList, None, None);
        }
        let mut first = None;
        let mut last: Option<Id> = None;
        loop {
            let a = self.template_arg()?;
            let node = self.comp(K::TemplateArgList, Some(a), None)?;
            match last {
                None => first = Some(node),
                Some(l) => self.nodes[l as usize].r = Some(node),
            }
            last = Some(node);
            if self.peek() == b'E' {
                self.advance(1);
                break;
            }
        }
        self.last_name = hold;
        first
    }

    fn template_arg(&mut self) -> Option<Id> {
        match self.peek() {
            b'X' => {
                self.advance(1);
                let ret = self.expression();
                if !self.check(b'E') {
                    return None;
                }
                ret
            }
            b'L' => self.expr_primary(),
            b'I' | b'J' => self.template_args(),
            _ => self.type_(),
        }
    }

    fn exprlist(&mut self, terminator: u8) -> Option<Id> {
        if self.peek() == terminator {
            self.advance(1);
            return self.comp(K::ArgList, None, None);
        }
        let mut first = None;
        let mut last: Option<Id> = None;
        loop {
            let arg = self.expression()?;
            let node = self.comp(K::ArgList, Some(arg), None)?;
            match last {
                None => first = Some(node),
                Some(l) => self.nodes[l as usize].r = Some(node),
            }
            last = Some(node);
            if self.peek() == terminator {
                self.advance(1);
                break;
            }
        }
        first
    }

    fn expression(&mut self) -> Option<Id> {
        self.enter()?;
        let was = self.is_expression;
        self.is_expression = true;
        let r = self.expression_1();
        self.is_expression = was;
        self.depth -= 1;
        r
    }

    fn expression_1(&mut self) -> Option<Id> {
        self.enter()?;
        let r = self.expression_1_inner();
        self.depth -= 1;
        r
    }

    fn expression_1_inner(&mut self) -> Option<Id> {
        let peek = self.peek();
        let next = self.peek_next();
        if peek == b'L' {
            return self.expr_primary();
        }
        if peek == b'T' {
            return self.template_param();
        }
        if peek == b's' && next == b'r' {
            return self.unresolved_name();
        }
        if peek == b's' && next == b'p' {
            self.advance(2);
            let e = self.expression_1();
            return self.comp(K::PackExpansion, e, None);
        }
        if peek == b'f' && next == b'p' {
            self.advance(2);
            let index = if self.peek() == b'T' {
                self.advance(1);
                0
            } else {
                let i = self.compact_number();
                if i == i64::from(i32::MAX) || i == -1 {
                    return None;
                }
                i + 1
            };
            return self.make(K::FunctionParam, None, None, b"", index);
        }
        if is_digit(peek) || (peek == b'o' && next == b'n') {
            if peek == b'o' {
                self.advance(2);
            }
            let name = self.unqualified_name(None, None)?;
            if self.peek() == b'I' {
                let args = self.template_args();
                return self.comp(K::Template, Some(name), args);
            }
            return Some(name);
        }
        if (peek == b'i' || peek == b't') && next == b'l' {
            self.advance(2);
            let ty = if peek == b't' { self.type_() } else { None };
            if self.peek() == 0 || self.peek_next() == 0 {
                return None;
            }
            let list = self.exprlist(b'E');
            return self.comp(K::InitializerList, ty, list);
        }
        let op = self.operator_name()?;
        let mut code: Option<&[u8; 2]> = None;
        if self.kind(op) == K::Operator {
            let c = op_info(self.nodes[op as usize].n).0;
            code = Some(c);
            if c == b"st" {
                let t = self.type_();
                return self.comp(K::Unary, Some(op), t);
            }
        }
        let args = match self.kind(op) {
            K::Operator => op_info(self.nodes[op as usize].n).2,
            K::ExtendedOperator => u8::try_from(self.nodes[op as usize].n).ok()?,
            K::Cast => 1,
            _ => return None,
        };
        match args {
            0 => self.comp(K::Nullary, Some(op), None),
            1 => {
                let mut suffix = false;
                if let Some(c) = code
                    && (c[0] == b'p' || c[0] == b'm')
                    && c[1] == c[0]
                {
                    suffix = !self.check(b'_');
                }
                let operand = if self.kind(op) == K::Cast && self.check(b'_') {
                    self.exprlist(b'E')
                } else if code == Some(b"sP") {
                    self.template_args_1()
                } else {
                    self.expression_1()
                };
                let operand = if suffix {
                    self.comp(K::BinaryArgs, operand, operand)
                } else {
                    operand
                };
                self.comp(K::Unary, Some(op), operand)
            }
            2 => {
                let code = code?;
                let left = if is_new_cast(code) {
                    self.type_()
                } else if code[0] == b'f' {
                    self.operator_name()
                } else if code == b"di" {
                    self.unqualified_name(None, None)
                } else {
                    self.expression_1()
                };
                let right = if code == b"cl" {
                    self.exprlist(b'E')
                } else if (code == b"dt" || code == b"pt")
                    && matches!((self.peek(), self.peek_next()), (b'g', b's') | (b's', b'r'))
                {
                    self.expression_1()
                } else if code == b"dt" || code == b"pt" {
                    let mut r = self.unqualified_name(None, None);
                    if self.peek() == b'I' {
                        let args = self.template_args();
                        r = self.comp(K::Template, r, args);
                    }
                    r
                } else {
                    self.expression_1()
                };
                let args = self.comp(K::BinaryArgs, left, right);
                self.comp(K::Binary, Some(op), args)
            }
            3 => {
                let code = code?;
                let (first, second, third);
                if code == b"qu" || code == b"dX" {
                    first = self.expression_1();
                    second = self.expression_1();
                    third = Some(self.expression_1()?);
                } else if code[0] == b'f' {
                    first = self.operator_name();
                    second = self.expression_1();
                    third = Some(self.expression_1()?);
                } else if code[0] == b'n' {
                    if code[1] != b'w' && code[1] != b'a' {
                        return None;
                    }
                    first = self.exprlist(b'_');
                    second = self.type_();
                    if self.peek() == b'E' {
                        self.advance(1);
                        third = None;
                    } else if self.peek() == b'p' && self.peek_next() == b'i' {
                        self.advance(2);
                        third = self.exprlist(b'E');
                    } else if self.peek() == b'i' && self.peek_next() == b'l' {
                        third = self.expression_1();
                    } else {
                        return None;
                    }
                } else {
                    return None;
                }
                let a2 = self.comp(K::TrinaryArg2, second, third);
                let a1 = self.comp(K::TrinaryArg1, first, a2);
                self.comp(K::Trinary, Some(op), a1)
            }
            _ => None,
        }
    }

    /// `sr …`: `sr <type> <name>`, or `sr <qualifier-level>+ E <name>` (`sr3std9is_signedIT_EE5value`
    /// = `std::is_signed<T>::value`), which libiberty tries first when the name could be either.
    fn unresolved_name(&mut self) -> Option<Id> {
        self.advance(2);
        let peek = self.peek();
        let ty = if self.unresolved_name_state != 0
            && (is_digit(peek) || is_lower(peek) || matches!(peek, b'C' | b'U' | b'L'))
        {
            self.unresolved_name_state = -1;
            let t = self.prefix(false);
            if self.peek() == b'E' {
                self.advance(1);
            }
            t
        } else {
            self.type_()
        };
        // A failed prefix leaves no scope (libiberty does not stop there).
        let mut name = self.unqualified_name(ty, None);
        if self.peek() == b'I' {
            let args = self.template_args();
            name = self.comp(K::Template, name, args);
        }
        name
    }

    fn expr_primary(&mut self) -> Option<Id> {
        if !self.check(b'L') {
            return None;
        }
        let ret = if self.peek() == b'_' || self.peek() == b'Z' {
            self.mangled_name(false)
        } else {
            let ty = self.type_()?;
            if self.kind(ty) == K::BuiltinType
                && self.nodes[ty as usize].n == NULLPTR_BUILTIN
                && self.peek() == b'E'
            {
                self.advance(1);
                return Some(ty);
            }
            let mut k = K::Literal;
            if self.peek() == b'n' {
                k = K::LiteralNeg;
                self.advance(1);
            }
            let start = self.pos;
            while self.peek() != b'E' {
                if self.peek() == 0 {
                    return None;
                }
                self.advance(1);
            }
            let s = &self.s[start..self.pos];
            let name = self.name_node(s);
            self.comp(k, Some(ty), name)
        };
        if !self.check(b'E') {
            return None;
        }
        ret
    }

    fn local_name(&mut self) -> Option<Id> {
        if !self.check(b'Z') {
            return None;
        }
        let function = self.encoding(false)?;
        if !self.check(b'E') {
            return None;
        }
        let name;
        if self.peek() == b's' {
            self.advance(1);
            if !self.discriminator() {
                return None;
            }
            name = self.static_name("string literal");
        } else {
            let mut num = -1;
            if self.peek() == b'd' {
                self.advance(1);
                num = self.compact_number();
                if num < 0 {
                    return None;
                }
            }
            let n = self.name(false);
            if let Some(n) = n
                && !matches!(self.kind(n), K::Lambda | K::UnnamedType)
                && !self.discriminator()
            {
                return None;
            }
            name = if num >= 0 {
                let n = n?;
                self.make(K::DefaultArg, Some(n), None, b"", num)
            } else {
                n
            };
        }
        if self.kind(function) == K::TypedName
            && let Some(ft) = self.right(function)
            && self.kind(ft) == K::FunctionType
        {
            self.nodes[ft as usize].l = None;
        }
        self.comp(K::LocalName, Some(function), name)
    }

    fn discriminator(&mut self) -> bool {
        if self.peek() != b'_' {
            return true;
        }
        self.advance(1);
        let mut underscores = 1;
        if self.peek() == b'_' {
            underscores += 1;
            self.advance(1);
        }
        let d = self.number();
        if d < 0 {
            return false;
        }
        if underscores > 1 && d >= 10 {
            return self.check(b'_');
        }
        true
    }

    fn lambda(&mut self) -> Option<Id> {
        if !self.check(b'U') || !self.check(b'l') {
            return None;
        }
        let tl = self.parmlist()?;
        if !self.check(b'E') {
            return None;
        }
        let num = self.compact_number();
        if num < 0 {
            return None;
        }
        self.make(K::Lambda, Some(tl), None, b"", num)
    }

    fn unnamed_type(&mut self) -> Option<Id> {
        if !self.check(b'U') || !self.check(b't') {
            return None;
        }
        let num = self.compact_number();
        if num < 0 {
            return None;
        }
        let ret = self.make(K::UnnamedType, None, None, b"", num);
        self.add_sub(ret)?;
        ret
    }

    fn clone_suffix(&mut self, encoding: Option<Id>) -> Option<Id> {
        let start = self.pos;
        let s = self.s;
        let at = |i: usize| s.get(i).copied().unwrap_or(0);
        let mut end = start;
        if at(end) == b'.'
            && (is_lower(at(end + 1)) || is_digit(at(end + 1)) || at(end + 1) == b'_')
        {
            end += 2;
            while is_lower(at(end)) || is_digit(at(end)) || at(end) == b'_' {
                end += 1;
            }
        }
        while at(end) == b'.' && is_digit(at(end + 1)) {
            end += 2;
            while is_digit(at(end)) {
                end += 1;
            }
        }
        self.pos = end;
        let n = self.name_node(&s[start..end.min(s.len())]);
        self.comp(K::Clone, encoding, n)
    }

    fn substitution(&mut self, prefix: bool) -> Option<Id> {
        if !self.check(b'S') {
            return None;
        }
        let mut c = self.next_char();
        if c == b'_' || is_digit(c) || is_upper(c) {
            let mut id: u32 = 0;
            if c != b'_' {
                loop {
                    let d = if is_digit(c) {
                        u32::from(c - b'0')
                    } else if is_upper(c) {
                        u32::from(c - b'A') + 10
                    } else {
                        return None;
                    };
                    id = id.checked_mul(36)?.checked_add(d)?;
                    c = self.next_char();
                    if c == b'_' {
                        break;
                    }
                }
                id = id.checked_add(1)?;
            }
            return self.subs.get(id as usize).copied();
        }
        let verbose = prefix && matches!(self.peek(), b'C' | b'D');
        let &(_, simple, full, last) = STD_SUBS.iter().find(|s| s.0 == c)?;
        if !last.is_empty() {
            self.last_name = self.make(K::SubStd, None, None, last.as_bytes(), 0);
        }
        let text = if verbose { full } else { simple };
        let mut dc = self.make(K::SubStd, None, None, text.as_bytes(), 0);
        if self.peek() == b'B' {
            dc = self.abi_tags(dc);
            self.add_sub(dc)?;
        }
        dc
    }
}

fn is_new_cast(code: &[u8; 2]) -> bool {
    code[1] == b'c' && matches!(code[0], b's' | b'd' | b'c' | b'r')
}

/// A pending type modifier while printing (libiberty's `d_print_mod`), in an arena: `next`
/// links to the modifier pushed before it.
#[derive(Clone, Copy)]
struct Mod {
    m: Id,
    printed: bool,
    templates: Option<usize>,
    next: Option<usize>,
}

struct Printer<'p, 'a> {
    nodes: &'p [Node<'a>],
    out: Vec<u8>,
    last_char: u8,
    /// Template scopes: (template component, enclosing scope), linked like a stack.
    tframes: Vec<(Id, Option<usize>)>,
    templates: Option<usize>,
    mods: Vec<Mod>,
    modifiers: Option<usize>,
    failed: bool,
    recursion: u32,
    is_lambda_arg: i32,
    pack_index: i64,
    stack: Vec<Id>,
    saved_scopes: Vec<(Id, Option<usize>)>,
    current_template: Option<Id>,
    printing: Vec<u8>,
}

impl<'p, 'a> Printer<'p, 'a> {
    fn new(nodes: &'p [Node<'a>]) -> Printer<'p, 'a> {
        Printer {
            nodes,
            out: Vec::with_capacity(128),
            last_char: 0,
            tframes: Vec::new(),
            templates: None,
            mods: Vec::new(),
            modifiers: None,
            failed: false,
            recursion: 0,
            is_lambda_arg: 0,
            pack_index: 0,
            stack: Vec::new(),
            saved_scopes: Vec::new(),
            current_template: None,
            printing: vec![0; nodes.len()],
        }
    }

    fn node(&self, id: Id) -> &'p Node<'a> {
        &self.nodes[id as usize]
    }
    fn kind(&self, id: Id) -> K {
        self.nodes[id as usize].k
    }

    fn ch(&mut self, c: u8) {
        if self.out.len() >= MAX_OUTPUT {
            self.failed = true;
            return;
        }
        self.out.push(c);
        self.last_char = c;
    }
    fn buf(&mut self, s: &[u8]) {
        if let Some(&c) = s.last() {
            if self.out.len() + s.len() > MAX_OUTPUT {
                self.failed = true;
                return;
            }
            self.out.extend_from_slice(s);
            self.last_char = c;
        }
    }
    fn st(&mut self, s: &str) {
        self.buf(s.as_bytes());
    }
    fn num(&mut self, n: i64) {
        let mut s = String::new();
        let _ = write!(s, "{}", n as i32);
        self.st(&s);
    }
    fn sep(&mut self, opts: u8) {
        if opts & JAVA == 0 {
            self.st("::");
        } else {
            self.ch(b'.');
        }
    }

    fn push_mod(&mut self, m: Id) -> usize {
        self.mods.push(Mod {
            m,
            printed: false,
            templates: self.templates,
            next: self.modifiers,
        });
        let i = self.mods.len() - 1;
        self.modifiers = Some(i);
        i
    }

    fn push_template(&mut self, t: Id) -> Option<usize> {
        let hold = self.templates;
        self.tframes.push((t, hold));
        self.templates = Some(self.tframes.len() - 1);
        hold
    }

    /// `d_print_comp`: prints one component, refusing one that is already being printed
    /// twice further up (a substitution that refers back into itself).
    fn comp(&mut self, opts: u8, dc: Option<Id>) {
        let Some(dc) = dc else {
            self.failed = true;
            return;
        };
        if self.printing[dc as usize] > 1 || self.recursion > MAX_PRINT_RECURSION {
            self.failed = true;
            return;
        }
        self.printing[dc as usize] += 1;
        self.recursion += 1;
        self.stack.push(dc);
        self.comp_inner(opts, dc);
        self.stack.pop();
        self.printing[dc as usize] -= 1;
        self.recursion -= 1;
    }

    fn index_template_argument(&self, args: Option<Id>, i: i64) -> Option<Id> {
        if i < 0 {
            return args;
        }
        let mut a = args;
        let mut i = i;
        while let Some(x) = a {
            if self.kind(x) != K::TemplateArgList {
                return None;
            }
            if i <= 0 {
                break;
            }
            i -= 1;
            a = self.node(x).r;
        }
        if i != 0 {
            return None;
        }
        self.node(a?).l
    }

    fn lookup_template_argument(&mut self, dc: Id) -> Option<Id> {
        let Some(t) = self.templates else {
            self.failed = true;
            return None;
        };
        let decl = self.tframes[t].0;
        self.index_template_argument(self.node(decl).r, self.node(dc).n)
    }

    fn find_pack(&mut self, dc: Option<Id>) -> Option<Id> {
        let dc = dc?;
        match self.kind(dc) {
            K::TemplateParam => {
                let a = self.lookup_template_argument(dc)?;
                (self.kind(a) == K::TemplateArgList).then_some(a)
            }
            K::PackExpansion
            | K::Lambda
            | K::Name
            | K::TaggedName
            | K::Operator
            | K::BuiltinType
            | K::SubStd
            | K::FunctionParam
            | K::UnnamedType
            | K::DefaultArg
            | K::Number => None,
            K::ExtendedOperator | K::Ctor | K::Dtor => self.find_pack(self.node(dc).l),
            _ => {
                let (l, r) = (self.node(dc).l, self.node(dc).r);
                if let Some(a) = self.find_pack(l) {
                    return Some(a);
                }
                self.find_pack(r)
            }
        }
    }

    fn pack_length(&self, dc: Option<Id>) -> i64 {
        let mut count = 0;
        let mut dc = dc;
        while let Some(x) = dc {
            if self.kind(x) != K::TemplateArgList || self.node(x).l.is_none() {
                break;
            }
            count += 1;
            dc = self.node(x).r;
        }
        count
    }

    fn args_length(&mut self, dc: Option<Id>) -> i64 {
        let mut count = 0;
        let mut dc = dc;
        while let Some(x) = dc {
            if self.kind(x) != K::TemplateArgList {
                break;
            }
            let Some(elt) = self.node(x).l else { break };
            if self.kind(elt) == K::PackExpansion {
                let a = self.find_pack(self.node(elt).l);
                count += self.pack_length(a);
            } else {
                count += 1;
            }
            dc = self.node(x).r;
        }
        count
    }

    fn subexpr(&mut self, opts: u8, dc: Option<Id>) {
        let simple = dc.is_some_and(|d| {
            matches!(
                self.kind(d),
                K::Name | K::QualName | K::InitializerList | K::FunctionParam
            )
        });
        if !simple {
            self.ch(b'(');
        }
        self.comp(opts, dc);
        if !simple {
            self.ch(b')');
        }
    }

    fn op_code(&self, op: Id) -> Option<&'static [u8; 2]> {
        (self.kind(op) == K::Operator).then(|| op_info(self.node(op).n).0)
    }

    fn maybe_fold(&mut self, opts: u8, dc: Id) -> bool {
        let Some(op) = self.node(dc).l else {
            return false;
        };
        let Some(code) = self.op_code(op) else {
            return false;
        };
        if code[0] != b'f' {
            return false;
        }
        let Some(ops) = self.node(dc).r else {
            return false;
        };
        let operator = self.node(ops).l;
        let mut op1 = self.node(ops).r;
        let mut op2 = None;
        if let Some(o) = op1
            && self.kind(o) == K::TrinaryArg2
        {
            op2 = self.node(o).r;
            op1 = self.node(o).l;
        }
        let save = self.pack_index;
        self.pack_index = -1;
        match code[1] {
            b'l' => {
                self.st("(...");
                self.expr_op(opts, operator);
                self.subexpr(opts, op1);
                self.ch(b')');
            }
            b'r' => {
                self.ch(b'(');
                self.subexpr(opts, op1);
                self.expr_op(opts, operator);
                self.st("...)");
            }
            b'L' | b'R' => {
                self.ch(b'(');
                self.subexpr(opts, op1);
                self.expr_op(opts, operator);
                self.st("...");
                self.expr_op(opts, operator);
                self.subexpr(opts, op2);
                self.ch(b')');
            }
            _ => {}
        }
        self.pack_index = save;
        true
    }

    fn is_designated_init(&self, dc: Option<Id>) -> bool {
        let Some(dc) = dc else { return false };
        if !matches!(self.kind(dc), K::Binary | K::Trinary) {
            return false;
        }
        let Some(code) = self.node(dc).l.and_then(|op| self.op_code(op)) else {
            return false;
        };
        code[0] == b'd' && matches!(code[1], b'i' | b'x' | b'X')
    }

    fn maybe_designated_init(&mut self, opts: u8, dc: Id) -> bool {
        if !self.is_designated_init(Some(dc)) {
            return false;
        }
        let Some(code) = self.node(dc).l.and_then(|op| self.op_code(op)) else {
            return false;
        };
        let Some(operands) = self.node(dc).r else {
            return false;
        };
        let op1 = self.node(operands).l;
        let mut op2 = self.node(operands).r;
        self.ch(if code[1] == b'i' { b'.' } else { b'[' });
        self.comp(opts, op1);
        if code[1] == b'X' {
            self.st(" ... ");
            let Some(o2) = op2 else {
                self.failed = true;
                return true;
            };
            self.comp(opts, self.node(o2).l);
            op2 = self.node(o2).r;
        }
        if code[1] != b'i' {
            self.ch(b']');
        }
        if self.is_designated_init(op2) {
            self.comp(opts, op2);
        } else {
            self.ch(b'=');
            self.subexpr(opts, op2);
        }
        true
    }

    fn comp_inner(&mut self, opts: u8, dc: Id) {
        if self.failed {
            return;
        }
        let node = *self.node(dc);
        let (l, r) = (node.l, node.r);
        match node.k {
            K::Name => {
                if opts & JAVA == 0 {
                    self.buf(node.s);
                } else {
                    self.java_identifier(node.s);
                }
            }
            K::TaggedName => {
                self.comp(opts, l);
                self.st("[abi:");
                self.comp(opts, r);
                self.ch(b']');
            }
            K::QualName | K::LocalName => {
                self.comp(opts, l);
                self.sep(opts);
                let mut local = r;
                if let Some(x) = local
                    && self.kind(x) == K::DefaultArg
                {
                    self.st("{default arg#");
                    self.num(self.node(x).n + 1);
                    self.st("}::");
                    local = self.node(x).l;
                }
                self.comp(opts, local);
            }
            K::TypedName => self.typed_name(opts, dc),
            K::Template => {
                let hold_current = self.current_template;
                self.current_template = Some(dc);
                let hold_mods = self.modifiers;
                self.modifiers = None;
                let dcl = l;
                let is_jarray = dcl.is_some_and(|d| {
                    self.kind(d) == K::Name && self.node(d).s == b"JArray".as_slice()
                });
                if opts & JAVA != 0 && is_jarray {
                    self.comp(opts, r);
                    self.st("[]");
                } else {
                    self.comp(opts, dcl);
                    if self.last_char == b'<' {
                        self.ch(b' ');
                    }
                    self.ch(b'<');
                    self.comp(opts, r);
                    if self.last_char == b'>' {
                        self.ch(b' ');
                    }
                    self.ch(b'>');
                }
                self.modifiers = hold_mods;
                self.current_template = hold_current;
            }
            K::TemplateParam => {
                if self.is_lambda_arg != 0 {
                    self.st("auto:");
                    self.num(node.n + 1);
                } else {
                    let mut a = self.lookup_template_argument(dc);
                    if let Some(x) = a
                        && self.kind(x) == K::TemplateArgList
                    {
                        a = self.index_template_argument(Some(x), self.pack_index);
                    }
                    let Some(a) = a else {
                        self.failed = true;
                        return;
                    };
                    let hold = self.templates;
                    self.templates = hold.and_then(|t| self.tframes[t].1);
                    self.comp(opts, Some(a));
                    self.templates = hold;
                }
            }
            K::TparmObj => {
                self.st("template parameter object for ");
                self.comp(opts, l);
            }
            K::Ctor => self.comp(opts, l),
            K::Dtor => {
                self.ch(b'~');
                self.comp(opts, l);
            }
            K::Vtable => self.words(opts, "vtable for ", l),
            K::Vtt => self.words(opts, "VTT for ", l),
            K::ConstructionVtable => {
                self.st("construction vtable for ");
                self.comp(opts, l);
                self.st("-in-");
                self.comp(opts, r);
            }
            K::Typeinfo => self.words(opts, "typeinfo for ", l),
            K::TypeinfoName => self.words(opts, "typeinfo name for ", l),
            K::TypeinfoFn => self.words(opts, "typeinfo fn for ", l),
            K::Thunk => self.words(opts, "non-virtual thunk to ", l),
            K::VirtualThunk => self.words(opts, "virtual thunk to ", l),
            K::CovariantThunk => self.words(opts, "covariant return thunk to ", l),
            K::JavaClass => self.words(opts, "java Class for ", l),
            K::Guard => self.words(opts, "guard variable for ", l),
            K::TlsInit => self.words(opts, "TLS init function for ", l),
            K::TlsWrapper => self.words(opts, "TLS wrapper function for ", l),
            K::Reftemp => {
                self.st("reference temporary #");
                self.comp(opts, r);
                self.st(" for ");
                self.comp(opts, l);
            }
            K::HiddenAlias => self.words(opts, "hidden alias for ", l),
            K::TransactionClone => self.words(opts, "transaction clone for ", l),
            K::NontransactionClone => self.words(opts, "non-transaction clone for ", l),
            K::SubStd => self.buf(node.s),
            K::Restrict | K::Volatile | K::Const => {
                // An array's qualifiers can be pushed twice; print each once.
                let mut p = self.modifiers;
                while let Some(i) = p {
                    let m = self.mods[i];
                    if !m.printed {
                        let mk = self.kind(m.m);
                        if !matches!(mk, K::Restrict | K::Volatile | K::Const) {
                            break;
                        }
                        if mk == node.k {
                            self.comp(opts, l);
                            return;
                        }
                    }
                    p = m.next;
                }
                self.modifier(opts, dc, None, None);
            }
            K::Reference | K::RvalueReference => self.reference(opts, dc),
            K::VendorTypeQual | K::Pointer | K::Complex | K::Imaginary => {
                self.modifier(opts, dc, None, None)
            }
            k if is_fnqual(k) => self.modifier(opts, dc, None, None),
            K::BuiltinType => {
                let (name, java, _) = builtin(node.n);
                self.st(if opts & JAVA == 0 { name } else { java });
            }
            K::VendorType => self.comp(opts, l),
            K::FunctionType => {
                let plain = opts & !(RET_POSTFIX | RET_DROP);
                if opts & RET_POSTFIX != 0 {
                    self.function_type(plain, dc, self.modifiers);
                }
                if l.is_some() && opts & RET_POSTFIX != 0 {
                    self.comp(plain, l);
                } else if l.is_some() && opts & RET_DROP == 0 {
                    let hold = self.modifiers;
                    let i = self.push_mod(dc);
                    self.comp(plain, l);
                    self.modifiers = hold;
                    if self.mods[i].printed {
                        return;
                    }
                    if opts & RET_POSTFIX == 0 {
                        self.ch(b' ');
                    }
                }
                if opts & RET_POSTFIX == 0 {
                    self.function_type(plain, dc, self.modifiers);
                }
            }
            K::ArrayType => self.array(opts, dc),
            K::PtrmemType | K::VectorType => {
                let hold = self.modifiers;
                let i = self.push_mod(dc);
                self.comp(opts, r);
                if !self.mods[i].printed {
                    self.print_mod(opts, dc);
                }
                self.modifiers = hold;
            }
            K::ArgList | K::TemplateArgList => {
                if l.is_some() {
                    self.comp(opts, l);
                }
                if r.is_some() {
                    self.st(", ");
                    let len = self.out.len();
                    self.comp(opts, r);
                    // An empty pack printed nothing: take the ", " back (the last
                    // character stays the blank, as in libiberty).
                    if self.out.len() == len {
                        self.out.truncate(len.saturating_sub(2));
                    }
                }
            }
            K::InitializerList => {
                if l.is_some() {
                    self.comp(opts, l);
                }
                self.ch(b'{');
                self.comp(opts, r);
                self.ch(b'}');
            }
            K::Operator => {
                let (_, name, _) = op_info(node.n);
                self.st("operator");
                if name.as_bytes()[0].is_ascii_lowercase() {
                    self.ch(b' ');
                }
                self.st(name.strip_suffix(' ').unwrap_or(name));
            }
            K::ExtendedOperator => {
                self.st("operator ");
                self.comp(opts, l);
            }
            K::Conversion => {
                self.st("operator ");
                self.conversion(opts, dc);
            }
            K::Nullary => self.expr_op(opts, l),
            K::Unary => self.unary(opts, dc),
            K::Binary => self.binary(opts, dc),
            K::Trinary => self.trinary(opts, dc),
            K::Literal | K::LiteralNeg => self.literal(opts, dc),
            K::Number => self.num(node.n),
            K::Decltype => {
                self.st("decltype (");
                self.comp(opts, l);
                self.ch(b')');
            }
            K::PackExpansion => {
                let Some(a) = self.find_pack(l) else {
                    self.subexpr(opts, l);
                    self.st("...");
                    return;
                };
                let len = self.pack_length(Some(a));
                for i in 0..len {
                    self.pack_index = i;
                    self.comp(opts, l);
                    if i < len - 1 {
                        self.st(", ");
                    }
                }
            }
            K::FunctionParam => {
                if node.n == 0 {
                    self.st("this");
                } else {
                    self.st("{parm#");
                    self.num(node.n);
                    self.ch(b'}');
                }
            }
            K::GlobalConstructors => self.words(opts, "global constructors keyed to ", l),
            K::GlobalDestructors => self.words(opts, "global destructors keyed to ", l),
            K::Lambda => {
                self.st("{lambda(");
                self.is_lambda_arg += 1;
                self.comp(opts, l);
                self.is_lambda_arg -= 1;
                self.st(")#");
                self.num(node.n + 1);
                self.ch(b'}');
            }
            K::UnnamedType => {
                self.st("{unnamed type#");
                self.num(node.n + 1);
                self.ch(b'}');
            }
            K::ExtendedBuiltin => {
                self.st("_Float");
                self.num(node.n);
                self.buf(node.s);
            }
            K::StructuredBinding => {
                self.ch(b'[');
                let mut cur = Some(dc);
                while let Some(c) = cur {
                    self.comp(opts, self.node(c).l);
                    cur = self.node(c).r;
                    if cur.is_some() {
                        self.st(", ");
                    }
                }
                self.ch(b']');
            }
            K::ModuleName | K::ModulePartition => {
                if l.is_some() {
                    self.comp(opts, l);
                }
                if node.k == K::ModulePartition {
                    self.ch(b':');
                } else if l.is_some() {
                    self.ch(b'.');
                }
                self.comp(opts, r);
            }
            K::ModuleEntity => {
                self.comp(opts, l);
                self.ch(b'@');
                self.comp(opts, r);
            }
            K::Clone => {
                self.comp(opts, l);
                self.st(" [clone ");
                self.comp(opts, r);
                self.ch(b']');
            }
            _ => self.failed = true,
        }
    }

    fn words(&mut self, opts: u8, w: &str, x: Option<Id>) {
        self.st(w);
        self.comp(opts, x);
    }

    fn java_identifier(&mut self, s: &[u8]) {
        let mut p = 0;
        while p < s.len() {
            if s.len() - p > 3 && s[p] == b'_' && s[p + 1] == b'_' && s[p + 2] == b'U' {
                let mut c: u64 = 0;
                let mut q = p + 3;
                while q < s.len() {
                    let Some(d) = (s[q] as char).to_digit(16) else {
                        break;
                    };
                    c = c.saturating_mul(16).saturating_add(u64::from(d));
                    q += 1;
                }
                if q < s.len() && s[q] == b'_' && c < 256 {
                    self.ch(c as u8);
                    p = q + 1;
                    continue;
                }
            }
            self.ch(s[p]);
            p += 1;
        }
    }

    fn typed_name(&mut self, opts: u8, dc: Id) {
        let hold_modifiers = self.modifiers;
        self.modifiers = None;
        let mut adpm: Vec<usize> = Vec::with_capacity(4);
        let mut typed = self.node(dc).l;
        while let Some(t) = typed {
            if adpm.len() >= 4 {
                self.failed = true;
                return;
            }
            adpm.push(self.push_mod(t));
            if !is_fnqual(self.kind(t)) {
                break;
            }
            typed = self.node(t).l;
        }
        let Some(mut tn) = typed else {
            self.failed = true;
            return;
        };
        // A class local to a const member function: the qualifiers on the local name's
        // right side apply here.
        if self.kind(tn) == K::LocalName {
            let Some(mut t) = self.node(tn).r else {
                self.failed = true;
                return;
            };
            if self.kind(t) == K::DefaultArg {
                let Some(s) = self.node(t).l else {
                    self.failed = true;
                    return;
                };
                t = s;
            }
            while is_fnqual(self.kind(t)) {
                if adpm.len() >= 4 {
                    self.failed = true;
                    return;
                }
                let Some(&prev) = adpm.last() else {
                    self.failed = true;
                    return;
                };
                let copy = self.mods[prev];
                self.mods.push(Mod {
                    next: Some(prev),
                    ..copy
                });
                let i = self.mods.len() - 1;
                self.modifiers = Some(i);
                self.mods[prev].m = t;
                self.mods[prev].printed = false;
                self.mods[prev].templates = self.templates;
                adpm.push(i);
                let Some(next) = self.node(t).l else {
                    self.failed = true;
                    return;
                };
                t = next;
            }
            tn = t;
        }
        let is_template = self.kind(tn) == K::Template;
        let hold_templates = if is_template {
            Some(self.push_template(tn))
        } else {
            None
        };
        self.comp(opts, self.node(dc).r);
        if let Some(h) = hold_templates {
            self.templates = h;
        }
        for &i in adpm.iter().rev() {
            if !self.mods[i].printed {
                self.ch(b' ');
                self.print_mod(opts, self.mods[i].m);
            }
        }
        self.modifiers = hold_modifiers;
    }

    fn reference(&mut self, opts: u8, dc: Id) {
        let mut dc = dc;
        let mut mod_inner = None;
        let mut saved_templates = None;
        let Some(mut sub) = self.node(dc).l else {
            self.failed = true;
            return;
        };
        if self.is_lambda_arg == 0 && self.kind(sub) == K::TemplateParam {
            match self.saved_scopes.iter().find(|s| s.0 == sub).copied() {
                None => self.saved_scopes.push((sub, self.templates)),
                Some((_, scope)) => {
                    let n = self.stack.len();
                    let found = self.stack.contains(&sub)
                        || self.stack[..n.saturating_sub(1)].contains(&dc);
                    if !found {
                        saved_templates = Some(self.templates);
                        self.templates = scope;
                    }
                }
            }
            let mut a = self.lookup_template_argument(sub);
            if let Some(x) = a
                && self.kind(x) == K::TemplateArgList
            {
                a = self.index_template_argument(Some(x), self.pack_index);
            }
            let Some(a) = a else {
                if let Some(t) = saved_templates {
                    self.templates = t;
                }
                self.failed = true;
                return;
            };
            sub = a;
        }
        let sk = self.kind(sub);
        if sk == K::Reference || sk == self.kind(dc) {
            dc = sub;
        } else if sk == K::RvalueReference {
            mod_inner = self.node(sub).l;
        }
        self.modifier(opts, dc, mod_inner, saved_templates);
    }

    fn modifier(
        &mut self,
        opts: u8,
        dc: Id,
        mod_inner: Option<Id>,
        saved_templates: Option<Option<usize>>,
    ) {
        let hold = self.modifiers;
        let i = self.push_mod(dc);
        let inner = mod_inner.or(self.node(dc).l);
        self.comp(opts, inner);
        if !self.mods[i].printed {
            self.print_mod(opts, dc);
        }
        self.modifiers = hold;
        if let Some(t) = saved_templates {
            self.templates = t;
        }
    }

    fn array(&mut self, opts: u8, dc: Id) {
        let hold = self.modifiers;
        let first = self.push_mod(dc);
        let mut adpm = vec![first];
        let mut p = hold;
        while let Some(pi) = p {
            let pm = self.mods[pi];
            if !matches!(self.kind(pm.m), K::Restrict | K::Volatile | K::Const) {
                break;
            }
            if !pm.printed {
                if adpm.len() >= 4 {
                    self.failed = true;
                    return;
                }
                self.mods.push(Mod {
                    next: self.modifiers,
                    ..pm
                });
                let i = self.mods.len() - 1;
                self.modifiers = Some(i);
                self.mods[pi].printed = true;
                adpm.push(i);
            }
            p = pm.next;
        }
        self.comp(opts, self.node(dc).r);
        self.modifiers = hold;
        if self.mods[first].printed {
            return;
        }
        for &i in adpm[1..].iter().rev() {
            self.print_mod(opts, self.mods[i].m);
        }
        self.array_type(opts, dc, self.modifiers);
    }

    fn mod_list(&mut self, opts: u8, mods: Option<usize>, suffix: bool) {
        let mut cur = mods;
        while let Some(i) = cur {
            if self.failed {
                return;
            }
            let m = self.mods[i];
            if m.printed || (!suffix && is_fnqual(self.kind(m.m))) {
                cur = m.next;
                continue;
            }
            self.mods[i].printed = true;
            let hold = self.templates;
            self.templates = m.templates;
            match self.kind(m.m) {
                K::FunctionType => {
                    self.function_type(opts, m.m, m.next);
                    self.templates = hold;
                    return;
                }
                K::ArrayType => {
                    self.array_type(opts, m.m, m.next);
                    self.templates = hold;
                    return;
                }
                K::LocalName => {
                    let hold_mods = self.modifiers;
                    self.modifiers = None;
                    self.comp(opts, self.node(m.m).l);
                    self.modifiers = hold_mods;
                    self.sep(opts);
                    let mut d = self.node(m.m).r;
                    if let Some(x) = d
                        && self.kind(x) == K::DefaultArg
                    {
                        self.st("{default arg#");
                        self.num(self.node(x).n + 1);
                        self.st("}::");
                        d = self.node(x).l;
                    }
                    while let Some(x) = d
                        && is_fnqual(self.kind(x))
                    {
                        d = self.node(x).l;
                    }
                    self.comp(opts, d);
                    self.templates = hold;
                    return;
                }
                _ => {}
            }
            self.print_mod(opts, m.m);
            self.templates = hold;
            cur = m.next;
        }
    }

    fn print_mod(&mut self, opts: u8, m: Id) {
        let node = *self.node(m);
        match node.k {
            K::Restrict | K::RestrictThis => self.st(" restrict"),
            K::Volatile | K::VolatileThis => self.st(" volatile"),
            K::Const | K::ConstThis => self.st(" const"),
            K::TransactionSafe => self.st(" transaction_safe"),
            K::Noexcept | K::ThrowSpec => {
                self.st(if node.k == K::Noexcept {
                    " noexcept"
                } else {
                    " throw"
                });
                if node.r.is_some() {
                    self.ch(b'(');
                    self.comp(opts, node.r);
                    self.ch(b')');
                }
            }
            K::VendorTypeQual => {
                self.ch(b' ');
                self.comp(opts, node.r);
            }
            K::Pointer => {
                if opts & JAVA == 0 {
                    self.ch(b'*');
                }
            }
            K::ReferenceThis => self.st(" &"),
            K::Reference => self.ch(b'&'),
            K::RvalueReferenceThis => self.st(" &&"),
            K::RvalueReference => self.st("&&"),
            K::Complex => self.st(" _Complex"),
            K::Imaginary => self.st(" _Imaginary"),
            K::PtrmemType => {
                if self.last_char != b'(' {
                    self.ch(b' ');
                }
                self.comp(opts, node.l);
                self.st("::*");
            }
            K::TypedName => self.comp(opts, node.l),
            K::VectorType => {
                self.st(" __vector(");
                self.comp(opts, node.l);
                self.ch(b')');
            }
            _ => self.comp(opts, Some(m)),
        }
    }

    fn function_type(&mut self, opts: u8, dc: Id, mods: Option<usize>) {
        let mut need_paren = false;
        let mut need_space = false;
        let mut p = mods;
        while let Some(i) = p {
            let m = self.mods[i];
            if m.printed {
                break;
            }
            match self.kind(m.m) {
                K::Pointer | K::Reference | K::RvalueReference => need_paren = true,
                K::Restrict
                | K::Volatile
                | K::Const
                | K::VendorTypeQual
                | K::Complex
                | K::Imaginary
                | K::PtrmemType => {
                    need_space = true;
                    need_paren = true;
                }
                _ => {}
            }
            if need_paren {
                break;
            }
            p = m.next;
        }
        if need_paren {
            if !need_space && self.last_char != b'(' && self.last_char != b'*' {
                need_space = true;
            }
            if need_space && self.last_char != b' ' {
                self.ch(b' ');
            }
            self.ch(b'(');
        }
        let hold = self.modifiers;
        self.modifiers = None;
        self.mod_list(opts, mods, false);
        if need_paren {
            self.ch(b')');
        }
        self.ch(b'(');
        if let Some(r) = self.node(dc).r {
            self.comp(opts, Some(r));
        }
        self.ch(b')');
        self.mod_list(opts, mods, true);
        self.modifiers = hold;
    }

    fn array_type(&mut self, opts: u8, dc: Id, mods: Option<usize>) {
        let mut need_space = true;
        if mods.is_some() {
            let mut need_paren = false;
            let mut p = mods;
            while let Some(i) = p {
                let m = self.mods[i];
                if !m.printed {
                    if self.kind(m.m) == K::ArrayType {
                        need_space = false;
                    } else {
                        need_paren = true;
                        need_space = true;
                    }
                    break;
                }
                p = m.next;
            }
            if need_paren {
                self.st(" (");
            }
            self.mod_list(opts, mods, false);
            if need_paren {
                self.ch(b')');
            }
        }
        if need_space {
            self.ch(b' ');
        }
        self.ch(b'[');
        if let Some(l) = self.node(dc).l {
            self.comp(opts, Some(l));
        }
        self.ch(b']');
    }

    fn expr_op(&mut self, opts: u8, dc: Option<Id>) {
        match dc {
            Some(d) if self.kind(d) == K::Operator => {
                let (_, name, _) = op_info(self.node(d).n);
                self.st(name);
            }
            _ => self.comp(opts, dc),
        }
    }

    fn conversion(&mut self, opts: u8, dc: Id) {
        let hold = self.templates;
        if let Some(t) = self.current_template {
            self.push_template(t);
        }
        let Some(l) = self.node(dc).l else {
            self.failed = true;
            return;
        };
        if self.kind(l) != K::Template {
            self.comp(opts, Some(l));
            self.templates = hold;
        } else {
            self.comp(opts, self.node(l).l);
            self.templates = hold;
            if self.last_char == b'<' {
                self.ch(b' ');
            }
            self.ch(b'<');
            self.comp(opts, self.node(l).r);
            if self.last_char == b'>' {
                self.ch(b' ');
            }
            self.ch(b'>');
        }
    }

    fn unary(&mut self, opts: u8, dc: Id) {
        let (Some(op), Some(mut operand)) = (self.node(dc).l, self.node(dc).r) else {
            self.failed = true;
            return;
        };
        let code = self.op_code(op);
        if code.is_some() {
            if code == Some(b"ad") {
                // The address of a function: its name without the parameter list.
                let o = *self.node(operand);
                if o.k == K::TypedName
                    && o.l.is_some_and(|x| self.kind(x) == K::QualName)
                    && o.r.is_some_and(|x| self.kind(x) == K::FunctionType)
                    && let Some(x) = o.l
                {
                    operand = x;
                }
            }
            if self.kind(operand) == K::BinaryArgs {
                // A suffix operator (`x++`).
                self.subexpr(opts, self.node(operand).l);
                self.expr_op(opts, Some(op));
                return;
            }
        }
        if code == Some(b"sZ") {
            let a = self.find_pack(Some(operand));
            let len = self.pack_length(a);
            self.num(len);
            return;
        }
        if code == Some(b"sP") {
            let len = self.args_length(Some(operand));
            self.num(len);
            return;
        }
        if self.kind(op) != K::Cast {
            self.expr_op(opts, Some(op));
        } else {
            self.ch(b'(');
            self.comp(opts, self.node(op).l);
            self.ch(b')');
        }
        if code == Some(b"gs") {
            self.comp(opts, Some(operand));
        } else if code == Some(b"st") {
            self.ch(b'(');
            self.comp(opts, Some(operand));
            self.ch(b')');
        } else {
            self.subexpr(opts, Some(operand));
        }
    }

    fn binary(&mut self, opts: u8, dc: Id) {
        let (Some(op), Some(args)) = (self.node(dc).l, self.node(dc).r) else {
            self.failed = true;
            return;
        };
        if self.kind(args) != K::BinaryArgs {
            self.failed = true;
            return;
        }
        let code = self.op_code(op);
        if let Some(c) = code
            && is_new_cast(c)
        {
            self.expr_op(opts, Some(op));
            self.ch(b'<');
            self.comp(opts, self.node(args).l);
            self.st(">(");
            self.comp(opts, self.node(args).r);
            self.ch(b')');
            return;
        }
        if self.maybe_fold(opts, dc) || self.maybe_designated_init(opts, dc) {
            return;
        }
        let gt = code.is_some() && op_info(self.node(op).n).1 == ">";
        if gt {
            self.ch(b'(');
        }
        let left = self.node(args).l;
        if code == Some(b"cl")
            && let Some(f) = left
            && self.kind(f) == K::TypedName
        {
            // A call in an expression: the function's name without its parameter types.
            if !self
                .node(f)
                .r
                .is_some_and(|x| self.kind(x) == K::FunctionType)
            {
                self.failed = true;
            }
            self.subexpr(opts, self.node(f).l);
        } else {
            self.subexpr(opts, left);
        }
        if code == Some(b"ix") {
            self.ch(b'[');
            self.comp(opts, self.node(args).r);
            self.ch(b']');
        } else {
            if code != Some(b"cl") {
                self.expr_op(opts, Some(op));
            }
            self.subexpr(opts, self.node(args).r);
        }
        if gt {
            self.ch(b')');
        }
    }

    fn trinary(&mut self, opts: u8, dc: Id) {
        let (Some(op), Some(a1)) = (self.node(dc).l, self.node(dc).r) else {
            self.failed = true;
            return;
        };
        let a2 = self.node(a1).r;
        if self.kind(a1) != K::TrinaryArg1 || !a2.is_some_and(|x| self.kind(x) == K::TrinaryArg2) {
            self.failed = true;
            return;
        }
        if self.maybe_fold(opts, dc) || self.maybe_designated_init(opts, dc) {
            return;
        }
        let Some(a2) = a2 else { return };
        let first = self.node(a1).l;
        let second = self.node(a2).l;
        let third = self.node(a2).r;
        if self.op_code(op) == Some(b"qu") {
            self.subexpr(opts, first);
            self.expr_op(opts, Some(op));
            self.subexpr(opts, second);
            self.st(" : ");
            self.subexpr(opts, third);
        } else {
            self.st("new ");
            if let Some(f) = first
                && self.node(f).l.is_some()
            {
                self.subexpr(opts, first);
                self.ch(b' ');
            }
            self.comp(opts, second);
            if third.is_some() {
                self.subexpr(opts, third);
            }
        }
    }

    fn literal(&mut self, opts: u8, dc: Id) {
        let node = *self.node(dc);
        let (Some(ty), Some(val)) = (node.l, node.r) else {
            self.failed = true;
            return;
        };
        let neg = node.k == K::LiteralNeg;
        let mut tp = Lit::Default;
        if self.kind(ty) == K::BuiltinType {
            tp = builtin(self.node(ty).n).2;
            let v = *self.node(val);
            match tp {
                Lit::Int
                | Lit::Unsigned
                | Lit::Long
                | Lit::UnsignedLong
                | Lit::LongLong
                | Lit::UnsignedLongLong
                    if v.k == K::Name =>
                {
                    if neg {
                        self.ch(b'-');
                    }
                    self.comp(opts, Some(val));
                    self.st(match tp {
                        Lit::Unsigned => "u",
                        Lit::Long => "l",
                        Lit::UnsignedLong => "ul",
                        Lit::LongLong => "ll",
                        Lit::UnsignedLongLong => "ull",
                        _ => "",
                    });
                    return;
                }
                Lit::Bool if v.k == K::Name && v.s.len() == 1 && !neg => match v.s[0] {
                    b'0' => {
                        self.st("false");
                        return;
                    }
                    b'1' => {
                        self.st("true");
                        return;
                    }
                    _ => {}
                },
                _ => {}
            }
        }
        self.ch(b'(');
        self.comp(opts, Some(ty));
        self.ch(b')');
        if neg {
            self.ch(b'-');
        }
        if tp == Lit::Float {
            self.ch(b'[');
        }
        self.comp(opts, Some(val));
        if tp == Lit::Float {
            self.ch(b']');
        }
    }
}

fn builtin(n: i64) -> (&'static str, &'static str, Lit) {
    usize::try_from(n)
        .ok()
        .and_then(|i| BUILTINS.get(i).copied())
        .unwrap_or(("", "", Lit::Default))
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

//! The printer: components into text, with a stack of pending type modifiers (so that
//! declarators come out in C++ order) and a stack of the templates whose parameters are in
//! scope (libiberty's `d_print_*`).

use std::fmt::Write as _;

use super::ast::{Id, K, Node, is_fnqual};
use super::tables::{Lit, builtin, is_new_cast, op_info};

/// Print option: Java rendering (`.` between scopes, no `*`, Java names of builtin types).
pub(super) const JAVA: u8 = 1;
/// Print option: the return type of a function type after its parameters.
pub(super) const RET_POSTFIX: u8 = 2;
/// Print option: no return type at all (never set by gprof; kept so the rules read as written).
const RET_DROP: u8 = 4;
/// libiberty's limit on nested printing calls.
const MAX_PRINT_RECURSION: u32 = 1024;
/// Our own cap on the printed text: a pack expanded inside a pack can multiply a short name.
const MAX_OUTPUT: usize = 1 << 20;

/// A pending type modifier while printing (libiberty's `d_print_mod`), in an arena: `next`
/// links to the modifier pushed before it.
#[derive(Clone, Copy)]
struct Mod {
    m: Id,
    printed: bool,
    templates: Option<usize>,
    next: Option<usize>,
}

pub(super) struct Printer<'p, 'a> {
    nodes: &'p [Node<'a>],
    pub(super) out: Vec<u8>,
    last_char: u8,
    /// Template scopes: (template component, enclosing scope), linked like a stack.
    tframes: Vec<(Id, Option<usize>)>,
    templates: Option<usize>,
    mods: Vec<Mod>,
    modifiers: Option<usize>,
    pub(super) failed: bool,
    recursion: u32,
    is_lambda_arg: i32,
    pack_index: i64,
    stack: Vec<Id>,
    saved_scopes: Vec<(Id, Option<usize>)>,
    current_template: Option<Id>,
    printing: Vec<u8>,
}

impl<'p, 'a> Printer<'p, 'a> {
    pub(super) fn new(nodes: &'p [Node<'a>]) -> Printer<'p, 'a> {
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
    pub(super) fn comp(&mut self, opts: u8, dc: Option<Id>) {
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

//! The parser: a mangled name into a tree of components (libiberty's `d_*` grammar
//! functions), with the ABI's substitution table and libiberty's limits.

use super::ast::{Id, K, Node, is_fnqual};
use super::tables::{BFLOAT16_BUILTIN, NULLPTR_BUILTIN, OPERATORS, STD_SUBS, is_new_cast, op_info};

/// libiberty rejects names whose component budget (two per byte) exceeds its recursion limit.
pub(super) const MAX_NAME_LEN: usize = 1024;
/// libiberty's limit on nested function types while parsing.
const MAX_FUNCTION_NESTING: u32 = 2048;
/// Our own bound on the parser's recursion (libiberty has none besides the function-type one).
/// A name of at most `MAX_NAME_LEN` bytes nests at most two levels per byte, so this never
/// cuts a name libiberty reads; it only bounds the stack (the deepest 1024-byte names need
/// about 256 KiB in a release build).
const MAX_PARSE_DEPTH: u32 = 2 * MAX_NAME_LEN as u32 + 16;

/// Parses the whole name; `None` unless every byte is used.
pub(super) fn parse_top(p: &mut Parser<'_>, global: Option<K>) -> Option<Id> {
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

pub(super) struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    pub(super) nodes: Vec<Node<'a>>,
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
    pub(super) unresolved_name_state: i8,
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
    pub(super) fn new(s: &'a [u8], java: bool) -> Parser<'a> {
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

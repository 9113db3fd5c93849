//! The fixed tables of the ABI: builtin types (with how each prints as a literal's type),
//! operators and the standard abbreviations (`St`, `Sa`, `Ss`, ...).

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Lit {
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
pub(super) const BUILTINS: [(&str, &str, Lit); 35] = [
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
pub(super) const NULLPTR_BUILTIN: i64 = 33;
pub(super) const BFLOAT16_BUILTIN: i64 = 34;

/// Operators: code, printed name, operand count.
pub(super) const OPERATORS: [(&[u8; 2], &str, u8); 72] = [
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
pub(super) fn op_info(n: i64) -> (&'static [u8; 2], &'static str, u8) {
    usize::try_from(n)
        .ok()
        .and_then(|i| OPERATORS.get(i).copied())
        .unwrap_or((b"  ", " ", 0))
}

/// Whether an operator code is one of the casts written `static_cast<T>(e)` (`sc`, `dc`,
/// `cc`, `rc`).
pub(super) fn is_new_cast(code: &[u8; 2]) -> bool {
    code[1] == b'c' && matches!(code[0], b's' | b'd' | b'c' | b'r')
}

/// The standard abbreviations: code, short text, full text (before a constructor or
/// destructor), and the name a constructor or destructor of it takes.
pub(super) const STD_SUBS: [(u8, &str, &str, &str); 7] = [
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

/// A builtin type's table entry (its index is checked when the node is made).
pub(super) fn builtin(n: i64) -> (&'static str, &'static str, Lit) {
    usize::try_from(n)
        .ok()
        .and_then(|i| BUILTINS.get(i).copied())
        .unwrap_or(("", "", Lit::Default))
}

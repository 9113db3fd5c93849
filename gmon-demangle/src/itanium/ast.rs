//! The components a mangled name is parsed into: their kinds and the arena node.

/// Index of a component in the parser's arena.
pub(super) type Id = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum K {
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
pub(super) fn is_fnqual(k: K) -> bool {
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
pub(super) struct Node<'a> {
    pub(super) k: K,
    pub(super) l: Option<Id>,
    pub(super) r: Option<Id>,
    pub(super) s: &'a [u8],
    pub(super) n: i64,
}

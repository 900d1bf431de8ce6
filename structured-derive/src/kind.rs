//! What a field's type is, as far as syntax tells: enough to choose how `from_text` fills it.
//! Types syntax cannot name (aliases, other paths) are `Path`, and the runtime traits decide.

use syn::{GenericArgument, PathArguments, Type};

/// A scalar type known by name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    Int {
        name: &'static str,
        min: i128,
        max: i128,
    },
    Float,
    Str,
    Bool,
}

/// The scalar named `ident`, if it is one.
pub fn scalar(ident: &str) -> Option<Scalar> {
    let int = |name, min, max| Some(Scalar::Int { name, min, max });
    match ident {
        "i8" => int("i8", i8::MIN.into(), i8::MAX.into()),
        "i16" => int("i16", i16::MIN.into(), i16::MAX.into()),
        "i32" => int("i32", i32::MIN.into(), i32::MAX.into()),
        "i64" => int("i64", i64::MIN.into(), i64::MAX.into()),
        "isize" => int("isize", i64::MIN.into(), i64::MAX.into()),
        "i128" => int("i128", i128::MIN, i128::MAX),
        "u8" => int("u8", 0, u8::MAX.into()),
        "u16" => int("u16", 0, u16::MAX.into()),
        "u32" => int("u32", 0, u32::MAX.into()),
        "u64" => int("u64", 0, u64::MAX.into()),
        "usize" => int("usize", 0, u64::MAX.into()),
        "u128" => int("u128", 0, i128::MAX),
        "f32" | "f64" => Some(Scalar::Float),
        "String" | "str" | "char" => Some(Scalar::Str),
        "bool" => Some(Scalar::Bool),
        _ => None,
    }
}

/// A field type for `from_text`.
pub enum Kind {
    Scalar(Scalar),
    /// `Vec<T>`: always left empty.
    Vec,
    /// A named type that is none of the above: a unit enum, or a nested struct.
    Path,
    /// Anything else (`Box<T>`, tuples, `Option<Option<T>>`).
    Other,
}

/// A field's kind, and whether it is an `Option` of it.
pub struct FieldKind {
    pub optional: bool,
    pub kind: Kind,
}

impl FieldKind {
    pub fn of(ty: &Type) -> FieldKind {
        match wrapper(ty, "Option") {
            Some(inner) => FieldKind {
                optional: true,
                kind: match wrapper(inner, "Option") {
                    Some(_) => Kind::Other,
                    None => kind(inner),
                },
            },
            None => FieldKind {
                optional: false,
                kind: kind(ty),
            },
        }
    }
}

fn kind(ty: &Type) -> Kind {
    let ty = unparen(ty);
    if wrapper(ty, "Vec").is_some() {
        return Kind::Vec;
    }
    let Type::Path(p) = ty else {
        return Kind::Other;
    };
    let Some(last) = p.path.segments.last() else {
        return Kind::Other;
    };
    if p.qself.is_some() || wrapper(ty, "Box").is_some() {
        return Kind::Other;
    }
    match scalar(&last.ident.to_string()) {
        Some(s) if last.arguments.is_empty() => Kind::Scalar(s),
        _ => Kind::Path,
    }
}

pub fn unparen(ty: &Type) -> &Type {
    match ty {
        Type::Paren(p) => unparen(&p.elem),
        Type::Group(g) => unparen(&g.elem),
        _ => ty,
    }
}

/// `T` when `ty` is `name<T>`.
pub fn wrapper<'a>(ty: &'a Type, name: &str) -> Option<&'a Type> {
    let Type::Path(p) = unparen(ty) else {
        return None;
    };
    if p.qself.is_some() {
        return None;
    }
    let last = p.path.segments.last()?;
    if last.ident != name {
        return None;
    }
    match &last.arguments {
        PathArguments::AngleBracketed(args) if args.args.len() == 1 => match args.args.first() {
            Some(GenericArgument::Type(inner)) => Some(inner),
            _ => None,
        },
        _ => None,
    }
}

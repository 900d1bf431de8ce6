//! Rules that look at more than one attribute or at the field type. Every rule reports at the
//! offending token and says how to fix it; `emit` relies on these and reports nothing itself.

use syn::{Data, Fields, GenericArgument, GenericParam, PathArguments, Type};

use crate::ast::{Body, Container, Field, Shape, Tagging, Variant};
use crate::attr::{BoundValue, FieldAttrs};
use crate::ctxt::Ctxt;
use crate::kind::{self, Scalar};

mod fallback;
mod markdown;

pub fn check(cx: &Ctxt, cont: &Container) {
    shape(cx, cont);
    generics(cx, cont);
    name(cx, cont);
    match &cont.body {
        Body::Struct(fields) => {
            fields.iter().for_each(|f| field(cx, f));
            fallback::check(cx, fields);
            markdown::check(cx, fields);
        }
        Body::Newtype(f) => field(cx, f),
        Body::Tuple(fields) => fields.iter().for_each(|f| field(cx, f)),
        Body::Enum(variants) => enum_variants(cx, cont, variants),
        Body::Unsupported => {}
    }
    if let (Some(span), false) = (cont.serde.tag_span, matches!(cont.body, Body::Enum(_))) {
        cx.error_at(
            span,
            "#[serde(tag = \"..\")] on a struct adds a property the fields do not declare: declare it as a field, or use an enum",
        );
    }
}

fn shape(cx: &Ctxt, cont: &Container) {
    match &cont.original.data {
        Data::Union(u) => cx.error_spanned_by(
            u.union_token,
            "unions have no JSON form: use a struct with named fields, or a unit-only enum for a choice of strings",
        ),
        Data::Struct(s) => match &s.fields {
            Fields::Unit => cx.error_spanned_by(
                cont.ident,
                "a unit struct has no properties to ask a model for: add named fields",
            ),
            _ if cont.serde.transparent && !matches!(cont.body, Body::Newtype(_)) => cx
                .error_spanned_by(
                    cont.ident,
                    "#[serde(transparent)] needs exactly one field that is not skipped",
                ),
            _ => {}
        },
        Data::Enum(_) => {}
    }
}

fn generics(cx: &Ctxt, cont: &Container) {
    for param in &cont.original.generics.params {
        if let GenericParam::Lifetime(l) = param {
            cx.error_spanned_by(
                &l.lifetime,
                "lifetime parameters are not supported: a model's answer is read into owned values, so use `String` instead of `&str`",
            );
        }
    }
}

fn name(cx: &Ctxt, cont: &Container) {
    let valid = |n: &str| {
        (1..=64).contains(&n.len())
            && n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    match &cont.attrs.name {
        Some(n) if !valid(&n.value) => cx.error_at(
            n.span,
            format!(
                "schema name {:?} is invalid: providers take 1 to 64 characters from a-z, A-Z, 0-9, `_` and `-`",
                n.value
            ),
        ),
        Some(_) => {}
        None => {
            let default = cont.schema_name();
            if !valid(&default) {
                cx.error_spanned_by(
                    cont.ident,
                    format!(
                        "the default schema name {default:?} is invalid (1 to 64 characters from a-z, A-Z, 0-9, `_` and `-`): set one with #[structured(name = \"..\")]"
                    ),
                );
            }
        }
    }
}

fn enum_variants(cx: &Ctxt, cont: &Container, variants: &[Variant]) {
    if variants.is_empty() {
        cx.error_spanned_by(
            cont.ident,
            "an enum with no variants has no values to ask for: add unit variants",
        );
    }
    if !variants.is_empty() && variants.iter().all(|v| v.skip) {
        cx.error_spanned_by(
            cont.ident,
            "every variant is skipped, so no value is allowed: keep at least one",
        );
    }
    for v in variants {
        match &v.shape {
            Shape::Unit => {}
            Shape::Newtype(f) => field(cx, f),
            Shape::Tuple(fields) | Shape::Struct(fields) => {
                fields.iter().for_each(|f| field(cx, f));
            }
        }
        if let (Shape::Tuple(_), Tagging::Internal { .. }) = (&v.shape, &cont.tagging) {
            cx.error_spanned_by(
                &v.original.fields,
                "an internally tagged enum cannot hold a tuple variant (serde writes its tag beside named fields): use named fields, or #[serde(tag = \"..\", content = \"..\")]",
            );
        }
        not_on_variant(cx, &v.attrs);
    }
    markdown::check_variants(cx, cont.tagging == Tagging::Untagged, variants);
}

fn not_on_variant(cx: &Ctxt, attrs: &FieldAttrs) {
    if let Some(r) = &attrs.range {
        cx.error_at(
            r.span,
            "#[range] applies to numeric fields, not to enum variants",
        );
    }
    if let Some(l) = &attrs.length {
        cx.error_at(
            l.span,
            "#[length] applies to String and Vec fields, not to enum variants",
        );
    }
    if let Some(p) = &attrs.pattern {
        cx.error_at(
            p.span,
            "#[pattern] applies to String fields, not to enum variants",
        );
    }
    if let Some(e) = &attrs.enum_values {
        cx.error_at(
            e.span,
            "#[enum_values] applies to String fields; an enum's values are its variants",
        );
    }
    if let Some(fb) = &attrs.fallback {
        cx.error_at(
            fb.span,
            "#[fallback_keyword] goes on the struct field of this enum's type, e.g. #[fallback_keyword(\"exit\", default = \"observe\")]",
        );
    }
}

fn field(cx: &Ctxt, f: &Field) {
    let leaf = leaf(f.ty);
    if f.serde.skip {
        if let Some(r) = &f.attrs.range {
            cx.error_at(r.span, "#[range] on a skipped field has no effect: serde never reads it; remove one of them");
        }
        if let Some(l) = &f.attrs.length {
            cx.error_at(l.span, "#[length] on a skipped field has no effect: serde never reads it; remove one of them");
        }
        if let Some(p) = &f.attrs.pattern {
            cx.error_at(p.span, "#[pattern] on a skipped field has no effect: serde never reads it; remove one of them");
        }
        if let Some(fa) = &f.attrs.format {
            cx.error_at(fa.span, "#[format] on a skipped field has no effect: serde never reads it; remove one of them");
        }
        if let Some(e) = &f.attrs.enum_values {
            cx.error_at(e.span, "#[enum_values] on a skipped field has no effect: serde never reads it; remove one of them");
        }
        if let Some(fb) = &f.attrs.fallback {
            cx.error_at(fb.span, "#[fallback_keyword] on a skipped field has no effect: from_text gives it its Default, as serde does; remove one of them");
        }
        // Never read from the model, so its type needs no schema.
        return;
    }
    unsupported_type(cx, f.ty);
    if f.serde.flatten {
        flattened(cx, f);
    }
    if let Some(length) = &f.attrs.length {
        if let (Some(lo), Some(hi)) = (&length.min, &length.max) {
            if lo.value > hi.value {
                cx.error_at(
                    lo.span,
                    format!(
                        "length minimum {} is greater than its maximum {}: write #[length(min = .., max = ..)] with min <= max",
                        lo.value, hi.value
                    ),
                );
            }
        }
    }
    if let Some(range) = &f.attrs.range {
        match &leaf {
            Some(Scalar::Str | Scalar::Bool) => cx.error_at(
                range.span,
                format!(
                    "#[range] applies to numeric fields, found `{}`: for strings use #[enum_values(..)]",
                    type_text(f.ty)
                ),
            ),
            Some(Scalar::Int { name, min, max }) => {
                for b in [&range.min, &range.max].into_iter().flatten() {
                    match b.value {
                        BoundValue::Float(x) => cx.error_at(
                            b.span,
                            format!("`{name}` takes integer bounds, found `{x:?}`: write a whole number"),
                        ),
                        BoundValue::Int(i) if i < *min || i > *max => cx.error_at(
                            b.span,
                            format!("bound {i} is outside `{name}` ({min}..={max}): use a bound the type can hold, or a wider type"),
                        ),
                        BoundValue::Int(_) => {}
                    }
                }
            }
            Some(Scalar::Float) | None => {}
        }
        if let (Some(lo), Some(hi)) = (&range.min, &range.max) {
            if lo.value.as_f64() > hi.value.as_f64() {
                cx.error_at(
                    lo.span,
                    format!("range minimum {} is greater than its maximum {}: write #[range(min, max)] with min <= max", lo.value, hi.value),
                );
            }
        }
    }
    if let Some(values) = &f.attrs.enum_values {
        if matches!(
            leaf,
            Some(Scalar::Int { .. } | Scalar::Float | Scalar::Bool)
        ) {
            cx.error_at(
                values.span,
                format!(
                    "#[enum_values] applies to String fields, found `{}`: for numbers use #[range(min, max)]",
                    type_text(f.ty)
                ),
            );
        }
    }
}

/// A flattened field: its type's properties become the struct's, so it must be an object with
/// properties of its own, and rules go on those.
fn flattened(cx: &Ctxt, f: &Field) {
    if kind::wrapper(f.ty, "Option").is_some() {
        cx.error_spanned_by(
            f.ty,
            "a flattened Option makes every property it holds optional, which a strict schema cannot say: flatten the struct itself, or nest it as a field",
        );
    }
    let rules = [
        f.attrs.range.as_ref().map(|r| r.span),
        f.attrs.length.as_ref().map(|r| r.span),
        f.attrs.pattern.as_ref().map(|r| r.span),
        f.attrs.format.as_ref().map(|r| r.span),
        f.attrs.enum_values.as_ref().map(|r| r.span),
    ];
    for span in rules.into_iter().flatten() {
        cx.error_at(
            span,
            "a flattened field has no value of its own to hold a rule: put the rule on the fields of its type",
        );
    }
}

/// Types with no strict schema, reported where they appear (also inside `Vec<..>`, `Option<..>`).
fn unsupported_type(cx: &Ctxt, ty: &Type) {
    match ty {
        Type::Path(p) => {
            let Some(last) = p.path.segments.last() else { return };
            let name = last.ident.to_string();
            let why = match name.as_str() {
                "IndexMap" | "Map" | "IndexSet" => Some(
                    "this collection has no schema here: use HashMap or BTreeMap (keyed by String or a unit enum), HashSet or BTreeSet",
                ),
                "Value" => Some(
                    "`serde_json::Value` has no strict schema (any JSON fits it): declare a struct for the shape you expect",
                ),
                _ => None,
            };
            if let Some(why) = why {
                cx.error_spanned_by(ty, why);
                return;
            }
            if let PathArguments::AngleBracketed(args) = &last.arguments {
                for arg in &args.args {
                    if let GenericArgument::Type(inner) = arg {
                        unsupported_type(cx, inner);
                    }
                }
            }
        }
        Type::Tuple(t) => t.elems.iter().for_each(|e| unsupported_type(cx, e)),
        Type::Array(a) => unsupported_type(cx, &a.elem),
        Type::Reference(_) => cx.error_spanned_by(
            ty,
            "references cannot hold a model's answer: use an owned type (`String` for `&str`)",
        ),
        Type::Slice(_) => cx.error_spanned_by(ty, "use `Vec<T>` for a list"),
        Type::Paren(p) => unsupported_type(cx, &p.elem),
        Type::Group(g) => unsupported_type(cx, &g.elem),
        Type::Ptr(_) | Type::BareFn(_) | Type::TraitObject(_) | Type::ImplTrait(_) | Type::Never(_) => {
            cx.error_spanned_by(ty, "this type has no JSON form: use String, a number, bool, Option, Vec, or a type that derives StructuredOutput")
        }
        _ => {}
    }
}

/// The innermost scalar of a field, seen through `Option`, `Vec` and `Box`, as far as syntax
/// tells. Types it cannot name (aliases, paths) are `None` and are checked by the trait bounds.
fn leaf(ty: &Type) -> Option<Scalar> {
    let Type::Path(p) = strip_wrappers(ty) else {
        return None;
    };
    let last = p.path.segments.last()?;
    if p.qself.is_some() || !last.arguments.is_empty() {
        return None;
    }
    kind::scalar(&last.ident.to_string())
}

fn strip_wrappers(ty: &Type) -> &Type {
    ["Option", "Vec", "Box"]
        .iter()
        .find_map(|name| kind::wrapper(ty, name))
        .map_or_else(|| kind::unparen(ty), strip_wrappers)
}

pub(crate) fn type_text(ty: &Type) -> String {
    quote::quote!(#ty)
        .to_string()
        .replace(" < ", "<")
        .replace(" >", ">")
        .replace("< ", "<")
}

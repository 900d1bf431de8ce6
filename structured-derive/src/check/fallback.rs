//! `#[fallback_keyword]` rules: the attribute must suit the field's type, and every field of a
//! type read from prose must get a value its own rules accept.

use crate::ast::Field;
use crate::attr::{BoundValue, DefaultValue, FallbackAttr, Keyword, RangeAttr};
use crate::ctxt::Ctxt;
use crate::kind::{FieldKind, Kind, Scalar};

use super::type_text;

pub fn check(cx: &Ctxt, fields: &[Field]) {
    let reads_text = fields.iter().any(|f| f.attrs.fallback.is_some());
    for f in fields.iter().filter(|f| !f.serde.skip) {
        match &f.attrs.fallback {
            Some(fb) => with_attr(cx, f, fb),
            None if reads_text => without_attr(cx, f),
            None => {}
        }
    }
}

fn with_attr(cx: &Ctxt, f: &Field, fb: &FallbackAttr) {
    let k = FieldKind::of(f.ty);
    let ty = type_text(f.ty);
    match k.kind {
        Kind::Vec | Kind::Other => cx.error_at(
            fb.span,
            format!("#[fallback_keyword] cannot fill `{ty}` from prose: only a String, bool, number or unit enum (or an Option of one) can be; remove the attribute and the field takes its empty value or Default"),
        ),
        Kind::Scalar(Scalar::Str) if f.attrs.enum_values.is_some() => choice(cx, f, fb, k.optional),
        Kind::Path => choice(cx, f, fb, k.optional),
        // An excerpt of the text fills an optional free-text field too (`Some`, the text's words).
        Kind::Scalar(Scalar::Str) if k.optional && fb.excerpt.is_some() => free_text(cx, f, fb),
        Kind::Scalar(Scalar::Str) | Kind::Scalar(Scalar::Bool) if k.optional => cx.error_at(
            fb.span,
            format!("#[fallback_keyword] on `{ty}`: a flag or fixed text is never absent from a reading; use `{}` without the Option (an optional free-text field takes `excerpt = N`)", ty.trim_start_matches("Option<").trim_end_matches('>')),
        ),
        Kind::Scalar(Scalar::Str) => free_text(cx, f, fb),
        Kind::Scalar(Scalar::Bool) => flag(cx, fb),
        Kind::Scalar(s @ (Scalar::Int { .. } | Scalar::Float)) => number(cx, f, fb, s, k.optional),
    }
}

/// A value chosen by keyword: a String with `#[enum_values]` or a unit enum.
fn choice(cx: &Ctxt, f: &Field, fb: &FallbackAttr, optional: bool) {
    if let Some(e) = &fb.excerpt {
        cx.error_at(
            e.span,
            "`excerpt` fills a free-text String; this field takes one of its values: remove `excerpt`",
        );
    }
    // A String's values are known here; an enum's are checked at compile time by generated code.
    let allowed: Option<Vec<&str>> = f
        .attrs
        .enum_values
        .as_ref()
        .map(|e| e.values.iter().map(|v| v.value.as_str()).collect());
    let check_value = |value: &str, span| {
        if let Some(allowed) = &allowed {
            if !allowed.contains(&value) {
                cx.error_at(
                    span,
                    format!(
                        "{value:?} is not one of `{}`'s #[enum_values]: use one of {}",
                        f.ident,
                        quoted(allowed)
                    ),
                );
            }
        }
    };
    for k in &fb.keywords {
        match k {
            Keyword::Plain(p) => check_value(&p.value, p.span),
            Keyword::Alias { value, .. } => check_value(&value.value, value.span),
        }
    }
    match &fb.default {
        Some(d) => match &d.value {
            DefaultValue::Str(s) => check_value(s, d.span),
            _ => cx.error_at(
                d.span,
                "`default` of a field chosen by keyword is one of its values, a string literal",
            ),
        },
        None if !optional => cx.error_at(
            fb.span,
            format!(
                "`{}` needs `default = \"..\"`: the value it takes when the text names none of its keywords{}",
                f.ident,
                allowed.map(|a| format!(", one of {}", quoted(&a))).unwrap_or_default()
            ),
        ),
        None => {}
    }
}

fn free_text(cx: &Ctxt, f: &Field, fb: &FallbackAttr) {
    if let Some(first) = fb.keywords.first() {
        let span = match first {
            Keyword::Plain(p) => p.span,
            Keyword::Alias { phrase, .. } => phrase.span,
        };
        cx.error_at(
            span,
            "a free-text String is not chosen by keyword: write `excerpt = N` for the first N characters, or `default = \"..\"`; keywords choose among #[enum_values]",
        );
        return;
    }
    match &fb.default {
        Some(d) if !matches!(d.value, DefaultValue::Str(_)) => cx.error_at(
            d.span,
            "`default` of a String is a string literal, e.g. `default = \"neutral\"`",
        ),
        None if fb.excerpt.is_none() => cx.error_at(
            fb.span,
            format!(
                "say how to fill `{}` from prose: `excerpt = N` (the first N characters of the text) or `default = \"..\"`",
                f.ident
            ),
        ),
        _ => {}
    }
}

fn flag(cx: &Ctxt, fb: &FallbackAttr) {
    if let Some(alias) = fb.first_alias() {
        cx.error_at(
            alias.span,
            "a bool has no values to alias: list the words that make it true, e.g. #[fallback_keyword(\"escalate\", \"page the on-call\")]",
        );
    }
    if let Some(d) = &fb.default {
        cx.error_at(
            d.span,
            "a bool read from prose is true when a keyword occurs and false otherwise: remove `default`",
        );
    }
    if let Some(e) = &fb.excerpt {
        cx.error_at(e.span, "`excerpt` fills a String: remove it");
    }
}

fn number(cx: &Ctxt, f: &Field, fb: &FallbackAttr, scalar: Scalar, optional: bool) {
    if let Some(alias) = fb.first_alias() {
        cx.error_at(
            alias.span,
            "a number has no values to alias: list the labels written before it, e.g. #[fallback_keyword(\"pleasure\", \"valence\")]",
        );
    }
    if let Some(e) = &fb.excerpt {
        cx.error_at(e.span, "`excerpt` fills a String: remove it");
    }
    match &fb.default {
        Some(d) => match d.value {
            DefaultValue::Number(v) => {
                if let (Scalar::Int { name, .. }, BoundValue::Float(x)) = (scalar, v) {
                    cx.error_at(
                        d.span,
                        format!("`{name}` takes an integer default, found `{x:?}`"),
                    );
                } else if let Some(why) = outside(v, scalar, f.attrs.range.as_ref()) {
                    cx.error_at(d.span, format!("default {v} {why}: the value read from prose must pass the field's own rules"));
                }
            }
            _ => cx.error_at(d.span, "`default` of a number is a number literal"),
        },
        None if !optional => {
            if let Some(why) = outside(BoundValue::Int(0), scalar, f.attrs.range.as_ref()) {
                cx.error_at(
                    fb.span,
                    format!(
                        "`{}` needs `default = ..`: without one it would be 0, which {why}",
                        f.ident
                    ),
                );
            }
        }
        None => {}
    }
}

/// A field without the attribute, in a type read from prose: its empty value or Default must
/// pass its own rules.
fn without_attr(cx: &Ctxt, f: &Field) {
    let k = FieldKind::of(f.ty);
    if k.optional {
        return;
    }
    match k.kind {
        Kind::Scalar(Scalar::Str) => {
            if let Some(e) = &f.attrs.enum_values {
                cx.error_spanned_by(
                    &f.ident,
                    format!(
                        "`{}` must hold one of its #[enum_values] when the type is read from prose: add #[fallback_keyword(default = {:?})] (and keywords to look for)",
                        f.ident,
                        e.values.first().map(|v| v.value.as_str()).unwrap_or_default()
                    ),
                );
            }
        }
        Kind::Scalar(s @ (Scalar::Int { .. } | Scalar::Float)) => {
            if let Some(why) = outside(BoundValue::Int(0), s, f.attrs.range.as_ref()) {
                cx.error_spanned_by(
                    &f.ident,
                    format!("`{}` would be 0 when the type is read from prose, which {why}: add #[fallback_keyword(default = ..)]", f.ident),
                );
            }
        }
        _ => {}
    }
}

/// Why `v` breaks the field's range or its type's bounds.
fn outside(v: BoundValue, scalar: Scalar, range: Option<&RangeAttr>) -> Option<String> {
    if let (Scalar::Int { name, min, max }, BoundValue::Int(i)) = (scalar, v) {
        if i < min || i > max {
            return Some(format!("does not fit `{name}`"));
        }
    }
    let range = range?;
    let x = v.as_f64();
    let below = range.min.as_ref().is_some_and(|m| x < m.value.as_f64());
    let above = range.max.as_ref().is_some_and(|m| x > m.value.as_f64());
    (below || above).then(|| {
        let show = |b: &Option<crate::attr::Spanned<BoundValue>>| {
            b.as_ref()
                .map(|b| b.value.to_string())
                .unwrap_or_else(|| "..".into())
        };
        format!(
            "is outside #[range({}, {})]",
            show(&range.min),
            show(&range.max)
        )
    })
}

fn quoted(values: &[&str]) -> String {
    values
        .iter()
        .map(|v| format!("{v:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

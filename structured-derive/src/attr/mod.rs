//! Each attribute → a typed value with its span. An unknown key, a duplicate, or a bad literal is
//! an error at that token; parsing goes on so every mistake is reported at once.

use proc_macro2::Span;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned as _;
use syn::{Attribute, Expr, ExprLit, Lit, Token, UnOp};

use crate::case::RenameRule;
use crate::ctxt::Ctxt;

mod fallback;
pub use fallback::{DefaultValue, FallbackAttr, Keyword};

/// A value with the span of the token it came from.
#[derive(Debug, Clone)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

/// `#[structured(...)]` on the type.
#[derive(Default)]
pub struct ContainerAttrs {
    pub name: Option<Spanned<String>>,
    pub description: Option<String>,
    /// `#[validate(with = path)]` on the type: run on the whole value.
    pub validators: Vec<syn::Path>,
}

/// What serde reads differently from the plain declaration. `default` is not here on purpose:
/// strict mode allows no optional property, so a defaulted field stays required in the schema.
#[derive(Default)]
pub struct SerdeContainer {
    pub rename_all: Option<RenameRule>,
    /// `rename_all_fields`: the rule for the fields of every struct variant.
    pub rename_all_fields: Option<RenameRule>,
    pub tag: Option<String>,
    pub content: Option<String>,
    pub untagged: bool,
    pub transparent: bool,
    /// Where `tag` was written, for errors on structs.
    pub tag_span: Option<Span>,
}

#[derive(Default)]
pub struct SerdeField {
    pub rename: Option<String>,
    pub skip: bool,
    /// `flatten`: the field's properties are the struct's own.
    pub flatten: bool,
    /// `alias = ".."`: other names serde also reads.
    pub aliases: Vec<String>,
    /// `rename_all` on a variant: the rule for its fields.
    pub rename_all: Option<RenameRule>,
}

/// A numeric literal bound of `#[range]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BoundValue {
    Int(i128),
    Float(f64),
}

impl BoundValue {
    pub fn as_f64(self) -> f64 {
        match self {
            BoundValue::Int(i) => i as f64,
            BoundValue::Float(f) => f,
        }
    }
}

impl std::fmt::Display for BoundValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BoundValue::Int(i) => write!(f, "{i}"),
            BoundValue::Float(x) => write!(f, "{x:?}"),
        }
    }
}

/// `#[range(min, max)]`, `#[range(min = ..)]`, `#[range(max = ..)]`.
pub struct RangeAttr {
    /// The `range` path of the attribute.
    pub span: Span,
    pub min: Option<Spanned<BoundValue>>,
    pub max: Option<Spanned<BoundValue>>,
}

/// `#[length(min = .., max = ..)]`: characters of a string, items of a list.
pub struct LengthAttr {
    /// The `length` path of the attribute.
    pub span: Span,
    pub min: Option<Spanned<u64>>,
    pub max: Option<Spanned<u64>>,
}

/// `#[pattern("^[A-Z]+$")]`.
pub struct PatternAttr {
    /// The `pattern` path of the attribute.
    pub span: Span,
    pub pattern: Spanned<String>,
}

/// `#[format("email")]`.
pub struct FormatAttr {
    /// The `format` path of the attribute.
    pub span: Span,
    pub format: String,
}

/// `#[enum_values("a", ...)]`.
pub struct EnumValuesAttr {
    pub span: Span,
    pub values: Vec<Spanned<String>>,
}

/// `#[markdown]` (the field a plain-text answer fills) or `#[markdown(title)]` (the field its
/// first line fills).
pub struct MarkdownAttr {
    /// The `markdown` path of the attribute.
    pub span: Span,
    pub title: bool,
}

/// The field attributes of this crate.
#[derive(Default)]
pub struct FieldAttrs {
    pub range: Option<RangeAttr>,
    pub length: Option<LengthAttr>,
    pub pattern: Option<PatternAttr>,
    pub format: Option<FormatAttr>,
    /// `#[validate(with = path)]`: the caller's own checks, in order.
    pub validators: Vec<syn::Path>,
    pub enum_values: Option<EnumValuesAttr>,
    pub fallback: Option<FallbackAttr>,
    pub markdown: Option<MarkdownAttr>,
}

/// Attribute names this derive owns.
pub const RANGE: &str = "range";
pub const LENGTH: &str = "length";
pub const PATTERN: &str = "pattern";
pub const VALIDATE: &str = "validate";
pub const FORMAT: &str = "format";

/// The string formats `#[format]` takes: those the runtime's validator of record (the
/// `jsonschema` crate, formats asserted) checks.
const FORMATS: &[&str] = &[
    "date",
    "date-time",
    "time",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "uuid",
];
pub const ENUM_VALUES: &str = "enum_values";
pub const FALLBACK_KEYWORD: &str = "fallback_keyword";
pub const MARKDOWN: &str = "markdown";
pub const STRUCTURED: &str = "structured";

/// The `///` doc comment, compacted: lines of a paragraph joined by spaces, paragraphs by newlines.
pub fn doc(attrs: &[Attribute]) -> Option<String> {
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current = String::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        let syn::Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        let Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) = &nv.value
        else {
            continue;
        };
        let text = s.value();
        // An empty `///` line is `#[doc = ""]`, which has no lines at all: it ends a paragraph.
        let lines: Vec<&str> = if text.trim().is_empty() {
            vec![""]
        } else {
            text.lines().collect()
        };
        for line in lines {
            let line = line.trim();
            if line.is_empty() {
                if !current.is_empty() {
                    paragraphs.push(std::mem::take(&mut current));
                }
            } else {
                if !current.is_empty() {
                    current.push(' ');
                }
                current.push_str(line);
            }
        }
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    (!paragraphs.is_empty()).then(|| paragraphs.join("\n"))
}

pub fn container(cx: &Ctxt, attrs: &[Attribute]) -> ContainerAttrs {
    let mut out = ContainerAttrs::default();
    let mut description_span: Option<Span> = None;
    for attr in attrs {
        if is_field_attr(attr) {
            cx.error_spanned_by(
                attr.path(),
                format!("#[{}] goes on a field, not on the type", path_name(attr)),
            );
            continue;
        }
        if attr.path().is_ident(VALIDATE) {
            if let Some(path) = validate(cx, attr) {
                out.validators.push(path);
            }
            continue;
        }
        if !attr.path().is_ident(STRUCTURED) {
            continue;
        }
        let result = attr.parse_nested_meta(|meta| {
            let key = meta.path.get_ident().map(ToString::to_string).unwrap_or_default();
            match key.as_str() {
                "name" => {
                    let lit: syn::LitStr = meta.value()?.parse()?;
                    if out.name.is_some() {
                        cx.error_spanned_by(&meta.path, "duplicate attribute key `name`");
                    } else {
                        out.name = Some(Spanned { value: lit.value(), span: lit.span() });
                    }
                }
                "description" => {
                    let lit: syn::LitStr = meta.value()?.parse()?;
                    if description_span.is_some() {
                        cx.error_spanned_by(&meta.path, "duplicate attribute key `description`");
                    } else {
                        description_span = Some(lit.span());
                        out.description = Some(lit.value());
                    }
                }
                _ => {
                    cx.error_spanned_by(
                        &meta.path,
                        format!(
                            "unknown attribute key `{}`: #[structured] takes `name = \"..\"` and `description = \"..\"`",
                            path_text(&meta.path)
                        ),
                    );
                    skip_value(&meta)?;
                }
            }
            Ok(())
        });
        if let Err(e) = result {
            cx.syn_error(e);
        }
    }
    out
}

/// This crate's attributes on a field or a variant.
pub fn field(cx: &Ctxt, attrs: &[Attribute]) -> FieldAttrs {
    let mut out = FieldAttrs::default();
    for attr in attrs {
        let path = attr.path();
        if path.is_ident(RANGE) {
            let parsed = range(cx, attr);
            if out.range.is_some() {
                cx.error_spanned_by(
                    path,
                    "duplicate #[range] attribute: write both bounds in one #[range(min, max)]",
                );
            } else {
                out.range = parsed;
            }
        } else if path.is_ident(LENGTH) {
            let parsed = length(cx, attr);
            if out.length.is_some() {
                cx.error_spanned_by(
                    path,
                    "duplicate #[length] attribute: write both bounds in one #[length(min = .., max = ..)]",
                );
            } else {
                out.length = parsed;
            }
        } else if path.is_ident(VALIDATE) {
            if let Some(v) = validate(cx, attr) {
                out.validators.push(v);
            }
        } else if path.is_ident(FORMAT) {
            let parsed = format(cx, attr);
            if out.format.is_some() {
                cx.error_spanned_by(
                    path,
                    "duplicate #[format] attribute: a string has one format",
                );
            } else {
                out.format = parsed;
            }
        } else if path.is_ident(PATTERN) {
            let parsed = pattern(cx, attr);
            if out.pattern.is_some() {
                cx.error_spanned_by(
                    path,
                    "duplicate #[pattern] attribute: join the alternatives in one pattern",
                );
            } else {
                out.pattern = parsed;
            }
        } else if path.is_ident(ENUM_VALUES) {
            let parsed = enum_values(cx, attr);
            if out.enum_values.is_some() {
                cx.error_spanned_by(path, "duplicate #[enum_values] attribute: list every value in one #[enum_values(..)]");
            } else {
                out.enum_values = parsed;
            }
        } else if path.is_ident(FALLBACK_KEYWORD) {
            let parsed = fallback::parse(cx, attr);
            if out.fallback.is_some() {
                cx.error_spanned_by(path, "duplicate #[fallback_keyword] attribute: write every keyword in one #[fallback_keyword(..)]");
            } else {
                out.fallback = parsed;
            }
        } else if path.is_ident(MARKDOWN) {
            let parsed = markdown(cx, attr);
            if out.markdown.is_some() {
                cx.error_spanned_by(path, "duplicate #[markdown] attribute: a field is either the content (#[markdown]) or the title (#[markdown(title)])");
            } else {
                out.markdown = parsed;
            }
        } else if path.is_ident(STRUCTURED) {
            cx.error_spanned_by(
                path,
                "#[structured(..)] goes on the type; on a field use #[range(..)], #[length(..)], #[enum_values(..)], #[fallback_keyword(..)] or #[markdown], and a `///` comment for its description",
            );
        }
    }
    out
}

fn is_field_attr(attr: &Attribute) -> bool {
    let p = attr.path();
    p.is_ident(RANGE)
        || p.is_ident(LENGTH)
        || p.is_ident(PATTERN)
        || p.is_ident(FORMAT)
        || p.is_ident(ENUM_VALUES)
        || p.is_ident(FALLBACK_KEYWORD)
        || p.is_ident(MARKDOWN)
}

/// `#[format("..")]`: one of [`FORMATS`].
fn format(cx: &Ctxt, attr: &Attribute) -> Option<FormatAttr> {
    let span = attr.path().span();
    let lit: syn::LitStr = match attr.parse_args() {
        Ok(lit) => lit,
        Err(e) => {
            cx.error_at(
                e.span(),
                "write #[format(\"email\")] with one string literal",
            );
            return None;
        }
    };
    let format = lit.value();
    if !FORMATS.contains(&format.as_str()) {
        cx.error_at(
            lit.span(),
            format!(
                "unknown format {format:?}: #[format] takes one of {}",
                FORMATS.join(", ")
            ),
        );
        return None;
    }
    Some(FormatAttr { span, format })
}

/// `#[validate(with = path::to::function)]`.
fn validate(cx: &Ctxt, attr: &Attribute) -> Option<syn::Path> {
    let mut with = None;
    let parsed = attr.parse_nested_meta(|meta| {
        if meta.path.is_ident("with") {
            let path: syn::Path = meta.value()?.parse()?;
            if with.is_some() {
                return Err(meta.error("one function per #[validate]: write another #[validate(with = ..)] for the next"));
            }
            with = Some(path);
            Ok(())
        } else {
            Err(meta.error(format!(
                "unknown key `{}`: write #[validate(with = path::to::function)]",
                path_text(&meta.path)
            )))
        }
    });
    match (parsed, with) {
        (Err(e), _) => {
            cx.syn_error(e);
            None
        }
        (Ok(()), None) => {
            cx.error_spanned_by(
                attr,
                "#[validate] needs a function: write #[validate(with = path::to::function)]",
            );
            None
        }
        (Ok(()), Some(path)) => Some(path),
    }
}

/// `#[pattern("..")]`: one string literal that compiles as a regular expression.
fn pattern(cx: &Ctxt, attr: &Attribute) -> Option<PatternAttr> {
    let span = attr.path().span();
    let lit: syn::LitStr = match attr.parse_args() {
        Ok(lit) => lit,
        Err(e) => {
            cx.error_at(
                e.span(),
                "write #[pattern(\"..\")] with one string literal, e.g. #[pattern(\"^[A-Z]{3}-[0-9]+$\")]",
            );
            return None;
        }
    };
    if let Err(e) = regex::Regex::new(&lit.value()) {
        let first = e.to_string();
        let first = first.lines().last().unwrap_or_default().trim();
        let first = first.strip_prefix("error: ").unwrap_or(first).to_owned();
        cx.error_at(
            lit.span(),
            format!("this pattern does not compile: {first}"),
        );
        return None;
    }
    // It is matched as JSON Schema reads it: ECMA-262, turned into the regex crate's syntax by
    // the validator's own translation (as the runtime matches it).
    let translated = jsonschema_regex::to_rust_regex(&lit.value()).map(|t| t.into_owned());
    if !translated.is_ok_and(|t| regex::Regex::new(&t).is_ok()) {
        cx.error_at(
            lit.span(),
            "this pattern is not an ECMA-262 regular expression, the dialect JSON Schema patterns are written in: use only what ECMA-262 has (an escape such as `\\a` is the regex crate's alone; write `\\x07`)",
        );
        return None;
    }
    Some(PatternAttr {
        span,
        pattern: Spanned {
            value: lit.value(),
            span: lit.span(),
        },
    })
}

const LENGTH_FORMS: &str =
    "write #[length(min = N)], #[length(max = N)] or #[length(min = N, max = N)], e.g. #[length(max = 72)]";

fn length(cx: &Ctxt, attr: &Attribute) -> Option<LengthAttr> {
    let span = attr.path().span();
    let mut out = LengthAttr {
        span,
        min: None,
        max: None,
    };
    let parsed = attr.parse_nested_meta(|meta| {
        let key = meta.path.get_ident().map(ToString::to_string);
        let lit: syn::LitInt = meta.value()?.parse()?;
        let value = lit.base10_parse::<u64>()?;
        let slot = match key.as_deref() {
            Some("min") => &mut out.min,
            Some("max") => &mut out.max,
            _ => {
                return Err(meta.error(format!(
                    "unknown key `{}`: #[length] takes `min` and `max`",
                    path_text(&meta.path)
                )))
            }
        };
        if slot.is_some() {
            return Err(meta.error("this bound is given twice"));
        }
        *slot = Some(Spanned {
            value,
            span: lit.span(),
        });
        Ok(())
    });
    match parsed {
        Err(e) => {
            cx.error_at(e.span(), format!("{e}: {LENGTH_FORMS}"));
            None
        }
        Ok(()) if out.min.is_none() && out.max.is_none() => {
            cx.error_at(span, format!("#[length] needs a bound: {LENGTH_FORMS}"));
            None
        }
        Ok(()) => Some(out),
    }
}

/// `#[markdown]` or `#[markdown(title)]`.
fn markdown(cx: &Ctxt, attr: &Attribute) -> Option<MarkdownAttr> {
    let span = attr.path().span();
    match &attr.meta {
        syn::Meta::Path(_) => Some(MarkdownAttr { span, title: false }),
        syn::Meta::List(list) => match syn::parse2::<syn::Ident>(list.tokens.clone()) {
            Ok(ident) if ident == "title" => Some(MarkdownAttr { span, title: true }),
            _ => {
                cx.error_spanned_by(
                    &list.tokens,
                    "#[markdown] takes no argument but `title`: #[markdown] on the field the answer fills, #[markdown(title)] on the field its first line fills",
                );
                None
            }
        },
        syn::Meta::NameValue(nv) => {
            cx.error_spanned_by(
                nv,
                "write #[markdown] or #[markdown(title)], not #[markdown = ..]",
            );
            None
        }
    }
}

fn path_name(attr: &Attribute) -> String {
    path_text(attr.path())
}

fn path_text(path: &syn::Path) -> String {
    path.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

/// Consumes `= value` or `(..)` after an unknown key so parsing can go on.
fn skip_value(meta: &syn::meta::ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _content;
        syn::parenthesized!(_content in meta.input);
    }
    Ok(())
}

fn args(cx: &Ctxt, attr: &Attribute) -> Option<Punctuated<Expr, Token![,]>> {
    let list = match &attr.meta {
        syn::Meta::List(list) => list,
        other => {
            cx.error_spanned_by(
                other,
                format!("#[{0}] needs arguments: #[{0}(..)]", path_name(attr)),
            );
            return None;
        }
    };
    match Punctuated::<Expr, Token![,]>::parse_terminated.parse2(list.tokens.clone()) {
        Ok(args) => Some(args),
        Err(e) => {
            cx.syn_error(e);
            None
        }
    }
}

const RANGE_FORMS: &str =
    "write #[range(min, max)], #[range(min = ..)] or #[range(max = ..)], e.g. #[range(0.0, 1.0)]";

fn range(cx: &Ctxt, attr: &Attribute) -> Option<RangeAttr> {
    let span = attr.path().span();
    let args = args(cx, attr)?;
    let mut positional = Vec::new();
    let mut min: Option<Spanned<BoundValue>> = None;
    let mut max: Option<Spanned<BoundValue>> = None;
    let mut named = false;
    let mut ok = true;
    for arg in &args {
        match arg {
            Expr::Assign(assign) => {
                named = true;
                let key = match &*assign.left {
                    Expr::Path(p) => p.path.get_ident().map(ToString::to_string),
                    _ => None,
                };
                let slot = match key.as_deref() {
                    Some("min") => &mut min,
                    Some("max") => &mut max,
                    _ => {
                        let left = &assign.left;
                        cx.error_spanned_by(
                            left,
                            format!(
                                "unknown attribute key `{}`: #[range] takes `min` and `max`",
                                quote::quote!(#left)
                            ),
                        );
                        ok = false;
                        continue;
                    }
                };
                let value = bound(cx, &assign.right);
                if slot.is_some() {
                    cx.error_spanned_by(
                        &assign.left,
                        format!("duplicate attribute key `{}`", key.unwrap_or_default()),
                    );
                    ok = false;
                } else if let Some(v) = value {
                    *slot = Some(v);
                } else {
                    ok = false;
                }
            }
            other => match bound(cx, other) {
                Some(v) => positional.push((v, other)),
                None => ok = false,
            },
        }
    }
    if !ok {
        // Each bad bound is already reported; counting what is left would only add noise.
        return None;
    }
    if named && !positional.is_empty() {
        cx.error_spanned_by(
            positional[0].1,
            format!("mix of positional and named bounds: {RANGE_FORMS}"),
        );
        return None;
    }
    if !named {
        match positional.len() {
            2 => {
                let mut it = positional.into_iter();
                min = it.next().map(|p| p.0);
                max = it.next().map(|p| p.0);
            }
            0 => {
                cx.error_at(span, format!("#[range] needs bounds: {RANGE_FORMS}"));
                return None;
            }
            1 => {
                cx.error_spanned_by(
                    positional[0].1,
                    format!("one positional bound is ambiguous: {RANGE_FORMS}"),
                );
                return None;
            }
            n if n > 2 => {
                cx.error_spanned_by(
                    positional[2].1,
                    format!("#[range] takes two bounds, found {n}: {RANGE_FORMS}"),
                );
                return None;
            }
            _ => {}
        }
    }
    Some(RangeAttr { span, min, max })
}

/// `-expr` as (true, expr); anything else as (false, itself).
fn split_sign(expr: &Expr) -> (bool, &Expr) {
    match expr {
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => (true, &*u.expr),
        other => (false, other),
    }
}

/// The value of an integer or float literal with its sign: `None` when `lit` is not numeric,
/// `Err` (what is wrong with it) when it cannot be held exactly.
fn number_lit(lit: &Lit, negative: bool) -> Option<Result<BoundValue, &'static str>> {
    let signed_int = |v: i128| BoundValue::Int(if negative { -v } else { v });
    let signed_float = |v: f64| BoundValue::Float(if negative { -v } else { v });
    Some(match lit {
        Lit::Int(i) => i
            .base10_parse::<i128>()
            .map(signed_int)
            .map_err(|_| "does not fit in 128 bits"),
        Lit::Float(f) => match f.base10_parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(signed_float(v)),
            _ => Err("must be a finite number"),
        },
        _ => return None,
    })
}

/// A numeric literal, optionally negated.
fn bound(cx: &Ctxt, expr: &Expr) -> Option<Spanned<BoundValue>> {
    let (negative, inner) = split_sign(expr);
    let number = match inner {
        Expr::Lit(ExprLit { lit, .. }) => number_lit(lit, negative),
        _ => None,
    };
    match number {
        Some(Ok(value)) => Some(Spanned {
            value,
            span: expr.span(),
        }),
        Some(Err(why)) => {
            cx.error_spanned_by(expr, format!("range bound {why}"));
            None
        }
        None => {
            cx.error_spanned_by(
                expr,
                format!(
                    "range bounds must be numeric literals, found `{}`: write the number itself, e.g. #[range(0.0, 1.0)]",
                    quote::quote!(#expr)
                ),
            );
            None
        }
    }
}

fn enum_values(cx: &Ctxt, attr: &Attribute) -> Option<EnumValuesAttr> {
    let span = attr.path().span();
    let args = args(cx, attr)?;
    if args.is_empty() {
        cx.error_at(
            span,
            "#[enum_values] needs at least one value, e.g. #[enum_values(\"low\", \"high\")]",
        );
        return None;
    }
    let mut values: Vec<Spanned<String>> = Vec::new();
    let mut ok = true;
    for arg in &args {
        match arg {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => {
                let value = s.value();
                if values.iter().any(|v| v.value == value) {
                    cx.error_spanned_by(
                        s,
                        format!("duplicate enum value {value:?}: each value may be listed once"),
                    );
                    ok = false;
                } else {
                    values.push(Spanned {
                        value,
                        span: s.span(),
                    });
                }
            }
            other => {
                cx.error_spanned_by(
                    other,
                    format!(
                        "enum values must be string literals, found `{}`: write \"{}\"",
                        quote::quote!(#other),
                        quote::quote!(#other).to_string().trim_matches('"')
                    ),
                );
                ok = false;
            }
        }
    }
    ok.then_some(EnumValuesAttr { span, values })
}

/// serde keys that change the JSON shape in ways a strict schema cannot follow.
const SERDE_CONTAINER_UNSUPPORTED: &[(&str, &str)] = &[
    (
        "from",
        "`from` reads another type's shape; derive StructuredOutput on that type instead",
    ),
    (
        "try_from",
        "`try_from` reads another type's shape; derive StructuredOutput on that type instead",
    ),
    ("remote", "derive StructuredOutput on a local type instead"),
];

const SERDE_FIELD_UNSUPPORTED: &[(&str, &str)] = &[
    ("deserialize_with", "a custom deserializer reads a shape the schema cannot know; use a type that derives StructuredOutput"),
    ("with", "a custom deserializer reads a shape the schema cannot know; use a type that derives StructuredOutput"),
    ("other", "`other` reads any unknown variant; the schema lists each allowed value"),
    ("untagged", "an untagged variant among tagged ones has no schema here; mark the whole enum #[serde(untagged)]"),
];

/// Reads serde's container attributes. Malformed serde attributes are serde's to report.
pub fn serde_container(cx: &Ctxt, attrs: &[Attribute]) -> SerdeContainer {
    let mut out = SerdeContainer::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            let key = path_text(&meta.path);
            if let Some((_, why)) = SERDE_CONTAINER_UNSUPPORTED.iter().find(|(k, _)| *k == key) {
                cx.error_spanned_by(
                    &meta.path,
                    format!("#[serde({key})] is not supported by StructuredOutput: {why}"),
                );
            }
            match key.as_str() {
                "rename_all" => {
                    out.rename_all = deserialize_name(&meta)?.and_then(|s| RenameRule::from_str(&s))
                }
                "rename_all_fields" => {
                    out.rename_all_fields =
                        deserialize_name(&meta)?.and_then(|s| RenameRule::from_str(&s))
                }
                "tag" => {
                    out.tag_span = Some(meta.path.span());
                    out.tag = Some(meta.value()?.parse::<syn::LitStr>()?.value());
                }
                "content" => out.content = Some(meta.value()?.parse::<syn::LitStr>()?.value()),
                "untagged" => out.untagged = true,
                "transparent" => out.transparent = true,
                _ => skip_value(&meta)?,
            }
            Ok(())
        });
    }
    out
}

pub fn serde_field(cx: &Ctxt, attrs: &[Attribute]) -> SerdeField {
    let mut out = SerdeField::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            let key = path_text(&meta.path);
            if let Some((_, why)) = SERDE_FIELD_UNSUPPORTED.iter().find(|(k, _)| *k == key) {
                cx.error_spanned_by(
                    &meta.path,
                    format!("#[serde({key})] is not supported by StructuredOutput: {why}"),
                );
            }
            match key.as_str() {
                "rename" => {
                    if let Some(name) = deserialize_name(&meta)? {
                        out.rename = Some(name);
                    }
                }
                "skip" | "skip_deserializing" => out.skip = true,
                "flatten" => out.flatten = true,
                "alias" => out
                    .aliases
                    .push(meta.value()?.parse::<syn::LitStr>()?.value()),
                "rename_all" => {
                    out.rename_all = deserialize_name(&meta)?.and_then(|s| RenameRule::from_str(&s))
                }
                _ => skip_value(&meta)?,
            }
            Ok(())
        });
    }
    out
}

/// `key = "x"` or `key(deserialize = "x", serialize = "y")`: the name serde reads.
fn deserialize_name(meta: &syn::meta::ParseNestedMeta) -> syn::Result<Option<String>> {
    if meta.input.peek(Token![=]) {
        let lit: syn::LitStr = meta.value()?.parse()?;
        return Ok(Some(lit.value()));
    }
    let mut found = None;
    meta.parse_nested_meta(|inner| {
        let lit: syn::LitStr = inner.value()?.parse()?;
        if inner.path.is_ident("deserialize") {
            found = Some(lit.value());
        }
        Ok(())
    })?;
    Ok(found)
}

//! `#[markdown]`: a type whose plain-text answer is one `String` field (or a title field and a
//! content field). A plain-text answer fills those and leaves every other field `null`, so every
//! other field must be an `Option`.

use syn::Type;

use crate::ast::Field;
use crate::ctxt::Ctxt;
use crate::kind;

pub fn check(cx: &Ctxt, fields: &[Field]) {
    let marked = |title: bool| -> Vec<&Field> {
        fields
            .iter()
            .filter(|f| f.attrs.markdown.as_ref().is_some_and(|m| m.title == title))
            .collect()
    };
    let (content, titles) = (marked(false), marked(true));
    if content.is_empty() && titles.is_empty() {
        return;
    }
    for extra in content.iter().skip(1) {
        report(cx, extra, "only one field is the markdown content: a plain-text answer fills one field (and a #[markdown(title)] field its first line)");
    }
    for extra in titles.iter().skip(1) {
        report(
            cx,
            extra,
            "only one field is the markdown title (the answer's first line)",
        );
    }
    if content.is_empty() {
        if let Some(title) = titles.first() {
            report(cx, title, "#[markdown(title)] takes the answer's first line; mark the field the rest goes into with #[markdown]");
        }
    }
    for f in content.iter().chain(&titles) {
        if f.serde.skip {
            report(cx, f, "#[markdown] on a skipped field has no effect: serde never reads it; remove one of them");
            continue;
        }
        if !is_string(f.ty) {
            cx.error_spanned_by(
                f.ty,
                format!(
                    "a #[markdown] field holds the answer's text, so it must be `String`, found `{}`",
                    super::type_text(f.ty)
                ),
            );
        }
        if let Some(e) = &f.attrs.enum_values {
            cx.error_at(
                e.span,
                "#[enum_values] on a #[markdown] field would refuse most answers: the field takes any text",
            );
        }
    }
    for f in fields {
        if let Some(fb) = &f.attrs.fallback {
            cx.error_at(
                fb.span,
                "#[fallback_keyword] has no use in a #[markdown] type: a plain-text answer fills the #[markdown] field(s) whole; remove it",
            );
        }
        if f.attrs.markdown.is_none() && !f.serde.skip && kind::wrapper(f.ty, "Option").is_none() {
            cx.error_spanned_by(
                f.ty,
                format!(
                    "in a #[markdown] type every other field must be an `Option`, found `{}`: a plain-text answer fills only the #[markdown] field(s) and leaves `{}` null",
                    super::type_text(f.ty),
                    f.ident
                ),
            );
        }
    }
}

fn report(cx: &Ctxt, f: &Field, message: &str) {
    if let Some(m) = &f.attrs.markdown {
        cx.error_at(m.span, message);
    }
}

pub(super) fn is_string(ty: &Type) -> bool {
    let Type::Path(p) = kind::unparen(ty) else {
        return false;
    };
    p.qself.is_none()
        && p.path
            .segments
            .last()
            .is_some_and(|last| last.ident == "String" && last.arguments.is_empty())
}

/// `#[markdown]` on an enum variant: a plain-text answer is that variant, so it must be a
/// `String` newtype of an untagged enum (serde then reads the bare string as it), and only one.
pub fn check_variants(cx: &Ctxt, untagged: bool, variants: &[crate::ast::Variant]) {
    use crate::ast::Shape;
    let marked: Vec<_> = variants
        .iter()
        .filter(|v| v.attrs.markdown.is_some())
        .collect();
    for (i, v) in marked.iter().enumerate() {
        let Some(m) = &v.attrs.markdown else { continue };
        if m.title {
            cx.error_at(m.span, "#[markdown(title)] names a struct field for the answer's first line; on a variant write #[markdown]: the whole answer is the variant's text");
        } else if i > 0 {
            cx.error_at(
                m.span,
                "only one variant is the plain-text answer: remove #[markdown] from all but one",
            );
        } else if !untagged {
            cx.error_at(m.span, "a #[markdown] variant is read from the bare answer text, which serde takes only in an untagged enum: add #[serde(untagged)] to the enum");
        } else if v.skip {
            cx.error_at(m.span, "#[markdown] on a skipped variant has no effect: serde never reads it; remove one of them");
        } else if !matches!(&v.shape, Shape::Newtype(f) if is_string(f.ty)) {
            cx.error_at(m.span, "a #[markdown] variant holds the answer's text: write it as a `String` newtype, e.g. `Text(String)`");
        }
    }
}

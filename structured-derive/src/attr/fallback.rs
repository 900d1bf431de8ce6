//! `#[fallback_keyword(..)]`: how `from_text` fills a field from prose.
//!
//! ```text
//! #[fallback_keyword]                                        declared values / the field name
//! #[fallback_keyword("critical", "high", default = "none")]  keywords (or labels) in priority order
//! #[fallback_keyword("sell everything" => "exit", ...)]      a phrase that selects a value
//! #[fallback_keyword(excerpt = 200, default = "n/a")]        the first 200 characters
//! ```

use proc_macro2::Span;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned as _;
use syn::{Attribute, Expr, ExprLit, Ident, Lit, LitStr, Token};

use super::{number_lit, split_sign, BoundValue, Spanned};
use crate::ctxt::Ctxt;

/// One keyword of the priority list.
pub enum Keyword {
    /// `"high"`: the word itself (a value, a flag's trigger or a number's label).
    Plain(Spanned<String>),
    /// `"sell everything" => "exit"`: a phrase that selects a value.
    Alias {
        phrase: Spanned<String>,
        value: Spanned<String>,
    },
}

/// A `default = ..` literal.
#[derive(Debug, Clone, PartialEq)]
pub enum DefaultValue {
    Str(String),
    Number(BoundValue),
    Bool(bool),
}

pub struct FallbackAttr {
    /// The `fallback_keyword` path of the attribute.
    pub span: Span,
    /// Keywords in the order written.
    pub keywords: Vec<Keyword>,
    pub default: Option<Spanned<DefaultValue>>,
    pub excerpt: Option<Spanned<usize>>,
}

impl FallbackAttr {
    pub fn plain(&self) -> impl Iterator<Item = &Spanned<String>> {
        self.keywords.iter().filter_map(|k| match k {
            Keyword::Plain(p) => Some(p),
            Keyword::Alias { .. } => None,
        })
    }

    pub fn first_alias(&self) -> Option<&Spanned<String>> {
        self.keywords.iter().find_map(|k| match k {
            Keyword::Alias { phrase, .. } => Some(phrase),
            Keyword::Plain(_) => None,
        })
    }
}

const FORMS: &str = "write keywords as string literals, `\"phrase\" => \"value\"` for an alias, and `default = ..` or `excerpt = N`";

enum Arg {
    Keyword(Keyword),
    Named { key: Ident, value: Expr },
}

impl Parse for Arg {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.peek(LitStr) {
            let lit: LitStr = input.parse()?;
            let phrase = Spanned {
                value: lit.value(),
                span: lit.span(),
            };
            if input.peek(Token![=>]) {
                input.parse::<Token![=>]>()?;
                let value: LitStr = input.parse().map_err(|e| {
                    syn::Error::new(
                        e.span(),
                        "an alias selects a value: write `\"phrase\" => \"value\"`",
                    )
                })?;
                return Ok(Arg::Keyword(Keyword::Alias {
                    phrase,
                    value: Spanned {
                        value: value.value(),
                        span: value.span(),
                    },
                }));
            }
            return Ok(Arg::Keyword(Keyword::Plain(phrase)));
        }
        if input.peek(Ident) && input.peek2(Token![=]) {
            let key: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            let value: Expr = input.parse()?;
            return Ok(Arg::Named { key, value });
        }
        Err(input.error(FORMS))
    }
}

pub fn parse(cx: &Ctxt, attr: &Attribute) -> Option<FallbackAttr> {
    let span = attr.path().span();
    let mut out = FallbackAttr {
        span,
        keywords: Vec::new(),
        default: None,
        excerpt: None,
    };
    let args = match &attr.meta {
        // The bare form reads the declared values, or the field's own name.
        syn::Meta::Path(_) => return Some(out),
        syn::Meta::List(list) => {
            match list.parse_args_with(Punctuated::<Arg, Token![,]>::parse_terminated) {
                Ok(args) => args,
                Err(e) => {
                    cx.syn_error(e);
                    return None;
                }
            }
        }
        syn::Meta::NameValue(nv) => {
            cx.error_spanned_by(nv, format!("#[fallback_keyword] takes a list: {FORMS}"));
            return None;
        }
    };
    let mut ok = true;
    for arg in args {
        match arg {
            Arg::Keyword(k) => {
                let phrase = match &k {
                    Keyword::Plain(p) => p,
                    Keyword::Alias { phrase, .. } => phrase,
                };
                if !phrase.value.chars().any(char::is_alphanumeric) {
                    cx.error_at(
                        phrase.span,
                        "a keyword needs at least one letter or digit: text is matched word by word",
                    );
                    ok = false;
                } else if out.keywords.iter().any(|o| same_phrase(o, &phrase.value)) {
                    cx.error_at(phrase.span, format!("duplicate keyword {:?}", phrase.value));
                    ok = false;
                } else {
                    out.keywords.push(k);
                }
            }
            Arg::Named { key, value } => match key.to_string().as_str() {
                "default" => {
                    ok &= set_once(cx, &key, &mut out.default, default_value(cx, &value));
                }
                "excerpt" => ok &= set_once(cx, &key, &mut out.excerpt, excerpt(cx, &value)),
                other => {
                    cx.error_spanned_by(
                        &key,
                        format!("unknown attribute key `{other}`: #[fallback_keyword] takes `default = ..` and `excerpt = N`"),
                    );
                    ok = false;
                }
            },
        }
    }
    ok.then_some(out)
}

fn same_phrase(k: &Keyword, phrase: &str) -> bool {
    let existing = match k {
        Keyword::Plain(p) => &p.value,
        Keyword::Alias { phrase, .. } => &phrase.value,
    };
    existing.to_lowercase() == phrase.to_lowercase()
}

fn default_value(cx: &Ctxt, expr: &Expr) -> Option<Spanned<DefaultValue>> {
    const LITERAL: &str = "`default` must be a literal: a string, a number or a bool";
    let (negative, inner) = split_sign(expr);
    let Expr::Lit(ExprLit { lit, .. }) = inner else {
        cx.error_spanned_by(expr, LITERAL);
        return None;
    };
    let value = match (lit, number_lit(lit, negative)) {
        (_, Some(Ok(n))) => DefaultValue::Number(n),
        (_, Some(Err(why))) => {
            cx.error_spanned_by(expr, format!("`default` {why}"));
            return None;
        }
        (Lit::Str(s), None) if !negative => DefaultValue::Str(s.value()),
        (Lit::Bool(b), None) if !negative => DefaultValue::Bool(b.value),
        _ => {
            cx.error_spanned_by(expr, LITERAL);
            return None;
        }
    };
    Some(Spanned {
        value,
        span: expr.span(),
    })
}

/// Stores a named argument's value, refusing a second one.
fn set_once<T>(cx: &Ctxt, key: &Ident, slot: &mut Option<T>, value: Option<T>) -> bool {
    match value {
        Some(_) if slot.is_some() => {
            cx.error_spanned_by(key, format!("duplicate attribute key `{key}`"));
            false
        }
        Some(v) => {
            *slot = Some(v);
            true
        }
        None => false,
    }
}

fn excerpt(cx: &Ctxt, expr: &Expr) -> Option<Spanned<usize>> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => match i.base10_parse::<usize>() {
            Ok(n) if n > 0 => Some(Spanned {
                value: n,
                span: i.span(),
            }),
            _ => {
                cx.error_spanned_by(expr, "`excerpt` is a number of characters, at least 1");
                None
            }
        },
        _ => {
            cx.error_spanned_by(
                expr,
                "`excerpt` is a number of characters, e.g. `excerpt = 200`",
            );
            None
        }
    }
}

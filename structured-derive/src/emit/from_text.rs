//! `from_text` for a struct with `#[fallback_keyword]` fields, and `TextChoice` for a unit enum.
//! Each field becomes one call to a runtime reader; the value is validated at the end.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned as _;

use crate::ast::{Body, Container, Field};
use crate::attr::{BoundValue, DefaultValue, FallbackAttr, Keyword};
use crate::kind::{FieldKind, Kind, Scalar};

/// The `from_text` method of the `StructuredOutput` impl, when a field asks for it.
pub fn method(cont: &Container) -> TokenStream {
    let Body::Struct(fields) = &cont.body else {
        return TokenStream::new();
    };
    if !fields.iter().any(|f| f.attrs.fallback.is_some()) {
        return TokenStream::new();
    }
    let check_values = !super::generics(cont.original).is_generic;
    let inits = fields.iter().map(|f| {
        let member = &f.ident;
        let value = field_value(f, check_values);
        quote!(#member: #value)
    });
    quote! {
        fn from_text(
            __structured_text: &str,
        ) -> ::core::result::Result<
            _structured::__private::FromText<Self>,
            _structured::__private::FromTextError,
        > {
            let __structured_prose = _structured::__private::Prose::new(__structured_text);
            let mut __structured_report = _structured::__private::TextReport::default();
            let __structured_value = Self { #(#inits),* };
            _structured::__private::text_finish(__structured_value, __structured_report)
        }
    }
}

fn field_value(f: &Field, check_values: bool) -> TokenStream {
    let ty = f.ty;
    if f.serde.skip {
        return quote_spanned!(ty.span()=> <#ty as ::core::default::Default>::default());
    }
    let name = &f.wire_name;
    let Some(fb) = &f.attrs.fallback else {
        return quote_spanned! {ty.span()=>
            {
                __structured_report.not_read(#name);
                <#ty as ::core::default::Default>::default()
            }
        };
    };
    let k = FieldKind::of(ty);
    let inner = crate::kind::wrapper(ty, "Option").unwrap_or(ty);
    let reader = quote!(&__structured_prose, &mut __structured_report, #name);
    match k.kind {
        Kind::Scalar(Scalar::Bool) => {
            let words = words_or_names(f, fb);
            quote!(_structured::__private::text_flag(#reader, &[#(#words),*]))
        }
        Kind::Scalar(Scalar::Str) if f.attrs.enum_values.is_none() => {
            let default = str_default(fb);
            match &fb.excerpt {
                Some(n) => {
                    let n = n.value;
                    let default = option(default.map(|d| quote!(#d)));
                    let text = quote!(_structured::__private::text_excerpt(#reader, #n, #default));
                    if k.optional {
                        quote!(::core::option::Option::Some(#text))
                    } else {
                        text
                    }
                }
                None => {
                    let d = default.unwrap_or_default();
                    quote!(_structured::__private::text_fixed(&mut __structured_report, #name, ::std::string::String::from(#d)))
                }
            }
        }
        Kind::Scalar(s @ (Scalar::Int { .. } | Scalar::Float)) => {
            let labels = words_or_names(f, fb);
            let range = match &f.attrs.range {
                Some(r) => super::range_tokens(r),
                None => quote!(_structured::__private::Range {
                    min: ::core::option::Option::None,
                    max: ::core::option::Option::None
                }),
            };
            let default = number_default(fb, s);
            if k.optional {
                let default = option(default);
                quote!(_structured::__private::text_number::<#inner>(#reader, &[#(#labels),*], #range, #default))
            } else {
                let default = default.unwrap_or_else(|| zero(s));
                quote!(_structured::__private::text_number_or::<#inner>(#reader, &[#(#labels),*], #range, #default))
            }
        }
        // A String with #[enum_values] or a unit enum (check rejected everything else).
        _ => choice(f, fb, inner, k.optional, check_values, &reader),
    }
}

fn choice(
    f: &Field,
    fb: &FallbackAttr,
    inner: &syn::Type,
    optional: bool,
    check_values: bool,
    reader: &TokenStream,
) -> TokenStream {
    let mut options: Vec<TokenStream> = fb
        .keywords
        .iter()
        .map(|k| match k {
            Keyword::Plain(p) => {
                let v = &p.value;
                quote!((#v, #v))
            }
            Keyword::Alias { phrase, value } => {
                let (p, v) = (&phrase.value, &value.value);
                quote!((#p, #v))
            }
        })
        .collect();
    // With no plain keyword, every value is a keyword, in declared order, after the aliases.
    let all_values = fb.plain().next().is_none();
    let mut declared = false;
    if all_values {
        match &f.attrs.enum_values {
            Some(e) => options.extend(e.values.iter().map(|v| {
                let v = &v.value;
                quote!((#v, #v))
            })),
            None => declared = true,
        }
    }
    // An enum's values are only known to its own derive: check the named ones at compile time.
    let assertions = if check_values && f.attrs.enum_values.is_none() {
        let named = fb
            .keywords
            .iter()
            .map(|k| match k {
                Keyword::Plain(p) => p,
                Keyword::Alias { value, .. } => value,
            })
            .map(|v| (v.value.clone(), v.span))
            .chain(fb.default.iter().filter_map(|d| match &d.value {
                DefaultValue::Str(s) => Some((s.clone(), d.span)),
                _ => None,
            }));
        named
            .map(|(value, span)| {
                quote_spanned! {span=>
                    const _: () = ::core::assert!(
                        _structured::__private::is_value_of::<#inner>(#value),
                        "#[fallback_keyword] names a value that is not one of the enum's values (check the spelling and any serde rename)",
                    );
                }
            })
            .collect()
    } else {
        TokenStream::new()
    };
    let default = str_default(fb);
    let call = if optional {
        let default = option(default.map(|d| quote!(#d)));
        quote!(_structured::__private::text_choice::<#inner>(#reader, &[#(#options),*], #declared, #default)?)
    } else {
        let d = default.unwrap_or_default();
        quote!(_structured::__private::text_choice_or::<#inner>(#reader, &[#(#options),*], #declared, #d)?)
    };
    quote!({ #assertions #call })
}

/// Keywords as written, else the field's wire name (and its Rust name when they differ).
fn words_or_names(f: &Field, fb: &FallbackAttr) -> Vec<String> {
    let plain: Vec<String> = fb.plain().map(|p| p.value.clone()).collect();
    if !plain.is_empty() {
        return plain;
    }
    let mut names = vec![f.wire_name.clone()];
    let ident = f.ident.to_string();
    let ident = ident.trim_start_matches("r#").to_owned();
    if ident != f.wire_name {
        names.push(ident);
    }
    names
}

fn str_default(fb: &FallbackAttr) -> Option<String> {
    fb.default.as_ref().and_then(|d| match &d.value {
        DefaultValue::Str(s) => Some(s.clone()),
        _ => None,
    })
}

fn number_default(fb: &FallbackAttr, s: Scalar) -> Option<TokenStream> {
    fb.default.as_ref().and_then(|d| match d.value {
        DefaultValue::Number(v) => Some(number_literal(v, s)),
        _ => None,
    })
}

/// A literal of the field's kind: a float field's `default = 0` is written `0.0`.
fn number_literal(v: BoundValue, s: Scalar) -> TokenStream {
    match (s, v) {
        (Scalar::Float, v) => super::float_literal(v.as_f64()),
        (_, BoundValue::Int(i)) => super::int_literal(i),
        // An integer field with a float default is rejected by check.
        (_, BoundValue::Float(_)) => quote!(0),
    }
}

fn zero(s: Scalar) -> TokenStream {
    number_literal(BoundValue::Int(0), s)
}

fn option(value: Option<TokenStream>) -> TokenStream {
    match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

/// `TextChoice` for a unit enum: its wire names, and the variant for each.
pub fn text_choice_impl(cont: &Container) -> TokenStream {
    let Body::Enum(variants) = &cont.body else {
        return TokenStream::new();
    };
    let ident = cont.ident;
    let g = super::generics(cont.original);
    let (impl_generics, ty_generics, where_clause) =
        (&g.impl_generics, &g.ty_generics, &g.where_clause);
    let live: Vec<_> = variants.iter().filter(|v| !v.skip).collect();
    let names = live.iter().map(|v| &v.wire_name);
    let arms = live.iter().map(|v| {
        let (name, variant) = (&v.wire_name, &v.original.ident);
        quote!(#name => ::core::option::Option::Some(Self::#variant))
    });
    quote! {
        #[automatically_derived]
        impl #impl_generics _structured::__private::TextChoice for #ident #ty_generics #where_clause {
            const VALUES: &'static [&'static str] = &[#(#names),*];
            fn from_value(__structured_value: &str) -> ::core::option::Option<Self> {
                match __structured_value {
                    #(#arms,)*
                    _ => ::core::option::Option::None,
                }
            }
        }
    }
}

//! `Validate`: each field's declared rules, and the rules of the types it holds.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{Body, Container, Field, Shape, Tagging, Variant};

pub fn validate_impl(cont: &Container) -> TokenStream {
    let ident = cont.ident;
    let g = super::generics(cont.original);
    let (impl_generics, ty_generics, where_clause) =
        (&g.impl_generics, &g.ty_generics, &g.where_clause);
    let whole: Vec<TokenStream> = cont.attrs.validators.iter().map(|v| {
        let name = path_string(v);
        quote_spanned! {v.span()=>
            _structured::__private::custom_check(#v, self, #name, __structured_path, __structured_out);
        }
    }).collect();
    let checks: Vec<TokenStream> = match &cont.body {
        Body::Struct(fields) => fields
            .iter()
            .filter(|f| !f.serde.skip)
            .map(|f| {
                let member = &f.member;
                field_checks(f, &quote!(&self.#member), named(f))
            })
            .collect(),
        Body::Newtype(f) => {
            let member = &f.member;
            vec![field_checks(f, &quote!(&self.#member), At::Here)]
        }
        Body::Tuple(fields) => fields
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let member = &f.member;
                field_checks(f, &quote!(&self.#member), At::Index(i))
            })
            .collect(),
        Body::Enum(variants) if !variants.iter().all(|v| v.is_unit()) => {
            vec![variant_checks(&cont.tagging, variants)]
        }
        // A unit variant has no rules: serde only reads allowed names.
        _ => Vec::new(),
    };
    // The caller's checks of the whole value run once its structure holds (only a type that
    // has some counts its violations: each line here is compiled for every type derived).
    let (before, whole) = guarded(&whole);
    quote! {
        #[automatically_derived]
        impl #impl_generics _structured::__private::Validate for #ident #ty_generics #where_clause {
            fn validate_at(
                &self,
                __structured_path: &_structured::__private::Path<'_>,
                __structured_out: &mut ::std::vec::Vec<_structured::__private::Violation>,
            ) {
                #before
                #(#checks)*
                #whole
            }
        }
    }
}

/// `checks` run only when no violation was found since the start: what notes the count at the
/// start, and the guarded checks; nothing when there are none.
fn guarded(checks: &[TokenStream]) -> (TokenStream, TokenStream) {
    if checks.is_empty() {
        return (TokenStream::new(), TokenStream::new());
    }
    (
        quote!(let __structured_before = __structured_out.len();),
        quote! {
            if __structured_out.len() == __structured_before {
                #(#checks)*
            }
        },
    )
}

/// Where a field's value sits, from the value that holds it.
enum At {
    /// The same place (a newtype's field, a flattened field, an internally tagged variant).
    Here,
    Key(String),
    Index(usize),
}

fn named(f: &Field) -> At {
    match f.serde.flatten {
        true => At::Here,
        false => At::Key(f.wire_name.clone()),
    }
}

/// The checks of one field; `access` is an expression of type `&T` for the field's value.
fn field_checks(f: &Field, access: &TokenStream, at: At) -> TokenStream {
    let ty = f.ty;
    let range = f.attrs.range.as_ref().map(|r| {
        let value = super::range_tokens(r);
        quote_spanned! {r.span=>
            <#ty as _structured::__private::RangeTarget>::check_range(#access, #value, __structured_path, __structured_out);
        }
    });
    let length = f.attrs.length.as_ref().map(|l| {
        let value = super::length_tokens(l);
        quote_spanned! {l.span=>
            <#ty as _structured::__private::LengthTarget>::check_length(#access, #value, __structured_path, __structured_out);
        }
    });
    let pattern = f.attrs.pattern.as_ref().map(|p| {
        let value = &p.pattern.value;
        quote_spanned! {p.span=>
            <#ty as _structured::__private::PatternTarget>::check_pattern(#access, #value, __structured_path, __structured_out);
        }
    });
    let format = f.attrs.format.as_ref().map(|fa| {
        let value = &fa.format;
        quote_spanned! {fa.span=>
            <#ty as _structured::__private::FormatTarget>::check_format(#access, #value, __structured_path, __structured_out);
        }
    });
    let enum_values = f.attrs.enum_values.as_ref().map(|e| {
        let values = e.values.iter().map(|v| &v.value);
        quote_spanned! {e.span=>
            <#ty as _structured::__private::EnumTarget>::check_enum(#access, &[#(#values),*], __structured_path, __structured_out);
        }
    });
    let custom: Vec<TokenStream> = f.attrs.validators.iter().map(|v| {
        let fn_name = path_string(v);
        quote_spanned! {v.span()=>
            _structured::__private::custom_check(#v, #access, #fn_name, __structured_path, __structured_out);
        }
    }).collect();
    // The caller's own checks run once the field's structural rules hold.
    let (before, custom) = guarded(&custom);
    let path = match at {
        At::Here => quote!(__structured_path),
        At::Key(name) => quote!(&_structured::__private::Path::key(__structured_path, #name)),
        At::Index(i) => quote!(&_structured::__private::Path::index(__structured_path, #i)),
    };
    quote! {
        {
            let __structured_path = #path;
            #before
            <#ty as _structured::__private::SchemaType>::validate_nested(#access, __structured_path, __structured_out);
            #range
            #length
            #pattern
            #format
            #enum_values
            #custom
        }
    }
}

/// One match over the variants: each variant's fields checked where serde writes them.
fn variant_checks(tagging: &Tagging, variants: &[Variant]) -> TokenStream {
    let arms = variants.iter().filter(|v| !v.skip).map(|v| {
        let ident = &v.original.ident;
        // Where the variant's data sits inside the enum's value.
        let data_path = match tagging {
            Tagging::External => {
                let name = &v.wire_name;
                quote!(&_structured::__private::Path::key(__structured_path, #name))
            }
            Tagging::Adjacent { content, .. } => {
                quote!(&_structured::__private::Path::key(__structured_path, #content))
            }
            Tagging::Internal { .. } | Tagging::Untagged => quote!(__structured_path),
        };
        let (pattern, checks): (TokenStream, Vec<TokenStream>) = match &v.shape {
            Shape::Unit => (quote!(Self::#ident), Vec::new()),
            Shape::Newtype(f) => {
                let b = &f.ident;
                (
                    quote!(Self::#ident(#b)),
                    vec![field_checks(f, &quote!(#b), At::Here)],
                )
            }
            Shape::Tuple(fields) => {
                let bs = fields.iter().map(|f| &f.ident);
                let checks = fields
                    .iter()
                    .enumerate()
                    .map(|(i, f)| {
                        let b = &f.ident;
                        field_checks(f, &quote!(#b), At::Index(i))
                    })
                    .collect();
                (quote!(Self::#ident(#(#bs),*)), checks)
            }
            Shape::Struct(fields) => {
                let bs = fields.iter().map(|f| &f.ident);
                let checks = fields
                    .iter()
                    .filter(|f| !f.serde.skip)
                    .map(|f| {
                        let b = &f.ident;
                        field_checks(f, &quote!(#b), named(f))
                    })
                    .collect();
                (quote!(Self::#ident { #(#bs),* }), checks)
            }
        };
        quote! {
            #pattern => {
                let __structured_path = #data_path;
                #(#checks)*
            }
        }
    });
    quote! {
        #[allow(unused_variables, unreachable_patterns)]
        match self {
            #(#arms)*
            _ => {}
        }
    }
}

/// A validator's path as written, for the report (`checks::not_empty`).
fn path_string(path: &syn::Path) -> String {
    path.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

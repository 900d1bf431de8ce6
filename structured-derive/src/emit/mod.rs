//! Code generation. Everything here runs on a checked model: no user error is reported here.

mod from_text;
mod partial;
mod schema;
mod validate;

use proc_macro2::TokenStream;
use quote::quote;
use syn::{DeriveInput, GenericParam};

use crate::ast::{Body, Container};
use crate::attr::{BoundValue, LengthAttr, RangeAttr, Spanned};
use crate::ctxt::Ctxt;

pub fn expand(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let cont = Container::from_ast(&cx, input);
    crate::check::check(&cx, &cont);
    match cx.check() {
        Ok(()) => {
            // The partial companion is declared beside the type, where it can be named.
            let (companion, partial_impl) = partial::partial(&cont);
            let body = generate(&cont);
            let wrapped = wrap(quote!(#body #partial_impl));
            quote!(#companion #wrapped)
        }
        Err(errors) => {
            let compile_errors = errors.to_compile_error();
            let stubs = stubs(input);
            quote! { #compile_errors #stubs }
        }
    }
}

fn generate(cont: &Container) -> TokenStream {
    let schema_type = schema::schema_type_impl(cont);
    let validate = validate::validate_impl(cont);
    let output = schema::structured_output_impl(cont, from_text::method(cont));
    // A unit-only enum is a choice of names: prose can name one, and it can key a map.
    let names = match schema::is_string_enum(cont) {
        true => {
            let choice = from_text::text_choice_impl(cont);
            let key = map_key_impl(cont);
            quote!(#choice #key)
        }
        false => TokenStream::new(),
    };
    quote! { #schema_type #validate #output #names }
}

/// `MapKey` for a unit-only enum: its names are the map's allowed keys.
fn map_key_impl(cont: &Container) -> TokenStream {
    let Body::Enum(variants) = &cont.body else {
        return TokenStream::new();
    };
    let ident = cont.ident;
    let g = generics(cont.original);
    let (impl_generics, ty_generics, where_clause) =
        (&g.impl_generics, &g.ty_generics, &g.where_clause);
    let names = variants.iter().filter(|v| !v.skip).map(|v| &v.wire_name);
    let arms = variants.iter().map(|v| {
        let (name, variant) = (&v.wire_name, &v.original.ident);
        quote!(Self::#variant => ::std::borrow::Cow::Borrowed(#name))
    });
    quote! {
        #[automatically_derived]
        impl #impl_generics _structured::__private::MapKey for #ident #ty_generics #where_clause {
            fn key_schema() -> ::core::option::Option<_structured::__private::Value> {
                ::core::option::Option::Some(_structured::__private::string_enum(
                    ::core::option::Option::None,
                    &[#(#names),*],
                ))
            }
            fn key_name(&self) -> ::std::borrow::Cow<'_, str> {
                match self {
                    #(#arms,)*
                }
            }
        }
    }
}

/// An integer literal; a negative one is written `-lit`, which rustc reads as one in-range literal.
pub(crate) fn int_literal(i: i128) -> TokenStream {
    let lit = proc_macro2::Literal::u128_unsuffixed(i.unsigned_abs());
    let sign = (i < 0).then(|| quote!(-));
    quote!(#sign #lit)
}

/// A float literal, its sign written apart like [`int_literal`]'s.
pub(crate) fn float_literal(x: f64) -> TokenStream {
    let lit = proc_macro2::Literal::f64_unsuffixed(x.abs());
    let sign = (x.is_sign_negative() && x != 0.0).then(|| quote!(-));
    quote!(#sign #lit)
}

/// A `#[length]` as the runtime's `Length`.
pub(crate) fn length_tokens(l: &LengthAttr) -> TokenStream {
    let bound = |b: Option<&Spanned<u64>>| match b {
        Some(b) => {
            let v = b.value;
            quote!(::core::option::Option::Some(#v))
        }
        None => quote!(::core::option::Option::None),
    };
    let (min, max) = (bound(l.min.as_ref()), bound(l.max.as_ref()));
    quote!(_structured::__private::Length { min: #min, max: #max })
}

/// A `#[range]` as the runtime's `Range`.
pub(crate) fn range_tokens(r: &RangeAttr) -> TokenStream {
    let min = bound_tokens(r.min.as_ref());
    let max = bound_tokens(r.max.as_ref());
    quote!(_structured::__private::Range { min: #min, max: #max })
}

fn bound_tokens(b: Option<&Spanned<BoundValue>>) -> TokenStream {
    let Some(b) = b else {
        return quote!(::core::option::Option::None);
    };
    let value = match b.value {
        BoundValue::Int(i) => {
            let lit = int_literal(i);
            quote!(_structured::__private::Bound::Int(#lit))
        }
        BoundValue::Float(x) => {
            let lit = float_literal(x);
            quote!(_structured::__private::Bound::Float(#lit))
        }
    };
    quote!(::core::option::Option::Some(#value))
}

/// An optional string as `Option<&str>` tokens.
pub(crate) fn opt_str(s: Option<&str>) -> TokenStream {
    match s {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    }
}

/// Generated code reaches the runtime through one path, inside an anonymous const.
fn wrap(body: TokenStream) -> TokenStream {
    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, unused_qualifications, clippy::all)]
        const _: () = {
            extern crate structured_runtime as _structured;
            #body
        };
    }
}

/// `impl` generics with the bounds every type parameter needs, plus the type's own arguments.
pub(crate) struct Generics {
    pub impl_generics: TokenStream,
    pub ty_generics: TokenStream,
    pub where_clause: TokenStream,
    pub is_generic: bool,
}

pub(crate) fn generics(input: &DeriveInput) -> Generics {
    let mut generics = input.generics.clone();
    let is_generic = generics.type_params().next().is_some();
    for param in &mut generics.params {
        if let GenericParam::Type(t) = param {
            t.bounds
                .push(syn::parse_quote!(_structured::__private::SchemaType));
            t.bounds.push(syn::parse_quote!('static));
        }
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    Generics {
        impl_generics: quote!(#impl_generics),
        ty_generics: quote!(#ty_generics),
        where_clause: quote!(#where_clause),
        is_generic,
    }
}

/// On error: impls with no behaviour, so uses of the type do not add errors of their own.
fn stubs(input: &DeriveInput) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let output = match &input.data {
        syn::Data::Struct(_) => quote! {
            impl #impl_generics _structured::__private::StructuredOutput for #ident #ty_generics #where_clause {
                fn schema() -> &'static _structured::__private::ResponseSchema {
                    ::core::unimplemented!()
                }
            }
        },
        _ => quote! {
            impl #impl_generics _structured::__private::TextChoice for #ident #ty_generics #where_clause {
                const VALUES: &'static [&'static str] = &[];
                fn from_value(_: &str) -> ::core::option::Option<Self> {
                    ::core::option::Option::None
                }
            }
        },
    };
    quote! {
        #[doc(hidden)]
        #[allow(unused_qualifications, clippy::all)]
        const _: () = {
            extern crate structured_runtime as _structured;
            impl #impl_generics _structured::__private::SchemaType for #ident #ty_generics #where_clause {
                fn json_schema(_: &mut _structured::__private::SchemaGen) -> _structured::__private::Value {
                    ::core::unimplemented!()
                }
            }
            impl #impl_generics _structured::__private::Validate for #ident #ty_generics #where_clause {
                fn validate_at(
                    &self,
                    _: &_structured::__private::Path<'_>,
                    _: &mut ::std::vec::Vec<_structured::__private::Violation>,
                ) {
                }
            }
            #output
        };
    }
}

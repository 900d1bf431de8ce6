//! `Validate`: each field's declared rules, and the rules of the types it holds.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use crate::ast::{Body, Container, Field};

pub fn validate_impl(cont: &Container) -> TokenStream {
    let ident = cont.ident;
    let g = super::generics(cont.original);
    let (impl_generics, ty_generics, where_clause) =
        (&g.impl_generics, &g.ty_generics, &g.where_clause);
    let checks: Vec<TokenStream> = match &cont.body {
        Body::Struct(fields) => fields
            .iter()
            .filter(|f| !f.serde.skip)
            .map(field_checks)
            .collect(),
        // A unit variant has no rules: serde only reads allowed names.
        _ => Vec::new(),
    };
    quote! {
        #[automatically_derived]
        impl #impl_generics _structured::__private::Validate for #ident #ty_generics #where_clause {
            fn validate_at(
                &self,
                __structured_path: &_structured::__private::Path<'_>,
                __structured_out: &mut ::std::vec::Vec<_structured::__private::Violation>,
            ) {
                #(#checks)*
            }
        }
    }
}

fn field_checks(f: &Field) -> TokenStream {
    let ty = f.ty;
    let member = f.ident;
    let name = &f.wire_name;
    let range = f.attrs.range.as_ref().map(|r| {
        let value = super::schema::range_tokens(r);
        quote_spanned! {r.span=>
            <#ty as _structured::__private::RangeTarget>::check_range(&self.#member, #value, __structured_path, __structured_out);
        }
    });
    let length = f.attrs.length.as_ref().map(|l| {
        let value = super::schema::length_tokens(l);
        quote_spanned! {l.span=>
            <#ty as _structured::__private::LengthTarget>::check_length(&self.#member, #value, __structured_path, __structured_out);
        }
    });
    let pattern = f.attrs.pattern.as_ref().map(|p| {
        let value = &p.pattern.value;
        quote_spanned! {p.span=>
            <#ty as _structured::__private::PatternTarget>::check_pattern(&self.#member, #value, __structured_path, __structured_out);
        }
    });
    let enum_values = f.attrs.enum_values.as_ref().map(|e| {
        let values = e.values.iter().map(|v| &v.value);
        quote_spanned! {e.span=>
            <#ty as _structured::__private::EnumTarget>::check_enum(&self.#member, &[#(#values),*], __structured_path, __structured_out);
        }
    });
    quote! {
        {
            let __structured_path = &_structured::__private::Path::key(__structured_path, #name);
            <#ty as _structured::__private::SchemaType>::validate_nested(&self.#member, __structured_path, __structured_out);
            #range
            #length
            #pattern
            #enum_values
        }
    }
}

//! `Validate`: each field's declared rules, and the rules of the types it holds.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{Body, Container, Field};

pub fn validate_impl(cont: &Container) -> TokenStream {
    let ident = cont.ident;
    let g = super::generics(cont.original);
    let (impl_generics, ty_generics, where_clause) =
        (&g.impl_generics, &g.ty_generics, &g.where_clause);
    let whole = cont.attrs.validators.iter().map(|v| {
        let name = path_string(v);
        quote_spanned! {v.span()=>
            _structured::__private::custom_check(#v, self, #name, __structured_path, __structured_out);
        }
    });
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
                let __structured_before = __structured_out.len();
                #(#checks)*
                // The caller's checks of the whole value run once its structure holds.
                if __structured_out.len() == __structured_before {
                    #(#whole)*
                }
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
    let format = f.attrs.format.as_ref().map(|fa| {
        let value = &fa.format;
        quote_spanned! {fa.span=>
            <#ty as _structured::__private::FormatTarget>::check_format(&self.#member, #value, __structured_path, __structured_out);
        }
    });
    let enum_values = f.attrs.enum_values.as_ref().map(|e| {
        let values = e.values.iter().map(|v| &v.value);
        quote_spanned! {e.span=>
            <#ty as _structured::__private::EnumTarget>::check_enum(&self.#member, &[#(#values),*], __structured_path, __structured_out);
        }
    });
    let custom = f.attrs.validators.iter().map(|v| {
        let fn_name = path_string(v);
        quote_spanned! {v.span()=>
            _structured::__private::custom_check(#v, &self.#member, #fn_name, __structured_path, __structured_out);
        }
    });
    quote! {
        {
            let __structured_path = &_structured::__private::Path::key(__structured_path, #name);
            let __structured_before = __structured_out.len();
            <#ty as _structured::__private::SchemaType>::validate_nested(&self.#member, __structured_path, __structured_out);
            #range
            #length
            #pattern
            #format
            #enum_values
            // The caller's own checks run once the field's structural rules hold.
            if __structured_out.len() == __structured_before {
                #(#custom)*
            }
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

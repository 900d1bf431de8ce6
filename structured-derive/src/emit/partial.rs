//! `HasPartial`: what a stream has shown of a value so far. A struct with named fields gets a
//! companion struct, `{Name}Partial` (with the same type parameters), declared beside it; every
//! other shape appears only once whole.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{Body, Container, Field};

/// The companion struct (emitted beside the type, where the user can name it) and the
/// `HasPartial` impl (emitted with the other impls).
pub(crate) fn partial(cont: &Container) -> (TokenStream, TokenStream) {
    match &cont.body {
        Body::Struct(fields) => companion(cont, fields),
        _ => (TokenStream::new(), whole(cont)),
    }
}

fn companion(cont: &Container, fields: &[Field]) -> (TokenStream, TokenStream) {
    let ident = cont.ident;
    let partial = format_ident!("{}Partial", ident);
    let vis = &cont.original.vis;
    let shown: Vec<&Field> = fields.iter().filter(|f| !f.serde.skip).collect();
    let members = shown.iter().map(|f| {
        let (name, ty) = (&f.ident, f.ty);
        let field_vis = field_visibility(cont, f);
        let doc = format!("`{name}` so far: `None` until it starts.");
        // A field type without a partial form is reported at the field.
        let partial_ty =
            quote_spanned!(ty.span()=> <#ty as ::structured_runtime::HasPartial>::Partial);
        quote! {
            #[doc = #doc]
            #field_vis #name: ::core::option::Option<#partial_ty>
        }
    });
    let doc = format!(
        "What a stream has shown of a [`{ident}`] so far: each field `None` until it starts, then its value so far (free text as far as it has come, nested structs as their partials, every other value once complete). See `structured_runtime::HasPartial`."
    );
    // Only `Default`: a derive cannot tell whether the field types are `Debug` or `Clone`
    // (and bounds on them would not end for a type that holds itself through another).
    // Each type parameter has a partial form (and, for the impl, a schema, as every impl asks).
    let declared_generics = bounded(cont, &[syn::parse_quote!(::structured_runtime::HasPartial)]);
    let (decl_impl, decl_ty, decl_where) = declared_generics.split_for_impl();
    let names = shown.iter().map(|f| &f.ident);
    let declared = quote! {
        #[doc = #doc]
        #vis struct #partial #decl_impl #decl_where {
            #(#members,)*
        }
        #[automatically_derived]
        impl #decl_impl ::core::default::Default for #partial #decl_ty #decl_where {
            fn default() -> Self {
                #partial { #(#names: ::core::option::Option::None,)* }
            }
        }
    };
    let reads = shown.iter().map(|f| {
        let (name, ty, wire) = (&f.ident, f.ty, &f.wire_name);
        let read =
            quote_spanned!(ty.span()=> <#ty as _structured::__private::HasPartial>::partial_from);
        match f.serde.flatten {
            // A flattened struct's properties are this object's own.
            true => quote!(#name: #read(value)),
            false => quote!(#name: map.get(#wire).and_then(#read)),
        }
    });
    let impl_generics = bounded(
        cont,
        &[
            syn::parse_quote!(_structured::__private::HasPartial),
            syn::parse_quote!(_structured::__private::SchemaType),
            syn::parse_quote!('static),
        ],
    );
    let (impl_g, ty_g, where_g) = impl_generics.split_for_impl();
    let implemented = quote! {
        #[automatically_derived]
        impl #impl_g _structured::__private::HasPartial for #ident #ty_g #where_g {
            type Partial = #partial #ty_g;
            fn partial_from(
                value: &_structured::__private::Value,
            ) -> ::core::option::Option<Self::Partial> {
                let map = value.as_object()?;
                ::core::option::Option::Some(#partial { #(#reads,)* })
            }
        }
    };
    (declared, implemented)
}

/// The type's generics with `bounds` added to each type parameter.
fn bounded(cont: &Container, bounds: &[syn::TypeParamBound]) -> syn::Generics {
    let mut generics = cont.original.generics.clone();
    for param in generics.type_params_mut() {
        param.bounds.extend(bounds.iter().cloned());
    }
    generics
}

/// A field's own visibility, so the companion shows no more than the type does.
fn field_visibility(cont: &Container, field: &Field) -> TokenStream {
    let syn::Data::Struct(data) = &cont.original.data else {
        return TokenStream::new();
    };
    data.fields
        .iter()
        .find(|f| f.ident.as_ref() == Some(&field.ident))
        .map(|f| {
            let vis = &f.vis;
            quote!(#vis)
        })
        .unwrap_or_default()
}

/// Values of this type appear only once whole.
fn whole(cont: &Container) -> TokenStream {
    let ident = cont.ident;
    let mut generics = cont.original.generics.clone();
    generics
        .make_where_clause()
        .predicates
        .push(syn::parse_quote!(Self: _structured::__private::DeserializeOwned));
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    quote! {
        #[automatically_derived]
        impl #impl_generics _structured::__private::HasPartial for #ident #ty_generics #where_clause {
            type Partial = Self;
            fn partial_from(value: &_structured::__private::Value) -> ::core::option::Option<Self> {
                _structured::__private::whole_from(value)
            }
        }
    }
}

//! `SchemaType` (the type's schema node) and `StructuredOutput` (the root schema, built once).

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned as _;

use crate::ast::{Body, Container, Field, Variant};
use crate::attr::{BoundValue, LengthAttr, RangeAttr, Spanned};

pub fn schema_type_impl(cont: &Container) -> TokenStream {
    let ident = cont.ident;
    let g = super::generics(cont.original);
    let (impl_generics, ty_generics, where_clause) =
        (&g.impl_generics, &g.ty_generics, &g.where_clause);
    let body = match &cont.body {
        Body::Struct(fields) => {
            let name = cont.schema_name_tokens();
            let description = opt_str(cont.description().as_deref());
            let properties = fields.iter().filter(|f| !f.serde.skip).map(property);
            quote! {
                _structured::__private::SchemaGen::named::<Self>(__structured_gen, #name, |__structured_gen| {
                    _structured::__private::object(#description, ::std::vec![#(#properties),*])
                })
            }
        }
        Body::Enum(variants) => {
            let kept: Vec<&Variant> = variants.iter().filter(|v| !v.skip).collect();
            let values = kept.iter().map(|v| &v.wire_name);
            let description = opt_str(enum_description(cont, &kept).as_deref());
            quote! { _structured::__private::string_enum(#description, &[#(#values),*]) }
        }
        Body::Unsupported => quote!(::core::unimplemented!()),
    };
    quote! {
        #[automatically_derived]
        impl #impl_generics _structured::__private::SchemaType for #ident #ty_generics #where_clause {
            fn json_schema(
                __structured_gen: &mut _structured::__private::SchemaGen,
            ) -> _structured::__private::Value {
                #body
            }

            fn validate_nested(
                &self,
                __structured_path: &_structured::__private::Path<'_>,
                __structured_out: &mut ::std::vec::Vec<_structured::__private::Violation>,
            ) {
                <Self as _structured::__private::Validate>::validate_at(self, __structured_path, __structured_out)
            }
        }
    }
}

pub fn structured_output_impl(cont: &Container) -> TokenStream {
    let ident = cont.ident;
    let mut generics = cont.original.generics.clone();
    let g = super::generics(cont.original);
    let name = cont.schema_name_tokens();
    let description = opt_str(cont.description().as_deref());
    let schema = quote! {
        _structured::__private::derived_schema(
            #name,
            #description,
            _structured::__private::SchemaGen::root::<Self>(),
        )
    };
    let build = match markdown_fields(cont) {
        Some((content, title)) => {
            let title = opt_str(title);
            quote!(|| _structured::__private::derived_markdown(#schema, #content, #title))
        }
        None => quote!(|| #schema),
    };
    let (body, where_clause) = if g.is_generic {
        // Each instantiation has its own schema (a static here would be shared by all of them).
        generics
            .make_where_clause()
            .predicates
            .push(syn::parse_quote!(Self: _structured::__private::DeserializeOwned));
        let (_, _, where_clause) = generics.split_for_impl();
        (
            quote!(_structured::__private::generic_schema::<Self>(#build)),
            quote!(#where_clause),
        )
    } else {
        let body = quote! {
            static __STRUCTURED_SCHEMA: _structured::__private::Once<_structured::__private::ResponseSchema> =
                _structured::__private::Once::new();
            __STRUCTURED_SCHEMA.get_or_init(#build)
        };
        (body, g.where_clause.clone())
    };
    let (impl_generics, ty_generics) = (&g.impl_generics, &g.ty_generics);
    let from_text = super::from_text::method(cont);
    quote! {
        #[automatically_derived]
        impl #impl_generics _structured::__private::StructuredOutput for #ident #ty_generics #where_clause {
            fn schema() -> &'static _structured::__private::ResponseSchema {
                #body
            }
            #from_text
        }
    }
}

/// The wire names of the `#[markdown]` field and the `#[markdown(title)]` field, if any.
fn markdown_fields<'c>(cont: &'c Container) -> Option<(&'c str, Option<&'c str>)> {
    let Body::Struct(fields) = &cont.body else {
        return None;
    };
    let marked = |title: bool| {
        fields
            .iter()
            .find(|f| f.attrs.markdown.as_ref().is_some_and(|m| m.title == title))
            .map(|f| f.wire_name.as_str())
    };
    Some((marked(false)?, marked(true)))
}

/// `("name", node)` for one property: the field type's schema, its constraints, its description.
fn property(f: &Field) -> TokenStream {
    let ty = f.ty;
    let name = &f.wire_name;
    let range = f.attrs.range.as_ref().map(|r| {
        let value = range_tokens(r);
        quote_spanned!(r.span=> <#ty as _structured::__private::RangeTarget>::apply_range(&mut __structured_node, #value);)
    });
    let enum_values = f.attrs.enum_values.as_ref().map(|e| {
        let values = e.values.iter().map(|v| &v.value);
        quote_spanned!(e.span=> <#ty as _structured::__private::EnumTarget>::apply_enum(&mut __structured_node, &[#(#values),*]);)
    });
    let length = f.attrs.length.as_ref().map(|l| {
        let value = length_tokens(l);
        quote_spanned!(l.span=> <#ty as _structured::__private::LengthTarget>::apply_length(&mut __structured_node, #value);)
    });
    let pattern = f.attrs.pattern.as_ref().map(|p| {
        let value = &p.pattern.value;
        quote_spanned!(p.span=> <#ty as _structured::__private::PatternTarget>::apply_pattern(&mut __structured_node, #value);)
    });
    let format = f.attrs.format.as_ref().map(|fa| {
        let value = &fa.format;
        quote_spanned!(fa.span=> <#ty as _structured::__private::FormatTarget>::apply_format(&mut __structured_node, #value);)
    });
    let doc = f.doc.as_ref().map(
        |d| quote!(__structured_node = _structured::__private::describe(__structured_node, #d);),
    );
    let schema = quote_spanned!(ty.span()=> <#ty as _structured::__private::SchemaType>::json_schema(__structured_gen));
    quote! {
        (#name, {
            #[allow(unused_mut)]
            let mut __structured_node = #schema;
            #range
            #length
            #pattern
            #format
            #enum_values
            #doc
            __structured_node
        })
    }
}

pub(super) fn length_tokens(l: &LengthAttr) -> TokenStream {
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

pub(super) fn range_tokens(r: &RangeAttr) -> TokenStream {
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
            let lit = super::int_literal(i);
            quote!(_structured::__private::Bound::Int(#lit))
        }
        BoundValue::Float(x) => {
            let lit = super::float_literal(x);
            quote!(_structured::__private::Bound::Float(#lit))
        }
    };
    quote!(::core::option::Option::Some(#value))
}

fn opt_str(s: Option<&str>) -> TokenStream {
    match s {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    }
}

/// The type's description, then one line per documented variant: a string enum has no other
/// place for what each value means.
fn enum_description(cont: &Container, variants: &[&Variant]) -> Option<String> {
    let mut lines: Vec<String> = cont.description().into_iter().collect();
    for v in variants {
        if let Some(doc) = &v.doc {
            lines.push(format!("- {}: {}", v.wire_name, doc.replace('\n', " ")));
        }
    }
    (!lines.is_empty()).then(|| lines.join("\n"))
}

//! `SchemaType` (the type's schema node) and `StructuredOutput` (the root schema, built once).

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned as _;

use crate::ast::{Body, Container, Field, Shape, Tagging, Variant};

pub fn schema_type_impl(cont: &Container) -> TokenStream {
    let ident = cont.ident;
    let g = super::generics(cont.original);
    let (impl_generics, ty_generics, where_clause) =
        (&g.impl_generics, &g.ty_generics, &g.where_clause);
    let name = cont.schema_name_tokens();
    let description = super::opt_str(cont.description().as_deref());
    let body = match &cont.body {
        Body::Struct(fields) => {
            let node = object_node(cont.description().as_deref(), fields);
            quote! {
                _structured::__private::SchemaGen::named::<Self>(__structured_gen, #name, |__structured_gen| {
                    #node
                })
            }
        }
        Body::Newtype(f) => {
            let node = field_node(f);
            // The field's own doc comment wins over the type's.
            let describe = match (&f.doc, cont.description()) {
                (None, Some(d)) => quote!(_structured::__private::describe(__structured_node, #d)),
                _ => quote!(__structured_node),
            };
            quote! {
                _structured::__private::SchemaGen::named::<Self>(__structured_gen, #name, |__structured_gen| {
                    let __structured_node = #node;
                    #describe
                })
            }
        }
        Body::Tuple(fields) => {
            let nodes = fields.iter().map(field_node);
            quote! {
                _structured::__private::SchemaGen::named::<Self>(__structured_gen, #name, |__structured_gen| {
                    _structured::__private::describe_opt(
                        _structured::__private::tuple(::std::vec![#(#nodes),*]),
                        #description,
                    )
                })
            }
        }
        Body::Enum(variants) if is_string_enum(cont) => {
            let kept: Vec<&Variant> = variants.iter().filter(|v| !v.skip).collect();
            let values = kept.iter().map(|v| &v.wire_name);
            let description = super::opt_str(enum_description(cont, &kept).as_deref());
            quote! { _structured::__private::string_enum(#description, &[#(#values),*]) }
        }
        Body::Enum(variants) => {
            let tagging = tagging_tokens(&cont.tagging);
            let branches = variants.iter().filter(|v| !v.skip).map(|v| {
                let data = match &v.shape {
                    Shape::Unit => quote!(::core::option::Option::None),
                    Shape::Newtype(f) => {
                        let node = field_node(f);
                        quote!(::core::option::Option::Some(#node))
                    }
                    Shape::Tuple(fields) => {
                        let nodes = fields.iter().map(field_node);
                        quote!(::core::option::Option::Some(_structured::__private::tuple(
                            ::std::vec![#(#nodes),*]
                        )))
                    }
                    Shape::Struct(fields) => {
                        let node = object_node(None, fields);
                        quote!(::core::option::Option::Some(#node))
                    }
                };
                let (wire, doc) = (&v.wire_name, super::opt_str(v.doc.as_deref()));
                quote!(_structured::__private::variant(&#tagging, #wire, #doc, #data))
            });
            quote! {
                _structured::__private::SchemaGen::named::<Self>(__structured_gen, #name, |__structured_gen| {
                    // serde reads an enum with data through what it buffers: the value is judged
                    // against the schema.
                    __structured_gen.check_against_schema();
                    _structured::__private::variants(#description, ::std::vec![#(#branches),*])
                })
            }
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

/// The `StructuredOutput` impl: the schema built once, and `from_text` as `from_text` gives it.
pub fn structured_output_impl(cont: &Container, from_text: TokenStream) -> TokenStream {
    let ident = cont.ident;
    let mut generics = cont.original.generics.clone();
    let g = super::generics(cont.original);
    let name = cont.schema_name_tokens();
    let description = super::opt_str(cont.description().as_deref());
    let schema = quote! {
        _structured::__private::derived_root::<Self>(#name, #description)
    };
    let text_variant = match &cont.body {
        Body::Enum(variants) => variants.iter().any(|v| v.attrs.markdown.is_some()),
        _ => false,
    };
    let build = match markdown_fields(cont) {
        Some((content, title)) => {
            let title = super::opt_str(title);
            quote!(|| _structured::__private::derived_markdown(#schema, #content, #title))
        }
        // A plain-text answer is the `#[markdown]` variant: the value itself, a string.
        None if text_variant => quote!(|| _structured::__private::derived_text(#schema)),
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
            _structured::__private::schema_once(&__STRUCTURED_SCHEMA, #build)
        };
        // Reading needs `Deserialize`; a type the program only sends (tool parameters, a
        // schema to publish) derives without it. The bound is written for all lifetimes so the
        // compiler takes it as a condition of the impl, not a claim checked here: a type that is
        // not `Deserialize` gets its schema and rules, and reading it is refused where it is read.
        generics.make_where_clause().predicates.push(
            syn::parse_quote!(for<'__structured> Self: _structured::__private::DeserializeOwned),
        );
        let (_, _, where_clause) = generics.split_for_impl();
        (body, quote!(#where_clause))
    };
    let (impl_generics, ty_generics) = (&g.impl_generics, &g.ty_generics);
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

/// A strict object of named fields: each field a property, a flattened field's properties
/// merged in.
fn object_node(description: Option<&str>, fields: &[Field]) -> TokenStream {
    let description = super::opt_str(description);
    let properties = fields
        .iter()
        .filter(|f| !f.serde.skip && !f.serde.flatten)
        .map(|f| {
            let (name, node) = (&f.wire_name, field_node(f));
            quote!((#name, #node))
        });
    let flattened: Vec<TokenStream> = fields
        .iter()
        .filter(|f| !f.serde.skip && f.serde.flatten)
        .map(field_node)
        .collect();
    let aliases = fields
        .iter()
        .filter(|f| !f.serde.aliases.is_empty())
        .map(|f| {
            let (name, aliases) = (&f.wire_name, &f.serde.aliases);
            quote!(__structured_gen.aliases(#name, &[#(#aliases),*]);)
        });
    let object = quote!({
        #(#aliases)*
        _structured::__private::object(#description, ::std::vec![#(#properties),*])
    });
    if flattened.is_empty() {
        object
    } else {
        // serde reads flattened fields through what it buffers: the value is judged against the
        // schema.
        quote!({
            __structured_gen.check_against_schema();
            _structured::__private::flatten(#object, ::std::vec![#(#flattened),*])
        })
    }
}

/// One field's node: its type's schema, its rules, its description.
fn field_node(f: &Field) -> TokenStream {
    let ty = f.ty;
    let range = f.attrs.range.as_ref().map(|r| {
        let value = super::range_tokens(r);
        quote_spanned!(r.span=> <#ty as _structured::__private::RangeTarget>::apply_range(&mut __structured_node, #value);)
    });
    let enum_values = f.attrs.enum_values.as_ref().map(|e| {
        let values = e.values.iter().map(|v| &v.value);
        quote_spanned!(e.span=> <#ty as _structured::__private::EnumTarget>::apply_enum(&mut __structured_node, &[#(#values),*]);)
    });
    let length = f.attrs.length.as_ref().map(|l| {
        let value = super::length_tokens(l);
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
        {
            #[allow(unused_mut)]
            let mut __structured_node = #schema;
            #range
            #length
            #pattern
            #format
            #enum_values
            #doc
            __structured_node
        }
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

/// A unit-only enum written as its names: a string enum.
pub(super) fn is_string_enum(cont: &Container) -> bool {
    match &cont.body {
        Body::Enum(variants) => {
            cont.tagging == Tagging::External && variants.iter().all(Variant::is_unit)
        }
        _ => false,
    }
}

fn tagging_tokens(tagging: &Tagging) -> TokenStream {
    match tagging {
        Tagging::External => quote!(_structured::__private::Tagging::External),
        Tagging::Internal { tag } => quote!(_structured::__private::Tagging::Internal(#tag)),
        Tagging::Adjacent { tag, content } => {
            quote!(_structured::__private::Tagging::Adjacent(#tag, #content))
        }
        Tagging::Untagged => quote!(_structured::__private::Tagging::Untagged),
    }
}

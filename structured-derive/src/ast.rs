//! The model of the input: the container, then fields or variants in declaration order, each with
//! its parsed attributes and the syntax it came from.

use syn::{Data, DeriveInput, Fields, Ident, Type};

use crate::attr::{self, ContainerAttrs, FieldAttrs, SerdeField};
use crate::case::RenameRule;
use crate::ctxt::Ctxt;

pub struct Container<'a> {
    pub original: &'a DeriveInput,
    pub ident: &'a Ident,
    pub attrs: ContainerAttrs,
    pub doc: Option<String>,
    pub body: Body<'a>,
}

pub enum Body<'a> {
    Struct(Vec<Field<'a>>),
    Enum(Vec<Variant<'a>>),
    /// A shape the derive rejects (tuple or unit struct, union); `check` reports it.
    Unsupported,
}

pub struct Field<'a> {
    pub ident: &'a Ident,
    pub ty: &'a Type,
    /// The property name serde reads.
    pub wire_name: String,
    pub doc: Option<String>,
    pub attrs: FieldAttrs,
    pub serde: SerdeField,
}

pub struct Variant<'a> {
    pub original: &'a syn::Variant,
    pub wire_name: String,
    pub doc: Option<String>,
    pub attrs: FieldAttrs,
    pub skip: bool,
}

impl<'a> Container<'a> {
    /// Parses everything, reporting attribute errors into `cx` without stopping.
    pub fn from_ast(cx: &Ctxt, input: &'a DeriveInput) -> Container<'a> {
        let attrs = attr::container(cx, &input.attrs);
        let serde = attr::serde_container(cx, &input.attrs);
        let body = match &input.data {
            Data::Struct(data) => match &data.fields {
                Fields::Named(named) => Body::Struct(
                    named
                        .named
                        .iter()
                        .filter_map(|f| field(cx, f, serde.rename_all))
                        .collect(),
                ),
                _ => Body::Unsupported,
            },
            Data::Enum(data) => Body::Enum(
                data.variants
                    .iter()
                    .map(|v| variant(cx, v, serde.rename_all))
                    .collect(),
            ),
            Data::Union(_) => Body::Unsupported,
        };
        Container {
            original: input,
            ident: &input.ident,
            attrs,
            doc: attr::doc(&input.attrs),
            body,
        }
    }

    /// The schema name: `#[structured(name)]`, else the type name in snake_case.
    /// The schema name as code: the name, or for a generic type without a name of its own, the
    /// name with each instantiation's type parameters (`envelope_ticket`).
    pub fn schema_name_tokens(&self) -> proc_macro2::TokenStream {
        let name = self.schema_name();
        let params: Vec<&syn::Ident> = self
            .original
            .generics
            .type_params()
            .map(|p| &p.ident)
            .collect();
        if self.attrs.name.is_some() || params.is_empty() {
            return quote::quote!(#name);
        }
        quote::quote!(&_structured::__private::instance_name(
            #name,
            &[#(::core::any::type_name::<#params>()),*],
        ))
    }

    pub fn schema_name(&self) -> String {
        match &self.attrs.name {
            Some(name) => name.value.clone(),
            None => crate::case::pascal_to_snake(&self.ident.unraw_string()),
        }
    }

    /// `#[structured(description)]`, else the doc comment.
    pub fn description(&self) -> Option<String> {
        self.attrs.description.clone().or_else(|| self.doc.clone())
    }
}

fn field<'a>(cx: &Ctxt, f: &'a syn::Field, rename_all: Option<RenameRule>) -> Option<Field<'a>> {
    let ident = f.ident.as_ref()?;
    let serde = attr::serde_field(cx, &f.attrs);
    let plain = ident.unraw_string();
    let wire_name = match (&serde.rename, rename_all) {
        (Some(name), _) => name.clone(),
        (None, Some(rule)) => rule.apply_to_field(&plain),
        (None, None) => plain,
    };
    Some(Field {
        ident,
        ty: &f.ty,
        wire_name,
        doc: attr::doc(&f.attrs),
        attrs: attr::field(cx, &f.attrs),
        serde,
    })
}

fn variant<'a>(cx: &Ctxt, v: &'a syn::Variant, rename_all: Option<RenameRule>) -> Variant<'a> {
    let serde = attr::serde_field(cx, &v.attrs);
    let plain = v.ident.unraw_string();
    let wire_name = match (&serde.rename, rename_all) {
        (Some(name), _) => name.clone(),
        (None, Some(rule)) => rule.apply_to_variant(&plain),
        (None, None) => plain,
    };
    Variant {
        original: v,
        wire_name,
        doc: attr::doc(&v.attrs),
        attrs: attr::field(cx, &v.attrs),
        skip: serde.skip,
    }
}

trait UnrawString {
    fn unraw_string(&self) -> String;
}

impl UnrawString for Ident {
    fn unraw_string(&self) -> String {
        let s = self.to_string();
        s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
    }
}

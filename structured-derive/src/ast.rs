//! The model of the input: the container, then fields or variants in declaration order, each with
//! its parsed attributes and the syntax it came from.

use syn::{Data, DeriveInput, Fields, Ident, Type};

use crate::attr::{self, ContainerAttrs, FieldAttrs, SerdeContainer, SerdeField};
use crate::case::RenameRule;
use crate::ctxt::Ctxt;

pub struct Container<'a> {
    pub original: &'a DeriveInput,
    pub ident: &'a Ident,
    pub attrs: ContainerAttrs,
    pub doc: Option<String>,
    pub body: Body<'a>,
    pub tagging: Tagging,
    pub serde: SerdeContainer,
}

pub enum Body<'a> {
    Struct(Vec<Field<'a>>),
    /// `struct AccountId(String)`, or a struct with `#[serde(transparent)]`: serde reads the one
    /// field's value alone, so the schema is that field's, with its rules.
    Newtype(Box<Field<'a>>),
    /// `struct Pair(A, B)`: serde reads an array with one item per field.
    Tuple(Vec<Field<'a>>),
    Enum(Vec<Variant<'a>>),
    /// A shape the derive rejects (unit struct, union); `check` reports it.
    Unsupported,
}

pub struct Field<'a> {
    /// The field's name, or `_0`, `_1`.. for a tuple field (a binding, and a name in messages).
    pub ident: Ident,
    /// How the field is reached: `self.name` or `self.0`.
    pub member: syn::Member,
    pub ty: &'a Type,
    /// The property name serde reads (a tuple field's is its index).
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
    pub shape: Shape<'a>,
}

/// What a variant holds.
pub enum Shape<'a> {
    Unit,
    /// `V(T)`: the value of `T`.
    Newtype(Box<Field<'a>>),
    /// `V(A, B)`: an array.
    Tuple(Vec<Field<'a>>),
    /// `V { a: A }`: an object.
    Struct(Vec<Field<'a>>),
}

/// How serde writes an enum's variants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tagging {
    /// `"Unit"` or `{"Variant": data}` (serde's default).
    External,
    /// `#[serde(tag = "t")]`: `{"t": "Variant", ...fields}`.
    Internal { tag: String },
    /// `#[serde(tag = "t", content = "c")]`: `{"t": "Variant", "c": data}`.
    Adjacent { tag: String, content: String },
    /// `#[serde(untagged)]`: the data alone (a unit variant is `null`).
    Untagged,
}

impl Variant<'_> {
    pub fn is_unit(&self) -> bool {
        matches!(self.shape, Shape::Unit)
    }
}

impl<'a> Container<'a> {
    /// Parses everything, reporting attribute errors into `cx` without stopping.
    pub fn from_ast(cx: &Ctxt, input: &'a DeriveInput) -> Container<'a> {
        let attrs = attr::container(cx, &input.attrs);
        let serde = attr::serde_container(cx, &input.attrs);
        let body = match &input.data {
            Data::Struct(data) => match &data.fields {
                Fields::Named(_) if serde.transparent => {
                    let mut fields = fields(cx, &data.fields, serde.rename_all);
                    fields.retain(|f| !f.serde.skip);
                    match fields.len() {
                        1 => Body::Newtype(Box::new(fields.remove(0))),
                        _ => Body::Unsupported,
                    }
                }
                Fields::Named(_) => Body::Struct(fields(cx, &data.fields, serde.rename_all)),
                Fields::Unnamed(unnamed) if unnamed.unnamed.len() == 1 => {
                    let mut fields = fields(cx, &data.fields, None);
                    Body::Newtype(Box::new(fields.remove(0)))
                }
                Fields::Unnamed(_) => Body::Tuple(fields(cx, &data.fields, None)),
                Fields::Unit => Body::Unsupported,
            },
            Data::Enum(data) => Body::Enum(
                data.variants
                    .iter()
                    .map(|v| variant(cx, v, serde.rename_all, serde.rename_all_fields))
                    .collect(),
            ),
            Data::Union(_) => Body::Unsupported,
        };
        let tagging = match (&serde.tag, &serde.content, serde.untagged) {
            (_, _, true) => Tagging::Untagged,
            (Some(tag), Some(content), _) => Tagging::Adjacent {
                tag: tag.clone(),
                content: content.clone(),
            },
            (Some(tag), None, _) => Tagging::Internal { tag: tag.clone() },
            _ => Tagging::External,
        };
        Container {
            original: input,
            ident: &input.ident,
            attrs,
            doc: attr::doc(&input.attrs),
            body,
            tagging,
            serde,
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

fn fields<'a>(cx: &Ctxt, fields: &'a Fields, rename_all: Option<RenameRule>) -> Vec<Field<'a>> {
    fields
        .iter()
        .enumerate()
        .map(|(i, f)| field(cx, i, f, rename_all))
        .collect()
}

fn field<'a>(
    cx: &Ctxt,
    index: usize,
    f: &'a syn::Field,
    rename_all: Option<RenameRule>,
) -> Field<'a> {
    let serde = attr::serde_field(cx, &f.attrs);
    let (ident, member, plain) = match &f.ident {
        Some(ident) => (
            ident.clone(),
            syn::Member::Named(ident.clone()),
            ident.unraw_string(),
        ),
        None => (
            quote::format_ident!("_{}", index),
            syn::Member::Unnamed(syn::Index::from(index)),
            index.to_string(),
        ),
    };
    let wire_name = match (&serde.rename, rename_all) {
        (Some(name), _) => name.clone(),
        (None, Some(rule)) if f.ident.is_some() => rule.apply_to_field(&plain),
        _ => plain,
    };
    Field {
        ident,
        member,
        ty: &f.ty,
        wire_name,
        doc: attr::doc(&f.attrs),
        attrs: attr::field(cx, &f.attrs),
        serde,
    }
}

fn variant<'a>(
    cx: &Ctxt,
    v: &'a syn::Variant,
    rename_all: Option<RenameRule>,
    rename_all_fields: Option<RenameRule>,
) -> Variant<'a> {
    let serde = attr::serde_field(cx, &v.attrs);
    let plain = v.ident.unraw_string();
    let wire_name = match (&serde.rename, rename_all) {
        (Some(name), _) => name.clone(),
        (None, Some(rule)) => rule.apply_to_variant(&plain),
        (None, None) => plain,
    };
    let field_rule = serde.rename_all.or(rename_all_fields);
    let shape = match &v.fields {
        Fields::Unit => Shape::Unit,
        Fields::Unnamed(u) if u.unnamed.len() == 1 => {
            Shape::Newtype(Box::new(fields(cx, &v.fields, None).remove(0)))
        }
        Fields::Unnamed(_) => Shape::Tuple(fields(cx, &v.fields, None)),
        Fields::Named(_) => Shape::Struct(fields(cx, &v.fields, field_rule)),
    };
    Variant {
        original: v,
        wire_name,
        doc: attr::doc(&v.attrs),
        attrs: attr::field(cx, &v.attrs),
        skip: serde.skip,
        shape,
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

//! `#[derive(StructuredOutput)]`: one Rust declaration → a strict JSON Schema and a compiled
//! validator. Use it through `structured-runtime`, which re-exports it.
//!
//! The pipeline is parse (`attr`, `ast`) → check (`check`) → emit (`emit`). Parsing and checking
//! collect every error; on any error the output is those errors plus stub impls, so the user sees
//! the attribute mistakes and not a cascade of missing-trait errors at every use site.

mod ast;
mod attr;
mod case;
mod check;
mod ctxt;
mod emit;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

/// Derives `SchemaType`, `Validate` and (for structs) `StructuredOutput`.
///
/// See the `structured-runtime` crate documentation for the attributes.
#[proc_macro_derive(
    StructuredOutput,
    attributes(structured, range, enum_values, fallback_keyword)
)]
pub fn derive_structured_output(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    emit::expand(&input).into()
}

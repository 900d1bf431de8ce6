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
mod kind;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

/// Derives `SchemaType`, `Validate` and (for structs) `StructuredOutput`.
///
/// See the `structured-runtime` crate documentation for the attributes.
#[proc_macro_derive(
    StructuredOutput,
    attributes(
        structured,
        range,
        length,
        pattern,
        format,
        validate,
        enum_values,
        fallback_keyword,
        markdown
    )
)]
pub fn derive_structured_output(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    emit::expand(&input).into()
}

#[cfg(test)]
mod tests {
    use syn::{parse_quote, DeriveInput};

    use crate::ast::{Body, Container};
    use crate::ctxt::Ctxt;

    /// Every error message parse and check report for `input`, in order.
    fn errors(input: DeriveInput) -> Vec<String> {
        let cx = Ctxt::new();
        let cont = Container::from_ast(&cx, &input);
        crate::check::check(&cx, &cont);
        match cx.check() {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn a_correct_declaration_has_no_error() {
        let input: DeriveInput = parse_quote! {
            /// Doc.
            #[structured(name = "x", description = "d")]
            #[serde(rename_all = "camelCase", deny_unknown_fields)]
            struct X {
                #[range(-1.0, 1.0)] a: f64,
                #[range(min = 0)] b: Option<Vec<u8>>,
                #[enum_values("p", "q")] c: Vec<String>,
                #[serde(skip)] d: std::collections::HashSet<u8>,
                #[serde(rename = "E", default)] e: bool,
            }
        };
        assert_eq!(errors(input), Vec::<String>::new());
    }

    /// An optional free-text field takes an excerpt (`Some` of the text); an optional flag, or
    /// an optional text with only a fixed default, is still refused: a reading always has one.
    #[test]
    fn an_optional_free_text_field_takes_an_excerpt() {
        let ok: DeriveInput = parse_quote! {
            struct X {
                #[fallback_keyword(excerpt = 100)] note: Option<String>,
            }
        };
        assert_eq!(errors(ok), Vec::<String>::new());
        let refused: DeriveInput = parse_quote! {
            struct X {
                #[fallback_keyword("on")] on: Option<bool>,
                #[fallback_keyword(default = "x")] note: Option<String>,
            }
        };
        let errors = errors(refused);
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors[1].contains("excerpt = N"), "{errors:?}");
    }

    #[test]
    fn every_mistake_is_counted_once() {
        let input: DeriveInput = parse_quote! {
            #[structured(name = "a b", nmae = "x")]
            struct X {
                #[range(0.0, MAX)] a: f64,
                #[range(2, 1)] b: i32,
                #[range(0, 256)] c: u8,
                #[enum_values(1)] d: String,
                #[enum_values("a")] e: f32,
                #[range(0, 1)] #[range(0, 1)] f: f64,
                g: &'static str,
                #[serde(flatten)] h: Option<Inner>,
            }
        };
        let found = errors(input);
        assert_eq!(found.len(), 10, "{found:#?}");
        assert!(found[0].starts_with("unknown attribute key `nmae`"));
        assert!(found
            .iter()
            .any(|e| e.starts_with("schema name \"a b\" is invalid")));
        assert!(found
            .iter()
            .any(|e| e.starts_with("bound 256 is outside `u8`")));
    }

    #[test]
    fn enum_rules() {
        let input: DeriveInput = parse_quote! {
            enum E { A, #[range(0, 1)] B, C(#[enum_values("x")] u8) }
        };
        let found = errors(input);
        assert_eq!(found.len(), 2, "{found:#?}");
        let ok: DeriveInput = parse_quote! {
            #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
            enum E { VeryLow, #[serde(rename = "hi")] High, #[serde(skip)] Hidden }
        };
        let cx = Ctxt::new();
        let cont = Container::from_ast(&cx, &ok);
        let Body::Enum(variants) = &cont.body else {
            panic!("not an enum")
        };
        let names: Vec<&str> = variants.iter().map(|v| v.wire_name.as_str()).collect();
        assert_eq!(names, ["VERY_LOW", "hi", "HIDDEN"]);
        assert!(variants[2].skip);
        assert!(cx.check().is_ok());
    }

    #[test]
    fn rename_deserialize_form_is_the_name_serde_reads() {
        let input: DeriveInput = parse_quote! {
            struct X { #[serde(rename(serialize = "out", deserialize = "in"))] a: u8 }
        };
        let cx = Ctxt::new();
        let cont = Container::from_ast(&cx, &input);
        let Body::Struct(fields) = &cont.body else {
            panic!("not a struct")
        };
        assert_eq!(fields[0].wire_name, "in");
        assert!(cx.check().is_ok());
    }

    #[test]
    fn errors_emit_stub_impls_beside_compile_errors() {
        let input: DeriveInput = parse_quote! { struct X; };
        let out = crate::emit::expand(&input).to_string();
        assert!(out.contains("compile_error"));
        assert!(out.contains("SchemaType for X"));
        assert!(out.contains("StructuredOutput for X"));
    }

    #[test]
    fn fallback_keyword_forms_are_accepted() {
        let input: DeriveInput = parse_quote! {
            struct X {
                #[enum_values("none", "high", "exit")]
                #[fallback_keyword("high", "very bad" => "high", default = "none")]
                a: String,
                #[enum_values("p", "q")] #[fallback_keyword] b: Option<String>,
                #[fallback_keyword] c: bool,
                #[range(-1.0, 1.0)] #[fallback_keyword("c", default = -0.5)] d: f32,
                #[range(1, 9)] #[fallback_keyword(default = 3)] e: u8,
                #[fallback_keyword(excerpt = 20, default = "-")] f: String,
                #[fallback_keyword(default = "x")] g: String,
                #[fallback_keyword(default = "observe")] h: Action,
                i: Vec<Signal>,
                j: Option<String>,
                #[range(-1.0, 1.0)] k: f64,
            }
        };
        assert_eq!(errors(input), Vec::<String>::new());
    }

    #[test]
    fn fallback_keyword_mistakes_are_each_reported() {
        let input: DeriveInput = parse_quote! {
            struct X {
                #[enum_values("a", "b")] #[fallback_keyword("c", "x" => "d")] a: String,
                #[fallback_keyword(default = 1)] b: bool,
                #[fallback_keyword(excerpt = 0)] c: String,
                #[fallback_keyword(default = 1.5)] d: i64,
                #[range(2.0, 3.0)] #[fallback_keyword] e: f64,
                #[fallback_keyword] f: Vec<u8>,
                #[enum_values("a")] g: String,
                #[range(1, 2)] h: u8,
                #[fallback_keyword] #[fallback_keyword] i: bool,
            }
        };
        let found = errors(input);
        assert_eq!(found.len(), 11, "{found:#?}");
        // Attribute syntax first, then the rules per field in declaration order.
        assert!(found[0].starts_with("`excerpt` is a number of characters"));
        assert!(found[2].starts_with("\"c\" is not one of `a`'s #[enum_values]"));
        assert!(found[3].starts_with("\"d\" is not one of `a`'s #[enum_values]"));
        assert!(found[4].starts_with("`a` needs `default = \"..\"`"));
        assert!(found[10].starts_with("`h` would be 0"));
    }

    #[test]
    fn doc_comments_are_compacted() {
        let input: DeriveInput = parse_quote! {
            /// First line
            /// continues here.
            ///
            /// Second paragraph.
            struct X { a: u8 }
        };
        assert_eq!(
            crate::attr::doc(&input.attrs).as_deref(),
            Some("First line continues here.\nSecond paragraph.")
        );
    }
}

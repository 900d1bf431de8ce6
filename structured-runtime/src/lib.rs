//! # structured
//!
//! Typed, validated output from LLMs, declared once on a Rust type.
//!
//! `#[derive(StructuredOutput)]` on a struct with named fields gives it a strict JSON Schema
//! ([`StructuredOutput::schema`]), a one-pass parser that accepts exactly what that schema
//! accepts ([`StructuredOutput::from_json`]) and a [`Validate`] impl for the rules declared on its
//! fields. Every violation is reported with the JSON pointer of the value that broke it.
//!
//! ```
//! use structured_runtime::{StructuredOutput, Validate};
//!
//! /// A signal that drove the decision.
//! #[derive(StructuredOutput, serde::Deserialize, Debug)]
//! pub struct Signal {
//!     pub source: String,
//!     #[range(0.0, 1.0)]
//!     pub magnitude: f64,
//! }
//!
//! /// The heartbeat's decision.
//! #[derive(StructuredOutput, serde::Deserialize, Debug)]
//! pub struct Decision {
//!     #[enum_values("none", "low", "high")]
//!     pub severity: String,
//!     pub signals: Vec<Signal>,
//! }
//!
//! // The schema: strict, nested types inlined, built once.
//! let schema = Decision::schema();
//! assert!(schema.strict_preflight().is_ok());
//!
//! // Every violation, each with its path.
//! let err = Decision::from_json(
//!     r#"{"severity": "extreme", "signals": [{"source": "price", "magnitude": 1.4}]}"#,
//! ).unwrap_err();
//! let report: Vec<String> = err.violations().unwrap().iter().map(|v| v.to_string()).collect();
//! assert_eq!(report, [
//!     r#"/severity: enum: expected one of "none", "low", "high", found "extreme""#,
//!     "/signals/0/magnitude: range: expected a number in [0.0, 1.0], found 1.4",
//! ]);
//! ```
//!
//! ## Field attributes
//!
//! | attribute | on | effect |
//! |---|---|---|
//! | `#[range(min, max)]`, `#[range(min = ..)]`, `#[range(max = ..)]` | numbers, `Option`/`Vec` of numbers | inclusive `minimum`/`maximum` in the schema and in `Validate` |
//! | `#[enum_values("a", "b")]` | `String`, `Option<String>`, `Vec<String>` | `enum` in the schema and in `Validate` |
//! | `#[fallback_keyword(..)]` | `String`, `bool`, numbers, unit enums, `Option` of those | how [`StructuredOutput::from_text`] reads the field from prose (below) |
//! | `///` doc comment | type, field, variant | `description` |
//!
//! Container: `#[structured(name = "...", description = "...")]` (the name defaults to the type
//! name in snake_case). serde's `rename`, `rename_all`, `skip` and `default` are read so the schema
//! names exactly what serde reads.
//!
//! ## Prompt guidance
//!
//! [`StructuredOutput::prompt_guidance`] is the instruction a model reads when the provider
//! enforces no schema: a typed sketch with every name, type, enum value, range, nullability and
//! description (about 46% of the seed's pretty-printed schema in `o200k_base` tokens for
//! `HeartbeatDecision`; `cargo test -p structured-tests --test guidance -- --nocapture`).
//! [`StructuredOutput::prompt_guidance_as`] picks a [`GuidanceFormat`]; [`ResponseSchema::guidance_as`] does
//! the same for a schema given at run time.
//!
//! ## Reading prose: `from_text`
//!
//! When a model wrote no JSON at all, [`StructuredOutput::from_text`] fills the type from the
//! words of its answer, by the rules its fields declare with `#[fallback_keyword]`, and says
//! which fields the text gave and which are defaults ([`TextReport`]). The value always passes
//! [`Validate`]. Keywords match whole words, ignoring case; a keyword negated in its clause ("no
//! need to exit", "not critical", "don't escalate": a negator up to four words before it) does
//! not count.
//!
//! | field | attribute | value |
//! |---|---|---|
//! | `String` with `#[enum_values]`, or a unit enum | `#[fallback_keyword("critical", "high", default = "none")]` | the first listed value the text contains, in the order listed; else `default` (required unless the field is an `Option`, which is then `None`) |
//! | same | `#[fallback_keyword(default = "none")]` | every value, in declared order |
//! | same | `"sell everything" => "exit"` among the keywords | the phrase selects the value, at its place in the list |
//! | `bool` | `#[fallback_keyword("escalate", "page the on-call")]` or bare | true when a keyword (bare: the field's name) occurs |
//! | number | `#[fallback_keyword("pleasure", "valence", default = 0.0)]` or bare | the number after a label (bare: the field's name): `pleasure: 0.3`, `pleasure of -0.5`, `pleasure=+.3`, `confidence 80%` (a percent is a fraction when the field's maximum is at most 1); a number the field's `#[range]` or type refuses is not taken, and the report warns; else `default` (0 when absent, if the range allows it) |
//! | `String` | `#[fallback_keyword(excerpt = 200)]` | the first 200 characters (`default = ".."` instead for a text with no word) |
//! | `String` | `#[fallback_keyword(default = "neutral")]` | that value |
//!
//! Fields without the attribute take their empty value (`[]`, `None`, `""`, `false`) or their
//! type's `Default`; a field whose rules that would break (an `#[enum_values]` string, a range
//! without 0) must say its default, or the derive refuses with a message saying so. A type with
//! no `#[fallback_keyword]` has no prose reader ([`FromTextError::NotSupported`]).
//!
//! ```
//! use structured_runtime::{StructuredOutput, TextSource};
//!
//! #[derive(StructuredOutput, serde::Deserialize, Debug)]
//! struct Decision {
//!     #[enum_values("none", "low", "high", "critical")]
//!     #[fallback_keyword("critical", "high", "low", default = "none")]
//!     severity: String,
//!     #[enum_values("observe", "hedge", "exit")]
//!     #[fallback_keyword("exit", "sell everything" => "exit", "hedge", default = "observe")]
//!     action: String,
//!     #[range(0.0, 1.0)]
//!     #[fallback_keyword(default = 0.5)]
//!     confidence: f64,
//!     #[fallback_keyword("escalate")]
//!     escalate: bool,
//!     #[fallback_keyword(excerpt = 40)]
//!     rationale: String,
//! }
//!
//! let read = Decision::from_text(
//!     "Not critical, but high. No need to exit; hedge. Don't escalate. Confidence 70%.",
//! )?;
//! assert_eq!(read.value.severity, "high");
//! assert_eq!(read.value.action, "hedge");
//! assert_eq!(read.value.confidence, 0.7);
//! assert!(!read.value.escalate);
//! assert_eq!(read.value.rationale, "Not critical, but high. No need to exit;");
//! let field = read.report.field("/escalate").unwrap();
//! assert!(matches!(field.source, TextSource::Default { .. }));
//! # Ok::<(), structured_runtime::FromTextError>(())
//! ```
//!
//! ## Schema choices
//!
//! - Every property is `required` and every object has `additionalProperties: false`;
//!   `Option<T>` is required and nullable (`"type": ["string", "null"]`, or `anyOf` with `null`
//!   for nested types). A `#[serde(default)]` field is required too: strict mode allows no
//!   optional property, so the model must write it.
//! - Nested derived types are inlined, as the providers that do not resolve `$ref` need. A type
//!   that contains itself cannot be inlined: it is written once under `$defs` and referenced
//!   (`{"$ref": "#"}` when it is the root). Both forms pass [`ResponseSchema::strict_preflight`].
//! - Integer types carry the bounds they imply (`u8` → `minimum: 0, maximum: 255`).

// Lets the derive's `::structured_runtime` paths resolve inside this crate's own tests.
extern crate self as structured_runtime;

#[cfg(feature = "http")]
pub mod http;
pub mod provider;
pub mod read;
pub mod run;
pub mod schema;

#[doc(hidden)]
pub mod __private;

pub use provider::wire::ChatRequest;
pub use provider::StructuredOutputMode;
pub use read::{
    parse_answer, parse_response, parse_response_with, parse_value, Answer, DefaultReason,
    FieldReport, FromJsonError, FromText, FromTextError, ParseError, ParseOptions, Parsed,
    Provenance, TextReport, TextSource, Warning,
};
pub use run::{run_structured, Provider, RunConfig, RunError, Structured};
pub use schema::output::StructuredOutput;
pub use schema::{
    GuidanceFormat, Pointer, ResponseSchema, Rule, SchemaError, SchemaLimits, Validate, Violation,
    Violations,
};
pub use structured_derive::StructuredOutput;

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
//! | `///` doc comment | type, field, variant | `description` |
//!
//! Container: `#[structured(name = "...", description = "...")]` (the name defaults to the type
//! name in snake_case). serde's `rename`, `rename_all`, `skip` and `default` are read so the schema
//! names exactly what serde reads.
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

mod from_json;
mod from_text;
mod guidance;
mod instance_check;
mod output;
mod prose;
mod schema;
mod schema_type;
mod strict;
mod strict_de;
mod validate;

#[doc(hidden)]
pub mod __private;

pub use from_json::{from_json, FromJsonError};
pub use from_text::{
    DefaultReason, FieldReport, FromText, FromTextError, TextChoice, TextNumber, TextReport,
    TextSource,
};
pub use guidance::{render_guidance, GuidanceFormat};
pub use instance_check::check_instance;
pub use output::StructuredOutput;
pub use prose::{Hit, NumberHit, Prose, Search};
pub use schema::{is_valid_name, ResponseSchema, SchemaError};
pub use schema_type::{
    describe_enum, make_nullable, Bound, EnumTarget, Num, Range, RangeTarget, SchemaGen, SchemaType,
};
pub use strict::{
    limits as strict_limits, preflight as strict_preflight, StrictReport, StrictRule,
    StrictViolation,
};
pub use structured_derive::StructuredOutput;
pub use validate::{Path, Rule, Segment, Validate, Violation, Violations};

//! The schema core: what a response must look like, and how a value is checked against it.
//!
//! [`ResponseSchema`] is a named JSON Schema as providers take it. Derived types build theirs from
//! their Rust types ([`SchemaType`]); a schema given at run time is checked at construction and
//! compiled once with the `jsonschema` crate, the validator of record for it.

pub(crate) mod blind;
pub(crate) mod checks;
#[cfg(any(
    feature = "chrono",
    feature = "uuid",
    feature = "url",
    feature = "rust_decimal"
))]
pub(crate) mod common_types;
pub(crate) mod containers;
pub mod dialect;
pub(crate) mod enum_index;
pub(crate) mod guidance;
pub(crate) mod markdown;
pub(crate) mod node;
pub(crate) mod partial;
pub(crate) mod parts;
pub(crate) mod pattern;
pub(crate) mod pointer;
pub(crate) mod response;
pub(crate) mod strict;
pub(crate) mod types;
pub(crate) mod validate;
pub(crate) mod validation;

pub use checks::{LimitProfile, SchemaError, SchemaLimits};
pub use guidance::GuidanceFormat;
pub use markdown::Markdown;
pub use partial::HasPartial;
pub(crate) use pointer::Step;
pub use pointer::{Path, Pointer, PointerError, Segment};
pub use response::{is_valid_name, ResponseSchema};
pub use strict::{limits as strict_limits, StrictReport, StrictRule, StrictViolation};
pub use types::{EnumTarget, RangeTarget, SchemaGen, SchemaType};
pub use validate::{
    Rule, Validate, Violation, Violations, MAX_VIOLATIONS, MAX_VIOLATION_TEXT, SHOWN_VIOLATIONS,
};

/// What the macros exported from this module name where they expand (not an API).
#[doc(hidden)]
pub mod macro_support {
    pub use super::partial::whole_from;
    pub use serde_json::Value;
}

//! Common types from other crates as field types, each behind a cargo feature of this crate and
//! each off by default: `chrono` dates and times, `uuid::Uuid`, `url::Url` and
//! `rust_decimal::Decimal`.
//!
//! Each is a string with its JSON Schema `format` (a naive time and a decimal: a `pattern`).
//! Their parsers take more than the schema says (chrono takes `2024-2-9`, a `Uuid` its braced
//! and URN forms, a `Url` a space, a `Decimal` `1_000`), so every type that holds one is checked
//! against its schema after deserialization ([`SchemaGen::check_against_schema`]): a value is
//! accepted exactly when the validator of record accepts it and the parser reads it.
//!
//! What reading keeps: a `DateTime<Utc>` is the instant written (an offset is converted to UTC;
//! hold a `DateTime<FixedOffset>` to keep it), a `Url` is its parsed form (the host lowercased,
//! an empty path written `/`), a `Decimal` is the string as written, digit for digit.
//!
//! A decimal is asked for as a string because a JSON number cannot be read exactly: `serde_json`
//! reads every number into an `f64` before any type sees it (`0.30000000000000001` becomes
//! `0.3`), and its `arbitrary_precision` feature would break serde's tagged enums. A number
//! written where a decimal belongs is refused by `from_json`; the pipeline's coercion writes it
//! as a string with a warning (`StringFromScalar`), which strict mode refuses.

use serde_json::{json, Value};

use crate::schema::types::{SchemaGen, SchemaType};

/// A string in a `format`, whose parser is more lenient than the format.
#[cfg(any(feature = "chrono", feature = "uuid", feature = "url"))]
fn formatted(gen: &mut SchemaGen, format: &str) -> Value {
    gen.check_against_schema();
    json!({ "type": "string", "format": format })
}

#[cfg(feature = "chrono")]
mod chrono_types {
    use super::*;

    /// A calendar date, `2024-02-29` (format `date`).
    impl SchemaType for chrono::NaiveDate {
        fn json_schema(gen: &mut SchemaGen) -> Value {
            formatted(gen, "date")
        }
    }

    /// An instant in UTC, `2024-02-29T12:30:00Z` (format `date-time`; another offset is read
    /// as the same instant).
    impl SchemaType for chrono::DateTime<chrono::Utc> {
        fn json_schema(gen: &mut SchemaGen) -> Value {
            formatted(gen, "date-time")
        }
    }

    /// An instant with its offset, `2024-02-29T12:30:00+02:00` (format `date-time`).
    impl SchemaType for chrono::DateTime<chrono::FixedOffset> {
        fn json_schema(gen: &mut SchemaGen) -> Value {
            formatted(gen, "date-time")
        }
    }

    /// A time of day, `12:30:00` or `12:30:00.250`, with no offset (format `time` requires an
    /// offset, which a naive time has not: the shape is a pattern).
    impl SchemaType for chrono::NaiveTime {
        fn json_schema(gen: &mut SchemaGen) -> Value {
            gen.check_against_schema();
            json!({
                "type": "string",
                "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\\.[0-9]{1,9})?$"
            })
        }
    }
}

#[cfg(feature = "uuid")]
/// A UUID in its hyphenated form, `67e55044-10b1-426f-9247-bb680e5fe0c8` (format `uuid`).
impl SchemaType for uuid::Uuid {
    fn json_schema(gen: &mut SchemaGen) -> Value {
        formatted(gen, "uuid")
    }
}

#[cfg(feature = "url")]
/// An absolute URL (format `uri`).
impl SchemaType for url::Url {
    fn json_schema(gen: &mut SchemaGen) -> Value {
        formatted(gen, "uri")
    }
}

#[cfg(feature = "rust_decimal")]
/// A decimal number written as a string, `"12.50"`, read digit for digit. A `Decimal` holds 28
/// digits for certain (its parser rounds what is beyond), so the schema allows at most 28: an
/// integer part of up to 28 digits, and with a fraction at most 29 characters in all.
impl SchemaType for rust_decimal::Decimal {
    fn json_schema(gen: &mut SchemaGen) -> Value {
        gen.check_against_schema();
        json!({
            "type": "string",
            "pattern": "^-?(0|[1-9][0-9]{0,27})(\\.[0-9]{1,27})?$",
            "maxLength": 29
        })
    }
}

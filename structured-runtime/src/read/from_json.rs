//! `from_json`: deserialize and validate in one call, with every violation reported on failure.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::read::repair::inexact_number_from;
use crate::read::strict_de::{self, StrictDeError};
use crate::schema::validate::{Rule, Violation, Violations};
use crate::schema::{Pointer, ResponseSchema, Validate};

/// Why `T::from_json` refused its input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FromJsonError {
    /// The text is not JSON.
    #[error("not JSON: {message} at line {line}, column {column}")]
    Syntax {
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// What the parser expected.
        message: String,
    },
    /// The text is the beginning of a JSON value that ends early (a truncated answer).
    #[error("JSON ends early at line {line}, column {column}: the answer looks truncated")]
    Truncated {
        /// 1-based line where the input ended.
        line: usize,
        /// 1-based column where the input ended.
        column: usize,
    },
    /// The text is JSON but breaks the type's schema or rules: every violation, with its path.
    #[error("{0}")]
    Invalid(Violations),
    /// A number no 64-bit value holds as written (more digits than a float keeps, or beyond
    /// its range): reading it would change it.
    #[error("the number `{number}` at byte {offset} cannot be read as written: {reason}")]
    Inexact {
        /// Byte offset of the number.
        offset: usize,
        /// The number as written.
        number: String,
        /// What reading it would do.
        reason: String,
    },
}

impl FromJsonError {
    /// The violations, when the input was JSON.
    pub fn violations(&self) -> Option<&Violations> {
        match self {
            FromJsonError::Invalid(v) => Some(v),
            _ => None,
        }
    }
}

/// Deserializes `T` from `json` as strictly as its schema and checks `T`'s rules.
///
/// Valid input takes one pass: serde plus a key check per property, then `Validate`. A type
/// whose reading cannot vouch for the value as written (a set, a date, a tagged or flattened
/// part: [`ResponseSchema::needs_schema_check`]) is read once as a `Value` instead, `T` from
/// that, and the validator of record judges it against the schema. Invalid input is explained
/// against the schema from a `Value`, so the error lists every violation, not only the first
/// one serde met.
pub(crate) fn from_json<T: DeserializeOwned + Validate>(
    json: &str,
    schema: &ResponseSchema,
) -> Result<T, FromJsonError> {
    let mut slot = Slot::<T>(None);
    // (Matched out, without closures: this is compiled once per type read.)
    let read = match schema.needs_schema_check() {
        true => from_value_text(json, schema, &mut slot),
        false => match strict_de::read_strictly::<T>(json, false) {
            // The clean path, in line: the value is judged where it was read, not moved into
            // the slot and judged through it (64 instructions a call less).
            Ok((value, noted)) if !noted.loose => {
                return match value.validate() {
                    Ok(()) => match exact_numbers(json, noted.long_float()) {
                        Ok(()) => Ok(value),
                        Err(error) => Err(error),
                    },
                    Err(violations) => Err(FromJsonError::Invalid(violations)),
                }
            }
            Ok(_) => from_value_text(json, schema, &mut slot),
            Err(_) => refused_text(json, schema, &mut slot),
        },
    };
    match read {
        Ok(()) => match slot.0 {
            Some(value) => Ok(value),
            None => Err(FromJsonError::Invalid(refusal_report(None))),
        },
        Err(error) => Err(error),
    }
}

/// A type read through the one reader, behind a trait object: what [`from_json`] decides around
/// the reading (a `Value` to explain a refusal, the schema's check, the numbers as written) is
/// the same for every type and compiled once; only the reading and the type's rules are
/// compiled for each type.
trait ReadAs {
    /// Reads the value from `json` as the strict pass reads it, keeping it; where a refusal
    /// happened is worked out only when `locate` (it costs a second reading).
    fn read(&mut self, json: &str, locate: bool) -> Result<strict_de::Noted, StrictDeError>;
    /// The value kept, judged by the type's rules (`Ok` when none is kept).
    fn validate(&self) -> Result<(), Violations>;
}

/// Where a type is read into ([`ReadAs`]).
struct Slot<T>(Option<T>);

impl<T: DeserializeOwned + Validate> ReadAs for Slot<T> {
    fn read(&mut self, json: &str, locate: bool) -> Result<strict_de::Noted, StrictDeError> {
        // (Matched out, not `?`: this is compiled once per type read.)
        match strict_de::read_strictly::<T>(json, locate) {
            Ok((value, noted)) => {
                self.0 = Some(value);
                Ok(noted)
            }
            Err(error) => Err(error),
        }
    }

    fn validate(&self) -> Result<(), Violations> {
        self.0.as_ref().map_or(Ok(()), Validate::validate)
    }
}

/// [`from_json`] of a text the strict pass refused: explained against the schema from its
/// `Value`, or a syntax error. On `Ok`, `reader` holds the value (read another way: see
/// [`refused`]).
fn refused_text(
    json: &str,
    schema: &ResponseSchema,
    reader: &mut dyn ReadAs,
) -> Result<(), FromJsonError> {
    match serde_json::from_str::<Value>(json) {
        Ok(value) => {
            refused(schema, &value, reader, Refusal::OfText(json)).map_err(FromJsonError::Invalid)
        }
        Err(e) => Err(syntax_error(&e)),
    }
}

/// [`from_json`] through a `Value` read once (a key given twice refused, as the strict pass
/// refuses it), the type read from the text by the same reader as every other text, judged
/// from the value.
fn from_value_text(
    json: &str,
    schema: &ResponseSchema,
    reader: &mut dyn ReadAs,
) -> Result<(), FromJsonError> {
    let (value, long_float) = value_text(json)?;
    match reader.read(json, false) {
        Ok(_) => schema
            .check_instance(&value)
            .and_then(|()| reader.validate()),
        Err(_) => refused(schema, &value, reader, Refusal::OfText(json)),
    }
    .map_err(FromJsonError::Invalid)?;
    exact_numbers(json, long_float)
}

/// The `Value` of `json` (a key given twice refused) and where the first long number lies among
/// the floats only the text can vouch for: the part of [`from_value_text`] that is the same for
/// every type, compiled once.
fn value_text(json: &str) -> Result<(Value, Option<usize>), FromJsonError> {
    match strict_de::value_from_str(json) {
        Ok(read) => Ok(read),
        Err(e) if e.error.is_syntax() || e.error.is_eof() => Err(syntax_error(&e.error)),
        Err(e) => Err(FromJsonError::Invalid(Violations(vec![Violation {
            path: e.path,
            rule: Rule::Deserialize,
            expected: "a value the Rust type accepts".into(),
            found: strip_position(&e.error.to_string()),
        }]))),
    }
}

/// `Ok` unless a float was read that the text does not hold as written (looked for from
/// `long_float` on: [`strict_de::Noted::long_float`]).
fn exact_numbers(json: &str, long_float: Option<usize>) -> Result<(), FromJsonError> {
    match long_float.and_then(|from| inexact_number_from(json, from)) {
        None => Ok(()),
        Some(number) => Err(FromJsonError::Inexact {
            offset: number.at,
            reason: number.kind.to_string(),
            number: number.found.unwrap_or_default(),
        }),
    }
}

/// A value the strict pass refused: every violation the schema names (the validator of record
/// decides, the walk explains), or, when the schema accepts it, the value read again with
/// integral floats as integers (serde refuses `3.0` for an integer inside what it buffers, a
/// tagged or untagged enum or a flattened field, where the strict pass cannot read it as the
/// integer JSON Schema says it is); failing that, serde's own reason (a number beyond the Rust
/// type). On `Ok`, `reader` holds the value.
fn refused(
    schema: &ResponseSchema,
    value: &Value,
    reader: &mut dyn ReadAs,
    why: Refusal<'_>,
) -> Result<(), Violations> {
    if let Some(integers) = judged_with_integers(schema, value)? {
        // Read from its text, by the one reader every text goes through (a rare path: the
        // printing costs less than a second reader compiled for every type).
        if reader.read(&integers.to_string(), false).is_ok() {
            return reader.validate();
        }
    }
    // Only now is it worth working out where the type refused it (reading the text again).
    let first = match why {
        Refusal::OfText(json) => located_refusal(json, reader),
        Refusal::Found(first) => Some(first),
    };
    Err(refusal_report(first))
}

/// Where the reason the type refused a value is.
enum Refusal<'a> {
    /// In this text, read again to locate it.
    OfText(&'a str),
    /// Already found.
    Found(StrictDeError),
}

/// Why `json`, which the strict pass refused, does not read, and where
/// ([`strict_de::located`]).
fn located_refusal(json: &str, reader: &mut dyn ReadAs) -> Option<StrictDeError> {
    let first = reader.read(json, false).err()?;
    Some(strict_de::located(first, || reader.read(json, true)))
}

/// The schema's verdict on a value the type refused, and the value with integral floats written
/// as integers when it holds any (compiled once).
fn judged_with_integers(
    schema: &ResponseSchema,
    value: &Value,
) -> Result<Option<Value>, Violations> {
    schema.check_instance(value)?;
    Ok(integral_floats_as_integers(value))
}

/// The type's refusal as a violation: where it happened and serde's reason (compiled once).
fn refusal_report(first: Option<StrictDeError>) -> Violations {
    let (path, found) = match first {
        Some(first) => (first.path, strip_position(&first.error.to_string())),
        None => (Pointer::root(), "a value the strict reading refused".into()),
    };
    Violations(vec![Violation {
        path,
        rule: Rule::Deserialize,
        expected: "a value the Rust type accepts".into(),
        found,
    }])
}

/// `value` with every float that has no fractional part (and fits 64 bits) written as an
/// integer; `None` when it holds none.
fn integral_floats_as_integers(value: &Value) -> Option<Value> {
    let mut copy = value.clone();
    write_integers(&mut copy).then_some(copy)
}

/// Rewrites integral floats in place; whether any was. serde_json's depth limit bounds the
/// recursion.
fn write_integers(value: &mut Value) -> bool {
    match value {
        Value::Number(n) => match n.as_f64().filter(|_| n.is_f64()).and_then(strict_de::whole) {
            Some(strict_de::Whole::Unsigned(u)) => *value = Value::from(u),
            Some(strict_de::Whole::Signed(i)) => *value = Value::from(i),
            None => return false,
        },
        Value::Array(items) => {
            return items
                .iter_mut()
                .fold(false, |any, v| write_integers(v) | any)
        }
        Value::Object(map) => {
            return map
                .values_mut()
                .fold(false, |any, v| write_integers(v) | any)
        }
        _ => return false,
    }
    true
}

/// [`from_json`] on a value already parsed: the value is read where it is, and explained from
/// where it is when refused.
pub(crate) fn from_value<T: DeserializeOwned + Validate>(
    value: &Value,
    schema: &ResponseSchema,
) -> Result<T, Violations> {
    match strict_de::from_value::<T>(value) {
        Ok((out, noted)) => schema_check(schema, value, noted)
            .and_then(|()| out.validate())
            .map(|()| out),
        Err(first) => {
            let mut slot = Slot::<T>(None);
            refused(schema, value, &mut slot, Refusal::Found(first))?;
            slot.0.ok_or_else(|| refusal_report(None))
        }
    }
}

/// The value checked against the schema itself, where reading it into `T` could not vouch
/// for it: a set (a Rust set merges a repeated item without a word), a type whose parser takes
/// more than its schema (`SchemaGen::check_against_schema`), or a part serde read where the
/// strict pass cannot follow ([`strict_de::Noted::loose`]: tagged enums, flattened fields, an
/// absent field). The verdict is the validator of record's; the walk only explains it. Other
/// values cost nothing here.
pub(crate) fn schema_check(
    schema: &ResponseSchema,
    value: &Value,
    noted: strict_de::Noted,
) -> Result<(), Violations> {
    match noted.loose || schema.needs_schema_check() {
        true => schema.check_instance(value),
        false => Ok(()),
    }
}

pub(crate) fn syntax_error(e: &serde_json::Error) -> FromJsonError {
    let (line, column) = (e.line(), e.column());
    if e.is_eof() {
        FromJsonError::Truncated { line, column }
    } else {
        FromJsonError::Syntax {
            line,
            column,
            message: strip_position(&e.to_string()),
        }
    }
}

/// serde_json appends " at line L column C"; the error keeps those as fields.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message.get(..i).unwrap_or(message).to_owned(),
        None => message.to_owned(),
    }
}

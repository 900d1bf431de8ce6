//! `from_json`: deserialize and validate in one call, with every violation reported on failure.

use crate::read::strict_de;
use crate::schema::output::StructuredOutput;
use crate::schema::validate::{Rule, Violation, Violations};
use crate::schema::validation::check_instance;

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

/// Deserializes `T` from `json` as strictly as `T::schema()` and checks `T`'s rules.
///
/// Valid input takes one pass (serde plus a key check per property, then `Validate`). Invalid
/// input is parsed again as a `serde_json::Value` and checked against the schema, so the error
/// lists every violation, not only the first one serde met.
pub fn from_json<T: StructuredOutput>(json: &str) -> Result<T, FromJsonError> {
    match strict_de::from_str::<T>(json) {
        Ok(value) => match value.validate() {
            Ok(()) => Ok(value),
            Err(violations) => Err(FromJsonError::Invalid(violations)),
        },
        Err(first) => Err(explain::<T>(json, first)),
    }
}

fn explain<T: StructuredOutput>(json: &str, first: strict_de::StrictDeError) -> FromJsonError {
    let value: serde_json::Value = match serde_json::from_str(json) {
        Ok(value) => value,
        Err(e) => return syntax_error(&e),
    };
    let mut violations = check_instance(T::schema().schema(), &value);
    if violations.is_empty() {
        // Refused by serde for a reason the schema does not state (a duplicated key, a number
        // beyond the Rust type): report serde's own reason at its path.
        violations.push(Violation {
            path: first.path,
            rule: Rule::Deserialize,
            expected: "a value the Rust type accepts".into(),
            found: strip_position(&first.error.to_string()),
        });
    }
    FromJsonError::Invalid(Violations(violations))
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

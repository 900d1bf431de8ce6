//! The schema a type sends to a provider: a name, a description and a JSON Schema, checked when built.

use std::sync::OnceLock;

use serde_json::Value;

use crate::schema::guidance::{render_guidance, GuidanceFormat};
use crate::schema::strict::{self, StrictReport};

/// A named JSON Schema for a response, as providers take it (`response_format.json_schema`,
/// `text.format`, a tool's `input_schema`, ...).
///
/// Built with [`ResponseSchema::new`], which checks the name and the root; derived types build
/// theirs once per process (`T::schema()`).
///
/// ```
/// use serde_json::json;
/// use structured_runtime::ResponseSchema;
///
/// let schema = ResponseSchema::new("weather", json!({
///     "type": "object",
///     "properties": { "city": { "type": "string" } },
///     "required": ["city"],
///     "additionalProperties": false
/// }))?;
/// assert!(schema.strict_preflight().is_ok());
///
/// assert!(ResponseSchema::new("has space", json!({"type": "object"})).is_err());
/// # Ok::<(), structured_runtime::SchemaError>(())
/// ```
#[derive(Debug, Clone)]
pub struct ResponseSchema {
    name: String,
    description: Option<String>,
    strict: bool,
    schema: Value,
    /// The default guidance, rendered on first use: a derived schema lives for the whole process.
    guidance: OnceLock<String>,
}

impl PartialEq for ResponseSchema {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.description == other.description
            && self.strict == other.strict
            && self.schema == other.schema
    }
}

/// Why a [`ResponseSchema`] could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// Providers take names matching `^[a-zA-Z0-9_-]{1,64}$`.
    #[error("schema name {name:?} is invalid: expected 1 to 64 characters from a-z, A-Z, 0-9, `_` and `-`")]
    InvalidName {
        /// The name given.
        name: String,
    },
    /// The schema must be a JSON object (a boolean or other value is not accepted by providers).
    #[error("schema must be a JSON object, found {found}")]
    NotAnObject {
        /// The kind of JSON value given.
        found: &'static str,
    },
}

/// Whether `name` is a name every provider accepts: `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl ResponseSchema {
    /// A strict schema named `name`. Fails when the name breaks `^[a-zA-Z0-9_-]{1,64}$` or the
    /// schema is not a JSON object.
    pub fn new(name: impl Into<String>, schema: Value) -> Result<Self, SchemaError> {
        let name = name.into();
        if !is_valid_name(&name) {
            return Err(SchemaError::InvalidName { name });
        }
        if !schema.is_object() {
            return Err(SchemaError::NotAnObject {
                found: json_kind(&schema),
            });
        }
        Ok(ResponseSchema {
            name,
            description: None,
            strict: true,
            schema,
            guidance: OnceLock::new(),
        })
    }

    /// Sets the description sent beside the schema.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self.guidance = OnceLock::new();
        self
    }

    /// Marks the schema strict (the default) or best effort.
    pub fn with_strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// The name providers see.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The description sent beside the schema, if any.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// Whether the schema is meant for strict mode.
    pub fn strict(&self) -> bool {
        self.strict
    }

    /// The JSON Schema itself.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// The instruction a model reads to write JSON for this schema when the provider enforces
    /// nothing, in the shortest complete form ([`GuidanceFormat::Shortest`]). Rendered once.
    ///
    /// ```
    /// use serde_json::json;
    /// use structured_runtime::ResponseSchema;
    ///
    /// let schema = ResponseSchema::new("flag", json!({
    ///     "type": "object",
    ///     "properties": { "on": { "type": "boolean" } },
    ///     "required": ["on"],
    ///     "additionalProperties": false
    /// }))?;
    /// assert!(schema.prompt_guidance().ends_with("{\n  \"on\": boolean\n}"));
    /// # Ok::<(), structured_runtime::SchemaError>(())
    /// ```
    pub fn prompt_guidance(&self) -> &str {
        self.guidance
            .get_or_init(|| render_guidance(self, GuidanceFormat::Shortest))
    }

    /// Checks the schema against the strict-mode rules (`PROVIDERS.md` §1.3) and returns the
    /// JSON pointer of every node that breaks one. A schema not marked strict always passes.
    pub fn strict_preflight(&self) -> Result<(), StrictReport> {
        if !self.strict {
            return Ok(());
        }
        strict::preflight(&self.schema)
    }
}

pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Built by generated code from a name the derive already checked at compile time.
#[doc(hidden)]
pub fn derived(name: &str, description: Option<&str>, schema: Value) -> ResponseSchema {
    ResponseSchema {
        name: name.to_owned(),
        description: description.map(str::to_owned),
        strict: true,
        schema,
        guidance: OnceLock::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_follow_the_provider_rule() {
        assert!(is_valid_name("heartbeat_decision"));
        assert!(is_valid_name("a-B_9"));
        assert!(is_valid_name(&"x".repeat(64)));
        assert!(!is_valid_name(&"x".repeat(65)));
        assert!(!is_valid_name(""));
        assert!(!is_valid_name("café"));
        assert!(!is_valid_name("a.b"));
    }

    #[test]
    fn construction_checks_name_and_root() {
        let err = ResponseSchema::new("ok", json!([1])).unwrap_err();
        assert_eq!(err, SchemaError::NotAnObject { found: "an array" });
        assert_eq!(
            err.to_string(),
            "schema must be a JSON object, found an array"
        );
        let err = ResponseSchema::new("a b", json!({})).unwrap_err();
        assert!(matches!(err, SchemaError::InvalidName { .. }));
    }

    #[test]
    fn non_strict_schema_skips_preflight() {
        let s = ResponseSchema::new("x", json!({"type": "object"}))
            .unwrap()
            .with_strict(false);
        assert!(s.strict_preflight().is_ok());
        assert!(s.clone().with_strict(true).strict_preflight().is_err());
    }
}

//! The `StructuredOutput` trait: what a response type declares once and every provider path uses.

use serde::de::DeserializeOwned;

use crate::from_json::FromJsonError;
use crate::schema::ResponseSchema;
use crate::schema_type::SchemaType;
use crate::validate::Validate;

/// A type a model can be asked to produce: a strict schema, a parser, and its own rules.
///
/// Derive it with `#[derive(StructuredOutput, serde::Deserialize)]` on a struct with named fields.
///
/// ```
/// use structured_runtime::{FromJsonError, StructuredOutput};
///
/// /// How the market looks.
/// #[derive(StructuredOutput, serde::Deserialize, Debug)]
/// struct Outlook {
///     /// Direction of the next move.
///     #[enum_values("up", "down", "flat")]
///     direction: String,
///     #[range(0.0, 1.0)]
///     confidence: f64,
///     note: Option<String>,
/// }
///
/// let schema = Outlook::schema();
/// assert_eq!(schema.name(), "outlook");
/// assert_eq!(schema.schema()["required"], serde_json::json!(["direction", "confidence", "note"]));
///
/// let ok = Outlook::from_json(r#"{"direction":"up","confidence":0.8,"note":null}"#)?;
/// assert_eq!(ok.direction, "up");
///
/// let err = Outlook::from_json(r#"{"direction":"sideways","confidence":2}"#).unwrap_err();
/// let paths: Vec<&str> = err.violations().unwrap().iter().map(|v| v.path.as_str()).collect();
/// assert_eq!(paths, ["/note", "/direction", "/confidence"]);
/// # Ok::<(), FromJsonError>(())
/// ```
pub trait StructuredOutput: DeserializeOwned + Validate + SchemaType {
    /// The type's schema, built once per process.
    fn schema() -> &'static ResponseSchema;

    /// Deserializes and validates: accepts exactly the JSON the schema accepts (and the type's
    /// rules), and on refusal reports every violation with its JSON pointer.
    fn from_json(json: &str) -> Result<Self, FromJsonError> {
        crate::from_json::from_json(json)
    }
}

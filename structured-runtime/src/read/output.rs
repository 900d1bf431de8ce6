//! The `StructuredOutput` trait: what a response type declares once and every provider path uses.

use serde::de::DeserializeOwned;

use crate::read::from_json::FromJsonError;
use crate::read::from_text::{FromText, FromTextError};
use crate::schema::guidance::GuidanceFormat;
use crate::schema::response::ResponseSchema;
use crate::schema::types::SchemaType;
use crate::schema::validate::Validate;

/// A type a model can be asked to produce: a strict schema, a parser, and its own rules.
///
/// Derive it with `#[derive(StructuredOutput, serde::Deserialize)]` on a struct with named fields.
/// A type the program only sends (a tool's parameters, a schema it publishes) derives without
/// `Deserialize`: it gets its schema ([`crate::provider::wire::Tool::of`]) and its rules
/// ([`Validate`]), and reading one is a compile error where it is read.
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
        crate::read::from_json::from_json(json, Self::schema())
    }

    /// [`StructuredOutput::from_json`] on a value already parsed (a tool call's arguments, a
    /// value from another document): read where it is, never printed and parsed again.
    ///
    /// ```
    /// use structured_runtime::StructuredOutput;
    ///
    /// #[derive(StructuredOutput, serde::Deserialize, Debug)]
    /// struct Flag {
    ///     on: bool,
    /// }
    ///
    /// let flag = Flag::from_value(&serde_json::json!({"on": true})).unwrap();
    /// assert!(flag.on);
    /// let err = Flag::from_value(&serde_json::json!({"on": "yes"})).unwrap_err();
    /// assert_eq!(err.violations().unwrap()[0].path, "/on");
    /// ```
    fn from_value(value: &serde_json::Value) -> Result<Self, FromJsonError> {
        crate::read::from_json::from_value(value, Self::schema()).map_err(FromJsonError::Invalid)
    }

    /// The instruction a model reads to write this type's JSON when the provider enforces no
    /// schema: every field name, type, enum value, range, nullability and description, in the
    /// shortest complete form. Rendered once per process.
    ///
    /// ```
    /// use structured_runtime::StructuredOutput;
    ///
    /// #[derive(StructuredOutput, serde::Deserialize)]
    /// struct Reading {
    ///     /// How full the tank is.
    ///     #[range(0.0, 1.0)]
    ///     level: f64,
    ///     #[enum_values("up", "down")]
    ///     trend: Option<String>,
    /// }
    ///
    /// assert_eq!(
    ///     Reading::prompt_guidance(),
    ///     "Reply with JSON only, this shape (all keys required; null only where shown):\n{\n \
    ///      \"level\": number 0 to 1, // How full the tank is\n \
    ///      \"trend\": \"up\"|\"down\"|null\n}"
    /// );
    /// ```
    fn prompt_guidance() -> &'static str {
        Self::schema().prompt_guidance()
    }

    /// The guidance in a chosen form (a sketch, or the compact JSON Schema).
    fn prompt_guidance_as(format: GuidanceFormat) -> String {
        Self::schema().guidance_as(format)
    }

    /// Reads the value from plain prose by the keyword rules declared with
    /// `#[fallback_keyword]`: the last resort when a model wrote no JSON at all. The value always
    /// passes [`Validate`], and comes with a report of which fields the text gave and which are
    /// defaults. A type with no `#[fallback_keyword]` field returns
    /// [`FromTextError::NotSupported`].
    ///
    /// See the [crate documentation](crate#reading-prose-from_text) for the attribute's grammar.
    fn from_text(text: &str) -> Result<FromText<Self>, FromTextError> {
        let _ = text;
        Err(FromTextError::NotSupported {
            type_name: std::any::type_name::<Self>(),
        })
    }
}

/// Plain text as a first-class answer: `run_structured::<String>` (and
/// [`parse_response::<String>`](crate::parse_response)) take the answer's text, exactly as written
/// ([`Provenance::Clean`](crate::Provenance::Clean); an empty answer is no answer). Prompt guidance
/// asks for plain text; a provider that enforces schemas is sent a string root (wrapped in an
/// object where the provider needs one) and its answer is read back to the string.
///
/// ```
/// use structured_runtime::{parse_response, Provenance, StructuredOutput, StructuredOutputMode};
///
/// let read = parse_response::<String>("Ship it.\n", StructuredOutputMode::PromptGuided).unwrap();
/// assert_eq!((read.value.as_str(), read.provenance), ("Ship it.\n", Provenance::Clean));
/// assert_eq!(String::prompt_guidance(), "Reply in plain text only: no JSON.");
/// ```
/// A bare `String` declares no rule of its own.
impl Validate for String {
    fn validate_at(
        &self,
        _: &crate::schema::validate::Path<'_>,
        _: &mut Vec<crate::schema::validate::Violation>,
    ) {
    }
}

impl StructuredOutput for String {
    fn schema() -> &'static ResponseSchema {
        static SCHEMA: std::sync::OnceLock<ResponseSchema> = std::sync::OnceLock::new();
        SCHEMA.get_or_init(|| {
            crate::schema::response::derived_text(crate::schema::response::derived_root::<String>(
                "text", None,
            ))
        })
    }
}

//! The schema a type sends to a provider: a name, a description and a JSON Schema, checked when
//! built and compiled once.

use std::any::Any;
use std::sync::{Arc, OnceLock};

use crate::schema::enum_index::EnumIndex;

use serde_json::Value;

use super::checks::{admit, SchemaError, SchemaLimits};
use super::guidance::{render, GuidanceFormat};
use super::markdown::Markdown;
use super::node::Node;
use super::parts::Parts;
use super::pointer::Pointer;
use super::strict::{self, StrictReport};
use super::validate::{preview_json, Rule, Violation, Violations};
use super::validation::Compiled;

/// A named JSON Schema for a response, as providers take it (`response_format.json_schema`,
/// `text.format`, a tool's `input_schema`, ...).
///
/// [`ResponseSchema::new`] takes a schema given at run time: it checks it (see [`SchemaLimits`]
/// and [`SchemaError`]) and compiles it once with the `jsonschema` crate, whose verdict on a value
/// is this schema's verdict ([`ResponseSchema::check_instance`], [`crate::parse_value`]).
/// Derived types build theirs once per process (`T::schema()`) and validate with their compiled
/// [`Validate`](crate::Validate). What is derived from the schema (prompt guidance, each
/// provider's lowering) is computed on first use and kept.
///
/// ```
/// use serde_json::json;
/// use structured_runtime::{ResponseSchema, SchemaError};
///
/// let schema = ResponseSchema::new("weather", json!({
///     "type": "object",
///     "properties": {
///         "city": { "type": "string", "pattern": "^[A-Z]" },
///         "celsius": { "type": "number", "multipleOf": 0.5 }
///     },
///     "required": ["city", "celsius"],
///     "additionalProperties": false
/// }))?;
/// assert!(schema.check_instance(&json!({"city": "Oslo", "celsius": 3.5})).is_ok());
/// let refused = schema.check_instance(&json!({"city": "oslo", "celsius": 3.2})).unwrap_err();
/// assert_eq!(refused.len(), 2);
/// assert_eq!(refused[0].path, "/city");
///
/// let typo = ResponseSchema::new("w", json!({"type": "object", "propertys": {}}));
/// assert!(matches!(typo, Err(SchemaError::UnknownKeyword { .. })));
/// # Ok::<(), SchemaError>(())
/// ```
#[derive(Debug, Clone)]
pub struct ResponseSchema {
    name: String,
    description: Option<String>,
    strict: bool,
    schema: Value,
    /// How a plain-text answer fills the object, for a markdown wrapper.
    markdown: Option<Markdown>,
    /// The validator of record, compiled once (at construction for a schema given at run
    /// time, on first use for a derived one).
    compiled: Arc<OnceLock<Result<Compiled, SchemaError>>>,
    /// The default guidance, rendered on first use.
    guidance: Arc<OnceLock<String>>,
    /// What the layers above compute from this schema and keep with it (each provider
    /// target's lowering, the request fragments built from it), on first use: opaque here, so
    /// the schema imports nothing above it ([`ResponseSchema::layer_cache`]).
    layer_cache: Arc<LayerCache>,
    /// Reading into the Rust type cannot vouch for a value as written: the schema holds a set
    /// (`uniqueItems`: a Rust set merges a repeated item silently), or a type whose parser
    /// takes more than its schema (see `SchemaGen::check_against_schema`). Values are then
    /// checked against the schema too.
    schema_check: bool,
    /// `(alias, name)`: other names serde reads for a property of a derived type
    /// (`#[serde(alias)]`); coercion renames them, with a warning.
    key_aliases: Arc<[(String, String)]>,
    /// The `enum` values, indexed for coercion as they are first looked up (not shared with a
    /// clone: it is keyed by where each `enum` lives in this copy of the document).
    enum_index: EnumIndex,
    /// How values are judged in parts (`None`: not at all), worked out on first use.
    parts: Arc<OnceLock<Option<Parts>>>,
}

/// What [`ResponseSchema::layer_cache`] holds: one value of a type the layer above defines.
#[derive(Default)]
struct LayerCache(OnceLock<Box<dyn Any + Send + Sync>>);

impl std::fmt::Debug for LayerCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LayerCache")
    }
}

// What is kept is made once and whole, and what it fills in later it fills behind its own
// locks (recovering a poisoned one): a panic elsewhere cannot leave it half-updated, so a
// `&ResponseSchema` stays usable across `catch_unwind`.
impl std::panic::RefUnwindSafe for LayerCache {}
impl std::panic::UnwindSafe for LayerCache {}

/// A schema as data: what [`ResponseSchema`] writes and reads in serde.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SchemaData {
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(default = "strict_by_default")]
    strict: bool,
    schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    markdown: Option<Markdown>,
}

fn strict_by_default() -> bool {
    true
}

/// Written as `{"name", "description"?, "strict", "schema", "markdown"?}`; read back through
/// [`ResponseSchema::new`] (and [`ResponseSchema::with_markdown`]), so a schema read from a
/// file or a request is checked exactly like one built in code.
///
/// ```
/// use structured_runtime::ResponseSchema;
///
/// let schema = ResponseSchema::new("ok", serde_json::json!({
///     "type": "object", "properties": {"ok": {"type": "boolean"}},
///     "required": ["ok"], "additionalProperties": false
/// }))?.with_description("Is it on?");
/// let text = serde_json::to_string(&schema).unwrap();
/// let back: ResponseSchema = serde_json::from_str(&text).unwrap();
/// assert_eq!((back.name(), back.description(), back.schema()), (schema.name(), schema.description(), schema.schema()));
///
/// let remote = r#"{"name": "x", "schema": {"type": "object", "$ref": "https://example.com/s.json"}}"#;
/// assert!(serde_json::from_str::<ResponseSchema>(remote).is_err());
/// # Ok::<(), structured_runtime::SchemaError>(())
/// ```
impl serde::Serialize for ResponseSchema {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        SchemaData {
            name: self.name.clone(),
            description: self.description.clone(),
            strict: self.strict,
            schema: self.schema.clone(),
            markdown: self.markdown.clone(),
        }
        .serialize(serializer)
    }
}

impl<'de> serde::Deserialize<'de> for ResponseSchema {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let data = SchemaData::deserialize(deserializer)?;
        let mut schema = ResponseSchema::new(data.name, data.schema)
            .map_err(D::Error::custom)?
            .with_strict(data.strict);
        if let Some(description) = data.description {
            schema = schema.with_description(description);
        }
        if let Some(markdown) = data.markdown {
            schema = schema.with_markdown(markdown).map_err(D::Error::custom)?;
        }
        Ok(schema)
    }
}

impl PartialEq for ResponseSchema {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.description == other.description
            && self.strict == other.strict
            && self.schema == other.schema
            && self.markdown == other.markdown
    }
}

/// Whether `name` is a name every provider accepts: `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl ResponseSchema {
    /// A strict schema named `name`, checked with the default [`SchemaLimits`] and compiled.
    pub fn new(name: impl Into<String>, schema: Value) -> Result<Self, SchemaError> {
        Self::with_limits(name, schema, &SchemaLimits::default())
    }

    /// [`ResponseSchema::new`] with other limits.
    pub fn with_limits(
        name: impl Into<String>,
        schema: Value,
        limits: &SchemaLimits,
    ) -> Result<Self, SchemaError> {
        let name = name.into();
        if !is_valid_name(&name) {
            return Err(SchemaError::InvalidName { name });
        }
        admit(&schema, limits)?;
        let compiled = Compiled::new(&schema)
            .map_err(|(path, message)| SchemaError::Invalid { path, message })?;
        Ok(ResponseSchema {
            compiled: Arc::new(OnceLock::from(Ok(compiled))),
            ..ResponseSchema::unchecked(name, None, schema)
        })
    }

    /// Whether this schema is within `limits` as well (it was checked against those it was built
    /// with): a run or an application with tighter limits, such as
    /// [`SchemaLimits::gateway`], holds a schema read from elsewhere to them.
    pub fn check_limits(&self, limits: &SchemaLimits) -> Result<(), SchemaError> {
        admit(&self.schema, limits)
    }

    fn unchecked(name: String, description: Option<String>, schema: Value) -> Self {
        ResponseSchema {
            name,
            description,
            strict: true,
            markdown: None,
            compiled: Arc::default(),
            guidance: Arc::default(),
            layer_cache: Arc::default(),
            schema_check: has_unique_items(Node::root(&schema)),
            key_aliases: Arc::new([]),
            enum_index: EnumIndex::default(),
            parts: Arc::default(),
            schema,
        }
    }

    /// Other names serde reads for properties: `(alias, name)`.
    pub(crate) fn key_aliases(&self) -> &[(String, String)] {
        &self.key_aliases
    }

    /// The spellings of `allowed`, an `enum` array of this schema, indexed once.
    pub(crate) fn enum_spellings(
        &self,
        allowed: &[Value],
    ) -> Arc<crate::schema::enum_index::Spellings> {
        self.enum_index.spellings(allowed)
    }

    /// Whether values read into a Rust type must be checked against the schema too.
    pub(crate) fn needs_schema_check(&self) -> bool {
        self.schema_check
    }

    /// Sets the description sent beside the schema.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self.guidance = Arc::default();
        self.layer_cache = Arc::default();
        self
    }

    /// Makes this a markdown wrapper: a plain-text answer fills the properties `markdown` names
    /// (see [`Markdown`] for the schema it needs, and the [crate
    /// documentation](crate#markdown-wrappers) for how an answer is read), and the prompt
    /// guidance asks for Markdown instead of JSON. The schema providers see does not change.
    pub fn with_markdown(mut self, markdown: Markdown) -> Result<Self, SchemaError> {
        markdown.check(&self.schema)?;
        self.markdown = Some(markdown);
        self.guidance = Arc::default();
        Ok(self)
    }

    /// How a plain-text answer fills the object, when this is a markdown wrapper.
    pub fn markdown(&self) -> Option<&Markdown> {
        self.markdown.as_ref()
    }

    /// Marks the schema strict (the default) or best effort. A best-effort schema is sent to
    /// OpenAI with `"strict": false`, as written (not lowered to strict mode's rules, which then
    /// do not apply); the answer is checked against it locally all the same.
    pub fn with_strict(mut self, strict: bool) -> Self {
        if strict != self.strict {
            // Fragments built for the other setting say the other thing on the wire.
            self.layer_cache = Arc::default();
        }
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

    /// Checks `instance` against the schema: the verdict is the validator's (every keyword of
    /// the schema counts), and on refusal every violation is listed with its pointer.
    pub fn check_instance(&self, instance: &Value) -> Result<(), Violations> {
        match self.compiled() {
            Ok(compiled) => compiled.check(&self.schema, instance),
            Err(e) => Err(Violations(vec![Violation {
                path: Pointer::root(),
                rule: Rule::Schema,
                expected: format!("a schema that compiles ({e})"),
                found: preview_json(instance),
            }])),
        }
    }

    /// How this schema's values are judged in parts, a long list an item at a time
    /// ([`Parts`]); `None` when no list can be. Worked out on first use.
    pub(crate) fn parts(&self) -> Option<&Parts> {
        self.parts.get_or_init(|| Parts::of(&self.schema)).as_ref()
    }

    /// The validator of record, compiled on first use.
    pub(crate) fn compiled(&self) -> Result<&Compiled, &SchemaError> {
        self.compiled
            .get_or_init(|| {
                Compiled::new(&self.schema)
                    .map_err(|(path, message)| SchemaError::Invalid { path, message })
            })
            .as_ref()
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
    /// assert!(schema.prompt_guidance().ends_with("{\n \"on\": boolean\n}"));
    /// # Ok::<(), structured_runtime::SchemaError>(())
    /// ```
    pub fn prompt_guidance(&self) -> &str {
        self.guidance
            .get_or_init(|| self.guidance_as(GuidanceFormat::Shortest))
    }

    /// The guidance in a chosen form (a sketch, or the compact JSON Schema). For a markdown
    /// wrapper, [`GuidanceFormat::Shortest`] is the request for Markdown.
    pub fn guidance_as(&self, format: GuidanceFormat) -> String {
        match (&self.markdown, format) {
            (Some(markdown), GuidanceFormat::Shortest) => {
                markdown.guidance(&self.name, self.description(), &self.schema)
            }
            _ => render(&self.name, self.description(), &self.schema, format),
        }
    }

    /// What the layer above keeps with this schema: an `E` made on first use and shared by
    /// clones, dropped by a setter that changes what it was computed from. `None` only were two
    /// types asked of the one slot, which the crate never does.
    pub(crate) fn layer_cache<E: Default + Send + Sync + 'static>(&self) -> Option<&E> {
        self.layer_cache
            .0
            .get_or_init(|| Box::new(E::default()))
            .downcast_ref()
    }

    /// Checks the schema against the strict-mode rules providers enforce, and returns the
    /// pointer of every node that breaks one. A schema not marked strict always passes.
    pub fn strict_preflight(&self) -> Result<(), StrictReport> {
        if !self.strict {
            return Ok(());
        }
        strict::preflight(&self.schema)
    }
}

/// Built by generated code from a name the derive already checked at compile time.
#[doc(hidden)]
pub fn derived(name: &str, description: Option<&str>, schema: Value) -> ResponseSchema {
    ResponseSchema::unchecked(name.to_owned(), description.map(str::to_owned), schema)
}

/// Whether a node of the schema (its own, or any sub-schema's) asks for `uniqueItems`.
fn has_unique_items(node: Node<'_>) -> bool {
    !node.too_deep()
        && (node.get("uniqueItems") == Some(&Value::Bool(true))
            || node.children().iter().any(|c| has_unique_items(c.node)))
}

/// The schema of a derived type `T`, with the other names serde reads for its properties.
#[doc(hidden)]
pub fn derived_root<T: crate::schema::SchemaType + ?Sized + 'static>(
    name: &str,
    description: Option<&str>,
) -> ResponseSchema {
    derived_root_with(name, description, T::json_schema)
}

/// [`derived_root`] for the type whose node `json_schema` writes (compiled once).
fn derived_root_with(
    name: &str,
    description: Option<&str>,
    json_schema: fn(&mut crate::schema::types::SchemaGen) -> Value,
) -> ResponseSchema {
    let root = crate::schema::types::SchemaGen::root_with(json_schema);
    let schema = derived(name, description, root.schema);
    ResponseSchema {
        key_aliases: root.aliases.into(),
        schema_check: schema.schema_check || root.schema_check,
        ..schema
    }
}

/// A derived markdown wrapper: the derive checked the fields at compile time (the content and
/// title are `String`, every other field an `Option`). Were the schema to disagree, a plain-text
/// answer would be refused by validation, never accepted wrongly.
#[doc(hidden)]
pub fn derived_markdown(
    schema: ResponseSchema,
    content: &str,
    title: Option<&str>,
) -> ResponseSchema {
    ResponseSchema {
        markdown: Some(Markdown {
            content: Some(content.to_owned()),
            title: title.map(str::to_owned),
        }),
        guidance: Arc::default(),
        ..schema
    }
}

/// A derived type whose plain-text answer is the value itself: a dispatch enum with a
/// `#[markdown]` variant (the derive checked it is an untagged `String` newtype), or `String`.
#[doc(hidden)]
pub fn derived_text(schema: ResponseSchema) -> ResponseSchema {
    ResponseSchema {
        markdown: Some(Markdown::text()),
        guidance: Arc::default(),
        ..schema
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
        let err = ResponseSchema::new("a b", json!({"type": "object"})).unwrap_err();
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

    /// The report on `instance`, refused: each violation's place and rule, and the whole.
    fn refused(schema: &ResponseSchema, instance: &Value) -> (Vec<(String, Rule)>, Violations) {
        let report = schema.check_instance(instance).unwrap_err();
        let found = report
            .iter()
            .map(|v| (v.path.as_str().to_owned(), v.rule))
            .collect();
        (found, report)
    }

    #[test]
    fn a_member_a_condition_requires_is_reported_beside_one_the_walk_names() {
        // The walk names `/x/y` (required by `x`); the validator names the root for `note`,
        // required by the condition, which the walk does not judge: both are reported.
        let schema = ResponseSchema::new(
            "t",
            json!({"type": "object", "properties": {
                "kind": {"type": "string"},
                "x": {"type": "object", "required": ["y"]}
            }, "if": {"properties": {"kind": {"const": "a"}}}, "then": {"required": ["note"]}}),
        )
        .unwrap();
        let (found, report) = refused(&schema, &json!({"kind": "a", "x": {}}));
        assert_eq!(
            found,
            [
                ("/x/y".to_owned(), Rule::Required),
                (String::new(), Rule::Required)
            ]
        );
        assert!(
            report.iter().any(|v| v.expected.contains("note")),
            "{report}"
        );
    }

    #[test]
    fn the_validator_refuses_what_the_schema_forbids() {
        let schema = ResponseSchema::new(
            "t",
            json!({"type": "object", "properties": {
                "a": {"allOf": [{"type": "integer"}, {"minimum": 2}]},
                "b": {"not": {"const": "x"}},
                "c": {"type": "array", "uniqueItems": true},
                "d": {"type": "string", "maxLength": 2.0}
            }}),
        )
        .unwrap();
        let (found, _) = refused(&schema, &json!({"a": 1, "b": "x", "c": [1, 1], "d": "abc"}));
        assert_eq!(
            found,
            [
                // The walk names what it judges (the bound inside the `allOf`, the repeated
                // item, where the validator names only the array) ...
                ("/a".to_owned(), Rule::Range),
                ("/c/1".to_owned(), Rule::UniqueItems),
                ("/d".to_owned(), Rule::Length),
                // ... and the validator what the walk has no words for.
                ("/b".to_owned(), Rule::Not),
            ]
        );
        assert!(schema
            .check_instance(&json!({"a": 2, "b": "y", "c": [1, 2], "d": "ab"}))
            .is_ok());
    }

    #[test]
    fn a_one_of_whose_branches_exclude_each_other_is_explained_by_the_branch_taken() {
        let schema = ResponseSchema::new(
            "t",
            json!({"type": "object", "properties": {
                "a": {"oneOf": [
                    {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
                    {"type": "null"}
                ]},
                "b": {"oneOf": [{"type": "integer"}, {"minimum": 0}]}
            }}),
        )
        .unwrap();
        let report = |value: Value| {
            let found = schema.check_instance(&value).unwrap_err();
            found
                .iter()
                .map(|v| (v.path.as_str().to_owned(), v.rule, v.expected.clone()))
                .collect::<Vec<_>>()
        };
        // The one branch taking objects says why; none taking strings: the `oneOf`'s own word.
        assert_eq!(
            report(json!({"a": {"n": "x"}})),
            [("/a/n".to_owned(), Rule::Type, "an integer".to_owned())]
        );
        assert_eq!(
            report(json!({"a": "x"})),
            [(
                "/a".to_owned(),
                Rule::OneOf,
                "a value matching one of 2 schemas".to_owned()
            )]
        );
        // Branches a value may match both of: the validator's verdict, in its terms.
        assert_eq!(report(json!({"b": 3}))[0].1, Rule::OneOf);
        assert!(schema.check_instance(&json!({"a": null, "b": -1})).is_ok());
    }

    /// `anyOf` branches that refer back to their own node: the validator calls that cycle
    /// valid, and the explanation walk (which runs on a refusal) stops at the cycle and within
    /// its budget, so both return.
    #[test]
    fn a_schema_whose_branches_refer_to_themselves_returns() {
        let schema = ResponseSchema::new(
            "loop",
            json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/a"}, "n": {"type": "integer"}},
                "$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/a"}]}}}),
        )
        .unwrap();
        assert!(schema
            .check_instance(&json!({"x": [1, 2, {"y": 3}]}))
            .is_ok());
        let refused = schema
            .check_instance(&json!({"x": 1, "n": "two"}))
            .unwrap_err();
        assert_eq!(refused[0].path, "/n");
        let walk = crate::schema::validation::explain(
            crate::schema::node::Node::root(schema.schema()),
            &json!({"x": {"deep": [1, [2, [3]]]}, "n": "two"}),
        );
        assert_eq!(walk.len(), 1);
    }
}

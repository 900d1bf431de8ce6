//! Markdown wrappers: a type whose value is free-form text the model writes as it likes (a pull
//! request description, a review, a commit message), still asked for and read through the same
//! pipeline as any other type.
//!
//! The schema stays the strict object (`{"content": "..."}`), so a provider that enforces schemas
//! returns that object. What [`Markdown`] adds is how a plain-text answer maps onto it: the whole
//! answer is the `content` property, or, with a `title` property, the first line is the title and
//! the rest is the content. Every other property must allow `null`, and is `null` in a value read
//! that way. The rule that decides between "the JSON in the answer" and "the whole answer" is in
//! [`crate::read::markdown`].

use serde_json::{Map, Value};

use super::checks::SchemaError;
use super::node::{JsonType, Node};
use super::pointer::Pointer;

/// Which string properties a plain-text answer fills: set on a schema with
/// [`ResponseSchema::with_markdown`](crate::ResponseSchema::with_markdown), or by the derive for a
/// type with a `#[markdown]` field.
///
/// ```
/// use serde_json::json;
/// use structured_runtime::schema::Markdown;
/// use structured_runtime::{parse_value, ParseOptions, Provenance, ResponseSchema};
///
/// let schema = ResponseSchema::new("review", json!({
///     "type": "object",
///     "properties": {"content": {"type": "string"}},
///     "required": ["content"],
///     "additionalProperties": false
/// }))?
/// .with_markdown(Markdown::content("content"))?;
///
/// let parsed = parse_value("## Looks good\n\n- one nit", &schema, &ParseOptions::default()).unwrap();
/// assert_eq!(parsed.value, json!({"content": "## Looks good\n\n- one nit"}));
/// assert_eq!(parsed.provenance, Provenance::Heuristic);
/// assert!(parse_value("## Looks good", &schema, &ParseOptions::strict()).is_err());
/// # Ok::<(), structured_runtime::SchemaError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Markdown {
    /// The property a plain-text answer fills (the part after the first line when `title` is
    /// set); `None` when the answer is the value itself ([`Markdown::text`]).
    #[serde(default)]
    pub content: Option<String>,
    /// The property the first line of a plain-text answer fills.
    #[serde(default)]
    pub title: Option<String>,
}

impl Markdown {
    /// The whole answer is property `name`.
    pub fn content(name: impl Into<String>) -> Self {
        Markdown {
            content: Some(name.into()),
            title: None,
        }
    }

    /// The answer is the value itself, a string the schema's root takes: plain text as a
    /// first-class answer.
    ///
    /// - A root that is only a string (a bare `String`) takes any answer as its text, exactly
    ///   as written: [`Provenance::Clean`](crate::Provenance::Clean), nothing trimmed.
    /// - A union with a string branch beside JSON shapes (a dispatch enum with a plain-text
    ///   variant) reads an answer by the markdown rule ([`crate::read::markdown`]): its JSON
    ///   when it is JSON for the union, else the whole answer, trimmed, is the string
    ///   ([`Provenance::Heuristic`](crate::Provenance::Heuristic) with
    ///   [`Warning::WholeAnswer`](crate::Warning::WholeAnswer)).
    ///
    /// ```
    /// use serde_json::json;
    /// use structured_runtime::schema::Markdown;
    /// use structured_runtime::{parse_value, ParseOptions, Provenance, ResponseSchema, SchemaLimits};
    ///
    /// let any_root = SchemaLimits { object_root: false, ..SchemaLimits::default() };
    /// let reply = ResponseSchema::with_limits("reply", json!({"anyOf": [
    ///     {"type": "object", "properties": {"tool": {"type": "string"}},
    ///      "required": ["tool"], "additionalProperties": false},
    ///     {"type": "string"}
    /// ]}), &any_root)?
    /// .with_markdown(Markdown::text())?;
    /// let call = parse_value(r#"{"tool": "search"}"#, &reply, &ParseOptions::default()).unwrap();
    /// assert_eq!(call.value, json!({"tool": "search"}));
    /// let words = parse_value("Nothing to call. ", &reply, &ParseOptions::default()).unwrap();
    /// assert_eq!((words.value, words.provenance), (json!("Nothing to call."), Provenance::Heuristic));
    /// # Ok::<(), structured_runtime::SchemaError>(())
    /// ```
    pub fn text() -> Self {
        Markdown {
            content: None,
            title: None,
        }
    }

    /// Whether the schema's root takes only strings: every answer is its text, as written.
    pub(crate) fn text_only(&self, schema: &Value) -> bool {
        self.content.is_none()
            && Node::root(schema)
                .target()
                .types()
                .is_only(JsonType::String)
    }

    /// The answer's first line is property `name`; the rest is the content.
    pub fn with_title(mut self, name: impl Into<String>) -> Self {
        self.title = Some(name.into());
        self
    }

    /// Whether `schema` can hold what a plain-text answer gives: an object whose content (and
    /// title) are required string properties that refuse `null`, and whose other required
    /// properties allow `null`.
    pub(crate) fn check(&self, schema: &Value) -> Result<(), SchemaError> {
        let root = Node::root(schema).target();
        let invalid = |path: Pointer, message: String| Err(SchemaError::Invalid { path, message });
        let Some(content) = &self.content else {
            if self.title.is_some() {
                return invalid(
                    Pointer::root(),
                    "a title is a property of an object: an answer that is the value itself has none".into(),
                );
            }
            if root.types().is_only(JsonType::String) || text_branch(root).is_some() {
                return Ok(());
            }
            return invalid(
                Pointer::root(),
                "a plain-text answer is the value itself, so the root must take a string: `\"type\": \"string\"`, or an `anyOf` with a string branch".into(),
            );
        };
        if !root.types().is_only(JsonType::Object) {
            return invalid(
                Pointer::root(),
                "a markdown wrapper's schema must be an object".into(),
            );
        }
        if self.title.as_deref() == Some(content.as_str()) {
            return invalid(
                Pointer::root().key("properties").key(content),
                "the title and the content must be different properties".into(),
            );
        }
        for name in self.filled() {
            let at = Pointer::root().key("properties").key(name);
            let Some(node) = root.property(name) else {
                return invalid(
                    at,
                    format!("no property `{name}` to hold the answer's text"),
                );
            };
            let node = node.target();
            if !node.types().is_only(JsonType::String) || node.allows_null() {
                return invalid(
                    at,
                    format!(
                        "`{name}` holds the answer's text, so it must be `\"type\": \"string\"`"
                    ),
                );
            }
            if !root.is_required(name) {
                return invalid(
                    at,
                    format!("`{name}` holds the answer's text, so it must be required"),
                );
            }
        }
        for (name, node) in root.properties() {
            if !self.filled().any(|f| f == name) && root.is_required(name) && !node.allows_null() {
                return invalid(
                    Pointer::root().key("properties").key(name),
                    format!(
                        "`{name}` is required and refuses null, so a plain-text answer cannot fill it: allow null, or leave the schema without markdown reading"
                    ),
                );
            }
        }
        Ok(())
    }

    /// The properties a plain-text answer fills: the title, then the content.
    fn filled(&self) -> impl Iterator<Item = &str> {
        self.title
            .as_deref()
            .into_iter()
            .chain(self.content.as_deref())
    }

    /// The object `text` (an answer already trimmed) stands for: the text in its properties, every
    /// other declared property `null`.
    pub(crate) fn value_of(&self, schema: &Value, text: &str) -> Value {
        let Some(content_name) = &self.content else {
            return Value::from(text);
        };
        let (title, content) = match &self.title {
            Some(_) => {
                let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
                (Some(first.trim()), rest.trim())
            }
            None => (None, text),
        };
        let mut object = Map::new();
        for (name, _) in Node::root(schema).target().properties() {
            object.insert(name.to_owned(), Value::Null);
        }
        if let (Some(name), Some(title)) = (&self.title, title) {
            object.insert(name.clone(), Value::from(title));
        }
        object.insert(content_name.clone(), Value::from(content));
        Value::Object(object)
    }

    /// Where a plain-text answer goes: the content property, or the root.
    pub(crate) fn content_pointer(&self) -> Pointer {
        match &self.content {
            Some(name) => Pointer::root().key(name),
            None => Pointer::root(),
        }
    }

    /// What a model reads, in place of a schema, to write this type: markdown, in a few words.
    pub(crate) fn guidance(&self, name: &str, description: Option<&str>, schema: &Value) -> String {
        let root = Node::root(schema).target();
        let about = |name: &str| {
            let node = root.property(name).map(Node::target);
            let description = node
                .and_then(|n| n.get("description"))
                .and_then(Value::as_str);
            let limit = node
                .and_then(|n| n.get("maxLength"))
                .and_then(Value::as_u64)
                .map(|n| format!(" (at most {n} characters)"))
                .unwrap_or_default();
            match description {
                Some(d) => format!("{}{limit}", d.trim_end_matches('.')),
                None => format!("the {name}{limit}"),
            }
        };
        if self.content.is_none() {
            return text_guidance(name, description, schema);
        }
        let mut out = String::from("Reply in Markdown only: no JSON, nothing before or after it.");
        if let Some(description) = description {
            out.push_str(&format!(" Write {}", lowercase_first(description)));
            if !out.ends_with('.') {
                out.push('.');
            }
        }
        if let (Some(title), Some(content)) = (&self.title, &self.content) {
            out.push_str(&format!(
                "\nFirst line: {}. Then a blank line, then {}.",
                about(title),
                lowercase_first(&about(content))
            ));
        }
        out
    }
}

/// The branch of a root union that takes only strings (a dispatch enum's plain-text variant).
fn text_branch(root: Node<'_>) -> Option<usize> {
    let branches = root
        .get("anyOf")
        .or_else(|| root.get("oneOf"))?
        .as_array()?;
    branches
        .iter()
        .position(|b| root.child(b).target().types().is_only(JsonType::String))
}

/// The guidance of an answer that is the value itself: plain text alone, or the JSON shapes of
/// the union's other branches and plain text beside them.
fn text_guidance(name: &str, description: Option<&str>, schema: &Value) -> String {
    let root = Node::root(schema).target();
    let (Some(at), Some(keyword)) = (
        text_branch(root),
        ["anyOf", "oneOf"]
            .into_iter()
            .find(|k| root.get(k).is_some()),
    ) else {
        let about = description
            .map(|d| format!(" Write {}.", lowercase_first(d.trim_end_matches('.'))))
            .unwrap_or_default();
        return format!("Reply in plain text only: no JSON.{about}");
    };
    // The JSON shapes: the schema without its string branch, sketched as any schema is.
    let mut others = schema.clone();
    if let Some(Value::Array(branches)) = others.get_mut(keyword) {
        if at < branches.len() {
            branches.remove(at);
        }
    }
    let sketch = super::guidance::render(
        name,
        description,
        &others,
        super::guidance::GuidanceFormat::Shortest,
    );
    format!("{sketch}\nOr, to answer in words, reply in plain text only: no JSON.")
}

fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        // "A pull request description" → "a pull request description"; "PR" and "URL" stay.
        Some(first) if first.is_uppercase() && !chars.next().is_some_and(char::is_uppercase) => {
            first
                .to_lowercase()
                .chain(text[first.len_utf8()..].chars())
                .collect()
        }
        _ => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn commit() -> Value {
        json!({
            "type": "object",
            "properties": {
                "emoji": {"type": ["string", "null"]},
                "title": {"type": "string", "maxLength": 72, "description": "The summary line."},
                "message": {"type": "string"}
            },
            "required": ["emoji", "title", "message"],
            "additionalProperties": false
        })
    }

    #[test]
    fn a_title_takes_the_first_line_and_the_rest_is_the_content() {
        let md = Markdown::content("message").with_title("title");
        md.check(&commit()).unwrap();
        assert_eq!(
            md.value_of(&commit(), "Fix the parser\n\nIt dropped keys.\n"),
            json!({"emoji": null, "title": "Fix the parser", "message": "It dropped keys."})
        );
        assert_eq!(
            md.value_of(&commit(), "Only a title"),
            json!({"emoji": null, "title": "Only a title", "message": ""})
        );
    }

    #[test]
    fn a_schema_that_cannot_hold_plain_text_is_refused_with_the_property() {
        let refused = |md: Markdown, schema: Value| md.check(&schema).unwrap_err().to_string();
        assert!(refused(Markdown::content("body"), commit()).contains("no property `body`"));
        assert!(refused(Markdown::content("emoji"), commit())
            .contains("must be `\"type\": \"string\"`"));
        assert!(refused(Markdown::content("message"), commit())
            .contains("`title` is required and refuses null"));
        assert!(
            refused(Markdown::content("title").with_title("title"), commit()).contains("different")
        );
        let optional = json!({"type": "object", "properties": {"content": {"type": "string"}}});
        assert!(refused(Markdown::content("content"), optional).contains("must be required"));
        assert!(refused(Markdown::content("x"), json!({"type": "string"}))
            .contains("must be an object"));
    }

    #[test]
    fn guidance_asks_for_markdown_in_a_few_words() {
        let md = Markdown::content("message").with_title("title");
        assert_eq!(
            md.guidance("commit", Some("A commit message."), &commit()),
            "Reply in Markdown only: no JSON, nothing before or after it. Write a commit message.\n\
             First line: The summary line (at most 72 characters). Then a blank line, then the message."
        );
        let wrapper = json!({"type": "object", "properties": {"content": {"type": "string"}}, "required": ["content"]});
        assert_eq!(
            Markdown::content("content").guidance("w", None, &wrapper),
            "Reply in Markdown only: no JSON, nothing before or after it."
        );
    }
}

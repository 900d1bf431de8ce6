//! For generated code only: the paths the derive emits. Not a public API.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

pub use serde::de::DeserializeOwned;
use serde_json::Map;
pub use serde_json::Value;
pub use std::sync::OnceLock as Once;

pub use crate::read::from_text::{
    choice as text_choice, choice_or as text_choice_or, excerpt as text_excerpt,
    finish as text_finish, fixed as text_fixed, flag as text_flag, is_value_of,
    number as text_number, number_or as text_number_or, FromText, FromTextError, TextChoice,
    TextNumber, TextReport,
};
pub use crate::read::output::StructuredOutput;
pub use crate::read::prose::Prose;
pub use crate::schema::containers::{tuple, MapKey};
pub use crate::schema::partial::{whole_from, HasPartial};
pub use crate::schema::response::{
    derived as derived_schema, derived_markdown, derived_root, derived_text, ResponseSchema,
};
pub use crate::schema::types::{
    Bound, EnumTarget, FormatTarget, Length, LengthTarget, PatternTarget, Range, RangeTarget,
    SchemaGen, SchemaType,
};
pub use crate::schema::validate::{Path, Validate, Violation};

/// A strict object node: properties in declaration order, all required, nothing else allowed.
pub fn object(description: Option<&str>, properties: Vec<(&'static str, Value)>) -> Value {
    let mut node = Map::new();
    node.insert("type".into(), Value::from("object"));
    if let Some(d) = description {
        node.insert("description".into(), Value::from(d));
    }
    let required: Vec<Value> = properties.iter().map(|(k, _)| Value::from(*k)).collect();
    node.insert(
        "properties".into(),
        Value::Object(
            properties
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        ),
    );
    node.insert("required".into(), Value::Array(required));
    node.insert("additionalProperties".into(), Value::Bool(false));
    Value::Object(node)
}

/// A string enum node for a unit-only enum.
pub fn string_enum(description: Option<&str>, values: &[&str]) -> Value {
    let mut node = Map::new();
    node.insert("type".into(), Value::from("string"));
    if let Some(d) = description {
        node.insert("description".into(), Value::from(d));
    }
    node.insert(
        "enum".into(),
        values.iter().map(|v| Value::from(*v)).collect(),
    );
    Value::Object(node)
}

/// Sets a node's description (a field's doc comment wins over its type's).
pub fn describe(mut node: Value, description: &str) -> Value {
    if let Value::Object(map) = &mut node {
        map.insert("description".into(), Value::from(description));
    }
    node
}

/// The schema of a type that is not generic, built once into its `static`: one function for
/// every derived type (a closure passed to `OnceLock::get_or_init` would compile its machinery
/// once per type).
pub fn schema_once(
    cell: &'static OnceLock<ResponseSchema>,
    build: fn() -> ResponseSchema,
) -> &'static ResponseSchema {
    cell.get_or_init(build)
}

/// The schema of a generic type, one per instantiation: a `static` in a generic function would be
/// shared by every instantiation, so these are kept by `TypeId`.
pub fn generic_schema<T: 'static>(
    build: impl FnOnce() -> ResponseSchema,
) -> &'static ResponseSchema {
    static CACHE: OnceLock<RwLock<HashMap<TypeId, &'static ResponseSchema>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let id = TypeId::of::<T>();
    if let Some(found) = cache.read().unwrap_or_else(|e| e.into_inner()).get(&id) {
        return found;
    }
    // Built outside the lock: building may need the schemas of other generic types. Two threads
    // racing on the first call each build one; the loser's copy is leaked once, never again.
    let built: &'static ResponseSchema = Box::leak(Box::new(build()));
    let mut map = cache.write().unwrap_or_else(|e| e.into_inner());
    let stored: &'static ResponseSchema = map.entry(id).or_insert(built);
    stored
}

/// Runs one `#[validate(with = ..)]` function and records its refusal: a `Violation` at the
/// field's path with [`Rule::Custom`](crate::Rule::Custom), the function's name as what was
/// expected and its message as what was found. The function takes the field's value (or what it
/// borrows as: `&str` for a `String`, `&[T]` for a `Vec<T>`) and returns `Result<(), E>` for any
/// displayable `E` (a `String`, an error type).
pub fn custom_check<T: ?Sized, U: std::borrow::Borrow<T> + ?Sized, E: std::fmt::Display>(
    check: impl Fn(&T) -> Result<(), E>,
    value: &U,
    name: &'static str,
    path: &Path<'_>,
    out: &mut Vec<Violation>,
) {
    if let Err(e) = check(value.borrow()) {
        out.push(Violation {
            path: path.to_pointer(),
            rule: crate::Rule::Custom,
            expected: format!("a value `{name}` accepts"),
            found: crate::schema::validate::capped(e.to_string()),
        });
    }
}

/// The schema name of one instantiation of a generic type: its own name, then each type
/// parameter's last path segment in snake case (`envelope` with `my::Ticket` is
/// `envelope_ticket`; with `Vec<my::Ticket>`, `envelope_vec_ticket`).
pub fn instance_name(base: &str, params: &[&str]) -> String {
    let mut name = base.to_owned();
    for param in params {
        for piece in param.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')) {
            let last = piece.rsplit("::").next().unwrap_or(piece);
            if last.is_empty() {
                continue;
            }
            name.push('_');
            let mut previous_lower = false;
            for c in last.chars() {
                if c.is_uppercase() {
                    if previous_lower {
                        name.push('_');
                    }
                    name.extend(c.to_lowercase());
                    previous_lower = false;
                } else {
                    name.push(c);
                    previous_lower = c.is_lowercase() || c.is_ascii_digit();
                }
            }
        }
    }
    name
}

/// How an enum writes its variants (serde's four representations).
#[derive(Debug, Clone, Copy)]
pub enum Tagging {
    /// `"Unit"`, or `{"Variant": data}`.
    External,
    /// `{"tag": "Variant", ..fields}`.
    Internal(&'static str),
    /// `{"tag": "Variant", "content": data}`.
    Adjacent(&'static str, &'static str),
    /// The data alone; a unit variant is `null`.
    Untagged,
}

/// A property that holds exactly one string: a variant's tag.
fn tag_node(name: &str) -> Value {
    serde_json::json!({ "type": "string", "enum": [name] })
}

/// One variant's branch of an enum with data: its data (`None` for a unit variant) written as
/// `tagging` writes it, strict, with the variant's doc comment.
pub fn variant(
    tagging: &Tagging,
    name: &'static str,
    description: Option<&str>,
    data: Option<Value>,
) -> Value {
    let node = match (tagging, data) {
        (Tagging::External, None) => tag_node(name),
        (Tagging::External, Some(data)) => object(None, vec![(name, data)]),
        (Tagging::Internal(tag), None) => object(None, vec![(tag, tag_node(name))]),
        (Tagging::Internal(tag), Some(data)) => with_tag(tag, name, data),
        (Tagging::Adjacent(tag, _), None) => object(None, vec![(tag, tag_node(name))]),
        (Tagging::Adjacent(tag, content), Some(data)) => {
            object(None, vec![(tag, tag_node(name)), (content, data)])
        }
        (Tagging::Untagged, None) => serde_json::json!({ "type": "null" }),
        (Tagging::Untagged, Some(data)) => data,
    };
    describe_opt(node, description)
}

/// An internally tagged variant's object: the tag first, then the data's own properties. Data
/// that is not an object with properties (a map) keeps its shape beside the tag.
fn with_tag(tag: &'static str, name: &str, data: Value) -> Value {
    let Value::Object(mut data) = data else {
        return data;
    };
    let mut node = Map::new();
    node.insert("type".into(), Value::from("object"));
    if let Some(d) = data.remove("description") {
        node.insert("description".into(), d);
    }
    let mut properties = Map::new();
    properties.insert(tag.to_owned(), tag_node(name));
    if let Some(Value::Object(own)) = data.remove("properties") {
        properties.extend(own);
    }
    node.insert("properties".into(), Value::Object(properties));
    require_all(&mut node);
    let additional = data
        .remove("additionalProperties")
        .unwrap_or(Value::Bool(false));
    node.insert("additionalProperties".into(), additional);
    Value::Object(node)
}

/// An enum with data: one branch per variant (`anyOf`), the type's description beside them.
pub fn variants(description: Option<&str>, branches: Vec<Value>) -> Value {
    let mut node = Map::new();
    if let Some(d) = description {
        node.insert("description".into(), Value::from(d));
    }
    node.insert("anyOf".into(), Value::Array(branches));
    Value::Object(node)
}

/// Sets a description when there is one.
pub fn describe_opt(node: Value, description: Option<&str>) -> Value {
    match description {
        Some(d) => describe(node, d),
        None => node,
    }
}

/// A struct with `#[serde(flatten)]` fields: each flattened object's properties merged into
/// the struct's own, all required, as serde reads them. A flattened map allows the other keys
/// its values fit (`additionalProperties`).
pub fn flatten(object: Value, flattened: Vec<Value>) -> Value {
    let Value::Object(mut node) = object else {
        return object;
    };
    for inner in flattened {
        let Value::Object(mut inner) = inner else {
            continue;
        };
        if let (Some(Value::Object(props)), Some(Value::Object(own))) =
            (node.get_mut("properties"), inner.remove("properties"))
        {
            props.extend(own);
        }
        if let Some(extra @ Value::Object(_)) = inner.remove("additionalProperties") {
            node.insert("additionalProperties".into(), extra);
        }
    }
    require_all(&mut node);
    Value::Object(node)
}

/// Every property of an object node required, in order: strict mode has no optional one.
fn require_all(node: &mut Map<String, Value>) {
    let required: Vec<Value> = match node.get("properties") {
        Some(Value::Object(props)) => props.keys().map(|k| Value::from(k.as_str())).collect(),
        _ => Vec::new(),
    };
    node.insert("required".into(), Value::Array(required));
}

//! Building request bodies: members moved in as they are, merged key by key, and the body of a
//! request written from what the request holds ([`Json`]).

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::{json, Map, Value};

use super::chat::{Attachment, AttachmentSource};
use crate::read::Answer;

/// A request body as it is written: the caller's texts borrowed from the request, members in
/// the order given, so a body is written without copying the conversation into `Value`s (and
/// hashing their keys) first. [`Json::into_value`] gives the same body as a `Value`, where it
/// must be merged with other fields; the text of both is the same.
#[derive(Debug)]
pub(crate) enum Json<'a> {
    Null,
    Bool(bool),
    /// A token limit.
    Count(u64),
    /// Text the request holds (a message, a model's name, an attachment's data).
    Str(&'a str),
    /// Text made for the body (the system text joined, a data URL).
    Text(String),
    /// A value made for the body (a tool call's input as an object, a merged member).
    Value(Value),
    /// An attachment's base64 data as a data URL (`data:{media_type};base64,{data}`), written
    /// from the request's data where it lies, not copied into a URL first.
    DataUrl {
        media_type: &'a str,
        data: &'a str,
    },
    Array(Vec<Json<'a>>),
    /// Members in the order written, each key once.
    Object(Vec<(&'a str, Json<'a>)>),
}

impl<'a> Json<'a> {
    /// An object of these members, in this order (each key once).
    pub(crate) fn object<const N: usize>(members: [(&'a str, Json<'a>); N]) -> Json<'a> {
        Json::Object(members.into())
    }

    /// A string, or `null` when there is none.
    pub(crate) fn or_null(text: Option<&'a str>) -> Json<'a> {
        text.map_or(Json::Null, Json::Str)
    }

    /// Adds a member at the end of an object (a key it does not have yet).
    pub(crate) fn push(&mut self, key: &'a str, value: Json<'a>) {
        if let Json::Object(members) = self {
            debug_assert!(members.iter().all(|(k, _)| *k != key), "{key} twice");
            members.push((key, value));
        }
    }

    /// Whether the object has a member `key`.
    pub(crate) fn has(&self, key: &str) -> bool {
        matches!(self, Json::Object(members) if members.iter().any(|(k, _)| *k == key))
    }

    /// The object's member `key`.
    pub(crate) fn member_mut(&mut self, key: &str) -> Option<&mut Json<'a>> {
        match self {
            Json::Object(members) => members.iter_mut().find(|(k, _)| *k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The same JSON as a `Value`.
    pub(crate) fn into_value(self) -> Value {
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(b),
            Json::Count(n) => Value::from(n),
            Json::Str(s) => Value::from(s),
            Json::Text(s) => Value::String(s),
            Json::Value(v) => v,
            Json::DataUrl { media_type, data } => {
                Value::String(format!("data:{media_type};base64,{data}"))
            }
            Json::Array(items) => Value::Array(items.into_iter().map(Json::into_value).collect()),
            Json::Object(members) => Value::Object(
                members
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v.into_value()))
                    .collect::<Map<String, Value>>(),
            ),
        }
    }

    /// Where an attachment is: its URL, or its data as a data URL.
    pub(crate) fn attachment_url(attachment: &'a Attachment) -> Json<'a> {
        match &attachment.source {
            AttachmentSource::Base64(data) => Json::DataUrl {
                media_type: &attachment.media_type,
                data,
            },
            AttachmentSource::Url(url) => Json::Str(url),
        }
    }
}

impl<'a> From<&'a str> for Json<'a> {
    fn from(s: &'a str) -> Json<'a> {
        Json::Str(s)
    }
}

impl<'a> From<&'a String> for Json<'a> {
    fn from(s: &'a String) -> Json<'a> {
        Json::Str(s)
    }
}

impl From<String> for Json<'_> {
    fn from(s: String) -> Self {
        Json::Text(s)
    }
}

impl<'a> From<std::borrow::Cow<'a, str>> for Json<'a> {
    fn from(s: std::borrow::Cow<'a, str>) -> Json<'a> {
        match s {
            std::borrow::Cow::Borrowed(s) => Json::Str(s),
            std::borrow::Cow::Owned(s) => Json::Text(s),
        }
    }
}

impl From<u32> for Json<'_> {
    fn from(n: u32) -> Self {
        Json::Count(n.into())
    }
}

impl From<bool> for Json<'_> {
    fn from(b: bool) -> Self {
        Json::Bool(b)
    }
}

impl From<Value> for Json<'_> {
    fn from(v: Value) -> Self {
        Json::Value(v)
    }
}

impl Serialize for Json<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => serializer.serialize_unit(),
            Json::Bool(b) => serializer.serialize_bool(*b),
            Json::Count(n) => serializer.serialize_u64(*n),
            Json::Str(s) => serializer.serialize_str(s),
            Json::Text(s) => serializer.serialize_str(s),
            Json::Value(v) => v.serialize(serializer),
            Json::DataUrl { media_type, data } => {
                serializer.collect_str(&format_args!("data:{media_type};base64,{data}"))
            }
            Json::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(members) => {
                let mut map = serializer.serialize_map(Some(members.len()))?;
                for (k, v) in members {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

/// Merges `fragment` into `body`: objects key by key (recursively), anything else replaced.
///
/// ```
/// use structured_runtime::provider::wire::merge;
/// let mut body = serde_json::json!({"model": "gpt-4o", "provider": {"order": ["a"]}});
/// merge(&mut body, &serde_json::json!({"provider": {"require_parameters": true}}));
/// assert_eq!(body["provider"], serde_json::json!({"order": ["a"], "require_parameters": true}));
/// ```
pub fn merge(body: &mut Value, fragment: &Value) {
    match (body, fragment) {
        (Value::Object(body), Value::Object(fragment)) => {
            for (k, v) in fragment {
                match body.get_mut(k) {
                    Some(existing) => merge(existing, v),
                    None => {
                        body.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (body, fragment) => *body = fragment.clone(),
    }
}

/// An object from its members, each value moved in as it is (`json!` would serialize a `Value`
/// into a new one, node by node).
pub(super) fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}

/// Sets `key` on an object when there is a value for it.
pub(super) fn put(object: &mut Value, key: &str, value: Option<&str>) {
    if let (Value::Object(map), Some(v)) = (object, value) {
        map.insert(key.to_owned(), Value::from(v));
    }
}

/// The input of a tool call as an object (what Anthropic, Gemini and Ollama send back); input
/// that is not a JSON object is sent as `{}` (the correction says what was wrong with it).
pub(super) fn input_object(input: &Answer) -> Value {
    match input {
        Answer::Json(v @ Value::Object(_)) => v.clone(),
        Answer::Json(_) => json!({}),
        Answer::Text(text) => match crate::read::strict_de::json_value(text) {
            Ok(v @ Value::Object(_)) => v,
            _ => json!({}),
        },
    }
}

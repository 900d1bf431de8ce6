//! Building request bodies: members moved in as they are, merged key by key.

use serde_json::{json, Value};

use crate::read::Answer;

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
        Answer::Text(text) => match serde_json::from_str::<Value>(text) {
            Ok(v @ Value::Object(_)) => v,
            _ => json!({}),
        },
    }
}

//! Shapes a target cannot express, sent in a shape it can and read back before anything else
//! sees the answer. OpenAI strict mode closes every object (`additionalProperties: false`) and
//! takes only an object at the root, so:
//!
//! - a map (an object whose keys are data: `additionalProperties` a schema) is sent as a list of
//!   `{"key": .., "value": ..}` entries, `propertyNames` becoming the key's schema;
//! - a root that is not an object (an enum with data, a newtype, a list) is sent as the one
//!   property of an object.
//!
//! [`Reshape`](crate::read::Reshape) says what was done, and [`crate::read::reshape`] reads an
//! answer back from it.

use serde_json::{json, Map, Value};

use crate::schema::node::{for_each_child_mut, JsonType, Node, MAX_DEPTH};
use crate::schema::Pointer;

/// The definitions name the root takes when it refers to itself and is wrapped.
const ROOT_DEF: &str = "root";

/// `schema` with a root that is not only an object wrapped as the one property of an object
/// (its definitions kept at the new root, a reference to the root pointed at its definition),
/// and the key it went under; `None` when the root is an object.
pub(super) fn wrap_root(schema: &Value) -> Option<(Value, String)> {
    let root = Node::root(schema);
    if root.types().is_only(JsonType::Object) && !root.has("anyOf") {
        return None;
    }
    let key = wrapper_key(root);
    let mut inner = schema.clone();
    let defs = inner.as_object_mut().and_then(|m| m.remove("$defs"));
    let mut defs = match defs {
        Some(Value::Object(defs)) => defs,
        _ => Map::new(),
    };
    let value = if refers_to_root(Node::root(&inner)) {
        let mut name = ROOT_DEF.to_owned();
        while defs.contains_key(&name) {
            name.push('_');
        }
        let target = format!("#/$defs/{name}");
        point_root_refs(&mut inner, &target, 0);
        defs.values_mut()
            .for_each(|d| point_root_refs(d, &target, 0));
        defs.insert(name, inner);
        json!({ "$ref": target })
    } else {
        inner
    };
    let mut out = json!({
        "type": "object",
        "properties": { key.clone(): value },
        "required": [key.clone()],
        "additionalProperties": false
    });
    if !defs.is_empty() {
        if let Value::Object(map) = &mut out {
            map.insert("$defs".into(), Value::Object(defs));
        }
    }
    Some((out, key))
}

/// `value`, or (when a branch of the root declares a property of that name, so an answer in
/// the written shape could look wrapped) the first of `_value`, `__value`, ... that none does.
fn wrapper_key(root: Node<'_>) -> String {
    let mut declared: Vec<&str> = root.target().properties().map(|(k, _)| k).collect();
    for branch in root.target().any_of().into_iter().flatten() {
        declared.extend(branch.target().properties().map(|(k, _)| k));
    }
    let mut key = "value".to_owned();
    while declared.contains(&key.as_str()) {
        key.insert(0, '_');
    }
    key
}

/// Whether a sub-schema refers to the root (`{"$ref": "#"}`).
fn refers_to_root(node: Node<'_>) -> bool {
    !node.too_deep()
        && (node.reference() == Some("#") || node.children().iter().any(|c| refers_to_root(c.node)))
}

/// Every `{"$ref": "#"}` in `node` and its sub-schemas pointed at `target`.
fn point_root_refs(node: &mut Value, target: &str, depth: usize) {
    let Value::Object(map) = node else { return };
    if depth > MAX_DEPTH {
        return;
    }
    if let Some(reference) = map.get_mut("$ref").filter(|r| r.as_str() == Some("#")) {
        *reference = Value::from(target);
    }
    for_each_child_mut(map, &Pointer::root(), &mut |child, _| {
        point_root_refs(child, target, depth + 1)
    });
}

/// Every map (an object node without `properties` whose `additionalProperties` is a schema)
/// rewritten as an array of `{key, value}` entries, in place; where, recorded.
pub(super) fn maps_as_entries(
    node: &mut Value,
    path: &Pointer,
    depth: usize,
    entries: &mut Vec<Pointer>,
) {
    let Value::Object(map) = node else { return };
    if depth > MAX_DEPTH {
        return;
    }
    for_each_child_mut(map, path, &mut |child, at| {
        maps_as_entries(child, at, depth + 1, entries)
    });
    let is_map = !map.contains_key("properties")
        && map
            .get("additionalProperties")
            .is_some_and(Value::is_object);
    if !is_map {
        return;
    }
    let values = map
        .remove("additionalProperties")
        .unwrap_or(Value::Bool(true));
    let mut key = json!({ "type": "string" });
    if let Some(Value::Object(names)) = map.remove("propertyNames") {
        if let Value::Object(key) = &mut key {
            key.extend(names.into_iter().filter(|(k, _)| k != "type"));
        }
    }
    let note = "A map, written as a list of {key, value} entries; each key at most once.";
    let description = match map.remove("description") {
        Some(Value::String(d)) if !d.is_empty() => format!("{d}\n\n{note}"),
        _ => note.to_owned(),
    };
    let mut out = Map::new();
    out.insert("type".into(), Value::from("array"));
    out.insert(
        "items".into(),
        json!({
            "type": "object",
            "properties": { "key": key, "value": values },
            "required": ["key", "value"],
            "additionalProperties": false
        }),
    );
    out.insert("description".into(), Value::String(description));
    // A count of keys is a count of entries.
    for (from, to) in [("minProperties", "minItems"), ("maxProperties", "maxItems")] {
        if let Some(n) = map.remove(from) {
            out.insert(to.into(), n);
        }
    }
    // Whatever else the node said (a title) stays with it; `type: object` does not.
    map.remove("type");
    for (k, v) in std::mem::take(map) {
        out.entry(k).or_insert(v);
    }
    *map = out;
    entries.push(path.clone());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::dialect::{lower_reporting, SchemaTarget};
    use crate::read::reshape::Reshape;
    use crate::schema::validate::Rule;

    fn reshape_of(schema: &Value) -> (Value, Reshape) {
        let lowered =
            lower_reporting(schema, SchemaTarget::OpenAiStrict).unwrap_or_else(|e| panic!("{e}"));
        (lowered.schema, lowered.reshape)
    }

    #[test]
    fn maps_inside_lists_maps_and_definitions_read_back() {
        let schema = json!({
            "type": "object",
            "properties": {
                "rows": { "type": "array", "items": { "$ref": "#/$defs/Row" } },
                "nested": { "type": "object", "additionalProperties": {
                    "type": "object", "additionalProperties": { "type": "integer" } } }
            },
            "required": ["rows", "nested"],
            "additionalProperties": false,
            "$defs": { "Row": { "type": "object", "additionalProperties": { "type": "string" } } }
        });
        let (sent, reshape) = reshape_of(&schema);
        let paths: Vec<String> = reshape.entries.iter().map(|p| p.to_string()).collect();
        assert!(paths.contains(&"/$defs/Row".to_owned()), "{paths:?}");
        assert_eq!(
            sent["properties"]["nested"]["items"]["properties"]["value"]["type"],
            "array"
        );
        let wire = json!({
            "rows": [[{"key": "a", "value": "x"}], []],
            "nested": [{"key": "n", "value": [{"key": "m", "value": 1}]}]
        });
        let back = reshape.read_back(&schema, wire).unwrap();
        assert_eq!(
            back,
            json!({"rows": [{"a": "x"}, {}], "nested": {"n": {"m": 1}}})
        );
        // Reading back what is already in the schema's shape changes nothing.
        assert_eq!(reshape.read_back(&schema, back.clone()).unwrap(), back);
        // A list that is not entries is left for the schema check to report.
        let odd = json!({"rows": [[{"k": "a"}]], "nested": []});
        assert_eq!(
            reshape.read_back(&schema, odd.clone()).unwrap(),
            json!({"rows": [[{"k": "a"}]], "nested": {}})
        );
    }

    #[test]
    fn a_root_that_refers_to_itself_is_wrapped_through_a_definition() {
        let schema = json!({
            "anyOf": [
                { "type": "integer" },
                { "type": "object", "properties": { "value": { "type": "array", "items": { "$ref": "#" } } },
                  "required": ["value"], "additionalProperties": false }
            ]
        });
        let (sent, reshape) = reshape_of(&schema);
        // The root's own property is `value`, so the wrapper takes another key.
        assert_eq!(reshape.root_key.as_deref(), Some("_value"));
        assert_eq!(
            sent["properties"]["_value"],
            json!({"$ref": "#/$defs/root"})
        );
        assert_eq!(
            sent["$defs"]["root"]["anyOf"][1]["properties"]["value"]["items"],
            json!({"$ref": "#/$defs/root"})
        );
        let back = reshape.read_back(&schema, json!({"_value": {"value": [1, {"value": []}]}}));
        assert_eq!(back.unwrap(), json!({"value": [1, {"value": []}]}));
    }

    #[test]
    fn a_repeated_key_is_reported_at_its_entry_and_the_list_kept() {
        let schema = json!({
            "type": "object",
            "properties": { "m": { "type": "object", "additionalProperties": { "type": "integer" } } },
            "required": ["m"],
            "additionalProperties": false
        });
        let (_, reshape) = reshape_of(&schema);
        let wire = json!({"m": [{"key": "a", "value": 1}, {"key": "b", "value": 2}, {"key": "a", "value": 3}]});
        let (value, violations) = reshape.read_back(&schema, wire.clone()).unwrap_err();
        assert_eq!(value, wire);
        let v: Vec<_> = violations
            .iter()
            .map(|v| (v.path.to_string(), v.rule))
            .collect();
        assert_eq!(v, [("/m/2/key".to_owned(), Rule::UniqueItems)]);
    }
}

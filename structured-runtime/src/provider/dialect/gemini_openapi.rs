//! Gemini `responseSchema`: the OpenAPI 3.0 subset (uppercase types, `nullable`, references
//! inlined, `propertyOrdering`, string enums only).

use serde_json::{Map, Value};

use super::pass::{Inlined, Run};
use crate::schema::node::{JsonType, Node};
use crate::schema::Pointer;

/// Keywords kept as they are.
const KEPT: &[&str] = &[
    "format",
    "title",
    "description",
    "required",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "example",
];

/// Keywords written (or refused) by the lowering itself; any other is moved into `description`.
const HANDLED: &[&str] = &[
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "type",
    "const",
    "enum",
    "properties",
    "items",
    "$defs",
    "definitions",
    "$ref",
    "additionalProperties",
    "default",
    "$schema",
];

pub(super) fn lower(run: &mut Run, root: Node<'_>) -> Value {
    node(run, root, &Pointer::root())
}

fn node(run: &mut Run, node: Node<'_>, path: &Pointer) -> Value {
    if run.stop(path, node) {
        return Value::Object(Map::new());
    }
    match run.inline(node, path) {
        Inlined::Node(node, map) => keywords(run, node, map, path),
        Inlined::Ref(node, map) => {
            let out = keywords(run, node, map, path);
            run.inlining.pop();
            out
        }
        Inlined::Failed => Value::Object(Map::new()),
    }
}

fn is_null_branch(branch: &Value) -> bool {
    branch.get("type").and_then(Value::as_str) == Some("null")
}

fn keywords(run: &mut Run, node: Node<'_>, map: &Map<String, Value>, path: &Pointer) -> Value {
    let mut out = Map::new();
    let mut moved = Map::new();
    let mut nullable = false;
    // `anyOf: [X, {"type": "null"}]` is X, nullable.
    if let Some(all) = map.get("anyOf").and_then(Value::as_array) {
        let kept: Vec<&Value> = all.iter().filter(|b| !is_null_branch(b)).collect();
        nullable = kept.len() < all.len();
        if let [only] = kept.as_slice() {
            let mut inner = self::node(run, node.child(only), &path.key("anyOf").index(0));
            if let Value::Object(inner_map) = &mut inner {
                if nullable {
                    inner_map.insert("nullable".into(), Value::Bool(true));
                }
                for key in ["description", "title"] {
                    if let Some(v) = map.get(key) {
                        inner_map.insert(key.into(), v.clone());
                    }
                }
            }
            return inner;
        }
        let lowered = kept
            .iter()
            .enumerate()
            .map(|(i, b)| self::node(run, node.child(b), &path.key("anyOf").index(i)))
            .collect();
        out.insert("anyOf".into(), Value::Array(lowered));
    }
    if map.contains_key("oneOf") {
        run.fail(path, "`oneOf` is not in Gemini's responseSchema; use `anyOf` or SchemaTarget::GeminiJsonSchema");
    }
    for key in ["allOf", "not"] {
        if map.contains_key(key) {
            run.fail(path, format!("`{key}` is not in Gemini's responseSchema"));
        }
    }
    let types = node.types();
    let real: Vec<JsonType> = types.iter().filter(|t| *t != JsonType::Null).collect();
    nullable |= real.len() < types.len();
    match real.as_slice() {
        [] if types.is_empty() => {}
        [] => {
            out.insert("type".into(), "NULL".into());
        }
        [one] => {
            out.insert(
                "type".into(),
                Value::String(one.name().to_ascii_uppercase()),
            );
        }
        _ => {
            let names: Vec<&str> = types.iter().map(JsonType::name).collect();
            run.fail(
                path,
                format!(
                    "a type union {names:?}: Gemini's responseSchema takes one type (use `anyOf`)"
                ),
            )
        }
    }
    if nullable {
        out.insert("nullable".into(), Value::Bool(true));
    }
    if let Some(c) = map.get("const") {
        match c {
            Value::String(_) => {
                out.insert("enum".into(), Value::Array(vec![c.clone()]));
            }
            _ => run.fail(
                path,
                "a non-string `const`: Gemini's responseSchema has string enums only",
            ),
        }
    }
    if let Some(values) = node.enum_values() {
        let strings: Vec<Value> = values.iter().filter(|v| !v.is_null()).cloned().collect();
        if strings.iter().all(Value::is_string) {
            if strings.len() < values.len() {
                out.insert("nullable".into(), Value::Bool(true));
            }
            out.insert("enum".into(), Value::Array(strings));
        } else {
            run.fail(path, "a non-string `enum`: Gemini's responseSchema has string enums only (use SchemaTarget::GeminiJsonSchema)");
        }
    }
    if map.get("properties").is_some_and(Value::is_object) {
        let lowered: Map<String, Value> = node
            .properties()
            .map(|(k, p)| {
                let at = path.key("properties").key(k);
                (k.to_owned(), self::node(run, p, &at))
            })
            .collect();
        if lowered.len() > 1 {
            let order = lowered.keys().cloned().map(Value::String).collect();
            out.insert("propertyOrdering".into(), Value::Array(order));
        }
        out.insert("properties".into(), Value::Object(lowered));
    }
    if let Some(items) = map.get("items") {
        let lowered = self::node(run, node.child(items), &path.key("items"));
        out.insert("items".into(), lowered);
    }
    for (k, v) in map {
        if KEPT.contains(&k.as_str()) {
            out.insert(k.clone(), v.clone());
        } else if !HANDLED.contains(&k.as_str()) {
            moved.insert(k.clone(), v.clone());
        }
    }
    // `additionalProperties: false` is Gemini's only behaviour; anything else is a rule it
    // cannot enforce.
    if let Some(extra) = map.get("additionalProperties") {
        if extra != &Value::Bool(false) {
            moved.insert("additionalProperties".into(), extra.clone());
        }
    }
    run.describe(path, &mut out, &moved);
    Value::Object(out)
}

//! Gemini `responseSchema`: the OpenAPI 3.0 subset (uppercase types, `nullable`, references
//! inlined, `propertyOrdering`, string enums only).

use serde_json::{Map, Value};

use super::pass::{Inlined, Run};
use super::policy::{by_policy, in_order, Policy, Table, Written};
use crate::schema::node::{JsonType, Node};
use crate::schema::Pointer;

/// What Gemini's `responseSchema` does with each keyword: the OpenAPI structure (a nullable
/// union, one uppercase `type`, string enums, properties with their order, items) is rewritten
/// by [`keywords`]; what it cannot say is refused; the bounds and formats it takes are sent as
/// written; every other keyword is moved into `description`.
const TABLE: Table = Table {
    entries: &[
        (
            "oneOf",
            Policy::Refuse(
                "is not in Gemini's responseSchema; use `anyOf` or SchemaTarget::GeminiJsonSchema",
            ),
        ),
        ("allOf", Policy::Refuse("is not in Gemini's responseSchema")),
        ("not", Policy::Refuse("is not in Gemini's responseSchema")),
        ("format", Policy::Keep),
        ("title", Policy::Keep),
        ("description", Policy::Keep),
        ("required", Policy::Keep),
        ("minItems", Policy::Keep),
        ("maxItems", Policy::Keep),
        ("minProperties", Policy::Keep),
        ("maxProperties", Policy::Keep),
        ("minimum", Policy::Keep),
        ("maximum", Policy::Keep),
        ("minLength", Policy::Keep),
        ("maxLength", Policy::Keep),
        ("pattern", Policy::Keep),
        ("example", Policy::Keep),
        ("anyOf", Policy::Rewrite),
        ("type", Policy::Rewrite),
        ("const", Policy::Rewrite),
        ("enum", Policy::Rewrite),
        ("properties", Policy::Rewrite),
        ("items", Policy::Rewrite),
        ("$defs", Policy::Rewrite),
        ("definitions", Policy::Rewrite),
        ("$ref", Policy::Rewrite),
        ("default", Policy::Move),
        ("$schema", Policy::Rewrite),
        // `false` is Gemini's only behaviour; anything else is a rule it cannot enforce.
        ("additionalProperties", Policy::Move),
    ],
    other: Policy::Move,
};

/// [`TABLE`]'s policy, refined: `additionalProperties: false` says what Gemini does anyway.
fn policy(keyword: &str, value: &Value) -> Policy {
    match keyword {
        "additionalProperties" if value == &Value::Bool(false) => Policy::Rewrite,
        _ => TABLE.get(keyword),
    }
}

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
    TABLE.refuse(run, map, path);
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
    let mut written = Written {
        out,
        ..Written::default()
    };
    by_policy(run, node, map, path, &policy, &mut self::node, &mut written);
    in_order(&mut written.moved, &[], &["additionalProperties"]);
    run.describe(path, &mut written.out, &written.moved);
    Value::Object(written.out)
}

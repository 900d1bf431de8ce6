//! Gemini `responseJsonSchema`: JSON Schema, with the keywords Gemini does not enforce moved into
//! `description` and `oneOf` read as `anyOf`. References are kept.

use serde_json::{Map, Value};

use super::pass::Run;
use crate::schema::node::Node;
use crate::schema::Pointer;

/// Keywords Gemini's JSON Schema mode takes.
const KEPT: &[&str] = &[
    "$id",
    "$defs",
    "$ref",
    "$anchor",
    "type",
    "format",
    "title",
    "description",
    "enum",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "anyOf",
    "properties",
    "additionalProperties",
    "required",
    "propertyOrdering",
];

pub(super) fn lower(run: &mut Run, root: Node<'_>) -> Value {
    node(run, root, &Pointer::root())
}

/// Keeps [`KEPT`] keywords (recursing into sub-schemas), reads `oneOf` as `anyOf`, moves the rest
/// into `description`.
fn node(run: &mut Run, node: Node<'_>, path: &Pointer) -> Value {
    let Some(map) = node.map() else {
        return node.value().clone();
    };
    if run.stop(path, node) {
        return node.value().clone();
    }
    let mut out = Map::new();
    let mut moved = Map::new();
    for (k, v) in map {
        let key = if k == "oneOf" { "anyOf" } else { k.as_str() };
        if !KEPT.contains(&key) {
            moved.insert(k.clone(), v.clone());
            continue;
        }
        let lowered = match (key, v) {
            ("properties" | "$defs", Value::Object(children)) => Value::Object(
                children
                    .iter()
                    .map(|(name, c)| {
                        let at = path.key(k).key(name);
                        (name.clone(), self::node(run, node.child(c), &at))
                    })
                    .collect(),
            ),
            ("anyOf" | "prefixItems", Value::Array(branches)) => Value::Array(
                branches
                    .iter()
                    .enumerate()
                    .map(|(i, b)| self::node(run, node.child(b), &path.key(k).index(i)))
                    .collect(),
            ),
            ("items" | "additionalProperties", Value::Object(_)) => {
                self::node(run, node.child(v), &path.key(k))
            }
            _ => v.clone(),
        };
        out.insert(key.to_owned(), lowered);
    }
    run.describe(path, &mut out, &moved);
    Value::Object(out)
}

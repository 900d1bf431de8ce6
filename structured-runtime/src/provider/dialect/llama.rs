//! llama.cpp's JSON-Schema-to-grammar subset (also what Ollama passes on): every reference
//! inlined (its converter breaks on nested `$ref`s), `items: false` written as the tuple's
//! count (the converter refuses a boolean schema), what it cannot turn into a grammar refused.
//!
//! Every other keyword is sent as written, so an engine that enforces it does. What llama.cpp's
//! own converter is known to leave out (measured on the bundled server: a fractional range, a
//! pattern not anchored at both ends, a format other than date, time, date-time and uuid,
//! `multipleOf`, `uniqueItems`, `contains`, `propertyNames` and property counts) is reported
//! as [`Enforcement::Ignored`]; a server that routes `json_schema` through llguidance enforces
//! most of them. The validator of record still decides.

use serde_json::{Map, Value};

use super::pass::{Inlined, Run};
use crate::schema::dialect::Enforcement;
use crate::schema::node::{JsonType, Node};
use crate::schema::Pointer;

/// Keywords the grammar converter does not support at all.
const REFUSED: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "patternProperties",
];

/// Formats llama.cpp's converter writes a grammar for.
const FORMATS: &[&str] = &["date", "time", "date-time", "uuid"];

/// Keywords llama.cpp's converter ignores wherever they are.
const IGNORED: &[&str] = &[
    "multipleOf",
    "uniqueItems",
    "contains",
    "propertyNames",
    "minProperties",
    "maxProperties",
];

pub(super) fn lower(run: &mut Run, root: Node<'_>) -> Value {
    node(run, root, &Pointer::root())
}

fn node(run: &mut Run, node: Node<'_>, path: &Pointer) -> Value {
    if run.stop(path, node) {
        return Value::Object(Map::new());
    }
    let (node, map, pushed) = match run.inline(node, path) {
        Inlined::Node(node, map) => (node, map, false),
        Inlined::Ref(node, map) => (node, map, true),
        Inlined::Failed => return Value::Object(Map::new()),
    };
    if map.contains_key("properties") && (map.contains_key("anyOf") || map.contains_key("oneOf")) {
        run.fail(path, "`properties` beside `anyOf`/`oneOf` in one node: llama.cpp's grammar converter cannot mix them (move the properties into each branch)");
    }
    for key in REFUSED {
        if map.contains_key(*key) {
            run.fail(
                path,
                format!("`{key}` is not supported by llama.cpp's grammar converter"),
            );
        }
    }
    let mut out = Map::new();
    let mut ignored = Vec::new();
    let integer = node.types().contains(JsonType::Integer);
    for (k, v) in map {
        match k.as_str() {
            "$defs" | "definitions" | "$ref" => {}
            "properties" => {
                let props = node
                    .properties()
                    .map(|(name, p)| {
                        let at = path.key("properties").key(name);
                        (name.to_owned(), self::node(run, p, &at))
                    })
                    .collect();
                out.insert(k.clone(), Value::Object(props));
            }
            "items" if v == &Value::Bool(false) => {
                // The converter refuses a boolean schema: no item past the tuple is a count.
                let tuple = map
                    .get("prefixItems")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                let max = map
                    .get("maxItems")
                    .and_then(Value::as_u64)
                    .map_or(tuple as u64, |m| m.min(tuple as u64));
                out.insert("maxItems".into(), Value::from(max));
            }
            "maxItems" if map.get("items") == Some(&Value::Bool(false)) => {}
            "items" | "additionalProperties" | "propertyNames" | "contains" if v.is_object() => {
                let lowered = self::node(run, node.child(v), &path.key(k));
                out.insert(k.clone(), lowered);
                if IGNORED.contains(&k.as_str()) {
                    ignored.push(k.clone());
                }
            }
            "anyOf" | "oneOf" | "prefixItems" => {
                let branches = v
                    .as_array()
                    .map(|bs| {
                        bs.iter()
                            .enumerate()
                            .map(|(i, b)| self::node(run, node.child(b), &path.key(k).index(i)))
                            .collect()
                    })
                    .unwrap_or_default();
                out.insert(k.clone(), Value::Array(branches));
            }
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" if !integer => {
                out.insert(k.clone(), v.clone());
                ignored.push(k.clone());
            }
            "pattern"
                if !v
                    .as_str()
                    .is_some_and(|p| p.starts_with('^') && p.ends_with('$')) =>
            {
                out.insert(k.clone(), v.clone());
                ignored.push(k.clone());
            }
            "format" if !v.as_str().is_some_and(|f| FORMATS.contains(&f)) => {
                out.insert(k.clone(), v.clone());
                ignored.push(k.clone());
            }
            _ => {
                if IGNORED.contains(&k.as_str()) {
                    ignored.push(k.clone());
                }
                out.insert(k.clone(), v.clone());
            }
        }
    }
    run.keep(path, ignored, Enforcement::Ignored);
    if pushed {
        run.inlining.pop();
    }
    Value::Object(out)
}

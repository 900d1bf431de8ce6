//! llama.cpp's JSON-Schema-to-grammar subset (also what Ollama passes on): every reference
//! inlined (its converter breaks on nested `$ref`s), non-integer bounds and unanchored patterns
//! moved into `description`, what the converter cannot turn into a grammar refused.

use serde_json::{Map, Value};

use super::pass::{Inlined, Run};
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
    let mut moved = Map::new();
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
            "items" => {
                let lowered = self::node(run, node.child(v), &path.key("items"));
                out.insert(k.clone(), lowered);
            }
            "anyOf" | "oneOf" => {
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
                moved.insert(k.clone(), v.clone());
            }
            "pattern"
                if !v
                    .as_str()
                    .is_some_and(|p| p.starts_with('^') && p.ends_with('$')) =>
            {
                moved.insert(k.clone(), v.clone());
            }
            "format" if v.as_str().is_some_and(|f| matches!(f, "uri" | "email")) => {
                moved.insert(k.clone(), v.clone());
            }
            "uniqueItems" | "contains" | "prefixItems" | "$anchor" | "multipleOf" => {
                moved.insert(k.clone(), v.clone());
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    run.describe(path, &mut out, &moved);
    if pushed {
        run.inlining.pop();
    }
    Value::Object(out)
}

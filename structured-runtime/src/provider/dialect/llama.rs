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
use super::policy::{by_policy, Policy, Table, Written};
use crate::schema::dialect::Enforcement;
use crate::schema::node::{JsonType, Node};
use crate::schema::Pointer;

/// What llama.cpp's converter does with each keyword: references are inlined (the structural
/// rewrite), what it cannot turn into a grammar is refused, what it leaves out is sent and
/// reported, and every other keyword is sent as written. Where the answer depends on the value
/// (a fractional range, an unanchored pattern, a format it has no rule for, `items: false`),
/// [`policy`] refines the table.
const TABLE: Table = Table {
    entries: &[
        ("not", Policy::Refuse(UNSUPPORTED)),
        ("if", Policy::Refuse(UNSUPPORTED)),
        ("then", Policy::Refuse(UNSUPPORTED)),
        ("else", Policy::Refuse(UNSUPPORTED)),
        ("dependentSchemas", Policy::Refuse(UNSUPPORTED)),
        ("patternProperties", Policy::Refuse(UNSUPPORTED)),
        ("$defs", Policy::Rewrite),
        ("definitions", Policy::Rewrite),
        ("$ref", Policy::Rewrite),
        ("multipleOf", Policy::Unenforced),
        ("uniqueItems", Policy::Unenforced),
        ("contains", Policy::Unenforced),
        ("propertyNames", Policy::Unenforced),
        ("minProperties", Policy::Unenforced),
        ("maxProperties", Policy::Unenforced),
    ],
    other: Policy::Keep,
};

const UNSUPPORTED: &str = "is not supported by llama.cpp's grammar converter";

/// Formats llama.cpp's converter writes a grammar for.
const FORMATS: &[&str] = &["date", "time", "date-time", "uuid"];

/// [`TABLE`]'s policy for `keyword` in `map`, refined by its value.
fn policy(map: &Map<String, Value>, integer: bool, keyword: &str, value: &Value) -> Policy {
    let items_false = map.get("items") == Some(&Value::Bool(false));
    match keyword {
        // The converter refuses a boolean schema: no item past the tuple is a count, written
        // in the place of `items` (and of any `maxItems`, which the count takes into account).
        "items" if items_false => Policy::KeepAs("maxItems"),
        "maxItems" if items_false => Policy::Rewrite,
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" if !integer => {
            Policy::Unenforced
        }
        "pattern"
            if !value
                .as_str()
                .is_some_and(|p| p.starts_with('^') && p.ends_with('$')) =>
        {
            Policy::Unenforced
        }
        "format" if !value.as_str().is_some_and(|f| FORMATS.contains(&f)) => Policy::Unenforced,
        _ => TABLE.get(keyword),
    }
}

pub(super) fn lower(run: &mut Run, root: Node<'_>) -> Value {
    node(run, root, &Pointer::root())
}

/// One node: its reference inlined, then its keywords through [`policy`], `items: false`
/// written as the tuple's count.
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
    TABLE.refuse(run, map, path);
    let integer = node.types().contains(JsonType::Integer);
    let mut written = Written::default();
    by_policy(
        run,
        node,
        map,
        path,
        &|keyword, value| policy(map, integer, keyword, value),
        &mut self::node,
        &mut written,
    );
    if let Some(count) = written
        .out
        .get_mut("maxItems")
        .filter(|_| map.get("items") == Some(&Value::Bool(false)))
    {
        *count = Value::from(tuple_count(map));
    }
    run.keep(path, written.unenforced, Enforcement::Ignored);
    if pushed {
        run.inlining.pop();
    }
    Value::Object(written.out)
}

/// Items a list with `items: false` holds at most: its tuple's, or fewer by `maxItems`.
fn tuple_count(map: &Map<String, Value>) -> u64 {
    let tuple = map
        .get("prefixItems")
        .and_then(Value::as_array)
        .map_or(0, Vec::len) as u64;
    map.get("maxItems")
        .and_then(Value::as_u64)
        .map_or(tuple, |m| m.min(tuple))
}

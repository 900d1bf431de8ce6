//! OpenAI strict mode: what openai-python's `to_strict_json_schema` does, then the strict-mode
//! rules checked on the result.

use serde_json::{Map, Value};

use super::pass::{soften, Run, MAX_NODES};
use super::policy::{Policy, Table};
use super::reshape;
use crate::schema::node::{for_each_child_mut, Node, MAX_DEPTH};
use crate::schema::strict::{preflight, SUPPORTED_FORMATS};
use crate::schema::Pointer;

/// What strict mode does with each keyword once the SDK's transform and the reshaping have run
/// (structural rewrites: objects closed, maps as entries, tuples as lists, a root wrapped): the
/// keywords it does not enforce are moved into the description, `oneOf` is read as `anyOf`, a
/// `format` it does not know is moved ([`policy`]); every other keyword is sent as written, and
/// the strict-mode rules then refuse what it cannot take.
const TABLE: Table = Table {
    entries: &[
        ("default", Policy::Move),
        ("minLength", Policy::Move),
        ("maxLength", Policy::Move),
        ("minProperties", Policy::Move),
        ("maxProperties", Policy::Move),
        ("uniqueItems", Policy::Move),
        ("propertyNames", Policy::Move),
        ("oneOf", Policy::KeepAs("anyOf")),
    ],
    other: Policy::Keep,
};

/// [`TABLE`]'s policy, refined: a `format` strict mode does not take (`uri`, say) is moved.
fn policy(keyword: &str, value: &Value) -> Policy {
    match keyword {
        "format"
            if value
                .as_str()
                .is_some_and(|f| !SUPPORTED_FORMATS.contains(&f)) =>
        {
            Policy::Move
        }
        _ => TABLE.get(keyword),
    }
}

pub(super) fn lower(run: &mut Run, schema: &Value) -> Value {
    // Strict mode closes every object: a map goes as a list of entries (read back on arrival).
    let mut out = to_strict_json_schema(schema);
    reshape::maps_as_entries(&mut out, &Pointer::root(), 0, &mut run.reshape.entries);
    tuples_as_lists(run, &mut out, &Pointer::root(), 0);
    let moved: Vec<&str> = TABLE
        .entries
        .iter()
        .filter(|(_, p)| *p == Policy::Move)
        .map(|(k, _)| *k)
        .collect();
    soften(run, &mut out, &moved, &Pointer::root(), 0);
    soften_formats(run, &mut out, &Pointer::root(), 0);
    if let Policy::KeepAs(name) = TABLE.get("oneOf") {
        rename(&mut out, "oneOf", name, 0);
    }
    if let Err(report) = preflight(&out) {
        for v in report.0 {
            run.fail(&v.path, v.rule.to_string());
        }
    }
    out
}

/// What openai-python's `to_strict_json_schema` does, as data: every object closed
/// (`additionalProperties: false` where absent) with every property required, `default: null`
/// dropped, a single-entry `allOf` merged into its parent, and a `$ref` with sibling keywords
/// inlined. It rejects nothing; [`lower`](super::lower) to
/// [`SchemaTarget::OpenAiStrict`](super::SchemaTarget::OpenAiStrict) then checks the result.
///
/// At most [`MAX_NODES`] nodes are rewritten or copied (an inlined definition costs its size): a
/// `$ref` with siblings met after that is left as it is (and strict mode then reports it), so
/// shared definitions cannot make the work or the result exponential.
pub fn to_strict_json_schema(schema: &Value) -> Value {
    let mut out = schema.clone();
    let mut budget = MAX_NODES;
    strictify(&mut out, Node::root(schema), 0, &mut budget);
    out
}

fn strictify(node: &mut Value, root: Node<'_>, depth: usize, budget: &mut usize) {
    let Value::Object(map) = node else { return };
    if depth > MAX_DEPTH || *budget == 0 {
        return;
    }
    *budget -= 1;
    for defs in ["$defs", "definitions"] {
        if let Some(Value::Object(defs)) = map.get_mut(defs) {
            defs.values_mut()
                .for_each(|d| strictify(d, root, depth + 1, budget));
        }
    }
    if map.get("type").and_then(Value::as_str) == Some("object")
        && !map.contains_key("additionalProperties")
    {
        map.insert("additionalProperties".into(), Value::Bool(false));
    }
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        let names: Vec<Value> = props.keys().cloned().map(Value::String).collect();
        props
            .values_mut()
            .for_each(|p| strictify(p, root, depth + 1, budget));
        map.insert("required".into(), Value::Array(names));
    }
    if let Some(items @ Value::Object(_)) = map.get_mut("items") {
        strictify(items, root, depth + 1, budget);
    }
    for key in ["anyOf", "allOf"] {
        if let Some(Value::Array(branches)) = map.get_mut(key) {
            branches
                .iter_mut()
                .for_each(|b| strictify(b, root, depth + 1, budget));
        }
    }
    if let Some(Value::Array(all)) = map.get("allOf") {
        if let [Value::Object(only)] = all.as_slice() {
            let only = only.clone();
            map.remove("allOf");
            map.extend(only);
        }
    }
    if map.get("default") == Some(&Value::Null) {
        map.remove("default");
    }
    if map.len() > 1 && *budget > 0 {
        if let Some(Value::String(reference)) = map.get("$ref").cloned() {
            let target = root.lookup(&reference).ok().map(Node::value);
            // A copy is paid for by its size, so inlining cannot write more than the budget.
            let affordable = target.and_then(|t| nodes_within(t, *budget));
            if let (Some(Value::Object(target)), Some(cost)) = (target, affordable) {
                *budget -= cost;
                let mut merged: Map<String, Value> = target.clone();
                map.remove("$ref");
                merged.extend(std::mem::take(map));
                *map = merged;
                strictify(node, root, depth + 1, budget);
            }
        }
    }
}

/// How many values `value` holds (itself included), when that is at most `limit`.
fn nodes_within(value: &Value, limit: usize) -> Option<usize> {
    let mut count = 0usize;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        count += 1;
        if count > limit {
            return None;
        }
        match v {
            Value::Object(m) => stack.extend(m.values()),
            Value::Array(a) => stack.extend(a.iter()),
            _ => {}
        }
    }
    Some(count)
}

/// A `format` strict mode does not take (`uri`, say) moved into the description, like the other
/// keywords it does not enforce: the model is told, the value is checked locally.
fn soften_formats(run: &mut Run, node: &mut Value, path: &Pointer, depth: usize) {
    let Value::Object(map) = node else { return };
    if depth > MAX_DEPTH {
        return;
    }
    let unsupported = map
        .get("format")
        .is_some_and(|f| policy("format", f) == Policy::Move);
    if unsupported {
        let mut moved = Map::new();
        if let Some(format) = map.remove("format") {
            moved.insert("format".into(), format);
        }
        run.describe(path, map, &moved);
    }
    for_each_child_mut(map, path, &mut |child, at| {
        soften_formats(run, child, at, depth + 1)
    });
}

/// A tuple (`prefixItems`, which strict mode does not take) sent as a list of its item schemas
/// (`items: {anyOf: [..]}`, or the one schema when all are alike), its item count kept, and the
/// positions moved into the description: the model is told the order, the provider holds it to
/// the item shapes, and the order is checked locally.
fn tuples_as_lists(run: &mut Run, node: &mut Value, path: &Pointer, depth: usize) {
    let Value::Object(map) = node else { return };
    if depth > MAX_DEPTH {
        return;
    }
    if let Some(Value::Array(prefix)) = map.get("prefixItems").cloned() {
        let mut distinct: Vec<Value> = Vec::new();
        for item in &prefix {
            if !distinct.contains(item) {
                distinct.push(item.clone());
            }
        }
        let items = match <[Value; 1]>::try_from(distinct) {
            Ok([only]) => only,
            Err(many) => serde_json::json!({ "anyOf": many }),
        };
        let mut moved = Map::new();
        if let Some(p) = map.remove("prefixItems") {
            moved.insert("prefixItems".into(), p);
        }
        map.insert("items".into(), items);
        run.describe(path, map, &moved);
    }
    for_each_child_mut(map, path, &mut |child, at| {
        tuples_as_lists(run, child, at, depth + 1)
    });
}

/// `from` read as `to` wherever `to` is not already there (`oneOf` as `anyOf`: what both
/// OpenAI's and Anthropic's SDKs do; the model cannot be held to "exactly one", and the value is
/// checked locally anyway).
fn rename(node: &mut Value, from: &str, to: &str, depth: usize) {
    let Value::Object(map) = node else { return };
    if depth > MAX_DEPTH {
        return;
    }
    if !map.contains_key(to) {
        if let Some(branches) = map.remove(from) {
            map.insert(to.into(), branches);
        }
    }
    for_each_child_mut(map, &Pointer::root(), &mut |child, _| {
        rename(child, from, to, depth + 1)
    });
}

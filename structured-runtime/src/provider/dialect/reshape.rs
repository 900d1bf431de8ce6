//! Shapes a target cannot express, sent in a shape it can and read back before anything else
//! sees the answer. OpenAI strict mode closes every object (`additionalProperties: false`) and
//! takes only an object at the root, so:
//!
//! - a map (an object whose keys are data: `additionalProperties` a schema) is sent as a list of
//!   `{"key": .., "value": ..}` entries, `propertyNames` becoming the key's schema;
//! - a root that is not an object (an enum with data, a newtype, a list) is sent as the one
//!   property of an object.
//!
//! [`Reshape`] says what was done; [`Reshape::read_back`] turns an answer in the sent shape
//! into the shape of the schema as written, so the user sees a map and their own root. A key
//! given twice in the entries is a violation at the second entry's `key`, never a silent choice.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Map, Value};

use super::pass::for_each_child_with_path_mut;
use crate::read::Change;
use crate::schema::node::{Additional, JsonType, Node, MAX_DEPTH};
use crate::schema::validate::{Path, Rule, Violation, Violations};
use crate::schema::Pointer;

/// How the schema sent differs in shape from the schema as written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Reshape {
    /// The root was sent as the one property of an object, under this key.
    pub root_key: Option<String>,
    /// Where maps were sent as lists of `{key, value}` entries (in the schema as sent).
    pub entries: Vec<Pointer>,
}

/// The definitions name the root takes when it refers to itself and is wrapped.
const ROOT_DEF: &str = "root";

impl Reshape {
    /// No change: the schema goes as written.
    pub const fn as_written() -> Self {
        Reshape {
            root_key: None,
            entries: Vec::new(),
        }
    }

    /// Whether the schema went as written.
    pub fn is_empty(&self) -> bool {
        self.root_key.is_none() && self.entries.is_empty()
    }

    /// `value`, written for the schema as sent, in the shape of `schema` (the schema as written):
    /// the root unwrapped, each list of entries a map again. A value already in that shape is
    /// left as it is. A key repeated in a list of entries is a violation (the value comes back
    /// with it, its lists unchanged where the keys repeat).
    pub fn read_back(&self, schema: &Value, value: Value) -> Result<Value, (Value, Violations)> {
        self.read_back_noting(schema, value).0
    }

    /// [`Reshape::read_back`], and the places the value was already written in the schema's
    /// own shape rather than the shape sent (a map as a plain object, a root not wrapped): read
    /// as they are, but not what the enforced schema allows, so never as written.
    pub fn read_back_noting(
        &self,
        schema: &Value,
        mut value: Value,
    ) -> (Result<Value, (Value, Violations)>, Vec<Pointer>) {
        let mut as_written = Vec::new();
        if let Some(key) = &self.root_key {
            match &mut value {
                Value::Object(map) if map.len() == 1 && map.contains_key(key) => {
                    if let Some(inner) = map.remove(key) {
                        value = inner;
                    }
                }
                _ => as_written.push(Pointer::root()),
            }
        }
        if self.entries.is_empty() {
            return (Ok(value), as_written);
        }
        let mut violations = Vec::new();
        maps_from_entries(
            Node::root(schema),
            &mut value,
            &Path::root(),
            &mut violations,
            &mut as_written,
        );
        let result = match violations.is_empty() {
            true => Ok(value),
            false => Err((value, Violations(violations))),
        };
        (result, as_written)
    }
}

/// A stream's changes, made to the value in the shape sent, turned into changes to the value
/// in the schema's own shape ([`Reshape::read_back`], change by change): the root unwrapped, a
/// list of `{key, value}` entries shown as a map, each entry's value under its key once the key
/// is complete. Costs what the changes cost, not the size of the value, except where a map sits
/// under an `anyOf` (that value is read back whole once, when it completes).
///
/// An entry whose key repeats an earlier one is not shown (the final reading reports it).
pub struct ReadBackStream<'s> {
    reshape: &'s Reshape,
    schema: &'s Value,
    /// Entries whose key is complete, by their pointer as sent: the key, or `None` when it
    /// repeats an earlier entry's.
    keys: HashMap<Pointer, Option<String>>,
    /// The keys of each map shown so far, by its pointer in the schema's shape.
    shown: HashMap<Pointer, HashSet<String>>,
    /// Changes inside entries whose key is not complete yet.
    waiting: HashMap<Pointer, Vec<Change>>,
    /// Entries whose value completed before their key.
    values_done: HashSet<Pointer>,
}

/// Where a pointer in the shape sent lands in the schema's shape.
enum Place<'s> {
    /// At this pointer; its schema node, when known.
    At(Pointer, Option<Node<'s>>),
    /// The key of the entry at this pointer (sent), in the map at the second (written).
    Key(Pointer, Pointer),
    /// Inside the entry at this pointer (sent), whose key is not known yet.
    Waiting(Pointer),
    /// Under an `anyOf` at this pointer (sent, then written), shown whole once complete.
    Branch(Pointer, Pointer, Node<'s>),
    /// Not shown (the wrapper of a wrapped root, an entry being opened, a repeated key's value).
    Hidden,
}

impl<'s> ReadBackStream<'s> {
    /// A stream read back from `reshape`'s shape into `schema`'s (the schema as written).
    pub fn new(reshape: &'s Reshape, schema: &'s Value) -> Self {
        ReadBackStream {
            reshape,
            schema,
            keys: HashMap::new(),
            shown: HashMap::new(),
            waiting: HashMap::new(),
            values_done: HashSet::new(),
        }
    }

    /// The changes of one chunk (`changes`, then the values it `completed`, as
    /// [`crate::read::StreamProgress`] gives them) applied to `value`, the value so far in the
    /// schema's own shape; `sent` is the value so far in the shape sent (its changes applied).
    /// Returns the pointers completed, in the schema's shape.
    pub fn apply(
        &mut self,
        changes: &[Change],
        completed: &[Pointer],
        sent: &Value,
        value: &mut Value,
    ) -> Vec<Pointer> {
        for change in changes {
            self.change(change.clone(), value);
        }
        let mut out = Vec::new();
        for at in completed {
            match self.place(at) {
                Place::At(written, _) => out.push(written),
                Place::Key(entry, map) => {
                    let key = at.get(sent).and_then(Value::as_str).unwrap_or_default();
                    let seen = self.shown.entry(map.clone()).or_default();
                    let fresh = seen.insert(key.to_owned());
                    self.keys
                        .insert(entry.clone(), fresh.then(|| key.to_owned()));
                    for change in self.waiting.remove(&entry).unwrap_or_default() {
                        self.change(change, value);
                    }
                    // A key whose value completed before it did: the value completes now.
                    if self.values_done.remove(&entry) && fresh {
                        out.push(map.key(key));
                    }
                }
                Place::Waiting(entry) if at == &entry.key("value") => {
                    self.values_done.insert(entry);
                }
                Place::Branch(sent_at, written, node) if &sent_at == at => {
                    if let Some(whole) = at.get(sent) {
                        let mut whole = whole.clone();
                        maps_from_entries(
                            node,
                            &mut whole,
                            &Path::root(),
                            &mut Vec::new(),
                            &mut Vec::new(),
                        );
                        Change::Set {
                            at: written.clone(),
                            value: whole,
                        }
                        .apply(value);
                        out.push(written);
                    }
                }
                _ => {}
            }
        }
        out
    }

    fn change(&mut self, change: Change, value: &mut Value) {
        let at = match &change {
            Change::Set { at, .. } | Change::Append { at, .. } => at.clone(),
        };
        match self.place(&at) {
            Place::At(written, node) => {
                let translated = match change {
                    // A map opens as an object, not as the list of entries it was sent as.
                    Change::Set {
                        value: Value::Array(items),
                        ..
                    } if items.is_empty() && node.is_some_and(|n| is_map(n.target())) => {
                        Change::Set {
                            at: written,
                            value: Value::Object(Map::new()),
                        }
                    }
                    Change::Set { value: new, .. } => Change::Set {
                        at: written,
                        value: new,
                    },
                    Change::Append { text, .. } => Change::Append { at: written, text },
                };
                translated.apply(value);
            }
            Place::Waiting(entry) => self.waiting.entry(entry).or_default().push(change),
            Place::Key(..) | Place::Branch(..) | Place::Hidden => {}
        }
    }

    /// Where `at` (a pointer into the value as sent) lands in the schema's shape.
    fn place(&self, at: &Pointer) -> Place<'s> {
        let mut segments = at.segments();
        let mut sent = Pointer::root();
        if let Some(key) = &self.reshape.root_key {
            match segments.next() {
                Some(first) if first == key.as_str() => sent.push(key),
                _ => return Place::Hidden,
            }
        }
        let mut written = Pointer::root();
        let mut node = Some(Node::root(self.schema));
        while let Some(segment) = segments.next() {
            let Some(here) = node.map(Node::target) else {
                // No schema below: the rest goes as written.
                written.push(&segment);
                sent.push(&segment);
                continue;
            };
            if here.too_deep() {
                return Place::Hidden;
            }
            if here.has("anyOf") {
                return Place::Branch(sent, written, here);
            }
            sent.push(&segment);
            if is_map(here) {
                let entry = sent.clone();
                let values = match here.additional() {
                    Additional::Schema(values) => Some(values),
                    _ => None,
                };
                match segments.next().as_deref() {
                    Some("key") => return Place::Key(entry, written),
                    Some("value") => match self.keys.get(&entry) {
                        Some(Some(key)) => {
                            written.push(key);
                            sent.push("value");
                            node = values;
                        }
                        Some(None) => return Place::Hidden,
                        None => return Place::Waiting(entry),
                    },
                    _ => return Place::Hidden,
                }
                continue;
            }
            written.push(&segment);
            node = match segment.parse::<usize>() {
                Ok(i) if !here.types().contains(JsonType::Object) || here.has("items") => {
                    here.item(i)
                }
                _ => here.property(&segment).or(match here.additional() {
                    Additional::Schema(values) => Some(values),
                    _ => None,
                }),
            };
        }
        match node.map(Node::target) {
            // A value choosing among branches is shown whole, once complete.
            Some(here) if here.has("anyOf") => Place::Branch(sent, written, here),
            _ => Place::At(written, node),
        }
    }
}

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
    let value = if refers_to_root(&inner, 0) {
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

fn refers_to_root(node: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match node {
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| (k == "$ref" && v.as_str() == Some("#")) || refers_to_root(v, depth + 1)),
        Value::Array(items) => items.iter().any(|v| refers_to_root(v, depth + 1)),
        _ => false,
    }
}

fn point_root_refs(node: &mut Value, target: &str, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match node {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if k == "$ref" && v.as_str() == Some("#") {
                    *v = Value::from(target);
                } else {
                    point_root_refs(v, target, depth + 1);
                }
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| point_root_refs(v, target, depth + 1)),
        _ => {}
    }
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
    for_each_child_with_path_mut(map, path, &mut |child, at| {
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

/// Turns each list of entries at a map's place in `value` back into an object, walking the
/// schema as written beside the value.
/// `as_written` gets each map found already written as an object.
fn maps_from_entries(
    node: Node<'_>,
    value: &mut Value,
    path: &Path<'_>,
    out: &mut Vec<Violation>,
    as_written: &mut Vec<Pointer>,
) {
    if node.too_deep() {
        return;
    }
    let node = node.target();
    if let Some(branches) = node.any_of() {
        if let Some(branch) = Node::branch_for(branches, value) {
            maps_from_entries(branch, value, path, out, as_written);
        }
        return;
    }
    match value {
        Value::Array(items) if is_map(node) => {
            if let Some(map) = entries_to_map(items, path, out) {
                *value = Value::Object(map);
                if let Value::Object(map) = value {
                    members_from_entries(node, map, path, out, as_written);
                }
            }
        }
        Value::Object(map) => {
            if is_map(node) {
                as_written.push(path.to_pointer());
            }
            members_from_entries(node, map, path, out, as_written);
        }
        Value::Array(items) => {
            for (i, child) in items.iter_mut().enumerate() {
                if let Some(schema) = node.item(i) {
                    maps_from_entries(schema, child, &path.index(i), out, as_written);
                }
            }
        }
        _ => {}
    }
}

/// [`maps_from_entries`] on each member of an object.
fn members_from_entries(
    node: Node<'_>,
    map: &mut Map<String, Value>,
    path: &Path<'_>,
    out: &mut Vec<Violation>,
    as_written: &mut Vec<Pointer>,
) {
    let additional = match node.additional() {
        Additional::Schema(values) => Some(values),
        _ => None,
    };
    for (key, child) in map.iter_mut() {
        if let Some(schema) = node.property(key).or(additional) {
            maps_from_entries(schema, child, &path.key(key), out, as_written);
        }
    }
}

fn is_map(node: Node<'_>) -> bool {
    !node.has("properties") && matches!(node.additional(), Additional::Schema(_))
}

/// The map a list of `{key, value}` entries spells; `None` (the list left as written, for the
/// schema check to report) when an item is not such an entry or a key repeats, which is a
/// violation at the repeating entry's `key`.
fn entries_to_map(
    items: &mut [Value],
    path: &Path<'_>,
    out: &mut Vec<Violation>,
) -> Option<Map<String, Value>> {
    let mut keys: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut repeated = false;
    for (i, item) in items.iter().enumerate() {
        let entry = item
            .as_object()
            .filter(|e| e.len() == 2 && e.contains_key("value"));
        let key = entry.and_then(|e| e.get("key")).and_then(Value::as_str)?;
        if !keys.insert(key) {
            repeated = true;
            out.push(Violation {
                path: path.index(i).key("key").to_pointer(),
                rule: Rule::UniqueItems,
                expected: "a key no earlier entry has".into(),
                found: format!("{:?} again", key),
            });
        }
    }
    if repeated {
        return None;
    }
    let mut map = Map::new();
    for item in items.iter_mut() {
        if let Value::Object(mut entry) = item.take() {
            if let (Some(Value::String(key)), Some(value)) =
                (entry.remove("key"), entry.remove("value"))
            {
                map.insert(key, value);
            }
        }
    }
    Some(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::dialect::{lower_reporting, SchemaTarget};

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

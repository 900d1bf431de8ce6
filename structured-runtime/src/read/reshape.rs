//! Answers read back from the shape they were sent in. A target that cannot express a shape
//! (OpenAI strict mode: a map, a root that is not an object) is sent another one by the
//! provider's lowering, which says what it did in a [`Reshape`]; [`Reshape::read_back`] turns an
//! answer in the sent shape into the shape of the schema as written, so the user sees a map and
//! their own root, and [`ReadBackStream`] does it change by change. A key given twice in the
//! entries is a violation at the second entry's `key`, never a silent choice.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use crate::read::Change;
use crate::schema::node::{Additional, JsonType, Node};
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
    /// Under an `anyOf` (a `oneOf` read as one, [`Node::any_of`]) at this pointer (sent, then
    /// written), shown whole once complete.
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
            if here.any_of().is_some() {
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
            Some(here) if here.any_of().is_some() => Place::Branch(sent, written, here),
            _ => Place::At(written, node),
        }
    }
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

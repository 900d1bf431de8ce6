//! A value held whole while a long answer is read in parts (an item, or a member outside the
//! parts), read guided by its schema so that bulk the schema refuses whatever it holds is not
//! held: a list where the schema takes no list (a number's place), an object where it takes
//! neither an object nor a list (which coercion could wrap it in), any container in a member an
//! object does not declare and allows none of. Each is refused (or dropped) the same whatever its
//! contents, so it is held as an empty one of its kind, its size noted, and the reports that
//! preview it are given its size back ([`StandIns::restore`]).
//!
//! Guidance follows only schemas that judge a member by its declared property (or
//! `additionalProperties`) alone and an item by `items` alone; anywhere else the value is held
//! as read. Coercion moves no such container (it wraps only what is not a list, where a list is
//! taken), so a report on a stand-in is at the place it was noted; and the text read has each
//! key once (the strict reader refuses a repeat, the repairer keeps the last), so no other value
//! takes a stand-in's place.
//!
//! A value's skeleton ([`Skeleton`]: its scalars and empty containers, at the top only the
//! members named) is what a choice among an `anyOf`'s variants looks at, read from its text.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::read::coerce::Recovery;
use crate::schema::checks::asserts_nothing;
use crate::schema::node::{JsonType, Node};
use crate::schema::validate::{preview_list, preview_object, Violation};
use crate::schema::{Path, Pointer};

/// What a schema judging one value alone may assert for its value to be read guided: what each
/// member and item is, how many, and what a scalar is.
const GUIDED: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "$defs",
    "definitions",
    "$schema",
];

/// The visits of a `Visitor` building a `serde_json::Value` that take a scalar as the `Value`
/// it is (for the readers below the schema's guidance, one shape of code).
macro_rules! scalars_as_values {
    () => {
        fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<serde_json::Value, E> {
            Ok(serde_json::Value::Bool(b))
        }
        fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<serde_json::Value, E> {
            Ok(serde_json::Value::from(n))
        }
        fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<serde_json::Value, E> {
            Ok(serde_json::Value::from(n))
        }
        fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<serde_json::Value, E> {
            Ok(serde_json::Value::from(n))
        }
        fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<serde_json::Value, E> {
            Ok(serde_json::Value::String(s.to_owned()))
        }
        fn visit_string<E: serde::de::Error>(self, s: String) -> Result<serde_json::Value, E> {
            Ok(serde_json::Value::String(s))
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<serde_json::Value, E> {
            Ok(serde_json::Value::Null)
        }
    };
}
pub(crate) use scalars_as_values;

/// The visits of a `Visitor` walking a value for its shape alone that pass over a scalar (for
/// the walks that count or seek, one shape of code).
macro_rules! scalars_passed {
    () => {
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
            Ok(())
        }
    };
}
pub(crate) use scalars_passed;

/// Whether the schema at `node` takes any value and coercion leaves any value as it is (it
/// asserts nothing: `{}`, `true`, or words about the value only). A member of an object on the
/// way that such a node judges is kept as its text, not as a value (`read::parts`).
pub(crate) fn free(node: Option<Node<'_>>) -> bool {
    node.is_some_and(|node| match node.value() {
        Value::Bool(true) => true,
        Value::Object(map) => map.keys().all(|k| asserts_nothing(k)),
        _ => false,
    })
}

/// The containers held as empty stand-ins: where each is, and the preview of what it held.
#[derive(Debug, Default)]
pub(crate) struct StandIns(HashMap<Pointer, String>);

impl StandIns {
    /// Gives each report previewing a stand-in as empty the preview of what it held: a
    /// violation's `found`, a change's `was`.
    pub(crate) fn restore(&self, violations: &mut [Violation], recoveries: &mut [Recovery]) {
        if self.0.is_empty() {
            return;
        }
        let held = |at: &Pointer, shown: &mut String| {
            if let Some(preview) = self.0.get(at) {
                if *shown == preview_list(0) || *shown == preview_object(0) {
                    shown.clone_from(preview);
                }
            }
        };
        for v in violations {
            held(&v.path, &mut v.found);
        }
        for r in recoveries {
            held(&r.path, &mut r.was);
        }
    }

    /// Forgets every stand-in (its reports are given back).
    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }
}

/// The longest JSON text (in bytes) held as one `Value` where the schema judges a value only
/// whole, by [`parse_value_json`](crate::read::parts::parse_value_json) and by a stream reader
/// keeping no value: 512 KiB, as long as the longest answers models write (128 k tokens of
/// about four bytes). A `Value` takes about twenty times the text of small members, and up to
/// about forty-five times for objects of one member each (the costliest shape a byte): a value
/// held whole costs at most some 40 MB (41 MB measured for one-member objects, `structured
/// check` on 5.5 MB of them); a longer one is refused as it is read, before it costs more.
pub const MAX_WHOLE: usize = 512 << 10;

/// How many more values and keys (each scalar, container and member's name one) may be held
/// whole: a value whose reading would pass it is refused as too large to hold, and the budget
/// says so ([`Budget::spent_at`]). Held, each costs from 32 bytes (an item of a list) to about
/// 100 (a member with its name and its slot in the map); written, at least two bytes
/// ([`Budget::for_text`]).
#[derive(Debug)]
pub(crate) struct Budget {
    full: usize,
    left: Cell<usize>,
    spent: Cell<bool>,
    /// Where the value refused starts (the item or member held), once told.
    at: RefCell<Option<Pointer>>,
}

impl Budget {
    /// A budget no value whose JSON text is at most `bytes` long can spend: a value holding `n`
    /// values and keys is written in at least `2n - 1` bytes (one per scalar, two per container
    /// or key, one between two members or items, one after a key), so such a value holds at
    /// most `bytes / 2 + 1`.
    pub(crate) fn for_text(bytes: usize) -> Self {
        let full = values_within(bytes);
        Budget {
            full,
            left: Cell::new(full),
            spent: Cell::new(false),
            at: RefCell::new(None),
        }
    }

    /// The whole budget again, for the next value (the one held before is dropped).
    pub(crate) fn refill(&self) {
        self.left.set(self.full);
    }

    /// Where a value was refused for passing the budget (its place when told, else the root).
    pub(crate) fn spent_at(&self) -> Option<Pointer> {
        self.spent
            .get()
            .then(|| self.at.borrow().clone().unwrap_or_else(Pointer::root))
    }

    /// The value at `path` was being held when the budget ran out (the first place told is
    /// kept).
    pub(crate) fn spent_in(&self, path: &Path<'_>) {
        if self.spent.get() && self.at.borrow().is_none() {
            *self.at.borrow_mut() = Some(path.to_pointer());
        }
    }

    /// One more value held, or the error that stops the reading.
    fn take<E: de::Error>(&self) -> Result<(), E> {
        match self.left.get().checked_sub(1) {
            Some(left) => {
                self.left.set(left);
                Ok(())
            }
            None => {
                self.spent.set(true);
                Err(E::custom("a value too large to hold whole"))
            }
        }
    }
}

/// The most values and keys a JSON text of `bytes` bytes holds ([`Budget::for_text`]).
pub(crate) fn values_within(bytes: usize) -> usize {
    bytes / 2 + 1
}

/// A value read whole as `serde_json` reads it into a `Value`, each value it holds taken from
/// the budget.
pub(crate) struct Counted<'b>(pub(crate) &'b Budget);

impl<'de> DeserializeSeed<'de> for Counted<'_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        self.0.take()?;
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Counted<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    scalars_as_values!();
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(item) = seq.next_element_seed(Counted(self.0))? {
            out.push(item);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            self.0.take()?;
            let value = map.next_value_seed(Counted(self.0))?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

/// A value walked and counted against the budget, nothing of it built.
struct Count<'b>(&'b Budget);

impl<'de> DeserializeSeed<'de> for Count<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        self.0.take()?;
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Count<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    scalars_passed!();
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Count(self.0))?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key::<IgnoredAny>()?.is_some() {
            self.0.take()?;
            map.next_value_seed(Count(self.0))?;
        }
        Ok(())
    }
}

/// Whether `text` may be held whole under a limit of `max_whole` bytes: when it is no longer,
/// or when it is one JSON value holding no more values and keys than a text that long can (a
/// long string is one value, about its own size held). Counted without being built; `None`
/// for a longer text that is not one JSON value (its reader judges it).
pub(crate) fn holds_within(text: &[u8], max_whole: usize) -> Option<bool> {
    if text.len() <= max_whole {
        return Some(true);
    }
    let budget = Budget::for_text(max_whole);
    let mut de = serde_json::Deserializer::from_slice(text);
    match Count(&budget).deserialize(&mut de).and_then(|()| de.end()) {
        Ok(()) => Some(true),
        Err(_) if budget.spent.get() => Some(false),
        Err(_) => None,
    }
}

/// A value read guided by `node` (`None`: held as read), at `path`, noting its stand-ins, each
/// value it holds taken from `budget`.
pub(crate) struct Held<'n, 'p, 'r> {
    pub(crate) node: Option<Node<'n>>,
    pub(crate) path: Path<'p>,
    pub(crate) noted: &'r RefCell<StandIns>,
    pub(crate) budget: &'r Budget,
    /// Whether coercion may rename member `key` of an object at this node to a declared name
    /// (then it is not a member the object refuses).
    pub(crate) renames: &'r dyn Fn(Node<'n>, &str) -> bool,
}

/// What guides a container's reading: its schema's words that matter here, read in one pass
/// over the schema (no lookups: this is asked for every container held).
#[derive(Clone, Copy)]
struct Guide<'n> {
    node: Node<'n>,
    types: Option<&'n Value>,
    properties: Option<&'n Map<String, Value>>,
    additional: Option<&'n Value>,
    items: Option<&'n Value>,
}

/// What guides the value at `node`: the node itself, through a reference written alone; `None`
/// where something else might judge the value (or look inside it).
fn guide(node: Option<Node<'_>>) -> Option<Guide<'_>> {
    let node = node?;
    match read_guide(node)? {
        (guide, false) => Some(guide),
        (_, true) => {
            let target = read_guide(node.resolve().ok()?)?.0;
            target.node.reference().is_none().then_some(target)
        }
    }
}

/// [`guide`] at `node` as written, and whether it is a reference (followed when it asserts
/// nothing beside).
fn read_guide(node: Node<'_>) -> Option<(Guide<'_>, bool)> {
    let mut guide = Guide {
        node,
        types: None,
        properties: None,
        additional: None,
        items: None,
    };
    let (mut reference, mut asserts) = (false, false);
    for (key, value) in node.map()? {
        match key.as_str() {
            "$ref" => reference = true,
            "type" => guide.types = Some(value),
            "properties" => guide.properties = Some(value.as_object()?),
            "additionalProperties" => guide.additional = Some(value),
            "items" => guide.items = Some(value),
            "required" => {}
            "$defs" | "definitions" | "$schema" => continue,
            key if GUIDED.contains(&key) => {}
            key if asserts_nothing(key) => continue,
            _ => return None,
        }
        asserts |= key != "$ref";
    }
    // Beside a reference, a word that asserts is judged too: not followed.
    match reference {
        true if asserts => None,
        _ => Some((guide, reference)),
    }
}

impl<'n> Guide<'n> {
    /// Whether `type` is declared (well formed) and names none of `kinds`.
    fn excludes(&self, kinds: &[&str]) -> bool {
        let known = |t: &str| JsonType::from_name(t).is_some() && !kinds.contains(&t);
        match self.types {
            Some(Value::String(t)) => known(t),
            Some(Value::Array(ts)) => {
                !ts.is_empty() && ts.iter().all(|t| t.as_str().is_some_and(known))
            }
            _ => false,
        }
    }

    /// The schema of member `key`: its declared property's, else `additionalProperties`'
    /// (`Refused`: it allows none the object does not declare).
    fn member(&self, key: &str) -> Option<Below<'n>> {
        let declared = match self.properties {
            Some(p) if p.len() <= 8 => p.iter().find(|(name, _)| *name == key).map(|(_, v)| v),
            Some(p) => p.get(key),
            None => None,
        };
        if let Some(schema) = declared {
            return Some(Below::Guided(Some(self.node.child(schema))));
        }
        match self.additional {
            Some(Value::Bool(false)) => None,
            Some(schema @ Value::Object(_)) => Some(Below::Guided(Some(self.node.child(schema)))),
            _ => Some(Below::Guided(None)),
        }
    }

    /// The schema of every item (`items` as one schema).
    fn items(&self) -> Option<Node<'n>> {
        match self.items? {
            items @ (Value::Object(_) | Value::Bool(_)) => Some(self.node.child(items)),
            _ => None,
        }
    }
}

/// How a member or item is read below a guided node.
enum Below<'n> {
    Guided(Option<Node<'n>>),
    /// A member the object allows none of: any container in it is refused (or dropped) whole.
    Refused,
}

impl<'n> Held<'n, '_, '_> {
    fn below<'q>(&self, below: Below<'n>, path: Path<'q>) -> Held<'n, 'q, '_> {
        Held {
            node: match below {
                Below::Guided(node) => node,
                Below::Refused => None,
            },
            path,
            noted: self.noted,
            budget: self.budget,
            renames: self.renames,
        }
    }

    fn note(&self, preview: String) {
        self.noted
            .borrow_mut()
            .0
            .insert(self.path.to_pointer(), preview);
    }
}

impl<'de> DeserializeSeed<'de> for Held<'_, '_, '_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        match self.node {
            // Only a container asks what guides it (a scalar is held as read).
            Some(_) => {
                self.budget.take()?;
                de.deserialize_any(Guided {
                    held: self,
                    refused: false,
                })
            }
            None => Counted(self.budget).deserialize(de),
        }
    }
}

/// A member read below an object that allows none it does not declare: any container refused.
struct RefusedMember<'n, 'p, 'r>(Held<'n, 'p, 'r>);

impl<'de> DeserializeSeed<'de> for RefusedMember<'_, '_, '_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        self.0.budget.take()?;
        de.deserialize_any(Guided {
            held: self.0,
            refused: true,
        })
    }
}

struct Guided<'n, 'p, 'r> {
    /// Its node as written (a container finds what guides it, [`guide`]).
    held: Held<'n, 'p, 'r>,
    /// Every container here is refused whatever it holds.
    refused: bool,
}

impl<'n> Guided<'n, '_, '_> {
    /// Whether a container of `kind` is refused here whatever it holds (guided by `guide`).
    fn refuses(&self, guide: Option<&Guide<'n>>, kind: JsonType) -> bool {
        if self.refused {
            return true;
        }
        guide.is_some_and(|guide| match kind {
            // An object where a list is taken may be wrapped in one.
            JsonType::Object => guide.excludes(&["object", "array"]),
            _ => guide.excludes(&[kind.name()]),
        })
    }
}

impl<'de> Visitor<'de> for Guided<'_, '_, '_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    scalars_as_values!();
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let guide = guide(self.held.node);
        if self.refuses(guide.as_ref(), JsonType::Array) {
            let mut len = 0;
            while seq.next_element::<IgnoredAny>()?.is_some() {
                len += 1;
            }
            if len > 0 {
                self.held.note(preview_list(len));
            }
            return Ok(Value::Array(Vec::new()));
        }
        let items = guide.as_ref().and_then(Guide::items);
        let mut out = Vec::new();
        while let Some(item) = {
            let path = self.held.path.index(out.len());
            seq.next_element_seed(self.held.below(Below::Guided(items), path))?
        } {
            out.push(item);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let guide = guide(self.held.node);
        if self.refuses(guide.as_ref(), JsonType::Object) {
            let mut len = 0;
            while map.next_key::<IgnoredAny>()?.is_some() {
                map.next_value::<IgnoredAny>()?;
                len += 1;
            }
            if len > 0 {
                self.held.note(preview_object(len));
            }
            return Ok(Value::Object(Map::new()));
        }
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            self.held.budget.take()?;
            let path = self.held.path.key(&key);
            let below = match &guide {
                None => Below::Guided(None),
                Some(guide) => match guide.member(&key) {
                    Some(below) => below,
                    None if !(self.held.renames)(guide.node, &key) => Below::Refused,
                    None => Below::Guided(None),
                },
            };
            let value = match below {
                Below::Refused => {
                    map.next_value_seed(RefusedMember(self.held.below(Below::Refused, path)))?
                }
                below => map.next_value_seed(self.held.below(below, path))?,
            };
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

/// A value as a choice of variant sees it: its scalars, its containers empty and, at the top,
/// only the members whose names `keep` keeps (a choice of variant looks at nothing else).
pub(crate) struct Skeleton<'k> {
    /// Which members of the top object are kept (`None`: none).
    pub(crate) keep: Option<&'k dyn Fn(&str) -> bool>,
}

impl<'de> DeserializeSeed<'de> for Skeleton<'_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Skeleton<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    scalars_as_values!();
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Value::Array(Vec::new()))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            match self.keep {
                Some(keep) if keep(&key) => {
                    let value = map.next_value_seed(Skeleton { keep: None })?;
                    out.insert(key, value);
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counted(text: &str, budget: &Budget) -> Option<Value> {
        let mut de = serde_json::Deserializer::from_str(text);
        Counted(budget).deserialize(&mut de).ok()
    }

    #[test]
    fn a_value_is_held_within_the_budget_of_its_text_and_refused_past_a_shorter_one() {
        for text in [
            "1",
            "[]",
            "{}",
            r#"{"":1}"#,
            "[1,2,3]",
            r#"[[],[[]],{"a":{"b":[1,{}]}}]"#,
            r#"{"a":1,"b":[true,null],"c":{"d":"e"}}"#,
            &format!("[{}]", vec!["0"; 1000].join(",")),
            &format!("[{}]", vec!["{\"\":[]}"; 300].join(",")),
        ] {
            let expected: Value = serde_json::from_str(text).unwrap();
            // Whatever its shape, its own length is budget enough (written compactly, a value
            // of n values and keys takes at least 2n - 1 bytes).
            let budget = Budget::for_text(text.len());
            assert_eq!(counted(text, &budget).as_ref(), Some(&expected), "{text}");
            assert_eq!(budget.spent_at(), None);
            // A quarter of it is not, past a few values: the reading stops there, and says so.
            if text.len() > 8 {
                let budget = Budget::for_text(text.len() / 4);
                assert_eq!(counted(text, &budget), None, "{text}");
                assert_eq!(budget.spent_at(), Some(Pointer::root()));
            }
        }
        // Refilled for each value: the budget is what one value may hold.
        let budget = Budget::for_text(8);
        assert!(counted("[1,2,3]", &budget).is_some());
        assert!(counted("[1,2,3]", &budget).is_none());
        budget.refill();
        assert!(counted("[1,2,3]", &budget).is_some());
    }
}

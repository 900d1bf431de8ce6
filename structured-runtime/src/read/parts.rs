//! Reading a long answer in parts: the value as its JSON text, in memory about three times the
//! answer, where the schema lets its long lists be judged an item at a time.
//!
//! A list is judged an item at a time when its schema asserts only what each item is (`items`)
//! and how many there may be (`minItems`, `maxItems`), and it is the root or is reached from
//! the root through declared `properties` of objects that assert only what their keys and their
//! number may be. Each item is then judged by the validator of record against `items` alone
//! (its `$ref`s resolved in the whole document), and what is left of the value once its lists
//! are emptied against the schema without them.
//!
//! The steps are those of every reading ([`crate::parse_value`]): the same candidates, the same
//! repairs, the same coercion and the same verdicts of the validator of record, so the text,
//! provenance, warnings and violations are what `parse_value` gives (a differential test holds
//! it to that). What differs is how a candidate is judged: its JSON is repaired into text
//! ([`crate::read::repair::repair_json`]), then read once, an item at a time; each item is
//! judged (and, if it does not fit, fitted) alone and written out, and only what is outside the
//! lists (the rest) is held as a value. A candidate's memory is then its repaired text, the text
//! written and the rest, not a `Value` of the whole answer (about twenty times the text for an
//! answer of many small objects).

use std::cell::{Cell, RefCell};
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::read::coerce::{coerce, coerce_at, CoercePolicy, Recovery};
use crate::read::extract::Candidate;
use crate::read::mode::StructuredOutputMode;
use crate::read::parse::{
    as_text_refused, object_root, parse_value, repaired_as_allowed, value_from_json_text, Attempt,
    Judged, KeptNumbers, ParseError, ParseOptions, Parsed, Target, Unjudged, Untyped, Verdict,
};
use crate::read::repair::{inexact_number, repair_json, Repair, Repaired};
use crate::read::strict_de;
use crate::read::Answer;
use crate::read::Reshape;
use crate::schema::node::Node;
use crate::schema::parts::Parts;
use crate::schema::validate::{Violation, Violations, MAX_VIOLATIONS};
use crate::schema::{Path, Pointer, ResponseSchema};

/// [`parse_value`], the value given as its compact JSON text (as `serde_json` writes it), read
/// in parts where the schema allows: in memory about three times the answer when its bulk is in
/// lists the schema describes item by item (see the [module documentation](self)); otherwise
/// through a whole `Value`, as `parse_value` reads it.
///
/// A refusal read in parts holds no value: `ParseError::Invalid`'s `value` and
/// `ParseError::Truncated`'s `partial` are then `null` (the violations and warnings are all there).
///
/// ```
/// use serde_json::json;
/// use structured_runtime::read::parts::parse_value_json;
/// use structured_runtime::{ParseOptions, Provenance, ResponseSchema};
///
/// let schema = ResponseSchema::new("rows", json!({
///     "type": "object",
///     "properties": {"rows": {"type": "array", "items": {"type": "integer"}}},
///     "required": ["rows"],
///     "additionalProperties": false
/// }))?;
/// let parsed = parse_value_json("{rows: [1, '2', 3,]}", &schema, &ParseOptions::default()).unwrap();
/// assert_eq!(parsed.value, r#"{"rows":[1,2,3]}"#);
/// assert_eq!(parsed.provenance, Provenance::Recovered);
/// # Ok::<(), structured_runtime::SchemaError>(())
/// ```
pub fn parse_value_json(
    text: &str,
    schema: &ResponseSchema,
    options: &ParseOptions,
) -> Result<Parsed<String>, ParseError> {
    let in_parts = schema
        .parts()
        .filter(|_| schema.markdown().is_none() && !options.coerce.required_only);
    if let Some(parts) = in_parts {
        let target = InParts {
            schema,
            parts,
            gave_up: Cell::new(false),
        };
        let result = value_from_json_text(&target, text, StructuredOutputMode::None, options);
        if !target.gave_up.get() {
            return result;
        }
    }
    parse_value(text, schema, options).map(|parsed| Parsed {
        value: parsed.value.to_string(),
        provenance: parsed.provenance,
        truncated: parsed.truncated,
        span: parsed.span,
        warnings: parsed.warnings,
        text_report: parsed.text_report,
    })
}

/// A schema's value read in parts, as its JSON text.
struct InParts<'s> {
    schema: &'s ResponseSchema,
    parts: &'s Parts,
    /// A candidate's lists could not be read in parts (coercion moved a list): the caller
    /// reads the answer whole instead.
    gave_up: Cell<bool>,
}

/// Where a value sits with respect to the lists read in parts.
#[derive(Clone, Copy, PartialEq)]
enum Role {
    /// List `n` itself.
    List(usize),
    /// An object on the way to a list.
    Way,
    /// Anywhere else: held whole.
    Plain,
}

/// Why a candidate was not read in parts.
enum Stop {
    /// Read exactly (no fitting) and not valid as written.
    Invalid,
    /// Coercion moved a list: read the answer whole.
    GaveUp,
}

/// A candidate's JSON read in parts.
struct Read {
    json: String,
    recoveries: Vec<Recovery>,
    violations: Vec<Violation>,
    /// Numbers kept as text where a string is asked for.
    as_text: Vec<Violation>,
}

impl InParts<'_> {
    fn role(&self, keys: &[String]) -> Role {
        let mut way = false;
        for list in 0..self.parts.len() {
            let at = self.parts.keys(list);
            if at == keys {
                return Role::List(list);
            }
            way |= at.len() > keys.len() && at.starts_with(keys);
        }
        if way {
            Role::Way
        } else {
            Role::Plain
        }
    }

    /// Reads `json` (one JSON value, as `serde_json` writes it) in parts: fitted by `fit`, or
    /// without it only when valid as written.
    fn read(
        &self,
        json: &str,
        repairs: &[Repair],
        fit: Option<&CoercePolicy>,
    ) -> Result<Read, Stop> {
        let walk = RefCell::new(Walk {
            target: self,
            document: self.schema.schema(),
            fit,
            kept: fit.and_then(|policy| KeptNumbers::of(repairs, policy)),
            lists: (0..self.parts.len()).map(|_| ListOut::default()).collect(),
            recoveries: Vec::new(),
            violations: Vec::new(),
            as_text: Vec::new(),
            stop: None,
        });
        let mut de = serde_json::Deserializer::from_str(json);
        let shape = Shape {
            walk: &walk,
            keys: Vec::new(),
        };
        let rest = shape
            .deserialize(&mut de)
            .and_then(|rest| de.end().map(|()| rest));
        let mut walk = walk.into_inner();
        if let Some(stop) = walk.stop.take() {
            return Err(stop);
        }
        // The text is JSON as serde_json wrote it: it always reads.
        let mut rest = rest.map_err(|_| Stop::GaveUp)?;
        walk.rest(&mut rest)?;
        if fit.is_none() {
            // Valid as written: the text is the value's own.
            return Ok(Read {
                json: json.to_owned(),
                recoveries: Vec::new(),
                violations: Vec::new(),
                as_text: Vec::new(),
            });
        }
        let mut out = Vec::with_capacity(json.len());
        walk.write(&rest, &mut Vec::new(), &mut out);
        Ok(Read {
            json: String::from_utf8(out).map_err(|_| Stop::GaveUp)?,
            recoveries: walk.recoveries,
            violations: walk.violations,
            as_text: walk.as_text,
        })
    }
}

/// A list's items as they are written out.
#[derive(Default)]
struct ListOut {
    /// The items' JSON, comma-separated.
    text: Vec<u8>,
    count: usize,
}

/// One candidate's reading in parts, as it goes.
struct Walk<'p> {
    target: &'p InParts<'p>,
    document: &'p Value,
    /// How items that do not fit are fitted; `None`: they are not (read exactly).
    fit: Option<&'p CoercePolicy>,
    kept: Option<KeptNumbers<'p>>,
    lists: Vec<ListOut>,
    recoveries: Vec<Recovery>,
    violations: Vec<Violation>,
    as_text: Vec<Violation>,
    stop: Option<Stop>,
}

impl Walk<'_> {
    /// Item `index` of list `list`: judged, fitted if it does not fit, and written out.
    fn item(&mut self, list: usize, index: usize, mut item: Value) -> Result<(), ()> {
        let parts = self.target.parts;
        let Some(node) = parts.item_node(self.document, list) else {
            self.stop = Some(Stop::GaveUp);
            return Err(());
        };
        let keys = parts.keys(list);
        at_keys(keys, &Path::root(), &mut |list_path| {
            let path = list_path.index(index);
            if let Some(kept) = &self.kept {
                let at = path.to_pointer();
                self.as_text.extend(kept.violations(&item, node, &at));
            }
            if parts.item_is_valid(list, &item) {
                return Ok(());
            }
            let Some(policy) = self.fit else {
                self.stop = Some(Stop::Invalid);
                return Err(());
            };
            let recoveries = coerce_at(&mut item, self.target.schema, node, &path, policy);
            if let Err(violations) = parts.check_item(self.document, list, &item, &path) {
                push_capped(&mut self.violations, violations);
            }
            self.recoveries.extend(recoveries);
            Ok(())
        })?;
        let out = match self.lists.get_mut(list) {
            Some(out) => out,
            None => return Err(()),
        };
        if self.fit.is_some() {
            if out.count > 0 {
                out.text.push(b',');
            }
            if serde_json::to_writer(&mut out.text, &item).is_err() {
                out.text.extend_from_slice(b"null");
            }
        }
        out.count += 1;
        Ok(())
    }

    /// The rest (the value with its lists emptied): judged, fitted if it does not fit, with
    /// any item coercion put into a list judged as an item; then the lists' counts.
    fn rest(&mut self, rest: &mut Value) -> Result<(), Stop> {
        let parts = self.target.parts;
        if let Some(kept) = &self.kept {
            self.as_text
                .extend(kept.violations(rest, Node::root(self.document), &Pointer::root()));
        }
        if !parts.rest_is_valid(rest) {
            let Some(policy) = self.fit else {
                return Err(Stop::Invalid);
            };
            let recoveries = coerce(rest, self.target.schema, policy);
            for list in 0..parts.len() {
                let at = pointer(parts.keys(list));
                let Some(Value::Array(items)) = at.get_mut(rest) else {
                    continue;
                };
                if items.is_empty() {
                    continue;
                }
                let moved = std::mem::take(items);
                if self.lists.get(list).is_some_and(|l| l.count > 0) {
                    return Err(Stop::GaveUp);
                }
                for (i, item) in moved.into_iter().enumerate() {
                    if self.item(list, i, item).is_err() {
                        return Err(self.stop.take().unwrap_or(Stop::GaveUp));
                    }
                }
            }
            if let Err(violations) = parts.check_rest(rest) {
                push_capped(&mut self.violations, violations);
            }
            self.recoveries.extend(recoveries);
        }
        for list in 0..parts.len() {
            let at = pointer(parts.keys(list));
            let count = self.lists.get(list).map_or(0, |l| l.count);
            match at.get(rest) {
                Some(Value::Array(_)) => {
                    if let Some(violation) = parts.check_count(list, count, at) {
                        if self.fit.is_none() {
                            return Err(Stop::Invalid);
                        }
                        push_capped(&mut self.violations, Violations(vec![violation]));
                    }
                }
                // Items were read where coercion left no list.
                _ if count > 0 => return Err(Stop::GaveUp),
                _ => {}
            }
        }
        Ok(())
    }

    /// Writes `value` (the rest, at `keys`) with each list's items where the list is.
    fn write(&self, value: &Value, keys: &mut Vec<String>, out: &mut Vec<u8>) {
        match (self.target.role(keys), value) {
            (Role::List(list), Value::Array(_)) => {
                out.push(b'[');
                if let Some(l) = self.lists.get(list) {
                    out.extend_from_slice(&l.text);
                }
                out.push(b']');
            }
            (Role::Way, Value::Object(map)) => {
                out.push(b'{');
                for (i, (key, member)) in map.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write_json(out, key);
                    out.push(b':');
                    keys.push(key.clone());
                    self.write(member, keys, out);
                    keys.pop();
                }
                out.push(b'}');
            }
            _ => write_json(out, value),
        }
    }
}

fn write_json<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    if serde_json::to_writer(&mut *out, value).is_err() {
        out.extend_from_slice(b"null");
    }
}

/// Adds `more` to `violations`, up to the cap on one value's violations.
fn push_capped(violations: &mut Vec<Violation>, more: Violations) {
    let room = MAX_VIOLATIONS.saturating_sub(violations.len());
    violations.extend(more.into_vec().into_iter().take(room));
}

/// The pointer of the value at `keys`.
fn pointer(keys: &[String]) -> Pointer {
    keys.iter().fold(Pointer::root(), |at, key| at.key(key))
}

/// Calls `f` with the path of the value at `keys` below `base`.
fn at_keys<R>(keys: &[String], base: &Path<'_>, f: &mut dyn FnMut(&Path<'_>) -> R) -> R {
    match keys.split_first() {
        None => f(base),
        Some((key, rest)) => at_keys(rest, &base.key(key), f),
    }
}

/// Reads a value at `keys`: a list's items one at a time, an object on the way to a list
/// member by member, anything else whole.
struct Shape<'w, 'p> {
    walk: &'w RefCell<Walk<'p>>,
    keys: Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Shape<'_, '_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        let role = self.walk.borrow().target.role(&self.keys);
        match role {
            Role::Plain => Value::deserialize(de),
            _ => de.deserialize_any(ShapeVisitor { shape: self, role }),
        }
    }
}

struct ShapeVisitor<'w, 'p> {
    shape: Shape<'w, 'p>,
    role: Role,
}

impl<'de> Visitor<'de> for ShapeVisitor<'_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Value, E> {
        Ok(Value::from(n))
    }
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Value, E> {
        Ok(Value::from(n))
    }
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Value, E> {
        Ok(Value::from(n))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let Role::List(list) = self.role else {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element::<Value>()? {
                items.push(item);
            }
            return Ok(Value::Array(items));
        };
        let mut index = 0;
        while let Some(item) = seq.next_element::<Value>()? {
            if self
                .shape
                .walk
                .borrow_mut()
                .item(list, index, item)
                .is_err()
            {
                return Err(de::Error::custom("not read in parts"));
            }
            index += 1;
        }
        Ok(Value::Array(Vec::new()))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = match self.role {
                Role::Way => {
                    let mut keys = self.shape.keys.clone();
                    keys.push(key.clone());
                    map.next_value_seed(Shape {
                        walk: self.shape.walk,
                        keys,
                    })?
                }
                _ => map.next_value::<Value>()?,
            };
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

impl Target for InParts<'_> {
    type Out = String;
    fn schema(&self) -> &ResponseSchema {
        self.schema
    }
    fn object_root(&self) -> bool {
        object_root(self.schema)
    }
    fn exact(&self, json: &str) -> Option<String> {
        if inexact_number(json).is_some() {
            return None;
        }
        let text = strict_de::json_from_str(json)?;
        self.read(&text, &[], None).ok().map(|read| read.json)
    }
    /// Why not is worked out on the whole value, only when the answer is refused.
    fn explained(&self, json: &str) -> Result<String, String> {
        match self.exact(json) {
            Some(text) => Ok(text),
            None => Untyped(self.schema).explained(json).map(|v| v.to_string()),
        }
    }
    fn explained_value(&self, value: &Value) -> Result<String, String> {
        Untyped(self.schema)
            .explained_value(value)
            .map(|v| v.to_string())
    }
    fn exact_value(&self, value: &Value) -> Option<String> {
        Untyped(self.schema)
            .exact_value(value)
            .map(|v| v.to_string())
    }
    fn accept(&self, value: Value) -> Result<String, (Value, Violations)> {
        Untyped(self.schema).accept(value).map(|v| v.to_string())
    }
    fn parse_answer(
        &self,
        answer: &Answer,
        mode: StructuredOutputMode,
        options: &ParseOptions,
        reshape: &Reshape,
    ) -> Result<Parsed<String>, ParseError> {
        Untyped(self.schema)
            .parse_answer(answer, mode, options, reshape)
            .map(|parsed| Parsed {
                value: parsed.value.to_string(),
                provenance: parsed.provenance,
                truncated: parsed.truncated,
                span: parsed.span,
                warnings: parsed.warnings,
                text_report: parsed.text_report,
            })
    }
    fn unchecked(&self, value: &Value) -> Option<String> {
        Some(value.to_string())
    }
    fn checked(&self, value: &Value) -> Option<String> {
        Untyped(self.schema).checked(value).map(|v| v.to_string())
    }
    fn judge<'c, 'a>(
        &self,
        candidate: &'c Candidate<'a>,
        options: &ParseOptions,
    ) -> Verdict<'c, 'a, String> {
        let Repaired {
            value: json,
            repairs,
            truncated,
        } = repaired_as_allowed(candidate, options, repair_json)?;
        let mut attempt = Attempt {
            candidate,
            repairs,
            truncated,
            recoveries: Vec::new(),
            partial: truncated.then_some(Value::Null),
        };
        let read = match self.read(&json, &attempt.repairs, Some(&options.coerce)) {
            Ok(read) => read,
            Err(_) => {
                self.gave_up.set(true);
                return Err(Unjudged::Unread);
            }
        };
        drop(json);
        attempt.recoveries = read.recoveries;
        if !read.violations.is_empty() {
            let violations = Violations(read.violations);
            let rank = (true, attempt.truncated, violations.len(), attempt.cost());
            return Ok((rank, Judged::Invalid(attempt, Value::Null, violations)));
        }
        if !read.as_text.is_empty() {
            return as_text_refused(attempt, Value::Null, read.as_text);
        }
        let rank = (false, false, attempt.cost(), 0);
        Ok((rank, Judged::Valid(attempt, read.json)))
    }
}

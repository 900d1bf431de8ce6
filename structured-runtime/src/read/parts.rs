//! Reading a long answer in parts: the value as its JSON text, in memory about three times the
//! answer, where the schema lets its long lists be judged an item at a time.
//!
//! A list is judged an item at a time when its schema asserts only what each item is (`items`)
//! and how many there may be (`minItems`, `maxItems`), and it is the root or is reached from
//! the root through declared `properties` of objects that assert only what their keys and their
//! number may be (or a tuple's positions, each judged by its own schema alone). Each item is
//! then judged by the validator of record against `items` alone (its `$ref`s resolved in the
//! whole document), and what is left of the value once its lists are emptied against the
//! schema without them. Maps and the members an object does not
//! declare are read the same way, a member at a time (`crate::schema::parts` says when); where
//! the object allows no such member, each is dropped with its warning (or refused) as it is
//! read. The way may pass through references (`$ref`, an `allOf` of one schema). Where it
//! passes an enum with data, or an `anyOf` the kind of value decides (an optional list), a first
//! look at the text finds the branch the value takes (as coercion will choose it), and that
//! branch's lists are read in parts. An untagged enum's variant is read so too when the others
//! refuse the value's names; a value refused there, or one another variant may take, is written
//! fitted and that text judged by a stream reader keeping no value, which weighs every variant
//! on the object's text as the check of the whole value weighs them (where the value holds a
//! member coercion keeps and the object refuses, it is read whole).
//!
//! What is read whole (a candidate these parts cannot read, an item of a list that is not read
//! in parts itself, what is left outside the lists) is held as a `Value` only up to
//! [`MAX_WHOLE`] bytes of its text ([`parse_value_json_within`] sets another limit): past it,
//! the answer is refused with [`ParseError::TooLarge`] as the reading reaches it, so a
//! reading's memory is bounded whatever the schema.
//!
//! The steps are those of every reading ([`crate::parse_value`]): the same candidates, the same
//! repairs, the same coercion and the same verdicts of the validator of record, so the text,
//! provenance, warnings and violations are what `parse_value` gives (a differential test holds
//! it to that). What differs is how a candidate is judged: its JSON is repaired into text
//! ([`crate::read::repair::repair_json`]), then read an item at a time, each item judged alone
//! and only what is outside the lists (the rest) held as a value. When every part fits as
//! written, that is all; else a second pass fits every part (as coercion fits a whole value) and
//! a third writes the fitted value. A candidate's memory is then its repaired text, the text
//! written and the rest, not a `Value` of the whole answer (about twenty times the text for an
//! answer of many small objects).

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::read::coerce::{coerce_at, may_rename, CoercePolicy, Listed, Recovery, RecoveryKind};
use crate::read::extract::Candidate;
use crate::read::held::{
    free, holds_within, scalars_as_values, scalars_passed, Budget, Counted, Held, Skeleton,
    StandIns,
};
use crate::read::mode::StructuredOutputMode;
use crate::read::parse::{
    invalid, judge_common, object_root, parse_value, repaired_as_allowed, valid,
    value_from_json_text, Attempt, KeptNumbers, ParseError, ParseOptions, Parsed, Target, Unjudged,
    Untyped, Verdict,
};
use crate::read::repair::{inexact_number, repaired_json, Repair, RepairError, Repaired};
use crate::read::stream::StreamReader;
use crate::read::strict_de;
use crate::read::Answer;
use crate::read::Reshape;
use crate::schema::node::Node;
use crate::schema::parts::{Holds, Parts, Point};
use crate::schema::validate::{
    preview_object, Preview, Rule, Violation, Violations, MAX_VIOLATIONS,
};
use crate::schema::validation::{canonical, repeat_of, undeclared_member};
use crate::schema::{Path, Pointer, ResponseSchema, Segment, Step};

/// [`parse_value`], the value given as its compact JSON text (as `serde_json` writes it), read
/// in parts where the schema allows: in memory about three times the answer when its bulk is in
/// lists the schema describes item by item (see the [module documentation](self)); otherwise
/// through a whole `Value`, as `parse_value` reads it.
///
/// A refusal read in parts holds no value: `ParseError::Invalid`'s `value` and
/// `ParseError::Truncated`'s `partial` are then `null` (the violations and warnings are all there).
///
/// Where the schema judges the answer only as one whole value (the shapes the
/// [module documentation](self) does not read in parts), a candidate JSON up to [`MAX_WHOLE`]
/// bytes is read whole; a longer one is refused with [`ParseError::TooLarge`], so memory stays
/// bounded whatever the schema ([`parse_value_json_within`] sets another limit).
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
    read_json(text, schema, options, NESTED_FROM, MAX_WHOLE)
}

pub use crate::read::held::MAX_WHOLE;

/// [`parse_value_json`] holding a value the schema judges only whole up to `max_whole` bytes of
/// its JSON text (a longer one refused with [`ParseError::TooLarge`]).
///
/// ```
/// use serde_json::json;
/// use structured_runtime::read::parts::parse_value_json_within;
/// use structured_runtime::{ParseError, ParseOptions, ResponseSchema};
///
/// // Only the whole value can be compared with an enum's objects.
/// let schema = ResponseSchema::new("pair", json!({"type": "object", "enum": [{"a": [1, 2]}, {"a": [3]}]}))?;
/// let options = ParseOptions::default();
/// assert!(parse_value_json_within(r#"{"a": [3]}"#, &schema, &options, 64).is_ok());
/// let long = format!(r#"{{"a": [{}3]}}"#, "1, ".repeat(40));
/// assert!(matches!(
///     parse_value_json_within(&long, &schema, &options, 64),
///     Err(ParseError::TooLarge { limit: 64, .. })
/// ));
/// # Ok::<(), structured_runtime::SchemaError>(())
/// ```
pub fn parse_value_json_within(
    text: &str,
    schema: &ResponseSchema,
    options: &ParseOptions,
    max_whole: usize,
) -> Result<Parsed<String>, ParseError> {
    read_json(text, schema, options, NESTED_FROM, max_whole)
}

/// An item of a list read in parts is read in parts itself from this many bytes of its text
/// (when its schema allows): below, its value costs little next to the answer.
const NESTED_FROM: usize = 64 << 10;

/// [`parse_value_json`] reading every item (member) whose schema allows in parts itself, however
/// short: for tests holding that reading to the whole reading's words.
#[doc(hidden)]
pub fn parse_value_json_nesting_every_item(
    text: &str,
    schema: &ResponseSchema,
    options: &ParseOptions,
) -> Result<Parsed<String>, ParseError> {
    read_json(text, schema, options, 0, MAX_WHOLE)
}

fn read_json(
    text: &str,
    schema: &ResponseSchema,
    options: &ParseOptions,
    nested_from: usize,
    max_whole: usize,
) -> Result<Parsed<String>, ParseError> {
    let in_parts = schema.parts().filter(|_| !options.coerce.required_only);
    // (A markdown wrapper's answer is prose read as its string; no JSON of it is long enough
    // to matter unless the answer is.)
    let whole = schema.markdown().is_some() || (in_parts.is_none() && text.len() <= max_whole);
    if whole {
        return parse_value(text, schema, options).map(|parsed| parsed.map(|v| v.to_string()));
    }
    let target = InParts {
        schema,
        parts: in_parts,
        nested_from,
        max_whole,
        declined: RefCell::new(None),
        compact: Cell::new(true),
        write_refused: Cell::new(false),
    };
    let read = value_from_json_text(&target, text, StructuredOutputMode::None, options);
    // A value taken as written while a later one (or the whole answer) was too long to judge
    // might not be the one the whole reading takes: refused as too large, not chosen silently.
    match (read, target.declined.into_inner()) {
        (Ok(_), Some((at, bytes))) => Err(ParseError::TooLarge {
            at,
            bytes,
            limit: max_whole,
        }),
        (read, _) => read,
    }
}

/// A schema's value read in parts, as its JSON text.
struct InParts<'s> {
    schema: &'s ResponseSchema,
    /// `None`: the schema reads nothing in parts (every candidate is judged whole).
    parts: Option<&'s Parts>,
    /// An item this long or longer, whose schema allows, is read in parts itself.
    nested_from: usize,
    /// A candidate that cannot be read in parts is judged whole up to this many bytes of its
    /// text, and refused past them ([`ParseError::TooLarge`]).
    max_whole: usize,
    /// JSON asked whether it is exactly a valid value, and too long to tell ([`Target::exact`]):
    /// where, and how long. A value chosen without it is not one the reading may give.
    declined: RefCell<Option<(Pointer, Option<usize>)>>,
    /// The text read is written as `serde_json` writes it (else what is copied from it into the
    /// value's text is written so first).
    compact: Cell<bool>,
    /// A refused value is written too, fitted (its verdict is the stream's on that text:
    /// [`Stop::ByNames`]).
    write_refused: Cell<bool>,
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

/// Why a pass over a candidate stopped.
enum Stop {
    /// A part does not fit as written (a reading without fitting ends there; else the parts
    /// are fitted).
    Misfit,
    /// Coercion moved a list: read the answer whole.
    GaveUp,
    /// A value held whole (an item, or a member outside the parts) at this place is longer
    /// than a value is held whole to: the answer is refused as too large to hold.
    TooLarge(Pointer),
    /// A variant was chosen where only names tell variants apart, and the value is refused or
    /// another branch may take it: its verdict and report are the ones the check of the whole
    /// value gives, weighing every branch on the whole value. The value is written fitted, and
    /// that text judged by a stream reader keeping no value, which judges such an object
    /// against each branch from its text ([`InParts::judged_as_streamed`]). `true`: another
    /// branch may take the value as written (else it is known not to fit so).
    ByNames(bool),
}

/// A candidate's JSON read in parts.
struct Read {
    /// Reading changed the value: its text was written out. Else the text read is the value's
    /// (or the value is refused, and not written).
    changed: bool,
    recoveries: Listed,
    violations: Vec<Violation>,
    /// Numbers kept as text where a string is asked for.
    as_text: Vec<Violation>,
}

/// The role of the value at `steps` among `parts`, then `next` when given (a member of an object
/// or a tuple on the way, asked before its path is built).
fn role_of(parts: &Parts, steps: &[Step], next: Option<Segment<'_>>) -> Role {
    let depth = steps.len() + usize::from(next.is_some());
    let mut way = false;
    for list in 0..parts.len() {
        let at = parts.steps(list);
        let under = at.starts_with(steps)
            && next.is_none_or(|next| at.get(steps.len()).is_some_and(|k| *k == next));
        if under && at.len() == depth {
            return Role::List(list);
        }
        way |= under && at.len() > depth;
    }
    if way {
        Role::Way
    } else {
        Role::Plain
    }
}

impl InParts<'_> {
    /// The parts `json` is read by: where the schema chooses among variants on the way to
    /// lists, the parts of the variants it names (decided on a first look at the text, as
    /// coercion will choose them); `None` when nothing can be read in parts.
    fn parts_for(&self, json: &str) -> Option<(Decided<'_>, bool)> {
        let parts = self.parts?;
        let (decided, doubtful) = match parts.points() {
            [] => (None, false),
            points => {
                let document = self.schema.schema();
                let (choices, doubtful) = choose(json, parts, points, document);
                (parts.decided(document, &choices), doubtful)
            }
        };
        let read = match decided {
            Some(decided) => Decided::Made(decided),
            None => Decided::Fixed(parts),
        };
        (read.len() > 0).then_some((read, doubtful))
    }

    /// Reads `json` (one JSON value, as `serde_json` writes it) in parts: as written first,
    /// stopping at the first part that does not fit; then, when one does not and there is a
    /// `fit`, every part fitted; and when that changed something and the value is valid, a
    /// last pass writes it, each item again as it is read (one fitted before fitted again), so
    /// the items are never all held at once, as values or as text. The value's text is `json`
    /// itself when nothing was changed; else it is appended to `out` (not written without one:
    /// the verdict alone is asked); a refused value is not written.
    fn read(
        &self,
        json: &str,
        repairs: &[Repair],
        fit: Option<&CoercePolicy>,
        out: Option<&mut Vec<u8>>,
    ) -> Result<Read, Stop> {
        let (decided, doubtful) = self.parts_for(json).ok_or(Stop::GaveUp)?;
        let parts: &Parts = &decided;
        let walk = |fitting| Walk {
            target: self,
            parts,
            base: parts
                .base_node(self.schema.schema())
                .unwrap_or(Node::root(self.schema.schema())),
            fit,
            repairs,
            kept: fit.and_then(|policy| KeptNumbers::of(repairs, policy)),
            lists: (0..parts.len()).map(|_| ListOut::default()).collect(),
            nodes: (0..parts.len())
                .map(|list| parts.item_node(self.schema.schema(), list))
                .collect(),
            holders: (0..parts.len())
                .map(|list| parts.holder_node(self.schema.schema(), list))
                .collect(),
            fitting,
            writing: false,
            fetching: false,
            long: json.len() >= self.nested_from,
            met: Vec::new(),
            sink: None,
            rest_fitted: false,
            recoveries: Listed::default(),
            violations: Vec::new(),
            as_text: Vec::new(),
            stop: None,
            rest_stand_ins: RefCell::default(),
            item_stand_ins: RefCell::default(),
            rest_budget: Budget::for_text(self.max_whole),
            item_budget: Budget::for_text(self.max_whole),
            json,
            free: HashMap::new(),
            unnamed: Vec::new(),
        };
        // As written first: a value that fits is not changed at all.
        let judged = RefCell::new(walk(false));
        let as_written = shape_of(json, &judged).and_then(|mut rest| {
            let mut judged = judged.into_inner();
            judged.rest(&mut rest).map(|()| judged.as_text)
        });
        match as_written {
            Ok(as_text) => {
                return Ok(Read {
                    changed: false,
                    recoveries: Listed::default(),
                    violations: Vec::new(),
                    as_text,
                });
            }
            // (Another branch than the one chosen by names may take it as written.)
            Err(Stop::Misfit) if doubtful => return Err(Stop::ByNames(true)),
            Err(Stop::Misfit) if fit.is_some() => {}
            Err(stop) => return Err(stop),
        }
        // A part does not fit: the whole value is fitted, every part of it, as coercion fits a
        // whole value (a part that fits may still be changed: an integral float written as an
        // integer, a missing optional property given its null).
        let fitted = RefCell::new(walk(true));
        let mut rest = shape_of(json, &fitted)?;
        let mut walk = fitted.into_inner();
        walk.rest(&mut rest)?;
        if walk.lists.iter().any(|l| !l.shared.is_empty()) {
            // Items that may repeat an earlier one: read again, to be compared.
            walk.fetching = true;
            let cell = RefCell::new(walk);
            shape_of(json, &cell)?;
            walk = cell.into_inner();
            walk.fetching = false;
        }
        walk.over_items()?;
        let unchanged = !walk.rest_fitted
            && walk
                .lists
                .iter()
                .all(|l| l.fitted.is_empty() && l.moved.is_empty() && l.dropped == 0);
        let refused = !walk.violations.is_empty() || !walk.as_text.is_empty();
        let write_refused = self.write_refused.get();
        if refused && parts.chose_by_names() && !write_refused {
            // Where only names tell variants apart, a refusal is explained by the closest one,
            // judged on the whole value.
            return Err(Stop::ByNames(false));
        }
        let out = match out {
            Some(out) if !unchanged && (!refused || write_refused) => out,
            // As written (or as repaired), the text is the value's own; a refused value is not
            // written; nor is one only judged.
            _ => {
                return Ok(Read {
                    changed: !unchanged && (!refused || write_refused),
                    recoveries: walk.recoveries,
                    violations: walk.violations,
                    as_text: walk.as_text,
                })
            }
        };
        walk.writing = true;
        // An object's declared members are written where they come in the text, among its
        // others: taken out of the rest, fitted.
        for list in 0..parts.len() {
            if !parts.beside_declared(list) {
                continue;
            }
            let at = Pointer::of_steps(parts.steps(list));
            if let (Some(Value::Object(declared)), Some(out)) =
                (at.get_mut(&mut rest), walk.lists.get_mut(list))
            {
                out.declared = std::mem::take(declared).into_iter().collect();
            }
        }
        // The rest's text around its lists: when the lists come in the text in the order the
        // rest writes them, the items are written straight into the value's text between them.
        let mut around = Around::default();
        walk.write(&rest, &mut Vec::new(), &mut around, true);
        let moved = walk.lists.iter().any(|l| !l.moved.is_empty());
        if around.holes == walk.met && !moved {
            let mut texts: std::collections::VecDeque<Vec<u8>> = around.into_texts().into();
            // Written after what `out` holds (the text before the first list becomes the value's
            // text when nothing is written before it: it may hold a member kept as its text), in
            // room for about the text read: the value written is about as long (else its room
            // doubles as it grows).
            let first = texts.pop_front().unwrap_or_default();
            let sink = match std::mem::take(out) {
                written if written.is_empty() => {
                    let mut first = first;
                    first.reserve_exact(json.len().saturating_sub(first.len()));
                    first
                }
                mut written => {
                    written.reserve_exact(json.len());
                    written.extend_from_slice(&first);
                    written
                }
            };
            walk.sink = Some(Sink {
                out: sink,
                after: texts,
            });
        }
        // An object whose other members are a part writes its declared members as the text
        // comes; one holding a part must have that part's items written in order, into the
        // value's text (else, as when coercion moved items into such a list, read whole).
        let under_members = (0..parts.len()).any(|list| parts.under_members(list));
        if walk.sink.is_none() && under_members {
            return Err(Stop::GaveUp);
        }
        let cell = RefCell::new(walk);
        let read = shape_of(json, &cell);
        let mut walk = cell.into_inner();
        match walk.sink.take() {
            Some(sink) => *out = sink.out,
            None => {
                // Items coercion moved into a list are not in the text: written last, in order.
                for list in &mut walk.lists {
                    for text in std::mem::take(&mut list.moved) {
                        list.push(text.as_bytes());
                    }
                }
                let mut text = std::mem::take(out);
                text.reserve_exact(json.len());
                let mut around = Around {
                    text,
                    ..Around::default()
                };
                walk.write(&rest, &mut Vec::new(), &mut around, false);
                *out = around.text;
            }
        }
        read?;
        // A declared member not written where its object comes in the text: the object is not
        // in the text (coercion made it, from `null`). Read whole.
        if walk.lists.iter().any(|l| !l.declared.is_empty()) {
            return Err(Stop::GaveUp);
        }
        Ok(Read {
            changed: true,
            recoveries: walk.recoveries,
            violations: walk.violations,
            as_text: walk.as_text,
        })
    }
}

/// [`crate::read::repair::repair_json`], or the candidate's own text when it is JSON with each key once and every
/// number exact (and whether it is written as `serde_json` writes it, as `repair_json`'s text
/// is): a fitted value is then written beside the text read, not beside a copy of it.
fn repaired_text(text: &str) -> Result<Repaired<(Cow<'_, str>, bool)>, RepairError> {
    let as_written = |compact| Repaired {
        value: (Cow::Borrowed(text), compact),
        repairs: Vec::new(),
        truncated: false,
    };
    if text.trim_start().starts_with(['{', '[']) && inexact_number(text).is_none() {
        if strict_de::is_written_json(text) {
            return Ok(as_written(true));
        }
        if strict_de::is_strict_json(text) {
            return Ok(as_written(false));
        }
    }
    // Not strict JSON as written (what `repair_json` tries first): the repairer's pass alone.
    let Repaired {
        value,
        repairs,
        truncated,
    } = repaired_json(text)?;
    Ok(Repaired {
        value: (Cow::Owned(value), true),
        repairs,
        truncated,
    })
}

/// The parts one text is read by: the schema's own, or those of the variants the text names.
enum Decided<'p> {
    Fixed(&'p Parts),
    Made(Arc<Parts>),
}

impl Deref for Decided<'_> {
    type Target = Parts;
    fn deref(&self) -> &Parts {
        match self {
            Decided::Fixed(parts) => parts,
            Decided::Made(parts) => parts,
        }
    }
}

/// The branch coercion takes at each of `points` (of `parts`, made from `document`) for the
/// value `json` writes: the one [`Node::branch_for`] picks for what the value holds there,
/// read without its containers' contents and without the names no branch declares (the choice
/// looks at nothing else). `None` where the value holds nothing there (or `null`), or a value
/// no object branch takes. And whether, at a place where only names tell the branches apart,
/// another branch than the one chosen may take the value (its names alone do not refuse it:
/// [`crate::schema::parts::taken_only_by`]).
fn choose(
    json: &str,
    parts: &Parts,
    points: &[Point],
    document: &Value,
) -> (Vec<Option<usize>>, bool) {
    let nodes: Vec<Option<Node<'_>>> = points
        .iter()
        .map(|point| parts.point_node(document, point))
        .collect();
    let found = RefCell::new(vec![None; points.len()]);
    let seek = Seek {
        points,
        nodes: &nodes,
        steps: Vec::new(),
        found: &found,
    };
    let mut de = serde_json::Deserializer::from_str(json);
    if seek.deserialize(&mut de).is_err() {
        return (vec![None; points.len()], false);
    }
    let found = found.into_inner();
    let mut doubtful = false;
    let choices = found
        .into_iter()
        .zip(&nodes)
        .map(|(value, node)| {
            let (value, node) = (value?, (*node)?);
            let branch = Node::branch_for(node.any_of()?, &value)?;
            let chosen = node
                .any_of()?
                .position(|b| std::ptr::eq(b.value(), branch.value()))?;
            doubtful |= !crate::schema::parts::taken_only_by(node, chosen, &value);
            Some(chosen)
        })
        .collect();
    (choices, doubtful)
}

/// Looks through a text for the values at the places where variants are chosen.
struct Seek<'a, 'd> {
    points: &'a [Point],
    nodes: &'a [Option<Node<'d>>],
    steps: Vec<Step>,
    found: &'a RefCell<Vec<Option<Value>>>,
}

impl<'de> DeserializeSeed<'de> for Seek<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        if let Some(at) = self.points.iter().position(|p| p.steps == self.steps) {
            let node = self.nodes.get(at).copied().flatten();
            let declared = |key: &str| {
                node.and_then(Node::any_of)
                    .is_some_and(|mut bs| bs.any(|b| b.target().property(key).is_some()))
            };
            let value = de.deserialize_any(Skeleton {
                keep: Some(&declared),
            })?;
            if let Some(slot) = self.found.borrow_mut().get_mut(at) {
                *slot = Some(value);
            }
            return Ok(());
        }
        if self.points.iter().any(|p| p.steps.starts_with(&self.steps)) {
            de.deserialize_any(self)
        } else {
            IgnoredAny::deserialize(de).map(|_| ())
        }
    }
}

impl Seek<'_, '_> {
    /// Looks at the value one `step` below the one looked at.
    fn below(&self, step: Step) -> Self {
        let mut steps = self.steps.clone();
        steps.push(step);
        Seek {
            points: self.points,
            nodes: self.nodes,
            steps,
            found: self.found,
        }
    }
}

impl<'de> Visitor<'de> for Seek<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    scalars_passed!();
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        // (A tuple's positions on the way.)
        let mut index = 0;
        while seq
            .next_element_seed(self.below(Step::Index(index)))?
            .is_some()
        {
            index += 1;
        }
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            map.next_value_seed(self.below(Step::Key(key)))?;
        }
        Ok(())
    }
}

/// Reads `json` through `walk`: the rest, with each list's items given to the walk.
fn shape_of(json: &str, walk: &RefCell<Walk<'_>>) -> Result<Value, Stop> {
    let mut de = serde_json::Deserializer::from_str(json);
    let shape = Shape {
        walk,
        steps: Vec::new(),
    };
    let rest = shape
        .deserialize(&mut de)
        .and_then(|rest| de.end().map(|()| rest));
    let mut walk = walk.borrow_mut();
    if let Some(stop) = walk.stop.take() {
        return Err(stop);
    }
    // A value held whole in the rest or in an item, past what one may hold.
    if let Some(at) = walk.rest_budget.spent_at().or(walk.item_budget.spent_at()) {
        return Err(Stop::TooLarge(at));
    }
    // The text is JSON as serde_json wrote it: it always reads.
    rest.map_err(|_| Stop::GaveUp)
}

/// A list's items as they are read and written out.
#[derive(Default)]
struct ListOut {
    /// Items read so far.
    count: usize,
    /// Undeclared members dropped (first pass): not written.
    dropped: usize,
    /// The indexes of the items fitted in the first pass.
    fitted: Indexes,
    /// The text of the items coercion moved into the list (not in the text read).
    moved: Vec<String>,
    /// The items' JSON, comma-separated (second pass).
    text: Vec<u8>,
    /// Items written.
    written: usize,
    /// The prints of the items read, where they must differ (`uniqueItems`).
    prints: Vec<u64>,
    /// The prints more than one item left (sorted): those items are read again and compared.
    shared: Vec<u64>,
    /// The items read again, by their canonical form, up to the first repeat.
    seen: std::collections::HashMap<String, Value>,
    /// The first item that repeats an earlier one: the earlier, its own index, itself.
    repeat: Option<(Value, usize, Value)>,
    /// Items read that match the list's `contains`.
    matched: usize,
    /// Too few or too many items match the list's `contains`.
    contains_fails: bool,
    /// The fitted members held in the rest of an object whose other members are the items
    /// (last pass), in the rest's order: the order they come in the text, each renamed where it
    /// was, then those coercion gave. Each is written where it comes in the text; what is
    /// left, after them all.
    declared: std::collections::VecDeque<(String, Value)>,
}

impl ListOut {
    fn push(&mut self, item: &[u8]) {
        if self.written > 0 {
            self.text.push(b',');
        }
        self.text.extend_from_slice(item);
        self.written += 1;
    }
}

/// A set of item indexes, a bit each: the items of a list fitted in the first pass, which may be
/// all of a million (8 bytes each as a list of numbers would outweigh the items).
#[derive(Default)]
struct Indexes {
    /// Grown only by an insert: empty exactly when nothing was inserted.
    bits: Vec<u64>,
}

impl Indexes {
    fn insert(&mut self, index: usize) {
        let word = index / 64;
        if self.bits.len() <= word {
            self.bits.resize(word + 1, 0);
        }
        if let Some(w) = self.bits.get_mut(word) {
            *w |= 1 << (index % 64);
        }
    }

    fn contains(&self, index: usize) -> bool {
        self.bits
            .get(index / 64)
            .is_some_and(|w| w & (1 << (index % 64)) != 0)
    }

    fn is_empty(&self) -> bool {
        self.bits.is_empty()
    }
}

/// The rest's text with a hole where each list's items go: `texts` before each of `holes`,
/// then the text after the last.
#[derive(Default)]
struct Around {
    texts: Vec<Vec<u8>>,
    holes: Vec<usize>,
    /// The text after the last hole so far.
    text: Vec<u8>,
}

impl Around {
    /// A hole for list `list`'s items here.
    fn hole(&mut self, list: usize) {
        self.texts.push(std::mem::take(&mut self.text));
        self.holes.push(list);
    }

    /// Every text, the last included (one more than the holes).
    fn into_texts(mut self) -> Vec<Vec<u8>> {
        self.texts.push(self.text);
        self.texts
    }
}

/// The value's text as the second pass writes it: the items of the list being read go at its
/// end, then the rest's text after that list.
struct Sink {
    out: Vec<u8>,
    /// The texts after each list to come, in order (a member holding lists, met among an
    /// object's others, puts the texts after its own lists first).
    after: std::collections::VecDeque<Vec<u8>>,
}

/// One candidate's reading in parts, as it goes.
struct Walk<'p> {
    target: &'p InParts<'p>,
    /// The parts read (decided for this text where the schema chooses among variants).
    parts: &'p Parts,
    /// The schema of the value read: the document's root, or an item's (a long item read in
    /// parts itself).
    base: Node<'p>,
    /// How items that do not fit are fitted; `None`: they are not (read exactly).
    fit: Option<&'p CoercePolicy>,
    /// The candidate's repairs (for the parts of a long item, read in parts itself).
    repairs: &'p [Repair],
    kept: Option<KeptNumbers<'p>>,
    lists: Vec<ListOut>,
    /// Each list's item schema (a map's member schema, `None` when it takes any), found once.
    nodes: Vec<Option<Node<'p>>>,
    /// Each list's own schema (the object's, for members), found once.
    holders: Vec<Option<Node<'p>>>,
    /// The pass that fits every part (some part did not fit as written); else the parts are
    /// judged as written, up to the first that does not fit.
    fitting: bool,
    /// The last pass: items are written, not judged.
    writing: bool,
    /// A pass between the fitting and the last: the items that may repeat an earlier one are
    /// read again (fitted again) to be compared.
    fetching: bool,
    /// The text read is at least as long as an item read in parts itself.
    long: bool,
    /// The lists read from the text, in the order they came.
    met: Vec<usize>,
    /// Where the second pass writes items, when straight into the value's text.
    sink: Option<Sink>,
    /// The rest was fitted.
    rest_fitted: bool,
    recoveries: Listed,
    violations: Vec<Violation>,
    as_text: Vec<Violation>,
    stop: Option<Stop>,
    /// Containers the rest holds as empty stand-ins (refused whatever they hold).
    rest_stand_ins: RefCell<StandIns>,
    /// Where the value as fitted names no variant at a place where one was chosen: the one
    /// violation each reports, in place of anything below it.
    unnamed: Vec<Violation>,
    /// The text read.
    json: &'p str,
    /// Members of objects on the way that their schema takes whatever they are (and coercion
    /// leaves as they are): held in the rest as `false`, written as their text (where it lies in
    /// `json`).
    free: HashMap<Pointer, std::ops::Range<usize>>,
    /// The same in the item read last.
    item_stand_ins: RefCell<StandIns>,
    /// What the rest may hold, values held whole in it ([`InParts::max_whole`] of text).
    rest_budget: Budget,
    /// What an item (or member) of a part may hold, refilled for each.
    item_budget: Budget,
}

impl<'p> Walk<'p> {
    /// Item `index` of list `list`: judged, and fitted if it does not fit (first pass), or
    /// written out, fitted again where it was the first time (second pass: coercion gives the
    /// same value from the same item, so only the index is kept between the passes). An item
    /// `moved` into the list by coercion is not in the text: its text is kept. A map's member
    /// is item `index` in the order written, under its `key`.
    fn item(
        &mut self,
        list: usize,
        index: usize,
        key: Option<&str>,
        mut item: Value,
        moved: bool,
    ) -> Result<(), ()> {
        let parts = self.parts;
        // A map that takes any member has no node: its members are valid as they are.
        let node = self.item_node(list, key);
        let steps = parts.steps(list);
        let at = match key {
            Some(key) => Segment::Key(key),
            None => Segment::Index(index),
        };
        if self.fetching {
            self.fetch(list, index, at, item);
            return Ok(());
        }
        if self.writing {
            let Some(out) = self.lists.get_mut(list) else {
                return Err(());
            };
            if out.fitted.contains(index) {
                self.refit(list, at, &mut item);
            }
            self.emit(list, key, &item);
            return Ok(());
        }
        let fitting = self.fitting;
        let document = self.target.schema.schema();
        if self.may_rename(list, key) {
            // Coercion may rename this member to one the object declares: read whole.
            self.stop = Some(Stop::GaveUp);
            return Err(());
        }
        let fitted = at_path(steps, at, &Path::root(), &mut |path| {
            let mut fitted = false;
            if fitting {
                let stand_ins = self.item_stand_ins.borrow();
                if let (Some(node), Some(policy)) = (node, self.fit) {
                    let mut recoveries =
                        coerce_at(&mut item, self.target.schema, node, path, policy);
                    stand_ins.restore(&mut [], &mut recoveries.list);
                    fitted = !recoveries.is_empty();
                    self.recoveries.extend(recoveries);
                }
                if let Err(mut violations) =
                    parts.check_item(document, list, key, node, &item, path)
                {
                    stand_ins.restore(&mut violations.0, &mut []);
                    push_capped(&mut self.violations, violations);
                }
                if let Some(refused) =
                    key.and_then(|key| parts.check_name(document, list, key, path))
                {
                    push_capped(&mut self.violations, Violations(vec![refused]));
                }
            } else if !parts.item_is_valid(list, key, &item)
                || key.is_some_and(|key| parts.check_name(document, list, key, path).is_some())
            {
                self.stop = Some(Stop::Misfit);
                return Err(());
            }
            // Checked on the item returned (as written, or as fitted).
            if let (Some(kept), Some(node)) = (&self.kept, node) {
                self.as_text
                    .extend(kept.violations(&item, node, &path.to_pointer()));
            }
            Ok(fitted)
        })?;
        self.item_stand_ins.borrow_mut().clear();
        let over = parts
            .judges_over_items(list)
            .then(|| parts.over_item(list, &item));
        let Some(out) = self.lists.get_mut(list) else {
            return Err(());
        };
        if let Some((print, matched)) = over {
            out.prints.extend(print);
            out.matched += usize::from(matched);
        }
        // Nothing is kept for the second pass once the value is refused (it is not written).
        if self.violations.is_empty() || self.target.write_refused.get() {
            if moved {
                out.moved.push(item.to_string());
            } else if fitted {
                out.fitted.insert(index);
            }
        }
        out.count += 1;
        Ok(())
    }

    /// An item of list `list` its schema takes whatever it is, given as its JSON text: counted,
    /// and (last pass) written as `serde_json` writes it, never held as a value (nothing fits
    /// or refuses it, and no other item is compared with it).
    fn free_item(&mut self, list: usize, text: &str) -> Result<(), ()> {
        if self.fetching {
            return Ok(());
        }
        let compact = self.target.compact.get();
        if self.writing {
            write_kept(self.item_out(list, None).ok_or(())?, text, compact);
            return Ok(());
        }
        self.lists.get_mut(list).ok_or(())?.count += 1;
        Ok(())
    }

    /// The schema node of item (member `key`) of part `list`: the one its name chooses where
    /// members are judged by their names' patterns ([`Node::member`]), else the part's.
    fn item_node(&self, list: usize, key: Option<&str>) -> Option<Node<'p>> {
        match key {
            Some(key) if self.parts.by_name(list) => self
                .holders
                .get(list)
                .copied()
                .flatten()
                .and_then(|holder| holder.member(key)),
            _ => self.nodes.get(list).copied().flatten(),
        }
    }

    /// Whether fitting may rename member `key` of part `list` (an object's member beside those it
    /// declares) to a declared name: only the whole object then shows what it becomes.
    fn may_rename(&self, list: usize, key: Option<&str>) -> bool {
        let (true, Some(key), Some(policy)) = (self.fitting, key, self.fit) else {
            return false;
        };
        let holder = self.holders.get(list).copied().flatten();
        self.parts.beside_declared(list)
            && holder.is_none_or(|node| may_rename(self.target.schema, node, key, policy))
    }

    /// Item `index` of list `list` (member `key`), given as its JSON `text` and long: read in
    /// parts itself, its verdict, changes and violations those of reading it whole, each pointer
    /// from the value's root; written (last pass) as that reading writes it.
    fn item_text(
        &mut self,
        list: usize,
        index: usize,
        key: Option<&str>,
        text: &str,
    ) -> Result<(), ()> {
        let parts = self.parts;
        let Some(inner) = parts.inner(list, self.target.schema.schema()) else {
            return Err(());
        };
        if self.fetching {
            return Ok(());
        }
        let nested = InParts {
            schema: self.target.schema,
            parts: Some(inner),
            nested_from: self.target.nested_from,
            max_whole: self.target.max_whole,
            declined: RefCell::new(None),
            compact: Cell::new(self.target.compact.get()),
            write_refused: Cell::new(self.target.write_refused.get()),
        };
        if self.writing {
            let fitted = self
                .lists
                .get(list)
                .is_some_and(|out| out.fitted.contains(index));
            let (repairs, fit) = (self.repairs, self.fit);
            let out = self.item_out(list, key).ok_or(())?;
            // Fitted again, written straight after what is written.
            let compact = nested.compact.get();
            if !fitted
                || !nested
                    .read(text, repairs, fit, Some(out))
                    .map_err(|_| ())?
                    .changed
            {
                if compact {
                    out.extend_from_slice(text.as_bytes());
                } else if !strict_de::write_compact(text, out) {
                    self.stop = Some(Stop::GaveUp);
                    return Err(());
                }
            }
            return Ok(());
        }
        if self.may_rename(list, key) {
            self.stop = Some(Stop::GaveUp);
            return Err(());
        }
        let fit = self.fit.filter(|_| self.fitting);
        // Judged, not written (the last pass writes it).
        let read = nested.read(text, self.repairs, fit, None);
        let at = match key {
            Some(key) => Pointer::of_steps(parts.steps(list)).key(key),
            None => Pointer::of_steps(parts.steps(list)).index(index),
        };
        let read = match read {
            Ok(read) => read,
            Err(stop) => {
                self.stop = Some(match stop {
                    Stop::TooLarge(inner) => Stop::TooLarge(at.join(&inner)),
                    stop => stop,
                });
                return Err(());
            }
        };
        let mut recoveries = read.recoveries;
        for recovery in &mut recoveries.list {
            recovery.path = at.join(&recovery.path);
        }
        self.recoveries.extend(recoveries);
        let under = |mut v: Violation| {
            v.path = at.join(&v.path);
            v
        };
        let violations = read.violations.into_iter().map(under).collect();
        push_capped(&mut self.violations, Violations(violations));
        self.as_text.extend(read.as_text.into_iter().map(under));
        let refused = !self.violations.is_empty();
        let Some(out) = self.lists.get_mut(list) else {
            return Err(());
        };
        if read.changed && (!refused || self.target.write_refused.get()) {
            out.fitted.insert(index);
        }
        out.count += 1;
        Ok(())
    }

    /// Member `key` of the object whose undeclared members are part `list`, one it does not
    /// declare where it allows none: refused as the walk refuses it, or dropped as coercion drops
    /// it (then not written), whatever its value (`was`, its preview: the value is never held).
    fn undeclared(&mut self, list: usize, key: &str, was: String) -> Result<(), ()> {
        let parts = self.parts;
        // Judged once (fitting pass): the last pass does not write it, nor does a pass reading
        // items again look at it.
        if self.writing || self.fetching {
            return Ok(());
        }
        let Some(policy) = self.fit.filter(|_| self.fitting) else {
            self.stop = Some(Stop::Misfit);
            return Err(());
        };
        let holder = self.holders.get(list).copied().flatten();
        if holder.is_none_or(|node| may_rename(self.target.schema, node, key, policy)) {
            // Coercion may rename it to a declared name (by an alias): read whole.
            self.stop = Some(Stop::GaveUp);
            return Err(());
        }
        let path = Pointer::of_steps(parts.steps(list)).key(key);
        let Some(out) = self.lists.get_mut(list) else {
            return Err(());
        };
        out.count += 1;
        if !policy.drop_unknown_keys && self.target.write_refused.get() {
            // Kept and refused, it is never written: a value judged as streamed is read whole.
            self.stop = Some(Stop::GaveUp);
            return Err(());
        }
        if policy.drop_unknown_keys {
            out.dropped += 1;
            self.recoveries.push(Recovery {
                kind: RecoveryKind::DroppedUnknownKey,
                path,
                was,
            });
        } else if let Some(holder) = holder.filter(|_| self.violations.len() < MAX_VIOLATIONS) {
            let (expected, found) = undeclared_member(holder, key);
            let named = at_path(
                parts.steps(list),
                Segment::Key(key),
                &Path::root(),
                &mut |at| parts.check_name(self.target.schema.schema(), list, key, at),
            );
            let violation = Violation {
                path,
                rule: Rule::AdditionalProperty,
                expected,
                found,
            };
            // (Kept, its name is judged too.)
            let refused = std::iter::once(violation).chain(named).collect();
            push_capped(&mut self.violations, Violations(refused));
        }
        Ok(())
    }

    /// An item of list `list`, at `at` in it, read again after the fitting pass: fitted as that
    /// pass fitted it (coercion gives the same value from the same item), its changes not noted
    /// again.
    fn refit(&self, list: usize, at: Segment<'_>, item: &mut Value) {
        let key = match at {
            Segment::Key(key) => Some(key),
            Segment::Index(_) => None,
        };
        let node = self.item_node(list, key);
        if let (Some(policy), Some(node)) = (self.fit, node) {
            let schema = self.target.schema;
            at_path(self.parts.steps(list), at, &Path::root(), &mut |path| {
                coerce_at(item, schema, node, path, policy);
            });
        }
    }

    /// Item `index` of list `list`, at `at` in it, read again: fitted as the fitting pass
    /// fitted it and, when its print is one another item left, kept by its canonical form until
    /// one repeats an earlier.
    fn fetch(&mut self, list: usize, index: usize, at: Segment<'_>, mut item: Value) {
        let parts = self.parts;
        if self
            .lists
            .get(list)
            .is_none_or(|out| out.shared.is_empty() || out.repeat.is_some())
        {
            return;
        }
        self.refit(list, at, &mut item);
        let Some(out) = self.lists.get_mut(list) else {
            return;
        };
        let (Some(print), _) = parts.over_item(list, &item) else {
            return;
        };
        if out.shared.binary_search(&print).is_err() {
            return;
        }
        match out.seen.entry(canonical(&item, 0)) {
            Entry::Occupied(first) => out.repeat = Some((first.remove(), index, item)),
            Entry::Vacant(slot) => {
                slot.insert(item);
            }
        }
    }

    /// What the lists' items say as a whole, once all are read (fitting pass): the first item
    /// that repeats an earlier one where they must differ, and a `contains` not met, each
    /// reported as the whole value's check reports it; when these parts cannot tell what that
    /// report is, the answer is read whole.
    fn over_items(&mut self) -> Result<(), Stop> {
        let parts = self.parts;
        for list in 0..parts.len() {
            let Some(out) = self.lists.get_mut(list) else {
                continue;
            };
            if out.shared.is_empty() {
                continue;
            }
            out.seen = Default::default();
            // Prints met by chance, or items equal only as the validator compares them: the
            // whole reading says.
            let Some((first, index, item)) = out.repeat.take() else {
                return Err(Stop::GaveUp);
            };
            if !parts.is_repeat(&first, &item) {
                return Err(Stop::GaveUp);
            }
            // The whole value's walk names a list's count, then its first repeat, then its
            // items.
            let at = Pointer::of_steps(parts.steps(list));
            let (expected, found) = repeat_of(&item);
            let violation = Violation {
                path: at.index(index),
                rule: Rule::UniqueItems,
                expected,
                found,
            };
            let after_count = self
                .violations
                .iter()
                .position(|v| v.rule == Rule::Items && v.path == at)
                .map_or(0, |i| i + 1);
            if self.violations.len() >= MAX_VIOLATIONS {
                self.violations.pop();
            }
            self.violations
                .insert(after_count.min(self.violations.len()), violation);
        }
        // `contains` is the validator's to report, at the list, in its own order among its
        // other errors (which a long report cuts): reported here when it is the only violation,
        // else the value is read whole.
        let failing: Vec<usize> = (0..parts.len())
            .filter(|list| self.lists.get(*list).is_some_and(|l| l.contains_fails))
            .collect();
        for &list in &failing {
            let at = Pointer::of_steps(parts.steps(list));
            if !self.violations.is_empty() || failing.len() > 1 {
                return Err(Stop::GaveUp);
            }
            let count = self.lists.get(list).map_or(0, |l| l.count);
            self.violations.push(parts.contains_violation(count, at));
        }
        Ok(())
    }

    /// Writes member `key` (or an item) of part `list` after those written (last pass).
    fn emit(&mut self, list: usize, key: Option<&str>, item: &Value) {
        if let Some(out) = self.item_out(list, key) {
            write_json(out, item);
        }
    }

    fn emit_bytes(&mut self, list: usize, key: Option<&str>, item: &[u8]) {
        if let Some(out) = self.item_out(list, key) {
            out.extend_from_slice(item);
        }
    }

    /// Where the next item (member `key`) of part `list` is written, its comma and key written
    /// (last pass): straight into the value's text when it is written in order, else after the
    /// list's other items.
    fn item_out(&mut self, list: usize, key: Option<&str>) -> Option<&mut Vec<u8>> {
        let out = self.lists.get_mut(list)?;
        let text = match &mut self.sink {
            Some(sink) => &mut sink.out,
            None => &mut out.text,
        };
        if out.written > 0 {
            text.push(b',');
        }
        if let Some(key) = key {
            write_json(text, key);
            text.push(b':');
        }
        out.written += 1;
        Some(text)
    }

    /// A member the rest holds of the object whose other members are part `list`, met in the
    /// text (last pass): the next of the rest's, written here as fitted; or, when `all`, those
    /// left (coercion gave them), after all the others.
    fn declared(&mut self, list: usize, all: bool) {
        let Some(out) = self.lists.get_mut(list) else {
            return;
        };
        let members: Vec<(String, Value)> = if all {
            out.declared.drain(..).collect()
        } else {
            out.declared.pop_front().into_iter().collect()
        };
        for (key, member) in members {
            self.emit(list, Some(&key), &member);
        }
    }

    /// A member the rest holds of the object whose other members are part `list`, met in the
    /// text and holding parts of its own (last pass): the next of the rest's, written up to its
    /// first part, the texts after each of its parts put first in line, so its parts' items are
    /// written straight into the value's text as they are read. Only where the value's text is
    /// written in order (else the answer is read whole). How many texts are left in line once
    /// its parts are read.
    fn declared_on_the_way(&mut self, list: usize) -> Result<usize, ()> {
        if self.sink.is_none() {
            self.stop = Some(Stop::GaveUp);
            return Err(());
        }
        let Some((key, member)) = self
            .lists
            .get_mut(list)
            .and_then(|l| l.declared.pop_front())
        else {
            return Err(());
        };
        let mut steps = self.parts.steps(list).to_vec();
        steps.push(Step::Key(key.clone()));
        let mut around = Around::default();
        self.write(&member, &mut steps, &mut around, true);
        let mut texts: std::collections::VecDeque<Vec<u8>> = around.into_texts().into();
        let first = texts.pop_front().unwrap_or_default();
        self.emit_bytes(list, Some(&key), &first);
        let sink = self.sink.as_mut().ok_or(())?;
        let left = sink.after.len();
        while let Some(text) = texts.pop_back() {
            sink.after.push_front(text);
        }
        Ok(left)
    }

    /// The rest (the value with its lists emptied): judged, fitted if it does not fit, with
    /// any item coercion put into a list judged as an item; then the lists' counts.
    fn rest(&mut self, rest: &mut Value) -> Result<(), Stop> {
        let parts = self.parts;
        let document = self.target.schema.schema();
        let fits = |rest: &Value| {
            parts.rest_is_valid(rest)
                && parts.names_chosen(document, rest)
                && declared_names(parts, document, rest).is_empty()
        };
        if !self.fitting && !fits(rest) {
            return Err(Stop::Misfit);
        }
        if let (true, Some(policy)) = (self.fitting, self.fit) {
            // (What `required_only` drops is judged on the whole value: such options read whole.)
            let mut recoveries =
                coerce_at(rest, self.target.schema, self.base, &Path::root(), policy);
            self.rest_stand_ins
                .borrow()
                .restore(&mut [], &mut recoveries.list);
            // Where a variant was chosen, the value names it (and no other) as fitted, or none:
            // then the `anyOf` there says so in one violation, nothing below it reported (the
            // listing full, which violations it dropped is not known: read whole). Naming
            // another variant, it is explained as that one: read whole.
            let unnamed = match parts.unnamed(document, rest) {
                Some(unnamed) => unnamed,
                // (Written fitted, and judged as streamed.)
                None if parts.chose_by_names() && self.target.write_refused.get() => Vec::new(),
                None if parts.chose_by_names() => return Err(Stop::ByNames(true)),
                None => return Err(Stop::GaveUp),
            };
            if !unnamed.is_empty() && self.violations.len() >= MAX_VIOLATIONS {
                return Err(Stop::GaveUp);
            }
            self.unnamed = unnamed;
            for list in 0..parts.len() {
                let at = Pointer::of_steps(parts.steps(list));
                if parts.holds(list) == Holds::Members {
                    // Coercion put members where an object's others were taken out: not read
                    // in parts.
                    if at
                        .get(rest)
                        .and_then(Value::as_object)
                        .is_some_and(|m| m.keys().any(|k| !parts.in_rest(list, k)))
                    {
                        return Err(Stop::GaveUp);
                    }
                    continue;
                }
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
                    if self.item(list, i, None, item, true).is_err() {
                        return Err(self.stop.take().unwrap_or(Stop::GaveUp));
                    }
                }
            }
            if let Err(mut violations) = parts.check_rest(rest) {
                self.rest_stand_ins
                    .borrow()
                    .restore(&mut violations.0, &mut []);
                push_capped(&mut self.violations, violations);
            }
            push_capped(
                &mut self.violations,
                Violations(declared_names(parts, document, rest)),
            );
            self.rest_fitted |= !recoveries.is_empty();
            self.recoveries.extend(recoveries);
        }
        // Checked on the rest returned (as written, or as fitted; items it moved into a list
        // were checked as items).
        if let Some(kept) = &self.kept {
            self.as_text
                .extend(kept.violations(rest, self.base, &Pointer::root()));
        }
        for list in 0..parts.len() {
            let at = Pointer::of_steps(parts.steps(list));
            // (Members dropped are not in the value.)
            let mut count = self
                .lists
                .get(list)
                .map_or(0, |l| l.count.saturating_sub(l.dropped));
            // A list's item counts, a map's property counts (its members read in parts, and the
            // declared ones the rest holds).
            let counted = match (parts.holds(list), at.get(rest)) {
                (Holds::Members | Holds::Undeclared, Some(Value::Object(declared))) => {
                    count += declared.len();
                    true
                }
                (Holds::Items, Some(Value::Array(_))) => {
                    // Items that may be equal, or too few or many matching `contains`: judged
                    // once all are read (`Walk::over_items`).
                    if let Some(out) = self.lists.get_mut(list) {
                        out.shared = parts.shared_prints(list, &mut out.prints);
                        out.prints = Vec::new();
                        out.contains_fails = !parts.contains_holds(list, out.matched);
                        if !self.fitting && (!out.shared.is_empty() || out.contains_fails) {
                            return Err(Stop::Misfit);
                        }
                    }
                    true
                }
                // Items were read where coercion left no list (or map).
                _ if count > 0 => return Err(Stop::GaveUp),
                _ => false,
            };
            if let Some(violation) = parts.check_count(list, count, at).filter(|_| counted) {
                if !self.fitting {
                    return Err(Stop::Misfit);
                }
                // The whole value's walk names a container's count before its members: a full
                // report keeps the count, in place of its last entry.
                if self.violations.len() >= MAX_VIOLATIONS {
                    self.violations.pop();
                }
                self.violations.insert(0, violation);
            }
        }
        if !self.unnamed.is_empty() {
            let mut unnamed = std::mem::take(&mut self.unnamed);
            // The object's members read one at a time (and kept) are among those it shows.
            for u in &mut unnamed {
                let held = u.path.get(rest).and_then(Value::as_object).map(Map::len);
                let apart: usize = (0..parts.len())
                    .filter(|&l| {
                        parts.holds(l) != Holds::Items
                            && Pointer::of_steps(parts.steps(l)) == u.path
                    })
                    .filter_map(|l| self.lists.get(l))
                    .map(|out| out.count - out.dropped)
                    .sum();
                if let (Some(held), true) = (held, apart > 0) {
                    u.found = preview_object(held + apart);
                }
            }
            let under = |v: &Violation| {
                unnamed.iter().any(|u| {
                    let (at, place) = (v.path.as_str(), u.path.as_str());
                    at.strip_prefix(place)
                        .is_some_and(|below| below.is_empty() || below.starts_with('/'))
                })
            };
            self.violations.retain(|v| !under(v));
            push_capped(&mut self.violations, Violations(unnamed));
        }
        Ok(())
    }

    /// Writes `value` (the rest, at `steps`) into `out`: each list's items where the list is
    /// (their text written already), or with `holes` a hole for them.
    fn write(&self, value: &Value, steps: &mut Vec<Step>, out: &mut Around, holes: bool) {
        let role = role_of(self.parts, steps, None);
        if let Role::List(list) = role {
            let brackets = match (self.parts.holds(list), value) {
                (Holds::Items, Value::Array(_)) => Some((b'[', b']')),
                (Holds::Members, Value::Object(_)) => Some((b'{', b'}')),
                _ => None,
            };
            if let Some((open, close)) = brackets {
                out.text.push(open);
                if holes {
                    out.hole(list);
                } else if let Some(l) = self.lists.get(list) {
                    out.text.extend_from_slice(&l.text);
                }
                out.text.push(close);
                return;
            }
        }
        let way = match role {
            Role::Way => true,
            Role::List(list) => self.parts.holds(list) == Holds::Undeclared,
            Role::Plain => false,
        };
        if !self.free.is_empty() && role == Role::Plain {
            let text = self
                .free
                .get(&Pointer::of_steps(steps))
                .and_then(|range| self.json.get(range.clone()));
            if let Some(text) = text {
                // Room for about the whole text read at once: a member this long is most of it
                // (else a byte after it would double the room).
                let room = self.json.len().max(out.text.len() + text.len());
                out.text.reserve_exact(room.saturating_sub(out.text.len()));
                write_kept(&mut out.text, text, self.target.compact.get());
                return;
            }
        }
        match value {
            Value::Object(map) if way => {
                out.text.push(b'{');
                for (i, (key, member)) in map.iter().enumerate() {
                    if i > 0 {
                        out.text.push(b',');
                    }
                    write_json(&mut out.text, key);
                    out.text.push(b':');
                    steps.push(Step::Key(key.clone()));
                    self.write(member, steps, out, holes);
                    steps.pop();
                }
                out.text.push(b'}');
            }
            // A tuple on the way.
            Value::Array(items) if role == Role::Way => {
                out.text.push(b'[');
                for (index, item) in items.iter().enumerate() {
                    if index > 0 {
                        out.text.push(b',');
                    }
                    steps.push(Step::Index(index));
                    self.write(item, steps, out, holes);
                    steps.pop();
                }
                out.text.push(b']');
            }
            _ => write_json(&mut out.text, value),
        }
    }

    /// The end of list `list` in the second pass: the rest's text after it follows.
    fn list_done(&mut self) {
        if let Some(sink) = &mut self.sink {
            if let Some(after) = sink.after.pop_front() {
                sink.out.extend_from_slice(&after);
            }
        }
    }
}

/// The names of the declared members the rest holds of each object whose other (undeclared)
/// members are a part, refused by its `propertyNames` (judged here with the others', not by the
/// rest's schema), each at the member's pointer.
fn declared_names(parts: &Parts, document: &Value, rest: &Value) -> Vec<Violation> {
    let mut refused = Vec::new();
    for list in (0..parts.len()).filter(|&list| parts.holds(list) != Holds::Items) {
        let steps = parts.steps(list);
        let Some(Value::Object(declared)) = Pointer::of_steps(steps).get(rest) else {
            continue;
        };
        for key in declared.keys() {
            let last = Segment::Key(key);
            let path = &Path::root();
            refused.extend(at_path(steps, last, path, &mut |path| {
                parts.check_name(document, list, key, path)
            }));
        }
    }
    refused
}

/// A value kept as its `text` (a piece of the text read, `compact` when that is written as
/// `serde_json` writes it), written as `serde_json` writes it.
fn write_kept(out: &mut Vec<u8>, text: &str, compact: bool) {
    // (The text read is JSON with each key once: it always writes.)
    if compact || !strict_de::write_compact(text, out) {
        out.extend_from_slice(text.as_bytes());
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

/// Calls `f` with the path of the value at `steps` and then `last` below `base`.
fn at_path<R>(
    steps: &[Step],
    last: Segment<'_>,
    base: &Path<'_>,
    f: &mut dyn FnMut(&Path<'_>) -> R,
) -> R {
    match steps.split_first() {
        Some((step, rest)) => at_path(rest, last, &base.segment(step.segment()), f),
        None => f(&base.segment(last)),
    }
}

/// Reads a value at `steps`: a list's items one at a time, an object (a tuple) on the way to a
/// list member by member (position by position), anything else whole.
struct Shape<'w, 'p> {
    walk: &'w RefCell<Walk<'p>>,
    steps: Vec<Step>,
}

impl<'de> DeserializeSeed<'de> for Shape<'_, '_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        let role = role_of(self.walk.borrow().parts, &self.steps, None);
        match role {
            Role::Plain => Counted(&self.walk.borrow().rest_budget).deserialize(de),
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
    scalars_as_values!();
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let list = match self.role {
            Role::List(list) if self.holds() == Some(Holds::Items) => list,
            Role::Way => return self.tuple(seq),
            _ => {
                let walk = self.shape.walk.borrow();
                let mut items = Vec::new();
                while let Some(item) = seq.next_element_seed(Counted(&walk.rest_budget))? {
                    items.push(item);
                }
                return Ok(Value::Array(items));
            }
        };
        self.begin(list);
        let mut index = 0;
        if free(self.item_guide(list, None)) {
            // Items the schema takes whatever they are: each kept as its text, never a value.
            while let Some(item) = seq.next_element::<&'de RawValue>()? {
                self.shape
                    .walk
                    .borrow_mut()
                    .free_item(list, item.get())
                    .map_err(|()| <A::Error as de::Error>::custom("not read in parts"))?;
            }
        } else if self.nests(list) {
            // Each item as its text first: a long one is read in parts itself.
            while let Some(item) = seq.next_element::<&'de RawValue>()? {
                self.one_text(list, index, None, item.get())?;
                index += 1;
            }
        } else {
            let guide = self.item_guide(list, None);
            while let Some(item) = self.held(Segment::Index(index), guide, false, |seed| {
                seq.next_element_seed(seed)
            })? {
                self.one(list, index, None, item)?;
                index += 1;
            }
        }
        self.end();
        Ok(Value::Array(Vec::new()))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        if let Role::List(list) = self.role {
            if self.holds() == Some(Holds::Members) {
                self.begin(list);
                let mut index = 0;
                // The members the rest holds (the last pass writes them as the rest's fitting
                // left them, where they come).
                let mut declared = Map::new();
                let writing = self.shape.walk.borrow().writing;
                while let Some(key) = map.next_key::<String>()? {
                    if self.in_rest(list, &key) {
                        // A declared member holding a part: read through it.
                        let way = self.member_role(Segment::Key(&key)) != Role::Plain;
                        let shape = || self.below(Segment::Key(&key));
                        if writing && way {
                            let not_written =
                                || <A::Error as de::Error>::custom("not written in parts");
                            let left = self
                                .shape
                                .walk
                                .borrow_mut()
                                .declared_on_the_way(list)
                                .map_err(|()| not_written())?;
                            map.next_value_seed(shape())?;
                            // Each of its parts met, in order: else the texts after them do not
                            // follow their items (coercion gave it a part its text lacks).
                            let mut walk = self.shape.walk.borrow_mut();
                            if walk.sink.as_ref().map(|sink| sink.after.len()) != Some(left) {
                                walk.stop = Some(Stop::GaveUp);
                                return Err(not_written());
                            }
                        } else if writing {
                            map.next_value::<de::IgnoredAny>()?;
                            self.shape.walk.borrow_mut().declared(list, false);
                        } else {
                            let member = match way {
                                true => map.next_value_seed(shape())?,
                                false => {
                                    let guide = self.rest_guide(Segment::Key(&key));
                                    self.held(Segment::Key(&key), guide, true, |seed| {
                                        map.next_value_seed(seed)
                                    })?
                                }
                            };
                            declared.insert(key, member);
                        }
                        continue;
                    }
                    if self.shape.walk.borrow().parts.refuses_member(list, &key) {
                        // No pattern takes it, and the object allows no other: refused or dropped.
                        self.undeclared(&mut map, list, &key)?;
                        continue;
                    }
                    if self.nests(list) {
                        let member = map.next_value::<&'de RawValue>()?;
                        self.one_text(list, index, Some(&key), member.get())?;
                    } else {
                        let guide = self.item_guide(list, Some(&key));
                        let member = self.held(Segment::Key(&key), guide, false, |seed| {
                            map.next_value_seed(seed)
                        })?;
                        self.one(list, index, Some(&key), member)?;
                    }
                    index += 1;
                }
                if writing {
                    self.shape.walk.borrow_mut().declared(list, true);
                }
                self.end();
                return Ok(Value::Object(declared));
            }
        }
        // An object allowing no member it does not declare: those are given to the walk one at a
        // time, the others read as on the way.
        let undeclared = match self.role {
            Role::List(list) if self.holds() == Some(Holds::Undeclared) => Some(list),
            _ => None,
        };
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if let Some(list) = undeclared.filter(|list| !self.in_rest(*list, &key)) {
                self.undeclared(&mut map, list, &key)?;
                continue;
            }
            let way = self.role == Role::Way || undeclared.is_some();
            let value = match self.role {
                // Only a member on the way to a list (or one) gets its path built.
                _ if way && self.member_role(Segment::Key(&key)) != Role::Plain => {
                    map.next_value_seed(self.below(Segment::Key(&key)))?
                }
                // A member the rest holds: read guided by its schema; kept as its text where the
                // schema takes anything.
                _ if way => {
                    let guide = self.rest_guide(Segment::Key(&key));
                    if free(guide) {
                        let text = map.next_value::<&'de RawValue>()?;
                        self.free_text(Segment::Key(&key), text.get())
                            .map_err(|()| <A::Error as de::Error>::custom("not read in parts"))?;
                        Value::Bool(false)
                    } else {
                        self.held(Segment::Key(&key), guide, true, |seed| {
                            map.next_value_seed(seed)
                        })?
                    }
                }
                _ => map.next_value_seed(Counted(&self.shape.walk.borrow().rest_budget))?,
            };
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

impl<'w, 'p> ShapeVisitor<'w, 'p> {
    /// The value of member `key`, one part `list`'s object allows none of: given to the walk to
    /// be refused or dropped, read only for its warning's preview.
    fn undeclared<'de, A: MapAccess<'de>>(
        &self,
        map: &mut A,
        list: usize,
        key: &str,
    ) -> Result<(), A::Error> {
        let was = map.next_value_seed(Preview)?;
        self.shape
            .walk
            .borrow_mut()
            .undeclared(list, key, was)
            .map_err(|()| <A::Error as de::Error>::custom("not read in parts"))
    }

    /// A tuple on the way to a part: each position on the way read so, the others held in the
    /// rest (guided by their schemas, or kept as their text where it takes anything).
    fn tuple<'de, A: SeqAccess<'de>>(&self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            let at = Segment::Index(items.len());
            let item = if self.member_role(at) != Role::Plain {
                seq.next_element_seed(self.below(at))?
            } else {
                let guide = self.rest_guide(at);
                if free(guide) {
                    let Some(text) = seq.next_element::<&'de RawValue>()? else {
                        break;
                    };
                    self.free_text(at, text.get())
                        .map_err(|()| <A::Error as de::Error>::custom("not read in parts"))?;
                    Some(Value::Bool(false))
                } else {
                    self.held(at, guide, true, |seed| seq.next_element_seed(seed))?
                }
            };
            match item {
                Some(item) => items.push(item),
                None => break,
            }
        }
        Ok(Value::Array(items))
    }

    /// What the part read here holds, when a part is read here.
    fn holds(&self) -> Option<Holds> {
        match self.role {
            Role::List(list) => Some(self.shape.walk.borrow().parts.holds(list)),
            _ => None,
        }
    }

    /// Whether the object read as part `list` holds member `key` in the rest.
    fn in_rest(&self, list: usize, key: &str) -> bool {
        self.shape.walk.borrow().parts.in_rest(list, key)
    }

    /// The role of member (position) `at` of the object (tuple) read here.
    fn member_role(&self, at: Segment<'_>) -> Role {
        role_of(self.shape.walk.borrow().parts, &self.shape.steps, Some(at))
    }

    /// Reads member (position) `at` of the object (tuple) read here, on the way to a part.
    fn below(&self, at: Segment<'_>) -> Shape<'w, 'p> {
        let mut steps = self.shape.steps.clone();
        steps.push(at.into());
        Shape {
            walk: self.shape.walk,
            steps,
        }
    }

    /// A part's items (or members) begin: the first pass notes the order parts come in.
    fn begin(&self, list: usize) {
        let mut walk = self.shape.walk.borrow_mut();
        // A list inside an object whose other members are a part is written where its member
        // is (`Walk::declared_on_the_way`), not among the rest's holes.
        if !walk.writing && !walk.parts.under_members(list) {
            walk.met.push(list);
        }
    }

    /// One item (or member) of part `list`, given to the walk.
    fn one<E: de::Error>(
        &self,
        list: usize,
        index: usize,
        key: Option<&str>,
        item: Value,
    ) -> Result<(), E> {
        self.shape
            .walk
            .borrow_mut()
            .item(list, index, key, item, false)
            .map_err(|()| E::custom("not read in parts"))
    }

    /// Whether an item (member) of part `list` may be read in parts itself: its schema allows,
    /// and the text read is long enough to hold an item that long (else each item would be
    /// scanned twice, as its text and then as its value, for nothing).
    fn nests(&self, list: usize) -> bool {
        let walk = self.shape.walk.borrow();
        walk.long && walk.parts.may_nest(list)
    }

    /// One item (or member) of part `list`, given as its JSON text: read in parts itself when
    /// it is long, else as a value.
    fn one_text<E: de::Error>(
        &self,
        list: usize,
        index: usize,
        key: Option<&str>,
        text: &str,
    ) -> Result<(), E> {
        let long = {
            let walk = self.shape.walk.borrow();
            text.len() >= walk.target.nested_from
                && walk
                    .parts
                    .inner(list, walk.target.schema.schema())
                    .is_some()
        };
        if !long {
            let mut de = serde_json::Deserializer::from_str(text);
            let last = match key {
                Some(key) => Segment::Key(key),
                None => Segment::Index(index),
            };
            let item = self
                .held(last, self.item_guide(list, key), false, |seed| {
                    seed.deserialize(&mut de)
                })
                .and_then(|item| de.end().map(|()| item))
                .map_err(E::custom)?;
            return self.one(list, index, key, item);
        }
        self.shape
            .walk
            .borrow_mut()
            .item_text(list, index, key, text)
            .map_err(|()| E::custom("not read in parts"))
    }

    /// What guides the reading of an item (member `key`) of part `list`: its schema (the one its
    /// name chooses, where patterns judge the members), where the item is judged alone (not
    /// compared with the others, nor matched against `contains`).
    fn item_guide(&self, list: usize, key: Option<&str>) -> Option<Node<'p>> {
        let walk = self.shape.walk.borrow();
        match walk.parts.judges_over_items(list) {
            true => None,
            false => walk.item_node(list, key),
        }
    }

    /// Member (position) `at` of the object (tuple) read here, which its schema takes whatever
    /// it is: where its `text` lies in the text read, for the last pass to write it.
    fn free_text(&self, at: Segment<'_>, text: &str) -> Result<(), ()> {
        let mut walk = self.shape.walk.borrow_mut();
        let start = (text.as_ptr() as usize).wrapping_sub(walk.json.as_ptr() as usize);
        let range = start..start.saturating_add(text.len());
        if walk.json.get(range.clone()).map(str::as_ptr) != Some(text.as_ptr()) {
            // Not a piece of the text read (it always is): read whole.
            walk.stop = Some(Stop::GaveUp);
            return Err(());
        }
        let mut pointer = Pointer::of_steps(&self.shape.steps);
        pointer.push_segment(at);
        walk.free.insert(pointer, range);
        Ok(())
    }

    /// What guides the reading of member (position) `at` of the object (tuple) read here, held
    /// by the rest.
    fn rest_guide(&self, at: Segment<'_>) -> Option<Node<'p>> {
        let walk = self.shape.walk.borrow();
        let mut steps = self.shape.steps.clone();
        steps.push(at.into());
        walk.parts.held_node(walk.target.schema.schema(), &steps)
    }

    /// `read` given the seed that reads the value at `last` (below the value read here) guided
    /// by `node`, its stand-ins noted for the rest (`rest`) or for the item read.
    fn held<T, E: de::Error>(
        &self,
        last: Segment<'_>,
        node: Option<Node<'p>>,
        rest: bool,
        read: impl FnOnce(Held<'p, '_, '_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let walk = self.shape.walk.borrow();
        let (schema, fit) = (walk.target.schema, walk.fit);
        let renames = |node: Node<'p>, key: &str| {
            fit.is_some_and(|policy| may_rename(schema, node, key, policy))
        };
        let (noted, budget) = match rest {
            true => (&walk.rest_stand_ins, &walk.rest_budget),
            false => {
                walk.item_budget.refill();
                (&walk.item_stand_ins, &walk.item_budget)
            }
        };
        // A refused value written to be judged as streamed holds no stand-in: its text is the
        // value's, containers and all (another branch may look inside them).
        let node = node.filter(|_| !walk.target.write_refused.get());
        let mut read = Some(read);
        at_path(
            &self.shape.steps,
            last,
            &Path::root(),
            &mut |path| match read.take() {
                Some(read) => {
                    let held = read(Held {
                        node,
                        path: *path,
                        noted,
                        budget,
                        renames: &renames,
                    });
                    if held.is_err() {
                        budget.spent_in(path);
                    }
                    held
                }
                None => Err(E::custom("read once")),
            },
        )
    }

    /// A part's items (or members) ended: the second pass writes what follows it.
    fn end(&self) {
        let mut walk = self.shape.walk.borrow_mut();
        if walk.writing {
            walk.list_done();
        }
    }
}

impl InParts<'_> {
    /// [`Stop::ByNames`]: `json` judged as written by a stream reader keeping no value (where
    /// it may fit so: `as_written`); when it does not fit so, read again, fitted as coercion fits the whole value and written whether
    /// refused or not, and that text judged by such a reader
    /// ([`StreamReader::changes_only`], which reports what the validator of record says of the
    /// whole value, judging an untagged enum's object against each branch from its text). The
    /// value's text, or why it is refused; `None` where the stream cannot judge it (read whole).
    fn judged_as_streamed(
        &self,
        json: &str,
        compact: bool,
        as_written: bool,
        attempt: &mut Attempt<'_, '_>,
        options: &ParseOptions,
    ) -> Option<Result<String, Violations>> {
        // As written first, where it may fit so: a value valid so is not fitted.
        if let Some(text) = as_written
            .then(|| self.valid_as_streamed(json, compact))
            .flatten()
        {
            return Some(Ok(text));
        }
        let mut out = Vec::new();
        self.write_refused.set(true);
        let read = self.read(
            json,
            &attempt.repairs,
            Some(&options.coerce),
            Some(&mut out),
        );
        self.write_refused.set(false);
        let read = read.ok()?;
        attempt.recoveries = read.recoveries.into_vec();
        let text = match read.changed {
            true => out,
            false => as_serde_writes(Cow::Borrowed(json), compact)?.into_bytes(),
        };
        // (The text lent to the reader and given back: judged without a copy.)
        let (violations, complete, text) = StreamReader::judge_whole(self.schema, text);
        if !complete {
            return None;
        }
        if !violations.is_empty() {
            return Some(Err(Violations(violations)));
        }
        if !read.as_text.is_empty() {
            return Some(Err(Violations(read.as_text)));
        }
        String::from_utf8(text).ok().map(Ok)
    }

    /// `json`'s text as `serde_json` writes it, when a stream reader keeping no value finds it
    /// valid as written (the text lent to the reader and given back).
    fn valid_as_streamed(&self, json: &str, compact: bool) -> Option<String> {
        let text = as_serde_writes(Cow::Borrowed(json), compact)?.into_bytes();
        let (violations, complete, text) = StreamReader::judge_whole(self.schema, text);
        if !complete || !violations.is_empty() {
            return None;
        }
        String::from_utf8(text).ok()
    }
}

/// `json` (one JSON value) as `serde_json` writes it: itself when it is known to be written so
/// (`compact`), else written again by the strict reader.
fn as_serde_writes(json: Cow<'_, str>, compact: bool) -> Option<String> {
    match compact {
        true => Some(json.into_owned()),
        false => strict_de::json_from_str(&json),
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
        // Judged as written first (nothing is changed, so the text is the value's); the text is
        // written out, as the strict reader writes it, only for a value that fits.
        match self.read(json, &[], None, None) {
            Ok(_) => strict_de::json_from_str(json),
            // (Another variant may take it: judged as the whole value's check judges it.)
            Err(Stop::ByNames(_)) => self.valid_as_streamed(json, false),
            // Judged only whole: so when it is short enough to hold (else its candidate is
            // refused as too long when judged).
            Err(Stop::GaveUp) => match holds_within(json.as_bytes(), self.max_whole) {
                Some(true) => Untyped(self.schema).exact(json).map(|v| v.to_string()),
                Some(false) => self.declined(Pointer::root(), Some(json.len())),
                None => None,
            },
            Err(Stop::TooLarge(at)) => self.declined(at, None),
            Err(_) => None,
        }
    }
    /// Why not is worked out on the whole value, only when the answer is refused (and short
    /// enough to hold whole).
    fn explained(&self, json: &str) -> Result<String, String> {
        match self.exact(json) {
            Some(text) => Ok(text),
            None if holds_within(json.as_bytes(), self.max_whole) == Some(false) => Err(format!(
                "{} bytes of JSON, longer than the {} a value is held whole to",
                json.len(),
                self.max_whole
            )),
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
            .map(|parsed| parsed.map(|value| value.to_string()))
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
            value: (json, compact),
            repairs,
            truncated,
        } = repaired_as_allowed(candidate, options, repaired_text)?;
        self.compact.set(compact);
        let mut attempt = Attempt {
            candidate,
            repairs,
            truncated,
            recoveries: Vec::new(),
            partial: truncated.then_some(Value::Null),
        };
        let mut out = Vec::new();
        let read = match self.read(
            &json,
            &attempt.repairs,
            Some(&options.coerce),
            Some(&mut out),
        ) {
            Ok(read) => read,
            Err(Stop::ByNames(as_written)) => {
                let judged =
                    self.judged_as_streamed(&json, compact, as_written, &mut attempt, options);
                return match judged {
                    Some(Ok(text)) => valid(attempt, text),
                    Some(Err(violations)) => invalid(attempt, Value::Null, violations),
                    None => self.whole(candidate, options),
                };
            }
            Err(Stop::TooLarge(at)) => {
                return Err(Unjudged::TooLarge {
                    at,
                    bytes: None,
                    limit: self.max_whole,
                })
            }
            Err(_) => return self.whole(candidate, options),
        };
        attempt.recoveries = read.recoveries.into_vec();
        if !read.violations.is_empty() {
            return invalid(attempt, Value::Null, Violations(read.violations));
        }
        if !read.as_text.is_empty() {
            return invalid(attempt, Value::Null, Violations(read.as_text));
        }
        if !read.changed {
            // The value's text is the text read, as `serde_json` writes it.
            return match as_serde_writes(json, compact) {
                Some(text) => valid(attempt, text),
                None => self.whole(candidate, options),
            };
        }
        match String::from_utf8(out) {
            Ok(text) => valid(attempt, text),
            Err(_) => self.whole(candidate, options),
        }
    }
}

impl InParts<'_> {
    /// JSON asked whether it is exactly a valid value, too long to tell: noted where and how
    /// long (what is chosen without it is not the reading's), and not taken.
    fn declined(&self, at: Pointer, bytes: Option<usize>) -> Option<String> {
        self.declined.borrow_mut().get_or_insert((at, bytes));
        None
    }

    /// A candidate that cannot be read in parts, judged as [`parse_value`] judges it (a whole
    /// `Value`) when it holds no more than its limit allows (its text that short, or as few
    /// values: a long string is one); else refused as too long.
    fn whole<'c, 'a>(
        &self,
        candidate: &'c Candidate<'a>,
        options: &ParseOptions,
    ) -> Verdict<'c, 'a, String> {
        let held = |text: &str| holds_within(text.as_bytes(), self.max_whole);
        let within = held(candidate.text).unwrap_or_else(|| {
            // (Not JSON as written: repaired into text, about its size, to be counted.)
            repaired_json(candidate.text).map_or(true, |r| held(&r.value) != Some(false))
        });
        if !within {
            return Err(Unjudged::TooLarge {
                at: Pointer::root(),
                bytes: Some(candidate.text.len()),
                limit: self.max_whole,
            });
        }
        let (rank, judged) = judge_common(&Untyped(self.schema), candidate, options)?;
        Ok((rank, judged.map(|value| value.to_string())))
    }
}

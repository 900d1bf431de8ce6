//! Reading an answer while it arrives: chunks of any size in, the value so far and the fields
//! completed out, in one pass over the bytes.
//!
//! [`StreamReader`] finds where the JSON starts (prose or a fence opener before it are passed
//! over; a tool call's argument deltas are JSON from the first byte), then lexes it a byte at a
//! time, keeping its state between chunks: a chunk may end inside a UTF-8 character, an escape,
//! a number or a literal. Each byte is looked at once, each value is built once and moved into
//! its parent when it closes, so the work over a whole stream is linear in its length whatever
//! the chunk size.
//!
//! What the value so far shows ([`StreamReader::value`]):
//! - a number, `true`, `false`, `null` or a string the schema constrains (an enum value, a
//!   pattern, a format) only once complete: never `1` for `12`, never `"lo"` for `"low"`;
//! - a string of free text as far as it has arrived;
//! - an object or list as far as its members are.
//!
//! Each chunk also gives its [`Change`]s (a value set, free text appended): applied in turn
//! (to a [`crate::StreamView`], which finds each from where the last one went), they keep a copy
//! of the value so far at a cost that grows with what changed, so keeping the value after every
//! chunk stays linear too. The root object or list is shown once its first key
//! or item has been read, so a brace in the prose before the JSON is never shown.
//!
//! Once a field completes it never changes. Each completed value is checked against the schema
//! node it sits at, so a broken rule is reported with its path as soon as the value is written
//! ([`StreamProgress::violations`]); the Rust type's own checks (`#[validate(with = ..)]`) run on the
//! whole value. The final value is what [`crate::parse_response`] makes of the whole text, with
//! the same checks, provenance and warnings (see [`StreamReader::text`]).
//!
//! JSON that only repair could read (single quotes, a trailing comma, a comment) stops the
//! partial value where it stands ([`StreamStatus::Unreadable`]); the final reading repairs it as
//! usual. A brace in the prose before the JSON is passed over: reading starts again at the next
//! opener, a bounded number of times, while nothing has been reported.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::read::fingerprint::{fingerprint, Fingerprints};
use crate::read::held::{holds_within, values_within, Skeleton, MAX_WHOLE};
use crate::read::repair::{hex4, surrogate_pair};
use crate::schema::checks::asserts_nothing;
use crate::schema::node::{entry, JsonType, Node, Types};
use crate::schema::pointer::edit_at;
use crate::schema::validate::{preview_list, preview_object, Violation, MAX_VIOLATIONS};
use crate::schema::validation::ScalarRules;
use crate::schema::{Pointer, ResponseSchema};

/// Free text is kept from the first chunk in room for this many bytes (it then grows as any
/// string does): it arrives a few bytes at a time, and growing from nothing took four
/// allocations for a 60-byte description.
pub(crate) const FREE_TEXT_START: usize = 64;

/// Starts over at a later opener at most this often (a brace in the prose before the JSON).
const MAX_RESTARTS: u32 = 16;

/// A member read before its object's variant was named is judged by a reader of its own
/// ([`StreamReader::judge_text`]) within at most this many others. Each reads its member's text
/// again, so a stream's text is read at most this many times more; a variant whose tag comes
/// after its bulk inside the members of this many others written the same way is read whole.
const MAX_JUDGES_WITHIN: u8 = 8;

/// An object at an `anyOf` whose variants only its names tell apart (an untagged enum,
/// [`Variant::by_names`]) is judged when it closes against each branch in turn, its text read
/// again by a reader of its own per branch. Such objects inside each other multiply the reads:
/// past this many reads of one text in all, the object is held whole and judged as a value.
const MAX_BRANCH_READS: u32 = 16;

/// The pieces a reader judging a member is fed: what it reports of each piece is all it holds
/// beside the text.
const JUDGE_PIECE: usize = 64 * 1024;

/// Objects and lists nested deeper than this are refused where the limit is crossed: the
/// reader's own limit ([`crate::read::repair::MAX_DEPTH`]), so the stream and the final reading
/// agree, and the work and memory a stream costs stay linear in its length.
pub const MAX_STREAM_DEPTH: usize = crate::read::repair::MAX_DEPTH;

/// Where reading the stream is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamStatus {
    /// No JSON yet: prose, or nothing.
    Waiting,
    /// Inside the JSON value.
    Reading,
    /// The value is complete; what follows is not read.
    Complete,
    /// The value is complete, and another one began after it (a second object or list): the
    /// final reading ([`crate::parse_response`]) chooses among them, so the value shown may
    /// be a draft the answer went on to replace.
    AnotherValue,
    /// The JSON is not readable as written (it needs repair); no more partial values. The
    /// final reading of the whole text still repairs it.
    Unreadable,
    /// An object or list opened deeper than [`MAX_STREAM_DEPTH`]: nothing more is read (the
    /// final reading refuses the answer as too deep).
    TooDeep,
}

/// What one chunk changed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreamProgress<'r> {
    /// The pointers of the values completed by this chunk, innermost first (a value before the
    /// object that closes around it).
    pub completed: &'r [Pointer],
    /// Rules broken by the values completed by this chunk, each with its path: at most
    /// [`MAX_VIOLATIONS`] over a stream, then one entry at the root saying the rest is not
    /// listed (the final reading judges the whole answer).
    pub violations: &'r [Violation],
    /// The changes to the value so far, in order (see [`Change`]): a consumer that applies
    /// them keeps the value so far in step at a cost linear in the answer.
    pub changes: &'r [Change],
    /// Whether the value so far changed (a value completed, an object or list opened, or free
    /// text grew).
    pub changed: bool,
    /// Where reading is after this chunk.
    pub status: StreamStatus,
}

/// A container being read.
struct Frame<'s> {
    /// Where it is in the value.
    path: Pointer,
    /// Its schema node, when one is known without choosing an `anyOf` branch.
    node: Option<Node<'s>>,
    /// Where its members' nodes are, found once when it opened.
    members: Members<'s>,
    body: Body,
    /// Its members are kept whole: the value so far is kept, or this container's own check
    /// (or an enclosing one's) reads them. Else a completed member is kept as `null` in an
    /// object (its key is what the checks read) and only counted in a list.
    keep: bool,
    /// Items of a list completed and not kept.
    dropped: usize,
    /// An object kept without the names of its members that no check of its schema reads.
    named: Option<Named<'s>>,
    /// A list whose items must differ (`uniqueItems`), kept without its items: each item's
    /// print and where it starts in the text.
    unique: Option<Unique>,
    /// An object at an `anyOf` whose variant one of its members names.
    variant: Option<Variant<'s>>,
    /// Of a kind its node does not allow: its members are read at no node and kept by nothing,
    /// and its report, when it closes, is its type and how many members it has.
    refused: bool,
    /// Values and keys its body holds, those of its kept members included (a reader keeping
    /// no value counts them against [`StreamReader::max_whole`]).
    held: usize,
    /// Its kept members were dropped when the reader held more than it may: its own check
    /// (and any that reads it) is left to the final reading.
    unheld: bool,
}

/// An object at an `anyOf` whose branches that take objects each name their variant by a tag or
/// by their one key ([`crate::schema::parts::decides`]: how derived enums with data are
/// written). Such an object is refused by every other branch, so the `anyOf` takes it exactly
/// when the branch it names does, and its report is that branch's.
///
/// Until a member names a branch ([`Node::named_by_member`]: the tag's value read, or the
/// variant's key) its members are read with no node, judged by nothing and kept by nothing but
/// where their text lies. Once one does, the members read before are judged by the branch's
/// nodes, each read again from its text by a reader of its own ([`StreamReader::judge_text`]),
/// and the later ones are read at the branch's nodes and judged as they complete, as in any
/// object; the object's own check when it closes is the branch's own keywords. A tag written
/// after the bulk thus costs a second reading of it, not its value held. An object whose
/// members name no branch is refused by every branch: among two or more that take objects, in
/// the `anyOf`'s one violation, which shows only how many members it has. When only one branch
/// takes objects it judges every object, and is chosen when the object opens.
struct Variant<'s> {
    /// The `anyOf`'s node.
    at: Node<'s>,
    /// Only the object's names tell the branches taking objects apart (an untagged enum,
    /// [`crate::schema::parts::apart_by_names`]): no member names a branch. When the object
    /// closes, its text is read again at each branch in turn, as the check of the whole value
    /// judges the branches, and its report is the one that check gives
    /// ([`crate::schema::validation::refusal_of_branches`]), without the value held.
    by_names: bool,
    /// The branch a member named.
    chosen: Option<Node<'s>>,
    /// The object's members are kept whole for a reason beside the variant (the value so far
    /// is kept, or an enclosing check reads them).
    kept_above: bool,
    /// Where the object starts in the text.
    base: usize,
    /// Where each member read before a branch was named lies, from the object's start: its
    /// key's opening quote, its value's first byte and the end of its value (12 bytes a member).
    before: Vec<[u32; 3]>,
    /// A member read before the branch was named ends more than 4 GiB after the object starts:
    /// the members are no longer noted, and the stream leaves those and the object's own
    /// keywords to the final reading.
    too_far: bool,
    /// Where the key of the member being read starts, and its value.
    key_from: usize,
    value_from: usize,
}

/// The branch of the `anyOf` at `at` that takes lists, if any (where the kind of value decides
/// the branch, at most one does).
fn list_branch(at: Node<'_>) -> Option<Node<'_>> {
    at.any_of()?
        .find(|b| b.target().types().contains(JsonType::Array))
}

/// The branches of the `anyOf` at `at` that take objects.
fn object_branches<'s>(at: Node<'s>) -> impl Iterator<Item = Node<'s>> {
    at.any_of()
        .into_iter()
        .flatten()
        .filter(|b| b.target().types().contains(JsonType::Object))
}

impl<'s> Variant<'s> {
    /// An object opening at the `anyOf` `at`: its branch chosen now when only one takes objects.
    fn at(at: Node<'s>, kept_above: bool, base: usize, by_names: bool) -> Variant<'s> {
        let mut objects = object_branches(at);
        let chosen = match (objects.next(), objects.next()) {
            (Some(only), None) if !by_names => Some(only),
            _ => None,
        };
        Variant {
            at,
            by_names,
            chosen,
            kept_above,
            base,
            before: Vec::new(),
            too_far: false,
            key_from: 0,
            value_from: 0,
        }
    }

    /// Notes where a member read before the branch was named lies (it ends at `to`).
    fn note(&mut self, to: usize) {
        // (Judged from the object's whole text when it closes.)
        if self.too_far || self.by_names {
            return;
        }
        let from_base = |at: usize| u32::try_from(at.saturating_sub(self.base)).ok();
        match (
            from_base(self.key_from),
            from_base(self.value_from),
            from_base(to),
        ) {
            (Some(key), Some(value), Some(end)) => self.before.push([key, value, end]),
            _ => {
                self.too_far = true;
                self.before = Vec::new();
            }
        }
    }

    fn open(&self) -> bool {
        self.chosen.is_none()
    }

    /// The branch the member `name` (holding `value`; `None`: not read yet) names.
    fn named_by(&self, name: &str, value: Option<&Value>) -> Option<Node<'s>> {
        if self.by_names {
            return None;
        }
        self.at.any_of()?.find(|b| b.named_by_member(name, value))
    }
}

/// The items of a list that must differ, as a reader keeping no value notes them: a 32-bit
/// print of each ([`crate::schema::parts::print`] folded: repeats share one) and where it starts
/// in the text, 8 bytes an item. When the list closes, items whose prints meet are read again
/// from the text and compared as the check compares them, so the report is the one a reader
/// keeping the items gives: the first item that repeats an earlier one. (Among a million
/// distinct items about a hundred pairs share a print by chance: each pair costs reading its two
/// items again, not a wrong report.)
struct Unique {
    /// Where the list starts in the text.
    base: usize,
    /// Each item read, in order.
    items: Vec<Noted>,
    /// Where the item being read starts.
    next: usize,
    /// An item started more than 4 GiB after the list: the items are no longer noted, and the
    /// stream leaves `uniqueItems` to the final reading.
    too_long: bool,
}

/// One item of a list kept as prints: its print, and where it starts from the list's start.
#[derive(Clone, Copy)]
struct Noted {
    print: u32,
    from: u32,
}

/// An item's print ([`crate::schema::parts::print`]) folded to the 32 bits a [`Noted`] keeps.
fn folded_print(item: &Value) -> u32 {
    let print = crate::schema::parts::print(item);
    (print ^ (print >> 32)) as u32
}

/// The members of an object kept without their names: the fingerprints of the names completed,
/// so [`StreamReader::is_complete`] still answers. A name the object's `required` lists is kept
/// (with `null`), for that check.
struct Named<'s> {
    prints: Fingerprints,
    /// The names `required` lists, sorted ([`Reads::required`]: shared by every object read at
    /// one node).
    required: Arc<[&'s str]>,
    /// At a node whose own check reads nothing but `required` of its members
    /// ([`checks_only_required`]; 64 names at most): which of those names were met, a bit each
    /// by their place in `required`, instead of each kept in the object with `null`. When the
    /// object closes with every one met, its own check has nothing to find.
    met: Option<u64>,
}

/// The names `required` lists at `node`, beside a reference and at its target alike
/// ([`Node::chain`]), sorted by [`by_length`], each once.
fn required_sorted<'s>(node: Option<Node<'s>>) -> Arc<[&'s str]> {
    let mut required: Vec<&str> = node
        .into_iter()
        .flat_map(Node::chain)
        .flat_map(Node::required)
        .collect();
    required.sort_unstable_by(|a, b| by_length(a, b));
    required.dedup();
    required.into()
}

/// Names ordered by length, then by their bytes: a search among a few names compares lengths
/// and looks at the bytes of a name of the same length only.
fn by_length(a: &str, b: &str) -> std::cmp::Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

impl<'s> Named<'s> {
    fn with(required: Arc<[&'s str]>) -> Named<'s> {
        Named {
            prints: Fingerprints::default(),
            required,
            met: None,
        }
    }

    /// Noting the required names met as bits ([`Named::met`]).
    fn noting_met(self) -> Named<'s> {
        let met = (self.required.len() <= 64).then_some(0);
        Named { met, ..self }
    }

    /// Where `name` is in `required`, if there.
    fn place(&self, name: &str) -> Option<usize> {
        self.required.binary_search_by(|r| by_length(r, name)).ok()
    }

    fn keeps(&self, name: &str) -> bool {
        self.place(name).is_some()
    }

    /// Notes `name`, a name `required` lists, as met: `false` when names are kept in the object
    /// instead.
    fn meet(&mut self, name: &str) -> bool {
        let Some(met) = self.met else { return false };
        let Some(i) = self.place(name) else {
            return false;
        };
        self.met = Some(met | 1 << i);
        true
    }

    /// Whether `name` was met (its member completed) and is not in the object.
    fn has(&self, name: &str) -> bool {
        let met = self
            .met
            .is_some_and(|met| self.place(name).is_some_and(|i| met & (1 << i) != 0));
        met || (!self.prints.is_empty() && self.prints.contains(fingerprint(name)))
    }

    /// Whether every required name was met, noted as bits; if not, those met are put in `map`
    /// (with `null`), as they are kept without bits, for the object's own check to read.
    fn settle(&mut self, map: &mut Map<String, Value>) -> bool {
        let Some(met) = self.met.take() else {
            return false;
        };
        if met.count_ones() as usize == self.required.len() {
            return true;
        }
        for (i, name) in self.required.iter().enumerate() {
            if met & (1 << i) != 0 {
                map.insert((*name).to_owned(), Value::Null);
            }
        }
        false
    }
}

/// Keywords of an object's own check that read all its members' names (`required` reads only
/// the names it lists).
/// (`propertyNames` judges each name as its member completes, and the property counts are
/// given the count of names not kept.)
const READ_NAMES: &[&str] = &["dependentRequired"];

/// Whether a node allowing `types` (its target's `type`) lets a value be of `kind`: when it
/// does not, the report of the value is its type and how many members it has.
fn allows(types: Option<Types>, kind: JsonType) -> bool {
    types.is_none_or(|types| types.is_empty() || types.contains(kind))
}

/// Whether the own check of an object at `node` reads its members' names.
fn reads_names(node: Option<Node<'_>>) -> bool {
    let Some(node) = node else { return false };
    let reads = |n: Node<'_>| {
        // (`additionalProperties: false` is judged as each member completes.)
        n.map()
            .is_some_and(|keywords| keywords.keys().any(|k| READ_NAMES.contains(&k.as_str())))
    };
    // (Every node on the way to the target: a reference's siblings judge beside it.)
    node.chain().any(reads)
}

/// Keywords a container's own check reads from its members' keys or count only: a container
/// whose node has no other keeps no member value when the reader keeps no value so far
/// ([`StreamReader::changes_only`]).
const READ_WITHOUT_MEMBERS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    // Not judged by a container's own check as the stream reads (the final reading judges
    // them): nothing of the members is needed for them here.
    "contains",
    "minContains",
    "maxContains",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    // (Reads names only: kept for it by [`reads_names`].)
    "dependentRequired",
    "$defs",
    "definitions",
    "$schema",
];

/// Whether the own check of an object at `node` ([`crate::schema::validation::explain_own`]),
/// its members each judged as they completed, can find nothing wrong but a name `required`
/// lists missing: its keywords are `type` (an object it does not take is refused before it is
/// read so), `properties` and `additionalProperties` (each member judged as it completes, an
/// undeclared one refused then), `required`, and what asserts nothing. A derived struct's
/// schema is such.
fn checks_only_required(node: Option<Node<'_>>) -> bool {
    let only = |n: Node<'_>| {
        n.map().is_some_and(|keywords| {
            keywords.keys().all(|k| {
                matches!(
                    k.as_str(),
                    "type"
                        | "properties"
                        | "additionalProperties"
                        | "required"
                        | "$ref"
                        | "$defs"
                        | "definitions"
                        | "$schema"
                ) || asserts_nothing(k)
            })
        })
    };
    node.is_some_and(|n| n.chain().all(only))
}

/// Whether the own check of a container at `node` reads its members' values (an `enum`, a
/// `const`, repeated items, a branch to choose, ...).
fn reads_members(node: Option<Node<'_>>) -> bool {
    reads_members_beside(node, &[])
}

/// Whether the own check of a container at `node` reads its members' values, for a keyword
/// other than `beside`.
fn reads_members_beside(node: Option<Node<'_>>, beside: &[&str]) -> bool {
    let Some(node) = node else { return false };
    let needs = |n: Node<'_>| {
        // (A reference, or an `allOf` of one schema, says what its target says.)
        let step = |k: &str| k == "$ref" || (k == "allOf" && n.sole_all_of().is_some());
        n.map().is_some_and(|keywords| {
            keywords.iter().any(|(k, value)| {
                if step(k)
                    || READ_WITHOUT_MEMBERS.contains(&k.as_str())
                    || beside.contains(&k.as_str())
                    || asserts_nothing(k)
                {
                    return false;
                }
                // An `allOf` reads what its branches read.
                match (k.as_str(), value) {
                    ("allOf", Value::Array(branches)) if !n.too_deep() => branches
                        .iter()
                        .any(|b| reads_members_beside(Some(n.child(b)), beside)),
                    _ => true,
                }
            })
        })
    };
    // (Every node on the way to the target: a reference's siblings judge beside it.)
    node.chain().any(needs)
}

/// Whether a list at `node` is kept by a reader keeping no value as its items' prints only: its
/// own check reads its items for `uniqueItems` alone.
fn unique_by_prints(node: Option<Node<'_>>) -> bool {
    let Some(at) = node else { return false };
    let target = at.target();
    // Every node on the way to the target only leads on (a reference or an `allOf` of one,
    // alone): where one asserts beside its reference, the whole value's check walks its rules
    // and the target's in its own order, so the items are kept whole and a repeat is found in
    // that walk (reported in the same order).
    let leads_on = |on: Node<'_>| {
        std::ptr::eq(on.value(), target.value()) || on.alone("$ref") || on.alone("allOf")
    };
    target.get("uniqueItems") == Some(&Value::Bool(true))
        && at.chain().all(leads_on)
        && !reads_members_beside(node, &["uniqueItems"])
}

/// Where a container's members find their schema nodes, looked up once when it opens (not
/// per member): its node with `$ref` followed. Not at a node with `anyOf`: a branch is chosen
/// by the whole value's check, so members are left to it (or to the branch a variant's member
/// names).
#[derive(Clone, Copy, Default)]
struct Members<'s> {
    node: Option<Node<'s>>,
    properties: Option<&'s Map<String, Value>>,
    /// `additionalProperties` as a schema.
    additional: Option<Node<'s>>,
    /// It has `patternProperties`: a member's node is the one its name chooses
    /// ([`Node::member`]).
    patterns: bool,
    /// It allows no member it does not declare (`additionalProperties: false`) beside those
    /// its patterns match.
    closed: bool,
    prefix: &'s [Value],
    items: Option<Node<'s>>,
    /// `propertyNames`: each member's name is judged by it as the member completes.
    names: Option<Node<'s>>,
}

impl<'s> Members<'s> {
    /// The members' nodes of a container at `node`, which has no `anyOf` (its branch chosen):
    /// its keywords read in one pass (no lookup per keyword, none per member).
    fn of(node: Option<Node<'s>>) -> Self {
        let Some(node) = node.map(Node::target) else {
            return Members::default();
        };
        let mut members = Members {
            node: Some(node),
            ..Members::default()
        };
        let (mut additional, mut closed, mut patterns) = (None, false, false);
        for (keyword, value) in node.map().into_iter().flatten() {
            match keyword.as_str() {
                "properties" => members.properties = value.as_object(),
                "additionalProperties" => match value {
                    Value::Bool(allowed) => closed = !allowed,
                    schema => additional = Some(node.child(schema)),
                },
                "patternProperties" => patterns = true,
                "prefixItems" => members.prefix = value.as_array().map_or(&[], Vec::as_slice),
                "items" if value.is_object() || value.is_boolean() => {
                    members.items = Some(node.child(value));
                }
                "propertyNames" => members.names = Some(node.child(value)),
                _ => {}
            }
        }
        members.additional = additional;
        members.patterns = patterns;
        members.closed = closed;
        members
    }

    /// The node of member `key` (as [`Node::member`]: its property's, its pattern's, else
    /// `additionalProperties`; a member several patterns match has none here and is left to
    /// the final reading).
    fn property(&self, key: &str) -> Option<Node<'s>> {
        let node = self.node?;
        match self.properties.and_then(|p| entry(p, key)) {
            Some(schema) => Some(node.child(schema)),
            None if self.patterns => node.member(key),
            None => self.additional,
        }
    }

    /// The object's node when it allows no member it does not declare and `key` is one (no
    /// property names it, no pattern matches it).
    fn undeclared(&self, key: &str) -> Option<Node<'s>> {
        let node = self.node?;
        let declared = self.properties.is_some_and(|p| entry(p, key).is_some());
        let additional = !declared && (!self.patterns || node.is_additional(key));
        (self.closed && additional).then_some(node)
    }

    /// The node of item `index` (as [`Node::item`]).
    fn item(&self, index: usize) -> Option<Node<'s>> {
        let node = self.node?;
        match self.prefix.get(index) {
            Some(schema) => Some(node.child(schema)),
            None => self.items,
        }
    }
}

enum Body {
    /// An object and the key whose value is being read.
    Object(Map<String, Value>, Option<String>),
    Array(Vec<Value>),
}

impl Body {
    /// How this container is first shown: empty.
    fn empty(&self) -> Value {
        match self {
            Body::Object(..) => Value::Object(Map::new()),
            Body::Array(_) => Value::Array(Vec::new()),
        }
    }
}

/// What the lexer expects next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lex {
    /// Before the JSON.
    Seeking,
    /// A value (after `:` or `,` in a list).
    Value,
    /// A value or `]` (after `[`).
    FirstItem,
    /// A key (after `,` in an object).
    Key,
    /// A key or `}` (after `{`).
    FirstKey,
    /// `:` after a key.
    Colon,
    /// `,` or the close of the container, after a value.
    After,
    /// Inside a string: a key or a value; after a backslash.
    Str { key: bool, escaped: bool },
    /// Inside a number.
    Number,
    /// Inside `true`, `false` or `null`.
    Literal,
    /// After the root closed.
    Done,
    /// After the root closed, another value began.
    Another,
    /// Not readable as written.
    Lost,
    /// Nested deeper than [`MAX_STREAM_DEPTH`].
    TooDeep,
}

/// Reads one answer as it arrives; see the [module documentation](self).
///
/// ```
/// use structured_runtime::{StreamReader, StreamStatus, ResponseSchema};
/// use serde_json::json;
///
/// let schema = ResponseSchema::new("mood", json!({
///     "type": "object",
///     "properties": {
///         "label": {"type": "string", "enum": ["calm", "tense"]},
///         "note": {"type": "string"},
///         "level": {"type": "number", "maximum": 1}
///     },
///     "required": ["label", "note", "level"],
///     "additionalProperties": false
/// }))?;
/// let mut reader = StreamReader::new(&schema);
/// reader.feed(br#"Sure: {"label": "ca"#);
/// assert_eq!(reader.value(), json!({}));                 // an enum value shows once complete
/// let progress = reader.feed(br#"lm", "note": "all qu"#);
/// assert_eq!(progress.completed, ["/label"]);
/// assert_eq!(reader.value(), json!({"label": "calm", "note": "all qu"}));  // free text as it comes
/// let progress = reader.feed(br#"iet", "level": 1.5}"#);
/// assert_eq!(progress.violations[0].path, "/level");     // reported as soon as written
/// assert_eq!(progress.status, StreamStatus::Complete);
/// # Ok::<(), structured_runtime::SchemaError>(())
/// ```
pub struct StreamReader<'s> {
    schema: &'s ResponseSchema,
    /// The node the value read is judged at: the schema's root, or, for a reader judging a
    /// member read again ([`StreamReader::judge_text`]), the member's.
    root_node: Node<'s>,
    /// How many readers judging a member read again this one is inside.
    within: u8,
    /// How many times over the text this reader reads is read in all, for the objects it is
    /// inside that are judged against each of their branches ([`MAX_BRANCH_READS`]).
    reads: u32,
    /// How far into `text` to read now: all of it, but for a reader judging a member read
    /// again, which reads its piece of the text it borrows.
    until: usize,
    /// The value so far is kept ([`StreamReader::value`]); else only the changes say it.
    keep_value: bool,
    /// What the root may open with: `{`, `[`, either, or neither (read whole at the end).
    openers: (bool, bool),
    /// Every byte so far.
    text: Vec<u8>,
    /// Where the JSON being read starts in `text`.
    start: usize,
    /// Bytes of `text` read.
    read: usize,
    lex: Lex,
    frames: Vec<Frame<'s>>,
    /// The root, once closed.
    root: Option<Value>,
    /// The token being read (a string with its quotes, a number, a literal).
    token: Vec<u8>,
    /// The string being read when it is free text (shown while it arrives).
    free: Option<FreeText>,
    /// What changed in the value so far, in order, since the last chunk.
    changes: Vec<Change>,
    /// The last chunk's last change, when it added free text: its pointer and text are used
    /// again for the next piece of the same text (a token per chunk is what providers send, and
    /// a piece is appended per chunk).
    spare: Option<(Pointer, String)>,
    /// The root object or list has been shown. It is shown once its first key or item has
    /// been read, so a brace in the prose before the JSON is never shown and taken back.
    root_shown: bool,
    restarts: u32,
    /// A value of this reading was reported: starting over would take it back.
    reported: bool,
    completed: Vec<Pointer>,
    violations: Vec<Violation>,
    /// Paths already reported in a violation (a container's check may repeat its members'):
    /// at most [`MAX_VIOLATIONS`] are listed in a stream.
    violated: HashSet<Pointer>,
    changed: bool,
    /// What each schema node met so far says about a value read at it, worked out once per node
    /// (by its address in the schema this reader borrows).
    facts: HashMap<usize, Facts<'s>, BuildHasherDefault<AddressHasher>>,
    /// What the own check of a container at a schema node reads ([`Reads`]), worked out once
    /// per node, for a reader that keeps no value (one that keeps it never asks).
    own_reads: HashMap<usize, Reads<'s>, BuildHasherDefault<AddressHasher>>,
    /// Without the value so far: the longest text held whole ([`StreamReader::max_whole`]), and
    /// how many values and keys the open containers whose checks read their members hold (at
    /// most as many as that text may: [`values_within`]).
    max_whole: usize,
    held: usize,
    /// Where the first container whose kept members were dropped is: its checks are left to
    /// the final reading ([`StreamReader::unjudged`]).
    unheld: Option<Pointer>,
}

/// What a schema node says about a value read at it (a scalar, or a container opening), worked
/// out once.
#[derive(Clone, Copy)]
struct Facts<'s> {
    /// A string there may be shown before it ends ([`free_text`]).
    free_text: bool,
    /// An object there is judged by its own check only for `required`
    /// ([`checks_only_required`]).
    only_required: bool,
    /// What a scalar there is held to, when that is its type, an `enum` and a number's bounds
    /// alone: a scalar that keeps them breaks none of its rules, with no further look.
    scalar: Option<ScalarRules<'s>>,
    /// Its target has `anyOf`: a branch is chosen by the whole value's check.
    any_of: bool,
    /// Its target's `type`.
    types: Types,
    /// An object there names its variant by a member ([`Variant`]).
    decides: bool,
    /// Only an object's names tell its variants apart there ([`Variant::by_names`]), and how
    /// many branches its text is read again at.
    by_names: Option<u32>,
    /// There, some branch taking objects has an own check that reads its members' values, or
    /// all their names: an object there keeps them until its branch is named.
    variant_keeps: (bool, bool),
}

impl<'s> Facts<'s> {
    fn of(node: Node<'s>) -> Facts<'s> {
        let target = node.target();
        let objects = || object_branches(target);
        // (A branch choosing among branches of its own is judged whole.)
        let plain_branches = || {
            !objects()
                .chain(list_branch(target))
                .any(|b| b.target().any_of().is_some())
        };
        let decides = crate::schema::parts::decides(target) && plain_branches();
        let by_names = (crate::schema::parts::apart_by_names(target) && plain_branches())
            .then(|| target.any_of().map_or(0, Iterator::count))
            .and_then(|n| u32::try_from(n).ok())
            .filter(|&n| n <= MAX_BRANCH_READS);
        let variant_keeps = if decides {
            (
                objects().any(|b| reads_members(Some(b))),
                objects().any(|b| reads_names(Some(b))),
            )
        } else {
            (false, false)
        };
        Facts {
            free_text: free_text(node),
            only_required: checks_only_required(Some(node)),
            scalar: ScalarRules::of(node),
            any_of: target.any_of().is_some(),
            types: target.types(),
            decides,
            by_names,
            variant_keeps,
        }
    }
}

/// What the own check of a container at a schema node reads, which decides what a reader
/// keeping no value keeps of it.
#[derive(Clone)]
struct Reads<'s> {
    /// Its members' values ([`reads_members`]).
    members: bool,
    /// All its members' names ([`reads_names`]).
    names: bool,
    /// A list's items, for `uniqueItems` alone ([`unique_by_prints`]).
    unique_only: bool,
    /// The names its `required` lists, sorted.
    required: Arc<[&'s str]>,
}

impl<'s> Reads<'s> {
    fn of(node: Option<Node<'s>>) -> Reads<'s> {
        Reads {
            members: reads_members(node),
            names: reads_names(node),
            unique_only: unique_by_prints(node),
            required: required_sorted(node),
        }
    }
}

/// Hashes a schema node's address: one multiplication (the keys are addresses, not input).
#[derive(Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(26);
    }
}

impl<'s> StreamReader<'s> {
    /// What `node` says about a scalar read at it ([`Facts`]), worked out once per node.
    fn facts(&mut self, node: Node<'s>) -> Facts<'s> {
        *self
            .facts
            .entry(node.value() as *const Value as usize)
            .or_insert_with(|| Facts::of(node))
    }

    /// [`Reads`] at `node`; nothing at none.
    fn reads_at(&mut self, node: Option<Node<'s>>) -> Reads<'s> {
        match node {
            Some(at) => self
                .own_reads
                .entry(at.value() as *const Value as usize)
                .or_insert_with(|| Reads::of(node))
                .clone(),
            None => Reads::of(None),
        }
    }

    /// A reader for an answer to `schema`.
    pub fn new(schema: &'s ResponseSchema) -> Self {
        let root = Node::root(schema.schema()).target();
        let types = root.types();
        let either = root.any_of().is_some() || root.has("oneOf");
        let objects = types.contains(JsonType::Object) || either || types.is_empty();
        let lists = types.contains(JsonType::Array) || either;
        StreamReader {
            schema,
            root_node: Node::root(schema.schema()),
            within: 0,
            reads: 1,
            until: usize::MAX,
            keep_value: true,
            openers: (objects, lists),
            text: Vec::new(),
            start: 0,
            read: 0,
            lex: Lex::Seeking,
            frames: Vec::new(),
            root: None,
            token: Vec::new(),
            free: None,
            changes: Vec::new(),
            spare: None,
            root_shown: false,
            restarts: 0,
            reported: false,
            completed: Vec::new(),
            violations: Vec::new(),
            violated: HashSet::new(),
            changed: false,
            facts: HashMap::default(),
            own_reads: HashMap::default(),
            max_whole: MAX_WHOLE,
            held: 0,
            unheld: None,
        }
    }

    /// A reader keeping no value ([`StreamReader::changes_only`]) holds whole the containers
    /// whose checks read their members' values (an `enum` of objects, an `anyOf` whose
    /// branches only the whole value tells apart, ...) up to about `bytes` of their text
    /// ([`crate::read::parts::MAX_WHOLE`] unless set): past that it drops them, and their
    /// checks are left to the final reading ([`StreamReader::unjudged`] says where), so its
    /// memory stays bounded whatever the schema. A reader keeping the value so far holds it
    /// all, as asked.
    ///
    /// ```
    /// use serde_json::json;
    /// use structured_runtime::{ResponseSchema, StreamReader};
    ///
    /// let schema = ResponseSchema::new("pair", json!({"type": "object", "enum": [{"a": [1, 2]}, {"a": [3]}]}))?;
    /// let mut reader = StreamReader::changes_only(&schema).max_whole(16);
    /// let progress = reader.feed(br#"{"a": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}"#);
    /// assert!(progress.violations.is_empty()); // not judged: held past 16 bytes
    /// assert_eq!(reader.unjudged().map(|at| at.as_str()), Some(""));
    /// # Ok::<(), structured_runtime::SchemaError>(())
    /// ```
    pub fn max_whole(self, bytes: usize) -> Self {
        StreamReader {
            max_whole: bytes,
            ..self
        }
    }

    /// Where the first container is (or the container holding the value) whose checks this
    /// reader left to the final reading, having held more of it than it may
    /// ([`StreamReader::max_whole`]); `None` when every check was made.
    pub fn unjudged(&self) -> Option<&Pointer> {
        self.unheld.as_ref()
    }

    /// A reader that keeps no value so far: the consumer keeps its view by the changes each
    /// chunk gives ([`StreamProgress::changes`]), the way to follow a long answer. The reader
    /// then holds the text received and the containers being read, each completed member of a
    /// list only counted and of an object only named (unless a check of the schema reads
    /// their values: an `enum` of objects, an `anyOf` whose branches a member does not name
    /// as an enum's tag or key does), so its memory stays about the answer's size. An object
    /// at an enum with data is read at its variant's nodes once its tag or key is read; members
    /// read before the tag are kept as where their text lies and read again from it then. An
    /// object of an untagged enum is judged when it closes, its text read again at each variant
    /// ([`MAX_BRANCH_READS`]). Every check, violation and completion is reported as by
    /// [`StreamReader::new`]; [`StreamReader::value`] is `null`, [`StreamReader::partial`]
    /// `None`, and [`StreamReader::is_complete`] takes any path inside a completed member as
    /// complete.
    ///
    /// ```
    /// use serde_json::json;
    /// use structured_runtime::{ResponseSchema, StreamReader};
    ///
    /// let schema = ResponseSchema::new("rows", json!({
    ///     "type": "object",
    ///     "properties": {"rows": {"type": "array", "items": {"type": "integer"}, "maxItems": 2}},
    ///     "required": ["rows"]
    /// }))?;
    /// let mut reader = StreamReader::changes_only(&schema);
    /// let mut view = json!(null);
    /// let progress = reader.feed(br#"{"rows": [1, 2, 3]}"#);
    /// for change in progress.changes {
    ///     change.apply(&mut view);
    /// }
    /// assert_eq!(view, json!({"rows": [1, 2, 3]}));
    /// assert_eq!(progress.violations[0].path, "/rows"); // 3 items, 2 at most
    /// assert_eq!(reader.value(), json!(null));
    /// # Ok::<(), structured_runtime::SchemaError>(())
    /// ```
    pub fn changes_only(schema: &'s ResponseSchema) -> Self {
        StreamReader {
            keep_value: false,
            ..StreamReader::new(schema)
        }
    }

    /// What a reader keeping no value ([`StreamReader::changes_only`]) reports of `text`, one
    /// JSON value, read to its end: its violations, whether it ended complete, and the text
    /// back. The text is lent to the reader (not copied) and read a piece at a time: what it
    /// reports of each piece is all it holds beside the text. For judging a value written out
    /// whole as a stream judges it (`read::parts`).
    pub(crate) fn judge_whole(
        schema: &'s ResponseSchema,
        text: Vec<u8>,
    ) -> (Vec<Violation>, bool, Vec<u8>) {
        let mut reader = StreamReader {
            text,
            ..StreamReader::changes_only(schema)
        };
        let mut found = Vec::new();
        while reader.read < reader.text.len() && reader.status() != StreamStatus::Complete {
            let before = reader.read;
            reader.until = reader.read.saturating_add(JUDGE_PIECE);
            reader.run();
            found.append(&mut reader.violations);
            reader.changes.clear();
            reader.completed.clear();
            if reader.read == before {
                break;
            }
        }
        found.append(&mut reader.violations);
        // (A check left to the final reading: not judged here.)
        let complete = reader.status() == StreamStatus::Complete && reader.unheld.is_none();
        (found, complete, std::mem::take(&mut reader.text))
    }

    /// Reads the next chunk: any bytes, cut anywhere.
    pub fn feed(&mut self, chunk: &[u8]) -> StreamProgress<'_> {
        self.take(chunk, None)
    }

    /// [`StreamReader::feed`] of a chunk of text, as a provider's stream gives the answer (each
    /// event's piece of it, decoded): the same changes, and a chunk of free text is not checked
    /// to be UTF-8 again.
    ///
    /// ```
    /// use structured_runtime::{read::Change, ResponseSchema, StreamReader};
    /// use serde_json::json;
    ///
    /// let schema = ResponseSchema::new("note", json!({
    ///     "type": "object",
    ///     "properties": {"note": {"type": "string"}},
    ///     "required": ["note"],
    ///     "additionalProperties": false
    /// })).unwrap();
    /// let mut reader = StreamReader::new(&schema);
    /// reader.feed_str(r#"{"note": "caf"#);
    /// let progress = reader.feed_str("é au lait");
    /// assert!(matches!(&progress.changes[..], [Change::Append { text, .. }] if text == "é au lait"));
    /// ```
    pub fn feed_str(&mut self, chunk: &str) -> StreamProgress<'_> {
        self.take(chunk.as_bytes(), Some(chunk))
    }

    /// The next chunk read; `text`: the chunk, when it is known to be text. (Inlined into both
    /// callers, with its two free-text steps: left to the compiler, they were called, and a
    /// chunk of free text cost 5 % more.)
    #[inline(always)]
    fn take(&mut self, chunk: &[u8], text: Option<&str>) -> StreamProgress<'_> {
        self.completed.clear();
        self.violations.clear();
        self.changed = false;
        self.text.extend_from_slice(chunk);
        if self.free.is_none() && matches!(self.lex, Lex::Another | Lex::Lost | Lex::TooDeep) {
            // Nothing more is read (what `run` does here), no free text is left to decode, and
            // none will come.
            self.changes.clear();
            self.read = self.text.len();
        } else {
            // (Whether the chunk is plain free text is asked once: clearing the changes does
            // not change the answer.)
            let plain = self.plain_chunk(chunk, text);
            if !plain.is_some_and(|text| self.append_in_place(text)) {
                if let Some(Change::Append { at, text }) = self.changes.pop() {
                    self.spare = Some((at, text));
                }
                self.changes.clear();
                match plain {
                    Some(text) => self.plain_free_text(text),
                    None => {
                        self.run();
                        self.decode_free_text();
                    }
                }
            }
        }
        StreamProgress {
            completed: &self.completed,
            violations: &self.violations,
            changes: &self.changes,
            changed: self.changed,
            status: self.status(),
        }
    }

    /// Whether the value at `at` (a pointer into the value so far) is complete: it will not
    /// change again. Free text being read, and an object or list still open, are not. Costs the
    /// length of `at`: what is complete is read off the containers being read, not kept.
    pub fn is_complete(&self, at: &Pointer) -> bool {
        if let Some(root) = &self.root {
            // Without the value kept, the whole value is complete.
            return !self.keep_value || at.get(root).is_some();
        }
        if !self.root_shown || self.frames.is_empty() {
            return false;
        }
        // Follow `at` down the open containers; where it leaves them, it names a member that
        // has closed (complete) or one not shown yet.
        let segments: Vec<_> = at.segments().collect();
        for (depth, frame) in self.frames.iter().enumerate() {
            let Some(segment) = segments.get(depth) else {
                // `at` is this open container.
                return false;
            };
            let inner = self.frames.get(depth + 1);
            let on_open_path = match inner {
                Some(next) => next.path.segments().nth(depth).as_ref() == Some(segment),
                None => self
                    .free
                    .as_ref()
                    .is_some_and(|f| f.at.segments().nth(depth).as_ref() == Some(segment)),
            };
            if on_open_path {
                if inner.is_none() {
                    // The free text being read, or a value inside it (there is none).
                    return false;
                }
                continue;
            }
            if frame.named.as_ref().is_some_and(|named| named.has(segment)) {
                // A member completed, its name not kept: complete, with whatever is inside it.
                return true;
            }
            let member = match &frame.body {
                Body::Object(map, _) => map.get(segment.as_ref()),
                Body::Array(items) => {
                    let index = segment.parse::<usize>().ok();
                    if !frame.keep && index.is_some_and(|i| i < items.len() + frame.dropped) {
                        // Completed, not kept: whatever is inside it is complete.
                        return true;
                    }
                    index.and_then(|i| items.get(i))
                }
            };
            let Some(member) = member else { return false };
            if !frame.keep {
                // A member named, its value not kept: complete, with whatever is inside it.
                return true;
            }
            let rest: Pointer =
                segments
                    .iter()
                    .skip(depth + 1)
                    .fold(Pointer::root(), |mut p, s| {
                        p.push(s);
                        p
                    });
            return rest.get(member).is_some();
        }
        false
    }

    /// Where reading is.
    pub fn status(&self) -> StreamStatus {
        match self.lex {
            Lex::Seeking => StreamStatus::Waiting,
            Lex::Done => StreamStatus::Complete,
            Lex::Another => StreamStatus::AnotherValue,
            Lex::Lost => StreamStatus::Unreadable,
            Lex::TooDeep => StreamStatus::TooDeep,
            _ => StreamStatus::Reading,
        }
    }

    /// Every byte received, for the final reading ([`crate::parse_response`] on it gives the
    /// value with the same checks as an answer read whole). `None` when the bytes are not UTF-8
    /// (a stream cut inside a character).
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.text).ok()
    }

    /// [`StreamReader::text`], the reader given up for it: what it kept of the value, and the
    /// room the text grew into and does not use, are freed before the final reading builds its
    /// own.
    pub fn into_text(mut self) -> Option<String> {
        self.text.shrink_to_fit();
        String::from_utf8(self.text).ok()
    }

    /// The value so far (see the [module documentation](self) for what it shows). `null` before
    /// the JSON starts. Built from the containers being read: it costs the size of the value,
    /// so call it when [`StreamProgress::changed`] says there is something new.
    pub fn value(&self) -> Value {
        if !self.keep_value {
            return Value::Null;
        }
        if let Some(root) = &self.root {
            return root.clone();
        }
        if !self.root_shown {
            return Value::Null;
        }
        // The innermost part first (free text being read), each container around it after.
        let mut child: Option<Value> = self.free.as_ref().map(|f| Value::String(f.text.clone()));
        for frame in self.frames.iter().rev() {
            let built = match &frame.body {
                Body::Object(map, key) => {
                    let mut map = map.clone();
                    if let (Some(key), Some(child)) = (key, child.take()) {
                        map.insert(key.clone(), child);
                    }
                    Value::Object(map)
                }
                Body::Array(items) => {
                    let mut items = items.clone();
                    items.extend(child.take());
                    Value::Array(items)
                }
            };
            child = Some(built);
        }
        child.unwrap_or(Value::Null)
    }

    /// The value so far as a typed partial value ([`crate::HasPartial`]: for a derived struct,
    /// its `{Name}Partial`, each field `None` until it starts). Costs what
    /// [`StreamReader::value`] costs.
    pub fn partial<T: crate::schema::HasPartial>(&self) -> Option<T::Partial> {
        if !self.keep_value {
            return None;
        }
        T::partial_from(&self.value())
    }

    /// `chunk`, the text's last bytes, as text when it is plain text inside free text (whole
    /// characters, none a control character, a quote or a backslash: most chunks of a stream
    /// that shows a long string as it arrives) with nothing waiting before it. `text`: the
    /// chunk, when it came as text (not checked to be UTF-8 again).
    fn plain_chunk<'c>(&self, chunk: &'c [u8], text: Option<&'c str>) -> Option<&'c str> {
        let inside = self.free.is_some()
            && matches!(
                self.lex,
                Lex::Str {
                    key: false,
                    escaped: false,
                }
            )
            && self.token.is_empty()
            && self.read.checked_add(chunk.len()) == Some(self.text.len())
            && self.until >= self.text.len();
        // (A chunk that cuts a character is not text yet.)
        if !inside || chunk.is_empty() || !chunk.iter().all(|&b| PLAIN_TEXT[usize::from(b)]) {
            return None;
        }
        text.or_else(|| std::str::from_utf8(chunk).ok())
    }

    /// A chunk of plain free text after a chunk whose one change appended to that same text
    /// (most chunks of a long string): that change is used again in place, its text replaced by
    /// this chunk's. While free text is being read, a lone append among the last chunk's
    /// changes is its own: a text begun in that chunk was set first, a change of its own.
    /// `text`: the chunk, plain free text ([`Self::plain_chunk`]).
    fn append_in_place(&mut self, text: &str) -> bool {
        let (Some(free), [Change::Append { text: piece, .. }]) =
            (self.free.as_mut(), self.changes.as_mut_slice())
        else {
            return false;
        };
        self.read = self.text.len();
        piece.clear();
        piece.push_str(text);
        if free.kept {
            free.text.push_str(text);
        }
        self.changed = true;
        true
    }

    /// A chunk of plain free text ([`Self::plain_chunk`]) taken as it is: what [`Self::run`]
    /// and [`Self::decode_free_text`] make of it, without the token between them.
    #[inline(always)]
    fn plain_free_text(&mut self, text: &str) {
        let Some(free) = self.free.as_mut() else {
            return;
        };
        self.read = self.text.len();
        let (at, mut piece) = next_piece(&mut self.spare, free, text.len());
        piece.push_str(text);
        if free.kept {
            free.text.push_str(text);
        }
        self.changes.push(Change::Append { at, text: piece });
        self.changed = true;
    }

    /// Decodes the free text that arrived (an escape or character cut at the end waits), and
    /// says what it added.
    #[inline(always)]
    fn decode_free_text(&mut self) {
        let Some(free) = self.free.as_mut() else {
            return;
        };
        // The token holds only what is not decoded yet: free text is kept once, decoded.
        let ready = decodable(&self.token);
        let n = ready.len();
        if n == 0 {
            return;
        }
        let (at, mut piece) = next_piece(&mut self.spare, free, n);
        if decode_text(ready, &mut piece) {
            self.token.drain(..n);
            if free.kept {
                free.text.push_str(&piece);
            }
            self.changes.push(Change::Append { at, text: piece });
            self.changed = true;
        } else {
            // Not JSON text: the final reading says why.
            self.lose();
        }
    }

    fn run(&mut self) {
        while self.read < self.text.len().min(self.until) {
            // (One `match` on the state: comparing it with `==` tests its fields too.)
            match self.lex {
                Lex::Seeking => {
                    self.seek();
                    continue;
                }
                Lex::Done => {
                    // Only whether another value begins is looked for.
                    let rest = self.text.get(self.read..).unwrap_or_default();
                    if memchr::memchr2(b'{', b'[', rest).is_some() {
                        self.lex = Lex::Another;
                    }
                    self.read = self.text.len();
                    return;
                }
                Lex::Another | Lex::Lost | Lex::TooDeep => {
                    self.read = self.text.len();
                    return;
                }
                Lex::Str { key, escaped } => {
                    self.string_bytes(key, escaped);
                    continue;
                }
                _ => {}
            }
            let Some(&byte) = self.text.get(self.read) else {
                return;
            };
            self.read += 1;
            if !self.byte(byte) {
                self.lose();
            }
        }
    }

    /// Passes over prose to the next opener the root may start with.
    fn seek(&mut self) {
        let rest = self.text.get(self.read..).unwrap_or_default();
        let found = match self.openers {
            (true, true) => memchr::memchr2(b'{', b'[', rest),
            (true, false) => memchr::memchr(b'{', rest),
            (false, true) => memchr::memchr(b'[', rest),
            // A root that is neither: read whole, at the end.
            (false, false) => None,
        };
        match found {
            Some(at) => {
                self.start = self.read + at;
                self.read = self.start;
                self.lex = Lex::Value;
            }
            None => self.read = self.text.len(),
        }
    }

    /// Reading cannot go on as written: start again at the next opener while nothing was
    /// reported, else stop where the value stands (what was shown stays shown).
    fn lose(&mut self) {
        if self.reported || self.restarts >= MAX_RESTARTS {
            // Free text shown so far stays shown, as it stands.
            self.lex = Lex::Lost;
            return;
        }
        self.restarts += 1;
        self.root_shown = false;
        self.frames.clear();
        self.token.clear();
        self.free = None;
        self.read = self.start + 1;
        self.lex = Lex::Seeking;
    }

    /// The bytes of a string up to its closing quote or the end of the text.
    fn string_bytes(&mut self, key: bool, mut escaped: bool) {
        let rest = self.text.get(self.read..).unwrap_or_default();
        let mut end = None;
        let mut i = 0;
        while i < rest.len() {
            if escaped {
                escaped = false;
                i += 1;
                continue;
            }
            match quote_or_backslash(rest.get(i..).unwrap_or_default()) {
                Some(at) => {
                    i += at;
                    if rest.get(i) == Some(&b'\\') {
                        escaped = true;
                        i += 1;
                    } else {
                        end = Some(i);
                        break;
                    }
                }
                None => i = rest.len(),
            }
        }
        let upto = end.map_or(rest.len(), |e| e + 1);
        self.token
            .extend_from_slice(rest.get(..upto).unwrap_or_default());
        self.read += upto;
        if end.is_none() {
            self.lex = Lex::Str { key, escaped };
            return;
        }
        if let Some(free) = self.free.take() {
            // The rest of the free text: what was not decoded yet, before its closing quote,
            // decoded into the last piece's buffer when it was this text's.
            let content = self.token.split_last().map(|(_, c)| c).unwrap_or_default();
            let (piece_at, mut rest) = next_piece(&mut self.spare, &free, content.len());
            if !decode_into(content, &mut rest) {
                self.free = Some(free);
                self.lose();
                return;
            }
            self.token.clear();
            let FreeText { at, mut text, kept } = free;
            if rest.is_empty() {
                self.spare = Some((piece_at, rest));
            } else {
                if kept {
                    text.push_str(&rest);
                }
                self.changes.push(Change::Append {
                    at: piece_at,
                    text: rest,
                });
            }
            if text.capacity() > 2 * text.len() {
                // A short text does not keep the room it was given while it arrived.
                text.shrink_to_fit();
            }
            // (Its place is where it began: the pointer it was shown at.)
            let node = self.next_node();
            self.finish(at, node, Value::String(text), 0);
            return;
        }
        // The token is the string with its quotes.
        let content = self.token.get(1..self.token.len().saturating_sub(1));
        let Some(text) = content.and_then(string_content) else {
            self.lose();
            return;
        };
        self.token.clear();
        if key {
            self.show_root();
            match self.frames.last_mut() {
                Some(Frame {
                    body: Body::Object(map, slot),
                    named,
                    ..
                }) if entry(map, &text).is_none()
                    && !named.as_ref().is_some_and(|n| n.has(&text)) =>
                {
                    *slot = Some(text)
                }
                // A key given twice (kept, or noted by its fingerprint): the first value would
                // change; the final reading decides.
                _ => return self.lose(),
            }
            // The variant's key names it before its value is read.
            self.name_variant_by_key();
            self.lex = Lex::Colon;
        } else {
            self.complete(Value::String(text));
        }
    }

    /// One byte outside strings; `false` when it is not JSON here.
    fn byte(&mut self, b: u8) -> bool {
        let space = matches!(b, b' ' | b'\t' | b'\n' | b'\r');
        match self.lex {
            Lex::Value | Lex::FirstItem if space => true,
            Lex::FirstItem if b == b']' => self.close(b']'),
            Lex::Value | Lex::FirstItem => self.begin_value(b),
            Lex::Key | Lex::FirstKey if space => true,
            Lex::FirstKey if b == b'}' => self.close(b'}'),
            Lex::Key | Lex::FirstKey if b == b'"' => {
                if let Some(variant) = self.frames.last_mut().and_then(|f| f.variant.as_mut()) {
                    variant.key_from = self.read - 1;
                }
                self.token.push(b);
                self.lex = Lex::Str {
                    key: true,
                    escaped: false,
                };
                true
            }
            Lex::Colon if space => true,
            Lex::Colon if b == b':' => {
                self.lex = Lex::Value;
                true
            }
            Lex::After if space => true,
            Lex::After if b == b',' => {
                self.lex = match self.frames.last().map(|f| &f.body) {
                    Some(Body::Object(..)) => Lex::Key,
                    _ => Lex::Value,
                };
                true
            }
            Lex::After if b == b'}' || b == b']' => self.close(b),
            Lex::Number if matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') => {
                self.token.push(b);
                true
            }
            Lex::Number => {
                // The byte after a number ends it, and is read again after it.
                self.read -= 1;
                self.end_scalar()
            }
            Lex::Literal if b.is_ascii_alphabetic() => {
                self.token.push(b);
                true
            }
            Lex::Literal => {
                self.read -= 1;
                self.end_scalar()
            }
            _ => false,
        }
    }

    fn begin_value(&mut self, b: u8) -> bool {
        // An item of a list kept as prints, or a member of an object at a variant, starts here
        // (its first byte was just read).
        if let Some(frame) = self.frames.last_mut() {
            if let Some(unique) = frame.unique.as_mut() {
                unique.next = self.read.saturating_sub(1);
            }
            if let Some(variant) = frame.variant.as_mut() {
                variant.value_from = self.read.saturating_sub(1);
            }
        }
        match b {
            b'{' | b'[' => {
                if self.frames.len() >= MAX_STREAM_DEPTH {
                    // Refused here: nothing deeper is read or kept.
                    self.lex = Lex::TooDeep;
                    return true;
                }
                let (path, node) = self.next_place();
                let body = match b {
                    b'{' => Body::Object(Map::new(), None),
                    _ => Body::Array(Vec::new()),
                };
                let nested = !self.frames.is_empty();
                if nested {
                    self.show_root();
                    // An empty object or list inside the root is shown at once.
                    self.changes.push(Change::Set {
                        at: path.clone(),
                        value: body.empty(),
                    });
                    self.changed = true;
                }
                let kind = if b == b'{' {
                    JsonType::Object
                } else {
                    JsonType::Array
                };
                let kept_above =
                    self.keep_value || self.frames.last().is_some_and(|parent| parent.keep);
                let facts = node.map(|n| self.facts(n));
                // (Judged against each branch when it closes, within the reads allowed.)
                let by_names = facts
                    .and_then(|f| f.by_names)
                    .is_some_and(|n| self.reads.saturating_mul(n) <= MAX_BRANCH_READS);
                let variant = node
                    .filter(|_| b == b'{' && (by_names || facts.is_some_and(|f| f.decides)))
                    .map(|n| {
                        let base = self.read.saturating_sub(1);
                        Variant::at(n.target(), kept_above, base, by_names)
                    });
                // The node the members are read at, and the one whose own check reads them: an
                // object at a variant is read at its branch once chosen, before at none; under
                // another `anyOf` the members are left to the check of the whole value.
                let undecided = variant.as_ref().is_some_and(Variant::open);
                // A container of a kind its node does not allow (and no branch to choose): its
                // report is its type and how many members it has, whatever they are.
                let allowed = allows(facts.map(|f| f.types), kind);
                // A list where the kind of value decides the branch: read at the one branch
                // taking lists, as its node; refused when none does.
                let list_at = match (b, node, facts) {
                    (b'[', Some(node), Some(facts))
                        if facts.decides || facts.by_names.is_some() =>
                    {
                        Some(list_branch(node.target()))
                    }
                    _ => None,
                };
                let refused =
                    (!allowed && !facts.is_some_and(|f| f.any_of)) || matches!(list_at, Some(None));
                let (members_at, judged) = match (&variant, list_at) {
                    (Some(variant), _) => (variant.chosen, variant.chosen),
                    (None, Some(Some(branch))) => (Some(branch), Some(branch)),
                    (None, _) if refused || facts.is_some_and(|f| f.any_of) => (None, node),
                    (None, _) => (node, node),
                };
                let node = match list_at {
                    Some(Some(branch)) => Some(branch),
                    _ => node,
                };
                // (A frame at a variant has its node's facts.)
                let variant_keeps = facts.map_or((false, false), |f| f.variant_keeps);
                let members = Members::of(members_at);
                // (Asked only of a container not kept whole by the one above it.)
                let own = (!kept_above).then(|| self.reads_at(judged));
                let unique = (!kept_above
                    && b == b'['
                    && !refused
                    && own.as_ref().is_some_and(|r| r.unique_only))
                .then(|| Unique {
                    base: self.read.saturating_sub(1),
                    items: Vec::new(),
                    next: 0,
                    too_long: false,
                });
                let keep = kept_above
                    || (unique.is_none()
                        && !refused
                        && if undecided {
                            variant_keeps.0
                        } else {
                            own.as_ref().is_some_and(|r| r.members)
                        });
                let all_names = if undecided {
                    variant_keeps.1
                } else {
                    own.as_ref().is_some_and(|r| r.names)
                };
                // (A container not kept has its own reads: `own` is there.)
                let named = own.filter(|_| !keep && b == b'{' && !all_names).map(|r| {
                    let named = Named::with(r.required);
                    // (Not at a variant: choosing its branch reads the names kept.)
                    if facts.is_some_and(|f| f.only_required) && variant.is_none() && !refused {
                        named.noting_met()
                    } else {
                        named
                    }
                });
                self.frames.push(Frame {
                    path,
                    node,
                    members,
                    body,
                    keep,
                    dropped: 0,
                    named,
                    unique,
                    variant,
                    refused,
                    held: 0,
                    unheld: false,
                });
                self.lex = if b == b'{' {
                    Lex::FirstKey
                } else {
                    Lex::FirstItem
                };
                true
            }
            b'"' => {
                self.token.push(b);
                // (Its pointer is built only for free text: a string shown once complete gets
                // its own when it completes.)
                let node = self.next_node();
                let facts = node.map(|n| self.facts(n));
                if facts.is_some_and(|f| f.free_text) {
                    let at = self.next_path();
                    // (A string at a node holding it to its type alone passes its check
                    // whatever its text: no one else reads it unless its container keeps it.)
                    let kept = self.keep_value
                        || self.frames.last().is_some_and(|f| f.keep)
                        || facts.is_some_and(|f| f.scalar.is_none());
                    self.show_root();
                    // Shown at once, empty, then as it arrives.
                    self.changes.push(Change::Set {
                        at: at.clone(),
                        value: Value::String(String::new()),
                    });
                    self.changed = true;
                    // Its opening quote is not kept: the token holds what is not decoded yet.
                    self.token.clear();
                    self.free = Some(FreeText {
                        at,
                        // (Room for a sentence or two before it grows: it arrives a few bytes
                        // at a time.)
                        text: if kept {
                            String::with_capacity(FREE_TEXT_START)
                        } else {
                            String::new()
                        },
                        kept,
                    });
                }
                self.lex = Lex::Str {
                    key: false,
                    escaped: false,
                };
                true
            }
            b'-' | b'0'..=b'9' => {
                self.token.push(b);
                self.lex = Lex::Number;
                true
            }
            b't' | b'f' | b'n' => {
                self.token.push(b);
                self.lex = Lex::Literal;
                true
            }
            _ => false,
        }
    }

    /// A number or literal that has ended.
    fn end_scalar(&mut self) -> bool {
        let value = serde_json::from_slice::<Value>(&self.token);
        self.token.clear();
        match value {
            Ok(value) if !value.is_object() && !value.is_array() && !value.is_string() => {
                self.complete(value);
                true
            }
            _ => false,
        }
    }

    /// Where the next value goes, and its schema node.
    fn next_place(&self) -> (Pointer, Option<Node<'s>>) {
        (self.next_path(), self.next_node())
    }

    /// Where the next value goes.
    fn next_path(&self) -> Pointer {
        match self.frames.last() {
            None => Pointer::root(),
            Some(frame) => match &frame.body {
                Body::Object(_, key) => frame.path.key(key.as_deref().unwrap_or_default()),
                Body::Array(items) => frame.path.index(items.len() + frame.dropped),
            },
        }
    }

    /// The schema node of the next value.
    fn next_node(&self) -> Option<Node<'s>> {
        match self.frames.last() {
            None => Some(self.root_node),
            Some(frame) => match &frame.body {
                Body::Object(_, key) => frame.members.property(key.as_deref().unwrap_or_default()),
                Body::Array(items) => frame.members.item(items.len() + frame.dropped),
            },
        }
    }

    /// A value complete at the next place, not shown before: shown now, checked, reported,
    /// and put in its container.
    fn complete(&mut self, value: Value) {
        self.show_root();
        let (at, node) = self.next_place();
        self.changes.push(Change::Set {
            at: at.clone(),
            value: value.clone(),
        });
        self.finish(at, node, value, 0);
    }

    /// A value complete at `at` (already shown): checked against `node`, reported, and put in
    /// its container.
    /// `dropped`: items of the list `value` not kept (counted in its checks).
    fn finish(&mut self, at: Pointer, node: Option<Node<'s>>, value: Value, dropped: usize) {
        self.check(node, &value, &at, dropped);
        self.completed.push(at);
        self.reported = true;
        self.changed = true;
        self.put(value, 0);
    }

    /// `value` completed, put in its container (held there when it keeps its members: `inner`
    /// values and keys held inside `value` move with it).
    fn put(&mut self, value: Value, inner: usize) {
        // An item of a list kept as prints: its print, from its text (the value here may be a
        // shell of it).
        let print = self
            .frames
            .last()
            .and_then(|f| f.unique.as_ref())
            .filter(|unique| !unique.too_long)
            .map(|unique| {
                let text = self.text.get(unique.next..self.read).unwrap_or_default();
                let from = u32::try_from(unique.next.saturating_sub(unique.base)).ok();
                // (An item longer than a value is held whole to is not read: the list's items
                // are left to the final reading, as past 4 GiB.)
                let item = (holds_within(text, self.max_whole) != Some(false))
                    .then(|| serde_json::from_slice::<Value>(text).unwrap_or(Value::Null));
                (item.map(|item| folded_print(&item)), from)
            });
        if let (Some(print), Some(frame)) = (print, self.frames.last_mut()) {
            if let Some(unique) = frame.unique.as_mut() {
                match print {
                    (Some(print), Some(from)) => unique.items.push(Noted { print, from }),
                    (print, _) => {
                        unique.too_long = true;
                        unique.items = Vec::new();
                        if print.is_none() && self.unheld.is_none() {
                            self.unheld = Some(frame.path.clone());
                        }
                    }
                }
            }
        }
        // A member an object allowing none beside its declared ones does not declare: refused
        // as it completes (its object's own check, when it closes, would say the same), so its
        // name need not be kept.
        // Once the listing is full, nothing more is built to be reported.
        let listing = self.violated.len() <= MAX_VIOLATIONS;
        let undeclared = self
            .frames
            .last()
            .filter(|_| listing)
            .and_then(|f| match &f.body {
                Body::Object(_, Some(key)) => f
                    .members
                    .undeclared(key)
                    .map(|node| (f.path.key(key), node, key.clone())),
                _ => None,
            });
        if let Some((at, node, key)) = undeclared {
            self.report(vec![undeclared_member(node, &key)], &at);
        }
        // (Judged with the key borrowed: its place is built only for a refusal.)
        let refused = match self.frames.last() {
            Some(Frame {
                body: Body::Object(_, Some(key)),
                members: Members {
                    names: Some(names), ..
                },
                path,
                ..
            }) if listing => refused_name(*names, key).map(|v| (v, path.key(key))),
            _ => None,
        };
        if let Some((refused, at)) = refused {
            self.report(vec![refused], &at);
        }
        // A member of an object whose variant is not named yet: where it lies is noted, and it
        // may be the tag.
        let mut named_now = None;
        let read = self.read;
        if let Some(Frame {
            variant: Some(variant),
            body: Body::Object(_, Some(key)),
            ..
        }) = self.frames.last_mut()
        {
            if variant.open() {
                variant.note(read);
                named_now = variant.named_by(key, Some(&value));
            }
        }
        let mut added = 0;
        match self.frames.last_mut() {
            Some(Frame {
                body: Body::Object(map, key),
                keep,
                named,
                held,
                ..
            }) => {
                if let Some(key) = key.take() {
                    match named {
                        Some(named) if !named.keeps(&key) => {
                            named.prints.insert(fingerprint(&key));
                        }
                        _ if *keep => {
                            added = inner + 2;
                            *held += added;
                            map.insert(key, value);
                        }
                        // A required name: met as a bit, or kept with `null`.
                        _ => {
                            if !named.as_mut().is_some_and(|n| n.meet(&key)) {
                                map.insert(key, Value::Null);
                            }
                        }
                    }
                }
            }
            Some(Frame {
                body: Body::Array(items),
                keep: true,
                held,
                ..
            }) => {
                added = inner + 1;
                *held += added;
                items.push(value);
            }
            Some(Frame { dropped, .. }) => *dropped += 1,
            None => {
                self.root = Some(if self.keep_value { value } else { Value::Null });
                self.lex = Lex::Done;
                return;
            }
        }
        self.lex = Lex::After;
        self.held += added;
        if !self.keep_value && self.held > values_within(self.max_whole) {
            self.unhold();
        }
        if let Some(branch) = named_now {
            self.choose(branch);
        }
    }

    /// The open containers hold more values than a reader keeping no value may: their kept
    /// members are dropped (a list's counted), they keep no more, and their checks are left
    /// to the final reading.
    fn unhold(&mut self) {
        for frame in self.frames.iter_mut().filter(|f| f.keep) {
            match &mut frame.body {
                // Its names, and those to come, as fingerprints only.
                Body::Object(map, _) => {
                    let mut named = frame
                        .named
                        .take()
                        .unwrap_or_else(|| Named::with(Arc::default()));
                    for key in map.keys() {
                        named.prints.insert(fingerprint(key));
                    }
                    *map = Map::new();
                    frame.named = Some(named);
                }
                Body::Array(items) => {
                    frame.dropped += items.len();
                    *items = Vec::new();
                }
            }
            frame.keep = false;
            frame.held = 0;
            frame.unheld = true;
            if self.unheld.is_none() {
                self.unheld = Some(frame.path.clone());
            }
        }
        self.held = 0;
    }

    /// The key just read in the innermost object, its value not read yet, names its variant
    /// ([`Variant`]; none had): that branch is chosen, and the value is read at its node.
    fn name_variant_by_key(&mut self) {
        let branch = match self.frames.last() {
            Some(Frame {
                variant: Some(variant),
                body: Body::Object(_, Some(key)),
                ..
            }) if variant.open() => variant.named_by(key, None),
            _ => None,
        };
        if let Some(branch) = branch {
            self.choose(branch);
        }
    }

    /// The innermost object's members name `branch` of its `anyOf` ([`Variant`]): from here on
    /// they are read at its nodes; the members read before are judged by them now, each read
    /// again from its text, and only what the branch's own check reads of them is kept.
    fn choose(&mut self, branch: Node<'s>) {
        let own = self.reads_at(Some(branch));
        let Some(frame) = self.frames.last_mut() else {
            return;
        };
        let Some(variant) = frame.variant.as_mut() else {
            return;
        };
        variant.chosen = Some(branch);
        let before = std::mem::take(&mut variant.before);
        let base = variant.base;
        let keep = !frame.unheld && (variant.kept_above || own.members);
        let members = Members::of(Some(branch));
        frame.members = members;
        frame.keep = keep;
        let path = frame.path.clone();
        // The members' names were kept as fingerprints only (their values by nothing).
        let was_named = frame.named.is_some();
        // Names the branch's check reads: those `required` lists (or all of them).
        let mut named = (!keep && !own.names).then(|| Named::with(own.required));
        // (What it held is let go: only names stay.)
        let freed = if keep {
            0
        } else {
            std::mem::take(&mut frame.held)
        };
        if let Body::Object(map, _) = &mut frame.body {
            if !keep {
                map.values_mut().for_each(|v| *v = Value::Null);
            }
            if let Some(named) = named.as_mut() {
                // The names noted so far are kept (moved, not copied).
                if let Some(earlier) = frame.named.take() {
                    named.prints = earlier.prints;
                }
                // Members kept by name until now: each name the branch does not require, as
                // its fingerprint only.
                map.retain(|key, _| {
                    let keeps = named.keeps(key);
                    if !keeps {
                        named.prints.insert(fingerprint(key));
                    }
                    keeps
                });
            }
        }
        frame.named = named;
        self.held = self.held.saturating_sub(freed);
        let mut required = Vec::new();
        // (Members not noted, past 4 GiB, are left to the final reading: [`Variant::too_far`].)
        for [key_from, value_from, to] in before {
            let (key_from, value_from, to) = (
                base + key_from as usize,
                base + value_from as usize,
                base + to as usize,
            );
            let key = self
                .text
                .get(key_from..value_from)
                .and_then(|text| {
                    serde_json::Deserializer::from_slice(text)
                        .into_iter::<String>()
                        .next()
                })
                .and_then(Result::ok)
                .unwrap_or_default();
            let mut found = Vec::new();
            if let Some(node) = members.undeclared(&key) {
                found.push(undeclared_member(node, &key));
            }

            if let Some(node) = members.property(&key) {
                found.extend(self.judge_text(node, value_from, to, self.reads));
            }
            let at = path.key(&key);
            self.report(found, &at);
            self.judge_name(members.names, &key, &at);
            // A name kept only as a fingerprint until now that the branch's check reads (every
            // branch's check reads only the names it requires, or the names would be kept).
            if was_named && branch.target().required().any(|r| r == key) {
                required.push(key);
            }
        }
        if let Some(Frame {
            body: Body::Object(map, _),
            ..
        }) = self.frames.last_mut()
        {
            for key in required {
                map.insert(key, Value::Null);
            }
        }
    }

    /// The violations of the value whose text lies at `from..to`, read at `node`: as a reader
    /// reading it there from the start reports them. A container is read by a reader of its own
    /// keeping no value, lent this reader's text and reading it a piece at a time (what it
    /// reports of each piece is all it holds beside its containers); a scalar, or a container
    /// inside more than [`MAX_JUDGES_WITHIN`] such readers, is read whole. `reads`: how many
    /// times over the text is read in all, with this reading ([`MAX_BRANCH_READS`]).
    fn judge_text(&mut self, node: Node<'s>, from: usize, to: usize, reads: u32) -> Vec<Violation> {
        let container = matches!(self.text.get(from), Some(b'{' | b'['));
        if container && to <= self.text.len() && self.within < MAX_JUDGES_WITHIN {
            let mut judge = StreamReader {
                root_node: node,
                openers: (true, true),
                within: self.within + 1,
                reads,
                text: std::mem::take(&mut self.text),
                start: from,
                read: from,
                lex: Lex::Value,
                ..StreamReader::changes_only(self.schema).max_whole(self.max_whole)
            };
            let mut found = Vec::new();
            while judge.read < to && !matches!(judge.lex, Lex::Done | Lex::Lost | Lex::TooDeep) {
                judge.until = judge.read.saturating_add(JUDGE_PIECE).min(to);
                judge.run();
                found.append(&mut judge.violations);
                judge.changes.clear();
                judge.completed.clear();
            }
            self.text = std::mem::take(&mut judge.text);
            if judge.unheld.is_some() {
                self.left_unjudged();
            }
            return found;
        }
        let text = self.text.get(from..to).unwrap_or_default();
        if holds_within(text, self.max_whole) == Some(false) {
            self.left_unjudged();
            return Vec::new();
        }
        match serde_json::from_slice::<Value>(text) {
            Ok(value) => crate::schema::validation::explain(node, &value),
            Err(_) => Vec::new(),
        }
    }

    /// A value read again inside the innermost container was too long to hold whole: its
    /// checks are left to the final reading (the container is where [`StreamReader::unjudged`]
    /// points, unless one was named before).
    fn left_unjudged(&mut self) {
        if self.unheld.is_none() {
            let at = self.frames.last().map(|f| f.path.clone());
            self.unheld = Some(at.unwrap_or_else(Pointer::root));
        }
    }

    /// Why the `anyOf` at `at` refuses the object (of `members` members) whose text starts at
    /// `base` and ends here, an object only its names tell the variants of apart
    /// ([`Variant::by_names`]): its text read again at each branch in turn, and the branches'
    /// reports weighed as the check of the whole value weighs them
    /// ([`crate::schema::validation::refusal_of_branches`], given the object's skeleton:
    /// [`Skeleton`]). Nothing where the text is not JSON the strict reader takes (the final
    /// reading judges it).
    fn refusal_by_names(&mut self, at: Node<'s>, base: usize, members: usize) -> Vec<Violation> {
        use crate::schema::validation::{no_branch, refusal_of_branches, Refusal};
        use serde::de::DeserializeSeed;
        let to = self.read;
        let branches: Vec<Node<'s>> = at.any_of().map(Iterator::collect).unwrap_or_default();
        let declared = |key: &str| branches.iter().any(|b| b.target().property(key).is_some());
        let skeleton = self.text.get(base..to).and_then(|text| {
            let mut de = serde_json::Deserializer::from_slice(text);
            Skeleton {
                keep: Some(&declared),
            }
            .deserialize(&mut de)
            .ok()
        });
        let Some(skeleton) = skeleton else {
            return Vec::new();
        };
        let reads = self
            .reads
            .saturating_mul(u32::try_from(branches.len()).unwrap_or(u32::MAX));
        let refusal = refusal_of_branches(&branches, &skeleton, |branch| {
            self.judge_text(branch, base, to, reads)
        });
        match refusal {
            Refusal::Taken => Vec::new(),
            Refusal::Branch(violations) => violations,
            Refusal::NoBranch => {
                let (rule, expected) = no_branch(at);
                vec![Violation {
                    path: Pointer::root(),
                    rule,
                    expected,
                    found: preview_object(members),
                }]
            }
        }
    }

    /// Closes the innermost container with `b` (`}` or `]`).
    fn close(&mut self, b: u8) -> bool {
        // Only the bracket that closes the innermost container (and an object with no key left
        // waiting for its value): anything else leaves what is shown as it stands.
        let fits = match self.frames.last().map(|f| &f.body) {
            Some(Body::Object(_, None)) => b == b'}',
            Some(Body::Array(_)) => b == b']',
            _ => false,
        };
        if !fits {
            return false;
        }
        self.show_root();
        let Some(mut frame) = self.frames.pop() else {
            return false;
        };
        // An object noting its required names as bits: with every one met, its own check has
        // nothing to find; else they are put in it for the check.
        let met = match (&mut frame.named, &mut frame.body) {
            (Some(named), Body::Object(map, _)) => named.settle(map),
            _ => false,
        };
        // What it held leaves it: into its container, if that keeps its members.
        self.held = self.held.saturating_sub(frame.held);
        let (inner, unheld) = (frame.held, frame.unheld);
        let value = match frame.body {
            Body::Object(map, _) => Value::Object(map),
            Body::Array(items) => Value::Array(items),
        };
        // A list kept as prints: its own check on no items (the count given), then the first
        // repeat, as a check on its items reports it.
        let repeat = frame
            .unique
            .and_then(|unique| self.first_repeat(unique.base, unique.items));
        let (path, node) = (frame.path, frame.node);
        // Members of an object not kept by name (their names judged as they completed) count.
        let dropped = frame.dropped + frame.named.as_ref().map_or(0, |n| n.prints.len());
        match frame.variant {
            // Its kept members dropped: left to the final reading.
            _ if unheld => {}
            // An object whose members named a variant: that branch's own keywords are left
            // (unless its members before the tag were left to the final reading: then these too).
            Some(Variant {
                chosen: Some(branch),
                too_far,
                ..
            }) => {
                if !too_far {
                    self.check(Some(branch), &value, &path, dropped);
                }
            }
            // Told apart by names only: judged against each branch in turn, from its text.
            Some(Variant {
                by_names: true,
                at,
                base,
                ..
            }) => {
                let members = value.as_object().map_or(0, Map::len)
                    + frame.named.as_ref().map_or(0, |n| n.prints.len());
                let found = self.refusal_by_names(at, base, members);
                self.report(found, &path);
            }
            // Naming none, it is refused by every branch.
            Some(Variant { at, .. }) => {
                let members = value.as_object().map_or(0, Map::len)
                    + frame.named.as_ref().map_or(0, |n| n.prints.len());
                let (rule, expected) = crate::schema::validation::no_branch(at);
                let violation = Violation {
                    path: Pointer::root(),
                    rule,
                    expected,
                    found: preview_object(members),
                };
                self.report(vec![violation], &path);
            }
            // Its own check on what is kept of it (nothing, unless kept for another reason),
            // its size given back: the type is all that is said of it.
            None if frame.refused => {
                let members = match &value {
                    Value::Array(items) => preview_list(items.len() + frame.dropped),
                    Value::Object(map) => preview_object(
                        map.len() + frame.named.as_ref().map_or(0, |n| n.prints.len()),
                    ),
                    _ => String::new(),
                };
                let mut found = node
                    .map(|node| crate::schema::validation::explain_own(node, &value, 0))
                    .unwrap_or_default();
                for v in &mut found {
                    use crate::schema::validate::Rule;
                    // (Refused by its type, or by every branch of an `anyOf`.)
                    if v.path.is_root() && matches!(v.rule, Rule::Type | Rule::AnyOf | Rule::OneOf)
                    {
                        v.found.clone_from(&members);
                    }
                }
                self.report(found, &path);
            }
            None if met => {}
            None => self.check(node, &value, &path, dropped),
        }
        if let Some((i, item)) = repeat {
            let (expected, found) = crate::schema::validation::repeat_of(&item);
            let at = path.index(i);
            self.report(
                vec![Violation {
                    path: Pointer::root(),
                    rule: crate::schema::validate::Rule::UniqueItems,
                    expected,
                    found,
                }],
                &at,
            );
        }
        self.completed.push(path);
        self.reported = true;
        self.changed = true;
        self.put(value, inner);
        true
    }

    /// Shows the root object or list, once: from here on nothing shown is taken back.
    fn show_root(&mut self) {
        if self.root_shown {
            return;
        }
        let Some(root) = self.frames.first() else {
            return;
        };
        self.changes.push(Change::Set {
            at: Pointer::root(),
            value: root.body.empty(),
        });
        self.root_shown = true;
        self.reported = true;
        self.changed = true;
    }

    /// The rules `value` breaks at its node, each reported once.
    fn check(&mut self, node: Option<Node<'s>>, value: &Value, path: &Pointer, dropped: usize) {
        let Some(node) = node else { return };
        // A scalar at a node that asserts its type, an `enum` and bounds alone: those are all
        // to check (a scalar that breaks one is walked below, for its report).
        if !value.is_object() && !value.is_array() {
            if let Some(rules) = self.facts(node).scalar {
                if rules.kept_by(value) {
                    return;
                }
            }
        }
        // An object at a node whose own check reads only `required` (its members each judged
        // as they completed), holding every name `required` lists: nothing is left to find.
        if let Value::Object(map) = value {
            let facts = self.facts(node);
            if facts.only_required
                && allows(Some(facts.types), JsonType::Object)
                && self
                    .reads_at(Some(node))
                    .required
                    .iter()
                    .all(|name| entry(map, name).is_some())
            {
                return;
            }
        }
        // A container whose members were given their nodes ([`Self::next_place`]) had each
        // checked as it completed: only its own keywords are left. Under `anyOf` the members
        // were not checked, and the whole value is judged against the branches here, once.
        let members_checked = (value.is_object() || value.is_array()) && !self.facts(node).any_of;
        let found = if members_checked {
            crate::schema::validation::explain_own(node, value, dropped)
        } else {
            crate::schema::validation::explain(node, value)
        };
        self.report(found, path);
    }

    /// The first item of a list kept as prints (it starts at `base`; `items` noted in order)
    /// that repeats an earlier one, with its index: only items whose prints meet are read again
    /// from the text, and they are compared as the check compares items. The items are sorted
    /// in place by print, then by where they start (their order), so nothing of their size is
    /// allocated here.
    fn first_repeat(&self, base: usize, mut items: Vec<Noted>) -> Option<(usize, Value)> {
        items.sort_unstable_by_key(|n| (n.print, n.from));
        let read = |from: u32| -> Value {
            let start = base.saturating_add(from as usize);
            let text = self.text.get(start..).unwrap_or_default();
            serde_json::Deserializer::from_slice(text)
                .into_iter::<Value>()
                .next()
                .and_then(Result::ok)
                .unwrap_or(Value::Null)
        };
        let mut first: Option<(u32, Value)> = None;
        for run in items.chunk_by(|a, b| a.print == b.print) {
            if run.len() < 2 {
                continue;
            }
            let mut seen = std::collections::HashSet::new();
            for noted in run {
                let from = noted.from;
                if first.as_ref().is_some_and(|(at, _)| *at < from) {
                    break;
                }
                let item = read(from);
                if !seen.insert(crate::schema::validation::canonical(&item, 0)) {
                    first = Some((from, item));
                    break;
                }
            }
        }
        // Its index: how many items start before it.
        first.map(|(from, item)| (items.iter().filter(|n| n.from < from).count(), item))
    }

    /// Reports `found` (violations at pointers below `path`), each path once, up to the cap.
    /// The violation of member `key`'s name (at `at`) by its object's `propertyNames` (`names`),
    /// if any, reported as the member completes: the object's own check does not read names
    /// again.
    fn judge_name(&mut self, names: Option<Node<'s>>, key: &str, at: &Pointer) {
        if let Some(refused) = names.and_then(|names| refused_name(names, key)) {
            self.report(vec![refused], at);
        }
    }

    fn report(&mut self, found: Vec<Violation>, path: &Pointer) {
        for mut v in found {
            v.path = path.join(&v.path);
            if self.violated.len() >= MAX_VIOLATIONS {
                // Listed up to the cap, as one reading lists them: then a last entry says the
                // rest is not (past it, `violated` holds one more path than the cap), and nothing
                // more is kept to tell repeats apart.
                if self.violated.insert(Pointer::root().key("…")) {
                    self.violations.push(Violation {
                        path: Pointer::root(),
                        rule: crate::schema::validate::Rule::Schema,
                        expected: format!("the stream lists its first {MAX_VIOLATIONS} violations; the final reading judges the whole answer"),
                        found: "more violations, not listed".into(),
                    });
                }
                return;
            }
            if self.violated.insert(v.path.clone()) {
                self.violations.push(v);
            }
        }
    }
}

/// The violation of a member's name `key` by its object's `propertyNames` (`names`), if any, at
/// the member (the root of what is reported).
fn refused_name(names: Node<'_>, key: &str) -> Option<Violation> {
    crate::schema::validation::name_violation(names, key, &crate::schema::Path::root())
}

/// The violation of a member `key` that the object at `node` does not declare and allows none
/// beside its declared ones: refused as it completes (the object's own check, when it closes,
/// would say the same).
fn undeclared_member(node: Node<'_>, key: &str) -> Violation {
    let (expected, found) = crate::schema::validation::undeclared_member(node, key);
    Violation {
        path: Pointer::root(),
        rule: crate::schema::validate::Rule::AdditionalProperty,
        expected,
        found,
    }
}

/// Whether a string at `node` may be shown before it ends: free text, not a value that is only
/// right once whole (an enum value, a constant, a pattern, a format, a length).
fn free_text(node: Node<'_>) -> bool {
    // (Its type is its target's; a keyword beside a reference on the way holds it too.)
    node.target().types().is_only(JsonType::String)
        && !node.chain().any(|on| {
            [
                "enum",
                "const",
                "pattern",
                "format",
                "minLength",
                "maxLength",
                "anyOf",
                "oneOf",
            ]
            .iter()
            .any(|k| on.has(k))
        })
}

/// The text of a JSON string's content (the bytes between its quotes): itself when it holds
/// no escape and no control character, else decoded as a JSON string; `None` when it is not
/// JSON text.
///
/// Decoded here in one pass into a string of the content's length at most (each escape is
/// longer than what it stands for), as `serde_json` decodes a string: the same text, and `None`
/// where it refuses (a control character, an unknown escape, a lone surrogate, bytes that are
/// not UTF-8).
fn string_content(content: &[u8]) -> Option<String> {
    let mut out = String::with_capacity(content.len());
    decode_into(content, &mut out).then_some(out)
}

/// [`string_content`] appended to `out`; `false` (and `out` not to be used) where it is not
/// JSON text. The content is checked to be UTF-8 once: every escape is ASCII, so the text
/// between escapes is copied as it stands.
fn decode_into(content: &[u8], out: &mut String) -> bool {
    std::str::from_utf8(content).is_ok_and(|text| decode_text(text, out))
}

/// [`decode_into`] of content already known to be UTF-8.
fn decode_text(text: &str, out: &mut String) -> bool {
    let bytes = text.as_bytes();
    // The start of the text not yet copied, and the next byte looked at.
    let (mut start, mut i) = (0, 0);
    while let Some(&b) = bytes.get(i) {
        if b < 0x20 {
            return false;
        }
        if b != b'\\' {
            i += 1;
            continue;
        }
        out.push_str(text.get(start..i).unwrap_or_default());
        let escaped = match bytes.get(i + 1) {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => match bytes.get(i..).and_then(escaped_char) {
                Some((c, len)) => {
                    out.push(c);
                    i += len;
                    start = i;
                    continue;
                }
                None => return false,
            },
            _ => return false,
        };
        out.push(escaped);
        i += 2;
        start = i;
    }
    out.push_str(text.get(start..).unwrap_or_default());
    true
}

/// The character a `\uXXXX` escape at the start of `text` stands for (a surrogate pair's two
/// escapes joined), and how many bytes it takes; `None` for a lone surrogate or a malformed one.
fn escaped_char(text: &[u8]) -> Option<(char, usize)> {
    let unit = |at: usize| match text.get(at..at + 2) {
        Some(b"\\u") => hex4(text.get(at + 2..at + 6)?),
        _ => None,
    };
    let first = unit(0)?;
    match first {
        0xD800..=0xDBFF => Some((surrogate_pair(first, unit(6)?)?, 12)),
        0xDC00..=0xDFFF => None,
        _ => Some((char::from_u32(first)?, 6)),
    }
}

/// Where the next piece of `free` goes, and an empty buffer for it of room for `n` bytes: the
/// last piece's pointer and buffer (`spare`), the pointer made this text's if it was another's.
/// (Inlined: it is on the path of every chunk of free text.)
#[inline(always)]
fn next_piece(
    spare: &mut Option<(Pointer, String)>,
    free: &FreeText,
    n: usize,
) -> (Pointer, String) {
    match spare.take() {
        Some((mut at, mut piece)) => {
            // (Another text's: its room is used for this one's.)
            if at != free.at {
                at.clone_from(&free.at);
            }
            piece.clear();
            piece.reserve(n);
            (at, piece)
        }
        None => (free.at.clone(), String::with_capacity(n)),
    }
}

/// The first `"` or `\` in `bytes`: a plain loop over the few bytes of a token-sized chunk (the
/// vectorised search costs more to set up than it saves on them), that search past them.
fn quote_or_backslash(bytes: &[u8]) -> Option<usize> {
    if bytes.len() <= 8 {
        bytes.iter().position(|&b| b == b'"' || b == b'\\')
    } else {
        memchr::memchr2(b'"', b'\\', bytes)
    }
}

/// What of `raw` (JSON string bytes, no quotes) can be decoded now, as text: up to an escape or
/// a character not yet whole at the end (a `\uD83D` waits for its pair). Looks at each byte
/// once, and checks it is UTF-8 once.
fn decodable(raw: &[u8]) -> &str {
    let mut i = 0;
    while let Some(&b) = raw.get(i) {
        if b != b'\\' {
            i += 1;
            continue;
        }
        let need = match raw.get(i + 1) {
            None => break,
            Some(b'u') => {
                let high = raw.get(i + 2..i + 6).and_then(hex4);
                match high {
                    None if raw.len() < i + 6 => break,
                    // A leading surrogate is whole with the escape after it.
                    Some(0xD800..=0xDBFF) => 12,
                    _ => 6,
                }
            }
            Some(_) => 2,
        };
        if raw.len() < i + need {
            break;
        }
        i += need;
    }
    let upto = raw.get(..i).unwrap_or_default();
    match std::str::from_utf8(upto) {
        Ok(text) => text,
        Err(e) => {
            std::str::from_utf8(upto.get(..e.valid_up_to()).unwrap_or_default()).unwrap_or_default()
        }
    }
}

/// The bytes that stand for themselves in a JSON string (a table: one look a byte, where three
/// comparisons were).
static PLAIN_TEXT: [bool; 256] = super::byte_table::plain_in_string(b"");

/// One change to the value so far, in the order they happen: applied in turn to `null`
/// ([`Change::apply`]), they build what [`StreamReader::value`] returns, at a cost that grows
/// with the change, not with the value.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Change {
    /// A value appears at `at`: an object or list opened (empty), a value completed, or free
    /// text begun (empty).
    Set {
        /// Where, in the value so far.
        at: Pointer,
        /// What.
        value: Value,
    },
    /// Free text at `at` grew by `text`.
    Append {
        /// Where.
        at: Pointer,
        /// The new text.
        text: String,
    },
}

impl Change {
    /// Where the change is made.
    pub fn at(&self) -> &Pointer {
        match self {
            Change::Set { at, .. } | Change::Append { at, .. } => at,
        }
    }

    /// This change as one JSON object, to hand on (to a browser, a log, another process):
    /// `{"op": "set", "path": "/a", "value": 1}` or `{"op": "append", "path": "/note", "text":
    /// "qu"}`, with `path` a JSON pointer. Its size is the change's, not the value's.
    ///
    /// ```
    /// use structured_runtime::{read::Change, Pointer};
    /// use serde_json::json;
    ///
    /// let change = Change::Append { at: Pointer::parse("/note").unwrap(), text: "qu".into() };
    /// assert_eq!(change.to_json(), json!({"op": "append", "path": "/note", "text": "qu"}));
    /// ```
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        match self {
            Change::Set { at, value } => {
                out.insert("op".into(), "set".into());
                out.insert("path".into(), at.as_str().into());
                out.insert("value".into(), value.clone());
            }
            Change::Append { at, text } => {
                out.insert("op".into(), "append".into());
                out.insert("path".into(), at.as_str().into());
                out.insert("text".into(), text.as_str().into());
            }
        }
        Value::Object(out)
    }

    /// Applies this change to `value` (the value so far as the changes before built it).
    /// A change that does not fit (never, for changes in their order) is left out.
    pub fn apply(&self, value: &mut Value) {
        // What a stream changes is along the newest members: found there without hashing a
        // key, else looked up by its pointer.
        match self {
            Change::Set { at, value: new } => {
                let Some((parent, last)) = at.parent_and_last() else {
                    *value = new.clone();
                    return;
                };
                let set = |container: &mut Value| match container {
                    Value::Object(map) => {
                        map.insert(last.into_owned(), new.clone());
                    }
                    Value::Array(items) => match last.parse::<usize>() {
                        Ok(i) if i == items.len() => items.push(new.clone()),
                        Ok(i) => {
                            if let Some(slot) = items.get_mut(i) {
                                *slot = new.clone();
                            }
                        }
                        Err(_) => {}
                    },
                    _ => {}
                };
                edit_at(value, parent, set);
            }
            Change::Append { at, text } => {
                let append = |target: &mut Value| {
                    if let Value::String(s) = target {
                        s.push_str(text);
                    }
                };
                edit_at(value, at.as_str(), append);
            }
        }
    }
}

/// Free text being read: where it is, and what is decoded of it (the token holds the rest).
struct FreeText {
    at: Pointer,
    text: String,
    /// Its text is kept: the value so far is kept, or its container keeps it, or a check of
    /// its node reads more than its type. Else only its changes carry it (a reader keeping no
    /// value reads a long text without holding it).
    kept: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A string's content is decoded as `serde_json` decodes it, or refused where it refuses:
    /// every sequence of up to three pieces among plain text, each escape (valid, unknown, cut
    /// short), surrogates paired and lone, control characters and bytes that are not UTF-8.
    #[test]
    fn string_content_decodes_as_serde_json_does() {
        let pieces: &[&[u8]] = &[
            b"a",
            b"\xc3\xa9",
            b"\xe2\x82",
            b"\xff",
            b"\x01",
            b"\t",
            b"\\\"",
            b"\\\\",
            b"\\/",
            b"\\b",
            b"\\f",
            b"\\n",
            b"\\r",
            b"\\t",
            b"\\x",
            b"\\",
            b"\\u",
            b"\\u00e9",
            b"\\u00E",
            b"\\u0000",
            b"\\u12g4",
            b"\\uD83D",
            b"\\ude00",
            b"\\uDBFF\\uDFFF",
            b"\\uD800\\u0041",
            b"\\uFFFF",
        ];
        let mut cases = vec![Vec::new()];
        for _ in 0..3 {
            let longer: Vec<Vec<u8>> = cases
                .iter()
                .flat_map(|case| {
                    pieces.iter().map(move |piece| {
                        let mut next = case.clone();
                        next.extend_from_slice(piece);
                        next
                    })
                })
                .collect();
            cases.extend(longer);
        }
        assert!(cases.len() > 17_000);
        // (A quote no backslash escapes ends the string: it is never in a string's content.)
        let ends_early = |content: &[u8]| {
            let mut escaped = false;
            content.iter().any(|&b| {
                let quote = b == b'"' && !escaped;
                escaped = b == b'\\' && !escaped;
                quote
            })
        };
        for content in cases.into_iter().filter(|c| !ends_early(c)) {
            let mut quoted = vec![b'"'];
            quoted.extend_from_slice(&content);
            quoted.push(b'"');
            let theirs = serde_json::from_slice::<String>(&quoted).ok();
            assert_eq!(
                string_content(&content),
                theirs,
                "{:?}",
                String::from_utf8_lossy(&content)
            );
        }
    }

    /// An object whose names are kept as fingerprints only, wide enough that most are merged
    /// into the sorted list: an early name is still complete, a name not given is not, and the
    /// first name given again (after the merges) stops the reading as written.
    #[test]
    fn a_wide_object_kept_by_names_knows_each_after_many_merges() {
        let schema = ResponseSchema::new(
            "s",
            serde_json::json!({"type": "object", "properties": {"title": {"type": "string"}}}),
        )
        .unwrap();
        let mut reader = StreamReader::changes_only(&schema);
        reader.feed(br#"{"title": "rows""#);
        for i in 0..20_000 {
            reader.feed(format!(r#", "k{i}": {i}"#).as_bytes());
        }
        assert_eq!(reader.status(), StreamStatus::Reading);
        let at = |name: &str| Pointer::root().key(name);
        assert!(reader.is_complete(&at("k3")));
        // (The last number may go on: it is complete once something follows it.)
        assert!(reader.is_complete(&at("k19998")));
        assert!(!reader.is_complete(&at("k20000")));
        reader.feed(br#", "k3": 0"#);
        assert_eq!(reader.status(), StreamStatus::Unreadable);
    }

    /// A list kept as prints notes each item from its own text: one print per distinct item
    /// (an item read from a wrong span would print as another, or as nothing).
    #[test]
    fn a_list_kept_as_prints_notes_each_item_from_its_own_text() {
        let schema = ResponseSchema::new(
            "s",
            serde_json::json!({"type": "object", "properties": {"xs": {"type": "array", "uniqueItems": true}}}),
        )
        .unwrap();
        let mut reader = StreamReader::changes_only(&schema);
        let items = r#"1, -2.5e3, "a\"b", true, null, {"x": [1, {"y": "z"}]}, [2, "3"], "", 0"#;
        for byte in format!(r#"{{"xs": [{items}, "#).as_bytes() {
            reader.feed(std::slice::from_ref(byte));
        }
        let unique = reader
            .frames
            .last()
            .and_then(|f| f.unique.as_ref())
            .expect("the list kept as prints");
        let expected: Vec<u32> = serde_json::from_str::<Vec<Value>>(&format!("[{items}]"))
            .unwrap()
            .iter()
            .map(folded_print)
            .collect();
        let noted: Vec<u32> = unique.items.iter().map(|n| n.print).collect();
        // Each noted where it starts, from the list's `[`.
        let list = format!(r#"[{items}, "#);
        let starts: Vec<usize> = unique.items.iter().map(|n| n.from as usize).collect();
        assert_eq!(starts.first(), Some(&1));
        assert!(starts.iter().all(|&at| list.get(at..).is_some_and(|rest| {
            serde_json::Deserializer::from_str(rest)
                .into_iter::<Value>()
                .next()
                .is_some_and(|v| v.is_ok())
        })));
        assert_eq!(std::mem::size_of::<Noted>(), 8);
        assert_eq!(noted, expected);
    }

    /// Two different items whose prints meet (found among the integers) are read again and told
    /// apart: no repeat is reported for them, and a real repeat after them still is, where a
    /// reader keeping the items reports it.
    #[test]
    fn items_whose_prints_meet_are_compared_as_written() {
        let mut seen = std::collections::HashMap::new();
        let (a, b) = (0..1_000_000u64)
            .find_map(|n| {
                let print = folded_print(&Value::from(n));
                seen.insert(print, n).map(|m| (m, n))
            })
            .expect("two integers whose prints meet");
        let schema = ResponseSchema::new(
            "s",
            serde_json::json!({"type": "object", "properties": {"xs": {"type": "array", "uniqueItems": true}}}),
        )
        .unwrap();
        let report = |text: &str, lean: bool| {
            let mut reader = if lean {
                StreamReader::changes_only(&schema)
            } else {
                StreamReader::new(&schema)
            };
            let mut found = Vec::new();
            for chunk in text.as_bytes().chunks(3) {
                let progress = reader.feed(chunk);
                found.extend(
                    progress
                        .violations
                        .iter()
                        .map(|v| (v.path.to_string(), v.rule)),
                );
            }
            assert_eq!(reader.status(), StreamStatus::Complete, "{text}");
            found
        };
        let distinct = format!(r#"{{"xs": [{a}, 7, {b}]}}"#);
        assert_eq!(report(&distinct, true), vec![]);
        assert_eq!(report(&distinct, false), vec![]);
        let repeated = format!(r#"{{"xs": [{a}, {b}, 7, {b}]}}"#);
        let kept = report(&repeated, false);
        assert_eq!(
            kept,
            vec![(
                "/xs/3".to_string(),
                crate::schema::validate::Rule::UniqueItems
            )]
        );
        assert_eq!(report(&repeated, true), kept);
    }
}

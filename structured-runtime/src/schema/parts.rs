//! Where a value can be judged in parts: the long lists (and maps) of an answer, an item (a
//! member) at a time.
//!
//! A list is judged item by item when its schema asserts only what each item is (`items`) and
//! how many there may be (`minItems`, `maxItems`), and it is reached from the root through
//! declared `properties` of objects that assert only what their keys and their number may be
//! (`type`, `properties`, `required`, `additionalProperties`, `propertyNames`, the property
//! counts), or through the positions of tuples that assert only what each position is and their
//! count (`prefixItems` in the 2020-12 draft, `items` past them, `minItems`, `maxItems`: a
//! derived `(Meta, Vec<Row>)`), each a [`Step`]. Then, for any value:
//!
//! - an item in the list is valid exactly when it is valid against `items` alone, and the list
//!   exactly when each item is and the count is within bounds;
//! - nothing else in the schema looks inside the list, so what is left of the value once its
//!   lists are emptied (its *rest*) is judged exactly by the schema with the lists' `items` and
//!   counts taken out.
//!
//! A map is judged member by member the same way: an object whose schema asserts only `type`
//! (an object), `additionalProperties` (a schema, or nothing), `patternProperties`,
//! `propertyNames` and the property counts, so each member is valid exactly when it is valid
//! against the schema of every pattern its name matches (or `additionalProperties` alone, when
//! none does) and its key against `propertyNames` alone, and only the count of members is left
//! (the names are judged in the explanation walk's words, so only where the walk has words for
//! every refusal of `propertyNames`; patterns are matched as the validator matches them,
//! `schema::pattern`).
//!
//! An object with declared `properties` beside its other members (asserting only `type`,
//! `properties`, `required`, `additionalProperties`, `patternProperties`, `propertyNames` and
//! the property counts) has its other members judged one at a time the same way (each name by
//! `propertyNames` alone, the declared ones' too, and the count at the end, the declared members
//! with the others); lists below its declared properties are parts
//! too, except below a declared name a pattern matches where that pattern's schema looks inside
//! the part (that member is judged by the pattern too, so it is held in the rest whole: see
//! [`super::blind`]). The members it holds in the rest are those whose names are declared
//! ignoring ASCII case, the ones coercion may rename to a declared name, so fitting the rest
//! renames them as fitting the whole object does; the rest keeps `additionalProperties` to
//! judge those not renamed. A value whose rest and other members are each valid is valid (the converse fails only for a `required` name the object
//! does not declare, and the reader then reads the answer whole).
//!
//! An object that allows no member it does not declare (`additionalProperties: false`, asserting
//! only `type`, `properties`, `required` and `additionalProperties`) has those members judged one
//! at a time too: each is refused, or dropped where coercion drops it, whatever its value. Its
//! declared members (and those coercion may rename to one) are in the rest, and lists below them
//! are judged in parts as below any object on the way. Where it has `patternProperties` too (a
//! map of them, or beside declared properties, allowing only objects), a member a pattern
//! matches is judged by those patterns' schemas as a map's member is, and the others are
//! refused, or dropped, as they are read (a map's count is of the members kept).
//!
//! A list may also ask that its items differ (`uniqueItems`) or that some match a schema
//! (`contains`, with `minContains` and `maxContains`). Those are judged from what each item
//! leaves behind: a 64-bit print of it ([`print`]: items equal as JSON Schema compares them
//! have one print, so distinct prints mean distinct items), and whether it is valid against
//! `contains` alone (the validator of record's verdict, counted). How many matches are enough
//! is the validator's verdict too, on a stand-in list holding that many matches
//! ([`Parts::contains_holds`]), so the list's draft and bounds are read as the validator reads
//! them. Items whose prints are one are read again and compared by the validator
//! ([`Parts::is_repeat`]).
//!
//! Where the way passes an `anyOf` whose branches the value's kind tells apart (one taking
//! lists, one taking objects, scalars and `null` beside: an optional list, an `Option` of a
//! struct) or an enum with data (variants each naming itself by a tag or by its one key, see
//! [`Point`]), which lists lie below depends on the branch: a value one branch takes by its
//! kind, or names, is refused by every other, so the `anyOf` takes it exactly when that branch
//! does, and that branch's lists are the parts ([`Parts::decided`], chosen per answer as
//! coercion chooses, and kept only when the value as fitted names that branch and no other).
//! Where only the names an object has tell object branches apart (an untagged enum,
//! [`apart_by_names`]), the branch coercion takes (the one declaring most of them) has its lists
//! read in parts, and the verdict is theirs for a valid value every other branch refuses by its
//! names alone ([`Parts::chose_by_names`]; else `read::parts` judges the value's fitted text as
//! a stream reader does, each branch on the whole text: a refusal there is explained by the
//! closest branch).
//!
//! The way also passes through references: a `$ref`, or an `allOf` of one schema, beside
//! nothing that asserts (how code generators write nested types). The rest's schema has the
//! node it leads to written out in place, and the lists are taken out of that copy, so the node
//! itself stays whole for every other place that refers to it. A reference that names a node
//! that changes (the root, or a node on the way, as a tree's `{"$ref": "#"}` does) leads, in the
//! rest's schema, to an untouched copy of the whole document kept among its definitions: a value
//! held in the rest is judged by the whole node it names, never by what is left of it.
//!
//! An item (a member) judged alone whose own schema has such parts (a row holding a list) can be
//! judged in parts itself: [`Parts::inner`], the same reading one level down, for an item that
//! holds the bulk of an answer.
//!
//! Every verdict is the validator of record's: each item by the `items` node compiled alone
//! (its `$ref`s resolved in the whole document, [`Compiled::at`]), the rest by the reduced
//! schema; only the count is compared here. The reader uses this to read a long answer without
//! holding its whole value (`read::parts`).

use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Map, Value};

use super::blind::blind_below;
use super::checks::asserts_nothing;
use super::node::{Additional, JsonType, Node};
use super::pointer::{Path, Pointer, Step};
use super::validate::{preview_list, Rule, Violation, Violations};
use super::validation::{item_count, name_violation, property_count, weight, Compiled, CONTAINS};

/// Lists judged in parts, at most (a schema may declare many; the first found are enough).
const MAX_LISTS: usize = 32;

/// Objects passed through from the root to a list, at most.
const MAX_LIST_DEPTH: usize = 8;

/// What an object on the way to a list may assert: nothing that looks inside its members.
const OBJECT_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "$defs",
    "definitions",
    "$schema",
];

/// What an object on the way may assert beside [`OBJECT_KEYWORDS`] where no schema it names
/// looks inside the value on the way below it ([`blind_below`]): conditions and further rules
/// about its other members, its names or its count (`if` a kind is given `then` a member is
/// required, `not` both of two members, `allOf` more rules). Coercion reads none of these (an
/// `anyOf`, a `oneOf` or a `$ref` beside would choose what it fits), so the value is fitted by
/// its declared properties alone as the whole reading fits it.
const BESIDE_THE_WAY: &[&str] = &[
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
];

/// What a tuple on the way to a list may assert (`prefixItems`, in the 2020-12 draft): nothing
/// that looks at its positions together, so each position is judged by its own schema alone
/// (those past them by `items` alone).
const TUPLE_KEYWORDS: &[&str] = &[
    "type",
    "prefixItems",
    "items",
    "minItems",
    "maxItems",
    "$defs",
    "definitions",
    "$schema",
];

/// What a list may assert to be judged an item at a time, beside what it asserts over its
/// items as a whole ([`OVER_ITEMS`]).
const LIST_KEYWORDS: &[&str] = &["type", "items", "$defs", "definitions", "$schema"];

/// What a list's own node asserts about its items as a whole, taken out of the rest.
const OVER_ITEMS: &[&str] = &[
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
];

/// What an object may assert to be judged a member at a time (a map: every member is judged
/// by `additionalProperties` alone, each key by `propertyNames` alone, and only the count of
/// members by the property counts, [`OVER_MEMBERS`]).
const MAP_KEYWORDS: &[&str] = &[
    "type",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "$defs",
    "definitions",
    "$schema",
];

/// What a map's own node asserts about its members as a whole or their keys, taken out of the
/// rest and judged here (the keys one at a time, the count at the end).
const OVER_MEMBERS: &[&str] = &["propertyNames", "minProperties", "maxProperties"];

/// What an object with declared properties may assert to have its other members judged one at a
/// time.
const MIXED_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "$defs",
    "definitions",
    "$schema",
];

/// The most matches of `contains` a list's bounds may tell apart: a list whose `minContains` or
/// `maxContains` is larger is not judged in parts (its stand-in would be as long).
const MAX_CONTAINS_BOUND: u64 = 65_536;

/// The choices of variants whose parts one schema keeps, at most (each a few compiled
/// validators; past this many, a value is read whole).
const MAX_DECIDED: usize = 64;

/// Keywords that change how references resolve: a document holding one is not split.
const RESOLUTION: &[&str] = &["$id", "$anchor", "$dynamicAnchor", "$recursiveAnchor"];

/// How a schema's values are judged in parts (see the [module documentation](self)).
pub(crate) struct Parts {
    /// The schema without the lists' `items` and counts.
    rest_schema: Value,
    rest: Compiled,
    /// Where the value these parts split is described in the schema: the root, or the schema of
    /// an item of a list (the parts of one long item, [`Parts::inner`]).
    base: Pointer,
    lists: Vec<List>,
    /// `uniqueItems` alone, in the document's draft: whether two items are equal, as the
    /// validator compares them. Compiled when a list asks for it.
    pair: Option<Compiled>,
    /// The places on the way where the value's variant decides which lists lie below, not
    /// decided here ([`Parts::decided`] decides them).
    points: Vec<Point>,
    /// The variants these parts were made for: where each was chosen, and which.
    chosen: Vec<Choice>,
    /// The parts for each choice of variants met so far (at most [`MAX_DECIDED`]).
    decided: Mutex<Vec<Made>>,
}

/// What one schema's parts may take, with the parts of their items ([`Parts::inner`]).
#[derive(Debug, Clone, Copy)]
struct Budget {
    /// Parts judged one at a time, at most.
    lists: usize,
    /// JSON values in the rests' schemas, at most (each a copy of the document, with nodes
    /// written out in place and the whole kept for references: a tree's items read in parts to
    /// the depth this allows).
    values: usize,
}

impl Budget {
    /// Room for [`MAX_LISTS`] parts, and rests' schemas of six times the document's size (at
    /// least [`MIN_REST_VALUES`] values).
    fn of(document: &Value) -> Budget {
        Budget {
            lists: MAX_LISTS,
            values: weight(document, usize::MAX)
                .saturating_mul(6)
                .max(MIN_REST_VALUES),
        }
    }
}

/// The JSON values the rests' schemas of one schema may hold at least (a small schema's tree
/// read in parts to the depth of [`MAX_LISTS`]).
const MIN_REST_VALUES: usize = 1 << 16;

/// Parts made for one choice of variants (`None`: nothing to read in parts then).
type Made = (Vec<Option<usize>>, Option<Arc<Parts>>);

/// A place on the way to lists where the schema chooses among branches: an `anyOf` whose
/// branches the kind of value tells apart (one takes lists, one objects: an optional list, an
/// `Option` of a struct), or whose object branches each name their variant by a tag (`{"kind":
/// "batch", ..}`: one required property allowing one string, the same property in every
/// branch) or by their one key (`{"Batch": {..}}`: an object allowing only that key), as enums
/// with data are written ([`decides`]). A value a branch takes by its kind or names is refused by
/// every other branch, so the `anyOf` takes it exactly when that branch does: below, that
/// branch's lists are the parts. Or an `anyOf` whose object branches only the names of an
/// object tell apart (an untagged enum, [`apart_by_names`]): there the value is checked to be
/// refused by every other branch ([`Parts::names_chosen`]).
#[derive(Debug, Clone)]
pub(crate) struct Point {
    /// The steps from the base to the value.
    pub(crate) steps: Vec<Step>,
    /// The `anyOf` node's pointer in the document.
    at: Pointer,
}

/// A variant chosen at a [`Point`].
struct Choice {
    point: Point,
    /// The index of the branch taken.
    branch: usize,
    /// The place is one where only names tell the branches taking objects apart
    /// ([`apart_by_names`]).
    by_names: bool,
}

impl std::fmt::Debug for Parts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parts")
            .field(
                "lists",
                &self.lists.iter().map(|l| &l.steps).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// What a part holds, judged one at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Holds {
    /// A list's items.
    Items,
    /// A map's members (an object all of whose members `additionalProperties` judges), or the
    /// members an object does not declare.
    Members,
    /// The members an object that allows none beside its declared ones
    /// (`additionalProperties: false`) does not declare: each refused, or dropped.
    Undeclared,
}

impl Holds {
    /// The keyword whose schema judges one item (member) of such a part.
    fn keyword(self) -> &'static str {
        match self {
            Holds::Items => "items",
            Holds::Members | Holds::Undeclared => "additionalProperties",
        }
    }
}

/// One list (or map) judged an item (a member) at a time.
struct List {
    /// The steps from the root to the list (declared properties, a tuple's positions).
    steps: Vec<Step>,
    /// The list's (the object's) schema pointer in the document.
    at: Pointer,
    holds: Holds,
    /// The validator of record for one item; `None`: any member is valid (a map without
    /// `additionalProperties`, or with `true`).
    items: Option<Compiled>,
    /// The list's `minItems` and `maxItems` (a map's `minProperties` and `maxProperties`).
    counts: Map<String, Value>,
    /// A map's `propertyNames`, compiled alone, and its node's pointer in the document: each
    /// member's key is judged by it.
    names: Option<(Compiled, Pointer)>,
    /// A map's `patternProperties`: a member whose name a pattern matches is judged by the
    /// schema of each such pattern (and `items`, its `additionalProperties`, judges only those
    /// no pattern matches).
    patterns: Vec<Pattern>,
    /// Its items must differ (`uniqueItems`).
    unique: bool,
    /// An object allowing no member it does not declare, whose members are judged by their
    /// names' patterns: a member no pattern matches is refused, or dropped.
    closed: bool,
    /// Its `contains` and how many items must match it.
    contains: Option<Contains>,
    /// The names an object declares, in ASCII lowercase, sorted: its members with these names
    /// ignoring case are held in the rest. Empty for a map and a list.
    declared: Vec<String>,
    /// How one item (member) is judged in parts itself, when its schema allows: for an item
    /// holding the bulk of the answer.
    inner: Inner,
}

/// How the items of one list are read in parts themselves, worked out on first need (most
/// answers hold no long item, and a tree's items are the whole schema again).
struct Inner {
    /// What is left of the budget for them; `None` where an item is never read in parts.
    budget: Option<Budget>,
    made: OnceLock<Option<Box<Parts>>>,
}

/// One pattern of a map's `patternProperties` and its schema, compiled alone.
struct Pattern {
    /// The pattern, matched as the validator matches it.
    text: String,
    each: Compiled,
    /// The schema's pointer in the document.
    at: Pointer,
}

/// A list's `contains`: what an item must be to match, and how many must.
struct Contains {
    /// `contains` compiled alone.
    each: Compiled,
    /// The list's own `contains` bounds over a stand-in list whose items match when they are
    /// `true`: `{"contains": {"const": true}}` with its `minContains` and `maxContains`, in the
    /// document's draft.
    over: Compiled,
    /// Matches past this many do not change the verdict (one more than the largest bound).
    enough: usize,
}

impl Parts {
    /// How `document`'s values are judged in parts; `None` when it has no list that can be,
    /// nor a place where a variant may lead to one.
    pub(crate) fn of(document: &Value) -> Option<Parts> {
        if changes_resolution(Node::root(document)) {
            return None;
        }
        let mut budget = Budget::of(document);
        Parts::at(document, Pointer::root(), &mut budget, &[])
    }

    /// How the values the schema at `base` in `document` describes are judged in parts, within
    /// `budget` (taken from it) here and in the items below, taking at each place of `choices`
    /// the branch given.
    fn at(
        document: &Value,
        base: Pointer,
        budget: &mut Budget,
        choices: &[(Vec<Step>, usize)],
    ) -> Option<Parts> {
        let start = node_at(document, &base)?;
        let mut search = Search {
            found: Vec::new(),
            points: Vec::new(),
            choices,
            tuples: reads_prefix_items(document),
            chosen: Vec::new(),
            inlined: Vec::new(),
            way: Vec::new(),
            watchers: Vec::new(),
        };
        find(start, &base, &base, &mut Vec::new(), &mut search);
        let Search {
            mut found,
            points,
            chosen,
            inlined,
            ..
        } = search;
        found.truncate(budget.lists);
        budget.lists -= found.len();
        if found.is_empty() && points.is_empty() {
            return None;
        }
        let mut rest_schema = rest_document(document, &found, &inlined)?;
        budget.values = budget
            .values
            .checked_sub(weight(&rest_schema, budget.values))?;
        let mut lists = Vec::with_capacity(found.len());
        for Found {
            steps,
            at,
            rest,
            holds,
        } in found
        {
            let node = node_at(document, &at)?;
            let keyword = holds.keyword();
            let items = match member_node(node, holds) {
                Some(items) => Some(Compiled::at(document, items, &at.key(keyword)).ok()?),
                None => None,
            };
            let list = rest.get_mut(&mut rest_schema)?.as_object_mut()?;
            // A list's rest is empty and its count compared here; an object's rest keeps the
            // members held there, judged by its `additionalProperties` still.
            if holds == Holds::Items {
                list.remove(keyword);
            }
            let mut counts = Map::new();
            let mut over = Map::new();
            let taken_out = match holds {
                Holds::Items => OVER_ITEMS,
                // (Its names and count are judged here: those of the declared members the rest
                // holds too, `Parts::declared_names`.)
                Holds::Members | Holds::Undeclared => OVER_MEMBERS,
            };
            for keyword in taken_out {
                if let Some(value) = list.remove(*keyword) {
                    over.insert((*keyword).to_owned(), value);
                }
            }
            for keyword in ["minItems", "maxItems", "minProperties", "maxProperties"] {
                if let Some(value) = over.remove(keyword) {
                    counts.insert(keyword.to_owned(), value);
                }
            }
            let names = match over.get("propertyNames") {
                Some(schema) => {
                    let names_at = at.key("propertyNames");
                    let compiled = Compiled::at(document, node.child(schema), &names_at).ok()?;
                    Some((compiled, names_at))
                }
                None => None,
            };
            let mut patterns = Vec::new();
            if holds == Holds::Members {
                let patterns_at = at.key("patternProperties");
                for (text, schema) in node
                    .get("patternProperties")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                {
                    let at = patterns_at.key(text);
                    patterns.push(Pattern {
                        text: text.clone(),
                        each: Compiled::at(document, node.child(schema), &at).ok()?,
                        at,
                    });
                }
            }
            let unique = over.get("uniqueItems") == Some(&Value::Bool(true));
            let contains = match node.get("contains") {
                Some(schema) => {
                    let schema = node.child(schema);
                    Some(Contains {
                        each: Compiled::at(document, schema, &at.key("contains")).ok()?,
                        over: stand_in(document, "contains", json_true_const(), &over)?,
                        enough: enough_matches(&over)?,
                    })
                }
                None => None,
            };
            let mut declared: Vec<String> = match holds {
                Holds::Members | Holds::Undeclared => node
                    .properties()
                    .map(|(name, _)| name.to_ascii_lowercase())
                    .collect(),
                Holds::Items => Vec::new(),
            };
            declared.sort_unstable();
            declared.dedup();
            // An item judged alone may itself be read in parts; not where the items are compared
            // with each other (that needs each item's value), nor members whose schema is chosen
            // by their name.
            // (Worked out when a long item first needs it, within what is left of the budget.)
            let inner = Inner {
                budget: (member_node(node, holds).is_some()
                    && !unique
                    && contains.is_none()
                    && patterns.is_empty())
                .then_some(*budget),
                made: OnceLock::new(),
            };
            lists.push(List {
                steps,
                at,
                holds,
                items,
                counts,
                names,
                patterns,
                unique,
                closed: holds == Holds::Members && node.closed(),
                contains,
                declared,
                inner,
            });
        }
        let rest = if base == Pointer::root() {
            Compiled::new(&rest_schema).ok()?
        } else {
            Compiled::at(&rest_schema, node_at(&rest_schema, &base)?, &base).ok()?
        };
        let pair = match lists.iter().any(|l| l.unique) {
            true => Some(stand_in(
                document,
                "uniqueItems",
                Value::Bool(true),
                &Map::new(),
            )?),
            false => None,
        };
        Some(Parts {
            rest_schema,
            rest,
            base,
            lists,
            pair,
            points,
            chosen,
            decided: Mutex::default(),
        })
    }

    /// The places on the way where the value's variant decides which lists lie below.
    pub(crate) fn points(&self) -> &[Point] {
        &self.points
    }

    /// These parts with the variant at each of [`Parts::points`] chosen (`choices`, in their
    /// order; `None`: not chosen there), `document` the schema they were made from; `None` when
    /// nothing is chosen or nothing can be read in parts then. Made once per choice (up to
    /// [`MAX_DECIDED`] kept).
    pub(crate) fn decided(
        &self,
        document: &Value,
        choices: &[Option<usize>],
    ) -> Option<Arc<Parts>> {
        if choices.iter().all(Option::is_none) {
            return None;
        }
        let mut cache = self.decided.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, parts)) = cache.iter().find(|(made, _)| made == choices) {
            return parts.clone();
        }
        let made: Vec<(Vec<Step>, usize)> = self
            .points
            .iter()
            .zip(choices)
            .filter_map(|(point, choice)| Some((point.steps.clone(), (*choice)?)))
            .collect();
        let mut budget = Budget::of(document);
        let parts = Parts::at(document, self.base.clone(), &mut budget, &made).map(Arc::new);
        if cache.len() < MAX_DECIDED {
            cache.push((choices.to_vec(), parts.clone()));
        }
        parts
    }

    /// The schema node that alone judges the value at `steps` (from the base) the rest holds
    /// whole, in `document`: reached through objects on the way (each judging a member by its
    /// declared property alone), tuples on the way (each judging a position by its own schema
    /// alone) and the variants chosen; `None` where it is not known to be the only one.
    pub(crate) fn held_node<'d>(&self, document: &'d Value, steps: &[Step]) -> Option<Node<'d>> {
        let mut node = way(self.base_node(document)?);
        for (depth, step) in steps.iter().enumerate() {
            if is_point(node) {
                let above = steps.get(..depth)?;
                let choice = self.chosen.iter().find(|c| c.point.steps == above)?;
                node = way(node.any_of()?.nth(choice.branch)?);
            }
            node = match step {
                Step::Key(key) => {
                    let on_the_way = node
                        .map()?
                        .keys()
                        .all(|k| OBJECT_KEYWORDS.contains(&k.as_str()) || asserts_nothing(k));
                    if !on_the_way {
                        return None;
                    }
                    way(node.property(key)?)
                }
                Step::Index(index) if reads_prefix_items(document) => {
                    tuple_on_the_way(node)?;
                    way(node.item(*index)?)
                }
                Step::Index(_) => return None,
            };
        }
        Some(node)
    }

    /// The `anyOf` of place `point` in `document` (the schema these parts were made from).
    pub(crate) fn point_node<'d>(&self, document: &'d Value, point: &Point) -> Option<Node<'d>> {
        node_at(document, &point.at)
    }

    /// Where `rest` (the value with its lists emptied, fitted) names no variant at a place where
    /// these parts chose one, among two or more variants that take objects: the one violation
    /// the `anyOf` there reports (nothing below it is reported); none where the value names the
    /// variant chosen or where only the branch chosen takes its kind of value (then its report
    /// is the chosen branch's). `None` where the value names another variant (its report is
    /// that one's) or no branch, or one other than the chosen, takes its kind, and where only
    /// names tell the branches apart and another branch may take the value.
    pub(crate) fn unnamed(&self, document: &Value, rest: &Value) -> Option<Vec<Violation>> {
        let mut out = Vec::new();
        for choice in &self.chosen {
            let at = Pointer::of_steps(&choice.point.steps);
            let value = at.get(rest)?;
            let node = node_at(document, &choice.point.at)?;
            let branches: Vec<Node<'_>> = node.any_of()?.collect();
            if choice.by_names {
                // (Where no name tells the branches apart, the refusal is the closest branch's.)
                match only_taker(&branches, choice.branch, value) {
                    true => continue,
                    false => return None,
                }
            }
            let named: Vec<usize> = (0..branches.len())
                .filter(|&i| branches.get(i).is_some_and(|b| b.tagged_for(value)))
                .collect();
            match named[..] {
                [only] if only == choice.branch => continue,
                [] => {}
                _ => return None,
            }
            let takers: Vec<usize> = (0..branches.len())
                .filter(|&i| {
                    branches
                        .get(i)
                        .is_some_and(|b| b.target().types().allows(value))
                })
                .collect();
            match takers[..] {
                [only] if only == choice.branch => {}
                [_, _, ..] => {
                    let (rule, expected) = super::validation::no_branch(node);
                    out.push(Violation {
                        path: at,
                        rule,
                        expected,
                        found: super::validate::preview_json(value),
                    })
                }
                _ => return None,
            }
        }
        Some(out)
    }

    /// Whether `rest` (the value with its lists emptied, fitted) names, at each place where these
    /// parts chose a branch, that branch and no other (by its tag or key, or by being the only
    /// branch taking its kind of value, or, where only names tell the branches apart, by every
    /// other branch refusing its names, [`apart_by_names`]): then the `anyOf` there takes the value exactly when
    /// the branch chosen does, and says why not in that branch's words.
    pub(crate) fn names_chosen(&self, document: &Value, rest: &Value) -> bool {
        self.chosen.iter().all(|choice| {
            let at = Pointer::of_steps(&choice.point.steps);
            let (Some(value), Some(node)) = (at.get(rest), node_at(document, &choice.point.at))
            else {
                return false;
            };
            if choice.by_names {
                return node
                    .any_of()
                    .is_some_and(|b| only_taker(&b.collect::<Vec<_>>(), choice.branch, value));
            }
            node.any_of().is_some_and(|branches| {
                let (mut named, mut others_take, mut takes) = (false, false, false);
                for (i, b) in branches.enumerate() {
                    let (tagged, allows) = (b.tagged_for(value), b.target().types().allows(value));
                    match i == choice.branch {
                        true => (named, takes) = (tagged, allows),
                        false if tagged => return false,
                        false => others_take |= allows,
                    }
                }
                takes && (named || !others_take)
            })
        })
    }

    /// Whether a variant was chosen where only names tell the branches apart
    /// ([`apart_by_names`]): the verdict of these parts is then the value's only when it is
    /// valid and every other branch refuses its names.
    pub(crate) fn chose_by_names(&self) -> bool {
        self.chosen.iter().any(|c| c.by_names)
    }

    /// Whether an item (member) of part `list` may be read in parts itself ([`Parts::inner`]
    /// says how, when one is long).
    pub(crate) fn may_nest(&self, list: usize) -> bool {
        self.lists
            .get(list)
            .is_some_and(|l| l.inner.budget.is_some())
    }

    /// How an item (member) of part `list` is read in parts itself, when it can be (`document`:
    /// the one these parts were made for).
    pub(crate) fn inner(&self, list: usize, document: &Value) -> Option<&Parts> {
        let list = self.lists.get(list)?;
        let budget = list.inner.budget?;
        let keyword = list.holds.keyword();
        list.inner
            .made
            .get_or_init(|| {
                let mut budget = budget;
                Parts::at(document, list.at.key(keyword), &mut budget, &[]).map(Box::new)
            })
            .as_deref()
    }

    /// The schema node of the value these parts split, in `document` (the one they were made
    /// from): its root, or an item's node.
    pub(crate) fn base_node<'d>(&self, document: &'d Value) -> Option<Node<'d>> {
        node_at(document, &self.base)
    }

    /// How many lists are judged in parts.
    pub(crate) fn len(&self) -> usize {
        self.lists.len()
    }

    /// Whether member `key` of the object judged in parts as part `list` is held in the rest,
    /// not judged alone: its name is one the object declares, ignoring ASCII case.
    pub(crate) fn in_rest(&self, list: usize, key: &str) -> bool {
        self.lists.get(list).is_some_and(|l| {
            l.declared
                .binary_search_by(|name| {
                    let folded = key.bytes().map(|b| b.to_ascii_lowercase());
                    name.bytes().cmp(folded)
                })
                .is_ok()
        })
    }

    /// Whether part `list` lies inside an object whose other members are a part (its holder is
    /// one of that object's declared members, or below one).
    pub(crate) fn under_members(&self, list: usize) -> bool {
        let steps = self.steps(list);
        self.lists.iter().any(|l| {
            l.holds == Holds::Members && l.steps.len() < steps.len() && steps.starts_with(&l.steps)
        })
    }

    /// Whether part `list` is the other members of an object that declares properties and
    /// allows others (written among them).
    pub(crate) fn beside_declared(&self, list: usize) -> bool {
        self.lists
            .get(list)
            .is_some_and(|l| l.holds == Holds::Members && !l.declared.is_empty())
    }

    /// The schema node of the list (or object) holding part `list`, in `document`.
    pub(crate) fn holder_node<'d>(&self, document: &'d Value, list: usize) -> Option<Node<'d>> {
        node_at(document, &self.lists.get(list)?.at)
    }

    /// The steps from the root to list `list`, written as text (a position in decimal).
    #[cfg(test)]
    fn names(&self, list: usize) -> Vec<String> {
        self.steps(list)
            .iter()
            .map(|step| match step {
                Step::Key(key) => key.clone(),
                Step::Index(index) => index.to_string(),
            })
            .collect()
    }

    /// The steps from the root to list `list`.
    pub(crate) fn steps(&self, list: usize) -> &[Step] {
        self.lists.get(list).map_or(&[], |l| &l.steps)
    }

    /// What part `list` holds.
    pub(crate) fn holds(&self, list: usize) -> Holds {
        self.lists.get(list).map_or(Holds::Items, |l| l.holds)
    }

    /// The schema node of an item of list `list` in `document` (the schema these parts were
    /// made from); `None` for a map's members when any member is valid.
    pub(crate) fn item_node<'d>(&self, document: &'d Value, list: usize) -> Option<Node<'d>> {
        member_node(self.holder_node(document, list)?, self.holds(list))
    }

    /// Whether member `key` of part `list` is one its object allows none of: it declares no
    /// such name, and no pattern matches it.
    pub(crate) fn refuses_member(&self, list: usize, key: &str) -> bool {
        self.lists
            .get(list)
            .is_some_and(|l| l.closed && self.matching(list, Some(key)).next().is_none())
    }

    /// Whether part `list`'s members are judged by their names' patterns (`patternProperties`):
    /// then a member's schema is the one its name chooses ([`Node::member`]), not
    /// [`Parts::item_node`].
    pub(crate) fn by_name(&self, list: usize) -> bool {
        self.lists.get(list).is_some_and(|l| !l.patterns.is_empty())
    }

    /// The patterns of part `list` matching member name `key` (none for an item of a list).
    fn matching<'a>(
        &'a self,
        list: usize,
        key: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Pattern> {
        let patterns = match (self.lists.get(list), key) {
            (Some(l), Some(_)) => l.patterns.as_slice(),
            _ => &[],
        };
        patterns
            .iter()
            .filter(move |p| key.is_some_and(|key| super::pattern::pattern_matches(&p.text, key)))
    }

    /// Whether `item` is valid in list `list`, as member `key` of a map (an undeclared member
    /// never is): by each pattern its name matches, else by the item schema.
    pub(crate) fn item_is_valid(&self, list: usize, key: Option<&str>, item: &Value) -> bool {
        let mut matched = self.matching(list, key).peekable();
        if matched.peek().is_some() {
            return matched.all(|p| p.each.is_valid(item));
        }
        self.lists.get(list).is_some_and(|l| {
            l.holds != Holds::Undeclared
                && l.items.as_ref().is_none_or(|items| items.is_valid(item))
        })
    }

    /// The verdict on `item`, which sits at `path`, in list `list` whose item schema is `node`
    /// ([`Parts::item_node`]), as member `key` of a map: on refusal every violation, with its
    /// pointer from the value's root. A member whose name patterns match is judged by each of
    /// their schemas (nodes in `document`, the schema these parts were made from).
    pub(crate) fn check_item(
        &self,
        document: &Value,
        list: usize,
        key: Option<&str>,
        node: Option<Node<'_>>,
        item: &Value,
        path: &Path<'_>,
    ) -> Result<(), Violations> {
        let mut matched = self.matching(list, key).peekable();
        if matched.peek().is_some() {
            let mut refused = Vec::new();
            for pattern in matched {
                let Some(node) = node_at(document, &pattern.at) else {
                    continue;
                };
                if let Err(violations) = pattern.each.check_at(node, item, path) {
                    refused.extend(violations.0);
                }
            }
            return match refused.is_empty() {
                true => Ok(()),
                false => Err(Violations(refused)),
            };
        }
        match (self.lists.get(list).map(|l| &l.items), node) {
            (Some(None), _) => Ok(()),
            (Some(Some(items)), Some(node)) => items.check_at(node, item, path),
            _ => Err(Violations(vec![Violation {
                path: path.to_pointer(),
                rule: Rule::Schema,
                expected: "an item of a list the schema declares".into(),
                found: "a list the schema does not declare".into(),
            }])),
        }
    }

    /// Whether `rest` (a value with its lists emptied) is valid.
    pub(crate) fn rest_is_valid(&self, rest: &Value) -> bool {
        self.rest.is_valid(rest)
    }

    /// The verdict on `rest`, a value with its lists emptied (each violation's pointer from the
    /// value's own root).
    pub(crate) fn check_rest(&self, rest: &Value) -> Result<(), Violations> {
        match node_at(&self.rest_schema, &self.base) {
            Some(node) => self.rest.check_at(node, rest, &Path::root()),
            None => self.rest.check(&self.rest_schema, rest),
        }
    }

    /// Whether list `list` asks that its items differ, or that some match `contains`: then each
    /// item leaves its print and whether it matches ([`Parts::over_items`]).
    pub(crate) fn judges_over_items(&self, list: usize) -> bool {
        self.lists
            .get(list)
            .is_some_and(|l| l.unique || l.contains.is_some())
    }

    /// What `item` leaves for the checks over list `list`'s items: its print (when the items
    /// must differ) and whether it matches `contains`.
    pub(crate) fn over_item(&self, list: usize, item: &Value) -> (Option<u64>, bool) {
        let Some(l) = self.lists.get(list) else {
            return (None, false);
        };
        let matches = l
            .contains
            .as_ref()
            .is_some_and(|contains| contains.each.is_valid(item));
        (l.unique.then(|| print(item)), matches)
    }

    /// The prints that more than one of list `list`'s items left (`prints`, sorted here), sorted:
    /// the items that may be equal. Empty when its items need not differ.
    pub(crate) fn shared_prints(&self, list: usize, prints: &mut [u64]) -> Vec<u64> {
        if !self.lists.get(list).is_some_and(|l| l.unique) {
            return Vec::new();
        }
        prints.sort_unstable();
        let mut shared: Vec<u64> = prints
            .windows(2)
            .filter_map(|pair| match pair {
                [a, b] if a == b => Some(*a),
                _ => None,
            })
            .collect();
        shared.dedup();
        shared
    }

    /// Whether two items are equal as the validator compares items for `uniqueItems`.
    pub(crate) fn is_repeat(&self, first: &Value, item: &Value) -> bool {
        self.pair
            .as_ref()
            .is_some_and(|pair| !pair.is_valid(&Value::Array(vec![first.clone(), item.clone()])))
    }

    /// Whether list `list` passes its `contains` (and `minContains`, `maxContains`) when
    /// `matched` of its items match: the validator's verdict on a list of that many matches.
    pub(crate) fn contains_holds(&self, list: usize, matched: usize) -> bool {
        let Some(contains) = self.lists.get(list).and_then(|l| l.contains.as_ref()) else {
            return true;
        };
        let stand_in = vec![Value::Bool(true); matched.min(contains.enough)];
        contains.over.is_valid(&Value::Array(stand_in))
    }

    /// The violation of list `list`, of `count` items at `at`, refused by its `contains`, as
    /// the validator's report on the whole value gives it.
    pub(crate) fn contains_violation(&self, count: usize, at: Pointer) -> Violation {
        Violation {
            path: at,
            rule: Rule::Contains,
            expected: CONTAINS.into(),
            found: preview_list(count),
        }
    }

    /// The violation of list `list`'s item counts by `count` items (a map's property counts by
    /// `count` members), if any, at `at`.
    pub(crate) fn check_count(&self, list: usize, count: usize, at: Pointer) -> Option<Violation> {
        let counts = &self.lists.get(list)?.counts;
        if let Some((expected, found)) = item_count(counts, count) {
            return Some(Violation {
                path: at,
                rule: Rule::Items,
                expected,
                found,
            });
        }
        let (expected, found) = property_count(counts, count)?;
        Some(Violation {
            path: at,
            rule: Rule::Properties,
            expected,
            found,
        })
    }

    /// The violation of member `key`'s name by part `list`'s `propertyNames` (a map's), if any:
    /// at `path` (the member's), as the validator's verdict in the walk's words; `document` is
    /// the schema these parts were made from.
    pub(crate) fn check_name(
        &self,
        document: &Value,
        list: usize,
        key: &str,
        path: &Path<'_>,
    ) -> Option<Violation> {
        let (names, at) = self.lists.get(list)?.names.as_ref()?;
        let name = Value::String(key.to_owned());
        if names.is_valid(&name) {
            return None;
        }
        let node = node_at(document, at)?;
        Some(
            name_violation(node, key, path).unwrap_or_else(|| Violation {
                path: path.to_pointer(),
                rule: Rule::PropertyNames,
                expected: "a property name `propertyNames` accepts".into(),
                found: format!("property {}", super::validate::preview_str(key)),
            }),
        )
    }
}

/// A 64-bit print of `value`, the same for values JSON Schema takes for equal (`uniqueItems`,
/// `const`, `enum`): a number by the float it reads as (an integer and a float of one value
/// are equal; the zeros are one), an object by its members in any order. Different values may
/// share a print (rarely): a print tells values apart, never that they are equal.
pub(crate) fn print(value: &Value) -> u64 {
    use std::hash::{Hash, Hasher};
    fn mix(hasher: &mut std::hash::DefaultHasher, value: &Value) {
        match value {
            Value::Null => 0u8.hash(hasher),
            Value::Bool(b) => (1u8, *b).hash(hasher),
            Value::Number(n) => {
                let f = n.as_f64().unwrap_or(0.0);
                let bits = if f == 0.0 { 0 } else { f.to_bits() };
                (2u8, bits).hash(hasher);
            }
            Value::String(s) => (3u8, s).hash(hasher),
            Value::Array(items) => {
                (4u8, items.len()).hash(hasher);
                for item in items {
                    mix(hasher, item);
                }
            }
            Value::Object(map) => {
                // Members in any order: their prints summed.
                let mut sum = 0u64;
                for (key, member) in map {
                    let mut one = std::hash::DefaultHasher::new();
                    key.hash(&mut one);
                    mix(&mut one, member);
                    sum = sum.wrapping_add(one.finish());
                }
                (5u8, map.len(), sum).hash(hasher);
            }
        }
    }
    let mut hasher = std::hash::DefaultHasher::new();
    mix(&mut hasher, value);
    hasher.finish()
}

/// `keyword: value` with the `bounds` given (each kept as written), compiled in `document`'s
/// draft: a stand-in schema whose verdict on a stand-in value is the list's own.
fn stand_in(
    document: &Value,
    keyword: &str,
    value: Value,
    bounds: &Map<String, Value>,
) -> Option<Compiled> {
    let mut schema = Map::new();
    if let Some(draft) = document.get("$schema") {
        schema.insert("$schema".into(), draft.clone());
    }
    schema.insert(keyword.into(), value);
    for bound in ["minContains", "maxContains"] {
        if let Some(value) = bounds.get(bound) {
            schema.insert(bound.into(), value.clone());
        }
    }
    Compiled::new(&Value::Object(schema)).ok()
}

/// `{"const": true}`: what a stand-in item must be to match.
fn json_true_const() -> Value {
    let mut schema = Map::new();
    schema.insert("const".into(), Value::Bool(true));
    Value::Object(schema)
}

/// How many matches of `contains` tell every verdict of the list's bounds (`over`) apart: one
/// more than the largest; `None` when a bound is not a count or is past
/// [`MAX_CONTAINS_BOUND`].
fn enough_matches(over: &Map<String, Value>) -> Option<usize> {
    let mut largest = 1;
    for bound in ["minContains", "maxContains"] {
        if let Some(value) = over.get(bound) {
            let count = value.as_f64().filter(|n| *n >= 0.0)?.ceil();
            if count > MAX_CONTAINS_BOUND as f64 {
                return None;
            }
            largest = largest.max(count as u64);
        }
    }
    usize::try_from(largest + 1).ok()
}

/// The schema of one item (member) of the list (map) at `node`; `None` for a map that takes any
/// member.
fn member_node(node: Node<'_>, holds: Holds) -> Option<Node<'_>> {
    match holds {
        Holds::Items => node.items(),
        Holds::Members => match node.additional() {
            Additional::Schema(members) => Some(members),
            _ => None,
        },
        Holds::Undeclared => None,
    }
}

/// The node at `pointer` in `document` (its root when `pointer` is).
fn node_at<'d>(document: &'d Value, pointer: &Pointer) -> Option<Node<'d>> {
    let root = Node::root(document);
    match pointer == &Pointer::root() {
        true => Some(root),
        false => Some(root.child(pointer.get(document)?)),
    }
}

/// Steps followed from one node on the way ([`followed`]), at most.
const MAX_HOPS: usize = 16;

/// The node `node` (at `at` in the document) stands for on the way to lists, when it is a
/// reference (`{"$ref": "#/$defs/Page"}`) or an `allOf` of one schema (`{"allOf": [{"$ref":
/// ..}], "description": ..}`) beside nothing that asserts: a value is valid against it exactly
/// when it is valid against the node it leads to. Followed step by step to a node that is
/// neither, with that node's pointer in the document; `None` when `node` is not such a step, or
/// a reference cannot be followed, or there are more than [`MAX_HOPS`] steps.
fn followed<'d>(node: Node<'d>, at: &Pointer) -> Option<(Node<'d>, Pointer)> {
    let mut step: Option<(Node<'d>, Pointer)> = None;
    for _ in 0..=MAX_HOPS {
        let (here, here_at) = step.as_ref().map_or((node, at), |(n, p)| (*n, p));
        let next = match (here.reference(), here.sole_all_of()) {
            (Some(reference), None) if here.alone("$ref") => {
                let pointer = Pointer::from_fragment(reference)?;
                (here.lookup(reference).ok()?, pointer)
            }
            (None, Some(only)) => (here.child(only), here_at.key("allOf").index(0)),
            _ => return step,
        };
        step = Some(next);
    }
    None
}

/// An `anyOf` branch as a node that says what the value is: the branch, or the node its
/// `$ref` (its `allOf` of one) leads to when nothing beside asserts, step by step
/// ([`followed`]; the node [`Node::target`] gives, so every reader of branches agrees on it);
/// `None` for a branch it cannot stand for.
fn branch_node(branch: Node<'_>) -> Option<Node<'_>> {
    if !branch.has("$ref") && branch.sole_all_of().is_none() {
        return Some(branch);
    }
    let (node, _) = followed(branch, &Pointer::root())?;
    std::ptr::eq(node.value(), branch.target().value()).then_some(node)
}

/// `node` as the way reads it: the node it leads to ([`followed`]), or itself.
fn way(node: Node<'_>) -> Node<'_> {
    followed(node, &Pointer::root()).map_or(node, |(node, _)| node)
}

/// Whether the branch `branch` takes objects or lists.
fn takes_container(branch: Node<'_>) -> bool {
    let types = branch.target().types();
    types.contains(JsonType::Object) || types.contains(JsonType::Array)
}

/// The schema the rest of a value is judged by, before the lists are taken out of it:
/// `document` with each reference on the way to a list written out in place (`inlined`, in the
/// order met), so what is taken out is taken out of that copy. `None` when a reference in the
/// document names a node that changes (the node of a list, or one above it on the way: a value
/// held in the rest that refers to it is judged by the whole node, not by what is left of it),
/// or the copies would outweigh the document.
fn rest_document(
    document: &Value,
    found: &[Found],
    inlined: &[(Pointer, Pointer)],
) -> Option<Value> {
    let below_a_list = |place: &Pointer| found.iter().any(|f| place.contains(&f.rest));
    let mut rest = document.clone();
    let mut budget = weight(document, usize::MAX);
    let mut changed: Vec<&Pointer> = found.iter().map(|f| &f.rest).collect();
    for (place, from) in inlined.iter().filter(|(place, _)| below_a_list(place)) {
        let copy = node_at(document, from)?.value();
        budget = budget.checked_sub(weight(copy, budget))?;
        let Value::Object(mut copy) = copy.clone() else {
            return None;
        };
        let slot = place.get_mut(&mut rest)?.as_object_mut()?;
        for (keyword, value) in std::mem::take(slot) {
            if keyword == "$ref" || keyword == "allOf" {
                continue;
            }
            match copy.entry(keyword) {
                serde_json::map::Entry::Vacant(entry) => {
                    entry.insert(value);
                }
                // Two sets of definitions (or drafts) at one place: references into them would
                // change.
                serde_json::map::Entry::Occupied(entry) if !asserts_nothing(entry.key()) => {
                    return None;
                }
                // Two annotations: either says nothing.
                serde_json::map::Entry::Occupied(_) => {}
            }
        }
        *slot = copy;
        changed.push(place);
    }
    // A reference naming a node that changes (the root, or a node on the way, as a tree's
    // `{"$ref": "#"}` does) is led to an untouched copy of the whole document, kept among the
    // rest's definitions: what it names is judged whole, as before the split.
    let mut sites = Vec::new();
    references(Node::root(&rest), &mut Pointer::root(), &mut sites)?;
    // (Not those in a list's `items`: taken out of the rest.)
    let taken_out = |site: &Pointer| {
        found
            .iter()
            .any(|f| f.holds == Holds::Items && f.rest.key("items").contains(site))
    };
    let moved: Vec<Pointer> = sites
        .into_iter()
        .filter(|(site, target)| {
            changed.iter().any(|place| target.contains(place)) && !taken_out(site)
        })
        .map(|(site, _)| site)
        .collect();
    if moved.is_empty() {
        return Some(rest);
    }
    let defs = match rest.get("$defs") {
        None if rest.get("definitions").is_some() => "definitions",
        _ => "$defs",
    };
    let taken = rest.get(defs).and_then(Value::as_object);
    let name = (0..)
        .map(|n| format!("structured-whole-{n}"))
        .find(|name| taken.is_none_or(|t| !t.contains_key(name)))?;
    let whole_at = Pointer::root().key(defs).key(&name);
    let mut whole = document.clone();
    let mut inside = Vec::new();
    references(Node::root(document), &mut Pointer::root(), &mut inside)?;
    for (site, _) in inside {
        lead_into(site.get_mut(&mut whole)?, &whole_at)?;
    }
    // (Its draft is the document's, said at the root.)
    whole.as_object_mut()?.remove("$schema");
    for site in moved {
        lead_into(site.get_mut(&mut rest)?, &whole_at)?;
    }
    rest.as_object_mut()?
        .entry(defs)
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()?
        .insert(name, whole);
    Some(rest)
}

/// Every schema holding a local reference (`$ref`) below `node` (at `at`), and the node it
/// names; `None` when a reference is not a local pointer, or resolves otherwise
/// (`$dynamicRef`, `$recursiveRef`), or the schema is too deep to look through.
fn references(node: Node<'_>, at: &mut Pointer, out: &mut Vec<(Pointer, Pointer)>) -> Option<()> {
    if node.too_deep() {
        return None;
    }
    if let Some(map) = node.map() {
        if map.contains_key("$dynamicRef") || map.contains_key("$recursiveRef") {
            return None;
        }
        if let Some(reference) = map.get("$ref") {
            out.push((at.clone(), Pointer::from_fragment(reference.as_str()?)?));
        }
    }
    for child in node.children() {
        let depth = child.segments();
        child.push_to(at);
        references(child.node, at, out)?;
        for _ in 0..depth {
            at.pop();
        }
    }
    Some(())
}

/// Points the local reference of `schema` into the document copied at `whole_at`.
fn lead_into(schema: &mut Value, whole_at: &Pointer) -> Option<()> {
    let reference = schema.get_mut("$ref")?;
    let fragment = reference.as_str()?.strip_prefix('#')?;
    *reference = Value::String(format!("#{}{fragment}", whole_at.as_str()));
    Some(())
}

/// A list (an object's members) found judged in parts.
struct Found {
    steps: Vec<Step>,
    /// Its schema's pointer in the document.
    at: Pointer,
    /// Where its schema lies in the rest's schema: the same place, or below a reference
    /// written out in place ([`Search::inlined`]).
    rest: Pointer,
    holds: Holds,
}

/// What [`find`] finds, and the choices of variants it follows.
struct Search<'c, 'd> {
    found: Vec<Found>,
    points: Vec<Point>,
    choices: &'c [(Vec<Step>, usize)],
    /// The document's draft reads `prefixItems` as a tuple's positions ([`reads_prefix_items`]).
    tuples: bool,
    chosen: Vec<Choice>,
    /// The references followed on the way, in the order met (one above before one below): where
    /// each lies in the rest's schema, and the document's node it names. The rest's schema has
    /// that node written out there, so the lists below it are taken out of the copy, never out
    /// of the node other references name.
    inlined: Vec<(Pointer, Pointer)>,
    /// The document's nodes the way passes, from the start to the node looked at.
    way: Vec<Pointer>,
    /// The objects on the way asserting more than [`OBJECT_KEYWORDS`] ([`BESIDE_THE_WAY`]), and
    /// how many steps lead to each: a part (a place where a variant is chosen) is one only where
    /// none of those looks inside it ([`Search::unwatched`]).
    watchers: Vec<(Node<'d>, usize)>,
}

impl Search<'_, '_> {
    /// Whether no object on the way above the value at `steps` asserts anything beside the way
    /// that looks inside that value.
    fn unwatched(&self, steps: &[Step]) -> bool {
        self.watchers.iter().all(|(node, depth)| {
            let below = steps.get(*depth..).unwrap_or_default();
            blind_below(*node, below, OBJECT_KEYWORDS)
        })
    }
}

/// Collects in `search` the lists below `node` (reached through `steps`, at `at` in the
/// document) judged in parts, and the places where a variant not chosen may lead to more.
fn find<'d>(
    node: Node<'d>,
    at: &Pointer,
    rest: &Pointer,
    steps: &mut Vec<Step>,
    search: &mut Search<'_, 'd>,
) {
    if search.found.len() >= MAX_LISTS || steps.len() > MAX_LIST_DEPTH {
        return;
    }
    let (node, at, target) = match followed(node, at) {
        Some((node, target)) => (node, target, true),
        None => (node, at.clone(), false),
    };
    // A reference back to a node on the way (a tree's `{"$ref": "#"}`): what it names is held in
    // the rest, judged by the whole node.
    if search.way.contains(&at) {
        return;
    }
    if target {
        search.inlined.push((rest.clone(), at.clone()));
    }
    search.way.push(at.clone());
    find_at(node, &at, rest, steps, search);
    search.way.pop();
}

/// [`find`] at the node `node` (at `at`) the way has reached.
fn find_at<'d>(
    node: Node<'d>,
    at: &Pointer,
    rest: &Pointer,
    steps: &mut Vec<Step>,
    search: &mut Search<'_, 'd>,
) {
    let Some(map) = node.map() else { return };
    // (A part, or a place where a variant is chosen, only where no object above looks inside
    // it: else held whole.)
    let unwatched = search.unwatched(steps);
    if is_point(node) {
        if !unwatched {
            return;
        }
        let point = Point {
            steps: steps.clone(),
            at: at.clone(),
        };
        let chosen = search.choices.iter().find(|(k, _)| k == steps).map(|c| c.1);
        let branch = chosen.and_then(|b| Some((b, node.any_of()?.nth(b)?)));
        match branch {
            Some((b, branch)) if takes_container(branch) => {
                let keyword = node.branches().map_or("anyOf", |(keyword, _)| keyword);
                let (at, rest) = (at.key(keyword).index(b), rest.key(keyword).index(b));
                find(branch, &at, &rest, steps, search);
                search.chosen.push(Choice {
                    point,
                    branch: b,
                    by_names: apart_by_names(node),
                });
            }
            _ => search.points.push(point),
        }
        return;
    }
    // `patternProperties` beside declared properties judges the other members, and the declared
    // ones whose names a pattern matches: the way passes through those only where the pattern's
    // schema never looks inside a part below (else they are held in the rest whole).
    let only = |allowed: &[&str]| {
        map.keys().all(|k| {
            allowed.contains(&k.as_str()) || asserts_nothing(k) || k == "patternProperties"
        })
    };
    let mut found = |holds| {
        if unwatched {
            search.found.push(Found {
                steps: steps.clone(),
                at: at.clone(),
                rest: rest.clone(),
                holds,
            })
        }
    };
    // A tuple's positions are each judged by their own schema alone (as `properties` judge an
    // object's members), so the way passes through them.
    if let Some(positions) = tuple_on_the_way(node).filter(|_| search.tuples) {
        let (prefix, rest_prefix) = (at.key("prefixItems"), rest.key("prefixItems"));
        for (index, child) in positions.iter().enumerate() {
            steps.push(Step::Index(index));
            let (at, rest) = (prefix.index(index), rest_prefix.index(index));
            find(node.child(child), &at, &rest, steps, search);
            steps.pop();
        }
        return;
    }
    if map
        .get("items")
        .is_some_and(|i| i.is_object() || i.is_boolean())
    {
        let list_only = map.keys().all(|k| {
            LIST_KEYWORDS.contains(&k.as_str())
                || OVER_ITEMS.contains(&k.as_str())
                || asserts_nothing(k)
        });
        if list_only {
            found(Holds::Items);
        }
        return;
    }
    // (Where it allows no other member, those its patterns match are judged, and the others
    // refused or dropped, one at a time.)
    let members_judged = match node.additional() {
        Additional::Absent | Additional::Allowed(true) | Additional::Schema(_) => true,
        Additional::Allowed(false) => node.has("patternProperties"),
    };
    // (Its keys are judged one at a time in the walk's words: only where the walk has words
    // for every refusal of `propertyNames`.)
    let names_explained = node
        .get("propertyNames")
        .is_none_or(|names| super::validation::walk_explains(node.child(names)));
    if only(MAP_KEYWORDS)
        && members_judged
        && names_explained
        && node.types().is_only(JsonType::Object)
    {
        found(Holds::Members);
        return;
    }
    let beside = |k: &String| {
        !OBJECT_KEYWORDS.contains(&k.as_str()) && !asserts_nothing(k) && k != "patternProperties"
    };
    if !map
        .keys()
        .filter(|k| beside(k))
        .all(|k| BESIDE_THE_WAY.contains(&k.as_str()))
    {
        return;
    }
    // What it asserts beside the way is looked at for each part below it.
    let watchers = search.watchers.len();
    if map.keys().any(beside) {
        search.watchers.push((node, steps.len()));
    }
    let (properties, rest_properties) = (at.key("properties"), rest.key("properties"));
    for (name, child) in node.properties() {
        steps.push(Step::Key(name.to_owned()));
        // A declared member a pattern matches is judged by that pattern's schema too: looked at
        // for each part below it, as a rule beside the way is.
        let above = search.watchers.len();
        let depth = steps.len();
        search
            .watchers
            .extend(node.patterns_matching(name).map(|pattern| (pattern, depth)));
        let (at, rest) = (properties.key(name), rest_properties.key(name));
        find(child, &at, &rest, steps, search);
        search.watchers.truncate(above);
        steps.pop();
    }
    search.watchers.truncate(watchers);
    let types = node.types();
    // An `Option` of a derived type may be `null` too: then it has no member at all.
    let object_or_null = types.contains(JsonType::Object)
        && types
            .iter()
            .all(|t| t == JsonType::Object || t == JsonType::Null);
    let mixed = |k: &str| MIXED_KEYWORDS.contains(&k) || OVER_MEMBERS.contains(&k);
    if !map
        .keys()
        .all(|k| mixed(k) || asserts_nothing(k) || k == "patternProperties")
        || !object_or_null
        || search.found.len() >= MAX_LISTS
        || !unwatched
    {
        return;
    }
    let holds = if node.closed() && !node.has("patternProperties") && names_explained {
        // Its undeclared members are refused (or dropped) one at a time, never written: the
        // declared ones, and parts below them, are read as on the way; its names and count as
        // for the members beside declared ones.
        Holds::Undeclared
    } else if members_judged && types.is_only(JsonType::Object) && names_explained {
        // Its members beside the declared ones are judged one at a time (the declared ones, and
        // parts below them, are read as on the way); its names one at a time, the declared
        // ones' with the rest, and its count at the end, the declared ones with the others.
        Holds::Members
    } else {
        return;
    };
    search.found.push(Found {
        steps: steps.clone(),
        at: at.clone(),
        rest: rest.clone(),
        holds,
    });
}

/// The positions of `node` when it is a tuple the way may pass through: it allows only arrays
/// and asserts nothing beside [`TUPLE_KEYWORDS`], so each of its `prefixItems` judges its
/// position alone.
fn tuple_on_the_way(node: Node<'_>) -> Option<&[Value]> {
    let map = node.map()?;
    let positions = map.get("prefixItems")?.as_array()?;
    let only = map
        .keys()
        .all(|k| TUPLE_KEYWORDS.contains(&k.as_str()) || asserts_nothing(k));
    (only && node.types().is_only(JsonType::Array)).then_some(positions.as_slice())
}

/// Whether `document`'s draft reads `prefixItems` as a tuple's positions: 2020-12, which the
/// validator of record reads a document naming no draft by (an earlier draft ignores the word).
fn reads_prefix_items(document: &Value) -> bool {
    document
        .get("$schema")
        .is_none_or(|draft| draft.as_str().is_some_and(|d| d.contains("2020-12")))
}

/// Whether `node` is a place where the value decides the branch (a [`Point`]): only an `anyOf`
/// (or a `oneOf` no value matches two branches of, [`Node::any_of`]) and words about it, each branch written out in place or a reference alone
/// ([`branch_node`]), each declaring its `type`, at most one taking lists, and either at most
/// one taking objects or each of those naming its variant: allowing only objects, and either
/// each requiring one property allowing one string, the same property with a different string
/// in each (a tag), or each allowing exactly one key, required, a different one in each. Then a
/// list is refused by every branch but the one taking lists, an object by every branch but the
/// one taking objects or the one it names ([`Node::tagged_for`]), and no object is named by
/// two branches that could both take it.
pub(crate) fn decides(node: Node<'_>) -> bool {
    kinds(node).is_some_and(|(objects, lists)| {
        lists <= 1
            && (objects.len() == 1
                || (objects.is_empty() && lists == 1)
                || Node::names_variants(&objects))
    })
}

/// Whether `node` is an `anyOf` whose branches taking objects (two or more) the value's names
/// may tell apart where no tag does, as an untagged enum's variants are written: each branch
/// written out in place or a reference alone, declaring its `type`, at most one taking lists,
/// and not a place [`decides`] covers. Coercion takes the branch declaring most of an object's
/// names ([`Node::branch_for`]); that branch's lists are parts only for a value every other
/// branch refuses by its names alone ([`refuses_by_names`]), and only a valid one: the
/// explanation of a refusal there is the closest branch's, which needs every branch's report on
/// the whole value (`read::parts` judges such a value's fitted text as a stream reader does).
pub(crate) fn apart_by_names(node: Node<'_>) -> bool {
    // (Two or more object branches that do not each name their variant: not [`decides`].)
    kinds(node).is_some_and(|(objects, lists)| {
        lists <= 1 && objects.len() >= 2 && !Node::names_variants(&objects)
    })
}

/// A place where the value's variant decides which lists lie below: [`decides`] or
/// [`apart_by_names`].
fn is_point(node: Node<'_>) -> bool {
    kinds(node).is_some_and(|(objects, lists)| lists <= 1 && (!objects.is_empty() || lists == 1))
}

/// The branches of the `anyOf` at `node` that take objects, and how many take lists, when it
/// asserts nothing beside them and each branch is written out in place or a reference alone
/// ([`branch_node`]), declaring its `type`.
fn kinds(node: Node<'_>) -> Option<(Vec<Node<'_>>, usize)> {
    let map = node.map()?;
    let (keyword, branches) = node.branches()?;
    let beside = [keyword, "$defs", "definitions", "$schema"];
    if !map
        .keys()
        .all(|k| beside.contains(&k.as_str()) || asserts_nothing(k))
    {
        return None;
    }
    // (The branches `branches` gave, not asked for again: a `oneOf` is judged exclusive once.)
    let (mut objects, mut lists) = (Vec::new(), 0usize);
    for branch in branches.iter().map(|b| node.child(b)) {
        let target = branch_node(branch)?;
        let types = target.types();
        if !types.declared() || types.malformed() {
            return None;
        }
        lists += usize::from(types.contains(JsonType::Array));
        if types.contains(JsonType::Object) {
            objects.push(target);
        }
    }
    Some((objects, lists))
}

/// Whether at the `anyOf` `node` no branch but `chosen` (an index) may take `value` (the value
/// there, or its skeleton: its members some branch declares, containers empty), where only names
/// tell its branches apart ([`apart_by_names`]; elsewhere the kind of value or a tag does, and
/// this is `true`).
pub(crate) fn taken_only_by(node: Node<'_>, chosen: usize, value: &Value) -> bool {
    if !apart_by_names(node) {
        return true;
    }
    let branches: Vec<Node<'_>> = node.any_of().map(Iterator::collect).unwrap_or_default();
    only_taker(&branches, chosen, value)
}

/// Whether `value`, an object, is taken by no branch of `branches` but `chosen` (an index), by
/// its names alone ([`refuses_by_names`]), and `chosen` takes its kind.
fn only_taker(branches: &[Node<'_>], chosen: usize, value: &Value) -> bool {
    let (Some(object), Some(chosen_node)) = (value.as_object(), branches.get(chosen)) else {
        return false;
    };
    chosen_node.target().types().allows(value)
        && branches.iter().enumerate().all(|(i, b)| {
            i == chosen
                || !b.target().types().allows(value)
                || refuses_by_names(*b, object, *chosen_node)
        })
}

/// Whether `branch` refuses the object `value` by its names alone, whatever its members hold:
/// it allows no member it does not declare (`additionalProperties: false`, no
/// `patternProperties`) and `value` has one, or it requires a name `value` lacks that `chosen`
/// declares (a rest holds every member with such a name; a name `chosen` does not declare may
/// be a member read apart from the rest).
fn refuses_by_names(branch: Node<'_>, value: &Map<String, Value>, chosen: Node<'_>) -> bool {
    let branch = branch.target();
    let closed = branch.closed() && !branch.has("patternProperties");
    (closed && value.keys().any(|k| branch.property(k).is_none()))
        || branch
            .required()
            .any(|name| !value.contains_key(name) && chosen.target().property(name).is_some())
}

/// Whether any node of the document sets a base URI or an anchor.
fn changes_resolution(node: Node<'_>) -> bool {
    if node.too_deep() {
        return true;
    }
    node.map()
        .is_some_and(|map| RESOLUTION.iter().any(|k| map.contains_key(*k)))
        || node
            .children()
            .into_iter()
            .any(|child| changes_resolution(child.node))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn list_of(items: Value) -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "rows": {"type": "array", "items": items, "minItems": 1, "maxItems": 3}
            },
            "required": ["name", "rows"],
            "additionalProperties": false,
            "$defs": {"Row": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}
        })
    }

    #[test]
    fn a_list_reached_through_properties_is_judged_an_item_at_a_time() {
        let doc = list_of(json!({"$ref": "#/$defs/Row"}));
        let parts = Parts::of(&doc).expect("a list");
        // The list, and the root's members it does not declare (it allows none).
        assert_eq!(parts.len(), 2);
        assert_eq!(parts.names(0), ["rows"]);
        assert_eq!(
            (parts.names(1), parts.holds(1)),
            (Vec::new(), Holds::Undeclared)
        );
        // The item's reference resolves in the whole document.
        assert!(parts.item_is_valid(0, None, &json!({"n": 1})));
        assert!(!parts.item_is_valid(0, None, &json!({"n": "1"})));
        let root = Path::root();
        let rows = root.key("rows");
        let at = rows.index(4);
        let refused = parts
            .check_item(
                &doc,
                0,
                None,
                parts.item_node(&doc, 0),
                &json!({"n": "1"}),
                &at,
            )
            .unwrap_err();
        assert_eq!(refused[0].path, "/rows/4/n");
        // The rest is judged without the items or the counts.
        assert!(parts.rest_is_valid(&json!({"name": "a", "rows": []})));
        assert!(!parts.rest_is_valid(&json!({"name": "a", "rows": [], "x": 1})));
        assert!(!parts.rest_is_valid(&json!({"name": "a"})));
        let count = parts
            .check_count(0, 4, Pointer::root().key("rows"))
            .unwrap();
        assert_eq!(
            (count.expected.as_str(), count.found.as_str()),
            ("1 to 3 items", "4 items")
        );
        assert!(parts.check_count(0, 2, Pointer::root()).is_none());
    }

    #[test]
    fn a_list_at_a_tuple_s_position_is_judged_an_item_at_a_time() {
        // A derived `(Meta, Vec<i64>)` field.
        let tuple = json!({"type": "array", "prefixItems": [
            {"type": "object", "properties": {"n": {"type": "integer"}}},
            {"type": "array", "items": {"type": "integer"}, "maxItems": 3}
        ], "minItems": 2, "maxItems": 2});
        let doc = json!({"type": "object", "properties": {"page": tuple},
            "required": ["page"], "additionalProperties": false});
        let parts = Parts::of(&doc).expect("the list at position 1");
        // Position 0's members beside `n`, position 1's items, the root's undeclared members.
        let found: Vec<(Vec<String>, Holds)> = (0..parts.len())
            .map(|i| (parts.names(i), parts.holds(i)))
            .collect();
        let at = |i: &str| vec!["page".to_owned(), i.to_owned()];
        assert_eq!(
            found,
            [
                (at("0"), Holds::Members),
                (at("1"), Holds::Items),
                (Vec::new(), Holds::Undeclared)
            ]
        );
        assert_eq!(parts.steps(1)[1], Step::Index(1));
        // The rest: the tuple with its list emptied, each other position judged as before.
        assert!(parts.rest_is_valid(&json!({"page": [{"n": 1}, []]})));
        assert!(!parts.rest_is_valid(&json!({"page": [{"n": "1"}, []]})));
        assert!(!parts.rest_is_valid(&json!({"page": [{"n": 1}]})));
        assert!(!parts.rest_is_valid(&json!({"page": [{"n": 1}, [], 3]})));
        assert!(parts.item_is_valid(1, None, &json!(5)));
        assert!(!parts.item_is_valid(1, None, &json!("5")));
        assert!(parts
            .check_count(1, 4, Pointer::root().key("page").index(1))
            .is_some());
        let page = [Step::Key("page".into())];
        assert_eq!(
            parts
                .held_node(&doc, &[page[0].clone(), Step::Index(0)])
                .map(|n| n.value()),
            doc.pointer("/properties/page/prefixItems/0")
        );
        // A draft that reads no `prefixItems` (the validator ignores the word there), or a tuple
        // asserting something of its positions together: held whole.
        let mut draft_7 = doc.clone();
        draft_7["$schema"] = json!("http://json-schema.org/draft-07/schema#");
        let mut unique = doc.clone();
        unique["properties"]["page"]["uniqueItems"] = json!(true);
        for doc in [draft_7, unique] {
            let parts = Parts::of(&doc).expect("the root's undeclared members");
            assert_eq!(parts.len(), 1, "{doc}");
            assert!(parts
                .held_node(&doc, &[page[0].clone(), Step::Index(0)])
                .is_none());
        }
    }

    #[test]
    fn rules_beside_the_way_that_never_look_inside_it_leave_it_on_the_way() {
        let with = |beside: Value| {
            let mut doc = json!({"type": "object", "properties": {
                "kind": {"type": "string"},
                "page": {"type": "object", "properties": {
                    "rows": {"type": "array", "items": {"type": "integer"}}
                }}
            }});
            if let (Some(doc), Value::Object(beside)) = (doc.as_object_mut(), beside) {
                doc.extend(beside);
            }
            doc
        };
        let rows = |doc: &Value| {
            Parts::of(doc)
                .is_some_and(|parts| (0..parts.len()).any(|l| parts.names(l) == ["page", "rows"]))
        };
        // Other members, names, counts, the kind of the value on the way: blind to the rows.
        for beside in [
            json!({"if": {"properties": {"kind": {"const": "a"}}}, "then": {"required": ["page"]}}),
            json!({"not": {"required": ["kind", "note"]}}),
            json!({"allOf": [{"properties": {"page": {"type": "object", "minProperties": 1}}}]}),
            json!({"dependentRequired": {"kind": ["page"]}, "dependentSchemas": {"kind": {"maxProperties": 3}}}),
            json!({"allOf": [{"properties": {"page": {"properties": {"rows": {"type": "array"}}}}}]}),
            json!({"allOf": [{"$ref": "#/$defs/Kinded"}], "$defs": {"Kinded": {"required": ["kind"]}}}),
        ] {
            assert!(rows(&with(beside.clone())), "{beside}");
        }
        // What looks inside the rows, or what coercion would choose by: held whole.
        for beside in [
            json!({"if": {"properties": {"page": {"properties": {"rows": {"minItems": 1}}}}}, "then": {"required": ["kind"]}}),
            json!({"not": {"properties": {"page": {"properties": {"rows": {"contains": {"const": 1}}}}}}}),
            json!({"allOf": [{"properties": {"page": {"additionalProperties": {"maxItems": 2}}}}]}),
            json!({"allOf": [{"properties": {"page": {"const": {"rows": []}}}}]}),
            json!({"anyOf": [{"required": ["kind"]}, {"required": ["page"]}]}),
            json!({"unevaluatedProperties": false}),
        ] {
            assert!(!rows(&with(beside.clone())), "{beside}");
        }
        // The rest keeps the rule beside: judged there, the rows emptied.
        let doc = with(
            json!({"if": {"properties": {"kind": {"const": "a"}}}, "then": {"required": ["note"]}}),
        );
        let parts = Parts::of(&doc).expect("the rows");
        assert!(parts.rest_is_valid(&json!({"kind": "b", "page": {"rows": []}})));
        assert!(!parts.rest_is_valid(&json!({"kind": "a", "page": {"rows": []}})));
    }

    #[test]
    fn a_schema_that_looks_inside_its_lists_otherwise_is_not_split() {
        for doc in [
            // The list's whole value is compared with others.
            json!({"type": "array", "items": {"type": "integer"}, "enum": [[1]]}),
            json!({"type": "object", "properties": {"rows": {"type": "array", "items": {}, "prefixItems": [{"const": 1}]}}, "additionalProperties": false, "not": {"required": ["x", "y"]}}),
            // Something else applies to the list too.
            json!({"type": "object", "properties": {"rows": {"type": "array", "items": {}}}, "anyOf": [{"required": ["rows"]}]}),
            // References resolve against a base of the document's own.
            json!({"$id": "https://example.com/s", "type": "object", "properties": {"rows": {"type": "array", "items": {}}}}),
            // Other members, but something else looks at them as a whole.
            json!({"type": "object", "properties": {"n": {}}, "not": {"required": ["n", "m"]}}),
        ] {
            assert!(Parts::of(&doc).is_none(), "{doc}");
        }
        // Their names and count are judged in parts: the count with the declared members the
        // rest holds (`read::parts` adds them), each name by `propertyNames` alone.
        let doc = json!({"type": "object", "properties": {"n": {}}, "maxProperties": 3,
            "propertyNames": {"maxLength": 2}});
        let parts = Parts::of(&doc).expect("the other members");
        assert!(parts.beside_declared(0));
        assert!(parts.check_count(0, 3, Pointer::root()).is_none());
        assert!(parts.check_count(0, 4, Pointer::root()).is_some());
        assert!(parts.check_name(&doc, 0, "abc", &Path::root()).is_some());
        assert!(
            parts.rest_is_valid(&json!({"n": 1, "abc": 1})),
            "names and count taken out"
        );
    }

    #[test]
    fn a_declared_member_a_pattern_matches_is_held_in_the_rest_whole() {
        // `rows` is judged by its pattern too, which counts its items: not a part, held whole in
        // the rest; `more` is a part, and the other members are judged by the patterns one at a
        // time.
        let doc = json!({
            "type": "object",
            "properties": {
                "rows": {"type": "array", "items": {"type": "integer"}},
                "more": {"type": "array", "items": {"type": "integer"}}
            },
            "patternProperties": {"^r": {"maxItems": 2}}
        });
        let parts = Parts::of(&doc).expect("the other members and `more`");
        let lists: Vec<Vec<String>> = (0..parts.len()).map(|l| parts.names(l)).collect();
        assert_eq!(lists, [&["more".to_owned()][..], &[][..]]);
        assert!(parts.rest_is_valid(&json!({"rows": [1, 2], "more": []})));
        assert!(!parts.rest_is_valid(&json!({"rows": [1, 2, 3], "more": []})));
        assert!(!parts.rest_is_valid(&json!({"rows": ["x"], "more": []})));
        assert!(parts.item_is_valid(1, Some("x"), &json!([1, 2, 3])));
        assert!(!parts.item_is_valid(1, Some("r2"), &json!([1, 2, 3])));
        // A pattern that says only what kind the member is never looks inside it: `rows` is
        // on the way, judged by the pattern too in the rest.
        let mut kind_only = doc.clone();
        kind_only["patternProperties"] = json!({"^r": {"type": "array", "description": "d"}});
        let parts = Parts::of(&kind_only).expect("both lists");
        let lists: Vec<Vec<String>> = (0..parts.len()).map(|l| parts.names(l)).collect();
        assert_eq!(
            lists,
            [&["rows".to_owned()][..], &["more".to_owned()][..], &[][..]]
        );
        assert!(parts.rest_is_valid(&json!({"rows": [], "more": []})));
        assert!(!parts.rest_is_valid(&json!({"rows": {}, "more": []})));
    }

    #[test]
    fn a_closed_object_s_members_by_pattern_are_parts_and_the_others_refused() {
        let doc = json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "patternProperties": {"^x": {"minimum": 0}},
            "additionalProperties": false
        });
        let parts = Parts::of(&doc).expect("the members by pattern");
        assert_eq!(parts.names(0), [] as [String; 0]);
        assert!(!parts.refuses_member(0, "x1") && parts.refuses_member(0, "y"));
        assert!(parts.item_is_valid(0, Some("x1"), &json!(3)));
        assert!(!parts.item_is_valid(0, Some("x1"), &json!(-3)));
        assert!(parts.rest_is_valid(&json!({"n": 1})));
        // An object that also takes `null` is held whole.
        let doc = json!({
            "type": ["object", "null"],
            "patternProperties": {"^x": {}},
            "additionalProperties": false
        });
        assert!(Parts::of(&doc).is_none());
    }

    #[test]
    fn a_root_list_is_judged_an_item_at_a_time() {
        let doc =
            json!({"type": "array", "items": {"type": "integer", "minimum": 0}, "maxItems": 2});
        let parts = Parts::of(&doc).expect("the root list");
        assert_eq!(parts.names(0), [] as [String; 0]);
        assert!(parts.item_is_valid(0, None, &json!(3)));
        assert!(!parts.item_is_valid(0, None, &json!(-3)));
        assert!(parts.rest_is_valid(&json!([])));
        assert!(!parts.rest_is_valid(&json!({})));
        assert!(parts.check_count(0, 3, Pointer::root()).is_some());
    }

    #[test]
    fn a_map_s_members_are_judged_by_the_patterns_their_names_match() {
        let doc = json!({
            "type": "object",
            "properties": {"rows": {
                "type": "object",
                "patternProperties": {"^r": {"$ref": "#/$defs/Row"}, "^r1": {"required": ["n"]}},
                "additionalProperties": {"type": "string"}
            }},
            "$defs": {"Row": {"type": "object", "properties": {"n": {"type": "integer"}}}}
        });
        let parts = Parts::of(&doc).expect("the map");
        // (The root's other members are the second part.)
        assert_eq!(
            (parts.names(0), parts.holds(0)),
            (vec!["rows".to_owned()], Holds::Members)
        );
        assert!(!parts.by_name(1));
        assert!(parts.by_name(0) && parts.inner(0, &doc).is_none());
        let valid = |key: &str, item: Value| parts.item_is_valid(0, Some(key), &item);
        // By the pattern (its reference resolved), by both, by `additionalProperties`.
        assert!(valid("r0", json!({"n": 1})) && !valid("r0", json!({"n": "1"})));
        assert!(valid("r0", json!({})) && !valid("r1", json!({})));
        assert!(valid("x", json!("s")) && !valid("x", json!({})));
        let root = Path::root();
        let rows = root.key("rows");
        let at = rows.key("r1");
        let refused = parts
            .check_item(&doc, 0, Some("r1"), None, &json!({"n": "1"}), &at)
            .unwrap_err();
        assert_eq!(refused.len(), 1);
        assert_eq!(
            (refused[0].path.as_str(), refused[0].rule),
            ("/rows/r1/n", Rule::Type)
        );
        let refused = parts
            .check_item(&doc, 0, Some("r1"), None, &json!({"m": 1}), &at)
            .unwrap_err();
        assert_eq!(
            (refused[0].path.as_str(), refused[0].rule),
            ("/rows/r1/n", Rule::Required)
        );
        // A map that allows nothing beside its patterns: the others refused one at a time.
        let mut closed = doc.clone();
        closed["properties"]["rows"]["additionalProperties"] = json!(false);
        let parts = Parts::of(&closed).expect("the map's members");
        assert_eq!(parts.names(0), ["rows".to_owned()]);
        assert!(parts.refuses_member(0, "x") && !parts.refuses_member(0, "r1"));
        // Beside declared properties no pattern matches: the other members, by their names.
        let beside = json!({
            "type": "object",
            "properties": {"title": {"type": "string"}},
            "patternProperties": {"^x-": {"type": "integer"}}
        });
        let parts = Parts::of(&beside).expect("the other members");
        assert_eq!((parts.len(), parts.holds(0)), (1, Holds::Members));
        assert!(parts.by_name(0) && parts.in_rest(0, "title"));
        assert!(parts.item_is_valid(0, Some("x-a"), &json!(1)));
        assert!(!parts.item_is_valid(0, Some("x-a"), &json!("1")));
        assert!(parts.item_is_valid(0, Some("y"), &json!("1")));
    }

    #[test]
    fn an_object_s_other_members_are_judged_a_member_at_a_time() {
        let doc = json!({
            "type": "object",
            "properties": {"title": {"type": "string"}, "n": {"type": "integer"}},
            "required": ["title"],
            "additionalProperties": {"type": "integer", "minimum": 0}
        });
        let parts = Parts::of(&doc).expect("its other members");
        assert_eq!((parts.len(), parts.holds(0)), (1, Holds::Members));
        assert!(parts.in_rest(0, "title") && parts.in_rest(0, "n"));
        // A name coercion may rename to a declared one is held in the rest too.
        assert!(parts.in_rest(0, "Title") && parts.in_rest(0, "N"));
        assert!(!parts.in_rest(0, "k1") && !parts.in_rest(0, "titles"));
        assert!(parts.beside_declared(0));
        assert!(parts.item_is_valid(0, None, &json!(3)));
        assert!(!parts.item_is_valid(0, None, &json!(-3)));
        // The rest holds the declared members, and others that match them ignoring case,
        // judged by `additionalProperties`.
        assert!(parts.rest_is_valid(&json!({"title": "t", "n": 1})));
        assert!(parts.rest_is_valid(&json!({"title": "t", "N": 1})));
        assert!(!parts.rest_is_valid(&json!({"title": "t", "N": "1"})));
        assert!(!parts.rest_is_valid(&json!({"n": 1})));
        assert!(!parts.rest_is_valid(&json!({"title": 1})));
        // An object with a list below its properties is on the way to it too.
        let way = json!({
            "type": "object",
            "properties": {"rows": {"type": "array", "items": {}}, "n": {}}
        });
        let parts = Parts::of(&way).expect("the list");
        assert_eq!(
            (parts.len(), parts.holds(0), parts.holds(1)),
            (2, Holds::Items, Holds::Members)
        );
        assert!(!parts.beside_declared(0) && parts.beside_declared(1));
        assert!(parts.under_members(0) && !parts.under_members(1));
    }

    #[test]
    fn an_object_allowing_only_its_declared_members_refuses_the_others_one_at_a_time() {
        let doc = json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}, "inner": {
                "type": "object", "properties": {"rows": {"type": "array", "items": {}}},
                "additionalProperties": false
            }},
            "required": ["n"],
            "additionalProperties": false
        });
        let parts = Parts::of(&doc).expect("its undeclared members");
        let found: Vec<(Vec<String>, Holds)> = (0..parts.len())
            .map(|i| (parts.names(i), parts.holds(i)))
            .collect();
        let inner = vec!["inner".to_owned()];
        let rows = vec!["inner".to_owned(), "rows".to_owned()];
        assert_eq!(
            found,
            [
                (rows, Holds::Items),
                (inner, Holds::Undeclared),
                (Vec::new(), Holds::Undeclared)
            ]
        );
        // No undeclared member is valid; the declared ones (any case) are in the rest.
        assert!(!parts.item_is_valid(2, None, &json!(null)));
        assert!(parts.in_rest(2, "n") && parts.in_rest(2, "Inner") && !parts.in_rest(2, "x"));
        assert!(!parts.beside_declared(2));
        assert!(parts.rest_is_valid(&json!({"n": 1, "inner": {"rows": []}})));
        assert!(!parts.rest_is_valid(&json!({"n": 1, "x": 1})));
        // One that judges its names and counts them: each name as its member is read (kept,
        // where it is refused), the count at the end of those kept.
        let counted = json!({"type": "object", "properties": {"n": {}}, "additionalProperties": false,
            "maxProperties": 1, "propertyNames": {"maxLength": 1}});
        let parts = Parts::of(&counted).expect("its undeclared members");
        assert_eq!(parts.holds(0), Holds::Undeclared);
        assert!(parts.check_count(0, 2, Pointer::root()).is_some());
        assert!(parts.check_name(&counted, 0, "xy", &Path::root()).is_some());
        // One that asserts anything else of its members as a whole is read whole.
        let beside = json!({"type": "object", "properties": {"n": {}}, "additionalProperties": false,
            "not": {"required": ["n"]}});
        assert!(Parts::of(&beside).is_none());
    }

    #[test]
    fn a_list_whose_items_must_differ_or_match_leaves_a_print_and_a_match_per_item() {
        let doc = json!({
            "type": "array",
            "items": {"type": "number"},
            "uniqueItems": true,
            "contains": {"minimum": 10},
            "minContains": 2
        });
        let parts = Parts::of(&doc).expect("the root list");
        assert!(parts.judges_over_items(0));
        // The rest is an empty list: nothing over the items is asked of it.
        assert!(parts.rest_is_valid(&json!([])));
        // Whether the items' prints are all different, and whether enough match `contains`.
        let over = |items: &[Value]| {
            let (mut prints, mut matched) = (Vec::new(), 0);
            for item in items {
                let (print, matches) = parts.over_item(0, item);
                prints.extend(print);
                matched += usize::from(matches);
            }
            (
                parts.shared_prints(0, &mut prints).is_empty(),
                parts.contains_holds(0, matched),
            )
        };
        assert_eq!(over(&[json!(10), json!(11), json!(1)]), (true, true));
        // 10 and 10.0 are one value to JSON Schema; so are 0 and -0.0.
        assert_eq!(over(&[json!(10), json!(10.0), json!(12)]), (false, true));
        assert_eq!(
            over(&[json!(0), json!(-0.0), json!(10), json!(11)]),
            (false, true)
        );
        // Too few items match `contains`.
        assert_eq!(over(&[json!(10), json!(1)]), (true, false));
        // Items sharing a print are compared by the validator.
        assert!(parts.is_repeat(&json!(10), &json!(10.0)));
        assert!(parts.is_repeat(&json!({"a": [1]}), &json!({"a": [1.0]})));
        assert!(!parts.is_repeat(&json!(10), &json!("10")));
        // Objects equal whatever the order of their members share a print.
        assert_eq!(
            print(&json!({"a": 1, "b": [true, null]})),
            print(&json!({"b": [true, null], "a": 1.0}))
        );
        assert_ne!(print(&json!([1, 2])), print(&json!([2, 1])));
        assert_ne!(print(&json!("1")), print(&json!(1)));
    }

    #[test]
    fn how_many_matches_are_enough_is_the_validator_s_verdict_in_the_list_s_draft() {
        let list = |draft: Option<&str>, bounds: Value| {
            let mut doc = json!({"type": "array", "items": {}, "contains": {"const": 1}});
            if let Some(draft) = draft {
                doc["$schema"] = json!(draft);
            }
            for (k, v) in bounds.as_object().unwrap() {
                doc[k] = v.clone();
            }
            Parts::of(&doc).expect("the root list")
        };
        let holds = |parts: &Parts, matched| parts.contains_holds(0, matched);
        let draft7 = Some("http://json-schema.org/draft-07/schema#");
        // Draft 2020-12: the bounds count.
        let parts = list(None, json!({"minContains": 2, "maxContains": 3}));
        let verdicts: Vec<bool> = (0..6).map(|n| holds(&parts, n)).collect();
        assert_eq!(verdicts, [false, false, true, true, false, false]);
        let parts = list(None, json!({"minContains": 0}));
        assert!(holds(&parts, 0));
        // Draft 7 knows no bounds: one match is enough, and none is not, whatever they say.
        let parts = list(draft7, json!({"minContains": 0, "maxContains": 1}));
        assert!(!holds(&parts, 0));
        assert!(holds(&parts, 5));
        // A bound written as a float counts as its value.
        let parts = list(None, json!({"minContains": 2.0}));
        assert!(!holds(&parts, 1) && holds(&parts, 2));
        // A bound past what a stand-in may hold: not judged in parts.
        let doc = json!({"type": "array", "items": {}, "contains": {}, "minContains": 1e9});
        assert!(Parts::of(&doc).is_none());
    }

    #[test]
    fn a_tree_s_children_are_parts_and_a_long_child_is_read_in_parts_itself() {
        let tree = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "maxLength": 3},
                "children": {"type": "array", "items": {"$ref": "#"}, "maxItems": 2}
            },
            "required": ["name", "children"]
        });
        let parts = Parts::of(&tree).expect("the children read in parts");
        assert_eq!(parts.names(0), ["children".to_owned()]);
        // Only the children's items name the root, and they are taken out of the rest: it keeps
        // no copy of the whole.
        assert!(parts.rest_schema.get("$defs").is_none());
        assert!(parts.rest_is_valid(&json!({"name": "abc", "children": []})));
        assert!(!parts.rest_is_valid(&json!({"name": "abcd", "children": []})));
        // A child is the root again, worked out when one is long: its children in parts too.
        assert!(parts.may_nest(0) && parts.lists[0].inner.made.get().is_none());
        let child = parts.inner(0, &tree).expect("a child read in parts");
        assert_eq!(child.names(0), ["children".to_owned()]);
        assert!(!child.rest_is_valid(&json!({"name": "abcd", "children": []})));
        assert!(child.inner(0, &tree).is_some());
        // A tree deeper than the budget allows is read in parts down to it, whole below.
        let mut depth = 0;
        let mut level = Some(&parts);
        while let Some(parts) = level {
            depth += 1;
            level = parts.inner(0, &tree);
        }
        assert!((2..=MAX_LISTS).contains(&depth), "{depth}");
    }

    #[test]
    fn references_on_the_way_are_written_out_and_what_they_name_is_kept_whole() {
        let rows = json!({"type": "array", "items": {"type": "integer"}, "maxItems": 3});
        let doc = json!({
            "type": "object",
            "properties": {
                "rows": {"$ref": "#/$defs/Rows", "description": "by reference"},
                "more": {"allOf": [{"$ref": "#/$defs/Rows"}]},
                // Not on the way: held in the rest, judged by the whole `Rows`.
                "held": {"anyOf": [{"$ref": "#/$defs/Rows"}, {"type": "string"}], "not": {"const": 0}}
            },
            "$defs": {"Rows": rows}
        });
        let parts = Parts::of(&doc).expect("lists reached through references");
        let lists: Vec<Vec<String>> = (0..parts.len()).map(|l| parts.names(l)).collect();
        // (The root's other members are a part too.)
        assert_eq!(
            lists,
            [&["rows".to_owned()][..], &["more".to_owned()][..], &[][..]]
        );
        let rest = |held: Value| parts.check_rest(&json!({"rows": [], "more": [], "held": held}));
        assert!(rest(json!([1, 2])).is_ok());
        assert!(rest(json!(["x"])).is_err());
        assert!(rest(json!([1, 2, 3, 4])).is_err());
        // The lists' own counts are taken out of the copies written in place.
        assert!(parts.rest_is_valid(&json!({"rows": [], "more": []})));
        assert!(parts
            .check_count(0, 4, Pointer::root())
            .is_some_and(|v| v.rule == Rule::Items));

        // A reference naming a node on the way (here the root, and the list) judges a value
        // held in the rest by the whole node it names, not by what is left of it.
        let back = json!({
            "type": "object",
            "properties": {"rows": rows, "again": {"$ref": "#"}, "same": {"$ref": "#/properties/rows"}}
        });
        let parts = Parts::of(&back).expect("a tree's list read in parts");
        let lists: Vec<Vec<String>> = (0..parts.len()).map(|l| parts.names(l)).collect();
        // (`again` is not followed back to the root: it is held in the rest.)
        assert_eq!(
            lists,
            [&["rows".to_owned()][..], &["same".to_owned()][..], &[][..]]
        );
        let rest = |held: Value| parts.check_rest(&json!({"rows": [], "again": held}));
        assert!(rest(json!({"rows": [1, 2, 3]})).is_ok());
        assert!(rest(json!({"rows": [1, "x"]})).is_err());
        assert!(rest(json!({"rows": [1, 2, 3, 4]})).is_err());
        assert!(rest(json!({"again": {"rows": ["x"]}})).is_err());
        assert!(rest(json!({"again": {"same": [1, 2, 3, 4]}})).is_err());
        // (The lists' own items and counts are judged here, not by the rest.)
        assert!(parts.rest_is_valid(&json!({"rows": [], "same": []})));
        assert!(parts
            .check_count(0, 4, Pointer::root())
            .is_some_and(|v| v.rule == Rule::Items));
    }

    #[test]
    fn an_untagged_variant_is_chosen_by_names_and_kept_where_the_others_refuse_them() {
        let object = |properties: Value, required: Value| {
            json!({"type": "object", "properties": properties, "required": required,
                "additionalProperties": false})
        };
        let ints = json!({"type": "array", "items": {"type": "integer"}});
        let many = object(
            json!({"rows": ints, "title": {"type": "string"}}),
            json!(["rows", "title"]),
        );
        let counts = object(
            json!({"rows": ints, "count": {"type": "integer"}}),
            json!([]),
        );
        let doc = json!({"anyOf": [many, counts, {"type": "string"}]});
        let root = Node::root(&doc);
        assert!(apart_by_names(root) && !decides(root));
        let parts = Parts::of(&doc).expect("a place to choose");
        assert_eq!(parts.points().len(), 1);
        let many_parts = parts.decided(&doc, &[Some(0)]).expect("the rows of `many`");
        assert!(many_parts.chose_by_names() && !parts.chose_by_names());
        assert_eq!(many_parts.names(0), ["rows"]);
        // `counts` allows no `title`: only `many` may take the value.
        let titled = json!({"rows": [], "title": "t"});
        assert!(many_parts.names_chosen(&doc, &titled));
        assert_eq!(many_parts.unnamed(&doc, &titled).map(|v| v.len()), Some(0));
        // Names `counts` takes too: the value is not read in parts.
        let bare = json!({"rows": []});
        assert!(!many_parts.names_chosen(&doc, &bare));
        assert!(many_parts.unnamed(&doc, &bare).is_none());
        let counts_parts = parts
            .decided(&doc, &[Some(1)])
            .expect("the rows of `counts`");
        assert!(counts_parts.names_chosen(&doc, &json!({"rows": [], "count": 1})));
        // `many` requires `title`, which `counts` does not declare: such a member may be read
        // apart from the rest, so its absence there says nothing.
        assert!(!counts_parts.names_chosen(&doc, &bare));
        let by_name = |value: Value, chosen: &Value| {
            refuses_by_names(
                Node::root(&doc).child(&doc["anyOf"][0]),
                value.as_object().unwrap(),
                Node::root(chosen),
            )
        };
        let titled_counts = object(json!({"title": {}, "rows": ints}), json!([]));
        assert!(by_name(json!({"rows": []}), &titled_counts));
        assert!(!by_name(json!({"rows": []}), &doc["anyOf"][1]));
        assert!(by_name(
            json!({"rows": [], "title": "t", "x": 1}),
            &doc["anyOf"][1]
        ));
        assert!(!by_name(
            json!({"rows": [], "title": "t"}),
            &doc["anyOf"][1]
        ));
        // Told apart by a tag, or by the kind of value: not a place chosen by names.
        let tagged = json!({"anyOf": [
            object(json!({"kind": {"const": "a"}, "rows": ints}), json!(["kind", "rows"])),
            object(json!({"kind": {"const": "b"}}), json!(["kind"]))
        ]});
        assert!(!apart_by_names(Node::root(&tagged)));
        assert!(!apart_by_names(Node::root(
            &json!({"anyOf": [many, {"type": "null"}]})
        )));
    }

    #[test]
    fn an_enum_s_variant_decides_which_lists_are_parts() {
        let scores = json!({"type": "array", "items": {"type": "number"}});
        let tag = |kind: &str, data: &str| {
            json!({
                "type": "object",
                "properties": {"kind": {"const": kind}, data: scores},
                "required": ["kind", data],
                "additionalProperties": false
            })
        };
        let keyed = |key: &str| {
            json!({
                "type": "object",
                "properties": {key: scores},
                "required": [key],
                "additionalProperties": false
            })
        };
        let doc = json!({"type": "object", "properties": {"action": {"description": "d", "anyOf": [
            tag("a", "rows"), tag("b", "cols"), {"type": "null"}, {"type": "string", "enum": ["x"]}
        ]}}});
        let parts = Parts::of(&doc).expect("a place where a variant decides");
        assert_eq!(parts.points().len(), 1);
        assert_eq!(parts.points()[0].steps, ["action"]);
        // Only the root's other members are a part until a variant is chosen.
        assert_eq!(parts.len(), 1);
        assert!(parts.decided(&doc, &[None]).is_none());
        let b = parts.decided(&doc, &[Some(1)]).expect("variant b's parts");
        let lists: Vec<Vec<String>> = (0..b.len()).map(|l| b.names(l)).collect();
        assert!(
            lists.contains(&vec!["action".to_owned(), "cols".to_owned()]),
            "{lists:?}"
        );
        assert!(!lists.iter().any(|k| k.ends_with(&["rows".to_owned()])));
        // Made once per choice.
        assert!(Arc::ptr_eq(&b, &parts.decided(&doc, &[Some(1)]).unwrap()));
        // The value must name the variant chosen, and no other.
        assert!(b.names_chosen(&doc, &json!({"action": {"kind": "b", "cols": []}})));
        assert!(!b.names_chosen(&doc, &json!({"action": {"kind": "a", "cols": []}})));
        assert!(!b.names_chosen(&doc, &json!({"action": {"cols": []}})));
        assert!(!b.names_chosen(&doc, &json!({})));

        let defs = json!({"b": tag("b", "cols")});
        let decides =
            |branches: Value| decides(Node::root(&json!({"anyOf": branches, "$defs": defs})));
        assert!(decides(json!([tag("a", "rows"), tag("b", "rows")])));
        assert!(decides(json!([keyed("A"), keyed("B"), {"type": "string"}])));
        // A variant written elsewhere, named by a reference alone.
        assert!(decides(
            json!([tag("a", "rows"), {"$ref": "#/$defs/b", "description": "b"}])
        ));
        // One branch taking lists, one taking objects (named or not), beside others: the kind of
        // value decides.
        assert!(decides(json!([scores, {"type": "null"}])));
        assert!(decides(
            json!([{"type": ["object", "null"]}, scores, {"type": "string"}])
        ));
        assert!(decides(json!([{"type": "object"}, {"type": "integer"}])));
        for branches in [
            // Two variants named alike.
            json!([tag("a", "rows"), tag("a", "cols")]),
            json!([keyed("A"), keyed("A")]),
            // A tag and a key: one object may name both.
            json!([tag("a", "rows"), keyed("B")]),
            // A variant that takes other keys, or any object, or anything.
            json!([keyed("A"), {"type": "object", "properties": {"B": {}}, "required": ["B"]}]),
            json!([tag("a", "rows"), {"type": "object"}]),
            json!([tag("a", "rows"), {}]),
            json!([tag("a", "rows"), {"type": ["object", "null"]}]),
            // A tag that is not a string, or two tags.
            json!([tag("a", "rows"), {"type": "object", "properties": {"kind": {"const": 1}}, "required": ["kind"]}]),
            // A reference beside a keyword that asserts, or one that cannot be followed.
            json!([tag("a", "rows"), {"$ref": "#/$defs/b", "minProperties": 1}]),
            json!([tag("a", "rows"), {"$ref": "#/$defs/none"}]),
            // Two branches taking lists, or one of unknown type.
            json!([scores, {"type": "array"}]),
            json!([scores, {"items": {"type": "string"}}]),
            // Only branches that take neither objects nor lists.
            json!([{"type": "null"}, {"type": "string"}]),
        ] {
            assert!(!decides(branches.clone()), "{branches}");
        }
        // Something beside the `anyOf` asserts too.
        let beside = json!({"anyOf": [tag("a", "rows")], "minProperties": 1});
        assert!(!super::decides(Node::root(&beside)));
    }
}

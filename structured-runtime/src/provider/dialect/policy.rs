//! Each dialect as data: a table saying, keyword by keyword, what the target does with it, and
//! one driver that runs a node's keywords through the table.
//!
//! A keyword is kept as written (its sub-schemas, found through the one list of sub-schema
//! keywords, lowered by the same dialect), kept under another name, kept but reported as not
//! enforced by the target's engine, moved into the node's description, refused, or left to the
//! dialect's few structural rewrites (an inlined `$ref`, a closed object, an uppercase type).
//! A dialect file is its table plus those rewrites.

use serde_json::{Map, Value};

use super::pass::Run;
use crate::schema::node::{holds, Holds, Node};
use crate::schema::Pointer;

/// What a target does with one keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Policy {
    /// Sent as written; sub-schemas in it are lowered by the same dialect.
    Keep,
    /// Sent as written under another name (`oneOf` read as `anyOf`).
    KeepAs(&'static str),
    /// Sent as written, and reported as a keyword the target's engine does not hold the model
    /// to ([`Kept`](crate::schema::dialect::Kept)).
    Unenforced,
    /// Moved into the node's description, `{keyword: value}`.
    Move,
    /// Written (or left out) by the dialect's structural rewrites, not by the table.
    Rewrite,
    /// The target cannot express it: `` `keyword` `` and this reason is the error.
    Refuse(&'static str),
}

/// A dialect's policies: each listed keyword's, and `other` for every keyword not listed.
pub(super) struct Table {
    /// Keyword and policy. Refusals are reported in this order.
    pub(super) entries: &'static [(&'static str, Policy)],
    /// The policy of a keyword the table does not list.
    pub(super) other: Policy,
}

impl Table {
    /// The policy of `keyword`.
    pub(super) fn get(&self, keyword: &str) -> Policy {
        self.entries
            .iter()
            .find(|(k, _)| *k == keyword)
            .map_or(self.other, |(_, p)| *p)
    }

    /// Reports each refused keyword `map` holds, in the table's order.
    pub(super) fn refuse(&self, run: &mut Run, map: &Map<String, Value>, path: &Pointer) {
        for (keyword, policy) in self.entries {
            if let (Policy::Refuse(reason), true) = (policy, map.contains_key(*keyword)) {
                run.fail(path, format!("`{keyword}` {reason}"));
            }
        }
    }
}

/// What the driver wrote for one node.
#[derive(Default)]
pub(super) struct Written {
    /// The keywords sent.
    pub(super) out: Map<String, Value>,
    /// The keywords moved into the description, in the order met.
    pub(super) moved: Map<String, Value>,
    /// Keywords sent that the engine does not hold the model to.
    pub(super) unenforced: Vec<String>,
}

/// Runs every keyword of `map` (the node `node` at `path`) through `policy`, in the order
/// written, into `written`: kept keywords with their sub-schemas lowered by `lower` (a keyword
/// holding one schema that is not an object, `items: true`, is sent as it is), moved and
/// unenforced ones noted. Refused and rewritten keywords are skipped: the dialect reports the
/// first ([`Table::refuse`]) and writes the second.
pub(super) fn by_policy(
    run: &mut Run,
    node: Node<'_>,
    map: &Map<String, Value>,
    path: &Pointer,
    policy: &dyn Fn(&str, &Value) -> Policy,
    lower: &mut dyn FnMut(&mut Run, Node<'_>, &Pointer) -> Value,
    written: &mut Written,
) {
    for (keyword, value) in map {
        let name = match policy(keyword, value) {
            Policy::Keep => keyword.as_str(),
            Policy::KeepAs(name) => name,
            Policy::Unenforced => {
                written.unenforced.push(keyword.clone());
                keyword.as_str()
            }
            Policy::Move => {
                written.moved.insert(keyword.clone(), value.clone());
                continue;
            }
            Policy::Rewrite | Policy::Refuse(_) => continue,
        };
        let lowered = lowered(run, node, keyword, value, path, lower);
        written.out.insert(name.to_owned(), lowered);
    }
}

/// `value` of `keyword` with each sub-schema in it lowered by `lower`.
fn lowered(
    run: &mut Run,
    node: Node<'_>,
    keyword: &str,
    value: &Value,
    path: &Pointer,
    lower: &mut dyn FnMut(&mut Run, Node<'_>, &Pointer) -> Value,
) -> Value {
    let Some(holds) = holds(keyword, value) else {
        return value.clone();
    };
    let at = path.key(keyword);
    match (holds, value) {
        (Holds::One, Value::Object(_)) => lower(run, node.child(value), &at),
        (Holds::Named, Value::Object(children)) => Value::Object(
            children
                .iter()
                .map(|(name, c)| (name.clone(), lower(run, node.child(c), &at.key(name))))
                .collect(),
        ),
        (Holds::Listed, Value::Array(children)) => Value::Array(
            children
                .iter()
                .enumerate()
                .map(|(i, c)| lower(run, node.child(c), &at.index(i)))
                .collect(),
        ),
        _ => value.clone(),
    }
}

/// `map` with the keywords `first` names first, in that order, then the rest as they were,
/// then those `last` names: the order a dialect's SDK writes a node in.
pub(super) fn in_order(map: &mut Map<String, Value>, first: &[&str], last: &[&str]) {
    let mut all = std::mem::take(map);
    for key in first {
        if let Some(v) = all.shift_remove(*key) {
            map.insert((*key).to_owned(), v);
        }
    }
    let tail: Vec<(String, Value)> = last
        .iter()
        .filter_map(|k| all.shift_remove(*k).map(|v| ((*k).to_owned(), v)))
        .collect();
    map.extend(all);
    map.extend(tail);
}

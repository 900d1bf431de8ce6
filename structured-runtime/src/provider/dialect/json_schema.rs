//! Full JSON Schema, sent as written (vLLM's guided decoding backends): nothing is rewritten,
//! and the keywords whose enforcement depends on the engine behind the endpoint (backends
//! differ, and an endpoint does not say which it runs) are reported as
//! [`Enforcement::Unknown`].

use serde_json::Value;

use super::pass::Run;
use super::policy::{Policy, Table};
use crate::schema::dialect::Enforcement;
use crate::schema::node::Node;
use crate::schema::Pointer;

/// Every keyword is sent; these are reported, in this order, as depending on the engine.
const TABLE: Table = Table {
    entries: &[
        ("minimum", Policy::Unenforced),
        ("maximum", Policy::Unenforced),
        ("exclusiveMinimum", Policy::Unenforced),
        ("exclusiveMaximum", Policy::Unenforced),
        ("multipleOf", Policy::Unenforced),
        ("minLength", Policy::Unenforced),
        ("maxLength", Policy::Unenforced),
        ("pattern", Policy::Unenforced),
        ("format", Policy::Unenforced),
        ("minItems", Policy::Unenforced),
        ("maxItems", Policy::Unenforced),
        ("uniqueItems", Policy::Unenforced),
        ("contains", Policy::Unenforced),
        ("propertyNames", Policy::Unenforced),
        ("minProperties", Policy::Unenforced),
        ("maxProperties", Policy::Unenforced),
        ("patternProperties", Policy::Unenforced),
        ("not", Policy::Unenforced),
        ("if", Policy::Unenforced),
        ("dependentRequired", Policy::Unenforced),
        ("dependentSchemas", Policy::Unenforced),
        ("unevaluatedProperties", Policy::Unenforced),
        ("unevaluatedItems", Policy::Unenforced),
    ],
    other: Policy::Keep,
};

pub(super) fn lower(run: &mut Run, root: Node<'_>) -> Value {
    report(run, root, &Pointer::root());
    root.value().clone()
}

/// Records the engine-dependent keywords of every node, through the one node view's children
/// (`$ref` targets are reached through `$defs`).
fn report(run: &mut Run, node: Node<'_>, path: &Pointer) {
    if node.too_deep() {
        return;
    }
    if let Some(map) = node.map() {
        let keywords: Vec<String> = TABLE
            .entries
            .iter()
            .filter(|(k, p)| *p == Policy::Unenforced && map.contains_key(*k))
            .map(|(k, _)| (*k).to_owned())
            .collect();
        run.keep(path, keywords, Enforcement::Unknown);
    }
    for child in node.children() {
        let mut at = path.clone();
        child.push_to(&mut at);
        report(run, child.node, &at);
    }
}

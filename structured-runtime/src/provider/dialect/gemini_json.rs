//! Gemini `responseJsonSchema`: JSON Schema, with the keywords Gemini does not enforce moved into
//! `description` and `oneOf` read as `anyOf`. References are kept.

use serde_json::Value;

use super::pass::Run;
use super::policy::{by_policy, Policy, Table, Written};
use crate::schema::node::Node;
use crate::schema::Pointer;

/// Gemini's JSON Schema mode: the keywords it takes are sent, `oneOf` as `anyOf`, and every
/// other keyword is moved into the description.
const TABLE: Table = Table {
    entries: &[
        ("$id", Policy::Keep),
        ("$defs", Policy::Keep),
        ("$ref", Policy::Keep),
        ("$anchor", Policy::Keep),
        ("type", Policy::Keep),
        ("format", Policy::Keep),
        ("title", Policy::Keep),
        ("description", Policy::Keep),
        ("enum", Policy::Keep),
        ("items", Policy::Keep),
        ("prefixItems", Policy::Keep),
        ("minItems", Policy::Keep),
        ("maxItems", Policy::Keep),
        ("minimum", Policy::Keep),
        ("maximum", Policy::Keep),
        ("anyOf", Policy::Keep),
        ("oneOf", Policy::KeepAs("anyOf")),
        ("properties", Policy::Keep),
        ("additionalProperties", Policy::Keep),
        ("required", Policy::Keep),
        ("propertyOrdering", Policy::Keep),
    ],
    other: Policy::Move,
};

pub(super) fn lower(run: &mut Run, root: Node<'_>) -> Value {
    node(run, root, &Pointer::root())
}

/// One node through [`TABLE`]; no structural rewrite (references are kept).
fn node(run: &mut Run, node: Node<'_>, path: &Pointer) -> Value {
    let Some(map) = node.map() else {
        return node.value().clone();
    };
    if run.stop(path, node) {
        return node.value().clone();
    }
    let mut written = Written::default();
    by_policy(
        run,
        node,
        map,
        path,
        &|keyword, _| TABLE.get(keyword),
        &mut self::node,
        &mut written,
    );
    run.describe(path, &mut written.out, &written.moved);
    Value::Object(written.out)
}

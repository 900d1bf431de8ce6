//! Extension annotations (`x-` keywords, as OpenAPI and code generators write them) taken out of
//! a schema before it is lowered: they say nothing of the value, and providers refuse keywords
//! they do not know.

use serde_json::Value;

use crate::schema::checks::is_annotation;
use crate::schema::dialect::Dropped;
use crate::schema::node::{for_each_child_mut, Node, MAX_DEPTH};
use crate::schema::Pointer;

/// `schema` without its annotations, each node's listed in `dropped`; `None` (no copy) when it
/// has none.
pub(super) fn without(schema: &Value, dropped: &mut Vec<Dropped>) -> Option<Value> {
    if !any(Node::root(schema)) {
        return None;
    }
    let mut copy = schema.clone();
    strip(&mut copy, &Pointer::root(), 0, dropped);
    Some(copy)
}

/// Whether any node holds an annotation (a read-only look first: most schemas have none),
/// through the one walk of sub-schemas; as deep as the schema, which its checks bound.
fn any(node: Node<'_>) -> bool {
    if node.too_deep() {
        return false;
    }
    node.map()
        .is_some_and(|map| map.keys().any(|k| is_annotation(k)))
        || node.children().into_iter().any(|child| any(child.node))
}

/// Takes the annotations out of `node` and the nodes below it, to [`MAX_DEPTH`] (deeper, the
/// lowering refuses the schema anyway).
fn strip(node: &mut Value, path: &Pointer, depth: usize, dropped: &mut Vec<Dropped>) {
    let Value::Object(map) = node else { return };
    if depth > MAX_DEPTH {
        return;
    }
    let keywords: Vec<String> = map.keys().filter(|k| is_annotation(k)).cloned().collect();
    for keyword in &keywords {
        map.shift_remove(keyword);
    }
    if !keywords.is_empty() {
        dropped.push(Dropped {
            path: path.clone(),
            keywords,
        });
    }
    for_each_child_mut(map, path, &mut |child, at| {
        strip(child, at, depth + 1, dropped)
    });
}

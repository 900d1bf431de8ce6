//! One lowering pass: the problems it found, its node budget and the inlining of references,
//! and the rewriting steps every dialect shares.

use serde_json::{Map, Value};

use crate::read::reshape::Reshape;
use crate::schema::dialect::{
    Dropped, Enforcement, Kept, LowerError, LowerReport, Moved, SchemaTarget,
};
use crate::schema::node::{for_each_child_mut, Node, RefError, MAX_DEPTH};
use crate::schema::Pointer;

/// Lowered nodes at most: inlining a definition used in many places copies it each time, which
/// a schema with shared definitions nested inside each other turns exponential. Four times
/// OpenAI's 5,000-property limit: no provider takes a schema this large.
pub const MAX_NODES: usize = 20_000;

/// One lowering pass and the problems it found.
pub(super) struct Run {
    target: SchemaTarget,
    errors: Vec<LowerError>,
    /// `$ref`s being inlined, outermost first: a repeat is recursion. The root is being
    /// lowered, so a `{"$ref": "#"}` inside it is recursion.
    pub(super) inlining: Vec<String>,
    /// Nodes written so far: inlining shared references can multiply a schema's size.
    nodes: usize,
    /// Keywords moved into a description, where (in the lowered schema) and which.
    moved: Vec<Moved>,
    /// Shapes sent differently from the schema as written.
    pub(super) reshape: Reshape,
    /// Keywords sent as written that the target's engine ignores or may ignore.
    kept: Vec<Kept>,
    /// Objects sent closed that the schema as written leaves open.
    pub(super) closed: Vec<Pointer>,
}

/// A schema as a target takes it, and what was moved into descriptions to get there.
#[derive(Debug, Clone, PartialEq)]
pub struct Lowered {
    /// The schema to send.
    pub schema: Value,
    /// Every move, in the order made.
    pub moved: Vec<Moved>,
    /// Shapes the target cannot express, sent in another shape and read back from it (OpenAI
    /// strict: maps as lists of entries, a root that is not an object wrapped in one).
    pub reshape: Reshape,
    /// Keywords sent as written that the target's engine ignores or may ignore.
    pub kept: Vec<Kept>,
    /// Extension annotations (`x-` keywords) left out of the schema sent.
    pub dropped: Vec<Dropped>,
    /// Objects sent closed (`additionalProperties: false`) that the schema as written leaves
    /// open: the provider holds the model to their declared properties only.
    pub closed: Vec<Pointer>,
}

impl Run {
    pub(super) fn new(target: SchemaTarget) -> Self {
        Run {
            target,
            errors: Vec::new(),
            inlining: vec!["#".to_owned()],
            nodes: 0,
            moved: Vec::new(),
            reshape: Reshape::default(),
            kept: Vec::new(),
            closed: Vec::new(),
        }
    }

    /// The lowered schema and what was moved, or every problem found on the way.
    pub(super) fn finish(self, out: Value) -> Result<Lowered, LowerReport> {
        if self.errors.is_empty() {
            Ok(Lowered {
                schema: out,
                moved: self.moved,
                reshape: self.reshape,
                kept: self.kept,
                dropped: Vec::new(),
                closed: self.closed,
            })
        } else {
            Err(LowerReport {
                target: self.target,
                errors: self.errors,
            })
        }
    }

    pub(super) fn fail(&mut self, path: &Pointer, reason: impl Into<String>) {
        self.errors.push(LowerError {
            target: self.target,
            path: path.clone(),
            reason: reason.into(),
        });
    }

    /// Counts one node written; `true` (with an error recorded once) when the walk is too deep
    /// or the node budget is spent, and the caller must stop.
    pub(super) fn stop(&mut self, path: &Pointer, node: Node<'_>) -> bool {
        if node.too_deep() {
            self.fail(path, format!("nested deeper than {MAX_DEPTH} levels"));
            return true;
        }
        self.nodes += 1;
        if self.nodes == MAX_NODES {
            self.fail(path, format!("more than {MAX_NODES} schema nodes once references are inlined: share fewer definitions, or use a target that keeps `$ref`"));
        }
        self.nodes >= MAX_NODES
    }

    /// The node's keywords, with a `$ref` replaced by what it names (pushed on `inlining`
    /// until the caller pops it). A ref that cannot be inlined (recursion, external,
    /// unresolved) is recorded as an error.
    pub(super) fn inline<'s>(&mut self, node: Node<'s>, path: &Pointer) -> Inlined<'s> {
        let Some(map) = node.map() else {
            self.fail(path, "expected a schema object");
            return Inlined::Failed;
        };
        let Some(Value::String(reference)) = map.get("$ref") else {
            return Inlined::Node(node, map);
        };
        if self.inlining.contains(reference) {
            self.fail(path, format!("recursive schema (through {reference:?}): {:?} inlines references and cannot express recursion", self.target));
            return Inlined::Failed;
        }
        match node.lookup(reference) {
            Ok(target) => match target.map() {
                Some(target_map) => {
                    self.inlining.push(reference.clone());
                    Inlined::Ref(target, target_map)
                }
                None => {
                    self.fail(path, format!("`$ref` {reference:?} names a boolean schema"));
                    Inlined::Failed
                }
            },
            Err(e) => {
                self.fail(path, unresolved(reference, e));
                Inlined::Failed
            }
        }
    }
}

/// Why a reference cannot be followed, in words.
pub(super) fn unresolved(reference: &str, error: RefError) -> String {
    match error {
        RefError::NotLocal => {
            format!("`$ref` {reference:?} is not a local reference: only `#...` references are followed")
        }
        RefError::Unresolved => format!("`$ref` {reference:?} does not resolve"),
        RefError::TooDeep => {
            format!("`$ref` {reference:?} is followed deeper than {MAX_DEPTH} levels")
        }
    }
}

/// What [`Run::inline`] found.
pub(super) enum Inlined<'s> {
    /// The node itself (no `$ref`).
    Node(Node<'s>, &'s Map<String, Value>),
    /// The schema a `$ref` names (pushed on the inlining stack).
    Ref(Node<'s>, &'s Map<String, Value>),
    /// Nothing usable; the error is recorded.
    Failed,
}

impl Run {
    /// Records keywords sent as written that the engine does not (or may not) enforce.
    pub(super) fn keep(&mut self, path: &Pointer, keywords: Vec<String>, enforcement: Enforcement) {
        if !keywords.is_empty() {
            self.kept.push(Kept {
                path: path.clone(),
                keywords,
                enforcement,
            });
        }
    }

    /// [`describe`], with the move recorded for the caller.
    pub(super) fn describe(
        &mut self,
        path: &Pointer,
        out: &mut Map<String, Value>,
        moved: &Map<String, Value>,
    ) {
        if moved.is_empty() {
            return;
        }
        self.moved.push(Moved {
            path: path.clone(),
            keywords: moved.keys().cloned().collect(),
        });
        describe(out, moved);
    }
}

/// Appends `{key: value, ...}` for each moved keyword to the node's description (after a blank
/// line when there is one), the way Anthropic's SDK writes it.
pub(super) fn describe(out: &mut Map<String, Value>, moved: &Map<String, Value>) {
    if moved.is_empty() {
        return;
    }
    let pairs: Vec<String> = moved
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}: {s}"),
            other => format!("{k}: {other}"),
        })
        .collect();
    let note = format!("{{{}}}", pairs.join(", "));
    let text = match out.get("description").and_then(Value::as_str) {
        Some(existing) if !existing.is_empty() => format!("{existing}\n\n{note}"),
        _ => note,
    };
    out.insert("description".into(), Value::String(text));
}

/// Moves `keys` into the description of every node that has them (`path` is the node's).
pub(super) fn soften(run: &mut Run, node: &mut Value, keys: &[&str], path: &Pointer, depth: usize) {
    let Value::Object(map) = node else { return };
    if depth > MAX_DEPTH {
        return;
    }
    let mut moved = Map::new();
    for key in keys {
        if let Some(v) = map.remove(*key) {
            moved.insert((*key).to_owned(), v);
        }
    }
    run.describe(path, map, &moved);
    for_each_child_mut(map, path, &mut |child, at| {
        soften(run, child, keys, at, depth + 1)
    });
}

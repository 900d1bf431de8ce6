//! Schema dialects: one JSON Schema in, what each provider's schema target accepts out. One file
//! per target.
//!
//! The policy is the same for every target. A keyword the target does not accept but whose
//! meaning a model can still follow (a bound, a length, a default) is moved into the node's
//! `description` as `{minimum: 0, maximum: 1}`, never silently dropped; the value is still
//! checked locally after parsing. A construct the target cannot express at all (recursion where
//! refs must be inlined, `not`, a non-string enum in Gemini's `responseSchema`, an external
//! `$ref`) is a [`LowerError`] naming the node and the target, before any request is sent.
//!
//! Every target reads the schema through the one node view (`$ref`s through its resolver, one
//! depth limit) and writes at most [`MAX_NODES`] nodes, so no schema makes lowering slow.
//! [`ResponseSchema::lowered`](crate::ResponseSchema::lowered) keeps each target's result, so a
//! schema is lowered once per target however many requests use it.
//!
//! ```
//! use structured_runtime::provider::dialect::{lower, SchemaTarget};
//! use serde_json::json;
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {"confidence": {"type": "number", "minimum": 0.0, "maximum": 1.0}},
//!     "required": ["confidence"],
//!     "additionalProperties": false
//! });
//! let anthropic = lower(&schema, SchemaTarget::Anthropic).unwrap();
//! assert_eq!(
//!     anthropic["properties"]["confidence"],
//!     json!({"type": "number", "description": "{minimum: 0.0, maximum: 1.0}"})
//! );
//! let gemini = lower(&schema, SchemaTarget::GeminiResponseSchema).unwrap();
//! assert_eq!(gemini["type"], "OBJECT");
//! ```

mod anthropic;
mod gemini_json;
mod gemini_openapi;
mod llama;
mod openai;

use std::fmt;

use serde_json::{Map, Value};

use crate::schema::node::{Node, RefError, MAX_DEPTH};
use crate::schema::Pointer;

#[cfg(test)]
use anthropic::anthropic_transform;
#[cfg(test)]
use openai::to_strict_json_schema;

/// The schema dialect a provider accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchemaTarget {
    /// OpenAI strict mode (also Venice and OpenRouter, which require or pass it on).
    OpenAiStrict,
    /// Anthropic JSON outputs and strict tools.
    Anthropic,
    /// Gemini `responseSchema`: the OpenAPI 3.0 subset (uppercase types, `nullable`, no `$ref`).
    GeminiResponseSchema,
    /// Gemini `responseJsonSchema`: JSON Schema, fewer keywords enforced.
    GeminiJsonSchema,
    /// llama.cpp's JSON-Schema-to-grammar subset (also what Ollama passes on).
    LlamaCpp,
    /// Full JSON Schema, passed as is (vLLM's guided decoding backends).
    JsonSchema,
}

impl SchemaTarget {
    /// Every target.
    pub const ALL: [SchemaTarget; 6] = [
        SchemaTarget::OpenAiStrict,
        SchemaTarget::Anthropic,
        SchemaTarget::GeminiResponseSchema,
        SchemaTarget::GeminiJsonSchema,
        SchemaTarget::LlamaCpp,
        SchemaTarget::JsonSchema,
    ];

    /// The target's position in [`SchemaTarget::ALL`].
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// Lowered nodes at most: inlining a definition used in many places copies it each time, which
/// a schema with shared definitions nested inside each other turns exponential. Four times
/// OpenAI's 5,000-property limit: no provider takes a schema this large.
pub const MAX_NODES: usize = 20_000;

/// One construct a target cannot express.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LowerError {
    /// The target that cannot express it.
    pub target: SchemaTarget,
    /// The node in the input schema.
    pub path: Pointer,
    /// What is wrong and what to do instead.
    pub reason: String,
}

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}: {}", self.target, self.path, self.reason)
    }
}

/// Every construct of a schema its target cannot express.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the schema cannot be sent as {target:?}:{}", list(.errors))]
pub struct LowerReport {
    /// The target.
    pub target: SchemaTarget,
    /// Each problem, with its path.
    pub errors: Vec<LowerError>,
}

fn list(errors: &[LowerError]) -> String {
    errors
        .iter()
        .map(|e| format!("\n  {}: {}", e.path, e.reason))
        .collect()
}

/// `schema` as `target` accepts it.
pub fn lower(schema: &Value, target: SchemaTarget) -> Result<Value, LowerReport> {
    let root = Node::root(schema);
    let mut run = Run::new(target);
    let out = match target {
        SchemaTarget::OpenAiStrict => openai::lower(&mut run, schema),
        SchemaTarget::Anthropic => anthropic::lower(&mut run, root),
        SchemaTarget::GeminiResponseSchema => gemini_openapi::lower(&mut run, root),
        SchemaTarget::GeminiJsonSchema => gemini_json::lower(&mut run, root),
        SchemaTarget::LlamaCpp => llama::lower(&mut run, root),
        SchemaTarget::JsonSchema => schema.clone(),
    };
    run.finish(out)
}

/// One lowering pass and the problems it found.
struct Run {
    target: SchemaTarget,
    errors: Vec<LowerError>,
    /// `$ref`s being inlined, outermost first: a repeat is recursion. The root is being
    /// lowered, so a `{"$ref": "#"}` inside it is recursion.
    inlining: Vec<String>,
    /// Nodes written so far: inlining shared references can multiply a schema's size.
    nodes: usize,
}

impl Run {
    fn new(target: SchemaTarget) -> Self {
        Run {
            target,
            errors: Vec::new(),
            inlining: vec!["#".to_owned()],
            nodes: 0,
        }
    }

    /// The lowered schema, or every problem found on the way.
    fn finish(self, out: Value) -> Result<Value, LowerReport> {
        if self.errors.is_empty() {
            Ok(out)
        } else {
            Err(LowerReport {
                target: self.target,
                errors: self.errors,
            })
        }
    }

    fn fail(&mut self, path: &Pointer, reason: impl Into<String>) {
        self.errors.push(LowerError {
            target: self.target,
            path: path.clone(),
            reason: reason.into(),
        });
    }

    /// Counts one node written; `true` (with an error recorded once) when the walk is too deep
    /// or the node budget is spent, and the caller must stop.
    fn stop(&mut self, path: &Pointer, node: Node<'_>) -> bool {
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
    fn inline<'s>(&mut self, node: Node<'s>, path: &Pointer) -> Inlined<'s> {
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
fn unresolved(reference: &str, error: RefError) -> String {
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
enum Inlined<'s> {
    /// The node itself (no `$ref`).
    Node(Node<'s>, &'s Map<String, Value>),
    /// The schema a `$ref` names (pushed on the inlining stack).
    Ref(Node<'s>, &'s Map<String, Value>),
    /// Nothing usable; the error is recorded.
    Failed,
}

/// Appends `{key: value, ...}` for each moved keyword to the node's description (after a blank
/// line when there is one), the way Anthropic's SDK writes it.
fn describe(out: &mut Map<String, Value>, moved: &Map<String, Value>) {
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

/// Applies `f` to every sub-schema of a node being rewritten in place (a copy of the input, so
/// the one view cannot be used), bounded by the same depth limit.
fn for_each_child_mut(map: &mut Map<String, Value>, f: &mut dyn FnMut(&mut Value)) {
    for (key, child) in map.iter_mut() {
        match (key.as_str(), child) {
            ("properties" | "$defs" | "definitions", Value::Object(children)) => {
                children.values_mut().for_each(&mut *f)
            }
            ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(children)) => {
                children.iter_mut().for_each(&mut *f)
            }
            ("items" | "additionalProperties" | "not", c @ Value::Object(_)) => f(c),
            _ => {}
        }
    }
}

/// Moves `keys` into the description of every node that has them.
fn soften(node: &mut Value, keys: &[&str], depth: usize) {
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
    describe(map, &moved);
    for_each_child_mut(map, &mut |child| soften(child, keys, depth + 1));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The SDKs' own test vectors, kept with the repository's test data.
    fn vectors(name: &str) -> Value {
        let path = format!(
            "{}/../tests/data/providers/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn anthropic_transform_matches_every_sdk_vector() {
        let vectors = vectors("anthropic_transform_schema_vectors.json");
        let vectors = vectors.as_array().unwrap();
        assert_eq!(vectors.len(), 12);
        for v in vectors {
            let out = anthropic_transform(&v["input"]).unwrap();
            assert_eq!(out, v["expected"], "{}", v["test"]);
        }
    }

    /// The inputs of openai-python's vectors are pydantic models; the expected outputs, with the
    /// two things the strictifier adds taken out again (`additionalProperties: false` and the
    /// all-keys `required`), are what pydantic emits for them, up to fields with defaults.
    fn loosen(node: &mut Value) {
        if let Value::Object(map) = node {
            map.remove("additionalProperties");
            map.remove("required");
            map.values_mut().for_each(loosen);
        } else if let Value::Array(items) = node {
            items.iter_mut().for_each(loosen);
        }
    }

    #[test]
    fn openai_strictifier_restores_every_sdk_vector() {
        let vectors = vectors("openai_to_strict_json_schema_expected.json");
        let vectors = vectors.as_array().unwrap();
        assert_eq!(vectors.len(), 3);
        for v in vectors {
            let expected = &v["pydantic_v2_expected"];
            // Two vectors are whole function tools, one a bare schema.
            let expected = expected.get("parameters").unwrap_or(expected);
            let mut input = expected.clone();
            loosen(&mut input);
            assert_ne!(&input, expected);
            assert_eq!(&to_strict_json_schema(&input), expected, "{}", v["test"]);
            lower(expected, SchemaTarget::OpenAiStrict)
                .unwrap_or_else(|e| panic!("{}: {e}", v["test"]));
        }
    }

    #[test]
    fn openai_strict_merges_a_single_all_of_inlines_refs_with_siblings_and_drops_null_defaults() {
        let schema = json!({
            "type": "object",
            "$defs": {"Tier": {"type": "string", "enum": ["free", "pro"]}},
            "properties": {
                "tier": {"$ref": "#/$defs/Tier", "description": "plan"},
                "name": {"allOf": [{"type": "string"}], "default": null},
            }
        });
        let out = to_strict_json_schema(&schema);
        assert_eq!(
            out["properties"]["tier"],
            json!({"type": "string", "enum": ["free", "pro"], "description": "plan"})
        );
        assert_eq!(out["properties"]["name"], json!({"type": "string"}));
        assert_eq!(out["required"], json!(["tier", "name"]));
    }
}

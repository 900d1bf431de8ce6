//! Schema dialects: one JSON Schema in, what each provider's schema target accepts out. One file
//! per target, each a table of per-keyword policies (keep, keep but report as not enforced, move
//! into the description, refuse: `policy.rs`) plus the few structural rewrites its target
//! needs, run over the one walk of sub-schemas.
//!
//! The policy is the same for every target. A keyword the target refuses but whose meaning a
//! model can still follow (a bound, a length, a default) is moved into the node's
//! `description` as `{minimum: 0, maximum: 1}`, never silently dropped ([`Moved`]). A keyword
//! the target takes but its engine may not enforce is sent as written, so an engine that
//! enforces it does, and reported ([`Kept`]: llama.cpp's converter is known to ignore a
//! fractional range, a plain JSON Schema target's backend may). Either way the value is still
//! checked locally after parsing. A construct the target cannot express at all (recursion where
//! refs must be inlined, `not`, a non-string enum in Gemini's `responseSchema`, an external
//! `$ref`) is a [`LowerError`] naming the node and the target, before any request is sent.
//!
//! For llama.cpp's native engine, [`grammar`] compiles the schema into a GBNF grammar instead,
//! which holds the model to what the converter leaves out.
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
mod gbnf;
mod gemini_json;
mod gemini_openapi;
mod json_schema;
mod llama;
mod openai;
mod pass;
mod policy;
mod reshape;

use serde_json::Value;

use crate::schema::node::Node;
use pass::Run;

mod annotations;

pub use crate::read::reshape::{ReadBackStream, Reshape};
pub use crate::schema::dialect::{
    Budgeted, Dropped, Enforcement, Kept, LowerError, LowerReport, Moved, SchemaTarget, Unenforced,
};
pub(crate) use anthropic::RequestCaps;
pub use gbnf::{grammar, Grammar, GrammarBudget, MAX_RULES};
pub use pass::{Lowered, MAX_NODES};

#[cfg(test)]
use anthropic::anthropic_transform;
#[cfg(test)]
use openai::to_strict_json_schema;

/// `schema` as `target` accepts it.
pub fn lower(schema: &Value, target: SchemaTarget) -> Result<Value, LowerReport> {
    lower_reporting(schema, target).map(|lowered| lowered.schema)
}

/// [`lower`], with every keyword moved into a description on the way ([`Moved`]): what the
/// provider will not hold the model to, reported to the caller.
pub fn lower_reporting(schema: &Value, target: SchemaTarget) -> Result<Lowered, LowerReport> {
    let mut run = Run::new(target);
    // Extension annotations (`x-...`) are for the schema's readers, not for a provider: left out
    // of what is sent, and said.
    let mut dropped = Vec::new();
    let unannotated = annotations::without(schema, &mut dropped);
    let schema = unannotated.as_ref().unwrap_or(schema);
    // A tool's parameters are an object on every API that forces one, and OpenAI strict takes
    // an object root only: a root that is not an object goes as the one property of an object
    // (read back on arrival). llama.cpp and plain JSON Schema take any root.
    let wraps = !matches!(target, SchemaTarget::LlamaCpp | SchemaTarget::JsonSchema);
    let wrapped = wraps.then(|| reshape::wrap_root(schema)).flatten();
    let schema = match &wrapped {
        Some((wrapped, key)) => {
            run.reshape.root_key = Some(key.clone());
            wrapped
        }
        None => schema,
    };
    let root = Node::root(schema);
    let out = match target {
        SchemaTarget::OpenAiStrict => openai::lower(&mut run, schema),
        SchemaTarget::Anthropic => anthropic::lower(&mut run, root),
        SchemaTarget::GeminiResponseSchema => gemini_openapi::lower(&mut run, root),
        SchemaTarget::GeminiJsonSchema => gemini_json::lower(&mut run, root),
        SchemaTarget::LlamaCpp => llama::lower(&mut run, root),
        SchemaTarget::JsonSchema => json_schema::lower(&mut run, root),
    };
    run.finish(out)
        .map(|lowered| Lowered { dropped, ..lowered })
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

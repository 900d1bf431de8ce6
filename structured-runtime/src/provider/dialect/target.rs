//! The schema targets, and what a lowering reports when a target cannot express a schema.

use std::fmt;

use crate::schema::Pointer;

/// The schema dialect a provider accepts. Written in serde as its name in snake case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
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

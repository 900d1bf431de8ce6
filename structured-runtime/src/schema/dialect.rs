//! The schema dialects providers accept, and the words a lowering to one reports with: what it
//! moved into descriptions, what it sent that the engine may not hold the model to, what a
//! grammar leaves to the validator or adds, and what a target cannot express. Data only: the
//! lowerings themselves are the provider's (`provider::dialect`), and reading an answer says
//! what they reported in these words.

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

/// Whether a target's engine holds the model to a keyword sent in the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Enforcement {
    /// The engine is known to ignore it (the model is not held to it).
    Ignored,
    /// Whether it is enforced depends on the engine behind the endpoint (vLLM's backends).
    Unknown,
}

/// Keywords sent as written that the target's engine does not hold the model to, or may not:
/// the value is checked for them locally, as for every keyword.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// The node, in the schema as sent.
    pub path: Pointer,
    /// The keywords.
    pub keywords: Vec<String>,
    /// What is known of the engine.
    pub enforcement: Enforcement,
}

/// Keywords the target does not enforce, moved into a node's description: the model is told,
/// the provider does not hold it to them, and the answer is checked for them locally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moved {
    /// The node, in the schema as sent.
    pub path: Pointer,
    /// The keywords.
    pub keywords: Vec<String>,
}

/// Extension annotations (`x-` keywords) left out of the schema sent: they say nothing of the
/// value (validation ignores them too), and providers refuse keywords they do not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    /// The node, in the schema as written.
    pub path: Pointer,
    /// The keywords.
    pub keywords: Vec<String>,
}

/// A keyword the grammar does not hold the model to: left to the validator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unenforced {
    /// The node, in the schema as written.
    pub path: Pointer,
    /// The keyword.
    pub keyword: String,
    /// Why the grammar leaves it out.
    pub reason: String,
}

/// A limit the grammar added where the schema has none (`GrammarBudget`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budgeted {
    /// The node, in the schema as written.
    pub path: Pointer,
    /// `maxLength`, `maxItems` or `maxProperties`.
    pub keyword: &'static str,
    /// The limit.
    pub limit: usize,
}

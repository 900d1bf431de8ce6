//! How a provider is asked for structured output, which decides how its answer is read.

/// The way structured output is obtained from a provider. Written in serde as its name in
/// snake case (`"schema_enforced"`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum StructuredOutputMode {
    /// No structured output was asked for: the answer is whatever the model wrote.
    #[default]
    None,
    /// The provider enforces the JSON Schema (OpenAI `response_format`, Anthropic
    /// `output_config.format`, Gemini `responseSchema`): the answer should be exactly the JSON.
    SchemaEnforced,
    /// The schema is a tool's input schema and the model is made to call it: the answer is the
    /// tool call's arguments.
    ToolUseWorkaround,
    /// The schema is written into the prompt: the answer is prose that should hold the JSON.
    PromptGuided,
}

impl StructuredOutputMode {
    /// Whether the provider promises JSON that fits the schema, so the fast path comes first.
    pub fn expects_exact_json(self) -> bool {
        matches!(
            self,
            StructuredOutputMode::SchemaEnforced | StructuredOutputMode::ToolUseWorkaround
        )
    }
}

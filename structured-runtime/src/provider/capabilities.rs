//! What each provider and model can do for structured output, and the mode chosen from it.
//!
//! The matrix below is kept current with the providers' documentation: Anthropic has
//! native JSON outputs (`output_config.format`) on current models, and rejects a forced tool
//! choice while extended thinking is on. A model the matrix does not know gets the provider's
//! defaults; [`CapabilityOverrides`] lets a caller say what a model really supports (from
//! Venice's `supportsResponseSchema`, OpenRouter's `supported_parameters`, or experience).
//!
//! ```
//! use structured_runtime::provider::capabilities::{capabilities, resolve_structured_output, InferenceProfile, ProviderKind};
//! use structured_runtime::{ResponseSchema, StructuredOutputMode};
//!
//! let schema = ResponseSchema::new("decision", serde_json::json!({
//!     "type": "object", "properties": {}, "required": [], "additionalProperties": false
//! })).unwrap();
//! let profile = InferenceProfile::new(schema);
//! let claude = capabilities(ProviderKind::Anthropic, "claude-sonnet-4-5");
//! assert_eq!(resolve_structured_output(&profile, &claude), StructuredOutputMode::SchemaEnforced);
//! let old = capabilities(ProviderKind::Anthropic, "claude-3-5-haiku-latest");
//! assert_eq!(resolve_structured_output(&profile, &old), StructuredOutputMode::ToolUseWorkaround);
//! ```

use std::collections::BTreeMap;

pub use crate::provider::dialect::SchemaTarget;
use crate::read::mode::StructuredOutputMode;
use crate::schema::response::ResponseSchema;

/// The APIs this crate knows how to ask for structured output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProviderKind {
    /// OpenAI Chat Completions (`response_format`).
    OpenAiChat,
    /// OpenAI Responses (`text.format`).
    OpenAiResponses,
    /// Anthropic Messages (`output_config.format`, or a forced tool).
    Anthropic,
    /// Google Gemini `generateContent` (`generationConfig`).
    Gemini,
    /// Venice (OpenAI Chat shape; support per model).
    Venice,
    /// OpenRouter (OpenAI Chat shape; support per model and per routed endpoint).
    OpenRouter,
    /// Ollama's native `/api/chat` (`format`).
    Ollama,
    /// vLLM's OpenAI-compatible server.
    Vllm,
    /// llama.cpp's `llama-server`.
    LlamaCpp,
    /// A gateway that passes requests through to the provider behind the model name
    /// (`claude-…`, `gpt-…`, `gemini-…`): it has that provider's capabilities.
    Passthrough,
}

impl ProviderKind {
    /// Every kind.
    pub const ALL: [ProviderKind; 10] = [
        ProviderKind::OpenAiChat,
        ProviderKind::OpenAiResponses,
        ProviderKind::Anthropic,
        ProviderKind::Gemini,
        ProviderKind::Venice,
        ProviderKind::OpenRouter,
        ProviderKind::Ollama,
        ProviderKind::Vllm,
        ProviderKind::LlamaCpp,
        ProviderKind::Passthrough,
    ];

    /// The name a config file or the environment gives it (`openai`, `openai-responses`,
    /// `anthropic`, `gemini`, `venice`, `openrouter`, `ollama`, `vllm`, `llamacpp`,
    /// `passthrough`); `Display` writes it, `FromStr` and serde read it (case-insensitive;
    /// `llama.cpp` too).
    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::OpenAiChat => "openai",
            ProviderKind::OpenAiResponses => "openai-responses",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Gemini => "gemini",
            ProviderKind::Venice => "venice",
            ProviderKind::OpenRouter => "openrouter",
            ProviderKind::Ollama => "ollama",
            ProviderKind::Vllm => "vllm",
            ProviderKind::LlamaCpp => "llamacpp",
            ProviderKind::Passthrough => "passthrough",
        }
    }

    /// The public endpoint of a hosted provider; `None` for a server the user runs.
    pub fn default_base_url(self) -> Option<&'static str> {
        Some(match self {
            ProviderKind::OpenAiChat | ProviderKind::OpenAiResponses => "https://api.openai.com/v1",
            ProviderKind::Anthropic => "https://api.anthropic.com",
            ProviderKind::Gemini => "https://generativelanguage.googleapis.com",
            ProviderKind::Venice => "https://api.venice.ai/api/v1",
            ProviderKind::OpenRouter => "https://openrouter.ai/api/v1",
            ProviderKind::Ollama => "http://localhost:11434",
            ProviderKind::Vllm | ProviderKind::LlamaCpp | ProviderKind::Passthrough => return None,
        })
    }
}

impl std::fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A provider name no kind has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownProvider(pub String);

impl std::fmt::Display for UnknownProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} is no provider: expected one of ", self.0)?;
        for (i, kind) in ProviderKind::ALL.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{kind}")?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownProvider {}

impl std::str::FromStr for ProviderKind {
    type Err = UnknownProvider;
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let lower = name.to_ascii_lowercase();
        let lower = if lower == "llama.cpp" {
            "llamacpp"
        } else {
            lower.as_str()
        };
        ProviderKind::ALL
            .into_iter()
            .find(|k| k.name() == lower)
            .ok_or_else(|| UnknownProvider(name.to_owned()))
    }
}

impl serde::Serialize for ProviderKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for ProviderKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// What one provider and model support.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProviderCapabilities {
    /// The provider constrains decoding to a JSON Schema given in the request.
    pub supports_response_schema: bool,
    /// The provider can be made to call one named tool (a forced tool choice: tool mode).
    pub supports_tool_use: bool,
    /// The provider takes tools and answers with calls of them when the model chooses to (what
    /// an agent step needs; a forced choice is not).
    pub supports_tool_calls: bool,
    /// A forced tool choice is still accepted while extended thinking is on (Anthropic: no).
    pub forced_tool_with_thinking: bool,
    /// The schema dialect to lower to.
    pub schema_target: SchemaTarget,
}

impl ProviderCapabilities {
    /// Neither schema nor tool: the schema goes into the prompt.
    pub const PROMPT_ONLY: ProviderCapabilities = ProviderCapabilities {
        supports_response_schema: false,
        supports_tool_use: false,
        supports_tool_calls: false,
        forced_tool_with_thinking: false,
        schema_target: SchemaTarget::JsonSchema,
    };

    const fn both(schema_target: SchemaTarget) -> Self {
        ProviderCapabilities {
            supports_response_schema: true,
            supports_tool_use: true,
            supports_tool_calls: true,
            forced_tool_with_thinking: true,
            schema_target,
        }
    }
}

/// What a request wants: the schema (none for free text), the user's preference between a
/// schema and a tool when both are available, and whether extended thinking is on.
#[derive(Debug, Clone, PartialEq)]
pub struct InferenceProfile {
    /// The schema to obtain, or `None` for a free-text answer.
    pub response_schema: Option<ResponseSchema>,
    /// With both available, use the schema (`true`, the default) or the tool workaround.
    pub prefer_schema_enforcement: bool,
    /// Extended thinking is on (Anthropic then refuses a forced tool choice).
    pub extended_thinking: bool,
}

impl InferenceProfile {
    /// A profile asking for `schema`, schema enforcement preferred, no thinking.
    pub fn new(schema: ResponseSchema) -> Self {
        InferenceProfile {
            response_schema: Some(schema),
            prefer_schema_enforcement: true,
            extended_thinking: false,
        }
    }
}

/// The mode for a profile on a provider, with the preference and the thinking rule: a schema when the provider
/// enforces one (and the profile prefers it, or no tool can be forced), else a forced tool,
/// else the schema in the prompt.
pub fn resolve_structured_output(
    profile: &InferenceProfile,
    caps: &ProviderCapabilities,
) -> StructuredOutputMode {
    resolve_mode(
        profile.response_schema.is_some(),
        profile.prefer_schema_enforcement,
        profile.extended_thinking,
        caps,
    )
}

/// [`resolve_structured_output`] from the profile's three facts.
pub(crate) fn resolve_mode(
    wants_schema: bool,
    prefer_schema_enforcement: bool,
    extended_thinking: bool,
    caps: &ProviderCapabilities,
) -> StructuredOutputMode {
    if !wants_schema {
        return StructuredOutputMode::None;
    }
    let tool = caps.supports_tool_use && (!extended_thinking || caps.forced_tool_with_thinking);
    match (caps.supports_response_schema, tool) {
        (true, false) => StructuredOutputMode::SchemaEnforced,
        (true, true) if prefer_schema_enforcement => StructuredOutputMode::SchemaEnforced,
        (_, true) => StructuredOutputMode::ToolUseWorkaround,
        (false, false) => StructuredOutputMode::PromptGuided,
    }
}

/// The built-in matrix: what `provider` supports for `model` (matched on the model id, case
/// insensitive; an unknown model gets the provider's default).
pub fn capabilities(provider: ProviderKind, model: &str) -> ProviderCapabilities {
    let model = model.to_ascii_lowercase();
    let has = |needle: &str| model.contains(needle);
    match provider {
        ProviderKind::OpenAiChat | ProviderKind::OpenAiResponses => {
            ProviderCapabilities::both(SchemaTarget::OpenAiStrict)
        }
        ProviderKind::Anthropic => anthropic(&model),
        ProviderKind::Gemini => gemini(&model),
        ProviderKind::Venice => {
            if has("claude") {
                // Claude through Venice: no `response_format`, tool use works.
                ProviderCapabilities {
                    supports_response_schema: false,
                    ..anthropic(&model)
                }
            } else if is_reasoning_only(&model) {
                ProviderCapabilities::PROMPT_ONLY
            } else {
                ProviderCapabilities::both(SchemaTarget::OpenAiStrict)
            }
        }
        ProviderKind::OpenRouter => {
            // `vendor/model`: OpenRouter speaks OpenAI's shape and translates; with
            // `require_parameters` it routes only to endpoints that honour the schema.
            if is_reasoning_only(&model) {
                ProviderCapabilities::PROMPT_ONLY
            } else if has("claude") {
                ProviderCapabilities {
                    schema_target: SchemaTarget::OpenAiStrict,
                    ..anthropic(&model)
                }
            } else {
                ProviderCapabilities::both(SchemaTarget::OpenAiStrict)
            }
        }
        ProviderKind::Ollama => ProviderCapabilities {
            // Native tools, which the model calls when it chooses (an agent step), but no tool
            // choice: nothing can force one.
            supports_tool_use: false,
            forced_tool_with_thinking: false,
            ..ProviderCapabilities::both(SchemaTarget::LlamaCpp)
        },
        // vLLM takes a named tool choice and `required` (guided decoding makes the call).
        ProviderKind::Vllm => ProviderCapabilities::both(SchemaTarget::JsonSchema),
        // llama.cpp's server takes tools (with `--jinja` and a chat template that renders them)
        // and `tool_choice` as a string only: `required` with the one tool forces it. The
        // schema is still preferred: its grammar holds every rule, a tool call's only the
        // template's format.
        ProviderKind::LlamaCpp => ProviderCapabilities::both(SchemaTarget::LlamaCpp),
        ProviderKind::Passthrough => match upstream(&model) {
            Some(p) => capabilities(p, &model),
            None => ProviderCapabilities::PROMPT_ONLY,
        },
    }
}

/// The provider behind a passthrough model id (`claude-…`, `anthropic/claude-…`, `gpt-…`,
/// `o3`, `gemini-…`), if the id says.
pub fn upstream(model: &str) -> Option<ProviderKind> {
    let model = model.to_ascii_lowercase();
    let name = model.rsplit('/').next().unwrap_or(&model);
    if name.starts_with("claude") {
        Some(ProviderKind::Anthropic)
    } else if name.starts_with("gemini") {
        Some(ProviderKind::Gemini)
    } else if name.starts_with("gpt-")
        || ["o1", "o3", "o4"]
            .iter()
            .any(|o| name == *o || name.starts_with(&format!("{o}-")))
    {
        Some(ProviderKind::OpenAiChat)
    } else {
        None
    }
}

/// Anthropic: native JSON outputs on the Claude 4.5 generation and Opus 4.1 onwards; the tool
/// workaround on older models (Claude 3.x, and the first Claude 4 models, whose ids read
/// `claude-sonnet-4-20250514` / `claude-opus-4-0`); never a forced tool with extended thinking.
fn anthropic(model: &str) -> ProviderCapabilities {
    let native = !(model.contains("claude-3")
        || model.contains("claude-2")
        || model.contains("claude-instant")
        || model.contains("claude-sonnet-4-0")
        || model.contains("claude-sonnet-4-2")
        || model.contains("claude-opus-4-0")
        || model.contains("claude-opus-4-2"));
    ProviderCapabilities {
        supports_response_schema: native,
        supports_tool_use: true,
        supports_tool_calls: true,
        forced_tool_with_thinking: false,
        schema_target: SchemaTarget::Anthropic,
    }
}

/// Gemini: `responseJsonSchema` from 2.5 on; the OpenAPI `responseSchema` for 1.x and 2.0.
fn gemini(model: &str) -> ProviderCapabilities {
    let older = model.contains("gemini-1") || model.contains("gemini-2.0");
    ProviderCapabilities::both(if older {
        SchemaTarget::GeminiResponseSchema
    } else {
        SchemaTarget::GeminiJsonSchema
    })
}

/// Reasoning models served without grammar support (DeepSeek R1 and its distills).
fn is_reasoning_only(model: &str) -> bool {
    model.contains("deepseek-r1") || model.contains("deepseek-reasoner")
}

/// Capabilities the caller knows better than the matrix, per provider and model id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CapabilityOverrides {
    by_model: BTreeMap<(ProviderKind, String), ProviderCapabilities>,
}

impl CapabilityOverrides {
    /// No overrides.
    pub fn new() -> Self {
        CapabilityOverrides::default()
    }

    /// Says what `model` on `provider` supports (the model id is matched exactly, ignoring case).
    pub fn set(
        &mut self,
        provider: ProviderKind,
        model: &str,
        caps: ProviderCapabilities,
    ) -> &mut Self {
        self.by_model
            .insert((provider, model.to_ascii_lowercase()), caps);
        self
    }

    /// The override for this model, if one was set.
    pub fn get(&self, provider: ProviderKind, model: &str) -> Option<ProviderCapabilities> {
        // (With none set, as most runs have, no lowercase name is made to look up.)
        if self.by_model.is_empty() {
            return None;
        }
        self.by_model
            .get(&(provider, model.to_ascii_lowercase()))
            .copied()
    }

    /// The override for this model, or the built-in matrix.
    pub fn capabilities(&self, provider: ProviderKind, model: &str) -> ProviderCapabilities {
        self.get(provider, model)
            .unwrap_or_else(|| capabilities(provider, model))
    }
}

//! The capability matrix and the mode decision: one case per provider row, overrides, thinking.

use structured_examples::HeartbeatDecision;
use structured_runtime::provider::capabilities::{
    capabilities, resolve_structured_output, upstream, CapabilityOverrides, InferenceProfile,
    ProviderCapabilities, ProviderKind, SchemaTarget,
};
use structured_runtime::StructuredOutput;
use structured_runtime::StructuredOutputMode::{self, *};

fn profile() -> InferenceProfile {
    InferenceProfile::new(HeartbeatDecision::schema().clone())
}

fn mode(provider: ProviderKind, model: &str, profile: &InferenceProfile) -> StructuredOutputMode {
    resolve_structured_output(profile, &capabilities(provider, model))
}

#[test]
fn one_decision_per_provider_row() {
    let p = profile();
    let rows = [
        (
            ProviderKind::OpenAiChat,
            "gpt-4o-2024-08-06",
            SchemaEnforced,
            SchemaTarget::OpenAiStrict,
        ),
        (
            ProviderKind::OpenAiResponses,
            "gpt-5",
            SchemaEnforced,
            SchemaTarget::OpenAiStrict,
        ),
        (
            ProviderKind::Anthropic,
            "claude-sonnet-4-5",
            SchemaEnforced,
            SchemaTarget::Anthropic,
        ),
        (
            ProviderKind::Anthropic,
            "claude-opus-4-1-20250805",
            SchemaEnforced,
            SchemaTarget::Anthropic,
        ),
        (
            ProviderKind::Anthropic,
            "claude-sonnet-4-20250514",
            ToolUseWorkaround,
            SchemaTarget::Anthropic,
        ),
        (
            ProviderKind::Anthropic,
            "claude-3-5-haiku-latest",
            ToolUseWorkaround,
            SchemaTarget::Anthropic,
        ),
        (
            ProviderKind::Gemini,
            "gemini-2.5-flash",
            SchemaEnforced,
            SchemaTarget::GeminiJsonSchema,
        ),
        (
            ProviderKind::Gemini,
            "gemini-2.0-flash",
            SchemaEnforced,
            SchemaTarget::GeminiResponseSchema,
        ),
        (
            ProviderKind::Venice,
            "llama-3.3-70b",
            SchemaEnforced,
            SchemaTarget::OpenAiStrict,
        ),
        (
            ProviderKind::Venice,
            "claude-sonnet-4-5",
            ToolUseWorkaround,
            SchemaTarget::Anthropic,
        ),
        (
            ProviderKind::Venice,
            "deepseek-r1-671b",
            PromptGuided,
            SchemaTarget::JsonSchema,
        ),
        (
            ProviderKind::OpenRouter,
            "openai/gpt-4o",
            SchemaEnforced,
            SchemaTarget::OpenAiStrict,
        ),
        (
            ProviderKind::OpenRouter,
            "anthropic/claude-3.5-sonnet",
            ToolUseWorkaround,
            SchemaTarget::OpenAiStrict,
        ),
        (
            ProviderKind::OpenRouter,
            "deepseek/deepseek-r1",
            PromptGuided,
            SchemaTarget::JsonSchema,
        ),
        (
            ProviderKind::Ollama,
            "llama3.1",
            SchemaEnforced,
            SchemaTarget::LlamaCpp,
        ),
        (
            ProviderKind::Vllm,
            "Qwen/Qwen2.5-7B-Instruct",
            SchemaEnforced,
            SchemaTarget::JsonSchema,
        ),
        (
            ProviderKind::LlamaCpp,
            "any",
            SchemaEnforced,
            SchemaTarget::LlamaCpp,
        ),
        (
            ProviderKind::Passthrough,
            "claude-3-7-sonnet",
            ToolUseWorkaround,
            SchemaTarget::Anthropic,
        ),
        (
            ProviderKind::Passthrough,
            "gpt-4o-mini",
            SchemaEnforced,
            SchemaTarget::OpenAiStrict,
        ),
        (
            ProviderKind::Passthrough,
            "some-local-model",
            PromptGuided,
            SchemaTarget::JsonSchema,
        ),
    ];
    for (provider, model, expected, target) in rows {
        assert_eq!(mode(provider, model, &p), expected, "{provider:?} {model}");
        assert_eq!(
            capabilities(provider, model).schema_target,
            target,
            "{provider:?} {model}"
        );
    }
}

#[test]
fn no_schema_is_no_structured_output() {
    let mut p = profile();
    p.response_schema = Option::None;
    assert_eq!(mode(ProviderKind::OpenAiChat, "gpt-4o", &p), None);
}

#[test]
fn the_preference_picks_the_tool_when_both_are_available() {
    let mut p = profile();
    p.prefer_schema_enforcement = false;
    assert_eq!(
        mode(ProviderKind::OpenAiChat, "gpt-4o", &p),
        ToolUseWorkaround
    );
    assert_eq!(
        mode(ProviderKind::Anthropic, "claude-sonnet-4-5", &p),
        ToolUseWorkaround
    );
    // Without a forceable tool the schema is still used.
    assert_eq!(mode(ProviderKind::Ollama, "llama3.1", &p), SchemaEnforced);
}

#[test]
fn extended_thinking_rules_out_a_forced_tool_on_anthropic_only() {
    let mut p = profile();
    p.extended_thinking = true;
    p.prefer_schema_enforcement = false;
    // Native JSON outputs still work with thinking.
    assert_eq!(
        mode(ProviderKind::Anthropic, "claude-sonnet-4-5", &p),
        SchemaEnforced
    );
    // An older Claude with thinking has neither: the schema goes into the prompt.
    assert_eq!(
        mode(ProviderKind::Anthropic, "claude-3-7-sonnet-latest", &p),
        PromptGuided
    );
    p.extended_thinking = false;
    assert_eq!(
        mode(ProviderKind::Anthropic, "claude-3-7-sonnet-latest", &p),
        ToolUseWorkaround
    );
    p.extended_thinking = true;
    assert_eq!(mode(ProviderKind::OpenAiChat, "o3", &p), ToolUseWorkaround);
}

#[test]
fn a_caller_can_override_a_model_the_matrix_does_not_know() {
    let mut overrides = CapabilityOverrides::new();
    let p = profile();
    assert_eq!(
        resolve_structured_output(
            &p,
            &overrides.capabilities(ProviderKind::Passthrough, "acme-7b")
        ),
        PromptGuided
    );
    overrides.set(
        ProviderKind::Passthrough,
        "ACME-7B",
        ProviderCapabilities {
            supports_response_schema: true,
            supports_tool_use: false,
            supports_tool_calls: false,
            forced_tool_with_thinking: false,
            schema_target: SchemaTarget::LlamaCpp,
        },
    );
    let caps = overrides.capabilities(ProviderKind::Passthrough, "acme-7b");
    assert_eq!(resolve_structured_output(&p, &caps), SchemaEnforced);
    // Other models keep the matrix.
    assert_eq!(
        overrides.capabilities(ProviderKind::OpenAiChat, "gpt-4o"),
        capabilities(ProviderKind::OpenAiChat, "gpt-4o")
    );
}

#[test]
fn passthrough_model_ids_name_their_provider() {
    assert_eq!(
        upstream("anthropic/claude-sonnet-4-5"),
        Some(ProviderKind::Anthropic)
    );
    assert_eq!(upstream("o3-mini"), Some(ProviderKind::OpenAiChat));
    assert_eq!(upstream("gemini-2.5-pro"), Some(ProviderKind::Gemini));
    assert_eq!(upstream("o3"), Some(ProviderKind::OpenAiChat));
    assert_eq!(upstream("llama-3"), Option::None);
}

//! The types every wire API's reading shares: which API, what was asked for, and what the
//! provider's answer amounts to.

use crate::provider::capabilities::ProviderKind;
use crate::read::mode::StructuredOutputMode;
use crate::read::Answer;
use crate::schema::Pointer;

/// The request and response shape a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WireApi {
    /// OpenAI Chat Completions, and the servers that copy it (Venice, OpenRouter, vLLM,
    /// llama.cpp, Ollama's `/v1`).
    OpenAiChat,
    /// OpenAI Responses.
    OpenAiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// Gemini `generateContent`.
    Gemini,
    /// Ollama's native `/api/chat`.
    OllamaChat,
}

impl ProviderKind {
    /// The shape this provider speaks. A passthrough gateway is taken to speak OpenAI Chat, as
    /// the gateways this crate targets do.
    pub fn wire_api(self) -> WireApi {
        match self {
            ProviderKind::OpenAiResponses => WireApi::OpenAiResponses,
            ProviderKind::Anthropic => WireApi::Anthropic,
            ProviderKind::Gemini => WireApi::Gemini,
            ProviderKind::Ollama => WireApi::OllamaChat,
            ProviderKind::OpenAiChat
            | ProviderKind::Venice
            | ProviderKind::OpenRouter
            | ProviderKind::Vllm
            | ProviderKind::LlamaCpp
            | ProviderKind::Passthrough => WireApi::OpenAiChat,
        }
    }
}

/// What the request asked for, so the answer can be read against it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expect {
    /// The mode the request was made in.
    pub mode: StructuredOutputMode,
    /// In [`StructuredOutputMode::ToolUseWorkaround`], the tool the model was made to call.
    pub tool_name: Option<String>,
}

impl Expect {
    /// Reading an answer asked for in `mode` (no tool name: any single tool call is taken).
    pub fn new(mode: StructuredOutputMode) -> Self {
        Expect {
            mode,
            tool_name: None,
        }
    }

    /// Reading the answer of a forced call to `tool`.
    pub fn tool(tool: impl Into<String>) -> Self {
        Expect {
            mode: StructuredOutputMode::ToolUseWorkaround,
            tool_name: Some(tool.into()),
        }
    }
}

/// A tool call as the provider reported it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolCall {
    /// The provider's id for the call (needed to answer it with a tool result), if it gave one.
    pub id: Option<String>,
    /// The tool called.
    pub name: String,
}

/// What should hold the structured value: an answer's text, or a tool call's input (a value when
/// the provider sent an object, which is read where it is).
#[derive(Debug, Clone, PartialEq)]
pub struct StructuredCandidate {
    /// The JSON (or, in prompt-guided mode, the prose) to read.
    pub answer: Answer,
    /// The tool call it came from, in tool mode.
    pub tool_call: Option<ToolCall>,
}

/// What the provider's answer amounts to.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Outcome {
    /// An answer to parse.
    Candidate(StructuredCandidate),
    /// The model refused; the provider's explanation and category when it gave them.
    Refused {
        /// The refusal text or the provider's explanation.
        explanation: Option<String>,
        /// The provider's category (Anthropic's `stop_details.category`), if any.
        category: Option<String>,
    },
    /// The answer was cut (token limit): what was written so far, never a value.
    Truncated {
        /// The partial answer, if any was written.
        partial: Option<StructuredCandidate>,
        /// The provider's reason (`length`, `max_tokens`, `MAX_TOKENS`, ...).
        reason: String,
    },
    /// A safety or content filter stopped the answer or blocked the prompt.
    Filtered {
        /// The provider's reason (`content_filter`, `SAFETY`, a block reason, ...).
        reason: String,
        /// Text written before the filter stopped it, if any.
        partial: Option<String>,
    },
    /// The answer holds no structured output: no text, or plain text where a tool call was
    /// required.
    NoStructuredOutput {
        /// The text the model wrote instead, if any.
        text: Option<String>,
    },
    /// A tool was called, but not as required: another tool, several calls, or a call the
    /// provider itself flagged as malformed.
    ToolCalledWrongly {
        /// The calls made.
        calls: Vec<ToolCall>,
        /// Each call's arguments, in the order of `calls`.
        inputs: Vec<Answer>,
        /// What was wrong.
        reason: String,
    },
}

/// Token usage, when the provider reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Prompt tokens (cached ones included, as every provider counts them).
    pub input_tokens: u64,
    /// Completion tokens (thinking included where the provider counts it there).
    pub output_tokens: u64,
    /// Prompt tokens served from the provider's cache, when it says (billed lower).
    pub cached_input_tokens: u64,
}

impl Usage {
    /// This usage and `other` together.
    pub fn plus(self, other: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens + other.input_tokens,
            output_tokens: self.output_tokens + other.output_tokens,
            cached_input_tokens: self.cached_input_tokens + other.cached_input_tokens,
        }
    }

    /// What it costs at `prices`: uncached input, cached input and output each at its rate.
    pub fn cost(&self, prices: &Prices) -> f64 {
        let cached = self.cached_input_tokens.min(self.input_tokens);
        let uncached = self.input_tokens - cached;
        let per_token = |tokens: u64, per_million: f64| tokens as f64 * per_million / 1e6;
        per_token(uncached, prices.input)
            + per_token(cached, prices.cached_input.unwrap_or(prices.input))
            + per_token(self.output_tokens, prices.output)
    }

    /// What it costs through a provider's batch API: [`Usage::cost`] times the share of the
    /// prices batches are charged ([`Prices::batch`]).
    pub fn batch_cost(&self, prices: &Prices) -> f64 {
        self.cost(prices) * prices.batch_share()
    }
}

/// A model's prices, per million tokens, in the caller's currency.
///
/// ```
/// use structured_runtime::provider::wire::{Prices, Usage};
///
/// let prices = Prices { input: 2.5, output: 10.0, cached_input: Some(1.25), batch: None };
/// let usage = Usage { input_tokens: 1_000, output_tokens: 200, cached_input_tokens: 400 };
/// // 600 × 2.5 + 400 × 1.25 + 200 × 10, per million.
/// assert!((usage.cost(&prices) - 0.004).abs() < 1e-12);
/// // Through a batch API: half.
/// assert!((usage.batch_cost(&prices) - 0.002).abs() < 1e-12);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prices {
    /// Per million prompt tokens.
    pub input: f64,
    /// Per million completion tokens.
    pub output: f64,
    /// Per million cached prompt tokens (the input price when `None`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input: Option<f64>,
    /// The share of these prices a request costs through the provider's batch API (`None`:
    /// half, what OpenAI, Anthropic and Gemini charge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<f64>,
}

impl Prices {
    /// [`Prices::batch`], or half.
    pub fn batch_share(&self) -> f64 {
        self.batch.unwrap_or(0.5)
    }
}

/// A provider's answer, read.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderResponse {
    /// What the answer amounts to.
    pub outcome: Outcome,
    /// Token usage, if reported.
    pub usage: Option<Usage>,
    /// The provider's own stop or finish reason, as sent.
    pub stop_reason: Option<String>,
}

/// A body that is not what the provider sends.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// The body is not JSON.
    #[error("{api:?} response is not JSON: {message}")]
    NotJson {
        /// The API read.
        api: WireApi,
        /// serde_json's message.
        message: String,
    },
    /// The JSON is not the provider's envelope.
    #[error("{api:?} response at {pointer}: expected {expected}, found {found}")]
    Shape {
        /// The API read.
        api: WireApi,
        /// Where in the body.
        pointer: Pointer,
        /// What the envelope has there.
        expected: &'static str,
        /// What the body has there (shortened).
        found: String,
    },
    /// A stream that stopped before its final event, or an event that is not JSON.
    #[error("{api:?} stream: {problem}")]
    Stream {
        /// The API read.
        api: WireApi,
        /// What went wrong, with the event's position.
        problem: String,
    },
    /// The provider returned an error object instead of an answer.
    #[error("{api:?} returned an error: {message}")]
    ProviderError {
        /// The API read.
        api: WireApi,
        /// The provider's error type and message.
        message: String,
    },
}

//! A run's spans, in the OpenTelemetry GenAI semantic conventions' terms, on `tracing` (so
//! `tracing-opentelemetry` exports them as they are).
//!
//! - The run: a span named `structured {schema}` with `gen_ai.provider.name`,
//!   `gen_ai.request.model`, `structured.schema`, and at its end `structured.mode`,
//!   `structured.attempts`, `structured.provenance` (or `error.type`) and the run's
//!   `gen_ai.usage.input_tokens` / `gen_ai.usage.output_tokens`.
//! - Each request: a child span named `chat {model}` with `gen_ai.operation.name = "chat"`,
//!   `gen_ai.provider.name`, `gen_ai.request.model`, `gen_ai.request.max_tokens`, and at its end
//!   `gen_ai.usage.input_tokens` / `output_tokens`, `gen_ai.response.finish_reasons`,
//!   `structured.attempt`, `structured.result` (`accepted`, `invalid`, `no_json`, ...),
//!   `structured.provenance` and, when the answer is asked again, `structured.reask.reason`.
//!
//! The request and answer bodies (`gen_ai.input.messages`, `gen_ai.output.messages`) are
//! recorded only when the caller opts in ([`RunConfig::trace_bodies`](super::RunConfig)): they
//! hold the user's data.

use tracing::field::Empty;
use tracing::Span;

use super::ledger::{Attempt, AttemptResult};
use super::result::{RunError, Structured};
use crate::provider::capabilities::ProviderKind;
use crate::provider::wire::Usage;
use crate::read::mode::StructuredOutputMode;

/// `gen_ai.provider.name` for a kind: the conventions' well-known names where there is one.
pub(super) fn provider_name(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::OpenAiChat | ProviderKind::OpenAiResponses => "openai",
        ProviderKind::Anthropic => "anthropic",
        ProviderKind::Gemini => "gcp.gemini",
        other => other.name(),
    }
}

/// The span of one run.
pub(super) fn run_span(schema: &str, kind: ProviderKind, model: &str) -> Span {
    tracing::info_span!(
        "structured",
        "otel.name" = format!("structured {schema}"),
        "structured.schema" = schema,
        "gen_ai.provider.name" = provider_name(kind),
        "gen_ai.request.model" = model,
        "structured.mode" = Empty,
        "structured.attempts" = Empty,
        "structured.provenance" = Empty,
        "gen_ai.usage.input_tokens" = Empty,
        "gen_ai.usage.output_tokens" = Empty,
        "error.type" = Empty,
    )
}

/// The span of one request.
pub(super) fn attempt_span(
    kind: ProviderKind,
    model: &str,
    n: usize,
    mode: StructuredOutputMode,
    max_tokens: Option<u32>,
) -> Span {
    tracing::info_span!(
        "chat",
        "otel.name" = format!("chat {model}"),
        "gen_ai.operation.name" = "chat",
        "gen_ai.provider.name" = provider_name(kind),
        "gen_ai.request.model" = model,
        "gen_ai.request.max_tokens" = max_tokens,
        "structured.attempt" = n,
        "structured.mode" = ?mode,
        "structured.result" = Empty,
        "structured.provenance" = Empty,
        "structured.reask.reason" = Empty,
        "gen_ai.usage.input_tokens" = Empty,
        "gen_ai.usage.output_tokens" = Empty,
        "gen_ai.response.finish_reasons" = Empty,
        "gen_ai.input.messages" = Empty,
        "gen_ai.output.messages" = Empty,
    )
}

/// What one request came to, on its span: its result, usage and finish reason, the re-ask
/// reason when it is asked again, and (opted in) the bodies.
pub(super) fn record_attempt(
    span: &Span,
    attempt: &Attempt,
    finish_reason: Option<&str>,
    tool: Option<&str>,
    bodies: bool,
) {
    if span.is_disabled() {
        return;
    }
    span.record("structured.result", result_name(&attempt.result));
    if let AttemptResult::Accepted(provenance) = &attempt.result {
        span.record("structured.provenance", tracing::field::debug(provenance));
    } else if let Some(reason) = attempt.result.problem(tool) {
        span.record("structured.reask.reason", reason.as_str());
    }
    if let Some(usage) = attempt.usage {
        record_usage(span, usage);
    }
    if let Some(reason) = finish_reason {
        span.record("gen_ai.response.finish_reasons", reason);
    }
    if bodies {
        span.record("gen_ai.input.messages", attempt.sent.as_str());
        if let Some(received) = &attempt.received {
            span.record("gen_ai.output.messages", received.as_str());
        }
    }
}

/// How the run ended, on its span.
pub(super) fn record_run<T>(span: &Span, result: &Result<Structured<T>, RunError>) {
    if span.is_disabled() {
        return;
    }
    match result {
        Ok(out) => {
            span.record("structured.mode", tracing::field::debug(out.mode));
            span.record("structured.attempts", out.attempts);
            span.record(
                "structured.provenance",
                tracing::field::debug(out.provenance),
            );
            record_usage(span, out.usage());
        }
        Err(error) => {
            span.record("structured.attempts", error.ledger.len());
            span.record("error.type", error.kind.name());
            record_usage(span, error.usage());
        }
    }
}

fn record_usage(span: &Span, usage: Usage) {
    span.record("gen_ai.usage.input_tokens", usage.input_tokens);
    span.record("gen_ai.usage.output_tokens", usage.output_tokens);
}

fn result_name(result: &AttemptResult) -> &'static str {
    match result {
        AttemptResult::Accepted(_) => "accepted",
        AttemptResult::Invalid(_) => "invalid",
        AttemptResult::StreamStopped(_) => "stream_stopped",
        AttemptResult::NoJson(_) => "no_json",
        AttemptResult::PlainText => "plain_text",
        AttemptResult::ToolCalledWrongly(_) => "tool_called_wrongly",
        AttemptResult::CallerTools(_) => "caller_tools",
        AttemptResult::Stopped(_) => "stopped",
        AttemptResult::Transport(_) => "transport",
        AttemptResult::Codec(_) => "codec",
    }
}

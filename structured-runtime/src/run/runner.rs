//! The retry runner: ask, read, validate, re-ask with the errors, within a budget (seeds `001`,
//! `003`, `004`).
//!
//! Three budgets are kept apart. Validation re-asks (`max_retries`) are spent only on answers
//! that were read but do not fit. Transport retries (rate limits, 5xx, timeouts) back off and do
//! not touch it. Plain text where a tool call was required is re-asked a bounded number of times
//! of its own. A refusal, a filter or a truncation ends the run at once with its own error:
//! asking again the same way would only pay for the same answer.
//!
//! Every attempt is kept in the ledger (what was sent, what came back, what was wrong, the
//! tokens used), on success and on failure alike.

use std::future::Future;
use std::time::Duration;

use serde_json::Value;
use tracing::Instrument;

use crate::provider::capabilities::{
    capabilities, resolve_structured_output, ProviderCapabilities, ProviderKind,
};
use crate::provider::dialect::LowerReport;
use crate::provider::mode::StructuredOutputMode;
use crate::provider::wire::{build_body, ChatRequest, Turn};
use crate::provider::wire::{
    read_response, request_fragment, CodecError, Expect, Outcome, StructuredCandidate, Usage,
};
use crate::read::coerce::CoercePolicy;
use crate::read::parse::{
    parse_response_with, parse_value, ParseError, ParseOptions, Provenance, Warning,
};
use crate::run::config::StructuredOutputsConfig;
use crate::schema::output::StructuredOutput;
use crate::schema::validate::Violations;

/// A model endpoint: any HTTP client implements it in a few lines. The runner builds the body
/// and reads the answer; the provider only moves bytes and waits.
pub trait Provider {
    /// Which API the endpoint speaks.
    fn kind(&self) -> ProviderKind;
    /// The model asked.
    fn model(&self) -> &str;
    /// What the model supports; the built-in matrix unless the provider knows better.
    fn capabilities(&self) -> ProviderCapabilities {
        capabilities(self.kind(), self.model())
    }
    /// Sends one request body; the response body on a 2xx status.
    fn send(&self, body: Value) -> impl Future<Output = Result<String, TransportError>> + Send;
    /// Waits before a transport retry (the runner uses no timer of its own, so it runs on any
    /// async runtime).
    fn wait(&self, delay: Duration) -> impl Future<Output = ()> + Send;
}

/// A request that did not get a response body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// HTTP 429.
    #[error("rate limited{}", .retry_after.map(|d| format!(" (retry after {d:?})")).unwrap_or_default())]
    RateLimited {
        /// The provider's `retry-after`, if it sent one.
        retry_after: Option<Duration>,
    },
    /// HTTP 5xx (529 "overloaded" included).
    #[error("server error {status}: {body}")]
    Server {
        /// The status.
        status: u16,
        /// The body, shortened.
        body: String,
    },
    /// No answer in time.
    #[error("timed out")]
    Timeout,
    /// The connection failed or was cut.
    #[error("connection failed: {0}")]
    Connection(String),
    /// HTTP 4xx other than 429: the request itself is wrong, and sending it again will not help.
    #[error("request rejected with {status}: {body}")]
    Rejected {
        /// The status.
        status: u16,
        /// The body, shortened.
        body: String,
    },
}

impl TransportError {
    /// Worth sending again after a wait.
    pub fn is_retryable(&self) -> bool {
        !matches!(self, TransportError::Rejected { .. })
    }
}

/// What to do when every validation re-ask was spent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnExhausted {
    /// Fail with [`RunError::RetriesExhausted`] (the default).
    #[default]
    Fail,
    /// The seed's "retry once, then defaults with a warning": the type's defaults (each field
    /// from the last answer where it fits, its typed default otherwise), marked recovered.
    DefaultsWithWarning,
}

/// How a run is carried out.
#[derive(Debug, Clone, PartialEq)]
pub struct RunConfig {
    /// The seed's section: enabled, preference, validation, re-asks.
    pub outputs: StructuredOutputsConfig,
    /// What the pipeline may do to read an answer.
    pub parse: ParseOptions,
    /// Transport retries (rate limit, 5xx, timeout, connection), apart from re-asks.
    pub transport_retries: u32,
    /// The first transport backoff; doubled on each retry.
    pub backoff: Duration,
    /// Re-asks after plain text where a tool call was required.
    pub plain_text_retries: u32,
    /// After the last re-ask.
    pub on_exhausted: OnExhausted,
    /// Extended thinking is on (no forced tool on Anthropic).
    pub extended_thinking: bool,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            outputs: StructuredOutputsConfig::default(),
            parse: ParseOptions::default(),
            transport_retries: 3,
            backoff: Duration::from_millis(500),
            plain_text_retries: 2,
            on_exhausted: OnExhausted::Fail,
            extended_thinking: false,
        }
    }
}

/// What one attempt came to.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AttemptResult {
    /// A value was read and accepted.
    Accepted,
    /// An answer was read but does not fit: every violation.
    Invalid(Violations),
    /// No JSON (and no prose reading) in the answer.
    NoJson(String),
    /// Text where a tool call was required.
    PlainText,
    /// A tool called wrongly.
    ToolCalledWrongly(String),
    /// Refused, filtered or truncated (terminal).
    Stopped(String),
    /// The request got no response.
    Transport(TransportError),
    /// The response was not the provider's shape.
    Codec(CodecError),
}

/// One request and what came of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    /// The body sent.
    pub sent: Value,
    /// The body received, if any.
    pub received: Option<String>,
    /// What it came to.
    pub result: AttemptResult,
    /// Tokens, when the provider reported them.
    pub usage: Option<Usage>,
}

/// A value and how it was obtained.
#[derive(Debug, Clone, PartialEq)]
pub struct Structured<T> {
    /// The value.
    pub value: T,
    /// The mode the provider was asked in.
    pub mode: StructuredOutputMode,
    /// Requests made (transport retries included).
    pub attempts: usize,
    /// Every attempt.
    pub ledger: Vec<Attempt>,
    /// How the value was read from the accepted answer.
    pub provenance: Provenance,
    /// What was done to read it, and any policy fallback.
    pub warnings: Vec<Warning>,
}

/// A run that produced no value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The schema cannot be sent to this provider (before any request).
    #[error(transparent)]
    InvalidSchema(LowerReport),
    /// Every re-ask was spent: the last value read and every error, attempt by attempt.
    #[error("no valid answer after {} attempt(s); last errors: {}", .ledger.len(), .errors.last().map(String::as_str).unwrap_or("none"))]
    RetriesExhausted {
        /// The last value read (repaired and coerced), if any was.
        last_value: Option<Value>,
        /// What was wrong with each answer, in order.
        errors: Vec<String>,
        /// Every attempt.
        ledger: Vec<Attempt>,
    },
    /// The model refused.
    #[error("the model refused{}", .explanation.as_ref().map(|e| format!(": {e}")).unwrap_or_default())]
    Refused {
        /// The provider's explanation.
        explanation: Option<String>,
        /// The provider's category.
        category: Option<String>,
        /// Every attempt.
        ledger: Vec<Attempt>,
    },
    /// The answer was cut by the token limit.
    #[error("the answer was truncated ({reason})")]
    Truncated {
        /// What was written, if anything.
        partial: Option<String>,
        /// The provider's reason.
        reason: String,
        /// Every attempt.
        ledger: Vec<Attempt>,
    },
    /// A safety or content filter stopped the answer.
    #[error("the answer was filtered: {reason}")]
    Filtered {
        /// The provider's reason.
        reason: String,
        /// Every attempt.
        ledger: Vec<Attempt>,
    },
    /// No response after the transport retries, or a request the provider rejects.
    #[error("transport: {error}")]
    Transport {
        /// The last error.
        error: TransportError,
        /// Every attempt.
        ledger: Vec<Attempt>,
    },
    /// A response that is not the provider's shape.
    #[error("provider: {error}")]
    Provider {
        /// What was wrong with it.
        error: CodecError,
        /// Every attempt.
        ledger: Vec<Attempt>,
    },
}

impl RunError {
    /// Every attempt made before the run failed (empty when the schema was refused before any).
    pub fn ledger(&self) -> &[Attempt] {
        match self {
            RunError::InvalidSchema(_) => &[],
            RunError::RetriesExhausted { ledger, .. }
            | RunError::Refused { ledger, .. }
            | RunError::Truncated { ledger, .. }
            | RunError::Filtered { ledger, .. }
            | RunError::Transport { ledger, .. }
            | RunError::Provider { ledger, .. } => ledger,
        }
    }
}

/// Runs `request` against `provider` until a `T` validates or a budget runs out. The future is
/// `Send` when the provider's futures are, and runs on any executor. A `tracing` span covers
/// the run, and one each request.
pub async fn run_structured<T: StructuredOutput, P: Provider>(
    provider: &P,
    request: &ChatRequest,
    config: &RunConfig,
) -> Result<Structured<T>, RunError> {
    let span = tracing::debug_span!(
        "run_structured",
        schema = T::schema().name(),
        model = provider.model()
    );
    run::<T, P>(provider, request, config)
        .instrument(span)
        .await
}

async fn run<T: StructuredOutput, P: Provider>(
    provider: &P,
    request: &ChatRequest,
    config: &RunConfig,
) -> Result<Structured<T>, RunError> {
    let schema = T::schema();
    let caps = provider.capabilities();
    let mut profile = config.outputs.profile(schema);
    profile.extended_thinking = config.extended_thinking;
    let mode = resolve_structured_output(&profile, &caps);
    let fragment =
        request_fragment(provider.kind(), mode, schema, &caps).map_err(RunError::InvalidSchema)?;
    let expect = Expect {
        mode,
        tool_name: fragment.tool_name.clone(),
    };

    let mut ledger: Vec<Attempt> = Vec::new();
    let mut turns: Vec<Turn> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    // The last value read, with what was wrong with it.
    let mut last_value: Option<(Value, Violations)> = None;
    let (mut reasks, mut plain_texts, mut transport_failures) = (0u32, 0u32, 0u32);
    let reask_budget = if config.outputs.retry_on_validation_failure {
        config.outputs.max_retries
    } else {
        0
    };
    loop {
        let body = build_body(
            provider.kind(),
            provider.model(),
            request,
            &fragment,
            &turns,
        );
        tracing::debug!(attempt = ledger.len() + 1, "sending");
        let attempt_span = tracing::debug_span!("attempt", n = ledger.len() + 1, ?mode);
        let text = match provider.send(body.clone()).instrument(attempt_span).await {
            Ok(text) => text,
            Err(error) => {
                ledger.push(Attempt {
                    sent: body,
                    received: None,
                    result: AttemptResult::Transport(error.clone()),
                    usage: None,
                });
                if error.is_retryable() && transport_failures < config.transport_retries {
                    let delay = match &error {
                        TransportError::RateLimited {
                            retry_after: Some(d),
                        } => *d,
                        _ => config
                            .backoff
                            .saturating_mul(1 << transport_failures.min(16)),
                    };
                    transport_failures += 1;
                    tracing::debug!(?delay, %error, "transport retry");
                    provider.wait(delay).await;
                    continue;
                }
                return Err(RunError::Transport { error, ledger });
            }
        };
        let response = match read_response(provider.kind().wire_api(), &expect, &text) {
            Ok(r) => r,
            Err(error) => {
                ledger.push(Attempt {
                    sent: body,
                    received: Some(text),
                    result: AttemptResult::Codec(error.clone()),
                    usage: None,
                });
                return Err(RunError::Provider { error, ledger });
            }
        };
        let mut attempt = Attempt {
            sent: body,
            received: Some(text),
            result: AttemptResult::Accepted,
            usage: response.usage,
        };
        let candidate = match response.outcome {
            Outcome::Candidate(c) => c,
            Outcome::Refused {
                explanation,
                category,
            } => {
                attempt.result = AttemptResult::Stopped("refused".into());
                ledger.push(attempt);
                return Err(RunError::Refused {
                    explanation,
                    category,
                    ledger,
                });
            }
            Outcome::Truncated { partial, reason } => {
                attempt.result = AttemptResult::Stopped(format!("truncated: {reason}"));
                ledger.push(attempt);
                return Err(RunError::Truncated {
                    partial: partial.map(|p| p.text),
                    reason,
                    ledger,
                });
            }
            Outcome::Filtered { reason, .. } => {
                attempt.result = AttemptResult::Stopped(format!("filtered: {reason}"));
                ledger.push(attempt);
                return Err(RunError::Filtered { reason, ledger });
            }
            Outcome::NoStructuredOutput { text } => {
                attempt.result = AttemptResult::PlainText;
                ledger.push(attempt);
                let tool = expect.tool_name.as_deref().unwrap_or("the tool");
                let tool_mode = mode == StructuredOutputMode::ToolUseWorkaround;
                errors.push(if tool_mode {
                    format!("no structured output: expected a call to `{tool}`")
                } else {
                    "no structured output: the answer holds no text".to_owned()
                });
                if tool_mode && plain_texts < config.plain_text_retries {
                    plain_texts += 1;
                    turns.push(Turn::AssistantText(text.unwrap_or_default()));
                    turns.push(Turn::UserText(format!(
                        "Answer by calling the `{tool}` tool once, with arguments that match its schema. Do not answer in text."
                    )));
                    continue;
                }
                // An empty answer outside tool mode spends a validation re-ask like any other
                // answer that does not fit.
                if !tool_mode && reasks < reask_budget {
                    reasks += 1;
                    turns.push(Turn::UserText(
                        "Your answer was empty. Answer with the JSON value the schema describes."
                            .into(),
                    ));
                    continue;
                }
                return Err(exhausted(last_value, errors, ledger));
            }
            Outcome::ToolCalledWrongly { reason, .. } => {
                attempt.result = AttemptResult::ToolCalledWrongly(reason.clone());
                ledger.push(attempt);
                errors.push(reason.clone());
                if reasks < reask_budget {
                    reasks += 1;
                    let tool = expect.tool_name.as_deref().unwrap_or("the tool");
                    turns.push(Turn::UserText(format!(
                        "{reason}. Call only `{tool}`, once."
                    )));
                    continue;
                }
                return Err(exhausted(last_value, errors, ledger));
            }
        };
        let error = match parse_response_with::<T>(&candidate.text, mode, &config.parse) {
            Ok(parsed) => {
                ledger.push(attempt);
                tracing::debug!(attempts = ledger.len(), provenance = ?parsed.provenance, "accepted");
                return Ok(Structured {
                    value: parsed.value,
                    mode,
                    attempts: ledger.len(),
                    ledger,
                    provenance: parsed.provenance,
                    warnings: parsed.warnings,
                });
            }
            Err(ParseError::Truncated { .. }) => {
                attempt.result = AttemptResult::Stopped("truncated: the JSON ends early".into());
                ledger.push(attempt);
                return Err(RunError::Truncated {
                    partial: Some(candidate.text),
                    reason: "the JSON ends early".into(),
                    ledger,
                });
            }
            Err(ParseError::Invalid {
                violations, value, ..
            }) => {
                // Validation off: a value that deserializes is taken as it is, with a warning.
                if !config.outputs.validation {
                    if let Ok(v) = serde_json::from_value::<T>(value.clone()) {
                        ledger.push(attempt);
                        return Ok(Structured {
                            value: v,
                            mode,
                            attempts: ledger.len(),
                            ledger,
                            provenance: Provenance::Recovered,
                            warnings: vec![Warning::NotValidated {
                                violations: violations.to_string(),
                            }],
                        });
                    }
                }
                attempt.result = AttemptResult::Invalid(violations.clone());
                let error = violations.to_string();
                last_value = Some((value, violations));
                error
            }
            Err(other) => {
                attempt.result = AttemptResult::NoJson(other.to_string());
                other.to_string()
            }
        };
        ledger.push(attempt);
        errors.push(error);
        if reasks < reask_budget {
            reasks += 1;
            push_reask(
                &mut turns,
                &candidate,
                errors.last().map(String::as_str).unwrap_or_default(),
            );
            continue;
        }
        if config.on_exhausted == OnExhausted::DefaultsWithWarning {
            if let Some(value) = defaults::<T>(last_value.as_ref(), &config.parse) {
                tracing::warn!(schema = schema.name(), "retries exhausted: using defaults");
                let warnings = vec![Warning::Defaults {
                    attempts: ledger.len(),
                    errors: errors.clone(),
                }];
                return Ok(Structured {
                    value,
                    mode,
                    attempts: ledger.len(),
                    ledger,
                    provenance: Provenance::Recovered,
                    warnings,
                });
            }
        }
        return Err(exhausted(last_value, errors, ledger));
    }
}

/// The previous answer, then the correction naming every error with its path: a user message,
/// or in tool mode an error result for the tool call.
fn push_reask(turns: &mut Vec<Turn>, candidate: &StructuredCandidate, errors: &str) {
    let correction = format!(
        "Your answer does not match the required schema:\n{errors}\nAnswer again with every error fixed; change nothing else."
    );
    match &candidate.tool_call {
        Some(call) => {
            turns.push(Turn::AssistantToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
                input: candidate.text.clone(),
            });
            turns.push(Turn::ToolError {
                id: call.id.clone(),
                name: call.name.clone(),
                text: correction,
            });
        }
        None => {
            turns.push(Turn::AssistantText(candidate.text.clone()));
            turns.push(Turn::UserText(correction));
        }
    }
}

fn exhausted(
    last: Option<(Value, Violations)>,
    errors: Vec<String>,
    ledger: Vec<Attempt>,
) -> RunError {
    RunError::RetriesExhausted {
        last_value: last.map(|(value, _)| value),
        errors,
        ledger,
    }
}

/// The type's defaults: the last value with every field that broke a rule taken out, then
/// filled with typed defaults (the seed's missing-field recovery, forced on). `None` when a
/// field has no default that fits (an enum, or a range that excludes zero).
fn defaults<T: StructuredOutput>(
    last: Option<&(Value, Violations)>,
    options: &ParseOptions,
) -> Option<T> {
    let mut value = match last {
        Some((value, violations)) => {
            let mut value = value.clone();
            for v in violations.iter() {
                remove_at(&mut value, &v.path);
            }
            value
        }
        None => Value::Object(Default::default()),
    };
    if !value.is_object() {
        value = Value::Object(Default::default());
    }
    let policy = CoercePolicy {
        missing_to_default: true,
        null_to_default: true,
        ..options.coerce.clone()
    };
    let options = ParseOptions {
        coerce: policy,
        ..options.clone()
    };
    let parsed = parse_value(&value.to_string(), T::schema().schema(), &options).ok()?;
    T::from_json(&parsed.value.to_string()).ok()
}

/// Removes the member a JSON pointer names (the root is left alone).
fn remove_at(value: &mut Value, pointer: &str) {
    let Some((parent, key)) = pointer.rsplit_once('/') else {
        return;
    };
    let key = key.replace("~1", "/").replace("~0", "~");
    match value.pointer_mut(parent) {
        Some(Value::Object(map)) => {
            map.remove(&key);
        }
        Some(Value::Array(items)) => {
            if let Ok(i) = key.parse::<usize>() {
                if i < items.len() {
                    items.remove(i);
                }
            }
        }
        _ => {}
    }
}

//! The retry runner: ask, read, validate, re-ask with the errors, within budgets.
//!
//! Three budgets are kept apart. Validation re-asks (`max_retries`) are spent only on answers
//! that were read but do not fit. Transport retries (rate limits, 5xx, timeouts) back off and do
//! not touch it. Plain text where a tool call was required is re-asked a bounded number of times
//! of its own. A refusal, a filter or a truncation ends the run at once with its own error:
//! asking again the same way would only pay for the same answer.
//!
//! The run is a state machine: [`Run::ask`] builds a request, the provider sends it, and
//! [`Run::sent`] turns what came back into the next step (ask again, wait and send again, or
//! finish). Every attempt goes into the ledger (what was sent, what came back, what it came to,
//! the tokens used), on success and on failure alike, and a failed run's errors are read from
//! it.

use std::future::Future;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use serde_json::Value;
use tracing::Instrument;

use super::config::{OnExhausted, RunConfig};
use super::ledger::{Attempt, AttemptResult, Ledger, Stop};
use super::transport::{DynProvider, Provider, TransportError};
use crate::provider::cache::Fragment;
use crate::provider::capabilities::{resolve_mode, ProviderKind};
use crate::provider::dialect::{LowerReport, Reshape};
use crate::provider::wire::{
    body_text, fragment_body, read_response, sent_target, ChatRequest, CodecError, Expect, Outcome,
    ProviderResponse, StructuredCandidate, Turn, Usage,
};
use crate::read::coerce::{coerce, CoercePolicy};
use crate::read::from_text::{FromTextError, TextSource};
use crate::read::mode::StructuredOutputMode;
use crate::read::output::StructuredOutput;
use crate::read::parse::{
    parse_answer_reshaped, parse_answer_value_reshaped, Answer, ParseError, ParseOptions, Parsed,
    Provenance, Warning,
};
use crate::schema::response::ResponseSchema;
use crate::schema::Violations;
use std::marker::PhantomData;

mod streaming;
pub use streaming::{run_structured_stream, run_value_stream, StreamEvent};

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
    /// What the request could not ask of the provider (keywords it does not enforce, moved
    /// into descriptions: [`Warning::NotEnforcedByProvider`]); the value was checked for them.
    pub request_warnings: Vec<Warning>,
}

/// A run that produced no value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The schema cannot be sent to this provider (before any request).
    #[error(transparent)]
    InvalidSchema(LowerReport),
    /// The request holds something the provider cannot take (a PDF by URL for OpenAI, an image
    /// by URL for Gemini, a PDF for Ollama), refused before any request.
    #[error("{reason}")]
    UnsupportedInput {
        /// What and why.
        reason: String,
    },
    /// Structured output is off (`enabled = false`), so the answer is prose, and the type has
    /// no prose reader (before any request).
    #[error("structured output is disabled and `{schema}` has no prose reader: add #[fallback_keyword(..)] to its fields, or enable structured output")]
    NoProseReader {
        /// The schema's name.
        schema: String,
    },
    /// Every re-ask was spent on answers that held a value that does not fit: the last value
    /// read and every error, attempt by attempt.
    #[error("no valid answer after {} attempt(s); last errors: {}", .ledger.len(), .errors.last().map(String::as_str).unwrap_or("none"))]
    RetriesExhausted {
        /// The last value read (repaired and coerced).
        last_value: Value,
        /// What was wrong with each answer, in order (read from the ledger); when the fallback
        /// policy ([`OnExhausted::DefaultsWithWarning`]) was asked for and could not give a
        /// value, a last entry says so and why ([`FALLBACK_FAILED`]).
        errors: Vec<String>,
        /// Every attempt.
        ledger: Vec<Attempt>,
    },
    /// Every re-ask was spent and no answer held a value at all: plain text where a tool call
    /// was required, empty answers, or text with no JSON and nothing the prose reader could use.
    #[error("no structured output in {} attempt(s); last: {}", .ledger.len(), .errors.last().map(String::as_str).unwrap_or("none"))]
    NoStructuredOutput {
        /// What each answer was instead, in order (read from the ledger); when the fallback
        /// policy was asked for and could not give a value, a last entry says so and why
        /// ([`FALLBACK_FAILED`]).
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
    /// An agent step ([`crate::run::run_agent`]) used every step it had without a valid call of
    /// the structured-output tool.
    #[error("no final answer within {steps} steps")]
    StepBudget {
        /// The budget.
        steps: u32,
        /// Every attempt.
        ledger: Vec<Attempt>,
    },
    /// The run's deadline ([`RunConfig::deadline`]) passed: the request in flight, if any,
    /// was dropped (its attempt is in the ledger as a timeout).
    #[error("the run's deadline of {deadline:?} passed")]
    DeadlineExceeded {
        /// The deadline.
        deadline: Duration,
        /// Every attempt.
        ledger: Vec<Attempt>,
    },
}

impl<T> Structured<T> {
    /// Tokens over every attempt that reported them.
    pub fn usage(&self) -> Usage {
        total_usage(&self.ledger)
    }
}

/// Every attempt's usage, added up.
pub(crate) fn total_usage(ledger: &[Attempt]) -> Usage {
    ledger
        .iter()
        .filter_map(|a| a.usage)
        .fold(Usage::default(), Usage::plus)
}

impl RunError {
    /// Tokens spent before the run failed, over every attempt that reported them.
    pub fn usage(&self) -> Usage {
        total_usage(self.ledger())
    }

    /// The ledger, to add the attempts of earlier providers in a chain.
    fn ledger_mut(&mut self) -> Option<&mut Vec<Attempt>> {
        match self {
            RunError::InvalidSchema(_)
            | RunError::NoProseReader { .. }
            | RunError::UnsupportedInput { .. } => None,
            RunError::RetriesExhausted { ledger, .. }
            | RunError::NoStructuredOutput { ledger, .. }
            | RunError::Refused { ledger, .. }
            | RunError::Truncated { ledger, .. }
            | RunError::Filtered { ledger, .. }
            | RunError::Transport { ledger, .. }
            | RunError::Provider { ledger, .. }
            | RunError::DeadlineExceeded { ledger, .. }
            | RunError::StepBudget { ledger, .. } => Some(ledger),
        }
    }

    /// Every attempt made before the run failed (empty when the schema was refused before any).
    pub fn ledger(&self) -> &[Attempt] {
        match self {
            RunError::InvalidSchema(_)
            | RunError::NoProseReader { .. }
            | RunError::UnsupportedInput { .. } => &[],
            RunError::RetriesExhausted { ledger, .. }
            | RunError::NoStructuredOutput { ledger, .. }
            | RunError::Refused { ledger, .. }
            | RunError::Truncated { ledger, .. }
            | RunError::Filtered { ledger, .. }
            | RunError::Transport { ledger, .. }
            | RunError::Provider { ledger, .. }
            | RunError::DeadlineExceeded { ledger, .. }
            | RunError::StepBudget { ledger, .. } => ledger,
        }
    }
}

/// Runs `request` against `provider` until a `T` validates or a budget runs out. The future is
/// `Send` when the provider's futures are, and runs on any executor. A `tracing` span covers
/// the run, and one each request.
///
/// ```
/// # use std::future::Future;
/// # use std::time::Duration;
/// # use structured_runtime::provider::capabilities::ProviderKind;
/// # use structured_runtime::run::TransportError;
/// use structured_runtime::{run_structured, ChatRequest, Provenance, Provider, RunConfig, StructuredOutput};
///
/// #[derive(StructuredOutput, serde::Deserialize, Debug)]
/// struct Verdict {
///     #[enum_values("pass", "fail")]
///     outcome: String,
/// }
///
/// // Any HTTP client, or a test double that answers with a recorded body.
/// struct Recorded;
/// impl Provider for Recorded {
///     fn kind(&self) -> ProviderKind { ProviderKind::OpenAiChat }
///     fn model(&self) -> &str { "gpt-4o" }
///     fn send(&self, _: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
///         async { Ok(r#"{"choices": [{"index": 0, "finish_reason": "stop",
///             "message": {"role": "assistant", "content": "{\"outcome\": \"pass\"}"}}]}"#.to_owned()) }
///     }
///     async fn wait(&self, _: Duration) {}
/// }
///
/// # fn block_on<F: Future>(f: F) -> F::Output {
/// #     let mut f = std::pin::pin!(f);
/// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
/// # }
/// let out = block_on(run_structured::<Verdict, _>(
///     &Recorded,
///     &ChatRequest::user("Did the build pass?"),
///     &RunConfig::default(),
/// )).unwrap();
/// assert_eq!(out.value.outcome, "pass");
/// assert_eq!((out.provenance, out.attempts), (Provenance::Clean, 1));
/// ```
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
    drive(
        Typed::<T>(PhantomData),
        T::schema(),
        provider,
        request,
        config,
    )
    .instrument(span)
    .await
}

/// [`run_structured`] for a schema given at run time (an API request's, an MCP tool's, a config
/// file's): the answer is read, fitted and checked against `schema` by its validator of record,
/// with the same modes, budgets, ledger and errors, and returned as a `serde_json::Value`.
///
/// ```
/// # use std::future::Future;
/// # use std::time::Duration;
/// # use structured_runtime::provider::capabilities::ProviderKind;
/// # use structured_runtime::run::{run_value, TransportError};
/// # use structured_runtime::{ChatRequest, Provider, ResponseSchema, RunConfig};
/// # struct Recorded;
/// # impl Provider for Recorded {
/// #     fn kind(&self) -> ProviderKind { ProviderKind::OpenAiChat }
/// #     fn model(&self) -> &str { "gpt-4o" }
/// #     fn send(&self, _: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
/// #         async { Ok(r#"{"choices": [{"index": 0, "finish_reason": "stop",
/// #             "message": {"role": "assistant", "content": "{\"city\": \"Oslo\", \"days\": 3}"}}]}"#.to_owned()) }
/// #     }
/// #     async fn wait(&self, _: Duration) {}
/// # }
/// # fn block_on<F: Future>(f: F) -> F::Output {
/// #     let mut f = std::pin::pin!(f);
/// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
/// # }
/// let schema = ResponseSchema::new("trip", serde_json::json!({
///     "type": "object",
///     "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
///     "required": ["city", "days"], "additionalProperties": false
/// }))?;
/// let out = block_on(run_value(&Recorded, &schema, &ChatRequest::user("Plan a trip."), &RunConfig::default())).unwrap();
/// assert_eq!(out.value, serde_json::json!({"city": "Oslo", "days": 3}));
/// # Ok::<(), structured_runtime::SchemaError>(())
/// ```
pub async fn run_value<P: Provider>(
    provider: &P,
    schema: &ResponseSchema,
    request: &ChatRequest,
    config: &RunConfig,
) -> Result<Structured<Value>, RunError> {
    let span = tracing::debug_span!(
        "run_value",
        schema = schema.name(),
        model = provider.model()
    );
    drive(Untyped(schema), schema, provider, request, config)
        .instrument(span)
        .await
}

/// [`run_structured`] against each provider in turn: the next is asked when one gives no
/// response (a transport error after its retries) or refuses; any other outcome ends the run.
/// Every attempt of every provider is in the ledger, in order, and the run's deadline covers the
/// whole chain. A provider whose schema or input it cannot take is skipped like one that
/// failed.
///
/// ```
/// # use std::future::Future;
/// # use std::time::Duration;
/// # use structured_runtime::provider::capabilities::ProviderKind;
/// # use structured_runtime::run::{run_with_fallback, DynProvider, TransportError};
/// # use structured_runtime::{ChatRequest, Provider, RunConfig, StructuredOutput};
/// # struct Down;
/// # impl Provider for Down {
/// #     fn kind(&self) -> ProviderKind { ProviderKind::OpenAiChat }
/// #     fn model(&self) -> &str { "gpt-4o" }
/// #     fn send(&self, _: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
/// #         async { Err(TransportError::Connection("refused".into())) }
/// #     }
/// #     async fn wait(&self, _: Duration) {}
/// # }
/// # struct Up;
/// # impl Provider for Up {
/// #     fn kind(&self) -> ProviderKind { ProviderKind::OpenAiChat }
/// #     fn model(&self) -> &str { "gpt-4o-mini" }
/// #     fn send(&self, _: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
/// #         async { Ok(r#"{"choices": [{"index": 0, "finish_reason": "stop",
/// #             "message": {"role": "assistant", "content": "{\"ok\": true}"}}]}"#.to_owned()) }
/// #     }
/// #     async fn wait(&self, _: Duration) {}
/// # }
/// # fn block_on<F: Future>(f: F) -> F::Output {
/// #     let mut f = std::pin::pin!(f);
/// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
/// # }
/// #[derive(StructuredOutput, serde::Deserialize, Debug)]
/// struct Answer { ok: bool }
///
/// let chain: Vec<Box<dyn DynProvider>> = vec![Box::new(Down), Box::new(Up)];
/// let out = block_on(run_with_fallback::<Answer>(&chain, &ChatRequest::user("On?"), &RunConfig::default())).unwrap();
/// assert!(out.value.ok);
/// assert_eq!(out.attempts, 5, "four to the provider that was down, one to the next");
/// ```
pub async fn run_with_fallback<T: StructuredOutput>(
    providers: &[Box<dyn DynProvider>],
    request: &ChatRequest,
    config: &RunConfig,
) -> Result<Structured<T>, RunError> {
    let started = Instant::now();
    let mut earlier: Vec<Attempt> = Vec::new();
    let mut last = None;
    for provider in providers {
        let mut config = config.clone();
        if let Some(deadline) = config.deadline {
            config.deadline = Some(deadline.saturating_sub(started.elapsed()));
        }
        match run_structured::<T, _>(provider, request, &config).await {
            Ok(mut out) => {
                earlier.append(&mut out.ledger);
                out.ledger = earlier;
                out.attempts = out.ledger.len();
                return Ok(out);
            }
            Err(mut error) => {
                let move_on = matches!(
                    error,
                    RunError::Transport { .. }
                        | RunError::Refused { .. }
                        | RunError::InvalidSchema(_)
                        | RunError::UnsupportedInput { .. }
                );
                if let Some(ledger) = error.ledger_mut() {
                    earlier.append(ledger);
                }
                if !move_on {
                    if let Some(ledger) = error.ledger_mut() {
                        *ledger = earlier;
                    }
                    return Err(error);
                }
                last = Some(error);
            }
        }
    }
    match last {
        Some(mut error) => {
            if let Some(ledger) = error.ledger_mut() {
                *ledger = earlier;
            }
            Err(error)
        }
        None => Err(RunError::NoStructuredOutput {
            errors: vec!["no provider to ask".into()],
            ledger: Vec::new(),
        }),
    }
}

async fn drive<'r, G: Goal, P: Provider>(
    goal: G,
    schema: &'r ResponseSchema,
    provider: &'r P,
    request: &'r ChatRequest,
    config: &'r RunConfig,
) -> Result<Structured<G::Out>, RunError> {
    let mut run = Run::start(goal, schema, provider, request, config)?;
    let started = Instant::now();
    let left = || config.deadline.map(|d| d.saturating_sub(started.elapsed()));
    loop {
        let body = run.ask();
        let attempt_span =
            tracing::debug_span!("attempt", n = run.ledger.attempts.len() + 1, mode = ?run.mode);
        let send = provider.send(&body).instrument(attempt_span);
        let sent = match left() {
            None => Some(send.await),
            Some(left) => first(send, || provider.wait(left)).await,
        };
        let next = match sent {
            Some(sent) => run.sent(body, sent),
            None => run.deadline_passed(body),
        };
        match next {
            Next::Ask => {}
            Next::Wait(delay) => match left() {
                Some(left) if delay >= left => {
                    provider.wait(left).await;
                    return Err(run.deadline_passed_waiting());
                }
                _ => provider.wait(delay).await,
            },
            Next::Done(result) => return *result,
        }
    }
}

/// The output of `work`, or `None` when the timer ends first. The timer is made only if `work`
/// is not done at its first poll (a provider that answers at once never starts one). Polls
/// only the futures it is given, so it runs on any executor: the provider's own `wait` is the
/// timer.
async fn first<F: Future, W: Future<Output = ()>>(
    work: F,
    timer: impl FnOnce() -> W,
) -> Option<F::Output> {
    let mut work = std::pin::pin!(work);
    let mut make = Some(timer);
    let mut timer = std::pin::pin!(None::<W>);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(out) = work.as_mut().poll(cx) {
            return Poll::Ready(Some(out));
        }
        if let Some(make) = make.take() {
            timer.set(Some(make()));
        }
        match timer.as_mut().as_pin_mut().map(|t| t.poll(cx)) {
            Some(Poll::Ready(())) => Poll::Ready(None),
            _ => Poll::Pending,
        }
    })
    .await
}

/// Thinking budget sent to Anthropic when [`RunConfig::extended_thinking`] is on and the
/// request does not set its own.
const THINKING_BUDGET: u32 = 1024;

/// Whether the request's own fields turn extended thinking on (`"thinking": {"type":
/// "enabled", ..}`).
fn asks_thinking(extra: &Value) -> bool {
    extra
        .get("thinking")
        .and_then(|t| t.get("type"))
        .and_then(Value::as_str)
        .is_some_and(|t| t != "disabled")
}

/// The caller's request with what the run adds: its `max_tokens` when the request names none,
/// and, for Anthropic with extended thinking on, the `thinking` field (a budget below the limit).
fn completed<'r>(
    request: &'r ChatRequest,
    config: &RunConfig,
    kind: ProviderKind,
) -> std::borrow::Cow<'r, ChatRequest> {
    let limit = request
        .max_tokens
        .is_none()
        .then_some(config.max_tokens)
        .flatten();
    let thinking = config.extended_thinking
        && kind == ProviderKind::Anthropic
        && request.extra.get("thinking").is_none();
    if limit.is_none() && !thinking && config.sampling.is_none() {
        return std::borrow::Cow::Borrowed(request);
    }
    let mut owned = request.clone();
    if let Some(sampling) = &config.sampling {
        // The caller's own fields win over the configured sampling.
        let mut extra = sampling.clone();
        crate::provider::wire::merge(&mut extra, &owned.extra);
        owned.extra = extra;
    }
    if limit.is_some() {
        owned.max_tokens = limit;
    }
    if thinking {
        let max = owned.max_tokens.unwrap_or(4096).max(THINKING_BUDGET + 1024);
        owned.max_tokens = Some(max);
        if let Value::Object(extra) = &mut owned.extra {
            extra.insert(
                "thinking".into(),
                serde_json::json!({"type": "enabled", "budget_tokens": THINKING_BUDGET}),
            );
        }
    }
    std::borrow::Cow::Owned(owned)
}

/// What a run reads an answer into: a derived type, or a value for a schema given at run time.
trait Goal {
    type Out;
    /// The answer read, as the parse options allow.
    fn parse(
        &self,
        answer: &Answer,
        mode: StructuredOutputMode,
        options: &ParseOptions,
        reshape: &Reshape,
    ) -> Result<Parsed<Self::Out>, ParseError>;
    /// A value taken without its rules (validation off), when it has the right shape.
    fn unchecked(&self, value: &Value) -> Option<Self::Out>;
    /// A value that keeps every rule.
    fn checked(&self, value: &Value) -> Option<Self::Out>;
    /// The value read from prose by the type's keywords, with a warning per field that took
    /// its declared default; `None` without a prose reader.
    fn read_prose(&self, text: &str) -> Option<(Self::Out, Vec<Warning>)>;
    /// Whether prose can be read at all.
    fn reads_prose(&self) -> bool;
}

struct Typed<T>(PhantomData<fn() -> T>);

impl<T: StructuredOutput> Goal for Typed<T> {
    type Out = T;
    fn parse(
        &self,
        answer: &Answer,
        mode: StructuredOutputMode,
        options: &ParseOptions,
        reshape: &Reshape,
    ) -> Result<Parsed<T>, ParseError> {
        parse_answer_reshaped::<T>(answer, mode, options, reshape)
    }
    fn unchecked(&self, value: &Value) -> Option<T> {
        T::deserialize(value).ok()
    }
    fn checked(&self, value: &Value) -> Option<T> {
        T::from_value(value).ok()
    }
    fn read_prose(&self, text: &str) -> Option<(T, Vec<Warning>)> {
        let read = T::from_text(text).ok()?;
        let defaulted = read
            .report
            .fields()
            .iter()
            .filter_map(|f| match &f.source {
                TextSource::Default { reason } => Some(Warning::FromText {
                    field: f.field.clone(),
                    reason: format!(
                        "not read from the answer ({reason:?}); its declared default was used"
                    ),
                }),
                _ => None,
            })
            .collect();
        Some((read.value, defaulted))
    }
    fn reads_prose(&self) -> bool {
        !matches!(T::from_text(""), Err(FromTextError::NotSupported { .. }))
    }
}

struct Untyped<'s>(&'s ResponseSchema);

impl Goal for Untyped<'_> {
    type Out = Value;
    fn parse(
        &self,
        answer: &Answer,
        mode: StructuredOutputMode,
        options: &ParseOptions,
        reshape: &Reshape,
    ) -> Result<Parsed<Value>, ParseError> {
        parse_answer_value_reshaped(answer, self.0, mode, options, reshape)
    }
    fn unchecked(&self, value: &Value) -> Option<Value> {
        Some(value.clone())
    }
    fn checked(&self, value: &Value) -> Option<Value> {
        self.0.check_instance(value).is_ok().then(|| value.clone())
    }
    fn read_prose(&self, _: &str) -> Option<(Value, Vec<Warning>)> {
        None
    }
    fn reads_prose(&self) -> bool {
        false
    }
}

/// What the run does after an attempt.
enum Next<T> {
    /// Send the next request now.
    Ask,
    /// Wait, then send the same request again (a transport retry).
    Wait(Duration),
    /// Finish.
    Done(Box<Result<Structured<T>, RunError>>),
}

/// The state of one run: what is asked and how, what was said so far, and what is left of each
/// budget.
struct Run<'r, G: Goal> {
    /// What the answer is read into.
    goal: G,
    schema: &'r ResponseSchema,
    config: &'r RunConfig,
    /// The caller's request, with the run's `max_tokens` when it names none.
    request: std::borrow::Cow<'r, ChatRequest>,
    kind: ProviderKind,
    model: &'r str,
    mode: StructuredOutputMode,
    /// What the mode adds to every request: fields (built once per schema and kept on it) and
    /// system text.
    fragment: Arc<Fragment>,
    system: Option<&'r str>,
    expect: Expect,
    /// The turns re-asks added after the caller's messages.
    turns: Vec<Turn>,
    ledger: Ledger,
    /// The last value read, with what was wrong with it.
    last_value: Option<(Value, Violations)>,
    reasks: u32,
    plain_texts: u32,
    transport_failures: u32,
    /// The request's own warnings: keywords the provider was not asked to enforce, or
    /// does not enforce, and limits a grammar added.
    not_enforced: Vec<Warning>,
    /// How the schema sent differs in shape from the schema (answers are read back from it).
    reshape: &'r Reshape,
    /// The schema as sent, when it differs in shape ([`Run::reshape`]): what a streamed answer
    /// is read against while it arrives.
    sent_schema: Option<&'r Value>,
}

impl<'r, G: Goal> Run<'r, G> {
    /// The mode for this provider, and the request fragment for it (the schema lowered once
    /// per target and kept).
    fn start<P: Provider>(
        goal: G,
        schema: &'r ResponseSchema,
        provider: &'r P,
        request: &'r ChatRequest,
        config: &'r RunConfig,
    ) -> Result<Self, RunError> {
        let caps = config
            .capabilities
            .get(provider.kind(), provider.model())
            .unwrap_or_else(|| provider.capabilities());
        // Thinking asked in the request's own fields counts as much as the config's flag (a
        // forced tool cannot go with it on Anthropic), and the flag turns it on on the wire.
        let thinking = config.extended_thinking || asks_thinking(&request.extra);
        let mode = resolve_mode(
            config.outputs.enabled,
            config.outputs.prefer_schema_enforcement,
            thinking,
            &caps,
        );
        let refused = request
            .messages
            .iter()
            .flat_map(|m| &m.attachments)
            .find_map(|a| a.refused_by(provider.kind()));
        if let Some(reason) = refused {
            return Err(RunError::UnsupportedInput { reason });
        }
        // Tools in the request's own fields would replace the structured-output tool while the
        // choice still names it: the caller's tools go through `run_agent`.
        let clash = ["tools", "tool_choice", "toolConfig"]
            .into_iter()
            .find(|k| request.extra.get(k).is_some());
        if let (StructuredOutputMode::ToolUseWorkaround, Some(key)) = (mode, clash) {
            return Err(RunError::UnsupportedInput {
                reason: format!(
                    "`{key}` in the request's extra fields would replace the structured-output tool: offer your tools with run_agent"
                ),
            });
        }
        if mode == StructuredOutputMode::None && !goal.reads_prose() {
            return Err(RunError::NoProseReader {
                schema: schema.name().to_owned(),
            });
        }
        let constraint = config.constraint(request.max_tokens.or(config.max_tokens));
        let fragment = fragment_body(provider.kind(), mode, schema, &caps, &constraint)
            .map_err(RunError::InvalidSchema)?;
        // What the request leaves to local checks, said with the value.
        let target = sent_target(&caps, schema);
        let not_enforced: Vec<Warning> = match mode {
            _ if constraint.sends_grammar(provider.kind(), mode) => fragment
                .grammar_limits
                .as_ref()
                .filter(|(unenforced, budgets)| !unenforced.is_empty() || !budgets.is_empty())
                .map(|(unenforced, budgets)| Warning::GrammarLimits {
                    unenforced: unenforced.clone(),
                    budgets: budgets.clone(),
                })
                .into_iter()
                .collect(),
            StructuredOutputMode::SchemaEnforced | StructuredOutputMode::ToolUseWorkaround => {
                let moved = schema
                    .moved(target)
                    .ok()
                    .filter(|m| !m.is_empty())
                    .map(|moved| Warning::NotEnforcedByProvider {
                        target,
                        moved: moved.to_vec(),
                    });
                let kept = schema
                    .kept(target)
                    .ok()
                    .filter(|k| !k.is_empty())
                    .map(|kept| Warning::SentNotEnforced {
                        target,
                        kept: kept.to_vec(),
                    });
                moved.into_iter().chain(kept).collect()
            }
            _ => Vec::new(),
        };
        // The lowered schema is sent only when the provider is held to it; the guidance of the
        // other modes describes the schema as written.
        static AS_WRITTEN: Reshape = Reshape::as_written();
        let reshape = match mode {
            StructuredOutputMode::SchemaEnforced | StructuredOutputMode::ToolUseWorkaround => {
                schema.reshape(target).unwrap_or(&AS_WRITTEN)
            }
            _ => &AS_WRITTEN,
        };
        let sent_schema = (!reshape.is_empty())
            .then(|| schema.lowered(target).ok())
            .flatten();
        let system = (mode == StructuredOutputMode::PromptGuided).then(|| schema.prompt_guidance());
        let tool_name =
            (mode == StructuredOutputMode::ToolUseWorkaround).then(|| schema.name().to_owned());
        let expect = Expect {
            mode,
            tool_name: tool_name.clone(),
        };
        Ok(Run {
            goal,
            schema,
            config,
            request: completed(request, config, provider.kind()),
            kind: provider.kind(),
            model: provider.model(),
            mode,
            ledger: Ledger {
                attempts: Vec::new(),
                tool: tool_name,
            },
            fragment,
            system,
            expect,
            turns: Vec::new(),
            last_value: None,
            reasks: 0,
            plain_texts: 0,
            transport_failures: 0,
            not_enforced,
            reshape,
            sent_schema,
        })
    }

    /// The body of the next request.
    fn ask(&self) -> String {
        tracing::debug!(attempt = self.ledger.attempts.len() + 1, "sending");
        body_text(
            self.kind,
            self.model,
            &self.request,
            self.system,
            &self.fragment,
            &self.turns,
        )
    }

    fn reask_budget(&self) -> u32 {
        if self.config.outputs.retry_on_validation_failure {
            self.config.outputs.max_retries
        } else {
            0
        }
    }

    fn record(
        &mut self,
        sent: String,
        received: Option<String>,
        result: AttemptResult,
        usage: Option<Usage>,
    ) {
        self.ledger.attempts.push(Attempt {
            model: self.model.to_owned(),
            sent,
            received,
            result,
            usage,
        });
    }

    fn ledger(&mut self) -> Vec<Attempt> {
        std::mem::take(&mut self.ledger.attempts)
    }

    /// What comes after a request: the transport's result read, judged and recorded.
    fn sent(&mut self, body: String, sent: Result<String, TransportError>) -> Next<G::Out> {
        let text = match sent {
            Ok(text) => text,
            Err(error) => return self.transport_failed(body, error),
        };
        let response = read_response(self.kind.wire_api(), &self.expect, &text);
        self.responded(body, text, response)
    }

    /// What comes after a response body (`text`, as received) read into `response`.
    fn responded(
        &mut self,
        body: String,
        text: String,
        response: Result<ProviderResponse, CodecError>,
    ) -> Next<G::Out> {
        let response = match response {
            Ok(r) => r,
            Err(error) => {
                self.record(body, Some(text), AttemptResult::Codec(error.clone()), None);
                let ledger = self.ledger();
                return done(Err(RunError::Provider { error, ledger }));
            }
        };
        let usage = response.usage;
        match response.outcome {
            Outcome::Candidate(candidate) => self.answered(body, text, usage, candidate),
            Outcome::Refused {
                explanation,
                category,
            } => {
                self.record(
                    body,
                    Some(text),
                    AttemptResult::Stopped(Stop::Refused),
                    usage,
                );
                let ledger = self.ledger();
                done(Err(RunError::Refused {
                    explanation,
                    category,
                    ledger,
                }))
            }
            Outcome::Truncated { partial, reason } => {
                let stop = Stop::Truncated(reason.clone());
                self.record(body, Some(text), AttemptResult::Stopped(stop), usage);
                let ledger = self.ledger();
                done(Err(RunError::Truncated {
                    partial: partial.map(|p| p.answer.to_text().into_owned()),
                    reason,
                    ledger,
                }))
            }
            Outcome::Filtered { reason, .. } => {
                let stop = Stop::Filtered(reason.clone());
                self.record(body, Some(text), AttemptResult::Stopped(stop), usage);
                let ledger = self.ledger();
                done(Err(RunError::Filtered { reason, ledger }))
            }
            Outcome::NoStructuredOutput { text: said } => {
                self.record(body, Some(text), AttemptResult::PlainText, usage);
                self.no_structured_output(said)
            }
            Outcome::ToolCalledWrongly { reason, .. } => {
                let result = AttemptResult::ToolCalledWrongly(reason.clone());
                self.record(body, Some(text), result, usage);
                if self.reasks < self.reask_budget() {
                    self.reasks += 1;
                    let tool = self.expect.tool_name.as_deref().unwrap_or("the tool");
                    self.turns.push(Turn::UserText(format!(
                        "{reason}. Call only `{tool}`, once."
                    )));
                    return Next::Ask;
                }
                match self.fallback(None) {
                    Ok(next) => next,
                    Err(why) => self.exhausted(why),
                }
            }
        }
    }

    /// No response: wait and send again while the transport budget lasts.
    fn transport_failed(&mut self, body: String, error: TransportError) -> Next<G::Out> {
        self.record(body, None, AttemptResult::Transport(error.clone()), None);
        if error.is_retryable() && self.transport_failures < self.config.transport_retries {
            let delay = match &error {
                // A server that asks for a longer wait than the run allows is not waited for.
                TransportError::RateLimited {
                    retry_after: Some(d),
                } if *d > self.config.max_wait => {
                    let ledger = self.ledger();
                    return done(Err(RunError::Transport { error, ledger }));
                }
                TransportError::RateLimited {
                    retry_after: Some(d),
                } => *d,
                _ => self
                    .config
                    .backoff
                    .saturating_mul(1 << self.transport_failures.min(16))
                    .min(self.config.max_wait),
            };
            self.transport_failures += 1;
            tracing::debug!(?delay, %error, "transport retry");
            return Next::Wait(delay);
        }
        let ledger = self.ledger();
        done(Err(RunError::Transport { error, ledger }))
    }

    /// The deadline passed while `body` was in flight: the attempt is recorded as a timeout.
    fn deadline_passed(&mut self, body: String) -> Next<G::Out> {
        self.record(
            body,
            None,
            AttemptResult::Transport(TransportError::Timeout),
            None,
        );
        done(Err(self.deadline_exceeded()))
    }

    /// The deadline falls within the wait before a transport retry: a rate limit ends as the
    /// rate limit it is (its `retry-after` kept), any other failure as the deadline.
    fn deadline_passed_waiting(&mut self) -> RunError {
        let last = self.ledger.attempts.last().map(|a| &a.result);
        if let Some(AttemptResult::Transport(error @ TransportError::RateLimited { .. })) = last {
            let error = error.clone();
            let ledger = self.ledger();
            return RunError::Transport { error, ledger };
        }
        self.deadline_exceeded()
    }

    fn deadline_exceeded(&mut self) -> RunError {
        let ledger = self.ledger();
        let deadline = self.config.deadline.unwrap_or_default();
        RunError::DeadlineExceeded { deadline, ledger }
    }

    /// Plain text where a tool call was required, or no text at all.
    fn no_structured_output(&mut self, said: Option<String>) -> Next<G::Out> {
        let tool_mode = self.mode == StructuredOutputMode::ToolUseWorkaround;
        if tool_mode && self.plain_texts < self.config.plain_text_retries {
            self.plain_texts += 1;
            let tool = self.expect.tool_name.as_deref().unwrap_or("the tool");
            let correction = format!(
                "Answer by calling the `{tool}` tool once, with arguments that match its schema. Do not answer in text."
            );
            self.turns
                .push(Turn::AssistantText(said.unwrap_or_default()));
            self.turns.push(Turn::UserText(correction));
            return Next::Ask;
        }
        // An empty answer outside tool mode spends a validation re-ask like any other answer
        // that does not fit.
        if !tool_mode && self.reasks < self.reask_budget() {
            self.reasks += 1;
            let ask = if self.schema.markdown().is_some() {
                "Your answer was empty. Answer as instructed."
            } else {
                "Your answer was empty. Answer with the JSON value the schema describes."
            };
            self.turns.push(Turn::UserText(ask.into()));
            return Next::Ask;
        }
        match self.fallback(said.as_deref()) {
            Ok(next) => next,
            Err(why) => self.exhausted(why),
        }
    }

    /// The fallback policy, when every re-ask is spent ([`OnExhausted::DefaultsWithWarning`]):
    /// the last value with each field that broke a rule taken out and typed defaults filled in;
    /// failing that (an enum has no typed default, or there was no JSON), the type's prose reader
    /// on the last answer, with the defaults its fields declare (`#[fallback_keyword(default =
    /// ..)]`). Either way the value is marked recovered and each defaulted field is named.
    pub(super) fn fallback(&mut self, said: Option<&str>) -> Result<Next<G::Out>, Option<String>> {
        if self.config.outputs.on_exhausted != OnExhausted::DefaultsWithWarning {
            return Err(None);
        }
        let policy = &self.config.parse.coerce;
        let mut warnings = vec![Warning::Defaults {
            attempts: self.ledger.attempts.len(),
            errors: self.ledger.errors(),
        }];
        let value = match defaults(&self.goal, self.schema, self.last_value.as_ref(), policy) {
            Some(value) => value,
            None => {
                let Some((value, defaulted)) = self.goal.read_prose(said.unwrap_or_default())
                else {
                    return Err(Some(
                        "no typed default fits the last value (a field the schema gives no default, such as a required enum) and the last answer held nothing the type's prose reader could use".into(),
                    ));
                };
                warnings.extend(defaulted);
                value
            }
        };
        tracing::warn!(
            schema = self.schema.name(),
            "retries exhausted: using defaults"
        );
        let ledger = self.ledger();
        Ok(done(Ok(Structured {
            value,
            mode: self.mode,
            attempts: ledger.len(),
            ledger,
            provenance: Provenance::Recovered,
            warnings,
            request_warnings: self.not_enforced.clone(),
        })))
    }

    /// An answer to read.
    fn answered(
        &mut self,
        body: String,
        text: String,
        usage: Option<Usage>,
        candidate: StructuredCandidate,
    ) -> Next<G::Out> {
        let parsed = self.goal.parse(
            &candidate.answer,
            self.mode,
            &self.config.parse,
            self.reshape,
        );
        // Kept for the fallback policy's prose reading, only when it may be used.
        let candidate_text = (self.config.outputs.on_exhausted == OnExhausted::DefaultsWithWarning)
            .then(|| candidate.answer.to_text().into_owned());
        let result = match parsed {
            Ok(parsed) => {
                let result = AttemptResult::Accepted(parsed.provenance);
                self.record(body, Some(text), result, usage);
                tracing::debug!(attempts = self.ledger.attempts.len(), provenance = ?parsed.provenance, "accepted");
                let ledger = self.ledger();
                return done(Ok(Structured {
                    value: parsed.value,
                    mode: self.mode,
                    attempts: ledger.len(),
                    ledger,
                    provenance: parsed.provenance,
                    warnings: parsed.warnings,
                    request_warnings: self.not_enforced.clone(),
                }));
            }
            Err(ParseError::Truncated { .. }) => {
                let reason = "the JSON ends early".to_owned();
                let stop = AttemptResult::Stopped(Stop::Truncated(reason.clone()));
                self.record(body, Some(text), stop, usage);
                let ledger = self.ledger();
                return done(Err(RunError::Truncated {
                    partial: Some(candidate.answer.to_text().into_owned()),
                    reason,
                    ledger,
                }));
            }
            Err(ParseError::Invalid {
                violations, value, ..
            }) => {
                // Validation off: a value that deserializes is taken as it is, with a warning.
                if !self.config.outputs.validation {
                    if let Some(v) = self.goal.unchecked(&value) {
                        let result = AttemptResult::Accepted(Provenance::Recovered);
                        self.record(body, Some(text), result, usage);
                        let ledger = self.ledger();
                        return done(Ok(Structured {
                            value: v,
                            mode: self.mode,
                            attempts: ledger.len(),
                            ledger,
                            provenance: Provenance::Recovered,
                            warnings: vec![Warning::NotValidated {
                                violations: violations.to_string(),
                            }],
                            request_warnings: self.not_enforced.clone(),
                        }));
                    }
                }
                let result = AttemptResult::Invalid(violations.clone());
                self.last_value = Some((value, violations));
                result
            }
            Err(other) => AttemptResult::NoJson(other),
        };
        // The model is told what it can fix; a developer's hint (how to read prose) stays in
        // the ledger.
        let problem = match &result {
            AttemptResult::NoJson(ParseError::NotFound { .. }) => {
                "the answer holds no JSON value".to_owned()
            }
            other => other
                .problem(self.ledger.tool.as_deref())
                .unwrap_or_default(),
        };
        self.record(body, Some(text), result, usage);
        if self.reasks < self.reask_budget() {
            self.reasks += 1;
            push_reask(
                &mut self.turns,
                candidate,
                &problem,
                self.config.max_echo_bytes,
            );
            return Next::Ask;
        }
        let said = candidate_text.as_deref();
        match self.fallback(said) {
            Ok(next) => next,
            Err(why) => self.exhausted(why),
        }
    }

    /// Every re-ask spent: the last value and every error, read from the ledger; or, when no
    /// answer held a value at all, that.
    /// `fallback_failed`: why the fallback policy could not give a value, when it was asked to
    /// (the last entry of the errors).
    pub(super) fn exhausted(&mut self, fallback_failed: Option<String>) -> Next<G::Out> {
        let mut errors = self.ledger.errors();
        errors.extend(fallback_failed.map(|why| format!("{FALLBACK_FAILED}: {why}")));
        let ledger = self.ledger();
        match self.last_value.take() {
            Some((value, _)) => done(Err(RunError::RetriesExhausted {
                last_value: value,
                errors,
                ledger,
            })),
            None => done(Err(RunError::NoStructuredOutput { errors, ledger })),
        }
    }
}

/// How the last entry of a failed run's `errors` begins when the fallback policy
/// ([`OnExhausted::DefaultsWithWarning`]) was asked for and could not give a value.
pub const FALLBACK_FAILED: &str = "the defaults policy could not apply";

fn done<T>(result: Result<Structured<T>, RunError>) -> Next<T> {
    Next::Done(Box::new(result))
}

/// The previous answer, then the correction naming every error with its path: a user message,
/// or in tool mode an error result for the tool call. An answer longer than `max_echo` bytes is
/// repeated cut, as text (a tool call's arguments cannot be cut and stay the call they were).
fn push_reask(
    turns: &mut Vec<Turn>,
    candidate: StructuredCandidate,
    errors: &str,
    max_echo: usize,
) {
    let correction = format!(
        "Your answer does not match the required schema:\n{errors}\nAnswer again with every error fixed; change nothing else."
    );
    let text = candidate.answer.to_text();
    if text.len() > max_echo {
        let cut = echo_cut(&text, max_echo);
        turns.push(Turn::AssistantText(cut));
        turns.push(Turn::UserText(correction));
        return;
    }
    drop(text);
    match candidate.tool_call {
        Some(call) => {
            turns.push(Turn::AssistantToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
                input: candidate.answer,
            });
            turns.push(Turn::ToolError {
                id: call.id,
                name: call.name,
                text: correction,
            });
        }
        None => {
            turns.push(Turn::AssistantText(candidate.answer.to_text().into_owned()));
            turns.push(Turn::UserText(correction));
        }
    }
}

/// The first `max` bytes of `text` (cut at a character boundary) and a marker saying how much
/// was left out.
fn echo_cut(text: &str, max: usize) -> String {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let left = text.len() - end;
    format!(
        "{}\n[... {left} more bytes of this answer not repeated]",
        &text[..end]
    )
}

/// The type's defaults: the last value with every field that broke a rule taken out, then
/// filled with typed defaults (missing-field recovery, forced on). `None` when a field has no
/// default that fits (an enum, or a range that excludes zero). The value is read where it is.
fn defaults<G: Goal>(
    goal: &G,
    schema: &ResponseSchema,
    last: Option<&(Value, Violations)>,
    policy: &CoercePolicy,
) -> Option<G::Out> {
    let mut value = match last {
        Some((value, violations)) => {
            let mut value = value.clone();
            for v in violations.iter() {
                v.path.remove(&mut value);
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
        ..policy.clone()
    };
    coerce(&mut value, schema, &policy);
    goal.checked(&value)
}

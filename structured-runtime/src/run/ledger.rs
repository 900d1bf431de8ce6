//! The ledger of a run: every request, what came back and what it came to. The errors a failed
//! run reports are read from it, not kept beside it.

use super::transport::TransportError;
use crate::provider::wire::{CodecError, Prices, Usage};
use crate::read::{ParseError, Provenance};
use crate::schema::Violations;

/// What one attempt came to.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AttemptResult {
    /// A value was read and accepted.
    Accepted(Provenance),
    /// An answer was read but does not fit: every violation.
    Invalid(Violations),
    /// A streamed answer was stopped where a completed value broke these rules
    /// ([`crate::RunConfig::stop_stream_on_violation`]). The provider's usage comes at the end
    /// of a stream, so it is unknown: the attempt's cost is unknown too, never counted as 0.
    StreamStopped(Violations),
    /// No value could be read from the answer (no JSON and no prose reading, or nested too
    /// deeply).
    NoJson(ParseError),
    /// No answer at all: plain text where a tool call was required, or an empty answer.
    PlainText,
    /// A tool called wrongly.
    ToolCalledWrongly(String),
    /// The caller's own tools were called (an agent step), by name; their results went back.
    CallerTools(Vec<String>),
    /// Refused, filtered or truncated: the run ends here.
    Stopped(Stop),
    /// The request got no response.
    Transport(TransportError),
    /// The response was not the provider's shape.
    Codec(CodecError),
}

/// Why a run stopped at an answer, without asking again.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stop {
    /// The model refused.
    Refused,
    /// A filter stopped the answer; the provider's reason.
    Filtered(String),
    /// The answer was cut; the provider's reason (or the JSON ending early).
    Truncated(String),
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::Refused => f.write_str("refused"),
            Stop::Filtered(reason) => write!(f, "filtered: {reason}"),
            Stop::Truncated(reason) => write!(f, "truncated: {reason}"),
        }
    }
}

impl AttemptResult {
    /// What was wrong with the answer, when something was: the text a re-ask and a failed run
    /// report.
    pub fn problem(&self, tool: Option<&str>) -> Option<String> {
        Some(match self {
            AttemptResult::Accepted(_) => return None,
            AttemptResult::Invalid(violations) | AttemptResult::StreamStopped(violations) => {
                violations.to_string()
            }
            AttemptResult::NoJson(e) => e.to_string(),
            AttemptResult::PlainText => match tool {
                Some(tool) => format!("no structured output: expected a call to `{tool}`"),
                None => "no structured output: the answer holds no text".to_owned(),
            },
            AttemptResult::ToolCalledWrongly(reason) => reason.clone(),
            AttemptResult::CallerTools(_) => return None,
            AttemptResult::Stopped(stop) => stop.to_string(),
            AttemptResult::Transport(e) => e.to_string(),
            AttemptResult::Codec(e) => e.to_string(),
        })
    }
}

/// One request and what came of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    /// The model asked.
    pub model: String,
    /// The body sent (JSON text).
    pub sent: String,
    /// The body received, if any.
    pub received: Option<String>,
    /// What it came to.
    pub result: AttemptResult,
    /// Tokens, when the provider reported them.
    pub usage: Option<Usage>,
}

/// Prices per model, to cost a run and each attempt.
///
/// ```
/// # use std::future::Future;
/// # use std::time::Duration;
/// # use structured_runtime::provider::capabilities::ProviderKind;
/// # use structured_runtime::run::TransportError;
/// use structured_runtime::provider::wire::Prices;
/// use structured_runtime::run::PriceTable;
/// use structured_runtime::{run_structured, ChatRequest, Provider, RunConfig, StructuredOutput};
/// # struct Recorded;
/// # impl Provider for Recorded {
/// #     fn kind(&self) -> ProviderKind { ProviderKind::OpenAiChat }
/// #     fn model(&self) -> &str { "gpt-4o" }
/// #     fn send(&self, _: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
/// #         async { Ok(r#"{"choices": [{"index": 0, "finish_reason": "stop",
/// #             "message": {"role": "assistant", "content": "{\"ok\": true}"}}],
/// #             "usage": {"prompt_tokens": 1000, "completion_tokens": 10,
/// #                       "prompt_tokens_details": {"cached_tokens": 800}}}"#.to_owned()) }
/// #     }
/// # }
/// # fn block_on<F: Future>(f: F) -> F::Output {
/// #     let mut f = std::pin::pin!(f);
/// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
/// # }
/// #[derive(StructuredOutput, serde::Deserialize, Debug)]
/// struct Answer { ok: bool }
///
/// let mut prices = PriceTable::new();
/// prices.set("gpt-4o", Prices { input: 2.5, output: 10.0, cached_input: Some(1.25), batch: None });
/// let out = block_on(run_structured::<Answer, _>(&Recorded, &ChatRequest::user("On?"), &RunConfig::default())).unwrap();
/// let usage = out.usage();
/// assert_eq!((usage.input_tokens, usage.cached_input_tokens, usage.output_tokens), (1000, 800, 10));
/// // 200 uncached × 2.5 + 800 cached × 1.25 + 10 × 10, per million tokens.
/// let cost = prices.cost(&out.ledger).unwrap();
/// assert!((cost - 0.0016).abs() < 1e-12);
/// ```
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct PriceTable {
    by_model: std::collections::BTreeMap<String, Prices>,
}

impl PriceTable {
    /// An empty table.
    pub fn new() -> Self {
        PriceTable::default()
    }

    /// The prices of `model` (matched exactly).
    pub fn set(&mut self, model: &str, prices: Prices) -> &mut Self {
        self.by_model.insert(model.to_owned(), prices);
        self
    }

    /// The prices of `model`, if set.
    pub fn get(&self, model: &str) -> Option<&Prices> {
        self.by_model.get(model)
    }

    /// What `attempt` cost: nothing when it reported no usage (no response, say), `None` when
    /// its model has no prices here or its usage is unknown (a stream stopped before the
    /// provider reported it: [`AttemptResult::StreamStopped`]).
    pub fn attempt_cost(&self, attempt: &Attempt) -> Option<f64> {
        match attempt.usage {
            // Stopped before the provider said what it used: unknown, not free.
            None if matches!(attempt.result, AttemptResult::StreamStopped(_)) => None,
            None => Some(0.0),
            Some(usage) => self.get(&attempt.model).map(|p| usage.cost(p)),
        }
    }

    /// What every attempt cost together; `None` when one of them has no prices here.
    pub fn cost(&self, ledger: &[Attempt]) -> Option<f64> {
        ledger.iter().map(|a| self.attempt_cost(a)).sum()
    }
}

/// Every attempt of a run, in order, and the tool the model was asked to call (for messages).
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    pub(crate) attempts: Vec<Attempt>,
    pub(crate) tool: Option<String>,
}

impl Ledger {
    /// What was wrong with each answer that came back, in order (transport failures, which are
    /// not answers, are left out).
    pub(crate) fn errors(&self) -> Vec<String> {
        errors(&self.attempts, self.tool.as_deref())
    }
}

/// What was wrong with each answer among `attempts`, in order (transport failures, which are
/// not answers, are left out); `tool` is the tool the model was asked to call, for messages.
pub(crate) fn errors(attempts: &[Attempt], tool: Option<&str>) -> Vec<String> {
    attempts
        .iter()
        .filter(|a| !matches!(a.result, AttemptResult::Transport(_)))
        .filter_map(|a| a.result.problem(tool))
        .collect()
}

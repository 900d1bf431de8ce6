//! What a run gives back: the value with how it was obtained, or the error with every attempt.

use std::time::Duration;

use serde_json::Value;

use super::ledger::Attempt;
use super::transport::TransportError;
use crate::provider::dialect::LowerReport;
use crate::provider::wire::{CodecError, Usage};
use crate::read::mode::StructuredOutputMode;
use crate::read::parse::{Provenance, Warning};

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

/// What kind of failure ended a run (the attempts are beside it, in [`RunError::ledger`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RunErrorKind {
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
    #[error("no valid answer after {} answer(s); last errors: {}", .errors.len(), .errors.last().map(String::as_str).unwrap_or("none"))]
    RetriesExhausted {
        /// The last value read (repaired and coerced).
        last_value: Value,
        /// What was wrong with each answer, in order (read from the ledger); when the fallback
        /// policy ([`OnExhausted::DefaultsWithWarning`](super::OnExhausted::DefaultsWithWarning)) was asked for and could not give a
        /// value, a last entry says so and why ([`FALLBACK_FAILED`]).
        errors: Vec<String>,
    },
    /// Every re-ask was spent and no answer held a value at all: plain text where a tool call
    /// was required, empty answers, or text with no JSON and nothing the prose reader could use.
    #[error("no structured output in {} answer(s); last: {}", .errors.len(), .errors.last().map(String::as_str).unwrap_or("none"))]
    NoStructuredOutput {
        /// What each answer was instead, in order (read from the ledger); when the fallback
        /// policy was asked for and could not give a value, a last entry says so and why
        /// ([`FALLBACK_FAILED`]).
        errors: Vec<String>,
    },
    /// The model refused.
    #[error("the model refused{}", .explanation.as_ref().map(|e| format!(": {e}")).unwrap_or_default())]
    Refused {
        /// The provider's explanation.
        explanation: Option<String>,
        /// The provider's category.
        category: Option<String>,
    },
    /// The answer was cut by the token limit.
    #[error("the answer was truncated ({reason})")]
    Truncated {
        /// What was written, if anything.
        partial: Option<String>,
        /// The provider's reason.
        reason: String,
    },
    /// A safety or content filter stopped the answer.
    #[error("the answer was filtered: {reason}")]
    Filtered {
        /// The provider's reason.
        reason: String,
    },
    /// No response after the transport retries, or a request the provider rejects.
    #[error("transport: {error}")]
    Transport {
        /// The last error.
        error: TransportError,
    },
    /// A response that is not the provider's shape.
    #[error("provider: {error}")]
    Provider {
        /// What was wrong with it.
        error: CodecError,
    },
    /// An agent step ([`crate::run::Ask::agent`]) used every step it had without a valid call of
    /// the structured-output tool.
    #[error("no final answer within {steps} steps")]
    StepBudget {
        /// The budget.
        steps: u32,
    },
    /// The run's deadline ([`RunConfig::deadline`](super::RunConfig::deadline)) passed: the request in flight, if any,
    /// was dropped (its attempt is in the ledger as a timeout).
    #[error("the run's deadline of {deadline:?} passed")]
    DeadlineExceeded {
        /// The deadline.
        deadline: Duration,
    },
}

/// A run that produced no value: what kind of failure, and every attempt made before it (empty
/// when the run ended before any request). `Display` says what the kind says, counting the
/// attempts.
///
/// ```
/// use structured_runtime::run::{RunError, RunErrorKind};
///
/// let error = RunError::new(RunErrorKind::UnsupportedInput { reason: "no PDF by URL".into() }, Vec::new());
/// assert!(matches!(error.kind, RunErrorKind::UnsupportedInput { .. }));
/// assert!(error.ledger.is_empty());
/// assert_eq!(error.to_string(), "no PDF by URL");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RunError {
    /// What ended the run.
    pub kind: RunErrorKind,
    /// Every attempt, in order.
    pub ledger: Vec<Attempt>,
}

impl RunErrorKind {
    /// The kind's name, as traces (`error.type`) and batch results name it: `retries_exhausted`,
    /// `transport`, ...
    pub fn name(&self) -> &'static str {
        match self {
            RunErrorKind::InvalidSchema(_) => "invalid_schema",
            RunErrorKind::NoProseReader { .. } => "no_prose_reader",
            RunErrorKind::UnsupportedInput { .. } => "unsupported_input",
            RunErrorKind::RetriesExhausted { .. } => "retries_exhausted",
            RunErrorKind::NoStructuredOutput { .. } => "no_structured_output",
            RunErrorKind::Refused { .. } => "refused",
            RunErrorKind::Truncated { .. } => "truncated",
            RunErrorKind::Filtered { .. } => "filtered",
            RunErrorKind::Transport { .. } => "transport",
            RunErrorKind::Provider { .. } => "provider",
            RunErrorKind::DeadlineExceeded { .. } => "deadline_exceeded",
            RunErrorKind::StepBudget { .. } => "step_budget",
        }
    }
}

impl RunError {
    /// `kind`, after the attempts in `ledger`.
    pub fn new(kind: RunErrorKind, ledger: Vec<Attempt>) -> Self {
        RunError { kind, ledger }
    }
}

impl From<RunErrorKind> for RunError {
    /// A failure before any request.
    fn from(kind: RunErrorKind) -> Self {
        RunError::new(kind, Vec::new())
    }
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let last = |errors: &[String]| errors.last().cloned().unwrap_or_else(|| "none".into());
        match &self.kind {
            RunErrorKind::RetriesExhausted { errors, .. } => write!(
                f,
                "no valid answer after {} attempt(s); last errors: {}",
                self.ledger.len(),
                last(errors)
            ),
            RunErrorKind::NoStructuredOutput { errors } => write!(
                f,
                "no structured output in {} attempt(s); last: {}",
                self.ledger.len(),
                last(errors)
            ),
            kind => kind.fmt(f),
        }
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.kind)
    }
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

    /// Every attempt made before the run failed (empty when it ended before any).
    pub fn ledger(&self) -> &[Attempt] {
        &self.ledger
    }
}

/// How the last entry of a failed run's `errors` begins when the fallback policy
/// ([`OnExhausted::DefaultsWithWarning`](super::OnExhausted::DefaultsWithWarning)) was asked for and could not give a value.
pub const FALLBACK_FAILED: &str = "the defaults policy could not apply";

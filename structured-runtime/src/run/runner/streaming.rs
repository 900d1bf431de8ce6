//! The streaming run: the same run (modes, budgets, re-asks, ledger, errors) with each answer
//! read while it arrives, and what it shows handed to the caller as it changes.

use serde_json::Value;

use super::{first, Goal, Next, Run, RunError, Structured, Typed, Untyped};
use crate::provider::dialect::ReadBackStream;
use crate::provider::wire::ChatRequest;
use crate::provider::wire::{
    read_response, stream_fields, CodecError, Outcome, StreamDecoder, StructuredCandidate,
};
use crate::read::output::StructuredOutput;
use crate::read::parse::Answer;
use crate::read::stream::StreamReader;
use crate::run::ledger::AttemptResult;
use crate::run::{Provider, RunConfig};
use crate::schema::response::{derived, ResponseSchema};
use crate::schema::validate::{Violation, Violations};
use crate::schema::Pointer;

use std::marker::PhantomData;
use std::time::Instant;

use tracing::Instrument;

/// What a streaming run tells its caller while it runs.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum StreamEvent<'e> {
    /// A request is about to be sent: the first, a re-ask, or a transport retry (`number`
    /// counts them all, from 1).
    Attempt {
        /// Which request, from 1.
        number: usize,
    },
    /// The value so far changed: free text grew, or values completed (their pointers). It only
    /// grows within an attempt; a new attempt starts from nothing.
    Partial {
        /// The value so far, in the schema's shape.
        value: &'e Value,
        /// The values completed since the last event (none when only free text grew).
        completed: &'e [Pointer],
    },
    /// Values just completed break rules (each with its path), reported before the answer
    /// ends. With [`RunConfig::stop_stream_on_violation`] the attempt stops here and is
    /// re-asked.
    Violations(&'e [Violation]),
}

/// [`crate::run::run_structured`], with the answer read while it arrives: `on_event` sees each
/// request start and the value so far each time it changes (free text as it comes, every other
/// value once complete, rules checked as values complete). The result is the same as
/// `run_structured`'s for the same answers: the final value goes through the same checks, with
/// the same provenance, warnings, budgets, ledger and errors. A provider that does not stream
/// ([`Provider::streams`]) is read whole, as one piece.
///
/// ```
/// use serde_json::json;
/// use structured_runtime::provider::capabilities::ProviderKind;
/// use structured_runtime::run::{run_structured_stream, StreamEvent, TransportError};
/// use structured_runtime::{ChatRequest, Provider, RunConfig, StructuredOutput};
/// # use std::future::Future;
/// # use std::time::Duration;
///
/// #[derive(StructuredOutput, serde::Deserialize, Debug)]
/// struct Verdict {
///     /// What the build did.
///     #[enum_values("pass", "fail")]
///     outcome: String,
///     /// Why.
///     reason: String,
/// }
///
/// /// Streams a recorded OpenAI body in 9-byte pieces.
/// struct Recorded(String);
/// impl Provider for Recorded {
///     fn kind(&self) -> ProviderKind { ProviderKind::OpenAiChat }
///     fn model(&self) -> &str { "gpt-4o" }
///     fn send(&self, _: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
///         async { Err(TransportError::Timeout) }
///     }
///     fn streams(&self) -> bool { true }
///     fn send_stream<'a>(&'a self, _: &'a str, on_bytes: &'a mut (dyn FnMut(&[u8]) -> bool + Send))
///         -> impl Future<Output = Result<String, TransportError>> + Send + 'a {
///         async move {
///             for piece in self.0.as_bytes().chunks(9) {
///                 if !on_bytes(piece) { break; }
///             }
///             Ok(self.0.clone())
///         }
///     }
///     async fn wait(&self, _: Duration) {}
/// }
/// let chunk = |text: &str| format!("data: {}\n\n", json!({"choices": [{"index": 0, "delta": {"content": text}}]}));
/// let mut body: String = [r#"{"outcome": "pa"#, r#"ss", "reason": "all gr"#, r#"een"}"#].map(chunk).concat();
/// body += "data: {\"choices\": [{\"index\": 0, \"delta\": {}, \"finish_reason\": \"stop\"}]}\n\ndata: [DONE]\n\n";
///
/// let mut lines = Vec::new();
/// let out = futures_lite_block_on(run_structured_stream::<Verdict, _, _>(
///     &Recorded(body),
///     &ChatRequest::user("Did the build pass?"),
///     &RunConfig::default(),
///     |event| match event {
///         StreamEvent::Attempt { number } => lines.push(format!("request {number}")),
///         StreamEvent::Partial { value, completed } => {
///             let completed: Vec<String> = completed.iter().map(|p| p.to_string()).collect();
///             lines.push(format!("{value}   completed: {completed:?}"));
///         }
///         _ => {}
///     },
/// )).unwrap();
/// assert_eq!(out.value.reason, "all green");
/// // `"pa` is not a value yet; the reason shows as it comes.
/// assert_eq!(lines, [
///     "request 1",
///     "{}   completed: []",
///     r#"{"outcome":"pass","reason":"all gr"}   completed: ["/outcome"]"#,
///     r#"{"outcome":"pass","reason":"all green"}   completed: ["/reason", "(root)"]"#,
/// ]);
/// # fn futures_lite_block_on<F: Future>(f: F) -> F::Output {
/// #     let mut f = std::pin::pin!(f);
/// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
/// # }
/// ```
pub async fn run_structured_stream<T, P, F>(
    provider: &P,
    request: &ChatRequest,
    config: &RunConfig,
    mut on_event: F,
) -> Result<Structured<T>, RunError>
where
    T: StructuredOutput,
    P: Provider,
    F: FnMut(StreamEvent<'_>) + Send,
{
    let span = tracing::debug_span!(
        "run_structured_stream",
        schema = T::schema().name(),
        model = provider.model()
    );
    drive_stream(
        Typed::<T>(PhantomData),
        T::schema(),
        provider,
        request,
        config,
        &mut on_event,
    )
    .instrument(span)
    .await
}

/// [`run_structured_stream`] for a schema given at run time, as [`crate::run::run_value`] is
/// for [`crate::run::run_structured`].
pub async fn run_value_stream<P, F>(
    provider: &P,
    schema: &ResponseSchema,
    request: &ChatRequest,
    config: &RunConfig,
    mut on_event: F,
) -> Result<Structured<Value>, RunError>
where
    P: Provider,
    F: FnMut(StreamEvent<'_>) + Send,
{
    drive_stream(
        Untyped(schema),
        schema,
        provider,
        request,
        config,
        &mut on_event,
    )
    .await
}

/// What one attempt's answer showed while it arrived.
struct Shown<'v> {
    reader: StreamReader<'v>,
    /// The value so far, kept in step by the reader's changes (no copy per event).
    value: Value,
    /// When the answer is written in another shape than the schema's ([`super::Reshape`]):
    /// the changes read back into the schema's shape, and the value so far in that shape.
    reshaped: Option<(ReadBackStream<'v>, Value)>,
    /// Rules broken before the answer ended, when the run stops there.
    stopped: Option<Vec<Violation>>,
    stop_on_violation: bool,
}

impl Shown<'_> {
    /// Reads more of the answer, tells the caller what changed; `false` to stop reading.
    fn feed(&mut self, text: &[u8], on_event: &mut (dyn FnMut(StreamEvent<'_>) + Send)) -> bool {
        // The reader and the value kept beside it are apart: nothing is copied per chunk.
        let progress = self.reader.feed(text);
        for change in progress.changes {
            change.apply(&mut self.value);
        }
        if !progress.violations.is_empty() {
            on_event(StreamEvent::Violations(progress.violations));
            if self.stop_on_violation {
                self.stopped = Some(progress.violations.to_vec());
            }
        }
        if progress.changed {
            match &mut self.reshaped {
                // In the schema's own shape, change by change.
                Some((back, written)) => {
                    let completed =
                        back.apply(progress.changes, progress.completed, &self.value, written);
                    on_event(StreamEvent::Partial {
                        value: written,
                        completed: &completed,
                    });
                }
                None => on_event(StreamEvent::Partial {
                    value: &self.value,
                    completed: progress.completed,
                }),
            }
        }
        self.stopped.is_none()
    }
}

async fn drive_stream<'r, G: Goal, P: Provider>(
    goal: G,
    schema: &'r ResponseSchema,
    provider: &'r P,
    request: &'r ChatRequest,
    config: &'r RunConfig,
    on_event: &mut (dyn FnMut(StreamEvent<'_>) + Send),
) -> Result<Structured<G::Out>, RunError> {
    let streams = provider.streams();
    let mut streamed_request;
    let request = if streams {
        streamed_request = request.clone();
        crate::provider::wire::merge(&mut streamed_request.extra, &stream_fields(provider.kind()));
        &streamed_request
    } else {
        request
    };
    let mut run = Run::start(goal, schema, provider, request, config)?;
    // What the answer is read against while it arrives: the schema as sent.
    let sent = run
        .sent_schema
        .map(|s| derived(schema.name(), None, s.clone()));
    let reader_schema = sent.as_ref().unwrap_or(schema);
    let api = provider.kind().wire_api();
    let started = Instant::now();
    let left = || config.deadline.map(|d| d.saturating_sub(started.elapsed()));
    loop {
        let body = run.ask();
        on_event(StreamEvent::Attempt {
            number: run.ledger.attempts.len() + 1,
        });
        let mut shown = Shown {
            reader: StreamReader::new(reader_schema),
            value: Value::Null,
            reshaped: (!run.reshape.is_empty()).then(|| {
                (
                    ReadBackStream::new(run.reshape, schema.schema()),
                    Value::Null,
                )
            }),
            stopped: None,
            stop_on_violation: config.stop_stream_on_violation,
        };
        let mut decoder = StreamDecoder::new(api, run.expect.clone());
        let mut broken: Option<CodecError> = None;
        let sent = {
            let mut on_bytes = |bytes: &[u8]| -> bool {
                if !streams {
                    return true;
                }
                match decoder.feed(bytes) {
                    Ok(answer) => shown.feed(answer.as_bytes(), on_event),
                    Err(e) => {
                        broken = Some(e);
                        false
                    }
                }
            };
            let send = provider.send_stream(&body, &mut on_bytes);
            match left() {
                None => Some(send.await),
                Some(left) => first(send, || provider.wait(left)).await,
            }
        };
        let next = match sent {
            None => run.deadline_passed(body),
            Some(Err(error)) => run.sent(body, Err(error)),
            Some(Ok(text)) if !streams => {
                // Read whole: the answer goes to the reader in one piece.
                let response = read_response(api, &run.expect, &text);
                if let Ok(Outcome::Candidate(candidate)) = response.as_ref().map(|r| &r.outcome) {
                    shown.feed(candidate.answer.to_text().as_bytes(), on_event);
                }
                match shown.stopped.take() {
                    Some(violations) => run.stopped_on(body, text, &shown.reader, violations),
                    None => run.responded(body, text, response),
                }
            }
            Some(Ok(text)) => match (broken, shown.stopped.take()) {
                (Some(error), _) => run.responded(body, text, Err(error)),
                (None, Some(violations)) => run.stopped_on(body, text, &shown.reader, violations),
                (None, None) => run.responded(body, text, decoder.finish()),
            },
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

impl<G: Goal> Run<'_, G> {
    /// The answer was stopped where a completed value broke a rule: recorded as invalid with
    /// those violations, and re-asked with them (the answer so far repeated) while re-asks last.
    fn stopped_on(
        &mut self,
        body: String,
        text: String,
        reader: &StreamReader<'_>,
        violations: Vec<Violation>,
    ) -> Next<G::Out> {
        let violations = Violations(violations);
        let problem = violations.to_string();
        self.last_value = Some((reader.value(), violations.clone()));
        self.record(
            body,
            Some(text),
            AttemptResult::StreamStopped(violations),
            None,
        );
        if self.reasks < self.reask_budget() {
            self.reasks += 1;
            let candidate = StructuredCandidate {
                answer: Answer::Text(reader.text().unwrap_or_default().to_owned()),
                tool_call: None,
            };
            super::push_reask(
                &mut self.turns,
                candidate,
                &problem,
                self.config.max_echo_bytes,
            );
            return Next::Ask;
        }
        match self.fallback(reader.text()) {
            Ok(next) => next,
            Err(why) => self.exhausted(why),
        }
    }
}

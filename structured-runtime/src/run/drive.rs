//! The one loop that drives a run: it sends what the state machine asks, races the run's
//! deadline, waits out transport retries, and, when the caller takes a stream, reads each
//! answer while it arrives. Plain, streamed and agent runs all go through it, so every budget
//! and check of the [state machine](super::machine) holds for each of them.

use std::future::Future;
use std::task::Poll;
use std::time::Instant;

use serde_json::Value;
use tracing::Instrument;

use super::agent::Agent;
use super::machine::{Next, Run};
use super::result::{RunError, Structured};
use super::stream::{Shown, StreamEvent};
use super::telemetry;
use super::transport::Provider;
use crate::provider::wire::{
    read_response, stream_fields, ChatRequest, CodecError, Outcome, StreamDecoder,
};
use crate::read::parse::Target;
use crate::read::reshape::ReadBackStream;
use crate::read::stream::StreamReader;
use crate::read::stream_view::StreamView;
use crate::schema::response::{derived, ResponseSchema};

use super::config::RunConfig;

/// Where a streamed run's events go.
pub(super) type Sink<'s> = &'s mut (dyn FnMut(StreamEvent<'_>) + Send);

/// How one run is driven beyond its goal: where a stream's events go, the agent step, and when
/// the run started (the runs of a fallback chain share one deadline).
#[derive(Default)]
pub(super) struct Options<'a> {
    pub(super) sink: Option<Sink<'a>>,
    pub(super) agent: Option<Agent<'a>>,
    pub(super) started: Option<Instant>,
}

/// Runs `goal` against `provider` to its end: the state machine decides, this loop sends and
/// waits. With a `sink`, each answer is read while it arrives and what it shows goes there (a
/// provider that does not stream is read whole, as one piece).
pub(super) async fn drive<G: Target, P: Provider>(
    goal: G,
    schema: &ResponseSchema,
    provider: &P,
    request: &ChatRequest,
    config: &RunConfig,
    options: Options<'_>,
) -> Result<Structured<G::Out>, RunError> {
    let span = telemetry::run_span(schema.name(), provider.kind(), provider.model());
    let result = run_loop(goal, schema, provider, request, config, options)
        .instrument(span.clone())
        .await;
    telemetry::record_run(&span, &result);
    result
}

/// [`drive`] inside the run's span.
async fn run_loop<G: Target, P: Provider>(
    goal: G,
    schema: &ResponseSchema,
    provider: &P,
    request: &ChatRequest,
    config: &RunConfig,
    options: Options<'_>,
) -> Result<Structured<G::Out>, RunError> {
    let Options {
        mut sink,
        mut agent,
        started,
    } = options;
    let streams = sink.is_some() && provider.streams();
    let mut streamed_request;
    let request = if streams {
        streamed_request = request.clone();
        crate::provider::wire::merge(&mut streamed_request.extra, &stream_fields(provider.kind()));
        &streamed_request
    } else {
        request
    };
    let agent = agent.as_mut().map(Agent::reborrow);
    let mut run = Run::start(goal, schema, provider, request, config, agent)?;
    // What a streamed answer is read against while it arrives: the schema as sent.
    let sent_schema = match sink {
        Some(_) => run
            .sent_schema
            .map(|s| derived(schema.name(), None, s.clone())),
        None => None,
    };
    let reader_schema = sent_schema.as_ref().unwrap_or(schema);
    let clock = &config.clock;
    let started = started.unwrap_or_else(|| clock.now());
    let left = || {
        config
            .deadline
            .map(|d| d.saturating_sub(clock.now().saturating_duration_since(started)))
    };
    loop {
        if let Some(error) = run.over_budget() {
            return Err(error);
        }
        let body = run.ask();
        let attempt_span = telemetry::attempt_span(
            run.kind,
            run.model,
            run.ledger.attempts.len() + 1,
            run.mode,
            run.sent.max_tokens,
        );
        let recorded = attempt_span.clone();
        let next = match sink.as_deref_mut() {
            None => {
                let send = provider.send(&body).instrument(attempt_span);
                let sent = match left() {
                    None => Some(send.await),
                    Some(left) => first(send, || clock.sleep(left)).await,
                };
                match sent {
                    Some(sent) => run.sent(body, sent),
                    None => run.deadline_passed(body),
                }
            }
            Some(sink) => {
                sink(StreamEvent::Attempt {
                    number: run.ledger.attempts.len() + 1,
                });
                let attempt = streamed(
                    &mut run,
                    provider,
                    reader_schema,
                    schema,
                    body,
                    streams,
                    sink,
                    left(),
                );
                attempt.instrument(attempt_span).await
            }
        };
        let last = match &next {
            Next::Done(result) => match result.as_ref() {
                Ok(out) => out.ledger.last(),
                Err(error) => error.ledger().last(),
            },
            _ => run.ledger.attempts.last(),
        };
        if let Some(attempt) = last {
            telemetry::record_attempt(
                &recorded,
                attempt,
                run.last_finish.as_deref(),
                run.ledger.tool.as_deref(),
                config.trace_bodies,
            );
        }
        match next {
            Next::Ask => {}
            Next::Wait(delay) => match left() {
                Some(left) if delay >= left => {
                    clock.sleep(left).await;
                    return Err(run.deadline_passed_waiting());
                }
                _ => clock.sleep(delay).await,
            },
            Next::Done(result) => return *result,
        }
    }
}

/// One attempt whose answer is read while it arrives (or whole, from a provider that does not
/// stream), what it shows sent to `sink`; then judged by the state machine like any other.
#[allow(clippy::too_many_arguments)]
async fn streamed<G: Target, P: Provider>(
    run: &mut Run<'_, G>,
    provider: &P,
    reader_schema: &ResponseSchema,
    schema: &ResponseSchema,
    body: String,
    streams: bool,
    sink: &mut (dyn FnMut(StreamEvent<'_>) + Send),
    left: Option<std::time::Duration>,
) -> Next<G::Out> {
    let clock = &run.config.clock;
    let api = provider.kind().wire_api();
    let mut shown = Shown {
        reader: StreamReader::new(reader_schema),
        value: StreamView::new(),
        reshaped: (!run.reshape.is_empty()).then(|| {
            (
                ReadBackStream::new(run.reshape, schema.schema()),
                Value::Null,
            )
        }),
        stopped: None,
        stop_on_violation: run.config.stop_stream_on_violation,
    };
    let mut decoder = StreamDecoder::new(api, run.expect.clone());
    let mut broken: Option<CodecError> = None;
    let sent = {
        let mut on_bytes = |bytes: &[u8]| -> bool {
            if !streams {
                return true;
            }
            match decoder.feed(bytes) {
                Ok(answer) => shown.feed(&answer, sink),
                Err(e) => {
                    broken = Some(e);
                    false
                }
            }
        };
        let send = provider.send_stream(&body, &mut on_bytes);
        match left {
            None => Some(send.await),
            Some(left) => first(send, || clock.sleep(left)).await,
        }
    };
    match sent {
        None => run.deadline_passed(body),
        Some(Err(error)) => run.sent(body, Err(error)),
        Some(Ok(text)) if !streams => {
            // Read whole: the answer goes to the reader in one piece.
            let response = read_response(api, &run.expect, &text);
            if let Ok(Outcome::Candidate(candidate)) = response.as_ref().map(|r| &r.outcome) {
                shown.feed(&candidate.answer.to_text(), sink);
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
    }
}

/// The output of `work`, or `None` when the timer ends first. The timer (a sleep on the run's
/// clock) is made only if `work` is not done at its first poll: a provider that answers at once
/// never starts one.
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

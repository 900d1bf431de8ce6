//! The retry runner: ask, read, validate, re-ask with the errors, within budgets.
//!
//! Three budgets are kept apart. Validation re-asks (`max_retries`) are spent only on answers
//! that were read but do not fit. Transport retries (rate limits, 5xx, timeouts) back off and do
//! not touch it. Plain text where a tool call was required is re-asked a bounded number of times
//! of its own. A refusal, a filter or a truncation ends the run at once with its own error:
//! asking again the same way would only pay for the same answer.
//!
//! Every entry point here drives the one state machine (`run/machine.rs`) through the one loop
//! (`run/drive.rs`): plain, streamed, for a derived type or a schema given at run time. Every
//! attempt goes into the ledger (what was sent, what came back, what it came to, the tokens
//! used), on success and on failure alike, and a failed run's errors are read from it.

use serde_json::Value;

use super::agent::{Agent, AgentStep};
use super::config::RunConfig;
use super::drive::{drive, Options};
use super::ledger::Attempt;
use super::result::{RunError, RunErrorKind, Structured};
use super::stream::StreamEvent;
use super::transport::{DynProvider, Provider};
use crate::provider::wire::ChatRequest;
use crate::read::output::StructuredOutput;
use crate::read::parse::Answer;
use crate::read::parse::{Typed, Untyped};
use crate::schema::response::ResponseSchema;

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
    drive(
        Typed::<T>::new(),
        T::schema(),
        provider,
        request,
        config,
        Options::default(),
    )
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
    drive(
        Untyped(schema),
        schema,
        provider,
        request,
        config,
        Options::default(),
    )
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
/// # }
/// # struct Up;
/// # impl Provider for Up {
/// #     fn kind(&self) -> ProviderKind { ProviderKind::OpenAiChat }
/// #     fn model(&self) -> &str { "gpt-4o-mini" }
/// #     fn send(&self, _: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
/// #         async { Ok(r#"{"choices": [{"index": 0, "finish_reason": "stop",
/// #             "message": {"role": "assistant", "content": "{\"ok\": true}"}}]}"#.to_owned()) }
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
    // One deadline for the whole chain, counted from its start: each provider gets what is
    // left, and an error names the deadline as set.
    let started = config.clock.now();
    let mut earlier: Vec<Attempt> = Vec::new();
    let mut last = None;
    for provider in providers {
        let run = drive(
            Typed::<T>::new(),
            T::schema(),
            provider,
            request,
            config,
            Options {
                started: Some(started),
                ..Options::default()
            },
        );
        match run.await {
            Ok(mut out) => {
                earlier.append(&mut out.ledger);
                out.ledger = earlier;
                out.attempts = out.ledger.len();
                return Ok(out);
            }
            Err(mut error) => {
                let move_on = matches!(
                    error.kind,
                    RunErrorKind::Transport { .. }
                        | RunErrorKind::Refused { .. }
                        | RunErrorKind::InvalidSchema(_)
                        | RunErrorKind::UnsupportedInput { .. }
                );
                earlier.append(&mut error.ledger);
                if !move_on {
                    error.ledger = earlier;
                    return Err(error);
                }
                last = Some(error);
            }
        }
    }
    match last {
        Some(mut error) => {
            error.ledger = earlier;
            Err(error)
        }
        None => Err(RunError::new(
            RunErrorKind::NoStructuredOutput {
                errors: vec!["no provider to ask".into()],
            },
            Vec::new(),
        )),
    }
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
    drive(
        Typed::<T>::new(),
        T::schema(),
        provider,
        request,
        config,
        Options {
            sink: Some(&mut on_event),
            ..Options::default()
        },
    )
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
    drive(
        Untyped(schema),
        schema,
        provider,
        request,
        config,
        Options {
            sink: Some(&mut on_event),
            ..Options::default()
        },
    )
    .await
}

/// Runs an agent step: the model calls the caller's tools (each call answered by `handle`, with
/// the tool's name and arguments, returning the text given back to the model) until it calls the
/// structured-output tool alone with arguments that make a valid `T`.
///
/// It is the same run as [`run_structured`]'s (one state machine): the deadline, transport
/// retries, the checks before the first request and the request's warnings hold as there. The
/// provider must take tool calls; a caller's tool named like the finalizer (the schema's name)
/// is refused before any request. An invalid finalizer call is answered with an error tool
/// result naming every violation and spends a step; a finalizer called beside other tools is
/// answered with an error asking for it alone; at most [`AgentStep::max_calls_per_answer`]
/// calls of one answer are run. See [`crate::run::agent`] for every bound.
///
/// ```
/// # use std::future::Future;
/// # use std::sync::Mutex;
/// # use std::time::Duration;
/// # use structured_runtime::provider::capabilities::ProviderKind;
/// # use structured_runtime::run::TransportError;
/// use structured_runtime::provider::wire::Tool;
/// use structured_runtime::run::{run_agent, AgentStep};
/// use structured_runtime::{ChatRequest, Provider, RunConfig, StructuredOutput};
///
/// # struct Scripted(Mutex<Vec<&'static str>>);
/// # impl Provider for Scripted {
/// #     fn kind(&self) -> ProviderKind { ProviderKind::OpenAiChat }
/// #     fn model(&self) -> &str { "gpt-4o" }
/// #     fn send(&self, _: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
/// #         let reply = self.0.lock().unwrap().remove(0).to_owned();
/// #         async move { Ok(reply) }
/// #     }
/// # }
/// # fn block_on<F: Future>(f: F) -> F::Output {
/// #     let mut f = std::pin::pin!(f);
/// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
/// # }
/// #[derive(StructuredOutput, serde::Deserialize, Debug)]
/// struct Weather { city: String, celsius: f64 }
///
/// // The model looks the weather up, then answers with the finalizer.
/// # let provider = Scripted(Mutex::new(vec![
/// #   r#"{"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
/// #     "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{\"city\": \"Oslo\"}"}}]}}]}"#,
/// #   r#"{"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
/// #     "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Oslo\", \"celsius\": 4.5}"}}]}}]}"#,
/// # ]));
/// let lookup = Tool {
///     name: "lookup".into(),
///     description: "Current weather for a city.".into(),
///     parameters: serde_json::json!({"type": "object", "properties": {"city": {"type": "string"}}}),
/// };
/// let mut asked = Vec::new();
/// let out = block_on(run_agent::<Weather, _, _>(
///     &provider,
///     &ChatRequest::user("Weather in Oslo?"),
///     &AgentStep::new(vec![lookup]),
///     &RunConfig::default(),
///     |name, args| { asked.push(name.to_owned()); format!("4.5 C for {}", args.to_text()) },
/// )).unwrap();
/// assert_eq!((out.value.city.as_str(), out.value.celsius), ("Oslo", 4.5));
/// assert_eq!(asked, ["lookup"]);
/// ```
pub async fn run_agent<T, P, F>(
    provider: &P,
    request: &ChatRequest,
    step: &AgentStep,
    config: &RunConfig,
    mut handle: F,
) -> Result<Structured<T>, RunError>
where
    T: StructuredOutput,
    P: Provider,
    F: FnMut(&str, &Answer) -> String + Send,
{
    drive(
        Typed::<T>::new(),
        T::schema(),
        provider,
        request,
        config,
        Options {
            agent: Some(Agent::new(step, &mut handle)),
            ..Options::default()
        },
    )
    .await
}

/// [`run_agent`] for a schema given at run time, as [`run_value`] is for [`run_structured`]:
/// the finalizer's arguments are checked by the schema's validator of record and returned as a
/// `serde_json::Value`.
pub async fn run_agent_value<P, F>(
    provider: &P,
    schema: &ResponseSchema,
    request: &ChatRequest,
    step: &AgentStep,
    config: &RunConfig,
    mut handle: F,
) -> Result<Structured<Value>, RunError>
where
    P: Provider,
    F: FnMut(&str, &Answer) -> String + Send,
{
    drive(
        Untyped(schema),
        schema,
        provider,
        request,
        config,
        Options {
            agent: Some(Agent::new(step, &mut handle)),
            ..Options::default()
        },
    )
    .await
}

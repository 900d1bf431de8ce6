//! The retry runner: ask, read, validate, re-ask with the errors, within budgets.
//!
//! Three budgets are kept apart. Validation re-asks (`max_retries`) are spent only on answers
//! that were read but do not fit. Transport retries (rate limits, 5xx, timeouts) back off and do
//! not touch it. Plain text where a tool call was required is re-asked a bounded number of times
//! of its own. A refusal, a filter or a truncation ends the run at once with its own error:
//! asking again the same way would only pay for the same answer.
//!
//! There is one way in, [`Ask`]: a provider (or a fallback chain of them) and a request, with
//! optionally a config, a stream sink and an agent step, run for a derived type
//! ([`Ask::typed`]) or for a schema given at run time ([`Ask::value`]). [`run_structured`] and
//! [`run_value`] are its two shorthands. Every combination drives the one state machine
//! (`run/machine.rs`) through the one loop (`run/drive.rs`), so each budget and check holds for
//! all of them. Every attempt goes into the ledger (what was sent, what came back, what it came
//! to, the tokens used), on success and on failure alike, and a failed run's errors are read
//! from it.

use std::future::Future;

use serde_json::Value;

use super::agent::{Agent, AgentStep};
use super::config::RunConfig;
use super::drive::{drive, Options};
use super::ledger::Attempt;
use super::result::{RunError, RunErrorKind, Structured};
use super::stream::StreamEvent;
use super::transport::Provider;
use crate::provider::wire::ChatRequest;
use crate::read::output::StructuredOutput;
use crate::read::parse::{Answer, Target, Typed, Untyped};
use crate::schema::response::ResponseSchema;

/// Runs `request` against `provider` until a `T` validates or a budget runs out: the shorthand
/// for `Ask::new(provider, request).config(config).typed::<T>()` ([`Ask`]). The future is `Send`
/// when the provider's futures are, and runs on any executor. A `tracing` span covers the run,
/// and one each request.
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
pub fn run_structured<'a, T: StructuredOutput + 'a, P: Provider>(
    provider: &'a P,
    request: &'a ChatRequest,
    config: &'a RunConfig,
) -> impl Future<Output = Result<Structured<T>, RunError>> + 'a {
    Ask::new(provider, request).config(config).typed()
}

/// [`run_structured`] for a schema given at run time (an API request's, an MCP tool's, a config
/// file's): the answer is read, fitted and checked against `schema` by its validator of record,
/// with the same modes, budgets, ledger and errors, and returned as a `serde_json::Value`. The
/// shorthand for `Ask::new(provider, request).config(config).value(schema)` ([`Ask`]).
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
pub fn run_value<'a, P: Provider>(
    provider: &'a P,
    schema: &'a ResponseSchema,
    request: &'a ChatRequest,
    config: &'a RunConfig,
) -> impl Future<Output = Result<Structured<Value>, RunError>> + 'a {
    Ask::new(provider, request).config(config).value(schema)
}

/// Where a streamed run's events go.
type OnEvent<'a> = Box<dyn FnMut(StreamEvent<'_>) + Send + 'a>;
/// What answers the caller's tools in an agent step.
type OnTool<'a> = Box<dyn FnMut(&str, &Answer) -> String + Send + 'a>;

/// One structured call, set up step by step and run for a derived type ([`Ask::typed`]) or a
/// schema given at run time ([`Ask::value`]): the one entry point behind every kind of run.
///
/// | what | how |
/// |---|---|
/// | one provider | [`Ask::new`] |
/// | a fallback chain | [`Ask::fallback`] |
/// | budgets, mode, clock, policies | [`Ask::config`] (else [`RunConfig::default`]) |
/// | the answer while it arrives | [`Ask::stream`] |
/// | the caller's tools first | [`Ask::agent`] |
///
/// Each combination is the same run: every budget (re-asks, transport retries, deadline, steps,
/// text-only answers), every check before the first request and every warning holds for all.
///
/// ```
/// # use std::future::Future;
/// # use structured_runtime::provider::capabilities::ProviderKind;
/// # use structured_runtime::run::TransportError;
/// use structured_runtime::run::{Ask, RunConfig};
/// use structured_runtime::{ChatRequest, Provider, ResponseSchema, StructuredOutput};
///
/// #[derive(StructuredOutput, serde::Deserialize, Debug)]
/// struct Verdict {
///     #[enum_values("pass", "fail")]
///     outcome: String,
/// }
/// # struct Recorded;
/// # impl Provider for Recorded {
/// #     fn kind(&self) -> ProviderKind { ProviderKind::OpenAiChat }
/// #     fn model(&self) -> &str { "gpt-4o" }
/// #     fn send(&self, _: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
/// #         async { Ok(r#"{"choices": [{"index": 0, "finish_reason": "stop",
/// #             "message": {"role": "assistant", "content": "{\"outcome\": \"pass\"}"}}]}"#.to_owned()) }
/// #     }
/// # }
/// # fn block_on<F: Future>(f: F) -> F::Output {
/// #     let mut f = std::pin::pin!(f);
/// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
/// # }
/// let request = ChatRequest::user("Did the build pass?");
/// let config = RunConfig { deadline: Some(std::time::Duration::from_secs(30)), ..RunConfig::default() };
///
/// // A derived type.
/// let typed = block_on(Ask::new(&Recorded, &request).config(&config).typed::<Verdict>()).unwrap();
/// assert_eq!(typed.value.outcome, "pass");
///
/// // The same run for a schema given at run time, reading each change as it arrives.
/// let schema = ResponseSchema::new("verdict", serde_json::json!({
///     "type": "object", "properties": {"outcome": {"enum": ["pass", "fail"]}},
///     "required": ["outcome"], "additionalProperties": false
/// }))?;
/// let mut events = 0;
/// let value = block_on(Ask::new(&Recorded, &request).stream(|_| events += 1).value(&schema)).unwrap();
/// assert_eq!(value.value, serde_json::json!({"outcome": "pass"}));
/// assert!(events > 0);
/// # Ok::<(), structured_runtime::SchemaError>(())
/// ```
#[must_use = "an Ask does nothing until it is run with `.typed()` or `.value()`"]
pub struct Ask<'a, P> {
    providers: &'a [P],
    request: &'a ChatRequest,
    config: Option<&'a RunConfig>,
    on_event: Option<OnEvent<'a>>,
    agent: Option<(&'a AgentStep, OnTool<'a>)>,
}

impl<'a, P: Provider> Ask<'a, P> {
    /// A run of `request` against `provider`.
    pub fn new(provider: &'a P, request: &'a ChatRequest) -> Self {
        Self::fallback(std::slice::from_ref(provider), request)
    }

    /// A run against each provider in turn: the next is asked when one gives no response (a
    /// transport error after its retries) or refuses; any other outcome ends the run. Every
    /// attempt of every provider is in the ledger, in order, and the run's deadline covers the
    /// whole chain. A provider whose schema or input it cannot take is skipped like one that
    /// failed. A chain of mixed providers is a slice of `Box<dyn DynProvider>`.
    ///
    /// ```
    /// # use std::future::Future;
    /// # use std::time::Duration;
    /// # use structured_runtime::provider::capabilities::ProviderKind;
    /// # use structured_runtime::run::{Ask, DynProvider, TransportError};
    /// # use structured_runtime::{ChatRequest, Provider, StructuredOutput};
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
    /// let request = ChatRequest::user("On?");
    /// let out = block_on(Ask::fallback(&chain, &request).typed::<Answer>()).unwrap();
    /// assert!(out.value.ok);
    /// assert_eq!(out.attempts, 5, "four to the provider that was down, one to the next");
    /// ```
    pub fn fallback(providers: &'a [P], request: &'a ChatRequest) -> Self {
        Ask {
            providers,
            request,
            config: None,
            on_event: None,
            agent: None,
        }
    }

    /// The run's budgets, mode, clock and policies ([`RunConfig::default`] without this).
    pub fn config(mut self, config: &'a RunConfig) -> Self {
        self.config = Some(config);
        self
    }

    /// The answer read while it arrives: `on_event` sees each request start and the value so far
    /// each time it changes (free text as it comes, every other value once complete, rules checked
    /// as values complete). The result is the same as without a stream for the same answers: the
    /// final value goes through the same checks, with the same provenance, warnings, budgets,
    /// ledger and errors. A provider that does not stream ([`Provider::streams`]) is read whole, as
    /// one piece.
    ///
    /// ```
    /// use serde_json::json;
    /// use structured_runtime::provider::capabilities::ProviderKind;
    /// use structured_runtime::run::{Ask, StreamEvent, TransportError};
    /// use structured_runtime::{ChatRequest, Provider, StructuredOutput};
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
    /// let (provider, request) = (Recorded(body), ChatRequest::user("Did the build pass?"));
    /// let out = futures_lite_block_on(Ask::new(&provider, &request).stream(|event| match event {
    ///         StreamEvent::Attempt { number } => lines.push(format!("request {number}")),
    ///         StreamEvent::Partial { value, completed } => {
    ///             let completed: Vec<String> = completed.iter().map(|p| p.to_string()).collect();
    ///             lines.push(format!("{value}   completed: {completed:?}"));
    ///         }
    ///         _ => {}
    ///     }).typed::<Verdict>()).unwrap();
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
    pub fn stream(mut self, on_event: impl FnMut(StreamEvent<'_>) + Send + 'a) -> Self {
        self.on_event = Some(Box::new(on_event));
        self
    }

    /// An agent step: the model calls the caller's `step.tools` (each call answered by `handle`,
    /// with the tool's name and arguments, returning the text given back to the model) until it
    /// calls the structured-output tool alone with arguments that make a valid value.
    ///
    /// It is the same run as without it (one state machine): the deadline, transport retries, the
    /// checks before the first request and the request's warnings hold as there. The
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
    /// use structured_runtime::run::{Ask, AgentStep};
    /// use structured_runtime::{ChatRequest, Provider, StructuredOutput};
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
    /// let lookup = Tool::new(
    ///     "lookup",
    ///     "Current weather for a city.",
    ///     serde_json::json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    /// );
    /// let (request, step) = (ChatRequest::user("Weather in Oslo?"), AgentStep::new(vec![lookup]));
    /// let mut asked = Vec::new();
    /// let out = block_on(
    ///     Ask::new(&provider, &request)
    ///         .agent(&step, |name, args| { asked.push(name.to_owned()); format!("4.5 C for {}", args.to_text()) })
    ///         .typed::<Weather>(),
    /// ).unwrap();
    /// assert_eq!((out.value.city.as_str(), out.value.celsius), ("Oslo", 4.5));
    /// assert_eq!(asked, ["lookup"]);
    /// ```
    pub fn agent(
        mut self,
        step: &'a AgentStep,
        handle: impl FnMut(&str, &Answer) -> String + Send + 'a,
    ) -> Self {
        self.agent = Some((step, Box::new(handle)));
        self
    }

    /// Runs until a `T` validates or a budget runs out.
    pub fn typed<T: StructuredOutput + 'a>(
        self,
    ) -> impl Future<Output = Result<Structured<T>, RunError>> + 'a {
        self.run(Typed::<T>::new, T::schema())
    }

    /// Runs until a value valid against `schema` (by its validator of record) comes back or a
    /// budget runs out.
    pub fn value(
        self,
        schema: &'a ResponseSchema,
    ) -> impl Future<Output = Result<Structured<Value>, RunError>> + 'a {
        self.run(move || Untyped(schema), schema)
    }

    /// Drives a goal (made fresh for each provider) against each provider in turn: one, or a
    /// fallback chain.
    async fn run<G: Target>(
        self,
        goal: impl Fn() -> G,
        schema: &'a ResponseSchema,
    ) -> Result<Structured<G::Out>, RunError> {
        let Ask {
            providers,
            request,
            config,
            mut on_event,
            mut agent,
        } = self;
        let default;
        let config = match config {
            Some(config) => config,
            None => {
                default = RunConfig::default();
                &default
            }
        };
        // One deadline for the whole chain, counted from its start: each provider gets what is
        // left, and an error names the deadline as set.
        let started = config.clock.now();
        let mut earlier: Vec<Attempt> = Vec::new();
        let mut last = None;
        for provider in providers {
            let options = Options {
                sink: on_event.as_deref_mut().map(|sink| sink as _),
                agent: agent
                    .as_mut()
                    .map(|(step, handle)| Agent::new(step, &mut **handle)),
                started: Some(started),
            };
            match drive(goal(), schema, provider, request, config, options).await {
                Ok(mut out) => {
                    if !earlier.is_empty() {
                        earlier.append(&mut out.ledger);
                        out.ledger = earlier;
                        out.attempts = out.ledger.len();
                    }
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
}

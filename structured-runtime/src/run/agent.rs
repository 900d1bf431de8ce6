//! An agent step: the caller's own tools offered beside the structured-output tool (the
//! finalizer). Calls to the caller's tools are answered by the caller's handler and the loop goes
//! on; the finalizer, called alone with arguments that fit, ends the run with the typed value.
//! Plain-text answers are asked again up to a bound of consecutive ones, and a step budget ends
//! the run with [`RunError::StepBudget`], never with a value that was not given.

use serde_json::Value;

use super::config::RunConfig;
use super::ledger::{errors, Attempt, AttemptResult, Stop};
use super::result::{RunError, Structured};
use super::transport::Provider;
use crate::provider::capabilities::resolve_mode;
use crate::provider::wire::{
    add_caller_tools, body_with, fragment_body, read_response, sent_target, ChatRequest, Expect,
    Outcome, Tool, Turn,
};
use crate::read::mode::StructuredOutputMode;
use crate::read::output::StructuredOutput;
use crate::read::parse::{parse_answer_reshaped, Answer, ParseError};

/// How an agent step is bounded.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentStep {
    /// The caller's tools.
    pub tools: Vec<Tool>,
    /// Requests at most (every model turn counts, transport retries included).
    pub max_steps: u32,
    /// Plain-text answers in a row at most (a tool call resets the count).
    pub max_text_only: u32,
}

impl AgentStep {
    /// These tools, 10 steps, 5 text-only answers in a row (as seed `003` does).
    pub fn new(tools: Vec<Tool>) -> Self {
        AgentStep {
            tools,
            max_steps: 10,
            max_text_only: 5,
        }
    }
}

/// Runs an agent step: the model calls the caller's tools (each call answered by `handle`, with
/// the tool's name and arguments, returning the text given back to the model) until it calls the
/// structured-output tool alone with arguments that make a valid `T`.
///
/// The provider must support tool calls. An invalid finalizer call is answered with an error
/// tool result naming every violation (a validation re-ask: `max_retries` of them); a finalizer
/// called beside other tools is answered with an error asking for it alone.
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
/// #     async fn wait(&self, _: Duration) {}
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
    F: FnMut(&str, &Answer) -> String,
{
    let schema = T::schema();
    let kind = provider.kind();
    let caps = config
        .capabilities
        .get(kind, provider.model())
        .unwrap_or_else(|| provider.capabilities());
    let mode = resolve_mode(true, false, config.extended_thinking, &caps);
    if mode != StructuredOutputMode::ToolUseWorkaround {
        return Err(RunError::UnsupportedInput {
            reason: format!(
                "{kind:?} {} cannot take tool calls here: an agent step needs them",
                provider.model()
            ),
        });
    }
    let constraint = config.constraint(request.max_tokens.or(config.max_tokens));
    let fragment =
        fragment_body(kind, mode, schema, &caps, &constraint).map_err(RunError::InvalidSchema)?;
    // The finalizing tool's schema as sent; its calls are read back into `T`'s shape.
    let reshape = schema
        .reshape(sent_target(&caps, schema))
        .map_err(RunError::InvalidSchema)?;
    let finalizer = schema.name().to_owned();
    let expect = Expect::tool(finalizer.clone());
    let mut request = request.clone();
    if request.max_tokens.is_none() {
        request.max_tokens = config.max_tokens;
    }
    let mut turns: Vec<Turn> = Vec::new();
    let mut ledger: Vec<Attempt> = Vec::new();
    let (mut text_only, mut reasks, mut transport_failures) = (0u32, 0u32, 0u32);
    let mut last_value: Option<Value> = None;
    loop {
        if ledger.len() >= step.max_steps as usize {
            return Err(RunError::StepBudget {
                steps: step.max_steps,
                ledger,
            });
        }
        // Built as a value (not text read back) so the caller's tools can be added to it.
        let mut body = body_with(
            kind,
            provider.model(),
            &request,
            None,
            &fragment.value,
            &turns,
        );
        add_caller_tools(kind, &mut body, &step.tools);
        let sent = body.to_string();
        let attempt = |result, received, usage| Attempt {
            model: provider.model().to_owned(),
            sent: sent.clone(),
            received,
            result,
            usage,
        };
        let text = match provider.send(&sent).await {
            Ok(text) => text,
            Err(error) => {
                ledger.push(attempt(AttemptResult::Transport(error.clone()), None, None));
                if error.is_retryable() && transport_failures < config.transport_retries {
                    transport_failures += 1;
                    let wait = config
                        .backoff
                        .saturating_mul(1 << transport_failures.min(16))
                        .min(config.max_wait);
                    provider.wait(wait).await;
                    continue;
                }
                return Err(RunError::Transport { error, ledger });
            }
        };
        let response = match read_response(kind.wire_api(), &expect, &text) {
            Ok(r) => r,
            Err(error) => {
                ledger.push(attempt(
                    AttemptResult::Codec(error.clone()),
                    Some(text),
                    None,
                ));
                return Err(RunError::Provider { error, ledger });
            }
        };
        let usage = response.usage;
        match response.outcome {
            Outcome::Candidate(candidate) => {
                text_only = 0;
                match parse_answer_reshaped::<T>(&candidate.answer, mode, &config.parse, reshape) {
                    Ok(parsed) => {
                        ledger.push(attempt(
                            AttemptResult::Accepted(parsed.provenance),
                            Some(text),
                            usage,
                        ));
                        return Ok(Structured {
                            value: parsed.value,
                            mode,
                            attempts: ledger.len(),
                            ledger,
                            provenance: parsed.provenance,
                            warnings: parsed.warnings,
                            request_warnings: Vec::new(),
                        });
                    }
                    Err(e) => {
                        let result = match e {
                            ParseError::Invalid {
                                violations, value, ..
                            } => {
                                last_value = Some(value);
                                AttemptResult::Invalid(violations)
                            }
                            other => AttemptResult::NoJson(other),
                        };
                        let problem = result.problem(Some(&finalizer)).unwrap_or_default();
                        ledger.push(attempt(result, Some(text), usage));
                        if reasks >= config.outputs.max_retries {
                            return Err(exhausted(ledger, last_value, &finalizer));
                        }
                        reasks += 1;
                        let call = candidate.tool_call.unwrap_or_default();
                        turns.push(Turn::AssistantToolCall {
                            id: call.id.clone(),
                            name: call.name.clone(),
                            input: candidate.answer,
                        });
                        turns.push(Turn::ToolError {
                            id: call.id,
                            name: call.name,
                            text: format!("Your arguments do not match the required schema:\n{problem}\nCall `{finalizer}` again with every error fixed."),
                        });
                    }
                }
            }
            Outcome::ToolCalledWrongly { calls, inputs, .. } => {
                text_only = 0;
                let names: Vec<String> = calls.iter().map(|c| c.name.clone()).collect();
                let finalizer_too = names.contains(&finalizer);
                ledger.push(attempt(
                    AttemptResult::CallerTools(names),
                    Some(text),
                    usage,
                ));
                for (call, input) in calls.into_iter().zip(inputs) {
                    let known = step.tools.iter().any(|t| t.name == call.name);
                    let answer = if finalizer_too {
                        Err(format!(
                            "`{finalizer}` must be called alone, after the other tools have answered: call it again by itself"
                        ))
                    } else if known {
                        Ok(handle(&call.name, &input))
                    } else {
                        Err(format!("there is no tool `{}`", call.name))
                    };
                    turns.push(Turn::AssistantToolCall {
                        id: call.id.clone(),
                        name: call.name.clone(),
                        input,
                    });
                    turns.push(match answer {
                        Ok(text) => Turn::ToolResult {
                            id: call.id,
                            name: call.name,
                            text,
                        },
                        Err(text) => Turn::ToolError {
                            id: call.id,
                            name: call.name,
                            text,
                        },
                    });
                }
            }
            Outcome::NoStructuredOutput { text: said } => {
                ledger.push(attempt(AttemptResult::PlainText, Some(text), usage));
                text_only += 1;
                if text_only >= step.max_text_only {
                    let errors = errors(&ledger, Some(&finalizer));
                    return Err(RunError::NoStructuredOutput { errors, ledger });
                }
                turns.push(Turn::AssistantText(said.unwrap_or_default()));
                turns.push(Turn::UserText(format!(
                    "Answer by calling a tool: one of yours to gather what you need, or `{finalizer}` with the final answer."
                )));
            }
            Outcome::Refused {
                explanation,
                category,
            } => {
                ledger.push(attempt(
                    AttemptResult::Stopped(Stop::Refused),
                    Some(text),
                    usage,
                ));
                return Err(RunError::Refused {
                    explanation,
                    category,
                    ledger,
                });
            }
            Outcome::Truncated { partial, reason } => {
                ledger.push(attempt(
                    AttemptResult::Stopped(Stop::Truncated(reason.clone())),
                    Some(text),
                    usage,
                ));
                return Err(RunError::Truncated {
                    partial: partial.map(|p| p.answer.to_text().into_owned()),
                    reason,
                    ledger,
                });
            }
            Outcome::Filtered { reason, .. } => {
                ledger.push(attempt(
                    AttemptResult::Stopped(Stop::Filtered(reason.clone())),
                    Some(text),
                    usage,
                ));
                return Err(RunError::Filtered { reason, ledger });
            }
        }
    }
}

/// Every re-ask of the finalizer spent.
fn exhausted(ledger: Vec<Attempt>, last_value: Option<Value>, finalizer: &str) -> RunError {
    let errors = errors(&ledger, Some(finalizer));
    match last_value {
        Some(last_value) => RunError::RetriesExhausted {
            last_value,
            errors,
            ledger,
        },
        None => RunError::NoStructuredOutput { errors, ledger },
    }
}

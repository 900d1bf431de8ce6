//! The run as a state machine: [`Run::ask`] builds a request, the provider sends it, and
//! [`Run::sent`] (or [`Run::responded`], for a body read while it arrived) turns what came back
//! into the next step: ask again, wait and send again, or finish. Every attempt goes into the
//! ledger, and every budget and check lives here, so every way of driving a run keeps them.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::agent::Agent;
use super::config::{OnExhausted, RunConfig};
use super::ledger::{Attempt, AttemptResult, Ledger, Stop};
use super::result::{RunError, RunErrorKind, Structured, FALLBACK_FAILED};
use super::transport::{Provider, TransportError};
use crate::provider::cache::{lowering, Fragment};
use crate::provider::capabilities::{resolve_mode, ProviderKind};
use crate::provider::dialect::Reshape;
use crate::provider::wire::{
    add_caller_tools, body_text, body_with, fragment_body, read_response, schema_refusal,
    sent_target, ChatRequest, CodecError, Expect, Outcome, ProviderResponse, Sent,
    StructuredCandidate, Turn, Usage, WireApi,
};
use crate::read::coerce::{coerce, coerce_choosing, CoercePolicy};
use crate::read::mode::StructuredOutputMode;
use crate::read::parse::{Answer, ParseError, Provenance, Target, Warning};
use crate::read::stream::StreamReader;
use crate::schema::dialect::{LowerError, LowerReport, SchemaTarget};
use crate::schema::response::ResponseSchema;
use crate::schema::validate::Violation;
use crate::schema::Violations;
use crate::schema::{LimitProfile, Pointer};

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
/// the configured sampling under the caller's own fields, and, for Anthropic with extended
/// thinking on, the `thinking` field (a budget below the limit). The conversation is borrowed,
/// never copied.
fn completed<'r>(request: &'r ChatRequest, config: &RunConfig, kind: ProviderKind) -> Sent<'r> {
    let mut sent = Sent::as_asked(request);
    if request.max_tokens.is_none() {
        sent.max_tokens = config.max_tokens;
    }
    if let Some(sampling) = &config.sampling {
        // The caller's own fields win over the configured sampling.
        let mut extra = sampling.clone();
        crate::provider::wire::merge(&mut extra, &request.extra);
        sent.extra = std::borrow::Cow::Owned(extra);
    }
    let thinking = config.extended_thinking
        && kind == ProviderKind::Anthropic
        && request.extra.get("thinking").is_none();
    if thinking {
        let max = sent.max_tokens.unwrap_or(4096).max(THINKING_BUDGET + 1024);
        sent.max_tokens = Some(max);
        if let Value::Object(extra) = sent.extra.to_mut() {
            extra.insert(
                "thinking".into(),
                serde_json::json!({"type": "enabled", "budget_tokens": THINKING_BUDGET}),
            );
        }
    }
    sent
}

/// What the run does after an attempt.
pub(super) enum Next<T> {
    /// Send the next request now.
    Ask,
    /// Wait, then send the same request again (a transport retry).
    Wait(Duration),
    /// Finish.
    Done(Box<Result<Structured<T>, RunError>>),
}

/// The state of one run: what is asked and how, what was said so far, and what is left of each
/// budget.
pub(super) struct Run<'r, G: Target> {
    /// What the answer is read into.
    pub(super) goal: G,
    pub(super) schema: &'r ResponseSchema,
    pub(super) config: &'r RunConfig,
    /// The caller's request, with the run's `max_tokens` when it names none ([`completed`]).
    pub(super) sent: Sent<'r>,
    pub(super) kind: ProviderKind,
    pub(super) model: &'r str,
    pub(super) mode: StructuredOutputMode,
    /// What the mode adds to every request: fields (built once per schema and kept on it) and
    /// system text.
    pub(super) fragment: Arc<Fragment>,
    pub(super) system: Option<&'r str>,
    pub(super) expect: Expect,
    /// The turns re-asks added after the caller's messages.
    pub(super) turns: Vec<Turn>,
    pub(super) ledger: Ledger,
    /// The last value read, with what was wrong with it.
    pub(super) last_value: Option<(Value, Violations)>,
    pub(super) reasks: u32,
    pub(super) plain_texts: u32,
    pub(super) transport_failures: u32,
    /// The request's own warnings: keywords the provider was not asked to enforce, or
    /// does not enforce, and limits a grammar added.
    pub(super) not_enforced: Vec<Warning>,
    /// How the schema sent differs in shape from the schema (answers are read back from it).
    pub(super) reshape: &'r Reshape,
    /// The dialect the schema was lowered to for this provider.
    target: SchemaTarget,
    /// The schema as sent, when it differs in shape ([`Run::reshape`]): what a streamed answer
    /// is read against while it arrives.
    pub(super) sent_schema: Option<&'r Value>,
    /// The provider's own stop or finish reason for the last answer, as sent.
    pub(super) last_finish: Option<String>,
    /// The agent step, when the caller's tools are offered beside the finalizer.
    pub(super) agent: Option<Agent<'r>>,
    /// The model chooses among the tools (`tool_choice: auto`) rather than being made to call
    /// one: an agent step with extended thinking on Anthropic.
    pub(super) choose_freely: bool,
}

impl<'r, G: Target> Run<'r, G> {
    /// The mode for this provider, and the request fragment for it (the schema lowered once
    /// per target and kept).
    pub(super) fn start<P: Provider>(
        goal: G,
        schema: &'r ResponseSchema,
        provider: &'r P,
        request: &'r ChatRequest,
        config: &'r RunConfig,
        agent: Option<Agent<'r>>,
    ) -> Result<Self, RunError> {
        let caps = config
            .capabilities
            .get(provider.kind(), provider.model())
            .unwrap_or_else(|| provider.capabilities());
        // Thinking asked in the request's own fields counts as much as the config's flag (a
        // forced tool cannot go with it on Anthropic), and the flag turns it on on the wire.
        let thinking = config.extended_thinking || asks_thinking(&request.extra);
        let mode = match &agent {
            // An agent step needs tool calls, and only lets the model choose among the tools
            // (`auto` with thinking on Anthropic), so thinking does not rule the tool out.
            Some(_) if caps.supports_tool_calls => StructuredOutputMode::ToolUseWorkaround,
            Some(_) => {
                return Err(RunError::from(RunErrorKind::UnsupportedInput {
                    reason: format!(
                        "{:?} {} cannot take tool calls here: an agent step needs them",
                        provider.kind(),
                        provider.model()
                    ),
                }))
            }
            None => match request.mode.or(config.mode).or(provider.mode()) {
                Some(asked) if config.outputs.enabled => {
                    let forced_tool =
                        caps.supports_tool_use && (!thinking || caps.forced_tool_with_thinking);
                    let takes = match asked {
                        StructuredOutputMode::SchemaEnforced => caps.supports_response_schema,
                        StructuredOutputMode::ToolUseWorkaround => forced_tool,
                        StructuredOutputMode::PromptGuided | StructuredOutputMode::None => true,
                    };
                    if !takes {
                        return Err(RunError::from(RunErrorKind::UnsupportedInput {
                            reason: format!(
                                "the mode {asked:?} was asked, and {:?} {} cannot take it",
                                provider.kind(),
                                provider.model()
                            ),
                        }));
                    }
                    asked
                }
                _ => resolve_mode(
                    config.outputs.enabled,
                    config.outputs.prefer_schema_enforcement,
                    thinking,
                    &caps,
                ),
            },
        };
        // The default leaves each schema to the limits it was built with; a tighter profile is
        // checked here (a walk of the schema, at most its limit in size).
        let checked = if config.schema_limits == LimitProfile::Default {
            Ok(())
        } else {
            schema.check_limits(&config.schema_limits.limits())
        };
        if let Err(e) = checked {
            return Err(RunError::from(RunErrorKind::UnsupportedInput {
                reason: format!(
                    "the schema `{}` is outside the {} limits: {e}",
                    schema.name(),
                    config.schema_limits
                ),
            }));
        }
        if let Some(reason) = agent.as_ref().and_then(|a| a.step.clash(schema.name())) {
            return Err(RunError::from(RunErrorKind::UnsupportedInput { reason }));
        }
        // With thinking on Anthropic a tool cannot be forced: the model chooses (`auto`), and
        // the run holds it to the finalizer (the text-only bound, then a typed error).
        let choose_freely = thinking && provider.kind() == ProviderKind::Anthropic;
        let refused = request
            .messages
            .iter()
            .flat_map(|m| &m.attachments)
            .find_map(|a| a.refused_by(provider.kind()));
        if let Some(reason) = refused {
            return Err(RunError::from(RunErrorKind::UnsupportedInput { reason }));
        }
        // Tools in the request's own fields would replace the structured-output tool while the
        // choice still names it: the caller's tools go through an agent step (`Ask::agent`).
        let clash = ["tools", "tool_choice", "toolConfig"]
            .into_iter()
            .find(|k| request.extra.get(k).is_some());
        if let (StructuredOutputMode::ToolUseWorkaround, Some(key)) = (mode, clash) {
            return Err(RunError::from(RunErrorKind::UnsupportedInput { reason: format!(
                    "`{key}` in the request's extra fields would replace the structured-output tool: offer your tools with an agent step (Ask::agent)"
                ) }));
        }
        if mode == StructuredOutputMode::None && !goal.reads_prose() {
            return Err(RunError::from(RunErrorKind::NoProseReader {
                schema: schema.name().to_owned(),
            }));
        }
        let constraint = config.constraint(request.max_tokens.or(config.max_tokens));
        let fragment = fragment_body(provider.kind(), mode, schema, &caps, &constraint)
            .map_err(|report| RunError::from(RunErrorKind::InvalidSchema(report)))?;
        if let (Some(agent), ProviderKind::Anthropic) = (agent.as_ref(), provider.kind()) {
            anthropic_caps(&agent.step.tools, mode, schema)
                .map_err(|report| RunError::from(RunErrorKind::InvalidSchema(report)))?;
        }
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
                // What the lowering moved, kept unenforced and closed: one look at it.
                let lowered = lowering(schema, target).ok();
                let moved = lowered.map(|l| &l.moved).filter(|m| !m.is_empty());
                let kept = lowered.map(|l| &l.kept).filter(|k| !k.is_empty());
                let closed = lowered.map(|l| &l.closed).filter(|c| !c.is_empty());
                let moved = moved.map(|moved| Warning::NotEnforcedByProvider {
                    target,
                    moved: moved.clone(),
                });
                let kept = kept.map(|kept| Warning::SentNotEnforced {
                    target,
                    kept: kept.clone(),
                });
                let closed = closed.map(|paths| Warning::ClosedByProvider {
                    target,
                    paths: paths.clone(),
                });
                moved.into_iter().chain(kept).chain(closed).collect()
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
            sent: completed(request, config, provider.kind()),
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
            target,
            reshape,
            sent_schema,
            last_finish: None,
            agent,
            choose_freely,
        })
    }

    /// The body of the next request.
    pub(super) fn ask(&self) -> String {
        tracing::debug!(attempt = self.ledger.attempts.len() + 1, "sending");
        let Some(agent) = &self.agent else {
            return body_text(
                self.kind,
                self.model,
                &self.sent,
                self.system,
                &self.fragment,
                &self.turns,
            );
        };
        // Built as a value (not text read back) so the caller's tools can be added to it.
        let mut body = body_with(
            self.kind,
            self.model,
            &self.sent,
            self.system,
            &self.fragment.value,
            &self.turns,
        );
        add_caller_tools(self.kind, &mut body, &agent.step.tools, self.choose_freely);
        body.to_string()
    }

    /// A re-ask sends the newest answer and its correction only, so a request stays bounded
    /// however many attempts came before (an agent step keeps its history: its tools' results
    /// are what the model works from).
    fn forget_earlier_reasks(&mut self) {
        if self.agent.is_none() {
            self.turns.clear();
        }
    }

    /// The step budget spent (an agent step counts every request): the run ends here.
    pub(super) fn over_budget(&mut self) -> Option<RunError> {
        let steps = self.agent.as_ref()?.step.max_steps;
        (self.ledger.attempts.len() >= steps as usize)
            .then(|| RunError::new(RunErrorKind::StepBudget { steps }, self.ledger()))
    }

    fn reask_budget(&self) -> u32 {
        if self.agent.is_some() {
            // The step budget bounds an agent step's re-asks.
            u32::MAX
        } else if self.config.outputs.retry_on_validation_failure {
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
    pub(super) fn sent(
        &mut self,
        body: String,
        sent: Result<String, TransportError>,
    ) -> Next<G::Out> {
        let text = match sent {
            Ok(text) => text,
            Err(error) => return self.transport_failed(body, error),
        };
        let response = read_response(self.kind.wire_api(), &self.expect, &text);
        self.responded(body, text, response)
    }

    /// What comes after a response body (`text`, as received) read into `response`.
    pub(super) fn responded(
        &mut self,
        body: String,
        text: String,
        response: Result<ProviderResponse, CodecError>,
    ) -> Next<G::Out> {
        self.last_finish = None;
        let response = match response {
            Ok(r) => r,
            Err(error) => {
                self.record(body, Some(text), AttemptResult::Codec(error.clone()), None);
                let ledger = self.ledger();
                return done(Err(RunError::new(RunErrorKind::Provider { error }, ledger)));
            }
        };
        let usage = response.usage;
        self.last_finish = response.stop_reason;
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
                done(Err(RunError::new(
                    RunErrorKind::Refused {
                        explanation,
                        category,
                    },
                    ledger,
                )))
            }
            Outcome::Truncated { partial, reason } => {
                let stop = Stop::Truncated(reason.clone());
                self.record(body, Some(text), AttemptResult::Stopped(stop), usage);
                let ledger = self.ledger();
                done(Err(RunError::new(
                    RunErrorKind::Truncated {
                        partial: partial.map(|p| p.answer.to_text().into_owned()),
                        reason,
                    },
                    ledger,
                )))
            }
            Outcome::Filtered { reason, .. } => {
                let stop = Stop::Filtered(reason.clone());
                self.record(body, Some(text), AttemptResult::Stopped(stop), usage);
                let ledger = self.ledger();
                done(Err(RunError::new(
                    RunErrorKind::Filtered { reason },
                    ledger,
                )))
            }
            Outcome::NoStructuredOutput { text: said } => {
                self.record(body, Some(text), AttemptResult::PlainText, usage);
                self.no_structured_output(said)
            }
            Outcome::ToolCalledWrongly { calls, inputs, .. } if self.agent.is_some() => {
                let names = calls.iter().map(|c| c.name.clone()).collect();
                self.record(body, Some(text), AttemptResult::CallerTools(names), usage);
                let max_echo = self.config.max_echo_bytes;
                let finalizer = self.schema.name();
                if let Some(agent) = &mut self.agent {
                    agent.text_only = 0;
                    let turns = agent.answer(calls, inputs, finalizer, max_echo);
                    self.turns.extend(turns);
                }
                Next::Ask
            }
            Outcome::ToolCalledWrongly { reason, .. } => {
                let result = AttemptResult::ToolCalledWrongly(reason.clone());
                self.record(body, Some(text), result, usage);
                if self.reasks < self.reask_budget() {
                    self.reasks += 1;
                    self.forget_earlier_reasks();
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
                    return done(Err(RunError::new(
                        RunErrorKind::Transport { error },
                        ledger,
                    )));
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
        if let Some(report) = schema_refused(self.kind, self.target, &error) {
            return done(Err(RunError::new(
                RunErrorKind::InvalidSchema(report),
                ledger,
            )));
        }
        done(Err(RunError::new(
            RunErrorKind::Transport { error },
            ledger,
        )))
    }

    /// The deadline passed while `body` was in flight: the attempt is recorded as a timeout.
    pub(super) fn deadline_passed(&mut self, body: String) -> Next<G::Out> {
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
    pub(super) fn deadline_passed_waiting(&mut self) -> RunError {
        let last = self.ledger.attempts.last().map(|a| &a.result);
        if let Some(AttemptResult::Transport(error @ TransportError::RateLimited { .. })) = last {
            let error = error.clone();
            let ledger = self.ledger();
            return RunError::new(RunErrorKind::Transport { error }, ledger);
        }
        self.deadline_exceeded()
    }

    fn deadline_exceeded(&mut self) -> RunError {
        let ledger = self.ledger();
        let deadline = self.config.deadline.unwrap_or_default();
        RunError::new(RunErrorKind::DeadlineExceeded { deadline }, ledger)
    }

    /// Plain text where a tool call was required, or no text at all.
    fn no_structured_output(&mut self, said: Option<String>) -> Next<G::Out> {
        if let Some(agent) = &mut self.agent {
            agent.text_only += 1;
            if agent.text_only >= agent.step.max_text_only {
                let errors = self.ledger.errors();
                let ledger = self.ledger();
                return done(Err(RunError::new(
                    RunErrorKind::NoStructuredOutput { errors },
                    ledger,
                )));
            }
            let tool = self.schema.name();
            self.turns
                .push(Turn::AssistantText(said.unwrap_or_default()));
            self.turns.push(Turn::UserText(format!(
                "Answer by calling a tool: one of yours to gather what you need, or `{tool}` with the final answer."
            )));
            return Next::Ask;
        }
        let tool_mode = self.mode == StructuredOutputMode::ToolUseWorkaround;
        if tool_mode && self.plain_texts < self.config.plain_text_retries {
            self.plain_texts += 1;
            self.forget_earlier_reasks();
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
            self.forget_earlier_reasks();
            self.turns.push(Turn::UserText(ask.into()));
            return Next::Ask;
        }
        match self.fallback(said.as_deref()) {
            Ok(next) => next,
            Err(why) => self.exhausted(why),
        }
    }

    /// The fallback policy, when every re-ask is spent ([`OnExhausted::DefaultsWithWarning`]):
    /// the last value with each field that broke a rule taken out and typed defaults filled in
    /// (the schema's own `default` where it declares one); failing that (an enum has no typed
    /// default, or there was no JSON), the type's prose reader on the last answer, with the
    /// defaults its fields declare (`#[fallback_keyword(default = ..)]`); failing that, the first
    /// typed defaults again with each required choice (an enum, a constant) given its first
    /// allowed value. Each way the value is marked recovered and each defaulted field is named.
    pub(super) fn fallback(&mut self, said: Option<&str>) -> Result<Next<G::Out>, Option<String>> {
        if self.config.outputs.on_exhausted != OnExhausted::DefaultsWithWarning {
            return Err(None);
        }
        let policy = &self.config.parse.coerce;
        let mut warnings = vec![Warning::Defaults {
            attempts: self.ledger.attempts.len(),
            errors: self.ledger.errors(),
        }];
        let last = self.last_value.as_ref();
        let value = match defaults(&self.goal, self.schema, last, policy, false) {
            Some(value) => value,
            None => match self.goal.read_prose(said.unwrap_or_default()) {
                Some((value, defaulted)) => {
                    warnings.extend(defaulted);
                    value
                }
                // Last: a required choice (an enum, a constant) takes its first value.
                None => defaults(&self.goal, self.schema, last, policy, true).ok_or_else(|| {
                    "no default fits the last value (each field that broke a rule taken out, typed defaults and first allowed values filled in), and the last answer held nothing the type's prose reader could use".to_owned()
                })?,
            },
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
        if let Some(agent) = &mut self.agent {
            agent.text_only = 0;
        }
        let parsed = self.goal.parse_answer(
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
                return done(Err(RunError::new(
                    RunErrorKind::Truncated {
                        partial: Some(candidate.answer.to_text().into_owned()),
                        reason,
                    },
                    ledger,
                )));
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
        self.reask_or_end(candidate, &problem, candidate_text.as_deref())
    }

    /// Asks again with `problem` (the newest answer repeated, cut to the echo cap) while
    /// re-asks last; then the fallback policy on `said`, the last answer; then the end.
    fn reask_or_end(
        &mut self,
        candidate: StructuredCandidate,
        problem: &str,
        said: Option<&str>,
    ) -> Next<G::Out> {
        if self.reasks < self.reask_budget() {
            self.reasks += 1;
            self.forget_earlier_reasks();
            push_reask(
                &mut self.turns,
                candidate,
                problem,
                self.config.max_echo_bytes,
            );
            return Next::Ask;
        }
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
            Some((value, _)) => done(Err(RunError::new(
                RunErrorKind::RetriesExhausted {
                    last_value: value,
                    errors,
                },
                ledger,
            ))),
            None => done(Err(RunError::new(
                RunErrorKind::NoStructuredOutput { errors },
                ledger,
            ))),
        }
    }
}

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

/// A rejection that is the provider refusing the schema itself, read as what it is: the
/// schema refused, with the likely cause its wire file knows (a fallback chain moves on).
fn schema_refused(
    kind: ProviderKind,
    target: SchemaTarget,
    error: &TransportError,
) -> Option<LowerReport> {
    let TransportError::Rejected { status, body } = error else {
        return None;
    };
    // A schema lowered for Gemini (behind a passthrough too) is refused in Gemini's words.
    let api = match target {
        SchemaTarget::GeminiJsonSchema | SchemaTarget::GeminiResponseSchema => WireApi::Gemini,
        _ => kind.wire_api(),
    };
    let reason = schema_refusal(api, *status, body)?;
    Some(LowerReport {
        target,
        errors: vec![LowerError {
            target,
            path: Pointer::root(),
            reason,
        }],
    })
}

/// The type's defaults: the last value with every field that broke a rule taken out, then
/// filled with typed defaults (missing-field recovery, forced on). `None` when a field has no
/// default that fits (an enum, or a range that excludes zero). The value is read where it is.
fn defaults<G: Target>(
    goal: &G,
    schema: &ResponseSchema,
    last: Option<&(Value, Violations)>,
    policy: &CoercePolicy,
    choose: bool,
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
    if choose {
        coerce_choosing(&mut value, schema, &policy);
    } else {
        coerce(&mut value, schema, &policy);
    }
    goal.checked(&value)
}

impl<G: Target> Run<'_, G> {
    /// The answer was stopped where a completed value broke a rule: recorded as invalid with
    /// those violations, and re-asked with them (the answer so far repeated) while re-asks last.
    pub(super) fn stopped_on(
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
        let candidate = StructuredCandidate {
            answer: Answer::Text(reader.text().unwrap_or_default().to_owned()),
            tool_call: None,
        };
        self.reask_or_end(candidate, &problem, reader.text())
    }
}

/// Anthropic's per-request caps over an agent step's request: the output schema as sent (and its
/// tool, which is strict), then each of the caller's strict tools. Checked before any request,
/// each cap crossed named where it is crossed.
fn anthropic_caps(
    tools: &[crate::provider::wire::Tool],
    mode: StructuredOutputMode,
    schema: &ResponseSchema,
) -> Result<(), LowerReport> {
    let mut caps = crate::provider::dialect::RequestCaps::default();
    if let Ok(sent) = schema.lowered(SchemaTarget::Anthropic) {
        if mode == StructuredOutputMode::ToolUseWorkaround {
            caps.strict_tool(schema.name());
        }
        caps.schema("the output schema", sent);
    }
    for tool in tools.iter().filter(|t| t.strict) {
        caps.strict_tool(&tool.name);
        caps.schema(
            &format!("the caller's tool `{}`", tool.name),
            &tool.parameters,
        );
    }
    caps.check()
}

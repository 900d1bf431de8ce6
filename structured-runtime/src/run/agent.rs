//! An agent step: the caller's own tools offered beside the structured-output tool (the
//! finalizer). It is a state of the one run (`run/machine.rs`), not a loop of its own: the same
//! deadline, transport retries, checks before the first request and warnings hold for it.
//!
//! Calls to the caller's tools are answered by the caller's handler and the run goes on; the
//! finalizer, called alone with arguments that fit, ends the run with the value. What one
//! answer may make the run do is bounded: at most [`AgentStep::max_calls_per_answer`] calls are
//! run and sent back (within the run's echo cap), the rest are answered by a note that they were
//! not run, and a call to a tool that does not exist is answered with an error. An invalid
//! finalizer call is answered with an error tool result naming every violation and spends a
//! step; plain-text answers are asked again up to a bound of consecutive ones; the step budget
//! ends the run with [`RunErrorKind::StepBudget`](super::RunErrorKind::StepBudget), never with a value
//! that was not given.

use crate::provider::wire::{Tool, ToolCall, Turn};
use crate::read::parse::Answer;

/// How an agent step is bounded.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentStep {
    /// The caller's tools.
    pub tools: Vec<Tool>,
    /// Requests at most (every model turn counts, transport retries included).
    pub max_steps: u32,
    /// Plain-text answers in a row at most (a tool call resets the count).
    pub max_text_only: u32,
    /// Tool calls one answer may have run and sent back; the rest are answered with a note
    /// that they were not run.
    pub max_calls_per_answer: usize,
}

impl AgentStep {
    /// These tools, 10 steps, 5 text-only answers in a row, 8 calls an answer.
    pub fn new(tools: Vec<Tool>) -> Self {
        AgentStep {
            tools,
            max_steps: 10,
            max_text_only: 5,
            max_calls_per_answer: 8,
        }
    }

    /// Why these tools cannot be offered beside the finalizer `finalizer`: a tool of the
    /// caller's with its name (the model could not tell them apart, and the caller's handler
    /// would never run), or two with one name.
    pub(super) fn clash(&self, finalizer: &str) -> Option<String> {
        if let Some(tool) = self.tools.iter().find(|t| t.name == finalizer) {
            return Some(format!(
                "the caller's tool `{}` has the name of the structured-output tool `{finalizer}` (the schema's name): rename the tool or the schema",
                tool.name
            ));
        }
        self.tools.iter().enumerate().find_map(|(i, t)| {
            self.tools[..i]
                .iter()
                .any(|earlier| earlier.name == t.name)
                .then(|| format!("two of the caller's tools are named `{}`", t.name))
        })
    }
}

/// The agent step of one run: its bounds, the handler that answers the caller's tools, and the
/// plain-text answers in a row so far.
pub(super) struct Agent<'a> {
    pub(super) step: &'a AgentStep,
    handle: &'a mut (dyn FnMut(&str, &Answer) -> String + Send),
    pub(super) text_only: u32,
}

impl<'a> Agent<'a> {
    pub(super) fn new(
        step: &'a AgentStep,
        handle: &'a mut (dyn FnMut(&str, &Answer) -> String + Send),
    ) -> Self {
        Agent {
            step,
            handle,
            text_only: 0,
        }
    }

    /// The same step, borrowed for a shorter run (a run's references all share one lifetime).
    pub(super) fn reborrow(&mut self) -> Agent<'_> {
        Agent {
            step: self.step,
            handle: &mut *self.handle,
            text_only: self.text_only,
        }
    }

    /// The turns that answer one answer's tool calls: each call run by the handler (or
    /// answered with an error: an unknown tool, the finalizer called beside others), at most
    /// [`AgentStep::max_calls_per_answer`] of them and within `max_echo` bytes of arguments
    /// sent back; a note for the calls not run.
    pub(super) fn answer(
        &mut self,
        calls: Vec<ToolCall>,
        inputs: Vec<Answer>,
        finalizer: &str,
        max_echo: usize,
    ) -> Vec<Turn> {
        let finalizer_too = calls.iter().any(|c| c.name == finalizer);
        let max = self.step.max_calls_per_answer;
        let (mut turns, mut echoed, mut not_run) = (Vec::new(), 0usize, 0usize);
        for (i, (call, input)) in calls.into_iter().zip(inputs).enumerate() {
            if i >= max {
                not_run += 1;
                continue;
            }
            let size = input.to_text().len();
            if echoed.saturating_add(size) > max_echo {
                not_run += 1;
                continue;
            }
            echoed += size;
            let known = self.step.tools.iter().any(|t| t.name == call.name);
            let answer = if finalizer_too {
                Err(format!(
                    "`{finalizer}` must be called alone, after the other tools have answered: call it again by itself"
                ))
            } else if known {
                Ok((self.handle)(&call.name, &input))
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
        if not_run > 0 {
            turns.push(Turn::UserText(format!(
                "{not_run} more tool calls in your answer were not run: at most {max} calls an answer are run ({max_echo} bytes of arguments). Call again what you still need."
            )));
        }
        turns
    }
}

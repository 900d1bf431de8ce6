//! A provider that answers from a script, for the runner's tests: replies in order (one that
//! never comes, to run into a deadline), every body sent recorded; the bodies and the run
//! config those tests share.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Mutex;

use serde_json::Value;
use structured_runtime::provider::capabilities::ProviderKind;
use structured_runtime::run::clock::{ManualClock, RunClock};
use structured_runtime::run::config::StructuredOutputsConfig;
use structured_runtime::run::{Provider, RunConfig, TransportError};

/// Serves scripted replies in order and records every body sent.
pub struct Scripted {
    pub kind: ProviderKind,
    pub model: &'static str,
    /// `None`: this request is never answered.
    replies: Mutex<VecDeque<Option<Result<String, TransportError>>>>,
    sent: Mutex<Vec<String>>,
}

impl Scripted {
    /// Answers with `replies`, in order; then a connection error.
    pub fn new(
        kind: ProviderKind,
        model: &'static str,
        replies: Vec<Result<String, TransportError>>,
    ) -> Self {
        Scripted {
            kind,
            model,
            replies: Mutex::new(replies.into_iter().map(Some).collect()),
            sent: Mutex::new(Vec::new()),
        }
    }

    /// Never answers its first request.
    pub fn silent(kind: ProviderKind, model: &'static str) -> Self {
        let p = Scripted::new(kind, model, Vec::new());
        p.replies.lock().unwrap().push_back(None);
        p
    }

    /// Requests sent so far.
    pub fn calls(&self) -> usize {
        self.sent.lock().unwrap().len()
    }

    /// The `i`th body sent, as JSON.
    pub fn body(&self, i: usize) -> Value {
        serde_json::from_str(&self.sent.lock().unwrap()[i]).expect("the runner sends JSON")
    }

    /// The `i`th body's length in bytes.
    pub fn body_len(&self, i: usize) -> usize {
        self.sent.lock().unwrap()[i].len()
    }
}

impl Provider for Scripted {
    fn kind(&self) -> ProviderKind {
        self.kind
    }
    fn model(&self) -> &str {
        self.model
    }
    fn send(&self, body: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
        self.sent.lock().unwrap().push(body.to_owned());
        let reply = self.replies.lock().unwrap().pop_front().unwrap_or(Some(Err(
            TransportError::Connection("script ran out".into()),
        )));
        async move {
            match reply {
                Some(reply) => reply,
                None => std::future::pending().await,
            }
        }
    }
}

/// A `DaimonAppraisal` that fits.
pub const GOOD: &str = r#"{"pleasure": 0.2, "arousal": 0.5, "dominance": -0.1, "primary_emotion": "anticipation", "secondary_emotion": null, "trigger": "funding flipped", "memory_bias": "recent"}"#;
/// A `DaimonAppraisal` whose `pleasure` is out of range.
pub const OUT_OF_RANGE: &str = r#"{"pleasure": 1.7, "arousal": 0.5, "dominance": -0.1, "primary_emotion": "anticipation", "secondary_emotion": null, "trigger": "funding flipped", "memory_bias": "recent"}"#;

/// An OpenAI Chat body answering with `content` (100 prompt and 40 completion tokens).
pub fn openai_text(content: &str) -> Result<String, TransportError> {
    Ok(
        serde_json::json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": content, "refusal": null}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 40}})
        .to_string(),
    )
}

/// An OpenAI Chat body calling tools: `(id, name, arguments)` each.
pub fn openai_calls(calls: &[(&str, &str, &str)]) -> Result<String, TransportError> {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| serde_json::json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}}))
        .collect();
    Ok(
        serde_json::json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": null, "tool_calls": calls}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5}})
        .to_string(),
    )
}

/// The default run with `max_retries` re-asks, on a clock whose time moves only when the run
/// sleeps (a transport retry waits no real time).
pub fn config(max_retries: u32) -> RunConfig {
    RunConfig {
        outputs: StructuredOutputsConfig {
            max_retries,
            ..StructuredOutputsConfig::default()
        },
        clock: RunClock::new(ManualClock::default()),
        ..RunConfig::default()
    }
}

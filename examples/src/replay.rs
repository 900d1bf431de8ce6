//! A provider that replays recorded answers, for the demo and for tests: each request gets the
//! next answer of its script, wrapped in the envelope the provider kind sends.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Mutex;

use serde_json::{json, Value};
use structured_runtime::provider::capabilities::ProviderKind;
use structured_runtime::run::{Provider, TransportError};

/// One recorded answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// The model's text (or, for a forced tool, the tool call's input).
    Answer(String),
    /// Cut by the token limit after this much.
    Truncated(String),
    /// A refusal with this explanation.
    Refused(String),
}

/// Replays a script of answers for one provider kind and model.
pub struct ReplayProvider {
    kind: ProviderKind,
    model: String,
    tool: String,
    script: Mutex<VecDeque<Reply>>,
    sent: Mutex<Vec<String>>,
}

impl ReplayProvider {
    /// `kind`/`model` decide the mode the runner picks; `tool` is the tool name a tool-mode
    /// answer calls (the schema's name).
    pub fn new(kind: ProviderKind, model: &str, tool: &str, script: Vec<Reply>) -> Self {
        ReplayProvider {
            kind,
            model: model.to_owned(),
            tool: tool.to_owned(),
            script: Mutex::new(script.into()),
            sent: Mutex::new(Vec::new()),
        }
    }

    /// Every request body sent so far, in order.
    pub fn sent(&self) -> Vec<Value> {
        let sent = self.sent.lock().map(|s| s.clone()).unwrap_or_default();
        sent.iter()
            .map(|body| serde_json::from_str(body).unwrap_or(Value::Null))
            .collect()
    }

    fn envelope(&self, reply: Reply) -> Value {
        let anthropic = self.kind == ProviderKind::Anthropic;
        // A forced tool on Anthropic answers with a tool_use block; everything else here is
        // OpenAI Chat's shape (the passthrough gateway and OpenAI itself).
        match (anthropic, reply) {
            (true, Reply::Answer(input)) => json!({
                "type": "message", "role": "assistant", "stop_reason": "tool_use",
                "content": [{"type": "tool_use", "id": "toolu_replay", "name": self.tool,
                             "input": serde_json::from_str::<Value>(&input).unwrap_or(Value::String(input))}],
                "usage": {"input_tokens": 420, "output_tokens": 96}
            }),
            (true, Reply::Truncated(partial)) => json!({
                "type": "message", "role": "assistant", "stop_reason": "max_tokens",
                "content": [{"type": "tool_use", "id": "toolu_replay", "name": self.tool, "input": partial}],
                "usage": {"input_tokens": 420, "output_tokens": 64}
            }),
            (true, Reply::Refused(why)) => json!({
                "type": "message", "role": "assistant", "stop_reason": "refusal",
                "stop_details": {"type": "refusal", "category": null, "explanation": why},
                "content": [], "usage": {"input_tokens": 420, "output_tokens": 0}
            }),
            (false, Reply::Answer(text)) => chat(json!(text), Value::Null, "stop"),
            (false, Reply::Truncated(text)) => chat(json!(text), Value::Null, "length"),
            (false, Reply::Refused(why)) => chat(Value::Null, json!(why), "stop"),
        }
    }
}

fn chat(content: Value, refusal: Value, finish: &str) -> Value {
    json!({
        "choices": [{"index": 0, "finish_reason": finish,
                     "message": {"role": "assistant", "content": content, "refusal": refusal}}],
        "usage": {"prompt_tokens": 380, "completion_tokens": 88}
    })
}

impl Provider for ReplayProvider {
    fn kind(&self) -> ProviderKind {
        self.kind
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn send(&self, body: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
        if let Ok(mut sent) = self.sent.lock() {
            sent.push(body.to_owned());
        }
        let next = self.script.lock().ok().and_then(|mut s| s.pop_front());
        let reply = match next {
            Some(reply) => Ok(self.envelope(reply).to_string()),
            None => Err(TransportError::Connection(
                "the replay script ran out".into(),
            )),
        };
        async move { reply }
    }
}

/// Runs a future to completion on the current thread: enough for a provider whose futures are
/// ready at once, as the replay provider's are.
pub fn block_on<F: Future>(future: F) -> F::Output {
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};
    struct Noop;
    impl Wake for Noop {
        fn wake(self: Arc<Self>) {}
    }
    let waker = Waker::from(Arc::new(Noop));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::yield_now();
    }
}

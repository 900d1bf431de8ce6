//! Ollama's native `/api/chat`: `format` with the schema, `tools` the model calls when it chooses
//! (the API has no tool choice: nothing forces one), OpenAI-shaped messages with tool arguments
//! as objects, `options.num_predict`, one unstreamed message.

use serde_json::{json, Value};

use super::chat::{ChatRequest, Turn};
use super::envelope::{decide, Reader, Signals};
use super::json::{object, put, Json};
use super::openai_chat::messages;
use super::sse::{data, problem, Event};
use super::types::{CodecError, Expect, ProviderResponse, ToolCall, WireApi};
use crate::read::Answer;

/// `format` with the schema.
pub(super) fn schema_fragment(schema: Value) -> Value {
    object([("format", schema)])
}

/// The schema as one function tool, offered: Ollama has no tool choice, so the model calls it
/// when it chooses (an agent step's finalizer; the run bounds the text-only answers).
pub(super) fn tool_fragment(name: &str, description: Option<&str>, schema: Value) -> Value {
    let mut function = object([("name", Value::from(name)), ("parameters", schema)]);
    put(&mut function, "description", description);
    json!({"tools": [{"type": "function", "function": function}]})
}

pub(super) fn body<'a>(
    model: &'a str,
    request: &'a ChatRequest,
    max_tokens: Option<u32>,
    system: Option<String>,
    turns: &'a [Turn],
) -> Json<'a> {
    let mut body = Json::object([
        ("model", model.into()),
        (
            "messages",
            Json::Array(messages(request, system, turns, true)),
        ),
        ("stream", false.into()),
    ]);
    if let Some(n) = max_tokens {
        body.push("options", Json::object([("num_predict", n.into())]));
    }
    body
}

pub(super) fn read(r: &Reader<'_>, expect: &Expect) -> Result<ProviderResponse, CodecError> {
    if !r.body.get("message").is_some_and(Value::is_object) {
        return Err(r.shape("/message", "a message object"));
    }
    let done = r.opt_str("/done_reason")?;
    let text = r
        .opt_str("/message/content")?
        .filter(|t| !t.is_empty())
        .map(str::to_owned);
    let mut calls = Vec::new();
    for call in r.opt_array("/message/tool_calls")? {
        let name = call
            .pointer("/function/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let arguments = match call.pointer("/function/arguments") {
            Some(Value::String(s)) => Answer::Text(s.clone()),
            Some(v) => Answer::Json(v.clone()),
            None => Answer::Json(json!({})),
        };
        calls.push((
            ToolCall {
                id: None,
                name: name.to_owned(),
            },
            arguments,
        ));
    }
    let outcome = decide(
        expect,
        Signals {
            truncated: done.filter(|d| *d == "length"),
            filtered: None,
            refusal: None,
            text,
            calls,
            malformed_call: None,
        },
    );
    Ok(ProviderResponse {
        outcome,
        usage: r.usage("/prompt_eval_count", "/eval_count", None),
        stop_reason: done.map(str::to_owned),
    })
}

/// A streamed `/api/chat` (one JSON object a line) assembled: the message's content joined, the
/// last line's `done_reason` and counts kept. A stream without a `"done": true` line was cut.
#[derive(Default)]
pub(super) struct Assembler {
    content: String,
    calls: Vec<Value>,
    last: Option<Value>,
    error: Option<Value>,
}

impl Assembler {
    /// Takes one line; the answer's text it brings is added to `answer` (Ollama forces no
    /// tool: the answer is the content).
    pub(super) fn event(
        &mut self,
        event: &Event,
        _expect: &Expect,
        answer: &mut String,
    ) -> Result<(), CodecError> {
        if self.last.is_some() || self.error.is_some() {
            return Ok(());
        }
        let line = data(WireApi::OllamaChat, event)?;
        if let Some(error) = line.get("error") {
            self.error = Some(error.clone());
            return Ok(());
        }
        if let Some(Value::String(piece)) = line.pointer("/message/content") {
            self.content.push_str(piece);
            answer.push_str(piece);
        }
        if let Some(Value::Array(calls)) = line.pointer("/message/tool_calls") {
            self.calls.extend(calls.iter().take(1024).cloned());
        }
        if line.get("done").and_then(Value::as_bool) == Some(true) {
            self.last = Some(line);
        }
        Ok(())
    }

    /// The message the API sends unstreamed.
    pub(super) fn finish(self) -> Result<Value, CodecError> {
        if let Some(error) = self.error {
            return Ok(json!({ "error": error }));
        }
        let Some(Value::Object(mut last)) = self.last else {
            return Err(problem(
                WireApi::OllamaChat,
                "the stream ended without a `\"done\": true` line: it was cut",
            ));
        };
        let mut message = json!({"role": "assistant", "content": self.content});
        if let (false, Value::Object(m)) = (self.calls.is_empty(), &mut message) {
            m.insert("tool_calls".into(), Value::Array(self.calls));
        }
        last.insert("message".into(), message);
        Ok(Value::Object(last))
    }
}

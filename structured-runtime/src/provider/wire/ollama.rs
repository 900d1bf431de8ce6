//! Ollama's native `/api/chat`: `format` with the schema (nothing forces a tool), OpenAI-shaped
//! messages with tool arguments as objects, `options.num_predict`, one unstreamed message.

use serde_json::{json, Map, Value};

use super::chat::{ChatRequest, Turn};
use super::envelope::{decide, Reader, Signals};
use super::json::object;
use super::openai_chat::messages;
use super::types::{CodecError, Expect, ProviderResponse, ToolCall};
use crate::read::Answer;

/// `format` with the schema.
pub(super) fn schema_fragment(schema: Value) -> Value {
    object([("format", schema)])
}

pub(super) fn body(
    model: &str,
    request: &ChatRequest,
    system: Option<String>,
    turns: &[Turn],
) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), Value::from(model));
    body.insert(
        "messages".into(),
        Value::Array(messages(request, system, turns, true)),
    );
    body.insert("stream".into(), Value::Bool(false));
    if let Some(n) = request.max_tokens {
        body.insert("options".into(), json!({"num_predict": n}));
    }
    Value::Object(body)
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

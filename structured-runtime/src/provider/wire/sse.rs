//! Server-sent-event streams assembled into the envelope the provider sends unstreamed, so one
//! reader serves both. A stream without its final event (`data: [DONE]` for OpenAI,
//! `message_stop` for Anthropic) was cut, and is an error rather than a short answer.

use serde_json::{json, Map, Value};

use super::{CodecError, WireApi};

/// One event: its `event:` name, if any, and its `data:` lines joined.
struct Event {
    name: Option<String>,
    data: String,
    /// 1-based line where the event starts, for error messages.
    line: usize,
}

/// Splits SSE text into events (blank-line separated; `:` comments and unknown fields skipped).
fn events(text: &str) -> Vec<Event> {
    let mut out = Vec::new();
    let mut name = None;
    let mut data: Option<String> = None;
    let mut start = 1;
    for (i, line) in text.lines().enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            if let Some(data) = data.take() {
                out.push(Event {
                    name: name.take(),
                    data,
                    line: start,
                });
            }
            name = None;
            start = i + 2;
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => name = Some(value.to_owned()),
            "data" => {
                let d = data.get_or_insert_with(String::new);
                if !d.is_empty() {
                    d.push('\n');
                }
                d.push_str(value);
            }
            _ => {}
        }
    }
    if let Some(data) = data {
        out.push(Event {
            name,
            data,
            line: start,
        });
    }
    out
}

pub(super) fn assemble(api: WireApi, text: &str) -> Result<Value, CodecError> {
    let problem = |problem: String| CodecError::Stream { api, problem };
    let parse = |e: &Event| {
        serde_json::from_str::<Value>(&e.data)
            .map_err(|err| problem(format!("event at line {} is not JSON: {err}", e.line)))
    };
    match api {
        WireApi::OpenAiChat => openai_chat(text, parse, problem),
        WireApi::Anthropic => anthropic(text, parse, problem),
        other => Err(problem(format!(
            "streams of {other:?} are not assembled by this crate"
        ))),
    }
}

fn openai_chat(
    text: &str,
    parse: impl Fn(&Event) -> Result<Value, CodecError>,
    problem: impl Fn(String) -> CodecError,
) -> Result<Value, CodecError> {
    let mut content: Option<String> = None;
    let mut refusal: Option<String> = None;
    let mut finish = Value::Null;
    let mut usage = Value::Null;
    // Tool calls by their `index`: id, name, arguments so far.
    let mut calls: Vec<(Value, String, String)> = Vec::new();
    let mut done = false;
    for event in events(text) {
        if event.data.trim() == "[DONE]" {
            done = true;
            break;
        }
        let chunk = parse(&event)?;
        if let Some(error) = chunk.get("error") {
            return Ok(json!({ "error": error }));
        }
        if let Some(u) = chunk.get("usage").filter(|u| !u.is_null()) {
            usage = u.clone();
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            continue;
        };
        let delta = choice.get("delta");
        let append = |slot: &mut Option<String>, piece: Option<&Value>| {
            if let Some(Value::String(s)) = piece {
                slot.get_or_insert_with(String::new).push_str(s);
            }
        };
        append(&mut content, delta.and_then(|d| d.get("content")));
        append(&mut refusal, delta.and_then(|d| d.get("refusal")));
        for call in delta
            .and_then(|d| d.get("tool_calls"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
            let index = usize::try_from(index)
                .map_err(|_| problem(format!("tool call index {index} out of range")))?;
            if index > calls.len() + 64 {
                return Err(problem(format!("tool call index {index} skips ahead")));
            }
            while calls.len() <= index {
                calls.push((Value::Null, String::new(), String::new()));
            }
            if let Some(slot) = calls.get_mut(index) {
                if let Some(id) = call.get("id").filter(|v| v.is_string()) {
                    slot.0 = id.clone();
                }
                if let Some(Value::String(n)) = call.pointer("/function/name") {
                    slot.1.push_str(n);
                }
                if let Some(Value::String(a)) = call.pointer("/function/arguments") {
                    slot.2.push_str(a);
                }
            }
        }
        if let Some(f) = choice.get("finish_reason").filter(|f| !f.is_null()) {
            finish = f.clone();
        }
    }
    if !done {
        return Err(problem(
            "the stream ended without `data: [DONE]`: it was cut".into(),
        ));
    }
    let mut message = Map::new();
    message.insert("role".into(), "assistant".into());
    message.insert("content".into(), content.map_or(Value::Null, Value::String));
    // A refusal stream opens with `refusal: ""`; only text counts as a refusal.
    message.insert(
        "refusal".into(),
        refusal
            .filter(|r| !r.is_empty())
            .map_or(Value::Null, Value::String),
    );
    if !calls.is_empty() {
        let calls = calls
            .into_iter()
            .map(|(id, name, arguments)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}))
            .collect();
        message.insert("tool_calls".into(), Value::Array(calls));
    }
    Ok(json!({
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }))
}

fn anthropic(
    text: &str,
    parse: impl Fn(&Event) -> Result<Value, CodecError>,
    problem: impl Fn(String) -> CodecError,
) -> Result<Value, CodecError> {
    let mut message: Option<Value> = None;
    // Content blocks by index, with the partial JSON of tool inputs.
    let mut blocks: Vec<(Value, String)> = Vec::new();
    let mut stopped = false;
    for event in events(text) {
        let data = parse(&event)?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .or(event.name.as_deref())
            .unwrap_or_default();
        let index = || {
            data.get("index")
                .and_then(Value::as_u64)
                .and_then(|i| usize::try_from(i).ok())
                .ok_or_else(|| problem(format!("event at line {} has no block index", event.line)))
        };
        match kind {
            "message_start" => message = data.get("message").cloned(),
            "content_block_start" => {
                let i = index()?;
                if i != blocks.len() {
                    return Err(problem(format!(
                        "block {i} started out of order at line {}",
                        event.line
                    )));
                }
                blocks.push((
                    data.get("content_block").cloned().unwrap_or(Value::Null),
                    String::new(),
                ));
            }
            "content_block_delta" => {
                let i = index()?;
                let Some((block, partial)) = blocks.get_mut(i) else {
                    return Err(problem(format!(
                        "delta for unknown block {i} at line {}",
                        event.line
                    )));
                };
                match data.pointer("/delta/type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        let piece = data
                            .pointer("/delta/text")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        if let Some(Value::String(t)) = block.get_mut("text") {
                            t.push_str(piece);
                        }
                    }
                    Some("input_json_delta") => {
                        partial.push_str(
                            data.pointer("/delta/partial_json")
                                .and_then(Value::as_str)
                                .unwrap_or_default(),
                        );
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                let Some(Value::Object(m)) = message.as_mut() else {
                    return Err(problem(format!(
                        "message_delta before message_start at line {}",
                        event.line
                    )));
                };
                if let Some(Value::Object(delta)) = data.get("delta") {
                    m.extend(delta.clone());
                }
                if let Some(Value::Object(usage)) = data.get("usage") {
                    if let Some(Value::Object(total)) = m.get_mut("usage") {
                        total.extend(usage.clone());
                    }
                }
            }
            "message_stop" => stopped = true,
            "error" => {
                return Ok(json!({ "error": data.get("error").cloned().unwrap_or(Value::Null) }))
            }
            _ => {}
        }
    }
    let Some(Value::Object(mut message)) = message else {
        return Err(problem("no message_start event".into()));
    };
    if !stopped {
        return Err(problem(
            "the stream ended without `message_stop`: it was cut".into(),
        ));
    }
    let content = blocks
        .into_iter()
        .map(|(mut block, partial)| {
            if block.get("type").and_then(Value::as_str) == Some("tool_use") && !partial.is_empty()
            {
                // Complete input is an object; input cut by `max_tokens` stays the raw text.
                let input =
                    serde_json::from_str::<Value>(&partial).unwrap_or(Value::String(partial));
                if let Value::Object(b) = &mut block {
                    b.insert("input".into(), input);
                }
            }
            block
        })
        .collect();
    message.insert("content".into(), Value::Array(content));
    Ok(Value::Object(message))
}

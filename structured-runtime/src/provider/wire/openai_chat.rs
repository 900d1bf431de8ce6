//! OpenAI Chat Completions, and the servers that speak it (Venice, OpenRouter, vLLM, llama.cpp,
//! gateways): `response_format` or a forced function tool, `messages`, `choices[0]`, and the
//! `data:` stream ending in `[DONE]`.

use std::borrow::Cow;

use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::chat::{AttachmentSource, ChatRequest, Role, Turn};
use super::envelope::{decide, Reader, Signals};
use super::json::{merge, object, put, Json};
use super::sse::{data, problem, Event};
use super::types::{CodecError, Expect, ProviderResponse, ToolCall, Usage, WireApi};
use crate::provider::capabilities::ProviderKind;
use crate::read::mode::StructuredOutputMode;
use crate::read::Answer;

/// `response_format` with the schema, strict unless the schema says best effort (OpenRouter:
/// only to endpoints that honour it).
pub(super) fn schema_fragment(
    provider: ProviderKind,
    name: &str,
    description: Option<&str>,
    schema: Value,
    strict: bool,
) -> Value {
    let mut inner = object([
        ("name", Value::from(name)),
        ("schema", schema),
        ("strict", Value::Bool(strict)),
    ]);
    put(&mut inner, "description", description);
    let format = object([("type", Value::from("json_schema")), ("json_schema", inner)]);
    let mut body = object([("response_format", format)]);
    require_parameters(provider, &mut body);
    body
}

/// One function tool with the schema, forced, no parallel calls. llama.cpp's server takes
/// `tool_choice` as a string only (an object is dropped for `auto`): `required` with the one
/// tool forces it there.
pub(super) fn tool_fragment(
    provider: ProviderKind,
    name: &str,
    description: Option<&str>,
    schema: Value,
    strict: bool,
) -> Value {
    let mut function = object([
        ("name", Value::from(name)),
        ("parameters", schema),
        ("strict", Value::Bool(strict)),
    ]);
    put(&mut function, "description", description);
    let tool = object([("type", Value::from("function")), ("function", function)]);
    let mut body = object([
        ("tools", Value::Array(vec![tool])),
        (
            "tool_choice",
            match provider {
                ProviderKind::LlamaCpp => Value::from("required"),
                _ => json!({"type": "function", "function": {"name": name}}),
            },
        ),
        ("parallel_tool_calls", Value::Bool(false)),
    ]);
    require_parameters(provider, &mut body);
    body
}

/// OpenRouter routes only to endpoints that honour the structured-output parameters.
fn require_parameters(provider: ProviderKind, body: &mut Value) {
    if provider == ProviderKind::OpenRouter {
        merge(body, &json!({"provider": {"require_parameters": true}}));
    }
}

pub(super) fn role(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

/// The `messages` list: system, the caller's messages, then the re-ask turns. Tool-call
/// arguments go back as a string (OpenAI) or as an object (`arguments_as_object`, Ollama).
pub(super) fn messages<'a>(
    request: &'a ChatRequest,
    system: Option<String>,
    turns: &'a [Turn],
    arguments_as_object: bool,
) -> Vec<Json<'a>> {
    let mut messages = Vec::with_capacity(request.messages.len() + turns.len() + 1);
    if let Some(system) = system {
        messages.push(message("system", Json::Text(system)));
    }
    for m in &request.messages {
        if m.attachments.is_empty() {
            messages.push(message(role(m.role), Json::from(&m.text)));
        } else if arguments_as_object {
            // Ollama: the text, and the images beside it as base64.
            let images = m
                .attachments
                .iter()
                .filter_map(|a| match &a.source {
                    AttachmentSource::Base64(data) => Some(Json::from(data)),
                    AttachmentSource::Url(_) => None,
                })
                .collect();
            let mut msg = message(role(m.role), Json::from(&m.text));
            msg.push("images", Json::Array(images));
            messages.push(msg);
        } else {
            let mut parts = vec![Json::object([
                ("type", "text".into()),
                ("text", Json::from(&m.text)),
            ])];
            for a in &m.attachments {
                parts.push(if a.is_pdf() {
                    let file = Json::object([
                        ("filename", "document.pdf".into()),
                        ("file_data", Json::attachment_url(a)),
                    ]);
                    Json::object([("type", "file".into()), ("file", file)])
                } else {
                    let url = Json::object([("url", Json::attachment_url(a))]);
                    Json::object([("type", "image_url".into()), ("image_url", url)])
                });
            }
            messages.push(message(role(m.role), Json::Array(parts)));
        }
    }
    for turn in turns {
        messages.push(match turn {
            Turn::AssistantText(text) => message("assistant", Json::from(text)),
            Turn::AssistantToolCall { id, name, input } => {
                let arguments = if arguments_as_object {
                    Json::Value(super::json::input_object(input))
                } else {
                    input.to_text().into()
                };
                let function = Json::object([("name", name.into()), ("arguments", arguments)]);
                let call = Json::object([
                    ("id", Json::or_null(id.as_deref())),
                    ("type", "function".into()),
                    ("function", function),
                ]);
                Json::object([
                    ("role", "assistant".into()),
                    ("content", Json::Null),
                    ("tool_calls", Json::Array(vec![call])),
                ])
            }
            Turn::UserText(text) => message("user", Json::from(text)),
            Turn::ToolError { id, name, text } | Turn::ToolResult { id, name, text } => {
                Json::object([
                    ("role", "tool".into()),
                    ("tool_call_id", Json::or_null(id.as_deref())),
                    ("name", name.into()),
                    ("content", text.into()),
                ])
            }
        });
    }
    messages
}

/// One `{"role": .., "content": ..}` message.
fn message<'a>(role: &'a str, content: Json<'a>) -> Json<'a> {
    Json::object([("role", role.into()), ("content", content)])
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
            Json::Array(messages(request, system, turns, false)),
        ),
    ]);
    if let Some(n) = max_tokens {
        body.push("max_tokens", n.into());
    }
    body
}

pub(super) fn read(r: &Reader<'_>, expect: &Expect) -> Result<ProviderResponse, CodecError> {
    // The first choice is the answer (a request for `n > 1` reads the others itself).
    let choices = r.array("/choices")?;
    if choices.is_empty() {
        return Err(r.shape("/choices", "at least one choice"));
    }
    let mut calls = Vec::new();
    for i in 0..r.opt_array("/choices/0/message/tool_calls")?.len() {
        let base = format!("/choices/0/message/tool_calls/{i}");
        let name = r
            .opt_str(&format!("{base}/function/name"))?
            .ok_or_else(|| r.shape(&format!("{base}/function/name"), "a tool name"))?;
        let id = r.at(&format!("{base}/id")).and_then(Value::as_str);
        let arguments = r.opt_str(&format!("{base}/function/arguments"))?;
        calls.push(Call {
            id: id.map_or(Scalar::Other, |id| Scalar::Text(Cow::Borrowed(id))),
            function: Function {
                name: Some(Cow::Borrowed(name)),
                arguments: arguments.map(Cow::Borrowed),
            },
        });
    }
    let message = Message {
        content: r.opt_str("/choices/0/message/content")?.map(Cow::Borrowed),
        refusal: r.opt_str("/choices/0/message/refusal")?.map(Cow::Borrowed),
        tool_calls: Some(calls),
    };
    let finish = r.opt_str("/choices/0/finish_reason")?.map(Cow::Borrowed);
    let usage = r.usage(
        "/usage/prompt_tokens",
        "/usage/completion_tokens",
        Some("/usage/prompt_tokens_details/cached_tokens"),
    );
    Ok(respond(finish, message, usage, expect))
}

/// A body read where it lies, into the fields the answer is made of: no `Value` built, no key
/// hashed, nothing else looked at. `None` when the body is anything but the plain shape (not
/// JSON, a field of another type, an `error`, no choice, a key given twice among the fields
/// read): [`read`] then reads it as a `Value` and says exactly what is wrong. What it returns
/// is what [`read`] returns for the same body (`tests/tests/codecs.rs` checks both on every
/// recorded body).
pub(super) fn read_in_place(body: &str, expect: &Expect) -> Option<ProviderResponse> {
    let parsed: InPlace<'_> = serde_json::from_str(body).ok()?;
    if parsed.error.is_some() {
        return None;
    }
    let choice = parsed.choices?.into_iter().next()?;
    let message = choice.message.unwrap_or_default();
    let mut calls = message.tool_calls.as_deref().unwrap_or_default().iter();
    if calls.any(|c| c.function.name.is_none()) {
        return None;
    }
    let usage = parsed.usage.and_then(|u| {
        let (input, output) = (u.prompt_tokens.as_u64(), u.completion_tokens.as_u64());
        let cached = u
            .prompt_tokens_details
            .and_then(|d| d.cached_tokens.as_u64());
        (input.is_some() || output.is_some()).then(|| Usage {
            input_tokens: input.unwrap_or(0),
            output_tokens: output.unwrap_or(0),
            cached_input_tokens: cached.unwrap_or(0),
        })
    });
    Some(respond(choice.finish_reason, message, usage, expect))
}

/// The answer from the fields of the first choice, however they were read.
fn respond(
    finish: Option<Cow<'_, str>>,
    message: Message<'_>,
    usage: Option<Usage>,
    expect: &Expect,
) -> ProviderResponse {
    let finish = finish.map(Cow::into_owned);
    let calls = message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .map(|call| {
            (
                ToolCall {
                    id: call.id.into_text().map(Cow::into_owned),
                    name: call.function.name.map(Cow::into_owned).unwrap_or_default(),
                },
                Answer::Text(
                    call.function
                        .arguments
                        .map(Cow::into_owned)
                        .unwrap_or_default(),
                ),
            )
        })
        .collect();
    let outcome = decide(
        expect,
        Signals {
            truncated: (finish.as_deref() == Some("length")).then_some("length"),
            filtered: (finish.as_deref() == Some("content_filter")).then_some("content_filter"),
            refusal: message
                .refusal
                .filter(|r| !r.is_empty())
                .map(|r| (Some(r.into_owned()), None)),
            text: message.content.map(Cow::into_owned),
            calls,
            malformed_call: None,
        },
    );
    ProviderResponse {
        outcome,
        usage,
        stop_reason: finish,
    }
}

/// The fields of a body [`read_in_place`] reads; every other field is skipped unread.
#[derive(Deserialize)]
struct InPlace<'a> {
    #[serde(borrow)]
    choices: Option<Vec<Choice<'a>>>,
    #[serde(borrow, default)]
    usage: Option<UsageIn<'a>>,
    #[serde(default)]
    error: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(borrow, default)]
    finish_reason: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    message: Option<Message<'a>>,
}

#[derive(Deserialize, Default)]
struct Message<'a> {
    #[serde(borrow, default)]
    content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    refusal: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    tool_calls: Option<Vec<Call<'a>>>,
}

#[derive(Deserialize)]
struct Call<'a> {
    #[serde(borrow, default)]
    id: Scalar<'a>,
    #[serde(borrow)]
    function: Function<'a>,
}

#[derive(Deserialize)]
struct Function<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct UsageIn<'a> {
    #[serde(borrow, default)]
    prompt_tokens: Scalar<'a>,
    #[serde(borrow, default)]
    completion_tokens: Scalar<'a>,
    #[serde(borrow, default)]
    prompt_tokens_details: Option<Details<'a>>,
}

#[derive(Deserialize)]
struct Details<'a> {
    #[serde(borrow, default)]
    cached_tokens: Scalar<'a>,
}

/// A field [`read`] takes loosely (a call's `id` as a string, a token count as a whole number,
/// anything else as nothing): any JSON is accepted, and only those two kinds are kept.
#[derive(Default)]
enum Scalar<'a> {
    Text(Cow<'a, str>),
    Count(u64),
    #[default]
    Other,
}

impl<'a> Scalar<'a> {
    fn as_u64(&self) -> Option<u64> {
        match self {
            Scalar::Count(n) => Some(*n),
            _ => None,
        }
    }

    fn into_text(self) -> Option<Cow<'a, str>> {
        match self {
            Scalar::Text(text) => Some(text),
            _ => None,
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Scalar<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct Loose<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Loose<'a> {
            type Value = Scalar<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Scalar::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Scalar::Text(Cow::Owned(v.to_owned())))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Scalar::Count(v))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Scalar::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Scalar::Other)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Scalar::Other)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Scalar::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
        }
        de.deserialize_any(Loose(std::marker::PhantomData))
    }
}

/// Tool calls in one streamed answer, at most.
const MAX_STREAMED_CALLS: usize = 1024;

/// A stream's `data:` chunks assembled into the body the API sends unstreamed. A stream
/// without `data: [DONE]` was cut.
#[derive(Default)]
pub(super) struct Assembler {
    content: Option<String>,
    refusal: Option<String>,
    finish: Value,
    usage: Value,
    /// Tool calls by their `index`: id, name, arguments so far.
    calls: Vec<(Value, String, String)>,
    done: bool,
    /// An error chunk ends the stream: the body is that error.
    error: Option<Value>,
}

impl Assembler {
    /// Takes one event; the structured answer's text it brings (the content, or the forced
    /// tool's arguments) is added to `answer`.
    pub(super) fn event(
        &mut self,
        event: &Event,
        expect: &Expect,
        answer: &mut String,
    ) -> Result<(), CodecError> {
        const API: WireApi = WireApi::OpenAiChat;
        if self.done || self.error.is_some() {
            return Ok(());
        }
        if event.data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk = data(API, event)?;
        if let Some(error) = chunk.get("error") {
            self.error = Some(error.clone());
            return Ok(());
        }
        if let Some(u) = chunk.get("usage").filter(|u| !u.is_null()) {
            self.usage = u.clone();
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            return Ok(());
        };
        let tool_mode = expect.mode == StructuredOutputMode::ToolUseWorkaround;
        let delta = choice.get("delta");
        if let Some(Value::String(piece)) = delta.and_then(|d| d.get("content")) {
            self.content.get_or_insert_with(String::new).push_str(piece);
            if !tool_mode {
                answer.push_str(piece);
            }
        }
        if let Some(Value::String(piece)) = delta.and_then(|d| d.get("refusal")) {
            self.refusal.get_or_insert_with(String::new).push_str(piece);
        }
        for call in delta
            .and_then(|d| d.get("tool_calls"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
            let index = usize::try_from(index)
                .map_err(|_| problem(API, format!("tool call index {index} out of range")))?;
            // Calls are numbered in order: a new one takes the next index. Anything else would
            // make a few bytes of stream allocate slots for calls that never come.
            if index > self.calls.len() || index >= MAX_STREAMED_CALLS {
                return Err(problem(
                    API,
                    format!(
                        "tool call index {index} skips ahead of the {} call(s) so far",
                        self.calls.len()
                    ),
                ));
            }
            if index == self.calls.len() {
                self.calls.push((Value::Null, String::new(), String::new()));
            }
            if let Some(slot) = self.calls.get_mut(index) {
                if let Some(id) = call.get("id").filter(|v| v.is_string()) {
                    slot.0 = id.clone();
                }
                if let Some(Value::String(n)) = call.pointer("/function/name") {
                    slot.1.push_str(n);
                }
                if let Some(Value::String(a)) = call.pointer("/function/arguments") {
                    slot.2.push_str(a);
                    let forced = match &expect.tool_name {
                        Some(tool) => slot.1 == *tool,
                        None => index == 0,
                    };
                    if tool_mode && forced {
                        answer.push_str(a);
                    }
                }
            }
        }
        if let Some(f) = choice.get("finish_reason").filter(|f| !f.is_null()) {
            self.finish = f.clone();
        }
        Ok(())
    }

    /// The body the API sends unstreamed.
    pub(super) fn finish(self) -> Result<Value, CodecError> {
        if let Some(error) = self.error {
            return Ok(json!({ "error": error }));
        }
        if !self.done {
            return Err(problem(
                WireApi::OpenAiChat,
                "the stream ended without `data: [DONE]`: it was cut",
            ));
        }
        let mut message = Map::new();
        message.insert("role".into(), "assistant".into());
        message.insert(
            "content".into(),
            self.content.map_or(Value::Null, Value::String),
        );
        // A refusal stream opens with `refusal: ""`; only text counts as a refusal.
        message.insert(
            "refusal".into(),
            self.refusal
                .filter(|r| !r.is_empty())
                .map_or(Value::Null, Value::String),
        );
        if !self.calls.is_empty() {
            let calls = self
                .calls
                .into_iter()
                .map(|(id, name, arguments)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}))
                .collect();
            message.insert("tool_calls".into(), Value::Array(calls));
        }
        Ok(json!({
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish}],
            "usage": self.usage,
        }))
    }
}

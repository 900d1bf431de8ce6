//! Anthropic Messages: `output_config.format` or a forced tool (`disable_parallel_tool_use`),
//! `system` and `messages` with content blocks, and the event stream ending in `message_stop`.

use serde_json::{json, Value};

use super::chat::{AttachmentSource, ChatRequest, Turn};
use super::envelope::{decide, Reader, Signals};
use super::json::{input_object, object, put, Json};
use super::openai_chat::role;
use super::sse::{data, problem, Event};
use super::types::{CodecError, Expect, ProviderResponse, ToolCall, WireApi};
use crate::read::mode::StructuredOutputMode;
use crate::read::Answer;

/// `output_config.format` with the schema.
pub(super) fn schema_fragment(schema: Value) -> Value {
    let format = object([("type", Value::from("json_schema")), ("schema", schema)]);
    object([("output_config", object([("format", format)]))])
}

/// One strict tool with the schema (the lowering keeps to what strict tools take, so the model
/// is held to it), forced, no parallel calls.
pub(super) fn tool_fragment(name: &str, description: Option<&str>, schema: Value) -> Value {
    let mut tool = object([("name", Value::from(name)), ("input_schema", schema)]);
    put(&mut tool, "description", description);
    if let Value::Object(map) = &mut tool {
        map.insert("strict".into(), Value::Bool(true));
    }
    object([
        ("tools", Value::Array(vec![tool])),
        (
            "tool_choice",
            json!({"type": "tool", "name": name, "disable_parallel_tool_use": true}),
        ),
    ])
}

/// The answer's token limit when the caller sets none (the API requires one).
const DEFAULT_MAX_TOKENS: u32 = 1024;

pub(super) fn body<'a>(
    model: &'a str,
    request: &'a ChatRequest,
    max_tokens: Option<u32>,
    system: Option<String>,
    turns: &'a [Turn],
) -> Json<'a> {
    let mut messages: Vec<Json<'a>> = request
        .messages
        .iter()
        .map(|m| {
            let role = ("role", Json::Str(role(m.role)));
            if m.attachments.is_empty() {
                return Json::object([role, ("content", Json::from(&m.text))]);
            }
            // Attachments before the text, as Anthropic recommends.
            let mut blocks: Vec<Json<'a>> = m
                .attachments
                .iter()
                .map(|a| {
                    let kind = if a.is_pdf() { "document" } else { "image" };
                    let source = match &a.source {
                        AttachmentSource::Base64(data) => Json::object([
                            ("type", "base64".into()),
                            ("media_type", Json::from(&a.media_type)),
                            ("data", data.into()),
                        ]),
                        AttachmentSource::Url(url) => {
                            Json::object([("type", "url".into()), ("url", url.into())])
                        }
                    };
                    Json::object([("type", kind.into()), ("source", source)])
                })
                .collect();
            blocks.push(Json::object([
                ("type", "text".into()),
                ("text", Json::from(&m.text)),
            ]));
            Json::object([role, ("content", Json::Array(blocks))])
        })
        .collect();
    let user = |content: Json<'a>| {
        Json::object([
            ("role", "user".into()),
            ("content", Json::Array(vec![content])),
        ])
    };
    for turn in turns {
        messages.push(match turn {
            Turn::AssistantText(text) => {
                Json::object([("role", "assistant".into()), ("content", text.into())])
            }
            Turn::AssistantToolCall { id, name, input } => {
                let block = Json::object([
                    ("type", "tool_use".into()),
                    ("id", Json::or_null(id.as_deref())),
                    ("name", name.into()),
                    ("input", input_object(input).into()),
                ]);
                Json::object([
                    ("role", "assistant".into()),
                    ("content", Json::Array(vec![block])),
                ])
            }
            Turn::UserText(text) => {
                Json::object([("role", "user".into()), ("content", text.into())])
            }
            Turn::ToolError { id, text, .. } => user(Json::object([
                ("type", "tool_result".into()),
                ("tool_use_id", Json::or_null(id.as_deref())),
                ("is_error", true.into()),
                ("content", text.into()),
            ])),
            Turn::ToolResult { id, text, .. } => user(Json::object([
                ("type", "tool_result".into()),
                ("tool_use_id", Json::or_null(id.as_deref())),
                ("content", text.into()),
            ])),
        });
    }
    let mut body = Json::object([
        (
            "max_tokens",
            max_tokens.unwrap_or(DEFAULT_MAX_TOKENS).into(),
        ),
        ("messages", Json::Array(messages)),
        ("model", model.into()),
    ]);
    if let Some(system) = system {
        body.push("system", system.into());
    }
    body
}

pub(super) fn read(r: &Reader<'_>, expect: &Expect) -> Result<ProviderResponse, CodecError> {
    let stop = r.opt_str("/stop_reason")?;
    let mut text: Option<String> = None;
    let mut calls = Vec::new();
    for (i, block) in r.array("/content")?.iter().enumerate() {
        match block.get("type").and_then(Value::as_str) {
            // Thinking blocks are not the answer.
            Some("text") => {
                let t = r
                    .opt_str(&format!("/content/{i}/text"))?
                    .unwrap_or_default();
                text.get_or_insert_with(String::new).push_str(t);
            }
            Some("tool_use") => {
                let name = r
                    .opt_str(&format!("/content/{i}/name"))?
                    .unwrap_or_default();
                // An object when complete; the raw partial JSON when a stream was cut.
                let input = match block.get("input") {
                    Some(Value::String(partial)) => Answer::Text(partial.clone()),
                    Some(v @ Value::Object(_)) => Answer::Json(v.clone()),
                    _ => return Err(r.shape(&format!("/content/{i}/input"), "an object")),
                };
                calls.push((
                    ToolCall {
                        id: block.get("id").and_then(Value::as_str).map(str::to_owned),
                        name: name.to_owned(),
                    },
                    input,
                ));
            }
            _ => {}
        }
    }
    let refusal = (stop == Some("refusal")).then(|| {
        (
            r.body
                .pointer("/stop_details/explanation")
                .and_then(Value::as_str)
                .map(str::to_owned),
            r.body
                .pointer("/stop_details/category")
                .and_then(Value::as_str)
                .map(str::to_owned),
        )
    });
    let outcome = decide(
        expect,
        Signals {
            truncated: stop
                .filter(|s| matches!(*s, "max_tokens" | "model_context_window_exceeded")),
            filtered: None,
            refusal,
            text,
            calls,
            malformed_call: None,
        },
    );
    // Anthropic counts cached and cache-writing prompt tokens apart from `input_tokens`; the
    // total prompt is all three.
    let usage = r
        .usage(
            "/usage/input_tokens",
            "/usage/output_tokens",
            Some("/usage/cache_read_input_tokens"),
        )
        .map(|mut u| {
            let get = |p: &str| r.at(p).and_then(serde_json::Value::as_u64).unwrap_or(0);
            u.input_tokens +=
                get("/usage/cache_read_input_tokens") + get("/usage/cache_creation_input_tokens");
            u
        });
    Ok(ProviderResponse {
        outcome,
        usage,
        stop_reason: stop.map(str::to_owned),
    })
}

/// A stream's events assembled into the message the API sends unstreamed. A stream without
/// `message_stop` was cut.
#[derive(Default)]
pub(super) struct Assembler {
    message: Option<Value>,
    /// Content blocks by index, with the partial JSON of tool inputs.
    blocks: Vec<(Value, String)>,
    stopped: bool,
    /// An error event ends the stream: the body is that error.
    error: Option<Value>,
}

impl Assembler {
    /// Takes one event; the structured answer's text it brings (text, or the forced tool's
    /// input JSON) is added to `answer`.
    pub(super) fn event(
        &mut self,
        event: &Event,
        expect: &Expect,
        answer: &mut String,
    ) -> Result<(), CodecError> {
        const API: WireApi = WireApi::Anthropic;
        if self.stopped || self.error.is_some() {
            return Ok(());
        }
        let data = data(API, event)?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .or(event.name.as_deref())
            .unwrap_or_default();
        let index = || {
            data.get("index")
                .and_then(Value::as_u64)
                .and_then(|i| usize::try_from(i).ok())
                .ok_or_else(|| {
                    problem(
                        API,
                        format!("event at line {} has no block index", event.line),
                    )
                })
        };
        match kind {
            "message_start" => self.message = data.get("message").cloned(),
            "content_block_start" => {
                let i = index()?;
                if i != self.blocks.len() {
                    return Err(problem(
                        API,
                        format!("block {i} started out of order at line {}", event.line),
                    ));
                }
                self.blocks.push((
                    data.get("content_block").cloned().unwrap_or(Value::Null),
                    String::new(),
                ));
            }
            "content_block_delta" => {
                let i = index()?;
                let Some((block, partial)) = self.blocks.get_mut(i) else {
                    return Err(problem(
                        API,
                        format!("delta for unknown block {i} at line {}", event.line),
                    ));
                };
                let tool_mode = expect.mode == StructuredOutputMode::ToolUseWorkaround;
                match data.pointer("/delta/type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        let piece = data
                            .pointer("/delta/text")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        if let Some(Value::String(t)) = block.get_mut("text") {
                            t.push_str(piece);
                        }
                        if !tool_mode {
                            answer.push_str(piece);
                        }
                    }
                    Some("input_json_delta") => {
                        let piece = data
                            .pointer("/delta/partial_json")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        partial.push_str(piece);
                        let name = block.get("name").and_then(Value::as_str);
                        let forced = match &expect.tool_name {
                            Some(tool) => name == Some(tool.as_str()),
                            None => true,
                        };
                        if tool_mode && forced {
                            answer.push_str(piece);
                        }
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                let Some(Value::Object(m)) = self.message.as_mut() else {
                    return Err(problem(
                        API,
                        format!("message_delta before message_start at line {}", event.line),
                    ));
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
            "message_stop" => self.stopped = true,
            "error" => self.error = Some(data.get("error").cloned().unwrap_or(Value::Null)),
            _ => {}
        }
        Ok(())
    }

    /// The message the API sends unstreamed.
    pub(super) fn finish(self) -> Result<Value, CodecError> {
        const API: WireApi = WireApi::Anthropic;
        if let Some(error) = self.error {
            return Ok(json!({ "error": error }));
        }
        let Some(Value::Object(mut message)) = self.message else {
            return Err(problem(API, "no message_start event"));
        };
        if !self.stopped {
            return Err(problem(
                API,
                "the stream ended without `message_stop`: it was cut",
            ));
        }
        let content = self
            .blocks
            .into_iter()
            .map(|(mut block, partial)| {
                if block.get("type").and_then(Value::as_str) == Some("tool_use")
                    && !partial.is_empty()
                {
                    // Complete input is an object; input cut by `max_tokens` stays the raw text.
                    let input = crate::read::strict_de::json_value(&partial)
                        .unwrap_or(Value::String(partial));
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
}

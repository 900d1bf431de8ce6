//! OpenAI Responses: `text.format` or a forced function tool, `input` with `instructions`, and
//! the `output` items (streaming events wrap the same response object).

use serde_json::{json, Value};

use super::chat::{ChatRequest, Turn};
use super::envelope::{decide, Reader, Signals};
use super::json::{object, put, Json};
use super::openai_chat::role;
use super::sse::{data, problem, Event};
use super::types::{CodecError, Expect, ProviderResponse, ToolCall, WireApi};
use crate::read::mode::StructuredOutputMode;
use crate::read::Answer;

/// `text.format` with the schema, strict unless the schema says best effort.
pub(super) fn schema_fragment(
    name: &str,
    description: Option<&str>,
    schema: Value,
    strict: bool,
) -> Value {
    let mut format = object([
        ("type", Value::from("json_schema")),
        ("name", Value::from(name)),
        ("schema", schema),
        ("strict", Value::Bool(strict)),
    ]);
    put(&mut format, "description", description);
    object([("text", object([("format", format)]))])
}

/// One function tool with the schema, forced, no parallel calls.
pub(super) fn tool_fragment(
    name: &str,
    description: Option<&str>,
    schema: Value,
    strict: bool,
) -> Value {
    let mut tool = object([
        ("type", Value::from("function")),
        ("name", Value::from(name)),
        ("parameters", schema),
        ("strict", Value::Bool(strict)),
    ]);
    put(&mut tool, "description", description);
    object([
        ("tools", Value::Array(vec![tool])),
        ("tool_choice", json!({"type": "function", "name": name})),
        ("parallel_tool_calls", Value::Bool(false)),
    ])
}

pub(super) fn body<'a>(
    model: &'a str,
    request: &'a ChatRequest,
    max_tokens: Option<u32>,
    system: Option<String>,
    turns: &'a [Turn],
) -> Json<'a> {
    let mut input: Vec<Json<'a>> = request
        .messages
        .iter()
        .map(|m| {
            let role = ("role", Json::Str(role(m.role)));
            if m.attachments.is_empty() {
                return Json::object([role, ("content", Json::from(&m.text))]);
            }
            let mut parts = vec![Json::object([
                ("type", "input_text".into()),
                ("text", Json::from(&m.text)),
            ])];
            for a in &m.attachments {
                parts.push(if a.is_pdf() {
                    Json::object([
                        ("type", "input_file".into()),
                        ("filename", "document.pdf".into()),
                        ("file_data", Json::attachment_url(a)),
                    ])
                } else {
                    Json::object([
                        ("type", "input_image".into()),
                        ("image_url", Json::attachment_url(a)),
                    ])
                });
            }
            Json::object([role, ("content", Json::Array(parts))])
        })
        .collect();
    for turn in turns {
        input.push(match turn {
            Turn::AssistantText(text) => {
                Json::object([("role", "assistant".into()), ("content", text.into())])
            }
            Turn::AssistantToolCall { id, name, input } => Json::object([
                ("type", "function_call".into()),
                ("call_id", Json::or_null(id.as_deref())),
                ("name", name.into()),
                ("arguments", input.to_text().into()),
            ]),
            Turn::UserText(text) => {
                Json::object([("role", "user".into()), ("content", text.into())])
            }
            Turn::ToolError { id, text, .. } | Turn::ToolResult { id, text, .. } => Json::object([
                ("type", "function_call_output".into()),
                ("call_id", Json::or_null(id.as_deref())),
                ("output", text.into()),
            ]),
        });
    }
    let mut body = Json::object([("model", model.into()), ("input", Json::Array(input))]);
    if let Some(system) = system {
        body.push("instructions", system.into());
    }
    if let Some(n) = max_tokens {
        body.push("max_output_tokens", n.into());
    }
    body
}

pub(super) fn read(r: &Reader<'_>, expect: &Expect) -> Result<ProviderResponse, CodecError> {
    // A streaming event (`response.incomplete`, `response.completed`) wraps the response.
    if r.body
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| t.starts_with("response."))
    {
        // Unwrapped once: an event inside an event is not the envelope.
        if let Some(inner) = r.body.get("response").filter(|inner| inner.is_object()) {
            return response_object(&Reader::new(r.api, inner), expect);
        }
    }
    response_object(r, expect)
}

fn response_object(r: &Reader<'_>, expect: &Expect) -> Result<ProviderResponse, CodecError> {
    let status = r.opt_str("/status")?;
    let reason = r.opt_str("/incomplete_details/reason")?;
    let mut text: Option<String> = None;
    let mut refusal = None;
    let mut calls = Vec::new();
    for (i, item) in r.array("/output")?.iter().enumerate() {
        match item.get("type").and_then(Value::as_str) {
            Some("message") => {
                for (j, part) in r
                    .opt_array(&format!("/output/{i}/content"))?
                    .iter()
                    .enumerate()
                {
                    let at = format!("/output/{i}/content/{j}");
                    match part.get("type").and_then(Value::as_str) {
                        Some("output_text") => {
                            let t = r.opt_str(&format!("{at}/text"))?.unwrap_or_default();
                            text.get_or_insert_with(String::new).push_str(t);
                        }
                        Some("refusal") => {
                            refusal = r.opt_str(&format!("{at}/refusal"))?.map(str::to_owned);
                        }
                        _ => {}
                    }
                }
            }
            Some("function_call") => {
                let name = r.opt_str(&format!("/output/{i}/name"))?.unwrap_or_default();
                let arguments = r
                    .opt_str(&format!("/output/{i}/arguments"))?
                    .unwrap_or_default();
                calls.push((
                    ToolCall {
                        id: item
                            .get("call_id")
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                        name: name.to_owned(),
                    },
                    Answer::Text(arguments.to_owned()),
                ));
            }
            _ => {}
        }
    }
    let incomplete = status == Some("incomplete");
    let outcome = decide(
        expect,
        Signals {
            truncated: (incomplete && reason != Some("content_filter"))
                .then_some(reason.unwrap_or("incomplete")),
            filtered: (incomplete && reason == Some("content_filter")).then_some("content_filter"),
            refusal: refusal.map(|r| (Some(r), None)),
            text,
            calls,
            malformed_call: None,
        },
    );
    Ok(ProviderResponse {
        outcome,
        usage: r.usage(
            "/usage/input_tokens",
            "/usage/output_tokens",
            Some("/usage/input_tokens_details/cached_tokens"),
        ),
        stop_reason: reason.or(status).map(str::to_owned),
    })
}

/// A stream's events assembled: the response object its final event carries
/// (`response.completed`, `response.incomplete`, `response.failed`). A stream without one was
/// cut.
#[derive(Default)]
pub(super) struct Assembler {
    /// The final response object.
    response: Option<Value>,
    /// Function calls by output index: their names, to know the forced tool's arguments.
    calls: Vec<(u64, String)>,
    error: Option<Value>,
}

impl Assembler {
    /// Takes one event; the structured answer's text it brings (output text, or the forced
    /// function's arguments) is added to `answer`.
    pub(super) fn event(
        &mut self,
        event: &Event,
        expect: &Expect,
        answer: &mut String,
    ) -> Result<(), CodecError> {
        if self.response.is_some() || self.error.is_some() {
            return Ok(());
        }
        let data = data(WireApi::OpenAiResponses, event)?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .or(event.name.as_deref())
            .unwrap_or_default();
        let tool_mode = expect.mode == StructuredOutputMode::ToolUseWorkaround;
        let delta = data
            .get("delta")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let output_index = data.get("output_index").and_then(Value::as_u64);
        match kind {
            "response.output_text.delta" if !tool_mode => answer.push_str(delta),
            "response.output_item.added" => {
                let item = data.get("item");
                if item.and_then(|i| i.get("type")).and_then(Value::as_str) == Some("function_call")
                {
                    let name = item
                        .and_then(|i| i.get("name"))
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    if self.calls.len() < MAX_STREAMED_CALLS {
                        self.calls
                            .push((output_index.unwrap_or_default(), name.to_owned()));
                    }
                }
            }
            "response.function_call_arguments.delta" if tool_mode => {
                let name = self
                    .calls
                    .iter()
                    .find(|(i, _)| Some(*i) == output_index)
                    .map(|(_, name)| name.as_str());
                let forced = match &expect.tool_name {
                    Some(tool) => name == Some(tool.as_str()),
                    None => self.calls.first().map(|(i, _)| Some(*i)) == Some(output_index),
                };
                if forced {
                    answer.push_str(delta);
                }
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                self.response = Some(data.get("response").cloned().unwrap_or(Value::Null));
            }
            "error" => self.error = Some(data),
            _ => {}
        }
        Ok(())
    }

    /// The response object the API sends unstreamed.
    pub(super) fn finish(self) -> Result<Value, CodecError> {
        if let Some(error) = self.error {
            let error = error.get("error").cloned().unwrap_or(error);
            return Ok(json!({ "error": error }));
        }
        self.response.ok_or_else(|| {
            problem(
                WireApi::OpenAiResponses,
                "the stream ended without `response.completed` (or `incomplete`, `failed`): it was cut",
            )
        })
    }
}

/// Function calls followed in one streamed answer, at most.
const MAX_STREAMED_CALLS: usize = 1024;

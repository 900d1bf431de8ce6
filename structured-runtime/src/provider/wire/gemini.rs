//! Gemini `generateContent`: `generationConfig` with `responseJsonSchema` or `responseSchema`, or
//! a function declaration forced with `mode: ANY`; `contents` with parts; `candidates[0]`.

use serde_json::{json, Value};

use super::chat::{AttachmentSource, ChatRequest, Role, Turn};
use super::envelope::{decide, Reader, Signals};
use super::json::{input_object, object, put, Json};
use super::sse::{data, problem, Event};
use super::types::{CodecError, Expect, Outcome, ProviderResponse, ToolCall, WireApi};
use crate::provider::dialect::SchemaTarget;
use crate::read::mode::StructuredOutputMode;
use crate::read::Answer;

/// The schema under the key its dialect goes by.
pub(super) fn schema_fragment(target: SchemaTarget, schema: Value) -> Value {
    let key = if target == SchemaTarget::GeminiResponseSchema {
        "responseSchema"
    } else {
        "responseJsonSchema"
    };
    let config = object([
        ("responseMimeType", Value::from("application/json")),
        (key, schema),
    ]);
    object([("generationConfig", config)])
}

/// One function declaration with the schema, the only one allowed, forced.
pub(super) fn tool_fragment(
    target: SchemaTarget,
    name: &str,
    description: Option<&str>,
    schema: Value,
) -> Value {
    let key = if target == SchemaTarget::GeminiResponseSchema {
        "parameters"
    } else {
        "parametersJsonSchema"
    };
    let mut declaration = object([("name", Value::from(name)), (key, schema)]);
    put(&mut declaration, "description", description);
    let declarations = object([("functionDeclarations", Value::Array(vec![declaration]))]);
    object([
        ("tools", Value::Array(vec![declarations])),
        (
            "toolConfig",
            json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [name]}}),
        ),
    ])
}

pub(super) fn body<'a>(
    request: &'a ChatRequest,
    max_tokens: Option<u32>,
    system: Option<String>,
    turns: &'a [Turn],
) -> Json<'a> {
    let gemini_role = |r: Role| if r == Role::User { "user" } else { "model" };
    let text_part = |text: Json<'a>| Json::object([("text", text)]);
    let said = |role: &'a str, part: Json<'a>| {
        Json::object([("role", role.into()), ("parts", Json::Array(vec![part]))])
    };
    let mut contents: Vec<Json<'a>> = request
        .messages
        .iter()
        .map(|m| {
            let mut parts = vec![text_part(Json::from(&m.text))];
            for a in &m.attachments {
                if let AttachmentSource::Base64(data) = &a.source {
                    let inline = Json::object([
                        ("mimeType", Json::from(&a.media_type)),
                        ("data", data.into()),
                    ]);
                    parts.push(Json::object([("inlineData", inline)]));
                }
            }
            Json::object([
                ("role", gemini_role(m.role).into()),
                ("parts", Json::Array(parts)),
            ])
        })
        .collect();
    let function_response = |name: &'a String, key: &'a str, text: &'a String| {
        let response = Json::object([(key, text.into())]);
        let call = Json::object([("name", name.into()), ("response", response)]);
        said("user", Json::object([("functionResponse", call)]))
    };
    for turn in turns {
        contents.push(match turn {
            Turn::AssistantText(answer) => said("model", text_part(answer.into())),
            Turn::AssistantToolCall { name, input, .. } => {
                let call =
                    Json::object([("name", name.into()), ("args", input_object(input).into())]);
                said("model", Json::object([("functionCall", call)]))
            }
            Turn::UserText(correction) => said("user", text_part(correction.into())),
            Turn::ToolError { name, text, .. } => function_response(name, "error", text),
            Turn::ToolResult { name, text, .. } => function_response(name, "content", text),
        });
    }
    let mut body = Json::object([("contents", Json::Array(contents))]);
    if let Some(system) = system {
        let parts = Json::Array(vec![text_part(system.into())]);
        body.push("systemInstruction", Json::object([("parts", parts)]));
    }
    if let Some(n) = max_tokens {
        body.push(
            "generationConfig",
            Json::object([("maxOutputTokens", n.into())]),
        );
    }
    body
}

/// Why Gemini rejected a request with `status` and `body`, when the rejection is the schema
/// itself: a 400 saying "too many states" (and nothing more) is a schema whose decoding
/// constraint is too large to serve; its documentation names the usual causes.
pub(super) fn schema_refusal(status: u16, body: &str) -> Option<String> {
    (status == 400 && body.to_ascii_lowercase().contains("too many states")).then(|| {
        "Gemini refused the schema as too large to serve (\"too many states\"): the usual causes are many or long enum values and property names, several arrays with item limits (nested ones most), and numbers with bounds; shorten the enums, drop minItems/maxItems, or move bounds into descriptions".into()
    })
}

pub(super) fn read(r: &Reader<'_>, expect: &Expect) -> Result<ProviderResponse, CodecError> {
    let usage = r.usage(
        "/usageMetadata/promptTokenCount",
        "/usageMetadata/candidatesTokenCount",
        Some("/usageMetadata/cachedContentTokenCount"),
    );
    let candidates = r.opt_array("/candidates")?;
    if candidates.is_empty() {
        let Some(block) = r.opt_str("/promptFeedback/blockReason")? else {
            return Err(r.shape("/candidates", "a candidate or a promptFeedback.blockReason"));
        };
        let message = r.opt_str("/promptFeedback/blockReasonMessage")?;
        return Ok(ProviderResponse {
            outcome: Outcome::Filtered {
                reason: match message {
                    Some(m) => format!("prompt blocked: {block}: {m}"),
                    None => format!("prompt blocked: {block}"),
                },
                partial: None,
            },
            usage,
            stop_reason: Some(block.to_owned()),
        });
    }
    let finish = r.opt_str("/candidates/0/finishReason")?;
    let mut text: Option<String> = None;
    let mut calls = Vec::new();
    for (i, part) in r
        .opt_array("/candidates/0/content/parts")?
        .iter()
        .enumerate()
    {
        if part.get("thought").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        if let Some(t) = part.get("text") {
            let t = t.as_str().ok_or_else(|| {
                r.shape(&format!("/candidates/0/content/parts/{i}/text"), "a string")
            })?;
            text.get_or_insert_with(String::new).push_str(t);
        }
        if let Some(call) = part.get("functionCall") {
            let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
            calls.push((
                ToolCall {
                    id: call.get("id").and_then(Value::as_str).map(str::to_owned),
                    name: name.to_owned(),
                },
                Answer::Json(call.get("args").cloned().unwrap_or_else(|| json!({}))),
            ));
        }
    }
    let filtered = finish.filter(|f| {
        matches!(
            *f,
            "SAFETY"
                | "RECITATION"
                | "BLOCKLIST"
                | "PROHIBITED_CONTENT"
                | "SPII"
                | "LANGUAGE"
                | "OTHER"
                | "IMAGE_SAFETY"
                | "IMAGE_PROHIBITED_CONTENT"
                | "IMAGE_OTHER"
                | "IMAGE_RECITATION"
        )
    });
    let filtered = filtered.map(|f| {
        match r
            .body
            .pointer("/candidates/0/finishMessage")
            .and_then(Value::as_str)
        {
            Some(m) => format!("{f}: {m}"),
            None => f.to_owned(),
        }
    });
    let outcome = decide(
        expect,
        Signals {
            truncated: finish.filter(|f| *f == "MAX_TOKENS"),
            filtered: filtered.as_deref(),
            refusal: None,
            text,
            calls,
            malformed_call: finish.filter(|f| {
                matches!(
                    *f,
                    "MALFORMED_FUNCTION_CALL" | "UNEXPECTED_TOOL_CALL" | "TOO_MANY_TOOL_CALLS"
                )
            }),
        },
    );
    Ok(ProviderResponse {
        outcome,
        usage,
        stop_reason: finish.map(str::to_owned),
    })
}

/// A `streamGenerateContent?alt=sse` stream assembled: each event is a response chunk; the
/// text and calls of its candidate are joined, its last finish reason and usage kept. A stream
/// that ends without a finish reason (or a blocked prompt) was cut.
#[derive(Default)]
pub(super) struct Assembler {
    /// The candidate's parts: text joined into one part, calls and other parts as sent.
    parts: Vec<Value>,
    text: Option<String>,
    finish: Option<Value>,
    finish_message: Option<Value>,
    usage: Option<Value>,
    prompt_feedback: Option<Value>,
    error: Option<Value>,
}

impl Assembler {
    /// Takes one chunk; the structured answer's text it brings (text, or the forced call's
    /// arguments, which Gemini sends whole) is added to `answer`.
    pub(super) fn event(
        &mut self,
        event: &Event,
        expect: &Expect,
        answer: &mut String,
    ) -> Result<(), CodecError> {
        if self.error.is_some() {
            return Ok(());
        }
        let chunk = data(WireApi::Gemini, event)?;
        if let Some(error) = chunk.get("error") {
            self.error = Some(error.clone());
            return Ok(());
        }
        if let Some(usage) = chunk.get("usageMetadata") {
            self.usage = Some(usage.clone());
        }
        if let Some(feedback) = chunk.get("promptFeedback") {
            self.prompt_feedback = Some(feedback.clone());
        }
        let Some(candidate) = chunk.pointer("/candidates/0") else {
            return Ok(());
        };
        let tool_mode = expect.mode == StructuredOutputMode::ToolUseWorkaround;
        for part in candidate
            .pointer("/content/parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let thought = part.get("thought").and_then(Value::as_bool) == Some(true);
            match (part.get("text").and_then(Value::as_str), thought) {
                (Some(text), false) => {
                    self.text.get_or_insert_with(String::new).push_str(text);
                    if !tool_mode {
                        answer.push_str(text);
                    }
                }
                (Some(_), true) => {}
                (None, _) => {
                    if let Some(call) = part.get("functionCall") {
                        let name = call.get("name").and_then(Value::as_str);
                        let forced = match &expect.tool_name {
                            Some(tool) => name == Some(tool.as_str()),
                            None => true,
                        };
                        if tool_mode && forced {
                            answer.push_str(
                                &call.get("args").map(Value::to_string).unwrap_or_default(),
                            );
                        }
                    }
                    if self.parts.len() < MAX_STREAMED_PARTS {
                        self.parts.push(part.clone());
                    }
                }
            }
        }
        if let Some(finish) = candidate.get("finishReason").filter(|f| !f.is_null()) {
            self.finish = Some(finish.clone());
        }
        if let Some(message) = candidate.get("finishMessage") {
            self.finish_message = Some(message.clone());
        }
        Ok(())
    }

    /// The response the API sends unstreamed.
    pub(super) fn finish(self) -> Result<Value, CodecError> {
        if let Some(error) = self.error {
            return Ok(json!({ "error": error }));
        }
        let blocked = self
            .prompt_feedback
            .as_ref()
            .is_some_and(|f| f.get("blockReason").is_some());
        if self.finish.is_none() && !blocked {
            return Err(problem(
                WireApi::Gemini,
                "the stream ended without a finish reason: it was cut",
            ));
        }
        let mut parts = Vec::new();
        if let Some(text) = self.text {
            parts.push(json!({ "text": text }));
        }
        parts.extend(self.parts);
        let mut candidate = json!({
            "content": {"role": "model", "parts": parts},
            "finishReason": self.finish,
        });
        if let (Some(message), Value::Object(c)) = (self.finish_message, &mut candidate) {
            c.insert("finishMessage".into(), message);
        }
        let mut body = json!({
            "candidates": if blocked && self.finish.is_none() { json!([]) } else { json!([candidate]) },
        });
        if let Value::Object(b) = &mut body {
            if let Some(usage) = self.usage {
                b.insert("usageMetadata".into(), usage);
            }
            if let Some(feedback) = self.prompt_feedback {
                b.insert("promptFeedback".into(), feedback);
            }
        }
        Ok(body)
    }
}

/// Parts other than text kept from one streamed answer, at most.
const MAX_STREAMED_PARTS: usize = 1024;

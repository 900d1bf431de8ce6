//! Gemini `generateContent`: `generationConfig` with `responseJsonSchema` or `responseSchema`, or
//! a function declaration forced with `mode: ANY`; `contents` with parts; `candidates[0]`.

use serde_json::{json, Value};

use super::chat::{AttachmentSource, ChatRequest, Role, Turn};
use super::envelope::{decide, Reader, Signals};
use super::json::{input_object, merge, object, put};
use super::types::{CodecError, Expect, Outcome, ProviderResponse, ToolCall};
use crate::provider::dialect::SchemaTarget;
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

pub(super) fn body(request: &ChatRequest, system: Option<String>, turns: &[Turn]) -> Value {
    let gemini_role = |r: Role| if r == Role::User { "user" } else { "model" };
    let mut contents: Vec<Value> = request
        .messages
        .iter()
        .map(|m| {
            let mut parts = vec![json!({"text": m.text})];
            for a in &m.attachments {
                if let AttachmentSource::Base64(data) = &a.source {
                    parts.push(json!({"inlineData": {"mimeType": a.media_type, "data": data}}));
                }
            }
            json!({"role": gemini_role(m.role), "parts": parts})
        })
        .collect();
    for turn in turns {
        contents.push(match turn {
            Turn::AssistantText(text) => json!({"role": "model", "parts": [{"text": text}]}),
            Turn::AssistantToolCall { name, input, .. } => {
                let call = object([
                    ("name", Value::from(name.as_str())),
                    ("args", input_object(input)),
                ]);
                let part = object([("functionCall", call)]);
                object([
                    ("role", Value::from("model")),
                    ("parts", Value::Array(vec![part])),
                ])
            }
            Turn::UserText(text) => json!({"role": "user", "parts": [{"text": text}]}),
            Turn::ToolError { name, text, .. } => json!({"role": "user", "parts": [
                {"functionResponse": {"name": name, "response": {"error": text}}}
            ]}),
            Turn::ToolResult { name, text, .. } => json!({"role": "user", "parts": [
                {"functionResponse": {"name": name, "response": {"content": text}}}
            ]}),
        });
    }
    let mut body = object([("contents", Value::Array(contents))]);
    if let Some(system) = system {
        merge(
            &mut body,
            &json!({"systemInstruction": {"parts": [{"text": system}]}}),
        );
    }
    if let Some(n) = request.max_tokens {
        merge(
            &mut body,
            &json!({"generationConfig": {"maxOutputTokens": n}}),
        );
    }
    body
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

//! Whole request bodies: the caller's prompt, the structured-output fragment, and the turns a
//! re-ask adds (the model's previous answer, then the correction), written the way each
//! provider takes a conversation. The caller's messages come first and never change between
//! attempts, so a provider's prompt cache keeps serving them.

use serde_json::{json, Map, Value};

use super::request::{merge, RequestFragment};
use super::WireApi;
use crate::provider::capabilities::ProviderKind;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The caller.
    User,
    /// The model (a prior answer given as context).
    Assistant,
}

/// One message of the caller's prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    /// Who wrote it.
    pub role: Role,
    /// Its text.
    pub text: String,
}

/// The caller's request, provider-neutral.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// System instructions, if any.
    pub system: Option<String>,
    /// The conversation so far, ending with the user's question.
    pub messages: Vec<ChatMessage>,
    /// The answer's token limit (Anthropic requires one: 1024 when not given).
    pub max_tokens: Option<u32>,
    /// Provider-specific fields merged into the body last (`temperature`, `thinking`, ...).
    pub extra: Value,
}

impl ChatRequest {
    /// A single user message.
    pub fn user(text: impl Into<String>) -> Self {
        ChatRequest {
            system: None,
            messages: vec![ChatMessage {
                role: Role::User,
                text: text.into(),
            }],
            max_tokens: None,
            extra: Value::Object(Map::new()),
        }
    }
}

/// A turn a re-ask appends after the caller's messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Turn {
    /// The model's previous answer, as text.
    AssistantText(String),
    /// The model's previous tool call (its input as JSON text).
    AssistantToolCall {
        /// The provider's call id, if it gave one.
        id: Option<String>,
        /// The tool called.
        name: String,
        /// The input, as the model wrote it.
        input: String,
    },
    /// A correction from the caller, as a user message.
    UserText(String),
    /// A correction answering a tool call, as an error tool result.
    ToolError {
        /// The call answered.
        id: Option<String>,
        /// The tool called.
        name: String,
        /// What was wrong.
        text: String,
    },
}

/// The request body for `kind`: the prompt, the fragment (with its system text after the
/// caller's), then `turns`, then `request.extra`.
pub fn build_body(
    kind: ProviderKind,
    model: &str,
    request: &ChatRequest,
    fragment: &RequestFragment,
    turns: &[Turn],
) -> Value {
    let system = match (&request.system, &fragment.system) {
        (Some(a), Some(b)) => Some(format!("{a}\n\n{b}")),
        (a, b) => a.clone().or_else(|| b.clone()),
    };
    let mut body = match kind.wire_api() {
        WireApi::OpenAiChat | WireApi::OllamaChat => chat(kind, model, request, system, turns),
        WireApi::OpenAiResponses => responses(model, request, system, turns),
        WireApi::Anthropic => anthropic(model, request, system, turns),
        WireApi::Gemini => gemini(request, system, turns),
    };
    merge(&mut body, &fragment.body);
    merge(&mut body, &request.extra);
    body
}

fn role(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

/// The input of a tool call as an object (what Anthropic, Gemini and Ollama send back); input
/// that is not a JSON object is sent as `{}` (the correction says what was wrong with it).
fn input_object(input: &str) -> Value {
    match serde_json::from_str::<Value>(input) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({}),
    }
}

fn chat(
    kind: ProviderKind,
    model: &str,
    request: &ChatRequest,
    system: Option<String>,
    turns: &[Turn],
) -> Value {
    let ollama = kind == ProviderKind::Ollama;
    let mut messages = Vec::new();
    if let Some(system) = system {
        messages.push(json!({"role": "system", "content": system}));
    }
    for m in &request.messages {
        messages.push(json!({"role": role(m.role), "content": m.text}));
    }
    for turn in turns {
        messages.push(match turn {
            Turn::AssistantText(text) => json!({"role": "assistant", "content": text}),
            Turn::AssistantToolCall { id, name, input } => {
                // Ollama's native API takes arguments as an object, OpenAI's as a string.
                let arguments = if ollama { input_object(input) } else { Value::String(input.clone()) };
                json!({"role": "assistant", "content": null, "tool_calls": [
                    {"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}
                ]})
            }
            Turn::UserText(text) => json!({"role": "user", "content": text}),
            Turn::ToolError { id, name, text } => {
                json!({"role": "tool", "tool_call_id": id, "name": name, "content": text})
            }
        });
    }
    let mut body = json!({"model": model, "messages": messages});
    if ollama {
        merge(&mut body, &json!({"stream": false}));
        if let Some(n) = request.max_tokens {
            merge(&mut body, &json!({"options": {"num_predict": n}}));
        }
    } else if let Some(n) = request.max_tokens {
        merge(&mut body, &json!({"max_tokens": n}));
    }
    body
}

fn responses(model: &str, request: &ChatRequest, system: Option<String>, turns: &[Turn]) -> Value {
    let mut input: Vec<Value> = request
        .messages
        .iter()
        .map(|m| json!({"role": role(m.role), "content": m.text}))
        .collect();
    for turn in turns {
        input.push(match turn {
            Turn::AssistantText(text) => json!({"role": "assistant", "content": text}),
            Turn::AssistantToolCall { id, name, input } => {
                json!({"type": "function_call", "call_id": id, "name": name, "arguments": input})
            }
            Turn::UserText(text) => json!({"role": "user", "content": text}),
            Turn::ToolError { id, text, .. } => {
                json!({"type": "function_call_output", "call_id": id, "output": text})
            }
        });
    }
    let mut body = json!({"model": model, "input": input});
    if let Some(system) = system {
        merge(&mut body, &json!({"instructions": system}));
    }
    if let Some(n) = request.max_tokens {
        merge(&mut body, &json!({"max_output_tokens": n}));
    }
    body
}

fn anthropic(model: &str, request: &ChatRequest, system: Option<String>, turns: &[Turn]) -> Value {
    let mut messages: Vec<Value> = request
        .messages
        .iter()
        .map(|m| json!({"role": role(m.role), "content": m.text}))
        .collect();
    for turn in turns {
        messages.push(match turn {
            Turn::AssistantText(text) => json!({"role": "assistant", "content": text}),
            Turn::AssistantToolCall { id, name, input } => json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": id, "name": name, "input": input_object(input)}
            ]}),
            Turn::UserText(text) => json!({"role": "user", "content": text}),
            Turn::ToolError { id, text, .. } => json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "is_error": true, "content": text}
            ]}),
        });
    }
    let mut body = json!({"max_tokens": request.max_tokens.unwrap_or(1024), "messages": messages, "model": model});
    if let Some(system) = system {
        merge(&mut body, &json!({"system": system}));
    }
    body
}

fn gemini(request: &ChatRequest, system: Option<String>, turns: &[Turn]) -> Value {
    let gemini_role = |r: Role| if r == Role::User { "user" } else { "model" };
    let mut contents: Vec<Value> = request
        .messages
        .iter()
        .map(|m| json!({"role": gemini_role(m.role), "parts": [{"text": m.text}]}))
        .collect();
    for turn in turns {
        contents.push(match turn {
            Turn::AssistantText(text) => json!({"role": "model", "parts": [{"text": text}]}),
            Turn::AssistantToolCall { name, input, .. } => {
                json!({"role": "model", "parts": [{"functionCall": {"name": name, "args": input_object(input)}}]})
            }
            Turn::UserText(text) => json!({"role": "user", "parts": [{"text": text}]}),
            Turn::ToolError { name, text, .. } => json!({"role": "user", "parts": [
                {"functionResponse": {"name": name, "response": {"error": text}}}
            ]}),
        });
    }
    let mut body = json!({"contents": contents});
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

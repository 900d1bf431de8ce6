//! Wire APIs, one file each: the request fragment that asks a provider for structured output,
//! the whole conversation body, and the provider's answer (a body or a stream) read into one
//! typed [`Outcome`].
//!
//! The request side is a `serde_json::Value` any HTTP client merges into its body ([`merge`]). The response side reads the provider's envelope first: a refusal, a
//! content filter or a truncation is an outcome of its own, never text handed to the parser as
//! if it were a complete answer. Streams (server-sent events) are assembled into the same
//! envelope and read the same way; a stream that stops before its end is an error.
//!
//! ```
//! use structured_runtime::provider::wire::{read_response, Expect, Outcome, WireApi};
//! use structured_runtime::StructuredOutputMode;
//!
//! let body = r#"{"choices": [{"index": 0, "finish_reason": "length",
//!     "message": {"role": "assistant", "content": "{\"sev", "refusal": null}}]}"#;
//! let read = read_response(WireApi::OpenAiChat, &Expect::new(StructuredOutputMode::SchemaEnforced), body).unwrap();
//! assert!(matches!(read.outcome, Outcome::Truncated { .. }));
//! ```

mod anthropic;
pub mod anthropic_batch;
pub mod batch;
pub mod batch_wire;
mod chat;
mod envelope;
mod gemini;
pub mod gemini_batch;
mod json;
mod ollama;
pub mod openai_batch;
mod openai_chat;
mod openai_responses;
mod sse;
mod stream;
mod types;

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::provider::cache::{fragment, Fragment, FragmentKey};
use crate::provider::capabilities::{ProviderCapabilities, ProviderKind};
use crate::provider::dialect::{grammar, GrammarBudget, LowerReport, SchemaTarget};
use crate::read::mode::StructuredOutputMode;
use crate::schema::ResponseSchema;

pub use chat::{Attachment, AttachmentSource, ChatMessage, ChatRequest, Role, Tool, Turn};
#[cfg(feature = "http")]
pub(crate) use envelope::shorten;
pub use json::merge;
use json::Json;
pub use stream::{read_stream, StreamDecoder, MAX_STREAM_BYTES};
pub use types::{
    CodecError, Expect, Outcome, Prices, ProviderResponse, StructuredCandidate, ToolCall, Usage,
    WireApi,
};

/// Why `api` rejected a request with `status` and `body`, when the rejection is the schema it
/// was sent (an API that says so only in its own words); `None` for any other rejection.
pub(crate) fn schema_refusal(api: WireApi, status: u16, body: &str) -> Option<String> {
    match api {
        WireApi::Gemini => gemini::schema_refusal(status, body),
        _ => None,
    }
}

/// Reads a response body (a whole JSON document). The body is read as written or refused: a
/// key given twice, or a number no value holds as written (a tool call's arguments sent as an
/// object are read from it, and must not change on the way), is [`CodecError::NotJson`] naming
/// it, never resolved without a word.
pub fn read_response(
    api: WireApi,
    expect: &Expect,
    body: &str,
) -> Result<ProviderResponse, CodecError> {
    if api == WireApi::OpenAiChat {
        if let Some(response) = openai_chat::read_in_place(body, expect) {
            return Ok(response);
        }
    }
    let value = crate::read::repair::value_as_written(body)
        .map_err(|message| CodecError::NotJson { api, message })?;
    read_response_value(api, expect, &value)
}

/// Reads a response body already parsed.
pub fn read_response_value(
    api: WireApi,
    expect: &Expect,
    body: &Value,
) -> Result<ProviderResponse, CodecError> {
    let r = envelope::Reader::new(api, body);
    if !body.is_object() {
        return Err(r.shape("", "a JSON object"));
    }
    if let Some(error) = body.get("error").filter(|e| !e.is_null()) {
        return Err(CodecError::ProviderError {
            api,
            message: envelope::error_message(error),
        });
    }
    match api {
        WireApi::OpenAiChat => openai_chat::read(&r, expect),
        WireApi::OpenAiResponses => openai_responses::read(&r, expect),
        WireApi::Anthropic => anthropic::read(&r, expect),
        WireApi::Gemini => gemini::read(&r, expect),
        WireApi::OllamaChat => ollama::read(&r, expect),
    }
}

/// The fields that ask `kind` for a streamed response, to merge into a request body: `stream`
/// (with the usage in the last chunk where the API sends it only when asked). Gemini streams
/// through another URL (`:streamGenerateContent?alt=sse`) and needs none.
pub fn stream_fields(kind: ProviderKind) -> Value {
    match kind.wire_api() {
        WireApi::OpenAiChat => serde_json::json!({
            "stream": true,
            "stream_options": {"include_usage": true}
        }),
        WireApi::OpenAiResponses | WireApi::Anthropic | WireApi::OllamaChat => {
            serde_json::json!({"stream": true})
        }
        WireApi::Gemini => Value::Object(Map::new()),
    }
}

/// How a schema-enforced request to a llama.cpp server carries the schema.
///
/// Measured on the bundled server (`xllamacpp` 2026.10.11549, SmolLM2-135M): `json_schema`
/// (as `response_format`) goes through llama.cpp's own JSON-Schema converter, which holds the
/// model to integer bounds, lengths, anchored patterns and four formats but not to a
/// fractional range, an email, a map's keys or `multipleOf`; a `grammar` (GBNF, compiled here)
/// holds it to those too, on any llama.cpp build. The server refuses both in one request
/// (`Cannot use both json_schema and grammar`; with `response_format` the grammar is ignored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum LlamaCppRequest {
    /// `grammar`: the GBNF grammar compiled from the schema ([`crate::provider::dialect::grammar`]), with a
    /// budget for free text. The default.
    #[default]
    Grammar,
    /// `response_format` with the schema lowered for llama.cpp's converter.
    JsonSchema,
}

impl LlamaCppRequest {
    /// The setting's name in configuration: `"grammar"` or `"json_schema"`.
    pub fn name(self) -> &'static str {
        match self {
            LlamaCppRequest::Grammar => "grammar",
            LlamaCppRequest::JsonSchema => "json_schema",
        }
    }
}

/// How strongly a request constrains the answer where the provider lets it choose: the
/// llama.cpp form and the grammar's budget for free text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Constraint {
    /// The llama.cpp form.
    pub llama_cpp: LlamaCppRequest,
    /// The grammar's budget (from the request's `max_tokens` in a run).
    pub budget: GrammarBudget,
}

impl Constraint {
    /// Whether `provider` in `mode` is sent a grammar under this constraint.
    pub fn sends_grammar(&self, provider: ProviderKind, mode: StructuredOutputMode) -> bool {
        provider == ProviderKind::LlamaCpp
            && mode == StructuredOutputMode::SchemaEnforced
            && self.llama_cpp == LlamaCppRequest::Grammar
    }
}

/// What to send: fields to merge into the body, the system text a prompt-guided request needs,
/// and the tool the model is made to call in tool mode.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestFragment {
    /// Fields to merge into the request body ([`merge`]); `{}` when the mode adds none.
    pub body: Value,
    /// Text to add to the system prompt ([`StructuredOutputMode::PromptGuided`]: the schema as
    /// guidance). Kept apart from the user's prompt so that prompt stays cacheable.
    pub system: Option<String>,
    /// The tool the model must call ([`StructuredOutputMode::ToolUseWorkaround`]).
    pub tool_name: Option<String>,
}

/// The fragment asking `provider` (with `caps`, from [`crate::provider::capabilities`]) for
/// `schema` in `mode`. The schema is lowered for `caps.schema_target` (once per schema and
/// target: [`ResponseSchema::lowered`]); what the target cannot express is an error before any
/// request.
///
/// ```
/// use structured_runtime::provider::capabilities::{capabilities, ProviderKind};
/// use structured_runtime::provider::wire::request_fragment;
/// use structured_runtime::{ResponseSchema, StructuredOutputMode};
///
/// let schema = ResponseSchema::new("answer", serde_json::json!({
///     "type": "object", "properties": {"ok": {"type": "boolean"}},
///     "required": ["ok"], "additionalProperties": false
/// })).unwrap();
/// let caps = capabilities(ProviderKind::Anthropic, "claude-sonnet-4-5");
/// let fragment = request_fragment(ProviderKind::Anthropic, StructuredOutputMode::SchemaEnforced, &schema, &caps).unwrap();
/// assert_eq!(fragment.body["output_config"]["format"]["type"], "json_schema");
/// ```
pub fn request_fragment(
    provider: ProviderKind,
    mode: StructuredOutputMode,
    schema: &ResponseSchema,
    caps: &ProviderCapabilities,
) -> Result<RequestFragment, LowerReport> {
    request_fragment_with(provider, mode, schema, caps, &Constraint::default())
}

/// [`request_fragment`] under a [`Constraint`] (the llama.cpp form and grammar budget).
pub fn request_fragment_with(
    provider: ProviderKind,
    mode: StructuredOutputMode,
    schema: &ResponseSchema,
    caps: &ProviderCapabilities,
    constraint: &Constraint,
) -> Result<RequestFragment, LowerReport> {
    Ok(RequestFragment {
        body: fragment_body(provider, mode, schema, caps, constraint)?
            .value
            .clone(),
        system: (mode == StructuredOutputMode::PromptGuided)
            .then(|| schema.prompt_guidance().to_owned()),
        tool_name: (mode == StructuredOutputMode::ToolUseWorkaround)
            .then(|| schema.name().to_owned()),
    })
}

/// The fields [`request_fragment`] merges into the body, built once per schema, provider, mode
/// and target, and kept on the schema.
pub(crate) fn fragment_body(
    provider: ProviderKind,
    mode: StructuredOutputMode,
    schema: &ResponseSchema,
    caps: &ProviderCapabilities,
    constraint: &Constraint,
) -> Result<Arc<Fragment>, LowerReport> {
    let target = sent_target(caps, schema);
    if constraint.sends_grammar(provider, mode) {
        let budget = constraint.budget;
        let key = FragmentKey::Grammar {
            provider,
            mode,
            budget,
        };
        return fragment(schema, key, target, |schema| {
            let g = grammar(schema.schema(), budget)?;
            let mut fragment = Fragment::new(serde_json::json!({ "grammar": g.text }));
            fragment.grammar_limits = Some((g.unenforced, g.budgets));
            Ok(fragment)
        });
    }
    let key = FragmentKey::Schema {
        provider,
        mode,
        target,
    };
    fragment(schema, key, target, |schema| {
        build_fragment(provider, mode, schema, target).map(Fragment::new)
    })
}

/// `body` (a request in tool mode) with the caller's `tools` offered beside the structured-output
/// tool, and the choice opened from "that tool" to "any tool" (the model must still call one),
/// or to "the model's choice" when `choose_freely` (Anthropic with extended thinking, which
/// takes no forced tool choice).
pub(crate) fn add_caller_tools(
    kind: ProviderKind,
    body: &mut Value,
    tools: &[Tool],
    choose_freely: bool,
) {
    let Value::Object(map) = body else { return };
    let api = kind.wire_api();
    let entries: Vec<Value> = tools
        .iter()
        .map(|t| match api {
            WireApi::Anthropic => {
                let mut tool = serde_json::json!({
                    "name": t.name, "description": t.description, "input_schema": t.parameters});
                if let (true, Value::Object(m)) = (t.strict, &mut tool) {
                    m.insert("strict".into(), Value::Bool(true));
                }
                tool
            }
            // Responses makes a tool sent without `strict` strict: it is always said.
            WireApi::OpenAiResponses => serde_json::json!({"type": "function",
                "name": t.name, "description": t.description, "parameters": t.parameters,
                "strict": t.strict}),
            WireApi::Gemini => serde_json::json!({
                "name": t.name, "description": t.description, "parametersJsonSchema": t.parameters}),
            WireApi::OpenAiChat => {
                let mut function = serde_json::json!({
                    "name": t.name, "description": t.description, "parameters": t.parameters});
                if let (true, Value::Object(m)) = (t.strict, &mut function) {
                    m.insert("strict".into(), Value::Bool(true));
                }
                serde_json::json!({"type": "function", "function": function})
            }
            WireApi::OllamaChat => serde_json::json!({"type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}),
        })
        .collect();
    match api {
        WireApi::Gemini => {
            if let Some(Value::Array(groups)) = map.get_mut("tools") {
                if let Some(Value::Array(declarations)) = groups
                    .first_mut()
                    .and_then(|g| g.get_mut("functionDeclarations"))
                {
                    declarations.extend(entries);
                }
            }
            map.insert(
                "toolConfig".into(),
                serde_json::json!({"functionCallingConfig": {"mode": "ANY"}}),
            );
        }
        _ => {
            if let Some(Value::Array(existing)) = map.get_mut("tools") {
                existing.extend(entries);
            }
            let choice = match api {
                WireApi::Anthropic if choose_freely => serde_json::json!({"type": "auto"}),
                WireApi::Anthropic => {
                    serde_json::json!({"type": "any", "disable_parallel_tool_use": false})
                }
                // Ollama has no tool choice: the model chooses, the run bounds text answers.
                WireApi::OllamaChat => Value::Null,
                _ => Value::from("required"),
            };
            if !choice.is_null() {
                map.insert("tool_choice".into(), choice);
            }
            if map.contains_key("parallel_tool_calls") {
                map.insert("parallel_tool_calls".into(), Value::Bool(true));
            }
        }
    }
}

/// The target `schema` is lowered for with these capabilities: a best-effort schema is sent as
/// written, since OpenAI's strict rules do not apply to it.
pub(crate) fn sent_target(caps: &ProviderCapabilities, schema: &ResponseSchema) -> SchemaTarget {
    match caps.schema_target {
        SchemaTarget::OpenAiStrict if !schema.strict() => SchemaTarget::JsonSchema,
        target => target,
    }
}

fn build_fragment(
    provider: ProviderKind,
    mode: StructuredOutputMode,
    schema: &ResponseSchema,
    target: SchemaTarget,
) -> Result<Value, LowerReport> {
    let name = schema.name();
    let description = schema.description();
    let strict = schema.strict();
    Ok(match mode {
        StructuredOutputMode::None | StructuredOutputMode::PromptGuided => {
            Value::Object(Map::new())
        }
        StructuredOutputMode::SchemaEnforced => {
            let lowered = schema.lowered(target)?.clone();
            match provider.wire_api() {
                WireApi::OpenAiResponses => {
                    openai_responses::schema_fragment(name, description, lowered, strict)
                }
                WireApi::Anthropic => anthropic::schema_fragment(lowered),
                WireApi::Gemini => gemini::schema_fragment(target, lowered),
                WireApi::OllamaChat => ollama::schema_fragment(lowered),
                WireApi::OpenAiChat => {
                    openai_chat::schema_fragment(provider, name, description, lowered, strict)
                }
            }
        }
        StructuredOutputMode::ToolUseWorkaround => {
            let lowered = schema.lowered(target)?.clone();
            match provider.wire_api() {
                WireApi::OpenAiResponses => {
                    openai_responses::tool_fragment(name, description, lowered, strict)
                }
                WireApi::Anthropic => anthropic::tool_fragment(name, description, lowered),
                WireApi::Gemini => gemini::tool_fragment(target, name, description, lowered),
                WireApi::OllamaChat => ollama::tool_fragment(name, description, lowered),
                WireApi::OpenAiChat => {
                    openai_chat::tool_fragment(provider, name, description, lowered, strict)
                }
            }
        }
    })
}

/// The request body for `kind`: the prompt, the fragment (with its system text after the
/// caller's), then `turns`, then `request.extra`. The caller's messages come first and never
/// change between attempts, so a provider's prompt cache keeps serving them.
pub fn build_body(
    kind: ProviderKind,
    model: &str,
    request: &ChatRequest,
    fragment: &RequestFragment,
    turns: &[Turn],
) -> Value {
    body_with(
        kind,
        model,
        &Sent::as_asked(request),
        fragment.system.as_deref(),
        &fragment.body,
        turns,
    )
}

/// What a request is written from: the caller's request, borrowed, with the token limit and
/// extra fields sent with it (the caller's own, or what a run sets over them), so a run that
/// adds a limit does not copy the conversation to say so.
#[derive(Debug, Clone)]
pub(crate) struct Sent<'a> {
    pub(crate) request: &'a ChatRequest,
    pub(crate) max_tokens: Option<u32>,
    pub(crate) extra: std::borrow::Cow<'a, Value>,
}

impl<'a> Sent<'a> {
    /// The request as the caller wrote it.
    pub(crate) fn as_asked(request: &'a ChatRequest) -> Sent<'a> {
        Sent {
            request,
            max_tokens: request.max_tokens,
            extra: std::borrow::Cow::Borrowed(&request.extra),
        }
    }
}

/// [`build_body`] from the fragment's parts.
pub(crate) fn body_with(
    kind: ProviderKind,
    model: &str,
    sent: &Sent<'_>,
    fragment_system: Option<&str>,
    fragment_body: &Value,
    turns: &[Turn],
) -> Value {
    let mut body = base_body(kind, model, sent, fragment_system, turns).into_value();
    merge(&mut body, fragment_body);
    merge(&mut body, &sent.extra);
    body
}

/// The body without the fragment's fields and the caller's extra fields, as it is written:
/// borrowed from the request.
fn base_body<'a>(
    kind: ProviderKind,
    model: &'a str,
    sent: &Sent<'a>,
    fragment_system: Option<&str>,
    turns: &'a [Turn],
) -> Json<'a> {
    let (request, limit) = (sent.request, sent.max_tokens);
    let system = match (&request.system, fragment_system) {
        (Some(a), Some(b)) => Some(format!("{a}\n\n{b}")),
        (a, b) => a.clone().or_else(|| b.map(str::to_owned)),
    };
    match kind.wire_api() {
        WireApi::OpenAiChat => openai_chat::body(model, request, limit, system, turns),
        WireApi::OllamaChat => ollama::body(model, request, limit, system, turns),
        WireApi::OpenAiResponses => openai_responses::body(model, request, limit, system, turns),
        WireApi::Anthropic => anthropic::body(model, request, limit, system, turns),
        WireApi::Gemini => gemini::body(request, limit, system, turns),
    }
}

/// The body [`build_body`] builds, written as JSON text: the request's own parts written from
/// where the request holds them (not copied into a `Value` first), and the fragment's members
/// spliced in as the text kept with them, so a large schema is not copied for every request.
/// Where the fragment's fields meet the body's or the caller's own (a `generationConfig` with
/// the token limit, a `provider` object), the body is merged as a value instead; the JSON is
/// the same.
pub(crate) fn body_text(
    kind: ProviderKind,
    model: &str,
    sent: &Sent<'_>,
    fragment_system: Option<&str>,
    fragment: &Fragment,
    turns: &[Turn],
) -> String {
    let mut body = base_body(kind, model, sent, fragment_system, turns);
    let extra = sent.extra.as_object();
    let meets = |k: &str| body.has(k) || extra.is_some_and(|e| e.contains_key(k));
    if fragment.members.iter().any(|(k, _)| meets(k)) {
        let mut body = body.into_value();
        merge(&mut body, &fragment.value);
        merge(&mut body, &sent.extra);
        return json_text(&body, 0);
    }
    // The caller's fields that meet the body's merge into it; the rest follow the fragment's.
    let mut after = Vec::new();
    for (k, v) in extra.into_iter().flatten() {
        match body.member_mut(k) {
            Some(existing) => {
                let mut merged = std::mem::replace(existing, Json::Null).into_value();
                merge(&mut merged, v);
                *existing = Json::Value(merged);
            }
            None => after.push((k, v)),
        }
    }
    // Written straight into one buffer sized for the fragment's members (serde_json's writer,
    // not `Display`'s formatter).
    let spliced: usize = fragment.members.iter().map(|(_, m)| m.len() + 1).sum();
    let mut text = json_text(&body, spliced);
    if text.pop() != Some('}') {
        // Not an object (never, for the bodies above): merged as a value.
        let mut body = body.into_value();
        merge(&mut body, &fragment.value);
        merge(&mut body, &sent.extra);
        return json_text(&body, 0);
    }
    let mut first = text.len() == 1;
    let mut next = |text: &mut String| {
        if !first {
            text.push(',');
        }
        first = false;
    };
    for (_, member) in &fragment.members {
        next(&mut text);
        text.push_str(member);
    }
    for (k, v) in after {
        next(&mut text);
        text.push_str(&json_text(k, 0));
        text.push(':');
        text.push_str(&json_text(v, 0));
    }
    text.push('}');
    text
}

/// `value` as JSON text, with room for `more` bytes after it.
fn json_text<T: serde::Serialize + ?Sized>(value: &T, more: usize) -> String {
    let mut out = Vec::with_capacity(256 + more);
    // Writing a `Value` or a `str` into a `Vec` cannot fail.
    if serde_json::to_writer(&mut out, value).is_err() {
        out.clear();
    }
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::capabilities::capabilities;
    use serde_json::json;

    /// The text the runner sends is the body [`build_body`] builds, for every provider, mode
    /// and kind of caller's extra fields (none, new ones, ones that meet the fragment's).
    #[test]
    fn the_body_text_is_the_built_body() {
        let schema = ResponseSchema::new(
            "answer",
            json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}},
                "required": ["n"], "additionalProperties": false}),
        )
        .unwrap()
        .with_description("A count.");
        let kinds = [
            (ProviderKind::OpenAiChat, "gpt-4o"),
            (ProviderKind::OpenAiResponses, "gpt-4o"),
            (ProviderKind::Anthropic, "claude-sonnet-4-5"),
            (ProviderKind::Anthropic, "claude-3-5-haiku-latest"),
            (ProviderKind::Gemini, "gemini-2.5-flash"),
            (ProviderKind::Gemini, "gemini-1.5-pro"),
            (ProviderKind::OpenRouter, "openai/gpt-4o"),
            (ProviderKind::Ollama, "llama3"),
            (ProviderKind::LlamaCpp, "local"),
            (ProviderKind::Vllm, "qwen"),
        ];
        let modes = [
            StructuredOutputMode::None,
            StructuredOutputMode::SchemaEnforced,
            StructuredOutputMode::ToolUseWorkaround,
            StructuredOutputMode::PromptGuided,
        ];
        let extras = [
            json!({}),
            json!({"temperature": 0}),
            json!({"provider": {"order": ["a"]}, "generationConfig": {"temperature": 0}}),
            json!({"messages": [], "max_tokens": 9}),
        ];
        let turns = [
            Turn::AssistantText("{\"n\": -1}".into()),
            Turn::UserText("fix /n".into()),
        ];
        for (kind, model) in kinds {
            let caps = capabilities(kind, model);
            for mode in modes {
                let Ok(fragment) = request_fragment(kind, mode, &schema, &caps) else {
                    continue;
                };
                let cached =
                    fragment_body(kind, mode, &schema, &caps, &Constraint::default()).unwrap();
                for extra in &extras {
                    let mut request = ChatRequest::user("Count.");
                    request.messages.push(
                        ChatMessage::user("This one.")
                            .with(Attachment::image_base64("image/png", "iVBORw0KGgo=")),
                    );
                    request.system = Some("Be brief.".into());
                    request.max_tokens = Some(64);
                    request.extra = extra.clone();
                    let built = build_body(kind, model, &request, &fragment, &turns);
                    let text = body_text(
                        kind,
                        model,
                        &Sent::as_asked(&request),
                        fragment.system.as_deref(),
                        &cached,
                        &turns,
                    );
                    // The same text, member for member in the same order, no key twice.
                    assert_eq!(text, built.to_string(), "{kind:?} {mode:?} {extra}");
                    assert!(
                        crate::read::strict_de::value_from_str(&text).is_ok(),
                        "{kind:?} {mode:?} {extra}: a key twice"
                    );
                }
            }
        }
    }
}

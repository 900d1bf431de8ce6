//! The request side: what to add to a provider's request body to ask for structured output in a
//! mode, with the schema lowered for the provider's model (`PROVIDERS.md` §1.1–§5.4).

use serde_json::{json, Map, Value};

use crate::provider::capabilities::{ProviderCapabilities, ProviderKind, SchemaTarget};
use crate::provider::dialect::{lower, LowerError, LowerReport};
use crate::provider::mode::StructuredOutputMode;
use crate::schema::response::ResponseSchema;

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

/// The fragment asking `provider` (with `caps`, from [`crate::provider::capabilities`]) for `schema` in
/// `mode`. The schema is lowered for `caps.schema_target`; what the target cannot express is an
/// error before any request.
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
    let mut fragment = RequestFragment {
        body: Value::Object(Map::new()),
        system: None,
        tool_name: None,
    };
    let name = schema.name().to_owned();
    let description = schema.description().map(str::to_owned);
    match mode {
        StructuredOutputMode::None => {}
        StructuredOutputMode::PromptGuided => {
            fragment.system = Some(schema.prompt_guidance().to_owned());
        }
        StructuredOutputMode::SchemaEnforced => {
            let lowered = lower(schema.schema(), caps.schema_target)?;
            fragment.body = schema_body(provider, caps.schema_target, &name, description, lowered);
        }
        StructuredOutputMode::ToolUseWorkaround => {
            let lowered = lower(schema.schema(), caps.schema_target)?;
            fragment.body = tool_body(provider, caps.schema_target, &name, description, lowered)?;
            fragment.tool_name = Some(name);
        }
    }
    Ok(fragment)
}

fn schema_body(
    provider: ProviderKind,
    target: SchemaTarget,
    name: &str,
    description: Option<String>,
    schema: Value,
) -> Value {
    match provider {
        ProviderKind::OpenAiResponses => {
            let mut format =
                json!({"type": "json_schema", "name": name, "schema": schema, "strict": true});
            put(&mut format, "description", description);
            json!({"text": {"format": format}})
        }
        ProviderKind::Anthropic => {
            json!({"output_config": {"format": {"type": "json_schema", "schema": schema}}})
        }
        ProviderKind::Gemini => {
            let key = if target == SchemaTarget::GeminiResponseSchema {
                "responseSchema"
            } else {
                "responseJsonSchema"
            };
            json!({"generationConfig": {"responseMimeType": "application/json", key: schema}})
        }
        ProviderKind::Ollama => json!({"format": schema}),
        ProviderKind::OpenAiChat
        | ProviderKind::Venice
        | ProviderKind::OpenRouter
        | ProviderKind::Vllm
        | ProviderKind::LlamaCpp
        | ProviderKind::Passthrough => {
            let mut inner = json!({"name": name, "schema": schema, "strict": true});
            put(&mut inner, "description", description);
            let mut body =
                json!({"response_format": {"type": "json_schema", "json_schema": inner}});
            if provider == ProviderKind::OpenRouter {
                // Route only to endpoints that honour `response_format`.
                merge(
                    &mut body,
                    &json!({"provider": {"require_parameters": true}}),
                );
            }
            body
        }
    }
}

fn tool_body(
    provider: ProviderKind,
    target: SchemaTarget,
    name: &str,
    description: Option<String>,
    schema: Value,
) -> Result<Value, LowerReport> {
    Ok(match provider {
        ProviderKind::OpenAiResponses => {
            let mut tool = json!({"type": "function", "name": name, "parameters": schema, "strict": true});
            put(&mut tool, "description", description);
            json!({"tools": [tool], "tool_choice": {"type": "function", "name": name}, "parallel_tool_calls": false})
        }
        ProviderKind::Anthropic => {
            let mut tool = json!({"name": name, "input_schema": schema});
            put(&mut tool, "description", description);
            json!({"tools": [tool], "tool_choice": {"type": "tool", "name": name, "disable_parallel_tool_use": true}})
        }
        ProviderKind::Gemini => {
            let key = if target == SchemaTarget::GeminiResponseSchema { "parameters" } else { "parametersJsonSchema" };
            let mut declaration = json!({"name": name, key: schema});
            put(&mut declaration, "description", description);
            json!({
                "tools": [{"functionDeclarations": [declaration]}],
                "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [name]}}
            })
        }
        ProviderKind::Ollama | ProviderKind::LlamaCpp => {
            return Err(LowerReport {
                target,
                errors: vec![LowerError {
                    target,
                    path: String::new(),
                    reason: format!("{provider:?} cannot force a tool call; ask with SchemaEnforced or PromptGuided"),
                }],
            })
        }
        ProviderKind::OpenAiChat | ProviderKind::Venice | ProviderKind::OpenRouter | ProviderKind::Vllm | ProviderKind::Passthrough => {
            let mut function = json!({"name": name, "parameters": schema, "strict": true});
            put(&mut function, "description", description);
            let mut body = json!({
                "tools": [{"type": "function", "function": function}],
                "tool_choice": {"type": "function", "function": {"name": name}},
                "parallel_tool_calls": false
            });
            if provider == ProviderKind::OpenRouter {
                merge(&mut body, &json!({"provider": {"require_parameters": true}}));
            }
            body
        }
    })
}

fn put(object: &mut Value, key: &str, value: Option<String>) {
    if let (Value::Object(map), Some(v)) = (object, value) {
        map.insert(key.to_owned(), Value::String(v));
    }
}

/// Merges `fragment` into `body`: objects key by key (recursively), anything else replaced.
///
/// ```
/// use structured_runtime::provider::wire::merge;
/// let mut body = serde_json::json!({"model": "gpt-4o", "provider": {"order": ["a"]}});
/// merge(&mut body, &serde_json::json!({"provider": {"require_parameters": true}}));
/// assert_eq!(body["provider"], serde_json::json!({"order": ["a"], "require_parameters": true}));
/// ```
pub fn merge(body: &mut Value, fragment: &Value) {
    match (body, fragment) {
        (Value::Object(body), Value::Object(fragment)) => {
            for (k, v) in fragment {
                match body.get_mut(k) {
                    Some(existing) => merge(existing, v),
                    None => {
                        body.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (body, fragment) => *body = fragment.clone(),
    }
}

//! Every file in `tests/data/providers/` read, with its exact outcome; request fragments
//! against the SDK's recorded requests; bad bodies and cut streams as typed errors.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use structured_examples::HeartbeatDecision;
use structured_runtime::provider::capabilities::{capabilities, ProviderKind};
use structured_runtime::provider::wire::merge;
use structured_runtime::provider::wire::{
    read_response, read_response_value, read_stream, request_fragment, CodecError, Expect, Outcome,
    ProviderResponse, StreamDecoder, StructuredCandidate, ToolCall, Usage, WireApi,
};
use structured_runtime::read::repair::repair;
use structured_runtime::read::Answer;
use structured_runtime::{ResponseSchema, StructuredOutput, StructuredOutputMode};

use StructuredOutputMode::{PromptGuided, SchemaEnforced};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/providers")
}

fn text(name: &str) -> String {
    std::fs::read_to_string(dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn json_of(name: &str) -> Value {
    serde_json::from_str(&text(name)).unwrap()
}

fn read(api: WireApi, expect: Expect, name: &str) -> ProviderResponse {
    let body = text(name);
    let read = if name.ends_with(".sse") {
        read_stream(api, &expect, &body)
    } else {
        read_response(api, &expect, &body)
    };
    read.unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn outcome(api: WireApi, expect: Expect, name: &str) -> Outcome {
    read(api, expect, name).outcome
}

fn answer(text: &str) -> Outcome {
    Outcome::Candidate(StructuredCandidate {
        answer: Answer::Text(text.into()),
        tool_call: None,
    })
}

/// A tool call whose arguments came as text (OpenAI's string `arguments`).
fn call(id: Option<&str>, name: &str, input: &str) -> Outcome {
    call_with(id, name, Answer::Text(input.into()))
}

/// A tool call whose arguments came as a value (Anthropic's `input`, Gemini's `args`, Ollama's
/// `arguments` objects): read where they are, never printed to text.
fn call_json(id: Option<&str>, name: &str, input: Value) -> Outcome {
    call_with(id, name, Answer::Json(input))
}

fn call_with(id: Option<&str>, name: &str, answer: Answer) -> Outcome {
    Outcome::Candidate(StructuredCandidate {
        answer,
        tool_call: Some(ToolCall {
            id: id.map(Into::into),
            name: name.into(),
        }),
    })
}

/// The candidate's answer as text.
fn text_of(c: &StructuredCandidate) -> String {
    c.answer.to_text().into_owned()
}

/// The fixtures each test below reads; a new fixture fails this test until it is read too.
const READ: &[&str] = &[
    "anthropic_stream_max_tokens_partial_tool_input.sse",
    "anthropic_stream_refusal.sse",
    "anthropic_stream_tool_use.sse",
    "anthropic_structured_output_defs_success.request.json",
    "anthropic_structured_output_defs_success.response.json",
    "anthropic_structured_output_success.request.json",
    "anthropic_structured_output_success.response.json",
    "anthropic_text_then_tool_use.request.json",
    "anthropic_text_then_tool_use.response.json",
    "anthropic_tool_use.request.json",
    "anthropic_tool_use.response.json",
    "anthropic_transform_schema_vectors.json", // the runtime's dialect tests
    "gemini_basic_text_success.json",
    "gemini_finish_reason_other_no_content.json",
    "gemini_finish_reason_safety.json",
    "gemini_finish_reason_safety_no_content.json",
    "gemini_function_call.json",
    "gemini_max_tokens_no_parts.json",
    "gemini_parallel_function_calls.json",
    "gemini_prompt_blocked_safety.json",
    "gemini_stream_basic_reply_short.sse",     // stream_wire.rs
    "gemini_stream_max_tokens.sse",            // stream_wire.rs
    "gemini_stream_prompt_blocked_safety.sse", // stream_wire.rs
    "gemini_stream_structured_json.sse",       // stream_wire.rs
    "gemini_structured_json_success.json",
    "ollama_chat_stream_length.ndjson",     // stream_wire.rs
    "ollama_chat_stream_structured.ndjson", // stream_wire.rs
    "ollama_chat_structured_success.json",
    "ollama_chat_tool_call.json",
    "openai_chat_parallel_tool_calls.json",
    "openai_chat_plain_text_no_format.json",
    "openai_chat_stream_refusal.sse",
    "openai_chat_stream_structured_success.sse",
    "openai_chat_stream_truncated_length.sse",
    "openai_chat_strict_tool_call.json",
    "openai_chat_strict_tool_call_nested_anyof.json",
    "openai_chat_structured_multiple_choices.json",
    "openai_chat_structured_optional_field_success.json",
    "openai_chat_structured_refusal.json",
    "openai_chat_structured_success.json",
    "openai_chat_structured_truncated_length.json",
    "openai_responses_function_call.json",
    "openai_responses_incomplete_event.json",
    "openai_responses_output_text.json",
    "openai_responses_refusal_docs_example.txt",
    "openai_responses_stream_function_call.sse", // stream_wire.rs
    "openai_responses_stream_incomplete.sse",    // stream_wire.rs
    "openai_responses_stream_refusal.sse",       // stream_wire.rs
    "openai_responses_stream_structured_success.sse", // stream_wire.rs
    "openai_to_strict_json_schema_expected.json", // the runtime's dialect tests
    "venice_structured_content_example.json",
];

#[test]
fn every_fixture_is_read_by_a_test() {
    let mut files: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "README.md")
        .collect();
    files.sort();
    assert_eq!(files, READ);
}

#[test]
fn openai_chat_bodies() {
    let api = WireApi::OpenAiChat;
    let content = |name: &str| {
        json_of(name)["choices"][0]["message"]["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    for name in [
        "openai_chat_structured_success.json",
        "openai_chat_structured_optional_field_success.json",
        "openai_chat_structured_multiple_choices.json",
    ] {
        assert_eq!(
            outcome(api, Expect::new(SchemaEnforced), name),
            answer(&content(name)),
            "{name}"
        );
    }
    let success = read(
        api,
        Expect::new(SchemaEnforced),
        "openai_chat_structured_success.json",
    );
    assert_eq!(success.stop_reason.as_deref(), Some("stop"));
    assert!(success
        .usage
        .is_some_and(|u| u.input_tokens > 0 && u.output_tokens > 0));
    assert_eq!(
        outcome(
            api,
            Expect::new(SchemaEnforced),
            "openai_chat_structured_refusal.json"
        ),
        Outcome::Refused {
            explanation: Some("I'm very sorry, but I can't assist with that.".into()),
            category: None
        }
    );
    assert_eq!(
        outcome(
            api,
            Expect::new(SchemaEnforced),
            "openai_chat_structured_truncated_length.json"
        ),
        Outcome::Truncated {
            partial: Some(StructuredCandidate {
                answer: Answer::Text("{\"".into()),
                tool_call: None
            }),
            reason: "length".into()
        }
    );
    let plain = content("openai_chat_plain_text_no_format.json");
    assert_eq!(
        outcome(
            api,
            Expect::new(PromptGuided),
            "openai_chat_plain_text_no_format.json"
        ),
        answer(&plain)
    );
    assert_eq!(
        outcome(
            api,
            Expect::tool("GetWeatherArgs"),
            "openai_chat_plain_text_no_format.json"
        ),
        Outcome::NoStructuredOutput { text: Some(plain) }
    );
    assert_eq!(
        outcome(
            api,
            Expect::tool("GetWeatherArgs"),
            "openai_chat_strict_tool_call.json"
        ),
        call(
            Some("call_Y6qJ7ofLgOrBnMD5WbVAeiRV"),
            "GetWeatherArgs",
            r#"{"city":"Edinburgh","country":"UK","units":"c"}"#
        )
    );
    let nested = json_of("openai_chat_strict_tool_call_nested_anyof.json");
    let args = nested["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
        .as_str()
        .unwrap();
    let id = nested["choices"][0]["message"]["tool_calls"][0]["id"].as_str();
    assert_eq!(
        outcome(
            api,
            Expect::tool("Query"),
            "openai_chat_strict_tool_call_nested_anyof.json"
        ),
        call(id, "Query", args)
    );
    // Two tools called at once: not the one forced call asked for.
    match outcome(
        api,
        Expect::tool("GetWeatherArgs"),
        "openai_chat_parallel_tool_calls.json",
    ) {
        Outcome::ToolCalledWrongly { calls, reason, .. } => {
            assert_eq!(calls.len(), 2);
            assert_eq!(calls[1].name, "get_stock_price");
            assert!(reason.contains("one tool call"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn openai_chat_streams_assemble_to_the_same_outcomes() {
    let api = WireApi::OpenAiChat;
    let streamed = read(
        api,
        Expect::new(SchemaEnforced),
        "openai_chat_stream_structured_success.sse",
    );
    match &streamed.outcome {
        Outcome::Candidate(c) => {
            let value: Value = serde_json::from_str(&text_of(c)).unwrap();
            assert_eq!(value["city"], "San Francisco");
        }
        other => panic!("{other:?}"),
    }
    assert!(streamed.usage.is_some());
    assert_eq!(
        outcome(
            api,
            Expect::new(SchemaEnforced),
            "openai_chat_stream_refusal.sse"
        ),
        Outcome::Refused {
            explanation: Some("I'm sorry, I can't assist with that request.".into()),
            category: None
        }
    );
    assert_eq!(
        outcome(
            api,
            Expect::new(SchemaEnforced),
            "openai_chat_stream_truncated_length.sse"
        ),
        Outcome::Truncated {
            partial: Some(StructuredCandidate {
                answer: Answer::Text("{\"".into()),
                tool_call: None
            }),
            reason: "length".into()
        }
    );
}

#[test]
fn openai_responses_bodies() {
    let api = WireApi::OpenAiResponses;
    let output = json_of("openai_responses_output_text.json");
    let text = output["output"][0]["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        outcome(
            api,
            Expect::new(PromptGuided),
            "openai_responses_output_text.json"
        ),
        answer(text)
    );
    let function = json_of("openai_responses_function_call.json");
    assert_eq!(
        outcome(
            api,
            Expect::tool("get_current_weather"),
            "openai_responses_function_call.json"
        ),
        call(
            function["output"][0]["call_id"].as_str(),
            "get_current_weather",
            r#"{"location":"Boston, MA","unit":"celsius"}"#
        )
    );
    // The spec's example event says `max_tokens` (its enum says `max_output_tokens`): the
    // reason is passed on as sent.
    assert_eq!(
        outcome(
            api,
            Expect::new(SchemaEnforced),
            "openai_responses_incomplete_event.json"
        ),
        Outcome::Truncated {
            partial: None,
            reason: "max_tokens".into()
        }
    );
    // The docs' refusal example has trailing commas: not JSON, so a typed error; repaired, it
    // reads as the refusal it shows.
    let docs = text_of_docs();
    assert!(matches!(
        read_response(api, &Expect::new(SchemaEnforced), &docs),
        Err(CodecError::NotJson { .. })
    ));
    let repaired = repair(&docs).unwrap();
    assert_eq!(
        read_response_value(api, &Expect::new(SchemaEnforced), &repaired.value)
            .unwrap()
            .outcome,
        Outcome::Refused {
            explanation: Some("I'm sorry, I cannot assist with that request.".into()),
            category: None
        }
    );
}

fn text_of_docs() -> String {
    text("openai_responses_refusal_docs_example.txt")
}

#[test]
fn anthropic_bodies_and_streams() {
    let api = WireApi::Anthropic;
    for name in [
        "anthropic_structured_output_success.response.json",
        "anthropic_structured_output_defs_success.response.json",
    ] {
        let text = json_of(name)["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(
            outcome(api, Expect::new(SchemaEnforced), name),
            answer(&text),
            "{name}"
        );
    }
    assert_eq!(
        outcome(
            api,
            Expect::tool("get_weather"),
            "anthropic_tool_use.response.json"
        ),
        call_json(
            Some("toolu_013DU6hV4C1M8dJ32ybQFAFi"),
            "get_weather",
            json!({"location": "SF", "units": "c"})
        )
    );
    // Text before the tool call is commentary; the call is the answer.
    let both = json_of("anthropic_text_then_tool_use.response.json");
    match outcome(
        api,
        Expect::tool("submit_analysis"),
        "anthropic_text_then_tool_use.response.json",
    ) {
        Outcome::Candidate(c) => {
            assert_eq!(c.tool_call.unwrap().name, "submit_analysis");
            assert_eq!(c.answer, Answer::Json(both["content"][1]["input"].clone()));
        }
        other => panic!("{other:?}"),
    }
    let streamed = read(
        api,
        Expect::tool("get_weather"),
        "anthropic_stream_tool_use.sse",
    );
    match &streamed.outcome {
        Outcome::Candidate(c) => {
            assert_eq!(c.tool_call.as_ref().unwrap().name, "get_weather");
            assert!(matches!(&c.answer, Answer::Json(v) if v.is_object()));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(streamed.stop_reason.as_deref(), Some("tool_use"));
    assert_eq!(
        outcome(
            api,
            Expect::new(SchemaEnforced),
            "anthropic_stream_refusal.sse"
        ),
        Outcome::Refused {
            explanation: Some("This request was refused due to policy.".into()),
            category: Some("cyber".into())
        }
    );
    let cut = read(
        api,
        Expect::tool("make_file"),
        "anthropic_stream_max_tokens_partial_tool_input.sse",
    );
    match cut.outcome {
        Outcome::Truncated {
            partial: Some(partial),
            reason,
        } => {
            assert_eq!(reason, "max_tokens");
            assert_eq!(partial.tool_call.as_ref().unwrap().name, "make_file");
            // Cut input is the raw text the stream carried, never a value.
            let Answer::Text(partial) = &partial.answer else {
                panic!("{partial:?}")
            };
            assert!(
                partial.starts_with("{\"filename\": \"taxes.txt\""),
                "{partial}"
            );
            assert!(partial.ends_with("\"Filing taxes"), "{partial}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        cut.usage,
        Some(Usage {
            input_tokens: 450,
            output_tokens: 124,
            cached_input_tokens: 0,
        })
    );
}

#[test]
fn gemini_bodies() {
    let api = WireApi::Gemini;
    let text = |name: &str| {
        json_of(name)["candidates"][0]["content"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    for name in [
        "gemini_structured_json_success.json",
        "gemini_basic_text_success.json",
    ] {
        assert_eq!(
            outcome(api, Expect::new(SchemaEnforced), name),
            answer(&text(name)),
            "{name}"
        );
    }
    assert_eq!(
        outcome(api, Expect::tool("sum"), "gemini_function_call.json"),
        call_json(None, "sum", json!({"y": 5, "x": 4}))
    );
    match outcome(
        api,
        Expect::tool("sum"),
        "gemini_parallel_function_calls.json",
    ) {
        Outcome::ToolCalledWrongly { calls, .. } => assert_eq!(calls.len(), 3),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        outcome(
            api,
            Expect::new(SchemaEnforced),
            "gemini_max_tokens_no_parts.json"
        ),
        Outcome::Truncated {
            partial: None,
            reason: "MAX_TOKENS".into()
        }
    );
    assert_eq!(
        outcome(
            api,
            Expect::new(SchemaEnforced),
            "gemini_finish_reason_safety.json"
        ),
        Outcome::Filtered {
            reason: "SAFETY".into(),
            partial: Some("Safety error incoming in 5, 4, 3, 2...".into())
        }
    );
    assert_eq!(
        outcome(
            api,
            Expect::new(SchemaEnforced),
            "gemini_finish_reason_safety_no_content.json"
        ),
        Outcome::Filtered {
            reason: "SAFETY".into(),
            partial: None
        }
    );
    assert_eq!(
        outcome(
            api,
            Expect::new(SchemaEnforced),
            "gemini_finish_reason_other_no_content.json"
        ),
        Outcome::Filtered {
            reason: "OTHER: Model failed to generate content due to internal error.".into(),
            partial: None
        }
    );
    assert_eq!(
        outcome(
            api,
            Expect::new(SchemaEnforced),
            "gemini_prompt_blocked_safety.json"
        ),
        Outcome::Filtered {
            reason: "prompt blocked: SAFETY".into(),
            partial: None
        }
    );
}

#[test]
fn ollama_bodies() {
    let api = WireApi::OllamaChat;
    assert_eq!(
        outcome(
            api,
            Expect::new(SchemaEnforced),
            "ollama_chat_structured_success.json"
        ),
        answer(r#"{"age": 22, "available": false}"#)
    );
    assert_eq!(
        outcome(
            api,
            Expect::tool("get_current_weather"),
            "ollama_chat_tool_call.json"
        ),
        call_json(
            None,
            "get_current_weather",
            json!({"format": "celsius", "location": "Paris, FR"})
        )
    );
}

#[test]
fn venice_content_is_the_answer_not_an_envelope() {
    let content = text("venice_structured_content_example.json");
    // The fixture is the message content; as a body it is not OpenAI's envelope.
    assert!(matches!(
        read_response(WireApi::OpenAiChat, &Expect::new(SchemaEnforced), &content),
        Err(CodecError::Shape { .. })
    ));
    let body = json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": content, "refusal": null}}]});
    assert_eq!(
        read_response_value(WireApi::OpenAiChat, &Expect::new(SchemaEnforced), &body)
            .unwrap()
            .outcome,
        answer(&content)
    );
}

fn schema_of(request: &Value, pointer: &str) -> ResponseSchema {
    ResponseSchema::new("order", request.pointer(pointer).unwrap().clone()).unwrap()
}

#[test]
fn anthropic_request_fragments_match_what_the_sdk_sent() {
    let caps = capabilities(ProviderKind::Anthropic, "claude-sonnet-4-5");
    for name in [
        "anthropic_structured_output_success.request.json",
        "anthropic_structured_output_defs_success.request.json",
    ] {
        let sent = json_of(name);
        let schema = schema_of(&sent, "/output_config/format/schema");
        let fragment =
            request_fragment(ProviderKind::Anthropic, SchemaEnforced, &schema, &caps).unwrap();
        assert_eq!(
            fragment.body["output_config"], sent["output_config"],
            "{name}"
        );
        // Merged into the rest of the body, it is the body the SDK sent.
        let mut body = sent.clone();
        body.as_object_mut().unwrap().remove("output_config");
        merge(&mut body, &fragment.body);
        assert_eq!(body, sent, "{name}");
    }
    for name in [
        "anthropic_tool_use.request.json",
        "anthropic_text_then_tool_use.request.json",
    ] {
        let sent = json_of(name);
        let tool = &sent["tools"][0];
        let schema =
            ResponseSchema::new(tool["name"].as_str().unwrap(), tool["input_schema"].clone())
                .unwrap()
                .with_description(tool["description"].as_str().unwrap_or_default());
        let caps = capabilities(ProviderKind::Anthropic, "claude-3-5-haiku-latest");
        let fragment = request_fragment(
            ProviderKind::Anthropic,
            StructuredOutputMode::ToolUseWorkaround,
            &schema,
            &caps,
        )
        .unwrap();
        assert_eq!(fragment.body["tools"][0]["name"], tool["name"], "{name}");
        assert_eq!(
            fragment.body["tools"][0]["input_schema"], tool["input_schema"],
            "{name}"
        );
        // The SDK's tool runner lets the model choose; the workaround forces the one tool.
        assert_eq!(
            fragment.body["tool_choice"],
            json!({"type": "tool", "name": tool["name"], "disable_parallel_tool_use": true})
        );
        assert_eq!(fragment.tool_name.as_deref(), tool["name"].as_str());
    }
}

#[test]
fn a_request_fragment_per_provider() {
    let schema = HeartbeatDecision::schema();
    let fragment = |provider: ProviderKind, model: &str, mode| {
        request_fragment(provider, mode, schema, &capabilities(provider, model)).unwrap()
    };
    let chat = fragment(ProviderKind::OpenAiChat, "gpt-4o", SchemaEnforced);
    assert_eq!(chat.body["response_format"]["type"], "json_schema");
    assert_eq!(
        chat.body["response_format"]["json_schema"]["name"],
        schema.name()
    );
    assert_eq!(chat.body["response_format"]["json_schema"]["strict"], true);
    let tool = fragment(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        StructuredOutputMode::ToolUseWorkaround,
    );
    assert_eq!(tool.body["parallel_tool_calls"], false);
    assert_eq!(tool.body["tool_choice"]["function"]["name"], schema.name());
    assert_eq!(tool.body["tools"][0]["function"]["strict"], true);
    let responses = fragment(ProviderKind::OpenAiResponses, "gpt-5", SchemaEnforced);
    assert_eq!(responses.body["text"]["format"]["name"], schema.name());
    assert!(responses.body["text"]["format"]
        .get("json_schema")
        .is_none());
    let responses_tool = fragment(
        ProviderKind::OpenAiResponses,
        "gpt-5",
        StructuredOutputMode::ToolUseWorkaround,
    );
    assert_eq!(responses_tool.body["tools"][0]["strict"], true);
    let gemini = fragment(ProviderKind::Gemini, "gemini-2.5-flash", SchemaEnforced);
    assert_eq!(
        gemini.body["generationConfig"]["responseMimeType"],
        "application/json"
    );
    assert!(gemini.body["generationConfig"]["responseJsonSchema"].is_object());
    let old_gemini = fragment(ProviderKind::Gemini, "gemini-2.0-flash", SchemaEnforced);
    assert_eq!(
        old_gemini.body["generationConfig"]["responseSchema"]["type"],
        "OBJECT"
    );
    let gemini_tool = fragment(
        ProviderKind::Gemini,
        "gemini-2.5-flash",
        StructuredOutputMode::ToolUseWorkaround,
    );
    assert_eq!(
        gemini_tool.body["toolConfig"]["functionCallingConfig"]["mode"],
        "ANY"
    );
    let ollama = fragment(ProviderKind::Ollama, "llama3.1", SchemaEnforced);
    assert!(ollama.body["format"].is_object());
    let openrouter = fragment(ProviderKind::OpenRouter, "openai/gpt-4o", SchemaEnforced);
    assert_eq!(openrouter.body["provider"]["require_parameters"], true);
    let guided = fragment(ProviderKind::LlamaCpp, "any", PromptGuided);
    assert_eq!(guided.body, json!({}));
    assert_eq!(guided.system.as_deref(), Some(schema.prompt_guidance()));
    // Ollama has no tool choice: its tool is offered (an agent step's finalizer), never forced;
    // the capabilities say a forced tool is not to be had there.
    let ollama_tool = fragment(
        ProviderKind::Ollama,
        "llama3.1",
        StructuredOutputMode::ToolUseWorkaround,
    );
    assert_eq!(
        ollama_tool.body["tools"][0]["function"]["name"],
        schema.name()
    );
    assert!(ollama_tool.body.get("tool_choice").is_none());
    assert!(ollama_tool.body.get("format").is_none());
    let caps = capabilities(ProviderKind::Ollama, "llama3.1");
    assert!(!caps.supports_tool_use && caps.supports_tool_calls);
    // llama.cpp takes `tool_choice` as a string only: `required`, with the one tool.
    let llama_tool = fragment(
        ProviderKind::LlamaCpp,
        "qwen2.5-7b-instruct",
        StructuredOutputMode::ToolUseWorkaround,
    );
    assert_eq!(llama_tool.body["tool_choice"], "required");
    assert_eq!(llama_tool.body["tools"].as_array().map(Vec::len), Some(1));
    // vLLM takes the named choice.
    let vllm_tool = fragment(
        ProviderKind::Vllm,
        "qwen2.5-7b-instruct",
        StructuredOutputMode::ToolUseWorkaround,
    );
    assert_eq!(
        vllm_tool.body["tool_choice"]["function"]["name"],
        schema.name()
    );
}

#[test]
fn bodies_that_are_not_the_providers_shape_are_typed_errors() {
    let expect = Expect::new(SchemaEnforced);
    let cases = [
        (WireApi::OpenAiChat, "[]"),
        (WireApi::OpenAiChat, r#"{"choices": []}"#),
        (
            WireApi::OpenAiChat,
            r#"{"choices": [{"message": {"content": 5}}]}"#,
        ),
        (WireApi::OpenAiResponses, r#"{"output": "x"}"#),
        (WireApi::Anthropic, r#"{"content": {}}"#),
        (
            WireApi::Anthropic,
            r#"{"content": [{"type": "tool_use", "name": "t", "input": 3}]}"#,
        ),
        (WireApi::Gemini, r#"{"candidates": []}"#),
        (WireApi::OllamaChat, r#"{"done": true}"#),
        (WireApi::Anthropic, "not json"),
    ];
    for (api, body) in cases {
        assert!(read_response(api, &expect, body).is_err(), "{api:?} {body}");
    }
    let error =
        r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#;
    assert_eq!(
        read_response(WireApi::Anthropic, &expect, error),
        Err(CodecError::ProviderError {
            api: WireApi::Anthropic,
            message: "overloaded_error: Overloaded".into()
        })
    );
}

#[test]
fn a_cut_stream_is_an_error_never_a_value() {
    for (api, name) in [
        (
            WireApi::OpenAiChat,
            "openai_chat_stream_structured_success.sse",
        ),
        (WireApi::Anthropic, "anthropic_stream_tool_use.sse"),
    ] {
        let full = text(name);
        // Cut anywhere before the final event: never an answer.
        let mut cut = 0;
        while cut < full.len() * 9 / 10 {
            let end = (0..=cut)
                .rev()
                .find(|&i| full.is_char_boundary(i))
                .unwrap_or(0);
            let result = read_stream(api, &Expect::new(SchemaEnforced), &full[..end]);
            assert!(
                matches!(result, Err(CodecError::Stream { .. })),
                "{name} cut at {end}: {result:?}"
            );
            cut += 97;
        }
    }
}

#[test]
fn cached_prompt_tokens_are_read_from_each_provider() {
    let expect = Expect::new(SchemaEnforced);
    let cases = [
        (
            WireApi::OpenAiChat,
            json!({"choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "{}"}}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 20,
                      "prompt_tokens_details": {"cached_tokens": 600}}}),
            (1000, 20, 600),
        ),
        (
            WireApi::OpenAiResponses,
            json!({"status": "completed", "output": [{"type": "message",
            "content": [{"type": "output_text", "text": "{}"}]}],
            "usage": {"input_tokens": 900, "output_tokens": 30,
                      "input_tokens_details": {"cached_tokens": 512}}}),
            (900, 30, 512),
        ),
        // Anthropic counts cache reads and writes apart from `input_tokens`.
        (
            WireApi::Anthropic,
            json!({"type": "message", "role": "assistant", "stop_reason": "end_turn",
            "content": [{"type": "text", "text": "{}"}],
            "usage": {"input_tokens": 50, "output_tokens": 10,
                      "cache_read_input_tokens": 700, "cache_creation_input_tokens": 100}}),
            (850, 10, 700),
        ),
        (
            WireApi::Gemini,
            json!({"candidates": [{"finishReason": "STOP",
            "content": {"parts": [{"text": "{}"}], "role": "model"}}],
            "usageMetadata": {"promptTokenCount": 400, "candidatesTokenCount": 5,
                              "cachedContentTokenCount": 256}}),
            (400, 5, 256),
        ),
    ];
    for (api, body, (input, output, cached)) in cases {
        let usage = read_response_value(api, &expect, &body)
            .unwrap()
            .usage
            .unwrap();
        assert_eq!(
            (
                usage.input_tokens,
                usage.output_tokens,
                usage.cached_input_tokens
            ),
            (input, output, cached),
            "{api:?}"
        );
    }
}

/// A tool call's arguments sent as an object are read from the body: the body is read as
/// written or refused, never with a key or a number resolved without a word.
#[test]
fn a_body_with_a_repeated_key_or_an_inexact_number_is_refused_with_what_it_was() {
    let expect = Expect::tool("t");
    let body = |input: &str| {
        format!(
            r#"{{"type": "message", "role": "assistant", "stop_reason": "tool_use",
            "content": [{{"type": "tool_use", "id": "toolu_1", "name": "t", "input": {input}}}]}}"#
        )
    };
    match read_response(WireApi::Anthropic, &expect, &body(r#"{"a": 1, "a": 2}"#)) {
        Err(CodecError::NotJson { message, .. }) => {
            assert!(message.contains("/content/0/input/a"), "{message}");
            assert!(message.contains("given twice"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    match read_response(
        WireApi::Anthropic,
        &expect,
        &body(r#"{"id": 123456789012345678901234567890}"#),
    ) {
        Err(CodecError::NotJson { message, .. }) => {
            assert!(
                message.contains("123456789012345678901234567890"),
                "{message}"
            )
        }
        other => panic!("{other:?}"),
    }
    // Plain numbers, fractions included, are read as they are.
    let ok = read_response(
        WireApi::Anthropic,
        &expect,
        &body(r#"{"p": 0.30000000000000004, "n": 0}"#),
    );
    assert!(ok.is_ok(), "{ok:?}");
}

/// A stream's events are read as an unstreamed body is: a tool call's arguments sent as an
/// object (Gemini's `functionCall.args`, Ollama's `tool_calls`) holding a number no float holds
/// as written are refused, named, where they were rounded without a word.
#[test]
fn a_stream_event_with_an_inexact_number_is_refused_with_what_it_was() {
    let n = "123456789012345678901234567890";
    let streams = [
        (
            WireApi::Gemini,
            format!(
                "data: {{\"candidates\": [{{\"content\": {{\"parts\": [{{\"functionCall\": {{\"name\": \"t\", \"args\": {{\"id\": {n}}}}}}}], \"role\": \"model\"}}, \"finishReason\": \"STOP\"}}]}}\n\n"
            ),
        ),
        (
            WireApi::OllamaChat,
            format!(
                "{{\"message\": {{\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": [{{\"function\": {{\"name\": \"t\", \"arguments\": {{\"id\": {n}}}}}}}]}}, \"done\": true, \"done_reason\": \"stop\"}}\n"
            ),
        ),
    ];
    for (api, stream) in streams {
        let mut decoder = StreamDecoder::new(api, Expect::tool("t"));
        let read = decoder
            .feed(stream.as_bytes())
            .map(|_| ())
            .and_then(|()| decoder.finish().map(|_| ()));
        match read {
            Err(e) => assert!(e.to_string().contains(n), "{api:?}: {e}"),
            Ok(()) => panic!("{api:?}: read, the number rounded"),
        }
        // The same number as a plain fraction is read.
        let plain = stream.replace(n, "0.30000000000000004");
        let mut decoder = StreamDecoder::new(api, Expect::tool("t"));
        assert!(decoder.feed(plain.as_bytes()).is_ok(), "{api:?}");
        assert!(decoder.finish().is_ok(), "{api:?}");
    }
}

#[test]
fn an_openai_chat_key_read_twice_is_refused_and_one_never_read_is_skipped() {
    // OpenAI's arguments are text: the answer's own keys are the reader's to check. In the
    // envelope, a field the answer is made of given twice is refused as before; a field the
    // reader never looks at (here `logprobs`, with a repeated key and a number no float holds)
    // is skipped unread, like every other such field.
    let expect = Expect::new(SchemaEnforced);
    let twice = r#"{"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": "{\"a\": 1}", "content": "{\"a\": 2}"}}]}"#;
    match read_response(WireApi::OpenAiChat, &expect, twice) {
        Err(CodecError::NotJson { message, .. }) => {
            assert!(message.contains("/choices/0/message/content"), "{message}");
            assert!(message.contains("given twice"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    let unread = r#"{"choices": [{"index": 0, "finish_reason": "stop",
        "logprobs": {"t": -0.1, "t": 123456789012345678901234567890},
        "message": {"role": "assistant", "content": "{\"a\": 1}"}}]}"#;
    let read = read_response(WireApi::OpenAiChat, &expect, unread).unwrap();
    assert_eq!(read.outcome, answer(r#"{"a": 1}"#));
}

#[test]
fn a_streamed_tool_call_index_that_skips_ahead_is_refused() {
    // Each event names a call 60 past the last: 2.4 GB of slots for a 2.6 MB stream before.
    let mut sse = String::new();
    for i in 0..1000u64 {
        sse.push_str(&format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{}}}]}}}}]}}\n\n",
            i * 60
        ));
    }
    sse.push_str("data: [DONE]\n\n");
    let result = read_stream(WireApi::OpenAiChat, &Expect::new(SchemaEnforced), &sse);
    match result {
        Err(CodecError::Stream { problem, .. }) => {
            assert!(problem.contains("index 60 skips ahead"), "{problem}")
        }
        other => panic!("{other:?}"),
    }
}

fn arbitrary_json() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "[a-z_ {}\"]{0,12}".prop_map(Value::String),
        // Keys and values the readers look for, so the envelopes are half right.
        prop::sample::select(vec![
            "stop",
            "length",
            "refusal",
            "tool_use",
            "MAX_TOKENS",
            "SAFETY",
            "incomplete",
            "function_call",
            "message",
            "text",
            "output_text"
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 48, 6, |inner| {
        let keys = prop::sample::select(vec![
            "choices",
            "message",
            "content",
            "refusal",
            "tool_calls",
            "function",
            "name",
            "arguments",
            "finish_reason",
            "output",
            "type",
            "status",
            "incomplete_details",
            "reason",
            "stop_reason",
            "stop_details",
            "input",
            "candidates",
            "parts",
            "functionCall",
            "args",
            "finishReason",
            "promptFeedback",
            "blockReason",
            "done_reason",
            "usage",
            "error",
            "response",
            "text",
        ]);
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((keys, inner), 0..5).prop_map(|kv| Value::Object(
                kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
            )),
        ]
    })
}

/// An OpenAI Chat body whose every field the reader looks at is absent or any kind of value:
/// the shapes where reading in place and reading a `Value` could part.
fn openai_chat_body() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let any = || {
        prop_oneof![
            Just(None),
            Just(Some(Value::Null)),
            any::<bool>().prop_map(|b| Some(Value::Bool(b))),
            any::<u32>().prop_map(|n| Some(Value::from(n))),
            (-5i64..0).prop_map(|n| Some(Value::from(n))),
            Just(Some(json!(2.5))),
            "[a-z_ \"\\\\{}]{0,10}".prop_map(|t| Some(Value::String(t))),
            prop::sample::select(vec!["stop", "length", "content_filter", "tool_calls", "x"])
                .prop_map(|t| Some(Value::from(t))),
            Just(Some(json!({"a": [1, {"b": null}]}))),
            Just(Some(json!([1, "x"]))),
        ]
    };
    let object = |fields: Vec<(&'static str, Option<Value>)>| {
        Value::Object(
            fields
                .into_iter()
                .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v)))
                .collect(),
        )
    };
    let call = (any(), any(), any(), any()).prop_map(move |(id, name, arguments, odd)| {
        let function = object(vec![("name", name), ("arguments", arguments)]);
        let function = match odd {
            Some(Value::Bool(true)) => None,
            Some(Value::Null) => Some(Value::from("not an object")),
            _ => Some(function),
        };
        object(vec![
            ("id", id),
            ("type", Some(json!("function"))),
            ("function", function),
        ])
    });
    let calls = prop_oneof![
        any(),
        prop::collection::vec(call, 0..3).prop_map(|c| Some(Value::Array(c))),
    ];
    let message =
        (any(), any(), calls, any()).prop_map(move |(content, refusal, calls, odd)| match odd {
            Some(Value::Bool(true)) => Some(Value::from("not an object")),
            _ => Some(object(vec![
                ("role", Some(json!("assistant"))),
                ("content", content),
                ("refusal", refusal),
                ("tool_calls", calls),
            ])),
        });
    let choice = (any(), message).prop_map(move |(finish, message)| {
        object(vec![
            ("index", Some(json!(0))),
            ("finish_reason", finish),
            ("message", message),
        ])
    });
    let choices = prop_oneof![
        any(),
        prop::collection::vec(choice, 0..3).prop_map(|c| Some(Value::Array(c))),
    ];
    let usage =
        (any(), any(), any(), any()).prop_map(move |(prompt, completion, cached, odd)| match odd {
            Some(Value::Bool(true)) => None,
            Some(Value::Null) => Some(Value::from(3)),
            _ => Some(object(vec![
                ("prompt_tokens", prompt),
                ("completion_tokens", completion),
                (
                    "prompt_tokens_details",
                    Some(object(vec![("cached_tokens", cached)])),
                ),
            ])),
        });
    let error = prop_oneof![
        4 => Just(None),
        1 => Just(Some(Value::Null)),
        1 => Just(Some(json!({"message": "overloaded", "type": "server_error"}))),
    ];
    (choices, usage, error, any()).prop_map(move |(choices, usage, error, extra)| {
        object(vec![
            ("id", Some(json!("chatcmpl-1"))),
            ("choices", choices),
            ("usage", usage),
            ("error", error),
            ("system_fingerprint", extra),
        ])
    })
}

/// What the OpenAI Chat reader makes of `body`, read in place from its text and read as a
/// `Value`, for every kind of expectation.
fn both_readings(
    body: &Value,
) -> Vec<(
    Result<ProviderResponse, CodecError>,
    Result<ProviderResponse, CodecError>,
)> {
    let text = body.to_string();
    [
        Expect::new(SchemaEnforced),
        Expect::new(PromptGuided),
        Expect::tool("structured_response"),
    ]
    .iter()
    .map(|expect| {
        (
            read_response(WireApi::OpenAiChat, expect, &text),
            read_response_value(WireApi::OpenAiChat, expect, body),
        )
    })
    .collect()
}

#[test]
fn openai_chat_bodies_read_in_place_as_they_read_as_values() {
    let mut read = 0;
    for entry in std::fs::read_dir(dir()).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if !name.ends_with(".json") || name.contains("request") {
            continue;
        }
        let body = json_of(&name);
        if body.get("choices").is_none() {
            continue;
        }
        for (in_place, as_value) in both_readings(&body) {
            assert_eq!(in_place, as_value, "{name}");
        }
        read += 1;
    }
    assert!(read >= 9, "{read} recorded OpenAI Chat bodies");
}

proptest::proptest! {
    #[test]
    fn an_openai_chat_body_reads_the_same_in_place_and_as_a_value(body in openai_chat_body()) {
        for (in_place, as_value) in both_readings(&body) {
            proptest::prop_assert_eq!(in_place, as_value, "{}", body);
        }
    }

    #[test]
    fn any_body_is_read_or_a_typed_error(body in arbitrary_json(), tool in proptest::bool::ANY) {
        let expect = if tool { Expect::tool("name") } else { Expect::new(SchemaEnforced) };
        for api in [WireApi::OpenAiChat, WireApi::OpenAiResponses, WireApi::Anthropic, WireApi::Gemini, WireApi::OllamaChat] {
            let _ = read_response_value(api, &expect, &body);
        }
    }

    #[test]
    fn any_stream_text_is_read_or_a_typed_error(text in "(event: [a-z_]{0,12}\n|data: [{}\\[\\]\":a-z_0-9 ]{0,40}\n|\n){0,30}") {
        for api in [WireApi::OpenAiChat, WireApi::Anthropic] {
            let _ = read_stream(api, &Expect::new(SchemaEnforced), &text);
        }
    }
}

mod bodies {
    use super::*;
    use structured_runtime::provider::wire::{build_body, ChatRequest, Turn};

    #[test]
    fn anthropic_bodies_equal_the_sdks_recorded_requests() {
        for name in [
            "anthropic_structured_output_success.request.json",
            "anthropic_structured_output_defs_success.request.json",
        ] {
            let sent = json_of(name);
            let schema = schema_of(&sent, "/output_config/format/schema");
            let caps = capabilities(ProviderKind::Anthropic, "claude-sonnet-4-5");
            let fragment =
                request_fragment(ProviderKind::Anthropic, SchemaEnforced, &schema, &caps).unwrap();
            let mut request = ChatRequest::user(sent["messages"][0]["content"].as_str().unwrap());
            request.max_tokens = Some(1024);
            let body = build_body(
                ProviderKind::Anthropic,
                sent["model"].as_str().unwrap(),
                &request,
                &fragment,
                &[],
            );
            assert_eq!(body, sent, "{name}");
        }
    }

    #[test]
    fn a_tool_re_ask_answers_the_call_with_an_error_result_after_the_unchanged_prompt() {
        let schema = HeartbeatDecision::schema();
        let request = ChatRequest::user("Assess the vault.");
        let turns = [
            Turn::AssistantToolCall {
                id: Some("call_1".into()),
                name: schema.name().into(),
                input: Answer::Json(json!({"severity": "extreme"})),
            },
            Turn::ToolError {
                id: Some("call_1".into()),
                name: schema.name().into(),
                text: "/severity: enum".into(),
            },
        ];
        for kind in [
            ProviderKind::OpenAiChat,
            ProviderKind::OpenAiResponses,
            ProviderKind::Anthropic,
            ProviderKind::Gemini,
        ] {
            let caps = capabilities(kind, "m");
            let fragment =
                request_fragment(kind, StructuredOutputMode::ToolUseWorkaround, schema, &caps)
                    .unwrap();
            let first = build_body(kind, "m", &request, &fragment, &[]);
            let again = build_body(kind, "m", &request, &fragment, &turns);
            let list = ["messages", "input", "contents"]
                .into_iter()
                .find(|k| first.get(*k).is_some())
                .unwrap();
            let (first, again) = (
                first[list].as_array().unwrap(),
                again[list].as_array().unwrap(),
            );
            // The prompt is a prefix of the re-ask: nothing before the new turns changed.
            assert_eq!(&again[..first.len()], first.as_slice(), "{kind:?}");
            assert_eq!(again.len(), first.len() + 2, "{kind:?}");
            let error = again.last().unwrap().to_string();
            assert!(error.contains("/severity: enum"), "{kind:?}: {error}");
        }
        // Anthropic's shape, exactly.
        let caps = capabilities(ProviderKind::Anthropic, "claude-3-5-haiku-latest");
        let fragment = request_fragment(
            ProviderKind::Anthropic,
            StructuredOutputMode::ToolUseWorkaround,
            schema,
            &caps,
        )
        .unwrap();
        let body = build_body(ProviderKind::Anthropic, "m", &request, &fragment, &turns);
        assert_eq!(
            body["messages"][1]["content"][0]["input"],
            json!({"severity": "extreme"})
        );
        assert_eq!(
            body["messages"][2],
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "is_error": true, "content": "/severity: enum"}]})
        );
    }

    #[test]
    fn prompt_guidance_goes_after_the_callers_system_text() {
        let schema = HeartbeatDecision::schema();
        let mut request = ChatRequest::user("Assess.");
        request.system = Some("You are the heartbeat.".into());
        let caps = capabilities(ProviderKind::LlamaCpp, "any");
        let fragment =
            request_fragment(ProviderKind::LlamaCpp, PromptGuided, schema, &caps).unwrap();
        let body = build_body(ProviderKind::LlamaCpp, "m", &request, &fragment, &[]);
        let system = body["messages"][0]["content"].as_str().unwrap();
        assert!(system.starts_with("You are the heartbeat.\n\n"));
        assert!(system.ends_with(schema.prompt_guidance()));
    }
}

/// `with_strict(false)` changes the wire: OpenAI gets `"strict": false` and the schema as
/// written (an open object, a `minLength` kept), not lowered to strict mode's rules.
#[test]
fn a_best_effort_schema_is_sent_unstrict_and_as_written() {
    use structured_runtime::provider::capabilities::{capabilities, ProviderKind};
    use structured_runtime::ResponseSchema;
    let open = serde_json::json!({
        "type": "object",
        "properties": {"name": {"type": "string", "minLength": 2}}
    });
    let caps = capabilities(ProviderKind::OpenAiChat, "gpt-4o");
    let strict = ResponseSchema::new("open", open.clone()).unwrap();
    // Strict (the default): closed and lowered to strict mode's rules.
    let fragment =
        request_fragment(ProviderKind::OpenAiChat, SchemaEnforced, &strict, &caps).unwrap();
    let sent = &fragment.body["response_format"]["json_schema"];
    assert_eq!(sent["strict"], true);
    assert_eq!(sent["schema"]["additionalProperties"], false);
    let loose = strict.with_strict(false);
    for (kind, mode, pointer) in [
        (
            ProviderKind::OpenAiChat,
            SchemaEnforced,
            "/response_format/json_schema",
        ),
        (
            ProviderKind::OpenAiChat,
            StructuredOutputMode::ToolUseWorkaround,
            "/tools/0/function",
        ),
        (
            ProviderKind::OpenAiResponses,
            SchemaEnforced,
            "/text/format",
        ),
    ] {
        let caps = capabilities(kind, "gpt-4o");
        let fragment = request_fragment(kind, mode, &loose, &caps).unwrap();
        let at = fragment.body.pointer(pointer).unwrap();
        assert_eq!(at["strict"], false, "{kind:?} {mode:?}");
        let schema = at.get("schema").or(at.get("parameters")).unwrap();
        assert_eq!(schema, &open, "{kind:?} {mode:?}: sent as written");
    }
}

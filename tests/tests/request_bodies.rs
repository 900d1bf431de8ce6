//! Every request body, byte for byte, against a recorded snapshot: each wire API (through the
//! providers that speak it) in each mode it takes, for a bare question and for a conversation
//! with every kind of part (a system text, attachments of each kind, an assistant's answer, the
//! caller's extra fields) and every kind of re-ask turn. A change to how bodies are built must
//! leave every body exactly as it was.
//!
//! A line of `tests/data/request_bodies.txt` is `provider mode case` and the body's JSON text.
//! When a body is meant to change, run with `UPDATE_BODY_SNAPSHOT=1` and say why in the commit.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::json;
use structured_runtime::provider::capabilities::{capabilities, ProviderKind};
use structured_runtime::provider::wire::{
    build_body, request_fragment, Attachment, ChatMessage, ChatRequest, Role, Turn,
};
use structured_runtime::{Answer, ResponseSchema, StructuredOutputMode};

fn requests() -> Vec<(&'static str, ChatRequest, Vec<Turn>)> {
    let bare = ChatRequest::user("Count the \"vaults\".");
    let mut rich = ChatRequest::user("unused");
    rich.system = Some("Be brief.\nOne line.".into());
    rich.messages = vec![
        ChatMessage::user("Read these.")
            .with(Attachment::image_base64("image/png", "iVBORw0KGgo="))
            .with(Attachment::image_url("https://example.com/a.jpg"))
            .with(Attachment::pdf_base64("JVBERi0xLjQ=")),
        ChatMessage {
            role: Role::Assistant,
            text: "Read. ✓".into(),
            attachments: Vec::new(),
        },
        ChatMessage::user("Now count them."),
    ];
    rich.max_tokens = Some(64);
    rich.extra = json!({"temperature": 0, "top_p": 0.5});
    let answered = vec![
        Turn::AssistantText("{\"n\": -1}".into()),
        Turn::UserText("/n: below 0".into()),
    ];
    let called = vec![
        Turn::AssistantToolCall {
            id: Some("call_1".into()),
            name: "answer".into(),
            input: Answer::Json(json!({"n": -1})),
        },
        Turn::ToolError {
            id: Some("call_1".into()),
            name: "answer".into(),
            text: "/n: below 0".into(),
        },
        Turn::AssistantToolCall {
            id: None,
            name: "lookup".into(),
            input: Answer::Text("{\"q\": \"vaults\"}".into()),
        },
        Turn::ToolResult {
            id: None,
            name: "lookup".into(),
            text: "3 vaults".into(),
        },
    ];
    vec![
        ("bare", bare.clone(), Vec::new()),
        ("bare_reasked", bare, answered.clone()),
        ("rich", rich.clone(), Vec::new()),
        ("rich_reasked", rich.clone(), answered),
        ("rich_called", rich, called),
    ]
}

fn snapshot() -> String {
    let schema = ResponseSchema::new(
        "answer",
        json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}},
            "required": ["n"], "additionalProperties": false}),
    )
    .unwrap()
    .with_description("A count.");
    let providers = [
        (ProviderKind::OpenAiChat, "gpt-4o"),
        (ProviderKind::OpenRouter, "openai/gpt-4o"),
        (ProviderKind::LlamaCpp, "local"),
        (ProviderKind::Ollama, "llama3"),
        (ProviderKind::OpenAiResponses, "gpt-4o"),
        (ProviderKind::Anthropic, "claude-sonnet-4-5"),
        (ProviderKind::Anthropic, "claude-3-5-haiku-latest"),
        (ProviderKind::Gemini, "gemini-2.5-flash"),
    ];
    let modes = [
        StructuredOutputMode::None,
        StructuredOutputMode::SchemaEnforced,
        StructuredOutputMode::ToolUseWorkaround,
        StructuredOutputMode::PromptGuided,
    ];
    let mut text = String::new();
    for (kind, model) in providers {
        let caps = capabilities(kind, model);
        for mode in modes {
            let Ok(fragment) = request_fragment(kind, mode, &schema, &caps) else {
                let _ = writeln!(text, "{kind:?}/{model} {mode:?} refused");
                continue;
            };
            for (case, request, turns) in requests() {
                let body = build_body(kind, model, &request, &fragment, &turns);
                let _ = writeln!(text, "{kind:?}/{model} {mode:?} {case} {body}");
            }
        }
    }
    text
}

#[test]
fn every_request_body_is_as_recorded() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/request_bodies.txt");
    let now = snapshot();
    if std::env::var_os("UPDATE_BODY_SNAPSHOT").is_some() {
        std::fs::write(&path, &now).unwrap();
        return;
    }
    let recorded = std::fs::read_to_string(&path).unwrap();
    let (mut differ, mut shown) = (0, String::new());
    for (was, is) in recorded.lines().zip(now.lines()) {
        if was != is {
            differ += 1;
            if differ <= 3 {
                let _ = writeln!(shown, "was: {was}\nnow: {is}");
            }
        }
    }
    assert_eq!(
        recorded.lines().count(),
        now.lines().count(),
        "cases added or lost"
    );
    assert_eq!(differ, 0, "{differ} bodies changed:\n{shown}");
}

//! Every budget and check of a run × every way in (plain, streamed, agent, both, a fallback
//! chain; a derived type and a schema given at run time): each holds for each, since all of them
//! are one `Ask` driving the one state machine through the one loop.

use std::time::Duration;

use serde_json::{json, Value};
mod common;

use common::scripted::Scripted;
use structured_examples::replay::block_on;
use structured_runtime::provider::capabilities::ProviderKind;
use structured_runtime::provider::wire::{Attachment, ChatMessage, ChatRequest, Tool};
use structured_runtime::run::clock::{ManualClock, RunClock};
use structured_runtime::run::{
    run_structured, run_value, AgentStep, Ask, RunConfig, RunError, RunErrorKind, TransportError,
};
use structured_runtime::{StructuredOutput, Warning};

/// A note; its length rule is one OpenAI strict mode does not enforce (moved into the
/// description, and said with the value).
#[derive(StructuredOutput, serde::Deserialize, Debug)]
struct Note {
    #[length(max = 40)]
    text: String,
}

const NOTE: &str = r#"{"text": "all calm"}"#;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Entry {
    Plain,
    PlainValue,
    Stream,
    StreamValue,
    Agent,
    AgentValue,
    StreamedAgent,
    Chain,
    ChainValue,
}

const ENTRIES: [Entry; 9] = [
    Entry::Plain,
    Entry::PlainValue,
    Entry::Stream,
    Entry::StreamValue,
    Entry::Agent,
    Entry::AgentValue,
    Entry::StreamedAgent,
    Entry::Chain,
    Entry::ChainValue,
];

/// A valid answer as the entry's mode takes it: the JSON as text, or the finalizer's call.
fn good(entry: Entry) -> Result<String, TransportError> {
    let message = match entry {
        Entry::Agent | Entry::AgentValue | Entry::StreamedAgent => {
            json!({"role": "assistant", "content": null,
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": Note::schema().name(), "arguments": NOTE}}]})
        }
        _ => json!({"role": "assistant", "content": NOTE, "refusal": null}),
    };
    Ok(
        json!({"choices": [{"index": 0, "finish_reason": "stop", "message": message}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5}})
        .to_string(),
    )
}

/// What a run through `entry` came to: its request warnings and attempts, or its error.
fn run(
    entry: Entry,
    p: &Scripted,
    request: &ChatRequest,
    config: &RunConfig,
) -> Result<(Vec<Warning>, usize), RunError> {
    let step = AgentStep::new(vec![Tool::new(
        "lookup",
        "Look it up.",
        json!({"type": "object", "properties": {}}),
    )]);
    let schema = Note::schema();
    let typed =
        |out: structured_runtime::run::Structured<Note>| (out.request_warnings, out.attempts);
    let value =
        |out: structured_runtime::run::Structured<Value>| (out.request_warnings, out.attempts);
    match entry {
        Entry::Plain => block_on(run_structured::<Note, _>(p, request, config)).map(typed),
        Entry::PlainValue => block_on(run_value(p, schema, request, config)).map(value),
        Entry::Stream => block_on(
            Ask::new(p, request)
                .config(config)
                .stream(|_| {})
                .typed::<Note>(),
        )
        .map(typed),
        Entry::StreamValue => block_on(
            Ask::new(p, request)
                .config(config)
                .stream(|_| {})
                .value(schema),
        )
        .map(value),
        Entry::Agent => block_on(
            Ask::new(p, request)
                .config(config)
                .agent(&step, |_, _| "ok".into())
                .typed::<Note>(),
        )
        .map(typed),
        Entry::AgentValue => block_on(
            Ask::new(p, request)
                .config(config)
                .agent(&step, |_, _| "ok".into())
                .value(schema),
        )
        .map(value),
        Entry::StreamedAgent => block_on(
            Ask::new(p, request)
                .config(config)
                .stream(|_| {})
                .agent(&step, |_, _| "ok".into())
                .typed::<Note>(),
        )
        .map(typed),
        Entry::Chain => block_on(
            Ask::fallback(std::slice::from_ref(p), request)
                .config(config)
                .typed::<Note>(),
        )
        .map(typed),
        Entry::ChainValue => block_on(
            Ask::fallback(std::slice::from_ref(p), request)
                .config(config)
                .value(schema),
        )
        .map(value),
    }
}

fn timed(clock: &ManualClock) -> RunConfig {
    RunConfig {
        clock: RunClock::new(clock.clone()),
        ..RunConfig::default()
    }
}

#[test]
fn every_budget_and_check_holds_for_every_entry_point() {
    let ask = ChatRequest::user("Note the state.");
    for entry in ENTRIES {
        // The deadline ends a run whose provider never answers, naming the deadline as set.
        let p = Scripted::silent(ProviderKind::OpenAiChat, "gpt-4o");
        let config = RunConfig {
            deadline: Some(Duration::from_secs(2)),
            ..timed(&ManualClock::default())
        };
        let err = run(entry, &p, &ask, &config).unwrap_err();
        assert!(
            matches!(err, RunError { kind: RunErrorKind::DeadlineExceeded { deadline, .. }, .. } if deadline == Duration::from_secs(2)),
            "{entry:?}: {err:?}"
        );

        // A rate limit asking for longer than the run waits ends it at once, with no wait.
        let clock = ManualClock::default();
        let p = Scripted::new(
            ProviderKind::OpenAiChat,
            "gpt-4o",
            vec![Err(TransportError::RateLimited {
                retry_after: Some(Duration::from_secs(999_999)),
            })],
        );
        let err = run(entry, &p, &ask, &timed(&clock)).unwrap_err();
        assert!(
            matches!(err.kind, RunErrorKind::Transport { .. }),
            "{entry:?}: {err:?}"
        );
        assert_eq!((p.calls(), clock.sleeps().len()), (1, 0), "{entry:?}");

        // Transport retries back off (0.5, 1, 2 s) and run out after three.
        let clock = ManualClock::default();
        let p = Scripted::new(
            ProviderKind::OpenAiChat,
            "gpt-4o",
            vec![Err(TransportError::Timeout); 10],
        );
        let err = run(entry, &p, &ask, &timed(&clock)).unwrap_err();
        assert!(
            matches!(err.kind, RunErrorKind::Transport { .. }),
            "{entry:?}: {err:?}"
        );
        assert_eq!(p.calls(), 4, "{entry:?}");
        assert_eq!(
            clock.sleeps(),
            [500, 1000, 2000].map(Duration::from_millis),
            "{entry:?}"
        );

        // An attachment the provider cannot take ends the run before any request.
        let mut with_url = ChatRequest::user("");
        with_url.messages =
            vec![ChatMessage::user("Read it.")
                .with(Attachment::image_url("https://example.com/a.png"))];
        let p = Scripted::new(ProviderKind::Gemini, "gemini-2.5-flash", vec![]);
        let err = run(entry, &p, &with_url, &timed(&ManualClock::default())).unwrap_err();
        assert!(
            matches!(err.kind, RunErrorKind::UnsupportedInput { .. }),
            "{entry:?}: {err:?}"
        );
        assert_eq!(p.calls(), 0, "{entry:?}");

        // What the provider is not asked to enforce is said with the value.
        let p = Scripted::new(ProviderKind::OpenAiChat, "gpt-4o", vec![good(entry)]);
        let (warnings, attempts) = run(entry, &p, &ask, &timed(&ManualClock::default()))
            .unwrap_or_else(|e| panic!("{entry:?}: {e:?}"));
        assert_eq!(attempts, 1, "{entry:?}");
        assert!(
            warnings
                .iter()
                .any(|w| matches!(w, Warning::NotEnforcedByProvider { moved, .. }
                    if moved.iter().any(|m| m.keywords.iter().any(|k| k == "maxLength")))),
            "{entry:?}: {warnings:?}"
        );

        // A mode the provider cannot take ends the run before any request (an unknown model
        // behind a passthrough takes neither a forced tool nor tool calls).
        let p = Scripted::new(ProviderKind::Passthrough, "acme-7b", vec![]);
        let config = RunConfig {
            mode: Some(structured_runtime::StructuredOutputMode::ToolUseWorkaround),
            ..timed(&ManualClock::default())
        };
        let err = run(entry, &p, &ask, &config).unwrap_err();
        assert!(
            matches!(err.kind, RunErrorKind::UnsupportedInput { .. }),
            "{entry:?}: {err:?}"
        );
        assert_eq!(p.calls(), 0, "{entry:?}");
    }
}

/// The structured-output strategy is chosen on the request too, over the run's setting and the
/// provider's: the same run asked for a forced tool, or for the schema, as the request says;
/// a mode the provider cannot take ends it before any request.
#[test]
fn the_strategy_is_chosen_on_the_request_over_the_config() {
    use structured_runtime::StructuredOutputMode::{SchemaEnforced, ToolUseWorkaround};
    let tool_call = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function",
        "function": {"name": Note::schema().name(), "arguments": NOTE}}]}}]})
    .to_string();
    let config = RunConfig {
        mode: Some(SchemaEnforced),
        ..timed(&ManualClock::default())
    };
    let p = Scripted::new(ProviderKind::OpenAiChat, "gpt-4o", vec![Ok(tool_call)]);
    let request = ChatRequest::user("Note the state.").with_mode(ToolUseWorkaround);
    let out = block_on(run_structured::<Note, _>(&p, &request, &config)).unwrap();
    assert_eq!(out.mode, ToolUseWorkaround);
    assert!(p.body(0)["tools"].is_array() && p.body(0).get("response_format").is_none());

    // Without it, the config's choice holds.
    let p = Scripted::new(ProviderKind::OpenAiChat, "gpt-4o", vec![good(Entry::Plain)]);
    let out = block_on(run_structured::<Note, _>(
        &p,
        &ChatRequest::user("Note."),
        &config,
    ))
    .unwrap();
    assert_eq!(out.mode, SchemaEnforced);

    // A mode the provider cannot take: refused before any request, for every way in.
    for entry in [Entry::Plain, Entry::PlainValue, Entry::Stream, Entry::Chain] {
        let p = Scripted::new(ProviderKind::Ollama, "llama3.1", vec![]);
        let request = ChatRequest::user("Note.").with_mode(ToolUseWorkaround);
        let err = run(entry, &p, &request, &timed(&ManualClock::default())).unwrap_err();
        assert!(
            matches!(err.kind, RunErrorKind::UnsupportedInput { .. }),
            "{entry:?}: {err:?}"
        );
        assert_eq!(p.calls(), 0);
    }
}

/// Every change a lowering makes is said: Anthropic takes closed objects only, so an object the
/// schema leaves open is sent closed, and the run says which (a derived type, closed already,
/// has nothing to say).
#[test]
fn anthropic_says_which_open_objects_it_sent_closed() {
    use structured_runtime::provider::dialect::SchemaTarget;
    use structured_runtime::ResponseSchema;
    let open = ResponseSchema::new(
        "note",
        json!({"type": "object", "properties": {
            "text": {"type": "string"},
            "meta": {"type": "object", "properties": {"by": {"type": "string"}}}},
            "required": ["text"]}),
    )
    .unwrap()
    .with_strict(false);
    assert_eq!(
        open.closed(SchemaTarget::Anthropic)
            .unwrap()
            .iter()
            .map(|p| p.as_str())
            .collect::<Vec<_>>(),
        ["", "/properties/meta"]
    );
    let answer = json!({"type": "message", "role": "assistant", "stop_reason": "end_turn",
        "content": [{"type": "text", "text": NOTE}]})
    .to_string();
    let p = Scripted::new(
        ProviderKind::Anthropic,
        "claude-sonnet-4-5",
        vec![Ok(answer.clone())],
    );
    let config = timed(&ManualClock::default());
    let request = ChatRequest::user("Note.");
    let out = block_on(structured_runtime::run_value(&p, &open, &request, &config)).unwrap();
    let closed: Vec<_> = out
        .request_warnings
        .iter()
        .filter(|w| matches!(w, Warning::ClosedByProvider { .. }))
        .collect();
    assert_eq!(closed.len(), 1, "{:?}", out.request_warnings);
    assert!(
        closed[0].to_string().contains("/properties/meta"),
        "{}",
        closed[0]
    );

    let p = Scripted::new(
        ProviderKind::Anthropic,
        "claude-sonnet-4-5",
        vec![Ok(answer)],
    );
    let out = block_on(run_structured::<Note, _>(&p, &request, &config)).unwrap();
    assert!(
        !out.request_warnings
            .iter()
            .any(|w| matches!(w, Warning::ClosedByProvider { .. })),
        "{:?}",
        out.request_warnings
    );
}

/// Limits as the documents state them, from the config: `schema_limits = "gateway"` holds the
/// run's schema to a gateway's 16 KiB before any request; the default leaves it to the limits it
/// was built with.
#[test]
fn the_gateway_limit_profile_is_set_from_config_and_holds_before_any_request() {
    use structured_runtime::{LimitProfile, ResponseSchema};
    let config =
        RunConfig::from_toml("[inference.structured_outputs]\nschema_limits = \"gateway\"")
            .unwrap();
    assert_eq!(config.schema_limits, LimitProfile::Gateway);
    let bad = RunConfig::from_toml("[inference.structured_outputs]\nschema_limits = \"huge\"");
    assert!(
        bad.as_ref()
            .is_err_and(|e| e.to_string().contains("schema_limits")),
        "{bad:?}"
    );
    let big = ResponseSchema::new(
        "big",
        json!({"type": "object", "description": "x".repeat(20 << 10),
            "properties": {"text": {"type": "string"}}, "required": ["text"],
            "additionalProperties": false}),
    )
    .unwrap();
    let config = RunConfig {
        clock: RunClock::new(ManualClock::default()),
        ..config
    };
    for entry in [Entry::PlainValue, Entry::StreamValue, Entry::ChainValue] {
        let p = Scripted::new(ProviderKind::OpenAiChat, "gpt-4o", vec![]);
        let err = run_value_entry(entry, &p, &big, &config).unwrap_err();
        assert!(
            matches!(&err.kind, RunErrorKind::UnsupportedInput { reason } if reason.contains("gateway")),
            "{entry:?}: {err:?}"
        );
        assert_eq!(p.calls(), 0);
    }
    // The default: the same schema runs.
    let p = Scripted::new(ProviderKind::OpenAiChat, "gpt-4o", vec![good(Entry::Plain)]);
    let out = block_on(run_value(
        &p,
        &big,
        &ChatRequest::user("Note."),
        &timed(&ManualClock::default()),
    ));
    assert!(out.is_ok(), "{out:?}");
}

/// A run of `schema` through a value entry.
fn run_value_entry(
    entry: Entry,
    p: &Scripted,
    schema: &structured_runtime::ResponseSchema,
    config: &RunConfig,
) -> Result<structured_runtime::run::Structured<Value>, RunError> {
    let request = ChatRequest::user("Note.");
    match entry {
        Entry::StreamValue => block_on(
            Ask::new(p, &request)
                .config(config)
                .stream(|_| {})
                .value(schema),
        ),
        Entry::ChainValue => block_on(
            Ask::fallback(std::slice::from_ref(p), &request)
                .config(config)
                .value(schema),
        ),
        _ => block_on(run_value(p, schema, &request, config)),
    }
}

/// Provider limits that are not documented: Gemini answers a schema too large to serve with an
/// opaque 400 ("too many states"). The run reads it as the schema refused, naming the likely
/// causes, so a fallback chain moves on to the next provider; any other 400 stays a transport
/// error.
#[test]
fn geminis_too_many_states_is_the_schema_refused_with_its_likely_cause() {
    let opaque = || {
        Err(TransportError::Rejected {
            status: 400,
            body: r#"{"error": {"code": 400, "message": "The specified schema produces a constraint that has too many states for serving.", "status": "INVALID_ARGUMENT"}}"#.into(),
        })
    };
    let config = timed(&ManualClock::default());
    let request = ChatRequest::user("Note.");
    let p = Scripted::new(ProviderKind::Gemini, "gemini-2.5-flash", vec![opaque()]);
    let err = block_on(run_structured::<Note, _>(&p, &request, &config)).unwrap_err();
    match &err.kind {
        RunErrorKind::InvalidSchema(report) => {
            let said = report.to_string();
            assert!(
                said.contains("too many states") && said.contains("enum"),
                "{said}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(err.ledger.len(), 1, "the request is in the ledger");

    // Another 400 is what it was.
    let p = Scripted::new(
        ProviderKind::Gemini,
        "gemini-2.5-flash",
        vec![Err(TransportError::Rejected {
            status: 400,
            body: "API key not valid".into(),
        })],
    );
    let err = block_on(run_structured::<Note, _>(&p, &request, &config)).unwrap_err();
    assert!(
        matches!(err.kind, RunErrorKind::Transport { .. }),
        "{err:?}"
    );

    // In a chain, the next provider is asked.
    use structured_runtime::run::DynProvider;
    let chain: Vec<Box<dyn DynProvider>> = vec![
        Box::new(Scripted::new(
            ProviderKind::Gemini,
            "gemini-2.5-flash",
            vec![opaque()],
        )),
        Box::new(Scripted::new(
            ProviderKind::OpenAiChat,
            "gpt-4o",
            vec![good(Entry::Plain)],
        )),
    ];
    let out = block_on(
        Ask::fallback(&chain, &request)
            .config(&config)
            .typed::<Note>(),
    )
    .unwrap();
    assert_eq!(out.attempts, 2);
}

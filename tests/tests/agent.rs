//! The agent step is a state of the one run: every budget and check of `run_structured` holds
//! for it, and what one answer may make it do is bounded. Each test here is a gap the agent's
//! own loop had (its deadline, its rate-limit waits, its attachment check, its warnings, name
//! clashes, unbounded tool calls, validation failures ending the run early, no run-time schema,
//! extended thinking refused or sent with a forced tool).

use std::time::Duration;

use serde_json::{json, Value};
mod common;

use common::scripted::{config, openai_calls, Scripted, GOOD, OUT_OF_RANGE};
use structured_examples::replay::block_on;
use structured_examples::DaimonAppraisal;
use structured_runtime::provider::capabilities::ProviderKind;
use structured_runtime::provider::wire::{Attachment, ChatMessage, ChatRequest, Tool};
use structured_runtime::run::clock::{ManualClock, RunClock};
use structured_runtime::run::{AgentStep, Ask, RunConfig, RunError, RunErrorKind, TransportError};
use structured_runtime::{ResponseSchema, StructuredOutput, Warning};

fn finalizer() -> String {
    DaimonAppraisal::schema().name().to_owned()
}

fn tools() -> Vec<Tool> {
    ["funding_rate", "volume"]
        .iter()
        .map(|name| {
            Tool::new(
                *name,
                format!("Look up the {name}."),
                json!({"type": "object", "properties": {"market": {"type": "string"}}}),
            )
        })
        .collect()
}

fn agent(p: &Scripted, step: &AgentStep, config: &RunConfig) -> Result<DaimonAppraisal, RunError> {
    agent_with(p, &ChatRequest::user("Appraise the market."), step, config)
}

fn agent_with(
    p: &Scripted,
    request: &ChatRequest,
    step: &AgentStep,
    config: &RunConfig,
) -> Result<DaimonAppraisal, RunError> {
    block_on(
        Ask::new(p, request)
            .config(config)
            .agent(step, |name, _| format!("{name}: 0.01"))
            .typed::<DaimonAppraisal>(),
    )
    .map(|out| out.value)
}

#[test]
fn the_agent_step_ends_at_the_runs_deadline() {
    // The provider never answers; the run's deadline ends it (the agent's own loop waited
    // forever).
    let p = Scripted::silent(ProviderKind::OpenAiChat, "gpt-4o");
    let config = RunConfig {
        deadline: Some(Duration::from_secs(2)),
        ..config(1)
    };
    let err = agent(&p, &AgentStep::new(tools()), &config).unwrap_err();
    assert!(
        matches!(err, RunError { kind: RunErrorKind::DeadlineExceeded { deadline, .. }, .. } if deadline == Duration::from_secs(2)),
        "{err:?}"
    );
}

#[test]
fn a_rate_limit_asking_for_longer_than_the_run_waits_ends_the_agent_step() {
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![Err(TransportError::RateLimited {
            retry_after: Some(Duration::from_secs(999_999)),
        })],
    );
    let clock = ManualClock::default();
    let config = RunConfig {
        clock: RunClock::new(clock.clone()),
        ..config(1)
    };
    let err = agent(&p, &AgentStep::new(tools()), &config).unwrap_err();
    assert!(
        matches!(err.kind, RunErrorKind::Transport { .. }),
        "{err:?}"
    );
    assert_eq!(p.calls(), 1);
    assert!(clock.sleeps().is_empty(), "no wait of 1, 2, 4 s first");
}

#[test]
fn an_attachment_the_provider_refuses_ends_the_agent_step_before_any_request() {
    let mut request = ChatRequest::user("");
    request.messages = vec![
        ChatMessage::user("Read it.").with(Attachment::image_url("https://example.com/a.png"))
    ];
    let p = Scripted::new(ProviderKind::Gemini, "gemini-2.5-flash", vec![]);
    let err = agent_with(&p, &request, &AgentStep::new(tools()), &config(1)).unwrap_err();
    assert!(
        matches!(err.kind, RunErrorKind::UnsupportedInput { .. }),
        "{err:?}"
    );
    assert_eq!(p.calls(), 0);
}

#[test]
fn the_agent_step_says_what_the_provider_does_not_enforce() {
    let p = Scripted::new(
        ProviderKind::Anthropic,
        "claude-sonnet-4-5",
        vec![Ok(
            json!({"type": "message", "role": "assistant", "stop_reason": "tool_use",
            "content": [{"type": "tool_use", "id": "t1", "name": finalizer(),
                         "input": serde_json::from_str::<Value>(GOOD).unwrap()}]})
            .to_string(),
        )],
    );
    let out = block_on(
        Ask::new(&p, &ChatRequest::user("Appraise."))
            .config(&config(1))
            .agent(&AgentStep::new(tools()), |_, _| String::new())
            .typed::<DaimonAppraisal>(),
    )
    .unwrap();
    assert!(
        out.request_warnings
            .iter()
            .any(|w| matches!(w, Warning::NotEnforcedByProvider { .. })),
        "{:?}",
        out.request_warnings
    );
}

#[test]
fn a_callers_tool_named_like_the_finalizer_is_refused_before_any_request() {
    let mut clashing = tools();
    clashing[1].name = finalizer();
    let p = Scripted::new(ProviderKind::OpenAiChat, "gpt-4o", vec![]);
    let err = agent(&p, &AgentStep::new(clashing), &config(1)).unwrap_err();
    match &err {
        RunError {
            kind: RunErrorKind::UnsupportedInput { reason },
            ..
        } => {
            assert!(reason.contains(&format!("`{}`", finalizer())), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(p.calls(), 0);
    let mut twice = tools();
    twice[1].name = twice[0].name.clone();
    let err = agent(&p, &AgentStep::new(twice), &config(1)).unwrap_err();
    assert!(
        matches!(err.kind, RunErrorKind::UnsupportedInput { .. }),
        "{err:?}"
    );
}

#[test]
fn the_tool_calls_one_answer_may_make_are_bounded() {
    // 20,000 calls in one answer, half to a tool that does not exist: 8 are answered, the rest
    // are said not to have run, and the next request stays small.
    let calls: Vec<(String, &str, &str)> = (0..20_000)
        .map(|i| {
            (
                format!("c{i}"),
                if i % 2 == 0 { "volume" } else { "nope" },
                r#"{"market": "ETH"}"#,
            )
        })
        .collect();
    let calls: Vec<(&str, &str, &str)> = calls
        .iter()
        .map(|(id, n, a)| (id.as_str(), *n, *a))
        .collect();
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![
            openai_calls(&calls),
            openai_calls(&[("f", &finalizer(), GOOD)]),
        ],
    );
    let mut handled = 0;
    let out = block_on(
        Ask::new(&p, &ChatRequest::user("Appraise."))
            .config(&config(1))
            .agent(&AgentStep::new(tools()), |_, _| {
                handled += 1;
                "ok".into()
            })
            .typed::<DaimonAppraisal>(),
    )
    .unwrap();
    assert_eq!(out.attempts, 2);
    assert_eq!(
        handled, 4,
        "of the first 8 calls, the 4 to a tool that exists"
    );
    let second = p.body(1);
    let messages = second["messages"].as_array().unwrap();
    let results: Vec<&Value> = messages.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(results.len(), 8);
    assert!(results
        .iter()
        .any(|r| r["content"] == "there is no tool `nope`"));
    assert!(messages.iter().any(|m| m["role"] == "user"
        && m["content"]
            .as_str()
            .is_some_and(|c| c.starts_with("19992 more tool calls"))));
    assert!(p.body_len(1) < 16 * 1024, "{} bytes", p.body_len(1));
}

#[test]
fn an_invalid_finalizer_spends_steps_not_re_asks() {
    // One re-ask in the config; the finalizer fails three times and then fits: the step budget
    // (10) bounds it, so the run ends with the value.
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![
            openai_calls(&[("a", &finalizer(), OUT_OF_RANGE)]),
            openai_calls(&[("b", &finalizer(), OUT_OF_RANGE)]),
            openai_calls(&[("c", &finalizer(), OUT_OF_RANGE)]),
            openai_calls(&[("d", &finalizer(), GOOD)]),
        ],
    );
    let value = agent(&p, &AgentStep::new(tools()), &config(1)).unwrap();
    assert_eq!(value.primary_emotion, "anticipation");
    assert_eq!(p.calls(), 4);
    // Never fitting ends at the step budget, with every attempt in the ledger.
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_calls(&[("a", &finalizer(), OUT_OF_RANGE)]); 12],
    );
    let mut step = AgentStep::new(tools());
    step.max_steps = 4;
    let err = agent(&p, &step, &config(1)).unwrap_err();
    assert!(
        matches!(err, RunError { kind: RunErrorKind::StepBudget { steps: 4 }, ref ledger } if ledger.len() == 4),
        "{err:?}"
    );
}

#[test]
fn a_schema_given_at_run_time_has_an_agent_step() {
    let schema = ResponseSchema::new(
        "trip",
        json!({"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
            "required": ["city", "days"], "additionalProperties": false}),
    )
    .unwrap();
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![
            openai_calls(&[("a", "volume", "{}")]),
            openai_calls(&[("b", "trip", r#"{"city": "Oslo", "days": 0}"#)]),
            openai_calls(&[("c", "trip", r#"{"city": "Oslo", "days": 3}"#)]),
        ],
    );
    let out = block_on(
        Ask::new(&p, &ChatRequest::user("Plan a trip."))
            .config(&config(1))
            .agent(&AgentStep::new(tools()), |_, _| "ok".into())
            .value(&schema),
    )
    .unwrap();
    assert_eq!(out.value, json!({"city": "Oslo", "days": 3}));
    assert_eq!(out.attempts, 3);
}

/// An Anthropic message in the shape the Messages API sends (as the recorded bodies in
/// `tests/data/providers/anthropic` are): thinking first, then the tool call or the text.
fn anthropic(content: Value, stop: &str) -> Result<String, TransportError> {
    Ok(
        json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": content, "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": 20, "output_tokens": 10}})
        .to_string(),
    )
}

#[test]
fn with_extended_thinking_on_anthropic_the_model_chooses_and_the_run_holds_it_to_the_finalizer() {
    let thinking =
        json!({"type": "thinking", "thinking": "Check the volume first.", "signature": "sig"});
    let p = Scripted::new(
        ProviderKind::Anthropic,
        "claude-sonnet-4-5",
        vec![
            anthropic(
                json!([thinking, {"type": "tool_use", "id": "t1", "name": "volume", "input": {"market": "ETH"}}]),
                "tool_use",
            ),
            anthropic(
                json!([thinking, {"type": "tool_use", "id": "t2", "name": finalizer(),
                "input": serde_json::from_str::<Value>(GOOD).unwrap()}]),
                "tool_use",
            ),
        ],
    );
    let thinking_on = RunConfig {
        extended_thinking: true,
        ..config(1)
    };
    let value = agent(&p, &AgentStep::new(tools()), &thinking_on).unwrap();
    assert_eq!(value.primary_emotion, "anticipation");
    let first = p.body(0);
    assert_eq!(first["tool_choice"], json!({"type": "auto"}));
    assert_eq!(first["thinking"]["type"], "enabled");
    // Thinking asked in the request's own fields is the same setting.
    let mut request = ChatRequest::user("Appraise.");
    request.extra = json!({"thinking": {"type": "enabled", "budget_tokens": 2048}});
    request.max_tokens = Some(4096);
    let p = Scripted::new(
        ProviderKind::Anthropic,
        "claude-sonnet-4-5",
        vec![
            anthropic(
                json!([{"type": "text", "text": "It looks calm."}]),
                "end_turn"
            );
            3
        ],
    );
    let mut step = AgentStep::new(tools());
    step.max_text_only = 3;
    let err = agent_with(&p, &request, &step, &config(1)).unwrap_err();
    // Free to answer in text, the model is asked again, then the run ends with a typed error.
    assert!(
        matches!(err.kind, RunErrorKind::NoStructuredOutput { .. }),
        "{err:?}"
    );
    assert_eq!(p.calls(), 3);
    assert_eq!(p.body(0)["tool_choice"], json!({"type": "auto"}));
}

/// An Ollama `/api/chat` answer calling `name` with `arguments` (an object, as Ollama sends).
fn ollama_call(name: &str, arguments: Value) -> Result<String, TransportError> {
    Ok(
        json!({"model": "llama3.1", "done": true, "done_reason": "stop",
        "message": {"role": "assistant", "content": "",
            "tool_calls": [{"function": {"name": name, "arguments": arguments}}]}})
        .to_string(),
    )
}

#[test]
fn the_agent_step_runs_on_ollama_with_its_tools_offered_and_no_tool_choice() {
    // Ollama's API has no tool choice: the tools are offered, the model chooses, and the run's
    // text-only bound holds it to the finalizer.
    let good: Value = serde_json::from_str(GOOD).unwrap();
    let p = Scripted::new(
        ProviderKind::Ollama,
        "llama3.1",
        vec![
            ollama_call("volume", json!({"market": "BTC"})),
            Ok(
                json!({"model": "llama3.1", "done": true, "done_reason": "stop",
                "message": {"role": "assistant", "content": "Let me think."}})
                .to_string(),
            ),
            ollama_call(&finalizer(), good),
        ],
    );
    let value = agent(&p, &AgentStep::new(tools()), &config(1)).unwrap();
    assert!(structured_runtime::Validate::validate(&value).is_ok());
    assert_eq!(p.calls(), 3);
    let first = p.body(0);
    let names: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert_eq!(names, [finalizer().as_str(), "funding_rate", "volume"]);
    assert!(first.get("tool_choice").is_none(), "{first}");
    assert!(first.get("format").is_none(), "the schema goes as the tool");
    // The tool's result went back as a tool message.
    let second = p.body(1);
    let messages = second["messages"].as_array().unwrap();
    assert!(
        messages
            .iter()
            .any(|m| m["role"] == "tool" && m["content"] == "volume: 0.01"),
        "{second}"
    );
}

#[test]
fn tool_mode_and_the_agent_step_on_llama_cpp_send_the_string_choice_it_takes() {
    // llama.cpp takes `tool_choice` as a string only: `required` forces the one tool in tool
    // mode, and the agent step's choice is `required` among all of them.
    let call = openai_calls(&[("c1", finalizer().as_str(), GOOD)]);
    let p = Scripted::new(ProviderKind::LlamaCpp, "qwen2.5-7b", vec![call.clone()]);
    let tool_mode = RunConfig {
        mode: Some(structured_runtime::StructuredOutputMode::ToolUseWorkaround),
        ..config(1)
    };
    let out = block_on(
        Ask::new(&p, &ChatRequest::user("Appraise."))
            .config(&tool_mode)
            .typed::<DaimonAppraisal>(),
    )
    .unwrap();
    assert_eq!(
        out.mode,
        structured_runtime::StructuredOutputMode::ToolUseWorkaround
    );
    let body = p.body(0);
    assert_eq!(body["tool_choice"], "required");
    assert_eq!(body["tools"].as_array().map(Vec::len), Some(1));
    assert!(body.get("grammar").is_none() && body.get("response_format").is_none());

    let p = Scripted::new(ProviderKind::LlamaCpp, "qwen2.5-7b", vec![call]);
    agent(&p, &AgentStep::new(tools()), &config(1)).unwrap();
    let body = p.body(0);
    assert_eq!(body["tool_choice"], "required");
    assert_eq!(body["tools"].as_array().map(Vec::len), Some(3));
}

/// Anthropic's documented per-request caps (20 strict tools; 24 optional and 16 union-typed
/// properties across the output format and every strict tool) are checked before any request
/// in an agent step, each named where it is crossed; tools that are not strict do not count,
/// and the strict ones are sent as such (the output tool too).
#[test]
fn anthropic_caps_on_strict_tools_are_checked_before_any_request() {
    let strict =
        |name: String, parameters: Value| Tool::new(name, "A lookup.", parameters).strict(true);
    let closed = json!({"type": "object", "properties": {"market": {"type": "string"}},
        "required": ["market"], "additionalProperties": false});

    // 20 strict tools of the caller's and the output tool: 21.
    let many: Vec<Tool> = (0..20)
        .map(|i| strict(format!("t{i}"), closed.clone()))
        .collect();
    let p = Scripted::new(ProviderKind::Anthropic, "claude-sonnet-4-5", vec![]);
    let err = agent(&p, &AgentStep::new(many), &config(1)).unwrap_err();
    let RunErrorKind::InvalidSchema(report) = &err.kind else {
        panic!("{err:?}")
    };
    assert_eq!(report.errors.len(), 1, "{report}");
    let reason = &report.errors[0].reason;
    assert!(reason.contains("21 strict tools"), "{reason}");
    assert!(reason.contains("the tool `t19`"), "{reason}");
    assert!(reason.contains("at most 20"), "{reason}");
    assert_eq!(p.calls(), 0, "nothing was sent");

    // A strict tool with 25 optional properties: the 25th is named, in that tool.
    let properties: serde_json::Map<String, Value> = (0..25)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    let wide = json!({"type": "object", "properties": properties, "additionalProperties": false});
    let p = Scripted::new(ProviderKind::Anthropic, "claude-sonnet-4-5", vec![]);
    let step = AgentStep::new(vec![strict("wide".into(), wide.clone())]);
    let err = agent(&p, &step, &config(1)).unwrap_err();
    let RunErrorKind::InvalidSchema(report) = &err.kind else {
        panic!("{err:?}")
    };
    assert_eq!(report.errors[0].path.as_str(), "/properties/p24");
    let reason = &report.errors[0].reason;
    assert!(reason.contains("25 optional properties"), "{reason}");
    assert!(reason.contains("the caller's tool `wide`"), "{reason}");
    assert!(reason.contains("at most 24"), "{reason}");

    // The same tool, not strict, is not counted: the run goes on, and only the strict tools
    // are sent strict.
    let p = Scripted::new(
        ProviderKind::Anthropic,
        "claude-sonnet-4-5",
        vec![anthropic(
            json!([{"type": "tool_use", "id": "t1", "name": finalizer(),
                "input": serde_json::from_str::<Value>(GOOD).unwrap()}]),
            "tool_use",
        )],
    );
    let step = AgentStep::new(vec![
        Tool::new("wide", "A lookup.", wide),
        strict("narrow".into(), closed),
    ]);
    agent(&p, &step, &config(1)).unwrap();
    let strictness: Vec<(String, Value)> = p.body(0)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_owned(), t["strict"].clone()))
        .collect();
    assert_eq!(
        strictness,
        [
            (finalizer(), json!(true)),
            ("wide".to_owned(), Value::Null),
            ("narrow".to_owned(), json!(true)),
        ]
    );
}

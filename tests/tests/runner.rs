//! The retry runner against a scripted provider: every path the seeds name.

use std::future::Future;
use std::time::Duration;

use serde_json::{json, Value};
mod common;

use common::scripted::{config, openai_calls, openai_text, Scripted, GOOD, OUT_OF_RANGE};
use structured_examples::replay::block_on;
use structured_examples::DaimonAppraisal;
use structured_runtime::provider::capabilities::ProviderKind;
use structured_runtime::provider::wire::ChatRequest;
use structured_runtime::run::clock::{ManualClock, RunClock};
use structured_runtime::run::config::StructuredOutputsConfig;
use structured_runtime::run::{
    run_structured, AttemptResult, OnExhausted, Provider, RunConfig, RunError, RunErrorKind,
    TransportError,
};
use structured_runtime::{Provenance, StructuredOutput, StructuredOutputMode, Validate, Warning};

fn anthropic_tool(input: &str) -> Result<String, TransportError> {
    Ok(
        json!({"type": "message", "role": "assistant", "stop_reason": "tool_use",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": DaimonAppraisal::schema().name(),
                     "input": serde_json::from_str::<Value>(input).unwrap()}],
        "usage": {"input_tokens": 10, "output_tokens": 5}})
        .to_string(),
    )
}

fn anthropic_text(text: &str) -> Result<String, TransportError> {
    Ok(
        json!({"type": "message", "role": "assistant", "stop_reason": "end_turn",
        "content": [{"type": "text", "text": text}]})
        .to_string(),
    )
}

fn run(
    provider: &Scripted,
    config: &RunConfig,
) -> Result<structured_runtime::run::Structured<DaimonAppraisal>, RunError> {
    block_on(run_structured::<DaimonAppraisal, _>(
        provider,
        &ChatRequest::user("Appraise the funding flip."),
        config,
    ))
}

#[test]
fn happy_path_in_each_mode() {
    // Schema enforced (OpenAI).
    let p = Scripted::new(ProviderKind::OpenAiChat, "gpt-4o", vec![openai_text(GOOD)]);
    let out = run(&p, &config(1)).unwrap();
    assert_eq!(out.mode, StructuredOutputMode::SchemaEnforced);
    assert_eq!((out.attempts, out.provenance), (1, Provenance::Clean));
    assert_eq!(out.value.primary_emotion, "anticipation");
    assert_eq!(out.ledger[0].usage.unwrap().output_tokens, 40);
    assert!(p.body(0)["response_format"]["json_schema"]["strict"]
        .as_bool()
        .unwrap());
    // Tool workaround (an older Claude).
    let p = Scripted::new(
        ProviderKind::Anthropic,
        "claude-3-5-haiku-latest",
        vec![anthropic_tool(GOOD)],
    );
    let out = run(&p, &config(1)).unwrap();
    assert_eq!(out.mode, StructuredOutputMode::ToolUseWorkaround);
    assert_eq!(p.body(0)["tool_choice"]["type"], "tool");
    // Prompt guided (an unknown local model): prose around a fence.
    let p = Scripted::new(
        ProviderKind::Passthrough,
        "local-7b",
        vec![openai_text(&format!("Sure!\n```json\n{GOOD}\n```"))],
    );
    let out = run(&p, &config(1)).unwrap();
    assert_eq!(out.mode, StructuredOutputMode::PromptGuided);
    assert_eq!(out.provenance, Provenance::Extracted);
    assert!(p.body(0)["messages"][0]["content"]
        .as_str()
        .unwrap()
        .contains("pleasure"));
}

#[test]
fn a_mismatch_is_re_asked_with_the_path_and_then_accepted() {
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_text(OUT_OF_RANGE), openai_text(GOOD)],
    );
    let out = run(&p, &config(2)).unwrap();
    assert_eq!(out.attempts, 2);
    assert!(matches!(out.ledger[0].result, AttemptResult::Invalid(_)));
    let reask = p.body(1);
    let messages = reask["messages"].as_array().unwrap();
    // The prompt unchanged, then the previous answer, then the correction naming the path.
    let prompt = p.body(0)["messages"].as_array().unwrap().clone();
    assert_eq!(messages[..prompt.len()], prompt[..]);
    assert_eq!(messages.len(), prompt.len() + 2);
    assert_eq!(
        messages[prompt.len()],
        json!({"role": "assistant", "content": OUT_OF_RANGE})
    );
    let correction = messages[prompt.len() + 1]["content"].as_str().unwrap();
    assert!(correction.contains("/pleasure"), "{correction}");
}

#[test]
fn in_tool_mode_the_correction_is_an_error_tool_result() {
    let p = Scripted::new(
        ProviderKind::Anthropic,
        "claude-3-5-haiku-latest",
        vec![anthropic_tool(OUT_OF_RANGE), anthropic_tool(GOOD)],
    );
    run(&p, &config(1)).unwrap();
    let last = p.body(1)["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["content"][0]["type"], "tool_result");
    assert_eq!(last["content"][0]["tool_use_id"], "toolu_1");
    assert_eq!(last["content"][0]["is_error"], true);
    assert!(last["content"][0]["content"]
        .as_str()
        .unwrap()
        .contains("/pleasure"));
}

#[test]
fn exhaustion_keeps_the_last_value_and_every_error() {
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_text(OUT_OF_RANGE); 3],
    );
    match run(&p, &config(2)) {
        Err(RunError {
            kind: RunErrorKind::RetriesExhausted { last_value, errors },
            ledger,
        }) => {
            assert_eq!(p.calls(), 3, "max_retries + 1");
            assert_eq!((errors.len(), ledger.len()), (3, 3));
            assert_eq!(last_value["pleasure"], 1.7);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn zero_retries_is_one_call() {
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_text(OUT_OF_RANGE), openai_text(GOOD)],
    );
    assert!(matches!(
        run(&p, &config(0)),
        Err(RunError {
            kind: RunErrorKind::RetriesExhausted { .. },
            ..
        })
    ));
    assert_eq!(p.calls(), 1);
}

#[test]
fn refusal_and_truncation_are_terminal_and_spend_no_re_ask() {
    let refusal = Ok(json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": null, "refusal": "I can't help with that."}}]})
    .to_string());
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![refusal, openai_text(GOOD)],
    );
    match run(&p, &config(3)) {
        Err(RunError {
            kind: RunErrorKind::Refused { explanation, .. },
            ledger,
        }) => {
            assert_eq!(explanation.as_deref(), Some("I can't help with that."));
            assert_eq!(ledger.len(), 1);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(p.calls(), 1);
    let cut = Ok(json!({"choices": [{"index": 0, "finish_reason": "length",
        "message": {"role": "assistant", "content": "{\"pleasure\": 0.2, \"arou", "refusal": null}}]}).to_string());
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![cut, openai_text(GOOD)],
    );
    match run(&p, &config(3)) {
        Err(RunError {
            kind: RunErrorKind::Truncated {
                partial, reason, ..
            },
            ..
        }) => {
            assert_eq!(reason, "length");
            assert!(partial.unwrap().ends_with("\"arou"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(p.calls(), 1);
}

#[test]
fn transport_errors_retry_with_backoff_apart_from_the_re_asks() {
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![
            Err(TransportError::RateLimited {
                retry_after: Some(Duration::from_secs(2)),
            }),
            Err(TransportError::Server {
                status: 503,
                body: "busy".into(),
            }),
            Err(TransportError::Timeout),
            openai_text(GOOD),
        ],
    );
    let clock = ManualClock::default();
    let timed = RunConfig {
        clock: RunClock::new(clock.clone()),
        ..config(0)
    };
    let out = run(&p, &timed).unwrap();
    assert_eq!(out.attempts, 4);
    assert_eq!(
        clock.sleeps(),
        [
            Duration::from_secs(2),
            Duration::from_millis(1000),
            Duration::from_millis(2000)
        ]
    );
    // A rejected request is not sent again.
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![Err(TransportError::Rejected {
            status: 400,
            body: "bad".into(),
        })],
    );
    assert!(matches!(
        run(&p, &config(2)),
        Err(RunError {
            kind: RunErrorKind::Transport { .. },
            ..
        })
    ));
    assert_eq!(p.calls(), 1);
    // Retries run out.
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![Err(TransportError::Timeout); 10],
    );
    assert!(matches!(
        run(&p, &config(2)),
        Err(RunError {
            kind: RunErrorKind::Transport {
                error: TransportError::Timeout,
                ..
            },
            ..
        })
    ));
    assert_eq!(p.calls(), 4, "the first call and three retries");
}

#[test]
fn plain_text_in_tool_mode_is_re_asked_a_bounded_number_of_times() {
    let p = Scripted::new(
        ProviderKind::Anthropic,
        "claude-3-5-haiku-latest",
        vec![anthropic_text("I feel anticipation."), anthropic_tool(GOOD)],
    );
    let out = run(&p, &config(0)).unwrap();
    assert_eq!(out.attempts, 2);
    let reask = p.body(1);
    let last = reask["messages"].as_array().unwrap().last().unwrap();
    assert!(last["content"].as_str().unwrap().contains("calling the"));
    let p = Scripted::new(
        ProviderKind::Anthropic,
        "claude-3-5-haiku-latest",
        vec![anthropic_text("no"); 5],
    );
    match run(&p, &config(0)) {
        Err(RunError {
            kind: RunErrorKind::NoStructuredOutput { errors, .. },
            ledger,
        }) => {
            assert_eq!((errors.len(), ledger.len()), (3, 3));
            assert!(errors[0].contains("expected a call to"), "{errors:?}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(p.calls(), 3, "the first call and two plain-text re-asks");
}

#[test]
fn the_defaults_policy_returns_a_marked_value() {
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_text(OUT_OF_RANGE); 2],
    );
    let mut policy = config(1);
    policy.outputs.on_exhausted = OnExhausted::DefaultsWithWarning;
    let out = run(&p, &policy).unwrap();
    assert_eq!(p.calls(), 2, "retry once, then defaults");
    assert_eq!(out.provenance, Provenance::Recovered);
    assert!(matches!(
        out.warnings.as_slice(),
        [Warning::Defaults { attempts: 2, .. }]
    ));
    assert!(out.value.validate().is_ok());
    // The fields that fit are kept; the one that broke its range took its typed default.
    assert_eq!(out.value.pleasure, 0.0);
    assert_eq!(out.value.trigger, "funding flipped");
}

#[test]
fn validation_off_takes_a_value_that_deserializes_with_a_warning() {
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_text(OUT_OF_RANGE)],
    );
    let off = RunConfig {
        outputs: StructuredOutputsConfig {
            validation: false,
            ..StructuredOutputsConfig::default()
        },
        ..RunConfig::default()
    };
    let out = run(&p, &off).unwrap();
    assert_eq!(out.value.pleasure, 1.7);
    assert!(matches!(
        out.warnings.as_slice(),
        [Warning::NotValidated { .. }]
    ));
}

#[test]
fn disabled_structured_outputs_ask_for_free_text() {
    let p = Scripted::new(ProviderKind::OpenAiChat, "gpt-4o", vec![openai_text(GOOD)]);
    let off = RunConfig {
        outputs: StructuredOutputsConfig {
            enabled: false,
            ..StructuredOutputsConfig::default()
        },
        ..RunConfig::default()
    };
    let out = run(&p, &off).unwrap();
    assert_eq!(out.mode, StructuredOutputMode::None);
    assert!(p.body(0).get("response_format").is_none());
}

#[test]
fn the_run_is_send_when_the_provider_is() {
    fn assert_send<F: Future + Send>(_: &F) {}
    let p = Scripted::new(ProviderKind::OpenAiChat, "gpt-4o", vec![openai_text(GOOD)]);
    let request = ChatRequest::user("x");
    let config = RunConfig::default();
    let future = run_structured::<DaimonAppraisal, _>(&p, &request, &config);
    assert_send(&future);
    assert!(block_on(future).is_ok());
}

#[test]
fn an_empty_answer_spends_a_re_ask_outside_tool_mode() {
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_text(""), openai_text(GOOD)],
    );
    let out = run(&p, &config(1)).unwrap();
    assert_eq!(out.attempts, 2);
    assert!(matches!(out.ledger[0].result, AttemptResult::PlainText));
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_text(""), openai_text(GOOD)],
    );
    assert!(matches!(
        run(&p, &config(0)),
        Err(RunError {
            kind: RunErrorKind::NoStructuredOutput { .. },
            ..
        })
    ));
    assert_eq!(p.calls(), 1);
}

#[test]
fn a_long_answer_is_repeated_cut_in_the_re_ask() {
    // 200 KB of an answer that does not fit, then a good one.
    let long = format!(
        r#"{{"pleasure": 1.7, "arousal": 0.5, "dominance": -0.1, "primary_emotion": "anticipation", "secondary_emotion": null, "trigger": "{}", "memory_bias": "recent"}}"#,
        "é".repeat(100_000)
    );
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_text(&long), openai_text(GOOD)],
    );
    let config = RunConfig {
        max_echo_bytes: 1001, // inside a two-byte character: cut before it
        ..config(1)
    };
    let out = run(&p, &config).unwrap();
    assert_eq!(out.attempts, 2);
    let messages = p.body(1)["messages"].as_array().unwrap().clone();
    let echoed = messages
        .iter()
        .find(|m| m["role"] == "assistant")
        .and_then(|m| m["content"].as_str())
        .unwrap()
        .to_owned();
    assert!(echoed.len() < 1100, "{}", echoed.len());
    assert!(long.starts_with(echoed.split('\n').next().unwrap()));
    assert!(
        echoed.ends_with("more bytes of this answer not repeated]"),
        "{echoed}"
    );
    // The correction still names the violation.
    let last = messages.last().unwrap()["content"].as_str().unwrap();
    assert!(last.contains("/pleasure"), "{last}");
}

#[test]
fn waits_are_capped_and_a_longer_retry_after_ends_the_run() {
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![
            Err(TransportError::Server {
                status: 503,
                body: "busy".into(),
            }),
            Err(TransportError::RateLimited {
                retry_after: Some(Duration::from_secs(3600)),
            }),
            openai_text(GOOD),
        ],
    );
    let clock = ManualClock::default();
    let config = RunConfig {
        backoff: Duration::from_secs(100),
        max_wait: Duration::from_secs(30),
        clock: RunClock::new(clock.clone()),
        ..config(0)
    };
    let err = run(&p, &config).unwrap_err();
    assert_eq!(clock.sleeps(), [Duration::from_secs(30)]);
    match err {
        RunError {
            kind:
                RunErrorKind::Transport {
                    error: TransportError::RateLimited { retry_after },
                },
            ledger,
        } => {
            assert_eq!(retry_after, Some(Duration::from_secs(3600)));
            assert_eq!(ledger.len(), 2);
        }
        other => panic!("{other:?}"),
    }
}

fn refusal() -> Result<String, TransportError> {
    Ok(json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": null, "refusal": "I can't help with that."}}]})
    .to_string())
}

#[test]
fn a_boxed_provider_chosen_at_run_time_is_a_provider() {
    use structured_runtime::run::DynProvider;
    let chosen: Box<dyn DynProvider> = Box::new(Scripted::new(
        ProviderKind::Anthropic,
        "claude-3-5-haiku-latest",
        vec![anthropic_tool(GOOD)],
    ));
    let out = block_on(run_structured::<DaimonAppraisal, _>(
        &chosen,
        &ChatRequest::user("Appraise."),
        &config(1),
    ))
    .unwrap();
    assert_eq!(out.mode, StructuredOutputMode::ToolUseWorkaround);
    assert_eq!(out.value.primary_emotion, "anticipation");
}

#[test]
fn a_fallback_chain_asks_the_next_provider_after_a_refusal_or_no_response() {
    use structured_runtime::run::{Ask, DynProvider};
    let chain: Vec<Box<dyn DynProvider>> = vec![
        Box::new(Scripted::new(
            ProviderKind::OpenAiChat,
            "gpt-4o",
            vec![refusal()],
        )),
        Box::new(Scripted::new(
            ProviderKind::OpenAiChat,
            "gpt-4o-mini",
            vec![Err(TransportError::Rejected {
                status: 404,
                body: "no such model".into(),
            })],
        )),
        Box::new(Scripted::new(
            ProviderKind::Anthropic,
            "claude-3-5-haiku-latest",
            vec![anthropic_tool(OUT_OF_RANGE), anthropic_tool(GOOD)],
        )),
    ];
    let out = block_on(
        Ask::fallback(&chain, &ChatRequest::user("Appraise."))
            .config(&config(1))
            .typed::<DaimonAppraisal>(),
    )
    .unwrap();
    // One refusal, one rejected request, then an invalid answer re-asked and a valid one.
    assert_eq!(out.attempts, 4);
    let results: Vec<String> = out
        .ledger
        .iter()
        .map(|a| format!("{:?}", a.result))
        .collect();
    assert!(results[0].starts_with("Stopped(Refused"), "{results:?}");
    assert!(results[1].starts_with("Transport(Rejected"), "{results:?}");
    assert!(results[2].starts_with("Invalid"), "{results:?}");
    assert!(results[3].starts_with("Accepted"), "{results:?}");

    // An answer that does not fit is not a reason to change providers: the run ends there.
    let chain: Vec<Box<dyn DynProvider>> = vec![
        Box::new(Scripted::new(
            ProviderKind::OpenAiChat,
            "gpt-4o",
            vec![openai_text(OUT_OF_RANGE)],
        )),
        Box::new(Scripted::new(
            ProviderKind::OpenAiChat,
            "gpt-4o",
            vec![openai_text(GOOD)],
        )),
    ];
    match block_on(
        Ask::fallback(&chain, &ChatRequest::user("Appraise."))
            .config(&config(0))
            .typed::<DaimonAppraisal>(),
    ) {
        Err(RunError {
            kind: RunErrorKind::RetriesExhausted { .. },
            ledger,
        }) => assert_eq!(ledger.len(), 1),
        other => panic!("{other:?}"),
    }
    // Every provider failing: the last error, with every attempt.
    let chain: Vec<Box<dyn DynProvider>> = vec![
        Box::new(Scripted::new(
            ProviderKind::OpenAiChat,
            "gpt-4o",
            vec![refusal()],
        )),
        Box::new(Scripted::new(
            ProviderKind::OpenAiChat,
            "gpt-4o",
            vec![refusal()],
        )),
    ];
    match block_on(
        Ask::fallback(&chain, &ChatRequest::user("Appraise."))
            .config(&config(0))
            .typed::<DaimonAppraisal>(),
    ) {
        Err(RunError {
            kind: RunErrorKind::Refused { .. },
            ledger,
        }) => assert_eq!(ledger.len(), 2),
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_answer_has_a_token_limit_unless_the_caller_says_none() {
    for (asked, configured, sent) in [
        (None, Some(4096u32), Some(4096u32)),
        (Some(300), Some(4096), Some(300)),
        (None, None, None),
    ] {
        let p = Scripted::new(ProviderKind::Gemini, "gemini-2.5-flash", vec![]);
        let mut request = ChatRequest::user("Appraise.");
        request.max_tokens = asked;
        let config = RunConfig {
            max_tokens: configured,
            transport_retries: 0,
            ..config(0)
        };
        let _ = block_on(run_structured::<DaimonAppraisal, _>(&p, &request, &config));
        let body = p.body(0);
        let limit = body
            .pointer("/generationConfig/maxOutputTokens")
            .and_then(Value::as_u64);
        assert_eq!(limit, sent.map(u64::from), "{body}");
    }
    assert_eq!(RunConfig::default().max_tokens, Some(4096));
}

#[test]
fn a_schema_given_at_run_time_is_run_like_a_type() {
    use structured_runtime::run::run_value;
    use structured_runtime::ResponseSchema;
    let schema = ResponseSchema::new(
        "ticket",
        json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]+$"},
                "priority": {"type": "integer", "minimum": 1, "maximum": 5, "multipleOf": 1}
            },
            "required": ["id", "priority"],
            "additionalProperties": false
        }),
    )
    .unwrap();
    // Schema enforced: the pattern broken, re-asked with the validator's own words, then fixed.
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![
            openai_text(r#"{"id": "abc-1", "priority": 2}"#),
            openai_text(r#"{"id": "ABC-1", "priority": 2}"#),
        ],
    );
    let out = block_on(run_value(
        &p,
        &schema,
        &ChatRequest::user("File it."),
        &config(1),
    ))
    .unwrap();
    assert_eq!(out.value, json!({"id": "ABC-1", "priority": 2}));
    assert_eq!((out.attempts, out.provenance), (2, Provenance::Clean));
    let reask = p.body(1)["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        reask.contains("/id") && reask.contains("pattern"),
        "{reask}"
    );
    assert_eq!(
        p.body(0)["response_format"]["json_schema"]["name"],
        "ticket"
    );
    // Tool mode, the value coerced to fit ("3" to 3), said in the warnings.
    let p = Scripted::new(
        ProviderKind::Anthropic,
        "claude-3-5-haiku-latest",
        vec![Ok(
            json!({"type": "message", "role": "assistant", "stop_reason": "tool_use",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "ticket",
                         "input": {"id": "OPS-7", "priority": "3"}}]})
            .to_string(),
        )],
    );
    let out = block_on(run_value(
        &p,
        &schema,
        &ChatRequest::user("File it."),
        &config(0),
    ))
    .unwrap();
    assert_eq!(out.value, json!({"id": "OPS-7", "priority": 3}));
    assert_eq!(out.provenance, Provenance::Recovered);
    assert!(!out.warnings.is_empty());
    // Out of re-asks: the last value and every error, as for a type.
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_text(r#"{"id": "ABC-1", "priority": 9}"#); 2],
    );
    match block_on(run_value(
        &p,
        &schema,
        &ChatRequest::user("File it."),
        &config(1),
    )) {
        Err(RunError {
            kind:
                RunErrorKind::RetriesExhausted {
                    last_value, errors, ..
                },
            ..
        }) => {
            assert_eq!(last_value["priority"], 9);
            assert_eq!(errors.len(), 2);
        }
        other => panic!("{other:?}"),
    }
    // The defaults policy asked for, and applied: the priority out of range taken out and given
    // the bound nearest zero, the value marked recovered.
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_text(r#"{"id": "ABC-1", "priority": 9}"#); 2],
    );
    let mut policy = config(1);
    policy.outputs.on_exhausted = OnExhausted::DefaultsWithWarning;
    let out = block_on(run_value(
        &p,
        &schema,
        &ChatRequest::user("File it."),
        &policy,
    ))
    .unwrap();
    assert_eq!(out.value, json!({"id": "ABC-1", "priority": 1}));
    assert_eq!(out.provenance, Provenance::Recovered);
    // Unable to apply (an id that breaks its pattern has no default that keeps it, and the
    // answer no prose to read): the error says the policy failed, and why.
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_text(r#"{"id": "abc-1", "priority": 2}"#); 2],
    );
    let mut policy = config(1);
    policy.outputs.on_exhausted = OnExhausted::DefaultsWithWarning;
    match block_on(run_value(
        &p,
        &schema,
        &ChatRequest::user("File it."),
        &policy,
    )) {
        Err(
            e @ RunError {
                kind: RunErrorKind::RetriesExhausted { .. },
                ..
            },
        ) => {
            let RunError {
                kind: RunErrorKind::RetriesExhausted { errors, .. },
                ledger,
            } = &e
            else {
                unreachable!()
            };
            // One error per answer, then why the policy could not apply.
            assert_eq!(errors.len(), ledger.len() + 1, "{errors:?}");
            let last = errors.last().unwrap();
            assert!(
                last.starts_with(structured_runtime::run::FALLBACK_FAILED),
                "{last}"
            );
            assert!(
                e.to_string()
                    .contains("the defaults policy could not apply"),
                "{e}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn capability_overrides_in_the_run_config_choose_the_mode() {
    use structured_runtime::provider::capabilities::{CapabilityOverrides, ProviderCapabilities};
    let mut overrides = CapabilityOverrides::new();
    overrides.set(
        ProviderKind::OpenAiChat,
        "GPT-4o",
        ProviderCapabilities::PROMPT_ONLY,
    );
    let config = RunConfig {
        capabilities: overrides,
        ..config(0)
    };
    let p = Scripted::new(ProviderKind::OpenAiChat, "gpt-4o", vec![openai_text(GOOD)]);
    let out = run(&p, &config).unwrap();
    assert_eq!(out.mode, StructuredOutputMode::PromptGuided);
    assert!(p.body(0).get("response_format").is_none());
    // Another model keeps the matrix.
    let p = Scripted::new(ProviderKind::OpenAiChat, "gpt-4.1", vec![openai_text(GOOD)]);
    assert_eq!(
        run(&p, &config).unwrap().mode,
        StructuredOutputMode::SchemaEnforced
    );
}

#[test]
fn extended_thinking_in_the_config_or_the_request_is_one_setting() {
    // The flag: no forced tool, and the request carries `thinking`.
    let p = Scripted::new(
        ProviderKind::Anthropic,
        "claude-3-7-sonnet-latest",
        vec![anthropic_text(GOOD)],
    );
    let config = RunConfig {
        extended_thinking: true,
        ..config(0)
    };
    let out = run(&p, &config).unwrap();
    assert_ne!(out.mode, StructuredOutputMode::ToolUseWorkaround);
    let body = p.body(0);
    assert_eq!(body["thinking"]["type"], "enabled", "{body}");
    assert!(
        body["max_tokens"].as_u64().unwrap() > body["thinking"]["budget_tokens"].as_u64().unwrap()
    );
    assert!(body.get("tool_choice").is_none(), "{body}");
    // The request's own `thinking`: the same mode, the request's fields untouched.
    let p = Scripted::new(
        ProviderKind::Anthropic,
        "claude-3-7-sonnet-latest",
        vec![anthropic_text(GOOD)],
    );
    let mut request = ChatRequest::user("Appraise.");
    request.extra = json!({"thinking": {"type": "enabled", "budget_tokens": 2000}});
    request.max_tokens = Some(5000);
    let out = block_on(run_structured::<DaimonAppraisal, _>(
        &p,
        &request,
        &config_no_thinking(),
    ))
    .unwrap();
    assert_ne!(out.mode, StructuredOutputMode::ToolUseWorkaround);
    assert_eq!(p.body(0)["thinking"]["budget_tokens"], 2000);
    assert!(p.body(0).get("tool_choice").is_none());
    // Neither: the forced tool.
    let p = Scripted::new(
        ProviderKind::Anthropic,
        "claude-3-7-sonnet-latest",
        vec![anthropic_tool(GOOD)],
    );
    assert_eq!(
        run(&p, &config_no_thinking()).unwrap().mode,
        StructuredOutputMode::ToolUseWorkaround
    );
}

fn config_no_thinking() -> RunConfig {
    config(0)
}

#[test]
fn a_run_adds_up_its_tokens_and_a_price_table_costs_each_attempt() {
    use structured_runtime::provider::wire::Prices;
    use structured_runtime::run::{Ask, DynProvider, PriceTable};
    let chain: Vec<Box<dyn DynProvider>> = vec![
        Box::new(Scripted::new(
            ProviderKind::OpenAiChat,
            "gpt-4o",
            vec![refusal()],
        )),
        Box::new(Scripted::new(
            ProviderKind::OpenAiChat,
            "gpt-4o-mini",
            vec![openai_text(OUT_OF_RANGE), openai_text(GOOD)],
        )),
    ];
    let out = block_on(
        Ask::fallback(&chain, &ChatRequest::user("Appraise."))
            .config(&config(1))
            .typed::<DaimonAppraisal>(),
    )
    .unwrap();
    // The refusal reported no usage; each answer of the second model 100 in, 40 out.
    let usage = out.usage();
    assert_eq!((usage.input_tokens, usage.output_tokens), (200, 80));
    let models: Vec<&str> = out.ledger.iter().map(|a| a.model.as_str()).collect();
    assert_eq!(models, ["gpt-4o", "gpt-4o-mini", "gpt-4o-mini"]);
    let mut prices = PriceTable::new();
    prices.set(
        "gpt-4o-mini",
        Prices {
            input: 0.15,
            output: 0.6,
            cached_input: None,
            batch: None,
        },
    );
    assert_eq!(
        prices.attempt_cost(&out.ledger[0]),
        Some(0.0),
        "no usage, no cost"
    );
    let each = 100.0 * 0.15 / 1e6 + 40.0 * 0.6 / 1e6;
    assert!((prices.attempt_cost(&out.ledger[1]).unwrap() - each).abs() < 1e-15);
    assert!((prices.cost(&out.ledger).unwrap() - 2.0 * each).abs() < 1e-15);
    // A model without prices: the run's cost is unknown, not zero.
    let empty = PriceTable::new();
    assert_eq!(empty.cost(&out.ledger), None);
}

#[test]
fn what_the_provider_does_not_enforce_is_said_with_the_value() {
    // Anthropic takes no numeric bounds: the ranges go into descriptions, and the run says so.
    let p = Scripted::new(
        ProviderKind::Anthropic,
        "claude-sonnet-4-5",
        vec![anthropic_text(GOOD)],
    );
    let out = run(&p, &config(0)).unwrap();
    assert_eq!(out.mode, StructuredOutputMode::SchemaEnforced);
    assert_eq!(out.provenance, Provenance::Clean);
    assert!(
        out.warnings.is_empty(),
        "the value itself was read as written"
    );
    match &out.request_warnings[..] {
        [Warning::NotEnforcedByProvider { moved, .. }] => {
            let pleasure = moved
                .iter()
                .find(|m| m.path.as_str() == "/properties/pleasure")
                .expect("the range of /pleasure was moved");
            assert!(
                pleasure.keywords.iter().any(|k| k == "minimum"),
                "{moved:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    // Prompt-guided: nothing was asked of the provider, so nothing is said.
    let p = Scripted::new(
        ProviderKind::Anthropic,
        "claude-sonnet-4-5",
        vec![anthropic_text(GOOD)],
    );
    let config = RunConfig {
        outputs: StructuredOutputsConfig {
            enabled: false,
            ..StructuredOutputsConfig::default()
        },
        ..config(0)
    };
    let out = run(&p, &config).unwrap();
    assert!(out.request_warnings.is_empty());
}

#[test]
fn the_fallback_policy_uses_the_declared_defaults_and_the_prose_reader() {
    let mut policy = config(1);
    policy.outputs.on_exhausted = OnExhausted::DefaultsWithWarning;
    // A broken enum twice: no typed default for it, so the prose reader's declared defaults.
    let broken = GOOD.replace("\"anticipation\"", "\"elation\"");
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_text(&broken), openai_text(&broken)],
    );
    let out = run(&p, &policy).unwrap();
    assert_eq!(p.calls(), 2, "retry once, then defaults");
    assert_eq!(out.provenance, Provenance::Recovered);
    assert!(out.value.validate().is_ok());
    assert_eq!(
        out.value.primary_emotion, "anticipation",
        "the declared default"
    );
    assert!(matches!(
        out.warnings[0],
        Warning::Defaults { attempts: 2, .. }
    ));
    assert!(
        out.warnings.iter().any(
            |w| matches!(w, Warning::FromText { field, .. } if field.as_str() == "/primary_emotion")
        ),
        "{:?}",
        out.warnings
    );
    // Prose with nothing to read, twice: the declared defaults, every field named.
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_text("I feel calm."), openai_text("Hard to say.")],
    );
    let out = run(&p, &policy).unwrap();
    assert_eq!(out.provenance, Provenance::Recovered);
    assert!(out.value.validate().is_ok());
    assert_eq!(out.value.memory_bias, "neutral");
    let defaulted = out
        .warnings
        .iter()
        .filter(|w| matches!(w, Warning::FromText { .. }))
        .count();
    assert!(defaulted >= 4, "{:?}", out.warnings);
    // Without the policy, the same answers fail.
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_text(&broken), openai_text(&broken)],
    );
    assert!(run(&p, &config(1)).is_err());
}

#[test]
fn a_re_ask_for_an_answer_without_json_speaks_to_the_model_not_the_developer() {
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_text("no idea"), openai_text(GOOD)],
    );
    run(&p, &config(1)).unwrap();
    let reask = p.body(1)["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(reask.contains("holds no JSON"), "{reask}");
    assert!(!reask.contains("fallback_keyword"), "{reask}");
}

#[test]
fn with_structured_output_off_a_type_without_a_prose_reader_is_refused_at_the_start() {
    #[derive(Debug, serde::Deserialize, StructuredOutput)]
    struct Plain {
        ok: bool,
    }
    let p = Scripted::new(ProviderKind::OpenAiChat, "gpt-4o", vec![openai_text("yes")]);
    let mut off = config(1);
    off.outputs.enabled = false;
    let err = block_on(run_structured::<Plain, _>(
        &p,
        &ChatRequest::user("On?"),
        &off,
    ))
    .unwrap_err();
    assert!(
        matches!(err.kind, RunErrorKind::NoProseReader { .. }),
        "{err:?}"
    );
    assert_eq!(p.calls(), 0, "nothing was sent");
    // A type with one reads the prose.
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_text("I feel joy, pleasure 0.5")],
    );
    let out = run(&p, &off).unwrap();
    assert_eq!(out.provenance, Provenance::Heuristic);
}

/// With structured output off, each of the eight subsystem types runs: the prose answer is read
/// by the type's keywords (`Heuristic`, every field's source in the warnings), never refused with
/// `NoProseReader`, and nothing asks the provider for a schema.
#[test]
fn with_structured_output_off_every_subsystem_type_reads_its_prose() {
    use structured_examples::{
        CuratorEvaluation, DreamIntegration, FragmentEvaluation, HeartbeatDecision, ReplayAnalysis,
        RiskAssessment, ThreatAssessment,
    };
    fn prose_run<T: StructuredOutput + Validate + 'static>(answer: &str) -> T {
        let p = Scripted::new(
            ProviderKind::OpenAiChat,
            "gpt-4o",
            vec![openai_text(answer)],
        );
        let mut off = config(0);
        off.outputs.enabled = false;
        let out = block_on(run_structured::<T, _>(
            &p,
            &ChatRequest::user("Assess."),
            &off,
        ))
        .unwrap_or_else(|e| panic!("{}: {e:?}", std::any::type_name::<T>()));
        assert_eq!(out.provenance, Provenance::Heuristic);
        assert_eq!(out.mode, StructuredOutputMode::None);
        assert!(p.body(0).get("response_format").is_none());
        assert!(out.value.validate().is_ok());
        out.value
    }
    let text = "Severity high, approved; evaluated 12, retained 10, pruned 2; surprise 0.4; \
                novelty 0.7, promote it; likelihood 20%; I feel fear, pleasure -0.3.";
    assert_eq!(prose_run::<HeartbeatDecision>(text).severity, "high");
    assert_eq!(prose_run::<DaimonAppraisal>(text).primary_emotion, "fear");
    assert!(prose_run::<RiskAssessment>(text).approved);
    assert_eq!(prose_run::<CuratorEvaluation>(text).entries_pruned, 2);
    assert_eq!(prose_run::<ReplayAnalysis>(text).surprise_score, 0.4);
    assert_eq!(prose_run::<FragmentEvaluation>(text).verdict, "promote");
    assert!(prose_run::<DreamIntegration>(text).playbook_diff.is_some());
    assert_eq!(prose_run::<ThreatAssessment>(text).likelihood, 0.2);
}

#[test]
fn ollama_gets_images_beside_the_text_and_refuses_a_pdf() {
    use structured_runtime::provider::wire::{Attachment, ChatMessage};
    let mut request = ChatRequest::user("");
    request.messages =
        vec![ChatMessage::user("Read it.")
            .with(Attachment::image_base64("image/png", "iVBORw0KGgo="))];
    let p = Scripted::new(ProviderKind::Ollama, "llama3.1", vec![]);
    let _ = block_on(run_structured::<DaimonAppraisal, _>(
        &p,
        &request,
        &config(0),
    ));
    let message = &p.body(0)["messages"][0];
    assert_eq!(message["content"], "Read it.");
    assert_eq!(message["images"], json!(["iVBORw0KGgo="]));
    request.messages = vec![ChatMessage::user("Read it.").with(Attachment::pdf_base64("JVBERi0="))];
    let p = Scripted::new(ProviderKind::Ollama, "llama3.1", vec![]);
    let err = block_on(run_structured::<DaimonAppraisal, _>(
        &p,
        &request,
        &config(0),
    ))
    .unwrap_err();
    assert!(
        matches!(err.kind, RunErrorKind::UnsupportedInput { .. }),
        "{err:?}"
    );
    assert_eq!(p.calls(), 0);
}

fn caller_tools() -> Vec<structured_runtime::provider::wire::Tool> {
    use structured_runtime::provider::wire::Tool;
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

#[test]
fn an_agent_step_hands_the_callers_tools_back_and_ends_at_a_valid_finalizer() {
    use structured_runtime::run::{AgentStep, Ask};
    let finalizer = DaimonAppraisal::schema().name().to_owned();
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![
            // Two of the caller's tools at once.
            openai_calls(&[
                ("c1", "funding_rate", r#"{"market": "ETH"}"#),
                ("c2", "volume", r#"{"market": "ETH"}"#),
            ]),
            // Text only.
            openai_text("Let me think about it."),
            // The finalizer, out of range.
            openai_calls(&[("c3", &finalizer, OUT_OF_RANGE)]),
            // The finalizer, valid.
            openai_calls(&[("c4", &finalizer, GOOD)]),
        ],
    );
    let mut handled = Vec::new();
    let out = block_on(
        Ask::new(&p, &ChatRequest::user("Appraise the market."))
            .config(&config(1))
            .agent(&AgentStep::new(caller_tools()), |name, args| {
                handled.push((name.to_owned(), args.to_text().into_owned()));
                format!("{name}: 0.01")
            })
            .typed::<DaimonAppraisal>(),
    )
    .unwrap();
    assert_eq!(out.value.primary_emotion, "anticipation");
    assert_eq!(out.attempts, 4);
    assert_eq!(handled.len(), 2);
    assert_eq!(handled[0].0, "funding_rate");
    assert!(handled[1].1.contains("ETH"));
    // Every request offers the caller's tools beside the finalizer, and lets the model choose.
    let first = p.body(0);
    let names: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, [finalizer.as_str(), "funding_rate", "volume"]);
    assert_eq!(first["tool_choice"], "required");
    // The tools' results went back, the text-only answer was answered, and the invalid
    // finalizer call got an error tool result naming the path.
    let messages = p.body(3)["messages"].as_array().unwrap().clone();
    let tool_results: Vec<&Value> = messages.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(tool_results.len(), 3);
    assert_eq!(tool_results[0]["content"], "funding_rate: 0.01");
    assert!(tool_results[2]["content"]
        .as_str()
        .unwrap()
        .contains("/pleasure"));
    assert!(messages.iter().any(|m| m["role"] == "user"
        && m["content"]
            .as_str()
            .is_some_and(|c| c.contains("calling a tool"))));
}

#[test]
fn an_agent_step_is_bounded_by_text_only_answers_and_by_steps() {
    use structured_runtime::run::{AgentStep, Ask};
    let finalizer = DaimonAppraisal::schema().name().to_owned();
    // Five text-only answers in a row end the run; a tool call in between resets the count.
    let mut replies = vec![openai_text("hmm"); 4];
    replies.push(openai_calls(&[("c1", "volume", "{}")]));
    replies.extend(vec![openai_text("hmm"); 5]);
    let p = Scripted::new(ProviderKind::OpenAiChat, "gpt-4o", replies);
    let mut step = AgentStep::new(caller_tools());
    step.max_steps = 20;
    let err = block_on(
        Ask::new(&p, &ChatRequest::user("Appraise."))
            .config(&config(1))
            .agent(&step, |_, _| "ok".into())
            .typed::<DaimonAppraisal>(),
    )
    .unwrap_err();
    assert!(
        matches!(err.kind, RunErrorKind::NoStructuredOutput { .. }),
        "{err:?}"
    );
    assert_eq!(p.calls(), 10, "4 + a tool call + 5");
    // A model that only ever calls tools runs out of steps: a typed error, never a value.
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_calls(&[("c", "volume", "{}")]); 12],
    );
    let err = block_on(
        Ask::new(&p, &ChatRequest::user("Appraise."))
            .config(&config(1))
            .agent(&AgentStep::new(caller_tools()), |_, _| "ok".into())
            .typed::<DaimonAppraisal>(),
    )
    .unwrap_err();
    assert!(
        matches!(err, RunError { kind: RunErrorKind::StepBudget { steps: 10 }, ref ledger } if ledger.len() == 10),
        "{err:?}"
    );
    // The finalizer beside another tool is answered with an error asking for it alone.
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![
            openai_calls(&[("c1", "volume", "{}"), ("c2", &finalizer, GOOD)]),
            openai_calls(&[("c3", &finalizer, GOOD)]),
        ],
    );
    let mut handled = 0;
    let out = block_on(
        Ask::new(&p, &ChatRequest::user("Appraise."))
            .config(&config(1))
            .agent(&AgentStep::new(caller_tools()), |_, _| {
                handled += 1;
                "ok".into()
            })
            .typed::<DaimonAppraisal>(),
    )
    .unwrap();
    assert_eq!((out.attempts, handled), (2, 0));
    let errors: Vec<String> = p.body(1)["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        errors.iter().all(|e| e.contains("must be called alone")),
        "{errors:?}"
    );
}

#[test]
fn an_agent_step_on_anthropic_writes_its_tools_and_results_in_anthropics_format() {
    use structured_runtime::run::{AgentStep, Ask};
    let finalizer = DaimonAppraisal::schema().name().to_owned();
    let tool_use = |id: &str, name: &str, input: Value| {
        Ok(
            json!({"type": "message", "role": "assistant", "stop_reason": "tool_use",
            "content": [{"type": "tool_use", "id": id, "name": name, "input": input}]})
            .to_string(),
        )
    };
    let p = Scripted::new(
        ProviderKind::Anthropic,
        "claude-3-5-haiku-latest",
        vec![
            tool_use("t1", "volume", json!({"market": "BTC"})),
            tool_use("t2", &finalizer, serde_json::from_str(GOOD).unwrap()),
        ],
    );
    let out = block_on(
        Ask::new(&p, &ChatRequest::user("Appraise."))
            .config(&config(1))
            .agent(&AgentStep::new(caller_tools()), |_, _| {
                "volume is up".into()
            })
            .typed::<DaimonAppraisal>(),
    )
    .unwrap();
    assert_eq!(out.attempts, 2);
    let first = p.body(0);
    assert_eq!(first["tool_choice"]["type"], "any");
    assert_eq!(first["tools"].as_array().unwrap().len(), 3);
    assert_eq!(first["tools"][1]["input_schema"]["type"], "object");
    let second = p.body(1);
    let result = &second["messages"].as_array().unwrap().last().unwrap()["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "t1");
    assert_eq!(result["content"], "volume is up");
    assert!(result.get("is_error").is_none());
}

#[test]
fn an_agent_step_offers_the_callers_tools_in_gemini_and_responses_format() {
    use structured_runtime::run::{AgentStep, Ask};
    for (kind, model) in [
        (ProviderKind::Gemini, "gemini-2.5-flash"),
        (ProviderKind::OpenAiResponses, "gpt-4o"),
    ] {
        let p = Scripted::new(kind, model, vec![]);
        let mut caps = structured_runtime::provider::capabilities::CapabilityOverrides::new();
        let mut tool_only = structured_runtime::provider::capabilities::capabilities(kind, model);
        tool_only.supports_response_schema = false;
        caps.set(kind, model, tool_only);
        let config = RunConfig {
            capabilities: caps,
            transport_retries: 0,
            ..config(0)
        };
        let _ = block_on(
            Ask::new(&p, &ChatRequest::user("Appraise."))
                .config(&config)
                .agent(&AgentStep::new(caller_tools()), |_, _| String::new())
                .typed::<DaimonAppraisal>(),
        );
        let body = p.body(0);
        match kind {
            ProviderKind::Gemini => {
                let declarations = body["tools"][0]["functionDeclarations"].as_array().unwrap();
                assert_eq!(declarations.len(), 3, "{body}");
                assert_eq!(
                    body["toolConfig"],
                    json!({"functionCallingConfig": {"mode": "ANY"}})
                );
            }
            _ => {
                let tools = body["tools"].as_array().unwrap();
                assert_eq!(tools.len(), 3, "{body}");
                assert_eq!(tools[2]["name"], "volume");
                assert_eq!(body["tool_choice"], "required");
            }
        }
    }
}

#[test]
fn tools_in_the_requests_extra_fields_are_refused_in_tool_mode() {
    let p = Scripted::new(ProviderKind::Anthropic, "claude-3-5-haiku-latest", vec![]);
    let mut request = ChatRequest::user("Appraise.");
    request.extra = json!({"tools": [{"name": "mine", "input_schema": {"type": "object"}}]});
    let err = block_on(run_structured::<DaimonAppraisal, _>(
        &p,
        &request,
        &config(0),
    ))
    .unwrap_err();
    match err {
        RunError {
            kind: RunErrorKind::UnsupportedInput { reason },
            ..
        } => assert!(reason.contains("Ask::agent"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(p.calls(), 0);
}

fn trigger_is_specific(t: &str) -> Result<(), String> {
    if t.split_whitespace().count() < 2 {
        Err(format!("{t:?} is too vague: name what happened"))
    } else {
        Ok(())
    }
}

/// A custom rule's refusal goes into the re-ask like every other rule.
#[derive(Debug, serde::Deserialize, StructuredOutput)]
struct Noted {
    #[validate(with = trigger_is_specific)]
    trigger: String,
}

#[test]
fn a_custom_rules_refusal_is_carried_into_the_re_ask() {
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![
            openai_text(r#"{"trigger": "stuff"}"#),
            openai_text(r#"{"trigger": "funding flipped negative"}"#),
        ],
    );
    let out = block_on(run_structured::<Noted, _>(
        &p,
        &ChatRequest::user("Why?"),
        &config(1),
    ))
    .unwrap();
    assert_eq!(out.value.trigger, "funding flipped negative");
    let reask = p.body(1)["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        reask.contains("/trigger") && reask.contains("too vague"),
        "{reask}"
    );
}

/// llama.cpp is asked with the grammar compiled for the answer's token limit, and the value
/// says what the grammar added; with `json_schema` the body carries the lowered schema and the
/// value says which keywords llama.cpp's converter ignores. Configured sampling goes into every
/// body, under the caller's own fields.
#[test]
fn llama_cpp_gets_the_grammar_or_the_schema_as_configured() {
    use structured_runtime::provider::dialect::{grammar, GrammarBudget, SchemaTarget};
    use structured_runtime::provider::wire::LlamaCppRequest;
    let provider = Scripted::new(ProviderKind::LlamaCpp, "local", vec![openai_text(GOOD)]);
    let mut config = config(0);
    config.sampling = Some(json!({"temperature": 0, "top_k": 1}));
    let mut request = ChatRequest::user("Appraise the funding flip.");
    request.max_tokens = Some(512);
    request.extra = json!({"top_k": 5});
    let out = block_on(run_structured::<DaimonAppraisal, _>(
        &provider, &request, &config,
    ))
    .unwrap();
    let body = provider.body(0);
    let compiled = grammar(
        DaimonAppraisal::schema().schema(),
        GrammarBudget::for_max_tokens(512),
    )
    .unwrap();
    assert_eq!(body["grammar"], compiled.text.as_str());
    assert!(body.get("response_format").is_none());
    assert_eq!(body["temperature"], 0);
    assert_eq!(body["top_k"], 5, "the caller's own field wins");
    assert_eq!(out.provenance, Provenance::Clean);
    match &out.request_warnings[..] {
        [Warning::GrammarLimits {
            unenforced,
            budgets,
        }] => {
            assert!(unenforced.is_empty(), "{unenforced:?}");
            assert_eq!(*budgets, compiled.budgets);
            // Free text got a budget: the three strings, each written in full, fit in half of
            // the 512 tokens at a token a character.
            let trigger = budgets
                .iter()
                .find(|b| b.path.as_str() == "/properties/trigger")
                .unwrap();
            assert_eq!(trigger.limit, 256 / 3);
        }
        other => panic!("{other:?}"),
    }

    let provider = Scripted::new(ProviderKind::LlamaCpp, "local", vec![openai_text(GOOD)]);
    config.llama_cpp_request = LlamaCppRequest::JsonSchema;
    let out = block_on(run_structured::<DaimonAppraisal, _>(
        &provider, &request, &config,
    ))
    .unwrap();
    let body = provider.body(0);
    assert!(body.get("grammar").is_none());
    assert_eq!(
        body["response_format"]["json_schema"]["schema"],
        *DaimonAppraisal::schema()
            .lowered(SchemaTarget::LlamaCpp)
            .unwrap()
    );
    let said = out
        .request_warnings
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        said.contains("/properties/pleasure minimum/maximum (ignored)"),
        "{said}"
    );
}

/// A budget given as is and one fitted to the same token limit start from the same numbers: each
/// run is still sent its own grammar (the kept request fields are keyed by the whole budget).
#[test]
fn each_grammar_budget_gets_its_own_grammar() {
    use structured_examples::HeartbeatDecision;
    use structured_runtime::provider::dialect::{grammar, GrammarBudget};
    let fitted = GrammarBudget::for_max_tokens(512);
    let as_is = GrammarBudget {
        fit_tokens: None,
        ..fitted
    };
    let compiled = |b| {
        grammar(HeartbeatDecision::schema().schema(), b)
            .unwrap()
            .text
    };
    assert_ne!(compiled(fitted), compiled(as_is));
    let mut request = ChatRequest::user("Assess the vault.");
    request.max_tokens = Some(512);
    for budget in [Some(as_is), None] {
        let provider = Scripted::new(ProviderKind::LlamaCpp, "local", vec![]);
        let config = RunConfig {
            grammar_budget: budget,
            transport_retries: 0,
            ..config(0)
        };
        let _ = block_on(run_structured::<HeartbeatDecision, _>(
            &provider, &request, &config,
        ));
        let expected = compiled(budget.unwrap_or(fitted));
        assert_eq!(provider.body(0)["grammar"], expected.as_str());
    }
}

/// A provider whose answer takes a moment (its future is pending once), as any real transport's
/// is: it keeps no timer of its own.
struct Slow(&'static str);

impl Provider for Slow {
    fn kind(&self) -> ProviderKind {
        ProviderKind::OpenAiChat
    }
    fn model(&self) -> &str {
        "gpt-4o"
    }
    fn send(&self, _: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
        let reply = openai_text(self.0);
        let mut pending_once = true;
        std::future::poll_fn(move |cx| {
            if std::mem::take(&mut pending_once) {
                cx.waker().wake_by_ref();
                return std::task::Poll::Pending;
            }
            std::task::Poll::Ready(reply.clone())
        })
    }
}

#[test]
fn the_run_keeps_its_own_time() {
    // A provider that takes a moment does not trip the deadline: the run's clock times it, not
    // the provider (whose only methods are the transport's).
    let out = block_on(run_structured::<DaimonAppraisal, _>(
        &Slow(GOOD),
        &ChatRequest::user("Appraise."),
        &RunConfig::default(),
    ))
    .unwrap();
    assert_eq!(out.attempts, 1);
    // A fallback chain's deadline counts from the chain's start, and its error names the
    // deadline as set (not the time that was left for the last provider).
    use structured_runtime::run::{Ask, DynProvider};
    let clock = ManualClock::default();
    let config = RunConfig {
        deadline: Some(Duration::from_secs(5)),
        backoff: Duration::from_secs(2),
        clock: RunClock::new(clock.clone()),
        ..config(0)
    };
    let down = || {
        Box::new(Scripted::new(
            ProviderKind::OpenAiChat,
            "gpt-4o",
            vec![Err(TransportError::Timeout); 4],
        )) as Box<dyn DynProvider>
    };
    let chain = vec![down(), down()];
    let err = block_on(
        Ask::fallback(&chain, &ChatRequest::user("Appraise."))
            .config(&config)
            .typed::<DaimonAppraisal>(),
    )
    .unwrap_err();
    match err {
        RunError {
            kind: RunErrorKind::DeadlineExceeded { deadline },
            ref ledger,
        } => {
            assert_eq!(deadline, Duration::from_secs(5));
            assert!(ledger.len() >= 2, "{}", ledger.len());
        }
        ref other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("5s"), "{err}");
}

#[test]
fn a_re_ask_sends_the_newest_answer_only_however_many_came_before() {
    // Thirty answers out of range, each with 12 KB of text in a field: every re-ask repeats the
    // newest answer and its correction only, so the 31st request is no larger than the 2nd.
    let long = OUT_OF_RANGE.replace("funding flipped", &"x".repeat(12_000));
    let mut replies = vec![openai_text(&long); 30];
    replies.push(openai_text(GOOD));
    let p = Scripted::new(ProviderKind::OpenAiChat, "gpt-4o", replies);
    let out = run(&p, &config(30)).unwrap();
    assert_eq!(out.attempts, 31);
    let size = |i: usize| p.body(i).to_string().len();
    assert!(size(30) <= size(1), "{} then {}", size(1), size(30));
    assert!(size(30) < 2 * 16 * 1024, "{}", size(30));
    let messages = p.body(30)["messages"].as_array().unwrap().len();
    assert_eq!(messages, p.body(1)["messages"].as_array().unwrap().len());
}

#[test]
fn a_mode_chosen_in_the_config_or_by_the_provider_is_the_mode_asked() {
    use structured_runtime::run::DynProvider;
    // The config's mode over the one the capabilities would choose (schema enforced).
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![Ok(json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function",
                "function": {"name": DaimonAppraisal::schema().name(), "arguments": GOOD}}]}}]})
        .to_string())],
    );
    let forced = RunConfig {
        mode: Some(StructuredOutputMode::ToolUseWorkaround),
        ..config(0)
    };
    let out = run(&p, &forced).unwrap();
    assert_eq!(out.mode, StructuredOutputMode::ToolUseWorkaround);
    assert!(p.body(0).get("tools").is_some());
    assert!(p.body(0).get("response_format").is_none());
    // A mode the provider cannot take ends the run before any request.
    let p = Scripted::new(ProviderKind::Ollama, "llama3.1", vec![]);
    let err = run(&p, &forced).unwrap_err();
    assert!(
        matches!(err.kind, RunErrorKind::UnsupportedInput { .. }),
        "{err:?}"
    );
    assert_eq!(p.calls(), 0);
    // A provider's own mode (a config file's entry for it), when the run's config sets none.
    struct Guided(Scripted);
    impl Provider for Guided {
        fn kind(&self) -> ProviderKind {
            Provider::kind(&self.0)
        }
        fn model(&self) -> &str {
            Provider::model(&self.0)
        }
        fn send(&self, body: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
            self.0.send(body)
        }
        fn mode(&self) -> Option<StructuredOutputMode> {
            Some(StructuredOutputMode::PromptGuided)
        }
    }
    let p = Guided(Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_text(GOOD)],
    ));
    let boxed: Box<dyn DynProvider> = Box::new(p);
    let out = block_on(run_structured::<DaimonAppraisal, _>(
        &boxed,
        &ChatRequest::user("Appraise."),
        &config(0),
    ))
    .unwrap();
    assert_eq!(out.mode, StructuredOutputMode::PromptGuided);
}

/// The defaults policy for types whose required enums declare no default: after the typed
/// defaults and the prose reader, a required choice takes its first allowed value, so the
/// policy applies (marked recovered, the errors said) instead of failing; for a schema given at
/// run time too, and with structured output off and no JSON at all.
#[test]
fn the_defaults_policy_applies_to_required_enums_without_a_declared_default() {
    use structured_examples::FragmentEvaluation;
    use structured_runtime::run::run_value;
    use structured_runtime::ResponseSchema;
    // FragmentEvaluation and ThreatAssessment as the documents give them: no prose reader, so
    // no declared default for their choices.
    #[derive(Debug, serde::Deserialize, StructuredOutput)]
    struct Fragment {
        novelty: f64,
        relevance: f64,
        coherence: f64,
        #[enum_values("promote", "stage", "discard")]
        verdict: String,
    }
    #[derive(Debug, serde::Deserialize, StructuredOutput)]
    struct Threat {
        threat_type: String,
        #[enum_values("low", "medium", "high", "critical")]
        severity: String,
        #[range(0.0, 1.0)]
        likelihood: f64,
        mitigation_actions: Vec<String>,
    }
    let mut policy = config(1);
    policy.outputs.on_exhausted = OnExhausted::DefaultsWithWarning;
    let broken = r#"{"novelty": 0.4, "relevance": 0.9, "coherence": 0.7, "verdict": "keep"}"#;
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_text(broken), openai_text(broken)],
    );
    let out = block_on(run_structured::<Fragment, _>(
        &p,
        &ChatRequest::user("Evaluate the fragment."),
        &policy,
    ))
    .unwrap();
    assert_eq!(out.provenance, Provenance::Recovered);
    assert_eq!(out.value.verdict, "promote", "the first value allowed");
    assert_eq!(
        (out.value.novelty, out.value.relevance),
        (0.4, 0.9),
        "what fit is kept"
    );
    assert!(matches!(
        &out.warnings[0],
        Warning::Defaults { errors, .. } if errors.iter().any(|e| e.contains("/verdict"))
    ));

    // An answer with no JSON at all, twice, for a type with no prose reader: every field
    // defaulted, each choice its first allowed value.
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![
            openai_text("Nothing to report."),
            openai_text("Still nothing."),
        ],
    );
    let out = block_on(run_structured::<Threat, _>(
        &p,
        &ChatRequest::user("Rehearse the threat."),
        &policy,
    ))
    .unwrap();
    assert_eq!(out.provenance, Provenance::Recovered);
    assert_eq!(out.value.severity, "low");
    assert!(out.value.validate().is_ok());

    // A type whose prose reader declares its choice's default takes that one, not the first.
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_text(broken), openai_text(broken)],
    );
    let out = block_on(run_structured::<FragmentEvaluation, _>(
        &p,
        &ChatRequest::user("Evaluate the fragment."),
        &policy,
    ))
    .unwrap();
    assert_eq!(out.value.verdict, "stage", "its declared default");
    assert_eq!((out.value.novelty, out.value.relevance), (0.4, 0.9));

    // A schema given at run time, with an enum.
    let schema = ResponseSchema::new(
        "triage",
        json!({"type": "object", "properties": {
            "queue": {"type": "string", "enum": ["billing", "tech"]},
            "note": {"type": "string"}},
            "required": ["queue", "note"], "additionalProperties": false}),
    )
    .unwrap();
    let wrong = r#"{"queue": "sales", "note": "card declined"}"#;
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_text(wrong), openai_text(wrong)],
    );
    let out = block_on(run_value(
        &p,
        &schema,
        &ChatRequest::user("Route it."),
        &policy,
    ))
    .unwrap();
    assert_eq!(
        out.value,
        json!({"queue": "billing", "note": "card declined"})
    );
    assert_eq!(out.provenance, Provenance::Recovered);
}

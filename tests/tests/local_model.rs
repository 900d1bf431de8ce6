//! End to end against a real model on this machine: llama.cpp's own server with
//! SmolLM2-135M-Instruct, installed from PyPI and started by `scripts/local-model` (once per test
//! run; it stops when the run does). Every request goes through the HTTP provider and the
//! runner, and the server logs every request it receives.
//!
//! The model is small and not repeatable, so nothing here checks its words. What is checked is
//! what the project promises whatever the model writes: a value returned validates and its
//! provenance is honest; a failure is a typed error; the ledger is exactly the requests the server
//! received; each body carries what the codec promises for its mode (the grammar compiled for the
//! run's budget, or the strict flag and the schema as lowered for llama.cpp, `max_tokens`); every
//! grammar the derive's types compile to is accepted by the server; a forced tool, which llama.cpp
//! cannot do, is refused before any request.
//!
//! `STRUCTURED_SKIP_LOCAL_MODEL=1` skips these tests on a machine without python3 or a package
//! registry; anything else that stops the server from starting fails them.

mod common;

use common::grows::grows;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;
use structured_examples::{
    all_schemas, markdown_schemas, DaimonAppraisal, HeartbeatDecision, MarkdownReview, TicketTriage,
};
use structured_runtime::http::HttpProvider;
use structured_runtime::provider::capabilities::{
    capabilities, ProviderCapabilities, ProviderKind, SchemaTarget,
};
use structured_runtime::provider::dialect::grammar;
use structured_runtime::provider::wire::LlamaCppRequest;
use structured_runtime::run::{AttemptResult, RunConfig, RunError, RunErrorKind, Structured};
use structured_runtime::Warning;
use structured_runtime::{
    run_structured, ChatRequest, Provenance, StructuredOutput, StructuredOutputMode, Validate,
};

/// The answer's token limit for every request: enough for either type's JSON, short enough that
/// a model looping inside a string is cut in seconds.
const MAX_TOKENS: u32 = 256;

struct Local {
    base_url: String,
    log: PathBuf,
}

/// The server, started once for this test binary, or `None` when skipped.
fn local() -> Option<&'static Local> {
    static LOCAL: OnceLock<Option<Local>> = OnceLock::new();
    LOCAL
        .get_or_init(|| {
            if std::env::var_os("STRUCTURED_SKIP_LOCAL_MODEL").is_some() {
                return None;
            }
            let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/local-model");
            let out = Command::new(script)
                .args(["start", "--owner", &std::process::id().to_string()])
                .output()
                .unwrap_or_else(|e| panic!("{script}: {e}"));
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "the local model did not start:\n{stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let var = |name: &str| {
                stdout
                    .lines()
                    .find_map(|l| l.strip_prefix(&format!("export {name}=")))
                    .unwrap_or_else(|| panic!("{name} not in {stdout}"))
                    .to_owned()
            };
            Some(Local {
                base_url: var("STRUCTURED_BASE_URL"),
                log: PathBuf::from(var("STRUCTURED_LOCAL_MODEL_LOG")),
            })
        })
        .as_ref()
}

/// Runs a test body against the server, or says it was skipped.
fn with_local(test: impl FnOnce(&Local)) {
    match local() {
        Some(local) => test(local),
        None => eprintln!("skipped: STRUCTURED_SKIP_LOCAL_MODEL is set"),
    }
}

fn provider(local: &Local, caps: ProviderCapabilities) -> HttpProvider {
    HttpProvider::new(
        ProviderKind::LlamaCpp,
        &local.base_url,
        None,
        "smollm2-135m-instruct",
    )
    .and_then(|p| p.with_timeout(Duration::from_secs(120)))
    .expect("a client")
    .with_capabilities(caps)
}

/// What a request of test `tag` carries, so the server's log can be read for this test alone:
/// the tag and this process's id (a server left running by another run keeps that run's log).
fn marker(tag: &str) -> String {
    format!("[{tag} {}]", std::process::id())
}

/// A request whose text carries [`marker`].
fn request(tag: &str, question: &str, max_tokens: u32) -> ChatRequest {
    let mut request = ChatRequest::user(format!("{} {question}", marker(tag)));
    request.max_tokens = Some(max_tokens);
    request
}

/// The bodies the server received for `tag` from this process, in order.
fn logged(local: &Local, tag: &str) -> Vec<Value> {
    let tag = marker(tag);
    let text = std::fs::read_to_string(&local.log).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|entry| entry["path"] == "/v1/chat/completions")
        .map(|entry| entry["body"].clone())
        .filter(|body| {
            body["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|m| m["content"].as_str().is_some_and(|c| c.contains(&tag)))
        })
        .collect()
}

fn run<T: StructuredOutput>(
    provider: &HttpProvider,
    request: &ChatRequest,
    config: &RunConfig,
) -> Result<Structured<T>, RunError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(run_structured::<T, _>(provider, request, config))
}

/// One line on how a run ended.
fn summary<T>(result: &Result<Structured<T>, RunError>) -> String {
    match result {
        Ok(out) => format!("{:?} after {} request(s)", out.provenance, out.attempts),
        Err(e) => {
            let what = e.to_string();
            let first = what.lines().next().unwrap_or_default();
            format!("{first} ({} request(s))", e.ledger().len())
        }
    }
}

fn config() -> RunConfig {
    RunConfig {
        transport_retries: 1,
        backoff: Duration::from_millis(200),
        ..RunConfig::default()
    }
}

/// What holds whatever the model wrote: a value validates and says honestly how it was read; a
/// failure is one of the errors a model's answer can cause; either way the ledger is the
/// requests the server received, body for body.
fn check_outcome<T: StructuredOutput + Validate>(
    local: &Local,
    tag: &str,
    result: &Result<Structured<T>, RunError>,
) -> Vec<Value> {
    let ledger = match result {
        Ok(out) => {
            assert!(out.value.validate().is_ok());
            assert_eq!(
                out.warnings.is_empty(),
                out.provenance == Provenance::Clean,
                "{:?} with {:?}",
                out.provenance,
                out.warnings
            );
            assert!(matches!(
                out.ledger.last().map(|a| &a.result),
                Some(AttemptResult::Accepted(p)) if *p == out.provenance
            ));
            &out.ledger
        }
        Err(e) => {
            assert!(
                matches!(
                    e.kind,
                    RunErrorKind::RetriesExhausted { .. }
                        | RunErrorKind::NoStructuredOutput { .. }
                        | RunErrorKind::Truncated { .. }
                ),
                "an answer can only fail to fit, hold no value, or be cut: {e}"
            );
            e.ledger()
        }
    };
    let bodies = logged(local, tag);
    let sent: Vec<Value> = ledger
        .iter()
        .map(|a| serde_json::from_str(&a.sent).expect("the runner sends JSON"))
        .collect();
    assert_eq!(sent, bodies, "the ledger is what the server received");
    for attempt in ledger {
        assert!(attempt.received.is_some() && attempt.usage.is_some());
    }
    bodies
}

#[test]
fn schema_enforced_answers_through_the_grammar() {
    with_local(|local| {
        let caps = capabilities(ProviderKind::LlamaCpp, "smollm2");
        let provider = provider(local, caps);
        let tag = "e2e-schema-heartbeat";
        let request = request(
            tag,
            "Spot fell 4% in 30 minutes and volume is thin. Assess the vault as JSON.",
            MAX_TOKENS,
        );
        let result = run::<HeartbeatDecision>(&provider, &request, &config());
        let bodies = check_outcome(local, tag, &result);
        assert!(!bodies.is_empty());
        let config = config();
        let budget = config.constraint(Some(MAX_TOKENS)).budget;
        let compiled = grammar(HeartbeatDecision::schema().schema(), budget).unwrap();
        for body in &bodies {
            // What the codec promises for this mode: the grammar for the run's budget, the limit.
            assert_eq!(body["grammar"], compiled.text.as_str());
            assert!(body.get("response_format").is_none() && body.get("tools").is_none());
            assert_eq!(body["max_tokens"], MAX_TOKENS);
        }
        if let Ok(out) = &result {
            assert_eq!(out.mode, StructuredOutputMode::SchemaEnforced);
            // The budgets the grammar added are said with the value.
            assert!(
                matches!(
                    &out.request_warnings[..],
                    [Warning::GrammarLimits { unenforced, budgets }]
                        if unenforced.is_empty() && *budgets == compiled.budgets
                ),
                "{:?}",
                out.request_warnings
            );
        }
        eprintln!("schema enforced, HeartbeatDecision: {}", summary(&result));
    });
}

/// A small type the grammar keeps short: the value comes back valid, after the re-asks its
/// range needs, or the run ends with every violation it saw.
#[derive(StructuredOutput, serde::Deserialize, Debug)]
struct Verdict {
    /// Whether the build is fit to ship.
    #[enum_values("ship", "hold")]
    decision: String,
    /// How sure, from 0 to 1.
    #[range(0.0, 1.0)]
    confidence: f64,
}

#[test]
fn a_small_type_comes_back_valid_or_with_every_violation() {
    with_local(|local| {
        let caps = capabilities(ProviderKind::LlamaCpp, "smollm2");
        let provider = provider(local, caps);
        let tag = "e2e-schema-verdict";
        let request = request(
            tag,
            "All tests pass and the changelog is written. Ship or hold? Give your confidence from 0 to 1.",
            64,
        );
        let mut config = config();
        config.outputs.max_retries = 2;
        // The other request form: the schema as lowered for llama.cpp's own converter.
        config.llama_cpp_request = LlamaCppRequest::JsonSchema;
        let result = run::<Verdict>(&provider, &request, &config);
        let bodies = check_outcome(local, tag, &result);
        let lowered = Verdict::schema().lowered(SchemaTarget::LlamaCpp).unwrap();
        for body in &bodies {
            let format = &body["response_format"];
            assert_eq!(format["type"], "json_schema");
            assert_eq!(format["json_schema"]["strict"], true);
            assert_eq!(&format["json_schema"]["schema"], lowered);
            assert!(body.get("grammar").is_none());
        }
        // Each re-ask carries the unchanged prompt, then the newest answer and its violations
        // only (earlier re-asks are forgotten, so a request stays bounded).
        let prompt = &bodies[0]["messages"][0];
        for (i, body) in bodies.iter().enumerate() {
            let messages = body["messages"].as_array().unwrap();
            assert_eq!(messages.len(), if i == 0 { 1 } else { 3 }, "{body}");
            assert_eq!(&messages[0], prompt);
            if i > 0 {
                assert_eq!(messages[1]["role"], "assistant", "{body}");
                let correction = messages[messages.len() - 1]["content"].as_str().unwrap();
                assert!(
                    correction.contains("does not match the required schema"),
                    "{correction}"
                );
            }
        }
        if let Err(RunError {
            kind: RunErrorKind::RetriesExhausted { errors, .. },
            ..
        }) = &result
        {
            assert_eq!(errors.len(), bodies.len());
        }
        eprintln!("schema enforced, Verdict: {}", summary(&result));
    });
}

#[test]
fn prompt_guided_answers_read_from_what_the_model_wrote() {
    with_local(|local| {
        let provider = provider(local, ProviderCapabilities::PROMPT_ONLY);
        let tag = "e2e-prompt-daimon";
        let request = request(
            tag,
            "A vault you manage lost 4% in 30 minutes. Appraise how it feels.",
            MAX_TOKENS,
        );
        let result = run::<DaimonAppraisal>(&provider, &request, &config());
        let bodies = check_outcome(local, tag, &result);
        assert!(!bodies.is_empty());
        for body in &bodies {
            // No schema on the wire: the guidance is the system message, after nothing else.
            assert!(body.get("response_format").is_none() && body.get("tools").is_none());
            assert_eq!(body["messages"][0]["role"], "system");
            assert_eq!(
                body["messages"][0]["content"],
                DaimonAppraisal::prompt_guidance()
            );
            assert_eq!(body["max_tokens"], MAX_TOKENS);
        }
        if let Ok(out) = &result {
            assert_eq!(out.mode, StructuredOutputMode::PromptGuided);
        }
        eprintln!("prompt guided, DaimonAppraisal: {}", summary(&result));
    });
}

#[test]
fn a_markdown_wrapper_in_both_modes() {
    with_local(|local| {
        let question = "In two short sentences, review this change: `fn add(a: i32, b: i32) -> i32 { a - b }`.";
        // Prompt guided: the guidance asks for Markdown, and the answer is the review.
        let guided = provider(local, ProviderCapabilities::PROMPT_ONLY);
        let tag = "e2e-markdown-prompt";
        let result = run::<MarkdownReview>(&guided, &request(tag, question, 320), &config());
        let bodies = check_outcome(local, tag, &result);
        assert_eq!(
            bodies[0]["messages"][0]["content"],
            MarkdownReview::prompt_guidance()
        );
        if let Ok(out) = &result {
            if out.provenance == Provenance::Heuristic {
                // Taken whole: the value is the answer the server sent, trimmed.
                let received = out
                    .ledger
                    .last()
                    .and_then(|a| a.received.as_deref())
                    .unwrap();
                let reply: Value = serde_json::from_str(received).unwrap();
                let said = reply["choices"][0]["message"]["content"].as_str().unwrap();
                assert_eq!(out.value.content, said.trim());
            }
        }
        eprintln!("prompt guided, MarkdownReview: {}", summary(&result));
        // Schema enforced: the grammar makes the answer the one-field object.
        let caps = capabilities(ProviderKind::LlamaCpp, "smollm2");
        let enforced = provider(local, caps);
        let tag = "e2e-markdown-schema";
        let result = run::<MarkdownReview>(&enforced, &request(tag, question, 320), &config());
        let bodies = check_outcome(local, tag, &result);
        let budget = config().constraint(Some(320)).budget;
        let compiled = grammar(MarkdownReview::schema().schema(), budget).unwrap();
        assert_eq!(bodies[0]["grammar"], compiled.text.as_str());
        if let Ok(out) = &result {
            assert_eq!(out.mode, StructuredOutputMode::SchemaEnforced);
            assert_ne!(out.provenance, Provenance::Heuristic);
        }
        eprintln!("schema enforced, MarkdownReview: {}", summary(&result));
    });
}

/// The logging proxy in front of the server passes a reply's bytes on as they come and, when a
/// client hangs up, closes the upstream request so the model's one slot is freed: checked by
/// `scripts/local-model self-test` against a scripted upstream (ordered by events, not timed).
#[test]
fn the_proxy_streams_and_cancels_when_its_client_hangs_up() {
    with_local(|_| {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/local-model");
        let out = Command::new(script)
            .arg("self-test")
            .output()
            .unwrap_or_else(|e| panic!("{script}: {e}"));
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    });
}

/// Every grammar the example types compile to, at two budgets, is one the server takes: asked
/// for two tokens, it answers (a grammar it cannot parse is a 400 before any token).
#[test]
fn the_server_accepts_every_grammar_compiled_here() {
    with_local(|local| {
        let client = HttpProvider::new(
            ProviderKind::LlamaCpp,
            &local.base_url,
            None,
            "smollm2-135m-instruct",
        )
        .unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut schemas = all_schemas();
        schemas.extend(markdown_schemas());
        schemas.push(TicketTriage::schema());
        schemas.push(DaimonAppraisal::schema());
        let mut sent = 0;
        for schema in schemas {
            for max_tokens in [64, 4096] {
                let budget = RunConfig::default().constraint(Some(max_tokens)).budget;
                let g = grammar(schema.schema(), budget).unwrap();
                let body = serde_json::json!({
                    "model": "smollm2-135m-instruct",
                    "messages": [{"role": "user", "content": marker("e2e-grammar")}],
                    "max_tokens": 2,
                    "grammar": g.text,
                });
                let reply = runtime
                    .block_on(structured_runtime::Provider::send(
                        &client,
                        &body.to_string(),
                    ))
                    .unwrap_or_else(|e| {
                        panic!("{}: the server refused its grammar: {e}", schema.name())
                    });
                let reply: Value = serde_json::from_str(&reply).unwrap();
                assert!(
                    reply["choices"][0].is_object(),
                    "{}: {reply}",
                    schema.name()
                );
                sent += 1;
            }
        }
        eprintln!("the server took all {sent} grammars");
    });
}

/// Tool mode on llama.cpp: the tool goes with `tool_choice: "required"` (the server takes the
/// choice as a string only), and whatever the server makes of it, the run ends with a valid value
/// from a tool call or a typed error, the ledger being what was sent. Measured here: the bundled
/// build renders SmolLM2's chat template, which has no tools, so it ignores them and answers in
/// prose: cut at `max_tokens` (`Truncated`), or re-asked within `plain_text_retries` and then
/// `NoStructuredOutput`.
#[test]
fn tool_mode_sends_the_choice_llama_cpp_takes_and_ends_honestly() {
    with_local(|local| {
        let provider = provider(local, capabilities(ProviderKind::LlamaCpp, "smollm2"));
        let tag = "e2e-tool-mode";
        let config = RunConfig {
            mode: Some(StructuredOutputMode::ToolUseWorkaround),
            plain_text_retries: 1,
            ..config()
        };
        let result = run::<DaimonAppraisal>(&provider, &request(tag, "Appraise.", 48), &config);
        let bodies = check_outcome(local, tag, &result);
        assert!(!bodies.is_empty() && bodies.len() <= 2, "{}", bodies.len());
        for body in &bodies {
            assert_eq!(body["tool_choice"], "required");
            assert_eq!(body["tools"].as_array().map(Vec::len), Some(1));
            assert_eq!(
                body["tools"][0]["function"]["name"],
                DaimonAppraisal::schema().name()
            );
            assert!(body.get("grammar").is_none());
        }
        match &result {
            Ok(out) => assert_eq!(out.mode, StructuredOutputMode::ToolUseWorkaround),
            Err(e) => eprintln!("tool mode on the bundled server: {e}"),
        }
    });
}

#[test]
fn max_tokens_cuts_the_answer_and_the_run_says_so() {
    with_local(|local| {
        let caps = capabilities(ProviderKind::LlamaCpp, "smollm2");
        let provider = provider(local, caps);
        let tag = "e2e-truncated";
        let request = request(tag, "Assess the vault as JSON.", 6);
        let result = run::<HeartbeatDecision>(&provider, &request, &config());
        match &result {
            Err(RunError {
                kind: RunErrorKind::Truncated { reason, .. },
                ledger,
            }) => {
                assert_eq!(reason, "length");
                assert_eq!(ledger.len(), 1, "a cut answer is not asked again");
                assert!(matches!(ledger[0].result, AttemptResult::Stopped(_)));
            }
            other => panic!("six tokens cannot hold the JSON: {}", summary(other)),
        }
        let bodies = check_outcome(local, tag, &result);
        assert_eq!(bodies.len(), 1);
        assert_eq!(bodies[0]["max_tokens"], 6);
    });
}

/// A type with free text, which a stream shows as it grows.
#[derive(StructuredOutput, serde::Deserialize, Debug)]
struct Review {
    /// Whether the build is fit to ship.
    #[enum_values("ship", "hold")]
    decision: String,
    /// Why, in a sentence.
    reason: String,
}

/// Streamed from the real server: the value so far arrives in pieces that only grow, the run
/// ends as `run_structured` would (a valid value, or a typed error), and each request asked for
/// a stream and was answered with one.
#[test]
fn a_streamed_answer_arrives_in_pieces_that_only_grow() {
    use structured_runtime::run::{Ask, StreamEvent};
    with_local(|local| {
        let caps = capabilities(ProviderKind::LlamaCpp, "smollm2");
        let provider = provider(local, caps);
        let tag = "e2e-stream-review";
        let request = request(
            tag,
            "All tests pass and the changelog is written. Ship or hold? Explain why in two sentences.",
            96,
        );
        let mut attempts: Vec<Vec<Value>> = Vec::new();
        let result = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
            .block_on(
                Ask::new(&provider, &request)
                    .config(&config())
                    .stream(|event| match event {
                        StreamEvent::Attempt { .. } => attempts.push(Vec::new()),
                        StreamEvent::Partial { value, .. } => {
                            if let Some(shown) = attempts.last_mut() {
                                shown.push(value.clone());
                            }
                        }
                        _ => {}
                    })
                    .typed::<Review>(),
            );
        match &result {
            Ok(out) => {
                assert!(out.value.validate().is_ok());
                let last = attempts
                    .last()
                    .and_then(|a| a.last())
                    .expect("something shown");
                assert_eq!(last["decision"], Value::from(out.value.decision.clone()));
                assert_eq!(last["reason"], Value::from(out.value.reason.clone()));
            }
            Err(e) => assert!(
                matches!(
                    e.kind,
                    RunErrorKind::RetriesExhausted { .. }
                        | RunErrorKind::NoStructuredOutput { .. }
                        | RunErrorKind::Truncated { .. }
                ),
                "{e}"
            ),
        }
        for shown in &attempts {
            for pair in shown.windows(2) {
                assert!(grows(&pair[0], &pair[1]), "{} then {}", pair[0], pair[1]);
            }
        }
        let bodies = logged(local, tag);
        assert_eq!(bodies.len(), attempts.len());
        for body in &bodies {
            assert_eq!(body["stream"], true, "{body}");
        }
        // What came back was a stream of events, not one body. How many pieces the reader saw
        // depends on how the bytes were batched on the way (a short answer may come in one
        // read), so only the events are counted.
        let ledger = match &result {
            Ok(out) => &out.ledger,
            Err(e) => e.ledger(),
        };
        for attempt in ledger {
            let received = attempt.received.as_deref().unwrap_or_default();
            assert!(received.matches("data: ").count() > 2, "{received}");
        }
        let pieces: usize = attempts.iter().map(Vec::len).sum();
        eprintln!(
            "streamed, Review: {} ({pieces} partial values)",
            summary(&result)
        );
    });
}

/// A batch job of 100 items through the real model's chat endpoint (the path for servers
/// without a batch API): every item is accounted for, once, and each value read validates.
#[test]
fn a_batch_job_of_a_hundred_items_accounts_for_every_one() {
    use structured_runtime::batch::{run_on_chat, JobItem, JobSpec, Store};
    with_local(|local| {
        let caps = capabilities(ProviderKind::LlamaCpp, "smollm2");
        let provider = provider(local, caps);
        let tag = "e2e-batch";
        let schema = structured_runtime::ResponseSchema::new(
            "sentiment",
            serde_json::json!({"type": "object",
                "properties": {"label": {"enum": ["positive", "negative"]}},
                "required": ["label"], "additionalProperties": false}),
        )
        .unwrap();
        let spec = JobSpec {
            schema: schema.clone(),
            prompt: format!(
                "{} Is this review positive or negative? {{input}}",
                marker(tag)
            ),
            max_tokens: Some(24),
            prices: None,
        };
        let reviews = [
            "Great product, works well.",
            "Broke after a day.",
            "I love it.",
            "Waste of money.",
        ];
        let items = (0..100).map(|i| {
            Ok(JobItem {
                id: Some(format!("r{i}")),
                input: Some(reviews[i % reviews.len()].to_owned()),
                ..JobItem::default()
            })
        });
        let dir = std::env::temp_dir().join(format!("structured-e2e-batch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut store = Store::create(dir.join("job.db"), &spec, items).unwrap();
        let out = dir.join("out.jsonl");
        let started = std::time::Instant::now();
        let status = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
            .block_on(run_on_chat(
                &mut store,
                &provider,
                &config(),
                2,
                Some(&out),
                |_| {},
            ))
            .unwrap();
        assert_eq!(
            (status.total, status.finished(), status.written),
            (100, 100, 100)
        );
        let lines: Vec<Value> = std::fs::read_to_string(&out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let mut ids: Vec<&str> = lines.iter().map(|l| l["id"].as_str().unwrap()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 100, "each item exactly once");
        for line in &lines {
            match line.get("value") {
                Some(value) => assert!(schema.check_instance(value).is_ok(), "{line}"),
                None => assert!(line["error"]["kind"].is_string(), "{line}"),
            }
        }
        // Every request the job made reached the server.
        let requests: u64 = lines.iter().map(|l| l["attempts"].as_u64().unwrap()).sum();
        assert_eq!(logged(local, tag).len() as u64, requests);
        eprintln!(
            "batch of 100 over the chat endpoint: {} done, {} failed, {requests} requests, {:.1} s",
            status.done,
            status.failed,
            started.elapsed().as_secs_f64()
        );
        let _ = std::fs::remove_dir_all(&dir);
    });
}

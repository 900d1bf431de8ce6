//! Markdown wrappers (`#[markdown]`): free-form text through the same pipeline. Each of the five
//! wrapper types in `examples/` is read from realistic answers — clean JSON, fenced JSON, JSON
//! after a one-line lead-in, plain markdown, markdown quoting a JSON snippet, an empty answer —
//! and run through `run_structured` in each mode against a scripted provider.

use serde::Serialize;
use serde_json::{json, Value};
mod common;
use structured_examples::replay::{block_on, ReplayProvider, Reply};
use structured_examples::{
    CommitMessage, MarkdownChangelog, MarkdownPullRequest, MarkdownReleaseNotes, MarkdownReview,
};
use structured_runtime::provider::capabilities::ProviderKind;
use structured_runtime::schema::Markdown;
use structured_runtime::{
    parse_response, parse_value, run_structured, ChatRequest, GuidanceFormat, ParseError,
    ParseOptions, Parsed, Pointer, Provenance, Reading, ResponseSchema, RunConfig,
    StructuredOutput, StructuredOutputMode, Warning,
};

const PULL_REQUEST: &str = "## Summary\n\nAdds parallel analysis for large changesets.\n\n## Changes\n\n- New `ParallelAnalyze` tool\n- Subagent runner with provider abstraction\n\n## Test plan\n\n- [ ] Changesets over 20 files\n- [ ] Concurrent execution\n";
const CHANGELOG: &str = "### Added\n- `--parallel` flag for large changesets\n\n### Fixed\n- Keys dropped when a duplicate appeared (#412)\n";
const RELEASE_NOTES: &str = "# v0.9.0\n\nLarge changesets are analysed in parallel, so reviews of big branches finish in a third of the time.\n\n**Upgrading:** no configuration changes.\n";
const REVIEW: &str = "**Verdict: request changes**\n\n1. `src/run.rs:88` — the retry loop never resets its backoff.\n2. `src/http.rs:40` — the timeout is read but not applied.\n";

/// Markdown that quotes JSON: the snippet must not capture the answer.
const REVIEW_WITH_SNIPPET: &str = "## Review\n\nThe fixture is missing a field. It should read:\n\n```json\n{\"content\": \"hello\", \"id\": 7}\n```\n\nOtherwise this looks good.";
const REVIEW_WITH_WRAPPER_SNIPPET: &str =
    "## Review\n\nThe model should answer with:\n\n```json\n{\"content\": \"## Summary\"}\n```\n";

fn content_of<T: Serialize>(value: &T, field: &str) -> Value {
    serde_json::to_value(value).unwrap()[field].clone()
}

fn whole_answer(parsed: &Parsed<impl Sized>) -> bool {
    parsed
        .warnings
        .iter()
        .any(|w| matches!(w, Warning::WholeAnswer { .. }))
}

/// Every reading the rule promises, for one single-field wrapper type.
fn reads_every_shape<T: StructuredOutput + Serialize + std::fmt::Debug>(markdown: &str) {
    let name = T::schema().name();
    let trimmed = markdown.trim();
    let json = json!({ "content": markdown }).to_string();
    let prompt = StructuredOutputMode::PromptGuided;

    // Clean JSON: exactly the value.
    let clean = parse_response::<T>(&json, StructuredOutputMode::SchemaEnforced).unwrap();
    assert_eq!(clean.provenance, Provenance::Clean, "{name}");
    assert!(clean.warnings.is_empty(), "{name}");
    assert_eq!(content_of(&clean.value, "content"), markdown, "{name}");

    // Fenced JSON, and JSON after a one-line lead-in: the JSON, extracted.
    for answer in [
        format!("```json\n{json}\n```"),
        format!("Here is the {name}:\n```json\n{json}\n```\n"),
        format!("Sure: {json}"),
    ] {
        let parsed = parse_response::<T>(&answer, prompt).unwrap();
        assert_eq!(parsed.provenance, Provenance::Extracted, "{name}: {answer}");
        assert!(!whole_answer(&parsed), "{name}");
        assert_eq!(content_of(&parsed.value, "content"), markdown, "{name}");
    }

    // Plain markdown: taken whole, trimmed, with a warning; refused in strict mode.
    let plain = parse_response::<T>(&format!("\n\n{markdown}\n\n"), prompt).unwrap();
    assert_eq!(plain.provenance, Provenance::Heuristic, "{name}");
    assert_eq!(content_of(&plain.value, "content"), trimmed, "{name}");
    assert_eq!(
        plain.warnings,
        [Warning::WholeAnswer {
            content: Pointer::parse("/content").unwrap(),
            title: None
        }],
        "{name}"
    );
    assert_eq!(plain.span, 2..2 + trimmed.len());
    let strict = Reading::new(prompt)
        .options(&ParseOptions::strict())
        .typed::<T>(markdown);
    assert!(matches!(strict, Err(ParseError::NotFound { .. })), "{name}");
    // Strict mode still takes the JSON as written.
    let strict_json = Reading::new(prompt)
        .options(&ParseOptions::strict())
        .typed::<T>(&json)
        .unwrap();
    assert_eq!(strict_json.provenance, Provenance::Clean);

    // A provider that enforced the schema and still sent markdown: taken whole, and said so.
    let enforced = parse_response::<T>(markdown, StructuredOutputMode::SchemaEnforced).unwrap();
    assert_eq!(enforced.provenance, Provenance::Heuristic);
    assert!(matches!(
        enforced.warnings[0],
        Warning::NotAsEnforced { .. }
    ));

    // Markdown wrapped in a markdown fence is markdown: fences kept as written.
    let fenced_markdown = format!("```markdown\n{trimmed}\n```");
    let parsed = parse_response::<T>(&fenced_markdown, prompt).unwrap();
    assert_eq!(
        content_of(&parsed.value, "content"),
        fenced_markdown.as_str()
    );

    // Markdown quoting JSON: the snippets stay in the content.
    for answer in [REVIEW_WITH_SNIPPET, REVIEW_WITH_WRAPPER_SNIPPET] {
        let parsed = parse_response::<T>(answer, prompt).unwrap();
        assert_eq!(parsed.provenance, Provenance::Heuristic, "{name}: {answer}");
        assert_eq!(
            content_of(&parsed.value, "content"),
            answer.trim(),
            "{name}"
        );
    }

    // An empty answer is no answer.
    for empty in ["", "  \n\t "] {
        let err = parse_response::<T>(empty, prompt).unwrap_err();
        assert!(matches!(err, ParseError::NotFound { .. }), "{name}: {err}");
    }

    // JSON that opens the answer but does not fit is an error a re-ask can fix, not markdown.
    let err = parse_response::<T>("{\"body\": \"## Summary\"}", prompt).unwrap_err();
    assert!(matches!(err, ParseError::Invalid { .. }), "{name}: {err}");
}

#[test]
fn each_wrapper_reads_every_shape_of_answer() {
    reads_every_shape::<MarkdownPullRequest>(PULL_REQUEST);
    reads_every_shape::<MarkdownChangelog>(CHANGELOG);
    reads_every_shape::<MarkdownReleaseNotes>(RELEASE_NOTES);
    reads_every_shape::<MarkdownReview>(REVIEW);
}

#[test]
fn a_commit_message_takes_its_first_line_as_the_title() {
    let prompt = StructuredOutputMode::PromptGuided;
    let plain = "Analyse large changesets in parallel\n\nEach subagent runs with its own context window,\nso large changesets no longer hit the token limit.\n";
    let parsed = parse_response::<CommitMessage>(plain, prompt).unwrap();
    assert_eq!(parsed.provenance, Provenance::Heuristic);
    assert_eq!(
        parsed.value,
        CommitMessage {
            emoji: None,
            title: "Analyse large changesets in parallel".into(),
            message: "Each subagent runs with its own context window,\nso large changesets no longer hit the token limit.".into(),
        }
    );
    assert_eq!(
        parsed.warnings,
        [Warning::WholeAnswer {
            content: Pointer::parse("/message").unwrap(),
            title: Some(Pointer::parse("/title").unwrap()),
        }]
    );
    assert!(parsed.warnings[0].to_string().contains("first line"));

    // A title alone: an empty body.
    let parsed = parse_response::<CommitMessage>("Fix the typo in README", prompt).unwrap();
    assert_eq!(
        (parsed.value.title.as_str(), parsed.value.message.as_str()),
        ("Fix the typo in README", "")
    );

    // JSON, with the emoji only JSON can give.
    let json =
        r#"{"emoji": "✨", "title": "Add parallel analysis", "message": "Implements subagents."}"#;
    let parsed =
        parse_response::<CommitMessage>(json, StructuredOutputMode::SchemaEnforced).unwrap();
    assert_eq!(parsed.provenance, Provenance::Clean);
    assert_eq!(parsed.value.emoji.as_deref(), Some("✨"));
}

/// The commit-message document's rule: a summary line of at most 72 characters, held in the
/// schema, the guidance and every reading (prose or JSON).
#[test]
fn a_commit_message_title_is_at_most_72_characters() {
    assert_eq!(
        CommitMessage::schema().schema()["properties"]["title"]["maxLength"],
        72
    );
    let long = "Refactor the whole request pipeline so that every provider shares one codec path";
    assert!(long.chars().count() > 72);
    let prose = format!("{long}\n\nThe body.\n");
    let refused = parse_response::<CommitMessage>(&prose, StructuredOutputMode::PromptGuided);
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.to_string().contains("/title")),
        "{refused:?}"
    );
    let json = format!(r#"{{"emoji": null, "title": "{long}", "message": "m"}}"#);
    let refused = parse_response::<CommitMessage>(&json, StructuredOutputMode::SchemaEnforced);
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.to_string().contains("/title")),
        "{refused:?}"
    );
    let short = "Share one codec path across providers";
    let read = parse_response::<CommitMessage>(short, StructuredOutputMode::PromptGuided).unwrap();
    assert_eq!(read.value.title, short);
}

#[test]
fn the_schema_stays_the_strict_object_and_guidance_asks_for_markdown() {
    let schema = MarkdownPullRequest::schema();
    assert_eq!(
        schema.schema(),
        &json!({
            "type": "object",
            "description": "A pull request description in Markdown: what changed, why, and how it was tested.",
            "properties": {"content": {"type": "string", "description": "The description, in Markdown."}},
            "required": ["content"],
            "additionalProperties": false
        })
    );
    assert_eq!(schema.markdown(), Some(&Markdown::content("content")));
    // What the derive checked at compile time, the run-time check agrees with, for every wrapper.
    for derived in structured_examples::markdown_schemas() {
        let markdown = derived.markdown().unwrap().clone();
        let rebuilt = ResponseSchema::new(derived.name(), derived.schema().clone()).unwrap();
        assert!(
            rebuilt.with_markdown(markdown).is_ok(),
            "{}",
            derived.name()
        );
    }
    assert!(schema.strict_preflight().is_ok());
    let guidance = MarkdownPullRequest::prompt_guidance();
    assert_eq!(
        guidance,
        "Reply in Markdown only: no JSON, nothing before or after it. Write a pull request description in Markdown: what changed, why, and how it was tested."
    );
    // Fewer words than the JSON sketch, which is still there to ask for.
    let sketch = MarkdownPullRequest::prompt_guidance_as(GuidanceFormat::Sketch);
    assert!(sketch.starts_with("Reply with JSON only"));
    assert!(guidance.len() < sketch.len());

    let commit = CommitMessage::prompt_guidance();
    assert!(commit.contains("First line: The summary line"), "{commit}");
    assert!(
        commit.contains("then the body: what changed and why"),
        "{commit}"
    );
}

#[test]
fn a_schema_given_at_run_time_reads_the_same_way() {
    let schema = ResponseSchema::new(
        "review",
        json!({
            "type": "object",
            "properties": {
                "content": {"type": "string", "minLength": 10},
                "severity": {"type": ["string", "null"], "enum": ["low", "high", null]}
            },
            "required": ["content", "severity"],
            "additionalProperties": false
        }),
    )
    .unwrap()
    .with_markdown(Markdown::content("content"))
    .unwrap();
    let options = ParseOptions::default();
    let parsed = parse_value(REVIEW, &schema, &options).unwrap();
    assert_eq!(
        parsed.value,
        json!({"content": REVIEW.trim(), "severity": null})
    );
    assert_eq!(parsed.provenance, Provenance::Heuristic);
    // The validator of record still judges the value: too short is refused, with the path.
    let err = parse_value("LGTM", &schema, &options).unwrap_err();
    let ParseError::Invalid { violations, .. } = err else {
        panic!("{err}")
    };
    assert_eq!(violations[0].path, "/content");
    // A schema that cannot hold plain text is refused when it is made a wrapper.
    let closed = ResponseSchema::new(
        "r",
        json!({"type": "object", "properties": {"content": {"type": "string"}, "n": {"type": "integer"}},
               "required": ["content", "n"], "additionalProperties": false}),
    )
    .unwrap();
    let err = closed
        .with_markdown(Markdown::content("content"))
        .unwrap_err();
    assert!(err.to_string().contains("/properties/n"), "{err}");
}

fn run<T: StructuredOutput>(provider: &ReplayProvider) -> structured_runtime::Structured<T> {
    let mut request = ChatRequest::user("Describe the change.");
    request.max_tokens = Some(800);
    block_on(run_structured::<T, _>(
        provider,
        &request,
        &RunConfig::default(),
    ))
    .unwrap_or_else(|e| panic!("{}: {e}", T::schema().name()))
}

/// One run per mode: schema enforced (the JSON), forced tool (the tool's input) and prompt guided
/// (plain markdown, taken whole: `field` holds `expected`).
fn runs_in_each_mode<T: StructuredOutput + Serialize>(
    json: &str,
    markdown: &str,
    field: &str,
    expected: &str,
) {
    let name = T::schema().name();
    let replay = |kind, model, replies: &[&str]| {
        let script = replies
            .iter()
            .map(|r| Reply::Answer(r.to_string()))
            .collect();
        ReplayProvider::new(kind, model, name, script)
    };

    let enforced = replay(ProviderKind::OpenAiChat, "gpt-4o", &[json]);
    let out = run::<T>(&enforced);
    assert_eq!(
        (out.mode, out.provenance, out.attempts),
        (StructuredOutputMode::SchemaEnforced, Provenance::Clean, 1),
        "{name}"
    );
    let format = &enforced.sent()[0]["response_format"]["json_schema"];
    assert_eq!(
        (&format["name"], &format["strict"]),
        (&json!(name), &json!(true))
    );
    assert_eq!(
        format["schema"]["required"],
        T::schema().schema()["required"]
    );

    let tool = replay(ProviderKind::Anthropic, "claude-3-5-haiku-latest", &[json]);
    let out = run::<T>(&tool);
    assert_eq!(
        (out.mode, out.provenance),
        (StructuredOutputMode::ToolUseWorkaround, Provenance::Clean),
        "{name}"
    );
    assert_eq!(tool.sent()[0]["tool_choice"]["name"], name);

    let guided = replay(ProviderKind::Passthrough, "local-7b", &[markdown]);
    let out = run::<T>(&guided);
    assert_eq!(
        (out.mode, out.provenance, out.attempts),
        (StructuredOutputMode::PromptGuided, Provenance::Heuristic, 1),
        "{name}"
    );
    assert!(out
        .warnings
        .iter()
        .any(|w| matches!(w, Warning::WholeAnswer { .. })));
    assert_eq!(content_of(&out.value, field), expected, "{name}");
    // The system message is the markdown guidance, not a schema.
    let system = &guided.sent()[0]["messages"][0];
    assert_eq!(system["role"], "system");
    assert_eq!(system["content"], T::prompt_guidance());

    // Strict reading, prompt guided: plain markdown is refused and re-asked; the JSON is taken.
    let strict = replay(ProviderKind::Passthrough, "local-7b", &[markdown, json]);
    let config = RunConfig {
        parse: ParseOptions::strict(),
        ..RunConfig::default()
    };
    let out = block_on(run_structured::<T, _>(
        &strict,
        &ChatRequest::user("Describe it."),
        &config,
    ))
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(
        (out.attempts, out.provenance),
        (2, Provenance::Clean),
        "{name}"
    );
}

#[test]
fn each_wrapper_runs_in_each_mode() {
    fn wrapper<T: StructuredOutput + Serialize>(markdown: &str) {
        let json = json!({ "content": markdown }).to_string();
        runs_in_each_mode::<T>(&json, markdown, "content", markdown.trim());
    }
    wrapper::<MarkdownPullRequest>(PULL_REQUEST);
    wrapper::<MarkdownChangelog>(CHANGELOG);
    wrapper::<MarkdownReleaseNotes>(RELEASE_NOTES);
    wrapper::<MarkdownReview>(REVIEW);
    let title = "Analyse large changesets in parallel";
    let body = "Each subagent has its own context window.";
    let json = json!({"emoji": null, "title": title, "message": body}).to_string();
    runs_in_each_mode::<CommitMessage>(&json, &format!("{title}\n\n{body}\n"), "message", body);
}

#[test]
fn an_empty_answer_is_re_asked_without_asking_for_json() {
    let name = MarkdownReview::schema().name();
    let script = vec![Reply::Answer("  ".into()), Reply::Answer(REVIEW.into())];
    let provider = ReplayProvider::new(ProviderKind::Passthrough, "local-7b", name, script);
    let out = run::<MarkdownReview>(&provider);
    assert_eq!((out.attempts, out.provenance), (2, Provenance::Heuristic));
    assert_eq!(out.value.content, REVIEW.trim());
    let reask = &provider.sent()[1]["messages"];
    let last = reask.as_array().unwrap().last().unwrap();
    assert_eq!(
        last["content"],
        "Your answer was empty. Answer as instructed."
    );
}

/// Streaming free text: a markdown wrapper answered in plain Markdown holds no value until the
/// answer ends, so its text is given as it arrives (`StreamEvent::Text`), piece by piece, and
/// the pieces are the answer; the run ends with the wrapper read from them.
#[test]
fn a_markdown_answer_streams_its_text_as_it_arrives() {
    use common::streaming::StreamingOpenAi;
    use structured_runtime::run::{Ask, StreamEvent};
    let answer = "Share one codec path across providers\n\nEvery provider now reads its body through one codec.\n";
    let provider = StreamingOpenAi(answer.to_owned());
    let config = RunConfig {
        mode: Some(StructuredOutputMode::PromptGuided),
        ..RunConfig::default()
    };
    let request = ChatRequest::user("Write the commit message.");
    let mut pieces: Vec<String> = Vec::new();
    let mut partials_before_the_end = 0;
    let out = block_on(
        Ask::new(&provider, &request)
            .config(&config)
            .stream(|event| match event {
                StreamEvent::Text(text) => pieces.push(text.to_owned()),
                StreamEvent::Partial { .. } if pieces.concat().len() < answer.len() => {
                    partials_before_the_end += 1
                }
                _ => {}
            })
            .typed::<CommitMessage>(),
    )
    .unwrap();
    assert!(pieces.len() > 5, "{pieces:?}");
    assert_eq!(pieces.concat(), answer);
    assert_eq!(
        partials_before_the_end, 0,
        "plain Markdown shows no value before it ends"
    );
    assert_eq!(out.value.title, "Share one codec path across providers");
    assert_eq!(
        out.value.message,
        "Every provider now reads its body through one codec."
    );
}

/// Plain text as a first-class answer: with structured output off, a markdown wrapper takes the
/// answer whole (no `NoProseReader`: it needs no keywords to read prose), for a derived type and
/// for its schema given at run time.
#[test]
fn a_markdown_wrapper_runs_with_structured_output_off() {
    use common::scripted::{openai_text, Scripted};
    use structured_runtime::run::config::StructuredOutputsConfig;
    let config = RunConfig {
        outputs: StructuredOutputsConfig {
            enabled: false,
            ..StructuredOutputsConfig::default()
        },
        ..RunConfig::default()
    };
    let answer =
        "Share one codec path across providers\n\nEvery provider reads its body through one codec.";
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_text(answer)],
    );
    let out = block_on(run_structured::<CommitMessage, _>(
        &p,
        &ChatRequest::user("Write the commit message."),
        &config,
    ))
    .unwrap();
    assert_eq!(out.mode, StructuredOutputMode::None);
    assert_eq!(out.value.title, "Share one codec path across providers");
    assert!(p.body(0).get("response_format").is_none());

    let schema = CommitMessage::schema();
    let p = Scripted::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        vec![openai_text(answer)],
    );
    let out = block_on(structured_runtime::run_value(
        &p,
        schema,
        &ChatRequest::user("Write the commit message."),
        &config,
    ))
    .unwrap();
    assert_eq!(out.value["title"], "Share one codec path across providers");
}

/// Plain text as a first-class answer (a design-document requirement): a bare `String` runs
/// through `run_structured` in every mode. Prompt guided it asks for plain text and takes the
/// answer exactly as written (`Clean`, nothing trimmed); a provider that enforces schemas is sent
/// the string wrapped in an object and its answer is read back to the string; with structured
/// output off the text is the value.
#[test]
fn plain_text_is_a_first_class_answer_a_bare_string_runs() {
    let replay = |kind, model, answer: &str| {
        ReplayProvider::new(kind, model, "text", vec![Reply::Answer(answer.to_owned())])
    };
    let answer = "Ship it on Friday.\n\n{\"not\": \"json to read\"}\n";
    let guided = replay(ProviderKind::Passthrough, "local-7b", answer);
    let out = run::<String>(&guided);
    assert_eq!(
        (out.mode, out.provenance, out.value.as_str()),
        (
            StructuredOutputMode::PromptGuided,
            Provenance::Clean,
            answer
        )
    );
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    assert_eq!(
        guided.sent()[0]["messages"][0]["content"],
        "Reply in plain text only: no JSON."
    );

    let enforced = replay(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        r#"{"value": "Ship it on Friday."}"#,
    );
    let out = run::<String>(&enforced);
    assert_eq!(
        (out.mode, out.provenance, out.value.as_str()),
        (
            StructuredOutputMode::SchemaEnforced,
            Provenance::Clean,
            "Ship it on Friday."
        )
    );
    let sent = &enforced.sent()[0]["response_format"]["json_schema"]["schema"];
    assert_eq!(sent["properties"]["value"]["type"], "string");

    let off = RunConfig {
        outputs: structured_runtime::run::config::StructuredOutputsConfig {
            enabled: false,
            ..Default::default()
        },
        ..RunConfig::default()
    };
    let plain = replay(ProviderKind::OpenAiChat, "gpt-4o", "Friday.");
    let out = block_on(run_structured::<String, _>(
        &plain,
        &ChatRequest::user("When?"),
        &off,
    ))
    .unwrap();
    assert_eq!(
        (out.value.as_str(), out.provenance),
        ("Friday.", Provenance::Clean)
    );
    assert!(plain.sent()[0].get("response_format").is_none());
    // Strict reading takes it too: the value is the answer as written.
    assert!(parse_response::<String>("Friday.", StructuredOutputMode::None).is_ok());
    assert!(Reading::new(StructuredOutputMode::None)
        .options(&ParseOptions::strict())
        .typed::<String>("Friday.")
        .is_ok());
    // An empty answer is no answer.
    assert!(matches!(
        parse_response::<String>("", StructuredOutputMode::PromptGuided),
        Err(ParseError::NotFound { .. })
    ));
}

/// What a dispatching subsystem asks for.
#[derive(Debug, PartialEq, serde::Deserialize, StructuredOutput)]
#[serde(untagged)]
enum Dispatch {
    /// Call a tool.
    Call { tool: String, query: String },
    /// Hand the case to a person.
    Escalate { team: String },
    /// Answer the user in words.
    #[markdown]
    Say(String),
}

/// A dispatch enum with a plain-text variant beside structured ones: JSON for a structured
/// variant is that variant (as any answer is read); an answer that is not JSON for it is the
/// plain-text variant, trimmed, `Heuristic` with `WholeAnswer` (strict reading refuses it); a
/// JSON string is the plain-text variant as written. It runs through `run_structured`.
#[test]
fn a_dispatch_enum_with_a_plain_text_variant_runs() {
    let prompt = StructuredOutputMode::PromptGuided;
    let call =
        parse_response::<Dispatch>(r#"{"tool": "search", "query": "refund policy"}"#, prompt)
            .unwrap();
    assert_eq!(
        (call.value, call.provenance),
        (
            Dispatch::Call {
                tool: "search".into(),
                query: "refund policy".into()
            },
            Provenance::Clean
        )
    );
    let fenced =
        parse_response::<Dispatch>("Routing it:\n```json\n{\"team\": \"billing\"}\n```", prompt)
            .unwrap();
    assert_eq!(
        fenced.value,
        Dispatch::Escalate {
            team: "billing".into()
        }
    );
    assert_eq!(fenced.provenance, Provenance::Extracted);

    let words = parse_response::<Dispatch>(
        "  Refunds take five days; the policy quotes {\"days\": 5}.\n",
        prompt,
    )
    .unwrap();
    assert_eq!(
        words.value,
        Dispatch::Say("Refunds take five days; the policy quotes {\"days\": 5}.".into())
    );
    assert_eq!(words.provenance, Provenance::Heuristic);
    assert!(matches!(
        &words.warnings[..],
        [Warning::WholeAnswer { content, title: None }] if content.is_root()
    ));
    assert!(Reading::new(prompt)
        .options(&ParseOptions::strict())
        .typed::<Dispatch>("Refunds take five days.")
        .is_err());
    let quoted = parse_response::<Dispatch>(r#""Refunds take five days.""#, prompt).unwrap();
    assert_eq!(
        (quoted.value, quoted.provenance),
        (
            Dispatch::Say("Refunds take five days.".into()),
            Provenance::Clean
        )
    );
    // JSON that fits no structured variant is an error a re-ask can fix, not words.
    assert!(parse_response::<Dispatch>(r#"{"tool": 3}"#, prompt).is_err());
    // The guidance sketches the structured variants and offers plain text beside them.
    let guidance = Dispatch::prompt_guidance();
    assert!(guidance.contains("\"tool\": string"), "{guidance}");
    assert!(
        guidance.ends_with("Or, to answer in words, reply in plain text only: no JSON."),
        "{guidance}"
    );

    let guided = ReplayProvider::new(
        ProviderKind::Passthrough,
        "local-7b",
        Dispatch::schema().name(),
        vec![Reply::Answer(
            "I can help with that: refunds take five days.".into(),
        )],
    );
    let out = run::<Dispatch>(&guided);
    assert_eq!(
        out.value,
        Dispatch::Say("I can help with that: refunds take five days.".into())
    );
    // A run-time schema takes the same reading with `Markdown::text()`; a root that takes no
    // string cannot.
    let any_root = structured_runtime::SchemaLimits {
        object_root: false,
        ..Default::default()
    };
    let schema =
        ResponseSchema::with_limits("dispatch", Dispatch::schema().schema().clone(), &any_root)
            .unwrap()
            .with_markdown(Markdown::text())
            .unwrap();
    let read = parse_value("Five days.", &schema, &ParseOptions::default()).unwrap();
    assert_eq!(read.value, json!("Five days."));
    let object = ResponseSchema::new(
        "o",
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
    )
    .unwrap();
    let err = object.with_markdown(Markdown::text()).unwrap_err();
    assert!(err.to_string().contains("must take a string"), "{err}");
}

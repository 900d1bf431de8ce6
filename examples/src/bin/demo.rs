//! The main demo: HeartbeatDecision and DaimonAppraisal through the retry runner in all three
//! modes, against a provider that replays recorded answers: one clean, one needing repair, one
//! failing validation and fixed on the re-ask, one truncated, one refused. For each run it prints
//! the mode, the attempts, the value, how it was obtained and every warning.
//!
//! With `STRUCTURED_PROVIDER` and `STRUCTURED_MODEL` set (and `STRUCTURED_API_KEY`,
//! `STRUCTURED_BASE_URL` as the endpoint needs), the same two types are asked of that endpoint
//! instead, in every mode it supports, and reported the same way:
//! `eval "$(scripts/local-model start)" && cargo run -p structured-examples --bin demo` asks the
//! local model (`scripts/local-model`); `STRUCTURED_PROVIDER=openai STRUCTURED_MODEL=gpt-4o
//! STRUCTURED_API_KEY=... cargo run -p structured-examples --bin demo` asks OpenAI. Every request
//! carries a token limit (`STRUCTURED_MAX_TOKENS`, 384 when unset).
//!
//! Run: `cargo run -p structured-examples --bin demo`

use std::fmt::Debug;

use structured_examples::replay::{block_on, ReplayProvider, Reply};
use structured_examples::{live, DaimonAppraisal, HeartbeatDecision};
use structured_runtime::http::HttpProvider;
use structured_runtime::provider::capabilities::ProviderKind;
use structured_runtime::provider::wire::ChatRequest;
use structured_runtime::run::{run_structured, AttemptResult, Provider, RunConfig, RunError};
use structured_runtime::{StructuredOutput, Warning};

/// Recorded answers for one type: clean JSON, the same needing repair, one out of range, and a
/// cut-off start.
struct Answers {
    clean: &'static str,
    sloppy: &'static str,
    invalid: &'static str,
    cut: &'static str,
}

const HEARTBEAT: Answers = Answers {
    clean: r#"{"severity": "moderate", "action": "hedge", "confidence": 0.72, "rationale": "Funding flipped negative while spot volume fell.", "signals": [{"source": "price", "description": "Spot down 4.1% in 30 minutes", "magnitude": 0.61}], "escalate": false}"#,
    sloppy: r#"{severity: 'moderate', action: 'hedge', confidence: 0.72, rationale: 'Funding flipped negative while spot volume fell.', signals: [{source: 'price', description: 'Spot down 4.1% in 30 minutes', magnitude: 0.61},], escalate: False}"#,
    invalid: r#"{"severity": "severe", "action": "hedge", "confidence": 1.4, "rationale": "Funding flipped.", "signals": [], "escalate": false}"#,
    cut: r#"{"severity": "moderate", "action": "hedge", "confidence": 0.72, "rationale": "Funding flipped neg"#,
};

const DAIMON: Answers = Answers {
    clean: r#"{"pleasure": -0.3, "arousal": 0.6, "dominance": -0.2, "primary_emotion": "fear", "secondary_emotion": "surprise", "trigger": "a 4% drop in 30 minutes", "memory_bias": "recent losses"}"#,
    sloppy: r#"{"pleasure": -.3, "arousal": 0.6, "dominance": -0.2, "primary_emotion": "fear", "secondary_emotion": None, "trigger": "a 4% drop in 30 minutes" "memory_bias": "recent losses",}"#,
    invalid: r#"{"pleasure": -1.8, "arousal": 0.6, "dominance": -0.2, "primary_emotion": "dread", "secondary_emotion": null, "trigger": "a 4% drop", "memory_bias": "recent losses"}"#,
    cut: r#"{"pleasure": -0.3, "arousal": 0.6, "domin"#,
};

/// The three ways of asking, each picked by the runner from a provider and model.
const MODES: [(&str, ProviderKind, &str); 3] = [
    ("OpenAI gpt-4o", ProviderKind::OpenAiChat, "gpt-4o"),
    (
        "Anthropic claude-3-5-haiku (no native JSON outputs)",
        ProviderKind::Anthropic,
        "claude-3-5-haiku-latest",
    ),
    (
        "a local model behind a gateway",
        ProviderKind::Passthrough,
        "local-7b",
    ),
];

const HEARTBEAT_QUESTION: &str = "Spot fell 4.1% in 30 minutes against a flat index, volume is \
    38% under its 7-day median and a fee-switch proposal reached quorum. What should the \
    heartbeat do about the ETH vault?";
const DAIMON_QUESTION: &str = "Appraise a 4% drop in 30 minutes in a vault you manage.";

fn main() {
    if std::env::var_os("STRUCTURED_PROVIDER").is_some() {
        live();
        return;
    }
    demo::<HeartbeatDecision>(&HEARTBEAT, HEARTBEAT_QUESTION);
    demo::<DaimonAppraisal>(&DAIMON, DAIMON_QUESTION);
}

/// The two types asked of the endpoint the environment names, in each mode it supports.
fn live() {
    let provider = match HttpProvider::from_env() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("cannot use the configured endpoint: {e}");
            std::process::exit(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start a runtime: {e}");
            std::process::exit(2);
        }
    };
    let max_tokens = live::max_tokens(384);
    println!(
        "== {:?} {} at {} (at most {max_tokens} tokens an answer)",
        provider.kind(),
        provider.model(),
        provider.endpoint()
    );
    for mode in live::modes(&provider) {
        let ask = |name: &str, question: &str| {
            println!("\n== {name}, {}\n", mode.label);
            let mut request = ChatRequest::user(question);
            request.max_tokens = Some(max_tokens);
            request
        };
        let request = ask("HeartbeatDecision", HEARTBEAT_QUESTION);
        let run = run_structured::<HeartbeatDecision, _>(&mode.provider, &request, &mode.config);
        report("the model's answer", runtime.block_on(run));
        let request = ask("DaimonAppraisal", DAIMON_QUESTION);
        let run = run_structured::<DaimonAppraisal, _>(&mode.provider, &request, &mode.config);
        report("the model's answer", runtime.block_on(run));
    }
}

fn demo<T: StructuredOutput + Debug>(answers: &Answers, question: &str) {
    let name = T::schema().name();
    for (label, kind, model) in MODES {
        println!("\n== {name} via {label}\n");
        // A model that is only prompted writes prose around its JSON.
        let prompted = kind == ProviderKind::Passthrough;
        let say = |json: &str| {
            if prompted {
                format!(
                    "Here is my assessment.\n```json\n{json}\n```\nLet me know if you need more."
                )
            } else {
                json.to_owned()
            }
        };
        let scenarios = [
            ("clean", vec![Reply::Answer(say(answers.clean))]),
            ("needs repair", vec![Reply::Answer(say(answers.sloppy))]),
            (
                "invalid, fixed on re-ask",
                vec![
                    Reply::Answer(say(answers.invalid)),
                    Reply::Answer(say(answers.clean)),
                ],
            ),
            ("truncated", vec![Reply::Truncated(answers.cut.to_owned())]),
            (
                "refused",
                vec![Reply::Refused(
                    "I can't help with trading decisions.".to_owned(),
                )],
            ),
        ];
        for (scenario, script) in scenarios {
            let provider = ReplayProvider::new(kind, model, name, script);
            let result = block_on(run_structured::<T, _>(
                &provider,
                &ChatRequest::user(question),
                &RunConfig::default(),
            ));
            report(scenario, result);
        }
    }
}

fn report<T: Debug>(
    scenario: &str,
    result: Result<structured_runtime::run::Structured<T>, RunError>,
) {
    match result {
        Ok(out) => {
            println!(
                "{scenario}: {:?}, {} attempt(s), {:?}",
                out.mode, out.attempts, out.provenance
            );
            println!("  value: {:?}", out.value);
            // Repairs are listed one per fix; here they are counted by kind.
            let mut repairs: Vec<(String, usize)> = Vec::new();
            for warning in &out.warnings {
                match warning {
                    Warning::Repair(r) => {
                        match repairs.iter_mut().find(|(k, _)| *k == r.kind.to_string()) {
                            Some((_, n)) => *n += 1,
                            None => repairs.push((r.kind.to_string(), 1)),
                        }
                    }
                    other => println!("  warning: {other}"),
                }
            }
            for (kind, n) in repairs {
                println!("  repair: {kind} (×{n})");
            }
            if out.attempts > 1 {
                ledger(&out.ledger);
            }
        }
        Err(e) => {
            let attempts = e.ledger().len();
            println!("{scenario}: error after {attempts} attempt(s): {e}");
            if attempts > 1 {
                ledger(e.ledger());
            }
        }
    }
}

/// What each request came to.
fn ledger(attempts: &[structured_runtime::run::Attempt]) {
    for (i, attempt) in attempts.iter().enumerate() {
        match &attempt.result {
            AttemptResult::Invalid(violations) => {
                let listed = violations.to_string().replace('\n', "\n    ");
                let then = if i + 1 < attempts.len() {
                    "re-asked with "
                } else {
                    ""
                };
                println!("  attempt {}: {then}{listed}", i + 1)
            }
            other => println!("  attempt {}: {other:?}", i + 1),
        }
    }
}

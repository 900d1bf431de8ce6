//! An evaluation you can rerun: asks the endpoint the environment names (the local model, with
//! `eval "$(scripts/local-model start)"`) N prompts for `HeartbeatDecision`, `DaimonAppraisal`
//! and `TicketTriage` (an enum with data, a map keyed by an enum, an email, string lengths) in
//! each mode the endpoint supports and, for llama.cpp, in each request form (a GBNF `grammar`,
//! the default, and `json_schema`), once with the full pipeline and once with repair, coercion
//! and prose reading off (`ParseOptions::strict()`; `--full-only` skips it), and prints a table:
//! how many values were valid exactly as first written, valid in the first answer after a change
//! reported as a warning (extracted, repaired, coerced), valid after re-asks, and how many runs
//! failed and how; with the tokens and requests each valid value cost.
//!
//! Run: `eval "$(scripts/local-model start)" && cargo run --release -p structured-examples --bin eval -- 30`
//! (N defaults to 30; `STRUCTURED_MAX_TOKENS` sets the limit per answer, 512 when unset;
//! `--temperature T` sends that sampling temperature, the server's default when absent;
//! `--only grammar|json_schema|prompt` runs those rows alone).

use std::collections::BTreeMap;
use std::time::Instant;

use structured_examples::{live, DaimonAppraisal, HeartbeatDecision, TicketTriage};
use structured_runtime::http::HttpProvider;
use structured_runtime::provider::capabilities::ProviderKind;
use structured_runtime::provider::wire::LlamaCppRequest;
use structured_runtime::run::{RunConfig, RunError, RunErrorKind, Structured};
use structured_runtime::{
    run_structured, ChatRequest, ParseOptions, Provenance, Provider, StructuredOutput, Validate,
};

/// What one run came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Verdict {
    /// Valid exactly as the model wrote it: the whole answer was the JSON.
    AsWritten,
    /// Valid in the first answer after a change each reported as a warning: JSON taken out of
    /// prose or a fence, syntax repaired, values coerced, or the value read from prose.
    Fixed,
    /// Valid after one or more re-asks.
    Reasked,
    /// No valid value: the error's kind.
    Failed(&'static str),
}

/// Counts for one row of the table.
#[derive(Default)]
struct Row {
    runs: usize,
    verdicts: BTreeMap<Verdict, usize>,
    tokens: u64,
    /// Output tokens of every answer.
    output_tokens: u64,
    /// Output tokens of the answers whose value was returned: the value as written.
    value_tokens: u64,
    requests: usize,
    /// Seconds spent.
    seconds: f64,
    /// Values returned that fail their own `Validate`: the promise says 0.
    not_valid: usize,
}

impl Row {
    fn add<T: Validate>(&mut self, result: &Result<Structured<T>, RunError>) {
        self.runs += 1;
        let (verdict, ledger) = match result {
            Ok(out) => {
                if out.value.validate().is_err() {
                    self.not_valid += 1;
                }
                let verdict = if out.attempts > 1 {
                    Verdict::Reasked
                } else if out.provenance == Provenance::Clean {
                    Verdict::AsWritten
                } else {
                    Verdict::Fixed
                };
                self.value_tokens += out
                    .ledger
                    .last()
                    .and_then(|a| a.usage)
                    .map_or(0, |u| u.output_tokens);
                (verdict, &out.ledger[..])
            }
            Err(e) => {
                let kind = match &e.kind {
                    RunErrorKind::RetriesExhausted { .. } => "invalid after re-asks",
                    RunErrorKind::NoStructuredOutput { .. } => "no value in any answer",
                    RunErrorKind::Truncated { .. } => "truncated",
                    RunErrorKind::Refused { .. } => "refused",
                    RunErrorKind::Filtered { .. } => "filtered",
                    RunErrorKind::Transport { .. } => "transport",
                    RunErrorKind::Provider { .. } => "not the provider's shape",
                    RunErrorKind::InvalidSchema(_) => "schema refused",
                    _ => "other",
                };
                (Verdict::Failed(kind), e.ledger())
            }
        };
        *self.verdicts.entry(verdict).or_default() += 1;
        self.requests += ledger.len();
        self.tokens += ledger
            .iter()
            .filter_map(|a| a.usage)
            .map(|u| u.input_tokens + u.output_tokens)
            .sum::<u64>();
        self.output_tokens += ledger
            .iter()
            .filter_map(|a| a.usage)
            .map(|u| u.output_tokens)
            .sum::<u64>();
    }

    fn valid(&self) -> usize {
        self.verdicts
            .iter()
            .filter(|(v, _)| !matches!(v, Verdict::Failed(_)))
            .map(|(_, n)| n)
            .sum()
    }
}

const ASSETS: [&str; 6] = [
    "ETH",
    "BTC",
    "SOL",
    "an LP token",
    "a stablecoin pool",
    "ARB",
];
const MOVES: [&str; 5] = [
    "fell 4% in 30 minutes",
    "rose 7% in an hour",
    "is flat but volume tripled",
    "dropped 12% overnight",
    "lost its peg by 0.8%",
];

fn heartbeat_prompt(i: usize) -> String {
    let asset = ASSETS[i % ASSETS.len()];
    let moved = MOVES[(i / ASSETS.len()) % MOVES.len()];
    format!(
        "{asset} {moved} while funding is {} and a governance vote is {}. What should the \
         heartbeat do about the vault? Answer with the decision.",
        if i.is_multiple_of(2) {
            "negative"
        } else {
            "positive"
        },
        if i.is_multiple_of(3) {
            "pending"
        } else {
            "settled"
        }
    )
}

fn daimon_prompt(i: usize) -> String {
    let asset = ASSETS[i % ASSETS.len()];
    let moved = MOVES[(i / ASSETS.len()) % MOVES.len()];
    format!("Appraise how it feels that {asset} in a vault you manage {moved}.")
}

fn ticket_prompt(i: usize) -> String {
    const NAMES: [&str; 5] = ["ana", "bo", "chen", "dmitri", "eve"];
    const ISSUES: [&str; 6] = [
        "was charged twice for the March invoice and wants the money back",
        "cannot log in since resetting the password",
        "reports the dashboard has been down for an hour",
        "asks how to change the plan to yearly billing",
        "says the export button does nothing in Firefox",
        "wants the account closed and the data deleted",
    ];
    let name = NAMES[i % NAMES.len()];
    let issue = ISSUES[(i / NAMES.len()) % ISSUES.len()];
    format!("Triage this support ticket. From {name}@example.com: the customer {issue}.")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(30);
    let full_only = args.iter().any(|a| a == "--full-only");
    let only: Option<String> = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .cloned();
    let temperature: Option<f64> = args
        .iter()
        .position(|a| a == "--temperature")
        .and_then(|i| args.get(i + 1))
        .and_then(|t| t.parse().ok());
    let max_tokens = live::max_tokens(512);
    let provider = match HttpProvider::from_env() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("set the endpoint first (`eval \"$(scripts/local-model start)\"`): {e}");
            std::process::exit(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| {
            eprintln!("cannot start a runtime: {e}");
            std::process::exit(2)
        });
    let started = Instant::now();
    let mut rows: Vec<(String, Row)> = Vec::new();
    let pipelines: &[(&str, ParseOptions)] = if full_only {
        &[("full pipeline", ParseOptions::default())]
    } else {
        &[
            ("full pipeline", ParseOptions::default()),
            ("repair off", ParseOptions::strict()),
        ]
    };
    for mode in live::modes(&provider) {
        // A schema-enforced request to llama.cpp goes in each form; other modes in one.
        let forms: &[Option<LlamaCppRequest>] =
            if mode.label == "schema enforced" && provider.kind() == ProviderKind::LlamaCpp {
                &[
                    Some(LlamaCppRequest::Grammar),
                    Some(LlamaCppRequest::JsonSchema),
                ]
            } else {
                &[None]
            };
        for form in forms {
            for (pipeline, parse) in pipelines {
                let mut config = RunConfig {
                    parse: parse.clone(),
                    transport_retries: 1,
                    ..mode.config.clone()
                };
                if let Some(form) = form {
                    config.llama_cpp_request = *form;
                }
                if let Some(t) = temperature {
                    config.sampling = Some(serde_json::json!({ "temperature": t }));
                }
                let form = form.map_or("–", LlamaCppRequest::name);
                let row_name = if mode.label == "schema in the prompt" {
                    "prompt"
                } else {
                    form
                };
                if only.as_deref().is_some_and(|o| o != row_name) {
                    continue;
                }
                let provider = &mode.provider;
                let asks = Asks { n, max_tokens };
                let rows_here = [
                    (
                        "HeartbeatDecision",
                        asks.measure::<HeartbeatDecision>(
                            &runtime,
                            provider,
                            &config,
                            heartbeat_prompt,
                        ),
                    ),
                    (
                        "DaimonAppraisal",
                        asks.measure::<DaimonAppraisal>(&runtime, provider, &config, daimon_prompt),
                    ),
                    (
                        "TicketTriage",
                        asks.measure::<TicketTriage>(&runtime, provider, &config, ticket_prompt),
                    ),
                ];
                for (name, row) in rows_here {
                    eprintln!(
                        "{}, {form}, {pipeline}, {name}: {} of {} valid ({:.0?} so far)",
                        mode.label,
                        row.valid(),
                        row.runs,
                        started.elapsed()
                    );
                    rows.push((
                        format!("{} | {form} | {pipeline} | {name}", mode.label),
                        row,
                    ));
                }
            }
        }
    }
    print_table(&provider, n, max_tokens, &rows);
    eprintln!("done in {:.0?}", started.elapsed());
}

/// How many prompts, and the token limit each request carries.
#[derive(Clone, Copy)]
struct Asks {
    n: usize,
    max_tokens: u32,
}

impl Asks {
    /// `n` runs for `T`, the `i`th asking `question(i)`.
    fn measure<T: StructuredOutput>(
        self,
        runtime: &tokio::runtime::Runtime,
        provider: &HttpProvider,
        config: &RunConfig,
        question: fn(usize) -> String,
    ) -> Row {
        let mut row = Row::default();
        for i in 0..self.n {
            let mut request = ChatRequest::user(question(i));
            request.max_tokens = Some(self.max_tokens);
            let started = Instant::now();
            let result = runtime.block_on(run_structured::<T, _>(provider, &request, config));
            row.seconds += started.elapsed().as_secs_f64();
            row.add(&result);
        }
        row
    }
}

fn print_table(provider: &HttpProvider, n: usize, max_tokens: u32, rows: &[(String, Row)]) {
    println!(
        "{:?} `{}`, {n} prompts per row, at most {max_tokens} tokens an answer, one re-ask\n",
        provider.kind(),
        provider.model()
    );
    println!("| mode | request form | pipeline | type | valid as written | valid with warnings (extracted, repaired, coerced) | valid after re-asks | failed | tokens per valid value (prompt and answer) | answer tokens per valid value | the value's own tokens | requests per valid value | seconds per run | returned but not valid |");
    println!("|---|---|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|");
    for (label, row) in rows {
        let count = |v: Verdict| row.verdicts.get(&v).copied().unwrap_or(0);
        let failed: Vec<String> = row
            .verdicts
            .iter()
            .filter_map(|(v, n)| match v {
                Verdict::Failed(kind) => Some(format!("{n} {kind}")),
                _ => None,
            })
            .collect();
        let valid = row.valid();
        let per = |x: f64| {
            if valid == 0 {
                "–".to_owned()
            } else {
                format!("{:.0}", x / valid as f64)
            }
        };
        println!(
            "| {label} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} | {} |",
            count(Verdict::AsWritten),
            count(Verdict::Fixed),
            count(Verdict::Reasked),
            if failed.is_empty() {
                "0".to_owned()
            } else {
                failed.join(", ")
            },
            per(row.tokens as f64),
            per(row.output_tokens as f64),
            per(row.value_tokens as f64),
            per(row.requests as f64),
            row.seconds / row.runs.max(1) as f64,
            row.not_valid,
        );
    }
}

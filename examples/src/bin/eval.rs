//! An evaluation you can rerun: asks the endpoint the environment names (the local model, with
//! `eval "$(scripts/local-model start)"`) N prompts for `HeartbeatDecision` and
//! `DaimonAppraisal` in each mode the endpoint supports, once with the full pipeline and once
//! with repair, coercion and prose reading off (`ParseOptions::strict()`), and prints a table:
//! how many values were valid exactly as first written, valid in the first answer after a change
//! reported as a warning (extracted, repaired, coerced), valid after re-asks, and how many runs
//! failed and how; with the tokens and requests each valid value cost.
//!
//! Run: `eval "$(scripts/local-model start)" && cargo run --release -p structured-examples --bin eval -- 30`
//! (N defaults to 30; `STRUCTURED_MAX_TOKENS` sets the limit per answer, 512 when unset).

use std::collections::BTreeMap;
use std::time::Instant;

use structured_examples::{live, DaimonAppraisal, HeartbeatDecision};
use structured_runtime::http::HttpProvider;
use structured_runtime::run::{RunConfig, RunError, Structured};
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
    requests: usize,
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
                (verdict, &out.ledger[..])
            }
            Err(e) => {
                let kind = match e {
                    RunError::RetriesExhausted { .. } => "invalid after re-asks",
                    RunError::NoStructuredOutput { .. } => "no value in any answer",
                    RunError::Truncated { .. } => "truncated",
                    RunError::Refused { .. } => "refused",
                    RunError::Filtered { .. } => "filtered",
                    RunError::Transport { .. } => "transport",
                    RunError::Provider { .. } => "not the provider's shape",
                    RunError::InvalidSchema(_) => "schema refused",
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

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(30);
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
    for mode in live::modes(&provider) {
        for (pipeline, parse) in [
            ("full pipeline", ParseOptions::default()),
            ("repair off", ParseOptions::strict()),
        ] {
            let config = RunConfig {
                parse,
                transport_retries: 1,
                ..mode.config.clone()
            };
            let provider = &mode.provider;
            let asks = Asks { n, max_tokens };
            let heartbeat =
                asks.measure::<HeartbeatDecision>(&runtime, provider, &config, heartbeat_prompt);
            let daimon =
                asks.measure::<DaimonAppraisal>(&runtime, provider, &config, daimon_prompt);
            for (name, row) in [
                ("HeartbeatDecision", heartbeat),
                ("DaimonAppraisal", daimon),
            ] {
                eprintln!(
                    "{}, {pipeline}, {name}: {} of {} valid ({:.0?} so far)",
                    mode.label,
                    row.valid(),
                    row.runs,
                    started.elapsed()
                );
                rows.push((format!("{} | {pipeline} | {name}", mode.label), row));
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
            row.add(&runtime.block_on(run_structured::<T, _>(provider, &request, config)));
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
    println!("| mode | pipeline | type | valid as written | valid with warnings (extracted, repaired, coerced) | valid after re-asks | failed | tokens per valid value | requests per valid value | returned but not valid |");
    println!("|---|---|---|---:|---:|---:|---|---:|---:|---:|");
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
            "| {label} | {} | {} | {} | {} | {} | {} | {} |",
            count(Verdict::AsWritten),
            count(Verdict::Fixed),
            count(Verdict::Reasked),
            if failed.is_empty() {
                "0".to_owned()
            } else {
                failed.join(", ")
            },
            per(row.tokens as f64),
            per(row.requests as f64),
            row.not_valid,
        );
    }
}

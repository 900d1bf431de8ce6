//! A tour of the derive: the gateway's types as strict schemas, one good and one bad model answer,
//! the prompt guidance for providers that enforce nothing, and `from_text` on an answer with no
//! JSON.
//!
//! Run: `cargo run -p structured-examples --bin tour`

use structured_examples::{all_schemas, DaimonAppraisal, HeartbeatDecision};
use structured_runtime::{FromJsonError, StructuredOutput};

const GOOD: &str = r#"{
  "severity": "moderate",
  "action": "hedge",
  "confidence": 0.72,
  "rationale": "Funding flipped negative while spot volume fell.",
  "signals": [
    {"source": "price", "description": "Spot down 4.1% in 30 minutes", "magnitude": 0.61},
    {"source": "volume", "description": "Volume 38% under the 7-day median", "magnitude": 0.44}
  ],
  "escalate": false
}"#;

const BAD: &str = r#"{
  "severity": "severe",
  "action": "hedge",
  "confidence": 1.4,
  "signals": [
    {"source": "price", "description": "Spot down 4.1%", "magnitude": 0.61},
    {"source": "volume", "description": 38, "magnitude": -0.2, "note": "extra"}
  ],
  "escalate": "no"
}"#;

const PROSE: &str = "Not critical, but the risk is high: spot fell 4% while funding flipped. \
There is no need to exit; we should hedge the position. Don't escalate yet. Confidence 70%.";

const FEELING: &str = "Pleasure of -1.4, arousal: 0.7 (dominance roughly +.2). Mostly fear.";

fn main() {
    println!("== The gateway's subsystem types as strict JSON Schemas\n");
    for schema in all_schemas() {
        let verdict = match schema.strict_preflight() {
            Ok(()) => "passes the strict preflight".to_owned(),
            Err(report) => report.to_string(),
        };
        println!("{} ({verdict})", schema.name());
    }

    let heartbeat = HeartbeatDecision::schema();
    println!(
        "\n== {}: the schema a provider receives\n",
        heartbeat.name()
    );
    match serde_json::to_string_pretty(heartbeat.schema()) {
        Ok(text) => println!("{text}"),
        Err(e) => println!("(cannot print the schema: {e})"),
    }

    println!("\n== A good answer\n\n{GOOD}\n");
    match HeartbeatDecision::from_json(GOOD) {
        Ok(decision) => println!(
            "accepted: severity {}, action {}, confidence {}, {} signals",
            decision.severity,
            decision.action,
            decision.confidence,
            decision.signals.len()
        ),
        Err(e) => println!("refused: {e}"),
    }

    println!("\n== A bad answer\n\n{BAD}\n");
    match HeartbeatDecision::from_json(BAD) {
        Ok(_) => println!("accepted (unexpected)"),
        Err(FromJsonError::Invalid(violations)) => {
            println!("refused with {} violations:", violations.len());
            for v in &violations {
                println!(
                    "  {:<24} {:<20} expected {}, found {}",
                    v.path,
                    v.rule.to_string(),
                    v.expected,
                    v.found
                );
            }
        }
        Err(other) => println!("refused: {other}"),
    }

    println!(
        "\n== Prompt guidance for a provider that enforces no schema\n\n{}",
        HeartbeatDecision::prompt_guidance()
    );

    println!("\n== An answer with no JSON at all, read by from_text\n\n{PROSE}\n");
    show_from_text::<HeartbeatDecision>(PROSE);
    println!("\n{FEELING}\n");
    show_from_text::<DaimonAppraisal>(FEELING);
}

fn show_from_text<T: StructuredOutput + std::fmt::Debug>(text: &str) {
    match T::from_text(text) {
        Ok(read) => {
            println!("value (heuristic): {:?}", read.value);
            println!("where each field came from:");
            for field in read.report.fields() {
                println!("  {field}");
            }
            for warning in read.report.warnings() {
                println!("warning: {warning}");
            }
        }
        Err(e) => println!("no value: {e}"),
    }
}

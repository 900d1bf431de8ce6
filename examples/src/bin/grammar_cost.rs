//! What a llama.cpp grammar costs to build and send: for the seed types, the ticket-triage type
//! and a 200-property schema, the grammar's size (bytes, rules) and the time to compile it
//! (median of 200 compiles, at the budget for a 512-token answer).
//!
//! Run: `cargo run --release -p structured-examples --bin grammar_cost`. With `NAME COUNT`
//! (`heartbeat`, `daimon`, `ticket` or `wide`) it only compiles that schema COUNT times, for
//! callgrind: `valgrind --tool=callgrind --callgrind-out-file=/dev/null
//! target/release/grammar_cost wide 20`, minus the `wide 0` total, over 20.

use std::time::Instant;

use serde_json::{json, Value};
use structured_examples::{DaimonAppraisal, HeartbeatDecision, TicketTriage};
use structured_runtime::provider::dialect::{grammar, GrammarBudget};
use structured_runtime::StructuredOutput;

/// 200 properties of every kind the grammar writes: bounded numbers, integers, enums,
/// strings with lengths and formats, lists.
fn wide() -> Value {
    let mut properties = serde_json::Map::new();
    for i in 0..200 {
        let schema = match i % 5 {
            0 => json!({"type": "number", "minimum": -1.5, "maximum": 99.25}),
            1 => json!({"type": "integer", "minimum": 0, "maximum": 1000}),
            2 => json!({"type": "string", "enum": ["low", "medium", "high"]}),
            3 => json!({"type": "string", "maxLength": 40}),
            _ => {
                json!({"type": "array", "items": {"type": "string", "format": "date"}, "maxItems": 3})
            }
        };
        properties.insert(format!("field_{i}"), schema);
    }
    let required: Vec<String> = properties.keys().cloned().collect();
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

fn main() {
    let budget = GrammarBudget::for_max_tokens(512);
    let wide = wide();
    let cases: [(&str, &Value); 4] = [
        ("HeartbeatDecision", HeartbeatDecision::schema().schema()),
        ("DaimonAppraisal", DaimonAppraisal::schema().schema()),
        ("TicketTriage", TicketTriage::schema().schema()),
        ("200 properties", &wide),
    ];
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [name, count] = args.as_slice() {
        let index = ["heartbeat", "daimon", "ticket", "wide"]
            .iter()
            .position(|n| n == name)
            .expect("heartbeat, daimon, ticket or wide");
        let count: usize = count.parse().expect("a count");
        let schema = cases[index].1;
        for _ in 0..count {
            std::hint::black_box(grammar(std::hint::black_box(schema), budget).ok());
        }
        return;
    }
    println!("| schema | schema bytes | grammar bytes | rules | compile (median of 200) |");
    println!("|---|---:|---:|---:|---:|");
    for (name, schema) in cases {
        let mut times = Vec::with_capacity(200);
        let mut last = None;
        for _ in 0..200 {
            let started = Instant::now();
            let g = grammar(schema, budget).expect("the grammar compiles");
            times.push(started.elapsed());
            last = Some(g);
        }
        times.sort();
        let g = last.expect("compiled");
        println!(
            "| {name} | {} | {} | {} | {:.1} µs |",
            schema.to_string().len(),
            g.text.len(),
            g.text.lines().count(),
            times[times.len() / 2].as_secs_f64() * 1e6
        );
    }
}

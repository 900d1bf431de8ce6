//! Runs one parsing path many times, for instruction counts that do not depend on machine load:
//!
//! ```text
//! cargo build --release -p structured-runtime --example from_json_cost
//! for p in limit from_json jsonschema; do
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/from_json_cost $p 20000
//! done
//! ```
//! Compare the "Collected" totals (each includes the same fixed start-up cost; run with 0 to see it).

use std::hint::black_box;

use structured_runtime::StructuredOutput;

#[path = "../benches/heartbeat.rs"]
mod heartbeat;
use heartbeat::{HeartbeatDecision, ANSWER};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_default();
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let validator =
        jsonschema::validator_for(HeartbeatDecision::schema().schema()).expect("schema compiles");
    let mut ok = 0usize;
    for _ in 0..n {
        ok += match path.as_str() {
            "limit" => serde_json::from_str::<HeartbeatDecision>(black_box(ANSWER)).is_ok(),
            "from_json" => HeartbeatDecision::from_json(black_box(ANSWER)).is_ok(),
            "jsonschema" => {
                let value: serde_json::Value =
                    serde_json::from_str(black_box(ANSWER)).expect("json");
                validator.is_valid(&value)
                    && serde_json::from_value::<HeartbeatDecision>(value).is_ok()
            }
            other => {
                eprintln!("unknown path {other:?}: use limit, from_json or jsonschema");
                std::process::exit(2);
            }
        } as usize;
    }
    println!("{ok} of {n} parsed");
}

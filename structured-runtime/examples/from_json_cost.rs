//! Runs one parsing path many times, for instruction counts that do not depend on machine load:
//!
//! ```text
//! cargo build --release -p structured-runtime --example from_json_cost
//! for p in limit hand_checked hand_checked_text from_json jsonschema limit_55k hand_checked_55k \
//!     hand_checked_text_55k from_json_55k daimon_limit daimon_hand_checked daimon_from_json \
//!     limit_zeros from_json_zeros limit_zeros_55k from_json_zeros_55k; do
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/from_json_cost $p 2000
//! done
//! ```
//! Compare the "Collected" totals (each includes the same fixed start-up cost; run with 0 to see it).
//!
//! - `limit`: `serde_json::from_str` into the same type (no check of any kind);
//! - `hand_checked`: what `from_json` checks, written by hand with serde (unknown fields refused,
//!   the word lists as Rust enums, the ranges checked after: `heartbeat::HandChecked`);
//! - `hand_checked_text`: the same with the word lists as the type declares them, `String`s
//!   checked against their lists after (`heartbeat::HandCheckedText`): serde doing what
//!   `from_json` does, into the same field types;
//! - `from_json`: `HeartbeatDecision::from_json`;
//! - `jsonschema`: a `Value`, judged by `jsonschema`, then `from_value`;
//! - `_55k`: the same on a whole valid answer of 55 KB (about 380 signals);
//! - `daimon_limit`, `daimon_hand_checked`, `daimon_from_json`: `limit`, `hand_checked_text` and
//!   `from_json` for `DaimonAppraisal` (`daimon::DaimonHandChecked`: serde doing what
//!   `from_json` checks, into the same field types);
//! - `limit_zeros`, `from_json_zeros` and their `_55k`: `limit` and `from_json` on the same
//!   answers with every float written `0.0` (a zero is a float only the text can vouch for: an
//!   underflow reads as zero too).

use std::hint::black_box;

use structured_runtime::StructuredOutput;

#[path = "../benches/daimon.rs"]
mod daimon;
#[path = "../benches/heartbeat.rs"]
mod heartbeat;
use daimon::{DaimonAppraisal, DaimonHandChecked, APPRAISAL};
use heartbeat::{valid_answer, HandChecked, HandCheckedText, HeartbeatDecision, Offsets, ANSWER};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_default();
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let validator =
        jsonschema::validator_for(HeartbeatDecision::schema().schema()).expect("schema compiles");
    // (Each call reads its text at the next of 32 offsets: `Offsets`.)
    // (The answers with zeros replace the others, not beside them: a text built for another
    // path moves the counts of this one.)
    let zeros = |text: &str| {
        text.replace("0.72", "0.0")
            .replace("0.61", "0.0")
            .replace("0.44", "0.0")
            .replace("0.35", "0.0")
    };
    // (The texts are dropped once copied to their offsets, as before the zeros were added: what
    // stays on the heap moves the 55 KB counts by a tenth.)
    let (small_at, big_at) = match path.contains("zeros") {
        true => (
            Offsets::new(&zeros(ANSWER)),
            Offsets::new(&zeros(&valid_answer(55_000))),
        ),
        false => (Offsets::new(ANSWER), Offsets::new(&valid_answer(55_000))),
    };
    let appraisal_at = Offsets::new(APPRAISAL);
    let mut ok = 0usize;
    for i in 0..n {
        let (small, big, appraisal) = (small_at.get(i), big_at.get(i), appraisal_at.get(i));
        ok += match path.as_str() {
            "limit" | "limit_zeros" => {
                serde_json::from_str::<HeartbeatDecision>(black_box(small)).is_ok()
            }
            "from_json" | "from_json_zeros" => {
                HeartbeatDecision::from_json(black_box(small)).is_ok()
            }
            "hand_checked" => {
                serde_json::from_str::<HandChecked>(black_box(small)).is_ok_and(|h| h.valid())
            }
            "hand_checked_text" => {
                serde_json::from_str::<HandCheckedText>(black_box(small)).is_ok_and(|h| h.valid())
            }
            "limit_55k" | "limit_zeros_55k" => {
                serde_json::from_str::<HeartbeatDecision>(black_box(big)).is_ok()
            }
            "hand_checked_55k" => {
                serde_json::from_str::<HandChecked>(black_box(big)).is_ok_and(|h| h.valid())
            }
            "hand_checked_text_55k" => {
                serde_json::from_str::<HandCheckedText>(black_box(big)).is_ok_and(|h| h.valid())
            }
            "from_json_55k" | "from_json_zeros_55k" => {
                HeartbeatDecision::from_json(black_box(big)).is_ok()
            }
            "daimon_limit" => serde_json::from_str::<DaimonAppraisal>(black_box(appraisal)).is_ok(),
            "daimon_hand_checked" => {
                serde_json::from_str::<DaimonHandChecked>(black_box(appraisal))
                    .is_ok_and(|h| h.valid())
            }
            "daimon_from_json" => DaimonAppraisal::from_json(black_box(appraisal)).is_ok(),
            "jsonschema" => {
                let value: serde_json::Value =
                    serde_json::from_str(black_box(small)).expect("json");
                validator.is_valid(&value)
                    && serde_json::from_value::<HeartbeatDecision>(value).is_ok()
            }
            other => {
                eprintln!("unknown path {other:?}: see the paths above");
                std::process::exit(2);
            }
        } as usize;
    }
    println!("{ok} of {n} parsed");
}

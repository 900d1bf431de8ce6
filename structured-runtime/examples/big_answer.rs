//! `parse_response` on a large answer read from stdin, for time and memory figures:
//! `/usr/bin/time -v target/release/examples/big_answer < answer.txt`.
use std::io::Read;

#[path = "../benches/heartbeat.rs"]
mod heartbeat;

fn main() {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).expect("stdin");
    let parsed = structured_runtime::parse_response::<heartbeat::HeartbeatDecision>(
        &text,
        structured_runtime::StructuredOutputMode::PromptGuided,
    );
    match parsed {
        Ok(p) => println!("{:?}, {} warnings", p.provenance, p.warnings.len()),
        Err(e) => println!(
            "error: {}",
            e.to_string().chars().take(200).collect::<String>()
        ),
    }
}

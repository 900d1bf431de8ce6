//! The memory baseline for the README's multiples: `serde_json` reading stdin into a `Value`
//! (`/usr/bin/time -v target/release/examples/value_memory < answer.json`).
use std::io::Read;

fn main() {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).expect("stdin");
    let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    println!("{}", value.to_string().len());
}

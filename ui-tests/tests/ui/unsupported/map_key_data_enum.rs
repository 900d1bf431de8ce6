use std::collections::BTreeMap;
use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    A(u8),
}

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    scores: BTreeMap<Key, f64>,
}

fn main() {}

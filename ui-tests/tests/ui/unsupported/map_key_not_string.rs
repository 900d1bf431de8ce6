use std::collections::HashMap;
use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    scores: HashMap<u32, f64>,
}

fn main() {}

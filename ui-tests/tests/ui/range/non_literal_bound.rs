use structured_runtime::StructuredOutput;

const MAX: f64 = 1.0;

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    #[range(0.0, MAX)]
    confidence: f64,
}

fn main() {}

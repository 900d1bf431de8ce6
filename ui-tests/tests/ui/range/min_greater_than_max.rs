use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    #[range(1.0, 0.0)]
    confidence: f64,
}

fn main() {}

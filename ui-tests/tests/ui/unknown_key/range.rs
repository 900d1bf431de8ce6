use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    #[range(minimum = 0.0)]
    confidence: f64,
}

fn main() {}

use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    #[range(min = 0.0)]
    #[range(max = 1.0)]
    confidence: f64,
}

fn main() {}

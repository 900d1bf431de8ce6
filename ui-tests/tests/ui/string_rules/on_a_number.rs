use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    #[length(max = 3)]
    confidence: f64,
}

fn main() {}

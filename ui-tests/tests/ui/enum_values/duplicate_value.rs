use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    #[enum_values("low", "high", "low")]
    severity: String,
}

fn main() {}

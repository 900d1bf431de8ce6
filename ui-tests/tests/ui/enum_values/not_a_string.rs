use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    #[enum_values("low", 2)]
    severity: String,
}

fn main() {}

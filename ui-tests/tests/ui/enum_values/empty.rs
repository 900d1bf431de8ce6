use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    #[enum_values()]
    severity: String,
}

fn main() {}

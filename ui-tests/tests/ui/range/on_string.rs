use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    #[range(0, 10)]
    label: String,
}

fn main() {}

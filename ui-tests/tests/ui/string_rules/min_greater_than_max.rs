use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    #[length(min = 10, max = 2)]
    title: String,
}

fn main() {}

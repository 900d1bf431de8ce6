use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    #[length(chars = 3)]
    title: String,
    #[length()]
    body: String,
}

fn main() {}

use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Review {
    #[markdown]
    content: Option<String>,
}

fn main() {}

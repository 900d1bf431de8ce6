use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Review {
    #[markdown]
    content: String,
    approved: bool,
}

fn main() {}

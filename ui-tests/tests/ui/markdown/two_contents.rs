use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Notes {
    #[markdown]
    summary: String,
    #[markdown]
    details: String,
}

fn main() {}

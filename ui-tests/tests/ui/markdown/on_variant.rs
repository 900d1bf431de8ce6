use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
enum Kind {
    #[markdown]
    Fix,
    Feature,
}

fn main() {}

use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
enum Level {
    Low,
    #[serde(untagged)]
    Other(String),
}

fn main() {}

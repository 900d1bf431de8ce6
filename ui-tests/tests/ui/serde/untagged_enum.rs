use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
#[serde(untagged)]
enum Level {
    Low,
    High,
}

fn main() {}

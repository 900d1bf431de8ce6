use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    extra: Vec<serde_json::Value>,
}

fn main() {}

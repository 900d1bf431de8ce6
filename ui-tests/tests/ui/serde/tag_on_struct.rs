use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
#[serde(tag = "kind")]
struct Answer {
    text: String,
}

fn main() {}

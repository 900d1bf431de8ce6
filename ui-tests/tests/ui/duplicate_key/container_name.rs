use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
#[structured(name = "answer", name = "reply")]
struct Answer {
    text: String,
}

fn main() {}

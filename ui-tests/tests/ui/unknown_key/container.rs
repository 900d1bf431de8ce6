use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
#[structured(nmae = "answer")]
struct Answer {
    text: String,
}

fn main() {}

use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
#[structured(name = "my answer")]
struct Answer {
    text: String,
}

fn main() {}

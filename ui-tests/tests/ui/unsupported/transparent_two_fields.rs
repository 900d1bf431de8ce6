use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
#[serde(transparent)]
struct Pair {
    a: String,
    b: String,
}

fn main() {}

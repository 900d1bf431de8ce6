use structured_runtime::StructuredOutput;

#[derive(serde::Deserialize)]
struct Plain {
    text: String,
}

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    inner: Plain,
}

fn main() {}

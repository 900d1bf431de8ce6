use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Meta {
    source: String,
}

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    #[serde(flatten)]
    meta: Meta,
}

fn main() {}

use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Meta {
    #[range(0, 9)]
    source: u8,
}

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    #[serde(flatten)]
    meta: Option<Meta>,
    #[serde(flatten)]
    #[range(0, 1)]
    more: Meta,
}

fn main() {}

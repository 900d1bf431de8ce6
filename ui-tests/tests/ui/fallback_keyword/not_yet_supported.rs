use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    #[fallback_keyword("escalate")]
    escalate: bool,
}

fn main() {}

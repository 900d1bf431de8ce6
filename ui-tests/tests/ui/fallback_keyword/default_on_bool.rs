use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Decision {
    #[fallback_keyword("escalate", default = true)]
    escalate: bool,
}

fn main() {}

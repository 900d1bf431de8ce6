use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Decision {
    #[fallback_keyword("page" => "true")]
    escalate: bool,
}

fn main() {}

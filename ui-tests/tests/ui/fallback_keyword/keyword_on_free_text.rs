use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Appraisal {
    #[fallback_keyword("neutral", "positive")]
    memory_bias: String,
}

fn main() {}

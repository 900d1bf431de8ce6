use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Appraisal {
    #[fallback_keyword(excerpt = 100, prefix = 10)]
    trigger: String,
}

fn main() {}

use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Appraisal {
    #[fallback_keyword]
    trigger: String,
}

fn main() {}

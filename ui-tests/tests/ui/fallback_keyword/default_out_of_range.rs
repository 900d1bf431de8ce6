use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Appraisal {
    #[range(-1.0, 1.0)]
    #[fallback_keyword(default = 2.0)]
    pleasure: f64,
}

fn main() {}

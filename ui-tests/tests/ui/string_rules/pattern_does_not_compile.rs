use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    #[pattern("^[A-Z{3}$")]
    code: String,
}

fn main() {}

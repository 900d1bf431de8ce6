use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    #[format("phone")]
    phone: String,
}

fn main() {}

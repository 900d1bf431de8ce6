use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    #[range(0, 300)]
    percent: u8,
}

fn main() {}

use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    #[range(0.5, 10)]
    count: u32,
}

fn main() {}

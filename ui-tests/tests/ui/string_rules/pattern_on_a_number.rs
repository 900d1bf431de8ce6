use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    #[pattern("^[0-9]+$")]
    count: u32,
}

fn main() {}

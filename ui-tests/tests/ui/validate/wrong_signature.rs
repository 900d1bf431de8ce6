use structured_runtime::StructuredOutput;

fn positive(n: u32) -> bool {
    n > 0
}

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    #[validate(with = positive)]
    count: u32,
}

fn main() {}

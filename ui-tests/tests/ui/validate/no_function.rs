use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    #[validate(using = positive)]
    count: u32,
}

fn main() {}

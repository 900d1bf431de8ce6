use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Order {
    #[range(1, 10)]
    #[fallback_keyword("size")]
    size: u8,
}

fn main() {}

use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Review {
    #[markdown(body)]
    content: String,
}

fn main() {}

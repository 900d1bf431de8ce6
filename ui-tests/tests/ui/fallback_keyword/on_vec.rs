use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Report {
    #[fallback_keyword("price")]
    signals: Vec<String>,
}

fn main() {}

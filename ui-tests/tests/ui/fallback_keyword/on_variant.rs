use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
enum Action {
    #[fallback_keyword("sell")]
    Exit,
    Observe,
}

fn main() {}

use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Curator {
    #[fallback_keyword("evaluated", default = 1.5)]
    entries_evaluated: u32,
}

fn main() {}

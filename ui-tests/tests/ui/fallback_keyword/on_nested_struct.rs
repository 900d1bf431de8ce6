use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Layer {
    passed: bool,
}

#[derive(StructuredOutput, serde::Deserialize)]
struct Risk {
    #[fallback_keyword(default = "passed")]
    layer: Layer,
}

fn main() {}

use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
enum Action {
    Observe,
    Hedge { ratio: f64 },
}

fn main() {}

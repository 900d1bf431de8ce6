use structured_runtime::StructuredOutput;

type Label = String;

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    #[range(0, 1)]
    label: Label,
}

fn main() {}

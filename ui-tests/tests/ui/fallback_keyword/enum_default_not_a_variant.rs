use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
enum Action {
    Observe,
    Exit,
}

#[derive(StructuredOutput, serde::Deserialize)]
struct Decision {
    #[fallback_keyword("exit", default = "Observe")]
    action: Action,
}

fn main() {}

use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Review {
    #[markdown]
    content: String,
    #[enum_values("approve", "reject")]
    #[fallback_keyword("approve", "reject", default = "reject")]
    verdict: Option<String>,
}

fn main() {}

use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Decision {
    #[enum_values("none", "low", "high")]
    severity: String,
    #[fallback_keyword("escalate")]
    escalate: bool,
}

fn main() {}

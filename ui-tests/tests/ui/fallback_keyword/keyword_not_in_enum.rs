use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Decision {
    #[enum_values("none", "low", "high")]
    #[fallback_keyword("critical", "high", default = "none")]
    severity: String,
}

fn main() {}

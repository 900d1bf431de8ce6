use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Decision {
    #[enum_values("low", "high")]
    #[fallback_keyword(high, default = "low")]
    severity: String,
}

fn main() {}

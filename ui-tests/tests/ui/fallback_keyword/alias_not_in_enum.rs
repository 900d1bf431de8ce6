use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Decision {
    #[enum_values("observe", "hedge", "exit")]
    #[fallback_keyword("sell everything" => "liquidate", default = "observe")]
    action: String,
}

fn main() {}

use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    #[enum_values("1", "2")]
    level: u32,
}

fn main() {}

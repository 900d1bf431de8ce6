use std::collections::BTreeMap;
use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
#[structured(title = "answer")]
struct Answer {
    #[range(0, 1)]
    label: String,
    #[enum_values()]
    kind: String,
    #[range(10, 1)]
    count: u32,
    #[range(-1, 1)]
    unsigned: u16,
    notes: BTreeMap<u8, String>,
    #[enum_values("a", "a")]
    tags: Vec<String>,
}

fn main() {}

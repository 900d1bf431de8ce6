use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Answer {
    // `\a` compiles in the regex crate, but a JSON Schema pattern is ECMA-262, which has no such
    // escape: every validator of the schema would refuse it.
    #[pattern(r"^\a+$")]
    code: String,
}

fn main() {}

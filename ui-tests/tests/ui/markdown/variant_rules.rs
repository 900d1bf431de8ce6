use structured_runtime::StructuredOutput;

/// A plain-text variant needs an untagged enum, a `String` newtype, and only one of it.
#[derive(StructuredOutput, serde::Deserialize)]
#[serde(untagged)]
enum Reply {
    Call { tool: String },
    #[markdown]
    Say(String),
    #[markdown]
    Shout(String),
    #[markdown(title)]
    Titled(String),
}

#[derive(StructuredOutput, serde::Deserialize)]
#[serde(untagged)]
enum Count {
    #[markdown]
    Number(u32),
}

fn main() {}

use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
struct Commit {
    #[markdown(title)]
    title: String,
    body: Option<String>,
}

fn main() {}

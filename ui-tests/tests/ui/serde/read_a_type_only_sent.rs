//! A type that is only sent derives its schema and rules without `Deserialize`; reading one is
//! refused where it is read, naming the missing trait.
use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Serialize)]
struct Lookup {
    symbol: String,
}

fn main() {
    let _ = structured_runtime::provider::wire::Tool::of::<Lookup>("lookup", "Look a ticker up.");
    let _ = Lookup::from_json(r#"{"symbol": "X"}"#);
}

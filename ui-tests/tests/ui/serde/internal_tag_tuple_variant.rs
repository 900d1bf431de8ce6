use structured_runtime::StructuredOutput;

#[derive(StructuredOutput, serde::Deserialize)]
#[serde(tag = "kind")]
enum Shape {
    Point(i32, i32),
}

fn main() {}

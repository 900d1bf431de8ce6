fn main() {
    use structured_runtime::StructuredOutput;
    println!(
        "{}",
        serde_json::to_string_pretty(structured_examples::HeartbeatDecision::schema().schema())
            .unwrap()
    );
}

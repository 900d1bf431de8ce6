//! The demo does what the README says: each scenario ends as its name says, in each mode.

use std::process::Command;

#[test]
fn every_scenario_ends_as_named_in_every_mode() {
    // The replay, whatever endpoint the shell names (`eval "$(scripts/local-model start)"`).
    let out = Command::new(env!("CARGO_BIN_EXE_demo"))
        .env_remove("STRUCTURED_PROVIDER")
        .env_remove("STRUCTURED_BASE_URL")
        .env_remove("STRUCTURED_MODEL")
        .env_remove("STRUCTURED_API_KEY")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for (mode, clean) in [
        ("SchemaEnforced", "Clean"),
        ("ToolUseWorkaround", "Clean"),
        ("PromptGuided", "Extracted"),
    ] {
        for expected in [
            format!("clean: {mode}, 1 attempt(s), {clean}"),
            format!("needs repair: {mode}, 1 attempt(s), Repaired"),
            format!("invalid, fixed on re-ask: {mode}, 2 attempt(s), {clean}"),
        ] {
            // Both types.
            assert_eq!(text.matches(&expected).count(), 2, "{expected}\n{text}");
        }
    }
    assert_eq!(
        text.matches("truncated: error after 1 attempt(s): the answer was truncated")
            .count(),
        6
    );
    assert_eq!(
        text.matches("refused: error after 1 attempt(s): the model refused")
            .count(),
        6
    );
    assert!(text.contains("re-asked with 2 violations"));
}

//! What the CLI's batch tests share.

use std::path::PathBuf;

/// A fresh directory for test `name`, holding the job's schema (`schema.json`: an invoice's
/// total, a non-negative integer).
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "structured-cli-batch-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("schema.json"),
        r#"{"type": "object", "properties": {"total": {"type": "integer", "minimum": 0}},
            "required": ["total"], "additionalProperties": false}"#,
    )
    .unwrap();
    dir
}

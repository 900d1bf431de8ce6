//! Helpers shared by more than one test file.
#![allow(dead_code)] // each test file uses some of them

pub mod batch_fake;
pub mod batch_http;
pub mod gbnf;
pub mod generate;
pub mod grows;
pub mod scripted;
pub mod streaming;

/// The official JSON-Schema-Test-Suite's draft 2020-12 files (`tests/data/json-schema-test-suite`),
/// in name order.
pub fn suite_files() -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/json-schema-test-suite/draft2020-12");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

//! Every lowering, byte for byte, against a recorded snapshot: each schema of the official
//! JSON-Schema-Test-Suite (draft 2020-12, `tests/data/json-schema-test-suite`) and each example
//! type, for every target, and each one's llama.cpp grammar. A change to how the dialects are
//! built (a shared walk, a policy table) must leave every schema sent, every report of what was
//! moved, kept or reshaped, and every refusal exactly as it was.
//!
//! A line of `tests/data/lowering_snapshot.txt` is `case target digest`, the digest an FNV-1a
//! hash of the lowered schema's JSON text and the reports' debug text (or the refusal's text).
//! When a lowering is meant to change, run with `UPDATE_LOWERING_SNAPSHOT=1` and say why in the
//! commit.

mod common;

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;
use structured_runtime::provider::dialect::{
    grammar, lower_reporting, GrammarBudget, SchemaTarget,
};

fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Every schema the snapshot covers, with a name for its line.
fn schemas() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for schema in structured_examples::all_schemas() {
        out.push((schema.name().to_owned(), schema.schema().clone()));
    }
    for file in &common::suite_files() {
        let groups: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        for (i, group) in groups.as_array().unwrap().iter().enumerate() {
            out.push((format!("{stem}#{i}"), group["schema"].clone()));
        }
    }
    out
}

fn snapshot() -> String {
    let mut text = String::new();
    for (name, schema) in schemas() {
        for target in SchemaTarget::ALL {
            let digest = match lower_reporting(&schema, target) {
                Ok(l) => fnv(&format!(
                    "{}|{:?}|{:?}|{:?}",
                    l.schema, l.moved, l.kept, l.reshape
                )),
                Err(report) => fnv(&format!("refused: {report}")),
            };
            let _ = writeln!(text, "{name} {target:?} {digest:016x}");
        }
        let digest = match grammar(&schema, GrammarBudget::default()) {
            Ok(g) => fnv(&format!("{g:?}")),
            Err(report) => fnv(&format!("refused: {report}")),
        };
        let _ = writeln!(text, "{name} Grammar {digest:016x}");
    }
    text
}

#[test]
fn every_lowering_is_as_recorded() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/lowering_snapshot.txt");
    let now = snapshot();
    if std::env::var_os("UPDATE_LOWERING_SNAPSHOT").is_some() {
        std::fs::write(&path, &now).unwrap();
        return;
    }
    let recorded = std::fs::read_to_string(&path).unwrap();
    let changed: Vec<(&str, &str)> = recorded
        .lines()
        .zip(now.lines())
        .filter(|(a, b)| a != b)
        .take(20)
        .collect();
    assert!(
        changed.is_empty() && recorded.lines().count() == now.lines().count(),
        "lowerings changed (recorded, now): {changed:#?}"
    );
}

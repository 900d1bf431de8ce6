//! Pass rates of the repairer on the malformed-JSON corpus of two public repair libraries.
//!
//! `cargo test -p structured-tests --test corpus -- --nocapture` prints the rate per file and per
//! category, and the cases that fail. A case passes when the repaired value equals `expected`
//! (numbers compared as numbers: JSON has one number type), or, for the `empty` and `error`
//! outcomes, when no value is claimed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use structured_runtime::read::repair::repair_text;

/// The floor each file must reach (the target is 85%).
const FLOOR: f64 = 0.85;

struct Case {
    id: String,
    category: String,
    input: String,
    expected: Option<Value>,
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/corpus")
}

fn load(file: &str) -> Vec<Case> {
    let path = corpus_dir().join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let v: Value = serde_json::from_str(line).expect("corpus line is JSON");
            let outcome = v["outcome"].as_str().unwrap_or_default();
            Case {
                id: v["id"].as_str().unwrap_or_default().to_owned(),
                category: v["category"].as_str().unwrap_or_default().to_owned(),
                input: v["input"].as_str().unwrap_or_default().to_owned(),
                expected: (outcome == "value").then(|| v["expected"].clone()),
            }
        })
        .collect()
}

/// Equality with numbers compared by value (`2` equals `2.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn passes(case: &Case) -> (bool, String) {
    let got = repair_text(&case.input);
    let shown = match &got {
        Ok(r) => r.value.to_string(),
        Err(e) => format!("<{e}>"),
    };
    let ok = match (&case.expected, &got) {
        (Some(expected), Ok(r)) => same(expected, &r.value),
        (None, Err(_)) => true,
        _ => false,
    };
    (ok, shown)
}

fn evaluate(file: &str) -> f64 {
    let cases = load(file);
    let mut by_category: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut passed = 0;
    let mut failures = Vec::new();
    for case in &cases {
        let (ok, shown) = passes(case);
        let entry = by_category.entry(&case.category).or_default();
        entry.1 += 1;
        if ok {
            entry.0 += 1;
            passed += 1;
        } else {
            failures.push(format!(
                "  {}\n    input:    {:?}\n    expected: {}\n    got:      {}",
                case.id,
                case.input,
                case.expected
                    .as_ref()
                    .map_or("<no value>".into(), Value::to_string),
                shown
            ));
        }
    }
    let rate = passed as f64 / cases.len() as f64;
    println!("\n{file}: {passed}/{} = {:.1}%", cases.len(), rate * 100.0);
    for (category, (ok, total)) in &by_category {
        println!(
            "  {category:<20} {ok:>3}/{total:<3} {:>5.1}%",
            *ok as f64 * 100.0 / *total as f64
        );
    }
    if std::env::var_os("CORPUS_FAILURES").is_some() {
        println!("failures:\n{}", failures.join("\n"));
    }
    rate
}

#[test]
fn corpus_json_repair() {
    let rate = evaluate("json_repair.jsonl");
    assert!(
        rate >= FLOOR,
        "json_repair.jsonl: {:.1}% < {:.0}%",
        rate * 100.0,
        FLOOR * 100.0
    );
}

#[test]
fn corpus_jsonrepair_ts() {
    let rate = evaluate("jsonrepair_ts.jsonl");
    assert!(
        rate >= FLOOR,
        "jsonrepair_ts.jsonl: {:.1}% < {:.0}%",
        rate * 100.0,
        FLOOR * 100.0
    );
}

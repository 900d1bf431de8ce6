//! Pass rates of the repairer on the malformed-JSON corpus of two public repair libraries.
//!
//! `cargo test -p structured-tests --test corpus -- --nocapture` prints the rate per file and per
//! category, and the cases that fail. A case passes when the repaired value equals `expected`
//! (numbers compared as numbers: JSON has one number type), or, for the `empty` and `error`
//! outcomes, when no value is claimed; or, on a case where the two libraries disagree
//! (`tests/data/corpus/disagreements.jsonl`), when it is what the other library returns.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use structured_runtime::read::repair::repair_text;

/// The floor each file must reach: cases read as this file's library expects, or, where the two
/// libraries disagree (`disagreements.jsonl`), as the other one reads them.
const FLOOR: f64 = 0.92;

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

/// What the other library returns on a case where the two disagree: `Some(value)`, or
/// `None` for no JSON.
type Other = Option<Value>;

fn disagreements() -> BTreeMap<String, Other> {
    let path = corpus_dir().join("disagreements.jsonl");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let v: Value = serde_json::from_str(line).expect("a disagreement line is JSON");
            let other =
                (!v["other_none"].as_bool().unwrap_or(false)).then(|| v["other_value"].clone());
            (v["id"].as_str().unwrap_or_default().to_owned(), other)
        })
        .collect()
}

/// How a case came out: as this file's library expects, as the other library reads it (where
/// the two disagree), or neither.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Expected,
    OtherLibrary,
    Failed,
}

fn passes(case: &Case, other: Option<&Other>) -> (Verdict, String) {
    let got = repair_text(&case.input);
    let shown = match &got {
        Ok(r) => r.value.to_string(),
        Err(e) => format!("<{e}>"),
    };
    let matches = |expected: &Option<Value>| match (expected, &got) {
        (Some(expected), Ok(r)) => same(expected, &r.value),
        (None, Err(_)) => true,
        _ => false,
    };
    let verdict = if matches(&case.expected) {
        Verdict::Expected
    } else if other.is_some_and(matches) {
        Verdict::OtherLibrary
    } else {
        Verdict::Failed
    };
    (verdict, shown)
}

/// The share of cases read as one of the two libraries reads them, after printing the rates.
fn evaluate(file: &str) -> f64 {
    let cases = load(file);
    let others = disagreements();
    let mut by_category: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut passed = 0;
    let mut as_expected = 0;
    let mut failures = Vec::new();
    let mut followed_other = Vec::new();
    for case in &cases {
        let (verdict, shown) = passes(case, others.get(&case.id));
        let entry = by_category.entry(&case.category).or_default();
        entry.1 += 1;
        if verdict == Verdict::OtherLibrary {
            followed_other.push(format!("  {}: {}", case.id, shown));
        }
        if verdict != Verdict::Failed {
            entry.0 += 1;
            passed += 1;
            as_expected += usize::from(verdict == Verdict::Expected);
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
    println!(
        "\n{file}: {passed}/{} = {:.1}% read as one of the two libraries reads them ({as_expected} as this file expects, {} as the other library where they disagree)",
        cases.len(),
        rate * 100.0,
        passed - as_expected
    );
    for (category, (ok, total)) in &by_category {
        println!(
            "  {category:<20} {ok:>3}/{total:<3} {:>5.1}%",
            *ok as f64 * 100.0 / *total as f64
        );
    }
    // The same cases through jsonrepair-rs, side by side (its output text read back as JSON).
    let theirs = cases
        .iter()
        .filter(|case| {
            let got = jsonrepair_rs::jsonrepair(&case.input)
                .ok()
                .and_then(|t| serde_json::from_str::<Value>(&t).ok());
            match (&case.expected, &got) {
                (Some(expected), Some(v)) => same(expected, v),
                (None, None) => true,
                _ => false,
            }
        })
        .count();
    println!(
        "  jsonrepair-rs: {theirs}/{} as this file expects (this project: {as_expected})",
        cases.len()
    );
    if std::env::var_os("CORPUS_FAILURES").is_some() {
        println!("failures:\n{}", failures.join("\n"));
        println!(
            "read as the other library reads them:\n{}",
            followed_other.join("\n")
        );
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

/// The repairer writing text (`repair_text_json`, what `structured repair` prints in bounded
/// memory) and the one building a `Value` agree on every corpus input: the same text as
/// `serde_json` writes the value, the same repairs, the same truncation, the same refusals.
#[test]
fn the_text_repairer_writes_what_the_value_repairer_reads() {
    use structured_runtime::read::repair::{repair_text, repair_text_json};
    let mut compared = 0;
    for file in ["json_repair.jsonl", "jsonrepair_ts.jsonl"] {
        for case in load(file) {
            match (repair_text(&case.input), repair_text_json(&case.input)) {
                (Ok(value), Ok(text)) => {
                    assert_eq!(text.value, value.value.to_string(), "{}", case.id);
                    assert_eq!(text.repairs, value.repairs, "{}", case.id);
                    assert_eq!(text.truncated, value.truncated, "{}", case.id);
                }
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{}", case.id),
                (a, b) => panic!("{}: {a:?} / {b:?}", case.id),
            }
            compared += 1;
        }
    }
    assert!(compared > 600);
}

/// The same agreement on generated answers: objects of up to 40 members (past the few the text
/// repairer writes as they come), names given twice (the value replaced where it stood),
/// members that extend the list before them (`"a": [1] [2]`), objects nested and cut off, in
/// the syntax models slip into.
mod text_repairer_agrees {
    use proptest::prelude::*;
    use structured_runtime::read::repair::{repair_text, repair_text_json};

    fn member() -> impl Strategy<Value = String> {
        let name = prop::sample::select(vec!["a", "b", "c", "k\"q", "é", "a"]);
        let index = 0usize..24;
        let value = prop_oneof![
            Just("1".to_string()),
            Just("'x'".to_string()),
            Just("true".to_string()),
            Just("[1, 2]".to_string()),
            Just("[1] [2, 3]".to_string()),
            Just("{x: 1, x: 2}".to_string()),
            Just("{\"y\": [], }".to_string()),
            Just("1e400".to_string()),
            Just("\"s\"".to_string()),
        ];
        (name, index, any::<bool>(), value).prop_map(|(name, i, numbered, value)| {
            let name = if numbered {
                format!("{name}{i}")
            } else {
                name.to_string()
            };
            format!("\"{name}\": {value}")
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn on_generated_answers(
            members in prop::collection::vec(member(), 0..40),
            nested in prop::option::of(prop::collection::vec(member(), 0..20)),
            comma in any::<bool>(),
            cut in prop::option::of(0.0f64..1.0),
        ) {
            let mut text = format!("{{{}", members.join(if comma { ", " } else { " " }));
            if let Some(inner) = nested {
                text.push_str(&format!(", \"in\": {{{}}}", inner.join(", ")));
            }
            text.push('}');
            if let Some(cut) = cut.filter(|c| *c > 0.7) {
                let at = (cut * text.len() as f64) as usize;
                let at = (0..=at).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
                text.truncate(at);
            }
            match (repair_text(&text), repair_text_json(&text)) {
                (Ok(value), Ok(json)) => {
                    prop_assert_eq!(&json.value, &value.value.to_string(), "{}", text);
                    prop_assert_eq!(&json.repairs, &value.repairs, "{}", text);
                    prop_assert_eq!(json.truncated, value.truncated, "{}", text);
                }
                (Err(a), Err(b)) => prop_assert_eq!(a.to_string(), b.to_string()),
                (a, b) => prop_assert!(false, "{}: {:?} / {:?}", text, a, b),
            }
        }
    }
}

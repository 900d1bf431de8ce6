//! The seed's two annotated types derive to the seed's schemas (`tests/data/golden/*.json`), plus
//! exactly the additions listed here, each on purpose: descriptions from doc comments and the
//! bounds from `#[range]`. Compared as JSON values.

use serde_json::{json, Value};
use structured_examples::{DaimonAppraisal, HeartbeatDecision};
use structured_runtime::{ResponseSchema, StructuredOutput};

fn golden(file: &str) -> Value {
    let path = format!("{}/data/golden/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    serde_json::from_str(&text).unwrap()
}

/// Asserts that `derived` is the golden file's schema plus exactly `additions`
/// (`(pointer, key, value)`, each a key the golden schema does not have), with the golden name
/// and strictness.
fn assert_golden_plus(derived: &ResponseSchema, file: &str, additions: Vec<(String, &str, Value)>) {
    let golden = golden(file);
    let mut expected = golden["schema"].clone();
    for (pointer, key, value) in additions {
        let node = expected
            .pointer_mut(&pointer)
            .unwrap_or_else(|| panic!("no node at {pointer}"));
        let map = node.as_object_mut().unwrap();
        assert!(
            map.insert(key.to_owned(), value).is_none(),
            "{pointer}/{key} is already in the golden schema"
        );
    }
    assert_eq!(derived.schema(), &expected);
    assert_eq!(derived.name(), golden["name"]);
    assert_eq!(derived.strict(), golden["strict"]);
}

/// `(pointer, key, value)` rows for the tables below.
fn rows(rows: &[(&str, &'static str, Value)]) -> Vec<(String, &'static str, Value)> {
    rows.iter()
        .map(|(p, k, v)| ((*p).to_owned(), *k, v.clone()))
        .collect()
}

#[test]
fn heartbeat_decision_matches_the_seed_schema() {
    let additions = rows(&[
        ("", "description", json!("The heartbeat's inference output, structured.")),
        ("/properties/severity", "description", json!("Current assessment severity.")),
        ("/properties/action", "description", json!("Recommended action.")),
        ("/properties/confidence", "description", json!("Confidence in this assessment.")),
        ("/properties/confidence", "minimum", json!(0.0)),
        ("/properties/confidence", "maximum", json!(1.0)),
        ("/properties/rationale", "description", json!("Brief rationale (1-2 sentences).")),
        ("/properties/signals", "description", json!("Specific signals that drove this decision.")),
        ("/properties/signals/items", "description", json!("One signal behind a heartbeat decision.")),
        (
            "/properties/signals/items/properties/source",
            "description",
            json!("Where the signal comes from, e.g. \"price\", \"volume\", \"governance\", \"liquidity\"."),
        ),
        ("/properties/signals/items/properties/description", "description", json!("What was observed.")),
        ("/properties/signals/items/properties/magnitude", "description", json!("Strength of the signal.")),
        ("/properties/signals/items/properties/magnitude", "minimum", json!(0.0)),
        ("/properties/signals/items/properties/magnitude", "maximum", json!(1.0)),
        ("/properties/escalate", "description", json!("Whether to escalate to a higher tier (T1->T2).")),
    ]);
    let derived = HeartbeatDecision::schema();
    assert_golden_plus(derived, "heartbeat_decision.json", additions);
    assert_eq!(
        derived.description(),
        Some("The heartbeat's inference output, structured.")
    );
}

#[test]
fn daimon_appraisal_matches_the_seed_schema() {
    let mut additions = rows(&[
        (
            "",
            "description",
            json!("An emotional appraisal as a PAD vector and a Plutchik label."),
        ),
        (
            "/properties/pleasure",
            "description",
            json!("Pleasure dimension."),
        ),
        (
            "/properties/arousal",
            "description",
            json!("Arousal dimension."),
        ),
        (
            "/properties/dominance",
            "description",
            json!("Dominance dimension."),
        ),
        (
            "/properties/primary_emotion",
            "description",
            json!("Primary Plutchik emotion label."),
        ),
        (
            "/properties/secondary_emotion",
            "description",
            json!("Optional secondary emotion (blended states)."),
        ),
        (
            "/properties/trigger",
            "description",
            json!("What triggered this appraisal."),
        ),
        (
            "/properties/memory_bias",
            "description",
            json!("How this should bias memory retrieval."),
        ),
    ]);
    for dim in ["pleasure", "arousal", "dominance"] {
        additions.push((format!("/properties/{dim}"), "minimum", json!(-1.0)));
        additions.push((format!("/properties/{dim}"), "maximum", json!(1.0)));
    }
    assert_golden_plus(
        DaimonAppraisal::schema(),
        "daimon_appraisal.json",
        additions,
    );
}

#[test]
fn schema_is_built_once_per_process() {
    assert!(std::ptr::eq(
        HeartbeatDecision::schema(),
        HeartbeatDecision::schema()
    ));
}

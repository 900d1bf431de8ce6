//! The seed's two annotated types derive to the seed's schemas (`shared/golden/*.json`), plus
//! exactly the additions listed here, each on purpose: descriptions from doc comments and the
//! bounds from `#[range]`. Compared as JSON values.

use serde_json::{json, Value};
use structured_examples::{DaimonAppraisal, HeartbeatDecision};
use structured_runtime::StructuredOutput;

fn golden(file: &str) -> Value {
    let path = format!("{}/../../shared/golden/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    serde_json::from_str(&text).unwrap()
}

/// Inserts `key: value` into the object at `pointer` of `doc`.
fn add(doc: &mut Value, pointer: &str, key: &str, value: Value) {
    let node = doc
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("no node at {pointer}"));
    let map = node.as_object_mut().unwrap();
    assert!(
        map.insert(key.to_owned(), value).is_none(),
        "{pointer}/{key} is already in the golden schema"
    );
}

#[test]
fn heartbeat_decision_matches_the_seed_schema() {
    let golden = golden("heartbeat_decision.json");
    let mut expected = golden["schema"].clone();
    let additions = [
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
    ];
    for (pointer, key, value) in additions {
        add(&mut expected, pointer, key, value);
    }
    let derived = HeartbeatDecision::schema();
    assert_eq!(derived.schema(), &expected);
    assert_eq!(derived.name(), golden["name"]);
    assert_eq!(derived.strict(), golden["strict"]);
    assert_eq!(
        derived.description(),
        Some("The heartbeat's inference output, structured.")
    );
}

#[test]
fn daimon_appraisal_matches_the_seed_schema() {
    let golden = golden("daimon_appraisal.json");
    let mut expected = golden["schema"].clone();
    let mut additions = vec![
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
    ];
    for dim in ["pleasure", "arousal", "dominance"] {
        let pointer: &'static str = Box::leak(format!("/properties/{dim}").into_boxed_str());
        additions.push((pointer, "minimum", json!(-1.0)));
        additions.push((pointer, "maximum", json!(1.0)));
    }
    for (pointer, key, value) in additions {
        add(&mut expected, pointer, key, value);
    }
    let derived = DaimonAppraisal::schema();
    assert_eq!(derived.schema(), &expected);
    assert_eq!(derived.name(), golden["name"]);
    assert_eq!(derived.strict(), golden["strict"]);
}

#[test]
fn schema_is_built_once_per_process() {
    assert!(std::ptr::eq(
        HeartbeatDecision::schema(),
        HeartbeatDecision::schema()
    ));
}

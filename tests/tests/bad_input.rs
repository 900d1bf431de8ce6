//! Bad input gets a typed error with paths, never a panic: not JSON, wrong types, out-of-range
//! values, huge strings, deep nesting, truncation.

use structured_examples::HeartbeatDecision;
use structured_runtime::{FromJsonError, Rule, StructuredOutput};

const GOOD: &str = r#"{"severity":"low","action":"observe","confidence":0.5,"rationale":"calm","signals":[],"escalate":false}"#;

#[test]
fn good_input_is_accepted() {
    let decision = HeartbeatDecision::from_json(GOOD).unwrap();
    assert_eq!(decision.severity, "low");
}

#[test]
fn prose_is_a_syntax_error_with_position() {
    let err = HeartbeatDecision::from_json("I think the risk is moderate.").unwrap_err();
    assert_eq!(
        err,
        FromJsonError::Syntax {
            line: 1,
            column: 1,
            message: "expected value".into()
        }
    );
}

#[test]
fn cut_off_json_is_reported_as_truncated() {
    let err = HeartbeatDecision::from_json(&GOOD[..40]).unwrap_err();
    assert!(
        matches!(
            err,
            FromJsonError::Truncated {
                line: 1,
                column: 40
            }
        ),
        "{err:?}"
    );
    assert!(matches!(
        HeartbeatDecision::from_json("").unwrap_err(),
        FromJsonError::Truncated { .. }
    ));
}

#[test]
fn wrong_types_are_all_reported() {
    let err = HeartbeatDecision::from_json(
        r#"{"severity":3,"action":"observe","confidence":"high","rationale":null,"signals":{},"escalate":"yes"}"#,
    )
    .unwrap_err();
    let got: Vec<(&str, Rule, &str)> = err
        .violations()
        .unwrap()
        .iter()
        .map(|v| (v.path.as_str(), v.rule, v.expected.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("/severity", Rule::Type, "a string"),
            ("/confidence", Rule::Type, "a number"),
            ("/rationale", Rule::Type, "a string"),
            ("/signals", Rule::Type, "an array"),
            ("/escalate", Rule::Type, "a boolean"),
        ]
    );
}

#[test]
fn root_of_the_wrong_type_is_reported_at_the_root() {
    let err = HeartbeatDecision::from_json("[1, 2]").unwrap_err();
    let v = &err.violations().unwrap()[0];
    assert_eq!(
        (v.path.as_str(), v.rule, v.found.as_str()),
        ("", Rule::Type, "an array of 2 items")
    );
}

#[test]
fn ten_megabyte_string_is_shortened_in_the_error() {
    let huge = "x".repeat(10 * 1024 * 1024);
    let json = GOOD.replace("\"low\"", &format!("\"{huge}\""));
    let err = HeartbeatDecision::from_json(&json).unwrap_err();
    let v = &err.violations().unwrap()[0];
    assert_eq!(v.path, "/severity");
    assert!(v.found.len() < 200, "found is {} bytes", v.found.len());
    assert!(v.found.ends_with("(10485760 bytes in all)"), "{}", v.found);
    // And a huge valid string is simply read.
    let json = GOOD.replace("\"calm\"", &format!("\"{huge}\""));
    assert_eq!(
        HeartbeatDecision::from_json(&json).unwrap().rationale.len(),
        huge.len()
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    for open in ["[", "{\"a\":"] {
        let deep = open.repeat(1_000_000);
        let err = HeartbeatDecision::from_json(&deep).unwrap_err();
        assert!(matches!(err, FromJsonError::Syntax { .. }), "{err:?}");
    }
    let deep_in_field = GOOD.replace("[]", &format!("{}{}", "[".repeat(5000), "]".repeat(5000)));
    let err = HeartbeatDecision::from_json(&deep_in_field).unwrap_err();
    assert!(matches!(err, FromJsonError::Syntax { .. }), "{err:?}");
}

#[test]
fn duplicate_key_is_refused_with_its_path() {
    let json = GOOD.replace("\"escalate\":false", "\"escalate\":false,\"escalate\":true");
    let err = HeartbeatDecision::from_json(&json).unwrap_err();
    let v = &err.violations().unwrap()[0];
    assert_eq!((v.path.as_str(), v.rule), ("/escalate", Rule::Deserialize));
    assert!(
        v.found.starts_with("duplicate field `escalate`"),
        "{}",
        v.found
    );
}

#[test]
fn trailing_text_after_the_value_is_refused() {
    let err = HeartbeatDecision::from_json(&format!("{GOOD} and more")).unwrap_err();
    assert!(matches!(err, FromJsonError::Syntax { .. }), "{err:?}");
}

#[test]
fn numbers_beyond_the_rust_type_are_refused() {
    let json = r#"{"entries_evaluated":4294967296,"entries_retained":1.5,"entries_pruned":-1,
        "cross_references":[],"promotions":[],"grimoire_health":1e400}"#;
    let err = structured_examples::CuratorEvaluation::from_json(json).unwrap_err();
    // 1e400 is not a number serde_json can hold: a syntax error, reported as such.
    assert!(matches!(err, FromJsonError::Syntax { .. }), "{err:?}");
    let json = json.replace("1e400", "0.5");
    let err = structured_examples::CuratorEvaluation::from_json(&json).unwrap_err();
    let got: Vec<(&str, Rule)> = err
        .violations()
        .unwrap()
        .iter()
        .map(|v| (v.path.as_str(), v.rule))
        .collect();
    assert_eq!(
        got,
        vec![
            ("/entries_evaluated", Rule::Range),
            ("/entries_retained", Rule::Type),
            ("/entries_pruned", Rule::Range),
        ]
    );
}

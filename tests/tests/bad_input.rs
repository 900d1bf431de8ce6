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

/// Reports are bounded by what they say, not by what the input holds: a long enum and a long
/// list of declared properties are named by their first few, every text is cut to a few hundred
/// bytes, a report prints at most 20 violations, and a check lists at most 1,000.
#[test]
fn error_reports_are_capped_in_count_and_size() {
    use serde_json::json;
    use structured_runtime::schema::{MAX_VIOLATIONS, MAX_VIOLATION_TEXT, SHOWN_VIOLATIONS};
    use structured_runtime::{parse_value, ParseError, ParseOptions, ResponseSchema};

    let values: Vec<String> = (0..20_000).map(|i| format!("value-{i}")).collect();
    let schema = ResponseSchema::new(
        "e",
        json!({"type": "object", "properties": {"xs": {"type": "array", "items": {"enum": values}}}}),
    )
    .unwrap();
    let answer = json!({"xs": vec!["nope"; 200]}).to_string();
    let Err(ParseError::Invalid { violations, .. }) =
        parse_value(&answer, &schema, &ParseOptions::strict())
    else {
        panic!("refused")
    };
    assert_eq!(violations.len(), 200);
    for v in violations.iter() {
        assert!(
            v.expected.len() <= MAX_VIOLATION_TEXT + 40,
            "{}",
            v.expected.len()
        );
        assert!(v.expected.contains("(and 19990 more)"), "{}", v.expected);
    }
    let shown = violations.to_string();
    assert_eq!(shown.lines().count(), 1 + SHOWN_VIOLATIONS + 1, "{shown}");
    assert!(shown.ends_with("and 180 more"), "{shown}");

    // 10,000 declared and 10,000 unknown keys: each report names ten declared keys, and the
    // list stops at the cap.
    let props: serde_json::Map<String, serde_json::Value> = (0..10_000)
        .map(|i| (format!("k{i}"), json!({"type": "integer"})))
        .collect();
    let schema = ResponseSchema::new(
        "k",
        json!({"type": "object", "properties": props, "additionalProperties": false}),
    )
    .unwrap();
    let answer: serde_json::Map<String, serde_json::Value> =
        (0..10_000).map(|i| (format!("u{i}"), json!(i))).collect();
    let answer = serde_json::Value::Object(answer).to_string();
    let Err(ParseError::Invalid { violations, .. }) =
        parse_value(&answer, &schema, &ParseOptions::strict())
    else {
        panic!("refused")
    };
    assert!(
        violations.len() <= MAX_VIOLATIONS + 200,
        "{}",
        violations.len()
    );
    assert!(
        violations[0].expected.contains("and 9990 more"),
        "{}",
        violations[0].expected
    );
    assert!(violations.to_string().starts_with("at least"));
    // Coercion drops them, and the value is the empty object: the first thousand drops are
    // listed one by one, the other 9,000 counted in one last warning.
    let parsed = parse_value(&answer, &schema, &ParseOptions::default()).unwrap();
    assert_eq!(parsed.value, json!({}));
    assert_eq!(parsed.warnings.len(), 1_001);
    assert_eq!(
        parsed
            .warnings
            .last()
            .map(|w| w.to_string())
            .unwrap_or_default(),
        "recovery: made more changes of the kinds listed, not listed one by one: 9000 more"
    );
}

/// A text of a million empty objects is not a million values: at most 4,096 are collected, and
/// the rest is reported as text ignored.
#[test]
fn top_level_values_are_collected_up_to_a_bound() {
    use structured_runtime::read::repair::{repair, RepairKind};
    let fixed = repair(&"{}".repeat(1 << 20)).unwrap();
    assert_eq!(fixed.value.as_array().map(Vec::len), Some(4096));
    assert!(fixed
        .repairs
        .iter()
        .any(|r| r.kind == RepairKind::TrailingText));
}

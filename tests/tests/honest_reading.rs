//! Honesty at the edges: every token dropped and every later value ignored is named in a
//! warning, a JSON string answer is read as a string, a number no float holds never becomes a
//! string silently, and a misnamed key is never dropped without a word.

use serde::Deserialize;
use serde_json::json;
use structured_runtime::read::repair::RepairKind;
use structured_runtime::{
    parse_response, parse_value, ParseError, ParseOptions, Provenance, Reading, ResponseSchema,
    SchemaLimits, StructuredOutput, StructuredOutputMode, Warning,
};

fn schema(value: serde_json::Value) -> ResponseSchema {
    let limits = SchemaLimits {
        object_root: false,
        ..SchemaLimits::default()
    };
    ResponseSchema::with_limits("t", value, &limits).unwrap()
}

fn names() -> ResponseSchema {
    schema(json!({"type": "object", "properties": {
        "name": {"type": "string"}, "nick": {"type": "string"}},
        "required": ["name"], "additionalProperties": false}))
}

#[test]
fn a_bare_word_dropped_inside_an_object_is_named() {
    for (text, word) in [
        (r#"{"name": "a", oops "nick": "b"}"#, "oops"),
        (r#"{"name": "a", "age": 3, bare}"#, "bare"),
        (r#"{"name": "a" junk}"#, "junk"),
    ] {
        let open = schema(json!({"type": "object"}));
        let read = parse_value(text, &open, &ParseOptions::default()).unwrap();
        let dropped = read.warnings.iter().any(|w| {
            matches!(w, Warning::Repair(r) if r.kind == RepairKind::DroppedToken
                && r.found.as_deref() == Some(word))
        });
        assert!(dropped, "{text}: {:?}", read.warnings);
        // Not also called a quoted key.
        assert!(
            !read
                .warnings
                .iter()
                .any(|w| matches!(w, Warning::Repair(r) if r.kind == RepairKind::UnquotedKey)),
            "{text}: {:?}",
            read.warnings
        );
    }
}

#[test]
fn a_later_value_cut_off_is_named_when_an_earlier_one_is_taken() {
    let text = r#"Draft: {"name": "a"} Correction: {"name": "b", "nick": "c"#;
    let read = parse_value(text, &names(), &ParseOptions::default()).unwrap();
    assert_eq!(read.value, json!({"name": "a"}));
    let start = text.rfind('{').unwrap();
    let named = read.warnings.iter().any(|w| {
        matches!(w, Warning::OtherCandidates { others, .. }
            if others.iter().any(|o| o.start == start && o.end == text.len()))
    });
    assert!(named, "{:?}", read.warnings);
}

#[test]
fn a_json_string_answer_is_a_string_never_mined_for_brackets() {
    let list = schema(json!({"type": "array", "items": {"type": "integer"}}));
    for text in [r#""[::1]""#, r#""see [1, 2] and {\"a\": 1}""#] {
        match parse_value(text, &list, &ParseOptions::default()) {
            Ok(read) => panic!("{text}: read as {}", read.value),
            Err(ParseError::Invalid { value, .. }) => {
                assert!(
                    value
                        .as_array()
                        .is_some_and(|a| a.iter().all(|v| v.is_string()))
                        || value.is_string(),
                    "{text}: {value}"
                );
            }
            Err(e) => panic!("{text}: {e}"),
        }
    }
    let object = schema(json!({"type": "object", "properties": {"a": {"type": "integer"}}}));
    let text = r#""GET https://api.example.com/{\"a\": 1}""#;
    assert!(parse_value(text, &object, &ParseOptions::default()).is_err());
    // A string schema takes the string as written.
    let string = schema(json!({"type": "string"}));
    let read = parse_value(r#""[::1]""#, &string, &ParseOptions::default()).unwrap();
    assert_eq!(
        (read.value, read.provenance),
        (json!("[::1]"), Provenance::Clean)
    );
}

#[test]
fn a_number_no_float_holds_never_satisfies_a_string_field_silently() {
    let text = r#"{"name": 1e309}"#;
    match parse_value(text, &names(), &ParseOptions::default()) {
        Err(ParseError::Invalid { violations, .. }) => {
            assert_eq!(violations[0].path, "/name", "{violations}");
        }
        other => panic!("{other:?}"),
    }
    // Nor when something else in the answer had to be fitted first (a number written as a
    // string elsewhere): the fitted value is still refused where the number was kept as text.
    let fitted = schema(json!({"type": "object", "properties": {
        "name": {"type": "string"}, "age": {"type": "integer"}},
        "required": ["name", "age"], "additionalProperties": false}));
    match parse_value(
        r#"{"name": 1e309, "age": "36"}"#,
        &fitted,
        &ParseOptions::default(),
    ) {
        Err(ParseError::Invalid { violations, .. }) => {
            assert_eq!(violations.len(), 1, "{violations}");
            assert_eq!(violations[0].path, "/name", "{violations}");
        }
        other => panic!("{other:?}"),
    }
    // Nor where coercion put it (an object wrapped into the list the schema asks for).
    let listed = schema(json!({"type": "object", "properties": {
        "rows": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}}},
        "required": ["rows"], "additionalProperties": false}));
    let mut numbers_as_written = ParseOptions::default();
    numbers_as_written.coerce.scalars_to_strings = false;
    match parse_value(r#"{"rows": {"name": 1e309}}"#, &listed, &numbers_as_written) {
        Err(ParseError::Invalid { violations, .. }) => {
            assert_eq!(violations[0].path, "/rows/0/name", "{violations}");
        }
        other => panic!("{other:?}"),
    }
    // A number too long for a repair to quote whole is found by its start.
    let long = format!(r#"{{"name": 1{}e400}}"#, "0".repeat(120));
    assert!(
        matches!(
            parse_value(&long, &names(), &ParseOptions::default()),
            Err(ParseError::Invalid { .. })
        ),
        "{long}"
    );
    // The lenient policy writes numbers as strings, and says so.
    let read = parse_value(text, &names(), &ParseOptions::lenient()).unwrap();
    assert_eq!(read.value, json!({"name": "1e309"}));
    assert!(read
        .warnings
        .iter()
        .any(|w| matches!(w, Warning::Repair(r) if r.kind == RepairKind::NumberOutOfRange)));
}

#[test]
fn a_number_read_differently_is_never_clean_where_the_schema_was_enforced() {
    // Where the provider promised JSON, the answer as written is taken whole only when every
    // number in it is the value it is read as: an integer whose digits no float keeps and a
    // non-zero number read as zero (underflow) are each named, wherever they lie.
    let open = schema(json!({"type": "object"}));
    let long = "123456789012345678901234567890";
    for text in [
        format!(r#"{{"n": {long}}}"#),
        format!(r#"{{"a": 0.0, "s": "x", "n": {long}}}"#),
        format!(r#"{{"s": "x", "n": [1.5, {long}], "t": "y"}}"#),
        r#"{"z": 0.0, "u": 1e-400}"#.to_string(),
        r#"{"z": 0.0, "s": "x\"y", "t": "w", "u": [0.25, 1e-400]}"#.to_string(),
    ] {
        for mode in [
            StructuredOutputMode::SchemaEnforced,
            StructuredOutputMode::ToolUseWorkaround,
        ] {
            let read = Reading::new(mode).value(text.as_str(), &open);
            if let Ok(read) = read {
                assert!(!read.warnings.is_empty(), "{mode:?} {text}: clean");
            }
            let strict = ParseOptions::strict();
            let refused = Reading::new(mode)
                .options(&strict)
                .value(text.as_str(), &open);
            assert!(refused.is_err(), "{mode:?} {text}: {refused:?}");
        }
    }
    // Zeros, plain floats and long fractions (read to the nearest float, as every JSON reader
    // reads them) are the value written.
    let plain = r#"{"a": 0.0, "b": 0.5, "c": -0.0e0, "d": 0.1000000000000000000000001}"#;
    let read = Reading::new(StructuredOutputMode::SchemaEnforced)
        .value(plain, &open)
        .unwrap();
    assert!(read.warnings.is_empty(), "{:?}", read.warnings);
    assert_eq!(read.provenance, Provenance::Clean);
}

#[derive(Debug, Deserialize, StructuredOutput)]
#[allow(dead_code)]
struct Person {
    /// Name.
    name: String,
    /// Nickname, if any.
    nick: Option<String>,
}

#[test]
fn a_misnamed_optional_key_is_dropped_with_a_warning_naming_it() {
    let read = parse_response::<Person>(
        r#"{"name": "Ada", "nickname": "Countess"}"#,
        StructuredOutputMode::PromptGuided,
    )
    .unwrap();
    assert_eq!(read.value.nick, None);
    assert_ne!(read.provenance, Provenance::Clean);
    let named = read
        .warnings
        .iter()
        .any(|w| matches!(w, Warning::Recovery(r) if r.path == "/nickname"));
    assert!(named, "{:?}", read.warnings);
}

/// A member whose name a `patternProperties` pattern matches is declared by that pattern: it is
/// fitted by the pattern's schema, and never dropped as unknown where the object allows nothing
/// else. Before: `"x-a"` was dropped as "a key the schema does not declare" (a valid member
/// lost), and a map's members were fitted by `additionalProperties` even where a pattern, not
/// it, applies.
#[test]
fn a_member_a_pattern_names_is_fitted_by_its_pattern_never_dropped_as_unknown() {
    let closed = schema(json!({
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "patternProperties": {"^x-": {"type": "integer"}},
        "additionalProperties": false
    }));
    let read = parse_value(
        r#"{"n": "5", "x-a": "7", "zz": 1}"#,
        &closed,
        &ParseOptions::default(),
    )
    .unwrap();
    assert_eq!(read.value, json!({"n": 5, "x-a": 7}));
    let mut said: Vec<String> = read.warnings.iter().map(|w| w.to_string()).collect();
    said.sort();
    assert_eq!(said.len(), 3, "{said:?}");
    assert!(said[0].contains("/n") && said[1].contains("/x-a") && said[2].contains("/zz"));
    // A pattern's member is fitted by the pattern, the others by `additionalProperties`.
    let map = schema(json!({
        "type": "object",
        "patternProperties": {"^k": {"type": "integer"}},
        "additionalProperties": {"type": "boolean"}
    }));
    let read = parse_value(
        r#"{"k1": "5", "on": "true"}"#,
        &map,
        &ParseOptions::default(),
    )
    .unwrap();
    assert_eq!(read.value, json!({"k1": 5, "on": true}));
}

/// A key `serde_json` gives a meaning of its own when it builds a `Value` (with its `raw_value`
/// feature, which this workspace turns on): an object whose first key is
/// `$serde_json::private::RawValue` would be read as the JSON its string holds. The answer as
/// written is an object with that key, and is read so.
#[test]
fn a_key_serde_json_reads_as_raw_json_is_read_as_a_key() {
    const MAGIC: &str = "$serde_json::private::RawValue";
    let written: serde_json::Value = json!({ MAGIC: "[1, 2]" });
    let open = schema(json!({}));
    for text in [
        format!(r#"{{"{MAGIC}": "[1, 2]"}}"#),
        format!(r#"{{'{MAGIC}': '[1, 2]',}}"#),
        format!(r#"Here: {{"{MAGIC}": "[1, 2]"}}"#),
    ] {
        let read = parse_value(&text, &open, &ParseOptions::default()).unwrap();
        assert_eq!(read.value, written, "{text}");
    }
}

/// `from_json` refuses an object that is a derived type's only under `serde_json`'s special key,
/// and says why at that key.
#[test]
fn a_derived_type_under_serde_json_raw_value_key_is_refused() {
    use structured_examples::HeartbeatDecision;
    let inner = r#"{"severity": "low", "action": "observe", "confidence": 0.5, "rationale": "r", "signals": [], "escalate": false}"#;
    assert!(HeartbeatDecision::from_json(inner).is_ok());
    let text = serde_json::to_string(&json!({ "$serde_json::private::RawValue": inner })).unwrap();
    let refused = HeartbeatDecision::from_json(&text).unwrap_err().to_string();
    assert!(refused.contains("RawValue"), "{refused}");
}

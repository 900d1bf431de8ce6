//! `parse_response` end to end on the seed's HeartbeatDecision: each provenance, the candidate
//! choice, truncation, prose, and bad input.

use proptest::prelude::*;
use serde_json::json;
use structured_examples::heartbeat::HeartbeatDecision;
use structured_runtime::read::coerce::RecoveryKind;
use structured_runtime::read::extract::Source;
use structured_runtime::read::repair::RepairKind;
use structured_runtime::{
    parse_response, parse_value, ParseError, ParseOptions, Provenance, Reading,
    StructuredOutputMode as Mode, Warning,
};

const GOOD: &str = r#"{"severity": "high", "action": "hedge", "confidence": 0.8,
 "rationale": "Volatility doubled.", "signals": [{"source": "vol", "description": "spike",
 "magnitude": 0.9}], "escalate": false}"#;

fn expected() -> HeartbeatDecision {
    serde_json::from_str(GOOD).unwrap()
}

fn recoveries(warnings: &[Warning]) -> Vec<(RecoveryKind, String)> {
    warnings
        .iter()
        .filter_map(|w| match w {
            Warning::Recovery(r) => Some((r.kind, r.path.as_str().to_owned())),
            _ => None,
        })
        .collect()
}

fn repairs(warnings: &[Warning]) -> Vec<RepairKind> {
    warnings
        .iter()
        .filter_map(|w| match w {
            Warning::Repair(r) => Some(r.kind),
            _ => None,
        })
        .collect()
}

#[test]
fn exact_json_is_clean_in_every_mode() {
    for mode in [
        Mode::None,
        Mode::SchemaEnforced,
        Mode::ToolUseWorkaround,
        Mode::PromptGuided,
    ] {
        let parsed = parse_response::<HeartbeatDecision>(&format!("  {GOOD}\n"), mode).unwrap();
        assert_eq!(parsed.value, expected());
        assert_eq!(parsed.provenance, Provenance::Clean);
        assert!(parsed.warnings.is_empty());
    }
}

#[test]
fn a_fenced_answer_in_prose_is_extracted_as_written() {
    let text = format!("Here is my assessment:\n```json\n{GOOD}\n```\nLet me know.");
    let parsed = parse_response::<HeartbeatDecision>(&text, Mode::PromptGuided).unwrap();
    assert_eq!(parsed.value, expected());
    assert_eq!(parsed.provenance, Provenance::Extracted);
    assert_eq!(&text[parsed.span.clone()].trim(), &GOOD);
    assert!(matches!(
        parsed.warnings.as_slice(),
        [Warning::Extracted {
            source: Source::Fence { closed: true },
            ..
        }]
    ));
}

#[test]
fn enforcement_that_did_not_hold_is_said() {
    let text = format!("```json\n{GOOD}\n```");
    let parsed = parse_response::<HeartbeatDecision>(&text, Mode::SchemaEnforced).unwrap();
    assert_eq!(parsed.provenance, Provenance::Extracted);
    assert!(matches!(parsed.warnings[0], Warning::NotAsEnforced { .. }));
}

#[test]
fn broken_syntax_is_repaired_and_each_repair_listed() {
    let text = "{severity: 'high', action: 'hedge', confidence: 0.8, // sure\n rationale: \
                'Volatility doubled.', signals: [{source: 'vol', description: 'spike', \
                magnitude: 0.9},], escalate: False}";
    let parsed = parse_response::<HeartbeatDecision>(text, Mode::PromptGuided).unwrap();
    assert_eq!(parsed.value, expected());
    assert_eq!(parsed.provenance, Provenance::Repaired);
    let kinds = repairs(&parsed.warnings);
    for kind in [
        RepairKind::UnquotedKey,
        RepairKind::SingleQuotes,
        RepairKind::Comment,
        RepairKind::TrailingComma,
        RepairKind::PythonLiteral,
    ] {
        assert!(kinds.contains(&kind), "{kind:?} missing from {kinds:?}");
    }
}

#[test]
fn values_are_fitted_to_the_schema_and_each_recovery_has_its_path() {
    let text = r#"{"Severity": "HIGH", "action": "Hedge", "confidence": "0.8",
      "rationale": "Volatility doubled.", "signals": {"source": "vol", "description": "spike",
      "magnitude": 0.9}, "escalate": "false", "mood": "tense"}"#;
    let parsed = parse_response::<HeartbeatDecision>(text, Mode::PromptGuided).unwrap();
    assert_eq!(parsed.value, expected());
    assert_eq!(parsed.provenance, Provenance::Recovered);
    let got = recoveries(&parsed.warnings);
    let want = [
        (RecoveryKind::RenamedKey, "/Severity"),
        (RecoveryKind::DroppedUnknownKey, "/mood"),
        (RecoveryKind::EnumIgnoringCase, "/severity"),
        (RecoveryKind::EnumIgnoringCase, "/action"),
        (RecoveryKind::NumberFromString, "/confidence"),
        (RecoveryKind::WrappedInArray, "/signals"),
        (RecoveryKind::BoolFromString, "/escalate"),
    ];
    let want: Vec<_> = want.iter().map(|(k, p)| (*k, p.to_string())).collect();
    assert_eq!(got, want);
}

#[test]
fn the_seed_strategies_run_only_when_allowed() {
    let text = r#"{"severity": "low", "action": "observe", "confidence": null, "signals": []}"#;
    let err = parse_response::<HeartbeatDecision>(text, Mode::PromptGuided).unwrap_err();
    let ParseError::Invalid { violations, .. } = err else {
        panic!("{err:?}")
    };
    let mut paths: Vec<&str> = violations.0.iter().map(|v| v.path.as_str()).collect();
    paths.sort_unstable();
    assert_eq!(paths, ["/confidence", "/escalate", "/rationale"]);

    let parsed = Reading::new(Mode::PromptGuided)
        .options(&ParseOptions::lenient())
        .typed::<HeartbeatDecision>(text)
        .unwrap();
    assert_eq!(parsed.provenance, Provenance::Recovered);
    assert_eq!(
        (parsed.value.confidence, parsed.value.rationale.as_str()),
        (0.0, "")
    );
    let got = recoveries(&parsed.warnings);
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(got.iter().all(|(k, _)| k.invents()));
}

#[test]
fn the_candidate_with_fewest_changes_wins_and_ties_go_to_the_last() {
    let draft = GOOD.replace("\"high\"", "\"HIGH\"");
    let last = GOOD.replace("0.8", "0.7");
    // The draft needs a recovery; the last one is exact.
    let text = format!("Draft: {draft}\nFinal: {last}");
    let parsed = parse_response::<HeartbeatDecision>(&text, Mode::PromptGuided).unwrap();
    assert_eq!(parsed.value.confidence, 0.7);
    assert_eq!(parsed.provenance, Provenance::Extracted);
    // Both exact: the last wins.
    let text = format!("First: {GOOD}\nThen: {last}");
    let parsed = parse_response::<HeartbeatDecision>(&text, Mode::PromptGuided).unwrap();
    assert_eq!(parsed.value.confidence, 0.7);
    // Only the first fits the schema: it wins however late the other one is.
    let text = format!("Answer: {GOOD}\nFor reference the schema is {{\"type\": \"object\"}}.");
    let parsed = parse_response::<HeartbeatDecision>(&text, Mode::PromptGuided).unwrap();
    assert_eq!(parsed.value, expected());
}

#[test]
fn a_truncated_answer_is_an_error_with_the_partial_value() {
    let cut = &GOOD[..GOOD.find("\"escalate\"").unwrap() + 12];
    let err = parse_response::<HeartbeatDecision>(cut, Mode::SchemaEnforced).unwrap_err();
    let ParseError::Truncated { partial, warnings } = err else {
        panic!("{err:?}")
    };
    assert_eq!(partial["severity"], "high");
    assert!(warnings.contains(&Warning::Truncated));

    let cut = &GOOD[..GOOD.find("Volatility").unwrap() + 5];
    let options = ParseOptions {
        accept_truncated: true,
        ..ParseOptions::lenient()
    };
    let parsed = Reading::new(Mode::None)
        .options(&options)
        .typed::<HeartbeatDecision>(cut)
        .unwrap();
    assert!(parsed.truncated);
    assert_eq!(parsed.value.rationale, "Volat");
    assert!(parsed.warnings.contains(&Warning::Truncated));
}

#[test]
fn prose_without_json_goes_to_from_text() {
    let text = "Severity is critical; we should exit now. Confidence: 0.9.";
    let parsed = parse_response::<HeartbeatDecision>(text, Mode::PromptGuided).unwrap();
    assert_eq!(parsed.provenance, Provenance::Heuristic);
    assert_eq!(parsed.value.severity, "critical");
    assert_eq!(parsed.value.action, "exit");
    assert_eq!(parsed.value.confidence, 0.9);
    assert!(parsed.text_report.is_some());

    let strict = ParseOptions::strict();
    let err = Reading::new(Mode::PromptGuided)
        .options(&strict)
        .typed::<HeartbeatDecision>(text);
    assert!(matches!(
        err,
        Err(ParseError::NotFound {
            from_text: None,
            ..
        })
    ));
    // Nothing to read at all: no value is claimed.
    let err = parse_response::<HeartbeatDecision>("I cannot help with that.", Mode::None);
    assert!(matches!(err, Err(ParseError::NotFound { .. })), "{err:?}");
}

#[test]
fn strict_options_take_json_as_written_only() {
    let strict = ParseOptions::strict();
    let parsed = Reading::new(Mode::None)
        .options(&strict)
        .typed::<HeartbeatDecision>(GOOD)
        .unwrap();
    assert_eq!(
        (parsed.provenance, parsed.warnings.len()),
        (Provenance::Clean, 0)
    );
    // Found in a fence: refused, with where it was found.
    let text = format!("ok:\n```json\n{GOOD}\n```");
    let err = Reading::new(Mode::None)
        .options(&strict)
        .typed::<HeartbeatDecision>(&text);
    match err {
        Err(ParseError::NotExact { warnings }) => {
            assert!(
                matches!(warnings[..], [Warning::Extracted { .. }]),
                "{warnings:?}"
            )
        }
        other => panic!("{other:?}"),
    }
    // Needing a repair: refused with the repair.
    let err = Reading::new(Mode::None)
        .options(&strict)
        .typed::<HeartbeatDecision>(&GOOD.replace("\"high\"", "'high'"));
    match err {
        Err(ParseError::NotExact { warnings }) => assert!(
            matches!(&warnings[..], [Warning::Repair(r)] if r.kind == RepairKind::SingleQuotes),
            "{warnings:?}"
        ),
        other => panic!("{other:?}"),
    }
    // Only the repair switched off: extraction is still taken.
    let no_repair = ParseOptions {
        repair: false,
        ..ParseOptions::default()
    };
    let parsed = Reading::new(Mode::None)
        .options(&no_repair)
        .typed::<HeartbeatDecision>(&text)
        .unwrap();
    assert_eq!(parsed.provenance, Provenance::Extracted);
}

#[test]
fn a_million_brackets_is_an_error_not_a_crash() {
    let text = "[".repeat(1 << 20);
    let err = parse_response::<HeartbeatDecision>(&text, Mode::PromptGuided).unwrap_err();
    assert!(matches!(err, ParseError::TooDeep(_)), "{err:?}");
    let err =
        structured_runtime::read::repair::repair_text(&"{\"a\":".repeat(1 << 18)).unwrap_err();
    assert!(matches!(
        err,
        structured_runtime::read::repair::RepairError::TooDeep { .. }
    ));
}

#[test]
fn a_schema_given_at_run_time_is_served_the_same_way() {
    let schema = json!({"type": "object", "properties": {
        "name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
        "required": ["name", "age"], "additionalProperties": false});
    let schema = structured_runtime::ResponseSchema::new("person", schema).unwrap();
    let parsed = parse_value(
        "Sure: {name: 'Ada', age: '36', extra: 1}",
        &schema,
        &ParseOptions::default(),
    )
    .unwrap();
    assert_eq!(parsed.value, json!({"name": "Ada", "age": 36}));
    assert_eq!(parsed.provenance, Provenance::Recovered);
    let err = parse_value(
        "{\"name\": \"Ada\", \"age\": -1}",
        &schema,
        &ParseOptions::default(),
    );
    let Err(ParseError::Invalid { violations, .. }) = err else {
        panic!("{err:?}")
    };
    assert_eq!(violations.0[0].path, "/age");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn any_text_parses_or_errors_without_panicking(text in ".{0,400}") {
        let _ = parse_response::<HeartbeatDecision>(&text, Mode::PromptGuided);
        let _ = structured_runtime::read::repair::repair_text(&text);
    }

    #[test]
    fn json_like_text_never_panics_and_values_validate(
        text in r#"[\[\]{}",:'a-z0-9 \n\\.tTfFnN\-]{0,200}"#
    ) {
        if let Ok(parsed) = parse_response::<HeartbeatDecision>(&text, Mode::PromptGuided) {
            use structured_runtime::Validate;
            prop_assert!(parsed.value.validate().is_ok());
        }
        if let Ok(fixed) = structured_runtime::read::repair::repair_text(&text) {
            prop_assert_eq!(fixed.truncated, fixed.repairs.iter().any(|r| r.kind.is_truncation()));
        }
    }
}

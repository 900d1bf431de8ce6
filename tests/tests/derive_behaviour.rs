//! What the derive writes for each kind of field and attribute, and what `Validate` reports:
//! exact schemas and exact reports.

use serde::Deserialize;
use serde_json::json;
use structured_runtime::{FromJsonError, Rule, StructuredOutput, Validate, Violation};

/// How urgent a thing is.
#[derive(StructuredOutput, Deserialize, Debug, Clone, Copy, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Urgency {
    /// Can wait.
    Low,
    VeryHigh,
    #[serde(rename = "now!")]
    Immediate,
    #[serde(skip)]
    #[allow(dead_code)]
    Internal,
}

#[derive(StructuredOutput, Deserialize, Debug)]
#[structured(name = "Probe-1", description = "Overrides the doc comment.")]
/// Not used: the attribute wins.
#[serde(rename_all = "camelCase")]
struct Probe {
    urgency: Urgency,
    maybe_urgency: Option<Urgency>,
    #[serde(rename = "r#type")]
    kind: String,
    r#loop: bool,
    small: u8,
    #[range(-5, 5)]
    offset: i16,
    #[range(min = 1)]
    count: u64,
    #[range(max = 0.5)]
    ratios: Vec<f32>,
    #[range(0.0, 1.0)]
    scores: Option<Vec<Option<f64>>>,
    #[enum_values("a", "b")]
    labels: Vec<String>,
    #[enum_values("x")]
    choice: Option<String>,
    #[serde(default)]
    defaulted: u32,
    #[serde(skip)]
    skipped: Vec<u8>,
    #[allow(clippy::box_collection)] // Box<T> support is what is tested here
    boxed: Box<String>,
}

#[test]
fn schema_of_every_field_kind() {
    let schema = Probe::schema();
    assert_eq!(schema.name(), "Probe-1");
    assert_eq!(schema.description(), Some("Overrides the doc comment."));
    let urgency = json!({
        "type": "string",
        "description": "How urgent a thing is.\n- low: Can wait.",
        "enum": ["low", "very_high", "now!"]
    });
    assert_eq!(
        schema.schema(),
        &json!({
            "type": "object",
            "description": "Overrides the doc comment.",
            "properties": {
                "urgency": urgency,
                "maybeUrgency": {
                    "type": ["string", "null"],
                    "description": "How urgent a thing is.\n- low: Can wait.",
                    "enum": ["low", "very_high", "now!", null]
                },
                "r#type": {"type": "string"},
                "loop": {"type": "boolean"},
                "small": {"type": "integer", "minimum": 0, "maximum": 255},
                "offset": {"type": "integer", "minimum": -5, "maximum": 5},
                "count": {"type": "integer", "minimum": 1, "maximum": 18446744073709551615u64},
                "ratios": {"type": "array", "items": {"type": "number", "maximum": 0.5}},
                "scores": {
                    "type": ["array", "null"],
                    "items": {"type": ["number", "null"], "minimum": 0.0, "maximum": 1.0}
                },
                "labels": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
                "choice": {"type": ["string", "null"], "enum": ["x", null]},
                "defaulted": {"type": "integer", "minimum": 0, "maximum": 4294967295u32},
                "boxed": {"type": "string"}
            },
            "required": [
                "urgency", "maybeUrgency", "r#type", "loop", "small", "offset", "count", "ratios",
                "scores", "labels", "choice", "defaulted", "boxed"
            ],
            "additionalProperties": false
        })
    );
    schema.strict_preflight().unwrap();
}

fn probe_json() -> serde_json::Value {
    json!({
        "urgency": "now!", "maybeUrgency": null, "r#type": "t", "loop": true, "small": 255,
        "offset": -5, "count": 1, "ratios": [0.5, -3.0], "scores": [0.0, null, 1.0],
        "labels": ["a", "b"], "choice": null, "defaulted": 0, "boxed": "x"
    })
}

#[test]
fn valid_probe_reads_with_renames_and_skips() {
    let probe = Probe::from_json(&probe_json().to_string()).unwrap();
    assert_eq!(probe.urgency, Urgency::Immediate);
    assert_eq!(probe.kind, "t");
    assert!(probe.r#loop);
    assert!(probe.skipped.is_empty());
    assert_eq!(*probe.boxed, "x");
}

#[test]
fn validate_reports_every_rule_with_its_path() {
    let mut probe = Probe::from_json(&probe_json().to_string()).unwrap();
    probe.offset = 6;
    probe.count = 0;
    probe.ratios = vec![0.1, 0.7, 0.9];
    probe.scores = Some(vec![Some(1.5), None, Some(-0.1)]);
    probe.labels = vec!["a".into(), "c".into()];
    probe.choice = Some("y".into());
    let report = probe.validate().unwrap_err();
    let got: Vec<(String, Rule, String, String)> = report
        .iter()
        .map(|v| {
            (
                v.path.as_str().to_owned(),
                v.rule,
                v.expected.clone(),
                v.found.clone(),
            )
        })
        .collect();
    let row = |p: &str, r, e: &str, f: &str| (p.to_owned(), r, e.to_owned(), f.to_owned());
    assert_eq!(
        got,
        vec![
            row("/offset", Rule::Range, "a number in [-5, 5]", "6"),
            row("/count", Rule::Range, "a number >= 1", "0"),
            row(
                "/ratios/1",
                Rule::Range,
                "a number <= 0.5",
                "0.699999988079071"
            ),
            row(
                "/ratios/2",
                Rule::Range,
                "a number <= 0.5",
                "0.8999999761581421"
            ),
            row("/scores/0", Rule::Range, "a number in [0.0, 1.0]", "1.5"),
            row("/scores/2", Rule::Range, "a number in [0.0, 1.0]", "-0.1"),
            row("/labels/1", Rule::Enum, "one of \"a\", \"b\"", "\"c\""),
            row("/choice", Rule::Enum, "one of \"x\"", "\"y\""),
        ]
    );
}

#[test]
fn serde_default_field_is_still_required() {
    // Strict mode allows no optional property: the model must write it, and from_json agrees.
    let mut value = probe_json();
    value.as_object_mut().unwrap().remove("defaulted");
    let err = Probe::from_json(&value.to_string()).unwrap_err();
    assert_eq!(
        err.violations().unwrap().as_slice(),
        &[Violation {
            path: structured_runtime::Pointer::parse("/defaulted").unwrap(),
            rule: Rule::Required,
            expected: "property `defaulted`".into(),
            found: "nothing".into(),
        }]
    );
}

#[test]
fn skipped_field_and_skipped_variant_are_not_accepted_from_the_model() {
    let mut value = probe_json();
    value["skipped"] = json!([1]);
    let err = Probe::from_json(&value.to_string()).unwrap_err();
    assert_eq!(err.violations().unwrap()[0].rule, Rule::AdditionalProperty);
    let mut value = probe_json();
    value["urgency"] = json!("internal");
    assert!(Probe::from_json(&value.to_string()).is_err());
}

#[test]
fn nested_violations_are_found_through_vec_and_option() {
    use structured_examples::{DreamIntegration, HeartbeatDecision};
    let json = r#"{"severity":"high","action":"hedge","confidence":0.9,"rationale":"r",
        "signals":[{"source":"price","description":"d","magnitude":0.2},
                   {"source":"volume","description":"d","magnitude":0.4},
                   {"source":"liquidity","description":"d","magnitude":1.7}],
        "escalate":false}"#;
    let err = HeartbeatDecision::from_json(json).unwrap_err();
    let v = &err.violations().unwrap()[0];
    assert_eq!(
        v.to_string(),
        "/signals/2/magnitude: range: expected a number in [0.0, 1.0], found 1.7"
    );

    let json = r#"{"promoted":[{"hypothesis_id":"h","summary":"s","confidence":2,"rationale":"r"}],
        "staged":[],"discarded":[],"playbook_diff":null}"#;
    let err = DreamIntegration::from_json(json).unwrap_err();
    assert_eq!(err.violations().unwrap()[0].path, "/promoted/0/confidence");
}

#[test]
fn error_display_lists_every_violation() {
    let err = structured_examples::DaimonAppraisal::from_json(
        r#"{"pleasure":2,"arousal":-3,"dominance":0,"primary_emotion":"joy","secondary_emotion":null,"trigger":"t","memory_bias":"m"}"#,
    )
    .unwrap_err();
    assert!(matches!(err, FromJsonError::Invalid(_)));
    assert_eq!(
        err.to_string(),
        "2 violations\n  /pleasure: range: expected a number in [-1.0, 1.0], found 2.0\n  /arousal: range: expected a number in [-1.0, 1.0], found -3.0"
    );
}

/// `#[length]`: characters of a string, items of a list, carried into the schema, `Validate`,
/// `from_json`'s report, the guidance, and the validator of record's verdict.
#[derive(Debug, serde::Deserialize, serde::Serialize, StructuredOutput, PartialEq)]
struct Commit {
    /// The summary line.
    #[length(max = 72)]
    title: String,
    /// Labels.
    #[length(min = 1, max = 3)]
    labels: Vec<String>,
    /// A nickname, if any.
    #[length(min = 2)]
    nick: Option<String>,
}

#[test]
fn length_rules_reach_every_place_a_rule_goes() {
    use structured_runtime::{parse_value, ParseError, ParseOptions, Rule};
    let schema = Commit::schema().schema().clone();
    assert_eq!(schema["properties"]["title"]["maxLength"], 72);
    assert_eq!(schema["properties"]["labels"]["minItems"], 1);
    assert_eq!(schema["properties"]["labels"]["maxItems"], 3);
    assert_eq!(schema["properties"]["nick"]["minLength"], 2);
    // A round trip of a valid value.
    let ok = Commit {
        title: "é".repeat(72),
        labels: vec!["a".into()],
        nick: None,
    };
    let text = serde_json::to_string(&ok).unwrap();
    assert_eq!(
        Commit::from_json(&text).unwrap(),
        ok,
        "72 characters, 144 bytes: fits"
    );
    // Every broken rule, with its path.
    let bad = r#"{"title": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "labels": [], "nick": "x"}"#;
    let err = Commit::from_json(bad).unwrap_err();
    let report: Vec<(String, Rule)> = err
        .violations()
        .unwrap()
        .iter()
        .map(|v| (v.path.as_str().to_owned(), v.rule))
        .collect();
    assert_eq!(
        report,
        [
            ("/title".to_owned(), Rule::Length),
            ("/labels".to_owned(), Rule::Items),
            ("/nick".to_owned(), Rule::Length)
        ]
    );
    // The validator of record agrees: the derived schema refuses the same value.
    let as_value = parse_value(bad, Commit::schema(), &ParseOptions::strict());
    assert!(
        matches!(as_value, Err(ParseError::Invalid { .. })),
        "{as_value:?}"
    );
    // `Validate` on a value built in code.
    let built = Commit {
        title: "t".into(),
        labels: vec!["a".into(), "b".into(), "c".into(), "d".into()],
        nick: Some("ab".into()),
    };
    let violations = built.validate().unwrap_err();
    assert_eq!(violations.len(), 1);
    assert_eq!(violations[0].expected, "1 to 3 items");
    // The guidance names the limits.
    let guidance = Commit::schema().prompt_guidance();
    assert!(guidance.contains("72"), "{guidance}");
    // Lowered for every target: kept where the target enforces it, moved into the description
    // (and reported) where it does not, never dropped.
    use structured_runtime::provider::dialect::SchemaTarget;
    for target in SchemaTarget::ALL {
        let lowered = Commit::schema().lowered(target).unwrap().to_string();
        assert!(lowered.contains("72"), "{target:?}: {lowered}");
    }
    let moved = Commit::schema().moved(SchemaTarget::OpenAiStrict).unwrap();
    assert!(
        moved
            .iter()
            .any(|m| m.keywords.iter().any(|k| k == "maxLength")),
        "{moved:?}"
    );
}

#[derive(Debug, serde::Deserialize, serde::Serialize, StructuredOutput, PartialEq)]
struct Ticket {
    /// The ticket id.
    #[pattern("^[A-Z]{3}-[0-9]+$")]
    id: String,
    /// Related ids.
    #[pattern("^[A-Z]{3}-[0-9]+$")]
    related: Vec<String>,
}

#[test]
fn pattern_rules_reach_every_place_a_rule_goes() {
    use structured_runtime::{parse_value, ParseError, ParseOptions, Rule};
    let schema = Ticket::schema().schema().clone();
    assert_eq!(schema["properties"]["id"]["pattern"], "^[A-Z]{3}-[0-9]+$");
    assert_eq!(
        schema["properties"]["related"]["items"]["pattern"],
        "^[A-Z]{3}-[0-9]+$"
    );
    let ok = Ticket {
        id: "OPS-12".into(),
        related: vec!["ENG-3".into()],
    };
    assert_eq!(
        Ticket::from_json(&serde_json::to_string(&ok).unwrap()).unwrap(),
        ok
    );
    let bad = r#"{"id": "ops-12", "related": ["ENG-3", "x ENG-4"]}"#;
    let err = Ticket::from_json(bad).unwrap_err();
    let report: Vec<(String, Rule)> = err
        .violations()
        .unwrap()
        .iter()
        .map(|v| (v.path.as_str().to_owned(), v.rule))
        .collect();
    assert_eq!(
        report,
        [
            ("/id".to_owned(), Rule::Pattern),
            ("/related/1".to_owned(), Rule::Pattern)
        ]
    );
    // The validator of record reads the pattern the same way (a search; anchors are its own).
    assert!(matches!(
        parse_value(bad, Ticket::schema(), &ParseOptions::strict()),
        Err(ParseError::Invalid { .. })
    ));
    let unanchored = structured_runtime::ResponseSchema::new(
        "u",
        json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "[0-9]"}}}),
    )
    .unwrap();
    assert!(parse_value(r#"{"s": "abc1"}"#, &unanchored, &ParseOptions::strict()).is_ok());
    assert!(Ticket::schema().prompt_guidance().contains("[A-Z]{3}"));
}

mod refund_checks {
    pub fn no_shouting(s: &str) -> Result<(), String> {
        if s.chars()
            .filter(|c| c.is_alphabetic())
            .all(|c| c.is_uppercase())
            && !s.is_empty()
        {
            Err("the reason is all capitals".into())
        } else {
            Ok(())
        }
    }
    pub fn not_a_placeholder(s: &str) -> Result<(), &'static str> {
        if s.trim() == "TBD" {
            Err("the reason is a placeholder")
        } else {
            Ok(())
        }
    }
    pub fn amount_fits_kind(r: &super::Refund) -> Result<(), String> {
        match (r.kind.as_str(), r.amount) {
            ("full", Some(_)) => Err("a full refund takes no amount".into()),
            ("partial", None) => Err("a partial refund needs its amount".into()),
            _ => Ok(()),
        }
    }
}

/// A refund: a custom rule on a field (two of them), and one on the whole value.
#[derive(Debug, serde::Deserialize, serde::Serialize, StructuredOutput, PartialEq)]
#[validate(with = refund_checks::amount_fits_kind)]
struct Refund {
    #[enum_values("full", "partial")]
    kind: String,
    #[range(min = 0.0)]
    amount: Option<f64>,
    #[length(max = 40)]
    #[validate(with = refund_checks::no_shouting)]
    #[validate(with = refund_checks::not_a_placeholder)]
    reason: String,
}

#[test]
fn custom_validators_run_after_the_structural_rules_and_report_like_any_rule() {
    use structured_runtime::Rule;
    let ok = Refund {
        kind: "partial".into(),
        amount: Some(12.5),
        reason: "Late delivery".into(),
    };
    assert!(ok.validate().is_ok());
    // Both field checks run; their messages are what was found.
    let v = Refund {
        kind: "full".into(),
        amount: None,
        reason: "TBD".into(),
    }
    .validate()
    .unwrap_err();
    let report: Vec<(String, Rule, String)> = v
        .iter()
        .map(|v| (v.path.as_str().to_owned(), v.rule, v.found.clone()))
        .collect();
    assert_eq!(
        report,
        [
            (
                "/reason".to_owned(),
                Rule::Custom,
                "the reason is all capitals".to_owned()
            ),
            (
                "/reason".to_owned(),
                Rule::Custom,
                "the reason is a placeholder".to_owned()
            ),
        ]
    );
    assert!(
        v[0].expected.contains("refund_checks::no_shouting"),
        "{}",
        v[0].expected
    );
    // A field that breaks a structural rule is not handed to the custom checks.
    let long = "A".repeat(50);
    let v = Refund {
        kind: "full".into(),
        amount: None,
        reason: long,
    }
    .validate()
    .unwrap_err();
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].rule, Rule::Length);
    // The whole value's check runs once every field holds, and from_json reports it.
    let err =
        Refund::from_json(r#"{"kind": "full", "amount": 5.0, "reason": "Damaged"}"#).unwrap_err();
    let v = err.violations().unwrap();
    assert_eq!(v.len(), 1);
    assert_eq!((v[0].path.as_str(), v[0].rule), ("", Rule::Custom));
    assert_eq!(v[0].found, "a full refund takes no amount");
}

#[derive(Debug, serde::Deserialize, serde::Serialize, StructuredOutput, PartialEq)]
struct Contact {
    #[format("email")]
    email: String,
    #[format("date")]
    since: Option<String>,
    #[format("uri")]
    links: Vec<String>,
}

#[test]
fn format_rules_are_checked_by_the_validator_of_record() {
    use structured_runtime::{parse_value, ParseError, ParseOptions, Rule};
    let schema = Contact::schema().schema().clone();
    assert_eq!(schema["properties"]["email"]["format"], "email");
    assert_eq!(schema["properties"]["links"]["items"]["format"], "uri");
    let ok = r#"{"email": "ada@example.com", "since": "2024-02-29", "links": ["https://example.com/a"]}"#;
    assert!(Contact::from_json(ok).is_ok());
    let bad = r#"{"email": "not an address", "since": "2023-02-30", "links": ["https://example.com", "::"]}"#;
    let err = Contact::from_json(bad).unwrap_err();
    let report: Vec<(String, Rule)> = err
        .violations()
        .unwrap()
        .iter()
        .map(|v| (v.path.as_str().to_owned(), v.rule))
        .collect();
    assert_eq!(
        report,
        [
            ("/email".to_owned(), Rule::Format),
            ("/since".to_owned(), Rule::Format),
            ("/links/1".to_owned(), Rule::Format)
        ]
    );
    // The same verdict from the schema alone.
    assert!(matches!(
        parse_value(bad, Contact::schema(), &ParseOptions::strict()),
        Err(ParseError::Invalid { .. })
    ));
    assert!(parse_value(ok, Contact::schema(), &ParseOptions::strict()).is_ok());
    // Every target takes it: kept where enforced, else moved into the description.
    use structured_runtime::provider::dialect::SchemaTarget;
    for target in SchemaTarget::ALL {
        let lowered = Contact::schema().lowered(target);
        assert!(lowered.is_ok(), "{target:?}: {lowered:?}");
        assert!(lowered.unwrap().to_string().contains("email"), "{target:?}");
    }
}

/// A generic wrapper: each instantiation has its own schema and its own name.
#[derive(Debug, serde::Deserialize, StructuredOutput)]
struct Envelope<T> {
    id: String,
    body: T,
}

#[derive(Debug, serde::Deserialize, StructuredOutput)]
#[structured(name = "boxed")]
struct Named<T> {
    body: T,
}

#[derive(Debug, serde::Deserialize, StructuredOutput)]
struct TicketBody {
    #[length(max = 10)]
    title: String,
}

#[test]
fn each_instantiation_of_a_generic_type_has_its_own_name_and_a_given_name_wins() {
    assert_eq!(
        Envelope::<TicketBody>::schema().name(),
        "envelope_ticket_body"
    );
    assert_eq!(Envelope::<String>::schema().name(), "envelope_string");
    assert_eq!(
        Envelope::<Vec<TicketBody>>::schema().name(),
        "envelope_vec_ticket_body"
    );
    assert_eq!(Named::<TicketBody>::schema().name(), "boxed");
    // Each instantiation's schema is its own.
    let a = Envelope::<TicketBody>::schema().schema();
    let b = Envelope::<String>::schema().schema();
    assert_ne!(a, b);
    assert!(
        Envelope::<TicketBody>::from_json(r#"{"id": "1", "body": {"title": "short"}}"#).is_ok()
    );
}

/// Serialize-only types: a type the program only sends (tool parameters) derives without
/// `Deserialize`. Its schema is the one the same type gets when it is also read, and its rules
/// check a value the program built before it is sent. Reading one is a compile error at the
/// read (`ui-tests/tests/ui/serde/read_a_type_only_sent.rs`).
#[test]
fn a_type_the_program_only_sends_derives_its_schema_and_rules() {
    use structured_runtime::provider::wire::Tool;

    /// Where to send the order.
    #[derive(StructuredOutput, serde::Serialize)]
    struct Venue {
        #[enum_values("spot", "perp")]
        market: String,
    }
    /// Place an order.
    #[derive(StructuredOutput, serde::Serialize)]
    struct PlaceOrder {
        #[length(min = 1, max = 8)]
        symbol: String,
        #[range(min = 0.0)]
        size: f64,
        venue: Venue,
    }
    mod read {
        /// Where to send the order.
        #[derive(structured_runtime::StructuredOutput, serde::Deserialize)]
        pub struct Venue {
            #[enum_values("spot", "perp")]
            pub market: String,
        }
        /// Place an order.
        #[derive(structured_runtime::StructuredOutput, serde::Deserialize)]
        pub struct PlaceOrder {
            #[length(min = 1, max = 8)]
            pub symbol: String,
            #[range(min = 0.0)]
            pub size: f64,
            pub venue: Venue,
        }
    }
    let tool = Tool::of::<PlaceOrder>("place_order", "Place an order.");
    assert_eq!(
        tool.parameters,
        *<read::PlaceOrder as StructuredOutput>::schema().schema()
    );
    let bad = PlaceOrder {
        symbol: String::new(),
        size: -1.0,
        venue: Venue {
            market: "otc".into(),
        },
    };
    let paths: Vec<String> = bad
        .validate()
        .unwrap_err()
        .iter()
        .map(|v| v.path.to_string())
        .collect();
    assert_eq!(paths, ["/symbol", "/size", "/venue/market"]);
}

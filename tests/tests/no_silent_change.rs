//! The promise as a differential property: for any answer, a value reported `Clean` is exactly
//! what `serde_json` reads from the answer as written (and the answer has no repeated key);
//! anything else carries at least one warning; a value read from a cut answer carries
//! `Truncated`; strict options return only clean values. Answers are JSON objects rendered by
//! `serde_json`, then broken in the ways models and people break them.

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use structured_examples::DaimonAppraisal;
use structured_runtime::read::repair::repair_text;
use structured_runtime::{
    parse_response, parse_value, ParseOptions, Parsed, Provenance, Reading, ResponseSchema,
    StructuredOutputMode as Mode, Warning,
};

fn object() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(Value::from),
        (-1000.0f64..1000.0).prop_map(Value::from),
        "[a-z \"',{}:]{0,10}".prop_map(Value::String),
    ];
    let value = leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    });
    prop::collection::btree_map("[a-z_]{1,8}", value, 0..5)
        .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>()))
}

/// Ways an answer is broken: each inserts text at a position (a fraction of the length).
fn edit() -> impl Strategy<Value = (f64, &'static str)> {
    let pieces = prop::sample::select(vec![
        ",",
        ",,",
        "\"",
        "'",
        "}",
        "]",
        "// note }\n",
        "\"k\": 1,500, ",
        "\"k\": 1e999, ",
        "\"k\": 123456789012345678901234567890, ",
        "\"k\": -0, ",
        "\"dup\": 1, \"dup\": 2, ",
        "\"t\": \"\"\"x\"y\"\"\", ",
        "\"s\": \"a\\\nb\", ",
        "{} ",
        " = ",
        "True",
        "NaN",
        "\n```json\n",
        "Sure! ",
    ]);
    (0.0f64..1.0, pieces)
}

fn answer() -> impl Strategy<Value = String> {
    (
        object(),
        prop::collection::vec(edit(), 0..3),
        prop::option::of(0.0f64..1.0),
    )
        .prop_map(|(value, edits, cut)| {
            let mut text = value.to_string();
            for (at, piece) in edits {
                let mut i = (at * text.len() as f64) as usize;
                while !text.is_char_boundary(i) {
                    i -= 1;
                }
                text.insert_str(i, piece);
            }
            if let Some(cut) = cut.filter(|c| *c > 0.5) {
                let mut i = (cut * text.len() as f64) as usize;
                while !text.is_char_boundary(i) {
                    i -= 1;
                }
                text.truncate(i);
            }
            text
        })
}

/// The text as `serde_json` reads it, when it is JSON with no key given twice in one object
/// (where serde_json would keep one of the values without a word).
fn as_written(text: &str) -> Option<Value> {
    struct Unique;
    impl<'de> serde::de::Visitor<'de> for Unique {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("JSON")
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
            while a.next_element::<UniqueValue>()?.is_some() {}
            Ok(())
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
            let mut seen = std::collections::HashSet::new();
            while let Some(k) = a.next_key::<String>()? {
                a.next_value::<UniqueValue>()?;
                if !seen.insert(k) {
                    return Err(serde::de::Error::custom("repeated key"));
                }
            }
            Ok(())
        }
    }
    struct UniqueValue;
    impl<'de> serde::Deserialize<'de> for UniqueValue {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(Unique).map(|()| UniqueValue)
        }
    }
    serde_json::from_str::<UniqueValue>(text).ok()?;
    serde_json::from_str(text).ok()
}

fn check<T: PartialEq + std::fmt::Debug>(
    text: &str,
    parsed: &Parsed<T>,
    value: Value,
) -> Result<(), TestCaseError> {
    if parsed.provenance == Provenance::Clean {
        prop_assert!(
            parsed.warnings.is_empty(),
            "Clean with warnings: {:?}",
            parsed.warnings
        );
        prop_assert_eq!(
            as_written(text),
            Some(value),
            "Clean but not the text as written"
        );
    } else {
        prop_assert!(
            !parsed.warnings.is_empty(),
            "{:?} without a warning",
            parsed.provenance
        );
    }
    if parsed.truncated {
        prop_assert!(parsed.warnings.contains(&Warning::Truncated));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn clean_means_as_written_and_every_change_is_a_warning(text in answer()) {
        let schema = ResponseSchema::new("any", json!({"type": "object"})).unwrap();
        let lenient = ParseOptions { accept_truncated: true, ..ParseOptions::lenient() };
        if let Ok(parsed) = parse_value(&text, &schema, &lenient) {
            check(&text, &parsed, parsed.value.clone())?;
        }
        if let Ok(parsed) = parse_value(&text, &schema, &ParseOptions::strict()) {
            prop_assert_eq!(parsed.provenance, Provenance::Clean);
            prop_assert!(parsed.warnings.is_empty());
            prop_assert_eq!(as_written(text.trim()), Some(parsed.value.clone()));
        }
        if let Ok(fixed) = repair_text(&text) {
            if fixed.is_clean() {
                prop_assert_eq!(as_written(&text), Some(fixed.value));
            }
            if fixed.truncated {
                prop_assert!(fixed.repairs.iter().any(|r| r.kind.is_truncation()));
            }
        }
    }

    /// The text repairer and the value repairer agree on every broken answer: the same text
    /// as `serde_json` writes the value, the same repairs.
    #[test]
    fn the_text_repairer_agrees_with_the_value_repairer(text in answer()) {
        use structured_runtime::read::repair::repair_text_json;
        match (repair_text(&text), repair_text_json(&text)) {
            (Ok(value), Ok(json)) => {
                prop_assert_eq!(json.value, value.value.to_string());
                prop_assert_eq!(json.repairs, value.repairs);
                prop_assert_eq!(json.truncated, value.truncated);
            }
            (Err(a), Err(b)) => prop_assert_eq!(a.to_string(), b.to_string()),
            (a, b) => prop_assert!(false, "{:?} / {:?}", a, b),
        }
    }

    #[test]
    fn a_derived_type_keeps_the_promise_too(text in answer(), good in any::<bool>()) {
        // Half the time, a valid appraisal broken the same ways.
        let text = if good {
            text.replacen('{', r#"{"pleasure": 0.2, "arousal": 0.5, "dominance": -0.1, "primary_emotion": "joy", "secondary_emotion": null, "trigger": "x", "memory_bias": "recent", "#, 1)
        } else {
            text
        };
        if let Ok(parsed) = parse_response::<DaimonAppraisal>(&text, Mode::PromptGuided) {
            let value = serde_json::to_value(&parsed.value).unwrap();
            check(&text, &parsed, value)?;
        }
        if let Ok(parsed) = Reading::new(Mode::None).options(&ParseOptions::strict()).typed::<DaimonAppraisal>(&text) {
            prop_assert_eq!(parsed.provenance, Provenance::Clean);
            prop_assert!(parsed.warnings.is_empty());
        }
    }
}

#[test]
fn each_reported_change_of_the_issue_is_a_warning_now() {
    let schema = ResponseSchema::new("any", json!({"type": "object"})).unwrap();
    for text in [
        r#"{"a": 1,500}"#,
        r#"{"a": 1e999}"#,
        r#"{"a": 123456789012345678901234567890}"#,
        r#"{"a": "x",, "b": 1}"#,
        r#"{"code": """print("hi")"""}"#,
        "{\"a\": \"x\\\ny\"}",
        r#"{"a": 1, "a": 2}"#,
        r#"{"a":2}{}"#,
        r#"{"a": 1},"#,
        r#"{"a" = 1}"#,
        r#"{"a": -Infinity}"#,
    ] {
        let parsed = parse_value(text, &schema, &ParseOptions::default()).unwrap();
        assert_ne!(parsed.provenance, Provenance::Clean, "{text}");
        assert!(!parsed.warnings.is_empty(), "{text}");
        assert!(
            parse_value(text, &schema, &ParseOptions::strict()).is_err(),
            "{text}"
        );
    }
    let parsed = parse_value(r#"{"a": -0}"#, &schema, &ParseOptions::strict()).unwrap();
    assert_eq!(
        parsed.value.to_string(),
        r#"{"a":-0.0}"#,
        "the sign is kept"
    );
    let cut = parse_value(
        r#"{"escalate": false // done }"#,
        &schema,
        &ParseOptions::default(),
    )
    .unwrap();
    assert!(!cut.truncated);
}

//! The validator of record decides for derived types too. Where reading a value into its Rust
//! type cannot vouch for it as written (a set, a hand-written type more lenient than its schema,
//! an enum with data, a flattened field), the value is read once as JSON and the compiled
//! `jsonschema` validator judges it against the schema; the explanation walk only says why.
//! A keyword the walk has no words for still refuses the value, and a key given twice is
//! refused on that path as on the typed one.

use serde::Deserialize;
use serde_json::{json, Value};
use structured_runtime::schema::{Path, SchemaGen, SchemaType};
use structured_runtime::{
    complete_when_whole, parse_response, FromJsonError, Rule, StructuredOutput,
    StructuredOutputMode, Validate, Violation,
};

/// A string that is never `"x"`: its schema says so with `not`, a keyword the explanation walk
/// does not judge, and its `Deserialize` takes any string, so its type asks for the check.
#[derive(Deserialize, Debug, PartialEq)]
struct NotX(String);

impl SchemaType for NotX {
    fn json_schema(gen: &mut SchemaGen) -> Value {
        gen.check_against_schema();
        json!({"type": "string", "not": {"const": "x"}})
    }
}

complete_when_whole!(NotX);

impl Validate for NotX {
    fn validate_at(&self, _: &Path<'_>, _: &mut Vec<Violation>) {}
}

#[derive(StructuredOutput, Deserialize, Debug, PartialEq)]
struct Holder {
    v: NotX,
    n: u8,
}

#[derive(StructuredOutput, Deserialize, Debug, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Step {
    Wait { seconds: u32 },
    Stop,
}

#[derive(StructuredOutput, Deserialize, Debug, PartialEq)]
struct Plan {
    step: Step,
}

#[derive(StructuredOutput, Deserialize, Debug, PartialEq)]
struct Inner {
    depth: u8,
}

#[derive(StructuredOutput, Deserialize, Debug, PartialEq)]
struct Outer {
    name: String,
    #[serde(flatten)]
    inner: Inner,
}

fn rules(e: &FromJsonError) -> Vec<(String, Rule)> {
    e.violations()
        .unwrap_or_else(|| panic!("not a violation: {e}"))
        .iter()
        .map(|v| (v.path.as_str().to_owned(), v.rule))
        .collect()
}

#[test]
fn a_keyword_the_walk_cannot_judge_still_refuses_the_value() {
    let ok = Holder::from_json(r#"{"v": "y", "n": 1}"#).unwrap();
    assert_eq!(ok.v, NotX("y".into()));
    let refused = Holder::from_json(r#"{"v": "x", "n": 1}"#).unwrap_err();
    assert_eq!(rules(&refused), [("/v".to_owned(), Rule::Not)]);
    // The same verdict from a value already parsed, and through the pipeline.
    assert!(Holder::from_value(&json!({"v": "x", "n": 1})).is_err());
    assert!(parse_response::<Holder>(
        r#"{"v": "x", "n": 1}"#,
        StructuredOutputMode::SchemaEnforced
    )
    .is_err());
    let parsed = parse_response::<Holder>(
        r#"{"v": "y", "n": 1}"#,
        StructuredOutputMode::SchemaEnforced,
    )
    .unwrap();
    assert_eq!(parsed.provenance, structured_runtime::Provenance::Clean);
    assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
}

#[test]
fn types_read_through_a_json_value_refuse_a_key_given_twice() {
    let twice = [
        (r#"{"v": "y", "n": 1, "n": 2}"#, "Holder"),
        (
            r#"{"step": {"kind": "wait", "seconds": 1, "seconds": 9}}"#,
            "Plan",
        ),
        (r#"{"name": "a", "depth": 1, "depth": 2}"#, "Outer"),
    ];
    for (json, which) in twice {
        let e = match which {
            "Holder" => Holder::from_json(json).map(|_| ()).unwrap_err(),
            "Plan" => Plan::from_json(json).map(|_| ()).unwrap_err(),
            _ => Outer::from_json(json).map(|_| ()).unwrap_err(),
        };
        let v = e.violations().unwrap_or_else(|| panic!("{which}: {e}"));
        assert_eq!(v[0].rule, Rule::Deserialize, "{which}: {e}");
        assert!(
            v[0].found.contains("twice") || v[0].found.contains("duplicate"),
            "{which}: {e}"
        );
    }
}

#[test]
fn enums_with_data_and_flattened_fields_are_judged_by_the_schema() {
    assert_eq!(
        Plan::from_json(r#"{"step": {"kind": "wait", "seconds": 3}}"#).unwrap(),
        Plan {
            step: Step::Wait { seconds: 3 }
        }
    );
    assert_eq!(
        Plan::from_json(r#"{"step": {"kind": "stop"}}"#).unwrap(),
        Plan { step: Step::Stop }
    );
    // serde would read a stop with a stray key; the schema closes the variant.
    let e = Plan::from_json(r#"{"step": {"kind": "stop", "seconds": 3}}"#).unwrap_err();
    assert!(!rules(&e).is_empty());
    assert_eq!(
        Outer::from_json(r#"{"name": "a", "depth": 2}"#).unwrap(),
        Outer {
            name: "a".into(),
            inner: Inner { depth: 2 }
        }
    );
    // serde's flatten would drop an unknown key; the schema refuses it.
    let e = Outer::from_json(r#"{"name": "a", "depth": 2, "extra": 1}"#).unwrap_err();
    assert_eq!(rules(&e)[0].0, "/extra");
    // A number no float holds as written (it underflows to zero) is refused on this path too.
    let e = Outer::from_json(r#"{"name": "a", "depth": 1e-400}"#).unwrap_err();
    assert!(matches!(e, FromJsonError::Inexact { .. }), "{e}");
}

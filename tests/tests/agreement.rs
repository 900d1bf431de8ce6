//! Schema ⇔ from_json agreement: for random JSON values shaped like each type, valid and invalid,
//! `T::from_json` accepts exactly the values the `jsonschema` crate accepts against `T::schema()`.
//!
//! Values are generated from the schema itself: mostly what it asks for, with a small chance at
//! every node of something else (a missing or unknown property, a wrong type, a number out of
//! range or fractional, a string outside the enum, an integral float for an integer), so about
//! half the values are valid and every kind of violation occurs.
//!
//! Each value is also written in the shape OpenAI strict mode is asked for (maps as lists of
//! entries, a root enum wrapped) and read back by the pipeline: clean exactly when valid.

mod common;

use common::generate::value_for;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::Deserialize;
use serde_json::{json, Value};
use structured_examples::*;
use structured_runtime::provider::dialect::SchemaTarget;
use structured_runtime::{
    parse_value, Answer, ParseOptions, Provenance, Reading, StructuredOutput, StructuredOutputMode,
};

/// Runs the agreement check for `T` over `cases` random values; returns (valid, invalid) counts.
fn agree<T: StructuredOutput>(cases: u32) -> (u32, u32) {
    let schema = T::schema().schema().clone();
    // The validator as the library configures it: `format` asserted.
    let validator = jsonschema::options()
        .offline()
        .should_validate_formats(true)
        .should_ignore_unknown_formats(false)
        .build(&schema)
        .expect("derived schema compiles");
    let strategy = value_for(&schema, &schema, 0);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let counts = std::cell::Cell::new((0u32, 0u32));
    let result = runner.run(&strategy, |value| {
        let text = value.to_string();
        let schema_says = validator.is_valid(&value);
        let ours = T::from_json(&text);
        prop_assert_eq!(
            ours.is_ok(),
            schema_says,
            "type {}: from_json said {:?} on {}",
            T::schema().name(),
            ours.as_ref().err(),
            text
        );
        // The schema as data, read by the pipeline in strict mode: clean exactly when valid.
        let read = parse_value(&text, T::schema(), &ParseOptions::strict());
        let clean = read
            .as_ref()
            .is_ok_and(|p| p.provenance == Provenance::Clean && p.value == value);
        prop_assert_eq!(
            clean,
            schema_says,
            "parse_value said {:?} on {}",
            read,
            text
        );
        // In the shape OpenAI strict mode is asked for (maps as entries, a root that is not an
        // object wrapped), read back by the pipeline in strict mode: clean exactly when valid.
        let reshape = T::schema()
            .reshape(SchemaTarget::OpenAiStrict)
            .expect("every derived schema lowers for OpenAI strict");
        if let Some(wire) = to_wire(&schema, &value) {
            let wire = match &reshape.root_key {
                Some(key) => json!({ key.as_str(): wire }),
                None => wire,
            };
            let read = Reading::new(StructuredOutputMode::SchemaEnforced)
                .options(&ParseOptions::strict())
                .reshape(reshape)
                .typed::<T>(&Answer::Text(wire.to_string()));
            let clean = read
                .as_ref()
                .is_ok_and(|p| p.provenance == Provenance::Clean);
            prop_assert_eq!(
                clean,
                schema_says,
                "reshaped: {:?} on {}",
                read.as_ref().err(),
                wire
            );
        }
        let (v, i) = counts.get();
        counts.set(if schema_says { (v + 1, i) } else { (v, i + 1) });
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    counts.get()
}

/// `value` as OpenAI strict mode is asked to write it: each map (an object node with a schema
/// for its values and no properties) a list of `{key, value}` entries. `None` when that is
/// ambiguous: a list already at a map's place reads as entries, so it says nothing about the
/// value it came from. The derived types here hold no map under an `anyOf`.
fn to_wire(node: &Value, value: &Value) -> Option<Value> {
    let is_map = node.get("properties").is_none()
        && node
            .get("additionalProperties")
            .is_some_and(Value::is_object);
    Some(match value {
        Value::Array(_) if is_map => return None,
        Value::Object(map) if is_map => Value::Array(
            map.iter()
                .map(|(k, v)| {
                    Some(json!({"key": k, "value": to_wire(&node["additionalProperties"], v)?}))
                })
                .collect::<Option<_>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let sub = node.get("properties").and_then(|p| p.get(k));
                    Some((k.clone(), sub.map_or(Some(v.clone()), |s| to_wire(s, v))?))
                })
                .collect::<Option<_>>()?,
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let sub = node
                        .get("prefixItems")
                        .and_then(|p| p.get(i))
                        .or_else(|| node.get("items"));
                    sub.map_or(Some(v.clone()), |s| to_wire(s, v))
                })
                .collect::<Option<_>>()?,
        ),
        other => other.clone(),
    })
}

/// Extra shapes beyond the examples: unit enums, nested options, every integer width.
#[derive(StructuredOutput, Deserialize, Debug)]
struct Shapes {
    mood: Mood,
    maybe_mood: Option<Mood>,
    inner: Option<Signal>,
    tiny: i8,
    wide: u64,
    #[range(-3, 3)]
    offsets: Vec<i32>,
    #[enum_values("a", "b")]
    tags: Vec<String>,
    #[range(0.0, 1.0)]
    weights: Option<Vec<Option<f64>>>,
}

#[derive(StructuredOutput, Deserialize, Debug)]
#[serde(rename_all = "lowercase")]
enum Mood {
    Calm,
    Tense,
}

/// A currency: a unit enum that keys a map.
#[derive(StructuredOutput, Deserialize, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "UPPERCASE")]
enum Currency {
    Eur,
    Usd,
}

/// Internally tagged, with unit, struct and newtype variants.
#[derive(StructuredOutput, Deserialize, Debug)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Action {
    Close,
    Refund {
        #[range(min = 0.01, max = 500.0)]
        amount: f64,
        currency: Currency,
    },
    Escalate(Escalation),
}

#[derive(StructuredOutput, Deserialize, Debug)]
struct Escalation {
    #[length(min = 1, max = 8)]
    team: String,
}

/// Externally tagged (serde's default), every variant kind.
#[derive(StructuredOutput, Deserialize, Debug)]
enum External {
    Plain,
    Wrapped(#[range(0, 9)] u8),
    Pair(String, bool),
    Named { note: String },
}

/// Adjacently tagged.
#[derive(StructuredOutput, Deserialize, Debug)]
#[serde(tag = "t", content = "c")]
enum Adjacent {
    Nothing,
    Count(#[range(max = 3)] u32),
    Point { x: i32, y: i32 },
}

/// Untagged: the first variant that fits.
#[derive(StructuredOutput, Deserialize, Debug)]
#[serde(untagged)]
enum Untagged {
    Text(#[pattern("^[a-z]{2,5}$")] String),
    Pair { left: u8, right: u8 },
}

#[derive(StructuredOutput, Deserialize, Debug)]
struct AccountId(#[pattern("^acc_[0-9]{1,4}$")] String);

#[derive(StructuredOutput, Deserialize, Debug)]
#[serde(transparent)]
struct Score {
    #[range(0.0, 1.0)]
    value: f64,
}

#[derive(StructuredOutput, Deserialize, Debug)]
struct Audit {
    #[range(min = 0, max = 99)]
    revision: u32,
}

/// Enums with data in the four representations, and newtypes.
#[derive(StructuredOutput, Deserialize, Debug)]
struct Tagged {
    account: AccountId,
    action: Action,
    external: External,
    adjacent: Adjacent,
    untagged: Untagged,
    score: Score,
}

/// Containers and string rules (custom validators aside: they are not in the schema).
#[derive(StructuredOutput, Deserialize, Debug)]
struct Containers {
    #[range(0.0, 1.0)]
    #[length(max = 2)]
    labels: BTreeMap<String, f64>,
    totals: HashMap<Currency, u32>,
    tags: BTreeSet<String>,
    #[length(min = 1, max = 3)]
    ids: HashSet<u8>,
    span: (u8, String, bool),
    rgb: [u8; 3],
    grade: char,
    #[length(min = 2, max = 4)]
    code: Box<str>,
    #[format("email")]
    contact: String,
    #[format("date")]
    due: Option<String>,
    #[serde(flatten)]
    audit: Audit,
}

/// The common types of the runtime's features.
#[derive(StructuredOutput, Deserialize, Debug)]
struct Common {
    id: uuid::Uuid,
    day: chrono::NaiveDate,
    opens: chrono::NaiveTime,
    created: chrono::DateTime<chrono::Utc>,
    local: Option<chrono::DateTime<chrono::FixedOffset>>,
    link: url::Url,
    price: rust_decimal::Decimal,
}

macro_rules! agreement_tests {
    ($($name:ident: $t:ty,)*) => {$(
        #[test]
        fn $name() {
            let (valid, invalid) = agree::<$t>(300);
            // The generator must exercise both sides, or the test proves nothing.
            assert!(valid >= 30 && invalid >= 30, "valid {valid}, invalid {invalid}");
        }
    )*};
}

agreement_tests! {
    heartbeat_decision: HeartbeatDecision,
    signal: Signal,
    daimon_appraisal: DaimonAppraisal,
    risk_assessment: RiskAssessment,
    risk_layers: RiskLayers,
    layer_result: LayerResult,
    curator_evaluation: CuratorEvaluation,
    cross_ref: CrossRef,
    promotion: Promotion,
    replay_analysis: ReplayAnalysis,
    lesson: Lesson,
    counterfactual: Counterfactual,
    fragment_evaluation: FragmentEvaluation,
    dream_integration: DreamIntegration,
    integration_item: IntegrationItem,
    threat_assessment: ThreatAssessment,
    shapes: Shapes,
    tagged: Tagged,
    containers: Containers,
    common: Common,
    action: Action,
    external: External,
}

//! Schema ⇔ from_json agreement: for random JSON values shaped like each type, valid and invalid,
//! `T::from_json` accepts exactly the values the `jsonschema` crate accepts against `T::schema()`.
//!
//! Values are generated from the schema itself: mostly what it asks for, with a small chance at
//! every node of something else (a missing or unknown property, a wrong type, a number out of
//! range or fractional, a string outside the enum, an integral float for an integer), so about
//! half the values are valid and every kind of violation occurs.

mod common;

use common::generate::value_for;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::Deserialize;
use structured_examples::*;
use structured_runtime::{parse_value, ParseOptions, Provenance, StructuredOutput};

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
        let (v, i) = counts.get();
        counts.set(if schema_says { (v + 1, i) } else { (v, i + 1) });
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    counts.get()
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

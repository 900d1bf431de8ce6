//! Schema ⇔ from_json agreement: for random JSON values shaped like each type, valid and invalid,
//! `T::from_json` accepts exactly the values the `jsonschema` crate accepts against `T::schema()`.
//!
//! Values are generated from the schema itself: mostly what it asks for, with a small chance at
//! every node of something else (a missing or unknown property, a wrong type, a number out of
//! range or fractional, a string outside the enum, an integral float for an integer), so about
//! half the values are valid and every kind of violation occurs.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use structured_examples::*;
use structured_runtime::StructuredOutput;

/// Chance, out of 1000, that a node is generated wrong.
const MUTATE_PER_MILLE: u32 = 40;

fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => root.pointer(r.trim_start_matches('#')).unwrap_or(root),
        None => schema,
    }
}

/// A value for `schema`, valid unless a mutation is drawn. `depth` bounds recursive schemas.
fn value_for(root: &Value, schema: &Value, depth: u32) -> BoxedStrategy<Value> {
    let schema = resolve(root, schema);
    let valid = valid_for(root, schema, depth);
    let wrong = wrong_for(schema);
    prop_oneof![
        1000 - MUTATE_PER_MILLE => valid,
        MUTATE_PER_MILLE => wrong,
    ]
    .boxed()
}

fn types(schema: &Value) -> Vec<String> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

fn valid_for(root: &Value, schema: &Value, depth: u32) -> BoxedStrategy<Value> {
    if let Some(Value::Array(branches)) = schema.get("anyOf") {
        let options: Vec<BoxedStrategy<Value>> =
            branches.iter().map(|b| value_for(root, b, depth)).collect();
        return proptest::strategy::Union::new(options).boxed();
    }
    let ts = types(schema);
    let nullable = ts.iter().any(|t| t == "null");
    let main = ts
        .iter()
        .find(|t| *t != "null")
        .cloned()
        .unwrap_or_default();
    let value: BoxedStrategy<Value> = if let Some(Value::Array(allowed)) = schema.get("enum") {
        let allowed: Vec<Value> = allowed.iter().filter(|v| !v.is_null()).cloned().collect();
        proptest::sample::select(allowed).boxed()
    } else {
        match main.as_str() {
            "object" => object_for(root, schema, depth),
            "array" => {
                let items = schema["items"].clone();
                let root = root.clone();
                let max = if depth > 2 { 0 } else { 3 };
                proptest::collection::vec(Just(()), 0..=max)
                    .prop_flat_map(move |slots| {
                        slots
                            .iter()
                            .map(|_| value_for(&root, &items, depth + 1))
                            .collect::<Vec<_>>()
                    })
                    .prop_map(Value::Array)
                    .boxed()
            }
            "number" => number_in(schema, false),
            "integer" => number_in(schema, true),
            "string" => "[a-z ]{0,12}".prop_map(Value::from).boxed(),
            "boolean" => any::<bool>().prop_map(Value::from).boxed(),
            _ => Just(Value::Null).boxed(),
        }
    };
    if nullable {
        prop_oneof![4 => value, 1 => Just(Value::Null)].boxed()
    } else {
        value
    }
}

fn object_for(root: &Value, schema: &Value, depth: u32) -> BoxedStrategy<Value> {
    let props: Vec<(String, Value)> = schema["properties"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    let root = root.clone();
    let fields: Vec<BoxedStrategy<(String, Option<Value>)>> = props
        .into_iter()
        .map(|(name, sub)| {
            let value = value_for(&root, &sub, depth + 1);
            // A property may be left out: a "missing required" mutation.
            prop_oneof![
                1000 - MUTATE_PER_MILLE / 2 => value.prop_map(Some),
                MUTATE_PER_MILLE / 2 => Just(None),
            ]
            .prop_map(move |v| (name.clone(), v))
            .boxed()
        })
        .collect();
    let extra = prop_oneof![
        1000 - MUTATE_PER_MILLE / 2 => Just(None),
        MUTATE_PER_MILLE / 2 => Just(Some(("unexpected_key".to_owned(), json!(1)))),
    ];
    (fields, extra)
        .prop_map(|(fields, extra)| {
            let mut map = Map::new();
            for (k, v) in fields {
                if let Some(v) = v {
                    map.insert(k, v);
                }
            }
            if let Some((k, v)) = extra {
                map.insert(k, v);
            }
            Value::Object(map)
        })
        .boxed()
}

fn number_in(schema: &Value, integer: bool) -> BoxedStrategy<Value> {
    let min = schema
        .get("minimum")
        .and_then(Value::as_f64)
        .unwrap_or(-1e6)
        .max(-1e6);
    let max = schema
        .get("maximum")
        .and_then(Value::as_f64)
        .unwrap_or(1e6)
        .min(1e6);
    if integer {
        let (lo, hi) = (min.ceil() as i64, max.floor() as i64);
        prop_oneof![
            (lo..=hi).prop_map(Value::from),
            Just(Value::from(lo)),
            Just(Value::from(hi)),
            // Integral floats are integers to JSON Schema.
            (lo..=hi).prop_map(|i| Value::from(i as f64)),
        ]
        .boxed()
    } else {
        prop_oneof![
            (min..=max).prop_map(Value::from),
            Just(Value::from(min)),
            Just(Value::from(max)),
            (min.ceil() as i64..=max.floor() as i64).prop_map(Value::from),
        ]
        .boxed()
    }
}

/// Something the schema probably does not allow at this node.
fn wrong_for(schema: &Value) -> BoxedStrategy<Value> {
    let min = schema.get("minimum").and_then(Value::as_f64);
    let max = schema.get("maximum").and_then(Value::as_f64);
    let mut options: Vec<BoxedStrategy<Value>> = vec![
        Just(Value::Null).boxed(),
        Just(json!(true)).boxed(),
        Just(json!("stray text")).boxed(),
        Just(json!(2.5)).boxed(),
        Just(json!(-7)).boxed(),
        Just(json!([])).boxed(),
        Just(json!({})).boxed(),
        Just(json!(1e12)).boxed(),
    ];
    if let Some(min) = min {
        options.push(Just(Value::from(min - 1.0)).boxed());
        options.push(Just(Value::from(min - 0.001)).boxed());
    }
    if let Some(max) = max {
        options.push(Just(Value::from(max + 1.0)).boxed());
        options.push(Just(Value::from(max + 0.001)).boxed());
    }
    if schema.get("enum").is_some() {
        options.push(Just(json!("NOT_IN_ENUM")).boxed());
    }
    proptest::strategy::Union::new(options).boxed()
}

/// Runs the agreement check for `T` over `cases` random values; returns (valid, invalid) counts.
fn agree<T: StructuredOutput>(cases: u32) -> (u32, u32) {
    let schema = T::schema().schema().clone();
    let validator = jsonschema::validator_for(&schema).expect("derived schema compiles");
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
}

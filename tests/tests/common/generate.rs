//! Random JSON values shaped like a schema: mostly what it asks for, with a small chance at
//! every node of something else (a missing or unknown property, a wrong type, a number out of
//! range or fractional, a string outside the enum, an integral float for an integer), so about
//! half the values are valid and every kind of violation occurs. Shared by the agreement tests.
//!
//! Beyond plain objects and arrays it follows what derived Rust types write: `const`, `anyOf`,
//! `prefixItems` (tuples), `uniqueItems` (sets: sometimes a repeat), `minItems`/`maxItems`,
//! `additionalProperties` as a schema with `propertyNames` and `minProperties`/`maxProperties`
//! (maps: sometimes a key outside the names), `minLength`/`maxLength`, `pattern` and `format`.

use proptest::prelude::*;
use serde_json::{json, Map, Value};

/// Chance, out of 1000, that a node is generated wrong.
const MUTATE_PER_MILLE: u32 = 40;

/// Nesting the generator follows at most; deeper, any small value stands in.
const MAX_DEPTH: u32 = 12;

/// What a `$ref` names: a `#/...` pointer or a `#name` anchor under `$defs`.
fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    let Some(r) = schema.get("$ref").and_then(Value::as_str) else {
        return schema;
    };
    let fragment = r.trim_start_matches('#');
    if fragment.is_empty() || fragment.starts_with('/') {
        return root.pointer(fragment).unwrap_or(root);
    }
    root.get("$defs")
        .and_then(Value::as_object)
        .and_then(|defs| {
            defs.values()
                .find(|d| d.get("$anchor").and_then(Value::as_str) == Some(fragment))
        })
        .unwrap_or(root)
}

/// A value for `schema`, valid unless a mutation is drawn. `depth` bounds recursive schemas.
pub fn value_for(root: &Value, schema: &Value, depth: u32) -> BoxedStrategy<Value> {
    if depth > MAX_DEPTH {
        return Just(Value::Null).boxed();
    }
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
    let value: BoxedStrategy<Value> = if let Some(constant) = schema.get("const") {
        Just(constant.clone()).boxed()
    } else if let Some(Value::Array(allowed)) = schema.get("enum") {
        let allowed: Vec<Value> = allowed.iter().filter(|v| !v.is_null()).cloned().collect();
        proptest::sample::select(allowed).boxed()
    } else {
        match main.as_str() {
            "object" => object_for(root, schema, depth),
            "array" => array_for(root, schema, depth),
            "number" => number_in(schema, false),
            "integer" => number_in(schema, true),
            "string" => string_for(schema),
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

/// A count in `[min, max]` (`max` capped at `min + 3`), or once in twenty one outside it.
fn count_in(schema: &Value, min_key: &str, max_key: &str, cap: usize) -> BoxedStrategy<usize> {
    let bound = |key: &str| schema.get(key).and_then(Value::as_u64).map(|n| n as usize);
    let min = bound(min_key).unwrap_or(0);
    let max = bound(max_key).unwrap_or(min + cap).min(min + cap).max(min);
    prop_oneof![
        19 => min..=max,
        1 => prop_oneof![Just(min.saturating_sub(1)), Just(max + 1)],
    ]
    .boxed()
}

fn array_for(root: &Value, schema: &Value, depth: u32) -> BoxedStrategy<Value> {
    let root = root.clone();
    let items: BoxedStrategy<Vec<Value>> =
        if let Some(Value::Array(positions)) = schema.get("prefixItems") {
            // A tuple: one value per position, or once in twenty one position short.
            let values: Vec<BoxedStrategy<Value>> = positions
                .iter()
                .map(|p| value_for(&root, p, depth + 1))
                .collect();
            (values, proptest::bool::weighted(0.05))
                .prop_map(|(mut values, short)| {
                    if short {
                        values.pop();
                    }
                    values
                })
                .boxed()
        } else {
            let items = schema["items"].clone();
            let cap = if depth > 2 { 0 } else { 3 };
            count_in(schema, "minItems", "maxItems", cap)
                .prop_flat_map(move |n| {
                    (0..n)
                        .map(|_| value_for(&root, &items, depth + 1))
                        .collect::<Vec<_>>()
                })
                .boxed()
        };
    if schema.get("uniqueItems") == Some(&Value::Bool(true)) {
        // A set: its items made distinct, or once in ten with a repeat.
        (items, proptest::bool::weighted(0.1))
            .prop_map(|(items, repeat)| {
                let mut unique: Vec<Value> = Vec::new();
                for item in items {
                    if !unique.contains(&item) {
                        unique.push(item);
                    }
                }
                if let (true, Some(first)) = (repeat, unique.first().cloned()) {
                    unique.push(first);
                }
                Value::Array(unique)
            })
            .boxed()
    } else {
        items.prop_map(Value::Array).boxed()
    }
}

/// A sample of each `format` the derive writes, and text that is in none of them.
fn format_samples(format: &str) -> Vec<&'static str> {
    match format {
        "email" => vec!["a@example.com", "first.last@mail.example.org"],
        "date" => vec!["2024-02-29", "1999-12-31"],
        "date-time" => vec!["2024-02-29T12:30:00Z", "1999-12-31T23:59:59+02:00"],
        "time" => vec!["12:30:00Z", "23:59:59+02:00"],
        "uuid" => vec!["67e55044-10b1-426f-9247-bb680e5fe0c8"],
        "uri" => vec!["https://example.com/a?b=c", "urn:isbn:0451450523"],
        "ipv4" => vec!["192.168.0.1"],
        _ => vec![],
    }
}

fn string_for(schema: &Value) -> BoxedStrategy<Value> {
    if let Some(format) = schema.get("format").and_then(Value::as_str) {
        let samples = format_samples(format);
        return prop_oneof![
            9 => proptest::sample::select(samples).prop_map(Value::from),
            1 => Just(Value::from("not in the format")),
        ]
        .boxed();
    }
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
        // The pattern's own language (anchors dropped: the generator writes whole strings),
        // or once in ten any text.
        let body = pattern.trim_start_matches('^').trim_end_matches('$');
        if let Ok(matching) = proptest::string::string_regex(body) {
            return prop_oneof![
                9 => matching.prop_map(Value::from),
                1 => "[a-z ]{0,12}".prop_map(Value::from),
            ]
            .boxed();
        }
    }
    count_in(schema, "minLength", "maxLength", 12)
        .prop_flat_map(|n| {
            proptest::collection::vec(prop_oneof![Just('a'), Just('é'), Just(' ')], n)
        })
        .prop_map(|chars| Value::from(chars.into_iter().collect::<String>()))
        .boxed()
}

fn object_for(root: &Value, schema: &Value, depth: u32) -> BoxedStrategy<Value> {
    if let Some(values @ Value::Object(_)) = schema.get("additionalProperties") {
        return map_for(root, schema, values, depth);
    }
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

/// A map: keys from `propertyNames` (its `enum`, or once in twenty a key outside it) or any
/// short text, each with a value for the schema of the values.
fn map_for(root: &Value, schema: &Value, values: &Value, depth: u32) -> BoxedStrategy<Value> {
    let names: Vec<String> = schema
        .pointer("/propertyNames/enum")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let key: BoxedStrategy<String> = if names.is_empty() {
        "[a-z]{1,4}".boxed()
    } else {
        prop_oneof![
            19 => proptest::sample::select(names),
            1 => Just("NOT_A_NAME".to_owned()),
        ]
        .boxed()
    };
    let value = value_for(root, values, depth + 1);
    let cap = if depth > 2 { 0 } else { 3 };
    count_in(schema, "minProperties", "maxProperties", cap)
        .prop_flat_map(move |n| proptest::collection::vec((key.clone(), value.clone()), n))
        .prop_map(|entries| Value::Object(entries.into_iter().collect()))
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

//! The validator of record: for schemas given at run time, `parse_value` in strict mode accepts
//! exactly what the `jsonschema` crate accepts, on three corpora:
//!
//! - the official JSON-Schema-Test-Suite, draft 2020-12 (`tests/data/json-schema-test-suite`):
//!   every keyword, each case written to test one rule;
//! - the schemas in the recorded provider requests and the SDKs' test vectors
//!   (`tests/data/providers`), with random instances shaped like them;
//! - hand-written schemas using the keywords strict providers leave out (`allOf`, `oneOf`,
//!   `not`, `if`/`then`/`else`, `contains`, `pattern`, `multipleOf`, `uniqueItems`,
//!   `patternProperties`, `propertyNames`, `dependentRequired`, `unevaluatedProperties`, boolean
//!   schemas, anchors, `maxLength: 2.0`), with random instances.
//!
//! "Accepts" means a `Clean` value equal to the instance. An instance the validator refuses may
//! still give a value, but never a clean one: a value found inside it is reported as extracted.
//! Run with `--nocapture` for the counts.

mod common;

use std::path::Path;

use common::generate::value_for;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{json, Value};
use structured_runtime::{
    parse_value, ParseOptions, Provenance, ResponseSchema, SchemaError, SchemaLimits,
};

fn data(path: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(path);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap()
}

/// The validator as the library configures it (documented on `ResponseSchema`): no network or
/// file access, `format` asserted, an unknown format an error.
fn reference(schema: &Value) -> Option<jsonschema::Validator> {
    jsonschema::options()
        .offline()
        .should_validate_formats(true)
        .should_ignore_unknown_formats(false)
        .build(schema)
        .ok()
}

fn any_root() -> SchemaLimits {
    SchemaLimits {
        object_root: false,
        ..SchemaLimits::default()
    }
}

/// What the pipeline made of `instance`, in strict mode: `Some(true)` clean and equal,
/// `Some(false)` a value that is not clean, `None` refused.
fn ours(schema: &ResponseSchema, instance: &Value) -> Option<bool> {
    let read = parse_value(&instance.to_string(), schema, &ParseOptions::strict()).ok()?;
    Some(read.provenance == Provenance::Clean && &read.value == instance)
}

/// One disagreement, for the failure message.
fn disagreement(what: &str, schema: &Value, instance: &Value, theirs: bool, ours: Option<bool>) {
    panic!("{what}: jsonschema says valid={theirs}, parse_value says {ours:?}\n  schema: {schema}\n  instance: {instance}");
}

#[test]
fn the_official_test_suite() {
    let files = common::suite_files();
    let (mut cases, mut agreed, mut refused_schemas, mut refused_cases) = (0, 0, 0, 0);
    let mut suite_differs = 0;
    for file in &files {
        let groups: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        for group in groups.as_array().unwrap() {
            let schema_json = &group["schema"];
            let tests = group["tests"].as_array().unwrap();
            let schema =
                match ResponseSchema::with_limits("suite", schema_json.clone(), &any_root()) {
                    Ok(schema) => schema,
                    Err(e) => {
                        // Refused at construction, never used: a remote reference, a keyword the
                        // validator does not implement, a schema it cannot compile.
                        assert!(
                            matches!(
                                e,
                                SchemaError::RemoteRef { .. }
                                    | SchemaError::UnknownKeyword { .. }
                                    | SchemaError::Invalid { .. }
                                    | SchemaError::NotAnObject { .. }
                            ),
                            "{}: {e}",
                            group["description"]
                        );
                        if std::env::var("SUITE_REFUSALS").is_ok() {
                            println!("refused {}: {e}", group["description"]);
                        }
                        refused_schemas += 1;
                        refused_cases += tests.len();
                        continue;
                    }
                };
            let validator = reference(schema_json).expect("compiles as the library compiled it");
            for test in tests {
                let instance = &test["data"];
                cases += 1;
                let theirs = validator.is_valid(instance);
                let ours = ours(&schema, instance);
                if (ours == Some(true)) != theirs {
                    disagreement(
                        &format!("{}: {}", group["description"], test["description"]),
                        schema_json,
                        instance,
                        theirs,
                        ours,
                    );
                }
                agreed += 1;
                if theirs != test["valid"].as_bool().unwrap() {
                    suite_differs += 1;
                }
            }
        }
    }
    println!(
        "JSON-Schema-Test-Suite draft 2020-12: {agreed} of {cases} cases agree with jsonschema; \
         {refused_schemas} schemas ({refused_cases} cases) refused at construction; \
         {suite_differs} verdicts differ from the suite's own (format is asserted here)"
    );
    assert!(cases > 1000, "{cases}");
}

/// Runs `cases` random instances shaped like `schema` through both; returns (valid, invalid).
fn differential(what: &str, schema_json: &Value, cases: u32) -> (u32, u32) {
    let schema = ResponseSchema::with_limits("t", schema_json.clone(), &any_root())
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let validator = reference(schema_json).unwrap();
    let strategy = value_for(schema_json, schema_json, 0);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let counts = std::cell::Cell::new((0u32, 0u32));
    runner
        .run(&strategy, |instance| {
            let theirs = validator.is_valid(&instance);
            let ours = ours(&schema, &instance);
            if (ours == Some(true)) != theirs {
                disagreement(what, schema_json, &instance, theirs, ours);
            }
            let (v, i) = counts.get();
            counts.set(if theirs { (v + 1, i) } else { (v, i + 1) });
            Ok(())
        })
        .unwrap();
    counts.get()
}

#[test]
fn the_provider_fixtures_schemas() {
    let mut schemas = Vec::new();
    for name in [
        "anthropic_structured_output_success.request.json",
        "anthropic_structured_output_defs_success.request.json",
    ] {
        schemas.push((
            name.to_owned(),
            data(&format!("providers/{name}"))["output_config"]["format"]["schema"].clone(),
        ));
    }
    for name in [
        "anthropic_tool_use.request.json",
        "anthropic_text_then_tool_use.request.json",
    ] {
        for tool in data(&format!("providers/{name}"))["tools"]
            .as_array()
            .unwrap()
        {
            schemas.push((
                format!("{name} {}", tool["name"]),
                tool["input_schema"].clone(),
            ));
        }
    }
    for v in data("providers/openai_to_strict_json_schema_expected.json")
        .as_array()
        .unwrap()
    {
        let expected = &v["pydantic_v2_expected"];
        let schema = expected.get("parameters").unwrap_or(expected);
        schemas.push((v["test"].to_string(), schema.clone()));
    }
    for v in data("providers/anthropic_transform_schema_vectors.json")
        .as_array()
        .unwrap()
    {
        schemas.push((format!("{} input", v["test"]), v["input"].clone()));
        schemas.push((format!("{} expected", v["test"]), v["expected"].clone()));
    }
    let (mut valid, mut invalid, mut used) = (0, 0, 0);
    for (what, schema) in &schemas {
        if ResponseSchema::with_limits("t", schema.clone(), &any_root()).is_err() {
            continue;
        }
        used += 1;
        let (v, i) = differential(what, schema, 200);
        valid += v;
        invalid += i;
    }
    println!("provider fixtures: {used} of {} schemas, {valid} valid and {invalid} invalid instances, all agree", schemas.len());
    assert!(used >= 20, "{used} schemas used");
    assert!(
        valid > 500 && invalid > 500,
        "valid {valid}, invalid {invalid}"
    );
}

#[test]
fn hand_written_schemas_with_every_keyword() {
    let object = |properties: Value| json!({"type": "object", "properties": properties});
    let schemas = [
        object(json!({"n": {"allOf": [{"type": "integer"}, {"minimum": 0}, {"maximum": 10}]}})),
        object(json!({"v": {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 0}]}})),
        object(json!({"s": {"type": "string", "not": {"enum": ["stray text"]}}})),
        json!({"type": "object", "properties": {"kind": {"type": "string"}, "n": {"type": "integer"}},
            "if": {"properties": {"kind": {"const": "stray text"}}},
            "then": {"required": ["n"]}, "else": {"properties": {"n": {"maximum": 0}}}}),
        object(
            json!({"a": {"type": "array", "items": {"type": "integer"}, "contains": {"minimum": 5}}}),
        ),
        object(json!({"s": {"type": "string", "pattern": "^[a-z ]+$"}})),
        object(json!({"n": {"type": "number", "multipleOf": 0.5}})),
        object(
            json!({"a": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 3}, "uniqueItems": true}}),
        ),
        json!({"type": "object", "properties": {"a": {"type": "integer"}},
            "patternProperties": {"^unexpected": {"type": "string"}}}),
        json!({"type": "object", "properties": {"a": {"type": "integer"}}, "propertyNames": {"maxLength": 3}}),
        json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "dependentRequired": {"a": ["b"]}}),
        json!({"type": "object", "properties": {"a": {"type": "integer"}},
            "allOf": [{"properties": {"b": {"type": "integer"}}}], "unevaluatedProperties": false}),
        object(json!({"t": true, "f": false, "n": {"type": "integer"}})),
        json!({"type": "object", "properties": {"a": {"$ref": "#num"}},
            "$defs": {"n": {"$anchor": "num", "type": "integer", "minimum": 0}}}),
        object(json!({"s": {"type": "string", "maxLength": 2.0, "minLength": 1.0}})),
        json!({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"],
            "minProperties": 1, "maxProperties": 2, "additionalProperties": {"type": "integer"}}),
    ];
    let (mut valid, mut invalid) = (0, 0);
    for (i, schema) in schemas.iter().enumerate() {
        if std::env::var("HAND_WRITTEN").is_ok() {
            eprintln!("schema {i}");
        }
        let (v, n) = differential(&format!("hand-written schema {i}"), schema, 300);
        valid += v;
        invalid += n;
    }
    println!(
        "hand-written: {} schemas, {valid} valid and {invalid} invalid instances, all agree",
        schemas.len()
    );
    assert!(
        valid > 500 && invalid > 500,
        "valid {valid}, invalid {invalid}"
    );
}

//! The llama.cpp grammar is sound: every string it derives is JSON the schema accepts, as
//! written. For each schema (the derived seed types and subsystem types, the ticket-triage type,
//! the schemas in the recorded provider requests, and hand-written schemas with every keyword
//! the grammar writes) the grammar is parsed and [`DERIVATIONS`] random strings are derived from
//! it; each must be read by `parse_value` in strict mode as a `Clean` value the validator of
//! record accepts. A schema with keywords the grammar leaves to the validator names them, and
//! its derivations are only required to be JSON. Run with `--nocapture` for the counts.

mod common;

use std::path::Path;

use common::gbnf::{Gbnf, Rng};
use serde_json::{json, Value};
use structured_examples::{all_schemas, DaimonAppraisal, HeartbeatDecision, TicketTriage};
use structured_runtime::provider::dialect::{grammar, GrammarBudget};
use structured_runtime::{
    parse_value, ParseOptions, Provenance, ResponseSchema, SchemaLimits, StructuredOutput,
};

/// Random derivations per grammar.
const DERIVATIONS: usize = 300;

const BUDGET: GrammarBudget = GrammarBudget {
    string_chars: 12,
    items: 4,
    fit_tokens: None,
};

fn reference(schema: &Value) -> jsonschema::Validator {
    jsonschema::options()
        .offline()
        .should_validate_formats(true)
        .should_ignore_unknown_formats(false)
        .build(schema)
        .unwrap()
}

/// Derives from `schema`'s grammar; returns how many derivations were checked.
fn check(name: &str, schema: &Value, fully: bool) -> usize {
    let g = grammar(schema, BUDGET).unwrap_or_else(|e| panic!("{name}: {e}"));
    if fully {
        assert!(
            g.unenforced.is_empty(),
            "{name}: left to the validator: {:?}",
            g.unenforced
        );
    }
    let parsed = Gbnf::parse(&g.text);
    let validator = reference(schema);
    let ours = ResponseSchema::with_limits(
        "s",
        schema.clone(),
        &SchemaLimits {
            object_root: false,
            ..SchemaLimits::default()
        },
    )
    .ok();
    let mut rng = Rng::new(0x5eed ^ (name.len() as u64 * 7919));
    let mut checked = 0;
    for _ in 0..DERIVATIONS {
        let Some(text) = parsed.derive(&mut rng) else {
            continue;
        };
        let value: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{name}: not JSON ({e}): {text}\n{}", g.text));
        if g.unenforced.is_empty() {
            assert!(
                validator.is_valid(&value),
                "{name}: the grammar wrote what the schema refuses: {text}\n{:?}\n{}",
                validator
                    .iter_errors(&value)
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>(),
                g.text
            );
            if let Some(ours) = &ours {
                let read = parse_value(&text, ours, &ParseOptions::strict())
                    .unwrap_or_else(|e| panic!("{name}: refused {text}: {e}"));
                assert_eq!(read.provenance, Provenance::Clean, "{name}: {text}");
                assert_eq!(read.value, value, "{name}: {text}");
            }
        }
        checked += 1;
    }
    assert!(
        checked >= DERIVATIONS / 2,
        "{name}: only {checked} derivations ended"
    );
    checked
}

#[test]
fn derived_types_grammars_are_sound() {
    let mut total = 0;
    for (name, schema) in [
        ("HeartbeatDecision", HeartbeatDecision::schema()),
        ("DaimonAppraisal", DaimonAppraisal::schema()),
        ("TicketTriage", TicketTriage::schema()),
    ]
    .into_iter()
    .chain(all_schemas().into_iter().map(|s| (s.name(), s)))
    {
        total += check(name, schema.schema(), true);
    }
    println!("derived types: {total} derivations, all valid as written");
}

#[test]
fn hand_written_schemas_with_every_keyword_are_sound() {
    let object = |props: Value, required: Value| json!({"type": "object", "properties": props, "required": required, "additionalProperties": false});
    let cases = [
        (
            "fraction",
            json!({"type": "number", "minimum": 0.0, "maximum": 1.0}),
        ),
        (
            "negative",
            json!({"type": "number", "minimum": -1.0, "maximum": 1.0}),
        ),
        (
            "below zero",
            json!({"type": "number", "minimum": -7.25, "maximum": -0.5}),
        ),
        (
            "exclusive",
            json!({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 0.3}),
        ),
        (
            "exclusive floats",
            json!({"type": "number", "exclusiveMinimum": 0.1, "exclusiveMaximum": 0.30000000000000004}),
        ),
        (
            "odd bounds",
            json!({"type": "number", "minimum": 0.123456789, "maximum": 12.5}),
        ),
        (
            "wide",
            json!({"type": "number", "minimum": -123456.5, "maximum": 98765.4321}),
        ),
        (
            "integers",
            json!({"type": "integer", "minimum": 7, "maximum": 1234}),
        ),
        (
            "integer fractional bounds",
            json!({"type": "integer", "minimum": -2.5, "maximum": 3.5}),
        ),
        (
            "exclusive integers",
            json!({"type": "integer", "exclusiveMinimum": -10, "exclusiveMaximum": 10}),
        ),
        (
            "u64",
            json!({"type": "integer", "minimum": 0, "maximum": 18446744073709551615u64}),
        ),
        ("unbounded", json!({"type": "number"})),
        (
            "lengths",
            json!({"type": "string", "minLength": 2, "maxLength": 5}),
        ),
        (
            "enum",
            json!({"enum": ["a", 1, null, {"k": [true]}, "q\"uote"]}),
        ),
        ("const", json!({"const": {"x": 1.5}})),
        (
            "nullable",
            json!({"type": ["integer", "null"], "minimum": 3, "maximum": 4}),
        ),
        (
            "tagged",
            json!({"anyOf": [
                object(json!({"kind": {"const": "a"}, "n": {"type": "integer", "minimum": 0, "maximum": 9}}), json!(["kind", "n"])),
                object(json!({"kind": {"type": "string", "enum": ["b"]}, "s": {"type": "string", "maxLength": 3}}), json!(["kind", "s"])),
            ]}),
        ),
        (
            "arrays",
            json!({"type": "array", "items": {"type": "boolean"}, "minItems": 2, "maxItems": 5}),
        ),
        (
            "tuple",
            json!({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string", "maxLength": 2}], "items": false, "minItems": 2}),
        ),
        (
            "tuple then items",
            json!({"type": "array", "prefixItems": [{"const": 1}], "items": {"type": "null"}, "minItems": 0, "maxItems": 3}),
        ),
        (
            "map by enum",
            json!({"type": "object", "additionalProperties": {"type": "number", "minimum": 0, "maximum": 1},
            "propertyNames": {"enum": ["billing", "tech", "account"]}, "minProperties": 1, "maxProperties": 2}),
        ),
        (
            "map by enum, any count",
            json!({"type": "object", "additionalProperties": {"type": "integer"},
            "propertyNames": {"type": "string", "enum": ["EUR", "USD"]}}),
        ),
        (
            "formats",
            object(
                json!({
                    "date": {"type": "string", "format": "date"},
                    "dt": {"type": "string", "format": "date-time"},
                    "time": {"type": "string", "format": "time"},
                    "uuid": {"type": "string", "format": "uuid"},
                    "email": {"type": "string", "format": "email"},
                    "ipv4": {"type": "string", "format": "ipv4"},
                    "host": {"type": "string", "format": "hostname"},
                    "uri": {"type": "string", "format": "uri"},
                }),
                json!(["date", "dt", "time", "uuid", "email", "ipv4", "host", "uri"]),
            ),
        ),
        (
            "patterns",
            object(
                json!({
                    "id": {"type": "string", "pattern": "^acc_[0-9]+$"},
                    "code": {"type": "string", "pattern": "^[A-Z]{3}-\\d{2,4}(x|yz)?$"},
                    "quote": {"type": "string", "pattern": "^a[\"\\\\]b$"},
                    "search": {"type": "string", "pattern": "ab+c"},
                    "dot": {"type": "string", "pattern": "^.{1,3}$"},
                }),
                json!(["id", "code", "quote", "search", "dot"]),
            ),
        ),
        (
            "optional properties",
            json!({"type": "object", "properties": {
            "a": {"type": "integer"}, "b": {"type": "boolean"}, "c": {"type": "null"}, "d": {"type": "string", "maxLength": 1}
        }, "required": ["b"], "additionalProperties": false}),
        ),
        (
            "recursive",
            json!({"$defs": {"node": {"type": "object", "properties": {
            "v": {"type": "integer", "minimum": 0, "maximum": 3},
            "next": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]}
        }, "required": ["v", "next"], "additionalProperties": false}}, "$ref": "#/$defs/node"}),
        ),
    ];
    let mut total = 0;
    for (name, schema) in &cases {
        total += check(name, schema, true);
    }
    println!(
        "hand-written: {} schemas, {total} derivations, all valid as written",
        cases.len()
    );
}

#[test]
fn provider_fixture_schemas_give_json_and_name_what_they_leave() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/providers");
    let mut schemas = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".request.json") {
            continue;
        }
        let body: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        collect_schemas(&body, &mut schemas, &name);
    }
    assert!(schemas.len() >= 4, "{}", schemas.len());
    let mut total = 0;
    for (name, schema) in &schemas {
        let fully = grammar(schema, BUDGET).unwrap().unenforced.is_empty();
        total += check(name, schema, fully);
    }
    println!(
        "provider fixtures: {} schemas, {total} derivations",
        schemas.len()
    );
}

/// Every schema in a request body: `json_schema.schema`, `input_schema`, `parameters`.
fn collect_schemas(v: &Value, out: &mut Vec<(String, Value)>, name: &str) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                if matches!(k.as_str(), "input_schema" | "parameters" | "schema")
                    && child.is_object()
                {
                    out.push((format!("{name} {k}"), child.clone()));
                } else {
                    collect_schemas(child, out, name);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect_schemas(i, out, name)),
        _ => {}
    }
}

#[test]
fn what_the_grammar_cannot_express_is_named_by_path() {
    let schema = json!({"type": "object", "properties": {
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 4}, "uniqueItems": true},
        "n": {"type": "integer", "multipleOf": 3},
        "s": {"type": "string", "pattern": "^(?=a)b$"},
        "open": {"type": "object", "additionalProperties": {"type": "integer"}},
        "no": {"not": {"type": "string"}},
        "any": true,
        "listed": {"type": "string", "enum": ["ab", "abc"], "maxLength": 2}
    }, "required": ["tags", "n", "s", "open", "no", "any", "listed"], "additionalProperties": false});
    let g = grammar(&schema, BUDGET).unwrap();
    let named: Vec<String> = g
        .unenforced
        .iter()
        .map(|u| format!("{} {}", u.path, u.keyword))
        .collect();
    assert_eq!(
        named,
        [
            "/properties/tags uniqueItems",
            "/properties/n multipleOf",
            "/properties/s pattern",
            "/properties/open additionalProperties",
            "/properties/no not",
            "/properties/no true",
            "/properties/any true",
            "/properties/listed maxLength",
        ]
    );
    // Free text and open lists got a budget, said by path.
    let budgets: Vec<String> = g
        .budgets
        .iter()
        .map(|b| format!("{} {} {}", b.path, b.keyword, b.limit))
        .collect();
    assert!(
        budgets.contains(&"/properties/tags maxItems 4".to_owned()),
        "{budgets:?}"
    );
    assert!(
        budgets.contains(&"/properties/s maxLength 12".to_owned()),
        "{budgets:?}"
    );
}

/// With the budget for an answer's token limit, every budgeted string written in full, as
/// often as the lists around it allow, fits in half the limit at a token a character (down to
/// 16 characters a string): a model looping in every string still closes.
#[test]
fn the_derived_budget_fits_the_answer() {
    for (name, schema) in [
        ("HeartbeatDecision", HeartbeatDecision::schema()),
        ("DaimonAppraisal", DaimonAppraisal::schema()),
    ]
    .into_iter()
    .chain(all_schemas().into_iter().map(|s| (s.name(), s)))
    {
        for max_tokens in [256u32, 512, 4096] {
            let budget = GrammarBudget::for_max_tokens(max_tokens);
            let g = grammar(schema.schema(), budget).unwrap();
            let items = |path: &str| {
                // The lists above a path, each with its count.
                g.budgets
                    .iter()
                    .filter(|b| {
                        b.keyword == "maxItems" && path.starts_with(&format!("{}/", b.path))
                    })
                    .map(|b| b.limit)
                    .product::<usize>()
            };
            let chars: usize = g
                .budgets
                .iter()
                .filter(|b| b.keyword == "maxLength")
                .map(|b| b.limit * items(b.path.as_str()))
                .sum();
            let smallest = g
                .budgets
                .iter()
                .filter(|b| b.keyword == "maxLength")
                .map(|b| b.limit)
                .min()
                .unwrap_or(16);
            assert!(
                chars <= max_tokens as usize / 2 || smallest == 16,
                "{name} at {max_tokens}: {chars} characters of free text"
            );
        }
    }
}

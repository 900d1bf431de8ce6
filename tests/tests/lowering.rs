//! Per-provider schema lowering, on the official SDK test vectors and on the example types.

use serde_json::{json, Value};
use structured_examples::{all_schemas, HeartbeatDecision};
use structured_runtime::provider::capabilities::SchemaTarget;
use structured_runtime::provider::dialect::lower;
use structured_runtime::StructuredOutput;

#[test]
fn openai_strict_keeps_bounds_moves_lengths_and_defaults_and_rejects_the_rest_with_paths() {
    let schema = json!({
        "type": "object",
        "properties": {
            "n": {"type": "number", "minimum": 0, "maximum": 1},
            "s": {"type": "string", "maxLength": 10, "default": "x", "pattern": "^a"},
            "x": {"not": {"type": "string"}},
        }
    });
    let err = lower(&schema, SchemaTarget::OpenAiStrict).unwrap_err();
    assert_eq!(err.errors.len(), 1, "{err}");
    assert_eq!(err.errors[0].path, "/properties/x");
    assert!(err.to_string().contains("not"), "{err}");
    let ok = json!({"type": "object", "properties": {
        "n": {"type": "number", "minimum": 0, "maximum": 1},
        "s": {"type": "string", "maxLength": 10, "default": "x", "pattern": "^a"}}});
    let out = lower(&ok, SchemaTarget::OpenAiStrict).unwrap();
    assert_eq!(
        out["properties"]["n"],
        json!({"type": "number", "minimum": 0, "maximum": 1})
    );
    assert_eq!(
        out["properties"]["s"],
        json!({"type": "string", "pattern": "^a", "description": "{default: x, maxLength: 10}"})
    );
}

#[test]
fn every_example_type_lowers_for_every_target() {
    for schema in all_schemas() {
        for target in SchemaTarget::ALL {
            lower(schema.schema(), target)
                .unwrap_or_else(|e| panic!("{} as {target:?}: {e}", schema.name()));
        }
    }
}

#[test]
fn anthropic_moves_bounds_into_the_description_and_refuses_recursion() {
    let out = lower(
        HeartbeatDecision::schema().schema(),
        SchemaTarget::Anthropic,
    )
    .unwrap();
    let confidence = &out["properties"]["confidence"];
    assert!(confidence.get("minimum").is_none());
    assert!(confidence["description"]
        .as_str()
        .unwrap()
        .ends_with("{minimum: 0.0, maximum: 1.0}"));
    let tree = json!({
        "type": "object",
        "properties": {"children": {"type": "array", "items": {"$ref": "#"}}},
        "required": ["children"],
        "additionalProperties": false
    });
    let err = lower(&tree, SchemaTarget::Anthropic).unwrap_err();
    assert_eq!(err.errors[0].path, "/properties/children/items");
    assert!(err.errors[0].reason.contains("recursi"), "{err}");
    let external = json!({"$ref": "https://example.com/s.json"});
    assert!(lower(&external, SchemaTarget::Anthropic).is_err());
}

#[test]
fn anthropic_counts_optional_properties_across_the_request() {
    let props: serde_json::Map<String, Value> = (0..25)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    let schema = json!({"type": "object", "properties": props, "required": []});
    let err = lower(&schema, SchemaTarget::Anthropic).unwrap_err();
    assert!(err.errors[0].reason.contains("25 optional"), "{err}");
}

#[test]
fn gemini_response_schema_is_the_openapi_subset() {
    let schema = json!({
        "type": "object",
        "$defs": {"Signal": {"type": "object", "properties": {"m": {"type": "number", "exclusiveMaximum": 1}}, "required": ["m"], "additionalProperties": false}},
        "properties": {
            "severity": {"type": "string", "enum": ["low", "high"]},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "why"},
            "count": {"type": ["integer", "null"]},
            "kind": {"const": "heartbeat"},
            "signals": {"type": "array", "items": {"$ref": "#/$defs/Signal"}}
        },
        "required": ["severity", "note", "count", "kind", "signals"],
        "additionalProperties": false
    });
    let out = lower(&schema, SchemaTarget::GeminiResponseSchema).unwrap();
    assert_eq!(
        out,
        json!({
            "type": "OBJECT",
            "propertyOrdering": ["severity", "note", "count", "kind", "signals"],
            "properties": {
                "severity": {"type": "STRING", "enum": ["low", "high"]},
                "note": {"type": "STRING", "nullable": true, "description": "why"},
                "count": {"type": "INTEGER", "nullable": true},
                "kind": {"enum": ["heartbeat"]},
                "signals": {"type": "ARRAY", "items": {
                    "type": "OBJECT",
                    "properties": {"m": {"type": "NUMBER", "description": "{exclusiveMaximum: 1}"}},
                    "required": ["m"]
                }}
            },
            "required": ["severity", "note", "count", "kind", "signals"]
        })
    );
}

#[test]
fn gemini_response_schema_refuses_what_it_cannot_say() {
    let recursive = json!({"type": "object", "properties": {"next": {"$ref": "#"}}});
    let err = lower(&recursive, SchemaTarget::GeminiResponseSchema).unwrap_err();
    assert_eq!(err.errors[0].path, "/properties/next");
    let numbers = json!({"type": "integer", "enum": [1, 2]});
    let err = lower(&numbers, SchemaTarget::GeminiResponseSchema).unwrap_err();
    assert!(err.errors[0].reason.contains("string enums"), "{err}");
    // The JSON Schema variant takes both.
    assert!(lower(&numbers, SchemaTarget::GeminiJsonSchema).is_ok());
}

#[test]
fn gemini_json_schema_keeps_refs_and_moves_unsupported_keywords() {
    let schema = json!({"type": "object", "$defs": {"A": {"type": "string", "maxLength": 3}},
        "properties": {"a": {"$ref": "#/$defs/A"}, "b": {"oneOf": [{"type": "string"}, {"type": "null"}]}}});
    let out = lower(&schema, SchemaTarget::GeminiJsonSchema).unwrap();
    assert_eq!(
        out["$defs"]["A"],
        json!({"type": "string", "description": "{maxLength: 3}"})
    );
    assert_eq!(out["properties"]["a"], json!({"$ref": "#/$defs/A"}));
    assert!(out["properties"]["b"].get("anyOf").is_some());
}

#[test]
fn llama_cpp_inlines_refs_and_sends_every_bound_saying_which_its_converter_ignores() {
    use structured_runtime::provider::dialect::{lower_reporting, Enforcement};
    let schema = json!({"type": "object", "$defs": {"A": {"type": "number", "minimum": 0}},
        "properties": {"a": {"$ref": "#/$defs/A"}, "n": {"type": "integer", "minimum": 1},
            "p": {"type": "string", "pattern": "ab"}, "e": {"type": "string", "format": "email"},
            "d": {"type": "string", "format": "date"},
            "t": {"type": "array", "prefixItems": [{"$ref": "#/$defs/A"}], "items": false}}});
    let lowered = lower_reporting(&schema, SchemaTarget::LlamaCpp).unwrap();
    let out = &lowered.schema;
    assert!(out.get("$defs").is_none());
    // Sent as written: an engine that enforces them does (llguidance); nothing is moved.
    assert_eq!(
        out["properties"]["a"],
        json!({"type": "number", "minimum": 0})
    );
    assert_eq!(
        out["properties"]["n"],
        json!({"type": "integer", "minimum": 1})
    );
    assert_eq!(
        out["properties"]["p"],
        json!({"type": "string", "pattern": "ab"})
    );
    // `items: false` is the tuple's count (the converter refuses a boolean schema).
    assert_eq!(
        out["properties"]["t"],
        json!({"type": "array", "prefixItems": [{"type": "number", "minimum": 0}], "maxItems": 1})
    );
    assert!(lowered.moved.is_empty());
    // What llama.cpp's converter is known to ignore, by path; integer bounds and date it keeps.
    let ignored: Vec<String> = lowered
        .kept
        .iter()
        .inspect(|k| assert_eq!(k.enforcement, Enforcement::Ignored))
        .map(|k| format!("{} {}", k.path, k.keywords.join("/")))
        .collect();
    assert_eq!(
        ignored,
        [
            "/properties/a minimum",
            "/properties/p pattern",
            "/properties/e format",
            "/properties/t/prefixItems/0 minimum",
        ]
    );
    let mixed = json!({"type": "object", "properties": {}, "anyOf": [{"type": "object"}]});
    assert!(lower(&mixed, SchemaTarget::LlamaCpp).is_err());
}

/// Every dialect finds sub-schemas through the one list of sub-schema keywords: an `allOf`
/// branch sent to llama.cpp has its references inlined and its ignored keywords reported like
/// any other node (a shorter list of its own once sent it raw, `$ref` and all).
#[test]
fn llama_cpp_lowers_all_of_branches_like_every_other_sub_schema() {
    use structured_runtime::provider::dialect::lower_reporting;
    let schema = json!({"$defs": {"int": {"type": "integer"}},
        "allOf": [{"properties": {"foo": {"$ref": "#/$defs/int"}}}, {"multipleOf": 2}]});
    let lowered = lower_reporting(&schema, SchemaTarget::LlamaCpp).unwrap();
    assert_eq!(
        lowered.schema,
        json!({"allOf": [{"properties": {"foo": {"type": "integer"}}}, {"multipleOf": 2}]})
    );
    let kept: Vec<String> = lowered
        .kept
        .iter()
        .map(|k| format!("{} {}", k.path, k.keywords.join("/")))
        .collect();
    assert_eq!(kept, ["/allOf/1 multipleOf"]);
    let refused = json!({"allOf": [{"if": {"type": "string"}}]});
    assert!(lower(&refused, SchemaTarget::LlamaCpp).is_err());
}

#[test]
fn a_schema_sent_as_written_says_which_keywords_depend_on_the_engine() {
    use structured_runtime::provider::dialect::{lower_reporting, Enforcement};
    let schema = json!({"type": "object", "properties": {
        "x": {"type": "number", "minimum": 0, "maximum": 1}, "s": {"type": "string"}}});
    let lowered = lower_reporting(&schema, SchemaTarget::JsonSchema).unwrap();
    assert_eq!(lowered.schema, schema);
    assert_eq!(lowered.kept.len(), 1);
    assert_eq!(lowered.kept[0].path.as_str(), "/properties/x");
    assert_eq!(lowered.kept[0].keywords, ["minimum", "maximum"]);
    assert_eq!(lowered.kept[0].enforcement, Enforcement::Unknown);
}

/// Each definition used twice by the next: 2^40 nodes if inlined naively.
fn doubling_definitions(levels: usize) -> Value {
    let mut defs = serde_json::Map::new();
    defs.insert("D0".into(), json!({"type": "string"}));
    for i in 1..=levels {
        let below = format!("#/$defs/D{}", i - 1);
        defs.insert(
            format!("D{i}"),
            json!({"type": "object", "properties": {"a": {"$ref": below}, "b": {"$ref": below}},
                   "required": ["a", "b"], "additionalProperties": false}),
        );
    }
    json!({"type": "object", "$defs": defs,
           "properties": {"top": {"$ref": format!("#/$defs/D{levels}")}},
           "required": ["top"], "additionalProperties": false})
}

#[test]
fn shared_definitions_cost_linear_work_or_a_size_error() {
    let schema = doubling_definitions(40);
    // Targets that keep references check each definition once.
    assert!(lower(&schema, SchemaTarget::Anthropic).is_ok());
    assert!(lower(&schema, SchemaTarget::OpenAiStrict).is_ok());
    // Targets that inline stop at the node budget with an error naming it.
    for target in [SchemaTarget::GeminiResponseSchema, SchemaTarget::LlamaCpp] {
        let err = lower(&schema, target).unwrap_err();
        assert!(err.to_string().contains("schema nodes"), "{err}");
    }
}

/// Definitions nested in definitions, each used twice with sibling keywords: inlining doubles at
/// every level. Every target's result stays within the node budget (plus the schema itself).
#[test]
fn nested_shared_definitions_cannot_make_a_lowering_explode() {
    use structured_runtime::provider::dialect::{lower, SchemaTarget, MAX_NODES};
    let n = 14;
    let mut inner = serde_json::json!({"type": "string"});
    for i in (0..n).rev() {
        let path: String = (0..=i).map(|j| format!("/$defs/d{j}")).collect();
        let leaf = i + 1 == n;
        let field = if leaf {
            serde_json::json!({"type": "string"})
        } else {
            serde_json::json!({"$ref": format!("#{path}/$defs/d{}", i + 1), "description": "x"})
        };
        let mut def = serde_json::json!({"type": "object", "properties": {"a": field.clone(), "b": field},
            "required": ["a", "b"], "additionalProperties": false});
        if !leaf {
            def["$defs"] = serde_json::json!({format!("d{}", i + 1): inner});
        }
        inner = def;
    }
    let schema = serde_json::json!({"type": "object",
        "properties": {"root": {"$ref": "#/$defs/d0", "description": "r"}},
        "required": ["root"], "additionalProperties": false, "$defs": {"d0": inner}});
    fn nodes(v: &serde_json::Value) -> usize {
        1 + match v {
            serde_json::Value::Object(m) => m.values().map(nodes).sum(),
            serde_json::Value::Array(a) => a.iter().map(nodes).sum(),
            _ => 0,
        }
    }
    for target in [
        SchemaTarget::OpenAiStrict,
        SchemaTarget::Anthropic,
        SchemaTarget::GeminiResponseSchema,
        SchemaTarget::GeminiJsonSchema,
        SchemaTarget::LlamaCpp,
    ] {
        if let Ok(out) = lower(&schema, target) {
            assert!(
                nodes(&out) <= 2 * MAX_NODES + nodes(&schema),
                "{target:?}: {} nodes",
                nodes(&out)
            );
        }
    }
}

/// Every change a lowering makes is reported: Gemini's `responseSchema` takes no `default`, so
/// it goes into the description and is said, never dropped without a word.
#[test]
fn gemini_response_schema_reports_the_default_it_does_not_send() {
    let schema = structured_runtime::ResponseSchema::new(
        "reply",
        json!({"type": "object", "properties": {
            "tone": {"type": "string", "enum": ["calm", "urgent"], "default": "calm"}},
            "required": ["tone"], "additionalProperties": false}),
    )
    .unwrap();
    let target = SchemaTarget::GeminiResponseSchema;
    let lowered = schema.lowered(target).unwrap();
    let tone = &lowered["properties"]["tone"];
    assert!(tone.get("default").is_none(), "{tone}");
    assert!(
        tone["description"]
            .as_str()
            .is_some_and(|d| d.contains("calm")),
        "{tone}"
    );
    let moved = schema.moved(target).unwrap();
    assert!(
        moved
            .iter()
            .any(|m| m.path.as_str() == "/properties/tone" && m.keywords == ["default"]),
        "{moved:?}"
    );
}

/// Schemas from the wild: `x-` keywords (OpenAPI and code generators write them) are annotations.
/// Kept in the schema as written, ignored by validation, never sent to a provider (each
/// lowering leaves them out and says so); a real unknown keyword (a typo) is still refused.
#[test]
fn extension_keywords_are_annotations_kept_ignored_and_never_sent() {
    use structured_runtime::{ResponseSchema, SchemaError};
    let written = json!({
        "type": "object", "x-go-type": "Reply",
        "properties": {"tone": {"type": "string", "enum": ["calm", "urgent"], "x-order": 1}},
        "required": ["tone"], "additionalProperties": false});
    let schema = ResponseSchema::new("reply", written.clone()).unwrap();
    assert_eq!(schema.schema(), &written, "kept as written");
    assert!(schema.check_instance(&json!({"tone": "calm"})).is_ok());
    assert!(schema.check_instance(&json!({"tone": "loud"})).is_err());
    for target in SchemaTarget::ALL {
        let sent = schema.lowered(target).unwrap().to_string();
        assert!(
            !sent.contains("x-go-type") && !sent.contains("x-order"),
            "{target:?}: {sent}"
        );
        let dropped = schema.dropped(target).unwrap();
        let said: Vec<(String, Vec<String>)> = dropped
            .iter()
            .map(|d| (d.path.as_str().to_owned(), d.keywords.clone()))
            .collect();
        assert_eq!(
            said,
            [
                (String::new(), vec!["x-go-type".to_owned()]),
                ("/properties/tone".to_owned(), vec!["x-order".to_owned()]),
            ],
            "{target:?}"
        );
    }
    // A typo is not an annotation.
    let typo = ResponseSchema::new(
        "reply",
        json!({"type": "object", "properties": {"tone": {"type": "string", "maxLenght": 4}},
            "required": ["tone"], "additionalProperties": false}),
    );
    assert!(
        matches!(&typo, Err(SchemaError::UnknownKeyword { keyword, .. }) if keyword == "maxLenght"),
        "{typo:?}"
    );
    // `x-` alone is not an annotation's name either.
    assert!(ResponseSchema::new("reply", json!({"type": "object", "x-": 1})).is_err());
}

/// pydantic's discriminated union (`oneOf` of referenced models beside OpenAPI's
/// `discriminator`): admitted because every branch requires the tag with one string, so the
/// keyword says nothing the branches do not; judged by the branches, never sent to a provider.
#[test]
fn a_discriminator_the_branches_already_say_is_admitted_and_never_sent() {
    use structured_runtime::ResponseSchema;
    let model = |kind: &str, field: &str| {
        json!({
            "type": "object", "title": kind,
            "properties": {"pet_type": {"const": kind, "title": "Pet Type", "type": "string"},
                           field: {"type": "integer"}},
            "required": ["pet_type", field]
        })
    };
    let written = json!({
        "type": "object", "title": "Model",
        "properties": {"pet": {
            "discriminator": {"mapping": {"cat": "#/$defs/Cat", "dog": "#/$defs/Dog"},
                              "propertyName": "pet_type"},
            "oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}],
            "title": "Pet"
        }},
        "required": ["pet"],
        "$defs": {"Cat": model("cat", "meows"), "Dog": model("dog", "barks")}
    });
    let schema = ResponseSchema::new("pets", written.clone()).unwrap();
    assert_eq!(schema.schema(), &written, "kept as written");
    assert!(schema
        .check_instance(&json!({"pet": {"pet_type": "dog", "barks": 3}}))
        .is_ok());
    let refused = schema
        .check_instance(&json!({"pet": {"pet_type": "dog", "barks": "x"}}))
        .unwrap_err();
    // Explained by the branch the tag names.
    assert_eq!(refused.iter().next().unwrap().path.as_str(), "/pet/barks");
    let mut lowered = 0;
    for target in SchemaTarget::ALL {
        // (Gemini's OpenAPI subset takes no `oneOf` at all: refused, for that reason.)
        let Ok(sent) = schema.lowered(target) else {
            continue;
        };
        lowered += 1;
        let sent = sent.to_string();
        assert!(!sent.contains("discriminator"), "{target:?}: {sent}");
        let dropped = schema.dropped(target).unwrap();
        assert!(
            dropped
                .iter()
                .any(|d| d.path.as_str() == "/properties/pet" && d.keywords == ["discriminator"]),
            "{target:?}: {dropped:?}"
        );
    }
    assert!(lowered >= 4, "{lowered}");
}

/// Anthropic's caps on one schema name the property that crosses each, with the count and the
/// limit (before, the root, with the count only).
#[test]
fn anthropic_caps_name_the_property_past_the_limit() {
    use structured_runtime::provider::dialect::SchemaTarget;
    let mut properties = serde_json::Map::new();
    for i in 0..26 {
        properties.insert(format!("o{i:02}"), json!({"type": "string"}));
    }
    for i in 0..17 {
        properties.insert(
            format!("u{i:02}"),
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
        );
    }
    let required: Vec<String> = (0..17).map(|i| format!("u{i:02}")).collect();
    let schema = structured_runtime::ResponseSchema::new(
        "wide",
        json!({"type": "object", "properties": properties, "required": required,
            "additionalProperties": false}),
    )
    .unwrap();
    let report = schema.lowered(SchemaTarget::Anthropic).unwrap_err();
    let found: Vec<(&str, &str)> = report
        .errors
        .iter()
        .map(|e| (e.path.as_str(), e.reason.as_str()))
        .collect();
    assert_eq!(found.len(), 2, "{report}");
    assert_eq!(found[0].0, "/properties/o24");
    assert!(
        found[0].1.starts_with("26 optional properties"),
        "{}",
        found[0].1
    );
    assert!(found[0].1.contains("at most 24"), "{}", found[0].1);
    assert_eq!(found[1].0, "/properties/u16");
    assert!(
        found[1].1.starts_with("17 properties with union types"),
        "{}",
        found[1].1
    );
    assert!(found[1].1.contains("at most 16"), "{}", found[1].1);
}

//! `parse_response` and `parse_value` on arbitrary text, in every mode and with every policy:
//! no panic, and what a `Parsed` claims holds; and the reading in parts
//! (`read::parts::parse_value_json`, and with every item read in parts itself) says what the
//! whole reading says, on schemas with a list, a map, members beside declared properties, a list
//! whose items must differ, objects allowing no undeclared member with a list in a list, and an
//! object allowing other members with lists below its declared ones, schemas as code generators
//! write them (references on the way, an optional list, a `oneOf` enum, a map whose keys are
//! judged and counted, a dict whose keys have patterns, an untagged enum) and one referring
//! back to its root (also read with defaults for missing and null values).
#![no_main]

use libfuzzer_sys::fuzz_target;
use structured_examples::{DaimonAppraisal, HeartbeatDecision};
use structured_fuzz::{is_json, numbers_read_as_written, serde_reads_back};
use structured_runtime::read::parts::{
    parse_value_json, parse_value_json_nesting_every_item, parse_value_json_within,
};
use structured_runtime::schema::MAX_VIOLATIONS;
use structured_runtime::{
    parse_value, Answer, ParseError, ParseOptions, Parsed, Provenance, Reading, ResponseSchema,
    SchemaLimits, StructuredOutput, StructuredOutputMode, Warning,
};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let modes = [
        StructuredOutputMode::None,
        StructuredOutputMode::SchemaEnforced,
        StructuredOutputMode::ToolUseWorkaround,
        StructuredOutputMode::PromptGuided,
    ];
    let lenient_truncated = ParseOptions {
        accept_truncated: true,
        ..ParseOptions::lenient()
    };
    for options in [
        ParseOptions::strict(),
        ParseOptions::default(),
        lenient_truncated,
    ] {
        for mode in modes {
            check::<HeartbeatDecision>(text, mode, &options);
            check::<DaimonAppraisal>(text, mode, &options);
        }
        for schema in in_parts_schemas() {
            agree(text, schema, &options);
        }
        // Defaults for what is missing or null, without `required_only` (which reads whole).
        let mut defaults = options.clone();
        defaults.coerce.null_to_default = true;
        defaults.coerce.missing_to_default = true;
        defaults.coerce.required_only = false;
        for schema in in_parts_schemas() {
            agree(text, schema, &defaults);
        }
        let schema = HeartbeatDecision::schema();
        if let Ok(parsed) = parse_value(text, schema, &options) {
            holds(&parsed, text, &options);
            // Clean means the answer as written is exactly the value.
            if parsed.provenance == Provenance::Clean && serde_reads_back(&parsed.value) {
                let written = serde_json::from_str::<serde_json::Value>(text);
                assert_eq!(written.ok().as_ref(), Some(&parsed.value));
            }
        }
        // The same text as a value a provider sent already parsed (a tool call's arguments).
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(text) {
            for mode in modes {
                let answer = Answer::Json(value.clone());
                if let Ok(parsed) = Reading::new(mode)
                    .options(&options)
                    .typed::<HeartbeatDecision>(&answer)
                {
                    assert!(structured_runtime::Validate::validate(&parsed.value).is_ok());
                    holds(&parsed, "", &options);
                }
            }
        }
    }
});

fn check<T: StructuredOutput>(text: &str, mode: StructuredOutputMode, options: &ParseOptions) {
    match Reading::new(mode).options(options).typed::<T>(text) {
        Ok(parsed) => {
            // Whatever the path, the value is one the type's own rules accept.
            assert!(parsed.value.validate().is_ok());
            holds(&parsed, text, options);
        }
        Err(ParseError::Truncated { warnings, .. }) => {
            assert!(warnings.contains(&Warning::Truncated));
        }
        Err(_) => {}
    }
}

fn holds<T>(parsed: &Parsed<T>, text: &str, options: &ParseOptions) {
    assert!(parsed.span.start <= parsed.span.end && parsed.span.end <= text.len());
    // Exact options return only the answer as written.
    assert!(!options.exact || parsed.provenance == Provenance::Clean);
    if parsed.provenance == Provenance::Clean && !text.is_empty() {
        assert!(is_json(text));
        // Every number in it is the value read.
        assert!(numbers_read_as_written(text), "{text:?}");
    }
    if parsed.provenance == Provenance::Clean {
        assert!(parsed.warnings.is_empty() && !parsed.truncated);
    } else {
        assert!(!parsed.warnings.is_empty(), "{:?}", parsed.provenance);
    }
    // A truncated value is returned only when asked for, and always says so.
    assert_eq!(
        parsed.truncated,
        parsed.warnings.contains(&Warning::Truncated)
    );
    assert!(!parsed.truncated || options.accept_truncated);
}

/// Schemas read in parts: a list of objects, a map, an object with members beside declared
/// properties, a list whose items must differ and some match `contains`, enums with data, rules
/// beside the way, names and counts beside declared properties, a tuple.
fn in_parts_schemas() -> &'static [ResponseSchema] {
    static SCHEMAS: std::sync::OnceLock<Vec<ResponseSchema>> = std::sync::OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let row = serde_json::json!({
            "type": "object",
            "properties": {"id": {"type": "integer", "minimum": 0}, "name": {"type": "string"}},
            "required": ["id"],
            "additionalProperties": false
        });
        let any_root = SchemaLimits {
            object_root: false,
            ..SchemaLimits::default()
        };
        [
            serde_json::json!({"type": "array", "items": row, "maxItems": 5}),
            serde_json::json!({"type": "object", "additionalProperties": {"type": "number", "maximum": 10}}),
            serde_json::json!({
                "type": "object",
                "properties": {"title": {"type": "string"}, "n": {"type": "integer"}},
                "required": ["title"],
                "additionalProperties": {"type": "integer"}
            }),
            serde_json::json!({"type": "array", "items": {"type": "number"}, "uniqueItems": true,
                               "contains": {"minimum": 5}, "maxContains": 3}),
            serde_json::json!({
                "type": "object",
                "properties": {"rows": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"id": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3}},
                    "required": ["id"],
                    "additionalProperties": false
                }}},
                "additionalProperties": false
            }),
            serde_json::json!({
                "type": "object",
                "properties": {
                    "rows": {"type": "array", "items": {"type": "integer"}},
                    "meta": {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}, "required": ["tags"]}
                },
                "required": ["rows"]
            }),
            // Enums with data: the variant named by a tag (as an `Option`), or by its one key
            // (as a member).
            serde_json::json!({"anyOf": [
                {
                    "type": "object",
                    "properties": {"kind": {"enum": ["rows"]}, "rows": {"type": "array", "items": row}},
                    "required": ["kind", "rows"],
                    "additionalProperties": false
                },
                {
                    "type": "object",
                    "properties": {"kind": {"const": "n"}, "n": {"type": "integer"}},
                    "required": ["kind", "n"],
                    "additionalProperties": false
                },
                {"type": "null"}
            ]}),
            serde_json::json!({
                "type": "object",
                "properties": {"note": {"type": "string"}, "act": {"anyOf": [
                    {
                        "type": "object",
                        "properties": {"Rows": {"type": "array", "items": row}},
                        "required": ["Rows"],
                        "additionalProperties": false
                    },
                    {
                        "type": "object",
                        "properties": {"N": {"type": "integer"}},
                        "required": ["N"],
                        "additionalProperties": false
                    },
                    {"type": "string", "enum": ["stop"]}
                ]}},
                "required": ["act"],
                "additionalProperties": false
            }),
            // As code generators write schemas: the root a reference, an optional list, a
            // reference wrapped in an `allOf` of one, an enum with data as a `oneOf`.
            serde_json::json!({
                "$ref": "#/$defs/Page",
                "$defs": {
                    "Row": row,
                    "Act": {"oneOf": [
                        {"type": "object", "properties": {"Rows": {"type": "array", "items": {"$ref": "#/$defs/Row"}}}, "required": ["Rows"], "additionalProperties": false},
                        {"type": "string", "enum": ["stop"]}
                    ]},
                    "Page": {
                        "type": "object",
                        "properties": {
                            "rows": {"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/Row"}, "maxItems": 4}, {"type": "null"}]},
                            "act": {"allOf": [{"$ref": "#/$defs/Act"}], "description": "what to do"}
                        },
                        "required": ["act"]
                    }
                }
            }),
            // A map whose keys are judged and counted.
            serde_json::json!({
                "type": "object",
                "additionalProperties": {"type": "integer"},
                "propertyNames": {"pattern": "^[a-z]+$"},
                "minProperties": 1,
                "maxProperties": 3
            }),
            // A dict whose members' schemas their names' patterns give (two overlapping), the
            // other names by `additionalProperties`.
            serde_json::json!({
                "type": "object",
                "properties": {"rows": {
                    "type": "object",
                    "patternProperties": {
                        "^r": row,
                        "^r[0-9]$": {"required": ["name"]},
                        "^\\d+$": {"type": "integer"}
                    },
                    "additionalProperties": {"type": "string"}
                }}
            }),
            // A member referring back to the root (judged in the rest by a copy of the whole).
            serde_json::json!({
                "type": "object",
                "properties": {"rows": {"type": "array", "items": row}, "again": {"$ref": "#"}}
            }),
            // A tree as a recursive derived type writes it: each child the root again.
            serde_json::json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "maxLength": 4},
                    "children": {"type": "array", "items": {"$ref": "#"}, "maxItems": 3}
                },
                "required": ["name", "children"],
                "additionalProperties": false
            }),
            // A list whose items the schema leaves free (kept as their text).
            serde_json::json!({
                "type": "object",
                "properties": {"data": {"type": "array", "items": {}}, "n": {"type": "integer"}}
            }),
            // An untagged enum as a member: only an object's names tell its variants apart.
            serde_json::json!({
                "type": "object",
                "properties": {"payload": {"anyOf": [
                    {
                        "type": "object",
                        "properties": {"rows": {"type": "array", "items": row}, "title": {"type": "string"}},
                        "required": ["rows", "title"],
                        "additionalProperties": false
                    },
                    {
                        "type": "object",
                        "properties": {
                            "rows": {"type": "array", "items": {"type": "integer"}},
                            "title": {"type": ["string", "integer"]},
                            "count": {"type": "integer"}
                        },
                        "additionalProperties": false
                    },
                    {"type": "string"}
                ]}},
                "required": ["payload"]
            }),
            // Rules beside the way that never look inside it, and names and counts judged beside
            // declared properties (other members allowed, or none).
            serde_json::json!({
                "type": "object",
                "properties": {"kind": {"type": "string"}, "rows": {"type": "array", "items": row}},
                "if": {"properties": {"kind": {"const": "a"}}},
                "then": {"required": ["note"]},
                "not": {"required": ["note", "x"]}
            }),
            serde_json::json!({
                "type": "object",
                "properties": {"title": {"type": "string"}, "rows": {"type": "array", "items": row}},
                "additionalProperties": {"type": "integer"},
                "propertyNames": {"maxLength": 4},
                "maxProperties": 4
            }),
            serde_json::json!({
                "type": "object",
                "properties": {"title": {"type": "string"}, "rows": {"type": "array", "items": row}},
                "additionalProperties": false,
                "propertyNames": {"maxLength": 4},
                "minProperties": 1,
                "maxProperties": 2
            }),
            // A tuple on the way: a list at one position, a free one after it.
            serde_json::json!({
                "type": "object",
                "properties": {"page": {"type": "array", "prefixItems": [
                    {"type": "string"},
                    {"type": "array", "items": row, "maxItems": 4},
                    {}
                ], "minItems": 2, "maxItems": 3}},
                "required": ["page"],
                "additionalProperties": false
            }),
        ]
        .into_iter()
        .filter_map(|schema| ResponseSchema::with_limits("parts", schema, &any_root).ok())
        .collect()
    })
}

/// The reading in parts and the whole reading give the same outcome: value text, provenance,
/// span and warnings, or the same refusal with the same violations. Holding whole at most a few
/// bytes' worth, the same again, or a refusal as too large of an answer longer than that.
fn agree(text: &str, schema: &ResponseSchema, options: &ParseOptions) {
    let whole = outcome(parse_value(text, schema, options).map(|p| p.map(|v| v.to_string())));
    let parts = outcome(parse_value_json(text, schema, options));
    assert_eq!(parts, whole, "{text:?}");
    let nested = outcome(parse_value_json_nesting_every_item(text, schema, options));
    assert_eq!(nested, whole, "nested: {text:?}");
    let limit = text.len() / 2;
    match parse_value_json_within(text, schema, options, limit) {
        Err(ParseError::TooLarge { bytes, .. }) => {
            assert!(text.len() > limit, "{text:?}");
            assert!(
                bytes.is_none_or(|b| b > limit && b <= text.len()),
                "{bytes:?}: {text:?}"
            );
        }
        within => assert_eq!(outcome(within), whole, "within {limit}: {text:?}"),
    }
}

fn outcome(result: Result<Parsed<String>, ParseError>) -> (String, Vec<String>, Vec<String>) {
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    let words = |warnings: &[Warning]| sorted(warnings.iter().map(|w| w.to_string()).collect());
    match result {
        Ok(p) => (
            format!(
                "Ok {:?} {} {:?} {}",
                p.provenance, p.truncated, p.span, p.value
            ),
            words(&p.warnings),
            Vec::new(),
        ),
        Err(ParseError::Invalid {
            violations,
            warnings,
            ..
        }) => {
            let listed = if violations.len() >= MAX_VIOLATIONS {
                // A full report lists the first found, in each reading's own order.
                vec![format!("{} violations", violations.len())]
            } else {
                sorted(violations.iter().map(|v| v.to_string()).collect())
            };
            ("Invalid".into(), words(&warnings), listed)
        }
        Err(ParseError::Truncated { warnings, .. }) => {
            ("Truncated".into(), words(&warnings), Vec::new())
        }
        Err(ParseError::NotExact { warnings }) => ("NotExact".into(), words(&warnings), Vec::new()),
        Err(e) => (e.to_string(), Vec::new(), Vec::new()),
    }
}

//! Every example type, and every shape the derive can write (nested, nullable nested, recursive,
//! generic), passes the strict preflight; schemas that break strict mode are reported by path.

use serde::Deserialize;
use serde_json::json;
use structured_runtime::schema::StrictRule;
use structured_runtime::{ResponseSchema, StructuredOutput};

#[test]
fn every_example_type_passes_the_strict_preflight() {
    let schemas = structured_examples::all_schemas();
    assert_eq!(schemas.len(), 16);
    for schema in schemas {
        if let Err(report) = schema.strict_preflight() {
            panic!("{}: {report}", schema.name());
        }
    }
}

/// A tree: the type contains itself, so it cannot be inlined.
#[derive(StructuredOutput, Deserialize, Debug)]
struct Topic {
    title: String,
    subtopics: Vec<Topic>,
}

/// A chain through another type.
#[derive(StructuredOutput, Deserialize, Debug)]
struct Outline {
    root: Section,
}

#[derive(StructuredOutput, Deserialize, Debug)]
struct Section {
    heading: String,
    /// The next section, if any.
    next: Option<Box<Section>>,
}

#[derive(StructuredOutput, Deserialize, Debug)]
struct Page<T> {
    items: Vec<T>,
    total: u32,
}

#[derive(StructuredOutput, Deserialize, Debug)]
struct Tag {
    label: String,
}

#[test]
fn recursive_root_refers_to_itself() {
    let schema = Topic::schema();
    assert_eq!(
        schema.schema(),
        &json!({
            "type": "object",
            "description": "A tree: the type contains itself, so it cannot be inlined.",
            "properties": {
                "title": {"type": "string"},
                "subtopics": {"type": "array", "items": {"$ref": "#"}}
            },
            "required": ["title", "subtopics"],
            "additionalProperties": false
        })
    );
    schema.strict_preflight().unwrap();
    let topic =
        Topic::from_json(r#"{"title":"a","subtopics":[{"title":"b","subtopics":[]}]}"#).unwrap();
    assert_eq!(topic.subtopics[0].title, "b");
    let err = Topic::from_json(r#"{"title":"a","subtopics":[{"title":"b"}]}"#).unwrap_err();
    assert_eq!(err.violations().unwrap()[0].path, "/subtopics/0/subtopics");
}

#[test]
fn recursive_nested_type_goes_to_defs() {
    let schema = Outline::schema();
    assert_eq!(
        schema.schema(),
        &json!({
            "type": "object",
            "description": "A chain through another type.",
            "properties": {"root": {"$ref": "#/$defs/section"}},
            "required": ["root"],
            "additionalProperties": false,
            "$defs": {
                "section": {
                    "type": "object",
                    "properties": {
                        "heading": {"type": "string"},
                        "next": {
                            "anyOf": [{"$ref": "#/$defs/section"}, {"type": "null"}],
                            "description": "The next section, if any."
                        }
                    },
                    "required": ["heading", "next"],
                    "additionalProperties": false
                }
            }
        })
    );
    schema.strict_preflight().unwrap();
    let ok = Outline::from_json(r#"{"root":{"heading":"a","next":{"heading":"b","next":null}}}"#)
        .unwrap();
    assert_eq!(ok.root.next.unwrap().heading, "b");
    let err = Outline::from_json(r#"{"root":{"heading":"a","next":{"heading":3,"next":null}}}"#)
        .unwrap_err();
    let v = &err.violations().unwrap()[0];
    assert_eq!(
        (v.path.as_str(), v.expected.as_str()),
        ("/root/next/heading", "a string")
    );
}

#[test]
fn generic_struct_has_one_schema_per_instantiation() {
    let tags = Page::<Tag>::schema();
    let numbers = Page::<f64>::schema();
    assert_eq!(
        tags.schema()["properties"]["items"]["items"]["type"],
        "object"
    );
    assert_eq!(
        numbers.schema()["properties"]["items"]["items"],
        json!({"type": "number"})
    );
    assert!(std::ptr::eq(tags, Page::<Tag>::schema()));
    tags.strict_preflight().unwrap();
    numbers.strict_preflight().unwrap();
    let page = Page::<Tag>::from_json(r#"{"items":[{"label":"x"}],"total":1}"#).unwrap();
    assert_eq!(page.items[0].label, "x");
}

#[test]
fn hand_written_schema_breaking_strict_mode_is_reported_by_path() {
    let schema = ResponseSchema::new(
        "loose",
        json!({
            "type": "object",
            "properties": {"tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}},
        }),
    )
    .unwrap();
    let report = schema.strict_preflight().unwrap_err();
    let found: Vec<(&str, &StrictRule)> = report
        .0
        .iter()
        .map(|v| (v.path.as_str(), &v.rule))
        .collect();
    assert_eq!(
        found,
        vec![
            ("", &StrictRule::AdditionalPropertiesNotFalse),
            (
                "",
                &StrictRule::NotRequired {
                    property: "tags".into()
                }
            ),
            (
                "/properties/tags",
                &StrictRule::UnsupportedKeyword {
                    keyword: "uniqueItems".into()
                }
            ),
        ]
    );
    assert_eq!(
        report.to_string(),
        "schema breaks strict mode in 3 place(s):\n  (root): object must set `\"additionalProperties\": false`\n  (root): property `tags` is not in `required` (make it required and nullable instead)\n  /properties/tags: keyword `uniqueItems` is not supported in strict mode"
    );
}

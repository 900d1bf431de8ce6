//! The Rust types users already write: enums with data in serde's four representations, maps,
//! newtypes, tuples, arrays, sets, `char`, `Box<str>`, `Arc`, flatten, alias, transparent. For
//! each: the exact schema, a `from_json` round trip of what serde writes, and an invalid value
//! refused with its exact report.

mod common;
use common::streaming::StreamingOpenAi;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use structured_runtime::{FromJsonError, Rule, StructuredOutput};

/// The currency of an amount.
#[derive(
    StructuredOutput,
    Deserialize,
    Serialize,
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
)]
#[serde(rename_all = "UPPERCASE")]
enum Currency {
    Eur,
    Usd,
}

#[derive(StructuredOutput, Deserialize, Serialize, Debug, Clone, PartialEq)]
struct Escalation {
    #[length(min = 1)]
    team: String,
}

/// What to do with a ticket.
#[derive(StructuredOutput, Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Action {
    /// Close it.
    Close,
    /// Refund the customer.
    Refund {
        #[range(min = 0.01)]
        amount: f64,
        currency: Currency,
    },
    Escalate(Escalation),
}

#[derive(StructuredOutput, Deserialize, Serialize, Debug, Clone, PartialEq)]
enum External {
    Plain,
    Wrapped(#[range(0, 9)] u8),
    Pair(String, bool),
    Named { note: String },
}

#[derive(StructuredOutput, Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(tag = "t", content = "c")]
enum Adjacent {
    Nothing,
    Count(#[range(max = 3)] u32),
    Point { x: i32, y: i32 },
}

#[derive(StructuredOutput, Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(untagged)]
enum Untagged {
    Text(#[pattern("^[a-z]+$")] String),
    Pair { left: u8, right: u8 },
}

/// An account's id.
#[derive(
    StructuredOutput, Deserialize, Serialize, Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord,
)]
struct AccountId(#[pattern("^acc_[0-9]+$")] String);

#[derive(StructuredOutput, Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(transparent)]
struct Score {
    #[range(0.0, 1.0)]
    value: f64,
}

#[derive(StructuredOutput, Deserialize, Serialize, Debug, Clone, PartialEq)]
struct Point3(f32, f32, #[range(min = 0)] f32);

#[derive(StructuredOutput, Deserialize, Serialize, Debug, Clone, PartialEq)]
struct Audit {
    #[range(min = 0)]
    revision: u32,
}

/// A triaged ticket.
#[derive(StructuredOutput, Deserialize, Serialize, Debug, Clone, PartialEq)]
struct Ticket {
    account: AccountId,
    action: Action,
    /// Confidence per label.
    #[range(0.0, 1.0)]
    #[length(max = 3)]
    labels: BTreeMap<String, f64>,
    totals: HashMap<Currency, u32>,
    tags: BTreeSet<String>,
    score: Score,
    at: Point3,
    span: (u8, String),
    rgb: [u8; 3],
    grade: char,
    note: Box<str>,
    owner: Arc<String>,
    #[serde(flatten)]
    audit: Audit,
    #[serde(alias = "summary_text")]
    summary: String,
}

fn ticket() -> Ticket {
    Ticket {
        account: AccountId("acc_12".into()),
        action: Action::Refund {
            amount: 9.5,
            currency: Currency::Eur,
        },
        labels: [("billing".to_owned(), 0.9)].into(),
        totals: [(Currency::Usd, 3)].into(),
        tags: ["a".to_owned(), "b".to_owned()].into(),
        score: Score { value: 0.5 },
        at: Point3(1.0, 2.0, 3.0),
        span: (2, "x".into()),
        rgb: [1, 2, 3],
        grade: 'A',
        note: "n".into(),
        owner: Arc::new("ops".into()),
        audit: Audit { revision: 4 },
        summary: "s".into(),
    }
}

fn report(e: FromJsonError) -> Vec<(String, Rule)> {
    e.violations()
        .unwrap_or_else(|| panic!("not a violation: {e}"))
        .iter()
        .map(|v| (v.path.as_str().to_owned(), v.rule))
        .collect()
}

fn refused<T: StructuredOutput + std::fmt::Debug>(value: Value) -> Vec<(String, Rule)> {
    report(T::from_json(&value.to_string()).unwrap_err())
}

#[test]
fn data_enum_schemas_in_every_representation() {
    let s = |v: &Value| v.clone();
    assert_eq!(
        s(Action::schema().schema()),
        json!({
            "description": "What to do with a ticket.",
            "anyOf": [
                {"type": "object", "properties": {"kind": {"type": "string", "enum": ["close"]}},
                 "required": ["kind"], "additionalProperties": false, "description": "Close it."},
                {"type": "object", "description": "Refund the customer.",
                 "properties": {"kind": {"type": "string", "enum": ["refund"]},
                                "amount": {"type": "number", "minimum": 0.01},
                                "currency": {"type": "string", "description": "The currency of an amount.", "enum": ["EUR", "USD"]}},
                 "required": ["kind", "amount", "currency"], "additionalProperties": false},
                {"type": "object",
                 "properties": {"kind": {"type": "string", "enum": ["escalate"]},
                                "team": {"type": "string", "minLength": 1}},
                 "required": ["kind", "team"], "additionalProperties": false}
            ]
        })
    );
    assert_eq!(
        s(External::schema().schema()),
        json!({"anyOf": [
            {"type": "string", "enum": ["Plain"]},
            {"type": "object", "properties": {"Wrapped": {"type": "integer", "minimum": 0, "maximum": 9}},
             "required": ["Wrapped"], "additionalProperties": false},
            {"type": "object", "properties": {"Pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "boolean"}],
                                                       "minItems": 2, "maxItems": 2}},
             "required": ["Pair"], "additionalProperties": false},
            {"type": "object", "properties": {"Named": {"type": "object", "properties": {"note": {"type": "string"}},
                                                        "required": ["note"], "additionalProperties": false}},
             "required": ["Named"], "additionalProperties": false}
        ]})
    );
    assert_eq!(
        s(Adjacent::schema().schema()),
        json!({"anyOf": [
            {"type": "object", "properties": {"t": {"type": "string", "enum": ["Nothing"]}},
             "required": ["t"], "additionalProperties": false},
            {"type": "object", "properties": {"t": {"type": "string", "enum": ["Count"]},
                                              "c": {"type": "integer", "minimum": 0, "maximum": 3}},
             "required": ["t", "c"], "additionalProperties": false},
            {"type": "object", "properties": {"t": {"type": "string", "enum": ["Point"]},
                                              "c": {"type": "object", "properties": {
                                                  "x": {"type": "integer", "minimum": -2147483648, "maximum": 2147483647},
                                                  "y": {"type": "integer", "minimum": -2147483648, "maximum": 2147483647}},
                                                  "required": ["x", "y"], "additionalProperties": false}},
             "required": ["t", "c"], "additionalProperties": false}
        ]})
    );
    assert_eq!(
        s(Untagged::schema().schema()),
        json!({"anyOf": [
            {"type": "string", "pattern": "^[a-z]+$"},
            {"type": "object", "properties": {"left": {"type": "integer", "minimum": 0, "maximum": 255},
                                              "right": {"type": "integer", "minimum": 0, "maximum": 255}},
             "required": ["left", "right"], "additionalProperties": false}
        ]})
    );
}

#[test]
fn every_representation_round_trips_what_serde_writes() {
    fn round<T: StructuredOutput + Serialize + PartialEq + std::fmt::Debug>(value: T) {
        let text = serde_json::to_string(&value).unwrap();
        assert_eq!(T::from_json(&text).unwrap(), value, "{text}");
    }
    round(Action::Close);
    round(Action::Refund {
        amount: 2.5,
        currency: Currency::Usd,
    });
    round(Action::Escalate(Escalation { team: "ops".into() }));
    round(External::Plain);
    round(External::Wrapped(3));
    round(External::Pair("p".into(), true));
    round(External::Named { note: "n".into() });
    round(Adjacent::Nothing);
    round(Adjacent::Count(2));
    round(Adjacent::Point { x: -1, y: 2 });
    round(Untagged::Text("abc".into()));
    round(Untagged::Pair { left: 1, right: 2 });
    round(ticket());
}

/// JSON Schema calls `3.0` an integer; so does `from_json`, also inside what serde buffers
/// (found by the agreement proptest: serde alone refuses a float there).
#[test]
fn an_integral_float_is_an_integer_inside_tagged_enums_too() {
    assert_eq!(
        External::from_json(r#"{"Wrapped": 3.0}"#).unwrap(),
        External::Wrapped(3)
    );
    assert_eq!(
        Adjacent::from_json(r#"{"t": "Point", "c": {"x": -1.0, "y": 2}}"#).unwrap(),
        Adjacent::Point { x: -1, y: 2 }
    );
    assert_eq!(
        Untagged::from_json(r#"{"left": 1, "right": 2.0}"#).unwrap(),
        Untagged::Pair { left: 1, right: 2 }
    );
    // A fraction is still refused, with the rule that says so.
    assert_eq!(
        refused::<External>(json!({"Wrapped": 3.5})),
        [("/Wrapped".to_owned(), Rule::Type)]
    );
}

#[test]
fn the_tag_selects_the_variant_whose_violations_are_reported() {
    // The tag says `refund`: the refund's own rules are reported, not "no branch matched".
    assert_eq!(
        refused::<Action>(json!({"kind": "refund", "amount": 0, "currency": "GBP"})),
        [
            ("/amount".to_owned(), Rule::Range),
            ("/currency".to_owned(), Rule::Enum)
        ]
    );
    assert_eq!(
        refused::<Action>(json!({"kind": "refund", "amount": 1.0})),
        [("/currency".to_owned(), Rule::Required)]
    );
    // An extra key inside a tagged variant: serde would ignore it; the report names it.
    assert_eq!(
        refused::<Action>(json!({"kind": "close", "why": "done"})),
        [("/why".to_owned(), Rule::AdditionalProperty)]
    );
    assert_eq!(
        refused::<External>(json!({"Wrapped": 12})),
        [("/Wrapped".to_owned(), Rule::Range)]
    );
    assert_eq!(
        refused::<Adjacent>(json!({"t": "Count", "c": 7})),
        [("/c".to_owned(), Rule::Range)]
    );
    assert_eq!(
        refused::<Adjacent>(json!({"t": "Point", "c": {"x": 1}})),
        [("/c/y".to_owned(), Rule::Required)]
    );
    // Untagged: the closest variant's violations.
    assert_eq!(
        refused::<Untagged>(json!({"left": 1, "right": 300})),
        [("/right".to_owned(), Rule::Range)]
    );
    assert_eq!(
        refused::<Untagged>(json!("ABC")),
        [("".to_owned(), Rule::Pattern)]
    );
    // A unit variant written as serde's object form is not what the schema says.
    assert_eq!(
        refused::<External>(json!({"Plain": null})),
        [("".to_owned(), Rule::AnyOf)]
    );
}

#[test]
fn containers_and_newtypes_are_checked_where_their_values_sit() {
    let mut t = serde_json::to_value(ticket()).unwrap();
    t["account"] = json!("acct-1");
    t["labels"] = json!({"a": 0.5, "b": 1.5});
    t["totals"] = json!({"GBP": 1});
    t["tags"] = json!(["x", "x"]);
    t["score"] = json!(2.0);
    t["at"] = json!([0.0, 0.0, -1.0]);
    t["span"] = json!([1]);
    t["rgb"] = json!([1, 2]);
    t["grade"] = json!("AB");
    assert_eq!(
        refused::<Ticket>(t),
        [
            ("/account".to_owned(), Rule::Pattern),
            ("/labels/b".to_owned(), Rule::Range),
            ("/totals/GBP".to_owned(), Rule::PropertyNames),
            ("/tags/1".to_owned(), Rule::UniqueItems),
            ("/score".to_owned(), Rule::Range),
            ("/at/2".to_owned(), Rule::Range),
            ("/span".to_owned(), Rule::Items),
            ("/rgb".to_owned(), Rule::Items),
            ("/grade".to_owned(), Rule::Length),
        ]
    );
}

#[test]
fn a_repeated_set_item_is_refused_not_merged() {
    let mut t = serde_json::to_value(ticket()).unwrap();
    t["tags"] = json!(["a", "b", "a"]);
    assert_eq!(
        refused::<Ticket>(t),
        [("/tags/2".to_owned(), Rule::UniqueItems)]
    );
}

#[test]
fn rules_of_the_types_inside_hold_after_deserialization() {
    // Values serde reads, with rules only Validate knows.
    let mut t = serde_json::to_value(ticket()).unwrap();
    t["labels"] = json!({"a": 0.1, "b": 0.2, "c": 0.3, "d": 0.4});
    t["action"] = json!({"kind": "escalate", "team": ""});
    assert_eq!(
        refused::<Ticket>(t),
        [
            ("/action/team".to_owned(), Rule::Length),
            ("/labels".to_owned(), Rule::Properties),
        ]
    );
}

#[test]
fn flatten_merges_properties_and_alias_is_not_clean() {
    let schema = Ticket::schema().schema();
    let props: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    assert!(props.contains(&&"revision".to_owned()), "{props:?}");
    assert!(!props.contains(&&"audit".to_owned()));
    assert_eq!(
        schema["properties"]["revision"],
        json!({"type": "integer", "minimum": 0, "maximum": 4294967295u64})
    );
    // A key neither the struct nor the flattened one declares: serde would drop it.
    let mut extra = serde_json::to_value(ticket()).unwrap();
    extra["zzz"] = json!(1);
    assert_eq!(
        refused::<Ticket>(extra),
        [("/zzz".to_owned(), Rule::AdditionalProperty)]
    );
    // The alias is read by serde, but it is not the name the schema declares: not clean.
    let mut t = serde_json::to_value(ticket()).unwrap();
    let summary = t.as_object_mut().unwrap().remove("summary").unwrap();
    t["summary_text"] = summary;
    assert_eq!(
        refused::<Ticket>(t.clone()),
        [
            ("/summary".to_owned(), Rule::Required),
            ("/summary_text".to_owned(), Rule::AdditionalProperty)
        ]
    );
    // The pipeline reads it, renamed with a warning.
    let parsed = structured_runtime::parse_response::<Ticket>(
        &t.to_string(),
        structured_runtime::StructuredOutputMode::PromptGuided,
    )
    .unwrap();
    assert_eq!(parsed.value, ticket());
    assert_ne!(parsed.provenance, structured_runtime::Provenance::Clean);
}

#[test]
fn lowering_per_target_is_ok_or_names_the_path_and_the_target() {
    use structured_runtime::provider::dialect::{lower, lower_reporting, SchemaTarget};
    let schemas = [
        Ticket::schema().schema(),
        Action::schema().schema(),
        External::schema().schema(),
        Adjacent::schema().schema(),
        Untagged::schema().schema(),
    ];
    for target in SchemaTarget::ALL {
        for schema in schemas {
            if let Err(report) = lower(schema, target) {
                panic!("{target:?}: {report}");
            }
        }
    }
    // OpenAI strict closes every object and takes an object root only: a map goes as a list
    // of {key, value} entries (its key names as the key's enum, its count as the list's), an
    // enum at the root as the one property of an object; the reshape says so.
    let lowered = lower_reporting(Ticket::schema().schema(), SchemaTarget::OpenAiStrict).unwrap();
    let totals = &lowered.schema["properties"]["totals"];
    assert_eq!(totals["type"], "array");
    assert_eq!(
        totals["items"],
        json!({
            "type": "object",
            "properties": {
                "key": {"type": "string", "enum": ["EUR", "USD"]},
                "value": {"type": "integer", "minimum": 0, "maximum": 4294967295u64}
            },
            "required": ["key", "value"],
            "additionalProperties": false
        })
    );
    assert_eq!(lowered.schema["properties"]["labels"]["maxItems"], 3);
    let entries: Vec<String> = lowered
        .reshape
        .entries
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(entries, ["/properties/labels", "/properties/totals"]);
    assert_eq!(lowered.reshape.root_key, None);
    let lowered = lower_reporting(Action::schema().schema(), SchemaTarget::OpenAiStrict).unwrap();
    assert_eq!(lowered.schema["type"], "object");
    assert_eq!(lowered.schema["required"], json!(["value"]));
    assert!(lowered.schema["properties"]["value"]["anyOf"].is_array());
    assert_eq!(lowered.reshape.root_key.as_deref(), Some("value"));
    #[derive(StructuredOutput, Deserialize)]
    #[allow(dead_code)]
    struct Located {
        at: Point3,
        tags: BTreeSet<String>,
    }
    let lowered = lower_reporting(Located::schema().schema(), SchemaTarget::OpenAiStrict);
    let lowered = lowered.unwrap();
    assert_eq!(
        lowered.schema["properties"]["at"]["items"],
        json!({"anyOf": [{"type": "number"}, {"type": "number", "minimum": 0}]})
    );
    assert!(lowered.moved.iter().any(|m| m.keywords == ["prefixItems"]));
}

/// `value` as OpenAI strict mode is asked to write it: each map a list of entries.
fn as_entries(value: &Value) -> Value {
    let entries = |map: &Value| {
        Value::Array(
            map.as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| json!({"key": k, "value": v}))
                .collect(),
        )
    };
    let mut wire = value.clone();
    wire["labels"] = entries(&value["labels"]);
    wire["totals"] = entries(&value["totals"]);
    wire
}

/// An answer in the shape sent to OpenAI strict mode reads back as the user's type, clean (the
/// model wrote exactly what it was asked for); a key given twice is a violation at that entry.
#[test]
fn an_answer_in_the_sent_shape_reads_back_into_the_type() {
    use structured_runtime::provider::dialect::SchemaTarget;
    use structured_runtime::{
        Answer, ParseError, ParseOptions, Provenance, Reading, StructuredOutputMode,
    };
    let read = |answer: &Value, reshape| {
        Reading::new(StructuredOutputMode::SchemaEnforced)
            .options(&ParseOptions::default())
            .reshape(reshape)
            .typed::<Ticket>(&Answer::Text(answer.to_string()))
    };
    let reshape = Ticket::schema()
        .reshape(SchemaTarget::OpenAiStrict)
        .unwrap();
    let wire = as_entries(&serde_json::to_value(ticket()).unwrap());
    let parsed = read(&wire, reshape).unwrap();
    assert_eq!(parsed.value, ticket());
    assert_eq!(parsed.provenance, Provenance::Clean);
    // As a value (a tool call's arguments), the same.
    let parsed = Reading::new(StructuredOutputMode::ToolUseWorkaround)
        .options(&ParseOptions::default())
        .reshape(reshape)
        .typed::<Ticket>(&Answer::Json(wire.clone()))
        .unwrap();
    assert_eq!(
        (parsed.value, parsed.provenance),
        (ticket(), Provenance::Clean)
    );
    // A key twice: refused at the second entry, never one of the two chosen.
    let mut twice = wire.clone();
    twice["labels"] = json!([{"key": "billing", "value": 0.9}, {"key": "billing", "value": 0.1}]);
    match read(&twice, reshape) {
        Err(ParseError::Invalid { violations, .. }) => {
            let found: Vec<(String, Rule)> = violations
                .iter()
                .map(|v| (v.path.to_string(), v.rule))
                .collect();
            assert_eq!(found, [("/labels/1/key".to_owned(), Rule::UniqueItems)]);
        }
        other => panic!("{other:?}"),
    }
    // A rule inside a map is reported at the key it belongs to.
    let mut high = wire.clone();
    high["labels"] = json!([{"key": "billing", "value": 1.5}]);
    match read(&high, reshape) {
        Err(ParseError::Invalid { violations, .. }) => {
            assert_eq!(
                violations.iter().next().unwrap().path.to_string(),
                "/labels/billing"
            )
        }
        other => panic!("{other:?}"),
    }
    // An enum at the root comes wrapped, and is read unwrapped.
    let reshape = Action::schema()
        .reshape(SchemaTarget::OpenAiStrict)
        .unwrap();
    let parsed = Reading::new(StructuredOutputMode::SchemaEnforced)
        .options(&ParseOptions::default())
        .reshape(reshape)
        .typed::<Action>(&Answer::Text(
            r#"{"value": {"kind": "refund", "amount": 2.5, "currency": "USD"}}"#.into(),
        ))
        .unwrap();
    assert_eq!(
        (parsed.value, parsed.provenance),
        (
            Action::Refund {
                amount: 2.5,
                currency: Currency::Usd
            },
            Provenance::Clean
        )
    );
}

/// The runner sends the reshaped schema to OpenAI and gives back the user's type; a repeated
/// key is re-asked with its path.
#[test]
fn a_run_against_openai_strict_gives_maps_and_root_enums() {
    use structured_examples::replay::{block_on, ReplayProvider, Reply};
    use structured_runtime::provider::capabilities::ProviderKind;
    use structured_runtime::run::{run_structured, RunConfig};
    use structured_runtime::{ChatRequest, Provenance};
    let wire = as_entries(&serde_json::to_value(ticket()).unwrap());
    let mut twice = wire.clone();
    twice["totals"] = json!([{"key": "USD", "value": 3}, {"key": "USD", "value": 4}]);
    let provider = ReplayProvider::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        Ticket::schema().name(),
        vec![
            Reply::Answer(twice.to_string()),
            Reply::Answer(wire.to_string()),
        ],
    );
    let out = block_on(run_structured::<Ticket, _>(
        &provider,
        &ChatRequest::user("Triage this ticket."),
        &RunConfig::default(),
    ))
    .unwrap();
    assert_eq!(out.value, ticket());
    assert_eq!(out.provenance, Provenance::Clean);
    assert_eq!(out.attempts, 2);
    let sent = provider.sent();
    let schema = &sent[0]["response_format"]["json_schema"]["schema"];
    assert_eq!(schema["properties"]["totals"]["type"], "array");
    let correction = sent[1]["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(correction.contains("/totals/1/key"), "{correction}");

    let provider = ReplayProvider::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        Action::schema().name(),
        vec![Reply::Answer(r#"{"value": {"kind": "close"}}"#.into())],
    );
    let out = block_on(run_structured::<Action, _>(
        &provider,
        &ChatRequest::user("What now?"),
        &RunConfig::default(),
    ))
    .unwrap();
    assert_eq!(
        (out.value, out.provenance),
        (Action::Close, Provenance::Clean)
    );
}

/// The report the README's worked example quotes.
#[test]
fn the_readme_example_report() {
    let mut t = serde_json::to_value(ticket()).unwrap();
    t["action"] = json!({"kind": "refund", "amount": 0, "currency": "GBP"});
    t["labels"] = json!({"a": 1.5});
    t["tags"] = json!(["x", "x"]);
    assert_eq!(
        refused::<Ticket>(t),
        [
            ("/action/amount".to_owned(), Rule::Range),
            ("/action/currency".to_owned(), Rule::Enum),
            ("/labels/a".to_owned(), Rule::Range),
            ("/tags/1".to_owned(), Rule::UniqueItems),
        ]
    );
}

/// Every new shape has a notation in the prompt guidance (none falls back to raw schema), and
/// every rule is in it: the tag of each variant, the map's key names and count, the set, the
/// tuple positions, the fixed count, the pattern, the length. A data enum's variant descriptions
/// stand beside each variant, not after the whole union.
#[test]
fn the_guidance_sketches_every_shape() {
    assert_eq!(
        Ticket::prompt_guidance(),
        r#"Reply with JSON only, this shape (all keys required; null only where shown):
// A triaged ticket
{
 "account": string matching "^acc_[0-9]+$", // An account's id
 "action": { // Close it
  "kind": "close"
 }|{ // Refund the customer
  "kind": "refund",
  "amount": number >= 0.01,
  "currency": "EUR"|"USD" // The currency of an amount
 }|{
  "kind": "escalate",
  "team": string of >= 1 chars
 }, // What to do with a ticket
 "labels": {string: number 0 to 1} <= 3 keys, // Confidence per label
 "totals": {"EUR"|"USD": integer 0 to 4294967295},
 "tags": [string] unique,
 "score": number 0 to 1,
 "at": [number, number, number >= 0],
 "span": [integer 0 to 255, string],
 "rgb": [integer 0 to 255] 3 items,
 "grade": string of 1 chars,
 "note": string,
 "owner": string,
 "summary": string,
 "revision": integer 0 to 4294967295
}"#
    );
    for guidance in [
        External::prompt_guidance(),
        Adjacent::prompt_guidance(),
        Untagged::prompt_guidance(),
    ] {
        assert!(!guidance.contains("schema {"), "{guidance}");
    }
}

/// Streamed from OpenAI strict, maps arrive as lists of entries and are shown (and returned) as
/// maps: the value so far is read against the schema as sent, shown in the type's shape.
#[test]
fn a_streamed_reshaped_answer_is_shown_in_the_types_shape() {
    use structured_examples::replay::block_on;
    use structured_runtime::run::{Ask, RunConfig, StreamEvent};
    use structured_runtime::{ChatRequest, Provenance};
    let wire = as_entries(&serde_json::to_value(ticket()).unwrap());
    let provider = StreamingOpenAi(wire.to_string());
    let mut shown: Vec<Value> = Vec::new();
    let out = block_on(
        Ask::new(&provider, &ChatRequest::user("Triage."))
            .config(&RunConfig::default())
            .stream(|event| {
                if let StreamEvent::Partial { value, .. } = event {
                    shown.push(value.clone());
                }
            })
            .typed::<Ticket>(),
    )
    .unwrap();
    assert_eq!((out.value, out.provenance), (ticket(), Provenance::Clean));
    let last = shown.last().unwrap();
    assert_eq!(last, &serde_json::to_value(ticket()).unwrap());
    assert!(last["labels"].is_object() && last["totals"].is_object());
    assert!(shown.len() > 10);
}

/// The README's ticket-triage type as a llama.cpp grammar: every shape compiles (tuples, a
/// fixed-size array, a char, maps by string and by enum, a set, a flattened struct, an enum
/// with data); what a grammar cannot hold (a set's items kept apart, an open map's keys kept
/// apart) is named by path, and every other rule holds in what it writes: each derivation is
/// JSON whose only violations, if any, are at those paths.
#[test]
fn the_ticket_type_compiles_to_a_grammar_that_names_what_it_leaves() {
    use common::gbnf::{Gbnf, Rng};
    use structured_runtime::provider::dialect::{grammar, GrammarBudget};
    let schema = Ticket::schema().schema();
    let g = grammar(schema, GrammarBudget::for_max_tokens(512)).unwrap();
    let mut left: Vec<String> = g
        .unenforced
        .iter()
        .map(|u| format!("{} {}", u.path, u.keyword))
        .collect();
    left.sort();
    assert_eq!(
        left,
        [
            "/properties/labels additionalProperties",
            "/properties/tags uniqueItems"
        ]
    );
    let parsed = Gbnf::parse(&g.text);
    let mut rng = Rng::new(24);
    let mut checked = 0;
    for _ in 0..300 {
        let Some(text) = parsed.derive(&mut rng) else {
            continue;
        };
        let value: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        if let Err(violations) = Ticket::schema().check_instance(&value) {
            for v in &violations.0 {
                let at = v.path.as_str();
                assert!(
                    at.starts_with("/tags/") || at.starts_with("/labels"),
                    "{v} in {text}"
                );
            }
        }
        checked += 1;
    }
    assert!(checked > 200);
}

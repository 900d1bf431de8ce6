//! A stream reader that keeps no value so far (`StreamReader::changes_only`, what
//! `structured stream` uses) reports, chunk by chunk, exactly what one keeping the value
//! reports: the same completions, violations, changes and statuses; and the changes, applied,
//! give the value the other reader holds. Schemas cover the checks that read members' values
//! (an `enum` of objects, repeated items, `anyOf`) and the ones that do not (counts, `required`,
//! undeclared keys, `required` beside names it does not list).

use proptest::prelude::*;
use serde_json::{json, Value};
use structured_runtime::read::Change;
use structured_runtime::{
    Pointer, ResponseSchema, SchemaLimits, StreamProgress, StreamReader, StreamStatus, StreamView,
    Violation,
};

/// What one chunk's progress said, owned (a progress borrows its reader).
#[derive(Debug, PartialEq)]
struct Said {
    completed: Vec<Pointer>,
    violations: Vec<Violation>,
    changes: Vec<Change>,
    changed: bool,
    status: StreamStatus,
}

fn said(progress: StreamProgress<'_>) -> Said {
    Said {
        completed: progress.completed.to_vec(),
        violations: progress.violations.to_vec(),
        changes: progress.changes.to_vec(),
        changed: progress.changed,
        status: progress.status,
    }
}

fn schemas() -> Vec<ResponseSchema> {
    let row = json!({
        "type": "object",
        "properties": {
            "id": {"type": "integer", "minimum": 0},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
            "pair": {"enum": [{"a": 1}, {"a": 2}]}
        },
        "required": ["id"],
        "additionalProperties": false
    });
    let any_root = SchemaLimits {
        object_root: false,
        ..SchemaLimits::default()
    };
    [
        json!({"type": "array", "items": row, "minItems": 2, "maxItems": 4}),
        json!({
            "type": "object",
            "properties": {
                "rows": {"type": "array", "items": row, "uniqueItems": true},
                "nums": {"type": "array", "items": {"type": "number"}, "maxItems": 3},
                "either": {"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "object"}]}
            },
            "required": ["rows"],
            "additionalProperties": false
        }),
        // Maps: no check reads their members' names, so a reader keeping no value keeps
        // only their fingerprints.
        json!({
            "type": "object",
            "additionalProperties": {"type": "array", "items": {"type": "object", "additionalProperties": {"type": "integer"}}, "maxItems": 3}
        }),
        // `required` reads only the names it lists (one declared, one not): the others are
        // kept as fingerprints.
        json!({
            "type": "object",
            "properties": {"rows": {"type": "array", "maxItems": 3}, "extra": {"type": "integer"}},
            "required": ["extra", "nums"],
            "additionalProperties": {"type": ["array", "integer"]}
        }),
        // `contains`: a list's own check as the stream reads does not need its items.
        json!({
            "type": "object",
            "properties": {
                "rows": {"type": "array", "items": row, "contains": {"required": ["pair"]}, "maxContains": 1},
                "nums": {"type": "array", "contains": {"type": "integer"}, "minContains": 2, "maxItems": 4}
            }
        }),
        // Rules the stream's own checks do not judge (the final reading does), and an `allOf`
        // whose branches read only names: nothing of the members is kept for them.
        json!({
            "type": "object",
            "properties": {"rows": {"type": "array", "items": row}, "extra": {"type": "integer"}},
            "if": {"properties": {"extra": {"const": 1}}},
            "then": {"required": ["nums"]},
            "else": {"not": {"required": ["nums"]}},
            "dependentRequired": {"either": ["rows"]},
            "dependentSchemas": {"extra": {"maxProperties": 3}},
            "allOf": [{"required": ["rows"]}, {"properties": {"nums": {"enum": [[1], [2, 3]]}}}]
        }),
        // Objects whose own check reads only `required` (a derived struct's shape): their
        // required names are noted as met, not kept; beside them, the same with a count their
        // check reads too.
        json!({"type": "array", "items": {
            "type": "object",
            "properties": {"id": {"type": "integer"}, "tags": {"type": "array"}, "pair": {}},
            "required": ["id", "tags", "pair"],
            "additionalProperties": false
        }}),
        json!({"type": "array", "items": {
            "type": "object",
            "properties": {"id": {"type": "integer"}, "tags": {"type": "array"}, "pair": {}},
            "required": ["id", "tags", "pair"],
            "maxProperties": 2
        }}),
        // Free text at a node that holds it to more than its type: its text is kept for the
        // check (else only its changes carry it).
        json!({"type": "array", "items": {
            "type": "object",
            "properties": {"x": {"type": "string", "allOf": [{"minLength": 1}]}}
        }}),
        // Keywords beside a reference on the way to a node's target judge beside it (as code
        // generators write a definition that narrows another): an `enum` of objects, a length
        // on free text, `uniqueItems` on the way and at the target, and `dependentRequired`
        // (which reads every name).
        json!({
            "type": "array",
            "items": {"$ref": "#/$defs/pick"},
            "$defs": {
                "pick": {"$ref": "#/$defs/row", "enum": [{"id": 1}, {"x": "ab"}, {"x": "a", "id": 2}]},
                "row": {"type": "object", "properties": {"id": {"type": "integer"}, "x": {"$ref": "#/$defs/word"}}},
                "word": {"$ref": "#/$defs/text", "minLength": 2},
                "text": {"type": "string"}
            }
        }),
        json!({
            "type": "object",
            "properties": {"rows": {"$ref": "#/$defs/distinct"}, "nums": {"$ref": "#/$defs/distinct"}},
            "$defs": {
                "distinct": {"$ref": "#/$defs/list", "uniqueItems": true, "maxItems": 4},
                "list": {"type": "array", "uniqueItems": true, "items": {"$ref": "#/$defs/paired"}},
                "paired": {"$ref": "#/$defs/object", "dependentRequired": {"x": ["id"]}},
                "object": {"type": "object"}
            }
        }),
    ]
    .into_iter()
    .map(|schema| ResponseSchema::with_limits("s", schema, &any_root).unwrap())
    .collect()
}

fn answer() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        (-3i32..40).prop_map(Value::from),
        "[a-z]{0,4}".prop_map(Value::String),
        Just(json!({"a": 1})),
        Just(json!({"a": 3})),
        Just(Value::Null),
    ];
    let row = prop::collection::btree_map(
        prop::sample::select(vec!["id", "tags", "pair", "x"]),
        prop_oneof![
            leaf.clone(),
            prop::collection::vec(leaf.clone(), 0..4).prop_map(Value::Array)
        ],
        0..4,
    )
    .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect()));
    let rows = prop::collection::vec(row, 0..6).prop_map(Value::Array);
    (
        rows.clone(),
        prop::collection::vec(leaf.clone(), 0..5),
        any::<bool>(),
        prop::option::of(0.0f64..1.0),
        prop::option::of(prop::sample::select(vec!["k", "id"])),
    )
        .prop_map(|(rows, nums, object, cut, repeat)| {
            let value = if object {
                json!({"rows": rows, "nums": nums, "either": nums, "extra": 1})
            } else {
                rows
            };
            let mut text = format!("Here: {value}");
            if let Some(key) = repeat {
                // A key given twice in the last object: kept, noted by its fingerprint, or (a
                // name `required` lists, at a node whose check reads no other) noted as met.
                if let Some(at) = text.rfind("{\"") {
                    text.insert_str(at + 1, &format!("\"{key}\":1,\"{key}\":2,"));
                }
            }
            if let Some(cut) = cut.filter(|c| *c > 0.8) {
                text.truncate((cut * text.len() as f64) as usize);
            }
            text
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn a_reader_keeping_no_value_reports_what_one_keeping_it_reports(
        which in 0usize..11,
        text in answer(),
        piece in 1usize..17,
        limit in 0usize..48,
    ) {
        let schema = &schemas()[which];
        let mut full = StreamReader::new(schema);
        let mut lean = StreamReader::changes_only(schema);
        // Holding whole at most `limit` bytes' worth: the same changes, and the same reports
        // until it leaves a check to the final reading (then only reports the lean one gives).
        let mut bounded = StreamReader::changes_only(schema).max_whole(limit);
        let (mut reported, mut bounded_reported) = (Vec::new(), Vec::new());
        let mut view = Value::Null;
        let mut kept = StreamView::new();
        for chunk in text.as_bytes().chunks(piece) {
            let (a, b) = (said(full.feed(chunk)), said(lean.feed(chunk)));
            prop_assert_eq!(&a, &b, "{}", text);
            reported.extend(b.violations.iter().cloned());
            let c = said(bounded.feed(chunk));
            prop_assert_eq!(&b.changes, &c.changes, "{}", text);
            prop_assert_eq!(&a.completed, &c.completed, "{}", text);
            prop_assert_eq!(a.status, c.status, "{}", text);
            bounded_reported.extend(c.violations);
            for change in b.changes {
                change.apply(&mut view);
                kept.apply(&change);
            }
            prop_assert_eq!(kept.value(), &view, "{}", text);
            for at in &a.completed {
                prop_assert!(lean.is_complete(at), "{} {}", at, text);
            }
        }
        prop_assert_eq!(view, full.value(), "{}", text);
        prop_assert_eq!(lean.value(), Value::Null);
        prop_assert_eq!(lean.text(), full.text());
        match bounded.unjudged() {
            None => prop_assert_eq!(&bounded_reported, &reported, "{}", text),
            Some(at) => {
                prop_assert!(text.len() > limit, "left {} unjudged: {}", at, text);
                for v in &bounded_reported {
                    prop_assert!(reported.contains(v), "{} not reported unbounded: {}", v, text);
                }
            }
        }
    }
}

#[test]
fn a_stream_lists_violations_up_to_the_cap_then_says_the_rest_is_not_listed() {
    use structured_runtime::schema::MAX_VIOLATIONS;
    let schema = ResponseSchema::with_limits(
        "n",
        json!({"type": "array", "items": {"type": "integer"}}),
        &SchemaLimits {
            object_root: false,
            ..SchemaLimits::default()
        },
    )
    .unwrap();
    let answer = format!("[{}]", vec!["\"x\""; 1500].join(","));
    for mut reader in [
        StreamReader::new(&schema),
        StreamReader::changes_only(&schema),
    ] {
        let mut listed = Vec::new();
        for chunk in answer.as_bytes().chunks(64) {
            listed.extend(reader.feed(chunk).violations.iter().cloned());
        }
        assert_eq!(listed.len(), MAX_VIOLATIONS + 1);
        let last = listed.last().unwrap();
        assert_eq!(last.path, "");
        assert!(last.to_string().contains("not listed"), "{last}");
    }
}

#[test]
fn a_key_given_twice_in_an_object_kept_by_fingerprints_is_refused_by_both_readers() {
    // Found by the `stream` fuzz target: the reader keeping no value noted the key's
    // fingerprint, and did not see it given again.
    let text = r#"{"b":[{"b":"v2","b":"v2"}"v2","b":"v2"}]"#;
    let schema = ResponseSchema::new(
        "s",
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}),
    )
    .unwrap();
    for piece in [1, 7, 12] {
        let mut full = StreamReader::new(&schema);
        let mut lean = StreamReader::changes_only(&schema);
        for chunk in text.as_bytes().chunks(piece) {
            let status = full.feed(chunk).status;
            assert_eq!(status, lean.feed(chunk).status, "{piece}");
        }
        assert_eq!(full.status(), lean.status());
    }
}

#[test]
fn a_member_an_object_does_not_declare_is_refused_as_it_completes() {
    // Where the object allows none beside its declared ones: both readers say so before the
    // object closes, and the reader keeping no value keeps none of those names.
    let schema = ResponseSchema::new(
        "s",
        json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}},
            "required": ["a"],
            "additionalProperties": false
        }),
    )
    .unwrap();
    for mut reader in [
        StreamReader::new(&schema),
        StreamReader::changes_only(&schema),
    ] {
        let progress = reader.feed(br#"{"a": 1, "zz": [2, 3], "#);
        let paths: Vec<String> = progress
            .violations
            .iter()
            .map(|v| v.path.to_string())
            .collect();
        assert_eq!(paths, ["/zz"]);
        assert!(progress.violations[0]
            .to_string()
            .contains("only the declared properties (`a`)"));
        // Not reported again when the object closes.
        assert!(reader
            .feed(br#""b": null}"#)
            .violations
            .iter()
            .all(|v| v.path != "/zz"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// At objects whose own check reads only `required` (a derived struct's shape: a reader
    /// keeping no value notes their required names as met, and neither reader walks the check
    /// of one holding every name), both readers report a member missing where the validator of
    /// record does, and nothing else, in chunks of any size.
    #[test]
    fn a_missing_required_member_is_reported_where_the_validator_of_record_reports_it(
        rows in prop::collection::vec(
            prop::collection::btree_map(prop::sample::select(vec!["id", "name", "note"]), 0i32..3, 0..4),
            0..5,
        ),
        root_rows in any::<bool>(),
        by_reference in any::<bool>(),
        piece in 1usize..9,
    ) {
        let row = json!({
            "type": "object",
            "properties": {"id": {"type": "integer"}, "name": {"type": "integer"}, "note": {"type": "integer"}},
            "required": ["id", "name"],
            "additionalProperties": false
        });
        // Or the row by reference, with a name required beside the reference.
        let items = if by_reference {
            json!({"$ref": "#/$defs/row", "required": ["note"]})
        } else {
            row.clone()
        };
        let schema = ResponseSchema::new("s", json!({
            "type": "object",
            "properties": {"rows": {"type": "array", "items": items}, "n": {"type": "integer"}},
            "required": ["rows", "n"],
            "additionalProperties": false,
            "$defs": {"row": row}
        }))
        .unwrap();
        let rows: Vec<Value> = rows.into_iter().map(|r| json!(r)).collect();
        let value = if root_rows { json!({"rows": rows, "n": 1}) } else { json!({"rows": rows}) };
        let text = value.to_string();
        let mut expected: Vec<(String, String)> = match schema.check_instance(&value) {
            Ok(()) => Vec::new(),
            Err(found) => found.iter().map(|v| (v.path.to_string(), format!("{:?}", v.rule))).collect(),
        };
        expected.sort();
        for mut reader in [StreamReader::new(&schema), StreamReader::changes_only(&schema)] {
            let mut reported = Vec::new();
            for chunk in text.as_bytes().chunks(piece) {
                let progress = reader.feed(chunk);
                reported.extend(progress.violations.iter().map(|v| (v.path.to_string(), format!("{:?}", v.rule))));
            }
            reported.sort();
            prop_assert_eq!(&reported, &expected, "{}", text);
        }
    }
}

/// `text` cut into chunks of about `piece` bytes, each ending where a character does.
fn text_chunks(text: &str, piece: usize) -> Vec<&str> {
    let mut chunks = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = piece.clamp(1, rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        let (chunk, after) = rest.split_at(end);
        chunks.push(chunk);
        rest = after;
    }
    chunks
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// `feed_str` (a chunk known to be text, not checked to be UTF-8 again) reports what `feed`
    /// reports for the same bytes, chunk by chunk, in both readers: free text with escapes and
    /// characters of two and three bytes, whole and cut short.
    #[test]
    fn a_chunk_given_as_text_is_read_as_its_bytes_are(
        which in 0usize..11,
        words in prop::collection::vec("[a-z é—\"\\\\\n]{0,6}", 0..6),
        piece in 1usize..9,
        lean in any::<bool>(),
        cut in prop::option::of(0.0f64..1.0),
    ) {
        let schema = &schemas()[which];
        let value = json!({
            "rows": [{"id": 1, "tags": words}],
            "nums": [1, 2],
            "extra": 1,
            "either": words.join(" "),
        });
        let mut text = format!("So — {value}");
        if let Some(cut) = cut {
            let mut at = (cut * text.len() as f64) as usize;
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            text.truncate(at);
        }
        let reader = || if lean { StreamReader::changes_only(schema) } else { StreamReader::new(schema) };
        let (mut bytes, mut chars) = (reader(), reader());
        for chunk in text_chunks(&text, piece) {
            let (a, b) = (said(bytes.feed(chunk.as_bytes())), said(chars.feed_str(chunk)));
            prop_assert_eq!(a, b, "{}", text);
        }
        prop_assert_eq!(bytes.value(), chars.value());
        prop_assert_eq!(bytes.text(), chars.text());
    }
}

/// Violations and changes of each reader, `text` fed in chunks of `piece` bytes.
fn read(
    schema: &ResponseSchema,
    lean: bool,
    text: &str,
    piece: usize,
) -> (Vec<String>, Vec<Value>) {
    let mut reader = if lean {
        StreamReader::changes_only(schema)
    } else {
        StreamReader::new(schema)
    };
    let (mut violations, mut changes) = (Vec::new(), Vec::new());
    for chunk in text.as_bytes().chunks(piece) {
        let progress = reader.feed(chunk);
        violations.extend(progress.violations.iter().map(ToString::to_string));
        changes.extend(progress.changes.iter().map(|c| c.to_json()));
    }
    (violations, changes)
}

/// A definition that narrows another (`{"$ref": .., "enum": ..}`, as code generators write
/// one) judges beside the one it refers to: a reader keeping no value kept an object's members
/// for the rules of the reference's target only, and refused a valid answer (`found an object
/// with 0 properties`) for the `enum` on the way.
#[test]
fn rules_beside_a_reference_on_the_way_are_judged_with_what_they_read() {
    let schema = ResponseSchema::new(
        "s",
        json!({
            "type": "object",
            "properties": {"rows": {"type": "array", "items": {"$ref": "#/$defs/pick"}}},
            "$defs": {
                "pick": {"$ref": "#/$defs/row", "enum": [{"x": 1}, {"x": 2, "y": "q"}]},
                "row": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "string"}}}
            }
        }),
    )
    .unwrap();
    for (text, refused) in [
        (r#"{"rows": [{"x": 1}, {"x": 2, "y": "q"}]}"#, false),
        (r#"{"rows": [{"x": 3}]}"#, true),
    ] {
        let value: Value = serde_json::from_str(text).unwrap();
        assert_eq!(schema.check_instance(&value).is_err(), refused, "{text}");
        for piece in [1, 3, 64] {
            let (full, _) = read(&schema, false, text, piece);
            let (lean, _) = read(&schema, true, text, piece);
            assert_eq!(full, lean, "{text}");
            assert_eq!(!lean.is_empty(), refused, "{text}: {lean:?}");
        }
    }
}

/// A string held to more than its type by a definition on the way to its target (a length
/// beside a reference) is shown as a string holding that rule at its own node is: whole, once
/// complete, not as it arrives.
#[test]
fn a_string_narrowed_on_the_way_is_shown_as_one_narrowed_at_its_node() {
    let narrowed = |x: Value| {
        ResponseSchema::new(
            "s",
            json!({
                "type": "object",
                "properties": {"x": x},
                "$defs": {
                    "word": {"$ref": "#/$defs/text", "minLength": 2},
                    "text": {"type": "string"}
                }
            }),
        )
        .unwrap()
    };
    let on_the_way = narrowed(json!({"$ref": "#/$defs/word"}));
    let at_its_node = narrowed(json!({"type": "string", "minLength": 2}));
    let text = r#"{"x": "abcdef"}"#;
    for lean in [false, true] {
        let (_, changes) = read(&on_the_way, lean, text, 2);
        assert_eq!(changes, read(&at_its_node, lean, text, 2).1);
        assert!(changes.iter().all(|c| c["op"] == "set"), "{changes:?}");
    }
}

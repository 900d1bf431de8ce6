//! Objects at an `anyOf` whose variants are named by a tag or by their one key (how derived
//! enums with data are written), streamed: once a member names the variant, the members are
//! read at that branch's nodes and judged as they complete. Both stream readers (keeping the
//! value or not) report the same, and what they report is what the validator of record says of
//! the whole value: the same violations, each saying the same. Answers put the tag first, last
//! or between, name a variant, another or none, break members or not, add members no variant
//! declares, and nest variants in variants (two enums calling each other).

use std::collections::BTreeSet;

use proptest::prelude::*;
use serde_json::{json, Value};
use structured_runtime::schema::Pointer;
use structured_runtime::{ResponseSchema, StreamReader, StreamStatus};

fn schema() -> ResponseSchema {
    let rows = json!({
        "type": "array",
        "items": {
            "type": "object",
            // (`items` beside a string's type judges nothing: a list there is refused whole.)
            "properties": {
                "id": {"type": "integer", "minimum": 0},
                "tag": {"type": "string", "items": {"type": "integer"}}
            },
            "required": ["id"],
            "additionalProperties": false
        },
        "maxItems": 3
    });
    let tagged = |then: &str, wait: Value| {
        json!({"anyOf": [
            {
                "type": "object",
                "properties": {
                    "kind": {"type": "string", "enum": ["batch"]},
                    "rows": rows,
                    "then": {"$ref": then}
                },
                "required": ["kind", "rows"],
                "additionalProperties": false
            },
            wait,
            {"type": "null"}
        ]})
    };
    let wait = json!({
        "type": "object",
        "properties": {"kind": {"const": "wait"}, "reason": {"type": "string", "maxLength": 4}},
        "required": ["kind"]
    });
    let mut counted = wait.clone();
    counted["minProperties"] = json!(1);
    // (A `oneOf`: no value matches two of its branches, so it reads as an `anyOf`.)
    let keyed = json!({"oneOf": [
        {
            "type": "object",
            "properties": {"Batch": {
                "type": "object",
                "properties": {"rows": rows},
                "required": ["rows"],
                "additionalProperties": false
            }},
            "required": ["Batch"],
            "additionalProperties": false
        },
        {
            "type": "object",
            "properties": {"Wait": {"type": "integer", "minimum": 0}},
            "required": ["Wait"],
            "additionalProperties": false
        },
        {"type": "string", "enum": ["Stop"]}
    ]});
    ResponseSchema::new(
        "variants",
        json!({
            "type": "object",
            // Two enums calling each other: one whose variants' checks read the names of all
            // their members, one whose read only the names they require.
            "$defs": {
                "action": tagged("#/$defs/plain", counted),
                "plain": tagged("#/$defs/action", wait),
                // As code generators write schemas: an optional list (the kind of value decides
                // the branch), of items that are an object (by reference, wrapped in an `allOf`)
                // or a string.
                "page": {"anyOf": [
                    {"allOf": [{"$ref": "#/$defs/body"}], "description": "a page"},
                    {"type": "string", "maxLength": 3}
                ]},
                "body": {
                    "type": "object",
                    "properties": {"n": {"type": "integer", "minimum": 0}, "rows": rows},
                    "required": ["n"],
                    "additionalProperties": false
                }
            },
            "properties": {
                "action": {"$ref": "#/$defs/action"},
                "steps": {"type": "array", "items": keyed},
                "note": {"type": "string"},
                "pages": {"anyOf": [
                    {"type": "array", "items": {"$ref": "#/$defs/page"}, "maxItems": 3},
                    {"type": "null"}
                ], "default": null},
                // A map whose names and count are judged (its names not kept).
                "tally": {
                    "type": "object",
                    "additionalProperties": {"type": "integer", "minimum": 0},
                    "propertyNames": {"pattern": "^[a-c]$"},
                    "minProperties": 1,
                    "maxProperties": 2
                },
                // A map whose members' schemas their names' patterns give, others refused.
                "named": {
                    "type": "object",
                    "patternProperties": {
                        "^n[0-9]$": {"type": "integer", "minimum": 0},
                        "^s": {"type": "string", "maxLength": 3}
                    },
                    "additionalProperties": false
                },
                // The root again (a tree's `{"$ref": "#"}`): what it holds is judged by the
                // whole root, lists and all.
                "again": {"$ref": "#"},
                // An untagged enum: only an object's names tell its variants apart (some
                // declared by two), one variant holding another.
                "payload": {"anyOf": [
                    {
                        "type": "object",
                        "properties": {"rows": rows, "title": {"type": "string"}},
                        "required": ["rows", "title"],
                        "additionalProperties": false
                    },
                    {
                        "type": "object",
                        "properties": {
                            "rows": {"type": "array", "items": {"type": "integer", "minimum": 0}},
                            "title": {"type": ["string", "integer"]},
                            "count": {"type": "integer", "minimum": 0}
                        },
                        "additionalProperties": false
                    },
                    {
                        "type": "object",
                        "properties": {
                            "row": {"$ref": "#/$defs/body"},
                            "title": {"type": "string"},
                            "inner": {"$ref": "#/properties/payload"}
                        },
                        "required": ["row", "title"],
                        "additionalProperties": false
                    },
                    // A variant named by its one key, as serde's default writes one.
                    {
                        "type": "object",
                        "properties": {"only": {"type": "integer"}},
                        "required": ["only"],
                        "additionalProperties": false
                    },
                    {"type": "string", "maxLength": 3}
                ]}
            },
            "required": ["action"],
            "additionalProperties": false
        }),
    )
    .unwrap()
}

fn row() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-2i64..5).prop_map(|id| json!({"id": id})),
        Just(json!({"id": 1, "tag": "t"})),
        Just(json!({"id": "1"})),
        Just(json!({"tag": "t"})),
        Just(json!({"id": 2, "x": 1})),
        // Containers where a number goes: the type and their size are reported.
        Just(json!({"id": [1, 2, {"a": [3]}]})),
        Just(json!({"id": {"a": 1, "b": [2]}})),
        Just(json!({"id": 1, "tag": ["x", 2]})),
    ]
}

fn rows() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::collection::vec(row(), 0..5).prop_map(Value::Array),
        Just(json!(3)),
    ]
}

/// An item of the optional list: an object, a string, or what neither branch takes.
fn page() -> impl Strategy<Value = Value> {
    prop_oneof![
        (rows(), -1i64..2).prop_map(|(rows, n)| json!({"n": n, "rows": rows})),
        rows().prop_map(|rows| json!({"rows": rows, "n": 1, "zz": [1]})),
        Just(json!({"rows": []})),
        Just(json!("abc")),
        Just(json!("toolong")),
        Just(json!([1, {"a": [2]}])),
        Just(json!(7)),
    ]
}

/// The map of tallies: names the pattern takes or not, values broken or not (never both at
/// one member: the stream reports one violation per place), too few or too many.
/// The map judged by patterns: a number's name, a text's name, a name no pattern matches; each
/// value fitting its pattern or not (a name no pattern matches is refused whatever its value).
fn named() -> impl Strategy<Value = Option<Value>> {
    let member = prop_oneof![
        (0u8..3).prop_map(|i| (format!("n{i}"), json!(i as i64 - 1))),
        Just(("n7".to_owned(), json!("7"))),
        Just(("s".to_owned(), json!("ok"))),
        Just(("sx".to_owned(), json!("toolong"))),
        Just(("sy".to_owned(), json!([1, {"a": 2}]))),
        Just(("x".to_owned(), json!(1))),
        Just(("N1".to_owned(), json!({"a": [1]}))),
    ];
    prop::option::of(prop::collection::vec(member, 0..4))
        .prop_map(|members| members.map(|members| Value::Object(members.into_iter().collect())))
}

fn tally() -> impl Strategy<Value = Option<Value>> {
    let member = prop_oneof![
        (prop::sample::select(vec!["a", "b", "c"]), -1i64..2).prop_map(|(k, v)| (k, v)),
        (prop::sample::select(vec!["d", "zz", "A"]), 0i64..2).prop_map(|(k, v)| (k, v)),
    ];
    prop::option::of(prop::collection::btree_map(
        member.prop_map(|(k, _)| k),
        -1i64..2,
        0..4,
    ))
    .prop_map(|map| {
        map.map(|map| {
            Value::Object(
                map.into_iter()
                    .map(|(k, v)| {
                        let v = if ["a", "b", "c"].contains(&k) {
                            v
                        } else {
                            v.max(0)
                        };
                        (k.to_owned(), json!(v))
                    })
                    .collect(),
            )
        })
    })
}

/// A value of the untagged enum: each variant, names two declare, names none declares, what no
/// variant takes; a variant holding another, three deep.
fn payload() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        (rows(), prop_oneof![Just(json!("t")), Just(json!(5))])
            .prop_map(|(rows, title)| json!({"rows": rows, "title": title})),
        rows().prop_map(|rows| json!({"rows": rows})),
        (prop::collection::vec(-1i64..3, 0..3), -1i64..2)
            .prop_map(|(ints, count)| json!({"rows": ints, "count": count})),
        Just(json!({"title": "t"})),
        Just(json!({"rows": [], "title": "t", "zz": [1]})),
        Just(json!({})),
        Just(json!({"only": 2})),
        Just(json!({"only": "x", "rows": []})),
        Just(json!({"title": "t", "only": 1})),
        Just(json!("abc")),
        Just(json!("toolong")),
        Just(json!(7)),
        Just(json!([1, {"a": 2}])),
    ];
    leaf.prop_recursive(3, 6, 1, |inner| {
        (inner, page(), any::<bool>()).prop_map(|(inner, row, titled)| {
            let mut value = json!({"row": row, "inner": inner});
            if titled {
                value["title"] = json!("t");
            }
            value
        })
    })
}

/// The optional list: given, `null`, or something neither branch takes.
fn pages() -> impl Strategy<Value = Option<Value>> {
    prop::option::of(prop_oneof![
        4 => prop::collection::vec(page(), 0..5).prop_map(Value::Array),
        1 => Just(Value::Null),
        1 => Just(json!({"a": [1, 2]})),
        1 => Just(json!("x")),
    ])
}

/// A tagged variant as an object text, its members in a chosen order; the batch variant's
/// `then` holding another, down to four deep (a tag written last at each depth is read again
/// within the readers judging the depths above).
fn tagged() -> impl Strategy<Value = String> {
    flat(Just(None)).prop_recursive(4, 8, 1, |inner| flat(prop::option::of(inner)))
}

/// A tagged variant whose `then` is `then`.
fn flat(then: impl Strategy<Value = Option<String>>) -> impl Strategy<Value = String> {
    let tag = prop_oneof![
        Just(Some(json!("batch"))),
        Just(Some(json!("wait"))),
        Just(Some(json!("stop"))),
        Just(Some(json!(1))),
        Just(None),
    ];
    (
        tag,
        rows(),
        prop::option::of(prop_oneof![Just(json!("ok")), Just(json!("too long"))]),
        any::<bool>(),
        0usize..5,
        then,
    )
        .prop_map(|(tag, rows, reason, extra, at, then)| {
            let mut members: Vec<(String, Value)> = vec![("rows".into(), rows)];
            if let Some(then) = then {
                members.push(("then".into(), serde_json::from_str(&then).unwrap()));
            }
            if let Some(reason) = reason {
                members.push(("reason".into(), reason));
            }
            if extra {
                members.push(("zz".into(), json!([1, {"a": 2}])));
            }
            if let Some(tag) = tag {
                let at = at.min(members.len());
                members.insert(at, ("kind".into(), tag));
            }
            object(&members)
        })
}

/// A keyed variant, or a string, as text; and whether it names two variants.
fn keyed() -> impl Strategy<Value = (String, bool)> {
    let once = prop_oneof![
        rows().prop_map(|rows| object(&[("Batch".into(), json!({"rows": rows}))])),
        (-1i64..2).prop_map(|n| object(&[("Wait".into(), json!(n))])),
        Just(object(&[("Other".into(), json!(1))])),
        Just(object(&[
            ("zz".into(), json!(1)),
            ("Wait".into(), json!(-1))
        ])),
        Just("\"Stop\"".to_string()),
        Just("\"Go\"".to_string()),
        Just("{}".to_string()),
    ];
    let twice = prop_oneof![
        Just(object(&[
            ("Wait".into(), json!(1)),
            ("Batch".into(), json!({"rows": []}))
        ])),
        Just(object(&[
            ("Batch".into(), json!({"rows": [{"id": -1}]})),
            ("Wait".into(), json!(-1))
        ])),
    ];
    prop_oneof![
        8 => once.prop_map(|text| (text, false)),
        1 => twice.prop_map(|text| (text, true)),
    ]
}

fn object(members: &[(String, Value)]) -> String {
    let inner: Vec<String> = members
        .iter()
        .map(|(k, v)| format!("{}:{v}", Value::String(k.clone())))
        .collect();
    format!("{{{}}}", inner.join(","))
}

/// An answer; and whether one of its objects names two variants.
fn answer() -> impl Strategy<Value = (String, bool)> {
    (
        prop_oneof![tagged(), Just("null".to_string())],
        prop::collection::vec(keyed(), 0..4),
        any::<bool>(),
        pages(),
        (
            tally(),
            named(),
            prop::option::of(prop::collection::vec(keyed(), 0..3)),
            prop::option::of(payload()),
        ),
    )
        .prop_map(
            |(action, steps, note_first, pages, (tally, named, again, payload))| {
                let mut twice = steps.iter().any(|(_, twice)| *twice);
                let steps: Vec<String> = steps.into_iter().map(|(text, _)| text).collect();
                let steps = format!("[{}]", steps.join(","));
                let mut pages = pages.map_or(String::new(), |pages| format!(r#","pages":{pages}"#));
                if let Some(tally) = tally {
                    pages.push_str(&format!(r#","tally":{tally}"#));
                }
                if let Some(named) = named {
                    pages.push_str(&format!(r#","named":{named}"#));
                }
                if let Some(payload) = payload {
                    pages.push_str(&format!(r#","payload":{payload}"#));
                }
                if let Some(again) = again {
                    twice |= again.iter().any(|(_, twice)| *twice);
                    let again: Vec<String> = again.into_iter().map(|(text, _)| text).collect();
                    pages.push_str(&format!(
                        r#","again":{{"action":null,"steps":[{}]}}"#,
                        again.join(",")
                    ));
                }
                let text = if note_first {
                    format!(r#"{{"note":"n","steps":{steps},"action":{action}{pages}}}"#)
                } else {
                    format!(r#"{{"action":{action}{pages},"steps":{steps}}}"#)
                };
                (text, twice)
            },
        )
}

/// What a stream reports, chunk by chunk (each violation's path, and all it says); and its
/// last status.
fn stream(
    reader: &mut StreamReader<'_>,
    text: &str,
    piece: usize,
) -> (Vec<(String, String)>, StreamStatus) {
    let mut found = Vec::new();
    for chunk in text.as_bytes().chunks(piece) {
        let progress = reader.feed(chunk);
        found.extend(
            progress
                .violations
                .iter()
                .map(|v| (v.path.to_string(), v.to_string())),
        );
    }
    (found, reader.status())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn a_streamed_variant_is_judged_as_the_whole_value_is(
        (text, twice) in answer(),
        piece in 1usize..17,
        limit in 0usize..64,
    ) {
        let schema = schema();
        let (full, status) = stream(&mut StreamReader::new(&schema), &text, piece);
        let (lean, lean_status) = stream(&mut StreamReader::changes_only(&schema), &text, piece);
        prop_assert_eq!(&full, &lean, "{}", text);
        prop_assert_eq!(status, lean_status);
        // Holding whole at most `limit` bytes' worth: the same reports, unless it left a check
        // to the final reading past the limit (then only reports the others give).
        let mut bounded = StreamReader::changes_only(&schema).max_whole(limit);
        let (said, bounded_status) = stream(&mut bounded, &text, piece);
        prop_assert_eq!(bounded_status, status);
        match bounded.unjudged() {
            None => prop_assert_eq!(&said, &full, "{}", text),
            Some(at) => {
                prop_assert!(text.len() > limit, "{} left within {}: {}", at, limit, text);
                for v in &said {
                    prop_assert!(full.contains(v), "{:?} said alone: {}", v, text);
                }
            }
        }
        prop_assert_eq!(status, StreamStatus::Complete, "{}", text);
        let value: Value = serde_json::from_str(&text).unwrap();
        let whole: BTreeSet<String> = match schema.check_instance(&value) {
            Ok(()) => BTreeSet::new(),
            Err(violations) => violations.iter().map(|v| v.to_string()).collect(),
        };
        let streamed: BTreeSet<String> = full.iter().map(|(_, said)| said.clone()).collect();
        if twice {
            // An object naming two variants is refused by every branch: the stream judges it by
            // the variant named first in the text, the validator by the first branch that it
            // names, so only the verdict is the same.
            prop_assert!(!streamed.is_empty() && !whole.is_empty(), "{}", text);
        } else {
            prop_assert_eq!(streamed, whole, "{}", text);
        }
    }
}

/// Members read before the tag were read with no node: they are judged by the branch's nodes
/// when the tag names it, and each member after it as it completes.
/// Variants whose tags come last, each in the member of the one above: each depth is read
/// again by a reader of its own, up to the bound, and whole past it; every depth reports what
/// the validator of record says.
#[test]
fn tags_written_last_at_every_depth_are_judged_at_every_depth() {
    let schema = schema();
    for depth in [1, 3, 9, 12] {
        let mut text = r#"{"rows":[{"id":-1}],"kind":"batch"}"#.to_string();
        for level in 0..depth {
            text = format!(
                r#"{{"rows":[{{"id":{level}}},{{"id":-1}}],"then":{text},"kind":"batch"}}"#
            );
        }
        let text = format!(r#"{{"action":{text}}}"#);
        let whole = both_readers_say_what_the_check_says(&schema, &text, 7);
        // One row broken at each depth.
        assert_eq!(whole.len(), depth + 1, "{whole:?}");
    }
}

/// An untagged enum's variant is judged when its object closes, against each branch from its
/// text, as the whole value is: the branch the value names by its one key, else the closest,
/// else the `anyOf`'s one violation; a variant inside a variant (read again within the readers
/// of the one above, then held whole past the reads allowed).
#[test]
fn an_untagged_variant_is_judged_as_the_whole_value_is() {
    let schema = schema();
    let mut nested = r#"{"rows":[{"id":-1}],"title":"t"}"#.to_string();
    let mut texts: Vec<String> = [
        r#"{"rows":[{"id":-1},{"id":2,"x":1}],"title":"t"}"#,
        r#"{"only":"x","rows":[]}"#,
        r#"{"only":1}"#,
        r#"{"rows":[1,-2],"count":1}"#,
        r#"{"title":5}"#,
        r#"{"zz":[1,{"a":2}]}"#,
        r#""toolong""#,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for n in [-1, 1, 2, -3] {
        nested = format!(r#"{{"row":{{"n":{n}}},"title":"t","inner":{nested}}}"#);
        texts.push(nested.clone());
    }
    for payload in texts {
        let text = format!(r#"{{"action":null,"payload":{payload}}}"#);
        both_readers_say_what_the_check_says(&schema, &text, 5);
    }
}

/// Streams `text` (one JSON value) in `piece`-byte chunks through both readers, asserting each
/// reads it to its end and reports exactly what the validator of record says of the whole
/// value; that report.
fn both_readers_say_what_the_check_says(
    schema: &ResponseSchema,
    text: &str,
    piece: usize,
) -> BTreeSet<String> {
    let whole: BTreeSet<String> = match schema.check_instance(&serde_json::from_str(text).unwrap())
    {
        Ok(()) => BTreeSet::new(),
        Err(violations) => violations.iter().map(|v| v.to_string()).collect(),
    };
    for mut reader in [
        StreamReader::new(schema),
        StreamReader::changes_only(schema),
    ] {
        let (found, status) = stream(&mut reader, text, piece);
        assert_eq!(status, StreamStatus::Complete);
        let streamed: BTreeSet<String> = found.into_iter().map(|(_, said)| said).collect();
        assert_eq!(streamed, whole, "{text}");
    }
    whole
}

#[test]
fn a_name_read_before_the_tag_is_still_known_after_it() {
    let schema = schema();
    let text =
        br#"{"action": {"kind": "batch", "rows": [], "then": {"zz": 1, "kind": "wait", "zz": 2}}}"#;
    for piece in [1, 5, 200] {
        let mut full = StreamReader::new(&schema);
        let mut lean = StreamReader::changes_only(&schema);
        for chunk in text.chunks(piece) {
            let status = full.feed(chunk).status;
            assert_eq!(status, lean.feed(chunk).status, "{piece}");
        }
        // The key given twice: the stream stops where it stands; the final reading decides.
        assert_eq!(lean.status(), StreamStatus::Unreadable);
    }
    let mut lean = StreamReader::changes_only(&schema);
    lean.feed(br#"{"action": {"kind": "batch", "rows": [], "then": {"zz": [1], "kind": "wait", "#);
    assert!(lean.is_complete(&Pointer::parse("/action/then/zz").unwrap()));
}

#[test]
fn members_read_before_the_tag_are_judged_when_it_comes() {
    let schema = schema();
    for mut reader in [
        StreamReader::new(&schema),
        StreamReader::changes_only(&schema),
    ] {
        let progress = reader.feed(br#"{"action": {"rows": [{"id": -1}], "zz": 1, "#);
        assert!(progress.violations.is_empty());
        let progress = reader.feed(br#""kind": "batch", "#);
        let paths: Vec<String> = progress
            .violations
            .iter()
            .map(|v| v.path.to_string())
            .collect();
        assert_eq!(paths, ["/action/rows/0/id", "/action/zz"]);
        // After the tag, a member is judged as it completes.
        let progress = reader.feed(br#""zy": 2, "#);
        assert_eq!(progress.violations[0].path, "/action/zy");
    }
}

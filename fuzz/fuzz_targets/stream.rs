//! `StreamReader` and `StreamDecoder` on arbitrary bytes cut into arbitrary chunks: no panic,
//! and the promise of a stream holds: what is shown only grows, the changes rebuild what is
//! shown, and a value shown as complete is the whole answer's when it reads as written. A
//! reader keeping no value (`StreamReader::changes_only`) reports what the one keeping it
//! reports, chunk by chunk. On a schema of enums with data (variants named by a tag, nested in
//! each other), an optional list of a `oneOf`'s objects or strings, an untagged enum and a list
//! whose items must differ, both readers report exactly the violations the validator of record
//! finds in the whole value, when the bytes are one JSON object. Text given as text
//! (`feed_str`) reads as its bytes do.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// The streaming invariant the tests check, the one copy of it.
#[path = "../../tests/tests/common/grows.rs"]
mod grows;
use grows::grows;
use serde_json::Value;
use structured_examples::HeartbeatDecision;
use structured_runtime::provider::wire::{Expect, StreamDecoder, WireApi};
use structured_runtime::{
    parse_value, ParseOptions, Provenance, ResponseSchema, StreamReader, StreamStatus,
    StreamView, StructuredOutput, StructuredOutputMode,
};

fuzz_target!(|data: &[u8]| {
    // The first byte sets the chunk sizes; the rest is the answer.
    let Some((&seed, text)) = data.split_first() else {
        return;
    };
    let schema = HeartbeatDecision::schema();
    let mut reader = StreamReader::new(schema);
    let mut lean = StreamReader::changes_only(schema);
    let mut kept = Value::Null;
    let mut view = StreamView::new();
    let mut shown: Vec<Value> = Vec::new();
    let mut rest = text;
    let mut n = 0usize;
    while !rest.is_empty() {
        let size = 1 + (usize::from(seed) >> (n % 4)) % 17;
        let (chunk, tail) = rest.split_at(size.min(rest.len()));
        rest = tail;
        n += 1;
        let progress = reader.feed(chunk);
        let said = lean.feed(chunk);
        assert_eq!(progress.completed, said.completed);
        assert_eq!(progress.violations, said.violations);
        assert_eq!(progress.changes, said.changes);
        assert_eq!(
            (progress.changed, progress.status),
            (said.changed, said.status)
        );
        for at in progress.completed {
            assert!(lean.is_complete(at), "{at}");
        }
        for change in progress.changes {
            change.apply(&mut kept);
            view.apply(change);
        }
        // A view finding each change from the last builds the same value.
        assert_eq!(view.value(), &kept);
        // What the reader says it completed is shown, and it says so again when asked.
        for at in progress.completed {
            assert!(at.get(&kept).is_some(), "{at} in {kept}");
        }
        let (changed, completed) = (progress.changed, progress.completed.to_vec());
        for at in &completed {
            assert!(reader.is_complete(at), "{at}");
        }
        // Never deeper than the reader's limit: the stream refuses where it is crossed.
        assert!(depth(&kept) <= structured_runtime::read::MAX_STREAM_DEPTH + 1);
        if changed {
            let now = reader.value();
            assert_eq!(kept, now, "the changes rebuild the value so far");
            shown.push(now);
        }
    }
    for pair in shown.windows(2) {
        assert!(grows(&pair[0], &pair[1]), "{} then {}", pair[0], pair[1]);
    }
    if let (Some(text), StreamStatus::Complete) = (reader.text(), reader.status()) {
        if let Ok(read) = parse_value(text, schema, &ParseOptions::default()) {
            if matches!(read.provenance, Provenance::Clean | Provenance::Extracted) {
                assert_eq!(shown.last(), Some(&read.value));
            }
        }
    }
    variants_agree(seed, text);
    text_agrees(seed, text);
    // The same bytes as each API's stream: no panic, and the deltas are text.
    for api in [
        WireApi::OpenAiChat,
        WireApi::OpenAiResponses,
        WireApi::Anthropic,
        WireApi::Gemini,
        WireApi::OllamaChat,
    ] {
        for expect in [
            Expect::new(StructuredOutputMode::SchemaEnforced),
            Expect::tool("get_weather"),
        ] {
            let mut decoder = StreamDecoder::new(api, expect);
            let mut failed = false;
            for chunk in text.chunks(1 + usize::from(seed) % 9) {
                if decoder.feed(chunk).is_err() {
                    failed = true;
                    break;
                }
            }
            if !failed {
                let _ = decoder.finish();
            }
        }
    }
});

/// Text given as text (`feed_str`, each chunk ending where a character does) reads as its bytes
/// do, chunk by chunk.
fn text_agrees(seed: u8, text: &[u8]) {
    let Ok(mut rest) = std::str::from_utf8(text) else {
        return;
    };
    let schema = HeartbeatDecision::schema();
    let (mut bytes, mut chars) = (
        StreamReader::changes_only(schema),
        StreamReader::changes_only(schema),
    );
    let mut n = 0usize;
    while !rest.is_empty() {
        let mut end = (1 + (usize::from(seed) >> (n % 4)) % 17).min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        let (chunk, tail) = rest.split_at(end);
        rest = tail;
        n += 1;
        let a = bytes.feed(chunk.as_bytes());
        let (completed, violations, changes) =
            (a.completed.to_vec(), a.violations.to_vec(), a.changes.to_vec());
        let (changed, status) = (a.changed, a.status);
        let b = chars.feed_str(chunk);
        assert_eq!(completed, b.completed);
        assert_eq!(violations, b.violations);
        assert_eq!(changes, b.changes);
        assert_eq!((changed, status), (b.changed, b.status));
    }
}

/// An enum with data tagged inside (`kind`), whose variant holds rows and another of itself.
fn variants() -> &'static ResponseSchema {
    static SCHEMA: std::sync::OnceLock<ResponseSchema> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| {
        let row = serde_json::json!({
            "type": "object",
            "properties": {"id": {"type": "integer", "minimum": 0}, "tag": {"type": "string"}},
            "required": ["id"],
            "additionalProperties": false
        });
        let schema = serde_json::json!({
            "type": "object",
            "$defs": {"act": {"anyOf": [
                {
                    "type": "object",
                    "properties": {
                        "kind": {"enum": ["rows"]},
                        "rows": {"type": "array", "items": row, "maxItems": 3},
                        "then": {"$ref": "#/$defs/act"}
                    },
                    "required": ["kind", "rows"],
                    "additionalProperties": false
                },
                {
                    "type": "object",
                    "properties": {"kind": {"const": "wait"}, "for": {"type": "integer"}},
                    "required": ["kind"],
                    "minProperties": 1
                },
                {"type": "null"}
            ]},
            // An optional list of pages: objects (a reference wrapped in an `allOf`) or short
            // strings, a `oneOf` no value matches two branches of.
            "page": {"oneOf": [
                {"allOf": [{"$ref": "#/$defs/body"}], "description": "a page"},
                {"type": "string", "maxLength": 3}
            ]},
            "body": {
                "type": "object",
                "properties": {"n": {"type": "integer", "minimum": 0}, "rows": {"type": "array", "items": row}},
                "required": ["n"],
                "additionalProperties": false
            }},
            "properties": {
                "act": {"$ref": "#/$defs/act"},
                "note": {"type": "string"},
                // A list whose items must differ: kept as prints by the reader keeping no value.
                "tags": {"type": "array", "items": {"type": ["integer", "string", "array"]}, "uniqueItems": true},
                "pages": {"anyOf": [
                    {"type": "array", "items": {"$ref": "#/$defs/page"}, "maxItems": 3},
                    {"type": "null"}
                ]},
                // An untagged enum: only an object's names tell its variants apart (`rows` in
                // two, one variant named by its one key, one holding another).
                "payload": {"anyOf": [
                    {
                        "type": "object",
                        "properties": {"rows": {"type": "array", "items": row}, "title": {"type": "string"}},
                        "required": ["rows", "title"],
                        "additionalProperties": false
                    },
                    {
                        "type": "object",
                        "properties": {
                            "rows": {"type": "array", "items": {"type": "integer", "minimum": 0}},
                            "count": {"type": "integer"}
                        },
                        "additionalProperties": false
                    },
                    {
                        "type": "object",
                        "properties": {"n": {"type": "integer"}, "inner": {"$ref": "#/properties/payload"}},
                        "required": ["n", "inner"],
                        "additionalProperties": false
                    },
                    {
                        "type": "object",
                        "properties": {"only": {"type": "integer"}},
                        "required": ["only"],
                        "additionalProperties": false
                    },
                    {"type": "string", "maxLength": 3}
                ]}
            },
            "required": ["act"],
            "additionalProperties": false
        });
        ResponseSchema::new("variants", schema).expect("a valid schema")
    })
}

/// Both stream readers on the enum schema (with a list whose items must differ beside) report
/// the same, and, when the bytes are one JSON object read to its end, exactly what the validator
/// of record finds in it. A reader holding whole at most a few bytes' worth (`max_whole`) gives
/// the same changes, and the same reports unless it left a check to the final reading (only
/// past its limit, and then reports only what the others report).
fn variants_agree(seed: u8, text: &[u8]) {
    let schema = variants();
    let mut full = StreamReader::new(schema);
    let mut lean = StreamReader::changes_only(schema);
    let limit = usize::from(seed) % 64;
    let mut bounded = StreamReader::changes_only(schema).max_whole(limit);
    let (mut said, mut bounded_said) = (Vec::new(), Vec::new());
    for chunk in text.chunks(1 + usize::from(seed) % 13) {
        let a = full.feed(chunk);
        let (violations, status) = (a.violations.to_vec(), a.status);
        let b = lean.feed(chunk);
        assert_eq!(violations, b.violations);
        assert_eq!(status, b.status);
        let changes = b.changes.to_vec();
        let c = bounded.feed(chunk);
        assert_eq!(changes, c.changes);
        assert_eq!(status, c.status);
        bounded_said.extend(c.violations.iter().map(ToString::to_string));
        said.extend(violations.iter().map(ToString::to_string));
    }
    match bounded.unjudged() {
        None => assert_eq!(bounded_said, said),
        Some(at) => {
            assert!(text.len() > limit, "{at} left unjudged within {limit} bytes");
            for v in &bounded_said {
                assert!(said.contains(v), "{v} reported by the bounded reader alone");
            }
        }
    }
    if full.status() != StreamStatus::Complete {
        return;
    }
    let Ok(Value::Object(value)) = serde_json::from_slice::<Value>(text) else {
        return;
    };
    let whole: Vec<String> = match schema.check_instance(&Value::Object(value)) {
        Ok(()) => Vec::new(),
        Err(found) => found.iter().map(ToString::to_string).collect(),
    };
    if whole.len() < 20 {
        let (mut said, mut whole) = (said, whole);
        said.sort();
        whole.sort();
        assert_eq!(said, whole, "{}", String::from_utf8_lossy(text));
    }
}

/// How deeply `value` nests (a scalar is 1).
fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
            Value::Object(map) => stack.extend(map.values().map(|i| (i, d + 1))),
            _ => {}
        }
    }
    deepest
}

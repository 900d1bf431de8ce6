//! `StreamReader` and `StreamDecoder` on arbitrary bytes cut into arbitrary chunks: no panic,
//! and the promise of a stream holds: what is shown only grows, the changes rebuild what is
//! shown, and a value shown as complete is the whole answer's when it reads as written. A
//! reader keeping no value (`StreamReader::changes_only`) reports what the one keeping it
//! reports, chunk by chunk.
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
    parse_value, ParseOptions, Provenance, StreamReader, StreamStatus, StructuredOutput,
    StructuredOutputMode,
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
        }
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

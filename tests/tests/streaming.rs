//! Reading an answer as it arrives ([`StreamReader`]): model-like answers split at every byte
//! offset and fed a byte at a time. The partial values only grow (a completed field never
//! changes), none shows anything that is not a prefix of the final value, and the last equals
//! what `parse_value` makes of the whole text.

mod common;

use common::grows::grows;
use serde_json::{json, Value};
use structured_examples::{DaimonAppraisal, HeartbeatDecision};
use structured_runtime::{
    parse_value, ParseOptions, ResponseSchema, StreamReader, StreamStatus, StreamView,
    StructuredOutput,
};

/// Feeds `text` in `chunks` and checks every snapshot; returns the last value and how many
/// snapshots changed.
fn stream(schema: &ResponseSchema, chunks: &[&[u8]], whole: &Value) -> (Value, usize) {
    let mut reader = StreamReader::new(schema);
    let mut done: Vec<(structured_runtime::Pointer, Value)> = Vec::new();
    let mut changes = 0;
    let mut mirror = Value::Null;
    let mut view = StreamView::new();
    for chunk in chunks {
        let progress = reader.feed(chunk);
        let (changed, completed) = (progress.changed, progress.completed.to_vec());
        // The changes, applied in turn, build the same value so far.
        for change in progress.changes {
            change.apply(&mut mirror);
            view.apply(change);
        }
        assert_eq!(view.value(), &mirror);
        if !changed {
            assert!(completed.is_empty());
            continue;
        }
        changes += 1;
        let now = reader.value();
        assert_eq!(mirror, now);
        assert!(grows(&now, whole), "{now} is not a prefix of {whole}");
        // A completed field never changes afterwards, and the reader says it is complete.
        for (path, value) in &done {
            assert_eq!(path.get(&now), Some(value), "{path} changed in {now}");
            assert!(reader.is_complete(path), "{path} in {now}");
        }
        for path in completed {
            let value = path.get(&now).cloned().expect("a completed field is shown");
            done.push((path, value));
        }
    }
    assert_eq!(reader.status(), StreamStatus::Complete);
    (reader.value(), changes)
}

fn check_every_split(schema: &ResponseSchema, text: &str) {
    let whole = parse_value(text, schema, &ParseOptions::default())
        .unwrap_or_else(|e| panic!("{e}: {text}"))
        .value;
    let bytes = text.as_bytes();
    // One byte at a time: inside every character, escape, number and literal.
    let ones: Vec<&[u8]> = bytes.chunks(1).collect();
    let (last, changes) = stream(schema, &ones, &whole);
    assert_eq!(last, whole, "{text}");
    assert!(changes > 1, "{text}");
    // Two chunks, cut at every offset.
    for cut in 0..=bytes.len() {
        let (a, b) = bytes.split_at(cut);
        let (last, _) = stream(schema, &[a, b], &whole);
        assert_eq!(last, whole, "cut at {cut}: {text}");
    }
}

const HEARTBEAT: &str = r#"{"severity": "high", "action": "hedge", "confidence": 0.82, "rationale": "Funding flipped \"negative\" \u2014 and 🚀 volume \\ spiked.", "signals": [{"source": "funding", "description": "rate < 0", "magnitude": 0.9}, {"source": "volume", "description": "3x average", "magnitude": 0.75}], "escalate": true}"#;

const DAIMON: &str = r#"{"pleasure": -0.25, "arousal": 0.5, "dominance": 1e-1, "primary_emotion": "anticipation", "secondary_emotion": null, "trigger": "a\nnew {listing}", "memory_bias": "recent"}"#;

#[test]
fn model_like_answers_at_every_split() {
    let heartbeat = HeartbeatDecision::schema();
    let daimon = DaimonAppraisal::schema();
    let cases: Vec<(&ResponseSchema, String)> = vec![
        (heartbeat, HEARTBEAT.to_owned()),
        (
            heartbeat,
            format!("Here is my assessment:\n```json\n{HEARTBEAT}\n```\nLet me know."),
        ),
        (daimon, DAIMON.to_owned()),
        // A brace in the prose before the JSON is passed over.
        (daimon, format!("Using the {{PAD}} model: {DAIMON}")),
        (daimon, format!("  \n{}", DAIMON.replace(", ", ",\n    "))),
    ];
    for (schema, text) in &cases {
        check_every_split(schema, text);
    }
}

#[test]
fn a_value_appears_only_once_complete_and_free_text_as_it_comes() {
    let schema = HeartbeatDecision::schema();
    let mut reader = StreamReader::new(schema);
    reader.feed(br#"{"severity": "hi"#);
    assert_eq!(reader.value(), json!({}));
    reader.feed(br#"gh", "action": "hedge", "confidence": 0."#);
    assert_eq!(
        reader.value(),
        json!({"severity": "high", "action": "hedge"})
    );
    reader.feed(br#"8, "rationale": "Fund"#);
    assert_eq!(
        reader.value(),
        json!({"severity": "high", "action": "hedge", "confidence": 0.8, "rationale": "Fund"})
    );
    // An escape cut in the middle is left out until whole.
    reader.feed(br#"ing \u20"#);
    assert_eq!(reader.value()["rationale"], "Funding ");
    reader.feed(br#"ac"#);
    assert_eq!(reader.value()["rationale"], "Funding €");
    // A character cut in the middle too.
    let euro = "€".as_bytes();
    reader.feed(&[b' ', euro[0]]);
    assert_eq!(reader.value()["rationale"], "Funding € ");
    reader.feed(&euro[1..]);
    assert_eq!(reader.value()["rationale"], "Funding € €");
}

#[test]
fn a_broken_rule_is_reported_when_the_field_completes() {
    let schema = HeartbeatDecision::schema();
    let mut reader = StreamReader::new(schema);
    let progress = reader.feed(br#"{"severity": "severe", "action": "hedge", "confidence": 1.5"#);
    let found: Vec<String> = progress
        .violations
        .iter()
        .map(|v| v.path.to_string())
        .collect();
    assert_eq!(found, ["/severity"]);
    // The number is complete only when something follows it.
    let progress = reader.feed(b",");
    assert_eq!(progress.violations[0].path, "/confidence");
    assert_eq!(progress.completed, ["/confidence"]);
}

/// A draft followed by the final value: the reader says another value began, so the draft it
/// showed is known to be one; the final reading takes the last.
#[test]
fn a_second_value_after_the_first_is_said() {
    let schema = DaimonAppraisal::schema();
    let draft = DAIMON.replace("-0.25", "0.9");
    let text = format!("Draft: {draft}\nFinal, corrected: {DAIMON}");
    let mut reader = StreamReader::new(schema);
    reader.feed(format!("Draft: {draft}\n").as_bytes());
    assert_eq!(reader.status(), StreamStatus::Complete);
    reader.feed(b"Final, corrected: ");
    assert_eq!(reader.status(), StreamStatus::Complete);
    reader.feed(DAIMON.as_bytes());
    assert_eq!(reader.status(), StreamStatus::AnotherValue);
    let whole = parse_value(&text, schema, &ParseOptions::default()).unwrap();
    assert_eq!(whole.value["pleasure"], json!(-0.25));
    assert_eq!(reader.value()["pleasure"], json!(0.9));
}

/// Found by the fuzz target: a wrong closing bracket leaves the value shown as it stands.
#[test]
fn a_wrong_closing_bracket_takes_nothing_back() {
    let schema = DaimonAppraisal::schema();
    let mut reader = StreamReader::new(schema);
    let mut kept = Value::Null;
    for chunk in [&br#"{"b":2"#[..], b"]", b"}"] {
        for change in reader.feed(chunk).changes {
            change.apply(&mut kept);
        }
        assert_eq!(kept, reader.value());
    }
    assert_eq!(reader.status(), StreamStatus::Unreadable);
    assert_eq!(reader.value(), json!({"b": 2}));
    // Free text shown before the JSON broke stays shown, as it stands.
    let schema = HeartbeatDecision::schema();
    let mut reader = StreamReader::new(schema);
    let mut kept = Value::Null;
    for chunk in [
        &br#"{"severity": "high", "rationale": "fine"#[..],
        br#" \u00zz"}"#,
    ] {
        for change in reader.feed(chunk).changes {
            change.apply(&mut kept);
        }
        assert_eq!(kept, reader.value());
    }
    assert_eq!(reader.status(), StreamStatus::Unreadable);
    assert_eq!(
        reader.value(),
        json!({"severity": "high", "rationale": "fine"})
    );
}

#[test]
fn json_that_needs_repair_stops_the_partials_and_is_read_whole_at_the_end() {
    let schema = DaimonAppraisal::schema();
    let mut reader = StreamReader::new(schema);
    reader.feed(br#"{"pleasure": 0.2, 'arousal': 0.5}"#);
    assert_eq!(reader.status(), StreamStatus::Unreadable);
    // What was shown stays shown; nothing more is added.
    assert_eq!(reader.value(), json!({"pleasure": 0.2}));
    let progress = reader.feed(br#", "dominance": 0.1}"#);
    assert!(!progress.changed);
    assert_eq!(reader.value(), json!({"pleasure": 0.2}));
    // The whole text is read as any answer is: repaired, with warnings.
    let read = parse_value(reader.text().unwrap(), schema, &ParseOptions::default());
    assert!(read.is_err() || read.unwrap().provenance != structured_runtime::Provenance::Clean);
}

/// A long answer in chunks of every size from 1 to 200 bytes: the same final value each time.
#[test]
fn a_long_answer_in_chunks_of_every_size() {
    let signal = r#"{"source": "funding", "description": "Rate flipped to \"negative\" \u2014 −0.012% per 8h", "magnitude": 0.61}"#;
    let text = format!(
        r#"{{"severity": "moderate", "action": "hedge", "confidence": 0.72, "rationale": "r", "signals": [{}], "escalate": false}}"#,
        vec![signal; 60].join(",\n")
    );
    let schema = HeartbeatDecision::schema();
    let whole = parse_value(&text, schema, &ParseOptions::default())
        .unwrap()
        .value;
    for size in 1..=200 {
        let mut reader = StreamReader::new(schema);
        let mut completed = 0;
        for chunk in text.as_bytes().chunks(size) {
            completed += reader.feed(chunk).completed.len();
        }
        assert_eq!(reader.status(), StreamStatus::Complete, "chunks of {size}");
        assert_eq!(reader.value(), whole, "chunks of {size}");
        // Every scalar and container once: 4 + 3 per signal, 60 signals, the list, the root, and
        // the 2 remaining fields.
        assert_eq!(completed, 4 + 60 * 4 + 1 + 1 + 1, "chunks of {size}");
    }
}

/// A provider that does not stream goes through the streaming run all the same: its answer is
/// read whole, shown once, and the result is `run_structured`'s.
#[test]
fn a_provider_that_does_not_stream_gives_one_piece_and_the_same_result() {
    use structured_examples::replay::{block_on, ReplayProvider, Reply};
    use structured_runtime::provider::capabilities::ProviderKind;
    use structured_runtime::run::{run_structured, Ask, RunConfig, StreamEvent};
    use structured_runtime::ChatRequest;
    let answers = || {
        vec![
            Reply::Answer(HEARTBEAT.replace("\"high\"", "\"severe\"")),
            Reply::Answer(HEARTBEAT.to_owned()),
        ]
    };
    let request = ChatRequest::user("Assess.");
    let config = RunConfig::default();
    let provider = ReplayProvider::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        "heartbeat_decision",
        answers(),
    );
    let whole = block_on(run_structured::<HeartbeatDecision, _>(
        &provider, &request, &config,
    ))
    .unwrap();
    let provider = ReplayProvider::new(
        ProviderKind::OpenAiChat,
        "gpt-4o",
        "heartbeat_decision",
        answers(),
    );
    let mut events = Vec::new();
    let streamed = block_on(
        Ask::new(&provider, &request)
            .config(&config)
            .stream(|event| {
                events.push(match event {
                    StreamEvent::Attempt { number } => format!("attempt {number}"),
                    StreamEvent::Partial { .. } => "partial".to_owned(),
                    StreamEvent::Violations(v) => format!("violations {}", v[0].path),
                    StreamEvent::Text(_) => "text".to_owned(),
                    _ => "other".to_owned(),
                })
            })
            .typed::<HeartbeatDecision>(),
    )
    .unwrap();
    assert_eq!(
        format!("{:?}", streamed.value),
        format!("{:?}", whole.value)
    );
    assert_eq!(streamed.provenance, whole.provenance);
    assert_eq!(streamed.attempts, 2);
    // Each answer whole, in one piece: its text first, then what it shows.
    assert_eq!(
        events,
        [
            "attempt 1",
            "text",
            "violations /severity",
            "partial",
            "attempt 2",
            "text",
            "partial"
        ]
    );
}

/// The derived partial type: each field `None` until it starts; an enum value, a number or a
/// bool only once whole; free text as it comes; a list of partial items.
#[test]
fn the_partial_type_shows_what_arrived_typed() {
    use structured_examples::heartbeat::{HeartbeatDecisionPartial, SignalPartial};
    let schema = HeartbeatDecision::schema();
    let mut reader = StreamReader::new(schema);
    let partial = |reader: &StreamReader<'_>| -> HeartbeatDecisionPartial {
        reader.partial::<HeartbeatDecision>().unwrap_or_default()
    };
    reader.feed(br#"{"severity": "hi"#);
    let p = partial(&reader);
    assert_eq!((p.severity, p.rationale), (None, None));
    assert!(p.signals.is_none());
    reader.feed(br#"gh", "action": "hedge", "confidence": 0.8"#);
    let p = partial(&reader);
    assert_eq!(p.severity.as_deref(), Some("high"));
    assert_eq!(p.confidence, None); // `0.8` may go on to `0.85`
    reader.feed(br#"5, "rationale": "Funding fl"#);
    let p = partial(&reader);
    assert_eq!(p.confidence, Some(0.85));
    assert_eq!(p.rationale.as_deref(), Some("Funding fl"));
    // Which fields are complete: the number is, the text being read is not.
    let at = |p: &str| structured_runtime::Pointer::parse(p).unwrap();
    assert!(reader.is_complete(&at("/confidence")));
    assert!(!reader.is_complete(&at("/rationale")));
    reader.feed(br#"ipped", "signals": [{"source": "funding", "descr"#);
    // Open containers are not complete; their closed members are; nothing unseen is.
    assert!(!reader.is_complete(&at("")) && !reader.is_complete(&at("/signals")));
    assert!(!reader.is_complete(&at("/signals/0")));
    assert!(reader.is_complete(&at("/signals/0/source")));
    assert!(!reader.is_complete(&at("/signals/1")) && !reader.is_complete(&at("/escalate")));
    let p = partial(&reader);
    let signals: Vec<SignalPartial> = p.signals.unwrap();
    assert_eq!(signals.len(), 1);
    assert_eq!(signals[0].source.as_deref(), Some("funding"));
    assert_eq!(signals[0].description, None);
    assert_eq!(signals[0].magnitude, None);
    reader.feed(br#"iption": "rate < 0", "magnitude": 0.9}], "escalate": true}"#);
    assert!(reader.is_complete(&at("/rationale")) && reader.is_complete(&at("/signals/0")));
    let p = partial(&reader);
    assert_eq!(p.escalate, Some(true));
    assert_eq!(p.signals.unwrap()[0].magnitude, Some(0.9));
}

/// A type whose fields are not `Debug` still derives (its partial is then not `Debug` either).
#[derive(StructuredOutput, serde::Deserialize)]
#[allow(dead_code)]
struct Plainly {
    inner: Inner,
    items: Vec<Inner>,
}

#[derive(StructuredOutput, serde::Deserialize)]
#[allow(dead_code)]
struct Inner {
    text: String,
}

#[test]
fn a_type_without_debug_has_a_partial_form_too() {
    use structured_runtime::HasPartial;
    let p = Plainly::partial_from(&json!({"inner": {"text": "a"}, "items": [{}]})).unwrap();
    assert_eq!(p.inner.and_then(|i| i.text).as_deref(), Some("a"));
    assert_eq!(p.items.map(|i| i.len()), Some(1));
}

/// Random answers shaped like the schema (valid or not, compact or indented, with prose and a
/// fence around them or not), fed in random chunks: the values shown only grow, and when the
/// whole answer reads as written (clean or only extracted) the last one shown is that value.
#[test]
fn random_answers_in_random_chunks_keep_the_promise() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let schema = HeartbeatDecision::schema();
    let root = schema.schema().clone();
    let strategy = (
        common::generate::value_for(&root, &root, 0),
        any::<bool>(),
        prop_oneof![Just(""), Just("Sure:\n```json\n"), Just("Here {it} is: ")],
        prop_oneof![Just(""), Just("\n```\nDone."), Just(" Thanks!")],
        proptest::collection::vec(1usize..16, 1..64),
    );
    let mut runner = TestRunner::new(Config {
        cases: 300,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&strategy, |(value, pretty, before, after, sizes)| {
        let json = if pretty {
            serde_json::to_string_pretty(&value).unwrap()
        } else {
            value.to_string()
        };
        let text = format!("{before}{json}{after}");
        let mut reader = StreamReader::new(schema);
        let mut shown: Vec<Value> = Vec::new();
        let mut mirror = Value::Null;
        let mut rest = text.as_bytes();
        let mut i = 0;
        while !rest.is_empty() {
            let n = sizes[i % sizes.len()].min(rest.len());
            let (chunk, tail) = rest.split_at(n);
            rest = tail;
            i += 1;
            let progress = reader.feed(chunk);
            for change in progress.changes {
                change.apply(&mut mirror);
            }
            if progress.changed {
                let now = reader.value();
                prop_assert_eq!(&mirror, &now);
                shown.push(now);
            }
        }
        for pair in shown.windows(2) {
            prop_assert!(grows(&pair[0], &pair[1]), "{} then {}", pair[0], pair[1]);
        }
        let read = parse_value(&text, schema, &ParseOptions::default());
        if let Ok(read) = read {
            let as_written = matches!(
                read.provenance,
                structured_runtime::Provenance::Clean | structured_runtime::Provenance::Extracted
            );
            if as_written && reader.status() == StreamStatus::Complete {
                prop_assert_eq!(shown.last(), Some(&read.value), "{}", text);
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// A generic type has a generic companion: its parameter as its partial form.
#[derive(StructuredOutput, serde::Deserialize)]
#[allow(dead_code)]
struct Envelope<T> {
    item: T,
    note: String,
}

#[test]
fn a_generic_type_has_a_generic_partial() {
    use structured_runtime::HasPartial;
    let p: EnvelopePartial<Inner> =
        Envelope::<Inner>::partial_from(&json!({"item": {}, "note": "wri"})).unwrap();
    assert!(p.item.is_some_and(|i| i.text.is_none()));
    assert_eq!(p.note.as_deref(), Some("wri"));
    let empty = EnvelopePartial::<Inner>::default();
    assert!(empty.item.is_none() && empty.note.is_none());
}

/// Nesting past the reader's limit is refused where the limit is crossed: the opener one level
/// too deep ends reading (nothing after it is kept), and the final reading refuses the answer
/// as too deep too. The work stays linear: 20,000 levels fed a byte at a time.
#[test]
fn nesting_past_the_limit_is_refused_where_it_is_crossed() {
    use structured_runtime::read::MAX_STREAM_DEPTH;
    let schema = ResponseSchema::with_limits(
        "any",
        json!({"type": "object"}),
        &structured_runtime::SchemaLimits::default(),
    )
    .unwrap();
    let depth = 20_000;
    let text = format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth));
    let mut reader = StreamReader::new(&schema);
    let mut refused_at = None;
    for (i, byte) in text.as_bytes().chunks(1).enumerate() {
        let progress = reader.feed(byte);
        if progress.status == StreamStatus::TooDeep && refused_at.is_none() {
            refused_at = Some(i);
        }
    }
    // The opener of level MAX_STREAM_DEPTH + 1, at byte 5 per level.
    assert_eq!(refused_at, Some(5 * MAX_STREAM_DEPTH));
    let final_reading = parse_value(reader.text().unwrap(), &schema, &ParseOptions::default());
    assert!(
        matches!(
            final_reading,
            Err(structured_runtime::ParseError::TooDeep(_))
        ),
        "{final_reading:?}"
    );
    // At the limit itself, the value reads to the end.
    let at_limit = format!(
        "{}1{}",
        r#"{"a":"#.repeat(MAX_STREAM_DEPTH),
        "}".repeat(MAX_STREAM_DEPTH)
    );
    let mut reader = StreamReader::new(&schema);
    reader.feed(at_limit.as_bytes());
    assert_eq!(reader.status(), StreamStatus::Complete);
    assert!(parse_value(&at_limit, &schema, &ParseOptions::default()).is_ok());
}

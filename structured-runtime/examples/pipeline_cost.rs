//! Runs one pipeline path many times, for instruction counts that do not depend on machine load:
//!
//! ```text
//! cargo build --release -p structured-runtime --example pipeline_cost
//! for p in from_json repaired runner; do
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/pipeline_cost $p 2000
//! done
//! ```
//! Subtract the `... $p 0` total (start-up) and divide by the count.
//!
//! - `from_json`: `HeartbeatDecision::from_json` on the bare answer (the unit).
//! - `from_json_checked`: `from_json` of a type with a set and an internally tagged enum, which
//!   the validator of record judges.
//! - `repaired`: `parse_response` on the same answer with a line of prose around it, single
//!   quotes and trailing commas (what a weak model writes): extraction, repair, coercion,
//!   deserialization.
//! - `repair_value`, `repair_json`, `jsonrepair_repaired`: the repair alone of that answer's
//!   JSON (no prose around it), by `repair` (to a `Value`), by `repair_json` (to its JSON text)
//!   and by `jsonrepair-rs` (to its JSON text): what the repair costs of `repaired`.
//! - `fenced_4k`, `chatty_4k`: `parse_response` on the benches' 4 KB answers.
//! - `corpus`: `repair_text` on every input of the two public repair corpora.
//! - `chatty_100k`: `parse_response` on the 100 KB chatty answer; `repair_1mb`: `repair_text` on
//!   the 1 MB one (the scaling cases of the `pipeline` bench).
//! - `jsonrepair_corpus`, `jsonrepair_1mb`: the same inputs through `jsonrepair-rs`.
//! - `whole_10k`: `parse_response` on a 10 KB answer of JSON alone; `stream_10k`: the same text
//!   fed to a `StreamReader` one byte at a time, the value so far kept after each byte (its
//!   changes applied to a `StreamView`), then `parse_response` on the whole text (the final value);
//!   `stream_10k_reader`: the same without the final reading; `prefixes_10k`: `parse_response` on
//!   every 16th prefix of it (what re-parsing each prefix costs, over 16).
//! - `valid_10k`, `whole_valid_10k`: `from_json` and `parse_response` on a whole valid 10 KB
//!   answer of many small values (`long_answer` with its quotes escaped: as written it is not
//!   JSON, and a reader stops at byte 244); `stream_valid_1`, `_4`, `_16`, `_whole`: that answer
//!   fed to a `StreamReader` in 1-, 4- and 16-byte chunks and in one, the value so far kept by
//!   its changes in a `StreamView`; `stream_lean_1`, `_4`, `_16`, `_whole`: the same through
//!   `StreamReader::changes_only` (the reader keeps no value of its own; the consumer keeps it
//!   by the changes); `stream_reader_4`: the reader alone in 4-byte chunks, its changes not
//!   applied (what the reader costs of `stream_valid_4`); `stream_lean_reader_4`: the same
//!   through `StreamReader::changes_only`; `value_10k`: `serde_json` reading that answer into a
//!   `Value` (what a consumer keeping the value so far as a `Value` builds, at the least);
//!   `feed_floor_4`: that answer in 4-byte chunks to a reader that reads nothing more (what a
//!   feed costs that only keeps its chunk); `changes_copied_4`: `stream_lean_reader_4` with
//!   each chunk's changes copied and dropped (less `stream_lean_reader_4`: what building and
//!   dropping the changes costs);
//!   `actson_whole`, `actson_4`, `actson_1`: that answer through `actson`'s push parser, whole
//!   and in 4- and 1-byte chunks, each string and number read off its events (what a push
//!   parser costs that builds no value, no path and judges nothing: a peer's floor for reading
//!   in chunks);
//!   `valid_100k`, `stream_valid_4_100k`:
//!   `from_json` and `stream_valid_4` on an answer ten times as long (a chunk's cost does not
//!   grow with what was read before it).
//! - `text_10k`: `from_json` on an answer whose rationale is one 10 KB string (`text_answer`);
//!   `stream_text_4`, `_16`: that answer through `StreamReader::changes_only` in 4- and 16-byte
//!   chunks, the value so far kept by its changes in a `StreamView` (free text: a change per
//!   chunk).
//! - `stream_lean_4_str`, `stream_text_4_str`: `stream_lean_4` and `stream_text_4` with the
//!   chunks given as text (`StreamReader::feed_str`, as a provider's stream gives them), each
//!   ending where a character does.
//! - `read_body`: reading the runner's OpenAI Chat body (the envelope around the answer);
//!   `answer_string`: `serde_json` decoding the answer's JSON string alone (what the body holds
//!   it in: its quotes and line breaks escaped).
//! - `serde_body`: the same body read by hand with `serde_json` alone (the choices' first
//!   message's content into a `String`, then that text into `HandChecked` and its ranges
//!   checked): what reading the provider's answer costs a careful `serde` user, with no request
//!   built, no mode and nothing reported but the value.
//! - `runner`: one `run_structured` attempt against an in-memory provider that answers with the
//!   clean JSON in an OpenAI Chat body: mode resolution, lowering, the body, reading, parsing.

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use structured_runtime::provider::capabilities::ProviderKind;
use structured_runtime::provider::wire::{read_response, ChatRequest, Expect, WireApi};
use structured_runtime::read::repair::{repair, repair_json, repair_text};
use structured_runtime::run::{run_structured, Provider, RunConfig, TransportError};
use structured_runtime::{
    parse_response, StreamReader, StreamView, StructuredOutput, StructuredOutputMode,
};

#[path = "../benches/heartbeat.rs"]
mod heartbeat;
use heartbeat::{
    answer, chatty, corpus_inputs, long_answer, text_answer, valid_answer, HandChecked,
    HeartbeatDecision, Offsets, ANSWER,
};

/// The answer as a weak model writes it: a line of prose around it, single quotes, trailing
/// commas.
fn repaired_answer() -> String {
    format!("Here it is:\n{}\nHope this helps.", repaired_answer_json())
}

/// That answer without the prose: single quotes and trailing commas only.
fn repaired_answer_json() -> String {
    ANSWER
        .replace('"', "'")
        .replace("}\n  ],", "},\n  ],")
        .replace("\n}", ",\n}")
}

/// A type whose reading cannot vouch for its value as written (a set, an enum with data): it is
/// read as a JSON value and judged by the validator of record.
#[derive(structured_runtime::StructuredOutput, serde::Deserialize)]
struct Checked {
    #[length(max = 8)]
    tags: std::collections::BTreeSet<String>,
    step: Step,
    #[range(0.0, 1.0)]
    confidence: f64,
}

#[derive(structured_runtime::StructuredOutput, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Step {
    Wait {
        #[range(0, 3600)]
        seconds: u32,
    },
    Stop,
}

const CHECKED: &str = r#"{"tags": ["vault", "night", "ops"], "step": {"kind": "wait", "seconds": 30}, "confidence": 0.8}"#;

/// Answers every request with the same OpenAI Chat body.
struct Canned(String);

impl Provider for Canned {
    fn kind(&self) -> ProviderKind {
        ProviderKind::OpenAiChat
    }
    fn model(&self) -> &str {
        "gpt-4o"
    }
    fn send(&self, body: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
        black_box(body);
        let reply = self.0.clone();
        async move { Ok(reply) }
    }
}

/// `text` through `actson`'s push parser in chunks of `chunk` bytes: each chunk pushed as the
/// parser asks for more, each name and string read as text and each number as a float. What it
/// reads, summed, so nothing is left unread.
fn actson_events(text: &[u8], chunk: usize) -> usize {
    use actson::feeder::PushJsonFeeder;
    use actson::{JsonEvent, JsonParser};
    let mut parser = JsonParser::new(PushJsonFeeder::new());
    let mut pieces = text.chunks(chunk);
    let mut rest: &[u8] = &[];
    let mut read = 0usize;
    loop {
        let event = match parser.next_event() {
            Ok(Some(event)) => event,
            Ok(None) => return read,
            Err(_) => return 0,
        };
        match event {
            JsonEvent::NeedMoreInput => {
                if rest.is_empty() {
                    match pieces.next() {
                        Some(piece) => rest = black_box(piece),
                        None => {
                            parser.feeder.done();
                            continue;
                        }
                    }
                }
                // (The feeder takes what fits in its buffer; the rest waits for the next ask.)
                let took = parser.feeder.push_bytes(rest);
                rest = rest.get(took..).unwrap_or_default();
            }
            JsonEvent::FieldName | JsonEvent::ValueString => {
                read += parser.current_str().map_or(0, str::len);
            }
            JsonEvent::ValueInt | JsonEvent::ValueFloat => {
                read += parser.current_float().map_or(0, |f| usize::from(f > 0.5));
            }
            _ => read += 1,
        }
    }
}

/// An OpenAI Chat body as a `serde` user reads it by hand: the first choice's content.
#[derive(serde::Deserialize)]
struct ChatBody {
    choices: Vec<ChatChoice>,
}

#[derive(serde::Deserialize)]
struct ChatChoice {
    message: ChatMessage,
}

#[derive(serde::Deserialize)]
struct ChatMessage {
    content: String,
}

/// Polls a future that never waits (the canned provider's) to its end.
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_default();
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1_000);
    let repaired = repaired_answer();
    let body = serde_json::json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": ANSWER, "refusal": null}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 40}})
    .to_string();
    let provider = Canned(body);
    // The answer as that body holds it: one JSON string, its quotes and line breaks escaped.
    let answer_string = serde_json::to_string(ANSWER).unwrap_or_default();
    let request = ChatRequest::user("Assess the vault.");
    let config = RunConfig::default();
    let (fenced, braces, corpus) = (answer(4096), chatty(4096), corpus_inputs());
    let (chatty_100k, chatty_1m) = (chatty(100_000), chatty(1_000_000));
    let long = long_answer(10_000);
    // A whole valid answer of many small values (the long answer's quotes escaped).
    let valid = valid_answer(10_000);
    let text = text_answer(10_000);
    // Ten times longer: what a chunk costs must not grow with what was read before it.
    // Built only for its own paths: 200 KB more on the heap move the other paths' counts.
    let valid_100k = if path.ends_with("_100k") && path != "chatty_100k" {
        valid_answer(100_000)
    } else {
        String::new()
    };
    assert!(serde_json::from_str::<serde_json::Value>(&valid).is_ok());
    let stream_valid = |chunk: usize, lean: bool, valid: &str| {
        let mut reader = if lean {
            StreamReader::changes_only(HeartbeatDecision::schema())
        } else {
            StreamReader::new(HeartbeatDecision::schema())
        };
        let mut shown = StreamView::new();
        for piece in valid.as_bytes().chunks(chunk) {
            for change in reader.feed(black_box(piece)).changes {
                shown.apply(change);
            }
        }
        black_box(&shown);
        !shown.value().is_null()
    };
    // The same, the chunks given as text (`feed_str`, as a provider's stream gives them): each
    // `chunk` bytes long, or to the end of the character it cuts.
    let stream_str = |chunk: usize, valid: &str| {
        let mut reader = StreamReader::changes_only(HeartbeatDecision::schema());
        let mut shown = StreamView::new();
        let mut rest = valid;
        while !rest.is_empty() {
            let mut end = chunk.min(rest.len());
            while !rest.is_char_boundary(end) {
                end += 1;
            }
            let (piece, after) = rest.split_at(end);
            rest = after;
            for change in reader.feed_str(black_box(piece)).changes {
                shown.apply(change);
            }
        }
        black_box(&shown);
        !shown.value().is_null()
    };
    // The reader alone: the same chunks, the changes left unread.
    let stream_reader = |chunk: usize, lean: bool, valid: &str| {
        let mut reader = if lean {
            StreamReader::changes_only(HeartbeatDecision::schema())
        } else {
            StreamReader::new(HeartbeatDecision::schema())
        };
        let mut changes = 0;
        for piece in valid.as_bytes().chunks(chunk) {
            changes += reader.feed(black_box(piece)).changes.len();
        }
        changes > 0
    };
    // The floor of a feed: the same chunks to a reader that reads nothing more (a value and the
    // start of another came first), so a feed only keeps its chunk.
    let feed_floor = |chunk: usize, valid: &str| {
        let mut reader = StreamReader::changes_only(HeartbeatDecision::schema());
        reader.feed(b"{} {");
        let mut changes = 0;
        for piece in valid.as_bytes().chunks(chunk) {
            changes += reader.feed(black_box(piece)).changes.len();
        }
        changes == 0
    };
    // What the changes cost as values: `stream_lean_reader_4` with each chunk's changes copied
    // and dropped (built and dropped once more, as the reader builds and drops them).
    let changes_copied = |chunk: usize, valid: &str| {
        let mut reader = StreamReader::changes_only(HeartbeatDecision::schema());
        let mut changes = 0;
        for piece in valid.as_bytes().chunks(chunk) {
            changes += black_box(reader.feed(black_box(piece)).changes.to_vec()).len();
        }
        changes > 0
    };
    let stream = |final_read: bool| {
        // The value so far kept after every byte, as a consumer keeps it: by its changes.
        let mut reader = StreamReader::new(HeartbeatDecision::schema());
        let mut shown = StreamView::new();
        for byte in long.as_bytes().chunks(1) {
            for change in reader.feed(black_box(byte)).changes {
                shown.apply(change);
            }
        }
        black_box(&shown);
        !final_read
            || parse_response::<HeartbeatDecision>(
                reader.text().unwrap_or_default(),
                StructuredOutputMode::SchemaEnforced,
            )
            .is_ok()
    };
    let mut ok = 0usize;
    // The answers `from_json` and repair read whole, each call at the next of 32 offsets
    // (`Offsets`: counts taken over a multiple of 32 calls).
    let (answer_at, repaired_at) = (Offsets::new(ANSWER), Offsets::new(&repaired));
    let repaired_json = repaired_answer_json();
    let repaired_json_at = Offsets::new(&repaired_json);
    let (valid_at, text_at) = (Offsets::new(&valid), Offsets::new(&text));
    let valid_100k_at = Offsets::new(&valid_100k);
    for i in 0..n {
        ok += match path.as_str() {
            "from_json" => HeartbeatDecision::from_json(black_box(answer_at.get(i))).is_ok(),
            "from_json_checked" => Checked::from_json(black_box(CHECKED)).is_ok(),
            "answer_string" => serde_json::from_str::<String>(black_box(&answer_string))
                .is_ok_and(|s| !s.is_empty()),
            "read_body" => read_response(
                WireApi::OpenAiChat,
                &Expect::new(StructuredOutputMode::SchemaEnforced),
                black_box(&provider.0),
            )
            .is_ok(),
            "serde_body" => serde_json::from_str::<ChatBody>(black_box(&provider.0))
                .ok()
                .and_then(|body| body.choices.into_iter().next())
                .and_then(|choice| {
                    serde_json::from_str::<HandChecked>(&choice.message.content).ok()
                })
                .is_some_and(|value| value.valid()),
            "repair_value" => repair(black_box(repaired_json_at.get(i))).is_ok(),
            "repair_json" => repair_json(black_box(repaired_json_at.get(i))).is_ok(),
            "jsonrepair_repaired" => {
                jsonrepair_rs::jsonrepair(black_box(repaired_json_at.get(i))).is_ok()
            }
            "repaired" => parse_response::<HeartbeatDecision>(
                black_box(repaired_at.get(i)),
                StructuredOutputMode::PromptGuided,
            )
            .is_ok(),
            "fenced_4k" | "chatty_4k" => {
                let text = if path == "fenced_4k" {
                    &fenced
                } else {
                    &braces
                };
                parse_response::<HeartbeatDecision>(
                    black_box(text),
                    StructuredOutputMode::PromptGuided,
                )
                .is_ok()
            }
            "chatty_100k" => parse_response::<HeartbeatDecision>(
                black_box(&chatty_100k),
                StructuredOutputMode::PromptGuided,
            )
            .is_ok(),
            "repair_1mb" => repair_text(black_box(&chatty_1m)).is_ok(),
            "whole_10k" => parse_response::<HeartbeatDecision>(
                black_box(&long),
                StructuredOutputMode::SchemaEnforced,
            )
            .is_ok(),
            "stream_10k" => stream(true),
            "valid_10k" => HeartbeatDecision::from_json(black_box(valid_at.get(i))).is_ok(),
            "whole_valid_10k" => parse_response::<HeartbeatDecision>(
                black_box(&valid),
                StructuredOutputMode::SchemaEnforced,
            )
            .is_ok(),
            "stream_valid_1" => stream_valid(1, false, &valid),
            "stream_valid_4" => stream_valid(4, false, &valid),
            "stream_valid_16" => stream_valid(16, false, &valid),
            "stream_valid_whole" => stream_valid(usize::MAX, false, &valid),
            "stream_reader_4" => stream_reader(4, false, &valid),
            "stream_lean_reader_4" => stream_reader(4, true, &valid),
            "feed_floor_4" => feed_floor(4, &valid),
            "changes_copied_4" => changes_copied(4, &valid),
            "value_10k" => {
                serde_json::from_str::<serde_json::Value>(black_box(valid_at.get(i))).is_ok()
            }
            "actson_whole" => actson_events(black_box(valid.as_bytes()), usize::MAX) > 0,
            "actson_4" => actson_events(black_box(valid.as_bytes()), 4) > 0,
            "actson_1" => actson_events(black_box(valid.as_bytes()), 1) > 0,
            "valid_100k" => HeartbeatDecision::from_json(black_box(valid_100k_at.get(i))).is_ok(),
            "stream_valid_4_100k" => stream_valid(4, false, &valid_100k),
            "stream_lean_1" => stream_valid(1, true, &valid),
            "stream_lean_4" => stream_valid(4, true, &valid),
            "stream_lean_16" => stream_valid(16, true, &valid),
            "stream_lean_whole" => stream_valid(usize::MAX, true, &valid),
            "text_10k" => HeartbeatDecision::from_json(black_box(text_at.get(i))).is_ok(),
            "stream_text_4" => stream_valid(4, true, &text),
            "stream_text_16" => stream_valid(16, true, &text),
            "stream_lean_4_str" => stream_str(4, &valid),
            "stream_text_4_str" => stream_str(4, &text),
            "stream_10k_reader" => stream(false),
            "prefixes_10k" => {
                (1..=long.len())
                    .step_by(16)
                    .filter(|&end| {
                        long.get(..end).is_some_and(|prefix| {
                            parse_response::<HeartbeatDecision>(
                                black_box(prefix),
                                StructuredOutputMode::PromptGuided,
                            )
                            .is_ok()
                        })
                    })
                    .count()
                    > 0
            }
            // The same inputs through `jsonrepair-rs`, for the side-by-side counts.
            "jsonrepair_1mb" => jsonrepair_rs::jsonrepair(black_box(&chatty_1m)).is_ok(),
            "jsonrepair_corpus" => {
                corpus
                    .iter()
                    .filter(|i| jsonrepair_rs::jsonrepair(black_box(i)).is_ok())
                    .count()
                    > 0
            }
            "corpus" => {
                corpus
                    .iter()
                    .filter(|i| repair_text(black_box(i)).is_ok())
                    .count()
                    > 0
            }
            "runner" => block_on(run_structured::<HeartbeatDecision, _>(
                &provider,
                black_box(&request),
                &config,
            ))
            .is_ok(),
            other => {
                eprintln!("unknown path {other:?}: use from_json, repaired, fenced_4k, chatty_4k, chatty_100k, repair_1mb, whole_10k, stream_10k, stream_10k_reader, prefixes_10k, corpus, jsonrepair_1mb, jsonrepair_corpus, repair_value, repair_json, jsonrepair_repaired, stream_reader_4, stream_lean_reader_4, feed_floor_4, changes_copied_4, value_10k, actson_whole, actson_4, actson_1, stream_lean_4_str, stream_text_4_str, valid_100k, stream_valid_4_100k, answer_string, read_body, serde_body or runner (see the top of this file)");
                std::process::exit(2);
            }
        } as usize;
    }
    println!("{ok} of {n} read ({} bytes repaired)", repaired.len());
}

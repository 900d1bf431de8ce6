//! Streamed response bodies of every wire API, split at every byte offset and fed a byte at a
//! time: the answer deltas join to the answer the whole body holds, the end is the same typed
//! outcome as reading the body whole (refusal, filter, truncation), a stream cut before its
//! final event is an error, and the deltas read by a `StreamReader` give partial values that
//! only grow and end at what `parse_value` reads from the whole answer.

mod common;

use common::grows::grows;
use std::path::Path;

use serde_json::{json, Value};
use structured_runtime::provider::wire::{
    read_response, read_stream, CodecError, Expect, Outcome, StreamDecoder, WireApi,
};
use structured_runtime::read::Answer;
use structured_runtime::{
    parse_value, ParseOptions, ResponseSchema, SchemaLimits, StreamReader, StreamStatus,
    StructuredOutputMode,
};

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/providers")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

/// What a finished stream said, comparable: the outcome's kind and its answer text.
fn summary(
    result: &Result<structured_runtime::provider::wire::ProviderResponse, CodecError>,
) -> String {
    match result {
        Ok(r) => format!("{:?} / {:?}", r.outcome, r.usage),
        Err(e) => format!("error: {e}"),
    }
}

/// The answer text the response holds, when it holds one.
fn answer_text(outcome: &Outcome) -> Option<String> {
    match outcome {
        Outcome::Candidate(c) => Some(match &c.answer {
            Answer::Text(t) => t.clone(),
            Answer::Json(v) => v.to_string(),
        }),
        _ => None,
    }
}

/// Feeds `chunks`; the answer deltas joined, and the end.
fn decode(
    api: WireApi,
    expect: &Expect,
    chunks: &[&[u8]],
) -> (
    String,
    Result<structured_runtime::provider::wire::ProviderResponse, CodecError>,
) {
    let mut decoder = StreamDecoder::new(api, expect.clone());
    let mut answer = String::new();
    for chunk in chunks {
        match decoder.feed(chunk) {
            Ok(piece) => answer.push_str(&piece),
            Err(e) => return (answer, Err(e)),
        }
    }
    (answer, decoder.finish())
}

struct Case {
    file: &'static str,
    api: WireApi,
    expect: Expect,
    /// What the end is: "answer", "refusal", "truncated", "filtered".
    ends: &'static str,
}

fn cases() -> Vec<Case> {
    use StructuredOutputMode::{SchemaEnforced, ToolUseWorkaround};
    let text = |file, api, ends| Case {
        file,
        api,
        expect: Expect::new(SchemaEnforced),
        ends,
    };
    let tool = |file, api, name: &str, ends| Case {
        file,
        api,
        expect: Expect::tool(name),
        ends,
    };
    let _ = ToolUseWorkaround;
    vec![
        text(
            "openai_chat_stream_structured_success.sse",
            WireApi::OpenAiChat,
            "answer",
        ),
        text(
            "openai_chat_stream_refusal.sse",
            WireApi::OpenAiChat,
            "refusal",
        ),
        text(
            "openai_chat_stream_truncated_length.sse",
            WireApi::OpenAiChat,
            "truncated",
        ),
        text(
            "openai_responses_stream_structured_success.sse",
            WireApi::OpenAiResponses,
            "answer",
        ),
        text(
            "openai_responses_stream_incomplete.sse",
            WireApi::OpenAiResponses,
            "truncated",
        ),
        text(
            "openai_responses_stream_refusal.sse",
            WireApi::OpenAiResponses,
            "refusal",
        ),
        tool(
            "openai_responses_stream_function_call.sse",
            WireApi::OpenAiResponses,
            "get_weather",
            "answer",
        ),
        tool(
            "anthropic_stream_tool_use.sse",
            WireApi::Anthropic,
            "get_weather",
            "answer",
        ),
        text(
            "anthropic_stream_refusal.sse",
            WireApi::Anthropic,
            "refusal",
        ),
        tool(
            "anthropic_stream_max_tokens_partial_tool_input.sse",
            WireApi::Anthropic,
            "make_file",
            "truncated",
        ),
        text(
            "gemini_stream_structured_json.sse",
            WireApi::Gemini,
            "answer",
        ),
        text(
            "gemini_stream_basic_reply_short.sse",
            WireApi::Gemini,
            "answer",
        ),
        text("gemini_stream_max_tokens.sse", WireApi::Gemini, "truncated"),
        text(
            "gemini_stream_prompt_blocked_safety.sse",
            WireApi::Gemini,
            "filtered",
        ),
        text(
            "ollama_chat_stream_structured.ndjson",
            WireApi::OllamaChat,
            "answer",
        ),
        text(
            "ollama_chat_stream_length.ndjson",
            WireApi::OllamaChat,
            "truncated",
        ),
    ]
}

fn ends_as(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Candidate(_) => "answer",
        Outcome::Refused { .. } => "refusal",
        Outcome::Truncated { .. } => "truncated",
        Outcome::Filtered { .. } => "filtered",
        _ => "other",
    }
}

#[test]
fn every_stream_at_every_split_reads_as_the_whole_body() {
    for case in cases() {
        let body = fixture(case.file);
        let whole = read_stream(case.api, &case.expect, &body);
        let outcome = &whole
            .as_ref()
            .unwrap_or_else(|e| panic!("{}: {e}", case.file))
            .outcome;
        assert_eq!(ends_as(outcome), case.ends, "{}: {outcome:?}", case.file);
        let bytes = body.as_bytes();
        let (deltas, end) = decode(case.api, &case.expect, &bytes.chunks(1).collect::<Vec<_>>());
        assert_eq!(
            summary(&end),
            summary(&whole),
            "{} a byte at a time",
            case.file
        );
        // The deltas are the answer, as the end holds it.
        if let Some(answer) = answer_text(outcome) {
            match serde_json::from_str::<Value>(&answer) {
                Ok(value) if case.api == WireApi::Anthropic => {
                    assert_eq!(
                        serde_json::from_str::<Value>(&deltas).unwrap(),
                        value,
                        "{}",
                        case.file
                    )
                }
                _ => assert_eq!(deltas, answer, "{}", case.file),
            }
        }
        for cut in 0..=bytes.len() {
            let (a, b) = bytes.split_at(cut);
            let (joined, end) = decode(case.api, &case.expect, &[a, b]);
            assert_eq!(joined, deltas, "{} cut at {cut}", case.file);
            assert_eq!(summary(&end), summary(&whole), "{} cut at {cut}", case.file);
        }
    }
}

#[test]
fn a_stream_cut_before_its_last_event_is_an_error() {
    for case in cases() {
        let body = fixture(case.file);
        // Without its final event (the last non-empty event or line).
        let trimmed = body.trim_end();
        let last = trimmed
            .rfind("\n\n")
            .or_else(|| trimmed.rfind("\r\n\r\n"))
            .or_else(|| trimmed.rfind('\n'))
            .unwrap();
        let cut = &body[..last];
        let (_, end) = decode(case.api, &case.expect, &[cut.as_bytes()]);
        let ended_early = matches!(end, Err(CodecError::Stream { .. }));
        // A Gemini stream whose prompt was blocked says so in its last chunk; without it, the
        // stream is a cut one like every other.
        assert!(ended_early, "{}: {}", case.file, summary(&end));
    }
}

/// Any object, any root: the partial values of whatever JSON the streams hold.
fn any_object() -> ResponseSchema {
    let limits = SchemaLimits {
        object_root: false,
        ..SchemaLimits::default()
    };
    ResponseSchema::with_limits("any", json!({"type": "object"}), &limits).unwrap()
}

#[test]
fn the_answers_in_the_streams_give_partial_values_that_only_grow() {
    let schema = any_object();
    for case in cases().into_iter().filter(|c| c.ends == "answer") {
        let body = fixture(case.file);
        let (answer, end) = decode(case.api, &case.expect, &[body.as_bytes()]);
        end.unwrap();
        let Ok(whole) = parse_value(&answer, &schema, &ParseOptions::default()) else {
            continue; // prose, not JSON
        };
        // The body a byte at a time; each delta to the reader as it comes.
        let mut decoder = StreamDecoder::new(case.api, case.expect.clone());
        let mut reader = StreamReader::new(&schema);
        let mut shown: Vec<Value> = Vec::new();
        for byte in body.as_bytes().chunks(1) {
            let delta = decoder.feed(byte).unwrap();
            if reader.feed(delta.as_bytes()).changed {
                shown.push(reader.value());
            }
        }
        assert_eq!(reader.status(), StreamStatus::Complete, "{}", case.file);
        assert_eq!(shown.last(), Some(&whole.value), "{}", case.file);
        assert!(!shown.is_empty(), "{}", case.file);
        for pair in shown.windows(2) {
            assert!(
                grows(&pair[0], &pair[1]),
                "{}: {} then {}",
                case.file,
                pair[0],
                pair[1]
            );
        }
    }
}

/// A streamed tool call's input is the object written, whatever its keys: `serde_json`'s own
/// `Value` reading (its `raw_value` feature on) would read an object whose first key is
/// `$serde_json::private::RawValue` as the JSON its string holds.
#[test]
fn a_tool_input_keyed_as_serde_json_raw_value_is_read_as_written() {
    let body = fixture("anthropic_stream_tool_use.sse");
    let written = r#"{\"$serde_json::private::RawValue\": \"[1, 2]\"}"#;
    let mut lines = Vec::new();
    let mut put = false;
    for line in body.lines() {
        if line.contains("\"partial_json\":\"") && !line.contains("\"partial_json\":\"\"") {
            if !put {
                lines.push(format!(
                    r#"data: {{"type":"content_block_delta","index":1,"delta":{{"type":"input_json_delta","partial_json":"{written}"}}}}"#
                ));
                put = true;
            }
            continue;
        }
        lines.push(line.to_owned());
    }
    assert!(put);
    let body = lines.join("\n") + "\n";
    let read = read_stream(WireApi::Anthropic, &Expect::tool("get_weather"), &body).unwrap();
    let Outcome::Candidate(candidate) = &read.outcome else {
        panic!("{:?}", read.outcome);
    };
    let expected = json!({"$serde_json::private::RawValue": "[1, 2]"});
    match &candidate.answer {
        Answer::Json(value) => assert_eq!(value, &expected),
        Answer::Text(text) => panic!("read as text: {text}"),
    }
    // The same input in a whole (not streamed) body.
    let mut whole: Value =
        serde_json::from_str(&fixture("anthropic_tool_use.response.json")).unwrap();
    whole["content"][0]["input"] = Value::Null;
    let body = whole.to_string().replace(
        r#""input":null"#,
        r#""input":{"$serde_json::private::RawValue":"[1, 2]"}"#,
    );
    assert!(body.contains("RawValue"));
    let read = read_response(WireApi::Anthropic, &Expect::tool("get_weather"), &body).unwrap();
    let Outcome::Candidate(candidate) = &read.outcome else {
        panic!("{:?}", read.outcome);
    };
    match &candidate.answer {
        Answer::Json(value) => assert_eq!(value, &expected),
        Answer::Text(text) => panic!("read as text: {text}"),
    }
}

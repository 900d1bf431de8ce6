//! The streaming run and the plain run agree, including when the schema went to the provider in
//! another shape (OpenAI strict: a map sent as a list of `{key, value}` entries): the stream
//! checks each value in the shape it was sent, shows it in the schema's own shape, and a stream
//! stopped on a violation is one the final reading refuses too.

mod common;

use std::collections::BTreeMap;

use common::grows::grows;
use proptest::prelude::*;
use std::future::Future;

use serde::Deserialize;
use serde_json::{json, Value};
use structured_runtime::provider::capabilities::ProviderKind;
use structured_runtime::run::{
    run_structured, Ask, RunError, RunErrorKind, StreamEvent, TransportError,
};
use structured_runtime::{ChatRequest, Provenance, Provider, RunConfig, StructuredOutput};

#[derive(Debug, Deserialize, StructuredOutput, PartialEq)]
struct Scores {
    /// Who.
    name: String,
    /// A score per topic.
    scores: BTreeMap<String, f64>,
}

/// Answers each request with the next body, streamed in `piece`-byte chunks.
struct Recorded {
    bodies: std::sync::Mutex<Vec<String>>,
    piece: usize,
}

impl Recorded {
    fn new(answers: &[&str], piece: usize) -> Recorded {
        let bodies = answers.iter().rev().map(|a| a.to_string()).collect();
        Recorded {
            bodies: std::sync::Mutex::new(bodies),
            piece,
        }
    }
    fn next(&self) -> String {
        self.bodies.lock().unwrap().pop().unwrap_or_default()
    }
}

/// An OpenAI Chat stream whose content deltas spell `answer` in 7-character pieces, with usage.
fn sse(answer: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = answer.chars().collect();
    for piece in chars.chunks(7) {
        let text: String = piece.iter().collect();
        let event = json!({"choices": [{"index": 0, "delta": {"content": text}}]});
        out.push_str(&format!("data: {event}\n\n"));
    }
    let end = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}});
    out.push_str(&format!("data: {end}\n\ndata: [DONE]\n\n"));
    out
}

impl Provider for Recorded {
    fn kind(&self) -> ProviderKind {
        ProviderKind::OpenAiChat
    }
    fn model(&self) -> &str {
        "gpt-4o"
    }
    fn send(&self, _: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
        let body = json!({"choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": self.next()}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}});
        async move { Ok(body.to_string()) }
    }
    fn streams(&self) -> bool {
        true
    }
    fn send_stream<'a>(
        &'a self,
        _: &'a str,
        on_bytes: &'a mut (dyn FnMut(&[u8]) -> bool + Send),
    ) -> impl Future<Output = Result<String, TransportError>> + Send + 'a {
        let body = sse(&self.next());
        let piece = self.piece;
        async move {
            let mut sent = 0;
            for chunk in body.as_bytes().chunks(piece) {
                sent += chunk.len();
                if !on_bytes(chunk) {
                    break;
                }
            }
            Ok(body.get(..sent).unwrap_or_default().to_owned())
        }
    }
}

fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

fn stopping() -> RunConfig {
    let mut config = RunConfig {
        stop_stream_on_violation: true,
        ..RunConfig::default()
    };
    config.outputs.max_retries = 1;
    config
}

const AS_SENT: &str =
    r#"{"name": "Ada", "scores": [{"key": "math", "value": 0.9}, {"key": "art", "value": 0.4}]}"#;

#[test]
fn a_map_sent_as_entries_streams_in_the_schemas_shape_and_ends_as_the_plain_run() {
    for piece in [1, 5, 64] {
        let mut shown = Vec::new();
        let mut early = Vec::new();
        let out = block_on(
            Ask::new(
                &Recorded::new(&[AS_SENT], piece),
                &ChatRequest::user("Scores?"),
            )
            .config(&stopping())
            .stream(|event| match event {
                StreamEvent::Partial { value, .. } => shown.push(value.clone()),
                StreamEvent::Violations(v) => early.extend(v.iter().map(|v| v.to_string())),
                _ => {}
            })
            .typed::<Scores>(),
        )
        .unwrap_or_else(|e| panic!("{piece}: {e}"));
        assert!(early.is_empty(), "{piece}: {early:?}");
        assert_eq!(out.provenance, Provenance::Clean);
        let plain = block_on(run_structured::<Scores, _>(
            &Recorded::new(&[AS_SENT], piece),
            &ChatRequest::user("Scores?"),
            &RunConfig::default(),
        ))
        .unwrap();
        assert_eq!(plain.value, out.value);
        // Shown in the schema's own shape: a map, never the entries list.
        let last = shown.last().unwrap();
        assert_eq!(
            last,
            &json!({"name": "Ada", "scores": {"math": 0.9, "art": 0.4}})
        );
        assert!(
            shown.iter().all(|v| !v["scores"].is_array()),
            "{piece}: {shown:?}"
        );
    }
}

/// A map under a `oneOf` whose branches exclude each other (read as an `anyOf`): sent as entries,
/// shown as a map (whole, once its branch completes), ending as the plain run does.
#[test]
fn a_map_under_an_exclusive_one_of_is_shown_and_read_back_as_a_map() {
    let schema = structured_runtime::ResponseSchema::new(
        "pick",
        json!({
            "type": "object",
            "properties": {"pick": {"oneOf": [
                {
                    "type": "object",
                    "properties": {"scores": {"type": "object", "additionalProperties": {"type": "number"}}},
                    "required": ["scores"],
                    "additionalProperties": false
                },
                {"type": "null"}
            ]}},
            "required": ["pick"],
            "additionalProperties": false
        }),
    )
    .unwrap();
    let answer =
        r#"{"pick": {"scores": [{"key": "math", "value": 0.9}, {"key": "art", "value": 0.4}]}}"#;
    let whole = json!({"pick": {"scores": {"math": 0.9, "art": 0.4}}});
    for piece in [1, 5, 64] {
        let mut shown = Vec::new();
        let out = block_on(
            Ask::new(
                &Recorded::new(&[answer], piece),
                &ChatRequest::user("Pick?"),
            )
            .config(&stopping())
            .stream(|event| {
                if let StreamEvent::Partial { value, .. } = event {
                    shown.push(value.clone());
                }
            })
            .value(&schema),
        )
        .unwrap_or_else(|e| panic!("{piece}: {e}"));
        assert_eq!(out.value, whole, "{piece}");
        assert_eq!(out.provenance, Provenance::Clean);
        assert_eq!(shown.last(), Some(&whole), "{piece}");
        assert!(
            shown.iter().all(|v| !v["pick"]["scores"].is_array()),
            "{piece}: {shown:?}"
        );
        for pair in shown.windows(2) {
            assert!(grows(&pair[0], &pair[1]), "{} then {}", pair[0], pair[1]);
        }
    }
}

/// A map written as a plain object is not what the enforced schema allows: the plain run reads
/// it, as `Recovered` with a warning naming the place, never as `Clean`.
#[test]
fn a_map_written_as_an_object_is_recovered_with_a_warning_not_clean() {
    let answer = r#"{"name": "Ada", "scores": {"math": 0.9}}"#;
    let plain = block_on(run_structured::<Scores, _>(
        &Recorded::new(&[answer], 64),
        &ChatRequest::user("Scores?"),
        &RunConfig::default(),
    ))
    .unwrap();
    assert_eq!(
        plain.provenance,
        Provenance::Recovered,
        "{:?}",
        plain.warnings
    );
    assert!(
        plain
            .warnings
            .iter()
            .any(|w| w.to_string().contains("/scores")),
        "{:?}",
        plain.warnings
    );
}

/// A stream stopped on a broken rule: that rule is one the final reading refuses too, and the
/// stopped attempt's tokens are recorded as far as the provider said them (the usage event
/// never came: none is invented, and the request is still counted).
#[test]
fn a_stopped_stream_is_refused_by_the_final_reading_too() {
    let bad = r#"{"name": 7, "scores": [{"key": "math", "value": 0.9}]}"#;
    let mut early = Vec::new();
    let out = block_on(
        Ask::new(
            &Recorded::new(&[bad, AS_SENT], 5),
            &ChatRequest::user("Scores?"),
        )
        .config(&stopping())
        .stream(|event| {
            if let StreamEvent::Violations(v) = event {
                early.extend(v.iter().map(|v| v.path.to_string()));
            }
        })
        .typed::<Scores>(),
    )
    .unwrap();
    assert_eq!(early, ["/name"]);
    assert_eq!(out.ledger.len(), 2);
    let plain = block_on(run_structured::<Scores, _>(
        &Recorded::new(&[bad], 64),
        &ChatRequest::user("Scores?"),
        &{
            let mut config = RunConfig::default();
            config.outputs.max_retries = 0;
            config
        },
    ));
    assert!(
        matches!(
            plain,
            Err(RunError {
                kind: RunErrorKind::RetriesExhausted { .. },
                ..
            })
        ),
        "{plain:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any map, written as the entries sent, in any chunking: the stream shows only values that
    /// grow toward the final one, in the schema's shape, reports no violation, and ends as the
    /// plain run does; with a broken field, the stream stops on it and the plain run refuses it
    /// too.
    #[test]
    fn streamed_and_plain_runs_agree_on_reshaped_answers(
        scores in proptest::collection::btree_map("[a-z ]{0,6}", 0.0f64..1.0, 0..6),
        name in "[A-Za-z ]{0,12}",
        piece in 1usize..40,
        broken in any::<bool>(),
    ) {
        let entries: Vec<Value> = scores
            .iter()
            .map(|(k, v)| json!({"key": k, "value": v}))
            .collect();
        let name_json = if broken { json!(7) } else { json!(name) };
        let answer = json!({"name": name_json, "scores": entries}).to_string();
        let mut shown: Vec<Value> = Vec::new();
        let mut early = Vec::new();
        let streamed = block_on(Ask::new(&Recorded::new(&[answer.as_str()], piece), &ChatRequest::user("Scores?")).config(&{
                let mut config = stopping();
                config.outputs.max_retries = 0;
                config
            }).stream(|event| match event {
                StreamEvent::Partial { value, .. } => shown.push(value.clone()),
                StreamEvent::Violations(v) => early.extend(v.iter().map(|v| v.path.to_string())),
                _ => {}
            }).typed::<Scores>());
        let plain = block_on(run_structured::<Scores, _>(
            &Recorded::new(&[answer.as_str()], piece),
            &ChatRequest::user("Scores?"),
            &{
                let mut config = RunConfig::default();
                config.outputs.max_retries = 0;
                config
            },
        ));
        if broken {
            prop_assert_eq!(early, vec!["/name".to_string()]);
            prop_assert!(streamed.is_err());
            prop_assert!(plain.is_err());
        } else {
            prop_assert!(early.is_empty(), "{:?}", early);
            let (streamed, plain) = (streamed.unwrap(), plain.unwrap());
            prop_assert_eq!(streamed.provenance, Provenance::Clean);
            prop_assert_eq!(&streamed.value, &plain.value);
            let whole = json!({"name": name, "scores": scores});
            prop_assert_eq!(shown.last(), Some(&whole));
            for pair in shown.windows(2) {
                prop_assert!(grows(&pair[0], &pair[1]), "{} then {}", pair[0], pair[1]);
            }
        }
    }
}

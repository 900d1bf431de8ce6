//! A streaming run whose schema was sent in another shape (OpenAI strict: a map sent as a list
//! of `{key, value}` entries), its answer in 16-character content deltas: the value so far is
//! read back into the schema's shape change by change, so the run costs what the answer costs,
//! beside the same run with no map (nothing to read back).
//!
//! `cargo bench -p structured-runtime --bench stream_reshaped`.

use std::collections::BTreeMap;
use std::future::Future;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde::Deserialize;
use serde_json::json;
use structured_runtime::provider::capabilities::ProviderKind;
use structured_runtime::run::{Ask, TransportError};
use structured_runtime::{ChatRequest, Provider, RunConfig, StructuredOutput};

/// Scores by topic: a map, sent to OpenAI strict as entries.
#[derive(Debug, Deserialize, StructuredOutput)]
#[allow(dead_code)]
struct Scores {
    /// Who.
    name: String,
    /// A note per topic.
    notes: BTreeMap<String, String>,
}

/// The same content without a map.
#[derive(Debug, Deserialize, StructuredOutput)]
#[allow(dead_code)]
struct Listed {
    /// Who.
    name: String,
    /// Topic notes.
    notes: Vec<Note>,
}

#[derive(Debug, Deserialize, StructuredOutput)]
#[allow(dead_code)]
struct Note {
    /// Topic.
    key: String,
    /// Note.
    value: String,
}

/// Streams one recorded OpenAI Chat body in 64-byte pieces.
struct Recorded(String);

impl Provider for Recorded {
    fn kind(&self) -> ProviderKind {
        ProviderKind::OpenAiChat
    }
    fn model(&self) -> &str {
        "gpt-4o"
    }
    async fn send(&self, _: &str) -> Result<String, TransportError> {
        Err(TransportError::Timeout)
    }
    fn streams(&self) -> bool {
        true
    }
    async fn send_stream<'a>(
        &'a self,
        _: &'a str,
        on_bytes: &'a mut (dyn FnMut(&[u8]) -> bool + Send),
    ) -> Result<String, TransportError> {
        for piece in self.0.as_bytes().chunks(64) {
            if !on_bytes(piece) {
                break;
            }
        }
        Ok(self.0.clone())
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

/// An answer of about `size` bytes: entries of 200-character notes, as SSE in 16-character
/// content deltas.
fn body(size: usize) -> (String, usize) {
    let entries: Vec<_> = (0..size / 230)
        .map(|i| json!({"key": format!("topic {i}"), "value": "n".repeat(200)}))
        .collect();
    let answer = json!({"name": "Ada", "notes": entries}).to_string();
    let chars: Vec<char> = answer.chars().collect();
    let mut out = String::new();
    for piece in chars.chunks(16) {
        let text: String = piece.iter().collect();
        let event = json!({"choices": [{"index": 0, "delta": {"content": text}}]});
        out.push_str(&format!("data: {event}\n\n"));
    }
    out.push_str("data: {\"choices\": [{\"index\": 0, \"delta\": {}, \"finish_reason\": \"stop\"}]}\n\ndata: [DONE]\n\n");
    (out, answer.len())
}

/// One streaming run of `T`, every event looked at.
fn stream<T: StructuredOutput>(
    provider: &Recorded,
    request: &ChatRequest,
    config: &RunConfig,
) -> T {
    block_on(
        Ask::new(provider, request)
            .config(config)
            .stream(|e| {
                black_box(e);
            })
            .typed::<T>(),
    )
    .unwrap()
    .value
}

fn stream_reshaped(c: &mut Criterion) {
    let (sse, answer) = body(200_000);
    let provider = Recorded(sse);
    let mut group = c.benchmark_group("stream_reshaped_200k");
    group.throughput(Throughput::Bytes(answer as u64));
    group.sample_size(10);
    let request = ChatRequest::user("Notes?");
    let config = RunConfig::default();
    group.bench_function("a map sent as entries, read back", |b| {
        b.iter(|| stream::<Scores>(&provider, &request, &config))
    });
    group.bench_function("the same content as a list (nothing to read back)", |b| {
        b.iter(|| stream::<Listed>(&provider, &request, &config))
    });
    group.finish();
}

criterion_group!(benches, stream_reshaped);
criterion_main!(benches);

//! Reading an answer while it arrives: a 10 KB answer fed to a `StreamReader` one byte and 64
//! bytes at a time, beside one `parse_response` of the whole text and beside re-parsing every
//! 16th prefix (what a reader without state does on each chunk, over 16).
//!
//! `cargo bench -p structured-runtime --bench stream`. Instruction counts, steadier on a busy
//! machine: `pipeline_cost whole_10k | stream_10k | stream_10k_reader | prefixes_10k` (see
//! `examples/pipeline_cost.rs`).

mod heartbeat;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use heartbeat::{long_answer, HeartbeatDecision};
use std::hint::black_box;
use structured_runtime::{
    parse_response, StreamReader, StreamView, StructuredOutput, StructuredOutputMode,
};

/// Feeds `text` in `chunk`-byte pieces, keeping the value so far after each (its changes
/// applied to a `StreamView`, as a consumer keeps it).
fn feed(text: &str, chunk: usize) -> serde_json::Value {
    let mut reader = StreamReader::new(HeartbeatDecision::schema());
    let mut shown = StreamView::new();
    for bytes in text.as_bytes().chunks(chunk) {
        for change in reader.feed(black_box(bytes)).changes {
            shown.apply(change);
        }
    }
    shown.into_value()
}

fn stream_10k(c: &mut Criterion) {
    let text = long_answer(10_000);
    let mut group = c.benchmark_group("stream_10k");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("parse_response on the whole text", |b| {
        b.iter(|| {
            parse_response::<HeartbeatDecision>(
                black_box(&text),
                StructuredOutputMode::SchemaEnforced,
            )
        })
    });
    group.bench_function("StreamReader, 1-byte chunks", |b| b.iter(|| feed(&text, 1)));
    group.bench_function("StreamReader, 64-byte chunks", |b| {
        b.iter(|| feed(&text, 64))
    });
    group.sample_size(10);
    group.bench_function("parse_response on every 16th prefix", |b| {
        b.iter(|| {
            (1..=text.len())
                .step_by(16)
                .filter_map(|end| text.get(..end))
                .filter(|prefix| {
                    parse_response::<HeartbeatDecision>(
                        black_box(prefix),
                        StructuredOutputMode::PromptGuided,
                    )
                    .is_ok()
                })
                .count()
        })
    });
    group.finish();
}

criterion_group!(benches, stream_10k);
criterion_main!(benches);

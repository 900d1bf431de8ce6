//! `HeartbeatDecision::from_text` on prose of growing size: time per byte should stay flat
//! (linear), since the text is split into words once and each reader makes one pass.
//!
//! Run: `cargo bench -p structured-runtime --bench from_text`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use structured_runtime::StructuredOutput;

#[path = "heartbeat.rs"]
mod heartbeat;
use heartbeat::{prose, HeartbeatDecision};

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("from_text");
    for (label, bytes) in [("2KB", 2_000), ("64KB", 64_000), ("1MB", 1_000_000)] {
        let text = prose(bytes);
        // Sanity: the keywords at the end are found, the negated ones are not.
        let read = HeartbeatDecision::from_text(&text).expect("reads");
        assert_eq!(read.report.read().count(), 4, "{label}");
        group.throughput(Throughput::Bytes(text.len() as u64));
        if bytes >= 1_000_000 {
            group.sample_size(20);
        }
        group.bench_with_input(BenchmarkId::from_parameter(label), &text, |b, text| {
            b.iter(|| HeartbeatDecision::from_text(black_box(text)).expect("reads"))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

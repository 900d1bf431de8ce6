//! The response pipeline: a chatty answer against `from_json` on the bare JSON, linear scaling
//! on large chatty text, and the repairer side by side with `jsonrepair-rs`.
//!
//! `cargo bench -p structured-runtime --bench pipeline`

mod heartbeat;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use heartbeat::{answer, chatty, corpus_inputs, HeartbeatDecision, ANSWER};
use std::hint::black_box;
use structured_runtime::read::repair::repair_text;
use structured_runtime::{parse_response, StructuredOutput, StructuredOutputMode};

fn chatty_answer(c: &mut Criterion) {
    let mut group = c.benchmark_group("chatty_4k");
    group.bench_function("from_json on the bare JSON", |b| {
        b.iter(|| HeartbeatDecision::from_json(black_box(ANSWER)))
    });
    // The target case (a model's 4 KB answer), then the same size with ~120 braces in the prose.
    for (name, text) in [
        ("parse_response on a 4 KB fenced answer", answer(4096)),
        (
            "parse_response on 4 KB with braces in the prose",
            chatty(4096),
        ),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                parse_response::<HeartbeatDecision>(
                    black_box(&text),
                    StructuredOutputMode::PromptGuided,
                )
            })
        });
    }
    group.finish();
}

fn linear(c: &mut Criterion) {
    let mut group = c.benchmark_group("chatty_scaling");
    group.sample_size(10);
    for size in [10_000, 100_000, 1_000_000, 10_000_000] {
        let text = chatty(size);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(
            BenchmarkId::new("parse_response", size),
            &text,
            |b, text| {
                b.iter(|| {
                    parse_response::<HeartbeatDecision>(
                        black_box(text),
                        StructuredOutputMode::PromptGuided,
                    )
                })
            },
        );
    }
    group.finish();
    // Shapes that once made repair quadratic: a stray word before a quoted string, repeated.
    let mut group = c.benchmark_group("stray_word_scaling");
    group.sample_size(10);
    for size in [10_000, 100_000, 1_000_000] {
        for (name, unit) in [
            ("word_quote", "{a \"x\" junk }, "),
            ("label", "{label \"High\" risk}, "),
        ] {
            let text = format!("[{}]", unit.repeat(size / unit.len()));
            group.throughput(Throughput::Bytes(text.len() as u64));
            group.bench_with_input(BenchmarkId::new(name, size), &text, |b, text| {
                b.iter(|| repair_text(black_box(text)).is_ok())
            });
        }
    }
    group.finish();
}

fn versus_jsonrepair_rs(c: &mut Criterion) {
    let inputs = corpus_inputs();
    let bytes: usize = inputs.iter().map(String::len).sum();
    let mut group = c.benchmark_group("repair_corpus");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("structured repair_text", |b| {
        b.iter(|| {
            inputs
                .iter()
                .map(|i| repair_text(black_box(i)).is_ok() as usize)
                .sum::<usize>()
        })
    });
    group.bench_function("jsonrepair-rs", |b| {
        b.iter(|| {
            inputs
                .iter()
                .map(|i| jsonrepair_rs::jsonrepair(black_box(i)).is_ok() as usize)
                .sum::<usize>()
        })
    });
    group.finish();

    let text = chatty(1_000_000);
    let mut group = c.benchmark_group("repair_chatty_1mb");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("structured repair_text", |b| {
        b.iter(|| repair_text(black_box(&text)))
    });
    group.bench_function("jsonrepair-rs", |b| {
        b.iter(|| jsonrepair_rs::jsonrepair(black_box(&text)))
    });
    group.finish();
}

criterion_group!(benches, chatty_answer, linear, versus_jsonrepair_rs);
criterion_main!(benches);

//! `HeartbeatDecision::from_json` beside `serde_json::from_str` alone (the physical limit: no
//! strictness, no validation) and beside what users do today: parse to `serde_json::Value`,
//! validate with `jsonschema` (compiled once), then `from_value`; `DaimonAppraisal::from_json`
//! beside `serde_json::from_str` and serde doing the same checks by hand.
//!
//! Run: `cargo bench -p structured-runtime --bench from_json`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use structured_runtime::StructuredOutput;

#[path = "daimon.rs"]
mod daimon;
#[path = "heartbeat.rs"]
mod heartbeat;
use daimon::{DaimonAppraisal, DaimonHandChecked, APPRAISAL};
use heartbeat::{HeartbeatDecision, ANSWER};

fn bench(c: &mut Criterion) {
    let schema = HeartbeatDecision::schema().schema().clone();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    // Sanity: every path accepts the same answer.
    assert!(HeartbeatDecision::from_json(ANSWER).is_ok());
    assert!(validator.is_valid(&serde_json::from_str(ANSWER).expect("json")));

    let mut group = c.benchmark_group("heartbeat_decision");
    group.throughput(Throughput::Bytes(ANSWER.len() as u64));
    group.bench_function("serde_json::from_str (limit)", |b| {
        b.iter(|| serde_json::from_str::<HeartbeatDecision>(black_box(ANSWER)).expect("valid"))
    });
    group.bench_function("from_json (strict + Validate)", |b| {
        b.iter(|| HeartbeatDecision::from_json(black_box(ANSWER)).expect("valid"))
    });
    group.bench_function("Value + jsonschema + from_value", |b| {
        b.iter(|| {
            let value: serde_json::Value = serde_json::from_str(black_box(ANSWER)).expect("json");
            assert!(validator.is_valid(&value));
            serde_json::from_value::<HeartbeatDecision>(value).expect("valid")
        })
    });
    group.finish();

    assert!(DaimonAppraisal::from_json(APPRAISAL).is_ok());
    let mut group = c.benchmark_group("daimon_appraisal");
    group.throughput(Throughput::Bytes(APPRAISAL.len() as u64));
    group.bench_function("serde_json::from_str (limit)", |b| {
        b.iter(|| serde_json::from_str::<DaimonAppraisal>(black_box(APPRAISAL)).expect("valid"))
    });
    group.bench_function("serde, the same checks by hand", |b| {
        b.iter(|| {
            let read: DaimonHandChecked =
                serde_json::from_str(black_box(APPRAISAL)).expect("valid");
            assert!(read.valid());
            read
        })
    });
    group.bench_function("from_json (strict + Validate)", |b| {
        b.iter(|| DaimonAppraisal::from_json(black_box(APPRAISAL)).expect("valid"))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

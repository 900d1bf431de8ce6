//! Batch jobs through each provider's batch API (`run_on_batch_api`: OpenAI's Batch API,
//! Anthropic's Message Batches, Gemini's batch mode, inline and by file), against a fake built
//! from the documented bodies (`tests/data/batch/`): every item accounted for through an expired
//! batch, a cancelled one, a 429 on create, requests the endpoint refuses and answers that need
//! a re-ask (sent in a follow-up batch); a job killed at each of its first calls resumes with
//! every item exactly once and no request given in two batches.

mod common;

use std::future::Future;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use common::batch_fake::{block_on, items, result_lines, spec, FakeBatches, Script};
use serde_json::{json, Value};
use structured_runtime::batch::{
    run_on_batch_api, BatchError, BatchOptions, JobSpec, Status, Store,
};
use structured_runtime::provider::capabilities::ProviderKind;
use structured_runtime::provider::wire::Prices;
use structured_runtime::RunConfig;

/// Each batch API, and again with every batch made of a file where the API takes one
/// (Gemini's; Anthropic's take none, and are sent their requests inline still).
fn apis() -> [(ProviderKind, BatchOptions); 5] {
    let files = BatchOptions {
        max_inline_bytes: 0,
        ..options()
    };
    [
        (ProviderKind::OpenAiChat, options()),
        (ProviderKind::Anthropic, options()),
        (ProviderKind::Gemini, options()),
        (ProviderKind::Gemini, files.clone()),
        (ProviderKind::Anthropic, files),
    ]
}

/// Most answers fit; an item numbered 7 mod 10 fits only once re-asked, 8 mod 10 never.
fn model(n: usize, attempt: usize) -> String {
    match n % 10 {
        7 if attempt == 0 => r#"{"total": "many"}"#.into(),
        8 => r#"{"total": -1}"#.into(),
        _ => format!(r#"{{"total": {n}}}"#),
    }
}

fn options() -> BatchOptions {
    BatchOptions {
        in_flight: 1000,
        max_requests: 40,
        poll_every: Duration::ZERO,
        ..BatchOptions::default()
    }
}

fn config() -> RunConfig {
    RunConfig {
        backoff: Duration::ZERO,
        ..RunConfig::default()
    }
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "structured-batch-api-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Each line's item number, checked against what the fake's model answers.
fn check_results(lines: &[Value], items: usize) {
    let mut ids: Vec<&str> = lines.iter().map(|l| l["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), items, "one line per item");
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), items, "each item exactly once");
    for line in lines {
        let n: usize = line["id"].as_str().unwrap()[4..].parse().unwrap();
        if n % 100 == 99 {
            // Refused by the endpoint with a 400: not sent again.
            assert_eq!(line["error"]["kind"], "transport", "{line}");
            assert!(
                line["error"]["message"].as_str().unwrap().contains("400"),
                "{line}"
            );
        } else if n % 10 == 8 {
            assert_eq!(line["error"]["kind"], "retries_exhausted", "{line}");
        } else {
            assert_eq!(line["value"], json!({"total": n}), "{line}");
        }
    }
}

#[test]
fn every_item_is_accounted_for_through_each_batch_api() {
    for (n, (kind, options)) in apis().into_iter().enumerate() {
        every_item_is_accounted_for(kind, &options, &format!("all-{n}"));
    }
}

fn every_item_is_accounted_for(kind: ProviderKind, options: &BatchOptions, name: &str) {
    let dir = scratch(name);
    let total = 200;
    // Priced: each item at batch prices (half), and the job's total.
    let spec = JobSpec {
        prices: Some(Prices {
            input: 1.0,
            output: 4.0,
            cached_input: None,
            batch: None,
        }),
        ..spec()
    };
    let mut store = Store::create(dir.join("job.db"), &spec, items(total)).unwrap();
    let fake = FakeBatches::of(
        kind,
        Script {
            expire: vec![1],
            cancel: vec![3],
            rate_limit_first_create: true,
            ..Script::default()
        },
        model,
    );
    let out = dir.join("out.jsonl");
    let status = block_on(run_on_batch_api(
        &mut store,
        &fake,
        &config(),
        options,
        Some(&out),
        |_| {},
    ))
    .unwrap();
    assert_eq!(
        (status.total, status.finished(), status.written),
        (200, 200, 200)
    );
    check_results(&result_lines(&out), total);
    // Items 7 and 8 (mod 10) were re-asked: they count so, as does any sent again.
    assert!(status.reasked >= 40, "{status:?}");
    let mut sum = 0.0;
    for line in result_lines(&out) {
        let usage = &line["usage"];
        let full = usage["input_tokens"].as_f64().unwrap() * 1.0 / 1e6
            + usage["output_tokens"].as_f64().unwrap() * 4.0 / 1e6;
        let cost = line["cost"].as_f64().unwrap();
        assert!((cost - full / 2.0).abs() < 1e-12, "{line}");
        sum += cost;
    }
    assert!(sum > 0.0 && (status.cost.unwrap() - sum).abs() < 1e-9);
    // Cut into batches of 40 at most; the expired and cancelled requests and the re-asks went
    // out in later batches, and no request was given twice.
    assert!(fake.batches() > 200 / 40, "{} batches", fake.batches());
    assert_eq!(fake.sent_twice(), Vec::<String>::new());
    // The re-asked items carry the live run's correction: two requests each.
    let seven = result_lines(&out)
        .into_iter()
        .find(|l| l["id"] == "inv-7")
        .unwrap();
    assert_eq!(seven["attempts"], 2, "{seven}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_job_killed_at_any_call_resumes_with_no_request_given_twice() {
    // All items held at once; then fewer than the job, so a resumed job's first round meets
    // requests answered from the store and new ones together.
    for (kind, options) in apis() {
        for in_flight in [1000, 30, 7] {
            killed_and_resumed(kind, &options, in_flight);
        }
    }
}

#[test]
fn a_job_killed_at_each_of_its_calls_resumes_to_its_end() {
    // One job per kill point, each resumed once: whatever the store held at the kill, the
    // resumed job ends with every item once and no request in two batches.
    for (k, (kind, options)) in apis().into_iter().enumerate() {
        for in_flight in [1000, 7] {
            killed_at_each_call(kind, &options, in_flight, k);
        }
    }
}

fn killed_at_each_call(kind: ProviderKind, options: &BatchOptions, in_flight: usize, k: usize) {
    {
        for kill_at in 1..=40 {
            let dir = scratch(&format!("kill-at-{k}-{in_flight}-{kill_at}"));
            let total = 30;
            Store::create(dir.join("job.db"), &spec(), items(total)).unwrap();
            let fake = FakeBatches::of(
                kind,
                Script {
                    stop_at_call: Some(kill_at),
                    ..Script::default()
                },
                model,
            );
            let out = dir.join("out.jsonl");
            let options = BatchOptions {
                in_flight,
                ..options.clone()
            };
            let config = config();
            {
                // The process killed at call `kill_at`.
                let mut store = Store::open(dir.join("job.db")).unwrap();
                bounded(&mut store, &fake, &config, &options, &out, 200);
            }
            fake.rescript(Script::default());
            let mut store = Store::open(dir.join("job.db")).unwrap();
            let status = bounded(&mut store, &fake, &config, &options, &out, 1_000_000)
                .unwrap_or_else(|| panic!("killed at call {kill_at}, the resumed job never ends"))
                .unwrap();
            assert_eq!(
                status.finished(),
                total as u64,
                "{kind:?} killed at call {kill_at}"
            );
            check_results(&result_lines(&out), total);
            assert_eq!(
                fake.sent_twice(),
                Vec::<String>::new(),
                "{kind:?} killed at call {kill_at}"
            );
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

#[test]
fn a_batch_taken_for_a_lost_one_by_mistake_is_told_apart_by_its_results() {
    // Anthropic's batches keep no tag: a job killed while making its first batch (the create
    // never reached the provider) finds a batch of someone else's holding as many requests and
    // takes it for its own. Its results answer none of the job's requests, so they go out again.
    let dir = scratch("stranger");
    let total = 30;
    Store::create(dir.join("job.db"), &spec(), items(total)).unwrap();
    let fake = FakeBatches::of(
        ProviderKind::Anthropic,
        Script {
            others: vec![(total, true), (total + 1, false)],
            stop_at_call: Some(1),
            create_lost: true,
            ..Script::default()
        },
        model,
    );
    let out = dir.join("out.jsonl");
    let config = config();
    {
        let mut store = Store::open(dir.join("job.db")).unwrap();
        assert!(bounded(&mut store, &fake, &config, &options(), &out, 200).is_none());
    }
    assert_eq!(fake.batches(), 2, "the create never reached the provider");
    fake.rescript(Script::default());
    let mut store = Store::open(dir.join("job.db")).unwrap();
    let status = bounded(&mut store, &fake, &config, &options(), &out, 1_000_000)
        .expect("the resumed job ends")
        .unwrap();
    assert_eq!(status.finished(), total as u64);
    check_results(&result_lines(&out), total);
    assert_eq!(fake.sent_twice(), Vec::<String>::new());
    // The job's requests went out in its own batches after the stranger's was read.
    assert!(fake.batches() > 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Polls a run `times` times at most: its output, or `None` when it has not ended (a job
/// killed there, or one that never ends).
fn bounded(
    store: &mut Store,
    fake: &FakeBatches,
    config: &RunConfig,
    options: &BatchOptions,
    out: &std::path::Path,
    times: usize,
) -> Option<Result<Status, BatchError>> {
    let run = run_on_batch_api(store, fake, config, options, Some(out), |_| {});
    let mut run = std::pin::pin!(run);
    let mut cx = Context::from_waker(Waker::noop());
    (0..times).find_map(|_| match run.as_mut().poll(&mut cx) {
        Poll::Ready(done) => Some(done),
        Poll::Pending => None,
    })
}

fn killed_and_resumed(kind: ProviderKind, options: &BatchOptions, in_flight: usize) {
    let dir = scratch(&format!(
        "kill-{kind:?}-{}-{in_flight}",
        options.max_inline_bytes
    ));
    let total = 90;
    Store::create(dir.join("job.db"), &spec(), items(total)).unwrap();
    let fake = FakeBatches::of(kind, Script::default(), model);
    let out = dir.join("out.jsonl");
    let options = BatchOptions {
        in_flight,
        ..options.clone()
    };
    let config = config();
    let poll = |store: &mut Store, fake: &FakeBatches, times: usize| {
        bounded(store, fake, &config, &options, &out, times)
    };
    // Killed at the 1st, 2nd, ... call of each run (an upload, a create after the batch was
    // made, a look, a download), 40 times over, then run to the end.
    for kill_at in 1..=40 {
        fake.rescript(Script {
            expire: vec![2],
            stop_at_call: Some(kill_at),
            ..Script::default()
        });
        let mut store = Store::open(dir.join("job.db")).unwrap();
        poll(&mut store, &fake, 200);
    }
    fake.rescript(Script {
        expire: vec![2],
        ..Script::default()
    });
    let mut store = Store::open(dir.join("job.db")).unwrap();
    // A resumed job that waits for a request it never sent would never end: a failure here.
    let status = poll(&mut store, &fake, 1_000_000)
        .expect("the resumed job ends")
        .unwrap();
    assert_eq!(status.finished(), total as u64);
    check_results(&result_lines(&out), total);
    assert_eq!(
        fake.sent_twice(),
        Vec::<String>::new(),
        "{kind:?}: no request in two batches"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// 100,000 items through the fake batch API: every item accounted for, memory bounded by the
/// runs held at once (not the job). Run with
/// `cargo test --release -p structured-tests --test batch_api -- --ignored --nocapture`
/// under `/usr/bin/time -v` for the figures the README gives.
#[test]
#[ignore]
fn a_hundred_thousand_items_through_the_batch_api() {
    let dir = scratch("100k");
    let total = 100_000;
    let started = std::time::Instant::now();
    let mut store = Store::create(dir.join("job.db"), &spec(), items(total)).unwrap();
    let fake = FakeBatches::new(
        Script {
            forget: true,
            ..Script::default()
        },
        |n, _| format!(r#"{{"total": {n}}}"#),
    );
    let options = BatchOptions {
        poll_every: Duration::ZERO,
        in_flight: std::env::var("IN_FLIGHT")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(10_000),
        ..BatchOptions::default()
    };
    let out = dir.join("out.jsonl");
    let status = block_on(run_on_batch_api(
        &mut store,
        &fake,
        &config(),
        &options,
        Some(&out),
        |_| {},
    ))
    .unwrap();
    // The fake's endpoint refuses one item in a hundred.
    assert_eq!(
        (status.done, status.failed, status.written),
        (99_000, 1_000, total as u64)
    );
    // Counted, not parsed: the check must not hold what the job does not.
    let written = std::fs::read_to_string(&out).unwrap().lines().count();
    assert_eq!(written, total);
    eprintln!(
        "100,000 items: {:.1} s, {} batches, store {} MB, output {} MB",
        started.elapsed().as_secs_f64(),
        fake.batches(),
        store.size().unwrap() / 1_000_000,
        std::fs::metadata(&out).unwrap().len() / 1_000_000
    );
    let _ = std::fs::remove_dir_all(&dir);
}

//! A batch job through `HttpProvider`'s own batch API calls (OpenAI's multipart upload and
//! batches, Anthropic's Message Batches and results URL, Gemini's batch mode inline and by an
//! uploaded file) against the batch fake served on loopback as each API's endpoints: the
//! requests are the documented ones, and every item is accounted for through an expired batch,
//! a cancelled one, a request the endpoint refuses (an error line among the results) and a 429
//! on create. A results URL at another origin is not fetched with the key.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::batch_fake::{FakeBatches, Script};
use common::batch_http::{serve, KEY};
use serde_json::{json, Value};
use structured_runtime::batch::{
    run_on_batch_api, BatchError, BatchOptions, JobItem, JobSpec, Status, Store,
};
use structured_runtime::http::HttpProvider;
use structured_runtime::provider::capabilities::ProviderKind;
use structured_runtime::{ResponseSchema, RunConfig};

fn spec() -> JobSpec {
    JobSpec {
        schema: ResponseSchema::new(
            "invoice",
            json!({"type": "object", "properties": {"total": {"type": "integer"}},
                   "required": ["total"], "additionalProperties": false}),
        )
        .unwrap(),
        prompt: "Read the total of {input}.".into(),
        max_tokens: Some(32),
        prices: None,
    }
}

fn model(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Anthropic => "claude-sonnet-4-5",
        ProviderKind::Gemini => "gemini-2.5-flash",
        _ => "gpt-4o-mini",
    }
}

/// Runs 120 items through `kind`'s batch API on loopback; the job's end and its result lines.
fn run(
    kind: ProviderKind,
    options: BatchOptions,
    rewrite_results: bool,
    name: &str,
) -> (Result<Status, BatchError>, Vec<Value>, Arc<FakeBatches>) {
    let fake = Arc::new(FakeBatches::of(
        kind,
        Script {
            expire: vec![0],
            cancel: vec![2],
            rate_limit_first_create: true,
            ..Script::default()
        },
        |n, _| format!(r#"{{"total": {n}}}"#),
    ));
    let url = serve(fake.clone(), kind, rewrite_results);
    let dir = std::env::temp_dir().join(format!(
        "structured-batch-http-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let items = (0..120).map(|i| {
        Ok(JobItem {
            id: Some(format!("inv-{i}")),
            input: Some(format!("item-{i}")),
            ..JobItem::default()
        })
    });
    let mut store = Store::create(dir.join("job.db"), &spec(), items).unwrap();
    let provider = HttpProvider::new(kind, &url, Some(KEY.into()), model(kind)).unwrap();
    let config = RunConfig {
        backoff: Duration::ZERO,
        ..RunConfig::default()
    };
    let out = dir.join("out.jsonl");
    let status = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(run_on_batch_api(
            &mut store,
            &provider,
            &config,
            &options,
            Some(&out),
            |_| {},
        ));
    let lines = std::fs::read_to_string(&out)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    (status, lines, fake)
}

#[test]
fn a_job_runs_through_each_batch_api_over_http() {
    let options = BatchOptions {
        max_requests: 25,
        poll_every: Duration::from_millis(1),
        ..BatchOptions::default()
    };
    let by_file = BatchOptions {
        max_inline_bytes: 0,
        ..options.clone()
    };
    for (n, (kind, options)) in [
        (ProviderKind::OpenAiChat, options.clone()),
        (ProviderKind::Anthropic, options.clone()),
        (ProviderKind::Gemini, options),
        (ProviderKind::Gemini, by_file),
    ]
    .into_iter()
    .enumerate()
    {
        let (status, lines, fake) = run(kind, options, true, &format!("all-{n}"));
        let status = status.unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        assert_eq!(
            (status.done, status.failed, status.written),
            (119, 1, 120),
            "{kind:?}: item 99 is refused by the endpoint (an error line), not sent again"
        );
        assert_eq!(lines.len(), 120);
        for line in &lines {
            let n: u64 = line["id"].as_str().unwrap()[4..].parse().unwrap();
            if n == 99 {
                assert_eq!(line["error"]["kind"], "transport", "{kind:?}: {line}");
            } else {
                assert_eq!(line["value"]["total"], n, "{kind:?}: {line}");
            }
        }
        // The first batch expired with half its requests not run, the third was cancelled:
        // those went out again.
        assert!(fake.batches() >= 4, "{kind:?}: {} batches", fake.batches());
        assert_eq!(fake.sent_twice(), Vec::<String>::new(), "{kind:?}");
    }
}

#[test]
fn results_at_another_origin_are_not_fetched_with_the_key() {
    let options = BatchOptions {
        poll_every: Duration::from_millis(1),
        ..BatchOptions::default()
    };
    // The fake's batches say their results are at the real API's origin, not this server's.
    let (status, lines, _) = run(ProviderKind::Anthropic, options, false, "origin");
    let error = status.unwrap_err().to_string();
    assert!(error.contains("not at http://127.0.0.1"), "{error}");
    assert!(lines.is_empty());
}

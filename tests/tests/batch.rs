//! Batch jobs over a chat endpoint (`structured_runtime::batch`): every item accounted for
//! (valid, re-asked into a valid value, or failed with its error and ledger), a job stopped with
//! items in flight resumes with nothing lost and no finished item read again, and the output
//! holds each result exactly once even when its writer is cut off.

mod common;

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::task::{Context, Waker};

use common::batch_fake::{block_on, items, result_lines, spec};
use common::scripted::openai_text;
use serde_json::{json, Value};
use structured_runtime::batch::{run_on_chat, BatchError, JobItem, Store};
use structured_runtime::provider::capabilities::ProviderKind;
use structured_runtime::run::TransportError;
use structured_runtime::{Provider, RunConfig};

/// A fresh directory for one test's store and output.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("structured-batch-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Answers as a model does, by the item's number: most valid, some only once re-asked, some
/// never, some in prose; counts what each item was sent. After `hang_after` requests, never
/// answers again (a job stopped with items in flight).
#[derive(Default)]
struct Model {
    sent: Mutex<HashMap<usize, usize>>,
    requests: AtomicUsize,
    hang_after: Option<usize>,
}

impl Model {
    fn sent_to(&self, item: usize) -> usize {
        self.sent.lock().unwrap().get(&item).copied().unwrap_or(0)
    }
}

impl Provider for Model {
    fn kind(&self) -> ProviderKind {
        ProviderKind::OpenAiChat
    }
    fn model(&self) -> &str {
        "local"
    }
    fn send(&self, body: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
        let body: Value = serde_json::from_str(body).unwrap();
        let text = body["messages"][0]["content"].as_str().unwrap_or_default();
        let n: usize = text
            .split("item-")
            .nth(1)
            .and_then(|rest| rest.trim_end_matches('.').parse().ok())
            .unwrap();
        let count = {
            let mut sent = self.sent.lock().unwrap();
            let count = sent.entry(n).or_default();
            *count += 1;
            *count
        };
        let request = self.requests.fetch_add(1, Ordering::SeqCst);
        let hang = self.hang_after.is_some_and(|h| request >= h);
        let answer = match n % 10 {
            7 if count == 1 => openai_text(r#"{"total": "many"}"#),
            8 => openai_text(r#"{"total": -1}"#),
            9 => openai_text(&format!("Sure! The total is {{\"total\": {n}}}.")),
            _ => openai_text(&format!(r#"{{"total": {n}}}"#)),
        };
        async move {
            if hang {
                std::future::pending::<()>().await;
            }
            answer
        }
    }
}

#[test]
fn every_item_is_accounted_for_over_a_chat_endpoint() {
    let dir = scratch("all");
    let mut store = Store::create(dir.join("job.db"), &spec(), items(300)).unwrap();
    let model = Model::default();
    let mut heard = 0;
    let status = block_on(run_on_chat(
        &mut store,
        &model,
        &RunConfig::default(),
        8,
        None,
        |_| heard += 1,
    ))
    .unwrap();
    assert_eq!(heard, 300, "progress after each item");
    assert_eq!((status.total, status.done, status.failed), (300, 270, 30));
    assert_eq!((status.pending, status.running), (0, 0));
    assert_eq!(store.write_results(dir.join("out.jsonl")).unwrap(), 300);
    let lines = result_lines(&dir.join("out.jsonl"));
    let mut ids: Vec<&str> = lines.iter().map(|l| l["id"].as_str().unwrap()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 300, "each item exactly once");
    for line in &lines {
        let n: usize = line["id"].as_str().unwrap()[4..].parse().unwrap();
        match n % 10 {
            8 => {
                assert_eq!(line["error"]["kind"], "retries_exhausted", "{line}");
                assert!(line["ledger"].as_array().unwrap().len() > 1, "{line}");
            }
            7 => {
                // Re-asked with the correction a live run sends, then valid.
                assert_eq!(line["value"], json!({"total": n}), "{line}");
                assert_eq!(line["attempts"], 2, "{line}");
            }
            9 => assert_eq!(line["provenance"], "Extracted", "{line}"),
            _ => assert_eq!(
                (&line["value"], &line["provenance"]),
                (&json!({"total": n}), &json!("Clean")),
                "{line}"
            ),
        }
        assert!(
            line["usage"]["input_tokens"].as_u64().unwrap() >= 100,
            "{line}"
        );
    }
    // Written once: a second writer has nothing to add.
    assert_eq!(store.write_results(dir.join("out.jsonl")).unwrap(), 0);
    assert_eq!(store.status().unwrap().written, 300);
    // (Kept when the test fails, for a look.)
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_stopped_job_resumes_with_nothing_lost_and_no_finished_item_read_again() {
    let dir = scratch("resume");
    let mut store = Store::create(dir.join("job.db"), &spec(), items(120)).unwrap();
    // The first process: its endpoint stops answering after 50 requests, and it is stopped
    // (its future dropped) with items in flight, its output half written.
    let stalled = Model {
        hang_after: Some(50),
        ..Model::default()
    };
    let config = RunConfig::default();
    let finished_first = {
        let run = run_on_chat(&mut store, &stalled, &config, 6, None, |_| {});
        let mut run = std::pin::pin!(run);
        let mut cx = Context::from_waker(Waker::noop());
        for _ in 0..1000 {
            assert!(run.as_mut().poll(&mut cx).is_pending());
        }
        let status = store_status(&dir);
        assert!(status.running > 0, "stopped with items in flight");
        status.finished()
    };
    assert!(finished_first > 0 && finished_first < 120);
    let first_written = store.write_results(dir.join("out.jsonl")).unwrap();
    // A writer cut off after writing, before the store said so: its tail must not stay.
    std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join("out.jsonl"))
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"{\"id\":\"inv-0\",\"partial"))
        .unwrap();
    drop(store);

    // The second process resumes the job from the store alone.
    let mut store = Store::open(dir.join("job.db")).unwrap();
    let model = Model::default();
    let status = block_on(run_on_chat(
        &mut store,
        &model,
        &RunConfig::default(),
        6,
        None,
        |_| {},
    ))
    .unwrap();
    assert_eq!(status.finished(), 120);
    assert!(status.runs > 120, "the items in flight were run again");
    let now = store.write_results(dir.join("out.jsonl")).unwrap();
    assert_eq!(first_written + now, 120);
    let lines = result_lines(&dir.join("out.jsonl"));
    assert_eq!(lines.len(), 120);
    let mut ids: Vec<&str> = lines.iter().map(|l| l["id"].as_str().unwrap()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 120, "each item exactly once");
    // No item finished by the first process was sent again.
    for line in &lines[..first_written as usize] {
        let n: usize = line["id"].as_str().unwrap()[4..].parse().unwrap();
        assert_eq!(model.sent_to(n), 0, "item {n} was finished already");
    }
    // (Kept when the test fails, for a look.)
    let _ = std::fs::remove_dir_all(&dir);
}

/// The job's status as another process reads it, beside the running one.
fn store_status(dir: &std::path::Path) -> structured_runtime::batch::Status {
    Store::open(dir.join("job.db")).unwrap().status().unwrap()
}

#[test]
fn a_job_refuses_what_it_cannot_account_for() {
    let dir = scratch("refuse");
    let twice = [
        Ok(serde_json::from_str::<JobItem>(r#"{"id": "a", "input": "x"}"#).unwrap()),
        Ok(serde_json::from_str::<JobItem>(r#"{"id": "a", "input": "y"}"#).unwrap()),
    ];
    assert_eq!(
        Store::create(dir.join("twice.db"), &spec(), twice).unwrap_err(),
        BatchError::DuplicateId {
            line: 2,
            id: "a".into()
        }
    );
    let empty = [Ok(JobItem::default())];
    assert!(matches!(
        Store::create(dir.join("empty.db"), &spec(), empty).unwrap_err(),
        BatchError::Item { line: 1, .. }
    ));
    Store::create(dir.join("job.db"), &spec(), items(3)).unwrap();
    assert!(matches!(
        Store::create(dir.join("job.db"), &spec(), items(3)).unwrap_err(),
        BatchError::Exists(_)
    ));
    assert!(matches!(
        Store::open(dir.join("none.db")).unwrap_err(),
        BatchError::NoJob(_)
    ));
    // An item without an id takes its line number.
    let unnamed = [Ok(JobItem {
        input: Some("item-1".into()),
        ..JobItem::default()
    })];
    let mut store = Store::create(dir.join("unnamed.db"), &spec(), unnamed).unwrap();
    block_on(run_on_chat(
        &mut store,
        &Model::default(),
        &RunConfig::default(),
        1,
        None,
        |_| {},
    ))
    .unwrap();
    store.write_results(dir.join("unnamed.jsonl")).unwrap();
    assert_eq!(result_lines(&dir.join("unnamed.jsonl"))[0]["id"], "1");
    assert_eq!(store.spec().unwrap(), spec());
    // (Kept when the test fails, for a look.)
    let _ = std::fs::remove_dir_all(&dir);
}

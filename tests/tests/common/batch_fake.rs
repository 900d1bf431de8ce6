//! A fake of OpenAI's Batch API (files and batches), answering with the documented bodies in
//! `tests/data/batch/openai/`: it takes uploaded request files, makes batches of them that run
//! when looked at, and writes output and error files. A script makes it expire a batch (half of
//! its requests not run), cancel one, refuse a create with a 429, or stop answering at its Nth
//! call (a job killed there); it counts every request it was given in a batch, so a request sent
//! twice shows.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;

use serde_json::Value;
use structured_runtime::batch::BatchApi;
use structured_runtime::provider::capabilities::ProviderKind;
use structured_runtime::provider::wire::openai_batch::{read_batch, BatchState};
use structured_runtime::run::TransportError;
use structured_runtime::Provider;

const FILE: &str = include_str!("../../data/batch/openai/file.json");
const BATCH: &str = include_str!("../../data/batch/openai/batch.json");
const OUTPUT_LINE: &str = include_str!("../../data/batch/openai/output_line.json");
const REJECTED_LINE: &str = include_str!("../../data/batch/openai/error_line_rejected.json");
const EXPIRED_LINE: &str = include_str!("../../data/batch/openai/error_line_expired.json");

/// What the fake does besides answering.
#[derive(Default, Clone)]
pub struct Script {
    /// Batches (by the order they were made, from 0) that expire with half their requests run.
    pub expire: Vec<usize>,
    /// Batches that are cancelled before any request runs.
    pub cancel: Vec<usize>,
    /// The first create is refused with a 429.
    pub rate_limit_first_create: bool,
    /// From this call on (counting every call from 1), no call answers: a job killed there.
    /// A create still makes its batch first (killed after the provider made it).
    pub stop_at_call: Option<usize>,
    /// Files are forgotten once read (a request file once its batch is made, a result file
    /// once downloaded), so the fake's memory does not stand in for the job's in a measure.
    pub forget: bool,
}

#[derive(Default)]
struct State {
    files: HashMap<String, String>,
    batches: Vec<Batch>,
    calls: usize,
    creates: usize,
    /// Requests given in a batch, by custom_id.
    submitted: HashMap<String, usize>,
}

struct Batch {
    id: String,
    input: String,
    status: &'static str,
    looks: usize,
    output: Option<String>,
    error: Option<String>,
    metadata: Value,
}

/// The fake.
pub struct FakeBatches {
    state: Mutex<State>,
    script: Script,
    /// What the model answers to the item numbered `n`, asked for the `attempt`th time (from 0).
    answer: fn(usize, usize) -> String,
}

impl FakeBatches {
    pub fn new(script: Script, answer: fn(usize, usize) -> String) -> FakeBatches {
        FakeBatches {
            state: Mutex::default(),
            script,
            answer,
        }
    }

    /// The same fake (its files, batches and counts) with another script: a job resumed
    /// against the provider it was killed on.
    pub fn rescript(&mut self, script: Script) {
        self.script = script;
        self.state.lock().unwrap().calls = 0;
    }

    /// Requests given in more than one batch.
    pub fn sent_twice(&self) -> Vec<String> {
        let state = self.state.lock().unwrap();
        let mut twice: Vec<String> = state
            .submitted
            .iter()
            .filter(|(_, n)| **n > 1)
            .map(|(id, _)| id.clone())
            .collect();
        twice.sort();
        twice
    }

    /// Batches made.
    pub fn batches(&self) -> usize {
        self.state.lock().unwrap().batches.len()
    }

    /// Requests given in batches.
    pub fn requests(&self) -> usize {
        self.state.lock().unwrap().submitted.values().sum()
    }

    /// Counts the call; `false` when the script says this call never answers.
    fn call(&self) -> bool {
        let mut state = self.state.lock().unwrap();
        state.calls += 1;
        self.script.stop_at_call.is_none_or(|at| state.calls < at)
    }

    /// Runs batch `i` as far as a look moves it: validating, in progress, then its end.
    fn advance(&self, state: &mut State, i: usize) {
        let expire = self.script.expire.contains(&i);
        let cancel = self.script.cancel.contains(&i);
        let Some(batch) = state.batches.get_mut(i) else {
            return;
        };
        batch.looks += 1;
        match batch.status {
            "validating" => {
                batch.status = "in_progress";
                return;
            }
            "in_progress" => {}
            _ => return,
        }
        let mut output = Vec::new();
        let mut error = Vec::new();
        for (k, line) in batch.input.lines().enumerate() {
            let line: Value = serde_json::from_str(line).unwrap();
            let custom_id = line["custom_id"].as_str().unwrap();
            if cancel || (expire && k % 2 == 1) {
                let mut out: Value = serde_json::from_str(EXPIRED_LINE).unwrap();
                out["custom_id"] = custom_id.into();
                if cancel {
                    out["error"]["code"] = "batch_cancelled".into();
                }
                error.push(out.to_string());
                continue;
            }
            let body = &line["body"];
            let text = body["messages"][0]["content"].as_str().unwrap_or_default();
            let n: usize = text
                .split("item-")
                .nth(1)
                .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|d| d.parse().ok())
                .unwrap_or(usize::MAX);
            let attempt = body["messages"].as_array().map_or(1, Vec::len) / 2;
            if n % 100 == 99 {
                // The endpoint refuses this request: an error line with its status.
                let mut out: Value = serde_json::from_str(REJECTED_LINE).unwrap();
                out["custom_id"] = custom_id.into();
                error.push(out.to_string());
                continue;
            }
            let mut out: Value = serde_json::from_str(OUTPUT_LINE).unwrap();
            out["custom_id"] = custom_id.into();
            out["response"]["body"]["choices"][0]["message"]["content"] =
                (self.answer)(n, attempt).into();
            output.push(out.to_string());
        }
        batch.status = if cancel {
            "cancelled"
        } else if expire {
            "expired"
        } else {
            "completed"
        };
        let id = batch.id.clone();
        if self.script.forget {
            batch.input = String::new();
        }
        let mut save = |kind: &str, lines: Vec<String>| {
            (!lines.is_empty()).then(|| {
                let file = format!("file-{kind}-{id}");
                state.files.insert(file.clone(), lines.join("\n") + "\n");
                file
            })
        };
        let (o, e) = (save("out", output), save("err", error));
        let batch = &mut state.batches[i];
        batch.output = o;
        batch.error = e;
    }

    fn body(&self, batch: &Batch) -> String {
        let mut body: Value = serde_json::from_str(BATCH).unwrap();
        body["id"] = batch.id.clone().into();
        body["status"] = batch.status.into();
        body["output_file_id"] = batch.output.clone().into();
        body["error_file_id"] = batch.error.clone().into();
        body["metadata"] = batch.metadata.clone();
        body.to_string()
    }
}

/// A call that never answers.
async fn never<T>() -> T {
    std::future::pending().await
}

impl Provider for FakeBatches {
    fn kind(&self) -> ProviderKind {
        ProviderKind::OpenAiChat
    }
    fn model(&self) -> &str {
        "gpt-4o-mini"
    }
    async fn send(&self, _: &str) -> Result<String, TransportError> {
        Err(TransportError::Connection(
            "this fake only takes batches".into(),
        ))
    }
}

impl BatchApi for FakeBatches {
    fn upload(&self, jsonl: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
        let answers = self.call();
        let id = {
            let mut state = self.state.lock().unwrap();
            let id = format!("file-in-{}", state.files.len());
            if answers {
                state.files.insert(id.clone(), jsonl.to_owned());
            }
            id
        };
        let mut body: Value = serde_json::from_str(FILE).unwrap();
        body["id"] = id.into();
        async move {
            if !answers {
                return never().await;
            }
            Ok(
                structured_runtime::provider::wire::openai_batch::read_file_id(&body.to_string())
                    .unwrap(),
            )
        }
    }

    fn create(
        &self,
        file_id: &str,
        _: &str,
        metadata: &[(&str, &str)],
    ) -> impl Future<Output = Result<BatchState, TransportError>> + Send {
        let answers = self.call();
        let mut state = self.state.lock().unwrap();
        state.creates += 1;
        let result = if self.script.rate_limit_first_create && state.creates == 1 {
            Err(TransportError::RateLimited {
                retry_after: Some(std::time::Duration::from_millis(1)),
            })
        } else {
            let input = if self.script.forget {
                state.files.remove(file_id).unwrap_or_default()
            } else {
                state.files.get(file_id).cloned().unwrap_or_default()
            };
            for line in input.lines() {
                let line: Value = serde_json::from_str(line).unwrap();
                *state
                    .submitted
                    .entry(line["custom_id"].as_str().unwrap().to_owned())
                    .or_default() += 1;
            }
            let batch = Batch {
                id: format!("batch_{}", state.batches.len()),
                input,
                status: "validating",
                looks: 0,
                output: None,
                error: None,
                metadata: metadata
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), Value::from(*v)))
                    .collect::<serde_json::Map<_, _>>()
                    .into(),
            };
            let body = self.body(&batch);
            state.batches.push(batch);
            Ok(read_batch(&body).unwrap())
        };
        async move {
            if !answers {
                return never().await;
            }
            result
        }
    }

    fn get(
        &self,
        batch_id: &str,
    ) -> impl Future<Output = Result<BatchState, TransportError>> + Send {
        let answers = self.call();
        let mut state = self.state.lock().unwrap();
        let i = state.batches.iter().position(|b| b.id == batch_id);
        let result = match i {
            Some(i) => {
                self.advance(&mut state, i);
                Ok(read_batch(&self.body(&state.batches[i])).unwrap())
            }
            None => Err(TransportError::Rejected {
                status: 404,
                body: "no such batch".into(),
            }),
        };
        async move {
            if !answers {
                return never().await;
            }
            result
        }
    }

    fn list(
        &self,
        after: Option<&str>,
    ) -> impl Future<Output = Result<(Vec<BatchState>, Option<String>), TransportError>> + Send
    {
        let answers = self.call();
        let state = self.state.lock().unwrap();
        // Newest first, two to a page.
        let newest: Vec<&Batch> = state.batches.iter().rev().collect();
        let start = after
            .and_then(|a| newest.iter().position(|b| b.id == a))
            .map_or(0, |p| p + 1);
        let page: Vec<BatchState> = newest
            .iter()
            .skip(start)
            .take(2)
            .map(|b| read_batch(&self.body(b)).unwrap())
            .collect();
        let more = start + 2 < newest.len();
        let next = more.then(|| page.last().map(|b| b.id.clone())).flatten();
        async move {
            if !answers {
                return never().await;
            }
            Ok((page, next))
        }
    }

    fn download(
        &self,
        file_id: &str,
    ) -> impl Future<Output = Result<String, TransportError>> + Send {
        let answers = self.call();
        let file = {
            let mut state = self.state.lock().unwrap();
            if self.script.forget {
                state.files.remove(file_id)
            } else {
                state.files.get(file_id).cloned()
            }
        };
        async move {
            if !answers {
                return never().await;
            }
            file.ok_or(TransportError::Rejected {
                status: 404,
                body: "no such file".into(),
            })
        }
    }
}

/// Polls `f` to its end (every fake here answers at once, or never: a test that waits on one
/// that never answers drops it first).
pub fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

/// A job's result lines, read back.
pub fn result_lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The job the batch tests run: an invoice's total, a non-negative integer, read from each item.
pub fn spec() -> structured_runtime::batch::JobSpec {
    structured_runtime::batch::JobSpec {
        schema: structured_runtime::ResponseSchema::new(
            "invoice",
            serde_json::json!({"type": "object", "properties": {"total": {"type": "integer", "minimum": 0}},
                   "required": ["total"], "additionalProperties": false}),
        )
        .unwrap(),
        prompt: "Read the total of {input}.".into(),
        max_tokens: Some(32),
        prices: None,
    }
}

/// `n` items, `inv-{i}` asking about `item-{i}`.
pub fn items(
    n: usize,
) -> impl Iterator<
    Item = Result<structured_runtime::batch::JobItem, structured_runtime::batch::BatchError>,
> {
    (0..n).map(|i| {
        Ok(structured_runtime::batch::JobItem {
            id: Some(format!("inv-{i}")),
            input: Some(format!("item-{i}")),
            ..Default::default()
        })
    })
}

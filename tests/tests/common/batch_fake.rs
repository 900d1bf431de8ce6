//! A fake of the three batch APIs (OpenAI's files and batches, Anthropic's Message Batches,
//! Gemini's batch mode), answering with the documented bodies in `tests/data/batch/{openai,
//! anthropic,gemini}/`: it takes request files and the bodies that make batches as each API
//! writes them, makes batches that run when looked at, and writes their results as each API
//! does. A script makes it expire a batch (half of its requests not run), cancel one, refuse a
//! create with a 429, or stop answering at its Nth call (a job killed there); it counts every
//! request it was given in a batch, so a request sent twice shows.
//!
//! Its `*_raw` methods take and give the bodies as the API's HTTP exchanges carry them (a
//! loopback server serves them: `batch_http`); its `BatchApi` implementation speaks through the
//! same bodies, written and read by the runtime's own wire functions.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;

use serde_json::{json, Value};
use structured_runtime::batch::BatchApi;
use structured_runtime::provider::capabilities::ProviderKind;
use structured_runtime::provider::wire::batch::{BatchInput, BatchState, BatchTag};
use structured_runtime::provider::wire::batch_wire::BatchWire;
use structured_runtime::provider::wire::{anthropic_batch, gemini_batch, openai_batch};
use structured_runtime::run::TransportError;
use structured_runtime::Provider;

const OPENAI_FILE: &str = include_str!("../../data/batch/openai/file.json");
const OPENAI_BATCH: &str = include_str!("../../data/batch/openai/batch.json");
const OPENAI_OUTPUT: &str = include_str!("../../data/batch/openai/output_line.json");
const OPENAI_REJECTED: &str = include_str!("../../data/batch/openai/error_line_rejected.json");
const OPENAI_EXPIRED: &str = include_str!("../../data/batch/openai/error_line_expired.json");
const ANTHROPIC_BATCH: &str = include_str!("../../data/batch/anthropic/batch.json");
const ANTHROPIC_SUCCEEDED: &str = include_str!("../../data/batch/anthropic/succeeded_line.json");
const ANTHROPIC_ERRORED: &str = include_str!("../../data/batch/anthropic/errored_line.json");
const ANTHROPIC_EXPIRED: &str = include_str!("../../data/batch/anthropic/expired_line.json");
const ANTHROPIC_CANCELED: &str = include_str!("../../data/batch/anthropic/canceled_line.json");
const GEMINI_OPERATION: &str = include_str!("../../data/batch/gemini/operation.json");
const GEMINI_RESPONSE: &str = include_str!("../../data/batch/gemini/response_line.json");
const GEMINI_ERROR: &str = include_str!("../../data/batch/gemini/error_line.json");
const GEMINI_FILE: &str = include_str!("../../data/batch/gemini/file.json");

/// Where Anthropic's results URLs point (a loopback server rewrites it to its own origin).
pub const ANTHROPIC_ORIGIN: &str = "https://api.anthropic.com";

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
    /// Batches made by someone else before the job's: `(requests, ended)` each.
    pub others: Vec<(usize, bool)>,
    /// A create at the stop call never reached the provider (no batch made).
    pub create_lost: bool,
}

/// A call's answer: now, or never (the job was killed at it).
pub enum Reply<T> {
    Now(Result<T, TransportError>),
    Never,
}

impl<T> Reply<T> {
    fn map<U>(self, f: impl FnOnce(T) -> U) -> Reply<U> {
        match self {
            Reply::Now(result) => Reply::Now(result.map(f)),
            Reply::Never => Reply::Never,
        }
    }

    async fn wait(self) -> Result<T, TransportError> {
        match self {
            Reply::Now(result) => result,
            Reply::Never => std::future::pending().await,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Stage {
    Validating,
    InProgress,
    Completed,
    Expired,
    Cancelled,
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
    /// Its requests, one line each in the wire's request-file format.
    input: String,
    count: usize,
    stage: Stage,
    /// Made of an uploaded file (Gemini's results then go in a file too).
    from_file: bool,
    /// OpenAI's metadata, or Gemini's display name.
    tag: Value,
    /// Result files by role (OpenAI: `out`, `err`; Anthropic: `results`; Gemini: `out`).
    files: Vec<(String, String)>,
    /// Gemini's inline results, as result lines.
    inline: Option<String>,
}

/// The fake.
pub struct FakeBatches {
    wire: BatchWire,
    state: Mutex<State>,
    script: Mutex<Script>,
    /// What the model answers to the item numbered `n`, asked for the `attempt`th time (from 0).
    answer: fn(usize, usize) -> String,
}

impl FakeBatches {
    /// A fake of OpenAI's Batch API.
    pub fn new(script: Script, answer: fn(usize, usize) -> String) -> FakeBatches {
        FakeBatches::of(ProviderKind::OpenAiChat, script, answer)
    }

    /// A fake of `kind`'s batch API.
    pub fn of(
        kind: ProviderKind,
        script: Script,
        answer: fn(usize, usize) -> String,
    ) -> FakeBatches {
        let fake = FakeBatches {
            wire: BatchWire::of(kind).expect("a kind with a batch API"),
            state: Mutex::default(),
            script: Mutex::new(script),
            answer,
        };
        {
            let mut state = fake.state.lock().unwrap();
            for (i, (count, ended)) in fake.script().others.iter().enumerate() {
                state.batches.push(Batch {
                    id: format!("other_{i}"),
                    input: String::new(),
                    count: *count,
                    stage: if *ended {
                        Stage::Completed
                    } else {
                        Stage::InProgress
                    },
                    from_file: false,
                    tag: Value::Null,
                    files: Vec::new(),
                    inline: None,
                });
            }
        }
        fake
    }

    /// The same fake (its files, batches and counts) with another script: a job resumed
    /// against the provider it was killed on.
    pub fn rescript(&self, script: Script) {
        *self.script.lock().unwrap() = script;
        self.state.lock().unwrap().calls = 0;
    }

    /// Calls since the last script.
    pub fn calls(&self) -> usize {
        self.state.lock().unwrap().calls
    }

    fn script(&self) -> Script {
        self.script.lock().unwrap().clone()
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

    /// Batches made (the job's and any other's).
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
        self.script().stop_at_call.is_none_or(|at| state.calls < at)
    }

    fn reply<T>(&self, answers: bool, result: Result<T, TransportError>) -> Reply<T> {
        if answers {
            Reply::Now(result)
        } else {
            Reply::Never
        }
    }

    /// `POST` of a request file: the uploaded file's body.
    pub fn upload_raw(&self, jsonl: &str) -> Reply<String> {
        let answers = self.call();
        let mut state = self.state.lock().unwrap();
        let id = match self.wire {
            BatchWire::Gemini => format!("files/in-{}", state.files.len()),
            _ => format!("file-in-{}", state.files.len()),
        };
        if answers {
            state.files.insert(id.clone(), jsonl.to_owned());
        }
        let body = match self.wire {
            BatchWire::Gemini => {
                let mut body: Value = serde_json::from_str(GEMINI_FILE).unwrap();
                body["file"]["name"] = id.into();
                body
            }
            _ => {
                let mut body: Value = serde_json::from_str(OPENAI_FILE).unwrap();
                body["id"] = id.into();
                body
            }
        };
        self.reply(answers, Ok(body.to_string()))
    }

    /// The body that makes a batch, as the API takes it: the batch's body.
    pub fn create_raw(&self, request: &str) -> Reply<String> {
        let answers = self.call();
        if !answers && self.script().create_lost {
            return Reply::Never;
        }
        let mut state = self.state.lock().unwrap();
        state.creates += 1;
        if self.script().rate_limit_first_create && state.creates == 1 {
            return self.reply(
                answers,
                Err(TransportError::RateLimited {
                    retry_after: Some(std::time::Duration::from_millis(1)),
                }),
            );
        }
        let request: Value = serde_json::from_str(request).unwrap();
        let (input, from_file, tag) = match self.wire {
            BatchWire::OpenAi { .. } => {
                let file = request["input_file_id"].as_str().unwrap();
                (
                    self.take_file(&mut state, file),
                    true,
                    request["metadata"].clone(),
                )
            }
            BatchWire::Anthropic => {
                let lines: Vec<String> = request["requests"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(Value::to_string)
                    .collect();
                (lines.join("\n"), false, Value::Null)
            }
            BatchWire::Gemini => {
                let batch = &request["batch"];
                let config = &batch["input_config"];
                match config["file_name"].as_str() {
                    Some(file) => (
                        self.take_file(&mut state, file),
                        true,
                        batch["display_name"].clone(),
                    ),
                    None => {
                        let lines: Vec<String> = config["requests"]["requests"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|r| {
                                json!({"key": r["metadata"]["key"], "request": r["request"]})
                                    .to_string()
                            })
                            .collect();
                        (lines.join("\n"), false, batch["display_name"].clone())
                    }
                }
            }
        };
        let mut count = 0;
        for line in input.lines().filter(|l| !l.is_empty()) {
            let (custom_id, _) = self.request_of(line);
            *state.submitted.entry(custom_id).or_default() += 1;
            count += 1;
        }
        let id = match self.wire {
            BatchWire::OpenAi { .. } => format!("batch_{}", state.batches.len()),
            BatchWire::Anthropic => format!("msgbatch_{}", state.batches.len()),
            BatchWire::Gemini => format!("batches/{}", state.batches.len()),
        };
        let batch = Batch {
            id,
            input,
            count,
            stage: Stage::Validating,
            from_file,
            tag,
            files: Vec::new(),
            inline: None,
        };
        let body = self.body(&batch);
        state.batches.push(batch);
        self.reply(answers, Ok(body))
    }

    fn take_file(&self, state: &mut State, file: &str) -> String {
        if self.script().forget {
            state.files.remove(file).unwrap_or_default()
        } else {
            state.files.get(file).cloned().unwrap_or_default()
        }
    }

    /// A batch's body when looked at (which moves it on).
    pub fn get_raw(&self, batch_id: &str) -> Reply<String> {
        let answers = self.call();
        let mut state = self.state.lock().unwrap();
        let result = match state.batches.iter().position(|b| b.id == batch_id) {
            Some(i) => {
                self.advance(&mut state, i);
                Ok(self.body(&state.batches[i]))
            }
            None => Err(TransportError::Rejected {
                status: 404,
                body: "no such batch".into(),
            }),
        };
        self.reply(answers, result)
    }

    /// A page of batches, newest first, two to a page, after the batch `after` (Gemini's page
    /// token names it too).
    pub fn list_raw(&self, after: Option<&str>) -> Reply<String> {
        let answers = self.call();
        let state = self.state.lock().unwrap();
        let newest: Vec<&Batch> = state.batches.iter().rev().collect();
        let after = after.map(|a| a.strip_prefix("page-after:").unwrap_or(a));
        let start = after
            .and_then(|a| newest.iter().position(|b| b.id == a))
            .map_or(0, |p| p + 1);
        let page: Vec<Value> = newest
            .iter()
            .skip(start)
            .take(2)
            .map(|b| serde_json::from_str(&self.body(b)).unwrap())
            .collect();
        let more = start + 2 < newest.len();
        let last = newest.get(start + 1).map(|b| b.id.clone());
        let next = more.then_some(last).flatten();
        let body = match self.wire {
            BatchWire::OpenAi { .. } => {
                json!({"object": "list", "data": page, "has_more": more, "last_id": next})
            }
            BatchWire::Anthropic => {
                json!({"data": page, "has_more": more, "first_id": null, "last_id": next})
            }
            BatchWire::Gemini => match next {
                Some(next) => {
                    json!({"operations": page, "nextPageToken": format!("page-after:{next}")})
                }
                None => json!({"operations": page}),
            },
        };
        self.reply(answers, Ok(body.to_string()))
    }

    /// A result file (OpenAI's, Gemini's by its name) or Anthropic's results URL.
    pub fn download_raw(&self, location: &str) -> Reply<String> {
        let answers = self.call();
        let location = location
            .strip_prefix(ANTHROPIC_ORIGIN)
            .map(|path| {
                let id = path.trim_start_matches("/v1/messages/batches/");
                format!("results-{}", id.trim_end_matches("/results"))
            })
            .unwrap_or_else(|| location.to_owned());
        let file = {
            let mut state = self.state.lock().unwrap();
            if self.script().forget {
                state.files.remove(&location)
            } else {
                state.files.get(&location).cloned()
            }
        };
        self.reply(
            answers,
            file.ok_or(TransportError::Rejected {
                status: 404,
                body: "no such file".into(),
            }),
        )
    }

    /// A request line's id and body.
    fn request_of(&self, line: &str) -> (String, Value) {
        let mut line: Value = serde_json::from_str(line).unwrap();
        let (id, body) = match self.wire {
            BatchWire::OpenAi { .. } => ("custom_id", "body"),
            BatchWire::Anthropic => ("custom_id", "params"),
            BatchWire::Gemini => ("key", "request"),
        };
        (line[id].as_str().unwrap().to_owned(), line[body].take())
    }

    /// Runs batch `i` as far as a look moves it: validating, in progress, then its end.
    fn advance(&self, state: &mut State, i: usize) {
        let expire = self.script().expire.contains(&i);
        let cancel = self.script().cancel.contains(&i);
        let Some(batch) = state.batches.get_mut(i) else {
            return;
        };
        match batch.stage {
            Stage::Validating => {
                batch.stage = Stage::InProgress;
                return;
            }
            Stage::InProgress if batch.id.starts_with("other_") => return,
            Stage::InProgress => {}
            _ => return,
        }
        let mut out = Vec::new();
        let mut err = Vec::new();
        for (k, line) in batch.input.lines().filter(|l| !l.is_empty()).enumerate() {
            let (custom_id, body) = self.request_of(line);
            let not_run = cancel || (expire && k % 2 == 1);
            let text = body.to_string();
            let n: usize = text
                .split("item-")
                .nth(1)
                .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|d| d.parse().ok())
                .unwrap_or(usize::MAX);
            let turns = body
                .get("messages")
                .or_else(|| body.get("contents"))
                .and_then(Value::as_array)
                .map_or(0, |turns| {
                    turns
                        .iter()
                        .filter(|t| t["role"] == "assistant" || t["role"] == "model")
                        .count()
                });
            let refused = !not_run && n % 100 == 99;
            let answer = (self.answer)(n, turns);
            let (line, to_err) =
                self.result_line(&custom_id, &body, not_run, cancel, refused, &answer);
            if let Some(line) = line {
                if to_err {
                    err.push(line);
                } else {
                    out.push(line);
                }
            }
        }
        batch.stage = if cancel {
            Stage::Cancelled
        } else if expire {
            Stage::Expired
        } else {
            Stage::Completed
        };
        let id = batch.id.clone();
        if self.script().forget {
            batch.input = String::new();
        }
        let join = |lines: Vec<String>| lines.join("\n") + "\n";
        let mut files = Vec::new();
        let mut inline = None;
        match self.wire {
            BatchWire::OpenAi { .. } => {
                for (role, lines) in [("out", out), ("err", err)] {
                    if !lines.is_empty() {
                        files.push((role.to_owned(), format!("file-{role}-{id}")));
                        state.files.insert(format!("file-{role}-{id}"), join(lines));
                    }
                }
            }
            BatchWire::Anthropic => {
                out.extend(err);
                state.files.insert(format!("results-{id}"), join(out));
                files.push((
                    "results".to_owned(),
                    format!("{ANTHROPIC_ORIGIN}/v1/messages/batches/{id}/results"),
                ));
            }
            BatchWire::Gemini => {
                out.extend(err);
                if state.batches[i].from_file {
                    let name = format!("files/out-{}", id.trim_start_matches("batches/"));
                    state.files.insert(name.clone(), join(out));
                    files.push(("out".to_owned(), name));
                } else {
                    inline = Some(out);
                }
            }
        }
        let batch = &mut state.batches[i];
        batch.files = files;
        batch.inline = inline.map(join);
    }

    /// What became of one request, as the wire's result line, and whether it goes in OpenAI's
    /// error file; `None` where the API writes no line (Gemini's requests not run).
    fn result_line(
        &self,
        custom_id: &str,
        body: &Value,
        not_run: bool,
        cancel: bool,
        refused: bool,
        answer: &str,
    ) -> (Option<String>, bool) {
        let line = |template: &str, id_key: &str| {
            let mut line: Value = serde_json::from_str(template).unwrap();
            line[id_key] = custom_id.into();
            line
        };
        match self.wire {
            BatchWire::OpenAi { .. } => {
                if not_run {
                    let mut out = line(OPENAI_EXPIRED, "custom_id");
                    if cancel {
                        out["error"]["code"] = "batch_cancelled".into();
                    }
                    (Some(out.to_string()), true)
                } else if refused {
                    (Some(line(OPENAI_REJECTED, "custom_id").to_string()), true)
                } else {
                    let mut out = line(OPENAI_OUTPUT, "custom_id");
                    out["response"]["body"]["choices"][0]["message"]["content"] = answer.into();
                    (Some(out.to_string()), false)
                }
            }
            BatchWire::Anthropic => {
                let out = if not_run {
                    line(
                        if cancel {
                            ANTHROPIC_CANCELED
                        } else {
                            ANTHROPIC_EXPIRED
                        },
                        "custom_id",
                    )
                } else if refused {
                    line(ANTHROPIC_ERRORED, "custom_id")
                } else {
                    let mut out = line(ANTHROPIC_SUCCEEDED, "custom_id");
                    let message = &mut out["result"]["message"];
                    let tool = body["tool_choice"]["name"].as_str();
                    match (tool, serde_json::from_str::<Value>(answer)) {
                        (Some(tool), Ok(input)) => {
                            message["content"] = json!([{"type": "tool_use", "id": "toolu_01", "name": tool, "input": input}]);
                            message["stop_reason"] = "tool_use".into();
                        }
                        _ => message["content"] = json!([{"type": "text", "text": answer}]),
                    }
                    out
                };
                (Some(out.to_string()), false)
            }
            BatchWire::Gemini => {
                if not_run {
                    (None, false)
                } else if refused {
                    (Some(line(GEMINI_ERROR, "key").to_string()), false)
                } else {
                    let mut out = line(GEMINI_RESPONSE, "key");
                    out["response"]["candidates"][0]["content"]["parts"][0]["text"] = answer.into();
                    (Some(out.to_string()), false)
                }
            }
        }
    }

    /// A batch's body as the API writes it.
    fn body(&self, batch: &Batch) -> String {
        let file = |role: &str| {
            batch
                .files
                .iter()
                .find(|(r, _)| r == role)
                .map(|(_, f)| f.clone())
        };
        match self.wire {
            BatchWire::OpenAi { .. } => {
                let mut body: Value = serde_json::from_str(OPENAI_BATCH).unwrap();
                body["id"] = batch.id.clone().into();
                body["status"] = match batch.stage {
                    Stage::Validating => "validating",
                    Stage::InProgress => "in_progress",
                    Stage::Completed => "completed",
                    Stage::Expired => "expired",
                    Stage::Cancelled => "cancelled",
                }
                .into();
                body["output_file_id"] = file("out").into();
                body["error_file_id"] = file("err").into();
                body["request_counts"]["total"] = batch.count.into();
                body["metadata"] = if batch.tag.is_object() {
                    batch.tag.clone()
                } else {
                    json!({})
                };
                body.to_string()
            }
            BatchWire::Anthropic => {
                let mut body: Value = serde_json::from_str(ANTHROPIC_BATCH).unwrap();
                body["id"] = batch.id.clone().into();
                let ended = !matches!(batch.stage, Stage::Validating | Stage::InProgress);
                body["processing_status"] = if ended { "ended" } else { "in_progress" }.into();
                let counts = &mut body["request_counts"];
                if ended {
                    counts["succeeded"] = batch.count.into();
                } else {
                    counts["processing"] = batch.count.into();
                }
                body["results_url"] = file("results").into();
                body.to_string()
            }
            BatchWire::Gemini => {
                let mut body: Value = serde_json::from_str(GEMINI_OPERATION).unwrap();
                body["name"] = batch.id.clone().into();
                let meta = &mut body["metadata"];
                meta["name"] = batch.id.clone().into();
                meta["displayName"] = batch.tag.as_str().unwrap_or("").into();
                meta["batchStats"]["requestCount"] = batch.count.to_string().into();
                meta["state"] = match batch.stage {
                    Stage::Validating => "BATCH_STATE_PENDING",
                    Stage::InProgress => "BATCH_STATE_RUNNING",
                    Stage::Completed => "BATCH_STATE_SUCCEEDED",
                    Stage::Expired => "BATCH_STATE_EXPIRED",
                    Stage::Cancelled => "BATCH_STATE_CANCELLED",
                }
                .into();
                let done = !matches!(batch.stage, Stage::Validating | Stage::InProgress);
                if done {
                    body["done"] = true.into();
                    let mut response = json!({"@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput"});
                    if let Some(file) = file("out") {
                        response["responsesFile"] = file.into();
                    }
                    if let Some(lines) = &batch.inline {
                        let items: Vec<Value> = lines
                            .lines()
                            .filter(|l| !l.is_empty())
                            .map(|l| {
                                let mut l: Value = serde_json::from_str(l).unwrap();
                                let key = l["key"].take();
                                let mut item = json!({"metadata": {"key": key}});
                                for field in ["response", "error"] {
                                    if !l[field].is_null() {
                                        item[field] = l[field].take();
                                    }
                                }
                                item
                            })
                            .collect();
                        response["inlinedResponses"] = json!({"inlinedResponses": items});
                    }
                    body["response"] = response;
                }
                body.to_string()
            }
        }
    }
}

impl Provider for FakeBatches {
    fn kind(&self) -> ProviderKind {
        match self.wire {
            BatchWire::OpenAi { .. } => ProviderKind::OpenAiChat,
            BatchWire::Anthropic => ProviderKind::Anthropic,
            BatchWire::Gemini => ProviderKind::Gemini,
        }
    }
    fn model(&self) -> &str {
        match self.wire {
            BatchWire::OpenAi { .. } => "gpt-4o-mini",
            BatchWire::Anthropic => "claude-sonnet-4-5",
            BatchWire::Gemini => "gemini-2.5-flash",
        }
    }
    async fn send(&self, _: &str) -> Result<String, TransportError> {
        Err(TransportError::Connection(
            "this fake only takes batches".into(),
        ))
    }
}

fn unread(e: impl std::fmt::Display) -> TransportError {
    TransportError::Connection(e.to_string())
}

impl BatchApi for FakeBatches {
    fn upload(&self, jsonl: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
        let wire = self.wire;
        let reply = self.upload_raw(jsonl).map(move |body| match wire {
            BatchWire::Gemini => gemini_batch::read_file_name(&body).unwrap(),
            _ => openai_batch::read_file_id(&body).unwrap(),
        });
        reply.wait()
    }

    fn create(
        &self,
        input: BatchInput<'_>,
        tag: &BatchTag,
    ) -> impl Future<Output = Result<BatchState, TransportError>> + Send {
        let request = match (self.wire, input) {
            (BatchWire::OpenAi { endpoint }, BatchInput::File(file)) => {
                openai_batch::create_body(file, endpoint, tag)
            }
            (BatchWire::Anthropic, BatchInput::Inline(lines)) => {
                anthropic_batch::create_body(lines)
            }
            (BatchWire::Gemini, input) => gemini_batch::create_body(input, tag).unwrap(),
            (wire, input) => panic!("{wire:?} is not given {input:?}"),
        };
        let wire = self.wire;
        let reply = self.create_raw(&request);
        async move {
            let body = reply.wait().await?;
            wire.read_batch(&body).map_err(unread)
        }
    }

    fn get(
        &self,
        batch_id: &str,
    ) -> impl Future<Output = Result<BatchState, TransportError>> + Send {
        let wire = self.wire;
        let reply = self.get_raw(batch_id);
        async move { wire.read_batch(&reply.wait().await?).map_err(unread) }
    }

    fn list(
        &self,
        after: Option<&str>,
    ) -> impl Future<Output = Result<(Vec<BatchState>, Option<String>), TransportError>> + Send
    {
        let wire = self.wire;
        let reply = self.list_raw(after);
        async move { wire.read_batch_list(&reply.wait().await?).map_err(unread) }
    }

    fn download(
        &self,
        location: &str,
    ) -> impl Future<Output = Result<String, TransportError>> + Send {
        self.download_raw(location).wait()
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

//! A batch job through `HttpProvider`'s Batch API calls (multipart upload, batches, result
//! files) against the fake OpenAI Batch API served on loopback: the requests are the documented
//! ones, and every item is accounted for through an expired batch and a 429 on create.

mod common;

use std::future::Future;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use common::batch_fake::{FakeBatches, Script};
use serde_json::{json, Value};
use structured_runtime::batch::{
    run_on_batch_api, BatchApi, BatchOptions, JobItem, JobSpec, Store,
};
use structured_runtime::http::HttpProvider;
use structured_runtime::provider::capabilities::ProviderKind;
use structured_runtime::run::TransportError;
use structured_runtime::{ResponseSchema, RunConfig};

/// The fake's answer to a call that answers at once.
fn now<T>(f: impl Future<Output = T>) -> T {
    let mut f = std::pin::pin!(f);
    match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("the fake was scripted to stop"),
    }
}

/// Serves `fake` as OpenAI's `/v1/files` and `/v1/batches`.
fn serve(fake: Arc<FakeBatches>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let fake = fake.clone();
            std::thread::spawn(move || connection(stream, &fake));
        }
    });
    url
}

fn connection(stream: TcpStream, fake: &FakeBatches) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut start = String::new();
        if reader.read_line(&mut start).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = start.split_whitespace();
        let (method, path) = (
            parts.next().unwrap_or("").to_owned(),
            parts.next().unwrap_or("").to_owned(),
        );
        let (mut length, mut content_type, mut auth) = (0usize, String::new(), String::new());
        let mut line = String::new();
        loop {
            line.clear();
            reader.read_line(&mut line).unwrap();
            let lower = line.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
            if lower.starts_with("content-type:") {
                content_type = line["content-type:".len()..].trim().to_owned();
            }
            if lower.starts_with("authorization:") {
                auth = line["authorization:".len()..].trim().to_owned();
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let body = String::from_utf8(body).unwrap();
        assert_eq!(auth, "Bearer sk-test", "every call carries the key");
        let reply: Result<String, TransportError> = match (method.as_str(), path.as_str()) {
            ("POST", "/v1/files") => {
                let boundary = content_type.split("boundary=").nth(1).unwrap().to_owned();
                assert!(body.contains("name=\"purpose\"\r\n\r\nbatch\r\n"), "{body}");
                let file = body
                    .split(&format!("--{boundary}"))
                    .find(|part| part.contains("name=\"file\""))
                    .and_then(|part| part.split("\r\n\r\n").nth(1))
                    .map(|content| content.trim_end_matches("\r\n").to_owned())
                    .unwrap();
                now(fake.upload(&file))
                    .map(|id| json!({"id": id, "object": "file", "purpose": "batch"}).to_string())
            }
            ("POST", "/v1/batches") => {
                let request: Value = serde_json::from_str(&body).unwrap();
                assert_eq!(request["completion_window"], "24h");
                let metadata: Vec<(String, String)> = request["metadata"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
                    .collect();
                let metadata: Vec<(&str, &str)> = metadata
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect();
                now(fake.create(
                    request["input_file_id"].as_str().unwrap(),
                    request["endpoint"].as_str().unwrap(),
                    &metadata,
                ))
                .map(batch_json)
            }
            ("GET", p) if p.starts_with("/v1/batches?") => {
                let after = p.split("after=").nth(1).map(str::to_owned);
                now(fake.list(after.as_deref())).map(|(page, next)| {
                    json!({"object": "list", "data": page.into_iter().map(|b| serde_json::from_str::<Value>(&batch_json(b)).unwrap()).collect::<Vec<_>>(),
                           "has_more": next.is_some(), "last_id": next})
                    .to_string()
                })
            }
            ("GET", p) if p.starts_with("/v1/batches/") => {
                now(fake.get(&p["/v1/batches/".len()..])).map(batch_json)
            }
            ("GET", p) if p.starts_with("/v1/files/") && p.ends_with("/content") => {
                now(fake.download(&p["/v1/files/".len()..p.len() - "/content".len()]))
            }
            _ => Err(TransportError::Rejected {
                status: 404,
                body: "no such route".into(),
            }),
        };
        let (status, text) = match reply {
            Ok(text) => ("200 OK", text),
            Err(TransportError::RateLimited { .. }) => ("429 Too Many Requests", "{}".to_owned()),
            Err(TransportError::Rejected { body, .. }) => ("404 Not Found", body),
            Err(e) => ("500 Internal Server Error", e.to_string()),
        };
        let head =
            format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{}\r\n",
            text.len(),
            if status.starts_with("429") { "retry-after: 0\r\n" } else { "" }
        );
        if writer
            .write_all(head.as_bytes())
            .and_then(|()| writer.write_all(text.as_bytes()))
            .is_err()
        {
            return;
        }
    }
}

/// A batch as the API writes it (the fields the reader reads; the fake's own body has them all).
fn batch_json(batch: structured_runtime::provider::wire::openai_batch::BatchState) -> String {
    use structured_runtime::provider::wire::openai_batch::BatchStatus as S;
    let status = match batch.status {
        S::Validating => "validating",
        S::Failed => "failed",
        S::InProgress => "in_progress",
        S::Finalizing => "finalizing",
        S::Completed => "completed",
        S::Expired => "expired",
        S::Cancelling => "cancelling",
        S::Cancelled => "cancelled",
    };
    let metadata: serde_json::Map<String, Value> = batch
        .metadata
        .into_iter()
        .map(|(k, v)| (k, Value::from(v)))
        .collect();
    json!({"id": batch.id, "object": "batch", "status": status, "output_file_id": batch.output_file_id,
           "error_file_id": batch.error_file_id, "metadata": metadata})
    .to_string()
}

#[test]
fn a_job_runs_through_the_batch_api_over_http() {
    let fake = Arc::new(FakeBatches::new(
        Script {
            expire: vec![0],
            rate_limit_first_create: true,
            ..Script::default()
        },
        |n, _| format!(r#"{{"total": {n}}}"#),
    ));
    let url = serve(fake.clone());
    let dir = std::env::temp_dir().join(format!("structured-openai-http-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let spec = JobSpec {
        schema: ResponseSchema::new(
            "invoice",
            json!({"type": "object", "properties": {"total": {"type": "integer"}},
                   "required": ["total"], "additionalProperties": false}),
        )
        .unwrap(),
        prompt: "Read the total of {input}.".into(),
        max_tokens: Some(32),
        prices: None,
    };
    let items = (0..60).map(|i| {
        Ok(JobItem {
            id: Some(format!("inv-{i}")),
            input: Some(format!("item-{i}")),
            ..JobItem::default()
        })
    });
    let mut store = Store::create(dir.join("job.db"), &spec, items).unwrap();
    let provider = HttpProvider::new(
        ProviderKind::OpenAiChat,
        &url,
        Some("sk-test".into()),
        "gpt-4o-mini",
    )
    .unwrap();
    let options = BatchOptions {
        max_requests: 25,
        poll_every: Duration::from_millis(1),
        ..BatchOptions::default()
    };
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
        ))
        .unwrap();
    assert_eq!((status.done, status.failed, status.written), (60, 0, 60));
    let lines: Vec<Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for line in &lines {
        let n: u64 = line["id"].as_str().unwrap()[4..].parse().unwrap();
        assert_eq!(line["value"]["total"], n, "{line}");
    }
    // The first batch expired with half its requests not run: those went out again.
    assert!(fake.batches() >= 4, "{}", fake.batches());
    assert_eq!(fake.sent_twice(), Vec::<String>::new());
    let _ = std::fs::remove_dir_all(&dir);
}

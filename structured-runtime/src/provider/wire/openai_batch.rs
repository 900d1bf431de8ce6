//! OpenAI's Batch API: the request file (one line per request: `custom_id`, `method`, `url`,
//! `body`), the batch created from it, its state, and the result files (one line per request:
//! its `custom_id` and the response the endpoint gave, or why there is none). The bodies inside
//! are the chat (or responses) bodies every run sends, read by the same codec.

use serde_json::{json, Value};

use super::batch::{read_page, unread, BatchResult, BatchState, BatchStatus, BatchTag};
use super::types::CodecError;
use super::WireApi;
use crate::read::strict_de::json_value;

/// Requests one batch takes at most.
pub const MAX_BATCH_REQUESTS: usize = 50_000;

/// Bytes one batch's request file takes at most.
pub const MAX_BATCH_BYTES: usize = 200 * 1024 * 1024;

/// One line of a request file: `body` (a request body, JSON) under `custom_id`, posted to
/// `endpoint`. `None` when `body` is not JSON.
pub fn request_line(custom_id: &str, endpoint: &str, body: &str) -> Option<String> {
    let body: Value = json_value(body).ok()?;
    Some(
        json!({"custom_id": custom_id, "method": "POST", "url": endpoint, "body": body})
            .to_string(),
    )
}

/// The metadata keys a batch's tag is kept under.
const JOB_KEY: &str = "structured_job";
const CHUNK_KEY: &str = "structured_chunk";

/// The body that creates a batch from the uploaded `input_file_id`, tagged with `tag` in its
/// `metadata` (how a batch is found again after a crash).
pub fn create_body(input_file_id: &str, endpoint: &str, tag: &BatchTag) -> String {
    json!({"input_file_id": input_file_id, "endpoint": endpoint, "completion_window": "24h",
           "metadata": {JOB_KEY: tag.job, CHUNK_KEY: tag.chunk.to_string()}})
    .to_string()
}

fn status_of(name: &str) -> Option<BatchStatus> {
    Some(match name {
        "validating" => BatchStatus::Validating,
        "failed" => BatchStatus::Failed,
        "in_progress" => BatchStatus::InProgress,
        "finalizing" => BatchStatus::Finalizing,
        "completed" => BatchStatus::Completed,
        "expired" => BatchStatus::Expired,
        "cancelling" => BatchStatus::Cancelling,
        "cancelled" => BatchStatus::Cancelled,
        _ => return None,
    })
}

fn not_read(message: impl Into<String>) -> CodecError {
    unread(WireApi::OpenAiChat, message)
}

/// A batch object (`POST /v1/batches`, `GET /v1/batches/{id}`).
pub fn read_batch(body: &str) -> Result<BatchState, CodecError> {
    let value: Value = json_value(body).map_err(|e| not_read(e.to_string()))?;
    batch_of(&value)
}

fn batch_of(value: &Value) -> Result<BatchState, CodecError> {
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    let id = text("id").ok_or_else(|| not_read("a batch without an id"))?;
    let status = value
        .get("status")
        .and_then(Value::as_str)
        .and_then(status_of)
        .ok_or_else(|| not_read(format!("batch {id}: no status this reader knows")))?;
    let meta = |key: &str| {
        value
            .get("metadata")
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
    };
    let tag = match (meta(JOB_KEY), meta(CHUNK_KEY).and_then(|c| c.parse().ok())) {
        (Some(job), Some(chunk)) => Some(BatchTag {
            job: job.to_owned(),
            chunk,
        }),
        _ => None,
    };
    Ok(BatchState {
        id,
        status,
        results: [text("output_file_id"), text("error_file_id")]
            .into_iter()
            .flatten()
            .collect(),
        inline: None,
        tag,
        requests: value
            .get("request_counts")
            .and_then(|c| c.get("total"))
            .and_then(Value::as_u64),
    })
}

/// A page of batches (`GET /v1/batches`): the batches, and the id to list after when there
/// are more.
pub fn read_batch_list(body: &str) -> Result<(Vec<BatchState>, Option<String>), CodecError> {
    read_page(WireApi::OpenAiChat, body, batch_of)
}

/// An uploaded file's id (`POST /v1/files`).
pub fn read_file_id(body: &str) -> Result<String, CodecError> {
    let value: Value = json_value(body).map_err(|e| not_read(e.to_string()))?;
    value
        .get("id")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| not_read("an uploaded file without an id"))
}

/// One line of a result file (output or error): its `custom_id` and what became of it.
pub fn read_result_line(line: &str) -> Result<(String, BatchResult), CodecError> {
    let value: Value = json_value(line).map_err(|e| not_read(e.to_string()))?;
    let custom_id = value
        .get("custom_id")
        .and_then(Value::as_str)
        .ok_or_else(|| not_read("a result line without a custom_id"))?
        .to_owned();
    let response = value.get("response").filter(|r| !r.is_null());
    let status = response
        .and_then(|r| r.get("status_code"))
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok());
    if let Some(error) = value.get("error").filter(|e| !e.is_null()) {
        let text = |key: &str| error.get(key).and_then(Value::as_str).unwrap_or_default();
        return Ok((
            custom_id,
            BatchResult::Error {
                code: text("code").to_owned(),
                message: text("message").to_owned(),
                status,
            },
        ));
    }
    let body = response
        .and_then(|r| r.get("body"))
        .ok_or_else(|| not_read(format!("{custom_id}: neither a response nor an error")))?;
    match status {
        Some(200) | None => {
            let body = super::batch::answer_as_written(line, &["response", "body"], body);
            Ok((custom_id, BatchResult::Body(body)))
        }
        Some(status) => {
            let error = body.get("error");
            let text = |key: &str| {
                error
                    .and_then(|e| e.get(key))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            Ok((
                custom_id,
                BatchResult::Error {
                    code: text("code"),
                    message: text("message"),
                    status: Some(status),
                },
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_line_carries_the_body_as_json() {
        let line = request_line(
            "7.0",
            "/v1/chat/completions",
            r#"{"model": "m", "max_tokens": 9}"#,
        )
        .unwrap();
        let value: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(value["custom_id"], "7.0");
        assert_eq!(value["method"], "POST");
        assert_eq!(value["body"]["max_tokens"], 9);
        assert!(request_line("x", "/v1/chat/completions", "not json").is_none());
    }

    #[test]
    fn result_lines_read_as_bodies_or_errors() {
        let ok = r#"{"id": "batch_req_1", "custom_id": "1.0", "response": {"status_code": 200, "request_id": "r", "body": {"choices": []}}, "error": null}"#;
        assert_eq!(
            read_result_line(ok).unwrap(),
            ("1.0".into(), BatchResult::Body(r#"{"choices": []}"#.into()))
        );
        let expired = r#"{"id": "batch_req_2", "custom_id": "2.0", "response": null, "error": {"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}}"#;
        assert!(matches!(
            read_result_line(expired).unwrap().1,
            BatchResult::Error { ref code, status: None, .. } if code == "batch_expired"
        ));
        let refused = r#"{"id": "batch_req_3", "custom_id": "3.0", "response": {"status_code": 400, "request_id": "r", "body": {"error": {"message": "bad", "type": "invalid_request_error", "code": "invalid_value"}}}, "error": null}"#;
        assert!(matches!(
            read_result_line(refused).unwrap().1,
            BatchResult::Error { ref code, status: Some(400), .. } if code == "invalid_value"
        ));
        assert!(read_result_line(r#"{"custom_id": "4"}"#).is_err());
    }

    #[test]
    fn a_batch_reads_its_state_and_metadata() {
        let body = r#"{"id": "batch_1", "object": "batch", "status": "expired", "output_file_id": "file-o", "error_file_id": null, "metadata": {"structured_job": "j", "structured_chunk": "3"}}"#;
        let batch = read_batch(body).unwrap();
        assert_eq!(batch.status, BatchStatus::Expired);
        assert!(batch.status.is_final());
        assert_eq!(batch.results, ["file-o"]);
        assert_eq!(
            batch.tag,
            Some(BatchTag {
                job: "j".into(),
                chunk: 3
            })
        );
        let list = format!(
            r#"{{"object": "list", "data": [{body}], "has_more": true, "last_id": "batch_1"}}"#
        );
        let (batches, after) = read_batch_list(&list).unwrap();
        assert_eq!((batches.len(), after.as_deref()), (1, Some("batch_1")));
    }
}

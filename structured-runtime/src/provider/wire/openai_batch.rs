//! OpenAI's Batch API: the request file (one line per request: `custom_id`, `method`, `url`,
//! `body`), the batch created from it, its state, and the result files (one line per request:
//! its `custom_id` and the response the endpoint gave, or why there is none). The bodies inside
//! are the chat (or responses) bodies every run sends, read by the same codec.

use serde_json::{json, Value};

use super::types::CodecError;
use super::WireApi;
use crate::provider::capabilities::ProviderKind;

/// Requests one batch takes at most.
pub const MAX_BATCH_REQUESTS: usize = 50_000;

/// Bytes one batch's request file takes at most.
pub const MAX_BATCH_BYTES: usize = 200 * 1024 * 1024;

/// The endpoint a batch of `kind`'s requests runs against (`/v1/chat/completions`,
/// `/v1/responses`); `None` for a kind without OpenAI's Batch API.
pub fn batch_endpoint(kind: ProviderKind) -> Option<&'static str> {
    match kind {
        ProviderKind::OpenAiChat => Some("/v1/chat/completions"),
        ProviderKind::OpenAiResponses => Some("/v1/responses"),
        _ => None,
    }
}

/// One line of a request file: `body` (a request body, JSON) under `custom_id`, posted to
/// `endpoint`. `None` when `body` is not JSON.
pub fn request_line(custom_id: &str, endpoint: &str, body: &str) -> Option<String> {
    let body: Value = serde_json::from_str(body).ok()?;
    Some(
        json!({"custom_id": custom_id, "method": "POST", "url": endpoint, "body": body})
            .to_string(),
    )
}

/// The body that creates a batch from the uploaded `input_file_id`, with the caller's
/// `metadata` (at most 16 keys; how a batch is found again after a crash).
pub fn create_body(input_file_id: &str, endpoint: &str, metadata: &[(&str, &str)]) -> String {
    let metadata: serde_json::Map<String, Value> = metadata
        .iter()
        .map(|(k, v)| ((*k).to_owned(), Value::from(*v)))
        .collect();
    json!({"input_file_id": input_file_id, "endpoint": endpoint, "completion_window": "24h",
           "metadata": metadata})
    .to_string()
}

/// Where a batch is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchStatus {
    /// Its file is being checked.
    Validating,
    /// Its file was refused: no request ran.
    Failed,
    /// Running.
    InProgress,
    /// Its results are being written.
    Finalizing,
    /// Every request ran; results in the output and error files.
    Completed,
    /// Its window passed: what did not run is in the error file (`batch_expired`).
    Expired,
    /// Being cancelled.
    Cancelling,
    /// Cancelled: what did not run is in the error file (`batch_cancelled`).
    Cancelled,
}

impl BatchStatus {
    /// Whether the batch will change no more.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            BatchStatus::Failed
                | BatchStatus::Completed
                | BatchStatus::Expired
                | BatchStatus::Cancelled
        )
    }

    fn from_name(name: &str) -> Option<BatchStatus> {
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
}

/// A batch as the API describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchState {
    /// Its id.
    pub id: String,
    /// Where it is.
    pub status: BatchStatus,
    /// The file of the requests that ran, once there is one.
    pub output_file_id: Option<String>,
    /// The file of the requests that failed or did not run, once there is one.
    pub error_file_id: Option<String>,
    /// The caller's metadata, as sent.
    pub metadata: Vec<(String, String)>,
}

fn not_read(message: impl Into<String>) -> CodecError {
    CodecError::NotJson {
        api: WireApi::OpenAiChat,
        message: message.into(),
    }
}

/// A batch object (`POST /v1/batches`, `GET /v1/batches/{id}`).
pub fn read_batch(body: &str) -> Result<BatchState, CodecError> {
    let value: Value = serde_json::from_str(body).map_err(|e| not_read(e.to_string()))?;
    batch_of(&value)
}

fn batch_of(value: &Value) -> Result<BatchState, CodecError> {
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    let id = text("id").ok_or_else(|| not_read("a batch without an id"))?;
    let status = value
        .get("status")
        .and_then(Value::as_str)
        .and_then(BatchStatus::from_name)
        .ok_or_else(|| not_read(format!("batch {id}: no status this reader knows")))?;
    let metadata = value
        .get("metadata")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                .collect()
        })
        .unwrap_or_default();
    Ok(BatchState {
        id,
        status,
        output_file_id: text("output_file_id"),
        error_file_id: text("error_file_id"),
        metadata,
    })
}

/// A page of batches (`GET /v1/batches`): the batches, and the id to list after when there
/// are more.
pub fn read_batch_list(body: &str) -> Result<(Vec<BatchState>, Option<String>), CodecError> {
    let value: Value = serde_json::from_str(body).map_err(|e| not_read(e.to_string()))?;
    let batches = value
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| not_read("a list without data"))?
        .iter()
        .map(batch_of)
        .collect::<Result<Vec<_>, _>>()?;
    let more = value.get("has_more").and_then(Value::as_bool) == Some(true);
    let after = more
        .then(|| {
            value
                .get("last_id")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .flatten();
    Ok((batches, after))
}

/// An uploaded file's id (`POST /v1/files`).
pub fn read_file_id(body: &str) -> Result<String, CodecError> {
    let value: Value = serde_json::from_str(body).map_err(|e| not_read(e.to_string()))?;
    value
        .get("id")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| not_read("an uploaded file without an id"))
}

/// What a result file says of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchResult {
    /// The endpoint's response body (a chat completion, a response), to read as any answer.
    Body(String),
    /// No response: the request failed (`status` when the endpoint answered with an error) or
    /// did not run (`batch_expired`, `batch_cancelled`).
    Error {
        /// The error's code.
        code: String,
        /// What it says.
        message: String,
        /// The endpoint's HTTP status, when it answered.
        status: Option<u16>,
    },
}

/// One line of a result file (output or error): its `custom_id` and what became of it.
pub fn read_result_line(line: &str) -> Result<(String, BatchResult), CodecError> {
    let value: Value = serde_json::from_str(line).map_err(|e| not_read(e.to_string()))?;
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
        Some(200) | None => Ok((custom_id, BatchResult::Body(body.to_string()))),
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
            ("1.0".into(), BatchResult::Body(r#"{"choices":[]}"#.into()))
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
        assert_eq!(batch.output_file_id.as_deref(), Some("file-o"));
        assert_eq!(batch.error_file_id, None);
        assert!(batch
            .metadata
            .contains(&("structured_chunk".into(), "3".into())));
        let list = format!(
            r#"{{"object": "list", "data": [{body}], "has_more": true, "last_id": "batch_1"}}"#
        );
        let (batches, after) = read_batch_list(&list).unwrap();
        assert_eq!((batches.len(), after.as_deref()), (1, Some("batch_1")));
    }
}

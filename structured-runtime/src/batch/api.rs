//! What a provider's batch API must do for a job to run on it ([`BatchApi`]), and how one
//! request's answer from a batch is kept in the store and given back to its run.

use std::future::Future;

use serde_json::{json, Value};

use crate::provider::wire::batch::{BatchInput, BatchResult, BatchState, BatchTag};
use crate::run::TransportError;

/// A provider's batch API (OpenAI's files and batches, Anthropic's Message Batches, Gemini's
/// batch mode; their formats in `provider::wire::*_batch`): upload a request file, make a batch,
/// read its state, list batches, download its results. Each call is one HTTP exchange; a failed
/// one is a [`TransportError`] as for a run.
pub trait BatchApi {
    /// Uploads `jsonl` (one request line each) as a batch request file: its id (a file id, or
    /// Gemini's `files/…` name).
    fn upload(&self, jsonl: &str) -> impl Future<Output = Result<String, TransportError>> + Send;
    /// Makes a batch of `input`, tagged with `tag` where the API keeps a tag.
    fn create(
        &self,
        input: BatchInput<'_>,
        tag: &BatchTag,
    ) -> impl Future<Output = Result<BatchState, TransportError>> + Send;
    /// The batch's state.
    fn get(
        &self,
        batch_id: &str,
    ) -> impl Future<Output = Result<BatchState, TransportError>> + Send;
    /// A page of batches, newest first, after the page token `after`: the page and the token
    /// of the next when there are more.
    fn list(
        &self,
        after: Option<&str>,
    ) -> impl Future<Output = Result<(Vec<BatchState>, Option<String>), TransportError>> + Send;
    /// The result lines at `location`, one of an ended batch's [`BatchState::results`] (a
    /// result file's id, or a results URL).
    fn download(
        &self,
        location: &str,
    ) -> impl Future<Output = Result<String, TransportError>> + Send;
}

/// An answer as the store keeps it: the response body, or why there is none (kept as the
/// transport error a run reads it as).
pub(crate) fn stored(result: &BatchResult) -> String {
    match result {
        BatchResult::Body(body) => json!({"body": body}).to_string(),
        BatchResult::Error {
            code,
            message,
            status,
        } => json!({"error": {"code": code, "message": message, "status": status}}).to_string(),
    }
}

/// A request that no result file mentions (its batch failed, or ended without it): kept as
/// an error naming how the batch ended.
pub(crate) fn not_run(how: &str) -> String {
    json!({"error": {"code": "not_run", "message": format!("the batch {how} without running this request"), "status": null}})
        .to_string()
}

/// A stored answer as its run reads it: the body, or the transport error the batch's error
/// stands for (an error the endpoint answered with keeps its status, so a request it refused is
/// not sent again; a request that did not run, expired or cancelled, is sent in a later batch).
pub(crate) fn answer(stored: &str) -> Result<String, TransportError> {
    let value: Value = serde_json::from_str(stored)
        .map_err(|e| TransportError::Connection(format!("a stored answer: {e}")))?;
    if let Some(body) = value.get("body").and_then(Value::as_str) {
        return Ok(body.to_owned());
    }
    let error = value.get("error").cloned().unwrap_or_default();
    let code = error
        .get("code")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let text = format!("{code}: {message}");
    match error.get("status").and_then(Value::as_u64) {
        Some(429) => Err(TransportError::RateLimited { retry_after: None }),
        Some(status @ 500..=599) => Err(TransportError::Server {
            status: status as u16,
            body: text,
        }),
        Some(status) => Err(TransportError::Rejected {
            status: u16::try_from(status).unwrap_or(400),
            body: text,
        }),
        None => Err(TransportError::Connection(text)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_keep_what_a_run_reads_them_as() {
        let body = BatchResult::Body("{\"choices\": []}".into());
        assert_eq!(answer(&stored(&body)), Ok("{\"choices\": []}".into()));
        let expired = BatchResult::Error {
            code: "batch_expired".into(),
            message: "not run in time".into(),
            status: None,
        };
        let read = answer(&stored(&expired)).unwrap_err();
        assert!(read.is_retryable(), "{read}");
        let refused = BatchResult::Error {
            code: "invalid_value".into(),
            message: "bad".into(),
            status: Some(400),
        };
        assert!(!answer(&stored(&refused)).unwrap_err().is_retryable());
        assert!(answer(&not_run("failed")).unwrap_err().is_retryable());
    }
}

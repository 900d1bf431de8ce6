//! Anthropic's Message Batches: the requests sent in the body that makes the batch (each a
//! `custom_id` and the Messages API body as `params`), the batch's state (`processing_status`,
//! `request_counts`, `results_url`), and its results (one line per request: `succeeded` with the
//! message, `errored` with the error, `canceled`, `expired`). The bodies inside are the ones
//! every run sends, and the messages are read by the same codec.

use serde_json::{json, Value};

use super::batch::{answer_as_written, read_page, unread, BatchResult, BatchState, BatchStatus};
use super::types::CodecError;
use super::WireApi;
use crate::read::strict_de::json_value;

/// Requests one batch takes at most.
pub const MAX_BATCH_REQUESTS: usize = 100_000;

/// Bytes of one batch's requests at most.
pub const MAX_BATCH_BYTES: usize = 256 * 1024 * 1024;

fn not_read(message: impl Into<String>) -> CodecError {
    unread(WireApi::Anthropic, message)
}

/// One request: `body` (a Messages API body, JSON) under `custom_id`. `None` when `body` is
/// not JSON.
pub fn request_line(custom_id: &str, body: &str) -> Option<String> {
    let params: Value = json_value(body).ok()?;
    Some(json!({"custom_id": custom_id, "params": params}).to_string())
}

/// The body that makes a batch of `lines` (request lines, one per line).
pub fn create_body(lines: &str) -> String {
    let mut body = String::with_capacity(lines.len() + 16);
    body.push_str("{\"requests\":[");
    for (i, line) in lines.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(line);
    }
    body.push_str("]}");
    body
}

/// A batch (`POST /v1/messages/batches`, `GET /v1/messages/batches/{id}`).
pub fn read_batch(body: &str) -> Result<BatchState, CodecError> {
    let value: Value = json_value(body).map_err(|e| not_read(e.to_string()))?;
    batch_of(&value)
}

fn batch_of(value: &Value) -> Result<BatchState, CodecError> {
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    let id = text("id").ok_or_else(|| not_read("a batch without an id"))?;
    let status = match value.get("processing_status").and_then(Value::as_str) {
        Some("in_progress") => BatchStatus::InProgress,
        Some("canceling") => BatchStatus::Cancelling,
        // Each request's result says whether it ran.
        Some("ended") => BatchStatus::Completed,
        _ => return Err(not_read(format!("batch {id}: no status this reader knows"))),
    };
    let requests = value
        .get("request_counts")
        .and_then(Value::as_object)
        .map(|counts| counts.values().filter_map(Value::as_u64).sum::<u64>());
    Ok(BatchState {
        id,
        status,
        results: text("results_url").into_iter().collect(),
        inline: None,
        tag: None,
        requests,
    })
}

/// A page of batches (`GET /v1/messages/batches`, newest first): the batches, and the id to
/// list after when there are more.
pub fn read_batch_list(body: &str) -> Result<(Vec<BatchState>, Option<String>), CodecError> {
    read_page(WireApi::Anthropic, body, batch_of)
}

/// The HTTP status an error type stands for.
fn status_of(kind: &str) -> u16 {
    match kind {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "billing_error" => 402,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "overloaded_error" => 529,
        _ => 500,
    }
}

/// One result line: its `custom_id` and what became of the request.
pub fn read_result_line(line: &str) -> Result<(String, BatchResult), CodecError> {
    let value: Value = json_value(line).map_err(|e| not_read(e.to_string()))?;
    let custom_id = value
        .get("custom_id")
        .and_then(Value::as_str)
        .ok_or_else(|| not_read("a result line without a custom_id"))?
        .to_owned();
    let result = value
        .get("result")
        .ok_or_else(|| not_read(format!("{custom_id}: no result")))?;
    let kind = result
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let outcome = match kind {
        "succeeded" => {
            let message = result
                .get("message")
                .ok_or_else(|| not_read(format!("{custom_id}: succeeded without a message")))?;
            BatchResult::Body(answer_as_written(line, &["result", "message"], message))
        }
        "errored" => {
            // `{"type": "error", "error": {"type": …, "message": …}}`, or the inner error alone.
            let outer = result.get("error");
            let error = outer
                .and_then(|e| e.get("error"))
                .filter(|e| e.is_object())
                .or(outer);
            let text = |key: &str| {
                error
                    .and_then(|e| e.get(key))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            let code = text("type");
            BatchResult::Error {
                status: Some(status_of(&code)),
                message: text("message"),
                code,
            }
        }
        "canceled" | "expired" => BatchResult::Error {
            code: kind.to_owned(),
            message: format!("the request was {kind} before it ran"),
            status: None,
        },
        other => {
            return Err(not_read(format!(
                "{custom_id}: a result of type {other:?} this reader does not know"
            )))
        }
    };
    Ok((custom_id, outcome))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_go_in_the_body_that_makes_the_batch() {
        let a = request_line("j_1_0", r#"{"model": "m", "max_tokens": 9}"#).unwrap();
        let b = request_line("j_2_0", r#"{"model": "m", "max_tokens": 8}"#).unwrap();
        let body: Value = serde_json::from_str(&create_body(&format!("{a}\n{b}\n"))).unwrap();
        assert_eq!(body["requests"][1]["custom_id"], "j_2_0");
        assert_eq!(body["requests"][0]["params"]["max_tokens"], 9);
        assert!(request_line("x", "not json").is_none());
    }

    #[test]
    fn results_read_as_messages_or_errors() {
        let ok =
            r#"{"custom_id": "a", "result": {"type": "succeeded", "message": {"content": []}}}"#;
        assert_eq!(
            read_result_line(ok).unwrap(),
            ("a".into(), BatchResult::Body(r#"{"content": []}"#.into()))
        );
        let refused = r#"{"custom_id": "b", "result": {"type": "errored", "error": {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}}}"#;
        assert!(matches!(
            read_result_line(refused).unwrap().1,
            BatchResult::Error { ref code, status: Some(400), .. } if code == "invalid_request_error"
        ));
        let expired = r#"{"custom_id": "c", "result": {"type": "expired"}}"#;
        assert!(matches!(
            read_result_line(expired).unwrap().1,
            BatchResult::Error { status: None, .. }
        ));
        assert!(read_result_line(r#"{"custom_id": "d"}"#).is_err());
        assert!(read_result_line(r#"{"custom_id": "d", "result": {"type": "odd"}}"#).is_err());
    }

    /// A request's answer is kept as the line has it, and read as an unbatched body is: a tool
    /// call's input holding a number too long for a float is refused, named (written out again
    /// from a `Value`, it was rounded without a word).
    #[test]
    fn a_result_keeps_its_answer_as_written() {
        let n = "123456789012345678901234567890";
        let line = format!(
            r#"{{"custom_id": "a", "result": {{"type": "succeeded", "message": {{"content": [{{"type": "tool_use", "id": "t", "name": "f", "input": {{"n": {n}}}}}], "stop_reason": "tool_use"}}}}}}"#
        );
        let (_, BatchResult::Body(body)) = read_result_line(&line).unwrap() else {
            panic!("not a body: {line}");
        };
        super::super::batch::assert_refused_by_name(WireApi::Anthropic, "f", &body, n);
    }

    #[test]
    fn a_batch_reads_its_state_counts_and_results_url() {
        let body = r#"{"id": "msgbatch_1", "type": "message_batch", "processing_status": "ended", "request_counts": {"processing": 0, "succeeded": 3, "errored": 1, "canceled": 0, "expired": 1}, "results_url": "https://api.anthropic.com/v1/messages/batches/msgbatch_1/results"}"#;
        let batch = read_batch(body).unwrap();
        assert_eq!(batch.status, BatchStatus::Completed);
        assert_eq!(batch.requests, Some(5));
        assert_eq!(batch.results.len(), 1);
        assert_eq!(batch.tag, None);
        let list = format!(
            r#"{{"data": [{body}], "has_more": true, "first_id": "msgbatch_1", "last_id": "msgbatch_1"}}"#
        );
        let (batches, after) = read_batch_list(&list).unwrap();
        assert_eq!((batches.len(), after.as_deref()), (1, Some("msgbatch_1")));
    }
}

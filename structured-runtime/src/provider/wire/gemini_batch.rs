//! Gemini's batch mode: a batch made with `models/{model}:batchGenerateContent` of requests sent
//! inline (each a `generateContent` body with its `key` in `metadata`) or of an uploaded JSONL
//! file (each line `{"key", "request"}`), its display name (the job's tag), its state (a
//! long-running operation: `metadata.state`, `done`, `response`), and its results: inline
//! (`inlinedResponses`, each with its `metadata.key`) or a responses file (one line per request:
//! `{"key", "response"}` or `{"key", "error"}`). The bodies inside are the ones every run sends,
//! and the responses are read by the same codec.

use serde_json::{json, Value};

use super::batch::{
    http_status_of_grpc, unread, BatchInput, BatchResult, BatchState, BatchStatus, BatchTag,
};
use super::types::CodecError;
use super::WireApi;
use crate::read::strict_de::json_value;

/// Requests one batch takes at most (this reader's bound: the API bounds a batch by its
/// file's size).
pub const MAX_BATCH_REQUESTS: usize = 100_000;

/// Bytes of one batch's request file at most.
pub const MAX_BATCH_BYTES: usize = 2 * 1024 * 1024 * 1024 - 1;

/// Bytes of requests sent inline in the body that makes a batch, at most (past it, a file).
pub const MAX_INLINE_BYTES: usize = 20 * 1000 * 1000;

/// What a batch's display name starts with; the job's key and the chunk's number follow.
const TAG_PREFIX: &str = "structured:";

fn not_read(message: impl Into<String>) -> CodecError {
    unread(WireApi::Gemini, message)
}

/// One line of a request file: `body` (a `generateContent` body, JSON) under `key`. `None`
/// when `body` is not JSON.
pub fn request_line(key: &str, body: &str) -> Option<String> {
    let request: Value = json_value(body).ok()?;
    Some(json!({"key": key, "request": request}).to_string())
}

/// The display name a batch tagged `tag` is made with.
pub fn display_name(tag: &BatchTag) -> String {
    format!("{TAG_PREFIX}{}:{}", tag.job, tag.chunk)
}

fn tag_of(display_name: &str) -> Option<BatchTag> {
    let (job, chunk) = display_name.strip_prefix(TAG_PREFIX)?.rsplit_once(':')?;
    Some(BatchTag {
        job: job.to_owned(),
        chunk: chunk.parse().ok()?,
    })
}

/// The body that makes a batch of `input` (request lines inline, or an uploaded file), tagged
/// `tag` in its display name. `None` when an inline line is not a request line.
pub fn create_body(input: BatchInput<'_>, tag: &BatchTag) -> Option<String> {
    let input_config = match input {
        BatchInput::File(name) => json!({"file_name": name}),
        BatchInput::Inline(lines) => {
            let mut requests = Vec::new();
            for line in lines.lines().filter(|l| !l.trim().is_empty()) {
                let mut line: Value = json_value(line).ok()?;
                let key = line.get("key")?.clone();
                let request = line.get_mut("request")?.take();
                requests.push(json!({"request": request, "metadata": {"key": key}}));
            }
            json!({"requests": {"requests": requests}})
        }
    };
    Some(
        json!({"batch": {"display_name": display_name(tag), "input_config": input_config}})
            .to_string(),
    )
}

/// The file's name (`files/…`) from an upload's answer (`{"file": {"name": …}}`).
pub fn read_file_name(body: &str) -> Result<String, CodecError> {
    let value: Value = json_value(body).map_err(|e| not_read(e.to_string()))?;
    value
        .get("file")
        .unwrap_or(&value)
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| not_read("an uploaded file without a name"))
}

/// A batch: the operation `batchGenerateContent` and `GET batches/…` answer with (its
/// `metadata` the batch, its `response` or `error` once `done`), or the batch itself.
pub fn read_batch(body: &str) -> Result<BatchState, CodecError> {
    let value: Value = json_value(body).map_err(|e| not_read(e.to_string()))?;
    batch_of(&value, Some(body))
}

/// The batch `value` says; `body`: its text, when the batch is the whole body (its inline
/// results are then taken as written).
fn batch_of(value: &Value, body: Option<&str>) -> Result<BatchState, CodecError> {
    let batch = value
        .get("metadata")
        .filter(|m| m.get("state").is_some())
        .unwrap_or(value);
    let id = value
        .get("name")
        .or_else(|| batch.get("name"))
        .and_then(Value::as_str)
        .ok_or_else(|| not_read("a batch without a name"))?
        .to_owned();
    let state = batch
        .get("state")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let state = state
        .strip_prefix("BATCH_STATE_")
        .or_else(|| state.strip_prefix("JOB_STATE_"))
        .unwrap_or(state);
    let mut status = match state {
        "UNSPECIFIED" | "PENDING" | "QUEUED" => BatchStatus::Validating,
        "RUNNING" => BatchStatus::InProgress,
        "SUCCEEDED" => BatchStatus::Completed,
        "FAILED" => BatchStatus::Failed,
        "CANCELLING" => BatchStatus::Cancelling,
        "CANCELLED" => BatchStatus::Cancelled,
        "EXPIRED" => BatchStatus::Expired,
        other => {
            return Err(not_read(format!(
                "batch {id}: state {other:?} this reader does not know"
            )))
        }
    };
    // An operation that ended in an error ran nothing this reader is given.
    if value.get("done").and_then(Value::as_bool) == Some(true)
        && value.get("error").is_some_and(|e| !e.is_null())
        && !status.is_final()
    {
        status = BatchStatus::Failed;
    }
    // Where the output is, as a path: the value and (for the inline results) the text are both
    // read there.
    let output_at: &[&str] = match value.get("response") {
        Some(_) => &["response"],
        None if std::ptr::eq(batch, value) => &["output"],
        None => &["metadata", "output"],
    };
    let follow = |path: &[&str]| path.iter().try_fold(value, |at, key| at.get(key));
    let output = follow(output_at).filter(|o| o.is_object());
    let results = output
        .and_then(|o| o.get("responsesFile"))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .into_iter()
        .collect();
    // (The list, or an object holding it under the same name.)
    let mut inlined_at = output_at.to_vec();
    inlined_at.push("inlinedResponses");
    let nested = output
        .and_then(|o| o.get("inlinedResponses"))
        .is_some_and(|r| r.get("inlinedResponses").is_some());
    if nested {
        inlined_at.push("inlinedResponses");
    }
    let written = body.and_then(|body| super::batch::written_items(body, &inlined_at));
    let inline = output
        .and(follow(&inlined_at))
        .and_then(Value::as_array)
        .map(|items| {
            // Each item as written, its key read from its metadata (`read_result_line`); else
            // (a batch in a list) rebuilt from the value.
            if let Some(written) = written.as_ref().filter(|w| w.len() == items.len()) {
                let mut lines = written.join("\n");
                lines.push('\n');
                return lines;
            }
            let mut lines = String::new();
            for item in items {
                let key = item.get("metadata").and_then(|m| m.get("key")).cloned();
                let mut line = json!({"key": key.unwrap_or(Value::Null)});
                for field in ["response", "error"] {
                    if let Some(v) = item.get(field) {
                        line[field] = v.clone();
                    }
                }
                lines.push_str(&line.to_string());
                lines.push('\n');
            }
            lines
        });
    let requests = batch
        .get("batchStats")
        .and_then(|s| s.get("requestCount"))
        .and_then(|n| n.as_u64().or_else(|| n.as_str()?.parse().ok()));
    Ok(BatchState {
        id,
        status,
        results,
        inline,
        tag: batch
            .get("displayName")
            .and_then(Value::as_str)
            .and_then(tag_of),
        requests,
    })
}

/// A page of batches (`GET batches`): the batches, and the page token to list after when
/// there are more.
pub fn read_batch_list(body: &str) -> Result<(Vec<BatchState>, Option<String>), CodecError> {
    let value: Value = json_value(body).map_err(|e| not_read(e.to_string()))?;
    let batches = match value.get("operations").or_else(|| value.get("batches")) {
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| batch_of(item, None))
            .collect::<Result<Vec<_>, _>>()?,
        // An empty page may leave the list out.
        None => Vec::new(),
        Some(_) => return Err(not_read("a list whose operations are not a list")),
    };
    let next = value
        .get("nextPageToken")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .map(str::to_owned);
    Ok((batches, next))
}

/// One result line: its key and what became of the request.
pub fn read_result_line(line: &str) -> Result<(String, BatchResult), CodecError> {
    let value: Value = json_value(line).map_err(|e| not_read(e.to_string()))?;
    // (An inline result, as the batch holds it, names its key in its metadata.)
    let key = value
        .get("key")
        .or_else(|| value.get("metadata").and_then(|m| m.get("key")))
        .and_then(Value::as_str)
        .ok_or_else(|| not_read("a result line without a key"))?
        .to_owned();
    if let Some(error) = value
        .get("error")
        .or_else(|| value.get("status"))
        .filter(|e| e.is_object())
    {
        let code = error.get("code").and_then(Value::as_u64).unwrap_or(2);
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        return Ok((
            key,
            BatchResult::Error {
                code: code.to_string(),
                message,
                status: Some(http_status_of_grpc(code)),
            },
        ));
    }
    let response = value
        .get("response")
        .filter(|r| r.is_object())
        .ok_or_else(|| not_read(format!("{key}: neither a response nor an error")))?;
    let body = super::batch::answer_as_written(line, &["response"], response);
    Ok((key, BatchResult::Body(body)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag() -> BatchTag {
        BatchTag {
            job: "18f-2a".into(),
            chunk: 4,
        }
    }

    #[test]
    fn a_batch_is_made_of_inline_requests_or_a_file_under_its_tag() {
        let a = request_line("k_1_0", r#"{"contents": [], "generationConfig": {}}"#).unwrap();
        let body: Value = serde_json::from_str(
            &create_body(BatchInput::Inline(&format!("{a}\n")), &tag()).unwrap(),
        )
        .unwrap();
        let requests = &body["batch"]["input_config"]["requests"]["requests"];
        assert_eq!(requests[0]["metadata"]["key"], "k_1_0");
        assert!(requests[0]["request"]["contents"].is_array());
        assert_eq!(
            tag_of(body["batch"]["display_name"].as_str().unwrap()),
            Some(tag())
        );
        let file: Value =
            serde_json::from_str(&create_body(BatchInput::File("files/x"), &tag()).unwrap())
                .unwrap();
        assert_eq!(file["batch"]["input_config"]["file_name"], "files/x");
        assert!(create_body(BatchInput::Inline("{\"no\": 1}"), &tag()).is_none());
    }

    #[test]
    fn an_operation_reads_its_state_and_results() {
        let running = r#"{"name": "batches/1", "metadata": {"@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch", "displayName": "structured:18f-2a:4", "state": "BATCH_STATE_RUNNING", "batchStats": {"requestCount": "2", "pendingRequestCount": "2"}, "name": "batches/1"}}"#;
        let batch = read_batch(running).unwrap();
        assert_eq!(
            (batch.status, batch.requests),
            (BatchStatus::InProgress, Some(2))
        );
        assert_eq!(batch.tag, Some(tag()));
        let done = r#"{"name": "batches/1", "metadata": {"state": "BATCH_STATE_SUCCEEDED", "displayName": "x"}, "done": true, "response": {"@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput", "inlinedResponses": {"inlinedResponses": [{"response": {"candidates": []}, "metadata": {"key": "k_1_0"}}, {"error": {"code": 3, "message": "bad"}, "metadata": {"key": "k_2_0"}}]}}}"#;
        let batch = read_batch(done).unwrap();
        assert_eq!((batch.status, batch.tag), (BatchStatus::Completed, None));
        let lines: Vec<(String, BatchResult)> = batch
            .inline
            .unwrap()
            .lines()
            .map(|l| read_result_line(l).unwrap())
            .collect();
        assert_eq!(
            lines[0],
            (
                "k_1_0".into(),
                BatchResult::Body(r#"{"candidates": []}"#.into())
            )
        );
        assert!(matches!(
            lines[1].1,
            BatchResult::Error {
                status: Some(400),
                ..
            }
        ));
        let file = r#"{"name": "batches/2", "metadata": {"state": "BATCH_STATE_SUCCEEDED"}, "done": true, "response": {"responsesFile": "files/out-2"}}"#;
        assert_eq!(read_batch(file).unwrap().results, ["files/out-2"]);
        let list = format!(r#"{{"operations": [{running}], "nextPageToken": "p2"}}"#);
        let (batches, next) = read_batch_list(&list).unwrap();
        assert_eq!((batches.len(), next.as_deref()), (1, Some("p2")));
        assert!(read_batch_list("{}").unwrap().0.is_empty());
    }

    /// An inline result is kept as the batch's body has it (pretty-printed, here), and read as an
    /// unbatched body is: a function call's argument too long for a float is refused, named,
    /// where the result rebuilt from a `Value` had it rounded without a word.
    #[test]
    fn an_inline_result_keeps_its_answer_as_written() {
        let n = "123456789012345678901234567890";
        let done = format!(
            r#"{{
  "name": "batches/1",
  "metadata": {{"state": "BATCH_STATE_SUCCEEDED"}},
  "done": true,
  "response": {{"inlinedResponses": {{"inlinedResponses": [
    {{"response": {{"candidates": [{{"content": {{"parts": [{{"functionCall": {{"name": "t", "args": {{"id": {n}}}}}}}], "role": "model"}}, "finishReason": "STOP"}}]}},
     "metadata": {{"key": "k_1_0"}}}}
  ]}}}}
}}"#
        );
        let batch = read_batch(&done).unwrap();
        let lines = batch.inline.unwrap();
        let (key, BatchResult::Body(body)) = read_result_line(lines.trim_end()).unwrap() else {
            panic!("not a body: {lines}");
        };
        assert_eq!(key, "k_1_0");
        super::super::batch::assert_refused_by_name(super::WireApi::Gemini, "t", &body, n);
    }
}

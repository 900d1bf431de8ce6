//! What the providers' batch APIs share: a batch's state ([`BatchState`]), what became of one
//! request ([`BatchResult`]), a batch's requests ([`BatchInput`]) and tag ([`BatchTag`]). Each
//! API's own formats are in its file: `openai_batch.rs` (OpenAI's Batch API),
//! `anthropic_batch.rs` (Message Batches), `gemini_batch.rs` (Gemini's batch mode); which one a
//! provider kind goes through is `batch_wire.rs`.

use serde_json::Value;

use super::types::CodecError;
use super::WireApi;
use crate::read::strict_de::json_value;

/// A request's answer in a result line (already read as `line`, the answer at `path` in it), as
/// the line has it: read later as an unbatched body is, its numbers and keys as they came (a
/// `Value` written out again would have read them already, a number too long for a float
/// changed without a word). `answer` written out where `path` names nothing in the text.
pub(super) fn answer_as_written(line: &str, path: &[&str], answer: &Value) -> String {
    written_at(line, path).map_or_else(|| answer.to_string(), str::to_owned)
}

/// The text of the member `path` names in `json`, as written; `None` where it names nothing.
fn written_at<'a>(json: &'a str, path: &[&str]) -> Option<&'a str> {
    use std::borrow::Cow;
    use std::collections::HashMap;
    let mut at = json;
    for key in path {
        let members: HashMap<Cow<'a, str>, &'a serde_json::value::RawValue> =
            serde_json::from_str(at).ok()?;
        at = members.get(*key)?.get();
    }
    Some(at)
}

/// The texts of the items of the list `path` names in `json`, each as written on one line (a line
/// break between tokens is a space; one inside a string is always escaped). `None` where `path`
/// names no list.
pub(super) fn written_items(json: &str, path: &[&str]) -> Option<Vec<String>> {
    let list: Vec<&serde_json::value::RawValue> =
        serde_json::from_str(written_at(json, path)?).ok()?;
    Some(
        list.iter()
            .map(|item| item.get().replace(['\n', '\r'], " "))
            .collect(),
    )
}

/// That a body kept as written reads as an unbatched body does: `number`, too long for a float,
/// is refused by name, not rounded.
#[cfg(test)]
pub(super) fn assert_refused_by_name(api: WireApi, tool: &str, body: &str, number: &str) {
    assert!(body.contains(number), "{body}");
    let read = super::read_response(api, &super::Expect::tool(tool), body);
    assert!(
        matches!(&read, Err(CodecError::NotJson { message, .. }) if message.contains(number)),
        "{read:?}"
    );
}

/// Where a batch is, in terms every API maps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchStatus {
    /// Its requests are being checked, or wait to run.
    Validating,
    /// It was refused as a whole: no request ran.
    Failed,
    /// Running.
    InProgress,
    /// Its results are being written.
    Finalizing,
    /// It ended: each request's result is there (some may say they did not run).
    Completed,
    /// Its window passed: what did not run says so, or is missing.
    Expired,
    /// Being cancelled.
    Cancelling,
    /// Cancelled: what did not run says so, or is missing.
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

    /// How it ended, for a request it did not run ("expired", "was cancelled", ...).
    pub fn ended(self) -> &'static str {
        match self {
            BatchStatus::Expired => "expired",
            BatchStatus::Cancelled | BatchStatus::Cancelling => "was cancelled",
            BatchStatus::Failed => "failed",
            _ => "ended",
        }
    }
}

/// The job and chunk a batch was made for, kept with the batch where the API keeps a tag
/// (OpenAI's `metadata`, Gemini's display name): how a batch made just before a job stopped is
/// found again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchTag {
    /// The job's key.
    pub job: String,
    /// The chunk's number in the job.
    pub chunk: i64,
}

/// A batch as the API describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchState {
    /// Its id (a Gemini batch's resource name, `batches/…`).
    pub id: String,
    /// Where it is.
    pub status: BatchStatus,
    /// Where its results are read from once it ended ([`crate::batch::BatchApi::download`]):
    /// OpenAI's output and error file ids, Gemini's responses file, Anthropic's results URL.
    pub results: Vec<String>,
    /// Results the batch carries itself (Gemini's inlined responses), as result lines.
    pub inline: Option<String>,
    /// The tag it was made with, when the API keeps one.
    pub tag: Option<BatchTag>,
    /// How many requests it holds, when the API says.
    pub requests: Option<u64>,
}

/// What a batch says of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchResult {
    /// The endpoint's response body (a chat completion, a response, a message, a
    /// `generateContent` response), to read as any answer of that API.
    Body(String),
    /// No response: the request failed (`status` when the endpoint answered with an error) or
    /// did not run (expired, cancelled: no status).
    Error {
        /// The error's code or type.
        code: String,
        /// What it says.
        message: String,
        /// The endpoint's HTTP status (or the one its error stands for), when it answered.
        status: Option<u16>,
    },
}

/// A batch's requests, as a batch is made of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchInput<'a> {
    /// An uploaded request file's id.
    File(&'a str),
    /// The request lines themselves (JSON lines), sent in the body that makes the batch.
    Inline(&'a str),
}

/// The HTTP status a gRPC status code stands for (Gemini's errors carry gRPC codes).
pub(crate) fn http_status_of_grpc(code: u64) -> u16 {
    match code {
        3 | 9 | 11 => 400,
        16 => 401,
        7 => 403,
        5 => 404,
        6 | 10 => 409,
        8 => 429,
        1 => 499,
        4 => 504,
        14 => 503,
        12 => 501,
        _ => 500,
    }
}

/// A batch API's body this reader could not read.
pub(crate) fn unread(api: WireApi, message: impl Into<String>) -> CodecError {
    CodecError::NotJson {
        api,
        message: message.into(),
    }
}

/// A page of batches as OpenAI and Anthropic write it (`data`, `has_more`, `last_id`): the
/// batches, each read by `batch_of`, and the id to list after when there are more.
pub(crate) fn read_page(
    api: WireApi,
    body: &str,
    batch_of: fn(&Value) -> Result<BatchState, CodecError>,
) -> Result<(Vec<BatchState>, Option<String>), CodecError> {
    let value: Value = json_value(body).map_err(|e| unread(api, e.to_string()))?;
    let batches = value
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| unread(api, "a list without data"))?
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

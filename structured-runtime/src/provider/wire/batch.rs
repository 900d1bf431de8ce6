//! What the providers' batch APIs share: a batch's state ([`BatchState`]), what became of one
//! request ([`BatchResult`]), and which API a provider kind's batches go through
//! ([`BatchWire`]), with that API's request lines, ids, tags and limits. Each API's own formats
//! are in its file: `openai_batch.rs` (OpenAI's Batch API), `anthropic_batch.rs` (Message
//! Batches), `gemini_batch.rs` (Gemini's batch mode).

use super::types::CodecError;
use super::{anthropic_batch, gemini_batch, openai_batch};
use crate::provider::capabilities::ProviderKind;

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

/// Which batch API a provider kind's batches go through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchWire {
    /// OpenAI's Batch API, for the chat completions or responses endpoint (`/v1/files`,
    /// `/v1/batches`).
    OpenAi {
        /// `/v1/chat/completions` or `/v1/responses`.
        endpoint: &'static str,
    },
    /// Anthropic's Message Batches (`/v1/messages/batches`).
    Anthropic,
    /// Gemini's batch mode (`models/{model}:batchGenerateContent`, `batches/…`).
    Gemini,
}

impl BatchWire {
    /// The batch API of `kind`; `None` for a kind without one.
    pub fn of(kind: ProviderKind) -> Option<BatchWire> {
        match kind {
            ProviderKind::OpenAiChat => Some(BatchWire::OpenAi {
                endpoint: "/v1/chat/completions",
            }),
            ProviderKind::OpenAiResponses => Some(BatchWire::OpenAi {
                endpoint: "/v1/responses",
            }),
            ProviderKind::Anthropic => Some(BatchWire::Anthropic),
            ProviderKind::Gemini => Some(BatchWire::Gemini),
            _ => None,
        }
    }

    /// Requests one batch takes at most.
    pub fn max_requests(self) -> usize {
        match self {
            BatchWire::OpenAi { .. } => openai_batch::MAX_BATCH_REQUESTS,
            BatchWire::Anthropic => anthropic_batch::MAX_BATCH_REQUESTS,
            BatchWire::Gemini => gemini_batch::MAX_BATCH_REQUESTS,
        }
    }

    /// Bytes of one batch's requests at most.
    pub fn max_bytes(self) -> usize {
        match self {
            BatchWire::OpenAi { .. } => openai_batch::MAX_BATCH_BYTES,
            BatchWire::Anthropic => anthropic_batch::MAX_BATCH_BYTES,
            BatchWire::Gemini => gemini_batch::MAX_BATCH_BYTES,
        }
    }

    /// Bytes of requests sent inline in the body that makes a batch, at most; a larger batch
    /// is uploaded as a file first. OpenAI takes files only (0), Anthropic requests only.
    pub fn max_inline_bytes(self) -> usize {
        match self {
            BatchWire::OpenAi { .. } => 0,
            BatchWire::Anthropic => usize::MAX,
            BatchWire::Gemini => gemini_batch::MAX_INLINE_BYTES,
        }
    }

    /// Whether a batch keeps the tag it was made with (so a batch made just before a job
    /// stopped is found again by it); Anthropic's keep none.
    pub fn keeps_tags(self) -> bool {
        !matches!(self, BatchWire::Anthropic)
    }

    /// The id of request `n` (from 0) of item `seq`'s run in job `job`. OpenAI's batches are
    /// found by their tag, so `seq.n` serves; Anthropic's ids allow letters, digits, `-` and
    /// `_` only, and carry the job's key, so a batch's results show whose they are.
    pub fn custom_id(self, job: &str, seq: i64, n: usize) -> String {
        match self {
            BatchWire::OpenAi { .. } => format!("{seq}.{n}"),
            BatchWire::Anthropic | BatchWire::Gemini => {
                let job: String = job
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .take(40)
                    .collect();
                format!("{job}_{seq}_{n}")
            }
        }
    }

    /// One request line: `body` (a request body, JSON) under `custom_id`; `None` when `body`
    /// is not JSON.
    pub fn request_line(self, custom_id: &str, body: &str) -> Option<String> {
        match self {
            BatchWire::OpenAi { endpoint } => openai_batch::request_line(custom_id, endpoint, body),
            BatchWire::Anthropic => anthropic_batch::request_line(custom_id, body),
            BatchWire::Gemini => gemini_batch::request_line(custom_id, body),
        }
    }

    /// A batch as the API writes it (made, or looked at).
    pub fn read_batch(self, body: &str) -> Result<BatchState, CodecError> {
        match self {
            BatchWire::OpenAi { .. } => openai_batch::read_batch(body),
            BatchWire::Anthropic => anthropic_batch::read_batch(body),
            BatchWire::Gemini => gemini_batch::read_batch(body),
        }
    }

    /// A page of batches as the API writes it: the batches, and where the next page starts.
    pub fn read_batch_list(
        self,
        body: &str,
    ) -> Result<(Vec<BatchState>, Option<String>), CodecError> {
        match self {
            BatchWire::OpenAi { .. } => openai_batch::read_batch_list(body),
            BatchWire::Anthropic => anthropic_batch::read_batch_list(body),
            BatchWire::Gemini => gemini_batch::read_batch_list(body),
        }
    }

    /// One result line: the request's `custom_id` and what became of it.
    pub fn read_result_line(self, line: &str) -> Result<(String, BatchResult), CodecError> {
        match self {
            BatchWire::OpenAi { .. } => openai_batch::read_result_line(line),
            BatchWire::Anthropic => anthropic_batch::read_result_line(line),
            BatchWire::Gemini => gemini_batch::read_result_line(line),
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_what_each_api_takes() {
        let open = BatchWire::of(ProviderKind::OpenAiChat).unwrap();
        assert_eq!(open.custom_id("j", 7, 1), "7.1");
        let anthropic = BatchWire::of(ProviderKind::Anthropic).unwrap();
        let id = anthropic.custom_id("18f3a9c2d-1a2b", 7, 1);
        assert_eq!(id, "18f3a9c2d-1a2b_7_1");
        assert!(id.len() <= 64);
        assert!(id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
        assert!(BatchWire::of(ProviderKind::Ollama).is_none());
        assert!(!anthropic.keeps_tags() && open.keeps_tags());
    }
}

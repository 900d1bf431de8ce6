//! Which batch API a provider kind's batches go through ([`BatchWire`]), and that API's
//! request lines, ids, tags, limits and readers, from its own file.

use super::batch::{BatchResult, BatchState};
use super::types::CodecError;
use super::{anthropic_batch, gemini_batch, openai_batch};
use crate::provider::capabilities::ProviderKind;

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

    /// Whether the API makes a batch of an uploaded file (OpenAI always, Gemini past its
    /// inline limit); Anthropic's take their requests inline only.
    pub fn takes_files(self) -> bool {
        !matches!(self, BatchWire::Anthropic)
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

//! A provider that streams a recorded OpenAI Chat answer: the text in 5-character deltas, the
//! SSE body in 7-byte pieces.

use serde_json::json;

/// Streams an OpenAI Chat body of `answer` in deltas of a few bytes.
pub struct StreamingOpenAi(pub String);

impl structured_runtime::Provider for StreamingOpenAi {
    fn kind(&self) -> structured_runtime::provider::capabilities::ProviderKind {
        structured_runtime::provider::capabilities::ProviderKind::OpenAiChat
    }
    fn model(&self) -> &str {
        "gpt-4o"
    }
    #[allow(clippy::manual_async_fn)] // the trait's signature, as callers see it
    fn send(
        &self,
        _: &str,
    ) -> impl std::future::Future<Output = Result<String, structured_runtime::run::TransportError>> + Send
    {
        async { Err(structured_runtime::run::TransportError::Timeout) }
    }
    fn streams(&self) -> bool {
        true
    }
    fn send_stream<'a>(
        &'a self,
        _: &'a str,
        on_bytes: &'a mut structured_runtime::run::OnBytes<'a>,
    ) -> impl std::future::Future<Output = Result<String, structured_runtime::run::TransportError>>
           + Send
           + 'a {
        let chars: Vec<char> = self.0.chars().collect();
        let mut body = String::new();
        for piece in chars.chunks(5) {
            let text: String = piece.iter().collect();
            body += &format!(
                "data: {}\n\n",
                json!({"choices": [{"index": 0, "delta": {"content": text}}]})
            );
        }
        body += "data: {\"choices\": [{\"index\": 0, \"delta\": {}, \"finish_reason\": \"stop\"}]}\n\ndata: [DONE]\n\n";
        async move {
            for chunk in body.as_bytes().chunks(7) {
                if !on_bytes(chunk) {
                    break;
                }
            }
            Ok(body)
        }
    }
}

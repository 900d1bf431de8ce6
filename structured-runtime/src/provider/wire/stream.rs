//! Streamed responses: the events of each API assembled into the body it sends unstreamed, and
//! the structured answer's text handed out delta by delta while they arrive.
//!
//! One assembler per API (in that API's module) takes the events one at a time, so a body read
//! whole ([`read_stream`]) and one fed a chunk at a time ([`StreamDecoder`]) go through the same
//! code. The end of a stream is read like an unstreamed body: a refusal, a content filter or a
//! truncation mid-stream is the same typed outcome as in [`super::read_response`], and a stream
//! cut before its final event is an error, never a complete-looking answer.

use serde_json::Value;

use super::sse::{problem, Event, Framing, Splitter};
use super::types::{CodecError, Expect, ProviderResponse, WireApi};
use super::{anthropic, gemini, ollama, openai_chat, openai_responses, read_response_value};

/// A streamed body is refused beyond this many bytes (the unstreamed limit of the transport).
pub const MAX_STREAM_BYTES: usize = 32 * 1024 * 1024;

/// The events of one API's stream, assembled.
enum Assembler {
    Chat(openai_chat::Assembler),
    Responses(openai_responses::Assembler),
    Anthropic(anthropic::Assembler),
    Gemini(gemini::Assembler),
    Ollama(ollama::Assembler),
}

impl Assembler {
    fn new(api: WireApi) -> Self {
        match api {
            WireApi::OpenAiChat => Assembler::Chat(Default::default()),
            WireApi::OpenAiResponses => Assembler::Responses(Default::default()),
            WireApi::Anthropic => Assembler::Anthropic(Default::default()),
            WireApi::Gemini => Assembler::Gemini(Default::default()),
            WireApi::OllamaChat => Assembler::Ollama(Default::default()),
        }
    }

    fn event(
        &mut self,
        event: &Event,
        expect: &Expect,
        answer: &mut String,
    ) -> Result<(), CodecError> {
        match self {
            Assembler::Chat(a) => a.event(event, expect, answer),
            Assembler::Responses(a) => a.event(event, expect, answer),
            Assembler::Anthropic(a) => a.event(event, expect, answer),
            Assembler::Gemini(a) => a.event(event, expect, answer),
            Assembler::Ollama(a) => a.event(event, expect, answer),
        }
    }

    fn finish(self) -> Result<Value, CodecError> {
        match self {
            Assembler::Chat(a) => a.finish(),
            Assembler::Responses(a) => a.finish(),
            Assembler::Anthropic(a) => a.finish(),
            Assembler::Gemini(a) => a.finish(),
            Assembler::Ollama(a) => a.finish(),
        }
    }
}

fn framing(api: WireApi) -> Framing {
    match api {
        WireApi::OllamaChat => Framing::Ndjson,
        _ => Framing::Sse,
    }
}

/// Reads a streamed response read whole (the raw server-sent-event or NDJSON text): the events
/// are assembled into the body the API sends unstreamed, which is then read like one. A stream
/// without its final event (`data: [DONE]`, `message_stop`, a finish reason) was cut, and is an
/// error rather than a short answer.
pub fn read_stream(
    api: WireApi,
    expect: &Expect,
    text: &str,
) -> Result<ProviderResponse, CodecError> {
    let mut decoder = StreamDecoder::new(api, expect.clone());
    decoder.feed(text.as_bytes())?;
    decoder.finish()
}

/// Decodes a provider's streamed response as it arrives: the structured answer's text (the
/// message's text, or the arguments of the tool the model was made to call) as each chunk
/// brings it, then the response as [`super::read_response`] reads an unstreamed one.
///
/// ```
/// use structured_runtime::provider::wire::{Expect, StreamDecoder, WireApi};
/// use structured_runtime::StructuredOutputMode;
///
/// let mut decoder = StreamDecoder::new(WireApi::OpenAiChat, Expect::new(StructuredOutputMode::SchemaEnforced));
/// let mut answer = decoder.feed(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{\\\"ok\\\"\"}}]}\n\nda")?;
/// answer += &decoder.feed(b"ta: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\": true}\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")?;
/// assert_eq!(answer, r#"{"ok": true}"#);
/// assert!(decoder.finish().is_ok());
/// # Ok::<(), structured_runtime::provider::wire::CodecError>(())
/// ```
pub struct StreamDecoder {
    api: WireApi,
    expect: Expect,
    splitter: Splitter,
    assembler: Assembler,
    events: Vec<Event>,
    bytes: usize,
}

impl StreamDecoder {
    /// A decoder for a stream of `api` answering a request made as `expect` says.
    pub fn new(api: WireApi, expect: Expect) -> Self {
        StreamDecoder {
            api,
            expect,
            splitter: Splitter::new(framing(api)),
            assembler: Assembler::new(api),
            events: Vec::new(),
            bytes: 0,
        }
    }

    /// Reads the next bytes of the body; the answer text they complete (empty when they end
    /// inside an event, or bring none).
    pub fn feed(&mut self, bytes: &[u8]) -> Result<String, CodecError> {
        self.bytes = self.bytes.saturating_add(bytes.len());
        if self.bytes > MAX_STREAM_BYTES {
            return Err(problem(
                self.api,
                format!("the stream is longer than {MAX_STREAM_BYTES} bytes"),
            ));
        }
        self.splitter.push(bytes, &mut self.events);
        self.take_events()
    }

    /// The stream has ended: the response, read as an unstreamed body is.
    pub fn finish(mut self) -> Result<ProviderResponse, CodecError> {
        self.splitter.end(&mut self.events);
        self.take_events()?;
        let body = self.assembler.finish()?;
        read_response_value(self.api, &self.expect, &body)
    }

    fn take_events(&mut self) -> Result<String, CodecError> {
        let mut answer = String::new();
        for event in self.events.drain(..) {
            self.assembler.event(&event, &self.expect, &mut answer)?;
        }
        Ok(answer)
    }
}

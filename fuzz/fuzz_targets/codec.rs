//! Provider response bodies and streams from arbitrary bytes: read or a typed error, never a
//! panic; what is read as a candidate is text the pipeline can take.
#![no_main]

use libfuzzer_sys::fuzz_target;
use structured_runtime::provider::wire::{read_response, read_stream, Expect, WireApi};
use structured_runtime::StructuredOutputMode;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let expects = [
        Expect::new(StructuredOutputMode::SchemaEnforced),
        Expect::new(StructuredOutputMode::PromptGuided),
        Expect::tool("t"),
    ];
    for api in [
        WireApi::OpenAiChat,
        WireApi::OpenAiResponses,
        WireApi::Anthropic,
        WireApi::Gemini,
        WireApi::OllamaChat,
    ] {
        for expect in &expects {
            let _ = read_response(api, expect, text);
            let _ = read_stream(api, expect, text);
        }
    }
});

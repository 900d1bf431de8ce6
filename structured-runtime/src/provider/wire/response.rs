//! Each provider's response envelope read into an [`Outcome`] (`PROVIDERS.md` §6). The
//! envelope's own signals come first: refusal, filter and truncation are read before any text.

use serde_json::Value;

use super::{
    CodecError, Expect, Outcome, ProviderResponse, StructuredCandidate, ToolCall, Usage, WireApi,
};
use crate::provider::mode::StructuredOutputMode;

pub(super) fn read(
    api: WireApi,
    expect: &Expect,
    body: &Value,
) -> Result<ProviderResponse, CodecError> {
    let r = Reader { api, body };
    if !body.is_object() {
        return Err(r.shape("", "a JSON object"));
    }
    if let Some(error) = body.get("error").filter(|e| !e.is_null()) {
        return Err(CodecError::ProviderError {
            api,
            message: error_message(error),
        });
    }
    match api {
        WireApi::OpenAiChat => r.openai_chat(expect),
        WireApi::OpenAiResponses => r.openai_responses(expect),
        WireApi::Anthropic => r.anthropic(expect),
        WireApi::Gemini => r.gemini(expect),
        WireApi::OllamaChat => r.ollama(expect),
    }
}

struct Reader<'b> {
    api: WireApi,
    body: &'b Value,
}

impl<'b> Reader<'b> {
    fn shape(&self, pointer: &str, expected: &'static str) -> CodecError {
        let found = match self.body.pointer(pointer) {
            None => "nothing".to_owned(),
            Some(v) => shorten(&v.to_string(), 80),
        };
        CodecError::Shape {
            api: self.api,
            pointer: pointer.to_owned(),
            expected,
            found,
        }
    }

    /// An optional string field: absent or null is `None`, another type is a shape error.
    fn opt_str(&self, pointer: &str) -> Result<Option<&'b str>, CodecError> {
        match self.body.pointer(pointer) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(self.shape(pointer, "a string")),
        }
    }

    fn array(&self, pointer: &str) -> Result<&'b [Value], CodecError> {
        match self.body.pointer(pointer) {
            Some(Value::Array(items)) => Ok(items),
            _ => Err(self.shape(pointer, "an array")),
        }
    }

    fn opt_array(&self, pointer: &str) -> Result<&'b [Value], CodecError> {
        match self.body.pointer(pointer) {
            None | Some(Value::Null) => Ok(&[]),
            Some(Value::Array(items)) => Ok(items),
            Some(_) => Err(self.shape(pointer, "an array")),
        }
    }

    fn usage(&self, input: &str, output: &str) -> Option<Usage> {
        let get = |p: &str| self.body.pointer(p).and_then(Value::as_u64);
        match (get(input), get(output)) {
            (None, None) => None,
            (i, o) => Some(Usage {
                input_tokens: i.unwrap_or(0),
                output_tokens: o.unwrap_or(0),
            }),
        }
    }

    // ---- OpenAI Chat ------------------------------------------------------------------

    fn openai_chat(&self, expect: &Expect) -> Result<ProviderResponse, CodecError> {
        // The first choice is the answer (a request for `n > 1` reads the others itself).
        let choices = self.array("/choices")?;
        if choices.is_empty() {
            return Err(self.shape("/choices", "at least one choice"));
        }
        let finish = self.opt_str("/choices/0/finish_reason")?;
        let content = self.opt_str("/choices/0/message/content")?;
        let refusal = self.opt_str("/choices/0/message/refusal")?;
        let mut calls = Vec::new();
        for (i, call) in self
            .opt_array("/choices/0/message/tool_calls")?
            .iter()
            .enumerate()
        {
            let base = format!("/choices/0/message/tool_calls/{i}");
            let name = self
                .opt_str(&format!("{base}/function/name"))?
                .ok_or_else(|| self.shape(&format!("{base}/function/name"), "a tool name"))?;
            let arguments = self
                .opt_str(&format!("{base}/function/arguments"))?
                .unwrap_or_default();
            calls.push((
                ToolCall {
                    id: call.get("id").and_then(Value::as_str).map(str::to_owned),
                    name: name.to_owned(),
                },
                arguments.to_owned(),
            ));
        }
        let outcome = decide(
            expect,
            Signals {
                truncated: (finish == Some("length")).then_some("length"),
                filtered: (finish == Some("content_filter")).then_some("content_filter"),
                refusal: refusal
                    .filter(|r| !r.is_empty())
                    .map(|r| (Some(r.to_owned()), None)),
                text: content.map(str::to_owned),
                calls,
                malformed_call: None,
            },
        );
        Ok(ProviderResponse {
            outcome,
            usage: self.usage("/usage/prompt_tokens", "/usage/completion_tokens"),
            stop_reason: finish.map(str::to_owned),
        })
    }

    // ---- OpenAI Responses -------------------------------------------------------------

    fn openai_responses(&self, expect: &Expect) -> Result<ProviderResponse, CodecError> {
        // A streaming event (`response.incomplete`, `response.completed`) wraps the response.
        if self
            .body
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| t.starts_with("response."))
        {
            // Unwrapped once: an event inside an event is not the envelope.
            if let Some(inner) = self.body.get("response").filter(|r| r.is_object()) {
                let inner = Reader {
                    api: self.api,
                    body: inner,
                };
                return inner.openai_response_object(expect);
            }
        }
        self.openai_response_object(expect)
    }

    fn openai_response_object(&self, expect: &Expect) -> Result<ProviderResponse, CodecError> {
        let status = self.opt_str("/status")?;
        let reason = self.opt_str("/incomplete_details/reason")?;
        let mut text: Option<String> = None;
        let mut refusal = None;
        let mut calls = Vec::new();
        for (i, item) in self.array("/output")?.iter().enumerate() {
            match item.get("type").and_then(Value::as_str) {
                Some("message") => {
                    for (j, part) in self
                        .opt_array(&format!("/output/{i}/content"))?
                        .iter()
                        .enumerate()
                    {
                        let at = format!("/output/{i}/content/{j}");
                        match part.get("type").and_then(Value::as_str) {
                            Some("output_text") => {
                                let t = self.opt_str(&format!("{at}/text"))?.unwrap_or_default();
                                text.get_or_insert_with(String::new).push_str(t);
                            }
                            Some("refusal") => {
                                refusal =
                                    self.opt_str(&format!("{at}/refusal"))?.map(str::to_owned);
                            }
                            _ => {}
                        }
                    }
                }
                Some("function_call") => {
                    let name = self
                        .opt_str(&format!("/output/{i}/name"))?
                        .unwrap_or_default();
                    let arguments = self
                        .opt_str(&format!("/output/{i}/arguments"))?
                        .unwrap_or_default();
                    calls.push((
                        ToolCall {
                            id: item
                                .get("call_id")
                                .and_then(Value::as_str)
                                .map(str::to_owned),
                            name: name.to_owned(),
                        },
                        arguments.to_owned(),
                    ));
                }
                _ => {}
            }
        }
        let incomplete = status == Some("incomplete");
        let outcome = decide(
            expect,
            Signals {
                truncated: (incomplete && reason != Some("content_filter"))
                    .then_some(reason.unwrap_or("incomplete")),
                filtered: (incomplete && reason == Some("content_filter"))
                    .then_some("content_filter"),
                refusal: refusal.map(|r| (Some(r), None)),
                text,
                calls,
                malformed_call: None,
            },
        );
        Ok(ProviderResponse {
            outcome,
            usage: self.usage("/usage/input_tokens", "/usage/output_tokens"),
            stop_reason: reason.or(status).map(str::to_owned),
        })
    }

    // ---- Anthropic --------------------------------------------------------------------

    fn anthropic(&self, expect: &Expect) -> Result<ProviderResponse, CodecError> {
        let stop = self.opt_str("/stop_reason")?;
        let mut text: Option<String> = None;
        let mut calls = Vec::new();
        for (i, block) in self.array("/content")?.iter().enumerate() {
            match block.get("type").and_then(Value::as_str) {
                // Thinking blocks are not the answer.
                Some("text") => {
                    let t = self
                        .opt_str(&format!("/content/{i}/text"))?
                        .unwrap_or_default();
                    text.get_or_insert_with(String::new).push_str(t);
                }
                Some("tool_use") => {
                    let name = self
                        .opt_str(&format!("/content/{i}/name"))?
                        .unwrap_or_default();
                    // An object when complete; the raw partial JSON when a stream was cut.
                    let input = match block.get("input") {
                        Some(Value::String(partial)) => partial.clone(),
                        Some(v @ Value::Object(_)) => v.to_string(),
                        _ => return Err(self.shape(&format!("/content/{i}/input"), "an object")),
                    };
                    calls.push((
                        ToolCall {
                            id: block.get("id").and_then(Value::as_str).map(str::to_owned),
                            name: name.to_owned(),
                        },
                        input,
                    ));
                }
                _ => {}
            }
        }
        let refusal = (stop == Some("refusal")).then(|| {
            (
                self.body
                    .pointer("/stop_details/explanation")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                self.body
                    .pointer("/stop_details/category")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            )
        });
        let outcome = decide(
            expect,
            Signals {
                truncated: stop
                    .filter(|s| matches!(*s, "max_tokens" | "model_context_window_exceeded")),
                filtered: None,
                refusal,
                text,
                calls,
                malformed_call: None,
            },
        );
        Ok(ProviderResponse {
            outcome,
            usage: self.usage("/usage/input_tokens", "/usage/output_tokens"),
            stop_reason: stop.map(str::to_owned),
        })
    }

    // ---- Gemini -----------------------------------------------------------------------

    fn gemini(&self, expect: &Expect) -> Result<ProviderResponse, CodecError> {
        let usage = self.usage(
            "/usageMetadata/promptTokenCount",
            "/usageMetadata/candidatesTokenCount",
        );
        let candidates = self.opt_array("/candidates")?;
        if candidates.is_empty() {
            let Some(block) = self.opt_str("/promptFeedback/blockReason")? else {
                return Err(
                    self.shape("/candidates", "a candidate or a promptFeedback.blockReason")
                );
            };
            let message = self.opt_str("/promptFeedback/blockReasonMessage")?;
            return Ok(ProviderResponse {
                outcome: Outcome::Filtered {
                    reason: match message {
                        Some(m) => format!("prompt blocked: {block}: {m}"),
                        None => format!("prompt blocked: {block}"),
                    },
                    partial: None,
                },
                usage,
                stop_reason: Some(block.to_owned()),
            });
        }
        let finish = self.opt_str("/candidates/0/finishReason")?;
        let mut text: Option<String> = None;
        let mut calls = Vec::new();
        for (i, part) in self
            .opt_array("/candidates/0/content/parts")?
            .iter()
            .enumerate()
        {
            if part.get("thought").and_then(Value::as_bool) == Some(true) {
                continue;
            }
            if let Some(t) = part.get("text") {
                let t = t.as_str().ok_or_else(|| {
                    self.shape(&format!("/candidates/0/content/parts/{i}/text"), "a string")
                })?;
                text.get_or_insert_with(String::new).push_str(t);
            }
            if let Some(call) = part.get("functionCall") {
                let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
                calls.push((
                    ToolCall {
                        id: call.get("id").and_then(Value::as_str).map(str::to_owned),
                        name: name.to_owned(),
                    },
                    call.get("args")
                        .map(Value::to_string)
                        .unwrap_or_else(|| "{}".into()),
                ));
            }
        }
        let filtered = finish.filter(|f| {
            matches!(
                *f,
                "SAFETY"
                    | "RECITATION"
                    | "BLOCKLIST"
                    | "PROHIBITED_CONTENT"
                    | "SPII"
                    | "LANGUAGE"
                    | "OTHER"
                    | "IMAGE_SAFETY"
                    | "IMAGE_PROHIBITED_CONTENT"
                    | "IMAGE_OTHER"
                    | "IMAGE_RECITATION"
            )
        });
        let filtered = filtered.map(|f| {
            match self
                .body
                .pointer("/candidates/0/finishMessage")
                .and_then(Value::as_str)
            {
                Some(m) => format!("{f}: {m}"),
                None => f.to_owned(),
            }
        });
        let outcome = decide(
            expect,
            Signals {
                truncated: finish.filter(|f| *f == "MAX_TOKENS"),
                filtered: filtered.as_deref(),
                refusal: None,
                text,
                calls,
                malformed_call: finish.filter(|f| {
                    matches!(
                        *f,
                        "MALFORMED_FUNCTION_CALL" | "UNEXPECTED_TOOL_CALL" | "TOO_MANY_TOOL_CALLS"
                    )
                }),
            },
        );
        Ok(ProviderResponse {
            outcome,
            usage,
            stop_reason: finish.map(str::to_owned),
        })
    }

    // ---- Ollama -----------------------------------------------------------------------

    fn ollama(&self, expect: &Expect) -> Result<ProviderResponse, CodecError> {
        if !self.body.get("message").is_some_and(Value::is_object) {
            return Err(self.shape("/message", "a message object"));
        }
        let done = self.opt_str("/done_reason")?;
        let text = self
            .opt_str("/message/content")?
            .filter(|t| !t.is_empty())
            .map(str::to_owned);
        let mut calls = Vec::new();
        for call in self.opt_array("/message/tool_calls")? {
            let name = call
                .pointer("/function/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let arguments = match call.pointer("/function/arguments") {
                Some(Value::String(s)) => s.clone(),
                Some(v) => v.to_string(),
                None => "{}".into(),
            };
            calls.push((
                ToolCall {
                    id: None,
                    name: name.to_owned(),
                },
                arguments,
            ));
        }
        let outcome = decide(
            expect,
            Signals {
                truncated: done.filter(|d| *d == "length"),
                filtered: None,
                refusal: None,
                text,
                calls,
                malformed_call: None,
            },
        );
        Ok(ProviderResponse {
            outcome,
            usage: self.usage("/prompt_eval_count", "/eval_count"),
            stop_reason: done.map(str::to_owned),
        })
    }
}

/// What an envelope said, provider-neutral.
struct Signals<'s> {
    truncated: Option<&'s str>,
    filtered: Option<&'s str>,
    refusal: Option<(Option<String>, Option<String>)>,
    text: Option<String>,
    calls: Vec<(ToolCall, String)>,
    malformed_call: Option<&'s str>,
}

/// The one decision every provider shares: refusal, filter and truncation first, then the
/// candidate the mode expects.
fn decide(expect: &Expect, s: Signals<'_>) -> Outcome {
    if let Some((explanation, category)) = s.refusal {
        return Outcome::Refused {
            explanation,
            category,
        };
    }
    let tool_mode = expect.mode == StructuredOutputMode::ToolUseWorkaround;
    if let Some(reason) = s.filtered {
        return Outcome::Filtered {
            reason: reason.to_owned(),
            partial: s.text.filter(|t| !t.is_empty()),
        };
    }
    if let Some(reason) = s.malformed_call {
        return Outcome::ToolCalledWrongly {
            calls: s.calls.into_iter().map(|(c, _)| c).collect(),
            reason: format!("the provider reported {reason}"),
        };
    }
    let text = s.text.filter(|t| !t.trim().is_empty());
    let candidate = if tool_mode {
        let wanted: Vec<&(ToolCall, String)> = s
            .calls
            .iter()
            .filter(|(c, _)| expect.tool_name.as_deref().is_none_or(|n| n == c.name))
            .collect();
        match (wanted.as_slice(), s.calls.len()) {
            ([(call, input)], 1) => Some(StructuredCandidate {
                text: input.clone(),
                tool_call: Some(call.clone()),
            }),
            (_, 0) => None,
            _ if s.truncated.is_none() => {
                let reason = if wanted.is_empty() {
                    format!(
                        "expected a call to {:?}",
                        expect.tool_name.as_deref().unwrap_or("the tool")
                    )
                } else {
                    format!("expected one tool call, found {}", s.calls.len())
                };
                return Outcome::ToolCalledWrongly {
                    calls: s.calls.into_iter().map(|(c, _)| c).collect(),
                    reason,
                };
            }
            _ => wanted.last().map(|(call, input)| StructuredCandidate {
                text: input.clone(),
                tool_call: Some(call.clone()),
            }),
        }
    } else {
        text.clone().map(|text| StructuredCandidate {
            text,
            tool_call: None,
        })
    };
    if let Some(reason) = s.truncated {
        return Outcome::Truncated {
            partial: candidate.or_else(|| {
                text.map(|text| StructuredCandidate {
                    text,
                    tool_call: None,
                })
            }),
            reason: reason.to_owned(),
        };
    }
    match candidate {
        Some(c) => Outcome::Candidate(c),
        None => Outcome::NoStructuredOutput { text },
    }
}

fn error_message(error: &Value) -> String {
    match error {
        Value::String(s) => s.clone(),
        _ => {
            let kind = error
                .get("type")
                .or_else(|| error.get("status"))
                .and_then(Value::as_str);
            let message = error.get("message").and_then(Value::as_str);
            match (kind, message) {
                (Some(k), Some(m)) => format!("{k}: {m}"),
                (None, Some(m)) => m.to_owned(),
                _ => shorten(&error.to_string(), 80),
            }
        }
    }
}

/// `text` cut to at most `max` bytes (at a character boundary), saying how long it was.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}… ({} bytes)",
        text.get(..end).unwrap_or_default(),
        text.len()
    )
}

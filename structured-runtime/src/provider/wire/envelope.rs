//! What every provider's envelope is read with: typed access to the body that names the place
//! of anything unexpected, and the one decision every provider shares (refusal, filter and
//! truncation first, then the candidate the mode expects).

use serde_json::Value;

use super::types::{CodecError, Expect, Outcome, StructuredCandidate, ToolCall, Usage, WireApi};
use crate::read::mode::StructuredOutputMode;
use crate::read::Answer;
use crate::schema::Pointer;

/// Reads the body of one response (or one stream event).
pub(super) struct Reader<'b> {
    pub(super) api: WireApi,
    pub(super) body: &'b Value,
}

impl<'b> Reader<'b> {
    pub(super) fn new(api: WireApi, body: &'b Value) -> Self {
        Reader { api, body }
    }

    /// The value at `pointer` in the body.
    pub(super) fn at(&self, pointer: &str) -> Option<&'b Value> {
        crate::schema::pointer::lookup(self.body, pointer)
    }

    pub(super) fn shape(&self, pointer: &str, expected: &'static str) -> CodecError {
        let found = match self.at(pointer) {
            None => "nothing".to_owned(),
            Some(v) => shorten(&v.to_string(), 80),
        };
        CodecError::Shape {
            api: self.api,
            pointer: Pointer::parse(pointer).unwrap_or_default(),
            expected,
            found,
        }
    }

    /// An optional string field: absent or null is `None`, another type is a shape error.
    pub(super) fn opt_str(&self, pointer: &str) -> Result<Option<&'b str>, CodecError> {
        match self.at(pointer) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(self.shape(pointer, "a string")),
        }
    }

    pub(super) fn array(&self, pointer: &str) -> Result<&'b [Value], CodecError> {
        match self.at(pointer) {
            Some(Value::Array(items)) => Ok(items),
            _ => Err(self.shape(pointer, "an array")),
        }
    }

    pub(super) fn opt_array(&self, pointer: &str) -> Result<&'b [Value], CodecError> {
        match self.at(pointer) {
            None | Some(Value::Null) => Ok(&[]),
            Some(Value::Array(items)) => Ok(items),
            Some(_) => Err(self.shape(pointer, "an array")),
        }
    }

    pub(super) fn usage(&self, input: &str, output: &str, cached: Option<&str>) -> Option<Usage> {
        let get = |p: &str| self.at(p).and_then(Value::as_u64);
        match (get(input), get(output)) {
            (None, None) => None,
            (i, o) => Some(Usage {
                input_tokens: i.unwrap_or(0),
                output_tokens: o.unwrap_or(0),
                cached_input_tokens: cached.and_then(get).unwrap_or(0),
            }),
        }
    }
}

/// What an envelope said, provider-neutral.
pub(super) struct Signals<'s> {
    pub(super) truncated: Option<&'s str>,
    pub(super) filtered: Option<&'s str>,
    pub(super) refusal: Option<(Option<String>, Option<String>)>,
    pub(super) text: Option<String>,
    pub(super) calls: Vec<(ToolCall, Answer)>,
    pub(super) malformed_call: Option<&'s str>,
}

/// The one decision every provider shares: refusal, filter and truncation first, then the
/// candidate the mode expects.
pub(super) fn decide(expect: &Expect, s: Signals<'_>) -> Outcome {
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
        let (calls, inputs) = s.calls.into_iter().unzip();
        return Outcome::ToolCalledWrongly {
            calls,
            inputs,
            reason: format!("the provider reported {reason}"),
        };
    }
    let text = s.text.filter(|t| !t.trim().is_empty());
    let candidate = if tool_mode {
        let wanted: Vec<&(ToolCall, Answer)> = s
            .calls
            .iter()
            .filter(|(c, _)| expect.tool_name.as_deref().is_none_or(|n| n == c.name))
            .collect();
        match (wanted.as_slice(), s.calls.len()) {
            ([(call, input)], 1) => Some(StructuredCandidate {
                answer: input.clone(),
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
                let (calls, inputs) = s.calls.into_iter().unzip();
                return Outcome::ToolCalledWrongly {
                    calls,
                    inputs,
                    reason,
                };
            }
            _ => wanted.last().map(|(call, input)| StructuredCandidate {
                answer: input.clone(),
                tool_call: Some(call.clone()),
            }),
        }
    } else {
        text.clone().map(|text| StructuredCandidate {
            answer: Answer::Text(text),
            tool_call: None,
        })
    };
    if let Some(reason) = s.truncated {
        return Outcome::Truncated {
            partial: candidate.or_else(|| {
                text.map(|text| StructuredCandidate {
                    answer: Answer::Text(text),
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

pub(super) fn error_message(error: &Value) -> String {
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

//! Streamed response bodies split into events as the bytes arrive: server-sent events (OpenAI,
//! Anthropic, Gemini with `alt=sse`) or newline-delimited JSON (Ollama). One splitter serves a
//! whole body read at once and one fed a chunk at a time; every API's assembler reads an event's
//! data and reports a broken stream with the helpers here.

use serde_json::Value;

use super::types::{CodecError, WireApi};

/// One event: its `event:` name, if any, and its `data:` lines joined (an NDJSON event is its
/// line).
pub(super) struct Event {
    pub(super) name: Option<String>,
    pub(super) data: String,
    /// 1-based line where the event starts, for error messages.
    pub(super) line: usize,
}

/// How a stream separates its events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Framing {
    /// Server-sent events: fields on lines, events ended by a blank line.
    Sse,
    /// One JSON value a line.
    Ndjson,
}

/// Bytes in, whole events out: a chunk may end anywhere, inside a line or a character.
pub(super) struct Splitter {
    framing: Framing,
    /// Bytes after the last complete line.
    partial: Vec<u8>,
    /// Lines read so far.
    lines: usize,
    name: Option<String>,
    data: Option<String>,
    start: usize,
}

impl Splitter {
    pub(super) fn new(framing: Framing) -> Self {
        Splitter {
            framing,
            partial: Vec::new(),
            lines: 0,
            name: None,
            data: None,
            start: 1,
        }
    }

    /// The events the bytes complete.
    pub(super) fn push(&mut self, bytes: &[u8], out: &mut Vec<Event>) {
        let mut rest = bytes;
        while let Some(end) = memchr::memchr(b'\n', rest) {
            let (line, after) = rest.split_at(end);
            rest = after.get(1..).unwrap_or_default();
            if self.partial.is_empty() {
                self.line(line, out);
            } else {
                let mut whole = std::mem::take(&mut self.partial);
                whole.extend_from_slice(line);
                self.line(&whole, out);
            }
        }
        self.partial.extend_from_slice(rest);
    }

    /// The event the stream's end completes, if one was open.
    pub(super) fn end(&mut self, out: &mut Vec<Event>) {
        if !self.partial.is_empty() {
            let last = std::mem::take(&mut self.partial);
            self.line(&last, out);
        }
        if let Some(data) = self.data.take() {
            out.push(Event {
                name: self.name.take(),
                data,
                line: self.start,
            });
        }
    }

    fn line(&mut self, line: &[u8], out: &mut Vec<Event>) {
        self.lines += 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        // A line cut inside a character is not an event's text: shown as the replacement.
        let line = String::from_utf8_lossy(line);
        if self.framing == Framing::Ndjson {
            if !line.trim().is_empty() {
                out.push(Event {
                    name: None,
                    data: line.into_owned(),
                    line: self.lines,
                });
            }
            return;
        }
        if line.is_empty() {
            if let Some(data) = self.data.take() {
                out.push(Event {
                    name: self.name.take(),
                    data,
                    line: self.start,
                });
            }
            self.name = None;
            self.start = self.lines + 1;
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_ref(), ""),
        };
        match field {
            "event" => self.name = Some(value.to_owned()),
            "data" => {
                let d = self.data.get_or_insert_with(String::new);
                if !d.is_empty() {
                    d.push('\n');
                }
                d.push_str(value);
            }
            _ => {}
        }
    }
}

/// A problem with the stream itself.
pub(super) fn problem(api: WireApi, problem: impl Into<String>) -> CodecError {
    CodecError::Stream {
        api,
        problem: problem.into(),
    }
}

/// An event's data as JSON, read as written or refused
/// ([`crate::read::repair::value_as_written`]).
pub(super) fn data(api: WireApi, event: &Event) -> Result<Value, CodecError> {
    crate::read::repair::value_as_written(&event.data).map_err(|err| {
        problem(
            api,
            format!("event at line {} is not JSON: {err}", event.line),
        )
    })
}

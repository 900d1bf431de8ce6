//! Server-sent events: the text split into events, for each API's stream assembly.

/// One event: its `event:` name, if any, and its `data:` lines joined.
pub(super) struct Event {
    pub(super) name: Option<String>,
    pub(super) data: String,
    /// 1-based line where the event starts, for error messages.
    pub(super) line: usize,
}

/// Splits SSE text into events (blank-line separated; `:` comments and unknown fields skipped).
pub(super) fn events(text: &str) -> Vec<Event> {
    let mut out = Vec::new();
    let mut name = None;
    let mut data: Option<String> = None;
    let mut start = 1;
    for (i, line) in text.lines().enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            if let Some(data) = data.take() {
                out.push(Event {
                    name: name.take(),
                    data,
                    line: start,
                });
            }
            name = None;
            start = i + 2;
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => name = Some(value.to_owned()),
            "data" => {
                let d = data.get_or_insert_with(String::new);
                if !d.is_empty() {
                    d.push('\n');
                }
                d.push_str(value);
            }
            _ => {}
        }
    }
    if let Some(data) = data {
        out.push(Event {
            name,
            data,
            line: start,
        });
    }
    out
}

//! Strings: escapes, control characters, and the central guess of the repairer — whether a
//! quote ends the string or is an unescaped quote inside it.
//!
//! A candidate closing quote is judged by what follows it (a delimiter, the next member, the
//! end), by the quotes and brackets already inside the string, and by the context the string
//! is read in (key, object value, array item, top level). A string that never closes is cut
//! where the text shows the closing quote was forgotten (before `, "next_key":`, before the
//! closing brackets at the end) or, failing that, at the end of the text: truncated.

use super::lex::{is_quote_char, is_word_byte, Quote};
use super::parser::is_literal_word;
use super::parser::{Ctx, Parser};
use super::report::{RepairError, RepairKind};

/// How far a scan may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Decide at every quote.
    Normal,
    /// The content ends at this byte; every quote before it is a character.
    Until(usize),
    /// End at the first quote or delimiter (`,` `]` `}` line break).
    AtDelimiter,
}

/// How a scan ended.
enum End {
    /// At a closing quote; the parser resumes at the byte given.
    Closed(usize),
    /// The content was cut here (no closing quote); the parser resumes here.
    Cut(usize),
    /// The text ended first.
    Eof,
}

/// What a quote inside a string is.
enum Decision {
    Close,
    Literal,
    /// The string should have ended at this byte (a forgotten quote before `, "key":`).
    CutAt(usize),
}

/// What the scan knows about the content so far.
#[derive(Default)]
struct Inside {
    quotes: usize,
    braces: usize,
    brackets: usize,
}

impl<B: super::build::Build> Parser<'_, B> {
    /// A string at the current position (which holds an opening quote).
    pub(super) fn string(&mut self, ctx: Ctx) -> Result<String, RepairError> {
        match Quote::open(self.rest()) {
            Some(opened) => self.string_opened(ctx, opened),
            None => Ok(String::new()),
        }
    }

    /// [`Parser::string`] when the caller has already read the opening quote.
    pub(super) fn string_opened(
        &mut self,
        ctx: Ctx,
        (quote, open_len): (Quote, usize),
    ) -> Result<String, RepairError> {
        if let Some(content) = self.triple_quoted(quote, open_len) {
            return Ok(content);
        }
        if let Some(kind) = quote.repair() {
            self.note(kind);
        }
        let mut start = self.pos + open_len;
        let mut doubled = false;
        // `""key""` starts with a second quote right after the first: only then is the character
        // decoded.
        let quote_next = self
            .byte(start)
            .is_some_and(|b| matches!(b, b'"' | b'\'' | b'`') || b >= 0x80);
        if quote != Quote::Escaped && quote_next {
            if let Some(c) = self.text.get(start..).and_then(|r| r.chars().next()) {
                let after = self.byte(start + c.len_utf8());
                if quote.closes(c) && after.is_some_and(|b| b.is_ascii_alphanumeric()) {
                    // `""key""`: the quotes were doubled.
                    self.note(RepairKind::DoubledQuotes);
                    doubled = true;
                    start += c.len_utf8();
                }
            }
        }
        let saved = self.mark();
        let (content, end) = self.scan(quote, start, ctx, doubled, Mode::Normal);
        match end {
            End::Closed(next) | End::Cut(next) => {
                self.pos = next;
                Ok(content)
            }
            End::Eof => {
                let (mode, kind) = self.unclosed(start, ctx);
                self.rewind(saved);
                self.note_at(kind, start);
                let (mut content, end) = self.scan(quote, start, ctx, doubled, mode);
                if kind == RepairKind::UnclosedString {
                    content.truncate(content.trim_end().len());
                }
                self.pos = match end {
                    End::Closed(next) | End::Cut(next) => next,
                    End::Eof => self.text.len(),
                };
                Ok(content)
            }
        }
    }

    /// `"""text"""` or `'''text'''` (Python): the text between the triple quotes, quotes
    /// and all, when they close on the same kind. Escapes are kept as written.
    fn triple_quoted(&mut self, quote: Quote, open_len: usize) -> Option<String> {
        let fence = match quote {
            Quote::Double if open_len == 1 => "\"\"\"",
            Quote::Single if open_len == 1 => "'''",
            _ => return None,
        };
        let rest = self.rest();
        let body = rest.strip_prefix(fence)?;
        let end = body.find(fence)?;
        let content = body.get(..end)?.to_owned();
        self.note(RepairKind::TripleQuotes);
        self.pos += fence.len() * 2 + end;
        Some(content)
    }

    /// Where a string with no closing quote should end, and what kind of repair that is.
    fn unclosed(&self, start: usize, ctx: Ctx) -> (Mode, RepairKind) {
        let content = self.text.get(start..).unwrap_or("");
        let trimmed = start + content.trim_end().len();
        let cut = match ctx {
            Ctx::Key => content.find(':').map(|c| start + c),
            Ctx::ObjectValue => self.forgotten_quote(start).or_else(|| {
                let body = content
                    .trim_end_matches(|c: char| c.is_whitespace() || matches!(c, '}' | ']' | '`'));
                let end = start + body.trim_end().len();
                (end < trimmed).then_some(end)
            }),
            Ctx::ArrayItem if content.trim_end().ends_with([']', '}']) => {
                return (Mode::AtDelimiter, RepairKind::MissingQuote);
            }
            _ => None,
        };
        match cut {
            Some(end) => (Mode::Until(end), RepairKind::MissingQuote),
            None => (Mode::Until(trimmed), RepairKind::UnclosedString),
        }
    }

    /// In an unclosed object value, the first `, key:` that shows where the quote was forgotten.
    fn forgotten_quote(&self, start: usize) -> Option<usize> {
        let bytes = self.text.as_bytes();
        let mut i = start;
        while let Some(offset) = bytes.get(i..)?.iter().position(|&b| b == b',') {
            let comma = i + offset;
            if self.member_starts_at(comma + 1) {
                return Some(comma);
            }
            i = comma + 1;
        }
        None
    }

    /// Reads string content from `start`, deciding at each quote.
    fn scan(
        &mut self,
        quote: Quote,
        start: usize,
        ctx: Ctx,
        doubled: bool,
        mode: Mode,
    ) -> (String, End) {
        let text = self.text;
        let bytes = text.as_bytes();
        let mut buf = String::new();
        let mut run = start;
        let mut i = start;
        let mut inside = Inside::default();
        let mut raw_newline_end = None;
        let mut control_noted = false;
        loop {
            if let Mode::Until(end) = mode {
                if i >= end {
                    buf.push_str(text.get(run..end).unwrap_or(""));
                    return (buf, End::Cut(end));
                }
            }
            // Most of a string is plain text: skip it in one tight loop, counting brackets.
            let limit = match mode {
                Mode::Until(end) => end.min(bytes.len()),
                _ => bytes.len(),
            };
            let classes = if mode == Mode::AtDelimiter {
                &AT_DELIMITER
            } else {
                &IN_STRING
            };
            for &b in bytes.get(i..limit).unwrap_or_default() {
                match classes[usize::from(b)] {
                    Class::Plain => {}
                    Class::OpenBrace => inside.braces += 1,
                    Class::OpenBracket => inside.brackets += 1,
                    Class::CloseBrace => inside.braces = inside.braces.saturating_sub(1),
                    Class::CloseBracket => inside.brackets = inside.brackets.saturating_sub(1),
                    Class::Stop => break,
                }
                i += 1;
            }
            if let Mode::Until(end) = mode {
                if i >= end {
                    continue;
                }
            }
            let Some(&b) = bytes.get(i) else {
                buf.push_str(text.get(run..).unwrap_or(""));
                return (buf, End::Eof);
            };
            // A candidate closing quote and its length.
            let closer = match b {
                b'\\' if quote == Quote::Escaped && bytes.get(i + 1) == Some(&b'"') => Some(2),
                b'"' | b'\'' | b'`' if quote.closes(b as char) => Some(1),
                0xC0.. if !matches!(quote, Quote::Double | Quote::Single) => text
                    .get(i..)
                    .and_then(|r| r.chars().next())
                    .filter(|&c| quote.closes(c))
                    .map(char::len_utf8),
                _ => None,
            };
            if let Some(len) = closer {
                let decision = match mode {
                    Mode::Until(_) => Decision::Literal,
                    Mode::AtDelimiter => Decision::Close,
                    Mode::Normal => self.decide(i, len, ctx, quote, doubled, &inside),
                };
                match decision {
                    Decision::Close => {
                        let piece = text.get(run..i).unwrap_or("");
                        if buf.is_empty() {
                            // The whole content in one piece (the usual string): one exact
                            // allocation.
                            buf = piece.to_owned();
                        } else {
                            buf.push_str(piece);
                        }
                        if raw_newline_end == Some(i) && buf.ends_with('\n') {
                            buf.pop();
                            self.note_at(RepairKind::LineBreakBeforeQuote, i);
                        }
                        let mut next = i + len;
                        if doubled {
                            if let Some(c) = text.get(next..).and_then(|r| r.chars().next()) {
                                if quote.closes(c) {
                                    next += c.len_utf8();
                                }
                            }
                        }
                        return (buf, End::Closed(next));
                    }
                    Decision::CutAt(end) => {
                        self.note_at(RepairKind::MissingQuote, end);
                        let (mut content, end) =
                            self.scan(quote, start, ctx, doubled, Mode::Until(end));
                        content.truncate(content.trim_end().len());
                        return (content, end);
                    }
                    Decision::Literal => {
                        self.note_at(RepairKind::UnescapedQuote, i);
                        inside.quotes += 1;
                        i += len;
                        continue;
                    }
                }
            }
            match b {
                b'\\' => {
                    buf.push_str(text.get(run..i).unwrap_or(""));
                    if quote == Quote::Escaped
                        && bytes.get(i + 1) == Some(&b'\\')
                        && bytes.get(i + 2) == Some(&b'"')
                    {
                        buf.push('"');
                        i += 3;
                    } else {
                        i = self.escape(&mut buf, i);
                    }
                    run = i;
                    continue;
                }
                b'\n' | b'\r' if mode == Mode::AtDelimiter => {
                    buf.push_str(text.get(run..i).unwrap_or(""));
                    return (buf, End::Cut(i));
                }
                b',' | b']' | b'}' if mode == Mode::AtDelimiter => {
                    buf.push_str(text.get(run..i).unwrap_or(""));
                    let kept = buf.trim_end().len();
                    buf.truncate(kept);
                    return (buf, End::Cut(i));
                }
                0..=0x1F => {
                    buf.push_str(text.get(run..i).unwrap_or(""));
                    buf.push(b as char);
                    if !control_noted {
                        self.note_at(RepairKind::ControlCharacter, i);
                        control_noted = true;
                    }
                    i += 1;
                    run = i;
                    raw_newline_end = (b == b'\n').then_some(i);
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// Whether the quote at `q` (of `len` bytes) closes the string.
    fn decide(
        &self,
        q: usize,
        len: usize,
        ctx: Ctx,
        quote: Quote,
        doubled: bool,
        inside: &Inside,
    ) -> Decision {
        let after = q + len;
        if self.byte(after) == Some(b'`')
            && self.text.get(after..).is_some_and(|r| r.starts_with("```"))
        {
            return Decision::Close;
        }
        if doubled {
            if let Some(c) = self.text.get(after..).and_then(|r| r.chars().next()) {
                if quote.closes(c) {
                    return Decision::Close;
                }
            }
        }
        let n = self.next_non_ws(after);
        let next = self.byte(n);
        // Worked out only where a decision needs it: most closing quotes are decided by
        // the byte after them alone.
        let next_is_quote = || {
            self.text
                .get(n..)
                .and_then(|r| r.chars().next())
                .is_some_and(is_quote_char)
        };
        // A comment after the quote: `//`, `/*`, or `#` once a space sets it apart.
        let hash_comment = next == Some(b'#') && n > after;
        if next.is_none() || self.comment_at(n) || hash_comment {
            return Decision::Close;
        }
        let flat = inside.braces == 0 && inside.brackets == 0;
        if next == Some(b'+') && self.quote_at(self.next_non_ws(n + 1)) {
            return Decision::Close; // `"a" + "b"`
        }
        if next == Some(b')') && self.stack.contains(&b'(') {
            return Decision::Close;
        }
        match ctx {
            Ctx::Key => {
                let value_follows = || {
                    next.is_some_and(|b| b.is_ascii_digit() || b == b']')
                        || is_literal_word(self.word_at(n))
                };
                if matches!(next, Some(b':' | b',' | b'}' | b'='))
                    || next_is_quote()
                    || value_follows()
                {
                    Decision::Close
                } else if q > 0 && self.byte(q - 1) == Some(b':') {
                    Decision::CutAt(q - 1)
                } else {
                    Decision::Literal
                }
            }
            Ctx::Top => match next {
                Some(b',' | b':' | b';') => Decision::Close,
                Some(b'}' | b']') if !self.stack.is_empty() => Decision::Close,
                _ if next_is_quote() && self.next_non_ws(n + 1) < self.text.len() => {
                    Decision::Close
                }
                _ => Decision::Literal,
            },
            Ctx::ObjectValue => match next {
                Some(b'}') if inside.braces == 0 => Decision::Close,
                Some(b']') if inside.brackets == 0 => Decision::Close,
                Some(b',') => {
                    // `"x",, "b": 1`: doubled commas before the next member.
                    let mut c = n;
                    while self.byte(c) == Some(b',') && c - n < 8 {
                        c = self.next_non_ws(c + 1);
                    }
                    let m = self.next_non_ws(n + 1);
                    if matches!(self.byte(m), None | Some(b'}' | b']' | b'{' | b'['))
                        || self.member_starts_at(n + 1)
                        || (c > m && self.member_starts_at(c))
                        || self.word_then_quote(m)
                    {
                        Decision::Close
                    } else {
                        Decision::Literal
                    }
                }
                // `"a\n"\n",`: the next quote is the real end; this one is a character.
                _ if next_is_quote() && self.closes_before_delimiter(n) => Decision::Literal,
                _ if next_is_quote() => Decision::Close,
                Some(b':' | b'}' | b']') => Decision::Literal,
                _ if !flat => Decision::Literal,
                _ => match self.forgotten_before(q, true) {
                    Some(d) => d,
                    None if self.word_then_brace(after) => Decision::Close,
                    // `"John"\n  lastName: "Smith"`: a missing comma before the next member.
                    None if self.byte(after).is_some_and(|b| b.is_ascii_whitespace())
                        && self.member_starts_at(after) =>
                    {
                        Decision::Close
                    }
                    None => Decision::Literal,
                },
            },
            Ctx::ArrayItem => match next {
                Some(b']') if inside.brackets == 0 => Decision::Close,
                Some(b'}') if inside.braces == 0 => Decision::Close,
                Some(b',' | b':') => Decision::Close,
                _ if next_is_quote() => Decision::Close,
                Some(b']' | b'}') => Decision::Literal,
                _ if !flat => Decision::Literal,
                _ => match self.forgotten_before(q, false) {
                    Some(d) => d,
                    None if inside.quotes % 2 == 0 && self.stray_word_then_end(after) => {
                        Decision::Close
                    }
                    None => Decision::Literal,
                },
            },
        }
    }

    /// The quote at `q` starts the next key (`"a": "b, "c": 1`) or item (`["a, "b"]`): the
    /// string should have ended at the comma before it. In an object, also `"a": "b, c: "d"`.
    fn forgotten_before(&self, q: usize, object: bool) -> Option<Decision> {
        let bytes = self.text.as_bytes();
        let mut p = q;
        while p > 0 && matches!(bytes.get(p - 1), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            p -= 1;
        }
        let prev = p.checked_sub(1)?;
        match bytes.get(prev)? {
            b',' if object && self.member_starts_at(q) => Some(Decision::CutAt(prev)),
            b',' if !object && self.quoted_word_then_end(q) => Some(Decision::CutAt(prev)),
            b':' if object => {
                // `, word:` just before this quote.
                let mut i = prev;
                while i > 0 && matches!(bytes.get(i - 1), Some(b' ' | b'\t')) {
                    i -= 1;
                }
                let word_end = i;
                while i > 0
                    && word_end - i < 64
                    && bytes.get(i - 1).is_some_and(|&b| is_word_byte(b))
                {
                    i -= 1;
                }
                if i == word_end {
                    return None;
                }
                while i > 0 && matches!(bytes.get(i - 1), Some(b' ' | b'\t' | b'\n')) {
                    i -= 1;
                }
                let comma = i.checked_sub(1)?;
                (bytes.get(comma) == Some(&b',')).then_some(Decision::CutAt(comma))
            }
            _ => None,
        }
    }

    fn quote_at(&self, i: usize) -> bool {
        self.text
            .get(i..)
            .and_then(|r| r.chars().next())
            .is_some_and(is_quote_char)
    }

    /// The quote at `n` is followed by `,` `}` `]` or the end.
    fn closes_before_delimiter(&self, n: usize) -> bool {
        let len = self
            .text
            .get(n..)
            .and_then(|r| r.chars().next())
            .map_or(1, char::len_utf8);
        matches!(
            self.byte(self.next_non_ws(n + len)),
            None | Some(b',' | b'}' | b']')
        )
    }

    /// After a quote: one word and then `}` (`"data" AAAA }`): the word is junk after the value.
    fn word_then_brace(&self, after: usize) -> bool {
        let mut i = after;
        while matches!(self.byte(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        match self.word_end(i) {
            Some(end) if end > i => matches!(self.byte(self.next_non_ws(end)), Some(b'}') | None),
            _ => false,
        }
    }

    /// At `i`, a word, a space and a quote (`COMMENT "key": ...`).
    fn word_then_quote(&self, i: usize) -> bool {
        match self.word_end(i) {
            Some(end) if end > i && self.byte(end) == Some(b' ') => {
                self.quote_at(self.next_non_ws(end))
            }
            _ => false,
        }
    }

    /// At `q`, a quoted word followed by `,` `]` or the end: `"b"]`.
    fn quoted_word_then_end(&self, q: usize) -> bool {
        let Some((_, len)) = self.text.get(q..).and_then(Quote::open) else {
            return false;
        };
        let Some(close) = self.word_end(q + len) else {
            return false;
        };
        let Some(c) = self.text.get(close..).and_then(|r| r.chars().next()) else {
            return false;
        };
        is_quote_char(c)
            && matches!(
                self.byte(self.next_non_ws(close + c.len_utf8())),
                None | Some(b',' | b']')
            )
    }

    /// After a quote: one word, then the end of the item (`"consectetur" comment" ]`,
    /// `["value1" value2", ...]`). Then the quote closed the string and the word is the next item.
    fn stray_word_then_end(&self, after: usize) -> bool {
        let mut i = after;
        while matches!(self.byte(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        let Some(end) = self.word_end(i) else {
            return false;
        };
        if end == i {
            return false;
        }
        match self.text.get(end..).and_then(|r| r.chars().next()) {
            None | Some(',' | ']') => true,
            Some(c) if is_quote_char(c) => matches!(
                self.byte(self.next_non_ws(end + c.len_utf8())),
                None | Some(b',' | b']')
            ),
            _ => false,
        }
    }

    /// End of a run of non-space, non-quote, non-delimiter characters from `i` (at most 64 bytes).
    fn word_end(&self, i: usize) -> Option<usize> {
        let rest = self.text.get(i..)?;
        let mut end = i;
        for c in rest.chars() {
            if c.is_whitespace() || is_quote_char(c) || matches!(c, ',' | ']' | '}' | '[' | '{') {
                break;
            }
            end += c.len_utf8();
            if end - i > 64 {
                return None;
            }
        }
        Some(end)
    }

    /// One escape sequence at `i` (a backslash) into `buf`; returns the index after it.
    fn escape(&mut self, buf: &mut String, i: usize) -> usize {
        let Some(c) = self.text.get(i + 1..).and_then(|r| r.chars().next()) else {
            buf.push('\\');
            return i + 1;
        };
        let simple = match c {
            '"' | '\\' | '/' => Some(c),
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            '\n' => {
                // A line continuation (`\` then a raw line break): the line break is kept.
                self.note_at(RepairKind::LineContinuation, i);
                Some('\n')
            }
            _ => None,
        };
        if let Some(s) = simple {
            buf.push(s);
            return i + 2;
        }
        if c == 'u' {
            return self.unicode_escape(buf, i);
        }
        self.note_at(RepairKind::InvalidEscape, i);
        if !is_quote_char(c) {
            buf.push('\\');
        }
        buf.push(c);
        i + 1 + c.len_utf8()
    }

    /// `\uXXXX`, with surrogate pairs joined. A cut-off escape at the end is dropped.
    fn unicode_escape(&mut self, buf: &mut String, i: usize) -> usize {
        let Some(code) = self.hex4(i + 2) else {
            if self.text.len() < i + 6
                && self
                    .text
                    .get(i + 2..)
                    .is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
            {
                return self.text.len();
            }
            self.note_at(RepairKind::InvalidEscape, i);
            buf.push_str("\\u");
            return i + 2;
        };
        if (0xD800..0xDC00).contains(&code) && self.text.get(i + 6..i + 8) == Some("\\u") {
            if let Some(joined) = self.hex4(i + 8).and_then(|low| surrogate_pair(code, low)) {
                buf.push(joined);
                return i + 12;
            }
        }
        match char::from_u32(code) {
            Some(c) => buf.push(c),
            None => {
                self.note_at(RepairKind::LoneSurrogate, i);
                buf.push('\u{fffd}');
            }
        }
        i + 6
    }

    fn hex4(&self, i: usize) -> Option<u32> {
        hex4(self.text.as_bytes().get(i..i + 4)?)
    }
}

/// The UTF-16 unit four hex digits write (the digits of a `\uXXXX` escape); `None` for
/// anything else.
pub(crate) fn hex4(digits: &[u8]) -> Option<u32> {
    if digits.len() != 4 || !digits.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    u32::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
}

/// The character a leading and a trailing UTF-16 surrogate write together; `None` when they are
/// not such a pair.
pub(crate) fn surrogate_pair(high: u32, low: u32) -> Option<char> {
    if !(0xD800..0xDC00).contains(&high) || !(0xDC00..0xE000).contains(&low) {
        return None;
    }
    char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
}

/// What a byte means to the tight loop of [`Parser::scan`].
#[derive(Clone, Copy)]
enum Class {
    /// Text: nothing to do.
    Plain,
    OpenBrace,
    OpenBracket,
    CloseBrace,
    CloseBracket,
    /// Anything the full loop must look at: a quote, an escape, a control character, the first
    /// byte of a multi-byte character (which may be a typographic quote), and in
    /// [`Mode::AtDelimiter`] a comma or a closing bracket.
    Stop,
}

static IN_STRING: [Class; 256] = classes(false);
static AT_DELIMITER: [Class; 256] = classes(true);

const fn classes(at_delimiter: bool) -> [Class; 256] {
    let mut t = [Class::Plain; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = match b as u8 {
            0..=0x1F | 0xC0.. | b'"' | b'\'' | b'`' | b'\\' => Class::Stop,
            b',' | b'}' | b']' if at_delimiter => Class::Stop,
            b'{' => Class::OpenBrace,
            b'[' => Class::OpenBracket,
            b'}' => Class::CloseBrace,
            b']' => Class::CloseBracket,
            _ => Class::Plain,
        };
        b += 1;
    }
    t
}

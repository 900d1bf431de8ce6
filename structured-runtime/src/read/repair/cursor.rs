//! The parser's view of the text around it: whitespace and comments skipped, and the bounded
//! lookaheads the decisions use (what comes next, whether a member starts there).

use super::lex::{floor_boundary, is_quote_char, is_special_space, is_word_byte, Quote};
use super::parser::Parser;
use super::report::RepairKind;

impl<B: super::build::Build> Parser<'_, B> {
    /// Skips JSON whitespace, Unicode spaces, comments and fence markers, recording repairs.
    pub(super) fn skip_ws(&mut self) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos += 1,
                Some(b'/') => match self.byte(self.pos + 1) {
                    Some(b'/') => self.line_comment(),
                    Some(b'*') => self.block_comment(),
                    _ => return,
                },
                Some(b'#') => self.line_comment(),
                Some(b'`') if self.rest().starts_with("```") => self.fence_marker(),
                Some(b) if b >= 0x80 => match self.rest().chars().next() {
                    Some(c) if is_special_space(c) => {
                        self.note(RepairKind::SpecialWhitespace);
                        self.pos += c.len_utf8();
                    }
                    _ => return,
                },
                _ => return,
            }
        }
    }

    fn line_comment(&mut self) {
        self.note(RepairKind::Comment);
        let rest = self.rest();
        let line = memchr::memchr(b'\n', rest.as_bytes()).unwrap_or(rest.len());
        let last_line = rest.get(line..).is_some_and(|r| r.trim().is_empty());
        let len = if last_line {
            // A comment on the last line ends before the closing brackets after it
            // (`"done": true // ok }`): they close the value, not the comment.
            rest.get(..line)
                .unwrap_or_default()
                .trim_end_matches(|c: char| c.is_whitespace() || matches!(c, '}' | ']'))
                .len()
        } else {
            line
        };
        self.pos += len;
    }

    fn block_comment(&mut self) {
        self.note(RepairKind::Comment);
        match self.rest().get(2..).and_then(|r| r.find("*/")) {
            Some(end) => self.pos += end + 4,
            None => self.pos = self.text.len(),
        }
    }

    /// ```` ```json ```` or a closing ```` ``` ````: the backticks and the language word.
    fn fence_marker(&mut self) {
        self.note(RepairKind::FenceMarker);
        while self.peek() == Some(b'`') {
            self.pos += 1;
        }
        while self.peek().is_some_and(|b| b.is_ascii_alphanumeric()) {
            self.pos += 1;
        }
    }

    /// Position of the next byte that is not whitespace or a (short) comment, from `from`.
    /// Comments longer than a few hundred bytes are not skipped here, which keeps lookahead from
    /// every quote bounded.
    pub(super) fn next_non_ws(&self, from: usize) -> usize {
        let mut i = from;
        loop {
            match self.byte(i) {
                Some(b' ' | b'\t' | b'\n' | b'\r') => i += 1,
                Some(b'/') if self.byte(i + 1) == Some(b'*') => {
                    let window = self
                        .text
                        .get(i + 2..)
                        .and_then(|r| r.get(..floor_boundary(r, 256)));
                    match window.and_then(|w| w.find("*/")) {
                        Some(end) => i += end + 4,
                        None => return i,
                    }
                }
                Some(b'/') if self.byte(i + 1) == Some(b'/') => {
                    let window = self
                        .text
                        .get(i..)
                        .and_then(|r| r.get(..floor_boundary(r, 256)));
                    match window.and_then(|w| w.find('\n')) {
                        Some(end) => i += end,
                        None => return i,
                    }
                }
                _ => return i,
            }
        }
    }

    /// Whether a comment starts at `i`.
    pub(super) fn comment_at(&self, i: usize) -> bool {
        self.byte(i) == Some(b'/') && matches!(self.byte(i + 1), Some(b'/' | b'*'))
    }

    /// Whether `i` starts an object member: an optionally quoted word, then `:`. Looks ahead a
    /// bounded distance, so calling it at every quote keeps the parse linear.
    pub(super) fn member_starts_at(&self, i: usize) -> bool {
        let mut i = self.next_non_ws(i);
        let quoted = match self.text.get(i..).and_then(Quote::open) {
            Some((_, len)) => {
                i += len;
                true
            }
            None => false,
        };
        let start = i;
        let bytes = self.text.as_bytes();
        let Some(word) = bytes.get(start..) else {
            return true;
        };
        if word.is_empty() {
            // The text ends where the next key would start: a truncated member.
            return true;
        }
        let len = word
            .iter()
            .take(64)
            .take_while(|&&b| is_word_byte(b) || b == b'-' || (quoted && b == b' '))
            .count();
        i += len;
        if len == 0 && !quoted {
            return false;
        }
        match bytes.get(i) {
            None => return true,
            Some(&b) if b < 0x80 => {
                if matches!(b, b'"' | b'\'' | b'`') {
                    i += 1;
                } else if quoted {
                    return false;
                }
            }
            Some(_) => match self.text.get(i..).and_then(|r| r.chars().next()) {
                Some(c) if is_quote_char(c) => i += c.len_utf8(),
                _ if quoted => return false,
                _ => {}
            },
        }
        matches!(self.byte(self.next_non_ws(i)), Some(b':') | None)
    }
}

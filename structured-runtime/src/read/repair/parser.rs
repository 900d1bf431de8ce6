//! The tolerant parser: documents, objects, arrays, numbers, literals and unquoted words.
//! Strings, where most of the guessing happens, are in `string.rs`.

use std::marker::PhantomData;

use serde_json::{Number, Value};

use super::build::{Build, ValueBuild};

use super::lex::{continues_token, is_word_byte, Quote};
use super::report::{Repair, RepairError, RepairKind, Repaired, MAX_DEPTH, MAX_FOUND};

/// Where a value is being read: it decides what ends an unquoted word or an unclosed string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ctx {
    Top,
    Key,
    ObjectValue,
    ArrayItem,
}

/// Top-level values collected into an array, at most; the text after them is ignored (with
/// [`RepairKind::TrailingText`]), so a text of a million `{}` does not become a million values.
const MAX_TOP_VALUES: usize = 4096;

pub(crate) struct Parser<'a, B: Build = ValueBuild> {
    pub(super) text: &'a str,
    pub(super) pos: usize,
    /// Open containers, innermost last: `{`, `[` or `(`.
    pub(super) stack: Open,
    pub(super) repairs: Vec<Repair>,
    /// Ordinary repairs made past [`MAX_LISTED`], counted, not kept.
    pub(super) unlisted: usize,
    build: PhantomData<B>,
}

/// Repairs listed at most; the rest are counted into one [`RepairKind::Unlisted`] entry at the
/// end, so memory for the report does not grow with a huge broken answer. Extraction and
/// truncation repairs (a few per text) are always listed: what is read depends on them.
pub const MAX_LISTED: usize = 1000;

/// The open containers, innermost last, held inline: the parser refuses to open more than
/// [`MAX_DEPTH`], so a parse allocates nothing for them.
pub(crate) struct Open {
    items: [u8; MAX_DEPTH],
    len: usize,
}

impl Default for Open {
    fn default() -> Self {
        Open {
            items: [0; MAX_DEPTH],
            len: 0,
        }
    }
}

impl Open {
    /// Opens `b`; past [`MAX_DEPTH`] (which [`Parser::enter`] refuses first) it is not kept.
    pub(super) fn push(&mut self, b: u8) {
        if let Some(slot) = self.items.get_mut(self.len) {
            *slot = b;
            self.len += 1;
        }
    }
    pub(super) fn pop(&mut self) {
        self.len = self.len.saturating_sub(1);
    }
    pub(super) fn len(&self) -> usize {
        self.len
    }
    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub(super) fn as_slice(&self) -> &[u8] {
        self.items.get(..self.len).unwrap_or_default()
    }
    pub(super) fn contains(&self, b: &u8) -> bool {
        self.as_slice().contains(b)
    }
}

/// Where the repair list stood, to go back to when a reading is undone.
#[derive(Clone, Copy)]
pub(super) struct Mark {
    listed: usize,
    unlisted: usize,
}

impl<'a, B: Build> Parser<'a, B> {
    pub(crate) fn new(text: &'a str) -> Self {
        Parser {
            text,
            pos: 0,
            stack: Open::default(),
            // Room for the repairs of a typical broken answer (a quote style on every string).
            repairs: Vec::with_capacity(8),
            unlisted: 0,
            build: PhantomData,
        }
    }

    pub(super) fn byte(&self, i: usize) -> Option<u8> {
        self.text.as_bytes().get(i).copied()
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.byte(self.pos)
    }

    pub(super) fn rest(&self) -> &'a str {
        self.text.get(self.pos..).unwrap_or("")
    }

    pub(super) fn note(&mut self, kind: RepairKind) {
        self.note_at(kind, self.pos);
    }

    pub(super) fn note_at(&mut self, kind: RepairKind, at: usize) {
        if self.past_list(kind) {
            return;
        }
        self.repairs.push(Repair {
            kind,
            at,
            found: None,
        });
    }

    /// Whether a repair of `kind` is only counted: the list is full and it is an ordinary one.
    fn past_list(&mut self, kind: RepairKind) -> bool {
        let full =
            self.repairs.len() >= MAX_LISTED && !kind.is_extraction() && !kind.is_truncation();
        self.unlisted += usize::from(full);
        full
    }

    /// Where the repair list stands.
    pub(super) fn mark(&self) -> Mark {
        Mark {
            listed: self.repairs.len(),
            unlisted: self.unlisted,
        }
    }

    /// Back to `mark`: the repairs made since are undone.
    pub(super) fn rewind(&mut self, mark: Mark) {
        self.repairs.truncate(mark.listed);
        self.unlisted = mark.unlisted;
    }

    /// A repair quoting the text it read (cut to [`MAX_FOUND`] bytes).
    pub(super) fn note_found(&mut self, kind: RepairKind, at: usize, found: &str) {
        if self.past_list(kind) {
            return;
        }
        let end = super::lex::floor_boundary(found, MAX_FOUND);
        let found = if end < found.len() {
            format!("{}...", &found[..end])
        } else {
            found.to_owned()
        };
        self.repairs.push(Repair {
            kind,
            at,
            found: Some(found),
        });
    }

    /// The whole text: prose, then one or more values, then whatever follows.
    pub(crate) fn document(mut self) -> Result<Repaired<B::Node>, RepairError> {
        self.skip_ws();
        if !self.value_starts_here() {
            let found = self.rest().find(['{', '[']);
            match found {
                Some(offset) => {
                    self.note(RepairKind::LeadingText);
                    self.pos += offset;
                }
                None => {
                    return Err(RepairError::NotFound {
                        len: self.text.len(),
                    })
                }
            }
        }
        let mut values = Vec::new();
        loop {
            let Some(mut value) = self.value(Ctx::Top)? else {
                break;
            };
            if self.cut_empty_string(&value) {
                break;
            }
            if let Some(map) = B::as_object(&mut value) {
                self.reopen_object(map)?;
            }
            values.push(value);
            if values.len() == MAX_TOP_VALUES {
                // More top-level values than any answer holds: the rest is left as text.
                break;
            }
            let separator = self.skip_separators();
            if !self.value_starts_here() {
                if let Some(at) = separator {
                    // `[1, 2],`: a separator after the last value.
                    self.note_at(RepairKind::TrailingComma, at);
                }
                break;
            }
        }
        self.skip_ws();
        if self.pos < self.text.len() {
            self.note(RepairKind::TrailingText);
        }
        let value = self.collect(values)?;
        // From the list, not a flag: a repair undone by backtracking leaves no trace.
        let truncated = self.repairs.iter().any(|r| r.kind.is_truncation());
        if self.unlisted > 0 {
            self.repairs.push(Repair {
                kind: RepairKind::Unlisted,
                at: self.text.len(),
                found: Some(format!("{} more", self.unlisted)),
            });
        }
        Ok(Repaired {
            value,
            repairs: self.repairs,
            truncated,
        })
    }

    /// After a top-level value: commas, semicolons and closing brackets with nothing to close.
    /// Returns where the last comma or semicolon was, if any.
    fn skip_separators(&mut self) -> Option<usize> {
        let mut separator = None;
        loop {
            self.skip_ws();
            match self.peek() {
                Some(b',' | b';') => {
                    separator = Some(self.pos);
                    self.pos += 1;
                }
                Some(b'}' | b']' | b')') => {
                    self.note(RepairKind::ExtraBracket);
                    self.pos += 1;
                }
                _ => return separator,
            }
        }
    }

    /// Several top-level values: empty containers are dropped when there is anything else, and
    /// what remains is the value or an array of them.
    fn collect(&mut self, mut values: Vec<B::Node>) -> Result<B::Node, RepairError> {
        if values.len() > 1 {
            let empty = values.iter().filter(|v| B::is_empty_container(v)).count();
            if empty > 0 && empty < values.len() {
                self.note_at(RepairKind::EmptyValueDropped, 0);
                values.retain(|v| !B::is_empty_container(v));
            }
        }
        if values.len() <= 1 {
            return values.pop().ok_or(RepairError::NotFound {
                len: self.text.len(),
            });
        }
        self.note_at(RepairKind::MultipleValues, 0);
        let mut list = B::list();
        for v in values {
            B::push(&mut list, v);
        }
        Ok(B::array(list))
    }

    /// `{"a": 1}, "b": 2}`: an object closed too early at the top level takes the members that
    /// follow it.
    fn reopen_object(&mut self, map: &mut B::Object) -> Result<(), RepairError> {
        let comma = self.next_non_ws(self.pos);
        let member = |p: &Self| p.member_starts_at(comma + 1) || p.key_then_string_at(comma + 1);
        if self.byte(comma) != Some(b',') || !member(self) {
            return Ok(());
        }
        self.note_at(RepairKind::ReopenedObject, comma);
        self.pos = comma + 1;
        self.enter(b'{')?;
        self.members(map)?;
        self.stack.pop();
        Ok(())
    }

    /// Whether a value (not prose) starts at the current position.
    fn value_starts_here(&self) -> bool {
        let Some(b) = self.peek() else { return false };
        match b {
            b'{' | b'[' | b'(' | b'"' | b'\'' | b'0'..=b'9' => true,
            b'-' | b'.' => self
                .byte(self.pos + 1)
                .is_some_and(|b| b.is_ascii_digit() || b == b'.'),
            _ if Quote::open(self.rest()).is_some() && !self.rest().starts_with("```") => true,
            _ if b.is_ascii_alphabetic() || b == b'_' => {
                let word = self.word_at(self.pos);
                let after = self.pos + word.len();
                let next = self.byte(self.next_non_ws(after));
                literal(word).is_some() && matches!(next, None | Some(b',' | b';' | b'\n'))
                    || (next == Some(b'(') && self.call_arg_starts(self.next_non_ws(after) + 1))
            }
            _ => false,
        }
    }

    fn call_arg_starts(&self, i: usize) -> bool {
        let i = self.next_non_ws(i);
        match self.byte(i) {
            Some(b'{' | b'[' | b'"' | b'\'' | b'-' | b'0'..=b'9') => true,
            Some(b) if b.is_ascii_alphabetic() => literal(self.word_at(i)).is_some(),
            _ => false,
        }
    }

    pub(super) fn word_at(&self, i: usize) -> &'a str {
        let bytes = self.text.as_bytes();
        let mut end = i;
        while bytes.get(end).is_some_and(|&b| is_word_byte(b) && b < 0x80) {
            end += 1;
        }
        self.text.get(i..end).unwrap_or("")
    }

    pub(super) fn enter(&mut self, open: u8) -> Result<(), RepairError> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(RepairError::TooDeep {
                at: self.pos,
                max: MAX_DEPTH,
            });
        }
        self.stack.push(open);
        Ok(())
    }

    /// Whether `close` matches a container open outside the innermost one.
    pub(super) fn closes_outer(&self, close: u8) -> bool {
        let open = match close {
            b'}' => b'{',
            b']' => b'[',
            _ => b'(',
        };
        let outer = self.stack.len().saturating_sub(1);
        self.stack
            .as_slice()
            .get(..outer)
            .is_some_and(|s| s.contains(&open))
    }

    /// A closing bracket that does not match the innermost container. It closes that container
    /// when an outer one matches (left unconsumed for it) or when there is no outer container;
    /// otherwise it is dropped. Returns whether the container is closed.
    fn wrong_closer(&mut self, close: u8) -> bool {
        if self.closes_outer(close) {
            self.note(RepairKind::MismatchedBracket);
            return true;
        }
        self.pos += 1;
        // `[{"a": 1}}, {"a": 2}]`: more items follow, so the bracket closes nothing.
        let more_items = self.byte(self.next_non_ws(self.pos)) == Some(b',');
        if self.stack.len() <= 1 && !more_items {
            self.note_at(RepairKind::MismatchedBracket, self.pos - 1);
            return true;
        }
        self.note_at(RepairKind::ExtraBracket, self.pos - 1);
        false
    }

    /// A value, or `None` when none starts here (a closing bracket, a comma, the end).
    pub(super) fn value(&mut self, ctx: Ctx) -> Result<Option<B::Node>, RepairError> {
        self.skip_ws();
        let Some(b) = self.peek() else {
            return Ok(None);
        };
        let opened = match b {
            b'{' | b'[' | b'(' | b'-' | b'+' | b'.' | b'0'..=b'9' => None,
            _ => Quote::open(self.rest()),
        };
        let value = match b {
            b'{' => self.object()?,
            b'[' => self.array()?,
            b'(' => self.tuple()?,
            b'-' | b'+' | b'.' | b'0'..=b'9' => return self.number(ctx),
            _ if opened.is_some() => {
                let s = match opened {
                    Some(opened) => self.string_opened(ctx, opened)?,
                    None => String::new(),
                };
                // `"a" + "b"`: only worth looking at when a `+` follows.
                if self.byte(self.next_non_ws(self.pos)) == Some(b'+') {
                    B::string(self.concatenate(s, ctx)?)
                } else {
                    B::string(s)
                }
            }
            _ if is_word_byte(b) => return self.word(ctx),
            b',' | b':' | b']' | b'}' | b')' => return Ok(None),
            _ if ctx != Ctx::Top => {
                let start = self.pos;
                let value = self.unquoted(ctx).map(B::string);
                if value.is_some() {
                    self.note_at(RepairKind::UnquotedString, start);
                }
                return Ok(value);
            }
            _ => return Ok(None),
        };
        Ok(Some(value))
    }

    fn object(&mut self) -> Result<B::Node, RepairError> {
        self.enter(b'{')?;
        self.pos += 1;
        let mut map = B::object();
        let set = self.members(&mut map)?;
        self.stack.pop();
        Ok(match set {
            Some(items) => B::array(items),
            None => B::finish(map),
        })
    }

    /// Members up to and including the closing `}`. Returns the items instead when the object
    /// turns out to be a set literal (`{"a", "b"}`).
    pub(super) fn members(&mut self, map: &mut B::Object) -> Result<Option<B::List>, RepairError> {
        let mut after_comma = false;
        loop {
            self.skip_ws();
            let Some(b) = self.peek() else {
                self.note(RepairKind::UnclosedContainer);
                return Ok(None);
            };
            match b {
                b'}' => {
                    if after_comma {
                        self.note(RepairKind::TrailingComma);
                    }
                    self.pos += 1;
                    return Ok(None);
                }
                b']' | b')' => {
                    if self.wrong_closer(b) {
                        return Ok(None);
                    }
                    continue;
                }
                b'{' if self.stack.contains(&b'[') => {
                    // `[{"a": 1 {"a": 2}]`: the object's `}` was left out.
                    self.note(RepairKind::UnclosedContainer);
                    return Ok(None);
                }
                _ if self.skip_filler() => continue,
                b':' => {
                    self.note(RepairKind::SkippedCharacter);
                    self.pos += 1;
                    continue;
                }
                b'[' => {
                    // `{"a": [1], [2]}`: an array where a key belongs continues the last array.
                    let items = self.array()?;
                    B::extend_last(map, items);
                    self.note(RepairKind::SkippedCharacter);
                    self.after_member();
                    continue;
                }
                _ => {}
            }
            after_comma = false;
            let (key_at, noted) = (self.pos, self.mark());
            let Some((key, quoted)) = self.key()? else {
                self.skip_char();
                continue;
            };
            if quoted && key.is_empty() && self.pos >= self.text.len() {
                self.note(RepairKind::UnclosedContainer);
                return Ok(None);
            }
            self.skip_ws();
            match self.peek() {
                Some(b':') => self.pos += 1,
                Some(b'=') => {
                    self.note(RepairKind::EqualsForColon);
                    self.pos += 1;
                    if self.peek() == Some(b'>') {
                        self.pos += 1; // `=>`
                    }
                }
                Some(b',' | b'}') if B::object_is_empty(map) && quoted => {
                    return self.set_items(key).map(Some);
                }
                Some(b'}') if !quoted => {
                    // A stray word before the closing brace: `{"a": 1 junk}`. Dropped, not
                    // quoted as a key: said as such, naming it.
                    self.rewind(noted);
                    self.note_found(RepairKind::DroppedToken, key_at, &key);
                    continue;
                }
                Some(b',' | b'}') | None => {}
                Some(_) => self.note(RepairKind::MissingColon),
            }
            let value = match self.value(Ctx::ObjectValue)? {
                Some(v) => v,
                None => {
                    if self.peek().is_some() {
                        self.note(RepairKind::MissingValue);
                    } else {
                        self.note(RepairKind::UnclosedContainer);
                    }
                    B::scalar(Value::Null)
                }
            };
            if B::insert(map, key, value) {
                self.note_at(RepairKind::DuplicateKey, key_at);
            }
            after_comma = self.after_member();
        }
    }

    /// Where an item or member belongs: a stray comma or a `...` placeholder is skipped.
    fn skip_filler(&mut self) -> bool {
        let b = self.peek();
        if b == Some(b',') {
            self.note(RepairKind::ExtraComma);
            self.pos += 1;
        } else if b == Some(b'.') && self.rest().starts_with("...") {
            self.note(RepairKind::Ellipsis);
            self.pos += 3;
        } else {
            return false;
        }
        true
    }

    /// After a member or item: consumes one comma. Returns whether it did.
    fn after_member(&mut self) -> bool {
        self.skip_ws();
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                true
            }
            Some(b'}' | b']' | b')') | None => false,
            Some(b'"')
                if matches!(
                    self.byte(self.next_non_ws(self.pos + 1)),
                    Some(b',' | b'}' | b']') | None
                ) =>
            {
                self.note(RepairKind::StrayQuote);
                self.pos += 1;
                self.after_member()
            }
            Some(_) => {
                self.note(RepairKind::MissingComma);
                false
            }
        }
    }

    /// An empty string the text ended in (`["`): no item at all.
    fn cut_empty_string(&self, item: &B::Node) -> bool {
        B::as_str(item) == Some("")
            && self.pos >= self.text.len()
            && self
                .repairs
                .last()
                .is_some_and(|r| r.kind == RepairKind::UnclosedString)
    }

    fn skip_char(&mut self) {
        if self.pos >= self.text.len() {
            return;
        }
        self.note(RepairKind::SkippedCharacter);
        let len = self.rest().chars().next().map_or(1, char::len_utf8);
        self.pos += len;
    }

    /// An object key: a string, or an unquoted word. `COMMENT "key": ...` drops the word.
    fn key(&mut self) -> Result<Option<(String, bool)>, RepairError> {
        if let Some(opened) = Quote::open(self.rest()) {
            return Ok(Some((self.string_opened(Ctx::Key, opened)?, true)));
        }
        let (word_at, noted) = (self.pos, self.mark());
        let Some(word) = self.unquoted(Ctx::Key) else {
            return Ok(None);
        };
        self.skip_ws();
        if self.quoted_key_follows() {
            // `{COMMENT "key": v}`: a stray word before the key. (`{a "b"}` is a missing colon.)
            let save = (self.pos, self.mark());
            let next = self.string(Ctx::Key)?;
            if self.byte(self.next_non_ws(self.pos)) == Some(b':') {
                // The word is dropped, not quoted: said as such, naming it. (Only the word's
                // own repairs are taken back; the key's stay listed after it.)
                let later = self
                    .repairs
                    .split_off(save.1.listed.min(self.repairs.len()));
                self.rewind(noted);
                self.note_found(RepairKind::DroppedToken, word_at, &word);
                self.repairs.extend(later);
                return Ok(Some((next, true)));
            }
            self.pos = save.0;
            self.rewind(save.1);
        }
        Ok(Some((word, false)))
    }

    /// At `i` (after whitespace): a short quoted word and then another quoted string, with no
    /// colon between (`"key2" "value2"`): a member whose colon was left out.
    fn key_then_string_at(&self, i: usize) -> bool {
        let i = self.next_non_ws(i);
        let Some((_, open)) = self.text.get(i..).and_then(Quote::open) else {
            return false;
        };
        let start = i + open;
        let rest = self.text.get(start..).unwrap_or_default();
        let window = rest
            .get(..super::lex::floor_boundary(rest, 64))
            .unwrap_or_default();
        let Some((at, c)) = window
            .char_indices()
            .find(|&(_, c)| super::lex::is_quote_char(c) || c == '\n')
        else {
            return false;
        };
        if c == '\n' {
            return false;
        }
        let after = self.next_non_ws(start + at + c.len_utf8());
        self.text.get(after..).and_then(Quote::open).is_some()
    }

    /// Whether a short quoted word and then `:` come next (`"key":`), judged within a bounded
    /// window, so a stray word before every quote in a long text costs no more than the window.
    fn quoted_key_follows(&self) -> bool {
        let Some((_, open)) = Quote::open(self.rest()) else {
            return false;
        };
        let start = self.pos + open;
        let rest = self.text.get(start..).unwrap_or_default();
        let window = rest
            .get(..super::lex::floor_boundary(rest, 256))
            .unwrap_or_default();
        match window
            .char_indices()
            .find(|&(_, c)| super::lex::is_quote_char(c))
        {
            Some((at, c)) => {
                let after = start + at + c.len_utf8();
                self.byte(self.next_non_ws(after)) == Some(b':')
            }
            None => false,
        }
    }

    /// `{"a", "b"}` after its first item: the rest of the items, up to `}`.
    fn set_items(&mut self, first: String) -> Result<B::List, RepairError> {
        self.note(RepairKind::SetLiteral);
        let mut items = B::list();
        B::push(&mut items, B::string(first));
        loop {
            self.skip_ws();
            match self.peek() {
                None => {
                    self.note(RepairKind::UnclosedContainer);
                    return Ok(items);
                }
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(items);
                }
                Some(b',') => self.pos += 1,
                Some(_) => match self.value(Ctx::ArrayItem)? {
                    Some(v) => B::push(&mut items, v),
                    None => self.skip_char(),
                },
            }
        }
    }

    fn array(&mut self) -> Result<B::Node, RepairError> {
        self.enter(b'[')?;
        self.pos += 1;
        let items = self.items(b']')?;
        self.stack.pop();
        Ok(B::array(items))
    }

    /// `(1, 2)` is `[1, 2]`; `(1)` is `1`.
    fn tuple(&mut self) -> Result<B::Node, RepairError> {
        self.note(RepairKind::Tuple);
        self.enter(b'(')?;
        self.pos += 1;
        let start = self.pos;
        let items = self.items(b')')?;
        self.stack.pop();
        let had_comma = self
            .text
            .get(start..self.pos)
            .is_some_and(|s| s.contains(','));
        if had_comma {
            return Ok(B::array(items));
        }
        Ok(B::only(items).unwrap_or_else(B::array))
    }

    /// Items up to and including `close`.
    fn items(&mut self, close: u8) -> Result<B::List, RepairError> {
        let mut items = B::list();
        let mut after_comma = false;
        loop {
            self.skip_ws();
            let Some(b) = self.peek() else {
                self.note(RepairKind::UnclosedContainer);
                return Ok(items);
            };
            if b == close {
                if after_comma {
                    self.note(RepairKind::TrailingComma);
                }
                self.pos += 1;
                return Ok(items);
            }
            match b {
                b']' | b'}' | b')' => {
                    if self.wrong_closer(b) {
                        return Ok(items);
                    }
                    continue;
                }
                _ if self.skip_filler() => continue,
                _ => {}
            }
            after_comma = false;
            let Some(item) = self.value(Ctx::ArrayItem)? else {
                self.skip_char();
                continue;
            };
            if self.cut_empty_string(&item) {
                continue;
            }
            // `["key": "value"]`: an object whose braces were left out.
            let item = match B::into_string(item) {
                Ok(key) if self.byte(self.next_non_ws(self.pos)) == Some(b':') => {
                    self.implicit_object(key)?
                }
                Ok(s) => B::string(s),
                Err(other) => other,
            };
            B::push(&mut items, item);
            after_comma = self.after_member();
        }
    }

    fn implicit_object(&mut self, key: String) -> Result<B::Node, RepairError> {
        self.note(RepairKind::ImplicitObject);
        self.pos = self.next_non_ws(self.pos) + 1;
        // Entered before the value, which is nested one level deeper than the text shows.
        self.enter(b'{')?;
        let value = match self.value(Ctx::ObjectValue)? {
            Some(value) => value,
            None => B::scalar(Value::Null),
        };
        let mut map = B::object();
        B::insert(&mut map, key, value);
        if self.after_member() || self.peek() == Some(b'}') {
            self.members(&mut map)?;
        }
        self.stack.pop();
        Ok(B::finish(map))
    }

    /// `"a" + "b"`: joins the strings that follow with `+`.
    fn concatenate(&mut self, mut s: String, ctx: Ctx) -> Result<String, RepairError> {
        loop {
            let plus = self.next_non_ws(self.pos);
            if self.byte(plus) != Some(b'+') {
                return Ok(s);
            }
            let save = self.pos;
            self.pos = plus + 1;
            self.skip_ws();
            if Quote::open(self.rest()).is_none() {
                self.pos = save;
                return Ok(s);
            }
            self.note_at(RepairKind::Concatenation, plus);
            s.push_str(&self.string(ctx)?);
        }
    }

    /// A number, or a number-looking token that is not one (kept as a string).
    fn number(&mut self, ctx: Ctx) -> Result<Option<B::Node>, RepairError> {
        let start = self.pos;
        let bytes = self.text.as_bytes();
        // `-Infinity`, `+Infinity`: read like `Infinity`, which JSON has no number for.
        if let Some(word) = self
            .rest()
            .get(1..)
            .filter(|_| matches!(bytes.get(start), Some(b'-' | b'+')))
        {
            if word.starts_with("Infinity")
                && !word.as_bytes().get(8).copied().is_some_and(continues_token)
            {
                self.pos += 1 + "Infinity".len();
                let text = self.text;
                let written = text.get(start..self.pos).unwrap_or_default();
                self.note_found(RepairKind::JsLiteral, start, written);
                return Ok(Some(B::scalar(Value::Null)));
            }
        }
        let mut i = start;
        let mut clean = String::new();
        let mut loose = false;
        if matches!(bytes.get(i), Some(b'-' | b'+')) {
            if bytes.get(i) == Some(&b'-') {
                clean.push('-');
            } else {
                loose = true;
            }
            i += 1;
        }
        let int_start = i;
        while let Some(&b) = bytes.get(i) {
            if b.is_ascii_digit() {
                clean.push(b as char);
            } else if b == b'_' && i > int_start {
                loose = true;
            } else {
                break;
            }
            i += 1;
        }
        let mut int_digits = i - int_start;
        let mut thousands = false;
        if ctx == Ctx::ObjectValue && !loose {
            if let Some(end) = self.thousands(int_start, i) {
                for &b in &bytes[i..end] {
                    if b.is_ascii_digit() {
                        clean.push(b as char);
                    }
                }
                int_digits += end - i;
                i = end;
                thousands = true;
            }
        }
        let mut fraction = false;
        if bytes.get(i) == Some(&b'.') && bytes.get(i + 1) != Some(&b'.') {
            fraction = true;
            i += 1;
            if int_digits == 0 {
                clean.push('0');
                loose = true;
            }
            clean.push('.');
            let frac_start = i;
            while let Some(&b) = bytes.get(i) {
                if b.is_ascii_digit() {
                    clean.push(b as char);
                } else if b == b'_' && i > frac_start {
                    loose = true;
                } else {
                    break;
                }
                i += 1;
            }
            if i == frac_start {
                clean.push('0');
                loose = true;
            }
        }
        let mut cut = false;
        if matches!(bytes.get(i), Some(b'e' | b'E')) && (int_digits > 0 || fraction) {
            let e_at = i;
            let mut j = i + 1;
            let mut exp = String::from("e");
            if let Some(&s @ (b'-' | b'+')) = bytes.get(j) {
                exp.push(s as char);
                j += 1;
            }
            let digits_start = j;
            while let Some(&b) = bytes.get(j).filter(|b| b.is_ascii_digit()) {
                exp.push(b as char);
                j += 1;
            }
            if j > digits_start {
                clean.push_str(&exp);
                i = j;
            } else if !bytes.get(j).copied().is_some_and(continues_token) {
                // `2e`, `2e-`: an exponent cut off; the mantissa stands.
                cut = j >= bytes.len();
                loose = true;
                i = j;
            } else {
                i = e_at;
            }
        }
        let next = bytes
            .get(i)
            .copied()
            .filter(|&b| !(b == b'/' && self.comment_at(i)));
        let leading_zero = clean.trim_start_matches('-').starts_with('0')
            && clean
                .trim_start_matches('-')
                .as_bytes()
                .get(1)
                .is_some_and(u8::is_ascii_digit);
        if int_digits == 0 && !fraction && next.is_some_and(|b| b.is_ascii_alphabetic()) {
            self.pos = start;
            return Ok(self.number_like_string(ctx));
        }
        if int_digits == 0 && !fraction {
            // A lone sign: `-` or `+` with nothing after it.
            self.pos = i;
            if self.pos >= bytes.len() {
                self.note_at(RepairKind::TruncatedToken, start);
            } else {
                self.note_at(RepairKind::SkippedCharacter, start);
            }
            return Ok(None);
        }
        if next.is_some_and(continues_token) || leading_zero {
            self.pos = start;
            return Ok(self.number_like_string(ctx));
        }
        self.pos = i;
        let written = self.text.get(start..i).unwrap_or_default();
        if cut {
            self.note_at(RepairKind::TruncatedToken, start);
        } else if thousands {
            self.note_found(RepairKind::ThousandsSeparator, start, written);
        } else if loose {
            self.note_found(RepairKind::LooseNumber, start, written);
        }
        if self.pos >= bytes.len() && ctx != Ctx::Top {
            // The text stops right after the digits: the number itself may be cut.
            self.note_at(RepairKind::TruncatedToken, start);
        }
        let (value, changed) = to_number(&clean);
        if let Some(kind) = changed {
            self.note_found(kind, start, written);
        }
        Ok(Some(B::scalar(value)))
    }

    /// `1,500` or `-2,000,000.5` as an object's value: the end of the groups when the digits
    /// from `int_start` to `i` (one to three, no leading zero) are followed by `,ddd` groups
    /// and then the end of the value. In an array the same text is two numbers, and stays so.
    fn thousands(&self, int_start: usize, i: usize) -> Option<usize> {
        let bytes = self.text.as_bytes();
        let digits = i - int_start;
        if !(1..=3).contains(&digits) || bytes.get(int_start) == Some(&b'0') {
            return None;
        }
        let mut end = i;
        while bytes.get(end) == Some(&b',')
            && bytes
                .get(end + 1..end + 4)
                .is_some_and(|g| g.iter().all(u8::is_ascii_digit))
            && !bytes.get(end + 4).is_some_and(u8::is_ascii_digit)
        {
            end += 4;
        }
        if end == i {
            return None;
        }
        let mut after = end;
        if bytes.get(after) == Some(&b'.') {
            after += 1;
            while bytes.get(after).is_some_and(u8::is_ascii_digit) {
                after += 1;
            }
        }
        matches!(self.byte(self.next_non_ws(after)), Some(b'}' | b',') | None).then_some(end)
    }

    /// `1/3`, `10-20`, `0789`, `2024-10-18T10:00Z`: a token that starts like a number.
    fn number_like_string(&mut self, ctx: Ctx) -> Option<B::Node> {
        let start = self.pos;
        let s = self.unquoted(ctx)?;
        self.note_at(RepairKind::NumberAsString, start);
        Some(B::string(s))
    }

    /// A word: a literal, a wrapper call, or an unquoted string.
    fn word(&mut self, ctx: Ctx) -> Result<Option<B::Node>, RepairError> {
        let start = self.pos;
        let word = self.word_at(start);
        let after = start + word.len();
        let next = self.byte(after);
        let ends = !next.is_some_and(continues_token) || next == Some(b':') && ctx == Ctx::Key;
        if ends && ctx != Ctx::Key {
            if let Some((value, kind)) = literal(word) {
                self.pos = after;
                if let Some(kind) = kind {
                    self.note_at(kind, start);
                }
                return Ok(Some(B::scalar(value)));
            }
            if after >= self.text.len() && !word.is_empty() {
                if let Some(full) = ["true", "false", "null"]
                    .into_iter()
                    .find(|l| l.starts_with(word))
                {
                    self.pos = after;
                    self.note_at(RepairKind::TruncatedToken, start);
                    return Ok(literal(full).map(|(v, _)| B::scalar(v)));
                }
            }
        }
        let paren = self.next_non_ws(after);
        if !word.is_empty() && ctx != Ctx::Key && self.byte(paren) == Some(b'(') {
            return self.call(start, paren).map(Some);
        }
        let value = self.unquoted(ctx).map(B::string);
        if value.is_some() && ctx != Ctx::Key {
            self.note_at(RepairKind::UnquotedString, start);
        }
        Ok(value)
    }

    /// `callback({...});`, `ObjectId("123")`: the argument stands for the call.
    fn call(&mut self, start: usize, paren: usize) -> Result<B::Node, RepairError> {
        self.note_at(RepairKind::FunctionCall, start);
        self.pos = paren + 1;
        self.enter(b'(')?;
        let value = match self.value(Ctx::ArrayItem)? {
            Some(value) => value,
            None => B::scalar(Value::Null),
        };
        self.stack.pop();
        self.skip_ws();
        if self.peek() == Some(b')') {
            self.pos += 1;
        }
        Ok(value)
    }

    /// An unquoted string, ended by what ends a value in `ctx`. Consumes a stray quote right
    /// after it (`abc",`). `None` when it would be empty.
    pub(super) fn unquoted(&mut self, ctx: Ctx) -> Option<String> {
        let start = self.pos;
        let bytes = self.text.as_bytes();
        let mut i = start;
        let mut braces = 0usize;
        while let Some(&b) = bytes.get(i) {
            let stop = match b {
                b',' | b']' | b'\n' | b'\r' => true,
                b'"' => true,
                b'{' if ctx != Ctx::Key => {
                    braces += 1;
                    false
                }
                b'}' => {
                    if braces == 0 || ctx == Ctx::Key {
                        true
                    } else {
                        braces -= 1;
                        false
                    }
                }
                b':' | b' ' | b'\t' | b'\'' | b'[' | b'{' | b'(' if ctx == Ctx::Key => true,
                // A comment ends the word; `//` only after a space, so `https://` stays.
                b'/' if self.comment_at(i) => {
                    bytes.get(i + 1) == Some(&b'*')
                        || i.checked_sub(1).and_then(|p| bytes.get(p)) == Some(&b' ')
                }
                _ => false,
            };
            if stop {
                break;
            }
            i += 1;
        }
        let raw = self.text.get(start..i).unwrap_or("");
        let trimmed = raw.trim_end();
        if trimmed.is_empty() {
            return None;
        }
        self.pos = i;
        if ctx == Ctx::Key {
            self.note_at(RepairKind::UnquotedKey, start);
        }
        if self.peek() == Some(b'"') {
            let after = self.next_non_ws(self.pos + 1);
            if matches!(self.byte(after), None | Some(b',' | b'}' | b']' | b':')) {
                self.note(RepairKind::StrayQuote);
                self.pos += 1;
            }
        }
        Some(trimmed.to_owned())
    }
}

pub(crate) fn is_literal_word(word: &str) -> bool {
    literal(word).is_some()
}

/// A literal word's value, and the repair when it is not JSON's own spelling.
fn literal(word: &str) -> Option<(Value, Option<RepairKind>)> {
    let python = Some(RepairKind::PythonLiteral);
    Some(match word {
        "true" => (Value::Bool(true), None),
        "false" => (Value::Bool(false), None),
        "null" => (Value::Null, None),
        "True" | "TRUE" => (Value::Bool(true), python),
        "False" | "FALSE" => (Value::Bool(false), python),
        "None" | "Null" | "NULL" => (Value::Null, python),
        "undefined" | "NaN" | "Infinity" => (Value::Null, Some(RepairKind::JsLiteral)),
        _ => return None,
    })
}

/// `clean` is a valid JSON number by construction. Integers that fit stay integers (`-0` is
/// the float `-0.0`, as `serde_json` reads it, so its sign is kept); any other number is the
/// `f64` it spells, with a repair when that is not the same number: rounded, or out of range
/// (kept as a string, since no number value holds it).
pub(super) fn to_number(clean: &str) -> (Value, Option<RepairKind>) {
    if clean != "-0" {
        if let Ok(i) = clean.parse::<i64>() {
            return (Value::Number(i.into()), None);
        }
        if let Ok(u) = clean.parse::<u64>() {
            return (Value::Number(u.into()), None);
        }
    }
    let f = clean.parse::<f64>().unwrap_or(f64::NAN);
    match Number::from_f64(f) {
        None => (
            Value::String(clean.to_owned()),
            Some(RepairKind::NumberOutOfRange),
        ),
        Some(n) => {
            let changed = !crate::read::number::same_number(clean, f);
            (
                Value::Number(n),
                changed.then_some(RepairKind::NumberRounded),
            )
        }
    }
}

//! The mistakes models make most, fixed in one pass: strings in single quotes and commas before
//! a closing bracket, in text that is otherwise JSON.
//!
//! The tolerant parser ([`super::parser`]) reads anything, deciding at every quote whether it
//! closes its string: about 88 instructions a byte on the bench's 523-byte answer
//! (`pipeline_cost repair_value`), where this pass takes about 20. Most broken answers need none
//! of its guesses: `{'severity': 'high', 'signals': [1, 2,],}` is JSON but for its quotes and two
//! commas. This pass takes such text only where every decision the parser would make is plain
//! from the next bytes, and steps aside (`None`) at anything else: a quote, comment, word or
//! number it does not read exactly as the parser does, a string that holds a bracket (the parser
//! counts them before it decides), a key given twice, or nothing to repair at all. Where it does
//! read a text, its JSON text reads as the value [`super::repair`] reads, and it lists the same
//! repairs at the same offsets (`tests` below: printed values with a byte changed, and the
//! corpus of broken JSON).

use super::hex4;
use super::parser::MAX_LISTED;
use super::report::{Repair, RepairKind, Repaired};

/// Nesting this pass reads; deeper text goes to the parser (whose own limit is
/// [`super::MAX_DEPTH`]).
const MAX_NESTING: usize = 64;

/// Members of one object this pass compares for a repeated key; an object with more goes to the
/// parser, so the comparisons stay a bounded multiple of the text.
const MAX_MEMBERS: usize = 64;

/// The longest number token read here: at most 15 characters and no exponent is a number every
/// reader holds as written ([`crate::read::number::long_numbers`] looks no further).
const PLAIN_NUMBER: usize = 15;

/// A key after a string value and a comma is read here only this long (the parser's look-ahead
/// for the next member stops at 64 bytes).
const MAX_KEY_AFTER_STRING: usize = 64;

/// Double quotes inside single quotes escaped at most (each kept as its place until the text is
/// written): more, and the parser reads the text, so what this pass holds stays within the
/// copy of the text and a few kilobytes.
const MAX_ESCAPED: usize = 1024;

/// The JSON text of `text` with its single quotes and trailing commas mended, and those
/// repairs, in one pass; `None` where the text needs anything else, or nothing. Where it reads a
/// text, [`repair`](super::repair) reads it to the same value with the same repairs: this is
/// the cheap way to it for the mistakes models make most, and `parse_response` tries it first
/// for a derived type. The text is mended where it lies (a quote for a quote, a space for a
/// trailing comma), so it is not compact.
///
/// ```
/// use structured_runtime::read::repair::{repair, repair_common, RepairKind};
///
/// let text = "{'name': 'Ada', 'langs': ['en', 'fr',]}";
/// let mended = repair_common(text).unwrap();
/// assert_eq!(mended.value, r#"{"name": "Ada", "langs": ["en", "fr" ]}"#);
/// assert_eq!(mended.repairs, repair(text).unwrap().repairs);
/// assert!(mended.repairs.iter().any(|r| r.kind == RepairKind::TrailingComma));
///
/// // Anything else is the tolerant parser's: here, a word without quotes.
/// assert!(repair_common("{name: 'Ada'}").is_none());
/// ```
pub fn repair_common(text: &str) -> Option<Repaired<String>> {
    let mut pass = Pass {
        bytes: text.as_bytes(),
        pos: 0,
        out: Vec::new(),
        escaped: Vec::new(),
        repairs: Vec::new(),
        keys: Vec::new(),
    };
    pass.ws();
    if !matches!(pass.peek()?, b'{' | b'[') {
        return None;
    }
    pass.value(0)?;
    pass.ws();
    if pass.pos != text.len() || pass.repairs.is_empty() {
        return None;
    }
    let repairs = std::mem::take(&mut pass.repairs);
    Some(Repaired {
        value: pass.written()?,
        repairs,
        truncated: false,
    })
}

struct Pass<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// A copy of the input with its quotes and trailing commas mended in place (a comma is
    /// written as a space), made at the first repair.
    out: Vec<u8>,
    /// Where a backslash goes before a double quote inside single quotes (the one repair that
    /// makes the text longer), in order.
    escaped: Vec<usize>,
    repairs: Vec<Repair>,
    /// The keys of the objects being read (their content's place in the input), outermost
    /// first.
    keys: Vec<(usize, usize)>,
}

impl Pass<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn ws(&mut self) {
        let rest = self.bytes.get(self.pos..).unwrap_or_default();
        self.pos += rest
            .iter()
            .position(|&b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .unwrap_or(rest.len());
    }

    /// The input byte at `at` (an ASCII byte) written as `with`, another.
    fn mend(&mut self, at: usize, with: u8) -> Option<()> {
        if self.out.is_empty() {
            self.out = self.bytes.to_vec();
        }
        *self.out.get_mut(at)? = with;
        Some(())
    }

    /// The JSON text: the mended copy, with the escapes put in.
    fn written(self) -> Option<String> {
        let out = if self.escaped.is_empty() {
            self.out
        } else {
            let mut with = Vec::with_capacity(self.out.len() + self.escaped.len());
            let mut run = 0;
            for &at in &self.escaped {
                with.extend_from_slice(self.out.get(run..at)?);
                with.push(b'\\');
                run = at;
            }
            with.extend_from_slice(self.out.get(run..)?);
            with
        };
        // Only ASCII bytes were changed, for ASCII bytes: still UTF-8 (checked, not assumed).
        String::from_utf8(out).ok()
    }

    fn note(&mut self, kind: RepairKind, at: usize) -> Option<()> {
        if self.repairs.len() >= MAX_LISTED {
            return None;
        }
        if self.repairs.is_empty() {
            // A quote style on every string: room for a small answer's at once.
            self.repairs.reserve_exact(32);
        }
        self.repairs.push(Repair {
            kind,
            at,
            found: None,
        });
        Some(())
    }

    /// A value at `pos` (after whitespace). Returns whether it was a string.
    ///
    /// The parser closes a string at a quote on what follows it. The containers below take
    /// only what it closes on at once: a key's colon, a member's `,` or `}` (and after the comma
    /// a plain key, or the `}`), an item's `,` or `]`.
    fn value(&mut self, depth: usize) -> Option<bool> {
        match self.peek()? {
            b'{' if depth < MAX_NESTING => self.object(depth + 1).map(|()| false),
            b'[' if depth < MAX_NESTING => self.array(depth + 1).map(|()| false),
            b'"' | b'\'' => self.string().map(|_| true),
            b'-' | b'0'..=b'9' => self.number().map(|()| false),
            b't' => self.word("true"),
            b'f' => self.word("false"),
            b'n' => self.word("null"),
            _ => None,
        }
    }

    fn word(&mut self, word: &str) -> Option<bool> {
        if !self.bytes.get(self.pos..)?.starts_with(word.as_bytes()) {
            return None;
        }
        self.pos += word.len();
        self.ends_value().then_some(false)
    }

    /// What follows a scalar is whitespace or a delimiter (the parser reads on through
    /// anything else: `1.5x`, `truey`).
    fn ends_value(&self) -> bool {
        matches!(
            self.peek(),
            None | Some(b' ' | b'\t' | b'\n' | b'\r' | b',' | b'}' | b']')
        )
    }

    /// A JSON number of at most [`PLAIN_NUMBER`] characters, without an exponent, not a
    /// negative zero.
    fn number(&mut self) -> Option<()> {
        let start = self.pos;
        let digits = |pass: &mut Self| {
            let from = pass.pos;
            while pass.peek().is_some_and(|b| b.is_ascii_digit()) {
                pass.pos += 1;
            }
            pass.pos - from
        };
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let first = self.peek()?;
        let int = digits(self);
        if int == 0 || (first == b'0' && int > 1) {
            return None;
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if digits(self) == 0 {
                return None;
            }
        }
        let token = self.bytes.get(start..self.pos)?;
        let negative_zero =
            token.first() == Some(&b'-') && token.iter().all(|&b| matches!(b, b'-' | b'0' | b'.'));
        // (`{"n": 1,000}`, digit groups the parser reads as one number in a member, does not get
        // here: a key must follow a member's comma.)
        (token.len() <= PLAIN_NUMBER && !negative_zero && self.ends_value()).then_some(())
    }

    /// A string in double or single quotes, its content left for the parser's reading: no
    /// control character, no bracket, no escape but JSON's own (and none in single quotes).
    /// Returns where its content lies in the input.
    fn string(&mut self) -> Option<(usize, usize)> {
        let open = self.pos;
        let quote = self.peek()?;
        let single = quote == b'\'';
        if single {
            self.note(RepairKind::SingleQuotes, open)?;
            self.mend(open, b'"')?;
        }
        let start = open + 1;
        let mut i = start;
        loop {
            // Plain content is skipped by table, a byte at a time.
            let rest = self.bytes.get(i..)?;
            i += rest
                .iter()
                .position(|&b| !PLAIN[usize::from(b)])
                .unwrap_or(rest.len());
            match *self.bytes.get(i)? {
                b if b == quote => break,
                b'"' => {
                    // A double quote inside single quotes: escaped in the JSON written.
                    if self.escaped.len() >= MAX_ESCAPED {
                        return None;
                    }
                    self.escaped.push(i);
                    i += 1;
                }
                b'\'' => i += 1,
                b'\\' if !single => i = self.escape(i)?,
                _ => return None,
            }
        }
        let end = i;
        if single {
            self.mend(end, b'"')?;
        }
        self.pos = end + 1;
        Some((start, end))
    }

    /// A JSON escape at `i` (a backslash in double quotes); returns where it ends. A `\u`
    /// escape of a surrogate is left to the parser, which joins or replaces them.
    fn escape(&self, i: usize) -> Option<usize> {
        match *self.bytes.get(i + 1)? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(i + 2),
            b'u' => {
                let code = hex4(self.bytes.get(i + 2..i + 6)?)?;
                (!(0xD800..0xE000).contains(&code)).then_some(i + 6)
            }
            _ => None,
        }
    }

    fn object(&mut self, depth: usize) -> Option<()> {
        self.pos += 1;
        if self.keys.capacity() == 0 {
            self.keys.reserve_exact(16);
        }
        let keys_from = self.keys.len();
        self.ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Some(());
        }
        // Whether the last member's value was a string, and a comma followed it: the parser
        // then closes that string only if a member plainly starts after the comma.
        let mut after_string = false;
        loop {
            if !matches!(self.peek(), Some(b'"' | b'\'')) {
                return None;
            }
            let quote = self.peek();
            let (start, end) = self.string()?;
            let key = self.bytes.get(start..end)?;
            if after_string && !plain_key_after_string(key) {
                return None;
            }
            // A key given twice is the parser's to resolve (and a backslash could spell a
            // key twice in two ways; single quotes hold none here, so only a key in double
            // quotes is searched for one).
            let open = self.keys.get(keys_from..)?;
            if open.len() >= MAX_MEMBERS
                || (quote == Some(b'"') && key.contains(&b'\\'))
                || open.iter().any(|&(s, e)| self.bytes.get(s..e) == Some(key))
            {
                return None;
            }
            self.keys.push((start, end));
            self.ws();
            if self.peek() != Some(b':') {
                return None;
            }
            self.pos += 1;
            self.ws();
            let string = self.value(depth)?;
            if self.next_or_close(b'}')? {
                break;
            }
            after_string = string;
        }
        self.keys.truncate(keys_from);
        Some(())
    }

    fn array(&mut self, depth: usize) -> Option<()> {
        self.pos += 1;
        self.ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Some(());
        }
        loop {
            self.value(depth)?;
            if self.next_or_close(b']')? {
                return Some(());
            }
        }
    }

    /// After a member or item: its container's `close` (`true`), or a comma and the next one
    /// (`false`). A comma just before `close` is a trailing comma: noted at `close`, where the
    /// parser notes it, and written as a space.
    // On the way of every member and item: inlined where each container reads it.
    #[inline(always)]
    fn next_or_close(&mut self, close: u8) -> Option<bool> {
        self.ws();
        let b = self.peek()?;
        if b == close {
            self.pos += 1;
            return Some(true);
        }
        if b != b',' {
            return None;
        }
        let comma = self.pos;
        self.pos += 1;
        self.ws();
        if self.peek() != Some(close) {
            return Some(false);
        }
        self.note(RepairKind::TrailingComma, self.pos)?;
        self.mend(comma, b' ')?;
        self.pos += 1;
        Some(true)
    }
}

/// A key the parser takes for the next member after a string value and a comma: a word of
/// letters, digits, `_`, `$`, `-` and spaces, short enough for its look-ahead.
fn plain_key_after_string(key: &[u8]) -> bool {
    key.len() <= MAX_KEY_AFTER_STRING && key.iter().all(|&b| KEY_WORD[usize::from(b)])
}

/// The bytes of [`plain_key_after_string`]'s word.
static KEY_WORD: [bool; 256] = crate::read::byte_table::of(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_$- ",
);

/// String content skipped without a look: not a quote, backslash, control character or
/// bracket. The bytes of a longer character are plain: inside single or double quotes the
/// parser closes a string on an ASCII quote only.
static PLAIN: [bool; 256] = crate::read::byte_table::plain_in_string(b"'{}[]");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::repair::build::ValueBuild;
    use crate::read::repair::parser::Parser;
    use proptest::prelude::*;
    use serde_json::Value;

    /// What this pass claims: where it reads a text, the parser reads it to the same value with
    /// the same repairs, complete.
    fn agrees(text: &str) -> Result<bool, TestCaseError> {
        let Some(common) = repair_common(text) else {
            return Ok(false);
        };
        let full = Parser::<ValueBuild>::new(text).document();
        let Ok(full) = full else {
            return Err(TestCaseError::fail(format!(
                "{text:?}: the parser refused it"
            )));
        };
        prop_assert_eq!(&common.repairs, &full.repairs, "{:?}", text);
        prop_assert!(!full.truncated);
        prop_assert!(!common.repairs.is_empty());
        let read = serde_json::from_str::<Value>(&common.value);
        prop_assert_eq!(
            read.ok(),
            Some(full.value),
            "{:?} -> {:?}",
            text,
            common.value
        );
        Ok(true)
    }

    #[test]
    fn the_repaired_answer_is_read_in_one_pass() {
        let text = "{\n  'severity': 'moderate',\n  'note': 'a \"quoted\" word',\n  \
                    'signals': [\n    {'source': 'price', 'magnitude': 0.61},\n  ],\n  \
                    'escalate': false,\n}";
        let common = repair_common(text).expect("read in one pass");
        let kinds: Vec<_> = common.repairs.iter().map(|r| (r.kind, r.at)).collect();
        let single = |at| (RepairKind::SingleQuotes, at);
        let at = |s: &str| text.find(s).unwrap_or(usize::MAX);
        assert_eq!(kinds.first(), Some(&single(at("'severity'"))));
        assert_eq!(
            kinds
                .iter()
                .filter(|(k, _)| *k == RepairKind::TrailingComma)
                .count(),
            2
        );
        assert_eq!(
            serde_json::from_str::<Value>(&common.value).ok(),
            Some(serde_json::json!({
                "severity": "moderate",
                "note": "a \"quoted\" word",
                "signals": [{"source": "price", "magnitude": 0.61}],
                "escalate": false
            }))
        );
        assert!(agrees(text).unwrap_or(false));
    }

    /// The repository's corpus of broken JSON (`tests/data/corpus`, with its origin and
    /// licence): every input this pass reads, the parser reads alike.
    #[test]
    fn the_corpus_is_read_alike_where_this_pass_reads_it() -> Result<(), TestCaseError> {
        let corpus = [
            include_str!("../../../../tests/data/corpus/json_repair.jsonl"),
            include_str!("../../../../tests/data/corpus/jsonrepair_ts.jsonl"),
        ];
        let (mut inputs, mut read) = (0, 0);
        for line in corpus.iter().flat_map(|file| file.lines()) {
            let case: Value =
                serde_json::from_str(line).map_err(|e| TestCaseError::fail(e.to_string()))?;
            if let Some(input) = case["input"].as_str() {
                inputs += 1;
                read += usize::from(agrees(input)?);
            }
        }
        // What it reads: JSON in single quotes, with trailing commas, and little else.
        assert_eq!(inputs, 682);
        assert!(read >= 10, "{read} of {inputs}");
        Ok(())
    }

    #[test]
    fn what_the_parser_decides_otherwise_is_left_to_it() {
        for text in [
            // Nothing to repair: the strict reading's.
            r#"{"a": 1}"#,
            // A bracket in a string: the parser counts it before it decides.
            "{'a': 'x}', 'b': 1}",
            // After a string and a comma, a key the parser does not take for one.
            "{'a': 'x', 'b.c': 1}",
            // A key given twice.
            "{'a': 1, 'a': 2}",
            // Digit groups in a member.
            "{'a': 1,000}",
            // An escape in single quotes, a comment, a Python word, an exponent.
            r"{'a': 'it\'s'}",
            "{'a': 1 // one\n}",
            "{'a': True}",
            "{'a': 1e5}",
            "{'a': -0}",
            // Text around the value, or a second value.
            "x {'a': 1}",
            "{'a': 1} {'b': 2}",
            // A string where a key belongs that closes on anything but a colon.
            "{'a', 'b'}",
            "['a': 1]",
        ] {
            assert!(repair_common(text).is_none(), "{text:?}");
        }
    }

    #[test]
    fn nesting_members_and_escapes_are_bounded() {
        let deep = format!(
            "{}'x'{}",
            "[".repeat(MAX_NESTING + 1),
            "]".repeat(MAX_NESTING + 1)
        );
        assert!(repair_common(&deep).is_none());
        let fine = format!("{}'x'{}", "[".repeat(MAX_NESTING), "]".repeat(MAX_NESTING));
        assert!(agrees(&fine).unwrap_or(false));
        let members = |n: usize| {
            let list: Vec<String> = (0..n).map(|i| format!("'k{i}': {i}")).collect();
            format!("{{{}}}", list.join(", "))
        };
        assert!(agrees(&members(MAX_MEMBERS)).unwrap_or(false));
        assert!(repair_common(&members(MAX_MEMBERS + 1)).is_none());
        let quotes = |n: usize| format!("['{}']", "\"".repeat(n));
        assert!(agrees(&quotes(MAX_ESCAPED)).unwrap_or(false));
        assert!(repair_common(&quotes(MAX_ESCAPED + 1)).is_none());
    }

    /// A value printed as a model might: each string in single or double quotes, any spacing,
    /// a trailing comma or not.
    #[derive(Debug, Clone)]
    enum Shape {
        Scalar(&'static str),
        Text(String),
        List(Vec<Shape>),
        Object(Vec<(String, Shape)>),
    }

    fn shape() -> impl Strategy<Value = Shape> {
        // Mostly what this pass reads, sometimes what it must leave to the parser.
        let words = prop_oneof![
            4 => prop::sample::select(vec![
                "", "a", "vault", "it's", "say \"hi\"", "a, b", "k: v", "é’", "b c", "$id", "-x",
                "```", "//", "#", "back\\\\slash", "\\u00e9",
            ]),
            1 => prop::sample::select(vec![
                "x}", "[1]", "{x", "a [b", "\\ud83d", "tab\t", "line\nbreak", "\\ud83d\\ude00", "\\q", "b.c",
            ]),
        ];
        let leaf = prop_oneof![
            4 => prop::sample::select(vec![
                "0", "10", "-5", "0.720", "1.50", "-0.5", "1234567890.12345", "true", "false",
                "null",
            ])
            .prop_map(Shape::Scalar),
            1 => prop::sample::select(vec![
                "-0", "1e5", "01", "1.", ".5", "123456789012345678", "True", "None",
            ])
            .prop_map(Shape::Scalar),
            5 => words.clone().prop_map(|w| Shape::Text(w.to_owned())),
        ];
        leaf.prop_recursive(4, 24, 5, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Shape::List),
                prop::collection::vec((words.clone().prop_map(str::to_owned), inner), 0..5)
                    .prop_map(Shape::Object),
            ]
        })
    }

    /// Prints `shape`, each choice (quote, spacing, trailing comma) taken from `choices` in turn.
    fn print(shape: &Shape, choices: &mut impl Iterator<Item = u8>, out: &mut String) {
        fn pick(choices: &mut impl Iterator<Item = u8>, n: u8) -> u8 {
            choices.next().unwrap_or(0) % n
        }
        let space = |c: u8| ["", " ", "\n  ", "\t"][usize::from(c % 4)];
        match shape {
            Shape::Scalar(s) => out.push_str(s),
            Shape::Text(t) => {
                let q = if pick(choices, 3) == 0 { '"' } else { '\'' };
                out.push(q);
                out.push_str(t);
                out.push(q);
            }
            Shape::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(space(pick(choices, 4)));
                    print(item, choices, out);
                }
                if !items.is_empty() && pick(choices, 2) == 0 {
                    out.push(',');
                }
                out.push_str(space(pick(choices, 4)));
                out.push(']');
            }
            Shape::Object(members) => {
                out.push('{');
                for (i, (key, value)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(space(pick(choices, 4)));
                    print(&Shape::Text(key.clone()), choices, out);
                    out.push_str(if pick(choices, 2) == 0 { ": " } else { ":" });
                    print(value, choices, out);
                }
                if !members.is_empty() && pick(choices, 2) == 0 {
                    out.push(',');
                }
                out.push_str(space(pick(choices, 4)));
                out.push('}');
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

        /// Printed values, and the same with a byte dropped or one of JSON's bytes put in: this
        /// pass reads them as the parser does, or leaves them to it.
        #[test]
        fn what_this_pass_reads_the_parser_reads_alike(
            root in shape().prop_filter("a container", |s| matches!(s, Shape::List(_) | Shape::Object(_))),
            choices in prop::collection::vec(any::<u8>(), 64),
            edit in (any::<usize>(), prop::sample::select(vec![None, Some(','), Some('\''), Some('"'), Some(':'), Some('1'), Some(' '), Some('}')])),
        ) {
            let mut text = String::new();
            print(&root, &mut choices.into_iter().cycle(), &mut text);
            agrees(&text)?;
            let (at, put) = edit;
            let at = at % (text.len() + 1);
            if text.is_char_boundary(at) {
                let mut edited = text.clone();
                match put {
                    Some(c) => edited.insert(at, c),
                    None if at < text.len() => {
                        if let Some(c) = edited.get(at..).and_then(|r| r.chars().next()) {
                            edited.replace_range(at..at + c.len_utf8(), "");
                        }
                    }
                    None => {}
                }
                agrees(&edited)?;
            }
        }
    }
}

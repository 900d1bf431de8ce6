//! What a repair reports: the value, every change with its offset, and why none could be read.

use std::fmt;

use serde_json::Value;

/// Containers nested deeper than this are refused. `serde_json` reads at most 127 levels, and
/// the array that collects several top-level values adds one: so every repaired value prints
/// to text that `serde_json` reads back.
pub const MAX_DEPTH: usize = 126;

/// The value read from the text, with every repair applied to get it. `V` is the value
/// (a `serde_json::Value`), or its JSON text ([`super::repair_text_json`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Repaired<V = Value> {
    /// The value.
    pub value: V,
    /// Every repair, in the order the parser made them.
    pub repairs: Vec<Repair>,
    /// The text ended inside a value (an unclosed string, container or number): the value was
    /// closed where the text stopped and may lack what the model did not get to write.
    pub truncated: bool,
}

impl<V> Repaired<V> {
    /// No repair at all: the text was JSON (up to surrounding whitespace).
    pub fn is_clean(&self) -> bool {
        self.repairs.is_empty()
    }

    /// Only the text around the value was dropped: the value itself is exactly as written.
    pub fn is_extracted_only(&self) -> bool {
        self.repairs.iter().all(|r| r.kind.is_extraction())
    }

    /// A ranking weight: 1 per syntax repair, nothing for prose around the value, and a
    /// truncation weighs more than any handful of repairs, because content is missing.
    pub fn cost(&self) -> usize {
        let repairs = self
            .repairs
            .iter()
            .filter(|r| !r.kind.is_extraction())
            .count();
        repairs + if self.truncated { 1000 } else { 0 }
    }
}

/// One repair: what was fixed and where (byte offset in the text given to
/// [`repair`](super::repair)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repair {
    /// What was fixed.
    pub kind: RepairKind,
    /// Byte offset where the parser made the fix.
    pub at: usize,
    /// The text that was read, where the kind alone does not say what changed (a number read
    /// differently, a duplicated key), cut to [`MAX_FOUND`] bytes.
    pub found: Option<String>,
}

/// The most of the text a repair quotes.
pub const MAX_FOUND: usize = 80;

impl fmt::Display for Repair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.found {
            Some(found) => write!(f, "{}: `{found}` (at byte {})", self.kind, self.at),
            None => write!(f, "{} (at byte {})", self.kind, self.at),
        }
    }
}

/// The mistakes the repairer fixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RepairKind {
    /// Text before the value (prose, a `callback(` wrapper's name) was skipped.
    LeadingText,
    /// Text after the value was ignored.
    TrailingText,
    /// A markdown fence marker (```` ```json ````) inside the JSON was skipped.
    FenceMarker,
    /// A raw control character inside a string was escaped.
    ControlCharacter,
    /// A raw line break just before a closing quote was dropped (the quote was put on the next line).
    LineBreakBeforeQuote,
    /// Unicode whitespace JSON does not allow (no-break space, zero-width space, BOM) was skipped.
    SpecialWhitespace,
    /// A `//`, `/* */` or `#` comment was removed.
    Comment,
    /// A comma before a closing bracket was removed.
    TrailingComma,
    /// A leading or doubled comma was removed.
    ExtraComma,
    /// A missing comma between two items was inserted.
    MissingComma,
    /// A missing colon between a key and its value was inserted.
    MissingColon,
    /// A key without a value got `null`.
    MissingValue,
    /// A string in single quotes.
    SingleQuotes,
    /// A string in typographic quotes or backticks.
    SmartQuotes,
    /// Quotes written twice around a string (`""key""`).
    DoubledQuotes,
    /// A string escaped as if embedded in another string (`{\"a\": 1}`).
    EscapedJson,
    /// An object key without quotes.
    UnquotedKey,
    /// A string value without quotes.
    UnquotedString,
    /// A quote inside a string that was not escaped was kept as a character.
    UnescapedQuote,
    /// A missing closing quote was inserted before a delimiter.
    MissingQuote,
    /// A stray quote after an unquoted value was dropped.
    StrayQuote,
    /// An escape JSON does not know (`\a`, `\'`) was kept as text.
    InvalidEscape,
    /// A `\u` escape of a lone UTF-16 surrogate became U+FFFD.
    LoneSurrogate,
    /// `True`, `False`, `None` (Python).
    PythonLiteral,
    /// `undefined`, `NaN`, `Infinity` (JavaScript) became `null`.
    JsLiteral,
    /// A number written loosely (`.5`, `1.`, `1_000`, `2e`, `+1`) was normalized.
    LooseNumber,
    /// Something number-like that is not a number (`1/3`, `2024-10-18`, `0789`) became a string.
    NumberAsString,
    /// A number written with thousands separators (`1,500` as an object's value) was read
    /// without them.
    ThousandsSeparator,
    /// A number beyond the range of a 64-bit float (`1e999`) was kept as a string: no number
    /// value holds it.
    NumberOutOfRange,
    /// A number with more digits than a 64-bit float holds was rounded (the text read is in
    /// the repair).
    NumberRounded,
    /// `=` written where a colon belongs (`{"a" = 1}`).
    EqualsForColon,
    /// A string in triple quotes (`"""..."""`, Python) was read with its content.
    TripleQuotes,
    /// A backslash before a raw line break inside a string (a line continuation) was dropped
    /// and the line break kept.
    LineContinuation,
    /// An empty object or array beside another top-level value was dropped.
    EmptyValueDropped,
    /// Another place in the answer held JSON too, and was not used.
    OtherCandidate,
    /// A `...` placeholder was removed.
    Ellipsis,
    /// A wrapper call (`callback(...)`, `ObjectId("...")`) was replaced by its argument.
    FunctionCall,
    /// A Python tuple `( ... )` became an array (or its single item).
    Tuple,
    /// A set literal `{"a", "b"}` became an array.
    SetLiteral,
    /// `"key": value` inside an array became an object.
    ImplicitObject,
    /// Strings joined with `+` were concatenated.
    Concatenation,
    /// A closing bracket of the wrong kind closed the open container.
    MismatchedBracket,
    /// A closing bracket with nothing to close was removed.
    ExtraBracket,
    /// An object closed too early was continued with the members that follow it.
    ReopenedObject,
    /// A key given twice: the last value is kept.
    DuplicateKey,
    /// Several top-level values were collected into an array.
    MultipleValues,
    /// A bare word inside an object (not a key: no value follows it) was dropped; `found`
    /// names it.
    DroppedToken,
    /// More repairs were made than are listed (the first 1,000 ordinary ones are): `found`
    /// says how many more. Each was one of the kinds above, made as they are.
    Unlisted,
    /// A character that starts no value was skipped.
    SkippedCharacter,
    /// The text ended inside a string, which was closed there.
    UnclosedString,
    /// The text ended inside an object or array, which was closed there.
    UnclosedContainer,
    /// The text ended inside a literal or number, which was completed (`tru` → `true`).
    TruncatedToken,
}

impl RepairKind {
    /// The text around the value was dropped; the value itself was not changed.
    pub fn is_extraction(self) -> bool {
        matches!(
            self,
            RepairKind::LeadingText
                | RepairKind::TrailingText
                | RepairKind::FenceMarker
                | RepairKind::OtherCandidate
        )
    }

    /// The text ended before the value did.
    pub fn is_truncation(self) -> bool {
        matches!(
            self,
            RepairKind::UnclosedString | RepairKind::UnclosedContainer | RepairKind::TruncatedToken
        )
    }

    fn describe(self) -> &'static str {
        use RepairKind::*;
        match self {
            LeadingText => "skipped text before the JSON",
            TrailingText => "ignored text after the JSON",
            FenceMarker => "skipped a markdown fence marker",
            ControlCharacter => "escaped a control character inside a string",
            LineBreakBeforeQuote => "dropped a raw line break before a closing quote",
            SpecialWhitespace => "skipped non-JSON whitespace",
            Comment => "removed a comment",
            TrailingComma => "removed a trailing comma",
            ExtraComma => "removed an extra comma",
            MissingComma => "inserted a missing comma",
            MissingColon => "inserted a missing colon",
            MissingValue => "a key without a value became null",
            SingleQuotes => "read a single-quoted string",
            SmartQuotes => "read a string in typographic quotes or backticks",
            DoubledQuotes => "read a string in doubled quotes",
            EscapedJson => "unescaped JSON written as a string literal",
            UnquotedKey => "quoted an unquoted key",
            UnquotedString => "quoted an unquoted string",
            UnescapedQuote => "kept an unescaped quote inside a string",
            MissingQuote => "inserted a missing closing quote",
            StrayQuote => "dropped a stray quote",
            InvalidEscape => "kept an invalid escape as text",
            LoneSurrogate => "replaced a lone UTF-16 surrogate with U+FFFD",
            PythonLiteral => "read a Python literal",
            JsLiteral => "a JavaScript literal became null",
            LooseNumber => "normalized a loosely written number",
            NumberAsString => "kept a malformed number as a string",
            DroppedToken => "dropped a bare word that is neither a key nor a value",
            Unlisted => "made more repairs of the kinds listed, not listed one by one",
            ThousandsSeparator => "read a number without its thousands separators",
            NumberOutOfRange => "kept a number too large for a 64-bit float as a string",
            NumberRounded => "rounded a number to the nearest 64-bit float",
            EqualsForColon => "read `=` as a colon",
            TripleQuotes => "read a string in triple quotes",
            LineContinuation => "dropped a backslash before a line break inside a string",
            EmptyValueDropped => "dropped an empty value beside another top-level value",
            OtherCandidate => "other JSON in the answer was not used",
            Ellipsis => "removed a `...` placeholder",
            FunctionCall => "replaced a wrapper call by its argument",
            Tuple => "read a Python tuple as an array",
            SetLiteral => "read a set literal as an array",
            ImplicitObject => "wrapped `key: value` inside an array into an object",
            Concatenation => "concatenated strings joined with +",
            MismatchedBracket => "closed a container with a bracket of the wrong kind",
            ExtraBracket => "removed a closing bracket with nothing to close",
            ReopenedObject => "continued an object closed too early",
            DuplicateKey => "a duplicated key kept its last value",
            MultipleValues => "collected several top-level values into an array",
            SkippedCharacter => "skipped a character that starts no value",
            UnclosedString => "the text ended inside a string",
            UnclosedContainer => "the text ended inside an object or array",
            TruncatedToken => "the text ended inside a literal or number",
        }
    }
}

impl fmt::Display for RepairKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// Why no value could be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RepairError {
    /// The text holds no JSON value: nothing that starts an object, array, string, number or literal.
    #[error("no JSON value found in {len} bytes of text")]
    NotFound {
        /// Length of the text searched.
        len: usize,
    },
    /// Containers nested deeper than [`MAX_DEPTH`].
    #[error("JSON nested deeper than {max} levels at byte {at}")]
    TooDeep {
        /// Byte offset of the bracket that went too deep.
        at: usize,
        /// The limit.
        max: usize,
    },
}

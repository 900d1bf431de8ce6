//! Character classes and the skipping of whitespace, comments and fence markers.

use super::report::RepairKind;

/// How a string was opened, which decides what may close it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Quote {
    /// `"`
    Double,
    /// `'`
    Single,
    /// `“ ” „`: closed by `” “ "`.
    SmartDouble,
    /// `‘ ’`: closed by `’ ‘ '`.
    SmartSingle,
    /// `` ` `` or `´`: closed by `´ ` '`.
    Backtick,
    /// `\"` (JSON written as an escaped string): closed by `\"`.
    Escaped,
}

impl Quote {
    /// The quote opening a string at the start of `rest`, with its length in bytes.
    pub(super) fn open(rest: &str) -> Option<(Quote, usize)> {
        // ASCII first: no character to decode for the quotes models write most.
        match *rest.as_bytes().first()? {
            b'"' => return Some((Quote::Double, 1)),
            b'\'' => return Some((Quote::Single, 1)),
            b'`' => return Some((Quote::Backtick, 1)),
            b'\\' => {
                return (rest.as_bytes().get(1) == Some(&b'"')).then_some((Quote::Escaped, 2));
            }
            b if b < 0x80 => return None,
            _ => {}
        }
        let c = rest.chars().next()?;
        let quote = match c {
            '"' => Quote::Double,
            '\'' => Quote::Single,
            '“' | '”' | '„' => Quote::SmartDouble,
            '‘' | '’' => Quote::SmartSingle,
            '`' | '´' => Quote::Backtick,
            '\\' if rest.as_bytes().get(1) == Some(&b'"') => return Some((Quote::Escaped, 2)),
            _ => return None,
        };
        Some((quote, c.len_utf8()))
    }

    /// Whether `c` closes a string opened by `self`.
    pub(super) fn closes(self, c: char) -> bool {
        match self {
            Quote::Double => c == '"',
            Quote::Single => c == '\'',
            Quote::SmartDouble => matches!(c, '”' | '“' | '"'),
            Quote::SmartSingle => matches!(c, '’' | '‘' | '\''),
            Quote::Backtick => matches!(c, '´' | '`' | '\''),
            Quote::Escaped => false,
        }
    }

    /// The repair recorded for a string opened this way, if any.
    pub(super) fn repair(self) -> Option<RepairKind> {
        match self {
            Quote::Double => None,
            Quote::Single => Some(RepairKind::SingleQuotes),
            Quote::SmartDouble | Quote::SmartSingle | Quote::Backtick => {
                Some(RepairKind::SmartQuotes)
            }
            Quote::Escaped => Some(RepairKind::EscapedJson),
        }
    }
}

/// Any character that may open or close a string.
pub(super) fn is_quote_char(c: char) -> bool {
    matches!(c, '"' | '\'' | '“' | '”' | '„' | '‘' | '’' | '`' | '´')
}

/// Unicode whitespace that is not JSON whitespace but is skipped between tokens.
pub(super) fn is_special_space(c: char) -> bool {
    matches!(
        c,
        '\u{a0}' | '\u{1680}' | '\u{180e}' | '\u{2000}'
            ..='\u{200b}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}'
    )
}

/// A byte that may be part of an identifier-like word (unquoted key, literal, function name).
pub(super) fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

/// A byte that continues a number-looking token into something that is not a number
/// (`1/3`, `10-20`, `1.1.1`, `57eeeeb1-450b`, `2024-10-18T18:35:22Z`).
pub(super) fn continues_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+' | b'/' | b':' | b'_')
}

/// The largest char boundary of `s` at or below `max`.
pub(super) fn floor_boundary(s: &str, max: usize) -> usize {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    end
}

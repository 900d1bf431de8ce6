//! `pattern` and `patternProperties`: how a string is matched, and which patterns a schema may
//! hold.
//!
//! The rule: patterns are matched by the linear-time `regex` engine, here and in the validator of
//! record, so matching costs time linear in the string whatever the pattern. What that engine
//! cannot run in linear time (backreferences, lookahead and lookbehind) is refused when the
//! schema is built ([`unsupported`]), with the path of the pattern: never a slow match, and never
//! a valid string reported as "not matching" because a backtracking engine gave up.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Whether `text` matches `pattern` as JSON Schema means it (a search: anchors are the
/// pattern's own), and as the validator of record matches it: the pattern is ECMA-262, read
/// into the regex crate's syntax by the validator's own translation (`\d` is an ASCII digit,
/// `\s` ECMA-262's white space), so a verdict here is the validator's. Each pattern is
/// compiled once and kept (the first 1,024 patterns; others are compiled per call). A pattern
/// that does not compile matches nothing: the derive refuses such patterns, and a schema given
/// at run time is refused at construction.
pub(crate) fn pattern_matches(pattern: &str, text: &str) -> bool {
    const KEPT: usize = 1024;
    static COMPILED: OnceLock<Mutex<HashMap<String, Option<regex::Regex>>>> = OnceLock::new();
    let mut compiled = COMPILED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(regex) = compiled.get(pattern) {
        return regex.as_ref().is_some_and(|r| r.is_match(text));
    }
    let regex = jsonschema_regex::to_rust_regex(pattern)
        .ok()
        .and_then(|translated| regex::Regex::new(&translated).ok());
    let matches = regex.as_ref().is_some_and(|r| r.is_match(text));
    if compiled.len() < KEPT {
        compiled.insert(pattern.to_owned(), regex);
    }
    matches
}

/// Why `pattern` cannot be matched in linear time, when it uses a feature only a backtracking
/// engine has: a backreference, or lookahead / lookbehind. Any other error is the validator's
/// to report (it knows the dialect's escapes).
pub(crate) fn unsupported(pattern: &str) -> Option<&'static str> {
    use regex_syntax::ast::ErrorKind;
    let error = regex_syntax::ast::parse::Parser::new()
        .parse(pattern)
        .err()?;
    match error.kind() {
        ErrorKind::UnsupportedBackreference => Some(
            "a backreference (`\\1`, `\\k<name>`) needs a backtracking engine; patterns are matched in linear time",
        ),
        ErrorKind::UnsupportedLookAround => Some(
            "lookahead and lookbehind (`(?=`, `(?!`, `(?<=`, `(?<!`) need a backtracking engine; patterns are matched in linear time",
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backtracking_features_are_named() {
        assert!(unsupported(r"^(a)\1$").unwrap().contains("backreference"));
        assert!(unsupported(r"^(?=a)a$").unwrap().contains("lookahead"));
        assert!(unsupported(r"^(?<!a)b$").unwrap().contains("lookahead"));
        assert_eq!(unsupported(r"^[a-z]+(-[0-9]{2})?$"), None);
        // Not a regular expression at all: the validator's to say.
        assert_eq!(unsupported(r"^(a$"), None);
    }

    #[test]
    fn a_pattern_is_read_as_ecma_262_as_the_validator_reads_it() {
        use crate::schema::validation::Compiled;
        use serde_json::json;
        // Where the two dialects part: a digit of another script, a non-breaking space, a
        // letter with an accent.
        let cases = [
            (r"^\d+$", "\u{663}"),
            (r"^\d+$", "42"),
            (r"^\s$", "\u{a0}"),
            (r"^\S+$", "a\u{feff}b"),
            (r"^\w+$", "\u{e9}t\u{e9}"),
            (r"^\w+$", "ete"),
            (r"^[a-z]+$", "abc"),
        ];
        for (pattern, text) in cases {
            let validator = Compiled::new(&json!({"pattern": pattern})).unwrap();
            assert_eq!(
                pattern_matches(pattern, text),
                validator.is_valid(&json!(text)),
                "{pattern} on {text:?}"
            );
        }
        assert!(!pattern_matches(r"^\d+$", "\u{663}"));
        assert!(pattern_matches(r"^\s$", "\u{a0}"));
    }

    #[test]
    fn matching_is_a_search() {
        assert!(pattern_matches("b+", "abbc"));
        assert!(!pattern_matches("^b+$", "abbc"));
        assert!(!pattern_matches("^(a$", "a"));
    }
}

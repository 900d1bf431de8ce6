//! Extraction: where in a model's answer the JSON may be.
//!
//! One pass over the text finds every candidate: the whole text, each fenced block
//! (```` ```json ````, ```` ```JSON ````, bare ```` ``` ````, an unclosed last fence), and each
//! balanced `{...}` / `[...]` at the top level, found outside strings. Candidates with the same
//! text are listed once. The pass is linear in the text and allocates only the list.
//!
//! ```
//! use structured_runtime::extract::{candidates, Source};
//!
//! let answer = "Here you go:\n```json\n{\"ok\": true}\n```\nAnything else?";
//! let found = candidates(answer);
//! assert_eq!(found[0].source, Source::Whole);
//! assert_eq!(found[1].source, Source::Fence { closed: true });
//! assert_eq!(found[1].text.trim(), "{\"ok\": true}");
//! ```

use std::ops::Range;

/// Where a candidate came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The whole text.
    Whole,
    /// The body of a markdown code fence; `closed: false` for a last fence the text never closed.
    Fence {
        /// Whether the closing fence was found.
        closed: bool,
    },
    /// A balanced `{...}` or `[...]` found in the text, outside strings.
    Balanced,
}

/// A piece of the text that may hold the JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate<'a> {
    /// The candidate's text.
    pub text: &'a str,
    /// Its byte range in the whole text.
    pub span: Range<usize>,
    /// Where it came from.
    pub source: Source,
}

/// Every candidate in `text`: the whole text first, then fenced blocks, then balanced spans,
/// each group in text order. A candidate whose trimmed text equals an earlier one is left out.
pub fn candidates(text: &str) -> Vec<Candidate<'_>> {
    let mut out = vec![Candidate {
        text,
        span: 0..text.len(),
        source: Source::Whole,
    }];
    let found = scan(text);
    let whole = text.trim();
    let spans = found
        .fences
        .into_iter()
        .map(|(span, closed)| (span, Source::Fence { closed }))
        .chain(
            found
                .balanced
                .into_iter()
                .map(|span| (span, Source::Balanced)),
        );
    let mut pieces: Vec<(&str, usize, Candidate<'_>)> = spans
        .enumerate()
        .filter_map(|(order, (span, source))| {
            let piece = text.get(span.clone())?;
            let trimmed = piece.trim();
            (!trimmed.is_empty() && trimmed != whole).then_some((
                trimmed,
                order,
                Candidate {
                    text: piece,
                    span,
                    source,
                },
            ))
        })
        .collect();
    // Equal texts listed once (the first found), without hashing every piece.
    pieces.sort_unstable_by(|a, b| a.0.cmp(b.0).then(a.1.cmp(&b.1)));
    pieces.dedup_by(|later, first| later.0 == first.0);
    pieces.sort_unstable_by_key(|p| p.1);
    out.extend(pieces.into_iter().map(|(_, _, c)| c));
    out
}

/// What one pass over the text finds.
struct Found {
    fences: Vec<(Range<usize>, bool)>,
    balanced: Vec<Range<usize>>,
}

/// One pass: double-quoted strings inside a `{`/`[` span are skipped with their escapes, so a
/// brace or a fence marker inside a JSON string does not count (`{"code": "```sh\nls\n```"}`
/// holds no fence). Quotes in the prose between spans are ignored. A fence marker outside a
/// string is a hard boundary: nesting and string state restart after it. A span the text never
/// closes is not listed (the whole text covers it).
fn scan(text: &str) -> Found {
    let bytes = text.as_bytes();
    let mut markers: Vec<(usize, usize)> = Vec::new();
    let mut balanced = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    let mut in_string = false;
    let mut escaped = false;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        // Most of an answer is prose: skip to the next byte that matters in one tight loop.
        let table = if in_string { &IN_STRING } else { &OUTSIDE };
        if !table[usize::from(b)] {
            i += 1;
            while bytes.get(i).is_some_and(|&b| !table[usize::from(b)]) {
                i += 1;
            }
            continue;
        }
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        match b {
            b'`' => {
                let end = skip_backticks(bytes, i);
                if end - i >= 3 {
                    markers.push((i, end));
                    depth = 0;
                }
                i = end;
                continue;
            }
            b'"' if depth > 0 => in_string = true,
            b'{' | b'[' => {
                if depth == 0 {
                    start = i;
                }
                depth += 1;
            }
            b'}' | b']' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    balanced.push(start..i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    let mut fences = Vec::new();
    let mut pairs = markers.into_iter();
    while let Some((_, open_end)) = pairs.next() {
        let mut body = open_end;
        while bytes
            .get(body)
            .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'+'))
        {
            body += 1;
        }
        match pairs.next() {
            Some((close, _)) => fences.push((body..close, true)),
            None => fences.push((body..text.len(), false)),
        }
    }
    Found { fences, balanced }
}

/// Bytes the scan acts on outside strings, and inside them.
static OUTSIDE: [bool; 256] = table(b"`\"{}[]");
static IN_STRING: [bool; 256] = table(b"\\\"");

const fn table(bytes: &[u8]) -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < bytes.len() {
        t[bytes[i] as usize] = true;
        i += 1;
    }
    t
}

fn skip_backticks(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i) == Some(&b'`') {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<(&str, Source)> {
        candidates(text)
            .into_iter()
            .map(|c| (c.text.trim(), c.source))
            .collect()
    }

    #[test]
    fn finds_fences_of_every_spelling() {
        for fence in ["```json", "```JSON", "```", "````json"] {
            let text = format!("Sure.\n{fence}\n{{\"a\": 1}}\n```\nBye");
            let found = texts(&text);
            assert_eq!(
                found[1],
                ("{\"a\": 1}", Source::Fence { closed: true }),
                "{fence}"
            );
            assert_eq!(
                found.len(),
                2,
                "the balanced span equals the fence body: {found:?}"
            );
        }
    }

    #[test]
    fn an_unclosed_last_fence_runs_to_the_end() {
        let found = texts("Here:\n```json\n{\"a\": [1, 2");
        assert_eq!(found[1], ("{\"a\": [1, 2", Source::Fence { closed: false }));
    }

    #[test]
    fn braces_inside_strings_do_not_count() {
        let found = texts(r#"Answer: {"text": "a } and { b", "n": 1} and then [1, 2]."#);
        assert_eq!(
            found[1],
            (r#"{"text": "a } and { b", "n": 1}"#, Source::Balanced)
        );
        assert_eq!(found[2], ("[1, 2]", Source::Balanced));
    }

    #[test]
    fn several_objects_are_several_candidates() {
        let found = texts(r#"First {"a": 1}, then {"a": 2}."#);
        assert_eq!(found.len(), 3);
        assert_eq!(found[2].0, r#"{"a": 2}"#);
    }

    #[test]
    fn a_fence_inside_a_json_string_is_not_a_fence() {
        let found = texts("{\"a\": \"x}``` [1,2]\\n\", \"b\": \"```json {}\"}");
        assert!(
            found
                .iter()
                .all(|(_, s)| *s != Source::Fence { closed: true }),
            "{found:?}"
        );
    }

    #[test]
    fn nothing_but_prose_is_only_the_whole_text() {
        assert_eq!(texts("no json here").len(), 1);
        assert_eq!(texts("").len(), 1);
    }

    #[test]
    fn a_million_brackets_is_one_linear_pass() {
        let text = "[".repeat(1 << 20);
        assert_eq!(candidates(&text).len(), 1);
    }
}

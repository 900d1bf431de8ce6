//! Extraction: where in a model's answer the JSON may be.
//!
//! One pass over the text finds every candidate: the whole text, each fenced block
//! (```` ```json ````, ```` ```JSON ````, bare ```` ``` ````, an unclosed last fence), and each
//! balanced `{...}` / `[...]` at the top level, found outside strings. Candidates with the same
//! text are listed once. The pass is linear in the text and allocates only the list.
//!
//! ```
//! use structured_runtime::read::extract::{candidates, Source};
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
    scan(text).candidates()
}

/// Balanced spans (and fence markers) a scan keeps, at least; past twice this many, only the
/// latest are kept. No answer has thousands of top-level objects, and a text that does costs
/// memory linear in this, not in the text.
const MAX_SPANS: usize = 4096;

/// Other candidates listed by [`Spans::others`], at most.
pub(crate) const MAX_OTHERS: usize = 8;

/// What one pass over a text finds: its fences and its balanced spans, each list in text order.
pub(crate) struct Spans<'a> {
    text: &'a str,
    fences: Vec<(Range<usize>, bool)>,
    balanced: Vec<Range<usize>>,
    /// The text ended inside a `{`/`[` it never closed.
    open_at_end: bool,
    /// Where that unclosed span starts.
    open_from: usize,
}

impl<'a> Spans<'a> {
    /// As [`candidates`]: the whole text, then fences, then balanced spans, without repeats.
    pub(crate) fn candidates(&self) -> Vec<Candidate<'a>> {
        let text = self.text;
        let whole = text.trim();
        let spans = self
            .fences
            .iter()
            .map(|(span, closed)| (span, Source::Fence { closed: *closed }))
            .chain(self.balanced.iter().map(|span| (span, Source::Balanced)));
        let mut pieces: Vec<(&str, usize, Candidate<'a>)> = spans
            .enumerate()
            .filter_map(|(order, (span, source))| {
                let candidate = self.candidate(span, source)?;
                let trimmed = candidate.text.trim();
                (trimmed != whole).then_some((trimmed, order, candidate))
            })
            .collect();
        // Equal texts listed once (the first found), without hashing every piece.
        pieces.sort_unstable_by(|a, b| a.0.cmp(b.0).then(a.1.cmp(&b.1)));
        pieces.dedup_by(|later, first| later.0 == first.0);
        pieces.sort_unstable_by_key(|p| p.1);
        let mut out = Vec::with_capacity(pieces.len() + 1);
        out.push(self.whole());
        out.extend(pieces.into_iter().map(|(_, _, c)| c));
        out
    }

    /// The one balanced span, when the text is that span with prose around it and nothing else:
    /// no fence, no other bracket, nothing left open. Repairing the whole text then reads that
    /// span again, with the prose skipped or read as more values.
    pub(crate) fn only_span(&self) -> Option<Candidate<'a>> {
        match (
            self.fences.is_empty(),
            self.balanced.as_slice(),
            self.open_at_end,
        ) {
            (true, [span], false) => {
                let candidate = self.candidate(span, Source::Balanced)?;
                // The span is the whole answer but for whitespace: it is the answer itself.
                if candidate.text.len() == self.text.trim().len() {
                    return Some(self.whole());
                }
                Some(candidate)
            }
            _ => None,
        }
    }

    /// The whole text, then each fence whose text differs from it: what is worth repairing
    /// without a schema to say which balanced span is meant.
    pub(crate) fn whole_and_fences(&self) -> Vec<Candidate<'a>> {
        let whole = self.text.trim();
        let fences = self.fences.iter().filter_map(|(span, closed)| {
            self.candidate(span, Source::Fence { closed: *closed })
                .filter(|c| c.text.trim() != whole)
        });
        std::iter::once(self.whole()).chain(fences).collect()
    }

    /// The candidates inside the text (not the whole text), the one ending last first; on the
    /// same end a fence before a balanced span. Repeats are kept: this is for a pass that stops
    /// at the first candidate it takes, where sorting out repeats would cost more than it saves.
    pub(crate) fn latest_first(&self) -> impl Iterator<Item = Candidate<'a>> + '_ {
        let mut fences = self.fences.iter().rev().peekable();
        let mut balanced = self.balanced.iter().rev().peekable();
        std::iter::from_fn(move || loop {
            let fence_next = match (fences.peek(), balanced.peek()) {
                (Some((f, _)), Some(b)) => f.end >= b.end,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => return None,
            };
            let next = if fence_next {
                fences.next().and_then(|(span, closed)| {
                    self.candidate(span, Source::Fence { closed: *closed })
                })
            } else {
                balanced
                    .next()
                    .and_then(|span| self.candidate(span, Source::Balanced))
            };
            if next.is_some() {
                return next;
            }
        })
    }

    /// The other places in the text that hold JSON as written, besides `chosen`: fences and
    /// balanced spans that do not overlap it (a span inside a listed fence is not listed again),
    /// the first [`MAX_OTHERS`] of them, and how many more fences and spans there were after
    /// those (counted, not read). Empty when the whole text was chosen. Linear in the text.
    pub(crate) fn others(&self, chosen: &Range<usize>) -> (Vec<Range<usize>>, usize) {
        let mut listed: Vec<Range<usize>> = Vec::new();
        let mut more = 0;
        if chosen.start == 0 && chosen.end >= self.text.trim_end().len() {
            return (listed, more);
        }
        let overlaps = |a: &Range<usize>, b: &Range<usize>| a.start < b.end && b.start < a.end;
        let fences = self.fences.iter().map(|(span, _)| span);
        let mut fence_spans: Vec<&Range<usize>> = Vec::new();
        for span in fences.chain(self.balanced.iter()) {
            if overlaps(span, chosen) || fence_spans.iter().any(|f| overlaps(f, span)) {
                continue;
            }
            if listed.len() == MAX_OTHERS {
                more += 1;
                continue;
            }
            let Some(piece) = self.text.get(span.clone()) else {
                continue;
            };
            if serde_json::from_str::<serde::de::IgnoredAny>(piece.trim()).is_err() {
                continue;
            }
            if self.fences.iter().any(|(f, _)| f == span) {
                fence_spans.push(span);
            }
            listed.push(span.clone());
        }
        // A value begun after the chosen one and cut off by the end of the text (a correction
        // that did not finish): not JSON as written, but a place the answer went on to.
        if self.open_at_end
            && self.open_from >= chosen.end
            && !overlaps(&(self.open_from..self.text.len()), chosen)
        {
            match listed.len() < MAX_OTHERS {
                true => listed.push(self.open_from..self.text.len()),
                false => more += 1,
            }
        }
        (listed, more)
    }

    fn whole(&self) -> Candidate<'a> {
        Candidate {
            text: self.text,
            span: 0..self.text.len(),
            source: Source::Whole,
        }
    }

    /// The candidate at `span`, or `None` when it holds only whitespace.
    fn candidate(&self, span: &Range<usize>, source: Source) -> Option<Candidate<'a>> {
        let piece = self.text.get(span.clone())?;
        (!piece.trim().is_empty()).then(|| Candidate {
            text: piece,
            span: span.clone(),
            source,
        })
    }
}

/// One pass: double-quoted strings inside a `{`/`[` span are skipped with their escapes, so a
/// brace or a fence marker inside a JSON string does not count (`{"code": "```sh\nls\n```"}`
/// holds no fence). Quotes in the prose between spans are ignored. A fence marker outside a
/// string is a hard boundary: nesting and string state restart after it. A span the text never
/// closes is not listed (the whole text covers it).
pub(crate) fn scan(text: &str) -> Spans<'_> {
    let bytes = text.as_bytes();
    let mut markers: Vec<(usize, usize)> = Vec::new();
    let mut balanced = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    let mut i = 0;
    let openers = Openers::new(bytes.len());
    loop {
        // Most of an answer is prose, most of a string is text: jump to the next byte that
        // matters with a SIMD search, and step byte by byte only inside a span's structure.
        let rest = bytes.get(i..).unwrap_or_default();
        let at = if depth == 0 {
            openers.find(rest)
        } else {
            rest.iter().position(|&b| IN_SPAN[usize::from(b)])
        };
        let Some(at) = at else { break };
        i += at;
        let Some(&b) = bytes.get(i) else { break };
        match b {
            b'`' => {
                let end = skip_backticks(bytes, i);
                if end - i >= 3 {
                    markers.push((i, end));
                    if markers.len() == 2 * MAX_SPANS {
                        // Keep an even count, so the markers still pair as opened and closed.
                        markers.drain(..MAX_SPANS);
                    }
                    depth = 0;
                }
                i = end;
                continue;
            }
            b'"' => {
                i = skip_string(bytes, i + 1);
                continue;
            }
            b'{' | b'[' => {
                if depth == 0 {
                    start = i;
                }
                depth += 1;
            }
            // `}` or `]`, met only inside a span.
            _ => {
                depth -= 1;
                if depth == 0 {
                    balanced.push(start..i + 1);
                    if balanced.len() == 2 * MAX_SPANS {
                        // Only the latest are kept: a model's answer comes after its drafts.
                        balanced.drain(..MAX_SPANS);
                    }
                }
            }
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
    Spans {
        text,
        fences,
        balanced,
        open_at_end: depth > 0,
        open_from: start,
    }
}

/// The search for what opens a span or a fence (`{`, `[`, a backtick), set up once per scan:
/// a prose answer calls it once per span, and a short search is mostly setup.
struct Openers {
    #[cfg(target_arch = "x86_64")]
    avx2: Option<memchr::arch::x86_64::avx2::memchr::Three>,
}

impl Openers {
    /// For a text of `len` bytes: a short one is searched a few times at most, and is not worth
    /// the setup.
    fn new(len: usize) -> Self {
        Openers {
            #[cfg(target_arch = "x86_64")]
            avx2: (len > 512)
                .then(|| memchr::arch::x86_64::avx2::memchr::Three::new(b'{', b'[', b'`'))
                .flatten(),
        }
    }

    fn find(&self, haystack: &[u8]) -> Option<usize> {
        #[cfg(target_arch = "x86_64")]
        if let Some(three) = &self.avx2 {
            return three.find(haystack);
        }
        memchr::memchr3(b'{', b'[', b'`', haystack)
    }
}

/// The index just past the closing quote of the string whose body starts at `i` (or the end
/// of the text for a string never closed).
fn skip_string(bytes: &[u8], mut i: usize) -> usize {
    // Most strings in an answer are short: look at their first bytes one by one before paying
    // for a SIMD search.
    for (k, &b) in bytes
        .get(i..)
        .unwrap_or_default()
        .iter()
        .take(32)
        .enumerate()
    {
        match b {
            b'"' => return i + k + 1,
            b'\\' => {
                i += k;
                break;
            }
            _ => {}
        }
    }
    while let Some(at) = memchr::memchr2(b'"', b'\\', bytes.get(i..).unwrap_or_default()) {
        i += at;
        if bytes.get(i) == Some(&b'"') {
            return i + 1;
        }
        // A backslash escapes the byte after it, whatever it is.
        i += 2;
    }
    bytes.len()
}

/// Bytes the scan acts on inside a span (outside its strings).
static IN_SPAN: [bool; 256] = super::byte_table::of(b"`\"{}[]");

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

    #[test]
    fn a_million_spans_keep_only_the_latest_few_thousand() {
        let text = format!("{}[\"last\"]", "{} ```x``` ".repeat(1 << 17));
        let spans = scan(&text);
        assert!(
            spans.balanced.len() < 2 * MAX_SPANS,
            "{}",
            spans.balanced.len()
        );
        assert!(spans.fences.len() < 2 * MAX_SPANS, "{}", spans.fences.len());
        let last = spans.latest_first().next().unwrap();
        assert_eq!(last.text, "[\"last\"]");
        // Fences still pair as opened and closed: each kept one holds `x`'s body or the space.
        assert!(spans
            .fences
            .iter()
            .all(|(r, closed)| *closed && r.len() <= 2));
    }
}

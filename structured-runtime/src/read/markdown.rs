//! Reading a markdown wrapper's answer (a type with a `#[markdown]` field, or a schema given
//! [`Markdown`](crate::schema::Markdown)): is the answer the type's JSON, or is it the markdown?
//!
//! The rule, decided on the text before anything is parsed:
//!
//! 1. **The answer is JSON** when, leading whitespace aside, it opens with `{`, or with a code
//!    fence whose block opens with `{`. It is then read like any other type's answer (repaired,
//!    coerced and validated, each change a warning); if it does not fit, that is an error a
//!    re-ask can fix, not markdown.
//! 2. **The answer ends with the JSON** when its last piece (a fenced block or a `{...}`, with
//!    nothing but a closing fence after it) is an object that fits the type exactly as written,
//!    and the text before it is at most one line ("Here it is:"). It is taken as
//!    [`Provenance::Extracted`](crate::Provenance::Extracted).
//! 3. **Otherwise the answer is the markdown**, JSON snippets inside it included: a review that
//!    quotes `{"a": 1}` in a code block is a review. The whole answer, leading and trailing
//!    whitespace trimmed and everything else (fences too) as written, fills the content (or the
//!    first line the title and the rest the content), every other property is `null`; the value
//!    is [`Provenance::Heuristic`](crate::Provenance::Heuristic) with a
//!    [`Warning::WholeAnswer`](crate::Warning::WholeAnswer). It needs
//!    [`ParseOptions::from_text`](crate::ParseOptions::from_text), so `ParseOptions::strict()`
//!    refuses it. An empty answer is no answer.

use crate::read::extract::{scan, Candidate, Source};

/// Which way the rule reads an answer.
pub(crate) enum Route<'a> {
    /// Rule 1: the usual steps.
    Json,
    /// Rule 2: this candidate, if it fits as written; else rule 3.
    EndsWith(Candidate<'a>),
    /// Rule 3: the whole answer.
    Whole,
}

/// Applies the rule to `text`.
pub(crate) fn route(text: &str) -> Route<'_> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || fence_opens_object(trimmed) {
        return Route::Json;
    }
    let spans = scan(text);
    let Some(last) = spans.latest_first().next() else {
        return Route::Whole;
    };
    let after = text.get(last.span.end..).unwrap_or("").trim();
    let ends_there = after.trim_start_matches(['`', '~']).is_empty();
    let before = text.get(..last.span.start).unwrap_or("").trim_end();
    // A fenced block's opening line is part of the fence, not of the lead-in.
    let before = match last.source {
        Source::Fence { .. } => before.rsplit_once('\n').map_or("", |(b, _)| b),
        _ => before,
    };
    if ends_there && last.text.trim_start().starts_with('{') && !before.trim().contains('\n') {
        Route::EndsWith(last)
    } else {
        Route::Whole
    }
}

/// Whether `text` opens with a code fence whose block opens with `{`.
fn fence_opens_object(text: &str) -> bool {
    if !(text.starts_with("```") || text.starts_with("~~~")) {
        return false;
    }
    text.split_once('\n')
        .is_some_and(|(_, block)| block.trim_start().starts_with('{'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn which(text: &str) -> &'static str {
        match route(text) {
            Route::Json => "json",
            Route::EndsWith(_) => "ends with",
            Route::Whole => "whole",
        }
    }

    #[test]
    fn the_rule_on_each_shape_of_answer() {
        assert_eq!(which(" {\"content\": \"x\"}"), "json");
        assert_eq!(which("{\"content\": \"x\"} and then prose"), "json");
        assert_eq!(which("```json\n{\"content\": \"x\"}\n```"), "json");
        assert_eq!(
            which("Here it is:\n```json\n{\"content\": \"x\"}\n```\n"),
            "ends with"
        );
        assert_eq!(which("Here it is: {\"content\": \"x\"}"), "ends with");
        assert_eq!(which("## Summary\n\nFine."), "whole");
        assert_eq!(which("```markdown\n## Summary\n```"), "whole");
        // A review quoting JSON: more than one line before it, or text after it.
        assert_eq!(
            which("## Review\n\nThe config is wrong:\n```json\n{\"a\": 1}\n```\n"),
            "whole"
        );
        assert_eq!(
            which("Use this:\n```json\n{\"a\": 1}\n```\nand run it again."),
            "whole"
        );
        assert_eq!(which(""), "whole");
    }
}

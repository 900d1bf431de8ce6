//! Syntax repair: turns what a model wrote as "JSON" into a JSON value, and lists every change.
//!
//! A tolerant recursive-descent parser reads the text once and builds the value directly. It
//! knows the mistakes models and people make (see [`RepairKind`]); each one it fixes is recorded
//! with its byte offset, so a caller can tell a clean parse from a repaired one and a truncated
//! answer from a complete one. Work is linear in the input; nesting deeper than
//! [`MAX_DEPTH`] is an error, not a stack overflow.
//!
//! ```
//! use structured_runtime::read::repair::{repair, RepairKind};
//!
//! let fixed = repair("{name: 'Ada', langs: ['en', 'fr',], active: True}").unwrap();
//! assert_eq!(fixed.value, serde_json::json!({"name": "Ada", "langs": ["en", "fr"], "active": true}));
//! assert!(fixed.repairs.iter().any(|r| r.kind == RepairKind::TrailingComma));
//! assert!(!fixed.truncated);
//!
//! let cut = repair(r#"{"severity": "high", "reason": "the disk is fu"#).unwrap();
//! assert!(cut.truncated); // closed, but never reported as complete
//! ```

mod build;
mod common;
mod cursor;
mod lex;
mod parser;
mod report;
mod string;

pub use common::repair_common;
pub(crate) use parser::is_literal_word;
pub use report::{Repair, RepairError, RepairKind, Repaired, MAX_DEPTH, MAX_FOUND};
pub(crate) use string::{hex4, surrogate_pair};

/// Reads a JSON value out of `text`, repairing what it must.
///
/// The text may have prose before the value (skipped up to the first `{` or `[`), text after
/// it, several values (collected into an array, empty ones dropped), and any of the mistakes in
/// [`RepairKind`]. Bare prose is not JSON: `"sure, here it is"` without brackets is
/// [`RepairError::NotFound`], so a caller can fall back to reading prose. Never panics.
pub fn repair(text: &str) -> Result<Repaired, RepairError> {
    repair_then(text, None)
}

/// [`repair`], given what [`repair_common`] made of the text: a caller that tried that pass
/// first (`read::parse`'s whole readings) has the value read from its mended text instead of
/// parsed again. (Not tried here unasked: on the corpus of broken JSON, where the pass mostly
/// steps aside, trying it first made `repair` 9 % dearer.)
pub(crate) fn repair_then(
    text: &str,
    common: Option<Repaired<String>>,
) -> Result<Repaired, RepairError> {
    // JSON as written (an object or a list, each key once, every number as written) is read as
    // it is: the heuristics below are for text that is not, and must not second-guess a string
    // that holds a brace and an escaped quote.
    // A syntax check that builds nothing comes first: most text that reaches repair is not
    // JSON, and a `Value` begun and dropped at its first mistake costs allocations for nothing.
    if text.trim_start().starts_with(['{', '['])
        && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
    {
        if let Ok((value, long_float)) = crate::read::strict_de::value_from_str(text) {
            // (Looked at again only where a float only the text can vouch for lies.)
            if long_float
                .and_then(|from| inexact_number_from(text, from))
                .is_none()
            {
                return Ok(Repaired {
                    value,
                    repairs: Vec::new(),
                    truncated: false,
                });
            }
        }
    }
    // JSON but for its single quotes and trailing commas: the strict reading of its text.
    if let Some(common) = common {
        if let Ok((value, _)) = crate::read::strict_de::value_from_str(&common.value) {
            return Ok(Repaired {
                value,
                repairs: common.repairs,
                truncated: false,
            });
        }
    }
    parser::Parser::<build::ValueBuild>::new(text).document()
}

/// [`repair`], the value written as its JSON text (compact, exactly as `serde_json` writes the
/// value [`repair`] reads) without building it. The same repairs are listed. What it holds is the
/// text written so far and the members of the objects still open, so a large answer of many
/// small objects costs about its own size, where a `serde_json::Value` of it costs about twenty
/// times that.
///
/// ```
/// use structured_runtime::read::repair::{repair, repair_json};
///
/// let text = "[{name: 'Ada', tags: ['x',],}, {name: 'Bo'}]";
/// let fixed = repair_json(text).unwrap();
/// assert_eq!(fixed.value, r#"[{"name":"Ada","tags":["x"]},{"name":"Bo"}]"#);
/// assert_eq!(fixed.value, repair(text).unwrap().value.to_string());
/// ```
pub fn repair_json(text: &str) -> Result<Repaired<String>, RepairError> {
    if text.trim_start().starts_with(['{', '[']) && inexact_number(text).is_none() {
        if let Some(value) = crate::read::strict_de::json_from_str(text) {
            return Ok(Repaired {
                value,
                repairs: Vec::new(),
                truncated: false,
            });
        }
    }
    repaired_json(text)
}

/// [`repair_json`] for a text already known not to be strict JSON as written: the repairer's
/// pass alone (the strict reading is not tried again).
pub(crate) fn repaired_json(text: &str) -> Result<Repaired<String>, RepairError> {
    let read = parser::Parser::<build::TextBuild>::new(text).document()?;
    Ok(Repaired {
        value: read.value.into_json(),
        repairs: read.repairs,
        truncated: read.truncated,
    })
}

/// The first number in `json` that no number value holds as written (rounded, or out of
/// range), when there is one: for readers of JSON that is otherwise exact. One scan of the text
/// (strings skipped) for numbers longer than any float holds exactly; each of those is read as
/// the repairer reads a number. A token that is not a JSON number is left to the JSON reader to
/// refuse.
pub(crate) fn inexact_number(json: &str) -> Option<Repair> {
    inexact_number_from(json, 0)
}

/// The `Value` `json` is exactly, or why it is not: a number no value holds as written (named
/// first), a key given twice, or not JSON. The JSON a provider promised (an enforced answer, a
/// tool call's arguments, a body) is read by this. The text is looked at again only where the
/// strict reading found a float only the text can vouch for, or whole when the reading refused
/// it (a key given twice is reported after a number read differently anywhere).
pub(crate) fn value_as_written(json: &str) -> Result<serde_json::Value, String> {
    let (value, long_float) = crate::read::strict_de::value_from_str(json)
        .map_err(|e| inexact_number(json).map_or_else(|| e.to_string(), |n| n.to_string()))?;
    match long_float.and_then(|from| inexact_number_from(json, from)) {
        Some(number) => Err(number.to_string()),
        None => Ok(value),
    }
}

/// [`inexact_number`] looked for from byte `from` of `json` on (a place outside any string:
/// where the first long number lies that the strict reading found, `strict_de::Noted`), its
/// offset in the whole text.
pub(crate) fn inexact_number_from(json: &str, from: usize) -> Option<Repair> {
    let mut found = first_inexact(json.get(from..)?)?;
    found.at += from;
    Some(found)
}

/// The first number in `json` that no number value holds as written ([`inexact_number`]).
fn first_inexact(json: &str) -> Option<Repair> {
    crate::read::number::long_numbers(json).find_map(|(at, token)| {
        let well_formed = token.parse::<f64>().is_ok()
            && !token.starts_with('+')
            && !token.contains("..")
            && token
                .bytes()
                .next_back()
                .is_some_and(|b| b.is_ascii_digit());
        if !well_formed {
            return None;
        }
        let (_, kind) = parser::to_number(token);
        kind.map(|kind| {
            let end = lex::floor_boundary(token, MAX_FOUND);
            let found = match token.get(..end) {
                Some(cut) if end < token.len() => format!("{cut}..."),
                _ => token.to_owned(),
            };
            Repair {
                kind,
                at,
                found: Some(found),
            }
        })
    })
}

/// Repairs the JSON in a model's whole answer, without a schema: the whole text and each fenced
/// block are repaired, and the one with the fewest repairs wins (ties go to the later one: a
/// fenced block over the text around it, the last of several blocks, since a model's final
/// answer comes after its drafts). Several values in the text are collected into an array, as
/// the common repairers read them. Other places that held JSON and were not used (another
/// fence, an object in the text after the value) are listed as [`RepairKind::OtherCandidate`].
/// Repair offsets are in `text`. This is what `structured repair` prints; with a schema,
/// [`crate::parse_response`] also weighs balanced `{...}` spans by how well they fit.
pub fn repair_text(text: &str) -> Result<Repaired, RepairError> {
    repair_candidates(text, repair)
}

/// [`repair_text`], the value written as its JSON text ([`repair_json`]): what
/// `structured repair` prints, in memory about the answer's size.
pub fn repair_text_json(text: &str) -> Result<Repaired<String>, RepairError> {
    repair_candidates(text, repair_json)
}

/// The whole text and each fenced block repaired by `repair`, the one with the fewest repairs
/// chosen ([`repair_text`]).
fn repair_candidates<V>(
    text: &str,
    repair: fn(&str) -> Result<Repaired<V>, RepairError>,
) -> Result<Repaired<V>, RepairError> {
    let spans = crate::read::extract::scan(text);
    let candidates = spans.whole_and_fences();
    let mut failure = RepairError::NotFound { len: text.len() };
    // A tie keeps the later candidate, and one with no repair at all ends the search, so a
    // clean fence at the end of a long answer never pays for repairing the prose before it.
    let best = crate::read::select::best(
        &candidates,
        &0,
        |c| c.text.len(),
        |candidate| match repair(candidate.text) {
            Ok(mut r) => {
                for fix in &mut r.repairs {
                    fix.at += candidate.span.start;
                }
                Some((r.cost(), (r, candidate.span.clone())))
            }
            Err(e) => {
                if matches!(e, RepairError::TooDeep { .. }) {
                    failure = e;
                }
                None
            }
        },
    );
    let (mut r, span) = best.map(|(_, r)| r).ok_or(failure)?;
    if span.start > 0 {
        // A fenced block was chosen: the text around it was dropped.
        r.repairs.insert(
            0,
            Repair {
                kind: RepairKind::FenceMarker,
                at: span.start,
                found: None,
            },
        );
    }
    let used = used_part(&r.repairs, span);
    others(&mut r, &spans, &used);
    Ok(r)
}

/// The part of a candidate its value was read from: up to the text it ignored after the value.
pub(crate) fn used_part(
    repairs: &[Repair],
    span: std::ops::Range<usize>,
) -> std::ops::Range<usize> {
    match repairs.iter().find(|r| r.kind == RepairKind::TrailingText) {
        Some(r) if (span.start..span.end).contains(&r.at) => span.start..r.at,
        _ => span,
    }
}

/// Notes each other candidate that held JSON, besides the one at `chosen`.
fn others<V>(
    r: &mut Repaired<V>,
    spans: &crate::read::extract::Spans<'_>,
    chosen: &std::ops::Range<usize>,
) {
    let (others, more) = spans.others(chosen);
    for span in others {
        r.repairs.push(Repair {
            kind: RepairKind::OtherCandidate,
            at: span.start,
            found: Some(format!("bytes {}..{}", span.start, span.end)),
        });
    }
    if more > 0 {
        r.repairs.push(Repair {
            kind: RepairKind::OtherCandidate,
            at: chosen.start,
            found: Some(format!("and {more} more places not read")),
        });
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn json_as_written_is_read_as_written() {
        // A string holding a brace and an escaped quote, before the end of its object.
        for text in [
            r#"{"d": "{\""}"#,
            r#"{"x":{"d":"{,:\""},"y":2}"#,
            r#"[{"a": "[\"", "b": 12345678901234.5678}]"#,
        ] {
            let read = super::repair(text).unwrap();
            assert!(read.is_clean(), "{text}: {:?}", read.repairs);
            assert_eq!(
                read.value,
                serde_json::from_str::<serde_json::Value>(text).unwrap()
            );
        }
        // A number no value holds as written still goes to the parser, which says so.
        let read = super::repair(r#"{"n": 123456789012345678901234567890}"#).unwrap();
        assert!(!read.is_clean());
    }

    use super::*;
    use serde_json::Value;

    /// The deepest value the repairer builds still reads back with `serde_json`, including the
    /// extra level of an implicit object and of the array collecting several values.
    #[test]
    fn the_deepest_repaired_value_prints_to_readable_json() {
        let deep = format!(
            "{}\"k\": 1{}",
            "[".repeat(MAX_DEPTH - 1),
            "]".repeat(MAX_DEPTH - 1)
        );
        let fixed = repair(&format!("{deep} {deep}")).unwrap();
        assert!(fixed
            .repairs
            .iter()
            .any(|r| r.kind == RepairKind::ImplicitObject));
        assert!(fixed
            .repairs
            .iter()
            .any(|r| r.kind == RepairKind::MultipleValues));
        let printed = fixed.value.to_string();
        assert!(serde_json::from_str::<Value>(&printed).is_ok(), "{printed}");
        let too_deep = "[".repeat(MAX_DEPTH + 1);
        assert!(matches!(
            repair(&too_deep),
            Err(RepairError::TooDeep { .. })
        ));
    }

    #[test]
    fn a_sign_at_the_very_end_records_no_repair_past_the_text() {
        let text = "_][-/x_a/][-";
        let fixed = repair(text).unwrap();
        assert!(
            fixed.repairs.iter().all(|r| r.at <= text.len()),
            "{:?}",
            fixed.repairs
        );
    }

    /// An object whose one member holds most of its text is written around that member's own
    /// buffer: the text is what `serde_json` writes for the value, member order kept.
    #[test]
    fn a_member_holding_most_of_the_object_is_written_in_place() {
        let items: Vec<String> = (0..200_000).map(|i| format!("'t{i}'")).collect();
        let big = format!("[{}]", items.join(", "));
        for text in [
            format!("{{'a': 1, 'big': {big}, 'z': {{'k': 2}},}}"),
            format!("{{'big': {big}}}"),
            format!("{{'big': {big}, 'z': null,}}"),
            format!("{{'a': [1, 2], 'b': 'x', 'big': {big}}}"),
        ] {
            let read = repair_json(&text).unwrap();
            // The text built is what the value built from the same answer writes.
            let value = super::repair(&text).unwrap().value;
            assert_eq!(read.value, value.to_string());
            let items = value["big"].as_array().map(Vec::len);
            assert_eq!(items, Some(200_000));
        }
    }
}

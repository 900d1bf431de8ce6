//! A schema's `enum` values, indexed once: which strings are allowed as written, and which
//! value a loose spelling (any case, spaces, `-` and `_` left out) names. Coercion looks each
//! string up here instead of comparing it with every allowed value, so an answer's cost does
//! not grow with the product of its strings and the enum's size.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// `s` lowercased, with spaces, `-` and `_` removed: the spelling enum values and aliases are
/// compared in when case and separators do not count.
pub(crate) fn loose(s: &str) -> String {
    s.trim()
        .chars()
        .filter(|c| !matches!(c, ' ' | '-' | '_'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// One `enum`'s string values.
#[derive(Debug, Default)]
pub(crate) struct Spellings {
    exact: HashSet<String>,
    /// Loose spelling → the one value it names; `None` when several do (ambiguous).
    loose: HashMap<String, Option<String>>,
}

impl Spellings {
    fn new(allowed: &[Value]) -> Spellings {
        let mut out = Spellings::default();
        for value in allowed.iter().filter_map(Value::as_str) {
            out.exact.insert(value.to_owned());
            out.loose
                .entry(loose(value))
                .and_modify(|hit| {
                    if hit.as_deref() != Some(value) {
                        *hit = None;
                    }
                })
                .or_insert_with(|| Some(value.to_owned()));
        }
        out
    }

    /// Whether `s` is allowed as written.
    pub(crate) fn contains(&self, s: &str) -> bool {
        self.exact.contains(s)
    }

    /// The one allowed value whose loose spelling is `wanted` (already loose).
    pub(crate) fn named_loosely(&self, wanted: &str) -> Option<&str> {
        self.loose.get(wanted).and_then(Option::as_deref)
    }
}

/// The index of every `enum` of one schema document, each built the first time it is looked
/// up. Keyed by where the `enum` array lives in the document, so it belongs to one copy of the
/// document: cloning gives an empty index.
#[derive(Debug, Default)]
pub(crate) struct EnumIndex(Mutex<HashMap<usize, Arc<Spellings>>>);

impl Clone for EnumIndex {
    fn clone(&self) -> Self {
        EnumIndex::default()
    }
}

impl EnumIndex {
    /// The spellings of `allowed`, an `enum` array inside the document this index belongs to.
    pub(crate) fn spellings(&self, allowed: &[Value]) -> Arc<Spellings> {
        let key = allowed.as_ptr() as usize;
        let mut built = self.0.lock().unwrap_or_else(|e| e.into_inner());
        built
            .entry(key)
            .or_insert_with(|| Arc::new(Spellings::new(allowed)))
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn exact_loose_and_ambiguous_spellings() {
        let allowed = json!(["very_high", "low", "a-b", "a_b"]);
        let index = EnumIndex::default();
        let s = index.spellings(allowed.as_array().unwrap());
        assert!(s.contains("low") && !s.contains("Low"));
        assert_eq!(s.named_loosely(&loose("Very High")), Some("very_high"));
        assert_eq!(s.named_loosely(&loose("AB")), None);
        assert_eq!(s.named_loosely(&loose("nothing")), None);
    }
}

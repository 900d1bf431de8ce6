//! Post-parse validation: every violation, each with the JSON pointer of the value that broke a rule.

use std::fmt;

pub use super::pointer::{Path, Pointer};

/// Checks the rules a type declares (ranges, enum membership) on a value already deserialized.
///
/// Derived for every `#[derive(StructuredOutput)]` type; nested types, `Vec` items and `Option`
/// contents are walked, so one call reports every violation in the whole value.
///
/// ```
/// use structured_runtime::{StructuredOutput, Validate};
///
/// #[derive(StructuredOutput, serde::Deserialize)]
/// struct Reading {
///     #[range(0.0, 1.0)]
///     level: f64,
///     #[enum_values("up", "down")]
///     trend: String,
/// }
///
/// let reading = Reading { level: 1.5, trend: "sideways".into() };
/// let report = reading.validate().unwrap_err();
/// assert_eq!(report.len(), 2);
/// assert_eq!(report[0].path, "/level");
/// assert_eq!(report[1].path, "/trend");
/// ```
pub trait Validate {
    /// Appends every violation found in `self` to `out`; `path` locates `self` in the whole value.
    fn validate_at(&self, path: &Path<'_>, out: &mut Vec<Violation>);

    /// Every violation in `self`, or `Ok(())` when there is none.
    fn validate(&self) -> Result<(), Violations> {
        let mut out = Vec::new();
        self.validate_at(&Path::root(), &mut out);
        if out.is_empty() {
            Ok(())
        } else {
            Err(Violations(out))
        }
    }
}

/// The rule a value broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// A JSON type other than the one the schema declares.
    Type,
    /// A number outside `minimum` / `maximum` (or their exclusive forms).
    Range,
    /// A value that is not one of the allowed `enum` values.
    Enum,
    /// A required property is absent.
    Required,
    /// A property the schema does not declare (`additionalProperties: false`).
    AdditionalProperty,
    /// An array with fewer or more items than allowed.
    Items,
    /// A string shorter or longer than allowed.
    Length,
    /// The value matches none of the `anyOf` branches.
    AnyOf,
    /// The deserializer refused the value for a reason the schema does not express
    /// (a duplicated key, a number too large for the Rust type).
    Deserialize,
    /// A string that does not match the `pattern`.
    Pattern,
    /// A check of the caller's own (`#[validate(with = ..)]`) refused the value.
    Custom,
    /// A string not in the declared `format`.
    Format,
    /// A number that is not a multiple of `multipleOf`.
    MultipleOf,
    /// An array with equal items where `uniqueItems` forbids them.
    UniqueItems,
    /// An array without the item `contains` asks for (or with too few or too many).
    Contains,
    /// A value matching the schema under `not`.
    Not,
    /// A value matching no `oneOf` branch, or more than one.
    OneOf,
    /// A property name `propertyNames` refuses.
    PropertyNames,
    /// An object with fewer or more properties than allowed.
    Properties,
    /// Items or properties that `unevaluatedItems` / `unevaluatedProperties` refuse.
    Unevaluated,
    /// Any other keyword of the schema (`if`/`then`/`else`, `dependentRequired`, a `false`
    /// schema, ...): `expected` quotes the validator.
    Schema,
}

impl Rule {
    /// A short stable name for the rule, as used in messages and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Type => "type",
            Rule::Range => "range",
            Rule::Enum => "enum",
            Rule::Required => "required",
            Rule::AdditionalProperty => "additional_property",
            Rule::Items => "items",
            Rule::Length => "length",
            Rule::AnyOf => "any_of",
            Rule::Deserialize => "deserialize",
            Rule::Pattern => "pattern",
            Rule::Format => "format",
            Rule::MultipleOf => "multiple_of",
            Rule::UniqueItems => "unique_items",
            Rule::Contains => "contains",
            Rule::Not => "not",
            Rule::OneOf => "one_of",
            Rule::PropertyNames => "property_names",
            Rule::Properties => "properties",
            Rule::Unevaluated => "unevaluated",
            Rule::Schema => "schema",
            Rule::Custom => "custom",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One broken rule: where, which rule, what was allowed and what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Where the offending value is: `/signals/2/magnitude`. For a missing or unexpected
    /// property it points at that property's key.
    pub path: Pointer,
    /// The rule that was broken.
    pub rule: Rule,
    /// What the rule allows, e.g. `a number in [0, 1]` or `one of "low", "high"`.
    pub expected: String,
    /// What was there instead, shortened when long (a 10 MB string is not copied into an error).
    pub found: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}: expected {}, found {}",
            self.path, self.rule, self.expected, self.found
        )
    }
}

/// Every violation of one value, in document order. Never empty when returned as an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violations(pub Vec<Violation>);

impl Violations {
    /// The violations as a slice.
    pub fn as_slice(&self) -> &[Violation] {
        &self.0
    }

    /// The violations, owned.
    pub fn into_vec(self) -> Vec<Violation> {
        self.0
    }
}

impl std::ops::Deref for Violations {
    type Target = [Violation];
    fn deref(&self) -> &[Violation] {
        &self.0
    }
}

impl<'a> IntoIterator for &'a Violations {
    type Item = &'a Violation;
    type IntoIter = std::slice::Iter<'a, Violation>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// Violations a report prints at most; the rest are counted ("and N more").
pub const SHOWN_VIOLATIONS: usize = 20;

/// Violations a check lists at most; past it a report says that more were not listed.
pub const MAX_VIOLATIONS: usize = 1_000;

/// Longest `expected` or `found` text a violation keeps, in bytes.
pub const MAX_VIOLATION_TEXT: usize = 300;

impl fmt::Display for Violations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.len();
        let more = if n >= MAX_VIOLATIONS { "at least " } else { "" };
        write!(f, "{more}{n} violation{}", if n == 1 { "" } else { "s" })?;
        for v in self.0.iter().take(SHOWN_VIOLATIONS) {
            write!(f, "\n  {v}")?;
        }
        if n > SHOWN_VIOLATIONS {
            write!(f, "\n  and {} more", n - SHOWN_VIOLATIONS)?;
        }
        Ok(())
    }
}

/// `text` cut to [`MAX_VIOLATION_TEXT`] bytes at a character boundary, saying how much was cut.
pub(crate) fn capped(mut text: String) -> String {
    if text.len() <= MAX_VIOLATION_TEXT {
        return text;
    }
    let mut end = MAX_VIOLATION_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = text.len() - end;
    text.truncate(end);
    text.push_str(&format!("... ({cut} more bytes)"));
    text
}

impl std::error::Error for Violations {}

/// Longest text kept from the input in a [`Violation::found`].
const PREVIEW_CHARS: usize = 60;

/// A short, quoted preview of a string from the input.
pub(crate) fn preview_str(s: &str) -> String {
    let mut chars = s.char_indices();
    match chars.nth(PREVIEW_CHARS) {
        None => format!("{s:?}"),
        Some((cut, _)) => format!(
            "{:?}… ({} bytes in all)",
            s.get(..cut).unwrap_or_default(),
            s.len()
        ),
    }
}

/// How a report shows a list of `len` items.
pub(crate) fn preview_list(len: usize) -> String {
    format!("an array of {len} items")
}

/// How a report shows an object of `len` members.
pub(crate) fn preview_object(len: usize) -> String {
    format!("an object with {len} properties")
}

/// A short preview of any JSON value from the input.
pub(crate) fn preview_json(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::String(s) => preview_str(s),
        Value::Array(items) => preview_list(items.len()),
        Value::Object(map) => preview_object(map.len()),
        other => other.to_string(),
    }
}

/// [`preview_json`] of a value as it is read, holding none of it: what a report shows of a value
/// read only to be dropped. Its members are counted as they come (the text read has each key
/// once).
pub(crate) struct Preview;

impl<'de> serde::de::DeserializeSeed<'de> for Preview {
    type Value = String;
    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<String, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Preview {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<String, E> {
        Ok(b.to_string())
    }
    fn visit_i64<E>(self, n: i64) -> Result<String, E> {
        Ok(serde_json::Value::from(n).to_string())
    }
    fn visit_u64<E>(self, n: u64) -> Result<String, E> {
        Ok(serde_json::Value::from(n).to_string())
    }
    fn visit_f64<E>(self, n: f64) -> Result<String, E> {
        Ok(serde_json::Value::from(n).to_string())
    }
    fn visit_str<E>(self, s: &str) -> Result<String, E> {
        Ok(preview_str(s))
    }
    fn visit_unit<E>(self) -> Result<String, E> {
        Ok(serde_json::Value::Null.to_string())
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<String, A::Error> {
        let mut len = 0;
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
            len += 1;
        }
        Ok(preview_list(len))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<String, A::Error> {
        let mut len = 0;
        while map
            .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
            .is_some()
        {
            len += 1;
        }
        Ok(preview_object(len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preview_read_from_the_text_is_the_preview_of_the_value() {
        use serde::de::DeserializeSeed;
        let long = format!("\"{}\"", "é".repeat(100));
        for text in [
            "null",
            "true",
            "-0",
            "12",
            "-7",
            "1.5e300",
            "0.1",
            "18446744073709551615",
            r#""a\"b""#,
            &long,
            "[]",
            r#"[1, [2, 3], {"a": 4}]"#,
            "{}",
            r#"{"a": [1], "b": {}}"#,
        ] {
            let value: serde_json::Value = serde_json::from_str(text).unwrap();
            let mut de = serde_json::Deserializer::from_str(text);
            assert_eq!(
                Preview.deserialize(&mut de).unwrap(),
                preview_json(&value),
                "{text}"
            );
        }
    }

    #[test]
    fn preview_cuts_long_strings_on_char_boundary() {
        let long = "é".repeat(1000);
        let p = preview_str(&long);
        assert!(p.starts_with("\"éé"));
        assert!(p.ends_with("(2000 bytes in all)"), "{p}");
        assert_eq!(preview_str("short"), "\"short\"");
    }

    #[test]
    fn display_lists_every_violation() {
        let vs = Violations(vec![
            Violation {
                path: Pointer::parse("/a").unwrap(),
                rule: Rule::Range,
                expected: "a number in [0, 1]".into(),
                found: "2".into(),
            },
            Violation {
                path: Pointer::root(),
                rule: Rule::Required,
                expected: "property `b`".into(),
                found: "nothing".into(),
            },
        ]);
        assert_eq!(
            vs.to_string(),
            "2 violations\n  /a: range: expected a number in [0, 1], found 2\n  (root): required: expected property `b`, found nothing"
        );
    }
}

//! Post-parse validation: every violation, each with the JSON pointer of the value that broke a rule.

use std::fmt;

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
    /// JSON pointer (RFC 6901) of the offending value, `""` for the root: `/signals/2/magnitude`.
    /// For a missing or unexpected property it points at that property's key.
    pub path: String,
    /// The rule that was broken.
    pub rule: Rule,
    /// What the rule allows, e.g. `a number in [0, 1]` or `one of "low", "high"`.
    pub expected: String,
    /// What was there instead, shortened when long (a 10 MB string is not copied into an error).
    pub found: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "(root)"
        } else {
            &self.path
        };
        write!(
            f,
            "{path}: {}: expected {}, found {}",
            self.rule, self.expected, self.found
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

impl fmt::Display for Violations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.len();
        write!(f, "{n} violation{}", if n == 1 { "" } else { "s" })?;
        for v in &self.0 {
            write!(f, "\n  {v}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Violations {}

/// One step of a [`Path`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment<'a> {
    /// A property name.
    Key(&'a str),
    /// An array index.
    Index(usize),
}

/// The location of a value being walked: a list linked through the stack, so walking a valid
/// value allocates nothing; the JSON pointer is written only when a violation is found.
///
/// ```
/// use structured_runtime::schema::Path;
///
/// let root = Path::root();
/// let signals = root.key("signals");
/// let second = signals.index(2);
/// assert_eq!(second.key("a/b").to_pointer(), "/signals/2/a~1b");
/// assert_eq!(root.to_pointer(), "");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    segment: Option<Segment<'a>>,
}

impl<'a> Path<'a> {
    /// The root.
    pub const fn root() -> Path<'static> {
        Path {
            parent: None,
            segment: None,
        }
    }

    /// The property `name` of the value here.
    pub fn key<'b>(&'b self, name: &'b str) -> Path<'b> {
        Path {
            parent: Some(self),
            segment: Some(Segment::Key(name)),
        }
    }

    /// The item `index` of the array here.
    pub fn index(&self, index: usize) -> Path<'_> {
        Path {
            parent: Some(self),
            segment: Some(Segment::Index(index)),
        }
    }

    /// The segments from the root down.
    pub fn segments(&self) -> Vec<Segment<'a>> {
        let mut out = Vec::new();
        let mut at = Some(self);
        while let Some(p) = at {
            out.extend(p.segment);
            at = p.parent;
        }
        out.reverse();
        out
    }

    /// The JSON pointer (RFC 6901) of this location: `~` and `/` in names are escaped.
    pub fn to_pointer(&self) -> String {
        let mut out = String::new();
        for seg in self.segments() {
            out.push('/');
            match seg {
                Segment::Key(key) => escape_into(&mut out, key),
                Segment::Index(i) => out.push_str(&i.to_string()),
            }
        }
        out
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_pointer())
    }
}

pub(crate) fn escape_into(out: &mut String, name: &str) {
    for c in name.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}

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

/// A short preview of any JSON value from the input.
pub(crate) fn preview_json(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::String(s) => preview_str(s),
        Value::Array(items) => format!("an array of {} items", items.len()),
        Value::Object(map) => format!("an object with {} properties", map.len()),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_escapes_tilde_and_slash() {
        let root = Path::root();
        let signals = root.key("signals");
        let item = signals.index(2);
        assert_eq!(item.key("a/b~c").to_pointer(), "/signals/2/a~1b~0c");
        assert_eq!(item.to_pointer(), "/signals/2");
        assert_eq!(root.to_pointer(), "");
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
                path: "/a".into(),
                rule: Rule::Range,
                expected: "a number in [0, 1]".into(),
                found: "2".into(),
            },
            Violation {
                path: String::new(),
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

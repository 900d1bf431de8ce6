//! `from_text`: a value read from plain prose by keyword heuristics, with a report of where each
//! field came from. The field readers here are what the derive's generated `from_text` calls.

use std::fmt;

use crate::read::prose::{Hit, NumberHit, Prose};
use crate::schema::types::{Bound, Range, RangeTarget};
use crate::schema::validate::{Validate, Violations};
use crate::schema::{Path, Pointer};

/// A value read from prose, and how each field was obtained.
///
/// A heuristic value must never pass for a parsed one, so the value travels with its report.
#[derive(Debug, Clone, PartialEq)]
pub struct FromText<T> {
    /// The value. It passes the type's [`Validate`].
    pub value: T,
    /// Where each field came from.
    pub report: TextReport,
}

impl<T> FromText<T> {
    /// The value and its report.
    pub fn into_parts(self) -> (T, TextReport) {
        (self.value, self.report)
    }
}

/// Why `from_text` gave no value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FromTextError {
    /// The type declares no `#[fallback_keyword]`, so it has no prose reader.
    #[error("`{type_name}` has no from_text reader: add #[fallback_keyword(..)] to the fields to read from prose")]
    NotSupported {
        /// The Rust type.
        type_name: &'static str,
    },
    /// A declared default is not one of the field type's values (reachable only through generic
    /// types, whose values the derive cannot check at compile time).
    #[error("{field}: the declared default {value:?} is not a value of the field's type")]
    BadDefault {
        /// The field's pointer.
        field: Pointer,
        /// The declared default.
        value: &'static str,
    },
    /// The assembled value breaks the type's rules: a field without `#[fallback_keyword]` took a
    /// `Default` that its type does not accept.
    #[error("the value read from text is invalid: {0}")]
    Invalid(Violations),
}

/// Where each field of a [`FromText`] value came from, in declaration order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TextReport {
    fields: Vec<FieldReport>,
}

/// One field's origin.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldReport {
    /// The field's pointer, e.g. `/severity`.
    pub field: Pointer,
    /// How its value was obtained.
    pub source: TextSource,
}

/// How a field's value was obtained.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TextSource {
    /// A keyword (or an alias of the value) found in the text.
    Keyword {
        /// The value it selected.
        value: String,
        /// The words as written in the text.
        written: String,
        /// Byte offset in the text.
        at: usize,
    },
    /// A number written after the field's label.
    Number {
        /// The number as written ("80%", "-0.5").
        written: String,
        /// Byte offset in the text.
        at: usize,
    },
    /// The first characters of the text.
    Excerpt {
        /// How many characters were taken.
        chars: usize,
    },
    /// The declared default (or `None` for an `Option`, `false` for a flag).
    Default {
        /// Why the text gave nothing.
        reason: DefaultReason,
    },
    /// The field has no `#[fallback_keyword]`: it holds its empty value (`[]`, `None`) or its
    /// type's `Default`.
    NotRead,
}

/// Why a field fell back to its default.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum DefaultReason {
    /// None of the field's keywords or labels occurs in the text.
    NotFound,
    /// A keyword occurs, but only where the sentence negates it ("no need to exit").
    Negated {
        /// The negated words as written.
        written: String,
        /// Byte offset in the text.
        at: usize,
    },
    /// A number was written for the field but the field does not allow it.
    Rejected {
        /// The number as written.
        written: String,
        /// Byte offset in the text.
        at: usize,
        /// What the field allows.
        expected: String,
    },
    /// The attribute declares only a fixed value.
    Fixed,
}

impl TextReport {
    /// Every field, in declaration order.
    pub fn fields(&self) -> &[FieldReport] {
        &self.fields
    }

    /// The report of one field, by JSON pointer (`/severity`).
    pub fn field(&self, pointer: &str) -> Option<&FieldReport> {
        self.fields.iter().find(|f| f.field == pointer)
    }

    /// The fields whose value was read from the text (a keyword, a number or an excerpt).
    pub fn read(&self) -> impl Iterator<Item = &FieldReport> {
        self.fields.iter().filter(|f| f.is_read())
    }

    /// The fields that hold a default or an empty value instead of something the text said.
    pub fn defaulted(&self) -> impl Iterator<Item = &FieldReport> {
        self.fields.iter().filter(|f| !f.is_read())
    }

    /// What the caller should hear about: a number the text gave that the field refused.
    pub fn warnings(&self) -> impl Iterator<Item = &FieldReport> {
        self.fields.iter().filter(|f| {
            matches!(
                f.source,
                TextSource::Default {
                    reason: DefaultReason::Rejected { .. }
                }
            )
        })
    }

    fn push(&mut self, field: &str, source: TextSource) {
        self.fields.push(FieldReport {
            field: pointer(field),
            source,
        });
    }

    /// Records a field the attribute does not read (generated code).
    #[doc(hidden)]
    pub fn not_read(&mut self, field: &str) {
        self.push(field, TextSource::NotRead);
    }
}

impl FieldReport {
    /// Whether the value came from the text.
    pub fn is_read(&self) -> bool {
        matches!(
            self.source,
            TextSource::Keyword { .. } | TextSource::Number { .. } | TextSource::Excerpt { .. }
        )
    }
}

impl fmt::Display for FieldReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.field)?;
        match &self.source {
            TextSource::Keyword { value, written, at } => {
                write!(f, "{value:?} from {written:?} at byte {at}")
            }
            TextSource::Number { written, at } => write!(f, "{written} at byte {at}"),
            TextSource::Excerpt { chars } => write!(f, "first {chars} characters of the text"),
            TextSource::Default { reason } => match reason {
                DefaultReason::NotFound => f.write_str("default: not in the text"),
                DefaultReason::Negated { written, at } => {
                    write!(f, "default: {written:?} at byte {at} is negated")
                }
                DefaultReason::Rejected {
                    written,
                    at,
                    expected,
                } => write!(
                    f,
                    "default: {written} at byte {at} refused, expected {expected}"
                ),
                DefaultReason::Fixed => f.write_str("fixed value"),
            },
            TextSource::NotRead => f.write_str("not read (no #[fallback_keyword])"),
        }
    }
}

impl fmt::Display for TextReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, field) in self.fields.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{field}")?;
        }
        Ok(())
    }
}

fn pointer(field: &str) -> Pointer {
    Path::root().key(field).to_pointer()
}

/// A field type `#[fallback_keyword]` can fill by choosing one of its values: `String` (with
/// `#[enum_values]`) and unit enums deriving `StructuredOutput`.
#[diagnostic::on_unimplemented(
    message = "#[fallback_keyword] cannot choose a value of `{Self}` from keywords",
    label = "not a String with #[enum_values], a unit enum, a bool, a number or an Option of one",
    note = "a unit enum gets this by deriving StructuredOutput; a nested struct cannot be read from prose: remove the attribute (its Default is used)"
)]
pub trait TextChoice: Sized {
    /// The wire values in declared order, for a bare `#[fallback_keyword]`.
    const VALUES: &'static [&'static str];
    /// The value with this wire name.
    fn from_value(value: &str) -> Option<Self>;
}

impl TextChoice for String {
    // A String's values come from #[enum_values], which the derive passes itself.
    const VALUES: &'static [&'static str] = &[];
    fn from_value(value: &str) -> Option<Self> {
        Some(value.to_owned())
    }
}

/// Whether `value` is one of `T`'s values; used by the derive to check a default at compile time.
pub const fn is_value_of<T: TextChoice>(value: &str) -> bool {
    let values = T::VALUES;
    let mut i = 0;
    while i < values.len() {
        if const_str_eq(values[i], value) {
            return true;
        }
        i += 1;
    }
    false
}

const fn const_str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// A number type `#[fallback_keyword]` can read after a label.
#[diagnostic::on_unimplemented(
    message = "#[fallback_keyword] cannot read a `{Self}` after a label",
    label = "not an integer or float type"
)]
pub trait TextNumber: RangeTarget + Sized {
    /// The number as this type, if it can hold it. `fraction` says the field's maximum is at
    /// most 1, so "80%" means 0.8.
    fn from_hit(hit: &NumberHit<'_>, fraction: bool) -> Option<Self>;
}

macro_rules! text_float {
    ($($t:ty),*) => {$(
        impl TextNumber for $t {
            fn from_hit(hit: &NumberHit<'_>, fraction: bool) -> Option<Self> {
                let v = if hit.percent && fraction { hit.value / 100.0 } else { hit.value };
                let v = v as $t;
                v.is_finite().then_some(v)
            }
        }
    )*};
}
text_float!(f32, f64);

macro_rules! text_int {
    ($($t:ty),*) => {$(
        impl TextNumber for $t {
            fn from_hit(hit: &NumberHit<'_>, _: bool) -> Option<Self> {
                <$t>::try_from(hit.as_integer()?).ok()
            }
        }
    )*};
}
text_int!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);

/// One field's choice: `options` are (phrase, value) pairs in priority order; with `declared`,
/// the type's own values follow them. `None` when nothing counts and there is no default.
pub fn choice<T: TextChoice>(
    prose: &Prose<'_>,
    report: &mut TextReport,
    field: &str,
    options: &[(&'static str, &'static str)],
    declared: bool,
    default: Option<&'static str>,
) -> Result<Option<T>, FromTextError> {
    let extra = if declared { T::VALUES } else { &[] };
    let all = options
        .iter()
        .copied()
        .chain(extra.iter().map(|v| (*v, *v)));
    let mut negated: Option<Hit<'_>> = None;
    for (phrase, value) in all {
        let search = prose.find(phrase);
        if let Some(hit) = search.hit {
            if let Some(v) = T::from_value(value) {
                report.push(
                    field,
                    TextSource::Keyword {
                        value: value.to_owned(),
                        written: hit.written.to_owned(),
                        at: hit.at,
                    },
                );
                return Ok(Some(v));
            }
        }
        if negated.is_none() {
            negated = search.negated;
        }
    }
    report.push(field, default_source(negated));
    match default {
        None => Ok(None),
        Some(value) => match T::from_value(value) {
            Some(v) => Ok(Some(v)),
            None => Err(FromTextError::BadDefault {
                field: pointer(field),
                value,
            }),
        },
    }
}

/// [`choice`] for a field that is not an `Option`: `default` is its value when nothing counts.
pub fn choice_or<T: TextChoice>(
    prose: &Prose<'_>,
    report: &mut TextReport,
    field: &str,
    options: &[(&'static str, &'static str)],
    declared: bool,
    default: &'static str,
) -> Result<T, FromTextError> {
    choice(prose, report, field, options, declared, Some(default))?.ok_or_else(|| {
        FromTextError::BadDefault {
            field: pointer(field),
            value: default,
        }
    })
}

/// A flag: true when one of `keywords` occurs and is not negated.
pub fn flag(
    prose: &Prose<'_>,
    report: &mut TextReport,
    field: &str,
    keywords: &[&'static str],
) -> bool {
    let mut negated = None;
    for keyword in keywords {
        let search = prose.find(keyword);
        if let Some(hit) = search.hit {
            report.push(
                field,
                TextSource::Keyword {
                    value: "true".to_owned(),
                    written: hit.written.to_owned(),
                    at: hit.at,
                },
            );
            return true;
        }
        if negated.is_none() {
            negated = search.negated;
        }
    }
    report.push(field, default_source(negated));
    false
}

fn default_source(negated: Option<Hit<'_>>) -> TextSource {
    let reason = match negated {
        Some(hit) => DefaultReason::Negated {
            written: hit.written.to_owned(),
            at: hit.at,
        },
        None => DefaultReason::NotFound,
    };
    TextSource::Default { reason }
}

/// A number after one of `labels`, taken only if the field allows it; else `default`.
pub fn number<T: TextNumber>(
    prose: &Prose<'_>,
    report: &mut TextReport,
    field: &str,
    labels: &[&str],
    range: Range,
    default: Option<T>,
) -> Option<T> {
    let Some(hit) = prose.number_after(labels) else {
        report.push(
            field,
            TextSource::Default {
                reason: DefaultReason::NotFound,
            },
        );
        return default;
    };
    let fraction = match range.max {
        Some(Bound::Float(max)) => max <= 1.0,
        Some(Bound::Int(max)) => max <= 1,
        None => false,
    };
    let accepted = T::from_hit(&hit, fraction).filter(|v| {
        let mut out = Vec::new();
        v.check_range(range, &Path::root(), &mut out);
        out.is_empty()
    });
    match accepted {
        Some(v) => {
            report.push(
                field,
                TextSource::Number {
                    written: hit.written.to_owned(),
                    at: hit.at,
                },
            );
            Some(v)
        }
        None => {
            report.push(
                field,
                TextSource::Default {
                    reason: DefaultReason::Rejected {
                        written: hit.written.to_owned(),
                        at: hit.at,
                        expected: expected_number::<T>(range),
                    },
                },
            );
            default
        }
    }
}

/// [`number`] for a field that is not an `Option`.
pub fn number_or<T: TextNumber + Copy>(
    prose: &Prose<'_>,
    report: &mut TextReport,
    field: &str,
    labels: &[&str],
    range: Range,
    default: T,
) -> T {
    number(prose, report, field, labels, range, Some(default)).unwrap_or(default)
}

fn expected_number<T>(range: Range) -> String {
    let kind = std::any::type_name::<T>();
    match (range.min, range.max) {
        (None, None) => format!("a value that fits {kind}"),
        _ => format!("{} that fits {kind}", range.describe()),
    }
}

/// The first `chars` characters of the text; `default` instead when the text has no word.
pub fn excerpt(
    prose: &Prose<'_>,
    report: &mut TextReport,
    field: &str,
    chars: usize,
    default: Option<&'static str>,
) -> String {
    if let (true, Some(d)) = (prose.is_empty(), default) {
        report.push(
            field,
            TextSource::Default {
                reason: DefaultReason::NotFound,
            },
        );
        return d.to_owned();
    }
    let taken = prose.excerpt(chars);
    report.push(
        field,
        TextSource::Excerpt {
            chars: taken.chars().count(),
        },
    );
    taken.to_owned()
}

/// A fixed value declared by the attribute.
pub fn fixed<T>(report: &mut TextReport, field: &str, value: T) -> T {
    report.push(
        field,
        TextSource::Default {
            reason: DefaultReason::Fixed,
        },
    );
    value
}

/// The last step of every generated `from_text`: the value must pass its own rules.
pub fn finish<T: Validate>(value: T, report: TextReport) -> Result<FromText<T>, FromTextError> {
    match value.validate() {
        Ok(()) => Ok(FromText { value, report }),
        Err(violations) => Err(FromTextError::Invalid(violations)),
    }
}

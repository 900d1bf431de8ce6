//! `parse_response`: from what the model wrote to a validated value, saying how it was obtained.
//!
//! 1. The whole answer through `from_json` (the fast path; with schema enforcement, the path
//!    that should always succeed).
//! 2. Every candidate from [`crate::read::extract`] through `from_json`: a fenced block or a `{...}`
//!    in prose, as written.
//! 3. Every candidate repaired ([`crate::read::repair`]), fitted to the schema ([`crate::read::coerce`]) and
//!    validated. The candidate that validates with the fewest changes wins; on a tie the later
//!    one, because a model's final answer comes after its drafts and examples.
//! 4. No JSON anywhere: the type's `from_text` prose reader, when it has one.
//!
//! A truncated answer is an error by default ([`ParseError::Truncated`], with the partial value):
//! closing the brackets makes it parse, not complete.

use std::fmt;
use std::ops::Range;

use serde_json::Value;

use crate::provider::mode::StructuredOutputMode;
use crate::read::coerce::{coerce, CoercePolicy, Recovery};
use crate::read::extract::{scan, Candidate, Source, Spans};
use crate::read::from_text::{FromTextError, TextReport, TextSource};
use crate::read::repair::{repair, Repair, RepairError, Repaired};
use crate::schema::output::StructuredOutput;
use crate::schema::validate::Violations;
use crate::schema::validation::check_instance;

/// What the pipeline may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseOptions {
    /// Repair the syntax of candidates that are not JSON as written.
    pub repair: bool,
    /// What coercion may change to fit the schema.
    pub coerce: CoercePolicy,
    /// Read the type's fields from prose when the answer holds no JSON.
    pub from_text: bool,
    /// Return a value read from a truncated answer (marked truncated) instead of an error.
    pub accept_truncated: bool,
}

impl Default for ParseOptions {
    /// Repair, coercion that invents nothing, `from_text`, truncation refused.
    fn default() -> Self {
        ParseOptions {
            repair: true,
            coerce: CoercePolicy::default(),
            from_text: true,
            accept_truncated: false,
        }
    }
}

impl ParseOptions {
    /// Only the JSON as written (found in prose or a fence is fine): no repair, no coercion, no
    /// prose reading.
    pub fn strict() -> Self {
        ParseOptions {
            repair: false,
            coerce: CoercePolicy::strict(),
            from_text: false,
            accept_truncated: false,
        }
    }

    /// Everything, including the seed's recovery strategies (each one a warning).
    pub fn lenient() -> Self {
        ParseOptions {
            coerce: CoercePolicy::lenient(),
            ..ParseOptions::default()
        }
    }
}

/// How the value was obtained, from most to least trustworthy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Provenance {
    /// The answer was exactly the JSON.
    Clean,
    /// The JSON, as written, was found inside the answer (a fence, prose around it).
    Extracted,
    /// The JSON's syntax was repaired.
    Repaired,
    /// The value was changed to fit the schema (see the warnings).
    Recovered,
    /// No JSON: the value was read from prose by `from_text`.
    Heuristic,
}

/// A value read from a model's answer, how, and everything that was done to get it.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed<T> {
    /// The value, valid for its schema and rules.
    pub value: T,
    /// How it was obtained.
    pub provenance: Provenance,
    /// The answer was cut off; set only when [`ParseOptions::accept_truncated`] allowed it.
    pub truncated: bool,
    /// Byte range of the answer the value was read from.
    pub span: Range<usize>,
    /// Every repair, recovery and note, in the order made.
    pub warnings: Vec<Warning>,
    /// For [`Provenance::Heuristic`]: where each field came from.
    pub text_report: Option<TextReport>,
}

/// Something done to the answer, or noticed in it, on the way to the value.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Warning {
    /// The provider promised exact JSON, and the answer was not.
    NotAsEnforced {
        /// Why the fast path refused it.
        reason: String,
    },
    /// The value came from part of the answer.
    Extracted {
        /// Which part.
        source: Source,
        /// Its byte range.
        span: Range<usize>,
    },
    /// A syntax repair (its offset is in the whole answer).
    Repair(Repair),
    /// A change made to fit the schema.
    Recovery(Recovery),
    /// The answer was cut off; the value was closed where it stopped.
    Truncated,
    /// Validation is off: the value was taken without checking these violations.
    NotValidated {
        /// The violations not enforced.
        violations: String,
    },
    /// No valid answer within the re-asks: the value is the type's defaults (the last answer's
    /// fields where they fit), by the caller's policy.
    Defaults {
        /// Requests made.
        attempts: usize,
        /// What was wrong with each answer.
        errors: Vec<String>,
    },
    /// A field read from prose could not be used, and took its default.
    FromText {
        /// The field's JSON pointer.
        field: String,
        /// Why.
        reason: String,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::NotAsEnforced { reason } => {
                write!(
                    f,
                    "the provider enforced the schema, but the answer was not exact JSON: {reason}"
                )
            }
            Warning::Extracted { source, span } => {
                let what = match source {
                    Source::Whole => "the answer, without the text around it",
                    Source::Fence { closed: true } => "a fenced block",
                    Source::Fence { closed: false } => "an unclosed fenced block",
                    Source::Balanced => "a {...} or [...] in the answer",
                };
                write!(f, "read from {what} (bytes {}..{})", span.start, span.end)
            }
            Warning::Repair(r) => write!(f, "repair: {r}"),
            Warning::Recovery(r) => write!(f, "recovery: {r}"),
            Warning::Truncated => f.write_str("the answer was cut off; the value is incomplete"),
            Warning::FromText { field, reason } => write!(f, "{field}: {reason}"),
            Warning::NotValidated { violations } => {
                write!(f, "validation is off; not checked: {violations}")
            }
            Warning::Defaults { attempts, errors } => write!(
                f,
                "no valid answer in {attempts} attempt(s) (last: {}); the type's defaults were used",
                errors.last().map(String::as_str).unwrap_or("none")
            ),
        }
    }
}

/// Why no value could be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// The answer holds no JSON, and prose could not stand in for it.
    #[error("no JSON found in the answer ({len} bytes){}", prose_note(.from_text))]
    NotFound {
        /// Length of the answer.
        len: usize,
        /// Why `from_text` did not give a value (`None` when it was not tried).
        from_text: Option<FromTextError>,
    },
    /// The answer was cut off. The partial value is kept for the caller to look at.
    #[error("the answer was cut off before the JSON ended")]
    Truncated {
        /// What could be read, closed where the text stopped (before coercion).
        partial: Value,
        /// What was done to read it.
        warnings: Vec<Warning>,
    },
    /// JSON was found, but no candidate fits the schema and rules: the violations of the
    /// closest one.
    #[error("the JSON does not fit the schema: {violations}")]
    Invalid {
        /// Every violation, with its path.
        violations: Violations,
        /// The closest candidate's value, after repair and coercion.
        value: Value,
        /// What was done to it.
        warnings: Vec<Warning>,
    },
    /// Nested deeper than the repairer follows.
    #[error(transparent)]
    TooDeep(RepairError),
}

fn prose_note(from_text: &Option<FromTextError>) -> String {
    match from_text {
        Some(e) => format!("; reading prose failed too: {e}"),
        None => String::new(),
    }
}

/// Reads `T` from a model's answer: see the [`read`](crate::read) module for the steps.
///
/// ```
/// use structured_runtime::{parse_response, Provenance, StructuredOutput, StructuredOutputMode};
///
/// #[derive(StructuredOutput, serde::Serialize, serde::Deserialize, Debug, PartialEq)]
/// struct Verdict {
///     #[enum_values("pass", "fail")]
///     outcome: String,
///     #[range(0.0, 1.0)]
///     confidence: f64,
/// }
///
/// let answer = "Sure! Here it is:\n```json\n{\"outcome\": \"Pass\", \"confidence\": \"0.9\",}\n```";
/// let parsed = parse_response::<Verdict>(answer, StructuredOutputMode::PromptGuided).unwrap();
/// assert_eq!(parsed.value, Verdict { outcome: "pass".into(), confidence: 0.9 });
/// assert_eq!(parsed.provenance, Provenance::Recovered);
/// for warning in &parsed.warnings {
///     println!("{warning}"); // the fence, the trailing comma, "Pass", "0.9"
/// }
/// ```
pub fn parse_response<T: StructuredOutput>(
    text: &str,
    mode: StructuredOutputMode,
) -> Result<Parsed<T>, ParseError> {
    parse_response_with(text, mode, &ParseOptions::default())
}

/// [`parse_response`] with explicit options.
pub fn parse_response_with<T: StructuredOutput>(
    text: &str,
    mode: StructuredOutputMode,
    options: &ParseOptions,
) -> Result<Parsed<T>, ParseError> {
    let mut warnings = Vec::new();
    let trimmed = text.trim();
    if mode.expects_exact_json() {
        match T::from_json(trimmed) {
            Ok(value) => return Ok(clean(value, text)),
            Err(e) => warnings.push(Warning::NotAsEnforced {
                reason: e.to_string(),
            }),
        }
    } else if let Some(value) = exact::<T>(trimmed) {
        // No reason is needed when the mode promised nothing, so none is worked out.
        return Ok(clean(value, text));
    }
    let spans = scan(text);
    // As written, inside the answer: the candidate ending last in the text that is exact JSON
    // for `T`. Refusals are not explained here (that is what costs), only counted out.
    if let Some((value, candidate)) = last_exact(&spans, exact::<T>) {
        warnings.push(extracted(&candidate));
        return Ok(done(value, Provenance::Extracted, &candidate, warnings));
    }
    let found = spans.candidates();
    let schema = T::schema().schema();
    let accept = |v: &Value| {
        T::from_json(&v.to_string()).map_err(|e| match e {
            crate::FromJsonError::Invalid(v) => v,
            other => Violations(vec![crate::schema::validate::Violation {
                path: String::new(),
                rule: crate::schema::validate::Rule::Deserialize,
                expected: "JSON".into(),
                found: other.to_string(),
            }]),
        })
    };
    match best_candidate(&found, schema, options, accept, warnings) {
        Outcome::Value(parsed) => Ok(parsed),
        Outcome::Err(e) => Err(e),
        Outcome::NoJson(warnings) => prose::<T>(text, options, warnings),
    }
}

/// The pipeline for a schema given at run time: the value fitted to `schema` and checked against
/// it (the keywords its checker covers). No prose reading: a schema has no
/// keywords to look for.
pub fn parse_value(
    text: &str,
    schema: &Value,
    options: &ParseOptions,
) -> Result<Parsed<Value>, ParseError> {
    let accept = |v: &Value| {
        let violations = check_instance(schema, v);
        if violations.is_empty() {
            Ok(v.clone())
        } else {
            Err(Violations(violations))
        }
    };
    let fits = |json: &str| {
        let value = serde_json::from_str::<Value>(json).ok()?;
        check_instance(schema, &value).is_empty().then_some(value)
    };
    if let Some(value) = fits(text.trim()) {
        return Ok(clean(value, text));
    }
    let spans = scan(text);
    if let Some((value, candidate)) = last_exact(&spans, fits) {
        let warnings = vec![extracted(&candidate)];
        return Ok(done(value, Provenance::Extracted, &candidate, warnings));
    }
    match best_candidate(&spans.candidates(), schema, options, accept, Vec::new()) {
        Outcome::Value(parsed) => Ok(parsed),
        Outcome::Err(e) => Err(e),
        Outcome::NoJson(_) => Err(ParseError::NotFound {
            len: text.len(),
            from_text: None,
        }),
    }
}

enum Outcome<T> {
    Value(Parsed<T>),
    Err(ParseError),
    NoJson(Vec<Warning>),
}

/// One candidate carried through repair and coercion.
struct Attempt<'c, 'a> {
    candidate: &'c Candidate<'a>,
    repaired: Repaired,
    recoveries: Vec<Recovery>,
    value: Value,
}

impl Attempt<'_, '_> {
    fn cost(&self) -> usize {
        self.repaired.cost() + self.recoveries.len()
    }

    fn warnings(&self, mut warnings: Vec<Warning>) -> Vec<Warning> {
        let offset = self.candidate.span.start;
        let around = self.candidate.source != Source::Whole
            || self.repaired.repairs.iter().any(|r| r.kind.is_extraction());
        if around {
            warnings.push(extracted(self.candidate));
        }
        warnings.extend(
            self.repaired
                .repairs
                .iter()
                .filter(|r| !r.kind.is_extraction())
                .map(|r| {
                    Warning::Repair(Repair {
                        kind: r.kind,
                        at: r.at + offset,
                    })
                }),
        );
        warnings.extend(self.recoveries.iter().cloned().map(Warning::Recovery));
        if self.repaired.truncated {
            warnings.push(Warning::Truncated);
        }
        warnings
    }

    fn provenance(&self) -> Provenance {
        if !self.recoveries.is_empty() {
            Provenance::Recovered
        } else if !self.repaired.is_extracted_only() {
            Provenance::Repaired
        } else if self.candidate.source == Source::Whole && self.repaired.is_clean() {
            Provenance::Clean
        } else {
            Provenance::Extracted
        }
    }
}

fn best_candidate<T>(
    found: &[Candidate<'_>],
    schema: &Value,
    options: &ParseOptions,
    accept: impl Fn(&Value) -> Result<T, Violations>,
    warnings: Vec<Warning>,
) -> Outcome<T> {
    let mut best: Option<(Attempt, T)> = None;
    let mut closest: Option<(Attempt, Violations)> = None;
    let mut too_deep = None;
    // From the last candidate back, so a tie goes to the later one by keeping the first found,
    // and a candidate that fits with no change at all ends the search: nothing before it can win.
    for candidate in found.iter().rev() {
        if best.as_ref().is_some_and(|(b, _)| b.cost() == 0) {
            break;
        }
        let repaired = if options.repair {
            repair(candidate.text)
        } else {
            serde_json::from_str::<Value>(candidate.text.trim())
                .map(|value| Repaired {
                    value,
                    repairs: Vec::new(),
                    truncated: false,
                })
                .map_err(|_| RepairError::NotFound {
                    len: candidate.text.len(),
                })
        };
        let repaired = match repaired {
            Ok(r) => r,
            Err(e @ RepairError::TooDeep { .. }) => {
                too_deep = Some(e);
                continue;
            }
            Err(_) => continue,
        };
        let mut value = repaired.value.clone();
        let recoveries = coerce(&mut value, schema, &options.coerce);
        let attempt = Attempt {
            candidate,
            repaired,
            recoveries,
            value,
        };
        match accept(&attempt.value) {
            Ok(v) => {
                if best.as_ref().is_none_or(|(b, _)| attempt.cost() < b.cost()) {
                    best = Some((attempt, v));
                }
            }
            Err(violations) => {
                let rank =
                    |a: &Attempt, v: &Violations| (a.repaired.truncated, v.0.len(), a.cost());
                if closest
                    .as_ref()
                    .is_none_or(|(c, cv)| rank(&attempt, &violations) < rank(c, cv))
                {
                    closest = Some((attempt, violations));
                }
            }
        }
    }
    if let Some((attempt, value)) = best {
        let all = attempt.warnings(warnings);
        if attempt.repaired.truncated && !options.accept_truncated {
            return Outcome::Err(ParseError::Truncated {
                partial: attempt.repaired.value,
                warnings: all,
            });
        }
        tracing::debug!(
            provenance = ?attempt.provenance(),
            warnings = all.len(),
            "structured output read from the answer"
        );
        return Outcome::Value(Parsed {
            value,
            provenance: attempt.provenance(),
            truncated: attempt.repaired.truncated,
            span: attempt.candidate.span.clone(),
            warnings: all,
            text_report: None,
        });
    }
    if let Some((attempt, violations)) = closest {
        let all = attempt.warnings(warnings);
        if attempt.repaired.truncated {
            return Outcome::Err(ParseError::Truncated {
                partial: attempt.repaired.value,
                warnings: all,
            });
        }
        return Outcome::Err(ParseError::Invalid {
            violations,
            value: attempt.value,
            warnings: all,
        });
    }
    match too_deep {
        Some(e) => Outcome::Err(ParseError::TooDeep(e)),
        None => Outcome::NoJson(warnings),
    }
}

/// No JSON at all: the type's prose reader, when allowed and when it reads anything.
fn prose<T: StructuredOutput>(
    text: &str,
    options: &ParseOptions,
    mut warnings: Vec<Warning>,
) -> Result<Parsed<T>, ParseError> {
    let not_found = |from_text| ParseError::NotFound {
        len: text.len(),
        from_text,
    };
    if !options.from_text {
        return Err(not_found(None));
    }
    let read = T::from_text(text).map_err(|e| not_found(Some(e)))?;
    let evidence = read.report.fields().iter().any(|f| {
        matches!(
            f.source,
            TextSource::Keyword { .. } | TextSource::Number { .. }
        )
    });
    if !evidence {
        // No keyword or number found: an excerpt and defaults are not a reading of the answer.
        return Err(not_found(None));
    }
    for field in read.report.fields() {
        if let TextSource::Default { reason } = &field.source {
            warnings.push(Warning::FromText {
                field: field.field.clone(),
                reason: format!("not read from the text ({reason:?}); the default was used"),
            });
        }
    }
    tracing::debug!(
        fields = read.report.fields().len(),
        "no JSON; read from prose"
    );
    Ok(Parsed {
        value: read.value,
        provenance: Provenance::Heuristic,
        truncated: false,
        span: 0..text.len(),
        warnings,
        text_report: Some(read.report),
    })
}

/// Among the candidates inside the answer (not the whole text), the one ending last in the text
/// that `exact` takes as written, with what it made of it.
fn last_exact<'a, R>(
    spans: &Spans<'a>,
    exact: impl Fn(&str) -> Option<R>,
) -> Option<(R, Candidate<'a>)> {
    spans
        .latest_first()
        .find_map(|c| exact(c.text.trim()).map(|v| (v, c)))
}

/// `T` from exactly this JSON, valid, or `None` (without working out why).
fn exact<T: StructuredOutput>(json: &str) -> Option<T> {
    let value = crate::read::strict_de::from_str::<T>(json).ok()?;
    value.validate().is_ok().then_some(value)
}

fn clean<T>(value: T, text: &str) -> Parsed<T> {
    Parsed {
        value,
        provenance: Provenance::Clean,
        truncated: false,
        span: 0..text.len(),
        warnings: Vec::new(),
        text_report: None,
    }
}

fn extracted(candidate: &Candidate<'_>) -> Warning {
    Warning::Extracted {
        source: candidate.source,
        span: candidate.span.clone(),
    }
}

fn done<T>(
    value: T,
    provenance: Provenance,
    candidate: &Candidate<'_>,
    warnings: Vec<Warning>,
) -> Parsed<T> {
    Parsed {
        value,
        provenance,
        truncated: false,
        span: candidate.span.clone(),
        warnings,
        text_report: None,
    }
}

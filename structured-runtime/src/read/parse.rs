//! `parse_response`: from what the model wrote to a validated value, saying how it was obtained.
//! The steps are described in the [crate documentation](crate#reading-an-answer-yourself).

use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;

use serde_json::Value;

use crate::read::coerce::{coerce, CoercePolicy, Recovery, RecoveryKind};
use crate::read::extract::{scan, Candidate, Source, Spans};
use crate::read::from_json::{from_json, from_value};
use crate::read::from_text::{DefaultReason, FromTextError, TextReport, TextSource};
use crate::read::markdown::{route, Route};
use crate::read::mode::StructuredOutputMode;
use crate::read::output::StructuredOutput;
use crate::read::repair::{
    repair_common, repair_then, used_part, value_as_written, Repair, RepairError, Repaired,
};
use crate::read::reshape::Reshape;
use crate::read::select;
use crate::read::strict_de;
use crate::schema::markdown::Markdown;
use crate::schema::node::{JsonType, Node};
use crate::schema::validate::{Rule, Violation, Violations};
use crate::schema::{Pointer, ResponseSchema};

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
    /// Take only the answer exactly as written: a value that needed anything (extraction from
    /// prose or a fence, repair, coercion, a choice among candidates, a duplicate key) is
    /// [`ParseError::NotExact`], with every warning it would have carried.
    pub exact: bool,
}

impl Default for ParseOptions {
    /// Repair, coercion that invents nothing, `from_text`, truncation refused.
    fn default() -> Self {
        ParseOptions {
            repair: true,
            coerce: CoercePolicy::default(),
            from_text: true,
            accept_truncated: false,
            exact: false,
        }
    }
}

impl ParseOptions {
    /// Only the answer exactly as written: no extraction, repair, coercion or prose reading;
    /// anything else is [`ParseError::NotExact`] or another error, never a warning.
    pub fn strict() -> Self {
        ParseOptions {
            repair: false,
            coerce: CoercePolicy::strict(),
            from_text: false,
            accept_truncated: false,
            exact: true,
        }
    }

    /// Everything, including the recoveries that invent or drop content (each one a warning).
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
    /// No JSON: the value was read from prose by `from_text`, or a markdown wrapper's answer was
    /// taken whole.
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

impl<T> Parsed<T> {
    /// The same reading with its value changed by `f` (written as text, converted, ...).
    ///
    /// ```
    /// use serde_json::json;
    /// use structured_runtime::{parse_value, ParseOptions, ResponseSchema};
    ///
    /// let schema = ResponseSchema::new("n", json!({"type": "object"}))?;
    /// let parsed = parse_value("{'n': 1}", &schema, &ParseOptions::default()).unwrap();
    /// let text = parsed.map(|value| value.to_string());
    /// assert_eq!(text.value, r#"{"n":1}"#);
    /// assert!(!text.warnings.is_empty()); // the single quotes
    /// # Ok::<(), structured_runtime::SchemaError>(())
    /// ```
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Parsed<U> {
        Parsed {
            value: f(self.value),
            provenance: self.provenance,
            truncated: self.truncated,
            span: self.span,
            warnings: self.warnings,
            text_report: self.text_report,
        }
    }
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
    /// A markdown wrapper's answer was not JSON: the whole answer (trimmed) is the content, or
    /// its first line the title and the rest the content; every other property is `null`.
    WholeAnswer {
        /// The property the answer (or all but its first line) went into.
        content: Pointer,
        /// The property the first line went into.
        title: Option<Pointer>,
    },
    /// The answer held no JSON: the value was read from its prose by the type's keywords and
    /// numbers (`fields` of them found there), every other field by an excerpt or a default. A
    /// type that looks for no keyword or number (its prose rules are all excerpts) is read from
    /// the text's words: `fields` counts its excerpts then.
    FromProse {
        /// Fields read from a keyword or a number in the text (from an excerpt, for a type whose
        /// prose rules are only excerpts).
        fields: usize,
    },
    /// The value came from one place in the answer, and other places held JSON too: a choice
    /// was made (the candidate that fits, else the latest).
    OtherCandidates {
        /// Byte ranges of the other candidates (at most 8).
        others: Vec<Range<usize>>,
        /// How many more places after those might hold JSON (counted, not read).
        more: usize,
    },
    /// The provider was asked with a schema it does not fully enforce: these keywords were
    /// moved into descriptions (the model is told; the value was checked for them here).
    NotEnforcedByProvider {
        /// The schema target the request was written for.
        target: crate::schema::dialect::SchemaTarget,
        /// Each node and its keywords, in the schema as sent.
        moved: Vec<crate::schema::dialect::Moved>,
    },
    /// The schema was sent with keywords the provider's engine is known to ignore, or may ignore
    /// (the value was checked for them here).
    SentNotEnforced {
        /// The schema target the request was written for.
        target: crate::schema::dialect::SchemaTarget,
        /// Each node and its keywords, in the schema as sent, with what is known of the engine.
        kept: Vec<crate::schema::dialect::Kept>,
    },
    /// The provider was sent these objects closed (no property beyond those declared), where the
    /// schema as written leaves them open: Anthropic takes closed objects only. The answer can
    /// hold only the declared properties; it is checked against the schema as written.
    ClosedByProvider {
        /// The schema target the request was written for.
        target: crate::schema::dialect::SchemaTarget,
        /// Each object closed, in the schema as sent.
        paths: Vec<Pointer>,
    },
    /// The provider was sent a grammar (llama.cpp's `grammar` field): these keywords are not
    /// written into it (the value was checked for them here), and these limits were added where
    /// the schema sets none, so a looping model ends with a closed value.
    GrammarLimits {
        /// Keywords the grammar leaves to the validator, by path in the schema.
        unenforced: Vec<crate::schema::dialect::Unenforced>,
        /// Limits the grammar added, by path in the schema.
        budgets: Vec<crate::schema::dialect::Budgeted>,
    },
    /// A field read from prose could not be used, and took its default.
    FromText {
        /// The field.
        field: Pointer,
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
            Warning::OtherCandidates { others, more } => {
                write!(f, "other JSON in the answer was not used: bytes")?;
                for (i, r) in others.iter().enumerate() {
                    let sep = if i == 0 { " " } else { ", " };
                    write!(f, "{sep}{}..{}", r.start, r.end)?;
                }
                if *more > 0 {
                    write!(f, " (and {more} more places not read)")?;
                }
                Ok(())
            }
            Warning::NotEnforcedByProvider { target, moved } => {
                write!(f, "not enforced by the provider ({target:?}), checked here:")?;
                for m in moved.iter().take(10) {
                    write!(f, " {} {}", m.path, m.keywords.join("/"))?;
                }
                if moved.len() > 10 {
                    write!(f, " and {} more", moved.len() - 10)?;
                }
                Ok(())
            }
            Warning::SentNotEnforced { target, kept } => {
                write!(f, "sent to {target:?} but not held to, checked here:")?;
                for k in kept.iter().take(10) {
                    let how = match k.enforcement {
                        crate::schema::dialect::Enforcement::Ignored => "ignored",
                        crate::schema::dialect::Enforcement::Unknown => "may be ignored",
                    };
                    write!(f, " {} {} ({how})", k.path, k.keywords.join("/"))?;
                }
                if kept.len() > 10 {
                    write!(f, " and {} more", kept.len() - 10)?;
                }
                Ok(())
            }
            Warning::ClosedByProvider { target, paths } => {
                write!(
                    f,
                    "sent to {target:?} closed, left open by the schema (only the declared properties can come back):"
                )?;
                for p in paths.iter().take(10) {
                    write!(f, " {p}")?;
                }
                if paths.len() > 10 {
                    write!(f, " and {} more", paths.len() - 10)?;
                }
                Ok(())
            }
            Warning::GrammarLimits {
                unenforced,
                budgets,
            } => {
                f.write_str("the grammar sent")?;
                if !unenforced.is_empty() {
                    f.write_str(" leaves to local checks:")?;
                    for u in unenforced.iter().take(10) {
                        write!(f, " {} {}", u.path, u.keyword)?;
                    }
                    if unenforced.len() > 10 {
                        write!(f, " and {} more", unenforced.len() - 10)?;
                    }
                    if !budgets.is_empty() {
                        f.write_str(";")?;
                    }
                }
                if !budgets.is_empty() {
                    f.write_str(" adds limits the schema does not set:")?;
                    for b in budgets.iter().take(10) {
                        write!(f, " {} {} {}", b.path, b.keyword, b.limit)?;
                    }
                    if budgets.len() > 10 {
                        write!(f, " and {} more", budgets.len() - 10)?;
                    }
                }
                Ok(())
            }
            Warning::FromProse { fields } => write!(
                f,
                "the answer holds no JSON: {fields} field(s) read from its prose"
            ),
            Warning::WholeAnswer { content, title } => match title {
                Some(title) => write!(
                    f,
                    "the answer is not JSON: its first line was taken as {title} and the rest as {content}"
                ),
                None if content.is_root() => {
                    write!(f, "the answer is not JSON: it was taken whole as the text")
                }
                None => write!(f, "the answer is not JSON: it was taken whole as {content}"),
            },
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
    /// A reading bounded in memory ([`crate::read::parts::parse_value_json`]) met JSON its
    /// schema judges only as one whole value (an `enum` of objects, branches of a `oneOf` told
    /// apart by nothing short of the whole value, ...: the module `read::parts` says which), and
    /// that JSON is longer than the reading holds whole. A value is about twenty times its text
    /// in memory; the limit bounds that ([`crate::read::parts::parse_value_json_within`] sets it).
    #[error(
        "the JSON at {at}{} is judged by this schema only as one whole value, and is longer than \
         the {limit} bytes a value is held whole to", length(.bytes)
    )]
    TooLarge {
        /// Where the value held whole starts: the root when the whole answer is judged so,
        /// else the item or member of a long list or object.
        at: Pointer,
        /// Its length as text, when it was measured before it was read (the whole answer's
        /// JSON); `None` when the reading stopped at the limit.
        bytes: Option<usize>,
        /// The most a value judged whole may take, as text.
        limit: usize,
    },
    /// The options take only the answer exactly as written ([`ParseOptions::exact`], or no
    /// repair), and reading it needed these changes.
    #[error("the answer is not exactly the JSON: {}", first_change(.warnings))]
    NotExact {
        /// Every change reading it would have made.
        warnings: Vec<Warning>,
    },
}

fn length(bytes: &Option<usize>) -> String {
    bytes.map(|b| format!(" ({b} bytes)")).unwrap_or_default()
}

fn first_change(warnings: &[Warning]) -> String {
    match warnings {
        [] => "it needs changes".to_owned(),
        [one] => one.to_string(),
        [first, rest @ ..] => format!("{first} (and {} more)", rest.len()),
    }
}

/// The options' last word: with [`ParseOptions::exact`], a value that carries any change is
/// refused with its warnings.
fn gate<T>(
    result: Result<Parsed<T>, ParseError>,
    options: &ParseOptions,
) -> Result<Parsed<T>, ParseError> {
    match result {
        Ok(parsed)
            if options.exact
                && (parsed.provenance != Provenance::Clean || !parsed.warnings.is_empty()) =>
        {
            Err(ParseError::NotExact {
                warnings: parsed.warnings,
            })
        }
        other => other,
    }
}

fn prose_note(from_text: &Option<FromTextError>) -> String {
    match from_text {
        Some(e) => format!("; reading prose failed too: {e}"),
        None => String::new(),
    }
}

/// What a provider gave as the structured answer: text (an answer's content, a tool call's
/// arguments sent as a string), or a value the provider already parsed (a tool call's arguments
/// sent as an object). A value is read where it is, never printed and parsed again.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Text that should hold the JSON (or, prompt-guided, prose around it).
    Text(String),
    /// JSON the provider sent as a value.
    Json(Value),
}

impl Answer {
    /// The answer as text: the text itself, or the value written as JSON.
    pub fn to_text(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Answer::Text(t) => std::borrow::Cow::Borrowed(t),
            Answer::Json(v) => std::borrow::Cow::Owned(v.to_string()),
        }
    }
}

/// Reads `T` from a model's answer: see the [crate documentation](crate#reading-an-answer-yourself)
/// for the steps. The shorthand for `Reading::new(mode).typed(text)` ([`Reading`]).
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
    Reading::new(mode).typed(text)
}

/// `T` read from an answer's text through `target`: its JSON where it has some, else the
/// type's prose reader.
fn typed_from_text<T: StructuredOutput>(
    target: &impl Target<Out = T>,
    text: &str,
    mode: StructuredOutputMode,
    options: &ParseOptions,
) -> Result<Parsed<T>, ParseError> {
    let result = match read_text(target, text, mode, options) {
        Read::Done(result) => result,
        Read::NoJson(warnings) => prose::<T>(text, options, warnings),
    };
    gate(result, options)
}

/// The pipeline for a schema given at run time: the value fitted to `schema` and checked against
/// it by its validator of record ([`ResponseSchema::check_instance`]): every keyword counts. No
/// prose reading: a schema has no keywords to look for. The shorthand for
/// `Reading::new(StructuredOutputMode::None).options(options).value(text, schema)`
/// ([`Reading`]).
///
/// ```
/// use serde_json::json;
/// use structured_runtime::{parse_value, ParseOptions, Provenance, ResponseSchema};
///
/// let schema = ResponseSchema::new("person", json!({
///     "type": "object",
///     "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
///     "required": ["name", "age"],
///     "additionalProperties": false
/// }))?;
/// let parsed = parse_value("Sure: {name: 'Ada', age: '36'}", &schema, &ParseOptions::default()).unwrap();
/// assert_eq!(parsed.value, json!({"name": "Ada", "age": 36}));
/// assert_eq!(parsed.provenance, Provenance::Recovered);
/// assert!(parse_value("{name: 'Ada', age: 36}", &schema, &ParseOptions::strict()).is_err());
/// # Ok::<(), structured_runtime::SchemaError>(())
/// ```
pub fn parse_value(
    text: &str,
    schema: &ResponseSchema,
    options: &ParseOptions,
) -> Result<Parsed<Value>, ParseError> {
    Reading::new(StructuredOutputMode::None)
        .options(options)
        .value(text, schema)
}

/// A value read from an answer's text through `target`: its JSON, or `NotFound` (a value has no
/// prose reader).
pub(crate) fn value_from_json_text<G: Target>(
    target: &G,
    text: &str,
    mode: StructuredOutputMode,
    options: &ParseOptions,
) -> Result<Parsed<G::Out>, ParseError> {
    let result = match read_text(target, text, mode, options) {
        Read::Done(result) => result,
        Read::NoJson(_) => Err(ParseError::NotFound {
            len: text.len(),
            from_text: None,
        }),
    };
    gate(result, options)
}

/// An answer as [`Reading`] takes it: text, or a value a provider already parsed. Made from a
/// `&str`, a `&String`, an [`&Answer`](Answer) or a `&serde_json::Value`.
#[derive(Debug, Clone, Copy)]
pub enum AnswerRef<'a> {
    /// Text that should hold the JSON (or, prompt-guided, prose around it).
    Text(&'a str),
    /// JSON the provider sent as a value: read where it is.
    Json(&'a Value),
}

impl<'a> From<&'a str> for AnswerRef<'a> {
    fn from(text: &'a str) -> Self {
        AnswerRef::Text(text)
    }
}

impl<'a> From<&'a String> for AnswerRef<'a> {
    fn from(text: &'a String) -> Self {
        AnswerRef::Text(text)
    }
}

impl<'a> From<&'a Value> for AnswerRef<'a> {
    fn from(value: &'a Value) -> Self {
        AnswerRef::Json(value)
    }
}

impl<'a> From<&'a Answer> for AnswerRef<'a> {
    fn from(answer: &'a Answer) -> Self {
        match answer {
            Answer::Text(text) => AnswerRef::Text(text),
            Answer::Json(value) => AnswerRef::Json(value),
        }
    }
}

/// How one answer is read, set up step by step and applied to a derived type
/// ([`Reading::typed`]) or a schema given at run time ([`Reading::value`]): the one way to read
/// an answer yourself, of which [`parse_response`] and [`parse_value`] are the shorthands.
///
/// | what | how |
/// |---|---|
/// | the mode the answer was asked in (what it promised) | [`Reading::new`] |
/// | how much may be repaired and fitted | [`Reading::options`] (else [`ParseOptions::default`]) |
/// | the shape the schema was sent in | [`Reading::reshape`] ([`ResponseSchema::reshape`] for the target) |
///
/// The answer is text (`&str`, `&String`) or a value a provider already parsed
/// (`&serde_json::Value`, or an [`&Answer`](Answer) of either kind), read where it is.
///
/// ```
/// use serde_json::json;
/// use structured_runtime::read::Reading;
/// use structured_runtime::{ParseOptions, Provenance, ResponseSchema, StructuredOutput, StructuredOutputMode};
///
/// #[derive(StructuredOutput, serde::Deserialize, Debug, PartialEq)]
/// struct Verdict {
///     #[enum_values("pass", "fail")]
///     outcome: String,
/// }
///
/// // Text a tool call carried, held to what strict mode allows.
/// let strict = ParseOptions::strict();
/// let reading = Reading::new(StructuredOutputMode::ToolUseWorkaround).options(&strict);
/// let verdict = reading.typed::<Verdict>(r#"{"outcome": "pass"}"#).unwrap();
/// assert_eq!((verdict.value.outcome.as_str(), verdict.provenance), ("pass", Provenance::Clean));
/// assert!(reading.typed::<Verdict>(r#"{"outcome": "Pass"}"#).is_err());
///
/// // A value a provider sent already parsed, for a schema given at run time.
/// let schema = ResponseSchema::new("verdict", json!({
///     "type": "object", "properties": {"outcome": {"enum": ["pass", "fail"]}},
///     "required": ["outcome"], "additionalProperties": false
/// }))?;
/// let args = json!({"outcome": "fail"});
/// let value = Reading::new(StructuredOutputMode::ToolUseWorkaround).value(&args, &schema).unwrap();
/// assert_eq!(value.value, args);
/// # Ok::<(), structured_runtime::SchemaError>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Reading<'a> {
    mode: StructuredOutputMode,
    options: Option<&'a ParseOptions>,
    reshape: Option<&'a Reshape>,
}

impl<'a> Reading<'a> {
    /// A reading of an answer given in `mode`: its promise decides what counts as clean (an
    /// enforced schema's answer must be exact JSON; a prompt-guided one may be found in prose).
    pub fn new(mode: StructuredOutputMode) -> Self {
        Reading {
            mode,
            options: None,
            reshape: None,
        }
    }

    /// What may be repaired and fitted, and what is refused ([`ParseOptions::default`] without
    /// this).
    pub fn options(mut self, options: &'a ParseOptions) -> Self {
        self.options = Some(options);
        self
    }

    /// The shape the request's schema was sent in ([`Reshape`]: what
    /// [`ResponseSchema::reshape`] says for the target it was lowered for). The answer is read
    /// back into the schema's own shape before it is checked, so a map sent as a list of entries
    /// is a map again and a wrapped root is unwrapped; the provenance is that of the answer as
    /// written in the shape asked for.
    pub fn reshape(mut self, reshape: &'a Reshape) -> Self {
        self.reshape = Some(reshape).filter(|r| !r.is_empty());
        self
    }

    /// Reads a `T`: see the [crate documentation](crate#reading-an-answer-yourself) for the
    /// steps. Text goes through the JSON in it, else the type's prose reader; a value is read
    /// where it is (clean when it fits as given, else fitted as the options allow).
    pub fn typed<'x, T: StructuredOutput>(
        &self,
        answer: impl Into<AnswerRef<'x>>,
    ) -> Result<Parsed<T>, ParseError> {
        let (default, mode) = (ParseOptions::default(), self.mode);
        let options = self.options.unwrap_or(&default);
        match (answer.into(), self.reshape) {
            (AnswerRef::Text(text), None) => {
                let target = Typed::<T>::new();
                match T::schema().markdown() {
                    Some(markdown) => gate(
                        read_markdown(&target, markdown, text, mode, options),
                        options,
                    ),
                    None => typed_from_text(&target, text, mode, options),
                }
            }
            (AnswerRef::Json(value), None) => {
                gate(read_json(&Typed::<T>::new(), value, mode, options), options)
            }
            (answer, Some(reshape)) => {
                let target = Reshaped {
                    inner: Typed::<T>::new(),
                    reshape,
                };
                match answer {
                    AnswerRef::Text(text) => typed_from_text(&target, text, mode, options),
                    AnswerRef::Json(value) => {
                        gate(read_json(&target, value, mode, options), options)
                    }
                }
            }
        }
    }

    /// Reads a value valid against `schema`, checked by its validator of record
    /// ([`ResponseSchema::check_instance`]): every keyword counts. A schema has no prose reader.
    pub fn value<'x>(
        &self,
        answer: impl Into<AnswerRef<'x>>,
        schema: &ResponseSchema,
    ) -> Result<Parsed<Value>, ParseError> {
        let (default, mode) = (ParseOptions::default(), self.mode);
        let options = self.options.unwrap_or(&default);
        match (answer.into(), self.reshape) {
            (AnswerRef::Text(text), None) => match schema.markdown() {
                Some(markdown) => gate(
                    read_markdown(&Untyped(schema), markdown, text, mode, options),
                    options,
                ),
                None => value_from_json_text(&Untyped(schema), text, mode, options),
            },
            (AnswerRef::Json(value), None) => {
                gate(read_json(&Untyped(schema), value, mode, options), options)
            }
            (answer, Some(reshape)) => {
                let target = Reshaped {
                    inner: Untyped(schema),
                    reshape,
                };
                match answer {
                    AnswerRef::Text(text) => value_from_json_text(&target, text, mode, options),
                    AnswerRef::Json(value) => {
                        gate(read_json(&target, value, mode, options), options)
                    }
                }
            }
        }
    }
}

/// What an answer is read into: a derived type (checked by its compiled rules) or a value
/// (checked by a schema's validator of record). The one goal of every reading and every run:
/// the pipeline reads candidates with the first methods, and a run reads each answer with
/// [`Target::parse_answer`] and falls back with the last ones.
pub(crate) trait Target {
    type Out;
    /// The schema coercion fits values to.
    fn schema(&self) -> &ResponseSchema;
    /// Whether that schema's root describes an object.
    fn object_root(&self) -> bool;
    /// The value from exactly this JSON, valid, or `None` without working out why.
    fn exact(&self, json: &str) -> Option<Self::Out>;
    /// The value from exactly this JSON, or why not (for a provider that promised exact JSON).
    fn explained(&self, json: &str) -> Result<Self::Out, String>;
    /// [`Target::explained`] for a value already parsed exactly, read where it is.
    fn explained_value(&self, value: &Value) -> Result<Self::Out, String>;
    /// [`Target::exact`] for a value already parsed, read where it is.
    fn exact_value(&self, value: &Value) -> Option<Self::Out>;
    /// The value from a parsed value, or the value back with every violation.
    fn accept(&self, value: Value) -> Result<Self::Out, (Value, Violations)>;
    /// What reading `value` (before [`Target::accept`]) will change about its shape: a value
    /// written in the schema's own shape where another was sent ([`Reshaped`]).
    fn shape_recoveries(&self, _value: &Value) -> Vec<Recovery> {
        Vec::new()
    }
    /// A whole answer (text, or a tool call's value) read as the options allow, in the shape
    /// `reshape` says it was sent in: what a run reads each answer with.
    fn parse_answer(
        &self,
        answer: &Answer,
        mode: StructuredOutputMode,
        options: &ParseOptions,
        reshape: &Reshape,
    ) -> Result<Parsed<Self::Out>, ParseError>;
    /// A value taken without its rules (validation off), when it has the right shape.
    fn unchecked(&self, value: &Value) -> Option<Self::Out>;
    /// A value that keeps every rule.
    fn checked(&self, value: &Value) -> Option<Self::Out>;
    /// The value read from prose by the type's keywords, with a warning per field that took
    /// its declared default; `None` without a prose reader.
    fn read_prose(&self, _text: &str) -> Option<(Self::Out, Vec<Warning>)> {
        None
    }
    /// Whether prose can be read at all.
    fn reads_prose(&self) -> bool {
        false
    }
    /// One candidate read, fitted and judged: JSON wrong only in its single quotes and trailing
    /// commas read from its mended text as exact JSON is ([`judge_common`]: a value `exact`
    /// takes is one the whole reading takes with no recovery), else its JSON repaired into a
    /// whole `Value`; for every target but the one that reads a value in parts (`read::parts`).
    fn judge<'c, 'a>(
        &self,
        candidate: &'c Candidate<'a>,
        options: &ParseOptions,
    ) -> Verdict<'c, 'a, Self::Out>
    where
        Self: Sized,
    {
        judge_common(self, candidate, options)
    }
}

pub(crate) struct Typed<T> {
    /// The type's schema describes an object (every derived struct).
    object_root: bool,
    _type: PhantomData<fn() -> T>,
}

impl<T: StructuredOutput> Typed<T> {
    pub(crate) fn new() -> Self {
        Typed {
            object_root: object_root(T::schema()),
            _type: PhantomData,
        }
    }
}

impl<T: StructuredOutput> Target for Typed<T> {
    type Out = T;
    fn schema(&self) -> &ResponseSchema {
        T::schema()
    }
    fn object_root(&self) -> bool {
        self.object_root
    }
    fn exact(&self, json: &str) -> Option<T> {
        // A derived struct is read from an object only, and an object's first token is a
        // double-quoted key or its end: anything else fails there, so the parser is not
        // started for it.
        if self.object_root && !object_opening(json) {
            return None;
        }
        // A type whose reading cannot vouch for the value as written is read once as a
        // `Value` and judged from it.
        if T::schema().needs_schema_check() {
            let (value, long_float) = strict_de::value_from_str(json).ok()?;
            if long_float.is_some() {
                return None;
            }
            return self.exact_value(&value);
        }
        let (value, noted) = strict_de::try_from_str_noting_floats::<T>(json)?;
        // A float only the text can vouch for: a number read differently is a repair, found
        // the careful way. A part the strict pass could not follow is judged the careful way
        // too (from a `Value`).
        if noted.loose || noted.long_float().is_some() {
            return None;
        }
        value.validate().is_ok().then_some(value)
    }
    fn explained(&self, json: &str) -> Result<T, String> {
        from_json(json, T::schema()).map_err(|e| e.to_string())
    }
    fn explained_value(&self, value: &Value) -> Result<T, String> {
        from_value::<T>(value, T::schema()).map_err(|violations| violations.to_string())
    }
    fn exact_value(&self, value: &Value) -> Option<T> {
        let (out, noted) = strict_de::from_value::<T>(value).ok()?;
        let fits = out.validate().is_ok()
            && crate::read::from_json::schema_check(T::schema(), value, noted).is_ok();
        fits.then_some(out)
    }
    fn accept(&self, value: Value) -> Result<T, (Value, Violations)> {
        match from_value::<T>(&value, T::schema()) {
            Ok(out) => Ok(out),
            Err(violations) => Err((value, violations)),
        }
    }
    fn parse_answer(
        &self,
        answer: &Answer,
        mode: StructuredOutputMode,
        options: &ParseOptions,
        reshape: &Reshape,
    ) -> Result<Parsed<T>, ParseError> {
        Reading::new(mode)
            .options(options)
            .reshape(reshape)
            .typed(answer)
    }
    fn unchecked(&self, value: &Value) -> Option<T> {
        T::deserialize(value).ok()
    }
    fn checked(&self, value: &Value) -> Option<T> {
        T::from_value(value).ok()
    }
    fn read_prose(&self, text: &str) -> Option<(T, Vec<Warning>)> {
        let read = T::from_text(text).ok()?;
        let defaulted = read
            .report
            .fields()
            .iter()
            .filter_map(|f| match &f.source {
                TextSource::Default { reason } => Some(Warning::FromText {
                    field: f.field.clone(),
                    reason: format!(
                        "not read from the answer ({reason:?}); its declared default was used"
                    ),
                }),
                _ => None,
            })
            .collect();
        Some((read.value, defaulted))
    }
    fn reads_prose(&self) -> bool {
        // A markdown wrapper takes any text whole; another type reads prose by its keywords.
        T::schema().markdown().is_some()
            || !matches!(T::from_text(""), Err(FromTextError::NotSupported { .. }))
    }
}

pub(crate) struct Untyped<'s>(pub(crate) &'s ResponseSchema);

impl Untyped<'_> {
    /// The validator of record's verdict, without working out why.
    fn is_valid(&self, value: &Value) -> bool {
        self.0
            .compiled()
            .is_ok_and(|compiled| compiled.is_valid(value))
    }
}

impl Target for Untyped<'_> {
    type Out = Value;
    fn schema(&self) -> &ResponseSchema {
        self.0
    }
    fn object_root(&self) -> bool {
        object_root(self.0)
    }
    fn exact(&self, json: &str) -> Option<Value> {
        let (value, long_float) = strict_de::value_from_str(json).ok()?;
        if long_float.is_some() {
            return None;
        }
        self.is_valid(&value).then_some(value)
    }
    fn explained(&self, json: &str) -> Result<Value, String> {
        let value = value_as_written(json)?;
        match self.0.check_instance(&value) {
            Ok(()) => Ok(value),
            Err(violations) => Err(violations.to_string()),
        }
    }
    fn explained_value(&self, value: &Value) -> Result<Value, String> {
        match self.0.check_instance(value) {
            Ok(()) => Ok(value.clone()),
            Err(violations) => Err(violations.to_string()),
        }
    }
    fn exact_value(&self, value: &Value) -> Option<Value> {
        self.is_valid(value).then(|| value.clone())
    }
    fn accept(&self, value: Value) -> Result<Value, (Value, Violations)> {
        match self.0.check_instance(&value) {
            Ok(()) => Ok(value),
            Err(violations) => Err((value, violations)),
        }
    }
    fn parse_answer(
        &self,
        answer: &Answer,
        mode: StructuredOutputMode,
        options: &ParseOptions,
        reshape: &Reshape,
    ) -> Result<Parsed<Value>, ParseError> {
        Reading::new(mode)
            .options(options)
            .reshape(reshape)
            .value(answer, self.0)
    }
    fn unchecked(&self, value: &Value) -> Option<Value> {
        Some(value.clone())
    }
    fn checked(&self, value: &Value) -> Option<Value> {
        self.0.check_instance(value).is_ok().then(|| value.clone())
    }
    /// A markdown wrapper's schema takes any text whole; another schema has no prose reader.
    fn reads_prose(&self) -> bool {
        self.0.markdown().is_some()
    }
}

/// A target read through the shape its request asked for ([`Reshape`]): every value is read
/// back into the schema's own shape first, then given to the target.
struct Reshaped<'r, G> {
    inner: G,
    reshape: &'r Reshape,
}

impl<G: Target> Reshaped<'_, G> {
    fn back(&self, value: Value) -> Result<Value, (Value, Violations)> {
        self.reshape.read_back(self.inner.schema().schema(), value)
    }

    /// The value read back, only when it was written in the shape sent.
    fn back_as_sent(&self, value: Value) -> Result<Value, String> {
        let (back, as_written) = self
            .reshape
            .read_back_noting(self.inner.schema().schema(), value);
        if let Some(at) = as_written.first() {
            return Err(format!("{at}: {}", RecoveryKind::NotInSentShape));
        }
        back.map_err(|(_, violations)| violations.to_string())
    }
}

impl<G: Target> Target for Reshaped<'_, G> {
    type Out = G::Out;
    fn schema(&self) -> &ResponseSchema {
        self.inner.schema()
    }
    fn object_root(&self) -> bool {
        self.reshape.root_key.is_some() || self.inner.object_root()
    }
    fn exact(&self, json: &str) -> Option<G::Out> {
        let (value, long_float) = strict_de::value_from_str(json).ok()?;
        if long_float.is_some() {
            return None;
        }
        self.inner.exact_value(&self.back_as_sent(value).ok()?)
    }
    fn explained(&self, json: &str) -> Result<G::Out, String> {
        let value = self.back_as_sent(value_as_written(json)?)?;
        self.inner.explained_value(&value)
    }
    fn explained_value(&self, value: &Value) -> Result<G::Out, String> {
        let value = self.back_as_sent(value.clone())?;
        self.inner.explained_value(&value)
    }
    fn exact_value(&self, value: &Value) -> Option<G::Out> {
        self.inner
            .exact_value(&self.back_as_sent(value.clone()).ok()?)
    }
    /// On refusal the value comes back in the schema's shape, so coercion fits it to that
    /// schema; reading it back again leaves it as it is.
    fn accept(&self, value: Value) -> Result<G::Out, (Value, Violations)> {
        self.inner.accept(self.back(value)?)
    }
    fn shape_recoveries(&self, value: &Value) -> Vec<Recovery> {
        let (_, as_written) = self
            .reshape
            .read_back_noting(self.inner.schema().schema(), value.clone());
        as_written
            .into_iter()
            .map(|path| Recovery {
                kind: RecoveryKind::NotInSentShape,
                was: path
                    .get(value)
                    .map(crate::schema::validate::preview_json)
                    .unwrap_or_default(),
                path,
            })
            .collect()
    }
    /// An answer in the shape sent is read back from it: `reshape` is this target's own.
    fn parse_answer(
        &self,
        answer: &Answer,
        mode: StructuredOutputMode,
        options: &ParseOptions,
        _reshape: &Reshape,
    ) -> Result<Parsed<G::Out>, ParseError> {
        self.inner.parse_answer(answer, mode, options, self.reshape)
    }
    fn unchecked(&self, value: &Value) -> Option<G::Out> {
        self.inner.unchecked(value)
    }
    fn checked(&self, value: &Value) -> Option<G::Out> {
        self.inner.checked(value)
    }
}

/// The numbers the repairer kept as their text because no 64-bit float holds them (`1e309`),
/// looked up once per candidate: whole numbers by a set, cut ones (longer than a repair quotes)
/// by their quoted start.
pub(crate) struct KeptNumbers<'r> {
    whole: std::collections::HashSet<&'r str>,
    cut: std::collections::HashSet<&'r str>,
    cut_lengths: Vec<usize>,
}

impl<'r> KeptNumbers<'r> {
    /// The numbers `repairs` kept as text, when the policy does not take numbers as strings
    /// and there are any.
    pub(crate) fn of(repairs: &'r [Repair], policy: &CoercePolicy) -> Option<KeptNumbers<'r>> {
        use crate::read::repair::{RepairKind, MAX_FOUND};
        if policy.scalars_to_strings {
            return None;
        }
        let mut kept = KeptNumbers {
            whole: Default::default(),
            cut: Default::default(),
            cut_lengths: Vec::new(),
        };
        for text in repairs
            .iter()
            .filter(|r| r.kind == RepairKind::NumberOutOfRange)
            .filter_map(|r| r.found.as_deref())
        {
            match text
                .strip_suffix("...")
                .filter(|t| t.len() >= MAX_FOUND - 3)
            {
                Some(start) => {
                    kept.cut.insert(start);
                    if !kept.cut_lengths.contains(&start.len()) {
                        kept.cut_lengths.push(start.len());
                    }
                }
                None => {
                    kept.whole.insert(text);
                }
            }
        }
        (!kept.whole.is_empty() || !kept.cut.is_empty()).then_some(kept)
    }

    fn is_kept(&self, s: &str) -> bool {
        self.whole.contains(s)
            || self
                .cut_lengths
                .iter()
                .any(|&n| s.len() > n && s.get(..n).is_some_and(|p| self.cut.contains(p)))
    }

    /// Where `value` (at `base` in the answer, its schema `node`) holds one of these numbers as
    /// a string at a place whose schema asks for a string: each a violation, since the model
    /// wrote a number there and only the change of type made it fit. (Where the schema says
    /// nothing of the type, the text is the only way to keep the number, with its warning.)
    pub(crate) fn violations(
        &self,
        value: &Value,
        node: Node<'_>,
        base: &Pointer,
    ) -> Vec<Violation> {
        let mut out = Vec::new();
        let mut stack = vec![(Pointer::root(), value)];
        while let Some((at, v)) = stack.pop() {
            match v {
                Value::String(s) if self.is_kept(s) && asks_for_string(node, &at) => {
                    out.push(Violation {
                        path: base.join(&at),
                        rule: Rule::Type,
                        expected: "a value as written: a number no 64-bit float holds is not read as a string unless the policy writes numbers as strings".into(),
                        found: format!("the number {}", crate::schema::validate::preview_str(s)),
                    });
                }
                Value::Array(items) => {
                    stack.extend(items.iter().enumerate().map(|(i, v)| (at.index(i), v)))
                }
                Value::Object(map) => stack.extend(map.iter().map(|(k, v)| (at.key(k), v))),
                _ => {}
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }
}

/// Whether the schema at `at` (a pointer into a value) names `string` among its types, in a
/// branch of an `anyOf` or directly.
fn asks_for_string(root: Node<'_>, at: &Pointer) -> bool {
    let mut nodes = vec![root];
    for segment in at.segments() {
        let mut next = Vec::new();
        for node in nodes {
            let node = node.target();
            if node.too_deep() {
                continue;
            }
            let branches: Vec<Node<'_>> = match node.any_of() {
                Some(b) => b.map(Node::target).collect(),
                None => vec![node],
            };
            for b in branches {
                let by_key = b.member(&segment);
                let by_index = segment.parse::<usize>().ok().and_then(|i| b.item(i));
                next.extend(by_key.or(by_index));
            }
        }
        // Bounded: a value path is at most as deep as the reader allows, and each step keeps
        // at most the branches of one node.
        next.truncate(64);
        nodes = next;
    }
    nodes.into_iter().any(|n| {
        let n = n.target();
        n.types().contains(JsonType::String)
            || n.any_of()
                .is_some_and(|mut b| b.any(|b| b.target().types().contains(JsonType::String)))
    })
}

/// Whether the text around `span` holds anything a repair might read as a value of its own: a
/// digit, a quote, or a word that is a literal (`true`, `None`, `NaN`, ...).
fn prose_reads_as_values(text: &str, span: &Range<usize>) -> bool {
    let outside = [
        text.get(..span.start).unwrap_or_default(),
        text.get(span.end..).unwrap_or_default(),
    ];
    outside.iter().any(|prose| {
        prose.chars().any(|c| {
            c.is_ascii_digit()
                || matches!(
                    c,
                    '"' | '\'' | '`' | '\u{201c}' | '\u{201d}' | '\u{2018}' | '\u{2019}'
                )
        }) || prose
            .split(|c: char| !c.is_alphanumeric())
            .any(crate::read::repair::is_literal_word)
    })
}

/// Whether `text` is exactly one JSON string literal.
fn is_json_string(text: &str) -> bool {
    text.len() >= 2
        && text.starts_with('"')
        && text.ends_with('"')
        && serde_json::from_str::<String>(text).is_ok()
}

/// Whether `schema`'s root describes an object, and only an object.
pub(crate) fn object_root(schema: &ResponseSchema) -> bool {
    Node::root(schema.schema())
        .types()
        .is_only(JsonType::Object)
}

/// Whether `json` opens like a JSON object: `{`, then `"` or `}` after any whitespace.
fn object_opening(json: &str) -> bool {
    let Some(rest) = json.strip_prefix('{') else {
        return false;
    };
    matches!(
        rest.trim_start_matches([' ', '\t', '\n', '\r'])
            .as_bytes()
            .first(),
        Some(b'"' | b'}')
    )
}

/// How reading the text ended: a result, or no JSON at all (the prose reader's turn).
enum Read<T> {
    Done(Result<Parsed<T>, ParseError>),
    NoJson(Vec<Warning>),
}

fn read_text<G: Target>(
    target: &G,
    text: &str,
    mode: StructuredOutputMode,
    options: &ParseOptions,
) -> Read<G::Out> {
    let mut warnings = Vec::new();
    let trimmed = text.trim();
    if mode.expects_exact_json() {
        match target.explained(trimmed) {
            Ok(value) => return Read::Done(Ok(clean(value, text))),
            Err(reason) => warnings.push(Warning::NotAsEnforced { reason }),
        }
    } else if let Some(value) = target.exact(trimmed) {
        // No reason is needed when the mode promised nothing, so none is worked out.
        return Read::Done(Ok(clean(value, text)));
    }
    if is_json_string(trimmed) {
        // A JSON string is a string: read as one (and refused when the schema wants another
        // kind of value), never mined for brackets inside it (`"[::1]"` is not the list `[1]`).
        let whole = Candidate {
            text,
            span: 0..text.len(),
            source: Source::Whole,
        };
        return best_candidate(target, &[whole], options, warnings);
    }
    let spans = scan(text);
    // As written, inside the answer: the candidate ending last in the text that is exact JSON
    // for the target. Refusals are not explained here (that is what costs), only counted out.
    if let Some((value, candidate)) = last_exact(&spans, |json| target.exact(json)) {
        warnings.push(extracted(&candidate));
        push_others(&mut warnings, &spans, &candidate.span);
        return Read::Done(Ok(done(value, Provenance::Extracted, &candidate, warnings)));
    }
    if let Some(span) = spans.only_span().filter(|_| target.object_root()) {
        // One balanced span and no bracket outside it: the whole text repairs to the span's
        // value with as many changes or more, or to something that is not an object. When the
        // span gives a valid value, the whole text cannot win, so it is not repaired at all;
        // nor when the prose around it holds nothing a repair could read as a value (then the
        // whole text reads as the span does, and a second value of a large answer is not built).
        match best_candidate(
            target,
            std::slice::from_ref(&span),
            options,
            warnings.clone(),
        ) {
            Read::Done(Ok(parsed)) => return Read::Done(Ok(parsed)),
            done @ Read::Done(_) if !prose_reads_as_values(text, &span.span) => return done,
            _ => {}
        }
    }
    let mut read = best_candidate(target, &spans.candidates(), options, warnings);
    if let Read::Done(Ok(parsed)) = &mut read {
        push_others(&mut parsed.warnings, &spans, &parsed.span);
    }
    read
}

/// The warning that other candidates held JSON, when they did.
fn push_others(warnings: &mut Vec<Warning>, spans: &Spans<'_>, chosen: &Range<usize>) {
    let (others, more) = spans.others(chosen);
    if !others.is_empty() {
        warnings.push(Warning::OtherCandidates { others, more });
    }
}

/// A value the provider sent already parsed: taken as it is when it fits (read where it is, not
/// copied), else fitted, on a copy, by coercion as the options allow.
fn read_json<G: Target>(
    target: &G,
    value: &Value,
    mode: StructuredOutputMode,
    options: &ParseOptions,
) -> Result<Parsed<G::Out>, ParseError> {
    if let Some(out) = target.exact_value(value) {
        return Ok(clean(out, ""));
    }
    let shape = target.shape_recoveries(value);
    let (mut value, violations) = match target.accept(value.clone()) {
        Ok(out) if shape.is_empty() => return Ok(clean(out, "")),
        Ok(out) => {
            return Ok(Parsed {
                value: out,
                provenance: Provenance::Recovered,
                truncated: false,
                span: 0..0,
                warnings: shape.into_iter().map(Warning::Recovery).collect(),
                text_report: None,
            })
        }
        Err(refused) => refused,
    };
    let mut warnings = Vec::new();
    if mode.expects_exact_json() {
        warnings.push(Warning::NotAsEnforced {
            reason: violations.to_string(),
        });
    }
    let recoveries = coerce(&mut value, target.schema(), &options.coerce);
    let (value, violations) = if recoveries.is_empty() {
        (value, violations)
    } else {
        match target.accept(value) {
            Ok(out) => {
                warnings.extend(recoveries.into_iter().map(Warning::Recovery));
                return Ok(Parsed {
                    value: out,
                    provenance: Provenance::Recovered,
                    truncated: false,
                    span: 0..0,
                    warnings,
                    text_report: None,
                });
            }
            Err(refused) => refused,
        }
    };
    warnings.extend(recoveries.into_iter().map(Warning::Recovery));
    Err(ParseError::Invalid {
        violations,
        value,
        warnings,
    })
}

/// One candidate carried through repair and coercion.
pub(crate) struct Attempt<'c, 'a> {
    pub(crate) candidate: &'c Candidate<'a>,
    pub(crate) repairs: Vec<Repair>,
    pub(crate) truncated: bool,
    pub(crate) recoveries: Vec<Recovery>,
    /// A truncated candidate's value as repaired, before coercion changed it.
    pub(crate) partial: Option<Value>,
}

impl Attempt<'_, '_> {
    pub(crate) fn cost(&self) -> usize {
        let repairs = self
            .repairs
            .iter()
            .filter(|r| !r.kind.is_extraction())
            .count();
        repairs + if self.truncated { 1000 } else { 0 } + self.recoveries.len()
    }

    /// Every warning of the attempt after `warnings`, its repairs and recoveries moved out
    /// (not copied: an answer may hold hundreds of thousands). Ask anything of them first.
    fn take_warnings(&mut self, mut warnings: Vec<Warning>) -> Vec<Warning> {
        warnings.reserve(self.repairs.len() + self.recoveries.len() + 2);
        let offset = self.candidate.span.start;
        let around = self.candidate.source != Source::Whole
            || self.repairs.iter().any(|r| r.kind.is_extraction());
        if around {
            warnings.push(extracted(self.candidate));
        }
        warnings.extend(
            std::mem::take(&mut self.repairs)
                .into_iter()
                .filter(|r| !r.kind.is_extraction())
                .map(|r| {
                    Warning::Repair(Repair {
                        at: r.at + offset,
                        ..r
                    })
                }),
        );
        warnings.extend(
            std::mem::take(&mut self.recoveries)
                .into_iter()
                .map(Warning::Recovery),
        );
        if self.truncated {
            warnings.push(Warning::Truncated);
        }
        warnings
    }

    fn provenance(&self) -> Provenance {
        let extracted_only = self.repairs.iter().all(|r| r.kind.is_extraction());
        if !self.recoveries.is_empty() {
            Provenance::Recovered
        } else if !extracted_only {
            Provenance::Repaired
        } else if self.candidate.source == Source::Whole && self.repairs.is_empty() {
            Provenance::Clean
        } else {
            Provenance::Extracted
        }
    }
}

/// An attempt's rank for the selector: every valid value before every invalid one; among valid
/// values the fewest changes; among invalid ones a complete answer first, then the fewest
/// violations, then the fewest changes.
pub(crate) type Rank = (bool, bool, usize, usize);

/// Why a candidate gave no value to judge.
pub(crate) enum Unjudged {
    /// Only repair reads it and repair is off: the changes it would have needed.
    Refused(Vec<Warning>),
    /// Nested deeper than the reader goes.
    TooDeep(RepairError),
    /// Judged only whole, and longer than a value is held whole to (what
    /// [`ParseError::TooLarge`] says).
    TooLarge {
        at: Pointer,
        bytes: Option<usize>,
        limit: usize,
    },
    /// No JSON in it.
    Unread,
}

/// What judging one candidate gave: its rank among the candidates and what it read, or why
/// there was nothing to judge.
pub(crate) type Verdict<'c, 'a, T> = Result<(Rank, Judged<'c, 'a, T>), Unjudged>;

/// The candidate's JSON as `repair` reads it, when the options allow what it took (without
/// repair, only a candidate read with no change to the value itself: text around it may be
/// dropped); else the verdict that says why not.
pub(crate) fn repaired_as_allowed<'t, V>(
    candidate: &Candidate<'t>,
    options: &ParseOptions,
    repair: impl FnOnce(&'t str) -> Result<Repaired<V>, RepairError>,
) -> Result<Repaired<V>, Unjudged> {
    match repair(candidate.text) {
        Ok(r) if options.repair || r.is_extracted_only() => Ok(r),
        Ok(r) => {
            let offset = candidate.span.start;
            let changes = r.repairs.into_iter().filter(|r| !r.kind.is_extraction());
            Err(Unjudged::Refused(
                changes
                    .map(|r| {
                        Warning::Repair(Repair {
                            at: r.at + offset,
                            ..r
                        })
                    })
                    .collect(),
            ))
        }
        Err(e @ RepairError::TooDeep { .. }) => Err(Unjudged::TooDeep(e)),
        Err(_) => Err(Unjudged::Unread),
    }
}

/// One candidate read, fitted and judged by `target` (what [`Target::judge`] does for every
/// target but the one reading in parts, and what that one does with a candidate it holds whole).
///
/// A candidate that is JSON but for single quotes and trailing commas ([`repair_common`]) is read
/// from its mended text as the target reads exact JSON, when repair is allowed and the value is
/// valid as mended: no `Value` built. Any other candidate is judged by [`judge_value`] (with the
/// common pass's answer, not worked out again), which reads it to the same value with the same
/// repairs, and fits what does not fit.
pub(crate) fn judge_common<'c, 'a, G: Target>(
    target: &G,
    candidate: &'c Candidate<'a>,
    options: &ParseOptions,
) -> Verdict<'c, 'a, G::Out> {
    let common = options
        .repair
        .then(|| repair_common(candidate.text))
        .flatten();
    let common = match common {
        Some(mended) => match target.exact(&mended.value) {
            Some(out) => {
                let attempt = Attempt {
                    candidate,
                    repairs: mended.repairs,
                    truncated: false,
                    recoveries: Vec::new(),
                    partial: None,
                };
                return valid(attempt, out);
            }
            None => Some(mended),
        },
        None => None,
    };
    judge_value(target, candidate, options, |text| repair_then(text, common))
}

/// One candidate read whole into a `Value` by `repair`, fitted and judged by `target`.
fn judge_value<'c, 'a, G: Target>(
    target: &G,
    candidate: &'c Candidate<'a>,
    options: &ParseOptions,
    repair: impl FnOnce(&'a str) -> Result<Repaired, RepairError>,
) -> Verdict<'c, 'a, G::Out> {
    let Repaired {
        value,
        repairs,
        truncated,
    } = repaired_as_allowed(candidate, options, repair)?;
    let mut attempt = Attempt {
        candidate,
        repairs,
        truncated,
        recoveries: Vec::new(),
        partial: truncated.then(|| value.clone()),
    };
    // A number no float holds, kept as its text: a string only when the policy writes
    // numbers as strings; else the value stays refused where it is.
    // Checked on the value returned (as repaired, or as fitted): wherever coercion put it.
    let kept = KeptNumbers::of(&attempt.repairs, &options.coerce);
    let as_text_in = |value: &Value| match &kept {
        Some(kept) => kept.violations(
            value,
            Node::root(target.schema().schema()),
            &Pointer::root(),
        ),
        None => Vec::new(),
    };
    let as_text = as_text_in(&value);
    let copy = (!as_text.is_empty()).then(|| value.clone());
    // As repaired first: coercion runs only on a value that does not fit, so a value that
    // fits is never changed (but a value read from another shape than the one sent says so).
    attempt.recoveries = target.shape_recoveries(&value);
    let (mut value, violations) = match (target.accept(value), copy) {
        (Ok(out), None) => return valid(attempt, out),
        (Ok(_), Some(value)) => return invalid(attempt, value, Violations(as_text)),
        (Err(refused), _) => refused,
    };
    let shaped = attempt.recoveries.len();
    let coerced = coerce(&mut value, target.schema(), &options.coerce);
    attempt.recoveries.extend(coerced);
    let (value, violations) = if attempt.recoveries.len() == shaped {
        (value, violations)
    } else {
        let as_text = as_text_in(&value);
        let copy = (!as_text.is_empty()).then(|| value.clone());
        match (target.accept(value), copy) {
            (Ok(out), None) => return valid(attempt, out),
            (Ok(_), Some(value)) => return invalid(attempt, value, Violations(as_text)),
            (Err(refused), _) => refused,
        }
    };
    invalid(attempt, value, violations)
}

/// A candidate read and valid: its rank among the valid ones (the fewest changes first) and
/// the value.
pub(crate) fn valid<'c, 'a, T>(attempt: Attempt<'c, 'a>, out: T) -> Verdict<'c, 'a, T> {
    Ok((
        (false, false, attempt.cost(), 0),
        Judged::Valid(attempt, out),
    ))
}

/// A candidate read and refused: its rank among the refused ones (a complete answer first,
/// then the fewest violations, then the fewest changes) and what it gave.
pub(crate) fn invalid<'c, 'a, T>(
    attempt: Attempt<'c, 'a>,
    value: Value,
    violations: Violations,
) -> Verdict<'c, 'a, T> {
    let rank = (true, attempt.truncated, violations.len(), attempt.cost());
    Ok((rank, Judged::Invalid(attempt, value, violations)))
}

/// What the judged candidate gave: the value read, or the closest value with its violations.
pub(crate) enum Judged<'c, 'a, T> {
    Valid(Attempt<'c, 'a>, T),
    Invalid(Attempt<'c, 'a>, Value, Violations),
}

impl<'c, 'a, T> Judged<'c, 'a, T> {
    /// The same verdict, a valid value made into another kind of output.
    pub(crate) fn map<U>(self, f: impl FnOnce(T) -> U) -> Judged<'c, 'a, U> {
        match self {
            Judged::Valid(attempt, out) => Judged::Valid(attempt, f(out)),
            Judged::Invalid(attempt, value, violations) => {
                Judged::Invalid(attempt, value, violations)
            }
        }
    }
}

fn best_candidate<G: Target>(
    target: &G,
    found: &[Candidate<'_>],
    options: &ParseOptions,
    warnings: Vec<Warning>,
) -> Read<G::Out> {
    let mut too_deep = None;
    // A candidate judged only whole and too long to hold: nothing is chosen without it.
    let mut too_large = None;
    // Without repair: the changes the latest candidate refused would have needed.
    let mut refused: Option<Vec<Warning>> = None;
    let perfect: Rank = (false, false, 0, 0);
    let best = select::best(
        found,
        &perfect,
        |c| c.text.len(),
        |candidate| match target.judge(candidate, options) {
            Ok(judged) => Some(judged),
            Err(Unjudged::Refused(changes)) => {
                refused.get_or_insert(changes);
                None
            }
            Err(Unjudged::TooDeep(e)) => {
                too_deep = Some(e);
                None
            }
            Err(Unjudged::TooLarge { at, bytes, limit }) => {
                too_large = Some(ParseError::TooLarge { at, bytes, limit });
                None
            }
            Err(Unjudged::Unread) => None,
        },
    );
    if let Some(e) = too_large {
        return Read::Done(Err(e));
    }
    let result = match best {
        Some((_, Judged::Valid(mut attempt, value))) => {
            let provenance = attempt.provenance();
            // The value's own part of the candidate: up to any text ignored after it.
            let start = attempt.candidate.span.start;
            let used = used_part(&attempt.repairs, 0..attempt.candidate.text.len());
            let all = attempt.take_warnings(warnings);
            if attempt.truncated && !options.accept_truncated {
                Err(ParseError::Truncated {
                    partial: attempt.partial.unwrap_or_default(),
                    warnings: all,
                })
            } else {
                tracing::debug!(
                    provenance = ?provenance,
                    warnings = all.len(),
                    "structured output read from the answer"
                );
                Ok(Parsed {
                    value,
                    provenance,
                    truncated: attempt.truncated,
                    span: start + used.start..start + used.end,
                    warnings: all,
                    text_report: None,
                })
            }
        }
        Some((_, Judged::Invalid(mut attempt, value, violations))) => {
            let all = attempt.take_warnings(warnings);
            if attempt.truncated {
                Err(ParseError::Truncated {
                    partial: attempt.partial.unwrap_or(value),
                    warnings: all,
                })
            } else {
                Err(ParseError::Invalid {
                    violations,
                    value,
                    warnings: all,
                })
            }
        }
        None => match (too_deep, refused) {
            (Some(e), _) => Err(ParseError::TooDeep(e)),
            (None, Some(warnings)) => Err(ParseError::NotExact { warnings }),
            (None, None) => return Read::NoJson(warnings),
        },
    };
    Read::Done(result)
}

/// A markdown wrapper's answer, by the rule in [`crate::read::markdown`]: its JSON when the
/// answer is (or ends with) JSON for it, else the whole answer.
fn read_markdown<G: Target>(
    target: &G,
    markdown: &Markdown,
    text: &str,
    mode: StructuredOutputMode,
    options: &ParseOptions,
) -> Result<Parsed<G::Out>, ParseError> {
    let mut warnings = Vec::new();
    if markdown.text_only(target.schema().schema()) {
        // Plain text alone: the answer is its text, exactly as written.
        if text.is_empty() {
            return Err(ParseError::NotFound {
                len: 0,
                from_text: None,
            });
        }
        return accept_text(
            target,
            Value::from(text),
            Provenance::Clean,
            0..text.len(),
            warnings,
        );
    }
    // The union's string, written as a JSON string: read as written, never as text around it.
    if markdown.content.is_none() && text.trim_start().starts_with('"') {
        if let Some(value) = target.exact(text.trim()) {
            return Ok(clean(value, text));
        }
    }
    match route(text) {
        Route::Json => match read_text(target, text, mode, options) {
            Read::Done(result) => return result,
            Read::NoJson(found) => warnings = found,
        },
        Route::EndsWith(candidate) => {
            if let Some(value) = target.exact(candidate.text.trim()) {
                if mode.expects_exact_json() {
                    warnings.push(not_json());
                }
                warnings.push(extracted(&candidate));
                return Ok(done(value, Provenance::Extracted, &candidate, warnings));
            }
        }
        Route::Whole => {}
    }
    let trimmed = text.trim();
    if trimmed.is_empty() || !options.from_text {
        return Err(ParseError::NotFound {
            len: text.len(),
            from_text: None,
        });
    }
    if mode.expects_exact_json() && warnings.is_empty() {
        warnings.push(not_json());
    }
    let content = markdown.content_pointer();
    let title = markdown.title.as_deref().map(|t| Pointer::root().key(t));
    warnings.push(Warning::WholeAnswer { content, title });
    let value = markdown.value_of(target.schema().schema(), trimmed);
    let start = text.len() - text.trim_start().len();
    let span = start..start + trimmed.len();
    accept_text(target, value, Provenance::Heuristic, span, warnings)
}

/// A value made from the answer's text (not parsed from JSON in it), as `target` takes it.
fn accept_text<G: Target>(
    target: &G,
    value: Value,
    provenance: Provenance,
    span: std::ops::Range<usize>,
    warnings: Vec<Warning>,
) -> Result<Parsed<G::Out>, ParseError> {
    match target.accept(value) {
        Ok(value) => Ok(Parsed {
            value,
            provenance,
            truncated: false,
            span,
            warnings,
            text_report: None,
        }),
        Err((value, violations)) => Err(ParseError::Invalid {
            violations,
            value,
            warnings,
        }),
    }
}

fn not_json() -> Warning {
    Warning::NotAsEnforced {
        reason: "the answer is not JSON".into(),
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
    use crate::read::from_text::FieldReport;
    fn found(f: &FieldReport) -> bool {
        matches!(
            f.source,
            TextSource::Keyword { .. } | TextSource::Number { .. }
        )
    }
    // What the type looks for in the text: keywords and labels (their misses are defaults the
    // text did not give), not excerpts and fixed values.
    fn looked_for(f: &FieldReport) -> bool {
        found(f)
            || matches!(
                f.source,
                TextSource::Default {
                    reason: DefaultReason::NotFound
                        | DefaultReason::Negated { .. }
                        | DefaultReason::Rejected { .. }
                }
            )
    }
    fn excerpt(f: &FieldReport) -> bool {
        matches!(f.source, TextSource::Excerpt { chars } if chars > 0)
    }
    // A keyword or number found is a reading of the answer. Where the type looks for none (its
    // prose rules are excerpts: the text itself is what it holds), the text's words are. An
    // excerpt beside keywords none of which occur is not: defaults are not a reading.
    let all = read.report.fields();
    let fields = match all.iter().filter(|f| found(f)).count() {
        0 if !all.iter().any(looked_for) => all.iter().filter(|f| excerpt(f)).count(),
        n => n,
    };
    if fields == 0 {
        return Err(not_found(None));
    }
    warnings.push(Warning::FromProse { fields });
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

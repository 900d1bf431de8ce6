//! # structured
//!
//! Typed, validated output from LLMs, declared once on a Rust type: a correct typed value, or an
//! error that says why.
//!
//! `#[derive(StructuredOutput)]` on a struct with named fields gives it a strict JSON Schema
//! ([`StructuredOutput::schema`]), a one-pass parser that accepts exactly what that schema
//! accepts ([`StructuredOutput::from_json`]) and a [`Validate`] impl for the rules declared on its
//! fields. Every violation is reported with the [`Pointer`] of the value that broke it.
//!
//! ```
//! use structured_runtime::{StructuredOutput, Validate};
//!
//! /// A signal that drove the decision.
//! #[derive(StructuredOutput, serde::Deserialize, Debug)]
//! pub struct Signal {
//!     pub source: String,
//!     #[range(0.0, 1.0)]
//!     pub magnitude: f64,
//! }
//!
//! /// The heartbeat's decision.
//! #[derive(StructuredOutput, serde::Deserialize, Debug)]
//! pub struct Decision {
//!     #[enum_values("none", "low", "high")]
//!     pub severity: String,
//!     pub signals: Vec<Signal>,
//! }
//!
//! // The schema: strict, nested types inlined, built once.
//! let schema = Decision::schema();
//! assert!(schema.strict_preflight().is_ok());
//!
//! // Every violation, each with its path.
//! let err = Decision::from_json(
//!     r#"{"severity": "extreme", "signals": [{"source": "price", "magnitude": 1.4}]}"#,
//! ).unwrap_err();
//! let report: Vec<String> = err.violations().unwrap().iter().map(|v| v.to_string()).collect();
//! assert_eq!(report, [
//!     r#"/severity: enum: expected one of "none", "low", "high", found "extreme""#,
//!     "/signals/0/magnitude: range: expected a number in [0.0, 1.0], found 1.4",
//! ]);
//! ```
//!
//! ## Asking a provider
//!
//! [`run_structured`] asks a [`Provider`] for a `T`: it picks the mode the provider and model
//! support (the schema enforced, a forced tool, or the schema in the prompt), lowers the schema
//! for the provider's dialect, reads the answer, repairs and fits it within the
//! [`ParseOptions`], validates it, and re-asks with every violation while the budget lasts. The
//! result says how the value was obtained ([`Provenance`], [`Warning`]s) and keeps a ledger of
//! every request; a failure is a [`RunError`] with the same ledger. A provider is any transport:
//! [`http::HttpProvider`] (feature `http`), a gateway's own client, or a test double like this
//! one, which answers first with a value out of range and then with a good one.
//!
//! ```
//! use std::future::Future;
//! use std::sync::Mutex;
//! use std::time::Duration;
//! use structured_runtime::provider::capabilities::ProviderKind;
//! use structured_runtime::run::TransportError;
//! use structured_runtime::{
//!     run_structured, ChatRequest, Provenance, Provider, RunConfig, StructuredOutput,
//!     StructuredOutputMode,
//! };
//!
//! #[derive(StructuredOutput, serde::Deserialize, Debug)]
//! struct Verdict {
//!     #[enum_values("pass", "fail")]
//!     outcome: String,
//!     #[range(0.0, 1.0)]
//!     confidence: f64,
//! }
//!
//! /// Answers with the next recorded body, as OpenAI's Chat Completions API would.
//! struct Recorded(Mutex<Vec<&'static str>>);
//!
//! impl Provider for Recorded {
//!     fn kind(&self) -> ProviderKind { ProviderKind::OpenAiChat }
//!     fn model(&self) -> &str { "gpt-4o" }
//!     fn send(&self, _body: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
//!         let content = self.0.lock().unwrap().remove(0);
//!         let body = serde_json::json!({"choices": [{"index": 0, "finish_reason": "stop",
//!             "message": {"role": "assistant", "content": content}}]});
//!         async move { Ok(body.to_string()) }
//!     }
//! }
//!
//! # fn block_on<F: Future>(f: F) -> F::Output {
//! #     let mut f = std::pin::pin!(f);
//! #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
//! #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
//! # }
//! let provider = Recorded(Mutex::new(vec![
//!     r#"{"outcome": "pass", "confidence": 1.7}"#,
//!     r#"{"outcome": "pass", "confidence": 0.9}"#,
//! ]));
//! let request = ChatRequest::user("Did the build pass?");
//! let out = block_on(run_structured::<Verdict, _>(&provider, &request, &RunConfig::default()))?;
//! assert_eq!((out.value.outcome.as_str(), out.value.confidence), ("pass", 0.9));
//! assert_eq!(out.mode, StructuredOutputMode::SchemaEnforced);
//! assert_eq!((out.attempts, out.provenance), (2, Provenance::Clean));
//! // The first answer's violation was sent back: `/confidence: range: ...`.
//! assert!(out.ledger[1].sent.contains("/confidence"));
//! # Ok::<(), structured_runtime::RunError>(())
//! ```
//!
//! Every run goes in through one builder, [`Ask`], of which [`run_structured`] and
//! [`run_value`] are the shorthands: a provider ([`Ask::new`]) or a fallback chain
//! ([`Ask::fallback`]), optionally a [`RunConfig`], a stream sink ([`Ask::stream`]) and the
//! caller's tools ([`Ask::agent`]), run for a derived type ([`Ask::typed`]) or a schema given at
//! run time ([`Ask::value`]). Each combination is the same run, with the same budgets, checks
//! and warnings.
//!
//! ## Reading an answer yourself
//!
//! [`parse_response`] reads a `T` from what a model wrote, in the mode it was asked in:
//!
//! 1. the whole answer, as written (with a provider that enforces the schema, the path that
//!    should always be taken);
//! 2. the JSON inside the answer, as written: a fenced block, or a `{...}` in prose (the one
//!    ending last wins: a model's final answer comes after its drafts);
//! 3. each candidate repaired ([`read::repair`]) and, only where it does not fit, fitted to the
//!    schema ([`read::coerce`]) within the [`ParseOptions`]; the candidate that validates with
//!    the fewest changes wins, a tie going to the later one;
//! 4. no JSON at all: the type's prose reader ([`StructuredOutput::from_text`]), when it has
//!    one.
//!
//! A value is never printed and parsed again on the way: a repaired value, or a tool call's
//! arguments a provider sent as an object ([`Answer::Json`], [`Reading`]), is read where it
//! is. Nothing changed is reported as clean, and a truncated answer is an error
//! ([`ParseError::Truncated`]) unless accepted explicitly.
//!
//! ## Schemas given at run time
//!
//! [`ResponseSchema::new`] takes a JSON Schema from an API request, a tool definition or a file.
//! It is checked once (keywords the validator knows, local references, a size cap and an object
//! root: [`SchemaLimits`]) and compiled once with the `jsonschema` crate, whose verdict on a
//! value is the schema's ([`ResponseSchema::check_instance`], [`parse_value`]): every keyword
//! counts.
//!
//! ```
//! use serde_json::json;
//! use structured_runtime::{parse_value, ParseOptions, Provenance, ResponseSchema};
//!
//! let schema = ResponseSchema::new("ticket", json!({
//!     "type": "object",
//!     "properties": {
//!         "id": {"type": "string", "pattern": "^T-[0-9]+$"},
//!         "priority": {"enum": ["low", "high"]}
//!     },
//!     "required": ["id", "priority"],
//!     "additionalProperties": false
//! }))?;
//! let read = parse_value("```json\n{\"id\": \"T-7\", \"priority\": \"HIGH\"}\n```", &schema, &ParseOptions::default()).unwrap();
//! assert_eq!(read.value, json!({"id": "T-7", "priority": "high"}));
//! assert_eq!(read.provenance, Provenance::Recovered);
//! let refused = parse_value(r#"{"id": "7", "priority": "low"}"#, &schema, &ParseOptions::default());
//! assert!(refused.is_err()); // `pattern` is a rule like any other
//! # Ok::<(), structured_runtime::SchemaError>(())
//! ```
//!
//! ## Modules
//!
//! | module | what |
//! |---|---|
//! | [`schema`] | [`ResponseSchema`], the [`Pointer`] every report carries, strict-mode preflight, Rust-type schemas |
//! | [`read`] | extraction, [`read::repair`], [`read::coerce`], the reading functions and their reports |
//! | [`provider`] | what each provider and model supports, each schema dialect, each wire API's bodies and answers |
//! | [`run`] | the runner, its ledger, the [`Provider`] transport trait, the configuration |
//! | `http` | an HTTP [`Provider`] over `reqwest` (feature `http`) |
//!
//! ## Field attributes
//!
//! | attribute | on | effect |
//! |---|---|---|
//! | `#[range(min, max)]`, `#[range(min = ..)]`, `#[range(max = ..)]` | numbers, `Option`/`Vec` of numbers | inclusive `minimum`/`maximum` in the schema and in `Validate` |
//! | `#[enum_values("a", "b")]` | `String`, `Option<String>`, `Vec<String>` | `enum` in the schema and in `Validate` |
//! | `#[length(min = .., max = ..)]` (either or both) | strings (characters), lists and sets (items), maps (entries), `Option` of those | `minLength`/`maxLength`, `minItems`/`maxItems` or `minProperties`/`maxProperties` in the schema and in `Validate` |
//! | `#[pattern("^[A-Z]{3}$")]` | `String`, `Option<String>` | `pattern` in the schema and in `Validate` (compiled at compile time: a pattern that does not compile is a compile error) |
//! | `#[format("email")]` | `String`, `Option<String>` | `format` in the schema and in `Validate`: `date`, `date-time`, `time`, `duration`, `email`, `hostname`, `ipv4`, `ipv6`, `uri`, `uri-reference`, `uuid` |
//! | `#[validate(with = path::to::check)]` (repeatable) | field, or the type | the caller's own rule: a function of the field (or of anything it borrows as: `&str` for a `String`), or of the whole value on the type, returning `Result<(), E: Display>`; run after the structural rules, its error reported like any rule at the field's path |
//! | `#[fallback_keyword(..)]` | `String`, `bool`, numbers, unit enums, `Option` of those | how [`StructuredOutput::from_text`] reads the field from prose (below) |
//! | `#[markdown]`, `#[markdown(title)]` | `String` | the type is a markdown wrapper: a plain-text answer fills this field (below) |
//! | `///` doc comment | type, field, variant | `description` |
//!
//! Container: `#[structured(name = "...", description = "...")]` (the name defaults to the type
//! name in snake_case). serde's `rename`, `rename_all`, `skip` and `default` are read so the schema
//! names exactly what serde reads.
//!
//! ## Prompt guidance
//!
//! [`StructuredOutput::prompt_guidance`] is the instruction a model reads when the provider
//! enforces no schema: a typed sketch with every name, type, enum value, range, nullability and
//! description (about 46% of the tokens of the same schema pretty-printed as JSON Schema, in
//! `o200k_base`, for `HeartbeatDecision`; `cargo test -p structured-tests --test guidance -- --nocapture`).
//! [`StructuredOutput::prompt_guidance_as`] picks a [`GuidanceFormat`]; [`ResponseSchema::guidance_as`] does
//! the same for a schema given at run time.
//!
//! ## Reading prose: `from_text`
//!
//! When a model wrote no JSON at all, [`StructuredOutput::from_text`] fills the type from the
//! words of its answer, by the rules its fields declare with `#[fallback_keyword]`, and says
//! which fields the text gave and which are defaults ([`TextReport`]). The value always passes
//! [`Validate`]. Keywords match whole words, ignoring case; a keyword negated in its clause ("no
//! need to exit", "not critical", "don't escalate": a negator up to four words before it) does
//! not count.
//!
//! | field | attribute | value |
//! |---|---|---|
//! | `String` with `#[enum_values]`, or a unit enum | `#[fallback_keyword("critical", "high", default = "none")]` | the first listed value the text contains, in the order listed; else `default` (required unless the field is an `Option`, which is then `None`) |
//! | same | `#[fallback_keyword(default = "none")]` | every value, in declared order |
//! | same | `"sell everything" => "exit"` among the keywords | the phrase selects the value, at its place in the list |
//! | `bool` | `#[fallback_keyword("escalate", "page the on-call")]` or bare | true when a keyword (bare: the field's name) occurs |
//! | number | `#[fallback_keyword("pleasure", "valence", default = 0.0)]` or bare | the number after a label (bare: the field's name): `pleasure: 0.3`, `pleasure of -0.5`, `pleasure=+.3`, `confidence 80%` (a percent is a fraction when the field's maximum is at most 1); a number the field's `#[range]` or type refuses is not taken, and the report warns; else `default` (0 when absent, if the range allows it) |
//! | `String` or `Option<String>` | `#[fallback_keyword(excerpt = 200)]` | the first 200 characters (`default = ".."` instead for a text with no word); `Some` of them for an `Option` |
//! | `String` | `#[fallback_keyword(default = "neutral")]` | that value |
//!
//! Fields without the attribute take their empty value (`[]`, `None`, `""`, `false`) or their
//! type's `Default`; a field whose rules that would break (an `#[enum_values]` string, a range
//! without 0) must say its default, or the derive refuses with a message saying so. A type with
//! no `#[fallback_keyword]` has no prose reader ([`FromTextError::NotSupported`]).
//!
//! ```
//! use structured_runtime::{StructuredOutput, TextSource};
//!
//! #[derive(StructuredOutput, serde::Deserialize, Debug)]
//! struct Decision {
//!     #[enum_values("none", "low", "high", "critical")]
//!     #[fallback_keyword("critical", "high", "low", default = "none")]
//!     severity: String,
//!     #[enum_values("observe", "hedge", "exit")]
//!     #[fallback_keyword("exit", "sell everything" => "exit", "hedge", default = "observe")]
//!     action: String,
//!     #[range(0.0, 1.0)]
//!     #[fallback_keyword(default = 0.5)]
//!     confidence: f64,
//!     #[fallback_keyword("escalate")]
//!     escalate: bool,
//!     #[fallback_keyword(excerpt = 40)]
//!     rationale: String,
//! }
//!
//! let read = Decision::from_text(
//!     "Not critical, but high. No need to exit; hedge. Don't escalate. Confidence 70%.",
//! )?;
//! assert_eq!(read.value.severity, "high");
//! assert_eq!(read.value.action, "hedge");
//! assert_eq!(read.value.confidence, 0.7);
//! assert!(!read.value.escalate);
//! assert_eq!(read.value.rationale, "Not critical, but high. No need to exit;");
//! let field = read.report.field("/escalate").unwrap();
//! assert!(matches!(field.source, TextSource::Default { .. }));
//! # Ok::<(), structured_runtime::FromTextError>(())
//! ```
//!
//! ## Markdown wrappers
//!
//! Some output is free-form text the model should write as it likes: a pull request
//! description, a review, release notes. Mark its one `String` field `#[markdown]` (and, for a
//! commit message, the summary line `#[markdown(title)]`); every other field must be an `Option`,
//! and `#[fallback_keyword]` has no use here. The schema stays the strict object, so a provider
//! that enforces schemas returns `{"content": "..."}`; prompt guidance asks for Markdown in one
//! sentence instead of a schema. An answer is read by this rule ([`read::markdown`]):
//!
//! 1. it opens with `{` (or a fence holding one): it is JSON, read like any other type's answer;
//! 2. it ends with an object (fenced or not) that fits exactly as written, after at most one
//!    line of lead-in: that object, [`Provenance::Extracted`];
//! 3. otherwise the whole answer, trimmed, is the content (fences and quoted JSON kept as
//!    written; with a title field, the first line is the title and the rest the content), other
//!    fields `None`: [`Provenance::Heuristic`] with [`Warning::WholeAnswer`]. Strict reading
//!    ([`ParseOptions::strict`]) refuses it, and an empty answer is no answer.
//!
//! ```
//! use structured_runtime::{parse_response, Provenance, StructuredOutput, StructuredOutputMode};
//!
//! /// A code review in Markdown.
//! #[derive(StructuredOutput, serde::Deserialize, Debug)]
//! struct Review {
//!     #[markdown]
//!     content: String,
//! }
//!
//! let answer = "**Request changes**\n\nThe fixture should be:\n```json\n{\"id\": 7}\n```\nThanks!";
//! let review = parse_response::<Review>(answer, StructuredOutputMode::PromptGuided).unwrap();
//! assert_eq!(review.value.content, answer);
//! assert_eq!(review.provenance, Provenance::Heuristic);
//!
//! let json = parse_response::<Review>(r#"{"content": "LGTM"}"#, StructuredOutputMode::SchemaEnforced).unwrap();
//! assert_eq!((json.value.content.as_str(), json.provenance), ("LGTM", Provenance::Clean));
//! assert_eq!(
//!     Review::prompt_guidance(),
//!     "Reply in Markdown only: no JSON, nothing before or after it. Write a code review in Markdown."
//! );
//! ```
//!
//! A schema given at run time becomes a wrapper with [`ResponseSchema::with_markdown`].
//!
//! ### Plain text as an answer
//!
//! `String` is a [`StructuredOutput`]: `run_structured::<String>` takes the answer's text exactly
//! as written ([`Provenance::Clean`]), asking for plain text where the prompt guides the model.
//! A dispatch enum answers with one of several JSON shapes or in words: mark a `String` newtype
//! variant of an untagged enum `#[markdown]`, and an answer that is not JSON for the other
//! variants is that variant (trimmed, [`Provenance::Heuristic`] with
//! [`Warning::WholeAnswer`]; strict reading refuses it).
//!
//! ```
//! use structured_runtime::{parse_response, Provenance, StructuredOutput, StructuredOutputMode};
//!
//! #[derive(StructuredOutput, serde::Deserialize, Debug, PartialEq)]
//! #[serde(untagged)]
//! enum Reply {
//!     /// Look something up.
//!     Search { query: String },
//!     /// Answer in words.
//!     #[markdown]
//!     Say(String),
//! }
//!
//! let mode = StructuredOutputMode::PromptGuided;
//! let search = parse_response::<Reply>(r#"{"query": "refunds"}"#, mode).unwrap();
//! assert_eq!(search.value, Reply::Search { query: "refunds".into() });
//! let said = parse_response::<Reply>("Refunds take five days.", mode).unwrap();
//! assert_eq!(said.value, Reply::Say("Refunds take five days.".into()));
//! assert_eq!(said.provenance, Provenance::Heuristic);
//! ```
//!
//! [`schema::Markdown::text`] gives a schema given at run time (its root takes a string) the same
//! reading.
//!
//! ## Schema choices
//!
//! - Every property is `required` and every object has `additionalProperties: false`;
//!   `Option<T>` is required and nullable (`"type": ["string", "null"]`, or `anyOf` with `null`
//!   for nested types). A `#[serde(default)]` field is required too: strict mode allows no
//!   optional property, so the model must write it.
//! - Nested derived types are inlined, as the providers that do not resolve `$ref` need. A type
//!   that contains itself cannot be inlined: it is written once under `$defs` and referenced
//!   (`{"$ref": "#"}` when it is the root). Both forms pass [`ResponseSchema::strict_preflight`].
//! - Integer types carry the bounds they imply (`u8` → `minimum: 0, maximum: 255`).

#![warn(missing_docs)]

// Lets the derive's `::structured_runtime` paths resolve inside this crate's own tests.
extern crate self as structured_runtime;

#[cfg(feature = "batch")]
pub mod batch;
#[cfg(feature = "http")]
pub mod http;
pub mod provider;
pub mod read;
pub mod run;
pub mod schema;

#[doc(hidden)]
pub mod __private;

pub use provider::wire::ChatRequest;
pub use provider::StructuredOutputMode;
pub use read::output::StructuredOutput;
pub use read::{
    parse_response, parse_value, Answer, AnswerRef, DefaultReason, FieldReport, FromJsonError,
    FromText, FromTextError, ParseError, ParseOptions, Parsed, Provenance, Reading, StreamProgress,
    StreamReader, StreamStatus, StreamView, TextReport, TextSource, Warning,
};
pub use run::{
    run_structured, run_value, Ask, DynProvider, Provider, RunConfig, RunError, RunErrorKind,
    Structured,
};
pub use schema::{
    GuidanceFormat, HasPartial, LimitProfile, Pointer, ResponseSchema, Rule, SchemaError,
    SchemaLimits, Validate, Violation, Violations,
};
pub use structured_derive::StructuredOutput;

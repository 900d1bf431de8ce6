//! Reading a model's answer: from the text (or a tool call's arguments) to a validated value.
//!
//! [`extract`] finds where the JSON may be, [`repair`] fixes its syntax, [`coerce`] fits it to the
//! schema within a policy, and the strict deserializer turns it into the Rust type. When the
//! answer holds no JSON at all, a derived type's `from_text` reads its fields from the prose, and
//! a markdown wrapper's answer is taken whole ([`markdown`] has the rule).

pub(crate) mod byte_table;
pub mod coerce;
pub mod extract;
pub(crate) mod fingerprint;
pub(crate) mod from_json;
pub(crate) mod from_text;
pub(crate) mod held;
pub mod markdown;
pub(crate) mod mode;
pub(crate) mod number;
pub(crate) mod output;
pub(crate) mod parse;
pub mod parts;
pub(crate) mod prose;
pub mod repair;
pub mod reshape;
pub(crate) mod select;
pub mod stream;
pub(crate) mod stream_view;
pub(crate) mod strict_de;

pub use from_json::FromJsonError;
pub use from_text::{
    DefaultReason, FieldReport, FromText, FromTextError, TextChoice, TextNumber, TextReport,
    TextSource,
};
pub use mode::StructuredOutputMode;
pub use parse::{
    parse_response, parse_value, Answer, AnswerRef, ParseError, ParseOptions, Parsed, Provenance,
    Reading, Warning,
};
pub use reshape::{ReadBackStream, Reshape};
pub use stream::{Change, StreamProgress, StreamReader, StreamStatus, MAX_STREAM_DEPTH};
pub use stream_view::StreamView;

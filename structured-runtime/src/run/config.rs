//! How a run is configured: the `[inference.structured_outputs]` section, read from TOML, and the
//! rest of [`RunConfig`].
//!
//! Every key is optional (the defaults below); an unknown key or a value of the
//! wrong type is an error naming the key, so a typo never silently falls back to a default.
//!
//! ```
//! use structured_runtime::run::config::StructuredOutputsConfig;
//!
//! let config = StructuredOutputsConfig::from_toml(r#"
//!     [inference.structured_outputs]
//!     prefer_schema_enforcement = false
//!     max_retries = 2
//! "#).unwrap();
//! assert!(config.enabled);
//! assert_eq!(config.max_retries, 2);
//!
//! let err = StructuredOutputsConfig::from_toml("[inference.structured_outputs]\nenabled = \"yes\"").unwrap_err();
//! assert_eq!(err.to_string(), "inference.structured_outputs.enabled: expected a boolean, found the string \"yes\"");
//! ```

use std::time::Duration;

use super::clock::RunClock;
use super::ledger::PriceTable;
use crate::provider::capabilities::ProviderKind;
use crate::provider::wire::Prices;
use crate::read::mode::StructuredOutputMode;
use serde::Deserialize as _;

use toml::{Table, Value};

use crate::provider::capabilities::{CapabilityOverrides, InferenceProfile};
use crate::provider::dialect::GrammarBudget;
use crate::provider::wire::{Constraint, LlamaCppRequest};
use crate::read::ParseOptions;
use crate::schema::response::ResponseSchema;
use crate::schema::LimitProfile;

/// What to do when every validation re-ask was spent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnExhausted {
    /// Fail with [`RunErrorKind::RetriesExhausted`](crate::RunErrorKind::RetriesExhausted) (the
    /// default).
    #[default]
    Fail,
    /// "Retry once, then defaults with a warning": the type's defaults (each field from the
    /// last answer where it fits, its typed default otherwise), marked recovered.
    DefaultsWithWarning,
}

/// How a run is carried out.
#[derive(Debug, Clone, PartialEq)]
pub struct RunConfig {
    /// The `[inference.structured_outputs]` section: enabled, preference, validation, re-asks.
    pub outputs: StructuredOutputsConfig,
    /// What the pipeline may do to read an answer.
    pub parse: ParseOptions,
    /// Transport retries (rate limit, 5xx, timeout, connection), apart from re-asks.
    pub transport_retries: u32,
    /// The first transport backoff; doubled on each retry.
    pub backoff: Duration,
    /// Re-asks after plain text where a tool call was required.
    pub plain_text_retries: u32,
    /// Extended thinking is on: no forced tool where the provider refuses one with thinking
    /// (Anthropic), and on Anthropic the request carries `thinking` (a 1,024-token budget)
    /// unless it sets its own. A request whose `extra` turns thinking on counts as on.
    pub extended_thinking: bool,
    /// What given models really support, over the provider's own answer (and the built-in
    /// matrix): the runner picks its mode from these.
    pub capabilities: CapabilityOverrides,
    /// The longest the run waits before one transport retry. A provider that asks for a
    /// longer wait (`retry-after`) ends the run at once with
    /// [`TransportError::RateLimited`](crate::run::TransportError::RateLimited), carrying the
    /// wait it asked for; a backoff is cut to it.
    pub max_wait: Duration,
    /// The whole run, every request and wait included; `None` for no limit. When it passes,
    /// the request in flight is dropped and the run ends with
    /// [`RunErrorKind::DeadlineExceeded`](crate::RunErrorKind::DeadlineExceeded).
    pub deadline: Option<Duration>,
    /// The token limit of every answer when the request names none (`ChatRequest::max_tokens`
    /// wins): without one, a model that loops writes until its context is full. `None` sends
    /// no limit (Anthropic, which requires one, then gets 1,024).
    pub max_tokens: Option<u32>,
    /// The most of a previous answer a re-ask repeats back to the model, in bytes; a longer
    /// answer is cut at a character boundary and marked, so a huge answer does not make every
    /// later request huge.
    pub max_echo_bytes: usize,
    /// In a streaming run ([`crate::run::Ask::stream`]): when a value completed in
    /// the answer breaks a rule, stop reading the answer there and re-ask at once with what
    /// broke, instead of paying for the rest. Off by default: the whole answer is read and
    /// judged as in [`crate::run::run_structured`].
    pub stop_stream_on_violation: bool,
    /// How a schema-enforced request to llama.cpp carries the schema: a GBNF `grammar` (the
    /// default, measured in the README's evaluation) or `json_schema`. TOML key
    /// `llama_cpp_request` (`"grammar"` or `"json_schema"`).
    pub llama_cpp_request: LlamaCppRequest,
    /// The grammar's limits where the schema sets none; `None` (the default): derived from
    /// the answer's token limit ([`GrammarBudget::for_max_tokens`]). TOML keys `string_budget`
    /// (characters) and `items_budget`.
    pub grammar_budget: Option<GrammarBudget>,
    /// Fields merged into every request body before the caller's own `extra` (which wins):
    /// sampling settings for structured answers. `None` (the default) sends none, leaving the
    /// provider's defaults; the README's evaluation measures `{"temperature": 0}` against them.
    pub sampling: Option<serde_json::Value>,
    /// Where the run's time comes from: its deadline is raced and transport retries waited out
    /// on it. The system's by default; a test gives a
    /// [`ManualClock`](crate::run::clock::ManualClock).
    pub clock: RunClock,
    /// The mode every request of the run is asked in, over the one chosen from the provider's
    /// capabilities (and over a provider's own, [`Provider::mode`](super::Provider::mode));
    /// a request's own ([`ChatRequest::mode`](crate::ChatRequest::mode)) is over it. `None`
    /// (the default): chosen. A mode the provider cannot take ends the run before any
    /// request. TOML key `mode` (`"schema_enforced"`, `"tool_use_workaround"`,
    /// `"prompt_guided"`).
    pub mode: Option<StructuredOutputMode>,
    /// Record each request's body and answer on its span (`gen_ai.input.messages`,
    /// `gen_ai.output.messages`): off by default, as they hold the user's data.
    pub trace_bodies: bool,
    /// The limits every schema of the run is held to before any request, by name: the default
    /// leaves each schema to the limits it was built with; `"gateway"` holds it to a gateway's
    /// (16 KiB, an object root, as the documents state them:
    /// [`ResponseSchema::check_limits`](crate::ResponseSchema::check_limits)), a schema outside
    /// them ending the run before any request. TOML key `schema_limits`.
    pub schema_limits: LimitProfile,
}

impl RunConfig {
    /// The constraint a request with `max_tokens` is sent under.
    pub fn constraint(&self, max_tokens: Option<u32>) -> Constraint {
        Constraint {
            llama_cpp: self.llama_cpp_request,
            budget: self
                .grammar_budget
                .unwrap_or_else(|| GrammarBudget::for_max_tokens(max_tokens.unwrap_or(4096))),
        }
    }
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            outputs: StructuredOutputsConfig::default(),
            parse: ParseOptions::default(),
            transport_retries: 3,
            backoff: Duration::from_millis(500),
            plain_text_retries: 2,
            extended_thinking: false,
            capabilities: CapabilityOverrides::new(),
            max_wait: Duration::from_secs(60),
            deadline: Some(Duration::from_secs(600)),
            max_echo_bytes: 16 << 10,
            max_tokens: Some(4096),
            stop_stream_on_violation: false,
            llama_cpp_request: LlamaCppRequest::default(),
            grammar_budget: None,
            sampling: None,
            clock: RunClock::default(),
            mode: None,
            schema_limits: LimitProfile::Default,
            trace_bodies: false,
        }
    }
}

/// Where the section lives in the file.
pub const SECTION: &str = "inference.structured_outputs";

/// The section's keys that set how a run is carried out, read by [`RunConfig::from_toml`]
/// beside the structured-output keys.
const RUN_KEYS: &[&str] = &[
    "transport_retries",
    "max_wait_seconds",
    "deadline_seconds",
    "max_tokens",
    "max_echo_bytes",
    "parse",
    "stop_stream_on_violation",
    "llama_cpp_request",
    "string_budget",
    "items_budget",
    "mode",
    "schema_limits",
];

impl RunConfig {
    /// The whole section: the structured-output keys ([`StructuredOutputsConfig`]) and the
    /// run's own: `transport_retries`, `max_wait_seconds`, `deadline_seconds` (0: no deadline),
    /// `max_tokens` (0: no limit), `max_echo_bytes`, `parse` (`"default"`, `"strict"` or
    /// `"lenient"`) and `stop_stream_on_violation` (a boolean). Every key is optional; an unknown key or a wrong value is an error naming it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use structured_runtime::run::RunConfig;
    ///
    /// let config = RunConfig::from_toml(r#"
    ///     [inference.structured_outputs]
    ///     max_retries = 2
    ///     on_exhausted = "defaults"
    ///     deadline_seconds = 30
    ///     parse = "strict"
    /// "#).unwrap();
    /// assert_eq!(config.outputs.max_retries, 2);
    /// assert_eq!(config.deadline, Some(Duration::from_secs(30)));
    /// assert!(config.parse.exact);
    /// ```
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        match section_of(&parse_toml(text)?)? {
            None => Ok(RunConfig::default()),
            Some(section) => Self::from_table(section, SECTION),
        }
    }

    fn from_table(section: &Table, at: &str) -> Result<Self, ConfigError> {
        let named = |key: &str| match at {
            "" => key.to_owned(),
            at => format!("{at}.{key}"),
        };
        let mut outputs_part = section.clone();
        outputs_part.retain(|k, _| !RUN_KEYS.contains(&k));
        let outputs = StructuredOutputsConfig::from_table(&outputs_part, at, RUN_KEYS)?;
        let defaults = RunConfig::default();
        let count = |key: &str, max: i64| -> Result<Option<u64>, ConfigError> {
            match section.get(key) {
                None => Ok(None),
                Some(Value::Integer(n)) if (0..=max).contains(n) => Ok(Some(*n as u64)),
                Some(other) => Err(ConfigError::Value {
                    key: named(key),
                    expected: "a whole number in range",
                    found: describe(other),
                }),
            }
        };
        let parse = match section.get("parse") {
            None => defaults.parse.clone(),
            Some(Value::String(s)) if s == "default" => ParseOptions::default(),
            Some(Value::String(s)) if s == "strict" => ParseOptions::strict(),
            Some(Value::String(s)) if s == "lenient" => ParseOptions::lenient(),
            Some(other) => {
                return Err(ConfigError::Value {
                    key: named("parse"),
                    expected: "\"default\", \"strict\" or \"lenient\"",
                    found: describe(other),
                })
            }
        };
        let seconds = |n: u64| Duration::from_secs(n);
        let stop_stream_on_violation = match section.get("stop_stream_on_violation") {
            None => defaults.stop_stream_on_violation,
            Some(Value::Boolean(b)) => *b,
            Some(other) => {
                return Err(ConfigError::Value {
                    key: named("stop_stream_on_violation"),
                    expected: "true or false",
                    found: describe(other),
                })
            }
        };
        let llama_cpp_request = match section.get("llama_cpp_request") {
            None => defaults.llama_cpp_request,
            Some(Value::String(s)) if s == "grammar" => LlamaCppRequest::Grammar,
            Some(Value::String(s)) if s == "json_schema" => LlamaCppRequest::JsonSchema,
            Some(other) => {
                return Err(ConfigError::Value {
                    key: named("llama_cpp_request"),
                    expected: "\"grammar\" or \"json_schema\"",
                    found: describe(other),
                })
            }
        };
        let mode = match section.get("mode") {
            None => defaults.mode,
            Some(Value::String(s)) => Some(mode_named(s).ok_or_else(|| ConfigError::Value {
                key: named("mode"),
                expected: "\"schema_enforced\", \"tool_use_workaround\" or \"prompt_guided\"",
                found: format!("the string {s:?}"),
            })?),
            Some(other) => {
                return Err(ConfigError::Value {
                    key: named("mode"),
                    expected: "a mode's name",
                    found: describe(other),
                })
            }
        };
        let schema_limits = match section.get("schema_limits") {
            None => defaults.schema_limits,
            Some(Value::String(s)) => s.parse().map_err(|_| ConfigError::Value {
                key: named("schema_limits"),
                expected: "\"default\" or \"gateway\"",
                found: format!("the string {s:?}"),
            })?,
            Some(other) => {
                return Err(ConfigError::Value {
                    key: named("schema_limits"),
                    expected: "a limit profile's name",
                    found: describe(other),
                })
            }
        };
        let strings = count("string_budget", 1 << 20)?;
        let items = count("items_budget", 1 << 16)?;
        let grammar_budget = match (strings, items) {
            (None, None) => None,
            (s, i) => {
                let derived = GrammarBudget::for_max_tokens(4096);
                Some(GrammarBudget {
                    string_chars: s.map_or(derived.string_chars, |n| n as usize),
                    items: i.map_or(derived.items, |n| n as usize),
                    fit_tokens: None,
                })
            }
        };
        Ok(RunConfig {
            mode,
            schema_limits,
            llama_cpp_request,
            grammar_budget,
            stop_stream_on_violation,
            outputs,
            parse,
            transport_retries: count("transport_retries", 10)?
                .map_or(defaults.transport_retries, |n| n as u32),
            max_wait: count("max_wait_seconds", 86_400)?.map_or(defaults.max_wait, seconds),
            deadline: match count("deadline_seconds", 86_400)? {
                None => defaults.deadline,
                Some(0) => None,
                Some(n) => Some(seconds(n)),
            },
            max_tokens: match count("max_tokens", u32::MAX.into())? {
                None => defaults.max_tokens,
                Some(0) => None,
                Some(n) => Some(n as u32),
            },
            max_echo_bytes: count("max_echo_bytes", 1 << 30)?
                .map_or(defaults.max_echo_bytes, |n| n as usize),
            ..defaults
        })
    }
}

/// The whole section inside a program's own configuration (any serde format), as
/// [`RunConfig::from_toml`] reads it. An error names the key inside the section; read the
/// program's configuration through `serde_path_to_error` and it is prefixed with where the
/// section sits (`llm.structured.max_retries: expected ...`).
impl<'de> serde::Deserialize<'de> for RunConfig {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let table = Table::deserialize(deserializer)?;
        Self::from_table(&table, "").map_err(serde::de::Error::custom)
    }
}

/// How subsystems obtain structured output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StructuredOutputsConfig {
    /// Ask for structured output at all; when false every subsystem gets free text and reads it
    /// with `from_text`.
    pub enabled: bool,
    /// With both a schema and a tool available, use the schema (`false`: the tool workaround).
    pub prefer_schema_enforcement: bool,
    /// Validate every parsed value against the type's rules.
    pub validation: bool,
    /// Re-ask with the validation errors when a value does not validate.
    pub retry_on_validation_failure: bool,
    /// Re-asks after the first attempt.
    pub max_retries: u32,
    /// After the last re-ask: fail (`"fail"`, the default) or "retry once, then defaults with a
    /// warning" (`"defaults"`): the last value's fields that fit, typed defaults, and failing
    /// that the type's prose reader with its declared defaults, marked recovered.
    pub on_exhausted: OnExhausted,
}

impl Default for StructuredOutputsConfig {
    /// Everything on, one retry.
    fn default() -> Self {
        StructuredOutputsConfig {
            enabled: true,
            prefer_schema_enforcement: true,
            validation: true,
            retry_on_validation_failure: true,
            max_retries: 1,
            on_exhausted: OnExhausted::Fail,
        }
    }
}

/// A configuration that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The text is not TOML.
    #[error("not TOML: {0}")]
    Syntax(String),
    /// A key with a value of the wrong type or out of range.
    #[error("{key}: expected {expected}, found {found}")]
    Value {
        /// The full key (`inference.structured_outputs.max_retries`).
        key: String,
        /// What the key takes.
        expected: &'static str,
        /// What was there.
        found: String,
    },
    /// An entry of a list (`inference.providers[1]`) that does not read: its index and why.
    #[error("{key}: {message}")]
    Entry {
        /// Where the entry sits (`inference.providers[1]`).
        key: String,
        /// What is wrong with it.
        message: String,
    },
    /// A key the section does not have (a typo, most likely).
    #[error("{key}: unknown key (the section takes {known})")]
    Unknown {
        /// The full key.
        key: String,
        /// The keys the section takes.
        known: String,
    },
}

const KEYS: &[&str] = &[
    "enabled",
    "prefer_schema_enforcement",
    "validation",
    "retry_on_validation_failure",
    "max_retries",
    "on_exhausted",
];

impl StructuredOutputsConfig {
    /// Reads the section from a whole configuration file; a file without it gets the defaults.
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        match section_of(&parse_toml(text)?)? {
            None => Ok(StructuredOutputsConfig::default()),
            Some(section) => Self::from_section(section),
        }
    }

    /// Reads the section's own table.
    pub fn from_section(section: &Table) -> Result<Self, ConfigError> {
        Self::from_table(section, SECTION, &[])
    }

    /// Reads the section's table, naming keys under `at` in errors (`""` for none); `also` are
    /// keys read by someone else, named among the known ones.
    fn from_table(section: &Table, at: &str, also: &[&str]) -> Result<Self, ConfigError> {
        let named = |key: &str| match at {
            "" => key.to_owned(),
            at => format!("{at}.{key}"),
        };
        let wrong = |key: &str, expected: &'static str, found: &Value| ConfigError::Value {
            key: named(key),
            expected,
            found: describe(found),
        };
        if let Some(unknown) = section.keys().find(|k| !KEYS.contains(&k.as_str())) {
            let known: Vec<&str> = KEYS.iter().chain(also).copied().collect();
            let hint = if RUN_KEYS.contains(&unknown.as_str()) {
                " (a run setting: read the section with RunConfig::from_toml)"
            } else {
                ""
            };
            return Err(ConfigError::Unknown {
                key: format!("{}{hint}", named(unknown)),
                known: known.join(", "),
            });
        }
        let defaults = StructuredOutputsConfig::default();
        let flag = |key: &str, default: bool| match section.get(key) {
            None => Ok(default),
            Some(Value::Boolean(b)) => Ok(*b),
            Some(other) => Err(wrong(key, "a boolean", other)),
        };
        let max_retries = match section.get("max_retries") {
            None => defaults.max_retries,
            Some(Value::Integer(n)) => u32::try_from(*n)
                .ok()
                .filter(|n| *n <= MAX_RETRIES)
                .ok_or_else(|| {
                    wrong(
                        "max_retries",
                        "an integer from 0 to 10",
                        &Value::Integer(*n),
                    )
                })?,
            Some(other) => return Err(wrong("max_retries", "an integer from 0 to 10", other)),
        };
        let on_exhausted = match section.get("on_exhausted") {
            None => defaults.on_exhausted,
            Some(Value::String(s)) if s == "fail" => OnExhausted::Fail,
            Some(Value::String(s)) if s == "defaults" => OnExhausted::DefaultsWithWarning,
            Some(other) => return Err(wrong("on_exhausted", "\"fail\" or \"defaults\"", other)),
        };
        Ok(StructuredOutputsConfig {
            on_exhausted,
            enabled: flag("enabled", defaults.enabled)?,
            prefer_schema_enforcement: flag(
                "prefer_schema_enforcement",
                defaults.prefer_schema_enforcement,
            )?,
            validation: flag("validation", defaults.validation)?,
            retry_on_validation_failure: flag(
                "retry_on_validation_failure",
                defaults.retry_on_validation_failure,
            )?,
            max_retries,
        })
    }

    /// The profile a request for `schema` gets under this configuration: no schema at all
    /// when structured outputs are disabled.
    pub fn profile(&self, schema: &ResponseSchema) -> InferenceProfile {
        InferenceProfile {
            response_schema: self.enabled.then(|| schema.clone()),
            prefer_schema_enforcement: self.prefer_schema_enforcement,
            extended_thinking: false,
        }
    }
}

/// The section embedded in a program's own configuration (any serde format): every key
/// optional with the defaults above, an unknown key or a wrong type an error naming the key
/// (the whole path through `serde_path_to_error`, as for [`RunConfig`]).
///
/// ```
/// #[derive(serde::Deserialize)]
/// struct AppConfig {
///     name: String,
///     structured_outputs: structured_runtime::run::config::StructuredOutputsConfig,
/// }
///
/// let app: AppConfig = toml::from_str("name = \"triage\"\n[structured_outputs]\nmax_retries = 3").unwrap();
/// assert_eq!(app.structured_outputs.max_retries, 3);
/// assert!(app.structured_outputs.enabled);
///
/// let err = toml::from_str::<AppConfig>("name = \"x\"\n[structured_outputs]\nmax_retires = 3").err().unwrap();
/// assert!(err.to_string().contains("max_retires: unknown key"), "{err}");
/// ```
impl<'de> serde::Deserialize<'de> for StructuredOutputsConfig {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let table = Table::deserialize(deserializer)?;
        Self::from_table(&table, "", &[]).map_err(serde::de::Error::custom)
    }
}

/// More re-asks than this is a configuration mistake: each one is a paid model call.
const MAX_RETRIES: u32 = 10;

/// The mode a config names (serde's spelling).
fn mode_named(name: &str) -> Option<StructuredOutputMode> {
    serde_json::from_value(serde_json::Value::from(name)).ok()
}

fn parse_toml(text: &str) -> Result<Table, ConfigError> {
    text.parse()
        .map_err(|e: toml::de::Error| ConfigError::Syntax(e.message().to_owned()))
}

/// The `[inference.structured_outputs]` table of a whole file, if it has one.
fn section_of(file: &Table) -> Result<Option<&Table>, ConfigError> {
    let section = file
        .get("inference")
        .map(|v| expect_table(v, "inference"))
        .transpose()?
        .and_then(|inference| inference.get("structured_outputs"));
    section.map(|v| expect_table(v, SECTION)).transpose()
}

fn expect_table<'v>(value: &'v Value, key: &str) -> Result<&'v Table, ConfigError> {
    value.as_table().ok_or_else(|| ConfigError::Value {
        key: key.to_owned(),
        expected: "a table",
        found: describe(value),
    })
}

fn describe(value: &Value) -> String {
    match value {
        Value::String(s) => format!("the string {s:?}"),
        Value::Integer(n) => format!("the integer {n}"),
        Value::Float(x) => format!("the float {x}"),
        Value::Boolean(b) => format!("the boolean {b}"),
        Value::Datetime(d) => format!("the datetime {d}"),
        Value::Array(_) => "an array".to_owned(),
        Value::Table(_) => "a table".to_owned(),
    }
}

/// One provider of an application's list (`[[inference.providers]]`): which API, which model,
/// where, the environment variable holding its key (the key itself never sits in the file), the
/// mode to ask it in and its prices. Read with [`ProviderSpec::list_from_toml`]; an HTTP
/// provider is built from it with `HttpProvider::from_spec` (feature `http`), and the list's
/// prices are [`ProviderSpec::prices_of`]. The list's order is the fallback chain's.
///
/// ```
/// use structured_runtime::provider::capabilities::ProviderKind;
/// use structured_runtime::run::config::ProviderSpec;
/// use structured_runtime::StructuredOutputMode;
///
/// let specs = ProviderSpec::list_from_toml(r#"
///     [[inference.providers]]
///     kind = "anthropic"
///     model = "claude-sonnet-4-5"
///     api_key_env = "ANTHROPIC_API_KEY"
///     prices = { input = 3.0, output = 15.0 }
///
///     [[inference.providers]]
///     kind = "llamacpp"
///     model = "smollm2"
///     base_url = "http://127.0.0.1:8080"
///     mode = "prompt_guided"
/// "#).unwrap();
/// assert_eq!(specs[0].kind, ProviderKind::Anthropic);
/// assert_eq!(specs[1].mode, Some(StructuredOutputMode::PromptGuided));
/// let prices = ProviderSpec::prices_of(&specs);
/// assert_eq!(prices.get("claude-sonnet-4-5").unwrap().output, 15.0);
///
/// let typo = ProviderSpec::list_from_toml("[[inference.providers]]\nkind = \"openia\"\nmodel = \"m\"");
/// assert!(typo.unwrap_err().to_string().contains("openia"));
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderSpec {
    /// The API.
    pub kind: ProviderKind,
    /// The model asked.
    pub model: String,
    /// The endpoint; the provider's public one when unset (required for servers the user
    /// runs: vLLM, llama.cpp, a pass-through gateway).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The environment variable holding the API key; none sent when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// The mode to ask it in; chosen from its capabilities when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<StructuredOutputMode>,
    /// Its prices, to cost runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prices: Option<Prices>,
}

impl ProviderSpec {
    /// The `[[inference.providers]]` list of a TOML file (empty when it has none); an error
    /// names the entry and the key.
    pub fn list_from_toml(text: &str) -> Result<Vec<ProviderSpec>, ConfigError> {
        let file = parse_toml(text)?;
        let Some(inference) = file.get("inference") else {
            return Ok(Vec::new());
        };
        let Some(list) = expect_table(inference, "inference")?.get("providers") else {
            return Ok(Vec::new());
        };
        let Value::Array(entries) = list else {
            return Err(ConfigError::Value {
                key: "inference.providers".into(),
                expected: "an array of tables ([[inference.providers]])",
                found: describe(list),
            });
        };
        entries
            .iter()
            .enumerate()
            .map(|(i, entry)| {
                ProviderSpec::deserialize(entry.clone()).map_err(|e| ConfigError::Entry {
                    key: format!("inference.providers[{i}]"),
                    message: e.message().to_owned(),
                })
            })
            .collect()
    }

    /// The prices the list gives, by model.
    pub fn prices_of(specs: &[ProviderSpec]) -> PriceTable {
        let mut table = PriceTable::new();
        for spec in specs {
            if let Some(prices) = spec.prices {
                table.set(&spec.model, prices);
            }
        }
        table
    }
}

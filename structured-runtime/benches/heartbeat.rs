//! The benchmark inputs, shared by the criterion benches and the instruction-count example.

// Each bench uses part of this module.
#![allow(dead_code)]

use serde::Deserialize;
use structured_runtime::StructuredOutput;

/// The heartbeat's inference output (the seed's type, as the examples crate declares it).
#[derive(Debug, Deserialize, StructuredOutput)]
#[allow(dead_code)]
pub struct HeartbeatDecision {
    #[enum_values("none", "low", "moderate", "high", "critical")]
    #[fallback_keyword("critical", "high", "moderate", "low", default = "none")]
    severity: String,
    #[enum_values("observe", "analyze", "rebalance", "hedge", "exit", "escalate")]
    #[fallback_keyword(
        "exit",
        "sell everything" => "exit",
        "hedge",
        "rebalance",
        "escalate",
        "analyze",
        default = "observe"
    )]
    action: String,
    #[range(0.0, 1.0)]
    #[fallback_keyword(default = 0.5)]
    confidence: f64,
    #[fallback_keyword(excerpt = 200)]
    rationale: String,
    signals: Vec<Signal>,
    #[fallback_keyword("escalate")]
    escalate: bool,
}

#[derive(Debug, Deserialize, StructuredOutput)]
#[allow(dead_code)]
pub struct Signal {
    source: String,
    description: String,
    #[range(0.0, 1.0)]
    magnitude: f64,
}

/// The same answer read as a careful `serde` user reads it without this library: unknown fields
/// refused, the two word lists as Rust enums, the ranges checked by hand afterwards
/// ([`HandChecked::valid`]). What `from_json` checks, written by hand: the like-for-like cost.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct HandChecked {
    severity: Severity,
    action: Action,
    confidence: f64,
    rationale: String,
    signals: Vec<HandSignal>,
    escalate: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    None,
    Low,
    Moderate,
    High,
    Critical,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Observe,
    Analyze,
    Rebalance,
    Hedge,
    Exit,
    Escalate,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct HandSignal {
    source: String,
    description: String,
    magnitude: f64,
}

impl HandChecked {
    /// The ranges `HeartbeatDecision` declares.
    pub fn valid(&self) -> bool {
        (0.0..=1.0).contains(&self.confidence)
            && self
                .signals
                .iter()
                .all(|s| (0.0..=1.0).contains(&s.magnitude))
    }
}

/// [`HandChecked`] with the word lists as the declared type holds them (`String`, each checked
/// against its list afterwards, as `from_json` checks it): what `from_json` checks, written by
/// hand with serde, into the same field types.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct HandCheckedText {
    severity: String,
    action: String,
    confidence: f64,
    rationale: String,
    signals: Vec<HandSignal>,
    escalate: bool,
}

impl HandCheckedText {
    /// The word lists and the ranges `HeartbeatDecision` declares.
    pub fn valid(&self) -> bool {
        ["none", "low", "moderate", "high", "critical"].contains(&self.severity.as_str())
            && [
                "observe",
                "analyze",
                "rebalance",
                "hedge",
                "exit",
                "escalate",
            ]
            .contains(&self.action.as_str())
            && (0.0..=1.0).contains(&self.confidence)
            && self
                .signals
                .iter()
                .all(|s| (0.0..=1.0).contains(&s.magnitude))
    }
}

/// Chatty prose of about `bytes` bytes, no JSON: keywords near the end, negated ones and
/// near-misses ("highlight", "no need to exit") throughout, so every reader scans it all.
pub fn prose(bytes: usize) -> String {
    const PARAGRAPH: &str = "Spot drifted lower through the session; it was a highlight for the bears \
        but nothing critical happened, and there is no need to exit. Do not escalate yet. Funding stayed \
        near flat, the vault's hedges held, and confidence in the range held up. ";
    let mut text = PARAGRAPH.repeat(bytes / PARAGRAPH.len() + 1);
    text.truncate(bytes.saturating_sub(60));
    while !text.is_char_boundary(text.len()) {
        text.pop();
    }
    text.push_str(" Now severity is high: hedge, confidence 72%.");
    text
}

pub const ANSWER: &str = r#"{
  "severity": "moderate",
  "action": "hedge",
  "confidence": 0.72,
  "rationale": "Funding flipped negative while spot volume fell; governance vote adds tail risk.",
  "signals": [
    {"source": "price", "description": "Spot down 4.1% in 30 minutes against a flat index", "magnitude": 0.61},
    {"source": "volume", "description": "Volume 38% under the 7-day median", "magnitude": 0.44},
    {"source": "governance", "description": "Fee switch proposal reached quorum", "magnitude": 0.35}
  ],
  "escalate": false
}"#;

/// A chatty answer of about `bytes` bytes as a model writes one: markdown reasoning (bullets,
/// figures, `inline code`, "quotes", parentheses), then the answer in a ```json fence, then a
/// sign-off. No brace or bracket outside the fence: [`chatty`] is the worst case with them.
pub fn answer(bytes: usize) -> String {
    const PARAGRAPH: &str = "Let me walk through the signals before deciding.\n\n\
        - **Price:** spot fell 4.1% in 30 minutes while the index stayed flat (a divergence, \
        not a market-wide move).\n- **Volume:** 38% under the 7-day median, so the move is thin \
        and may revert; the `funding_rate` feed flipped negative at 14:05 UTC.\n\
        - **Governance:** the \"fee switch\" proposal reached quorum, which adds tail risk.\n\n\
        Taken together this is worth a hedge, not an exit. ";
    let body = bytes.saturating_sub(ANSWER.len() + 40);
    let mut text = PARAGRAPH.repeat(body / PARAGRAPH.len() + 1);
    text.truncate(body);
    text.push_str("\n```json\n");
    text.push_str(ANSWER);
    text.push_str("\n```\nHope this helps.");
    text
}

/// A chatty answer of about `bytes` bytes: prose with braces in it (`{like this}`, `[1]`, a
/// draft object), then the answer in a ```json fence, then a sign-off.
pub fn chatty(bytes: usize) -> String {
    const PARAGRAPH: &str =
        "Looking at the signals {price, volume} and the notes [1], [2], I first \
        drafted {\"severity\": \"low\"} but the funding data (see {fig. 3}) changed my mind. ";
    let mut text = PARAGRAPH.repeat(bytes.saturating_sub(ANSWER.len() + 40) / PARAGRAPH.len() + 1);
    text.truncate(bytes.saturating_sub(ANSWER.len() + 40));
    text.push_str("\n```json\n");
    text.push_str(ANSWER);
    text.push_str("\n```\nHope this helps.");
    text
}

/// A decision of about `bytes` bytes of JSON and nothing else, as a schema-enforced provider
/// streams it: the answer's fields, then as many signals as fill the size (escapes and a
/// character outside ASCII in each, as models write them).
pub fn long_answer(bytes: usize) -> String {
    const SIGNAL: &str = r#"    {"source": "funding", "description": "Rate flipped to "negative" — −0.012% per 8h on the perp", "magnitude": 0.61}"#;
    let head = r#"{
  "severity": "moderate",
  "action": "hedge",
  "confidence": 0.72,
  "rationale": "Funding flipped negative while spot volume fell; governance vote adds tail risk.",
  "signals": [
"#;
    let tail = "
  ],
  \"escalate\": false
}";
    let count = (bytes.saturating_sub(head.len() + tail.len()) / (SIGNAL.len() + 2)).max(1);
    let mut text = String::from(head);
    text.push_str(&vec![SIGNAL; count].join(",\n"));
    text.push_str(tail);
    text
}

/// [`long_answer`] made valid JSON (its inner quotes escaped): a whole answer of many small
/// values.
pub fn valid_answer(bytes: usize) -> String {
    long_answer(bytes).replace("to \"negative\"", "to \\\"negative\\\"")
}

/// [`ANSWER`] with a rationale of about `bytes` bytes: one long free-text string, as a model
/// explains itself (the value a stream shows a token at a time).
pub fn text_answer(bytes: usize) -> String {
    const SENTENCE: &str = "Funding flipped negative while spot volume fell, and the governance \
        vote adds tail risk to a book that is already long the perp. ";
    let rationale = SENTENCE.repeat(bytes / SENTENCE.len() + 1);
    ANSWER.replace(
        "Funding flipped negative while spot volume fell; governance vote adds tail risk.",
        rationale.get(..bytes).unwrap_or(&rationale),
    )
}

/// One text at each of [`Offsets::COUNT`] offsets from an allocation's start. One call to the
/// next of the same code on the same text counts differently (0.82 M to 1.33 M instructions for
/// serde on the 55 KB answer: the text at another offset, the allocator in another state), so a
/// count per call is taken over every offset in turn (`get(i)` for call `i`; a count of calls
/// that is a multiple of `COUNT`).
pub struct Offsets {
    copies: Vec<String>,
}

impl Offsets {
    /// Places: every residue of a 32-byte word.
    pub const COUNT: usize = 32;

    pub fn new(text: &str) -> Offsets {
        let copies = (0..Self::COUNT)
            .map(|k| format!("{}{text}", " ".repeat(k)))
            .collect();
        Offsets { copies }
    }

    /// The text, at place `i % COUNT`.
    pub fn get(&self, i: usize) -> &str {
        let k = i % Self::COUNT;
        self.copies
            .get(k)
            .and_then(|c| c.get(k..))
            .unwrap_or_default()
    }
}

/// Every corpus input, both files.
pub fn corpus_inputs() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/corpus");
    let mut out = Vec::new();
    for file in ["json_repair.jsonl", "jsonrepair_ts.jsonl"] {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("the corpus file {}: {e}", path.display()));
        for line in text.lines() {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(line) {
                if let Some(input) = v["input"].as_str() {
                    out.push(input.to_owned());
                }
            }
        }
    }
    out
}

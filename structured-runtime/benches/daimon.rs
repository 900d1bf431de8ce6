//! The Daimon's appraisal, the issue's second `from_json` input: a flat object of three ranged
//! floats, a word list, an optional word and two free texts. Shared by the criterion bench and
//! the instruction-count example.

// Each bench uses part of this module.
#![allow(dead_code)]

use serde::Deserialize;

/// The type as the examples crate declares it (the same file, read from there).
#[path = "../../examples/src/daimon.rs"]
mod declared;

pub use declared::DaimonAppraisal;

/// The words `primary_emotion` takes.
const EMOTIONS: [&str; 8] = [
    "joy",
    "trust",
    "fear",
    "surprise",
    "sadness",
    "disgust",
    "anger",
    "anticipation",
];

/// What `from_json` checks of a [`DaimonAppraisal`], written by hand with serde into the same
/// field types: unknown fields refused, every field required (`secondary_emotion` too: its
/// `deserialize_with` makes serde refuse it absent, as the schema does), the word list and the
/// ranges checked after ([`DaimonHandChecked::valid`]).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DaimonHandChecked {
    pleasure: f64,
    arousal: f64,
    dominance: f64,
    primary_emotion: String,
    #[serde(deserialize_with = "Option::deserialize")]
    secondary_emotion: Option<String>,
    trigger: String,
    memory_bias: String,
}

impl DaimonHandChecked {
    /// The ranges and the word list `DaimonAppraisal` declares.
    pub fn valid(&self) -> bool {
        [self.pleasure, self.arousal, self.dominance]
            .iter()
            .all(|x| (-1.0..=1.0).contains(x))
            && EMOTIONS.contains(&self.primary_emotion.as_str())
    }
}

/// An appraisal as a model writes it (275 bytes).
pub const APPRAISAL: &str = r#"{
  "pleasure": -0.35,
  "arousal": 0.62,
  "dominance": -0.2,
  "primary_emotion": "fear",
  "secondary_emotion": "surprise",
  "trigger": "The overnight rebalance failed twice and the hedge is now exposed to the open.",
  "memory_bias": "recall earlier failed rebalances"
}"#;

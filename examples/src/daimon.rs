//! The Daimon's appraisal (used by daimon, daimon_complex).

use serde::{Deserialize, Serialize};
use structured_runtime::StructuredOutput;

/// An emotional appraisal as a PAD vector and a Plutchik label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StructuredOutput)]
pub struct DaimonAppraisal {
    /// Pleasure dimension.
    #[range(-1.0, 1.0)]
    #[fallback_keyword]
    pub pleasure: f64,
    /// Arousal dimension.
    #[range(-1.0, 1.0)]
    #[fallback_keyword]
    pub arousal: f64,
    /// Dominance dimension.
    #[range(-1.0, 1.0)]
    #[fallback_keyword]
    pub dominance: f64,
    /// Primary Plutchik emotion label.
    #[enum_values(
        "joy",
        "trust",
        "fear",
        "surprise",
        "sadness",
        "disgust",
        "anger",
        "anticipation"
    )]
    #[fallback_keyword(default = "anticipation")]
    pub primary_emotion: String,
    /// Optional secondary emotion (blended states).
    pub secondary_emotion: Option<String>,
    /// What triggered this appraisal.
    #[fallback_keyword(excerpt = 100)]
    pub trigger: String,
    /// How this should bias memory retrieval.
    #[fallback_keyword(default = "neutral")]
    pub memory_bias: String,
}

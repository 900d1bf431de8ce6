//! Dream-cycle outputs: NREM replay, the hypnagogic observer, integration and threat rehearsal.

use serde::{Deserialize, Serialize};
use structured_runtime::StructuredOutput;

/// What a replayed episode taught (used by dream_nrem).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StructuredOutput)]
pub struct ReplayAnalysis {
    /// Episode being replayed.
    pub episode_id: String,
    /// What the Golem learned from this replay.
    pub lessons: Vec<Lesson>,
    /// Surprise score: how much the outcome differed from prediction.
    #[fallback_keyword("surprise", default = 0.0)]
    pub surprise_score: f64,
    /// Counterfactual markers: what could have been done differently.
    pub counterfactuals: Vec<Counterfactual>,
    /// Emotional depotentiation: has arousal decreased?
    #[fallback_keyword("arousal", default = 0.0)]
    pub arousal_delta: f64,
}

/// A lesson drawn from a replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StructuredOutput)]
pub struct Lesson {
    /// The insight itself.
    pub insight: String,
    /// Confidence in the insight (a probability, 0-1).
    #[range(0.0, 1.0)]
    pub confidence: f64,
    /// When the lesson applies.
    pub applicable_conditions: String,
}

/// What could have been done instead.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StructuredOutput)]
pub struct Counterfactual {
    /// The action not taken.
    pub alternative_action: String,
    /// What it would likely have led to.
    pub estimated_outcome: String,
    /// How plausible that outcome is (a probability, 0-1).
    #[range(0.0, 1.0)]
    pub plausibility: f64,
}

/// The hypnagogic observer's verdict on a dream fragment (used by hypnagogic_observer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StructuredOutput)]
pub struct FragmentEvaluation {
    /// How new the fragment is.
    #[fallback_keyword(default = 0.0)]
    pub novelty: f64,
    /// How relevant it is to current goals.
    #[fallback_keyword(default = 0.0)]
    pub relevance: f64,
    /// How coherent it is.
    #[fallback_keyword(default = 0.0)]
    pub coherence: f64,
    /// What to do with the fragment.
    #[enum_values("promote", "stage", "discard")]
    #[fallback_keyword("discard", "promote", "stage", default = "stage")]
    pub verdict: String,
}

/// The result of integrating a night's hypotheses (used by dream_integration).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StructuredOutput)]
pub struct DreamIntegration {
    /// Hypotheses promoted to PLAYBOOK staging.
    pub promoted: Vec<IntegrationItem>,
    /// Hypotheses staged for further development.
    pub staged: Vec<IntegrationItem>,
    /// Hypotheses discarded.
    pub discarded: Vec<IntegrationItem>,
    /// PLAYBOOK.md diff (additions/modifications).
    #[fallback_keyword(excerpt = 4000)]
    pub playbook_diff: Option<String>,
}

/// One hypothesis and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StructuredOutput)]
pub struct IntegrationItem {
    /// The hypothesis.
    pub hypothesis_id: String,
    /// What it says.
    pub summary: String,
    /// Confidence in it (a probability, 0-1).
    #[range(0.0, 1.0)]
    pub confidence: f64,
    /// Why it was promoted, staged or discarded.
    pub rationale: String,
}

/// A rehearsed threat (used by dream_threat).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StructuredOutput)]
pub struct ThreatAssessment {
    /// The kind of threat.
    #[fallback_keyword(excerpt = 80)]
    pub threat_type: String,
    /// How bad it would be.
    #[enum_values("low", "medium", "high", "critical")]
    #[fallback_keyword("critical", "high", "medium", "low", default = "medium")]
    pub severity: String,
    /// How likely it is (a probability, 0-1).
    #[range(0.0, 1.0)]
    #[fallback_keyword("likelihood", "probability", default = 0.5)]
    pub likelihood: f64,
    /// What happens if it occurs.
    #[fallback_keyword(excerpt = 200)]
    pub impact_if_realized: String,
    /// What to do about it.
    pub mitigation_actions: Vec<String>,
    /// What would show it is happening.
    pub detection_signals: Vec<String>,
    /// How the rehearsal went.
    pub rehearsal_outcome: String,
}

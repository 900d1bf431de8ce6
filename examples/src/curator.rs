//! The Grimoire curator's evaluation (used by curator).

use serde::{Deserialize, Serialize};
use structured_runtime::StructuredOutput;

/// One curation cycle over the Grimoire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StructuredOutput)]
pub struct CuratorEvaluation {
    /// Entries evaluated this cycle.
    #[fallback_keyword("evaluated", default = 0)]
    pub entries_evaluated: u32,
    /// Entries that passed validation.
    #[fallback_keyword("retained", default = 0)]
    pub entries_retained: u32,
    /// Entries pruned (below confidence threshold).
    #[fallback_keyword("pruned", default = 0)]
    pub entries_pruned: u32,
    /// Cross-references discovered.
    pub cross_references: Vec<CrossRef>,
    /// Entries promoted from inherited to validated.
    pub promotions: Vec<Promotion>,
    /// Overall Grimoire health score.
    #[fallback_keyword("health", default = 0.0)]
    pub grimoire_health: f64,
}

/// A relationship found between two entries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StructuredOutput)]
pub struct CrossRef {
    /// The entry the relationship starts from.
    pub source_id: String,
    /// The entry it points to.
    pub target_id: String,
    /// How the source relates to the target.
    #[enum_values("supports", "contradicts", "extends")]
    pub relationship: String,
}

/// An entry promoted from inherited to validated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StructuredOutput)]
pub struct Promotion {
    /// The promoted entry.
    pub entry_id: String,
    /// Confidence before (a probability, 0-1).
    #[range(0.0, 1.0)]
    pub from_confidence: f64,
    /// Confidence after (a probability, 0-1).
    #[range(0.0, 1.0)]
    pub to_confidence: f64,
    /// Why it was promoted.
    pub reason: String,
}

//! The risk engine's assessment (used by risk).

use serde::{Deserialize, Serialize};
use structured_runtime::StructuredOutput;

/// The risk engine's verdict on a proposed trade.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StructuredOutput)]
pub struct RiskAssessment {
    /// Overall approval decision.
    #[fallback_keyword("approved", "approve")]
    pub approved: bool,
    /// Adjusted position size in USD (may be less than requested).
    #[range(min = 0.0)]
    #[fallback_keyword("adjusted size", "size", default = 0.0)]
    pub adjusted_size_usd: f64,
    /// Per-layer evaluation results.
    pub layers: RiskLayers,
    /// Warnings (non-blocking concerns).
    pub warnings: Vec<String>,
    /// Reasoning chain (if visible thinking enabled).
    #[fallback_keyword(excerpt = 500)]
    pub reasoning: Option<String>,
}

/// The result of each risk layer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, StructuredOutput)]
pub struct RiskLayers {
    /// Hard limits that can never be crossed.
    pub hard_shields: LayerResult,
    /// Position sizing rules.
    pub position_sizing: LayerResult,
    /// Guardrails adapted to recent behaviour.
    pub adaptive_guardrails: LayerResult,
    /// Observation of market conditions.
    pub observation: LayerResult,
    /// DeFi-specific threats.
    pub defi_threats: LayerResult,
}

/// One layer's evaluation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, StructuredOutput)]
pub struct LayerResult {
    /// Whether the layer passed.
    pub passed: bool,
    /// The layer's score.
    pub score: f64,
    /// Why it passed or failed.
    pub detail: String,
}

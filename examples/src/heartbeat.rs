//! The heartbeat's decision (used by heartbeat_t1, heartbeat_t2).

use serde::{Deserialize, Serialize};
use structured_runtime::StructuredOutput;

/// The heartbeat's inference output, structured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StructuredOutput)]
pub struct HeartbeatDecision {
    /// Current assessment severity.
    #[enum_values("none", "low", "moderate", "high", "critical")]
    #[fallback_keyword("critical", "high", "moderate", "low", default = "none")]
    pub severity: String,
    /// Recommended action.
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
    pub action: String,
    /// Confidence in this assessment.
    #[range(0.0, 1.0)]
    #[fallback_keyword(default = 0.5)]
    pub confidence: f64,
    /// Brief rationale (1-2 sentences).
    #[fallback_keyword(excerpt = 200)]
    pub rationale: String,
    /// Specific signals that drove this decision.
    pub signals: Vec<Signal>,
    /// Whether to escalate to a higher tier (T1->T2).
    #[fallback_keyword("escalate")]
    pub escalate: bool,
}

/// One signal behind a heartbeat decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StructuredOutput)]
pub struct Signal {
    /// Where the signal comes from, e.g. "price", "volume", "governance", "liquidity".
    pub source: String,
    /// What was observed.
    pub description: String,
    /// Strength of the signal.
    #[range(0.0, 1.0)]
    pub magnitude: f64,
}

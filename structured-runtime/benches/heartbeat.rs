//! The benchmark input, shared by the criterion bench and the instruction-count example.

use serde::Deserialize;
use structured_runtime::StructuredOutput;

/// The heartbeat's inference output (the seed's type, as the examples crate declares it).
#[derive(Debug, Deserialize, StructuredOutput)]
#[allow(dead_code)]
pub struct HeartbeatDecision {
    #[enum_values("none", "low", "moderate", "high", "critical")]
    severity: String,
    #[enum_values("observe", "analyze", "rebalance", "hedge", "exit", "escalate")]
    action: String,
    #[range(0.0, 1.0)]
    confidence: f64,
    rationale: String,
    signals: Vec<Signal>,
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

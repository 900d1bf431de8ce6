//! The gateway's subsystem types, declared as a downstream crate would: one `#[derive]` each, with
//! their enums, ranges and doc comments, and the markdown wrappers of the git tooling. Nothing here
//! is hand-written schema or validation.
//!
//! Ranges the specification states (confidence and magnitude 0–1, the PAD dimensions −1–1) are declared as
//! it states them; probabilities it names but does not bound (likelihood, plausibility, the
//! other confidences) are declared 0–1 as well, and each such field says so in its doc comment.

pub mod curator;
pub mod daimon;
pub mod dreams;
pub mod heartbeat;
pub mod live;
pub mod markdown;
pub mod replay;
pub mod risk;
pub mod triage;

pub use curator::{CrossRef, CuratorEvaluation, Promotion};
pub use daimon::DaimonAppraisal;
pub use dreams::{
    Counterfactual, DreamIntegration, FragmentEvaluation, IntegrationItem, Lesson, ReplayAnalysis,
    ThreatAssessment,
};
pub use heartbeat::{HeartbeatDecision, Signal};
pub use markdown::{
    CommitMessage, MarkdownChangelog, MarkdownPullRequest, MarkdownReleaseNotes, MarkdownReview,
};
pub use risk::{LayerResult, RiskAssessment, RiskLayers};
pub use triage::{Team, TicketAction, TicketTriage};

use structured_runtime::ResponseSchema;

/// Every root type's schema, in the order the specification lists them.
pub fn all_schemas() -> Vec<&'static ResponseSchema> {
    use structured_runtime::StructuredOutput;
    vec![
        HeartbeatDecision::schema(),
        Signal::schema(),
        DaimonAppraisal::schema(),
        RiskAssessment::schema(),
        RiskLayers::schema(),
        LayerResult::schema(),
        CuratorEvaluation::schema(),
        CrossRef::schema(),
        Promotion::schema(),
        ReplayAnalysis::schema(),
        Lesson::schema(),
        Counterfactual::schema(),
        FragmentEvaluation::schema(),
        DreamIntegration::schema(),
        IntegrationItem::schema(),
        ThreatAssessment::schema(),
    ]
}

/// The markdown wrappers' schemas.
pub fn markdown_schemas() -> Vec<&'static ResponseSchema> {
    use structured_runtime::StructuredOutput;
    vec![
        MarkdownPullRequest::schema(),
        MarkdownChangelog::schema(),
        MarkdownReleaseNotes::schema(),
        MarkdownReview::schema(),
        CommitMessage::schema(),
    ]
}

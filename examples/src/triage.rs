//! A support ticket triaged by a model: a new user's type, with the shapes serde users write
//! (an enum with data, a map keyed by an enum) and string rules (an email, lengths). The
//! evaluation asks for it beside the two seed types.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use structured_runtime::StructuredOutput;

/// The team a ticket goes to.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    StructuredOutput,
)]
#[serde(rename_all = "snake_case")]
pub enum Team {
    /// Invoices, refunds, plans.
    Billing,
    /// Bugs and outages.
    Technical,
    /// Log-in and account access.
    Account,
}

/// What to do with the ticket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StructuredOutput)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TicketAction {
    /// Answer and close it.
    Reply {
        /// The reply to send, one or two sentences.
        #[length(min = 1, max = 280)]
        message: String,
    },
    /// Refund the customer.
    Refund {
        /// The amount, in the account's currency.
        #[range(min = 0.01, max = 10000.0)]
        amount: f64,
    },
    /// Hand it to a team.
    Escalate {
        /// The team.
        team: Team,
    },
}

/// A triaged support ticket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StructuredOutput)]
pub struct TicketTriage {
    /// The customer's email address.
    #[format("email")]
    pub customer_email: String,
    /// A short title for the ticket.
    #[length(min = 3, max = 80)]
    pub title: String,
    /// How urgent it is, from 1 (whenever) to 5 (now).
    #[range(1, 5)]
    pub priority: u8,
    /// What to do.
    pub action: TicketAction,
    /// How likely each team is the right one, 0 to 1.
    #[range(0.0, 1.0)]
    pub team_scores: BTreeMap<Team, f64>,
}

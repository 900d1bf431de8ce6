//! Running a structured call: ask, read, validate, re-ask with the errors, within budgets.
//!
//! [`Ask`] (or its shorthands [`run_structured`] and [`run_value`]) drives a [`Provider`] (any
//! transport: the [`http`](crate::http) one, a gateway's own client, a test double) with a
//! [`RunConfig`], and returns the value with its [ledger](Attempt), or a [`RunError`] that
//! carries the ledger too.

pub mod agent;
pub mod clock;
pub mod config;
mod drive;
mod ledger;
mod machine;
mod result;
mod runner;
mod stream;
mod telemetry;
mod transport;

pub use agent::AgentStep;
pub use config::{OnExhausted, RunConfig};
pub use ledger::{Attempt, AttemptResult, PriceTable, Stop};
pub use result::{RunError, RunErrorKind, Structured, FALLBACK_FAILED};
pub use runner::{run_structured, run_value, Ask};
pub use stream::StreamEvent;
pub use transport::{BoxFuture, DynProvider, OnBytes, Provider, TransportError};

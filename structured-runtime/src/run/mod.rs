//! Running a structured call: ask, read, validate, re-ask with the errors, within budgets.

pub mod config;
pub(crate) mod runner;

pub use runner::{
    run_structured, Attempt, AttemptResult, OnExhausted, Provider, RunConfig, RunError, Structured,
    TransportError,
};

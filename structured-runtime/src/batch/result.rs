//! An item's run as it ends: its result line (the value with its provenance and warnings, or
//! the error with its ledger), the tokens it took and what they cost; stored and counted.

use serde_json::{json, Value};

use super::store::{BatchError, Finished, State, Status, Store};
use crate::provider::wire::Usage;
use crate::run::{RunError, Structured};

/// What item `id`'s run came to, its cost by `cost_of` (the job's prices at the way it was
/// read, when it has them). A result line is
/// `{"id", "value", "provenance", "warnings", "attempts", "usage", "cost"}` for a value, and
/// `{"id", "error": {"kind", "message"}, "ledger", "attempts", "usage", "cost"}` for a run that
/// ended without one.
pub(crate) fn finished(
    id: &str,
    result: &Result<Structured<Value>, RunError>,
    cost_of: impl Fn(&Usage) -> Option<f64>,
) -> Finished {
    let usage_json = |u: Usage| {
        json!({"input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
               "cached_input_tokens": u.cached_input_tokens})
    };
    let (state, attempts, usage, mut line) = match result {
        Ok(read) => (
            State::Done,
            read.attempts as u64,
            read.usage(),
            json!({
                "id": id,
                "value": read.value,
                "provenance": format!("{:?}", read.provenance),
                "warnings": read.warnings.iter().map(ToString::to_string).collect::<Vec<_>>(),
                "attempts": read.attempts,
            }),
        ),
        Err(error) => {
            let ledger: Vec<Value> = error
                .ledger
                .iter()
                .map(|attempt| {
                    json!({
                        "model": attempt.model,
                        "problem": attempt.result.problem(None),
                        "usage": attempt.usage.map(usage_json),
                    })
                })
                .collect();
            (
                State::Failed,
                error.ledger.len() as u64,
                error.usage(),
                json!({
                    "id": id,
                    "error": {"kind": error.kind.name(), "message": error.to_string()},
                    "ledger": ledger,
                    "attempts": error.ledger.len(),
                }),
            )
        }
    };
    let cost = cost_of(&usage);
    line["usage"] = usage_json(usage);
    if let Some(cost) = cost {
        line["cost"] = cost.into();
    }
    Finished {
        state,
        attempts,
        line: line.to_string(),
        usage,
        cost,
    }
}

/// Counts in `status` an item whose run starts.
pub(crate) fn started(status: &mut Status) {
    status.pending = status.pending.saturating_sub(1);
    status.running += 1;
    status.runs += 1;
}

/// Stores item `seq`'s ended run and counts it in `status`.
pub(crate) fn record(
    store: &Store,
    status: &mut Status,
    seq: i64,
    ended: Finished,
) -> Result<(), BatchError> {
    store.finish(seq, &ended)?;
    status.running = status.running.saturating_sub(1);
    status.reasked += u64::from(ended.attempts > 1);
    match ended.state {
        State::Done => status.done += 1,
        _ => status.failed += 1,
    }
    status.usage = status.usage.plus(ended.usage);
    if let Some(cost) = ended.cost {
        status.cost = Some(status.cost.unwrap_or(0.0) + cost);
    }
    Ok(())
}

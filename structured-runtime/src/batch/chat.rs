//! A job run over a chat endpoint (a local model, a server without a batch API): each pending
//! item is one [`run_value`], at most `concurrency` at once, its result stored as it comes.

use std::path::Path;
use std::time::{Duration, Instant};

use super::pool::{ended, ItemRun};
use super::result::{finished, record, started};
use super::store::{BatchError, Status, Store};
use crate::run::{run_value, Provider, RunConfig};

/// Reads every pending item of the job in `store` through `provider`'s chat endpoint: each item
/// is one run ([`run_value`] with `config`: the same modes, reader, validator, re-asks and
/// ledger as any run), at most `concurrency` at once, and its result line is stored as soon as
/// it ends. Items a stopped job left in flight are read again first. With an `output`, results
/// are appended to it as they finish (at most once a second, and at the end: see
/// [`Store::write_results`]). `progress` hears where the job stands after each item. Returns
/// where it stands at the end.
///
/// What a result line holds: `{"id", "value", "provenance", "warnings", "attempts", "usage"}`
/// for a value, `{"id", "error": {"kind", "message"}, "ledger", "attempts", "usage"}` for a run
/// that ended without one.
pub async fn run_on_chat<P: Provider>(
    store: &mut Store,
    provider: &P,
    config: &RunConfig,
    concurrency: usize,
    output: Option<&Path>,
    mut progress: impl FnMut(&Status),
) -> Result<Status, BatchError> {
    let mut written_at = Instant::now();
    let spec = store.spec()?;
    store.requeue_running()?;
    // Counted once, then kept by each item's change: the store is not summed per item.
    let mut status = store.status()?;
    let concurrency = concurrency.max(1);
    let mut pool: Vec<ItemRun<'_>> = Vec::with_capacity(concurrency);
    loop {
        let room = concurrency - pool.len();
        if room > 0 {
            for claimed in store.claim(room)? {
                started(&mut status);
                let request = claimed.item.request(&spec.prompt, spec.max_tokens);
                let (seq, id, schema) = (claimed.seq, claimed.id, &spec.schema);
                pool.push(Box::pin(async move {
                    let result = run_value(provider, schema, &request, config).await;
                    (seq, id, result)
                }));
            }
        }
        if pool.is_empty() {
            break;
        }
        for (seq, id, result) in ended(&mut pool, true).await {
            let prices = spec.prices.as_ref();
            let ended = finished(&id, &result, |usage| prices.map(|p| usage.cost(p)));
            record(store, &mut status, seq, ended)?;
            progress(&status);
        }
        if let Some(output) = output.filter(|_| written_at.elapsed() >= WRITE_EVERY) {
            status.written += store.write_results(output)?;
            written_at = Instant::now();
        }
    }
    if let Some(output) = output {
        store.write_results(output)?;
    }
    store.status()
}

/// How often results are appended to the output while a job runs, at most.
const WRITE_EVERY: Duration = Duration::from_secs(1);

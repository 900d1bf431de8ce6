//! A job run over a chat endpoint (a local model, a server without a batch API): each pending
//! item is one [`run_value`], at most `concurrency` at once, its result stored as it comes.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::task::Poll;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::store::{BatchError, State, Status, Store};
use crate::provider::wire::Usage;
use crate::run::{run_value, Provider, RunConfig, RunError, Structured};

/// One item's run, as the pool holds it.
type ItemRun<'a> =
    Pin<Box<dyn Future<Output = (i64, String, Result<Structured<Value>, RunError>)> + 'a>>;

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
                status.pending = status.pending.saturating_sub(1);
                status.running += 1;
                status.runs += 1;
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
        for (seq, id, result) in next_finished(&mut pool).await {
            let (state, line, usage) = result_line(&id, &result);
            store.finish(seq, state, &line, usage)?;
            status.running = status.running.saturating_sub(1);
            match state {
                State::Done => status.done += 1,
                _ => status.failed += 1,
            }
            status.usage = status.usage.plus(usage);
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

/// Waits for at least one run of `pool` to end, and takes out every one that has.
async fn next_finished<'a, T>(pool: &mut Vec<Pin<Box<dyn Future<Output = T> + 'a>>>) -> Vec<T> {
    std::future::poll_fn(|cx| {
        let mut finished = Vec::new();
        let mut i = 0;
        while let Some(run) = pool.get_mut(i) {
            match run.as_mut().poll(cx) {
                Poll::Ready(out) => {
                    finished.push(out);
                    drop(pool.swap_remove(i));
                }
                Poll::Pending => i += 1,
            }
        }
        if finished.is_empty() {
            Poll::Pending
        } else {
            Poll::Ready(finished)
        }
    })
    .await
}

/// An item's result line, its state and the tokens its run took.
pub(crate) fn result_line(
    id: &str,
    result: &Result<Structured<Value>, RunError>,
) -> (State, String, Usage) {
    let usage_json = |u: Usage| {
        json!({"input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
               "cached_input_tokens": u.cached_input_tokens})
    };
    match result {
        Ok(read) => {
            let usage = read.usage();
            let line = json!({
                "id": id,
                "value": read.value,
                "provenance": format!("{:?}", read.provenance),
                "warnings": read.warnings.iter().map(ToString::to_string).collect::<Vec<_>>(),
                "attempts": read.attempts,
                "usage": usage_json(usage),
            });
            (State::Done, line.to_string(), usage)
        }
        Err(error) => {
            let usage = error.usage();
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
            let line = json!({
                "id": id,
                "error": {"kind": error.kind.name(), "message": error.to_string()},
                "ledger": ledger,
                "attempts": error.ledger.len(),
                "usage": usage_json(usage),
            });
            (State::Failed, line.to_string(), usage)
        }
    }
}

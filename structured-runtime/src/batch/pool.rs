//! The runs of a job held at once, polled together.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use serde_json::Value;

use crate::run::{RunError, Structured};

/// One run, as a pool holds it.
pub(crate) type Run<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// One item's run: its sequence number and id, and how the run ended.
pub(crate) type ItemRun<'a> = Run<'a, (i64, String, Result<Structured<Value>, RunError>)>;

/// Polls every run of `pool` once and takes out those that ended; with `wait`, waits until one
/// has.
pub(crate) async fn ended<T>(pool: &mut Vec<Run<'_, T>>, wait: bool) -> Vec<T> {
    std::future::poll_fn(|cx| {
        let mut ended = Vec::new();
        let mut i = 0;
        while let Some(run) = pool.get_mut(i) {
            match run.as_mut().poll(cx) {
                Poll::Ready(out) => {
                    ended.push(out);
                    drop(pool.swap_remove(i));
                }
                Poll::Pending => i += 1,
            }
        }
        if ended.is_empty() && wait {
            Poll::Pending
        } else {
            Poll::Ready(ended)
        }
    })
    .await
}

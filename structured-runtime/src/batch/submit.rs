//! A job run through a provider's batch API: every item is one run (the same modes, reader,
//! validator, re-asks and ledger as any run), whose requests go out in batches instead of one
//! by one.
//!
//! Each item's run is given a provider of its own whose `send` does not send: it records the
//! body under the request's `custom_id` (the item and the request's number in its run) and
//! waits for the answer. When every run is waiting, the bodies asked for are recorded in the
//! store as a chunk and made a batch: uploaded as a file first where the API takes files
//! (OpenAI; Gemini past its inline limit), sent in the body that makes it otherwise (Anthropic,
//! Gemini), tagged with the job's key and the chunk's number where the API keeps a tag. The
//! batches are polled, and each answer read from their results is stored and given to the run
//! that waits for it, which reads it, and finishes or asks again (its re-ask goes in a later
//! batch, with the correction a live run sends).
//!
//! Nothing is sent twice across a stopped job: a resumed job runs each unfinished item again
//! from its first request, and each request already in the store is answered from the store,
//! or waits for the batch it went in. A chunk recorded but not seen to a batch may have been
//! made one just before the job stopped: it is looked for at the provider before it is made
//! one, by its tag; where batches keep none (Anthropic), the newest batch made after every batch
//! the job knows, holding as many requests, is taken for it, and its results show whether it was
//! (request ids carry the job's key: a request a batch does not answer goes out again).

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Poll;
use std::time::Duration;

use super::api::{answer, not_run, stored, BatchApi};
use super::pool::{self, ItemRun};
use super::result::{finished as ended, record, started};
use super::store::{BatchError, Sent, Status, Store};
use crate::provider::capabilities::{ProviderCapabilities, ProviderKind};
use crate::provider::wire::batch::{BatchInput, BatchState, BatchTag};
use crate::provider::wire::batch_wire::BatchWire;
use crate::provider::wire::openai_batch::{MAX_BATCH_BYTES, MAX_BATCH_REQUESTS};
use crate::read::mode::StructuredOutputMode;
use crate::run::{run_value, Provider, RunConfig, TransportError};

/// How a job is cut into batches and followed.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchOptions {
    /// Items whose runs are held at once (their requests go out together). Memory grows with
    /// it, not with the job.
    pub in_flight: usize,
    /// Requests in one batch at most (the API's own limit when higher is asked: OpenAI's
    /// 50,000, Anthropic's 100,000).
    pub max_requests: usize,
    /// Bytes of one batch's requests at most (held in memory while the batch is made; the
    /// API's limit when higher is asked: OpenAI's 200 MB, Anthropic's 256 MB).
    pub max_bytes: usize,
    /// Bytes of requests sent inline in the body that makes a batch, at most, where the API
    /// takes both (Gemini: 20 MB); a larger batch is uploaded as a file first. An API that
    /// takes no file (Anthropic) is sent its requests inline whatever this says.
    pub max_inline_bytes: usize,
    /// How long to wait between looks at the batches running.
    pub poll_every: Duration,
    /// Tries of a batch API call that failed for a reason worth trying again (a 429 on
    /// create, a 5xx, a cut connection), apart from the first.
    pub api_retries: u32,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            in_flight: 10_000,
            max_requests: MAX_BATCH_REQUESTS,
            max_bytes: MAX_BATCH_BYTES,
            max_inline_bytes: usize::MAX,
            poll_every: Duration::from_secs(30),
            api_retries: 5,
        }
    }
}

/// What the runs ask of the batches, and the answers they wait for.
#[derive(Default)]
struct Hub {
    state: Mutex<HubState>,
}

#[derive(Default)]
struct HubState {
    /// Asked and not yet routed: `(custom_id, seq, body)`.
    asked: Vec<(String, i64, String)>,
    /// Asked and not yet answered.
    waiting: HashSet<String>,
    /// Answered and not yet taken.
    answers: HashMap<String, Result<String, TransportError>>,
    /// Changes so far: a run that asked or took an answer moved.
    moves: u64,
}

impl Hub {
    fn with<R>(&self, f: impl FnOnce(&mut HubState) -> R) -> R {
        f(&mut self.state.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn ask(&self, custom_id: String, seq: i64, body: String) {
        self.with(|s| {
            s.waiting.insert(custom_id.clone());
            s.asked.push((custom_id, seq, body));
            s.moves += 1;
        });
    }

    fn take(&self, custom_id: &str) -> Option<Result<String, TransportError>> {
        self.with(|s| {
            let answer = s.answers.remove(custom_id)?;
            s.waiting.remove(custom_id);
            s.moves += 1;
            Some(answer)
        })
    }

    /// Gives `answer` to the run waiting for `custom_id`, if one is.
    fn answer(&self, custom_id: &str, answer: Result<String, TransportError>) -> bool {
        self.with(|s| {
            let waits = s.waiting.contains(custom_id);
            if waits {
                s.answers.insert(custom_id.to_owned(), answer);
            }
            waits
        })
    }

    fn moves(&self) -> u64 {
        self.with(|s| s.moves)
    }
}

/// The provider one item's run sees: it speaks as the real one, and its requests wait for a
/// batch.
struct ItemProvider<'p, P> {
    inner: &'p P,
    wire: BatchWire,
    job: &'p str,
    seq: i64,
    sends: AtomicUsize,
    hub: Arc<Hub>,
}

impl<P: Provider + Sync> Provider for ItemProvider<'_, P> {
    fn kind(&self) -> ProviderKind {
        self.inner.kind()
    }
    fn model(&self) -> &str {
        self.inner.model()
    }
    fn capabilities(&self) -> ProviderCapabilities {
        self.inner.capabilities()
    }
    fn mode(&self) -> Option<StructuredOutputMode> {
        self.inner.mode()
    }
    fn send(&self, body: &str) -> impl Future<Output = Result<String, TransportError>> + Send {
        let n = self.sends.fetch_add(1, Ordering::SeqCst);
        let custom_id = self.wire.custom_id(self.job, self.seq, n);
        self.hub.ask(custom_id.clone(), self.seq, body.to_owned());
        let hub = self.hub.clone();
        std::future::poll_fn(move |_| match hub.take(&custom_id) {
            Some(answer) => Poll::Ready(answer),
            None => Poll::Pending,
        })
    }
}

/// Reads every pending item of the job in `store` through `provider`'s batch API: each item
/// one run with `config` (the same modes, reader, validator, re-asks and ledger as any run; its
/// deadline aside, as a batch's window is the provider's), its requests sent in batches cut by
/// `options`, its result stored as its run ends and appended to `output` (when given) as
/// results come. `progress` hears where the job stands after each item. Returns where it
/// stands at the end.
///
/// Each run's requests are recorded under a `custom_id` (the item and the request's number in
/// its run) and sent when every run held waits: recorded in the store as a chunk and made a
/// batch (uploaded first where the API takes a file, sent inline otherwise; tagged with the
/// job's key and the chunk's number where the API keeps a tag). A re-ask goes in a
/// later batch with the correction a live run sends; a request its batch did not run (expired,
/// cancelled) is sent again as the run's transport retry. Across a stopped job nothing is given
/// to two batches: a resumed run is answered from the store, or waits for its batch, and a
/// chunk recorded but not seen to a batch is looked for at the provider before it is made one.
pub async fn run_on_batch_api<P: Provider + BatchApi + Sync>(
    store: &mut Store,
    provider: &P,
    config: &RunConfig,
    options: &BatchOptions,
    output: Option<&Path>,
    mut progress: impl FnMut(&Status),
) -> Result<Status, BatchError> {
    let wire = BatchWire::of(provider.kind()).ok_or_else(|| {
        BatchError::Store(format!(
            "{} has no batch API this job can use",
            provider.kind().name()
        ))
    })?;
    let config = RunConfig {
        deadline: None,
        ..config.clone()
    };
    let spec = store.spec()?;
    let job = store.job_key()?;
    store.requeue_running()?;
    let mut status = store.status()?;
    let hub = Arc::new(Hub::default());
    let calls = Calls {
        config: &config,
        options,
        job: &job,
        wire,
    };
    let in_flight = options.in_flight.max(1);
    let mut pool: Vec<ItemRun<'_>> = Vec::new();
    // Chunks a stopped job recorded and did not see to a batch.
    for chunk in store.open_chunks()? {
        if chunk.batch_id.is_none() {
            make_batch(store, provider, &calls, chunk.n, chunk.file_id, None).await?;
        }
    }
    loop {
        let room = in_flight.saturating_sub(pool.len());
        if room > 0 {
            for claimed in store.claim(room)? {
                started(&mut status);
                let request = claimed.item.request(&spec.prompt, spec.max_tokens);
                let item = ItemProvider {
                    inner: provider,
                    wire,
                    job: &job,
                    seq: claimed.seq,
                    sends: AtomicUsize::new(0),
                    hub: hub.clone(),
                };
                let (seq, id, schema, config) = (claimed.seq, claimed.id, &spec.schema, &config);
                pool.push(Box::pin(async move {
                    let result = run_value(&item, schema, &request, config).await;
                    (seq, id, result)
                }));
            }
        }
        if pool.is_empty() {
            // Nothing pending, nothing running.
            break;
        }
        // Every run as far as it goes without a batch.
        loop {
            let before = hub.moves();
            let finished = pool::ended(&mut pool, false).await;
            let moved = !finished.is_empty() || hub.moves() != before;
            for (seq, id, result) in finished {
                let prices = spec.prices.as_ref();
                let ended = ended(&id, &result, |usage| prices.map(|p| usage.batch_cost(p)));
                record(store, &mut status, seq, ended)?;
                progress(&status);
            }
            if !moved {
                break;
            }
        }
        if let Some(output) = output {
            status.written += store.write_results(output)?;
        }
        // What the runs asked: answered from the store, waiting in a batch, or new.
        let asked = hub.with(|s| std::mem::take(&mut s.asked));
        let mut fresh = Vec::new();
        let mut answered = false;
        for (custom_id, seq, body) in asked {
            match store.request(&custom_id)? {
                Some(Sent::Answered(kept)) => answered |= hub.answer(&custom_id, answer(&kept)),
                Some(Sent::Waiting) => {}
                None => fresh.push((custom_id, seq, body)),
            }
        }
        // New requests go out even when others were answered from the store: a request taken
        // from the runs and not sent would be waited for forever.
        for chunk in chunks(fresh, wire, options) {
            let n = store.record_chunk(&chunk)?;
            make_batch(store, provider, &calls, n, None, Some(chunk)).await?;
        }
        if answered {
            continue;
        }
        let open = store.open_chunks()?;
        if open.is_empty() {
            if pool.is_empty() {
                // Every run held ended: take the next items.
                continue;
            }
            // Runs waiting on their own time (a backoff): let it pass.
            config.clock.sleep(Duration::from_millis(10)).await;
            continue;
        }
        config.clock.sleep(options.poll_every).await;
        for chunk in open {
            let Some(batch_id) = chunk.batch_id else {
                continue;
            };
            let batch = calls.call(|| provider.get(&batch_id)).await?;
            if batch.status.is_final() {
                let n = chunk.n;
                for (custom_id, kept) in collect(store, provider, &calls, n, &batch).await? {
                    hub.answer(&custom_id, answer(&kept));
                }
            }
        }
    }
    if let Some(output) = output {
        store.write_results(output)?;
    }
    store.status()
}

/// `requests` cut into batches within the options' and the API's limits.
fn chunks(
    requests: Vec<(String, i64, String)>,
    wire: BatchWire,
    options: &BatchOptions,
) -> Vec<Vec<(String, i64, String)>> {
    let max_requests = options.max_requests.clamp(1, wire.max_requests());
    let max_bytes = options.max_bytes.clamp(1, wire.max_bytes());
    let mut out: Vec<Vec<(String, i64, String)>> = Vec::new();
    let mut bytes = 0;
    for request in requests {
        // The body, its id and what a line adds around them.
        let size = request.2.len() + request.0.len() + 96;
        let full = out
            .last()
            .is_none_or(|last| last.len() >= max_requests || bytes + size > max_bytes);
        if full {
            out.push(Vec::new());
            bytes = 0;
        }
        bytes += size;
        if let Some(last) = out.last_mut() {
            last.push(request);
        }
    }
    out
}

/// Sees chunk `n` to a batch: `fresh`, its requests just recorded (`(custom_id, seq, body)`
/// each), or `None` for a chunk a stopped job recorded. That one may have been made a batch
/// already when the batch could have been asked for (its file uploaded, or its requests sent
/// inline): that batch is looked for first. Else the chunk is uploaded (unless it was) and made
/// a batch, or made one of its requests inline.
async fn make_batch<P: BatchApi>(
    store: &mut Store,
    provider: &P,
    calls: &Calls<'_>,
    n: i64,
    file_id: Option<String>,
    fresh: Option<Vec<(String, i64, String)>>,
) -> Result<(), BatchError> {
    let wire = calls.wire;
    let tag = BatchTag {
        job: calls.job.to_owned(),
        chunk: n,
    };
    if fresh.is_none() && (file_id.is_some() || wire.max_inline_bytes() > 0) {
        let found = if wire.keeps_tags() {
            find(provider, calls, |b| Some(b.tag.as_ref() == Some(&tag))).await?
        } else {
            find_untagged(store, provider, calls, store.chunk_len(n)?).await?
        };
        if let Some(found) = found {
            return store.set_chunk_batch(n, &found.id);
        }
    }
    let requests = match fresh {
        Some(chunk) => chunk.into_iter().map(|(id, _, body)| (id, body)).collect(),
        None => store.chunk_requests(n)?,
    };
    let mut jsonl = String::new();
    for (custom_id, body) in &requests {
        let line = wire.request_line(custom_id, body).ok_or_else(|| {
            BatchError::Store(format!("request {custom_id}: its body is not JSON"))
        })?;
        jsonl.push_str(&line);
        jsonl.push('\n');
    }
    drop(requests);
    let inline = !wire.takes_files()
        || jsonl.len() <= wire.max_inline_bytes().min(calls.options.max_inline_bytes);
    let batch = if inline {
        calls
            .call(|| provider.create(BatchInput::Inline(&jsonl), &tag))
            .await?
    } else {
        let file_id = match file_id {
            Some(file_id) => file_id,
            None => {
                let file_id = calls.call(|| provider.upload(&jsonl)).await?;
                store.set_chunk_file(n, &file_id)?;
                file_id
            }
        };
        calls
            .call(|| provider.create(BatchInput::File(&file_id), &tag))
            .await?
    };
    store.set_chunk_batch(n, &batch.id)
}

/// The first batch `wanted` takes, among the provider's (newest first, a bounded number of
/// pages).
async fn find<P: BatchApi>(
    provider: &P,
    calls: &Calls<'_>,
    mut wanted: impl FnMut(&BatchState) -> Option<bool>,
) -> Result<Option<BatchState>, BatchError> {
    let mut after: Option<String> = None;
    for _ in 0..50 {
        let (page, next) = calls.call(|| provider.list(after.as_deref())).await?;
        for batch in page {
            match wanted(&batch) {
                Some(true) => return Ok(Some(batch)),
                Some(false) => {}
                // Nothing further down the list can be it.
                None => return Ok(None),
            }
        }
        match next {
            Some(next) => after = Some(next),
            None => return Ok(None),
        }
    }
    Ok(None)
}

/// Where batches keep no tag: the newest batch made after every batch the job knows, holding
/// `count` requests, taken for the chunk (its results then show whether it was: its requests'
/// ids carry the job's key, and a request of the chunk it does not answer goes out again).
async fn find_untagged<P: BatchApi>(
    store: &Store,
    provider: &P,
    calls: &Calls<'_>,
    count: usize,
) -> Result<Option<BatchState>, BatchError> {
    find(provider, calls, |b| {
        // A batch the job knows, or cannot tell: nothing older can be the chunk's.
        if store.batch_known(&b.id).unwrap_or(true) {
            return None;
        }
        Some(b.requests == u64::try_from(count).ok())
    })
    .await
}

/// The answers of chunk `n`, whose batch ended: read from its result files and stored.
async fn collect<P: BatchApi>(
    store: &mut Store,
    provider: &P,
    calls: &Calls<'_>,
    n: i64,
    batch: &BatchState,
) -> Result<Vec<(String, String)>, BatchError> {
    let mut answers = HashMap::new();
    let mut read = |text: &str| {
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let (custom_id, result) = calls
                .wire
                .read_result_line(line)
                .map_err(|e| BatchError::Store(format!("batch {}: {e}", batch.id)))?;
            answers.insert(custom_id, stored(&result));
        }
        Ok::<(), BatchError>(())
    };
    if let Some(inline) = &batch.inline {
        read(inline)?;
    }
    for location in &batch.results {
        let text = calls.call(|| provider.download(location)).await?;
        read(&text)?;
    }
    store.close_chunk(n, &answers, &not_run(batch.status.ended()))
}

/// What every batch API call of a job shares: its clock and backoff, its options, its key and
/// the API.
struct Calls<'a> {
    config: &'a RunConfig,
    options: &'a BatchOptions,
    job: &'a str,
    wire: BatchWire,
}

impl Calls<'_> {
    /// One batch API call, tried again (after the provider's `retry-after`, or the run's
    /// backoff) while it fails for a reason worth trying again, up to the options' retries.
    async fn call<T, F: Future<Output = Result<T, TransportError>>>(
        &self,
        mut f: impl FnMut() -> F,
    ) -> Result<T, BatchError> {
        let mut tries = 0;
        loop {
            match f().await {
                Ok(out) => return Ok(out),
                Err(e) if e.is_retryable() && tries < self.options.api_retries => {
                    tries += 1;
                    let wait = match &e {
                        TransportError::RateLimited {
                            retry_after: Some(after),
                        } => *after,
                        _ => self.config.backoff * tries,
                    };
                    self.config.clock.sleep(wait).await;
                }
                Err(e) => return Err(BatchError::Store(format!("the batch API: {e}"))),
            }
        }
    }
}
